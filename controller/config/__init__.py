"""The table configuration: one TOML file, every key optional, every value checked.

The game options (game, decks, device kind, burns, cut card, demonstration
rounds, commission, paytable) are what a regulator approves (Macau Art. 18),
so they are hashed into a fingerprint that is recorded with every shoe and
must not change while a shoe is open. A key that is absent takes its
default; a key that is unknown is an error, because a misspelt option
silently falling back to its default would deal a game nobody approved.
docs/configuration.md describes every key.

This package is the configuration's public entry point: the names below are imported from
here. Each section lives in its own module (game, shoe, device, operation), the whole table in
table.py, and reading TOML values in reading.py.
"""

from cardshoe.controller.config.checks import ConfigError
from cardshoe.controller.config.device import DeviceConfig, DeviceMode
from cardshoe.controller.config.game import GameConfig
from cardshoe.controller.config.operation import (
    ConsoleConfig,
    ConsoleLanguage,
    RolesConfig,
    ServiceConfig,
    SurveillanceConfig,
    UplinkConfig,
)
from cardshoe.controller.config.shoe import (
    DEFAULT_MACHINE_ROUNDS,
    BurnPolicy,
    CutCardPolicy,
    ShoeProcedure,
)
from cardshoe.controller.config.table import TableConfig, load_config

__all__ = [
    "DEFAULT_MACHINE_ROUNDS",
    "BurnPolicy",
    "ConfigError",
    "ConsoleConfig",
    "ConsoleLanguage",
    "CutCardPolicy",
    "DeviceConfig",
    "DeviceMode",
    "GameConfig",
    "RolesConfig",
    "ServiceConfig",
    "ShoeProcedure",
    "SurveillanceConfig",
    "TableConfig",
    "UplinkConfig",
    "load_config",
]
