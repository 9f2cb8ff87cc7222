"""`jetlink dashboard` with a live server in force: its JetStream domain's streams, mirrors
with the server's lag, consumers and KV; P/F act on the server."""

from __future__ import annotations

import json

from helpers import runner
from test_dashboard import cells, drive, select, settle, status, until

from jetlink.cli.main import app
from live.servers import wait_until


def _setup(d):
    c = d.client()
    c.stream_create({"name": "ORDERS", "subjects": ["orders.>"], "storage": "memory"},
                    domain="west")
    for i in range(20):
        c.js_publish("orders.new", b"o%d" % i)
    c.stream_create({"name": "ORDERS_EAST", "storage": "memory", "mirror": {
        "name": "ORDERS", "external": {"api": "$JS.west.API"}}}, domain="east")
    wait_until(lambda: c.stream_info("ORDERS_EAST", domain="east")["state"]["last_seq"] == 20)
    c.api("CONSUMER.CREATE.ORDERS.billing", {"stream_name": "ORDERS", "config": {
        "durable_name": "billing", "ack_policy": "explicit",
        "deliver_policy": "by_start_sequence", "opt_start_seq": 8}}, domain="west")
    return c


def test_the_snapshot_of_a_live_domain(live_domains):
    d = live_domains
    _setup(d)
    res = runner.invoke(app, ["-s", d.leaf.url, "dashboard", "--json"], prog_name="jetlink")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    [east] = doc["clusters"]
    assert (east["name"], east["domain"], east["server"], east["error"]) == (
        "east", "east", d.leaf.url, None)
    [mirror] = east["streams"]
    assert mirror["config"]["name"] == "ORDERS_EAST"
    assert mirror["mirror"]["name"] == "ORDERS" and mirror["mirror"]["lag"] == 0


def test_failover_key_acts_on_the_live_server(live_domains):
    from jetlink.cli.dashboard.actions import Source
    from jetlink.cli.dashboard.app import ConfirmScreen, create_app
    from jetlink.cli.promotion import promotion_columns
    from jetlink.core import dr
    from jetlink.core.backend import LiveBackend
    from jetlink.core.clock import SystemClock
    from jetlink.core.live.target import ServerTarget

    d = live_domains
    c = _setup(d)
    target = ServerTarget((d.leaf.url,), origin="test")
    source = Source(None, target)
    dash = create_app(None, clock=SystemClock(), refresh=3600, label=d.leaf.url,
                      source=source, loader=source.load)
    with LiveBackend(target) as backend:  # the CLI's dry run: the dialog shows its lines
        dry = dr.promote(backend.site(), "ORDERS_EAST", failover=True, dry_run=True,
                         positions=backend.positions())
    columns = promotion_columns(dry.to_json(), label="Stream ORDERS_EAST@east")
    columns.heading = None
    cli = runner.invoke(app, ["-s", d.leaf.url, "stream", "failover", "ORDERS_EAST",
                              "--dry-run"], prog_name="jetlink")
    assert cli.exit_code == 0, cli.output
    # the verb's warnings first, as it prints them (west takes orders.> when it answers)
    warned = [ln.replace("jetlink: warning: ", "Warning: ", 1) for ln in
              cli.stderr.splitlines() if ln.startswith("jetlink: warning: ")]
    assert warned

    async def steps(pilot):
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        rows = cells(dash, "streams")
        await select(pilot, "streams", "ORDERS_EAST@east (mirror)")
        await pilot.press("F")
        await settle(pilot)
        assert isinstance(dash.screen, ConfirmScreen), status(dash)
        shown = list(dash.screen.lines)
        await pilot.press("y")
        await settle(pilot)
        # The embedded engine's step and follow do not apply to a server: not offered.
        offered = {b.binding.key for b in dash.active_bindings.values() if b.enabled}
        gated = (dash.check_action("step", ()), dash.check_action("follow", ()))
        await pilot.press("s")  # not bound here: nothing happens
        await settle(pilot)
        return rows, shown, status(dash), offered, gated

    rows, shown, said, offered, gated = drive(dash, steps)
    assert gated == (False, False) and not {"s", "f"} & offered
    assert rows == [["ORDERS_EAST@east (mirror)", "20", "", "", rows[0][4], "1..20", "0",
                     "-"]]
    assert shown == ["ORDERS_EAST@east can be failed over", *warned,
                     *(t.rstrip() for t in columns.lines())]
    assert "Subjects: orders.> (the origin's)" in [t.strip() for t in shown]
    assert "billing: ack floor 7 on the origin, starts at 8" in [t.strip() for t in shown]
    assert "Step" not in said and "replication step" not in said
    info = c.stream_info("ORDERS_EAST", domain="east")
    assert "mirror" not in info["config"]
    placed = c.api("CONSUMER.INFO.ORDERS_EAST.billing", domain="east")
    assert placed["config"]["opt_start_seq"] == 8


def test_the_regions_tab_fails_a_live_region_over(live_domains):
    """The server's domain east mirrors ORDERS of domain west: the Regions tab has west with
    one ready mirror; F shows dr failover --from west's plan over the server, confirmed it
    fails ORDERS_EAST over there, and west (still up) is a split brain."""
    from jetlink.cli.dashboard.actions import Source
    from jetlink.cli.dashboard.app import ConfirmScreen, create_app
    from jetlink.core.clock import SystemClock
    from jetlink.core.live.target import ServerTarget

    d = live_domains
    c = _setup(d)
    source = Source(None, ServerTarget((d.leaf.url,), origin="test"))
    dash = create_app(None, clock=SystemClock(), refresh=3600, label=d.leaf.url,
                      source=source, loader=source.load)

    async def steps(pilot):
        await settle(pilot)
        await pilot.press("7")
        rows = cells(dash, "regions")
        await pilot.press("F")
        await settle(pilot)
        assert isinstance(dash.screen, ConfirmScreen), status(dash)
        asked = list(dash.screen.lines)
        await pilot.press("y")
        await settle(pilot)
        outcome = list(dash.screen.lines)
        await pilot.press("n")
        await settle(pilot)
        return rows, asked, outcome, cells(dash, "regions")

    rows, asked, outcome, after = drive(dash, steps)
    assert [r[:5] + r[6:] for r in rows] == [["west", "0", "1", "1", "0", "0", "0", "-"]]
    assert asked[:3] == ["1 object of west to fail over",
                         "Warning: ORDERS@west answers now: after the failover it and the "
                         "promoted side would both take writes (a split brain) until fenced: "
                         "press E on region west after it",
                         "Region failover of west: 1 object, 0 messages at risk, recovery "
                         "point 0s, 1 consumer to place"]
    assert outcome[0] == "Region failover of west: 1 done, 0 done earlier, 0 skipped, 0 failed"
    # west never went away: its ORDERS still takes orders.>, as ORDERS_EAST now does
    assert after == [["west", " 1 ", "1", "0", "0", "-", "-", "1", "0/1"]]
    assert "mirror" not in c.stream_info("ORDERS_EAST", domain="east")["config"]


def _live_app(server, **kw):
    from jetlink.cli.dashboard.actions import Source
    from jetlink.cli.dashboard.app import create_app
    from jetlink.core.clock import SystemClock
    from jetlink.core.live.target import ServerTarget

    source = Source(None, ServerTarget((server.url,), origin="test"))
    kw.setdefault("refresh", 3600)
    return create_app(None, clock=SystemClock(), label=server.url, source=source,
                      loader=source.load, **kw)


def test_the_feed_shows_what_is_published_on_the_live_server(live):
    """The Feed tab on a live server: a core message published there shows in it (the live
    message's headers read as the engine's are)."""
    from textual.widgets import RichLog

    dash = _live_app(live, feed="orders.>")
    c = live.client()

    async def steps(pilot):
        await pilot.press("6")
        log = dash.query_one("#feed-log", RichLog)
        await until(pilot, lambda: dash.workers and any(
            w.group == "feed" and w.is_running for w in dash.workers), "the feed runs")
        texts = lambda: [line.text for line in log.lines]  # noqa: E731
        # (published until the subscription, made in the worker, has it)
        await until(pilot, lambda: c.publish("orders.z", b"hi there", {"X-Trace": "1"})
                    or any("orders.z" in t for t in texts()), "the message in the feed")
        return texts(), status(dash)

    lines, said = drive(dash, steps)
    assert lines[0] == f"Subscribing on orders.> in the server {live.url}"
    assert lines[1] == "[#1] orders.z hi there", lines
    assert "error" not in said


def test_a_killed_server_is_its_rows_error_and_the_tables_are_said_stale(nats_fresh):
    """A live server that dies while the dashboard watches it: its row on the Clusters tab
    says it does not answer (no counts), the status line that the tables are the last
    snapshot it answered; the embedded engine's drill keys (d / u) are never offered
    there."""
    srv = nats_fresh
    c = srv.client()
    c.stream_create({"name": "ORDERS", "subjects": ["orders.>"], "storage": "memory"})
    dash = _live_app(srv, refresh=1)

    async def steps(pilot):
        await settle(pilot)
        await select(pilot, "clusters", srv.url)
        before = cells(dash, "clusters")
        offered = {b.binding.key for b in dash.active_bindings.values() if b.enabled}
        gated = (dash.check_action("down", ()), dash.check_action("up", ()))
        await pilot.press("d")  # not bound here: no dialog
        await pilot.pause()
        dialog = type(dash.screen).__name__
        c.close()
        srv.kill()
        await until(pilot, lambda: cells(dash, "clusters")[0][2] == "no answer",
                    "the row says the server does not answer")
        await until(pilot, lambda: "does not answer" in status(dash), "the status line")
        return (before, offered, gated, dialog, cells(dash, "clusters"), status(dash),
                dash.query_one("#status").has_class("-problem"), cells(dash, "streams"))

    before, offered, gated, dialog, after, said, problem, streams = drive(
        dash, steps, size=(200, 30))
    assert before == [[srv.url, "nats", "up", "1", "0", "0", "0", ""]]
    assert gated == (False, False) and not {"d", "u"} & offered and dialog != "ConfirmScreen"
    [row] = after
    assert row[:7] == [srv.url, "nats", "no answer", "-", "-", "-", "-"] and row[7], row
    assert f"{srv.url} does not answer: the tables show what it said at " in said and problem
    assert [r[0] for r in streams] == [f"ORDERS@{srv.url}"]  # the last snapshot, kept
