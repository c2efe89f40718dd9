"""The floor database: its tables, created and migrated by shoectl floor init-db.

MIGRATIONS[i] turns a version-i database into version i + 1; the version
reached is written in floor_schema, so init-db run again (or by a newer
cardshoe) applies only the steps that are missing, in one transaction.
"""

from __future__ import annotations

import psycopg
from psycopg.conninfo import conninfo_to_dict

from cardshoe.controller.errors import UserError
from cardshoe.controller.journal.chain import GENESIS_HASH
from cardshoe.controller.record_kinds import (
    ALARM,
    COMMAND_SIGN_IN,
    HOLD_ENDED,
    HOLD_STARTED,
    IRREGULARITY,
    ROUND_OPENED,
    ROUND_RESULT,
    ROUND_VOID,
    SHOE_ENDED,
    SHOE_STARTED,
)

_PIT_KINDS = (
    ALARM,
    IRREGULARITY,
    HOLD_STARTED,
    HOLD_ENDED,
    SHOE_STARTED,
    SHOE_ENDED,
    ROUND_OPENED,
    ROUND_RESULT,
    ROUND_VOID,
    COMMAND_SIGN_IN,
)
"""The kinds the pit reads of the journals (its partial index, schema step 4); the SQL they
make is the text the step shipped with, which a test checks."""


def sql_list(kinds: tuple[str, ...]) -> str:
    """The record kinds as an SQL list of literals ('alarm', 'irregularity'): how the schema's
    partial indexes name their kinds, and how a query must name them to be seen to match."""
    return ", ".join(repr(kind) for kind in kinds)


ALARM_KINDS = (ALARM, IRREGULARITY, HOLD_STARTED)
"""The journal's kinds the pit lists as alarms (pit/alarms.py): the kinds of their partial
index (schema step 5), which the pit's queries name in the same words so PostgreSQL uses it."""

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE floor_schema (
            version integer NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now()
        )""",
        """CREATE TABLE journal_records (
            table_id text NOT NULL,
            record_id bigint NOT NULL,
            time_ns bigint NOT NULL,
            kind text NOT NULL,
            shoe_id text,
            round_no integer,
            device_serial text,
            device_seq bigint,
            payload jsonb NOT NULL,
            hash text NOT NULL,
            prev_hash text NOT NULL,
            received_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            PRIMARY KEY (table_id, record_id)
        )""",
        f"""CREATE TABLE floor_tables (
            table_id text PRIMARY KEY,
            site text NOT NULL,
            contiguous_id bigint NOT NULL DEFAULT 0,
            contiguous_hash text NOT NULL DEFAULT '{GENESIS_HASH}',
            last_record_id bigint NOT NULL DEFAULT 0,
            last_seen timestamptz,
            gap_since timestamptz,
            gap_reported boolean NOT NULL DEFAULT false,
            chain_ok boolean NOT NULL DEFAULT true,
            online boolean,
            status jsonb,
            status_at timestamptz
        )""",
        """CREATE TABLE floor_alarms (
            id bigserial PRIMARY KEY,
            table_id text NOT NULL,
            record_id bigint,
            kind text NOT NULL,
            detail text NOT NULL,
            message jsonb,
            raised_at timestamptz NOT NULL DEFAULT now()
        )""",
        "CREATE INDEX floor_alarms_by_table ON floor_alarms (table_id, id)",
    ),
    (
        """CREATE TABLE approved_releases (
            version text PRIMARY KEY,
            manifest bytea NOT NULL,
            manifest_sha256 text NOT NULL,
            files integer NOT NULL,
            approved_at timestamptz NOT NULL DEFAULT now()
        )""",
        """CREATE TABLE software_checks (
            id bigserial PRIMARY KEY,
            table_id text NOT NULL,
            seed text NOT NULL,
            requested_at timestamptz NOT NULL,
            answered_at timestamptz,
            version text,
            digest text,
            expected text,
            verdict text NOT NULL,
            detail text NOT NULL
        )""",
        "CREATE INDEX software_checks_by_table ON software_checks (table_id, id)",
    ),
    (
        # Issue 21: a message ingest cannot take is kept here, acknowledged, never a crash.
        """CREATE TABLE rejected_messages (
            id bigserial PRIMARY KEY,
            site text NOT NULL,
            table_id text NOT NULL,
            leaf text NOT NULL,
            body_sha256 text NOT NULL,
            body_bytes integer NOT NULL,
            reason text NOT NULL,
            received_at timestamptz NOT NULL DEFAULT now()
        )""",
        # The public half of each registered table's signing key (journal/signing.py).
        """CREATE TABLE table_keys (
            table_id text PRIMARY KEY,
            public_key text NOT NULL,
            registered_at timestamptz NOT NULL DEFAULT now()
        )""",
        "ALTER TABLE journal_records ADD COLUMN signature text",
    ),
    (
        # The pit (docs/pit.md): its users, their sessions, acknowledgements and the audit.
        """CREATE TABLE pit_users (
            name text PRIMARY KEY,
            role text NOT NULL CHECK (role IN ('viewer', 'supervisor', 'surveillance')),
            password_hash text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now()
        )""",
        """CREATE TABLE pit_sessions (
            token_hash text PRIMARY KEY,
            user_name text NOT NULL REFERENCES pit_users ON DELETE CASCADE,
            csrf_token text NOT NULL,
            expires_at timestamptz NOT NULL
        )""",
        """CREATE TABLE pit_alarm_acks (
            alarm_id text PRIMARY KEY,
            acknowledged_by text NOT NULL,
            acknowledged_at timestamptz NOT NULL DEFAULT now(),
            note text NOT NULL
        )""",
        """CREATE TABLE pit_audit (
            id bigserial PRIMARY KEY,
            at timestamptz NOT NULL DEFAULT clock_timestamp(),
            user_name text NOT NULL,
            action text NOT NULL,
            detail text NOT NULL
        )""",
        # What the pit reads of the journals, without scanning every card of every table.
        "CREATE INDEX journal_records_pit_kinds ON journal_records (table_id, kind, record_id) "
        f"WHERE kind IN ({sql_list(_PIT_KINDS)})",
    ),
    (
        # Each table's rounds among its verified records, kept by ingest as its chain moves on:
        # the pit's tiles read it instead of counting every result the floor ever held.
        "ALTER TABLE floor_tables ADD COLUMN rounds bigint NOT NULL DEFAULT 0",
        "UPDATE floor_tables t SET rounds = (SELECT count(*) FROM journal_records r "
        f"WHERE r.table_id = t.table_id AND r.kind = '{ROUND_RESULT}' "
        "AND r.record_id <= t.contiguous_id)",
        # The pit's alarms of the journals, which its tiles count on every refresh: without an
        # index of their own, each count scanned every record of every table.
        "CREATE INDEX journal_records_alarm_kinds ON journal_records (table_id, record_id) "
        f"WHERE kind IN ({sql_list(ALARM_KINDS)})",
        # The pit's day (pit/pace.py) reads its rounds, holds and shoes by time, not by table.
        "CREATE INDEX journal_records_pit_times ON journal_records (time_ns) "
        f"WHERE kind IN ({sql_list(_PIT_KINDS)})",
        # The client address of each login, so a restarted pit counts again the failed logins
        # it had seen (pit/login_limits.py): a restart no longer lifts a guesser's lockout.
        "ALTER TABLE pit_audit ADD COLUMN client text",
    ),
)
"""The schema steps, oldest first; never edit a step that has shipped, add one."""

SCHEMA_VERSION = len(MIGRATIONS)


def connect(dsn: str, *, autocommit: bool = False) -> psycopg.Connection:
    """A connection to the floor database; a refusal is one line naming the cause.

    A DSN libpq cannot even parse is the user's typing, not an unreachable database: it is bad
    input, with the form to write, before any connection is tried."""
    try:
        conninfo_to_dict(dsn)
    except (psycopg.ProgrammingError, UnicodeEncodeError) as exc:
        # UnicodeEncodeError: bytes that are not UTF-8, typed or from a configuration.
        raise UserError(
            f"--dsn {dsn!r} is not a PostgreSQL connection string ({_first_line(exc)}): "
            "write postgresql://USER@HOST:PORT/DB, for example "
            "postgresql://floor@db.floor.example:5432/floor"
        ) from None
    try:
        return psycopg.connect(dsn, autocommit=autocommit, connect_timeout=10)
    except psycopg.Error as exc:
        raise UserError(f"cannot reach the floor database: {_first_line(exc)}", 3) from None


def schema_version(connection: psycopg.Connection) -> int:
    row = connection.execute("SELECT to_regclass('floor_schema') IS NOT NULL").fetchone()
    if row is None or not row[0]:
        return 0
    version = connection.execute("SELECT max(version) FROM floor_schema").fetchone()
    return 0 if version is None or version[0] is None else int(version[0])


SCHEMA_LOCK = "hashtext('cardshoe-floor-schema')"
"""The advisory lock a migration holds alone and each of ingest's transactions shares."""


def migrate(connection: psycopg.Connection) -> tuple[int, int]:
    """Bring the schema to SCHEMA_VERSION; returns the versions before and after.

    It waits for the ingest transactions under way to commit, and holds new ones
    until it has committed (hold_schema)."""
    with connection.transaction():
        connection.execute(f"SELECT pg_advisory_xact_lock({SCHEMA_LOCK})")
        before = schema_version(connection)
        if before > SCHEMA_VERSION:
            raise UserError(
                f"the floor database has schema {before}, newer than this cardshoe's "
                f"{SCHEMA_VERSION}: upgrade cardshoe"
            )
        for step in MIGRATIONS[before:]:
            for statement in step:
                connection.execute(statement)
        if before < SCHEMA_VERSION:
            connection.execute("INSERT INTO floor_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
    return before, SCHEMA_VERSION


def require_current(connection: psycopg.Connection) -> None:
    """Refuse to ingest into, or report from, a database init-db has not prepared."""
    found = schema_version(connection)
    if found != SCHEMA_VERSION:
        raise UserError(
            f"the floor database has schema {found}, this cardshoe needs {SCHEMA_VERSION}: "
            "run 'shoectl floor init-db --dsn ...' first"
        )


def hold_schema(connection: psycopg.Connection) -> None:
    """Keep the schema as it is until the transaction under way ends, and refuse to go on
    in one this cardshoe does not write: init-db run while an older ingest runs.

    That ingest would go on storing records without what the new schema keeps
    beside them (schema 5's round counts). Its transaction rolls back instead, so
    the broker hands its messages to the ingest started after the upgrade.
    """
    connection.execute(f"SELECT pg_advisory_xact_lock_shared({SCHEMA_LOCK})")
    # A statement of its own: its snapshot is taken once the lock is held, after any
    # migration that held it has committed.
    row = connection.execute("SELECT max(version) FROM floor_schema").fetchone()
    found = None if row is None else row[0]
    if found != SCHEMA_VERSION:
        raise UserError(
            f"the floor database's schema changed to {found} while this ingest ran (it "
            f"writes schema {SCHEMA_VERSION}): nothing more is stored; start the ingest of the "
            "cardshoe that ran init-db, which is handed every record not stored"
        )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
