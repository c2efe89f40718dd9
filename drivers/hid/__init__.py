"""USB HID readers: barcode readers in keyboard mode (docs/drivers.md)."""
