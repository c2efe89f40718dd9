"""The pit's users, their sessions and the audit trail, all in the floor database.

A session is a random token in an HttpOnly cookie; the database keeps only
its SHA-256, so a copy of the database opens no session. Each session has
its own CSRF token, which every state-changing request must repeat in the
X-CSRF-Token header: a page of another site can make the browser send the
cookie, but cannot read the token.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from enum import StrEnum

import psycopg

from cardshoe.controller.errors import UserError
from cardshoe.controller.pit.login_limits import PastLogin
from cardshoe.controller.pit.passwords import password_problem
from cardshoe.controller.secret_hash import decoy_hash, hash_secret, secret_matches

SESSION_HOURS = 12
"""A shift: a session unused for longer must log in again."""
USER_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


class Role(StrEnum):
    VIEWER = "viewer"
    """Reads the floor; sees no surveillance alarms and acknowledges nothing."""
    SUPERVISOR = "supervisor"
    """Reads the floor and acknowledges its alarms."""
    SURVEILLANCE = "surveillance"
    """Everything a supervisor may, and the surveillance alarms (advantage, stacked shoe)."""

    @property
    def may_acknowledge(self) -> bool:
        return self is not Role.VIEWER

    @property
    def sees_surveillance_alarms(self) -> bool:
        return self is not Role.VIEWER


class AuditAction(StrEnum):
    LOGIN = "login"
    LOGIN_FAILED = "login_failed"
    LOGIN_LOCKED = "login_locked"
    """Too many failed logins for a user or from a client: refused for a while (login_limits)."""
    LOGOUT = "logout"
    ACKNOWLEDGE = "acknowledge"
    USER_ADDED = "user_added"


@dataclass(frozen=True)
class Session:
    user: str
    role: Role
    csrf_token: str


@dataclass(frozen=True)
class NewSession:
    cookie_token: str
    session: Session


def user_name_problem(name: str) -> str | None:
    if not 1 <= len(name) <= 64 or not set(name) <= USER_NAME_CHARS:
        return f"user name {name!r} is not 1-64 letters, digits, '.', '_' or '-'"
    return None


def add_user(db: psycopg.Connection, name: str, role: Role, password: str) -> None:
    """Create a user, or refuse with the reason; an existing name is refused, never replaced."""
    problem = user_name_problem(name) or password_problem(password)
    if problem is not None:
        raise UserError(problem)
    with db.transaction():
        added = db.execute(
            "INSERT INTO pit_users (name, role, password_hash) VALUES (%s, %s, %s) "
            "ON CONFLICT DO NOTHING RETURNING name",
            (name, role.value, hash_secret(password)),
        ).fetchone()
        if added is None:
            raise UserError(f"user {name!r} exists already: choose another name")
        audit(db, name, AuditAction.USER_ADDED, f"role {role.value}")


def log_in(db: psycopg.Connection, name: str, password: str, client: str) -> NewSession | None:
    """A new session for the right password, None otherwise; both are audited, with the
    client's address."""
    with db.transaction():
        row = db.execute(
            "SELECT role, password_hash FROM pit_users WHERE name = %s", (name,)
        ).fetchone()
        stored = decoy_hash() if row is None else row[1]
        if not secret_matches(password, stored) or row is None:
            audit(
                db, name, AuditAction.LOGIN_FAILED, f"wrong user or password from {client}", client
            )
            return None
        cookie_token, csrf_token = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        db.execute(
            "INSERT INTO pit_sessions (token_hash, user_name, csrf_token, expires_at) "
            "VALUES (%s, %s, %s, now() + make_interval(hours => %s))",
            (_token_hash(cookie_token), name, csrf_token, SESSION_HOURS),
        )
        audit(db, name, AuditAction.LOGIN, f"session opened from {client}", client)
    return NewSession(cookie_token, Session(name, Role(row[0]), csrf_token))


def session_of(db: psycopg.Connection, cookie_token: str) -> Session | None:
    """The live session a cookie opens, None when it opens none."""
    row = db.execute(
        "SELECT s.user_name, u.role, s.csrf_token FROM pit_sessions s "
        "JOIN pit_users u ON u.name = s.user_name "
        "WHERE s.token_hash = %s AND s.expires_at > now()",
        (_token_hash(cookie_token),),
    ).fetchone()
    return None if row is None else Session(row[0], Role(row[1]), row[2])


def log_out(db: psycopg.Connection, cookie_token: str, session: Session) -> None:
    with db.transaction():
        db.execute("DELETE FROM pit_sessions WHERE token_hash = %s", (_token_hash(cookie_token),))
        db.execute("DELETE FROM pit_sessions WHERE expires_at < now()")
        audit(db, session.user, AuditAction.LOGOUT, "session closed")


def audit(
    db: psycopg.Connection,
    user: str,
    action: AuditAction,
    detail: str,
    client: str | None = None,
) -> None:
    """One row of the audit trail; client, the address a login came from, for logins."""
    db.execute(
        "INSERT INTO pit_audit (user_name, action, detail, client) VALUES (%s, %s, %s, %s)",
        (user, action.value, detail, client),
    )


def recent_logins(db: psycopg.Connection, within_s: float) -> list[PastLogin]:
    """The logins audited within the last within_s seconds, oldest first (for recall)."""
    rows = db.execute(
        "SELECT extract(epoch FROM clock_timestamp() - at)::float8, user_name, client, "
        "action = %(login)s FROM pit_audit WHERE action IN (%(login)s, %(failed)s) "
        "AND client IS NOT NULL AND at > clock_timestamp() - make_interval(secs => %(within)s) "
        "ORDER BY id",
        {
            "login": AuditAction.LOGIN.value,
            "failed": AuditAction.LOGIN_FAILED.value,
            "within": within_s,
        },
    ).fetchall()
    return [PastLogin(max(0.0, age), user, client, ok) for age, user, client, ok in rows]


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()
