"""The table side of cardshoe: rules engine, dealing procedure, journal and shoectl."""
