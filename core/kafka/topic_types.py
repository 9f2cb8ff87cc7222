"""The objects of the Kafka engine: what its API returns (Record, TopicInfo with its
PartitionInfo, GroupInfo with its GroupMember and GroupOffset; ``to_json`` in Confluent REST
v3 field names where it has them), and a stored topic row (:class:`TopicRow`) with the
functions that read it inside a transaction (:func:`get_topic`, :func:`find_topic`,
:func:`topic_info`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .errors import KafkaError
from .topic_configs import TOPIC_CONFIG_DEFAULTS, Policy
from .topic_records import text_or_b64

__all__ = [
    "TOPIC_COLS",
    "GroupInfo",
    "GroupMember",
    "GroupOffset",
    "PartitionInfo",
    "Record",
    "TopicInfo",
    "TopicRow",
    "find_topic",
    "get_topic",
    "not_an_increase",
    "row_topic",
    "topic_info",
    "unknown_partition",
    "unknown_topic",
]

@dataclass
class Record:
    partition: int
    offset: int
    timestamp: int  # ms since the epoch
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """``{"partition", "offset", "timestamp", "key", "value", "headers"}``: key, value
        and header values as UTF-8 text when decodable, else ``{"base64": ...}``; headers a
        list of ``[name, value]`` pairs in order."""
        return {
            "partition": self.partition,
            "offset": self.offset,
            "timestamp": self.timestamp,
            "key": text_or_b64(self.key),
            "value": text_or_b64(self.value),
            "headers": [[name, text_or_b64(val)] for name, val in self.headers],
        }


@dataclass
class PartitionInfo:
    partition: int
    log_start: int
    log_end: int
    bytes: int

    @property
    def records(self) -> int:
        """``log_end - log_start`` (a compacted partition holds fewer)."""
        return self.log_end - self.log_start

    def to_json(self) -> dict[str, Any]:
        return {
            "partition_id": self.partition,
            "leader": 1,
            "replicas": [1],
            "isr": [1],
            "log_start_offset": self.log_start,
            "log_end_offset": self.log_end,
            "size_bytes": self.bytes,
        }


@dataclass
class TopicInfo:
    name: str
    topic_id: str
    partitions: list[PartitionInfo]
    configs: dict[str, str]  # the explicitly set ones
    created_ms: int
    mirror_link: str | None = None

    def effective_configs(self) -> dict[str, str]:
        """Every known config: Kafka's defaults overridden by the explicit ones (sorted)."""
        merged = dict(TOPIC_CONFIG_DEFAULTS)
        merged.update(self.configs)
        return dict(sorted(merged.items()))

    @property
    def partition_count(self) -> int:
        return len(self.partitions)

    @property
    def records(self) -> int:
        return sum(p.records for p in self.partitions)

    @property
    def bytes(self) -> int:
        return sum(p.bytes for p in self.partitions)

    def to_json(self) -> dict[str, Any]:
        """Confluent REST v3 field names where it has them."""
        return {
            "topic_name": self.name,
            "topic_id": self.topic_id,
            "is_internal": False,
            "replication_factor": 1,
            "partitions_count": len(self.partitions),
            "mirror_link": self.mirror_link,
            "created_ms": self.created_ms,
            "configs": dict(sorted(self.configs.items())),
            "partitions": [p.to_json() for p in self.partitions],
        }


@dataclass
class GroupMember:
    member: str
    client_id: str
    topics: list[str]
    joined_ms: int
    heartbeat_ms: int
    session_timeout_ms: int
    assignment: list[tuple[str, int]] = field(default_factory=list)
    host: str = "/127.0.0.1"

    def to_json(self) -> dict[str, Any]:
        return {
            "consumer_id": self.member,
            "client_id": self.client_id,
            "host": self.host,
            "topics": list(self.topics),
            "assignments": [{"topic_name": t, "partition_id": p} for t, p in self.assignment],
            "joined_ms": self.joined_ms,
            "last_heartbeat_ms": self.heartbeat_ms,
            "session_timeout_ms": self.session_timeout_ms,
        }


@dataclass
class GroupOffset:
    topic: str
    partition: int
    committed: int | None  # None: assigned, nothing committed yet
    log_end: int | None
    lag: int | None
    member: str | None = None
    client_id: str | None = None
    host: str | None = None
    metadata: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "topic_name": self.topic,
            "partition_id": self.partition,
            "current_offset": self.committed,
            "log_end_offset": self.log_end,
            "lag": self.lag,
            "consumer_id": self.member,
            "client_id": self.client_id,
            "host": self.host,
        }


@dataclass
class GroupInfo:
    group: str
    state: str  # "Stable", "PreparingRebalance" (live members) or "Empty"
    members: list[GroupMember]
    offsets: list[GroupOffset]

    @property
    def active(self) -> bool:
        return self.state != "Empty"

    @property
    def total_lag(self) -> int:
        return sum(o.lag for o in self.offsets if o.lag is not None)

    def to_json(self) -> dict[str, Any]:
        return {
            "consumer_group_id": self.group,
            "state": self.state,
            "members": [m.to_json() for m in self.members],
            "lags": [o.to_json() for o in self.offsets],
        }


@dataclass
class TopicRow:
    rowid: int
    name: str
    topic_id: str
    partitions: int
    configs: dict[str, str]
    created_ms: int
    mirror_link: str | None

    @property
    def policy(self) -> Policy:
        return Policy.of(self.configs)


def unknown_topic(name: str) -> KafkaError:
    err = KafkaError("UNKNOWN_TOPIC_OR_PARTITION", f"Topic '{name}' does not exist as expected",
                     field="topic")
    err.missing = ("topic", name)
    return err


def unknown_partition(topic: str, partition: Any, partitions: int) -> KafkaError:
    """UNKNOWN_TOPIC_OR_PARTITION for a partition ``topic`` does not have: Kafka's text, then
    the topic, the partition and the range it is not in (as the producer's own refusal)."""
    return KafkaError("UNKNOWN_TOPIC_OR_PARTITION",
                      f"This server does not host this topic-partition: partition {partition} "
                      f"of topic '{topic}' is not in the range [0...{partitions}).",
                      field="partition")


def not_an_increase(topic: str, partitions: int, given: int) -> KafkaError:
    """INVALID_PARTITIONS for a partition count below the topic's (KRaft's
    createPartitions: a count can only grow), in Kafka's words."""
    return KafkaError("INVALID_PARTITIONS",
                      f"The topic {topic} currently has {partitions} partition(s); {given} "
                      "would not be an increase.", field="partitions")


def row_topic(row: Any) -> TopicRow:
    """A ``topics`` row (the :data:`TOPIC_COLS` columns) as a TopicRow."""
    return TopicRow(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5], row[6])


TOPIC_COLS = "id, name, topic_id, partitions, configs, created_ms, mirror_link"


def get_topic(conn: Any, name: str) -> TopicRow:
    row = conn.execute(f"SELECT {TOPIC_COLS} FROM topics WHERE name = ?", (name,)).fetchone()
    if row is None:  # (the closest topic named for people: core/errors.py not_found)
        from ..errors import not_found

        names = [n for (n,) in conn.execute("SELECT name FROM topics")]
        raise not_found(unknown_topic(name), name, names)
    return row_topic(row)


def find_topic(conn: Any, name: str) -> TopicRow | None:
    row = conn.execute(f"SELECT {TOPIC_COLS} FROM topics WHERE name = ?", (name,)).fetchone()
    return None if row is None else row_topic(row)


def topic_info(conn: Any, t: TopicRow) -> TopicInfo:
    parts = [
        PartitionInfo(p, s, e, b)
        for p, s, e, b in conn.execute(
            "SELECT partition, log_start, log_end, bytes FROM partitions WHERE topic = ? "
            "ORDER BY partition", (t.rowid,))
    ]
    return TopicInfo(t.name, t.topic_id, parts, dict(t.configs), t.created_ms, t.mirror_link)
