"""``jetlink bench batch``: atomic batches (ADR-50) of ``size`` messages, batches per second
on the embedded engine against the same batches on a private nats-server, in the same run.

Each run publishes ``batches`` atomic batches of ``size`` messages (subject ``at.<k>``, 16
bytes each) into a fresh stream with ``allow_atomic`` (file storage) on both sides:

- engine: one ``JetStream.publish_batch`` call per batch (its staged messages and the commit,
  one transaction), through core/streamstore/batches.py;
- server: nats-py on a private nats-server (core/live/server.py ``start_server``): the staged
  messages published without a reply subject (the server stages them and answers nothing),
  the commit as a request, waited for.

Then, in the same run and order, fast batches (ADR-50 fast ingest, nats-server 2.14) of the
same size without headers into a fresh stream with ``allow_batched``: ``publish_fast_batch``
on both sides, the engine's (core/jetstream.py) and jetlink's live client's
(core/live/jetstream.py: each message sent with its ``$FI`` reply subject, the server's flow
acks awaited as the client's flow control says), keys ``fast_...``.

Sides alternate (the one going first swaps every run); each side asserts every commit's ack
(``count`` = ``size``) and the stream's message count; per-pair ratios engine/server and their
median are returned. Creating the streams is not timed. The server is stopped by its PID.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["bench_batch"]

PAYLOAD = b"0123456789abcdef"


def _headers(bid: str, seq: int, last: bool) -> dict[str, str]:
    h = {"Nats-Batch-Id": bid, "Nats-Batch-Sequence": str(seq)}
    if last:
        h["Nats-Batch-Commit"] = "1"
    return h


def _engine_run(js: Any, stream: str, batches: int, size: int) -> float:
    from ..messages import BatchPubAck

    js.add_stream({"name": stream, "subjects": [f"{stream.lower()}.>"], "allow_atomic": True})
    prefix = stream.lower()
    work = [[(f"{prefix}.{k % 10}", PAYLOAD, _headers(f"b{b}", k, k == size))
             for k in range(1, size + 1)] for b in range(batches)]
    t0 = time.perf_counter()
    for msgs in work:
        acks = js.publish_batch(msgs)
        last = acks[-1]
        if not isinstance(last, BatchPubAck) or last.count != size:
            raise RuntimeError(f"engine: the commit was answered {last!r}")
    dt = time.perf_counter() - t0
    stored = js.state(stream).messages
    if stored != batches * size:
        raise RuntimeError(f"engine: {stored} messages stored, {batches * size} published")
    return dt


def _fast_work(stream: str, batches: int, size: int) -> list[list[tuple[str, bytes, None]]]:
    prefix = stream.lower()
    return [[(f"{prefix}.{k % 10}", PAYLOAD, None) for k in range(1, size + 1)]
            for _b in range(batches)]


def _fast_run(js: Any, stream: str, batches: int, size: int) -> float:
    """Fast batches (ADR-50 fast ingest, 2.14) of ``size`` messages on ``js``: the engine's
    JetStream or the live client's LiveJetStream (the same call, ``publish_fast_batch``, the
    client's flow control on both); each commit's count and the messages stored checked."""
    js.add_stream({"name": stream, "subjects": [f"{stream.lower()}.>"], "allow_batched": True,
                   "storage": "file"})
    work = _fast_work(stream, batches, size)
    t0 = time.perf_counter()
    for b, msgs in enumerate(work):
        res = js.publish_fast_batch(msgs, batch_id=f"f{b}")
        if not res.doc or res.doc.get("count") != size or res.errors:
            raise RuntimeError(f"fast batch: the commit was answered {res.doc!r}")
    dt = time.perf_counter() - t0
    stored = js.stream_info(stream).state.messages
    if stored != batches * size:
        raise RuntimeError(f"fast batch: {stored} messages stored, {batches * size} published")
    return dt


async def _server_run(url: str, stream: str, batches: int, size: int) -> float:
    import nats

    nc = await nats.connect(url)
    try:
        prefix = stream.lower()
        cfg = {"name": stream, "subjects": [f"{prefix}.>"], "allow_atomic": True,
               "storage": "file"}
        r = await nc.request(f"$JS.API.STREAM.CREATE.{stream}", json.dumps(cfg).encode(),
                             timeout=5)
        if "error" in json.loads(r.data):
            raise RuntimeError(f"server: {r.data!r}")
        work = [[(f"{prefix}.{k % 10}", _headers(f"b{b}", k, k == size))
                 for k in range(1, size + 1)] for b in range(batches)]
        t0 = time.perf_counter()
        for msgs in work:
            for subject, h in msgs[:-1]:
                await nc.publish(subject, PAYLOAD, headers=h)
            subject, h = msgs[-1]
            ack = json.loads((await nc.request(subject, PAYLOAD, headers=h, timeout=10)).data)
            if ack.get("count") != size:
                raise RuntimeError(f"server: the commit was answered {ack}")
        dt = time.perf_counter() - t0
        r = await nc.request(f"$JS.API.STREAM.INFO.{stream}", b"", timeout=5)
        stored = json.loads(r.data)["state"]["messages"]
        if stored != batches * size:
            raise RuntimeError(f"server: {stored} messages stored, {batches * size} published")
        return dt
    finally:
        await nc.close()


def _figures(prefix: str, eng: list[float], live: list[float], size: int) -> dict[str, Any]:
    """Batches/s of each run, their medians and the per-pair ratios engine/server."""
    doc: dict[str, Any] = {
        f"{prefix}engine_batches_per_s": [round(x, 1) for x in eng],
        f"{prefix}engine_median_batches_per_s": round(statistics.median(eng), 1),
        f"{prefix}engine_median_msgs_per_s": round(statistics.median(eng) * size),
    }
    if live:
        ratios = [e / s for e, s in zip(eng, live, strict=True)]
        doc.update({
            f"{prefix}server_batches_per_s": [round(x, 1) for x in live],
            f"{prefix}server_median_batches_per_s": round(statistics.median(live), 1),
            f"{prefix}ratios_engine_over_server": [round(r, 2) for r in ratios],
            f"{prefix}median_ratio": round(statistics.median(ratios), 2),
        })
    return doc


def bench_batch(batches: int = 50, size: int = 1000, runs: int = 3, *,
                server: bool = True) -> dict[str, Any]:
    """Batches per second on the engine and (``server``) on a private nats-server: atomic
    batches, then fast batches (keys ``fast_...``)."""
    from ..clock import SystemClock
    from ..jetstream import JetStream
    from ..live.server import server_available, start_server, stop_server
    from ..store import DataDir

    if batches <= 0 or runs <= 0 or not 1 <= size <= 1000:
        raise ValueError("batches and runs must be positive, size 1..1000")
    tmp = tempfile.mkdtemp(prefix="jetlink-bench-batch-")
    why_not = server_available() if server else "--no-server"
    srv = None
    live_js = None
    dd = DataDir(Path(tmp) / "data")
    try:
        js = JetStream(dd.open(), SystemClock())
        if why_not is None:
            srv = start_server(str(Path(tmp) / "server"))
            live_js = _live(srv.url)
        eng: list[float] = []
        live: list[float] = []
        fast_eng: list[float] = []
        fast_live: list[float] = []
        for run in range(runs):
            sides = ["engine", "server"] if run % 2 == 0 else ["server", "engine"]
            for side in sides:
                if side == "engine":
                    eng.append(batches / _engine_run(js, f"AT{run}", batches, size))
                    fast_eng.append(batches / _fast_run(js, f"FB{run}", batches, size))
                elif srv is not None:
                    live.append(batches / asyncio.run(_server_run(srv.url, f"AT{run}",
                                                                  batches, size)))
                    fast_live.append(batches / _fast_run(live_js, f"FB{run}", batches, size))
        doc: dict[str, Any] = {"batches": batches, "batch_size": size, "runs": runs,
                               **_figures("", eng, live, size),
                               **_figures("fast_", fast_eng, fast_live, size)}
        if not live:
            doc["server"] = f"not measured ({why_not})"
        return doc
    finally:
        if live_js is not None:
            live_js.conn.close()
        if srv is not None:
            stop_server(srv.proc)
        dd.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _live(url: str) -> Any:
    """jetlink's client of the live server (core/live/jetstream.py), for fast batches."""
    from ..live.client import connect
    from ..live.jetstream import LiveJetStream
    from ..live.target import ServerTarget

    return LiveJetStream(connect(ServerTarget((url,), origin="bench", timeout=30)))
