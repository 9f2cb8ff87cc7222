"""``jetlink pub SUBJECT [BODY]``: publish messages (natscli's ``nats pub``).

By default a JetStream publish: the message is stored by the stream whose subjects match and
the PubAck (stream, seq, duplicate) is printed; no stream matching is an error (exit 1).
``--core`` is a core NATS publish instead: at most once, no acknowledgement, seen by
``jetlink sub`` followers (and stored too when a stream captures the subject).

The body (and the subject, and header values) may use natscli's template functions:
``{{Count}}`` (or ``{{Cnt}}``, the message number from 1), ``{{ID}}`` (a unique id),
``{{TimeStamp}}`` (RFC3339), ``{{Time}}`` (3:04PM), ``{{Unix}}``, ``{{UnixNano}}`` and
``{{Random min max}}`` (random text of min to max characters); ``{{.Count}}`` works too.
Expanding them is the client's job in natscli as well, so it lives in the CLI
(cli/pub_templates.py).
"""

from collections.abc import Callable, Iterator
from typing import Annotated, Any

import typer

from jetlink.cli import output
from jetlink.cli import pub_fast as PF
from jetlink.cli import pub_schedule as PS
from jetlink.cli.app import App
from jetlink.cli.common import check_write_count, now_ns, open_jetstream, usage
from jetlink.cli.console import PROG
from jetlink.cli.options import DURATION, JsonOption
from jetlink.cli.output import to_doc
from jetlink.cli.pub_templates import TemplateError, expand, new_batch_id
from jetlink.core.counts import message_bytes
from jetlink.core.errors import JetlinkError
from jetlink.core.numbers import INT64_MIN

PUB_HELP = """Publish a message to a subject.

Stores the message in the stream that captures SUBJECT and prints the acknowledgement
(stream, sequence); with --core it is a core NATS publish (at most once, no
acknowledgement, seen by jetlink sub). The body is BODY, or stdin when BODY is absent.

\b
Templates in the body, the subject and header values (natscli's):
  {{Count}}          the message number (1..N with --count)
  {{ID}}             a unique id
  {{TimeStamp}}      RFC3339 current time
  {{Time}}           the current time (3:04PM)
  {{Unix}}           seconds since 1970 in UTC
  {{UnixNano}}       nanoseconds since 1970 in UTC
  {{Random 10 100}}  random text, 10 to 100 characters
These, the fields {{.Count}}, {{.Unix}}... and the trim markers {{- and -}}: not the
rest of Go's template language (no pipelines, printf, if or range).

\b
Example:
  jetlink pub orders.new --count 3 'order {{Count}} at {{TimeStamp}}'

With --atomic the --count messages are one atomic batch (ADR-50; the stream needs
allow_atomic: stream add/edit --allow-batch): stored all or nothing when the last one
commits; --batch-size B makes batches of B messages instead, each committed on its own.

\b
Example:
  jetlink pub orders.new --atomic --count 1000 --batch-size 100 'order {{Count}}'

With --fast the --count messages are one fast batch (ADR-50 fast ingest, nats-server 2.14;
the stream needs allow_batched: stream add/edit --allow-fast): stored as they come,
acknowledged every --flow messages at most, the last one commits; not atomic. In the
default gap mode a refused message ends the batch (an error, with what was stored);
--continue-on-gap goes on past it.

\b
Example:
  jetlink pub metrics.cpu --fast --count 10000 --flow 500 '{{Count}}'

With --json: the PubAck {"stream", "domain"?, "seq", "duplicate"?} ("domain": the server's
JetStream domain, shown as Domain: "D" in the line too); a list of them with --count N > 1
(with --core: {"subject", "bytes"} per message; with --atomic: the commit's PubAck
{"stream", "seq", "batch", "count"} per batch; the same with --fast, as the server sent
it). A batch message sent without its commit (-H Nats-Batch-Id:...) is answered with an
empty reply: null.
"""

# More than this many messages: one summary line instead of one line per message (natscli
# shows a progress bar from 21 messages on).
PER_MESSAGE_LINES = 20
# Messages of --count N published per transaction.
PUBLISH_CHUNK = 1000

def parse_headers(values: list[str]) -> list[tuple[str, str]]:
    """``-H K:V`` values (natscli's format) as (name, value) pairs, spaces trimmed."""
    out = []
    for item in values:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise usage(f"invalid header {item!r}: expected NAME:VALUE")
        out.append((name.strip(), value.strip()))
    return out


def _expand_or_warn(app: App, text: str, what: str, count: int, now_ns: int, enabled: bool,
                    *, header: str | None = None) -> str:
    """``text``'s template expanded; one that does not parse is said and kept as it is (a
    body's, a subject's), or, for the value of ``header``, an error and nothing is published
    (natscli's parseStringsToHeader)."""
    if not enabled:
        return text
    try:
        return expand(text, count, now_ns)
    except (TemplateError, ValueError) as exc:
        if header is not None:
            from jetlink.core.errors import JetlinkError

            raise JetlinkError(f"failed to parse Header template for {header}: {exc}",
                               field="header") from None
        output.notice(app, f"Could not parse {what} template: {exc}")
        return text


def pub(
    ctx: typer.Context,
    subject: Annotated[
        str, typer.Argument(metavar="SUBJECT", help="Subject to publish to.", show_default=False)
    ],
    body: Annotated[
        str | None,
        typer.Argument(
            metavar="[BODY]", help="Message body (default: read from stdin).", show_default=False
        ),
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option(
            "--header", "-H", metavar="K:V", help="Adds a header to the message (repeatable)."
        ),
    ] = None,
    count: Annotated[
        int, typer.Option("--count", metavar="N", min=INT64_MIN,
                          help="Publish N messages (below 1: one, as natscli).")
    ] = 1,
    core: Annotated[
        bool,
        typer.Option(
            "--core", help="Core NATS publish: at most once, no acknowledgement, no stream needed."
        ),
    ] = False,
    templates: Annotated[
        bool,
        typer.Option(
            "--templates/--no-templates",
            help="Expand template functions in the body and subject (headers always: "
            "natscli's --no-templates does not affect them).",
        ),
    ] = True,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print nothing on success (errors still).")
    ] = False,
    jetstream: Annotated[
        bool, typer.Option("--jetstream", "-J", help="A JetStream publish (natscli's flag; "
                           "jetlink's default without --core).")
    ] = False,
    sleep: Annotated[
        str | None,
        typer.Option("--sleep", metavar="DURATION", parser=DURATION, show_default=False,
                     help="With --count: wait DURATION between the publishes."),
    ] = None,
    # natscli's schedule flags (ADR-51): cli/pub_schedule.py
    schedule_at: Annotated[str | None, typer.Option(
        "--schedule-at", metavar="TIME", help=PS.AT_HELP, show_default=False)] = None,
    schedule_after: Annotated[str | None, typer.Option(
        "--schedule-after", metavar="DURATION", parser=DURATION, help=PS.AFTER_HELP,
        show_default=False)] = None,
    schedule_cron: Annotated[str | None, typer.Option(
        "--schedule-cron", metavar="CRON", help=PS.CRON_HELP, show_default=False)] = None,
    schedule_dest: Annotated[str | None, typer.Option(
        "--schedule-dest", metavar="SUBJECT", help=PS.DEST_HELP, show_default=False)] = None,
    schedule_every: Annotated[str | None, typer.Option(
        "--schedule-every", metavar="DURATION", parser=DURATION, help=PS.EVERY_HELP,
        show_default=False)] = None,
    schedule_source: Annotated[str | None, typer.Option(
        "--schedule-source", metavar="SUBJECT", help=PS.SOURCE_HELP, show_default=False)] = None,
    schedule_ttl: Annotated[str | None, typer.Option(
        "--schedule-ttl", metavar="DURATION", parser=DURATION, help=PS.TTL_HELP,
        show_default=False)] = None,
    atomic: Annotated[
        bool,
        typer.Option(
            "--atomic", help="Atomic batch publish: the messages stored all or nothing."
        ),
    ] = False,
    batch_size: Annotated[
        int | None,
        typer.Option(
            "--batch-size", metavar="B", min=1,
            help="With --atomic or --fast: batches of B messages (default: one batch of "
                 "--count).",
            show_default=False,
        ),
    ] = None,
    # fast batch publish (ADR-50 fast ingest, 2.14): cli/pub_fast.py
    fast: Annotated[bool, typer.Option("--fast", help=PF.FAST_HELP)] = False,
    flow: Annotated[int, typer.Option("--flow", metavar="N", min=1, max=65535,
                                      help=PF.FLOW_HELP)] = 100,
    max_outstanding: Annotated[int, typer.Option(
        "--max-outstanding", metavar="N", min=1, help=PF.OUTSTANDING_HELP)] = 2,
    continue_on_gap: Annotated[bool, typer.Option(
        "--continue-on-gap", help=PF.GAP_HELP)] = False,
    batch_id: Annotated[str | None, typer.Option(
        "--batch-id", metavar="ID", help=PF.BATCH_ID_HELP, show_default=False)] = None,
    send_on: Annotated[str, typer.Option(
        "--send-on", metavar="eof|newline",
        help="Without BODY: stdin whole as one body (eof), or each line as it comes "
             "(newline).")] = "eof",
    force_stdin: Annotated[bool, typer.Option(
        "--force-stdin", help="Accepted for natscli's scripts: without BODY stdin is always "
                              "read.")] = False,
    json_output: JsonOption = False,
) -> None:
    app = App.of(ctx)
    count = max(count, 1)  # natscli's pub: a count below 1 publishes one message
    _check_modes(core=core, atomic=atomic, fast=fast, batch_size=batch_size, batch_id=batch_id,
                 continue_on_gap=continue_on_gap, flow=flow, max_outstanding=max_outstanding)
    if jetstream and core:
        raise usage("--jetstream and --core: a publish is one or the other")
    pause = 0.0
    if sleep is not None:
        if atomic or fast:
            raise usage("--sleep: the publishes of a batch go together, not with --atomic or "
                        "--fast")
        pause = DURATION.seconds(sleep)
    pairs = parse_headers(header or [])
    schedule = PS.ScheduleFlags(schedule_at, schedule_after, schedule_every, schedule_cron,
                                schedule_dest, schedule_source, schedule_ttl)
    if core and schedule.given():  # (natscli: the schedule flags imply a JetStream publish)
        raise usage("--schedule-*: a scheduled message is a JetStream publish, not with --core")
    pairs += PS.schedule_headers(schedule, now_ns())
    if send_on not in ("eof", "newline"):
        raise usage(f"invalid value for --send-on: {send_on!r} (one of eof, newline)")
    if send_on == "newline":
        if body is not None or atomic or fast:
            raise usage("--send-on newline: the bodies are stdin's lines, one publish (or "
                        "--count) each: not with BODY, --atomic or --fast")
        _publish_lines(app, subject, pairs, templates, count, core=core, quiet=quiet,
                       pause=pause)
        return
    body_text = _read_body(app) if body is None else body
    check_write_count(app, count, message_bytes(subject, body_text, pairs))
    js = open_jetstream(app)
    per_message = not app.json and not quiet and count <= PER_MESSAGE_LINES
    message = _message_maker(app, subject, body_text, pairs, templates)
    if atomic or fast:
        from jetlink.core.errors import ApiError

        try:
            if atomic:
                _publish_atomic(app, js, message, count, batch_size or count, quiet)
            else:
                PF.publish_fast(app, js, message, count, batch_size or count, quiet,
                                flow=flow, max_outstanding=max_outstanding,
                                gap_ok=continue_on_gap, batch_id=batch_id)
        except ApiError as err:
            flag = _ALLOWS.get(err.err_code)
            if flag and not err.detail:  # the server's words, then the flag that allows it
                names = js.stream_names(subject) if "{{" not in subject else []
                err.detail = (f"the stream allows it with jetlink stream edit "
                              f"{names[0] if names else 'STREAM'} {flag}")
            raise
        return
    results: list[dict[str, Any]] = []
    streams: set[str] = set()
    try:
        if core:
            _publish_core(app, js, message, count, per_message, results, pause)
        else:
            streams = _publish_stored(app, js, message, count, per_message, results, pause)
    except KeyboardInterrupt:
        if app.json and count > 1:  # one document all the same: what was acknowledged
            output.print_json([r for r in results if r is not None])
        raise
    if app.json:
        output.print_json(results[0] if count == 1 else results)
    elif not quiet and not per_message and (results or core):
        if core:
            output.line(app, f"Published {output.comma(count)} messages")
        else:
            first, last = results[0]["seq"], results[-1]["seq"]
            # one stream, a span wider than the count: other publishes were stored between
            # these (their sequences are not all this command's)
            mixed = len(streams) == 1 and last - first + 1 > count
            output.line(
                app,
                f"Stored {output.comma(count)} messages in Stream: {', '.join(sorted(streams))} "
                f"Sequences: {output.comma(first)}..{output.comma(last)}"
                + (" (first and last: other publishes were stored between them)"
                   if mixed else ""),
            )


#: the stream flag that allows what a disabled-publish error refuses
_ALLOWS = {10174: "--allow-batch", 10205: "--allow-fast"}


def _check_modes(*, core: bool, atomic: bool, fast: bool, batch_size: int | None,
                 batch_id: str | None, continue_on_gap: bool, flow: int,
                 max_outstanding: int) -> None:
    """The publish modes' flags go together: --atomic and --fast are JetStream publishes,
    --batch-size goes with one of them, the fast batch's flags with --fast (exit 2)."""
    if atomic and core:
        raise usage("--atomic: an atomic batch is a JetStream publish, not with --core")
    if fast and (core or atomic):
        raise usage("--fast: a fast batch is a JetStream publish, not with --core or --atomic")
    if batch_size is not None and not (atomic or fast):
        raise usage("--batch-size: only with --atomic or --fast")
    if not fast and (batch_id is not None or continue_on_gap or flow != 100
                     or max_outstanding != 2):
        raise usage("--flow, --max-outstanding, --continue-on-gap, --batch-id: only with --fast")


def _read_body(app: App) -> str:
    """The body read from stdin (a notice first on a terminal), undecodable bytes kept."""
    if output.is_interactive():
        output.notice(app, "Reading payload from STDIN")
    from jetlink.cli.common import read_stdin
    from jetlink.core.limits import MAX_PAYLOAD

    data = read_stdin(MAX_PAYLOAD, "the payload")
    return data.decode("utf-8", errors="surrogateescape")


def _publish_lines(app: App, subject: str, pairs: list[tuple[str, str]], templates: bool,
                   count: int, *, core: bool, quiet: bool, pause: float) -> None:
    """natscli's ``--send-on newline``: each line of stdin (its line end taken off) is a
    body, published (``count`` times) as soon as it is read, until stdin ends; an empty
    last line publishes nothing. A line refused (the stream full, too long...) is said,
    "Could not publish message: ...", and the next lines go on, as natscli's; exit status
    1 when one was. With --json one document at the end: every publish's result, a refused
    line's ``{"line", "error"}`` in its place."""
    from jetlink.core.limits import MAX_PAYLOAD

    if output.is_interactive():
        output.notice(app, "Reading payload lines from STDIN")
    js = open_jetstream(app)
    results: list[dict[str, Any]] = []
    failed = n = 0
    try:
        for n, line in enumerate(_stdin_lines(MAX_PAYLOAD), 1):
            try:
                if line is None:
                    raise JetlinkError(f"line {n} of stdin is longer than {MAX_PAYLOAD:,} bytes "
                                       "(the largest payload, max_payload)", field="body")
                text = line.decode("utf-8", errors="surrogateescape")
                check_write_count(app, count, message_bytes(subject, text, pairs))
                message = _message_maker(app, subject, text, pairs, templates)
                each = not app.json and not quiet
                if core:
                    _publish_core(app, js, message, count, each, results, pause)
                else:
                    _publish_stored(app, js, message, count, each, results, pause)
            except JetlinkError as err:
                failed += 1
                if app.json:
                    results.append({"line": n, **err.to_dict()})
                else:
                    output.notice(app, f"Could not publish message: {output.error_text(err)}")
    finally:
        if app.json:  # (also when interrupted: what was published)
            output.print_json([r for r in results if r is not None])
    if failed:
        if not app.json:
            output.notice(app, f"{PROG}: error: {failed} of {n} lines were not published (each "
                               "said above)")
        raise typer.Exit(1)


def _stdin_lines(limit: int) -> Iterator[bytes | None]:
    """stdin's lines as they come, without their line ends (``\\n``, ``\\r\\n``); a line
    longer than ``limit`` bytes is read to its end and given as None."""
    import sys

    stream = getattr(sys.stdin, "buffer", None)
    while True:
        raw = stream.readline(limit + 2) if stream is not None else \
            sys.stdin.readline().encode("utf-8", "surrogateescape")
        if not raw:
            return
        too_long = False
        while not raw.endswith(b"\n") and len(raw) > limit + 1 and stream is not None:
            too_long = True  # (the rest of the line read and dropped, a chunk at a time)
            raw = stream.readline(limit + 2)
            if not raw:
                break
        line = raw[:-1] if raw.endswith(b"\n") else raw
        if line.endswith(b"\r"):
            line = line[:-1]
        yield None if too_long or len(line) > limit else line


def _message_maker(app: App, subject: str, body_text: str, pairs: list[tuple[str, str]],
                   templates: bool) -> Callable[[int], tuple[str, bytes,
                                                         dict[str, list[str]] | None]]:
    """``message(n)``: the n-th message (subject, payload, headers), templates expanded."""

    def message(n: int) -> tuple[str, bytes, dict[str, list[str]] | None]:
        now = now_ns()
        subj = _expand_or_warn(app, subject, "subject", n, now, templates)
        text = _expand_or_warn(app, body_text, "body", n, now, templates)
        headers: dict[str, list[str]] = {}
        for name, value in pairs:
            headers.setdefault(name, []).append(  # (always: --no-templates is the body's)
                _expand_or_warn(app, value, "header", n, now, True, header=name))
        return subj, text.encode("utf-8", errors="surrogateescape"), headers or None

    return message


def _publish_core(app: App, js: Any, message: Callable[[int], Any], count: int,
                  per_message: bool, results: list[dict[str, Any]], pause: float) -> None:
    """Core NATS publishes: at most once, no acknowledgement (``pause`` seconds between
    them: --sleep)."""
    import time

    for n in range(1, count + 1):
        if pause and n > 1:
            time.sleep(pause)
        subj, payload, headers = message(n)
        js.publish_core(subj, payload, headers)
        if app.json:
            results.append({"subject": subj, "bytes": len(payload)})
        if per_message:
            output.line(app, f'Published {len(payload)} bytes to "{subj}"')


def _publish_stored(app: App, js: Any, message: Callable[[int], Any], count: int,
                    per_message: bool, results: list[dict[str, Any]],
                    pause: float = 0.0) -> set[str]:
    """JetStream publishes in chunks of PUBLISH_CHUNK messages, each in one transaction (as
    a client pipelines its publishes): the same acknowledgements as one publish per
    message, and the first refused message still stops the command (what came before it
    is stored, and said); one at a time, ``pause`` seconds apart, with --sleep. Returns
    the streams that stored them (for the summary line)."""
    import time
    streams: set[str] = set()
    stored = 0
    first_seq = last_seq = 0
    in_flight = 0  # messages sent without an acknowledgement: maybe stored
    sending = 0  # the chunk being published
    rolled = 0  # messages of a chunk whose transaction an interrupt rolled back: not stored

    def kept(when: str = "") -> str:
        """What the server acknowledged (``when``), and what was sent and may be
        stored too."""
        of = f"{output.comma(count)} message{'s' if count != 1 else ''}"
        text = (f"{output.comma(stored)} of {of} {'were' if stored != 1 else 'was'} "
                f"stored (acknowledged; sequences {output.comma(first_seq)}.."
                f"{output.comma(last_seq)}){when}" if stored else
                f"none of {of} was acknowledged{when}")
        if in_flight:
            text += (f"; {output.comma(in_flight)} more were sent without an "
                     "acknowledgement: they may or may not be stored")
        if rolled:
            text += (f"; the {output.comma(rolled)} being stored when it stopped were not "
                     "stored (their transaction was rolled back)")
        return text

    try:
        with output.progress(app, "Publishing", count, enabled=not per_message) as bar:
            chunk = 1 if pause else PUBLISH_CHUNK
            for start in range(1, count + 1, chunk):
                if pause and start > 1:
                    time.sleep(pause)
                stop = min(count + 1, start + chunk)
                sending = stop - start
                acks = _publish(js, [message(n) for n in range(start, stop)])
                sending = 0
                if acks and isinstance(acks[-1], Exception):
                    in_flight = getattr(acks[-1], "unacknowledged", 0)
                bar.advance(len(acks))
                before = len(results)
                try:
                    _record(app, acks, results, per_message)
                finally:
                    stored += len(results) - before
                    acked = [r for r in results[before:] if r is not None]
                    if acked:
                        first_seq = first_seq or acked[0]["seq"]
                        last_seq = acked[-1]["seq"]
                if not app.json:  # the summary needs the streams, the first and last ack
                    results[:] = [r for r in results if r is not None]
                    streams.update(r["stream"] for r in results)
                    del results[1:-1]
    except JetlinkError as err:
        # A publish cut short (a connection lost) says how many it had sent unanswered;
        # one refused (a full disk, a limit) stored nothing of its chunk.
        in_flight = in_flight or getattr(err, "unacknowledged", 0)
        if (stored or in_flight) and not per_message:  # acknowledged or maybe: say so
            text = kept(" before the error")
            if app.json:  # the error document stays the server's: this goes to stderr
                output.notice(app, f"jetlink: {text}")
            else:  # one line: the error, then what was kept
                err.detail = f"{err.detail}; {text}" if err.detail else text
        raise
    except KeyboardInterrupt as stop:
        if getattr(stop, "rolled_back", False):  # the engine's chunk: none of it stored
            rolled = sending
        else:
            in_flight = in_flight or sending
        if stored or in_flight or rolled:
            output.notice(app, f"jetlink: interrupted: {kept()}")
        raise
    return streams

def _record(app: App, acks: list[Any], results: list[dict[str, Any]], per_message: bool) -> None:
    """Keep the acks' documents (one line each with per_message); the first refusal ends
    the command (what came before it is stored)."""
    for ack in acks:
        if isinstance(ack, Exception):
            raise ack
        if ack is None:  # an empty reply: a batch message staged until its commit (ADR-50)
            if per_message:
                output.line(app, "Sent: no acknowledgement (an uncommitted batch message is "
                                 "answered with an empty reply; a no_ack stream answers none)")
            results.append(None)
            continue
        doc = to_doc(ack)
        if per_message:
            line = f"Stored in Stream: {doc['stream']} Sequence: {output.comma(doc['seq'])}"
            line += _domain_part(doc)
            if doc.get("duplicate"):
                line += " Duplicate: true"
            if doc.get("val"):  # a counter's value after the increment (ADR-49)
                line += f" Counter Value: {doc['val']}"
            output.line(app, line)
        results.append(doc)


def _domain_part(doc: dict[str, Any]) -> str:
    """natscli's pub: ` Domain: "west"` after the sequence when the ack names a JetStream
    domain (the server's jetstream.domain), nothing otherwise."""
    return f' Domain: "{doc["domain"]}"' if doc.get("domain") else ""


def _publish_atomic(app: App, js: Any, message: Callable[[int], Any], count: int, size: int,
                    quiet: bool) -> None:
    """natscli's ``nats pub --atomic``: each batch's messages carry Nats-Batch-Id and
    Nats-Batch-Sequence, its last Nats-Batch-Commit: 1; the commit's PubAck (stream, seq,
    batch, count) is printed per batch. A refused batch stored nothing and ends the
    command (the batches before it are stored)."""
    from jetlink.core.streamstore.batches import BATCH_COMMIT, BATCH_ID, BATCH_SEQ

    docs: list[dict[str, Any]] = []
    for start in range(1, count + 1, size):
        stop = min(count + 1, start + size)
        bid = new_batch_id()
        msgs = []
        for k, n in enumerate(range(start, stop), 1):
            subj, payload, headers = message(n)
            h = dict(headers or {})
            h[BATCH_ID] = [bid]
            h[BATCH_SEQ] = [str(k)]
            if n == stop - 1:
                h[BATCH_COMMIT] = ["1"]
            msgs.append((subj, payload, h))
        acks = _publish(js, msgs)
        last = acks[-1] if acks else None
        if isinstance(last, Exception):
            if docs:
                last.detail = ((last.detail + "; ") if last.detail else "") + (
                    f"{output.comma(len(docs))} batches before it were stored "
                    f"(sequences up to {output.comma(docs[-1]['seq'])})")
            raise last
        if last is None or len(acks) != len(msgs):  # pragma: no cover - a no_ack stream
            raise JetlinkError(f"batch {bid}: the commit was not acknowledged")
        doc = to_doc(last)
        docs.append(doc)
        if not app.json and not quiet:
            output.line(app, f"Wrote batch ID: {doc.get('batch', bid)} Messages: "
                             f"{output.comma(doc.get('count', len(msgs)))} Sequence: "
                             f"{output.comma(doc['seq'])}{_domain_part(doc)}")
    if app.json:
        output.print_json(docs[0] if len(docs) == 1 else docs)


def _publish(js: Any, msgs: list[tuple[str, bytes, dict[str, list[str]] | None]]) -> list[Any]:
    """JetStream publishes (core's publish_many); "no stream matches" gets a hint: the fence
    that took the subject, the mirrors here, else --core."""
    from jetlink.core.dr.fence import fence_hint, mirror_hint
    from jetlink.core.errors import ApiError
    from jetlink.core.streams import NoStreamError

    acks = js.publish_many(msgs)
    if acks and isinstance(acks[-1], NoStreamError):
        err = acks[-1]
        configs = js.stream_configs()
        hint = fence_hint(configs, err.subject) or mirror_hint(configs, err.subject)
        err.description += f" ({hint or 'use --core for a core NATS publish, without a stream'})"
    elif acks and isinstance(acks[-1], ApiError) and acks[-1].detail is None:
        subject, _data, headers = msgs[len(acks) - 1]
        acks[-1].detail = _refusal_detail(js, acks[-1].err_code, subject, headers or {})
    return acks


# a refused publish's header and what it expected (the server's text names the stream's
# side), or the header whose value the server refused (its text names neither)
_EXPECTED = {10071: ("Nats-Expected-Last-Sequence", "Nats-Expected-Last-Subject-Sequence"),
             10070: ("Nats-Expected-Last-Msg-Id",), 10060: ("Nats-Expected-Stream",),
             10165: ("Nats-TTL",), 10189: ("Nats-Schedule",),
             10203: ("Nats-Schedule-Source",)}


def _refusal_detail(js: Any, code: int, subject: str, headers: dict[str, list[str]]
                    ) -> str | None:
    """What a refused publish's error leaves unsaid, for people (the JSON stays the
    server's): the expectation header and its value, the stream that stores the subject,
    a sealed stream's name, how to allow a per-message TTL."""
    from jetlink.core.errors import JetlinkError, clip

    given = [f"{h}: {clip(headers[h][0])}" for h in _EXPECTED.get(code, ()) if headers.get(h)]
    if given and code != 10060:
        return f"the message's {', '.join(given)}"
    if code not in (10060, 10109, 10166):  # (the stream is asked for only where it is said)
        return None
    try:
        names = js.stream_names(subject)
    except JetlinkError:  # (asked on the error's way out: the error itself matters)
        names = []
    stream = names[0] if names else None
    if given:
        where = f"; {subject} is stored by stream {stream}" if stream else ""
        return f"the message's {', '.join(given)}{where}"
    if stream is None:
        return None
    if code == 10109:
        return f"stream {stream} is sealed: it takes no more messages"
    if code == 10166:  # per-message TTL is disabled: which stream, and how to allow it
        return (f"stream {stream} takes no Nats-TTL: jetlink stream edit {stream} "
                "--allow-msg-ttl allows it")
    return None


pub.__doc__ = PUB_HELP


def register(app: typer.Typer) -> None:
    app.command("pub", help=PUB_HELP)(pub)
