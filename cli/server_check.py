"""``jetlink server check stream|consumer|kv``: natscli's ``nats server check`` for streams,
consumers and Key-Value buckets, on the embedded engine or a live nats-server.

Parsing and rendering only: the checks and their renderings are jetlink.core.monitor; the
JetStream API comes from cli/common.py ``open_jetstream`` and KV from ``open_kv`` (whichever
backend is in force). The flags are natscli's; a threshold flag not given is taken from the
stream's or consumer's metadata (``io.nats.monitor.<flag>``), else it is off.

Output: ``--format nagios`` (default), ``json`` (also ``-j/--json``), ``prometheus`` (metric
names prefixed by ``--namespace``) or ``text``, on stdout or into ``--outfile`` (core/outfile.py:
a regular file is replaced atomically, a new one gets mode 0600; a symbolic link is followed;
a character device or a FIFO is written through). The exit status is the check's:
0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN; with ``--format prometheus`` it is 0, as natscli
exits (a scrape reads the status gauge). A command line jetlink cannot parse is UNKNOWN (3,
with the usage error's message) and checks nothing.
"""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from jetlink.cli import common, completion, output
from jetlink.cli.app import App
from jetlink.cli.options import CHECK_DURATION, JsonOption
from jetlink.core.numbers import INT64_MAX, INT64_MIN, UINT64_MAX

server_app = typer.Typer(
    name="server",
    help="Check streams, consumers, buckets (natscli).\n\nnatscli's "
    "nats server check for streams, consumers and Key-Value buckets: a Nagios line, JSON, "
    "Prometheus metrics or text, and the Nagios exit status (0 OK, 1 WARNING, 2 CRITICAL, "
    "3 UNKNOWN).",
    no_args_is_help=True,
)
check_app = typer.Typer(
    name="check",
    help="Health checks (natscli's nats server check).\n\nThresholds not given as flags come "
    "from the stream's or consumer's metadata, io.nats.monitor.<flag> (e.g. "
    "io.nats.monitor.lag-critical: 200); flags override it, as natscli's help says (jsm.go "
    "applies the metadata last, and not a consumer's). Values are read as natscli reads "
    "them (Go's strconv: no blanks around a number), every key present, a flag given for it "
    "or not; io.nats.monitor.enabled must be a boolean; a value that does not read makes the "
    "check CRITICAL. The checks of JetStream's objects are here (stream, consumer, kv); "
    "natscli's checks of a server itself (connection, server, jetstream, meta, message, "
    "request, credential) are not.",
    no_args_is_help=True,
)
server_app.add_typer(check_app)


class Format(StrEnum):
    nagios = "nagios"
    json = "json"
    prometheus = "prometheus"
    text = "text"


def _duration(value: str | None) -> int | None:
    """A threshold's nanoseconds: the text its DURATION type has accepted, read by the same
    rule (core.durations ``read_duration``)."""
    if value is None:
        return None
    from jetlink.core.durations import read_duration

    return read_duration(value)


FormatOption = Annotated[Format, typer.Option(
    "--format", help="Render the check as nagios, json, prometheus or text.")]
NamespaceOption = Annotated[str, typer.Option(
    "--namespace", metavar="NAME", help="The Prometheus namespace (metric name prefix).")]
# (a string, not a click Path: click would refuse a file it cannot read, which a check only
# writes, and read '' as '.'; natscli writes to stdout for an empty --outfile)
OutfileOption = Annotated[str | None, typer.Option(
    "--outfile", metavar="FILE", show_default=False,
    help="Write the check to FILE instead of stdout (a regular file is replaced "
    "atomically, a device or FIFO written through, a symbolic link followed; '' is "
    "stdout).")]
StreamOption = Annotated[str, typer.Option(
    "--stream", metavar="STREAM", help="The stream to check.", show_default=False,
    autocompletion=completion.streams)]


_INT64 = (INT64_MIN, INT64_MAX)


class _GoInt:
    """A threshold flag's number, read as natscli's flag library (fisk) reads its kind:
    ``uint64`` and ``int64`` by Go's ``strconv.ParseUint`` / ``ParseInt`` in base 0 (``010``
    is 8, ``0x10`` 16, ``1_000`` 1000; core.numbers ``go_parse_int_base0``), ``int`` by
    ``strconv.ParseFloat`` made an int (``2.5`` is 2, ``1e3`` 1000; ``go_int_of_float``).
    Text its reader refuses, or a value past its range, is refused at parsing (a check's
    command line that does not parse is UNKNOWN, exit 3)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.__name__ = f"go_{kind}"  # the parameter type's name (Typer's FuncParamType)

    def __call__(self, value: Any) -> int:
        from jetlink.core.numbers import IntTextError, go_int_of_float, go_parse_int_base0

        if isinstance(value, int):
            return value
        text = str(value)
        try:
            if self.kind == "int":
                return go_int_of_float(text)
            low, high = (0, UINT64_MAX) if self.kind == "uint64" else _INT64
            return go_parse_int_base0(text, low, high)
        except IntTextError as exc:
            if exc.reason == "range":
                raise typer.BadParameter(str(exc)) from None
            forms = ("a number, e.g. 10, 2.5 (2) or 1e3" if self.kind == "int" else
                     "a whole number, e.g. 1000, 0x3e8 or 1_000" if self.kind == "int64" else
                     "a whole number of 0 or more, e.g. 1000, 0x3e8 or 1_000")
            raise typer.BadParameter(f"{exc.shown!r} is not {forms}") from None


_UINT64, _INT, _INT64_TYPE = _GoInt("uint64"), _GoInt("int"), _GoInt("int64")


def _count(help: str, metavar: str, *, minimum: int | None = None) -> Any:
    """A threshold flag: natscli's int or, with ``minimum=0``, its uint64 (:class:`_GoInt`)."""
    return typer.Option(metavar=metavar, help=help, parser=_UINT64 if minimum == 0 else _INT,
                        show_default=False)


def _check_duration(value: str | None) -> int | None:
    """A threshold's nanoseconds, read as natscli's flag library reads it (a sign allowed:
    0 or less turns the threshold off, as in jsm.go)."""
    return None if value is None else CHECK_DURATION.ns(value)


def _span(help: str) -> Any:
    return typer.Option(metavar="DURATION", parser=CHECK_DURATION, help=help,
                        callback=_check_duration, show_default=False)


_GROUP_KEY = "jetlink.check_output"  # ctx.meta: --format / --namespace / --outfile of `check`


@check_app.callback()
def _check_group(
    ctx: typer.Context,
    fmt: Annotated[Format | None, typer.Option(
        "--format", show_default=False,
        help="Render the check as nagios, json, prometheus or text (as after the check's "
        "name).")] = None,
    namespace: Annotated[str | None, typer.Option(
        "--namespace", metavar="NAME", show_default=False,
        help="The Prometheus namespace (as after the check's name).")] = None,
    outfile: Annotated[str | None, typer.Option(
        "--outfile", metavar="FILE", show_default=False,
        help="Write the check to FILE (as after the check's name).")] = None,
) -> None:
    """natscli defines --format, --namespace and --outfile on `check` itself: a Nagios command
    line written for it (nats server check --format json kv ...) gives them before the
    check's name. Kept for the check, whose own options win when given there too."""
    ctx.meta[_GROUP_KEY] = {"fmt": fmt, "namespace": namespace, "outfile": outfile}


_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def _finish(ctx: typer.Context, result: Any, fmt: Format, namespace: str,
            outfile: str | None) -> None:
    """Print or write ``result`` in ``fmt``; exit with its status code."""
    from jetlink.core.monitor import render
    from jetlink.core.monitor.render import printed

    app = App.of(ctx)
    group = ctx.meta.get(_GROUP_KEY) or {}

    def pick(name: str, value: Any) -> Any:  # the check's own option, else the group's
        return value if common.given(ctx, name) or group.get(name) is None else group[name]

    fmt, namespace, outfile = pick("fmt", fmt), pick("namespace", namespace), \
        pick("outfile", outfile)
    # -j is the check's own option: it wins over a --format given before the check's name
    # (the group's), as every option given after it does; with the check's own --format
    # it conflicts
    chosen = chosen_format(app.json, fmt, common.given(ctx, "fmt"))
    check_namespace(chosen, namespace)
    body = printed(render(result, chosen.value, namespace), chosen.value)
    write_outfile(outfile, body)
    code = 0 if chosen is Format.prometheus else result.exit_code
    if code:
        raise typer.Exit(code)


def chosen_format(json_output: bool, fmt: Format, given: bool) -> Format:
    """The format a check prints: -j/--json is ``--format json``; with a --format given
    that is another, the two conflict (a usage error, never one silently dropped)."""
    if not json_output:
        return fmt
    if given and fmt is not Format.json:
        raise common.usage(f"-j/--json and --format {fmt.value} conflict: give one "
                           "(-j is --format json)")
    return Format.json


def check_namespace(chosen: Format, namespace: str | None) -> None:
    """A Prometheus namespace must prefix metric names; natscli uses it for Prometheus only:
    a Nagios command line that carries one it would never use is not refused for it."""
    if chosen is Format.prometheus and namespace and not _METRIC_NAME.fullmatch(namespace):
        raise common.usage(f"--namespace {namespace!r}: a Prometheus namespace is a metric "
                           "name prefix: a letter, '_' or ':', then letters, digits, '_' or "
                           "':'")


def write_outfile(path: str | None, body: str) -> None:
    """A check's output: on stdout (no --outfile, or an empty one, as natscli's), else
    core/outfile.py ``write_output`` (a new file gets mode 0600)."""
    if not path:
        output.write_stdout(body)
        return
    from jetlink.core.outfile import write_output

    write_output(Path(path), body, new_mode=0o600)


@check_app.command("stream")
def check_stream(
    ctx: typer.Context,
    stream: StreamOption,
    lag_critical: Annotated[int | None, _count(
        "Critical threshold to allow for lag on any source or mirror.", "MSGS", minimum=0)
    ] = None,
    seen_critical: Annotated[str | None, _span(
        "Critical threshold for how long ago the source or mirror should have been seen.")
    ] = None,
    min_sources: Annotated[int | None, _count(
        "Minimum number of sources to expect.", "SOURCES")] = None,
    max_sources: Annotated[int | None, _count(
        "Maximum number of sources to expect.", "SOURCES")] = None,
    peer_expect: Annotated[int | None, _count(
        "Number of cluster replicas to expect.", "SERVERS")] = None,
    peer_lag_critical: Annotated[int | None, _count(
        "Critical threshold to allow for cluster peer lag.", "OPS", minimum=0)] = None,
    peer_seen_critical: Annotated[str | None, _span(
        "Critical threshold for how long ago a cluster peer should have been seen.")] = None,
    msgs_warn: Annotated[int | None, _count(
        "Warn if there are this many messages in the stream or fewer.", "MSGS", minimum=0)
    ] = None,
    msgs_critical: Annotated[int | None, _count(
        "Critical if there are this many messages in the stream or fewer.", "MSGS",
        minimum=0)] = None,
    subjects_warn: Annotated[int | None, _count(
        "Warning threshold for subjects in the stream.", "SUBJECTS")] = None,
    subjects_critical: Annotated[int | None, _count(
        "Critical threshold for subjects in the stream.", "SUBJECTS")] = None,
    fmt: FormatOption = Format.nagios,
    namespace: NamespaceOption = "nats_server_check",
    outfile: OutfileOption = None,
    json_output: JsonOption = False,
) -> None:
    """Check a stream: mirror, sources, peers.

    natscli's nats server check stream: the lag and last activity of its mirror or sources,
    how many sources, messages and subjects it holds, its cluster peers."""
    from jetlink.core.monitor import check_stream as run_check

    app = App.of(ctx)
    flags = {"lag_critical": lag_critical, "seen_critical": seen_critical,
             "min_sources": min_sources, "max_sources": max_sources,
             "peer_expect": peer_expect, "peer_lag_critical": peer_lag_critical,
             "peer_seen_critical": peer_seen_critical, "msgs_warn": msgs_warn,
             "msgs_critical": msgs_critical, "subjects_warn": subjects_warn,
             "subjects_critical": subjects_critical}
    result = run_check(lambda: common.open_jetstream(app), stream, flags)
    _finish(ctx, result, fmt, namespace, outfile)


@check_app.command("consumer")
def check_consumer(
    ctx: typer.Context,
    stream: StreamOption,
    consumer: Annotated[str, typer.Option(
        "--consumer", metavar="CONSUMER", help="The consumer to check.", show_default=False,
        autocompletion=completion.consumers)],
    outstanding_ack_critical: Annotated[int | None, _count(
        "Maximum number of outstanding acks to allow.", "ACKS")] = None,
    waiting_critical: Annotated[int | None, _count(
        "Maximum number of waiting pulls to allow.", "PULLS")] = None,
    unprocessed_critical: Annotated[int | None, _count(
        "Maximum number of unprocessed messages to allow.", "MSGS")] = None,
    last_delivery_critical: Annotated[str | None, _span(
        "Time to allow since the last delivery.")] = None,
    last_ack_critical: Annotated[str | None, _span("Time to allow since the last ack.")] = None,
    redelivery_critical: Annotated[int | None, _count(
        "Maximum number of redeliveries to allow.", "MSGS")] = None,
    pinned: Annotated[bool, typer.Option(
        "--pinned", help="Require the pinned_client priority policy with a pinned client in "
        "every group.")] = False,
    fmt: FormatOption = Format.nagios,
    namespace: NamespaceOption = "nats_server_check",
    outfile: OutfileOption = None,
    json_output: JsonOption = False,
) -> None:
    """Check a consumer: acks, pulls, backlog.

    natscli's nats server check consumer: outstanding acks, waiting pulls, unprocessed
    messages, redeliveries, time since the last delivery and ack, pinned clients."""
    from jetlink.core.monitor import check_consumer as run_check

    app = App.of(ctx)
    flags = {"outstanding_ack_critical": outstanding_ack_critical,
             "waiting_critical": waiting_critical,
             "unprocessed_critical": unprocessed_critical,
             "last_delivery_critical": last_delivery_critical,
             "last_ack_critical": last_ack_critical,
             "redelivery_critical": redelivery_critical, "pinned": True if pinned else None}
    result = run_check(lambda: common.open_jetstream(app), stream, consumer, flags,
                       common.now_ns)
    _finish(ctx, result, fmt, namespace, outfile)


@check_app.command("kv")
def check_kv(
    ctx: typer.Context,
    bucket: Annotated[str, typer.Option(
        "--bucket", metavar="BUCKET", help="The bucket to check.", show_default=False,
        autocompletion=completion.buckets)],
    values_critical: Annotated[int, typer.Option(
        metavar="VALUES", parser=_INT64_TYPE, help="Critical threshold for the "
        "number of values in the bucket (-1: none).")] = -1,
    values_warn: Annotated[int, typer.Option(
        metavar="VALUES", parser=_INT64_TYPE, help="Warning threshold for the "
        "number of values in the bucket (-1: none).")] = -1,
    key: Annotated[str, typer.Option(
        metavar="KEY", help="Require this key to hold a value.", show_default=False)] = "",
    fmt: FormatOption = Format.nagios,
    namespace: NamespaceOption = "nats_server_check",
    outfile: OutfileOption = None,
    json_output: JsonOption = False,
) -> None:
    """Check a Key-Value bucket and a key.

    natscli's nats server check kv: the bucket exists, how many values it holds, and
    --key holds a value."""
    from jetlink.core.monitor import check_kv as run_check

    app = App.of(ctx)
    result = run_check(lambda: common.open_kv(app), bucket, key=key,
                       values_warn=values_warn, values_critical=values_critical)
    _finish(ctx, result, fmt, namespace, outfile)


def register(app: typer.Typer) -> None:
    app.add_typer(server_app, name="server")
