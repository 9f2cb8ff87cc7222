"""The Textual application behind ``jetlink dashboard``.

Built by :func:`create_app` (tests construct it and drive it with Pilot; only the command
calls ``run()``). Data comes from :func:`jetlink.cli.dashboard.data.load` in a worker thread
every ``refresh`` seconds (never more often than once a second); a load still running at the
next tick is not doubled, and one that takes long, or a locked database, shows a notice in
the status line while the tables keep the last snapshot. Actions
(:mod:`jetlink.cli.dashboard.actions`) run in worker threads too; destructive ones ask in a
modal first (promote and failover show their dry run: lag and clamps; a region's failover,
failback and fence show their plan, then their outcome).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from datetime import UTC
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import (
    Button,
    DataTable,
    Footer,
    Header,
    Input,
    RichLog,
    Static,
    TabbedContent,
    TabPane,
)
from textual.worker import get_current_worker

from jetlink.cli import output
from jetlink.cli.dashboard import actions
from jetlink.cli.dashboard.actions import Outcome, feed_target
from jetlink.cli.dashboard.data import (
    AgreementRow,
    BucketRow,
    ClusterRow,
    GroupRow,
    LinkRow,
    MirrorRow,
    Rates,
    RegionRow,
    Snapshot,
    StreamRow,
    load,
    rate_text,
)
from jetlink.core.clock import Clock
from jetlink.core.kafka.links import ACTIVE as LINK_ACTIVE
from jetlink.core.kafka.links import PAUSED as LINK_PAUSED
from jetlink.core.kafka.mirror_model import SOURCE_UNREACHED
from jetlink.core.kafka.mirrors import ACTIVE, PAUSED, PENDING_STOPPED, STOPPED
from jetlink.core.retry import Retries

MIN_REFRESH = 1.0  # seconds: the tables refresh at most once a second
WIDE = 150  # columns from which the detail pane shows beside the tables
FEED_LINES = 500

# the dashboard's own actions: hidden under a modal or the detail view, and where they do
# not apply (check_action)
GATED = frozenset({"tab", "detail", "filter", "scope", "step", "follow", "pause", "resume",
                   "promote", "failover", "failback", "fence", "down", "up", "purge"})


def _at(name: str, cluster: str) -> str:
    return f"{name}@{cluster}"


def _ns(ns: int) -> str:
    return "never" if ns < 0 else output.since(ns)


def _ttl(ns: int) -> str:
    if not ns:
        return "-"
    from jetlink.core.durations import format_duration

    return format_duration(ns)


def _ready(text: str) -> Text:
    """A mirror's readiness cell (``dr check``'s status and first reason), coloured."""
    style = {"OK": "green", "WARNING": "yellow", "CRITICAL": "bold red"}.get(
        text.split(":")[0], "")
    return Text(text, style=style)


def _lag(lag: int, stale: bool, never: bool = False) -> Text:
    """A lag cell; one as last reported long ago (the origin silent, core/monitor/lag.py)
    says so: ``62 (last reported)``, its age in the table's Active / Last Fetch column; one
    never reported (``never``: the origin never heard from) is no figure: ``unknown``."""
    if stale and never:
        return Text("unknown", style="yellow")
    if stale:
        return Text(f"{output.comma(lag)} (last reported)", style="yellow")
    return Text(output.comma(lag), style="yellow" if lag else "")


def _cut_at_word(text: str, room: int) -> str:
    """``text`` in ``room`` characters: cut after its last whole word that fits, ``…``
    after it."""
    if len(text) <= room:
        return text
    cut = text[:room - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > room // 2 else cut).rstrip(" :,") + "…"


def _middle_out(text: str, room: int) -> str:
    """``text`` in ``room`` characters, its end kept when it is what the operator must
    see (an outcome's ``· 2 more lines in the notice``, said short first: ``· +2 in
    notice``; a dialog's ``nothing changed``): its middle gives way (``…``) instead. Any
    other text is left as it is (its start matters most: the line cuts its end)."""
    import re

    if len(text) <= room:
        return text
    text = re.sub(r" · (\d+) more lines? in the notice$", r" · +\1 in notice", text)
    kept = re.search(r"( · \+\d+ in notice|, nothing changed)$", text)
    if len(text) <= room or kept is None or len(kept.group(1)) > room - 6:
        return text
    tail = kept.group(1)
    return text[:room - 1 - len(tail)] + "…" + tail


def _num(n: int | None) -> str:
    return "-" if n is None else output.comma(n)


# a region action: its verb, and its question (over its plan)
REGION_ACTIONS = {
    "failover": ("Failover", "Fail region {region} over? Each mirror of it below stops "
                 "mirroring and becomes a normal stream (or topic)."),
    "failback": ("Failback", "Fail region {region} back? Each object failed over from it "
                 "goes back below its old origin, whose tail is saved first."),
    "fence": ("Fence", "Fence region {region}? Each old origin below stops taking writes "
              "(its subjects moved aside and recorded) until failback --switch."),
}


def _region_cells(r: RegionRow) -> tuple[Any, ...]:
    """A region's row: the split brain count first, white on red (``dr check`` grades it
    CRITICAL)."""
    from jetlink.core.monitor.lag import ago

    name = Text(r.name)
    if r.down:
        name.append(" (down)", style="bold red")
    worst = "-" if not r.mirrors else "unknown" if r.worst_seconds is None \
        else ago(round(r.worst_seconds * 1e9))
    split = r.split_brains
    fenced = r.returned("fenced")
    at_risk = r.messages_at_risk
    # not graded (the readiness checks failed, said on the status line): "?", never 0
    return (name, Text("?") if split is None else
            Text(f" {split} ", style="bold white on red") if split else Text("0"),
            str(len(r.objects)), _count_cell(r.ready, "green"),
            _count_cell(r.not_ready, "bold red"), worst,
            "-" if not r.mirrors else "?" if at_risk is None else output.comma(at_risk),
            str(r.failed_over),
            f"{'?' if fenced is None else fenced}/{r.failed_over}" if r.failed_over else "-")


def _count_cell(n: int | None, style: str) -> Text:
    return Text("?") if n is None else Text(str(n), style=style if n else "")


# -- the tables: columns and cells ----------------------------------------------------------

COLUMNS: dict[str, tuple[str, ...]] = {
    "clusters": ("Cluster", "Kind", "State", "Streams", "Buckets", "Topics", "Links", "Error"),
    "streams": ("Stream", "Messages", "Rate", "Trend", "Bytes", "Sequences", "Consumers",
                "Subjects"),
    "agreements": ("Target", "Kind", "Origin", "Lag", "Active", "Error", "Failover Ready"),
    "kv": ("Bucket", "Kind", "Values", "History", "TTL", "Origins"),
    "links": ("Link", "Source", "State", "Mirrors", "Error"),
    "mirrors": ("Mirror Topic", "Link", "Status", "Part", "Lag", "Last Fetch", "Since",
                "Failover Ready"),
    "groups": ("Group", "State", "Topic", "Part", "Offset", "Log End", "Lag"),
    "regions": ("Region", "Split Brain", "Objects", "Ready", "Not Ready", "Worst RP",
                "At Risk", "Failed Over", "Fenced"),
}
TABLE_TAB = {"clusters": "clusters", "streams": "streams", "agreements": "streams",
             "kv": "kv", "links": "links", "mirrors": "links", "groups": "groups",
             "regions": "regions"}
TAB_TABLES = {"clusters": ("clusters",), "streams": ("streams", "agreements"),
              "kv": ("kv",), "links": ("links", "mirrors"), "groups": ("groups",),
              "feed": (), "regions": ("regions",)}


class DetailScreen(Screen[None]):
    """The selected item's document (StreamInfo, mirror describe, ...), pretty printed."""

    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back")]

    def __init__(self, title: str, doc: Any, key: tuple[type, str] | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.doc = doc
        self.key = key  # (row type, row key): the item it follows as the data refreshes

    def compose(self) -> ComposeResult:
        from rich.json import JSON

        yield Static(Text(self.title_text, style="bold"), id="detail-title")
        with VerticalScroll(id="detail-scroll"):
            yield Static(JSON(json.dumps(self.doc, default=str), indent=2), id="detail-body")
        yield Footer()

    def follow(self, doc: Any | None) -> None:
        """The refreshed document of the item shown; None: it is gone (deleted meanwhile):
        the last document stays, the title says so."""
        from rich.json import JSON

        if doc is None:
            if not self.title_text.endswith(GONE):
                self.title_text += GONE
                self.query_one("#detail-title", Static).update(
                    Text(self.title_text, style="bold"))
            return
        if doc != self.doc:
            self.doc = doc
            self.query_one("#detail-body", Static).update(
                JSON(json.dumps(doc, default=str), indent=2))


GONE = " (gone: it is no longer there; as last read)"


class ConfirmScreen(ModalScreen[bool]):
    """A destructive action's question: what will happen, then confirm or cancel; without
    ``confirm`` only what happened (or why nothing can), to close."""

    BINDINGS = [
        Binding("y", "answer(True)", "Confirm"),
        Binding("n,escape", "answer(False)", "Cancel"),
    ]

    def __init__(self, title: str, lines: list[str], confirm: str | None) -> None:
        super().__init__()
        self.title_text = title
        self.lines = lines
        self.confirm = confirm

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Static(Text(self.title_text, style="bold"), id="confirm-title")
            with VerticalScroll(id="confirm-scroll"):  # a region's plan can be long
                yield Static(Text("\n".join(self.lines)), id="confirm-body")
            with Horizontal(id="confirm-buttons"):
                if self.confirm is not None:
                    yield Button(f"{self.confirm} (y)", variant="error", id="yes")
                yield Button("Cancel (n)" if self.confirm is not None else "Close (n)",
                             variant="primary", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes and self.confirm is not None)


class Dashboard(App[None]):
    """jetlink's dashboard (see the module doc); build it with :func:`create_app`."""

    TITLE = "jetlink dashboard"
    CSS = """
    #main { height: 1fr; }
    TabbedContent { width: 1fr; }
    #side { width: 60; display: none; border-left: solid $primary; padding: 0 1; }
    Dashboard.-wide #side { display: block; }
    #filter { display: none; height: 3; }
    #filter.-shown { display: block; }
    DataTable { height: 1fr; }
    #streams-table { height: 3fr; }
    #links-table { height: 1fr; }
    #agreements-table, #mirrors-table { height: 2fr; border-top: solid $primary-darken-2; }
    #status { height: 1; padding: 0 1; background: $panel; }
    #status.-problem { background: $error 40%; }
    #feed-subject { height: 3; }
    #feed-log { height: 1fr; }
    ConfirmScreen { align: center middle; }
    #confirm { width: 76; max-width: 100%; height: auto; max-height: 90%; border: thick $error;
               padding: 1 2;
               background: $surface; }
    #confirm-scroll { height: auto; max-height: 45vh; }
    #confirm-body { margin: 1 0; }
    #confirm-buttons { height: auto; align-horizontal: right; }
    #confirm-buttons Button { margin-left: 2; }
    #detail-title { padding: 0 1; background: $panel; }
    App:nocolor DataTable > .datatable--cursor { text-style: reverse; }
    App:nocolor DataTable > .datatable--header { text-style: bold underline; }
    """

    BINDINGS = [
        Binding("q", "quit", "Quit"),
        # Ctrl-C ends it as it ends every command: interrupted, exit status 130
        # (docs/exit-codes.md), over Textual's "press ctrl+q" and an input's copy
        Binding("ctrl+c", "interrupt", "Quit (130)", show=False, priority=True),
        Binding("question_mark,f1", "keys", "Keys"),
        Binding("1", "tab('clusters')", "Clusters", show=False),
        Binding("2", "tab('streams')", "Streams", show=False),
        Binding("3", "tab('kv')", "KV", show=False),
        Binding("4", "tab('links')", "Links", show=False),
        Binding("5", "tab('groups')", "Groups", show=False),
        Binding("6", "tab('feed')", "Feed", show=False),
        Binding("7", "tab('regions')", "Regions", show=False),
        Binding("i", "detail", "Info", tooltip="the API document of the row"),
        Binding("slash", "filter", "Filter", tooltip="rows containing a text"),
        Binding("c", "scope", "Cluster", tooltip="one cluster, the next, all"),
        Binding("s", "step", "Step", tooltip="one replication step (replicate)"),
        Binding("f", "follow", "Follow", tooltip="start / stop replicate --follow"),
        Binding("p", "pause", "Pause", tooltip="the link or mirror topic"),
        Binding("r", "resume", "Resume", tooltip="the link or mirror topic"),
        Binding("P", "promote", "Promote", tooltip="the mirror, caught up (dry run first)"),
        Binding("F", "failover", "Failover", tooltip="the mirror or region, whatever its lag"),
        Binding("B", "failback", "Failback", tooltip="the region, its tail kept"),
        Binding("E", "fence", "Fence", tooltip="the old origins of a region"),
        Binding("d", "down", "Down", tooltip="the cluster, a drill"),
        Binding("u", "up", "Up", tooltip="the cluster again"),
        Binding("x", "purge", "Purge", tooltip="the stream's messages"),
    ]

    def __init__(self, data_dir: Path, *, clock: Clock, scope: str | None = None,
                 refresh: float = MIN_REFRESH, feed: str | None = None,
                 feed_cluster: str = "local", label: str | None = None,
                 loader: Callable[[Path, Clock], Snapshot] = load,
                 min_interval: float = MIN_REFRESH, source: Any = None) -> None:
        super().__init__()
        # where actions and the feed act: the data directory, or a live server
        self.source = source if source is not None else actions.Source(data_dir)
        self.min_interval = min_interval
        self.data_dir = data_dir
        self.clock = clock
        self.scope = scope
        self.refresh_seconds = max(refresh, MIN_REFRESH)
        self.feed_subject = feed
        self.feed_cluster = feed_cluster
        self.label = label if label is not None else str(data_dir)
        self.loader = loader
        self.snapshot: Snapshot | None = None
        self.rates = Rates()
        self.filter_text = ""
        self.message = ""  # the last action's result (or error), in the status line
        self.problem = ""  # why the tables may be stale (slow or locked database)
        self.following = False
        self.followed = 0  # messages + records copied while following
        self._follow_retries = Retries()  # the failures of following, each said once
        self._rows: dict[str, list[Any]] = {name: [] for name in COLUMNS}
        self._loading_since: float | None = None  # the running load's start
        self._last_load: float | None = None  # when the last load started
        self._deferred = False  # a load waits for the second to be over
        self._feed_count = 0
        self._sigint = False  # a SIGINT handler installed (removed at unmount)
        self.sub_title = self.label

    # -- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="≡")
        yield Input(placeholder="filter by name (Enter: keep, Esc: clear)", id="filter")
        with Horizontal(id="main"):
            with TabbedContent(initial="clusters", id="tabs"):
                with TabPane("1 Clusters", id="clusters"):
                    yield DataTable(id="clusters-table")
                with TabPane("2 Streams", id="streams"):
                    yield DataTable(id="streams-table")
                    yield DataTable(id="agreements-table")
                with TabPane("3 KV", id="kv"):
                    yield DataTable(id="kv-table")
                with TabPane("4 Links", id="links"):
                    yield DataTable(id="links-table")
                    yield DataTable(id="mirrors-table")
                with TabPane("5 Groups", id="groups"):
                    yield DataTable(id="groups-table")
                with TabPane("6 Feed", id="feed"):
                    yield Input(value=self.feed_subject or "",
                                placeholder="subject to follow, e.g. monitor.> or monitor.>@east",
                                id="feed-subject")
                    yield RichLog(id="feed-log", max_lines=FEED_LINES, wrap=False)
                with TabPane("7 Regions", id="regions"):
                    yield DataTable(id="regions-table")
            with VerticalScroll(id="side"):
                yield Static(id="detail")
        yield Static(id="status")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        import asyncio
        import signal
        import threading

        # SIGINT (kill -INT; Ctrl-C typed reaches the app as a key) ends it as Ctrl-C does
        if threading.current_thread() is threading.main_thread():
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self._on_sigint)
            self._sigint = True
        for name, cols in COLUMNS.items():
            table = self.query_one(f"#{name}-table", DataTable)
            table.cursor_type = "row"
            table.add_columns(*cols)
        self._render_status()
        self.set_class(self.size.width >= WIDE, "-wide")
        self.tick()
        self.set_interval(self.refresh_seconds, self.tick)
        if self.feed_subject:
            self.start_feed(self.feed_subject)
        self.query_one("#clusters-table", DataTable).focus()

    def _on_sigint(self) -> None:
        self.action_interrupt()

    def on_unmount(self) -> None:
        if self._sigint:
            import asyncio
            import contextlib
            import signal

            self._sigint = False
            with contextlib.suppress(RuntimeError):  # (no loop running any more)
                asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)

    def action_interrupt(self) -> None:
        """Ctrl-C, or SIGINT sent to the process: the dashboard ends, interrupted (its
        :attr:`return_code` 130, the command's exit status)."""
        from jetlink.cli.app import ExitCode

        self.exit(return_code=ExitCode.INTERRUPTED)

    def on_resize(self, event: Any) -> None:
        wide = event.size.width >= WIDE
        if wide != self.has_class("-wide"):
            self.set_class(wide, "-wide")
            self._render_detail()  # (the side pane shows the selected item at once)

    # -- loading ----------------------------------------------------------------------------

    def tick(self) -> None:
        """Start a load unless one is running (then say so when it is slow) or one started
        less than a second ago (then it runs when the second is over)."""
        if not self.is_running or not self.screen_stack:
            return
        if self._loading_since is None and self._last_load is not None:
            wait = self._last_load + self.min_interval - time.monotonic()
            if wait > 0:
                if not self._deferred:
                    self._deferred = True
                    self.set_timer(wait, self._deferred_tick)
                return
        if self._loading_since is not None:
            waited = time.monotonic() - self._loading_since
            if waited >= 2 * self.refresh_seconds:
                self.problem = (f"reading the data directory is slow ({waited:.0f}s so far): "
                                "the tables show the last snapshot")
                self._render_status()
            return
        self._loading_since = self._last_load = time.monotonic()
        self._load()

    def _deferred_tick(self) -> None:
        self._deferred = False
        self.tick()

    @work(thread=True, group="load", exit_on_error=False)
    def _load(self) -> None:
        from jetlink.core.errors import JetlinkError

        try:
            snap = self.loader(self.data_dir, self.clock)
        except sqlite3.OperationalError as err:
            self._from_thread(self._load_failed, f"cannot read the data directory ({err}): "
                                                 "retrying; the tables show the last snapshot")
        except JetlinkError as err:
            if err.transient:
                self._from_thread(self._load_failed, f"{err}: retrying; the tables show "
                                                     "the last snapshot")
            else:
                self._from_thread(self._load_failed, f"cannot read the data directory: {err}")
        except Exception as err:  # noqa: BLE001 - shown, never raised into the UI
            self._from_thread(self._load_failed, f"cannot read the data directory: {err}")
        else:
            self._from_thread(self.apply_snapshot, snap)

    def _from_thread(self, fn: Callable[..., Any], *args: Any) -> None:
        if not self.is_running:
            return

        def guarded(*a: Any) -> None:
            if self.is_running and self.screen_stack:  # not while shutting down
                fn(*a)

        try:
            self.call_from_thread(guarded, *args)
        except RuntimeError:  # the app is shutting down
            pass

    def _load_failed(self, text: str) -> None:
        self._loading_since = None
        self.problem = text
        self._render_status()

    def apply_snapshot(self, snap: Snapshot) -> None:
        self._loading_since = None
        self.problem = "; ".join(snap.problems)  # what it could not read, said
        self.snapshot = snap
        self.rates.update(snap)
        self.render_tables()
        self._render_status()
        self._follow_detail()

    def _follow_detail(self) -> None:
        """An open document view follows its item into the new data (or says it is gone)."""
        screen = self.screen if self.screen_stack else None
        if not isinstance(screen, DetailScreen) or screen.key is None:
            return
        kind, key = screen.key
        for rows in self._rows.values():
            for row in rows:
                if type(row) is kind and str(getattr(row, "key", "")) == key:
                    screen.follow(self._doc_of(row))
                    return
        screen.follow(None)

    # -- rendering --------------------------------------------------------------------------

    def _wanted(self, cluster: str, *names: str) -> bool:
        if self.scope is not None and cluster != self.scope:
            return False
        needle = self.filter_text.lower()
        return not needle or any(needle in n.lower() for n in names)

    def _cells(self, table: str, snap: Snapshot) -> list[tuple[Any, tuple[Any, ...]]]:
        rows: list[tuple[Any, tuple[Any, ...]]] = []
        if table == "clusters":
            for c in snap.clusters:
                if self._wanted(c.name, c.name):
                    # (no kind: its database could not be read, as cluster ls says it)
                    state = (Text("NEWER", style="bold red") if c.damaged and c.error
                             and "written by a newer jetlink" in c.error
                             else Text("DAMAGED", style="bold red") if c.damaged
                             else Text("no answer", style="bold red") if not c.answers
                             else Text("down", style="bold red") if c.down else Text("up"))
                    # a cluster that could not be read has no counts: "-", never 0
                    counts = ("-",) * 4 if c.error else (
                        _num(c.streams), _num(c.buckets), _num(c.topics), _num(c.links))
                    rows.append((c, (c.name, c.kind, state, *counts,
                                     Text(c.error, style="red"))))
        elif table == "streams":
            for s in snap.streams:
                if self._wanted(s.cluster, s.name, *s.subjects):
                    seqs = f"{s.first_seq:,}..{s.last_seq:,}" if s.messages else "-"
                    name = _at(s.name, s.cluster) + ("" if s.role == "stream" else f" ({s.role})")
                    rows.append((s, (name, output.comma(s.messages),
                                     rate_text(self.rates.rate(s.key)),
                                     self.rates.sparkline(s.key), output.ibytes(s.bytes), seqs,
                                     _num(s.consumers), ", ".join(s.subjects) or "-")))
        elif table == "agreements":
            for a in snap.agreements:
                if self._wanted(a.cluster, a.stream, a.origin):
                    # a promoted stream's row: its old origin back (dr check's split brain)
                    lag = _lag(a.lag, a.stale, a.active_ns < 0) if a.kind != "promoted" \
                        else Text("-")
                    ready = snap.readiness.get((a.cluster, a.stream), "") \
                        if a.kind in ("mirror", "promoted") else ""
                    rows.append((a, (_at(a.stream, a.cluster), a.kind, a.origin, lag,
                                     _ns(a.active_ns), Text(a.error, style="red"),
                                     _ready(ready))))
        elif table == "kv":
            for b in snap.buckets:
                if self._wanted(b.cluster, b.bucket, *b.origins):
                    rows.append((b, (_at(b.bucket, b.cluster), b.kind, output.comma(b.values),
                                     str(b.history), _ttl(b.ttl_ns),
                                     ", ".join(b.origins) or "-")))
        elif table == "links":
            for lk in snap.links:
                if self._wanted(lk.cluster, lk.name, lk.source):
                    state = Text(lk.state, style="" if lk.state == LINK_ACTIVE else "bold yellow")
                    rows.append((lk, (_at(lk.name, lk.cluster), lk.source, state,
                                      str(lk.mirrors), Text(lk.error, style="red"))))
        elif table == "mirrors":
            previous = None
            for m in snap.mirrors:
                if self._wanted(m.cluster, m.topic, m.link, m.source_topic):
                    first = (m.cluster, m.topic) != previous
                    previous = (m.cluster, m.topic)
                    status = m.status + (f" {m.error}" if m.error else "")
                    style = "" if m.status == ACTIVE else "bold yellow"
                    since = _ns(max(snap.taken_ns - m.status_time_ms * 1_000_000, 0))
                    rows.append((m, (_at(m.topic, m.cluster) if first else "",
                                     m.link if first else "", Text(status, style=style),
                                     str(m.partition),
                                     _lag(m.lag, True) if m.status in SOURCE_UNREACHED
                                     else output.comma(m.lag),
                                     output.comma(m.last_fetch_offset), since,
                                     _ready(snap.readiness.get((m.cluster, m.topic), "")
                                            if first else ""))))
        elif table == "groups":
            previous = None
            for g in snap.groups:
                if self._wanted(g.cluster, g.group, g.topic):
                    first = (g.cluster, g.group) != previous
                    previous = (g.cluster, g.group)
                    rows.append((g, (_at(g.group, g.cluster) if first else "",
                                     g.state if first else "", g.topic or "-",
                                     "-" if g.partition is None else str(g.partition),
                                     _num(g.offset), _num(g.log_end), _num(g.lag))))
        elif table == "regions":
            for r in snap.regions(self.scope):
                if self._wanted(self.scope or "", r.name, *(o.name for o in r.objects)):
                    rows.append((r, _region_cells(r)))
        return rows

    def render_tables(self) -> None:
        snap = self.snapshot
        if snap is None:
            return
        for name in COLUMNS:
            table = self.query_one(f"#{name}-table", DataTable)
            selected = self._selected_key(name)
            rows = self._cells(name, snap)
            self._rows[name] = [r for r, _ in rows]
            table.clear()
            for i, (row, cells) in enumerate(rows):
                table.add_row(*cells, key=f"{i}:{row.key}")
            keys = [r.key for r in self._rows[name]]
            if selected in keys:
                table.move_cursor(row=keys.index(selected), animate=False)
        self._render_detail()
        self._bindings_changed()

    def _selected_key(self, table: str) -> str | None:
        row = self.selected(table)
        return None if row is None else row.key

    def _render_status(self) -> None:
        if not self.screen_stack or not self.is_running:  # a timer firing at shutdown
            return
        try:
            status = self.screen_stack[0].query_one("#status", Static)
        except Exception:  # noqa: BLE001 - the screen is being torn down
            return
        parts = [self.label]
        parts.append(f"cluster {self.scope}" if self.scope else "all clusters")
        if self.filter_text:
            parts.append(f"filter {self.filter_text!r}")
        if self.snapshot is not None:
            from datetime import datetime

            when = datetime.fromtimestamp(self.snapshot.taken_ns / 1e9, UTC)
            parts.append(f"updated {when:%H:%M:%S}Z")
        if self.following:
            parts.append(f"following: {self.followed:,} copied")
        if self.problem:  # a lasting problem, then what the last action did (its outcome
            parts.append(self.problem)  # stays in view while the problem lasts)
        if self.message:
            parts.append(self.message)
        # one line: a long data directory path gives way (its start) to the state after it,
        # then the last part (the message or problem) its middle, so its end stays in view
        width = status.content_size.width
        room = width - len(" · ".join(parts[1:])) - len(" · ")
        if width and len(parts[0]) > max(room, 12):
            keep = max(room, 12) - 1
            parts[0] = "…" + parts[0][len(parts[0]) - keep:]
        tail = [p for p in (self.problem, self.message) if p]
        if width and len(tail) == 2:  # both in view: a long problem gives way (its end,
            # at a word) to three fifths of the room, the outcome after it
            room = width - len(" · ".join(parts[:-2])) - 2 * len(" · ")
            left = max(room - len(tail[1]), room * 3 // 5, 20)
            parts[-2:] = [_cut_at_word(tail[0], left),
                          _middle_out(tail[1], max(room - min(left, len(tail[0])), 12))]
        elif width and len(parts) > 1:
            room = width - len(" · ".join(parts[:-1])) - len(" · ")
            parts[-1] = _middle_out(parts[-1], max(room, 12))
        status.update(Text(" · ".join(parts)))
        status.set_class(bool(self.problem), "-problem")

    def _render_detail(self) -> None:
        if not self.has_class("-wide"):
            return
        item = self.current_item()
        detail = self.query_one("#detail", Static)
        if item is None:
            detail.update("")
            return
        from rich.json import JSON

        detail.update(JSON(json.dumps(self._doc_of(item), default=str), indent=2))

    def _doc_of(self, item: Any) -> Any:
        """The document an item shows: its own, or, for a mirror or source agreement, its
        stream's StreamInfo (which holds the agreement's StreamSourceInfo)."""
        if isinstance(item, AgreementRow):
            return next((s.doc for s in (self.snapshot.streams if self.snapshot else [])
                         if s.cluster == item.cluster and s.name == item.stream), {})
        return item.doc

    # -- selection ----------------------------------------------------------------------------

    def selected(self, table: str) -> Any:
        rows = self._rows.get(table) or []
        if not rows:
            return None
        cursor = self.query_one(f"#{table}-table", DataTable).cursor_row
        return rows[cursor] if 0 <= cursor < len(rows) else None

    @property
    def active_tab(self) -> str:
        return self.query_one("#tabs", TabbedContent).active or "clusters"

    def current_table(self) -> str | None:
        """The table the operator works in: the focused one, else the tab's first."""
        focused = self.focused
        if isinstance(focused, DataTable) and focused.id:
            name = focused.id.removesuffix("-table")
            if TABLE_TAB.get(name) == self.active_tab:
                return name
        tables = TAB_TABLES.get(self.active_tab, ())
        return tables[0] if tables else None

    def current_item(self) -> Any:
        table = self.current_table()
        return None if table is None else self.selected(table)

    def _bindings_changed(self) -> None:
        if self.screen_stack:  # (messages may still arrive while the app shuts down)
            self.refresh_bindings()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_detail()  # Enter on a row

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if not self.screen_stack:
            return
        self._render_detail()
        self._bindings_changed()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        tables = TAB_TABLES.get(self.active_tab, ())
        if tables:
            self.query_one(f"#{tables[0]}-table", DataTable).focus()
        elif self.active_tab == "feed":
            # the subject box while no feed runs; else the log, where 1-7 and q are keys
            box = self.query_one("#feed-subject", Input)
            (self.query_one("#feed-log", RichLog) if self.feed_subject else box).focus()
        self._render_detail()
        self._bindings_changed()

    def on_descendant_focus(self, event: Any) -> None:
        if self.screen_stack:
            self._render_detail()  # the detail pane follows the table in focus
        self._bindings_changed()

    # -- which keys apply where (the footer shows only those) ------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action not in GATED:
            return True
        if len(self.screen_stack) != 1:  # a modal or the detail view is up: its keys only
            return False
        table = self.current_table()
        item = self.current_item()
        if action == "detail":
            return item is not None
        if action in ("pause", "resume"):
            if isinstance(item, LinkRow):
                return (item.state == LINK_PAUSED) == (action == "resume")
            if isinstance(item, MirrorRow):
                return item.status in (ACTIVE, PAUSED) and (
                    (item.status == PAUSED) == (action == "resume"))
            return False
        if action in ("failback", "fence"):  # a region's (failover too, below)
            return isinstance(item, RegionRow) and bool(item.failed_over)
        if isinstance(item, RegionRow) and action == "failover":
            return bool(item.mirrors)
        if action in ("promote", "failover"):
            if isinstance(item, MirrorRow):
                return item.status not in (STOPPED, PENDING_STOPPED)
            return isinstance(item, StreamRow) and item.role == "mirror"
        if action in ("down", "up"):  # a drill of the embedded engine's clusters (not a
            # damaged one: its database can not be used; not a live server's domain)
            return bool(self.source.replicates) and isinstance(item, ClusterRow) \
                and item.down == (action == "up") and not item.damaged
        if action == "purge":
            return isinstance(item, StreamRow) and table == "streams"
        if action == "filter":
            return self.active_tab != "feed"
        if action in ("step", "follow"):  # the embedded engine's replication only: a live
            return bool(self.source.replicates)  # server replicates by itself
        return True

    # -- navigation ---------------------------------------------------------------------------

    def action_tab(self, tab: str) -> None:
        self.query_one("#tabs", TabbedContent).active = tab

    def action_keys(self) -> None:
        """``?`` / F1: the keys of what is selected, each with what it does (Textual's help
        panel, beside the tables), or it closed again."""
        from textual.widgets import HelpPanel

        if self.screen.query(HelpPanel):
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()

    def action_detail(self) -> None:
        item = self.current_item()
        if item is None:
            return
        title = {ClusterRow: "Cluster", StreamRow: "StreamInfo", AgreementRow: "Stream",
                 BucketRow: "KV status", LinkRow: "Cluster link",
                 MirrorRow: "Mirror topic", GroupRow: "Consumer group",
                 RegionRow: "Region"}[type(item)]
        doc = self._doc_of(item)
        # (a group's row names a topic too: the group is its name)
        name = getattr(item, "name", None) or getattr(item, "bucket", None) \
            or getattr(item, "group", None) or getattr(item, "topic", None) \
            or getattr(item, "stream", "")
        cluster = getattr(item, "cluster", None)
        where = _at(name, cluster) if cluster else name
        self.push_screen(DetailScreen(f"{title} {where}", doc,
                                      (type(item), str(getattr(item, "key", "")))))

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("-shown")
        box.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.filter_text = event.value.strip()
            self.render_tables()
            self._render_status()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            self._close_filter(keep=True)
        elif event.input.id == "feed-subject":
            self.start_feed(event.value.strip())
            if self.feed_subject:  # (none runs: the box keeps the focus and every key)
                self.query_one("#feed-log", RichLog).focus()

    def on_key(self, event: Any) -> None:
        if event.key == "escape" and self.focused is self.query_one("#filter", Input):
            self._close_filter(keep=False)
            event.stop()
        elif event.key == "escape" and self.focused is self.query_one("#feed-subject", Input):
            self.query_one("#feed-log", RichLog).focus()  # the tab and quit keys again
            event.stop()

    def _close_filter(self, *, keep: bool) -> None:
        box = self.query_one("#filter", Input)
        if not keep:
            box.value = ""
            self.filter_text = ""
            self.render_tables()
            self._render_status()
        box.remove_class("-shown")
        table = self.current_table()
        if table:
            self.query_one(f"#{table}-table", DataTable).focus()

    def action_scope(self) -> None:
        names = [c.name for c in self.snapshot.clusters] if self.snapshot else []
        order: list[str | None] = [None, *names]
        at = order.index(self.scope) if self.scope in order else 0
        self.scope = order[(at + 1) % len(order)]
        self.render_tables()
        self._render_status()

    # -- actions ------------------------------------------------------------------------------

    def _say(self, outcome: Outcome) -> None:
        """The outcome's first line on the one-line status bar (what follows there would
        be cut off unseen: how many more lines, said); the whole of it, every line of its
        report, in a notice, which stays longer when something failed."""
        head, *rest = [ln for ln in outcome.message.splitlines() if ln.strip()] or [""]
        lines = [*rest, *(d for d in outcome.details if d.strip())]
        self.message = head
        if outcome.warns:
            self.message += f" · {len(lines)} with errors: {lines[0]}" if lines else ""
        elif lines:
            self.message += f" · {len(lines)} more line{'s' if len(lines) > 1 else ''} " \
                            "in the notice"
        self._render_status()
        if not outcome.ok or outcome.warns or lines:
            self.notify("\n".join([head, *lines]),
                        title="Failed" if not outcome.ok else "With errors" if outcome.warns
                        else "Done",
                        severity="error" if not outcome.ok else
                        "warning" if outcome.warns else "information",
                        timeout=30 if not outcome.ok or outcome.warns else 10,
                        markup=False)  # (an error's text is text: "[clusters.west] ...")

    @work(thread=True, group="action", exit_on_error=False)
    def _run(self, action: Callable[..., Outcome],
             then: Callable[[Outcome], None] | None = None, *, step_after: bool = True) -> None:
        outcome = self.source.run(self.clock, action, step_after=step_after)
        self._from_thread(then or self._done, outcome)

    def _done(self, outcome: Outcome) -> None:
        self._say(outcome)
        self.tick()

    def _confirm(self, title: str, lines: list[str], verb: str,
                 action: Callable[..., Outcome],
                 then: Callable[[Outcome], None] | None = None) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self.message = f"{verb}: running..."
                self._render_status()
                self._run(action, then)
            else:
                self.message = f"{verb}: cancelled, nothing changed"
                self._render_status()

        self.push_screen(ConfirmScreen(title, lines, verb), answered)

    def _previewed(self, title: str, verb: str, action: Callable[..., Outcome]
                   ) -> Callable[[Outcome], None]:
        """After a dry run: its refusal, or the question with what it would do."""

        def then(preview: Outcome) -> None:
            if not preview.ok:
                self._say(preview)
                return
            self.message = ""
            self._render_status()
            self._confirm(title, [preview.message, *preview.details], verb, action)

        return then

    def action_pause(self) -> None:
        self._pause(True)

    def action_resume(self) -> None:
        self._pause(False)

    def _pause(self, paused: bool) -> None:
        item = self.current_item()
        how = "pause" if paused else "resume"
        if isinstance(item, LinkRow):
            self._run(actions.pause_link(item.cluster, item.name, paused))
        elif isinstance(item, MirrorRow):
            self._run(actions.alter_mirror(item.cluster, item.link, item.topic, how))

    def action_promote(self) -> None:
        self._stop(failover=False)

    def action_failover(self) -> None:
        if isinstance(self.current_item(), RegionRow):
            self._region("failover")
        else:
            self._stop(failover=True)

    def action_failback(self) -> None:
        self._region("failback")

    def action_fence(self) -> None:
        self._region("fence")

    def _region(self, how: str) -> None:
        """A region's failover, failback or fence (``dr failover|failback|fence --from``):
        its plan first (planned again when confirmed, as the CLI's run is), then the
        outcome; both in a dialog."""
        item = self.current_item()
        if not isinstance(item, RegionRow):
            return
        clusters = None if self.scope is None else [self.scope]
        verb, title = REGION_ACTIONS[how]
        title = title.format(region=item.name)
        if how == "fence":
            act = actions.fence_region(item.name, clusters, dry_run=False)
            preview = actions.fence_region(item.name, clusters, dry_run=True)
        else:
            act = actions.region_run(how, item.name, clusters, dry_run=False)
            preview = actions.region_run(how, item.name, clusters, dry_run=True)
        self.message = f"{verb} of region {item.name}: planning..."
        self._render_status()
        self._run(preview, self._planned(title, verb, act, f"{verb} of region {item.name}"),
                  step_after=False)

    def _planned(self, title: str, verb: str, action: Callable[..., Outcome], done: str
                 ) -> Callable[[Outcome], None]:
        """After a region's plan: the question with the plan, or the plan that asks
        nothing (refused, nothing to do) to close; the run's outcome in a dialog too."""

        def shown(outcome: Outcome) -> None:
            self._say(Outcome(outcome.ok, outcome.message))
            self.push_screen(ConfirmScreen(done, [outcome.message, *outcome.details], None))
            self.tick()

        def then(preview: Outcome) -> None:
            if preview.ok and preview.asks:
                self.message = ""
                self._render_status()
                self._confirm(title, [preview.message, *preview.details], verb, action,
                              shown)
            else:
                self._say(Outcome(preview.ok, preview.message))
                self.push_screen(ConfirmScreen(done, [preview.message, *preview.details],
                                               None))

        return then

    def _stop(self, *, failover: bool) -> None:
        item = self.current_item()
        verb = "Failover" if failover else "Promote"
        if isinstance(item, MirrorRow):
            how = "failover" if failover else "promote"
            title = (f"{verb} mirror topic {_at(item.topic, item.cluster)} (link {item.link})? "
                     "It stops mirroring and becomes a normal topic.")
            act = actions.alter_mirror(item.cluster, item.link, item.topic, how)
            preview = actions.alter_mirror(item.cluster, item.link, item.topic, how,
                                           dry_run=True)
        elif isinstance(item, StreamRow) and item.role == "mirror":
            title = (f"{verb} mirror {_at(item.name, item.cluster)}? It stops mirroring and "
                     "becomes a normal stream.")
            act = actions.promote_stream(item.cluster, item.name, failover=failover,
                                         dry_run=False)
            preview = actions.promote_stream(item.cluster, item.name, failover=failover,
                                             dry_run=True)
        else:
            return
        self.message = f"{verb}: dry run..."
        self._render_status()
        self._run(preview, self._previewed(title, verb, act))

    def action_down(self) -> None:
        item = self.current_item()
        if isinstance(item, ClusterRow):
            self._confirm(
                f"Take cluster {item.name} down (a drill)?",
                ["Nothing replicates into or out of it until it is up again: mirrors, sources "
                 "and links reading from it show their lag growing and the origin unavailable.",
                 "Its own clients keep working. Equivalent: jetlink cluster down "
                 f"{item.name}"],
                "Down", actions.set_down(item.name, True))

    def action_up(self) -> None:
        item = self.current_item()
        if isinstance(item, ClusterRow):
            self._run(actions.set_down(item.name, False))

    def action_purge(self) -> None:
        item = self.current_item()
        if isinstance(item, StreamRow):
            self._confirm(
                f"Purge stream {_at(item.name, item.cluster)}?",
                [f"All {item.messages:,} messages ({output.ibytes(item.bytes)}) are removed; "
                 "the sequences go on.", f"Equivalent: jetlink "
                 f"{self.source.addressing(item.cluster)} stream purge {item.name} -f"],
                "Purge", actions.purge_stream(item.cluster, item.name))

    def action_step(self) -> None:
        self.message = "Replication step: running..."
        self._render_status()
        self._run(actions.step(), step_after=False)  # the step is the action

    def action_follow(self) -> None:
        if not self.source.replicates and not self.following:
            self.message = ("Follow runs the embedded engine's replication: a live server "
                            "replicates by itself")
            self._render_status()
            return
        if self.following:
            self.following = False
            self.workers.cancel_group(self, "follow")
            self.message = f"Stopped following: {self.followed:,} copied"
        else:
            self.following = True
            self.followed = 0
            self._follow_retries = Retries()
            self.message = "Following: replicating continuously"
            self._follow()
        self._render_status()

    @work(thread=True, group="follow", exit_on_error=False)
    def _follow(self) -> None:
        from jetlink.core.step import FOLLOW_STEP_MAX_MSGS, bounded_step  # as --follow
        from jetlink.core.store import DataDir

        worker = get_current_worker()
        dd = DataDir(self.data_dir)
        try:
            while not worker.is_cancelled:
                failures: list[str] = []
                try:
                    # the callback runs before bounded_step returns, within this iteration
                    reports, links = bounded_step(
                        dd, self.clock, lambda e: failures.append(str(e)),  # noqa: B023
                        max_msgs=FOLLOW_STEP_MAX_MSGS)
                except Exception as err:  # noqa: BLE001 - shown; following goes on
                    reports, links = [], []
                    failures.append(f"{type(err).__name__}: {err}")
                if failures:
                    dd.close()  # the next step opens the files anew
                copied = sum(r.copied for r in reports) + sum(r.copied for r in links)
                self._from_thread(self._followed, copied, failures)
                if copied:
                    continue
                until = time.monotonic() + self.refresh_seconds
                while not worker.is_cancelled and time.monotonic() < until:
                    time.sleep(0.05)
        finally:
            dd.close()

    def _followed(self, copied: int, failures: list[str]) -> None:
        """One step of following: its count, and its failure said once (core/retry.py;
        retried at the next step: following never stops by itself) until a step succeeds
        again."""
        if not self.following:
            return
        self.followed += copied
        if failures:
            said = self._follow_retries.failed(RuntimeError(failures[0]), always=True)
            if said:
                self.message = f"Following: step failed, retrying: {failures[0]}"
        elif self._follow_retries.succeeded():
            self.message = "Following: replicating again"
        self._render_status()

    # -- the live feed ------------------------------------------------------------------------

    def start_feed(self, text: str) -> None:
        """Follow ``SUBJECT`` or ``SUBJECT@CLUSTER`` (``jetlink sub`` semantics: messages
        published from now on). On the data directory the text after the last ``@`` names
        the cluster, which must exist: a cluster it does not have is refused with the
        closest name (the feed creates none); a live server's feed is its own."""
        self.workers.cancel_group(self, "feed")
        log = self.query_one("#feed-log", RichLog)
        if not text:
            if self.feed_subject:
                log.write(Text("Feed stopped", style="dim"))
            self.feed_subject = ""
            return
        names = {c.name for c in self.snapshot.clusters} if self.snapshot else set()
        subject, cluster = feed_target(text, self.feed_cluster, names, self.source.replicates)
        self.feed_subject = subject
        log.write(Text(f"Subscribing on {subject} in {self.source.place(cluster)}",
                       style="dim"))
        self._feed(subject, cluster)

    @work(thread=True, group="feed", exit_on_error=False)
    def _feed(self, subject: str, cluster: str) -> None:
        from jetlink.core.errors import JetlinkError

        worker = get_current_worker()
        try:
            with self.source.jetstream(cluster, self.clock) as js:
                sub = js.subscribe(subject)
                try:
                    while not worker.is_cancelled:
                        msg = sub.next(timeout=0.2)
                        if msg is not None:
                            self._from_thread(self._feed_message, msg)
                finally:
                    sub.close()
        except JetlinkError as err:
            self._from_thread(self._feed_failed, subject, output.error_text(err))
        except Exception as err:  # noqa: BLE001 - said: a feed never stops unseen
            self._from_thread(self._feed_failed, subject, f"{type(err).__name__}: {err}")

    def _feed_failed(self, subject: str, text: str) -> None:
        """The feed stopped on an error: in the feed, and on the status line."""
        from jetlink.cli.console import PROG

        self._feed_line(Text(f"{PROG}: error: {text}", style="red"))
        self.message = f"Feed of {subject} stopped: {text}"
        # no feed runs now: the subject box has the focus again (to correct the subject; a
        # key typed then is the subject's, never an action)
        self.feed_subject = ""
        if self.active_tab == "feed":
            self.query_one("#feed-subject", Input).focus()
        self._render_status()

    def _feed_line(self, text: Text) -> None:
        self.query_one("#feed-log", RichLog).write(text)

    def _feed_message(self, msg: Any) -> None:
        from jetlink.core.headers import decode_headers

        self._feed_count += 1
        headers = decode_headers(msg.hdr)  # (core/api.py CoreMsgAPI: either backend's)
        origin = ""
        stream = (headers.get("Nats-Stream") or [""])[0]
        if stream:
            origin = output.visible(
                f" ({stream} #{(headers.get('Nats-Sequence') or ['?'])[0]})")
        # (control characters escaped, a newline as a space: a body or subject may hold an
        # escape sequence, which written raw would clear, retitle or spoof the terminal)
        body = output.visible(msg.data.decode("utf-8", "replace").replace("\n", " "))
        line = Text(f"[#{self._feed_count}] ")
        line.append(output.visible(msg.subject), style="bold")
        line.append(origin, style="dim")
        line.append(f" {body}")
        self._feed_line(line)


def create_app(data_dir: Path, *, clock: Clock | None = None, scope: str | None = None,
               refresh: float = MIN_REFRESH, feed: str | None = None,
               feed_cluster: str = "local", label: str | None = None,
               loader: Callable[[Path, Clock], Snapshot] | None = None,
               min_interval: float = MIN_REFRESH, source: Any = None) -> Dashboard:
    """The dashboard over ``data_dir`` (``scope``: show one cluster; None: all), reloaded
    every ``refresh`` seconds (at least 1); ``feed``: a subject to follow from the start, in
    ``feed_cluster``; ``label`` names the data in the header (default: its path);
    ``min_interval``: the least time between two loads (an action's result is loaded at
    once unless a load started less than this ago; 0 for scripted screenshots)."""
    from jetlink.core.clock import SystemClock

    return Dashboard(data_dir, clock=clock or SystemClock(), scope=scope, refresh=refresh,
                     feed=feed, feed_cluster=feed_cluster, label=label,
                     loader=loader or load, min_interval=min_interval, source=source)
