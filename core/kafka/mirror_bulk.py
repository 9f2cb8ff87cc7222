"""The bulk copy of a mirror topic (``jetlink spark mirror-topic``): ``Mirrors.bulk_begin``,
``bulk_write``, ``bulk_finish`` and ``bulk_release``.

A bulk copy fills a mirror topic that holds no records with exactly what the link step's
record copy (:func:`.mirror_copy.copy_records`) would store (offsets, timestamps, keys,
values, headers; the partition offsets, sizes and compaction bookkeeping; the fetch
positions), in large transactions, then hands the mirror back to the link, which continues
from the copy's cut. While it runs the mirror is held: paused (created paused when the copy
creates it), so the pump copies nothing into it; every write transaction checks the hold and
the partitions' log end offsets, so a mirror resumed, failed over, deleted or written by
anyone else meanwhile stops the copy (nothing is written twice; the link continues from what
is stored). A copy killed half-way leaves the mirror paused with a consistent prefix of each
partition: ``jetlink mirrors resume`` lets the link finish it.

Its functions take the mirrors' state (:class:`~jetlink.core.kafka.mirror_state.MirrorState`)
as their first argument; the ``Mirrors`` facade binds them as its methods.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from . import mirror_promote
from .authz import link_read_denied
from .epochs import current_epoch, history
from .errors import KafkaError
from .links import parse_start_offset_spec
from .mirror_copy import initial_offset, write_offsets
from .mirror_create import active_destination, create
from .mirror_model import (
    ACTIVE,
    FAILED,
    PAUSED,
    PENDING_STOPPED,
    STOPPED,
    BulkPartition,
    BulkPlan,
    BulkResult,
    now_ms,
)
from .topic_records import record_key, records_bytes

if TYPE_CHECKING:  # pragma: no cover
    from .mirror_state import MirrorState

__all__ = ["bulk_begin", "bulk_check", "bulk_finish", "bulk_release", "bulk_write", "check_hold"]


def bulk_begin(m: MirrorState, topic: str, link: str) -> BulkPlan:
    """Plan a bulk copy into mirror topic ``topic`` of ``link`` and hold the mirror.

    The mirror is created (paused) when absent, as ``Mirrors.create`` creates it; an
    existing one must be this link's, ACTIVE, and hold no records. The source topic's
    retention runs first (as the pump's state check does), then the cut is taken: per
    partition, from where the pump would start (the mirror's log end, or
    ``mirror.start.offset.spec`` for a mirror that never fetched, never below the source's
    log start) to the source's log end offset. In the holding transaction the partitions
    get their starting offsets (as the pump's first fetch sets them)."""
    li, created, row = _bulk_mirror(m, topic, link)
    src, source_topic, s_id, s_parts = _bulk_source(m, li, link, row)
    d_id, parts = _hold(m, topic, link, created, (src, source_topic, s_parts))
    with src._schema.read() as sconn:  # what the cut holds (rows in), in which epoch
        epochs = history(sconn, s_id)
        for bp in parts:
            bp.epoch = current_epoch(epochs.get(bp.partition, ()))
            if bp.end > bp.first:
                bp.records = sconn.execute(
                    "SELECT count(*) FROM records WHERE id >= ? AND id < ?",
                    (record_key(s_id, bp.partition, bp.first),
                     record_key(s_id, bp.partition, bp.end))).fetchone()[0]
    return BulkPlan(topic, link, li.source_cluster, source_topic, s_id, d_id, created,
                    parts)


def bulk_check(m: MirrorState, topic: str, link: str) -> None:
    """Refuse a bulk copy into ``topic`` of ``link`` that :func:`bulk_begin` would refuse
    for its link or its existing mirror, holding and creating nothing (asked before a Spark
    driver starts)."""
    li = _active_link(m, link)
    if m.kafka.has_topic(topic):
        source_topic = _existing_mirror(m, topic, link, created=False)[2]
        with m._schema.read() as conn:
            _refuse_records(conn, topic, m._topic_rowid(topic, "main", conn))
    else:
        from .mirror_model import mirror_source_topic

        source_topic = mirror_source_topic(topic, li.config.prefix)
    _li, src = m._source(link)
    if src is None:
        raise KafkaError("INVALID_REQUEST", f"Cluster link '{link}': the source cluster "
                         f"{li.source_cluster} can not be reached", field="link")
    if not src.has_topic(source_topic):
        raise _no_source_topic(source_topic, li.source_cluster, link)


def _refuse_records(conn: Any, topic: str, d_id: int) -> None:
    """A mirror topic that holds records already is not seeded (KafkaError)."""
    lo, hi = record_key(d_id, 0, 0), record_key(d_id + 1, 0, 0)
    if conn.execute("SELECT 1 FROM records WHERE id >= ? AND id < ? LIMIT 1",
                    (lo, hi)).fetchone():
        raise KafkaError("INVALID_REQUEST", f"Mirror topic '{topic}' holds records "
                         "already: a bulk copy seeds a mirror topic that holds none (the "
                         "link keeps an existing one up to date)", field="topic")


def _active_link(m: MirrorState, link: str) -> Any:
    return active_destination(
        m, link, "mirror topics are filled on a link's destination cluster",
        "a bulk copy runs through an active link")


def _existing_mirror(m: MirrorState, topic: str, link: str, *, created: bool) -> tuple:
    """The mirror row of ``topic`` on ``link``: it must be one, and ACTIVE unless the copy
    just ``created`` it (paused)."""
    rows = m._rows(link, topic)
    if not rows:
        raise KafkaError("INVALID_REQUEST", f"Topic '{topic}' already exists and is not a "
                         f"mirror topic of link '{link}': a bulk copy fills a mirror topic "
                         "of the link", field="topic")
    row = rows[0]
    if not created and (row[3] != ACTIVE or row[7]):
        raise KafkaError("INVALID_REQUEST", f"Mirror topic '{topic}' is {row[3]}: a bulk "
                         "copy fills an ACTIVE mirror topic"
                         + (" (jetlink mirrors resume)" if row[7] else ""), field="topic")
    return row


def _bulk_mirror(m: MirrorState, topic: str, link: str) -> tuple[Any, bool, tuple]:
    """The mirror a bulk copy fills: (the link, whether the copy created it, its row). Created
    paused when absent; an existing one must be this link's and ACTIVE."""
    li = _active_link(m, link)
    created = False
    if not m.kafka.has_topic(topic):
        try:
            create(m, topic, link, paused=True)
            created = True
        except KafkaError as err:  # created meanwhile (auto-create): checked below
            if err.name != "TOPIC_ALREADY_EXISTS":
                raise
    m.refresh()
    return li, created, _existing_mirror(m, topic, link, created=created)


def _no_source_topic(topic: str, cluster: str, link: str) -> KafkaError:
    return KafkaError("UNKNOWN_TOPIC_OR_PARTITION", f"Topic '{topic}' does not exist on the "
                      f"source cluster {cluster} of link '{link}'", field="source_topic")


def _bulk_source(m: MirrorState, li: Any, link: str, row: tuple
                 ) -> tuple[Any, str, int, dict[int, tuple[int, int]]]:
    """The source side of a bulk copy, its retention run first (as the pump's state check
    does): (the source cluster's Kafka, the source topic, its rowid, its partitions' (log
    start, log end))."""
    _li, src = m._source(link)
    if src is None:
        raise KafkaError("INVALID_REQUEST", f"Cluster link '{link}': the source cluster "
                         f"{li.source_cluster} can not be reached", field="link")
    source_topic = row[2]
    why = link_read_denied(src.cluster, li.principal, source_topic) if li.principal else None
    if why is not None:  # the link's READ on the source topic, as the pump needs it
        raise KafkaError("TOPIC_AUTHORIZATION_FAILED", why, field="source_topic")
    try:
        src.describe_topic(source_topic)  # the source's retention, as the pump sees it
    except KafkaError:
        raise _no_source_topic(source_topic, li.source_cluster, link) from None
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
    return src, source_topic, s_id, s_parts


def _hold(m: MirrorState, topic: str, link: str, created: bool,
          source: tuple[Any, str, dict[int, tuple[int, int]]]
          ) -> tuple[int, list[BulkPartition]]:
    """The holding transaction of a bulk copy: the mirror, still this link's, unchanged and
    without records, is paused and started; each partition shared with ``source`` (the
    source's Kafka, topic and partitions' (log start, log end)) gets its starting offsets
    as the pump's first fetch sets them, and its cut (first, end). Returns (the mirror's
    rowid, the partitions of the copy)."""
    src, source_topic, s_parts = source
    now = now_ms(m.clock)
    parts: list[BulkPartition] = []
    with m._schema.write() as conn:
        cur = conn.execute("SELECT link, status, paused, started, start_spec FROM mirrors "
                           "WHERE topic = ?", (topic,)).fetchone()
        if cur is None or cur[0] != link:
            raise KafkaError("INVALID_REQUEST", f"Mirror topic '{topic}' of link '{link}' "
                             "was deleted while the bulk copy started", field="topic")
        if cur[2] != int(created) or cur[1] in (STOPPED, PENDING_STOPPED, FAILED):
            raise KafkaError("INVALID_REQUEST", f"Mirror topic '{topic}' changed while the "
                             f"bulk copy started (it is {cur[1]})", field="topic")
        d_id = m._topic_rowid(topic, "main", conn)
        _refuse_records(conn, topic, d_id)
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
                m_start = m_end = initial_offset(src, source_topic, p, start,
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
    return d_id, parts


def check_hold(m: MirrorState, conn: Any, plan: BulkPlan) -> None:
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


def bulk_write(m: MirrorState, plan: BulkPlan, rows: Iterable[tuple[int, int, int, Any, Any, Any]],
               *, txn_rows: int = 100_000,
               on_txn: Callable[[int], None] | None = None) -> int:
    """Append ``(partition, offset, timestamp_ms, key, value, headers)`` rows (headers in
    the stored form, topic_records.py ``encode_headers``) at their offsets, offsets increasing
    per partition and inside the plan's ranges; one destination transaction per
    ``txn_rows`` rows, each also moving the partitions' log end offsets, sizes and fetch
    positions (a prefix a bounded pump step could have stored). ``on_txn(rows so far)``
    runs after each commit. Returns the rows written."""
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
        now = now_ms(m.clock)
        with m._schema.write() as conn:
            check_hold(m, conn, plan)
            conn.executemany("INSERT INTO records(id, ts, key, value, headers) "
                             "VALUES (?, ?, ?, ?, ?)", batch)
            for p, first in touched.items():
                added = records_bytes(conn, record_key(d_id, p, first),
                                      record_key(d_id, p, nxt[p]))
                conn.execute("UPDATE partitions SET log_end = ?, bytes = bytes + ? "
                             "WHERE topic = ? AND partition = ?", (nxt[p], added, d_id, p))
            conn.executemany(  # (with the cut's source epoch: a copy killed after this
                # transaction holds records a cut of the source must reach, epochs.py)
                "UPDATE mirror_partitions SET last_fetch_offset = ?, last_fetch_ms = ?, "
                "source_epoch = ? WHERE topic = ? AND partition = ?",
                [(nxt[p], now, by_p[p].epoch, plan.topic, p) for p in touched])
        for p in touched:
            by_p[p].rows += counted[p]
            by_p[p].written = nxt[p]
        total += len(batch)
        plan.transactions += 1
        if on_txn is not None:
            on_txn(total)
    return total


def bulk_finish(m: MirrorState, plan: BulkPlan, *, failover: bool = False) -> BulkResult:
    """End a bulk copy: in one transaction every partition's log end offset and fetch
    position becomes the cut (the source's log end when the job read it; a compacted
    tail holds no records) and the mirror is released (ACTIVE again: the pump continues
    from the cut, without a gap or a duplicate); then the mirror's own retention runs
    (as after a pump step), the consumer offset sync of this mirror (the link's group
    filters; when the link syncs offsets), and with ``failover`` a failover, whose clamps
    (synced group offsets beyond the log end offsets) are returned."""
    now = now_ms(m.clock)
    with m._schema.write() as conn:
        check_hold(m, conn, plan)
        conn.executemany(
            "UPDATE partitions SET log_end = ? WHERE topic = ? AND partition = ?",
            [(bp.cursor, plan.mirror_rowid, bp.partition) for bp in plan.partitions])
        conn.executemany(
            "UPDATE mirror_partitions SET last_fetch_offset = ?, source_hw = ?, "
            "last_fetch_ms = ?, source_epoch = ? WHERE topic = ? AND partition = ?",
            [(bp.cursor, bp.end, now, bp.epoch, plan.topic, bp.partition)
             for bp in plan.partitions])
        conn.execute("UPDATE mirrors SET paused = 0 WHERE topic = ?", (plan.topic,))
    for bp in plan.partitions:
        bp.written = bp.cursor
    m.refresh()
    m.kafka.apply_retention(plan.topic)
    li = m.links.get(plan.link)
    row = m._rows(plan.link, plan.topic)[0]
    res = BulkResult(plan, row[3])
    if row[3] == ACTIVE:
        res.offsets_synced = write_offsets(m, li, {plan.topic: plan.source_topic})
    if failover:
        res.failover = mirror_promote.failover(m, [plan.topic], plan.link)[0]
        if not res.failover.ok:
            raise KafkaError("INVALID_REQUEST", res.failover.error_message, field="topic")
        res.clamps = list(res.failover.clamps)
        res.status = m._rows(plan.link, plan.topic)[0][3]
    return res


def bulk_release(m: MirrorState, plan: BulkPlan) -> None:
    """A bulk copy that failed: the mirror, if still held, goes back to the link, which
    continues from what the copy stored."""
    with m._schema.write() as conn:
        row = conn.execute("SELECT link, paused FROM mirrors WHERE topic = ?",
                           (plan.topic,)).fetchone()
        t = conn.execute("SELECT id FROM topics WHERE name = ?", (plan.topic,)).fetchone()
        if row is None or t is None or t[0] != plan.mirror_rowid or row[0] != plan.link:
            return
        conn.execute("UPDATE mirrors SET paused = 0 WHERE topic = ?", (plan.topic,))
    m.refresh()
