"""Parity of fast batch publish (ADR-50 fast ingest, nats-server 2.14): the same steps on the
embedded engine and on nats-server 2.15.1, outputs compared.

- the server-side table of tests/test_fast_batch.py (nats-server's fast batch test cases):
  each message published with its hand-made ``...$FI`` reply subject; the answers the server
  sends to it are collected and compared with the engine's (``publish_fast_msg``) and with
  the table;
- a CLI script (``pub --fast`` and its flags, the streams after it) run on both backends,
  as tests/live/test_parity_batches.py does.
"""

from __future__ import annotations

import asyncio
import json
import shlex
from typing import Any

import pytest
from helpers import WAIT_TIMEOUT
from test_fast_batch import CASES

from jetlink.core.live.client import connect
from jetlink.core.live.jetstream import LiveJetStream
from jetlink.core.live.target import ServerTarget
from live.parity import batch_text, mask_batch_doc, parity_env, step

pytestmark = pytest.mark.live

SETTLE = 0.15  # after the expected answers: how long to wait for one more (there is none)
ANSWER_WAIT = 60.0  # at most, for each expected answer (it comes at once; bounds a failure)


def _live_answers(ljs: LiveJetStream, subject: str, headers: dict | None, reply: str,
                  expect: int) -> list[dict[str, Any]]:
    """Publish one message with ``reply`` and collect what the server sends to it (a
    single server answers a message on its own reply subject)."""

    async def go(nc: Any) -> list[dict[str, Any]]:
        got: list[dict[str, Any]] = []
        more = asyncio.Event()

        async def cb(msg: Any) -> None:
            got.append(json.loads(msg.data))
            more.set()

        sub = await nc.subscribe(reply, cb=cb)
        try:
            await nc.publish(subject, b"x", reply=reply, headers=headers)
            await nc.flush()
            while True:
                more.clear()
                wait = SETTLE if len(got) >= expect else ANSWER_WAIT
                try:
                    await asyncio.wait_for(more.wait(), wait)
                except TimeoutError:
                    return got
        finally:
            await sub.unsubscribe()

    return ljs.conn.call(go, timeout=WAIT_TIMEOUT)


@pytest.fixture(scope="module")
def ljs(nats_single):
    nats_single.reset()
    j = LiveJetStream(connect(ServerTarget((nats_single.url,))))
    yield j
    nats_single.reset()


@pytest.mark.parametrize("name,extra,steps", CASES, ids=[c[0] for c in CASES])
def test_parity_fast_batch_table(ljs, js, name, extra, steps):
    cfg = {"name": "TEST", "subjects": ["foo"], "allow_batched": True,
           "duplicate_window": 60_000_000_000, **extra}
    try:
        ljs.delete_stream("TEST")
    except Exception:  # noqa: BLE001 - absent
        pass
    ljs.add_stream(cfg)
    js.add_stream(cfg)
    for subject, headers, reply, want in steps:
        live = _live_answers(ljs, subject, headers, reply, len(want))
        engine = js.publish_fast_msg(subject, b"x", headers, reply=reply)
        assert live == engine, reply
        assert live == want, reply
    assert (ljs.stream_info("TEST").state.last_seq == js.stream_info("TEST").state.last_seq)


SCRIPT: list[str] = [
    "stream add PLAIN --subjects plain.> --defaults -j",
    "stream add FB --subjects fb.> --allow-fast --defaults -j",
    # refused where the stream does not allow batched publish (10205)
    "pub plain.a x --fast -j",
    "pub plain.a x --fast --count 3",
    # one batch, flow acks every 50, the commit's PubAck as the server sent it
    "pub fb.a 'n {{Count}}' --fast --count 250 --flow 50 --batch-id b1 -j",
    "pub fb.b x --fast --count 5 --batch-size 2 --batch-id b2 -j",
    "pub fb.b x --fast --count 5 --batch-size 2 --batch-id b3 --flow 1 --max-outstanding 1",
    # a long id (10207); 64 characters is fine
    f"pub fb.a x --fast --batch-id {'L' * 65} -j",
    f"pub fb.a x --fast --batch-id {'L' * 64} -j",
    # a refused first message is a publish's answer; later ones end the batch (gap mode fail)
    "pub fb.a x --fast --count 3 -H Nats-Expected-Last-Sequence:1 -j",
    "pub fb.a x --fast --count 3 -H Nats-Expected-Last-Sequence:261 --batch-id e1 -j",
    "pub fb.a x --fast --count 3 -H Nats-Expected-Last-Sequence:262 --batch-id e2",
    # ... or are reported and skipped with --continue-on-gap
    "pub fb.a x --fast --count 4 -H Nats-Expected-Last-Sequence:263 --continue-on-gap "
    "--batch-id e3 -j",
    # duplicates are skipped without an answer
    "pub fb.d x --fast --count 3 -H Nats-Msg-Id:same --batch-id d1 -j",
    # not checked in a fast batch (checkMsgHeadersPreClusteredProposal)
    "pub fb.m x --fast --count 2 -H Nats-Expected-Last-Msg-Id:nope --batch-id m1 -j",
    "stream info FB -j",
    "stream view FB --since 1 -j",
    # Nats-Required-Api-Level: above this server's level abandons the batch (10185); one it
    # speaks is removed before the message is stored
    "pub fb.v x --fast --count 2 -H Nats-Required-Api-Level:99 --batch-id v1 -j",
    "pub fb.v x --fast --count 2 -H Nats-Required-Api-Level:1 --batch-id v2 -j",
    "stream get FB --last-for fb.v -j",
    # a batch id's 64 is bytes (Go's len): 33 two-byte characters are too long (10207)
    f"pub fb.a x --fast --batch-id {'ü' * 33} -j",
    "stream info FB -j",
]

def _run(prefix: list[str], where: str) -> list[dict[str, Any]]:
    text = batch_text(where)
    return [step(prefix, shlex.split(s), text=text, doc=mask_batch_doc) for s in SCRIPT]


@pytest.fixture(scope="module")
def both(nats_single, tmp_path_factory):
    with parity_env(tmp_path_factory, nats_single, "parity-fast"):
        data = tmp_path_factory.mktemp("parity-fast-batch") / "data"
        embedded = _run(["--data-dir", str(data)], str(data))
        live = _run(["--server", nats_single.url], nats_single.url)
    return embedded, live


@pytest.mark.parametrize("i", range(len(SCRIPT)), ids=[s[:60] for s in SCRIPT])
def test_parity_fast_batch_cli(both, i):
    embedded, live = both
    assert "exception" not in embedded[i], embedded[i]
    assert "exception" not in live[i], live[i]
    assert live[i] == embedded[i], SCRIPT[i]


def test_final_ack_as_sent(both):
    for side in both:
        assert side[4]["json"] == {"stream": "FB", "seq": 250, "batch": "b1", "count": 250}
        assert side[2]["json"] == {"error": {"code": 400, "err_code": 10205,
                                             "description": "batch publish is disabled"}}
