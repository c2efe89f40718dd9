"""Table configuration: defaults, one-line errors naming the key, and the fingerprint."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cardshoe.controller.config import (
    BurnPolicy,
    ConfigError,
    CutCardPolicy,
    DeviceMode,
    TableConfig,
    load_config,
)
from cardshoe.controller.errors import UserError
from cardshoe.controller.rules.cards import parse_card
from cardshoe.controller.rules.games import commission_names

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "table.toml"


def config_error(data: dict) -> str:
    with pytest.raises(ConfigError) as caught:
        TableConfig.from_mapping(data)
    message = str(caught.value)
    assert "\n" not in message
    assert caught.value.exit_code == 2
    return message


def test_defaults_make_a_manual_punto_banco_shoe() -> None:
    config = TableConfig()
    assert config.game.name == "punto-banco"
    assert config.game.decks == 8
    assert config.game.demo_rounds == 0
    assert config.game.round_burn == 0
    assert config.device.kind is DeviceMode.SHOE
    assert (config.device.protocol, config.device.protocol_options) == ("cardshoe", None)
    assert config.shoe.burn is BurnPolicy.DECKS
    assert config.shoe.cut_card_depth == 12
    assert config.shoe.cut_card is CutCardPolicy.LAST_ROUND
    assert config.device.allowed_firmware_hashes == ()
    assert not config.device.firmware_check_enforced
    assert TableConfig.from_mapping({}) == config


def test_example_file_loads_with_every_section(tmp_path: Path) -> None:
    config = load_config(EXAMPLE)
    assert config.table_id == "T12"
    assert config.game.name == "macau-1"
    assert config.device.url == "/dev/cardshoe/shoe0"
    assert config.service.journal_path == Path("/var/lib/cardshoe/journal.sqlite")


def test_full_file_reads_every_key(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    path.write_text(
        f"""
table_id = "MO-7"
[game]
name = "macau-2"
decks = 10
commission = "half-on-4"
paytable = "macau-2007-method-2"
demo_rounds = 3
round_burn = 1
relief_burn = 2
[shoe]
burn = "fixed"
burn_fixed = 5
cut_card_depth = 24
cut_card = "one-more-round"
[device]
kind = "shoe"
usb_vid = 0x1209
usb_pid = 0x0001
usb_serial = "CS-0042"
allowed_firmware_hashes = ["{"AB" * 32}"]
[service]
journal_path = "state/journal.sqlite"
control_socket = "/run/cardshoe/control.sock"
"""
    )
    config = load_config(path)
    assert config.table_id == "MO-7"
    assert config.game.name == "macau-2"
    assert (config.game.decks, config.game.demo_rounds, config.game.round_burn) == (10, 3, 1)
    assert config.game.relief_burn == 2
    assert config.game.effective_commission == "half-on-4"
    assert config.shoe.burn is BurnPolicy.FIXED
    assert config.shoe.burn_fixed == 5
    assert config.shoe.cut_card is CutCardPolicy.ONE_MORE_ROUND
    assert (config.device.usb_vid, config.device.usb_pid) == (0x1209, 0x0001)
    assert config.device.allowed_firmware_hashes == ("ab" * 32,)
    assert config.device.firmware_check_enforced
    assert config.service.journal_path == tmp_path / "state" / "journal.sqlite"
    assert config.service.control_socket == Path("/run/cardshoe/control.sock")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"tabel_id": "T1"}, "unknown key tabel_id"),
        ({"game": {"deck": 8}}, "unknown key game.deck"),
        ({"shoe": {"burn_policy": "decks"}}, "unknown key shoe.burn_policy"),
        ({"game": {"name": "mini-bac"}}, '"punto-banco" | "seven-up" | "macau-1" | "macau-2"'),
        ({"game": {"name": 7}}, "game.name = 7"),
        ({"game": {"decks": "8"}}, "game.decks"),
        ({"game": {"decks": True}}, "game.decks"),
        ({"game": 8}, "[game] section"),
        ({"game": {"demo_rounds": 4}}, "game.demo_rounds = 4 is out of range: use 0-3"),
        ({"game": {"relief_burn": 9}}, "game.relief_burn = 9 is out of range: use 0-8"),
        ({"game": {"relief_burn": -1}}, "game.relief_burn = -1 is out of range: use 0-8"),
        ({"game": {"relief_burn": "1"}}, 'game.relief_burn = "1" is not a whole number of cards'),
        ({"shoe": {"burn": "random"}}, '"decks" | "first-card" | "fixed"'),
        ({"shoe": {"burn": "fixed"}}, "shoe.burn_fixed"),
        ({"shoe": {"burn": "fixed", "burn_fixed": 9}}, "shoe.burn_fixed = 9 is out of range"),
        ({"shoe": {"burn_fixed": 3}}, 'only with shoe.burn = "fixed"'),
        ({"shoe": {"cut_card": "never"}}, '"last-round" | "one-more-round"'),
        ({"device": {"kind": "robot"}}, '"shoe" | "auto"'),
        ({"device": {"url": "sim:/x"}}, "device.url"),
        ({"device": {"url": "/dev/ttyS0", "usb_serial": "X"}}, "not both"),
        ({"device": {"usb_vid": 0x10000}}, "device.usb_vid"),
        ({"device": {"usb_serial": ""}}, "device.usb_serial"),
        ({"device": {"allowed_firmware_hashes": ["abc"]}}, "64 hex digits"),
        ({"device": {"allowed_firmware_hashes": "ab"}}, "device.allowed_firmware_hashes"),
        ({"device": {"protocol": "acme"}}, "no device protocol named 'acme': use one of cardshoe"),
        ({"device": {"protocol": 3}}, "device.protocol = 3"),
        ({"device": {"cardshoe": {"baud": 9600}}}, "this protocol takes no options"),
        ({"device": {"cardshoe": 1}}, "[device.cardshoe] table"),
        ({"device": {"line": {"baud": 9600}}}, "unknown key device.line"),
        ({"service": {"journal_path": 3}}, "service.journal_path"),
        ({"table_id": "table 12"}, "table_id"),
        ({"table_id": ""}, "table_id"),
    ],
)
def test_bad_values_name_the_key_and_the_choices(data: dict, expected: str) -> None:
    assert expected in config_error(data)


@pytest.mark.parametrize(
    ("game", "low", "high"),
    [("punto-banco", 1, 8), ("seven-up", 4, 8), ("macau-1", 6, 12), ("macau-2", 6, 12)],
)
def test_decks_are_validated_per_game(game: str, low: int, high: int) -> None:
    for decks in (low, high):
        depth = min(12, 26 * decks)
        data = {"game": {"name": game, "decks": decks}, "shoe": {"cut_card_depth": depth}}
        assert TableConfig.from_mapping(data).game.decks == decks
    for decks in (low - 1, high + 1):
        message = config_error({"game": {"name": game, "decks": decks}})
        assert f"game.decks = {decks} is out of range: use {low}-{high}" in message
        assert game in message


def test_cut_card_depth_must_leave_room_for_the_rounds_after_it() -> None:
    last_round = {"shoe": {"cut_card_depth": 6}}
    assert TableConfig.from_mapping(last_round).shoe.cut_card_depth == 6
    assert "use 6-26" in config_error({"shoe": {"cut_card_depth": 5}})
    one_more = {"shoe": {"cut_card_depth": 11, "cut_card": "one-more-round"}}
    assert "use 12-26" in config_error(one_more)
    with_round_burn = {"game": {"round_burn": 2}, "shoe": {"cut_card_depth": 12}}
    assert TableConfig.from_mapping(with_round_burn).shoe.cut_card_depth == 12
    with_round_burn["shoe"]["cut_card"] = "one-more-round"
    assert "use 16-26" in config_error(with_round_burn)
    with_relief_burn = {"game": {"round_burn": 2, "relief_burn": 1}, "shoe": {"cut_card_depth": 8}}
    assert "use 9-26" in config_error(with_relief_burn)
    assert "use 6-26" in config_error({"shoe": {"cut_card_depth": 27}})


@pytest.mark.parametrize(
    ("shoe", "first_card", "burned"),
    [
        ({}, "KS", 8),
        ({"burn": "fixed", "burn_fixed": 3}, "9H", 3),
        ({"burn": "first-card"}, "AS", 2),
        ({"burn": "first-card"}, "7D", 8),
        ({"burn": "first-card"}, "TC", 11),
        ({"burn": "first-card"}, "QH", 11),
    ],
)
def test_start_burn_counts_the_first_card(shoe: dict, first_card: str, burned: int) -> None:
    procedure = TableConfig.from_mapping({"shoe": shoe}).shoe
    assert procedure.start_burn_count(8, parse_card(first_card)) == burned


def test_automatic_machine_takes_no_shoe_section() -> None:
    config = TableConfig.from_mapping({"device": {"kind": "auto"}})
    assert not config.uses_cut_card_and_burn
    assert "burn" not in config.fingerprint_options()
    message = config_error({"device": {"kind": "auto"}, "shoe": {"burn": "decks"}})
    assert "[shoe] section" in message
    assert "Art. 2.3" in message


@pytest.mark.parametrize(
    ("game", "commission"),
    [("punto-banco", "half-on-4"), ("seven-up", "5pct"), ("macau-1", "none")],
)
def test_commission_must_belong_to_the_game(game: str, commission: str) -> None:
    message = config_error({"game": {"name": game, "commission": commission}})
    assert f'game.commission = "{commission}" is not an option of {game}' in message
    assert commission_names(game)[0] in message


def test_paytable_must_be_the_games() -> None:
    assert "game.paytable" in config_error({"game": {"paytable": "generous"}})
    macau_table = {"name": "macau-1", "paytable": "macau-2007-method-2"}
    assert "macau-2007-method-1" in config_error({"game": macau_table})


@pytest.mark.parametrize(
    ("game", "commission"),
    [("punto-banco", "half-on-6"), ("macau-2", "half-on-4"), ("seven-up", None)],
)
def test_configured_game_comes_from_the_rules_engine(game: str, commission: str | None) -> None:
    options = {"name": game, "decks": 8} | ({"commission": commission} if commission else {})
    config = TableConfig.from_mapping({"game": options})
    built = config.game.build_game()
    assert built.name == game
    assert built.commission.name == config.game.effective_commission
    assert built.paytable.name == config.game.effective_paytable


def test_a_casino_may_configure_the_other_published_super_sevens_table() -> None:
    options = {"name": "seven-up", "decks": 6, "paytable": "seven-up-super-sevens-2-5-17-70-700"}
    config = TableConfig.from_mapping({"game": options})
    built = config.game.build_game()
    assert built.paytable.name == "seven-up-super-sevens-2-5-17-70-700"
    assert built.paytable.super_sevens[3] == 5
    assert (
        config.fingerprint != TableConfig.from_mapping({"game": {"name": "seven-up"}}).fingerprint
    )


def test_fingerprint_covers_game_options_only() -> None:
    base = TableConfig()
    assert len(base.fingerprint) == 64
    same_game_elsewhere = TableConfig.from_mapping(
        {
            "table_id": "T99",
            "device": {"url": "socket://10.0.0.5:4000", "allowed_firmware_hashes": ["0" * 64]},
            "service": {"journal_path": "/tmp/j.sqlite"},
        }
    )
    assert same_game_elsewhere.fingerprint == base.fingerprint
    for change in (
        {"game": {"decks": 6}},
        {"game": {"demo_rounds": 1}},
        {"game": {"round_burn": 1}},
        {"game": {"relief_burn": 1}},
        {"shoe": {"burn": "first-card"}},
        {"shoe": {"cut_card_depth": 14}},
        {"shoe": {"cut_card": "one-more-round"}},
        {"device": {"kind": "auto"}},
        {"game": {"name": "seven-up"}},
        {"game": {"commission": "half-on-6"}},
    ):
        assert TableConfig.from_mapping(change).fingerprint != base.fingerprint, change


def test_the_relief_burn_is_an_approved_option_on_both_device_kinds() -> None:
    for device in ({}, {"device": {"kind": "auto"}}):
        relief = TableConfig.from_mapping({**device, "game": {"relief_burn": 1}})
        assert relief.fingerprint_options()["relief_burn"] == 1
        off = TableConfig.from_mapping(device)
        assert off.fingerprint_options()["relief_burn"] == 0
        with pytest.raises(UserError, match="the game options changed while shoe S9 is open"):
            relief.ensure_unchanged_since(off.fingerprint, "S9")


def test_default_commission_and_explicit_default_share_a_fingerprint() -> None:
    explicit = TableConfig.from_mapping({"game": {"commission": "5pct"}})
    assert explicit.fingerprint == TableConfig().fingerprint


def test_changed_options_refuse_an_open_shoe() -> None:
    started = TableConfig().fingerprint
    TableConfig().ensure_unchanged_since(started, "shoe-1")
    with pytest.raises(UserError) as caught:
        TableConfig.from_mapping({"game": {"decks": 6}}).ensure_unchanged_since(started, "shoe-1")
    assert "shoe-1" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_file_problems_are_one_line_naming_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[game\nname = 1\n")
    typo = tmp_path / "typo.toml"
    typo.write_text('[game]\nnmae = "macau-1"\n')
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe\x00")
    for path, expected in (
        (tmp_path / "absent.toml", "no such configuration file"),
        (tmp_path, "is a folder"),
        (broken, "not valid TOML"),
        (typo, "unknown key game.nmae"),
        (binary, "not valid TOML"),
    ):
        with pytest.raises(ConfigError) as caught:
            load_config(path)
        assert str(caught.value).startswith(str(path)), path
        assert expected in str(caught.value)
        assert "\n" not in str(caught.value)


def test_the_uplink_section_reads_every_key_and_takes_paths_from_the_file(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text(
        '[uplink]\nbroker = "mqtts://floor:8883"\nsite = "east"\nstate_dir = "state"\n'
        'ca = "ca.crt"\ncert = "T1.crt"\nkey = "T1.key"\nresend_after_s = 5\n'
        "prune_after_shoe = true\nprune_keep_days = 3\n"
    )
    uplink = load_config(path).uplink
    assert uplink.broker == "mqtts://floor:8883" and uplink.site == "east"
    assert uplink.state_dir == tmp_path / "state" and uplink.cert == tmp_path / "T1.crt"
    assert uplink.resend_after_s == 5.0 and uplink.prune_after_shoe is True
    assert uplink.prune_keep_days == 3
    assert load_config(path).fingerprint == TableConfig().fingerprint


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("resend_after_s = 0", "uplink.resend_after_s = 0.0 must be above 0"),
        ('resend_after_s = "soon"', 'uplink.resend_after_s = "soon" is not a number of seconds'),
        ("resend_after_s = nan", "uplink.resend_after_s = NaN is not a number of seconds"),
        ("resend_after_s = inf", "uplink.resend_after_s = Infinity is not a number of seconds"),
        ('prune_after_shoe = "yes"', 'uplink.prune_after_shoe = "yes" is not true or false'),
        ('site = "a/b"', "uplink.site = 'a/b' is not usable"),
        ("brokr = 1", "unknown key uplink.brokr"),
    ],
)
def test_a_bad_uplink_key_is_one_line_naming_it(tmp_path, line, message):
    path = tmp_path / "table.toml"
    path.write_text(f"[uplink]\n{line}\n")
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(path)


def test_the_machines_shoe_endings_are_approved_options_of_the_automatic_machine() -> None:
    machine = {"device": {"kind": "auto"}}
    default = TableConfig.from_mapping(machine)
    assert default.shoe.machine_rounds == 80
    options = default.fingerprint_options()
    assert (options["machine_rounds"], options["machine_end_at"]) == (80, [])
    assert options["machine_end_at_relief"] is False
    assert "machine_rounds" not in TableConfig().fingerprint_options()
    policy = {
        "machine_rounds": 0,
        "machine_end_at": ["22:30", "06:00"],
        "machine_end_at_relief": True,
    }
    chosen = TableConfig.from_mapping({**machine, "shoe": policy})
    assert chosen.fingerprint_options()["machine_end_at"] == ["06:00", "22:30"]
    for change in (
        {"machine_rounds": 60},
        {"machine_end_at": ["06:00"]},
        {"machine_end_at_relief": True},
    ):
        changed = TableConfig.from_mapping({**machine, "shoe": change})
        with pytest.raises(UserError, match="the game options changed while shoe S9 is open"):
            changed.ensure_unchanged_since(default.fingerprint, "S9")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"shoe": {"machine_rounds": 80}},
            'shoe.machine_rounds applies only to device.kind = "auto"',
        ),
        (
            {"device": {"kind": "auto"}, "shoe": {"cut_card": "last-round"}},
            "the [shoe] section of an automatic shuffler-dealer takes only machine_rounds",
        ),
        (
            {"device": {"kind": "auto"}, "shoe": {"machine_rounds": -1}},
            "shoe.machine_rounds = -1 is out of range: use 0-10000 (0: off)",
        ),
        (
            {"device": {"kind": "auto"}, "shoe": {"machine_end_at": ["6am"]}},
            'shoe.machine_end_at has "6am": write each time of day as HH:MM',
        ),
        (
            {"device": {"kind": "auto"}, "shoe": {"machine_end_at": "06:00"}},
            'shoe.machine_end_at = "06:00" is not a list of times of day',
        ),
        (
            {"device": {"kind": "auto"}, "shoe": {"machine_end_at_relief": "yes"}},
            'shoe.machine_end_at_relief = "yes" is not true or false',
        ),
    ],
)
def test_a_machine_ending_key_that_cannot_be_used_is_one_line(data: dict, expected: str) -> None:
    assert expected in config_error(data)
