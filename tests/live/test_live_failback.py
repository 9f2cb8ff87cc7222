"""Failback on real nats-servers: two JetStream domains joined by a leafnode (west the hub,
east the leaf). jetlink talks to east, the side the failover promoted.

The scenario: west's ORDERS (orders.>, 10 messages; billing acked to 6, shipping to 2),
east's mirror ORDERS_EAST. East fails over (its subjects east.orders.>: a leafnode shares
the account's subjects, so a publish on the hub would otherwise be stored by both domains),
takes 4 messages (11..14), billing acks up to 12 there, and east gets a consumer of its own
(audit, acked to 3). West takes 3 messages the mirror never copied (the divergent tail,
11..13, with headers). Then failback, the switch, and the original topology with every
consumer in place; and a failback killed with SIGKILL part-way, finished by a re-run.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from helpers import runner

from jetlink.cli.main import app
from jetlink.core.clock import parse_rfc3339_nano
from live.clihelp import doc
from live.servers import wait_until

JETLINK = str(Path(sys.executable).with_name("jetlink"))


@pytest.fixture
def east(live_domains, monkeypatch):
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)
    d = live_domains

    def run(*args):
        return runner.invoke(app, ["--server", d.leaf.url, *args], prog_name="jetlink")

    run.domains = d
    return run


def _ack(c, stream, name, upto, *, domain):
    c.api(f"CONSUMER.CREATE.{stream}.{name}", {"stream_name": stream, "config": {
        "durable_name": name, "ack_policy": "explicit"}}, domain=domain)
    got = 0
    while got < upto:
        n = c.fetch_ack(stream, name, upto - got, domain=domain)
        assert n, "nothing to fetch"
        got += n


def _scenario(east):
    d = east.domains
    c = d.client()
    c.stream_create({"name": "ORDERS", "subjects": ["orders.>"], "description": "orders"},
                    domain="west")
    for i in range(10):
        c.js_publish(f"orders.{('eu', 'us')[i % 2]}", b"m%d" % (i + 1))
    _ack(c, "ORDERS", "billing", 6, domain="west")
    _ack(c, "ORDERS", "shipping", 2, domain="west")
    c.stream_create({"name": "ORDERS_EAST", "mirror": {
        "name": "ORDERS", "external": {"api": "$JS.west.API"}}}, domain="east")
    wait_until(lambda: c.stream_info("ORDERS_EAST", domain="east")["state"]["last_seq"] == 10,
               message="the mirror caught up")
    rep = doc(east("stream", "failover", "ORDERS_EAST", "--subjects", "east.orders.>", "-f",
                   "-j"))
    assert [(p["consumer"], p["start_seq"]) for p in rep["consumers"]] == [
        ("billing", 7), ("shipping", 3)]
    for i in range(4):
        assert c.js_publish("east.orders.eu", b"east%d" % (i + 1))["seq"] == 11 + i
    assert c.fetch_ack("ORDERS_EAST", "billing", 6, domain="east") == 6  # 7..12
    _ack(c, "ORDERS_EAST", "audit", 3, domain="east")
    for i in range(3):
        ack = c.js_publish("orders.us", b"tail%d" % (i + 1), headers={"Tail": str(i)})
        assert (ack["stream"], ack["seq"]) == ("ORDERS", 11 + i)
    tail = []
    for seq in (11, 12, 13):
        m = c.api("STREAM.MSG.GET.ORDERS", {"seq": seq}, domain="west")["message"]
        tail.append((seq, m["subject"], base64.b64decode(m["hdrs"]),
                     base64.b64decode(m["data"]), parse_rfc3339_nano(m["time"])))
    return c, tail


def _state(c):
    out = {}
    for domain in ("west", "east"):
        for name in c.api("STREAM.NAMES", {}, domain=domain).get("streams") or []:
            info = c.api(f"STREAM.INFO.{name}", domain=domain)
            cons = c.api(f"CONSUMER.LIST.{name}", {}, domain=domain).get("consumers") or []
            out[(domain, name)] = (
                info["config"], info["state"]["messages"], info["state"]["last_seq"],
                sorted((x["name"], x["ack_floor"]["stream_seq"], x["delivered"]["stream_seq"])
                       for x in cons))
    return out


def _rows(path):
    table = pq.read_table(path, columns=["seq", "subject", "headers", "data", "ts"])
    return sorted(zip(*(table.column(x).to_pylist()
                        for x in ("seq", "subject", "headers", "data", "ts")), strict=True))


def _check_round_trip(c, tail_path, tail):
    assert _rows(tail_path) == tail  # byte for byte, times to the nanosecond
    o = c.stream_info("ORDERS", domain="west")
    assert "mirror" not in o["config"] and o["config"]["subjects"] == ["orders.>"]
    assert o["config"]["description"] == "orders" and not o["config"].get("sealed")
    assert "jetlink.promoted_mirror" not in (o["config"].get("metadata") or {})
    assert o["state"]["last_seq"] == 14
    wait_until(lambda: c.stream_info("ORDERS_EAST", domain="east")["state"]["last_seq"] == 14,
               message="east's mirror caught up")
    m = c.stream_info("ORDERS_EAST", domain="east")["config"]
    assert m["mirror"]["name"] == "ORDERS" and m["mirror"]["external"]["api"] == "$JS.west.API"
    names = lambda s, dom: sorted(  # noqa: E731
        x["name"] for x in c.api(f"CONSUMER.LIST.{s}", {}, domain=dom)["consumers"] or [])
    assert names("ORDERS", "west") == ["billing", "shipping"]
    assert names("ORDERS_EAST", "east") == ["audit"]
    assert c.fetch_seqs("ORDERS", "billing", 2, domain="west") == [13, 14]
    assert c.fetch_seqs("ORDERS", "shipping", 1, domain="west") == [3]
    assert c.fetch_seqs("ORDERS_EAST", "audit", 1, domain="east") == [4]
    # west takes the producers' messages again, and east mirrors them
    assert c.js_publish("orders.eu", b"after")["seq"] == 15
    wait_until(lambda: c.stream_info("ORDERS_EAST", domain="east")["state"]["last_seq"] == 15,
               message="the mirror copied the message after the switch")


@pytest.mark.slow
def test_round_trip(east, tmp_path):
    c, tail = _scenario(east)
    tail_path = str(tmp_path / "tail")
    before = _state(c)
    plan = doc(east("stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{tail_path}",
                    "--switch", "--dry-run", "-j"))
    assert _state(c) == before and not os.path.exists(tail_path)
    assert plan["origin"] == {"stream": "ORDERS", "domain": "west", "reachable": True}
    assert plan["cluster"] == "east" and plan["promoted_last_seq"] == 10
    assert (plan["tail"]["messages"], plan["tail"]["first_seq"], plan["tail"]["last_seq"],
            plan["tail"]["subjects"]) == (3, 11, 13, {"orders.us": 3})
    assert [s["step"] for s in plan["steps"]] == [
        "record", "save-tail", "compare", "record-consumers", "delete-origin", "create-mirror",
        "record-consumers", "seal", "promote-origin", "place-consumers", "delete-promoted",
        "create-mirror-back", "restore-consumers", "finish"]

    rep = doc(east("stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{tail_path}",
                   "-f", "-j"))
    assert rep["state"] == "mirroring" and rep["tail"]["verified"] is True
    assert rep["tail"]["messages"] == 3
    # nats-server keeps nothing of a stream made a mirror: every message copied, and why
    from jetlink.core.dr.reuse import LIVE_REASON

    assert (rep["reuse"]["messages"], rep["reuse"]["upto_seq"], rep["reuse"]["reason"]) == (
        0, 0, LIVE_REASON)
    o = c.stream_info("ORDERS", domain="west")["config"]
    assert o["mirror"] == {"name": "ORDERS_EAST", "external": {"api": "$JS.east.API"}} or \
        (o["mirror"]["name"], o["mirror"]["external"]["api"]) == ("ORDERS_EAST",
                                                                   "$JS.east.API")
    wait_until(lambda: c.stream_info("ORDERS", domain="west")["state"]["last_seq"] == 14,
               message="west's mirror caught up")
    rep = doc(east("stream", "failback", "ORDERS_EAST", "--switch", "-f", "-j"))
    assert rep["state"] == "switched" and rep["complete"] is True
    assert [(p["consumer"], p["start_seq"], p["status"]) for p in rep["placed"]] == [
        ("billing", 13, "created"), ("shipping", 3, "created")]
    assert [(p["consumer"], p["start_seq"]) for p in rep["restored"]] == [("audit", 4)]
    # the positions bucket is made in west's domain and written through its API prefix
    # (a write to $KV.<bucket>.<key> from east's leaf found no stream: tried until it gave up)
    recorded = next(s for s in rep["steps"] if s["step"] == "record-consumers")
    assert recorded["detail"].endswith("positions synced to ORDERS@west's side"), recorded
    kept = c.api("STREAM.MSG.GET.KV_JETLINK_POSITIONS", {"last_by_subj":
                                                         "$KV.JETLINK_POSITIONS.ORDERS"},
                 domain="west")["message"]
    assert [x["name"] for x in json.loads(base64.b64decode(kept["data"]))["consumers"]] == [
        "audit", "billing", "shipping"]  # ORDERS_EAST's, as the switch found them
    _check_round_trip(c, tail_path, tail)


def _cli(d, *args, pause):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "JETLINK_"))}
    env["JETLINK_FAILBACK_PAUSE"] = pause  # the documented seam: it stops after that step
    return subprocess.Popen([JETLINK, "--server", d.leaf.url, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def _kill_after(proc, step, seen):
    """SIGKILL ``proc`` once it reports ``step`` done, checking ``seen()`` on the servers
    (the state that step leaves) first."""
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line, (step, proc.communicate())
            if line.strip() == f"failback step: {step}":
                break
        assert seen(), step
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL


@pytest.mark.slow
def test_killed_part_way_and_run_again(east, tmp_path):
    d = east.domains
    c, tail = _scenario(east)
    tail_path = str(tmp_path / "tail")
    args = ("stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{tail_path}", "-f",
            "-j")

    def gone(name, domain):
        return lambda: c.api(f"STREAM.INFO.{name}", domain=domain).get("error", {}).get(
            "err_code") == 10059

    # killed with west's ORDERS deleted and not yet created again as a mirror
    _kill_after(_cli(d, *args, pause="delete-origin"), "delete-origin", gone("ORDERS", "west"))
    # meanwhile dr check and dr fence name the fix: the failback again, not a silent origin
    check = east("dr", "check")
    assert check.exit_code == 1, (check.stdout, check.stderr)
    assert ("Failback of ORDERS_EAST under way: its old origin ORDERS in domain west was "
            "deleted and is not a mirror yet; run jetlink stream failback ORDERS_EAST again "
            "to finish it") in check.stdout
    fence = east("dr", "fence", "--from", "west", "-f", "-j")
    assert fence.exit_code == 0, (fence.stdout, fence.stderr)
    item = json.loads(fence.stdout)["objects"][0]
    assert (item["action"], item["detail"]) == (
        "already fenced", "its stream is gone: the failback of ORDERS_EAST is under way; run "
        "jetlink stream failback ORDERS_EAST again to finish it")
    rep = doc(east(*args))
    assert rep["resumed"] is True and rep["tail"]["messages"] == 3
    assert [s["step"] for s in rep["steps"]] == ["create-mirror", "switch"]
    wait_until(lambda: c.stream_info("ORDERS", domain="west")["state"]["last_seq"] == 14,
               message="west's mirror caught up")
    # killed with east's ORDERS_EAST deleted and not yet created again as a mirror
    _kill_after(_cli(d, *args, "--switch", pause="delete-promoted"), "delete-promoted",
                gone("ORDERS_EAST", "east"))
    rep = doc(east(*args, "--switch"))
    assert rep["state"] == "switched" and rep["resumed"] is True
    assert [s["step"] for s in rep["steps"]] == [
        "place-consumers", "create-mirror-back", "restore-consumers", "finish"]
    assert [p["status"] for p in rep["placed"]] == ["exists", "exists"]
    _check_round_trip(c, tail_path, tail)


@pytest.mark.slow
def test_a_stream_sourcing_the_old_origin_copies_nothing_twice(east, tmp_path):
    """ALL in east sources ORDERS of west. The failback deletes ORDERS and creates it again,
    and nats-server starts a source over when its origin was created again (the identity in
    Nats-Stream-Source): without the step hold-sources ALL would copy west's 10 messages
    again. With it (opt_start_seq 11, after what ALL holds and at most L = 10), ALL gets
    east's 4 outage writes and the next message once."""
    c, _tail = _scenario(east)
    c.stream_create({"name": "ALL", "subjects": ["all.>"], "sources": [
        {"name": "ORDERS", "external": {"api": "$JS.west.API"}}]}, domain="east")
    wait_until(lambda: c.stream_info("ALL", domain="east")["state"]["messages"] == 13,
               message="ALL copied west's 10 messages and its tail of 3")
    rep = doc(east("stream", "failback", "ORDERS_EAST", "--tail",
                   f"parquet:{tmp_path / 'tail'}", "--switch", "-f", "-j"))
    assert rep["state"] == "switched"
    assert [s["detail"] for s in rep["steps"] if s["step"] == "hold-sources"] == [
        "ORDERS@west is created again: its sources start after what they hold: ALL@east "
        "from sequence 11"]
    assert c.js_publish("orders.eu", b"after")["seq"] == 15

    def datas() -> list[bytes]:
        n = c.stream_info("ALL", domain="east")["state"]["last_seq"]
        return [base64.b64decode(c.api("STREAM.MSG.GET.ALL", {"seq": s}, domain="east")
                                 ["message"]["data"]) for s in range(1, n + 1)]

    wait_until(lambda: datas()[-1:] == [b"after"], timeout=120,
               message="ALL received the message after the switch")
    assert datas() == [b"m%d" % i for i in range(1, 11)] + [b"tail1", b"tail2", b"tail3"] \
        + [b"east%d" % i for i in range(1, 5)] + [b"after"]


@pytest.mark.slow
def test_messages_the_promoted_mirror_dropped_are_saved_before_west_is_deleted(east,
                                                                                 tmp_path):
    """East's mirror keeps 5 messages (max_msgs): west's 1..5 are held nowhere else. A
    nats-server stream is not made a mirror in place, so west is deleted: its 1..5 are saved
    beside the tail first (core/dr/unmatched.py), byte for byte, and counted there."""
    d = east.domains
    c = d.client()
    c.stream_create({"name": "ORDERS", "subjects": ["orders.>"]}, domain="west")
    for i in range(10):
        c.js_publish(f"orders.{('eu', 'us')[i % 2]}", b"m%d" % (i + 1),
                     headers={"N": str(i + 1)})
    c.stream_create({"name": "ORDERS_EAST", "max_msgs": 5, "mirror": {
        "name": "ORDERS", "external": {"api": "$JS.west.API"}}}, domain="east")
    wait_until(lambda: c.stream_info("ORDERS_EAST", domain="east")["state"]["first_seq"] == 6,
               message="the mirror copied and dropped west's 1..5")
    older = []
    for seq in range(1, 6):
        m = c.api("STREAM.MSG.GET.ORDERS", {"seq": seq}, domain="west")["message"]
        older.append((seq, m["subject"], base64.b64decode(m["hdrs"]),
                      base64.b64decode(m["data"]), parse_rfc3339_nano(m["time"])))
    ok = doc(east("stream", "failover", "ORDERS_EAST", "--subjects", "east.orders.>", "-f",
                  "-j"))
    assert ok["stream"] == "ORDERS_EAST"
    tail = tmp_path / "tail"
    rep = doc(east("stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{tail}", "-f",
                   "-j"))
    u = rep["unmatched"]
    assert (u["messages"], u["first_seq"], u["last_seq"], u["verified"], u["path"]) == (
        5, 1, 5, True, f"{tail}-unmatched")
    names = [s["step"] for s in rep["steps"]]
    assert names.index("save-unmatched") < names.index("delete-origin")
    assert next(s["detail"] for s in rep["steps"] if s["step"] == "delete-origin") == (
        f"ORDERS@west, 10 messages; the 5 messages not on ORDERS_EAST@east saved to "
        f"parquet:{tail}-unmatched")
    assert _rows(f"{tail}-unmatched") == older
    wait_until(lambda: c.stream_info("ORDERS", domain="west")["state"]["last_seq"] == 10,
               message="west, a mirror now, copied east's messages")
    assert c.stream_info("ORDERS", domain="west")["config"]["mirror"]["name"] == "ORDERS_EAST"


@pytest.mark.slow
def test_what_the_promoted_side_drops_while_the_run_saves_is_saved_too(east, tmp_path):
    """East's mirror keeps 4 messages (max_msgs). While the failback is between saving what
    east does not hold (west's 1..6) and deleting west, east takes 4 messages, dropping its
    copies of 7..10: the selection is made again right before west is removed, and saved
    again (1..10), so nothing west held is lost."""
    d = east.domains
    c = d.client()
    c.stream_create({"name": "LR", "subjects": ["lr.>"]}, domain="west")
    for i in range(10):
        c.js_publish(f"lr.{i + 1}", b"m%d" % (i + 1))
    c.stream_create({"name": "LR_E", "max_msgs": 4, "mirror": {
        "name": "LR", "external": {"api": "$JS.west.API"}}}, domain="east")
    wait_until(lambda: c.stream_info("LR_E", domain="east")["state"]["first_seq"] == 7,
               message="the mirror copied west and kept 7..10")
    doc(east("stream", "failover", "LR_E", "--subjects", "east.lr.>", "-f", "-j"))
    tail = tmp_path / "tail"
    resume = tmp_path / "resume"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "JETLINK_"))}
    env.update(JETLINK_FAILBACK_PAUSE="save-unmatched", JETLINK_FAILBACK_RESUME=str(resume))
    proc = subprocess.Popen([JETLINK, "--server", d.leaf.url, "stream", "failback", "LR_E",
                             "--tail", f"parquet:{tail}", "-f", "-j"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stderr is not None
        while True:
            line = proc.stderr.readline()
            assert line, proc.communicate()
            if line.strip() == "failback step: save-unmatched":
                break
        for i in range(4):  # east takes writes: its max_msgs drops its copies of 7..10
            c.js_publish(f"east.lr.{i}", b"e%d" % i)
        assert c.stream_info("LR_E", domain="east")["state"]["first_seq"] == 11
        resume.touch()
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, (out, err)
    rep = json.loads(out)
    u = rep["unmatched"]
    assert (u["messages"], u["first_seq"], u["last_seq"]) == (10, 1, 10), u
    assert [r[0] for r in _rows(f"{tail}-unmatched")] == list(range(1, 11))
    assert next(s["detail"] for s in rep["steps"] if s["step"] == "delete-origin") == (
        f"LR@west, 10 messages; the 10 messages not on LR_E@east saved to "
        f"parquet:{tail}-unmatched")
