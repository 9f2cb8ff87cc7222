"""``jetlink bench dr``: how long ``dr check`` takes over many mirrors (goal: 1,000 mirrors
in under 2 s on the embedded engine; the live figure, under 5 s, is not measured here yet).

:func:`bench_dr_check` builds a data directory in a temporary directory: cluster ``west``
holding the origin ``ORDERS`` (subjects ``orders.>``, ``messages`` messages, ``consumers``
durable consumers), cluster ``east`` holding ``mirrors`` mirrors of it, caught up by the
replication pump, their positions synced (core/dr/positions.py ``sync``). Then it times
core/dr/readiness.py ``check_readiness`` over the data directory's backend, ``runs`` times,
and asserts only the count of mirrors checked. Building is not timed.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["bench_dr_check"]

ORIGIN = "ORDERS"


def _timed(check: Any, runs: int, mirrors: int) -> dict[str, Any]:
    times = []
    status = ""
    for _ in range(runs):
        t0 = time.perf_counter()
        readiness = check()
        times.append(time.perf_counter() - t0)
        checked = len(readiness.mirrors)
        if checked != mirrors:
            raise RuntimeError(f"dr check saw {checked} mirrors, {mirrors} were made")
        status = readiness.status.value
    return {"mirrors": mirrors, "runs": runs, "status": status,
            "median_s": round(statistics.median(times), 3), "min_s": round(min(times), 3),
            "max_s": round(max(times), 3),
            "mirrors_per_s": round(mirrors / statistics.median(times))}


def bench_dr_check(mirrors: int = 1000, *, messages: int = 1000, consumers: int = 10,
                   runs: int = 3, data_dir: str | None = None) -> dict[str, Any]:
    """``dr check`` of ``mirrors`` mirrors on the embedded engine (module doc)."""
    from ..backend import open_backend
    from ..clock import SystemClock
    from ..config.consumer import ConsumerConfig
    from ..config.stream import StreamConfig
    from ..dr.positions import sync
    from ..dr.readiness import check_readiness
    from ..jetstream import JetStream
    from ..replication import pump_until_idle
    from ..store import DataDir

    if mirrors <= 0 or runs <= 0:
        raise ValueError("mirrors and runs must be positive")
    tmp = tempfile.mkdtemp(prefix="jetlink-bench-dr-", dir=data_dir)
    clock = SystemClock()
    try:
        t0 = time.perf_counter()
        dd = DataDir(f"{tmp}/data")
        dd.add_cluster("west", "nats")
        dd.add_cluster("east", "nats")
        west = JetStream(dd.open("west"), clock)
        west.add_stream(StreamConfig.from_json({"name": ORIGIN, "subjects": ["orders.>"]}))
        west.publish_batch([(f"orders.{i % 100}", b"x" * 64) for i in range(messages)])
        for c in range(consumers):
            west.add_consumer(ORIGIN, ConsumerConfig.from_json(
                {"durable_name": f"C{c}", "ack_policy": "explicit"}))
        east = JetStream(dd.open("east"), clock)
        for i in range(mirrors):
            east.add_stream(StreamConfig.from_json({"name": f"M{i:05d}", "mirror": {
                "name": ORIGIN, "external": {"api": "$JS.west.API"}}}))
        pump_until_idle(dd, clock)
        dd.close()
        with open_backend(None, Path(f"{tmp}/data"), "east", lambda: clock,
                          step=False) as backend:
            sync(backend.site(), backend.positions())
        built = time.perf_counter() - t0

        def check() -> Any:
            with open_backend(None, Path(f"{tmp}/data"), "east", lambda: clock,
                              create=False, step=False) as backend:
                return check_readiness(backend, clusters=["east"], clock=clock)

        out = {"backend": "embedded", **_timed(check, runs, mirrors),
               "goal_s": 2.0, "build_s": round(built, 1)}
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
