"""Shell completion: the scripts cli/reference_pages.py writes complete real shoectl words.

The bash script is sourced in a real bash and its completion function called as bash calls
it, with COMP_WORDS and COMP_CWORD; it asks the installed shoectl, so these tests run the
whole path a technician's Tab key takes. zsh is not installed here, so its script is checked
through the same click protocol it speaks (_SHOECTL_COMPLETE=zsh_complete).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from cardshoe.controller.cli.main import COMMANDS, cli

GENERATOR = ("-m", "cardshoe.controller.cli.reference_pages")
VENV_BIN = Path(sys.executable).parent

# Calls the completion function the way bash's `complete -F` does: the command name, the word
# being completed and the word before it, with COMP_WORDS/COMP_CWORD set; prints COMPREPLY.
BASH_COMPLETE = """
source "$1"; shift
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_shoectl_completion shoectl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
printf '%s\\n' "${COMPREPLY[@]}"
"""


@pytest.fixture(scope="module")
def completion_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out_dir = tmp_path_factory.mktemp("completion")
    subprocess.run(
        [sys.executable, *GENERATOR, "completion", str(out_dir)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return out_dir


def shell_env() -> dict[str, str]:
    """The environment of a technician's shell with the venv's shoectl on PATH."""
    return {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def bash_complete(completion_dir: Path, *words: str) -> list[str]:
    result = subprocess.run(
        [
            "bash",
            "--norc",
            "--noprofile",
            "-c",
            BASH_COMPLETE,
            "bash",
            str(completion_dir / "shoectl"),
            "shoectl",
            *words,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=shell_env(),
        cwd=completion_dir,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return [line for line in result.stdout.splitlines() if line]


def test_bash_completes_a_subcommand_from_its_prefix(completion_dir) -> None:
    assert bash_complete(completion_dir, "jo") == ["journal"]


def test_bash_offers_every_command_of_the_lazy_table(completion_dir) -> None:
    assert bash_complete(completion_dir, "") == sorted(COMMANDS)


def journal_group() -> click.Group:
    """The real `shoectl journal` group, loaded as completion loads it."""
    journal = cli.get_command(click.Context(cli), "journal")
    assert isinstance(journal, click.Group)
    return journal


def test_bash_completes_nested_commands_options_and_choices(completion_dir) -> None:
    subcommands = journal_group().list_commands(click.Context(journal_group()))
    assert {"export", "show", "verify"} <= set(subcommands)
    assert bash_complete(completion_dir, "journal", "") == subcommands
    assert bash_complete(completion_dir, "journal", "ver") == ["verify"]
    assert bash_complete(completion_dir, "demo", "--tran") == ["--transport"]
    assert bash_complete(completion_dir, "demo", "--transport", "") == [
        "pty",
        "tcp",
        "usb",
        "inproc",
    ]


def test_bash_script_registers_for_shoectl(completion_dir) -> None:
    result = subprocess.run(
        [
            "bash",
            "--norc",
            "--noprofile",
            "-c",
            'source "$1" && complete -p shoectl',
            "bash",
            str(completion_dir / "shoectl"),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )

    assert result.stdout.strip() == "complete -o nosort -F _shoectl_completion shoectl"


def test_zsh_script_is_a_compdef_for_shoectl(completion_dir) -> None:
    script = (completion_dir / "_shoectl").read_text()

    assert script.startswith("#compdef shoectl\n")
    assert "_SHOECTL_COMPLETE=zsh_complete shoectl" in script


def test_zsh_protocol_completes_subcommands_with_their_help() -> None:
    env = {
        **shell_env(),
        "_SHOECTL_COMPLETE": "zsh_complete",
        "COMP_WORDS": "shoectl jo",
        "COMP_CWORD": "1",
    }
    result = subprocess.run(["shoectl"], capture_output=True, text=True, timeout=30, env=env)

    assert result.returncode == 0, result.stderr
    kind, value, help_text = result.stdout.splitlines()
    assert (kind, value) == ("plain", "journal")
    assert help_text == journal_group().get_short_help_str()
    assert help_text.startswith("Show, export")


def test_bash_completes_games_devices_operator_commands_and_holds(completion_dir) -> None:
    from cardshoe.controller.procedure.operator_commands import CONTROL_COMMANDS
    from cardshoe.controller.rules.games import GAME_NAMES

    assert bash_complete(completion_dir, "demo", "--game", "") == list(GAME_NAMES)
    assert bash_complete(completion_dir, "odds", "--game", "mac") == ["macau-1", "macau-2"]
    assert bash_complete(completion_dir, "rules", "play", "--game", "se") == ["seven-up"]
    assert bash_complete(completion_dir, "demo", "--device", "") == ["shoe", "auto"]
    assert bash_complete(completion_dir, "info", "sim://cs-a") == ["sim://cs-auto"]
    assert bash_complete(completion_dir, "control", "") == [
        command.name for command in CONTROL_COMMANDS
    ]
    assert bash_complete(completion_dir, "control", "cl") == ["clear-hold"]
    assert bash_complete(completion_dir, "control", "clear-hold", "--reason", "fault.ja") == [
        "fault.jam"
    ]
    assert "misread_card" in bash_complete(completion_dir, "control", "clear-hold", "--reason", "")
    assert bash_complete(completion_dir, "control", "abandon-shoe", "--reason", "") == []
