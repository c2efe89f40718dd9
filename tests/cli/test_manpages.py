"""Man pages: controller/cli/reference_pages.py writes one per command, lazy ones included, and each
renders cleanly with groff and shows the command's real options."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from cardshoe.controller.cli.main import COMMANDS, cli

GENERATOR = ("-m", "cardshoe.controller.cli.reference_pages")

needs_groff = pytest.mark.skipif(shutil.which("groff") is None, reason="groff renders man pages")


@pytest.fixture(scope="module")
def man_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out_dir = tmp_path_factory.mktemp("man")
    result = subprocess.run(
        [sys.executable, *GENERATOR, "man", str(out_dir)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return out_dir


def loaded(name: str) -> click.Command:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None, name
    return command


def expected_pages() -> set[str]:
    """shoectl, every command in the lazy COMMANDS table, and every command of its groups,
    groups within groups included (shoectl floor user add)."""
    pages = {"shoectl.1"}
    for name in COMMANDS:
        pages |= _group_pages(f"shoectl-{name}", loaded(name))
    return pages


def _group_pages(page: str, command: click.Command) -> set[str]:
    pages = {f"{page}.1"}
    if isinstance(command, click.Group):
        context = click.Context(command)
        for sub in command.list_commands(context):
            found = command.get_command(context, sub)
            assert found is not None
            pages |= _group_pages(f"{page}-{sub}", found)
    return pages


def render(page: Path) -> subprocess.CompletedProcess[str]:
    """The page as `man` shows it, without bold or underline, warnings on stderr."""
    return subprocess.run(
        ["groff", "-man", "-Tutf8", "-ww", "-P", "-cbou", str(page)],
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_every_command_gets_a_page(man_dir) -> None:
    assert {page.name for page in man_dir.iterdir()} == expected_pages()
    assert {"shoectl-journal-verify.1", "shoectl-rules-play.1"} <= expected_pages()


@needs_groff
def test_every_page_renders_without_a_warning(man_dir) -> None:
    for page in sorted(man_dir.iterdir()):
        result = render(page)

        assert result.returncode == 0, page.name
        assert result.stderr == "", f"{page.name}: {result.stderr}"
        assert page.stem.upper() in result.stdout.splitlines()[0]


@needs_groff
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_page_lists_every_option_of_its_command(man_dir, name) -> None:
    command = loaded(name)
    text = render(man_dir / f"shoectl-{name}.1").stdout

    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            for option in param.opts:
                assert option in text, f"{name}: {option}"
    assert "shoectl(1)" in text.split("SEE ALSO")[1]


@needs_groff
def test_the_main_page_names_the_commands_and_exit_codes(man_dir) -> None:
    text = " ".join(render(man_dir / "shoectl.1").stdout.split())

    assert "--version" in text
    assert "Exit codes:" in text
    for name in COMMANDS:
        assert f"shoectl-{name}(1)" in text
