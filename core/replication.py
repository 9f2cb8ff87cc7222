"""Mirrors and sources on the embedded store: agreements, their cursors, the pump.

docs/replication.md is the contract; the rules are nats-server 2.15's (``stream.go``:
``setupMirrorConsumer`` / ``processInboundMirrorMsg``, ``trySetupSourceConsumer`` /
``processInboundSourceMsg``, ``genSourceHeader``, ``sourceInfo``), checked by hand and by
tests/conformance/test_replication_conformance.py against a live server.

A stream whose config has ``mirror`` or ``sources`` holds one *agreement* per origin, a row of
``repl_agreements`` in the TARGET cluster's database (a schema component): the origin, a
durable cursor (the last origin sequence consumed), lag / last contact / error for StreamInfo,
and the durable consumer used on WorkQueue / Interest origins. :func:`pump` runs steps; a step
of one target stream is ONE write transaction of the target database holding the copied
messages AND every cursor that moved, so a crash at any point loses and duplicates nothing.

Two ways to copy, same result (tests compare them): the per-message path (every rule of the
publish path, ``StreamTxn.append``), and for mirrors whose batch needs none of those rules
the SQL path: the origin database ``ATTACH``ed and ``INSERT ... SELECT`` in large batches,
subject chains and counters computed in SQL. Both read the agreement's copy rules (headers
stripped and added, dedupe, target subject: core/copyrules.py), as the Spark jobs do.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import heapq
import json
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import copyrules as C
from . import headers as H
from . import streams as S
from .agreements import (  # noqa: F401 - part of this module's API
    COMPONENT,
    _has_table,
    go_hash,
    identity,
    iname_of,
    source_filters,
    stream_source_infos,
)
from .clock import Clock, format_rfc3339_nano, parse_rfc3339_nano
from .config.stream import StreamConfig, StreamSource
from .config.validate import JS_API_PREFIX
from .errors import ApiError, JetlinkError, nats_error
from .limits import CLUSTER_NAME_RE
from .messages import UnstoredAck
from .startseq import deliver_all_start
from .store import Cluster, DataDir, connect
from .store.health import StorageError, unusable
from .streamstore.base import INSERT_SUBJECTS_SQL, UPDATE_SUBJECTS_SQL
from .subjectcache import matched_hint, memo
from .transform import compile_transform

__all__ = [
    "AgreementReport",
    "COMPONENT",
    "SCHEMA_STEPS",
    "go_hash",
    "iname_of",
    "pump",
    "pump_until_idle",
    "source_infos",
    "stream_source_infos",
]

SCHEMA_STEPS: list[list[str]] = [
    [
        # One row per (target stream, kind, iname). ``cursor``: the last origin sequence
        # consumed (stored, or skipped as a duplicate); for a mirror it follows the mirror's
        # last sequence. ``lag`` / ``last_seen`` / ``error`` are what StreamInfo reports.
        """CREATE TABLE repl_agreements (
            target_id      INTEGER NOT NULL,
            kind           TEXT NOT NULL,
            iname          TEXT NOT NULL,
            target_created INTEGER NOT NULL,
            origin_cluster TEXT NOT NULL,
            origin         TEXT NOT NULL,
            origin_ident   TEXT NOT NULL DEFAULT '',
            started        INTEGER NOT NULL DEFAULT 0,
            cursor         INTEGER NOT NULL DEFAULT 0,
            seq            INTEGER NOT NULL DEFAULT 0,
            lag            INTEGER NOT NULL DEFAULT 0,
            last_seen      INTEGER NOT NULL DEFAULT 0,
            error          TEXT,
            consumer       TEXT NOT NULL DEFAULT '',
            consumer_auto  INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (target_id, kind, iname)
        ) WITHOUT ROWID""",
    ],
    [
        # ``failed``: a mirror's messages dropped at a DiscardNew limit of the mirror (the
        # server's clfs): its cursor is its last sequence plus these, and the next message
        # it stores takes the mirror's next sequence (origin sequence - failed).
        "ALTER TABLE repl_agreements ADD COLUMN failed INTEGER NOT NULL DEFAULT 0",
    ],
]

SS = H.STREAM_SOURCE
SECOND = 1_000_000_000
HEARTBEAT_NS = SECOND  # the server's sourceHealthHB: last contact refreshed at most this often
BATCH = 50_000  # messages per agreement per transaction, per-message path
SQL_BATCH = 1_000_000  # messages per transaction, SQL path
# A whole-origin copy of SPLIT_MIN messages or more is several transactions of SPLIT_PARTS %
# each (``_TailScan``): the log of one is checkpointed while the next is built.
SPLIT_MIN = 20_000
SPLIT_PARTS = (60, 28, 12)
CHECKPOINT_AFTER = 10_000  # a step that moved this many messages asks for a checkpoint
MAX_ROUNDS = 100_000  # pump_until_idle's guard against endless cross-cluster loops
_MASK = S.MAX_SEQ
# Headers the SQL path can not copy verbatim (the per-message path strips or acts on them):
# the mirror's stripped lines, and what the target's publish path acts on.
_SQL_UNSAFE = (*C.MIRROR_STRIP, H.MSG_TTL, H.ROLLUP)

# Errors of the agreement itself (the server's consumer setup failures; jetlink's own texts
# for what a real server can not see: a down or unknown cluster).
_SETUP_FAILED = {"mirror": (500, 10029), "source": (500, 10045)}
_REQUIRES_ACK_FC = {
    "mirror": (400, 10214, "stream mirror consumer requires flow control ack policy"),
    "source": (400, 10217, "stream source consumer requires flow control ack policy"),
}
# A mirror refused by its own DiscardNew limits (max_msgs, max_bytes, max_msgs_per_subject)
# at the newest message it can read does as nats-server 2.15.1's processInboundMirrorMsg:
# the message is consumed and dropped (its mirror consumer has moved on; storeRawMsg's
# refusal only bumps the stream's clfs and is logged), lag is the consumer's pending count,
# no error is reported. Refused with more after it (a burst: processMirrorMsgs discards the
# rest and retries its consumer), and at any other refusal (sealed, max_msg_size), the
# mirror stalls at that message; jetlink shows the refusal in the mirror info (the server
# logs it and retries its consumer): STALL_ERROR_IN_INFO.
STALL_ERROR_IN_INFO = True


def _error_doc(err: ApiError | None) -> str | None:
    if err is None:
        return None
    return json.dumps({"code": err.code, "err_code": err.err_code,
                       "description": err.description}, separators=(",", ":"))


# --------------------------------------------------------------------------------------------
# Reports
# --------------------------------------------------------------------------------------------
@dataclass
class AgreementReport:
    """What one pump call did for one agreement."""

    target_cluster: str
    target: str
    origin_cluster: str
    origin: str
    kind: str  # "mirror" | "source"
    copied: int = 0  # messages stored in the target
    skipped: int = 0  # duplicates (Nats-Msg-Id within the target's window) not stored
    lag: int = 0  # as StreamInfo reports it
    seq: int = 0  # the cursor: last origin sequence consumed
    error: str | None = None  # why it did not move (origin unreachable, target refusing, ...)
    stalled: bool = False  # the target refused a message (limits): retried on a later step

    @property
    def moved(self) -> bool:
        return bool(self.copied or self.skipped)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "target_cluster": self.target_cluster, "target": self.target,
            "origin_cluster": self.origin_cluster, "origin": self.origin, "kind": self.kind,
            "copied": self.copied, "skipped": self.skipped, "lag": self.lag, "seq": self.seq,
        }
        if self.error:
            out["error"] = self.error
        if self.stalled:
            out["stalled"] = True
        return out


# --------------------------------------------------------------------------------------------
# StreamSourceInfo
# --------------------------------------------------------------------------------------------
def source_infos(datadir: DataDir, cluster: str, stream: str, clock: Clock
                 ) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """StreamSourceInfo documents of ``stream`` in ``cluster``, as the server reports them:
    ``(mirror info | None, [source info, ...])`` (10059 when the stream does not exist)."""
    cl = datadir.open(cluster)
    with cl.read() as conn:
        catalog = S.Catalog.load(conn, cl.cache)
        d = catalog.by_name.get(stream)
        if d is None:
            raise nats_error("StreamNotFound")
        return stream_source_infos(conn, d, clock.now_ns())


# --------------------------------------------------------------------------------------------
# Reading an origin
# --------------------------------------------------------------------------------------------
class _OriginView:
    """An origin stream as the consumer rules read it (core/consumers.py ``StreamView``)."""

    def __init__(self, conn: sqlite3.Connection, d: S.StreamDef) -> None:
        self.conn, self.sid, self.d = conn, d.id, d
        self.first_seq, self.last_seq, self.msgs, self.created = conn.execute(
            "SELECT first_seq, last_seq, msgs, created_ns FROM streams WHERE id = ?",
            (d.id,)).fetchone()

    def load(self, seq: int) -> Any:
        return S.load_msg(self.conn, self.sid, seq)

    def next_msgs(self, start: int, filters: Sequence[str], limit: int) -> list[Any]:
        return S.next_msgs(self.conn, self.sid, start, filters, limit)

    def count(self, start: int, filters: Sequence[str]) -> int:
        return S.count_msgs(self.conn, self.sid, start, filters)

    def last_seqs(self, filters: Sequence[str]) -> list[int]:
        return S.last_seqs(self.conn, self.sid, filters)

    def seq_from_time(self, ts: int) -> int:
        seq = S.seq_for_time(self.conn, self.sid, ts)
        return seq if seq else self.last_seq + 1

    def existing(self, seqs: Iterable[int]) -> set[int]:
        return S.existing(self.conn, self.sid, seqs)


def _start_seq(view: _OriginView, filters: list[str], *, seq: int = 0,
               time_ns: int = 0) -> int:
    """Where a consumer created on the origin starts (the server's ``selectStartingSeqNo``):
    ``seq`` (by start sequence), ``time_ns`` (by start time), else deliver all."""
    if seq <= 0 and time_ns <= 0:
        return deliver_all_start(view.first_seq, view.last_seq)
    from .config.consumer import ConsumerConfig
    from .consumers import start_state

    doc: dict[str, Any] = {"deliver_policy": "all"}
    if seq > 0:
        doc = {"deliver_policy": "by_start_sequence", "opt_start_seq": seq}
    elif time_ns > 0:
        doc = {"deliver_policy": "by_start_time", "opt_start_time": format_rfc3339_nano(time_ns)}
    if len(filters) == 1:
        doc["filter_subject"] = filters[0]
    elif filters:
        doc["filter_subjects"] = list(filters)
    cfg = ConsumerConfig.from_json(doc, strict=False)
    return start_state(cfg, view, view.d.cfg, 0).sseq


# At most this many subjects selected by a filter set: read them along their chains
# (S.next_msgs, S.count_msgs); more: scan the range, each message's subject judged by name.
_FEW_SUBJECTS = 64


def _read(conn: sqlite3.Connection, oid: int, start: int, filters: list[str],
          limit: int) -> list[tuple]:
    """Up to ``limit`` origin messages at or after ``start`` matching ``filters`` (none:
    all), as ``(seq, subject, ts, hdr, data)`` in sequence order.

    A filtered read never lists the origin's subjects: each message's subject name comes
    with it (a join) and is judged by the process's memo of verdicts by name
    (core/subjectcache.py), so a subject id reused after a delete can not carry the old
    subject's verdict, and each name is matched once per process."""
    if limit <= 0:
        return []
    base, top = S.key_range(oid)
    lo = base | max(start, 0)
    cols = f"m.id, s.subject, m.ts, {S.hdr_sql('m.')}, m.data"
    join = "FROM msgs m JOIN subjects s ON s.id = m.subject_id"
    if not filters or ">" in filters:
        return [(k & _MASK, subj, ts, hdr, data) for k, subj, ts, hdr, data in conn.execute(
            f"SELECT {cols} {join} WHERE m.id BETWEEN ? AND ? ORDER BY m.id LIMIT ?",
            (lo, top, limit))]
    if matched_hint(conn, oid, filters) <= _FEW_SUBJECTS:  # few subjects: walk their chains
        return [(m.seq, m.subject, m.ts, m.hdr, m.data)
                for m in S.next_msgs(conn, oid, start, filters, limit)]
    out: list[tuple] = []
    match = memo(filters).matches
    chunk = min(max(limit, 1000), 20_000)
    while len(out) < limit:
        rows = conn.execute(f"SELECT {cols} {join} WHERE m.id BETWEEN ? AND ? ORDER BY m.id "
                            "LIMIT ?", (lo, top, chunk)).fetchall()
        for k, subject, ts, hdr, data in rows:
            if match(subject):
                out.append((k & _MASK, subject, ts, hdr, data))
                if len(out) >= limit:
                    break
        if len(rows) < chunk:
            break
        lo = rows[-1][0] + 1
    return out


def _count_from(conn: sqlite3.Connection, oid: int, start: int, filters: list[str]) -> int:
    """How many origin messages at or after ``start`` match ``filters`` (S.count_msgs's
    answer): with many subjects selected and a range not much longer than them, counted
    per subject over the range and judged by name (as :func:`_read`)."""
    if filters and ">" not in filters:
        hint = matched_hint(conn, oid, filters)
        last = conn.execute("SELECT last_seq FROM streams WHERE id = ?", (oid,)).fetchone()
        if hint > _FEW_SUBJECTS and last is not None and last[0] - start < 16 * hint:
            base, top = S.key_range(oid)
            match = memo(filters).matches
            return sum(n for subject, n in conn.execute(
                "SELECT s.subject, count(*) FROM msgs m JOIN subjects s ON s.id = m.subject_id "
                "WHERE m.id BETWEEN ? AND ? GROUP BY m.subject_id",
                (base + min(max(start, 0), _MASK + 1), top)) if match(subject))
    return S.count_msgs(conn, oid, start, filters)


# --------------------------------------------------------------------------------------------
# One agreement in one step
# --------------------------------------------------------------------------------------------
@dataclass
class _Agreement:
    kind: str
    src: StreamSource
    iname: str
    target_cluster: str
    target: str
    origin_cluster: str
    filters: list[str]
    transforms: list[Any]  # compiled, first match wins
    error: ApiError | None = None
    rules: C.CopyRules | None = None  # the copy rules into the target (set by ``_open``)
    ocl: Cluster | None = None  # the origin's cluster (None: unreachable)
    same_db: bool = False
    consumer: str = ""  # durable consumer on the origin ('' when none)
    consumer_auto: bool = False
    consumer_filters: list[str] | None = None
    # filled inside the step
    row: list[Any] | None = None
    od: S.StreamDef | None = None
    oview: _OriginView | None = None
    msgs: list[tuple] = field(default_factory=list)
    truncated: bool = False
    stalled: ApiError | None = None
    report: AgreementReport | None = None
    last_attempt: int = 0  # origin seq of the last message tried (lag is counted after it)
    # Whether the agreement was caught up and healthy at its last step (a server's mirror
    # consumer then gets each new message on its own), and since when its target exists
    # (messages stored at the origin after that reached a new mirror one by one): the
    # DiscardNew rule (``_in_a_burst``) tells a burst from a trickle by them.
    tailing: bool = False
    since: int = 0
    # the last origin sequence the target's Nats-Stream-Source headers say it stored, found
    # when a source (added again) resumes after it: its reported seq until it copies more
    resumed_at: int = 0
    read: bool = False  # the origin was reachable in this step
    got: bool = False  # messages came from the origin in this step
    final: bool = True  # no further step follows in this pump call (lag is worth counting)
    limit: int | None = None  # the messages this step may copy (0: its budget is spent)
    oconn: sqlite3.Connection | None = None
    saved: list[Any] | None = None
    # The SQL path's next parts of a catch-up split in transactions (``_TailScan``).
    parts: _Parts | None = None

    @property
    def origin(self) -> str:
        return self.src.name


def origin_cluster(src: StreamSource, target_cluster: str) -> tuple[str, ApiError | None]:
    """The cluster holding a mirror's or source's origin: the target's own, or the one
    ``external.api = "$JS.<cluster>.API"`` names; an api naming no cluster is the error."""
    ext = src.external
    if ext is None or not ext.api or ext.api == JS_API_PREFIX:
        return target_cluster, None
    dom = src.domain
    if dom is None or not CLUSTER_NAME_RE.fullmatch(dom):  # (no cluster can have that name)
        from .errors import clip

        return "", ApiError(500, 0, f"external api {clip(ext.api)} names no cluster of the "
                                    "data directory (use $JS.<cluster>.API; a cluster name is "
                                    "1 to 64 letters, digits, '_' or '-')")
    return dom, None


def _setup_error(kind: str, text: str) -> ApiError:
    code, err_code = _SETUP_FAILED[kind]
    return ApiError(code, err_code, text)


def _plan(dd: DataDir, tcluster: str, target: str, kind: str, src: StreamSource
          ) -> _Agreement:
    """Resolve one agreement's origin before the step (no lock held)."""
    transforms = [compile_transform(t.src or ">", t.dest) for t in src.subject_transforms]
    a = _Agreement(kind, src, iname_of(src), tcluster, target, "", source_filters(src), transforms)
    ocname, err = origin_cluster(src, tcluster)
    a.origin_cluster = ocname or "?"
    if err is not None:
        a.error = err
        return a
    try:
        if not dd.has_cluster(ocname) and ocname != "local":
            raise JetlinkError("absent")
        ocl = dd.open(ocname)
        ocl.check_sound()
    except StorageError:
        a.error = _setup_error(kind, f"origin {unusable(ocname)}")
        return a
    except JetlinkError:
        a.error = _setup_error(kind, f"origin cluster {ocname} not found")
        return a
    if ocl.kind != "nats":
        a.error = _setup_error(kind, f"origin cluster {ocname} is not a NATS cluster")
        return a
    if ocl.down:
        a.error = _setup_error(kind, f"origin cluster {ocname} is down")
        return a
    a.ocl = ocl
    a.same_db = ocname == tcluster
    return a


def _consumer_name(a: _Agreement) -> str:
    prefix = "JS_MIRROR_" if a.kind == "mirror" else "JS_SRC_"
    return prefix + go_hash(f"{a.target_cluster}\n{a.target}\n{a.kind}\n{a.iname}")


def _prepare_consumer(a: _Agreement, clock: Clock, start: int) -> None:
    """WorkQueue / Interest origins and "bring your own" consumers: make sure the durable
    consumer exists on the origin (created like the server's 'upgraded' sourcing consumer)."""
    from .config.consumer import ConsumerConfig
    from .jetstream import JetStream

    assert a.ocl is not None
    ojs = JetStream(a.ocl, clock)
    if a.src.consumer is not None:
        name = a.src.consumer.name
        try:
            info = ojs.consumer_info(a.origin, name)
        except ApiError as err:
            a.error = err
            return
        cfg = info.config
        if cfg.ack_policy != "flow_control":
            a.error = ApiError(*_REQUIRES_ACK_FC[a.kind])
            return
        from .config.consumer import filters_of

        a.consumer, a.consumer_auto = name, False
        a.consumer_filters = filters_of(cfg)
        return
    name = _consumer_name(a)
    try:
        names = ojs.consumer_names(a.origin)
    except ApiError as err:
        a.error = err
        return
    a.consumer, a.consumer_auto = name, True
    if name in names:
        return
    hid = go_hash(name)
    doc: dict[str, Any] = {
        "name": name, "durable_name": name,
        "deliver_subject": ("$JS.M." if a.kind == "mirror" else "$JS.S.") + hid,
        "deliver_policy": "all",
        "ack_policy": "flow_control", "flow_control": True, "idle_heartbeat": SECOND,
        "max_ack_pending": 1000, "sourcing": True,
        "metadata": ({"_nats.mirror.stream": a.target, "_nats.mirror.acc": "$G"}
                     if a.kind == "mirror" else
                     {"_nats.src.stream": a.target, "_nats.src.acc": "$G"}),
    }
    if start > 1:
        doc["deliver_policy"] = "by_start_sequence"
        doc["opt_start_seq"] = start
    if len(a.filters) == 1:
        doc["filter_subject"] = a.filters[0]
    elif a.filters:
        doc["filter_subjects"] = list(a.filters)
    try:
        ojs.add_consumer(a.origin, ConsumerConfig.from_json(doc, strict=False))
    except ApiError as err:
        a.error = _setup_error(a.kind, err.description)
        a.consumer = ""


def _settle(a: _Agreement, clock: Clock, upto: int) -> None:
    """Acknowledge origin messages up to ``upto`` on the agreement's durable consumer (after
    the target committed them): WorkQueue / Interest retention removes them."""
    from .config.consumer import filters_of
    from .consumer_store import SqlConsumerStore
    from .consumers import _Session, ack_msg, deliver
    from .jetstream import JetStream

    if not a.consumer or a.ocl is None or upto <= 0:
        return
    with JetStream(a.ocl, clock).write() as txn:
        if a.origin not in txn.catalog.by_name:
            return
        s = _Session(SqlConsumerStore(txn), a.origin, txn.now)
        rec = s.recs.get(a.consumer)
        if rec is None:
            return
        st, cfg, view = rec.state, rec.config, s.view
        flt = filters_of(cfg)
        left = 0  # messages still to deliver up to ``upto``
        if st.sseq <= upto:
            left = view.count(st.sseq, flt) - view.count(upto + 1, flt)
        while st.asflr < upto:
            top = 0
            if left > 0:
                ds, _auto = deliver(st, cfg, view, txn.now, min(left, 1000))
                left -= sum(1 for x in ds if x.num_delivered == 1)
                top = max((x.msg.seq for x in ds if x.msg.seq <= upto), default=0)
            if not top:
                top = max((q for q in st.pending if q <= upto), default=0)
            if not top:
                if st.sseq <= upto and not st.pending:
                    st.sseq = upto + 1  # nothing matching up to there: move past it
                    st.adflr, st.asflr = st.dseq - 1, upto
                    st.sync_store()
                break
            s.acked(ack_msg(st, cfg, top, txn.now))
        s.save()


def _drop_consumer(dd: DataDir, clock: Clock, ocluster: str, origin: str, name: str) -> None:
    """Delete an 'upgraded' consumer whose agreement went away (best effort)."""
    from .jetstream import JetStream

    try:
        if not dd.has_cluster(ocluster):
            return
        ocl = dd.open(ocluster)
        if ocl.down:
            return
        JetStream(ocl, clock).delete_consumer(origin, name)
    except (JetlinkError, sqlite3.Error):
        pass


# --------------------------------------------------------------------------------------------
# The pump
# --------------------------------------------------------------------------------------------
def _targets(cl: Cluster, only: set[str] | None = None) -> list[str]:
    """The streams of ``cl`` that mirror or source (of ``only``: those among them), by id."""
    with cl.read() as conn:
        catalog = S.Catalog.load(conn, cl.cache)
        defs = catalog.by_id.values() if only is None else \
            [catalog.by_name[n] for n in only if n in catalog.by_name]
        return [d.name for d in sorted(defs, key=lambda d: d.id)
                if d.cfg.mirror is not None or d.cfg.sources]


def agreements_of(cfg: StreamConfig) -> list[tuple[str, StreamSource]]:
    """A stream's agreements as ``(kind, StreamSource)``: its mirror, or its sources."""
    if cfg.mirror is not None:
        return [("mirror", cfg.mirror)]
    return [("source", s) for s in cfg.sources]


def _cleanup(dd: DataDir, clock: Clock, cl: Cluster, names: Iterable[str] | None = None
             ) -> None:
    """Forget agreements of deleted / reconfigured streams; drop their 'upgraded' consumers.
    ``names``: only the agreements of these streams as they are now (a pump of those alone:
    a stream made again under its id must not take the old one's cursor)."""
    if not _has_table(cl.conn):
        return
    sql = ("SELECT target_id, kind, iname, target_created, origin_cluster, origin, consumer, "
           "consumer_auto FROM repl_agreements")
    with cl.read() as conn:
        catalog = S.Catalog.load(conn, cl.cache)
        if names is None:
            rows = conn.execute(sql).fetchall()
        else:
            ids = [catalog.by_name[n].id for n in names if n in catalog.by_name]
            rows = conn.execute(f"{sql} WHERE target_id IN ({', '.join('?' * len(ids))})",
                                ids).fetchall() if ids else []
    stale = []
    for tid, kind, iname, created, ocl, origin, consumer, auto in rows:
        d = catalog.by_id.get(tid)
        keep = d is not None and d.created_ns == created and any(
            k == kind and iname_of(s) == iname for k, s in agreements_of(d.cfg))
        if not keep:
            stale.append((tid, kind, iname, ocl, origin, consumer if auto else ""))
    if not stale:
        return
    with cl.transaction() as conn:
        conn.executemany("DELETE FROM repl_agreements WHERE target_id = ? AND kind = ? "
                         "AND iname = ?", [r[:3] for r in stale])
    for _tid, _kind, _iname, ocl, origin, consumer in stale:
        if consumer:
            _drop_consumer(dd, clock, ocl, origin, consumer)


def pump(datadir: DataDir, clock: Clock, *, clusters: Iterable[str] | None = None,
         max_msgs: int | None = None, bulk: bool = True, batch: int | None = None,
         on_moved: Callable[[int], None] | None = None,
         broken: list[tuple[str, JetlinkError]] | None = None,
         streams: Iterable[str] | None = None,
         committed: list[AgreementReport] | None = None) -> list[AgreementReport]:
    """One step over every agreement whose target lives in ``clusters`` (all when None) and
    in a cluster that is not down: copies what is pending (at most ``max_msgs`` messages per
    agreement when given), in transactions of at most ``batch`` messages per agreement, each
    holding the copied messages and the cursors. ``bulk=False`` forces the per-message path
    (tests compare both). ``on_moved(n)``: after each transaction that moved ``n`` > 0
    messages (copied or skipped as duplicates; a progress bar). Returns one report per
    agreement. A cluster whose database cannot be used (store/health.py) stops only what
    involves it: the others are served, then its error is raised, or, given a ``broken``
    list, appended there as (name, error). ``streams``: only the agreements of these target
    streams (a caller waiting for one stream: core/dr/embedded.py ``settle``).
    ``committed``: kept as what the transactions committed so far, one report per
    agreement, copied and skipped counting only committed messages (a step interrupted
    part-way: what its targets kept, each target being its own transactions)."""
    wanted = None if clusters is None else set(clusters)
    only = None if streams is None else set(streams)
    reports: list[AgreementReport] = []
    found: list[tuple[str, JetlinkError]] = []
    for info in datadir.clusters(create_local=False, broken=found):
        if info.kind != "nats" or info.down:
            continue
        if wanted is not None and info.name not in wanted:
            continue
        cl = datadir.open(info.name)
        # The cluster's due work (expiry, message schedules) on every step: --follow is
        # the clock-driven loop of the embedded engine (core/streamstore/schedules.py).
        from .jetstream import JetStream

        with contextlib.suppress(JetlinkError, sqlite3.Error):
            JetStream(cl, clock)._expire_if_due()
        names = _targets(cl, only)
        if names:
            cl.ensure_schema(COMPONENT, SCHEMA_STEPS)
        _cleanup(datadir, clock, cl, None if only is None else names)
        for name in names:
            reports += _pump_target(datadir, clock, cl, name, max_msgs, bulk, batch,
                                    on_moved, committed)
    found = [(n, e) for n, e in found if wanted is None or n in wanted]
    if broken is not None:
        broken += [(n, e) for n, e in found if n not in {b[0] for b in broken}]
    elif found:
        raise found[0][1]  # every other cluster was served first
    return reports


def down_reports(datadir: DataDir, clock: Clock) -> list[AgreementReport]:
    """One report per agreement whose target lives in a cluster marked down, which
    :func:`pump` leaves out (a partitioned cluster: nothing is copied into it): its error
    says so, its lag is what the target last reported. A run that replicated nothing into
    it must not read as one with nothing to replicate."""
    from .jetstream import JetStream

    out: list[AgreementReport] = []
    unusable: list[tuple[str, JetlinkError]] = []  # (pump's broken list says those)
    for info in datadir.clusters(create_local=False, broken=unusable):
        if info.kind != "nats" or not info.down:
            continue
        try:
            cl = datadir.open(info.name, create_local=False)
            names = _targets(cl)
            js = JetStream(cl, clock)
            for name in names:
                si = js.stream_info(name)
                lags = [int((si.mirror or {}).get("lag") or 0)] if si.mirror else \
                    [int(d.get("lag") or 0) for d in si.sources or []]
                for (kind, src), lag in zip(agreements_of(si.config), lags, strict=False):
                    out.append(AgreementReport(
                        info.name, name, origin_cluster(src, info.name)[0], src.name, kind,
                        lag=lag, error=f"cluster {info.name} is down: nothing is copied into "
                                       f"it (jetlink cluster up {info.name} once it answers)"))
        except (JetlinkError, sqlite3.Error):
            continue  # a cluster that cannot be read: pump's broken list says so
    return out


def pump_until_idle(datadir: DataDir, clock: Clock, *, clusters: Iterable[str] | None = None,
                    bulk: bool = True, batch: int | None = None,
                    max_rounds: int = MAX_ROUNDS,
                    on_moved: Callable[[int], None] | None = None,
                    broken: list[tuple[str, JetlinkError]] | None = None,
                    streams: Iterable[str] | None = None) -> list[AgreementReport]:
    """:func:`pump` until a step moves nothing (chains of mirrors and sources settle too).
    Returns the last step's reports with the totals copied / skipped over all steps.
    ``on_moved``, ``broken``: as :func:`pump` (the ``n`` add up to the copied and skipped
    totals; without ``broken``, a cluster that cannot be used raises after the others
    settled)."""
    totals: dict[tuple, list[int]] = {}
    reports: list[AgreementReport] = []
    found: list[tuple[str, JetlinkError]] = [] if broken is None else broken
    for _ in range(max_rounds):
        reports = pump(datadir, clock, clusters=clusters, bulk=bulk, batch=batch,
                       on_moved=on_moved, broken=found, streams=streams)
        moved = False
        for r in reports:
            key = (r.target_cluster, r.target, r.kind, r.origin_cluster, r.origin)
            t = totals.setdefault(key, [0, 0])
            t[0] += r.copied
            t[1] += r.skipped
            moved = moved or r.moved
        if not moved:
            break
    for r in reports:
        total = totals.get((r.target_cluster, r.target, r.kind, r.origin_cluster, r.origin))
        if total:
            r.copied, r.skipped = total
    if broken is None and found:
        raise found[0][1]  # the others settled first
    return reports


def _counted(a: _Agreement) -> int:
    """The messages ``a`` copied or skipped so far (its report counts them)."""
    assert a.report is not None, "_pump_target gives every agreement its report first"
    return a.report.copied + a.report.skipped


def _pump_target(dd: DataDir, clock: Clock, cl: Cluster, name: str, max_msgs: int | None,
                 bulk: bool, batch: int | None,
                 on_moved: Callable[[int], None] | None = None,
                 committed: list[AgreementReport] | None = None) -> list[AgreementReport]:
    """Steps (transactions) for one target stream until it is caught up, or ``max_msgs``
    messages per agreement (``committed``: :func:`pump`'s)."""
    from .jetstream import JetStream

    with cl.read() as conn:
        d = S.Catalog.load(conn, cl.cache).by_name.get(name)
    if d is None:
        return []
    plans = [_plan(dd, cl.name, name, k, s) for k, s in agreements_of(d.cfg)]
    for a in plans:
        a.report = AgreementReport(cl.name, name, a.origin_cluster, a.origin, a.kind)
    # Origins in other clusters: their expiry first (never two write locks at once).
    done: set[str] = set()
    for a in plans:
        if a.ocl is not None and not a.same_db and a.ocl.name not in done:
            done.add(a.ocl.name)
            try:
                JetStream(a.ocl, clock)._expire_if_due()
            except (JetlinkError, sqlite3.Error):
                pass
    _prepare(clock, cl, d, plans)
    js = JetStream(cl, clock)
    budget: dict[int, int | None] = {id(a): max_msgs for a in plans}
    kept: list[AgreementReport] = []
    if committed is not None:  # what each transaction committed, updated as it does
        kept = [dataclasses.replace(a.report) for a in plans if a.report is not None]
        committed += kept
    # A catch-up is a run of large transactions: the log of each is checkpointed on another
    # thread while the next one is built (store/datadir.py ``checkpoints_aside``).
    with cl.checkpoints_aside() as checkpoints:
        while True:
            if all(v is not None and v <= 0 for v in budget.values()):
                break
            before = {id(a): _counted(a) for a in plans}

            def record() -> None:  # what the transaction committed, into ``committed``
                for k, a in zip(kept, plans, strict=False):
                    r = a.report
                    assert r is not None, "every agreement was given its report above"
                    k.copied, k.skipped, k.seq = r.copied, r.skipped, r.seq

            moved = _step(js, name, plans, budget, bulk, batch, on_commit=record)
            record()
            step_moved = 0
            for a in plans:
                n = _counted(a) - before[id(a)]
                step_moved += n
                left = budget[id(a)]
                if left is not None:
                    budget[id(a)] = left - n
                if a.consumer and a.row is not None and a.error is None:
                    try:
                        _settle(a, clock, a.row[_R_CURSOR])
                    except (JetlinkError, sqlite3.Error):
                        pass
            if step_moved >= CHECKPOINT_AFTER:
                checkpoints.request()
            if on_moved is not None and step_moved > 0:
                on_moved(step_moved)
            if not moved or not any(a.truncated for a in plans):
                break
            if len(plans) > 1 and any(
                    a.truncated and (left := budget[id(a)]) is not None and left <= 0
                    for a in plans):
                # an origin with messages pending and no budget left holds the merge (origin
                # time, origin, sequence) at its place: the others' later messages wait for
                # the next step, or a source copied ahead of it would be stored out of order
                break
    return [a.report for a in plans]  # type: ignore[misc]


def _prepare(clock: Clock, cl: Cluster, d: S.StreamDef, plans: list[_Agreement]) -> None:
    """Before the step: origins that need a durable consumer get it (a write on the origin's
    database, so never inside the target's transaction)."""
    for a in plans:
        if a.ocl is None:
            continue
        with a.ocl.read() as oconn:
            od = S.Catalog.load(oconn, a.ocl.cache).by_name.get(a.origin)
            if od is None:
                continue
            if not C.reads_through_durable(a.src, od.retention):
                continue
            start = 0
            if a.src.consumer is None:
                view = _OriginView(oconn, od)
                with cl.read() as tconn:
                    row = None
                    if _has_table(tconn):
                        row = _load_row(tconn, d, a)
                    if row is not None and row[_R_STARTED]:
                        start = row[_R_CURSOR] + 1
                    else:
                        start = _initial_start(tconn, d, a, view, None)
        _prepare_consumer(a, clock, start)


# Row layout (a list, updated in place): see _ROW_COLS.
_ROW_COLS = ("target_created", "origin_cluster", "origin", "origin_ident", "started", "cursor",
             "seq", "lag", "last_seen", "error", "consumer", "consumer_auto", "failed")
(_R_CREATED, _R_OCL, _R_ORIGIN, _R_IDENT, _R_STARTED, _R_CURSOR, _R_SEQ, _R_LAG, _R_SEEN,
 _R_ERROR, _R_CONSUMER, _R_AUTO, _R_FAILED) = range(len(_ROW_COLS))


def _load_row(conn: sqlite3.Connection, d: S.StreamDef, a: _Agreement) -> list[Any] | None:
    row = conn.execute(
        f"SELECT {', '.join(_ROW_COLS)} FROM repl_agreements WHERE target_id = ? AND kind = ? "
        "AND iname = ?", (d.id, a.kind, a.iname)).fetchone()
    if row is None or row[_R_CREATED] != d.created_ns:
        return None
    return list(row)


def _new_row(d: S.StreamDef, a: _Agreement) -> list[Any]:
    return [d.created_ns, a.origin_cluster, a.origin, "", 0, 0, 0, 0, 0, None, a.consumer,
            int(a.consumer_auto), 0]


def _save_row(conn: sqlite3.Connection, d: S.StreamDef, a: _Agreement) -> None:
    if a.row is None or a.row == a.saved:
        return
    conn.execute(
        f"INSERT OR REPLACE INTO repl_agreements(target_id, kind, iname, {', '.join(_ROW_COLS)})"
        f" VALUES (?, ?, ?, {', '.join('?' * len(_ROW_COLS))})",
        (d.id, a.kind, a.iname, *a.row))


class _StreamRow:
    """A stream's counters as stored (``first_seq, last_seq, last_ts, msgs``)."""

    def __init__(self, conn: sqlite3.Connection, d: S.StreamDef) -> None:
        self.first_seq, self.last_seq, self.last_ts, self.msgs = conn.execute(
            "SELECT first_seq, last_seq, last_ts, msgs FROM streams WHERE id = ?",
            (d.id,)).fetchone()


def _target_fresh(st: Any) -> bool:
    return st.msgs == 0 and st.first_seq == 0 and st.last_seq == 0


def _scan_source_headers(conn: sqlite3.Connection, d: S.StreamDef, iname: str) -> int:
    """The origin sequence in the newest Nats-Stream-Source header of ``iname`` stored in the
    target (the server's ``startingSequenceForSources``), 0 when none."""
    base, top = S.key_range(d.id)
    for _key, hdr in conn.execute(
        f"SELECT id, {S.hdr_sql()} FROM msgs WHERE id BETWEEN ? AND ? AND hdr IS NOT NULL "
        "ORDER BY id DESC", (base, top)
    ):
        if b"Nats-Stream-Source" not in hdr:
            continue
        got = C.parse_source_value(H.header_value(hdr, SS) or "")
        if got is not None and got[0] == iname:
            try:
                return int(got[1])
            except ValueError:
                return 0
    return 0


def _initial_start(conn: sqlite3.Connection, d: S.StreamDef, a: _Agreement,
                   view: _OriginView, st: Any, recreated: bool = False) -> int:
    """The first origin sequence a new agreement reads (the server's consumer setup rules:
    ``setupMirrorConsumer``, ``trySetupSourceConsumer``)."""
    src = a.src
    filters = a.consumer_filters if a.consumer_filters is not None else a.filters
    if st is None:
        st = _StreamRow(conn, d)
    if a.kind == "mirror":
        # The start options apply only while the mirror has never held anything.
        if not _target_fresh(st):
            return st.last_seq + 1
        if src.opt_start_seq > 0:
            return _start_seq(view, filters, seq=src.opt_start_seq)
        if src.opt_start_time:
            return _start_seq(view, filters, time_ns=parse_rfc3339_nano(src.opt_start_time))
        return _start_seq(view, filters)
    found = 0 if recreated else _scan_source_headers(conn, d, a.iname)
    if found:
        a.resumed_at = found
        return found + 1
    if src.opt_start_seq > 0:
        return _start_seq(view, filters, seq=src.opt_start_seq)
    if src.opt_start_time:
        t = parse_rfc3339_nano(src.opt_start_time)
        if st.last_ts and t < st.last_ts:
            t = st.last_ts
        return _start_seq(view, filters, time_ns=t)
    if st.first_seq > 1 and st.last_ts and not recreated:
        return _start_seq(view, filters, time_ns=st.last_ts)
    return _start_seq(view, filters)


def _limits(plans: list[_Agreement], budget: dict[int, int | None], step: int
            ) -> dict[int, int]:
    """Messages each agreement may copy in this transaction (``step`` at most, within what
    is left of its budget); marks the agreements whose budget this step exhausts."""
    out = {}
    for a in plans:
        left = budget[id(a)]
        out[id(a)] = a.limit = step if left is None else max(min(step, left), 0)
        a.final = left is not None and left <= step
    return out


def _step(js: Any, name: str, plans: list[_Agreement], budget: dict[int, int | None],
          bulk: bool, batch: int | None,
          on_commit: Callable[[], None] | None = None) -> bool:
    """ONE transaction of the target: read what is pending at each origin, store it, move the
    cursors. Returns whether anything moved. ``on_commit``: called right after the
    COMMIT (either path's), with an interrupt held until it has run (a Ctrl-C landing just
    after the COMMIT would otherwise leave a committed transaction uncounted)."""
    tconn = js.cluster.conn
    sql_a = None
    if bulk and len(plans) == 1 and _worth_sql(tconn, name, plans[0]):
        # The origin's database attached under its own name, even when it is the target's
        # (an INSERT reading the table it writes would first copy the rows to a temp table).
        try:
            if any(r[1] == "repl_o" for r in tconn.execute("PRAGMA database_list")):
                tconn.execute("DETACH DATABASE repl_o")  # left over by an interrupted step
            ocl = plans[0].ocl
            assert ocl is not None, "_worth_sql: the origin's cluster is reachable"
            tconn.execute("ATTACH DATABASE ? AS repl_o", (str(ocl.path),))
            sql_a = plans[0]
        except sqlite3.Error:
            sql_a = None
    gc_on = gc.isenabled()
    gc.disable()
    try:
        if sql_a is None:
            return _transaction(js, name, plans, budget, batch, None, on_commit)
        # BEGIN IMMEDIATE would take the write lock of every attached database too: take
        # the target's alone (a write statement that changes nothing), then join it.
        js.cluster.check_writable()
        tconn.execute("BEGIN")
        try:
            tconn.execute("DELETE FROM main.meta WHERE 0")
            moved = _transaction(js, name, plans, budget, batch, sql_a)
            js.cluster.commit(on_commit)  # (an interrupt raised once it is counted)
            return moved
        except BaseException as exc:
            if tconn.in_transaction:
                tconn.execute("ROLLBACK")
            converted = js.cluster.storage_error(exc)
            if converted is not None:
                raise converted from exc
            raise
    finally:
        if gc_on:
            gc.enable()
        if sql_a is not None:
            try:
                tconn.execute("DETACH DATABASE repl_o")
            except sqlite3.Error:
                pass


def _worth_sql(tconn: sqlite3.Connection, name: str, a: _Agreement) -> bool:
    """Whether the SQL path may have something to copy (cheap reads, no transaction)."""
    if a.ocl is None or a.error is not None or a.consumer:
        return False
    try:
        o = a.ocl.conn.execute("SELECT last_seq FROM streams WHERE name = ?",
                               (a.origin,)).fetchone()
        t = tconn.execute("SELECT id, last_seq, created_ns FROM streams WHERE name = ?",
                          (name,)).fetchone()
        if o is None or t is None:
            return False
        if a.kind == "mirror":
            return o[0] > t[1]
        cursor = 0
        if _has_table(tconn):
            r = tconn.execute("SELECT cursor, target_created FROM repl_agreements WHERE "
                              "target_id = ? AND kind = ? AND iname = ?",
                              (t[0], a.kind, a.iname)).fetchone()
            if r is not None and r[1] == t[2]:
                cursor = r[0]
        return o[0] > cursor
    except sqlite3.Error:
        return False


def _transaction(js: Any, name: str, plans: list[_Agreement], budget: dict[int, int | None],
                 batch: int | None, sql_a: _Agreement | None,
                 on_commit: Callable[[], None] | None = None) -> bool:
    with js.write(on_commit=on_commit) as txn:
        d = txn.catalog.by_name.get(name)
        if d is None or [(k, iname_of(s)) for k, s in agreements_of(d.cfg)] != [
                (a.kind, a.iname) for a in plans]:
            return False  # deleted or reconfigured since the plans were made: next pump
        try:
            for a in plans:
                _open(txn, d, a)
            moved = None
            if sql_a is not None and sql_a.read and sql_a.error is None:
                # Same database: the attached name shows the last commit, so it serves only
                # when this transaction has not changed the origin (expiry).
                o = "repl_o"
                if sql_a.same_db and sql_a.od is not None and sql_a.od.id in txn.streams:
                    o = "main"
                limits = _limits(plans, budget, batch or SQL_BATCH)
                moved = _sql_copy(txn, d, sql_a, limits[id(sql_a)], o)
            if moved is None:
                moved = _apply(txn, d, plans, _limits(plans, budget, batch or BATCH))
        finally:
            _close_origins(plans)
        for a in plans:
            _finish(a, txn.now)
            _save_row(txn.conn, d, a)
        return moved


def _open(txn: Any, d: S.StreamDef, a: _Agreement) -> None:
    """Inside the target's transaction: load (or create, or reset) the agreement's row, find
    the origin stream and open a read snapshot of its database."""
    a.msgs, a.truncated, a.stalled, a.last_attempt, a.read = [], False, None, 0, False
    a.got = False
    a.oconn, a.od, a.oview = None, None, None
    a.rules = C.copy_rules(a.kind, a.src, d, transforms=a.transforms)  # type: ignore[arg-type]
    a.row = _load_row(txn.conn, d, a)
    a.saved = list(a.row) if a.row is not None else None
    if a.error is not None or a.ocl is None:
        if a.row is None:
            a.row = _new_row(d, a)
        return
    if a.same_db:
        oconn = txn.conn
        od = txn.catalog.by_name.get(a.origin)
        ost = txn.streams.get(od.id) if od is not None else None
        if ost is not None:
            ost.flush()  # changed in this transaction (expiry): reads see it
    else:
        oconn = a.ocl.conn
        if not oconn.in_transaction:
            oconn.execute("BEGIN")
        a.oconn = oconn
        od = S.Catalog.load(oconn, a.ocl.cache).by_name.get(a.origin)
    if od is None:
        a.error = nats_error("StreamNotFound")
        if a.row is None:
            a.row = _new_row(d, a)
        return
    refused = C.origin_read_refusal(od.cfg, a.src)
    if refused is not None:  # the server's consumer on the origin can not be made
        a.error = refused
        if a.row is None:
            a.row = _new_row(d, a)
        return
    a.oconn, a.od = oconn, od
    view = a.oview = _OriginView(oconn, od)
    ident = identity(view.created)
    st = txn.stream(d)
    row = a.row
    a.tailing = row is not None and row[_R_ERROR] is None and row[_R_LAG] == 0
    recreated = False
    if row is not None and a.kind == "source" and row[_R_STARTED] and row[_R_IDENT] \
            and row[_R_IDENT] != ident:
        recreated = True  # the origin was deleted and created again: start over
    if row is None:
        row = a.row = _new_row(d, a)
    if a.kind == "mirror" and _target_fresh(st):
        row[_R_STARTED] = 0  # a mirror that never held anything applies its start options
        row[_R_FAILED] = 0
    if not row[_R_STARTED] or recreated:
        start = _initial_start(txn.conn, d, a, view, st, recreated)
        if a.consumer:
            start = max(start, _consumer_floor(view, a) + 1)
        if a.kind == "mirror" and start - 1 > st.last_seq:
            st.skip_to(start - 1)  # the mirror starts after the origin's start position
        row[_R_STARTED] = 1
        row[_R_CURSOR] = start - 1
        if recreated:
            row[_R_SEQ] = 0
        elif a.kind == "source" and a.resumed_at:
            # nats-server's startingSequenceForSources: the source info's sequence is where
            # it resumes after (the last one its headers say was stored)
            row[_R_SEQ] = a.resumed_at
    row[_R_IDENT] = ident
    row[_R_CONSUMER], row[_R_AUTO] = a.consumer, int(a.consumer_auto)
    if a.kind == "mirror":
        # a mirror resumes after its last sequence and the messages its limits dropped
        row[_R_CURSOR] = st.last_seq + row[_R_FAILED]
    a.since = int(row[_R_CREATED] or 0)
    row[_R_ERROR] = None
    a.read = True


def _consumer_floor(view: _OriginView, a: _Agreement) -> int:
    """The ack floor (stream sequence) of the agreement's durable consumer."""
    from .consumers import ConsumerState

    row = view.conn.execute(
        "SELECT state FROM consumers WHERE stream_id = ? AND name = ?",
        (view.sid, a.consumer)).fetchone()
    if row is None:
        return 0
    return ConsumerState.loads(row[0]).asflr


def _close_origins(plans: list[_Agreement]) -> None:
    for a in plans:
        if not a.same_db and a.oconn is not None and a.oconn.in_transaction:
            a.oconn.execute("COMMIT")


def _apply(txn: Any, d: S.StreamDef, plans: list[_Agreement], limits: dict[int, int]) -> bool:
    """The per-message path: read, merge (origin time, origin name, origin sequence), store."""
    live = [a for a in plans if a.read and a.error is None]
    for a in live:
        limit = limits[id(a)]
        flt = a.consumer_filters if a.consumer_filters is not None else a.filters
        oconn, od, row = a.oconn, a.od, a.row
        assert oconn is not None and od is not None and row is not None, "_open read it"
        a.msgs = _read(oconn, od.id, row[_R_CURSOR] + 1, flt, limit)
        a.truncated = len(a.msgs) >= limit > 0
        a.got = bool(a.msgs)
    if not any(a.msgs for a in live):
        return False
    st = txn.stream(d)
    if len(live) == 1:
        order: Iterable[tuple] = ((m, live[0]) for m in live[0].msgs)
    else:
        runs = [[(C.merge_key(m[2], a.origin, a.iname, m[0]), m, a) for m in a.msgs]
                for a in live]
        cut = min((r[-1][0] for r, a in zip(runs, live, strict=True) if a.truncated and r),
                  default=None)
        if cut is not None:
            for a in live:
                a.truncated = True
        order = ((m, a) for key, m, a in heapq.merge(*runs, key=lambda x: x[0])
                 if cut is None or key <= cut)
    return _store_all(txn, st, d, order, live)


# Headers the target's publish path acts on: a message carrying one is appended alone.
_LEAN_UNSAFE = tuple(n.encode() for n in (H.MSG_ID, H.MSG_TTL, H.ROLLUP, H.INCR))


def _store_all(txn: Any, st: Any, d: S.StreamDef, order: Iterable[tuple],
               live: list[_Agreement]) -> bool:
    _prefetch_msg_ids(st, live)
    if live[0].kind == "mirror":  # agreements_of: a mirror is its target's one agreement
        moved = _store_mirrored(txn, st, order, live[0])
    else:
        moved = _store_sourced(st, order, live)
    st.flush()
    return moved


def _prefetch_msg_ids(st: Any, live: list[_Agreement]) -> None:
    """Load the target's duplicate-window entries of the Nats-Msg-Ids the messages carry, for
    the agreements whose copies are deduplicated, in one read."""
    ids = []
    for a in live:
        if a.rules.dedupe:  # type: ignore[union-attr]
            for m in a.msgs:
                if m[3] and b"Nats-Msg-Id" in m[3]:
                    mid = C.dedupe_id(m[3])
                    if mid:
                        ids.append(mid)
    if ids:
        st.prefetch_msg_ids(ids)


def _store_mirrored(txn: Any, st: Any, order: Iterable[tuple], mirror: _Agreement) -> bool:
    """The per-message path of a mirror: each message at its origin sequence and time, the
    origin's gaps skipped; a run of lean ones stored at once (``_flush_run``)."""
    moved = False
    lean = st.sourced_fast
    run: list[tuple] = []  # (subject, hdr, data, agreement, origin seq, origin time)
    rules, row = mirror.rules, mirror.row
    assert rules is not None and row is not None
    targets: dict[str, str] = {}  # origin subject -> target subject
    for m, a in order:
        if a.stalled is not None:
            continue
        seq, subject, ts, hdr, data = m
        a.last_attempt = seq
        tsubj = targets.get(subject)
        if tsubj is None:
            tsubj = targets[subject] = rules.target_subject(subject)
        if seq <= (run[-1][4] if run else st.last_seq + row[_R_FAILED]):
            continue
        hdr = C.strip_lines(hdr, rules.strip_bytes)
        if lean and (hdr is None or not any(k in hdr for k in _LEAN_UNSAFE)):
            run.append((tsubj, hdr, data, a, seq, ts))
            continue
        if run:
            moved = _flush_run(st, run) or moved
            run = []
            if a.stalled is not None:
                continue
        st.skip_to(seq - row[_R_FAILED] - 1)  # origin gaps (deleted, expired, filtered out)
        saved = txn.now
        txn.now = ts  # stored at the origin's timestamp
        try:
            r = st.append(tsubj, hdr, data, sourced=True)
        finally:
            txn.now = saved
        if isinstance(r, ApiError):
            if S.is_limit_refusal(r):
                _drop(a, seq)
                moved = True  # consumed: the cursor moved
                continue
            a.stalled = r
            row[_R_CURSOR] = st.last_seq + row[_R_FAILED]
            continue
        a.report.copied += 1
        row[_R_CURSOR] = seq
        moved = True
    if run:
        moved = _flush_run(st, run) or moved
    return moved


def _store_sourced(st: Any, order: Iterable[tuple], live: list[_Agreement]) -> bool:
    """The per-message path of sources: each message appended with its Nats-Stream-Source
    header (replacing one already there) last; a run of lean ones stored at once."""
    moved = False
    lean = st.sourced_fast
    run: list[tuple] = []  # (subject, hdr, data, agreement, origin seq) for append_sourced
    # per agreement: the source header's start (bytes, then its value's), the value's middle
    # and end, target subject -> (subject, value tail, header tail), the copy rules
    consts: dict[int, tuple[bytes, str, str, str, dict[str, tuple[str, str, bytes]],
                            C.CopyRules]] = {}
    for a in live:
        rules = a.rules
        assert rules is not None
        head, mid, tail = rules.source_value_parts(a.row[_R_IDENT])  # type: ignore[index]
        consts[id(a)] = ((C.SOURCE_BLOCK + head).encode(), head, mid, tail, {}, rules)
    for m, a in order:
        if a.stalled is not None:
            continue
        seq, subject, ts, hdr, data = m
        row = a.row
        a.last_attempt = seq
        ss_head, ss_name, ss_mid, ss_ident, cache, rules = consts[id(a)]
        hit = cache.get(subject)
        if hit is None:
            tsubj = rules.target_subject(subject)
            tail = f"{ss_mid}{subject}{ss_ident}"
            hit = cache[subject] = (tsubj, tail, (tail + "\r\n\r\n").encode())
        tsubj = hit[0]
        if hdr is None:
            if lean:
                run.append((tsubj, ss_head + str(seq).encode() + hit[2], data, a, seq))
                continue
            value = f"{ss_name}{seq}{hit[1]}"
            hdr = ss_head + str(seq).encode() + hit[2]
            fv = {SS: value}
        else:
            value = f"{ss_name}{seq}{hit[1]}"
            hdr = C.source_header(hdr, value)
            if lean and not any(k in hdr for k in _LEAN_UNSAFE):
                run.append((tsubj, hdr, data, a, seq))
                continue
            fv = H.first_values(hdr)
        if run:
            moved = _flush_run(st, run) or moved
            run = []
            if a.stalled is not None:
                continue
        r = st.append(tsubj, hdr, data, sourced=True, fv=fv)
        if isinstance(r, ApiError):
            a.stalled = r
            continue
        row[_R_CURSOR] = seq
        if r.duplicate or isinstance(r, UnstoredAck):
            # skipped (a duplicate, or nobody interested in an interest-retention target):
            # the source's reported seq stays the last origin sequence stored (nats-server
            # 2.15.1's StreamSourceInfo)
            a.report.skipped += 1
        else:
            a.report.copied += 1
            row[_R_SEQ] = seq
        moved = True
    if run:
        moved = _flush_run(st, run) or moved
    return moved


def _flush_run(st: Any, run: list[tuple]) -> bool:
    """Store a run of lean messages ``(subject, hdr, data, agreement, origin seq[, origin
    time])`` (mirrors give the time); an agreement refused at one message stalls and its
    later messages in the run are left for a later step. A mirror's message refused by its
    DiscardNew limits is dropped (``_drop``) when it is the newest it can read, and the rest
    of the run goes on one by one (a full mirror refuses each); one with more after it
    stalls the mirror there (``_in_a_burst``)."""
    moved = False
    i, one = 0, False
    while i < len(run):
        part = run[i:i + 1] if one else run[i:]
        mirrored = len(part[0]) == 6
        at = None
        if mirrored:  # (a mirror is its target's one agreement: one offset for the run)
            off = part[0][3].row[_R_FAILED]
            at = [(x[4] - off, x[5]) for x in part] if off else [(x[4], x[5]) for x in part]
        n, err = st.append_sourced([(x[0], x[1], x[2]) for x in part], at)
        counts: dict[int, tuple[Any, int, int]] = {}
        for x in part[:n]:
            a = x[3]
            c = counts.get(id(a))
            counts[id(a)] = (a, (c[1] if c else 0) + 1, x[4])
        for a, k, last in counts.values():
            a.report.copied += k
            a.row[_R_CURSOR] = last
            if a.kind == "source":
                a.row[_R_SEQ] = last
            moved = True
        i += n
        if err is None:
            if one:
                continue
            break
        bad = part[n][3]
        if mirrored and S.is_limit_refusal(err) and not _in_a_burst(bad, part[n][4],
                                                                     part[n][5], run[i + 1:]):
            _drop(bad, part[n][4])
            i, one, moved = i + 1, True, True
            continue
        bad.stalled = err
        bad.last_attempt = part[n][4]
        if bad.kind == "mirror":
            bad.row[_R_CURSOR] = st.last_seq + bad.row[_R_FAILED]
        run, i, one = [x for x in run[i + 1:] if x[3] is not bad], 0, False
    return moved


def _in_a_burst(a: _Agreement, seq: int, ts: int, rest: list[tuple]) -> bool:
    """Whether mirror ``a``'s message ``seq`` (stored at the origin at ``ts``), refused by
    its DiscardNew limit, reached it inside a burst. nats-server's mirror consumer delivers
    what the origin holds when the consumer starts (a new mirror on an origin with history,
    a mirror back after an outage or a stall) as one burst: a refusal there makes
    processMirrorMsgs discard the rest of the burst and retry its consumer (the mirror
    stores nothing more, nothing is dropped): the agreement stalls at ``seq``, retried on
    every later step as any other refusal. A mirror that was caught up (``a.tailing``), or a
    message stored after the mirror was made, reaches it on its own, as does the newest
    message: consumed and dropped (processInboundMirrorMsg, ``_drop``)."""
    if a.tailing or ts >= a.since:
        return False
    if any(x[3] is a for x in rest):
        return True
    flt = a.consumer_filters if a.consumer_filters is not None else a.filters
    return _pending_after(a, seq, flt) > 0


def _drop(a: _Agreement, seq: int) -> None:
    """A mirror's message ``seq`` refused by the mirror's own DiscardNew limits: consumed and
    dropped, as nats-server's processInboundMirrorMsg (its consumer has moved past it; the
    stream's clfs counts it, so the next message stored takes the mirror's next sequence)."""
    row = a.row
    assert row is not None
    row[_R_FAILED] += 1
    row[_R_CURSOR] = seq
    a.last_attempt = seq


def _finish(a: _Agreement, now: int) -> None:
    """The agreement's row and report after the step. Lag is what the server reports: the
    pending count after the last message tried, minus one (``pending - 1``)."""
    row, rep = a.row, a.report
    assert row is not None and rep is not None
    if a.error is not None:
        row[_R_ERROR] = _error_doc(a.error)
        rep.error = a.error.description
    elif a.read:
        if a.got or now - row[_R_SEEN] >= HEARTBEAT_NS:
            row[_R_SEEN] = now  # last contact (messages, or the server's heartbeat)
        if a.stalled is not None:
            rep.error, rep.stalled = a.stalled.description, True
            if STALL_ERROR_IN_INFO and a.kind == "mirror":  # a source just retries later
                row[_R_ERROR] = _error_doc(a.stalled)
        if a.stalled is not None or (a.truncated and a.final):
            flt = a.consumer_filters if a.consumer_filters is not None else a.filters
            after = a.last_attempt or row[_R_CURSOR]
            row[_R_LAG] = max(_pending_after(a, after, flt) - 1, 0)
        elif not a.truncated and a.limit != 0:
            # (an agreement whose budget an earlier step of this pump spent read nothing
            # now: the lag that step counted stands)
            row[_R_LAG] = 0
    rep.lag, rep.seq = row[_R_LAG], row[_R_CURSOR]


def _pending_after(a: _Agreement, seq: int, flt: list[str]) -> int:
    if a.od is None or a.oview is None:
        return 0
    try:
        return _count_from(a.oview.conn, a.od.id, seq + 1, flt)
    except sqlite3.Error:
        return 0


# --------------------------------------------------------------------------------------------
# The SQL path (mirrors, and sources of an origin without gaps)
# --------------------------------------------------------------------------------------------
_SQL_MASK = _MASK


def _sql_ok_target(d: S.StreamDef) -> bool:
    """A target none of whose publish-path rules act on a plain append (no limits, no
    interest, no republish, no counters, no size limit, not sealed)."""
    return (not d.sealed and d.fast and d.republish is None and not d.needs_limits
            and d.max_msg_size < 0)


class _Refused(Exception):
    """Raised inside SQLite by the guard of the SQL path's ``INSERT ... SELECT``."""


def _refuse(_key: int) -> None:
    raise _Refused


def _sql_copy(txn: Any, d: S.StreamDef, a: _Agreement, limit: int, o: str) -> bool | None:
    """The SQL path (:func:`_sql_copy_range`): first unscanned, then, when its guard met a
    message the per-message path must see, once more with the range scanned."""
    out = _sql_copy_range(txn, d, a, limit, o, scan=False)
    if out is _RESCAN:
        out = _sql_copy_range(txn, d, a, limit, o, scan=True)
    assert out is not _RESCAN
    return out  # type: ignore[return-value]


_RESCAN = object()


def _sql_copy_range(txn: Any, d: S.StreamDef, a: _Agreement, limit: int, o: str, *,
                    scan: bool) -> object:
    """The SQL path: copy up to ``limit`` pending origin messages with ``INSERT ... SELECT``
    (the origin database is schema ``o``: ``main``, or ``ATTACH``ed), subject chains and
    counters computed in SQL. None when this step needs the per-message path.

    Mirrors: messages keep their sequences, so the origin's subject chains are the mirror's.
    Sources: only a contiguous origin whose every subject is selected and mapped one-to-one
    (then a chain only shifts by a constant), and messages without headers.

    A message the per-message path must see (mirrors: a header in ``_SQL_UNSAFE``; sources:
    any header) ends the range before it. Such messages are rare, so the range is not
    scanned for them first: a guard in the ``INSERT`` stops the statement when it meets one
    (SQLite undoes the statement alone) and this returns ``_RESCAN``; with ``scan`` the
    range is cut before the first such message.
    """
    r = _sql_range(txn, d, a, limit, o, scan)
    if r is None:
        return None
    _range_subjects(a, r)
    if not _map_subjects(txn, d, a, r) or not _fill_repl_map(d, a, r):
        return None
    r.conn.create_function("jetlink_refuse", 1, _refuse)
    if r.split is not None:
        r.split.start()  # the later parts' stats, read on another thread during the INSERT
    copied = _insert_mirrored(d, a, r) if a.kind == "mirror" else _insert_sourced(txn, d, a, r)
    if not copied:
        if r.split is not None:
            r.split.close()
        return _RESCAN
    _link_subject_chains(d, r)
    _commit_range(txn, d, a, r)
    return True


@dataclass(eq=False)
class _SqlRange:
    """One step of the SQL path (:func:`_sql_copy_range`): the origin's and the target's
    counters, the origin sequences ``lo`` .. ``hi`` it copies, and what it learns of them."""

    conn: sqlite3.Connection
    o: str  # the origin's schema
    scan: bool  # the range was scanned for headers the SQL path can not copy
    oid: int
    ofirst: int
    olast: int
    omsgs: int
    obytes: int
    t_first: int
    t_last: int
    t_ts: int
    t_msgs: int
    t_bytes: int
    lo: int
    hi: int
    base_o: int  # the origin's key base (``S.key_range``)
    unsafe: list[str]  # headers a mirrored message may not carry on this path
    # Per origin subject in the range: (count, first, last), and its name.
    stats: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    snames: dict[int, str] = field(default_factory=dict)
    # The origin's byte count (its own accounting) of exactly the messages this step copies,
    # when known without reading them: the whole origin, or a part of it (``_TailScan``).
    known_obytes: int | None = None
    split: _TailScan | None = None
    every: bool = True  # every origin subject of the range is selected
    tsubj: dict[int, str] = field(default_factory=dict)  # origin subject -> target subject
    tstate: dict[str, list[int]] = field(default_factory=dict)  # target subject -> state
    head: str = ""  # a sourced message's block: its head before the origin sequence
    tails: dict[int, str] = field(default_factory=dict)  # a source's: each subject's tail
    n_total: int = 0
    shift: int = 0  # target seq = origin seq + shift
    tb: int = 0  # the target's key base
    first_c: int = 0  # the target sequences copied, their bytes, the last one's time and id
    last_c: int = 0
    size: int = 0
    new_last_ts: int = 0
    last_msg_id: str = ""


def _unsafe_hdr_sql(kind: str, unsafe: list[str], col: str) -> str:
    """SQL: the header block in ``col`` holds one the SQL path can not copy (sources: any
    header)."""
    if kind != "mirror":
        return "TRUE"
    return "(" + " OR ".join(f"instr({col}, CAST('{u}' AS BLOB)) > 0" for u in unsafe) + ")"


def _sql_range(txn: Any, d: S.StreamDef, a: _Agreement, limit: int, o: str, scan: bool
               ) -> _SqlRange | None:
    """The range this step copies: at most ``limit`` messages (mirrors: sequences), up to a
    header the per-message path must see; None when the SQL path does not serve."""
    if not _sql_ok_target(d) or limit <= 0 or a.od is None:
        return None
    rules = a.rules
    assert rules is not None
    if a.kind == "mirror" and (rules.transforms or rules.stream_transform is not None
                               or a.row[_R_FAILED]):  # type: ignore[index]
        return None  # (a mirror that dropped messages stores at shifted sequences)
    conn = txn.conn
    oid = a.od.id
    ofirst, olast, omsgs, obytes = conn.execute(
        f"SELECT first_seq, last_seq, msgs, bytes FROM {o}.streams WHERE id = ?",
        (oid,)).fetchone()
    st = txn.streams.get(d.id)
    if st is not None:
        st.flush()
    t_first, t_last, t_ts, t_msgs, t_bytes = conn.execute(
        "SELECT first_seq, last_seq, last_ts, msgs, bytes FROM streams WHERE id = ?",
        (d.id,)).fetchone()
    row = a.row
    assert row is not None
    lo = (t_last if a.kind == "mirror" else row[_R_CURSOR]) + 1
    if omsgs == 0 or lo > olast:
        return None  # nothing pending: the per-message path answers that cheaply
    lo = max(lo, ofirst)
    if a.kind == "source" and omsgs != olast - ofirst + 1:
        return None  # gaps in the origin: chains do not shift by a constant
    base_o, top_o = S.key_range(oid)
    hi = olast if olast - lo + 1 <= limit else lo + limit - 1
    contiguous = omsgs == olast - ofirst + 1
    if a.kind == "mirror" and hi < olast and not contiguous:
        r = conn.execute(f"SELECT id FROM {o}.msgs WHERE id >= ? AND id <= ? ORDER BY id "
                         "LIMIT 1 OFFSET ?", (base_o | lo, top_o, limit - 1)).fetchone()
        hi = (r[0] & _MASK) if r else olast
    unsafe = list(_SQL_UNSAFE) + ([H.MSG_ID] if d.dup_window else [])
    if scan:
        r = conn.execute(f"SELECT min(id) FROM {o}.msgs WHERE id BETWEEN ? AND ? AND "
                         f"hdr IS NOT NULL AND {_unsafe_hdr_sql(a.kind, unsafe, 'hdr')}",
                         (base_o | lo, base_o | hi)).fetchone()
        if r[0] is not None:
            hi = (r[0] & _MASK) - 1
            if hi < lo:
                return None
    return _SqlRange(conn, o, scan, oid, ofirst, olast, omsgs, obytes, t_first, t_last, t_ts,
                     t_msgs, t_bytes, lo, hi, base_o, unsafe)


def _range_subjects(a: _Agreement, r: _SqlRange) -> None:
    """The origin subjects of the range with their counts: the origin's own (a whole
    origin, split in parts when large), a part read ahead by the step before, or counted."""
    conn, o = r.conn, r.o
    carried, a.parts = a.parts, None
    if r.lo <= r.ofirst and r.hi >= r.olast:
        for sid, subject, n, f, last in conn.execute(
                f"SELECT id, subject, msgs, first_seq, last_seq FROM {o}.subjects "
                "WHERE stream_id = ?", (r.oid,)):
            r.stats[sid] = (n, f, last)
            r.snames[sid] = subject
        r.known_obytes = r.obytes
        if not r.scan and r.hi - r.lo + 1 >= SPLIT_MIN and a.ocl is not None:
            split = _TailScan(a, r.oid, r.lo, r.hi, r.ofirst, r.omsgs - r.olast, o == "main")
            if len(split.bounds) > 1:
                r.hi = split.bounds[0][1]
                r.split = split
    elif carried is not None and not r.scan and carried.next_is(r.oid, r.lo, r.hi, r.ofirst,
                                                                r.omsgs - r.olast):
        part = carried.parts.pop(0)
        r.hi, r.stats, r.snames, r.known_obytes = (part[1], dict(part[2]), dict(part[3]),
                                                   part[4])
        if carried.parts:
            a.parts = carried
    else:
        _count_subjects(r)


def _count_subjects(r: _SqlRange) -> None:
    """Count the range's messages per origin subject (a temp table), and name them."""
    conn, o = r.conn, r.o
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS repl_stats (sid INTEGER PRIMARY KEY, "
                 "n INTEGER, first INTEGER, last INTEGER)")
    conn.execute("DELETE FROM temp.repl_stats")
    conn.execute(
        f"INSERT INTO temp.repl_stats SELECT subject_id, 1, id, id FROM {o}.msgs "
        "WHERE id BETWEEN ? AND ? ORDER BY id ON CONFLICT(sid) DO UPDATE SET "
        "n = n + 1, last = excluded.last", (r.base_o | r.lo, r.base_o | r.hi))
    for sid, n, f, last in conn.execute("SELECT sid, n, first, last FROM temp.repl_stats"):
        r.stats[sid] = (n, f & _MASK, last & _MASK)
    ids = list(r.stats)
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        r.snames.update(conn.execute(
            f"SELECT id, subject FROM {o}.subjects WHERE id IN "
            f"({','.join('?' * len(chunk))})", chunk).fetchall())


def _map_subjects(txn: Any, d: S.StreamDef, a: _Agreement, r: _SqlRange) -> bool:
    """The subjects this agreement selects, their target subjects and those subjects' states
    (existing, or new ids). False: the SQL path does not serve this range."""
    rules = a.rules
    assert rules is not None
    stats, tsubj = r.stats, r.tsubj
    flt = None if not a.filters or ">" in a.filters else memo(a.filters)
    for sid in list(stats):
        subject = r.snames[sid]
        if flt is not None and not flt.matches(subject):
            if a.kind == "source":
                return False  # a subject left out: chains do not shift by a constant
            del stats[sid]
            r.every = False
            continue
        tsubj[sid] = rules.target_subject(subject)
    if not stats:
        return False
    if a.kind == "source" and len(set(tsubj.values())) != len(tsubj):
        return False  # two origin subjects into one target subject
    names = sorted({tsubj[sid] for sid in stats})
    tstate = r.tstate
    for i in range(0, len(names), 500):
        name_chunk = names[i:i + 500]
        for tid, subject, n, f, last in r.conn.execute(
            f"SELECT id, subject, msgs, first_seq, last_seq FROM subjects WHERE stream_id = ? "
            f"AND subject IN ({','.join('?' * len(name_chunk))})", (d.id, *name_chunk)):
            tstate[subject] = [tid, n, f, last]
    for name in names:
        if name not in tstate:
            tstate[name] = [txn.alloc_subject_id(), 0, 0, 0]
    return True


def _fill_repl_map(d: S.StreamDef, a: _Agreement, r: _SqlRange) -> bool:
    """The copy's map (temp table ``repl_map``): origin subject -> target subject and, for a
    source, the reference of its header text. False: no room for more references."""
    row = a.row
    rules = a.rules
    assert row is not None and rules is not None
    conn, stats = r.conn, r.stats
    r.n_total = sum(v[0] for v in stats.values())
    r.shift = 0 if a.kind == "mirror" else r.t_last - r.lo + 1
    r.tb = d.id << S.SEQ_BITS
    vhead, vmid, vtail = rules.source_value_parts(row[_R_IDENT])
    r.head = C.SOURCE_BLOCK + vhead
    refs: Mapping[int, int | None] = dict.fromkeys(stats)
    if a.kind == "source":
        r.tails = {sid: f"{vmid}{r.snames[sid]}{vtail}\r\n\r\n" for sid in stats}
        found = _src_refs(conn, r.head, r.tails)
        if found is None:
            return False  # no room for more references: the per-message path
        refs = found
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS repl_map (osid INTEGER PRIMARY KEY, "
                 "tsid INTEGER NOT NULL, ref INTEGER)")
    conn.execute("DELETE FROM temp.repl_map")
    conn.executemany("INSERT INTO temp.repl_map(osid, tsid, ref) VALUES (?, ?, ?)",
                     [(sid, r.tstate[r.tsubj[sid]][0], ref) for sid, ref in refs.items()])
    return True


def _insert_mirrored(d: S.StreamDef, a: _Agreement, r: _SqlRange) -> bool:
    """Copy a mirror's range at its own sequences, then measure what it stored. False
    (nothing copied): the guard met a header the per-message path must see, or the first
    part of a split catch-up held no message the mirror's filter selects."""
    conn, o, lo, hi, tb = r.conn, r.o, r.lo, r.hi, r.tb
    base_o = r.base_o
    assert a.od is not None
    # A source header stored by reference (store/schema.py src_hdrs) is copied as one:
    # the same reference in the same database, else the target's for the same text.
    if a.same_db:
        ref = "m.hdr"
    elif _mirror_refs(conn, o, base_o | lo, base_o | hi):
        ref = S.src_ref_sql(f"(SELECT x.tid FROM temp.repl_refs x WHERE x.oid = "
                            f"{S.src_ref_id_sql('m.hdr')})", "m.hdr")
    else:
        ref = S.hdr_sql("m.", o + ".")
    if not _guarded(conn, r.scan,
                    f"INSERT INTO main.msgs(id, subject_id, ts, prev, next, hdr, data) "
                    f"SELECT ? | (m.id & {_SQL_MASK}), r.tsid, m.ts, m.prev, m.next, "
                    f"CASE WHEN m.hdr IS NULL THEN NULL WHEN {S.is_src_ref_sql('m.hdr')} "
                    f"THEN {ref} WHEN {_unsafe_hdr_sql(a.kind, r.unsafe, 'm.hdr')} "
                    "THEN jetlink_refuse(m.id) ELSE m.hdr END, m.data "
                    f"FROM {o}.msgs m JOIN temp.repl_map r ON r.osid = m.subject_id "
                    "WHERE m.id BETWEEN ? AND ?", (tb, base_o | lo, base_o | hi)):
        return False
    _copy_later_links(r, tb, 0, "n.next")
    if r.split is not None:
        r.stats, r.known_obytes = r.split.first_part(conn, o, r.stats, r.snames, r.obytes)
        r.n_total = sum(v[0] for v in r.stats.values())
        if not r.n_total:  # a filter selects none of the first part's messages: nothing
            return False   # was copied; the step counts its range instead (scanned)
    if r.known_obytes is not None and r.every and a.od.file == d.file:
        # Every origin message of the range: the origin's own byte count (same storage).
        r.first_c = conn.execute("SELECT min(id) FROM main.msgs WHERE id BETWEEN ? AND ?",
                                 (tb | lo, tb | hi)).fetchone()[0] & _MASK
        r.last_c = conn.execute("SELECT max(id) FROM main.msgs WHERE id BETWEEN ? AND ?",
                                (tb | lo, tb | hi)).fetchone()[0] & _MASK
        r.size = r.known_obytes
    else:
        first_c, last_c, nb = conn.execute(
            f"SELECT min(id), max(id), total({d.payload_sql}) "
            "FROM main.msgs WHERE id BETWEEN ? AND ?", (tb | lo, tb | hi)).fetchone()
        r.first_c = first_c & _MASK
        r.last_c = last_c & _MASK
        r.size = (d.base_size * r.n_total + int(nb)
                  + sum(r.stats[sid][0] * S._blen(r.tsubj[sid]) for sid in r.stats))
    r.new_last_ts, last_hdr = conn.execute(f"SELECT ts, {S.hdr_sql()} FROM main.msgs "
                                           "WHERE id = ?", (tb | r.last_c,)).fetchone()
    r.last_msg_id = (H.header_value(last_hdr, H.MSG_ID) or "") if last_hdr else ""
    return True


def _insert_sourced(txn: Any, d: S.StreamDef, a: _Agreement, r: _SqlRange) -> bool:
    """Copy a source's range at shifted sequences, stored now, its header by reference to
    its text (store/schema.py src_hdrs); then size what it stored. False: the guard met a
    message with a header (nothing copied)."""
    conn, lo, hi, tb, shift = r.conn, r.lo, r.hi, r.tb, r.shift
    assert a.od is not None
    now = txn.now
    ts = now if now > r.t_ts else r.t_ts
    if not _guarded(conn, r.scan,
                    f"INSERT INTO main.msgs(id, subject_id, ts, prev, next, hdr, data) "
                    f"SELECT ? | ((m.id & {_SQL_MASK}) + ?), r.tsid, ?, "
                    "CASE WHEN m.prev >= ? AND m.prev <= ? THEN m.prev + ? ELSE 0 END, "
                    "CASE WHEN m.next >= ? AND m.next <= ? THEN m.next + ? ELSE 0 END, "
                    "CASE WHEN m.hdr IS NULL THEN "
                    f"{S.src_ref_sql('r.ref', 'm.id')} "
                    "ELSE jetlink_refuse(m.id) END, m.data "
                    f"FROM {r.o}.msgs m JOIN temp.repl_map r ON r.osid = m.subject_id "
                    "WHERE m.id BETWEEN ? AND ?",
                    (tb, shift, ts, lo, hi, shift, lo, hi, shift, r.base_o | lo,
                     r.base_o | hi)):
        return False
    _copy_later_links(r, tb, shift,
                      f"CASE WHEN n.next >= {lo} AND n.next <= {hi} THEN n.next + {shift} "
                      "ELSE 0 END")
    r.first_c, r.last_c = lo + shift, hi + shift
    r.new_last_ts = ts
    r.last_msg_id = ""
    if r.split is not None:
        r.stats, r.known_obytes = r.split.first_part(conn, r.o, r.stats, r.snames, r.obytes)
        r.n_total = sum(v[0] for v in r.stats.values())
    stats, n_total = r.stats, r.n_total
    if r.known_obytes is not None and a.od.file == d.file:
        # No headers in the range: its bytes are the fixed parts, subjects and payloads.
        nb_data = r.known_obytes - a.od.base_size * n_total - sum(
            n * S._blen(r.snames[sid]) for sid, (n, _f, _l) in stats.items())
    else:
        (nb_data,) = conn.execute("SELECT total(length(data)) FROM main.msgs "
                                  "WHERE id BETWEEN ? AND ?", (tb | r.first_c, tb | r.last_c)
                                  ).fetchone()
    # header: head + digits of the origin seq + tail; 4 bytes of header length (file)
    hsize = n_total * (len(r.head.encode()) + d.hdr_extra) + _digits_sum(lo, hi)
    for sid, (n, _f, _l) in stats.items():
        hsize += n * (len(r.tails[sid].encode()) + S._blen(r.tsubj[sid]))
    r.size = d.base_size * n_total + int(nb_data) + hsize
    return True


def _copy_later_links(r: _SqlRange, tb: int, shift: int, value: str) -> None:
    """The origin's ``msg_next`` entries (store/schema.py) of the rows just copied, as the
    target's (``value``: the SQL of an entry's next in the target; ``shift``: target seq -
    origin seq): copied as entries, the stored ``next`` the copy took being overridden as
    in the origin."""
    pick = "" if r.every else (
        f"JOIN {r.o}.msgs m ON m.id = n.id JOIN temp.repl_map r ON r.osid = m.subject_id ")
    r.conn.execute(
        f"INSERT OR REPLACE INTO main.msg_next(id, next) SELECT ? | ((n.id & {_SQL_MASK}) "
        f"+ ?), {value} FROM {r.o}.msg_next n {pick}WHERE n.id BETWEEN ? AND ?",
        (tb, shift, r.base_o | r.lo, r.base_o | r.hi))


def _link_subject_chains(d: S.StreamDef, r: _SqlRange) -> None:
    """Subject chains: link each subject's first copied message to what the target had, and
    store the target subjects' counters."""
    conn, tb, shift = r.conn, r.tb, r.shift
    sub_ins, sub_upd, fix_prev, fix_next = [], [], [], []
    for sid, (n, f, last) in r.stats.items():
        t = r.tstate[r.tsubj[sid]]
        tid, tn, tf, tl = t
        f, last = f + shift, last + shift
        if tn > 0:
            fix_prev.append((tl, tb | f))
            fix_next.append((tb | tl, f))
            sub_upd.append((tn + n, tf, last, tid))
        else:
            sub_ins.append((tid, d.id, r.tsubj[sid], n, f, last))
        t[1], t[2], t[3] = tn + n, (tf if tn else f), last
    if fix_prev:
        conn.executemany("UPDATE msgs SET prev = ? WHERE id = ?", fix_prev)
        conn.executemany(S.SET_NEXT_SQL, fix_next)
    if sub_ins:
        conn.executemany(INSERT_SUBJECTS_SQL, sub_ins)
    if sub_upd:
        conn.executemany(UPDATE_SUBJECTS_SQL, sub_upd)


def _commit_range(txn: Any, d: S.StreamDef, a: _Agreement, r: _SqlRange) -> None:
    """The target stream's counters after the copy, and the agreement's row and report."""
    new_first = r.t_first if r.t_msgs > 0 else r.first_c
    r.conn.execute(
        "UPDATE streams SET first_seq = ?, last_seq = ?, last_ts = ?, msgs = ?, bytes = ?, "
        "last_msg_id = ? WHERE id = ?",
        (new_first, max(r.t_last, r.last_c), max(r.t_ts, r.new_last_ts), r.t_msgs + r.n_total,
         r.t_bytes + r.size, r.last_msg_id, d.id))
    txn.streams.pop(d.id, None)
    rep, row = a.report, a.row
    assert rep is not None and row is not None
    rep.copied += r.n_total
    row[_R_CURSOR] = max(r.t_last, r.last_c) if a.kind == "mirror" else r.hi
    if a.kind == "source":
        row[_R_SEQ] = r.hi
    a.got = True
    a.last_attempt = r.hi
    a.truncated = r.hi < r.olast


class _Parts:
    """The parts of a split catch-up not copied yet: ``(lo, hi, stats, names, obytes)`` each,
    valid while the origin keeps its first sequence and no message is removed from it."""

    def __init__(self, oid: int, ofirst: int, removed: int, parts: list[tuple]) -> None:
        self.key = (oid, ofirst, removed)
        self.parts = parts

    def next_is(self, oid: int, lo: int, hi: int, ofirst: int, removed: int) -> bool:
        return (self.key == (oid, ofirst, removed) and bool(self.parts)
                and self.parts[0][0] == lo and self.parts[0][1] <= hi)


class _TailScan:
    """A whole-origin catch-up (``lo..hi``) cut in transactions of SPLIT_PARTS % each, so
    that the log of one is checkpointed while the next is built (:func:`_pump_target`), and
    the last, whose checkpoint nobody overlaps, is small.

    The first part is copied now. The per-subject stats of the later parts are read by one
    scan on a connection of its own, on another thread, while the first part's INSERT runs
    (SQLite works without Python's lock); they are kept in ``a.parts`` for the next steps.
    The first part's stats are the whole origin's minus the later parts': its last message
    of a subject is the one before that subject's first in a later part (the chain)."""

    def __init__(self, a: _Agreement, oid: int, lo: int, hi: int, ofirst: int, removed: int,
                 in_txn: bool) -> None:
        self.a, self.oid, self.ofirst, self.removed = a, oid, ofirst, removed
        # the origin changed inside this transaction: only this connection sees it
        self.in_txn = in_txn
        n = hi - lo + 1
        self.bounds: list[tuple[int, int]] = []
        at = lo
        for pct in SPLIT_PARTS:
            stop = min(hi, at + max(n * pct // 100, 1) - 1)
            if at <= stop:
                self.bounds.append((at, stop))
            at = stop + 1
        if at <= hi:
            self.bounds[-1] = (self.bounds[-1][0], hi)
        self._thread: Any = None
        self._rows: list[tuple] | None = None

    _SQL = ("SELECT subject_id, {part}, 1, id, id, prev, {size} FROM {o}.msgs WHERE id "
            "BETWEEN ? AND ? ORDER BY id ON CONFLICT(sid, part) DO UPDATE SET n = n + 1, "
            "last = excluded.last, nb = nb + excluded.nb")

    def _scan(self, conn: sqlite3.Connection, o: str) -> list[tuple]:
        base = S.key_range(self.oid)[0]
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS repl_parts (sid INTEGER, part INTEGER, "
                     "n INTEGER, first INTEGER, last INTEGER, prev INTEGER, nb INTEGER, "
                     "PRIMARY KEY (sid, part))")
        conn.execute("DELETE FROM temp.repl_parts")
        later = self.bounds[1:]
        part = "0"
        if len(later) > 1:
            part = "CASE " + " ".join(f"WHEN id <= {base | b[1]} THEN {i}"
                                      for i, b in enumerate(later[:-1]))
            part += f" ELSE {len(later) - 1} END"
        size = S.payload_sql(self.a.od.file, "", o + ".")  # type: ignore[union-attr]
        conn.execute("INSERT INTO temp.repl_parts " + self._SQL.format(part=part, o=o,
                                                                       size=size),
                     (base | later[0][0], base | later[-1][1]))
        return conn.execute("SELECT sid, part, n, first, last, prev, nb FROM temp.repl_parts "
                            "ORDER BY part").fetchall()

    def _run(self) -> None:
        try:
            conn = connect(self.a.ocl.path)  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001 - any failure here: the copying connection scans
            return
        try:
            conn.execute("BEGIN")
            row = conn.execute("SELECT first_seq, msgs, last_seq FROM streams WHERE id = ?",
                               (self.oid,)).fetchone()
            # the same messages as the copying transaction's snapshot: none removed since
            if row is not None and (row[0], row[1] - row[2]) == (self.ofirst, self.removed):
                self._rows = self._scan(conn, "main")
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            self._rows = None
        finally:
            conn.close()

    def start(self) -> None:
        import threading

        if self.in_txn:
            return
        self._thread = threading.Thread(target=self._run, name="jetlink-repl-scan",
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def first_part(self, conn: sqlite3.Connection, o: str,
                   stats: dict[int, tuple[int, int, int]], snames: dict[int, str],
                   obytes: int) -> tuple[dict[int, tuple[int, int, int]], int]:
        """After the first part's INSERT: its stats (from the whole ``stats``) and its byte
        count (from the whole origin's ``obytes``); the later parts go to ``a.parts``."""
        self.close()
        rows = self._rows
        if rows is None:  # the thread could not read the same messages: read them here
            rows = self._scan(conn, o)
        a = self.a
        later: list[tuple] = [(lo, hi, {}, {}, 0) for lo, hi in self.bounds[1:]]
        first = dict(stats)
        prevs: dict[int, int] = {}
        base = a.od.base_size  # type: ignore[union-attr]
        for sid, part, n2, f2, l2, prev, nb in rows:
            lo, hi, pstats, pnames, pbytes = later[part]
            pstats[sid] = (n2, f2 & _MASK, l2 & _MASK)
            subject = pnames[sid] = snames[sid]
            later[part] = (lo, hi, pstats, pnames, pbytes + n2 * (base + S._blen(subject)) + nb)
            prevs.setdefault(sid, prev)  # the first later part holding the subject
            if sid in first:
                n, f, last = first[sid]
                first[sid] = (n - n2, f, last)
        for sid in list(first):
            n, f, last = first[sid]
            if n <= 0:
                del first[sid]
            elif sid in prevs:
                first[sid] = (n, f, prevs[sid])
        a.parts = _Parts(self.oid, self.ofirst, self.removed, later)
        return first, obytes - sum(p[4] for p in later)


def _mirror_refs(conn: sqlite3.Connection, o: str, lo: int, hi: int) -> bool:
    """A mirror of a stream in another database: ``temp.repl_refs`` maps each ``src_hdrs``
    id of the origin used by its messages ``lo``..``hi`` (keys) to the target's id of the
    same text. False when the origin database holds no references, or the target has no
    room for them (then the SQL rebuilds the blocks)."""
    if conn.execute(f"SELECT 1 FROM {o}.src_hdrs LIMIT 1").fetchone() is None:
        return False
    by_head: dict[str, dict[int, str]] = {}
    for oid, head, tail in conn.execute(
            f"SELECT x.id, x.head, x.tail FROM {o}.src_hdrs x WHERE x.id IN (SELECT DISTINCT "
            f"{S.src_ref_id_sql('m.hdr')} FROM {o}.msgs m WHERE m.id BETWEEN ? AND ? AND "
            f"{S.is_src_ref_sql('m.hdr')})", (lo, hi)):
        by_head.setdefault(head, {})[oid] = tail
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS repl_refs (oid INTEGER PRIMARY KEY, "
                 "tid INTEGER NOT NULL)")
    conn.execute("DELETE FROM temp.repl_refs")
    for head, tails in by_head.items():
        found = _src_refs(conn, head, tails)
        if found is None:
            return False
        conn.executemany("INSERT INTO temp.repl_refs(oid, tid) VALUES (?, ?)", found.items())
    return True


def _src_refs(conn: sqlite3.Connection, head: str, tails: dict[int, str]
              ) -> dict[int, int] | None:
    """The ``src_hdrs`` id of each header text (``head`` + seq + ``tails[k]``) by key ``k``,
    added where missing (in the caller's transaction). None when the ids would pass
    ``streams.max_src_ref()``."""
    known = dict(conn.execute("SELECT tail, id FROM src_hdrs WHERE head = ?", (head,)))
    new = sorted({t for t in tails.values() if t not in known})
    if new:
        top = conn.execute("SELECT coalesce(max(id), 0) FROM src_hdrs").fetchone()[0]
        if top + len(new) > S.max_src_ref():
            return None
        hsize = len(head.encode())
        rows = [(top + i + 1, head, t, hsize + len(t.encode())) for i, t in enumerate(new)]
        conn.executemany("INSERT INTO src_hdrs(id, head, tail, size) VALUES (?, ?, ?, ?)",
                         rows)
        known.update((t, i) for i, _h, t, _s in rows)
    return {sid: known[t] for sid, t in tails.items()}


def _guarded(conn: sqlite3.Connection, scanned: bool, sql: str, args: tuple) -> bool:
    """Run the SQL path's ``INSERT``; False when its guard met a message the per-message path
    must see (SQLite has undone the statement: nothing was inserted). After a ``scanned``
    range the guard never fires; if it did, that is a bug, not a case to retry."""
    try:
        conn.execute(sql, args)
    except sqlite3.OperationalError as exc:
        if scanned or "user-defined function raised exception" not in str(exc):
            raise
        return False
    return True


def _digits_sum(lo: int, hi: int) -> int:
    """The total number of decimal digits of the integers lo..hi."""
    total = 0
    p = 1
    for digits in range(1, 21):
        start, stop = max(lo, p), min(hi, p * 10 - 1)
        if start <= stop:
            total += (stop - start + 1) * digits
        p *= 10
        if p > hi:
            break
    return total


# --- promote and failover ---------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# Bulk jobs (sparkops): the agreement's row written with the messages they store
# --------------------------------------------------------------------------------------------
def prepare_seed(cl: Cluster) -> None:
    """Before a bulk job writes into a target of cluster ``cl``: the agreements table."""
    cl.ensure_schema(COMPONENT, SCHEMA_STEPS)


def seed_agreement(txn: Any, target_cluster: str, d: S.StreamDef, kind: str,
                   src: StreamSource, origin_ident: str, *, cursor: int | None,
                   seq: int = 0) -> None:
    """Record a bulk job's progress in agreement ``(kind, src)`` of target ``d``, inside the
    transaction that stored the job's messages, so that the pump continues right after them
    (``prepare_seed`` first).

    ``cursor``: the last origin sequence the job covered (read, filtered, deduplicated or
    stored); None while the job is still writing: the pump's own restart rule then applies
    (a mirror resumes after its last sequence; a source after the origin sequence in the
    newest ``Nats-Stream-Source`` header of the agreement stored so far, never before what
    an earlier transaction recorded: the target's limits may have removed every message of
    an origin since, and the pump would copy them again).
    """
    conn = txn.conn
    ocname, _err = origin_cluster(src, target_cluster)
    st = txn.stream(d)
    st.flush()
    a = _Agreement(kind, src, iname_of(src), target_cluster, d.name, ocname,
                   source_filters(src), [])
    row = _load_row(conn, d, a) or _new_row(d, a)
    if kind == "mirror":
        cur = last = st.last_seq
        row[_R_FAILED] = 0  # a bulk job stores at the origin's sequences
    elif cursor is None:
        had = row[_R_CURSOR] if row[_R_STARTED] else 0
        cur = last = max(had, _scan_source_headers(conn, d, a.iname))
    else:
        cur, last = cursor, seq or cursor
    row[_R_STARTED] = 1
    row[_R_CURSOR] = cur
    row[_R_SEQ] = last
    row[_R_IDENT] = origin_ident
    row[_R_LAG] = 0
    row[_R_SEEN] = txn.now
    row[_R_ERROR] = None
    a.row = row
    _save_row(conn, d, a)
