"""Device side of the host: transports, framing, messages and the device API."""
