"""Write shoectl's man pages or its bash and zsh completion, generated from the click commands.

`make man` and `make completion` write them under build/; udev/install.sh runs this module
with the deployed venv's Python, so what it installs describes the shoectl installed there.
shoectl's group loads its subcommands lazily, so a lazy group's `commands` dict is empty: the
pages are made by walking `list_commands` and `get_command`, which import every subcommand.

usage: python -m cardshoe.controller.cli.reference_pages man DIR         DIR/shoectl.1, ...
       python -m cardshoe.controller.cli.reference_pages completion DIR  DIR/shoectl, DIR/_shoectl
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import click
from click.shell_completion import get_completion_class

from cardshoe.controller.cli.main import cli

PROG = "shoectl"
# The variable click's main() reads for shoectl: "_{prog_name}_COMPLETE", upper case.
COMPLETE_VAR = "_SHOECTL_COMPLETE"
# Shell -> file name its completion loader looks for (bash-completion, zsh's fpath).
COMPLETION_FILES = {"bash": "shoectl", "zsh": "_shoectl"}


@dataclass(frozen=True)
class Page:
    """One command and the context click formats its help in."""

    words: tuple[str, ...]  # ("shoectl", "journal", "show")
    command: click.Command
    ctx: click.Context

    @property
    def name(self) -> str:
        return "-".join(self.words)

    @property
    def children(self) -> list[str]:
        if not isinstance(self.command, click.Group):
            return []
        return self.command.list_commands(self.ctx)


def walk(command: click.Command, ctx: click.Context, words: tuple[str, ...]) -> Iterator[Page]:
    """Every visible command under `command`, itself first, loading lazy subcommands."""
    page = Page(words, command, ctx)
    yield page
    if isinstance(command, click.Group):
        for child in page.children:
            sub = command.get_command(ctx, child)
            if sub is not None and not sub.hidden:
                sub_ctx = click.Context(sub, info_name=child, parent=ctx, **sub.context_settings)
                yield from walk(sub, sub_ctx, (*words, child))


def pages() -> list[Page]:
    # The context settings carry shoectl's -h alias for --help down to every subcommand.
    return list(walk(cli, click.Context(cli, info_name=PROG, **cli.context_settings), (PROG,)))


def escape(text: str) -> str:
    """Text as roff reads it literally: backslashes, minus signs and leading control dots."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(
        "\\&" + line if line.startswith((".", "'")) else line for line in text.splitlines()
    )


def description(help_text: str) -> list[str]:
    """A click help text as roff paragraphs; a `\\b` paragraph keeps its line breaks."""
    shown = inspect.cleandoc(help_text).split("\f")[0]
    lines: list[str] = []
    for paragraph in shown.split("\n\n"):
        if paragraph.startswith("\b\n"):
            lines += [".PP", ".nf", escape(paragraph[2:]), ".fi"]
        else:
            lines += [".PP", escape(" ".join(paragraph.split()))]
    return lines


def options_section(page: Page) -> list[str]:
    """Each option as click's --help shows it: its names and metavar, then its help."""
    records = [
        record
        for param in page.command.get_params(page.ctx)
        if isinstance(param, click.Option) and (record := param.get_help_record(page.ctx))
    ]
    lines = [".SH OPTIONS"] if records else []
    for names, help_text in records:
        lines += [".TP", f"\\fB{escape(names)}\\fR", escape(help_text)]
    return lines


def commands_section(subpages: list[Page]) -> list[str]:
    lines = [".SH COMMANDS"] if subpages else []
    for sub in subpages:
        summary = escape(sub.command.get_short_help_str(limit=300))
        lines += [".TP", f"\\fB{escape(sub.words[-1])}\\fR", f"{summary} See {man_ref(sub.name)}."]
    return lines


def man_ref(name: str) -> str:
    return f"\\fB{escape(name)}\\fR(1)"


def render(page: Page, by_name: dict[str, Page]) -> str:
    """The man page of one command: name, synopsis, description, options, subcommands."""
    command, ctx = page.command, page.ctx
    summary = command.get_short_help_str(limit=300).rstrip(".")
    subpages = [
        by_name[name] for child in page.children if (name := f"{page.name}-{child}") in by_name
    ]
    lines = [
        f'.TH "{escape(page.name.upper())}" "1" "" "cardshoe {version("cardshoe")}" '
        '"shoectl manual"',
        ".SH NAME",
        f"{escape(page.name)} \\- {escape(summary)}",
        ".SH SYNOPSIS",
        f".B {escape(' '.join(page.words))}",
        escape(" ".join(command.collect_usage_pieces(ctx))),
    ]
    if command.help:
        lines += [".SH DESCRIPTION", *description(command.help)]
    lines += options_section(page) + commands_section(subpages)
    see_also = ["-".join(page.words[:-1])] if len(page.words) > 1 else []
    see_also += [sub.name for sub in subpages]
    if see_also:
        lines += [".SH SEE ALSO", ",\n".join(man_ref(name) for name in see_also)]
    return "\n".join(lines) + "\n"


def write_man(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    all_pages = pages()
    by_name = {page.name: page for page in all_pages}
    written = []
    for page in all_pages:
        path = out_dir / f"{page.name}.1"
        path.write_text(render(page, by_name))
        written.append(path)
    return written


def write_completion(out_dir: Path) -> list[Path]:
    """click's own completion scripts: each asks shoectl itself, so they never go stale."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for shell, file_name in COMPLETION_FILES.items():
        completion = get_completion_class(shell)
        assert completion is not None, shell  # both are built into click
        path = out_dir / file_name
        path.write_text(completion(cli, {}, PROG, COMPLETE_VAR).source())
        written.append(path)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["man", "completion"])
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args()
    write = write_man if args.what == "man" else write_completion
    written = write(args.out_dir)
    print(f"reference_pages: {len(written)} {args.what} file(s) in {args.out_dir}")


if __name__ == "__main__":
    main()
