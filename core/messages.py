"""Result types of the engine, with ``to_json()`` in the NATS shapes.

``PubAck``, ``StoredMsg``, ``StreamState``, ``StreamInfo``. Times are int nanoseconds
(UTC, since the epoch) inside; ``to_json`` prints them as Go prints ``time.Time`` (RFC3339Nano,
``0001-01-01T00:00:00Z`` when unset).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .clock import format_rfc3339_nano
from .errors import JetlinkError
from .headers import Headers, decode_headers

if TYPE_CHECKING:
    from .config.stream import StreamConfig

__all__ = ["Listing", "PubAck", "StoredMsg", "StreamInfo", "StreamState", "UnstoredAck",
           "ack_metadata"]


class Listing(list[Any]):
    """A LIST answer (STREAM.LIST): its items, and ``missing``, the names the server could
    not reach in time (a cluster's streams whose servers are gone: their items carry no
    state; natscli's "Inaccessible Streams"). The engine reaches every one."""

    def __init__(self, items: Iterable[Any] = (), missing: Iterable[str] = ()) -> None:
        super().__init__(items)
        self.missing = sorted(missing)


class PubAck:
    """``{"stream", "domain"?, "seq", "duplicate"?, "val"?}`` (the server's PubAck, in its
    key order); ``val`` is a counter stream's new value, ``domain`` the JetStream domain of
    the server that stored it (nats-server stream.go: only with ``jetstream.domain`` set)."""

    __slots__ = ("stream", "seq", "duplicate", "val", "domain")

    def __init__(self, stream: str, seq: int, duplicate: bool = False, val: str | None = None,
                 domain: str | None = None):
        self.stream = stream
        self.seq = seq
        self.duplicate = duplicate
        self.val = val
        self.domain = domain or None

    def _head(self) -> dict[str, Any]:
        out: dict[str, Any] = {"stream": self.stream}
        if self.domain:
            out["domain"] = self.domain
        out["seq"] = self.seq
        return out

    def to_json(self) -> dict[str, Any]:
        out = self._head()
        if self.duplicate:
            out["duplicate"] = True
        if self.val is not None:
            out["val"] = self.val
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PubAck) and (
            self.stream, self.seq, self.duplicate, self.val, self.domain
        ) == (other.stream, other.seq, other.duplicate, other.val, other.domain)

    def __repr__(self) -> str:
        dup = ", duplicate=True" if self.duplicate else ""
        dom = f", domain={self.domain!r}" if self.domain else ""
        return f"PubAck({self.stream!r}, {self.seq}{dup}{dom})"



class UnstoredAck(PubAck):
    """The PubAck of a message an interest-retention stream with nobody interested did not
    store (its sequence used, as the server's): the same document to a publisher; a source
    copying it does not report it as the last origin sequence stored (StreamSourceInfo's
    ``seq`` moves only with what is stored)."""

    __slots__ = ()

class BatchPubAck(PubAck):
    """The PubAck of an atomic batch's commit (ADR-50): ``{"stream", "domain"?, "seq",
    "batch", "count"}``, ``seq`` the batch's last message, ``count`` how many it stored."""

    __slots__ = ("batch", "count")

    def __init__(self, stream: str, seq: int, batch: str, count: int,
                 domain: str | None = None) -> None:
        super().__init__(stream, seq, domain=domain)
        self.batch = batch
        self.count = count

    def to_json(self) -> dict[str, Any]:
        return {**self._head(), "batch": self.batch, "count": self.count}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BatchPubAck) and (
            self.stream, self.seq, self.batch, self.count, self.domain
        ) == (other.stream, other.seq, other.batch, other.count, other.domain)

    def __repr__(self) -> str:
        return f"BatchPubAck({self.stream!r}, {self.seq}, {self.batch!r}, {self.count})"


@dataclass
class StoredMsg:
    """A stored message: ``{"subject", "seq", "time", "headers", "data" (base64)}``."""

    subject: str
    seq: int
    ts: int
    hdr: bytes | None
    data: bytes

    @property
    def headers(self) -> Headers:
        return decode_headers(self.hdr)

    @property
    def time(self) -> str:
        return format_rfc3339_nano(self.ts)

    def to_json(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "seq": self.seq,
            "time": format_rfc3339_nano(self.ts),
            "headers": decode_headers(self.hdr),
            "data": base64.b64encode(self.data).decode("ascii"),
        }

    def api_doc(self) -> dict[str, Any]:
        """The server's StoredMsg, as ``$JS.API.STREAM.MSG.GET`` answers it in ``message``:
        ``{"subject", "seq", "hdrs" (the header block, base64; absent without headers),
        "data" (base64; absent when empty), "time"}``."""
        out: dict[str, Any] = {"subject": self.subject, "seq": self.seq}
        if self.hdr:
            out["hdrs"] = base64.b64encode(self.hdr).decode("ascii")
        if self.data:
            out["data"] = base64.b64encode(self.data).decode("ascii")
        out["time"] = format_rfc3339_nano(self.ts)
        return out


@dataclass
class StreamState:
    messages: int = 0
    bytes: int = 0
    first_seq: int = 0
    first_ts: int = 0
    last_seq: int = 0
    last_ts: int = 0
    num_deleted: int = 0
    deleted: list[int] | None = None
    num_subjects: int = 0
    subjects: dict[str, int] | None = None
    consumer_count: int = 0

    def to_json(self) -> dict[str, Any]:
        """The server's field order; num_subjects/subjects/num_deleted/deleted omitted if empty."""
        out: dict[str, Any] = {
            "messages": self.messages,
            "bytes": self.bytes,
            "first_seq": self.first_seq,
            "first_ts": format_rfc3339_nano(self.first_ts),
            "last_seq": self.last_seq,
            "last_ts": format_rfc3339_nano(self.last_ts),
        }
        if self.num_subjects:
            out["num_subjects"] = self.num_subjects
        if self.subjects:
            out["subjects"] = dict(sorted(self.subjects.items()))  # a Go map: keys sorted
        if self.num_deleted:
            out["num_deleted"] = self.num_deleted
        if self.deleted:
            out["deleted"] = list(self.deleted)
        out["consumer_count"] = self.consumer_count
        return out


@dataclass
class StreamInfo:
    """``{"config", "created", "state", "cluster", "mirror"?, "sources"?, "ts"}`` (the server's
    order).

    ``config`` is the stored StreamConfig; ``to_json`` adds the two metadata keys the server
    adds to its responses (``_nats.ver``, ``_nats.level``; not to STREAM.LIST's). ``cluster``
    (the leader) is named only in STREAM.INFO's answer, as a single server does. ``mirror`` /
    ``sources`` are StreamSourceInfo documents filled in by the replication layer (None / []
    otherwise).
    """

    config: StreamConfig
    created_ns: int
    state: StreamState
    ts_ns: int
    cluster: str = ""
    mirror: dict[str, Any] | None = None
    sources: list[dict[str, Any]] = field(default_factory=list)
    response_metadata: bool = True  # (STREAM.LIST's configs have none)

    @property
    def name(self) -> str:
        return self.config.name

    def to_json(self) -> dict[str, Any]:
        from .config.validate import with_response_metadata

        out: dict[str, Any] = {
            "config": (with_response_metadata(self.config) if self.response_metadata
                       else self.config).to_json(),
            "created": format_rfc3339_nano(self.created_ns),
            "state": self.state.to_json(),
        }
        if self.cluster:
            out["cluster"] = {"leader": self.cluster}
        if self.mirror is not None:
            out["mirror"] = self.mirror
        if self.sources:
            out["sources"] = self.sources
        out["ts"] = format_rfc3339_nano(self.ts_ns)
        return out


def ack_metadata(reply: str) -> dict[str, Any]:
    """The delivery metadata in a ``$JS.ACK`` reply subject: v1
    ``$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>`` or v2
    ``$JS.ACK.<domain>.<account hash>.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.
    <pending>[.<token>...]``."""
    t = reply.split(".")
    if len(t) < 9 or t[0] != "$JS" or t[1] != "ACK":
        raise JetlinkError(f"not a JetStream message (reply subject {reply!r})")
    if len(t) == 9:
        base, domain = 2, ""
    elif len(t) >= 11:
        base, domain = 4, ("" if t[2] == "_" else t[2])
    else:
        raise JetlinkError(f"not a JetStream message (reply subject {reply!r})")
    try:
        return {
            "domain": domain,
            "stream": t[base],
            "consumer": t[base + 1],
            "num_delivered": int(t[base + 2]),
            "seq": int(t[base + 3]),
            "consumer_seq": int(t[base + 4]),
            "ts": int(t[base + 5]),
            "num_pending": int(t[base + 6]),
        }
    except ValueError:
        raise JetlinkError(f"not a JetStream message (reply subject {reply!r})") from None
