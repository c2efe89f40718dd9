"""Line-protocol readers: devices that write one ASCII line per event (docs/drivers.md)."""
