"""Text columns sized to what they hold, for the commands that print tables as plain lines.

A fixed width either wastes the terminal or lets a long value push the rest
of its line out of line; measuring the rows first keeps every column aligned
whatever the journal or the rules put in it. Every cell is escaped first
(one_line): a device's model, a USB descriptor or an operator's note reaches
these rows, and a control character in one would be a command to the
terminal (ESC, CSI) or a line break inside a row. Pure: rows in, lines out.
"""

from __future__ import annotations

from collections.abc import Sequence, Set

from cardshoe.controller.one_line import escape_line_breaks

GAP = "  "
"""Between two columns."""


def aligned_lines(rows: Sequence[Sequence[str]], right: Set[int] = frozenset()) -> list[str]:
    """Each row as one line, every column as wide as its widest cell; the columns whose
    index is in `right` (numbers) aligned right, the others left. The last column is never
    padded, so a long free-text column (a payload, notes) ends its line."""
    if not rows:
        return []
    rows = [[escape_line_breaks(cell) for cell in row] for row in rows]
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    last = len(widths) - 1
    lines = []
    for row in rows:
        cells = []
        for column, (cell, width) in enumerate(zip(row, widths, strict=True)):
            if column == last:
                cells.append(cell)
            else:
                cells.append(cell.rjust(width) if column in right else cell.ljust(width))
        lines.append(GAP.join(cells).rstrip())
    return lines
