"""Finding the running service's control socket from a technician's command."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cardshoe.controller.cli.options import DEFAULT_CONFIG
from cardshoe.controller.config import ServiceConfig, load_config
from cardshoe.controller.service.pairing import KeyStore

if TYPE_CHECKING:
    from cardshoe.drivers.protocol.auth import KeyLookup


def service_socket(socket_path: Path | None, config_path: Path | None) -> Path:
    """--socket, else the --config file's service.control_socket, else the installed table's.

    Without --config, the installed configuration is read if it exists; with
    none installed, the default socket path is used.
    """

    if socket_path is not None:
        return socket_path
    if config_path is None and not DEFAULT_CONFIG.exists():
        return ServiceConfig().control_socket
    return load_config(config_path or DEFAULT_CONFIG).service.control_socket


def pairing_keys(config_path: Path | None, key_dir: Path | None) -> KeyLookup | None:
    """The key lookup for a paired device: --key-dir, else the --config's service.key_dir;
    None when neither is given (an unpaired device needs none)."""

    if key_dir is None and config_path is not None:
        key_dir = load_config(config_path).service.key_dir
    return None if key_dir is None else KeyStore(key_dir).lookup
