"""``jetlink replicate``: copy what mirrors and sources have pending, and report it.

Every mutating command already ends with one bounded replication step (cli/common.py
``replicate_step``); this command is for the rest: a backlog, an origin back from an outage,
chains of mirrors. It covers every agreement of the data directory (the global --cluster is
not used): the pump (``jetlink.core.replication``) skips targets in clusters that are down and
reports agreements whose origin is unreachable.

- ``jetlink replicate`` runs ``pump_until_idle`` and prints one row per agreement (target,
  origin, kind, messages copied, lag, error) and a summary; with --json one document
  ``{"agreements": [AgreementReport...], "links": [...], "copied", "skipped", "lag",
  "errors"}`` (errors: the agreements and the links in error).
- ``jetlink replicate --follow`` keeps pumping (a step, then a pause of --interval when the
  step moved nothing) until Ctrl-C (exit status 130): a live table on a terminal, one plain
  line per agreement with activity otherwise, JSON lines with --json (one line per step with
  activity: ``{"time", "step", "copied", "agreements": [...]}``). Activity is a message
  copied or skipped, or an error that appeared, changed or cleared.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Any

import typer

from jetlink.cli import common, output
from jetlink.cli.app import App, ExitCode
from jetlink.cli.common import data_dir, usage
from jetlink.cli.options import WAIT, JsonOption

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.core.replication import AgreementReport

# messages: a catch-up expected to copy more (the lag its agreements report), or one that has
# copied more so far, shows a progress bar (on a terminal, without --json; not --follow).
PROGRESS_MIN = 100_000


def sleep(seconds: float) -> None:
    """The pause between idle steps of --follow (tests replace it)."""
    time.sleep(seconds)


def live_wanted(app: App) -> bool:
    """Whether --follow shows a live table: stdout is a terminal and no --json (tests
    replace it)."""
    return not app.json and output.stdout_is_terminal()


def replicate(
    ctx: typer.Context,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow",
            "-F",
            help="Keep replicating until interrupted (Ctrl-C), showing the activity.",
        ),
    ] = False,
    interval: Annotated[
        str,
        typer.Option(
            "--interval",
            metavar="DURATION", parser=WAIT,
            help="With --follow: pause between steps that find nothing to copy (500ms, 2s).",
        ),
    ] = "1s",
    json_output: JsonOption = False,
) -> None:
    """Copy pending messages to mirrors and sources.

    Runs replication steps over every mirror and source of the data directory until
    nothing is pending, then prints, per agreement, the target stream, its origin
    (STREAM@CLUSTER), the kind, the messages copied, the lag left and the error, if any (an
    origin in a cluster that is down, a target at its limits), then a summary. Exit status 1
    when an agreement or a link reports an error (the report is printed all the same), 0
    otherwise. Every cluster is replicated into: --cluster is no filter (said so; a
    cluster the data directory does not hold is an error).

    --follow keeps going until Ctrl-C (exit status 130): a live table on a terminal, one
    line per agreement with activity otherwise, JSON lines with --json (one line per step
    with activity). Without --follow, --json prints one document: {"agreements": [...],
    "links": [...], "copied", "skipped", "lag", "errors"} (errors: the agreements and the
    links in error).
    """
    from jetlink.cli.stream_flags import parse_duration_flag

    app = App.of(ctx)
    if not follow and common.given(ctx, "interval"):
        raise usage(f"--interval {interval} applies with --follow (the pause between its "
                    "steps); without it replicate runs until nothing is pending and stops")
    pause = parse_duration_flag(interval, flag="--interval", wait=True) / 1e9
    if follow and pause <= 0:
        raise usage(f"invalid value for --interval: {interval!r}: must be more than 0 (the "
                    "pause between steps, e.g. 1s)")
    store = data_dir(app, step=False)
    store.check_exists()  # (a data directory that does not exist holds nothing to copy)
    _cluster_given(app, ctx, store)
    clock = common.make_clock()
    if follow:
        _follow(app, store, clock, pause)
        return
    from jetlink.core.replication import down_reports, pump_until_idle
    from jetlink.core.step import links_until_idle

    bar_possible = not app.json and output.stderr_is_terminal()
    broken: list[Any] = []  # clusters whose database cannot be used: the others still run
    with CatchUpBar(app, lag_at_start(store, clock) if bar_possible else None) as bar:
        reports = pump_until_idle(store, clock, on_moved=bar.advance, broken=broken)
    reports += down_reports(store, clock)  # targets in a cluster down: in error
    doc = summary_doc(reports, links_until_idle(store, clock))
    app.emit(doc, human=render_summary)
    for _name, err in broken:
        output.notice(app, output.format_error(err))
    failing = in_error(doc)
    if failing:  # the report is printed; the exit status says not everything replicates
        output.notice(app, f"jetlink: {failing} in error: exit status 1")
    if failing or broken:
        raise typer.Exit(ExitCode.FAILED)


def _cluster_given(app: App, ctx: typer.Context, store: Any) -> None:
    """replicate runs over every cluster of the data directory: a --cluster typed on its
    command line is said to be no filter, and one the data directory does not hold is the
    error a typo deserves (one from the environment or a context is left alone)."""
    from jetlink.core.errors import NotFoundError, not_found

    root = ctx.find_root()
    if common.parameter_source(root, "cluster") != "COMMANDLINE":
        return
    names = store.cluster_names()
    if app.cluster not in names:
        raise not_found(NotFoundError(f"cluster {app.cluster} not found", field="cluster"),
                        app.cluster, names)
    output.notice(app, f"jetlink: notice: --cluster {app.cluster} is no filter here: "
                       "replicate copies into every cluster of the data directory")


# -- the catch-up progress bar -------------------------------------------------------------------


def lag_at_start(store: Any, clock: Any) -> int | None:
    """The lag the mirrors and sources of the data directory report (StreamInfo's, as of
    their last replication step): what a catch-up is expected to copy, at least; None when
    it cannot be read."""
    from jetlink.core.errors import JetlinkError
    from jetlink.core.jetstream import JetStream

    total = 0
    try:
        for info in store.clusters(create_local=False):
            if info.kind != "nats" or info.down:
                continue
            for si in JetStream(store.open(info.name), clock).streams():
                for doc in ([si.mirror] if si.mirror else []) + list(si.sources or []):
                    total += int(doc.get("lag") or 0)
    except (JetlinkError, OSError, ValueError):
        return None
    return total


class CatchUpBar:
    """``with CatchUpBar(app, expected) as bar: pump_until_idle(..., on_moved=bar.advance)``:
    the progress bar of ``jetlink replicate`` (cli/output.py ``progress``), drawn from the
    start when ``expected`` (the lag at the start) is large, else from the moment the
    messages copied so far are (then without a total)."""

    def __init__(self, app: App, expected: int | None) -> None:
        self.app, self.expected, self.done = app, expected, 0
        self._ctx: Any = None
        self._bar: Any = None

    def _open(self, total: int | None) -> None:
        self._ctx = output.progress(self.app, "Replicating", total)
        self._bar = self._ctx.__enter__()

    def __enter__(self) -> CatchUpBar:
        if self.expected is not None and self.expected > PROGRESS_MIN:
            self._open(self.expected)
        return self

    def advance(self, n: int) -> None:
        self.done += n
        if self._bar is None and self.done > PROGRESS_MIN:
            self._open(None)
            n = self.done
        if self._bar is not None:
            self._bar.advance(n)

    def __exit__(self, *exc: Any) -> None:
        if self._ctx is not None:
            self._ctx.__exit__(*exc)


# -- cluster links -----------------------------------------------------------------------------

def links_table(app: App, docs: list[dict[str, Any]], *, title: str) -> None:
    rows = [
        [
            f"{d['link']}@{d['cluster']}",
            d["state"],
            output.comma(d["mirrors"]),
            output.comma(d["copied"]),
            output.comma(d["lag"]),
            output.comma(d["offsets_synced"]),
            "; ".join(d.get("errors", [])),
        ]
        for d in docs
    ]
    output.table(
        app,
        ["Link", "State", "Mirrors", "Copied", "Lag", "Offsets Synced", "Error"],
        rows,
        title=title,
        no_wrap=("Link", "State", "Mirrors", "Copied", "Lag", "Offsets Synced"),
    )


def link_activity_line(now: str, r: Any) -> str:
    text = (f"{now} link {r.link}@{r.cluster}: copied {output.comma(r.copied)}, lag "
            f"{output.comma(r.lag)}, offsets synced {output.comma(r.offsets_synced)}")
    if r.created:
        text += f", created {', '.join(r.created)}"
    if r.stopped:
        text += f", stopped {', '.join(r.stopped)}"
    for c in r.truncated:
        text += (f", truncated {c['topic']}-{c['partition']} to "
                 f"{c['offset_truncated_to']} (its source was)")
    if r.errors:
        text += f", error: {'; '.join(r.errors)}"
    return text


# -- one run -----------------------------------------------------------------------------------


def summary_doc(reports: list[AgreementReport], links: list[Any] | None = None
                ) -> dict[str, Any]:
    docs = [r.to_json() for r in reports]
    return {
        "agreements": docs,
        "links": [r.to_json() for r in links or []],
        "copied": sum(d["copied"] for d in docs),
        "skipped": sum(d["skipped"] for d in docs),
        "lag": sum(d["lag"] for d in docs),
        # agreements and links in error, as the exit status counts them
        "errors": sum(1 for d in docs if d.get("error"))
        + sum(1 for r in links or [] if r.errors),
    }


def in_error(doc: dict[str, Any]) -> str:
    """What a summary has in error, each kind by its own word: ``1 link``, ``2 agreements``
    (NATS mirrors and sources), ``1 agreement and 1 link``; "" when nothing is."""
    links = sum(1 for r in doc["links"] if r.get("errors"))
    agreements = sum(1 for d in doc["agreements"] if d.get("error"))
    parts = [_plural(n, word) for n, word in ((agreements, "agreement"), (links, "link"))
             if n]
    return " and ".join(parts)


def at(stream: str, cluster: str) -> str:
    """``STREAM@CLUSTER``, as --source takes an origin of another cluster."""
    return f"{stream}@{cluster}"


def _plural(n: int, word: str) -> str:
    return f"{output.comma(n)} {word}{'' if n == 1 else 's'}"


def agreements_table(app: App, docs: list[dict[str, Any]], *, title: str) -> None:
    skipped = any(d["skipped"] for d in docs)
    columns = ["Target", "Origin", "Kind", "Copied", *(["Skipped"] if skipped else []), "Lag"]
    rows = [
        [
            at(d["target"], d["target_cluster"]),
            at(d["origin"], d["origin_cluster"]),
            d["kind"],
            output.comma(d["copied"]),
            *([output.comma(d["skipped"])] if skipped else []),
            output.comma(d["lag"]),
            d.get("error") or "",
        ]
        for d in docs
    ]
    output.table(
        app,
        [*columns, "Error"],
        rows,
        title=title,
        no_wrap=("Target", "Origin", "Kind", "Copied", "Skipped", "Lag"),
    )


def render_summary(app: App, doc: dict[str, Any]) -> None:
    docs = doc["agreements"]
    links = doc.get("links", [])
    if not docs and not links:
        output.line(app, "No mirrors or sources to replicate")
        return
    if links:
        links_table(app, links, title="Cluster Links")
        for d in links:  # (mirror partitions cut back after their source: core/kafka/epochs.py)
            for c in d.get("truncated", []):
                output.notice(app, f"jetlink: warning: mirror topic {c['topic']} of link "
                                   f"{d['link']}@{d['cluster']}: partition {c['partition']} "
                                   f"truncated to offset {c['offset_truncated_to']} "
                                   f"({_plural(c['messages_truncated'], 'record')} removed): "
                                   "its source's log was cut back there (a fail-back's "
                                   "truncation, here or upstream); the mirror copies on from "
                                   "the source")
        output.line(app)
        text = (f"{_plural(len(links), 'link')}: "
                f"{_plural(sum(d['copied'] for d in links), 'record')} copied, lag "
                f"{output.comma(sum(d['lag'] for d in links))}, "
                f"{_plural(sum(d['offsets_synced'] for d in links), 'offset')} synced")
        output.line(app, text)
        if not docs:
            return
        output.line(app)
    agreements_table(app, docs, title="Replication")
    output.line(app)
    text = (
        f"{_plural(len(docs), 'agreement')}: {_plural(doc['copied'], 'message')} copied, "
        f"lag {output.comma(doc['lag'])}, "
        f"{_plural(sum(1 for d in docs if d.get('error')), 'error')}"
    )
    if doc["skipped"]:
        text += f", {_plural(doc['skipped'], 'duplicate')} skipped"
    output.line(app, text)


# -- --follow ----------------------------------------------------------------------------------


def _key(r: AgreementReport) -> tuple[str, ...]:
    return (r.target_cluster, r.target, r.kind, r.origin_cluster, r.origin)


class Follower:
    """The state of a --follow run: totals per agreement since the start, the last error
    seen of each (to report changes once), the step count."""

    def __init__(self) -> None:
        self.steps = 0
        self.totals: dict[tuple[str, ...], dict[str, Any]] = {}
        self.errors: dict[tuple[str, ...], str | None] = {}

    def step(self, reports: list[AgreementReport]) -> list[AgreementReport]:
        """Record one step; the reports with activity (moved, or error changed)."""
        self.steps += 1
        active = []
        for r in reports:
            key = _key(r)
            doc = self.totals.get(key)
            if doc is None:
                doc = self.totals[key] = {**r.to_json(), "copied": 0, "skipped": 0}
            doc.update(
                copied=doc["copied"] + r.copied,
                skipped=doc["skipped"] + r.skipped,
                lag=r.lag,
                seq=r.seq,
            )
            doc.pop("error", None)
            if r.error:
                doc["error"] = r.error
            if r.moved or self.errors.get(key) != r.error:
                active.append(r)
            self.errors[key] = r.error
        return active

    @property
    def copied(self) -> int:
        return sum(d["copied"] for d in self.totals.values())


def activity_line(now: str, r: AgreementReport) -> str:
    text = (
        f"{now} {r.kind} {at(r.target, r.target_cluster)} <- {at(r.origin, r.origin_cluster)}: "
        f"copied {output.comma(r.copied)}"
    )
    if r.skipped:
        text += f", skipped {output.comma(r.skipped)}"
    text += f", lag {output.comma(r.lag)}"
    if r.error:
        text += f", error: {r.error}"
    return text


def _follow(app: App, store: Any, clock: Any, pause: float) -> None:
    from jetlink.core.clock import format_rfc3339_nano
    from jetlink.core.kafka.mirrors import pump_links
    from jetlink.core.replication import down_reports, pump
    from jetlink.core.retry import Retries
    from jetlink.core.step import FOLLOW_STEP_MAX_MSGS

    state = Follower()
    records = 0  # copied by the cluster links' steps (Kafka records; state counts messages)
    live = None
    if live_wanted(app):
        from rich.live import Live

        live = Live(console=app.out, auto_refresh=False, transient=False)
        live.start()
    # SIGTERM (a service manager's stop) ends the loop as Ctrl-C does: the summary, then
    # 128 + 15 (the handler raises in the main thread between steps' statements, as
    # Python's own SIGINT handler does: a transaction under way rolls back). Installed
    # before the first line says the loop runs.
    import signal

    def terminated(_sig: int, _frame: Any) -> None:
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, terminated)
    committed: list[Any] = []  # what the step under way committed so far (core pump's)
    try:  # (the notice inside: a stop right after it lands in this try's handler)
        output.notice(app, f"Replicating every {_interval_text(pause)}; Ctrl-C to stop")
        retries = Retries()
        warned: set[str] = set()
        while True:
            broken: list[Any] = []
            committed = []  # a new step: what its transactions commit, as they do
            lost = store.gone()
            if lost:  # a cluster removed under it: said once, its connection let go
                output.notice(app, f"jetlink: warning: {lost}: nothing is replicated into "
                                   "it any more")
                store.close()
            try:
                reports = pump(store, clock, max_msgs=FOLLOW_STEP_MAX_MSGS, broken=broken,
                               committed=committed)
                # targets in a cluster down: in error, as the one-shot report lists them
                reports += down_reports(store, clock)
                link_reports = pump_links(store, clock, max_records=FOLLOW_STEP_MAX_MSGS,
                                          on_error=lambda c, e: output.notice(
                                              app, f"jetlink: warning: links of {c}: {e}"))
            except Exception as err:  # noqa: BLE001 - retried when it passes, else raised
                store.close()  # the next step opens the files anew
                said = retries.failed(err)
                if said:
                    output.notice(app, f"jetlink: warning: replication step failed: {said}")
                sleep(pause)
                continue
            said = retries.succeeded()
            if said:
                output.notice(app, f"jetlink: {said}")
            for name, err in broken:  # once per cluster while it stays unusable
                if name not in warned:
                    output.notice(app, output.format_error(err).replace(
                        "jetlink: error:", "jetlink: warning:", 1))
            warned = {name for name, _err in broken}
            committed = []  # the step is recorded whole from here
            active = state.step(reports)
            records += sum(r.copied for r in link_reports)
            link_active = [r for r in link_reports if r.moved or r.errors]
            now = format_rfc3339_nano(clock.now_ns())
            for r in link_active:
                if app.json:
                    output.json_line({"time": now, "step": state.steps,
                                      "link": r.to_json()}, app)
                elif live is None:
                    output.line(app, link_activity_line(now, r))
            if live is not None:
                live.update(_live_table(state, now), refresh=True)
            elif active and app.json:
                output.json_line(
                    {
                        "time": now,
                        "step": state.steps,
                        "copied": sum(r.copied for r in active),
                        "agreements": [r.to_json() for r in active],
                    },
                    app,
                )
            else:
                for r in active:
                    output.line(app, activity_line(now, r))
            if not any(r.moved for r in reports) and not any(r.moved for r in link_reports):
                sleep(pause)
    except KeyboardInterrupt as stop:
        if live is not None:
            live.stop()
            live = None
        moved = [r for r in committed if r.moved]
        if moved:  # stopped inside a step: what its targets committed before the stop
            state.step(moved)
            if app.json:
                output.json_line({"time": format_rfc3339_nano(clock.now_ns()),
                                  "step": state.steps,
                                  "copied": sum(r.copied for r in moved),
                                  "agreements": [r.to_json() for r in moved],
                                  "interrupted": True}, app)
        output.notice(
            app,
            f"Stopped after {_plural(state.steps, 'step')}: "
            f"{_plural(state.copied, 'message')} copied"
            + (f", {_plural(records, 'record')} by cluster links" if records else ""),
        )
        code = 128 + signal.SIGTERM if isinstance(stop, _Terminated) else ExitCode.INTERRUPTED
        raise typer.Exit(code) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
        if live is not None:
            live.stop()


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised as Ctrl-C's KeyboardInterrupt is (``_follow``)."""


def _interval_text(seconds: float) -> str:
    from jetlink.core.durations import format_duration

    return format_duration(int(seconds * 1e9))


def _live_table(state: Follower, now: str) -> Any:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    tbl = Table(
        title=f"Replication at {now}: step {state.steps}, "
        f"{_plural(state.copied, 'message')} copied",
        title_justify="left",
        box=box.ROUNDED,
        header_style="bold",
    )
    for column in ("Target", "Origin", "Kind", "Copied", "Lag", "Error"):
        tbl.add_column(column, no_wrap=column != "Error", overflow="fold")
    if not state.totals:
        tbl.add_row(Text("(no mirrors or sources)"), "", "", "", "", "")
    for d in state.totals.values():
        cells = (
            at(d["target"], d["target_cluster"]),
            at(d["origin"], d["origin_cluster"]),
            d["kind"],
            output.comma(d["copied"]),
            output.comma(d["lag"]),
            d.get("error") or "",
        )
        tbl.add_row(*(Text(c) for c in cells))
    return tbl


def register(app: typer.Typer) -> None:
    app.command("replicate")(replicate)
