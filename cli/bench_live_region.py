"""``jetlink bench dr --region`` on real nats-servers: a region's failover, fence and
failback, and ``dr check`` of many mirrors, each the whole jetlink command as an operator
runs it (a new process: start-up, connection, the work).

Servers: west (the hub) and east (the leaf), JetStream domains joined by a leafnode,
started here as ``jetlink bench live-dr`` starts them (core/live/local.py) and stopped by
PID. Built first (not timed): on west ``streams`` streams ``O<i>`` (file storage, subjects
``o<i>.>``, ``messages`` messages each) and ``kv`` KV buckets ``B<j>`` (``messages`` keys
each), ``consumers`` durable consumers spread over the streams; on east a mirror ``M<i>``
of each stream and a KV mirror bucket ``B<j>`` of each bucket, caught up; ``jetlink
positions sync`` on east. Then:

- **failover**: west is killed (SIGKILL); ``jetlink -s EAST dr failover --from west -f -j``,
  timed; every object done and every consumer placed ("created") asserted. East takes
  ``writes`` messages per object (not timed).
- **fence**: west is started again (its streams recovered from disk, the leafnode joined)
  and takes ``tail`` messages per object through its own URL (the divergent tails: a split
  brain, east's promoted streams may store them too); ``jetlink -s EAST dr fence --from
  west -f -j``, timed; every old origin fenced asserted.
- **failback**: ``jetlink -s EAST dr failback --from west --tail parquet:DIR --switch -f
  -j``, timed; every object done, each tail's count is what west took, the dataset's rows
  their sum, and the round trip exact (west's streams and buckets primaries again on their
  own subjects, each holding what the promoted one held before the failback, their durable
  consumers back; east's mirrors of them holding the same) asserted.
- **dr check**: more mirrors on east (``X<k>`` of west's streams) up to ``mirrors`` mirrors
  in all, caught up, positions synced; ``jetlink -s EAST dr check -j``, timed; the number of
  mirrors it read asserted.
- **dr watch**: ``jetlink -s EAST dr watch --interval I -j`` as a process over the same
  mirrors: after its first check, the CPU seconds (user + system, /proc) it uses over
  ``watch_checks`` more checks, per interval; every check's objects asserted.

Only counts are asserted; the times are printed next to their goals.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from jetlink.cli.bench_live_dr import _client, _env, _jetlink, _run
from jetlink.core.bench.region import expect

#: the goals of the live figures, seconds (printed next to them, never asserted)
GOALS_S = {"failover": 5.0, "fence": 2.0, "failback": 30.0, "check": 5.0}
CATCH_UP_S = 120.0


def _wait_caught_up(js: Any, want: dict[str, int], what: str) -> None:
    """Until every stream of ``want`` holds its last sequence (RuntimeError after
    :data:`CATCH_UP_S`, naming one that did not)."""
    deadline = time.monotonic() + CATCH_UP_S
    left = dict(want)
    while left:
        left = {n: s for n, s in left.items() if js.stream_info(n).state.last_seq < s}
        if not left:
            return
        if time.monotonic() > deadline:
            name = next(iter(left))
            raise RuntimeError(f"{what}: {name} did not reach sequence {left[name]} within "
                               f"{CATCH_UP_S:g} s")
        time.sleep(0.1)


def _build(west_url: str, east_url: str, r: Any) -> None:
    """West's streams, buckets and consumers; east's mirrors of them, caught up."""
    from jetlink.core.backend import domain_kv
    from jetlink.core.config.consumer import ConsumerConfig
    from jetlink.core.config.kv import KeyValueConfig, KVMirrorConfig

    west, east = _client(west_url), _client(east_url)
    try:
        for i in range(r.streams):
            name = r.stream(i)
            west.add_stream({"name": name, "subjects": [f"o{i}.>"], "storage": "file"})
            for c in range(r.consumers_of(i)):
                west.add_consumer(name, ConsumerConfig.from_json(
                    {"durable_name": f"C{c}", "ack_policy": "explicit"}))
        _acked(west.publish_batch([(f"o{i}.{k % 10}", b"x" * 64, None)
                                   for i in range(r.streams) for k in range(r.messages)]))
        wkv, ekv = domain_kv(west, ""), domain_kv(east, "east")
        for j in range(r.kv):
            wkv.create_bucket(KeyValueConfig(bucket=r.bucket(j)))
            _acked(wkv.open(r.bucket(j)).put_many([(f"k{k}", b"v" * 32)
                                                   for k in range(r.messages)]))
        for i in range(r.streams):
            east.add_stream({"name": r.mirror(i), "storage": "file", "mirror": {
                "name": r.stream(i), "external": {"api": "$JS.west.API"}}})
        for j in range(r.kv):
            ekv.create_mirror(KVMirrorConfig(name=r.bucket(j), origin_bucket=r.bucket(j),
                                             domain="west"))
        want = {r.mirror(i): r.messages for i in range(r.streams)}
        want.update({f"KV_{r.bucket(j)}": r.messages for j in range(r.kv)})
        _wait_caught_up(east, want, "the mirrors' catch-up")
    finally:
        west.close()
        east.close()


def _acked(acks: list[Any]) -> None:
    bad = [a for a in acks if a is None or isinstance(a, Exception)]
    if bad:
        raise RuntimeError(f"{len(bad)} of {len(acks)} publishes were not stored: {bad[0]}")


def _publish(url: str, r: Any, per: int, subject: str) -> None:
    """``per`` messages on every stream's subjects and every bucket through ``url``."""
    from jetlink.core.backend import domain_kv

    js = _client(url)
    try:
        _acked(js.publish_batch([(f"o{i}.{subject}", b"w" * 64, None)
                                 for i in range(r.streams) for _ in range(per)]))
        kv = domain_kv(js, "")
        for j in range(r.kv):
            _acked(kv.open(r.bucket(j)).put_many([(f"{subject}{k}", b"w" * 32)
                                                  for k in range(per)]))
    finally:
        js.close()


def _command(args: list[str]) -> tuple[float, dict[str, Any]]:
    """A jetlink command with -j, timed; its JSON document (RuntimeError on failure)."""
    seconds, out = _run(_jetlink(*args, "-j"), _env())
    return seconds, json.loads(out)


def _check(east_url: str) -> tuple[float, dict[str, Any]]:
    """``jetlink -s EAST dr check -j``, timed: its document (exit status 0, 1 or 2: the
    grade of the mirrors; 3, no mirror, or anything else is a failure)."""
    import subprocess

    cmd = _jetlink("-s", east_url, "dr", "check", "-j")
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, env=_env())
    seconds = time.perf_counter() - t0
    if res.returncode not in (0, 1, 2):
        raise RuntimeError(f"dr check exited with {res.returncode}: "
                           f"{res.stderr.strip() or res.stdout.strip()[-500:]}")
    return seconds, json.loads(res.stdout)


def _states(url: str, names: list[str]) -> dict[str, tuple[int, int]]:
    js = _client(url)
    try:
        return {n: (int(js.stream_info(n).state.messages), int(js.stream_info(n).state.last_seq))
                for n in names}
    finally:
        js.close()


def _round_trip(west_url: str, east_url: str, r: Any, before: dict[str, tuple[int, int]]
                ) -> dict[str, Any]:
    """After failback --switch: the objects of west primaries on their own subjects holding
    what the promoted ones held, their consumers back; east's mirrors of them, the same."""
    west, east = _client(west_url), _client(east_url)
    exact = consumers = 0
    try:
        for origin, mirror, durable, subject in r.pairs():
            o, m = west.stream_info(origin), east.stream_info(mirror)
            placed = len(west.consumer_names(origin))
            consumers += placed
            held = (int(o.state.messages), int(o.state.last_seq))
            if (o.config.mirror is None and list(o.config.subjects) == [subject]
                    and m.config.mirror is not None and m.config.mirror.name == origin
                    and placed == durable and held == before[mirror]
                    and (int(m.state.messages), int(m.state.last_seq)) == held):
                exact += 1
    finally:
        west.close()
        east.close()
    expect("the round trip", "objects back exactly", exact, r.objects)
    expect("the round trip", "consumers back on west", consumers, r.consumers)
    return {"objects_exact": exact, "consumers_back": consumers}


def _more_mirrors(east_url: str, r: Any, mirrors: int) -> int:
    """Mirrors ``X<k>`` of west's streams on east up to ``mirrors`` in all, caught up; the
    number added."""
    extra = max(0, mirrors - r.objects)
    east = _client(east_url)
    try:
        want = {}
        for k in range(extra):
            i = k % r.streams
            east.add_stream({"name": f"X{k:05d}", "storage": "file", "mirror": {
                "name": r.stream(i), "external": {"api": "$JS.west.API"}}})
            want[f"X{k:05d}"] = int(east.stream_info(r.mirror(i)).state.last_seq)
        _wait_caught_up(east, want, "the extra mirrors' catch-up")
    finally:
        east.close()
    return extra


def _failover(east_url: str, r: Any) -> dict[str, Any]:
    from jetlink.core.bench.region import failover_counts

    seconds, doc = _command(["-s", east_url, "dr", "failover", "--from", "west", "-f"])
    return {"seconds": round(seconds, 3), "goal_s": GOALS_S["failover"],
            **failover_counts(doc, r)}


def _fence(east_url: str, r: Any) -> dict[str, Any]:
    seconds, doc = _command(["-s", east_url, "dr", "fence", "--from", "west", "-f"])
    expect("the fence", "old origins fenced", doc["fenced"], r.objects)
    return {"seconds": round(seconds, 3), "goal_s": GOALS_S["fence"], "fenced": doc["fenced"]}


def _failback(east_url: str, r: Any, tails: Path) -> dict[str, Any]:
    from jetlink.core.bench.region import failback_counts

    seconds, doc = _command(["-s", east_url, "dr", "failback", "--from", "west", "--tail",
                             f"parquet:{tails}", "--switch", "-f"])
    return {"seconds": round(seconds, 3), "goal_s": GOALS_S["failback"],
            **failback_counts(doc, r, tails)}


def _dr_check(regions: Any, r: Any, mirrors: int) -> dict[str, Any]:
    added = _more_mirrors(regions.east.url, r, mirrors)
    _run(_jetlink("-s", regions.east.url, "positions", "sync"), _env())
    seconds, doc = _check(regions.east.url)
    checked = len(doc["mirrors"])
    expect("dr check", "mirrors checked", checked, r.objects + added)
    return {"seconds": round(seconds, 3), "goal_s": GOALS_S["check"], "mirrors": checked,
            "status": doc.get("status")}


def bench_live_region(streams: int = 200, kv: int = 20, consumers: int = 1000, *,
                      mirrors: int = 1000, messages: int = 20, writes: int = 5,
                      tail: int = 5, watch_interval: float = 15.0,
                      watch_checks: int = 3) -> dict[str, Any]:
    """A region's failover, fence, failback and dr check on two nats-servers started here
    (module doc)."""
    from jetlink.core.bench.region import Region
    from jetlink.core.live.local import start_regions

    r = Region(streams, kv, consumers, messages, writes, tail)
    tmp = Path(tempfile.mkdtemp(prefix="jetlink-bench-region-live-"))
    regions = start_regions(tmp / "servers")
    try:
        t0 = time.perf_counter()
        _build(regions.west.url, regions.east.url, r)
        _run(_jetlink("-s", regions.east.url, "positions", "sync"), _env())
        built = time.perf_counter() - t0
        out: dict[str, Any] = {"backend": "live", **r.to_json()}
        regions.west.kill()
        out["failover"] = _failover(regions.east.url, r)
        if writes:
            _publish(regions.east.url, r, writes, "east")
        regions.restart(regions.west)
        _publish(regions.west.url, r, tail, "tail")
        out["fence"] = _fence(regions.east.url, r)
        before = _states(regions.east.url, [p[1] for p in r.pairs()])
        out["failback"] = {**_failback(regions.east.url, r, tmp / "tails"),
                           **_round_trip(regions.west.url, regions.east.url, r, before)}
        out["check"] = _dr_check(regions, r, mirrors)
        out["watch"] = _watch(regions.east.url, out["check"]["mirrors"], watch_interval,
                              watch_checks)
        out["build_s"] = round(built, 1)
        return out
    finally:
        regions.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def _cpu_seconds(pid: int) -> float:
    """The user + system CPU seconds process ``pid`` used so far (/proc/PID/stat)."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _watch(east_url: str, mirrors: int, interval: float, checks: int) -> dict[str, Any]:
    """``jetlink -s EAST dr watch --interval I -j`` as a process: after its first check
    (start-up included), the CPU seconds it uses over ``checks`` more checks, per interval,
    and the checks' own durations; stopped by its PID (SIGTERM)."""
    import subprocess

    cmd = _jetlink("-s", east_url, "dr", "watch", "--listen", "127.0.0.1:0", "--interval",
                   f"{interval:g}s", "-j")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=_env())
    try:
        assert proc.stdout is not None
        docs = []

        def line() -> dict[str, Any]:
            got = proc.stdout.readline() if proc.stdout is not None else ""
            if not got:
                raise RuntimeError(f"dr watch stopped (exit status {proc.wait()})")
            doc: dict[str, Any] = json.loads(got)
            docs.append(doc)
            return doc

        line()
        cpu0, t0 = _cpu_seconds(proc.pid), time.perf_counter()
        for _ in range(checks):
            line()
        cpu, wall = _cpu_seconds(proc.pid) - cpu0, time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    seen = {len(d["objects"]) for d in docs}
    expect("dr watch", "objects per check", min(seen), mirrors)
    durations = [float(d["duration_seconds"]) for d in docs[1:]]
    return {"interval_s": interval, "checks": checks, "cpu_s": round(cpu, 3),
            "cpu_s_per_interval": round(cpu / checks, 3), "wall_s": round(wall, 3),
            "check_s": [round(s, 3) for s in durations], "objects": min(seen)}
