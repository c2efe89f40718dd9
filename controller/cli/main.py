"""The shoectl entry point: a lazily loaded command group and one-line errors."""

from __future__ import annotations

import importlib
import os
import sys

import click

from cardshoe.controller.cli.sim_scheme import register_sim_scheme
from cardshoe.controller.errors import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL_ERROR,
    EXIT_INTERRUPTED,
    UserError,
)
from cardshoe.controller.one_line import escape_line_breaks
from cardshoe.controller.rules.errors import RulesError
from cardshoe.controller.service.stop_signals import hear_stop_signals

# Command name -> (module, attribute, one-line help). Modules load only when
# their command runs, so start-up stays fast.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "rules": ("cardshoe.controller.cli.rules_cmd", "rules", "Play rounds from a given shoe order."),
    "odds": (
        "cardshoe.controller.cli.odds_cmd",
        "odds",
        "Exact odds and house edge by enumeration.",
    ),
    "analyze": (
        "cardshoe.controller.cli.analyze_cmd",
        "analyze",
        "Shuffle quality across a table's shoes (surveillance).",
    ),
    "authenticate": (
        "cardshoe.controller.cli.authenticate_cmd",
        "authenticate",
        "Prove the installed software: a keyed digest of its files.",
    ),
    "journal": (
        "cardshoe.controller.cli.journal_cmd",
        "journal",
        "Show, export, verify or prune a table's journal.",
    ),
    "roads": (
        "cardshoe.controller.cli.roads_cmd",
        "roads",
        "A shoe's scoreboard (five roads, statistics) from a journal.",
    ),
    "web": (
        "cardshoe.controller.cli.web_cmd",
        "web",
        "Serve the scoreboard page from a journal, read-only.",
    ),
    "list": ("cardshoe.controller.cli.list_cmd", "list_command", "Shoes and dealers attached."),
    "info": ("cardshoe.controller.cli.info_cmd", "info", "Identity and counters of a device."),
    "pair": ("cardshoe.controller.cli.pair_cmd", "pair", "Give a device its link pairing key."),
    "firmware": (
        "cardshoe.controller.cli.firmware_cmd",
        "firmware",
        "Sign firmware with the house key; check a signed image.",
    ),
    "sim": ("cardshoe.controller.cli.sim_cmd", "sim", "Run a simulated shoe on a pty or TCP port."),
    "demo": ("cardshoe.controller.cli.demo_cmd", "demo", "Deal a whole simulated shoe, live."),
    "run": ("cardshoe.controller.cli.run_cmd", "run", "Run the table service (systemd runs this)."),
    "status": ("cardshoe.controller.cli.status_cmd", "status", "State of the running service."),
    "control": (
        "cardshoe.controller.cli.control_cmd",
        "control",
        "Send an operator command to the running service.",
    ),
    "monitor": ("cardshoe.controller.cli.monitor_cmd", "monitor", "Events live, one line each."),
    "console": (
        "cardshoe.controller.cli.console_cmd",
        "console",
        "The table's console for the dealer; the PINs people sign in with.",
    ),
    "dump": ("cardshoe.controller.cli.dump_cmd", "dump", "Raw link frames in hex, decoded."),
    "selftest": ("cardshoe.controller.cli.selftest_cmd", "selftest", "Run a device's self-test."),
    "uplink": (
        "cardshoe.controller.cli.uplink_cmd",
        "uplink",
        "Publish the table's journal to the floor (MQTT).",
    ),
    "floor": (
        "cardshoe.controller.cli.floor_cmd",
        "floor",
        "The floor database: init-db, ingest, status, demo.",
    ),
}


# The optional extras of pyproject.toml, by the top-level module a command imports from each:
# a command whose extra is not installed says which to install instead of failing as a bug.
EXTRA_OF_MODULE: dict[str, str] = {
    "psycopg": "floor",
    "matplotlib": "analysis",
    "scipy": "analysis",
}


def missing_extra(exc: BaseException) -> str | None:
    """The line that names the extra to install when exc is the import of one of its modules
    failing, else None."""
    if not isinstance(exc, ModuleNotFoundError) or exc.name is None:
        return None
    extra = EXTRA_OF_MODULE.get(exc.name.partition(".")[0])
    if extra is None:
        return None
    return (
        f"this command needs the optional '{extra}' extra, which is not installed "
        f"(no module {exc.name}): pip install 'cardshoe[{extra}]'"
    )


class LazyGroup(click.Group):
    """A group whose subcommands are imported only when used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attribute, _ = entry
        command: click.Command = getattr(importlib.import_module(module_name), attribute)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="cardshoe", prog_name="shoectl")
def cli() -> None:
    """Controller for baccarat dealing shoes and shuffler-dealers.

    Exit codes: 0 success, 1 a check failed (self-test, journal verify),
    2 bad input or usage, 3 device absent, busy or not permitted,
    70 internal error (a bug: rerun with CARDSHOE_DEBUG=1), 130 interrupted.
    """


def _fail(message: str, exit_code: int) -> None:
    # A typed path or word may hold a line break or a terminal's control sequence: the error
    # stays one line whatever it quotes, and commands nothing.
    one_line = escape_line_breaks("\\n".join(message.splitlines()))
    click.echo("shoectl: error: " + one_line, err=True)
    sys.exit(exit_code)


def main(argv: list[str] | None = None) -> None:
    """Run shoectl; every error the user can fix ends as one line on stderr."""
    hear_stop_signals()
    register_sim_scheme()
    try:
        exit_code = cli.main(args=argv, prog_name="shoectl", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        sys.exit(0)
    except click.UsageError as exc:
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
        _fail(exc.format_message() + hint, EXIT_BAD_INPUT)
    except click.ClickException as exc:
        _fail(exc.format_message(), exc.exit_code)
    except click.Abort:
        _fail("interrupted", EXIT_INTERRUPTED)
    except UserError as exc:
        _fail(str(exc), exc.exit_code)
    except RulesError as exc:
        _fail(str(exc), EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        _fail("interrupted", EXIT_INTERRUPTED)
    except BrokenPipeError:
        sys.exit(0)
    except Exception as exc:  # the last line of defence: the user never sees a traceback
        missing = missing_extra(exc)
        if missing is not None:
            _fail(missing, EXIT_BAD_INPUT)
        if os.environ.get("CARDSHOE_DEBUG"):
            raise
        _fail(
            f"internal error ({type(exc).__name__}: {exc}): a bug in shoectl; "
            "rerun with CARDSHOE_DEBUG=1 to see the trace, and report it",
            EXIT_INTERNAL_ERROR,
        )
    sys.exit(exit_code if isinstance(exit_code, int) else 0)
