"""The one interface the CLI uses for NATS: streams, messages, consumers, publish, subscribe.

Two implementations: the embedded engine (:class:`jetlink.core.jetstream.JetStream`, over a
data directory's SQLite database) and the live client
(:class:`jetlink.core.live.jetstream.LiveJetStream`, over a nats-server's ``$JS.API``). The
CLI holds one of them, chosen once per invocation (cli/common.py ``open_jetstream``), and
never asks which: what only one of them can do is refused by that one, with a sentence saying
why. Key-Value buckets are built over this interface (jetlink.core.kv), so both backends
share the KV rules.

Values crossing the seam are described here as protocols (``StreamInfoAPI``, ``StoredMsgAPI``,
``PubAckAPI``, ``ConsumerInfoAPI``, ``DeliveredMsgAPI``, ``CoreMsgAPI``), met by the engine's
result types (jetlink.core.messages, jetlink.core.consumers) and the live client's, each with
``to_json()`` giving the NATS API's document. Policies are ``Literal`` types, named as nats.py
names its enums (``RetentionPolicy``, ``DiscardPolicy``, ``StorageType``, ``DeliverPolicy``,
``AckPolicy``, ``ReplayPolicy``; defined with the configs in jetlink.core.config). The live
client's ``to_json()`` returns the document exactly as the server sent it; ``.config`` /
``.state`` are parsed from it for the rules and the renderers. Errors are
:class:`~jetlink.core.errors.ApiError` with the server's codes (the engine's own, or the live
server's as it answered) and
:class:`~jetlink.core.errors.JetlinkError` for everything else.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .config.consumer import AckPolicy, DeliverPolicy, ReplayPolicy
from .config.stream import DiscardPolicy, RetentionPolicy, StorageType
from .headers import HeadersIn

if TYPE_CHECKING:
    from .config.consumer import ConsumerConfig
    from .config.stream import StreamConfig
    from .consumers import SequenceInfo
    from .errors import JetlinkError
    from .fastpublish import FastBatchResult
    from .messages import StreamState
    from .priority import PullPriority

__all__ = [
    "AckPolicy",
    "ConsumerInfoAPI",
    "CoreMsgAPI",
    "DeliverPolicy",
    "DeliveredMsgAPI",
    "DiscardPolicy",
    "JetStreamAPI",
    "PubAckAPI",
    "ReplayPolicy",
    "RetentionPolicy",
    "StorageType",
    "StoredMsgAPI",
    "StreamInfoAPI",
    "SubscriptionAPI",
]

Headers = HeadersIn | None
Outgoing = tuple[str, bytes, Headers]


class StreamInfoAPI(Protocol):
    """A stream's info: ``config`` and ``state`` parsed, ``to_json()`` the STREAM.INFO
    document (the live server's as it sent it)."""

    @property
    def name(self) -> str: ...
    @property
    def config(self) -> StreamConfig: ...
    @property
    def state(self) -> StreamState: ...
    @property
    def created_ns(self) -> int: ...
    @property
    def ts_ns(self) -> int: ...
    @property
    def cluster(self) -> str: ...
    @property
    def mirror(self) -> dict[str, Any] | None:
        """The mirror's StreamSourceInfo document, None without a mirror."""
    @property
    def sources(self) -> list[dict[str, Any]]:
        """The sources' StreamSourceInfo documents."""
    def to_json(self) -> dict[str, Any]: ...


class StoredMsgAPI(Protocol):
    """A stored message (``to_json``: subject, seq, time, headers, data in base64)."""

    @property
    def subject(self) -> str: ...
    @property
    def seq(self) -> int: ...
    @property
    def ts(self) -> int:
        """When it was stored: ns since the epoch."""
    @property
    def hdr(self) -> bytes | None:
        """The header block as stored (``NATS/1.0\\r\\n...``), None without headers."""
    @property
    def data(self) -> bytes: ...
    @property
    def headers(self) -> dict[str, list[str]]: ...
    def to_json(self) -> dict[str, Any]: ...


class PubAckAPI(Protocol):
    """A JetStream publish's acknowledgement (``to_json``: stream, seq, duplicate?, val?)."""

    @property
    def stream(self) -> str: ...
    @property
    def seq(self) -> int: ...
    @property
    def duplicate(self) -> bool: ...
    @property
    def val(self) -> str | None:
        """A counter stream's new value."""
    def to_json(self) -> dict[str, Any]: ...


class ConsumerInfoAPI(Protocol):
    """A consumer's info: ``config`` parsed, ``to_json()`` the CONSUMER.INFO document."""

    @property
    def stream_name(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def created(self) -> int: ...
    @property
    def config(self) -> ConsumerConfig: ...
    @property
    def delivered(self) -> SequenceInfo: ...
    @property
    def ack_floor(self) -> SequenceInfo: ...
    @property
    def num_ack_pending(self) -> int: ...
    @property
    def num_redelivered(self) -> int: ...
    @property
    def num_waiting(self) -> int: ...
    @property
    def num_pending(self) -> int: ...
    @property
    def ts(self) -> int: ...
    @property
    def paused(self) -> bool: ...
    @property
    def pause_remaining(self) -> int: ...
    def to_json(self) -> dict[str, Any]: ...


class DeliveredMsgAPI(StoredMsgAPI, Protocol):
    """A message a pull request received, with its delivery metadata; ``reply`` is the
    ``$JS.ACK`` subject its acknowledgement goes to."""

    @property
    def stream(self) -> str: ...
    @property
    def consumer(self) -> str: ...
    @property
    def consumer_seq(self) -> int: ...
    @property
    def num_delivered(self) -> int: ...
    @property
    def num_pending(self) -> int: ...
    @property
    def reply(self) -> str: ...


class CoreMsgAPI(Protocol):
    """A core message a subscription received (``to_json``: subject, time, headers, data)."""

    @property
    def subject(self) -> str: ...
    @property
    def hdr(self) -> bytes | None: ...
    @property
    def data(self) -> bytes: ...
    @property
    def ts(self) -> int:
        """When it was received: ns since the epoch."""
    def to_json(self) -> dict[str, Any]: ...


@runtime_checkable
class SubscriptionAPI(Protocol):
    def next(self, timeout: float | None = 1.0) -> CoreMsgAPI | None:
        """The next core message, or None when ``timeout`` seconds pass without one."""

    def close(self) -> None: ...


@runtime_checkable
class JetStreamAPI(Protocol):
    """What ``jetlink stream|consumer|pub|sub|kv`` do with a NATS system."""

    # -- where it acts (for messages: "stream ORDERS in cluster west" / "on nats://...")
    @property
    def where(self) -> str: ...
    # the external API prefixes that name this JetStream itself (a mirror through one of
    # them reads its own streams: ``$JS.API``, ``$JS.<its domain or cluster>.API``)
    @property
    def own_api_prefixes(self) -> frozenset[str]: ...

    # -- streams (a config, or its JSON document)
    def add_stream(self, cfg: StreamConfig | Mapping[str, Any]) -> StreamInfoAPI: ...
    def update_stream(self, cfg: StreamConfig | Mapping[str, Any]) -> StreamInfoAPI: ...
    def delete_stream(self, name: str) -> None: ...
    def stream_info(self, name: str, *, subjects_filter: str | None = None,
                    deleted_details: bool = False) -> StreamInfoAPI: ...
    def streams(self, subject: str | None = None) -> Sequence[StreamInfoAPI]: ...
    def stream_names(self, subject: str | None = None) -> list[str]: ...
    # every stream's config (by name), without its state: what a lookup by config reads
    # (to be read, not changed)
    def stream_configs(self) -> list[StreamConfig]: ...
    def purge_stream(self, name: str, *, subject: str | None = None, seq: int | None = None,
                     keep: int | None = None) -> int: ...

    # -- messages
    # direct: the stream allows direct gets (ADR-31): one reads the message when the server
    # does not let this user ask STREAM.MSG.GET (what nats.go's KV reads; any server
    # holding the stream, a mirror_direct mirror too, may answer one)
    def get_msg(self, name: str, seq: int | None = None, *, last_by_subj: str | None = None,
                next_by_subj: str | None = None, direct: bool = False) -> StoredMsgAPI: ...
    def delete_msg(self, name: str, seq: int) -> None: ...
    def subjects(self, name: str, filter: str = ">") -> dict[str, int]: ...
    def messages(self, name: str, *, start_seq: int | None = None,
                 start_time_ns: int | None = None, subject: str | None = None,
                 chunk: int = 1000) -> Iterator[StoredMsgAPI]: ...
    def last_msgs(self, name: str, patterns: Iterable[str]) -> Sequence[StoredMsgAPI]:
        """The latest message of every subject matching ``patterns``, by sequence."""
    def count_msgs(self, name: str, *, start_seq: int, subject: str | None = None
                   ) -> int | None:
        """How many stored messages at or after ``start_seq`` match ``subject`` (None:
        every one): a consumer's ``num_pending`` from there. None where only reading them
        all would tell (a work-queue stream on a server: it takes no consumer without
        acks)."""

    # -- publish / subscribe (None: the answer of a no_ack stream; an error in a sequence:
    # that message was refused). Results come as each implementation's own list.
    def publish(self, subject: str, data: bytes = b"", headers: Headers = None
                ) -> PubAckAPI | None: ...
    def publish_many(self, msgs: Iterable[Outgoing]
                     ) -> Sequence[PubAckAPI | JetlinkError | None]: ...
    def publish_batch(self, msgs: Iterable[Outgoing]
                      ) -> Sequence[PubAckAPI | JetlinkError | None]: ...
    def publish_core(self, subject: str, data: bytes = b"", headers: Headers = None) -> None: ...
    def kv_write_subject(self, subject: str) -> str:
        """The subject a KV put, delete or purge of ``subject`` (``$KV.<bucket>.<key>``) is
        published on: behind the API prefix of a JetStream addressed through a domain."""
    def publish_fast_batch(self, msgs: Iterable[Outgoing], *, batch_id: str, flow: int = 100,
                           gap_ok: bool = False, max_outstanding: int = 2
                           ) -> FastBatchResult:
        """One fast batch (ADR-50 fast ingest, 2.14), the last message committing: the
        server's answers and its final one (core/fastpublish.py)."""
    def subscribe(self, subject: str, *, queue: str = "") -> SubscriptionAPI: ...

    # -- consumers (a config, or its JSON document)
    def add_consumer(self, stream: str, config: ConsumerConfig | Mapping[str, Any], *,
                     action: str = "", pedantic: bool = False) -> ConsumerInfoAPI: ...
    def consumer_info(self, stream: str, name: str) -> ConsumerInfoAPI: ...
    # (a Listing: its ``missing``, the names a live server could not reach)
    def consumers(self, stream: str) -> Sequence[ConsumerInfoAPI]: ...
    def consumer_names(self, stream: str) -> list[str]: ...
    def delete_consumer(self, stream: str, name: str) -> None: ...
    def fetch(self, stream: str, consumer: str, batch: int = 1,
              priority: PullPriority | None = None) -> Sequence[DeliveredMsgAPI]: ...
    def unpin_consumer(self, stream: str, consumer: str, group: str) -> None: ...
    def pause_consumer(self, stream: str, consumer: str, until: int) -> dict[str, Any]: ...
    def reset_consumer(self, stream: str, consumer: str, seq: int = 0
                       ) -> tuple[ConsumerInfoAPI, int]: ...
    def ack(self, stream: str, consumer: str, seq: int,
            consumer_seq: int | None = None) -> bool: ...
    def nak(self, stream: str, consumer: str, seq: int, *, delay: int | None = None,
            consumer_seq: int | None = None) -> bool: ...
    def term(self, stream: str, consumer: str, seq: int,
             consumer_seq: int | None = None) -> bool: ...
