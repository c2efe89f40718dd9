"""The pit's connections to the floor database: one per worker thread, made when first used.

Starlette runs each request's database work in its thread pool, whose
threads live on, so each keeps its connection and a request pays no
connect. Connections are in autocommit: a read never holds a transaction
open, and writes open their own (connection.transaction()).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import psycopg
from starlette.concurrency import run_in_threadpool

from cardshoe.controller.errors import UserError
from cardshoe.controller.floor.schema import connect

T = TypeVar("T")


class DatabaseAway(Exception):
    """The floor database cannot be reached: the request is answered 503, not lost silently."""


class FloorDatabase:
    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self._local = threading.local()

    async def run(self, work: Callable[..., T], *args: object) -> T:
        return await run_in_threadpool(self._run, work, *args)

    def _run(self, work: Callable[..., T], *args: object) -> T:
        """Run work(connection, *args); once more on a new connection if the old one broke
        (the database restarted), then give up with DatabaseAway."""
        try:
            return work(self._connection(), *args)
        except psycopg.OperationalError:
            self._local.db.close()
        try:
            return work(self._connection(), *args)
        except psycopg.OperationalError as exc:
            self._local.db.close()
            raise DatabaseAway(f"the floor database failed: {exc}") from None

    def _connection(self) -> psycopg.Connection:
        db: psycopg.Connection | None = getattr(self._local, "db", None)
        if db is None or db.closed:
            try:
                db = connect(self.dsn, autocommit=True)
            except UserError as exc:
                raise DatabaseAway(str(exc)) from None
            self._local.db = db
        return db
