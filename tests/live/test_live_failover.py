"""Promote / fail over mirrors on real nats-servers, with the origin's consumers placed.

Two JetStream domains joined by a leafnode (the ``live_domains`` fixture): west (the hub)
holds the origin ORDERS, east (the leaf) its mirror ORDERS_EAST (``external.api =
$JS.west.API``). jetlink talks to east, as an operator in the surviving region would.
"""

from __future__ import annotations

import json

import pytest
from helpers import runner

from jetlink.cli.main import app
from live.clihelp import doc, ok
from live.servers import wait_until


@pytest.fixture
def east(live_domains, monkeypatch):
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)
    d = live_domains

    def run(*args):
        return runner.invoke(app, ["--server", d.leaf.url, *args], prog_name="jetlink")

    run.domains = d
    return run


def _setup(d, *, msgs=50, mirror_filter=None, extra_us=0):
    """ORDERS on west (orders.>), ``msgs`` messages on orders.eu (then ``extra_us`` on
    orders.us); ORDERS_EAST on east mirroring it (``mirror_filter``), caught up."""
    c = d.client()
    c.stream_create({"name": "ORDERS", "subjects": ["orders.>"], "storage": "memory"},
                    domain="west")
    for i in range(msgs):
        c.js_publish("orders.eu", b"m%d" % (i + 1))
    for i in range(extra_us):
        c.js_publish("orders.us", b"u%d" % (i + 1))
    mirror = {"name": "ORDERS", "external": {"api": "$JS.west.API"}}
    if mirror_filter:
        mirror["filter_subject"] = mirror_filter
    c.stream_create({"name": "ORDERS_EAST", "mirror": mirror, "storage": "memory"},
                    domain="east")
    want = msgs if mirror_filter else msgs + extra_us
    wait_until(lambda: c.stream_info("ORDERS_EAST", domain="east")["state"]["last_seq"]
               >= want, message="the mirror caught up")
    return c


def _consumer(c, name, ack_upto, *, domain="west", stream="ORDERS", extra=None):
    """A durable pull consumer acknowledging every message up to stream seq ``ack_upto``."""
    cfg = {"durable_name": name, "ack_policy": "explicit", **(extra or {})}
    c.api(f"CONSUMER.CREATE.{stream}.{name}", {"stream_name": stream, "config": cfg},
          domain=domain)
    got = 0
    while got < ack_upto:
        batch = min(ack_upto - got, 100)
        msgs = c.fetch_ack(stream, name, batch, domain=domain)
        assert msgs, "nothing to fetch"
        got += msgs
    info = c.api(f"CONSUMER.INFO.{stream}.{name}", domain=domain)
    assert info["ack_floor"]["stream_seq"] == ack_upto, info
    return info


def test_promote_places_the_origin_consumers(east):
    d = east.domains
    c = _setup(d)
    _consumer(c, "billing", 30)
    _consumer(c, "shipping", 10, extra={"filter_subject": "orders.eu",
                                        "description": "ships"})
    # the dry run: the plan, nothing changed
    plan = doc(east("stream", "promote", "ORDERS_EAST", "--dry-run", "-j"))
    assert plan["dry_run"] is True and plan["lag"] == 0 and plan["origin"] == {
        "stream": "ORDERS", "domain": "west", "reachable": True}
    assert plan["cluster"] == "east" and plan["positions"] == {"source": "origin"}
    assert [(p["consumer"], p["ack_floor"], p["start_seq"], p["status"])
            for p in plan["consumers"]] == [("billing", 30, 31, "planned"),
                                            ("shipping", 10, 11, "planned")]
    assert "mirror" in c.stream_info("ORDERS_EAST", domain="east")["config"]
    rep = doc(east("stream", "promote", "ORDERS_EAST", "-f", "-j"))
    assert rep["complete"] is True and rep["clamps"] == []
    assert [(p["consumer"], p["start_seq"], p["status"]) for p in rep["consumers"]] == [
        ("billing", 31, "created"), ("shipping", 11, "created")]
    info = c.stream_info("ORDERS_EAST", domain="east")
    assert "mirror" not in info["config"] and info["config"]["subjects"] == ["orders.>"]
    ship = c.api("CONSUMER.INFO.ORDERS_EAST.shipping", domain="east")["config"]
    assert ship["filter_subject"] == "orders.eu" and ship["description"] == "ships"
    assert ship["deliver_policy"] == "by_start_sequence" and ship["opt_start_seq"] == 11
    # the consumers resume on east at the right messages
    assert c.fetch_seqs("ORDERS_EAST", "billing", 1, domain="east") == [31]
    assert c.fetch_seqs("ORDERS_EAST", "shipping", 1, domain="east") == [11]


def test_promote_refused_while_the_mirror_lags(east):
    d = east.domains
    c = _setup(d, msgs=5)
    # a mirror at its limits with discard new cannot copy more: it lags behind the origin
    c.api("STREAM.DELETE.ORDERS_EAST", domain="east")
    c.stream_create({"name": "ORDERS_EAST", "storage": "memory", "max_msgs": 5,
                     "discard": "new", "mirror": {
                         "name": "ORDERS", "external": {"api": "$JS.west.API"}}},
                    domain="east")
    wait_until(lambda: c.stream_info("ORDERS_EAST", domain="east")["state"]["last_seq"] == 5)
    for _ in range(3):
        c.js_publish("orders.eu", b"late")
    res = east("stream", "promote", "ORDERS_EAST", "-f", "-j")
    assert res.exit_code == 1, res.stdout
    err = json.loads(res.stdout)["error"]
    assert err["description"] == (
        "mirror ORDERS_EAST is 3 messages behind its origin ORDERS (domain west, last "
        "sequence 8; mirror at 5): its own limits (discard new) refuse what it reads, which "
        "it does not read again, so waiting will not catch it up: fail over instead "
        "(jetlink stream failover ORDERS_EAST)")  # the server's mirror: lag 0, no error
    assert "mirror" in c.stream_info("ORDERS_EAST", domain="east")["config"]
    plan = doc(east("stream", "failover", "ORDERS_EAST", "--dry-run", "-j"))
    assert (plan["origin_pending"], plan["forced"], plan["origin_last_seq"]) == (3, True, 8)
    # "lag" is the server's own mirror.lag, the number stream info shows
    info = doc(east("stream", "info", "ORDERS_EAST", "-j"))
    assert plan["lag"] == info["mirror"]["lag"]
    rep = doc(east("stream", "failover", "ORDERS_EAST", "-f", "-j"))
    assert rep["forced"] is True and rep["mirror_last_seq"] == 5
    assert "mirror" not in c.stream_info("ORDERS_EAST", domain="east")["config"]


def test_clamp_when_the_ack_floor_is_beyond_the_mirror(east):
    d = east.domains
    # the mirror copies orders.eu only (seqs 1..20); the origin also has orders.us 21..30
    c = _setup(d, msgs=20, mirror_filter="orders.eu", extra_us=10)
    assert c.stream_info("ORDERS_EAST", domain="east")["state"]["last_seq"] == 20
    _consumer(c, "audit", 28)
    _consumer(c, "slow", 5)
    out = ok(east("stream", "failover", "ORDERS_EAST", "-f"))
    assert "audit: ack floor 28 on the origin, starts at 21, clamped (created)" in out.stdout
    assert "ORDERS_EAST > audit: from 28 to 20" in out.stdout
    rep = doc(east("stream", "failover", "ORDERS_EAST", "-f", "-j"))  # again: nothing to do
    assert (rep["resumed"], rep["already_done"], rep["consumers"]) == (False, True, [])
    assert c.api("CONSUMER.INFO.ORDERS_EAST.audit", domain="east")["config"][
        "opt_start_seq"] == 21
    c.js_publish("orders.eu", b"after")  # the first message after the promotion
    assert c.fetch_seqs("ORDERS_EAST", "audit", 1, domain="east") == [21]
    assert c.fetch_seqs("ORDERS_EAST", "slow", 1, domain="east") == [6]


def test_failover_after_west_is_killed_uses_synced_positions(east):
    d = east.domains
    c = _setup(d, msgs=40)
    _consumer(c, "billing", 25)
    synced = doc(east("positions", "sync", "-j"))
    assert synced["mirrors"][0]["status"] == "synced" and synced["mirrors"][0][
        "consumers"] == 1
    kept = doc(east("positions", "ls", "-j"))["positions"]
    assert [(r["mirror"], r["origin"], r["origin_last_seq"]) for r in kept] == [
        ("ORDERS_EAST", {"stream": "ORDERS", "domain": "west"}, 40)]
    assert kept[0]["consumers"][0]["ack_floor"] == 25
    d.hub.kill()  # the outage: a real dead process
    try:
        r = east("positions", "sync", "-j")  # skipped: exit 1, the report printed all the same
        assert r.exit_code == 1, (r.stdout, r.stderr)
        again = json.loads(r.stdout)["mirrors"][0]
        assert again["status"] == "skipped" and again["last_synced"] == kept[0]["synced"]
        plan = ok(east("stream", "failover", "ORDERS_EAST", "--dry-run")).stdout
        assert "Origin Last Sequence: 40 (last known)" in plan
        assert f"Consumer Positions: as synced to this side at {kept[0]['synced']} (" in plan
        assert "billing: ack floor 25 on the origin, starts at 26" in plan
        rep = doc(east("stream", "failover", "ORDERS_EAST", "-f", "-j"))
        assert rep["origin"]["reachable"] is False and rep["origin_last_seq"] == 40
        assert rep["positions"]["source"] == "synced" and rep["positions"]["age_ms"] >= 0
        assert [(p["consumer"], p["start_seq"], p["status"]) for p in rep["consumers"]] == [
            ("billing", 26, "created")]
        lc = d.leaf.client()
        assert lc.fetch_seqs("ORDERS_EAST", "billing", 1) == [26]
    finally:
        d.hub.restart()
        d.wait_ready()  # the leaf joined again


def test_refusals_change_nothing(east):
    d = east.domains
    c = _setup(d, msgs=3)
    c.stream_create({"name": "OTHER", "subjects": ["other.>"]}, domain="east")
    res = east("stream", "promote", "OTHER", "-f")
    assert res.exit_code == 1 and "stream OTHER is not a mirror" in res.stderr
    res = east("stream", "promote", "NOPE", "-f", "-j")
    assert res.exit_code == 1 and json.loads(res.stdout)["error"]["err_code"] == 10059
    res = east("stream", "promote", "ORDERS_EAST", "--subjects", "other.a", "-f", "-j")
    assert res.exit_code == 1 and json.loads(res.stdout)["error"]["err_code"] == 10065
    assert "mirror" in c.stream_info("ORDERS_EAST", domain="east")["config"]
    res = east("stream", "promote", "ORDERS_EAST")  # no terminal, no -f
    assert res.exit_code != 0 and "mirror" in c.stream_info(
        "ORDERS_EAST", domain="east")["config"]


def test_kv_promote_and_failover(east):
    d = east.domains

    def west(*args):
        return runner.invoke(app, ["--server", d.hub.url, *args], prog_name="jetlink")

    ok(west("kv", "add", "CONFIG", "--history", "3"))
    ok(west("kv", "put", "CONFIG", "a", "1"))
    ok(west("kv", "put", "CONFIG", "a", "2"))
    ok(east("kv", "add", "KV_CONFIG", "--mirror", "CONFIG", "--mirror-domain", "west"))
    c = d.client()
    wait_until(lambda: c.stream_info("KV_CONFIG", domain="east")["state"]["last_seq"] == 2)
    res = east("kv", "put", "CONFIG", "b", "x")
    assert res.exit_code == 1  # a mirror is read-only
    # a mirror under another name cannot become the bucket
    ok(east("kv", "add", "BACKUP", "--mirror", "CONFIG", "--mirror-domain", "west"))
    res = east("kv", "promote", "BACKUP", "-f")
    assert res.exit_code == 1 and "can only be promoted as a stream named KV_CONFIG" in \
        res.stderr
    rep = doc(east("kv", "promote", "CONFIG", "-f", "-j"))
    assert rep["stream"] == "KV_CONFIG" and rep["subjects"] == ["$KV.CONFIG.>"]
    cfg = c.stream_info("KV_CONFIG", domain="east")["config"]
    assert "mirror" not in cfg and cfg["allow_direct"] is True
    assert doc(east("kv", "put", "CONFIG", "b", "x", "-j"))["revision"] == 3
    got = doc(east("kv", "get", "CONFIG", "a", "-j"))
    assert (got["revision"], got["value"]) == (2, "Mg==")
    res = east("kv", "promote", "NOPE", "-f", "-j")
    assert json.loads(res.stdout)["error"]["err_code"] == 10059


def test_server_killed_during_failover_is_reported_partial_and_the_rerun_finishes(
        east, monkeypatch):
    from jetlink.core.live.jetstream import LiveJetStream

    d = east.domains
    c = d.client()
    c.stream_create({"name": "ORDERS", "subjects": ["orders.>"]}, domain="west")
    for i in range(12):
        c.js_publish("orders.eu", b"m%d" % i)
    c.stream_create({"name": "ORDERS_EAST", "mirror": {
        "name": "ORDERS", "external": {"api": "$JS.west.API"}}}, domain="east")
    wait_until(lambda: c.stream_info("ORDERS_EAST", domain="east")["state"]["last_seq"] == 12)
    for i in range(6):
        _consumer(c, f"c{i}", i + 1)
    real = LiveJetStream.add_consumer
    calls = []

    def add_then_die(self, stream, config, **kw):
        if stream == "ORDERS_EAST" and len(calls) == 2:
            d.leaf.kill()  # the server placing the consumers dies mid-way
        calls.append(stream)
        return real(self, stream, config, **kw)

    monkeypatch.setattr(LiveJetStream, "add_consumer", add_then_die)
    res = east("stream", "failover", "ORDERS_EAST", "-f", "-j")
    monkeypatch.setattr(LiveJetStream, "add_consumer", real)
    try:
        assert res.exit_code == 1
        rep = json.loads(res.stdout)
        assert rep["complete"] is False and "mirror" not in (rep.get("error") or {})
        states = [p["status"] for p in rep["consumers"]]
        assert states[:2] == ["created", "created"] and states[2] == "failed"
        assert set(states[3:]) == {"not tried"}
        assert "Run the same command again once the server answers" in rep["error"][
            "description"]
    finally:
        d.leaf.restart()
        d.wait_ready()
    again = doc(east("stream", "failover", "ORDERS_EAST", "-f", "-j"))
    assert again["resumed"] is True and again["complete"] is True
    assert [p["status"] for p in again["consumers"]] == ["exists"] * 2 + ["created"] * 4
    assert [p["start_seq"] for p in again["consumers"]] == [2, 3, 4, 5, 6, 7]


def test_a_failover_rerun_applies_the_subjects_given(east):
    """West killed, east fails over with the origin's subjects as last synced; a re-run
    given --subjects changes them on the server as stream edit would and says so (it never
    exits 0 with the flag dropped)."""
    d = east.domains
    c = _setup(d, msgs=5)
    _consumer(c, "billing", 3)
    ok(east("positions", "sync"))
    d.hub.kill()
    try:
        first = doc(east("stream", "failover", "ORDERS_EAST", "-f", "-j"))
        assert (first["subjects"], first["subjects_from"]) == (["orders.>"], "positions")
        rep = doc(east("stream", "failover", "ORDERS_EAST", "--subjects", "east.orders.>",
                       "-f", "-j"))
        assert rep["subjects"] == ["east.orders.>"]  # the flag is applied, not dropped
        assert (rep["subjects_from"], rep["subjects_before"]) == ("given", ["orders.>"])
        assert (rep["resumed"], rep["already_done"]) == (False, True)
        assert first["promoted_at"] is None and rep["promoted_at"].endswith("Z")
        lc = d.leaf.client()
        info = lc.api("STREAM.INFO.ORDERS_EAST")
        assert info["config"]["subjects"] == ["east.orders.>"]
        out = ok(east("stream", "failover", "ORDERS_EAST", "--subjects", "orders.>", "-f"))
        assert out.stdout.splitlines()[0].endswith(
            ": its subjects were changed from east.orders.> to orders.>")
        assert lc.api("STREAM.INFO.ORDERS_EAST")["config"]["subjects"] == ["orders.>"]
        # billing stays where the first run placed it
        assert lc.fetch_seqs("ORDERS_EAST", "billing", 1) == [4]
    finally:
        d.hub.restart()
        d.wait_ready()


def test_positions_sync_follow_connects_again_after_the_server_restarts(east, monkeypatch):
    """A follow loop's connection never reconnects by itself: after the addressed server
    restarted, the next pass connects anew and the loop says it follows again."""
    d = east.domains
    c = d.client()
    c.stream_create({"name": "PAY", "subjects": ["pay.>"], "storage": "memory"},
                    domain="west")
    c.js_publish("pay.x", b"1")
    c.stream_create({"name": "PAY_EAST", "mirror": {"name": "PAY",
                                                    "external": {"api": "$JS.west.API"}},
                     "storage": "file"}, domain="east")
    wait_until(lambda: c.stream_info("PAY_EAST", domain="east")["state"]["last_seq"] >= 1,
               message="the mirror caught up")
    _consumer(c, "billing", 1, stream="PAY")
    restarted = []

    def pause(seconds):
        if not restarted:  # between the first and the second pass: east goes down and back
            d.leaf.restart()
            d.wait_ready()
            restarted.append(True)

    monkeypatch.setattr("jetlink.cli.positions.sleep", pause)
    try:
        r = east("positions", "sync", "--follow", "--count", "3", "--interval", "1s",
                 "-j", "PAY_EAST")
        assert r.exit_code == 0, (r.stdout, r.stderr)
        lines = [json.loads(x) for x in r.stdout.splitlines()]
        assert [m["status"] for line in lines for m in line["mirrors"]] == ["synced", "synced"]
        assert "positions sync failed: " in r.stderr and "lost the connection" in r.stderr
        assert r.stderr.rstrip().endswith("the last pass succeeded: following again")
    finally:
        for name in ("PAY_EAST",):
            c.api(f"STREAM.DELETE.{name}", {}, domain="east")
        c.api("STREAM.DELETE.PAY", {}, domain="west")
