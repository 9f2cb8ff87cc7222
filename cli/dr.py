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
(core/dr/readiness.py, "could not list mirrors"); a command line that does not parse is
UNKNOWN (3, with the usage error's message), as ``server check``.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from jetlink.cli import common, completion, output
from jetlink.cli.app import App
from jetlink.cli.options import DURATION, DurationType, ForceOption, JsonOption
from jetlink.cli.server_check import (
    _UINT64,
    Format,
    FormatOption,
    NamespaceOption,
    OutfileOption,
    _duration,
    check_namespace,
    chosen_format,
    write_outfile,
)

dr_app = typer.Typer(
    name="dr",
    help="Failover readiness; a region out and back.\n\nWhat a "
    "failover made now would lose or break, per mirror (NATS streams, KV buckets, mirror "
    "topics), in natscli's server check formats and exit codes (0 OK, 1 WARNING, 2 CRITICAL, "
    "3 UNKNOWN), with a split brain (an old origin back and writable) CRITICAL; a region's "
    "failover and failback as one journalled plan; and the fence that stops a returned "
    "region's old origins taking writes.",
    no_args_is_help=True,
)

REFUSED_NAMED = 10  # refused objects a region's refusal line names after the first


def _span(help: str) -> Any:
    return typer.Option(metavar="DURATION", parser=DURATION, help=help, callback=_duration,
                        show_default=False)


def _msgs(help: str) -> Any:
    """A lag threshold: natscli's uint64, read as ``server check stream --lag-critical``
    reads it (base 0, digit separators: ``1000``, ``0x3e8``, ``1_000``; past 64 bits refused
    at parsing: a check's bad command line, UNKNOWN)."""
    return typer.Option(metavar="MSGS", help=help, parser=_UINT64, show_default=False)


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
    unknown: critical; give --topology, or --subjects to its failover), the clamps a
    failover now would print, and what blocks it (a failing or paused mirror, the
    thresholds). Thresholds not given come from the mirror stream's metadata,
    io.nats.monitor.<flag> (e.g.
    io.nats.monitor.lag-critical: 100, io.nats.monitor.rpo-critical: 30s).
    """
    from jetlink.cli.stream import _topology
    from jetlink.core.dr import check_readiness
    from jetlink.core.monitor.render import printed

    app = App.of(ctx)
    chosen = chosen_format(app.json, fmt, common.given(ctx, "fmt"))
    check_namespace(chosen, namespace)
    flags = _flags(locals())
    clusters = [app.cluster] if common.given(ctx.find_root(), "cluster") else None
    readiness = check_readiness(common.backend(app), names or (), flags=flags,
                                topology=_topology(topology), clusters=clusters,
                                clock=common.make_clock())
    body = printed(readiness.render(chosen.value, namespace), chosen.value)
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
    --switch undoes it (the old origin becomes the primary with its recorded subjects). For
    a failed-over Kafka mirror topic its old source topic gets a DENY WRITE ACL for User:*
    in REGION's cluster, which must enforce ACLs (cluster authorizer NAME --enable; refused
    otherwise); mirrors truncate-and-restore removes it. Exit status 0 when every old origin
    is fenced (or was), 1 when
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
        names = ", ".join(f"{i.name}@{i.region}" for i in todo)
        output.confirm(app, f"Really fence {len(todo)} old origin"
                       f"{'' if len(todo) == 1 else 's'} of {', '.join(plan.regions)} "
                       f"({names}): they take no writes until failback --switch",
                       force=force, action=f"fence {names}")
    if dry_run:
        report = plan.preview()
    else:
        fenced: list[Any] = []
        try:
            report = plan.carry_out(fenced.append)
        except KeyboardInterrupt:
            said = ", ".join(f"{i.name}@{i.region}" for i in fenced) or "none"
            output.notice(app, f"jetlink: interrupted: {len(fenced)} of {len(todo)} old "
                               f"origin{'' if len(todo) == 1 else 's'} fenced ({said}); run "
                               "the same command again to fence the rest")
            raise
        # every old origin fenced: an interrupt now would only cut the report short, and a
        # script must not read a finished fence as an interrupted one (exit 130)
        from jetlink.core.interrupts import ignored_from_now

        ignored_from_now()
    app.emit(report.to_json(), human=_render_fence)
    if report.not_fenced:
        _not_fenced(app, report.not_fenced)


def _failover_not_fenced(app: App, report: Any) -> None:
    """``dr failover --fence``'s old origins left taking writes: one that does not answer (the
    outage itself: fenced when it answers, as the report says) a warning; one whose fence
    failed or was refused as ``dr fence`` says it, exit status 1."""
    from jetlink.core.dr.fence import UNREACHABLE

    silent = [i for i in report.not_fenced if i.action == UNREACHABLE]
    if silent:
        output.notice(app, "jetlink: warning: not fenced yet: " + "; ".join(
            f"{i.name}@{i.region} ({i.detail})" for i in silent))
    failed = [i for i in report.not_fenced if i.action != UNREACHABLE]
    if failed:
        _not_fenced(app, failed)


def _not_fenced(app: App, items: Sequence[Any]) -> NoReturn:
    """The old origins a fence left taking writes: one line, exit status 1."""
    output.notice(app, "jetlink: error: not fenced: " + "; ".join(
        f"{i.name}@{i.region} ({i.action}: {i.detail})" for i in items))
    raise typer.Exit(1)


def _render_fence(app: App, doc: dict[str, Any]) -> None:
    """``dr fence``'s report: one line per old origin, then what it comes to."""
    output.lines(app, fence_lines(doc))


def fence_lines(doc: dict[str, Any]) -> list[str]:
    """``dr fence``'s report as lines (the dashboard's fence dialog shows them too)."""
    out = []
    regions = ", ".join(doc["regions"])
    for o in doc["objects"]:
        subjects = ""
        if o["subjects_before"] is not None and o["action"] in ("fenced", "to fence"):
            subjects = f": {', '.join(o['subjects_before'])} -> " \
                f"{', '.join(o['subjects_after'])}"
        detail = f" ({o['detail']})" if o["detail"] else ""
        out.append(f"{o['kind']} {o['name']}@{o['region']} (failed over to "
                   f"{o['failed_over_to']}): {o['action']}{subjects}{detail}")
    if doc["dry_run"]:
        out.append("Dry run: nothing changed")
    elif doc["nothing_to_do"]:
        from jetlink.core.dr.fence import PRIMARY

        switching = any(o["action"] == PRIMARY for o in doc["objects"])
        out.append(f"Nothing to do: every old origin of {regions} is fenced already" + (
            ", or the primary a failback switch under way makes again (run that switch "
            "again to finish it)" if switching else ""))
    elif doc["fenced"]:
        undo = [u for k, u in (
            (("stream", "kv"), "stream|kv failback NAME --switch (dr failback --from "
                                f"{regions.replace(', ', ' --from ')} --switch: all of them)"),
            (("topic",), "mirrors truncate-and-restore TOPIC --link LINK"))
            if any(o["kind"] in k and o["action"] == "fenced" for o in doc["objects"])]
        out.append(f"Fenced {doc['fenced']} old origin{'' if doc['fenced'] == 1 else 's'}"
                   f" of {regions}: {' / '.join(undo)} undoes it")
    return out


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
    failover_after: Annotated[str | None, _span(
        "Fail a --from region over (dr failover --from REGION) once none of its origins "
        "has answered for this long, check after check, while the positions are recent; "
        "once.")] = None,
    positions_max_age: Annotated[str | None, _span(
        "With --failover-after: the positions must have been synced this recently (default "
        "1m).")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="With --fence-on-return or --failover-after: only log what would "
        "be done.")] = False,
    json_output: JsonOption = False,
) -> None:
    """Export readiness to Prometheus, continuously.

    Runs the dr check every --interval and serves the last result over HTTP: /metrics in
    the Prometheus text format (per object, per region and for the whole: status, lag,
    recovery point, positions age, fenced, split brain; the time and duration of the last
    check; counters of checks and of automatic actions) and /healthz (200 ok once a check
    listed the mirrors, else 503 and why). One line per check on stdout (with --json one
    JSON document per line). --fence-on-return fences a returned region's old origins by
    itself, --failover-after fails a --from region over when its origins stay silent
    (--dry-run: only says so); each action logged on stderr, counted, done once. SIGINT
    and SIGTERM stop it, exit status 0; a --listen that is not HOST:PORT or a bad --from is
    a usage error (2), an address that cannot be bound exits 1.
    """
    from jetlink.cli.stream import _topology
    from jetlink.core.dr.watch import Watch, listen_address, serve

    app = App.of(ctx)
    check_namespace(Format.prometheus, namespace)  # its /metrics are Prometheus's
    host, port = listen_address(listen)
    every = INTERVAL.seconds(interval)
    clusters = [app.cluster] if common.given(ctx.find_root(), "cluster") else None
    w = Watch(common.backend(app), regions=regions or (), flags=_flags(locals()),
              topology=_topology(topology), clusters=clusters, clock=common.make_clock(),
              fence_on_return=fence_on_return, failover_after=failover_after,
              positions_max_age=positions_max_age, dry_run=dry_run)
    with _stop_signals() as stop:
        server = serve(w, host, port, namespace)
        try:
            # served at once: /healthz answers 503 ("no check has completed yet") while the
            # first check runs, which may take the whole --timeout of a server that is slow
            server.start()
            output.notice(app, f"jetlink: dr watch: serving {server.url}/metrics and "
                               f"/healthz, a check every {interval}")
            first = w.check()  # --from is checked against what it finds
            said = _Said()
            _report(app, first, said)
            _loop(app, w, every, stop, said)
        finally:
            server.close()


def _loop(app: App, w: Any, every: float, stop: Any, said: _Said) -> None:
    """A check every ``every`` seconds (start to start; a check that takes longer is
    followed by the next at once) on a thread of its own until ``stop`` is set (a
    signal): the main thread only waits, so a stop is never held up by a slow check
    longer than :data:`STOP_GRACE`."""
    import threading

    broke: list[BaseException] = []

    def run() -> None:
        import time

        try:
            due = time.monotonic() + every  # a fixed rate: the interval is check to check
            while not stop.wait(max(0.0, due - time.monotonic())):
                due += every
                _report(app, w.check(), said)
                due = max(due, time.monotonic())  # a check longer than the interval: next now
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

        if isinstance(broke[0], (OSError, JetlinkError)):
            # as every command's: a reader gone (EPIPE) ends it silently, a stdout that
            # refuses writes is named, a JetlinkError is its own line
            raise broke[0]
        raise JetlinkError(f"dr watch stopped: {type(broke[0]).__name__}: {broke[0]}")


class _Said:
    """The check failure said last on stderr ("" while checks succeed)."""

    def __init__(self) -> None:
        self.failing = ""


def _report(app: App, done: Any, said: _Said) -> None:
    """One check: its line (or JSON document) on stdout, each action taken on stderr; a
    check that failed said once on stderr (again when its reason changes: the connection
    lost, then refused while the server restarts), and once that checks succeed again, as
    every follow loop says them (core/retry.py)."""
    if done.failure and done.failure != said.failing:
        output.notice(app, f"jetlink: warning: dr watch: {done.failure} (checking again at "
                           "the next interval)")
    elif not done.failure and said.failing:
        output.notice(app, "jetlink: dr watch: the last check succeeded: watching again")
    said.failing = done.failure
    for a in done.actions:
        output.notice(app, f"jetlink: dr watch: {a.message()}")
    doc = done.to_json()
    if app.json:
        output.json_line(doc, app)
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


RegionsOption = Annotated[list[str], typer.Option(
    "--from", metavar="REGION", show_default=False,
    help="The region: a cluster of the data directory (embedded engine), a JetStream domain "
    "(live server), or the source cluster of cluster links (mirror topics). Repeatable.")]
SkipOption = Annotated[list[str] | None, typer.Option(
    "--skip", metavar="NAME", show_default=False,
    help="Leave this object out (STREAM, BUCKET, LINK/TOPIC, or NAME@CLUSTER). Repeatable.")]


@dr_app.command("failover")
def region_failover(
    ctx: typer.Context,
    regions: RegionsOption,
    force: ForceOption = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Show the plan; change nothing.")] = False,
    topology: Annotated[Path | None, typer.Option(
        "--topology", metavar="FILE", dir_okay=False, show_default=False,
        help="A topology file naming the origins' streams: their subjects, for a failover "
        "whose origin is gone.")] = None,
    no_consumers: Annotated[bool, typer.Option(
        "--no-consumers", help="Place no consumer of the origins on the promoted streams.")
    ] = False,
    skip: SkipOption = None,
    skip_unready: Annotated[bool, typer.Option(
        "--skip-unready", help="Leave out every object whose failover would be refused or "
        "that dr check grades CRITICAL.")] = False,
    fence: Annotated[bool, typer.Option(
        "--fence", help="Fence each origin that answers (as dr fence) before its mirror is "
        "promoted, let the mirror copy what the origin holds (up to 30 s), then promote: no "
        "publish stored on both sides, no divergent tail; the origin takes no writes until "
        "failback --switch.")] = False,
    json_output: JsonOption = False,
) -> None:
    """Fail a whole region over.

    Every mirror on the side addressed whose origin is in REGION (mirror streams, KV mirror
    buckets, mirror topics) is failed over with the rules of stream|kv failover and
    kafka-mirrors failover. The plan comes first: each object with its lag and recovery
    point, the subjects the promoted stream takes and where they come from, the consumers
    placed and the clamps, then the totals (objects, messages at risk, the worst recovery
    point); sourced streams and KV aggregates that source from the region are listed (what
    they stop receiving). An object whose failover would be refused refuses the plan (exit
    status 2, nothing changed) unless --skip names it or --skip-unready is given. Objects run
    in dependency order, independent ones in parallel on a live server. The run is
    journalled in jetlink's bucket JETLINK_REGIONS: killed anywhere, the same command
    finishes it; run again once finished, it says so and does nothing. Asks for confirmation
    on a terminal; without one, -f/--force is required. Exit status 0 when every object was
    failed over (or skipped), 1 when one failed (named), 2 when the plan is refused or the
    region is unknown, empty or the side addressed.
    """
    from jetlink.cli.stream import _topology

    _run_region(ctx, "failover", regions, force=force, dry_run=dry_run,
                topology=_topology(topology), no_consumers=no_consumers, skip=skip or [],
                skip_unready=skip_unready, fence=fence)


@dr_app.command("failback")
def region_failback(
    ctx: typer.Context,
    regions: RegionsOption,
    tail: Annotated[str | None, typer.Option(
        "--tail", metavar="parquet:DIR", show_default=False,
        help="One Parquet dataset for the region's divergent tails, partitioned by object "
        "(DIR/object=NAME). Default: each object's own, as stream failback names it.")] = None,
    switch: Annotated[bool, typer.Option(
        "--switch", help="Also switch back once each old origin caught up: it becomes the "
        "primary again, unfenced, and the DR side mirrors it.")] = False,
    force: ForceOption = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Show the plan (each tail counted); change nothing.")] = False,
    skip: SkipOption = None,
    json_output: JsonOption = False,
) -> None:
    """Fail a whole region back.

    Every stream and KV bucket failed over from REGION to the side addressed goes back with
    the rules of stream|kv failback: its old origin's divergent tail saved whole and counted
    before anything is removed (--tail parquet:DIR: one dataset, a partition per object),
    the old origin created again as a mirror and caught up; with --switch the old origin is
    the primary again with its recorded subjects and this side mirrors it. Failed-over
    mirror topics are listed with the kafka-mirrors command that takes each back. Journalled
    and resumable as dr failover. Exit status 0 all done, 1 some failed (named), 2 refused.
    """
    from jetlink.cli.stream import parquet_option

    _run_region(ctx, "failback", regions, force=force, dry_run=dry_run,
                tail=None if tail is None else parquet_option(tail, "--tail"), switch=switch,
                skip=skip or [])


def _run_region(ctx: typer.Context, action: str, regions: list[str], *, force: bool,
                dry_run: bool, skip: list[str], **options: Any) -> None:
    """``dr failover|failback --from``: core/dr/region.py's plan, shown, asked, run."""
    from jetlink.core.dr.region import plan_region
    from jetlink.core.errors import JetlinkError

    app = App.of(ctx)
    clusters = [app.cluster] if common.given(ctx.find_root(), "cluster") else None
    plan = plan_region(common.backend(app), action, regions, clusters=clusters, skip=skip,
                       clock=common.make_clock(), **options)
    warning = answering_warning(plan, dry_run, "add --fence, or run jetlink dr fence "
                                + " ".join(f"--from {r}" for r in plan.regions))
    if warning:
        output.notice(app, f"jetlink: warning: {warning}")
    if dry_run or plan.refused:
        # (a refused run is carried out as far as its refusal: nothing, dry_run false)
        report = plan.preview() if dry_run else plan.carry_out()
        app.emit(report.to_json(), human=_render_region)
        if plan.refused:
            # (a region of many objects refused for one reason, its cluster down: the first
            # said in full, the others named; the plan above and -j give each its reason)
            first, rest = plan.refused[0], plan.refused[1:]
            names = f"{first.shown} ({first.detail})"
            if rest:
                where = "the document's refused list" if app.json else "the plan above"
                listed = ", ".join(o.shown for o in rest[:REFUSED_NAMED])
                more = f" and {len(rest) - REFUSED_NAMED} more" \
                    if len(rest) > REFUSED_NAMED else ""
                names += (f"; and {len(rest)} more: {listed}{more} (each with its reason "
                          f"in {where})")
            skips = "--skip NAME or --skip-unready leaves them out" if action == "failover" \
                else "--skip NAME leaves them out"
            if all(o.origin_silent for o in plan.refused):  # nothing to leave out: wait
                skips = ("every one waits for its old origin: run the same command again "
                         "once the region answers")
            output.notice(app, f"jetlink: error: the region {action} is refused: {names}; {skips}")
            raise typer.Exit(2)
        return
    todo = plan.todo
    if todo:
        if not app.json:
            _render_region(app, plan.preview().to_json(), plan_only=True)
        verb = "fail over" if action == "failover" else "fail back"
        output.confirm(app, f"Really {verb} {len(todo)} object{'' if len(todo) == 1 else 's'} "
                       f"of {', '.join(plan.regions)}", force=force,
                       action=f"{verb} {', '.join(plan.regions)}")
    lines = not app.json and not output.stderr_is_terminal()
    try:
        with output.progress(app, f"{action.capitalize()} of {', '.join(plan.regions)}",
                             len(todo)) as bar:
            stepped = {id(t) for t in todo}

            def on_event(o: Any) -> None:
                if id(o) in stepped:  # (a skipped object's fence given back: a line, no step)
                    bar.advance(1)
                if lines:
                    output.line(app, _object_line(o.to_json(), action))

            report = plan.carry_out(on_event)
    except KeyboardInterrupt:
        _interrupted(app, action, plan, len(todo))
    except JetlinkError as err:  # (a server gone mid-run: the run stops where it is)
        ended, _going, _unfenced, _waiting = plan.stopped()
        said = (f"{_stopped_with(action, plan.regions, ended, len(todo))}; run the same "
                "command again once it answers (its journal keeps where it stopped)")
        err.detail = f"{err.detail}; {said}" if err.detail else said
        raise
    # the run is journalled whole: an interrupt now would only cut its report short, and a
    # script must not read a finished run as an interrupted one (exit 130), up to the exit
    from jetlink.core.interrupts import ignored_from_now

    ignored_from_now()
    app.emit(report.to_json(), human=lambda a, d: _render_region(a, d, outcome_only=lines))
    if report.failed:
        output.notice(app, "jetlink: error: not " + ("failed over" if action == "failover" else
                                             "failed back") + ": " +
                      "; ".join(f"{o.shown} ({o.detail})" for o in report.failed))
        raise typer.Exit(1)
    if report.fence is not None and report.fence.not_fenced:  # (--fence)
        _failover_not_fenced(app, report.fence)


def _stopped_with(action: str, regions: Sequence[str], ended: Sequence[Any], todo: int) -> str:
    """``the region failover of west stopped with 1 of 3 objects ended``."""
    return (f"the region {action} of {', '.join(regions)} stopped with {len(ended)} of "
            f"{todo} object{'' if todo == 1 else 's'} ended")


def _interrupted(app: App, action: str, plan: Any, todo: int) -> NoReturn:
    """A region run stopped by Ctrl-C: what it finished (each object as the plan last saw
    it: ended, or under way, whose verb may have finished), which promoted objects' old
    origins are not fenced yet and which objects' origins are fenced with the objects not
    promoted yet (--fence), and that the same command finishes the rest (its
    journal, core/dr/region.py, records each object before and after); exit 130."""
    def named(objs: Sequence[Any]) -> str:  # (thousands: the first few named, the rest counted)
        shown = [f"{o.kind} {o.shown}" for o in objs[:5]]
        return ", ".join(shown) + (f" and {len(objs) - 5} more" if len(objs) > 5 else "")

    ended, going, unfenced, waiting = plan.stopped()
    text = (f"jetlink: interrupted: {_stopped_with(action, plan.regions, ended, todo)}"
            + (f" ({named(ended)})" if ended else ""))
    if going:
        text += (f"; {len(going)} under way ({named(going)}: "
                 f"{'its' if len(going) == 1 else 'their'} {action} may have finished)")
    if unfenced:
        text += (f"; the old origin{'s' if len(unfenced) > 1 else ''} of {named(unfenced)} "
                 f"{'are' if len(unfenced) > 1 else 'is'} not fenced yet: both sides may "
                 "take writes until the re-run fences "
                 f"{'them' if len(unfenced) > 1 else 'it'}")
    if waiting:
        text += (f"; the origin{'s' if len(waiting) > 1 else ''} of {named(waiting)} "
                 f"{'are' if len(waiting) > 1 else 'is'} fenced and "
                 f"{'they are' if len(waiting) > 1 else 'it is'} not promoted yet: nothing "
                 f"takes {'their' if len(waiting) > 1 else 'its'} writes until the re-run "
                 f"promotes {'them' if len(waiting) > 1 else 'it'}")
    output.notice(app, text + "; run the same command again to finish it (its journal keeps "
                              "where it stopped)")
    raise typer.Exit(130)


def answering_warning(plan: Any, dry_run: bool, hint: str) -> str | None:
    """A failover of objects whose origin answers now (the region is up) without a fence
    (the plan's ``answering``): both sides then take their subjects, as ``stream
    failover``'s warning says for one. ``hint``: how to fence, in the caller's terms."""
    up = plan.answering
    if not up:
        return None
    shown = ", ".join(f"{o.origin}@{o.region}" for o in up[:5]) + (
        f" and {len(up) - 5} more" if len(up) > 5 else "")
    return (f"{shown} answer{'s' if len(up) == 1 else ''} now: after the failover "
            f"{'they' if len(up) > 1 else 'it'} and the promoted side "
            f"{'would ' if dry_run else ''}both take writes (a split brain) until fenced: "
            f"{hint}")


def _secs(v: Any) -> str:
    from jetlink.core.monitor.lag import ago

    return "unknown" if v is None else ago(int(float(v) * 1e9))


def _object_line(o: dict[str, Any], action: str) -> str:
    """One object of a region run: what it is, where from, its state, then its plan (not
    run yet) or what was done (its verb's report)."""
    head = f"{o['kind']} {o['name']}{'@' + o['side'] if o['side'] else ''} <- " \
        f"{o['origin']}@{o['region']}: {o['state']}"
    done = o.get("result") or {}
    parts = _outcome(done, o["kind"], action) if done else _planned(o.get("plan") or {},
                                                                      o["state"], action)
    if o.get("detail"):
        parts.append(o["detail"])
    return head + (f" ({'; '.join(parts)})" if parts else "")


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _planned(p: dict[str, Any], state: str, action: str) -> list[str]:
    parts = []
    rp = p.get("recovery_point") or {}
    if rp and state == "planned":
        # (an origin that does not answer: its count is the last it reported, dr check's
        # "as last reported"; what it stored since is not known)
        heard = " as last reported" if rp.get("seconds_from") == "silence" else ""
        parts.append(f"{rp.get('messages') or 0} not copied{heard}, recovery point "
                     f"{_secs(rp.get('seconds'))}" if rp.get("seconds") is not None else
                     "not copied and recovery point unknown (never heard from its origin)")
    if p.get("subjects") and state == "planned":
        parts.append(f"subjects {', '.join(p['subjects'])} (from {p.get('subjects_from')})")
    if p.get("consumers") and state == "planned":
        parts.append(f"{_n(len(p['consumers']), 'consumer')} to place")
    if p.get("clamps") and state == "planned":
        parts.append(_n(len(p["clamps"]), "clamp"))
    tail = p.get("tail")
    if action == "failback" and isinstance(tail, dict):
        n = int(tail.get("messages") or 0)
        to = "saved to" if tail.get("saved") else "->"  # (an earlier run saved it already)
        parts.append(f"tail {_n(n, 'message')} {to} {tail.get('path')}" if n else
                     "no tail: nothing to save")
    parts.extend(_unmatched_part(p.get("unmatched"), "->"))
    return parts


def _unmatched_part(u: Any, to: str) -> list[str]:
    """A failback's messages not on the promoted side, saved beside the tail (or none)."""
    if not isinstance(u, dict) or not u.get("messages"):
        return []
    to = "saved to" if u.get("saved") else to
    return [f"{_n(int(u['messages']), 'message')} not on the promoted side {to} "
            f"{u.get('path')}"]


def _outcome(r: dict[str, Any], kind: str, action: str) -> list[str]:
    if kind == "topic":
        return [_n(len(r.get("clamps") or []), "clamp")] if r.get("clamps") else []
    if action == "failover":
        placed = sum(1 for c in r.get("consumers") or [] if c.get("status") == "created")
        parts = [f"subjects {', '.join(r.get('subjects') or [])}"]
        if placed:
            parts.append(f"{_n(placed, 'consumer')} placed")
        if r.get("clamps"):
            parts.append(_n(len(r["clamps"]), "clamp"))
        return parts
    tail = r.get("tail") or {}
    n = int(tail.get("messages") or 0)
    parts = ([f"tail {_n(n, 'message')} saved to {tail.get('path')}"] if n else
             ["no tail: nothing saved"]) if tail else []
    parts.extend(_unmatched_part(r.get("unmatched"), "saved to"))
    parts.append("switched: the old origin is the primary again" if r.get("state") ==
                 "switched" else "the old origin mirrors it again")
    return parts


def _render_region(app: App, doc: dict[str, Any], *, plan_only: bool = False,
                   outcome_only: bool = False) -> None:
    """A region run's plan or report: one line per object, the listed, then the totals."""
    output.lines(app, region_lines(doc, plan_only=plan_only, outcome_only=outcome_only))


def region_lines(doc: dict[str, Any], *, plan_only: bool = False,
                 outcome_only: bool = False) -> list[str]:
    """A region run's plan or report as lines (the dashboard's region dialogs show them
    too)."""
    out = []
    action = doc["action"]
    regions = ", ".join(doc["regions"])
    t = doc["totals"]
    if not outcome_only:
        head = f"Region {action} of {regions}: {t['objects']} object" \
            f"{'' if t['objects'] == 1 else 's'}"
        if action == "failover":
            silent = any((o.get("plan") or {}).get("recovery_point", {}).get("seconds_from")
                         == "silence" for o in doc["objects"])
            unknown = int(t.get("at_risk_unknown") or 0)
            if unknown and unknown == t["objects"]:
                risk = "messages at risk unknown (never heard from the origins)"
            else:
                risk = f"{_n(t['messages_at_risk'], 'message')} at risk" + (
                    " as last reported (an origin does not answer)" if silent else "") + (
                    f" and unknown for {_n(unknown, 'object')} (never heard from its origin)"
                    if unknown else "")
            head += f", {risk}, recovery point {_secs(t['recovery_point_seconds'])}, " \
                f"{_n(t['consumers'], 'consumer')} to place"
        elif action == "failback" and (doc.get("options") or {}).get("switch"):
            head += (", then the switch back (--switch: the old origins primaries again, "
                     "unfenced; the promoted streams mirror them)")
        out.append(head)
        out += ["  " + _object_line(o, action) for o in doc["objects"]]
        what = ("it receives nothing from them while the region is out (not promoted; "
                "they come back with the failback)" if action == "failover" else
                "each source starts again after what it holds when its origin is created "
                "again (nothing copied twice)")
        out += [f"  listed: {x['kind']} {x['name']}@{x['side']} sources "
                f"{', '.join(x['sources'])}: {what}" for x in doc["listed"]]
    if plan_only:
        return out
    if doc["dry_run"]:
        fence = doc.get("fence")
        if doc["nothing_to_do"]:  # as the run would say it (with --fence: nothing to fail
            out += _nothing_to_do(doc, action, regions, outcome_only=False)  # over, then the
        if fence:  # fence it would make, its own "Dry run" line once, below)
            out += [x for x in fence_lines(fence) if x != "Dry run: nothing changed"]
        out.append("Dry run: nothing changed")
        return out
    elif any(o["state"] == "refused" for o in doc["objects"]) and not doc["done"]:
        out.append("Refused: nothing changed")
    elif doc["nothing_to_do"]:
        out += _nothing_to_do(doc, action, regions, outcome_only=outcome_only)
    else:
        out.append(f"Region {action} of {regions}: {doc['done']} done, "
                   f"{doc['done_earlier']} done earlier, {doc['skipped']} skipped, "
                   f"{len(doc['failed'])} failed")
        if action == "failback" and doc["done"] and not (doc.get("options") or {}).get(
                "switch"):  # the step left: what stream failback says as "switch: waiting"
            froms = " ".join(f"--from {r}" for r in doc["regions"])
            out.append(f"Next: once the old origins have caught up, switch back (they become "
                       f"the primaries again, the promoted streams their mirrors): run this "
                       f"command again with --switch (jetlink dr failback {froms} --switch, "
                       "with this run's server or cluster options)")
    fence = doc.get("fence")
    if fence:
        out += fence_lines(fence)
    return out


def _nothing_to_do(doc: dict[str, Any], action: str, regions: str, *,
                   outcome_only: bool) -> list[str]:
    """A region run with nothing to do: why (done already, every object skipped or done by
    its own verb), the steps left to people."""
    out = []
    if (doc["done_earlier"] or doc.get("finished")) and not doc["skipped"]:
        when = f" (finished {doc['finished']})" if doc.get("finished") else ""
        said = f"Nothing to do: the region {action} of {regions} was done already{when}"
    else:  # every object skipped, done earlier by its own verb, or left to a step
        parts = [f"{doc['done_earlier']} done earlier"] if doc["done_earlier"] else []
        parts += [f"{doc['skipped']} skipped"] if doc["skipped"] else []
        said = f"Nothing to do: the region {action} of {regions} runs no object" + (
            f" ({', '.join(parts)})" if parts else "")
    manual = [o for o in doc["objects"] if o["state"] == "manual"]
    if manual:
        if outcome_only:  # no plan was shown: the steps left to people, each named
            out += ["  " + _object_line(o, action) for o in manual]
        said += f"; {_n(len(manual), 'object')} left to the step named above"
    if doc.get("fence"):  # the fence lines below say what the run did do
        said = said.replace("Nothing to do", "Nothing to " + (
            "fail over" if action == "failover" else "fail back"), 1)
    out.append(said)
    return out


def register(app: typer.Typer) -> None:
    app.add_typer(dr_app, name="dr")
