"""``jetlink sub SUBJECT``: follow the messages published on a subject (natscli's ``nats sub``).

Core pub/sub across processes sharing the data directory: every message published on a
matching subject after the subscription starts (``jetlink pub``, with or without --core) is
printed, until --count messages were received, --wait passed without a message, or Ctrl-C
(exit status 130).

With --json the output is JSON lines: one compact JSON message per line, printed as it
arrives, the one exception to "one JSON document per command" (a follower has no end to
wait for).
"""

from typing import Annotated, Any

import typer

from jetlink.cli import common, output
from jetlink.cli.app import App
from jetlink.cli.common import open_jetstream, usage
from jetlink.cli.options import WAIT, JsonLinesOption, TranslateOption
from jetlink.cli.output import to_doc
from jetlink.core.numbers import UINT64_MAX
from jetlink.core.subjects import overlaps

# How long one wait for a message lasts before checking --wait again.
POLL_SECONDS = 0.5


def sub(
    ctx: typer.Context,
    subjects: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="SUBJECT...",
            help="Subjects to subscribe to (wildcards allowed; several, as natscli's; with "
                 "--stream: the stream's messages when none is given).",
            show_default=False,
        ),
    ] = None,
    count: Annotated[
        int | None,
        typer.Option(
            "--count", metavar="N", min=0, max=UINT64_MAX,
            help="Quit after receiving this many messages (0: no limit, as natscli)."
        ),
    ] = None,
    wait: Annotated[
        str | None,
        typer.Option(
            "--wait", metavar="DURATION", parser=WAIT,
            help="Quit after this long without any message (e.g. 5s; 0: never, as "
            "without it).",
        ),
    ] = None,
    raw: Annotated[bool, typer.Option("--raw", "-r", help="Show only the message bodies.")] = False,
    queue: Annotated[
        str | None,
        typer.Option("--queue", metavar="GROUP",
                     help="Subscribe as a member of this queue group: each message goes to "
                     "one member.", show_default=False),
    ] = None,
    translate: TranslateOption = None,
    ignore_subject: Annotated[
        list[str] | None,
        typer.Option("--ignore-subject", "-I", metavar="SUBJECT", show_default=False,
                     help="Messages on subjects matching this are not shown (nor counted; "
                     "repeatable)."),
    ] = None,
    headers_only: Annotated[bool, typer.Option(
        "--headers-only", help="Do not render any data, shows only headers.")] = False,
    subjects_only: Annotated[bool, typer.Option(
        "--subjects-only", help="Prints only the messages' subjects.")] = False,
    # natscli's JetStream subscription (cli/sub_stream.py)
    stream: Annotated[str | None, typer.Option(
        "--stream", metavar="STREAM", show_default=False,
        help="Read the messages this stream stored (JetStream; without it: the stream "
             "that stores SUBJECT, when a start flag is given).")] = None,
    deliver_all: Annotated[bool, typer.Option(
        "--all", help="JetStream: every stored message, then the new ones.")] = False,
    deliver_new: Annotated[bool, typer.Option(
        "--new", help="JetStream: only the messages stored from now on.")] = False,
    deliver_last: Annotated[bool, typer.Option(
        "--last", help="JetStream: the last stored message, then the new ones.")] = False,
    since: Annotated[str | None, typer.Option(
        "--since", metavar="DURATION", parser=WAIT, show_default=False,
        help="JetStream: the messages stored in the last DURATION, then the new ones.")] = None,
    start_sequence: Annotated[int | None, typer.Option(
        "--start-sequence", metavar="SEQUENCE", min=1, max=UINT64_MAX, show_default=False,
        help="JetStream: from this stream sequence on.")] = None,
    last_per_subject: Annotated[bool, typer.Option(
        "--last-per-subject",
        help="JetStream: the last message of each subject, then the new ones.")] = False,
    terminate_at_end: Annotated[bool, typer.Option(
        "--terminate-at-end", "-T",
        help="JetStream: stop once every stored message was received.")] = False,
    dump: Annotated[str | None, typer.Option(
        "--dump", metavar="DIRECTORY", show_default=False,
        help="Write each message to DIRECTORY/N.json (-: on stdout, each ending in a NUL, "
             "for xargs -0).")] = None,
    timestamp: Annotated[bool, typer.Option(
        "--timestamp", "-t", help="Show timestamps in output.")] = False,
    delta_time: Annotated[bool, typer.Option(
        "--delta-time", "-d", help="Show time since start in output.")] = False,
    json_output: JsonLinesOption = False,
) -> None:
    """Follow messages published on subjects.

    Prints every message published on a SUBJECT (wildcards allowed; several subjects, one
    subscription each, as natscli's: a message two of them match is printed twice) from
    now on, by any process sharing the data directory, until --count N messages, --wait
    DURATION without traffic, or Ctrl-C. --queue GROUP (natscli's): the subscribers of one
    queue group share the messages, each to one of them (on a server, NATS's queue
    subscriptions; on the data directory, the member that claims it first).

    A start flag (--all, --new, --last, --since D, --start-sequence N, --last-per-subject)
    or --stream S is natscli's JetStream subscription: the messages the stream (S, else
    the one storing SUBJECT; one subject) stored from there, then each one it stores next;
    -T/--terminate-at-end stops at the end of what is stored; each message is natscli's
    "Received JetStream message: stream: S seq: N / pending: P / subject: X / time: T".

    --dump DIRECTORY writes each message to DIRECTORY/N.json instead (N: the stream
    sequence of a JetStream subscription's message, else its number), natscli's document
    ({"Subject", "Reply", "Header", "Data": base64, "Sub"}); --dump - writes them on stdout,
    each followed by a NUL byte. -t/--timestamp shows when each message was received
    (stored, for a JetStream subscription), -d/--delta-time how long ago.

    With --json: JSON lines, one message per line as it arrives ({"subject", "seq"?,
    "time", "headers", "data": base64}), as every following command's --json (kv watch,
    replicate --follow, positions sync --follow, topic consume --follow): not a single
    document.
    """
    from jetlink.cli import translate as T

    app = App.of(ctx)
    translate = T.checked(translate)
    if count == 0:  # natscli's sub: no limit
        count = None
    idle_ns = None
    if wait is not None:
        from jetlink.cli.stream_flags import parse_duration_flag

        idle_ns = parse_duration_flag(wait, flag="--wait", wait=True)
    subjects = _checked_subjects(subjects, stream, queue)
    if timestamp and delta_time:
        raise usage("timestamp and delta-time flags are mutually exclusive")
    if dump is not None and app.json:
        raise usage("--dump and --json: one output or the other")
    ignored = _ignored(ignore_subject or [])
    shown = "body" if not (headers_only or subjects_only) else (
        "subject" if subjects_only else "headers")
    from jetlink.cli import sub_stream as SS

    start = SS.Start(all=deliver_all, new=deliver_new, last=deliver_last,
                     since_ns=None if since is None else parse_since(since),
                     start_seq=start_sequence, last_per_subject=last_per_subject)
    start.check()
    stored = stream is not None or start.given()
    _check_stored(stored, subjects, queue, terminate_at_end)
    from jetlink.cli import sub_dump

    dumper = sub_dump.Dump(app, dump, translate) if dump is not None else None
    js = open_jetstream(app)
    subscriptions: list[Any] = []
    feed = None
    if stored:
        name = SS.stream_of(js, subjects[0], stream)
        feed = SS.StoredFeed(js, name, subjects[0], start, terminate=terminate_at_end,
                             now_ns=common.now_ns())
        next_msg = feed.next
        said = f"Subscribing to stream {name} on {subjects[0]} {start.said()}"
    else:
        subscriptions = [js.subscribe(subject, queue=queue or "") for subject in subjects]
        next_msg = _next_of(subscriptions)
        said = f"Subscribing on {', '.join(subjects)}"
    show = _shown_by(app, dumper, translate, feed, raw=raw, shown=shown, timestamp=timestamp,
                     delta_time=delta_time)
    received = 0
    try:
        output.notice(app, said + (
            f"\nIgnored subjects: {', '.join(ignored)}" if ignored else ""))
        for msg in common.follow(next_msg, idle_ns, POLL_SECONDS):
            if msg is SS.END:
                break
            doc = to_doc(msg)
            if ignored and any(overlaps(doc["subject"], s) for s in ignored):
                continue  # natscli's shouldIgnore: neither shown nor counted
            received += 1
            show(received, msg, doc)
            if count is not None and received >= count:
                break
    finally:
        for subscription in subscriptions:
            close = getattr(subscription, "close", None) or getattr(subscription, "unsubscribe",
                                                                   None)
            if callable(close):
                close()


def _checked_subjects(subjects: list[str] | None, stream: str | None,
                      queue: str | None) -> list[str]:
    """The subjects subscribed to (a stream's subscription without one: ``>``), each valid,
    and --queue's name: the client's refusals, the same on any backend, before anything."""
    from jetlink.core.subjects import invalid_subject, is_valid_subject

    if not subjects:  # natscli: a subject is required, but for a stream's subscription
        if stream is None:
            raise usage("subject is required (or --stream STREAM: its messages)")
        subjects = [">"]
    for subject in subjects:
        if not is_valid_subject(subject):
            raise invalid_subject(subject, literal=False)
    if queue is not None and (not queue or any(c.isspace() for c in queue)):
        # (the protocol's SUB line separates its fields with blanks: nats.go's
        # ErrBadQueueName refuses the same)
        raise usage(f"invalid value for --queue: {queue!r}: a queue group name is not empty "
                    "and holds no blank")
    return subjects


def _shown_by(app: App, dumper: Any, translate: str | None, feed: Any, *, raw: bool,
              shown: str, timestamp: bool, delta_time: bool) -> Any:
    """``show(n, msg, doc)``: the n-th message as --json, --dump or the human output asks
    (``feed``: a JetStream subscription's, natscli's ``Received JetStream message`` line)."""
    from jetlink.cli import sub_dump

    if app.json:
        return lambda _n, _msg, doc: output.json_line(doc, app)
    if dumper is not None:
        return lambda n, msg, doc: dumper.write(n, msg, doc, feed is not None)
    started = common.now_ns()

    def human(n: int, msg: Any, doc: dict[str, Any]) -> None:
        stored = feed is not None
        stamp = sub_dump.stamp_of(timestamp, delta_time, start_ns=started,
                                  stored_ns=msg.ts if stored else None)
        # (natscli's line needs the pending count: a work-queue stream on a server, read
        # by gets, which natscli can not subscribe to, has the core line)
        line = sub_dump.jetstream_line(n, stamp, feed.stream, feed.pending, msg) \
            if stored and feed.pending is not None else None
        render_message(app, n, doc, raw=raw, translate=translate, shown=shown, stamp=stamp,
                       line=line)

    return human


def parse_since(text: str) -> int:
    """--since DURATION in nanoseconds (a unit required, as every duration flag)."""
    from jetlink.cli.stream_flags import parse_duration_flag

    return parse_duration_flag(text, flag="--since")


def _check_stored(stored: bool, subjects: list[str], queue: str | None,
                  terminate: bool) -> None:
    """natscli's rules for a JetStream subscription (usage errors, before anything)."""
    if terminate and not stored:
        raise usage("--terminate-at-end is only supported for JetStream subscriptions "
                    "(--stream or a start flag: --all, --new, --last, --since, "
                    "--start-sequence, --last-per-subject)")
    if stored and len(subjects) > 1:
        raise usage("streams subscribe support only 1 subject")
    if stored and queue is not None:
        raise usage("--queue: a JetStream subscription reads what the stream stored; a "
                    "queue group shares core messages")


def _next_of(subscriptions: list[Any]) -> Any:
    """``next(timeout)`` over every subscription (one per subject, as natscli subscribes
    each): one message held per subscription, the oldest (its ``ts``) given first, so that
    the messages come in the order they were published whatever subject they match; each
    subscription asked in turn for its share of the wait when none holds one."""
    if len(subscriptions) == 1:
        return subscriptions[0].next
    held: list[Any] = [None] * len(subscriptions)

    def oldest() -> Any:
        for i, sub in enumerate(subscriptions):
            if held[i] is None:
                held[i] = sub.next(0)
        ready = [i for i, msg in enumerate(held) if msg is not None]
        if not ready:
            return None
        # (the engine's messages carry their published order, which times that tie keep)
        first = min(ready, key=lambda i: (held[i].ts, getattr(held[i], "order", 0)))
        msg, held[first] = held[first], None
        return msg

    def next_msg(timeout: float | None) -> Any:
        msg = oldest()
        if msg is not None:
            return msg
        share = (timeout or 0) / len(subscriptions)
        for i, sub in enumerate(subscriptions):
            held[i] = sub.next(share)
            if held[i] is not None:
                return oldest()
        return None

    return next_msg


def _ignored(values: list[str]) -> list[str]:
    """--ignore-subject's subjects (natscli's SplitCLISubjects: commas or blanks separate
    several), each a valid subject, wildcards allowed."""
    from jetlink.cli.stream_flags import split_subjects
    from jetlink.core.subjects import subject_problem

    out = split_subjects(values)
    for subject in out:
        problem = subject_problem(subject)
        if problem is not None:
            raise usage(f"--ignore-subject: {problem}")
    return out


def render_message(app: App, n: int, msg: dict[str, Any], *, raw: bool = False,
                   translate: str | None = None, shown: str = "body", stamp: str = "",
                   line: str | None = None) -> None:
    """natscli's sub output: ``[#1] Received on "SUBJECT"`` (``stamp``, -t / -d's
    `` @ ...``, after the number; ``line``: another first line, a JetStream message's),
    the headers, the body (through --translate's command: natscli's sub gives it the
    subject, no stream); ``shown`` "subject" (--subjects-only) stops after the first line,
    "headers" (--headers-only) after the headers."""

    def human(app: App, msg: dict[str, Any], data: bytes) -> None:
        reply = msg.get("reply")  # (natscli: a message's reply subject after its subject)
        output.line(app, line or f'[#{n}]{stamp} Received on "{msg["subject"]}"'
                         + (f' with reply "{reply}"' if reply else ""))
        if shown == "subject":
            return
        if msg.get("headers"):
            output.print_headers(app, msg["headers"])
            output.line(app)
        if shown == "headers":
            return
        from jetlink.cli import translate as T  # (loaded by the command already)

        T.print_body(app, data, translate, msg["subject"], "")

    if raw and translate is not None:  # natscli's compact form: no subject given to CMD
        from jetlink.cli import translate as T

        T.print_body(app, output.body_text(msg.get("data", "")), translate, "", "",
                     trailing_blank=False)
        return

    output.print_message(app, msg, human, raw=raw)


def register(app: typer.Typer) -> None:
    app.command("sub")(sub)
