"""The limits collaborator of :class:`~jetlink.core.streamstore.txn.StreamTxn`: what removes
messages because of the stream's limits.

- while storing (``storeRawMsg`` with discard old): :meth:`StreamLimits._remove_first` (the
  stream's oldest message, for max_msgs / max_bytes) and :meth:`StreamLimits._remove_oldest_of`
  (a subject's oldest, for max_msgs_per_subject), both called by the append path;
- :meth:`StreamLimits.expire`: max_age and per-message TTLs (the server's ``expireMsgs``), with
  subject delete markers (subject_delete_marker_ttl);
- :meth:`StreamLimits.enforce_limits`: what the store does on UpdateConfig (max_msgs,
  max_bytes, max_msgs_per_subject).

What it uses of its siblings: ``_remove_below`` (purge.py, a prefix in one range delete) and
``append`` (append.py, a subject delete marker).
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

from .. import headers as H
from ..messages import PubAck
from .base import _MASK, _SECOND, MAX_SEQ, hdr_sql, payload_sql
from .overlay import _K, StreamOverlay, _Subj

if TYPE_CHECKING:  # pragma: no cover
    from ..errors import ApiError
    from ..streamdef import StreamDef

_LOAD_CHUNK = 512  # stored keys _remove_first reads at a time


class StreamLimits(StreamOverlay):
    """The limits that remove messages: discard old while storing, expiry, a config update."""

    if TYPE_CHECKING:  # the siblings' methods it calls, composed with it in StreamTxn
        def _remove_below(self, upto: int) -> int: ...  # purge.py
        def append(self, subject: str, hdr: bytes | None, data: bytes, *,
                   sourced: bool = False,
                   fv: dict[str, str] | None = None) -> PubAck | ApiError: ...  # append.py

    # --- while storing (discard old) ----------------------------------------------------------
    def _remove_oldest_of(self, s: _Subj) -> bool:
        if s.count <= 0:
            return False
        self._read_ahead(s.first)
        return self._remove(s.first)

    def _remove_first(self) -> bool:
        """Remove the stream's oldest message (stored ones first, then pending)."""
        dead = self._dead
        while self.msgs - self._pend_alive > 0:
            if not self._gq:
                if self._gcur < 0:
                    self._gcur = self.base | max(self.first_seq - 1, 0)
                limit = self._rows[0][_K] if self._rows else (self.base | MAX_SEQ) + 1
                keys = [r[0] for r in self.conn.execute(
                    "SELECT id FROM msgs WHERE id > ? AND id < ? ORDER BY id LIMIT ?",
                    (self._gcur, limit, _LOAD_CHUNK))]
                if not keys:  # pragma: no cover - counters and rows always agree
                    break
                self._gq.extend(keys)
                self._gcur = keys[-1]
            seq = self._gq.popleft() & _MASK
            if seq in dead:
                continue
            self._read_ahead(seq)
            return self._remove(seq)
        rows = self._rows
        while self._pend_head < len(rows):
            seq = rows[self._pend_head][_K] & _MASK
            self._pend_head += 1
            if seq in dead:
                continue
            return self._remove(seq)
        return False

    # --- expiry ----------------------------------------------------------------------------------
    def expire(self) -> int:
        """Apply max_age and per-message TTLs at the transaction's time, in due order.

        Subject delete markers: when the last message of a subject expires and
        subject_delete_marker_ttl is set, a marker (``Nats-Marker-Reason: MaxAge``,
        ``Nats-TTL``, ``Nats-Rollup: sub``, empty body) replaces it, stamped at the moment
        the server would have written it (the expiry time); markers expire like any TTL
        message and never leave a marker behind. Returns how many messages were removed.
        """
        if self.msgs == 0:
            return 0
        self._sql_mode()
        removed, heap = self._due_by_age()
        heap.extend(self._due_by_ttl())
        if not heap:
            return removed
        heapq.heapify(heap)
        sdm = self.d.sdm_ttl_s > 0
        seen: set[int] = set()
        while heap:
            due, seq = heapq.heappop(heap)
            if seq in seen:
                continue
            seen.add(seq)
            node = self._node(seq)
            if node is None:
                continue  # removed meanwhile (a marker's rollup)
            s = self._subject_by_id(node[0])
            if sdm and s.count == 1 and self._replace_with_marker(s, seq, due, heap):
                removed += 1
                continue
            if self._remove(seq):
                removed += 1
        self.flush()
        return removed

    def _due_by_age(self) -> tuple[int, list[tuple[int, int]]]:
        """max_age at the transaction's time: ``(removed, [(due, seq)])``. A plain prefix of
        expired messages (none kept by ``Nats-TTL: never``, no subject delete markers) goes
        at once in one range delete; otherwise each expired message is due at its age limit,
        or its TTL when sooner."""
        d = self.d
        heap: list[tuple[int, int]] = []
        if not d.max_age:
            return 0, heap
        base = self.base
        cutoff = self.txn.now - d.max_age
        upto = 0  # a plain prefix of expired messages can go in one range delete
        plain = True
        for key, ts, expires in self.conn.execute(
            "SELECT m.id, m.ts, t.expires FROM msgs m LEFT JOIN msg_ttl t ON t.id = m.id "
            "WHERE m.id BETWEEN ? AND ? ORDER BY m.id" if d.allow_ttl else
            "SELECT id, ts, NULL FROM msgs WHERE id BETWEEN ? AND ? ORDER BY id",
            (base, base | MAX_SEQ),
        ):
            if ts > cutoff:
                break
            seq = key & _MASK
            if expires == -1:
                plain = False
                continue
            due = ts + d.max_age
            if expires is not None and 0 < expires < due:
                due = expires
            heap.append((due, seq))
            upto = seq + 1
        if heap and plain and d.sdm_ttl_s <= 0:
            return self._remove_below(upto), []
        return 0, heap

    def _due_by_ttl(self) -> list[tuple[int, int]]:
        """``[(due, seq)]`` of the messages whose per-message TTL passed."""
        base = self.base
        return [(expires, key & _MASK) for key, expires in self.conn.execute(
            "SELECT id, expires FROM msg_ttl WHERE expires > 0 AND expires <= ? "
            "AND id BETWEEN ? AND ?", (self.txn.now, base, base | MAX_SEQ),
        ).fetchall()]

    def _replace_with_marker(self, s: _Subj, seq: int, due: int,
                             heap: list[tuple[int, int]]) -> bool:
        """The last message of subject ``s`` expires at ``due`` with subject_delete_marker_ttl
        set: a marker replaces it (its rollup removes the message), stamped at ``due``, and
        joins ``heap`` when it is due itself by now. False: no marker (the message is a
        marker, or a discard-new limit refused it), the message is removed plainly."""
        d = self.d
        hdr = self.conn.execute(f"SELECT {hdr_sql()} FROM msgs WHERE id = ?",
                                (self.base | seq,)).fetchone()
        if hdr is None:  # pending (cannot happen: expiry runs flushed)
            hdr = (None,)
        if _is_marker(hdr[0]):
            return False
        marker_hdr = (
            f"NATS/1.0\r\n{H.MARKER_REASON}: MaxAge\r\n"
            f"{H.MSG_TTL}: {_format_go_seconds(d.sdm_ttl_s)}\r\n"
            f"{H.ROLLUP}: sub\r\n\r\n"
        ).encode()
        now = self.txn.now
        self.txn.now = max(due, self.last_ts)
        try:
            ack = self.append(s.subject, marker_hdr, b"", sourced=True)
        finally:
            self.txn.now = now
        if not (isinstance(ack, PubAck) and ack.seq):
            return False
        mts = self.last_ts
        mdue = mts + d.sdm_ttl_s * _SECOND
        if d.max_age:
            mdue = min(mdue, mts + d.max_age)
        if mdue <= now:
            heapq.heappush(heap, (mdue, ack.seq))
        return True

    # --- limits after a config update ---------------------------------------------------------
    def enforce_limits(self, old: StreamDef | None = None) -> None:
        """What the store does on UpdateConfig: msgs and bytes (discard old), per subject."""
        d = self.d
        self._sql_mode()
        conn, base = self.conn, self.base
        if not d.discard_new:
            if d.max_msgs and self.msgs > d.max_msgs:
                row = conn.execute(
                    "SELECT id FROM msgs WHERE id BETWEEN ? AND ? ORDER BY id DESC LIMIT 1 "
                    "OFFSET ?", (base, base | MAX_SEQ, d.max_msgs - 1)).fetchone()
                self._remove_below(row[0] & _MASK)
            if d.max_bytes and self.bytes > d.max_bytes:
                excess = self.bytes - d.max_bytes
                upto = 0
                for key, size in conn.execute(
                    f"SELECT m.id, {d.base_size} + length(CAST(s.subject AS BLOB)) + "
                    f"{payload_sql(d.file, 'm.')} FROM msgs m JOIN subjects s "
                    "ON s.id = m.subject_id WHERE m.id BETWEEN ? AND ? ORDER BY m.id",
                    (base, base | MAX_SEQ),
                ):
                    if excess <= 0:
                        break
                    excess -= size
                    upto = (key & _MASK) + 1
                if upto:
                    self._remove_below(upto)
        if d.max_per and (old is None or not old.max_per or d.max_per < old.max_per):
            over = conn.execute(
                "SELECT subject FROM subjects WHERE stream_id = ? AND msgs > ?",
                (d.id, d.max_per)).fetchall()
            for (subject,) in over:
                s = self._subject(subject)
                while s.count > d.max_per and self._remove_oldest_of(s):
                    pass
            self.flush()


def _format_go_seconds(seconds: int) -> str:
    from ..durations import format_duration

    return format_duration(seconds * _SECOND)


def _is_marker(hdr: bytes | None) -> bool:
    if not hdr:
        return False
    fv = H.first_values(hdr)
    return bool(fv.get(H.MARKER_REASON)) or fv.get(H.KV_OPERATION) == "PURGE"
