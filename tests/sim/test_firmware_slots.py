"""The simulated device's own firmware checks, without the host's: its A/B slots switch only
to a whole image the house key signed, at a version not below the one it runs."""

from __future__ import annotations

import hashlib

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from cardshoe.drivers.protocol.error_codes import ErrorCode
from cardshoe.drivers.protocol.firmware_image import sign_image
from cardshoe.drivers.protocol.link_constants import FIRMWARE_CHUNK_SIZE
from cardshoe.drivers.protocol.messages import FirmwareBegin, FirmwareChunk
from cardshoe.firmware_sim.firmware_slots import FirmwareSlot, FirmwareSlots

HOUSE = Ed25519PrivateKey.generate()
HOUSE_PUBLIC = HOUSE.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
FACTORY = FirmwareSlot(b"factory image", 5, "1.0.0")
IMAGE = bytes(range(256)) * 3


def begin(image: bytes, version: int, key: Ed25519PrivateKey = HOUSE) -> FirmwareBegin:
    signed = sign_image(image, version, key)
    return FirmwareBegin(1, version, len(image), signed.sha256, signed.signature)


def send(slots: FirmwareSlots, image: bytes) -> list[ErrorCode]:
    return [
        slots.write(FirmwareChunk(2, offset, image[offset : offset + FIRMWARE_CHUNK_SIZE]))
        for offset in range(0, len(image), FIRMWARE_CHUNK_SIZE)
    ]


def test_a_whole_signed_image_switches_to_the_other_slot() -> None:
    slots = FirmwareSlots(FACTORY)
    assert slots.begin(begin(IMAGE, 6), HOUSE_PUBLIC) is ErrorCode.OK
    assert set(send(slots, IMAGE)) == {ErrorCode.OK}
    assert slots.commit(HOUSE_PUBLIC) is ErrorCode.OK
    assert (slots.active_index, slots.active.sha256, slots.active.label) == (
        1,
        hashlib.sha256(IMAGE).digest(),
        "6",
    )


@pytest.mark.parametrize(
    ("command", "house_key", "refusal"),
    [
        (begin(IMAGE, 6, Ed25519PrivateKey.generate()), HOUSE_PUBLIC, "FIRMWARE_BAD_SIGNATURE"),
        (begin(IMAGE, 4), HOUSE_PUBLIC, "FIRMWARE_ROLLBACK"),
        (begin(IMAGE, 6), None, "FIRMWARE_NO_HOUSE_KEY"),
    ],
)
def test_the_device_refuses_at_begin_what_the_house_did_not_sign_or_is_older(
    command: FirmwareBegin, house_key: bytes | None, refusal: str
) -> None:
    slots = FirmwareSlots(FACTORY)
    assert slots.begin(command, house_key).name == refusal
    assert slots.write(FirmwareChunk(2, 0, IMAGE[:10])) is ErrorCode.FIRMWARE_OUT_OF_ORDER
    assert slots.active == FACTORY


def test_bytes_that_are_not_the_signed_image_are_refused_at_commit() -> None:
    slots = FirmwareSlots(FACTORY)
    slots.begin(begin(IMAGE, 6), HOUSE_PUBLIC)
    send(slots, b"Y" + IMAGE[1:])
    assert slots.commit(HOUSE_PUBLIC) is ErrorCode.FIRMWARE_HASH_MISMATCH
    assert slots.active == FACTORY


def test_a_restart_mid_transfer_keeps_the_old_slot_and_drops_the_half_written_one() -> None:
    slots = FirmwareSlots(FACTORY)
    slots.begin(begin(IMAGE, 6), HOUSE_PUBLIC)
    send(slots, IMAGE[: len(IMAGE) // 2])
    slots.abandon()
    assert slots.commit(HOUSE_PUBLIC) is ErrorCode.FIRMWARE_OUT_OF_ORDER
    assert (slots.active, slots.slots[1]) == (FACTORY, None)


def test_a_chunk_out_of_order_is_refused_and_the_transfer_goes_on() -> None:
    slots = FirmwareSlots(FACTORY)
    slots.begin(begin(IMAGE, 6), HOUSE_PUBLIC)
    assert slots.write(FirmwareChunk(2, 7, IMAGE[7:20])) is ErrorCode.FIRMWARE_OUT_OF_ORDER
    assert set(send(slots, IMAGE)) == {ErrorCode.OK}
    assert slots.commit(HOUSE_PUBLIC) is ErrorCode.OK
