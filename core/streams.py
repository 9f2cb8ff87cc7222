"""Streams on the embedded store: the facade of the engine, and the reads.

This module is the engine's entry point behind :class:`jetlink.core.jetstream.JetStream`. It
works on an open SQLite connection inside a transaction the caller owns
(``Cluster.transaction()``); it never commits. The rules are nats-server 2.15's
(``stream.go processJetStreamMsg``, ``filestore.go / memstore.go storeRawMsg``, ``PurgeEx``,
``Compact``, ``expireMsgs``); docs/engine.md lists them with the few places jetlink differs.

Layout: a stream is a row of ``streams`` (config JSON + the StreamState counters) and a
contiguous key range of ``msgs`` (stream_id, seq). The modules, each importing only the ones
below it (docs/architecture.md "The stream store"):

- core/streamstore/base.py: the stored form (keys, byte accounting, source-header
  references, the reads the engine shares with this module);
- core/streamdef.py: :class:`StreamDef` (a stream's config compiled for the hot path),
  :class:`Catalog` (every stream of a cluster database); core/republish_rule.py the
  RePublish rule a StreamDef carries; core/txnstate.py the state of one write transaction;
- core/streamstore/: the engine, ``StreamTxn`` (appends buffered in an in-memory overlay and
  written with ``executemany`` at ``flush()``, limits, expiry, purge), imported on the first
  write; core/republish.py delivers what its stores queue;
- here, composing them: :class:`RetentionHooks` (what the engine asks the consumers),
  :class:`Txn` (one write transaction: ``txn.stream(d)`` gives the ``StreamTxn`` of a
  stream), the reads outside the engine: messages (``load_last``, ``next_msgs``,
  ``count_msgs``, ``seq_for_time``...), ``stream_state``, ``expiry_due``, ``recount``
  (tests, ``check``); ``check_publish_input``: what a client refuses before sending.

The names of core/streamstore/base.py, core/streamdef.py and ``StreamTxn`` are re-exported:
their import path stays ``jetlink.core.streams``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from . import limits as L
from .config.stream import StreamConfig
from .errors import NoStreamError, nats_error
from .messages import StoredMsg, StreamState
from .streamdef import Catalog, StreamDef, bump_config_gen
from .streamstore.base import (
    _MASK,
    _MSG_COLS,
    _MSG_FROM,
    FILE_HEADER_OVERHEAD,
    FILE_RECORD_OVERHEAD,
    MAX_HEADER_SIZE,
    MAX_SEQ,
    MEM_RECORD_OVERHEAD,
    SEQ_BITS,
    SET_NEXT_SQL,
    _blen,  # noqa: F401 - core/replication.py counts with S._blen
    _chain_from,
    _stored,
    hdr_sql,
    is_limit_refusal,
    is_src_ref_sql,
    key_range,
    load_msg,
    matching_subjects,
    max_src_ref,
    msg_key,
    msg_size,
    next_sql,
    parse_msg_ttl,
    payload_sql,
    remove_key_range,
    src_ref_id_sql,
    src_ref_sql,
)
from .subjects import SubjectFilter, has_wildcard, invalid_subject, is_valid_publish_subject
from .txnstate import TxnState

if TYPE_CHECKING:  # pragma: no cover
    from .streamstore.txn import StreamTxn

# core/republish.py is imported when a transaction delivers a RePublish (a read such as
# `jetlink kv get` needs none). republish.PENDING's value:
_RP_PENDING = "republish.pending"
_ST: Any = None  # core/streamstore/txn.py's StreamTxn once a transaction writes a stream


def _stream_txn() -> Any:
    """The StreamTxn class, imported on first use (a read needs no write engine)."""
    global _ST
    if _ST is None:
        from .streamstore.txn import StreamTxn

        _ST = StreamTxn
    return _ST


def __getattr__(name: str) -> Any:
    """``StreamTxn``, re-exported from core/streamstore/txn.py when first asked for."""
    if name == "StreamTxn":
        return _stream_txn()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "MAX_SEQ",
    "SEQ_BITS",
    "count_msgs",
    "existing",
    "expiry_due",
    "key_range",
    "last_seqs",
    "load_last",
    "load_msg",
    "load_next",
    "matching_subjects",
    "msg_key",
    "next_msgs",
    "recount",
    "FILE_HEADER_OVERHEAD",
    "FILE_RECORD_OVERHEAD",
    "MAX_HEADER_SIZE",
    "MAX_PAYLOAD",
    "MEM_RECORD_OVERHEAD",
    "Catalog",
    "NoConsumers",
    "NoStreamError",
    "RetentionHooks",
    "StreamDef",
    "StreamTxn",
    "Txn",
    "bump_config_gen",
    "msg_size",
    "remove_msgs",
    # re-exported from core/streamstore/base.py, besides the names above
    "SET_NEXT_SQL",
    "hdr_sql",
    "is_limit_refusal",
    "is_src_ref_sql",
    "max_src_ref",
    "next_sql",
    "parse_msg_ttl",
    "payload_sql",
    "remove_key_range",
    "src_ref_id_sql",
    "src_ref_sql",
]


def empty_last_seq(cfg: StreamConfig) -> int:
    """The last sequence of a stream that never stored anything: ``first_seq - 1`` when its
    config sets ``first_seq``, else 0 (what a seeding bulk job or an import requires)."""
    return cfg.first_seq - 1 if cfg.first_seq > 0 else 0


# the server's default max_payload (a client refuses larger): core/limits.py
MAX_PAYLOAD = L.MAX_PAYLOAD


# --- consumers / retention hooks ----------------------------------------------------------
class RetentionHooks(Protocol):
    """What the stream engine asks the consumers (see docs/engine.md "Hooks").

    ``has_interest`` decides, for an interest-retention stream, whether a new message is kept
    (the server's ``csl.HasInterest(subject)`` over the consumers' filters; no consumer: not
    kept). ``consumer_limits`` lists each consumer's max_ack_pending and inactive_threshold
    (a change of the stream's consumer limits is checked against them). ``on_purge`` tells
    the consumers about a purge that just happened (``subject`` is
    the purge's filter, None for a full / seq / keep purge). ``consumers_due`` says whether a
    consumer is past its ``inactive_threshold`` (read on every engine call, reads included,
    as expiry is), ``expire_consumers`` removes those (the server's own timer,
    deleteNotActive). Hooks taking a ``txn`` run inside
    the write transaction (``txn.conn``, ``txn.now``, ``txn.cache`` for per-call caching).
    """

    def has_interest(self, txn: Txn, stream: str, subject: str) -> bool: ...

    def consumer_count(self, conn: sqlite3.Connection, stream: str) -> int: ...

    def consumer_limits(self, conn: sqlite3.Connection, stream: str
                        ) -> list[tuple[str, int, int]]: ...

    def on_purge(self, txn: Txn, stream: str, subject: str | None) -> None: ...

    def on_stream_deleted(self, txn: Txn, stream: str) -> None: ...

    def on_retention_changed(self, txn: Txn, stream: str) -> None: ...

    def consumers_due(self, conn: sqlite3.Connection, now: int) -> bool: ...

    def expire_consumers(self, txn: Txn) -> None: ...


class NoConsumers:
    """Hooks for a store without consumers: nobody is interested, nothing to tell."""

    def has_interest(self, txn: Txn, stream: str, subject: str) -> bool:
        return False

    def consumer_count(self, conn: sqlite3.Connection, stream: str) -> int:
        return 0

    def consumer_limits(self, conn: sqlite3.Connection, stream: str
                        ) -> list[tuple[str, int, int]]:
        return []

    def on_purge(self, txn: Txn, stream: str, subject: str | None) -> None:
        return None

    def on_stream_deleted(self, txn: Txn, stream: str) -> None:
        return None

    def on_retention_changed(self, txn: Txn, stream: str) -> None:
        return None

    def consumers_due(self, conn: sqlite3.Connection, now: int) -> bool:
        return False

    def expire_consumers(self, txn: Txn) -> None:
        return None


# --- one transaction ------------------------------------------------------------------------
class Txn(TxnState):
    """One write transaction: the engine's state (core/txnstate.py) composed with the stream
    engine of each stream it writes, the RePublish delivery and the consumers' hooks."""

    def __init__(self, conn: sqlite3.Connection, now: int, catalog: Catalog,
                 hooks: RetentionHooks) -> None:
        super().__init__(conn, now, catalog)
        self.hooks = hooks
        self.streams: dict[int, StreamTxn] = {}

    def stream(self, d: StreamDef) -> StreamTxn:
        st = self.streams.get(d.id)
        if st is None:
            st = self.streams[d.id] = _stream_txn()(self, d)
        return st

    def has_interest(self, stream: str, subject: str) -> bool:
        return self.hooks.has_interest(self, stream, subject)

    def on_purge(self, stream: str, subject: str | None) -> None:
        self.hooks.on_purge(self, stream, subject)

    def flush(self) -> None:
        if self.cache.get(_RP_PENDING):
            # republishes queued by stores (may store into other streams)
            from .republish import deliver

            deliver(self, self.stream)
        for st in self.streams.values():
            st.flush()
            if st.wrote:  # a refused publish (nothing stored) changes nothing at all
                st.maybe_prune_dedupe()


# --- reads ---------------------------------------------------------------------------------------
def load_last(conn: sqlite3.Connection, stream_id: int, subject: str,
              last_seq: int | None = None) -> StoredMsg | None:
    """The server's ``LoadLastMsg``: ``>`` (or empty) loads the message AT the stream's last
    sequence (``last_seq`` when the caller knows it)."""
    if subject in ("", ">"):
        if last_seq is None:
            last_seq = conn.execute("SELECT last_seq FROM streams WHERE id = ?",
                                    (stream_id,)).fetchone()[0]
        return load_msg(conn, stream_id, last_seq)
    if not has_wildcard(subject):  # one subject: its last message in one query
        row = conn.execute(
            f"SELECT {_MSG_COLS} FROM subjects s JOIN msgs m ON m.id = ((s.stream_id << "
            f"{SEQ_BITS}) | s.last_seq) WHERE s.stream_id = ? AND s.subject = ? AND s.msgs > 0",
            (stream_id, subject)).fetchone()
        return _stored(row) if row else None
    best = 0
    for _sid, _n, _first, last, _subject in matching_subjects(conn, stream_id, subject):
        best = max(best, last)
    return load_msg(conn, stream_id, best) if best else None


def _first_at_or_after(conn: sqlite3.Connection, base: int, first: int, last: int,
                       start: int) -> int:
    """The first sequence >= start on one subject's chain (0 when none)."""
    if start <= first:
        return first
    if start > last:
        return 0
    if start - first <= last - start:
        for seq, _size, _nxt in _chain_from(conn, base, first, last):
            if seq >= start:
                return seq
        return 0
    seq = last
    while True:
        row = conn.execute("SELECT prev FROM msgs WHERE id = ?", (base | seq,)).fetchone()
        prev = row[0]
        if seq == first or prev < start or prev < first:
            return seq
        seq = prev


def _count_at_or_after(conn: sqlite3.Connection, base: int, n: int, first: int, last: int,
                       start: int) -> int:
    if start <= first:
        return n
    if start > last:
        return 0
    if start - first <= last - start:
        before = 0
        for seq, _size, _nxt in _chain_from(conn, base, first, last):
            if seq >= start:
                break
            before += 1
        return n - before
    count, seq = 0, last
    while seq >= start:
        count += 1
        if seq == first:
            break
        seq = conn.execute("SELECT prev FROM msgs WHERE id = ?", (base | seq,)).fetchone()[0]
    return count


_DENSE_SUBJECTS = 64


def _start(seq: int) -> int:
    """A start sequence a user may have given (``--id``, a consumer's ``opt_start_seq``, up
    to a uint64) within the stream's keys: above :data:`MAX_SEQ` it is the key just past the
    stream's range (``base + start``, never ``base | start``), where nothing is found."""
    return min(max(seq, 0), MAX_SEQ + 1)


def next_msgs(conn: sqlite3.Connection, stream_id: int, start: int, filters: Iterable[str],
              limit: int) -> list[StoredMsg]:
    """Up to ``limit`` messages at or after ``start`` whose subject matches any filter (no
    filter: all), in sequence order."""
    base, top = key_range(stream_id)
    start = _start(start)
    filters = [f for f in filters if f]
    if not filters or ">" in filters:
        rows = conn.execute(
            f"SELECT {_MSG_COLS} {_MSG_FROM} WHERE m.id BETWEEN ? AND ? ORDER BY m.id LIMIT ?",
            (base + start, top, limit)).fetchall()
        return [_stored(r) for r in rows]
    subjects: dict[int, tuple] = {}
    for f in filters:
        for r in matching_subjects(conn, stream_id, f):
            subjects[r[0]] = r
    if not subjects:
        return []
    if len(subjects) > _DENSE_SUBJECTS:
        ids = set(subjects)
        out: list[StoredMsg] = []
        cursor = base + start
        while len(out) < limit:
            rows = conn.execute(
                f"SELECT {_MSG_COLS}, m.subject_id {_MSG_FROM} WHERE m.id BETWEEN ? AND ? "
                "ORDER BY m.id LIMIT 1000", (cursor, top)).fetchall()
            if not rows:
                break
            for r in rows:
                if r[5] in ids:
                    out.append(_stored(r))
                    if len(out) >= limit:
                        break
            cursor = rows[-1][0] + 1
        return out
    import heapq

    heads = []
    for _sid, _n, first, last, _subject in subjects.values():
        seq = _first_at_or_after(conn, base, first, last, start)
        if seq:
            heads.append((seq, last))
    heapq.heapify(heads)
    out = []
    while heads and len(out) < limit:
        seq, last = heapq.heappop(heads)
        row = conn.execute(f"SELECT {_MSG_COLS}, {next_sql('m.')} {_MSG_FROM} WHERE m.id = ?",
                           (base | seq,)).fetchone()
        out.append(_stored(row))
        if seq < last and row[5]:
            heapq.heappush(heads, (row[5], last))
    return out


def count_msgs(conn: sqlite3.Connection, stream_id: int, start: int,
               filters: Iterable[str]) -> int:
    """How many messages at or after ``start`` match any filter (no filter: all)."""
    base, top = key_range(stream_id)
    filters = [f for f in filters if f]
    if not filters or ">" in filters:
        return conn.execute("SELECT count(*) FROM msgs WHERE id BETWEEN ? AND ?",
                            (base + _start(start), top)).fetchone()[0]
    subjects: dict[int, tuple] = {}
    for f in filters:
        for r in matching_subjects(conn, stream_id, f):
            subjects[r[0]] = r
    return sum(_count_at_or_after(conn, base, n, first, last, start)
               for _sid, n, first, last, _subject in subjects.values())


def last_seqs(conn: sqlite3.Connection, stream_id: int, filters: Iterable[str]) -> list[int]:
    """The last sequence of every subject matching the filters (none: all), ascending."""
    filters = [f for f in filters if f] or [">"]
    seen: dict[int, int] = {}
    for f in filters:
        for sid, _n, _first, last, _subject in matching_subjects(conn, stream_id, f):
            seen[sid] = last
    return sorted(seen.values())


def existing(conn: sqlite3.Connection, stream_id: int, seqs: Iterable[int]) -> set[int]:
    base = stream_id << SEQ_BITS
    wanted = sorted({s for s in seqs if 0 < s <= MAX_SEQ})
    found: set[int] = set()
    for i in range(0, len(wanted), 500):
        chunk = [base | s for s in wanted[i : i + 500]]
        marks = ",".join("?" * len(chunk))
        found.update(r[0] & _MASK for r in conn.execute(
            f"SELECT id FROM msgs WHERE id IN ({marks})", chunk))
    return found


def load_next(conn: sqlite3.Connection, stream_id: int, subject: str,
              start: int) -> StoredMsg | None:
    """The first message at or after ``start`` whose subject matches ``subject``."""
    found = next_msgs(conn, stream_id, start, [subject], 1)
    return found[0] if found else None


def iter_msgs_once(conn: sqlite3.Connection, stream_id: int, *, start_seq: int = 0,
                   subject: str | None = None, limit: int = 1000
                   ) -> Iterator[tuple[StoredMsg | None, int]]:
    """One chunk of a stream view: ``(msg or None when filtered out, seq)`` pairs."""
    base, top = key_range(stream_id)
    flt = SubjectFilter([subject]) if subject and subject != ">" else None
    for row in conn.execute(
        f"SELECT {_MSG_COLS} {_MSG_FROM} WHERE m.id BETWEEN ? AND ? ORDER BY m.id LIMIT ?",
        (base + _start(start_seq), top, limit),
    ).fetchall():
        yield (_stored(row) if flt is None or flt.matches(row[1]) else None), row[0] & _MASK


def seq_for_time(conn: sqlite3.Connection, stream_id: int, ts_ns: int) -> int:
    """The first sequence with a timestamp >= ts_ns (0 when none)."""
    base, top = key_range(stream_id)

    def at_or_after(key: int) -> tuple[int, int] | None:
        return conn.execute("SELECT id, ts FROM msgs WHERE id >= ? AND id <= ? ORDER BY id "
                            "LIMIT 1", (key, top)).fetchone()

    first = at_or_after(base)
    if first is None:
        return 0
    if first[1] >= ts_ns:
        return first[0] & _MASK
    # Timestamps never decrease along the sequence: binary search over the key range.
    lo, hi = first[0], conn.execute("SELECT max(id) FROM msgs WHERE id BETWEEN ? AND ?",
                                    (base, top)).fetchone()[0]
    last = at_or_after(hi)
    if last is None or last[1] < ts_ns:
        return 0
    # smallest key k in (lo, hi] whose first stored message at or after k is recent enough
    a, b = lo + 1, hi
    while a < b:
        mid = (a + b) // 2
        row = at_or_after(mid)
        assert row is not None, "mid <= hi: the row at hi is at or after it"
        if row[1] >= ts_ns:
            b = mid
        else:
            a = mid + 1
    row = at_or_after(a)
    assert row is not None, "a <= hi: the row at hi is at or after it"
    return row[0] & _MASK


def expiry_due(conn: sqlite3.Connection, d: StreamDef, now: int) -> bool:
    """Cheap check: would ``StreamTxn.expire`` remove anything at ``now`` (max_age, a
    per-message TTL)?"""
    base, top = key_range(d.id)
    if d.max_age:
        cutoff = now - d.max_age
        for ts, expires in conn.execute(
            "SELECT m.ts, t.expires FROM msgs m LEFT JOIN msg_ttl t ON t.id = m.id "
            "WHERE m.id BETWEEN ? AND ? ORDER BY m.id" if d.allow_ttl else
            "SELECT ts, NULL FROM msgs WHERE id BETWEEN ? AND ? ORDER BY id", (base, top)
        ):
            if ts > cutoff:
                break
            if expires != -1:
                return True
    if not d.allow_ttl:
        return False
    row = conn.execute(
        "SELECT 1 FROM msg_ttl WHERE expires > 0 AND expires <= ? AND id BETWEEN ? AND ? "
        "LIMIT 1", (now, base, top),
    ).fetchone()
    return row is not None


def stream_state(conn: sqlite3.Connection, d: StreamDef, *, consumer_count: int = 0,
                 subjects_filter: str | None = None, deleted_details: bool = False) -> StreamState:
    row = conn.execute(
        "SELECT first_seq, last_seq, last_ts, msgs, bytes FROM streams WHERE id = ?", (d.id,)
    ).fetchone()
    if row is None:
        raise nats_error("StreamNotFound")
    first_seq, last_seq, last_ts, msgs, nbytes = row
    first_ts = 0
    if msgs:
        r = conn.execute("SELECT ts FROM msgs WHERE id = ?",
                         (msg_key(d.id, first_seq),)).fetchone()
        first_ts = r[0] if r else 0
    num_subjects = conn.execute("SELECT count(*) FROM subjects WHERE stream_id = ?",
                                (d.id,)).fetchone()[0]
    num_deleted = max(0, (last_seq - first_seq + 1) - msgs) if msgs else 0
    st = StreamState(
        messages=msgs, bytes=nbytes, first_seq=first_seq, first_ts=first_ts,
        last_seq=last_seq, last_ts=last_ts, num_deleted=num_deleted,
        num_subjects=num_subjects, consumer_count=consumer_count,
    )
    if subjects_filter:
        st.subjects = subject_counts(conn, d.id, subjects_filter)
    if deleted_details and num_deleted:
        st.deleted = deleted_seqs(conn, d.id, first_seq, last_seq)
    return st


def subject_counts(conn: sqlite3.Connection, stream_id: int, flt: str = ">") -> dict[str, int]:
    out = {}
    match = None if flt in (">", "") else SubjectFilter([flt]).matches
    for subject, n in conn.execute(
        "SELECT subject, msgs FROM subjects WHERE stream_id = ? ORDER BY subject", (stream_id,)
    ):
        if match is None or match(subject):
            out[subject] = n
    return out


def deleted_seqs(conn: sqlite3.Connection, stream_id: int, first: int, last: int) -> list[int]:
    out: list[int] = []
    expect = first
    for (key,) in conn.execute(
        "SELECT id FROM msgs WHERE id BETWEEN ? AND ? ORDER BY id",
        (msg_key(stream_id, first), msg_key(stream_id, last)),
    ):
        seq = key & _MASK
        if seq > expect:
            out.extend(range(expect, seq))
        expect = seq + 1
    if expect <= last:
        out.extend(range(expect, last + 1))
    return out


def recount(conn: sqlite3.Connection, stream_id: int) -> dict[str, Any]:
    """Counters recomputed from the rows, and each subject chain walked (tests, ``check``):
    msgs, bytes, min/max seq, per-subject counts from rows / from the subjects table, and
    ``chain_errors`` (empty when every subject's chain runs first -> last over exactly its
    messages)."""
    base, top = key_range(stream_id)
    cfg = json.loads(conn.execute("SELECT config FROM streams WHERE id = ?",
                                  (stream_id,)).fetchone()[0])
    file_storage = cfg.get("storage", "file") != "memory"
    fixed = FILE_RECORD_OVERHEAD if file_storage else MEM_RECORD_OVERHEAD
    msgs, nbytes, first, last = conn.execute(
        f"SELECT count(*), coalesce(sum({fixed} + length(CAST(s.subject AS BLOB)) + "
        f"{payload_sql(file_storage, 'm.')}), 0), min(m.id), max(m.id) FROM msgs m "
        "JOIN subjects s ON s.id = m.subject_id WHERE m.id BETWEEN ? AND ?",
        (base, top)).fetchone()
    rows_by_subject: dict[str, list[int]] = {}
    for key, subject in conn.execute(
        "SELECT m.id, s.subject FROM msgs m JOIN subjects s ON s.id = m.subject_id "
        "WHERE m.id BETWEEN ? AND ? ORDER BY m.id", (base, top)
    ):
        rows_by_subject.setdefault(subject, []).append(key & _MASK)
    # (subject, walked, expected) or (subject, "prev", seq, its prev, the expected prev)
    errors: list[tuple[str, list[int], list[int]] | tuple[str, str, int, int, int]] = []
    table = {}
    for _sid, subject, n, sfirst, slast in conn.execute(
        "SELECT id, subject, msgs, first_seq, last_seq FROM subjects WHERE stream_id = ?",
        (stream_id,)
    ):
        table[subject] = n
        expected = rows_by_subject.get(subject, [])
        walked = [seq for seq, _size, _nxt in _chain_from(conn, base, sfirst, slast)]
        if walked != expected or (expected and (sfirst, slast) != (expected[0], expected[-1])):
            errors.append((subject, walked[:10], expected[:10]))
        for a, b in zip(expected, expected[1:], strict=False):  # interior prev pointers
            prev = conn.execute("SELECT prev FROM msgs WHERE id = ?", (base | b,)).fetchone()[0]
            if prev != a:
                errors.append((subject, "prev", b, prev, a))
                break
    return {"msgs": msgs, "bytes": nbytes,
            "min_seq": (first & _MASK) if first is not None else 0,
            "max_seq": (last & _MASK) if last is not None else 0,
            "subjects": {k: len(v) for k, v in rows_by_subject.items()},
            "subjects_table": table, "chain_errors": errors}


def remove_msgs(txn: Txn, stream: str, seqs: Iterable[int]) -> int:
    """The consumers' hook: remove ``seqs`` from ``stream`` keeping every counter consistent.

    For acks under workqueue / interest retention. Absent sequences are ignored. Runs inside
    the caller's write transaction (``txn``); returns how many messages were removed.
    """
    d = txn.catalog.by_name.get(stream)
    if d is None:
        raise nats_error("StreamNotFound")
    return txn.stream(d).remove_seqs(seqs)


def check_publish_input(subject: str, hdr: bytes | None, data: bytes | bytearray, *,
                        reply_len: int = 0) -> None:
    """What a client refuses before sending: a bad subject, a protocol line over the
    server's max_control_line, a payload over max_payload (core/limits.py). ``reply_len``:
    the bytes of the reply subject the line carries (a JetStream publish's inbox,
    :func:`limits.js_reply_len`); 0 for a core publish."""
    if not isinstance(subject, str) or not is_valid_publish_subject(subject):
        raise invalid_subject(subject)
    L.check_publish(subject, len(data), hdr_len=len(hdr) if hdr else 0, reply_len=reply_len)
