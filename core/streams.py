"""Streams on the embedded store: the publish path, limits, retention, purge, get, delete.

This module is the engine behind :class:`jetlink.core.jetstream.JetStream`. It works on an open
SQLite connection inside a transaction the caller owns (``Cluster.transaction()``); it never
commits. The rules are nats-server 2.15's (``stream.go processJetStreamMsg``, ``filestore.go /
memstore.go storeRawMsg``, ``PurgeEx``, ``Compact``, ``expireMsgs``); docs/engine.md lists them
with the few places jetlink differs.

Layout: a stream is a row of ``streams`` (config JSON + the StreamState counters) and a
contiguous key range of ``msgs`` (stream_id, seq). :class:`StreamTxn` is one stream inside one
transaction: appends are buffered in memory and written with ``executemany`` at ``flush()``;
limit enforcement during a batch (per-subject, max_msgs, max_bytes with discard old) works on
an in-memory overlay (pending rows + queues of the oldest stored rows), so a batch of 10k
publishes costs a handful of statements. Every other mutation (purge, delete, expiry, rollup)
flushes first and then runs set-based SQL.
"""

from __future__ import annotations

import heapq
import json
import sqlite3
from collections import deque
from typing import Any, Iterable, Iterator, Optional, Protocol

from . import headers as H
from . import limits as L
from .config.stream import StreamConfig
from .errors import ApiError, JetlinkError, NoStreamError, clip, client_error, nats_error
from .messages import PubAck, StoredMsg, StreamState
from .subjects import SubjectFilter, has_wildcard, is_valid_publish_subject

# core/republish.py and core/transform.py are imported when a stream has a transform or a
# RePublish (a read such as `jetlink kv get` needs neither). republish.PENDING's value:
_RP_PENDING = "republish.pending"
_RP: Any = None  # core/republish.py once a stream republishes (_republish)


def _republish() -> Any:
    """core/republish.py, imported on first use."""
    global _RP
    if _RP is None:
        from . import republish

        _RP = republish
    return _RP


__all__ = [
    "MAX_SEQ",
    "SEQ_BITS",
    "count_msgs",
    "existing",
    "key_range",
    "last_seqs",
    "load_last",
    "load_msg",
    "load_next",
    "matching_subjects",
    "msg_key",
    "next_msgs",
    "recount",
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
    "msg_size",
    "remove_msgs",
]

# --- byte accounting (what the server reports as state.bytes) -----------------------------
# file store: record length(4) + seq(8) + ts(8) + subject length(2) + subject + message + hash(8)
#             and, when there are headers, header length(4) + headers.
# memory store: subject + headers + message + 16 (seq + timestamp).
FILE_RECORD_OVERHEAD = 30
FILE_HEADER_OVERHEAD = 4
MEM_RECORD_OVERHEAD = 16


def empty_last_seq(cfg: StreamConfig) -> int:
    """The last sequence of a stream that never stored anything: ``first_seq - 1`` when its
    config sets ``first_seq``, else 0 (what a seeding bulk job or an import requires)."""
    return cfg.first_seq - 1 if cfg.first_seq > 0 else 0


def msg_size(file_storage: bool, slen: int, hlen: int, mlen: int) -> int:
    if file_storage:
        return FILE_RECORD_OVERHEAD + slen + mlen + (FILE_HEADER_OVERHEAD + hlen if hlen else 0)
    return MEM_RECORD_OVERHEAD + slen + hlen + mlen


# the server's default max_payload (a client refuses larger): core/limits.py
MAX_PAYLOAD = L.MAX_PAYLOAD
MAX_HEADER_SIZE = 65535  # math.MaxUint16
_UINT64_MAX = (1 << 64) - 1
_INT64_MAX = (1 << 63) - 1
_SECOND = 1_000_000_000


def _go_quote(s: str) -> str:
    from .config.validate import go_quote

    return go_quote(s)


def _parse_int64(text: str) -> int:
    """The server's parseInt64: decimal digits only, else -1."""
    if not text or not text.isascii() or not text.isdigit():
        return -1
    return int(text)


def _as_uint64(text: str) -> int:
    """``uint64(parseInt64(text))`` (a bad number becomes 2^64-1 and never matches)."""
    n = _parse_int64(text)
    return _UINT64_MAX if n < 0 else n & _UINT64_MAX


def _go_parse_duration(text: str) -> int | None:
    """Go's ``time.ParseDuration`` (None when it fails)."""
    from .durations import DurationError, parse_go_duration

    try:
        return parse_go_duration(text)
    except DurationError:
        return None


def parse_msg_ttl(text: str | None) -> tuple[int, ApiError | None]:
    """The server's ``parseMessageTTL``: seconds (>0), -1 for ``never``, 0 when absent.

    A Go duration (``30s``, ``1h``; at least 1s) or a plain number of seconds; anything else
    is 10165 ``invalid per-message TTL``.
    """
    if not text:
        return 0, None
    if text.lower() == "never":
        return -1, None
    dur = _go_parse_duration(text)
    if dur is not None:
        if dur < _SECOND:
            return 0, nats_error("MessageTTLInvalid")
        return dur // _SECOND, None
    n = _parse_int64(text)
    if n < 0:
        return 0, nats_error("MessageTTLInvalid")
    return n, None


def _format_go_seconds(seconds: int) -> str:
    from .durations import format_duration

    return format_duration(seconds * _SECOND)


def _is_marker(hdr: bytes | None) -> bool:
    if not hdr:
        return False
    fv = H.first_values(hdr)
    return bool(fv.get(H.MARKER_REASON)) or fv.get(H.KV_OPERATION) == "PURGE"


# --- consumers / retention hooks ----------------------------------------------------------
class RetentionHooks(Protocol):
    """What the stream engine asks the consumers (see docs/engine.md "Hooks").

    ``has_interest`` decides, for an interest-retention stream, whether a new message is kept
    (the server's ``csl.HasInterest(subject)`` over the consumers' filters; no consumer: not
    kept). ``on_purge`` tells the consumers about a purge that just happened (``subject`` is
    the purge's filter, None for a full / seq / keep purge). Hooks taking a ``txn`` run inside
    the write transaction (``txn.conn``, ``txn.now``, ``txn.cache`` for per-call caching).
    """

    def has_interest(self, txn: "Txn", stream: str, subject: str) -> bool: ...

    def consumer_count(self, conn: sqlite3.Connection, stream: str) -> int: ...

    def on_purge(self, txn: "Txn", stream: str, subject: str | None) -> None: ...

    def on_stream_deleted(self, txn: "Txn", stream: str) -> None: ...

    def on_retention_changed(self, txn: "Txn", stream: str) -> None: ...


class NoConsumers:
    """Hooks for a store without consumers: nobody is interested, nothing to tell."""

    def has_interest(self, txn: "Txn", stream: str, subject: str) -> bool:
        return False

    def consumer_count(self, conn: sqlite3.Connection, stream: str) -> int:
        return 0

    def on_purge(self, txn: "Txn", stream: str, subject: str | None) -> None:
        return None

    def on_stream_deleted(self, txn: "Txn", stream: str) -> None:
        return None

    def on_retention_changed(self, txn: "Txn", stream: str) -> None:
        return None


# A source header stored by reference (``src_hdrs`` in store/schema.py): ``msgs.hdr`` holds
# the INTEGER ``(ref << SEQ_BITS) | origin_seq``. These are the rule's only definitions.
def max_src_ref() -> int:
    """The largest ``src_hdrs`` id: a reference stays a positive 64-bit integer."""
    return (1 << (63 - SEQ_BITS)) - 1


def is_src_ref_sql(h: str) -> str:
    """SQL: the header column ``h`` holds a reference."""
    return f"typeof({h}) = 'integer'"


def src_ref_id_sql(h: str) -> str:
    """SQL: the ``src_hdrs`` id of the reference in ``h``."""
    return f"({h} >> {SEQ_BITS})"


def src_ref_sql(ref: str, seq: str) -> str:
    """SQL: the reference to row ``ref`` for origin sequence ``seq``."""
    return f"(({ref} << {SEQ_BITS}) | ({seq} & {_MASK}))"


def hdr_sql(alias: str = "", schema: str = "") -> str:
    """SQL for a stored row's header block as the server stores it: ``hdr``, or, when it
    holds a source header by reference, that block rebuilt. ``schema`` qualifies
    ``src_hdrs`` (``"o."``) as ``msgs`` is."""
    h = f"{alias}hdr"
    return (f"(CASE WHEN {is_src_ref_sql(h)} THEN (SELECT CAST(x.head || ({h} & {_MASK}) "
            f"|| x.tail AS BLOB) FROM {schema}src_hdrs x WHERE x.id = {src_ref_id_sql(h)}) "
            f"ELSE {h} END)")


def payload_sql(file_storage: bool, alias: str = "", schema: str = "") -> str:
    """SQL for a stored row's size without the fixed part and the subject (see msg_size);
    ``schema`` as for :func:`hdr_sql`."""
    extra = FILE_HEADER_OVERHEAD if file_storage else 0
    h = f"{alias}hdr"
    return (f"(length({alias}data) + CASE WHEN {h} IS NULL THEN 0 "
            f"WHEN {is_src_ref_sql(h)} THEN (SELECT x.size FROM {schema}src_hdrs x WHERE "
            f"x.id = {src_ref_id_sql(h)}) + length({h} & {_MASK}) + {extra} "
            f"ELSE length({h}) + {extra} END)")


# --- compiled stream definitions ------------------------------------------------------------
class StreamDef:
    """A stream's configuration with what the hot path needs precomputed (immutable)."""

    __slots__ = (
        "id", "name", "cfg", "created_ns", "config_json", "filter", "transform", "file",
        "max_msgs", "max_bytes", "max_per", "max_age", "max_msg_size", "discard_new",
        "discard_new_per", "dup_window", "sealed", "allow_rollup_purge", "allow_ttl",
        "sdm_ttl_s", "retention", "is_mirror", "allow_counter", "allow_schedules",
        "deny_delete", "deny_purge", "needs_limits", "fast", "base_size", "hdr_extra",
        "payload_sql", "no_ack", "republish",
    )

    def __init__(self, sid: int, cfg: StreamConfig, created_ns: int, config_json: str) -> None:
        self.id = sid
        self.name = cfg.name
        self.cfg = cfg
        self.created_ns = created_ns
        self.config_json = config_json
        self.filter = SubjectFilter(cfg.subjects)
        st = cfg.subject_transform
        if st is not None and st.dest:
            from .transform import compile_transform

            self.transform = compile_transform(st.src, st.dest)
        else:
            self.transform = None
        self.file = cfg.storage != "memory"
        self.max_msgs = cfg.max_msgs if cfg.max_msgs > 0 else 0
        self.max_bytes = cfg.max_bytes if cfg.max_bytes > 0 else 0
        self.max_per = cfg.max_msgs_per_subject if cfg.max_msgs_per_subject > 0 else 0
        self.max_age = cfg.max_age if cfg.max_age > 0 else 0
        self.max_msg_size = cfg.max_msg_size if cfg.max_msg_size != 0 else -1
        self.discard_new = cfg.discard == "new"
        self.discard_new_per = bool(cfg.discard_new_per_subject)
        self.dup_window = cfg.duplicate_window if cfg.duplicate_window > 0 else 0
        self.sealed = bool(cfg.sealed)
        self.allow_rollup_purge = bool(cfg.allow_rollup_hdrs) and not cfg.deny_purge
        self.allow_ttl = bool(cfg.allow_msg_ttl)
        sdm = cfg.subject_delete_marker_ttl
        self.sdm_ttl_s = sdm // _SECOND if sdm > 0 else 0
        self.retention = cfg.retention
        self.is_mirror = cfg.mirror is not None
        self.allow_counter = bool(cfg.allow_msg_counter)
        self.allow_schedules = bool(cfg.allow_msg_schedules)
        self.deny_delete = bool(cfg.deny_delete)
        self.deny_purge = bool(cfg.deny_purge)
        self.no_ack = bool(cfg.no_ack)  # the server answers nothing to its publishes
        rp = cfg.republish
        if rp is not None and rp.dest:
            self.republish = _republish().compile_rule(cfg)  # None: no republish
        else:
            self.republish = None
        self.needs_limits = bool(self.max_msgs or self.max_bytes or self.max_per)
        # A message without headers needs none of the header, counter or interest rules.
        self.fast = not self.allow_counter and self.retention != "interest"
        self.base_size = FILE_RECORD_OVERHEAD if self.file else MEM_RECORD_OVERHEAD
        self.hdr_extra = FILE_HEADER_OVERHEAD if self.file else 0
        # A stored message's size is base_size + len(subject) + this (sizes are not stored).
        self.payload_sql = payload_sql(self.file)

    def __repr__(self) -> str:
        return f"StreamDef({self.id}, {self.name!r})"


class Catalog:
    """Every stream of a cluster database, reloaded when ``meta.config_gen`` changes."""

    ROUTE_CACHE_MAX = 200_000

    def __init__(self, gen: int, defs: list[StreamDef]) -> None:
        self.gen = gen
        self.by_name = {d.name: d for d in defs}
        self.by_id = {d.id: d for d in defs}
        self._routes: dict[str, Optional[StreamDef]] = {}

    def route(self, subject: str) -> StreamDef | None:
        """The stream whose subjects capture ``subject`` (subjects never overlap: at most one)."""
        try:
            return self._routes[subject]
        except KeyError:
            pass
        found = None
        for d in self.by_name.values():
            if d.filter.matches(subject):
                found = d
                break
        if len(self._routes) >= self.ROUTE_CACHE_MAX:
            self._routes.clear()
        self._routes[subject] = found
        return found

    @staticmethod
    def config_gen(conn: sqlite3.Connection) -> int:
        row = conn.execute("SELECT value FROM meta WHERE key = 'config_gen'").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    @classmethod
    def load(cls, conn: sqlite3.Connection, cache: dict[str, Any]) -> "Catalog":
        gen = cls.config_gen(conn)
        cat: Catalog | None = cache.get("catalog")
        if cat is not None and cat.gen == gen:
            return cat
        old = {d.id: d for d in cat.by_name.values()} if cat is not None else {}
        defs = []
        for sid, name, config, created in conn.execute(
            "SELECT id, name, config, created_ns FROM streams ORDER BY id"
        ):
            prev = old.get(sid)
            if prev is not None and prev.config_json == config and prev.name == name:
                defs.append(prev)
                continue
            cfg = StreamConfig.from_json(json.loads(config), strict=False)
            defs.append(StreamDef(sid, cfg, created, config))
        cat = cls(gen, defs)
        cache["catalog"] = cat
        return cat


def bump_config_gen(conn: sqlite3.Connection) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('config_gen', 1) "
        "ON CONFLICT(key) DO UPDATE SET value = value + 1"
    )


# --- one transaction ------------------------------------------------------------------------
class Txn:
    """The engine's view of one write transaction: connection, time, hooks, touched streams."""

    def __init__(self, conn: sqlite3.Connection, now: int, catalog: Catalog,
                 hooks: RetentionHooks) -> None:
        self.conn = conn
        self.now = now
        self.catalog = catalog
        self.hooks = hooks
        self.streams: dict[int, StreamTxn] = {}
        self.cache: dict[Any, Any] = {}  # per-transaction scratch space for hooks
        self._next_subject_id: int | None = None

    def stream(self, d: StreamDef) -> "StreamTxn":
        st = self.streams.get(d.id)
        if st is None:
            st = self.streams[d.id] = StreamTxn(self, d)
        return st

    def alloc_subject_id(self) -> int:
        if self._next_subject_id is None:
            row = self.conn.execute("SELECT max(id) FROM subjects").fetchone()
            self._next_subject_id = (row[0] or 0) + 1
        sid = self._next_subject_id
        self._next_subject_id += 1
        return sid

    def flush(self) -> None:
        if self.cache.get(_RP_PENDING):
            # republishes queued by stores (may store into other streams)
            _republish().deliver(self)
        for st in self.streams.values():
            st.flush()
            if st.wrote:  # a refused publish (nothing stored) changes nothing at all
                st.maybe_prune_dedupe()


# --- keys -----------------------------------------------------------------------------------
SEQ_BITS = 40
MAX_SEQ = (1 << SEQ_BITS) - 1  # jetlink's largest sequence (first_seq above it is refused)
_MASK = MAX_SEQ


def msg_key(stream_id: int, seq: int) -> int:
    """The ``msgs.id`` of ``seq`` in stream ``stream_id``."""
    return (stream_id << SEQ_BITS) | seq


def key_range(stream_id: int) -> tuple[int, int]:
    base = stream_id << SEQ_BITS
    return base, base | MAX_SEQ


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


# A pending row is a list: [id, subject_id, ts, prev, next, hdr, data]
_K, _SID, _TS, _PREV, _NEXT, _HDR, _DATA = range(7)
_LOAD_CHUNK = 512
_READ_AHEAD_MIN = 8  # rows the first read-ahead of a transaction loads
_READ_AHEAD_MAX = 2048
_INSERT = "INSERT INTO msgs(id, subject_id, ts, prev, next, hdr, data) VALUES (?, ?, ?, ?, ?, ?, ?)"


class StreamTxn:
    """One stream inside one write transaction. ``flush()`` writes everything back.

    Appends and removals work on an in-memory overlay: pending rows (lists, so a later
    append can still set their ``next`` pointer), removed sequences, pointer changes of stored
    rows, subject states. ``flush()`` turns them into a few ``executemany`` statements.
    """

    def __init__(self, txn: Txn, d: StreamDef) -> None:
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
        self._clear_overlay()

    def _clear_overlay(self) -> None:
        self._rows: list[list] = []
        self._row_pos: dict[int, int] = {}
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

    # --- subjects ------------------------------------------------------------------------
    def _subject(self, subject: str) -> _Subj:
        s = self._subj.get(subject)
        if s is not None:
            return s
        row = self.conn.execute(
            "SELECT id, msgs, first_seq, last_seq FROM subjects WHERE stream_id = ? "
            "AND subject = ?", (self.d.id, subject),
        ).fetchone()
        if row is None:
            s = _Subj(self.txn.alloc_subject_id(), subject, 0, 0, 0, True)
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
    def _node(self, seq: int) -> tuple[int, int, int, int] | None:
        """(subject_id, size, prev, next) of a live message, pending or stored."""
        if seq in self._dead:
            return None
        d = self.d
        pos = self._row_pos.get(seq)
        if pos is not None:
            r = self._rows[pos]
            hdr = r[_HDR]
            size = (d.base_size + self._subject_by_id(r[_SID]).slen + len(r[_DATA])
                    + (d.hdr_extra + len(hdr) if hdr else 0))
            return r[_SID], size, r[_PREV], r[_NEXT]
        row = self._window.get(seq)
        if row is None:
            row = self.conn.execute(
                f"SELECT subject_id, {d.payload_sql}, prev, next FROM msgs WHERE id = ?",
                (self.base | seq,)
            ).fetchone()
            if row is None:
                return None
        sid, payload, prev, nxt = row
        size = d.base_size + self._subject_by_id(sid).slen + payload
        return (sid, size, self._ptr_prev.get(seq, prev), self._ptr_next.get(seq, nxt))

    def _set_next(self, seq: int, value: int) -> None:
        pos = self._row_pos.get(seq)
        if pos is not None:
            self._rows[pos][_NEXT] = value
        else:
            self._ptr_next[seq] = value

    def _set_prev(self, seq: int, value: int) -> None:
        pos = self._row_pos.get(seq)
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
        if seq in self._row_pos:
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
        if seq in self._window or seq in self._row_pos or seq in self._dead:
            return
        if len(self._window) > 200_000:
            self._window.clear()
        # A transaction removing one message (one KV put on a full key) reads a few rows; one
        # removing many (a bulk publish at a limit) reads ever larger chunks.
        ahead = self._ahead
        self._ahead = min(ahead * 2, _READ_AHEAD_MAX)
        for key, sid, payload, prev, nxt in self.conn.execute(
            f"SELECT id, subject_id, {self.d.payload_sql}, prev, next FROM msgs "
            "WHERE id >= ? AND id <= ? ORDER BY id LIMIT ?",
            (self.base | seq, self.base | MAX_SEQ, ahead),
        ):
            self._window[key & _MASK] = (sid, payload, prev, nxt)

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

    # --- flushing --------------------------------------------------------------------------
    def flush(self) -> None:
        """Write pending rows, deletes, pointer changes, subject states, stream counters."""
        conn = self.conn
        sid = self.d.id
        dead = self._dead
        if self._rows:
            rows = self._rows
            if dead:
                rows = [r for r in rows if (r[_K] & _MASK) not in dead]
            conn.executemany(_INSERT, rows)
        if self._ttl:
            base = self.base
            conn.executemany("INSERT INTO msg_ttl(id, expires) VALUES (?, ?)",
                             [(base | k, v) for k, v in self._ttl.items() if k not in dead])
        if self._db_deletes:
            base = self.base
            ranges = _runs(sorted(self._db_deletes))
            singles = [(base | lo,) for lo, hi in ranges if lo == hi]
            spans = [(base | lo, base | hi) for lo, hi in ranges if lo != hi]
            if singles:
                conn.executemany("DELETE FROM msgs WHERE id = ?", singles)
            if spans:
                conn.executemany("DELETE FROM msgs WHERE id BETWEEN ? AND ?", spans)
            if self.d.allow_ttl:
                conn.executemany("DELETE FROM msg_ttl WHERE id = ?", singles)
                conn.executemany("DELETE FROM msg_ttl WHERE id BETWEEN ? AND ?", spans)
        if self._ptr_next:
            base = self.base
            conn.executemany("UPDATE msgs SET next = ? WHERE id = ?",
                             [(v, base | k) for k, v in self._ptr_next.items() if k not in dead])
        if self._ptr_prev:
            base = self.base
            conn.executemany("UPDATE msgs SET prev = ? WHERE id = ?",
                             [(v, base | k) for k, v in self._ptr_prev.items() if k not in dead])
        if self._touched:
            ins, upd, dele = [], [], []
            for s in self._touched:
                state = (s.count, s.first, s.last)
                if s.count > 0:
                    if s.new:
                        ins.append((s.id, sid, s.subject, s.count, s.first, s.last))
                        s.new = False
                    elif state != s.orig:
                        upd.append((s.count, s.first, s.last, s.id))
                elif not s.new:
                    dele.append((s.id,))
                    s.new = True
                s.orig = state
                s.touched = False
            if ins:
                conn.executemany("INSERT INTO subjects(id, stream_id, subject, msgs, first_seq, "
                                 "last_seq) VALUES (?, ?, ?, ?, ?, ?)", ins)
            if upd:
                conn.executemany("UPDATE subjects SET msgs = ?, first_seq = ?, last_seq = ? "
                                 "WHERE id = ?", upd)
            if dele:
                conn.executemany("DELETE FROM subjects WHERE id = ?", dele)
        if self._dedupe:
            conn.executemany(
                "INSERT INTO dedupe(stream_id, msg_id, seq, ts) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(stream_id, msg_id) DO UPDATE SET seq = excluded.seq, "
                "ts = excluded.ts",
                [(sid, k, v[0], v[1]) for k, v in self._dedupe.items()],
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
            conn.execute(
                "UPDATE streams SET first_seq = ?, last_seq = ?, last_ts = ?, msgs = ?, "
                "bytes = ?, last_msg_id = ? WHERE id = ?",
                (self.first_seq, self.last_seq, self.last_ts, self.msgs, self.bytes,
                 self.last_msg_id, sid),
            )
        if changed:
            self.wrote = True
        self._dirty = False
        self._clear_overlay()

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
        self._dirty = True

    # --- the publish path ------------------------------------------------------------------
    def append(self, subject: str, hdr: bytes | None, data: bytes, *,
               sourced: bool = False, fv: dict[str, str] | None = None) -> PubAck | ApiError:
        """Store one message published on ``subject`` (after the stream's transform).

        Returns the PubAck or the server's ApiError (nothing stored). ``sourced`` marks the
        engine's own messages (subject delete markers, later sourced/mirrored ones): the
        client-only checks are skipped, as the server does for them.
        """
        d = self.d
        if d.sealed:
            return nats_error("StreamSealed")
        if hdr is None and d.fast:
            # No headers, no counter/interest/TTL rules: only sizes and limits apply.
            mlen = len(data)
            mms = d.max_msg_size
            if mms >= 0 and mlen > mms:
                return _too_big(mms, 0, mlen)
            return self._store(subject, None, data, 0, d.base_size + _blen(subject) + mlen,
                               "", "", None, None)
        return self._append_slow(subject, hdr, data, sourced, fv)

    def append_plain(self, items: list[tuple[str, bytes]]) -> list[PubAck | ApiError]:
        """``append`` for many header-less messages (the batch hot path).

        Same results as calling ``append(subject, None, data)`` for each; messages a limit
        would act on (discard, per-subject removal) take the general path one by one.
        """
        d = self.d
        if d.sealed or not d.fast or d.republish is not None:
            return [self.append(subject, None, data) for subject, data in items]
        if self.last_seq + len(items) > MAX_SEQ:  # pragma: no cover - 2^40 messages
            return [self.append(subject, None, data) for subject, data in items]
        out: list[PubAck | ApiError] = []
        self._append_run(items, None, out)
        return out

    def append_sourced(self, items: list[tuple[str, bytes | None, bytes]],
                       at: list[tuple[int, int]] | None = None
                       ) -> tuple[int, ApiError | None]:
        """Sourced or mirrored messages ``(subject, hdr, data)`` in order, stopping at the
        first refusal (core/replication.py's batch path): ``(how many were stored, the
        refusal or None)``. ``at`` gives each message's ``(seq, ts)`` (a mirror: the
        sequences in between are skipped, as ``skip_to``; the time is the origin's).

        Same results as ``append(subject, hdr, data, sourced=True)`` for each (after
        ``skip_to(seq - 1)`` at time ``ts`` with ``at``), for headers the publish path does
        not act on: the caller leaves out messages with Nats-Msg-Id, Nats-TTL, Nats-Rollup or
        Nats-Incr (and calls this only when ``sourced_fast``).
        """
        return self._append_run(items, at, None)

    def _append_run(self, items: list[tuple[str, bytes | None, bytes]] | list[tuple[str, bytes]],
                    at: list[tuple[int, int]] | None,
                    out: list[PubAck | ApiError] | None) -> tuple[int, ApiError | None]:
        """The one fast append loop behind ``append_plain`` and ``append_sourced``.

        Each message is linked into its subject's chain and counted here; a message some
        limit acts on takes the general path (``_store``) with the state written back.
        With ``out`` (publishing) every result is added to it (PubAck or error) and the loop
        goes on; without it (replicating) the loop stops at the first refusal and the
        message's time is pinned for the general path. Publishing passes header-less
        ``(subject, data)`` pairs. Returns (stored, refusal or None).
        """
        d = self.d
        name = d.name
        base = self.base
        base_size, hdr_extra = d.base_size, d.hdr_extra
        mms = d.max_msg_size
        cap = mms if mms >= 0 else MAX_SEQ  # headers + data above it: too big
        max_per, max_msgs, max_bytes = d.max_per, d.max_msgs, d.max_bytes
        rows, row_pos, ptr_next = self._rows, self._row_pos, self._ptr_next
        touched, cache = self._touched, self._subj
        add = out.append if out is not None else None
        at_next = iter(at).__next__ if at is not None else None
        hdr: bytes | None = None
        now = self.txn.now if at is None else 0  # a mirror's times are its origin's
        ts = now if now > self.last_ts else self.last_ts
        seq = self.last_seq
        nmsgs, nbytes = self.msgs, self.bytes
        pend_alive = self._pend_alive
        done = 0
        err: ApiError | None = None
        for item in items:
            if add is not None:
                subject, data = item  # a publish: no headers
            else:
                subject, hdr, data = item
            if at_next is not None:
                aseq, ats = at_next()
                if aseq <= seq or aseq > MAX_SEQ:
                    err = nats_error("StreamStoreFailed", err="last sequence mismatch")
                    break
                if aseq - 1 > seq:  # skipped sequences: deleted placeholders
                    seq = aseq - 1
                    self._dirty = True
                    if nmsgs == 0:
                        self.first_seq = aseq
                if ats > ts:
                    ts = ats
            hlen = len(hdr) if hdr else 0
            if hlen + len(data) > cap or hlen > MAX_HEADER_SIZE:
                refusal = nats_error("StreamMessageExceedsMaximum" if hlen + len(data) > cap
                                     else "StreamHeaderExceedsMaximum")
                if add is None:
                    err = refusal
                    break
                add(refusal)
                continue
            s = cache.get(subject)
            if s is None:
                s = self._subject(subject)
            size = base_size + s.slen + len(data) + (hdr_extra + hlen if hdr else 0)
            count = s.count
            if ((max_per and count >= max_per) or (max_msgs and nmsgs >= max_msgs)
                    or (max_bytes and nbytes + size > max_bytes) or seq >= MAX_SEQ):
                # A limit acts on this one: the general path, with the state written back.
                self.last_seq, self.last_ts, self.msgs, self.bytes = seq, ts, nmsgs, nbytes
                self._pend_alive = pend_alive
                if add is not None:
                    r = self._store(subject, hdr, data, 0, size, "", "", None, None)
                else:
                    saved = self.txn.now
                    self.txn.now = ts
                    try:
                        r = self._store(subject, hdr, data, 0, size, "", "", None, None)
                    finally:
                        self.txn.now = saved
                seq, ts, nmsgs, nbytes = self.last_seq, self.last_ts, self.msgs, self.bytes
                pend_alive = self._pend_alive
                if isinstance(r, ApiError):
                    if add is None:
                        err = r
                        break
                else:
                    done += 1
                if add is not None:
                    add(r)
                continue
            seq += 1
            if count:
                prev = s.last
                pos = row_pos.get(prev)
                if pos is not None:
                    rows[pos][4] = seq
                else:
                    ptr_next[prev] = seq
            else:
                prev = 0
                s.first = seq
            row_pos[seq] = len(rows)
            rows.append([base | seq, s.id, ts, prev, 0, hdr, data])
            s.last = seq
            s.count = count + 1
            if not s.touched:
                s.touched = True
                touched.append(s)
            if nmsgs == 0:
                self.first_seq = seq
                self._first_dirty = False
            nmsgs += 1
            nbytes += size
            pend_alive += 1
            done += 1
            if add is not None:
                add(PubAck(name, seq))
        self.last_seq, self.last_ts, self.msgs, self.bytes = seq, ts, nmsgs, nbytes
        self._pend_alive = pend_alive
        if done:
            self.last_msg_id = ""
        return done, err

    @property
    def sourced_fast(self) -> bool:
        """Whether :meth:`append_sourced` may be used for this stream."""
        d = self.d
        return not d.sealed and d.fast and d.republish is None

    def _append_slow(self, subject: str, hdr: bytes | None, data: bytes,
                     sourced: bool, fv: dict[str, str] | None = None) -> PubAck | ApiError:
        d = self.d
        name = d.name
        msg_id = ""
        rollup = ""
        incr: int | None = None
        only_id = False
        if hdr:
            if fv is None:
                fv = H.first_values(hdr)
            # A lone Nats-Msg-Id (the common case) needs none of the other header rules.
            only_id = len(fv) == 1 and H.MSG_ID in fv
            if not sourced and not only_id:
                # Counter increments (Nats-Incr): only on counter streams, with no payload.
                incr_text = fv.get(H.INCR)
                if incr_text:
                    incr = _parse_big_int(incr_text)
                    if incr is None:
                        return nats_error("MessageIncrInvalid")
                    if not d.allow_counter:
                        return nats_error("MessageIncrDisabled")
                    if data:
                        return nats_error("MessageIncrPayload")
                    if (fv.get(H.ROLLUP) or fv.get(H.EXPECTED_STREAM)
                            or fv.get(H.EXPECTED_LAST_MSG_ID)
                            or fv.get(H.EXPECTED_LAST_SUBJ_SEQ_SUBJ)
                            or fv.get(H.EXPECTED_LAST_SEQ) or fv.get(H.EXPECTED_LAST_SUBJ_SEQ)):
                        return nats_error("MessageIncrInvalid")
                expected = fv.get(H.EXPECTED_STREAM)
                if expected and expected != name:
                    return nats_error("StreamNotMatch")
                ttl_hdr = fv.get(H.MSG_TTL)
                if ttl_hdr:
                    t, _err = parse_msg_ttl(ttl_hdr)
                    if t != 0 and not d.allow_ttl:
                        return nats_error("MessageTTLDisabled")
                els = fv.get(H.EXPECTED_LAST_SUBJ_SEQ)
                if els:
                    want = _as_uint64(els)
                    have = self.last_seq_for(fv.get(H.EXPECTED_LAST_SUBJ_SEQ_SUBJ) or subject)
                    if have != want:
                        return nats_error("StreamWrongLastSequence", seq=have)
                elif fv.get(H.EXPECTED_LAST_SUBJ_SEQ_SUBJ):
                    return nats_error("StreamExpectedLastSeqPerSubjectInvalid")
                el = fv.get(H.EXPECTED_LAST_SEQ)
                if el and _as_uint64(el) != self.last_seq:
                    return nats_error("StreamWrongLastSequence", seq=self.last_seq)
                if fv.get(H.SCHEDULE) is not None and not d.allow_schedules:
                    return nats_error("MessageSchedulesDisabled")
                if fv.get(H.STREAM_SOURCE):
                    return nats_error("MessageSourceHdrNotAllowed")
            msg_id = fv.get(H.MSG_ID, "")
            if msg_id and not d.is_mirror:
                seen = self._dedupe_lookup(msg_id)
                if seen:
                    return PubAck(name, seen, duplicate=True)
            elm = None if only_id else fv.get(H.EXPECTED_LAST_MSG_ID)
            if elm and elm != self.last_msg_id:
                return nats_error("StreamWrongLastMsgID", id=self.last_msg_id)
            rollup = "" if only_id else (fv.get(H.ROLLUP) or "").lower()
            if rollup:
                if not d.allow_rollup_purge and not sourced:
                    return nats_error("StreamRollupFailed", err="rollup not permitted")
                if rollup not in ("sub", "all"):
                    return nats_error("StreamRollupFailed",
                                      err=f"rollup value invalid: {_go_quote(rollup)}")
        counter_val: str | None = None
        if d.allow_counter and not sourced:
            if incr is None:
                return nats_error("MessageIncrMissing")
            prev = self.last_seq_for(subject)
            initial = 0
            if prev:
                self.flush()
                m = load_msg(self.conn, d.id, prev)
                try:
                    doc = json.loads(m.data) if m is not None else {}
                    if not isinstance(doc, dict):
                        raise ValueError("not an object")
                    val = doc.get("val", "")
                    if not isinstance(val, str):
                        raise ValueError("not a string")
                    initial = int(val) if val else 0
                except ValueError:
                    return nats_error("MessageCounterBroken")
            counter_val = str(initial + incr)
            data = json.dumps({"val": counter_val}, separators=(",", ":")).encode()
        hlen = len(hdr) if hdr else 0
        mlen = len(data)
        mms = d.max_msg_size
        if mms >= 0 and (hlen > mms or mlen > mms - hlen):
            return _too_big(mms, hlen, mlen)
        if hlen > MAX_HEADER_SIZE:
            return nats_error("StreamHeaderExceedsMaximum")

        # Interest retention with nobody interested: the sequence is used, nothing stored.
        if d.retention == "interest" and not self.txn.hooks.has_interest(
                self.txn, name, subject):
            now = self.txn.now
            ts = now if now > self.last_ts else self.last_ts
            seq = self.last_seq + 1
            self.last_seq = seq
            self.last_ts = ts
            if self.msgs == 0:
                self.first_seq = seq + 1
            self.last_msg_id = msg_id
            self._dirty = True
            if msg_id and d.dup_window:
                self._dedupe[msg_id] = (seq, ts)
            if d.allow_rollup_purge and rollup:
                self._rollup(subject, rollup, keep=0)
            return PubAck(name, seq)

        ttl = 0
        if fv is not None and not only_id:
            ttl, err = parse_msg_ttl(fv.get(H.MSG_TTL))
            if err is not None:
                return err
            if ttl > 0 and d.sdm_ttl_s > 0 and d.max_per != 1 and ttl < d.sdm_ttl_s:
                ttl = d.sdm_ttl_s
                hdr = H.append_header(H.remove_header(hdr, H.MSG_TTL), H.MSG_TTL, str(ttl))
                hlen = len(hdr)
        size = msg_size(d.file, _blen(subject), hlen, mlen)
        rollup_hdr = fv.get(H.ROLLUP, "") if fv and not only_id else ""
        return self._store(subject, hdr, data, ttl, size, msg_id, rollup_hdr, rollup,
                           counter_val)

    def _store(self, subject: str, hdr: bytes | None, data: bytes, ttl: int, size: int,
               msg_id: str, rollup_hdr: str, rollup: str | None,
               counter_val: str | None) -> PubAck | ApiError:
        """The store's ``storeRawMsg`` (discard-new checks, append, limits), then dedupe and
        rollup bookkeeping (``processJetStreamMsg`` after the store)."""
        d = self.d
        s = self._subject(subject)
        count = s.count
        max_per = d.max_per
        psmc = count + 1 if (max_per and count > 0) else 0
        if d.discard_new and d.needs_limits:
            asl = False
            if max_per and psmc > max_per:
                if d.discard_new_per and not rollup_hdr:
                    return _detailed(nats_error("StreamStoreFailed",
                                                err="maximum messages per subject exceeded"),
                                     f"max_msgs_per_subject = {max_per:,} (discard new per "
                                     f"subject): subject {clip(subject)} holds {count:,}")
                asl = True
            if d.max_msgs and self.msgs >= d.max_msgs and not asl:
                return _detailed(nats_error("StreamStoreFailed", err="maximum messages exceeded"),
                                 f"max_msgs = {d.max_msgs:,} (discard new): the stream holds "
                                 f"{self.msgs:,}")
            if d.max_bytes and self.bytes + size > d.max_bytes:
                if not asl or self._node(s.first)[1] < size:
                    return _detailed(
                        nats_error("StreamStoreFailed", err="maximum bytes exceeded"),
                        f"max_bytes = {d.max_bytes:,} (discard new): the stream holds "
                        f"{self.bytes:,} bytes, the message needs {size:,}")

        now = self.txn.now
        ts = now if now > self.last_ts else self.last_ts
        seq = self.last_seq + 1
        if seq > MAX_SEQ:  # pragma: no cover - 2^40 messages
            return nats_error("StreamStoreFailed", err="sequence space of jetlink exhausted")
        if count > 0:
            prev = s.last
            pos = self._row_pos.get(prev)
            if pos is not None:
                self._rows[pos][_NEXT] = seq
            else:
                self._ptr_next[prev] = seq
        else:
            prev = 0
            s.first = seq
        if ttl:
            # (an expiry past the int64 nanosecond clock, year 2262, is kept at its maximum)
            self._ttl[seq] = min(ts + ttl * _SECOND, _INT64_MAX) if ttl > 0 else -1
        self._row_pos[seq] = len(self._rows)
        self._rows.append([self.base | seq, s.id, ts, prev, 0, hdr, data])
        s.last = seq
        s.count = count + 1
        if not s.touched:
            s.touched = True
            self._touched.append(s)
        self._pend_alive += 1
        if self.msgs == 0:
            self.first_seq = seq
            self._first_dirty = False
        self.msgs += 1
        self.bytes += size
        self.last_seq = seq
        self.last_ts = ts

        if d.needs_limits:
            if max_per and psmc > max_per:
                while s.count > max_per and self._remove_oldest_of(s):
                    pass
            if not d.discard_new:
                if d.max_msgs:
                    while self.msgs > d.max_msgs and self._remove_first():
                        pass
                if d.max_bytes:
                    while self.bytes > d.max_bytes and self._remove_first():
                        pass

        self.last_msg_id = msg_id
        if msg_id and d.dup_window:
            self._dedupe[msg_id] = (seq, ts)
        if rollup and d.allow_rollup_purge:
            self._rollup(subject, rollup, keep=1)
        if d.republish is not None:
            _republish().after_store(self, subject, hdr, data, seq, ts, prev)
        return PubAck(d.name, seq, val=counter_val)

    def _rollup(self, subject: str, rollup: str, keep: int) -> None:
        """The server's ``processJetStreamMsgWithRollup``: a purge (consumers told too)."""
        if rollup == "sub":
            self.purge(subject=subject, keep=keep)
            self.notify_purge(subject)
        elif rollup == "all":
            self.purge(keep=keep)
            self.notify_purge(None)

    def notify_purge(self, subject: str | None) -> None:
        """Tell the consumers (``RetentionHooks.on_purge``) about the purge just done."""
        self.flush()
        self.txn.hooks.on_purge(self.txn, self.d.name, subject or None)

    def prefetch_msg_ids(self, ids: Iterable[str]) -> None:
        """Load the dedupe entries of many message ids with a few queries."""
        if not self.d.dup_window:
            return
        known = self._dd_known
        missing = [i for i in set(ids) if i not in known]
        for i in range(0, len(missing), 500):
            chunk = missing[i : i + 500]
            for mid in chunk:
                known[mid] = None
            marks = ",".join("?" * len(chunk))
            for mid, seq, ts in self.conn.execute(
                f"SELECT msg_id, seq, ts FROM dedupe WHERE stream_id = ? AND msg_id IN ({marks})",
                (self.d.id, *chunk),
            ):
                known[mid] = (seq, ts)

    def _dedupe_lookup(self, msg_id: str) -> int:
        window = self.d.dup_window
        if not window:
            return 0
        now = self.txn.now
        hit = self._dedupe.get(msg_id)
        if hit is None:
            if msg_id in self._dd_known:
                hit = self._dd_known[msg_id]
            else:
                hit = self.conn.execute(
                    "SELECT seq, ts FROM dedupe WHERE stream_id = ? AND msg_id = ?",
                    (self.d.id, msg_id),
                ).fetchone()
        if hit is None or now - hit[1] >= window:
            return 0
        return hit[0]

    def maybe_prune_dedupe(self) -> None:
        """Drop dedupe entries past the window, at most once per window (lookups ignore them
        anyway; this only bounds the table)."""
        window = self.d.dup_window
        now = self.txn.now
        if self._dedupe_pruned and now - self._dedupe_pruned < max(window, _SECOND):
            return
        self.conn.execute("DELETE FROM dedupe WHERE stream_id = ? AND ts <= ?",
                          (self.d.id, now - window))
        self.conn.execute("UPDATE streams SET dedupe_pruned_ns = ? WHERE id = ?",
                          (now, self.d.id))
        self._dedupe_pruned = now

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
        per: dict[int, list[int]] = {}  # subject id -> [count, payload, next of last removed]
        for _key, sid, size, nxt in conn.execute(
            f"SELECT id, subject_id, {self.d.payload_sql}, next FROM msgs "
            "WHERE id BETWEEN ? AND ? ORDER BY id", (lo, hi),
        ):
            p = per.get(sid)
            if p is None:
                per[sid] = [1, size, nxt]
            else:
                p[0] += 1
                p[1] += size
                p[2] = nxt
        if not per:
            return 0
        conn.execute("DELETE FROM msgs WHERE id BETWEEN ? AND ?", (lo, hi))
        conn.execute("DELETE FROM msg_ttl WHERE id BETWEEN ? AND ?", (lo, hi))
        count = total = 0
        upd, dele = [], []
        for sid, (n, size, nxt) in per.items():
            row = conn.execute("SELECT msgs, subject FROM subjects WHERE id = ?",
                               (sid,)).fetchone()
            count += n
            total += size + n * (self.d.base_size + _blen(row[1]))
            if row[0] <= n:
                dele.append((sid,))
            else:
                upd.append((row[0] - n, nxt, sid))
        if upd:
            conn.executemany("UPDATE subjects SET msgs = ?, first_seq = ? WHERE id = ?", upd)
        if dele:
            conn.executemany("DELETE FROM subjects WHERE id = ?", dele)
        self.msgs -= count
        self.bytes -= total
        if self.msgs <= 0:
            self.msgs = self.bytes = 0
            self.first_seq = self.last_seq + 1
        else:
            self.first_seq = self._min_stored_seq(upto)
        return count

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
        if self.d.allow_ttl:
            self.conn.executemany("DELETE FROM msg_ttl WHERE id = ?", keys)
        per: dict[int, list[int]] = {}
        total_size = 0
        fixed = {r[0]: self.d.base_size + _blen(r[4]) for r in subjects}
        for vseq, sid, size, nxt in victims:
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
        if seq > MAX_SEQ + 1:
            raise JetlinkError(f"sequence {seq} is beyond jetlink's limit {MAX_SEQ}")
        return self._purge_all(seq)

    # --- expiry ----------------------------------------------------------------------------------
    def expire(self) -> int:
        """Apply max_age and per-message TTLs at the transaction's time, in due order.

        Subject delete markers: when the last message of a subject expires and
        subject_delete_marker_ttl is set, a marker (``Nats-Marker-Reason: MaxAge``,
        ``Nats-TTL``, ``Nats-Rollup: sub``, empty body) replaces it, stamped at the moment
        the server would have written it (the expiry time); markers expire like any TTL
        message and never leave a marker behind. Returns how many messages were removed.
        """
        d = self.d
        now = self.txn.now
        if self.msgs == 0:
            return 0
        self._sql_mode()
        conn, base = self.conn, self.base
        removed = 0
        heap: list[tuple[int, int]] = []
        sdm = d.sdm_ttl_s > 0
        if d.max_age:
            cutoff = now - d.max_age
            upto = 0  # a plain prefix of expired messages can go in one range delete
            plain = True
            for key, ts, expires in conn.execute(
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
            if heap and plain and not sdm:
                removed += self._remove_below(upto)
                heap = []
        for key, expires in conn.execute(
            "SELECT id, expires FROM msg_ttl WHERE expires > 0 AND expires <= ? "
            "AND id BETWEEN ? AND ?", (now, base, base | MAX_SEQ),
        ).fetchall():
            heap.append((expires, key & _MASK))
        if not heap:
            return removed
        heapq.heapify(heap)
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
            if sdm and s.count == 1:
                hdr = conn.execute(f"SELECT {hdr_sql()} FROM msgs WHERE id = ?",
                                   (base | seq,)).fetchone()
                if hdr is None:  # pending (cannot happen: expiry runs flushed)
                    hdr = (None,)
                if not _is_marker(hdr[0]):
                    marker_hdr = (
                        f"NATS/1.0\r\n{H.MARKER_REASON}: MaxAge\r\n"
                        f"{H.MSG_TTL}: {_format_go_seconds(d.sdm_ttl_s)}\r\n"
                        f"{H.ROLLUP}: sub\r\n\r\n"
                    ).encode()
                    saved_now = self.txn.now
                    self.txn.now = max(due, self.last_ts)
                    try:
                        ack = self.append(s.subject, marker_hdr, b"", sourced=True)
                    finally:
                        self.txn.now = saved_now
                    if isinstance(ack, PubAck) and ack.seq:
                        removed += 1
                        mts = self.last_ts
                        mdue = mts + d.sdm_ttl_s * _SECOND
                        if d.max_age:
                            mdue = min(mdue, mts + d.max_age)
                        if mdue <= now:
                            heapq.heappush(heap, (mdue, ack.seq))
                        continue
                    # The marker could not be stored (a discard-new limit): plain removal.
            if self._remove(seq):
                removed += 1
        self.flush()
        return removed

    def expiry_due(self) -> bool:
        """Cheap check: would :meth:`expire` remove anything now?"""
        return expiry_due(self.conn, self.d, self.txn.now)

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


# --- helpers shared with readers ---------------------------------------------------------------
def _blen(subject: str) -> int:
    """A subject's length in bytes (UTF-8), as Go's len(string)."""
    return len(subject) if subject.isascii() else len(subject.encode())


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


def _parse_big_int(text: str) -> int | None:
    """Go's ``big.Int.SetString(s, 10)``: optional sign, decimal digits."""
    t = text
    if t[:1] in "+-":
        t = t[1:]
    if not t or not t.isascii() or not t.isdigit():
        return None
    return int(text)


def matching_subjects(conn: sqlite3.Connection, stream_id: int,
                      pattern: str) -> Iterator[tuple[int, int, int, int, str]]:
    """(id, msgs, first_seq, last_seq, subject) of the stream's subjects matching
    ``pattern``."""
    cols = "id, msgs, first_seq, last_seq, subject"
    if pattern in ("", ">"):
        yield from conn.execute(f"SELECT {cols} FROM subjects WHERE stream_id = ?",
                                (stream_id,))
        return
    if not has_wildcard(pattern):
        row = conn.execute(f"SELECT {cols} FROM subjects WHERE stream_id = ? AND subject = ?",
                           (stream_id, pattern)).fetchone()
        if row:
            yield row
        return
    flt = SubjectFilter([pattern])
    for row in conn.execute(f"SELECT {cols} FROM subjects WHERE stream_id = ?", (stream_id,)):
        if flt.matches(row[4]):
            yield row


def _chain_from(conn: sqlite3.Connection, base: int, seq: int, last: int,
                payload: str = "0") -> Iterator[tuple[int, int, int]]:
    """(seq, payload size, next) along a subject's chain from ``seq`` up to its ``last``."""
    while seq and seq <= last:
        row = conn.execute(f"SELECT {payload}, next FROM msgs WHERE id = ?",
                           (base | seq,)).fetchone()
        if row is None:  # pragma: no cover - chains are always complete
            raise JetlinkError(f"store inconsistency: broken subject chain at {seq}")
        yield seq, row[0], row[1]
        if seq == last:
            return
        seq = row[1]


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


_MSG_COLS = f"m.id, s.subject, m.ts, {hdr_sql('m.')}, m.data"
_MSG_FROM = "FROM msgs m JOIN subjects s ON s.id = m.subject_id"


def _stored(row: tuple) -> StoredMsg:
    key, subject, ts, hdr, data = row[:5]
    return StoredMsg(subject=subject, seq=key & _MASK, ts=ts, hdr=hdr, data=data)


def load_msg(conn: sqlite3.Connection, stream_id: int, seq: int) -> StoredMsg | None:
    if not 0 < seq <= MAX_SEQ:
        return None
    row = conn.execute(f"SELECT {_MSG_COLS} {_MSG_FROM} WHERE m.id = ?",
                       (msg_key(stream_id, seq),)).fetchone()
    return _stored(row) if row else None


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


def next_msgs(conn: sqlite3.Connection, stream_id: int, start: int, filters: Iterable[str],
              limit: int) -> list[StoredMsg]:
    """Up to ``limit`` messages at or after ``start`` whose subject matches any filter (no
    filter: all), in sequence order."""
    base, top = key_range(stream_id)
    start = max(start, 0)
    filters = [f for f in filters if f]
    if not filters or ">" in filters:
        rows = conn.execute(
            f"SELECT {_MSG_COLS} {_MSG_FROM} WHERE m.id BETWEEN ? AND ? ORDER BY m.id LIMIT ?",
            (base | start, top, limit)).fetchall()
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
        cursor = base | start
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
    heads = []
    for _sid, _n, first, last, _subject in subjects.values():
        seq = _first_at_or_after(conn, base, first, last, start)
        if seq:
            heads.append((seq, last))
    heapq.heapify(heads)
    out = []
    while heads and len(out) < limit:
        seq, last = heapq.heappop(heads)
        row = conn.execute(f"SELECT {_MSG_COLS}, m.next {_MSG_FROM} WHERE m.id = ?",
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
                            (base | max(start, 0), top)).fetchone()[0]
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
        (base | max(start_seq, 0), top, limit),
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
        if at_or_after(mid)[1] >= ts_ns:
            b = mid
        else:
            a = mid + 1
    return at_or_after(a)[0] & _MASK


def expiry_due(conn: sqlite3.Connection, d: StreamDef, now: int) -> bool:
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
    out = []
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
    errors = []
    table = {}
    for sid, subject, n, sfirst, slast in conn.execute(
        "SELECT id, subject, msgs, first_seq, last_seq FROM subjects WHERE stream_id = ?",
        (stream_id,)
    ):
        table[subject] = n
        expected = rows_by_subject.get(subject, [])
        walked = [seq for seq, _size, _nxt in _chain_from(conn, base, sfirst, slast)]
        if walked != expected or (expected and (sfirst, slast) != (expected[0], expected[-1])):
            errors.append((subject, walked[:10], expected[:10]))
        for a, b in zip(expected, expected[1:]):  # interior prev pointers
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


def _detailed(err: ApiError, detail: str) -> ApiError:
    """A refusal with the limit and the value that met it, for people (not in --json)."""
    err.detail = detail
    return err


def _too_big(mms: int, hlen: int, mlen: int) -> ApiError:
    what = f"{hlen + mlen:,} bytes" + (f" ({hlen:,} of headers)" if hlen else "")
    return _detailed(nats_error("StreamMessageExceedsMaximum"),
                     f"max_msg_size = {mms:,}: the message is {what}")


def check_publish_input(subject: str, hdr: bytes | None, data: bytes | bytearray, *,
                        reply_len: int = 0) -> None:
    """What a client refuses before sending: a bad subject, a protocol line over the
    server's max_control_line, a payload over max_payload (core/limits.py). ``reply_len``:
    the bytes of the reply subject the line carries (a JetStream publish's inbox,
    :func:`limits.js_reply_len`); 0 for a core publish."""
    if not isinstance(subject, str) or not is_valid_publish_subject(subject):
        raise client_error("nats: invalid subject")
    L.check_publish(subject, len(data), hdr_len=len(hdr) if hdr else 0, reply_len=reply_len)
