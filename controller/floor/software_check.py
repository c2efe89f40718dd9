"""Software authentication from the floor: a fresh seed to each table, each answer judged.

GSA's GAT protocol in the floor's terms: `shoectl floor authenticate` publishes a random
seed the table has never seen to the table's floor/authenticate topic; the table's uplink
answers on .../authentication with the keyed digest of the software installed
(service/software_identity.py); the floor recomputes the digest the approved release gives
for that seed, from the release's manifest `shoectl floor approve` stored, and stores the
check. Only the genuine files give the answer, and a seed is used once, so an answer cannot
be kept from an earlier check. A check that is not verified is also a floor alarm.
"""

from __future__ import annotations

import logging
import queue
import secrets
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import paho.mqtt.client as mqtt
import psycopg
from paho.mqtt.reasoncodes import ReasonCode

from cardshoe.controller.errors import EXIT_DEVICE_UNAVAILABLE, UserError
from cardshoe.controller.floor.broker import KEEPALIVE_S, BrokerSettings, new_client
from cardshoe.controller.floor.messages import (
    AuthenticateRequest,
    AuthenticationAnswer,
    MessageError,
)
from cardshoe.controller.floor.schema import require_current
from cardshoe.controller.floor.topics import Leaf, TopicName, every_table, table_topic
from cardshoe.controller.service.software_identity import (
    ManifestEntry,
    keyed_digest,
    manifest_bytes,
    manifest_sha256,
)
from cardshoe.controller.timestamps import utc_timestamp

log = logging.getLogger(__name__)

SEED_BYTES = 32
SOFTWARE_ALARM = "software"
"""The floor_alarms kind of a check that is not verified."""
SUBSCRIBE_WAIT_S = 10.0


class Verdict(StrEnum):
    VERIFIED = "verified"
    """The answer is the approved release's digest for the seed."""
    MISMATCH = "mismatch"
    """The table reports an approved version, but its files are not that release's."""
    UNAPPROVED = "unapproved"
    """The table reports a version no `floor approve` stored."""
    REFUSED = "refused"
    """The table could not answer the seed (its error is the detail)."""
    NO_ANSWER = "no_answer"
    """No answer within the wait: the uplink is down, or the table is gone."""


@dataclass(frozen=True)
class ApprovedRelease:
    version: str
    manifest: bytes

    @property
    def files(self) -> int:
        return self.manifest.count(b"\n")


@dataclass(frozen=True)
class Exchange:
    """One seed sent to one table, and its answer if one came in time."""

    table_id: str
    seed: str
    requested_at: datetime
    answer: AuthenticationAnswer | None
    answered_at: datetime | None


@dataclass(frozen=True)
class SoftwareCheck:
    """One seed sent to one table, and what became of it."""

    table_id: str
    seed: str
    requested_at: datetime
    answered_at: datetime | None
    version: str | None
    digest: str | None
    expected: str | None
    verdict: Verdict
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {
            "table_id": self.table_id,
            "seed": self.seed,
            "requested_at": utc_timestamp(self.requested_at),
            "answered_at": None if self.answered_at is None else utc_timestamp(self.answered_at),
            "version": self.version,
            "digest": self.digest,
            "expected": self.expected,
            "verdict": str(self.verdict),
            "detail": self.detail,
        }


def judge(
    seed: str, answer: AuthenticationAnswer | None, approved: Mapping[str, ApprovedRelease]
) -> tuple[Verdict, str | None, str]:
    """The verdict on one answer, the digest the approved release gives, and why."""
    if answer is None:
        return Verdict.NO_ANSWER, None, "the table did not answer"
    if answer.error is not None or answer.digest is None or answer.version is None:
        return Verdict.REFUSED, None, f"the table answered: {answer.error}"
    release = approved.get(answer.version)
    if release is None:
        known = ", ".join(sorted(approved)) or "none"
        detail = f"cardshoe {answer.version} is not an approved release (approved: {known})"
        return Verdict.UNAPPROVED, None, detail
    expected = keyed_digest(bytes.fromhex(seed), release.manifest)
    if answer.digest == expected:
        return Verdict.VERIFIED, expected, f"cardshoe {answer.version} as approved"
    detail = (
        f"cardshoe {answer.version}'s files differ from the approved release "
        f"({answer.files} files answered, {release.files} approved)"
    )
    return Verdict.MISMATCH, expected, detail


def approve_release(
    connection: psycopg.Connection, version: str, entries: Iterable[ManifestEntry]
) -> ApprovedRelease:
    """Store (or replace) an approved release's manifest, the reference for every seed."""
    require_current(connection)
    release = ApprovedRelease(version, manifest_bytes(entries))
    with connection.transaction():
        connection.execute(
            "INSERT INTO approved_releases (version, manifest, manifest_sha256, files) "
            "VALUES (%s, %s, %s, %s) ON CONFLICT (version) DO UPDATE SET "
            "manifest = EXCLUDED.manifest, manifest_sha256 = EXCLUDED.manifest_sha256, "
            "files = EXCLUDED.files, approved_at = now()",
            (version, release.manifest, manifest_sha256(release.manifest), release.files),
        )
    return release


def approved_releases(connection: psycopg.Connection) -> dict[str, ApprovedRelease]:
    rows = connection.execute("SELECT version, manifest FROM approved_releases").fetchall()
    return {version: ApprovedRelease(version, bytes(manifest)) for version, manifest in rows}


def tables_to_check(connection: psycopg.Connection, table_id: str | None) -> dict[str, str]:
    """Table id -> site: one table, or every table the floor has heard from."""
    require_current(connection)
    rows = connection.execute(
        "SELECT table_id, site FROM floor_tables WHERE %s::text IS NULL OR table_id = %s "
        "ORDER BY table_id",
        (table_id, table_id),
    ).fetchall()
    if table_id is not None and not rows:
        raise UserError(
            f"the floor has heard nothing from table {table_id!r}: "
            "'shoectl floor status' lists the tables it knows"
        )
    return {row[0]: row[1] for row in rows}


def authenticate_tables(
    broker: BrokerSettings, tables: Mapping[str, str], wait_s: float
) -> list[Exchange]:
    """Send each table (id -> site) a fresh seed and wait up to wait_s for the answers."""
    answers: queue.Queue[tuple[TopicName, bytes]] = queue.Queue()
    subscribed = queue.Queue[bool]()
    client = new_client(broker, f"cardshoe-floor-authenticate-{secrets.token_hex(4)}")

    def on_connect(
        client: mqtt.Client, userdata: Any, flags: Any, reason: ReasonCode, props: Any
    ) -> None:
        if not reason.is_failure:
            client.subscribe(every_table(Leaf.AUTHENTICATION), qos=1)

    def on_subscribe(
        client: mqtt.Client, userdata: Any, mid: int, reasons: list[ReasonCode], props: Any
    ) -> None:
        subscribed.put(not any(reason.is_failure for reason in reasons))

    def on_message(client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        topic = TopicName.parse(message.topic)
        if topic is not None:
            answers.put((topic, bytes(message.payload)))

    client.on_connect, client.on_subscribe, client.on_message = (
        on_connect,
        on_subscribe,
        on_message,
    )
    client.connect_async(broker.host, broker.port, keepalive=KEEPALIVE_S)
    client.loop_start()
    try:
        try:
            accepted = subscribed.get(timeout=SUBSCRIBE_WAIT_S)
        except queue.Empty:
            accepted = False
        if not accepted:
            raise UserError(
                f"cannot subscribe at the broker {broker.url} within {SUBSCRIBE_WAIT_S:g} s: "
                "check that it runs and lets this client read .../authentication",
                EXIT_DEVICE_UNAVAILABLE,
            )
        sent: dict[str, tuple[str, datetime]] = {}
        for table_id, site in tables.items():
            seed = secrets.token_hex(SEED_BYTES)
            sent[table_id] = (seed, datetime.now(UTC))
            topic = table_topic(site, table_id, Leaf.AUTHENTICATE)
            client.publish(topic, AuthenticateRequest(seed).encode(), qos=1)
        return _collect(answers, sent, wait_s)
    finally:
        client.disconnect()
        client.loop_stop()


def _collect(
    answers: queue.Queue[tuple[TopicName, bytes]],
    sent: Mapping[str, tuple[str, datetime]],
    wait_s: float,
) -> list[Exchange]:
    """The answers to this run's seeds until each table answered or the wait is over; an
    answer to another seed (an old one replayed) or on another table's topic is ignored."""
    received: dict[str, tuple[AuthenticationAnswer, datetime]] = {}
    deadline = time.monotonic() + wait_s
    while len(received) < len(sent) and (left := deadline - time.monotonic()) > 0:
        try:
            topic, body = answers.get(timeout=left)
        except queue.Empty:
            break
        try:
            answer = AuthenticationAnswer.decode(body)
        except MessageError as exc:
            log.warning("ignored an answer of table %s: %s", topic.table_id, exc)
            continue
        expected = sent.get(topic.table_id)
        if expected is None or answer.seed != expected[0] or answer.table_id != topic.table_id:
            log.warning("ignored an answer of table %s to a seed not sent now", topic.table_id)
            continue
        received[topic.table_id] = (answer, datetime.now(UTC))
    exchanges = []
    for table_id, (seed, requested_at) in sent.items():
        got = received.get(table_id)
        exchanges.append(
            Exchange(
                table_id,
                seed,
                requested_at,
                None if got is None else got[0],
                None if got is None else got[1],
            )
        )
    return exchanges


def record_checks(
    connection: psycopg.Connection, exchanges: Iterable[Exchange]
) -> list[SoftwareCheck]:
    """Judge and store each answer; a check that is not verified is also a floor alarm."""
    approved = approved_releases(connection)
    checks = []
    with connection.transaction():
        for exchange in exchanges:
            answer = exchange.answer
            verdict, expected, detail = judge(exchange.seed, answer, approved)
            check = SoftwareCheck(
                exchange.table_id,
                exchange.seed,
                exchange.requested_at,
                exchange.answered_at,
                None if answer is None else answer.version,
                None if answer is None else answer.digest,
                expected,
                verdict,
                detail,
            )
            connection.execute(
                "INSERT INTO software_checks (table_id, seed, requested_at, answered_at, "
                "version, digest, expected, verdict, detail) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    check.table_id,
                    check.seed,
                    check.requested_at,
                    check.answered_at,
                    check.version,
                    check.digest,
                    expected,
                    str(verdict),
                    detail,
                ),
            )
            if verdict is not Verdict.VERIFIED:
                log.error("software check of table %s: %s: %s", check.table_id, verdict, detail)
                connection.execute(
                    "INSERT INTO floor_alarms (table_id, kind, detail) VALUES (%s, %s, %s)",
                    (check.table_id, SOFTWARE_ALARM, f"software {verdict}: {detail}"),
                )
            checks.append(check)
    return checks
