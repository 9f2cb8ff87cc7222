"""Atomic batch publish (ADR-50, nats-server 2.12) on the embedded engine.

A message carrying ``Nats-Batch-Id`` is a batch message (the server's ``getBatchId``); the
server hands it to ``processJetStreamAtomicBatchMsg`` instead of the publish path. Its rules,
in the server's order:

- the stream is sealed: 10109; the message is over ``max_msg_size``: 10054;
- the stream does not ``allow_atomic``: 10174; the batch id is longer than 64: 10179;
- ``Nats-Batch-Sequence`` missing or not an unsigned number: 10175;
- no batch of that id in flight: a sequence other than 1 is 10199 when it is already past
  the largest batch (1,000; the ``eob`` marker not counted), else 10176; sequence 1 starts a
  batch unless the stream has 50 in flight or the server 1,000 (10210);
- ``Nats-Batch-Commit`` other than ``1`` or ``eob``: the batch is abandoned, 10200;
- a gap in the sequence, a batch idle for longer than its timeout (10 s, the server's
  ``streamMaxBatchTimeout``; abandoned, as the server's cleanup timer does) or ``eob`` on
  sequence 1: abandoned, 10176; past 1,000 messages: abandoned, 10199;
- a message that does not commit is staged (not stored) and answered with an EMPTY reply
  (the server: "Send empty ack to let them know we've persisted the data prior to commit");
  here :func:`publish` returns None for it;
- the commit runs the batch checks (``checkMsgHeadersPreClusteredProposal`` with one staged
  diff for the whole batch) and then stores every message, all or nothing: a refusal of any
  message abandons the batch and stores none of it. Beyond the single-message rules:
  ``Nats-Expected-Last-Msg-Id`` is refused (10177), a ``Nats-Msg-Id`` seen in the batch or
  in the duplicate window is 10201, ``Nats-Expected-Last-Sequence`` is allowed on the first
  message only (10164 after it), ``Nats-Expected-Last-Subject-Sequence`` on a subject the
  batch already wrote is 10164, ``Nats-Rollup: sub`` only on a subject's first message in
  the batch and ``all`` only on the batch's first message (10111; checked after the schedule
  rules, so a schedule message's implicit ``Nats-Rollup: sub`` counts);
- schedule messages (ADR-51) are checked as single publishes are (schedules.py); a purge
  (``Nats-Schedule-Next: purge``) naming a subject the batch wrote is valid only when the
  batch's last message on it is a schedule; a committed schedule fires as any other;
- the commit's PubAck carries ``batch`` (the id) and ``count`` (its messages; ``eob`` is an
  end marker, not stored: the last stored message gets ``Nats-Batch-Commit: 1``).

Staged messages live in the ``atomic_batches`` component tables of the cluster database, so a
batch may be published by several processes one message each (``jetlink pub`` with the
headers), as by several requests to a server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from .. import headers as H
from ..errors import ApiError, nats_error
from ..messages import BatchPubAck, PubAck
from ..numbers import go_parse_uint64
from .base import _as_uint64
from .staging import Staged

if TYPE_CHECKING:  # pragma: no cover
    from ..streams import Txn
    from ..txnstate import TxnState
    from .txn import StreamTxn

BATCH_ID = "Nats-Batch-Id"
BATCH_SEQ = "Nats-Batch-Sequence"
BATCH_COMMIT = "Nats-Batch-Commit"
REQUIRED_API_LEVEL = "Nats-Required-Api-Level"


def batch_id_too_long(batch_id: str) -> bool:
    """The server's ``len(batchId) > 64``: Go's length of a string is its bytes."""
    return len(batch_id) > MAX_BATCH_ID or (
        not batch_id.isascii() and len(batch_id.encode("utf-8", "surrogatepass")) > MAX_BATCH_ID)


def required_level(hdr: bytes | None, fv: dict[str, str]) -> tuple[bool, bytes | None]:
    """A batch message's ``Nats-Required-Api-Level`` (jetstream_versioning.go
    ``errorOnRequiredApiLevel``): (refused, the header block without it). Refused when its
    value is no integer (Go's strconv.Atoi) or above the API level this server speaks; the
    header is removed either way, as the server removes it before staging."""
    if hdr is None or REQUIRED_API_LEVEL not in fv:
        return False, hdr
    from ..config.validate import API_LEVEL
    from ..numbers import IntTextError, parse_int

    try:
        level = parse_int(fv[REQUIRED_API_LEVEL])  # (Go's int: 64 bits)
    except IntTextError:
        return True, hdr
    if level > API_LEVEL:
        return True, hdr
    return False, H.remove_header(hdr, REQUIRED_API_LEVEL)

# The server's defaults (stream.go: streamDefaultMaxBatchTimeout, ...MaxAtomicBatchSize,
# ...MaxAtomicBatchInflightPerStream, ...MaxAtomicBatchInflightTotal).
MAX_BATCH_SIZE = 1000
MAX_INFLIGHT_PER_STREAM = 50
MAX_INFLIGHT_TOTAL = 1000
BATCH_TIMEOUT_NS = 10 * 1_000_000_000
MAX_BATCH_ID = 64
_OWN = frozenset({BATCH_ID, BATCH_SEQ, BATCH_COMMIT})  # a batch message's own headers

_EXPIRED = "atomic_batches.expired"  # Txn.cache key: the time idle batches were abandoned
COMPONENT = "atomic_batches"
SCHEMA_STEPS: list[list[str]] = [
    [
        """CREATE TABLE atomic_batches (
            stream_id INTEGER NOT NULL,
            batch_id TEXT NOT NULL,
            last_seq INTEGER NOT NULL,
            touched_ns INTEGER NOT NULL,
            PRIMARY KEY (stream_id, batch_id)
        ) WITHOUT ROWID""",
        """CREATE TABLE atomic_batch_msgs (
            stream_id INTEGER NOT NULL,
            batch_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            subject TEXT NOT NULL,
            hdr BLOB,
            data BLOB NOT NULL,
            PRIMARY KEY (stream_id, batch_id, seq)
        ) WITHOUT ROWID""",
    ],
]


def is_batch_msg(hdr: bytes | None) -> bool:
    """Whether a publish is an atomic batch message (the server's ``getBatchId``)."""
    return hdr is not None and b"Nats-Batch-Id" in hdr and bool(H.header_value(hdr, BATCH_ID))


def _cleanup(st: StreamTxn, batch_id: str) -> None:
    """Abandon (or, committing, finish) a batch: its row, its messages, its staged state."""
    b = st._staged.pop(batch_id)
    conn, key = st.conn, (st.d.id, batch_id)
    conn.execute("DELETE FROM atomic_batches WHERE stream_id = ? AND batch_id = ?", key)
    if b.held:
        conn.execute("DELETE FROM atomic_batch_msgs WHERE stream_id = ? AND batch_id = ?", key)


def _expire(txn: TxnState) -> None:
    """Abandon batches idle for the timeout (the server's cleanup timer)."""
    conn = txn.conn
    cutoff = txn.now - BATCH_TIMEOUT_NS
    stale = conn.execute("SELECT stream_id, batch_id FROM atomic_batches WHERE touched_ns <= ?",
                         (cutoff,)).fetchall()
    streams = _transaction_streams(txn)
    for sid, bid in stale:
        st = streams.get(sid)
        if st is not None:
            st._staged.pop(bid, None)
        conn.execute("DELETE FROM atomic_batches WHERE stream_id = ? AND batch_id = ?",
                     (sid, bid))
        conn.execute("DELETE FROM atomic_batch_msgs WHERE stream_id = ? AND batch_id = ?",
                     (sid, bid))


def _transaction_streams(txn: TxnState) -> dict[int, StreamTxn]:
    """The streams the transaction opened (core/streams.py ``Txn.streams``)."""
    return cast("dict[int, StreamTxn]", getattr(txn, "streams", {}))


def drop_stream(txn: TxnState, stream_id: int) -> None:
    """A deleted stream's batches go with it (the server's ``deleteAtomicBatches``)."""
    conn = txn.conn
    st = _transaction_streams(txn).get(stream_id)
    if st is not None:
        st._staged.clear()
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'atomic_batches'").fetchone():
        conn.execute("DELETE FROM atomic_batches WHERE stream_id = ?", (stream_id,))
        conn.execute("DELETE FROM atomic_batch_msgs WHERE stream_id = ?", (stream_id,))


def publish(st: StreamTxn, subject: str, hdr: bytes, data: bytes,
            ensure_tables: Callable[[], None], fv: dict[str, str] | None = None
            ) -> PubAck | ApiError | None:
    """One atomic batch message on stream ``st`` (``subject`` after the stream's transform):
    None when staged (the server's empty reply), the commit's :class:`BatchPubAck`, or the
    refusal (nothing stored). ``ensure_tables()`` makes the component's tables; it is called
    past the refusals that need no table, so those change nothing. ``fv``: the header
    block's first values when the caller has them (``H.first_values(hdr)``)."""
    d = st.d
    txn = st.txn
    if d.sealed:
        return nats_error("StreamSealed")
    mms = d.max_msg_size
    if mms >= 0 and (len(hdr) > mms or len(data) > mms - len(hdr)):
        return nats_error("StreamMessageExceedsMaximum")
    if not d.cfg.allow_atomic:
        return nats_error("AtomicPublishDisabled")
    if fv is None:
        fv = H.first_values(hdr)
    batch_id = fv.get(BATCH_ID, "")
    if batch_id_too_long(batch_id):
        return nats_error("AtomicPublishInvalidBatchID")
    seq = go_parse_uint64(fv.get(BATCH_SEQ))
    if seq is None:
        return nats_error("AtomicPublishMissingSeq")
    commit_hdr = fv.get(BATCH_COMMIT)
    commit = commit_hdr is not None
    eob = commit_hdr == "eob"
    size = seq - 1 if eob else seq  # the end-of-batch marker is not counted

    if txn.cache.get(_EXPIRED) != txn.now:  # once per transaction
        ensure_tables()
        _expire(txn)
        txn.cache[_EXPIRED] = txn.now
    b = _find(st, batch_id, seq, size)
    if not isinstance(b, Staged):
        return b
    if commit and not eob and commit_hdr != "1":
        _cleanup(st, batch_id)
        return nats_error("AtomicPublishInvalidBatchCommit")
    # the required API level can have the batch abandoned; the header is removed always
    refused, stripped = required_level(hdr, fv)
    if refused:
        _cleanup(st, batch_id)
        return nats_error("RequiredApiLevel")
    if stripped is not hdr:
        hdr = stripped or b""
        fv = H.first_values(hdr) if hdr else {}
    if b.last + 1 != seq or (seq == 1 and eob):
        _cleanup(st, batch_id)
        return nats_error("AtomicPublishIncompleteBatch")
    if size > MAX_BATCH_SIZE:
        _cleanup(st, batch_id)
        return nats_error("AtomicPublishTooLargeBatch", size=MAX_BATCH_SIZE)
    if not commit:
        b.rows.append((seq, subject, hdr, data, fv))
        b.last = seq
        b.dirty = True
        return None
    msgs = _staged_msgs(st, batch_id, b)
    _cleanup(st, batch_id)
    if not eob:
        msgs.append((subject, hdr, data, fv))
    elif msgs:  # committed by an end-of-batch marker: its last message carries the commit
        s, h, m, _fv = msgs[-1]
        h = H.append_header(H.remove_header(h, BATCH_COMMIT), BATCH_COMMIT, "1")
        msgs[-1] = (s, h, m, H.first_values(h))
    return _commit(st, batch_id, msgs)


def _find(st: StreamTxn, batch_id: str, seq: int, size: int) -> Staged | ApiError:
    """The batch ``batch_id`` in flight on ``st``, started when ``seq`` is 1 (its row
    inserted: the in-flight limits count it), or the refusal of a message that starts none."""
    b = st._staged.get(batch_id)
    if b is not None:
        return b
    conn, d = st.conn, st.d
    row = conn.execute("SELECT last_seq FROM atomic_batches WHERE stream_id = ? AND "
                       "batch_id = ?", (d.id, batch_id)).fetchone()
    if row is not None:
        b = st._staged[batch_id] = Staged(row[0], True)
        return b
    if seq != 1:
        if size > MAX_BATCH_SIZE:
            return nats_error("AtomicPublishTooLargeBatch", size=MAX_BATCH_SIZE)
        return nats_error("AtomicPublishIncompleteBatch")
    here, total = conn.execute(
        "SELECT count(*) FILTER (WHERE stream_id = ?), count(*) FROM atomic_batches",
        (d.id,)).fetchone()
    if here + 1 > MAX_INFLIGHT_PER_STREAM or total + 1 > MAX_INFLIGHT_TOTAL:
        return nats_error("AtomicPublishTooManyInflight")
    conn.execute("INSERT INTO atomic_batches(stream_id, batch_id, last_seq, touched_ns) "
                 "VALUES (?, ?, 0, ?)", (d.id, batch_id, st.txn.now))
    b = st._staged[batch_id] = Staged(0, False)
    return b


def _staged_msgs(st: StreamTxn, batch_id: str, b: Staged
                 ) -> list[tuple[str, bytes | None, bytes, dict[str, str]]]:
    """The messages staged for the batch, in order: those written earlier (one query), then
    those of this transaction."""
    msgs: list[tuple[str, bytes | None, bytes, dict[str, str]]] = []
    if b.held:
        msgs = [(s, h, bytes(m), H.first_values(h) if h else {}) for s, h, m in st.conn.execute(
            "SELECT subject, hdr, data FROM atomic_batch_msgs WHERE stream_id = ? AND "
            "batch_id = ? ORDER BY seq", (st.d.id, batch_id))]
    msgs += [(s, h, m, f) for _seq, s, h, m, f in b.rows]
    return msgs


def _commit(st: StreamTxn, batch_id: str,
            msgs: list[tuple[str, bytes | None, bytes, dict[str, str]]]) -> PubAck | ApiError:
    """Check and store the whole batch, or nothing of it (``msgs``: subject, header block,
    data and the block's first values of each)."""
    txn = _transaction(st)
    d = st.d
    txn.flush()
    conn = txn.conn
    conn.execute("SAVEPOINT atomic_batch")
    written: set[str] = set()
    ids: set[str] = set()
    result: PubAck | ApiError | None = None
    try:
        fast = d.fast  # no counter, interest or schedule rules
        for i, (subject, hdr, data, fv) in enumerate(msgs):
            r: PubAck | ApiError
            if fast and fv.keys() <= _OWN:  # no header a rule acts on: sizes and the store
                r = st.append_inert(subject, hdr, data)
            else:
                err = _batch_rule(st, i, subject, fv, written, ids)
                if err is not None:
                    result = err
                    break
                r = st._append_slow(subject, hdr, data, False, fv if hdr else None,
                                    _rollup_rule(i, subject, written))
            if isinstance(r, ApiError):
                result = r
                break
            written.add(subject)
            result = r
        if isinstance(result, PubAck):
            txn.flush()
            conn.execute("RELEASE atomic_batch")
            return BatchPubAck(d.name, result.seq, batch_id, len(msgs))
    except BaseException:
        _rollback(st)
        raise
    _rollback(st)
    return result if isinstance(result, ApiError) else nats_error("AtomicPublishIncompleteBatch")


def _rollback(st: StreamTxn) -> None:
    """Undo a batch's stores: back to the savepoint, and every stream of the transaction
    read again from it (their in-memory overlays held the undone appends)."""
    from .txn import StreamTxn

    txn = _transaction(st)
    conn = txn.conn
    conn.execute("ROLLBACK TO atomic_batch")
    conn.execute("RELEASE atomic_batch")
    txn.cache.clear()
    for sid in list(txn.streams):
        txn.streams[sid] = StreamTxn(txn, txn.catalog.by_id[sid])


def _transaction(st: StreamTxn) -> Txn:
    """The whole transaction ``st`` belongs to: core/streams.py's ``Txn``, which opened it
    (``Txn.stream``). A batch flushes all of it (RePublish deliveries included) and reopens
    its streams after a rollback; the engine itself sees only its state (``TxnState``)."""
    return cast("Txn", st.txn)


def _batch_rule(st: StreamTxn, i: int, subject: str, fv: dict[str, str], written: set[str],
                ids: set[str]) -> ApiError | None:
    """The rules a message meets in a batch beyond a single publish's (the server's
    ``processJetStreamAtomicBatchMsg`` and ``checkMsgHeadersPreClusteredProposal``)."""
    if not fv:
        return None
    if fv.get(H.EXPECTED_LAST_MSG_ID):
        return nats_error("AtomicPublishUnsupportedHeaderBatch", header=H.EXPECTED_LAST_MSG_ID)
    mid = fv.get(H.MSG_ID)
    if mid:
        if mid in ids or (not st.d.is_mirror and st._dedupe_lookup(mid)):
            return nats_error("AtomicPublishContainsDuplicateMessage")
        ids.add(mid)
    if H.EXPECTED_LAST_SEQ in fv and i > 0:
        # compared with the batch's running sequence first; equal or not, only the first
        # message of a batch may expect a last sequence
        if _as_uint64(fv[H.EXPECTED_LAST_SEQ]) != st.last_seq:
            return nats_error("StreamWrongLastSequence", seq=st.last_seq)
        return nats_error("StreamWrongLastSequenceConstant")
    if H.EXPECTED_LAST_SUBJ_SEQ in fv:
        seq_subj = fv.get(H.EXPECTED_LAST_SUBJ_SEQ_SUBJ) or subject
        if seq_subj in written:
            return nats_error("StreamWrongLastSequenceConstant")
    return None


def _rollup_rule(i: int, subject: str, written: set[str]) -> Callable[[str], ApiError | None]:
    """The batch's rollup rule for message ``i`` (``checkMsgHeadersPreClusteredProposal``,
    after its schedule rules: a schedule message's implicit ``Nats-Rollup: sub`` counts, so
    a schedule on a subject the batch already wrote is refused): ``sub`` only on a subject's
    first message in the batch, ``all`` only on the batch's first message."""
    def rule(rollup: str) -> ApiError | None:
        if rollup == "sub" and subject in written:
            return nats_error("StreamRollupFailed", err="batch rollup sub invalid")
        if rollup == "all" and i > 0:
            return nats_error("StreamRollupFailed", err="batch rollup all invalid")
        return None
    return rule
