"""What every part of the mirror topics shares: the statuses, the ``kafka_mirrors`` tables,
the result objects (MirrorInfo, AlterResult, OffsetClamp, LinkReport, the bulk copy's plan and
result), and the naming and config rules of a new mirror topic that ``Mirrors.create`` and
``jetlink validate`` both apply (Confluent's Mirror Topics documentation).

The engine that uses them is :class:`~jetlink.core.kafka.mirrors.Mirrors`; its state lives in
:mod:`.mirror_state`, its rules in :mod:`.mirror_create`, :mod:`.mirror_copy`,
:mod:`.mirror_promote`, :mod:`.mirror_step` and :mod:`.mirror_bulk`; this module imports none
of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..clock import Clock
from .errors import KafkaError
from .links import parse_start_offset_spec
from .topic_configs import MIRROR_SYNCED_CONFIGS, validate_topic_configs

ACTIVE, PAUSED, PENDING_STOPPED, STOPPED = "ACTIVE", "PAUSED", "PENDING_STOPPED", "STOPPED"
SOURCE_UNAVAILABLE, LINK_FAILED, FAILED = "SOURCE_UNAVAILABLE", "LINK_FAILED", "FAILED"
STATUSES = (ACTIVE, PAUSED, PENDING_STOPPED, STOPPED, SOURCE_UNAVAILABLE, LINK_FAILED, FAILED)
# REST v3's MirrorTopicStatus enum (Confluent Cloud's; the Platform's is a subset of it): the
# engine's statuses and those only a Confluent server reports
REST_STATUSES = ("ACTIVE", "FAILED", "LINK_FAILED", "LINK_PAUSED", "PAUSED", "PENDING_STOPPED",
                 "SOURCE_UNAVAILABLE", "STOPPED", "PENDING_MIRROR", "PENDING_SYNCHRONIZE",
                 "PENDING_SETUP_FOR_RESTORE", "PENDING_RESTORE")
# the source does not answer: the mirror's lag is the one of its last fetch (stale,
# core/monitor/lag.py)
SOURCE_UNREACHED = (SOURCE_UNAVAILABLE, LINK_FAILED)
NO_ERROR = "NO_ERROR"
SOURCE_TOPIC_MAY_BE_DELETED = "SOURCE_TOPIC_MAY_BE_DELETED"
SOURCE_PARTITIONS_DECREASED = "SOURCE_PARTITIONS_DECREASED"
# the link's principal may not READ the source topic (its ACL removed, a DENY added): Kafka's
# error name, in the REST description's extensible mirror_topic_error enum
SOURCE_TOPIC_NOT_AUTHORIZED = "TOPIC_AUTHORIZATION_FAILED"

# Always synced from the source topic (Confluent's Mirror Topics documentation, "Synced Mirror
# Topic Configurations"); one definition, in topic_configs.py, where altering them on a mirror
# is refused (topics.py re-exports it).
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


def unknown_mirror_topic(topic: str) -> KafkaError:
    """UNKNOWN_TOPIC_OR_PARTITION: no topic ``topic`` at all where a mirror topic is asked
    for (Kafka's text, then the topic; REST answers it as 404 / 40403)."""
    return KafkaError("UNKNOWN_TOPIC_OR_PARTITION", "This server does not host this "
                      f"topic-partition: there is no topic '{topic}'.", field="topic")


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
    # The source topic's id when the mirror was made (KIP-516 topic ids): a source topic
    # deleted and created again under its name is another topic, never copied on (NULL: made
    # before this step, not checked).
    ["ALTER TABLE mirrors ADD COLUMN source_topic_id TEXT"],
    # The source partition's epoch at the last fetch (core/kafka/epochs.py: where it ends
    # in the source's history is where the mirror's log stops being the source's; NULL:
    # never fetched since this step, taken at the next fetch).
    ["ALTER TABLE mirror_partitions ADD COLUMN source_epoch INTEGER"],
]

# the source database's name on the destination connection while records or offsets are copied
# from it
ATTACHED = "kl_src"


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
    # an ACTIVE mirror that copies nothing inside the link's retry timeout, said for people
    # (MirrorState.trouble): not a field of REST's mirror data, which says ACTIVE, NO_ERROR
    trouble: str | None = None

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
class OffsetClamp:
    """A consumer group's committed offset of a mirror partition, beyond the partition's log
    end offset when the mirror stopped, reset to that log end offset (Confluent's Mirror
    Topics documentation, "Why consumer offsets may be clamped"): per (group, partition), in
    Kafka's next-offset-to-read terms. The NATS counterpart, a consumer's position placed at
    a promoted stream's last sequence, is core/dr/rules.py ``PositionClamp``."""

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
    clamps: list[OffsetClamp] = field(default_factory=list)
    already_stopped: bool = False
    not_mirrored: bool = False
    hint: str | None = None  # for people ("did you mean ...?"); not in the REST document

    @property
    def ok(self) -> bool:
        return self.error_code == 0

    def to_json(self) -> dict[str, Any]:
        # as REST v3's AlterMirrorStatusResponseData: error_code null on success
        return {
            "mirror_topic_name": self.mirror_topic_name,
            "error_code": None if self.ok else self.error_code,
            "error_message": self.error_message or None,
            "mirror_lags": [p.to_json() for p in self.mirror_lags],
            "clamps": [c.to_json() for c in self.clamps],
        }


@dataclass
class TruncateResult:
    """A topic truncated and made a mirror again (truncate-and-restore; the restored side of
    a reverse). ``mirror_status``: the new mirror's status, set by the reverse verbs (ACTIVE,
    or PAUSED after reverse-and-pause) and then in the JSON. ``clamps``: the committed group
    offsets the truncation left beyond a partition's new log end, reset to it (the rule of
    :class:`OffsetClamp`: a group there would skip the records mirrored into those
    offsets)."""

    mirror_topic_name: str
    partitions: list[dict[str, int]]  # {partition, messages_truncated, offset_truncated_to}
    mirror_status: str | None = None
    clamps: list[OffsetClamp] = field(default_factory=list)
    # a run again after the topic was restored (a finished run, or one killed after its
    # transaction): nothing left to do, said so (every DR verb may be run again)
    already_done: bool = False

    @property
    def messages_truncated(self) -> int:
        return sum(p["messages_truncated"] for p in self.partitions)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mirror_topic_name": self.mirror_topic_name,
                               "partitions": self.partitions}
        if self.mirror_status is not None:
            out["mirror_status"] = self.mirror_status
        out["clamps"] = [c.to_json() for c in self.clamps]
        if self.already_done:
            out["already_done"] = True
        return out


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
    acls_synced: int = 0
    stopped: list[str] = field(default_factory=list)
    clamps: list[OffsetClamp] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # mirror partitions cut back where their source's log was cut (core/kafka/epochs.py):
    # {topic, partition, offset_truncated_to, messages_truncated}
    truncated: list[dict[str, Any]] = field(default_factory=list)

    @property
    def moved(self) -> bool:
        return bool(self.copied or self.created or self.offsets_synced or self.stopped
                    or self.truncated)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "cluster": self.cluster, "link": self.link, "state": self.state,
            "mirrors": self.mirrors, "copied": self.copied, "lag": self.lag,
            "offsets_synced": self.offsets_synced, "configs_synced": self.configs_synced,
        }
        if self.created:
            out["created"] = self.created
        if self.acls_synced:
            out["acls_synced"] = self.acls_synced
        if self.stopped:
            out["stopped"] = self.stopped
        if self.clamps:
            out["clamps"] = [c.to_json() for c in self.clamps]
        if self.truncated:
            out["truncated"] = self.truncated
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
    epoch: int = 0  # the source partition's epoch when the cut was taken (epochs.py)

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
        """The source record keys to read (topic_records.py ``record_key``), as ``(lo, hi)`` pairs,
        ``lo <= id < hi``, each inside one partition, at most ``rows_per_range`` offsets
        each; partition order, then offset order."""
        from .topic_records import record_key

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
    clamps: list[OffsetClamp] = field(default_factory=list)
    failover: AlterResult | None = None


# --------------------------------------------------------------------------- helpers


def now_ms(clock: Clock) -> int:
    return clock.now_ns() // 1_000_000


def code_of(name: str) -> int:
    """Kafka's number of error ``name`` (an AlterResult's ``error_code``)."""
    from .errors import ERROR_CODES

    return int(ERROR_CODES.get(name, -1))


def source_replaced(row: tuple, sinfo: Any) -> bool:
    """Whether the source topic of mirror ``row`` (``MirrorState._rows``) is another one than
    the topic mirrored: deleted and created again under its name (its topic id changed; a
    mirror made before ids were kept is not checked)."""
    return bool(row[13]) and sinfo.topic_id != row[13]
