"""``jetlink positions sync|ls``: the origin consumers' positions, kept on the mirror's side.

NATS copies a stream's messages to its mirror but not its consumers. ``positions sync``
reads the durable consumers of every mirror's origin (configs, ack floors) and writes them
to the KV bucket JETLINK_POSITIONS of the side the command addresses (the mirror's), once
or every --interval with --follow; ``stream|kv failover`` places the consumers from there
when the origin is gone, and says how old the positions are. ``positions ls`` shows what is
kept. The rules are core/dr/positions.py's, over the same interface on the embedded engine and
on a live server.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

import typer

from jetlink.cli import common, output
from jetlink.cli.app import App
from jetlink.cli.options import WAIT, JsonOption

positions_app = typer.Typer(
    name="positions",
    help="Sync origin consumers' positions to mirrors.",
    no_args_is_help=True,
)


def sleep(seconds: float) -> None:
    """The pause between passes of --follow (tests replace it)."""
    time.sleep(seconds)


def _ago(now_ns: int, ts: str | None) -> str:
    if not ts:
        return "never"
    from jetlink.core.clock import parse_rfc3339_nano

    return f"{output.since(max(now_ns - parse_rfc3339_nano(ts), 0))} ago"


def _side_there(app: App) -> None:
    """A side of the data directory that was never made (the default ``local`` while the
    clusters have other names) holds no mirror to sync: said, with the clusters there, never
    a quiet "nothing to sync" (a live server is its own side)."""
    from jetlink.core.errors import NotFoundError, did_you_mean

    def check(dd: Any) -> None:
        names = dd.cluster_names()
        if names and not dd.has_cluster(app.cluster):
            hint = did_you_mean(app.cluster, names)
            raise NotFoundError(
                f"cluster {app.cluster} not found{f' ({hint})' if hint else ''}: the data "
                f"directory holds {', '.join(names)}; give --cluster NAME, the side whose "
                "mirrors to sync", field="cluster")

    common.backend(app).either(data_dir=check, server=lambda _js: None)


def render_results(app: App, doc: dict[str, Any]) -> None:
    now = time.time_ns()
    if not doc["mirrors"]:
        output.line(app, "No mirror to sync on this side")
        return
    for r in doc["mirrors"]:
        if r["status"] == "synced":
            n = r["consumers"]
            output.line(app, f"Synced {n} consumer position{'s' if n != 1 else ''} of "
                             f"{r['origin']} for mirror {r['mirror']}")
        else:
            kept = (f"kept the positions synced {_ago(now, r['last_synced'])}"
                    if r.get("last_synced") else "no positions kept")
            output.line(app, f"Skipped mirror {r['mirror']}: origin {r['origin']}: "
                             f"{r.get('error') or 'not reachable'} ({kept})")


@positions_app.command("sync")
def sync(
    ctx: typer.Context,
    mirrors: Annotated[
        list[str] | None,
        typer.Argument(metavar="[MIRROR]...", help="Only these mirrors (default: every "
                       "mirror of the addressed side).", show_default=False),
    ] = None,
    follow: Annotated[
        bool, typer.Option("--follow", "-F", help="Keep syncing every --interval until "
                           "interrupted (Ctrl-C).")
    ] = False,
    interval: Annotated[
        str, typer.Option("--interval", metavar="DURATION", parser=WAIT,
                          help="With --follow: time between passes (5s, 500ms).")
    ] = "5s",
    count: Annotated[
        int | None, typer.Option("--count", min=1, metavar="N",
                                 help="With --follow: stop after N passes.")
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Copy origin consumer positions to this side.

    For each mirror of the addressed side (the --cluster of the data directory, or the
    live server and domain in force), reads every durable consumer of its origin (config,
    delivered, ack floor) and writes them with the time of reading to the KV bucket
    JETLINK_POSITIONS of that side: stream failover and kv failover place the consumers
    from there when the origin is gone. A mirror whose origin does not answer is skipped
    and keeps its last positions; then the exit status is 1 (the report printed all the
    same), as replicate's for a copy in error. --follow repeats every --interval until Ctrl-C (exit
    status 130), one line per mirror and pass (JSON lines with --json). With --json: {"mirrors":
    [{"mirror", "origin", "status", "consumers", "synced" | "last_synced", "error"}]}.
    """
    from jetlink.cli.stream_flags import parse_duration_flag
    from jetlink.core.dr.positions import sync as sync_positions
    from jetlink.core.retry import Retries

    app = App.of(ctx)
    pause = parse_duration_flag(interval, flag="--interval", wait=True) / 1e9
    if follow and pause <= 0:
        raise common.usage(f"invalid value for --interval: {interval!r}: must be more than 0 "
                           "(the pause between passes, e.g. 1s)")
    if count is not None and not follow:
        raise common.usage("--count goes with --follow")
    if not follow and common.given(ctx, "interval"):
        raise common.usage(f"--interval {interval} applies with --follow (the pause between "
                           "its passes); without it positions sync runs once")
    mirrors = list(dict.fromkeys(mirrors or ()))  # a mirror named twice is synced once
    _side_there(app)
    site = common.open_site(app)
    store = common.open_positions(app)
    passes = 0
    retries = Retries()
    while True:
        if not follow:
            results = sync_positions(site, store, mirrors or ())
        else:
            lost = common.backend(app).gone()
            if lost:  # its syncs would be written where no path leads: stopped, said
                from jetlink.core.errors import JetlinkError

                raise JetlinkError(f"{lost} while positions sync --follow ran: the positions "
                                   "it syncs would be lost; stopped after "
                                   f"{passes} pass{'' if passes == 1 else 'es'} (sync again "
                                   "where the mirrors are)")
            try:
                if site is None or store is None:  # after a failed pass: connected anew
                    site, store = common.open_site(app), common.open_positions(app)
                results = sync_positions(site, store, mirrors or ())
            except Exception as err:  # noqa: BLE001 - retried when it passes, else raised
                said = retries.failed(err)
                if said:
                    output.notice(app, f"jetlink: warning: positions sync failed: {said}")
                # A connection never reconnects by itself (core/live/client.py): the next
                # pass opens the server (or the data directory) again, so a server that
                # restarted is followed again (core/retry.py).
                common.backend(app).close(step=False)
                site = store = None
                passes += 1
                if count is not None and passes >= count:
                    raise
                sleep(pause)
                continue
            said = retries.succeeded()
            if said:
                output.notice(app, f"jetlink: {said}")
        doc = {"mirrors": [r.to_json() for r in results]}
        if follow and app.json:
            from jetlink.core.clock import format_rfc3339_nano

            output.json_line({"time": format_rfc3339_nano(time.time_ns()), **doc}, app)
        else:
            app.emit(doc, human=render_results)
        passes += 1
        if not follow:
            # as replicate: the report printed, and exit status 1 when a mirror was skipped
            # (its positions are as old as its last sync: a cron job is told)
            if any(r.status != "synced" for r in results):
                raise typer.Exit(1)
            return
        if count is not None and passes >= count:
            return
        sleep(pause)


@positions_app.command("ls")
def ls(ctx: typer.Context, json_output: JsonOption = False) -> None:
    """List consumer positions kept on this side.

    One row per mirror: its origin, the consumers kept and when they were synced (and how
    long ago). With --json: {"positions": [record...]}, the records as stored (mirror,
    origin, origin_last_seq, origin_subjects, synced, consumers).
    """
    app = App.of(ctx)
    store = common.open_positions(app)
    doc = {"positions": [r.to_json() for r in store.records()]}

    def human(a: App, d: dict[str, Any]) -> None:
        if not d["positions"]:
            output.line(a, "No consumer positions kept on this side (jetlink positions sync)")
            return
        now = time.time_ns()
        rows = []
        for r in d["positions"]:
            origin = r["origin"]
            place = origin.get("domain", origin.get("cluster", ""))
            names = ", ".join(f"{c['name']}@{c['ack_floor']}" for c in r["consumers"])
            rows.append([r["mirror"], f"{origin['stream']}@{place}" if place else
                         origin["stream"], names or "-", r["synced"], _ago(now, r["synced"])])
        output.table(a, ["Mirror", "Origin", "Consumers (ack floor)", "Synced", "Age"], rows)

    app.emit(doc, human=human)


def register(app: typer.Typer) -> None:
    app.add_typer(positions_app, name="positions")
