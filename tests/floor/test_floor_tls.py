"""The floor's broker as docs/floor.md sets it up: TLS, a certificate per table, the ACL."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.floor_support import (
    Floor,
    TableWriter,
    assert_floor_holds,
    chained_messages,
    floor_alarms,
    floor_table,
    wait_for_floor,
)
from support.service_support import wait_until

from cardshoe.controller.floor.broker import BrokerSettings, new_client
from cardshoe.controller.floor.local_servers import Mosquitto

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "docs" / "examples" / "floor"


@pytest.fixture
def certs(tmp_path: Path) -> Path:
    folder = tmp_path / "certs"
    command = ["bash", str(EXAMPLES / "make-certs.sh"), str(folder), "127.0.0.1"]
    subprocess.run([*command, "T1", "T2", "cardshoe-ingest"], check=True, capture_output=True)
    return folder


@pytest.fixture
def tls_broker(tmp_path: Path, certs: Path) -> Iterator[Mosquitto]:
    """The example configuration with this test's port, certificates and ACL."""
    broker = Mosquitto(tmp_path / "tls-mosquitto")
    acl = tmp_path / "acl"
    acl.write_text((EXAMPLES / "acl").read_text(encoding="utf-8"), encoding="utf-8")
    config = (EXAMPLES / "mosquitto.conf").read_text(encoding="utf-8")
    config = config.replace("listener 8883 0.0.0.0", f"listener {broker.port} 127.0.0.1")
    config = config.replace("/etc/mosquitto/cardshoe/acl", str(acl))
    config = config.replace("/etc/mosquitto/cardshoe/", f"{certs}/")
    config = "\n".join(
        line for line in config.splitlines() if not line.startswith(("persistence", "max_"))
    )
    broker.listener_config = config + "\nuser root\n"
    broker.start()
    yield broker
    broker.stop()


def tls_url(broker: Mosquitto) -> str:
    return f"mqtts://127.0.0.1:{broker.port}"


def identity(certs: Path, name: str) -> tuple[str, ...]:
    return (
        "--ca",
        str(certs / "ca.crt"),
        "--cert",
        str(certs / f"{name}.crt"),
        "--key",
        str(certs / f"{name}.key"),
    )


def test_each_table_writes_only_its_own_subtree_and_ingest_reads_them_all(
    tmp_path: Path, tls_broker: Mosquitto, certs: Path, dsn: str
) -> None:
    floor = Floor(tmp_path, tls_broker, dsn)
    try:
        floor.ingest_over(tls_url(tls_broker), *identity(certs, "cardshoe-ingest"))
        journals = {table: tmp_path / f"{table}.sqlite" for table in ("T1", "T2")}
        writers = [TableWriter(path, table).start() for table, path in journals.items()]
        for table, path in journals.items():
            floor.uplink_over(tls_url(tls_broker), path, *identity(certs, table))
        time.sleep(1.0)
        for writer in writers:
            writer.stop()
        wait_for_floor(floor, list(journals.values()))
        for path in journals.values():
            assert_floor_holds(floor.dsn, path)

        # T1's certificate on T2's topic: the broker drops it, the floor never sees it.
        forged = chained_messages("T2", 1, first_id=writers[1].written + 1)
        settings = BrokerSettings(
            tls_url(tls_broker), ca=certs / "ca.crt", cert=certs / "T1.crt", key=certs / "T1.key"
        )
        client = new_client(settings, "T1-forger")
        client.connect(settings.host, settings.port)
        client.loop_start()
        client.publish(
            "cardshoe/v1/casino-1/T2/events", forged[0].encode(), qos=1
        ).wait_for_publish(10)
        client.disconnect()
        client.loop_stop()
        time.sleep(1.0)
        assert floor_table(dsn, "T2")["contiguous_id"] == writers[1].written
        assert floor_alarms(dsn) == []
    finally:
        floor.stop_all()


def connects(settings: BrokerSettings, client_id: str) -> bool:
    """Whether the broker accepts this client (a CONNACK with success) within 3 s."""
    accepted = threading.Event()
    client = new_client(settings, client_id)
    client.on_connect = lambda c, u, f, reason, p: reason.is_failure or accepted.set()
    try:
        client.connect(settings.host, settings.port)
    except OSError:  # the TLS handshake failed outright
        return False
    client.loop_start()
    try:
        return accepted.wait(3.0)
    finally:
        client.disconnect()
        client.loop_stop()


def test_a_client_without_a_certificate_of_the_floor_is_refused(
    tls_broker: Mosquitto, certs: Path, tmp_path: Path
) -> None:
    url = tls_url(tls_broker)
    ca = certs / "ca.crt"
    assert connects(BrokerSettings(url, ca=ca, cert=certs / "T1.crt", key=certs / "T1.key"), "T1")
    assert not connects(BrokerSettings(url, ca=ca), "no-certificate")
    other = tmp_path / "other-ca"
    subprocess.run(
        ["bash", str(EXAMPLES / "make-certs.sh"), str(other), "127.0.0.1", "T1"],
        check=True,
        capture_output=True,
    )
    stranger = BrokerSettings(url, ca=ca, cert=other / "T1.crt", key=other / "T1.key")
    assert not connects(stranger, "T1-from-another-ca")


def test_a_table_certificate_cannot_take_over_the_client_id_of_ingest_or_another_table(
    tmp_path: Path, tls_broker: Mosquitto, certs: Path, dsn: str
) -> None:
    """Issue 21, case 5: the client id is the certificate's, so T1 can kick only itself."""
    floor = Floor(tmp_path, tls_broker, dsn)
    try:
        ingest = floor.ingest_over(
            tls_url(tls_broker), "--client-id", "ingest-1", *identity(certs, "cardshoe-ingest")
        )
        journal = tmp_path / "T2.sqlite"
        writer = TableWriter(journal, "T2").start()
        uplink = floor.uplink_over(tls_url(tls_broker), journal, *identity(certs, "T2"))
        wait_until(lambda: "uplink connected" in uplink.log, f"T2's uplink\n{uplink.log}")
        t1 = BrokerSettings(
            tls_url(tls_broker), ca=certs / "ca.crt", cert=certs / "T1.crt", key=certs / "T1.key"
        )
        for _ in range(3):
            for victim in ("ingest-1", "cardshoe-ingest", "uplink-casino-1-T2", "T2"):
                assert connects(t1, victim)
        writer.stop()
        wait_for_floor(floor, [journal])
        assert_floor_holds(dsn, journal)
        assert "lost the broker" not in ingest.log
        assert "lost the broker" not in uplink.log
    finally:
        floor.stop_all()
