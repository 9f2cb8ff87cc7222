"""The state of one cluster's Kafka topics (schema component ``kafka``): the tables, the
cluster database and clock they are written and read through, and the plain reads of the
topic rows (rowid, existence, names).

The rule modules :mod:`.topic_admin`, :mod:`.topic_log`, :mod:`.topic_retention` and
:mod:`.topic_groups` take a :class:`TopicStore` as their first argument; the ``Kafka`` facade
(:mod:`.topics`) is one and binds their functions as its methods. This module imports none of
them: arrows point down (facade -> rules -> state -> store).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..clock import Clock, SystemClock
from ..store import Cluster
from .authz import authorized, check_request, visible
from .tables import KafkaSchema
from .topic_types import find_topic, get_topic

__all__ = ["COMPONENT", "SCHEMA_STEPS", "TopicStore"]

COMPONENT = "kafka"

SCHEMA_STEPS: list[list[str]] = [
    [
        "CREATE TABLE topics ("
        " id INTEGER PRIMARY KEY,"
        " name TEXT NOT NULL UNIQUE,"
        " topic_id TEXT NOT NULL,"
        " partitions INTEGER NOT NULL,"
        " configs TEXT NOT NULL DEFAULT '{}',"
        " created_ms INTEGER NOT NULL,"
        " mirror_link TEXT)",
        "CREATE TABLE partitions ("
        " topic INTEGER NOT NULL,"
        " partition INTEGER NOT NULL,"
        " log_start INTEGER NOT NULL DEFAULT 0,"
        " log_end INTEGER NOT NULL DEFAULT 0,"
        " bytes INTEGER NOT NULL DEFAULT 0,"
        # compaction bookkeeping: first dirty offset, bytes of [log_start, cleaned), time the
        # oldest kept tombstone may go (0: none)
        " cleaned INTEGER NOT NULL DEFAULT 0,"
        " clean_bytes INTEGER NOT NULL DEFAULT 0,"
        " tomb_due_ms INTEGER NOT NULL DEFAULT 0,"
        " PRIMARY KEY(topic, partition)) WITHOUT ROWID",
        "CREATE TABLE records ("
        " id INTEGER PRIMARY KEY,"
        " ts INTEGER NOT NULL,"
        " key BLOB,"
        " value BLOB,"
        " headers BLOB)",
        "CREATE TABLE group_offsets ("
        " grp TEXT NOT NULL,"
        " topic TEXT NOT NULL,"
        " partition INTEGER NOT NULL,"
        " committed INTEGER NOT NULL,"
        " metadata TEXT NOT NULL DEFAULT '',"
        " commit_ms INTEGER NOT NULL,"
        " PRIMARY KEY(grp, topic, partition)) WITHOUT ROWID",
        "CREATE TABLE group_members ("
        " grp TEXT NOT NULL,"
        " member TEXT NOT NULL,"
        " client_id TEXT NOT NULL DEFAULT '',"
        " topics TEXT NOT NULL DEFAULT '[]',"
        " joined_ms INTEGER NOT NULL,"
        " heartbeat_ms INTEGER NOT NULL,"
        " session_timeout_ms INTEGER NOT NULL,"
        " PRIMARY KEY(grp, member)) WITHOUT ROWID",
    ],
    # a partition's epochs where its log was cut back (core/kafka/epochs.py)
    [
        "CREATE TABLE partition_epochs ("
        " topic INTEGER NOT NULL,"
        " partition INTEGER NOT NULL,"
        " epoch INTEGER NOT NULL,"
        " start_offset INTEGER NOT NULL,"
        " PRIMARY KEY(topic, partition, epoch)) WITHOUT ROWID",
    ],
    # a consumer group's generation: one more on every change of its members (Kafka's
    # ClassicGroup generationId; a commit names the generation it was assigned in)
    [
        "CREATE TABLE group_generations ("
        " grp TEXT PRIMARY KEY,"
        " generation INTEGER NOT NULL) WITHOUT ROWID",
    ],
    # a consumer group's rebalance (Kafka's ClassicGroup PreparingRebalance): the members
    # rejoin before a new generation's assignment is made; each member keeps the partitions
    # of the generation it is in (member_gen, assigned) until then
    [
        "ALTER TABLE group_generations ADD COLUMN preparing INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE group_generations ADD COLUMN counts TEXT NOT NULL DEFAULT '{}'",
        "ALTER TABLE group_members ADD COLUMN member_gen INTEGER NOT NULL DEFAULT -1",
        "ALTER TABLE group_members ADD COLUMN rejoined INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE group_members ADD COLUMN assigned TEXT NOT NULL DEFAULT '[]'",
    ],
    # a consumer group's rebalance timeout (Kafka's JoinGroup rebalance_timeout_ms, the
    # consumer's max.poll.interval.ms, default 300000): a rebalance begun at T completes at T +
    # the largest of its members' without those that have not joined again (GroupMetadata
    # Manager completeClassicGroupJoin). A rebalance under way in an older store gets its
    # deadline from its members' last heartbeat (the rebalance began no later), at the
    # default timeout, the one its members had
    [
        "ALTER TABLE group_members ADD COLUMN rebalance_timeout_ms INTEGER NOT NULL "
        "DEFAULT 300000",
        "ALTER TABLE group_generations ADD COLUMN rebalance_deadline_ms INTEGER NOT NULL "
        "DEFAULT 0",
        "UPDATE group_generations SET rebalance_deadline_ms = 300000 + COALESCE(("
        "SELECT MAX(m.heartbeat_ms) FROM group_members m WHERE m.grp = group_generations.grp"
        "), 0) WHERE preparing = 1",
    ],
]


class TopicStore:
    """The topics, records and consumer groups of one cluster database: what the rule
    modules read and write through (``_schema``) and the time they stamp (``clock``)."""

    def __init__(self, cluster: Cluster, clock: Clock | None = None, *,
                 principal: str | None = None) -> None:
        self.cluster = cluster
        self.clock = clock or SystemClock()
        # the client the requests are made for (None: the operator, never refused)
        self.principal = principal
        # the tables: made by the first write when missing (a refused one makes nothing)
        self._schema = KafkaSchema(cluster, [(COMPONENT, SCHEMA_STEPS)])

    def authorize(self, request: str, *, topic: str | None = None, group: str | None = None,
                  topics: Iterable[str] = ()) -> None:
        """Kafka's authorization of ``request`` for :attr:`principal` (:mod:`.authz`): the
        refused one's Kafka error; nothing asked for the operator."""
        if self.principal is not None:
            check_request(self.cluster, self.principal, request, topic=topic, group=group,
                          topics=topics)

    def visible(self, resource_type: str, names: Iterable[str]) -> list[str]:
        """``names`` :attr:`principal` may DESCRIBE (every one for the operator)."""
        return visible(self.cluster, self.principal, resource_type, names)

    def authorized(self, operation: str, resource_type: str, names: Iterable[str]) -> list[str]:
        """``names`` :attr:`principal` may ``operation`` (every one for the operator)."""
        return authorized(self.cluster, self.principal, operation, resource_type, names)

    def now_ms(self) -> int:
        return self.clock.now_ns() // 1_000_000

    def topic_rowid(self, name: str) -> int:
        """The rowid of topic ``name`` (the ``topic_rowid`` of topic_records.py
        ``record_key``)."""
        with self._schema.read() as conn:
            return get_topic(conn, name).rowid

    def has_topic(self, name: str) -> bool:
        with self._schema.read() as conn:
            return find_topic(conn, name) is not None

    def topic_names(self) -> list[str]:
        with self._schema.read() as conn:
            return [n for (n,) in conn.execute("SELECT name FROM topics ORDER BY name")]
