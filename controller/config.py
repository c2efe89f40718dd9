"""The table configuration: one TOML file, every key optional, every value checked.

The game options (game, decks, device kind, burns, cut card, demonstration
rounds, commission, paytable) are what a regulator approves (Macau Art. 18),
so they are hashed into a fingerprint that is recorded with every shoe and
must not change while a shoe is open. A key that is absent takes its
default; a key that is unknown is an error, because a misspelt option
silently falling back to its default would deal a game nobody approved.
docs/configuration.md describes every key.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import time
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar

from cardshoe.controller.canonical import canonical_json
from cardshoe.controller.errors import UserError
from cardshoe.controller.rules.cards import Card
from cardshoe.controller.rules.errors import RulesError
from cardshoe.controller.rules.games import (
    GAME_NAMES,
    Game,
    check_decks,
    commission_names,
    drawing_method,
    get_game,
    paytable_named,
    paytable_names,
    tie_options,
)
from cardshoe.controller.rules.settlement import Rounding
from cardshoe.controller.rules.ties import TieOption
from cardshoe.drivers.transports.registry import configurable_schemes

FINGERPRINT_FORMAT = "cardshoe-table-options/5"
"""Hashed with the options, so a change in what the fingerprint covers changes every fingerprint."""

MAX_CARDS_PER_ROUND = 6
"""Two hands of at most three cards: the most one round can take from the shoe."""


class ConfigError(UserError):
    """A configuration value that cannot be used; the message names the key."""


class DeviceMode(StrEnum):
    SHOE = "shoe"
    """A manual dealing shoe: cut card and start-of-shoe burn (Macau Art. 2.1)."""
    AUTO = "auto"
    """An automatic shuffler-dealer: deals straight after loading (Macau Art. 2.3)."""


class BurnPolicy(StrEnum):
    """How many cards the start-of-shoe burn takes (Macau Art. 2.1, amended 2011)."""

    DECKS = "decks"
    FIRST_CARD = "first-card"
    FIXED = "fixed"


class CutCardPolicy(StrEnum):
    """What the cut card means when it comes out (Macau Art. 3.1)."""

    LAST_ROUND = "last-round"
    ONE_MORE_ROUND = "one-more-round"


CUT_CARD_DEEPEST = 26
"""The deepest cut card: Art. 2.1 puts it "above about the last 12 cards" (约十二张) and the
2011 amendment keeps that; neither text gives a tolerance, so the depth may be up to half a
deck, over twice the text's number, and no deeper (docs/configuration.md)."""
CUT_CARD_TOLERANCE_RANGE = (0, CUT_CARD_DEEPEST)
FIXED_BURN_RANGE = (1, 8)
ROUND_BURN_RANGE = (0, 8)
RELIEF_BURN_RANGE = (0, 8)
DEMO_ROUNDS_RANGE = (0, 3)
MACHINE_ROUNDS_RANGE = (0, 10_000)
DEFAULT_MACHINE_ROUNDS = 80
"""An automatic machine's shoe never runs out (Art. 7.2): the house ends it after this many
rounds (Art. 3.2), as many as eight decks give from a manual shoe (shoectl demo's choice)."""
MACHINE_END_AT_PATTERN = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")
MANUAL_SHOE_KEYS = ("burn", "burn_fixed", "cut_card_depth", "cut_card", "cut_card_tolerance")
"""The [shoe] keys of a manual shoe's cut card and burn (Arts. 2.1, 3.1)."""
MACHINE_KEYS = ("machine_rounds", "machine_end_at", "machine_end_at_relief")
"""The [shoe] keys of the house's ending of an automatic machine's shoe (Art. 3.2)."""
SAFE_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
"""Table and shoe ids: safe in file names, log lines and journal queries."""
SAFE_NAME_RULE = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
_SHA256_PATTERN = re.compile(r"^[0-9a-f]{64}$")


def _check_range(key: str, value: int, low: int, high: int, why: str = "") -> None:
    if not low <= value <= high:
        reason = f" ({why})" if why else ""
        raise ConfigError(f"{key} = {value} is out of range: use {low}-{high}{reason}")


@dataclass(frozen=True)
class GameConfig:
    """The [game] section: what is dealt and how it is paid."""

    SECTION: ClassVar[str] = "game"

    name: str = "punto-banco"
    """A game of the rules engine: punto-banco, seven-up, macau-1, macau-2."""
    decks: int = 8
    commission: str | None = None
    """A commission option of the game in the rules engine; None means its default."""
    paytable: str | None = None
    """The name of the game's paytable in the rules engine; None means its default."""
    demo_rounds: int = 0
    """Demonstration rounds dealt, never settled, when a shoe starts (Macau Art. 2.2)."""
    round_burn: int = 0
    """Cards burned at the start of every round; 0 turns it off (Macau Art. 8)."""
    relief_burn: int = 0
    """Cards burned before the next deal when a dealer relieves another in a shoe (a house
    policy: docs/procedure.md, "Relief burn"); 0 turns it off."""
    tie_bets: str | None = None
    """What happens to the Banker and Player bets after a tie (Macau Art. 11, rules/ties.py):
    cancel, stand or change, as the game allows; None means its default."""
    commission_rounding: str = str(Rounding.FLOOR)
    """How a win's winnings are rounded to the minor unit: floor (the house keeps the
    fraction) or half-up. The texts do not say, so it is an approved option (Art. 18)."""

    def __post_init__(self) -> None:
        if self.name not in GAME_NAMES:
            raise ConfigError(
                f"game.name = {_show(self.name)} is not a game: use {_one_of(GAME_NAMES)}"
            )
        try:
            check_decks(self.name, self.decks, "game.decks")
        except RulesError as exc:
            raise ConfigError(str(exc)) from None
        _check_range("game.demo_rounds", self.demo_rounds, *DEMO_ROUNDS_RANGE, "Macau Art. 2.2")
        _check_range("game.round_burn", self.round_burn, *ROUND_BURN_RANGE)
        _check_range("game.relief_burn", self.relief_burn, *RELIEF_BURN_RANGE)
        _check_option("game.commission", self.commission, commission_names(self.name), self.name)
        _check_option("game.paytable", self.paytable, self._paytable_names, self.name)
        _check_option("game.tie_bets", self.tie_bets, tie_options(self.name), self.name)
        _check_option(
            "game.commission_rounding",
            self.commission_rounding,
            tuple(str(rounding) for rounding in Rounding),
            self.name,
        )

    @property
    def _paytable_names(self) -> tuple[str, ...]:
        """The paytables the rules engine publishes for this game."""
        return paytable_names(self.name)

    @property
    def effective_commission(self) -> str:
        return self.commission or commission_names(self.name)[0]

    @property
    def effective_tie_bets(self) -> TieOption:
        return TieOption(self.tie_bets or tie_options(self.name)[0])

    @property
    def effective_paytable(self) -> str:
        return self.paytable or self._paytable_names[0]

    def build_game(self) -> Game:
        """The rules engine's game with this table's commission option and paytable."""
        return get_game(
            self.name,
            commission=self.effective_commission,
            paytable=paytable_named(self.name, self.effective_paytable),
            rounding=Rounding(self.commission_rounding),
        )


def _check_option(key: str, value: str | None, allowed: tuple[str, ...], game: str) -> None:
    if value is not None and value not in allowed:
        raise ConfigError(
            f"{key} = {_show(value)} is not an option of {game}: use {_one_of(allowed)}"
        )


@dataclass(frozen=True)
class ShoeProcedure:
    """The [shoe] section: cut card and burns of a manual shoe (Macau Arts. 2.1, 3.1), and
    when the house ends an automatic machine's shoe, which never runs out (Art. 3.2)."""

    SECTION: ClassVar[str] = "shoe"

    burn: BurnPolicy = BurnPolicy.DECKS
    burn_fixed: int | None = None
    """How many cards the house burns; set exactly when burn is "fixed"."""
    cut_card_depth: int = 12
    """Cards between the cut card and the end of the shoe (Macau: about the last 12)."""
    cut_card: CutCardPolicy = CutCardPolicy.LAST_ROUND
    cut_card_tolerance: int = 6
    """How far from cut_card_depth the cut card may come out before it is an alarm."""
    machine_rounds: int = DEFAULT_MACHINE_ROUNDS
    """The automatic machine's shoe ends after this many rounds; 0 turns it off."""
    machine_end_at: tuple[str, ...] = ()
    """Times of day ("HH:MM", the table PC's local time) at which the automatic machine's
    shoe ends after the round under way."""
    machine_end_at_relief: bool = False
    """A dealer relieving another ends the automatic machine's shoe after the round under way."""

    def __post_init__(self) -> None:
        _check_range("shoe.cut_card_tolerance", self.cut_card_tolerance, *CUT_CARD_TOLERANCE_RANGE)
        _check_range("shoe.machine_rounds", self.machine_rounds, *MACHINE_ROUNDS_RANGE, "0: off")
        for when in self.machine_end_at:
            if not MACHINE_END_AT_PATTERN.match(when):
                raise ConfigError(
                    f"shoe.machine_end_at has {_show(when)}: write each time of day as "
                    'HH:MM on the 24-hour clock, such as "06:00" or "22:30"'
                )
        if self.burn == BurnPolicy.FIXED:
            if self.burn_fixed is None:
                raise ConfigError('shoe.burn = "fixed" needs shoe.burn_fixed, a count from 1 to 8')
            _check_range("shoe.burn_fixed", self.burn_fixed, *FIXED_BURN_RANGE, "Macau 2011")
        elif self.burn_fixed is not None:
            raise ConfigError(
                f'shoe.burn_fixed is used only with shoe.burn = "fixed", not "{self.burn}": '
                "remove it or set burn to fixed"
            )

    def start_burn_count(self, decks: int, first_card: Card) -> int:
        """Cards burned when the shoe starts, the first card drawn included.

        Every policy burns the first card; with "first-card" its face value (A = 1,
        2-9 as printed, 10/J/Q/K = 10; Art. 2.1's 牌面点数, not Art. 5's points, see
        docs/procedure.md) is how many more cards follow it.
        """
        if self.burn == BurnPolicy.FIRST_CARD:
            return 1 + min(first_card.rank, 10)
        if self.burn == BurnPolicy.FIXED and self.burn_fixed is not None:
            return self.burn_fixed
        return decks

    @property
    def machine_end_times(self) -> tuple[time, ...]:
        """machine_end_at as times of day, earliest first."""
        return tuple(sorted({time.fromisoformat(when) for when in self.machine_end_at}))

    @property
    def rounds_after_cut_card(self) -> int:
        """Rounds that may still start, or be under way, once the cut card shows."""
        return 2 if self.cut_card == CutCardPolicy.ONE_MORE_ROUND else 1


@dataclass(frozen=True)
class DeviceConfig:
    """The [device] section: which device deals and which firmware it may run."""

    SECTION: ClassVar[str] = "device"

    kind: DeviceMode = DeviceMode.SHOE
    url: str | None = None
    """A device node (/dev/cardshoe/shoe0) or a pyserial URL (socket://, sim://, rfc2217://)."""
    usb_vid: int | None = None
    usb_pid: int | None = None
    usb_serial: str | None = None
    allowed_firmware_hashes: tuple[str, ...] = ()
    """SHA-256 of every firmware image allowed; empty means not enforced."""
    maker: str | None = None
    """The device's maker as its approval names it: the wire does not carry it, and each
    pack's receipt must (New Jersey 13:69E-1.18A, Washington WAC 230-16-158)."""
    house_public_key: Path | None = None
    """The house's firmware signing public key (PEM): `shoectl pair` gives it to the device,
    and a firmware update is sent only when the house key signed it."""

    def __post_init__(self) -> None:
        if self.url is not None:
            _check_url(self.url)
            if self._usb_given:
                raise ConfigError(
                    "device.url and device.usb_vid/usb_pid/usb_serial both given: "
                    "choose the device by url or by USB ids, not both"
                )
        for key, number in (("device.usb_vid", self.usb_vid), ("device.usb_pid", self.usb_pid)):
            if number is not None and not 0 <= number <= 0xFFFF:
                raise ConfigError(f"{key} = {number} is out of range: use 0x0000-0xFFFF")
        if self.usb_serial == "":
            raise ConfigError("device.usb_serial is empty: give the serial number or remove it")
        for digest in self.allowed_firmware_hashes:
            if not _SHA256_PATTERN.match(digest):
                raise ConfigError(
                    f"device.allowed_firmware_hashes has {digest!r}: "
                    "each entry is a SHA-256 written as 64 hex digits"
                )

    @property
    def _usb_given(self) -> bool:
        return any(value is not None for value in (self.usb_vid, self.usb_pid, self.usb_serial))

    @property
    def firmware_check_enforced(self) -> bool:
        return bool(self.allowed_firmware_hashes)

    def firmware_approved(self, firmware_hash: bytes) -> bool:
        """Whether a device reporting this SHA-256 may deal here (always, when not enforced)."""
        return (
            not self.firmware_check_enforced or firmware_hash.hex() in self.allowed_firmware_hashes
        )


def _check_url(url: str) -> None:
    if url.startswith("/"):
        return
    scheme, separator, rest = url.partition("://")
    schemes = configurable_schemes()
    if not separator or scheme not in schemes or not rest:
        raise ConfigError(
            f"device.url = {url!r} is not usable: give a device path such as "
            "/dev/cardshoe/shoe0 or a URL starting with "
            + ", ".join(f"{name}://" for name in schemes)
        )


@dataclass(frozen=True)
class ServiceConfig:
    """The [service] section: where the running controller keeps its files."""

    SECTION: ClassVar[str] = "service"

    journal_path: Path = Path("/var/lib/cardshoe/journal.sqlite")
    control_socket: Path = Path("/run/cardshoe/control.sock")
    key_dir: Path = Path("/etc/cardshoe/keys")
    """The devices' pairing keys, one file <serial>.key each (controller/service/pairing.py)."""
    journal_min_free_mb: int = 64
    """The table holds (journal_space_low) while less space than this is free for the
    journal, so it stops before the disk is full rather than when a commit fails."""

    def __post_init__(self) -> None:
        _check_range(
            "service.journal_min_free_mb", self.journal_min_free_mb, 0, 1_000_000, "megabytes"
        )

    @property
    def journal_min_free_bytes(self) -> int:
        return self.journal_min_free_mb * 1024 * 1024


@dataclass(frozen=True)
class SurveillanceConfig:
    """The [surveillance] section: the live game-protection alarms (docs/game-protection.md).

    Not a game option: it changes what surveillance hears, never the game dealt.
    """

    SECTION: ClassVar[str] = "surveillance"

    advantage_threshold: float = 0.0
    """The player's expected return per unit staked above which a bet raises the advantage
    alarm: 0 alarms as soon as any bet of the remaining shoe favours the player."""

    def __post_init__(self) -> None:
        if not -1 < self.advantage_threshold < 1:
            raise ConfigError(
                f"surveillance.advantage_threshold = {self.advantage_threshold} is out of range: "
                "use a share of the stake between -1 and 1, such as 0 or 0.005"
            )


@dataclass(frozen=True)
class RolesConfig:
    """The [roles] section: who may command the table, by user name or @group.

    With no [roles] section every user who can open the control socket (its
    mode 0660 lets the service's group in) may give every command, as before
    roles existed; with one, a user it does not name may only watch.
    """

    SECTION: ClassVar[str] = "roles"

    dealer: tuple[str, ...] = ()
    supervisor: tuple[str, ...] = ()
    technician: tuple[str, ...] = ()
    console: tuple[str, ...] = ()
    """The table console's own user (shoectl console): a watcher that commands only on behalf
    of a person signed in at it with a PIN (docs/console.md)."""
    pins_file: Path | None = None
    """The people's salted PIN hashes (shoectl console pin set); None: nobody signs in."""
    console_idle_s: float = 300.0
    """A person signed in at the console who presses nothing this long is signed out."""

    def __post_init__(self) -> None:
        if not 10 <= self.console_idle_s <= 86_400:
            raise ConfigError(
                f"roles.console_idle_s = {self.console_idle_s} is out of range: use 10-86400 "
                "(seconds)"
            )

    @property
    def configured(self) -> bool:
        return bool(self.dealer or self.supervisor or self.technician or self.console)


class ConsoleLanguage(StrEnum):
    """The languages the table's console speaks (controller/locale, gettext catalogs)."""

    EN = "en"
    ZH_HANT = "zh-Hant"
    ZH_HANS = "zh-Hans"


@dataclass(frozen=True)
class ConsoleConfig:
    """The [console] section: how the table's console (shoectl console, /console) speaks."""

    SECTION: ClassVar[str] = "console"

    language: ConsoleLanguage = ConsoleLanguage.EN


@dataclass(frozen=True)
class UplinkConfig:
    """The [uplink] section: where shoectl uplink sends the journal (docs/floor.md)."""

    SECTION: ClassVar[str] = "uplink"

    broker: str | None = None
    """mqtt://HOST:PORT, or mqtts://HOST:PORT with ca, cert and key; None: no uplink."""
    site: str = "site-1"
    """The casino or floor, the topic level above the table id."""
    state_dir: Path = Path("/var/lib/cardshoe-uplink")
    ca: Path | None = None
    cert: Path | None = None
    key: Path | None = None
    resend_after_s: float = 30.0
    """Resend from the floor's anchor when it stays behind the broker's acks this long."""
    prune_after_shoe: bool = False
    """Prune the shoes the floor has verified each time a shoe ends (shoectl journal prune)."""
    prune_keep_days: int = 7
    """Never prune a shoe that ended less than this many days ago."""

    def relative_to(self, base_dir: Path) -> UplinkConfig:
        """The paths of a configuration file taken from the file's folder."""
        return replace(
            self,
            state_dir=base_dir / self.state_dir,
            ca=None if self.ca is None else base_dir / self.ca,
            cert=None if self.cert is None else base_dir / self.cert,
            key=None if self.key is None else base_dir / self.key,
        )

    def __post_init__(self) -> None:
        if self.resend_after_s <= 0:
            raise ConfigError(f"uplink.resend_after_s = {self.resend_after_s} must be above 0")
        if self.prune_keep_days < 0:
            raise ConfigError(f"uplink.prune_keep_days = {self.prune_keep_days} is negative")
        if not SAFE_NAME_PATTERN.match(self.site):
            raise ConfigError(f"uplink.site = {self.site!r} is not usable: use {SAFE_NAME_RULE}")


@dataclass(frozen=True)
class TableConfig:
    """One table's whole configuration; TableConfig() is a valid Punto Banco table."""

    table_id: str = "table-1"
    game: GameConfig = field(default_factory=GameConfig)
    shoe: ShoeProcedure = field(default_factory=ShoeProcedure)
    """The cut card and burns with a manual shoe; the house's endings with an automatic machine,
    which neither cuts nor burns."""
    device: DeviceConfig = field(default_factory=DeviceConfig)
    service: ServiceConfig = field(default_factory=ServiceConfig)
    roles: RolesConfig = field(default_factory=RolesConfig)
    console: ConsoleConfig = field(default_factory=ConsoleConfig)
    uplink: UplinkConfig = field(default_factory=UplinkConfig)
    surveillance: SurveillanceConfig = field(default_factory=SurveillanceConfig)

    def __post_init__(self) -> None:
        if not SAFE_NAME_PATTERN.match(self.table_id):
            raise ConfigError(f"table_id = {self.table_id!r} is not usable: use {SAFE_NAME_RULE}")
        if self.uses_cut_card_and_burn:
            self._check_cut_card_depth()

    def _check_cut_card_depth(self) -> None:
        per_round = MAX_CARDS_PER_ROUND + self.game.round_burn + self.game.relief_burn
        shallowest = self.shoe.rounds_after_cut_card * per_round
        deepest = min(CUT_CARD_DEEPEST, 52 * self.game.decks // 2)
        why = (
            f"{self.shoe.cut_card} leaves {self.shoe.rounds_after_cut_card} round(s) of up to "
            f"{per_round} cards after the cut card, and Art. 2.1 puts the cut card above about "
            f"the last 12 cards: at most {deepest}"
        )
        _check_range("shoe.cut_card_depth", self.shoe.cut_card_depth, shallowest, deepest, why)

    @property
    def uses_cut_card_and_burn(self) -> bool:
        """A manual shoe is cut and burned; an automatic machine deals at once (Art. 2.3)."""
        return self.device.kind == DeviceMode.SHOE

    def fingerprint_options(self) -> dict[str, Any]:
        """The options a regulator approves (Macau Art. 18), as hashed into the fingerprint.

        Every option Art. 18 lists: Art. 2 (burn, demonstration rounds), 3 (the
        last round at the cut card), 7 (device mode), 9 (drawing method), 11
        (tie option), 16 (payouts) and 17 (commission), with the game and its
        decks, and the house's burns (Art. 8's round burn, the relief burn): a
        burn changes which cards are dealt; with an automatic machine, when the
        house ends its shoe (Art. 3.2), since that is what makes it a shoe.
        Identity, device address, firmware list, file paths and alarm thresholds
        are left out: they do not change the game, and moving a table to another
        port must not look like a new set of rules.
        """
        options: dict[str, Any] = {
            "format": FINGERPRINT_FORMAT,
            "game": self.game.name,
            "decks": self.game.decks,
            "drawing": drawing_method(self.game.name),
            "tie_bets": str(self.game.effective_tie_bets),
            "commission": self.game.effective_commission,
            "commission_rounding": self.game.commission_rounding,
            "paytable": self.game.effective_paytable,
            "demo_rounds": self.game.demo_rounds,
            "round_burn": self.game.round_burn,
            "relief_burn": self.game.relief_burn,
            "device_kind": str(self.device.kind),
        }
        if self.uses_cut_card_and_burn:
            options |= {
                "burn": str(self.shoe.burn),
                "burn_fixed": self.shoe.burn_fixed,
                "cut_card_depth": self.shoe.cut_card_depth,
                "cut_card": str(self.shoe.cut_card),
            }
        else:
            options |= {
                "machine_rounds": self.shoe.machine_rounds,
                "machine_end_at": [str(when)[:5] for when in self.shoe.machine_end_times],
                "machine_end_at_relief": self.shoe.machine_end_at_relief,
            }
        return options

    @property
    def fingerprint(self) -> str:
        """SHA-256 (hex) of the canonical JSON of fingerprint_options()."""
        canonical = canonical_json(self.fingerprint_options())
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def ensure_unchanged_since(self, recorded_fingerprint: str, shoe_id: str) -> None:
        """Refuse to go on with an open shoe under other options than it started with."""
        if recorded_fingerprint != self.fingerprint:
            raise ConfigError(
                f"the game options changed while shoe {shoe_id} is open "
                f"(started with {recorded_fingerprint[:12]}, now {self.fingerprint[:12]}): "
                "restore the configuration the shoe started with, then finish or void the shoe"
            )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, base_dir: Path | None = None) -> TableConfig:
        """Build a configuration from parsed TOML; relative paths are taken from base_dir."""
        sections = (
            GameConfig,
            ShoeProcedure,
            DeviceConfig,
            ServiceConfig,
            RolesConfig,
            ConsoleConfig,
            UplinkConfig,
            SurveillanceConfig,
        )
        _reject_unknown_keys("", data, ["table_id", *(section.SECTION for section in sections)])
        table_id = _read(data, "table_id", str, "table_id", 'a name such as "T12"')
        _check_shoe_keys_fit_the_device(
            _section(data, DeviceConfig.SECTION), _section(data, ShoeProcedure.SECTION)
        )
        arguments: dict[str, Any] = {
            section.SECTION: _build_section(section, _section(data, section.SECTION))
            for section in sections
        }
        service: ServiceConfig = arguments["service"]
        if base_dir is not None:
            arguments["service"] = replace(
                service,
                journal_path=base_dir / service.journal_path,
                control_socket=base_dir / service.control_socket,
                key_dir=base_dir / service.key_dir,
            )
            arguments["uplink"] = arguments["uplink"].relative_to(base_dir)
            roles: RolesConfig = arguments["roles"]
            if roles.pins_file is not None:
                arguments["roles"] = replace(roles, pins_file=base_dir / roles.pins_file)
            device: DeviceConfig = arguments["device"]
            if device.house_public_key is not None:
                arguments["device"] = replace(
                    device, house_public_key=base_dir / device.house_public_key
                )
        if table_id is not None:
            arguments["table_id"] = table_id
        return cls(**arguments)


def _check_shoe_keys_fit_the_device(
    device_data: Mapping[str, Any], shoe_data: Mapping[str, Any]
) -> None:
    """A manual shoe's keys with an automatic machine, or the machine's with a shoe, are
    refused: they would be silently without effect."""
    automatic = device_data.get("kind") == DeviceMode.AUTO
    for key in shoe_data:
        if automatic and key in MANUAL_SHOE_KEYS:
            raise ConfigError(
                f'shoe.{key} applies only to device.kind = "shoe" (the [shoe] section of an '
                "automatic shuffler-dealer takes only " + ", ".join(MACHINE_KEYS) + "): it "
                "deals without cut card or burn (Macau Art. 2.3); remove it"
            )
        if not automatic and key in MACHINE_KEYS:
            raise ConfigError(
                f'shoe.{key} applies only to device.kind = "auto": a manual shoe ends at its '
                "cut card (Macau Art. 3.1); remove it, or set device.kind"
            )


def load_config(path: Path | str) -> TableConfig:
    """Read a table configuration file; any problem is one line naming the file and key."""
    path = Path(path)
    try:
        # Windows editors may start a UTF-8 file with a byte order mark, which TOML does not
        # allow; it says nothing, so it is dropped rather than refused.
        data = tomllib.loads(path.read_bytes().decode("utf-8").removeprefix("\ufeff"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a folder, not a configuration file") from None
    except PermissionError:
        raise ConfigError(f"{path}: not permitted to read it") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not valid TOML: the file is not UTF-8 text") from None
    except OSError as exc:  # a name too long for the file system, a device, a read error
        raise ConfigError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    try:
        return TableConfig.from_mapping(data, base_dir=path.parent.absolute())
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


# Reading TOML values: the type and a description of each key, as a table,
# so every key is checked the same way and named in the same words.

_FIELD_READERS: dict[tuple[str, str], tuple[type, str]] = {
    ("game", "name"): (str, "a game name"),
    ("game", "decks"): (int, "a whole number of decks"),
    ("game", "commission"): (str, "a commission option name"),
    ("game", "paytable"): (str, "a paytable name"),
    ("game", "demo_rounds"): (int, "a whole number 0-3"),
    ("game", "round_burn"): (int, "a whole number of cards"),
    ("game", "relief_burn"): (int, "a whole number of cards"),
    ("game", "tie_bets"): (str, "a tie option name"),
    ("game", "commission_rounding"): (str, "floor or half-up"),
    ("shoe", "burn"): (BurnPolicy, ""),
    ("shoe", "burn_fixed"): (int, "a whole number 1-8"),
    ("shoe", "cut_card_depth"): (int, "a whole number of cards"),
    ("shoe", "cut_card"): (CutCardPolicy, ""),
    ("shoe", "cut_card_tolerance"): (int, "a whole number of cards"),
    ("shoe", "machine_rounds"): (int, "a whole number of rounds"),
    ("shoe", "machine_end_at"): (tuple, 'a list of times of day such as ["06:00", "22:30"]'),
    ("shoe", "machine_end_at_relief"): (bool, "true or false"),
    ("device", "kind"): (DeviceMode, ""),
    ("device", "url"): (str, "a device path or URL"),
    ("device", "usb_vid"): (int, "a number such as 0x1209"),
    ("device", "usb_pid"): (int, "a number such as 0x0001"),
    ("device", "usb_serial"): (str, "the serial number text"),
    ("device", "allowed_firmware_hashes"): (tuple, "a list of SHA-256 hex strings"),
    ("device", "maker"): (str, "the maker's name"),
    ("device", "house_public_key"): (Path, "a file path"),
    ("service", "journal_path"): (Path, "a file path"),
    ("service", "control_socket"): (Path, "a file path"),
    ("service", "key_dir"): (Path, "a folder path"),
    ("service", "journal_min_free_mb"): (int, "a whole number of megabytes"),
    ("roles", "dealer"): (tuple, 'a list of user names and "@group"s'),
    ("roles", "supervisor"): (tuple, 'a list of user names and "@group"s'),
    ("roles", "technician"): (tuple, 'a list of user names and "@group"s'),
    ("roles", "console"): (tuple, 'a list of user names and "@group"s'),
    ("roles", "pins_file"): (Path, "a file path"),
    ("roles", "console_idle_s"): (float, "a number of seconds"),
    ("console", "language"): (ConsoleLanguage, ""),
    ("uplink", "broker"): (str, "a broker URL such as mqtts://floor.example:8883"),
    ("uplink", "site"): (str, "a site name"),
    ("uplink", "state_dir"): (Path, "a folder path"),
    ("uplink", "ca"): (Path, "a file path"),
    ("uplink", "cert"): (Path, "a file path"),
    ("uplink", "key"): (Path, "a file path"),
    ("uplink", "resend_after_s"): (float, "a number of seconds"),
    ("uplink", "prune_after_shoe"): (bool, "true or false"),
    ("uplink", "prune_keep_days"): (int, "a whole number of days"),
    ("surveillance", "advantage_threshold"): (float, "a share of the stake such as 0.005"),
}


def _section(data: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{name} must be a [{name}] section, not a single value")
    return value


def _build_section(section: Any, data: Mapping[str, Any]) -> Any:
    names = [item.name for item in fields(section)]
    _reject_unknown_keys(section.SECTION + ".", data, names)
    values = {}
    for name in names:
        kind, description = _FIELD_READERS[(section.SECTION, name)]
        value = _read(data, name, kind, f"{section.SECTION}.{name}", description)
        if value is not None:
            values[name] = value
    return section(**values)


def _reject_unknown_keys(prefix: str, data: Mapping[str, Any], known: list[str]) -> None:
    for key in data:
        if key not in known:
            shown = key if key.isprintable() else json.dumps(key)  # a quoted TOML key may hold \n
            raise ConfigError(f"unknown key {prefix}{shown}: the keys here are {', '.join(known)}")


def _read(data: Mapping[str, Any], name: str, kind: Any, key: str, description: str) -> Any:
    """The value of one key converted to its field type, or None when the key is absent."""
    if name not in data:
        return None
    value = data[name]
    if issubclass(kind, StrEnum):
        allowed = [member.value for member in kind]
        if value not in allowed:
            raise ConfigError(f"{key} = {_show(value)} is not allowed: use {_one_of(allowed)}")
        return kind(value)
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ConfigError(f"{key} = {_show(value)} is not {description}")
    if kind is float and (isinstance(value, bool) or not isinstance(value, int | float)):
        raise ConfigError(f"{key} = {_show(value)} is not {description}")
    if kind in (str, Path) and not isinstance(value, str):
        raise ConfigError(f"{key} = {_show(value)} is not {description}")
    if kind is bool and not isinstance(value, bool):
        raise ConfigError(f"{key} = {_show(value)} is not {description}")
    if kind is tuple:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{key} = {_show(value)} is not {description}")
        return tuple(item.lower() for item in value)
    return kind(value)


def _show(value: Any) -> str:
    """A value as TOML would spell it, on one line: control characters escaped, and any other
    character (a game name in Chinese) as typed."""
    return (
        json.dumps(value, default=str, ensure_ascii=False)
        if isinstance(value, str | int | float | list)
        else repr(value)
    )


def _one_of(allowed: list[str] | tuple[str, ...]) -> str:
    return " | ".join(f'"{item}"' for item in allowed)
