"""Exceptions for bytes that do not form a valid protocol message or card ID.

Every decode failure is a ProtocolError, so a driver needs one except clause
to count and log bad input instead of crashing on it. Decode errors carry the
ErrorCode a device answers with and, when the header was readable, the
message type and header tag, so a device can reply to the right request.
"""

from __future__ import annotations

from cardshoe.drivers.protocol.error_codes import ErrorCode


class ProtocolError(Exception):
    """Bytes or values that the shoe link protocol does not allow."""


class FrameTooLarge(ProtocolError):
    """A payload longer than the protocol's maximum, refused before sending."""


class CardIdError(ProtocolError):
    """A card ID whose check value or fields are wrong: treat the card as misread."""


class MessageError(ProtocolError):
    """A payload that is not a valid message, or a message that cannot be encoded."""

    error_code = ErrorCode.MALFORMED

    def __init__(
        self, reason: str, *, message_type: int | None = None, tag: int | None = None
    ) -> None:
        super().__init__(reason)
        self.message_type = message_type
        self.tag = tag


class MalformedMessage(MessageError):
    """Wrong length, an undefined enum value, a value out of range, bad UTF-8."""


class UnknownMessageType(MessageError):
    error_code = ErrorCode.UNKNOWN_MESSAGE


class UnsupportedVersion(MessageError):
    """The header's protocol major version differs from ours."""

    error_code = ErrorCode.VERSION_MISMATCH

    def __init__(self, major: int, *, message_type: int | None, tag: int | None) -> None:
        super().__init__(
            f"protocol major version {major} is not supported",
            message_type=message_type,
            tag=tag,
        )
        self.major = major


class UnsupportedFlags(MessageError):
    """Header flag bits set that this protocol version does not implement."""

    error_code = ErrorCode.UNSUPPORTED
