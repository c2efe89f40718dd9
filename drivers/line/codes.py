"""The card table of a barcode reader whose codes are not rank and suit.

`cards_file` names a CSV file of `code,card` rows (an optional first row
`code,card` is a header): the code as the reader writes it, the card as
"AS", "TD", "10H". A code listed twice, or a card that names no card, is a
mistake in the file and stops the table from loading with its line number,
since a wrong table would deal wrong cards without anyone noticing.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path

from cardshoe.drivers.api.events import CardId, CardIdError
from cardshoe.drivers.line.cards import card_from_text

HEADER = ("code", "card")


class CardTableError(ValueError):
    """The cards file cannot be read or holds a bad row; the message says where."""


def parse_card_table(text: str, source: str) -> Mapping[str, CardId]:
    """code -> card from the file's text; `source` names it in errors."""
    table: dict[str, CardId] = {}
    for number, row in enumerate(csv.reader(text.splitlines()), start=1):
        cells = tuple(cell.strip() for cell in row)
        if not any(cells) or (number == 1 and tuple(c.lower() for c in cells) == HEADER):
            continue
        if len(cells) != 2 or not cells[0]:
            raise CardTableError(
                f"{source} line {number}: expected `code,card` (e.g. 4006381333931,AS), "
                f"got {','.join(cells)!r}"
            )
        code, card = cells
        if code in table:
            raise CardTableError(f"{source} line {number}: code {code!r} is listed twice")
        try:
            table[code] = card_from_text(card)
        except CardIdError as exc:
            raise CardTableError(f"{source} line {number}: {exc}") from None
    if not table:
        raise CardTableError(f"{source} lists no card: add `code,card` rows")
    return table


def load_card_table(path: Path) -> Mapping[str, CardId]:
    """The table in `path`; CardTableError with one line when it cannot be used."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise CardTableError(f"cannot read the cards file {path}: {reason}") from None
    return parse_card_table(text, str(path))
