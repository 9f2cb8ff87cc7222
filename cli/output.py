"""The one output module: every byte jetlink prints goes through here.

Rules (DESIGN.md "Output and errors"):
- with ``--json`` a command prints exactly ONE JSON document on stdout (``json.dumps``,
  indent 2), errors included (``JetlinkError.to_dict()``);
- otherwise results go to stdout as Rich tables / key-value blocks / plain lines, and notices
  and errors go to stderr;
- no colour when the stream is not a terminal or NO_COLOR is set (see cli/console.py).

Rich is imported lazily inside the renderers so that ``jetlink --help`` never loads it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, date, datetime
from enum import Enum
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, TypeVar

from jetlink.cli.console import PROG, Terminal, escaped_byte, make_console

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.core.errors import JetlinkError

# The renderers print for any Terminal (cli/console.py; the invocation's App is one): a
# command's own renderer gets back the Terminal it was given.
T = TypeVar("T", bound=Terminal)


# -- JSON ----------------------------------------------------------------------------------


def to_doc(value: Any) -> Any:
    """An engine value as its JSON document (``to_json()``), dataclasses as dicts."""
    for method in ("to_json", "to_dict"):
        fn = getattr(value, method, None)
        if callable(fn):
            return fn()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def _json_default(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_doc(value)
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def to_json(data: Any) -> str:
    """The JSON text jetlink prints: indent 2, UTF-8 kept as is, key order preserved."""
    return _escaped(json.dumps(data, indent=2, ensure_ascii=False, default=_json_default))


def _escaped(text: str) -> str:
    r"""JSON text whose strings hold bytes that are not UTF-8 (a path or an argument held as
    lone surrogates, ``\udcff``) with those written as JSON escapes: the output stays UTF-8
    (written as is, the byte itself would make it invalid), and a JSON reader gets the same
    string back (Python's ``os.fsencode`` of it, the original bytes)."""
    if escaped_byte(text) is None:
        return text
    return "".join(f"\\u{ord(c):04x}" if "\udc80" <= c <= "\udcff" else c for c in text)


class StdoutRefused(OSError):
    """stdout refused a write (a full disk, a quota, an I/O error): the error line names
    stdout, which an OSError of a write to it does not (it has no file name). A closed
    pipe (EPIPE) is not one of these: a reader that stopped reading ends jetlink silently."""

    def __init__(self, exc: OSError) -> None:
        super().__init__(exc.errno, exc.strerror)
        self.filename = "stdout"


def write_stdout(text: str) -> None:
    """``text`` on stdout, flushed; a refused write raises :class:`StdoutRefused`."""
    with stdout_writes():
        sys.stdout.write(text)
        sys.stdout.flush()


@contextlib.contextmanager
def stdout_writes() -> Iterator[None]:
    """Writes to stdout inside it that stdout refuses raise :class:`StdoutRefused`."""
    import errno

    try:
        yield
    except StdoutRefused:
        raise
    except OSError as exc:
        if exc.filename is None and exc.errno not in (errno.EPIPE, None):
            raise StdoutRefused(exc) from None
        raise


def print_json(data: Any, *, file: Any = None) -> None:
    if file is None:
        write_stdout(to_json(data) + "\n")
        return
    file.write(to_json(data) + "\n")
    file.flush()


class JsonList:
    """A JSON list written item by item, the same text :func:`print_json` writes for the
    whole list, each item flushed as it is added (what was acknowledged after it reached
    stdout, ``consumer next``); :meth:`close` ends it (``[]`` when nothing was added)."""

    def __init__(self) -> None:
        self.items = 0

    def add(self, item: Any) -> None:
        import textwrap

        text = textwrap.indent(to_json(item), "  ")
        write_stdout(("[\n" if not self.items else ",\n") + text)
        self.items += 1

    def close(self) -> None:
        write_stdout("\n]\n" if self.items else "[]\n")


# -- the entry point of every command -----------------------------------------------------


def emit(app: T, data: Any, human: Callable[[T, Any], None] | None = None) -> None:
    """Print a command's result: one JSON document with --json, else the human rendering.

    ``human(app, data)`` renders ``data`` for a person; without it a mapping becomes a
    key/value block, a list of mappings a table, anything else one line.
    """
    if app.json:
        print_json(data)
    elif human is not None:
        human(app, data)
    else:
        render_auto(app, data)


def render_auto(app: Terminal, data: Any) -> None:
    if isinstance(data, Mapping):
        kv_block(app, data)
    elif (
        isinstance(data, Sequence)
        and not isinstance(data, (str, bytes))
        and data
        and all(isinstance(row, Mapping) for row in data)
    ):
        columns = list(dict.fromkeys(key for row in data for key in row))
        table(app, columns, [[row.get(c) for c in columns] for row in data])
    else:
        line(app, format_value(data))


# -- human renderers ----------------------------------------------------------------------


def format_value(value: Any) -> str:
    """How a scalar looks in a table: thousands separators, short floats, '-' for none."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):  # nan / inf
            return str(value)
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.4g}" if abs(value) >= 0.001 or value == 0 else f"{value:.3e}"
    if isinstance(value, (list, tuple, set, frozenset)):
        return ", ".join(format_value(v) for v in value)
    if isinstance(value, Enum):
        return str(value.value)
    return str(value)


def line(app: Terminal | None, text: str = "") -> None:
    """One plain line on stdout (no Rich needed)."""
    write_stdout(text + "\n")


def lines(app: Terminal | None, texts: Iterable[str]) -> None:
    """Each text on its own line on stdout (``ls --names``)."""
    for text in texts:
        line(app, text)


def success(app: Terminal, text: str) -> None:
    """The result of a verb that only acts: ``{"success": true}`` with --json, else ``text``."""
    emit(app, {"success": True}, human=lambda a, d: line(a, text))


def notice(app: Terminal | None, text: str) -> None:
    """One plain line on stderr: progress, summaries, hints. Never part of --json output."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def kv_block(app: Terminal, data: Mapping[str, Any], *, title: str | None = None) -> None:
    """A key/value block (like `nats stream info`): aligned ``key: value`` lines.

    Plain text (no Rich, no trailing blanks); keys are bold on a colour terminal.
    """
    bold, reset = ("\x1b[1m", "\x1b[0m") if app.color else ("", "")
    if title:
        line(app, f"{bold}{title}{reset}")
    width = max((len(str(key)) for key in data), default=0) + 1
    for key, value in data.items():
        label = f"{key}:".ljust(width)
        line(app, f"{bold}{label}{reset}  {format_value(value)}")


def stdout_is_terminal() -> bool:
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


def stderr_is_terminal() -> bool:
    """Whether stderr (notices, progress bars) is a terminal."""
    isatty = getattr(sys.stderr, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # closed stream
        return False


def table(
    app: Terminal,
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    title: str | None = None,
    no_wrap: Iterable[str] = (),
    min_width: Mapping[str, int] | None = None,
) -> None:
    """A table with a header row; cells are plain text (no Rich markup is interpreted; a
    control character is shown escaped, :func:`visible`); an empty row draws a rule between
    the rows before and after it.

    On a terminal the table fits its width: columns named in ``no_wrap`` keep their values
    on one line, the others wrap (not below ``min_width[column]``).
    """
    from rich import box
    from rich.table import Table
    from rich.text import Text

    keep = set(no_wrap)
    widths = dict(min_width or {})
    tbl = Table(title=title, title_justify="left", box=box.ROUNDED, header_style="bold")
    for column in columns:
        tbl.add_column(
            column, no_wrap=column in keep, overflow="fold", min_width=widths.get(column)
        )
    for row in rows:
        if not row:  # an empty row: a rule between two sections of the table
            tbl.add_section()
            continue
        tbl.add_row(*(Text(visible(c if isinstance(c, str) else format_value(c)))
                      for c in row))
    console = app.out
    with stdout_writes():
        if console.is_terminal:
            console.print(tbl)
        else:
            # Piped or redirected (CI logs, grep): no terminal width to fit, so rows are not
            # wrapped; each row stays on one line.
            unbounded = console.options.update(max_width=100_000)
            width = console.measure(tbl, options=unbounded).maximum
            make_console(console.file, width=max(width, console.width)).print(tbl)


_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_CONTROLS.update({0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"})


def visible(text: str) -> str:
    """``text`` with its control characters (C0, DEL, C1) written as escapes (``\\n``,
    ``\\x1b``): a name that holds one (Kafka takes any string for a principal or a topic
    pattern) shows what it holds, never moves the cursor, colours the terminal or splits a
    table row."""
    return text.translate(_CONTROLS) if any(ord(c) in _CONTROLS for c in text) else text


# -- errors ---------------------------------------------------------------------------------


_LINE_CONTROLS = {c: e for c, e in _CONTROLS.items() if c not in (0x09, 0x0A)}


def format_error(err: JetlinkError) -> str:
    """``jetlink: error: <description> (<err_code>)``; no parenthesis when err_code is 0/absent.
    Bytes of the command line that are not UTF-8 (held as lone surrogates) are shown as the
    bytes given (``'\\xff'``), as the usage error of such an argument shows them; control
    characters a name typed or stored holds as escapes (``\\x1b``: an error line never
    colours the terminal), the line breaks of a message of several lines kept."""
    text = error_text(err)
    if escaped_byte(text) is not None:
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if any(ord(c) in _LINE_CONTROLS for c in text):
        text = text.translate(_LINE_CONTROLS)
    return f"{PROG}: error: {text}"


def error_text(err: JetlinkError) -> str:
    """An error as the error line words it, without the ``jetlink: error:`` lead:
    ``<description> (<err_code>): <detail>`` (a report line that quotes an error)."""
    err_code = getattr(err, "err_code", 0)
    suffix = f" ({err_code})" if err_code else ""
    detail = getattr(err, "detail", None)
    return f"{err.description}{suffix}" + (f": {detail}" if detail else "")


def print_error(app: Terminal | None, err: JetlinkError) -> None:
    """The one function that reports a JetlinkError: JSON on stdout with --json, else stderr."""
    if app is not None and app.json:
        try:
            if getattr(app, "json_lines", False):  # (after JSON lines: one more line)
                json_line(err.to_dict())
            else:
                print_json(err.to_dict())  # the API's error document, as it answers it
            return
        except OSError:  # stdout refuses the document (a full disk): the line on stderr
            pass
    notice(app, format_error(err))


# -- natscli-style human forms (stream / consumer / pub / sub verbs) ----------------------


def comma(n: int) -> str:
    """An integer with thousands separators, as natscli prints counts (``1,234``)."""
    return f"{int(n):,}"


def plural(n: int, word: str) -> str:
    """``1 message``, ``1,234 messages``: a count with its separators and its word."""
    return f"{comma(n)} {word}{'' if n == 1 else 's'}"


_IEC = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def ibytes(n: int) -> str:
    """A byte count in IEC units like go-humanize's ``IBytes`` (``0 B``, ``1.5 KiB``,
    ``10 MiB``)."""
    n = int(n)
    if n < 10:
        return f"{n} B"
    exp = 0
    value = float(n)
    while value >= 1024 and exp < len(_IEC) - 1:
        value /= 1024
        exp += 1
    # go-humanize rounds to one decimal first, then prints no decimal from 10 up.
    value = int(value * 10 + 0.5) / 10
    return f"{value:.0f} {_IEC[exp]}" if value >= 10 else f"{value:.1f} {_IEC[exp]}"


def since(ns: int) -> str:
    """A duration the way natscli's tables show it (``HumanizeDuration``): ``1m3s``,
    ``2d4h0m1s``, ``45.00s``, ``1.50s``, ``350ms``; ``never`` for a negative or absent
    duration, and for Go's largest one (math.MaxInt64, as HumanizeDuration says it)."""
    if ns < 0 or ns >= 2**63 - 1:
        return "never"
    if ns < 1_000_000_000:
        from jetlink.core.durations import format_duration, go_round

        return format_duration(go_round(ns, 1000 if ns < 1_000_000 else 1_000_000))
    secs = ns // 1_000_000_000
    mins, hrs, days = secs // 60, secs // 3600, secs // 86400
    years = days // 365
    if years:
        return f"{years}y{days % 365}d{hrs % 24}h{mins % 60}m{secs % 60}s"
    if days:
        return f"{days}d{hrs % 24}h{mins % 60}m{secs % 60}s"
    if hrs:
        return f"{hrs}h{mins % 60}m{secs % 60}s"
    if mins:
        return f"{mins}m{secs % 60}s"
    # Go's Duration.Seconds(): the whole seconds plus the rest as a fraction, "%.2fs"
    return f"{secs + (ns % 1_000_000_000) / 1e9:.2f}s"


def local_time(rfc3339: str | None) -> str:
    """``2006-01-02 15:04:05`` in the local time zone, as natscli shows creation times;
    ``never`` for Go's zero time."""
    return local_ns(rfc3339_ns(rfc3339))


def info_columns(what: str, doc: Mapping[str, Any], *, state_only: bool) -> Columns:
    """The Columns of natscli's ``info`` of ``what`` (``Stream ORDERS``), headed
    ``Information for <what> created <time>`` (``State for`` with --state)."""
    word = "State for" if state_only else "Information for"
    return Columns(f"{word} {what} created {local_time(doc.get('created'))}")


def cluster_cell(cluster: Mapping[str, Any] | None) -> str:
    """natscli's renderCluster (the Replicas cell of stream and consumer reports): the
    leader and the replicas, the leader marked ``*``, a replica offline or not current
    ``!``, sorted; "" for none."""
    if not cluster:
        return ""
    peers: list[tuple[str, str]] = []  # (name, mark)
    if cluster.get("leader"):
        peers.append((str(cluster["leader"]), "*"))
    for peer in cluster.get("replicas") or []:
        bad = peer.get("offline") or not peer.get("current")
        peers.append((str(peer.get("name", "")), "!" if bad else ""))
    short = compact_names([name for name, _mark in peers])
    return ", ".join(sorted(f"{name}{mark}" for name, (_n, mark) in zip(short, peers,
                                                                         strict=True)))


def compact_names(names: Sequence[str]) -> list[str]:
    """natscli's CompactStrings: the dot-separated parts all names share (a domain) cut off
    their ends (``nats1.east.example.com`` and ``nats2.east.example.com``: ``nats1``,
    ``nats2``). As it does: the parts compared by their place from the start, from the
    shortest name's last down to its second (the first is always kept), and what they
    spell trimmed off each name's end where it ends so."""
    if not names:
        return []
    parts = [n.split(".") for n in names]
    shortest = min(len(p) for p in parts)
    suffix = ""
    for i in range(shortest - 1, 0, -1):
        if any(p[i] != parts[0][i] for p in parts):
            break
        suffix = "." + parts[0][i] + suffix
    return [n[:-len(suffix)] if suffix and n.endswith(suffix) else n for n in names]


def replica_row(peer: Mapping[str, Any]) -> str:
    """natscli's replica row of a stream's or a bucket's cluster (its stream info and its
    kv status, renderNatsGoClusterInfo): ``n2, current, seen 1ms ago``; outdated when not
    current, then OFFLINE when offline; ``not seen`` for a peer never heard from (an active
    of 0 or the largest int64); how many operations behind (one: "operation")."""
    parts = [str(peer.get("name", "")), "current" if peer.get("current") else "outdated"]
    if peer.get("offline"):
        parts.append("OFFLINE")
    active = int(peer.get("active") or 0)
    parts.append("not seen" if active in (0, 2**63 - 1) or active < 0
                 else f"seen {since(active)} ago")
    lag = int(peer.get("lag") or 0)
    if lag > 0:
        parts.append(f"{comma(lag)} operation{'' if lag == 1 else 's'} behind")
    return ", ".join(parts)


def raft_leaders(app: Terminal, clusters: Iterable[Mapping[str, Any] | None],
                 groups: str) -> None:
    """natscli's RAFT Leader Report (``report --leaders``): per server leading groups of
    ``clusters`` (the ``cluster`` of each info document), its cluster, how many it leads
    (the ``groups`` column) and a star per tenth of its cluster's groups (at least one),
    by cluster then fewest first, a rule between clusters; nothing when none is led."""
    leads: dict[tuple[str, str], int] = {}
    for c in clusters:
        if c and c.get("leader"):
            key = (str(c.get("name") or ""), str(c["leader"]))
            leads[key] = leads.get(key, 0) + 1
    if not leads:
        return
    totals: dict[str, int] = {}
    for (cluster, _), n in leads.items():
        totals[cluster] = totals.get(cluster, 0) + n
    rows: list[Sequence[Any]] = []
    previous = None
    for (cluster, server), n in sorted(leads.items(), key=lambda kv: (kv[0][0], kv[1],
                                                                      kv[0][1])):
        if previous is not None and cluster != previous:
            rows.append(())
        previous = cluster
        stars = max(1, math.floor(n * 100 / totals[cluster] / 10 + 0.5))  # Go's math.Round
        rows.append([server, cluster, comma(n), "*" * stars])
    line(app)
    table(app, ("Server", "Cluster", groups, "Distribution"), rows,
          title="RAFT Leader Report")


def server_meta_rows(cols: Columns, metadata: Mapping[str, Any] | None) -> None:
    """natscli's RenderMetaApi: the State section of stream info and consumer info opens
    with the server's ``_nats.*`` metadata, ``Host Version`` and ``Required API Level: R
    hosted at level L`` (R 0 when the server names none)."""
    meta = metadata or {}
    version, level = meta.get("_nats.ver", ""), meta.get("_nats.level", "")
    required = meta.get("_nats.req.level", "")
    cols.row("Host Version", version, bool(version))
    cols.row("Required API Level", f"{required or '0'} hosted at level {level}",
             bool(level or required))


class Columns:
    """natscli's key/value layout (``nats stream info``): a heading, section titles ending in
    ``:``, and ``key: value`` rows whose keys are right-aligned on the longest key.

    Build it with :meth:`row`, :meth:`title` and :meth:`blank`, then :meth:`render`.
    """

    def __init__(self, heading: str | None = None) -> None:
        self.heading = heading
        self.rows: list[tuple[str, Any, Any]] = []

    def title(self, text: str) -> None:
        self.rows.append(("title", text, None))

    def row(self, key: str, value: Any, condition: bool = True) -> None:
        if condition:
            self.rows.append(("row", key, value if isinstance(value, str) else format_value(value)))

    def blank(self) -> None:
        self.rows.append(("line", None, None))

    def metadata(self, metadata: Mapping[str, str] | None) -> None:
        """A ``Metadata`` section of the keys a user set (sorted), none when there is none."""
        from jetlink.core.config.codec import user_metadata

        meta = user_metadata(metadata)
        if meta:
            self.title("Metadata")
            for key in sorted(meta):
                self.row(key, meta[key])

    def lines(self) -> list[str]:
        longest = max((len(k) for kind, k, _ in self.rows if kind == "row"), default=0)
        out: list[str] = []
        if self.heading:
            out += [self.heading, ""]
        prev = None
        for i, (kind, key, value) in enumerate(self.rows):
            if kind == "title":
                if i and prev not in ("title", "line"):
                    out.append("")
                out += [key if key.endswith(":") else key + ":", ""]
            elif kind == "row":
                # the value column starts at longest + 4, as natscli's columns writer
                pad = " " * max(longest - len(key) + 2, 0)
                out.append(f"{pad}{key}: {value}" if key else f"{' ' * (longest + 4)}{value}")
            elif kind == "line":
                if prev == "title":
                    continue
                out.append("")
            prev = kind
        return out

    def render(self, app: Terminal | None) -> None:
        for text in self.lines():
            line(app, text.rstrip())


# -- confirmations and prompts -------------------------------------------------------------


class _NoBar:
    def advance(self, n: int) -> None:
        pass


class progress:
    """``with progress(app, "Publishing", total) as bar: bar.advance(n)``: a progress bar on
    stderr for long work, only when stderr is a terminal and the output is not --json
    (elsewhere ``advance`` does nothing). ``total`` None: an indeterminate bar; a total
    that proves short (more is advanced) makes the bar indeterminate too."""

    def __init__(self, app: Terminal | None, label: str, total: int | None, *,
                 enabled: bool = True) -> None:
        self._label, self._total = label, total
        self._on = enabled and stderr_is_terminal() and not (app is not None and app.json)
        self._bar: Any = None

    def __enter__(self) -> Any:
        if not self._on:
            return _NoBar()
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )


        self._bar = Progress(TextColumn("{task.description}"), BarColumn(),
                             MofNCompleteColumn(), TimeElapsedColumn(),
                             console=make_console(sys.stderr), transient=True)
        self._bar.__enter__()
        task = self._bar.add_task(self._label, total=self._total)
        bar = self._bar

        class _Bar:
            def advance(self, n: int) -> None:
                bar.advance(task, n)
                t = bar.tasks[0]
                if t.total is not None and t.completed > t.total:
                    t.total = None  # the total was an estimate: the bar goes indeterminate

        return _Bar()

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)


def is_interactive() -> bool:
    """Whether jetlink may ask questions: stdin and stderr (where prompts go) are terminals.

    Tests replace this function; nothing else decides whether to prompt.
    """
    for stream in (sys.stdin, sys.stderr):
        isatty = getattr(stream, "isatty", None)
        try:
            if not (isatty and isatty()):
                return False
        except ValueError:  # closed stream
            return False
    return True


def confirm(app: Terminal, question: str, *, force: bool, action: str) -> None:
    """Ask ``question`` on a terminal unless ``force``; refuse without a terminal.

    ``action`` says what would be done (``delete stream ORDERS``). Without a terminal and
    without --force this is a usage error (exit 2) naming the flag; a "no" answer is an error
    (exit 1) saying nothing was done.
    """
    from jetlink.core.errors import JetlinkError, UsageError

    if force:
        return
    if not is_interactive():
        raise UsageError(f"no terminal to confirm on: pass -f/--force to {action}")
    import typer

    if not typer.confirm(question, default=False, err=True):
        raise JetlinkError(f"aborted: did not {action}")


def prompt(question: str, *, default: Any = None, type: Any = None) -> Any:
    """Ask one value on the terminal (the question goes to stderr, stdout stays clean)."""
    import typer

    return typer.prompt(question, default=default, type=type, err=True)


def ask_yes_no(question: str, *, default: bool) -> bool:
    import typer

    return typer.confirm(question, default=default, err=True)


def ask(question: str, default: Any = None, kind: str | None = None) -> Any:
    """Ask one answer of ``kind`` (``text``, ``int`` or ``bool``; by default the type of
    ``default``): yes/no for a bool, a number for an int, else text (stdout stays clean)."""
    if kind == "bool" or (kind is None and isinstance(default, bool)):
        return ask_yes_no(question, default=default)
    if kind == "int" or (kind is None and isinstance(default, int)):
        return prompt(question, default=default, type=int)
    return prompt(question, default=default)


def name_or_ask(name: str | None, question: str, *, argument: str, what: str) -> str:
    """``name`` when given; else, on a terminal, asked until the answer is not blank, and
    without one a usage error: ``missing argument <argument> (<what>)``."""
    if name:
        return name
    if not is_interactive():
        from jetlink.core.errors import UsageError

        raise UsageError(f"missing argument {argument} ({what})")
    answer = ""
    while not answer.strip():
        answer = prompt(question)
    return answer.strip()


# -- messages ---------------------------------------------------------------------------------


def json_line(data: Any, app: Any = None) -> None:
    """One compact JSON document on one line (``jetlink sub --json`` prints JSON lines);
    ``app``: the invocation, whose error after it is then a line too (:func:`print_error`)."""
    if app is not None:
        app.json_lines = True
    write_stdout(_escaped(
        json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=_json_default)) + "\n"
    )


def body_text(data_b64: str) -> bytes:
    import base64

    return base64.b64decode(data_b64) if data_b64 else b""


def write_bytes(data: bytes) -> None:
    """``data`` on stdout exactly as it is (after what was written as text)."""
    with stdout_writes():
        sys.stdout.flush()
        stream = getattr(sys.stdout, "buffer", None)
        if stream is None:  # pragma: no cover - a text-only stdout
            sys.stdout.write(data.decode("utf-8", "backslashreplace"))
            sys.stdout.flush()
        else:
            stream.write(data)
            stream.flush()


def print_body(app: Terminal | None, data: bytes, *, trailing_blank: bool = True,
               raw: bool = False, empty: bytes = b"nil body") -> None:
    """A message body as natscli prints it: ``empty`` when there is none (``nil body``, as
    its stream view and get; its consumer next prints an empty line), else the bytes (as
    text, invalid UTF-8 shown escaped; ``raw``: the bytes exactly, as --raw is for saving
    a body), a newline unless it ends with one, then a blank line."""
    if not data:
        data = empty
    elif not raw:
        data = data.decode("utf-8", errors="backslashreplace").encode("utf-8")
    write_bytes(data if data.endswith(b"\n") else data + b"\n")
    if trailing_blank:
        write_bytes(b"\n")


def print_message(
    app: T, msg: Mapping[str, Any], render: Callable[[T, Any, bytes], None], *, raw: bool,
    empty: bytes = b"nil body",
) -> None:
    """A message document (``{"subject", "seq", "headers", "data": base64, ...}``): only its
    body with ``raw`` (--raw; ``empty`` for none: natscli's sub says ``nil body``, its
    consumer next prints an empty line), else ``render(app, msg, body)`` (the command's
    layout)."""
    data = body_text(msg.get("data", ""))
    if raw:
        print_body(app, data, trailing_blank=False, raw=True, empty=empty)
    else:
        render(app, msg, data)


def print_messages(
    app: T,
    msgs: Sequence[Mapping[str, Any]],
    render: Callable[[T, Any, bytes], None],
    *,
    raw: bool,
    empty: str,
) -> None:
    """Message documents one after the other (:func:`print_message`); the notice ``empty``
    when there is none."""
    if not msgs:
        notice(app, empty)
    for msg in msgs:
        print_message(app, msg, render, raw=raw)


def print_headers(
    app: Terminal | None, headers: Mapping[str, Sequence[str]] | None, *, indent: str = ""
) -> None:
    for name, values in (headers or {}).items():
        for value in values:
            line(app, f"{indent}{name}: {value}")


# -- times -----------------------------------------------------------------------------------


def rfc3339_ns(text: str | None) -> int:
    """Nanoseconds since the epoch of an RFC3339 time (nanosecond fractions kept); 0 for
    Go's zero time ``0001-01-01T00:00:00Z``, an empty string or None."""
    if not text or text.startswith("0001-01-01"):
        return 0
    from jetlink.core.clock import parse_rfc3339_nano

    return parse_rfc3339_nano(text)


def go_time_utc(ns: int) -> str:
    """A UTC time as Go's ``time.Time.String()`` prints it:
    ``2025-01-02 03:04:05.123456789 +0000 UTC`` (trailing zeros of the fraction dropped)."""
    from datetime import datetime

    secs, frac = divmod(ns, 1_000_000_000)
    base = datetime.fromtimestamp(secs, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")
    fraction = f".{frac:09d}".rstrip("0") if frac else ""
    return f"{base}{fraction} +0000 UTC"


def local_ns(ns: int) -> str:
    """``2006-01-02 15:04:05`` in the local time zone (natscli's ``f(time)``); ``never`` for 0."""
    from datetime import datetime

    if not ns:
        return "never"
    return datetime.fromtimestamp(ns // 1_000_000_000).strftime("%Y-%m-%d %H:%M:%S")
