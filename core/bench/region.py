"""``jetlink bench dr --region``: a region's failover and failback on the embedded engine
(core/dr/region.py, what ``jetlink dr failover|failback --from west`` run).

:func:`bench_region` builds a data directory in a temporary directory (not timed): cluster
``west`` holding ``streams`` streams ``O<i>`` (subjects ``o<i>.>``, ``messages`` messages
each) and ``kv`` KV buckets ``B<j>`` (``messages`` keys each), ``consumers`` durable
consumers spread over the streams; cluster ``east`` holding a mirror ``M<i>`` of each stream
and a KV mirror bucket ``B<j>`` of each bucket, caught up by the replication pump, the
consumers' positions synced (core/dr/positions.py ``sync``). West goes down. Then, timed,
each on the backend a command opens:

- **plan**: ``plan_region(backend, "failover", ["west"])`` and its preview (``dr failover
  --from west --dry-run``); every object planned and every consumer to place are asserted.
- **failover**: the plan's ``carry_out`` (``dr failover --from west -f``); every object
  done and every consumer placed ("created") are asserted.
- **failback**: not timed first, east takes ``writes`` messages per object (the promoted
  streams and buckets take writes during the outage), west comes back up and takes ``tail``
  messages per object (the divergent tails); then, timed, ``plan_region(backend, "failback",
  ["west"], tail=DIR, switch=True)`` and its ``carry_out`` (``dr failback --from west --tail
  parquet:DIR --switch -f``). Asserted: every object done, each tail's message count is what
  west took, the rows of the tail dataset are their sum, and the round trip is exact (every
  stream and bucket of west is a primary again holding what the promoted one held, its
  durable consumers back; every one of east a mirror holding the same).

Only counts are asserted; the times are printed next to their goals.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["GOALS_S", "Region", "bench_region", "bench_region_failover", "dataset_rows",
           "expect", "failback_counts", "failover_counts"]

#: the goals of the embedded figures, seconds (printed next to them, never asserted)
GOALS_S = {"plan": 2.0, "failover": 10.0, "failback": 20.0}


@dataclass
class Region:
    """The region's size and what the world was built with."""

    streams: int
    kv: int
    consumers: int
    messages: int  # per stream, keys per bucket
    writes: int  # per object on east during the outage
    tail: int  # per object on west once back

    @property
    def objects(self) -> int:
        return self.streams + self.kv

    def stream(self, i: int) -> str:
        return f"O{i:04d}"

    def mirror(self, i: int) -> str:
        return f"M{i:04d}"

    def bucket(self, j: int) -> str:
        return f"B{j:03d}"

    def consumers_of(self, i: int) -> int:
        """Durable consumers of stream ``i`` (``consumers`` spread round-robin)."""
        return self.consumers // self.streams + (1 if i < self.consumers % self.streams else 0)

    def pairs(self) -> list[tuple[str, str, int, str]]:
        """Each object as (west's stream, east's mirror stream, the durable consumers of
        west's, west's subject)."""
        out = [(self.stream(i), self.mirror(i), self.consumers_of(i), f"o{i}.>")
               for i in range(self.streams)]
        return out + [(f"KV_{self.bucket(j)}", f"KV_{self.bucket(j)}", 0,
                       f"$KV.{self.bucket(j)}.>") for j in range(self.kv)]

    def to_json(self) -> dict[str, Any]:
        return {"streams": self.streams, "kv": self.kv, "objects": self.objects,
                "consumers": self.consumers, "messages_per_object": self.messages,
                "writes_per_object": self.writes, "tail_per_object": self.tail}


def _build(root: Path, r: Region) -> None:
    """West's streams, buckets and consumers; east's mirrors caught up, positions synced;
    west down."""
    from ..backend import open_backend
    from ..clock import SystemClock
    from ..config.consumer import ConsumerConfig
    from ..config.kv import KeyValueConfig, KVMirrorConfig
    from ..config.stream import StreamConfig
    from ..dr.positions import sync
    from ..kv import KV
    from ..replication import pump_until_idle
    from ..store import DataDir
    from .dr import west_and_east

    clock = SystemClock()
    dd = DataDir(root)
    try:
        west, east = west_and_east(dd, clock)
        for i in range(r.streams):
            name = r.stream(i)
            west.add_stream(StreamConfig.from_json({"name": name, "subjects": [f"o{i}.>"]}))
            west.publish_batch([(f"o{i}.{k % 10}", b"x" * 64) for k in range(r.messages)])
            for c in range(r.consumers_of(i)):
                west.add_consumer(name, ConsumerConfig.from_json(
                    {"durable_name": f"C{c}", "ack_policy": "explicit"}))
            east.add_stream(StreamConfig.from_json({"name": r.mirror(i), "mirror": {
                "name": name, "external": {"api": "$JS.west.API"}}}))
        wkv, ekv = KV(dd, "west", clock), KV(dd, "east", clock)
        for j in range(r.kv):
            b = r.bucket(j)
            wkv.create_bucket(KeyValueConfig(bucket=b))
            wkv.open(b).put_many([(f"k{k}", b"v" * 32) for k in range(r.messages)])
            ekv.create_mirror(KVMirrorConfig(name=b, origin_bucket=b, domain="west"))
        pump_until_idle(dd, clock)
        dd.close()
        with open_backend(None, root, "east", lambda: clock, step=False) as backend:
            sync(backend.site(), backend.positions())
        dd = DataDir(root)
        dd.set_down("west", True)
    finally:
        dd.close()


def _writes(root: Path, r: Region, cluster: str, per: int, subject: str) -> None:
    """``per`` messages on every stream and bucket of ``cluster`` (east: the promoted ones
    during the outage; west: the divergent tails once it is back)."""
    from ..clock import SystemClock
    from ..jetstream import JetStream
    from ..kv import KV
    from ..store import DataDir

    clock = SystemClock()
    dd = DataDir(root)
    try:
        dd.set_down("west", cluster == "east")
        js = JetStream(dd.open(cluster), clock)
        for i in range(r.streams):
            js.publish_batch([(f"o{i}.{subject}", b"w" * 64) for _ in range(per)])
        kv = KV(dd, cluster, clock)
        for j in range(r.kv):
            kv.open(r.bucket(j)).put_many([(f"{subject}{k}", b"w" * 32) for k in range(per)])
    finally:
        dd.close()


def _timed(root: Path, step: Callable[[Any, Any], dict[str, Any]]
           ) -> tuple[float, dict[str, Any]]:
    """``step(backend, clock)`` on east's backend opened as a command opens it, timed
    (opening included); its report document."""
    from ..backend import open_backend
    from ..clock import SystemClock

    clock = SystemClock()
    t0 = time.perf_counter()
    with open_backend(None, root, "east", lambda: clock, create=False, step=False) as backend:
        doc = step(backend, clock)
    return time.perf_counter() - t0, doc


def _timed_plan(root: Path, r: Region) -> tuple[float, dict[str, Any]]:
    """``dr failover --from west --dry-run``: the plan of every object, timed."""
    from ..dr.region import FAILOVER, plan_region

    seconds, doc = _timed(root, lambda backend, clock: plan_region(
        backend, FAILOVER, ["west"], clock=clock).preview().to_json())
    t = doc["totals"]
    planned = sum(1 for o in doc["objects"] if o["state"] == "planned")
    expect("the plan", "objects planned", planned, r.objects)
    expect("the plan", "consumers to place", t["consumers"], r.consumers)
    return seconds, {"objects": planned, "consumers_to_place": t["consumers"],
                     "messages_at_risk": t["messages_at_risk"]}


def _timed_failover(root: Path, r: Region) -> tuple[float, dict[str, Any]]:
    """``dr failover --from west -f``: the plan and its run, timed."""
    from ..dr.region import FAILOVER, plan_region

    seconds, doc = _timed(root, lambda backend, clock: plan_region(
        backend, FAILOVER, ["west"], clock=clock).carry_out().to_json())
    return seconds, {**failover_counts(doc, r),
                     "promoted_streams": sum(o["kind"] == "stream" for o in doc["objects"]),
                     "promoted_buckets": sum(o["kind"] == "kv" for o in doc["objects"])}


def failover_counts(doc: dict[str, Any], r: Region) -> dict[str, Any]:
    """A region failover's report (``dr failover --from -j``): every object done and every
    consumer placed ("created"), asserted; the counts."""
    placed = sum(1 for o in doc["objects"] for c in (o["result"] or {}).get("consumers") or []
                 if c["status"] == "created")
    expect("the failover", "objects done", doc["done"], r.objects)
    expect("the failover", "consumers placed", placed, r.consumers)
    return {"objects": doc["done"], "consumers_placed": placed}


def _timed_failback(root: Path, r: Region, tails: Path) -> tuple[float, dict[str, Any]]:
    """``dr failback --from west --tail parquet:DIR --switch -f``, timed (west up)."""
    from ..dr.region import FAILBACK, plan_region

    seconds, doc = _timed(root, lambda backend, clock: plan_region(
        backend, FAILBACK, ["west"], tail=str(tails), switch=True, clock=clock
    ).carry_out().to_json())
    return seconds, failback_counts(doc, r, tails)


def failback_counts(doc: dict[str, Any], r: Region, tails: Path) -> dict[str, Any]:
    """A region failback's report (``dr failback --from --tail parquet:DIR -j``): every
    object done, each tail what west took, the dataset's rows their sum, asserted; the
    counts."""
    per_object = [int(((o["result"] or {}).get("tail") or {}).get("messages") or 0)
                  for o in doc["objects"]]
    expect("the failback", "objects done", doc["done"], r.objects)
    expect("the failback", "objects whose tail is what west took",
           sum(1 for n in per_object if n == r.tail), r.objects)
    rows = dataset_rows(tails)
    expect("the failback", "rows of the tail dataset", rows, r.objects * r.tail)
    return {"objects": doc["done"], "tail_messages": sum(per_object), "tail_rows": rows}


def dataset_rows(path: Path) -> int:
    """The rows of every Parquet file under ``path`` (the region's tail dataset)."""
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for f in sorted(path.rglob("*.parquet")))


def _round_trip(root: Path, r: Region) -> dict[str, Any]:
    """After the failback and switch: every stream and bucket of west a primary holding what
    the promoted one held (origin's messages, east's writes), its consumers back; east's a
    mirror of it holding the same. The counts of objects found so."""
    from ..clock import SystemClock
    from ..jetstream import JetStream
    from ..store import DataDir

    clock = SystemClock()
    dd = DataDir(root)
    try:
        west, east = JetStream(dd.open("west"), clock), JetStream(dd.open("east"), clock)
        want = r.messages + r.writes
        exact = consumers = 0
        for origin, mirror, durable, _ in r.pairs():
            o, m = west.stream_info(origin), east.stream_info(mirror)
            placed = len(west.consumer_names(origin))
            consumers += placed
            if (o.config.mirror is None and m.config.mirror is not None
                    and m.config.mirror.name == origin and placed == durable
                    and o.state.messages == m.state.messages == want
                    and o.state.last_seq == m.state.last_seq):
                exact += 1
    finally:
        dd.close()
    expect("the round trip", "objects back exactly", exact, r.objects)
    expect("the round trip", "consumers back on west", consumers, r.consumers)
    return {"objects_exact": exact, "consumers_back": consumers,
            "messages_per_object": want}


def expect(step: str, what: str, got: int, want: int) -> None:
    """RuntimeError naming ``step``, ``what`` and both counts when they differ."""
    if got != want:
        raise RuntimeError(f"{step}: {got} {what}, expected {want}")


def bench_region(streams: int = 900, kv: int = 100, consumers: int = 2000, *,
                 messages: int = 100, writes: int = 5, tail: int = 5,
                 data_dir: str | None = None) -> dict[str, Any]:
    """A region's failover and failback on the embedded engine (module doc)."""
    if streams <= 0 or kv < 0 or consumers < 0 or messages <= 0 or writes < 0 or tail <= 0:
        raise ValueError("streams, messages and tail must be positive; kv, consumers and "
                         "writes not negative")
    r = Region(streams, kv, consumers, messages, writes, tail)
    tmp = Path(tempfile.mkdtemp(prefix="jetlink-bench-region-", dir=data_dir))
    root = tmp / "data"
    try:
        t0 = time.perf_counter()
        _build(root, r)
        built = time.perf_counter() - t0
        out: dict[str, Any] = {"backend": "embedded", **r.to_json()}
        for step, run in (("plan", _timed_plan), ("failover", _timed_failover)):
            seconds, counts = run(root, r)
            out[step] = {"seconds": round(seconds, 3), "goal_s": GOALS_S[step], **counts}
        if writes:
            _writes(root, r, "east", writes, "east")
        _writes(root, r, "west", tail, "tail")
        seconds, counts = _timed_failback(root, r, tmp / "tails")
        out["failback"] = {"seconds": round(seconds, 3), "goal_s": GOALS_S["failback"],
                           **counts, **_round_trip(root, r)}
        out["build_s"] = round(built, 1)
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def bench_region_failover(objects: int, *, messages: int = 100,
                          data_dir: str | None = None) -> dict[str, Any]:
    """The failover alone of a region of ``objects`` mirrors (``jetlink bench scale``): the
    world :func:`bench_region` builds, one object in ten a KV bucket (the rest streams, two
    durable consumers each), then the plan's ``carry_out`` timed (``dr failover --from west
    -f``); every object done and every consumer placed asserted."""
    if objects <= 0 or messages <= 0:
        raise ValueError("objects and messages must be positive")
    kv = objects // 10
    r = Region(objects - kv, kv, 2 * (objects - kv), messages, 0, 0)
    tmp = Path(tempfile.mkdtemp(prefix="jetlink-bench-region-", dir=data_dir))
    try:
        t0 = time.perf_counter()
        _build(tmp / "data", r)
        built = time.perf_counter() - t0
        seconds, counts = _timed_failover(tmp / "data", r)
        return {"backend": "embedded", **r.to_json(), "seconds": round(seconds, 3),
                **counts, "build_s": round(built, 1)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
