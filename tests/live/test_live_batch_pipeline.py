"""Atomic batches (ADR-50) sent pipelined by the live client (core/live/jetstream.py
``_PublishRun``: every staged message sent without waiting, each answered by the server with
an empty reply taken by a raw handler, then the commit's answer): the answers, in order, are
the embedded engine's for the same calls, refusals of a staged message included."""

from __future__ import annotations

import uuid

import pytest

from jetlink.core.clock import ManualClock
from jetlink.core.errors import ApiError
from jetlink.core.jetstream import JetStream
from jetlink.core.live.client import connect
from jetlink.core.live.jetstream import LiveJetStream
from jetlink.core.live.target import ServerTarget
from jetlink.core.messages import PubAck
from jetlink.core.store import DataDir

pytestmark = pytest.mark.live


def h(bid: str, seq: int | str, commit: str | None = None) -> dict[str, str]:
    out = {"Nats-Batch-Id": bid, "Nats-Batch-Sequence": str(seq)}
    if commit:
        out["Nats-Batch-Commit"] = commit
    return out


def _answers(results: list) -> list:
    out = []
    for r in results:
        if isinstance(r, ApiError):
            out.append(r.err_code)
        elif isinstance(r, PubAck):
            doc = r.to_json()
            doc.pop("stream")
            out.append(doc)
        else:
            out.append(r)
    return out


CALLS = [
    # (method, messages): "many" stops at the first refusal, "batch" goes on
    ("many", [("at.a", b"1", h("b1", 1)), ("at.b", b"2", h("b1", 2)),
              ("at.c", b"3", h("b1", 3, "1"))]),
    ("batch", [("at.a", b"1", h("g", 1)), ("at.a", b"3", h("g", 3, "1")),  # a gap: 10176
               ("at.a", b"4", h("g", 2, "1"))]),
    ("batch", [("at.a", b"x", {"Nats-Batch-Id": "m"}),  # no sequence: 10175
               ("at.a", b"x", h("c", 1, "yes")),  # a bad commit value: 10200
               ("at.a", b"x", h("L" * 65, 1, "1"))]),  # an id over 64: 10179
    ("many", [("at.a", b"y", h("big", k, "1" if k == 1001 else None))
              for k in range(1, 1002)]),  # too large: 10199 at 1,001
    ("batch", [("at.d", b"z", h("ok", k, "1" if k == 1000 else None))
               for k in range(1, 1001)]),
]


def test_pipelined_batches_answer_as_the_engine(live, tmp_path):
    name = "PIPE" + uuid.uuid4().hex[:8].upper()
    cfg = {"name": name, "subjects": ["at.>"], "allow_atomic": True}
    ljs = LiveJetStream(connect(ServerTarget((live.url,), timeout=10)))
    ejs = JetStream(DataDir(tmp_path / "d").open(), ManualClock(1_700_000_000_000_000_000))
    try:
        if name in ljs.stream_names():
            ljs.delete_stream(name)
        ljs.add_stream(cfg)
        ejs.add_stream(cfg)
        for how, msgs in CALLS:
            got = [_answers(getattr(js, f"publish_{how}")(msgs)) for js in (ljs, ejs)]
            assert got[0] == got[1], (how, msgs[0])
        assert ljs.stream_info(name).state.messages == ejs.stream_info(name).state.messages \
            == 1003
    finally:
        ljs.delete_stream(name)
        ljs.close()
