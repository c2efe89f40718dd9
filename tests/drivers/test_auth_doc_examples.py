"""docs/protocol.md's link authentication examples and drivers/protocol/auth.py must agree."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cardshoe.drivers.protocol.auth import Direction, LinkAuth, derive_session_key
from cardshoe.drivers.protocol.framing import FrameDecoder, encode_frame
from cardshoe.drivers.protocol.message_codec import (
    decode_message,
    encode_message,
    message_from_json,
)

TEXT = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text("utf-8")


def examples(kind: str) -> list[dict]:
    blocks = re.findall(rf"```json {kind}\n(.*?)\n```", TEXT, flags=re.DOTALL)
    return [json.loads(block) for block in blocks]


SESSIONS = examples("example-auth-session")
SEALED = examples("example-sealed-frame")


def test_the_page_has_a_session_and_sealed_frames_both_ways() -> None:
    assert len(SESSIONS) == 1
    assert {example["direction"] for example in SEALED} == {member.name for member in Direction}


@pytest.mark.parametrize("example", SESSIONS, ids=lambda example: example["serial_number"])
def test_the_documented_session_key_is_derived_from_key_nonces_and_serial(example: dict) -> None:
    derived = derive_session_key(
        bytes.fromhex(example["pairing_key"]),
        bytes.fromhex(example["host_nonce"]),
        bytes.fromhex(example["device_nonce"]),
        example["serial_number"],
    )
    assert derived.hex() == example["session_key"]


def test_the_sealed_examples_use_the_documented_session_key() -> None:
    assert {example["session_key"] for example in SEALED} == {SESSIONS[0]["session_key"]}


@pytest.mark.parametrize(
    "example", SEALED, ids=lambda example: f"{example['message']['type']}-{example['counter']}"
)
def test_each_sealed_frame_seals_opens_and_frames_as_documented(example: dict) -> None:
    key = bytes.fromhex(example["session_key"])
    direction = Direction[example["direction"]]
    message = message_from_json(example["message"])
    payload = bytes.fromhex(example["payload"])
    sender = LinkAuth(key, direction, sent=example["counter"] - 1)
    receiver = LinkAuth(key, next(member for member in Direction if member is not direction))

    assert sender.seal(encode_message(message)) == payload
    assert encode_frame(payload) == bytes.fromhex(example["frame"])
    assert FrameDecoder().feed(bytes.fromhex(example["frame"])) == [payload]
    assert decode_message(receiver.open(payload)) == message
