"""Parity of counters (ADR-49): the same CLI invocations on the embedded engine and on
nats-server 2.15.1, outputs compared (the runner and masks of tests/live/test_parity.py).

SCRIPT covers increments and their acks, the refusals 10168-10173, sourced aggregation
(Nats-Counter-Sources, Nats-Incr rewritten as the difference, the measured 1107 case), a
mirror's verbatim copy and natscli's counter verbs. A step ``@settle STREAM N`` waits, on the
live server, until STREAM holds N messages (sourcing is asynchronous there; the engine copies
within the command that wrote); it is not compared. A step ``@config ...`` compares only the
config of the StreamInfo it prints (its state and sources' lag depend on how far the server
copied already).
"""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest

from live.parity import (
    TARGETS,
    NoServer,
    mask_replicas,
    on_target,
    parity_env,
    settle,
    step,
    target,
)
from live.test_parity import _mask_doc, _mask_text

pytestmark = pytest.mark.live

# The aggregate: CNT's and CNTB's subjects x.<token> both become agg.<token>.
AGG = {"name": "AGG", "subjects": ["agg.>"], "allow_msg_counter": True, "allow_direct": True,
       "sources": [{"name": "CNT", "subject_transforms": [{"src": "cnt.*", "dest": "agg.$1"}]},
                   {"name": "CNTB",
                    "subject_transforms": [{"src": "cntb.*", "dest": "agg.$1"}]}]}

SCRIPT: list[str] = [
    "stream add CNT --subjects cnt.> --allow-counter --allow-direct --defaults -j",
    "stream add CNTB --subjects cntb.> --allow-counter --allow-direct --defaults -j",
    "stream add PLAIN --subjects plain.> --allow-direct --defaults -j",
    # stream settings a counter stream refuses, a mirror that counts (10173)
    "stream add BADC --subjects badc.> --allow-counter --discard new --defaults -j",
    "stream add BADT --subjects badt.> --allow-counter --allow-ttl --defaults -j",
    "stream add BADR --subjects badr.> --allow-counter --retention work --defaults -j",
    "stream add MC --mirror CNT --allow-counter --defaults -j",
    "stream add MIR --mirror CNT --defaults -j",
    "stream edit PLAIN --allow-counter -f -j",
    # increments: the ack carries val
    "pub cnt.a '' -H Nats-Incr:+3 -j",
    "pub cnt.a '' -H Nats-Incr:4 -j",
    "pub cntb.a '' -H Nats-Incr:1100 -j",
    "pub cnt.b '' -H Nats-Incr:-5 -j",
    "pub cnt.b '' -H Nats-Incr:123456789012345678901234567890 -j",
    "pub cnt.c '' -H Nats-Incr:1 -H Nats-Msg-Id:m1 -j",
    "pub cnt.c '' -H Nats-Incr:1 -H Nats-Msg-Id:m1 -j",
    "stream get CNT 1 -j",
    "stream get CNT --last-for cnt.b -j",
    # the refusals
    "pub cnt.a plain -j",
    "pub cnt.a '' -H Key:Value -j",
    "pub cnt.a body -H Nats-Incr:1 -j",
    "pub cnt.a '' -H Nats-Incr:bogus -j",
    "pub cnt.a '' -H Nats-Incr:1.5 -j",
    "pub cnt.a '' -H Nats-Incr:1 -H Nats-Rollup:sub -j",
    "pub cnt.a '' -H Nats-Incr:1 -H Nats-Expected-Last-Sequence:1 -j",
    "pub cnt.a '' -H Nats-Incr:1 -H Nats-Expected-Last-Subject-Sequence:1 -j",
    "pub cnt.a '' -H Nats-Incr:1 -H Nats-Expected-Last-Msg-Id:x -j",
    "pub cnt.a '' -H Nats-Incr:1 -H Nats-Expected-Stream:CNT -j",
    "pub cnt.a '' -H Nats-Incr:1 -H Nats-TTL:1s -j",
    "pub plain.a '' -H Nats-Incr:1 -j",
    "pub plain.a '' -H Nats-Incr:nope -j",
    "pub cnt.a body -H Nats-Incr:1",
    # a mirror copies as it is
    "@settle MIR 5",
    "stream get MIR --last-for cnt.a -j",
    # aggregation: one subject summing both streams
    "@config stream add --config {tmp}/agg.json -j",
    "@settle AGG 6",
    # (which of CNT and CNTB the server copies last varies: the last increment is left out)
    "counter get agg.a --stream AGG -j",
    "counter get agg.a --stream AGG",
    "counter get agg.b --stream AGG -j",
    "pub cnt.a '' -H Nats-Incr:10 -j",
    "@settle AGG 7",
    "counter view agg.a --stream AGG -j",
    "pub agg.a '' -H Nats-Incr:1 -j",
    "counter view agg.a --stream AGG -j",
    # natscli's counter verbs
    "counter incr cnt.z 5",
    "counter increment cnt.z 5 -j",
    "counter decr cnt.z 3",
    "counter decrement cnt.z -j -- -1",
    "counter get cnt.z",
    "counter get cnt.z -j",
    "counter view cnt.z",
    "counter view cnt.z -j",
    "counter ls cnt.>",
    "counter ls --stream CNT -j",
    "counter get cnt.none",
    "counter incr plain.a 1",
    "counter incr cnt.z 1x",
    "counter ls",
    "counter ls cnt.none.>",
    # increments in an atomic batch: each applied on the one before, stored at the commit
    "stream add CNTAT --subjects cntat.> --allow-counter --allow-batch --defaults -j",
    "pub cntat.a '' -H Nats-Batch-Id:c1 -H Nats-Batch-Sequence:1 -H Nats-Incr:1 -j",
    "pub cntat.a '' -H Nats-Batch-Id:c1 -H Nats-Batch-Sequence:2 -H Nats-Incr:2 "
    "-H Nats-Batch-Commit:1 -j",
    "stream get CNTAT 1 -j",
    "pub cntat.a '' -H Nats-Incr:5 -j",
    # a refused increment abandons the whole batch
    "pub cntat.a '' -H Nats-Batch-Id:c2 -H Nats-Batch-Sequence:1 -H Nats-Incr:1 -j",
    "pub cntat.a body -H Nats-Batch-Id:c2 -H Nats-Batch-Sequence:2 -H Nats-Incr:1 "
    "-H Nats-Batch-Commit:1 -j",
    "pub cntat.b '' -H Nats-Batch-Id:c3 -H Nats-Batch-Sequence:1 -H Nats-Incr:1 "
    "-H Nats-Rollup:sub -H Nats-Batch-Commit:1 -j",
    "counter get cntat.a --stream CNTAT -j",
]


def _run(prefix: list[str], where: str, tmp: Any, clustered: bool = False
         ) -> list[dict[str, Any]]:
    agg = {**AGG, "num_replicas": 3} if clustered else AGG
    (tmp / "agg.json").write_text(json.dumps(agg))
    out: list[dict[str, Any]] = []
    for s in SCRIPT:
        args = [a.replace("{tmp}", str(tmp)) for a in shlex.split(s)]
        if args[0] == "@settle":
            settle(prefix, args[1], int(args[2]))
            out.append({})
            continue
        config_only = args[0] == "@config"
        if config_only:
            args = args[1:]
        rec = step(prefix, on_target(args, clustered), text=lambda t: _mask_text(t, where),
                   doc=_mask_doc)
        if config_only and rec.get("json") is not None:
            rec["json"] = rec["json"]["config"]
        out.append(rec)
    return out


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    with parity_env(tmp_path_factory, NoServer()):
        etmp = tmp_path_factory.mktemp("parity-counters-embedded")
        data = etmp / "data"
        return _run(["--data-dir", str(data)], str(data), etmp)


@pytest.fixture(scope="module", params=TARGETS)
def both(request, embedded, tmp_path_factory):
    server = target(request)
    clustered = request.param == "cluster"
    with parity_env(tmp_path_factory, server):
        ltmp = tmp_path_factory.mktemp("parity-counters-live")
        live = _run(["--server", server.url], server.url, ltmp, clustered)
    if clustered:
        return [mask_replicas(r) for r in embedded], [mask_replicas(r) for r in live]
    return embedded, live


@pytest.mark.parametrize("i", range(len(SCRIPT)), ids=[s[:60] for s in SCRIPT])
def test_parity_counters(both, i):
    embedded, live = both
    e, lv = embedded[i], live[i]
    assert "exception" not in lv, (SCRIPT[i], lv)
    assert "exception" not in e, (SCRIPT[i], e)
    assert lv == e, SCRIPT[i]


def test_aggregate_measured(both):
    """The case measured on nats-server 2.15.1: 7 + 1100 on one subject, then CNT's +10."""
    embedded, live = both
    got = SCRIPT.index("counter get agg.a --stream AGG -j")
    view = SCRIPT.index("counter view agg.a --stream AGG -j")
    for run in (embedded, live):
        assert run[got]["json"] == {"stream": "AGG", "subject": "agg.a", "val": "1107"}
        assert run[view]["json"] == {
            "stream": "AGG", "subject": "agg.a", "val": "1117", "incr": "10",
            "sources": {"CNT": {"cnt.a": "17"}, "CNTB": {"cntb.a": "1100"}}}
