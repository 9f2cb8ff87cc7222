"""The shared core of :class:`~jetlink.core.streamstore.txn.StreamTxn`: one stream's in-memory
overlay inside one write transaction, and its bookkeeping.

The overlay holds pending rows (lists, so a later append can still set their ``next``
pointer), removed sequences, pointer changes of stored rows, subject states (:class:`_Subj`,
``count`` including pending appends) and the stream's counters. Every message is a node of its
subject's doubly linked chain (``msgs.prev`` / ``msgs.next``, a next set on a stored row in
``msg_next``: store/schema.py); :meth:`StreamOverlay._remove`
unlinks one keeping chains and counters right, :meth:`StreamOverlay.flush` writes everything
back with a few ``executemany`` statements. The appending (append.py), limits (limits.py) and
purge (purge.py) collaborators all work through these methods.
"""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Iterable
from itertools import count
from typing import TYPE_CHECKING

from ..errors import JetlinkError, nats_error
from ..subjects import has_wildcard
from .base import (
    _MASK,
    INSERT_SUBJECTS_SQL,
    MAX_SEQ,
    SEQ_BITS,
    SET_NEXT_SQL,
    UPDATE_SUBJECTS_SQL,
    drop_links,
    later_links,
    matching_subjects,
    next_sql,
)
from .staging import FastBatch, Staged, write_fast, write_staged

if TYPE_CHECKING:  # pragma: no cover
    from ..streamdef import StreamDef
    from ..txnstate import TxnState


class _Subj:
    """A subject of one stream inside a transaction (``count`` includes pending appends)."""

    __slots__ = ("id", "subject", "slen", "count", "first", "last", "orig", "new", "touched")

    def __init__(self, sid: int, subject: str, count: int, first: int, last: int,
                 new: bool) -> None:
        self.id = sid
        self.subject = subject
        self.slen = len(subject) if subject.isascii() else len(subject.encode())
        self.count = count
        self.first = first
        self.last = last
        self.orig = (count, first, last)
        self.new = new
        self.touched = False


class SubjectMemo:
    """One stream's subject states as a committed transaction of this connection left them
    (:meth:`StreamOverlay.subject_memo`), with what proves them current: the database's
    ``data_version`` and the connection's ``total_changes`` right after that commit."""

    __slots__ = ("stream_id", "version", "changes", "subj", "by_id")

    def __init__(self, stream_id: int, version: int, changes: int, subj: dict[str, _Subj],
                 by_id: dict[int, _Subj]) -> None:
        self.stream_id = stream_id
        self.version = version
        self.changes = changes
        self.subj = subj
        self.by_id = by_id


def data_version(conn: sqlite3.Connection) -> int:
    """SQLite's ``PRAGMA data_version``: changes when ANOTHER connection commits."""
    return int(conn.execute("PRAGMA data_version").fetchone()[0])


_MEMO_MAX = 100_000  # subjects a memo keeps at most (a larger stream reads them each time)

# A pending row is a list: [id, subject_id, prev, next, data, ts, hdr]. A plain row (the
# bulk path's: no headers, the time of its run) is the first five alone, its run's time kept
# in ``_plain``: SQLite binds two values fewer per row (about a fifth of the insert's time).
_K, _SID, _PREV, _NEXT, _DATA, _TS, _HDR = range(7)
_READ_AHEAD_MIN = 8  # rows the first read-ahead of a transaction loads
_READ_AHEAD_MAX = 2048
_INSERT = "INSERT INTO msgs(id, subject_id, prev, next, data, ts, hdr) VALUES (?, ?, ?, ?, ?, ?, ?)"


def _insert_plain(ts: int) -> str:
    """The insert of plain rows stored at ``ts`` (an int: written into the statement)."""
    return ("INSERT INTO msgs(id, subject_id, prev, next, data, ts, hdr) "
            f"VALUES (?, ?, ?, ?, ?, {int(ts):d}, NULL)")


def _runs(seqs: list[int]) -> list[tuple[int, int]]:
    """Sorted sequences as (first, last) runs of consecutive numbers."""
    out: list[tuple[int, int]] = []
    if not seqs:
        return out
    lo = hi = seqs[0]
    for x in seqs[1:]:
        if x == hi + 1:
            hi = x
        else:
            out.append((lo, hi))
            lo = hi = x
    out.append((lo, hi))
    return out


def _alive(rows: list[list], start: int, stop: int, dead: set[int]) -> list[list]:
    """``rows[start:stop]`` without the rows of the sequences in ``dead``."""
    part = rows if start == 0 and stop == len(rows) else rows[start:stop]
    return [r for r in part if (r[_K] & _MASK) not in dead] if dead else part


class StreamOverlay:
    """One stream inside one write transaction: the overlay and its bookkeeping (subjects,
    chain nodes, removal, read-ahead of stored rows, ``flush()``)."""

    def __init__(self, txn: TxnState, d: StreamDef) -> None:
        self.txn = txn
        self.conn = txn.conn
        self.d = d
        self.base = d.id << SEQ_BITS
        row = self.conn.execute(
            "SELECT first_seq, last_seq, last_ts, msgs, bytes, last_msg_id, dedupe_pruned_ns "
            "FROM streams WHERE id = ?", (d.id,)
        ).fetchone()
        if row is None:  # pragma: no cover - the catalog is loaded in the same transaction
            raise nats_error("StreamNotFound")
        (self.first_seq, self.last_seq, self.last_ts, self.msgs, self.bytes,
         self.last_msg_id, self._dedupe_pruned) = row
        self._dirty = False
        self.wrote = False  # rows changed in this transaction (flush), e.g. a message stored
        self._subj: dict[str, _Subj] = {}
        self._subj_by_id: dict[int, _Subj] = {}
        self._dropped: list[_Subj] = []  # subjects new or emptied here (subject_memo)
        self._staged: dict[str, Staged] = {}  # atomic batches in flight (batches.py)
        self._fast: dict[str, FastBatch] = {}  # fast batches in flight (fastbatch.py)
        self._clear_overlay()

    def _clear_overlay(self) -> None:
        self._rows: list[list] = []
        self._row_pos: dict[int, int] = {}  # pending seq -> its row's position in _rows
        self._row_runs: list[tuple[int, int, int]] = []  # (seq, rows, position) to index
        self._plain: list[list[int]] = []  # [start, stop, ts]: plain rows _rows[start:stop]
        self._dead: set[int] = set()
        self._db_deletes: list[int] = []
        self._ptr_next: dict[int, int] = {}
        self._ptr_prev: dict[int, int] = {}
        self._ttl: dict[int, int] = {}  # pending seq -> expires (Nats-TTL messages only)
        self._pend_alive = 0
        self._pend_head = 0
        self._touched: list[_Subj] = []
        self._dedupe: dict[str, tuple[int, int]] = {}
        self._gq: deque[int] = deque()
        self._gcur = -1
        self._first_dirty = False
        # stored rows read ahead by the limit paths: seq -> (subject_id, payload, prev, next)
        self._window: dict[int, tuple[int, int, int, int]] = {}
        self._ahead = _READ_AHEAD_MIN  # rows the next read-ahead loads (doubles per use)
        self._dd_known: dict[str, tuple[int, int] | None] = {}  # prefetched dedupe entries
        self._absent: set[str] = set()  # subjects prefetch_subjects found without a row

    # --- subjects ------------------------------------------------------------------------
    def _subject(self, subject: str) -> _Subj:
        s = self._subj.get(subject)
        if s is not None:
            return s
        row = None if subject in self._absent else self.conn.execute(
            "SELECT id, msgs, first_seq, last_seq FROM subjects WHERE stream_id = ? "
            "AND subject = ?", (self.d.id, subject),
        ).fetchone()
        if row is None:
            s = _Subj(self.txn.alloc_subject_id(), subject, 0, 0, 0, True)
            self._dropped.append(s)  # (kept by subject_memo only once stored)
        else:
            s = _Subj(row[0], subject, row[1], row[2], row[3], False)
        self._subj[subject] = s
        self._subj_by_id[s.id] = s
        return s

    def prefetch_subjects(self, subjects: Iterable[str]) -> None:
        """Load many subjects' states with a few queries (publish_batch calls this)."""
        missing = [x for x in set(subjects) if x not in self._subj]
        for i in range(0, len(missing), 500):
            chunk = missing[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for sid, subject, n, first, last in self.conn.execute(
                f"SELECT id, subject, msgs, first_seq, last_seq FROM subjects "
                f"WHERE stream_id = ? AND subject IN ({marks})", (self.d.id, *chunk)
            ):
                s = _Subj(sid, subject, n, first, last, False)
                self._subj[subject] = s
                self._subj_by_id[sid] = s
        # the others have no row: _subject creates them (ids in the order it is asked)
        self._absent.update(x for x in missing if x not in self._subj)

    def recall_subjects(self, memo: SubjectMemo | None) -> bool:
        """Take the subject states ``memo`` kept from this process's last bulk publish into
        the stream, when the database is still exactly as that commit left it: no other
        connection committed since (``PRAGMA data_version``) and this one changed no row
        (``total_changes``; the expiry of this transaction included). False: nothing taken,
        the states are read from the database as usual."""
        if (memo is None or memo.stream_id != self.d.id or self._subj
                or memo.changes != self.conn.total_changes
                or memo.version != data_version(self.conn)):
            return False
        self._subj, self._subj_by_id = memo.subj, memo.by_id
        return True

    def subject_memo(self, version: int) -> SubjectMemo | None:
        """After the commit of a transaction that wrote this stream only through this
        overlay: its subject states as stored (``flush`` made each match its row), for
        :meth:`recall_subjects`. Subjects left empty, and those looked up but never stored,
        are not kept: their ids may be given again (``TxnState.alloc_subject_id``).
        ``version``: ``data_version`` read in the transaction (a connection's own commits do
        not change it). Costs what the transaction touched, not the memo's size."""
        subj, by_id = self._subj, self._subj_by_id
        if len(subj) > _MEMO_MAX or self._touched or self._rows:
            return None
        for s in self._dropped:
            if (s.count <= 0 or s.new) and subj.get(s.subject) is s:
                del subj[s.subject]
                if by_id.get(s.id) is s:  # (its id may be another subject's by now)
                    del by_id[s.id]
        return SubjectMemo(self.d.id, version, self.conn.total_changes, subj, by_id)

    def _subject_by_id(self, sid: int) -> _Subj:
        s = self._subj_by_id.get(sid)
        if s is not None:
            return s
        row = self.conn.execute(
            "SELECT subject, msgs, first_seq, last_seq FROM subjects WHERE id = ?", (sid,)
        ).fetchone()
        if row is None:  # pragma: no cover - counters and rows always agree
            raise JetlinkError(f"store inconsistency: subject id {sid} missing")
        s = _Subj(sid, row[0], row[1], row[2], row[3], False)
        self._subj[row[0]] = s
        self._subj_by_id[sid] = s
        return s

    def _touch(self, s: _Subj) -> None:
        if not s.touched:
            s.touched = True
            self._touched.append(s)

    # --- nodes and chains --------------------------------------------------------------------
    def _index_rows(self) -> dict[int, int]:
        """``_row_pos`` (pending seq -> position in ``_rows``) with the runs of consecutive
        rows the bulk path appended (``_row_runs``) folded in: every lookup of a pending row
        goes through it."""
        pos = self._row_pos
        if not self._row_runs:
            return pos
        for seq, n, at in self._row_runs:
            pos.update(zip(range(seq, seq + n), count(at)))  # noqa: B905 - count is endless
        self._row_runs.clear()
        return pos

    def _node(self, seq: int) -> tuple[int, int, int, int] | None:
        """(subject_id, size, prev, next) of a live message, pending or stored."""
        if seq in self._dead:
            return None
        d = self.d
        pos = self._index_rows().get(seq)
        if pos is not None:
            r = self._rows[pos]
            hdr = r[_HDR] if len(r) > _HDR else None
            size = (d.base_size + self._subject_by_id(r[_SID]).slen + len(r[_DATA])
                    + (d.hdr_extra + len(hdr) if hdr else 0))
            return r[_SID], size, r[_PREV], r[_NEXT]
        row = self._window.get(seq)
        if row is None:
            row = self.conn.execute(
                f"SELECT subject_id, {d.payload_sql}, prev, {next_sql()} FROM msgs WHERE id = ?",
                (self.base | seq,)
            ).fetchone()
            if row is None:
                return None
        sid, payload, prev, nxt = row
        size = d.base_size + self._subject_by_id(sid).slen + payload
        return (sid, size, self._ptr_prev.get(seq, prev), self._ptr_next.get(seq, nxt))

    def _set_next(self, seq: int, value: int) -> None:
        pos = self._index_rows().get(seq)
        if pos is not None:
            self._rows[pos][_NEXT] = value
        else:
            self._ptr_next[seq] = value

    def _set_prev(self, seq: int, value: int) -> None:
        pos = self._index_rows().get(seq)
        if pos is not None:
            self._rows[pos][_PREV] = value
        else:
            self._ptr_prev[seq] = value

    def _remove(self, seq: int) -> bool:
        """Remove one live message (pending or stored), keeping chains and counters right."""
        node = self._node(seq)
        if node is None:
            return False
        sid, size, prev, nxt = node
        s = self._subject_by_id(sid)
        if s.count <= 1:
            s.first = s.last = 0
        elif seq == s.first:
            s.first = nxt
        elif seq == s.last:
            s.last = prev
        else:
            self._set_next(prev, nxt)
            self._set_prev(nxt, prev)
        s.count -= 1
        self._touch(s)
        self._dead.add(seq)
        if seq in self._index_rows():
            self._pend_alive -= 1
        else:
            self._db_deletes.append(seq)
        self.msgs -= 1
        self.bytes -= size
        if seq == self.first_seq:
            self._first_dirty = True
        return True

    def _read_ahead(self, seq: int) -> None:
        """Load the stored rows from ``seq`` on into the window: limits remove oldest
        messages, and the next ones to go are usually near."""
        if (seq in self._window or seq in self._dead
                or seq in self._index_rows()):
            return
        if len(self._window) > 200_000:
            self._window.clear()
        # A transaction removing one message (one KV put on a full key) reads a few rows; one
        # removing many (a bulk publish at a limit) reads ever larger chunks.
        ahead = self._ahead
        self._ahead = min(ahead * 2, _READ_AHEAD_MAX)
        window = self._window
        top = -1
        for key, sid, payload, prev, nxt in self.conn.execute(
            f"SELECT id, subject_id, {self.d.payload_sql}, prev, next FROM msgs "
            "WHERE id >= ? AND id <= ? ORDER BY id LIMIT ?",
            (self.base | seq, self.base | MAX_SEQ, ahead),
        ):
            window[key & _MASK] = (sid, payload, prev, nxt)
            top = key
        if top >= 0:  # the stored next as next_sql reads it
            for key, nxt in later_links(self.conn, self.base | seq, top).items():
                row = window.get(key & _MASK)
                if row is not None:  # (an entry's row is always there: deleted together)
                    sid, payload, prev, _stale = row
                    window[key & _MASK] = (sid, payload, prev, nxt)

    # --- flushing --------------------------------------------------------------------------
    def flush(self) -> None:
        """Write pending rows, deletes, pointer changes, subject states, stream counters."""
        dead = self._dead
        if self._staged:
            write_staged(self.conn, self.d.id, self.txn.now, self._staged)
        if self._fast:
            write_fast(self.conn, self.d.id, self.txn.now, self._fast)
        if self._rows or self._ttl:
            self._write_appends(dead)
        if self._db_deletes:
            self._write_deletes()
        if self._ptr_next or self._ptr_prev:
            self._write_pointers(dead)
        if self._touched:
            self._write_subjects()
        if self._dedupe:
            self.conn.executemany(
                "INSERT INTO dedupe(stream_id, msg_id, seq, ts) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(stream_id, msg_id) DO UPDATE SET seq = excluded.seq, "
                "ts = excluded.ts",
                [(self.d.id, k, v[0], v[1]) for k, v in self._dedupe.items()],
            )
        changed = self._dirty or self._rows or self._db_deletes or self._first_dirty
        if self.msgs <= 0:
            self.msgs = 0
            self.bytes = 0
            if self.first_seq or self.last_seq:  # a stream never written keeps 0 (server)
                self.first_seq = self.last_seq + 1
        elif self._first_dirty:
            self.first_seq = self._min_stored_seq(self.first_seq)
        if changed:
            self.conn.execute(
                "UPDATE streams SET first_seq = ?, last_seq = ?, last_ts = ?, msgs = ?, "
                "bytes = ?, last_msg_id = ? WHERE id = ?",
                (self.first_seq, self.last_seq, self.last_ts, self.msgs, self.bytes,
                 self.last_msg_id, self.d.id),
            )
            self.wrote = True
        self._dirty = False
        self._clear_overlay()

    def _write_appends(self, dead: set[int]) -> None:
        """The pending rows still alive, and their expiry times (Nats-TTL)."""
        if self._rows:
            rows, conn = self._rows, self.conn
            at = 0
            for start, stop, ts in self._plain:  # (in order, apart)
                if start > at:
                    conn.executemany(_INSERT, _alive(rows, at, start, dead))
                conn.executemany(_insert_plain(ts), _alive(rows, start, stop, dead))
                at = stop
            if at < len(rows):
                conn.executemany(_INSERT, _alive(rows, at, len(rows), dead))
        if self._ttl:
            base = self.base
            self.conn.executemany("INSERT INTO msg_ttl(id, expires) VALUES (?, ?)",
                                  [(base | k, v) for k, v in self._ttl.items() if k not in dead])

    def _write_deletes(self) -> None:
        """The stored rows removed, runs of consecutive sequences in one range delete."""
        conn, base = self.conn, self.base
        ranges = _runs(sorted(self._db_deletes))
        singles = [(base | lo,) for lo, hi in ranges if lo == hi]
        spans = [(base | lo, base | hi) for lo, hi in ranges if lo != hi]
        if singles:
            conn.executemany("DELETE FROM msgs WHERE id = ?", singles)
        if spans:
            conn.executemany("DELETE FROM msgs WHERE id BETWEEN ? AND ?", spans)
        drop_links(conn, singles, spans)
        if self.d.allow_ttl:
            conn.executemany("DELETE FROM msg_ttl WHERE id = ?", singles)
            conn.executemany("DELETE FROM msg_ttl WHERE id BETWEEN ? AND ?", spans)

    def _write_pointers(self, dead: set[int]) -> None:
        """The chain pointers changed on stored rows still alive (a next in ``msg_next``)."""
        base = self.base
        if self._ptr_next:
            self.conn.executemany(
                SET_NEXT_SQL, [(base | k, v) for k, v in self._ptr_next.items() if k not in dead])
        if self._ptr_prev:
            self.conn.executemany(
                "UPDATE msgs SET prev = ? WHERE id = ?",
                [(v, base | k) for k, v in self._ptr_prev.items() if k not in dead])

    def _write_subjects(self) -> None:
        """The subjects touched: new ones inserted, changed ones updated, emptied ones
        deleted; each then matches its stored row again."""
        sid = self.d.id
        ins, upd, dele = [], [], []
        for s in self._touched:
            state = (s.count, s.first, s.last)
            if s.count > 0:
                if s.new:
                    ins.append((s.id, sid, s.subject, s.count, s.first, s.last))
                    s.new = False
                elif state != s.orig:
                    upd.append((s.count, s.first, s.last, s.id))
            else:
                self._dropped.append(s)
                if not s.new:
                    dele.append((s.id,))
                    s.new = True
            s.orig = state
            s.touched = False
        conn = self.conn
        if ins:
            conn.executemany(INSERT_SUBJECTS_SQL, ins)
        if upd:
            conn.executemany(UPDATE_SUBJECTS_SQL, upd)
        if dele:
            conn.executemany("DELETE FROM subjects WHERE id = ?", dele)

    def _min_stored_seq(self, from_seq: int) -> int:
        row = self.conn.execute(
            "SELECT id FROM msgs WHERE id >= ? AND id <= ? ORDER BY id LIMIT 1",
            (self.base | max(from_seq, 0), self.base | MAX_SEQ)).fetchone()
        return (row[0] & _MASK) if row else self.last_seq + 1

    def _sql_mode(self) -> None:
        """Before set-based SQL: flush, and forget cached subject states afterwards."""
        self.flush()
        self._subj = {}
        self._subj_by_id = {}
        self._absent = set()
        self._dirty = True

    # --- reads inside the transaction ----------------------------------------------------------
    def last_seq_for(self, subject: str) -> int:
        """``LoadLastMsg(subject)``'s sequence, 0 when none (wildcards allowed)."""
        if subject in ("", ">"):
            return self.last_seq if self._node(self.last_seq) is not None else 0
        if not has_wildcard(subject):
            s = self._subject(subject)
            return s.last if s.count > 0 else 0
        self._sql_mode()
        best = 0
        for row in matching_subjects(self.conn, self.d.id, subject):
            best = max(best, row[3])
        return best
