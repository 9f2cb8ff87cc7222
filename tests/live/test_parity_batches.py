"""Parity of atomic batch publish (ADR-50): the same CLI steps on the embedded engine and on
nats-server 2.15.1, outputs compared after masking (tests/live/test_parity.py's masks).

Batch ids that ``pub --atomic`` makes are random: they are masked; ids given with -H are
compared as they are.
"""

from __future__ import annotations

import shlex
from typing import Any

import pytest

from live.parity import (
    TARGETS,
    NoServer,
    batch_text,
    mask_batch_doc,
    mask_replicas,
    on_target,
    parity_env,
    step,
    target,
)

pytestmark = pytest.mark.live

B = "-H Nats-Batch-Id:{id} -H Nats-Batch-Sequence:{seq}"


def _b(bid: str, seq: int | str, commit: str | None = None) -> str:
    text = B.format(id=bid, seq=seq)
    return text + (f" -H Nats-Batch-Commit:{commit}" if commit else "")


SCRIPT: list[str] = [
    "stream add PLAIN --subjects plain.> --defaults -j",
    "stream add AT --subjects at.> --allow-batch --defaults -j",
    # refused where the stream does not allow atomic publish (10174)
    f"pub plain.a x {_b('b1', 1, '1')} -j",
    f"pub plain.a x {_b('b1', 1, '1')}",
    "stream info PLAIN -j",
    # staged: an empty reply, nothing stored until the commit
    f"pub at.a one {_b('s1', 1)} -j",
    f"pub at.b two {_b('s1', 2)} -j",
    "stream info AT -j",
    f"pub at.c three {_b('s1', 3, '1')} -j",
    "stream info AT -j",
    "stream view AT -j",
    # a batch must start at sequence 1 (10176); a gap abandons it
    f"pub at.a x {_b('g1', 2, '1')} -j",
    f"pub at.a x {_b('g2', 1)} -j",
    f"pub at.a x {_b('g2', 3, '1')} -j",
    f"pub at.a x {_b('g2', 2, '1')} -j",
    # sequence missing or not a number (10175), bad commit value (10200), long id (10179)
    "pub at.a x -H Nats-Batch-Id:m1 -j",
    "pub at.a x -H Nats-Batch-Id:m1 -H Nats-Batch-Sequence:one -j",
    f"pub at.a x {_b('c1', 1, 'yes')} -j",
    f"pub at.a x {_b('L' * 65, 1, '1')} -j",
    f"pub at.a x {_b('L' * 64, 1, '1')} -j",
    # too large: a first message past 1,000 (10199); eob on sequence 1 (10176)
    f"pub at.a x {_b('big', 1001, '1')} -j",
    f"pub at.a x {_b('e1', 1, 'eob')} -j",
    # committed by an end-of-batch marker: not stored, the last message carries the commit
    f"pub at.e 1 {_b('e2', 1)} -j",
    f"pub at.e 2 {_b('e2', 2)} -j",
    f"pub at.e end {_b('e2', 3, 'eob')} -j",
    "stream get AT --last-for at.e -j",
    # rules inside a batch: unsupported header (10177), duplicate id (10201), expected
    # last sequence only on the first message (10164); all or nothing
    f"pub at.h x {_b('h1', 1)} -H Nats-Expected-Last-Msg-Id:z -j",
    f"pub at.h x {_b('h1', 2, '1')} -j",
    f"pub at.h x {_b('d1', 1)} -H Nats-Msg-Id:m -j",
    f"pub at.h x {_b('d1', 2, '1')} -H Nats-Msg-Id:m -j",
    f"pub at.h x {_b('x1', 1)} -H Nats-Expected-Last-Sequence:6 -j",
    f"pub at.h x {_b('x1', 2, '1')} -H Nats-Expected-Last-Sequence:8 -j",
    f"pub at.h x {_b('x3', 1)} -H Nats-Expected-Last-Sequence:6 -j",
    f"pub at.h x {_b('x3', 2, '1')} -H Nats-Expected-Last-Sequence:7 -j",
    f"pub at.h x {_b('x2', 1)} -H Nats-Expected-Last-Sequence:99 -j",
    f"pub at.h x {_b('x2', 2, '1')} -j",
    "stream info AT -j",
    # natscli's --atomic, in batches
    "pub at.n 'n {{Count}}' --atomic --count 5 --batch-size 2 -j",
    "pub at.n 'n {{Count}}' --atomic --count 3",
    "pub plain.n x --atomic --count 2",
    "stream info AT -j",
    # schedules and counters inside a batch are checked at the commit as single publishes
    # are: AT allows neither (10188, 10168), and nothing of the batch is stored
    f"pub at.s x {_b('sc', 1)} -H 'Nats-Schedule:@at 2030-01-01T00:00:00Z' "
    "-H Nats-Schedule-Target:at.t -j",
    f"pub at.s x {_b('sc', 2, '1')} -j",
    f"pub at.s x {_b('sp', 1, '1')} -H Nats-Schedule-Next:purge -H Nats-Scheduler:at.a -j",
    f"pub at.s '' {_b('ci', 1, '1')} -H Nats-Incr:1 -j",
    # rollups: sub once per subject, all only first (10111); a lower-case value is compared
    "stream add AR --subjects ar.> --allow-batch --allow-rollup --defaults -j",
    f"pub ar.a x {_b('r1', 1)} -H Nats-Rollup:sub -j",
    f"pub ar.a x {_b('r1', 2, '1')} -H Nats-Rollup:SUB -j",
    f"pub ar.a x {_b('r2', 1)} -j",
    f"pub ar.b x {_b('r2', 2, '1')} -H Nats-Rollup:all -j",
    f"pub ar.a x {_b('r3', 1)} -H Nats-Rollup:ALL -j",
    f"pub ar.b x {_b('r3', 2, '1')} -H Nats-Rollup:sub -j",
    "stream info AR -j",
    # Nats-Required-Api-Level (errorOnRequiredApiLevel): above this server's level, or no
    # integer, abandons the batch (10185); one it speaks is removed before staging
    f"pub at.v x {_b('v1', 1, '1')} -H Nats-Required-Api-Level:99 -j",
    f"pub at.v x {_b('v2', 1)} -H Nats-Required-Api-Level:abc -j",
    f"pub at.v x {_b('v2', 2, '1')} -j",
    f"pub at.v x {_b('v3', 1, '1')} -H Nats-Required-Api-Level:1 -j",
    "stream get AT --last-for at.v -j",
    "pub at.w 'w' --atomic --count 2 -H Nats-Required-Api-Level:99 -j",
    # a batch id's 64 is bytes (Go's len): 33 two-byte characters are too long (10179)
    f"pub at.u x {_b('ü' * 33, 1, '1')} -j",
    f"pub at.u x {_b('ü' * 32, 1, '1')} -j",
    # a stream that stops allowing atomic publish drops the batches in flight
    # (deleteAtomicBatches): allowed again, their next message finds none (10176)
    "stream add AD --subjects ad.> --allow-batch --defaults -j",
    f"pub ad.a one {_b('u1', 1)} -j",
    "stream edit AD --no-allow-batch -f -j",
    "stream edit AD --allow-batch -f -j",
    f"pub ad.a two {_b('u1', 2, '1')} -j",
    "stream info AD -j",
]

def _run(prefix: list[str], where: str, clustered: bool = False) -> list[dict[str, Any]]:
    text = batch_text(where)
    return [step(prefix, on_target(shlex.split(s), clustered), text=text, doc=mask_batch_doc)
            for s in SCRIPT]


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    with parity_env(tmp_path_factory, NoServer()):
        data = tmp_path_factory.mktemp("parity-batches") / "data"
        return _run(["--data-dir", str(data)], str(data))


@pytest.fixture(scope="module", params=TARGETS)
def both(request, embedded, tmp_path_factory):
    server = target(request)
    clustered = request.param == "cluster"
    with parity_env(tmp_path_factory, server):
        live = _run(["--server", server.url], server.url, clustered)
    if clustered:
        return [mask_replicas(r) for r in embedded], [mask_replicas(r) for r in live]
    return embedded, live


@pytest.mark.parametrize("i", range(len(SCRIPT)), ids=[s[:60] for s in SCRIPT])
def test_parity_batches(both, i):
    embedded, live = both
    assert "exception" not in embedded[i], embedded[i]
    assert "exception" not in live[i], live[i]
    assert live[i] == embedded[i], SCRIPT[i]


def test_commit_ack_fields(both):
    """The commit's PubAck carries batch and count on both (the live client kept them)."""
    for side in both:
        assert side[8]["json"] == {"stream": "AT", "seq": 3, "batch": "s1", "count": 3}
        assert side[5]["json"] is None and side[5]["status"] == 0  # the empty reply

