"""``jetlink consumer add|edit|ls|info|next|ack|rm``: durable pull consumers (natscli's verbs).

``add`` takes natscli's flags (--filter, --deliver, --ack, --wait, --max-deliver,
--max-pending, --pull, --defaults, ...) or ``--config FILE`` (a ConsumerConfig, or the
ConsumerInfo ``consumer info --json`` prints); the config is built as its NATS JSON document
and decoded by ``jetlink.core.config.consumer.ConsumerConfig``; the engine validates it.
On a terminal it asks for what is not given, like natscli; without one it never asks.

``next`` fetches messages and acknowledges them (natscli's default; --no-ack leaves them
pending until ``consumer ack`` or the ack wait). Only pull consumers exist here: --pull is
accepted for natscli compatibility and changes nothing.
"""

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from jetlink.cli import common, completion, output
from jetlink.cli.app import App
from jetlink.cli.common import (
    checked_config_out,
    given,
    now_ns,
    open_jetstream,
    read_json_file,
    usage,
    validate_or_output,
)
from jetlink.cli.options import (
    DURATION,
    WAIT,
    JsonOption,
    NoSelectOption,
    PreferredOpt,
    StepDownForceOpt,
    StreamArg,
    config_option,
    force_option,
    output_config_option,
    validate_config_option,
)
from jetlink.cli.output import to_doc
from jetlink.core.numbers import INT64_MAX, INT64_MIN, UINT64_MAX

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.core.queries import ConsumerQuery

consumer_app = typer.Typer(
    name="consumer",
    help="Manage durable pull consumers.\n\nLike natscli's nats consumer. A consumer is a cursor "
    "over a stream: next fetches the messages it has not delivered yet, ack acknowledges them; "
    "unacknowledged messages are redelivered after the ack wait.",
    no_args_is_help=True,
)

ConsumerArg = Annotated[
    str, typer.Argument(metavar="CONSUMER", help="Consumer name.", show_default=False,
                        autocompletion=completion.consumers)
]

ACK_POLICIES = {"none": "none", "all": "all", "explicit": "explicit"}
REPLAY_POLICIES = {"instant": "instant", "original": "original"}
_DELIVER_NAMES = {
    "all": "all",
    "last": "last",
    "new": "new",
    "next": "new",
    "subject": "last_per_subject",
    "last_per_subject": "last_per_subject",
}


# -- flags into a ConsumerConfig document ----------------------------------------------------


def deliver_policy(text: str, now_ns: int) -> dict[str, Any]:
    """natscli's --deliver: all, last, new (next), subject / last_per_subject, a stream
    sequence, or a duration (messages since that long ago)."""

    value = text.lower()  # (not trimmed: natscli's ParseUint takes no space either)
    if value in _DELIVER_NAMES:
        return {"deliver_policy": _DELIVER_NAMES[value]}
    if re.fullmatch(r"\d+", value):
        from jetlink.core.errors import clip
        from jetlink.core.numbers import UINT64_MAX, IntTextError, parse_int

        try:
            seq = parse_int(value, 0, UINT64_MAX)  # the server's OptStartSeq is a uint64
        except IntTextError:
            raise usage(f"invalid value for --deliver: {clip(text)!r}: a stream sequence is "
                        f"at most {UINT64_MAX:,}") from None
        return {"deliver_policy": "by_start_sequence", "opt_start_seq": seq}
    from jetlink.core.durations import DurationError, read_duration

    try:
        ago = read_duration(text)
    except DurationError as exc:
        if exc.reason.startswith("more than the maximum"):  # a duration, too long
            raise usage(f"invalid value for --deliver: {exc.value!r}: {exc.reason}") from None
        raise usage(
            f"invalid value for --deliver: {text!r} (all, last, new, subject, "
            "last_per_subject, a sequence, or a duration like 1h)"
        ) from None
    return {"deliver_policy": "by_start_time", "opt_start_time": _rfc3339(now_ns - ago)}


def _rfc3339(ns: int) -> str:
    from jetlink.core.clock import format_rfc3339_nano

    return format_rfc3339_nano(ns)


# natscli's questions for a pull consumer, in its order, with their defaults (and what
# --defaults takes).
ASKED = (
    ("deliver", "Start policy (all, new, last, subject, 1h, msg sequence)", "all"),
    ("ack", "Acknowledgment policy (explicit, all, none)", "explicit"),
    ("filter", "Filter Stream by subjects (blank for all)", ""),
    ("max_deliver", "Maximum Allowed Deliveries", -1),
    ("max_pending", "Maximum Acknowledgments Pending", 0),
    ("headers_only", "Deliver headers only without bodies", False),
)


def missing_answers(values: dict[str, Any]) -> list[str]:
    """The flags natscli would ask for; max deliveries / pending only when acks are on."""
    acks = (values.get("ack") or "explicit") != "none"
    missing = []
    for name, _, _ in ASKED:
        if name in ("max_deliver", "max_pending") and not acks:
            continue
        if values.get(name) is None:
            missing.append("--" + name.replace("_", "-"))
    return missing


def build_config(name: str, values: dict[str, Any], now_ns: int) -> dict[str, Any]:
    """The ConsumerConfig document (NATS JSON names) for a durable pull consumer."""
    from jetlink.cli.stream_flags import choose, parse_duration_flag, parse_metadata

    doc: dict[str, Any] = {"durable_name": name}
    if values.get("description"):
        doc["description"] = values["description"]
    doc.update(deliver_policy(values.get("deliver") or "all", now_ns))
    ack = choose(values.get("ack") or "explicit", ACK_POLICIES, flag="--ack")
    doc["ack_policy"] = ack
    if values.get("wait") is not None:
        wait = parse_duration_flag(values["wait"], flag="--wait")
        if wait > 0:
            doc["ack_wait"] = wait
    if ack == "none":
        doc["max_deliver"] = -1
    elif values.get("max_deliver") not in (None, 0):
        doc["max_deliver"] = values["max_deliver"]
    filters = _filters(values.get("filter") or [])
    if len(filters) == 1:
        doc["filter_subject"] = filters[0]
    elif len(filters) > 1:
        doc["filter_subjects"] = filters
    _last_per_subject_filter(doc)
    doc["replay_policy"] = choose(
        values.get("replay") or "instant", REPLAY_POLICIES, flag="--replay"
    )
    pending = values.get("max_pending")
    if pending is not None and pending > 0:
        doc["max_ack_pending"] = pending
    if values.get("max_waiting"):
        doc["max_waiting"] = values["max_waiting"]
    if values.get("headers_only"):
        doc["headers_only"] = True
    if values.get("max_pull_batch"):
        doc["max_batch"] = values["max_pull_batch"]
    if (values.get("max_pull_bytes") or 0) > 0:
        doc["max_bytes"] = values["max_pull_bytes"]
    if (values.get("sample") or 0) > 0:  # natscli's add: a percentage above 0
        doc["sample_freq"] = _sample(values["sample"])
    if values.get("max_pull_expire") is not None:
        doc["max_expires"] = parse_duration_flag(
            values["max_pull_expire"], flag="--max-pull-expire"
        )
    if values.get("inactive_threshold") is not None:
        doc["inactive_threshold"] = parse_duration_flag(
            values["inactive_threshold"], flag="--inactive-threshold"
        )
    if values.get("replicas"):
        doc["num_replicas"] = values["replicas"]
    if values.get("memory"):
        doc["mem_storage"] = True
    if values.get("metadata"):
        doc["metadata"] = parse_metadata(values["metadata"])
    _with_backoff(doc, values)
    if values.get("pause"):
        doc["pause_until"] = _rfc3339(parse_pause_until(values["pause"], now_ns, "--pause"))
    doc.update(_priority_doc(values))
    return doc


def _sample(pct: int) -> str:
    """natscli's --sample: a percentage 0 to 100, kept as the server's sample_freq text."""
    if not 0 <= pct <= 100:
        raise usage(f"invalid value for --sample: {pct}: sample percent is not between 0 "
                    "and 100")
    return str(pct) if pct else ""


def _split(values: list[str]) -> list[str]:
    from jetlink.cli.stream_flags import split_subjects

    return split_subjects(values)


def _filters(given: list[str]) -> list[str]:
    """--filter's subjects as natscli takes them: each value one subject (``a,b`` is one),
    repeated for several; an empty one alone is no filter."""
    return [] if given in ([""], []) else list(given)


def _last_per_subject_filter(doc: dict[str, Any]) -> None:
    """natscli's: deliver last per subject without a filter filters on every subject."""
    if doc.get("deliver_policy") == "last_per_subject" and not (
            doc.get("filter_subject") or doc.get("filter_subjects")):
        doc["filter_subject"] = ">"


def _with_backoff(doc: dict[str, Any], values: dict[str, Any]) -> None:
    """--backoff's policy (:func:`_backoff_doc`) into ``doc``; natscli's: a backoff without
    --max-deliver gets one delivery per step and one more (else the server's 10116: max
    deliver must exceed the backoff's steps)."""
    doc.update(_backoff_doc(values))
    if doc.get("backoff") and doc.get("max_deliver", -1) in (-1, 0) \
            and doc.get("ack_policy") != "none":  # (ack none: no redelivery, -1 stays)
        doc["max_deliver"] = len(doc["backoff"]) + 1


def _priority_doc(values: dict[str, Any]) -> dict[str, Any]:
    """natscli's --pinned-groups / --overflow-groups / --prioritized-groups (one policy) and
    --pinned-ttl."""
    from jetlink.cli.stream_flags import parse_duration_flag

    def groups(raw: list[str]) -> list[str]:
        # natscli's flags (StringsVar): each value one group, as given ("g1,g2" is one, the
        # server's to refuse); an empty one is a group named "" (the server's 10161)
        return list(raw)

    pinned = groups(values.get("pinned_groups") or [])
    overflow = groups(values.get("overflow_groups") or [])
    prioritized = groups(values.get("prioritized_groups") or [])
    if pinned and overflow:
        raise usage("setting both overflow and pinned groups are not supported")
    if prioritized and (pinned or overflow):  # (natscli keeps one and drops the other)
        other = "--pinned-groups" if pinned else "--overflow-groups"
        raise usage(f"{other} and --prioritized-groups: a consumer has one priority policy "
                    "(give one of --pinned-groups, --overflow-groups, --prioritized-groups)")
    if values.get("pinned_ttl") and not pinned:
        raise usage("--pinned-ttl is the pin's time of a pinned client policy: give it with "
                    "--pinned-groups")
    doc: dict[str, Any] = {}
    if pinned:
        doc = {"priority_groups": pinned, "priority_policy": "pinned_client"}
        if values.get("pinned_ttl"):
            doc["priority_timeout"] = parse_duration_flag(values["pinned_ttl"],
                                                          flag="--pinned-ttl")
    elif overflow:
        doc = {"priority_groups": overflow, "priority_policy": "overflow"}
    elif prioritized:
        doc = {"priority_groups": prioritized, "priority_policy": "prioritized"}
    return doc


def _backoff_doc(values: dict[str, Any]) -> dict[str, Any]:
    """natscli's --backoff linear|none with --backoff-steps / -min / -max: ``steps`` periods
    from min growing by (max - min) / steps (jsm.go's LinearBackoffPeriods)."""
    from jetlink.cli.stream_flags import parse_duration_flag

    mode = values.get("backoff")
    if not mode or mode == "none":
        shaping = [flag for flag, key in (("--backoff-steps", "backoff_steps"),
                                          ("--backoff-min", "backoff_min"),
                                          ("--backoff-max", "backoff_max"))
                   if values.get(key) is not None]
        if shaping:  # (natscli ignores them: no backoff is made)
            raise usage(f"{', '.join(shaping)} shape{'s' if len(shaping) == 1 else ''} a "
                        "backoff: give --backoff linear")
        return {}
    steps_given = values.get("backoff_steps")
    steps = 10 if steps_given is None else int(steps_given)  # (0: refused below)
    low = parse_duration_flag(values.get("backoff_min") or "1m", flag="--backoff-min")
    high = parse_duration_flag(values.get("backoff_max") or "20m", flag="--backoff-max")
    for flag, value in (("--backoff-steps", steps), ("--backoff-min", low),
                        ("--backoff-max", high)):
        if value <= 0:
            raise usage(f"invalid value for {flag}: {values.get(flag[2:].replace('-', '_'))}"
                        ": it must be more than 0")
    if high < low:
        low, high = high, low
    step = (high - low) // steps
    if high != low and step == 0:
        raise usage(f"step range between {low} and {high} is too small for {steps} steps")
    from jetlink.core.durations import go_round

    return {"backoff": [low + go_round(i * step, 1_000_000) for i in range(steps)]}


def consumer_config(doc: dict[str, Any]) -> Any:
    from jetlink.core.config.consumer import ConsumerConfig

    return ConsumerConfig.from_json(doc)


# -- options shared by add and edit ------------------------------------------------------

FilterOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--filter", metavar="SUBJECTS", help="Filter the stream by subjects (repeatable)."
    ),
]

AckWaitOpt = Annotated[
    str | None,
    typer.Option("--wait", metavar="DURATION", parser=DURATION,
                 help="Acknowledgment waiting time."),
]

ReplicasOpt = Annotated[
    int | None,
    typer.Option("--replicas", metavar="N", min=INT64_MIN, max=INT64_MAX,
                 help="Sets a custom replica count."),
]

MaxDeliverOpt = Annotated[
    int | None,
    typer.Option(
        "--max-deliver",
        metavar="TRIES", min=INT64_MIN, max=INT64_MAX,
        help="Maximum amount of times a message will be delivered.",
    ),
]

MaxPendingOpt = Annotated[
    int | None,
    typer.Option(
        "--max-pending", metavar="N", min=INT64_MIN, max=INT64_MAX,
        help="Maximum pending acks before consumers are paused."
    ),
]

DescriptionOpt = Annotated[
    str | None,
    typer.Option(
        "--description", metavar="TEXT", help="Sets a contextual description for the consumer."
    ),
]

HeadersOnlyOpt = Annotated[
    bool | None,
    typer.Option(
        "--headers-only/--no-headers-only",
        help="Deliver only headers and no bodies.",
        show_default=False,
    ),
]

MaxWaitingOpt = Annotated[
    int | None,
    typer.Option(
        "--max-waiting", metavar="PULLS", min=INT64_MIN, max=INT64_MAX,
        help="Maximum number of outstanding pulls allowed."
    ),
]

MaxPullBatchOpt = Annotated[
    int | None,
    typer.Option(
        "--max-pull-batch", metavar="N", min=INT64_MIN, max=INT64_MAX,
        help="Maximum batch size a pull request may ask for."
    ),
]

MaxPullExpireOpt = Annotated[
    str | None,
    typer.Option(
        "--max-pull-expire",
        metavar="DURATION", parser=DURATION,
        help="Maximum expire duration a pull request may ask for.",
    ),
]

DeliverOpt = Annotated[
    str | None,
    typer.Option("--deliver", metavar="POLICY",
                 help="Start policy (all, new, last, subject, 1h, msg sequence)."),
]

AckOpt = Annotated[
    Literal["none", "all", "explicit"] | None,
    typer.Option("--ack", metavar="POLICY", case_sensitive=False,
                 help="Acknowledgment policy (none, all, explicit)."),
]

ReplayOpt = Annotated[
    Literal["instant", "original"] | None,
    typer.Option("--replay", metavar="POLICY", case_sensitive=False,
                 help="Replay policy (instant, original)."),
]

MaxPullBytesOpt = Annotated[
    int | None,
    typer.Option(
        "--max-pull-bytes", metavar="BYTES", min=INT64_MIN, max=INT64_MAX,
        help="Maximum max bytes a pull request may ask for."
    ),
]

SampleOpt = Annotated[
    int | None,
    typer.Option(
        "--sample", metavar="PERCENT", min=INT64_MIN, max=INT64_MAX,
        help="Percentage of acknowledgements to sample for monitoring (0 to 100)."
    ),
]

BackoffOpt = Annotated[
    Literal["linear", "none"] | None,
    typer.Option("--backoff", metavar="MODE",
                 help="Creates a backoff policy using an algorithm (none, linear)."),
]
BackoffStepsOpt = Annotated[
    int, typer.Option("--backoff-steps", metavar="N", min=INT64_MIN, max=INT64_MAX,
                      help="Number of steps of the backoff policy.")
]
BackoffMinOpt = Annotated[
    str, typer.Option("--backoff-min", metavar="DURATION", parser=DURATION,
                      help="The shortest backoff period.")
]
BackoffMaxOpt = Annotated[
    str, typer.Option("--backoff-max", metavar="DURATION", parser=DURATION,
                      help="The longest backoff period.")
]

InactiveThresholdOpt = Annotated[
    str | None,
    typer.Option(
        "--inactive-threshold",
        metavar="DURATION", parser=DURATION,
        help="How long the consumer may be idle before it is removed.",
    ),
]


# -- commands ---------------------------------------------------------------------------------


@consumer_app.command("add")
def add(
    ctx: typer.Context,
    stream: StreamArg,
    name: Annotated[
        str | None,
        typer.Argument(
            metavar="[CONSUMER]", help="Consumer name (may come from --config).", show_default=False
        ),
    ] = None,
    config: Annotated[
        Path | None,
        config_option(
            "JSON file to read the configuration from (a ConsumerConfig or a ConsumerInfo)."
        ),
    ] = None,
    filter: FilterOpt = None,
    deliver: DeliverOpt = None,
    ack: AckOpt = None,
    wait: Annotated[
        str | None,
        typer.Option(
            "--wait", metavar="DURATION", parser=DURATION,
            help="Acknowledgment waiting time (default 30s)."
        ),
    ] = None,
    max_deliver: MaxDeliverOpt = None,
    max_pending: MaxPendingOpt = None,
    pull: Annotated[
        bool, typer.Option("--pull", help="Deliver messages in 'pull' mode (the only mode here).")
    ] = False,
    replay: ReplayOpt = None,
    description: DescriptionOpt = None,
    headers_only: HeadersOnlyOpt = None,
    max_waiting: MaxWaitingOpt = None,
    max_pull_batch: MaxPullBatchOpt = None,
    max_pull_expire: MaxPullExpireOpt = None,
    inactive_threshold: InactiveThresholdOpt = None,
    replicas: Annotated[
        int | None,
        typer.Option(
            "--replicas",
            metavar="N", min=INT64_MIN, max=INT64_MAX,  # the server's int
            help="Sets a custom replica count rather than inherit from the stream.",
        ),
    ] = None,
    memory: Annotated[
        bool,
        typer.Option(
            "--memory",
            help="Keep the consumer state in memory rather than inherit from the stream.",
        ),
    ] = False,
    metadata: Annotated[
        list[str] | None,
        typer.Option(
            "--metadata", metavar="KEY=VALUE", help="Adds metadata to the consumer (repeatable)."
        ),
    ] = None,
    defaults: Annotated[
        bool,
        typer.Option(
            "--defaults", help="Accept natscli's default values for everything not given."
        ),
    ] = False,
    backoff: BackoffOpt = None,
    backoff_steps: BackoffStepsOpt = 10,
    backoff_min: BackoffMinOpt = "1m",
    backoff_max: BackoffMaxOpt = "20m",
    max_pull_bytes: MaxPullBytesOpt = None,
    sample: SampleOpt = None,
    pause: Annotated[
        str | None,
        typer.Option("--pause", metavar="UNTIL",
                     help="Pause the consumer for a duration or until a time (UTC)."),
    ] = None,
    pinned_groups: Annotated[
        list[str] | None,
        typer.Option("--pinned-groups", metavar="GROUPS",
                     help="Create a Pinned Client consumer based on these groups (one "
                          "per value: repeat the flag)."),
    ] = None,
    pinned_ttl: Annotated[
        str | None,
        typer.Option("--pinned-ttl", metavar="DURATION", parser=DURATION,
                     help="How long a pinned client may go without pulling."),
    ] = None,
    overflow_groups: Annotated[
        list[str] | None,
        typer.Option("--overflow-groups", metavar="GROUPS",
                     help="Create an Overflow consumer based on these groups (one "
                          "per value: repeat the flag)."),
    ] = None,
    prioritized_groups: Annotated[
        list[str] | None,
        typer.Option("--prioritized-groups", metavar="GROUPS",
                     help="Create a Prioritized consumer based on these groups (one "
                          "per value: repeat the flag)."),
    ] = None,
    validate_only: Annotated[bool, validate_config_option("for a consumer of STREAM")
                             ] = False,
    out_file: Annotated[Path | None, output_config_option("consumer")] = None,
    json_output: JsonOption = False,
) -> None:
    """Create a durable pull consumer.

    Takes natscli's flags or --config FILE. On a terminal it asks for what is not given,
    like natscli; without a terminal it never asks: give the flags (the error names the
    missing ones) or --defaults (deliver all, ack explicit, no filter). A consumer of that
    name that exists is updated to the configuration given, as the server's
    create-or-update (natscli's consumer add) does; what changed is said on stderr.

    --validate and --output FILE (natscli's) check the configuration with the server's rules
    for a consumer of STREAM (read, never changed): --validate prints it and says it is
    valid; --output writes it as JSON (read back by --config) and creates nothing.
    """
    app = App.of(ctx)
    checking = validate_or_output(validate_only, out_file)
    now = now_ns()
    if config is not None:
        doc = _load_config(config)
        if name:  # the name given wins over the file's (natscli)
            doc["durable_name"] = name
            doc.pop("name", None)
        cfg = consumer_config(doc)
    else:
        values: dict[str, Any] = {
            "deliver": deliver,
            "ack": ack,
            "wait": wait,
            "filter": filter,
            "max_deliver": max_deliver,
            "max_pending": max_pending,
            "headers_only": headers_only,
            "replay": replay,
            "description": description,
            "max_waiting": max_waiting,
            "max_pull_batch": max_pull_batch,
            "max_pull_expire": max_pull_expire,
            "inactive_threshold": inactive_threshold,
            "replicas": replicas,
            "memory": memory,
            "metadata": metadata,
            "backoff": backoff,
            # (their defaults apply with --backoff linear; given without it, refused)
            **{key: value if given(ctx, key) else None for key, value in (
                ("backoff_steps", backoff_steps), ("backoff_min", backoff_min),
                ("backoff_max", backoff_max))},
            "pause": pause,
            "max_pull_bytes": max_pull_bytes,
            "sample": sample,
            "pinned_groups": pinned_groups,
            "pinned_ttl": pinned_ttl,
            "overflow_groups": overflow_groups,
            "prioritized_groups": prioritized_groups,
        }
        name = output.name_or_ask(
            name, "Consumer name", argument="CONSUMER", what="the consumer name"
        )
        if defaults:
            for key, _, default in ASKED:
                if values[key] is None:
                    values[key] = [] if key == "filter" else default
        missing = missing_answers(values)
        if missing:
            if not output.is_interactive():
                raise usage(
                    "no terminal to ask on: give "
                    + ", ".join(missing)
                    + " (or --defaults to take natscli's defaults), or --config FILE"
                )
            for key, question, default in ASKED:
                if values[key] is None and "--" + key.replace("_", "-") in missing:
                    answer = output.ask(question, default)
                    # (an answer may name several filters, natscli's SplitString; the
                    # flag's values are taken as given)
                    values[key] = _split([answer]) if key == "filter" else answer
        cfg = consumer_config(build_config(name, values, now))
    if checking:
        with _backoff_explained(cfg), _arguments_swapped(app, stream, name):
            _checked_config(app, stream, cfg, out_file)
        return
    with _backoff_explained(cfg), _arguments_swapped(app, stream, name):
        js = open_jetstream(app)
        before = _existing(js, stream, cfg.name or cfg.durable_name)
        info = js.add_consumer(stream, cfg)
    if before is not None:
        _said_updated(app, stream, before, info)
    app.emit(to_doc(info), human=render_info)


def _existing(js: Any, stream: str, name: str | None) -> Any:
    """The consumer ``name`` of ``stream`` as it is before an add (None: there is none, or
    no name): an add of an existing consumer updates it, as the server's create-or-update
    (natscli's consumer add) does, and that is said (:func:`_said_updated`)."""
    from jetlink.core.errors import ApiError

    if not name:
        return None
    try:
        return js.consumer_info(stream, name)
    except ApiError:  # (not found, or the stream: the add says it)
        return None


def _said_updated(app: App, stream: str, before: Any, after: Any) -> None:
    """A notice on stderr naming what an add changed of a consumer that existed (nothing
    when its config is the same)."""
    old, new = before.config.to_json(), after.config.to_json()
    changed = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if changed:
        output.notice(app, f"jetlink: notice: consumer {after.name} of stream {stream} "
                           f"existed: consumer add updated it (changed: {', '.join(changed)}), "
                           "as the server's create-or-update does; consumer edit shows a "
                           "change before making it")


@contextlib.contextmanager
def _arguments_swapped(app: App, stream: str, name: str | None,
                       verb: str = "add") -> Iterator[None]:
    """The stream not found (10059) where the consumer's name is a stream: the arguments in
    the other order, said with the command (``consumer VERB``) that has them right (the
    JSON stays the server's)."""
    from jetlink.core.errors import ApiError, JetlinkError

    try:
        yield
    except ApiError as err:
        if err.err_code != 10059 or err.detail != stream or not name or name == stream:
            raise
        try:
            swapped = name in open_jetstream(app).stream_names()
        except JetlinkError:  # (a hint only)
            swapped = False
        if swapped:
            err.detail = (f"{stream}; {name} is a stream: the stream comes first (jetlink "
                          f"consumer {verb} {name} {stream} ...)")
        raise


def _checked_config(app: App, stream: str, cfg: Any, out_file: Path | None) -> None:
    """``consumer add --validate`` / ``--output FILE``: ``cfg`` checked with the server's
    rules for a new consumer of ``stream`` (core/config/consumer.py
    ``check_consumer_create``, against the stream's configuration as the data directory or
    the server holds it: read only; its refusal is the command's error, exit 1), then
    printed with natscli's verdict, or written to ``out_file`` (JSON, the form --config
    reads)."""
    from jetlink.core.config.consumer import check_consumer_create

    stream_cfg = open_jetstream(app).stream_info(stream).config
    check_consumer_create(stream_cfg, cfg, {}, action="create")
    checked_config_out(app, cfg.to_json(), out_file, "Configuration is a valid Consumer")


@contextlib.contextmanager
def _backoff_explained(cfg: Any) -> Iterator[None]:
    """10116 (max deliver not more than the backoff's steps) says both numbers and the
    options that set them, not the backoff list alone."""
    from jetlink.core.errors import ApiError

    try:
        yield
    except ApiError as err:
        backoff = list(getattr(cfg, "backoff", None) or [])
        if err.err_code == 10116 and backoff:
            err.detail = (f"max_deliver is {getattr(cfg, 'max_deliver', 0)} and the backoff has "
                          f"{len(backoff)} steps: --max-deliver must be more than "
                          "--backoff-steps")
        raise


def _edit_base(config: Path, name: str, current: dict[str, Any]) -> dict[str, Any]:
    """consumer edit --config FILE: the file's configuration, with the consumer's identity
    as it has it (no false line in the diff); a file of another consumer is refused."""
    from jetlink.cli.stream import public_config

    loaded = public_config(_load_config(config))
    named = {loaded.get(k) for k in ("name", "durable_name")} - {None, ""}
    if named - {name}:  # the file is another consumer's: not silently applied to this
        raise usage(f"--config {config} is the configuration of consumer "
                    f"{sorted(named - {name})[0]}, not {name} (edit that one, or give "
                    "this one's name in the file)")
    for key in ("name", "durable_name"):
        if base_name := current.get(key):
            loaded[key] = base_name
        else:
            loaded.pop(key, None)
    return loaded


def edit_config(doc: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """natscli's consumer edit: the flags given applied to a ConsumerConfig document (a
    copy); the flags not given keep the current values."""
    from jetlink.cli.stream_flags import parse_duration_flag, parse_metadata

    out = dict(doc)

    def put(key: str, value: Any) -> None:
        if value in (None, 0, False, "", [], {}):
            out.pop(key, None)
        else:
            out[key] = value

    if values.get("description"):
        put("description", values["description"])
    if values.get("wait") is not None:
        put("ack_wait", parse_duration_flag(values["wait"], flag="--wait"))
    if values.get("max_deliver") not in (None, 0):
        put("max_deliver", values["max_deliver"])
    if values.get("max_pending") is not None:
        put("max_ack_pending", values["max_pending"])
    if values.get("max_waiting"):
        put("max_waiting", values["max_waiting"])
    if values.get("headers_only") is not None:
        put("headers_only", bool(values["headers_only"]))
    if values.get("max_pull_batch"):
        put("max_batch", values["max_pull_batch"])
    if values.get("max_pull_expire") is not None:
        put("max_expires", parse_duration_flag(values["max_pull_expire"],
                                               flag="--max-pull-expire"))
    if values.get("inactive_threshold") is not None:
        put("inactive_threshold", parse_duration_flag(values["inactive_threshold"],
                                                      flag="--inactive-threshold"))
    given = values.get("filter") or []
    filters = _filters(given)
    if given and not filters:  # --filter '': natscli's edit sets no filter at all
        out.pop("filter_subject", None)
        out.pop("filter_subjects", None)
    elif len(filters) == 1:
        out["filter_subject"] = filters[0]
        out.pop("filter_subjects", None)
    elif len(filters) > 1:
        out["filter_subjects"] = filters
        out.pop("filter_subject", None)
    if values.get("replicas"):
        put("num_replicas", values["replicas"])
    if values.get("metadata"):
        put("metadata", parse_metadata(values["metadata"]))
    if (values.get("max_pull_bytes") or 0) > 0:
        put("max_bytes", values["max_pull_bytes"])
    if values.get("sample") not in (None, -1):  # natscli's edit: 0 turns sampling off
        put("sample_freq", _sample(values["sample"]))
    if values.get("backoff"):  # natscli's edit: the new policy ("none": none); max_deliver
        out.pop("backoff", None)  # stays, or --max-deliver's (the server's 10116 when it is
        out.update(_backoff_doc(values))  # not more than the steps)
    elif any(values.get(k) is not None for k in ("backoff_steps", "backoff_min",
                                                 "backoff_max")):
        _backoff_doc(values)  # (refused: they shape a backoff --backoff gives)
    return out


@consumer_app.command("edit")
def edit(
    ctx: typer.Context,
    stream: StreamArg,
    name: ConsumerArg,
    config: Annotated[
        Path | None,
        config_option(
            "JSON file to read the new configuration from (a ConsumerConfig or a ConsumerInfo)."
        ),
    ] = None,
    description: DescriptionOpt = None,
    filter: FilterOpt = None,
    wait: AckWaitOpt = None,
    max_deliver: MaxDeliverOpt = None,
    max_pending: MaxPendingOpt = None,
    headers_only: HeadersOnlyOpt = None,
    max_waiting: MaxWaitingOpt = None,
    max_pull_batch: MaxPullBatchOpt = None,
    max_pull_expire: MaxPullExpireOpt = None,
    inactive_threshold: InactiveThresholdOpt = None,
    replicas: ReplicasOpt = None,
    metadata: Annotated[
        list[str] | None,
        typer.Option(
            "--metadata",
            metavar="KEY=VALUE",
            help="Replaces the consumer's metadata (repeatable).",
        ),
    ] = None,
    max_pull_bytes: MaxPullBytesOpt = None,
    sample: SampleOpt = None,
    backoff: BackoffOpt = None,
    backoff_steps: BackoffStepsOpt = 10,
    backoff_min: BackoffMinOpt = "1m",
    backoff_max: BackoffMaxOpt = "20m",
    force: Annotated[bool, force_option("Edit")] = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Only show the differences; do not edit the consumer."),
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Edit an existing durable consumer.

    Applies the given flags (or --config FILE) to the consumer's configuration and shows
    the differences as a unified diff of the JSON configs; on a terminal it then asks for
    confirmation unless -f/--force. What an update may not change (deliver, ack and replay
    policy, start, max waiting, ...) is refused with the server's error. --dry-run only shows
    the differences (exit status 1 when there are differences, 0 when none, as natscli's;
    with --json: {"name", "changed", "diff", "config"}). With --json: the ConsumerInfo
    after the edit.
    """
    from jetlink.cli.stream import config_diff, public_config
    from jetlink.core.errors import JetlinkError

    app = App.of(ctx)
    js = open_jetstream(app)
    current = to_doc(js.consumer_info(stream, name))
    from jetlink.core.config.consumer import ConsumerConfig

    old = ConsumerConfig.from_json(public_config(current.get("config") or {}), strict=False)
    if not old.durable_name:
        raise JetlinkError(f"consumer {stream} > {name} is not durable: only durable "
                           "consumers can be edited")
    if wait is not None and old.backoff:
        # natscli's refusal (the server sets ack_wait from the backoff's first step: a new
        # --wait would be shown as changed and thrown away)
        err = JetlinkError("consumers with backoff policies do not support editing Ack Wait",
                           field="wait")
        err.detail = (f"consumer {stream} > {name} waits {len(old.backoff)} backoff steps; "
                      "its ack wait is the first")
        raise err
    values: dict[str, Any] = {
        "description": description,
        "filter": filter,
        "wait": wait,
        "max_deliver": max_deliver,
        "max_pending": max_pending,
        "headers_only": headers_only,
        "max_waiting": max_waiting,
        "max_pull_batch": max_pull_batch,
        "max_pull_expire": max_pull_expire,
        "inactive_threshold": inactive_threshold,
        "replicas": replicas,
        "metadata": metadata,
        "max_pull_bytes": max_pull_bytes,
        "sample": sample,
        "backoff": backoff,
        **{key: value if given(ctx, key) else None for key, value in (
            ("backoff_steps", backoff_steps), ("backoff_min", backoff_min),
            ("backoff_max", backoff_max))},
    }
    current_json = old.to_json()
    base = current_json if config is None else _edit_base(config, name, current_json)
    new = consumer_config(edit_config(base, values))
    # compared as the server stores it (its defaults filled in: --wait 0 is its 30s)
    from jetlink.core.config.consumer import check_consumer_config

    shown = new
    try:
        shown = check_consumer_config(new, js.stream_info(stream).config)
    except JetlinkError:
        pass  # (refused: the update says why)
    old_doc, new_doc = public_config(current_json), public_config(shown.to_json())
    diff = config_diff(name, old_doc, new_doc)
    if dry_run:
        doc = {"name": name, "changed": bool(diff), "diff": diff, "config": new_doc}
        app.emit(doc, human=_render_dry_run)
        if diff:  # natscli's edit --dry-run: exit 1 when it would change something
            raise typer.Exit(1)
        return
    if not diff:
        app.emit(current, human=lambda a, d: output.line(a, "No difference in configuration"))
        return
    if not app.json:
        output.line(app, "Differences (-old +new):")
        output.line(app, diff)
        output.line(app)
    if not force and output.is_interactive():
        output.confirm(
            app,
            f"Really edit Consumer {stream} > {name}",
            force=False,
            action=f"edit consumer {stream} > {name}",
        )
    with _backoff_explained(new):
        info = js.add_consumer(stream, new, action="update")
    app.emit(to_doc(info), human=render_info)


def _render_dry_run(app: App, doc: dict[str, Any]) -> None:
    if not doc["changed"]:
        output.line(app, "No difference in configuration")
        return
    output.line(app, "Differences (-old +new):")
    output.line(app, doc["diff"])


def _load_config(path: Path) -> dict[str, Any]:
    from jetlink.core.errors import JetlinkError

    doc = read_json_file(path)
    if isinstance(doc, dict) and isinstance(doc.get("config"), dict) and "stream_name" in doc:
        doc = doc["config"]  # a ConsumerInfo
    if not isinstance(doc, dict):
        raise JetlinkError(f"{path}: expected a JSON object (a ConsumerConfig)")
    return doc


def copy_config(doc: dict[str, Any], dest: str, values: dict[str, Any],
                now_ns: int) -> dict[str, Any]:
    """natscli's consumer copy: the ConsumerConfig document ``doc`` of another consumer
    (without the server's own metadata: cli/stream.py ``public_config``) as the durable
    ``dest``'s, the flags given in ``values`` applied (those of edit, and the start, ack and
    replay policies and the backoff a new consumer may choose)."""
    from jetlink.cli.stream_flags import choose

    out = {k: v for k, v in doc.items() if k not in ("name", "durable_name")}
    out["durable_name"] = dest
    # (the backoff as a new consumer chooses it, below: not as edit replaces one)
    # (max_waiting only with --pull, as natscli's cpAction takes it)
    out = edit_config(out, {k: v for k, v in values.items()
                            if not k.startswith("backoff") and k != "max_waiting"})
    if values.get("deliver") is not None:
        for key in ("deliver_policy", "opt_start_seq", "opt_start_time"):
            out.pop(key, None)
        out.update(deliver_policy(values["deliver"], now_ns))
        _last_per_subject_filter(out)
    if values.get("ack") is not None:
        out["ack_policy"] = choose(values["ack"], ACK_POLICIES, flag="--ack")
    if values.get("replay") is not None:
        out["replay_policy"] = choose(values["replay"], REPLAY_POLICIES, flag="--replay")
    if values.get("backoff") is not None or any(
            values.get(k) is not None for k in ("backoff_steps", "backoff_min", "backoff_max")):
        out.pop("backoff", None)
        _with_backoff(out, values)
    if values.get("pull"):  # natscli's cpAction: no deliver subject, max_waiting as given
        # (none: the server's default) and, with no deliver subject, no heartbeat, no flow
        # control, no deliver group
        for key in ("deliver_subject", "deliver_group", "idle_heartbeat", "flow_control",
                    "max_waiting"):
            out.pop(key, None)
        if values.get("max_waiting"):
            out["max_waiting"] = values["max_waiting"]
    return out


@consumer_app.command("copy")
def copy(
    ctx: typer.Context,
    stream: StreamArg,
    source: Annotated[
        str, typer.Argument(metavar="SOURCE", help="Consumer to copy.", show_default=False,
                            autocompletion=completion.consumers)
    ],
    destination: Annotated[
        str, typer.Argument(metavar="DEST", help="New consumer to create.", show_default=False)
    ],
    description: DescriptionOpt = None,
    filter: FilterOpt = None,
    deliver: DeliverOpt = None,
    ack: AckOpt = None,
    wait: AckWaitOpt = None,
    max_deliver: MaxDeliverOpt = None,
    max_pending: MaxPendingOpt = None,
    replay: ReplayOpt = None,
    headers_only: HeadersOnlyOpt = None,
    max_waiting: MaxWaitingOpt = None,
    max_pull_batch: MaxPullBatchOpt = None,
    max_pull_expire: MaxPullExpireOpt = None,
    max_pull_bytes: MaxPullBytesOpt = None,
    pull: Annotated[
        bool, typer.Option("--pull", help="Make the copy a pull consumer: a push consumer's "
                           "deliver subject, group, heartbeat and flow control left out.")
    ] = False,
    sample: SampleOpt = None,
    inactive_threshold: InactiveThresholdOpt = None,
    replicas: ReplicasOpt = None,
    metadata: Annotated[
        list[str] | None,
        typer.Option("--metadata", metavar="KEY=VALUE",
                     help="Replaces the copied metadata (repeatable)."),
    ] = None,
    backoff: Annotated[
        Literal["linear", "none"] | None,
        typer.Option("--backoff", metavar="MODE",
                     help="Replaces the backoff policy (none, linear)."),
    ] = None,
    backoff_steps: Annotated[
        int | None, typer.Option("--backoff-steps", metavar="N",
                                 help="Number of steps of the backoff policy (default 10).")
    ] = None,
    backoff_min: Annotated[
        str | None, typer.Option("--backoff-min", metavar="DURATION", parser=DURATION,
                                 help="The shortest backoff period (default 1m).")
    ] = None,
    backoff_max: Annotated[
        str | None, typer.Option("--backoff-max", metavar="DURATION", parser=DURATION,
                                 help="The longest backoff period (default 20m).")
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Create a consumer from another's config.

    natscli's consumer copy: the configuration of SOURCE (not its position: the copy starts
    as its start policy says) under the durable name DEST, on the same stream; the flags
    given override the copied values (--pull makes a push consumer's copy a pull
    consumer, as natscli's). An existing DEST is never changed: the server's
    "consumer already exists" (10148) unless its configuration is the same. With --json:
    the new consumer's ConsumerInfo.
    """
    from jetlink.cli.stream import public_config

    app = App.of(ctx)
    if source == destination:
        raise usage("source and destination consumer names cannot be the same")
    js = open_jetstream(app)
    current = to_doc(js.consumer_info(stream, source))
    values: dict[str, Any] = {
        "description": description, "filter": filter, "deliver": deliver, "ack": ack,
        "wait": wait, "max_deliver": max_deliver, "max_pending": max_pending,
        "replay": replay, "headers_only": headers_only, "max_waiting": max_waiting,
        "max_pull_batch": max_pull_batch, "max_pull_expire": max_pull_expire,
        "max_pull_bytes": max_pull_bytes, "pull": pull, "sample": sample,
        "inactive_threshold": inactive_threshold, "replicas": replicas,
        "metadata": metadata, "backoff": backoff, "backoff_steps": backoff_steps,
        "backoff_min": backoff_min, "backoff_max": backoff_max,
    }
    if max_waiting is not None and not pull:
        output.notice(app, "jetlink: notice: --max-waiting is taken with --pull only (as "
                           f"natscli's copy takes it): {destination} keeps {source}'s "
                           "max_waiting")
    cfg = consumer_config(copy_config(public_config(current.get("config") or {}),
                                      destination, values, now_ns()))
    from jetlink.core.errors import ApiError

    try:
        with _backoff_explained(cfg):
            info = js.add_consumer(stream, cfg, action="create")
    except ApiError as err:
        if err.err_code == 10148 and not err.detail:
            err.detail = (f"consumer {stream} > {destination} exists with another "
                          "configuration: copy to a new name, or consumer edit changes it")
        raise
    app.emit(to_doc(info), human=render_info)


# jsm.go's AckPolicy.String(), what natscli prints
_ACK_TITLES = {"none": "None", "all": "All", "explicit": "Explicit",
               "flow_control": "Flow Control"}


def ack_title(policy: str) -> str:
    return _ACK_TITLES.get(policy, "Unknown Acknowledgement Policy")


@consumer_app.command("ls")
def ls(
    ctx: typer.Context,
    stream: StreamArg,
    names: Annotated[
        bool, typer.Option("--names", "-n", help="Show just the consumer names.")
    ] = False,
    no_select: NoSelectOption = False,
    json_output: JsonOption = False,
) -> None:
    """List the consumers of a stream.

    Table of Name, Description, Created, Ack Pending, Unprocessed, Last Delivery. With
    --json: the list of names (natscli's consumer ls --json).
    """
    app = App.of(ctx)
    listing = open_jetstream(app).consumers(stream)
    infos = [to_doc(i) for i in listing]
    for i in infos:  # an offline consumer's entry has no name, its config has it
        if not i.get("name"):
            i["name"] = (i.get("config") or {}).get("name") or \
                (i.get("config") or {}).get("durable_name") or ""
    # the consumers the server did not reach (their servers gone): named apart, as natscli's
    # renderMissing ("Inaccessible Consumers"), never left out as if there were none
    listed = {i["name"] for i in infos}
    gone = sorted(n for n in listing.missing if n not in listed)
    if names or app.json:
        app.emit(sorted([*listed, *gone]), human=output.lines)
        return
    if not infos and not gone:
        output.line(app, "No Consumers defined")
        return
    if infos:
        _consumers_table(app, infos)
    from jetlink.cli.stream import render_inaccessible

    render_inaccessible(app, "consumer", gone, after_table=bool(infos))


def _consumers_table(app: App, infos: list[dict[str, Any]]) -> None:
    """natscli's consumers table, by name."""
    rows = []
    for i in sorted(infos, key=lambda i: i["name"]):
        rows.append(
            [
                i["name"],
                (i.get("config") or {}).get("description", ""),
                output.local_time(i.get("created")),
                # (natscli's renderConsumerAsTable adds the raw counts: no separators)
                str(i.get("num_ack_pending", 0)),
                str(i.get("num_pending", 0)),
                common.ago((i.get("delivered") or {}).get("last_active"), i),
            ]
        )
    output.table(
        app,
        ("Name", "Description", "Created", "Ack Pending", "Unprocessed", "Last Delivery"),
        rows,
        title="Consumers",
        no_wrap=("Name", "Created"),
    )


# jsm.go's consumer query criteria: consumer find selects with them, consumer cluster
# balance too
PullQ = Annotated[bool, typer.Option("--pull", help="Pull consumers only.")]
PushQ = Annotated[bool, typer.Option("--push", help="Push consumers only.")]
BoundQ = Annotated[bool, typer.Option(
    "--bound", help="Bound push consumers, or pull consumers with waiting pulls.")]
WaitingQ = Annotated[int, typer.Option(
    "--waiting", metavar="N", min=INT64_MIN, max=INT64_MAX,
    help="Consumers with waiting pulls, fewer than N.")]
AckPendingQ = Annotated[int, typer.Option(
    "--ack-pending", metavar="N", min=INT64_MIN, max=INT64_MAX,
    help="Consumers with pending acks, fewer than N.")]
PendingQ = Annotated[int, typer.Option(
    "--pending", metavar="N", min=0, max=UINT64_MAX,
    help="Consumers with unprocessed messages, fewer than N.")]
IdleQ = Annotated[str | None, typer.Option(
    "--idle", metavar="DURATION", parser=DURATION, show_default=False,
    help="Consumers that delivered within this period (jsm.go's rule).")]
CreatedQ = Annotated[str | None, typer.Option(
    "--created", metavar="DURATION", parser=DURATION, show_default=False,
    help="Consumers created at least this long ago.")]
ReplicasQ = Annotated[int, typer.Option(
    "--replicas", metavar="REPLICAS", min=0, max=UINT64_MAX,
    help="Consumers with at most this many replicas (0: any number).")]
LeaderQ = Annotated[str | None, typer.Option(
    "--leader", metavar="SERVER", show_default=False,
    help="Consumers whose leader is this server.")]
PinnedQ = Annotated[bool, typer.Option(
    "--pinned", help="pinned_client consumers with a client pinned in every priority "
    "group.")]
InvertQ = Annotated[bool, typer.Option(
    "--invert", help="Invert every check: fewer becomes more, with becomes without.")]


def consumer_query(given: dict[str, Any]) -> "ConsumerQuery":
    """The query of a command's criteria options (``given``: its parameters by name, the
    aliases above; a duration of 0 leaves its criterion out, as natscli's > 0 test)."""
    from jetlink.core.durations import read_duration
    from jetlink.core.queries import ConsumerQuery

    created, idle, leader = given["created"], given["idle"], given["leader"]
    return ConsumerQuery(
        pull=given["pull"], push=given["push"], bound=given["bound"], pinned=given["pinned"],
        ack_pending=max(given["ack_pending"], 0), waiting=max(given["waiting"], 0),
        pending=given["pending"],
        created_ns=(read_duration(created) or None) if created is not None else None,
        delivered_ns=(read_duration(idle) or None) if idle is not None else None,
        replicas=given["replicas"], leader=leader or None,
        api_level=given.get("api_level", 0), invert=given["invert"])


@consumer_app.command("find")
def find(
    ctx: typer.Context,
    stream: StreamArg,
    pull: PullQ = False,
    push: PushQ = False,
    bound: BoundQ = False,
    waiting: WaitingQ = 0,
    ack_pending: AckPendingQ = 0,
    pending: PendingQ = 0,
    idle: IdleQ = None,
    created: CreatedQ = None,
    replicas: ReplicasQ = 0,
    leader: LeaderQ = None,
    pinned: PinnedQ = False,
    invert: InvertQ = False,
    api_level: Annotated[int, typer.Option(
        "--api-level", metavar="LEVEL", min=INT64_MIN, max=INT64_MAX,
        help="Consumers needing at least this JetStream API level.")] = 0,
    json_output: JsonOption = False,
) -> None:
    """Find a stream's consumers by criteria.

    natscli's consumer find (jsm.go's consumer query): every criterion given must hold, with
    --invert each is turned around. Prints the names, one per line (--json: their list).
    --idle keeps jsm.go's rule, consumers that delivered within the period (natscli's help
    says the opposite). jsm.go's --expression language is not supported.
    """
    from jetlink.core.queries import query_consumers

    app = App.of(ctx)
    q = consumer_query(locals())
    found = query_consumers([to_doc(i) for i in open_jetstream(app).consumers(stream)], q,
                            now_ns=now_ns())
    app.emit(sorted(i["name"] for i in found), human=output.lines)


@consumer_app.command("report")
def report(
    ctx: typer.Context,
    stream: StreamArg,
    raw: Annotated[bool, typer.Option("--raw", "-r", help="Show un-formatted numbers.")] = False,
    leaders: Annotated[bool, typer.Option(
        "--leaders", "-l", help="Show how many consumer leaders each server holds.")] = False,
    json_output: JsonOption = False,
) -> None:
    """Report statistics of a stream's consumers.

    natscli's consumer report: "Consumer report for STREAM with N consumers", a table of
    Consumer, Mode, Ack Policy, Ack Wait, Ack Pending, Redelivered, Unprocessed (and its
    share of the stream's messages), Ack Floor, API Level and Cluster (the leader marked *,
    a replica behind or offline !); --leaders: the RAFT Leader Report (per server: its
    cluster, the consumers it leads, their share as stars). Consumers a live server did not
    reach are listed apart after it (Inaccessible Consumers, natscli's; with --json a
    warning on stderr). With --json: the list of ConsumerInfo documents.
    """
    app = App.of(ctx)
    js = open_jetstream(app)
    messages = int((to_doc(js.stream_info(stream)).get("state") or {}).get("messages", 0))
    listing = js.consumers(stream)
    # the consumers the server did not reach (a placeholder entry with no name or state):
    # no row, listed apart after the report, as natscli's renderMissing
    gone = set(listing.missing)
    docs = [to_doc(i) for i in listing]
    for d in docs:  # an offline consumer's entry has no name, its config has it (as ls)
        if not d.get("name"):
            d["name"] = (d.get("config") or {}).get("name") or \
                (d.get("config") or {}).get("durable_name") or ""
    infos = sorted((d for d in docs if d["name"] and d["name"] not in gone),
                   key=lambda i: i["name"])
    from jetlink.cli.stream import render_inaccessible

    def human(a: App, d: list[dict[str, Any]]) -> None:
        _render_report(a, stream, d, messages, raw=raw, leaders=leaders)
        render_inaccessible(a, "consumer", sorted(gone), after_table=True)

    app.emit(infos, human=human)
    if app.json and gone:
        output.notice(app, f"jetlink: warning: not reached (their servers did not answer), "
                           f"not in the report: {', '.join(sorted(gone))}")


def _render_report(app: App, stream: str, infos: list[dict[str, Any]], messages: int, *,
                   raw: bool, leaders: bool = False) -> None:
    from jetlink.core.durations import format_duration

    num = (lambda n: str(n)) if raw else output.comma
    rows = []
    for i in infos:
        cfg = i.get("config") or {}
        pending = int(i.get("num_pending", 0))
        if raw:
            unprocessed = str(pending)
        elif pending > 0:  # natscli: its share of the stream's messages, floored, at most 100
            share = min(100, (pending * 100 // messages) if messages else 100)
            unprocessed = f"{output.comma(pending)} / {share}%"
        else:
            unprocessed = "0"
        rows.append([
            i["name"],
            "Push" if cfg.get("deliver_subject") else "Pull",
            ack_title(str(cfg.get("ack_policy", "explicit"))),
            format_duration(int(cfg.get("ack_wait", 0))) if raw
            else output.since(cfg.get("ack_wait", 0)),
            num(i.get("num_ack_pending", 0)),
            num(i.get("num_redelivered", 0)),
            unprocessed,
            num((i.get("ack_floor") or {}).get("stream_seq", 0)),
            str((cfg.get("metadata") or {}).get("_nats.req.level") or "0"),
            output.cluster_cell(i.get("cluster")),
        ])
    output.table(
        app,
        ("Consumer", "Mode", "Ack Policy", "Ack Wait", "Ack Pending", "Redelivered",
         "Unprocessed", "Ack Floor", "API Level", "Cluster"),
        rows,
        title=f"Consumer report for {stream} with {output.comma(len(infos))} consumers",
        no_wrap=("Consumer",),
    )
    if leaders:
        output.raft_leaders(app, (i.get("cluster") for i in infos), "Consumers")


@consumer_app.command("info")
def info(
    ctx: typer.Context,
    stream: StreamArg,
    name: ConsumerArg,
    state: Annotated[bool, typer.Option("--state", help="Show only the consumer state.")] = False,
    no_select: NoSelectOption = False,
    json_output: JsonOption = False,
) -> None:
    """Show a consumer's configuration and state.

    natscli's sections (Configuration, State). With --json: the ConsumerInfo.
    """
    app = App.of(ctx)
    with _arguments_swapped(app, stream, name, ctx.info_name or "info"):
        doc = to_doc(open_jetstream(app).consumer_info(stream, name))
    app.emit(doc, human=lambda a, d: render_info(a, d, state_only=state))


@consumer_app.command("state")
def state_(ctx: typer.Context, stream: StreamArg, name: ConsumerArg,
           no_select: NoSelectOption = False, json_output: JsonOption = False) -> None:
    """Show only a consumer's state.

    As consumer info --state (natscli's consumer state): "State for Consumer S > C", its
    cluster and state sections. With --json: the ConsumerInfo, as consumer info --json.
    """
    info(ctx, stream, name, state=True, json_output=json_output)


_DELIVER_TITLES = {
    "all": "All",
    "last": "Last",
    "new": "New",
    "last_per_subject": "Last Per Subject",
}


def render_info(app: App, doc: dict[str, Any], *, state_only: bool = False) -> None:
    """natscli's consumer info."""
    cfg = doc.get("config") or {}
    cols = output.info_columns(
        f"Consumer {doc.get('stream_name', '')} > {doc.get('name', '')}", doc, state_only=state_only
    )
    if not state_only:
        _config_rows(cols, cfg, doc)
        _pause_and_priority_rows(cols, cfg, doc)
        cols.metadata(cfg.get("metadata"))
    _cluster_rows(cols, doc)
    _state_rows(cols, cfg, doc)
    cols.render(app)


def _cluster_rows(cols: output.Columns, doc: dict[str, Any]) -> None:
    """natscli's Cluster Information of a consumer on a clustered server: the cluster, the
    RAFT group, the leader (and since when), each other replica's state."""
    cluster = doc.get("cluster") or {}
    if not cluster.get("name"):
        return
    cols.title("Cluster Information")
    cols.row("Name", cluster["name"])
    cols.row("Raft Group", cluster.get("raft_group", ""), bool(cluster.get("raft_group")))
    leader, since = cluster.get("leader", ""), output.rfc3339_ns(cluster.get("leader_since"))
    if since:
        leader += f" ({output.since(max(common.now_of(doc) - since, 0))})"
    cols.row("Leader", leader)
    for peer in cluster.get("replicas") or []:
        cols.row("Replica", _replica_line(peer))


def _replica_line(peer: dict[str, Any]) -> str:
    """natscli's consumer replica row: ``n2, current, seen 1ms ago`` (outdated; ``not seen``
    for a peer never heard from: an active of 0 or the largest int64)."""
    active = int(peer.get("active") or 0)
    seen = "not seen" if active in (0, 2**63 - 1) else f"seen {output.since(active)} ago"
    return f"{peer.get('name', '')}, {'current' if peer.get('current') else 'outdated'}, {seen}"


def _config_rows(cols: output.Columns, cfg: dict[str, Any], doc: dict[str, Any]) -> None:
    """The Configuration section of natscli's consumer info, up to the memory storage."""
    ack = cfg.get("ack_policy", "explicit")
    cols.title("Configuration")
    cols.row("Name", cfg.get("name") or doc.get("name", ""))
    durable = cfg.get("durable_name", "")
    cols.row(
        "Durable Name",
        durable,
        bool(durable) and durable != (cfg.get("name") or doc.get("name")),
    )
    cols.row("Description", cfg.get("description", ""), bool(cfg.get("description")))
    push = bool(cfg.get("deliver_subject"))
    if push:  # a push consumer (natscli: the subject, no pull mode)
        cols.row("Delivery Subject", cfg["deliver_subject"])
    else:
        cols.row("Pull Mode", True)
    if cfg.get("filter_subject"):
        cols.row("Filter Subject", cfg["filter_subject"])
    elif cfg.get("filter_subjects"):
        cols.row("Filter Subjects", ", ".join(cfg["filter_subjects"]))
    policy = cfg.get("deliver_policy", "all")
    if policy == "by_start_time":
        start = cfg.get("opt_start_time")  # (natscli's *time.Time, as Go prints it)
        cols.row("Deliver Policy", f"Since {output.go_time_utc(output.rfc3339_ns(start))}"
                 if start else "Since")
    elif policy == "by_start_sequence":
        cols.row("Deliver Policy", f"From Sequence {cfg.get('opt_start_seq', 0)}")
    else:
        cols.row("Deliver Policy", _DELIVER_TITLES.get(policy, policy))
    cols.row("Deliver Queue Group", cfg.get("deliver_group", ""),
             push and bool(cfg.get("deliver_group")))
    cols.row("Ack Policy", ack_title(ack))
    cols.row("Ack Wait", output.since(cfg.get("ack_wait", 0)), ack != "none")
    cols.row("Replay Policy", cfg.get("replay_policy", "instant").capitalize())
    max_deliver = cfg.get("max_deliver", -1)
    cols.row("Maximum Deliveries", output.comma(max_deliver), max_deliver not in (-1, 0))
    cols.row("Sampling Rate", cfg.get("sample_freq", ""), bool(cfg.get("sample_freq")))
    rate = int(cfg.get("rate_limit_bps") or 0)
    cols.row("Rate Limit", f"{output.ibytes(rate // 8)} / second", rate > 0)
    cols.row(
        "Max Ack Pending",
        output.comma(cfg.get("max_ack_pending", 0)),
        cfg.get("max_ack_pending", 0) > 0,
    )
    cols.row(
        "Max Waiting Pulls",
        output.comma(cfg.get("max_waiting", 0)),
        cfg.get("max_waiting", 0) > 0,
    )
    cols.row("Idle Heartbeat", output.since(cfg.get("idle_heartbeat", 0)),
             cfg.get("idle_heartbeat", 0) > 0)
    cols.row("Flow Control", bool(cfg.get("flow_control")), push)
    cols.row("Headers Only", True, bool(cfg.get("headers_only")))
    cols.row(  # (natscli shows it for pull consumers only)
        "Inactive Threshold",
        output.since(cfg.get("inactive_threshold", 0)),
        cfg.get("inactive_threshold", 0) > 0 and not push,
    )
    cols.row(
        "Max Pull Expire",
        output.since(cfg.get("max_expires", 0)),
        cfg.get("max_expires", 0) > 0,
    )
    cols.row(
        "Max Pull Batch", output.comma(cfg.get("max_batch", 0)), cfg.get("max_batch", 0) > 0
    )
    cols.row("Max Pull MaxBytes", output.comma(cfg.get("max_bytes", 0)),
             cfg.get("max_bytes", 0) > 0)
    backoff = cfg.get("backoff") or []
    cols.row("Backoff", _render_backoff(backoff), bool(backoff))
    cols.row("Replicas", cfg.get("num_replicas", 0), cfg.get("num_replicas", 0) > 0)
    cols.row("Memory Storage", True, bool(cfg.get("mem_storage")))


def _pause_and_priority_rows(cols: output.Columns, cfg: dict[str, Any],
                             doc: dict[str, Any]) -> None:
    """The Configuration rows of the pause deadline and the priority groups."""
    pause_until = output.rfc3339_ns(cfg.get("pause_until"))
    if doc.get("paused"):
        cols.row("Paused Until Deadline", f"{output.local_ns(pause_until)} "
                 f"({_remaining(doc.get('pause_remaining', 0))} remaining)")
    else:
        cols.row("Paused Until Deadline", f"{output.local_ns(pause_until)} (passed)",
                 bool(pause_until))
    policy = cfg.get("priority_policy", "none")
    if policy != "none":  # (jsm.go's PriorityPolicy String(): its words)
        cols.row("Priority Policy", _PRIORITY_WORDS.get(policy, policy))
        cols.row("Priority Groups", ", ".join(cfg.get("priority_groups") or []))
        cols.row("Pinned TTL", output.since(int(cfg.get("priority_timeout", 0))),
                 policy == "pinned_client")


def _state_rows(cols: output.Columns, cfg: dict[str, Any], doc: dict[str, Any]) -> None:
    """The State section of natscli's consumer info: deliveries, acknowledgements, pending
    and waiting counts, the pause, the pinned clients."""
    ack = cfg.get("ack_policy", "explicit")
    now = common.now_of(doc)

    def seqs(point: dict[str, Any], label: str) -> str:
        text = (
            f"Consumer sequence: {output.comma(point.get('consumer_seq', 0))} "
            f"Stream sequence: {output.comma(point.get('stream_seq', 0))}"
        )
        last = output.rfc3339_ns(point.get("last_active"))
        if last:
            text += f" {label}: {output.since(max(now - last, 0))} ago"
        return text

    cols.title("State")
    output.server_meta_rows(cols, cfg.get("metadata"))
    cols.row("Last Delivered Message", seqs(doc.get("delivered") or {}, "Last delivery"))
    if ack != "none":
        cols.row("Acknowledgment Floor", seqs(doc.get("ack_floor") or {}, "Last Ack"))
        pending = doc.get("num_ack_pending", 0)
        if cfg.get("max_ack_pending", 0) > 0:
            cols.row(
                "Outstanding Acks",
                f"{output.comma(pending)} out of maximum {output.comma(cfg['max_ack_pending'])}",
            )
        else:
            cols.row("Outstanding Acks", output.comma(pending))
        cols.row("Redelivered Messages", output.comma(doc.get("num_redelivered", 0)))
    cols.row("Unprocessed Messages", output.comma(doc.get("num_pending", 0)))
    waiting = output.comma(doc.get("num_waiting", 0))
    if cfg.get("deliver_subject"):  # push: whether someone listens there (push_bound)
        group = cfg.get("deliver_group")
        cols.row("Active Interest", (f"Active using Queue Group {group}" if group else
                                     "Active") if doc.get("push_bound") else "No interest")
    elif cfg.get("max_waiting", 0) > 0:
        cols.row("Waiting Pulls", f"{waiting} of maximum {output.comma(cfg['max_waiting'])}")
    else:
        cols.row("Waiting Pulls", f"{waiting} of unlimited")
    if doc.get("paused"):
        remaining = int(doc.get("pause_remaining", 0))
        cols.row("Paused Until", f"{output.local_ns(now + remaining)} "
                 f"({_remaining(remaining)} remaining)")
    if doc.get("priority_groups") and cfg.get("priority_policy") == "pinned_client":
        groups: dict[str, str] = {}
        for group in doc["priority_groups"]:
            pin = group.get("pinned_client_id", "")
            when = output.local_ns(output.rfc3339_ns(group.get("pinned_ts")))
            groups[str(group.get("group", ""))] = f"pinned {pin} at {when}" if pin \
                else "No client"
        # natscli's AddMapStringsAsValue: one row per group, sorted, the names aligned
        longest = max(len(g) for g in groups)
        for i, g in enumerate(sorted(groups)):
            cols.row("" if i else "Priority Groups",
                     f"{' ' * (longest - len(g))}{g}: {groups[g]}")


def _remaining(ns: Any) -> str:
    """A pause's time left as natscli prints it: PauseRemaining.Round(time.Second), a Go
    duration (``1h0m0s``, ``2s``)."""
    from jetlink.core.durations import go_round

    return _go_duration(go_round(int(ns or 0), 1_000_000_000))


_PRIORITY_WORDS = {"overflow": "Overflow", "pinned_client": "Pinned Client",
                   "prioritized": "Prioritized"}


def _go_duration(ns: int) -> str:
    from jetlink.core.durations import format_duration

    return format_duration(int(ns))


def _render_backoff(backoff: list[int]) -> str:
    """natscli's backoff row: every step, or the first and last five of more than 15."""
    steps = [_go_duration(d) for d in backoff]
    if len(steps) > 15:
        return ", ".join([*steps[:5], "...", *steps[-5:]]) + f" ({len(steps)} total)"
    return ", ".join(steps)


@consumer_app.command("next")
def next_(
    ctx: typer.Context,
    stream: StreamArg,
    name: ConsumerArg,
    count: Annotated[
        int, typer.Option("--count", metavar="N", min=1, max=INT64_MAX,
                          help="Number of messages to fetch.")
    ] = 1,
    ack: Annotated[
        bool,
        typer.Option(
            "--ack/--no-ack", help="Acknowledge the messages received (natscli's default)."
        ),
    ] = True,
    nak: Annotated[
        bool, typer.Option("--nak", help="Negatively acknowledge the messages received "
                           "(redelivered at once).")
    ] = False,
    term: Annotated[
        bool, typer.Option("--term", help="Terminate the messages received (never "
                           "redelivered).")
    ] = False,
    raw: Annotated[bool, typer.Option("--raw", "-r", help="Show only the message bodies.")] = False,
    group: Annotated[
        str | None,
        typer.Option("--group", metavar="GROUP",
                     help="Priority group of the pull requests (required by priority consumers)."),
    ] = None,
    pin_id: Annotated[
        str | None,
        typer.Option("--pin-id", metavar="ID",
                     help="Pin id of a pinned client (its messages' Nats-Pin-Id)."),
    ] = None,
    min_pending: Annotated[
        int, typer.Option("--min-pending", metavar="N", min=0,
                          help="Overflow: only when at least N messages are pending.")
    ] = 0,
    min_ack_pending: Annotated[
        int, typer.Option("--min-ack-pending", metavar="N", min=0,
                          help="Overflow: only when at least N acks are outstanding.")
    ] = 0,
    priority: Annotated[
        int, typer.Option("--priority", metavar="N", min=0, max=9,
                          help="Prioritized: the request's priority (0 highest .. 9).")
    ] = 0,
    wait: Annotated[
        str | None,
        typer.Option("--wait", metavar="DURATION", parser=WAIT, show_default=False,
                     help="Wait up to DURATION for the --count messages (natscli waits its "
                     "--timeout); none came: exit status 1. Without it: what is pending now."),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Fetch the next messages of a pull consumer.

    Fetches up to --count messages and acknowledges them (--no-ack leaves them pending:
    redelivered after the ack wait unless acknowledged with consumer ack; --nak has them
    redelivered at once, --term never again), asking again
    while the consumer's max_ack_pending holds back the rest. With --json:
    a list of messages ({"subject", "seq", "time", "headers", "data": base64} plus the
    delivery metadata); an empty list when nothing is pending.

    A priority group consumer (ADR-42) takes only requests naming one of its groups
    (--group); a pinned client passes its pin (--pin-id, the Nats-Pin-Id of the messages
    it got), an overflow request its minimums, a prioritized one its priority.
    """
    from jetlink.core.priority import PullPriority

    app = App.of(ctx)
    if term:  # natscli: --term alone answers the message (--ack then only when typed)
        if nak or (ack and given(ctx, "ack")):
            raise usage("can not both Acknowledge and Terminate message (--term with "
                        f"{'--nak' if nak else '--ack'})")
        ack = False
    answer = "term" if term else "nak" if nak else "ack" if ack else None
    js = open_jetstream(app)
    req = None
    if group is not None or pin_id or min_pending or min_ack_pending or priority:
        req = PullPriority(group=group or "", min_pending=min_pending,
                           min_ack_pending=min_ack_pending, id=pin_id or "",
                           priority=priority)
    waited = None
    if wait is not None:
        import time

        from jetlink.cli.stream_flags import parse_duration_flag

        waited = parse_duration_flag(wait, flag="--wait", wait=True) / 1e9
        deadline = time.monotonic() + waited
    # Each message is written (and flushed) before it is acknowledged, as natscli prints a
    # message and then acks it: output that never reached its reader (a full disk, a closed
    # pipe, Ctrl-C) leaves its messages unacknowledged, redelivered after the ack wait.
    listing = output.JsonList() if app.json else None
    shown = 0
    # Pull requests until --count messages came or nothing more is deliverable: one request
    # gives at most max_ack_pending unacknowledged messages (1,000 by default), as natscli
    # keeps asking until it has --count. With --wait, asked again until its deadline (a
    # publish from another process, a redelivery after the ack wait).
    cap = [count]  # (lowered to the consumer's max_batch when a request asked for more)
    with _arguments_swapped(app, stream, name, "next"):
        js.consumer_info(stream, name)  # (not there: said before any fetch)
    while shown < count:
        got = [to_doc(m) for m in _fetch_explained(js, stream, name, count - shown, req, cap)]
        if not got:
            if waited is not None and time.monotonic() < deadline:
                time.sleep(min(0.05, max(deadline - time.monotonic(), 0)))
                continue
            break
        if req is not None and not req.id:
            # a pinned client keeps asking with the pin its first messages carry
            pins = (got[0].get("headers") or {}).get("Nats-Pin-Id")
            if pins:
                req = PullPriority(group=req.group, min_pending=req.min_pending,
                                   min_ack_pending=req.min_ack_pending, id=pins[0],
                                   priority=req.priority)
        for msg in got:
            if listing is not None:
                listing.add(msg)
            else:
                output.print_message(app, msg, _render_next, raw=raw, empty=b"")
            if answer is not None:
                getattr(js, answer)(stream, name, msg["seq"])
            if listing is None and (not raw or answer == "term"):
                _next_tail(app, answer)
            shown += 1
    if waited is not None and not shown:
        from jetlink.core.errors import JetlinkError

        why = _held_note(js, stream, name, req)
        raise JetlinkError(f"no message received within {wait} (--wait): "
                           + (why[2:] if why else f"nothing of consumer {stream} > {name} "
                              "was delivered"), field="wait")
    if listing is not None:
        listing.close()
    elif not shown:
        why = _held_note(js, stream, name, req)
        output.notice(app, "No messages delivered" + why if why else "No messages pending")


_GROUP_REFUSALS = ("Bad Request - Priority Group missing",
                   "Bad Request - Invalid Priority Group")


_OVER_MAX_BATCH = re.compile(r"Exceeded MaxRequestBatch of (\d+)")


def _fetch_explained(js: Any, stream: str, name: str, batch: int, req: Any,
                     cap: list[int]) -> list[Any]:
    """``js.fetch`` of at most ``cap[0]`` messages; a request over the consumer's max_batch
    (the server's 409 "Exceeded MaxRequestBatch of N") is asked again for N and ``cap``
    lowered to N, as natscli's next fetches --count in requests the consumer takes. A
    priority-group consumer's refusal of a request without its group (or with another)
    names the groups it takes and the option that gives one."""
    from jetlink.core.errors import ApiError

    try:
        try:
            return list(js.fetch(stream, name, batch=min(batch, cap[0]), priority=req))
        except ApiError as err:
            over = _OVER_MAX_BATCH.fullmatch(err.description)
            if over is None or not 0 < int(over[1]) < min(batch, cap[0]):
                raise
            cap[0] = int(over[1])
            return list(js.fetch(stream, name, batch=cap[0], priority=req))
    except ApiError as err:
        if err.description in _GROUP_REFUSALS and err.detail is None:
            groups = (to_doc(js.consumer_info(stream, name)).get("config") or {}).get(
                "priority_groups") or []
            if groups:
                err.detail = (f"consumer {stream} > {name} takes --group "
                              f"{' or '.join(groups)}")
        raise


def _held_note(js: Any, stream: str, name: str, req: Any) -> str:
    """Why a pull got nothing while messages wait, read from the ConsumerInfo:
    ``: consumer S > C is paused until ...`` (the server holds its pulls until the pause
    ends), its max_ack_pending reached, its priority group pinned to another client, an
    overflow request's minimums not met; "" when nothing is pending."""
    from jetlink.core.errors import JetlinkError

    try:
        info = to_doc(js.consumer_info(stream, name))
    except JetlinkError:
        return ""
    cfg = info.get("config") or {}
    who = f"consumer {stream} > {name}"
    if info.get("paused"):
        until = cfg.get("pause_until") or "it is resumed"
        return f": {who} is paused until {until} (jetlink consumer resume {stream} {name})"
    pending, outstanding = info.get("num_pending") or 0, info.get("num_ack_pending") or 0
    limit = cfg.get("max_ack_pending") or 0
    if pending and limit > 0 and outstanding >= limit:
        # (ack all: a live server takes an ack with the delivery's own consumer sequence,
        # which only the command that fetched it has: core/live/consumers.py)
        how = (f"acknowledge them: jetlink consumer ack {stream} {name} SEQ, or they are "
               "redelivered after the ack wait" if cfg.get("ack_policy") == "explicit" else
               "they are redelivered after the ack wait; consumer next without --no-ack "
               "acknowledges what it fetches")
        return (f": {who} has {outstanding} unacknowledged of its max_ack_pending {limit}, "
                f"{pending} more pending ({how})")
    group = getattr(req, "group", "") or ""
    pinned = {g.get("group"): g.get("pinned_client_id")
              for g in info.get("priority_groups") or [] if g.get("pinned_client_id")}
    if pending and pinned.get(group) and pinned[group] != getattr(req, "id", ""):
        return (f": group {group} of {who} is pinned to client {pinned[group]} "
                f"({pending} pending; --pin-id {pinned[group]} asks as that client, jetlink "
                f"consumer unpin {stream} {name} {group} releases it)")
    min_pending = getattr(req, "min_pending", 0) or 0
    if pending and min_pending > pending:
        return f": {pending} pending, fewer than --min-pending {min_pending}"
    min_acks = getattr(req, "min_ack_pending", 0) or 0
    if pending and min_acks > outstanding:
        return f": {outstanding} unacknowledged, fewer than --min-ack-pending {min_acks}"
    return ""


def _render_next(app: App, msg: dict[str, Any], data: bytes) -> None:
    """natscli's consumer next: ``[15:04:05] subj: S / tries: 1 / cons seq: 1 / str seq: 1 /
    pending: 4``, the headers, the data (then :func:`_next_tail`)."""
    from datetime import datetime

    when = datetime.fromtimestamp(now_ns() / 1e9).strftime("%H:%M:%S")
    output.line(
        app,
        f"[{when}] subj: {msg['subject']} / tries: {msg['num_delivered']} / cons seq: "
        f"{msg['consumer_seq']} / str seq: {msg['seq']} / pending: "
        f"{output.comma(msg['num_pending'])}",
    )
    if msg.get("headers"):
        output.line(app)
        output.line(app, "Headers:")
        output.line(app)
        output.print_headers(app, msg["headers"], indent="  ")
        output.line(app)
        output.line(app, "Data:")
        output.line(app)
    output.line(app)
    output.print_body(app, data, trailing_blank=False, empty=b"")  # (natscli: Println(""))


_ANSWERED = {"ack": "Acknowledged message", "nak": "Negative Acknowledged message",
             "term": "Terminated message"}


def _next_tail(app: App, answer: str | None) -> None:
    """After a message shown, what it was answered with (natscli's lines: ``Acknowledged
    message``, ``Negative Acknowledged message`` then a blank line; ``Terminated message``,
    with --raw too, and no blank line after it)."""
    if answer is not None:
        output.line(app)
        output.line(app, _ANSWERED[answer])
    if answer != "term":
        output.line(app)


@consumer_app.command("ack")
def ack_(
    ctx: typer.Context,
    stream: StreamArg,
    name: ConsumerArg,
    seq: Annotated[
        int,
        typer.Argument(
            metavar="SEQ", min=1, max=UINT64_MAX, help="Stream sequence of the message.",
            show_default=False
        ),
    ],
    json_output: JsonOption = False,
) -> None:
    """Acknowledge a delivered message.

    SEQ is the message's stream sequence (str seq in consumer next). With --json:
    {"success": true}.
    """
    from jetlink.core.errors import JetlinkError

    app = App.of(ctx)
    if not open_jetstream(app).ack(stream, name, seq):
        raise JetlinkError(f"message {seq} is not pending on consumer {stream} > {name} (never "
                           "delivered to it, acknowledged already, or ack policy none): nothing "
                           "acknowledged; "
                           f"jetlink consumer info {stream} {name} shows what is outstanding",
                           field="seq")
    output.success(app, f"Acknowledged message {seq}")


@consumer_app.command("rm")
def rm(
    ctx: typer.Context,
    stream: StreamArg,
    name: ConsumerArg,
    force: Annotated[bool, force_option("Remove")] = False,
    json_output: JsonOption = False,
) -> None:
    """Remove a consumer.

    Asks for confirmation on a terminal; without one, -f/--force is required (exit status
    2 otherwise). With --json: {"success": true}.
    """
    from jetlink.core.errors import ApiError

    app = App.of(ctx)
    js = open_jetstream(app)
    try:
        with _arguments_swapped(app, stream, name, "rm"):
            js.consumer_info(stream, name)  # (not there: said before any question, as natscli)
    except ApiError as err:
        if err.err_code != 10119:  # offline (its servers gone): the meta leader deletes it
            raise
    output.confirm(
        app,
        f"Really delete Consumer {stream} > {name}",
        force=force,
        action=f"delete consumer {stream} > {name}",
    )
    js.delete_consumer(stream, name)
    output.success(app, f"Consumer {stream} > {name} was deleted")


def parse_pause_until(text: str, now: int, what: str = "UNTIL") -> int:
    """natscli's pause time: ``2006-01-02 15:04:05`` (UTC) or a duration from now
    (``what``: the argument or option an error names)."""
    from datetime import UTC, datetime


    try:
        when = datetime.strptime(text.strip(), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
        return int(when.timestamp()) * 1_000_000_000
    except ValueError:
        pass
    from jetlink.core.durations import DurationError, read_duration
    from jetlink.core.errors import UsageError

    try:
        return now + read_duration(text)
    except DurationError as exc:
        if exc.reason.startswith("more than the maximum"):  # a duration, too long
            raise UsageError(f"invalid value for {what}: {exc.value!r}: {exc.reason}",
                             field="until") from None
        raise UsageError(
            f"invalid value for {what}: {text!r} (a time like 2006-01-02 15:04:05, UTC, or a "
            "duration like 1h30m)", field="until") from None


@consumer_app.command("unpin")
def unpin(
    ctx: typer.Context,
    stream: StreamArg,
    name: ConsumerArg,
    group: Annotated[
        str, typer.Argument(metavar="GROUP", help="The group to unpin.", show_default=False)
    ],
    force: Annotated[bool, force_option("Unpin")] = False,
    json_output: JsonOption = False,
) -> None:
    """Unpin the pinned client of a priority group.

    The next pull request of the group gets a new pin (ADR-42). As natscli, refused when no
    group has a pinned client. With --json: {"success": true}.
    """
    from jetlink.core.errors import JetlinkError

    app = App.of(ctx)
    js = open_jetstream(app)
    info = to_doc(js.consumer_info(stream, name))
    if (info.get("config") or {}).get("priority_policy") != "pinned_client":
        raise JetlinkError("consumer is not a pinned priority consumer")
    pins = {g.get("group"): g.get("pinned_client_id", "")
            for g in info.get("priority_groups") or []}
    if not any(pins.values()):  # natscli's unpin: nothing to unpin anywhere
        raise JetlinkError("no priority groups have pinned clients")
    output.confirm(app, f"Really unpin client from group {stream} > {name} > {group}",
                   force=force, action=f"unpin group {group} of consumer {stream} > {name}")
    js.unpin_consumer(stream, name, group)
    pin = pins.get(group) or ""
    output.success(app, f"Unpinned client {pin} from Priority Group {stream} > {name} > "
                   f"{group}".replace("client  from", "client from"))


def _render_pause(app: App, doc: dict[str, Any], stream: str, name: str) -> None:
    until = output.rfc3339_ns(doc.get("pause_until"))
    output.line(app, f"Paused {stream} > {name} until {output.local_ns(until)} "
                f"({_remaining(doc.get('pause_remaining', 0))})")


@consumer_app.command("pause")
def pause(
    ctx: typer.Context,
    stream: StreamArg,
    name: ConsumerArg,
    until: Annotated[
        str | None,
        typer.Argument(metavar="[UNTIL]", show_default=False,
                       help="Pause until a time (2006-01-02 15:04:05, UTC) or for a duration."),
    ] = None,
    force: Annotated[bool, force_option("Pause")] = False,
    json_output: JsonOption = False,
) -> None:
    """Pause a consumer until a later time.

    A paused consumer delivers nothing until then (nats-server 2.11, pause_until). With
    --json: the server's answer {"paused", "pause_until", "pause_remaining"}.
    """
    from jetlink.core.errors import JetlinkError

    app = App.of(ctx)
    now = now_ns()
    if until is None:
        if not output.is_interactive():
            raise usage("no terminal to ask on: give UNTIL (a time or a duration)")
        until = str(output.ask("Pause until (time or duration)", "1h"))
    ts = parse_pause_until(until, now)
    if ts <= now:
        # the server takes a time in the past as "not paused": sent, it would resume a
        # paused consumer under an error saying it failed to pause
        raise usage(f"invalid value for UNTIL: {until!r}: {output.local_ns(ts)} is not in "
                    "the future (a pause that ended already; jetlink consumer resume ends "
                    "one)")
    js = open_jetstream(app)
    output.confirm(app, f"Really pause Consumer {stream} > {name} until "
                   f"{output.local_ns(ts)}", force=force,
                   action=f"pause consumer {stream} > {name}")
    doc = js.pause_consumer(stream, name, ts)
    if not doc.get("paused"):
        raise JetlinkError("consumer failed to pause, perhaps a time in the past was given")
    app.emit(doc, human=lambda a, d: _render_pause(a, d, stream, name))


@consumer_app.command("resume")
def resume(
    ctx: typer.Context,
    stream: StreamArg,
    name: ConsumerArg,
    force: Annotated[bool, force_option("Resume")] = False,
    json_output: JsonOption = False,
) -> None:
    """Resume a paused consumer.

    With --json: the server's answer {"paused": false, "pause_until": ...}.
    """
    from jetlink.core.errors import JetlinkError

    app = App.of(ctx)
    js = open_jetstream(app)
    info = to_doc(js.consumer_info(stream, name))
    if not info.get("paused"):
        raise JetlinkError("consumer is not paused")
    output.confirm(app, f"Really resume Consumer {stream} > {name}", force=force,
                   action=f"resume consumer {stream} > {name}")
    doc = js.pause_consumer(stream, name, 0)
    was = output.rfc3339_ns(info.get("ts")) + int(info.get("pause_remaining", 0))
    app.emit(doc, human=lambda a, d: output.line(
        a, f"Consumer {stream} > {name} was resumed while previously paused until "
        f"{output.local_ns(was)}"))


@consumer_app.command("reset")
def reset(
    ctx: typer.Context,
    stream: StreamArg,
    name: ConsumerArg,
    sequence: Annotated[
        int | None,
        typer.Option("--sequence", metavar="SEQ", min=1, max=UINT64_MAX,  # a uint64
                     help="Stream sequence to reset to (default: just after the ack floor)."),
    ] = None,
    force: Annotated[bool, force_option("Reset")] = False,
    json_output: JsonOption = False,
) -> None:
    """Reset a consumer to a stream sequence.

    The consumer forgets what it delivered and starts again at --sequence (by default
    just after its acknowledgment floor), as CONSUMER.RESET (nats-server 2.14) does; a
    consumer that starts at a sequence or time can not go below it. With --json: the
    ConsumerInfo and "reset_seq".
    """
    app = App.of(ctx)
    js = open_jetstream(app)
    output.confirm(app, "Really reset the consumer", force=force,
                   action=f"reset consumer {stream} > {name}")
    from jetlink.core.errors import ApiError

    try:
        info, seq = js.reset_consumer(stream, name, sequence or 0)
    except ApiError as err:
        if err.err_code == 10204 and err.detail is None:  # below start seq: which start
            cfg = to_doc(js.consumer_info(stream, name)).get("config") or {}
            start = (f"stream sequence {cfg['opt_start_seq']}" if cfg.get("opt_start_seq")
                     else f"time {cfg['opt_start_time']}" if cfg.get("opt_start_time")
                     else None)
            if start is not None:
                err.detail = (f"--sequence {sequence}: consumer {stream} > {name} starts at "
                              f"{start}")
        raise
    doc = {**to_doc(info), "reset_seq": seq}
    app.emit(doc, human=lambda a, d: render_info(a, d, state_only=True))


# -- a clustered consumer's RAFT group (natscli's consumer cluster) ----------------------------

consumer_cluster_app = typer.Typer(
    name="cluster",
    help="Manage a clustered consumer (its RAFT group).\n\nnatscli's consumer cluster "
    "step-down and balance, on a live JetStream cluster; the embedded engine and a single "
    "server have no group to manage.",
    no_args_is_help=True,
)
consumer_app.add_typer(consumer_cluster_app, name="cluster")


@consumer_cluster_app.command("step-down")
def cluster_step_down(
    ctx: typer.Context,
    stream: StreamArg,
    name: ConsumerArg,
    preferred: PreferredOpt = None,
    force: StepDownForceOpt = False,
    json_output: JsonOption = False,
) -> None:
    """Force a new leader election for a consumer.

    natscli's consumer cluster step-down: the consumer's leader stands down, a new one is
    looked for every half second (up to 2.5 s; none: exit 1), then the consumer is shown.
    Refused for a consumer that is not clustered. With --json: the ConsumerInfo once the new
    leader is known.
    """
    from jetlink.cli.stream import await_new_leader, clustered_leader

    app = App.of(ctx)
    js = open_jetstream(app)
    what = f'consumer "{stream}" > "{name}"'
    doc = to_doc(js.consumer_info(stream, name))
    cluster = doc.get("cluster") or None
    leader = clustered_leader(cluster if cluster and cluster.get("name") else None, what,
                              force, group_of_replicas=False)
    output.notice(app, f'Requesting leader step down of "{leader}" in a '
                       f"{len((cluster or {}).get('replicas') or []) + 1} peer RAFT group")
    js.consumer_leader_step_down(stream, name, preferred)
    doc = await_new_leader(app, lambda: to_doc(js.consumer_info(stream, name)), leader, what,
                           5, preferred)
    app.emit(doc, human=lambda a, d: render_info(a, d))


@consumer_cluster_app.command("balance")
def cluster_balance(
    ctx: typer.Context,
    stream: StreamArg,
    pull: PullQ = False,
    push: PushQ = False,
    bound: BoundQ = False,
    waiting: WaitingQ = 0,
    ack_pending: AckPendingQ = 0,
    pending: PendingQ = 0,
    idle: IdleQ = None,
    created: CreatedQ = None,
    replicas: ReplicasQ = 0,
    leader: LeaderQ = None,
    pinned: PinnedQ = False,
    invert: InvertQ = False,
    json_output: JsonOption = False,
) -> None:
    """Balance a stream's consumer leaders.

    natscli's consumer cluster balance (jsm.go's balancer): of the stream's consumers the
    criteria find (consumer find's), each server leading more than its even share of its
    cluster's steps some down, picked at random, each for a server of the consumer's group
    below its share (a preferred placement, nats-server 2.11+). Each request is said on
    stderr, then "Balanced N consumers." With --json: {"balanced": N, "consumers":
    [names]}. A consumer not clustered (every one on the embedded engine) has no other
    server to move to.
    """
    from jetlink.core.balance import balance, group_of
    from jetlink.core.queries import query_consumers

    app = App.of(ctx)
    q = consumer_query(locals())
    js = open_jetstream(app)
    found = query_consumers([to_doc(i) for i in js.consumers(stream)], q, now_ns=now_ns())
    # (an info without cluster information names no RAFT group: not clustered)
    moved = balance([group_of(i["name"], i) for i in found if i.get("cluster")],
                    read=lambda n: group_of(n, to_doc(js.consumer_info(stream, n))),
                    step_down=lambda n, preferred: js.consumer_leader_step_down(
                        stream, n, preferred),
                    log=lambda m: output.notice(app, m), what="consumer")
    app.emit({"balanced": len(moved), "consumers": moved},
             human=lambda a, d: output.line(a, f"Balanced {d['balanced']} consumers."))


def register(app: typer.Typer) -> None:
    app.add_typer(consumer_app, name="consumer")
