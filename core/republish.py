"""RePublish: a stream publishes each message it stores again, at most once, on a new subject.

The rule, the compiled ``RePublishRule`` and the queue the store path fills are
core/republish_rule.py's (what the stream store needs of RePublish, below it); this module
delivers the queue (:func:`deliver`), above the store, and re-exports the rule's names.

The republished message is a core publish of the same cluster: ``jetlink sub`` followers see it
(``core_msgs``) and a stream whose subjects capture the destination stores it like any client
publish (its checks apply; a refusal is silent: e.g. a sourced message keeps its
``Nats-Stream-Source`` header, which a capturing stream refuses with 10227, as the server does).

How it runs here: ``StreamTxn._store`` (core/streamstore/append.py) calls
``RePublishRule.after_store``, which queues the republish on the transaction;
``streams.Txn.flush`` calls :func:`deliver` before writing the streams back, so the republish
commits (or rolls back) with the message that caused it.

Chains and loops: ``jetlink validate`` refuses republish loops between streams. At run time a
chain (stream A republishes into B, which republishes into C, ...) stops after
:data:`MAX_HOPS` republishes: the next one is dropped and an ERROR is logged on the logger
``jetlink.republish`` (stderr unless the application configures logging). A real server has no
hop limit: a loop runs until the growing header block passes 64 KiB (about 250 hops per
stream with short names) and the store refuses it, silently.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .fanout import CoreFanout
from .republish_rule import (
    HOP,
    MAX_HOPS,
    PENDING,
    RePublishRule,
    compile_rule,
    describe,
    republish_header,
)

if TYPE_CHECKING:  # pragma: no cover
    from .streamdef import StreamDef
    from .streamstore.txn import StreamTxn
    from .txnstate import TxnState

__all__ = [
    "MAX_HOPS",
    "PENDING",
    "RePublishRule",
    "compile_rule",
    "deliver",
    "describe",
    "republish_header",
]


def deliver(txn: TxnState, open_stream: Callable[[StreamDef], StreamTxn]) -> int:
    """Publish the queued republishes (``Txn.flush`` calls this, ``open_stream`` being its
    ``Txn.stream``): core followers first, then the stream capturing each subject (refusals
    are silent). Messages stored on the way may queue more (a chain), delivered in the next
    round. Returns how many were published."""
    cache = txn.cache
    sent = 0
    saved_hop = cache.get(HOP, 0)
    try:
        while True:
            pending: list[tuple[int, str, bytes, bytes]] | None = cache.pop(PENDING, None)
            if not pending:
                break
            fan = CoreFanout.load(txn)
            route = txn.catalog.route
            for hop, subject, hdr, data in pending:
                sent += 1
                if fan.active:
                    fan.add(subject, hdr, data)
                d = route(subject)
                if d is None:
                    continue
                stored_subject = subject
                if d.transform is not None:
                    mapped = d.transform.apply(subject)
                    if mapped is not None:
                        stored_subject = mapped
                cache[HOP] = hop
                open_stream(d).append(stored_subject, hdr, data)  # an ApiError: dropped
                cache[HOP] = saved_hop
            fan.flush()
    finally:
        cache[HOP] = saved_hop
    return sent
