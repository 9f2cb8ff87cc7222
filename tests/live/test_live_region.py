"""`jetlink dr failover --from west` and `jetlink dr failback --from west` on real
nats-servers (core/dr/region.py): two JetStream domains joined by a leafnode (west the hub,
east the leaf), jetlink talking to east.

West's region: three streams, each with a durable consumer (its ack floor synced to east with
``positions sync``), and the KV bucket CFG, each mirrored in east. West goes down; the region
fails over in one run: every object promoted once with its origin's subjects, every consumer
placed at its ack floor + 1, a re-run has nothing to do. West comes back over the leafnode: a
split brain (a publish stored on both sides, `dr check` CRITICAL); `dr fence --from west`
takes west's subjects away; the region fails back with --switch, each divergent tail saved in
its partition of one dataset; then a publish on west is stored once in west and mirrored once
to east. With west up at failover time, ``--fence`` fences it in the same run.
"""

from __future__ import annotations

import base64
import json

import pytest
from helpers import runner

from jetlink.cli.main import app
from live.clihelp import doc, ok
from live.servers import wait_until

#: stream -> (its subjects' prefix, the ack floor of its consumer c)
STREAMS = {"ORD": ("orders", 2), "PAY": ("pay", 4), "SHIP": ("ship", 0)}
MSGS = 6
KEYS = {"a": "1", "b": "2"}
ALL = [*(f"{s}_EAST" for s in STREAMS), "KV_CFG"]


@pytest.fixture
def region(live_domains, monkeypatch):
    """West's region mirrored in east, caught up, positions synced: ``region(*args)`` runs
    jetlink against east, ``region.west(*args)`` against west."""
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)
    d = live_domains

    def east(*args):
        return runner.invoke(app, ["--server", d.leaf.url, *args], prog_name="jetlink")

    def west(*args):
        return runner.invoke(app, ["--server", d.hub.url, *args], prog_name="jetlink")

    east.west, east.domains = west, d
    return east


def build(east) -> dict[str, list[tuple[int, str, bytes]]]:
    """The region (file storage: west comes back with it) and its mirrors, caught up, the
    origins' consumers acknowledged to their floors, positions synced. East's contents."""
    build_west(east)
    return build_east(east)


def build_west(east) -> None:
    """West's streams with their consumer c acknowledged to its floor, and the bucket CFG."""
    c = east.domains.client()
    for s, (sub, floor) in STREAMS.items():
        c.stream_create({"name": s, "subjects": [f"{sub}.>"]}, domain="west")
        for i in range(MSGS):
            c.js_publish(f"{sub}.x", f"{s}-m{i + 1}".encode())
        c.api(f"CONSUMER.CREATE.{s}.c", {"stream_name": s, "config": {
            "durable_name": "c", "ack_policy": "explicit"}}, domain="west")
        if floor:
            assert c.fetch_ack(s, "c", floor, domain="west") == floor
    ok(east.west("kv", "add", "CFG"))
    for k, v in KEYS.items():
        ok(east.west("kv", "put", "CFG", k, v))


def build_east(east) -> dict[str, list[tuple[int, str, bytes]]]:
    """East's mirrors of west's region, caught up, positions synced; their contents."""
    d = east.domains
    c = d.client()
    for s in STREAMS:
        c.stream_create({"name": f"{s}_EAST", "mirror": {
            "name": s, "external": {"api": "$JS.west.API"}}}, domain="east")
    ok(east("kv", "add", "KV_CFG", "--mirror", "CFG", "--mirror-domain", "west"))
    want = {s: MSGS for s in STREAMS} | {"CFG": len(KEYS)}
    for s, n in want.items():
        mirror = "KV_CFG" if s == "CFG" else f"{s}_EAST"
        wait_until(lambda m=mirror, n=n: c.stream_info(m, domain="east")["state"]["last_seq"]
                   == n, message=f"{mirror} caught up")
    ok(east("positions", "sync"))
    return {m: contents(c, m, "east") for m in ALL}


def contents(c, stream: str, domain: str) -> list[tuple[int, str, bytes]]:
    """Every message of ``stream`` (sequence, subject, data), read one by one."""
    st = c.stream_info(stream, domain=domain)["state"]
    out = []
    for seq in range(st["first_seq"], st["last_seq"] + 1) if st["messages"] else ():
        m = c.api(f"STREAM.MSG.GET.{stream}", {"seq": seq}, domain=domain)
        if "message" in m:
            msg = m["message"]
            out.append((msg["seq"], msg["subject"], base64.b64decode(msg.get("data") or "")))
    return out


def assert_failed_over(c, rep: dict, want: dict, states: tuple[str, ...] = ("done",)) -> None:
    """Every object promoted once (by this run, or ``states``: by the run it finished) with
    its subjects, every consumer placed once at its ack floor + 1, no message lost or
    duplicated."""
    assert rep["complete"] is True and rep["failed"] == [] and rep["refused"] == [], rep
    assert sorted((o["kind"], o["name"]) for o in rep["objects"]) == sorted(
        [("kv", "CFG"), *(("stream", f"{s}_EAST") for s in STREAMS)])
    assert {o["state"] for o in rep["objects"]} <= set(states), rep["objects"]
    for s, (sub, floor) in STREAMS.items():
        cfg = c.stream_info(f"{s}_EAST", domain="east")["config"]
        assert "mirror" not in cfg and cfg["subjects"] == [f"{sub}.>"], cfg
        assert json.loads(cfg["metadata"]["jetlink.promoted_mirror"])["mirror"]["name"] == s
        assert contents(c, f"{s}_EAST", "east") == want[f"{s}_EAST"]
        names = c.api(f"CONSUMER.NAMES.{s}_EAST", {}, domain="east")["consumers"]
        assert names == ["c"], names
        info = c.api(f"CONSUMER.INFO.{s}_EAST.c", domain="east")
        assert (info["config"]["deliver_policy"], info["config"]["opt_start_seq"],
                info["num_pending"]) == ("by_start_sequence", floor + 1, MSGS - floor), info
    cfg = c.stream_info("KV_CFG", domain="east")["config"]
    assert "mirror" not in cfg and cfg["subjects"] == ["$KV.CFG.>"], cfg
    assert contents(c, "KV_CFG", "east") == want["KV_CFG"]


def refused(c, subject: str) -> str | None:
    """The publish's error (a request nobody answers), or None when a stream took it."""
    try:
        c.js_publish(subject, b"x")
    except Exception as err:  # noqa: BLE001 - the client's no-responders error
        return f"{type(err).__name__}: {err}"
    return None


def counts(c) -> dict[str, tuple[int, int]]:
    """Each stream's message count: (west's, east's)."""
    return {s: (c.stream_info(s, domain="west")["state"]["messages"],
                c.stream_info(f"{s}_EAST", domain="east")["state"]["messages"])
            for s in STREAMS}


@pytest.mark.slow
def test_a_region_fails_over_is_fenced_and_fails_back(region, tmp_path):
    d = region.domains
    want = build(region)
    c0 = d.client()
    windows = {m: c0.stream_info(m, domain="east")["config"].get("duplicate_window")
               for m in ALL}
    d.hub.kill()  # the outage
    try:
        rep = doc(region("dr", "failover", "--from", "west", "-f", "-j"))
        again = ok(region("dr", "failover", "--from", "west", "-f"))
        assert again.stdout.startswith("Nothing to do: the region failover of west was done "
                                       "already (finished "), again.stdout
    finally:
        d.hub.restart()
        d.wait_ready()  # west is back, the leafnode joined
    c = d.client()
    assert_failed_over(c, rep, want)
    # the split brain: one publish from the west server, stored on both sides
    # (published until a stream takes it: the leafnode's interest may still be forming)
    wait_until(lambda: refused(c, "orders.dup") is None, message="orders.dup stored")
    wait_until(lambda: counts(c)["ORD"] == (MSGS + 1, MSGS + 1),
               message=lambda: f"orders.dup stored in both domains ({counts(c)})")
    assert c.js_publish("pay.dup")["stream"] in ("PAY", "PAY_EAST")
    wait_until(lambda: counts(c)["PAY"] == (MSGS + 1, MSGS + 1),
               message=lambda: f"pay.dup stored in both domains ({counts(c)})")
    r = region("dr", "check", "-j")
    assert r.exit_code == 2, r.stdout
    split = {m["check_name"]: m["status"] for m in json.loads(r.stdout)["mirrors"]}
    assert split == dict.fromkeys(["ORD_EAST", "PAY_EAST", "SHIP_EAST", "CFG"], "CRITICAL")
    fence = doc(region("dr", "fence", "--from", "west", "-f", "-j"))
    assert sorted((o["name"], o["action"]) for o in fence["objects"]) == [
        ("CFG", "fenced"), ("ORD", "fenced"), ("PAY", "fenced"), ("SHIP", "fenced")]
    before = counts(c)
    # fenced: a publish from the west server on west's subject is stored once, in east only
    assert c.js_publish("orders.after.fence")["stream"] == "ORD_EAST"
    assert counts(c) == {**before, "ORD": (before["ORD"][0], before["ORD"][1] + 1)}
    # east on its own subjects (stream failover --subjects): refused and stored nowhere
    ok(region("stream", "failover", "SHIP_EAST", "--subjects", "east.ship.>", "-f"))
    wait_until(lambda: refused(c, "ship.refused") is not None,
               message="a publish on ship.> refused once east left it")
    assert "no responders" in refused(c, "ship.refused").lower()
    assert counts(c)["SHIP"] == (MSGS, MSGS)
    east_now = {m: contents(c, m, "east") for m in ALL}
    # the failback: each tail in its partition, counted; --switch: west the primary again
    tails = tmp_path / "tails"
    plan = doc(region("dr", "failback", "--from", "west", "--switch", "--tail",
                      f"parquet:{tails}", "--dry-run", "-j"))
    planned = {o["name"]: (o["plan"]["tail"] or {}).get("messages") for o in plan["objects"]}
    assert planned == {"ORD_EAST": 1, "PAY_EAST": 1, "SHIP_EAST": 0, "CFG": 0}, planned
    back = doc(region("dr", "failback", "--from", "west", "--switch", "--tail",
                      f"parquet:{tails}", "-f", "-j"))
    assert back["complete"] is True and [o["state"] for o in back["objects"]] == [
        "done"] * 4, back
    assert read_tails(tails) == {"object=ORD_EAST": [(MSGS + 1, "orders.dup", b"x")],
                                 "object=PAY_EAST": [(MSGS + 1, "pay.dup", b"")]}
    assert_failed_back(c, east_now)
    # each mirror made again as it was, its duplicate window (a KV mirror's too) included
    assert {m: c.stream_info(m, domain="east")["config"].get("duplicate_window")
            for m in ALL} == windows
    again = ok(region("dr", "failback", "--from", "west", "--switch", "-f"))
    assert again.stdout.startswith("Nothing to do: the region failback of west was done "
                                   "already"), again.stdout
    stored_once(c, "ORD", east_now["ORD_EAST"])


def stored_once(c, stream: str, before: list) -> None:
    """A publish from the west server on ``stream``'s subjects after the failback: stored
    once in west, mirrored once to east (both then hold ``before`` and it)."""
    subject = f"{STREAMS[stream][0]}.final"
    last = c.stream_info(stream, domain="west")["state"]["last_seq"]
    assert c.js_publish(subject)["stream"] == stream
    wait_until(lambda: c.stream_info(f"{stream}_EAST", domain="east")["state"]["last_seq"]
               == last + 1, message=f"east mirrored the publish on {subject}")
    assert contents(c, stream, "west") == contents(c, f"{stream}_EAST", "east") == [
        *before, (last + 1, subject, b"")]


def read_tails(base) -> dict[str, list[tuple[int, str, bytes]]]:
    """Each partition of the region's tail dataset: its rows (seq, subject, data)."""
    import pyarrow.parquet as pq

    out = {}
    for part in sorted(base.glob("object=*")):
        rows = []
        for f in sorted(part.glob("*.parquet")):
            rows += [(x["seq"], x["subject"], x["data"]) for x in
                     pq.read_table(f, columns=["seq", "subject", "data"]).to_pylist()]
        out[part.name] = rows
    return out


def assert_failed_back(c, east_now: dict) -> None:
    """The round trip: each old origin the primary with its own subjects, unfenced, holding
    what east held; east mirroring it, caught up; the consumers back on west."""
    for s, (sub, floor) in STREAMS.items():
        o = c.stream_info(s, domain="west")
        assert "mirror" not in o["config"] and o["config"]["subjects"] == [f"{sub}.>"], o
        assert "jetlink.fenced_subjects" not in (o["config"].get("metadata") or {})
        assert contents(c, s, "west") == east_now[f"{s}_EAST"]
        wait_until(lambda s=s: contents(c, f"{s}_EAST", "east") == east_now[f"{s}_EAST"],
                   message=f"{s}_EAST mirrors {s} again")
        assert c.stream_info(f"{s}_EAST", domain="east")["config"]["mirror"]["name"] == s
        assert c.api(f"CONSUMER.NAMES.{s}", {}, domain="west")["consumers"] == ["c"]
        info = c.api(f"CONSUMER.INFO.{s}.c", domain="west")
        assert (info["config"]["opt_start_seq"], info["ack_floor"]["stream_seq"],
                info["num_pending"]) == (floor + 1, floor, len(east_now[f"{s}_EAST"]) - floor)
    o = c.stream_info("KV_CFG", domain="west")
    assert "mirror" not in o["config"] and o["config"]["subjects"] == ["$KV.CFG.>"], o
    assert contents(c, "KV_CFG", "west") == east_now["KV_CFG"]


@pytest.mark.slow
def test_a_region_failover_with_west_up_fences_it_in_the_same_run(region):
    want = build(region)
    c = region.domains.client()
    rep = doc(region("dr", "failover", "--from", "west", "--fence", "-f", "-j"))
    assert_failed_over(c, rep, want)
    assert sorted((o["name"], o["action"]) for o in rep["fence"]["objects"]) == [
        ("CFG", "fenced"), ("ORD", "fenced"), ("PAY", "fenced"), ("SHIP", "fenced")]
    for s, (sub, _) in STREAMS.items():
        cfg = c.stream_info(s, domain="west")["config"]
        assert cfg["subjects"] == [f"$JETLINK.fenced.{s}"], cfg
        assert json.loads(cfg["metadata"]["jetlink.fenced_subjects"]) == [f"{sub}.>"]
    # no split brain: a publish from the west server is stored once, in east
    before = counts(c)
    assert c.js_publish("orders.after")["stream"] == "ORD_EAST"
    assert counts(c) == {**before, "ORD": (before["ORD"][0], before["ORD"][1] + 1)}
    again = ok(region("dr", "failover", "--from", "west", "--fence", "-f"))
    assert again.stdout.startswith("Nothing to fail over: the region failover of west was "
                                   "done already"), again.stdout


@pytest.mark.slow
def test_a_fenced_failover_under_publishes_stores_each_once_and_loses_none(region):
    """--fence with west up and a producer publishing to orders.> through west's server all
    along: each origin is fenced before its mirror is promoted and the mirror copies what it
    holds first, so every acknowledged publish is stored exactly once and ends in east
    (none left on west only, none stored on both sides); a publish refused in between (no
    stream takes it while west is fenced and east not yet promoted) is not stored."""
    import threading

    from live.servers import ServerAPI

    build(region)
    c = region.domains.client()
    acked: dict[str, str] = {}  # payload -> the stream that acknowledged it
    refusals: list[str] = []
    stop = threading.Event()

    def produce() -> None:
        p = ServerAPI([region.domains.hub.url])
        try:
            i = 0
            while not stop.is_set():
                body = f"live-{i}"
                i += 1
                try:
                    ack = p.js_publish("orders.live", body.encode())
                except Exception as err:  # noqa: BLE001 - no responders: nothing stored
                    refusals.append(f"{body}: {type(err).__name__}")
                    continue
                if "stream" in ack:
                    acked[body] = ack["stream"]
        finally:
            p.close()

    t = threading.Thread(target=produce)
    t.start()
    try:
        wait_until(lambda: len(acked) >= 20, message="the producer's first 20 publishes")
        rep = doc(region("dr", "failover", "--from", "west", "--fence", "-f", "-j"))
        n = len(acked)
        wait_until(lambda: len(acked) >= n + 20, message="20 publishes after the failover")
    finally:
        stop.set()
        t.join(timeout=30)
    assert rep["complete"] is True and rep["failed"] == [], rep
    ord_ = next(o for o in rep["objects"] if o["name"] == "ORD_EAST")
    assert ord_["detail"] == "origin ORD@west fenced first", ord_
    assert ord_["result"]["origin_pending"] == 0, ord_["result"]
    west = [m[2].decode() for m in contents(c, "ORD", "west") if m[2].startswith(b"live-")]
    east = [m[2].decode() for m in contents(c, "ORD_EAST", "east")
            if m[2].startswith(b"live-")]
    assert len(east) == len(set(east)), "a publish stored twice in east"
    assert set(west) <= set(east), f"left on west only: {sorted(set(west) - set(east))[:5]}"
    assert {b for b, s in acked.items() if s == "ORD"} == set(west)
    assert set(acked) <= set(east), f"acked, not in east: {sorted(set(acked) - set(east))[:5]}"
    # (a publish whose answer was lost, a timeout, may be stored: never one refused with
    # no responders)
    unanswered = {r.split(":")[0] for r in refusals if "NoResponders" not in r}
    assert set(east) - set(acked) <= unanswered, sorted(set(east) - set(acked))[:5]
    assert set(acked.values()) == {"ORD", "ORD_EAST"}, set(acked.values())


def test_a_region_asked_of_a_server_without_mirrors_says_so(region):
    """The likely mistake behind it (the old region's server given to -s, or a domain with
    nothing mirrored): said, not only that no domain has that name; nothing changed."""
    for verb in ("failover", "failback", "fence"):
        r = region("dr", verb, "--from", "west", "--dry-run")
        what = "mirrors or failed-over streams" if verb == "fence" else "mirrors"
        assert (r.exit_code, r.stderr) == (2, (
            f"jetlink: error: --from west: no JetStream domain an origin of this server's "
            f"{what} is in is named west; the server holds no such object: is -s the server "
            "of the side that takes over (or --js-domain its domain)?\n")), verb


@pytest.mark.slow
def test_a_switch_stopped_after_promote_origin_answers_a_publish_once(region, tmp_path):
    """The switch of ORD_EAST paused right after west's ORD took orders.> again (the
    documented JETLINK_FAILBACK_PAUSE seam), east's ORD_EAST sealed: a publish from the
    east server gets west's answer alone and is stored once (a sealed ORD_EAST still
    capturing orders.> answered "sealed" first while west stored it through the leafnode).
    dr check says finish the switch (never a split brain, never fence); killed there and run
    again, the switch finishes with the message once on each side."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    d = region.domains
    build(region)
    d.hub.kill()
    try:
        ok(region("stream", "failover", "ORD_EAST", "-f"))
    finally:
        d.hub.restart()
        d.wait_ready()
    ok(region("dr", "fence", "--from", "west", "-f"))
    ok(region("stream", "failback", "ORD_EAST", "--tail", f"parquet:{tmp_path / 't'}", "-f"))
    jetlink = str(Path(sys.executable).with_name("jetlink"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "JETLINK_"))}
    env["JETLINK_FAILBACK_PAUSE"] = "promote-origin"
    proc = subprocess.Popen([jetlink, "--server", d.leaf.url, "stream", "failback", "ORD_EAST",
                             "--switch", "-f"], stderr=subprocess.PIPE, text=True, env=env,
                            stdout=subprocess.DEVNULL)
    try:
        assert proc.stderr is not None
        while (line := proc.stderr.readline()) and line.strip() != "failback step: " \
                "promote-origin":
            pass
        assert line, proc.communicate(timeout=30)
        c, leaf = d.client(), d.leaf.client()
        before = c.stream_info("ORD", domain="west")["state"]["last_seq"]
        wait_until(lambda: refused(leaf, "orders.probe") is None,
                   message="a publish from the east server taken once west took orders.>")
        ack = leaf.js_publish("orders.probe2", b"p")
        assert (ack.get("stream"), ack.get("domain"), "error" in ack) == ("ORD", "west",
                                                                          False), ack
        msgs = c.stream_info("ORD", domain="west")["state"]["last_seq"] - before
        assert msgs == 2, msgs  # the probe (published until taken) and probe2, each once
        r = region("dr", "check", "ORD_EAST")
        assert r.exit_code == 2 and "Failback switch of ORD_EAST stopped half-way" in \
            r.stdout and "Split brain" not in r.stdout, r.stdout
    finally:  # killed there, the run paused after promote-origin
        proc.kill()
        proc.communicate(timeout=30)
    rep = doc(region("stream", "failback", "ORD_EAST", "--switch", "-f", "-j"))
    assert rep["state"] == "switched", rep
    last = c.stream_info("ORD", domain="west")["state"]["last_seq"]
    wait_until(lambda: c.stream_info("ORD_EAST", domain="east")["state"]["last_seq"] == last,
               message="ORD_EAST mirrors ORD again")
    assert contents(c, "ORD", "west") == contents(c, "ORD_EAST", "east")
    assert [s for _q, s, _d in contents(c, "ORD", "west")].count("orders.probe2") == 1
