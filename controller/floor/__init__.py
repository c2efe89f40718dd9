"""The floor feed: every table's journal over MQTT into PostgreSQL (docs/floor.md)."""
