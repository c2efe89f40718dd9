"""The sections that run the table without changing the game it deals.

[service] (files), [surveillance] (alarms), [roles] (who commands), [console] (its language)
and [uplink] (the floor): none is in the fingerprint, so they are kept apart from the game's
options and a change here can never look like a change of approved rules.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import ClassVar

from cardshoe.controller.config.checks import (
    ConfigError,
    check_range,
)
from cardshoe.controller.safe_names import SAFE_NAME_PATTERN, SAFE_NAME_RULE


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
        check_range(
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
