"""Imports sit at the top of each production module, so the import graph is in plain sight.

An import inside a function is allowed only where a comment says why (an optional extra that may
be missing, a heavy module only one subcommand needs, start-up, an import cycle): on the import's
own line or on the line directly above it. One comment above the first late import of a statement
list (a function's body, a branch's) covers that list's later imports too, and a comment above a
`try:` covers the imports that open it. docs/architecture.md ("How to add ...": "An import inside a
function") says when one may stay late.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("controller", "drivers", "firmware_sim")


IMPORTS = (ast.Import, ast.ImportFrom)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _comment_lines(source: str) -> set[int]:
    """The numbers of the lines that hold a comment, on their own or after code."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {token.start[0] for token in tokens if token.type == tokenize.COMMENT}


def _statement_lists(function: ast.AST) -> Iterator[tuple[ast.AST, list[ast.stmt]]]:
    """Each statement list inside function, with the statement that holds it."""
    for node in ast.walk(function):
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if isinstance(statements, list) and statements:
                yield node, statements


def _unexplained(path: Path) -> Iterator[str]:
    """The imports inside functions of path that no comment explains.

    A comment on the line above an import (or on its line) explains it and every later import
    of the same statement list; a comment above a `try:` explains the imports that open it.
    """
    source = path.read_text(encoding="utf-8")
    comments = _comment_lines(source)
    relative = path.relative_to(ROOT).as_posix()
    reported: set[int] = set()
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, FUNCTIONS):
            continue
        for holder, statements in _statement_lists(function):
            explained = isinstance(holder, ast.Try) and holder.lineno - 1 in comments
            for statement in statements:
                if not isinstance(statement, IMPORTS):
                    continue
                if explained or {statement.lineno - 1, statement.lineno} & comments:
                    explained = True
                    continue
                if statement.lineno not in reported:
                    reported.add(statement.lineno)
                    yield f"{relative}:{statement.lineno}: {ast.unparse(statement)}"


def _production_modules() -> Iterator[Path]:
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def test_every_late_import_says_why() -> None:
    unexplained = [line for path in _production_modules() for line in _unexplained(path)]
    assert not unexplained, (
        "imports inside functions with no comment saying why (move them to the top, or say "
        "on the line above: optional extra, heavy module, import cycle):\n" + "\n".join(unexplained)
    )
