"""Failback after a failover on the embedded engine (core/dr/failback.py, ``stream failback``
and ``kv failback``): the divergent tail saved exactly, the old origin a mirror of the
promoted stream, the switch back to the original topology with every consumer in place, dry
runs that change nothing, and runs killed with SIGKILL after each step and finished by a
re-run (a real ``jetlink`` subprocess; the documented seam JETLINK_FAILBACK_PAUSE=STEP makes
it stop right after STEP, where the test kills it).

The scenario: west holds ORDERS (orders.>, 10 messages; consumers billing acked to 6 and
shipping acked to 2), east its mirror ORDERS_EAST. Positions synced, west goes down, east
fails over (billing and shipping placed on east), east takes 4 new messages (11..14) and
billing acks up to 12 there, east gets a consumer of its own (audit, acked to 3). West comes
back having taken 3 messages after east's last copy (the tail, 11..13, with headers).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from helpers import doc

from jetlink.core.clock import SystemClock
from jetlink.core.jetstream import JetStream
from jetlink.core.store import DataDir

JETLINK = str(Path(sys.executable).with_name("jetlink"))

SECOND = 1_000_000_000


def _acked(js: JetStream, stream: str, name: str, upto: int) -> None:
    try:
        js.add_consumer(stream, {"durable_name": name, "ack_policy": "explicit"})
    except Exception:  # noqa: BLE001 - placed already
        pass
    for m in js.fetch(stream, name, upto):
        js.ack(stream, name, m.seq)


def scenario(path: Path, *, kv: bool = False, lost_first: bool = False) -> dict:
    """Build the module's scenario in the data directory ``path`` (its docstring); returns
    the tail as west holds it: [(seq, subject, headers, data, ts)]. ``lost_first``: west
    deletes its message 1 when it is back (east holds it: nothing of west is reused)."""
    from jetlink.core.dr import promote
    from jetlink.core.dr.embedded import EmbeddedSite
    from jetlink.core.dr.positions import PositionStore, sync
    from jetlink.core.kv import KV
    from jetlink.core.replication import pump_until_idle

    clock = SystemClock()
    dd = DataDir(path)
    dd.add_cluster("west")
    dd.add_cluster("east")
    west, east = JetStream(dd.open("west"), clock), JetStream(dd.open("east"), clock)
    if kv:
        from jetlink.core.config.kv import KeyValueConfig

        KV(dd, "west", clock).create_bucket(KeyValueConfig(bucket="CFG", history=5))
        b = KV(dd, "west", clock).open("CFG")
        for i in range(10):
            b.put(f"k{i % 4}", b"v%d" % i)
        east.add_stream({"name": "KV_CFG", "mirror": {
            "name": "KV_CFG", "external": {"api": "$JS.west.API"}}})
        origin, mirror = "KV_CFG", "KV_CFG"
    else:
        west.add_stream({"name": "ORDERS", "subjects": ["orders.>"], "description": "orders"})
        for i in range(10):
            west.publish(f"orders.{('eu', 'us')[i % 2]}", b"m%d" % (i + 1))
        east.add_stream({"name": "ORDERS_EAST", "mirror": {
            "name": "ORDERS", "external": {"api": "$JS.west.API"}}})
        origin, mirror = "ORDERS", "ORDERS_EAST"
        _acked(west, origin, "billing", 6)
        _acked(west, origin, "shipping", 2)
    pump_until_idle(dd, clock)
    site = EmbeddedSite(dd, "east", clock)
    sync(site, PositionStore(KV(dd, "east", clock)))
    dd.set_down("west", True)
    subjects = ["$KV.CFG.>"] if kv else None
    promote(site, mirror, failover=True, subjects=subjects,
            positions=PositionStore(KV(dd, "east", clock)))
    if kv:
        b = KV(dd, "east", clock).open("CFG")
        for i in range(4):
            b.put("k9", b"east%d" % i)
    else:
        for i in range(4):
            east.publish("orders.eu", b"east%d" % (i + 1))
        _acked(east, mirror, "billing", 6)  # 7..12
        _acked(east, mirror, "audit", 3)
    dd.set_down("west", False)
    if kv:
        b = KV(dd, "west", clock).open("CFG")
        for i in range(3):
            b.put("k1", b"west-only%d" % i)
    else:
        for i in range(3):
            west.publish("orders.us", b"tail%d" % (i + 1), headers={"Tail": str(i)})
        if lost_first:
            west.delete_msg(origin, 1)
    tail = [(m.seq, m.subject, m.hdr or None, bytes(m.data), m.ts)
            for m in west.messages(origin, start_seq=11)]
    dd.close()
    return {"tail": tail}


def state(path: Path) -> dict:
    """Every stream of both clusters: config, state, consumers and their positions."""
    dd = DataDir(path)
    out = {}
    try:
        for cluster in ("west", "east"):
            js = JetStream(dd.open(cluster), SystemClock())
            for info in js.streams():
                cons = {c.name: (c.config.to_json(), c.delivered.stream_seq,
                                 c.ack_floor.stream_seq)
                        for c in js.consumers(info.config.name)}
                st = info.state
                out[(cluster, info.config.name)] = (
                    info.config.to_json(), st.messages, st.first_seq, st.last_seq, cons)
    finally:
        dd.close()
    return out


@pytest.fixture
def world(jl):
    built = scenario(jl.data)

    def east(*args):
        return jl("--cluster", "east", *args)

    east.data, east.tail, east.tmp = jl.data, built["tail"], jl.tmp
    return east


def _js(path: Path, cluster: str) -> tuple[DataDir, JetStream]:
    dd = DataDir(path)
    return dd, JetStream(dd.open(cluster), SystemClock())


def _rows(path: str) -> list[tuple]:
    table = pq.read_table(path, columns=["seq", "subject", "headers", "data", "ts"])
    return sorted(zip(*(table.column(c).to_pylist()
                        for c in ("seq", "subject", "headers", "data", "ts")), strict=True))


def check_round_trip(path: Path, tail_path: str, tail: list) -> None:
    """The original topology back, every consumer in place, the tail saved exactly."""
    assert _rows(tail_path) == sorted(tail)
    dd, west = _js(path, "west")
    east = JetStream(dd.open("east"), SystemClock())
    try:
        o = west.stream_info("ORDERS")
        assert o.config.mirror is None and o.config.subjects == ["orders.>"]
        assert o.config.description == "orders" and not o.config.sealed
        assert "jetlink.promoted_mirror" not in (o.config.metadata or {})
        assert o.state.last_seq == 14
        m = east.stream_info("ORDERS_EAST")
        assert m.config.mirror.name == "ORDERS" and m.config.mirror.external.api == \
            "$JS.west.API"
        assert m.config.subjects == [] and m.state.last_seq == 14
        # as the mirror was: no duplicate window (the promoted stream had the server's 2m)
        assert m.config.duplicate_window == 0
        assert sorted(west.consumer_names("ORDERS")) == ["billing", "shipping"]
        assert east.consumer_names("ORDERS_EAST") == ["audit"]
        # each consumer goes on where it stood
        assert [x.seq for x in west.fetch("ORDERS", "billing", 10)] == [13, 14]
        assert [x.seq for x in west.fetch("ORDERS", "shipping", 1)] == [3]
        assert [x.seq for x in east.fetch("ORDERS_EAST", "audit", 1)] == [4]
        from jetlink.core.dr.failback import FailbackStore
        from jetlink.core.kv import KV

        # the record of the failback in progress is replaced by its outcome
        rec = FailbackStore(KV(dd, "east", SystemClock())).read("ORDERS_EAST")
        assert rec is not None and set(rec) == {"stream", "kind", "phase", "at", "origin",
                                                "promoted_last_seq", "tail", "unmatched"}
        assert (rec["phase"], rec["origin"], rec["promoted_last_seq"]) == (
            "done", {"stream": "ORDERS", "cluster": "west", "reachable": True}, 10)
    finally:
        dd.close()


def test_round_trip(world):
    before = state(world.data)
    tail_path = str(world.tmp / "tail")
    plan = doc(world("stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{tail_path}",
                     "--switch", "--dry-run", "-j"))
    assert state(world.data) == before and not os.path.exists(tail_path)
    assert plan["dry_run"] is True and plan["complete"] is False
    assert plan["origin"] == {"stream": "ORDERS", "cluster": "west", "reachable": True}
    assert plan["tail"] == {"path": tail_path, "from_seq": 11, "messages": 3, "first_seq": 11,
                            "last_seq": 13, "subjects": {"orders.us": 3}, "subjects_total": 1,
                            "saved": False, "verified": False, "path_from": "given",
                            "abandoned": []}
    assert [(s["step"], s["status"]) for s in plan["steps"]] == [
        ("record", "planned"), ("save-tail", "planned"), ("compare", "planned"),
        ("record-consumers", "planned"), ("reuse-origin", "planned"),
        ("record-consumers", "planned"), ("seal", "planned"), ("promote-origin", "planned"),
        ("place-consumers", "planned"), ("delete-promoted", "planned"),
        ("create-mirror-back", "planned"), ("restore-consumers", "planned"),
        ("finish", "planned")]
    assert [(p["consumer"], p["start_seq"]) for p in plan["placed"]] == [
        ("billing", 13), ("shipping", 3)]
    assert [(p["consumer"], p["start_seq"]) for p in plan["restored"]] == [("audit", 4)]

    rep = doc(world("stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{tail_path}",
                    "-f", "-j"))
    assert rep["state"] == "mirroring" and rep["complete"] is True
    assert rep["tail"]["saved"] is rep["tail"]["verified"] is True
    assert rep["mirror"] == {"stream": "ORDERS", "cluster": "west", "last_seq": 14, "behind": 0,
                             "caught_up": True}
    # west's 1..10 are east's 1..10: kept; east's 11..14 copied; the tail 11..13 removed
    assert rep["reuse"] == {
        "messages": 10, "upto_seq": 10, "copied": 4,
        "reason": "ORDERS@west and ORDERS_EAST@east agree up to sequence 10 (subject, headers, "
                  "data and time compared): every message up to the promoted sequence 10 "
                  "agrees"}
    assert plan["reuse"] == {**rep["reuse"], "copied": 0}
    assert [(c["name"], c["ack_floor"]) for c in rep["origin_consumers"]] == [
        ("billing", 6), ("shipping", 2)]
    dd, west = _js(world.data, "west")
    try:
        cfg = west.stream_info("ORDERS").config
        assert cfg.mirror.name == "ORDERS_EAST" and cfg.mirror.external.api == "$JS.east.API"
        assert west.consumer_names("ORDERS") == []  # they come back with the switch
    finally:
        dd.close()
    out = world("stream", "failback", "ORDERS_EAST", "--switch", "-f")
    assert out.exit_code == 0, out.output
    assert "Stream ORDERS_EAST failed back: ORDERS@west is the primary again" in out.stdout
    assert "billing: starts at 13 (created)" in out.stdout
    check_round_trip(world.data, tail_path, world.tail)


def test_a_mirror_back_promoted_on_its_side_is_switched_never_saved_again(world, jl):
    """After the first failback west's ORDERS mirrors east; an operator promotes it there
    (stream promote). The switch sees it promoted and finishes the rest: the tail saved
    first is never saved again (west's messages now are east's, no tail of west's own);
    refused while east took messages after that promotion, nothing changed then."""
    tail_path = str(world.tmp / "tail")
    assert world("stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{tail_path}",
                 "-f").exit_code == 0
    saved = _rows(tail_path)
    assert saved == sorted(world.tail)
    assert jl("--cluster", "west", "stream", "promote", "ORDERS", "-f").exit_code == 0
    dd, east = _js(world.data, "east")
    east.publish("orders.eu", b"after west was promoted")
    dd.close()
    before = state(world.data)
    res = world("stream", "failback", "ORDERS_EAST", "--switch", "-f")
    assert res.exit_code == 1
    assert "ORDERS_EAST@east took messages after ORDERS@west was promoted (sequences " \
        "15..15), which the switch would delete with it; save them (jetlink stream " \
        "export), publish on ORDERS@west those it does not hold (a publish a leafnode took " \
        "to both sides is on it already), remove them from ORDERS_EAST@east (jetlink " \
        "stream rmm ORDERS_EAST SEQ) and run again" in res.stderr.replace("\n", " ")
    assert state(world.data) == before and _rows(tail_path) == saved
    dd, east = _js(world.data, "east")
    east.delete_msg("ORDERS_EAST", 15)  # (moved by hand, as the refusal says)
    dd.close()
    plan = doc(world("stream", "failback", "ORDERS_EAST", "--switch", "--dry-run", "-j"))
    assert "save-tail" not in [s["step"] for s in plan["steps"]]
    res = world("stream", "failback", "ORDERS_EAST", "--switch", "-f")
    assert res.exit_code == 0, res.stderr
    assert _rows(tail_path) == saved
    dd, west_js = _js(world.data, "west")
    try:
        assert west_js.stream_info("ORDERS").config.mirror is None
        assert JetStream(dd.open("east"), SystemClock()).stream_info(
            "ORDERS_EAST").config.mirror.name == "ORDERS"
    finally:
        dd.close()


def test_human_report_lists_the_tail(world):
    tail_path = str(world.tmp / "t")
    out = world("stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{tail_path}", "-f")
    assert out.exit_code == 0, out.output
    assert "Messages: 3 (sequences 11..13)" in out.stdout
    assert f"Dataset: parquet:{tail_path} (saved, counted there; given now)" in out.stdout
    assert "orders.us: 3" in out.stdout
    # what the old origin kept and what its mirror copied
    assert "            Reused: 10 messages kept (up to sequence 10)\n" in out.stdout
    assert "            Copied: 4 messages\n" in out.stdout
    assert ("               Why: ORDERS@west and ORDERS_EAST@east agree up to sequence 10 "
            "(subject, headers, data and time compared): every message up to the promoted "
            "sequence 10 agrees\n") in out.stdout


def test_the_dry_runs_report_says_what_the_mirror_would_be(world):
    """Nothing made yet: the mirror row says what the run would make, not "at sequence 0"
    beside the messages it would keep."""
    out = world("stream", "failback", "ORDERS_EAST", "--dry-run")
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert any(ln.endswith("ORDERS@west: planned: a mirror up to sequence 14") for ln in lines), \
        out.stdout
    assert not any("at sequence 0" in ln for ln in lines)
    assert "2 durable consumers of ORDERS@west: billing, shipping" in out.stdout
    # what it would copy, not a count of 0 beside it (counted once it copied)
    assert "            Copied: planned: every message after sequence 10\n" in out.stdout


def _west_east(jl):
    """Clusters west and east, west's ORDERS on orders.>; the CLI that asserts success."""
    def run(*args):
        res = jl(*args)
        assert res.exit_code == 0, res.output
        return res

    run("cluster", "add", "west")
    run("cluster", "add", "east")
    run("--cluster", "west", "stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults")
    return run


def test_a_dry_run_changes_no_byte_with_replication_pending(jl, tmp_path):
    """A failback dry run with --tail changes no byte of the data directory, with a KV
    mirror and a divergent tail around (no post-write step follows a dry run)."""
    from helpers import data_dir_bytes

    run = _west_east(jl)
    run("--cluster", "east", "stream", "add", "ORDERS_EAST", "--mirror", "ORDERS",
        "--mirror-domain", "west", "--defaults")
    run("--cluster", "west", "kv", "add", "CFG")
    run("--cluster", "east", "kv", "add", "CFG", "--mirror", "CFG@west")
    run("--cluster", "west", "pub", "orders.{{Count}}", "x", "--count", "5")
    run("--cluster", "east", "positions", "sync")
    run("cluster", "down", "west")
    run("--cluster", "east", "stream", "failover", "ORDERS_EAST", "-f")
    run("cluster", "up", "west")
    run("--cluster", "west", "pub", "orders.w", "y")  # the divergent tail
    before = data_dir_bytes(jl.data, databases_only=True)
    run("--cluster", "east", "stream", "failback", "ORDERS_EAST", "--dry-run", "--tail",
        f"parquet:{tmp_path / 'dry-tail'}")
    assert data_dir_bytes(jl.data, databases_only=True) == before
    assert not (tmp_path / "dry-tail").exists()


def test_no_post_write_step_ends_a_dry_run(tmp_path):
    """The embedded backend's step is asked for when the command ends (a dry run answers
    no): a write made under it is then not followed by a replication step."""
    from jetlink.core.backend import EmbeddedBackend

    def world(step):
        path = tmp_path / f"d{int(step)}"
        b = EmbeddedBackend(path, "local", SystemClock, step=lambda: step)
        js = b.jetstream()
        js.add_stream({"name": "O", "subjects": ["o.>"]})
        js.add_stream({"name": "M", "mirror": {"name": "O"}})
        js.publish("o.x", b"1")
        b.close()
        dd, j = _js(path, "local")
        try:
            return j.stream_info("M").state.messages
        finally:
            dd.close()

    assert (world(True), world(False)) == (1, 0)


def test_default_tail_path_is_dated_and_kept_across_runs(world, monkeypatch):
    monkeypatch.chdir(world.tmp)
    rep = doc(world("stream", "failback", "ORDERS_EAST", "-f", "-j"))
    name = os.path.basename(rep["tail"]["path"])
    assert name.startswith("failback-ORDERS-") and name.endswith("Z")
    assert os.path.dirname(rep["tail"]["path"]) == str(world.tmp)
    again = doc(world("stream", "failback", "ORDERS_EAST", "-f", "-j"))
    assert again["resumed"] is True and again["tail"]["path"] == rep["tail"]["path"]


def test_empty_tail_saves_nothing_and_says_so(jl):
    from jetlink.core.dr import promote
    from jetlink.core.dr.embedded import EmbeddedSite

    dd = DataDir(jl.data)
    dd.add_cluster("west")
    dd.add_cluster("east")
    clock = SystemClock()
    west, east = JetStream(dd.open("west"), clock), JetStream(dd.open("east"), clock)
    west.add_stream({"name": "O", "subjects": ["o.>"]})
    west.publish("o.a", b"1")
    east.add_stream({"name": "M", "mirror": {"name": "O", "external": {"api": "$JS.west.API"}}})
    from jetlink.core.replication import pump_until_idle

    pump_until_idle(dd, clock)
    promote(EmbeddedSite(dd, "east", clock), "M")
    dd.close()
    tail_path = jl.tmp / "none"
    # a dry run saves nothing: an empty tail is not said saved by it
    dry = doc(jl("--cluster", "east", "stream", "failback", "M", "--tail",
                 f"parquet:{tail_path}", "--switch", "--dry-run", "-j"))
    assert (dry["tail"]["messages"], dry["tail"]["saved"], dry["tail"]["verified"]) == (
        0, False, False)
    rep = doc(jl("--cluster", "east", "stream", "failback", "M", "--tail",
                 f"parquet:{tail_path}", "--switch", "-f", "-j"))
    assert rep["tail"]["messages"] == 0 and rep["tail"]["note"] == (
        "no message after the promoted last sequence: nothing to save")
    assert (rep["tail"]["saved"], rep["tail"]["verified"]) == (True, True)
    assert not tail_path.exists() and rep["state"] == "switched"


def test_refusals(world):
    res = world("stream", "failback", "ORDERS_EAST")  # no terminal, no -f
    assert res.exit_code == 2 and "--force" in res.output
    dd = DataDir(world.data)
    JetStream(dd.open("east"), SystemClock()).add_stream({"name": "PLAIN", "subjects": ["p"]})
    dd.set_down("west", True)
    dd.close()
    res = world("stream", "failback", "PLAIN", "-f", "-j")
    assert res.exit_code == 1
    assert json.loads(res.stdout)["error"]["description"] == (
        "stream PLAIN was not promoted by jetlink (its metadata holds no "
        "jetlink.promoted_mirror): there is nothing to fail back")
    before = state(world.data)
    res = world("stream", "failback", "ORDERS_EAST", "-f", "-j")
    assert res.exit_code == 1
    assert json.loads(res.stdout)["error"]["description"] == (
        "the old origin ORDERS (cluster west) does not answer (cluster west is down): "
        "failback needs it: run the same command again once it answers")
    assert state(world.data) == before
    res = world("stream", "failback", "ORDERS_EAST", "--tail", "nope", "-f")
    assert res.exit_code == 2 and "parquet:PATH" in res.output


def test_a_tail_to_save_without_pyarrow_is_one_line_and_changes_nothing(world, monkeypatch):
    """An installation without the spark extra (pyarrow): a failback whose old origin took
    messages (a tail to save as Parquet) is refused before anything of either stream is
    changed, naming what installs it, its dry run too; installed, the same run goes on."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pyarrow" else real(name, *a))
    before = state(world.data)
    for args in (["--dry-run"], ["-f"]):
        res = world("stream", "failback", "ORDERS_EAST", *args)
        assert res.exit_code == 1, res.output
        assert res.stderr.startswith("jetlink: error: saving the divergent tail of ORDERS "), \
            res.stderr
        assert res.stderr.endswith(
            "as Parquet needs pyarrow, not installed here: pip install 'jetlink[spark]' "
            "(pyspark, pyarrow and pandas, about 0.7 GB); nothing of ORDERS or ORDERS_EAST "
            "was changed: run the failback again once it is installed\n"), res.stderr
        assert state(world.data) == before
    monkeypatch.setattr(importlib.util, "find_spec", real)
    assert world("stream", "failback", "ORDERS_EAST", "-f").exit_code == 0


def test_kv_failback_round_trip(jl):
    built = scenario(jl.data, kv=True)
    tail_path = str(jl.tmp / "kvtail")
    rep = doc(jl("--cluster", "east", "kv", "failback", "CFG", "--tail",
                 f"parquet:{tail_path}", "--switch", "-f", "-j"))
    assert rep["kind"] == "kv" and rep["state"] == "switched"
    assert (rep["tail"]["messages"], rep["tail"]["subjects"]) == (3, {"$KV.CFG.k1": 3})
    assert _rows(tail_path) == sorted(built["tail"])
    west = doc(jl("--cluster", "west", "kv", "get", "CFG", "k9", "-j"))
    assert west["value"] in ("ZWFzdDM=", "east3")
    info = doc(jl("--cluster", "east", "stream", "info", "KV_CFG", "-j"))
    assert info["config"]["mirror"]["name"] == "KV_CFG"
    assert doc(jl("--cluster", "west", "kv", "put", "CFG", "k0", "back", "-j"))["revision"] == 15


# --- SIGKILL after each step, then the same command again -----------------------------------
MIRROR_STEPS = ["record", "save-tail", "compare", "record-consumers", "reuse-origin"]
# west without its message 1: nothing reused, west deleted and created again as the mirror
COPY_STEPS = ["compare", "delete-origin", "create-mirror"]
SWITCH_STEPS = ["record-consumers", "seal", "promote-origin", "place-consumers",
                "delete-promoted", "create-mirror-back", "restore-consumers", "mirror-caught-up"]


def _cli(path: Path, *args: str, pause: str | None = None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "JETLINK_"))}
    if pause:
        env["JETLINK_FAILBACK_PAUSE"] = pause
    return subprocess.Popen([JETLINK, "--data-dir", str(path), "--cluster", "east", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _killed_at(path: Path, step: str, *args: str) -> None:
    proc = _cli(path, *args, pause=step)
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                raise AssertionError(f"ended before step {step}: {proc.communicate()}")
            if line.strip() == f"failback step: {step}":
                break
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL


def _done(path: Path, *args: str) -> dict:
    proc = _cli(path, *args, "-f", "-j")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, (out, err)
    return json.loads(out)


@pytest.mark.parametrize("phase,step", [("mirror", s) for s in MIRROR_STEPS]
                         + [("copy", s) for s in COPY_STEPS]
                         + [("switch", s) for s in SWITCH_STEPS])
def test_killed_after_each_step_and_run_again(tmp_path, phase, step):
    path = tmp_path / "data"
    built = scenario(path, lost_first=phase == "copy")
    tail_path = str(tmp_path / "tail")
    base = ["stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{tail_path}"]
    if phase == "switch":
        _done(path, *base)
        _killed_at(path, step, *base, "--switch", "-f")
        if step == "seal":  # sealed here, west still its mirror: dr check names the fix
            proc = _cli(path, "dr", "check")
            out, _err = proc.communicate(timeout=60)
            assert proc.returncode == 2, out
            assert "Failback switch of ORDERS_EAST stopped half-way: ORDERS_EAST is sealed " \
                "here and its old origin ORDERS in cluster west still mirrors it, so nothing " \
                "takes its writes; run jetlink stream failback ORDERS_EAST --switch again to " \
                "finish it" in out, out
        if step == "delete-promoted":  # east holds no copy of ORDERS: dr check names the fix
            proc = _cli(path, "dr", "check")
            out, _err = proc.communicate(timeout=60)
            assert proc.returncode == 2, out
            assert out.startswith(
                "CRITICAL dr Crit:ORDERS_EAST@east: Failback switch of ORDERS_EAST stopped "
                "after deleting it here: this side holds no copy of ORDERS in west until the "
                "switch makes it again as the mirror it was; run jetlink stream failback "
                "ORDERS_EAST --switch again (or jetlink dr failback --from west --switch) to "
                "finish it"), out
    else:
        _killed_at(path, step, *base, "-f")
        if step == "delete-origin":  # west's ORDERS gone: dr check names the fix
            proc = _cli(path, "dr", "check")
            out, _err = proc.communicate(timeout=60)
            assert proc.returncode == 1, out
            assert "Failback of ORDERS_EAST under way: its old origin ORDERS in cluster west " \
                "was deleted and is not a mirror yet; run jetlink stream failback " \
                "ORDERS_EAST again to finish it" in out
        rep = _done(path, *base)
        assert rep["resumed"] is True and rep["state"] == "mirroring"
        assert rep["tail"]["messages"] == 3 and rep["tail"]["verified"] is True
        # what the re-run reports: kept as the killed run compared, or copied whole
        assert (rep["reuse"]["messages"], rep["reuse"]["copied"]) == (
(0, 14) if phase == "copy" else (10, 4))
    rep = _done(path, *base, "--switch")
    assert rep["state"] == "switched" and rep["complete"] is True
    check_round_trip(path, tail_path, built["tail"])


def test_a_source_of_the_old_origin_is_held_across_a_kill(tmp_path):
    """ALL@east sources ORDERS@west (west's 10 messages and its tail of 3). Killed right
    after the step hold-sources and run again: the step is not done twice, ALL's source
    starts after what it holds (L + 1 = 11) and once west is the primary again ALL holds
    west's 13 and east's 4 outage writes, each once."""
    from jetlink.core.replication import pump_until_idle

    path = tmp_path / "data"
    scenario(path)
    dd = DataDir(path)
    clock = SystemClock()
    east = JetStream(dd.open("east"), clock)
    east.add_stream({"name": "ALL", "subjects": ["all.>"], "sources": [
        {"name": "ORDERS", "external": {"api": "$JS.west.API"}}]})
    pump_until_idle(dd, clock)
    dd.close()
    tail_path = str(tmp_path / "tail")
    base = ["stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{tail_path}"]
    _killed_at(path, "hold-sources", *base, "-f")
    rep = _done(path, *base, "--switch")
    assert rep["state"] == "switched"
    assert [s["detail"] for s in rep["steps"] if s["step"] == "hold-sources"] == [
        "ORDERS@west is created again: its sources start after what they hold: ALL@east "
        "from sequence 11"]
    dd = DataDir(path)
    try:
        pump_until_idle(dd, clock)
        east = JetStream(dd.open("east"), clock)
        got = [bytes(m.data) for m in east.messages("ALL", start_seq=1)]
        assert got == [b"m%d" % i for i in range(1, 11)] + [b"tail%d" % i for i in (1, 2, 3)] \
            + [b"east%d" % i for i in (1, 2, 3, 4)]
        assert east.stream_info("ALL").config.sources[0].opt_start_seq == 11
    finally:
        dd.close()


def _switch_killed_at(tmp_path: Path, step: str) -> tuple[Path, dict, str, list[str]]:
    """The scenario failed back (its tail saved), then a --switch killed after ``step``:
    (data directory, the scenario, the tail's path, the failback's arguments)."""
    path = tmp_path / "data"
    built = scenario(path)
    tail_path = str(tmp_path / "tail")
    base = ["stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{tail_path}"]
    _done(path, *base)
    _killed_at(path, step, *base, "--switch", "-f")
    return path, built, tail_path, base


def test_a_switch_begun_is_finished_by_a_run_without_switch(tmp_path):
    """Once a switch began (the promoted stream sealed), a run without --switch finishes it:
    the report says it switched."""
    path, built, tail_path, base = _switch_killed_at(tmp_path, "seal")
    rep = _done(path, *base)
    assert (rep["state"], rep["switch"], rep["complete"]) == ("switched", True, True)
    check_round_trip(path, tail_path, built["tail"])


def test_a_switch_stopped_after_promote_origin_is_finished_never_fenced(tmp_path):
    """Sealed, the promoted stream's subjects are moved aside in the same update: with the
    old origin promoted, only it answers a publish (a sealed stream still capturing them
    would answer "sealed" for a message the old origin stores through the leafnode). A
    switch stopped there: dr check says run it again, never fence (dr fence leaves the old
    origin alone); an old origin fenced by hand meanwhile is unfenced by the re-run, which
    makes it the primary."""
    from jetlink.core.dr.fencing import fence_subject, with_fence

    path, built, tail_path, base = _switch_killed_at(tmp_path, "promote-origin")
    dd = DataDir(path)
    try:
        east = JetStream(dd.open("east"), SystemClock()).stream_info("ORDERS_EAST").config
        west = JetStream(dd.open("west"), SystemClock()).stream_info("ORDERS").config
        assert (east.sealed, east.subjects) == (True, [fence_subject("ORDERS_EAST")])
        assert (west.mirror, west.subjects) == (None, ["orders.>"])
    finally:
        dd.close()
    proc = _cli(path, "dr", "check")
    out, _err = proc.communicate(timeout=60)
    assert proc.returncode == 2, out
    assert ("Failback switch of ORDERS_EAST stopped half-way: ORDERS_EAST is sealed here and "
            "its old origin ORDERS in cluster west takes its writes again, ORDERS_EAST not its "
            "mirror yet; run jetlink stream failback ORDERS_EAST --switch again to finish it "
            "(never fence the old origin now: it is the primary the switch makes)") in out, out
    assert "Split brain" not in out
    proc = _cli(path, "dr", "fence", "--from", "west", "-f", "-j")
    out, err = proc.communicate(timeout=60)
    [item] = json.loads(out)["objects"]
    assert (proc.returncode, item["action"], item["subjects_after"]) == (
        0, "left as the primary", ["orders.>"]), (out, err)
    out, _err = _cli(path, "dr", "fence", "--from", "west", "-f").communicate(timeout=60)
    assert out.splitlines()[-1] == (
        "Nothing to do: every old origin of west is fenced already, or the primary a failback "
        "switch under way makes again (run that switch again to finish it)"), out
    dd = DataDir(path)
    try:
        wjs = JetStream(dd.open("west"), SystemClock())
        assert wjs.stream_info("ORDERS").config.subjects == ["orders.>"]
        wjs.update_stream(with_fence(wjs.stream_info("ORDERS").config))  # fenced by hand
    finally:
        dd.close()
    rep = _done(path, *base, "--switch")
    assert rep["state"] == "switched"
    assert [s["detail"] for s in rep["steps"] if s["step"] == "unfence-origin"] == [
        "ORDERS@west takes orders.> again (its fence undone: the switch makes it the primary)"]
    check_round_trip(path, tail_path, built["tail"])


def test_a_tail_saved_by_a_run_killed_then_is_never_saved_twice(tmp_path):
    """Killed right after save-tail: the record says the tail was saved and counted, so a
    re-run given another --tail is refused (exit 2) rather than writing a second copy, and
    the re-run without it goes on with that dataset."""
    path = tmp_path / "data"
    built = scenario(path)
    first, other = str(tmp_path / "tail"), str(tmp_path / "other")
    _killed_at(path, "save-tail", "stream", "failback", "ORDERS_EAST", "--tail",
               f"parquet:{first}", "-f")
    proc = _cli(path, "stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{other}", "-f")
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (2, (
        f"jetlink: error: the divergent tail of ORDERS_EAST was saved to parquet:{first} and "
        "counted there (3 messages) by an earlier run: it is not written again to --tail "
        f"parquet:{other}; run again without --tail (move the dataset yourself to keep it "
        "elsewhere)\n")), (out, err)
    assert not Path(other).exists()
    rep = _done(path, "stream", "failback", "ORDERS_EAST", "--switch")
    assert rep["state"] == "switched" and rep["tail"]["path"] == first
    check_round_trip(path, first, built["tail"])


def test_a_filtered_mirror_is_not_failed_back(jl):
    """A filtered mirror never held the origin's other messages, below the promoted
    sequence too: making the old origin a mirror would remove them. Refused, nothing
    changed."""
    from jetlink.core.dr import promote
    from jetlink.core.dr.embedded import EmbeddedSite
    from jetlink.core.replication import pump_until_idle

    dd = DataDir(jl.data)
    dd.add_cluster("west")
    dd.add_cluster("east")
    clock = SystemClock()
    west, east = JetStream(dd.open("west"), clock), JetStream(dd.open("east"), clock)
    west.add_stream({"name": "O", "subjects": ["o.>"]})
    west.publish("o.a", b"1")
    west.publish("o.b", b"2")  # never mirrored: the mirror copies o.a only
    east.add_stream({"name": "M", "mirror": {"name": "O", "filter_subject": "o.a",
                                             "external": {"api": "$JS.west.API"}}})
    pump_until_idle(dd, clock)
    promote(EmbeddedSite(dd, "east", clock), "M", subjects=["m.>"], failover=True)
    dd.close()
    before = state(jl.data)
    res = jl("--cluster", "east", "stream", "failback", "M", "-f", "-j")
    assert res.exit_code == 1
    assert json.loads(res.stdout)["error"]["description"].startswith(
        "stream M mirrored only part of O (a filter or subject transforms): failback would "
        "remove O's messages the mirror never held")
    assert state(jl.data) == before


# --- running failback again ---------------------------------------------------------------------


def test_a_tail_that_could_not_be_written_gives_way_to_another(world):
    """A first run whose tail could not be written (a path it cannot create: here under a
    regular file) leaves the plan recorded: a re-run given another --tail takes it, names
    the unfinished dataset it leaves, and a re-run without --tail goes on with it."""
    blocker = world.tmp / "afile"
    blocker.write_text("not a directory")
    bad = str(blocker / "tail")
    before = state(world.data)
    res = world("stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{bad}", "-f")
    assert res.exit_code == 1
    assert res.stderr.startswith(f"jetlink: error: cannot write {bad}: ")
    assert res.stderr.endswith(
        ": nothing of ORDERS was deleted; run again with another --tail parquet:PATH (what "
        "was begun here is left as it is)\n")
    # the plan is recorded (jetlink's own bucket); nothing else changed
    after = state(world.data)
    assert after.pop(("east", "KV_JETLINK_FAILBACK")) and after == before
    good = str(world.tmp / "tail")
    plan = doc(world("stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{good}",
                     "--dry-run", "-j"))
    assert (plan["tail"]["path"], plan["tail"]["path_from"], plan["tail"]["abandoned"]) == (
        good, "given", [bad])
    out = ok_out(world("stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{good}",
                       "--dry-run"))
    assert f"           Dataset: parquet:{good} (would be saved; given now)" in out
    assert (f"       Left Behind: parquet:{bad} (an earlier run's unfinished dataset, left "
            "as it is)") in out
    rep = doc(world("stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{good}", "-f",
                    "-j"))
    assert (rep["tail"]["path"], rep["tail"]["verified"], rep["tail"]["messages"]) == (
        good, True, 3)
    assert rep["tail"]["abandoned"] == [bad] and rep["state"] == "mirroring"
    assert _rows(good) == sorted(world.tail)
    # without --tail: the one in force, as recorded
    again = doc(world("stream", "failback", "ORDERS_EAST", "--dry-run", "-j"))
    assert (again["tail"]["path"], again["tail"]["path_from"]) == (good, "recorded")
    # once saved and counted, the tail is that dataset: another --tail is refused
    res = world("stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{bad}2", "-f")
    assert (res.exit_code, res.stderr) == (2, (
        f"jetlink: error: the divergent tail of ORDERS_EAST was saved to parquet:{good} and "
        f"counted there (3 messages) by an earlier run: it is not written again to --tail "
        f"parquet:{bad}2; run again without --tail (move the dataset yourself to keep it "
        "elsewhere)\n"))
    rep = doc(world("stream", "failback", "ORDERS_EAST", "--switch", "-f", "-j"))
    assert rep["state"] == "switched"
    check_round_trip(world.data, good, world.tail)


def ok_out(result) -> str:
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_second_failback_says_when_it_finished(world):
    tail_path = str(world.tmp / "tail")
    done = doc(world("stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{tail_path}",
                     "--switch", "-f", "-j"))
    assert (done["state"], done["already_done"], done["failed_back_at"]) == (
        "switched", False, None)
    before = state(world.data)
    again = doc(world("stream", "failback", "ORDERS_EAST", "-f", "-j"))
    at = again["failed_back_at"]
    assert at and at.endswith("Z") and "T" in at
    assert (again["already_done"], again["state"], again["complete"], again["resumed"]) == (
        True, "switched", True, False)
    assert again["origin"] == {"stream": "ORDERS", "cluster": "west", "reachable": True}
    assert again["steps"] == [{"step": "finish", "status": "skipped", "detail": (
        f"already failed back at {at}: ORDERS@west is the primary again, ORDERS_EAST@east "
        "its mirror")}]
    out = ok_out(world("stream", "failback", "ORDERS_EAST", "-f"))
    assert out.splitlines()[0] == (
        f"Stream ORDERS_EAST already failed back at {at}: ORDERS@west is the primary again")
    assert state(world.data) == before
    # the same --tail again is what it was; another is refused (never exit 0 ignoring it)
    assert doc(world("stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{tail_path}",
                     "-f", "-j"))["already_done"] is True
    other = world("stream", "failback", "ORDERS_EAST", "--tail",
                  f"parquet:{world.tmp / 'elsewhere'}", "-f")
    assert (other.exit_code, other.stderr) == (2, (
        f"jetlink: error: ORDERS_EAST already failed back at {at} and its divergent tail went "
        f"to parquet:{tail_path}: nothing is written to --tail parquet:"
        f"{world.tmp / 'elsewhere'}; run again without --tail\n"))
    assert state(world.data) == before and not (world.tmp / "elsewhere").exists()
    check_round_trip(world.data, tail_path, world.tail)


def test_kv_failback_names_each_side_with_its_cluster(jl):
    scenario(jl.data, kv=True)
    tail_path = str(jl.tmp / "kvtail")
    rep = doc(jl("--cluster", "east", "kv", "failback", "CFG", "--tail",
                 f"parquet:{tail_path}", "--switch", "-f", "-j"))
    details = {(s["step"], s["detail"]) for s in rep["steps"]}
    # west's history limit removed its k1 at 2 when it took the tail: reused up to 1
    reuse = next(s["detail"] for s in rep["steps"] if s["step"] == "reuse-origin")
    assert reuse == (
        "KV_CFG@west as a mirror of KV_CFG@east, keeping its messages up "
        "to sequence 1 (1 of them) and removing the rest (one transaction); its consumers "
        "come back with the switch; any other mirror that copied its sequences 11..13 keeps "
        "them: jetlink dr check names each (Diverged), to re-seed")
    assert rep["reuse"]["reason"] == (
        "KV_CFG@west and KV_CFG@east agree up to sequence 1 (subject, headers, data and time "
        "compared): sequence 2 is on KV_CFG@east only")
    assert ("seal", "KV_CFG@east takes no more writes: sealed, its subjects moved aside (its "
            "producers get no answer until KV_CFG@west takes them)") in details
    assert ("create-mirror-back", "KV_CFG@east as the mirror of KV_CFG@west it was") in details
    assert ("finish", "KV_CFG@west is the primary again, KV_CFG@east its mirror") in details
    assert rep["mirror"] == {"stream": "KV_CFG", "cluster": "east", "last_seq": 14,
                             "behind": 0, "caught_up": True}
    out = ok_out(jl("--cluster", "east", "kv", "failback", "CFG", "-f"))
    assert out.splitlines()[0].startswith("KV bucket CFG already failed back at ")
    assert out.splitlines()[0].endswith(": KV_CFG@west is the primary again")


def test_messages_older_than_the_promoted_streams_first_are_kept(jl, tmp_path):
    """A DR mirror whose limits dropped the oldest messages: the old origin's messages below
    the promoted stream's first sequence are held nowhere else, so the failback keeps them
    (compared from the promoted stream's first sequence on; a mirror keeps what its origin
    no longer holds) and the old origin is the primary again with all of them."""
    run = _west_east(jl)
    run("--cluster", "west", "pub", "orders.{{Count}}", "o", "--count", "10")
    run("--cluster", "east", "stream", "add", "ORDERS_EAST", "--mirror", "ORDERS",
        "--mirror-domain", "west", "--defaults", "--max-msgs", "5")
    run("replicate")
    run("--cluster", "east", "positions", "sync")
    run("cluster", "down", "west")
    run("--cluster", "east", "stream", "failover", "ORDERS_EAST", "-f")
    run("cluster", "up", "west")
    rep = doc(run("--cluster", "east", "stream", "failback", "ORDERS_EAST", "--tail",
                  f"parquet:{tmp_path / 't'}", "-f", "-j"))
    assert (rep["reuse"]["messages"], rep["reuse"]["upto_seq"]) == (10, 10), rep["reuse"]
    assert rep["reuse"]["reason"].endswith(
        "; its 5 messages before ORDERS_EAST@east's first sequence 6 kept (not on "
        "ORDERS_EAST@east)"), rep["reuse"]
    run("--cluster", "east", "stream", "failback", "ORDERS_EAST", "--switch", "-f")
    west = doc(run("--cluster", "west", "stream", "info", "ORDERS", "-j"))["state"]
    assert (west["first_seq"], west["last_seq"], west["messages"]) == (1, 10, 10)
    first = doc(run("--cluster", "west", "stream", "get", "ORDERS", "1", "-j"))
    assert first["subject"] == "orders.1"


@pytest.mark.parametrize(("window", "promoted", "max_age", "want"), [
    (300 * SECOND, 120 * SECOND, 0, 300 * SECOND),  # the mirror's own, as recorded
    (0, 120 * SECOND, 0, 0),
    (None, 120 * SECOND, 0, 0),  # a record from before: the server's default dropped
    (None, 30 * SECOND, 30 * SECOND, 0),  # (the default is max_age when that is shorter)
    (None, 60 * SECOND, 0, 60 * SECOND),  # not the default: someone set it, kept
])
def test_the_mirror_made_again_has_the_duplicate_window_it_had(window, promoted, max_age,
                                                                 want):
    """Promoting gives the stream the server's default duplicate window (a mirror gets
    none); the failback makes the mirror again with the one it had, which the promotion
    record keeps (core/dr/rules.py ``_promoted_config``)."""
    from jetlink.core.config.stream import StreamConfig
    from jetlink.core.dr.failback import _as_mirror
    from jetlink.core.dr.fencing import PROMOTED_KEY, mirror_window
    from jetlink.core.dr.rules import _promoted_config

    promoted_cfg = StreamConfig.from_json({"name": "M", "subjects": ["m.>"],
                                           "duplicate_window": promoted, "max_age": max_age})
    origin = StreamConfig.from_json({"name": "M", "mirror": {"name": "O"}}).mirror
    _promoted_config(promoted_cfg, origin, 5, window=window)
    assert PROMOTED_KEY in promoted_cfg.metadata
    assert mirror_window(promoted_cfg) == window
    doc = {"name": "M", "subjects": ["m.>"], "duplicate_window": promoted, "max_age": max_age}
    got = _as_mirror(doc, {"name": "O"}, mirror_window(promoted_cfg))
    assert (got.duplicate_window, got.mirror.name, got.subjects) == (want, "O", [])
