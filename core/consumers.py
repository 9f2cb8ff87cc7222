"""Durable pull consumers: delivery state as plain data, the rules as functions.

The rules follow nats-server 2.15.1's consumer (``server/consumer.go``) for one server:

- a consumer keeps the server's two views of its state: the delivery view (next stream
  sequence ``sseq``, next consumer sequence ``dseq``, ack floors ``adflr``/``asflr``, the
  pending acks, the redelivery counts and queue) and the store view that ``consumer info``
  reports (``delivered`` and ``ack_floor``), which moves by the store's own rules (for
  example a message dropped after ``max_deliver`` leaves ``ack_floor`` where it was);
- time only moves through the clock: the ack-wait timer of the server is
  :func:`check_pending`, run at the start of each call with the clock's time (an expired
  message is queued for redelivery, ``backoff`` picks the wait per delivery count,
  ``max_deliver`` drops it);
- ``num_pending`` is the number of stream messages at or after ``sseq`` that match the filters
  (for ``last_per_subject`` the remaining start-up skip list plus the newer messages), as the
  server's running counter reports it.

Streams are read through :class:`StreamView`; consumers are kept by a :class:`ConsumerStore`.
:class:`ConsumerEngine` runs the operations (add, info, delete, fetch, ack, nak, term, purge
notification) over a consumer store: :class:`MemoryConsumerStore` here (tests), the SQLite store in
``core/consumer_store.py`` (which ``JetStream`` uses).

Retention: on interest streams a message goes away once no consumer whose filter matches it
still needs it (acked, terminated, or delivered to an ``ack_policy: none`` consumer), a new
message nobody is interested in is not stored (:func:`interest_in`), and deleting the last
consumer purges the stream; on work-queue streams the ack removes the message.

Not reproduced: push delivery, replay ``original`` timing (messages are handed out at once),
priority groups (pinning and overflow: the config is kept and checked, pulls ignore it), the
server's periodic interest sweep, advisories and sampling.

Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .clock import format_rfc3339_nano, parse_rfc3339_nano
from .config.consumer import (
    ConsumerConfig,
    check_consumer_create,
    filters_of,
    required_api_level,
    set_static_metadata,
    valid_group_name,
    with_response_metadata,
)
from .config.stream import StreamConfig
from .errors import ApiError, nats_error, not_found
from .headers import append_header
from .messages import StoredMsg
from .priority import (
    PIN_HEADER,
    PullPriority,
    check_request,
    claim_pin,
    expire_pin,
    group_states,
    overflow_allows,
    unpin,
)
from .startseq import clamp_start
from .subjects import SubjectFilter, is_subset

__all__ = [
    "ConsumerEngine",
    "ConsumerInfo",
    "ConsumerRecord",
    "ConsumerStore",
    "ConsumerState",
    "DeliveredMsg",
    "Delivery",
    "MemoryConsumerStore",
    "MemoryStream",
    "MessageView",
    "SequenceInfo",
    "StoredMessage",
    "StreamView",
    "ack_msg",
    "check_pending",
    "deliver",
    "delivered_msg",
    "inactive_deadline",
    "interest_in",
    "is_filtered",
    "make_info",
    "nak_msg",
    "needs_ack",
    "num_pending",
    "progress_msg",
    "purge_state",
    "reconcile_removed",
    "start_state",
    "term_msg",
]

MS = 1_000_000
SECOND = 1_000 * MS
ACK_WAIT_DELAY = MS  # the server's timer fires this long after a deadline (ackWaitDelay)


# --------------------------------------------------------------------------------------------
# Reading a stream
# --------------------------------------------------------------------------------------------

def pause_left(until: int, now: int) -> int:
    """A pause's time left, nanoseconds, as the server's ``time.Until`` gives it: a
    time.Duration is an int64, saturated at its largest (a pause until 9999 has about 292
    years left, not 7,978)."""
    from .numbers import INT64_MAX

    return min(until - now, INT64_MAX)

@dataclass(frozen=True)
class StoredMessage:
    """One stored message as a consumer reads it (``hdr`` is the raw NATS header block)."""

    seq: int
    subject: str
    ts: int
    hdr: bytes | None
    data: bytes


class MessageView(Protocol):
    """A stored message as the consumer rules read it: the memory stream's
    :class:`StoredMessage`, the store's :class:`~jetlink.core.messages.StoredMsg`."""

    @property
    def seq(self) -> int: ...

    @property
    def subject(self) -> str: ...

    @property
    def ts(self) -> int: ...

    @property
    def hdr(self) -> bytes | None: ...

    @property
    def data(self) -> bytes: ...


class StreamView(Protocol):
    """What the consumer rules read from a stream (the server's ``StreamStore`` calls)."""

    @property
    def first_seq(self) -> int: ...

    @property
    def last_seq(self) -> int: ...

    @property
    def msgs(self) -> int: ...

    def load(self, seq: int) -> MessageView | None:
        """The message at ``seq``, None when there is none (never stored or removed)."""

    def next_msgs(self, start: int, filters: Sequence[str], limit: int
                  ) -> Sequence[MessageView]:
        """Up to ``limit`` messages at or after ``start`` matching any filter (none: all)."""

    def count(self, start: int, filters: Sequence[str]) -> int:
        """How many messages at or after ``start`` match any filter (none: all)."""

    def last_seqs(self, filters: Sequence[str]) -> list[int]:
        """The last sequence of every subject matching the filters, ascending."""

    def seq_from_time(self, ts: int) -> int:
        """The first sequence stored at or after ``ts`` (last_seq + 1 when none)."""

    def existing(self, seqs: Iterable[int]) -> set[int]:
        """Which of ``seqs`` are stored."""


class MemoryStream:
    """A :class:`StreamView` over a list of messages (tests, and what-if tools)."""

    def __init__(self, first_seq: int = 1) -> None:
        self.messages: dict[int, StoredMessage] = {}
        self._first = first_seq
        self._last = first_seq - 1

    # -- writing ----------------------------------------------------------------------------
    def add(self, subject: str, data: bytes = b"", ts: int = 0, hdr: bytes | None = None) -> int:
        self._last += 1
        self.messages[self._last] = StoredMessage(self._last, subject, ts, hdr, data)
        if len(self.messages) == 1:
            self._first = self._last
        return self._last

    def skip(self) -> int:
        """Use a sequence without storing a message (an interest stream with no interest)."""
        self._last += 1
        if not self.messages:
            self._first = self._last + 1
        return self._last

    def remove(self, seq: int) -> bool:
        if self.messages.pop(seq, None) is None:
            return False
        if seq == self._first:
            self._first = min(self.messages) if self.messages else self._last + 1
        return True

    def purge(self) -> None:
        self.messages.clear()
        self._first = self._last + 1

    # -- StreamView ------------------------------------------------------------------------
    @property
    def first_seq(self) -> int:
        if not self.messages and self._last == 0:
            return 0
        return self._first

    @property
    def last_seq(self) -> int:
        return self._last

    @property
    def msgs(self) -> int:
        return len(self.messages)

    def load(self, seq: int) -> StoredMessage | None:
        return self.messages.get(seq)

    def next_msgs(self, start: int, filters: Sequence[str], limit: int) -> list[StoredMessage]:
        match = SubjectFilter(filters).matches if filters else None
        out = []
        for seq in sorted(s for s in self.messages if s >= start):
            m = self.messages[seq]
            if match is None or match(m.subject):
                out.append(m)
                if len(out) >= limit:
                    break
        return out

    def count(self, start: int, filters: Sequence[str]) -> int:
        match = SubjectFilter(filters).matches if filters else None
        return sum(1 for s, m in self.messages.items()
                   if s >= start and (match is None or match(m.subject)))

    def last_seqs(self, filters: Sequence[str]) -> list[int]:
        match = SubjectFilter(filters).matches if filters else None
        last: dict[str, int] = {}
        for s, m in self.messages.items():
            if match is None or match(m.subject):
                last[m.subject] = max(s, last.get(m.subject, 0))
        return sorted(last.values())

    def seq_from_time(self, ts: int) -> int:
        for seq in sorted(self.messages):
            if self.messages[seq].ts >= ts:
                return seq
        return self._last + 1

    def existing(self, seqs: Iterable[int]) -> set[int]:
        return {s for s in seqs if s in self.messages}


# --------------------------------------------------------------------------------------------
# The state
# --------------------------------------------------------------------------------------------
@dataclass
class ConsumerState:
    """Everything a consumer remembers between calls (JSON-serialisable plain data).

    Delivery view: ``sseq`` next stream sequence to look at, ``dseq`` next consumer
    sequence, ``adflr``/``asflr`` ack floors, ``pending`` stream seq -> [first delivery's
    consumer seq, time of the last delivery, last delivery's consumer seq], ``rdc`` stream
    seq -> redelivery count, ``rdq`` the redelivery queue, ``lss``/``lss_resume`` the
    last-per-subject start-up list. Store view (what ``consumer info`` shows):
    ``delivered_*``, ``ack_floor_*``. Activity: ``ldt`` last delivery, ``lat`` last ack,
    ``last_req`` last pull (all ns).
    """

    sseq: int = 1
    dseq: int = 1
    adflr: int = 0
    asflr: int = 0
    pending: dict[int, list[int]] = field(default_factory=dict)
    rdc: dict[int, int] = field(default_factory=dict)
    rdq: list[int] = field(default_factory=list)
    lss: list[int] = field(default_factory=list)
    lss_resume: int = 0
    delivered_c: int = 0
    delivered_s: int = 0
    ack_floor_c: int = 0
    ack_floor_s: int = 0
    ldt: int = 0
    lat: int = 0
    last_req: int = 0
    # priority groups (core/priority.py): the pinned client's id, when it was pinned, when
    # the pin lapses
    pin_id: str = ""
    pinned_ts: int = 0
    pin_deadline: int = 0

    def to_json(self) -> dict[str, Any]:
        pending: list[int] = []
        for seq in sorted(self.pending):
            p = self.pending[seq]
            pending += (seq, p[0], p[1], p[2])
        rdc: list[int] = []
        for seq in sorted(self.rdc):
            rdc += (seq, self.rdc[seq])
        return {
            "sseq": self.sseq, "dseq": self.dseq, "adflr": self.adflr, "asflr": self.asflr,
            # flat lists: [stream seq, first dseq, time, last dseq, ...], [stream seq, count, ...]
            "pending": pending,
            "rdc": rdc,
            "rdq": list(self.rdq), "lss": list(self.lss), "lss_resume": self.lss_resume,
            "delivered": [self.delivered_c, self.delivered_s],
            "ack_floor": [self.ack_floor_c, self.ack_floor_s],
            "ldt": self.ldt, "lat": self.lat, "last_req": self.last_req,
            "pin": [self.pin_id, self.pinned_ts, self.pin_deadline],
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> ConsumerState:
        p, r = doc["pending"], doc["rdc"]
        pin = doc.get("pin") or ["", 0, 0]
        return cls(
            sseq=doc["sseq"], dseq=doc["dseq"], adflr=doc["adflr"], asflr=doc["asflr"],
            pending={p[i]: [p[i + 1], p[i + 2], p[i + 3]] for i in range(0, len(p), 4)},
            rdc={r[i]: r[i + 1] for i in range(0, len(r), 2)},
            rdq=list(doc["rdq"]), lss=list(doc["lss"]), lss_resume=doc["lss_resume"],
            delivered_c=doc["delivered"][0], delivered_s=doc["delivered"][1],
            ack_floor_c=doc["ack_floor"][0], ack_floor_s=doc["ack_floor"][1],
            ldt=doc["ldt"], lat=doc["lat"], last_req=doc["last_req"],
            # states stored before priority groups have no pin
            pin_id=pin[0], pinned_ts=pin[1], pin_deadline=pin[2],
        )

    def dumps(self) -> str:
        return json.dumps(self.to_json(), separators=(",", ":"))

    def clone(self) -> ConsumerState:
        """A copy that shares nothing mutable with this one."""
        out = ConsumerState(**{k: v for k, v in vars(self).items()
                               if k not in ("pending", "rdc", "rdq", "lss")})
        out.pending = {k: list(v) for k, v in self.pending.items()}
        out.rdc = dict(self.rdc)
        out.rdq = list(self.rdq)
        out.lss = list(self.lss)
        return out

    @classmethod
    def loads(cls, text: str) -> ConsumerState:
        return cls.from_json(json.loads(text))

    # The server writes its delivery view into the store on some events (writeStoreState).
    def sync_store(self) -> None:
        self.delivered_c, self.delivered_s = self.dseq - 1, self.sseq - 1
        self.ack_floor_c, self.ack_floor_s = self.adflr, self.asflr


def _time_ns(text: str) -> int:
    return parse_rfc3339_nano(text) if text else 0


def start_state(cfg: ConsumerConfig, view: StreamView, stream: StreamConfig,
                now: int) -> ConsumerState:
    """A new consumer's state: the server's ``selectStartingSeqNo`` + ``SetStarting``."""
    st = ConsumerState(last_req=now)
    first, last = view.first_seq, view.last_seq
    filters = filters_of(cfg)
    sseq = 0
    if cfg.opt_start_seq == 0:
        dp = cfg.deliver_policy
        if dp in ("all", "undefined"):
            sseq = first
        elif dp == "last":
            if not filters:
                sseq = last
            else:
                for f in filters:
                    seqs = view.last_seqs([f])
                    if seqs and seqs[-1] > sseq:
                        sseq = seqs[-1]
        elif dp == "last_per_subject":
            if stream.max_msgs_per_subject == 1:
                sseq = first
            else:
                st.lss_resume = last
                st.lss = view.last_seqs(filters)
                sseq = st.lss[0] if st.lss else last
        elif cfg.opt_start_time:
            sseq = view.seq_from_time(_time_ns(cfg.opt_start_time))
            if filters:
                nseq = last
                for f in filters:
                    found = view.next_msgs(first, [f], 1)
                    ffirst = found[0].seq if found else 0
                    if sseq <= ffirst < nseq:
                        nseq = ffirst
                if sseq < nseq < last:
                    sseq = nseq
        else:  # new
            sseq = last + 1
    else:
        sseq = cfg.opt_start_seq
    sseq = clamp_start(sseq, first, last, explicit=cfg.opt_start_seq != 0)
    st.sseq, st.dseq = sseq, 1
    st.adflr, st.asflr = 0, sseq - 1
    st.delivered_s = st.ack_floor_s = max(sseq - 1, 0)
    return st


# --------------------------------------------------------------------------------------------
# The rules
# --------------------------------------------------------------------------------------------
def _max_deliver(cfg: ConsumerConfig) -> int:
    return max(cfg.max_deliver, 0)


def _delivery_count(st: ConsumerState, seq: int) -> int:
    n = st.rdc.get(seq, 0)
    return n if n >= 1 else 1


def _move_ack_floor(st: ConsumerState, dseq: int, sseq: int) -> None:
    """The server's ``moveAckFloor`` (delivery view)."""
    if not st.pending:
        st.adflr, st.asflr = st.dseq - 1, st.sseq - 1
    elif dseq == st.adflr + 1:
        st.adflr, st.asflr = dseq, sseq
        nxt = min((s for s in st.pending if s > sseq), default=None)
        if nxt is not None and nxt < st.sseq:
            p = st.pending[nxt]
            if p[0] > 0:
                st.adflr, st.asflr = p[0] - 1, nxt - 1


def _store_delivered(st: ConsumerState, cfg: ConsumerConfig, dseq: int, sseq: int,
                     dc: int) -> None:
    """The consumer store's ``UpdateDelivered`` (store view)."""
    if dc != 1 and cfg.ack_policy == "none":
        return
    if dseq <= st.ack_floor_c:
        return
    if cfg.ack_policy != "none":
        st.delivered_c = max(st.delivered_c, dseq)
        st.delivered_s = max(st.delivered_s, sseq)
    else:
        if dseq > st.delivered_c:
            st.delivered_c = st.ack_floor_c = dseq
        if sseq > st.delivered_s:
            st.delivered_s = st.ack_floor_s = sseq


def _store_acks(st: ConsumerState, cfg: ConsumerConfig, dseq: int, sseq: int,
                was_pending: bool) -> None:
    """The consumer store's ``UpdateAcks`` (store view). ``st.pending`` is already updated;
    ``was_pending`` says whether ``sseq`` was pending before this ack."""
    if cfg.ack_policy == "none":
        return
    if dseq <= st.ack_floor_c:
        return
    if not was_pending:
        return
    if cfg.ack_policy in ("all", "flow_control"):
        st.ack_floor_c, st.ack_floor_s = dseq, sseq
        return
    if not st.pending:
        st.ack_floor_c, st.ack_floor_s = st.delivered_c, st.delivered_s
    elif dseq == st.ack_floor_c + 1:
        st.ack_floor_c, st.ack_floor_s = dseq, sseq
        if st.delivered_c > dseq:
            nxt = min((s for s in st.pending if s > sseq), default=None)
            if nxt is not None and nxt <= st.delivered_s:
                p = st.pending[nxt]
                if p[0] > 0:
                    st.ack_floor_c, st.ack_floor_s = p[0] - 1, nxt - 1


def _drop_from_rdq(st: ConsumerState, seq: int) -> None:
    if seq in st.rdq:
        st.rdq.remove(seq)


def _ack_wait_for(cfg: ConsumerConfig, st: ConsumerState, seq: int) -> int:
    if cfg.backoff:
        dc = max(st.rdc.get(seq, 0), 0)
        if dc + 1 >= len(cfg.backoff):
            dc = len(cfg.backoff) - 1
        return cfg.backoff[dc]
    return cfg.ack_wait


def _has_max_deliveries(st: ConsumerState, cfg: ConsumerConfig, seq: int, now: int) -> bool:
    """The server's ``hasMaxDeliveries``: drop a message that reached ``max_deliver``."""
    maxdc = _max_deliver(cfg)
    if maxdc == 0:
        return False
    dc = _delivery_count(st, seq)
    if dc < maxdc:
        return False
    p = st.pending.pop(seq, None)
    if p is not None:
        _store_delivered(st, cfg, p[0], seq, dc + 1)
        st.ldt = now
        _move_ack_floor(st, p[0], seq)
    st.rdc[seq] = dc
    return True


def check_pending(st: ConsumerState, cfg: ConsumerConfig, view: StreamView, now: int) -> None:
    """The server's ack-wait timer (``checkPending``), run with the clock's ``now``.

    Messages whose ack wait (or ``backoff`` step) has passed are queued for redelivery, or
    dropped when they reached ``max_deliver``; pending entries below the stream's first
    sequence or the ack floor are forgotten.
    """
    if not st.pending or cfg.ack_wait <= 0:
        return
    fseq = view.first_seq
    update_store = False
    due: list[tuple[int, int]] = []  # (deadline, seq)
    for seq in sorted(st.pending):
        p = st.pending[seq]
        if seq < fseq or seq <= st.asflr:
            del st.pending[seq]
            st.rdc.pop(seq, None)
            _drop_from_rdq(st, seq)
            update_store = True
            if seq > st.asflr:
                st.asflr = seq
            if p[0] > st.adflr:
                st.adflr = p[0]
            continue
        if seq in st.rdq:
            continue
        deadline = p[1] + _ack_wait_for(cfg, st, seq)
        if deadline <= now:
            due.append((deadline, seq))
    # The server's timer fires at the earliest deadline (plus 1ms) and expires everything due
    # by then, in sequence order; replay those firings in time order.
    due.sort()
    i = 0
    while i < len(due):
        fire = min(due[i][0] + ACK_WAIT_DELAY, now)
        group = []
        while i < len(due) and due[i][0] <= fire:
            group.append(due[i][1])
            i += 1
        expired = [seq for seq in sorted(group)
                   if seq in st.pending and not _has_max_deliveries(st, cfg, seq, fire)]
        if expired:
            st.rdq.extend(expired)
            off = fire - st.pending[expired[0]][1]
            for seq in expired:
                st.pending[seq][1] += off
    if not st.pending:
        st.rdq.clear()
        st.adflr, st.asflr = st.dseq - 1, st.sseq - 1
    if update_store:
        st.sync_store()


@dataclass(frozen=True)
class Delivery:
    """One message handed to a pull request."""

    msg: MessageView
    dseq: int
    num_delivered: int
    num_pending: int


def num_pending(st: ConsumerState, cfg: ConsumerConfig, view: StreamView) -> int:
    """``num_pending`` of ``consumer info`` (and of each delivery's metadata)."""
    filters = filters_of(cfg)
    last = view.last_seq
    if st.lss:  # (a last-per-subject message deleted since is no longer pending: the
        # server's decStreamPending takes it off its count)
        n = len(view.existing(st.lss)) + view.count(st.lss_resume + 1, filters)
    else:
        if st.sseq > last:
            return 0
        n = view.count(st.sseq, filters)
    return max(0, min(n, view.msgs, last - st.sseq + 1)) if st.sseq <= last else 0


def deliver(st: ConsumerState, cfg: ConsumerConfig, view: StreamView, now: int,
            batch: int, gate: Callable[[int, int], bool] | None = None
            ) -> tuple[list[Delivery], list[int]]:
    """Serve one pull request of ``batch`` messages (``getNextMsg`` + ``deliverMsg``).

    Redeliveries come first, then new messages while ``max_ack_pending`` allows. ``gate``
    (an overflow request's minimums, core/priority.py) is asked before each message with
    the messages pending counting that one and the messages awaiting acks. Returns
    the deliveries and, for ``ack_policy: none``, the stream sequences now acknowledged
    (which interest and work-queue streams may remove).
    """
    st.last_req = now
    out: list[Delivery] = []
    auto_acked: list[int] = []
    if batch <= 0:
        return out, auto_acked
    filters = filters_of(cfg)
    maxdc = _max_deliver(cfg)
    maxp = cfg.max_ack_pending if cfg.ack_policy != "none" else 0
    # The server's running num-pending counter: one less for each first delivery.
    pending_count = num_pending(st, cfg, view)

    def record(msg: MessageView, dc: int) -> None:
        nonlocal pending_count
        dseq = st.dseq
        st.dseq += 1
        if dc == 1:
            pending_count -= 1
        _store_delivered(st, cfg, dseq, msg.seq, dc)
        st.ldt = now
        if cfg.ack_policy == "none":
            st.adflr, st.asflr = dseq, msg.seq
            auto_acked.append(msg.seq)
        else:
            p = st.pending.get(msg.seq)
            if p is not None:
                p[1] = now
                p[2] = dseq
            else:
                st.pending[msg.seq] = [dseq, now, dseq]
        out.append(Delivery(msg, dseq, dc, max(pending_count, 0)))

    while len(out) < batch:
        if gate is not None and not gate(pending_count + (1 if st.rdq else 0),
                                         len(st.pending)):
            break
        # Redeliveries first.
        if st.rdq:
            seq = st.rdq.pop(0)
            st.rdc[seq] = st.rdc.get(seq, 0) + 1
            dc = st.rdc[seq] + 1
            if maxdc > 0 and dc > maxdc:
                p = st.pending.pop(seq, None)
                if p is not None:
                    _store_delivered(st, cfg, p[0], seq, dc)
                    st.ldt = now
                    _move_ack_floor(st, p[0], seq)
                continue
            msg = view.load(seq)
            if msg is None:
                st.rdc[seq] -= 1
                p = st.pending.get(seq)
                if p is not None:
                    _process_ack(st, cfg, seq, p[0], now, term=True)
                continue
            record(msg, dc)
            continue
        if maxp > 0 and len(st.pending) >= maxp:
            break
        if st.lss:
            seq = st.lss.pop(0)
            if not st.lss:
                st.sseq = st.lss_resume
            else:
                st.sseq = seq
            st.sseq += 1
            msg = view.load(seq)
            if msg is None:
                continue
            record(msg, 1)
            continue
        want = batch - len(out)
        if maxp > 0:
            want = min(want, maxp - len(st.pending))
        found = view.next_msgs(st.sseq, filters, max(want, 1))
        if not found:
            # The store reports its last sequence at the end: a filtered consumer jumps there.
            last = view.last_seq
            if last >= st.sseq:
                st.sseq = last + 1
            break
        for msg in found:
            if len(out) >= batch or (maxp > 0 and len(st.pending) >= maxp):
                break
            if gate is not None and not gate(pending_count, len(st.pending)):
                break
            if msg.seq >= st.sseq:
                st.sseq = msg.seq + 1
            record(msg, 1)
    return out, auto_acked


def _process_ack(st: ConsumerState, cfg: ConsumerConfig, sseq: int, dseq: int, now: int,
                 *, term: bool = False) -> list[int]:
    """The server's ``processAckMsg``; returns the stream sequences acknowledged."""
    if sseq >= st.sseq:
        return []
    acked: list[int] = []
    if cfg.ack_policy == "explicit":
        p = st.pending.pop(sseq, None)
        was_pending = p is not None
        if p is not None:
            dseq = p[0]
            _move_ack_floor(st, dseq, sseq)
        st.rdc.pop(sseq, None)
        _drop_from_rdq(st, sseq)
        _store_acks(st, cfg, dseq, sseq, was_pending)
        acked.append(sseq)
    elif cfg.ack_policy in ("all", "flow_control"):
        if dseq <= st.adflr or sseq <= st.asflr:
            return []
        was_pending = sseq in st.pending
        sgap = sseq - st.asflr
        st.adflr, st.asflr = dseq, sseq

        def remove(seq: int) -> None:
            if seq in st.pending:
                del st.pending[seq]
                if seq != sseq:
                    acked.append(seq)
            st.rdc.pop(seq, None)
            _drop_from_rdq(st, seq)

        if sgap > len(st.pending):
            for seq in sorted(s for s in st.pending if s <= sseq):
                remove(seq)
        else:
            seq = sseq
            while seq > sseq - sgap and st.pending:
                remove(seq)
                seq -= 1
        acked.sort()
        acked.append(sseq)
        _store_acks(st, cfg, dseq, sseq, was_pending)
    else:  # none
        return []
    st.lat = now
    return acked


def ack_msg(st: ConsumerState, cfg: ConsumerConfig, sseq: int, now: int,
            dseq: int | None = None) -> list[int]:
    """``+ACK`` of the delivery of stream sequence ``sseq``.

    ``dseq`` is the consumer sequence of the delivery being acknowledged (its last delivery
    when omitted). Returns the stream sequences acknowledged (several with ``ack_policy:
    all``), which interest and work-queue streams may now remove.
    """
    st.last_req = now
    return _process_ack(st, cfg, sseq, _dseq_of(st, sseq, dseq), now)


def term_msg(st: ConsumerState, cfg: ConsumerConfig, sseq: int, now: int,
             dseq: int | None = None) -> list[int]:
    """``+TERM``: acknowledged as far as redelivery goes (the server's ``processTerm``)."""
    st.last_req = now
    return _process_ack(st, cfg, sseq, _dseq_of(st, sseq, dseq), now, term=True)


def _dseq_of(st: ConsumerState, sseq: int, dseq: int | None) -> int:
    if dseq is not None:
        return dseq
    p = st.pending.get(sseq)
    return p[2] if p is not None else 0


def nak_msg(st: ConsumerState, cfg: ConsumerConfig, sseq: int, now: int,
            delay: int | None = None, dseq: int | None = None) -> bool:
    """``-NAK``: redeliver now, or after ``delay`` ns. False when ``sseq`` is not pending."""
    st.last_req = now
    d = _dseq_of(st, sseq, dseq)
    if d <= st.adflr or d > st.dseq:
        return False
    if sseq not in st.pending:
        return False
    if delay is not None:
        _drop_from_rdq(st, sseq)
        p = st.pending[sseq]
        # "now - ack wait" counts as expired: the message comes back after ``delay``.
        p[1] = now - cfg.ack_wait + delay
        _store_delivered(st, cfg, p[0], sseq, st.rdc.get(sseq, 0) + 1)
        st.ldt = now
        return True
    if sseq not in st.rdq:
        st.rdq.append(sseq)
    return True


def progress_msg(st: ConsumerState, cfg: ConsumerConfig, sseq: int, now: int) -> bool:
    """``+WPI``: the ack wait of a pending message starts again."""
    st.last_req = now
    p = st.pending.get(sseq)
    if p is None:
        return False
    p[1] = now
    _store_delivered(st, cfg, p[0], sseq, 1)
    st.ldt = now
    return True


def reconcile_removed(st: ConsumerState, cfg: ConsumerConfig, view: StreamView,
                      now: int) -> None:
    """Messages removed from the stream (limits, deletes, other consumers' acks) are, for
    this consumer, terminated when pending and forgotten when only counted as redelivered
    (the server's ``decStreamPending``)."""
    seqs = set(st.pending) | set(st.rdc)
    if not seqs:
        return
    present = view.existing(seqs)
    for seq in sorted(seqs - present):
        p = st.pending.get(seq)
        if p is not None:
            _process_ack(st, cfg, seq, p[0], now, term=True)
        elif seq in st.rdc:
            del st.rdc[seq]
            st.lat = now
        _drop_from_rdq(st, seq)


def purge_state(st: ConsumerState, cfg: ConsumerConfig, start: int, now: int,
                *, wider: bool = False, present: Callable[[int], bool] | None = None) -> None:
    """A stream purge seen by the consumer (the server's ``consumer.purge``).

    ``start`` is the stream's first sequence after the purge (or of the purged subject);
    ``wider`` says the consumer's filters are wider than the purged subject, in which case
    only pending messages that are gone (``present(seq)`` false) are dropped.
    """
    if st.sseq < start:
        st.sseq = start
    if st.asflr < start:
        st.asflr = start - 1
        for seq in sorted(st.pending):
            p = st.pending[seq]
            gone = seq <= st.asflr or (wider and present is not None and not present(seq))
            if not gone:
                continue
            if p[0] > st.adflr:
                st.adflr = p[0]
                if st.adflr > st.dseq:
                    st.dseq = st.adflr
            del st.pending[seq]
            st.rdc.pop(seq, None)
            st.lat = now
    if not st.pending:
        st.rdc.clear()
        st.adflr, st.asflr = st.dseq - 1, st.sseq - 1
    st.rdq[:] = [s for s in st.rdq if s >= st.sseq]
    st.sync_store()


def is_filtered(cfg: ConsumerConfig, stream_subjects: Sequence[str]) -> bool:
    """The server's ``isFiltered``: filters that are not exactly the stream's subjects."""
    filters = filters_of(cfg)
    if not filters:
        return False
    return set(filters) != set(stream_subjects) or len(filters) != len(stream_subjects)


def needs_ack(st: ConsumerState, cfg: ConsumerConfig, stream_subjects: Sequence[str],
              seq: int, subject: str) -> bool:
    """Whether this consumer still needs stream sequence ``seq`` (the server's ``needAck``),
    which keeps the message in an interest or work-queue stream."""
    if is_filtered(cfg, stream_subjects) and not SubjectFilter(filters_of(cfg)).matches(subject):
        return False
    if cfg.ack_policy == "explicit":
        need = seq > st.asflr and (seq >= st.sseq or seq in st.pending)
    else:
        need = seq > st.asflr
    return need or seq in st.rdc


def inactive_deadline(st: ConsumerState, cfg: ConsumerConfig) -> int | None:
    """When the consumer is removed for inactivity (ns), None when it never is."""
    thresh = cfg.inactive_threshold
    if thresh <= 0:
        return None
    deadline = st.last_req + thresh
    for seq, p in st.pending.items():
        wait = _ack_wait_for(cfg, st, seq) if cfg.backoff else cfg.ack_wait
        deadline = max(deadline, p[1] + wait + thresh)
    return deadline


# --------------------------------------------------------------------------------------------
# Values returned to callers
# --------------------------------------------------------------------------------------------
@dataclass
class SequenceInfo:
    consumer_seq: int = 0
    stream_seq: int = 0
    last_active: int = 0  # ns, 0 = never

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"consumer_seq": self.consumer_seq, "stream_seq": self.stream_seq}
        if self.last_active:
            out["last_active"] = format_rfc3339_nano(self.last_active)
        return out


@dataclass
class ConsumerInfo:
    """``consumer info`` as the server answers it (``io.nats.jetstream.api.v1.consumer_info``)."""

    stream_name: str
    name: str
    created: int
    config: ConsumerConfig
    delivered: SequenceInfo
    ack_floor: SequenceInfo
    num_ack_pending: int
    num_redelivered: int
    num_waiting: int
    num_pending: int
    ts: int
    paused: bool = False
    pause_remaining: int = 0
    priority_groups: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "stream_name": self.stream_name,
            "name": self.name,
            "created": format_rfc3339_nano(self.created),
            "config": with_response_metadata(self.config).to_json(),
            "delivered": self.delivered.to_json(),
            "ack_floor": self.ack_floor.to_json(),
            "num_ack_pending": self.num_ack_pending,
            "num_redelivered": self.num_redelivered,
            "num_waiting": self.num_waiting,
            "num_pending": self.num_pending,
        }
        if self.paused:
            out["paused"] = True
            out["pause_remaining"] = self.pause_remaining
        out["ts"] = format_rfc3339_nano(self.ts)
        if self.priority_groups:
            out["priority_groups"] = [dict(g) for g in self.priority_groups]
        return out


def make_info(stream: str, name: str, created: int, cfg: ConsumerConfig, st: ConsumerState,
              view: StreamView, now: int) -> ConsumerInfo:
    """The server's ``consumer.info()`` from the stored state."""
    redelivered = 0 if cfg.max_deliver == 1 else len(st.rdc)
    pause_until = _time_ns(cfg.pause_until)
    paused = bool(pause_until) and now < pause_until
    return ConsumerInfo(
        stream_name=stream,
        name=name,
        created=created,
        config=cfg,
        delivered=SequenceInfo(st.delivered_c, st.delivered_s, st.ldt),
        ack_floor=SequenceInfo(st.ack_floor_c, st.ack_floor_s, st.lat),
        num_ack_pending=len(st.pending),
        num_redelivered=redelivered,
        num_waiting=0,
        num_pending=num_pending(st, cfg, view),
        ts=now,
        paused=paused,
        pause_remaining=pause_left(pause_until, now) if paused else 0,
        priority_groups=group_states(cfg, st),
    )


@dataclass
class DeliveredMsg(StoredMsg):
    """A message handed out by ``fetch``: the StoredMsg with its delivery metadata.

    ``to_json()``: the StoredMsg shape (``subject``, ``seq``, ``time``, ``headers``,
    ``data`` base64) plus ``stream``, ``consumer``, ``consumer_seq``, ``num_delivered``,
    ``num_pending`` and ``reply``: the server's ack subject
    ``$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>``.
    """

    stream: str
    consumer: str
    consumer_seq: int
    num_delivered: int
    num_pending: int

    @property
    def reply(self) -> str:
        return (f"$JS.ACK.{self.stream}.{self.consumer}.{self.num_delivered}.{self.seq}."
                f"{self.consumer_seq}.{self.ts}.{self.num_pending}")

    def to_json(self) -> dict[str, Any]:
        return {
            **super().to_json(),
            "stream": self.stream,
            "consumer": self.consumer,
            "consumer_seq": self.consumer_seq,
            "num_delivered": self.num_delivered,
            "num_pending": self.num_pending,
            "reply": self.reply,
        }


def delivered_msg(stream: str, consumer: str, cfg: ConsumerConfig, d: Delivery,
                  pin: str | None = None) -> DeliveredMsg:
    """The message as the pull request receives it (``headers_only``: no body, the size in
    a ``Nats-Msg-Size`` header, as the server's ``convertToHeadersOnly``; a pinned client's
    messages then carry the pin id in ``Nats-Pin-Id``)."""
    hdr, data = d.msg.hdr, d.msg.data
    if cfg.headers_only:
        hdr = append_header(hdr, "Nats-Msg-Size", str(len(data)))
        data = b""
    if pin:
        hdr = append_header(hdr, PIN_HEADER, pin)
    return DeliveredMsg(d.msg.subject, d.msg.seq, d.msg.ts, hdr, data, stream=stream,
                        consumer=consumer, consumer_seq=d.dseq, num_delivered=d.num_delivered,
                        num_pending=d.num_pending)


# --------------------------------------------------------------------------------------------
# The engine: consumers of a stream over a consumer store
# --------------------------------------------------------------------------------------------
@dataclass
class ConsumerRecord:
    """A stored consumer: its configuration, creation time and state."""

    name: str
    config: ConsumerConfig
    created: int
    state: ConsumerState

    def copy(self) -> ConsumerRecord:
        return ConsumerRecord(self.name, self.config.copy(), self.created, self.state.clone())


class ConsumerStore(Protocol):
    """Where consumers and their streams live (the SQLite store, or memory for tests)."""

    def stream_config(self, stream: str) -> StreamConfig:
        """The stream's configuration; raises 10059 ``stream not found``."""

    def view(self, stream: str) -> StreamView: ...

    def records(self, stream: str) -> dict[str, ConsumerRecord]:
        """The stream's consumers by name (copies the caller may change), creation order."""

    def save(self, stream: str, rec: ConsumerRecord) -> None: ...

    def drop(self, stream: str, name: str) -> None: ...

    def remove_msg(self, stream: str, seq: int) -> None:
        """Remove one message, keeping the stream's state consistent."""

    def purge_all(self, stream: str) -> None:
        """Remove every message (first_seq becomes last_seq + 1)."""


def _not_found() -> ApiError:
    return nats_error("ConsumerNotFound")


class _Session:
    """One call's view of a stream's consumers: loads them, runs their timers, saves changes."""

    def __init__(self, be: ConsumerStore, stream: str, now: int, *, reconcile: bool = True) -> None:
        self.be, self.stream, self.now = be, stream, now
        self.config = be.stream_config(stream)
        self.view = be.view(stream)
        self.recs = be.records(stream)
        self._saved = {n: r.state.clone() for n, r in self.recs.items()}
        self.changed: set[str] = set()  # consumers whose config changed
        self._tick(reconcile)

    def _tick(self, reconcile: bool = True) -> None:
        for name in list(self.recs):
            rec = self.recs[name]
            deadline = inactive_deadline(rec.state, rec.config)
            if deadline is not None and self.now >= deadline:
                self.delete(name)
                continue
            if reconcile:  # (a purge's session: the purge comes first, as the server's
                # consumer.purge runs on the purge, before any timer; its pending entries
                # are settled there, with the ack time updateAcks records)
                reconcile_removed(rec.state, rec.config, self.view, self.now)
                check_pending(rec.state, rec.config, self.view, self.now)
            expire_pin(rec.state, rec.config, self.now)

    def get(self, name: str) -> ConsumerRecord:
        rec = self.recs.get(name)
        if rec is None:
            raise not_found(_not_found(), name, sorted(self.recs))  # (as a listing)
        return rec

    def save(self) -> None:
        for name, rec in self.recs.items():
            if name in self.changed or self._saved.get(name) != rec.state:
                self.be.save(self.stream, rec)
                self._saved[name] = rec.state.clone()
        self.changed.clear()

    def info(self, rec: ConsumerRecord) -> ConsumerInfo:
        return make_info(self.stream, rec.name, rec.created, rec.config, rec.state, self.view,
                         self.now)

    # -- retention ------------------------------------------------------------------------
    def _no_interest(self, seq: int, subject: str, ignore: str | None = None) -> bool:
        subjects = self.config.subjects
        return not any(
            needs_ack(r.state, r.config, subjects, seq, subject)
            for n, r in self.recs.items() if n != ignore
        )

    def acked(self, seqs: Iterable[int]) -> None:
        """Interest / work-queue retention after acknowledgements (the stream's ``ackMsg``)."""
        if self.config.retention == "limits":
            return
        for seq in seqs:
            msg = self.view.load(seq)
            if msg is not None and self._no_interest(seq, msg.subject):
                self.be.remove_msg(self.stream, seq)

    def delete(self, name: str) -> None:
        rec = self.recs.pop(name)
        self._saved.pop(name, None)
        self.be.drop(self.stream, name)
        if self.config.retention != "interest":
            return
        if not self.recs:
            self.be.purge_all(self.stream)
            return
        start = max(rec.state.asflr, self.view.first_seq)
        last = self.view.last_seq
        while start <= last:
            chunk = self.view.next_msgs(start, (), 1000)
            if not chunk:
                break
            for msg in chunk:
                if msg.seq > last:
                    break
                if self._no_interest(msg.seq, msg.subject):
                    self.be.remove_msg(self.stream, msg.seq)
            start = chunk[-1].seq + 1


class ConsumerEngine:
    """The consumer operations on a :class:`ConsumerStore`, at time ``now`` (ns).

    Every operation first runs the consumers' clocks for the stream (inactive consumers are
    removed, removed messages are settled, expired ack waits are queued for redelivery),
    then applies the request, then saves the consumers that changed.
    """

    def __init__(self, be: ConsumerStore, now: int) -> None:
        self.be, self.now = be, now

    def _session(self, stream: str, *, reconcile: bool = True) -> _Session:
        return _Session(self.be, stream, self.now, reconcile=reconcile)

    def expire_inactive(self, stream: str) -> None:
        """The consumers' clocks of ``stream`` run (those past their inactive_threshold
        removed), nothing else asked."""
        self._session(stream).save()

    def add(self, stream: str, cfg: ConsumerConfig, *, action: str = "",
            pedantic: bool = False) -> ConsumerInfo:
        """``CONSUMER.CREATE``: create (or, with the same name, update) a consumer."""
        s = self._session(stream)
        existing = {n: r.config for n, r in s.recs.items()}
        out, is_update = check_consumer_create(s.config, cfg, existing, action=action,
                                               pedantic=pedantic)
        if is_update:
            rec = s.recs[out.name]
            old_filters = filters_of(rec.config)
            rec.config = out
            s.changed.add(out.name)
            if set(filters_of(out)) != set(old_filters) and s.config.retention == "interest":
                # Messages that lost their interest go (the server's cleanupNoInterestMessages).
                s.acked(range(max(rec.state.asflr, s.view.first_seq), s.view.last_seq + 1))
        else:
            rec = ConsumerRecord(out.name, out, self.now,
                                 start_state(out, s.view, s.config, self.now))
            s.recs[out.name] = rec
            s.changed.add(out.name)
        s.save()
        info = s.info(rec)
        if not is_update and not cfg.name and not cfg.durable_name:
            # a name the server generated is set after the reply's config was copied
            # (consumer.go addConsumerWithAssignment): the create's answer has none;
            # CONSUMER.INFO has it
            import dataclasses

            info.config = dataclasses.replace(info.config, name="")
        return info

    def retention_changed(self, stream: str) -> None:
        """After an update from limits to interest retention: each consumer's acknowledged
        messages are acked again under the new retention, so those no consumer still needs
        go (nats-server's ``checkStateForInterestStream``): the messages of its filter up to
        its ack floor, and past it up to its last delivery those no longer pending (acked
        out of order). A message no consumer's filter matches is never acked: it stays, as
        on the server."""
        s = self._session(stream)
        for rec in list(s.recs.values()):
            st = rec.state
            floor = min(st.asflr, s.view.last_seq)
            last = min(max(floor, st.delivered_s if st.pending else 0), s.view.last_seq)
            wants = interest_in([rec.config])
            filtered = bool(filters_of(rec.config))  # (else every message is its own)
            seqs = []
            for seq in range(max(s.view.first_seq, 1), last + 1):
                if seq > floor and seq in st.pending:
                    continue
                msg = s.view.load(seq) if filtered else None
                if not filtered or (msg is not None and wants(msg.subject)):
                    seqs.append(seq)
            s.acked(seqs)
        s.save()

    def info(self, stream: str, name: str) -> ConsumerInfo:
        s = self._session(stream)
        rec = s.get(name)
        s.save()
        return s.info(rec)

    def infos(self, stream: str) -> list[ConsumerInfo]:
        """Every consumer of ``stream``, by name (as the server lists them)."""
        s = self._session(stream)
        s.save()
        return [s.info(s.recs[n]) for n in sorted(s.recs)]

    def names(self, stream: str) -> list[str]:
        """The names of the consumers of ``stream``, sorted (as the server lists them)."""
        s = self._session(stream)
        s.save()
        return sorted(s.recs)

    def delete(self, stream: str, name: str) -> None:
        s = self._session(stream)
        s.get(name)
        s.delete(name)
        s.save()

    def fetch(self, stream: str, name: str, batch: int = 1,
              priority: PullPriority | None = None) -> list[DeliveredMsg]:
        """One pull request for up to ``batch`` messages, answered at once (no waiting);
        ``priority``: the request's priority group fields (core/priority.py)."""
        s = self._session(stream)
        rec = s.get(name)
        cfg = rec.config
        req = priority or PullPriority()
        # A pull request the server refuses answers with a status (no err_code), in the
        # order of the server's processNextMsgRequest.
        try:
            if cfg.deliver_subject:
                raise ApiError(409, 0, "Consumer is push based")
            if cfg.max_batch > 0 and batch > cfg.max_batch:
                raise ApiError(409, 0, f"Exceeded MaxRequestBatch of {cfg.max_batch}")
            check_request(rec.state, cfg, req, self.now)
        except ApiError:
            s.save()
            raise
        pause_until = _time_ns(cfg.pause_until)
        if pause_until and self.now < pause_until:
            rec.state.last_req = self.now
            s.save()
            return []
        pin: str | None = None
        if cfg.priority_policy == "pinned_client" and _deliverable(rec.state, cfg, s.view):
            try:
                pin = claim_pin(rec.state, cfg, req, self.now)
            except ApiError:
                s.save()
                raise
            if pin is None:  # another client is pinned: this request waits, gets nothing
                rec.state.last_req = self.now
                s.save()
                return []
        gate = None
        if cfg.priority_policy == "overflow" and (req.min_pending or req.min_ack_pending):
            def gate(npc: int, ack_pending: int) -> bool:
                return overflow_allows(req, npc, ack_pending)
        deliveries, auto_acked = deliver(rec.state, cfg, s.view, self.now, batch, gate)
        msgs = [delivered_msg(stream, rec.name, cfg, d, pin) for d in deliveries]
        s.save()
        s.acked(auto_acked)
        return msgs

    def unpin(self, stream: str, name: str, group: str) -> None:
        """``CONSUMER.UNPIN``: the pinned client of ``group`` loses its pin (the server's
        jsConsumerUnpinRequest checks, in its order)."""
        if not group:
            raise nats_error("InvalidJSON", err="consumer group not specified")
        if not valid_group_name(group):
            raise nats_error("ConsumerInvalidGroupName")
        s = self._session(stream)
        rec = s.get(name)
        if group not in rec.config.priority_groups:
            s.save()
            raise nats_error("ConsumerInvalidPriorityGroup")
        unpin(rec.state)
        s.save()

    def pause(self, stream: str, name: str, until: int) -> dict[str, Any]:
        """``CONSUMER.PAUSE``: deliver nothing until ``until`` (ns; 0 resumes). The answer:
        ``paused``, ``pause_until`` and, while paused, ``pause_remaining``."""
        s = self._session(stream)
        rec = s.get(name)
        cfg = rec.config.replace(pause_until=format_rfc3339_nano(until) if until else "")
        # the server's jsConsumerPauseRequest sets the static metadata again: a pause needs
        # API level 1 while it lasts
        set_static_metadata(cfg, required_api_level(cfg))
        rec.config = cfg
        s.changed.add(name)
        s.save()
        out: dict[str, Any] = {"paused": self.now < until,
                               "pause_until": format_rfc3339_nano(until)}
        if out["paused"]:
            out["pause_remaining"] = pause_left(until, self.now)
        return out

    def reset(self, stream: str, name: str, seq: int = 0) -> tuple[ConsumerInfo, int]:
        """``CONSUMER.RESET`` (2.14): the consumer starts again at stream sequence ``seq``
        (0: just after its ack floor), with nothing pending (the server's
        ``resetStartingSeqLocked``). Returns the info and the sequence reset to."""
        s = self._session(stream)
        rec = s.get(name)
        cfg, st = rec.config, rec.state
        if seq == 0:
            seq = st.asflr + 1
        elif cfg.deliver_policy in ("all", "undefined"):
            pass
        elif cfg.deliver_policy == "by_start_sequence":
            if seq < cfg.opt_start_seq:
                s.save()
                raise nats_error("ConsumerInvalidReset", err="below start seq")
        elif cfg.deliver_policy == "by_start_time":
            if seq < s.view.seq_from_time(_time_ns(cfg.opt_start_time)):
                s.save()
                raise nats_error("ConsumerInvalidReset", err="below start time")
        else:
            s.save()
            raise nats_error("ConsumerInvalidReset", err="not allowed")
        seq = max(seq, 1)
        st.pending, st.rdc, st.rdq = {}, {}, []
        st.sseq, st.dseq = seq, 1
        st.adflr, st.asflr = 0, seq - 1
        st.ldt = st.lat = 0
        # the consumer store's Reset: an empty state started at seq - 1
        st.delivered_c = st.ack_floor_c = 0
        st.delivered_s = st.ack_floor_s = seq - 1
        s.changed.add(name)
        s.save()
        if s.config.retention == "interest":
            # messages that lost their interest go (checkStateForInterestStream)
            s.acked(range(s.view.first_seq, min(seq - 1, s.view.last_seq) + 1))
        return s.info(rec), seq

    def _on_msg(self, stream: str, name: str,
                fn: Callable[[ConsumerState, ConsumerConfig], Any]) -> Any:
        s = self._session(stream)
        rec = s.get(name)
        result = fn(rec.state, rec.config)
        s.save()
        if isinstance(result, list):
            s.acked(result)
            return bool(result)
        return result

    def ack(self, stream: str, name: str, seq: int, consumer_seq: int | None = None) -> bool:
        """``+ACK`` of the delivery of stream sequence ``seq``; False when ``seq`` was not
        pending (never delivered, acknowledged already, or ack policy none). An ack comes
        from a delivery (its reply subject, as a client sends it): a sequence never
        delivered acknowledges nothing, and never the pending ones below it (ack policy
        all). A delivered one no longer pending (its deliveries used up by max_deliver, or
        acknowledged already) is still acted on with ack policy explicit, as the server's
        processAckMsg does: its redelivery count goes, and an interest or work-queue stream
        removes the message no consumer needs any more. One this consumer never delivered
        (past its position, or of a subject its filters leave out: a typed sequence that is
        no delivery of it) changes nothing."""
        s = self._session(stream)
        rec = s.get(name)
        pending = seq in rec.state.pending
        if not pending:
            msg = s.view.load(seq) if seq < rec.state.sseq else None
            if msg is None or not interest_in([rec.config])(msg.subject):
                return False
        done = bool(self._on_msg(stream, name, lambda st, cfg: ack_msg(
            st, cfg, seq, self.now, consumer_seq)))
        return pending and done

    def term(self, stream: str, name: str, seq: int, consumer_seq: int | None = None) -> bool:
        """``+TERM``: never redeliver ``seq`` (acknowledged as far as retention goes)."""
        return self._on_msg(stream, name, lambda st, cfg: term_msg(
            st, cfg, seq, self.now, consumer_seq))

    def nak(self, stream: str, name: str, seq: int, *, delay: int | None = None,
            consumer_seq: int | None = None) -> bool:
        """``-NAK``: redeliver ``seq`` at the next fetch, or after ``delay`` ns."""
        return self._on_msg(stream, name, lambda st, cfg: nak_msg(
            st, cfg, seq, self.now, delay, consumer_seq))

    def in_progress(self, stream: str, name: str, seq: int) -> bool:
        """``+WPI``: restart the ack wait of ``seq``."""
        return self._on_msg(stream, name, lambda st, cfg: progress_msg(st, cfg, seq, self.now))

    def purged(self, stream: str, *, subject: str = "") -> None:
        """Tell the consumers of ``stream`` about a purge that just happened (``subject``:
        the purge's filter; empty for a full purge and for ``seq``/``keep`` purges).

        A purge is not a series of single removals: the purged pending messages are not
        terminated one by one (the server's ``consumer.purge``), so they are not settled first.
        """
        s = self._session(stream, reconcile=False)
        view = s.view
        first, last = view.first_seq, view.last_seq
        fseq = first
        if subject:
            found = view.next_msgs(first, [subject], 1)
            fseq = found[0].seq if found else 0
        for rec in s.recs.values():
            filters = filters_of(rec.config)
            start, wider = fseq, False
            # Every one of the consumer's filters is the purged subject or inside it (the
            # server's purgeLocked and consumer isEqualOrSubsetMatch, 2.15.1: all of them;
            # a consumer with a filter outside it keeps its messages there) ...
            do = not subject or (bool(filters) and all(
                f == subject or is_subset(f, subject) for f in filters))
            # ... or its filters are wider than it (one of them, or none: every subject): the
            # cursor stays at the stream's first message and only its pending messages that
            # are gone are dropped.
            if not do and (not filters or any(f == subject or is_subset(subject, f)
                                              for f in filters)):
                do, wider, start = True, True, first
            if not do:
                continue
            if start == 0 and not wider:
                start = last + 1
            present = (lambda seq: view.load(seq) is not None) if wider else None
            purge_state(rec.state, rec.config, start, self.now, wider=wider, present=present)
        s.save()


def _deliverable(st: ConsumerState, cfg: ConsumerConfig, view: StreamView) -> bool:
    """Whether a pull request would get a message now (a redelivery, or a new message that
    max_ack_pending lets through)."""
    if st.rdq:
        return True
    maxp = cfg.max_ack_pending if cfg.ack_policy != "none" else 0
    if maxp > 0 and len(st.pending) >= maxp:
        return False
    if st.lss:
        return True
    return bool(view.next_msgs(st.sseq, filters_of(cfg), 1))


def interest_in(configs: Iterable[ConsumerConfig]) -> Callable[[str], bool]:
    """Whether an interest stream keeps a new message on a subject: some consumer's filter
    matches it (an unfiltered consumer matches everything; no consumer, nothing)."""
    filters: list[str] = []
    for cfg in configs:
        fs = filters_of(cfg)
        if not fs:
            return lambda subject: True
        filters.extend(fs)
    if not filters:
        return lambda subject: False
    return SubjectFilter(filters).matches


# --------------------------------------------------------------------------------------------
# An in-memory consumer store (tests, and a reference for the SQLite one)
# --------------------------------------------------------------------------------------------
class MemoryConsumerStore:
    """Streams and consumers in memory, with the publish-side interest rule."""

    def __init__(self) -> None:
        self.streams: dict[str, tuple[StreamConfig, MemoryStream]] = {}
        self.consumers: dict[str, dict[str, ConsumerRecord]] = {}

    def add_stream(self, cfg: StreamConfig) -> None:
        self.streams[cfg.name] = (cfg, MemoryStream())
        self.consumers[cfg.name] = {}

    def publish(self, stream: str, subject: str, data: bytes = b"", ts: int = 0,
                hdr: bytes | None = None) -> int:
        cfg, mem = self.streams[stream]
        if cfg.retention == "interest":
            keep = interest_in(r.config for r in self.consumers[stream].values())
            if not keep(subject):
                return mem.skip()
        return mem.add(subject, data, ts, hdr)

    # -- ConsumerStore -----------------------------------------------------------------------
    def stream_config(self, stream: str) -> StreamConfig:
        if stream not in self.streams:
            raise nats_error("StreamNotFound")
        return self.streams[stream][0]

    def view(self, stream: str) -> MemoryStream:
        return self.streams[stream][1]

    def records(self, stream: str) -> dict[str, ConsumerRecord]:
        return {n: r.copy() for n, r in self.consumers[stream].items()}

    def save(self, stream: str, rec: ConsumerRecord) -> None:
        self.consumers[stream][rec.name] = rec.copy()

    def drop(self, stream: str, name: str) -> None:
        self.consumers[stream].pop(name, None)

    def remove_msg(self, stream: str, seq: int) -> None:
        self.streams[stream][1].remove(seq)

    def purge_all(self, stream: str) -> None:
        self.streams[stream][1].purge()
