"""``jetlink pub --fast``: fast batch publish (ADR-50 fast ingest, nats-server 2.14; the stream
needs ``allow_batched``, natscli's ``--allow-fast``). natscli's ``pub`` has no such flag (its
``bench js batch fast`` uses orbit.go's FastPublisher); the flags follow orbit.go's options:
``--flow`` (the initial flow, FastPublishFlowControl.Flow), ``--max-outstanding``
(MaxOutstandingAcks), ``--continue-on-gap`` (WithFastPublisherContinueOnGap). The work is the
backend's (``publish_fast_batch``, core/fastpublish.py); this only renders.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jetlink.cli import output
from jetlink.cli.app import App
from jetlink.cli.pub_templates import new_batch_id
from jetlink.core.fastpublish import outcome

FAST_HELP = "Fast batch publish: flow-controlled, stored as they come (not atomic)."
FLOW_HELP = "With --fast: the initial flow, an acknowledgement every N messages (the most)."
OUTSTANDING_HELP = "With --fast: unacknowledged flow windows before waiting."
GAP_HELP = ("With --fast: a refused or lost message does not end the batch (the server's "
            "gap mode ok).")
BATCH_ID_HELP = "With --fast: the batch id (default: a unique one per batch)."


def publish_fast(app: App, js: Any, message: Callable[[int], Any], count: int, size: int,
                 quiet: bool, *, flow: int, max_outstanding: int, gap_ok: bool,
                 batch_id: str | None) -> None:
    """Batches of ``size`` of the ``count`` messages, each committed by its last message;
    the commit's PubAck printed per batch ({"stream", "seq", "batch", "count"} as the
    server sent it). A refused batch, or in gap mode fail one the server ended early (an
    error report or a gap), ends the command with that error (the batches before it, and
    the ended one up to its PubAck, are stored)."""
    docs: list[dict[str, Any]] = []
    nbatch = 0
    for start in range(1, count + 1, size):
        stop = min(count + 1, start + size)
        nbatch += 1
        bid = batch_id if batch_id and nbatch == 1 else (
            f"{batch_id}-{nbatch}" if batch_id else new_batch_id())
        res = js.publish_fast_batch([message(n) for n in range(start, stop)], batch_id=bid,
                                    flow=flow, gap_ok=gap_ok, max_outstanding=max_outstanding)
        for e in res.errors if gap_ok else []:
            err = e.get("error") or {}
            output.notice(app, f"jetlink: batch {bid} message {e.get('seq')}: "
                               f"{err.get('description')} ({err.get('err_code')})")
        for g in res.gaps if gap_ok else []:
            output.notice(app, f"jetlink: batch {bid}: messages {g.get('last_seq')} to "
                               f"{int(g.get('seq', 0)) - 1} were lost (a gap)")
        failed = outcome(res, gap_ok)
        if failed is not None:
            if docs:
                more = (f"{output.comma(len(docs))} batches before it were stored "
                        f"(sequences up to {output.comma(docs[-1]['seq'])})")
                failed.detail = f"{failed.detail}; {more}" if failed.detail else more
            raise failed
        doc = res.doc
        docs.append(doc)
        if not app.json and not quiet:
            output.line(app, f"Wrote fast batch ID: {doc.get('batch', bid)} Messages: "
                             f"{output.comma(int(doc.get('count', 0)))} Sequence: "
                             f"{output.comma(int(doc.get('seq', 0)))} Flow acks: "
                             f"{output.comma(len(res.flow_acks))}")
    if app.json:
        output.print_json(docs[0] if len(docs) == 1 else docs)
