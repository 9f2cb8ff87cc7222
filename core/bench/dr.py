"""``jetlink bench dr``: how long ``dr check`` takes over many mirrors (goal: 1,000 mirrors
in under 2 s on the embedded engine; the live figure, under 5 s, is not measured here yet),
and failback against a plain copy of the same data (:func:`bench_failback`, goal: at most
2.5 times as long).

:func:`bench_dr_check` builds a data directory in a temporary directory: cluster ``west``
holding the origin ``ORDERS`` (subjects ``orders.>``, ``messages`` messages, ``consumers``
durable consumers), cluster ``east`` holding ``mirrors`` mirrors of it, caught up by the
replication pump, their positions synced (core/dr/positions.py ``sync``). Then it times
core/dr/readiness.py ``check_readiness`` over the data directory's backend, ``runs`` times,
and asserts only the count of mirrors checked (its status is WARNING: mirrors of one origin
on one side are what a region failover refuses, core/dr/rules.py ``two_primaries``; each
mirror's check is the same work all the same). Building is not timed.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["bench_dr_check", "bench_failback", "west_and_east"]

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


# -- failback: the way back of many promoted streams, against a plain copy ---------------------


def west_and_east(dd: Any, clock: Any) -> tuple[Any, Any]:
    """Clusters ``west`` and ``east`` added to the data directory ``dd``: their JetStream
    APIs (west, east)."""
    from ..jetstream import JetStream

    dd.add_cluster("west", "nats")
    dd.add_cluster("east", "nats")
    return JetStream(dd.open("west"), clock), JetStream(dd.open("east"), clock)


def _failback_world(root: Path, streams: int, messages: int, tail: int) -> None:
    """West holding ``streams`` origins O<i> (``messages`` in all), east their mirrors M<i>
    caught up, then failed over (west down); west took ``tail`` more messages per stream
    meanwhile (the divergent tail), and each promoted stream ``tail`` new ones. West is up
    again at the end."""
    from ..backend import EmbeddedBackend
    from ..clock import SystemClock
    from ..config.stream import StreamConfig
    from ..dr import promote
    from ..replication import pump_until_idle
    from ..store import DataDir

    clock = SystemClock()
    dd = DataDir(root)
    try:
        west, east = west_and_east(dd, clock)
        per = messages // streams
        for i in range(streams):
            west.add_stream(StreamConfig.from_json({"name": f"O{i:03d}",
                                                    "subjects": [f"o{i}.>"]}))
            west.publish_batch([(f"o{i}.{k % 50}", b"x" * 64) for k in range(per)])
            east.add_stream(StreamConfig.from_json({"name": f"M{i:03d}", "mirror": {
                "name": f"O{i:03d}", "external": {"api": "$JS.west.API"}}}))
        pump_until_idle(dd, clock)
        dd.set_down("west", True)
        site = EmbeddedBackend(root, "east", lambda: clock, store=dd, step=False).site()
        for i in range(streams):
            west.publish_batch([(f"o{i}.tail", b"t" * 64) for _ in range(tail)])
            promote(site, f"M{i:03d}", failover=True, subjects=[f"m{i}.>"])
            east.publish_batch([(f"m{i}.new", b"n" * 64) for _ in range(tail)])
        dd.set_down("west", False)
    finally:
        dd.close()


def _run_failback(root: Path, streams: int, tails: Path) -> tuple[int, int, int]:
    """Fail back every promoted stream (core/dr/failback.py, no switch); the messages now
    in west's mirrors, those the old origins kept (reused) and those copied."""
    from ..backend import EmbeddedBackend
    from ..clock import SystemClock
    from ..dr import failback
    from ..jetstream import JetStream
    from ..store import DataDir

    clock = SystemClock()
    dd = DataDir(root)
    try:
        site = EmbeddedBackend(root, "east", lambda: clock, store=dd, step=False).site()
        reused = copied = 0
        for i in range(streams):
            reuse = failback(site, f"M{i:03d}", tail=str(tails / f"M{i:03d}")).reuse
            reused += reuse["messages"]
            copied += reuse["copied"]
        west = JetStream(dd.open("west"), clock)
        held = sum(int(west.stream_info(f"O{i:03d}").state.messages) for i in range(streams))
        return held, reused, copied
    finally:
        dd.close()


def _run_copy(root: Path, streams: int) -> int:
    """The plain copy of the same data: a fresh mirror in west of every promoted stream,
    caught up by the replication pump (what failback's catch-up amounts to)."""
    from ..clock import SystemClock
    from ..config.stream import StreamConfig
    from ..jetstream import JetStream
    from ..replication import pump_until_idle
    from ..store import DataDir

    clock = SystemClock()
    dd = DataDir(root)
    try:
        west = JetStream(dd.open("west"), clock)
        for i in range(streams):
            west.add_stream(StreamConfig.from_json({"name": f"C{i:03d}", "mirror": {
                "name": f"M{i:03d}", "external": {"api": "$JS.east.API"}}}))
        pump_until_idle(dd, clock)
        return sum(int(west.stream_info(f"C{i:03d}").state.messages) for i in range(streams))
    finally:
        dd.close()


def bench_failback(streams: int = 100, messages: int = 1_000_000, *, tail: int = 10,
                   runs: int = 3, data_dir: str | None = None) -> dict[str, Any]:
    """Failback of ``streams`` promoted streams holding ``messages`` in all and ``tail`` new
    ones each, each old origin with a divergent tail of ``tail`` messages saved to a
    dataset, against a plain copy of the same data (fresh mirrors of the promoted streams,
    caught up by the pump): the world is built once (not timed), each side runs on its own
    copy of it, sides alternating pair by pair; the messages each side holds are asserted
    equal, and the failback's kept (``reused``: the old origins' messages up to the
    divergence point, core/dr/reuse.py) and ``copied`` ones to add up to them."""
    if streams <= 0 or messages < streams or runs <= 0:
        raise ValueError("streams and runs must be positive, messages at least streams")
    tmp = Path(tempfile.mkdtemp(prefix="jetlink-bench-failback-", dir=data_dir))
    try:
        t0 = time.perf_counter()
        world = tmp / "world"
        _failback_world(world, streams, messages, tail)
        built = time.perf_counter() - t0
        expected = (messages // streams + tail) * streams
        pairs = []
        reused = copied = 0
        for run in range(runs):
            times: dict[str, float] = {}
            for side in (("failback", "copy") if run % 2 == 0 else ("copy", "failback")):
                root = tmp / f"{side}-{run}"
                shutil.copytree(world, root)
                t1 = time.perf_counter()
                if side == "failback":
                    moved, reused, copied = _run_failback(root, streams, tmp / f"tails-{run}")
                    if reused + copied != moved:
                        raise RuntimeError(f"failback reused {reused} and copied {copied} "
                                           f"messages, its mirrors hold {moved}")
                else:
                    moved = _run_copy(root, streams)
                times[side] = time.perf_counter() - t1
                if moved != expected:
                    raise RuntimeError(f"{side} moved {moved} messages, expected {expected}")
                shutil.rmtree(root, ignore_errors=True)
            pairs.append(times)
        ratios = [p["failback"] / p["copy"] for p in pairs]
        failback_s = statistics.median(p["failback"] for p in pairs)
        return {"backend": "embedded", "streams": streams, "messages": expected,
                "tail_per_stream": tail, "new_per_stream": tail, "runs": runs,
                "reused": reused, "copied": copied,
                "failback_s": [round(p["failback"], 3) for p in pairs],
                "copy_s": [round(p["copy"], 3) for p in pairs],
                "ratios": [round(r, 2) for r in ratios],
                "ratio_median": round(statistics.median(ratios), 2),
                "failback_median_s": round(failback_s, 3),
                "messages_per_s": round(expected / failback_s), "goal_ratio": 2.5,
                "build_s": round(built, 1)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
