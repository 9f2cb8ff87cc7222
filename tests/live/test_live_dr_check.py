"""`jetlink dr check` on real nats-servers: two JetStream domains joined by a leafnode (west
holds ORDERS, east its mirror ORDERS_EAST), checked from east; then west is killed: the
mirror's lag is the one last reported, marked so in dr check and server check."""

from __future__ import annotations

import json
import time

from helpers import wait_until
from prometheus_client.parser import text_string_to_metric_families

from live.clihelp import ok
from live.test_live_failover import _consumer, _setup, east  # noqa: F401 - the fixture


def test_readiness_before_and_after_the_origin_is_killed(east):  # noqa: F811
    d = east.domains
    c = _setup(d, msgs=40)
    _consumer(c, "billing", 25)
    ok(east("positions", "sync"))
    _consumer(c, "late", 5)  # made after the sync: no synced position
    before = json.loads(east("dr", "check", "-j").stdout)
    [m] = before["mirrors"]
    assert (before["status"], m["check_name"], m["kind"], m["cluster"]) == (
        "WARNING", "ORDERS_EAST", "stream", "east")
    assert m["warning"] == ["1 consumer of the origin without a synced position: late"]
    assert "Origin ORDERS in domain west answers" in m["ok"]
    assert "Subjects orders.> (from origin)" in m["ok"]
    facts = m["readiness"]
    assert facts["recovery_point"]["messages"] == 0
    assert facts["recovery_point"]["origin_last_seq"] == 40
    assert facts["positions"]["unsynced"] == ["late"]
    d.hub.kill()  # the outage: a real dead process
    try:
        time.sleep(1.5)
        res = east("dr", "check", "--seen-critical", "1s", "--positions-critical", "1h")
        assert res.exit_code == 2, res.stdout
        line = res.stdout
        assert line.startswith("CRITICAL dr Crit:ORDERS_EAST: Last seen ")
        assert "Warn:ORDERS_EAST: Origin ORDERS in domain west does not answer" in line
        # the lag is the one last reported: marked with its age, never OK beside that
        assert "Warn:ORDERS_EAST: Lag 0 (last reported " in line
        assert "OK:ORDERS_EAST: Lag" not in line
        [m] = json.loads(east("dr", "check", "-j").stdout)["mirrors"]
        rp = m["readiness"]["recovery_point"]
        assert (rp["messages"], rp["stale"], rp["origin_pending"]) == (0, True, None)
        assert m["perf_data"][0]["stale"] is True
        assert "OK:ORDERS_EAST: Subjects orders.> (from positions)" in line
        assert "OK:ORDERS_EAST: Positions synced " in line
        prom = ok(east("dr", "check", "--seen-critical", "1s", "--format", "prometheus"))
        families = {f.name: f for f in text_string_to_metric_families(prom.stdout)}
        [status] = families["jetlink_dr_status_code"].samples
        assert (status.labels, status.value) == (
            {"item": "ORDERS_EAST", "status": "CRITICAL"}, 2)
        assert families["jetlink_dr_active"].samples[0].value >= 1
        # server check asks no origin: the server's own mirror info says the lag is old once
        # it heard nothing for its stalled interval (10 s) or could not set up its consumer
        check = ("server", "check", "stream", "--stream", "ORDERS_EAST", "--lag-critical",
                 "100")
        seen: list = []

        def stale():
            seen.append(res := east(*check))
            return res if "(last reported " in res.stdout else None

        res = wait_until(stale, interval=0.5,
                         message=lambda: f"the lag marked stale (last: {seen[-1].stdout})")
        assert res.exit_code == 0
        assert "OK:Mirror ORDERS: Lag 0 (last reported " in res.stdout
    finally:
        d.hub.restart()
        d.wait_ready()


def test_the_recovery_point_in_seconds_on_real_servers(east):  # noqa: F811
    """The age of the oldest message a failover would lose, on two real nats-servers: 0 s
    for a mirror caught up; for a mirror held back (max_msgs 10 with discard new: it stalls
    at 10 while the origin runs ahead, nats-server's own behaviour) the origin's timestamp
    of its message 11, read through $JS.west.API; once west is killed, the time since the
    mirror last heard from it."""
    from jetlink.core.clock import parse_rfc3339_nano

    d = east.domains
    c = _setup(d, msgs=10)
    c.stream_create({"name": "HELD", "storage": "memory", "max_msgs": 10, "discard": "new",
                     "mirror": {"name": "ORDERS", "external": {"api": "$JS.west.API"}}},
                    domain="east")
    wait_until(lambda: c.stream_info("HELD", domain="east")["state"]["last_seq"] >= 10,
               message="HELD copied the first 10")
    res = east("dr", "check", "-j")
    caught_up = {m["check_name"]: m["readiness"]["recovery_point"]
                 for m in json.loads(res.stdout)["mirrors"]}
    for name in ("ORDERS_EAST", "HELD"):
        rp = caught_up[name]
        assert (rp["messages"], rp["seconds"], rp["seconds_from"], rp["oldest"]) == (
            0, 0, "origin", None), (name, rp)
    for i in range(5):
        c.js_publish("orders.eu", b"late%d" % i)
    wait_until(lambda: c.stream_info("ORDERS_EAST", domain="east")["state"]["last_seq"]
               >= 15, message="ORDERS_EAST copied the 5 more (the leafnode carries them)")
    assert c.stream_info("HELD", domain="east")["state"]["last_seq"] == 10
    eleventh = parse_rfc3339_nano(
        c.api("STREAM.MSG.GET.ORDERS", {"seq": 11}, domain="west")["message"]["time"])
    before = time.time_ns()
    res = east("dr", "check", "HELD", "--rpo-warn", "1h", "-j")
    after = time.time_ns()
    [m] = json.loads(res.stdout)["mirrors"]
    rp = m["readiness"]["recovery_point"]
    assert (rp["messages"], rp["origin_pending"], rp["seconds_from"], rp["oldest"]["seq"]) == (
        5, 5, "origin", 11), rp
    assert parse_rfc3339_nano(rp["oldest"]["time"]) == eleventh
    # the age is the check's now minus that timestamp: between the two readings around it
    assert (before - eleventh) / 1e9 <= rp["seconds"] <= (after - eleventh) / 1e9, (
        before, after, eleventh, rp)
    assert [p for p in m["perf_data"] if p["name"] == "recovery_point_seconds"] == [
        {"name": "recovery_point_seconds", "value": rp["seconds"], "warning": 3600,
         "critical": 0, "unit": "s"}]
    assert any(o.startswith("Recovery point 5 messages, ") for o in m["ok"]), m["ok"]
    prom = ok(east("dr", "check", "--format", "prometheus"))
    families = {f.name: f for f in text_string_to_metric_families(prom.stdout)}
    held = {s.labels["item"]: s.value for s in
            families["jetlink_dr_recovery_point_seconds"].samples}
    assert held["ORDERS_EAST"] == 0 and held["HELD"] >= rp["seconds"], held
    [worst] = families["jetlink_dr_worst_recovery_point_messages"].samples
    assert worst.value == 5
    d.hub.kill()  # the outage: the origin is silent
    try:
        res = east("dr", "check", "HELD", "-j")
        [m] = json.loads(res.stdout)["mirrors"]
        rp = m["readiness"]["recovery_point"]
        assert (rp["seconds_from"], rp["oldest"], rp["stale"]) == ("silence", None, True), rp
        # the time since the mirror last heard from west (its StreamInfo mirror.active)
        assert rp["last_seen_ms"] is not None and \
            abs(rp["seconds"] * 1000 - rp["last_seen_ms"]) < 1, rp
        assert any(o.startswith("Recovery point ") and "since the origin was last heard" in o
                   for o in m["ok"]), m
    finally:
        d.hub.restart()
        d.wait_ready()
