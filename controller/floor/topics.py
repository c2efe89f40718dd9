"""The MQTT topic tree of the floor feed, as one table of names.

Everything a table publishes lies under cardshoe/v1/{site}/{table_id}/, and
what the floor sends back to a table under .../floor/, so the broker's ACL
can give each table certificate exactly its own subtree (docs/floor.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from cardshoe.controller.errors import UserError
from cardshoe.controller.safe_names import SAFE_NAME_PATTERN, SAFE_NAME_RULE

ROOT = "cardshoe/v1"
INGEST_GROUP = "cardshoe-ingest"
"""The MQTT 5 shared-subscription group every ingest process joins, so they split the load."""


class Leaf(StrEnum):
    """The last levels of a table's topics, and who writes each."""

    EVENTS = "events"
    """Table: every journal record, in order, QoS 1."""
    STATUS = "status"
    """Table: retained online/offline (the last will), version, firmware, chain head."""
    BOARD = "board"
    """Table: retained scoreboard projection."""
    ALARMS = "alarms"
    """Table: a copy of every alarm record."""
    ANCHOR = "floor/anchor"
    """Ingest: retained last contiguous verified record id and hash."""
    FLOOR_ALARMS = "floor/alarms"
    """Ingest: what the floor found wrong with the table's feed (gap, mismatch)."""
    AUTHENTICATE = "floor/authenticate"
    """Floor: a fresh seed the table's software must answer (shoectl floor authenticate)."""
    AUTHENTICATION = "authentication"
    """Table: the uplink's answer to a seed, the installed software's keyed digest."""


def check_name(what: str, name: str) -> str:
    """A site or table id must be one topic level, without MQTT wildcards."""
    if not SAFE_NAME_PATTERN.match(name):
        raise UserError(f"{what} {name!r} is not usable in a topic: use {SAFE_NAME_RULE}")
    return name


def table_topic(site: str, table_id: str, leaf: Leaf) -> str:
    return f"{ROOT}/{site}/{table_id}/{leaf}"


def every_table(leaf: Leaf) -> str:
    """The filter for one leaf of every table on every site."""
    return f"{ROOT}/+/+/{leaf}"


def shared(topic_filter: str) -> str:
    return f"$share/{INGEST_GROUP}/{topic_filter}"


@dataclass(frozen=True)
class TopicName:
    """A table topic taken apart: which site and table, which leaf."""

    site: str
    table_id: str
    leaf: Leaf

    @classmethod
    def parse(cls, topic: str) -> TopicName | None:
        """None for a topic outside the table tree (nothing of ours)."""
        prefix = ROOT + "/"
        if not topic.startswith(prefix):
            return None
        site, _, rest = topic[len(prefix) :].partition("/")
        table_id, _, leaf = rest.partition("/")
        try:
            return cls(site, table_id, Leaf(leaf))
        except ValueError:
            return None
