"""The one interface the CLI uses for NATS: streams, messages, consumers, publish, subscribe.

Two implementations: the embedded engine (:class:`jetlink.core.jetstream.JetStream`, over a
data directory's SQLite database) and the live client
(:class:`jetlink.core.live.jetstream.LiveJetStream`, over a nats-server's ``$JS.API``). The
CLI holds one of them, chosen once per invocation (cli/common.py ``open_jetstream``), and
never asks which: what only one of them can do is refused by that one, with a sentence saying
why. Key-Value buckets are built over this interface (jetlink.core.kv), so both backends
share the KV rules.

Values crossing the seam are the engine's result types (jetlink.core.messages:
``StreamInfo``, ``StoredMsg``, ``PubAck``; consumer infos and delivered messages), each with
``to_json()`` giving the NATS API's document. The live client's ``to_json()`` returns the
document exactly as the server sent it; ``.config`` / ``.state`` are parsed from it for the
rules and the renderers. Errors are :class:`~jetlink.core.errors.ApiError` with the server's
codes (the engine's own, or the live server's as it answered) and
:class:`~jetlink.core.errors.JetlinkError` for everything else.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

__all__ = ["JetStreamAPI", "SubscriptionAPI"]

Headers = Mapping[str, Any] | None
Outgoing = tuple[str, bytes, Headers]


@runtime_checkable
class SubscriptionAPI(Protocol):
    def next(self, timeout: float | None = 1.0) -> Any:
        """The next core message (``to_json``: subject, headers, data), or None when
        ``timeout`` seconds pass without one."""

    def close(self) -> None: ...


@runtime_checkable
class JetStreamAPI(Protocol):
    """What ``jetlink stream|consumer|pub|sub|kv`` do with a NATS system."""

    # -- where it acts (for messages: "stream ORDERS in cluster west" / "on nats://...")
    @property
    def where(self) -> str: ...

    # -- streams
    def add_stream(self, cfg: Any) -> Any: ...
    def update_stream(self, cfg: Any) -> Any: ...
    def delete_stream(self, name: str) -> None: ...
    def stream_info(self, name: str, *, subjects_filter: str | None = None,
                    deleted_details: bool = False) -> Any: ...
    def streams(self, subject: str | None = None) -> list[Any]: ...
    def stream_names(self, subject: str | None = None) -> list[str]: ...
    def purge_stream(self, name: str, *, subject: str | None = None, seq: int | None = None,
                     keep: int | None = None) -> int: ...

    # -- messages
    def get_msg(self, name: str, seq: int | None = None, *, last_by_subj: str | None = None,
                next_by_subj: str | None = None) -> Any: ...
    def delete_msg(self, name: str, seq: int) -> None: ...
    def subjects(self, name: str, filter: str = ">") -> dict[str, int]: ...
    def messages(self, name: str, *, start_seq: int | None = None,
                 start_time_ns: int | None = None, subject: str | None = None,
                 chunk: int = 1000) -> Iterator[Any]: ...
    def last_msgs(self, name: str, patterns: Iterable[str]) -> list[Any]:
        """The latest message of every subject matching ``patterns``, by sequence."""

    # -- publish / subscribe
    def publish(self, subject: str, data: bytes = b"", headers: Headers = None) -> Any: ...
    def publish_many(self, msgs: Iterable[Outgoing]) -> list[Any]: ...
    def publish_batch(self, msgs: Iterable[Outgoing]) -> list[Any]: ...
    def publish_core(self, subject: str, data: bytes = b"", headers: Headers = None) -> None: ...
    def subscribe(self, subject: str) -> SubscriptionAPI: ...

    # -- consumers
    def add_consumer(self, stream: str, config: Any, *, action: str = "",
                     pedantic: bool = False) -> Any: ...
    def consumer_info(self, stream: str, name: str) -> Any: ...
    def consumers(self, stream: str) -> list[Any]: ...
    def consumer_names(self, stream: str) -> list[str]: ...
    def delete_consumer(self, stream: str, name: str) -> None: ...
    def fetch(self, stream: str, consumer: str, batch: int = 1) -> list[Any]: ...
    def ack(self, stream: str, consumer: str, seq: int,
            consumer_seq: int | None = None) -> bool: ...
