"""The floor's register of table signing keys: which public key vouches for which table.

A table registered here has only records signed with its key stored by
ingest (ingest.py); a table not registered is taken on its hash chain
alone, as before signing keys, so journals made before them keep working.
Registering again replaces the key: that is how a key is rotated.
"""

from __future__ import annotations

import psycopg

from cardshoe.controller.floor.topics import check_name
from cardshoe.controller.journal.signing import public_key


def checked_key(table_id: str, key_hex: str) -> str:
    """The key as the register keeps it (lower-case hex), or one line saying what is wrong."""
    check_name("table id", table_id)
    key_hex = key_hex.strip().lower()
    public_key(key_hex)
    return key_hex


def register_table(connection: psycopg.Connection, table_id: str, key_hex: str) -> str | None:
    """Register (or replace) the table's checked_key; returns the key it replaces, if any."""
    with connection.transaction():
        row = connection.execute(
            "SELECT public_key FROM table_keys WHERE table_id = %s FOR UPDATE", (table_id,)
        ).fetchone()
        connection.execute(
            "INSERT INTO table_keys (table_id, public_key) VALUES (%s, %s) "
            "ON CONFLICT (table_id) DO UPDATE SET public_key = excluded.public_key, "
            "registered_at = now()",
            (table_id, key_hex),
        )
    return None if row is None else str(row[0])
