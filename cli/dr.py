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

import contextlib
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from jetlink.cli import common, completion
from jetlink.cli.app import App
from jetlink.cli.options import DURATION, DurationType, ForceOption, JsonOption
from jetlink.cli.server_check import (
    Format,
    FormatOption,
    NamespaceOption,
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


# the thresholds and the topology file of dr check and dr watch (core/dr/readiness.py
# DrThresholds: a flag not given comes from the mirror's io.nats.monitor.<flag> metadata)
LagWarn = Annotated[int | None, _msgs(
    "Warn when the mirror is this many messages behind its origin or more.")]
LagCritical = Annotated[int | None, _msgs(
    "Critical when the mirror is this many messages behind its origin or more.")]
SeenWarn = Annotated[str | None, _span(
    "Warn when the mirror last heard from its origin this long ago or more.")]
SeenCritical = Annotated[str | None, _span(
    "Critical when the mirror last heard from its origin this long ago or more.")]
PositionsWarn = Annotated[str | None, _span(
    "Warn when the consumer positions were synced this long ago or more.")]
PositionsCritical = Annotated[str | None, _span(
    "Critical when the consumer positions were synced this long ago or more (or never).")]
RpoWarn = Annotated[str | None, _span(
    "Warn when the oldest message a failover now would lose is this old or more (the "
    "recovery point in seconds).")]
RpoCritical = Annotated[str | None, _span(
    "Critical when the oldest message a failover now would lose is this old or more (or "
    "unknown: never heard from the origin).")]
TopologyOption = Annotated[Path | None, typer.Option(
    "--topology", metavar="FILE", dir_okay=False, show_default=False,
    help="A topology file naming the origins' streams: their subjects, for a failover "
    "whose origin is gone.")]
_THRESHOLDS = ("lag_warn", "lag_critical", "seen_warn", "seen_critical", "positions_warn",
               "positions_critical", "rpo_warn", "rpo_critical")


def _flags(given: dict[str, Any]) -> dict[str, Any]:
    """The threshold flags of a command's parameters (its ``locals()``) as check_readiness
    takes them: DrThresholds field -> the flag's value (None: not given)."""
    return {name: given[name] for name in _THRESHOLDS}


@dr_app.command("check")
def check(
    ctx: typer.Context,
    names: Annotated[list[str] | None, typer.Argument(
        metavar="[NAME]...", help="Only these mirrors: STREAM, BUCKET (a KV mirror), "
        "LINK/TOPIC or TOPIC (a mirror topic); NAME@CLUSTER on the embedded engine.",
        show_default=False, autocompletion=completion.dr_checked)] = None,
    lag_warn: LagWarn = None,
    lag_critical: LagCritical = None,
    seen_warn: SeenWarn = None,
    seen_critical: SeenCritical = None,
    positions_warn: PositionsWarn = None,
    positions_critical: PositionsCritical = None,
    rpo_warn: RpoWarn = None,
    rpo_critical: RpoCritical = None,
    topology: TopologyOption = None,
    fmt: FormatOption = Format.nagios,
    namespace: NamespaceOption = "jetlink",
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
    flags = _flags(locals())
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


#: ``dr watch --interval``: the natscli duration rule, at least 100ms
INTERVAL = DurationType(wait=True, minimum=100 * 1_000_000)
#: how long a stopped watch waits for the check under way before it ends anyway
STOP_GRACE = 1.5


@dr_app.command("watch")
def watch(
    ctx: typer.Context,
    regions: Annotated[list[str] | None, typer.Option(
        "--from", metavar="REGION", show_default=False,
        help="Only the objects whose origin is in REGION: a cluster of the data directory "
        "(embedded engine) or a JetStream domain (live server). Repeatable.")] = None,
    listen: Annotated[str, typer.Option(
        "--listen", metavar="HOST:PORT",
        help="Serve /metrics and /healthz here (port 0: one the system chooses, printed "
        "on stderr).")] = "127.0.0.1:9180",
    interval: Annotated[str, typer.Option(
        "--interval", metavar="DURATION", parser=INTERVAL,
        help="Time between two checks (at least 100ms).")] = "15s",
    namespace: NamespaceOption = "jetlink",
    lag_warn: LagWarn = None,
    lag_critical: LagCritical = None,
    seen_warn: SeenWarn = None,
    seen_critical: SeenCritical = None,
    positions_warn: PositionsWarn = None,
    positions_critical: PositionsCritical = None,
    rpo_warn: RpoWarn = None,
    rpo_critical: RpoCritical = None,
    topology: TopologyOption = None,
    fence_on_return: Annotated[bool, typer.Option(
        "--fence-on-return", help="When a failed-over object's old origin answers again "
        "unfenced, fence its region (dr fence --from REGION), each old origin once.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Export readiness to Prometheus, continuously.

    Runs the dr check every --interval and serves the last result over HTTP: /metrics in
    the Prometheus text format (per object, per region and for the whole: status, lag,
    recovery point, positions age, fenced, split brain; the time and duration of the last
    check; counters of checks and of automatic actions) and /healthz (200 ok once a check
    listed the mirrors, else 503 and why). One line per check on stdout (with --json one
    JSON document per line). --fence-on-return fences a returned region's old origins by
    itself, logged on stderr, each at most once. SIGINT and SIGTERM stop it, exit status 0;
    a --listen that is not HOST:PORT or a bad --from is a usage error (2), an address that
    cannot be bound exits 1.
    """
    from jetlink.cli.stream import _topology
    from jetlink.core.dr.watch import Watch, listen_address, serve

    app = App.of(ctx)
    host, port = listen_address(listen)
    every = INTERVAL.seconds(interval)
    clusters = [app.cluster] if common.given(ctx.find_root(), "cluster") else None
    w = Watch(common.backend(app), regions=regions or (), flags=_flags(locals()),
              topology=_topology(topology), clusters=clusters, clock=common.make_clock(),
              fence_on_return=fence_on_return)
    with _stop_signals() as stop:
        server = serve(w, host, port, namespace)
        try:
            first = w.check()  # --from is checked against what it finds
            server.start()
            from jetlink.cli import output

            output.notice(app, f"jetlink: dr watch: serving {server.url}/metrics and "
                               f"/healthz, a check every {interval}")
            _report(app, first)
            _loop(app, w, every, stop)
        finally:
            server.close()


def _loop(app: App, w: Any, every: float, stop: Any) -> None:
    """A check every ``every`` seconds on a thread of its own until ``stop`` is set (a
    signal): the main thread only waits, so a stop is never held up by a slow check
    longer than :data:`STOP_GRACE`."""
    import threading

    broke: list[BaseException] = []

    def run() -> None:
        try:
            while not stop.wait(every):
                _report(app, w.check())
        except Exception as err:  # noqa: BLE001 - handed to the main thread, reported there
            broke.append(err)

    worker = threading.Thread(target=run, name="dr-watch", daemon=True)
    worker.start()
    while not stop.is_set() and worker.is_alive():
        stop.wait(0.1)
    stop.set()
    worker.join(STOP_GRACE)
    if broke:  # its output could not be written (a closed pipe): the watch cannot go on
        from jetlink.core.errors import JetlinkError

        raise JetlinkError(f"dr watch stopped: {type(broke[0]).__name__}: {broke[0]}")


def _report(app: App, done: Any) -> None:
    """One check: its line (or JSON document) on stdout, each action taken on stderr."""
    from jetlink.cli import output

    for a in done.actions:
        output.notice(app, f"jetlink: dr watch: {a.message()}")
    doc = done.to_json()
    if app.json:
        output.json_line(doc)
        return
    output.line(app, _check_line(doc))


def _check_line(doc: dict[str, Any]) -> str:
    """``2026-11-28T11:30:00Z WARNING: 3 objects (2 ok, 1 warning, 0 critical); worst
    recovery point 5s, 2 messages``."""
    from jetlink.core.monitor.lag import ago

    head = f"{doc['time']} {doc['status']}"
    if doc["failure"]:
        return f"{head}: {doc['failure']}"
    c = doc["counts"]
    n = len(doc["objects"])
    line = (f"{head}: {n} object{'' if n == 1 else 's'} ({c['OK']} ok, {c['WARNING']} "
            f"warning, {c['CRITICAL']} critical)")
    worst = doc["worst_recovery_point"]
    if worst["messages"] is not None:
        seconds = "unknown" if worst["seconds"] is None else \
            ago(round(worst["seconds"] * 1e9))
        n = worst["messages"]
        line += f"; worst recovery point {seconds}, {n} message{'' if n == 1 else 's'}"
    return line


@contextlib.contextmanager
def _stop_signals() -> Iterator[Any]:
    """An event set by SIGINT or SIGTERM (the watch's stop: exit status 0 for both, a
    service manager's and a terminal's stop alike), the previous handlers back after. The
    handler only sets a flag the main thread polls: a lock taken in a signal handler could
    be the one the interrupted code holds."""
    import threading

    stop = threading.Event()
    caught: list[int] = []

    class Stop:
        def wait(self, seconds: float) -> bool:
            if caught:
                stop.set()
            return stop.wait(seconds) or bool(caught)

        def is_set(self) -> bool:
            return stop.is_set() or bool(caught)

        def set(self) -> None:
            stop.set()

    previous = {sig: signal.signal(sig, lambda sig, _frame: caught.append(sig))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield Stop()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def register(app: typer.Typer) -> None:
    app.add_typer(dr_app, name="dr")
