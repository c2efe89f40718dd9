"""Game protection: shuffle quality, stacked-shoe and advantage alarms, for surveillance only."""
