"""The purge collaborator of :class:`~jetlink.core.streamstore.txn.StreamTxn`: removals asked
for, not caused by a limit.

- :meth:`StreamPurge.purge`: the store's ``PurgeEx(subject, seq, keep)`` / ``Purge()`` and
  ``Compact(seq)`` (:meth:`StreamPurge._compact`), in set-based SQL after a flush; a subject
  purge removes a prefix of each subject's chain (:func:`_oldest_of_subjects`);
- :meth:`StreamPurge._remove_below`: every message below a sequence in one range delete (also
  the limits' fast path);
- :meth:`StreamPurge.remove_seqs`: given sequences (a delete, the consumers' acks under
  workqueue / interest retention);
- :meth:`StreamPurge.skip_to`: the store's ``SkipMsgs`` (a mirror's origin gaps);
- :meth:`StreamPurge.notify_purge`: tell the consumers about a purge just done.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Iterable

from ..errors import JetlinkError, UsageError
from .base import (
    _MASK,
    MAX_SEQ,
    _blen,
    _chain_from,
    drop_links,
    later_links,
    matching_subjects,
    remove_key_range,
)
from .overlay import StreamOverlay


class StreamPurge(StreamOverlay):
    """Purge, compact, removal of given sequences and skips of one stream in one transaction."""

    # --- purge ---------------------------------------------------------------------------------
    def purge(self, subject: str | None = None, seq: int = 0, keep: int = 0) -> int:
        """The store's ``PurgeEx(subject, seq, keep)`` / ``Purge()`` (no API checks here)."""
        self._sql_mode()
        subject = subject or ""
        seq = seq or 0
        keep = keep or 0
        if seq == 1:
            return 0
        if subject in ("", ">"):
            if keep == 0 and seq == 0:
                return self._purge_all()
            if seq > 1:
                return self._compact(seq)
            # keep the newest `keep` messages of the stream
            if keep >= self.msgs:
                return 0
            row = self.conn.execute(
                "SELECT id FROM msgs WHERE id BETWEEN ? AND ? ORDER BY id DESC LIMIT 1 "
                "OFFSET ?", (self.base, self.base | MAX_SEQ, keep - 1)).fetchone()
            return self._remove_below(row[0] & _MASK)
        subjects = list(matching_subjects(self.conn, self.d.id, subject))
        total = sum(r[1] for r in subjects)
        if total == 0:
            return 0
        maxp = 0
        if keep > 0:
            if keep >= total:
                return 0
            maxp = total - keep
        upper = seq - 1 if seq >= 1 else self.last_seq
        victims = _oldest_of_subjects(self.conn, self.base, subjects, upper, maxp,
                                      stream_msgs=self.msgs, payload=self.d.payload_sql)
        if not victims:
            return 0
        # Each subject loses a prefix of its chain: no neighbour pointer to rewrite.
        keys = [(self.base | v[0],) for v in victims]
        self.conn.executemany("DELETE FROM msgs WHERE id = ?", keys)
        drop_links(self.conn, keys, [])
        if self.d.allow_ttl:
            self.conn.executemany("DELETE FROM msg_ttl WHERE id = ?", keys)
        per: dict[int, list[int]] = {}
        total_size = 0
        fixed = {r[0]: self.d.base_size + _blen(r[4]) for r in subjects}
        for _vseq, sid, size, nxt in victims:
            total_size += size + fixed[sid]
            p = per.get(sid)
            if p is None:
                per[sid] = [1, nxt]
            else:
                p[0] += 1
                p[1] = nxt
        counts = {r[0]: r[1] for r in subjects}
        upd, dele = [], []
        for sid, (n, nxt) in per.items():
            if counts[sid] <= n:
                dele.append((sid,))
            else:
                upd.append((counts[sid] - n, nxt, sid))
        if upd:
            self.conn.executemany("UPDATE subjects SET msgs = ?, first_seq = ? WHERE id = ?",
                                  upd)
        if dele:
            self.conn.executemany("DELETE FROM subjects WHERE id = ?", dele)
        self.msgs -= len(victims)
        self.bytes -= total_size
        if self.msgs <= 0:
            self.msgs = self.bytes = 0
            self.first_seq = self.last_seq + 1
        elif victims[0][0] <= self.first_seq:
            self.first_seq = self._min_stored_seq(self.first_seq)
        return len(victims)

    def _purge_all(self, fseq: int = 0) -> int:
        conn = self.conn
        purged = self.msgs
        conn.execute("DELETE FROM msgs WHERE id BETWEEN ? AND ?",
                     (self.base, self.base | MAX_SEQ))
        conn.execute("DELETE FROM msg_ttl WHERE id BETWEEN ? AND ?",
                     (self.base, self.base | MAX_SEQ))
        drop_links(conn, [], [(self.base, self.base | MAX_SEQ)])
        conn.execute("DELETE FROM subjects WHERE stream_id = ?", (self.d.id,))
        if fseq == 0:
            fseq = self.last_seq + 1
        self.first_seq = fseq
        self.last_seq = fseq - 1
        self.msgs = self.bytes = 0
        return purged

    def _compact(self, seq: int) -> int:
        """Remove everything below ``seq``; past the end, the next message gets ``seq``."""
        if self.first_seq > seq:
            return 0
        if seq <= self.last_seq:
            return self._remove_below(seq)
        if seq > MAX_SEQ + 1:  # (a number past its range: a usage error, exit status 2)
            raise UsageError(f"sequence {seq} is beyond jetlink's limit {MAX_SEQ + 1} (the "
                             "engine stores at most 2^40 sequences)", field="seq")
        return self._purge_all(seq)

    def notify_purge(self, subject: str | None) -> None:
        """Tell the consumers (``RetentionHooks.on_purge``) about the purge just done."""
        self.flush()
        self.txn.on_purge(self.d.name, subject or None)

    # --- removal -------------------------------------------------------------------------------
    def remove_seqs(self, seqs: Iterable[int]) -> int:
        """Remove the given sequences (absent ones are ignored); returns how many were removed."""
        removed = 0
        for seq in sorted(set(int(s) for s in seqs)):
            if 0 < seq <= MAX_SEQ and self._remove(seq):
                removed += 1
        return removed

    def skip_to(self, last_seq: int) -> None:
        """Move ``last_seq`` forward without storing anything (the store's ``SkipMsgs``): the
        sequences in between read as deleted; an empty stream then starts after them. A
        mirror's origin gaps and start position (core/replication.py)."""
        if last_seq <= self.last_seq:
            return
        if last_seq > MAX_SEQ:
            raise JetlinkError(f"sequence {last_seq} is beyond jetlink's limit {MAX_SEQ}")
        self.last_seq = last_seq
        if self.msgs == 0:
            self.first_seq = last_seq + 1
        self._dirty = True

    def _remove_below(self, upto: int) -> int:
        """Remove every message with seq < ``upto`` (one range scan + one range delete)."""
        self._sql_mode()
        if upto <= self.first_seq or self.msgs == 0:
            return 0
        conn, base = self.conn, self.base
        lo, hi = base | self.first_seq, base | min(upto - 1, MAX_SEQ)
        count, total = remove_key_range(conn, lo, hi, payload=self.d.payload_sql,
                                        base_size=self.d.base_size, head=True)
        if not count:
            return 0
        self.msgs -= count
        self.bytes -= total
        if self.msgs <= 0:
            self.msgs = self.bytes = 0
            self.first_seq = self.last_seq + 1
        else:
            self.first_seq = self._min_stored_seq(upto)
        return count


def _oldest_of_subjects(conn: sqlite3.Connection, base: int,
                        subjects: list[tuple[int, int, int, int, str]], upper: int, maxp: int,
                        *, stream_msgs: int, payload: str
                        ) -> list[tuple[int, int, int, int]]:
    """(seq, subject_id, payload size, next) of the oldest messages of ``subjects`` with
    seq <= upper,
    at most ``maxp`` of them (0: no limit), in sequence order.

    Walks the subjects' chains (cost: the messages returned) unless they are a large part of
    the stream, where one sequential scan is cheaper.
    """
    wanted = sum(r[1] for r in subjects)
    if maxp:
        wanted = min(wanted, maxp)
    ids = {r[0] for r in subjects}
    if wanted * 8 >= stream_msgs or len(subjects) > 256:
        out = []
        lo = base | min(r[2] for r in subjects)
        for key, sid, size, nxt in conn.execute(
            f"SELECT id, subject_id, {payload}, next FROM msgs WHERE id BETWEEN ? AND ? "
            "ORDER BY id", (lo, base | upper),
        ):
            if sid in ids:
                out.append((key & _MASK, sid, size, nxt))
                if maxp and len(out) >= maxp:
                    break
        if out:  # the stored next as next_sql reads it
            later = later_links(conn, base | out[0][0], base | out[-1][0])
            if later:
                out = [(seq, sid, size, later.get(base | seq, nxt))
                       for seq, sid, size, nxt in out]
        return out
    heads = []
    for sid, _n, first, last, _subject in subjects:
        it = _chain_from(conn, base, first, last, payload)
        first_node = next(it, None)
        if first_node is not None and first_node[0] <= upper:
            heads.append((first_node[0], sid, first_node, it))
    heapq.heapify(heads)
    out = []
    while heads and (not maxp or len(out) < maxp):
        seq, sid, node, it = heapq.heappop(heads)
        out.append((seq, sid, node[1], node[2]))
        nxt = next(it, None)
        if nxt is not None and nxt[0] <= upper:
            heapq.heappush(heads, (nxt[0], sid, nxt, it))
    return out
