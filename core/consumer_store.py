"""Consumers on the embedded store: the SQLite ``ConsumerStore`` for core/consumers.py's engine.

core/consumers.py holds the consumer rules (``ConsumerEngine`` over a ``ConsumerStore``); this
module stores consumers in the cluster database and reads streams from the store's tables:

- :class:`SqlStreamView` - the ``StreamView`` protocol over ``msgs`` / ``subjects`` (inside the
  caller's transaction, seeing the stream's in-flight counters);
- :class:`SqlConsumerStore` - ``ConsumerStore`` for one write transaction;
- :class:`ConsumerHooks` - the stream engine's :class:`~jetlink.core.streams.RetentionHooks`
  (interest retention on publish, consumer_count, purge and stream-delete notifications).

The ``consumers`` table is a schema *component* (``Cluster.ensure_schema``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence

from . import streams as S
from .config.stream import StreamConfig
from .errors import nats_error, not_found
from .messages import StoredMsg

__all__ = ["COMPONENT", "ConsumerHooks", "SCHEMA_STEPS", "SqlConsumerStore", "SqlStreamView"]

COMPONENT = "consumers"
SCHEMA_STEPS: list[list[str]] = [
    [
        """CREATE TABLE consumers (
            stream_id  INTEGER NOT NULL,
            name       TEXT NOT NULL,
            ord        INTEGER NOT NULL,
            config     TEXT NOT NULL,
            created_ns INTEGER NOT NULL,
            state      TEXT NOT NULL,
            PRIMARY KEY (stream_id, name)
        ) WITHOUT ROWID""",
    ],
]


class SqlStreamView:
    """A stream as core/consumers.py reads it (``StreamView``), over the store's tables."""

    def __init__(self, st: S.StreamTxn) -> None:
        st.flush()
        self.st = st
        self.conn = st.conn
        self.sid = st.d.id

    # counters: the stream transaction's live values
    @property
    def first_seq(self) -> int:
        return self.st.first_seq

    @property
    def last_seq(self) -> int:
        return self.st.last_seq

    @property
    def msgs(self) -> int:
        return self.st.msgs

    def _sync(self) -> None:
        st = self.st
        if st._rows or st._db_deletes or st._ptr_next or st._ptr_prev or st._touched:
            st.flush()

    def load(self, seq: int) -> StoredMsg | None:
        self._sync()
        return S.load_msg(self.conn, self.sid, seq)

    def next_msgs(self, start: int, filters: Sequence[str], limit: int) -> list[StoredMsg]:
        self._sync()
        return S.next_msgs(self.conn, self.sid, start, filters, limit)

    def count(self, start: int, filters: Sequence[str]) -> int:
        self._sync()
        if not filters and start <= self.st.first_seq:
            return self.st.msgs
        return S.count_msgs(self.conn, self.sid, start, filters)

    def last_seqs(self, filters: Sequence[str]) -> list[int]:
        self._sync()
        return S.last_seqs(self.conn, self.sid, filters)

    def seq_from_time(self, ts: int) -> int:
        self._sync()
        seq = S.seq_for_time(self.conn, self.sid, ts)
        return seq if seq else self.st.last_seq + 1

    def existing(self, seqs: Iterable[int]) -> set[int]:
        self._sync()
        return S.existing(self.conn, self.sid, seqs)


def has_schema(conn: sqlite3.Connection) -> bool:
    """Whether the consumers component exists (a consumer was made in the cluster once)."""
    return conn.execute("SELECT 1 FROM schema_components WHERE component = ?",
                        (COMPONENT,)).fetchone() is not None


def _ensure_schema(conn: sqlite3.Connection) -> None:
    """The consumers component, applied inside the current transaction if missing."""
    row = conn.execute(
        "SELECT version FROM schema_components WHERE component = ?", (COMPONENT,)
    ).fetchone()
    version = row[0] if row else 0
    while version < len(SCHEMA_STEPS):
        for stmt in SCHEMA_STEPS[version]:
            conn.execute(stmt)
        version += 1
        conn.execute(
            "INSERT INTO schema_components(component, version) VALUES (?, ?) "
            "ON CONFLICT(component) DO UPDATE SET version = excluded.version",
            (COMPONENT, version),
        )


def _has_table(conn: sqlite3.Connection) -> bool:
    return conn.execute(
        "SELECT 1 FROM schema_components WHERE component = ?", (COMPONENT,)
    ).fetchone() is not None


def _inactive_due(conn: sqlite3.Connection, now: int) -> list[str]:
    """The streams holding a consumer past its inactive_threshold at ``now`` (only the
    consumers whose config sets one are read: a durable consumer sets none by default)."""
    if not _has_table(conn):
        return []
    rows = conn.execute(
        "SELECT s.name, c.config, c.state FROM consumers c JOIN streams s ON s.id = "
        "c.stream_id WHERE c.config LIKE '%\"inactive_threshold\"%'").fetchall()
    if not rows:
        return []
    from .config.consumer import ConsumerConfig
    from .consumers import ConsumerState, inactive_deadline

    out: list[str] = []
    for stream, config, state in rows:
        deadline = inactive_deadline(ConsumerState.loads(state), ConsumerConfig.from_json(
            json.loads(config), strict=False))
        if deadline is not None and now >= deadline and stream not in out:
            out.append(stream)
    return out


class SqlConsumerStore:
    """core/consumers.py's ``ConsumerStore`` inside one write transaction of the store."""

    def __init__(self, txn: S.Txn) -> None:
        self.txn = txn
        self.conn = txn.conn
        _ensure_schema(self.conn)

    def _def(self, stream: str) -> S.StreamDef:
        d = self.txn.catalog.by_name.get(stream)
        if d is None:  # named, with the closest stream, as stream info names it
            raise not_found(nats_error("StreamNotFound"), stream, self.txn.catalog.by_name)
        return d

    def stream_config(self, stream: str) -> StreamConfig:
        return self._def(stream).cfg

    def view(self, stream: str) -> SqlStreamView:
        return SqlStreamView(self.txn.stream(self._def(stream)))

    def records(self, stream: str):
        from .config.consumer import ConsumerConfig
        from .consumers import ConsumerRecord, ConsumerState

        out = {}
        for name, config, created, state in self.conn.execute(
            "SELECT name, config, created_ns, state FROM consumers WHERE stream_id = ? "
            "ORDER BY ord", (self._def(stream).id,)
        ):
            cfg = ConsumerConfig.from_json(json.loads(config), strict=False)
            out[name] = ConsumerRecord(name, cfg, created, ConsumerState.loads(state))
        return out

    def save(self, stream: str, rec) -> None:
        sid = self._def(stream).id
        cfg = json.dumps(rec.config.to_json(), separators=(",", ":"))
        cur = self.conn.execute(
            "UPDATE consumers SET config = ?, created_ns = ?, state = ? WHERE stream_id = ? "
            "AND name = ?", (cfg, rec.created, rec.state.dumps(), sid, rec.name))
        if cur.rowcount == 0:
            ord_ = self.conn.execute(
                "SELECT coalesce(max(ord), 0) + 1 FROM consumers WHERE stream_id = ?", (sid,)
            ).fetchone()[0]
            self.conn.execute(
                "INSERT INTO consumers(stream_id, name, ord, config, created_ns, state) "
                "VALUES (?, ?, ?, ?, ?, ?)", (sid, rec.name, ord_, cfg, rec.created,
                                              rec.state.dumps()))
        self.txn.cache.pop(("interest", stream), None)

    def drop(self, stream: str, name: str) -> None:
        self.conn.execute("DELETE FROM consumers WHERE stream_id = ? AND name = ?",
                          (self._def(stream).id, name))
        self.txn.cache.pop(("interest", stream), None)

    def remove_msg(self, stream: str, seq: int) -> None:
        self.txn.stream(self._def(stream)).remove_seqs([seq])

    def purge_all(self, stream: str) -> None:
        self.txn.stream(self._def(stream)).purge()


class ConsumerHooks(S.NoConsumers):
    """The stream engine's retention hooks, answered from the ``consumers`` table."""

    def consumers_due(self, conn: sqlite3.Connection, now: int) -> bool:
        return bool(_inactive_due(conn, now))

    def expire_consumers(self, txn: S.Txn) -> None:
        """Every consumer past its inactive_threshold removed, as the server's timer removes
        it without a request (consumer.go deleteNotActive): the consumers' session of each
        stream holding one runs their clocks (core/consumers.py ``_Session._tick``, interest
        retention's removals with it)."""
        from .consumers import ConsumerEngine

        for stream in _inactive_due(txn.conn, txn.now):
            ConsumerEngine(SqlConsumerStore(txn), txn.now).expire_inactive(stream)

    def has_interest(self, txn: S.Txn, stream: str, subject: str) -> bool:
        key = ("interest", stream)
        fn = txn.cache.get(key)
        if fn is None:
            from .config.consumer import ConsumerConfig
            from .consumers import interest_in

            configs = []
            if _has_table(txn.conn):
                d = txn.catalog.by_name[stream]
                configs = [ConsumerConfig.from_json(json.loads(c), strict=False)
                           for (c,) in txn.conn.execute(
                               "SELECT config FROM consumers WHERE stream_id = ?", (d.id,))]
            fn = txn.cache[key] = interest_in(configs)
        return fn(subject)

    def consumer_limits(self, conn: sqlite3.Connection, stream: str
                        ) -> list[tuple[str, int, int]]:
        """``(name, max_ack_pending, inactive_threshold)`` of each consumer of ``stream``,
        by name (what a change of the stream's consumer limits is checked against)."""
        from .config.consumer import ConsumerConfig

        if not _has_table(conn):
            return []
        out = []
        for name, doc in conn.execute(
                "SELECT c.name, c.config FROM consumers c JOIN streams s ON s.id = c.stream_id "
                "WHERE s.name = ? ORDER BY c.name", (stream,)):
            cfg = ConsumerConfig.from_json(json.loads(doc), strict=False)
            out.append((name, cfg.max_ack_pending, cfg.inactive_threshold))
        return out

    def consumer_count(self, conn: sqlite3.Connection, stream: str) -> int:
        if not _has_table(conn):
            return 0
        row = conn.execute(
            "SELECT count(*) FROM consumers c JOIN streams s ON s.id = c.stream_id "
            "WHERE s.name = ?", (stream,)).fetchone()
        return row[0]

    def on_purge(self, txn: S.Txn, stream: str, subject: str | None) -> None:
        if not _has_table(txn.conn):
            return
        d = txn.catalog.by_name[stream]
        if txn.conn.execute("SELECT 1 FROM consumers WHERE stream_id = ? LIMIT 1",
                            (d.id,)).fetchone() is None:
            return
        from .consumers import ConsumerEngine

        ConsumerEngine(SqlConsumerStore(txn), txn.now).purged(stream, subject=subject or "")

    def on_retention_changed(self, txn: S.Txn, stream: str) -> None:
        """The stream now has interest retention (an update from limits): what every
        interested consumer has acknowledged goes, as the server's
        checkStateForInterestStream does for each consumer."""
        if not _has_table(txn.conn):
            return
        from .consumers import ConsumerEngine

        ConsumerEngine(SqlConsumerStore(txn), txn.now).retention_changed(stream)

    def on_stream_deleted(self, txn: S.Txn, stream: str) -> None:
        if not _has_table(txn.conn):
            return
        d = txn.catalog.by_name.get(stream)
        if d is not None:
            txn.conn.execute("DELETE FROM consumers WHERE stream_id = ?", (d.id,))

