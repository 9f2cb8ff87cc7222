"""``jetlink dashboard``: watch replication live and act on it, in a terminal UI (Textual).

This module only defines the command; the application is cli/dashboard/app.py (imported when
the command runs: Textual stays out of every other command's start-up), its data layer
cli/dashboard/data.py, its actions cli/dashboard/actions.py.
"""

from __future__ import annotations

from typing import Annotated

import typer

from jetlink.cli.app import App
from jetlink.cli.options import WAIT, JsonOption


def dashboard(
    ctx: typer.Context,
    refresh: Annotated[
        str,
        typer.Option("--refresh", metavar="DURATION", parser=WAIT,
                     help="How often the tables are re-read (at least 1s)."),
    ] = "1s",
    feed: Annotated[
        str | None,
        typer.Option("--feed", metavar="SUBJECT",
                     help="Follow this subject in the Feed tab from the start "
                     "(SUBJECT@CLUSTER for another cluster than --cluster)."),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Watch replication live and act on it (TUI).

    Tabs (keys 1-7): Clusters (up/down, streams, buckets, topics, links); Streams with each
    mirror and source agreement (lag, last seen, error) and message-rate sparklines; KV
    buckets (values, history, TTL, mirrors and aggregates); Links with their mirror topics
    (status, per-partition lag and last source fetch offset, status time); Groups (offsets,
    lag); Feed, the messages published on a subject (jetlink sub semantics, e.g. a RePublish
    monitor subject); Regions, one row per region the mirrors' origins are in (split brain,
    objects, ready / not ready, worst recovery point, messages at risk, failed over,
    fenced). Enter shows the selected item's document.

    Keys: p/r pause/resume a link or mirror topic, P/F promote/fail over a mirror topic or
    NATS mirror (the dry run's lag and clamps are shown before confirming), F/B/E fail the
    selected region over / back or fence it (as dr failover|failback|fence --from: the plan
    is shown before confirming, then the outcome), d/u take a cluster down/up, s one
    replication step, f start/stop following (replicate --follow), x purge a stream, /
    filter by name, c cycle the clusters shown, q quit. Destructive keys confirm in a
    dialog. Shows every cluster unless --cluster (or JETLINK_CLUSTER) names one. With
    --json: one snapshot of what the tables show ({time, clusters: [...], regions: [...]}),
    no UI (and no --feed).

    With a live server in force (--server, NATS_URL, a context) it shows that server's
    JetStream domain: streams with the server's mirror and source infos (lag, last seen,
    error), consumers, KV buckets, the feed; P/F promote / fail over a mirror there
    (consumers placed, clamps shown in the dry run) and x purges a stream there.
    """
    from jetlink.cli import common
    from jetlink.cli.dashboard.actions import Source
    from jetlink.cli.stream_flags import parse_duration_flag
    from jetlink.core.errors import JetlinkError

    app = App.of(ctx)
    interval = parse_duration_flag(refresh, flag="--refresh", wait=True) / 1e9
    if interval < 1:  # (with --json too: a value the option never takes is refused)
        raise common.usage(f"--refresh {refresh}: the dashboard refreshes at most once a "
                           "second (give 1s or more)")
    scope = app.cluster if common.given(ctx.find_root(), "cluster") else None
    clock = common.make_clock()
    data = app.data_dir
    source = Source(data, app.target)  # a live server: its JetStream domain
    source.check(clock, scope)
    if app.json:
        if feed is not None:
            raise common.usage(f"--feed {feed}: the Feed tab follows a subject in the "
                               "terminal UI; --json prints one snapshot of the tables, "
                               "which has no feed (use `jetlink sub SUBJECT --json` for "
                               "its messages)")
        snap = source.load(data, clock, clusters=None if scope is None else (scope,))
        app.emit(snap.to_json())
        return
    if feed is not None:  # ('' too: no subject is no valid one)
        source.check_feed(feed, app.cluster, clock)
    from jetlink.cli import output

    if not output.is_interactive() or not output.stdout_is_terminal():
        raise JetlinkError("the dashboard needs a terminal (stdin, stdout and stderr): run it "
                           "in one, or use --json for one snapshot of its data")
    from jetlink.cli.dashboard.app import create_app

    dash = create_app(data, clock=clock, scope=scope, refresh=interval, feed=feed,
                      feed_cluster=app.cluster, source=source, loader=source.load,
                      label=source.label)
    dash.run()
    if dash.return_code:  # Ctrl-C or SIGINT: interrupted, as every command (130)
        raise typer.Exit(dash.return_code)


def register(app: typer.Typer) -> None:
    app.command("dashboard")(dashboard)
