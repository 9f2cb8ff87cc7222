"""Retention and compaction of Kafka topics: ``retention.ms`` and ``retention.bytes`` move
a partition's log start offset (record granularity), ``cleanup.policy=compact`` removes the
records that a newer record of the same key replaces and, after ``delete.retention.ms``, the
tombstones (``min.compaction.lag.ms``, ``max.compaction.lag.ms``,
``min.cleanable.dirty.ratio``). :func:`maintain` runs them for one topic before a read
(cheap when nothing is due), :func:`apply_policies` inside a write transaction.

Its functions take the topics' state (:class:`~jetlink.core.kafka.topic_store.TopicStore`)
as their first argument; the ``Kafka`` facade (topics.py) binds them as its methods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .topic_configs import LONG_MAX, Policy
from .topic_records import (
    SIZE_SQL,
    decode_headers,
    ids_bytes,
    partition_range,
    record_size,
    records_bytes,
)
from .topic_types import TopicRow, find_topic, get_topic

if TYPE_CHECKING:  # pragma: no cover
    from .topic_store import TopicStore

__all__ = ["apply_policies", "apply_retention", "maintain"]


def apply_retention(kafka: TopicStore, topic: str | None = None) -> int:
    """Apply retention (retention.ms, retention.bytes: the log start offset advances)
    and compaction (cleanup.policy compact) to ``topic`` or every topic now; returns the
    number of records removed. Cheap when nothing is due."""
    now = kafka.now_ms()
    names = [topic] if topic is not None else kafka.topic_names()
    removed = 0
    for name in names:
        with kafka._schema.read() as conn:
            t = get_topic(conn, name)
            if not _due(conn, t, now):
                continue
        with kafka._schema.write() as conn:
            t = get_topic(conn, name)
            removed += apply_policies(conn, t, now)
    return removed


def maintain(kafka: TopicStore, name: str) -> None:
    """Retention of one topic before a read: a read snapshot finds whether anything is
    due; only then a write transaction runs it."""
    now = kafka.now_ms()
    with kafka._schema.read() as conn:
        t = find_topic(conn, name)
        if t is None or not _due(conn, t, now):
            return
    with kafka._schema.write() as conn:
        t = find_topic(conn, name)
        if t is not None:
            apply_policies(conn, t, now)


def _parts(conn: Any, t: TopicRow) -> list[tuple[int, ...]]:
    return conn.execute(
        "SELECT partition, log_start, log_end, bytes, cleaned, clean_bytes, tomb_due_ms "
        "FROM partitions WHERE topic = ? ORDER BY partition", (t.rowid,)).fetchall()


def _due(conn: Any, t: TopicRow, now: int) -> bool:
    pol = t.policy
    for p, start, end, size, cleaned, clean_bytes, tomb_due in _parts(conn, t):
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
        if pol.compact and _compaction_due(conn, pol, now, lo, hi, start, end, size,
                                                cleaned, clean_bytes, tomb_due):
            return True
    return False


def apply_policies(conn: Any, t: TopicRow, now: int) -> int:
    """Retention then compaction of every partition of ``t`` (inside a write transaction)."""
    pol = t.policy
    removed = 0
    for row in _parts(conn, t):
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
                    cut = _bytes_cut(conn, floor, lo + end, size - gone,
                                          pol.retention_bytes)
            if cut is not None and cut > lo + start:
                res = _truncate_front(conn, t, p, lo, cut, start, end, size, cleaned,
                                           clean_bytes)
                removed += res[0]
                start, size, cleaned, clean_bytes = res[1:]
        if pol.compact and _compaction_due(conn, pol, now, lo, hi, start, end, size,
                                                cleaned, clean_bytes, tomb_due):
            removed += _compact(conn, t, pol, now, p, lo, start, end, size, cleaned)
    return removed


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


def _truncate_front(conn: Any, t: TopicRow, p: int, lo: int, cut: int, start: int, end: int,
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


def _cleanable_end(conn: Any, pol: Policy, now: int, lo: int, start: int, end: int) -> int:
    """The first offset compaction may not touch yet: min.compaction.lag.ms keeps the
    records younger than it (from the first such record on)."""
    if pol.min_lag_ms <= 0:
        return end
    row = conn.execute(
        "SELECT id FROM records WHERE id >= ? AND id < ? AND ? - ts < ? ORDER BY id LIMIT 1",
        (lo + start, lo + end, now, pol.min_lag_ms)).fetchone()
    return end if row is None else row[0] - lo


def _compaction_due(conn: Any, pol: Policy, now: int, lo: int, hi: int, start: int,
                    end: int, size: int, cleaned: int, clean_bytes: int,
                    tomb_due: int) -> bool:
    if tomb_due and tomb_due <= now:
        return True
    dirty_from = max(cleaned, start)
    if dirty_from >= end or size <= 0:
        return False
    if _cleanable_end(conn, pol, now, lo, dirty_from, end) <= dirty_from:
        return False
    dirty = size - (clean_bytes if cleaned > start else 0)
    if dirty / size >= pol.dirty_ratio:
        return True
    if pol.max_lag_ms < LONG_MAX:
        row = conn.execute(
            "SELECT ts FROM records WHERE id >= ? AND id < ? ORDER BY id LIMIT 1",
            (lo + dirty_from, lo + end)).fetchone()
        if row is not None and now - row[0] >= pol.max_lag_ms:
            return True
    return False


def _compact(conn: Any, t: TopicRow, pol: Policy, now: int, p: int, lo: int, start: int,
             end: int, size: int, cleaned: int) -> int:
    """One cleaning pass: in the cleanable part of the log, every record with a newer
    record of the same key (in the dirty part) goes; then the tombstones (null value)
    older than delete.retention.ms go. The log start offset stays."""
    dirty_from = max(cleaned, start)
    stop = _cleanable_end(conn, pol, now, lo, dirty_from, end)
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
            gone = ids_bytes(conn, doomed, params)
            removed += conn.execute(f"DELETE FROM records WHERE id IN ({doomed})",
                                    params).rowcount
            size -= gone
        cut = now - pol.delete_retention_ms
        tomb = ("SELECT id FROM records WHERE id >= ? AND id < ? AND value IS NULL "
                "AND ts <= ?")
        tparams = (lo + start, lo + max(stop, dirty_from), cut)
        gone = ids_bytes(conn, tomb, tparams)
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
