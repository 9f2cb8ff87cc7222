"""One write transaction as the stream engine sees it: the state it holds and its reads.

:class:`TxnState` holds the open connection, the transaction's time (``now``; the engine
pins it while it stores a message stamped otherwise), the :class:`~.streamdef.Catalog`, the
per-transaction scratch space (``cache``) and the allocation of subject ids; it answers the
two questions the engine asks the consumers (interest, a purge done) as a store without
consumers does.

core/streams.py's ``Txn`` is this state composed with the rest: the stream engine of each
stream it writes (``Txn.stream``), the RePublish delivery at ``Txn.flush`` and the consumers'
``RetentionHooks``. The engine (core/streamstore/), RePublish and the core fanout take this
state, never core/streams.py.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .streamdef import Catalog

__all__ = ["TxnState"]


class TxnState:
    """One write transaction's connection, time, catalog, scratch space and subject ids."""

    def __init__(self, conn: sqlite3.Connection, now: int, catalog: Catalog) -> None:
        self.conn = conn
        self.now = now
        self.catalog = catalog
        self.cache: dict[Any, Any] = {}  # per-transaction scratch space for hooks
        self._next_subject_id: int | None = None

    def alloc_subject_id(self) -> int:
        if self._next_subject_id is None:
            row = self.conn.execute("SELECT max(id) FROM subjects").fetchone()
            self._next_subject_id = (row[0] or 0) + 1
        sid = self._next_subject_id
        self._next_subject_id += 1
        return sid

    def has_interest(self, stream: str, subject: str) -> bool:
        """Whether a consumer of the interest-retention ``stream`` wants a new message on
        ``subject`` (none here: the message is not kept)."""
        return False

    def on_purge(self, stream: str, subject: str | None) -> None:
        """Tell the consumers about a purge just done (none here)."""
        return None
