"""Fast batch publish, the client's side (ADR-50 "Fast-ingest Batch Publishing", nats-server
2.14; the shape of orbit.go's ``jetstreamext.FastPublisher``).

Both backends drive a batch with :class:`FastPublisher`: message k of N goes out with the reply
subject ``<inbox>.<batch id>.<flow>.<gap>.<k>.<op>.$FI`` (op 0 for the first, 1 after it, 2
for the last: commit and store); the server's answers to it come back on that subject
(core/streamstore/fastbatch.py says what they are). The client

- waits for the answer to the first message (a flow ack, or the refusal of the batch);
- keeps at most ``max_outstanding`` flow windows unacknowledged: it waits while the last
  flow ack's sequence plus ``flow x max_outstanding`` is at or below what it sent, taking
  the flow the server sets in each ack (a ping, op 4, asks for the last ack again);
- in gap mode ``fail`` stops sending at a gap or an error report: the server ends the batch
  and sends its PubAck;
- is done at the batch's final answer: the commit's PubAck ``{"stream","seq","batch",
  "count"}``, or a refusal ``{"error":...}``.

Defaults as orbit.go's: flow 100, two outstanding acks, gap mode ``fail``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import ApiError, JetlinkError, client_error
from .messages import BatchPubAck, PubAck
from .streamstore.fastbatch import (
    MAX_FLOW,
    OP_APPEND,
    OP_COMMIT,
    OP_PING,
    OP_START,
    reply_subject,
)

DEFAULT_FLOW = 100
DEFAULT_MAX_OUTSTANDING = 2


def check_batch_id(batch_id: str) -> None:
    """A batch id is one subject token (the server reads it from the reply subject); its
    length is the server's to judge (10207 over 64)."""
    if not batch_id or any(c in batch_id for c in ". \t\r\n*>"):
        raise client_error(f"fast batch id {batch_id!r}: one subject token (no dots, spaces "
                           "or wildcards)", field="batch_id")


def check_flow(flow: int, max_outstanding: int) -> None:
    if not 1 <= flow <= MAX_FLOW:
        raise client_error(f"fast batch flow {flow}: 1 to {MAX_FLOW:,}", field="flow")
    if max_outstanding < 1:
        raise client_error(f"fast batch outstanding acks {max_outstanding}: at least 1",
                           field="max_outstanding")


def ack_of_doc(doc: dict[str, Any]) -> PubAck | ApiError:
    """The final answer as a PubAck (a commit's: :class:`BatchPubAck`) or the ApiError."""
    err = doc.get("error")
    if isinstance(err, dict):
        return ApiError(int(err.get("code", 500)), int(err.get("err_code", 0) or 0),
                        str(err.get("description", "")))
    domain = str(doc.get("domain") or "") or None
    if "batch" in doc and not doc.get("duplicate"):
        return BatchPubAck(str(doc.get("stream", "")), int(doc.get("seq", 0)),
                           str(doc["batch"]), int(doc.get("count", 0)), domain=domain)
    return PubAck(str(doc.get("stream", "")), int(doc.get("seq", 0)),
                  bool(doc.get("duplicate")), domain=domain)


@dataclass
class FastBatchResult:
    """A fast batch's outcome: ``doc`` the final answer as the server sent it (None: none
    came), ``replies`` every answer received in order, ``size`` the batch's messages, ``sent``
    how many were sent (a client sees an error report after sending a few more)."""

    batch_id: str
    size: int = 0
    sent: int = 0
    doc: dict[str, Any] | None = None
    replies: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ack(self) -> PubAck | ApiError | None:
        return None if self.doc is None else ack_of_doc(self.doc)

    @property
    def flow_acks(self) -> list[dict[str, Any]]:
        return [r for r in self.replies if r.get("type") == "ack"]

    @property
    def gaps(self) -> list[dict[str, Any]]:
        return [r for r in self.replies if r.get("type") == "gap"]

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [r for r in self.replies if r.get("type") == "err"]

    def to_json(self) -> dict[str, Any] | None:
        return self.doc


class FastPublisher:
    """The client state of one fast batch (no I/O: the backends send and receive)."""

    def __init__(self, batch_id: str, *, size: int, flow: int = DEFAULT_FLOW,
                 gap_ok: bool = False, max_outstanding: int = DEFAULT_MAX_OUTSTANDING,
                 prefix: str = "_INBOX") -> None:
        check_batch_id(batch_id)
        check_flow(flow, max_outstanding)
        self.result = FastBatchResult(batch_id, size)
        self.initial_flow = flow
        self.flow = flow
        self.gap_ok = gap_ok
        self.max_outstanding = max_outstanding
        self.prefix = prefix
        self.seq = 0  # the last batch sequence sent
        self.ack_seq = 0  # the highest sequence a flow ack covered
        self.answered = False  # the first message was answered
        self.stopped = False  # mode fail: a gap or an error was reported, the batch ends

    @property
    def done(self) -> bool:
        return self.result.doc is not None

    def reply(self, last: bool) -> str:
        """The reply subject of the next message (``last``: it commits the batch)."""
        self.seq += 1
        self.result.sent = self.seq
        op = OP_COMMIT if last else (OP_START if self.seq == 1 else OP_APPEND)
        return reply_subject(self.prefix, self.result.batch_id, self.initial_flow, self.gap_ok,
                             self.seq, op)

    def ping(self) -> str:
        """A ping's reply subject: the highest sequence sent, not a new one."""
        return reply_subject(self.prefix, self.result.batch_id, self.initial_flow, self.gap_ok,
                             self.seq, OP_PING)

    @property
    def subscription(self) -> str:
        """What the client subscribes to for the batch's answers."""
        return f"{self.prefix}.{self.result.batch_id}.>"

    def take(self, doc: dict[str, Any]) -> None:
        """One answer from the server."""
        if self.done:
            return  # after the final answer: refusals of messages already in flight
        self.result.replies.append(doc)
        kind = doc.get("type")
        if kind == "ack":
            self.answered = True
            self.ack_seq = max(self.ack_seq, int(doc.get("seq", 0)))
            self.flow = max(1, int(doc.get("msgs", 1)))
        elif kind in ("gap", "err"):
            if not self.gap_ok:
                self.stopped = True
        else:
            self.answered = True
            self.result.doc = doc

    @property
    def must_wait(self) -> bool:
        """Whether the client waits for answers before it sends more."""
        if self.done:
            return False
        if self.seq == 1 and not self.answered:
            return True
        return self.ack_seq + self.flow * self.max_outstanding <= self.seq


def outcome(result: FastBatchResult, gap_ok: bool) -> JetlinkError | None:
    """What the CLI reports as a failure: the refusal of the batch, or in gap mode ``fail``
    the error (or gap) that ended it early; None when the commit's PubAck came in full."""
    ack = result.ack
    if isinstance(ack, ApiError):
        return ack
    if ack is None:
        return JetlinkError(f"fast batch {result.batch_id}: no final acknowledgement")
    if gap_ok:
        return None
    stored = (f"the server ended the batch at message {getattr(ack, 'count', 0):,} of "
              f"{result.size:,} (stream sequence {ack.seq:,})")
    for r in result.replies:
        if r.get("type") == "err":
            e = r.get("error") or {}
            err = ApiError(int(e.get("code", 500)), int(e.get("err_code", 0) or 0),
                           str(e.get("description", "")))
            err.detail = f"message {int(r.get('seq', 0)):,} of the batch; {stored}"
            return err
        if r.get("type") == "gap":
            return JetlinkError(f"fast batch {result.batch_id}: the server saw a gap "
                                f"(messages {r.get('last_seq')} to {int(r.get('seq', 0)) - 1} "
                                f"missing); {stored}")
    return None
