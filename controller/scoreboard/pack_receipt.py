"""A pack's receipt: its chain of custody at shoe start and its reconciliation at shoe end.

Regulators ask for a paper for every pack a supervisor signs (New Jersey 13:69E-1.18A(b)4,
Washington WAC 230-16-158(2)(d)): which deck set and how many decks, whether the pack's
count was right, who loaded it and who witnessed, on which device (maker, model, serial,
firmware hash) and when; then what became of every card. A pure projection of one shoe's
journal records, so the receipt can say nothing its journal does not: it names the records
it was read from and the hash of the last, which anchors the paper to the journal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cardshoe.controller import record_kinds
from cardshoe.controller.procedure.facts import (
    DeckSetAdopted,
    RoundVoided,
    ShoeEnded,
    ShoeShuffled,
    ShoeStarted,
)
from cardshoe.controller.procedure.shoe import CARDS_PER_DECK
from cardshoe.drivers.api.events import NO_FIRMWARE

_DECLARED_SOURCE = "declared"
_ADOPTED_SOURCE = "first card"


@dataclass(frozen=True)
class ReceiptRecord:
    """What the receipt needs of one journal record."""

    id: int
    time_utc: str
    kind: str
    payload: Mapping[str, Any]
    hash: str


@dataclass(frozen=True)
class PackCheck:
    """The pack's count before the deal against what the decks hold."""

    counted: int | None
    """None: the device could not count it."""
    expected: int
    how: str
    """"device count" (a manual shoe's STATUS) or "machine shuffle" (the shuffler's count)."""

    @property
    def agrees(self) -> bool | None:
        return None if self.counted is None else self.counted == self.expected


@dataclass(frozen=True)
class Reconciliation:
    """What became of the cards: shoe.ended's accounting, and the rounds voided."""

    ended_at: str
    rounds: int
    loaded: int
    dealt: int
    burned: int
    returned: int
    remaining: int | None
    intruders: int
    voids: int
    reconciled: bool


@dataclass(frozen=True)
class PackReceipt:
    table_id: str
    shoe_id: str
    started_at: str
    game: str
    decks: int
    deck_set: str | None
    deck_set_source: str | None
    """"declared" when typed at new-shoe, "first card" when the first tagged card showed it."""
    fingerprint: str
    pack_check: PackCheck | None
    loaded_by: str | None
    witnessed_by: str | None
    opened_by: str | None
    device: Mapping[str, Any]
    software: Mapping[str, Any]
    reconciliation: Reconciliation | None
    """None while the shoe is open."""
    first_record: int
    last_record: int
    last_hash: str

    def to_json(self) -> dict[str, Any]:
        check = self.pack_check
        ended = self.reconciliation
        return {
            "table_id": self.table_id,
            "shoe_id": self.shoe_id,
            "started_at": self.started_at,
            "game": self.game,
            "decks": self.decks,
            "deck_set": self.deck_set,
            "deck_set_source": self.deck_set_source,
            "fingerprint": self.fingerprint,
            "pack_check": None
            if check is None
            else {
                "counted": check.counted,
                "expected": check.expected,
                "how": check.how,
                "agrees": check.agrees,
            },
            "loaded_by": self.loaded_by,
            "witnessed_by": self.witnessed_by,
            "opened_by": self.opened_by,
            "device": dict(self.device),
            "software": dict(self.software),
            "reconciliation": None if ended is None else vars(ended).copy(),
            "records": {
                "first": self.first_record,
                "last": self.last_record,
                "last_hash": self.last_hash,
            },
        }


def pack_receipt(table_id: str, records: Iterable[ReceiptRecord]) -> PackReceipt | None:
    """The receipt of the shoe whose records these are, in journal order; None without its
    shoe.started (an id the journal never opened)."""
    shown = list(records)
    started = _first(shown, ShoeStarted.KIND)
    if started is None:
        return None
    custody = _first(shown, record_kinds.SESSION_PACK_CUSTODY)
    held = {} if custody is None else custody.payload
    deck_set, source = _deck_set(started, _first(shown, DeckSetAdopted.KIND))
    decks = int(started.payload["decks"])
    return PackReceipt(
        table_id=table_id,
        shoe_id=str(started.payload["shoe_id"]),
        started_at=started.time_utc,
        game=str(started.payload["game"]),
        decks=decks,
        deck_set=deck_set,
        deck_set_source=source,
        fingerprint=str(started.payload["fingerprint"]),
        pack_check=_pack_check(shown, decks * CARDS_PER_DECK),
        loaded_by=held.get("loaded_by"),
        witnessed_by=held.get("witnessed_by"),
        opened_by=held.get("opened_by"),
        device=held.get("device", {}),
        software=held.get("software", {}),
        reconciliation=_reconciliation(shown),
        first_record=shown[0].id,
        last_record=shown[-1].id,
        last_hash=shown[-1].hash,
    )


def _first(records: list[ReceiptRecord], kind: str) -> ReceiptRecord | None:
    return next((record for record in records if record.kind == kind), None)


def _deck_set(
    started: ReceiptRecord, adopted: ReceiptRecord | None
) -> tuple[str | None, str | None]:
    if started.payload.get("deck_set") is not None:
        return str(started.payload["deck_set"]), _DECLARED_SOURCE
    if adopted is not None:
        return str(adopted.payload["deck_set"]), _ADOPTED_SOURCE
    return None, None


def _pack_check(records: list[ReceiptRecord], expected: int) -> PackCheck | None:
    shuffled = _first(records, ShoeShuffled.KIND)
    if shuffled is not None:
        return PackCheck(int(shuffled.payload["card_count"]), expected, "machine shuffle")
    counted = _first(records, record_kinds.HOST_PACK_COUNT)
    if counted is None:
        return None
    remaining = counted.payload.get("cards_remaining")
    total = None if remaining is None else int(remaining) + int(counted.payload["cards_dealt"])
    return PackCheck(total, expected, "device count")


def _reconciliation(records: list[ReceiptRecord]) -> Reconciliation | None:
    ended = _first(records, ShoeEnded.KIND)
    if ended is None:
        return None
    counts = ended.payload
    return Reconciliation(
        ended_at=ended.time_utc,
        rounds=int(counts["rounds"]),
        loaded=int(counts["loaded"]),
        dealt=int(counts["dealt"]),
        burned=int(counts["burned"]),
        returned=int(counts["returned"]),
        remaining=counts.get("remaining"),
        intruders=int(counts["intruders"]),
        voids=sum(1 for record in records if record.kind == RoundVoided.KIND),
        reconciled=bool(counts["reconciled"]),
    )


def receipt_rows(receipt: PackReceipt) -> list[tuple[str, str]]:
    """The receipt as (label, value) rows, the same for the terminal and the printed page."""
    device = receipt.device
    software = receipt.software
    rows = [
        ("table", receipt.table_id),
        ("shoe", receipt.shoe_id),
        ("started", receipt.started_at),
        ("game", f"{receipt.game}, {receipt.decks} deck{'' if receipt.decks == 1 else 's'}"),
        ("options", receipt.fingerprint),
        ("deck set", _deck_set_text(receipt)),
        ("pack count", _pack_check_text(receipt.pack_check)),
        ("loaded by", receipt.loaded_by or "no dealer signed in"),
        ("witnessed by", receipt.witnessed_by or "no supervisor signed in"),
        ("device maker", device.get("maker") or "not configured (device.maker)"),
        ("device model", device.get("model") or "not recorded"),
        ("device serial", device.get("serial_number") or "not recorded"),
        ("firmware", _firmware_receipt_text(device)),
        (
            "software",
            f"cardshoe {software.get('version', '?')} manifest sha256 "
            f"{software.get('manifest_sha256', '?')}"
            if software
            else "not recorded",
        ),
    ]
    rows += _reconciliation_rows(receipt.reconciliation)
    rows.append(
        (
            "journal",
            f"records {receipt.first_record}-{receipt.last_record}, last hash {receipt.last_hash}",
        )
    )
    return rows


def _firmware_receipt_text(device: Mapping[str, Any]) -> str:
    if not device:
        return "not recorded"
    if device.get("firmware_hash") == "":
        return NO_FIRMWARE
    return f"{device.get('firmware_version', '?')} sha256 {device.get('firmware_hash', '?')}"


def _deck_set_text(receipt: PackReceipt) -> str:
    if receipt.deck_set is None:
        return "not known (no tagged card read)"
    return f"{receipt.deck_set} ({receipt.deck_set_source})"


def _pack_check_text(check: PackCheck | None) -> str:
    if check is None:
        return "not counted"
    if check.counted is None:
        return f"the device could not count it ({check.expected} expected)"
    verdict = "agrees" if check.agrees else "DIFFERS"
    return f"{check.counted} cards, {check.expected} expected: {verdict} ({check.how})"


def _reconciliation_rows(ended: Reconciliation | None) -> list[tuple[str, str]]:
    if ended is None:
        return [("ended", "the shoe is still open")]
    remaining = "not known" if ended.remaining is None else str(ended.remaining)
    return [
        ("ended", ended.ended_at),
        ("rounds", f"{ended.rounds} ({ended.voids} void)"),
        (
            "cards",
            f"{ended.loaded} loaded, {ended.dealt} dealt, {ended.burned} burned, "
            f"{ended.returned} returned, {remaining} remaining, {ended.intruders} intruders",
        ),
        ("reconciled", "yes" if ended.reconciled else "NO"),
    ]
