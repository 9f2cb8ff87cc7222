"""Mirror topics: byte-for-byte, offset-preserving copies owned by a cluster link (Confluent's
Mirror Topics documentation).

A mirror topic lives in the link's DESTINATION cluster (the cluster the link is stored in); its
source topic, ``source_topic``, lives in the link's source cluster. The mirror's name is the
link's ``cluster.link.prefix`` + the source topic's name. Everything here is driven by
:func:`pump_links` (``jetlink replicate``, and one bounded step at the end of every command
that wrote), one destination transaction per link step:

1. states: each mirror's status is recomputed from the link (PAUSED link or paused mirror ->
   PAUSED, source cluster down -> SOURCE_UNAVAILABLE, failed link -> LINK_FAILED) and its
   source topic (missing, or fewer partitions: retried for ``cluster.link.retry.timeout.ms``,
   then FAILED with ``SOURCE_TOPIC_MAY_BE_DELETED`` / ``SOURCE_PARTITIONS_DECREASED``);
   ``status_time_ms`` changes on every transition;
2. auto-create (``auto.create.mirror.topics.enable`` + topic filters; EXCLUDE wins; with a
   prefix a source topic that is itself a mirror is not chained);
3. config sync every ``topic.config.sync.ms``: the synced configurations of Confluent's list
   and the partition count (partitions added on the source are added to the mirror);
4. data: per partition, records at offsets [mirror log end, source log end) copied with
   ``INSERT ... SELECT`` from the attached source database (same offsets, timestamps, keys,
   values, headers); the mirror's log start follows the source's (retention); a mirror that
   fell behind the source's log start jumps to it;
5. consumer offset sync every ``consumer.offset.sync.ms`` (when enabled): committed offsets of
   the source's groups passing the group filters, for partitions of ACTIVE mirrors, for groups
   not active on the destination, unchanged offsets skipped; each written offset is recorded
   as synced by the link (what clamping looks at);
6. PENDING_STOPPED mirrors finish: a promote's final config and offset sync, then (promote and
   failover) offset clamping and STOPPED: the topic is writable from then on, and keeps its
   Last Source Fetch Offsets and status time while the link exists.

Promote refuses (per topic, in its result) while the source is unreachable, a partition lags,
a synced config differs, or a synced group offset differs; failover never refuses. Clamping
(Confluent's Mirror Topics documentation: "Why consumer offsets may be clamped"): every
consumer group offset the link synced for the topic (a group the offset sync ever wrote for
that topic, any partition) that is beyond the mirror partition's log end offset is reset to
it; each clamp is reported (group, topic, partition, from, to). ``dry_run`` computes the same
results and clamps and changes nothing.

Failing back: ``truncate_and_restore`` (on the ORIGINAL cluster, through a link pointing to the
cluster that took over): the local topic is truncated per partition to the log end offsets at
which the other side's mirror stopped and becomes a mirror of the other side's topic again,
reporting messages truncated per partition. ``reverse_and_start`` (on the cluster holding the
mirror): stops the mirror (as failover) and runs ``truncate_and_restore`` on the source side
through the link of the same name there (the reverse link), so the source becomes the mirror.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..clock import Clock, SystemClock
from ..errors import JetlinkError
from .errors import KafkaError
from .links import parse_start_offset_spec
from .topics import MIRROR_SYNCED_CONFIGS, validate_topic_configs

if TYPE_CHECKING:  # pragma: no cover
    from ..store import Cluster, DataDir

__all__ = [
    "ACTIVE",
    "FAILED",
    "LINK_FAILED",
    "PAUSED",
    "PENDING_STOPPED",
    "SOURCE_UNAVAILABLE",
    "STOPPED",
    "SYNCED_CONFIGS",
    "AlterResult",
    "BulkPartition",
    "BulkPlan",
    "BulkResult",
    "Clamp",
    "LinkReport",
    "MirrorInfo",
    "Mirrors",
    "TruncateResult",
    "already_stopped_message",
    "check_mirror_topic_configs",
    "mirror_source_topic",
    "mirror_topic_exists",
    "not_mirrored_message",
    "pump_links",
    "unknown_source_topic",
]

ACTIVE, PAUSED, PENDING_STOPPED, STOPPED = "ACTIVE", "PAUSED", "PENDING_STOPPED", "STOPPED"
SOURCE_UNAVAILABLE, LINK_FAILED, FAILED = "SOURCE_UNAVAILABLE", "LINK_FAILED", "FAILED"
STATUSES = (ACTIVE, PAUSED, PENDING_STOPPED, STOPPED, SOURCE_UNAVAILABLE, LINK_FAILED, FAILED)
NO_ERROR = "NO_ERROR"
SOURCE_TOPIC_MAY_BE_DELETED = "SOURCE_TOPIC_MAY_BE_DELETED"
SOURCE_PARTITIONS_DECREASED = "SOURCE_PARTITIONS_DECREASED"

# Always synced from the source topic (Confluent's Mirror Topics documentation, "Synced Mirror
# Topic Configurations"); one definition, in topics.py, where altering them on a mirror is
# refused.
SYNCED_CONFIGS = MIRROR_SYNCED_CONFIGS
START_OFFSET_SPEC = "mirror.start.offset.spec"  # a mirror topic's own config (not a topic's)


def mirror_source_topic(topic: str, prefix: str, source_topic: str | None = None) -> str:
    """The source topic of mirror topic ``topic`` on a link whose ``cluster.link.prefix`` is
    ``prefix`` ("" for none): ``source_topic`` when given (``topic`` must then be the prefix
    plus it), else ``topic`` without the prefix (which it must start with). KafkaError
    INVALID_REQUEST otherwise (:meth:`Mirrors.create`'s rule, also ``jetlink validate``'s)."""
    if source_topic is None:
        if not prefix:
            return topic
        if not topic.startswith(prefix):
            raise KafkaError("INVALID_REQUEST", f"Mirror topic name '{topic}' must "
                             f"start with the link's prefix '{prefix}'", field="topic")
        return topic[len(prefix):]
    if topic != prefix + source_topic:
        raise KafkaError("INVALID_REQUEST", f"Mirror topic name '{topic}' must be the "
                         f"source topic's name '{source_topic}' with the link's prefix "
                         f"'{prefix}'" if prefix else f"Mirror topic name '{topic}' must "
                         f"be the source topic's name '{source_topic}'", field="topic")
    return source_topic


def not_mirrored_message(topic: str) -> str:
    """The error message of a topic that is no mirror topic (AlterResult ``not_mirrored``;
    the REST client recognises the engine's results by it)."""
    return f"Topic '{topic}' is not mirrored"


def already_stopped_message(topic: str, link: str) -> str:
    """The error message of a mirror of ``link`` already STOPPED (AlterResult
    ``already_stopped``; the REST client recognises the engine's results by it)."""
    return f"Topic '{topic}' has already stopped its mirror from '{link}'"


def mirror_topic_exists(topic: str) -> KafkaError:
    """A mirror topic is always a new topic: TOPIC_ALREADY_EXISTS when ``topic`` exists."""
    return KafkaError("TOPIC_ALREADY_EXISTS", f"Topic '{topic}' already exists: a mirror "
                      "topic is always created as a new topic (an existing topic can "
                      "not be converted)", field="topic")


def unknown_source_topic(source_topic: str, source_cluster: str, link: str) -> KafkaError:
    """UNKNOWN_TOPIC_OR_PARTITION: a mirror's source topic missing on the link's source."""
    return KafkaError("UNKNOWN_TOPIC_OR_PARTITION", f"Topic '{source_topic}' does not "
                      f"exist on the source cluster {source_cluster} of link "
                      f"'{link}'", field="source_topic")


def check_mirror_topic_configs(configs: Mapping[str, Any] | None) -> dict[str, str]:
    """The configs a new mirror topic may be given (:meth:`Mirrors.create`'s rules, also used
    by ``jetlink validate`` on topology files): ``mirror.start.offset.spec`` (earliest,
    latest or a timestamp) and topic configs that are not synced from the source topic. A
    synced one is KafkaError INVALID_CONFIG ``Configuration K of a mirror topic is synced
    from its source topic and can not be set``; the others follow the topic config rules
    (:func:`validate_topic_configs`). Returns the configs validated, as text."""
    configs = dict(configs or {})
    out: dict[str, str] = {}
    if START_OFFSET_SPEC in configs:
        value = configs.pop(START_OFFSET_SPEC)
        text = value if isinstance(value, str) else str(value)
        parse_start_offset_spec(text)
        out[START_OFFSET_SPEC] = text
    for key in configs:
        if key in SYNCED_CONFIGS:
            raise KafkaError("INVALID_CONFIG", f"Configuration {key} of a mirror topic is "
                             "synced from its source topic and can not be set",
                             field=f"config.{key}")
    out.update(validate_topic_configs(configs))
    return out

COMPONENT = "kafka_mirrors"
SCHEMA_STEPS: list[list[str]] = [
    [
        """CREATE TABLE mirrors (
            topic TEXT PRIMARY KEY,
            link TEXT NOT NULL,
            source_topic TEXT NOT NULL,
            status TEXT NOT NULL,
            error TEXT NOT NULL DEFAULT 'NO_ERROR',
            status_time_ms INTEGER NOT NULL,
            created_ms INTEGER NOT NULL,
            auto_created INTEGER NOT NULL DEFAULT 0,
            paused INTEGER NOT NULL DEFAULT 0,
            pending TEXT,
            trouble_since_ms INTEGER,
            stopped_seq INTEGER NOT NULL DEFAULT 0,
            start_spec TEXT NOT NULL DEFAULT 'earliest',
            started INTEGER NOT NULL DEFAULT 0
        )""",
        """CREATE TABLE mirror_partitions (
            topic TEXT NOT NULL,
            partition INTEGER NOT NULL,
            last_fetch_offset INTEGER NOT NULL DEFAULT 0,
            source_hw INTEGER NOT NULL DEFAULT 0,
            last_fetch_ms INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (topic, partition)
        ) WITHOUT ROWID""",
        # The (group, mirror topic) pairs whose offsets the link wrote: what clamping covers.
        """CREATE TABLE synced_offsets (
            link TEXT NOT NULL,
            grp TEXT NOT NULL,
            topic TEXT NOT NULL,
            synced_ms INTEGER NOT NULL,
            PRIMARY KEY (link, grp, topic)
        ) WITHOUT ROWID""",
    ],
]

_ATTACHED = "kl_src"


# --------------------------------------------------------------------------- results


@dataclass
class PartitionLag:
    partition: int
    lag: int
    last_source_fetch_offset: int
    log_end: int = 0
    source_hw: int = 0
    last_fetch_ms: int | None = 0  # 0: never fetched; None: not known (a REST v3 answer)

    def to_json(self) -> dict[str, Any]:
        return {"partition": self.partition, "lag": self.lag,
                "last_source_fetch_offset": self.last_source_fetch_offset}


@dataclass
class MirrorInfo:
    link_name: str
    mirror_topic_name: str
    source_topic_name: str
    mirror_status: str
    mirror_topic_error: str
    status_time_ms: int
    num_partitions: int
    mirror_lags: list[PartitionLag]
    auto_created: bool = False
    stopped_seq: int = 0

    @property
    def max_per_partition_mirror_lag(self) -> int:
        return max((p.lag for p in self.mirror_lags), default=0)

    def to_json(self) -> dict[str, Any]:
        """REST v3 mirror data (``link_name``, ``mirror_topic_name``, ...)."""
        return {
            "link_name": self.link_name,
            "mirror_topic_name": self.mirror_topic_name,
            "source_topic_name": self.source_topic_name,
            "num_partitions": self.num_partitions,
            "mirror_lags": [p.to_json() for p in self.mirror_lags],
            "mirror_status": self.mirror_status,
            "mirror_topic_error": self.mirror_topic_error,
            "state_time_ms": self.status_time_ms,
        }


@dataclass(frozen=True)
class Clamp:
    group: str
    topic: str
    partition: int
    from_offset: int
    to_offset: int

    def to_json(self) -> dict[str, Any]:
        return {"group": self.group, "topic": self.topic, "partition": self.partition,
                "from": self.from_offset, "to": self.to_offset}


@dataclass
class AlterResult:
    """One topic's result of promote / failover / pause / resume (REST: ``data[]``)."""

    mirror_topic_name: str
    error_code: int = 0
    error_message: str = ""
    mirror_lags: list[PartitionLag] = field(default_factory=list)
    clamps: list[Clamp] = field(default_factory=list)
    already_stopped: bool = False
    not_mirrored: bool = False

    @property
    def ok(self) -> bool:
        return self.error_code == 0

    def to_json(self) -> dict[str, Any]:
        return {
            "mirror_topic_name": self.mirror_topic_name,
            "error_code": self.error_code,
            "error_message": self.error_message or None,
            "mirror_lags": [p.to_json() for p in self.mirror_lags],
            "clamps": [c.to_json() for c in self.clamps],
        }


@dataclass
class TruncateResult:
    mirror_topic_name: str
    partitions: list[dict[str, int]]  # {partition, messages_truncated, offset_truncated_to}

    def to_json(self) -> dict[str, Any]:
        return {"mirror_topic_name": self.mirror_topic_name, "partitions": self.partitions}


@dataclass
class LinkReport:
    """What one link step did (``jetlink replicate``)."""

    cluster: str
    link: str
    state: str
    copied: int = 0
    lag: int = 0
    mirrors: int = 0
    created: list[str] = field(default_factory=list)
    offsets_synced: int = 0
    configs_synced: int = 0
    stopped: list[str] = field(default_factory=list)
    clamps: list[Clamp] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def moved(self) -> bool:
        return bool(self.copied or self.created or self.offsets_synced or self.stopped)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "cluster": self.cluster, "link": self.link, "state": self.state,
            "mirrors": self.mirrors, "copied": self.copied, "lag": self.lag,
            "offsets_synced": self.offsets_synced, "configs_synced": self.configs_synced,
        }
        if self.created:
            out["created"] = self.created
        if self.stopped:
            out["stopped"] = self.stopped
        if self.clamps:
            out["clamps"] = [c.to_json() for c in self.clamps]
        if self.errors:
            out["errors"] = self.errors
        return out


@dataclass
class BulkPartition:
    """One partition of a bulk copy (:meth:`Mirrors.bulk_begin`): the offsets
    ``first <= offset < end`` of the source partition are copied (``end``: the source's log
    end offset when the job read it, its cut); ``records`` the source records in that range
    then. ``written`` is the mirror's log end so far (``first`` before anything is written)."""

    partition: int
    first: int
    end: int
    records: int = 0
    written: int = 0
    rows: int = 0

    @property
    def cursor(self) -> int:
        """The mirror's log end offset once the copy is done: where the pump continues."""
        return max(self.first, self.end)

    def to_json(self) -> dict[str, Any]:
        return {"partition": self.partition, "first": self.first, "cursor": self.cursor,
                "records": self.rows}


@dataclass
class BulkPlan:
    """A bulk copy of ``source_topic`` (cluster ``source_cluster``, topic rowid
    ``source_rowid``) into mirror topic ``topic`` (rowid ``mirror_rowid``) of link ``link``;
    the mirror is held (paused) until :meth:`Mirrors.bulk_finish` or
    :meth:`Mirrors.bulk_release`."""

    topic: str
    link: str
    source_cluster: str
    source_topic: str
    source_rowid: int
    mirror_rowid: int
    created: bool
    partitions: list[BulkPartition]
    transactions: int = 0

    @property
    def rows_in(self) -> int:
        return sum(p.records for p in self.partitions)

    @property
    def rows_out(self) -> int:
        return sum(p.rows for p in self.partitions)

    def key_ranges(self, rows_per_range: int = 250_000) -> list[tuple[int, int]]:
        """The source record keys to read (topics.py ``record_key``), as ``(lo, hi)`` pairs,
        ``lo <= id < hi``, each inside one partition, at most ``rows_per_range`` offsets
        each; partition order, then offset order."""
        from .topics import record_key

        step = max(1, int(rows_per_range))
        out = []
        for bp in self.partitions:
            for lo in range(bp.first, bp.end, step):
                out.append((record_key(self.source_rowid, bp.partition, lo),
                            record_key(self.source_rowid, bp.partition, min(lo + step, bp.end))))
        return out


@dataclass
class BulkResult:
    """What :meth:`Mirrors.bulk_finish` did."""

    plan: BulkPlan
    status: str
    offsets_synced: int = 0
    clamps: list[Clamp] = field(default_factory=list)
    failover: AlterResult | None = None


# --------------------------------------------------------------------------- helpers


def _now_ms(clock: Clock) -> int:
    return clock.now_ns() // 1_000_000


# --------------------------------------------------------------------------- the API


class Mirrors:
    """Mirror topics of the links stored in ``cluster`` (their destination cluster)."""

    def __init__(self, datadir: DataDir, cluster: str, clock: Clock | None = None) -> None:
        from .links import Links
        from .topics import Kafka

        self.datadir = datadir
        self.cluster = cluster
        self.clock: Clock = clock or SystemClock()
        self.cl: Cluster = datadir.open(cluster)
        self.kafka = Kafka(self.cl, self.clock)
        self.links = Links(datadir, cluster, self.clock)
        from . import links as links_module, topics as topics_module
        from .tables import KafkaSchema

        # the tables: made by the first write when missing (a refused one makes nothing)
        self._schema = KafkaSchema(self.cl, [
            (topics_module.COMPONENT, topics_module.SCHEMA_STEPS),
            (links_module.COMPONENT, links_module.SCHEMA_STEPS), (COMPONENT, SCHEMA_STEPS)])

    # -- source side -----------------------------------------------------------------------
    def _source(self, link: str) -> tuple[Any, Any]:
        """(LinkInfo, Kafka of the source cluster or None when unreachable)."""
        from .topics import Kafka

        info = self.links.get(link)
        src = info.source_cluster
        if not self.datadir.has_cluster(src) or self.datadir.is_down(src):
            return info, None
        return info, Kafka(self.datadir.open(src), self.clock)

    def _state(self, link: str) -> str:
        return self.links.state(link)

    # -- creation --------------------------------------------------------------------------
    def _active_destination(self, link: str, where: str, why_active: str) -> Any:
        """Link ``link`` of this cluster, in DESTINATION mode and ACTIVE (else the error says
        ``where`` / ``why_active``)."""
        info = self.links.get(link)
        if not info.is_destination:
            raise KafkaError("INVALID_REQUEST", f"Cluster link '{link}' is not in DESTINATION "
                             f"mode: {where}", field="link")
        state = self._state(link)
        if state != ACTIVE:
            raise KafkaError("INVALID_REQUEST", f"Cluster link '{link}' is {state}, not "
                             f"ACTIVE: {why_active}", field="link")
        return info

    def create(self, topic: str, link: str, *, source_topic: str | None = None,
               configs: dict[str, str] | None = None, validate_only: bool = False,
               auto_created: bool = False, paused: bool = False) -> MirrorInfo:
        """A new mirror topic (every creation condition of Confluent's Mirror Topics
        documentation). ``paused``: the mirror is born paused (the pump copies nothing into
        it until it is resumed; the bulk copy
        creates its mirror so, :meth:`bulk_begin`)."""
        info = self._active_destination(  # exactly one link, stored in this cluster
            link, "mirror topics are created on a link's destination cluster",
            "mirror topics can only be created on an active link")
        cfg = info.configs
        source_topic = mirror_source_topic(topic, info.config.prefix, source_topic)
        if any(t.name == topic for t in self.kafka.topics()):
            raise mirror_topic_exists(topic)
        _info, src = self._source(link)
        if src is None:
            raise KafkaError("INVALID_REQUEST", f"Cluster link '{link}': the source cluster "
                             f"{info.source_cluster} can not be reached", field="link")
        try:
            stopic = src.describe_topic(source_topic)
        except KafkaError:
            raise unknown_source_topic(source_topic, info.source_cluster, link) from None
        given = configs or {}
        spec = given.get(START_OFFSET_SPEC, cfg.get(START_OFFSET_SPEC, "earliest"))
        if START_OFFSET_SPEC not in given:  # a given spec: check_mirror_topic_configs parses it
            parse_start_offset_spec(spec)
        own = {k: v for k, v in check_mirror_topic_configs(configs).items()
               if k != START_OFFSET_SPEC}
        synced = {k: v for k, v in stopic.configs.items() if k in SYNCED_CONFIGS}
        if validate_only:
            self.kafka.create_topic(topic, len(stopic.partitions), {**synced, **own},
                                    validate_only=True)
            return self._planned(topic, link, source_topic, len(stopic.partitions))
        now = _now_ms(self.clock)
        self.kafka.create_topic(topic, len(stopic.partitions), {**synced, **own},
                                mirror_link=link)
        with self._schema.write() as conn:
            conn.execute(
                "INSERT INTO mirrors(topic, link, source_topic, status, status_time_ms, "
                "created_ms, auto_created, start_spec, paused) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (topic, link, source_topic, PAUSED if paused else ACTIVE, now, now,
                 int(auto_created), spec, int(paused)))
            conn.executemany(
                "INSERT INTO mirror_partitions(topic, partition) VALUES (?, ?)",
                [(topic, p.partition) for p in stopic.partitions])
        return self.describe(topic, link)

    def _planned(self, topic: str, link: str, source: str, n: int) -> MirrorInfo:
        return MirrorInfo(link, topic, source, ACTIVE, NO_ERROR, _now_ms(self.clock), n,
                          [PartitionLag(p, 0, 0) for p in range(n)])

    # -- reading ---------------------------------------------------------------------------
    def _rows(self, link: str | None = None, topic: str | None = None) -> list[tuple]:
        sql = ("SELECT topic, link, source_topic, status, error, status_time_ms, auto_created, "
               "paused, pending, trouble_since_ms, stopped_seq, start_spec, started "
               "FROM mirrors")
        cond, args = [], []
        if link is not None:
            cond.append("link = ?")
            args.append(link)
        if topic is not None:
            cond.append("topic = ?")
            args.append(topic)
        if cond:
            sql += " WHERE " + " AND ".join(cond)
        with self._schema.read() as conn:
            return conn.execute(sql + " ORDER BY link, topic", args).fetchall()

    def _lags(self, row: tuple, src: Any) -> list[PartitionLag]:
        topic, status = row[0], row[3]
        offsets = {p.partition: p for p in self.kafka.offsets(topic)}
        source_end: dict[int, int] = {}
        if src is not None and status not in (STOPPED, PENDING_STOPPED):
            try:
                source_end = {p.partition: p.log_end for p in src.offsets(row[2])}
            except KafkaError:
                source_end = {}
        with self._schema.read() as conn:
            parts = conn.execute(
                "SELECT partition, last_fetch_offset, source_hw, last_fetch_ms "
                "FROM mirror_partitions WHERE topic = ? ORDER BY partition", (topic,)).fetchall()
        out = []
        for p, fetched, hw, fetch_ms in parts:
            end = offsets[p].log_end if p in offsets else 0
            if status in (STOPPED, PENDING_STOPPED):
                lag = 0
            elif p in source_end:
                lag = max(source_end[p] - end, 0)
            else:
                lag = max(hw - end, 0)
            out.append(PartitionLag(p, lag, fetched, end, hw, fetch_ms))
        return out

    def _info(self, row: tuple, src: Any = "?") -> MirrorInfo:
        if src == "?":
            try:
                _li, src = self._source(row[1])
            except KafkaError:
                src = None
        lags = self._lags(row, src)
        return MirrorInfo(
            link_name=row[1], mirror_topic_name=row[0], source_topic_name=row[2],
            mirror_status=row[3], mirror_topic_error=row[4], status_time_ms=row[5],
            num_partitions=len(lags), mirror_lags=lags, auto_created=bool(row[6]),
            stopped_seq=row[10])

    def describe(self, topic: str, link: str | None = None) -> MirrorInfo:
        self.refresh()
        rows = self._rows(link, topic)
        if not rows:
            raise KafkaError("INVALID_REQUEST", not_mirrored_message(topic)
                             + (f" by link '{link}'" if link else ""), field="topic")
        return self._info(rows[0])

    def list(self, link: str | None = None, status: str | None = None,
             pending_stopped_only: bool = False) -> list[MirrorInfo]:
        if link is not None:
            self.links.get(link)
        if status is not None and status.upper() not in STATUSES:
            raise KafkaError("INVALID_REQUEST", f"Unknown mirror status {status}: one of "
                             f"{', '.join(STATUSES)}", field="mirror_status")
        self.refresh()
        out = []
        for row in self._rows(link):
            if status is not None and row[3] != status.upper():
                continue
            if pending_stopped_only and row[3] != PENDING_STOPPED:
                continue
            out.append(self._info(row))
        return out

    def topics_of(self, link: str, *, live_only: bool = False) -> list[str]:
        """Mirror topics of a link (``live_only``: not STOPPED)."""
        return [r[0] for r in self._rows(link) if not live_only or r[3] != STOPPED]

    # -- states ----------------------------------------------------------------------------
    def _target_status(self, row: tuple, link_state: str, src: Any, now: int,
                       retry_ms: int) -> tuple[str, str, int | None]:
        """(status, error, trouble_since_ms) a mirror should have now."""
        status, error, paused, trouble = row[3], row[4], row[7], row[9]
        if status in (STOPPED, PENDING_STOPPED, FAILED):
            return status, error, trouble
        if link_state == PAUSED or paused:
            return PAUSED, NO_ERROR, trouble
        if link_state == "UNAVAILABLE" or src is None:
            return SOURCE_UNAVAILABLE, NO_ERROR, trouble
        if link_state == "FAILED":
            return LINK_FAILED, NO_ERROR, trouble
        problem = None
        try:
            sinfo = src.describe_topic(row[2])
            mine = len(self.kafka.describe_topic(row[0]).partitions)
            if len(sinfo.partitions) < mine:
                problem = SOURCE_PARTITIONS_DECREASED
        except KafkaError:
            problem = SOURCE_TOPIC_MAY_BE_DELETED
        if problem is None:
            return ACTIVE, NO_ERROR, None
        since = trouble if trouble is not None else now
        if now - since >= retry_ms:
            return FAILED, problem, since
        return ACTIVE, NO_ERROR, since

    def refresh(self) -> None:
        """Recompute every mirror's status (cheap; runs before every read)."""
        now = _now_ms(self.clock)
        changes = []
        links: dict[str, tuple[str, Any, int]] = {}
        for row in self._rows():
            if row[1] not in links:
                try:
                    li, src = self._source(row[1])
                    retry = li.config.retry_timeout_ms
                    links[row[1]] = (self._state(row[1]), src, retry)
                except KafkaError:
                    links[row[1]] = ("FAILED", None, 300000)
            state, src, retry = links[row[1]]
            status, error, trouble = self._target_status(row, state, src, now, retry)
            if (status, error, trouble) != (row[3], row[4], row[9]):
                changes.append((status, error, trouble, now if status != row[3] else row[5],
                                row[0]))
        if changes:
            with self._schema.write() as conn:
                conn.executemany(
                    "UPDATE mirrors SET status = ?, error = ?, trouble_since_ms = ?, "
                    "status_time_ms = ? WHERE topic = ?", changes)

    # -- pause / resume ----------------------------------------------------------------------
    def _select(self, topics: Sequence[str], link: str) -> list[tuple[str, tuple | None]]:
        self.links.get(link)
        self.refresh()
        rows = {r[0]: r for r in self._rows(link)}
        names = list(topics) if topics else list(rows)
        return [(t, rows.get(t)) for t in names]

    def pause(self, topics: Sequence[str], link: str, *, dry_run: bool = False
              ) -> list[AlterResult]:
        return self._set_paused(topics, link, True, dry_run)

    def resume(self, topics: Sequence[str], link: str, *, dry_run: bool = False
               ) -> list[AlterResult]:
        return self._set_paused(topics, link, False, dry_run)

    def _set_paused(self, topics: Sequence[str], link: str, paused: bool, dry_run: bool
                    ) -> list[AlterResult]:
        out = []
        for name, row in self._select(topics, link):
            res = AlterResult(name)
            if row is None:
                res.error_code, res.error_message = _code("INVALID_REQUEST"), \
                    not_mirrored_message(name)
                res.not_mirrored = True
            elif row[3] in (STOPPED, PENDING_STOPPED, FAILED):
                res.error_code = _code("INVALID_REQUEST")
                res.error_message = (f"Topic '{name}' is {row[3]}: only an active or paused "
                                     "mirror can be paused or resumed")
            elif not dry_run:
                with self._schema.write() as conn:
                    conn.execute("UPDATE mirrors SET paused = ? WHERE topic = ?",
                                 (int(paused), name))
            out.append(res)
        if not dry_run:
            self.refresh()
        for res in out:
            if res.ok:
                res.mirror_lags = self.describe(res.mirror_topic_name, link).mirror_lags
        return out

    # -- promote / failover ------------------------------------------------------------------
    def promote(self, topics: Sequence[str], link: str, *, dry_run: bool = False
                ) -> list[AlterResult]:
        return self._stop(topics, link, "promote", dry_run)

    def failover(self, topics: Sequence[str], link: str, *, dry_run: bool = False
                 ) -> list[AlterResult]:
        return self._stop(topics, link, "failover", dry_run)

    def _stop(self, topics: Sequence[str], link: str, how: str, dry_run: bool
              ) -> list[AlterResult]:
        li, src = self._source(link)
        out = []
        for name, row in self._select(topics, link):
            res = AlterResult(name)
            out.append(res)
            if row is None:
                res.not_mirrored = True
                res.error_code = _code("INVALID_REQUEST")
                res.error_message = not_mirrored_message(name)
                continue
            if row[3] == STOPPED:
                res.already_stopped = True
                res.error_code = _code("INVALID_REQUEST")
                res.error_message = already_stopped_message(name, link)
                continue
            info = self._info(row, src)
            res.mirror_lags = info.mirror_lags
            if how == "promote" and row[3] != PENDING_STOPPED:
                problem = self._promote_problem(li, row, src, info)
                if problem:
                    res.error_code = _code("INVALID_REQUEST")
                    res.error_message = problem
                    continue
            if dry_run:  # the clamps stopping it would make (else: made when it stops)
                res.clamps = self._clamps(link, name, include_pending_sync=(how == "promote"),
                                          src=src, li=li)
                continue
            with self._schema.write() as conn:
                conn.execute(
                    "UPDATE mirrors SET status = ?, pending = ?, status_time_ms = ? "
                    "WHERE topic = ?", (PENDING_STOPPED, how, _now_ms(self.clock), name))
        if not dry_run:
            done = self.finish_pending(link)
            by_topic: dict[str, list[Clamp]] = {}
            for c in done:
                by_topic.setdefault(c.topic, []).append(c)
            for res in out:
                if res.ok:
                    res.clamps = by_topic.get(res.mirror_topic_name, [])
        return out

    def _promote_problem(self, li: Any, row: tuple, src: Any, info: MirrorInfo) -> str | None:
        name = row[0]
        if src is None or self._state(li.name) in ("UNAVAILABLE", "FAILED"):
            return (f"Topic '{name}' can not be promoted: the source cluster "
                    f"{li.source_cluster} is not reachable (failover stops the mirror "
                    "regardless)")
        lagging = [p for p in info.mirror_lags if p.lag > 0]
        if lagging:
            parts = ", ".join(f"partition {p.partition}: {p.lag}" for p in lagging)
            return (f"Topic '{name}' can not be promoted: it has mirroring lag ({parts}); "
                    "wait for it to catch up, or use failover")
        try:
            scfg = src.describe_topic(row[2])
        except KafkaError:
            return f"Topic '{name}' can not be promoted: its source topic is gone"
        mine = self.kafka.describe_topic(name)
        diff = [k for k in SYNCED_CONFIGS
                if scfg.effective_configs().get(k) != mine.effective_configs().get(k)]
        if diff or len(scfg.partitions) != len(mine.partitions):
            what = ", ".join(diff) or "number of partitions"
            return f"Topic '{name}' can not be promoted: config sync is pending ({what})"
        pending = self._pending_offsets(li, {name: row[2]})
        if pending:
            groups = ", ".join(sorted({g for g, _t, _p, _o in pending}))
            return (f"Topic '{name}' can not be promoted: consumer offset sync is pending "
                    f"(groups {groups})")
        return None

    def _clamps(self, link: str, topic: str, *, include_pending_sync: bool, src: Any,
                li: Any) -> list[Clamp]:
        """The clamps stopping ``topic`` would make now (after a promote's final offset sync
        when ``include_pending_sync``): synced group offsets beyond the log end offsets."""
        ends = {p.partition: p.log_end for p in self.kafka.offsets(topic)}
        end_sql = "CASE g.partition " + " ".join(
            f"WHEN {int(p)} THEN {int(e)}" for p, e in ends.items()) + " ELSE 0 END" \
            if ends else "0"
        with self._schema.read() as conn:
            current = {(g, p): off for g, p, off in conn.execute(
                "SELECT g.grp, g.partition, g.committed FROM synced_offsets s JOIN "
                "group_offsets g ON g.grp = s.grp AND g.topic = s.topic "
                f"WHERE s.link = ? AND s.topic = ? AND g.committed > ({end_sql})",
                (link, topic))}
        if include_pending_sync and src is not None:
            with self._schema.read() as conn:
                row = conn.execute("SELECT source_topic FROM mirrors WHERE topic = ?",
                                   (topic,)).fetchone()
            if row:
                for g, _t, p, off in self._pending_offsets(li, {topic: row[0]}):
                    current[(g, p)] = off
        return [Clamp(g, topic, p, off, ends.get(p, 0))
                for (g, p), off in sorted(current.items()) if off > ends.get(p, 0)]

    def finish_pending(self, link: str | None = None) -> list[Clamp]:
        """PENDING_STOPPED mirrors -> STOPPED (promote: final config and offset sync first),
        clamping synced group offsets; returns the clamps made."""
        clamps: list[Clamp] = []
        for row in self._rows(link):
            if row[3] != PENDING_STOPPED:
                continue
            topic, lname, how = row[0], row[1], row[8]
            try:
                li, src = self._source(lname)
            except KafkaError:
                li, src = None, None
            if how == "promote" and src is not None and li is not None:
                self._sync_configs(li, src, [row])
                self._sync_offsets(li, {topic: row[2]})
            made = self._clamps(lname, topic, include_pending_sync=False, src=None, li=li)
            now = _now_ms(self.clock)
            with self._schema.write() as conn:
                seq = conn.execute("SELECT coalesce(max(stopped_seq), 0) + 1 FROM mirrors"
                                   ).fetchone()[0]
                conn.execute("UPDATE mirrors SET status = ?, pending = NULL, error = ?, "
                             "status_time_ms = ?, stopped_seq = ? WHERE topic = ?",
                             (STOPPED, NO_ERROR, now, seq, topic))
            if made:
                ends = {p.partition: p.log_end for p in self.kafka.offsets(topic)}
                end_sql = "CASE partition " + " ".join(
                    f"WHEN {int(p)} THEN {int(e)}" for p, e in ends.items()) + " ELSE 0 END"
                with self._schema.write() as conn:
                    conn.execute(
                        f"UPDATE group_offsets SET committed = ({end_sql}), commit_ms = ? "
                        f"WHERE topic = ? AND committed > ({end_sql}) AND grp IN (SELECT grp "
                        "FROM synced_offsets WHERE link = ? AND topic = ?)",
                        (_now_ms(self.clock), topic, lname, topic))
                clamps += made
            self.kafka.set_mirror_link(topic, None)
        return clamps

    # -- failing back ------------------------------------------------------------------------
    def truncate_and_restore(self, topic: str, link: str, *, dry_run: bool = False
                             ) -> TruncateResult:
        """Make local ``topic`` a mirror (through ``link``) of the other side's topic that
        failed over: truncate it per partition to the log end offsets at which that mirror
        stopped, then resume mirroring from there."""
        from .topics import record_key, records_bytes

        li, src = self._source(link)
        if src is None:
            raise KafkaError("INVALID_REQUEST", f"Cluster link '{link}': the source cluster "
                             f"{li.source_cluster} can not be reached", field="link")
        prefix = li.config.prefix
        if prefix and not topic.startswith(prefix):
            raise KafkaError("INVALID_REQUEST", f"Topic '{topic}' does not carry the link's "
                             f"prefix '{prefix}'", field="topic")
        source_topic = topic[len(prefix):] if prefix else topic
        other = Mirrors(self.datadir, li.source_cluster, self.clock)
        rows = [r for r in other._rows(topic=source_topic) if r[3] == STOPPED]
        if not rows:
            raise KafkaError("INVALID_REQUEST", f"Topic '{source_topic}' on cluster "
                             f"{li.source_cluster} is not a stopped mirror: truncate-and-restore "
                             "fails back to a topic that was failed over or promoted",
                             field="topic")
        # Where that mirror stopped: its log end at its last fetch (it took writes since).
        stopped = {p.partition: p.last_source_fetch_offset for p in other._lags(rows[0], None)}
        mine = self.kafka.describe_topic(topic)
        if mine.mirror_link:
            raise KafkaError("INVALID_REQUEST", f"Topic '{topic}' is already a mirror topic",
                             field="topic")
        parts = []
        t_id = self._topic_rowid(topic)
        for p in mine.partitions:
            to = stopped.get(p.partition, 0)
            cut = max(p.log_end - max(to, p.log_start), 0)
            parts.append({"partition": p.partition, "messages_truncated": cut,
                          "offset_truncated_to": min(to, p.log_end)})
        if dry_run:
            return TruncateResult(topic, parts)
        now = _now_ms(self.clock)
        with self._schema.write() as conn:
            for p in parts:
                to = p["offset_truncated_to"]
                lo, hi = (record_key(t_id, p["partition"], to),
                          record_key(t_id, p["partition"] + 1, 0))
                cnt = (conn.execute("SELECT count(*) FROM records WHERE id >= ? AND id < ?",
                                    (lo, hi)).fetchone()[0], records_bytes(conn, lo, hi))
                p["messages_truncated"] = cnt[0]
                conn.execute("DELETE FROM records WHERE id >= ? AND id < ?",
                             (record_key(t_id, p["partition"], to),
                              record_key(t_id, p["partition"] + 1, 0)))
                conn.execute("UPDATE partitions SET log_end = ?, log_start = min(log_start, ?),"
                             " bytes = max(bytes - ?, 0), cleaned = min(log_start, ?), "
                             "clean_bytes = 0 WHERE topic = ? AND partition = ?",
                             (to, to, cnt[1], to, t_id, p["partition"]))
            conn.execute("DELETE FROM mirrors WHERE topic = ?", (topic,))
            conn.execute("DELETE FROM mirror_partitions WHERE topic = ?", (topic,))
            conn.execute(
                "INSERT INTO mirrors(topic, link, source_topic, status, status_time_ms, "
                "created_ms, start_spec, started) VALUES (?, ?, ?, ?, ?, ?, 'earliest', 1)",
                (topic, link, source_topic, ACTIVE, now, now))
            conn.executemany(
                "INSERT INTO mirror_partitions(topic, partition, last_fetch_offset) "
                "VALUES (?, ?, ?)",
                [(topic, p["partition"], p["offset_truncated_to"]) for p in parts])
        self.kafka.set_mirror_link(topic, link)
        return TruncateResult(topic, parts)

    def reverse_and_start(self, topic: str, link: str, *, dry_run: bool = False
                          ) -> tuple[AlterResult, TruncateResult]:
        """Stop this cluster's mirror ``topic`` (as failover) and make its source topic a
        mirror of it through the link of the same name on the source cluster."""
        li, _src = self._source(link)
        other = Mirrors(self.datadir, li.source_cluster, self.clock)
        rev = other.links.get(link)  # the reverse link must exist on the source cluster
        if rev.source_cluster != self.cluster:
            raise KafkaError("INVALID_REQUEST", f"Cluster link '{link}' on cluster "
                             f"{li.source_cluster} does not point back to {self.cluster}: "
                             "reverse-and-start needs the reverse link", field="link")
        res = self.failover([topic], link, dry_run=dry_run)[0]
        if not res.ok:
            raise KafkaError("INVALID_REQUEST", res.error_message, field="topic")
        prefix = li.config.prefix
        source_topic = topic[len(prefix):] if prefix and topic.startswith(prefix) else topic
        if dry_run:
            mine = {p.partition: p.log_end for p in self.kafka.offsets(topic)}
            theirs = other.kafka.describe_topic(source_topic)
            parts = [{"partition": p.partition,
                      "messages_truncated": max(p.log_end - mine.get(p.partition, 0), 0),
                      "offset_truncated_to": min(mine.get(p.partition, 0), p.log_end)}
                     for p in theirs.partitions]
            return res, TruncateResult(source_topic, parts)
        return res, other.truncate_and_restore(source_topic, link)

    # -- the pump --------------------------------------------------------------------------
    def _topic_rowid(self, name: str, schema: str = "main", conn: Any = None) -> int:
        c = conn or self.cl.conn
        row = c.execute(f"SELECT id FROM {schema}.topics WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise KafkaError("UNKNOWN_TOPIC_OR_PARTITION",
                             f"Topic '{name}' does not exist", field="topic")
        return int(row[0])

    def step(self, *, max_records: int | None = None, links: Iterable[str] | None = None
             ) -> list[LinkReport]:
        """One step of every link stored in this cluster (module doc)."""
        reports = []
        wanted = None if links is None else set(links)
        for li in self.links.list():
            if wanted is not None and li.name not in wanted:
                continue
            reports.append(self._step_link(li, max_records))
        return reports

    def _step_link(self, li: Any, max_records: int | None) -> LinkReport:
        state = self._state(li.name)
        rep = LinkReport(self.cluster, li.name, state)
        rep.stopped = [r[0] for r in self._rows(li.name) if r[3] == PENDING_STOPPED]
        rep.clamps = self.finish_pending(li.name)
        self.refresh()
        _li, src = self._source(li.name)
        if src is None or state in ("UNAVAILABLE", "FAILED"):
            rows = self._rows(li.name)
            rep.mirrors = len(rows)
            rep.lag = sum(self._info(r, None).max_per_partition_mirror_lag for r in rows)
            if src is None:
                rep.errors.append(f"source cluster {li.source_cluster} is unavailable")
            return rep
        if state != PAUSED:
            rep.created = self._auto_create(li, src)
        rows = self._rows(li.name)
        rep.mirrors = len(rows)
        now = _now_ms(self.clock)
        active = [r for r in rows if r[3] == ACTIVE]
        if li.due("TopicConfigsSync", now):
            rep.configs_synced = self._sync_configs(li, src, active)
            self.links.record_run(li.name, "TopicConfigsSync", now)
        for r in active:
            try:
                rep.copied += self._copy(li, src, r, max_records)
            except (KafkaError, sqlite3.Error) as err:
                rep.errors.append(f"{r[0]}: {err}")
        if li.config.consumer_offset_sync_enable and li.due("ConsumerOffsetSync", now):
            live = {r[0]: r[2] for r in self._rows(li.name) if r[3] == ACTIVE}
            if live:  # the period starts with the first mirror to sync offsets for
                rep.offsets_synced = self._sync_offsets(li, live)
                self.links.record_run(li.name, "ConsumerOffsetSync", now)
        for r in self._rows(li.name):
            rep.lag += self._info(r, src).max_per_partition_mirror_lag
        return rep

    def _auto_create(self, li: Any, src: Any) -> list[str]:
        from .links import filter_selects, topic_filters

        if not li.config.auto_create_enable:
            return []
        filters = topic_filters(li.configs)
        if not filters:
            return []
        prefix = li.config.prefix
        existing = {t.name for t in self.kafka.topics()}
        made = []
        for t in src.topics():
            if not filter_selects(filters, t.name):
                continue
            if prefix and t.mirror_link:
                # no chaining with a prefix and auto-create (Confluent's Mirror Topics docs)
                continue
            name = prefix + t.name
            if name in existing:
                continue
            try:
                self.create(name, li.name, source_topic=t.name, auto_created=True)
                made.append(name)
            except KafkaError:
                continue
        return made

    def _sync_configs(self, li: Any, src: Any, rows: Sequence[tuple]) -> int:
        """Synced configs and partition count of each mirror follow its source topic."""
        n = 0
        for r in rows:
            try:
                s = src.describe_topic(r[2])
                m = self.kafka.describe_topic(r[0])
            except KafkaError:
                continue
            want = {k: v for k, v in s.configs.items() if k in SYNCED_CONFIGS}
            have = {k: v for k, v in m.configs.items() if k in SYNCED_CONFIGS}
            drop = [k for k in have if k not in want]
            parts = len(s.partitions) if len(s.partitions) > len(m.partitions) else None
            if want != have or parts:
                self.kafka.alter_topic(r[0], configs=want, delete=drop, partitions=parts,
                                       internal=True)
                if parts:
                    with self._schema.write() as conn:
                        conn.executemany(
                            "INSERT OR IGNORE INTO mirror_partitions(topic, partition) "
                            "VALUES (?, ?)", [(r[0], p) for p in range(parts)])
                n += 1
        return n

    def _offsets_to_sync(self, li: Any, mirror: str, source: str) -> tuple[str, list[Any]]:
        """``FROM ... WHERE ...`` selecting, in the source database attached as ``kl_src``,
        the committed offsets the offset sync writes for ``mirror`` (from ``source``): groups
        the link's group filters select, not live on this cluster, whose offset here is
        missing or different. The one definition of the rule: the sync writes these rows and
        promote's "pending offset sync" check reads them."""
        from .links import filters_sql, group_filters
        from .topics import LIVE_MEMBER_SQL

        cond, cond_args = filters_sql(group_filters(li.configs), "s.grp")
        sql = (f"FROM {_ATTACHED}.group_offsets s LEFT JOIN main.group_offsets d "
               "ON d.grp = s.grp AND d.topic = ? AND d.partition = s.partition "
               f"WHERE s.topic = ? AND ({cond}) AND (d.committed IS NULL OR "
               "d.committed != s.committed) AND s.grp NOT IN (SELECT grp FROM "
               f"main.group_members WHERE {LIVE_MEMBER_SQL})")
        return sql, [mirror, source, *cond_args, _now_ms(self.clock)]

    def _pending_offsets(self, li: Any, topics: dict[str, str]
                         ) -> list[tuple[str, str, int, int]]:
        """(group, mirror topic, partition, source offset) the offset sync would write now
        for ``topics`` (mirror -> source topic)."""
        if not topics or not li.config.consumer_offset_sync_enable:
            return []
        out: list[tuple[str, str, int, int]] = []
        with self._attached(li.source_cluster):
            with self._schema.read() as conn:
                for mirror, source in topics.items():
                    picked, args = self._offsets_to_sync(li, mirror, source)
                    out += [(g, mirror, p, off) for g, p, off in conn.execute(
                        f"SELECT s.grp, s.partition, s.committed {picked}", args)]
        return out

    def sync_offsets(self, link: str) -> int:
        """Run the link's consumer offset sync now, whatever its schedule, for its ACTIVE
        mirrors; the offsets changed."""
        li = self.links.get(link)
        self.refresh()
        return self._sync_offsets(li, {r[0]: r[2] for r in self._rows(link) if r[3] == ACTIVE})

    def _sync_offsets(self, li: Any, topics: dict[str, str]) -> int:
        """Write what :meth:`_pending_offsets` lists (one destination transaction, the
        source database attached) and note the (group, topic) pairs as synced by the link;
        the offsets changed."""
        if not topics or not li.config.consumer_offset_sync_enable:
            return 0
        now = _now_ms(self.clock)
        conn = self.cl.conn
        changed = 0
        with self._attached(li.source_cluster):
            conn.execute("BEGIN")
            try:
                conn.execute("DELETE FROM main.mirrors WHERE 0")  # the destination's lock
                for mirror, source in topics.items():
                    picked, args = self._offsets_to_sync(li, mirror, source)
                    conn.execute(
                        "INSERT INTO main.synced_offsets(link, grp, topic, synced_ms) "
                        f"SELECT DISTINCT ?, s.grp, ?, ? {picked} "
                        "ON CONFLICT(link, grp, topic) DO UPDATE SET synced_ms = "
                        "excluded.synced_ms", [li.name, mirror, now, *args])
                    mark = conn.total_changes
                    conn.execute(
                        "INSERT INTO main.group_offsets(grp, topic, partition, committed, "
                        f"metadata, commit_ms) SELECT s.grp, ?, s.partition, s.committed, '', ? "
                        f"{picked} ON CONFLICT(grp, topic, partition) DO UPDATE SET "
                        "committed = excluded.committed, commit_ms = excluded.commit_ms",
                        [mirror, now, *args])
                    changed += conn.total_changes - mark
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return changed

    @contextlib.contextmanager
    def _attached(self, cluster: str) -> Iterator[None]:
        """The database of ``cluster`` attached to this cluster's connection as
        ``kl_src`` (outside any transaction: SQLite attaches only then)."""
        conn = self.cl.conn
        if any(r[1] == _ATTACHED for r in conn.execute("PRAGMA database_list")):
            conn.execute(f"DETACH DATABASE {_ATTACHED}")
        conn.execute(f"ATTACH DATABASE ? AS {_ATTACHED}",
                     (str(self.datadir.cluster_path(cluster)),))
        try:
            yield
        finally:
            try:
                conn.execute(f"DETACH DATABASE {_ATTACHED}")
            except sqlite3.Error:
                pass

    @staticmethod
    def _initial_offset(src: Any, source_topic: str, partition: int, start: str | int,
                        s_start: int, s_end: int) -> int:
        """Where a mirror partition that never fetched starts (``mirror.start.offset.spec``
        parsed): ``earliest`` the source's log start, ``latest`` its log end, a time the first
        offset with a timestamp at or after it. One rule for the pump and the bulk copy."""
        if start == "earliest":
            return s_start
        if start == "latest":
            return s_end
        return src.offset_for_timestamp(source_topic, partition, int(start))

    def _copy(self, li: Any, src: Any, row: tuple, max_records: int | None) -> int:
        """Copy what the source partitions have beyond the mirror's log end (one
        transaction of the destination, the source database attached)."""
        from .topics import partition_range, record_key, records_bytes

        topic, source_topic, spec, started = row[0], row[2], row[11], row[12]
        conn = self.cl.conn
        copied = 0
        with self._attached(li.source_cluster):
            conn.execute("BEGIN")
            try:
                conn.execute("DELETE FROM main.mirrors WHERE 0")  # the destination's lock only
                try:
                    s_id = self._topic_rowid(source_topic, _ATTACHED, conn)
                except KafkaError:
                    conn.execute("COMMIT")
                    return 0
                d_id = self._topic_rowid(topic, "main", conn)
                s_parts = {p: (a, b) for p, a, b in conn.execute(
                    f"SELECT partition, log_start, log_end FROM {_ATTACHED}.partitions "
                    "WHERE topic = ?", (s_id,))}
                d_parts = {p: (a, b, n) for p, a, b, n in conn.execute(
                    "SELECT partition, log_start, log_end, bytes FROM main.partitions "
                    "WHERE topic = ?", (d_id,))}
                now = _now_ms(self.clock)
                start = parse_start_offset_spec(spec) if not started else None
                budget = max_records
                fetch_rows = []
                for p in sorted(d_parts):
                    if p not in s_parts:
                        continue
                    s_start, s_end = s_parts[p]
                    m_start, m_end, m_bytes = d_parts[p]
                    base_s, _t = partition_range(s_id, p)
                    base_d, _t = partition_range(d_id, p)
                    if start is not None and m_end == 0 and m_start == 0:
                        m_start = m_end = self._initial_offset(src, source_topic, p, start,
                                                               s_start, s_end)
                    if m_end < s_start:  # the source's retention went past the mirror
                        conn.execute("DELETE FROM main.records WHERE id >= ? AND id < ?",
                                     (base_d, record_key(d_id, p, s_start)))
                        m_start = m_end = s_start
                        m_bytes = 0
                    hi = s_end
                    if budget is not None:
                        hi = min(hi, m_end + max(budget, 0))
                    added = 0
                    if hi > m_end:
                        cur = conn.execute(
                            f"INSERT INTO main.records(id, ts, key, value, headers) "
                            f"SELECT id - ? + ?, ts, key, value, headers FROM "
                            f"{_ATTACHED}.records WHERE id >= ? AND id < ?",
                            (base_s, base_d, record_key(s_id, p, m_end),
                             record_key(s_id, p, hi)))
                        n = cur.rowcount if cur.rowcount is not None else 0
                        copied += n
                        if budget is not None:
                            budget -= hi - m_end
                        added = records_bytes(conn, record_key(d_id, p, m_end),
                                              record_key(d_id, p, hi))
                        m_end = hi
                    removed = 0
                    if s_start > m_start:  # the log start follows the source's
                        removed = records_bytes(conn, base_d, record_key(d_id, p, s_start))
                        conn.execute("DELETE FROM main.records WHERE id >= ? AND id < ?",
                                     (base_d, record_key(d_id, p, s_start)))
                        m_start = min(s_start, m_end)
                    conn.execute(
                        "UPDATE main.partitions SET log_start = ?, log_end = ?, bytes = ?, "
                        "cleaned = max(cleaned, ?), clean_bytes = CASE WHEN cleaned < ? "
                        "THEN 0 ELSE clean_bytes END WHERE topic = ? AND partition = ?",
                        (m_start, m_end, max(m_bytes + added - removed, 0), m_start, m_start,
                         d_id, p))
                    fetch_rows.append((m_end, s_end, now, topic, p))
                conn.executemany(
                    "UPDATE main.mirror_partitions SET last_fetch_offset = ?, source_hw = ?, "
                    "last_fetch_ms = ? WHERE topic = ? AND partition = ?", fetch_rows)
                if not started:
                    conn.execute("UPDATE main.mirrors SET started = 1 WHERE topic = ?", (topic,))
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return copied

    # -- bulk copy (``jetlink spark mirror-topic``) ----------------------------------------
    # A bulk copy fills a mirror topic that holds no records with exactly what the pump's
    # ``_copy`` would store (offsets, timestamps, keys, values, headers; the partition
    # offsets, sizes and compaction bookkeeping; the fetch positions), in large transactions,
    # then hands the mirror back to the link, which continues from the copy's cut. While it
    # runs the mirror is held: paused (created paused when the copy creates it), so the pump
    # copies nothing into it; every write transaction checks the hold and the partitions'
    # log end offsets, so a mirror resumed, failed over, deleted or written by anyone else
    # meanwhile stops the copy (nothing is written twice; the link continues from what is
    # stored). A copy killed half-way leaves the mirror paused with a consistent prefix of
    # each partition: ``jetlink mirrors resume`` lets the link finish it.
    def bulk_begin(self, topic: str, link: str) -> BulkPlan:
        """Plan a bulk copy into mirror topic ``topic`` of ``link`` and hold the mirror.

        The mirror is created (paused) when absent, as :meth:`create` creates it; an
        existing one must be this link's, ACTIVE, and hold no records. The source topic's
        retention runs first (as the pump's state check does), then the cut is taken: per
        partition, from where the pump would start (the mirror's log end, or
        ``mirror.start.offset.spec`` for a mirror that never fetched, never below the source's
        log start) to the source's log end offset. In the holding transaction the partitions
        get their starting offsets (as the pump's first fetch sets them)."""
        from .topics import record_key

        li = self._active_destination(
            link, "mirror topics are filled on a link's destination cluster",
            "a bulk copy runs through an active link")
        created = False
        if not self.kafka.has_topic(topic):
            try:
                self.create(topic, link, paused=True)
                created = True
            except KafkaError as err:  # created meanwhile (auto-create): checked below
                if err.name != "TOPIC_ALREADY_EXISTS":
                    raise
        self.refresh()
        rows = self._rows(link, topic)
        if not rows:
            raise KafkaError("INVALID_REQUEST", f"Topic '{topic}' already exists and is not a "
                             f"mirror topic of link '{link}': a bulk copy fills a mirror topic "
                             "of the link", field="topic")
        row = rows[0]
        if not created and (row[3] != ACTIVE or row[7]):
            raise KafkaError("INVALID_REQUEST", f"Mirror topic '{topic}' is {row[3]}: a bulk "
                             "copy fills an ACTIVE mirror topic"
                             + (" (jetlink mirrors resume)" if row[7] else ""), field="topic")
        _li, src = self._source(link)
        if src is None:
            raise KafkaError("INVALID_REQUEST", f"Cluster link '{link}': the source cluster "
                             f"{li.source_cluster} can not be reached", field="link")
        source_topic = row[2]
        try:
            src.describe_topic(source_topic)  # the source's retention, as the pump sees it
        except KafkaError:
            raise KafkaError("UNKNOWN_TOPIC_OR_PARTITION", f"Topic '{source_topic}' does not "
                             f"exist on the source cluster {li.source_cluster} of link "
                             f"'{link}'", field="source_topic") from None
        with src._schema.read() as sconn:
            s_row = sconn.execute("SELECT id FROM topics WHERE name = ?",
                                  (source_topic,)).fetchone()
            if s_row is None:
                raise KafkaError("UNKNOWN_TOPIC_OR_PARTITION", f"Topic '{source_topic}' does "
                                 f"not exist on the source cluster {li.source_cluster}",
                                 field="source_topic")
            s_id = int(s_row[0])
            s_parts = {p: (a, b) for p, a, b in sconn.execute(
                "SELECT partition, log_start, log_end FROM partitions WHERE topic = ?",
                (s_id,))}
        now = _now_ms(self.clock)
        parts: list[BulkPartition] = []
        with self._schema.write() as conn:
            cur = conn.execute("SELECT link, status, paused, started, start_spec FROM mirrors "
                               "WHERE topic = ?", (topic,)).fetchone()
            if cur is None or cur[0] != link:
                raise KafkaError("INVALID_REQUEST", f"Mirror topic '{topic}' of link '{link}' "
                                 "was deleted while the bulk copy started", field="topic")
            if cur[2] != int(created) or cur[1] in (STOPPED, PENDING_STOPPED, FAILED):
                raise KafkaError("INVALID_REQUEST", f"Mirror topic '{topic}' changed while the "
                                 f"bulk copy started (it is {cur[1]})", field="topic")
            d_id = self._topic_rowid(topic, "main", conn)
            lo, hi = record_key(d_id, 0, 0), record_key(d_id + 1, 0, 0)
            if conn.execute("SELECT 1 FROM records WHERE id >= ? AND id < ? LIMIT 1",
                            (lo, hi)).fetchone():
                raise KafkaError("INVALID_REQUEST", f"Mirror topic '{topic}' holds records "
                                 "already: a bulk copy seeds a mirror topic that holds none (the "
                                 "link keeps an existing one up to date)", field="topic")
            start = parse_start_offset_spec(cur[4]) if not cur[3] else None
            d_parts = {p: (a, b, n) for p, a, b, n in conn.execute(
                "SELECT partition, log_start, log_end, bytes FROM partitions WHERE topic = ?",
                (d_id,))}
            fetch_rows = []
            for p in sorted(d_parts):
                if p not in s_parts:
                    continue
                s_start, s_end = s_parts[p]
                m_start, m_end, m_bytes = d_parts[p]
                if start is not None and m_end == 0 and m_start == 0:
                    m_start = m_end = self._initial_offset(src, source_topic, p, start,
                                                           s_start, s_end)
                if m_end < s_start:  # the pump's jump to the source's log start
                    m_start = m_end = s_start
                parts.append(BulkPartition(p, m_end, s_end, 0, m_end))
                conn.execute(
                    "UPDATE partitions SET log_start = ?, log_end = ?, bytes = ?, "
                    "cleaned = max(cleaned, ?), clean_bytes = CASE WHEN cleaned < ? "
                    "THEN 0 ELSE clean_bytes END WHERE topic = ? AND partition = ?",
                    (m_start, m_end, m_bytes, m_start, m_start, d_id, p))
                fetch_rows.append((m_end, s_end, now, topic, p))
            conn.executemany(
                "UPDATE mirror_partitions SET last_fetch_offset = ?, source_hw = ?, "
                "last_fetch_ms = ? WHERE topic = ? AND partition = ?", fetch_rows)
            conn.execute(
                "UPDATE mirrors SET started = 1, paused = 1, status = ?, status_time_ms = "
                "CASE WHEN status = ? THEN status_time_ms ELSE ? END WHERE topic = ?",
                (PAUSED, PAUSED, now, topic))
        with src._schema.read() as sconn:  # what the cut holds (rows in)
            for bp in parts:
                if bp.end > bp.first:
                    bp.records = sconn.execute(
                        "SELECT count(*) FROM records WHERE id >= ? AND id < ?",
                        (record_key(s_id, bp.partition, bp.first),
                         record_key(s_id, bp.partition, bp.end))).fetchone()[0]
        return BulkPlan(topic, link, li.source_cluster, source_topic, s_id, d_id, created,
                        parts)

    def _check_hold(self, conn: Any, plan: BulkPlan) -> None:
        """Inside a destination transaction: the mirror is still held by ``plan`` and its
        partitions end where the copy left them."""
        row = conn.execute("SELECT link, status, paused FROM mirrors WHERE topic = ?",
                           (plan.topic,)).fetchone()
        t = conn.execute("SELECT id FROM topics WHERE name = ?", (plan.topic,)).fetchone()
        if row is None or t is None or t[0] != plan.mirror_rowid or row[0] != plan.link:
            raise KafkaError("INVALID_REQUEST", f"Mirror topic '{plan.topic}' was deleted or "
                             "created again while the bulk copy ran", field="topic")
        if not row[2] or row[1] != PAUSED:
            what = "resumed" if not row[2] else row[1]
            raise KafkaError("INVALID_REQUEST", f"Mirror topic '{plan.topic}' was {what} "
                             "while the bulk copy ran: the copy stopped (the link continues "
                             "from what is stored)", field="topic")
        ends = dict(conn.execute("SELECT partition, log_end FROM partitions WHERE topic = ?",
                                 (plan.mirror_rowid,)).fetchall())
        for bp in plan.partitions:
            if ends.get(bp.partition) != bp.written:
                raise KafkaError("INVALID_REQUEST", f"Mirror topic '{plan.topic}' partition "
                                 f"{bp.partition} was written by someone else while the bulk "
                                 f"copy ran (log end {ends.get(bp.partition)}, expected "
                                 f"{bp.written}): the copy stopped", field="topic")

    def bulk_write(self, plan: BulkPlan, rows: Iterable[tuple[int, int, int, Any, Any, Any]],
                   *, txn_rows: int = 100_000,
                   on_txn: Callable[[int], None] | None = None) -> int:
        """Append ``(partition, offset, timestamp_ms, key, value, headers)`` rows (headers in
        the stored form, topics.py ``encode_headers``) at their offsets, offsets increasing
        per partition and inside the plan's ranges; one destination transaction per
        ``txn_rows`` rows, each also moving the partitions' log end offsets, sizes and fetch
        positions (a prefix a bounded pump step could have stored). ``on_txn(rows so far)``
        runs after each commit. Returns the rows written."""
        from .topics import record_key, records_bytes

        if txn_rows < 1:
            raise ValueError("txn_rows must be at least 1")
        by_p = {bp.partition: bp for bp in plan.partitions}
        it = iter(rows)
        row = next(it, None)
        total = 0
        d_id = plan.mirror_rowid
        while row is not None:
            # the rows of one transaction are gathered first: the destination is locked only
            # while they are stored, not while Spark computes them
            nxt = {p: bp.written for p, bp in by_p.items()}
            touched: dict[int, int] = {}  # partition -> first offset written
            counted: dict[int, int] = {}
            batch: list[tuple[Any, ...]] = []
            while row is not None and len(batch) < txn_rows:
                p, off, ts, key, value, hdrs = row
                bp = by_p.get(p)
                if bp is None:
                    raise KafkaError("INVALID_REQUEST", f"Record at offset {off} of partition "
                                     f"{p}: not a partition of the bulk copy of "
                                     f"'{plan.source_topic}'", field="partition")
                if not (bp.first <= off < bp.end) or off < nxt[p]:
                    raise KafkaError("INVALID_REQUEST", f"Record at offset {off} of partition "
                                     f"{p}: outside the copy's range [{max(bp.first, nxt[p])}, "
                                     f"{bp.end}) (offsets must increase)", field="offset")
                batch.append((record_key(d_id, p, off), ts, key, value, hdrs))
                touched.setdefault(p, off)
                counted[p] = counted.get(p, 0) + 1
                nxt[p] = off + 1
                row = next(it, None)
            now = _now_ms(self.clock)
            with self._schema.write() as conn:
                self._check_hold(conn, plan)
                conn.executemany("INSERT INTO records(id, ts, key, value, headers) "
                                 "VALUES (?, ?, ?, ?, ?)", batch)
                for p, first in touched.items():
                    added = records_bytes(conn, record_key(d_id, p, first),
                                          record_key(d_id, p, nxt[p]))
                    conn.execute("UPDATE partitions SET log_end = ?, bytes = bytes + ? "
                                 "WHERE topic = ? AND partition = ?", (nxt[p], added, d_id, p))
                conn.executemany(
                    "UPDATE mirror_partitions SET last_fetch_offset = ?, last_fetch_ms = ? "
                    "WHERE topic = ? AND partition = ?",
                    [(nxt[p], now, plan.topic, p) for p in touched])
            for p in touched:
                by_p[p].rows += counted[p]
                by_p[p].written = nxt[p]
            total += len(batch)
            plan.transactions += 1
            if on_txn is not None:
                on_txn(total)
        return total

    def bulk_finish(self, plan: BulkPlan, *, failover: bool = False) -> BulkResult:
        """End a bulk copy: in one transaction every partition's log end offset and fetch
        position becomes the cut (the source's log end when the job read it; a compacted
        tail holds no records) and the mirror is released (ACTIVE again: the pump continues
        from the cut, without a gap or a duplicate); then the mirror's own retention runs
        (as after a pump step), the consumer offset sync of this mirror (the link's group
        filters; when the link syncs offsets), and with ``failover`` a failover, whose clamps
        (synced group offsets beyond the log end offsets) are returned."""
        now = _now_ms(self.clock)
        with self._schema.write() as conn:
            self._check_hold(conn, plan)
            conn.executemany(
                "UPDATE partitions SET log_end = ? WHERE topic = ? AND partition = ?",
                [(bp.cursor, plan.mirror_rowid, bp.partition) for bp in plan.partitions])
            conn.executemany(
                "UPDATE mirror_partitions SET last_fetch_offset = ?, source_hw = ?, "
                "last_fetch_ms = ? WHERE topic = ? AND partition = ?",
                [(bp.cursor, bp.end, now, plan.topic, bp.partition) for bp in plan.partitions])
            conn.execute("UPDATE mirrors SET paused = 0 WHERE topic = ?", (plan.topic,))
        for bp in plan.partitions:
            bp.written = bp.cursor
        self.refresh()
        self.kafka.apply_retention(plan.topic)
        li = self.links.get(plan.link)
        row = self._rows(plan.link, plan.topic)[0]
        res = BulkResult(plan, row[3])
        if row[3] == ACTIVE:
            res.offsets_synced = self._sync_offsets(li, {plan.topic: plan.source_topic})
        if failover:
            res.failover = self.failover([plan.topic], plan.link)[0]
            if not res.failover.ok:
                raise KafkaError("INVALID_REQUEST", res.failover.error_message, field="topic")
            res.clamps = list(res.failover.clamps)
            res.status = self._rows(plan.link, plan.topic)[0][3]
        return res

    def bulk_release(self, plan: BulkPlan) -> None:
        """A bulk copy that failed: the mirror, if still held, goes back to the link, which
        continues from what the copy stored."""
        with self._schema.write() as conn:
            row = conn.execute("SELECT link, paused FROM mirrors WHERE topic = ?",
                               (plan.topic,)).fetchone()
            t = conn.execute("SELECT id FROM topics WHERE name = ?", (plan.topic,)).fetchone()
            if row is None or t is None or t[0] != plan.mirror_rowid or row[0] != plan.link:
                return
            conn.execute("UPDATE mirrors SET paused = 0 WHERE topic = ?", (plan.topic,))
        self.refresh()

    # -- cleanup ---------------------------------------------------------------------------
    def forget_link(self, link: str) -> None:
        """The link is being deleted: its stopped mirrors' history goes with it."""
        with self._schema.write() as conn:
            topics = [r[0] for r in conn.execute("SELECT topic FROM mirrors WHERE link = ?",
                                                 (link,))]
            conn.execute("DELETE FROM mirrors WHERE link = ?", (link,))
            conn.executemany("DELETE FROM mirror_partitions WHERE topic = ?",
                             [(t,) for t in topics])
            conn.execute("DELETE FROM synced_offsets WHERE link = ?", (link,))

    def forget_topic(self, topic: str) -> None:
        """A mirror topic was deleted: its mirror rows go."""
        with self._schema.write() as conn:
            conn.execute("DELETE FROM mirrors WHERE topic = ?", (topic,))
            conn.execute("DELETE FROM mirror_partitions WHERE topic = ?", (topic,))
            conn.execute("DELETE FROM synced_offsets WHERE topic = ?", (topic,))

    def drop_orphans(self) -> None:
        """Mirror rows whose topic was deleted."""
        names = {t.name for t in self.kafka.topics()}
        for row in self._rows():
            if row[0] not in names:
                self.forget_topic(row[0])


def link_hooks(datadir: DataDir, cluster: Any, clock: Clock | None = None) -> Any:
    """What ``Links.open`` asks the mirrors module: a link's mirror topics, which of them
    block its deletion (not STOPPED), failing them over on a forced delete, and dropping the
    stopped mirrors' history with the link."""
    from .links import LinkHooks

    name = cluster if isinstance(cluster, str) else cluster.name

    def mirrors() -> Mirrors:
        return Mirrors(datadir, name, clock)

    def on_force(link: str, topics: list[str]) -> None:
        if topics:
            mirrors().failover(topics, link)

    return LinkHooks(
        mirror_topics=lambda link: mirrors().topics_of(link),
        in_use=lambda link: mirrors().topics_of(link, live_only=True),
        on_force=on_force,
        on_delete=lambda link: mirrors().forget_link(link),
    )


def _code(name: str) -> int:
    from .errors import ERROR_CODES

    return int(ERROR_CODES.get(name, -1))


def pump_links(datadir: DataDir, clock: Clock, *, clusters: Iterable[str] | None = None,
               max_records: int | None = None,
               on_error: Callable[[str, Exception], None] | None = None) -> list[LinkReport]:
    """One step of every cluster link of the data directory (clusters that are down are
    skipped: their links do not run; so are clusters whose database cannot be used, which
    the replication pump reports)."""
    wanted = None if clusters is None else set(clusters)
    reports: list[LinkReport] = []
    for info in datadir.clusters(create_local=False, broken=[]):
        if info.down or (wanted is not None and info.name not in wanted):
            continue
        cl = datadir.open(info.name)
        if not _has_links(cl):
            continue
        try:
            m = Mirrors(datadir, info.name, clock)
            m.drop_orphans()
            reports += m.step(max_records=max_records)
        except (JetlinkError, sqlite3.Error) as err:
            if on_error is None:
                raise
            on_error(info.name, err)
    return reports


def _has_links(cl: Cluster) -> bool:
    if "links" not in cl.table_names():
        return False
    with cl.read() as conn:
        return conn.execute("SELECT 1 FROM links LIMIT 1").fetchone() is not None
