"""docs/protocol.md and the codec must agree: every worked example is checked here."""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path

import pytest

from cardshoe.drivers.protocol.cardid import CardId, CardSuit
from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.framing import FrameDecoder, encode_frame
from cardshoe.drivers.protocol.message_codec import (
    LAYOUTS,
    decode_message,
    encode_message,
    message_from_json,
)
from cardshoe.drivers.protocol.messages import (
    Capability,
    DeviceKind,
    FaultKind,
    GateMode,
    HeaderFlag,
    MessageType,
    Orientation,
    SensorFlag,
    StatusFlag,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
TEXT = DOC.read_text(encoding="utf-8")


def examples(kind: str) -> list[dict]:
    blocks = re.findall(rf"```json {kind}\n(.*?)\n```", TEXT, flags=re.DOTALL)
    return [json.loads(block) for block in blocks]


FRAME_EXAMPLES = examples("example-frame")
CARD_ID_EXAMPLES = examples("example-card-id")


def example_id(example: dict) -> str:
    fields = example["message"]["fields"]
    tag = next(iter(fields.values()))
    return f"{example['message']['type']}-{tag}"


@pytest.mark.parametrize("example", FRAME_EXAMPLES, ids=example_id)
def test_each_documented_frame_decodes_to_its_message_and_back(example: dict) -> None:
    message = message_from_json(example["message"])
    payload = bytes.fromhex(example["payload"])
    frame = bytes.fromhex(example["frame"])

    assert FrameDecoder().feed(frame) == [payload]
    assert decode_message(payload) == message
    assert encode_message(message) == payload
    assert encode_frame(payload) == frame


def test_the_examples_cover_every_message_type() -> None:
    documented = {MessageType[example["message"]["type"]] for example in FRAME_EXAMPLES}
    assert documented == set(MessageType)


def section(heading: str) -> str:
    """The text from a heading (given by its start) to the next heading."""
    after = TEXT.split("\n" + heading, 1)[1]
    return after.split("\n#", 1)[0]


@pytest.mark.parametrize(
    ("heading", "enum"),
    [
        ("## Messages", MessageType),
        ("### DeviceKind (", DeviceKind),
        ("### Orientation (", Orientation),
        ("### GateMode (", GateMode),
        ("### FaultKind (", FaultKind),
        ("### Capability (", Capability),
        ("### SensorFlag (", SensorFlag),
        ("### StatusFlag (", StatusFlag),
        ("### HeaderFlag (", HeaderFlag),
        ("### Error codes", ErrorCode),
    ],
)
def test_each_documented_value_table_matches_its_enum(heading: str, enum: type) -> None:
    rows = re.findall(
        r"^\| (0x[0-9A-F]+|\d+) \| `([A-Z_]+)` \|", section(heading), flags=re.MULTILINE
    )
    assert {int(value, 0): name for value, name in rows} == {
        member.value: member.name for member in enum
    }


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.type.name)
def test_each_documented_layout_lists_the_codec_fields_in_order(layout) -> None:
    heading = f"#### {layout.type.name} (0x{layout.type.value:02X}) — `{layout.cls.__name__}`"
    documented = re.findall(r"^\| [0-9…]+ \| \w+ \| `(\w+)`", section(heading), flags=re.MULTILINE)
    assert documented == [layout.tag_field, *(name for name, _ in layout.body)]


@pytest.mark.parametrize("example", CARD_ID_EXAMPLES, ids=lambda example: example["text"])
def test_each_documented_card_id_matches_the_codec(example: dict) -> None:
    card_id = CardId(
        example["rank"], CardSuit[example["suit"]], example["deck_set"], example["deck"]
    )
    code = bytes.fromhex(example["bytes"])
    assert card_id.encode() == code
    assert CardId.decode(code) == card_id
    assert str(card_id) == example["text"]
    assert CardId.parse(example["text"]) == card_id


def test_the_documented_crc_is_zlibs() -> None:
    assert "0xCBF43926" in TEXT
    assert zlib.crc32(b"123456789") == 0xCBF43926
