"""`jetlink dr check` on real nats-servers: two JetStream domains joined by a leafnode (west
holds ORDERS, east its mirror ORDERS_EAST), checked from east; then west is killed: the
mirror's lag is the one last reported, marked so in dr check and server check."""

from __future__ import annotations

import json
import time

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
        deadline = time.monotonic() + 90
        while "(last reported " not in (res := east(*check)).stdout:
            assert res.exit_code == 0, res.stdout
            assert time.monotonic() < deadline, f"never marked stale: {res.stdout}"
            time.sleep(0.5)
        assert res.exit_code == 0
        assert "OK:Mirror ORDERS: Lag 0 (last reported " in res.stdout
    finally:
        d.hub.restart()
        d.wait_ready()
