"""Options several shoectl commands share, defined once so they read and behave alike."""

from __future__ import annotations

from pathlib import Path

import click

DEVICE_TIMEOUT_OPTION = click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=2.0,
    show_default=True,
    help="Seconds to wait for the device to answer.",
)
SOCKET_OPTION = click.option(
    "--socket",
    "socket_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The service's control socket (default: from --config).",
)
CONFIG_OPTION = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The table configuration naming the socket (default: /etc/cardshoe/table.toml "
    "if present, else /run/cardshoe/control.sock).",
)

KEY_DIR_OPTION = click.option(
    "--key-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Pairing keys (SERIAL.key) to authenticate a paired device with "
    "(default: the --config's service.key_dir).",
)
PAIRING_CONFIG_OPTION = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A table configuration: authenticate a paired device with the keys in its "
    "service.key_dir.",
)
DEFAULT_CONFIG = Path("/etc/cardshoe/table.toml")
"""Where udev/systemd/cardshoe.service and docs/deployment.md put the table configuration."""
TABLE_CONFIG_OPTION = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_CONFIG,
    show_default=True,
    help="The table configuration (docs/configuration.md).",
)
"""--config for the commands that act as the table itself (run, journal init)."""
