"""natscli's stream flags (``nats stream add|edit|copy``) parsed into a StreamConfig.

Parsing only: every function here turns command-line text into values or a
:class:`~jetlink.core.config.stream.StreamConfig`; validation of the result is the engine's
(``jetlink.core.config.validate``, run by ``JetStream.add_stream`` / ``update_stream``).

- :func:`stream_flags` is a decorator adding the flags to a Typer command (``add``, ``edit``
  and ``copy`` share them, as natscli's ``addCreateFlags``) and handing the command one
  :class:`StreamFlags` value, every field ``None`` when its flag was not given;
- :func:`apply_flags` applies the given flags to a config (natscli's ``copyAndEditStream``:
  an unset flag leaves the value alone);
- :data:`ADD_DEFAULTS` are the values natscli's ``stream add --defaults`` takes for what it
  would otherwise ask; :func:`missing_answers` lists the flags it would ask for.

Sizes accept natscli's forms (``ParseStringAsBytes``): a number of bytes, or a number with a
1024-based unit ``K KB KiB M MB MiB G GB GiB T TB TiB`` (case-insensitive); any negative
value (``-1``) means unlimited. Durations are Go's (``90s``, ``2m30s``, ``1h``) plus ``d`` and
``w``; ``-1`` means unlimited for --max-age.

Mirrors and sources (``stream add`` only, as natscli: its edit and copy refuse them, use
--config): ``--mirror ORIGIN`` and ``--source ORIGIN`` (repeatable) take a stream name, a
name with the cluster it lives in (``ORIGIN@CLUSTER``: ``external.api = "$JS.<CLUSTER>.API"``,
the JetStream domain of a real deployment) or, as natscli, a StreamSource JSON object
(``{"name":"O","filter_subject":"o.>"}``): filters, subject transforms, start sequence or
time are given that way (natscli asks for them interactively; jetlink has no extra flags for
them). ``--mirror-domain CLUSTER`` names the mirror's cluster (natscli's "Foreign JetStream
domain name"). A stream with a mirror or sources is not asked for subjects; a mirror is not
asked for (and gets no) duplicate window, as natscli.
"""

import dataclasses
import functools
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from jetlink.cli.common import usage
from jetlink.cli.options import DURATION, SIZE, SIZE32, UNLIMITED_DURATION
from jetlink.core.numbers import INT64_MAX, INT64_MIN, UINT64_MAX

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.core.config.stream import StreamConfig, StreamSource


RETENTION_NAMES = {
    "limits": "limits",
    "interest": "interest",
    "workq": "workqueue",
    "work": "workqueue",
    "workqueue": "workqueue",
    "work queue": "workqueue",
}
STORAGE_NAMES = {"file": "file", "f": "file", "memory": "memory", "m": "memory"}
DISCARD_NAMES = {"old": "old", "new": "new"}
COMPRESSION_NAMES = {"none": "none", "s2": "s2"}
PERSIST_NAMES = {"default": "", "async": "async"}

# -- values -----------------------------------------------------------------------------------


def parse_size(text: str, *, flag: str, bits: int = 64) -> int:
    """natscli's ``ParseStringAsBytes``: ``-1`` (any negative) is unlimited (-1), ``512``,
    ``512MB``, ``1GiB``, ``2t`` (1024-based); a usage error naming ``flag`` otherwise."""
    from jetlink.core.errors import clip
    from jetlink.core.numbers import parse_byte_size

    try:
        return parse_byte_size(str(text), bits)
    except ValueError as exc:
        raise usage(f"invalid value for {flag}: {clip(str(text))!r}: {exc}") from None


def parse_duration_flag(text: str, *, flag: str, unlimited: bool = False,
                        wait: bool = False) -> int:
    """A human duration (``90s``, ``2m30s``, ``1h``, ``1d``) in nanoseconds, read by
    core.durations ``read_duration`` (natscli's rule: a bare number other than 0 is refused,
    "missing unit"). With ``unlimited``, ``-1`` (natscli's "unlimited") and ``0`` give 0. With
    ``wait``: a pause or timeout the command sleeps through, at most core.durations.MAX_WAIT.
    The options declare the same reading as their type (cli/options.py DurationType), so a
    bad value is refused before the command runs; this reads the text they pass on, and the
    answers typed at a prompt."""
    from jetlink.core.durations import DurationError, read_duration

    try:
        return read_duration(text, unlimited=unlimited, wait=wait)
    except DurationError as exc:
        raise usage(f"invalid value for {flag}: {exc.value!r}: {exc.reason}") from None


def split_subjects(values: list[str]) -> list[str]:
    """natscli's ``SplitCLISubjects``: each value may hold several subjects separated by
    commas or white space."""
    out: list[str] = []
    for value in values:
        out += [s for s in re.split(r"[,\s]+", value) if s]
    return out


def parse_metadata(values: list[str]) -> dict[str, str]:
    """``--metadata k=v`` or ``k:v`` (repeatable) as a dict: split at the first ``:`` or
    ``=``, as fisk's map flags natscli declares it with (``owner:team=a`` is key ``owner``,
    value ``team=a``)."""
    meta: dict[str, str] = {}
    for item in values:
        parts = re.split(r"[:=]", item, maxsplit=1)
        if len(parts) != 2 or not parts[0]:
            raise usage(f"invalid value for --metadata: {item!r}: expected KEY=VALUE or "
                        "KEY:VALUE")
        meta[parts[0]] = parts[1]
    return meta


def choose(value: str, names: dict[str, str], *, flag: str) -> str:
    key = value.strip().lower()
    if key not in names:
        raise usage(
            f"invalid value for {flag}: {value!r} (one of {', '.join(dict.fromkeys(names))})"
        )
    return names[key]


def parse_origin(text: str, *, flag: str, domain: str | None = None) -> "StreamSource":
    """A StreamSource from ``--mirror`` / ``--source``: ``NAME``, ``NAME@CLUSTER`` (split at
    the last ``@``; the origin lives in cluster CLUSTER: ``external.api =
    "$JS.<CLUSTER>.API"``) or a StreamSource JSON object (natscli's form: a value starting
    with ``{``; unknown fields are refused). ``domain``
    (``--mirror-domain``) names the cluster when the value does not."""
    from jetlink.core.config.stream import ExternalStream, StreamSource
    from jetlink.core.errors import JetlinkError

    value = str(text).strip()
    # (natscli reads a JSON object only when the value also ends with "}"; a value that
    # opens one and breaks off is a JSON mistake to name, not a stream called '{"name":...')
    if value.startswith("{"):
        from jetlink.core.config.codec import loads

        try:
            doc = loads(value)  # (one nested too deeply: its ValueError)
        except ValueError as exc:
            raise usage(f"invalid value for {flag}: not a JSON object: {exc}") from None
        if not isinstance(doc, dict):
            raise usage(f"invalid value for {flag}: not a JSON object")
        try:
            src = StreamSource.from_json(doc)
        except JetlinkError as exc:
            raise usage(f"invalid value for {flag}: {exc.description}") from None
        if not src.name:
            raise usage(f"invalid value for {flag}: name is required")
    else:
        name, at, cluster = value.rpartition("@")
        if not at:
            name, cluster = value, ""
        if not name or (at and not cluster):
            raise usage(
                f"invalid value for {flag}: {text!r}: expected STREAM, STREAM@CLUSTER or a "
                "JSON object"
            )
        src = StreamSource(name=name)
        if cluster:
            src.external = ExternalStream(api=cluster_api(cluster, flag=flag))
    if domain is not None:
        if src.external is not None:
            raise usage(f"--mirror-domain conflicts with the external API given by {flag}")
        src.external = ExternalStream(api=cluster_api(domain, flag="--mirror-domain"))
    return src


def cluster_api(cluster: str, *, flag: str) -> str:
    """``$JS.<cluster>.API``: the external API prefix naming a cluster of the data directory."""
    from jetlink.core.errors import JetlinkError
    from jetlink.core.store.datadir import validate_cluster_name

    try:
        validate_cluster_name(cluster)
    except JetlinkError as exc:
        raise usage(f"invalid value for {flag}: {exc.description}") from None
    return f"$JS.{cluster}.API"


# -- the flags --------------------------------------------------------------------------------


@dataclass
class StreamFlags:
    """The stream flags as given on the command line (None: not given)."""

    subjects: list[str] | None = None
    description: str | None = None
    storage: str | None = None
    compression: str | None = None
    replicas: int | None = None
    tag: list[str] | None = None
    cluster_placement: str | None = None
    ack: bool | None = None
    retention: str | None = None
    discard: str | None = None
    discard_per_subject: bool | None = None
    first_sequence: int | None = None
    max_age: str | None = None
    max_bytes: str | None = None
    max_consumers: int | None = None
    max_msg_size: str | None = None
    max_msgs: int | None = None
    max_msgs_per_subject: int | None = None
    dupe_window: str | None = None
    mirror: str | None = None
    mirror_domain: str | None = None
    source: list[str] | None = None
    allow_rollup: bool | None = None
    deny_delete: bool | None = None
    deny_purge: bool | None = None
    allow_direct: bool | None = None
    allow_mirror_direct: bool | None = None
    allow_msg_ttl: bool | None = None
    allow_counter: bool | None = None
    allow_batch: bool | None = None
    allow_fast: bool | None = None
    allow_schedules: bool | None = None
    subject_del_markers_ttl: str | None = None
    transform_source: str | None = None
    transform_destination: str | None = None
    no_transform: bool | None = None
    metadata: list[str] | None = None
    republish_source: str | None = None
    republish_destination: str | None = None
    republish_headers: bool | None = None
    no_republish: bool | None = None
    limit_consumer_inactive: str | None = None
    limit_consumer_max_pending: int | None = None
    persist_mode: str | None = None


ADD, EDIT, COPY = "add", "edit", "copy"
_ALL = (ADD, EDIT, COPY)
_CREATE = (ADD, COPY)  # natscli's addCreateFlags(edit=false)


def _opt(*decls: str, help: str, metavar: str | None = None, **kw: Any) -> Any:
    return typer.Option(*decls, help=help, metavar=metavar, show_default=False, **kw)


def _flag(name: str, help: str) -> Any:
    return typer.Option(f"--{name}/--no-{name}", help=help, show_default=False)


# (field, annotation, commands): natscli's flags with its help texts.
_SPECS: list[tuple[str, Any, tuple[str, ...]]] = [
    (
        "subjects",
        Annotated[
            list[str] | None,
            _opt(
                "--subjects",
                metavar="SUBJECTS",
                help="Subjects that are consumed by the stream "
                "(repeatable; commas or spaces separate several).",
            ),
        ],
        _ALL,
    ),
    (
        "description",
        Annotated[
            str | None,
            _opt(
                "--description",
                metavar="TEXT",
                help="Sets a contextual description for the stream.",
            ),
        ],
        _ALL,
    ),
    (
        "storage",
        Annotated[
            Literal["file", "f", "memory", "m"] | None,
            _opt(
                "--storage",
                metavar="TYPE",
                help="Storage backend to use (file, memory).",
                case_sensitive=False,
            ),
        ],
        _CREATE,
    ),
    (
        "compression",
        Annotated[
            Literal["none", "s2"] | None,
            _opt(
                "--compression",
                metavar="ALG",
                help="Compression algorithm to use (none, s2).",
                case_sensitive=False,
            ),
        ],
        _ALL,
    ),
    (
        "replicas",
        Annotated[
            int | None,
            _opt(
                "--replicas",
                min=INT64_MIN, max=INT64_MAX,  # natscli's int flags: 64 bits
                metavar="N",
                help="When clustered, how many replicas of the data to create.",
            ),
        ],
        _ALL,
    ),
    (
        "tag",
        Annotated[
            list[str] | None,
            _opt(
                "--tag",
                metavar="TAG",
                help="Place the stream on servers that have specific tags (repeatable).",
            ),
        ],
        _ALL,
    ),
    (
        "cluster_placement",
        Annotated[
            str | None,
            _opt(
                "--cluster-placement",
                metavar="NAME",
                help="Place the stream on a specific cluster "
                "(natscli's --cluster; --cluster is jetlink's global option).",
            ),
        ],
        _ALL,
    ),
    ("ack", Annotated[bool | None, _flag("ack", "Acknowledge publishes (default: on).")], _ALL),
    (
        "retention",
        Annotated[
            Literal["limits", "interest", "workq", "work", "workqueue"] | None,
            _opt(
                "--retention",
                metavar="POLICY",
                help="Defines a retention policy (limits, interest, work).",
                case_sensitive=False,
            ),
        ],
        _ALL,
    ),
    (
        "discard",
        Annotated[
            Literal["new", "old"] | None,
            _opt(
                "--discard",
                metavar="POLICY",
                help="Defines the discard policy (new, old).",
                case_sensitive=False,
            ),
        ],
        _ALL,
    ),
    (
        "discard_per_subject",
        Annotated[
            bool | None,
            _flag(
                "discard-per-subject",
                "The 'new' discard policy applied per subject: a subject at its "
                "--max-msgs-per-subject limit refuses new messages (needs --discard new and "
                "--max-msgs-per-subject above 0).",
            ),
        ],
        _ALL,
    ),
    (
        "first_sequence",
        Annotated[
            int | None,
            _opt("--first-sequence", metavar="SEQ", min=0, max=UINT64_MAX,
                 help="Sets the starting sequence."),
        ],
        _CREATE,
    ),
    (
        "max_age",
        Annotated[
            str | None,
            _opt(
                "--max-age",
                metavar="DURATION", parser=UNLIMITED_DURATION,
                help="Maximum age of messages to keep (1h, 90s, 2m30s, 7d; -1 unlimited).",
            ),
        ],
        _ALL,
    ),
    (
        "max_bytes",
        Annotated[
            str | None,
            _opt(
                "--max-bytes",
                metavar="BYTES", parser=SIZE,
                help="Maximum bytes to keep (512MB, 1GB; -1 unlimited).",
            ),
        ],
        _ALL,
    ),
    (
        "max_consumers",
        Annotated[
            int | None,
            _opt(
                "--max-consumers",
                min=INT64_MIN, max=INT64_MAX,  # natscli's int flags: 64 bits
                metavar="N",
                help="Maximum number of consumers to allow (-1 unlimited).",
            ),
        ],
        _ALL,
    ),
    (
        "max_msg_size",
        Annotated[
            str | None,
            _opt(
                "--max-msg-size",
                metavar="BYTES", parser=SIZE32,
                help="Maximum size any 1 message may be (1MB; -1 unlimited).",
            ),
        ],
        _ALL,
    ),
    (
        "max_msgs",
        Annotated[
            int | None,
            _opt(
                "--max-msgs", metavar="N", min=INT64_MIN, max=INT64_MAX,
                help="Maximum amount of messages to keep (-1 unlimited)."
            ),
        ],
        _ALL,
    ),
    (
        "max_msgs_per_subject",
        Annotated[
            int | None,
            _opt(
                "--max-msgs-per-subject",
                min=INT64_MIN, max=INT64_MAX,  # natscli's int flags: 64 bits
                metavar="N",
                help="Maximum amount of messages to keep per subject (-1 unlimited).",
            ),
        ],
        _ALL,
    ),
    (
        "dupe_window",
        Annotated[
            str | None,
            _opt(
                "--dupe-window",
                metavar="DURATION", parser=DURATION,
                help="Duration of the duplicate message tracking window.",
            ),
        ],
        _ALL,
    ),
    (
        "mirror",
        Annotated[
            str | None,
            _opt(
                "--mirror",
                metavar="ORIGIN",
                help="Completely mirror another stream: STREAM, STREAM@CLUSTER (a stream of "
                "another cluster) or a StreamSource JSON object.",
            ),
        ],
        (ADD,),
    ),
    (
        "mirror_domain",
        Annotated[
            str | None,
            _opt(
                "--mirror-domain",
                metavar="CLUSTER",
                help="Cluster the mirrored stream lives in (external API $JS.CLUSTER.API).",
            ),
        ],
        (ADD,),
    ),
    (
        "source",
        Annotated[
            list[str] | None,
            _opt(
                "--source",
                metavar="ORIGIN",
                help="Source data from other streams, merging into this one: STREAM, "
                "STREAM@CLUSTER or a StreamSource JSON object (repeatable).",
            ),
        ],
        (ADD,),
    ),
    (
        "allow_rollup",
        Annotated[
            bool | None,
            _flag(
                "allow-rollup",
                "Allows roll-ups to be done by publishing messages with special headers.",
            ),
        ],
        _ALL,
    ),
    (
        "deny_delete",
        Annotated[
            bool | None, _flag("deny-delete", "Deny messages from being deleted via the API.")
        ],
        _ALL,
    ),
    (
        "deny_purge",
        Annotated[
            bool | None, _flag("deny-purge", "Deny entire stream or subject purges via the API.")
        ],
        _ALL,
    ),
    (
        "allow_direct",
        Annotated[
            bool | None,
            _flag(
                "allow-direct",
                "Allows fast, direct, access to stream data via the direct get API (default: on).",
            ),
        ],
        _ALL,
    ),
    (
        "allow_mirror_direct",
        Annotated[
            bool | None,
            _flag(
                "allow-mirror-direct",
                "Allows fast, direct, access to stream data via the direct get API on mirrors.",
            ),
        ],
        _ALL,
    ),
    (
        "allow_msg_ttl",
        Annotated[
            bool | None,
            _opt(
                "--allow-msg-ttl",
                help="Allows per-message TTL handling (Nats-TTL header); cannot be turned off.",
            ),
        ],
        _ALL,
    ),
    (
        "allow_counter",
        Annotated[
            bool | None,
            _opt(
                "--allow-counter",
                help="Allows the stream to be used as a counter (Nats-Incr); cannot be changed "
                "after creation.",
            ),
        ],
        _ALL,
    ),
    (
        "allow_batch",
        Annotated[
            bool | None,
            _flag("allow-batch", "Allows atomic batch publishing (Nats-Batch-Id)."),
        ],
        _ALL,
    ),
    (
        "allow_fast",
        Annotated[
            bool | None,
            _flag("allow-fast", "Allows fast batch publishing (flow-controlled batches)."),
        ],
        _ALL,
    ),
    (
        "allow_schedules",
        Annotated[
            bool | None,
            _opt(
                "--allow-schedules",
                help="Allows message schedules (Nats-Schedule); cannot be turned off.",
            ),
        ],
        _ALL,
    ),
    (
        "subject_del_markers_ttl",
        Annotated[
            str | None,
            _opt(
                "--subject-del-markers-ttl",
                metavar="DURATION", parser=DURATION,
                help="How long delete markers should persist in the stream.",
            ),
        ],
        _ALL,
    ),
    (
        "transform_source",
        Annotated[
            str | None,
            _opt("--transform-source", metavar="SOURCE", help="Stream subject transform source."),
        ],
        _ALL,
    ),
    (
        "transform_destination",
        Annotated[
            str | None,
            _opt(
                "--transform-destination",
                metavar="DEST",
                help="Stream subject transform destination.",
            ),
        ],
        _ALL,
    ),
    (
        "no_transform",
        Annotated[
            bool | None,
            _opt("--no-transform", help="Removes current subject transform configuration."),
        ],
        (EDIT,),
    ),
    (
        "metadata",
        Annotated[
            list[str] | None,
            _opt(
                "--metadata",
                metavar="KEY=VALUE",
                help="Adds metadata to the stream (repeatable; replaces the metadata).",
            ),
        ],
        _ALL,
    ),
    (
        "republish_source",
        Annotated[
            str | None,
            _opt(
                "--republish-source",
                metavar="SOURCE",
                help="Republish messages to --republish-destination.",
            ),
        ],
        _ALL,
    ),
    (
        "republish_destination",
        Annotated[
            str | None,
            _opt(
                "--republish-destination",
                metavar="DEST",
                help="Republish destination for messages in --republish-source.",
            ),
        ],
        _ALL,
    ),
    (
        "republish_headers",
        Annotated[
            bool | None,
            _opt("--republish-headers", help="Republish only message headers, no bodies."),
        ],
        _ALL,
    ),
    (
        "no_republish",
        Annotated[
            bool | None, _opt("--no-republish", help="Removes current republish configuration.")
        ],
        (EDIT,),
    ),
    (
        "limit_consumer_inactive",
        Annotated[
            str | None,
            _opt(
                "--limit-consumer-inactive",
                metavar="DURATION", parser=DURATION,
                help="The maximum consumer inactive threshold the stream allows.",
            ),
        ],
        _CREATE,
    ),
    (
        "limit_consumer_max_pending",
        Annotated[
            int | None,
            _opt(
                "--limit-consumer-max-pending",
                min=INT64_MIN, max=INT64_MAX,  # natscli's int flags: 64 bits
                metavar="N",
                help="The maximum consumer ack pending the stream allows.",
            ),
        ],
        _CREATE,
    ),
    (
        "persist_mode",
        Annotated[
            Literal["default", "async"] | None,
            _opt(
                "--persist-mode",
                metavar="MODE",
                help="Configures the persistence mode (default, async).",
                case_sensitive=False,
            ),
        ],
        _CREATE,
    ),
]


def stream_flags(command: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add the stream flags of ``command`` (add, edit or copy) to a Typer command function.

    The function takes a keyword parameter ``flags: StreamFlags``; the flags are inserted in
    its signature before ``json_output`` (so --json stays last in --help).
    """

    specs = [(name, ann) for name, ann, commands in _SPECS if command in commands]

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(func, eval_str=True)
        own = [p for p in sig.parameters.values() if p.name != "flags"]
        extra = [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=ann)
            for name, ann in specs
        ]
        tail = [p for p in own if p.name == "json_output"]
        head = [p for p in own if p.name != "json_output"]
        params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in head] + extra
        params += [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in tail]

        @functools.wraps(func)
        def wrapper(**kwargs: Any) -> Any:
            values = {name: kwargs.pop(name) for name, _ in specs}
            return func(flags=StreamFlags(**values), **kwargs)

        del wrapper.__wrapped__  # Typer must see the new signature, not the original one
        wrapper.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in params}
        return wrapper

    return decorate


# -- applying the flags -----------------------------------------------------------------------


def apply_flags(cfg: "StreamConfig", flags: StreamFlags) -> "StreamConfig":
    """A new config: ``cfg`` with every given flag applied (natscli's copyAndEditStream,
    except that any given value applies, 0 included)."""
    new = cfg.copy()
    _apply_storage(new, flags)
    _apply_limits(new, flags)
    _apply_origins(new, flags)
    _apply_permissions(new, flags)
    _apply_rewrites(new, flags)
    _apply_consumer_limits(new, flags)
    return new


def given_subjects(values: list[str]) -> list[str]:
    """The subjects of a given ``--subjects`` (:func:`split_subjects`); usage error when it
    holds none (``''``, ``' '``, ``','``: an unset shell variable), which would take every
    subject off a stream, or give a promoted one its own name."""
    subjects = split_subjects(values)
    if not subjects:
        raise usage(f"invalid value for --subjects: {', '.join(map(repr, values))} "
                    "holds no subject (subjects are separated by commas or spaces)")
    return subjects


def _apply_storage(new: "StreamConfig", f: StreamFlags) -> None:
    """What is stored and how: subjects, description, storage, compression, replicas,
    placement, acknowledgements, retention, discard and the first sequence."""
    from jetlink.core.config.stream import Placement

    if f.subjects is not None and f.subjects:
        new.subjects = given_subjects(f.subjects)
    if f.description is not None:
        new.description = f.description
    if f.storage is not None:
        new.storage = choose(f.storage, STORAGE_NAMES, flag="--storage")
    if f.compression is not None:
        new.compression = choose(f.compression, COMPRESSION_NAMES, flag="--compression")
    if f.replicas is not None:
        new.num_replicas = f.replicas
    if f.tag is not None or f.cluster_placement is not None:
        placement = new.placement.copy() if new.placement else Placement()
        if f.cluster_placement is not None:
            placement.cluster = f.cluster_placement
        if f.tag is not None:
            placement.tags = [t for t in f.tag if t]
        new.placement = placement if (placement.cluster or placement.tags) else None
    if f.ack is not None:
        new.no_ack = not f.ack
    if f.retention is not None:
        new.retention = choose(f.retention, RETENTION_NAMES, flag="--retention")
    if f.discard is not None:
        new.discard = choose(f.discard, DISCARD_NAMES, flag="--discard")
    if f.discard_per_subject is not None:
        new.discard_new_per_subject = f.discard_per_subject
    if f.first_sequence is not None:
        new.first_seq = f.first_sequence


def _apply_limits(new: "StreamConfig", f: StreamFlags) -> None:
    """The limits: age, bytes, consumers, message size, messages (per subject too), the
    duplicate window."""
    if f.max_age is not None:
        new.max_age = parse_duration_flag(f.max_age, flag="--max-age", unlimited=True)
    if f.max_bytes is not None:
        new.max_bytes = parse_size(f.max_bytes, flag="--max-bytes")
    if f.max_consumers is not None:
        new.max_consumers = f.max_consumers
    if f.max_msg_size is not None:
        new.max_msg_size = parse_size(f.max_msg_size, flag="--max-msg-size", bits=32)
    if f.max_msgs is not None:
        new.max_msgs = f.max_msgs if f.max_msgs > 0 else (0 if f.max_msgs == 0 else -1)
    if f.max_msgs_per_subject is not None:
        n = f.max_msgs_per_subject
        new.max_msgs_per_subject = n if n > 0 else (0 if n == 0 else -1)
    if f.dupe_window is not None:
        new.duplicate_window = parse_duration_flag(f.dupe_window, flag="--dupe-window")


def _apply_origins(new: "StreamConfig", f: StreamFlags) -> None:
    """The mirror (and its domain) and the sources added."""
    if f.mirror is not None:
        new.mirror = parse_origin(f.mirror, flag="--mirror", domain=f.mirror_domain)
    elif f.mirror_domain is not None:
        raise usage("--mirror-domain goes with --mirror")
    if f.source:
        new.sources = [*new.sources, *(parse_origin(v, flag="--source") for v in f.source)]


def _apply_permissions(new: "StreamConfig", f: StreamFlags) -> None:
    """What the stream allows: rollups, deletes, purges, direct gets, TTLs, counters,
    batches, schedules, and the subject delete markers' TTL."""
    if f.allow_rollup is not None:
        new.allow_rollup_hdrs = f.allow_rollup
    if f.deny_delete is not None:
        new.deny_delete = f.deny_delete
    if f.deny_purge is not None:
        new.deny_purge = f.deny_purge
    if f.allow_direct is not None:
        new.allow_direct = f.allow_direct
    if f.allow_mirror_direct is not None:
        new.mirror_direct = f.allow_mirror_direct
    if f.allow_msg_ttl:
        new.allow_msg_ttl = True
    if f.allow_counter:
        new.allow_msg_counter = True
    if f.allow_batch is not None:
        new.allow_atomic = f.allow_batch
    if f.allow_fast is not None:
        new.allow_batched = f.allow_fast
    if f.allow_schedules:
        new.allow_msg_schedules = True
    if f.subject_del_markers_ttl is not None:
        new.subject_delete_marker_ttl = parse_duration_flag(
            f.subject_del_markers_ttl, flag="--subject-del-markers-ttl"
        )


def _apply_rewrites(new: "StreamConfig", f: StreamFlags) -> None:
    """How messages are rewritten: the subject transform, the metadata, RePublish."""
    from jetlink.core.config.stream import RePublish, SubjectTransformConfig

    if f.no_transform:
        new.subject_transform = None
    elif f.transform_source is not None or f.transform_destination is not None:
        if not (f.transform_source and f.transform_destination):
            raise usage("--transform-source and --transform-destination go together")
        new.subject_transform = SubjectTransformConfig(
            src=f.transform_source, dest=f.transform_destination
        )
    if f.metadata is not None:
        from jetlink.core.config.codec import with_user_metadata

        new.metadata = with_user_metadata(new.metadata, parse_metadata(f.metadata))
    if f.no_republish:
        new.republish = None
    elif f.republish_source is not None or f.republish_destination is not None:
        if not (f.republish_source and f.republish_destination):
            raise usage("--republish-source and --republish-destination go together")
        new.republish = RePublish(
            src=f.republish_source,
            dest=f.republish_destination,
            headers_only=bool(f.republish_headers),
        )
    elif f.republish_headers:
        if new.republish is None:  # natscli refuses it too: nothing would be republished
            raise usage("--republish-headers: the stream republishes nothing: give "
                        "--republish-source and --republish-destination with it")
        new.republish = RePublish(src=new.republish.src, dest=new.republish.dest, headers_only=True)


def _apply_consumer_limits(new: "StreamConfig", f: StreamFlags) -> None:
    """The consumer limits and the persist mode."""
    if f.limit_consumer_inactive is not None:
        new.consumer_limits.inactive_threshold = parse_duration_flag(
            f.limit_consumer_inactive, flag="--limit-consumer-inactive"
        )
    if f.limit_consumer_max_pending is not None:
        new.consumer_limits.max_ack_pending = f.limit_consumer_max_pending
    if f.persist_mode is not None:
        new.persist_mode = choose(f.persist_mode, PERSIST_NAMES, flag="--persist-mode")


# -- stream add: what natscli asks, and its --defaults ------------------------------------------

# natscli's add command: flag defaults that apply without --defaults too.
ADD_FLAG_DEFAULTS = {"ack": True, "allow_direct": True, "max_consumers": -1}

# What natscli asks for when a flag is missing, in its order, with the default it offers
# (and takes with --defaults). dupe_window's default depends on max_age (see add_defaults).
ASKED: tuple[tuple[str, str, Any], ...] = (
    ("storage", "Storage (file, memory)", "file"),
    ("replicas", "Replication", 1),
    ("retention", "Retention Policy (limits, interest, work)", "limits"),
    ("discard", "Discard Policy (new, old)", "old"),
    ("max_msgs", "Stream Messages Limit", -1),
    ("max_msgs_per_subject", "Per Subject Messages Limit", -1),
    ("max_bytes", "Total Stream Size", "-1"),
    ("max_age", "Message TTL", "-1"),
    ("max_msg_size", "Max Message Size", "-1"),
    ("dupe_window", "Duplicate tracking time window", "2m"),
    ("allow_rollup", "Allow message Roll-ups", False),
    ("deny_delete", "Allow message deletion", True),  # asked as "allow": inverted
    ("deny_purge", "Allow purging subjects or the entire stream", True),  # idem
)
_INVERTED = {"deny_delete", "deny_purge"}


def _asked(flags: StreamFlags) -> list[tuple[str, str, Any]]:
    """The questions natscli asks for this stream: no duplicate window for a mirror."""
    return [q for q in ASKED if not (q[0] == "dupe_window" and flags.mirror is not None)]


def _needs_subjects(flags: StreamFlags) -> bool:
    """natscli asks for subjects unless given, or the stream has a mirror or sources."""
    return not (flags.subjects or flags.mirror is not None or flags.source)


def missing_answers(flags: StreamFlags) -> list[str]:
    """The ``--flags`` natscli would ask for (the subjects first) when they are not given."""
    missing = ["--subjects"] if _needs_subjects(flags) else []
    missing += [
        "--" + name.replace("_", "-")
        for name, _, _ in _asked(flags)
        if getattr(flags, name) is None
    ]
    return missing


def dupe_window_default(flags: StreamFlags) -> str:
    """2m, or the max age when it is shorter (natscli)."""
    if flags.max_age is not None:
        age = parse_duration_flag(flags.max_age, flag="--max-age", unlimited=True)
        if 0 < age < 120_000_000_000:
            from jetlink.core.durations import format_duration

            return format_duration(age)
    return "2m"


def add_defaults(flags: StreamFlags) -> StreamFlags:
    """``flags`` with natscli's ``--defaults`` values for every flag it would ask for."""
    values = dataclasses.asdict(flags)
    for name, _, default in _asked(flags):
        if values[name] is None:
            values[name] = (
                dupe_window_default(flags)
                if name == "dupe_window"
                else (False if name in _INVERTED else default)
            )
    return with_flag_defaults(StreamFlags(**values))


def with_flag_defaults(flags: StreamFlags) -> StreamFlags:
    values = dataclasses.asdict(flags)
    for name, default in ADD_FLAG_DEFAULTS.items():
        if values[name] is None:
            values[name] = default
    return StreamFlags(**values)


def ask_missing(flags: StreamFlags, ask: Callable[[str, Any, str], Any]) -> StreamFlags:
    """Fill the missing flags by asking: ``ask(question, default, kind)`` with kind
    ``text``, ``int`` or ``bool`` returns the answer (natscli's questions and defaults)."""
    values = dataclasses.asdict(flags)
    if _needs_subjects(flags):
        answer = ""
        while not split_subjects([answer]):
            answer = ask("Subjects", None, "text")
        values["subjects"] = split_subjects([answer])
    for name, question, default in _asked(flags):
        if values[name] is not None:
            continue
        if name == "dupe_window":
            default = dupe_window_default(StreamFlags(**values))
        kind = (
            "bool" if isinstance(default, bool) else "int" if isinstance(default, int) else "text"
        )
        answer = ask(question, default, kind)
        if name in _INVERTED:
            answer = not answer
        if name in ("max_msgs", "max_msgs_per_subject") and answer <= 0:
            answer = -1
        values[name] = answer
    filled = StreamFlags(**values)
    apply_flags(_probe_config(), filled)  # raise now on an unparsable answer
    return with_flag_defaults(filled)


def _probe_config() -> "StreamConfig":
    from jetlink.core.config.stream import StreamConfig

    return StreamConfig(name="probe")


# The config fields natscli's add --defaults fills, by flag (ADD_FLAG_DEFAULTS and ASKED).
_DEFAULTED_FIELDS = {
    "storage": "storage", "replicas": "num_replicas", "retention": "retention",
    "discard": "discard", "max_msgs": "max_msgs", "max_msgs_per_subject": "max_msgs_per_subject",
    "max_bytes": "max_bytes", "max_age": "max_age", "max_msg_size": "max_msg_size",
    "dupe_window": "duplicate_window", "allow_rollup": "allow_rollup_hdrs",
    "deny_delete": "deny_delete", "deny_purge": "deny_purge", "ack": "no_ack",
    "allow_direct": "allow_direct", "max_consumers": "max_consumers",
}


def with_add_defaults(cfg: "StreamConfig", given: set[str]) -> "StreamConfig":
    """``cfg`` (a JSON config giving the fields ``given``) with the value `stream add
    --defaults` takes (:func:`add_defaults`) for every field natscli would ask for that the
    config does not give: the stream ``jetlink stream add NAME --source ... --defaults``
    (or ``--mirror``) creates. The ``jetlink spark`` jobs create their new targets so."""
    from jetlink.core.durations import format_duration

    probe = StreamFlags(mirror=cfg.mirror.name if cfg.mirror is not None else None,
                        max_age=format_duration(cfg.max_age)
                        if "max_age" in given and cfg.max_age > 0 else None)
    values = dataclasses.asdict(add_defaults(probe))
    values["mirror"] = None
    for flag, name in _DEFAULTED_FIELDS.items():
        if name in given:
            values[flag] = None
    return apply_flags(cfg, StreamFlags(**values))
