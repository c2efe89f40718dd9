"""Byte streams to a device (serial ports and URLs, USB bulk pipes), chosen by URL scheme."""
