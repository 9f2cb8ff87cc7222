"""Consumer behaviour conformance: scenarios replayed on a real nats-server and on jetlink.

Each scenario is a list of steps (publish, create a consumer, pull a batch, ack / nak / term /
progress, purge, delete a message or a consumer, wait). Both sides run the same steps; after
each step the pulled deliveries (``num_delivered.stream_seq.consumer_seq.pending`` from the
ack subject), every consumer's info (delivered, ack floor, num_ack_pending, num_redelivered,
num_pending) and the stream's messages / first_seq / last_seq must be equal.

jetlink runs on a ManualClock that replays the server's wall time: before each step it is set
to the time elapsed on the server side, so ack waits and backoffs expire at the same moments.
Pulls use a short ``expires`` (150 ms) as real clients do, so no request lingers on the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import WAIT_TIMEOUT, wait_until

from jetlink.core.clock import ManualClock
from jetlink.core.config.consumer import ConsumerConfig
from jetlink.core.errors import ApiError

pytestmark = pytest.mark.conformance

MS = 1_000_000
PULL_EXPIRES_MS = 150
REQUEST_TIMEOUT = 30.0  # seconds for one request (bounds a failure only)
SETTLE_TIMEOUT = 10.0  # seconds the two sides may take to agree after a step (a failure only)


class ServerSide:
    def __init__(self, js: Any, stream: dict[str, Any]) -> None:
        self.js = js
        self.name = stream["name"]
        resp = js.stream_create(dict(stream))
        assert "error" not in resp, resp
        self.replies: dict[tuple[str, int], str] = {}

    def _run(self, coro: Any) -> Any:
        return self.js._run(coro)

    def pub(self, subject: str) -> int:
        msg = self._run(self.js._nc.request(subject, b"x", timeout=REQUEST_TIMEOUT))
        return json.loads(msg.data)["seq"]

    def add(self, cfg: dict[str, Any]) -> Any:
        name = cfg.get("durable_name") or cfg.get("name")
        resp = self.js.api(f"CONSUMER.CREATE.{self.name}.{name}",
                           {"stream_name": self.name, "config": cfg})
        return resp.get("error")

    def fetch(self, consumer: str, batch: int) -> list[str]:
        nc = self.js._nc

        async def pull() -> list[Any]:
            inbox = nc.new_inbox()
            queue: asyncio.Queue = asyncio.Queue()

            async def cb(m: Any) -> None:
                await queue.put(m)

            sub = await nc.subscribe(inbox, cb=cb)
            req = {"batch": batch, "expires": PULL_EXPIRES_MS * MS}
            await nc.publish(f"$JS.API.CONSUMER.MSG.NEXT.{self.name}.{consumer}",
                             json.dumps(req).encode(), reply=inbox)
            out = []
            # until the batch is full or the server ends the request (408 when it expires):
            # the deadline only bounds a server that never answers
            while len(out) < batch:
                m = await asyncio.wait_for(queue.get(), WAIT_TIMEOUT)
                if m.headers and m.headers.get("Status"):
                    break
                out.append(m.reply)
            await sub.unsubscribe()
            return out

        out = []
        for reply in self._run(pull()):
            parts = reply.split(".")
            self.replies[(consumer, int(parts[5]))] = reply
            out.append(f"{parts[4]}.{parts[5]}.{parts[6]}.{parts[8]}")
        # the request is gone from the server (a full batch ends it; else its expiry)
        wait_until(lambda: self._consumer(consumer).get("num_waiting") == 0,
                   message=lambda: f"{consumer}'s pull request gone from the server "
                                   f"({self._consumer(consumer)})")
        return out

    def _consumer(self, name: str) -> dict[str, Any]:
        return self.js.api(f"CONSUMER.INFO.{self.name}.{name}")

    def _ack(self, consumer: str, seq: int, body: bytes) -> None:
        reply = self.replies.get((consumer, seq))
        if reply is None:
            return
        # a request: nats-server answers an acknowledgement with a reply subject once it
        # has processed it (consumer.go processAck)
        self.js.request_msg(reply, body)

    def ack(self, consumer: str, seq: int) -> None:
        self._ack(consumer, seq, b"+ACK")

    def nak(self, consumer: str, seq: int, delay: int | None = None) -> None:
        self._ack(consumer, seq, b"-NAK" if delay is None else b'-NAK {"delay": %d}' % delay)

    def term(self, consumer: str, seq: int) -> None:
        self._ack(consumer, seq, b"+TERM")

    def wpi(self, consumer: str, seq: int) -> None:
        self._ack(consumer, seq, b"+WPI")

    def purge(self, **req: Any) -> Any:
        resp = self.js.api(f"STREAM.PURGE.{self.name}", req)  # consumers updated before the answer
        return resp.get("purged")

    def delmsg(self, seq: int) -> None:
        self.js.api(f"STREAM.MSG.DELETE.{self.name}", {"seq": seq})  # consumers updated before

    def rm(self, consumer: str) -> None:
        self.js.api(f"CONSUMER.DELETE.{self.name}.{consumer}")  # interest checked before

    def sleep(self, ms: int) -> None:
        time.sleep(ms / 1000)

    def info(self, consumer: str) -> Any:
        i = self.js.api(f"CONSUMER.INFO.{self.name}.{consumer}")
        if "error" in i:
            return i["error"]
        return (i["delivered"]["consumer_seq"], i["delivered"]["stream_seq"],
                i["ack_floor"]["consumer_seq"], i["ack_floor"]["stream_seq"],
                i["num_ack_pending"], i["num_redelivered"], i["num_pending"])

    def state(self) -> tuple[int, int, int]:
        s = self.js.stream_info(self.name)["state"]
        return s["messages"], s["first_seq"], s["last_seq"]


class JetlinkSide:
    def __init__(self, tmp: Path, stream: dict[str, Any]) -> None:
        from jetlink.core.jetstream import JetStream
        from jetlink.core.store import DataDir

        self.clock = ManualClock()
        self.cluster = DataDir(tmp).open()
        self.js = JetStream(self.cluster, self.clock)
        self.js.add_stream(dict(stream))
        self.name = stream["name"]

    def pub(self, subject: str) -> int:
        return self.js.publish(subject, b"x").seq

    def add(self, cfg: dict[str, Any]) -> Any:
        try:
            self.js.add_consumer(self.name, ConsumerConfig.from_json(cfg))
        except ApiError as err:
            return err.to_dict()["error"]
        return None

    def fetch(self, consumer: str, batch: int) -> list[str]:
        out = []
        for m in self.js.fetch(self.name, consumer, batch):
            dc, seq, dseq, _ts, pending = m.reply.split(".")[4:]
            out.append(f"{dc}.{seq}.{dseq}.{pending}")
        return out

    def ack(self, consumer: str, seq: int) -> None:
        self.js.ack(self.name, consumer, seq)

    def nak(self, consumer: str, seq: int, delay: int | None = None) -> None:
        self.js.nak(self.name, consumer, seq, delay=delay)

    def term(self, consumer: str, seq: int) -> None:
        self.js.term(self.name, consumer, seq)

    def wpi(self, consumer: str, seq: int) -> None:
        self.js.in_progress(self.name, consumer, seq)

    def purge(self, **req: Any) -> Any:
        return self.js.purge_stream(self.name, subject=req.get("filter"), seq=req.get("seq"),
                                    keep=req.get("keep"))

    def delmsg(self, seq: int) -> None:
        self.js.delete_msg(self.name, seq)

    def rm(self, consumer: str) -> None:
        self.js.delete_consumer(self.name, consumer)

    def sleep(self, ms: int) -> None:
        pass  # the runner replays the server's wall time

    def info(self, consumer: str) -> Any:
        try:
            i = self.js.consumer_info(self.name, consumer).to_json()
        except ApiError as err:
            return err.to_dict()["error"]
        return (i["delivered"]["consumer_seq"], i["delivered"]["stream_seq"],
                i["ack_floor"]["consumer_seq"], i["ack_floor"]["stream_seq"],
                i["num_ack_pending"], i["num_redelivered"], i["num_pending"])

    def state(self) -> tuple[int, int, int]:
        st = self.js.stream_info(self.name).state
        return st.messages, st.first_seq, st.last_seq


SCENARIOS: dict[str, tuple[dict[str, Any], list[tuple], list[str]]] = {
    "subject-purge": (
        {"name": "S", "subjects": ["s.>"]},
        [("pub", "s.a"), ("pub", "s.b"), ("pub", "s.a"), ("pub", "s.b"), ("pub", "s.c"),
         ("add", {"durable_name": "A", "ack_policy": "explicit"}),
         ("add", {"durable_name": "B", "ack_policy": "explicit", "filter_subject": "s.b"}),
         ("add", {"durable_name": "AA", "ack_policy": "explicit", "filter_subject": "s.a"}),
         ("add", {"durable_name": "W", "ack_policy": "explicit", "filter_subject": "s.*"}),
         ("fetch", "A", 3), ("fetch", "B", 1), ("fetch", "AA", 1), ("fetch", "W", 4),
         ("purge", {"filter": "s.a"}), ("fetch", "A", 5), ("fetch", "AA", 5), ("pub", "s.a"),
         ("purge", {"filter": "s.b"}), ("purge", {"seq": 6}), ("pub", "s.b"), ("pub", "s.c"),
         ("purge", {"keep": 1}), ("fetch", "B", 5), ("fetch", "W", 5)],
        ["A", "B", "AA", "W"]),
    "ack-all-term": (
        {"name": "S", "subjects": ["s.>"]},
        [("pub", "s.a"), ("pub", "s.b"), ("pub", "s.a"), ("pub", "s.b"), ("pub", "s.c"),
         ("add", {"durable_name": "A", "ack_policy": "all"}),
         ("fetch", "A", 4), ("term", "A", 2), ("ack", "A", 1), ("nak", "A", 4),
         ("fetch", "A", 4), ("delmsg", 3), ("fetch", "A", 4), ("ack", "A", 5)],
        ["A"]),
    "interest-filters": (
        {"name": "I", "subjects": ["i.>"], "retention": "interest"},
        [("add", {"durable_name": "A", "ack_policy": "explicit", "filter_subject": "i.a"}),
         ("add", {"durable_name": "B", "ack_policy": "all", "filter_subjects": ["i.a", "i.b"]}),
         ("pub", "i.a"), ("pub", "i.b"), ("pub", "i.c"), ("pub", "i.a"), ("pub", "i.b"),
         ("fetch", "A", 5), ("fetch", "B", 2), ("ack", "B", 2), ("ack", "A", 1),
         ("ack", "A", 4), ("fetch", "B", 5), ("ack", "B", 5),
         ("add", {"durable_name": "C", "ack_policy": "explicit"}), ("pub", "i.c"),
         ("pub", "i.a"),
         ("add", {"durable_name": "B", "ack_policy": "all", "filter_subject": "i.b"}),
         ("rm", "C"), ("fetch", "A", 5), ("nak", "A", 7), ("fetch", "A", 5), ("term", "A", 7)],
        ["A", "B", "C"]),
    "interest-update-filters": (
        {"name": "I", "subjects": ["i.>"], "retention": "interest"},
        [("add", {"durable_name": "A", "ack_policy": "explicit",
                  "filter_subjects": ["i.a", "i.b"]}),
         ("add", {"durable_name": "N", "ack_policy": "none", "filter_subject": "i.b"}),
         ("pub", "i.a"), ("pub", "i.b"), ("pub", "i.c"), ("pub", "i.a"), ("fetch", "N", 5),
         ("add", {"durable_name": "A", "ack_policy": "explicit", "filter_subject": "i.b"}),
         ("fetch", "A", 5), ("ack", "A", 2),
         ("add", {"durable_name": "M", "ack_policy": "explicit", "max_deliver": 1,
                  "ack_wait": 500 * MS}),
         # M's message falls due 0.5 s after its delivery: the pull after it comes 1 s later
         ("pub", "i.z"), ("fetch", "M", 5), ("sleep", 1500), ("fetch", "M", 5), ("rm", "A"),
         ("rm", "N"), ("pub", "i.q"), ("rm", "M"), ("pub", "i.q")],
        ["A", "N", "M"]),
    # Every pull is at least 0.6 s from the time any message falls due (ack wait, backoff,
    # the NAK's delay), so a busy machine's delays cannot change what is delivered. In
    # tenths of a second, what nats-server 2.15.1 delivers: 0 fetch 1,2 (due 20) | 32: 1
    # (due 82) | 64: 2 (due 114), 3 (due 84) | 96: 1, 3 (due 146) | 128: 2 (due 178), then
    # NAK 1 with a delay of 0.6 s | 140: nothing (1 stays due at 146) | 168: 3, and 1 for the
    # 4th and last time.
    "redelivery-timing": (
        {"name": "S", "subjects": ["s.>"]},
        [("pub", "s.a"), ("pub", "s.a"), ("pub", "s.a"),
         ("add", {"durable_name": "A", "ack_policy": "explicit", "ack_wait": 2000 * MS,
                  "backoff": [2000 * MS, 5000 * MS], "max_deliver": 4}),
         ("fetch", "A", 2), ("sleep", 3200), ("fetch", "A", 1), ("sleep", 3200),
         ("fetch", "A", 5), ("sleep", 3200), ("fetch", "A", 5), ("sleep", 3200),
         # (the fetch after the nak lands 0.4 s after its delay ends and 1.1 s before the
         # next backoff expiry: a request the server gets late on a loaded machine still
         # falls on the same side of both as the engine's time)
         ("fetch", "A", 5), ("nak", "A", 1, {"delay": 300 * MS}), ("sleep", 700),
         ("fetch", "A", 5), ("sleep", 2800), ("fetch", "A", 5)],
        ["A"]),
    "workqueue": (
        {"name": "W", "subjects": ["w.>"], "retention": "workqueue", "max_msgs": 4},
        [("pub", "w.a"), ("pub", "w.b"),
         ("add", {"durable_name": "A", "ack_policy": "explicit", "filter_subject": "w.a"}),
         ("add", {"durable_name": "B", "ack_policy": "explicit",
                  "filter_subjects": ["w.b", "w.c"]}),
         ("pub", "w.a"), ("pub", "w.c"), ("fetch", "A", 1), ("fetch", "B", 5),
         ("ack", "A", 1), ("term", "B", 4), ("nak", "B", 2), ("pub", "w.c"), ("pub", "w.c"),
         ("pub", "w.c"), ("fetch", "B", 5), ("ack", "B", 2), ("ack", "B", 7),
         ("purge", {"filter": "w.a"}), ("fetch", "A", 5), ("rm", "B")],
        ["A", "B"]),
    "last-per-subject-and-new": (
        {"name": "S", "subjects": ["s.>"]},
        [("pub", "s.a"), ("pub", "s.b"), ("pub", "s.a"), ("pub", "s.c"), ("pub", "s.b"),
         ("add", {"durable_name": "L", "ack_policy": "explicit",
                  "deliver_policy": "last_per_subject", "filter_subject": "s.*"}),
         ("add", {"durable_name": "N", "ack_policy": "none", "deliver_policy": "new"}),
         ("add", {"durable_name": "Q", "ack_policy": "explicit",
                  "deliver_policy": "by_start_sequence", "opt_start_seq": 4,
                  "filter_subject": "s.b"}),
         ("fetch", "L", 2), ("pub", "s.b"), ("pub", "s.d"), ("fetch", "L", 10),
         ("fetch", "N", 10), ("fetch", "Q", 10), ("ack", "L", 3), ("ack", "L", 4),
         ("pub", "s.x"), ("delmsg", 6), ("fetch", "Q", 10), ("fetch", "L", 10)],
        ["L", "N", "Q"]),
    "max-ack-pending-nak-last": (
        {"name": "S", "subjects": ["s.>"]},
        [("pub", "s.a"), ("pub", "s.b"), ("pub", "s.a"), ("pub", "s.b"), ("pub", "s.c"),
         ("pub", "s.c"),
         ("add", {"durable_name": "A", "ack_policy": "explicit", "max_ack_pending": 2,
                  "ack_wait": 1000 * MS}),
         ("add", {"durable_name": "B", "ack_policy": "all"}),
         ("add", {"durable_name": "L", "ack_policy": "explicit", "deliver_policy": "last",
                  "filter_subjects": ["s.a", "s.b"]}),
         ("fetch", "A", 5), ("nak", "A", 1), ("fetch", "A", 5), ("ack", "A", 5),
         ("ack", "A", 2), ("fetch", "A", 5), ("nak", "A", 6), ("term", "A", 1),
         ("fetch", "A", 5), ("fetch", "B", 3), ("delmsg", 2), ("fetch", "B", 5),
         ("ack", "B", 4), ("fetch", "L", 5), ("pub", "s.b"), ("fetch", "L", 5),
         ("pub", "s.c"), ("fetch", "L", 5), ("sleep", 2000), ("fetch", "A", 5)],  # 1 s past due
        ["A", "B", "L"]),
}


def _settled(server: ServerSide, mine: JetlinkSide, consumers: list[str],
             now: Any) -> tuple[list[Any], list[Any]]:
    """Both sides' consumer infos and stream state (jetlink's at ``now()``), read until they
    agree or :data:`SETTLE_TIMEOUT` passes: the server counts a stored message for its
    consumers after the PubAck, in its signal loop (stream.go signalConsumersLoop)."""
    seen: list[list[Any]] = [[], []]

    def agree() -> bool:
        want = [server.info(c) for c in consumers] + [server.state()]
        mine.clock.set(now())
        seen[:] = [[mine.info(c) for c in consumers] + [mine.state()], want]
        return seen[0] == seen[1]

    with contextlib.suppress(AssertionError):  # compared by the caller, as last read
        wait_until(agree, timeout=SETTLE_TIMEOUT, interval=0.02)
    return seen[0], seen[1]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario(js, tmp_path, name) -> None:
    stream, steps, consumers = SCENARIOS[name]
    server, mine = ServerSide(js, stream), JetlinkSide(tmp_path, stream)
    t0 = time.monotonic_ns()
    base = mine.clock.now_ns()
    try:
        for i, step in enumerate(steps):
            op, *args = step
            kw: dict[str, Any] = {}
            if args and isinstance(args[-1], dict) and op in ("purge", "nak"):
                kw = args.pop()
            start = time.monotonic_ns()
            got_server = getattr(server, op)(*args, **kw)
            # jetlink acts when the server got the request (after a wait: at its end).
            mine.clock.set(base + ((time.monotonic_ns() if op == "sleep" else start) - t0))
            got_mine = getattr(mine, op)(*args, **kw)
            if op in ("pub", "fetch", "add", "purge"):
                assert got_mine == got_server, f"step {i} {step}"
            got, want = _settled(server, mine, consumers, lambda: base + (time.monotonic_ns() - t0))
            assert got == want, f"after step {i} {step}"
    finally:
        mine.cluster.close()
