"""``jetlink bench acls``: what Kafka ACLs cost the embedded engine.

Two figures, each printed beside its goal:

- **authorization** (goal: a cluster holding ``acls`` ACLs costs under 5% more than one
  without an authorizer): two Kafka clusters in one temporary data directory, ``plain`` (no
  authorizer) and ``secured`` (an authorizer and ``acls`` ACLs: literal and prefixed ones
  over many topics, groups and principals, a few dozen on the benchmarked topic itself, among
  them the bench principal's WRITE and READ on it and READ on its group). Each side does the
  same work: ``requests`` produce requests of one record, then ``requests`` consume requests
  (a fetch of one record and the commit of its offset), made by the topic store acting for
  ``User:bench`` (``Kafka(..., principal=...)``, what ``topic produce|consume --principal``
  use): each request is authorized there by Kafka's rules (core/kafka/authz.py over
  ``AclStore.authorize``; on the plain cluster "no authorizer" from the settings alone), and
  a refusal stops the run. Sides alternate which goes first, run by run; the records produced
  and consumed are asserted on both; the per-run ratios secured / plain and their median are
  printed. Within a run the sides take turns by chunks of 100 requests (the side that starts
  alternating too), so that both meet the same moments of a busy machine; the decision alone
  (microseconds per ``authorize`` on each cluster) is printed beside.
- **ACL sync** (goal: a sync of ``acls`` ACLs in under 2 s): the way a cluster link's ACL
  sync copies them: the source's ACLs read through a filter (``AclStore.find``), created on
  the destination as the link's (``AclStore.add`` with an owner, one transaction), then the
  removal pass over the link's ACLs once the source has none of them (``AclStore.remove`` of
  the owner's, one transaction). Counts asserted (every ACL created, every one removed); the
  copy, the removal pass and their sum per run, and the median sum.

The worlds are built before timing (not timed). Benchmarks print what they measured; the
counts they assert are the only failures.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["AUTHORIZE_GOAL", "SYNC_GOAL_S", "bench_acl_sync", "bench_authorize"]

AUTHORIZE_GOAL = 1.05  # secured / plain
SYNC_GOAL_S = 2.0
PRINCIPAL = "User:bench"
TOPIC = "orders"
GROUP = "bench"
OWNER = "link:bench"


def _acls(count: int) -> list[Any]:
    """``count`` ACLs (at least the bench principal's three): the bench principal's WRITE
    and READ on the topic and READ on its group, 30 other principals' on the topic, then
    literal and prefixed ones over other topics and groups, ALLOW and DENY."""
    from ..kafka.acls import AclBinding

    out = [AclBinding("TOPIC", TOPIC, "LITERAL", PRINCIPAL, "*", "WRITE", "ALLOW"),
           AclBinding("TOPIC", TOPIC, "LITERAL", PRINCIPAL, "*", "READ", "ALLOW"),
           AclBinding("GROUP", GROUP, "LITERAL", PRINCIPAL, "*", "READ", "ALLOW")]
    out += [AclBinding("TOPIC", TOPIC, "LITERAL", f"User:u{i}", "*", "READ", "ALLOW")
            for i in range(30)]
    i = 0
    while len(out) < count:
        kind = ("TOPIC", "GROUP")[i % 2]
        pattern = "PREFIXED" if i % 5 == 0 else "LITERAL"
        name = f"{'t' if kind == 'TOPIC' else 'g'}{i // 7:05d}" + ("-" if pattern ==
                                                                    "PREFIXED" else "")
        out.append(AclBinding(kind, name, pattern, f"User:u{i % 400}", "*",
                              ("READ", "WRITE", "DESCRIBE")[i % 3],
                              "DENY" if i % 11 == 0 else "ALLOW"))
        i += 1
    return out[:max(count, 3)]


def _world(root: Path, acls: int) -> None:
    from ..clock import SystemClock
    from ..kafka.acls import AclStore
    from ..kafka.topics import Kafka
    from ..store import DataDir

    dd = DataDir(root)
    try:
        for name in ("plain", "secured"):
            dd.add_cluster(name, kind="kafka")
            Kafka(dd.open(name), SystemClock()).create_topic(TOPIC, 1)
        store = AclStore(dd.open("secured"))
        store.configure(enabled=True)
        store.add(_acls(acls))
    finally:
        dd.close()


class _Side:
    """One cluster's authorized client: its topic store acting for the principal, the next
    offset its group reads, and the time its requests took so far."""

    def __init__(self, dd: Any, cluster: str) -> None:
        from ..clock import SystemClock
        from ..kafka.topics import Kafka

        db = dd.open(cluster)
        self.name = cluster
        # the client acting as PRINCIPAL: each request authorized by the topic store itself
        # (core/kafka/authz.py check_request), as `topic produce|consume --principal` is
        self.kafka = Kafka(db, SystemClock(), principal=PRINCIPAL)
        self.offset = self.kafka.committed(GROUP).get((TOPIC, 0), 0)
        self.seconds = 0.0
        self.produced = self.consumed = 0

    def produce(self, n: int) -> None:
        """``n`` produce requests of one record (Produce: WRITE on the topic)."""
        t0 = time.perf_counter()
        for i in range(n):
            self.produced += len(self.kafka.produce(TOPIC, [(None, b"r%d" % i)], partition=0))
        self.seconds += time.perf_counter() - t0

    def consume(self, n: int) -> None:
        """``n`` consume requests: a fetch of one record (Fetch: READ on the topic) and the
        commit of its offset (OffsetCommit: READ on the group, then on the topic)."""
        t0 = time.perf_counter()
        for _ in range(n):
            got = self.kafka.fetch(TOPIC, 0, self.offset, max_records=1)
            self.consumed += len(got)
            self.offset += len(got)
            self.kafka.commit(GROUP, {(TOPIC, 0): self.offset})
        self.seconds += time.perf_counter() - t0


CHUNK = 100  # requests a side makes before the other side's turn


def _run(root: Path, requests: int, run: int) -> dict[str, float]:
    """One run: ``requests`` produce requests then as many consume requests on each side,
    in chunks of :data:`CHUNK` taken in turn (the side that starts alternating chunk by
    chunk and run by run), so that both sides meet the same moments of a busy machine. The
    records each side produced and consumed are asserted."""
    from ..store import DataDir

    dd = DataDir(root)
    try:
        sides = [_Side(dd, "plain"), _Side(dd, "secured")]
        turn = run
        for verb in ("produce", "consume"):
            done = 0
            while done < requests:
                n = min(CHUNK, requests - done)
                order = sides if turn % 2 == 0 else sides[::-1]
                for side in order:
                    getattr(side, verb)(n)
                done += n
                turn += 1
        for side in sides:
            if side.produced != requests or side.consumed != requests:
                raise RuntimeError(f"{side.name}: {side.produced} records produced and "
                                   f"{side.consumed} consumed, {requests} each expected")
        return {side.name: side.seconds for side in sides}
    finally:
        dd.close()


def _decisions(root: Path, calls: int, runs: int) -> dict[str, float]:
    """The decision alone: microseconds per ``AclStore.authorize`` of the consume's READ on
    the topic, on each cluster (median of ``runs`` timings of ``calls`` calls, sides
    alternating)."""
    from ..kafka.acls import AclStore
    from ..store import DataDir

    dd = DataDir(root)
    try:
        stores = {name: AclStore(dd.open(name)) for name in ("plain", "secured")}
        times: dict[str, list[float]] = {"plain": [], "secured": []}
        for run in range(runs):
            for side in (("plain", "secured") if run % 2 == 0 else ("secured", "plain")):
                store = stores[side]
                t0 = time.perf_counter()
                for _ in range(calls):
                    store.authorize(PRINCIPAL, "READ", "TOPIC", TOPIC)
                times[side].append((time.perf_counter() - t0) / calls * 1e6)
        return {"authorize_plain_us": round(statistics.median(times["plain"]), 1),
                "authorize_secured_us": round(statistics.median(times["secured"]), 1)}
    finally:
        dd.close()


def bench_authorize(acls: int = 10_000, requests: int = 2000, runs: int = 5,
                    data_dir: str | None = None) -> dict[str, Any]:
    """The authorization figure (module docstring)."""
    if acls < 3 or requests <= 0 or runs <= 0:
        raise ValueError("acls must be at least 3, requests and runs positive")
    tmp = Path(tempfile.mkdtemp(prefix="jetlink-bench-acls-", dir=data_dir))
    try:
        t0 = time.perf_counter()
        _world(tmp / "data", acls)
        built = time.perf_counter() - t0
        pairs = [_run(tmp / "data", requests, run) for run in range(runs)]
        ratios = [p["secured"] / p["plain"] for p in pairs]
        median = statistics.median(ratios)
        decisions = _decisions(tmp / "data", requests, runs)
        return {"acls": acls, "requests_per_side": 2 * requests, "runs": runs,
                "plain_s": [_secs(p["plain"]) for p in pairs],
                "secured_s": [_secs(p["secured"]) for p in pairs],
                "ratios": [round(r, 3) for r in ratios], "ratio_median": round(median, 3),
                "goal_ratio": AUTHORIZE_GOAL, "goal_met": median < AUTHORIZE_GOAL,
                "secured_requests_per_s": round(
                    2 * requests / statistics.median(p["secured"] for p in pairs)),
                **decisions, "build_s": _secs(built)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _secs(seconds: float) -> float:
    """A time as the bench reports it: 4 significant digits, so a sub-millisecond figure
    of a small run is kept as measured (docs/bench.md), never rounded to 0."""
    return float(f"{seconds:.4g}")


def _sync_once(root: Path, run: int, acls: int) -> tuple[float, float]:
    """One sync of the source's ACLs into a fresh destination, then the removal pass:
    (copy seconds, removal seconds)."""
    from ..kafka.acls import AclFilter, AclStore
    from ..store import DataDir

    dd = DataDir(root)
    try:
        dest_name = f"dest{run}"
        dd.add_cluster(dest_name, kind="kafka")
        source, dest = AclStore(dd.open("source")), AclStore(dd.open(dest_name))
        dest.configure(enabled=True)
        every = AclFilter.make()
        t0 = time.perf_counter()
        made = dest.add(source.find(every), owner=OWNER)
        copied = time.perf_counter() - t0
        t1 = time.perf_counter()
        gone = dest.remove([every], owner=OWNER)
        removed = time.perf_counter() - t1
        if len(made) != acls or len(gone) != acls:
            raise RuntimeError(f"sync created {len(made)} ACLs and removed {len(gone)}, "
                               f"{acls} each expected")
        return copied, removed
    finally:
        dd.close()


def bench_acl_sync(acls: int = 10_000, runs: int = 5, data_dir: str | None = None
                   ) -> dict[str, Any]:
    """The ACL sync figure (module docstring)."""
    from ..kafka.acls import AclStore
    from ..store import DataDir

    if acls < 3 or runs <= 0:
        raise ValueError("acls must be at least 3, runs positive")
    tmp = Path(tempfile.mkdtemp(prefix="jetlink-bench-aclsync-", dir=data_dir))
    try:
        dd = DataDir(tmp / "data")
        try:
            dd.add_cluster("source", kind="kafka")
            source = AclStore(dd.open("source"))
            source.configure(enabled=True)
            source.add(_acls(acls))
        finally:
            dd.close()
        results = [_sync_once(tmp / "data", run, acls) for run in range(runs)]
        sums = [c + r for c, r in results]
        median = statistics.median(sums)
        return {"acls": acls, "runs": runs,
                "copy_s": [_secs(c) for c, _ in results],
                "removal_s": [_secs(r) for _, r in results],
                "sync_s": [_secs(s) for s in sums], "sync_median_s": _secs(median),
                "goal_s": SYNC_GOAL_S, "goal_met": median < SYNC_GOAL_S}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
