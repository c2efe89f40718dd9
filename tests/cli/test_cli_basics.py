import os
import subprocess
import sys


def test_help_lists_commands(shoectl) -> None:
    result = shoectl("--help")
    assert result.returncode == 0
    assert "Commands" in result.stdout


def test_unknown_command_is_one_line_exit_2(shoectl) -> None:
    result = shoectl("no-such-command")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr
    assert "no-such-command" in result.stderr


BROKEN_COMMAND = """
import sys
import click
from cardshoe.controller.cli import main

@click.command()
def broken() -> None:
    raise RuntimeError("boom")

sys.modules["broken_cmd"] = sys.modules[__name__]
main.COMMANDS["broken"] = ("broken_cmd", "broken", "A command with a bug.")
main.main(["broken"])
"""


def test_a_bug_is_one_line_exit_70_unless_debugging(tmp_path) -> None:
    script = tmp_path / "broken.py"
    script.write_text(BROKEN_COMMAND)
    env = {k: v for k, v in os.environ.items() if k != "CARDSHOE_DEBUG"}
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert result.returncode == 70
    assert result.stderr.count("\n") == 1
    assert "internal error (RuntimeError: boom)" in result.stderr
    debugging = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        env={**env, "CARDSHOE_DEBUG": "1"},
    )
    assert debugging.returncode == 1 and "Traceback" in debugging.stderr
