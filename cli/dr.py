"""``jetlink dr check [NAME...]``: the readiness of every mirror for a failover now;
``jetlink dr fence --from REGION``: a returned region's old origins stop taking writes
(core/dr/fence.py ``plan_fence``, rendered here).

Parsing and rendering only: the check is jetlink.core.dr.readiness ``check_readiness`` over
the backend in force (cli/common.py ``backend``): on the embedded engine every cluster of
the data directory (only ``--cluster`` when given) with its NATS mirrors, KV mirrors and the
mirror topics of its links; on a live server the mirrors of its JetStream domain. The formats,
``--namespace``, ``--outfile`` and the exit status are ``server check``'s (cli/server_check.py):
0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (no mirror found), 0 with ``--format prometheus``.
A NAME that is no mirror is a CRITICAL result of its own, as natscli reports a stream it
cannot load (exit 2); a server that does not answer is a CRITICAL check in every format
(core/dr/readiness.py, "could not list mirrors"); a command line that does not parse is a
usage error (2).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from jetlink.cli import common, completion
from jetlink.cli.app import App
from jetlink.cli.options import DURATION, ForceOption, JsonOption
from jetlink.cli.server_check import (
    Format,
    FormatOption,
    OutfileOption,
    _duration,
    write_outfile,
)

dr_app = typer.Typer(
    name="dr",
    help="Check failover readiness; fence a region.\n\nWhat a "
    "failover made now would lose or break, per mirror (NATS streams, KV buckets, mirror "
    "topics), in natscli's server check formats and exit codes (0 OK, 1 WARNING, 2 CRITICAL, "
    "3 UNKNOWN), with a split brain (an old origin back and writable) CRITICAL; and the "
    "fence that stops a returned region's old origins taking writes.",
    no_args_is_help=True,
)


def _span(help: str) -> Any:
    return typer.Option(metavar="DURATION", parser=DURATION, help=help, callback=_duration,
                        show_default=False)


def _msgs(help: str) -> Any:
    return typer.Option(metavar="MSGS", help=help, min=0, show_default=False)


@dr_app.command("check")
def check(
    ctx: typer.Context,
    names: Annotated[list[str] | None, typer.Argument(
        metavar="[NAME]...", help="Only these mirrors: STREAM, BUCKET (a KV mirror), "
        "LINK/TOPIC or TOPIC (a mirror topic); NAME@CLUSTER on the embedded engine.",
        show_default=False, autocompletion=completion.dr_checked)] = None,
    lag_warn: Annotated[int | None, _msgs(
        "Warn when the mirror is this many messages behind its origin or more.")] = None,
    lag_critical: Annotated[int | None, _msgs(
        "Critical when the mirror is this many messages behind its origin or more.")] = None,
    seen_warn: Annotated[str | None, _span(
        "Warn when the mirror last heard from its origin this long ago or more.")] = None,
    seen_critical: Annotated[str | None, _span(
        "Critical when the mirror last heard from its origin this long ago or more.")
    ] = None,
    positions_warn: Annotated[str | None, _span(
        "Warn when the consumer positions were synced this long ago or more.")] = None,
    positions_critical: Annotated[str | None, _span(
        "Critical when the consumer positions were synced this long ago or more (or "
        "never).")] = None,
    rpo_warn: Annotated[str | None, _span(
        "Warn when the oldest message a failover now would lose is this old or more (the "
        "recovery point in seconds).")] = None,
    rpo_critical: Annotated[str | None, _span(
        "Critical when the oldest message a failover now would lose is this old or more "
        "(or unknown: never heard from the origin).")] = None,
    topology: Annotated[Path | None, typer.Option(
        "--topology", metavar="FILE", dir_okay=False, show_default=False,
        help="A topology file naming the origins' streams: their subjects, for a failover "
        "whose origin is gone.")] = None,
    fmt: FormatOption = Format.nagios,
    namespace: Annotated[str, typer.Option(
        "--namespace", metavar="NAME", help="The Prometheus namespace (metric name prefix).")
    ] = "jetlink",
    outfile: OutfileOption = None,
    json_output: JsonOption = False,
) -> None:
    """Check each mirror's failover readiness.

    Per mirror: the recovery point (messages behind and the age of the oldest of them, time
    since it last heard from its origin, whether the origin answers), the consumer
    positions (age of the last sync, the origin's durable consumers without a synced
    position), the subjects the promoted stream would take and where they come from (or
    unknown: give --subjects, critical), the clamps a failover now would print, and what
    blocks it (a failing or paused mirror, the thresholds). Thresholds not given come from
    the mirror stream's metadata, io.nats.monitor.<flag> (e.g.
    io.nats.monitor.lag-critical: 100, io.nats.monitor.rpo-critical: 30s).
    """
    from jetlink.cli.stream import _topology
    from jetlink.core.dr import check_readiness

    app = App.of(ctx)
    flags = {"lag_warn": lag_warn, "lag_critical": lag_critical, "seen_warn": seen_warn,
             "seen_critical": seen_critical, "positions_warn": positions_warn,
             "positions_critical": positions_critical, "rpo_warn": rpo_warn,
             "rpo_critical": rpo_critical}
    clusters = [app.cluster] if common.given(ctx.find_root(), "cluster") else None
    readiness = check_readiness(common.backend(app), names or (), flags=flags,
                                topology=_topology(topology), clusters=clusters,
                                clock=common.make_clock())
    chosen = Format.json if app.json else fmt
    body = readiness.render(chosen.value, namespace) + "\n"
    if outfile is None:
        sys.stdout.write(body)
        sys.stdout.flush()
    else:
        write_outfile(outfile, body)
    code = 0 if chosen is Format.prometheus else readiness.exit_code
    if code:
        raise typer.Exit(code)


@dr_app.command("fence")
def fence(
    ctx: typer.Context,
    regions: Annotated[list[str], typer.Option(
        "--from", metavar="REGION", show_default=False,
        help="The region that failed and came back: a cluster of the data directory "
        "(embedded engine) or a JetStream domain (live server). Repeatable.")],
    force: ForceOption = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Show each old origin and what the fence would do; change "
        "nothing.")] = False,
    json_output: JsonOption = False,
) -> None:
    """Fence a returned region's old origins.

    They stop taking writes.
    For every stream or KV bucket failed over (or promoted) from REGION to the side
    addressed, its old origin in REGION loses its subjects: they become one subject nobody
    publishes to ($JETLINK.fenced.<stream>) and the ones it had are recorded in its metadata
    (jetlink.fenced_subjects). Producers still publishing there get no responders instead
    of storing a tail nobody reads, or a copy of every message east stores too (a split
    brain over a leafnode). Its stored messages and consumers stay. Only stream|kv failback
    --switch undoes it (the old origin becomes the primary with its recorded subjects). A
    failed-over Kafka mirror topic is refused: its source would be fenced by ACLs, which
    jetlink does not have. Exit status 0 when every old origin is fenced (or was), 1 when
    one was not (unreachable, refused, failed: named), 2 for a --from that is unknown,
    empty or the side addressed (nothing changed).
    """
    from jetlink.core import dr

    app = App.of(ctx)
    clusters = [app.cluster] if common.given(ctx.find_root(), "cluster") else None
    plan = dr.plan_fence(common.backend(app), regions, clusters=clusters,
                         clock=common.make_clock())
    todo = plan.to_fence
    if todo and not dry_run:
        from jetlink.cli import output

        names = ", ".join(f"{i.name}@{i.region}" for i in todo)
        output.confirm(app, f"Really fence {len(todo)} old origin"
                       f"{'' if len(todo) == 1 else 's'} of {', '.join(plan.regions)} "
                       f"({names}): they take no writes until failback --switch",
                       force=force, action=f"fence {names}")
    report = plan.preview() if dry_run else plan.carry_out()
    app.emit(report.to_json(), human=_render_fence)
    if report.not_fenced:
        from jetlink.cli import output

        output.notice(app, "error: not fenced: " + "; ".join(
            f"{i.name}@{i.region} ({i.action}: {i.detail})" for i in report.not_fenced))
        raise typer.Exit(1)


def _render_fence(app: App, doc: dict[str, Any]) -> None:
    """``dr fence``'s report: one line per old origin, then what it comes to."""
    from jetlink.cli import output

    regions = ", ".join(doc["regions"])
    for o in doc["objects"]:
        subjects = ""
        if o["subjects_before"] is not None and o["action"] in ("fenced", "to fence"):
            subjects = f": {', '.join(o['subjects_before'])} -> " \
                f"{', '.join(o['subjects_after'])}"
        detail = f" ({o['detail']})" if o["detail"] else ""
        output.line(app, f"{o['kind']} {o['name']}@{o['region']} (failed over to "
                         f"{o['failed_over_to']}): {o['action']}{subjects}{detail}")
    if doc["dry_run"]:
        output.line(app, "Dry run: nothing changed")
    elif doc["nothing_to_do"]:
        output.line(app, f"Nothing to do: every old origin of {regions} is fenced already")
    elif doc["fenced"]:
        output.line(app, f"Fenced {doc['fenced']} old origin{'' if doc['fenced'] == 1 else 's'}"
                         f" of {regions}: stream|kv failback NAME --switch undoes it")


def register(app: typer.Typer) -> None:
    app.add_typer(dr_app, name="dr")
