"""shoectl authenticate: prove which cardshoe software is installed, for a regulator's seed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from cardshoe.controller.cli.options import CONFIG_OPTION, SOCKET_OPTION
from cardshoe.controller.errors import UserError
from cardshoe.controller.service import software_identity


@click.command()
@click.option("--seed", default=None, help="The regulator's fresh seed, as hex digits.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--manifest",
    "print_manifest",
    is_flag=True,
    help="Print the manifest's lines (PATH, NUL, SHA256HEX, newline) instead of a digest.",
)
@click.option(
    "--service",
    "ask_service",
    is_flag=True,
    help="Ask the running `shoectl run` (a technician's), which journals the answer.",
)
@SOCKET_OPTION
@CONFIG_OPTION
def authenticate(
    seed: str | None,
    as_json: bool,
    print_manifest: bool,
    ask_service: bool,
    socket_path: Path | None,
    config_path: Path | None,
) -> None:
    """Answer a seed with the HMAC-SHA256 of the installed software's manifest.

    The manifest lists every installed file of the package with its SHA-256
    (docs/security.md states the algorithm, so a lab can recompute it); the
    answer is keyed with the seed, so only the genuine files give it.
    With --service the running table answers and journals it
    (software.authenticated). Exit 2 for a seed that is not hex bytes.
    """

    if print_manifest:
        if seed is not None or ask_service:
            raise UserError("--manifest prints the file list: leave --seed and --service out")
        sys.stdout.buffer.write(software_identity.installed_manifest())
        return
    if seed is None:
        raise UserError("give the regulator's seed with --seed HEX (or --manifest for the list)")
    seed_bytes = software_identity.parse_seed(seed)
    if ask_service:
        # Late: only --service reaches the table; the local digest must answer even over a
        # damaged module (its config import would load the rules).
        from cardshoe.controller.cli.service_access import service_socket
        from cardshoe.controller.service.control_client import request

        answer = request(
            service_socket(socket_path, config_path), "authenticate", seed=seed_bytes.hex()
        )
    else:
        answer = software_identity.authenticate(seed_bytes).to_json()
    if as_json:
        click.echo(json.dumps(answer))
        return
    click.echo(
        f"cardshoe {answer['version']} ({answer['files']} files, Python {answer['python']}): "
        f"seed {answer['seed']} digest {answer['digest']}"
    )
