"""Bad input through the real shoectl: one line on stderr, the right exit code, no traceback.

CASES is the table: add a row for each new way to get an input wrong as
commands land. A row may write files into a fresh folder first; "{tmp}" in
its arguments names that folder.

The hypothesis campaigns below drives the same entry point in-process with
arbitrary words where a technician types a game, a deck count or cards.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardshoe.controller.cli.main import main

BAD_INPUT = 2
DEVICE_ABSENT = 3
PLAY = ("rules", "play", "--game", "punto-banco", "--cards")
ODDS = ("odds", "--game", "punto-banco", "--decks")
RUN = ("run", "--device-wait", "0", "--config", "{tmp}/table.toml")
UPLINK = ("uplink", "--journal", "/nonexistent/j.sqlite", "--state-dir", "/tmp")
SERVICE_FILES = '[service]\njournal_path = "journal.sqlite"\ncontrol_socket = "control.sock"\n'
"""Keeps the service's journal and socket in {tmp}, beside its configuration."""


@dataclass(frozen=True)
class BadInput:
    args: tuple[str, ...]
    says: str
    """A fragment of the one error line, so the message stays about the real problem."""
    exit_code: int = BAD_INPUT
    files: tuple[tuple[str, str], ...] = ()
    """(name, text) of each file to write into {tmp} before running."""
    journal: bool = False
    """Make the configured table's journal first (shoectl journal init), as installing does."""


CASES: dict[str, BadInput] = {
    "unknown command": BadInput(("deal-faster",), "No such command 'deal-faster'"),
    "unknown subcommand": BadInput(("rules", "replay"), "No such command 'replay'"),
    "unknown option": BadInput(("odds", "--fast"), "No such option '--fast'"),
    "unknown top-level option": BadInput(("--verbose",), "No such option '--verbose'"),
    "unexpected argument": BadInput((*ODDS, "8", "extra"), "unexpected extra argument"),
    "option without its value": BadInput(("odds", "--game"), "requires an argument"),
    "missing required option": BadInput(("odds", "--game", "punto-banco"), "'--decks'"),
    "line break in an option name": BadInput(("odds", "--x\ny"), "No such option"),
    "unknown game": BadInput(("odds", "--game", "mini-bac", "--decks", "8"), "mini-bac"),
    "game name with a line break": BadInput(("odds", "--game", "x\ny", "--decks", "8"), "x\\ny"),
    "decks not a number": BadInput((*ODDS, "eight"), "'eight' is not a valid integer"),
    "no decks": BadInput((*ODDS, "0"), "--decks = 0 is out of range: use 1-8"),
    "negative decks": BadInput((*ODDS, "-2"), "--decks = -2 is out of range: use 1-8"),
    "commission of another game": BadInput(
        ("odds", "--game", "seven-up", "--decks", "6", "--commission", "5pct"), "none"
    ),
    "unknown card": BadInput((*PLAY, "AS ZZ 3D"), "bad card 'ZZ'"),
    "rank eleven": BadInput((*PLAY, "11S"), "bad card '11S'"),
    "card without a suit": BadInput((*PLAY, "A"), "bad card 'A'"),
    "mandatory seven from the shoe": BadInput((*PLAY, "AS 7* 3D"), "7*"),
    "empty shoe order": BadInput((*PLAY, " , "), "--cards is empty"),
    "unknown game for rules": BadInput(
        ("rules", "play", "--game", "macau-3", "--cards", "AS"), "macau-3"
    ),
    "journal file missing": BadInput(("journal", "show", "/nonexistent/j.sqlite"), "no such"),
    "journal is a folder": BadInput(("journal", "verify", "/"), "not a journal file"),
    "journal is not a database": BadInput(("journal", "show", "/etc/hostname"), "not a cardshoe"),
    "journal path with a line break": BadInput(
        ("journal", "show", "/nonexistent/a\nb.sqlite"), "no such"
    ),
    "negative round filter": BadInput(("journal", "show", "/", "--round", "-1"), "'--round'"),
    "unknown URL scheme": BadInput(("info", "nope://x"), "unknown URL scheme 'nope'"),
    "unknown simulator profile in a URL": BadInput(
        ("info", "sim://nope"), "no simulator profile 'nope'"
    ),
    "bad simulator option": BadInput(
        ("info", "sim://cs-1?decks=abc"), "decks must be a whole number"
    ),
    "missing device path": BadInput(
        ("info", "/dev/cardshoe/no-such-shoe"), "no device at", exit_code=DEVICE_ABSENT
    ),
    "missing URL": BadInput(("info",), "Missing argument 'URL'"),
    "reply timeout below the minimum": BadInput(
        ("info", "--timeout", "0", "sim://cs-1"), "'--timeout'"
    ),
    "unknown simulator profile": BadInput(("sim", "--profile", "cs-9"), "cs-9"),
    "simulator without decks": BadInput(("sim", "--decks", "0"), "'--decks'"),
    "unknown fault to inject": BadInput(("sim", "--inject", "gremlin@round=1"), "gremlin"),
    "fault injection without a place": BadInput(("sim", "--inject", "jam"), "@round=N"),
    "scenario that is not TOML": BadInput(
        ("sim", "--scenario", "{tmp}/scenario.toml"),
        "not valid TOML",
        files=(("scenario.toml", "profile = 'cs-1'\n[[inject\n"),),
    ),
    "scenario with an unknown key": BadInput(
        ("sim", "--scenario", "{tmp}/scenario.toml"),
        "bogus",
        files=(("scenario.toml", "profile = 'cs-1'\nbogus = 1\n"),),
    ),
    "configuration that is not TOML": BadInput(
        RUN, "not valid TOML", files=(("table.toml", "[game\nname = 1\n"),)
    ),
    "configuration key misspelt": BadInput(
        RUN, "unknown key game.nmae", files=(("table.toml", '[game]\nnmae = "macau-1"\n'),)
    ),
    "configuration value of the wrong type": BadInput(
        RUN, "game.decks", files=(("table.toml", '[game]\ndecks = "eight"\n'),)
    ),
    "configuration value out of range": BadInput(
        RUN,
        "out of range: use 6-12",
        files=(("table.toml", '[game]\nname = "macau-1"\ndecks = 4\n'),),
    ),
    "configuration key holding a line break": BadInput(
        RUN, "unknown key game.", files=(("table.toml", '[game]\n"na\\nme" = 1\n'),)
    ),
    "configuration with a date where a name goes": BadInput(
        RUN, "table_id", files=(("table.toml", "table_id = [1979-05-27]\n"),)
    ),
    "configured URL of an unknown scheme": BadInput(
        RUN, "device.url", files=(("table.toml", '[device]\nurl = "nope://x"\n'),)
    ),
    "configuration file missing": BadInput(RUN, "no such configuration file"),
    "no service on the socket": BadInput(
        ("status", "--socket", "{tmp}/control.sock"), "no cardshoe service", DEVICE_ABSENT
    ),
    "status from a missing configuration": BadInput(
        ("status", "--config", "{tmp}/table.toml"), "no such configuration file"
    ),
    "monitor of a device and the service at once": BadInput(
        ("monitor", "--service", "sim://cs-1"), "--service"
    ),
    "monitor for no events": BadInput(("monitor", "--count", "0", "sim://cs-1"), "'--count'"),
    "dump of an unknown URL scheme": BadInput(("dump", "nope://x"), "unknown URL scheme 'nope'"),
    "self-test of an absent device": BadInput(
        ("selftest", "/dev/cardshoe/none"), "no device at", DEVICE_ABSENT
    ),
    "pairing without a device": BadInput(("pair",), "Missing argument 'URL'"),
    "demo of an unknown game": BadInput(("demo", "--game", "mini-bac"), "game.name"),
    "demo of too many decks": BadInput(("demo", "--decks", "9"), "game.decks = 9"),
    "demo on an unknown device": BadInput(("demo", "--device", "robot"), "'robot'"),
    "configured device absent": BadInput(
        RUN,
        "no device at",
        exit_code=DEVICE_ABSENT,
        files=(("table.toml", '[device]\nurl = "/dev/cardshoe/none"\n' + SERVICE_FILES),),
        journal=True,
    ),
    "run before journal init": BadInput(
        RUN,
        "no journal: make a new table's journal with 'shoectl journal init'",
        files=(("table.toml", '[device]\nurl = "/dev/cardshoe/none"\n' + SERVICE_FILES),),
    ),
    "journal init twice": BadInput(
        ("journal", "init", "--config", "{tmp}/table.toml"),
        "a journal is already there",
        files=(("table.toml", SERVICE_FILES),),
        journal=True,
    ),
    "roads of a missing journal": BadInput(("roads", "/nonexistent/j.sqlite"), "no such journal"),
    "roads of a file that is not a journal": BadInput(("roads", "/etc/hostname"), "not a cardshoe"),
    "web on an address that is not HOST:PORT": BadInput(
        ("web", "--journal", "/nonexistent/j.sqlite", "--listen", "8080"), "is not HOST:PORT"
    ),
    "web on a host name": BadInput(
        ("web", "--journal", "/nonexistent/j.sqlite", "--listen", "table-pc:8080"),
        "does not start with an IP address",
    ),
    "web of a missing journal": BadInput(
        ("web", "--journal", "/nonexistent/j.sqlite", "--listen", "127.0.0.1:0"), "no such journal"
    ),
    "web without a journal": BadInput(("web",), "give --journal PATH"),
    "demo serving the page on a bad address": BadInput(("demo", "--web", "x:y"), "--web 'x:y'"),
    "uplink to a broker that is not mqtt://": BadInput(
        (*UPLINK, "--broker", "http://floor:80"), "give mqtt://HOST:PORT or mqtts://HOST:PORT"
    ),
    "uplink with a port that is not a number": BadInput(
        (*UPLINK, "--broker", "mqtt://floor:eighty"), "port that is not a number"
    ),
    "uplink over TLS without the floor's CA": BadInput(
        (*UPLINK, "--broker", "mqtts://floor:8883"), "give --ca"
    ),
    "uplink with a certificate but no key": BadInput(
        (
            *UPLINK,
            "--broker",
            "mqtts://floor:8883",
            "--ca",
            "/etc/hostname",
            "--cert",
            "/etc/hostname",
        ),
        "give both --cert and --key",
    ),
    "uplink with a site that is not one topic level": BadInput(
        (*UPLINK, "--broker", "mqtt://floor:1883", "--site", "east/+"), "'east/+' is not usable"
    ),
    "uplink without a broker": BadInput(
        ("uplink", "--journal", "j.sqlite", "--state-dir", "/tmp"), "no broker"
    ),
    "uplink with a missing state folder": BadInput(
        ("uplink", "--journal", "j", "--broker", "mqtt://f:1", "--state-dir", "/nonexistent/s"),
        "no such folder",
    ),
    "floor status of an unreachable database": BadInput(
        ("floor", "status", "--dsn", "postgresql://nobody@127.0.0.1:1/floor"),
        "cannot reach the floor database",
        DEVICE_ABSENT,
    ),
    "floor status with a DSN that is not UTF-8": BadInput(
        ("floor", "status", "--dsn", "postgresql://fl\udcffor@db/floor"),
        "is not a PostgreSQL connection string",
    ),
    "sim with a serial number holding a terminal's control sequence": BadInput(
        ("sim", "--serial", "SIM\x1b[2J"), "holds a control character"
    ),
    "sim with a serial number longer than a HELLO carries": BadInput(
        ("sim", "--serial", "S" * 33), "longer than 32 UTF-8 bytes"
    ),
    "sim with a serial number that is not UTF-8": BadInput(
        ("sim", "--serial", "S\udcff"), "is not UTF-8"
    ),
    "floor ingest from a broker that is not mqtt://": BadInput(
        ("floor", "ingest", "--broker", "tcp://x:1", "--dsn", "postgresql://x@127.0.0.1:1/f"),
        "give mqtt://HOST:PORT",
    ),
    "prune without an anchor": BadInput(
        ("journal", "prune", "/nonexistent/j.sqlite"), "give --anchor ID:HASH or --state-dir"
    ),
    "prune with an anchor that is not ID:HASH": BadInput(
        ("journal", "prune", "/nonexistent/j.sqlite", "--anchor", "12:abc"), "is not ID:HASH"
    ),
    "odds with a card seen more often than the shoe holds it": BadInput(
        ("odds", "--game", "punto-banco", "--decks", "1", "--seen", "AS KD AS"), "AS seen 2 times"
    ),
    "odds of a missing journal": BadInput(
        ("odds", "--journal", "{tmp}/j.sqlite", "--shoe", "S1"), "no such journal file"
    ),
    "analysis of a missing journal": BadInput(
        ("analyze", "shuffle", "/nonexistent/j.sqlite"), "no such journal file"
    ),
    "analysis without a journal": BadInput(("analyze", "shuffle"), "Missing argument"),
    "demo with an unknown shuffle": BadInput(("demo", "--shuffle", "wash"), "unknown shuffle"),
    "simulator riffling no times": BadInput(("sim", "--shuffle", "riffle:0"), "riffle:N"),
    # Text str.isdigit() accepts and int() refuses: a superscript, or more than 4,300 digits.
    "web on a port written in a superscript": BadInput(
        ("web", "--journal", "/nonexistent/j.sqlite", "--listen", "127.0.0.1:²"),
        "is not HOST:PORT",
    ),
    "web on a port of 5,000 digits": BadInput(
        ("web", "--journal", "/nonexistent/j.sqlite", "--listen", "127.0.0.1:" + "8" * 5000),
        "is not HOST:PORT",
    ),
    "prune with an anchor id written in a superscript": BadInput(
        ("journal", "prune", "/nonexistent/j.sqlite", "--anchor", "²:" + "a" * 64),
        "is not ID:HASH",
    ),
    "simulator riffling a superscript of times": BadInput(
        ("sim", "--shuffle", "riffle:²"), "riffle:N"
    ),
    "fault injected at a round of 5,000 digits": BadInput(
        ("sim", "--inject", "jam@round=" + "1" * 5000), "at most 9 digits"
    ),
    "fault lasting seconds that are no number": BadInput(
        ("sim", "--inject", "jam@round=1,for=1.2.3"), "for= takes the seconds the fault lasts"
    ),
    "fault lasting longer than a float holds": BadInput(
        ("sim", "--inject", "jam@round=1,for=" + "9" * 400), "at most 3600"
    ),
    "fault injected at a round in Arabic-Indic digits": BadInput(
        ("sim", "--inject", "jam@round=\u0663"), "at most 9 digits"
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_bad_input_is_one_line_with_its_exit_code(shoectl, tmp_path: Path, case: BadInput) -> None:
    for name, text in case.files:
        (tmp_path / name).write_text(text)
    if case.journal:
        assert shoectl("journal", "init", "--config", str(tmp_path / "table.toml")).returncode == 0
    result = shoectl(*(arg.replace("{tmp}", str(tmp_path)) for arg in case.args))
    assert result.returncode == case.exit_code, result.stderr
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith("shoectl: error: ")
    assert case.says in result.stderr


def test_a_file_that_is_not_a_journal_is_refused_without_being_changed(
    shoectl, tmp_path: Path
) -> None:
    fake = tmp_path / "journal.sqlite"
    fake.write_bytes(b"SQLite format 3\x00" + bytes(200))
    result = shoectl("journal", "verify", str(fake))
    assert result.returncode == BAD_INPUT
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert fake.read_bytes() == b"SQLite format 3\x00" + bytes(200)


def run_in_process(*args: str) -> tuple[int, str]:
    """shoectl's own entry point in this process: the exit code and what went to stderr."""
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        try:
            main(list(args))
        except SystemExit as exit_:
            return int(exit_.code or 0), stderr.getvalue()
    raise AssertionError("shoectl returned without exiting")


words = st.text(max_size=25) | st.sampled_from(["AS", "10D", "7*", "punto-banco", "--json", ""])


def check_refusal_or_success(code: int, stderr: str) -> None:
    if code == 0:
        assert stderr == ""
        return
    assert code == BAD_INPUT, stderr
    assert len(stderr.splitlines()) == 1, stderr
    assert stderr.startswith("shoectl: error: ")


@settings(max_examples=150, deadline=None)
@given(st.lists(words, max_size=8).map(" ".join))
def test_any_shoe_order_text_plays_or_is_refused_in_one_line(cards: str) -> None:
    check_refusal_or_success(*run_in_process(*PLAY, cards, "--json"))


@settings(max_examples=100, deadline=None)
@given(words, words | st.integers(-5, 20).map(str), st.lists(words, max_size=3))
def test_any_odds_arguments_compute_or_are_refused_in_one_line(
    game: str, decks: str, extra: list[str]
) -> None:
    check_refusal_or_success(*run_in_process("odds", "--game", game, "--decks", decks, *extra))
