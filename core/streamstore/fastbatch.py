"""Fast batch publish (ADR-50 "Fast-ingest Batch Publishing", nats-server 2.14) on the
embedded engine: the server's side.

A JetStream publish whose reply subject ends in ``.$FI`` is a fast batch message (the
server's ``getFastBatch``); the reply subject carries the batch, right to left:
``<prefix>.<batch id>.<initial flow>.<gap mode>.<batch seq>.<operation>.$FI``, operation 0
start (sequence 1 only), 1 append (sequence 2 and up), 2 commit and store, 3 commit without
storing (end of batch, not on sequence 1), 4 ping; gap mode ``ok`` or ``fail``; a flow of 0
or less (or not a number) is 10, above 65,535 is 65,535; a sequence of 0 or 2^64-1 is
refused. Nothing is staged: each message is stored as it comes (``processJetStreamFastBatchMsg``
then ``processJetStreamMsgWithBatch``), and the server answers on the message's reply subject
with JSON documents (:func:`process` returns them in order):

- ``{"type":"ack","seq":S,"msgs":N}`` (``BatchFlowAck``): the first message (unless it
  commits) is answered with ``seq`` 0 and the flow the server allows (the client's flow up to
  500; 1 when the stream has other fast batches in flight); then one every N persisted
  messages (``checkFlowControl``: a late one skips ahead; N doubles up to ``500 / batches in
  flight`` and the client's flow, or halves down to it);
- ``{"type":"gap","last_seq":E,"seq":C}`` (``BatchFlowGap``): a sequence C came where E
  was the next one (2.15.1 reports a sequence going back too). Gap mode ``ok`` goes on from a
  forward gap; ``fail``, or a sequence going back, ends the batch with its PubAck;
- ``{"type":"err","seq":S,"error":{...}}`` (``BatchFlowErr``): message S was refused by a
  header check (the single publish's rules, ``checkMsgHeadersPreClusteredProposal``; the
  2.15.1 binary checks ``Nats-Expected-Last-Msg-Id`` too); gap mode ``ok`` goes on, ``fail`` ends
  the batch with the PubAck of what was stored before it. A refused FIRST message in gap mode
  ``fail`` gets the single publish's answer instead (the error, or the duplicate's PubAck);
  a duplicate ``Nats-Msg-Id`` is skipped without an answer;
- the commit's PubAck ``{"stream","seq","batch","count"}``: ``seq`` the stream sequence of the
  batch's last stored message, ``count`` the batch sequence reached;
- refusals as a publish's error document ``{"error":{...},"stream":NAME,"seq":0}``, in the
  server's order: sealed (10109), over ``max_msg_size`` (10054), the stream does not
  ``allow_batched`` (10205), the reply subject is not of the form (10206), a batch id over 64
  characters (10207), no such batch in flight for a sequence other than 1 (10208), 1,000
  batches in flight on the stream or 50,000 in all (10211).

A batch idle for 10 seconds (``streamMaxBatchTimeout``) is forgotten without an answer, as the
server's cleanup timer does; a message for it then is 10208. The engine stores each message
before the next one is looked at, so the server's ``pending`` count is always 0 between
messages and a commit completes at once. Batches in flight live in the ``fast_batches``
component table, so several processes may publish to one stream at the same time (their flow
then slows down as on a server).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import headers as H
from ..errors import ApiError, nats_error
from ..messages import PubAck
from ..numbers import go_parse_int64 as _parse_int64
from ..numbers import go_parse_uint64 as _parse_uint64
from .batches import BATCH_TIMEOUT_NS, batch_id_too_long, required_level
from .staging import SAVE_FAST_SQL, FastBatch

if TYPE_CHECKING:  # pragma: no cover
    from ..txnstate import TxnState
    from .txn import StreamTxn

SUFFIX = ".$FI"  # the server's FastBatchSuffix
GAP_FAIL, GAP_OK = "fail", "ok"
OP_START, OP_APPEND, OP_COMMIT, OP_COMMIT_EOB, OP_PING = range(5)

# The server's defaults (stream.go: streamDefaultMaxFastBatchInflightPerStream, ...Total) and
# the flow values of jetstream_batching.go (fastBatchInit, checkFlowControl, getFastBatch).
MAX_INFLIGHT_PER_STREAM = 1000
MAX_INFLIGHT_TOTAL = 50_000
MAX_ACK_MESSAGES = 500
DEFAULT_FLOW = 10
MAX_FLOW = 65_535
_MAX_UINT64 = (1 << 64) - 1

COMPONENT = "fast_batches"
SCHEMA_STEPS: list[list[str]] = [
    [
        """CREATE TABLE fast_batches (
            stream_id INTEGER NOT NULL,
            batch_id TEXT NOT NULL,
            lseq INTEGER NOT NULL,
            pseq INTEGER NOT NULL,
            fseq INTEGER NOT NULL,
            sseq INTEGER NOT NULL,
            ack_msgs INTEGER NOT NULL,
            max_ack INTEGER NOT NULL,
            gap_ok INTEGER NOT NULL,
            touched_ns INTEGER NOT NULL,
            PRIMARY KEY (stream_id, batch_id)
        ) WITHOUT ROWID""",
    ],
]
_EXPIRED = "fast_batches.expired"  # Txn.cache key: when idle batches were last forgotten


@dataclass(frozen=True)
class FastBatchReply:
    """What a fast batch message's reply subject says (the server's ``FastBatch``)."""

    id: str
    seq: int
    flow: int
    gap_ok: bool
    op: int

    @property
    def ping(self) -> bool:
        return self.op == OP_PING

    @property
    def eob(self) -> bool:
        return self.op == OP_COMMIT_EOB

    @property
    def commit(self) -> bool:
        return self.op in (OP_COMMIT, OP_COMMIT_EOB)


class _Invalid:
    """A reply subject that ends in ``.$FI`` but is not of the form (10206)."""

    def __repr__(self) -> str:
        return "INVALID"


INVALID = _Invalid()


def reply_subject(prefix: str, batch_id: str, flow: int, gap_ok: bool, seq: int, op: int
                  ) -> str:
    """The reply subject of a fast batch message (ADR-50's client design)."""
    return f"{prefix}.{batch_id}.{flow}.{GAP_OK if gap_ok else GAP_FAIL}.{seq}.{op}{SUFFIX}"


def parse_reply(reply: str | None) -> FastBatchReply | _Invalid | None:
    """The server's ``getFastBatch``: None when ``reply`` is not a fast batch reply subject,
    :data:`INVALID` when it ends in ``.$FI`` but breaks the form."""
    if not reply or len(reply) <= len(SUFFIX) or not reply.endswith(SUFFIX):
        return None
    parts = reply[: -len(SUFFIX)].split(".")
    if len(parts) < 6:  # prefix, id, flow, gap, seq, op: the server finds no dot
        return INVALID
    op = _parse_int64(parts[-1])
    if op < OP_START or op > OP_PING:
        return INVALID
    seq = _parse_uint64(parts[-2])
    if seq is None or seq == 0 or seq == _MAX_UINT64:
        return INVALID
    if (seq == 1 and op == OP_COMMIT_EOB) or (op == OP_START and seq != 1) or (
            op == OP_APPEND and seq <= 1):
        return INVALID
    gap = parts[-3]
    if gap not in (GAP_FAIL, GAP_OK):
        return INVALID
    flow = _parse_int64(parts[-4])
    flow = DEFAULT_FLOW if flow <= 0 else min(flow, MAX_FLOW)
    return FastBatchReply(parts[-5], seq, flow, gap == GAP_OK, op)


def drop_stream(txn: TxnState, stream_id: int) -> None:
    """A deleted stream's fast batches go with it, as do those of a stream that stops
    allowing them (the server's ``deleteFastBatches``)."""
    conn = txn.conn
    st = getattr(txn, "streams", {}).get(stream_id)  # core/streams.py Txn.streams
    if st is not None:
        st._fast.clear()
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'fast_batches'").fetchone():
        conn.execute("DELETE FROM fast_batches WHERE stream_id = ?", (stream_id,))


def error_doc(stream: str, err: ApiError) -> dict[str, Any]:
    """A refused publish's answer (the server's ``JSPubAckResponse`` with its error)."""
    return {**err.to_dict(), "stream": stream, "seq": 0}


def flow_ack(seq: int, msgs: int) -> dict[str, Any]:
    return {"type": "ack", "seq": seq, "msgs": msgs}


class _Processor:
    """One fast batch message on one stream (``processJetStreamFastBatchMsg``)."""

    def __init__(self, st: StreamTxn) -> None:
        self.st = st
        self.conn = st.txn.conn
        self.sid = st.d.id
        self.name = st.d.name
        self.out: list[dict[str, Any]] = []

    def _count_here(self) -> int:
        row = self.conn.execute("SELECT count(*) FROM fast_batches WHERE stream_id = ?",
                                (self.sid,)).fetchone()
        return int(row[0])

    def _save(self, b: FastBatch, now: int) -> None:
        """The batch's state changed: written at the stream's flush (staging.py)."""
        b.dirty = True

    def _cleanup(self, b: FastBatch) -> None:
        self.st._fast.pop(b.id, None)
        self.conn.execute("DELETE FROM fast_batches WHERE stream_id = ? AND batch_id = ?",
                          (self.sid, b.id))

    def _commit(self, b: FastBatch) -> None:
        """``fastBatchCommit`` when everything up to ``lseq`` is persisted: the PubAck, and
        the batch is gone."""
        self._cleanup(b)
        self.out.append({"stream": self.name, "seq": b.sseq, "batch": b.id, "count": b.lseq})

    def _check_flow(self, b: FastBatch) -> bool:
        """``checkFlowControl``: a flow ack when ``ack`` messages were persisted since the
        last one, the flow adjusted first."""
        am = b.ack
        if b.pseq < b.fseq + am:
            return False
        b.fseq += (b.pseq - b.fseq) // am * am
        most = min(max(MAX_ACK_MESSAGES // max(self._count_here(), 1), 1), b.max_ack)
        if b.ack < most:
            b.ack = min(b.ack * 2, most)
        elif b.ack > most:
            b.ack = max(b.ack // 2, most)
        self.out.append(flow_ack(b.fseq, b.ack))
        return True

    def run(self, subject: str, fb: FastBatchReply | _Invalid, hdr: bytes | None,
            data: bytes, ensure_table: Callable[[], None]) -> list[dict[str, Any]]:
        st = self.st
        d = st.d
        txn = st.txn
        out = self.out
        can_respond = not d.no_ack

        def refuse(err: ApiError) -> list[dict[str, Any]]:
            if can_respond:
                out.append(error_doc(self.name, err))
            return out

        if d.sealed:
            return refuse(nats_error("StreamSealed"))
        hlen = len(hdr) if hdr else 0
        mms = d.max_msg_size
        if mms >= 0 and (hlen > mms or len(data) > mms - hlen):
            return refuse(nats_error("StreamMessageExceedsMaximum"))
        if not d.cfg.allow_batched:
            return refuse(nats_error("BatchPublishDisabled"))
        if not isinstance(fb, FastBatchReply):
            return refuse(nats_error("BatchPublishInvalidPattern"))
        if batch_id_too_long(fb.id):
            return refuse(nats_error("BatchPublishInvalidBatchID"))
        if txn.cache.get(_EXPIRED) != txn.now:  # the cleanup timers, once per transaction
            ensure_table()
            self.conn.execute("DELETE FROM fast_batches WHERE touched_ns <= ?",
                              (txn.now - BATCH_TIMEOUT_NS,))
            txn.cache[_EXPIRED] = txn.now
        b = st._fast.get(fb.id)
        if b is not None:
            return self._leveled(b, subject, fb, hdr, data, can_respond, refuse)
        row = self.conn.execute(
            "SELECT lseq, pseq, fseq, sseq, ack_msgs, max_ack, gap_ok FROM fast_batches "
            "WHERE stream_id = ? AND batch_id = ?", (self.sid, fb.id)).fetchone()
        if row is None:
            if fb.seq != 1:
                return refuse(nats_error("BatchPublishUnknownBatchID"))
            here = self._count_here()
            total = self.conn.execute("SELECT count(*) FROM fast_batches").fetchone()[0]
            if here + 1 > MAX_INFLIGHT_PER_STREAM or total + 1 > MAX_INFLIGHT_TOTAL:
                return refuse(nats_error("BatchPublishTooManyInflight"))
            # fastBatchInit: the client's flow up to 500, or 1 beside other batches
            b = FastBatch(fb.id, 0, 0, 0, 0, 1 if here else min(MAX_ACK_MESSAGES, fb.flow),
                          fb.flow, fb.gap_ok)
            self.conn.execute(SAVE_FAST_SQL, b.row(self.sid, txn.now))  # counted from now on
        else:
            lseq, pseq, fseq, sseq, ack, max_ack, gap_ok = row
            b = FastBatch(fb.id, lseq, pseq, fseq, sseq, ack, max_ack, bool(gap_ok))
        st._fast[fb.id] = b
        return self._leveled(b, subject, fb, hdr, data, can_respond, refuse)

    def _leveled(self, b: FastBatch, subject: str, fb: FastBatchReply, hdr: bytes | None,
                 data: bytes, can_respond: bool,
                 refuse: Callable[[ApiError], list[dict[str, Any]]]) -> list[dict[str, Any]]:
        """The required API level can have the batch abandoned; the header is removed
        always (the server's check after it found or made the batch)."""
        refused, stripped = required_level(hdr, H.first_values(hdr) if hdr else {})
        if refused:
            self._cleanup(b)
            return refuse(nats_error("RequiredApiLevel"))
        return self._message(b, subject, fb, stripped or None, data, can_respond)

    def _message(self, b: FastBatch, subject: str, fb: FastBatchReply, hdr: bytes | None,
                 data: bytes, can_respond: bool) -> list[dict[str, Any]]:
        out = self.out
        now = self.st.txn.now
        if fb.ping:  # resends the last flow ack; reports (and in mode fail ends on) a gap
            send = True
            if fb.seq > b.lseq:
                out.append({"type": "gap", "last_seq": b.lseq + 1, "seq": fb.seq + 1})
                if b.gap_ok:
                    b.lseq = b.pseq = fb.seq
                    send = not self._check_flow(b)
                else:
                    self._commit(b)
                    return out
            if send:
                out.append(flow_ack(b.fseq, b.ack))
            self._save(b, now)
            return out
        b.lseq += 1
        if b.lseq != fb.seq:
            # nats-server 2.15.1 reports a sequence going back as a gap too (its main branch
            # since reports forward gaps only); either way the batch ends on it
            out.append({"type": "gap", "last_seq": b.lseq, "seq": fb.seq})
            if b.gap_ok and fb.seq > b.lseq:
                b.lseq = fb.seq
            else:  # a sequence going back, or a gap in mode fail: the batch ends here
                b.lseq -= 1
                self._commit(b)
                return out
        if fb.eob:  # the end marker is not stored: the batch commits with what it has
            b.lseq -= 1
            b.pseq = b.lseq
            self._commit(b)
            return out
        if fb.seq == 1 and can_respond and not fb.commit:
            out.append(flow_ack(0, b.ack))
        r = self.st.append(subject, hdr, data)
        dup = isinstance(r, PubAck) and r.duplicate
        if isinstance(r, ApiError) or dup:
            if dup:
                b.pseq = fb.seq
                self._check_flow(b)
                if not fb.commit:
                    self._save(b, now)
                    return out
            if not b.gap_ok and b.lseq == 1:  # a batch that fails at once: a publish's answer
                self._cleanup(b)
                if isinstance(r, PubAck):
                    out.append({"stream": self.name, "seq": r.seq, "duplicate": True,
                                "batch": b.id, "count": fb.seq})
                else:
                    out.append(error_doc(self.name, r))
                return out
            if isinstance(r, ApiError):
                out.append({"type": "err", "seq": fb.seq, "error": r.to_dict()["error"]})
                if b.gap_ok and not fb.commit:
                    self._save(b, now)
                    return out
                b.lseq -= 1
                b.pseq = b.lseq
            self._commit(b)
            return out
        assert isinstance(r, PubAck)
        b.sseq = r.seq
        b.pseq = b.lseq  # fastBatchRegisterSequences: nothing pending
        if fb.commit:
            self._commit(b)
            return out
        self._check_flow(b)
        self._save(b, now)
        return out


def process(st: StreamTxn, subject: str, fb: FastBatchReply | _Invalid, hdr: bytes | None,
            data: bytes, ensure_table: Callable[[], None]) -> list[dict[str, Any]]:
    """One fast batch message on stream ``st`` (``subject`` after the stream's transform):
    the documents the server sends back on its reply subject, in order. ``ensure_table()``
    makes the component's table; it is called past the refusals, so a refused message
    changes nothing."""
    return _Processor(st).run(subject, fb, hdr, data, ensure_table)
