"""`jetlink dashboard` (cli/dashboard/): the data layer, the app driven by Textual's Pilot
(navigation, every action and its effect on the store, the confirm modal cancelled), a
change made by another process, a slow and a locked database, NO_COLOR, the command itself,
and three SVG snapshots (pytest-textual-snapshot) on the demo data set of
scripts/dashboard_svg.py with a manual clock."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import WAIT_TIMEOUT, data_dir_bytes, ok

from jetlink.cli.dashboard import actions
from jetlink.cli.dashboard.data import Rates, Snapshot, load, rate_text, sparkline
from jetlink.core.clock import ManualClock
from jetlink.core.jetstream import JetStream
from jetlink.core.kafka.mirrors import Mirrors
from jetlink.core.kafka.topics import Kafka
from jetlink.core.store import DataDir

ROOT = Path(__file__).resolve().parent.parent
SEC = 1_000_000_000


def _script():
    spec = importlib.util.spec_from_file_location("dashboard_svg", ROOT / "scripts" /
                                                  "dashboard_svg.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """The demo data set, built once; each test gets a copy (:func:`demo`)."""
    script = _script()
    path = tmp_path_factory.mktemp("dashboard") / "data"
    clock = ManualClock(script.START_NS)
    script.build(path, clock)
    return path, clock.now_ns()


@pytest.fixture
def demo(template, tmp_path):
    """(data directory, clock at the data set's time) of a fresh copy of the demo data."""
    src, now = template
    path = tmp_path / "data"
    shutil.copytree(src, path, dirs_exist_ok=True)
    return path, ManualClock(now)


def make_app(demo, **kw):
    from jetlink.cli.dashboard.app import create_app

    path, clock = demo
    kw.setdefault("refresh", 3600)
    kw.setdefault("label", "demo")
    return create_app(path, clock=clock, **kw)


def drive(app, steps, size=(100, 30), settled=True):
    """Run ``app`` headless, call ``await steps(pilot)``, return what it returns (first
    :func:`settle`, unless ``settled`` is false: a loader the test holds back would be
    waited for)."""

    async def main():
        async with app.run_test(size=size) as pilot:
            if settled:
                await settle(pilot)
            return await steps(pilot)

    return asyncio.run(main())


async def settle(pilot):
    """Let the loads and actions finish (not the feed or follow loops), including a load
    deferred to keep them at most one a second, and the screen catch up."""
    app = pilot.app
    deadline = time.monotonic() + WAIT_TIMEOUT  # the pilot's loop: wait_until's rule, async
    while True:
        busy = [w for w in app.workers if w.group in ("load", "action") and not w.is_finished]
        if busy:
            await app.workers.wait_for_complete(busy)
        await pilot.pause()
        if not busy and not app._deferred and app._loading_since is None:
            break
        assert time.monotonic() < deadline, (
            f"the dashboard settled: not reached within {WAIT_TIMEOUT:g}s (deferred "
            f"{app._deferred!r}, loading since {app._loading_since!r})")
        if app._deferred:
            await pilot.pause(0.1)
    await pilot.pause()


async def until(pilot, fn, what, saw=None):
    """Let the app run until ``fn()`` is truthy (wait_until's rule, on the pilot's loop:
    the app runs meanwhile); past WAIT_TIMEOUT, AssertionError naming ``what`` and what
    ``saw()`` (the app's state it waits on) last was."""
    deadline = time.monotonic() + WAIT_TIMEOUT
    while not fn():
        if time.monotonic() >= deadline:
            seen = f" (saw {saw()!r})" if saw is not None else ""
            raise AssertionError(f"{what}: not reached within {WAIT_TIMEOUT:g}s{seen}")
        await pilot.pause(0.05)


def cells(app, table):
    from textual.widgets import DataTable

    t = app.query_one(f"#{table}-table", DataTable)
    return [[str(c) for c in t.get_row_at(i)] for i in range(t.row_count)]


def status(app):
    return str(app.query_one("#status").render())


async def select(pilot, table, text):
    """Focus ``table`` and put its cursor on the first row whose cells contain ``text``."""
    from textual.widgets import DataTable

    t = pilot.app.query_one(f"#{table}-table", DataTable)
    t.focus()
    rows = cells(pilot.app, table)
    exact = [i for i, row in enumerate(rows) if text in row]
    index = exact[0] if exact else next(
        i for i, row in enumerate(rows) if any(text in c for c in row))
    t.move_cursor(row=index)
    await pilot.pause()


def mirror_status(path, topic="orders"):
    dd = DataDir(path)
    try:
        return Mirrors(dd, "keast", ManualClock()).describe(topic).mirror_status
    finally:
        dd.close()


def stream_info(path, cluster, name):
    dd = DataDir(path)
    try:
        return JetStream(dd.open(cluster), ManualClock()).stream_info(name).to_json()
    finally:
        dd.close()


# -- the data layer --------------------------------------------------------------------------


def test_load_reads_every_cluster_through_core(demo):
    path, clock = demo
    snap = load(path, clock)
    assert [(c.name, c.kind, c.down, c.streams, c.buckets, c.topics, c.links)
            for c in snap.clusters] == [
        ("east", "nats", False, 4, 2, 0, 0), ("keast", "kafka", False, 0, 0, 1, 1),
        ("kwest", "kafka", False, 0, 0, 1, 0), ("west", "nats", True, 2, 1, 0, 0)]
    assert not (path / "local.db").exists()  # a viewer creates nothing
    backup = next(s for s in snap.streams if s.name == "BACKUP")
    assert (backup.role, backup.messages, backup.first_seq, backup.last_seq) == (
        "mirror", 40, 1, 40)
    assert backup.doc["mirror"]["name"] == "ORDERS"  # the StreamInfo document
    agreements = {(a.stream, a.kind, a.origin): (a.lag, a.error) for a in snap.agreements}
    assert agreements[("BACKUP", "mirror", "ORDERS@west")] == (
        0, "origin cluster west is down")
    assert agreements[("ARCHIVE", "source", "ORDERS@west")][1] == "origin cluster west is down"
    buckets = {(b.cluster, b.bucket): (b.kind, b.values, b.history, b.ttl_ns, b.origins)
               for b in snap.buckets}
    assert buckets == {
        ("west", "CONFIG"): ("bucket", 3, 5, 3600 * SEC, []),
        ("east", "CONFIG_EAST"): ("mirror", 3, 5, 0, ["KV_CONFIG@west"]),
        ("east", "SETTINGS"): ("aggregate", 2, 1, 0, ["KV_CONFIG@west"]),
    }
    assert [(lk.name, lk.source, lk.state, lk.mirrors) for lk in snap.links] == [
        ("dr", "kwest", "ACTIVE", 1)]
    assert [(m.topic, m.status, m.partition, m.lag, m.last_fetch_offset)
            for m in snap.mirrors] == [
        ("orders", "ACTIVE", 0, 0, 10), ("orders", "ACTIVE", 1, 5, 16),
        ("orders", "ACTIVE", 2, 0, 20)]
    billing = [(g.partition, g.offset, g.log_end, g.lag) for g in snap.groups
               if g.cluster == "kwest" and g.group == "billing"]
    assert billing == [(0, 10, 10, 0), (1, 19, 21, 2), (2, 20, 20, 0)]


def test_snapshot_json_holds_the_api_documents(demo):
    path, clock = demo
    doc = load(path, clock).to_json()
    assert doc["time"] == "2026-01-01T00:00:29Z"
    east = next(c for c in doc["clusters"] if c["name"] == "east")
    assert [s["config"]["name"] for s in east["streams"]] == [
        "ARCHIVE", "BACKUP", "KV_CONFIG_EAST", "KV_SETTINGS"]
    assert [b["bucket"] for b in east["kv"]] == ["CONFIG_EAST", "SETTINGS"]
    keast = next(c for c in doc["clusters"] if c["name"] == "keast")
    assert keast["links"][0]["link_name"] == "dr"
    assert keast["mirrors"][0]["mirror_lags"][1] == {
        "partition": 1, "lag": 5, "last_source_fetch_offset": 16}
    assert sorted(g["consumer_group_id"] for g in keast["groups"]) == ["audit", "billing"]
    json.dumps(doc)


def test_load_of_a_missing_directory_creates_nothing(tmp_path):
    snap = load(tmp_path / "nope", ManualClock())
    assert snap.clusters == [] and not (tmp_path / "nope").exists()


@pytest.mark.parametrize("values, line", [
    ([], ""), ([0, 0], "▁▁"), ([1, 2, 4, 8], "▂▃▅█"), ([5], "█"), ([0, 10, 5], "▁█▅"),
])
def test_sparkline(values, line):
    assert sparkline(values) == line


@pytest.mark.parametrize("rate, text", [
    (None, ""), (0, "0/s"), (2.5, "2.5/s"), (12.4, "12/s"), (1500, "1.5k/s")])
def test_rate_text(rate, text):
    assert rate_text(rate) == text


def test_rates_from_successive_snapshots():
    from jetlink.cli.dashboard.data import StreamRow

    rates = Rates(samples=3, window_ns=2 * SEC)

    def snap(t, last):
        return Snapshot(taken_ns=t * SEC, streams=[
            StreamRow("c", "S", [], last, 0, 1, last, "stream", {})])

    rates.update(snap(0, 10))
    assert rates.rate("c/S") is None
    got = []
    for t, last in ((1, 20), (3, 20), (4, 50), (5, 51)):
        rates.update(snap(t, last))
        got.append(rates.rate("c/S"))
    # from the newest load at or before the window's start (2 s back) to the latest
    assert got == [10.0, 0.0, 10.0, 15.5]  # 10/1, 0/2 (1..3), 30/3 (1..4), 31/2 (3..5)
    assert rates.sparkline("c/S") == "▁▆█"
    rates.update(snap(6, 3))  # made again: its sequence started over
    assert rates.rate("c/S") is None
    rates.update(Snapshot(taken_ns=7 * SEC))  # the stream went away
    assert rates.rate("c/S") is None


def test_a_steady_rate_of_bursty_publishes_reads_steady():
    """150 msg/s arriving as 300 messages every 2 s, loaded about once a second (a load's
    time varies): the rate shown stays near 150/s once the window is full, never 0/s nor
    the 300/s of a single burst (the growth between two loads alone flickered between
    them)."""
    from jetlink.cli.dashboard.data import StreamRow

    rates = Rates()
    shown = []
    for k in range(120):
        t = k * SEC + (k % 4) * SEC // 10  # loads at 0, 1.1, 2.2, 3.3, 4, 5.1 ... s
        last = 300 * ((t - SEC // 2) // (2 * SEC) + 1) if t >= SEC // 2 else 0
        rates.update(Snapshot(taken_ns=t, streams=[
            StreamRow("c", "S", [], last, 0, 1, last, "stream", {})]))
        if t > 12 * SEC:  # the window (10 s) full
            shown.append(rates.rate("c/S"))
    assert shown and all(130 <= r <= 180 for r in shown), sorted(set(shown))
    assert {rate_text(r) for r in shown} <= {f"{n}/s" for n in range(130, 181)}


# -- actions without the UI --------------------------------------------------------------------


def test_an_engine_error_is_a_failed_outcome(demo):
    path, clock = demo
    out = actions.Source(path).run(clock, actions.purge_stream("east", "NOPE"))
    assert out.ok is False and out.message == "jetlink: error: stream not found (10059): NOPE"


def test_step_reports_what_moved(demo):
    path, clock = demo
    dd = DataDir(path)
    dd.set_down("west", False)
    dd.close()
    out = actions.Source(path).run(clock, actions.step())
    assert out.ok and out.message == "Replication step: 24 messages copied, 5 records mirrored"


def test_step_names_the_targets_of_a_cluster_down_and_a_directory_gone(demo):
    """As replicate: the agreements of a cluster that is down are in error (nothing reaches
    it), and a data directory moved away is said, not "0 messages copied"."""
    path, clock = demo
    dd = DataDir(path)
    dd.set_down("east", True)
    dd.close()
    out = actions.Source(path).run(clock, actions.step())
    assert any(e.endswith("@east: cluster east is down: nothing is copied into it (jetlink "
                          "cluster up east once it answers)") for e in out.details), out.details
    path.rename(path.with_name("moved"))
    out = actions.Source(path).run(clock, actions.step())
    assert not out.ok and "does not exist" in out.message, out.message


# -- the app: navigation ------------------------------------------------------------------------


def test_tabs_tables_and_detail_view(demo):
    app = make_app(demo)

    async def steps(pilot):
        from jetlink.cli.dashboard.app import DetailScreen

        assert app.active_tab == "clusters"
        assert [r[:3] for r in cells(app, "clusters")] == [
            ["east", "nats", "up"], ["keast", "kafka", "up"], ["kwest", "kafka", "up"],
            ["west", "nats", "down"]]
        await pilot.press("2")
        assert app.active_tab == "streams" and app.current_table() == "streams"
        assert cells(app, "streams")[1] == [
            "BACKUP@east (mirror)", "40", "", "", "2.0 KiB", "1..40", "0", "-"]
        assert cells(app, "agreements")[1] == [
            "BACKUP@east", "mirror", "ORDERS@west", "0 (last reported)", "16.00s",
            "origin cluster west is down",
        "CRITICAL: Subjects unknown: a failover now would be refused (give --topology FILE "
        "naming the origin's stream, or --subjects to its failover)"]
        await pilot.press("down", "enter")
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.title_text == "StreamInfo BACKUP@east"
        assert app.screen.doc["config"]["mirror"]["name"] == "ORDERS"
        await pilot.press("escape")
        assert not isinstance(app.screen, DetailScreen)
        await pilot.press("tab")  # the agreements table: its stream's StreamInfo
        assert app.current_table() == "agreements"
        await pilot.press("down", "i")
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.title_text == "Stream BACKUP@east"
        assert app.screen.doc["mirror"]["name"] == "ORDERS"
        await pilot.press("escape")
        await pilot.press("4")
        assert cells(app, "mirrors") == [
            ["orders@keast", "dr", "ACTIVE", "0", "0", "10", "15.00s", "OK"],
            ["", "", "ACTIVE", "1", "5", "16", "15.00s", ""],
            ["", "", "ACTIVE", "2", "0", "20", "15.00s", ""]]
        await pilot.press("5")
        assert cells(app, "groups")[0] == ["audit@keast", "Empty", "orders", "0", "4", "10",
                                           "6"]
        await pilot.press("3", "i")
        assert app.screen.title_text == "KV status CONFIG_EAST@east"
        await pilot.press("escape")

    drive(app, steps)


def test_filter_and_cluster_scope(demo):
    app = make_app(demo)

    async def steps(pilot):
        await pilot.press("2", "slash", *"back")
        assert [r[0] for r in cells(app, "streams")] == ["BACKUP@east (mirror)"]
        assert "filter 'back'" in status(app)
        await pilot.press("enter")  # keeps the filter, back to the table
        assert app.focused.id == "streams-table"
        await pilot.press("slash", "escape")  # clears it
        assert len(cells(app, "streams")) == 6
        await pilot.press("c")  # all -> east
        assert {r[0].split("@")[1].split()[0] for r in cells(app, "streams")} == {"east"}
        assert "cluster east" in status(app)
        await pilot.press("c", "c", "c", "c")  # keast, kwest, west, all
        assert "all clusters" in status(app)

    drive(app, steps)


def test_scope_from_the_cluster_option(demo):
    app = make_app(demo, scope="west")

    async def steps(pilot):
        return [r[0] for r in cells(app, "clusters")]

    assert drive(app, steps) == ["west"]


def test_footer_shows_only_the_keys_that_apply(demo):
    app = make_app(demo)

    async def steps(pilot):
        def keys():
            return {b.binding.action for b in app.active_bindings.values()
                    if app.check_action(b.binding.action, ())} & {
                        "down", "up", "purge", "pause", "resume", "promote", "failover"}

        out = [keys()]  # east: up
        await select(pilot, "clusters", "west")
        out.append(keys())
        await pilot.press("2")
        await select(pilot, "streams", "BACKUP")
        out.append(keys())
        await select(pilot, "streams", "ORDERS")
        out.append(keys())
        await pilot.press("4")
        await select(pilot, "mirrors", "orders@keast")
        out.append(keys())
        return out

    assert drive(app, steps) == [
        {"down"}, {"up"}, {"purge", "promote", "failover"}, {"purge"},
        {"pause", "promote", "failover"}]


# -- the app: actions ---------------------------------------------------------------------------


def test_pause_and_resume_a_mirror_topic_and_a_link(demo):
    path, _ = demo
    app = make_app(demo)

    async def steps(pilot):
        await pilot.press("4")
        await select(pilot, "mirrors", "orders@keast")
        await pilot.press("p")
        await settle(pilot)
        seen = [mirror_status(path), status(app)]
        assert cells(app, "mirrors")[0][2] == "PAUSED"
        await pilot.press("r")
        await settle(pilot)
        seen.append(mirror_status(path))
        await select(pilot, "links", "dr@keast")
        await pilot.press("p")
        await settle(pilot)
        seen += [cells(app, "links")[0][2], mirror_status(path)]
        await pilot.press("r")
        await settle(pilot)
        seen.append(cells(app, "links")[0][2])
        return seen

    paused, said, resumed, link, mirror, link_back = drive(app, steps)
    assert (paused, resumed, link, mirror, link_back) == (
        "PAUSED", "ACTIVE", "PAUSED", "PAUSED", "ACTIVE")
    assert "Mirror topic orders@keast paused" in said


def test_failover_shows_the_clamps_and_can_be_cancelled(demo):
    path, _ = demo
    app = make_app(demo)

    async def steps(pilot):
        from jetlink.cli.dashboard.app import ConfirmScreen

        await pilot.press("4")
        await select(pilot, "mirrors", "orders@keast")
        await pilot.press("F")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        shown = list(app.screen.lines)
        await pilot.press("n")
        await settle(pilot)
        cancelled = (mirror_status(path), status(app))
        await pilot.press("F")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        return shown, cancelled, status(app)

    shown, cancelled, done = drive(app, steps)
    assert shown == [
        "Mirror topic orders@keast can be failed over",
        "Mirror lag 5 (the largest of 3 partitions)",
        "Would clamp consumer group billing on orders partition 1: offset 19 -> 16",
    ]
    assert cancelled[0] == "ACTIVE" and "Failover: cancelled, nothing changed" in cancelled[1]
    assert mirror_status(path) == "STOPPED"
    assert "Mirror topic orders@keast failed over" in done
    dd = DataDir(path)
    assert Kafka(dd.open("keast"), ManualClock()).committed("billing")[("orders", 1)] == 16
    dd.close()


def test_a_refused_promotion_shows_the_error_text(demo):
    path, _ = demo
    app = make_app(demo)

    async def steps(pilot):
        await pilot.press("4")
        await select(pilot, "mirrors", "orders@keast")
        await pilot.press("P")
        await settle(pilot)
        return status(app), type(app.screen).__name__

    said, screen = drive(app, steps)
    assert screen != "ConfirmScreen"  # nothing to confirm: the dry run was refused
    assert "Mirror topic orders@keast: " in said and "lag" in said.lower()
    assert mirror_status(path) == "ACTIVE"


def test_promote_a_nats_mirror(demo, jl):
    """P needs the origin reachable: west is down, so it is refused, pointing to F. F with
    the positions synced shows the CLI's dry run in its dialog, line by line, its warnings
    first (``stream failover --dry-run``'s: west takes orders.> again once it answers),
    then fails over with the subjects west had when they were synced."""
    from jetlink.cli.promotion import promotion_columns
    from jetlink.core import dr
    from jetlink.core.backend import EmbeddedBackend
    from jetlink.core.dr.positions import sync

    path, clock = demo
    dd = DataDir(path)
    dd.set_down("west", False)  # the positions of west's consumers, synced while it was up
    with EmbeddedBackend(path, "east", lambda: clock, step=False) as backend:
        sync(backend.site(), backend.positions())
    dd.set_down("west", True)
    dd.close()
    with EmbeddedBackend(path, "east", lambda: clock, step=False) as backend:
        dry = dr.promote(backend.site(), "BACKUP", failover=True, dry_run=True,
                         positions=backend.positions())
    columns = promotion_columns(dry.to_json(), label="Stream BACKUP@east")
    columns.heading = None
    cli = jl("--data-dir", str(path), "--cluster", "east", "stream", "failover", "BACKUP",
             "--dry-run")
    assert cli.exit_code == 0, cli.output
    warned = [ln.replace("jetlink: warning: ", "Warning: ", 1) for ln in
              cli.stderr.splitlines() if ln.startswith("jetlink: warning: ")]
    assert warned and "until it is fenced" in warned[0]
    expected = ["BACKUP@east can be failed over", *warned,
                *(t.rstrip() for t in columns.lines())]
    app = make_app(demo)

    async def steps(pilot):
        from jetlink.cli.dashboard.app import ConfirmScreen

        await pilot.press("2")
        await select(pilot, "streams", "BACKUP")
        await pilot.press("P")
        await settle(pilot)
        refused = (status(app), isinstance(app.screen, ConfirmScreen))
        await pilot.press("F")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        shown = list(app.screen.lines)
        await pilot.press("y")
        await settle(pilot)
        return refused, shown, status(app)

    refused, shown, said = drive(app, steps)
    assert refused[1] is False and "cannot be promoted" in refused[0]
    assert "fail over instead" in refused[0]
    assert shown == expected
    assert "Subjects: orders.> (the origin's, as last synced)" in [t.strip() for t in shown]
    # (at 100 columns the line gives way in its middle: the count of the notice's lines
    # stays in view)
    assert "Stream BACKUP@east was failed over: it " in said and said.endswith(" in notice")
    info = stream_info(path, "east", "BACKUP")
    assert "mirror" not in info["config"] and info["config"]["subjects"] == ["orders.>"]


def test_cluster_down_confirms_and_up_does_not(demo):
    path, _ = demo
    app = make_app(demo)

    async def steps(pilot):
        await select(pilot, "clusters", "east")
        await pilot.press("d")
        await settle(pilot)
        await pilot.press("escape")  # cancel
        await settle(pilot)
        first = DataDir(path).is_down("east")
        await pilot.press("d")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        down = cells(app, "clusters")[0][2]
        await pilot.press("u")
        await settle(pilot)
        return first, down, cells(app, "clusters")[0][2]

    assert drive(app, steps) == (False, "down", "up")


def test_purge_a_stream(demo):
    path, _ = demo
    app = make_app(demo)

    async def steps(pilot):
        await pilot.press("2")
        await select(pilot, "streams", "ARCHIVE")
        await pilot.press("x")
        await settle(pilot)
        lines = list(app.screen.lines)
        await pilot.press("y")
        await settle(pilot)
        return lines, status(app)

    lines, said = drive(app, steps)
    assert lines[0] == "All 40 messages (6.5 KiB) are removed; the sequences go on."
    assert "Purged 40 messages from ARCHIVE@east" in said
    assert stream_info(path, "east", "ARCHIVE")["state"]["messages"] == 0


def test_step_and_follow(demo):
    path, clock = demo
    dd = DataDir(path)
    dd.set_down("west", False)
    app = make_app(demo)

    async def steps(pilot):
        await pilot.press("s")
        await settle(pilot)
        stepped = status(app)
        JetStream(dd.open("west"), clock).publish("orders.eu.x", b"while following")
        # Steps at once: the follow loop is what is tested. Set after mounting, so the loads'
        # interval (set_interval at mount) stays at its second: ticking every 0.05 s, a load
        # would always be running or deferred and settle() would never see the app idle.
        app.refresh_seconds = 0.05
        await pilot.press("f")
        deadline = time.monotonic() + WAIT_TIMEOUT
        while time.monotonic() < deadline:  # BACKUP and ARCHIVE copy it in one follow step
            await pilot.pause(0.05)
            if "following: 2 copied" in status(app):
                break
        following = status(app)
        await pilot.press("f")
        await settle(pilot)
        return stepped, following, status(app)

    try:
        stepped, following, stopped = drive(app, steps)
    finally:
        dd.close()
    assert "Replication step: 24 messages copied, 5 records mirrored" in stepped
    assert "following: 2 copied" in following
    assert stream_info(path, "east", "BACKUP")["state"]["last_seq"] == 53
    assert "Stopped following: 2 copied" in stopped  # BACKUP and ARCHIVE


def _fed(demo, body):
    """The Feed tab's lines after ``orders.eu.77`` is published with ``body`` in west (the
    feed on ``monitor.>@west``, its RePublish subject)."""
    path, clock = demo
    app = make_app(demo, feed="monitor.>@west")

    async def steps(pilot):
        from textual.widgets import RichLog

        await pilot.press("6")
        await pilot.pause(0.3)
        dd = DataDir(path)
        JetStream(dd.open("west"), clock).publish("orders.eu.77", body)
        dd.close()
        log = app.query_one("#feed-log", RichLog)
        deadline = time.monotonic() + WAIT_TIMEOUT
        while time.monotonic() < deadline and len(log.lines) < 2:
            await pilot.pause(0.05)
        return [line.text for line in log.lines]

    return drive(app, steps)


def test_feed_follows_a_republish_subject(demo):
    lines = _fed(demo, b"watched")
    assert lines[0] == "Subscribing on monitor.> in cluster west"
    assert lines[1] == "[#1] monitor.orders.eu.77 (ORDERS #53) watched"


def test_the_feed_shows_control_characters_escaped(demo):
    """A body or subject holding an escape sequence (anyone who may publish on the watched
    subject) is shown escaped: written raw it would retitle, clear or spoof the terminal."""
    lines = _fed(demo, b"A\x1b]0;PWNED\x07B\x1b[2J\x00C")
    assert lines[1] == ("[#1] monitor.orders.eu.77 (ORDERS #53) "
                        "A\\x1b]0;PWNED\\x07B\\x1b[2J\\x00C")


def test_an_empty_feed_subject_keeps_the_box_and_its_keys(demo):
    """Enter on an empty subject starts nothing: the box keeps the focus, so the subject
    typed next is the box's (its letters never run actions: f follows, s steps)."""
    app = make_app(demo)

    async def steps(pilot):
        from textual.widgets import Input

        await pilot.press("6", "enter")
        box = app.query_one("#feed-subject", Input)
        assert app.focused is box
        await pilot.press(*"fs")
        return box.value, app.following, app.message

    value, following, message = drive(app, steps)
    assert (value, following) == ("fs", False)
    assert "Replication step" not in (message or "")


def test_the_feed_box_gives_the_tab_keys_back_on_escape_and_enter(demo):
    """The Feed tab's subject box takes what is typed (a subject may hold digits); Esc, or
    Enter starting the feed, leaves it, and 1-7 switch tabs again."""
    app = make_app(demo)

    async def steps(pilot):
        from textual.widgets import Input

        await pilot.press("6")
        box = app.query_one("#feed-subject", Input)
        assert app.focused is box
        await pilot.press("7")
        assert (app.active_tab, box.value) == ("feed", "7")
        await pilot.press("escape", "1")
        assert app.active_tab == "clusters"
        await pilot.press("6")
        assert app.focused is box
        await pilot.press("backspace", *"monitor.>@west", "enter", "2")
        assert app.active_tab == "streams"
        await pilot.press("6")  # a feed runs: its log has the focus, the keys work
        assert app.focused is app.query_one("#feed-log")
        await pilot.press("3")
        return app.active_tab

    assert drive(app, steps) == "kv"


# -- the app: live data, slow and locked databases, no colour ---------------------------------


def test_picks_up_a_change_made_by_another_process(demo):
    path, _ = demo
    app = make_app(demo, refresh=1)
    env = {k: v for k, v in os.environ.items() if not k.startswith("JETLINK_")}

    async def steps(pilot):
        await pilot.press("2")
        subprocess.run([sys.executable, "-m", "jetlink.cli.main", "--data-dir", str(path),
                        "--cluster", "east", "stream", "add", "FRESH", "--subjects", "fresh.>",
                        "--defaults"], check=True, capture_output=True, env=env)
        deadline = time.monotonic() + WAIT_TIMEOUT
        while time.monotonic() < deadline:
            await pilot.pause(0.1)
            if any(r[0] == "FRESH@east" for r in cells(app, "streams")):
                return True
        return False

    assert drive(app, steps)


def test_an_open_document_follows_its_item_and_says_when_it_is_gone(demo):
    """The document view refreshes with the data; a stream deleted by another process
    keeps its last document, the title saying it is gone."""
    path, _ = demo
    app = make_app(demo, refresh=1)
    env = {k: v for k, v in os.environ.items() if not k.startswith("JETLINK_")}

    async def steps(pilot):
        from jetlink.cli.dashboard.app import GONE, DetailScreen

        await pilot.press("2")
        await select(pilot, "streams", "ARCHIVE")
        await pilot.press("i")
        assert isinstance(app.screen, DetailScreen)
        subprocess.run([sys.executable, "-m", "jetlink.cli.main", "--data-dir", str(path),
                        "--cluster", "east", "stream", "rm", "ARCHIVE", "-f"], check=True,
                       capture_output=True, env=env)
        deadline = time.monotonic() + WAIT_TIMEOUT
        while time.monotonic() < deadline and not app.screen.title_text.endswith(GONE):
            await pilot.pause(0.1)
        return app.screen.title_text, app.screen.doc["config"]["name"]

    title, name = drive(app, steps)
    assert title == "StreamInfo ARCHIVE@east (gone: it is no longer there; as last read)"
    assert name == "ARCHIVE"


def test_a_slow_load_shows_a_notice_and_keeps_the_ui_responsive(demo):
    gate = threading.Event()
    calls = []
    running = [0, 0]  # loads running now, the most at once
    lock = threading.Lock()

    def slow(path, clock):
        with lock:
            calls.append(1)
            running[0] += 1
            running[1] = max(running)
        try:
            if len(calls) > 1:
                gate.wait(120)
            return load(path, clock)
        finally:
            with lock:
                running[0] -= 1

    app = make_app(demo, refresh=1, loader=slow)

    async def steps(pilot):
        started = time.monotonic()
        notice = ""
        while time.monotonic() - started < WAIT_TIMEOUT and "slow" not in notice:
            await pilot.pause(0.1)
            notice = status(app)
        await pilot.press("2")  # the UI still answers
        tab = app.active_tab
        gate.set()
        return notice, tab

    notice, tab = drive(app, steps, settled=False)  # settling would wait for the held load
    assert "reading the data directory is slow" in notice
    assert "the tables show the last snapshot" in notice
    assert tab == "streams" and len(calls) >= 2
    assert running[1] == 1  # no second load started while one ran


def test_a_locked_database_shows_a_notice(demo):
    def locked(path, clock):
        raise sqlite3.OperationalError("database is locked")

    app = make_app(demo, loader=locked)

    async def steps(pilot):
        return status(app), app.query_one("#status").has_class("-problem")

    said, problem = drive(app, steps)
    assert said == ("demo · all clusters · cannot read the data directory (database is "
                    "locked): retrying; the tables show the last snapshot")
    assert problem


def test_no_color(demo, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(demo)

    async def steps(pilot):
        from textual.widgets import DataTable

        table = app.query_one("#clusters-table", DataTable)
        return app.no_color, table.get_component_rich_style("datatable--cursor").reverse

    assert drive(app, steps) == (True, True)


# -- the command ----------------------------------------------------------------------------------


def test_command_json_is_one_snapshot(jl, demo):
    path, _ = demo
    result = jl("--data-dir", str(path), "--cluster", "keast", "dashboard", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [c["name"] for c in doc["clusters"]] == ["keast"]
    assert doc["clusters"][0]["mirrors"][0]["mirror_topic_name"] == "orders"


def test_command_json_refuses_a_feed_it_would_not_show(jl, demo):
    """--json prints one snapshot of the tables, which has no Feed tab: --feed with it is a
    usage error naming the option, not an option silently dropped."""
    path, _ = demo
    result = jl("--data-dir", str(path), "dashboard", "--json", "--feed", "orders.>")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["description"] == (
        "--feed orders.>: the Feed tab follows a subject in the terminal UI; --json prints "
        "one snapshot of the tables, which has no feed (use `jetlink sub SUBJECT --json` for "
        "its messages)")


def test_command_refuses_what_would_show_nothing_asked_for(jl, demo, tmp_path):
    """A data directory that does not exist and a --cluster it does not have are refused
    as a read verb refuses them (exit 1, the closest name), never an empty dashboard;
    nothing is created."""
    path, _ = demo
    missing = tmp_path / "none"
    gone = (f"data directory {missing} does not exist (nothing to read or act on: the "
            "first command that creates something makes it)")
    r = jl("--data-dir", str(missing), "dashboard")
    assert (r.exit_code, r.stderr) == (1, f"jetlink: error: {gone}\n")
    r = jl("--data-dir", str(missing), "dashboard", "--json")
    assert (r.exit_code, json.loads(r.stdout)) == (1, {"error": {"description": gone}})
    r = jl("--data-dir", str(path), "--cluster", "kesat", "dashboard")
    assert (r.exit_code, r.stderr) == (
        1, "jetlink: error: cluster kesat not found: did you mean keast?\n")
    r = jl("--data-dir", str(path), "--cluster", "kesat", "dashboard", "--json")
    assert (r.exit_code, json.loads(r.stdout)) == (
        1, {"error": {"description": "cluster kesat not found"}})
    assert not missing.exists()


def test_a_damaged_cluster_holding_the_only_mirrors_is_said_not_an_empty_table(tmp_path):
    """The mirrors' cluster damaged, no mirror readable anywhere: the readiness checks still
    run, so what they could not read is a problem (the status line), not empty tables
    alone."""
    from jetlink.core.clock import ManualClock
    from jetlink.core.jetstream import JetStream
    from jetlink.core.store import DataDir

    clock = ManualClock(1_767_225_600_000_000_000)
    path = tmp_path / "d"
    dd = DataDir(path)
    dd.add_cluster("west", "nats")
    dd.add_cluster("east", "nats")
    JetStream(dd.open("west"), clock).add_stream({"name": "ORDERS", "subjects": ["o.>"]})
    JetStream(dd.open("east"), clock).add_stream(
        {"name": "ORDERS_EAST", "mirror": {"name": "ORDERS",
                                           "external": {"api": "$JS.west.API"}}})
    dd.close()
    (path / "east.db").write_bytes(b"x\n")
    doc = load(path, clock).to_json()
    [problem] = doc["problems"]
    assert problem.startswith("failover readiness: could not read cluster east: "), problem


def test_a_damaged_cluster_is_shown_damaged_with_its_document(demo):
    """As cluster ls lists it: the JSON entry has its name, path and error, kind / down /
    created null; the Clusters table says DAMAGED, the others are shown as they are."""
    path, clock = demo
    (path / "junk.db").write_bytes(b"garbage, not SQLite\n" * 10)
    doc = load(path, clock).to_json()
    (junk,) = [c for c in doc["clusters"] if c["name"] == "junk"]
    assert {k: junk[k] for k in ("name", "kind", "down", "path", "created")} == {
        "name": "junk", "kind": None, "down": None, "path": str(path / "junk.db"),
        "created": None}
    assert "is not a SQLite database" in junk["error"]
    # dr check's CRITICAL for what it could not read is said (the status line), as dr says it
    [problem] = doc["problems"]
    assert problem.startswith("failover readiness: could not read cluster junk"), problem
    app = make_app(demo)

    async def steps(pilot):
        rows = {r[0]: r for r in cells(app, "clusters")}
        assert rows["junk"][2] == "DAMAGED" and rows["west"][2] == "down"
        assert rows["east"][2] == "up"
        # no counts for a cluster that could not be read ("-", never 0), and no Down key
        assert rows["junk"][3:7] == ["-", "-", "-", "-"] and rows["east"][3] != "-"
        await select(pilot, "clusters", "junk")
        offered = (app.check_action("down", ()), app.check_action("up", ()))
        await select(pilot, "clusters", "east")
        return offered, app.check_action("down", ())

    assert drive(app, steps) == ((False, False), True)


def test_an_actions_outcome_shows_while_a_problem_lasts(demo):
    """A lasting problem (a cluster that cannot be read) stays on the status line, and the
    outcome of an action taken meanwhile (a replication step) shows after it."""
    path, _clock = demo
    (path / "junk.db").write_bytes(b"garbage, not SQLite\n" * 10)
    async def steps(pilot):
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        return status(pilot.app)

    line = drive(make_app(demo), steps, size=(200, 30))
    assert "failover readiness: could not read cluster junk" in line, line
    assert "Replication step:" in line, line
    # a problem longer than the line gives way (its end cut at a word, "…") to the outcome
    line = drive(make_app(demo), steps)
    assert "failover readiness: could not… · Replication step: 0" in line, line
    (path / "junk.db").write_bytes(b"not a db" * 100)
    line = drive(make_app(demo), steps, size=(80, 24))
    assert "failover readiness… · Replication s" in line[:80], line


def test_command_refuses_without_a_terminal(jl):
    result = jl("dashboard")
    assert result.exit_code == 1
    assert result.stderr == ("jetlink: error: the dashboard needs a terminal (stdin, stdout "
                             "and stderr): run it in one, or use --json for one snapshot of "
                             "its data\n")


def test_command_refuses_a_refresh_under_a_second(jl):
    result = jl("dashboard", "--refresh", "500ms")
    assert result.exit_code == 2
    assert "at most once a second" in result.stderr
    # --json prints one snapshot, but a value the option never takes is refused all the same
    assert jl("dashboard", "--refresh", "500ms", "--json").exit_code == 2
    assert jl("dashboard", "--refresh", "1s", "--json").exit_code == 0


@pytest.mark.parametrize(("feed", "code", "said"), [
    ("a..b", 2, "--feed: subject 'a..b' is not valid: tokens separated by '.', none empty, no "
                "spaces or tabs, '>' only as the last token"),
    ("a.b@locl", 1, "cluster locl not found: did you mean local?"),
    ("a.b@", 2, "invalid cluster name '': use 1 to 64 letters, digits, '_' or '-'"),
    ("", 2, "--feed: subject '' is not valid: tokens separated by '.', none empty, no spaces "
            "or tabs, '>' only as the last token"),
])
def test_command_refuses_a_feed_it_could_not_follow(jl, feed, code, said):
    """--feed's subject and cluster are checked before the UI starts, as jetlink sub checks
    them (they failed only inside the Feed tab, and the command then exited 0); a good one
    goes on to the terminal check."""
    ok(jl("stream", "add", "S", "--subjects", "s.>", "--defaults"))
    before = data_dir_bytes(jl.data)
    r = jl("dashboard", "--feed", feed)
    assert (r.exit_code, r.stderr) == (code, f"jetlink: error: {said}\n")
    assert data_dir_bytes(jl.data) == before
    r = jl("dashboard", "--feed", "s.>@local")
    assert (r.exit_code, "needs a terminal" in r.stderr) == (1, True), r.stderr


# -- snapshots (pytest-textual-snapshot): few, small, deterministic ----------------------------


def test_snapshot_main_screen_80x24(demo, snap_compare):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)

    assert snap_compare(make_app(demo), terminal_size=(80, 24), run_before=run_before)


def test_snapshot_failover_confirmation(demo, snap_compare):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("4")
        await select(pilot, "mirrors", "orders@keast")
        await pilot.press("F")
        await settle(pilot)

    assert snap_compare(make_app(demo), terminal_size=(80, 24), run_before=run_before)


def test_snapshot_wide_terminal_with_detail_pane(demo, snap_compare):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("4")
        await select(pilot, "mirrors", "orders@keast")  # (a link's document has a random id)
        await settle(pilot)

    assert snap_compare(make_app(demo), terminal_size=(160, 40), run_before=run_before)


def test_docs_screenshot_is_current(tmp_path):
    """docs/dashboard.svg is what scripts/dashboard_svg.py renders (ids Rich derives from
    style objects aside): run the script after changing what the main screen shows."""
    import re

    out = tmp_path / "dashboard.svg"
    assert _script().main(["--out", str(out)]) == 0

    def norm(text):
        return re.sub(r"terminal-\d+", "terminal", text)

    assert norm(out.read_text()) == norm((ROOT / "docs" / "dashboard.svg").read_text())


def test_the_step_key_runs_one_replication_step(demo, monkeypatch):
    """s is one bounded step (the action's own), not that step and the one every other
    action is followed by."""
    from jetlink.core import step as common

    calls = []
    real = common.bounded_step

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(common, "bounded_step", counted)
    path, clock = demo
    dd = DataDir(path)
    dd.set_down("west", False)
    dd.close()
    app = make_app(demo)

    async def step(pilot):
        await pilot.press("s")
        await settle(pilot)
        return status(app)

    assert "Replication step: 24 messages copied" in drive(app, step)
    assert len(calls) == 1


def test_following_survives_a_failing_step_and_says_so_once(demo, monkeypatch):
    from jetlink.core import step as common

    path, clock = demo
    dd = DataDir(path)
    dd.set_down("west", False)
    real = common.bounded_step
    calls = []

    def step(*a, **kw):
        calls.append(1)
        if 2 <= len(calls) <= 4:
            raise RuntimeError("a bug in one step")
        return real(*a, **kw)

    monkeypatch.setattr(common, "bounded_step", step)
    app = make_app(demo, refresh=1)
    seen: list[str] = []  # every message the status line was given, in order (not sampled:
    # a message replaced within a sampling interval would be missed on a loaded machine)

    def get_message(self):
        return self.__dict__.get("_said", "")

    def set_message(self, value):
        self.__dict__["_said"] = value
        seen.append(value)

    monkeypatch.setattr(type(app), "message", property(get_message, set_message),
                        raising=False)

    async def steps(pilot):
        JetStream(dd.open("west"), clock).publish("orders.eu.x", b"while following")
        # Steps at once: the follow loop is what is tested. Set after mounting, so the loads'
        # interval (set_interval at mount) stays at its second: ticking every 0.05 s, a load
        # would always be running or deferred and settle() would never see the app idle.
        app.refresh_seconds = 0.05
        await pilot.press("f")
        deadline = time.monotonic() + WAIT_TIMEOUT
        while time.monotonic() < deadline:
            await pilot.pause(0.05)
            if app.message == "Following: replicating again" and app.followed:
                break  # the failed steps were said, then the one that succeeded
        result = status(app), app.following
        await pilot.press("f")
        await settle(pilot)
        return result

    try:
        final, following = drive(app, steps)
    finally:
        dd.close()
    assert following and f"following: {app.followed:,} copied" in final and app.followed
    failed = [m for m in dict.fromkeys(seen) if "step failed" in m]
    assert failed == ["Following: step failed, retrying: RuntimeError: a bug in one step"]
    assert "Following: replicating again" in seen


def test_a_long_data_directory_path_gives_way_on_the_status_line(demo):
    """The status line is one line: a long label keeps its end, and the state after it
    (scope, update time, following, the last message) stays in view."""
    label = "/srv/replication/" + "very-long-directory-name/" * 6 + "dr-data"
    app = make_app(demo, label=label)

    async def steps(pilot):
        return status(pilot.app), pilot.app.query_one("#status").content_size.width

    line, width = drive(app, steps, size=(80, 24))
    assert len(line) <= width
    assert line.startswith("…") and line.split(" · ")[0].endswith("/dr-data")
    assert " · all clusters · updated " in line
    short, _ = drive(make_app(demo), steps, size=(80, 24))  # a short one is left whole
    assert short.startswith("demo · all clusters · updated ")


def test_a_split_brain_shows_in_failover_ready(demo):
    """BACKUP@east failed over on its origin's subjects, then west up again: the
    agreements table gets the promoted stream's row (its old origin) with dr check's
    CRITICAL split brain in Failover Ready; once fenced, OK."""
    from jetlink.core import dr
    from jetlink.core.backend import EmbeddedBackend

    path, clock = demo
    dd = DataDir(path)
    dd.set_down("west", False)
    subjects = JetStream(dd.open("west"), clock).stream_info("ORDERS").config.subjects
    dd.set_down("west", True)
    with EmbeddedBackend(path, "east", lambda: clock, step=False) as backend:
        dr.promote(backend.site(), "BACKUP", failover=True, subjects=list(subjects))
    dd.set_down("west", False)
    dd.close()
    snap = load(path, clock)
    row = [a for a in snap.agreements if a.stream == "BACKUP"]
    assert [(a.cluster, a.kind, a.origin) for a in row] == [("east", "promoted", "ORDERS@west")]
    assert snap.readiness[("east", "BACKUP")] == (
        f"CRITICAL: Split brain: the old origin ORDERS in cluster west answers again and takes "
        f"{', '.join(subjects)}, as BACKUP does: a publish there is stored on both sides; fence "
        "it: jetlink dr fence --from west (or jetlink stream failback BACKUP)")
    with EmbeddedBackend(path, "east", lambda: clock, step=False) as backend:
        report = dr.plan_fence(backend, ["west"], clusters=["east"], clock=clock).carry_out()
    assert [(i.name, i.action) for i in report.items] == [("ORDERS", "fenced")]
    assert load(path, clock).readiness[("east", "BACKUP")] == "OK"  # fenced: no blocker


# -- the Regions tab -----------------------------------------------------------------------------


@pytest.fixture
def west_down(jl, cli_clock):
    """west: ORDERS on orders.> (2 messages, a consumer) and the bucket CONFIG; east: their
    mirrors, caught up, the positions synced; then west down (tests/test_dr_fence.py's
    ``returned`` before its failover). (data directory, clock) as :func:`demo`."""
    from helpers import ok

    def at(cluster, *args):
        return ok(jl("--cluster", cluster, *args))

    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    at("west", "stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults")
    at("east", "stream", "add", "ORDERS_EAST", "--mirror", "ORDERS@west", "--defaults")
    at("west", "kv", "add", "CONFIG")
    at("west", "kv", "put", "CONFIG", "a", "1")
    at("east", "kv", "add", "CONFIG", "--mirror", "CONFIG@west")
    at("west", "pub", "orders.new", "one")
    at("west", "pub", "orders.new", "two")
    at("west", "consumer", "add", "ORDERS", "billing", "--defaults")
    ok(jl("replicate"))
    at("east", "positions", "sync")
    ok(jl("cluster", "down", "west"))
    return jl.data, cli_clock


def _set_down(path, cluster, down):
    dd = DataDir(path)
    try:
        dd.set_down(cluster, down)
    finally:
        dd.close()


async def region_key(pilot, key, region="west"):
    """On the Regions tab, ``key`` on ``region``'s row, its plan (or refusal) shown."""
    await pilot.press("7")
    await select(pilot, "regions", region)
    await pilot.press(key)
    await settle(pilot)


REGION_COLUMNS = ["Region", "Split Brain", "Objects", "Ready", "Not Ready", "Worst RP",
                  "At Risk", "Failed Over", "Fenced"]


def test_regions_view_counts_a_regions_objects(west_down):
    """One row per region: west's two mirrors on east, ready (dr check: WARNING, the origin
    does not answer), nothing at risk; the same counts in dashboard --json."""
    path, clock = west_down
    snap = load(path, clock)
    assert [(o.side, o.region, o.kind, o.name, o.failed_over, o.status)
            for o in snap.region_objects] == [
        ("east", "west", "kv", "CONFIG", False, "WARNING"),
        ("east", "west", "stream", "ORDERS_EAST", False, "WARNING")]
    region = snap.to_json()["regions"][0]
    assert {k: v for k, v in region.items() if k != "members"} == {
        "region": "west", "down": True, "objects": 2, "mirrors": 2, "failed_over": 0,
        "ready": 2, "not_ready": 0, "messages_at_risk": 0, "recovery_point_seconds": 0.0,
        "fenced": 0, "split_brain": 0, "unfenced": 0}
    app = make_app(west_down)

    async def steps(pilot):
        from textual.widgets import DataTable

        await pilot.press("7")
        table = app.query_one("#regions-table", DataTable)
        return (app.active_tab, app.current_table(),
                [str(c.label) for c in table.columns.values()], cells(app, "regions"))

    tab, table, columns, rows = drive(app, steps)
    assert (tab, table, columns) == ("regions", "regions", REGION_COLUMNS)
    assert rows == [["west (down)", "0", "2", "2", "0", "0s", "0", "0", "-"]]


def test_region_failover_of_an_answering_region_warns_of_the_split_brain(west_down):
    """West answers: the dialog shows dr failover --dry-run's warning (both sides would take
    writes until fenced) above the plan, in the dashboard's terms (E fences)."""
    path, _clock = west_down
    _set_down(path, "west", False)
    app = make_app(west_down)

    async def steps(pilot):
        await region_key(pilot, "F")
        lines = list(app.screen.lines)
        await pilot.press("n")
        await settle(pilot)
        return lines

    lines = drive(app, steps)
    assert lines[1] == (
        "Warning: CONFIG@west, ORDERS@west answer now: after the failover they and the "
        "promoted side would both take writes (a split brain) until fenced: press E on "
        "region west after it")


def test_a_fence_nothing_can_fence_says_why_not_that_it_was_done(west_down):
    """West down after its failover: E's dialog says nothing can be fenced and why (as dr
    fence exits 1), not that every old origin is fenced already."""
    from jetlink.core.backend import EmbeddedBackend
    from jetlink.core.dr.region import plan_region

    path, clock = west_down
    with EmbeddedBackend(path, "local", lambda: clock, step=False) as backend:
        plan_region(backend, "failover", ["west"], clock=clock).carry_out()
    app = make_app(west_down)

    async def steps(pilot):
        await region_key(pilot, "E")
        return list(app.screen.lines)

    lines = drive(app, steps)
    assert lines[0].startswith("Nothing can be fenced in west now: CONFIG@west (unreachable: ")


def test_region_failover_shows_the_plan_then_fails_over(west_down):
    """F on a region: its plan (core/dr/region.py, as dr failover --from --dry-run shows
    it) in the dialog; cancelled nothing changes; confirmed every mirror is promoted and the
    outcome is shown; the row counts them failed over."""
    from jetlink.cli.dr import region_lines
    from jetlink.core.backend import EmbeddedBackend
    from jetlink.core.dr.region import plan_region

    path, clock = west_down
    with EmbeddedBackend(path, "local", lambda: clock, step=False) as backend:
        plan = region_lines(plan_region(backend, "failover", ["west"], clock=clock)
                            .preview().to_json(), plan_only=True)
    app = make_app(west_down)

    async def steps(pilot):
        from jetlink.cli.dashboard.app import ConfirmScreen

        await region_key(pilot, "F")
        assert isinstance(app.screen, ConfirmScreen)
        asked = (app.screen.title_text, list(app.screen.lines))
        await pilot.press("n")
        await settle(pilot)
        cancelled = (status(app), stream_info(path, "east", "ORDERS_EAST")["config"])
        await pilot.press("F")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen) and app.screen.confirm is None
        outcome = (app.screen.title_text, list(app.screen.lines), status(app))
        await pilot.press("n")  # closes it
        await settle(pilot)
        return asked, cancelled, outcome, cells(app, "regions"), type(app.screen).__name__

    asked, cancelled, outcome, rows, screen = drive(app, steps)
    assert asked == ("Fail region west over? Each mirror of it below stops mirroring and "
                     "becomes a normal stream (or topic).", ["2 objects of west to fail over",
                                                              *plan])
    assert plan[0] == ("Region failover of west: 2 objects, 0 messages at risk as last "
                       "reported (an origin does not answer), recovery point 0s, 1 consumer "
                       "to place")
    assert "Failover: cancelled, nothing changed" in cancelled[0]
    assert cancelled[1]["mirror"]["name"] == "ORDERS"
    title, lines, said = outcome
    assert title == "Failover of region west"
    assert lines[0] == "Region failover of west: 2 done, 0 done earlier, 0 skipped, 0 failed"
    assert lines[1] == plan[0] and len(lines) == 4 and "Region failover of west: 2 done" in said
    assert [line.split(": ")[1].split(" ")[0] for line in lines[2:4]] == ["done", "done"]
    info = stream_info(path, "east", "ORDERS_EAST")
    assert "mirror" not in info["config"] and info["config"]["subjects"] == ["orders.>"]
    assert "mirror" not in stream_info(path, "east", "KV_CONFIG")["config"]
    assert rows == [["west (down)", "0", "2", "0", "0", "-", "-", "2", "0/2"]]
    assert screen == "Screen"  # the outcome closed: back to the tables


def _failed_over_and_back(path, clock):
    """west's mirrors failed over (dr failover --from west), then west up again."""
    from jetlink.core.backend import EmbeddedBackend
    from jetlink.core.dr.region import plan_region

    with EmbeddedBackend(path, "local", lambda: clock, step=False) as backend:
        report = plan_region(backend, "failover", ["west"], clock=clock).carry_out()
    assert report.count("done") == 2
    _set_down(path, "west", False)


def test_a_split_brain_shows_and_fence_ends_it(west_down):
    """west back after the failover: both old origins take the promoted streams' subjects,
    a split brain of 2 in the region's row; E shows dr fence's plan, confirmed it fences
    them: 2/2 fenced, no split brain."""
    path, clock = west_down
    _failed_over_and_back(path, clock)
    app = make_app(west_down)

    async def steps(pilot):
        from jetlink.cli.dashboard.app import ConfirmScreen

        await pilot.press("7")
        await select(pilot, "regions", "west")
        before = cells(app, "regions")
        keys = {b.binding.action for b in app.active_bindings.values()
                if app.check_action(b.binding.action, ())} & {"failover", "failback", "fence"}
        await pilot.press("E")
        await settle(pilot)
        asked = list(app.screen.lines)
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        outcome = list(app.screen.lines)
        await pilot.press("escape")
        await settle(pilot)
        return before, keys, asked, outcome, cells(app, "regions")

    before, keys, asked, outcome, after = drive(app, steps)
    assert before == [["west", " 2 ", "2", "0", "0", "-", "-", "2", "0/2"]]
    assert keys == {"failback", "fence"}  # nothing left to fail over
    assert asked == [
        "2 old origins of west to fence: they take no writes until failback --switch",
        "kv CONFIG@west (failed over to CONFIG@east): to fence: $KV.CONFIG.> -> "
        "$JETLINK.fenced.KV_CONFIG",
        "stream ORDERS@west (failed over to ORDERS_EAST@east): to fence: orders.> -> "
        "$JETLINK.fenced.ORDERS"]
    assert outcome[0] == "Fenced 2 old origins of west"
    assert outcome[-1] == ("Fenced 2 old origins of west: stream|kv failback NAME --switch "
                           "(dr failback --from west --switch: all of them) undoes it")
    assert after == [["west", "0", "2", "0", "0", "-", "-", "2", "2/2"]]
    assert stream_info(path, "west", "ORDERS")["config"]["subjects"] == [
        "$JETLINK.fenced.ORDERS"]


def test_region_failback_shows_its_plan_first(west_down):
    """B: dr failback's plan (each old origin's tail counted) in the dialog; cancelled,
    nothing changes."""
    path, clock = west_down
    _failed_over_and_back(path, clock)
    app = make_app(west_down)

    async def steps(pilot):
        await region_key(pilot, "B")
        asked = (app.screen.title_text, list(app.screen.lines))
        await pilot.press("n")
        await settle(pilot)
        return asked, status(app)

    (title, lines), said = drive(app, steps)
    assert title.startswith("Fail region west back?")
    assert lines[:2] == ["2 objects of west to fail back", "Region failback of west: 2 objects"]
    assert [line.split(": ")[1].split(" (")[0] for line in lines[2:]] == ["planned", "planned"]
    assert "Failback: cancelled, nothing changed" in said
    assert "mirror" not in stream_info(path, "east", "ORDERS_EAST")["config"]


def test_a_refused_region_plan_is_shown_to_close(demo):
    """The demo's west: BACKUP's subjects are unknown (never synced), so dr failover --from
    west refuses the plan; the dialog shows it with the way out, and asks nothing."""
    app = make_app(demo)

    async def steps(pilot):
        from jetlink.cli.dashboard.app import ConfirmScreen

        await pilot.press("7")
        rows = cells(app, "regions")
        await pilot.press("down")  # kwest (a Kafka region: the mirror topic), then west
        await pilot.press("F")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        shown = (app.screen.confirm, list(app.screen.lines))
        await pilot.press("y")  # nothing to confirm: y closes it too
        await settle(pilot)
        return rows, shown, type(app.screen).__name__

    rows, (confirm, lines), screen = drive(app, steps)
    assert rows == [["kwest", "0", "1", "1", "0", "5s", "5", "0", "-"],
                    ["west (down)", "0", "2", "0", "2", "16s", "0", "0", "-"]]
    assert confirm is None and screen == "Screen"  # back to the tables
    assert lines[0].startswith("The region failover of west is refused: BACKUP@east (")
    assert lines[-1] == ("jetlink dr failover --from west --skip NAME (or --skip-unready) "
                         "leaves them out")
    assert "mirror" in stream_info(demo[0], "east", "BACKUP")["config"]


def test_snapshot_regions_with_a_split_brain(demo, snap_compare):
    """The demo's BACKUP failed over on its origin's subjects, then west up: the Regions tab
    with the split brain."""
    from jetlink.core import dr
    from jetlink.core.backend import EmbeddedBackend

    path, clock = demo
    dd = DataDir(path)
    dd.set_down("west", False)
    subjects = JetStream(dd.open("west"), clock).stream_info("ORDERS").config.subjects
    dd.set_down("west", True)
    dd.close()
    with EmbeddedBackend(path, "east", lambda: clock, step=False) as backend:
        dr.promote(backend.site(), "BACKUP", failover=True, subjects=list(subjects))
    _set_down(path, "west", False)

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("7")
        await settle(pilot)

    assert snap_compare(make_app(demo), terminal_size=(80, 24), run_before=run_before)


def test_the_wide_detail_pane_shows_an_agreements_stream(demo):
    """From 150 columns the selected item's document shows beside the tables: for a row of
    the agreements table, its stream's StreamInfo; at once when the terminal widens."""
    app = make_app(demo)

    async def steps(pilot):
        await pilot.press("2", "tab", "down")
        await pilot.pause(0.1)
        assert app.current_table() == "agreements"
        assert str(app.query_one("#detail").render()).strip() == ""
        await pilot.resize_terminal(160, 45)
        await pilot.pause(0.1)
        return str(app.query_one("#detail").render())

    shown = drive(app, steps, size=(100, 30))
    assert '"mirror"' in shown and '"ORDERS"' in shown


def test_a_groups_detail_is_titled_with_the_group(demo):
    app = make_app(demo)

    async def steps(pilot):
        await pilot.press("5")
        await select(pilot, "groups", "billing")
        await pilot.press("i")
        await pilot.pause(0.1)
        return str(app.screen.query_one("#detail-title").render())

    assert drive(app, steps).startswith("Consumer group billing@")


def test_a_region_failback_left_to_manual_steps_says_so(demo):
    """B on a Kafka region whose mirror topic was failed over: nothing jetlink runs, the
    step left by hand shown, and no claim that the failback was done."""
    app = make_app(demo)

    async def steps(pilot):
        await pilot.press("4")
        await select(pilot, "mirrors", "orders@keast")
        await pilot.press("F")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        await region_key(pilot, "B", "kwest")
        return list(app.screen.lines)

    lines = drive(app, steps)
    assert lines[0] == "Nothing jetlink runs: 1 object of kwest to fail back by hand (below)"
    assert "jetlink --cluster kwest mirrors truncate-and-restore orders --link" in \
        "\n".join(lines[1:])


def test_a_dialog_fits_a_narrow_terminal(demo):
    """At 60 columns the confirmation dialog narrows to the screen: both buttons show."""
    app = make_app(demo)

    async def steps(pilot):
        from textual.widgets import Button

        await pilot.press("2")
        await select(pilot, "streams", "ARCHIVE")
        await pilot.press("x")
        await settle(pilot)
        shown = [(str(b.label), b.region.x, b.region.right)
                 for b in app.screen.query("#confirm-buttons Button").results(Button)]
        await pilot.press("n")
        return shown

    buttons = drive(app, steps, size=(60, 15))
    assert [label for label, _x, _right in buttons] == ["Purge (y)", "Cancel (n)"]
    assert all(0 <= x and right <= 60 for _label, x, right in buttons), buttons


def test_a_region_plan_with_an_object_done_before_counts_both(west_down, jl):
    """One of west's two mirrors failed over already: the dialog's headline says 1 of 2
    objects, as the plan below it counts 2."""
    from helpers import ok

    ok(jl("--cluster", "east", "stream", "failover", "ORDERS_EAST", "--subjects", "orders.>",
          "-f"))
    app = make_app(west_down)

    async def steps(pilot):
        await region_key(pilot, "F")
        return list(app.screen.lines)

    lines = drive(app, steps)
    assert lines[0] == "1 of 2 objects of west to fail over"
    assert lines[1].startswith("Region failover of west: 2 objects")


@pytest.mark.parametrize(("lag", "stale", "never", "shown"), [
    (0, False, False, "0"),
    (1234, False, False, "1,234"),
    (62, True, False, "62 (last reported)"),
    (0, True, True, "unknown"),  # the origin never heard from: no figure
    (7, False, True, "7"),  # counted now (never active yet, but current)
])
def test_a_lag_cell(lag, stale, never, shown):
    from jetlink.cli.dashboard.app import _lag

    assert _lag(lag, stale, never).plain == shown


def test_readiness_that_cannot_be_checked_is_said_and_counts_nothing(demo, monkeypatch):
    """The readiness checks failing (a data directory the check may not read): the regions'
    objects are still listed, but their grades, old origins back and messages at risk are
    unknown (``?``, null), never counted as 0 or not ready, and the status line says why."""
    from jetlink.core import dr
    from jetlink.core.errors import JetlinkError

    path, clock = demo
    graded = load(path, clock)
    assert graded.graded and graded.problems == [] and graded.regions()
    assert all(isinstance(r.ready, int) for r in graded.regions())

    def refused(*_args, **_kw):
        raise JetlinkError("the data directory in force is read-only")

    monkeypatch.setattr(dr, "check_readiness", refused)
    snap = load(path, clock)
    said = ("the failover readiness could not be checked (the data directory in force is "
            "read-only): grades and regions unknown")
    assert snap.problems == [said] and not snap.graded
    rows = snap.regions()
    assert [len(r.objects) for r in rows] == [len(r.objects) for r in graded.regions()]
    for r in rows:
        assert (r.ready, r.not_ready, r.messages_at_risk, r.returned("split brain"),
                r.worst_seconds) == (None, None, None, None, None)
    doc = snap.to_json()
    assert doc["problems"] == [said]
    assert {(d["ready"], d["split_brain"]) for d in doc["regions"]} == {(None, None)}
    app = make_app(demo)

    async def steps(pilot):
        await pilot.press("7")
        await pilot.pause(0.2)
        return status(app), app.query_one("#status").has_class("-problem"), cells(app, "regions")

    line, problem, regions = drive(app, steps, size=(200, 30))
    assert said in line and problem
    assert regions and all(row[1] == "?" and row[3] == "?" and row[4] == "?" for row in regions)


def test_worst_recovery_point_is_unknown_when_a_mirror_never_heard_from_its_origin():
    """As the region plan's totals say it: one mirror with an unknown recovery point makes
    the region's worst unknown, not the worst of the others."""
    from jetlink.cli.dashboard.data import RegionObject, RegionRow

    known = RegionObject("east", "west", "stream", "A", False, "OK", 0, 0.0)
    behind = RegionObject("east", "west", "stream", "B", False, "WARNING", 3, 42.5)
    never = RegionObject("east", "west", "stream", "C", False, "CRITICAL", None, None)
    done = RegionObject("east", "west", "stream", "D", True)  # failed over: not counted
    assert RegionRow("west", False, [known, behind, done]).worst_seconds == 42.5
    assert RegionRow("west", False, [known, never, done]).worst_seconds is None


def test_a_data_directory_moved_away_while_watching_is_said(demo):
    path, clock = demo
    gone = path.with_name(path.name + ".gone")
    snap = load(gone, clock)
    assert snap.clusters == [] and snap.problems == [
        f"the data directory {gone} is not there (moved or removed?): nothing to show"]
    assert not gone.exists()


@pytest.mark.parametrize(("outcome", "line", "severity"), [
    (actions.Outcome(True, "Replication step: 0 messages copied, 0 records mirrored",
                     ["ORDERS@east: cannot read cluster east", "link L@k: refused"], warns=True),
     "Replication step: 0 messages copied, 0 records mirrored · 2 with errors: ORDERS@east: "
     "cannot read cluster east", "warning"),
    (actions.Outcome(True, "Stream A@east was failed over", ["Promotion:", "  Action: failover",
                                                            ""]),
     "Stream A@east was failed over · 2 more lines in the notice", "information"),
    (actions.Outcome(False, "jetlink: error: refused\nsecond line"),
     "jetlink: error: refused · 1 more line in the notice", "error"),
    # text, never markup: a binding's table name is no style
    (actions.Outcome(False, "jetlink: error: [clusters.west] server: refused", ["[/b] x"]),
     "jetlink: error: [clusters.west] server: refused · 1 more line in the notice", "error"),
])
def test_an_outcome_is_one_status_line_and_the_whole_report_in_a_notice(demo, outcome, line,
                                                                        severity):
    """The status bar is one row: an outcome's further lines would be cut off unseen there;
    they are counted on it and shown whole in a notice."""
    app = make_app(demo)

    async def steps(pilot):
        app._say(outcome)
        await pilot.pause(0.2)
        # (markup: False: shown as written, text, never markup)
        return status(app), [(n.message, n.severity, n.markup) for n in app._notifications]

    said, notices = drive(app, steps, size=(200, 30))
    assert said.endswith(line), said
    lines = [ln for ln in [*outcome.message.splitlines(), *outcome.details] if ln.strip()]
    assert notices == [("\n".join(lines), severity, False)]


def test_question_mark_shows_the_keys_of_what_is_selected_and_closes_them(demo):
    from textual.widgets import HelpPanel

    app = make_app(demo)

    async def steps(pilot):
        await pilot.press("question_mark")
        await pilot.pause(0.1)
        shown = bool(app.screen.query(HelpPanel))
        await pilot.press("question_mark")
        await pilot.pause(0.1)
        closed = not app.screen.query(HelpPanel)
        await pilot.press("f1")
        await pilot.pause(0.1)
        from rich.console import Console
        from textual.widgets._key_panel import BindingsTable

        console = Console(width=200, record=True)
        console.print(app.screen.query_one(BindingsTable).render_bindings_table())
        return shown, closed, bool(app.screen.query(HelpPanel)), console.export_text()

    shown, closed, again, text = drive(app, steps)
    assert (shown, closed, again) == (True, True, True)
    # each key with what it does, not its label alone
    assert "Step one replication step (replicate)" in text, text
    assert "Info the API document of the row" in text, text


# -- a failed-over mirror topic, a damaged source, the feed's cluster, Ctrl-C, the line ------


def test_an_unfenced_returned_source_topic_is_a_split_brain_and_no_stream_agreement(demo, jl):
    """orders@keast failed over while kwest answers: dr check calls its old source topic,
    unfenced and taking writes, a split brain (CRITICAL); the Regions tab and
    dashboard --json count it so. It is a mirror topic (the Links tab's): no row among the
    streams' agreements."""
    path, clock = demo
    dd = DataDir(path)
    [res] = Mirrors(dd, "keast", clock).failover(["orders"], "dr")
    dd.close()
    assert res.ok
    check = jl("--data-dir", str(path), "--cluster", "keast", "dr", "check")
    assert check.exit_code == 2 and "(a split brain)" in check.stdout, check.stdout
    doc = jl("--data-dir", str(path), "dashboard", "--json")
    assert doc.exit_code == 0, doc.output
    [kwest] = [r for r in json.loads(doc.stdout)["regions"] if r["region"] == "kwest"]
    assert (kwest["split_brain"], kwest["unfenced"], kwest["fenced"]) == (1, 0, 0)
    assert [(m["name"], m["old_origin"], m["split_brain"]) for m in kwest["members"]] == [
        ("dr/orders", "unfenced", True)]
    app = make_app(demo)

    async def steps(pilot):
        await pilot.press("7")
        regions = cells(app, "regions")
        await pilot.press("2")
        return regions, cells(app, "agreements")

    regions, agreements = drive(app, steps)
    assert [r[:2] for r in regions if r[0] == "kwest"] == [["kwest", " 1 "]]
    assert not [a for a in agreements if a[0] == "orders@keast"], agreements


def test_a_damaged_source_cluster_leaves_the_targets_own_topics_and_groups(demo):
    """kwest's database overwritten: keast (its link's target) still shows its topics and
    groups; its link is a row with kwest's error, keast's own row has none."""
    path, clock = demo
    healthy = load(path, clock)
    (path / "kwest.db").write_bytes(os.urandom(5000))
    snap = load(path, clock)
    rows = {c.name: c for c in snap.clusters}
    assert rows["kwest"].damaged and not rows["keast"].error
    assert (rows["keast"].topics, rows["keast"].links) == (1, 1)
    assert [g for g in snap.groups if g.cluster == "keast"] == [
        g for g in healthy.groups if g.cluster == "keast"] != []
    [link] = snap.links
    assert (link.cluster, link.name, link.mirrors, link.state) == ("keast", "dr", 1,
                                                                   "UNAVAILABLE")
    assert link.error == ("Source cluster 'kwest' is unreachable: cluster kwest cannot be "
                          "used (its database is damaged: see jetlink cluster check).")


def test_the_feed_refuses_a_cluster_the_data_directory_does_not_have(demo):
    """monitor.>@wets: no cluster wets, refused with the closest name, in the feed and on
    the status line; a subject without @ in the default cluster local, which the data
    directory does not have, likewise: the dashboard creates no cluster."""
    path, _ = demo
    app = make_app(demo)

    async def steps(pilot):
        from textual.widgets import RichLog

        await pilot.press("6", *"monitor.>@wets", "enter")
        log = app.query_one("#feed-log", RichLog)
        def feed() -> list[str]:
            return [line.text for line in log.lines]

        await until(pilot, lambda: len(log.lines) >= 2, "the feed's refusal", saw=feed)
        wets = ([line.text for line in log.lines], status(app))
        # no feed runs: the box has the focus again, and keys typed are the subject's (s, 2
        # are no replication step, no tab switch)
        box = app.query_one("#feed-subject")
        await until(pilot, lambda: app.focused is box, "the subject box focused again",
                    saw=lambda: app.focused)
        box.value = ""
        await pilot.press("s", "2")
        assert (box.value, app.active_tab) == ("s2", "feed")
        box.value = "monitor.>"
        await pilot.press("enter")
        await until(pilot, lambda: len(log.lines) >= 4, "the feed's second refusal", saw=feed)
        return wets, [line.text for line in log.lines][2:], status(app)

    (lines, said), local, said_local = drive(app, steps, size=(200, 30))
    assert lines == ["Subscribing on monitor.> in cluster wets",
                     "jetlink: error: cluster wets not found: did you mean west?"]
    assert said.endswith("Feed of monitor.> stopped: cluster wets not found: did you mean "
                         "west?")
    assert local == ["Subscribing on monitor.> in cluster local",
                     "jetlink: error: cluster local not found"]
    assert said_local.endswith("Feed of monitor.> stopped: cluster local not found")
    assert sorted(p.name for p in path.glob("*.db")) == [
        "east.db", "keast.db", "kwest.db", "west.db"]


def test_ctrl_c_ends_the_dashboard_interrupted(demo):
    """Ctrl-C quits (never Textual's "press ctrl+q"), also from a dialog or the filter box,
    with the return code the command exits with: 130, interrupted."""
    codes = []
    for keys in (["ctrl+c"], ["slash", "o", "ctrl+c"], ["4", "F", "ctrl+c"]):
        app = make_app(demo)

        async def steps(pilot, keys=keys):
            await pilot.press(*keys)
            await until(pilot, lambda: not app.is_running, "the app ended",  # noqa: B023
                        saw=lambda: type(app.screen).__name__)  # noqa: B023

        drive(app, steps)
        codes.append(app.return_code)
    assert codes == [130, 130, 130]


@pytest.mark.parametrize("how", ["ctrl-c", "sigint"])
def test_the_command_exits_130_on_ctrl_c_and_sigint(demo, how):
    """`jetlink dashboard` in a terminal: Ctrl-C typed, or SIGINT sent to it (kill -INT),
    ends it with 130, as docs/exit-codes.md says of every command."""
    import fcntl
    import pty
    import select
    import signal
    import struct
    import termios

    from helpers import wait_until

    path, _ = demo
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "JETLINK_"))}
    env["TERM"] = "xterm-256color"
    pid, fd = pty.fork()
    if pid == 0:  # the child: the command in a terminal
        os.execve(sys.executable, [sys.executable, "-m", "jetlink.cli.main", "--data-dir",
                                   str(path), "dashboard"], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    seen = bytearray()
    ended: dict[str, int] = {}

    def read() -> bytes:
        while select.select([fd], [], [], 0.05)[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen.extend(chunk)
        return bytes(seen)

    def exited() -> bool:
        read()
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            ended["code"] = os.waitstatus_to_exitcode(status)
        return bool(done)

    try:
        wait_until(lambda: b"keast" in read(), message="the dashboard on the terminal")
        if how == "ctrl-c":
            os.write(fd, b"\x03")
        else:
            os.kill(pid, signal.SIGINT)
        wait_until(exited, message="the dashboard ended")
    finally:
        if not ended:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    assert ended["code"] == 130
    assert b"ctrl+q" not in seen  # (never Textual's "press ctrl+q to quit")


def test_the_status_line_keeps_the_end_an_operator_needs(demo):
    """At 80 to 120 columns an outcome too long for the one-line status keeps its count of
    the notice's lines (said short) and a cancel its "nothing changed": the middle gives
    way."""
    outcome = actions.Outcome(True, "Region failover of west: 2 done, 0 done earlier, 0 "
                              "skipped, 0 failed", ["one", "two", "three"])

    async def steps(pilot):
        app = pilot.app
        app._say(outcome)
        await pilot.pause()
        said = status(app)
        app.message = ("Purge of stream " + "L" * 60 + "@east: cancelled, nothing changed")
        app._render_status()
        await pilot.pause()
        return said, status(app), app.query_one("#status").content_size.width

    for size in ((80, 24), (100, 30), (120, 30)):
        said, cancelled, width = drive(make_app(demo, label="/srv/replication/dr-data"),
                                       steps, size=size)
        assert len(said) <= width and len(cancelled) <= width, (said, cancelled)
        assert said.endswith(" · +3 in notice") and "Region fail" in said, said
        assert cancelled.endswith("…, nothing changed"), cancelled
