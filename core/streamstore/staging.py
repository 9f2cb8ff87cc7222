"""The state of batches in flight (ADR-50) inside one write transaction: atomic batches'
staged messages (batches.py) and fast batches' flow state (fastbatch.py).

A batch's messages before its commit are staged; within one transaction they stay in memory
(:class:`Staged`, kept per stream in ``StreamTxn._staged``) and are written to the
``atomic_batch_msgs`` component table only when the stream flushes with the batch still open
(:func:`write_staged`), so a batch published and committed in one call (``publish_batch``)
stores its messages once, in the stream, and a batch spread over several calls or processes
(``jetlink pub`` per message, a server's requests) finds what the earlier ones staged.
"""

from __future__ import annotations

import sqlite3

__all__ = ["FastBatch", "Staged", "write_fast", "write_staged"]


class Staged:
    """A batch in flight as one stream of one transaction sees it (``StreamTxn._staged``):
    its highest staged sequence and the staged messages not yet written. Its
    ``atomic_batches`` row is inserted when the batch starts (the in-flight limits count
    those rows); the messages and the row's ``last_seq`` / ``touched_ns`` are written at the
    stream's flush (:func:`write_staged`, one statement per table), so a batch that starts and
    commits within one transaction never touches ``atomic_batch_msgs``."""

    __slots__ = ("last", "held", "dirty", "rows")

    def __init__(self, last: int, held: bool) -> None:
        self.last = last  # the highest staged sequence
        self.held = held  # some of its messages are in atomic_batch_msgs
        self.dirty = False  # last_seq / touched_ns to write
        self.rows: list[tuple[int, str, bytes, bytes, dict[str, str]]] = []  # not written


def write_staged(conn: sqlite3.Connection, sid: int, now: int,
                 staged: dict[str, Staged]) -> None:
    """Write the staged messages and batch states of stream ``sid`` (``StreamTxn._staged``;
    its flush calls this) at time ``now``, one statement per table."""
    msgs: list[tuple[int, str, int, str, bytes, bytes]] = []
    states: list[tuple[int, int, int, str]] = []
    for bid, b in staged.items():
        if b.rows:
            msgs += [(sid, bid, seq, subject, hdr, data)
                     for seq, subject, hdr, data, _fv in b.rows]
            b.rows = []
            b.held = True
        if b.dirty:
            states.append((b.last, now, sid, bid))
            b.dirty = False
    if msgs:
        conn.executemany("INSERT INTO atomic_batch_msgs(stream_id, batch_id, seq, subject, "
                         "hdr, data) VALUES (?, ?, ?, ?, ?, ?)", msgs)
    if states:
        conn.executemany("UPDATE atomic_batches SET last_seq = ?, touched_ns = ? WHERE "
                         "stream_id = ? AND batch_id = ?", states)


class FastBatch:
    """One fast batch's state (the server's ``fastBatch``; ``pending`` and ``commit`` are not
    kept: the engine finishes a message, and a commit, before the next message). Kept per
    stream in ``StreamTxn._fast`` within a transaction; its ``fast_batches`` row is inserted
    when the batch starts (the in-flight limits count those rows) and rewritten at the
    stream's flush when ``dirty`` (:func:`write_fast`)."""

    __slots__ = ("ack", "dirty", "fseq", "gap_ok", "id", "lseq", "max_ack", "pseq", "sseq")

    def __init__(self, batch_id: str, lseq: int, pseq: int, fseq: int, sseq: int, ack: int,
                 max_ack: int, gap_ok: bool) -> None:
        self.id = batch_id
        self.lseq, self.pseq, self.fseq, self.sseq = lseq, pseq, fseq, sseq
        self.ack, self.max_ack, self.gap_ok = ack, max_ack, gap_ok
        self.dirty = False

    def row(self, sid: int, now: int) -> tuple[int, str, int, int, int, int, int, int, int, int]:
        """Its ``fast_batches`` row, touched at ``now``."""
        return (sid, self.id, self.lseq, self.pseq, self.fseq, self.sseq, self.ack,
                self.max_ack, int(self.gap_ok), now)


SAVE_FAST_SQL = ("INSERT OR REPLACE INTO fast_batches(stream_id, batch_id, lseq, pseq, fseq, "
                 "sseq, ack_msgs, max_ack, gap_ok, touched_ns) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


def write_fast(conn: sqlite3.Connection, sid: int, now: int,
               fast: dict[str, FastBatch]) -> None:
    """Write the changed fast batch states of stream ``sid`` (``StreamTxn._fast``; its flush
    calls this), touched at ``now``, in one statement."""
    rows = []
    for b in fast.values():
        if b.dirty:
            rows.append(b.row(sid, now))
            b.dirty = False
    if rows:
        conn.executemany(SAVE_FAST_SQL, rows)
