"""`jetlink dr failover --from west` and `jetlink dr failback --from west --switch` killed
(SIGKILL) at random moments and run again, on the embedded engine (core/dr/region.py).

A region of four streams (each with a durable consumer whose ack floor was synced with
``positions sync``) and a KV bucket in cluster west, mirrored in cluster east. West goes down;
the installed ``jetlink`` process fails the region over and is killed after a seeded random
delay spread over an unkilled run's duration; the same command run again must finish it (a
journal record in JETLINK_REGIONS, each object's promotion record). Then: every object
promoted exactly once with its subjects, every consumer placed once at its ack floor + 1, no
message lost or duplicated, a third run a no-op that changes nothing. The failback (west back,
one object with a divergent tail, fenced, east written to) is killed the same way: every
tail saved whole and once in its partition ``DIR/object=NAME@east``, the round trip exact
(west holds what east held, east mirrors it), a publish on west stored once and mirrored once.
"""

from __future__ import annotations

import base64
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import ENV_VARS, NATS_VARS, data_dir_bytes, runner

from jetlink.cli.main import app

STREAMS = {"S1": 2, "S2": 5, "S3": 0, "S4": 6}  # stream -> the ack floor of its consumer c
MSGS = 6
KEYS = {"a": "1", "b": "2", "c": "3"}
KILLS_FAILOVER, KILLS_FAILBACK, KILLS_FENCED = 20, 10, 10
TAIL = "S1"  # the one old origin with a divergent tail (messages east never copied)


def _jetlink() -> list[str]:
    script = Path(sys.executable).with_name("jetlink")
    return [str(script)] if script.exists() else [sys.executable, "-m", "jetlink.cli.main"]


class World:
    """A data directory driven in this process (CliRunner) and by a real jetlink process."""

    def __init__(self, data: Path, env: dict[str, str]) -> None:
        self.data, self.env = data, env

    def __call__(self, *args: str) -> object:
        return runner.invoke(app, ["--data-dir", str(self.data), *args], prog_name="jetlink",
                             env=self.env)

    def ok(self, *args: str) -> object:
        r = self(*args)
        assert r.exit_code == 0, (args, r.exit_code, r.stdout, r.stderr)
        return r

    def doc(self, *args: str) -> object:
        return json.loads(self.ok(*args, "-j").stdout)

    def copy(self, to: Path) -> World:
        shutil.copytree(self.data, to)
        return World(to, self.env)

    def spawn(self, *args: str, **env: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen([*_jetlink(), "--data-dir", str(self.data), *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, **self.env, "PYTHONUNBUFFERED": "1", **env},
                                start_new_session=True)

    def contents(self, cluster: str, stream: str) -> list[tuple[int, str, bytes]]:
        msgs = self.doc("--cluster", cluster, "stream", "view", stream)
        return [(m["seq"], m["subject"], base64.b64decode(m["data"])) for m in msgs]

    def config(self, cluster: str, stream: str) -> dict:
        return self.doc("--cluster", cluster, "stream", "info", stream)["config"]

    def consumers(self, cluster: str, stream: str) -> dict[str, dict]:
        names = self.doc("--cluster", cluster, "consumer", "ls", stream, "--names")
        return {n: self.doc("--cluster", cluster, "consumer", "info", stream, n)
                for n in names}


def _env(tmp: Path) -> dict[str, str]:
    env = {v: "" for v in (*ENV_VARS, *NATS_VARS)}
    env = {k: v for k, v in os.environ.items() if k not in env}
    env["XDG_CONFIG_HOME"] = str(tmp / "config")
    env["NO_COLOR"] = "1"
    return env


def _build(w: World) -> dict[str, list[tuple[int, str, bytes]]]:
    """West's region and east's mirrors, replicated, positions synced, west down; the
    contents east holds (what each promoted stream must hold)."""
    w.ok("cluster", "add", "west")
    w.ok("cluster", "add", "east")
    for s, floor in STREAMS.items():
        sub = s.lower()
        w.ok("--cluster", "west", "stream", "add", s, "--subjects", f"{sub}.>", "--defaults")
        for i in range(MSGS):
            w.ok("--cluster", "west", "pub", f"{sub}.x", f"{s}-m{i + 1}")
        w.ok("--cluster", "west", "consumer", "add", s, "c", "--defaults")
        if floor:
            w.ok("--cluster", "west", "consumer", "next", s, "c", "--count", str(floor),
                 "--ack")
        w.ok("--cluster", "east", "stream", "add", f"{s}_EAST", "--mirror", f"{s}@west",
             "--defaults")
    w.ok("--cluster", "west", "kv", "add", "CFG")
    for k, v in KEYS.items():
        w.ok("--cluster", "west", "kv", "put", "CFG", k, v)
    w.ok("--cluster", "east", "kv", "add", "CFG", "--mirror", "CFG@west")
    w.ok("replicate")
    w.ok("--cluster", "east", "positions", "sync")
    w.ok("cluster", "down", "west")
    want = {f"{s}_EAST": w.contents("east", f"{s}_EAST") for s in STREAMS}
    want["KV_CFG"] = w.contents("east", "KV_CFG")
    for s in STREAMS:
        assert len(want[f"{s}_EAST"]) == MSGS
    return want


@pytest.fixture(scope="module")
def region(tmp_path_factory):
    """The region before the failover (west down), a failover run's duration unkilled and the
    moment such a process starts working (its import and start-up)."""
    tmp = tmp_path_factory.mktemp("region")
    w = World(tmp / "base", _env(tmp))
    (tmp / "base").mkdir()
    want = _build(w)
    return w, want, tmp


def _work(w: World, tmp: Path, args: list[str], name: str = "") -> float:
    """How long an unkilled run on a copy of ``w`` works: from when it printed its plan (the
    work starts: the plan is read, start-up and imports are over) to when it printed its
    last object's line (its output unbuffered)."""
    took = []
    for i in range(2):  # the shorter of two: a busy machine only makes a run longer
        trial = w.copy(tmp / f"timed-{name or args[3]}-{i}")
        t0 = time.monotonic()
        p = trial.spawn(*args)
        assert p.stdout is not None
        seen = [(time.monotonic() - t0, line) for line in iter(p.stdout.readline, b"")]
        assert p.wait(timeout=300) == 0, (seen, p.stderr.read() if p.stderr else b"")
        end = [t for t, line in seen if line.startswith((b"stream ", b"kv "))][-1]
        took.append(end - seen[0][0])
    return min(took)


def _kill_and_rerun(w: World, args: list[str], delay: float) -> str:
    """Run ``args`` as a process and SIGKILL it ``delay`` s after it printed its plan (the
    moment its work starts; start-up time varies too much between runs to aim from the
    process's start). What the kill met: ``killed`` or ``ended`` (the run had finished)."""
    p = w.spawn(*args)
    assert p.stdout is not None
    first = p.stdout.readline()  # the plan's first line: nothing of the region changed yet
    try:
        p.wait(timeout=delay)
        met = "ended"
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=60)
        met = "killed"
    if met == "ended":
        assert p.returncode == 0, (first, p.communicate())
    return met


FAILOVER = ["--cluster", "east", "dr", "failover", "--from", "west", "-f"]


def _assert_failed_over(w: World, want: dict) -> None:
    """Every object promoted once with its subjects, every consumer placed once at its ack
    floor + 1, no message lost or duplicated (``want``: what each holds)."""
    for s, floor in STREAMS.items():
        cfg = w.config("east", f"{s}_EAST")
        assert "mirror" not in cfg and cfg["subjects"] == [f"{s.lower()}.>"], cfg
        rec = json.loads(cfg["metadata"]["jetlink.promoted_mirror"])
        assert rec["mirror"]["name"] == s, rec
        assert w.contents("east", f"{s}_EAST") == want[f"{s}_EAST"]
        cons = w.consumers("east", f"{s}_EAST")
        assert list(cons) == ["c"], cons
        c = cons["c"]["config"]
        assert (c["deliver_policy"], c["opt_start_seq"]) == ("by_start_sequence", floor + 1), c
        # the next delivery is ack floor + 1: nothing past it delivered or acknowledged
        assert (cons["c"]["ack_floor"]["stream_seq"], cons["c"]["num_pending"]) == (
            floor, len(want[f"{s}_EAST"]) - floor), cons["c"]
    cfg = w.config("east", "KV_CFG")
    assert "mirror" not in cfg and cfg["subjects"] == ["$KV.CFG.>"], cfg
    assert w.contents("east", "KV_CFG") == want["KV_CFG"]
    for k, v in KEYS.items():
        assert w.ok("--cluster", "east", "kv", "get", "CFG", k, "--raw").stdout == v


@pytest.fixture(scope="module")
def region_up(region):
    """The region before a planned failover: west up, and two messages a stream and a key
    stored on west since east last copied (published by the engine itself: a command would
    end with a replication step); what east must hold after a fenced failover: all of it."""
    from jetlink.core.clock import SystemClock
    from jetlink.core.jetstream import JetStream
    from jetlink.core.store import DataDir

    w, _, tmp = region
    u = w.copy(tmp / "up")
    u.ok("cluster", "up", "west")
    dd = DataDir(u.data)
    try:
        js = JetStream(dd.open("west"), SystemClock())
        for s in STREAMS:
            for i in range(2):
                js.publish(f"{s.lower()}.x", f"{s}-late{i + 1}".encode())
        js.publish("$KV.CFG.d", b"4")
    finally:
        dd.close()
    want = {f"{s}_EAST": u.contents("west", s) for s in STREAMS}
    want["KV_CFG"] = u.contents("west", "KV_CFG")
    for s in STREAMS:
        assert len(want[f"{s}_EAST"]) == MSGS + 2
        assert len(u.contents("east", f"{s}_EAST")) == MSGS  # behind by 2
    return u, want, tmp


def test_a_fenced_failover_killed_anywhere_loses_nothing_and_stores_nothing_twice(region_up):
    """``--fence`` with the region up and east behind: killed at random moments (before,
    during or after an origin's fence, its copy, its promotion) and run again, every object
    is promoted once holding all its origin held (nothing left behind on west), every
    consumer placed once, and every west origin fenced: nothing more is stored there."""
    w, want, tmp = region_up
    args = [*FAILOVER, "--fence"]
    rng = random.Random(20261201)
    work = _work(w, tmp, args, "fenced")
    met: dict[str, int] = {}
    for i in range(KILLS_FENCED):
        trial = w.copy(tmp / f"fenced-{i}")
        delay = rng.uniform(0, work * 1.1)
        what = _kill_and_rerun(trial, args, delay)
        fenced = sum(1 for s in [*STREAMS, "KV_CFG"]  # origins fenced, mirrors not promoted
                     if trial.config("west", s)["subjects"] == [f"$JETLINK.fenced.{s}"]
                     and "mirror" in trial.config("east", "KV_CFG" if s == "KV_CFG"
                                                  else f"{s}_EAST"))
        met[f"{what}, {fenced} fenced first"] = met.get(f"{what}, {fenced} fenced first", 0) + 1
        again = trial.doc(*args)
        assert again["complete"] is True and again["failed"] == [], (delay, again)
        assert again["fence"]["complete"] is True, (delay, again["fence"])
        _assert_failed_over(trial, want)
        for s in STREAMS:
            assert trial.config("west", s)["subjects"] == [f"$JETLINK.fenced.{s}"], delay
        assert trial.config("west", "KV_CFG")["subjects"] == ["$JETLINK.fenced.KV_CFG"]
        r = trial("--cluster", "west", "pub", "s1.x", "after")
        assert r.exit_code == 1 and "no stream matches subject s1.x" in r.stderr, r.stderr
        assert trial.doc(*args)["nothing_to_do"] is True
        assert _journal(trial, "failover") == "finished"
    print(f"fenced failover kills (delays 0..{work * 1.1:.3f}s after the plan): {met}")


def _state(w: World) -> dict:
    """Everything a second promotion or placement would change: configs and consumers."""
    out = {}
    for s in [*(f"{s}_EAST" for s in STREAMS), "KV_CFG"]:
        cons = w.consumers("east", s)
        out[s] = (w.config("east", s), {n: (c["config"], c["created"]) for n, c in cons.items()})
    return out


def test_a_region_failover_killed_anywhere_is_finished_by_the_rerun(region):
    w, want, tmp = region
    rng = random.Random(20261128)
    work = _work(w, tmp, FAILOVER)
    met: dict[str, int] = {}
    for i in range(KILLS_FAILOVER):
        trial = w.copy(tmp / f"failover-{i}")
        delay = rng.uniform(0, work * 1.1)
        what = _kill_and_rerun(trial, FAILOVER, delay)
        journal = _journal(trial, "failover")
        met[f"{what}, journal {journal}"] = met.get(f"{what}, journal {journal}", 0) + 1
        again = trial.doc(*FAILOVER)
        assert again["complete"] is True and again["failed"] == [], (delay, again)
        assert {o["state"] for o in again["objects"]} <= {"done", "done earlier"}, again
        assert len(again["objects"]) == len(STREAMS) + 1
        _assert_failed_over(trial, want)
        state = _state(trial)
        third = trial.doc(*FAILOVER)
        assert third["nothing_to_do"] is True, third
        assert _state(trial) == state, f"a third run changed something (delay {delay:.3f}s)"
        assert _journal(trial, "failover") == "finished"
    print(f"failover kills (delays 0..{work * 1.1:.3f}s after the plan): {met}")


def _journal(w: World, action: str) -> str:
    """The region run's journal record as the kill left it: none, running or finished."""
    r = w("--cluster", "east", "kv", "get", "JETLINK_REGIONS", f"{action}.west",
          "--raw")
    if r.exit_code != 0:
        return "none"
    return "finished" if json.loads(r.stdout).get("finished") else "running"


FAILBACK = ["--cluster", "east", "dr", "failback", "--from", "west", "--switch", "-f"]


@pytest.fixture(scope="module")
def returned(region):
    """The region failed over, then west back with one divergent message on TAIL's subject
    (the tail), fenced, and east written to (two messages a stream, a key): the failback's
    start, with the contents west must hold after it."""
    w, _, tmp = region
    r = w.copy(tmp / "returned")
    r.ok(*FAILOVER)
    r.ok("cluster", "up", "west")
    r.ok("--cluster", "west", "pub", f"{TAIL.lower()}.x", "west-tail")
    r.ok("--cluster", "east", "dr", "fence", "--from", "west", "-f")
    for s in STREAMS:
        for i in range(2):
            r.ok("--cluster", "east", "pub", f"{s.lower()}.x", f"{s}-east{i + 1}")
    r.ok("--cluster", "east", "kv", "put", "CFG", "d", "4")
    want = {s: r.contents("east", f"{s}_EAST") for s in STREAMS}
    want["KV_CFG"] = r.contents("east", "KV_CFG")
    return r, want, tmp


def _tails(base: Path) -> dict[str, list[tuple[int, str, bytes]]]:
    """Each partition of the region's tail dataset: its rows (seq, subject, data)."""
    import pyarrow.parquet as pq

    out = {}
    for part in sorted(base.glob("object=*")):
        rows = []
        for f in sorted(part.glob("*.parquet")):
            t = pq.read_table(f, columns=["seq", "subject", "data"]).to_pylist()
            rows += [(x["seq"], x["subject"], x["data"]) for x in t]
        out[part.name] = rows
    return out


def _assert_failed_back(w: World, want: dict, tails: Path) -> None:
    """The round trip exact: each old origin the primary again with its subjects (unfenced),
    holding what east held, its consumer back; east mirroring it; each tail whole, once."""
    w.ok("replicate")
    for s, floor in STREAMS.items():
        cfg = w.config("west", s)
        assert "mirror" not in cfg and cfg["subjects"] == [f"{s.lower()}.>"], cfg
        assert "jetlink.fenced_subjects" not in (cfg.get("metadata") or {}), cfg
        assert w.contents("west", s) == want[s]
        east = w.config("east", f"{s}_EAST")
        assert east["mirror"]["name"] == s and not east.get("subjects"), east
        assert w.contents("east", f"{s}_EAST") == want[s]
        cons = w.consumers("west", s)
        assert list(cons) == ["c"], cons
        assert (cons["c"]["ack_floor"]["stream_seq"], cons["c"]["num_pending"]) == (
            floor, len(want[s]) - floor), cons["c"]
    cfg = w.config("west", "KV_CFG")
    assert "mirror" not in cfg and cfg["subjects"] == ["$KV.CFG.>"], cfg
    assert w.contents("west", "KV_CFG") == want["KV_CFG"]
    assert w.contents("east", "KV_CFG") == want["KV_CFG"]
    assert _tails(tails) == {f"object={TAIL}_EAST@east": [(MSGS + 1, f"{TAIL.lower()}.x",
                                                           b"west-tail")]}


def test_a_region_failback_killed_anywhere_is_finished_by_the_rerun(returned):
    w, want, tmp = returned
    rng = random.Random(20261129)
    work = _work(w, tmp, [*FAILBACK, "--tail", f"parquet:{tmp / 'timed-tail'}"])
    met: dict[str, int] = {}
    for i in range(KILLS_FAILBACK):
        trial = w.copy(tmp / f"failback-{i}")
        tails = tmp / f"tail-{i}"
        args = [*FAILBACK, "--tail", f"parquet:{tails}"]
        delay = rng.uniform(0, work * 1.1)
        what = _kill_and_rerun(trial, args, delay)
        journal = _journal(trial, "failback")
        met[f"{what}, journal {journal}"] = met.get(f"{what}, journal {journal}", 0) + 1
        again = trial(*args, "-j")
        assert again.exit_code == 0, (delay, again.stderr, again.stdout[-4000:])
        again = json.loads(again.stdout)
        assert again["complete"] is True and again["failed"] == [], (delay, again)
        assert {o["state"] for o in again["objects"]} <= {"done", "done earlier"}, again
        assert len(again["objects"]) == len(STREAMS) + 1, again
        _assert_failed_back(trial, want, tails)
        third = trial.doc(*args)
        assert third["nothing_to_do"] is True, third
        assert _journal(trial, "failback") == "finished"
        # a publish on west's subject: stored once in west, mirrored once to east
        trial.ok("--cluster", "west", "pub", "s2.x", "after")
        trial.ok("replicate")
        after = [*want["S2"], (len(want["S2"]) + 1, "s2.x", b"after")]
        assert trial.contents("west", "S2") == after
        assert trial.contents("east", "S2_EAST") == after
    print(f"failback kills (delays 0..{work * 1.1:.3f}s after the plan): {met}")


# --- the states a kill leaves, made exactly (the random kills above meet them by chance) ----
def _journal_left_open(w: World, action: str) -> None:
    """The journal record as a run killed after its objects' verbs, before it wrote their
    outcome and its end, leaves it: every object running, not finished."""
    key = f"{action}.west"
    rec = json.loads(w.ok("--cluster", "east", "kv", "get", "JETLINK_REGIONS", key,
                          "--raw").stdout)
    rec["finished"] = None
    for o in rec["objects"].values():
        o["state"] = "running"
    w.ok("--cluster", "east", "kv", "put", "JETLINK_REGIONS", key, json.dumps(rec))


def test_a_failover_killed_after_its_last_object_is_finished_by_the_rerun(region):
    """Every object failed over but the journal left running: the re-run finishes the record
    (each object done earlier) instead of leaving it open under a "Nothing to do"."""
    w, want, tmp = region
    t = w.copy(tmp / "failover-open")
    t.ok(*FAILOVER)
    _journal_left_open(t, "failover")
    again = t.doc(*FAILOVER)
    assert (again["nothing_to_do"], again["complete"], again["done"], again["done_earlier"]) \
        == (False, True, 0, len(STREAMS) + 1), again
    assert again["finished"] is not None
    assert _journal(t, "failover") == "finished"
    _assert_failed_over(t, want)
    third = t.ok(*FAILOVER)
    assert third.stdout.startswith("Nothing to do: the region failover of west was done "
                                   "already (finished "), third.stdout


def test_a_failback_killed_after_its_last_switch_is_finished_by_the_rerun(returned):
    """Every object switched back (a mirror again) but the journal left running: the re-run
    counts each as done earlier (not dropped from the plan: "nothing to fail back")."""
    w, want, tmp = returned
    t = w.copy(tmp / "failback-open")
    args = [*FAILBACK, "--tail", f"parquet:{tmp / 'tail-open'}"]
    t.ok(*args)
    _journal_left_open(t, "failback")
    r = t(*args, "-j")
    assert r.exit_code == 0, (r.stdout, r.stderr)
    again = json.loads(r.stdout)
    assert [o["state"] for o in again["objects"]] == ["done earlier"] * (len(STREAMS) + 1)
    assert again["complete"] is True and again["nothing_to_do"] is False, again
    assert _journal(t, "failback") == "finished"
    _assert_failed_back(t, want, tmp / "tail-open")


def test_a_failback_killed_before_its_end_counts_what_it_did_as_done_earlier(returned):
    """A failback without --switch killed after its objects' failbacks (each marked done in
    the journal) but before the run's end was written: the re-run counts them done earlier,
    not done again, and finishes the record."""
    w, _want, tmp = returned
    t = w.copy(tmp / "failback-part")
    args = [a for a in FAILBACK if a != "--switch"] + ["--tail", f"parquet:{tmp / 'tp'}"]
    t.ok(*args)
    key = "failback.west"
    rec = json.loads(t.ok("--cluster", "east", "kv", "get", "JETLINK_REGIONS", key,
                          "--raw").stdout)
    rec["finished"] = None  # killed before the run's end (the objects' marks say done)
    t.ok("--cluster", "east", "kv", "put", "JETLINK_REGIONS", key, json.dumps(rec))
    again = t.doc(*args)
    assert [o["state"] for o in again["objects"]] == ["done earlier"] * (len(STREAMS) + 1)
    assert (again["done"], again["done_earlier"]) == (0, len(STREAMS) + 1), again
    assert again["complete"] is True and _journal(t, "failback") == "finished"


def _killed_at(w: World, args: list[str], step: str) -> None:
    """``args`` run as a process SIGKILLed once its first object's failback did ``step``
    (core/dr/failback.py's documented seam: it says so on stderr and sleeps there)."""
    p = w.spawn(*args, JETLINK_FAILBACK_PAUSE=step)
    assert p.stderr is not None
    try:
        line = p.stderr.readline()
        assert line == f"failback step: {step}\n".encode(), (line, p.stderr.read())
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=60)


@pytest.mark.parametrize("step", ["compare", "reuse-origin"])
def test_a_failback_killed_before_its_old_origin_is_a_caught_up_mirror_is_finished(
        returned, step):
    """Killed right after an old origin was compared with its promoted stream (compare:
    nothing of it changed yet) or created again as a mirror keeping the messages both agree
    on, that has copied nothing yet (reuse-origin; JETLINK_FAILBACK_PAUSE,
    core/dr/failback.py's seam): the dry run of that object cannot see past the steps left,
    yet the re-run's plan does not refuse it (its failback record resumes it, as kv|stream
    failback does) and the re-run finishes the failback."""
    w, want, tmp = returned
    t = w.copy(tmp / f"failback-{step}")
    tails = tmp / f"tail-{step}"
    args = [*FAILBACK, "--tail", f"parquet:{tails}"]
    _killed_at(t, args, step)
    plan = t(*args, "--dry-run", "-j")
    assert plan.exit_code == 0, (plan.stdout, plan.stderr)
    behind = [o for o in json.loads(plan.stdout)["objects"] if o["detail"]]
    if step == "compare":  # the old origin as it was: planned as any other
        assert behind == []
    else:
        assert len(behind) == 1 and behind[0]["state"] == "planned" and \
            behind[0]["detail"].startswith("resumes the failback a run began ("), behind
    again = t.doc(*args)
    assert again["complete"] is True and again["failed"] == [], again
    _assert_failed_back(t, want, tails)


def test_a_failback_killed_after_deleting_the_promoted_stream_is_finished_by_the_rerun(
        returned):
    """Killed inside a switch right after the promoted stream was deleted (before it is
    created again as a mirror, JETLINK_FAILBACK_PAUSE=delete-promoted): the object is on no
    side's list of mirrors any more, yet the re-run finds it in its journal and failback
    record and finishes it (east mirrors west again) instead of reporting the region done."""
    w, want, tmp = returned
    t = w.copy(tmp / "failback-deleted")
    tails = tmp / "tail-deleted"
    args = [*FAILBACK, "--tail", f"parquet:{tails}"]
    _killed_at(t, args, "delete-promoted")
    ours = {"KV_CFG", *(f"{s}_EAST" for s in STREAMS)}
    gone = ours - set(t.doc("--cluster", "east", "stream", "ls", "--names"))
    assert len(gone) == 1, gone
    again = t.doc(*args)
    assert again["complete"] is True and again["failed"] == [], again
    # the one deleted is among the objects failed back now, not left out
    assert {("KV_" if o["kind"] == "kv" else "") + o["name"]: o["state"]
            for o in again["objects"]} == dict.fromkeys(ours, "done"), again
    _assert_failed_back(t, want, tails)


def test_a_failover_killed_before_its_fence_fences_on_the_rerun(region):
    """``--fence``: a run killed after its last object, before the fence (west back and
    unfenced, the journal open): the re-run fences every old origin and finishes the
    record."""
    w, _, tmp = region
    t = w.copy(tmp / "failover-fence")
    t.ok("cluster", "up", "west")
    t.ok(*FAILOVER)
    _journal_left_open(t, "failover")
    # the re-run's dry run shows the fence it will make (every object done earlier), and
    # changes no byte
    before = data_dir_bytes(t.data)
    dry = t.doc(*FAILOVER, "--fence", "--dry-run")
    assert data_dir_bytes(t.data) == before
    assert sorted((o["name"], o["action"]) for o in dry["fence"]["objects"]) == sorted(
        [("CFG", "to fence"), *((s, "to fence") for s in STREAMS)]), dry["fence"]
    again = t.doc(*FAILOVER, "--fence")
    assert again["done_earlier"] == len(STREAMS) + 1 and again["complete"] is True, again
    assert again["fence"] is not None, "the re-run did not fence"
    assert sorted((o["name"], o["action"]) for o in again["fence"]["objects"]) == sorted(
        [("CFG", "fenced"), *((s, "fenced") for s in STREAMS)])
    for s in STREAMS:
        assert t.config("west", s)["subjects"] == [f"$JETLINK.fenced.{s}"]
    assert _journal(t, "failover") == "finished"
    assert t.doc(*FAILOVER, "--fence")["nothing_to_do"] is True


def test_a_switch_run_killed_then_finished_without_switch_leaves_the_switch_to_do(returned):
    """A `--switch` run killed right after its plan was recorded, finished by a run without
    --switch: the objects are mirrors again, not switched back, and the record says so, so
    the next `--switch` run switches them (never "done already")."""
    from jetlink.core.dr.region import VERSION

    w, want, tmp = returned
    t = w.copy(tmp / "switch-killed")
    key = "failback.west"
    killed = {"version": VERSION, "action": "failback", "regions": ["west"], "side": None,
              "options": {"tail": f"parquet:{tmp / 'tail-sk'}", "switch": True, "skip": []},
              "started": "2026-01-01T00:00:00Z", "finished": None, "objects": {}}
    t.ok("--cluster", "east", "kv", "put", "JETLINK_REGIONS", key, json.dumps(killed))
    plain = [a for a in FAILBACK if a != "--switch"] + ["--tail", f"parquet:{tmp / 'tail-sk'}"]
    first = t.doc(*plain)
    assert first["complete"] is True, first
    rec = json.loads(t.ok("--cluster", "east", "kv", "get", "JETLINK_REGIONS", key,
                          "--raw").stdout)
    assert rec["finished"] and rec["options"]["switch"] is False, rec["options"]
    switched = t.doc(*FAILBACK, "--tail", f"parquet:{tmp / 'tail-sk'}")
    assert switched["nothing_to_do"] is False and switched["complete"] is True, switched
    assert switched["done"] == len(STREAMS) + 1, switched
    _assert_failed_back(t, want, tmp / "tail-sk")
