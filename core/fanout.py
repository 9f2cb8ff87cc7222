"""Core NATS messages of a transaction, for the processes following them (``jetlink sub``).

A core publish, and a RePublish, is written to ``core_msgs`` only when some live
subscription (a ``core_subs`` row not expired) matches its subject. Used by the JetStream
API (core publishes) and by RePublish (republished messages): below both.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .subjects import SubjectFilter

if TYPE_CHECKING:  # pragma: no cover
    from .txnstate import TxnState

__all__ = ["CORE_KEEP", "CoreFanout"]

CORE_KEEP = 10_000  # core_msgs rows kept for followers (at most once: older ones are gone)


class CoreFanout:
    """Core messages of one transaction, written only when a live subscription matches."""

    __slots__ = ("txn", "filter", "rows", "active")

    def __init__(self, txn: TxnState, flt: SubjectFilter | None) -> None:
        self.txn = txn
        self.filter = flt
        self.rows: list[tuple] = []
        self.active = flt is not None

    @classmethod
    def load(cls, txn: TxnState) -> CoreFanout:
        now = time.time_ns()
        filters = [r[0] for r in txn.conn.execute(
            "SELECT DISTINCT filter FROM core_subs WHERE expires_ns > ?", (now,))]
        return cls(txn, SubjectFilter(filters) if filters else None)

    def add(self, subject: str, hdr: bytes | None, data: bytes) -> None:
        if self.filter is not None and self.filter.matches(subject):
            self.rows.append((subject, hdr, data, self.txn.now))

    def flush(self) -> None:
        if not self.rows:
            return
        conn = self.txn.conn
        conn.executemany("INSERT INTO core_msgs(subject, hdr, data, ts) VALUES (?, ?, ?, ?)",
                         self.rows)
        last = conn.execute("SELECT max(id) FROM core_msgs").fetchone()[0] or 0
        if last % 256 < len(self.rows) or len(self.rows) >= 256:
            conn.execute("DELETE FROM core_msgs WHERE id <= ?", (last - CORE_KEEP,))
        self.rows = []
