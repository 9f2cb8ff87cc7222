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
reporting messages truncated per partition. ``reverse_and_start`` / ``reverse_and_pause``
(on the cluster holding the mirror, both clusters up, the link of the same name on the source
cluster pointing back): stops the mirror (as failover) and runs ``truncate_and_restore`` on the
source side through that reverse link, so the source becomes the mirror (left PAUSED by
``reverse_and_pause``); a run killed between the two databases is finished by a re-run.

This module holds the :class:`Mirrors` facade (its state: the reads and the status
recomputation; the cleanup) and :func:`pump_links`. Its other methods are functions of the
modules holding their rules, bound here: :mod:`.mirror_create` (creation, auto-create),
:mod:`.mirror_copy` (the link step: config sync, record copy, consumer offset sync),
:mod:`.mirror_bulk` (the bulk copy of ``jetlink spark mirror-topic``), :mod:`.mirror_promote`
(pause / resume, promote / failover with clamping, failing back). The statuses, tables,
result objects and naming rules are in :mod:`.mirror_model`, re-exported here.
"""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..clock import Clock, SystemClock
from ..errors import JetlinkError
from . import mirror_bulk, mirror_copy, mirror_create, mirror_promote
from .errors import KafkaError
from .mirror_model import (
    ACTIVE,
    COMPONENT,
    FAILED,
    LINK_FAILED,
    NO_ERROR,
    PAUSED,
    PENDING_STOPPED,
    SCHEMA_STEPS,
    SOURCE_PARTITIONS_DECREASED,
    SOURCE_TOPIC_MAY_BE_DELETED,
    SOURCE_UNAVAILABLE,
    START_OFFSET_SPEC,
    STATUSES,
    STOPPED,
    SYNCED_CONFIGS,
    AlterResult,
    BulkPartition,
    BulkPlan,
    BulkResult,
    Clamp,
    LinkReport,
    MirrorInfo,
    PartitionLag,
    TruncateResult,
    already_stopped_message,
    check_mirror_topic_configs,
    mirror_source_topic,
    mirror_topic_exists,
    not_mirrored_message,
    now_ms,
    unknown_source_topic,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..store import Cluster, DataDir

__all__ = [
    "COMPONENT",
    "NO_ERROR",
    "SCHEMA_STEPS",
    "SOURCE_PARTITIONS_DECREASED",
    "SOURCE_TOPIC_MAY_BE_DELETED",
    "START_OFFSET_SPEC",
    "STATUSES",
    "PartitionLag",
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



# --------------------------------------------------------------------------- the API


class Mirrors:
    """Mirror topics of the links stored in ``cluster`` (their destination cluster).

    The methods from ``create`` on are functions of the modules that hold their rules
    (module doc), bound as methods: the facade is their first argument."""

    def __init__(self, datadir: DataDir, cluster: str, clock: Clock | None = None) -> None:
        from .links import Links
        from .topics import Kafka

        self.datadir = datadir
        self.cluster = cluster
        self.clock: Clock = clock or SystemClock()
        self.cl: Cluster = datadir.open(cluster)
        self.kafka = Kafka(self.cl, self.clock)
        self.links = Links(datadir, cluster, self.clock)
        from . import links as links_module
        from . import topics as topics_module
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
        self.refresh(link, topic)
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
        self.refresh(link)
        out = []
        for row in self._rows(link):
            if status is not None and row[3] != status.upper():
                continue
            if pending_stopped_only and row[3] != PENDING_STOPPED:
                continue
            out.append(self._info(row))
        return out

    def topics_of(self, link: str, *, live_only: bool = False) -> builtins.list[str]:
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

    def refresh(self, link: str | None = None, topic: str | None = None) -> None:
        """Recompute the statuses of the mirrors of ``link`` / named ``topic`` (every mirror
        when neither is given; runs before every read of them). A status is written only
        over the one it was computed from, so a change made meanwhile (by another request
        or process) is never overwritten with a status computed from older data."""
        now = now_ms(self.clock)
        changes = []
        links: dict[str, tuple[str, Any, int]] = {}
        for row in self._rows(link, topic):
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
                                row[0], row[1], row[3], row[4], row[7], row[9]))
        if changes:
            with self._schema.write() as conn:
                conn.executemany(
                    "UPDATE mirrors SET status = ?, error = ?, trouble_since_ms = ?, "
                    "status_time_ms = ? WHERE topic = ? AND link = ? AND status = ? "
                    "AND error IS ? AND paused = ? AND trouble_since_ms IS ?", changes)

    # -- creation (mirror_create) ----------------------------------------------------------
    create = mirror_create.create

    # -- pause / resume, promote / failover, failing back (mirror_promote) ------------------
    pause = mirror_promote.pause
    resume = mirror_promote.resume
    promote = mirror_promote.promote
    failover = mirror_promote.failover
    finish_pending = mirror_promote.finish_pending
    truncate_and_restore = mirror_promote.truncate_and_restore
    reverse_and_start = mirror_promote.reverse_and_start
    reverse_and_pause = mirror_promote.reverse_and_pause
    promote_local_and_start = mirror_promote.promote_local_and_start
    promote_local_and_pause = mirror_promote.promote_local_and_pause
    restorable = mirror_promote.restorable

    # -- the link step (mirror_copy) --------------------------------------------------------
    step = mirror_copy.step
    sync_offsets = mirror_copy.sync_offsets

    # -- bulk copy (mirror_bulk) ------------------------------------------------------------
    bulk_begin = mirror_bulk.bulk_begin
    bulk_write = mirror_bulk.bulk_write
    bulk_finish = mirror_bulk.bulk_finish
    bulk_release = mirror_bulk.bulk_release

    def _topic_rowid(self, name: str, schema: str = "main", conn: Any = None) -> int:
        c = conn or self.cl.conn
        row = c.execute(f"SELECT id FROM {schema}.topics WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise KafkaError("UNKNOWN_TOPIC_OR_PARTITION",
                             f"Topic '{name}' does not exist", field="topic")
        return int(row[0])

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
        """Mirror rows whose topic was deleted. Found again and removed inside one write
        transaction: a mirror created meanwhile (its topic committed before its row, by
        another request or process) is never taken for an orphan."""
        orphans = ("SELECT topic FROM mirrors WHERE topic NOT IN (SELECT name FROM topics)")
        with self._schema.read() as conn:
            if conn.execute(orphans + " LIMIT 1").fetchone() is None:
                return
        with self._schema.write() as conn:
            topics = [(r[0],) for r in conn.execute(orphans)]
            conn.executemany("DELETE FROM mirrors WHERE topic = ?", topics)
            conn.executemany("DELETE FROM mirror_partitions WHERE topic = ?", topics)
            conn.executemany("DELETE FROM synced_offsets WHERE topic = ?", topics)


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
