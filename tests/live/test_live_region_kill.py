"""`jetlink dr failover --from west` and `jetlink dr failback --from west --switch` killed
(SIGKILL) at random moments on real nats-servers and run again (core/dr/region.py).

The region of tests/live/test_live_region.py (three streams with a durable consumer each,
positions synced, and the bucket CFG; west the hub, east the leaf). The installed ``jetlink``
process is killed after a seeded random delay counted from when it printed its plan (its work
starts: start-up time varies too much between runs to aim from the process's start), spread
over an unkilled run's work; the same command run again must finish what it left: every
object promoted exactly once with its subjects, every consumer placed once at its ack floor +
1, no message lost or duplicated (contents compared), a third run a no-op; for the failback,
each divergent tail saved whole and once in its partition, the round trip exact (west holds
what east held, east mirrors it, the consumers back), a publish on west stored once in west
and mirrored once to east.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time

import pytest

from live.clihelp import doc, ok
from live.servers import wait_until
from live.test_live_failover_kill import _jetlink
from live.test_live_region import (
    ALL,
    MSGS,
    STREAMS,
    assert_failed_back,
    assert_failed_over,
    build,
    build_east,
    build_west,
    contents,
    counts,
    read_tails,
    refused,
    region,  # noqa: F401 - the fixture
    stored_once,
)

KILLS_FAILOVER, KILLS_FAILBACK = 20, 10
FAILOVER = ["dr", "failover", "--from", "west", "-f"]
FAILBACK = ["dr", "failback", "--from", "west", "--switch", "-f"]


def _spawn(d, env: dict[str, str], args: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([*_jetlink(), "--server", d.leaf.url, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            start_new_session=True)


def _env(tmp_path) -> dict[str, str]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "NO_COLOR": "1",
           "PYTHONUNBUFFERED": "1"}
    for var in ("NATS_URL", "NATS_CONTEXT", "JETLINK_CONTEXT"):
        env.pop(var, None)
    return env


def _work(d, env: dict[str, str], args: list[str]) -> float:
    """How long an unkilled run works: from its plan's first line to its last object's."""
    t0 = time.monotonic()
    p = _spawn(d, env, args)
    assert p.stdout is not None
    seen = [(time.monotonic() - t0, line) for line in iter(p.stdout.readline, b"")]
    assert p.wait(timeout=300) == 0, (seen, p.stderr.read() if p.stderr else b"")
    end = [t for t, line in seen if line.startswith((b"stream ", b"kv "))][-1]
    return end - seen[0][0]


def _kill(d, env: dict[str, str], args: list[str], delay: float) -> str:
    """``args`` run as a process, SIGKILLed ``delay`` s after it printed its plan's first
    line; ``killed``, or ``ended`` when it had finished (exit 0)."""
    p = _spawn(d, env, args)
    assert p.stdout is not None
    first = p.stdout.readline()
    try:
        p.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=60)
        return "killed"
    assert p.returncode == 0, (first, p.communicate())
    return "ended"


def _east_reset(d) -> None:
    """West up and joined, east without a stream (its mirrors and jetlink's buckets gone)."""
    if not d.hub.running:
        d.hub.restart()
        d.wait_ready()
    d.client().delete_all_streams(domain="east")
    d.leaf.wait_stream_dirs_gone()


def _journal(east, action: str) -> str:

    r = east("kv", "get", "JETLINK_REGIONS", f"{action}.west", "--raw")
    if r.exit_code != 0:
        return "none"
    return "finished" if json.loads(r.stdout).get("finished") else "running"


@pytest.mark.slow
def test_a_region_failover_killed_anywhere_is_finished_by_the_rerun(region, tmp_path):  # noqa: F811
    d = region.domains
    env = _env(tmp_path)
    build_west(region)  # failover changes nothing of west: built once
    rng = random.Random(20261128)
    met: dict[str, int] = {}
    works: list[float] = []
    try:
        for _ in range(KILLS_FAILOVER + 2):
            _east_reset(d)
            want = build_east(region)
            d.hub.kill()  # the outage
            if len(works) < 2:  # first two unkilled runs: how long the work takes (the
                works.append(_work(d, env, FAILOVER))  # shorter: a busy machine only slows)
                continue
            work = min(works)
            delay = rng.uniform(0, work * 1.1)
            what = f"{_kill(d, env, FAILOVER, delay)}, journal {_journal(region, 'failover')}"
            met[what] = met.get(what, 0) + 1
            again = doc(region(*FAILOVER, "-j"))
            c = d.leaf.client()
            assert_failed_over(c, again, want, states=("done", "done earlier"))
            third = ok(region(*FAILOVER))
            assert third.stdout.startswith("Nothing to do: the region failover of west was "
                                           "done already (finished "), (delay, third.stdout)
            assert _journal(region, "failover") == "finished"
    finally:
        d.hub.ensure_running()
        d.wait_ready()
    print(f"failover kills (0..{min(works) * 1.1:.3f}s after the plan): {met}")


def _returned(east) -> dict[str, list[tuple[int, str, bytes]]]:
    """A fresh region failed over with west up, a split-brain publish on orders.> stored on
    both sides (ORD's tail), west fenced, east written to: what east holds."""
    d = east.domains
    c = d.client()
    for dom in ("east", "west"):
        c.delete_all_streams(domain=dom)
    d.leaf.wait_stream_dirs_gone()  # as live_domains' reset: the names are created again
    d.hub.wait_stream_dirs_gone()
    build(east)
    ok(east(*FAILOVER))
    wait_until(lambda: refused(c, "orders.dup") is None, message="orders.dup stored")
    wait_until(lambda: counts(c)["ORD"] == (MSGS + 1, MSGS + 1),
               message=lambda: f"orders.dup stored in both domains ({counts(c)})")
    ok(east("dr", "fence", "--from", "west", "-f"))
    for s, (sub, _) in STREAMS.items():
        assert c.js_publish(f"{sub}.east", f"{s}-east".encode())["stream"] == f"{s}_EAST"
    ok(east("kv", "put", "CFG", "c", "3"))
    return {m: contents(c, m, "east") for m in ALL}


@pytest.mark.slow
def test_a_region_failback_killed_anywhere_is_finished_by_the_rerun(region, tmp_path):  # noqa: F811
    d = region.domains
    env = _env(tmp_path)
    rng = random.Random(20261129)
    met: dict[str, int] = {}
    _returned(region)
    work = _work(d, env, [*FAILBACK, "--tail", f"parquet:{tmp_path / 'timed'}"])
    for i in range(KILLS_FAILBACK):
        east_now = _returned(region)
        tails = tmp_path / f"tails-{i}"
        args = [*FAILBACK, "--tail", f"parquet:{tails}"]
        delay = rng.uniform(0, work * 1.1)
        what = f"{_kill(d, env, args, delay)}, journal {_journal(region, 'failback')}"
        met[what] = met.get(what, 0) + 1
        again = doc(region(*args, "-j"))
        assert again["complete"] is True and again["failed"] == [], (delay, again)
        assert sorted(o["name"] for o in again["objects"]) == sorted(
            ["CFG", *(f"{s}_EAST" for s in STREAMS)]), again["objects"]
        assert {o["state"] for o in again["objects"]} <= {"done", "done earlier"}, again
        c = d.client()
        assert_failed_back(c, east_now)
        assert read_tails(tails) == {"object=ORD_EAST": [(MSGS + 1, "orders.dup", b"x")]}
        third = ok(region(*args))
        assert third.stdout.startswith("Nothing to do: the region failback of west was done "
                                       "already"), (delay, third.stdout)
        # a publish on west: stored once in west, mirrored once to east
        stored_once(c, "PAY", east_now["PAY_EAST"])
    print(f"failback kills (0..{work * 1.1:.3f}s after the plan): {met}")
