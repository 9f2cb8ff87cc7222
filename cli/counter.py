"""``jetlink counter ...``: distributed counters (ADR-49; natscli's ``nats counter``).

Parsing and rendering only: the verbs call ``jetlink.core.counters`` over the backend's
JetStream API, so they act on the embedded engine and on a live server alike.

- ``get SUBJECT``: the value (natscli prints the number alone);
- ``view SUBJECT``: natscli's ``Counter SUBJECT`` block (Value, Increment, Subject) and the
  sources' values, or ``No source information found``;
- ``increment SUBJECT VALUE`` / ``decrement SUBJECT VALUE``: the new value (``incr``,
  ``decr`` are natscli's aliases);
- ``list [PATTERN]`` (alias ``ls``): the counters' subjects, one per line.

natscli has --json for ``list`` only (a list of subjects); jetlink's documents for the
others: ``{"stream", "subject", "val"}`` (get), the same with ``incr`` and ``sources`` (view),
the PubAck ``{"stream", "seq", "val"}`` (increment, decrement).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from jetlink.cli import output
from jetlink.cli.app import App
from jetlink.cli.common import check_subject_filter, open_jetstream
from jetlink.cli.options import JsonOption

counter_app = typer.Typer(
    name="counter",
    help="Access distributed counters (ADR-49).\n\nA counter is a subject of a "
    "stream created with --allow-counter and --allow-direct: each publish with a Nats-Incr "
    "header adds to the subject's value (ADR-49). The verbs and their output are natscli's "
    "(nats counter ...).",
    no_args_is_help=True,
)

_SIGNED = {"ignore_unknown_options": True}  # a negative VALUE is an argument, not an option

SubjectArg = Annotated[str, typer.Argument(metavar="SUBJECT", help="Subject of the counter.",
                                           show_default=False)]
StreamOpt = Annotated[str | None, typer.Option(
    "--stream", metavar="STREAM",
    help="The stream name to fetch the value from (default: the stream of the subject).")]
ValueArg = Annotated[str, typer.Argument(metavar="VALUE", show_default=False,
                                         help="A decimal integer, any size.")]


def _stream(js: Any, subject: str | None, stream: str | None, *,
            by_option: bool = True) -> str:
    from jetlink.core import counters

    return counters.counter_stream(js, subject, stream, by_option=by_option)


@counter_app.command("get")
def get(ctx: typer.Context, subject: SubjectArg, stream: StreamOpt = None,
        json_output: JsonOption = False) -> None:
    """Get the current value of a counter.

    Prints the value alone (natscli's output). With --json: {"stream", "subject", "val"}.
    """
    from jetlink.core import counters

    app = App.of(ctx)
    js = open_jetstream(app)
    e = counters.entry(js, _stream(js, subject, stream), subject, value_only=True)
    doc = e.to_json()
    app.emit({k: doc[k] for k in ("stream", "subject", "val")},
             human=lambda a, d: output.line(a, d["val"]))


@counter_app.command("view")
def view(ctx: typer.Context, subject: SubjectArg, stream: StreamOpt = None,
         json_output: JsonOption = False) -> None:
    """View the full counter metadata.

    natscli's block: Value, Increment, Subject, then each source stream's subjects and
    values (from Nats-Counter-Sources). With --json: {"stream", "subject", "val", "incr",
    "sources"}.
    """
    from jetlink.core import counters

    app = App.of(ctx)
    js = open_jetstream(app)
    e = counters.entry(js, _stream(js, subject, stream), subject)
    app.emit(e.to_json(), human=_render_view)


def _render_view(app: App, doc: dict[str, Any]) -> None:
    output.kv_block(app, {"Value": doc["val"], "Increment": doc.get("incr", ""),
                          "Subject": doc["subject"]}, title=f"Counter {doc['subject']}")
    output.line(app)
    sources = doc.get("sources")
    if not sources:
        output.line(app, "No source information found")
        return
    output.line(app, "Sources:")
    output.line(app)
    width = max(len(s) for s in sources) + 1
    for name, vals in sources.items():
        text = ", ".join(f"{k}: {v}" for k, v in vals.items())
        output.line(app, f"{(name + ':').ljust(width)}  {text}")


def _add(ctx: typer.Context, subject: str, value: str, negate: bool) -> None:
    from jetlink.core import counters

    app = App.of(ctx)
    v = counters.parse_value(value, negate=negate)
    js = open_jetstream(app)
    _stream(js, subject, None, by_option=False)
    ack = counters.add(js, subject, v)
    app.emit(ack.to_json(), human=lambda a, d: output.line(a, d["val"]))


@counter_app.command("increment", context_settings=_SIGNED)
def increment(ctx: typer.Context, subject: SubjectArg, value: ValueArg,
              json_output: JsonOption = False) -> None:
    """Increment the value of a counter.

    Publishes an empty message with Nats-Incr: VALUE to SUBJECT and prints the new value.
    With --json: the PubAck {"stream", "seq", "val"}.
    """
    _add(ctx, subject, value, negate=False)


@counter_app.command("decrement", context_settings=_SIGNED)
def decrement(ctx: typer.Context, subject: SubjectArg, value: ValueArg,
              json_output: JsonOption = False) -> None:
    """Decrement the value of a counter.

    Publishes an empty message with Nats-Incr: -VALUE to SUBJECT and prints the new value.
    With --json: the PubAck {"stream", "seq", "val"}.
    """
    _add(ctx, subject, value, negate=True)


@counter_app.command("list")
def list_(ctx: typer.Context,
          subject: Annotated[str | None, typer.Argument(
              metavar="[PATTERN]", show_default=False,
              help="Subject pattern of the counters (default: all of --stream).")] = None,
          stream: StreamOpt = None, json_output: JsonOption = False) -> None:
    """List the counters of a stream.

    One subject per line; with --json a list of subjects (natscli's). Needs PATTERN or
    --stream.
    """
    from jetlink.core import counters
    from jetlink.core.errors import UsageError

    app = App.of(ctx)
    if not subject and not stream:
        raise UsageError("no stream or subject specified", field="subject")
    if subject:
        check_subject_filter("PATTERN", subject)
    js = open_jetstream(app)
    name = _stream(js, subject, stream)
    found = counters.subjects(js, name, subject or ">")
    app.emit(found, human=lambda a, d: output.lines(a, d))


def register(app: typer.Typer) -> None:
    app.add_typer(counter_app, name="counter")
