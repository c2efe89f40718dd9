"""Finding the running service's control socket from a technician's command."""

from __future__ import annotations

from pathlib import Path

from cardshoe.controller.cli.run_cmd import DEFAULT_CONFIG


def service_socket(socket_path: Path | None, config_path: Path | None) -> Path:
    """--socket, else the --config file's service.control_socket, else the installed table's.

    Without --config, the installed configuration is read if it exists; with
    none installed, the default socket path is used.
    """
    from cardshoe.controller.config import ServiceConfig, load_config

    if socket_path is not None:
        return socket_path
    if config_path is None and not DEFAULT_CONFIG.exists():
        return ServiceConfig().control_socket
    return load_config(config_path or DEFAULT_CONFIG).service.control_socket
