"""RePublish, what the stream store needs of it: a stream's compiled rule and the queue.

The server's rule (nats-server 2.15 ``processJetStreamMsg``, ADR-28 "JetStream RePublish"):
after a message is stored, when the stream has ``republish`` and the stored subject (after the
stream's own ``subject_transform``) matches ``republish.src``, the message is published to
``transform(src -> dest)(subject)`` with these headers appended, in this order, after the
message's own (stored) headers::

    Nats-Stream: <stream>
    Nats-Subject: <stored subject>
    Nats-Sequence: <seq>
    Nats-Time-Stamp: <stored time, RFC3339Nano UTC>
    Nats-Last-Sequence: <the subject's last stored sequence before this one, 0 if none>
    Nats-Msg-Size: <body length>          (headers_only: the body is then empty)

Every store of the stream republishes: client publishes, subject delete markers, mirrored and
sourced messages (checked on nats-server 2.15.1). Nothing is republished for a duplicate
(``Nats-Msg-Id`` within the window), a refused message, or an interest stream's message
nobody is interested in (the sequence is used, nothing is stored).

Here: :func:`compile_rule` gives a ``StreamDef`` (core/streamdef.py) its
:class:`RePublishRule`; the store path (``StreamTxn._store``, core/streamstore/append.py)
calls :meth:`RePublishRule.after_store`, which queues the republish on the transaction
(``Txn.cache[PENDING]``). core/republish.py delivers the queue. A chain stops after
:data:`MAX_HOPS` republishes: the next one is dropped and an ERROR is logged on the logger
``jetlink.republish``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from .clock import format_rfc3339_nano
from .subjects import is_valid_publish_subject
from .transform import SubjectTransform, TransformError, compile_transform

if TYPE_CHECKING:  # pragma: no cover
    from .config.stream import StreamConfig

__all__ = [
    "HOP",
    "MAX_HOPS",
    "PENDING",
    "RePublishRule",
    "compile_rule",
    "describe",
    "republish_header",
]

log = logging.getLogger("jetlink.republish")

MAX_HOPS = 8  # republishes in one chain; the next one is dropped with a logged error

# Keys in ``Txn.cache`` (the transaction's scratch space).
PENDING = "republish.pending"  # [(hop, subject, hdr, data)] waiting for Txn.flush
HOP = "republish.hop"  # the hop of the republished message being stored right now

_HDR_LINE = b"NATS/1.0\r\n"


class RePublishRule:
    """A stream's compiled ``republish`` (immutable; one per ``StreamDef``)."""

    __slots__ = ("stream", "transform", "headers_only")

    def __init__(self, stream: str, transform: SubjectTransform, headers_only: bool) -> None:
        self.stream = stream
        self.transform = transform
        self.headers_only = headers_only

    def target(self, subject: str) -> str | None:
        """The republish subject of a stored ``subject`` (None: not republished)."""
        out = self.transform.apply(subject)
        if out is None or not is_valid_publish_subject(out):
            return None
        return out

    def after_store(self, cache: dict[Any, Any], subject: str, hdr: bytes | None,
                    data: bytes, seq: int, ts: int, last_seq: int) -> None:
        """Queue the republish of a message the stream just stored on the transaction whose
        scratch space is ``cache``.

        ``subject``/``hdr``/``data``/``ts`` as stored; ``last_seq``: the subject's last
        sequence before this store (0 if none). Called by the store path.
        """
        target = self.target(subject)
        if target is None:
            return
        hop = cache.get(HOP, 0) + 1
        if hop > MAX_HOPS:
            log.error(
                "republish chain stopped after %d hops: stream %s did not republish %s "
                "(seq %d) to %s (streams republishing into each other?)",
                MAX_HOPS, self.stream, subject, seq, target)
            return
        if self.headers_only:
            rhdr = republish_header(hdr, self.stream, subject, seq, ts, last_seq, len(data))
            body = b""
        else:
            rhdr = republish_header(hdr, self.stream, subject, seq, ts, last_seq)
            body = data
        pending = cache.get(PENDING)
        if pending is None:
            pending = cache[PENDING] = []
        pending.append((hop, target, rhdr, body))

    def __repr__(self) -> str:
        return (f"RePublishRule({self.stream!r}, {self.transform.src!r} -> "
                f"{self.transform.dest!r}, headers_only={self.headers_only})")


def compile_rule(cfg: StreamConfig) -> RePublishRule | None:
    """The stream's rule, or None when it does not republish.

    An empty ``src`` is ``>``. An empty ``dest`` republishes nothing (the server builds no
    transform for it when the stream is created).
    """
    rp = cfg.republish
    if rp is None or not rp.dest:
        return None
    try:
        tr = compile_transform(rp.src or ">", rp.dest)
    except TransformError:  # refused by the config checks; never stored
        return None
    return RePublishRule(cfg.name, tr, bool(rp.headers_only))


def republish_header(hdr: bytes | None, stream: str, subject: str, seq: int, ts: int,
                     last_seq: int, msg_size: int | None = None) -> bytes:
    """The republished header block: the stored block (its final empty line dropped) followed
    by the republish headers; ``msg_size`` (headers_only) adds ``Nats-Msg-Size``."""
    base = hdr[:-2] if hdr and len(hdr) >= len(_HDR_LINE) + 2 else _HDR_LINE
    extra = (
        f"Nats-Stream: {stream}\r\nNats-Subject: {subject}\r\nNats-Sequence: {seq}\r\n"
        f"Nats-Time-Stamp: {format_rfc3339_nano(ts)}\r\nNats-Last-Sequence: {last_seq}\r\n"
    )
    if msg_size is not None:
        extra += f"Nats-Msg-Size: {msg_size}\r\n"
    return base + extra.encode() + b"\r\n"


def describe(rule: RePublishRule | None) -> dict[str, Any] | None:
    """The rule as a JSON document (tests, debugging)."""
    if rule is None:
        return None
    return {"stream": rule.stream, "src": rule.transform.src, "dest": rule.transform.dest,
            "headers_only": rule.headers_only}
