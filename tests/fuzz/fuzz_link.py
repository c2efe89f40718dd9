"""Coverage-guided fuzzing of the shoe link codec with atheris: `make fuzz` (FUZZ_SECONDS=60).

Each input is used twice. As a byte stream, fed to a FrameDecoder in pieces
whose sizes the input itself chooses: every payload that comes out must
have passed the CRC (it frames back to a frame the decoder accepts again)
and must decode to a message that re-encodes to it, or be refused with a
ProtocolError. As a bare payload, so the fuzzer reaches the message decoder
without having to forge a CRC-32, and as a sealed (protocol 1.1) frame,
which must never open under a key the input does not know. Its first 8
bytes are also read as a card ID. Any other exception or a failed check is
a crash libFuzzer reports.

The hypothesis campaigns in tests/test_fuzz_*.py run in `make test`; this
harness needs the optional `fuzz` extra and runs only on request.

    .venv/bin/python tests/fuzz/fuzz_link.py --write-seeds build/fuzz-corpus
    .venv/bin/python tests/fuzz/fuzz_link.py -max_total_time=60 build/fuzz-corpus
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import atheris

with atheris.instrument_imports():
    from cardshoe.drivers.protocol.auth import AuthError, Direction, LinkAuth
    from cardshoe.drivers.protocol.cardid import CARD_ID_SIZE, CardId, CardSuit
    from cardshoe.drivers.protocol.error_codes import ErrorCode
    from cardshoe.drivers.protocol.errors import CardIdError, ProtocolError
    from cardshoe.drivers.protocol.framing import FrameDecoder, encode_frame
    from cardshoe.drivers.protocol.message_codec import (
        decode_message,
        encode_message,
        message_from_json,
        message_to_json,
    )
    from cardshoe.drivers.protocol.messages import (
        Ack,
        CardRead,
        DealNext,
        GetInfo,
        Message,
        Orientation,
        Reply,
        SensorFlag,
    )

MAX_READ = 64
SESSION_KEY = bytes(range(32))
"""The largest piece one read hands the decoder; USB full-speed packets are 64 bytes."""

SEEDS: tuple[Message, ...] = (
    Ack(acked_seq=1),
    DealNext(request_id=7),
    GetInfo(request_id=1, protocol_minor=0),
    Reply(request_id=7, result=ErrorCode.OK),
    CardRead(
        seq=3,
        device_time_ms=1234,
        card_code=CardId(9, CardSuit.HEARTS, 0x00BC614E, 3).encode(),
        orientation=Orientation.FACE_DOWN,
        flags=SensorFlag(0),
        feed_group=0,
        feed_size=1,
    ),
)


def check_payload(payload: bytes) -> None:
    try:
        message = decode_message(payload)
    except ProtocolError:
        return
    if encode_message(message) != payload:
        raise AssertionError(f"{payload.hex()} decoded to {message!r}, which encodes otherwise")
    if message_from_json(message_to_json(message)) != message:
        raise AssertionError(f"{message!r} does not survive its JSON form")
    if isinstance(message, CardRead):
        check_card_code(message.card_code)


def check_card_code(code: bytes) -> None:
    try:
        card = CardId.decode(code)
    except CardIdError:
        return
    if card.encode() != code:
        raise AssertionError(f"card ID {code.hex()} read as {card}, which encodes otherwise")


def check_sealed(data: bytes) -> None:
    host = LinkAuth(SESSION_KEY, Direction.HOST_TO_DEVICE)
    try:
        host.open(data)
    except AuthError:
        return
    raise AssertionError(f"{data.hex()} opened without the session key")


def check_stream(data: bytes) -> None:
    provider = atheris.FuzzedDataProvider(data)
    decoder = FrameDecoder()
    while provider.remaining_bytes():
        piece = provider.ConsumeBytes(provider.ConsumeIntInRange(1, MAX_READ))
        for payload in decoder.feed(piece):
            if FrameDecoder().feed(encode_frame(payload)) != [payload]:
                raise AssertionError(f"accepted payload {payload.hex()} does not frame back")
            check_payload(payload)


def test_one_input(data: bytes) -> None:
    check_stream(data)
    check_payload(data)
    check_sealed(data)
    check_card_code(data[:CARD_ID_SIZE])


def write_seeds(folder: Path) -> None:
    """One file per seed message: its wire frame (stream use) and its bare payload."""
    folder.mkdir(parents=True, exist_ok=True)
    for number, message in enumerate(SEEDS):
        payload = encode_message(message)
        (folder / f"seed-{number}-frame").write_bytes(b"\x00" + encode_frame(payload))
        (folder / f"seed-{number}-payload").write_bytes(payload)


def main() -> None:
    if sys.argv[1:2] == ["--write-seeds"]:
        write_seeds(Path(sys.argv[2]))
        return
    # The decoder logs every frame it drops, and nearly every fuzzed input is one.
    logging.disable(logging.WARNING)
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
