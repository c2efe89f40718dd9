"""Fuzz campaign for the table configuration: any TOML gives a table or one line naming the key.

tests/service/test_config.py lists the known mistakes one by one; here hypothesis
writes the configuration: any key, known or not, with any value TOML can
hold, and the example file with lines dropped, duplicated or edited. The
contract: a TableConfig, or a ConfigError (exit code 2) whose message is
one line, never any other exception. How `shoectl run --config` shows such
an error is in the table of tests/cli/test_bad_input_cli.py.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from cardshoe.controller.config import ConfigError, TableConfig, load_config

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "table.toml"
SECTION_KEYS = {
    "game": ["name", "decks", "commission", "paytable", "demo_rounds", "round_burn", "relief_burn"],
    "shoe": ["burn", "burn_fixed", "cut_card_depth", "cut_card"],
    "device": [
        "kind",
        "url",
        "usb_vid",
        "usb_pid",
        "usb_serial",
        "allowed_firmware_hashes",
        "protocol",
    ],
    "service": ["journal_path", "control_socket"],
}
"""The keys docs/configuration.md documents, so most drawn keys are real ones."""

toml_scalars = (
    st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.integers(-3, 70)
    | st.floats()
    | st.text(max_size=30)
    | st.sampled_from(["punto-banco", "macau-1", "fixed", "auto", "sim://x", "/dev/ttyS0"])
    | st.datetimes()
    | st.dates()
    | st.times()
)
toml_values = st.recursive(
    toml_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=6,
)


def section(name: str) -> st.SearchStrategy:
    keys = st.sampled_from(SECTION_KEYS[name]) | st.text(max_size=12)
    return st.dictionaries(keys, toml_values, max_size=4) | toml_values


tables = st.fixed_dictionaries(
    {},
    optional={
        "table_id": toml_values | st.text(alphabet="T12-_. x", max_size=70),
        **{name: section(name) for name in SECTION_KEYS},
        "stray": toml_values,
    },
)


def assert_one_line_config_error(error: ConfigError) -> None:
    message = str(error)
    assert message
    assert len(message.splitlines()) == 1, message
    assert error.exit_code == 2


@settings(max_examples=500, deadline=None)
@given(tables)
@example({"table_id": ["\x85"]})  # found by a random run: JSON leaves NEL as typed
@example({"table_id": "T\u2028"})
@example({"game": {"name": "macau\u2029"}})
def test_any_parsed_toml_is_a_table_or_one_line_naming_the_key(data: dict) -> None:
    try:
        TableConfig.from_mapping(data)
    except ConfigError as error:
        assert_one_line_config_error(error)


@st.composite
def edited_example(draw: st.DrawFn) -> bytes:
    """The example file with a few lines dropped, repeated or changed by a stray keystroke."""
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(0, len(lines) - 1))
        edit = draw(st.sampled_from(["drop", "repeat", "type", "replace"]))
        if edit == "drop":
            del lines[index]
        elif edit == "repeat":
            lines.insert(index, lines[index])
        elif edit == "type":
            column = draw(st.integers(0, len(lines[index])))
            keystroke = draw(st.sampled_from([*"=[]\"'#,.0x \t\\é\x00"]))
            lines[index] = lines[index][:column] + keystroke + lines[index][column:]
        else:
            key = lines[index].partition("=")[0]
            lines[index] = f"{key}= {draw(st.sampled_from(['1', '-1', 'true', '3.5', '[]']))}"
        if not lines:
            break
    return "\n".join(lines).encode("utf-8")


@settings(max_examples=300, deadline=None)
@given(edited_example())
def test_an_edited_example_file_loads_or_fails_in_one_line_naming_the_file(text: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "table.toml"
        path.write_bytes(text)
        try:
            load_config(path)
        except ConfigError as error:
            assert_one_line_config_error(error)
            assert str(error).startswith(f"{path}: ")
