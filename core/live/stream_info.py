"""A stream's info as a live server answers it: :class:`LiveStreamInfo` (the StreamInfo
document kept as received, its config and state parsed with the rules' own codecs) and
:func:`state_of` (a StreamState from a ``state`` document). Below the JetStream API
(core/live/jetstream.py) and its consumer verbs (core/live/consumers.py), which both use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..config.stream import StreamConfig
from ..messages import StreamState
from .client import without_envelope
from .wire import _ts

__all__ = ["LiveStreamInfo", "state_of"]


def state_of(doc: Mapping[str, Any]) -> StreamState:
    """A StreamState from the server's ``state`` document."""
    return StreamState(
        messages=int(doc.get("messages", 0)),
        bytes=int(doc.get("bytes", 0)),
        first_seq=int(doc.get("first_seq", 0)),
        first_ts=_ts(doc.get("first_ts")),
        last_seq=int(doc.get("last_seq", 0)),
        last_ts=_ts(doc.get("last_ts")),
        num_deleted=int(doc.get("num_deleted", 0)),
        deleted=list(doc["deleted"]) if doc.get("deleted") else None,
        num_subjects=int(doc.get("num_subjects", 0)),
        subjects=dict(doc["subjects"]) if doc.get("subjects") else None,
        consumer_count=int(doc.get("consumer_count", 0)),
    )


class LiveStreamInfo:
    """A StreamInfo the server sent: ``to_json()`` is its document as received (without the
    response envelope: client.ENVELOPE)."""

    def __init__(self, doc: dict[str, Any]) -> None:
        doc = without_envelope(doc)
        self.doc = doc
        self.config = StreamConfig.from_json(doc.get("config") or {}, strict=False)
        self.state = state_of(doc.get("state") or {})
        self.mirror = doc.get("mirror")
        self.sources = list(doc.get("sources") or [])
        cluster = doc.get("cluster") or {}
        self.cluster = cluster.get("name", "") if isinstance(cluster, dict) else ""
        self.created_ns = _ts(doc.get("created"))
        self.ts_ns = _ts(doc.get("ts"))

    @property
    def name(self) -> str:
        return self.config.name

    def to_json(self) -> dict[str, Any]:
        return self.doc
