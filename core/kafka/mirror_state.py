"""The state of the mirror topics of one cluster (schema component ``kafka_mirrors``): the
mirror rows and their reads, each mirror's status recomputed from its link and source topic
before every read (mirrors.py step 1), and the cleanup of rows whose link or topic went.

:class:`MirrorState` holds the cluster's Kafka topics and links and the source side of a link.
The rule modules (:mod:`.mirror_create`, :mod:`.mirror_copy`, :mod:`.mirror_promote`,
:mod:`.mirror_bulk`, :mod:`.mirror_step`) take it as their first argument; the ``Mirrors``
facade (mirrors.py) is one and binds their functions as its methods. This module imports none
of them: arrows point down (facade -> rules -> state -> store).
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

from ..clock import Clock, SystemClock
from .authz import link_read_denied
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
    SOURCE_TOPIC_NOT_AUTHORIZED,
    SOURCE_UNAVAILABLE,
    STATUSES,
    STOPPED,
    MirrorInfo,
    PartitionLag,
    not_mirrored_message,
    now_ms,
    source_replaced,
    unknown_mirror_topic,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..store import Cluster, DataDir

__all__ = ["MirrorState"]


# an ACTIVE mirror's trouble inside the retry timeout (MirrorState.source_problem), as said
_TROUBLE = {SOURCE_TOPIC_MAY_BE_DELETED: "source topic {} not found",
            SOURCE_PARTITIONS_DECREASED: "source topic {} has fewer partitions"}


class MirrorState:
    """The mirror topics of the links stored in ``cluster`` (their destination cluster): the
    rows, their reads and statuses, their cleanup."""

    statuses: tuple[str, ...] = tuple(STATUSES)  # the mirror_status values list filters by

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
        if (not info.source_available or not self.datadir.has_cluster(src)
                or self.datadir.is_down(src)):  # (a damaged one: not available either)
            return info, None
        return info, Kafka(self.datadir.open(src), self.clock)

    def _state(self, link: str) -> str:
        return self.links.state(link)

    # -- reading ---------------------------------------------------------------------------
    def _rows(self, link: str | None = None, topic: str | None = None) -> list[tuple]:
        sql = ("SELECT topic, link, source_topic, status, error, status_time_ms, auto_created, "
               "paused, pending, trouble_since_ms, stopped_seq, start_spec, started, "
               "source_topic_id FROM mirrors")
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
        trouble = None
        if row[3] == ACTIVE and row[9] is not None and src is not None:
            try:
                retry = self.links.get(row[1], with_topics=False).config.retry_timeout_ms
            except KafkaError:
                retry = None
            if retry is not None:
                trouble = self.trouble(row, src, retry, now_ms(self.clock))
        return MirrorInfo(
            link_name=row[1], mirror_topic_name=row[0], source_topic_name=row[2],
            mirror_status=row[3], mirror_topic_error=row[4], status_time_ms=row[5],
            num_partitions=len(lags), mirror_lags=lags, auto_created=bool(row[6]),
            stopped_seq=row[10], trouble=trouble)

    def trouble(self, row: tuple, src: Any, retry_ms: int, now: int) -> str:
        """What an ACTIVE mirror ``row`` copying nothing inside the link's retry timeout
        (its trouble_since_ms set) meets, and when it fails: ``source topic pay not found:
        the mirror fails in 299s (cluster.link.retry.timeout.ms) unless it comes back``."""
        why = _TROUBLE.get(self.source_problem(row, src) or "", "source topic {} cannot be read")
        left = max(0, row[9] + retry_ms - now) // 1000
        return (f"{why.format(row[2])}: the mirror fails in {left}s "
                "(cluster.link.retry.timeout.ms) unless it comes back")

    def describe(self, topic: str, link: str | None = None) -> MirrorInfo:
        if link is not None:
            self.links.get(link, with_topics=False)  # CLUSTER_LINK_NOT_FOUND, as list's
        self.refresh(link, topic)
        rows = self._rows(link, topic)
        if not rows:
            from ..errors import did_you_mean

            with self.kafka._schema.read() as conn:  # (empty tables where never made)
                known = conn.execute("SELECT 1 FROM topics WHERE name = ?",
                                     (topic,)).fetchone() is not None
            # the closest mirror topic (of the link), for people: as promote and the others
            hint = did_you_mean(topic, [r[0] for r in self._rows(link)])
            if not known:
                # no topic of that name at all: Kafka's UnknownTopicOrPartitionException
                err = unknown_mirror_topic(topic)
            else:
                err = KafkaError("INVALID_REQUEST", not_mirrored_message(topic)
                                 + (f" by link '{link}'" if link else ""), field="topic")
            err.detail = hint
            raise err
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

    def creation_configs(self, topic: str) -> dict[str, str]:
        """The configs that create ``topic`` again as it is (a topology export): its own
        topic configs (every one not synced from the source topic, mirror_model.py
        ``SYNCED_CONFIGS``) and ``mirror.start.offset.spec`` where the mirror started from
        another position than its link's default (link config of that name, else
        ``earliest``: mirror_create.py). {} for a topic that is not a mirror."""
        from .mirror_model import START_OFFSET_SPEC, SYNCED_CONFIGS

        rows = self._rows(topic=topic)
        if not rows:
            return {}
        row = rows[0]
        found = self.kafka.describe_topic(topic)
        out = {k: v for k, v in found.configs.items() if k not in SYNCED_CONFIGS}
        default = self.links.get(row[1], with_topics=False).configs.get(
            START_OFFSET_SPEC, "earliest")
        if row[11] != default:
            out[START_OFFSET_SPEC] = row[11]
        return dict(sorted(out.items()))

    def topics_of(self, link: str, *, live_only: bool = False) -> builtins.list[str]:
        """Mirror topics of a link (``live_only``: not STOPPED). A row whose topic was
        deleted (an orphan the next step drops: :meth:`drop_orphans`) is none: a link is
        never held, nor failed over, by a topic that is gone."""
        with self._schema.read() as conn:
            rows = conn.execute(
                "SELECT topic, status FROM mirrors WHERE link = ? AND EXISTS (SELECT 1 FROM "
                "topics WHERE topics.name = mirrors.topic) ORDER BY topic", (link,)).fetchall()
        return [t for t, status in rows if not live_only or status != STOPPED]

    # -- states ----------------------------------------------------------------------------
    def source_problem(self, row: tuple, src: Any, principal: str | None = None) -> str | None:
        """Why mirror ``row`` cannot copy from its source now (the mirror_topic_error it
        fails with once ``cluster.link.retry.timeout.ms`` passed), None when it can: the
        source topic gone, or another one under its name (its topic id), fewer partitions
        than the mirror's, or not READable by the link's ``principal``."""
        try:
            sinfo = src.describe_topic(row[2])
            mine = len(self.kafka.describe_topic(row[0]).partitions)
            if source_replaced(row, sinfo):  # the topic mirrored was deleted
                return SOURCE_TOPIC_MAY_BE_DELETED
            if len(sinfo.partitions) < mine:
                return SOURCE_PARTITIONS_DECREASED
        except KafkaError:
            return SOURCE_TOPIC_MAY_BE_DELETED
        if principal is not None and link_read_denied(src.cluster, principal,
                                                      row[2]) is not None:
            return SOURCE_TOPIC_NOT_AUTHORIZED
        return None

    def _target_status(self, row: tuple, link_state: str, src: Any, now: int,
                       retry_ms: int, principal: str | None = None
                       ) -> tuple[str, str, int | None]:
        """(status, error, trouble_since_ms) a mirror should have now. A source topic the
        link's ``principal`` may not READ (source ACLs) keeps the mirror ACTIVE, copying
        nothing, with the error TOPIC_AUTHORIZATION_FAILED, and FAILED once
        ``cluster.link.retry.timeout.ms`` passed (Confluent's Mirror Topics document); the
        ACL restored before then lets it go on."""
        status, error, paused, trouble = row[3], row[4], row[7], row[9]
        if status in (STOPPED, PENDING_STOPPED, FAILED):
            return status, error, trouble
        if link_state == PAUSED or paused:
            return PAUSED, NO_ERROR, trouble
        if link_state == "UNAVAILABLE" or src is None:
            return SOURCE_UNAVAILABLE, NO_ERROR, trouble
        if link_state == "FAILED":
            return LINK_FAILED, NO_ERROR, trouble
        problem = self.source_problem(row, src, principal)
        if problem is None:
            return ACTIVE, NO_ERROR, None
        since = trouble if trouble is not None else now
        if now - since >= retry_ms:
            return FAILED, problem, since
        return ACTIVE, problem if problem == SOURCE_TOPIC_NOT_AUTHORIZED else NO_ERROR, since

    def refresh(self, link: str | None = None, topic: str | None = None) -> None:
        """Recompute the statuses of the mirrors of ``link`` / named ``topic`` (every mirror
        when neither is given; runs before every read of them). A status is written only
        over the one it was computed from, so a change made meanwhile (by another request
        or process) is never overwritten with a status computed from older data."""
        now = now_ms(self.clock)
        changes = []
        links: dict[str, tuple[str, Any, int, str | None]] = {}
        for row in self._rows(link, topic):
            if row[1] not in links:
                try:
                    li, src = self._source(row[1])
                    retry = li.config.retry_timeout_ms
                    links[row[1]] = (self._state(row[1]), src, retry, li.principal)
                except KafkaError:
                    links[row[1]] = ("FAILED", None, 300000, None)
            state, src, retry, principal = links[row[1]]
            status, error, trouble = self._target_status(row, state, src, now, retry,
                                                         principal)
            if (status, error, trouble) != (row[3], row[4], row[9]):
                changes.append((status, error, trouble, now if status != row[3] else row[5],
                                row[0], row[1], row[3], row[4], row[7], row[9]))
        if changes:
            with self._schema.write() as conn:
                conn.executemany(
                    "UPDATE mirrors SET status = ?, error = ?, trouble_since_ms = ?, "
                    "status_time_ms = ? WHERE topic = ? AND link = ? AND status = ? "
                    "AND error IS ? AND paused = ? AND trouble_since_ms IS ?", changes)


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

