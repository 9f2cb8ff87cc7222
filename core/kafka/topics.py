"""Kafka-style topics and consumer groups of one cluster (schema component ``kafka``).

``Kafka(cluster, clock)`` is to topics what ``JetStream`` is to streams: every mutating call
is ONE transaction of the cluster database (``cluster.transaction()``), reads use one
snapshot (``cluster.read()``), and time comes from the clock (milliseconds,
``clock.now_ns() // 1_000_000``). Retention (``retention.ms``, ``retention.bytes``) and
compaction (``cleanup.policy=compact``) are applied at the start of produce, fetch and
describe of a topic (cheap when nothing is due); ``apply_retention()`` runs them for every
topic.

Storage (docs/kafka.md "Topics and consumer groups"):

- ``topics``: one row per topic (explicit configs as a JSON object of strings, ``mirror_link``
  set while the topic is a mirror and read-only);
- ``partitions``: log start / log end offsets and byte size per partition, plus the
  compaction bookkeeping (``cleaned``: first dirty offset, ``clean_bytes``, ``tomb_due_ms``);
- ``records``: a rowid table keyed by :func:`record_key` ``(topic, partition, offset)``:
  each partition is one contiguous rowid range (:func:`partition_range`), so a fetch is a
  range scan and retention deletes a key prefix. Offsets ``log_start .. log_end - 1`` (a
  compacted partition has holes);
- ``group_offsets`` and ``group_members``: committed offsets and live members of consumer
  groups (a member is gone once ``heartbeat_ms + session_timeout_ms < now``).

Errors are :class:`~jetlink.core.kafka.errors.KafkaError` with Kafka's names, numbers and
texts.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..clock import Clock, SystemClock
from ..store import Cluster
from .errors import KafkaError
from .partitioner import murmur2

__all__ = [
    "COMPONENT",
    "SCHEMA_STEPS",
    "MAX_PARTITIONS",
    "MAX_TOPICS",
    "MIRROR_SYNCED_CONFIGS",
    "TOPIC_CONFIG_DEFAULTS",
    "GroupInfo",
    "GroupMember",
    "GroupOffset",
    "Kafka",
    "PartitionInfo",
    "Record",
    "TopicInfo",
    "check_topic_collision",
    "decode_headers",
    "encode_headers",
    "partition_range",
    "record_key",
    "record_size",
    "records_bytes",
    "validate_partitions",
    "validate_topic_config",
    "validate_topic_name",
    "validate_topic_configs",
]

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
]

# --- the record key scheme ---------------------------------------------------------------------

PARTITION_BITS = 10
OFFSET_BITS = 40
MAX_PARTITIONS = 1 << PARTITION_BITS  # 1024 partitions per topic
MAX_OFFSET = (1 << OFFSET_BITS) - 1
MAX_TOPICS = (1 << 13) - 1  # topic rowids 1..8191
_TOPIC_SHIFT = PARTITION_BITS + OFFSET_BITS


def record_key(topic_rowid: int, partition: int, offset: int) -> int:
    """The rowid of record ``offset`` of ``partition`` of the topic with rowid ``topic_rowid``:
    ``(((topic_rowid << 10) | partition) << 40) | offset``."""
    return (((topic_rowid << PARTITION_BITS) | partition) << OFFSET_BITS) | offset


def partition_range(topic_rowid: int, partition: int) -> tuple[int, int]:
    """``(lo, hi)``: the rowids of the partition's records are ``lo <= id < hi``."""
    lo = ((topic_rowid << PARTITION_BITS) | partition) << OFFSET_BITS
    return lo, lo + (1 << OFFSET_BITS)


def _topic_range(topic_rowid: int) -> tuple[int, int]:
    return topic_rowid << _TOPIC_SHIFT, (topic_rowid + 1) << _TOPIC_SHIFT


# --- record sizes (Kafka's v2 record batch holding one record) -------------------------------

BATCH_OVERHEAD = 61  # DefaultRecordBatch.RECORD_BATCH_OVERHEAD


def _vz(n: int) -> int:
    """Bytes of ``n`` as a zig-zag varint (n >= -1, as Kafka writes lengths)."""
    z = 1 if n < 0 else n << 1
    return 1 if z < 0x80 else 2 if z < 0x4000 else 3 if z < 0x200000 else 4 if z < 0x10000000 else 5


def record_size(key: bytes | None, value: bytes | None,
                headers: Iterable[tuple[str, bytes | None]] = ()) -> int:
    """Bytes of one record as Kafka stores it: a v2 record batch (61 bytes of batch header)
    holding this one record (``DefaultRecord.sizeInBytes`` with offset and timestamp deltas
    0). This is what ``max.message.bytes`` is checked against and what ``retention.bytes``
    and the partition sizes count."""
    klen = -1 if key is None else len(key)
    vlen = -1 if value is None else len(value)
    body = 3 + _vz(klen) + max(klen, 0) + _vz(vlen) + max(vlen, 0)
    hdrs = list(headers)
    body += _vz(len(hdrs))
    for name, hval in hdrs:
        nb = len(name.encode("utf-8"))
        hl = -1 if hval is None else len(hval)
        body += _vz(nb) + nb + _vz(hl) + max(hl, 0)
    return BATCH_OVERHEAD + body + _vz(body)


# A group member is live while its last heartbeat is within its session timeout (parameter:
# now in ms); the one definition of "active" for groups, also used by the offset sync.
LIVE_MEMBER_SQL = "heartbeat_ms + session_timeout_ms >= ?"


def _vz_sql(x: str) -> str:
    return (f"(CASE WHEN {x} < 64 THEN 1 WHEN {x} < 8192 THEN 2 WHEN {x} < 1048576 THEN 3 "
            f"WHEN {x} < 134217728 THEN 4 ELSE 5 END)")


_KLEN = "COALESCE(length(key), -1)"
_VLEN = "COALESCE(length(value), -1)"
_BODY = (f"(4 + {_vz_sql(_KLEN)} + max({_KLEN}, 0) + {_vz_sql(_VLEN)} + max({_VLEN}, 0))")
# record_size() of a record without headers, as an SQL expression over (key, value)
SIZE_SQL = f"({BATCH_OVERHEAD} + {_BODY} + {_vz_sql(_BODY)})"


def _sum_sql(where: str) -> str:
    """SUM of the header-less records' sizes matching ``where`` (nested selects with
    LIMIT -1 keep SQLite from flattening them and recomputing the lengths: 2.5x faster)."""
    inner = (f"SELECT 4 + {_vz_sql('kl')} + max(kl, 0) + {_vz_sql('vl')} + max(vl, 0) AS b "
             "FROM (SELECT COALESCE(length(key), -1) AS kl, COALESCE(length(value), -1) AS vl "
             f"FROM records WHERE {where} AND headers IS NULL LIMIT -1) LIMIT -1")
    return f"SELECT COALESCE(SUM({BATCH_OVERHEAD} + b + {_vz_sql('b')}), 0) FROM ({inner})"


_RANGE_SUM_SQL = _sum_sql("id >= ? AND id < ?")


def records_bytes(conn: Any, lo: int, hi: int) -> int:
    """The summed :func:`record_size` of the records with ``lo <= id < hi`` (one SQL
    aggregate for the records without headers, Python for the others)."""
    total = conn.execute(_RANGE_SUM_SQL, (lo, hi)).fetchone()[0]
    for key, value, hdrs in conn.execute(
        "SELECT key, value, headers FROM records WHERE id >= ? AND id < ? "
        "AND headers IS NOT NULL", (lo, hi)):
        total += record_size(key, value, decode_headers(hdrs))
    return int(total)


def _ids_bytes(conn: Any, ids_sql: str, params: tuple[Any, ...]) -> int:
    """Summed record sizes of the records whose id is in ``ids_sql`` (a SELECT of ids)."""
    total = conn.execute(_sum_sql(f"id IN ({ids_sql})"), params).fetchone()[0]
    for key, value, hdrs in conn.execute(
        f"SELECT key, value, headers FROM records WHERE id IN ({ids_sql}) "
        "AND headers IS NOT NULL", params):
        total += record_size(key, value, decode_headers(hdrs))
    return int(total)


# --- headers -------------------------------------------------------------------------------------


def encode_headers(headers: Iterable[tuple[str, bytes | None]]) -> str | None:
    """The stored form: None without headers, else a JSON array of ``[name, base64(value)]``
    pairs (order and duplicates kept; a null value stays null)."""
    pairs = [
        [name, None if val is None else base64.b64encode(val).decode("ascii")]
        for name, val in headers
    ]
    return json.dumps(pairs, separators=(",", ":")) if pairs else None


def decode_headers(stored: Any) -> list[tuple[str, bytes | None]]:
    if stored is None:
        return []
    if isinstance(stored, bytes):
        stored = stored.decode("utf-8")
    return [(name, None if val is None else base64.b64decode(val)) for name, val in json.loads(stored)]


def _as_bytes(value: Any, what: str) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{what} must be bytes, str or None, not {type(value).__name__}")


def _norm_headers(headers: Any) -> list[tuple[str, bytes | None]]:
    if not headers:
        return []
    items = headers.items() if isinstance(headers, Mapping) else headers
    out = []
    for name, val in items:
        if not isinstance(name, str):
            raise TypeError("header names must be str")
        out.append((name, _as_bytes(val, "header value")))
    return out


def _text_or_b64(data: bytes | None) -> Any:
    """JSON form of key / value / header bytes: UTF-8 text when the bytes are valid UTF-8,
    else ``{"base64": "..."}``; null stays null."""
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


# --- data types ------------------------------------------------------------------------------------


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
            "key": _text_or_b64(self.key),
            "value": _text_or_b64(self.value),
            "headers": [[name, _text_or_b64(val)] for name, val in self.headers],
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
    state: str  # "Stable" (a live member) or "Empty"
    members: list[GroupMember]
    offsets: list[GroupOffset]

    @property
    def active(self) -> bool:
        return self.state == "Stable"

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


# --- names and configurations -------------------------------------------------------------------

_TOPIC_NAME_RE = re.compile(r"[a-zA-Z0-9._-]+")
MAX_TOPIC_NAME = 249


def validate_topic_name(name: Any) -> str:
    """Kafka's ``Topic.validate``: ``[a-zA-Z0-9._-]``, 1..249 characters, not ``.`` / ``..``.
    KafkaError INVALID_TOPIC_EXCEPTION ``Topic name is invalid: ...`` otherwise."""
    reason = None
    if not isinstance(name, str) or name == "":
        reason = "the empty string is not allowed"
    elif name == ".":
        reason = "'.' is not allowed"
    elif name == "..":
        reason = "'..' is not allowed"
    elif len(name) > MAX_TOPIC_NAME:
        reason = f"the length of '{name}' is longer than the max allowed length {MAX_TOPIC_NAME}"
    elif not _TOPIC_NAME_RE.fullmatch(name):
        reason = f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    if reason:
        raise KafkaError("INVALID_TOPIC_EXCEPTION", f"Topic name is invalid: {reason}", field="name")
    return name


def check_topic_collision(name: str, others: Iterable[str]) -> None:
    """Kafka's rule that topic names differing only in '.' versus '_' collide (their metric
    names would be the same): KafkaError INVALID_TOPIC_EXCEPTION ``Topic 'a.b' collides with
    existing topic: a_b`` for the first of ``others`` that collides with ``name``."""
    if "." not in name and "_" not in name:
        return
    unified = name.replace(".", "_")
    for other in others:
        if other != name and other.replace(".", "_") == unified:
            raise KafkaError("INVALID_TOPIC_EXCEPTION",
                             f"Topic '{name}' collides with existing topic: {other}", field="name")


def validate_partitions(partitions: Any) -> int:
    """A new topic's partition count: at least 1 (Kafka's INVALID_PARTITIONS text) and at
    most :data:`MAX_PARTITIONS` (jetlink's limit); KafkaError INVALID_PARTITIONS otherwise."""
    if not isinstance(partitions, int) or isinstance(partitions, bool) or partitions <= 0:
        raise KafkaError("INVALID_PARTITIONS",
                         "Number of partitions was set to an invalid non-positive value.",
                         field="partitions")
    if partitions > MAX_PARTITIONS:
        raise KafkaError("INVALID_PARTITIONS",
                         f"Number of partitions {partitions} is above jetlink's limit of "
                         f"{MAX_PARTITIONS} per topic.", field="partitions")
    return partitions


_LONG_MAX = 9223372036854775807
_INT_MAX = 2147483647
_INT_RE = re.compile(r"[+-]?[0-9]+")

# name -> (type, default, rule); rule: (min, max) for numbers, a tuple of choices for
# strings / lists, None for anything; "json" for JSON text.
_CONFIG_DEFS: dict[str, tuple[str, str, Any]] = {
    "cleanup.policy": ("list", "delete", ("compact", "delete")),
    "compression.gzip.level": ("int", "-1", "gzip"),
    "compression.lz4.level": ("int", "9", (1, 17)),
    "compression.type": ("string", "producer",
                         ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")),
    "compression.zstd.level": ("int", "3", (-131072, 22)),
    "confluent.placement.constraints": ("json", "", None),
    "delete.retention.ms": ("long", "86400000", (0, None)),
    "file.delete.delay.ms": ("long", "60000", (0, None)),
    "flush.messages": ("long", str(_LONG_MAX), (1, None)),
    "flush.ms": ("long", str(_LONG_MAX), (0, None)),
    "index.interval.bytes": ("int", "4096", (0, None)),
    "local.retention.bytes": ("long", "-2", (-2, None)),
    "local.retention.ms": ("long", "-2", (-2, None)),
    "max.compaction.lag.ms": ("long", str(_LONG_MAX), (1, None)),
    "max.message.bytes": ("int", "1048588", (0, None)),
    "message.timestamp.after.max.ms": ("long", str(_LONG_MAX), (0, None)),
    "message.timestamp.before.max.ms": ("long", str(_LONG_MAX), (0, None)),
    "message.timestamp.difference.max.ms": ("long", str(_LONG_MAX), (0, None)),
    "message.timestamp.type": ("string", "CreateTime", ("CreateTime", "LogAppendTime")),
    "min.cleanable.dirty.ratio": ("double", "0.5", (0.0, 1.0)),
    "min.compaction.lag.ms": ("long", "0", (0, None)),
    "min.insync.replicas": ("int", "1", (1, None)),
    "preallocate": ("boolean", "false", None),
    "remote.storage.enable": ("boolean", "false", None),
    "retention.bytes": ("long", "-1", (None, None)),
    "retention.ms": ("long", "604800000", (-1, None)),
    "segment.bytes": ("int", "1073741824", (14, None)),
    "segment.index.bytes": ("int", "10485760", (4, None)),
    "segment.jitter.ms": ("long", "0", (0, None)),
    "segment.ms": ("long", "604800000", (1, None)),
    "unclean.leader.election.enable": ("boolean", "false", None),
}

TOPIC_CONFIG_DEFAULTS: dict[str, str] = {name: d[1] for name, d in _CONFIG_DEFS.items()}

# Configurations a mirror topic always takes from its source topic (with the partition
# count): users cannot alter them while the topic is a mirror (Confluent's list, in its
# Mirror Topics documentation).
MIRROR_SYNCED_CONFIGS: tuple[str, ...] = (
    "max.message.bytes",
    "cleanup.policy",
    "retention.bytes",
    "retention.ms",
    "delete.retention.ms",
    "min.compaction.lag.ms",
    "max.compaction.lag.ms",
    "message.timestamp.type",
    "message.timestamp.difference.max.ms",
)


def _invalid(key: str, value: Any, rule: str) -> KafkaError:
    # Kafka's ConfigException text: "Invalid value V for configuration K: RULE"
    return KafkaError("INVALID_CONFIG", f"Invalid value {value} for configuration {key}: {rule}",
                      field=key)


def validate_topic_config(key: Any, value: Any) -> str:
    """The value to store for topic config ``key`` (the given text, trimmed), or KafkaError
    INVALID_CONFIG naming the key and the rule (Kafka's texts: ``Unknown topic config name:
    k``, ``Invalid value v for configuration k: Value must be at least 0`` ...)."""
    if not isinstance(key, str) or key not in _CONFIG_DEFS:
        raise KafkaError("INVALID_CONFIG", f"Unknown topic config name: {key}", field=str(key))
    kind, _default, rule = _CONFIG_DEFS[key]
    if value is None:
        raise _invalid(key, value, "Value must be non-null")
    if isinstance(value, bool):
        value = "true" if value else "false"
    text = str(value).strip()
    if kind in ("int", "long"):
        if not _INT_RE.fullmatch(text):
            raise _invalid(key, value, f"Not a number of type {kind.upper()}")
        n = int(text)
        limit = _INT_MAX if kind == "int" else _LONG_MAX
        if not -limit - 1 <= n <= limit:
            raise _invalid(key, value, f"Not a number of type {kind.upper()}")
        if rule == "gzip":
            if n > 9 or (n < 1 and n != -1):
                raise _invalid(key, value, "Value must be between 1 and 9 or equal to -1")
        elif rule is not None:
            low, high = rule
            if low is not None and n < low:
                raise _invalid(key, value, f"Value must be at least {low}")
            if high is not None and n > high:
                raise _invalid(key, value, f"Value must be no more than {high}")
    elif kind == "double":
        try:
            x = float(text)
        except ValueError:
            raise _invalid(key, value, "Not a number of type DOUBLE") from None
        low, high = rule
        if not x >= low:
            raise _invalid(key, value, f"Value must be at least {low}")
        if not x <= high:
            raise _invalid(key, value, f"Value must be no more than {high}")
    elif kind == "boolean":
        if text.lower() not in ("true", "false"):
            raise _invalid(key, value, "Expected value to be either true or false")
    elif kind == "string":
        if text not in rule:
            raise _invalid(key, value, f"String must be one of: {', '.join(rule)}")
    elif kind == "list":
        items = [] if text == "" else re.split(r"\s*,\s*", text)
        for item in items:
            if item not in rule:
                raise _invalid(key, value, f"String must be one of: {', '.join(rule)}")
    elif kind == "json":
        if text:
            try:
                json.loads(text)
            except ValueError as exc:
                raise _invalid(key, value, f"Value must be JSON text ({exc})") from None
    return text


def validate_topic_configs(configs: Mapping[str, Any] | None,
                           base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every config of ``configs`` validated (:func:`validate_topic_config`), then the
    cross-config rule of Kafka's ``LogConfig.validateValues`` over ``base`` + ``configs``
    (``min.compaction.lag.ms`` <= ``max.compaction.lag.ms``). Returns the validated ones."""
    out = {key: validate_topic_config(key, value) for key, value in (configs or {}).items()}
    merged = {**TOPIC_CONFIG_DEFAULTS, **(base or {}), **out}
    lo, hi = int(merged["min.compaction.lag.ms"]), int(merged["max.compaction.lag.ms"])
    if lo > hi:
        raise KafkaError(
            "INVALID_CONFIG",
            f"conflict topic config setting min.compaction.lag.ms ({lo}) > "
            f"max.compaction.lag.ms ({hi})", field="min.compaction.lag.ms")
    return out


@dataclass(frozen=True)
class _Policy:
    """The effective configs the engine acts on, parsed."""

    delete: bool
    compact: bool
    retention_ms: int
    retention_bytes: int
    max_message_bytes: int
    log_append_time: bool
    ts_before_ms: int
    ts_after_ms: int
    min_lag_ms: int
    max_lag_ms: int
    dirty_ratio: float
    delete_retention_ms: int

    @classmethod
    def of(cls, configs: Mapping[str, str]) -> "_Policy":
        c = {**TOPIC_CONFIG_DEFAULTS, **configs}
        policy = {p for p in re.split(r"\s*,\s*", c["cleanup.policy"].strip()) if p}
        diff = int(c["message.timestamp.difference.max.ms"])
        return cls(
            delete="delete" in policy,
            compact="compact" in policy,
            retention_ms=int(c["retention.ms"]),
            retention_bytes=int(c["retention.bytes"]),
            max_message_bytes=int(c["max.message.bytes"]),
            log_append_time=c["message.timestamp.type"] == "LogAppendTime",
            ts_before_ms=min(int(c["message.timestamp.before.max.ms"]), diff),
            ts_after_ms=min(int(c["message.timestamp.after.max.ms"]), diff),
            min_lag_ms=int(c["min.compaction.lag.ms"]),
            max_lag_ms=int(c["max.compaction.lag.ms"]),
            dirty_ratio=float(c["min.cleanable.dirty.ratio"]),
            delete_retention_ms=int(c["delete.retention.ms"]),
        )


@dataclass
class _Topic:
    rowid: int
    name: str
    topic_id: str
    partitions: int
    configs: dict[str, str]
    created_ms: int
    mirror_link: str | None

    @property
    def policy(self) -> _Policy:
        return _Policy.of(self.configs)


def _new_topic_id() -> str:
    """A random id printed like Kafka's ``Uuid.toString()``: 22 base64url characters, never
    starting with '-' (Kafka regenerates those)."""
    while True:
        text = base64.urlsafe_b64encode(secrets.token_bytes(16)).decode("ascii").rstrip("=")
        if not text.startswith("-"):
            return text


# Kafka's broker defaults group.min.session.timeout.ms / group.max.session.timeout.ms.
MIN_SESSION_TIMEOUT_MS = 6_000
MAX_SESSION_TIMEOUT_MS = 1_800_000
DEFAULT_SESSION_TIMEOUT_MS = 45_000


def _unknown_topic(name: str) -> KafkaError:
    return KafkaError("UNKNOWN_TOPIC_OR_PARTITION", f"Topic '{name}' does not exist as expected",
                      field="topic")


class Kafka:
    """Topics, records and consumer groups of one cluster database."""

    def __init__(self, cluster: Cluster, clock: Clock | None = None) -> None:
        self.cluster = cluster
        self.clock = clock or SystemClock()
        from .tables import KafkaSchema

        # the tables: made by the first write when missing (a refused one makes nothing)
        self._schema = KafkaSchema(cluster, [(COMPONENT, SCHEMA_STEPS)])

    def now_ms(self) -> int:
        return self.clock.now_ns() // 1_000_000

    # --- topic rows ----------------------------------------------------------------------------

    @staticmethod
    def _row(row: Any) -> _Topic:
        return _Topic(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5], row[6])

    _COLS = "id, name, topic_id, partitions, configs, created_ms, mirror_link"

    def _get(self, conn: Any, name: str) -> _Topic:
        row = conn.execute(f"SELECT {self._COLS} FROM topics WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise _unknown_topic(name)
        return self._row(row)

    def _find(self, conn: Any, name: str) -> _Topic | None:
        row = conn.execute(f"SELECT {self._COLS} FROM topics WHERE name = ?", (name,)).fetchone()
        return None if row is None else self._row(row)

    def _info(self, conn: Any, t: _Topic) -> TopicInfo:
        parts = [
            PartitionInfo(p, s, e, b)
            for p, s, e, b in conn.execute(
                "SELECT partition, log_start, log_end, bytes FROM partitions WHERE topic = ? "
                "ORDER BY partition", (t.rowid,))
        ]
        return TopicInfo(t.name, t.topic_id, parts, dict(t.configs), t.created_ms, t.mirror_link)

    def topic_rowid(self, name: str) -> int:
        """The rowid of topic ``name`` (the ``topic_rowid`` of :func:`record_key`)."""
        with self._schema.read() as conn:
            return self._get(conn, name).rowid

    # --- topics ----------------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int = 1, configs: Mapping[str, Any] | None = None,
                     *, validate_only: bool = False, mirror_link: str | None = None,
                     replication_factor: int = 1) -> TopicInfo:
        """Create topic ``name`` (Kafka's CreateTopics checks, in its order: name, exists,
        collision of '.' and '_', partitions, replication factor, configs). With
        ``validate_only`` nothing is written and the would-be TopicInfo is returned.
        ``mirror_link``: the topic is a mirror of that link (read-only)."""
        validate_topic_name(name)
        with self._schema.write() as conn:
            if self._find(conn, name) is not None:
                raise KafkaError("TOPIC_ALREADY_EXISTS", f"Topic '{name}' already exists.",
                                 field="name")
            if "." in name or "_" in name:
                check_topic_collision(
                    name, (other for (other,) in conn.execute("SELECT name FROM topics")))
            validate_partitions(partitions)
            if replication_factor != 1 and replication_factor != -1:
                if replication_factor <= 0:
                    raise KafkaError(
                        "INVALID_REPLICATION_FACTOR",
                        "Replication factor must be larger than 0, or -1 to use the default value.",
                        field="replication_factor")
                raise KafkaError(
                    "INVALID_REPLICATION_FACTOR",
                    f"Unable to replicate the partition {replication_factor} time(s): The target "
                    f"replication factor of {replication_factor} cannot be reached because only "
                    "1 broker(s) are registered.", field="replication_factor")
            stored = validate_topic_configs(configs)
            now = self.now_ms()
            rowid = self._free_rowid(conn)
            info = TopicInfo(name, _new_topic_id(),
                             [PartitionInfo(p, 0, 0, 0) for p in range(partitions)],
                             stored, now, mirror_link)
            if validate_only:
                return info
            conn.execute(
                "INSERT INTO topics(id, name, topic_id, partitions, configs, created_ms, "
                "mirror_link) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (rowid, name, info.topic_id, partitions, json.dumps(stored, sort_keys=True),
                 now, mirror_link))
            conn.executemany("INSERT INTO partitions(topic, partition) VALUES (?, ?)",
                             [(rowid, p) for p in range(partitions)])
            return info

    @staticmethod
    def _free_rowid(conn: Any) -> int:
        top = conn.execute("SELECT COALESCE(MAX(id), 0) FROM topics").fetchone()[0]
        if top < MAX_TOPICS:
            return top + 1
        row = conn.execute(
            "SELECT t.id + 1 FROM topics t WHERE t.id < ? AND NOT EXISTS "
            "(SELECT 1 FROM topics u WHERE u.id = t.id + 1) ORDER BY t.id LIMIT 1",
            (MAX_TOPICS,)).fetchone()
        if conn.execute("SELECT 1 FROM topics WHERE id = 1").fetchone() is None:
            return 1
        if row is None:
            raise KafkaError("POLICY_VIOLATION",
                             f"jetlink holds at most {MAX_TOPICS} topics per cluster.")
        return row[0]

    def describe_topic(self, name: str) -> TopicInfo:
        """The topic with its partitions (retention applied first); UNKNOWN_TOPIC_OR_PARTITION."""
        self._maintain(name)
        with self._schema.read() as conn:
            return self._info(conn, self._get(conn, name))

    def has_topic(self, name: str) -> bool:
        with self._schema.read() as conn:
            return self._find(conn, name) is not None

    def topics(self) -> list[TopicInfo]:
        """Every topic, sorted by name."""
        with self._schema.read() as conn:
            rows = [self._row(r) for r in conn.execute(
                f"SELECT {self._COLS} FROM topics ORDER BY name")]
            return [self._info(conn, t) for t in rows]

    def topic_names(self) -> list[str]:
        with self._schema.read() as conn:
            return [n for (n,) in conn.execute("SELECT name FROM topics ORDER BY name")]

    def alter_topic(self, name: str, *, configs: Mapping[str, Any] | None = None,
                    delete: Iterable[str] = (), partitions: int | None = None,
                    internal: bool = False) -> TopicInfo:
        """Set ``configs``, remove the ``delete`` ones (back to the default), raise the
        partition count to ``partitions`` (increase only: INVALID_PARTITIONS otherwise).
        On a mirror topic a user (``internal=False``) cannot change the synced configs
        (:data:`MIRROR_SYNCED_CONFIGS`) nor the partition count: INVALID_CONFIG /
        INVALID_REQUEST naming them; mirrors.py passes ``internal=True`` for config sync."""
        configs = dict(configs or {})
        delete = list(delete)
        for key in delete:
            if key not in _CONFIG_DEFS:
                raise KafkaError("INVALID_CONFIG", f"Unknown topic config name: {key}", field=key)
        with self._schema.write() as conn:
            t = self._get(conn, name)
            if t.mirror_link is not None and not internal:
                for key in [*configs, *delete]:
                    if key in MIRROR_SYNCED_CONFIGS:
                        raise KafkaError(
                            "INVALID_CONFIG",
                            f"Topic config '{key}' of mirror topic '{name}' is synced from its "
                            "source topic and cannot be altered.", field=key)
                if partitions is not None and partitions != t.partitions:
                    raise KafkaError(
                        "INVALID_REQUEST",
                        f"The partition count of mirror topic '{name}' follows its source "
                        "topic and cannot be altered.", field="partitions")
            base = {k: v for k, v in t.configs.items() if k not in delete}
            stored = validate_topic_configs(configs, base)
            if partitions is not None:
                if not isinstance(partitions, int) or partitions <= 0:
                    raise KafkaError("INVALID_PARTITIONS",
                                     "Number of partitions was set to an invalid non-positive "
                                     "value.", field="partitions")
                if partitions == t.partitions and not internal:
                    raise KafkaError("INVALID_PARTITIONS",
                                     f"Topic already has {t.partitions} partition(s).",
                                     field="partitions")
                if partitions < t.partitions:
                    raise KafkaError(
                        "INVALID_PARTITIONS",
                        f"The topic {name} currently has {t.partitions} partition(s); "
                        f"{partitions} would not be an increase.", field="partitions")
                if partitions > MAX_PARTITIONS:
                    raise KafkaError("INVALID_PARTITIONS",
                                     f"Number of partitions {partitions} is above jetlink's "
                                     f"limit of {MAX_PARTITIONS} per topic.", field="partitions")
                if partitions > t.partitions:
                    conn.executemany(
                        "INSERT INTO partitions(topic, partition) VALUES (?, ?)",
                        [(t.rowid, p) for p in range(t.partitions, partitions)])
                    conn.execute("UPDATE topics SET partitions = ? WHERE id = ?",
                                 (partitions, t.rowid))
                    t.partitions = partitions
            new = {**base, **stored}
            if new != t.configs:
                conn.execute("UPDATE topics SET configs = ? WHERE id = ?",
                             (json.dumps(new, sort_keys=True), t.rowid))
                t.configs = new
            self._apply(conn, t, self.now_ms())
            return self._info(conn, t)

    def delete_topic(self, name: str) -> None:
        """Delete the topic, its records and the groups' committed offsets of it."""
        with self._schema.write() as conn:
            t = self._get(conn, name)
            lo, hi = _topic_range(t.rowid)
            conn.execute("DELETE FROM records WHERE id >= ? AND id < ?", (lo, hi))
            conn.execute("DELETE FROM partitions WHERE topic = ?", (t.rowid,))
            conn.execute("DELETE FROM topics WHERE id = ?", (t.rowid,))
            conn.execute("DELETE FROM group_offsets WHERE topic = ?", (name,))

    def set_mirror_link(self, name: str, link: str | None) -> None:
        """Mark the topic a (read-only) mirror of ``link``, or a normal topic with None."""
        with self._schema.write() as conn:
            t = self._get(conn, name)
            conn.execute("UPDATE topics SET mirror_link = ? WHERE id = ?", (link, t.rowid))

    # --- produce ---------------------------------------------------------------------------------

    def produce(self, topic: str, records: Iterable[Any], *, partition: int | None = None,
                headers: Any = (), timestamp_ms: int | None = None) -> list[tuple[int, int]]:
        """Append ``records`` to ``topic`` in ONE transaction; ``(partition, offset)`` per
        record, in order. All or nothing: the first refused record refuses the call.

        A record is ``(key, value)``, ``(key, value, headers)``, ``(key, value, headers,
        timestamp_ms)`` or a mapping with ``key``, ``value``, ``headers``, ``partition``,
        ``timestamp``; key / value are bytes, str (UTF-8) or None. ``partition``,
        ``headers`` and ``timestamp_ms`` are the defaults of the records that give none.

        Placement: an explicit partition; else Kafka's default partitioner for a keyed
        record (murmur2 of the key, positive, mod partitions); else sticky: every unkeyed
        record of the call goes to one partition, the one with the lowest log end offset
        (ties: the lowest number), so successive calls rotate over the partitions.

        Refusals: a mirror topic (INVALID_REQUEST ``Cannot append records to read-only
        mirror topic 'T'``), an unknown partition, a record over ``max.message.bytes``
        (MESSAGE_TOO_LARGE, size as :func:`record_size`), a keyless record on a compacted
        topic (INVALID_RECORD), a CreateTime timestamp outside
        ``message.timestamp.before/after.max.ms`` (INVALID_TIMESTAMP). LogAppendTime topics
        stamp every record with the clock's time.
        """
        now = self.now_ms()
        default_headers = _norm_headers(headers)
        with self._schema.write() as conn:
            t = self._get(conn, topic)
            if t.mirror_link is not None:
                raise KafkaError("INVALID_REQUEST",
                                 f"Cannot append records to read-only mirror topic '{topic}'")
            self._apply(conn, t, now)
            pol = t.policy
            n = t.partitions
            ends = [0] * n
            sizes = [0] * n
            for p, end in conn.execute(
                    "SELECT partition, log_end FROM partitions WHERE topic = ?", (t.rowid,)):
                ends[p] = end
            starts = list(ends)
            sticky = min(range(n), key=lambda i: (ends[i], i))
            base = t.rowid << PARTITION_BITS
            max_bytes = pol.max_message_bytes
            compact = pol.compact
            default_hdr_json = encode_headers(default_headers)
            default_ts = now if (pol.log_append_time or timestamp_ms is None) else int(timestamp_ms)
            if partition is not None and not (isinstance(partition, int) and 0 <= partition < n):
                raise KafkaError("UNKNOWN_TOPIC_OR_PARTITION",
                                 f"Invalid partition given with record: {partition} is not in "
                                 f"the range [0...{n}).", field="partition")
            if not pol.log_append_time and timestamp_ms is not None:
                self._check_ts(pol, now, default_ts, ends[partition or 0])
            hash_cache: dict[bytes, int] = {}
            # Rows by shape: sqlite3 binds int, str and bytearray on its fast path but looks
            # for adapters on bytes and None, so the common shapes go as bytearray through
            # statements that leave the NULL columns out (3x faster on a million records).
            kv_rows: list[tuple[Any, ...]] = []
            v_rows: list[tuple[Any, ...]] = []
            rows: list[tuple[Any, ...]] = []
            out: list[tuple[int, int]] = []
            add_kv, add_v, add_row, add_out = kv_rows.append, v_rows.append, rows.append, out.append
            ba = bytearray
            if not isinstance(records, list):
                records = list(records)
            simple = partition is None and not default_headers and not compact
            if simple:
                # The bulk path for (bytes, bytes) pairs, the benchmarks' shape; anything else
                # (or a record near max.message.bytes) sends the whole call to the general
                # loop below.
                limit = max_bytes - 85
                get = hash_cache.get
                for rec in records:
                    if type(rec) is not tuple or len(rec) != 2:
                        simple = False
                        break
                    key, value = rec
                    if type(value) is not bytes:
                        simple = False
                        break
                    vlen = len(value)
                    if key is None:
                        if vlen > limit:
                            simple = False
                            break
                        p = sticky
                        off = ends[p]
                        ends[p] = off + 1
                        body = (6 if vlen < 64 else 5 + _vz(vlen)) + vlen
                        sizes[p] += 62 + body if body < 64 else 61 + body + _vz(body)
                        add_v((((base | p) << OFFSET_BITS) | off, default_ts, ba(value)))
                        add_out((p, off))
                        continue
                    if type(key) is not bytes:
                        simple = False
                        break
                    klen = len(key)
                    if klen + vlen > limit:
                        simple = False
                        break
                    p = get(key)
                    if p is None:
                        p = hash_cache[key] = (murmur2(key) & 0x7FFFFFFF) % n
                    off = ends[p]
                    ends[p] = off + 1
                    body = (6 if klen < 64 else 5 + _vz(klen)) + klen \
                        + (0 if vlen < 64 else _vz(vlen) - 1) + vlen
                    sizes[p] += 62 + body if body < 64 else 61 + body + _vz(body)
                    add_kv((((base | p) << OFFSET_BITS) | off, default_ts, ba(key), ba(value)))
                    add_out((p, off))
                if not simple:
                    out.clear()
                    kv_rows.clear()
                    v_rows.clear()
                    ends[:] = starts
                    sizes[:] = [0] * n
            for rec in ([] if simple else records):
                own_ts = False
                hdrs = default_headers
                hdr_json = default_hdr_json
                ts = default_ts
                p = partition
                if type(rec) is tuple and len(rec) == 2:
                    key, value = rec
                else:
                    key, value, p, hdrs, hdr_json, ts, own_ts = self._unpack(
                        rec, partition, default_headers, default_hdr_json, default_ts, pol, n)
                if key is not None and type(key) is not bytes:
                    key = _as_bytes(key, "key")
                if value is not None and type(value) is not bytes:
                    value = _as_bytes(value, "value")
                if p is None:
                    if key is None:
                        p = sticky
                    else:
                        p = hash_cache.get(key)
                        if p is None:
                            p = hash_cache[key] = (murmur2(key) & 0x7FFFFFFF) % n
                if own_ts:
                    self._check_ts(pol, now, ts, ends[p])
                size = record_size(key, value, hdrs)
                if size > max_bytes:
                    raise KafkaError(
                        "MESSAGE_TOO_LARGE",
                        f"The record batch size in the append to {topic}-{p} is {size} "
                        f"bytes which exceeds the maximum configured value of {max_bytes}.")
                sizes[p] += size
                off = ends[p]
                ends[p] = off + 1
                rid = ((base | p) << OFFSET_BITS) | off
                if hdr_json is None and value is not None:
                    if key is not None:
                        add_kv((rid, ts, ba(key), ba(value)))
                    elif compact:
                        raise KafkaError(
                            "INVALID_RECORD",
                            f"Compacted topic cannot accept message without key in topic "
                            f"partition {topic}-{p}.")
                    else:
                        add_v((rid, ts, ba(value)))
                else:
                    if compact and key is None:
                        raise KafkaError(
                            "INVALID_RECORD",
                            f"Compacted topic cannot accept message without key in topic "
                            f"partition {topic}-{p}.")
                    add_row((rid, ts, key, value, hdr_json))
                add_out((p, off))
            if any(e > MAX_OFFSET for e in ends):
                raise KafkaError("KAFKA_STORAGE_ERROR", "Partition offsets are limited to 2^40.")
            if n > 1:  # in rowid order: the B-tree then only appends to each partition's range
                kv_rows.sort()
                rows.sort()
            if kv_rows:
                conn.executemany(
                    "INSERT INTO records(id, ts, key, value) VALUES (?, ?, ?, ?)", kv_rows)
            if v_rows:
                conn.executemany("INSERT INTO records(id, ts, value) VALUES (?, ?, ?)", v_rows)
            if rows:
                conn.executemany(
                    "INSERT INTO records(id, ts, key, value, headers) VALUES (?, ?, ?, ?, ?)",
                    rows)
            conn.executemany(
                "UPDATE partitions SET log_end = ?, bytes = bytes + ? "
                "WHERE topic = ? AND partition = ?",
                [(ends[p], sizes[p], t.rowid, p) for p in range(n) if ends[p] != starts[p]])
            return out

    def _unpack(self, rec: Any, partition: int | None, default_headers: list[Any],
                default_hdr_json: str | None, default_ts: int, pol: _Policy,
                n: int) -> tuple[Any, ...]:
        hdrs = default_headers
        hdr_json = default_hdr_json
        ts = default_ts
        p = partition
        given_ts = None
        if isinstance(rec, Mapping):
            key, value = rec.get("key"), rec.get("value")
            if rec.get("headers") is not None:
                hdrs = _norm_headers(rec["headers"])
                hdr_json = encode_headers(hdrs)
            if rec.get("partition") is not None:
                p = rec["partition"]
            given_ts = rec.get("timestamp")
        elif isinstance(rec, Record):
            key, value, hdrs, given_ts = rec.key, rec.value, rec.headers, rec.timestamp
            hdr_json = encode_headers(hdrs)
        else:
            rec = tuple(rec)
            if not 2 <= len(rec) <= 4:
                raise TypeError("a record is (key, value[, headers[, timestamp_ms]])")
            key, value = rec[0], rec[1]
            if len(rec) > 2 and rec[2] is not None:
                hdrs = _norm_headers(rec[2])
                hdr_json = encode_headers(hdrs)
            if len(rec) > 3:
                given_ts = rec[3]
        if p is not None and not (isinstance(p, int) and 0 <= p < n):
            raise KafkaError("UNKNOWN_TOPIC_OR_PARTITION",
                             f"Invalid partition given with record: {p} is not in the range "
                             f"[0...{n}).", field="partition")
        own_ts = given_ts is not None and not pol.log_append_time
        if own_ts:
            ts = int(given_ts)
        return key, value, p, hdrs, hdr_json, ts, own_ts

    @staticmethod
    def _check_ts(pol: _Policy, now: int, ts: int, off: int) -> None:
        low = now - pol.ts_before_ms
        high = now + pol.ts_after_ms
        if ts < low or ts > high:
            raise KafkaError(
                "INVALID_TIMESTAMP",
                f"Timestamp {ts} of message with offset {off} is out of range. The timestamp "
                f"should be within [{max(low, -_LONG_MAX - 1)}, {min(high, _LONG_MAX)}]")

    # --- fetch and offsets ----------------------------------------------------------------------

    def fetch(self, topic: str, partition: int, offset: int, max_records: int = 500) -> list[Record]:
        """Up to ``max_records`` records of ``partition`` from ``offset`` on (a compacted
        partition skips its holes). ``offset == log_end``: none. Outside
        ``[log_start, log_end]``: OFFSET_OUT_OF_RANGE."""
        self._maintain(topic)
        with self._schema.read() as conn:
            t = self._get(conn, topic)
            if not 0 <= partition < t.partitions:
                raise KafkaError("UNKNOWN_TOPIC_OR_PARTITION",
                                 "This server does not host this topic-partition.",
                                 field="partition")
            start, end = conn.execute(
                "SELECT log_start, log_end FROM partitions WHERE topic = ? AND partition = ?",
                (t.rowid, partition)).fetchone()
            if offset < start or offset > end:
                raise KafkaError(
                    "OFFSET_OUT_OF_RANGE",
                    f"Fetch position offset {offset} is out of range for partition "
                    f"{topic}-{partition}: log start offset {start}, log end offset {end}.")
            lo, hi = partition_range(t.rowid, partition)
            mask = MAX_OFFSET
            return [
                Record(partition, rid & mask, ts, key, value, decode_headers(hdrs))
                for rid, ts, key, value, hdrs in conn.execute(
                    "SELECT id, ts, key, value, headers FROM records WHERE id >= ? AND id < ? "
                    "ORDER BY id LIMIT ?", (lo + offset, hi, max(0, int(max_records))))
            ]

    def offsets(self, topic: str) -> list[PartitionInfo]:
        """Log start / end offsets and sizes of every partition (retention applied first)."""
        return self.describe_topic(topic).partitions

    def offset_for_timestamp(self, topic: str, partition: int, timestamp_ms: int) -> int:
        """ListOffsets by time: the first offset whose record timestamp is >= ``timestamp_ms``;
        the log end offset when there is none (Kafka answers -1 there: jetlink gives the
        offset a consumer would start at)."""
        self._maintain(topic)
        with self._schema.read() as conn:
            t = self._get(conn, topic)
            if not 0 <= partition < t.partitions:
                raise KafkaError("UNKNOWN_TOPIC_OR_PARTITION",
                                 "This server does not host this topic-partition.")
            lo, hi = partition_range(t.rowid, partition)
            row = conn.execute(
                "SELECT id FROM records WHERE id >= ? AND id < ? AND ts >= ? ORDER BY id LIMIT 1",
                (lo, hi, timestamp_ms)).fetchone()
            if row is not None:
                return row[0] & MAX_OFFSET
            return conn.execute(
                "SELECT log_end FROM partitions WHERE topic = ? AND partition = ?",
                (t.rowid, partition)).fetchone()[0]

    # --- retention and compaction --------------------------------------------------------------

    def apply_retention(self, topic: str | None = None) -> int:
        """Apply retention (retention.ms, retention.bytes: the log start offset advances)
        and compaction (cleanup.policy compact) to ``topic`` or every topic now; returns the
        number of records removed. Cheap when nothing is due."""
        now = self.now_ms()
        names = [topic] if topic is not None else self.topic_names()
        removed = 0
        for name in names:
            with self._schema.read() as conn:
                t = self._get(conn, name)
                if not self._due(conn, t, now):
                    continue
            with self._schema.write() as conn:
                t = self._get(conn, name)
                removed += self._apply(conn, t, now)
        return removed

    def _maintain(self, name: str) -> None:
        """Retention of one topic before a read: a read snapshot finds whether anything is
        due; only then a write transaction runs it."""
        now = self.now_ms()
        with self._schema.read() as conn:
            t = self._find(conn, name)
            if t is None or not self._due(conn, t, now):
                return
        with self._schema.write() as conn:
            t = self._find(conn, name)
            if t is not None:
                self._apply(conn, t, now)

    def _parts(self, conn: Any, t: _Topic) -> list[tuple[int, ...]]:
        return conn.execute(
            "SELECT partition, log_start, log_end, bytes, cleaned, clean_bytes, tomb_due_ms "
            "FROM partitions WHERE topic = ? ORDER BY partition", (t.rowid,)).fetchall()

    def _due(self, conn: Any, t: _Topic, now: int) -> bool:
        pol = t.policy
        for p, start, end, size, cleaned, clean_bytes, tomb_due in self._parts(conn, t):
            if end == start and not size:
                continue
            lo, hi = partition_range(t.rowid, p)
            if pol.delete:
                if pol.retention_bytes >= 0 and size > pol.retention_bytes:
                    return True
                if pol.retention_ms >= 0:
                    row = conn.execute(
                        "SELECT ts FROM records WHERE id >= ? AND id < ? ORDER BY id LIMIT 1",
                        (lo, hi)).fetchone()
                    if row is not None and now - row[0] > pol.retention_ms:
                        return True
            if pol.compact and self._compaction_due(conn, pol, now, lo, hi, start, end, size,
                                                    cleaned, clean_bytes, tomb_due):
                return True
        return False

    def _apply(self, conn: Any, t: _Topic, now: int) -> int:
        """Retention then compaction of every partition of ``t`` (inside a write transaction)."""
        pol = t.policy
        removed = 0
        for row in self._parts(conn, t):
            p, start, end, size, cleaned, clean_bytes, tomb_due = row
            if end == start and not size:
                continue
            lo, hi = partition_range(t.rowid, p)
            if pol.delete:
                cut = None
                if pol.retention_ms >= 0:
                    first = conn.execute(
                        "SELECT ts FROM records WHERE id >= ? AND id < ? ORDER BY id LIMIT 1",
                        (lo, hi)).fetchone()
                    if first is not None and now - first[0] > pol.retention_ms:
                        keep = conn.execute(
                            "SELECT id FROM records WHERE id >= ? AND id < ? AND ? - ts <= ? "
                            "ORDER BY id LIMIT 1", (lo, hi, now, pol.retention_ms)).fetchone()
                        cut = keep[0] if keep is not None else lo + end
                if pol.retention_bytes >= 0:
                    floor = lo + start if cut is None else cut
                    gone = 0 if cut is None else records_bytes(conn, lo, cut)
                    if size - gone > pol.retention_bytes:
                        cut = self._bytes_cut(conn, floor, lo + end, size - gone,
                                              pol.retention_bytes)
                if cut is not None and cut > lo + start:
                    res = self._truncate_front(conn, t, p, lo, cut, start, end, size, cleaned,
                                               clean_bytes)
                    removed += res[0]
                    start, size, cleaned, clean_bytes = res[1:]
            if pol.compact and self._compaction_due(conn, pol, now, lo, hi, start, end, size,
                                                    cleaned, clean_bytes, tomb_due):
                removed += self._compact(conn, t, pol, now, p, lo, start, end, size, cleaned)
        return removed

    @staticmethod
    def _bytes_cut(conn: Any, floor: int, top: int, size: int, limit: int) -> int:
        """Kafka's retention.bytes rule at record granularity: drop the oldest records while
        the log stays at least ``limit`` bytes (``size - record >= limit``); the id of the
        first kept record (``top`` when none is kept)."""
        excess = size - limit
        cur = floor
        while True:
            rows = conn.execute(
                f"SELECT id, CASE WHEN headers IS NULL THEN {SIZE_SQL} END, key, value, headers "
                "FROM records WHERE id >= ? AND id < ? ORDER BY id LIMIT 4096",
                (cur, top)).fetchall()
            if not rows:
                return top
            for rid, rsize, key, value, hdrs in rows:
                if rsize is None:
                    rsize = record_size(key, value, decode_headers(hdrs))
                if excess - rsize < 0:
                    return rid
                excess -= rsize
            cur = rows[-1][0] + 1

    @staticmethod
    def _truncate_front(conn: Any, t: _Topic, p: int, lo: int, cut: int, start: int, end: int,
                        size: int, cleaned: int, clean_bytes: int) -> tuple[int, ...]:
        """Delete the records with ids below ``cut``; the log start offset becomes the first
        kept record's offset (the log end offset when none is left)."""
        clean_cut = min(cut, lo + cleaned)
        gone_clean = records_bytes(conn, lo, clean_cut) if clean_cut > lo + start else 0
        gone = gone_clean + (records_bytes(conn, max(clean_cut, lo), cut) if cut > clean_cut else 0)
        n = conn.execute("DELETE FROM records WHERE id >= ? AND id < ?", (lo, cut)).rowcount
        nxt = conn.execute("SELECT id FROM records WHERE id >= ? AND id < ? ORDER BY id LIMIT 1",
                           (cut, lo + end)).fetchone()
        new_start = (nxt[0] - lo) if nxt is not None else end
        new_start = max(new_start, start)
        size -= gone
        if cleaned <= new_start:
            cleaned, clean_bytes = new_start, 0
        else:
            clean_bytes -= gone_clean
        conn.execute(
            "UPDATE partitions SET log_start = ?, bytes = ?, cleaned = ?, clean_bytes = ? "
            "WHERE topic = ? AND partition = ?",
            (new_start, size, cleaned, clean_bytes, t.rowid, p))
        return n, new_start, size, cleaned, clean_bytes

    @staticmethod
    def _cleanable_end(conn: Any, pol: _Policy, now: int, lo: int, start: int, end: int) -> int:
        """The first offset compaction may not touch yet: min.compaction.lag.ms keeps the
        records younger than it (from the first such record on)."""
        if pol.min_lag_ms <= 0:
            return end
        row = conn.execute(
            "SELECT id FROM records WHERE id >= ? AND id < ? AND ? - ts < ? ORDER BY id LIMIT 1",
            (lo + start, lo + end, now, pol.min_lag_ms)).fetchone()
        return end if row is None else row[0] - lo

    def _compaction_due(self, conn: Any, pol: _Policy, now: int, lo: int, hi: int, start: int,
                        end: int, size: int, cleaned: int, clean_bytes: int,
                        tomb_due: int) -> bool:
        if tomb_due and tomb_due <= now:
            return True
        dirty_from = max(cleaned, start)
        if dirty_from >= end or size <= 0:
            return False
        if self._cleanable_end(conn, pol, now, lo, dirty_from, end) <= dirty_from:
            return False
        dirty = size - (clean_bytes if cleaned > start else 0)
        if dirty / size >= pol.dirty_ratio:
            return True
        if pol.max_lag_ms < _LONG_MAX:
            row = conn.execute(
                "SELECT ts FROM records WHERE id >= ? AND id < ? ORDER BY id LIMIT 1",
                (lo + dirty_from, lo + end)).fetchone()
            if row is not None and now - row[0] >= pol.max_lag_ms:
                return True
        return False

    def _compact(self, conn: Any, t: _Topic, pol: _Policy, now: int, p: int, lo: int, start: int,
                 end: int, size: int, cleaned: int) -> int:
        """One cleaning pass: in the cleanable part of the log, every record with a newer
        record of the same key (in the dirty part) goes; then the tombstones (null value)
        older than delete.retention.ms go. The log start offset stays."""
        dirty_from = max(cleaned, start)
        stop = self._cleanable_end(conn, pol, now, lo, dirty_from, end)
        removed = 0
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS kafka_latest("
                     "key BLOB PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID")
        conn.execute("DELETE FROM temp.kafka_latest")
        try:
            if stop > dirty_from:
                conn.execute(
                    "INSERT INTO temp.kafka_latest(key, id) SELECT key, MAX(id) FROM records "
                    "WHERE id >= ? AND id < ? AND key IS NOT NULL GROUP BY key",
                    (lo + dirty_from, lo + stop))
                doomed = ("SELECT r.id FROM records r JOIN temp.kafka_latest l ON l.key = r.key "
                          "WHERE r.id >= ? AND r.id < ? AND r.id < l.id")
                params = (lo + start, lo + stop)
                gone = _ids_bytes(conn, doomed, params)
                removed += conn.execute(f"DELETE FROM records WHERE id IN ({doomed})",
                                        params).rowcount
                size -= gone
            cut = now - pol.delete_retention_ms
            tomb = ("SELECT id FROM records WHERE id >= ? AND id < ? AND value IS NULL "
                    "AND ts <= ?")
            tparams = (lo + start, lo + max(stop, dirty_from), cut)
            gone = _ids_bytes(conn, tomb, tparams)
            if gone:
                removed += conn.execute(f"DELETE FROM records WHERE id IN ({tomb})",
                                        tparams).rowcount
                size -= gone
            oldest = conn.execute(
                "SELECT MIN(ts) FROM records WHERE id >= ? AND id < ? AND value IS NULL",
                (lo + start, lo + max(stop, dirty_from))).fetchone()[0]
            tomb_due = 0 if oldest is None else max(oldest + pol.delete_retention_ms, 1)
            new_cleaned = max(stop, dirty_from)
            tail = records_bytes(conn, lo + new_cleaned, lo + end) if new_cleaned < end else 0
            conn.execute(
                "UPDATE partitions SET bytes = ?, cleaned = ?, clean_bytes = ?, tomb_due_ms = ? "
                "WHERE topic = ? AND partition = ?",
                (size, new_cleaned, size - tail, tomb_due, t.rowid, p))
        finally:
            conn.execute("DELETE FROM temp.kafka_latest")
        return removed

    # --- consumer groups --------------------------------------------------------------------------

    @staticmethod
    def _check_group(group: Any) -> str:
        if not isinstance(group, str) or not group:
            raise KafkaError("INVALID_GROUP_ID", "The configured groupId is invalid.",
                             field="group")
        return group

    def _expire_members(self, conn: Any, now: int) -> None:
        conn.execute(f"DELETE FROM group_members WHERE NOT ({LIVE_MEMBER_SQL})", (now,))

    @staticmethod
    def _live(conn: Any, group: str, now: int) -> list[tuple[Any, ...]]:
        return conn.execute(
            "SELECT member, client_id, topics, joined_ms, heartbeat_ms, session_timeout_ms "
            f"FROM group_members WHERE grp = ? AND {LIVE_MEMBER_SQL} "
            "ORDER BY member", (group, now)).fetchall()

    def group_active(self, group: str) -> bool:
        """Whether the group has a live member (its state is Stable)."""
        now = self.now_ms()
        with self._schema.read() as conn:
            return bool(self._live(conn, group, now))

    def _validate_offsets(self, conn: Any, offsets: Mapping[tuple[str, int], int]) -> list[Any]:
        counts: dict[str, int] = {}
        rows = []
        for (topic, part), off in offsets.items():
            if topic not in counts:
                row = conn.execute("SELECT partitions FROM topics WHERE name = ?",
                                   (topic,)).fetchone()
                if row is None:
                    raise _unknown_topic(topic)
                counts[topic] = row[0]
            if not isinstance(part, int) or not 0 <= part < counts[topic]:
                raise KafkaError("UNKNOWN_TOPIC_OR_PARTITION",
                                 "This server does not host this topic-partition.",
                                 field="partition")
            if not isinstance(off, int) or off < 0:
                raise KafkaError("INVALID_REQUEST", f"Invalid negative offset {off}",
                                 field="offset")
            rows.append((topic, part, off))
        return rows

    def commit(self, group: str, offsets: Mapping[tuple[str, int], int], *, metadata: str = "",
               member: str | None = None) -> None:
        """Commit ``{(topic, partition): offset}`` for ``group`` (the next offset to read).
        A live group (with members) takes commits only from its members: UNKNOWN_MEMBER_ID
        otherwise (Kafka's OffsetCommit rule); an Empty group takes anyone's."""
        self._check_group(group)
        now = self.now_ms()
        with self._schema.write() as conn:
            self._expire_members(conn, now)
            live = {row[0] for row in self._live(conn, group, now)}
            if live and member not in live:
                raise KafkaError("UNKNOWN_MEMBER_ID",
                                 "The coordinator is not aware of this member.", field="member")
            if member is not None and not live:
                raise KafkaError("UNKNOWN_MEMBER_ID",
                                 "The coordinator is not aware of this member.", field="member")
            rows = self._validate_offsets(conn, offsets)
            conn.executemany(
                "INSERT INTO group_offsets(grp, topic, partition, committed, metadata, commit_ms) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(grp, topic, partition) DO UPDATE SET "
                "committed = excluded.committed, metadata = excluded.metadata, "
                "commit_ms = excluded.commit_ms",
                [(group, t, p, o, metadata, now) for t, p, o in rows])

    def committed(self, group: str) -> dict[tuple[str, int], int]:
        """``{(topic, partition): committed offset}`` of the group (empty when it has none)."""
        with self._schema.read() as conn:
            return {
                (t, p): o for t, p, o in conn.execute(
                    "SELECT topic, partition, committed FROM group_offsets WHERE grp = ? "
                    "ORDER BY topic, partition", (group,))
            }

    def committed_all(self, topic: str | None = None) -> dict[str, dict[tuple[str, int], int]]:
        """Every group's committed offsets (of ``topic`` only when given), by group."""
        out: dict[str, dict[tuple[str, int], int]] = {}
        sql = "SELECT grp, topic, partition, committed FROM group_offsets"
        params: tuple[Any, ...] = ()
        if topic is not None:
            sql += " WHERE topic = ?"
            params = (topic,)
        with self._schema.read() as conn:
            for g, t, p, o in conn.execute(sql + " ORDER BY grp, topic, partition", params):
                out.setdefault(g, {})[(t, p)] = o
        return out

    def write_offsets_internal(self, group: str, offsets: Mapping[tuple[str, int], int], *,
                               metadata: str = "") -> int:
        """Write committed offsets with no membership or topic checks (consumer offset sync
        and clamping in mirrors.py); unchanged offsets are not rewritten. Returns how many
        offsets changed. Joins an open transaction of the cluster."""
        return self.write_group_offsets(
            ((group, t, p, o) for (t, p), o in offsets.items()), metadata=metadata)

    def write_group_offsets(self, rows: Iterable[tuple[str, str, int, int]], *,
                            metadata: str = "") -> int:
        """Bulk form of :meth:`write_offsets_internal`: ``(group, topic, partition, offset)``
        rows, one executemany. Returns how many offsets changed."""
        now = self.now_ms()
        with self._schema.write() as conn:
            before = conn.total_changes
            conn.executemany(
                "INSERT INTO group_offsets(grp, topic, partition, committed, metadata, commit_ms) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(grp, topic, partition) DO UPDATE SET "
                "committed = excluded.committed, metadata = excluded.metadata, "
                "commit_ms = excluded.commit_ms WHERE committed != excluded.committed",
                ((g, t, p, o, metadata, now) for g, t, p, o in rows))
            return conn.total_changes - before

    def join(self, group: str, member: str, topics: Iterable[str], *,
             session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS, client_id: str = "") -> None:
        """``member`` joins ``group`` subscribed to ``topics`` (rejoining refreshes it). The
        session timeout must be within Kafka's broker defaults 6000..1800000 ms
        (INVALID_SESSION_TIMEOUT)."""
        self._check_group(group)
        if not isinstance(member, str) or not member:
            raise KafkaError("MEMBER_ID_REQUIRED", field="member")
        if not MIN_SESSION_TIMEOUT_MS <= session_timeout_ms <= MAX_SESSION_TIMEOUT_MS:
            raise KafkaError("INVALID_SESSION_TIMEOUT", field="session_timeout_ms")
        names = sorted(set(topics))
        now = self.now_ms()
        with self._schema.write() as conn:
            self._expire_members(conn, now)
            for name in names:
                self._get(conn, name)
            conn.execute(
                "INSERT INTO group_members(grp, member, client_id, topics, joined_ms, "
                "heartbeat_ms, session_timeout_ms) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(grp, member) DO UPDATE SET client_id = excluded.client_id, "
                "topics = excluded.topics, heartbeat_ms = excluded.heartbeat_ms, "
                "session_timeout_ms = excluded.session_timeout_ms",
                (group, member, client_id, json.dumps(names), now, now, session_timeout_ms))

    def heartbeat(self, group: str, member: str) -> None:
        """Keep ``member`` alive; UNKNOWN_MEMBER_ID when its session already expired."""
        now = self.now_ms()
        with self._schema.write() as conn:
            self._expire_members(conn, now)
            n = conn.execute("UPDATE group_members SET heartbeat_ms = ? WHERE grp = ? AND member = ?",
                             (now, group, member)).rowcount
            if not n:
                raise KafkaError("UNKNOWN_MEMBER_ID", "The coordinator is not aware of this member.",
                                 field="member")

    def leave(self, group: str, member: str) -> None:
        """``member`` leaves ``group`` (no error when it is already gone)."""
        with self._schema.write() as conn:
            conn.execute("DELETE FROM group_members WHERE grp = ? AND member = ?", (group, member))

    @staticmethod
    def _assign(members: list[tuple[str, list[str]]],
                counts: Mapping[str, int]) -> dict[str, list[tuple[str, int]]]:
        """Kafka's RangeAssignor: per topic, the subscribed members sorted by id get
        consecutive ranges; the first ``n % m`` get one partition more."""
        out: dict[str, list[tuple[str, int]]] = {m: [] for m, _ in members}
        for topic in sorted({t for _, ts in members for t in ts}):
            n = counts.get(topic)
            if not n:
                continue
            subs = sorted(m for m, ts in members if topic in ts)
            per, extra = divmod(n, len(subs))
            for i, m in enumerate(subs):
                first = i * per + min(i, extra)
                length = per + (1 if i < extra else 0)
                out[m].extend((topic, p) for p in range(first, first + length))
        return out

    @staticmethod
    def _catalog(conn: Any) -> tuple[dict[str, int], dict[tuple[str, int], int]]:
        """Partition counts by topic name and log end offsets by (topic, partition)."""
        counts = {name: n for name, n in conn.execute("SELECT name, partitions FROM topics")}
        ends = {
            (name, p): end for name, p, end in conn.execute(
                "SELECT t.name, p.partition, p.log_end FROM partitions p JOIN topics t "
                "ON t.id = p.topic")
        }
        return counts, ends

    def _group(self, conn: Any, group: str, now: int,
               catalog: tuple[dict[str, int], dict[tuple[str, int], int]] | None = None
               ) -> GroupInfo | None:
        live = self._live(conn, group, now)
        committed = conn.execute(
            "SELECT topic, partition, committed, metadata FROM group_offsets WHERE grp = ? "
            "ORDER BY topic, partition", (group,)).fetchall()
        if not live and not committed:
            return None
        subs = [(m, json.loads(ts)) for m, _c, ts, *_ in live]
        counts, ends = catalog if catalog is not None else self._catalog(conn)
        assignment = self._assign(subs, counts)
        members = [
            GroupMember(m, c, json.loads(ts), j, hb, st, assignment.get(m, []))
            for m, c, ts, j, hb, st in live
        ]
        owner = {tp: mem for mem in members for tp in mem.assignment}
        rows: dict[tuple[str, int], GroupOffset] = {}
        for t, p, off, meta in committed:
            end = ends.get((t, p))
            rows[(t, p)] = GroupOffset(t, p, off, end, None if end is None else end - off,
                                       metadata=meta)
        for tp, mem in owner.items():
            if tp not in rows:
                end = ends.get(tp)
                rows[tp] = GroupOffset(tp[0], tp[1], None, end, None)
            rows[tp].member, rows[tp].client_id, rows[tp].host = mem.member, mem.client_id, mem.host
        offsets = [rows[k] for k in sorted(rows)]
        return GroupInfo(group, "Stable" if live else "Empty", members, offsets)

    def describe_group(self, group: str) -> GroupInfo:
        """State (Stable: a live member; Empty), members with their RangeAssignor partitions,
        and per partition the committed offset, log end offset and lag (like
        ``kafka-consumer-groups --describe``). GROUP_ID_NOT_FOUND for an unknown group."""
        now = self.now_ms()
        with self._schema.read() as conn:
            info = self._group(conn, group, now)
        if info is None:
            raise KafkaError("GROUP_ID_NOT_FOUND", f"Consumer group '{group}' does not exist.",
                             field="group")
        return info

    def groups(self) -> list[GroupInfo]:
        """Every group with committed offsets or live members, by name."""
        now = self.now_ms()
        with self._schema.read() as conn:
            names = sorted({g for (g,) in conn.execute("SELECT DISTINCT grp FROM group_offsets")}
                           | {g for (g,) in conn.execute(
                               f"SELECT DISTINCT grp FROM group_members WHERE "
                               f"{LIVE_MEMBER_SQL}", (now,))})
            out = []
            catalog = self._catalog(conn)
            for name in names:
                info = self._group(conn, name, now, catalog)
                if info is not None:
                    out.append(info)
            return out

    def assignment(self, group: str, member: str) -> list[tuple[str, int]]:
        """The partitions the RangeAssignor gives ``member`` among the live members."""
        now = self.now_ms()
        with self._schema.read() as conn:
            info = self._group(conn, group, now)
        if info is None:
            return []
        for m in info.members:
            if m.member == member:
                return list(m.assignment)
        return []

    def set_offsets(self, group: str, topic: str, *, partition: int | None = None,
                    to_offset: int | None = None, to_earliest: bool = False,
                    to_latest: bool = False, dry_run: bool = False
                    ) -> list[tuple[str, int, int | None, int]]:
        """``kafka-consumer-groups --reset-offsets``: every partition of ``topic`` (or
        ``partition``) to ``to_offset`` (clamped into [log start, log end], as the tool
        does), the log start or the log end. Refused while the group is active (NON_EMPTY_GROUP
        with the tool's text). Returns ``(topic, partition, old or None, new)`` rows;
        ``dry_run`` writes nothing."""
        self._check_group(group)
        chosen = sum(1 for x in (to_offset is not None, to_earliest, to_latest) if x)
        if chosen != 1:
            raise KafkaError("INVALID_REQUEST",
                             "Exactly one of to_offset, to_earliest, to_latest must be given.")
        self._maintain(topic)
        now = self.now_ms()
        with self._schema.write() as conn:
            self._expire_members(conn, now)
            if self._live(conn, group, now):
                raise KafkaError(
                    "NON_EMPTY_GROUP",
                    f"Assignments can only be reset if the group '{group}' is inactive, but "
                    "the current state is Stable.", field="group")
            t = self._get(conn, topic)
            if partition is not None and not 0 <= partition < t.partitions:
                raise KafkaError("UNKNOWN_TOPIC_OR_PARTITION",
                                 "This server does not host this topic-partition.",
                                 field="partition")
            old = {p: o for p, o in conn.execute(
                "SELECT partition, committed FROM group_offsets WHERE grp = ? AND topic = ?",
                (group, topic))}
            result = []
            for p, start, end in conn.execute(
                    "SELECT partition, log_start, log_end FROM partitions WHERE topic = ? "
                    "ORDER BY partition", (t.rowid,)).fetchall():
                if partition is not None and p != partition:
                    continue
                if to_earliest:
                    new = start
                elif to_latest:
                    new = end
                else:
                    new = min(max(int(to_offset), start), end)  # type: ignore[arg-type]
                result.append((topic, p, old.get(p), new))
            if not dry_run:
                conn.executemany(
                    "INSERT INTO group_offsets(grp, topic, partition, committed, metadata, "
                    "commit_ms) VALUES (?, ?, ?, ?, '', ?) ON CONFLICT(grp, topic, partition) "
                    "DO UPDATE SET committed = excluded.committed, commit_ms = excluded.commit_ms",
                    [(group, tp, p, new, now) for tp, p, _o, new in result])
            return result

    def delete_group(self, group: str) -> None:
        """Delete the group's committed offsets: NON_EMPTY_GROUP while it has live members,
        GROUP_ID_NOT_FOUND when it has nothing."""
        now = self.now_ms()
        with self._schema.write() as conn:
            self._expire_members(conn, now)
            if self._live(conn, group, now):
                raise KafkaError("NON_EMPTY_GROUP", "The group is not empty.", field="group")
            n = conn.execute("DELETE FROM group_offsets WHERE grp = ?", (group,)).rowcount
            if not n:
                raise KafkaError("GROUP_ID_NOT_FOUND", f"Consumer group '{group}' does not exist.",
                                 field="group")

    # --- iteration helper ---------------------------------------------------------------------

    def iter_records(self, topic: str, partition: int, start: int = 0,
                     chunk: int = 1000) -> Iterator[Record]:
        """Every record of the partition from ``start`` (clamped to the log start) on, each
        chunk its own read snapshot."""
        info = self.describe_topic(topic)
        off = max(start, info.partitions[partition].log_start)
        while True:
            batch = self.fetch(topic, partition, off, chunk)
            if not batch:
                return
            yield from batch
            off = batch[-1].offset + 1
