"""One table's whole configuration: the sections together, its fingerprint, and the file.

Separate from the sections because only the whole table knows what crosses them (the cut
card's depth against the game's burns, the [shoe] keys against the device kind) and what the
regulator's fingerprint covers.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cardshoe.controller.canonical import canonical_json
from cardshoe.controller.config.checks import (
    ConfigError,
    check_range,
)
from cardshoe.controller.config.device import (
    DeviceConfig,
    DeviceMode,
    split_protocol_table,
    with_protocol_options,
)
from cardshoe.controller.config.game import GameConfig
from cardshoe.controller.config.operation import (
    ConsoleConfig,
    RolesConfig,
    ServiceConfig,
    SurveillanceConfig,
    UplinkConfig,
)
from cardshoe.controller.config.reading import (
    build_section,
    read_key,
    reject_unknown_keys,
    section_of,
)
from cardshoe.controller.config.shoe import (
    CUT_CARD_DEEPEST,
    MACHINE_KEYS,
    MANUAL_SHOE_KEYS,
    ShoeProcedure,
)
from cardshoe.controller.rules.games import (
    drawing_method,
)
from cardshoe.controller.safe_names import SAFE_NAME_PATTERN, SAFE_NAME_RULE

FINGERPRINT_FORMAT = "cardshoe-table-options/5"
"""Hashed with the options, so a change in what the fingerprint covers changes every fingerprint."""

MAX_CARDS_PER_ROUND = 6
"""Two hands of at most three cards: the most one round can take from the shoe."""


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
        check_range("shoe.cut_card_depth", self.shoe.cut_card_depth, shallowest, deepest, why)

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
        reject_unknown_keys("", data, ["table_id", *(section.SECTION for section in sections)])
        table_id = read_key(data, "table_id", str, "table_id", 'a name such as "T12"')
        _check_shoe_keys_fit_the_device(
            section_of(data, DeviceConfig.SECTION), section_of(data, ShoeProcedure.SECTION)
        )
        device_data, protocol_table = split_protocol_table(section_of(data, DeviceConfig.SECTION))
        arguments: dict[str, Any] = {
            section.SECTION: build_section(
                section,
                device_data if section is DeviceConfig else section_of(data, section.SECTION),
            )
            for section in sections
        }
        arguments["device"] = with_protocol_options(
            arguments["device"], protocol_table, base_dir or Path.cwd()
        )
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
