"""A simulated line reader: a card reader without a gate that writes one line per event.

This is the kind of device a casino can buy today: a barcode or camera
reader at a shoe's exit, printing each card it reads as ASCII over
USB-serial, or typing it as a USB keyboard (firmware_sim/hid_reader.py).
It has no sequence numbers, no acknowledgements and no gate: a card the
host misses is gone. Cards leave when the dealer pulls them (pull_card;
tests and `shoectl demo` call it when the table wants a card); the dealer
button and faults are lines too. With `pull_interval_s`, the reader's own
dealer pulls a card that often by itself, which is what `shoectl sim
--protocol line` does for a technician watching `shoectl monitor --raw`.

Faults (docs/simulator.md): garbled-line, bad-checksum, double-read,
dropped-line and unplug, placed at a card or a round as for every device.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from cardshoe.drivers.api.events import CardSuit
from cardshoe.drivers.line.checksum import Checksum, with_checksum
from cardshoe.drivers.line.matching import LineKind, match_line
from cardshoe.drivers.line.profile import LineProfile
from cardshoe.drivers.protocol.cardid import CardId
from cardshoe.firmware_sim.core import locked
from cardshoe.firmware_sim.errors import SimConfigError
from cardshoe.firmware_sim.faults import (
    DEFAULT_DURATION_S,
    LINE_READER_KINDS,
    FaultPlan,
    Injection,
    InjectionKind,
)
from cardshoe.firmware_sim.shoe import (
    DEFAULT_CUT_CARD_DEPTH,
    DEFAULT_DECKS,
    CardPack,
    build_decks,
    make_rng,
)
from cardshoe.firmware_sim.timing import INSTANT, Timing

log = logging.getLogger(__name__)

GARBLE = {ord("C"): ord("G"), ord("U"): ord("V")}
"""How garbled-line damages a character: the first letter it can, else the first byte flips."""
INJECTED_FAULT_CODE = 17
"""The code of the fault line reader-fault writes (E17 in the example profile's format)."""


@dataclass(frozen=True)
class LineFormat:
    """What the simulated reader writes: one template per event, its checksum and terminator.

    The defaults are what docs/examples/line-shoe.toml reads. With `codes`, a card is
    written as its code (a barcode reader with a card table) through `code_card`.
    """

    card: str = "C{rank}{suit}"
    code_card: str = "{code}"
    cut_card: str = "CUT"
    button: str = "BTN"
    fault: str = "E{code}"
    terminator: bytes = b"\r\n"
    checksum: Checksum = Checksum.NONE
    codes: Mapping[tuple[int, int], str] | None = None
    """(rank, suit) -> the code the reader writes for it."""

    def card_body(self, card: CardId) -> str:
        if self.codes is not None:
            return self.code_card.format(code=self.codes[(card.rank, int(card.suit))])
        face = str(CardId(card.rank, card.suit))
        return self.card.format(rank=face[:-1], suit=face[-1])

    def line(self, body: str) -> bytes:
        """The body with its checksum; the terminator is the attachment's to add."""
        return with_checksum(body.encode("ascii"), self.checksum)


def format_for(profile: LineProfile) -> LineFormat:
    """How to write lines that `profile` reads: its terminator, checksum and card codes.

    The simulator writes the templates of docs/examples/line-shoe.toml (CAS, CUT, BTN,
    E12), so a profile whose patterns read something else is refused here with the line
    it would have missed, rather than every line arriving as a bad one.
    """
    codes = None
    if profile.cards is not None:
        codes = {(card.rank, int(card.suit)): code for code, card in profile.cards.items()}
    line_format = LineFormat(terminator=profile.terminator, checksum=profile.checksum, codes=codes)
    samples = []
    if codes is None or (1, CardSuit.SPADES) in codes:
        samples.append((LineKind.CARD, line_format.card_body(CardId(1, CardSuit.SPADES))))
    for kind, pattern, body in (
        (LineKind.CUT_CARD, profile.cut_card, line_format.cut_card),
        (LineKind.BUTTON, profile.button, line_format.button),
        (LineKind.FAULT, profile.fault, line_format.fault.format(code=12)),
    ):
        if pattern is not None:
            samples.append((kind, body))
    for kind, body in samples:
        found = match_line(line_format.line(body), profile).kind
        if found is not kind:
            raise SimConfigError(
                f"the simulated reader writes a {kind.value.replace('_', ' ')} as {body!r}, "
                f"which this profile reads as {found.value.replace('_', ' ')}: "
                "simulate with the patterns of docs/examples/line-shoe.toml"
            )
    return line_format


@dataclass(frozen=True)
class ReaderIdentity:
    serial_number: str = "LR-000001"
    manufacturer: str = "cardshoe simulator"
    product: str = "line card reader"
    usb_vid: int = 0x1209
    usb_pid: int = 0x0003


@dataclass
class Counts:
    """What the reader did, for tests to compare with what the host saw."""

    lines: int = 0
    cards: int = 0
    acks: int = 0


def _damaged(line: bytes) -> bytes:
    for index, byte in enumerate(line):
        if byte in GARBLE:
            return line[:index] + bytes([GARBLE[byte]]) + line[index + 1 :]
    return bytes([line[0] ^ 0x01]) + line[1:]


def _wrong_checksum(line: bytes, checksum: Checksum) -> bytes:
    if checksum is Checksum.NONE:
        return line + b"*00"
    body, _, digits = line.rpartition(b"*")
    return body + b"*" + f"{int(digits, 16) ^ 0xFF:02X}".encode()


@dataclass(eq=False)
class LineReader:
    """The device: cards in a shoe, a reader at its exit, lines out."""

    format: LineFormat = field(default_factory=LineFormat)
    identity: ReaderIdentity = field(default_factory=ReaderIdentity)
    seed: int | None = None
    decks: int = DEFAULT_DECKS
    cut_card_depth: int | None = DEFAULT_CUT_CARD_DEPTH
    injections: Iterable[Injection] = ()
    pull_interval_s: float | None = None
    """Pull a card by itself this often; None: only when pull_card() is called."""
    timing: Timing = INSTANT
    clock: Callable[[], float] = time.monotonic
    ack: bytes = b""
    """What the host writes after each line, when it does: counted in `counts.acks`."""

    def __post_init__(self) -> None:
        self.plan = FaultPlan(list(self.injections))
        for injection in self.plan.injections:
            if injection.kind not in LINE_READER_KINDS:
                raise SimConfigError(
                    f"{injection} cannot happen on a line reader; its faults are "
                    f"{', '.join(sorted(kind.value for kind in LINE_READER_KINDS))}"
                )
        self._lock = threading.RLock()
        self._listeners: list[Callable[[], None]] = []
        self._output: list[bytes] = []
        self._received = bytearray()
        self._replug_at: float | None = None
        self._last_pull: float | None = None
        self.rng = make_rng(self.seed)
        self.shoe = self._new_shoe()
        self.plugged = True
        self.round = 0
        self._cards_in_round = 0
        self.counts = Counts()

    def _new_shoe(self) -> CardPack:
        cards = build_decks(self.decks, 0, tagged=False)
        self.rng.shuffle(cards)
        return CardPack(cards, self.cut_card_depth)

    @property
    def serial_number(self) -> str:
        return self.identity.serial_number

    # --- what a person does ---------------------------------------------------------

    @locked
    def pull_card(self) -> bool:
        """The dealer draws the next card past the reader; False when none is left or the
        reader is unplugged (the card stays in the shoe). unplug@card=N pulls the cable as
        card N leaves, so its line is lost."""
        if not self.plugged or not self.shoe.remaining:
            return False
        first_in_round = self.round > 0 and self._cards_in_round == 0
        due = self.plan.take_due(len(self.shoe.dealt) + 1, self.round, first_in_round)
        kinds = {injection.kind for injection in due}
        if InjectionKind.READER_FAULT in kinds:
            self.report_fault(INJECTED_FAULT_CODE)
            return False
        unplug = next((i for i in due if i.kind is InjectionKind.UNPLUG), None)
        if unplug is not None:
            # The cable comes out as the card leaves: its line is lost with the power.
            self.unplug()
            self._replug_at = self.clock() + (
                unplug.duration_s or DEFAULT_DURATION_S[InjectionKind.UNPLUG]
            )
            kinds.add(InjectionKind.DROPPED_LINE)
        card = self.shoe.take()
        self._cards_in_round += 1
        self.counts.cards += 1
        self._last_pull = self.clock()
        self._write_card(card, kinds)
        if self.shoe.cut_card_at_exit:
            self.shoe.cut_card_seen = True
            if self.plugged:
                self._write(self.format.cut_card)
        return True

    @locked
    def press_button(self) -> bool:
        """The dealer's "no more bets": a button line, and the next round begins."""
        if not self.plugged:
            return False
        self.round += 1
        self._cards_in_round = 0
        self._write(self.format.button)
        return True

    @locked
    def report_fault(self, code: int) -> None:
        """A fault line; a reader writes none when the fault passes."""
        self._write(self.format.fault.format(code=code))

    @locked
    def load_pack(self) -> None:
        self.shoe = self._new_shoe()

    @locked
    def unplug(self) -> None:
        if self.plugged:
            log.info("simulated reader %s: unplugged", self.serial_number)
            self.plugged = False
            self._output.clear()
            self._notify()

    @locked
    def replug(self) -> None:
        if not self.plugged:
            log.info("simulated reader %s: plugged back in", self.serial_number)
            self.plugged = True
            self._replug_at = None
            self._notify()

    # --- for attachments (firmware_sim/runner.py) ------------------------------------

    @locked
    def feed(self, data: bytes) -> None:
        """Host bytes: a reader only counts the acks its host writes."""
        if not (self.plugged and self.ack):
            return
        self._received += data
        while (end := self._received.find(self.ack)) >= 0:
            del self._received[: end + len(self.ack)]
            self.counts.acks += 1

    @locked
    def take_output(self) -> bytes:
        lines, self._output = self._output, []
        return b"".join(self.encode(line) for line in lines) if self.plugged else b""

    def encode(self, line: bytes) -> bytes:
        """One line as it goes on the wire: here the line and the terminator."""
        return line + self.format.terminator

    @locked
    def tick(self) -> None:
        now = self.clock()
        if self._replug_at is not None and now >= self._replug_at:
            self.replug()
        if self._auto_pull_due(now) and not self.pull_card() and not self.shoe.remaining:
            self.load_pack()

    def _auto_pull_due(self, now: float) -> bool:
        interval = self.pull_interval_s
        if interval is None or not self.plugged:
            return False
        return self._last_pull is None or now - self._last_pull >= interval

    def link_opened(self) -> None:
        """A reader says nothing when a host opens its port."""

    def add_listener(self, listener: Callable[[], None]) -> None:
        with self._lock:
            self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[], None]) -> None:
        with self._lock:
            self._listeners.remove(listener)

    # --- inside -----------------------------------------------------------------------

    def _write_card(self, card: CardId, kinds: set[InjectionKind]) -> None:
        if InjectionKind.DROPPED_LINE in kinds:
            log.info("simulated reader %s: line for card %s dropped", self.serial_number, card)
            return
        line = self.format.line(self.format.card_body(card))
        if InjectionKind.GARBLED_LINE in kinds:
            line = _damaged(line)
        if InjectionKind.BAD_CHECKSUM in kinds:
            line = _wrong_checksum(line, self.format.checksum)
        self._emit(line)
        if InjectionKind.DOUBLE_READ in kinds:
            self._emit(line)

    def _write(self, body: str) -> None:
        self._emit(self.format.line(body))

    def _emit(self, line: bytes) -> None:
        self._output.append(line)
        self.counts.lines += 1
        self._notify()

    def _notify(self) -> None:
        for listener in list(self._listeners):
            listener()
