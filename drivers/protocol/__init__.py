"""The shoe link codec shared by the host and the simulator: framing, messages, card ids, auth."""
