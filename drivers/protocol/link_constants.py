"""Numbers both ends of the shoe link must agree on, from docs/protocol.md.

The host drivers and the firmware simulator read them from here so that the
specification, the device side and the host side cannot drift apart.
"""

from __future__ import annotations

PROTOCOL_MAJOR = 1
"""Sent in byte 0 of every message; a different major cannot be decoded."""
PROTOCOL_MINOR = 2
"""Sent in HELLO and GET_INFO; both ends use min(host minor, device minor).
1.1 added link authentication (AUTH_CHALLENGE, AUTH_RESPONSE, PAIR, AUTH_TAG);
1.2 appended the stream epoch to HELLO and the HELLO's digest to AUTH_RESPONSE."""
AUTHENTICATED_FROM_1_1 = 1
"""The minor that added link authentication: a device that holds a pairing key speaks at
least this, so it is the floor a host holds for a key paired before floors were pinned."""
APPENDED_IN_1_2 = 2
"""The minor that appended HELLO's `epoch` and AUTH_RESPONSE's `hello_digest`: a device
sends them only to a host whose GET_INFO states this minor or later."""

# Serial carriage: 115200 baud, 8 data bits, no parity, 1 stop bit, no flow control.
SERIAL_BAUDRATE = 115200

# USB carriage: a vendor-specific interface with one bulk pipe each way.
USB_INTERFACE_CLASS = 0xFF
USB_BULK_OUT_ENDPOINT = 0x01
USB_BULK_IN_ENDPOINT = 0x81
USB_MAX_PACKET_SIZE = 64
SIMULATOR_USB_VID = 0x1209
"""pid.codes, the open-source USB vendor ID."""
SIMULATOR_USB_PID = 0x0001
"""pid.codes test PID, for the simulator only: never ship hardware with it."""

# Event delivery: stop-and-wait, one unacknowledged event in flight.
EVENT_RETRANSMIT_INTERVAL_S = 0.2
"""The device resends its oldest unacknowledged event this long after the last send."""
EVENT_QUEUE_MIN_CAPACITY = 256
"""Unacknowledged events a device must be able to keep, across power loss."""

# Commands: the host's side of request/reply.
COMMAND_REPLY_TIMEOUT_S = 0.5
"""How long the host waits for the REPLY (or HELLO, STATUS) to a command."""
COMMAND_ATTEMPTS = 3
"""Sends of one command, with the same request id, before the host gives up."""

# Link supervision.
HELLO_INTERVAL_S = 1.0
"""An unconnected device repeats its unsolicited HELLO this often."""
HOST_POLL_INTERVAL_S = 1.0
"""The host sends GET_STATUS after this long without hearing from the device."""
LINK_DOWN_AFTER_S = 3.0
"""No valid frame for this long means the link is down; reconnect with GET_INFO."""
