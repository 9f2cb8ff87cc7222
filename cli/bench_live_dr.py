"""``jetlink bench live-dr``: disaster recovery on real nats-servers, timed.

Two figures, each the whole jetlink command as an operator runs it (a new process: start-up,
connection, the work), on servers this command starts (core/live/local.py: west and east,
JetStream domains joined by a leafnode) and stops by PID:

- **apply**: ``jetlink apply FILE -f`` of a topology file declaring ``--streams`` streams
  (default 1,000) in a cluster bound to west's server; the count of streams the server then
  holds is asserted. Goal: under 15 s.
- **failover**: ``jetlink -s EAST stream failover ORDERS_EAST -f --json`` of a mirror whose
  origin (on west) has ``--consumers`` durable consumers (default 200) at different
  positions, after ``jetlink positions sync`` and a SIGKILL of west: the consumers are
  placed from the synced positions; the report's 200 "created" placements are asserted.
  Goal: under 3 s.

Each is run ``--runs`` times on fresh servers; the medians and every run are reported.
There is no other tool doing the same work to compare with (natscli neither applies
topology files nor places consumers), so these are timings against the goals.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

APPLY_GOAL_S = 15.0
FAILOVER_GOAL_S = 3.0


def _jetlink(*args: str) -> list[str]:
    return [sys.executable, "-m", "jetlink.cli.main", *args]


def _run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t0
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[2:])} exited with {res.returncode}: "
                           f"{res.stderr.strip() or res.stdout.strip()[-500:]}")
    return seconds, res.stdout


def _env() -> dict[str, str]:
    from jetlink.core.bench.children import without_user_settings

    return without_user_settings()


def topology_file(path: Path, url: str, streams: int) -> None:
    """A topology file: cluster west bound to ``url``, ``streams`` streams on it."""
    lines = ["version = 1", "", "[clusters.west]", 'kind = "nats"', f'server = "{url}"', ""]
    for i in range(streams):
        lines += [f"[streams.S{i:04d}]", 'cluster = "west"', f'subjects = ["s{i:04d}.>"]',
                  'storage = "memory"', ""]
    path.write_text("\n".join(lines))


def _client(url: str) -> Any:
    from jetlink.core.live.client import connect
    from jetlink.core.live.jetstream import LiveJetStream
    from jetlink.core.live.target import ServerTarget

    return LiveJetStream(connect(ServerTarget((url,), origin="bench", timeout=30)))


def measure_apply(root: Path, streams: int) -> float:
    from jetlink.core.live.local import start_regions

    regions = start_regions(root / "servers")
    try:
        f = root / "streams.toml"
        topology_file(f, regions.west.url, streams)
        seconds, _ = _run(_jetlink("apply", str(f), "-f"), _env())
        js = _client(regions.west.url)
        try:
            held = len(js.stream_names())
        finally:
            js.close()
        if held != streams:
            raise RuntimeError(f"apply: the server holds {held} streams, expected {streams}")
        return seconds
    finally:
        regions.stop()


def measure_failover(root: Path, consumers: int, messages: int) -> float:
    from jetlink.core.config.consumer import ConsumerConfig
    from jetlink.core.live.local import start_regions

    regions = start_regions(root / "servers")
    try:
        west = _client(regions.east.url).in_domain("west")
        east = _client(regions.east.url)
        try:
            west.add_stream({"name": "ORDERS", "subjects": ["orders.>"], "storage": "memory"})
            for start in range(0, messages, 10_000):
                n = min(10_000, messages - start)
                acks = west.publish_batch([("orders.new", b"x" * 64, None)] * n)
                assert not any(isinstance(a, Exception) for a in acks)
            east.add_stream({"name": "ORDERS_EAST", "storage": "memory", "mirror": {
                "name": "ORDERS", "external": {"api": "$JS.west.API"}}})
            deadline = time.monotonic() + 60
            while east.stream_info("ORDERS_EAST").state.last_seq < messages:
                if time.monotonic() > deadline:
                    raise RuntimeError("the mirror did not catch up within 60 s")
                time.sleep(0.05)
            for i in range(consumers):
                west.add_consumer("ORDERS", ConsumerConfig.from_json({
                    "durable_name": f"C{i:03d}", "ack_policy": "explicit",
                    "deliver_policy": "by_start_sequence",
                    "opt_start_seq": 1 + (i * messages) // consumers}))
        finally:
            west.close()
            east.close()
        _run(_jetlink("-s", regions.east.url, "positions", "sync"), _env())
        regions.west.kill()
        seconds, out = _run(_jetlink("-s", regions.east.url, "stream", "failover",
                                     "ORDERS_EAST", "-f", "--json"), _env())
        placed = [p for p in json.loads(out)["consumers"] if p["status"] == "created"]
        if len(placed) != consumers:
            raise RuntimeError(f"failover placed {len(placed)} consumers, expected "
                               f"{consumers}")
        return seconds
    finally:
        regions.stop()


def bench_live_dr(*, streams: int = 1000, consumers: int = 200, messages: int = 10_000,
                  runs: int = 3) -> dict[str, Any]:
    apply_s, failover_s = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="jetlink-bench-dr-") as tmp:
            apply_s.append(measure_apply(Path(tmp), streams))
        with tempfile.TemporaryDirectory(prefix="jetlink-bench-dr-") as tmp:
            failover_s.append(measure_failover(Path(tmp), consumers, messages))
    return {
        "apply": {"streams": streams, "runs_s": [round(s, 3) for s in apply_s],
                  "median_s": round(statistics.median(apply_s), 3), "goal_s": APPLY_GOAL_S},
        "failover": {"consumers": consumers, "messages": messages,
                     "runs_s": [round(s, 3) for s in failover_s],
                     "median_s": round(statistics.median(failover_s), 3),
                     "goal_s": FAILOVER_GOAL_S},
    }


def render(result: dict[str, Any]) -> list[str]:
    a, f = result["apply"], result["failover"]

    def runs(r: dict[str, Any]) -> str:
        return ", ".join(f"{s:.2f}s" for s in r["runs_s"])

    return [
        f"apply of {a['streams']:,} streams to a live server: median {a['median_s']:.2f}s "
        f"(runs {runs(a)}; goal under {a['goal_s']:g}s)",
        f"failover of a mirror with {f['consumers']:,} durable consumers placed "
        f"({f['messages']:,} messages, origin killed): median {f['median_s']:.2f}s "
        f"(runs {runs(f)}; goal under {f['goal_s']:g}s)",
    ]
