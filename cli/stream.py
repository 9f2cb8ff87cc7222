"""``jetlink stream ...``: JetStream stream management, with natscli's verbs and flags.

``add``, ``edit``, ``copy`` take natscli's stream flags (cli/stream_flags.py) or
``--config FILE`` (a StreamConfig, or the StreamInfo ``stream info --json`` prints); ``info``,
``ls``, ``report``, ``subjects``, ``get`` and ``view`` read; ``rm``, ``purge``, ``rmm``,
``seal``, ``promote``, ``failover`` and ``failback`` change data and ask for confirmation on a
terminal (``-f/--force`` skips it; without a terminal and without --force they refuse with exit
status 2).

``promote`` and ``failover`` turn a mirror into a normal stream (jetlink.core.promote):
``promote`` refuses while the origin is reachable and the mirror lags behind it (exit status
1, nothing changed); ``failover`` does it whatever the lag or the state of the origin.
``-f/--force`` only skips the confirmation: the way to promote a lagging mirror is
``failover``.

``export`` and ``import`` move a stream to and from a Parquet dataset (``parquet:PATH``) in
the lake message schema, sequences and times kept (jetlink.core.lake; no Spark involved).

The engine is ``jetlink.core.jetstream.JetStream`` (opened by cli/common.py
``open_jetstream``); with --json every command prints the NATS API's document (StreamInfo,
StoredMsg, a list of names...). Human output follows natscli's layout.
"""

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from jetlink.cli import common, completion, output
from jetlink.cli.app import App
from jetlink.cli.common import (
    now_ns,
    open_jetstream,
    read_json_file,
    usage,
    user_metadata,
)
from jetlink.cli.options import (
    DURATION,
    ForceOption,
    JsonOption,
    NoSelectOption,
    PreferredOpt,
    StepDownForceOpt,
    StreamArg,
    TranslateOption,
    config_option,
    force_option,
    output_config_option,
    validate_config_option,
)
from jetlink.cli.output import to_doc
from jetlink.cli.stream_flags import (
    ADD,
    COPY,
    EDIT,
    StreamFlags,
    add_defaults,
    apply_flags,
    ask_missing,
    given_subjects,
    missing_answers,
    stream_flags,
)
from jetlink.core.numbers import INT64_MAX, INT64_MIN, UINT64_MAX

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.core.config.stream import StreamConfig
    from jetlink.core.queries import StreamQuery

# A stream sequence is a uint64 (the server's, core/numbers.py UINT64_MAX): a number past it
# is a usage error (exit 2), never sent (nats-server would answer with its JSON decoder's text).

stream_app = typer.Typer(
    name="stream",
    help="Manage JetStream streams (natscli's verbs).\n\nStreams store the messages "
    "published on their subjects, within limits (messages, bytes, age, per subject) and a "
    "retention policy. The verbs and flags are natscli's (nats stream ...).",
    no_args_is_help=True,
)

ConfigOption = Annotated[
    Path | None,
    config_option(
        "JSON file to read the configuration from (a StreamConfig, or the StreamInfo "
        "of stream info --json); flags given too override it."
    ),
]


# -- shared helpers ---------------------------------------------------------------------------


def load_config_file(path: Path) -> "StreamConfig":
    """A StreamConfig from a JSON file holding a StreamConfig or a StreamInfo."""
    from jetlink.core.config.stream import StreamConfig
    from jetlink.core.errors import JetlinkError

    doc = read_json_file(path)
    if not isinstance(doc, dict):  # (as consumer add --config says it)
        raise JetlinkError(f"{path}: expected a JSON object (a StreamConfig or StreamInfo)")
    return StreamConfig.from_any(doc)


def config_of(info: Any) -> "StreamConfig":
    """The StreamConfig held by an engine StreamInfo (a copy)."""
    from jetlink.core.config.stream import StreamConfig

    cfg = getattr(info, "config", None)
    if isinstance(cfg, StreamConfig):
        return cfg.copy()
    return StreamConfig.from_json(to_doc(info)["config"], strict=False)


def public_config(doc: dict[str, Any]) -> dict[str, Any]:
    """A config document without the metadata keys the server manages (``_nats.*``)."""
    doc = dict(doc)
    meta = user_metadata(doc.get("metadata"))
    if meta:
        doc["metadata"] = meta
    else:
        doc.pop("metadata", None)
    return doc


def config_diff(name: str, old: dict[str, Any], new: dict[str, Any]) -> str:
    """A unified diff of two config documents (natscli's edit shows the differences);
    empty when they differ only in the order of their subjects (as natscli)."""

    def canonical(doc: dict[str, Any]) -> dict[str, Any]:
        doc = dict(doc)
        if isinstance(doc.get("subjects"), list):
            doc["subjects"] = sorted(doc["subjects"])
        return doc

    if canonical(old) == canonical(new):
        return ""
    import difflib

    a = output.to_json(old).splitlines()
    b = output.to_json(new).splitlines()
    return "\n".join(
        difflib.unified_diff(
            a, b, fromfile=f"{name} (current)", tofile=f"{name} (new)", lineterm=""
        )
    )


# -- add / edit / copy --------------------------------------------------------------------------


@stream_app.command("add")
@stream_flags(ADD)
def add(
    ctx: typer.Context,
    name: Annotated[
        str | None,
        typer.Argument(
            metavar="[STREAM]",
            help="Stream name (may come from --config).",
            show_default=False,
        ),
    ] = None,
    config: ConfigOption = None,
    defaults: Annotated[
        bool,
        typer.Option(
            "--defaults",
            help="Accept natscli's default values for everything not given (all but --subjects).",
        ),
    ] = False,
    validate_only: Annotated[bool, validate_config_option("for a new stream")] = False,
    out_file: Annotated[Path | None, output_config_option("stream")] = None,
    json_output: JsonOption = False,
    *,
    flags: StreamFlags,
) -> None:
    """Create a new stream.

    Takes natscli's flags or --config FILE. On a terminal it asks for what is not given,
    like natscli; without a terminal it never asks: give the flags (the error names the
    missing ones) or --defaults with --subjects.

    Mirrors and sources: --mirror ORIGIN and --source ORIGIN (repeatable) take a stream
    name, STREAM@CLUSTER for a stream of another cluster (or --mirror-domain CLUSTER), or
    natscli's StreamSource JSON object for filters, transforms and start positions, e.g.
    --source '{"name":"ORDERS","filter_subject":"orders.eu.>"}'. No subjects are asked for
    then (nor a duplicate window for a mirror). Every command that writes runs one
    replication step when it ends, so the new stream fills at once (after the info printed,
    which shows it as created: stream info shows what it copied); jetlink replicate copies a
    backlog.

    Sizes: 512MB, 1GB, -1 (unlimited), 1024-based. Durations: 90s, 2m30s, 1h, 7d.

    --validate and --output FILE (natscli's) check the configuration with the server's rules
    for a new stream, without the data directory or a server: --validate prints it and says
    it is valid; --output writes it as JSON (read back by --config) and creates nothing.
    """
    from jetlink.core.config.stream import StreamConfig

    app = App.of(ctx)
    checking = common.validate_or_output(validate_only, out_file)
    if config is not None:
        cfg = load_config_file(config)
        if name:
            cfg.name = name
        if not cfg.name:
            raise usage("no stream name: give STREAM or a config with a name")
        cfg = apply_flags(cfg, flags)
    else:
        name = output.name_or_ask(name, "Stream Name", argument="STREAM", what="the stream name")
        if defaults:
            flags = add_defaults(flags)  # everything natscli asks for but the subjects
        missing = missing_answers(flags)
        if missing and not output.is_interactive():
            raise usage(no_terminal_message(missing, defaults))
        flags = ask_missing(flags, output.ask) if missing else add_defaults(flags)
        cfg = apply_flags(StreamConfig(name=name), flags)
    if checking:
        _checked_config(app, cfg, out_file)
        return
    info = open_jetstream(app).add_stream(cfg)
    app.emit(to_doc(info), human=lambda a, doc: _created(a, doc, "created"))
    warn_missing_origins(app, info.config)


# natscli's line after a valid --validate (api.StreamConfig's SchemaType)
STREAM_SCHEMA = "io.nats.jetstream.api.v1.stream_configuration"


def _checked_config(app: App, cfg: Any, out_file: Path | None) -> None:
    """``stream add --validate`` / ``--output FILE``: ``cfg`` checked with the server's rules
    for a new stream (core/config/validate.py ``stream_config_problems``: every refusal, one
    error line each, exit 1), then printed with natscli's verdict, or written to
    ``out_file`` (JSON, the form --config reads). Nothing is opened: no data directory, no
    server."""
    from jetlink.core.config.validate import stream_config_problems

    type(cfg).from_json(cfg.to_json())  # (the decoding's checks: text that is not UTF-8)
    _checked, errors = stream_config_problems(cfg)
    if errors:  # every one, the server's first first (as jetlink validate lists them)
        if app.json:
            app.fail(errors[0])
        for err in errors:
            output.notice(app, output.format_error(err))
        raise typer.Exit(errors[0].exit_code)
    common.checked_config_out(app, cfg.to_json(), out_file,
                              f"Configuration is a valid Stream matching {STREAM_SCHEMA}")


def warn_missing_origins(app: App, cfg: Any, describe: Any = None) -> None:
    """One line on stderr per mirror / source origin that is not there, and one for a cycle
    through other clusters (the same rules and words as ``jetlink validate`` and ``apply``:
    core/config/validate.py; ``describe``: how an origin is named, a KV aggregate's)."""
    if cfg.mirror is None and not cfg.sources:
        return
    from jetlink.core.config.validate import cycle_warning, empty_src_warnings, origin_warnings

    for text in empty_src_warnings(cfg):
        output.notice(app, f"jetlink: warning: {text}")
    kv = common.open_kv(app)
    for text in origin_warnings(cfg, kv.cluster, kv.clusters, describe=describe):
        output.notice(app, f"jetlink: warning: {text}")
    cycle = cycle_warning(cfg, kv.cluster, kv.clusters)
    if cycle:
        output.notice(app, f"jetlink: warning: {cycle}")


def no_terminal_message(missing: list[str], defaults: bool) -> str:
    if defaults or missing == ["--subjects"]:
        return "no terminal to ask on: give --subjects"
    return (
        "no terminal to ask on: give "
        + ", ".join(missing)
        + " (or --defaults to take natscli's defaults for all but --subjects), "
        "or --config FILE"
    )


def _created(app: App, doc: dict[str, Any], verb: str) -> None:
    output.line(app, f"Stream {doc['config']['name']} was {verb}")
    output.line(app)
    render_info(app, doc)


@stream_app.command("edit")
@stream_flags(EDIT)
def edit(
    ctx: typer.Context,
    name: StreamArg,
    config: ConfigOption = None,
    force: Annotated[bool, force_option("Edit")] = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Only show the differences; do not edit the stream."),
    ] = False,
    json_output: JsonOption = False,
    *,
    flags: StreamFlags,
) -> None:
    """Edit an existing stream.

    Applies the given flags (or --config FILE) to the stream's configuration and shows the
    differences as a unified diff of the JSON configs; on a terminal it then asks for
    confirmation unless -f/--force. Without a terminal an edit that removes stored
    messages (tighter limits; interest retention with no consumer, which keeps none, as
    the server) is refused unless -f/--force (exit status 2, nothing changed), as every
    destructive verb. --dry-run only shows the differences and what of the stored messages
    the edit would remove (exit status 1 when there are differences, 0 when none, as
    natscli's; with --json: {"name", "changed", "diff",
    "config", "removes"}, the config without the server's _nats.* metadata, removes null
    when it removes nothing).
    """
    app = App.of(ctx)
    js = open_jetstream(app)
    old = config_of(js.stream_info(name))
    if config is not None:
        new = load_config_file(config)
        if not new.name:
            new.name = name
        elif new.name != name:  # natscli's STREAM.UPDATE.<NAME>: the server's answer
            from jetlink.core.errors import nats_error

            err = nats_error("StreamMismatch", field="name")
            err.detail = f"--config names stream {new.name}, the command {name}"
            raise err
        new = apply_flags(new, flags)
    else:
        new = apply_flags(old, flags)
    type(new).from_json(new.to_json())  # (the decoding's checks: text that is not UTF-8)
    diff = config_diff(name, public_config(old.to_json()), public_config(new.to_json()))
    from jetlink.core.removal import removed_by

    if dry_run:
        # the config the edit asks for: the server-managed metadata (_nats.*) left out, as
        # the diff leaves it, the same document whichever backend holds the stream; and
        # what the edit would remove of the stored messages (what makes it ask, or need -f)
        doc = {"name": name, "changed": bool(diff), "diff": diff,
               "config": public_config(new.to_json()),
               "removes": (removed_by(js, name, old, new, now_ns()) or None) if diff else None}
        app.emit(doc, human=_render_dry_run)
        if diff:  # natscli's edit --dry-run: exit 1 when it would change something
            raise typer.Exit(1)
        return
    if not diff:
        info = js.stream_info(name)
        app.emit(to_doc(info), human=lambda a, d: output.line(a, "No difference in configuration"))
        return
    if not app.json:
        output.line(app, "Differences (-old +new):")
        output.line(app, diff)
        output.line(app)
    if not force and output.is_interactive():
        output.confirm(app, f"Really edit Stream {name}", force=False, action=f"edit stream {name}")
    elif not force:
        # without a terminal an edit is applied as given, unless it removes stored messages
        # (a tighter limit, interest retention with no consumer): that, as every
        # destructive verb, needs -f/--force
        removes = removed_by(js, name, old, new, now_ns())
        if removes:
            output.confirm(app, "", force=False,
                           action=f"edit stream {name} (it removes stored messages: {removes})")
    info = js.update_stream(new)
    app.emit(to_doc(info), human=lambda a, doc: _created(a, doc, "updated"))


def _render_dry_run(app: App, doc: dict[str, Any]) -> None:
    if not doc["changed"]:
        output.line(app, "No difference in configuration")
        return
    output.line(app, "Differences (-old +new):")
    output.line(app, doc["diff"])
    if doc.get("removes"):
        output.line(app, f"It removes stored messages: {doc['removes']} (the edit asks first "
                         "on a terminal, and needs -f/--force without one)")


@stream_app.command("copy")
@stream_flags(COPY)
def copy(
    ctx: typer.Context,
    source: Annotated[
        str, typer.Argument(metavar="SOURCE", help="Stream to copy.", show_default=False)
    ],
    destination: Annotated[
        str, typer.Argument(metavar="DEST", help="New stream to create.", show_default=False)
    ],
    json_output: JsonOption = False,
    *,
    flags: StreamFlags,
) -> None:
    """Create a stream from another's configuration.

    Copies the configuration only (no messages) under the new name; flags given override
    the copied values (--subjects usually must, as two streams cannot share subjects). A
    promoted stream's copy is a stream of its own: without the promotion record and the
    mirror_direct the server kept from the mirror it was.
    """
    from jetlink.core.dr.fencing import without_promotion

    app = App.of(ctx)
    if source == destination:
        raise usage("source and destination stream names cannot be the same")
    js = open_jetstream(app)
    cfg = apply_flags(without_promotion(config_of(js.stream_info(source))), flags)
    cfg.name = destination
    cfg.metadata = user_metadata(cfg.metadata)
    info = js.add_stream(cfg)
    app.emit(to_doc(info), human=lambda a, doc: _created(a, doc, "created"))
    warn_missing_origins(app, info.config)


# -- info / ls / report ---------------------------------------------------------------------


@stream_app.command("info")
def info(
    ctx: typer.Context,
    name: StreamArg,
    state: Annotated[bool, typer.Option("--state", help="Show only the stream state.")] = False,
    no_select: NoSelectOption = False,
    json_output: JsonOption = False,
) -> None:
    """Show a stream's configuration and state.

    natscli's sections (Configuration, Options, Limits, Replication, Mirror or Source
    Information with each origin's lag, last contact and error, State). With --json: the
    StreamInfo (config, created, state, cluster, mirror, sources, ts).
    """
    app = App.of(ctx)
    doc = to_doc(open_jetstream(app).stream_info(name))
    app.emit(doc, human=lambda a, d: render_info(a, d, state_only=state))


@stream_app.command("state")
def state_(ctx: typer.Context, name: StreamArg, no_select: NoSelectOption = False,
           json_output: JsonOption = False) -> None:
    """Show only a stream's state.

    As stream info --state (natscli's stream state): "State for Stream NAME", its cluster,
    mirror or sources and state sections. With --json: the StreamInfo, as stream info
    --json.
    """
    info(ctx, name, state=True, json_output=json_output)


_STORAGE = {"file": "File", "memory": "Memory"}
_RETENTION = {"limits": "Limits", "interest": "Interest", "workqueue": "WorkQueue"}
_DISCARD = {"old": "Old", "new": "New"}
# jsm.go's Compression.String() and PersistModeType.String(), as natscli prints them
_COMPRESSION = {"none": "None", "s2": "S2 Compression"}
_PERSIST_MODE = {"default": "Default", "async": "Async"}


def go_time_string(text: str) -> str:
    """An RFC 3339 time as Go's ``%v`` of a time.Time prints it (natscli's "Start Time"):
    ``2026-01-01 00:00:00 +0000 UTC``, the fraction without trailing zeros, an offset
    other than Z as ``+0200 +0200`` (the unnamed zone JSON decoding gives it)."""
    import re

    m = re.fullmatch(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})",
                     text)
    if m is None:
        return text
    frac = (m.group(3) or "").rstrip("0")
    frac = "" if frac == "." else frac
    zone = m.group(4)
    off = "+0000 UTC" if zone == "Z" else f"{zone.replace(':', '')} {zone.replace(':', '')}"
    return f"{m.group(1)} {m.group(2)}{frac} {off}"


def _dur(ns: int) -> str:
    return output.since(ns)


def _transform(src: str | None, dest: str) -> str:
    return f"{src or '>'} to {dest}"


def _source_line(src: dict[str, Any] | None) -> str:
    if not src:
        return ""
    parts = [src.get("name", "")]
    if src.get("opt_start_seq"):
        parts.append(f"Start Seq: {output.comma(src['opt_start_seq'])}")
    if src.get("opt_start_time"):
        parts.append(f"Start Time: {go_time_string(src['opt_start_time'])}")
    ext = src.get("external") or {}
    if ext.get("api"):
        parts.append(f"API Prefix: {ext['api']}")
    if ext.get("deliver"):
        parts.append(f"Delivery Prefix: {ext['deliver']}")
    return ", ".join(parts)


def config_columns(cols: output.Columns, cfg: dict[str, Any]) -> None:
    """natscli's showStreamConfig."""
    cols.title("Configuration")
    cols.row("Description", cfg.get("description", ""), bool(cfg.get("description")))
    cols.row("Subjects", ", ".join(cfg.get("subjects") or []), bool(cfg.get("subjects")))
    cols.row("Replicas", cfg.get("num_replicas", 0))
    cols.row("Sealed", True, bool(cfg.get("sealed")))
    cols.row("Storage", _STORAGE.get(cfg.get("storage", "file"), str(cfg.get("storage"))))
    compression = cfg.get("compression", "none")
    cols.row(
        "Compression", _COMPRESSION.get(compression, compression), compression not in ("none", "")
    )
    cols.row("Persistence Mode", _PERSIST_MODE.get(mode := cfg.get("persist_mode") or "default",
                                                   mode), mode != "default")
    cols.row("First Sequence", cfg.get("first_seq", 0), bool(cfg.get("first_seq")))
    placement = cfg.get("placement") or {}
    cols.row("Placement Cluster", placement.get("cluster", ""), bool(placement.get("cluster")))
    cols.row("Placement Tags", ", ".join(placement.get("tags") or []), bool(placement.get("tags")))

    cols.title("Options")
    transform = cfg.get("subject_transform") or {}
    if transform.get("dest"):
        cols.row("Subject Transform", _transform(transform.get("src"), transform["dest"]))
    republish = cfg.get("republish")
    if republish:
        label = "Republishing Headers" if republish.get("headers_only") else "Republishing"
        cols.row(label, f"{republish.get('src', '')} to {republish.get('dest', '')}")
    cols.row("Retention", _RETENTION.get(cfg.get("retention", "limits"), str(cfg.get("retention"))))
    cols.row("Acknowledgments", not cfg.get("no_ack", False))
    discard = _DISCARD.get(cfg.get("discard", "old"), str(cfg.get("discard")))
    if cfg.get("discard_new_per_subject"):
        discard = "New Per Subject"
    cols.row("Discard Policy", discard)
    cols.row("Duplicate Window", _dur(cfg.get("duplicate_window", 0)))
    cols.row("Direct Get", True, bool(cfg.get("allow_direct")))
    cols.row("Mirror Direct Get", True, bool(cfg.get("mirror_direct")))
    cols.row("Allows Atomic Batch Publish", bool(cfg.get("allow_atomic")))
    cols.row("Allows Fast Batch Publish", bool(cfg.get("allow_batched")))
    cols.row("Allows Counters", bool(cfg.get("allow_msg_counter")))
    cols.row("Allows Msg Delete", not cfg.get("deny_delete", False))
    cols.row("Allows Per-Message TTL", bool(cfg.get("allow_msg_ttl")))
    cols.row("Allows Purge", not cfg.get("deny_purge", False))
    cols.row("Allows Schedules", bool(cfg.get("allow_msg_schedules")))
    marker_ttl = cfg.get("subject_delete_marker_ttl", 0)
    cols.row(
        "Subject Delete Markers TTL",
        _dur(marker_ttl),
        bool(cfg.get("allow_msg_ttl")) and marker_ttl > 0,
    )
    cols.row("Allows Rollups", bool(cfg.get("allow_rollup_hdrs")))

    cols.title("Limits")
    max_msgs = cfg.get("max_msgs", 0)
    cols.row("Maximum Messages", "unlimited" if max_msgs == -1 else output.comma(max_msgs))
    per = cfg.get("max_msgs_per_subject", 0)
    cols.row("Maximum Per Subject", "unlimited" if per <= 0 else output.comma(per))
    max_bytes = cfg.get("max_bytes", 0)
    cols.row("Maximum Bytes", "unlimited" if max_bytes == -1 else output.ibytes(max_bytes))
    max_age = cfg.get("max_age", 0)
    cols.row("Maximum Age", "unlimited" if max_age <= 0 else _dur(max_age))
    size = cfg.get("max_msg_size", 0)
    cols.row("Maximum Message Size", "unlimited" if size == -1 else output.ibytes(size))
    consumers = cfg.get("max_consumers", 0)
    cols.row("Maximum Consumers", "unlimited" if consumers == -1 else output.comma(consumers))
    limits = cfg.get("consumer_limits") or {}
    cols.row(
        "Consumer Inactive Threshold",
        _dur(limits.get("inactive_threshold", 0)),
        limits.get("inactive_threshold", 0) > 0,
    )
    cols.row(
        "Consumer Max Ack Pending",
        limits.get("max_ack_pending", 0),
        limits.get("max_ack_pending", 0) > 0,
    )

    cols.metadata(cfg.get("metadata"))

    if cfg.get("mirror") or cfg.get("sources"):
        cols.title("Replication")
    cols.row("Mirror", _source_line(cfg.get("mirror")), bool(cfg.get("mirror")))
    for i, src in enumerate(sorted(cfg.get("sources") or [], key=lambda s: s.get("name", ""))):
        cols.row("Sources" if i == 0 else "", _source_line(src))


def _source_info_columns(cols: output.Columns, s: dict[str, Any]) -> None:
    cols.row("Stream Name", s.get("name", ""))
    transforms = s.get("subject_transforms") or []
    if s.get("filter_subject"):
        cols.row("Subject Filter", s["filter_subject"])
    elif transforms:
        for i, t in enumerate(transforms):
            label = ""
            if i == 0:
                label = (
                    "Subject Filters and Transforms"
                    if len(transforms) > 1
                    else "Subject Filter and Transform"
                )
            dest = t.get("dest", "")
            cols.row(
                label,
                f"{t.get('src', '')} untransformed"
                if not dest
                else f"{t.get('src', '')} to {dest}",
            )
    cols.row("Lag", s.get("lag", 0))
    active = s.get("active", -1)
    cols.row(
        "Last Seen", _dur(active) if isinstance(active, int) and 0 < active < 2**63 - 1 else "never"
    )
    ext = s.get("external") or {}
    if ext:
        cols.row("Ext. API Prefix", ext.get("api", ""))
        cols.row("Ext. Delivery Prefix", ext.get("deliver", ""), bool(ext.get("deliver")))
    err = s.get("error")
    if err:
        cols.row("Error", err.get("description", str(err)) if isinstance(err, dict) else str(err))


def _seq_at(seq: int, ts: str | None) -> str:
    ns = output.rfc3339_ns(ts)
    return output.comma(seq) if not ns else f"{output.comma(seq)} @ {output.local_ns(ns)}"


def render_info(app: App, doc: dict[str, Any], *, state_only: bool = False) -> None:
    """natscli's showStreamInfo: heading, configuration sections, replication, state."""
    cfg = doc.get("config") or {}
    cols = output.info_columns(f"Stream {cfg.get('name', '')}", doc, state_only=state_only)
    if not state_only:
        config_columns(cols, cfg)
    cluster = doc.get("cluster") or {}
    if cluster.get("name"):
        cols.title("Cluster Information")
        cols.row("Name", cluster["name"])
        cols.row("Cluster Group", cluster.get("raft_group", ""),
                 bool(cluster.get("raft_group")))
        leader, since = cluster.get("leader", ""), output.rfc3339_ns(cluster.get("leader_since"))
        if since:
            leader += f" ({output.since(max(common.now_of(doc) - since, 0))})"
        cols.row("Leader", leader)  # (empty while it has none: said, as natscli does)
        for peer in cluster.get("replicas") or []:  # a live cluster's other peers (natscli)
            cols.row("Replica", output.replica_row(peer))
    if doc.get("mirror"):
        cols.title("Mirror Information")
        _source_info_columns(cols, doc["mirror"])
    if doc.get("sources"):
        cols.title("Source Information")
        for src in doc["sources"]:
            _source_info_columns(cols, src)
            cols.blank()
    state = doc.get("state") or {}
    cols.title("State")
    output.server_meta_rows(cols, (doc.get("config") or {}).get("metadata"))
    cols.row("Messages", output.comma(state.get("messages", 0)))
    cols.row("Bytes", output.ibytes(state.get("bytes", 0)))
    lost = state.get("lost") or {}
    if lost.get("msgs"):
        cols.row(
            "Lost Messages",
            f"{output.comma(len(lost['msgs']))} ({output.ibytes(lost.get('bytes', 0))})",
        )
    cols.row("First Sequence", _seq_at(state.get("first_seq", 0), state.get("first_ts")))
    cols.row("Last Sequence", _seq_at(state.get("last_seq", 0), state.get("last_ts")))
    deleted = len(state.get("deleted") or []) or state.get("num_deleted", 0)
    cols.row("Deleted Messages", output.comma(deleted), deleted > 0)
    cols.row("Active Consumers", output.comma(state.get("consumer_count", 0)))
    cols.row(
        "Number of Subjects",
        output.comma(state.get("num_subjects", 0)),
        state.get("num_subjects", 0) > 0,
    )
    _alternates(cols, doc.get("alternates") or [])
    cols.render(app)


def _alternates(cols: output.Columns, alternates: list[dict[str, Any]]) -> None:
    """natscli's Alternates rows (a stream and its mirrors the server may answer direct
    gets from): ``NAME: Cluster: CLUSTER`` right-aligned by the longest name and cluster,
    `` Domain: D`` when there is one; the label on the first row only."""
    width_n = max((len(str(a.get("name", ""))) for a in alternates), default=0)
    width_c = max((len(str(a.get("cluster", ""))) for a in alternates), default=0)
    for i, a in enumerate(alternates):
        name, cluster = str(a.get("name", "")), str(a.get("cluster", ""))
        text = f"{name:>{width_n}}: Cluster: {cluster:>{width_c}}"
        if a.get("domain"):
            text += f" Domain: {a['domain']}"
        cols.row("Alternates" if i == 0 else "", text)


@stream_app.command("ls")
def ls(
    ctx: typer.Context,
    subject: Annotated[
        str | None,
        typer.Option(
            "--subject", metavar="SUBJECT", help="Limit the list to streams with matching subjects."
        ),
    ] = None,
    names: Annotated[
        bool, typer.Option("--names", "-n", help="Show just the stream names.")
    ] = False,
    show_all: Annotated[bool, typer.Option(
        "--all", "-a", help="Include system streams: the KV_, OBJ_ and $MQTT_ streams "
        "behind KV buckets, object stores and MQTT state.")] = False,
    json_output: JsonOption = False,
) -> None:
    """List the streams.

    Table of Name, Description, Created, Messages, Size, Last Message (smallest first, as
    natscli), without the system streams behind KV buckets, object stores and MQTT state
    unless -a/--all (kv ls lists the buckets). With --json: the list of those names
    (natscli's stream ls --json); --names: every name, one per line.
    """
    from jetlink.core.config.stream import is_system_stream

    app = App.of(ctx)
    js = open_jetstream(app)
    if names:  # (natscli's names listing leaves nothing out)
        stream_names = sorted(js.stream_names(subject) if subject else js.stream_names())
        app.emit(stream_names, human=output.lines)
        return
    if app.json:
        listed = sorted(js.stream_names(subject) if subject else js.stream_names())
        app.emit([n for n in listed if show_all or not is_system_stream(n)])
        return
    listing = js.streams()
    infos = [to_doc(i) for i in listing]
    if subject:
        wanted = set(js.stream_names(subject))
        infos = [i for i in infos if i["config"]["name"] in wanted]
    shown = [i for i in infos if show_all or not is_system_stream(i["config"]["name"])]
    # the streams the server did not reach: listed apart whether or not the page also
    # gave them a row (nats-server 2.15 gives none), as natscli's renderMissing
    gone = [n for n in listing.missing if (show_all or not is_system_stream(n))
            and (not subject or n in wanted)]
    render_ls(app, shown, subject, skipped=len(shown) < len(infos), missing=gone)


# jsm.go's stream query criteria: stream find selects with them, stream cluster balance too
ServerNameQ = Annotated[str | None, typer.Option(
    "--server-name", metavar="REGEX", show_default=False,
    help="Streams with a leader or replica on a server the expression matches.")]
ClusterQ = Annotated[str | None, typer.Option(
    "--cluster", metavar="REGEX", show_default=False,
    help="Streams in a cluster the expression matches.")]
EmptyQ = Annotated[bool, typer.Option("--empty", help="Streams with no messages.")]
IdleQ = Annotated[str | None, typer.Option(
    "--idle", metavar="DURATION", parser=DURATION, show_default=False,
    help="Streams with no new message for longer than this.")]
CreatedQ = Annotated[str | None, typer.Option(
    "--created", metavar="DURATION", parser=DURATION, show_default=False,
    help="Streams created at least this long ago.")]
ConsumersQ = Annotated[int, typer.Option(
    "--consumers", metavar="THRESHOLD", min=INT64_MIN, max=INT64_MAX,
    help="Streams with at most this many consumers (below 0: any number).")]
SubjectQ = Annotated[str | None, typer.Option(
    "--subject", metavar="SUBJECT", show_default=False,
    help="Streams with a subject within this subject or wildcard.")]
ReplicasQ = Annotated[int, typer.Option(
    "--replicas", metavar="REPLICAS", min=0, max=UINT64_MAX,
    help="Streams with at most this many replicas (0: any number).")]
SourcedQ = Annotated[bool, typer.Option("--sourced", help="Streams with sources.")]
MirroredQ = Annotated[bool, typer.Option("--mirrored", help="Mirror streams.")]
LeaderQ = Annotated[str | None, typer.Option(
    "--leader", metavar="SERVER", show_default=False,
    help="Streams whose leader is this server.")]
InvertQ = Annotated[bool, typer.Option(
    "--invert", help="Invert every check: at least becomes at most, with becomes without.")]


def stream_query(given: dict[str, Any]) -> "StreamQuery":
    """The query of a command's criteria options (``given``: its parameters by name, the
    aliases above; a duration of 0 leaves its criterion out, as natscli's > 0 test)."""
    from jetlink.core.durations import read_duration
    from jetlink.core.queries import StreamQuery, pattern

    created, idle, cluster = given["created"], given["idle"], given["cluster"]
    return StreamQuery(
        created_ns=(read_duration(created) or None) if created is not None else None,
        idle_ns=(read_duration(idle) or None) if idle is not None else None,
        empty=given["empty"],
        consumers=given["consumers"] if given["consumers"] >= 0 else None,
        cluster=pattern(cluster, field="--cluster") if cluster is not None else None,
        subject=given["subject"] or None,
        server=pattern(given["server_name"], field="--server-name")
        if given["server_name"] else None,
        replicas=given["replicas"], sourced=given["sourced"], mirrored=given["mirrored"],
        leader=given["leader"] or None, api_level=given.get("api_level", 0),
        invert=given["invert"])


@stream_app.command("find")
def find(
    ctx: typer.Context,
    server_name: ServerNameQ = None,
    cluster: ClusterQ = None,
    empty: EmptyQ = False,
    idle: IdleQ = None,
    created: CreatedQ = None,
    consumers: ConsumersQ = -1,
    subject: SubjectQ = None,
    replicas: ReplicasQ = 0,
    sourced: SourcedQ = False,
    mirrored: MirroredQ = False,
    leader: LeaderQ = None,
    names: Annotated[bool, typer.Option(
        "--names", "-n", help="Show just the stream names.")] = False,
    invert: InvertQ = False,
    api_level: Annotated[int, typer.Option(
        "--api-level", metavar="LEVEL", min=INT64_MIN, max=INT64_MAX,
        help="Streams needing at least this JetStream API level (_nats.req.level).")] = 0,
    json_output: JsonOption = False,
) -> None:
    """Find streams matching criteria.

    natscli's stream find (jsm.go's stream query): every criterion given must hold, with
    --invert each is turned around. Every stream counts, the system streams behind KV
    buckets included. Prints natscli's stream ls table; --names the names, one per line;
    --json the list of names. jsm.go's --expression language is not supported.
    """
    app = App.of(ctx)
    q = stream_query(locals())
    js = open_jetstream(app)
    found = _found(js, q, cluster, "find")
    if names or app.json:
        app.emit(sorted(i["config"]["name"] for i in found), human=output.lines)
        return
    if not found:
        output.line(app, "No streams matched")
        return
    render_ls(app, found, subject or None)


def render_ls(app: App, infos: list[dict[str, Any]], subject: str | None = None, *,
              skipped: bool = False, missing: Sequence[str] = ()) -> None:
    """The streams table (natscli's), then the streams the server could not reach (their
    rows, if any, hold no state: "Inaccessible Streams", as natscli's renderMissing)."""
    if not infos and not missing:
        output.line(app, "No Streams defined" + (", pass -a to include system streams"
                                                 if skipped else ""))
        return
    if infos:
        _streams_table(app, infos, subject)
    render_inaccessible(app, "stream", missing, after_table=bool(infos))


def render_inaccessible(app: App, what: str, names: Sequence[str], *,
                        after_table: bool) -> None:
    """The streams or consumers (``what``) a live server did not reach, natscli's
    renderMissing table ("Inaccessible Streams"), and a warning on stderr that they were not
    reached (no state: not none stored); nothing when there are none."""
    if not names:
        return
    if after_table:
        output.line(app, "")
    title = f"Inaccessible {what.capitalize()}s"
    output.table(app, ("Name",), [[n] for n in names], title=title,
                 min_width={"Name": len(title)})
    output.notice(app, f"jetlink: warning: {len(names)} {what}"
                       f"{' was' if len(names) == 1 else 's were'} not reached (its servers "
                       "did not answer): listed as inaccessible, with no state (not none "
                       "stored)")


def _streams_table(app: App, infos: list[dict[str, Any]], subject: str | None) -> None:
    """natscli's streams table, smallest first."""
    infos = sorted(
        infos, key=lambda i: ((i.get("state") or {}).get("bytes", 0), i["config"]["name"])
    )
    rows = [
        [
            i["config"]["name"],
            i["config"].get("description", ""),
            output.local_time(i.get("created")),
            output.comma((i.get("state") or {}).get("messages", 0)),
            output.ibytes((i.get("state") or {}).get("bytes", 0)),
            common.ago((i.get("state") or {}).get("last_ts"), i),
        ]
        for i in infos
    ]
    title = f"Streams matching {subject}" if subject else "Streams"
    output.table(
        app,
        ("Name", "Description", "Created", "Messages", "Size", "Last Message"),
        rows,
        title=title,
        no_wrap=("Name", "Created", "Messages", "Size", "Last Message"),
    )


@stream_app.command("report")
def report(
    ctx: typer.Context,
    subject: Annotated[
        str | None,
        typer.Option(
            "--subject",
            metavar="SUBJECT",
            help="Limit the report to streams with matching subjects.",
        ),
    ] = None,
    sort_consumers: Annotated[
        bool, typer.Option("--consumers", "-o", help="Sort by number of consumers.")
    ] = False,
    sort_messages: Annotated[
        bool, typer.Option("--messages", "-m", help="Sort by number of messages.")
    ] = False,
    sort_name: Annotated[bool, typer.Option("--name", "-n", help="Sort by stream name.")] = False,
    sort_storage: Annotated[
        bool, typer.Option("--storage", "-t", help="Sort by storage type.")
    ] = False,
    raw: Annotated[bool, typer.Option("--raw", "-r", help="Show un-formatted numbers.")] = False,
    show_all: Annotated[
        bool, typer.Option("--all", "-a", help="natscli's flag of the stream commands: the "
                           "report lists every stream, the system ones too, with or without it.")
    ] = False,
    in_cluster: Annotated[str | None, typer.Option(
        "--cluster", metavar="NAME", show_default=False,
        help="Limit the report to streams within this cluster (its name).")] = None,
    leaders: Annotated[bool, typer.Option(
        "--leaders", "-l", help="Show how many stream leaders each server holds.")] = False,
    dot: Annotated[Path | None, typer.Option(
        "--dot", metavar="FILE", dir_okay=False, show_default=False,
        help="Write a GraphViz graph of the replication topology to FILE.")] = None,
    json_output: JsonOption = False,
) -> None:
    """Report statistics of every stream.

    natscli's Stream Report (Stream, Storage, Placement, Consumers, Messages, Bytes, Lost,
    Deleted, API Level, Replicas), sorted by bytes unless a sort flag is given, then the
    Replication Report of mirrors and sources; --leaders: the RAFT Leader Report (per
    server: its cluster, the streams it leads, their share as stars). --cluster keeps the
    streams of that cluster and those with no cluster information, as natscli's; where no
    stream names a cluster (the embedded engine) it is refused: jetlink's --cluster goes
    before the command. Streams a live server did not reach are listed apart after it
    (Inaccessible Streams, natscli's; with --json a warning on stderr). --dot FILE writes
    the replication topology as a GraphViz digraph (natscli's; only when a stream mirrors
    or sources). With
    --json: a list of {stream, storage, placement, consumers, messages, bytes, lost:
    {msgs, bytes}, deleted, api_level, replicas, cluster, mirror?, sources?}.
    """
    app = App.of(ctx)
    js = open_jetstream(app)
    listing = js.streams()
    # the streams the server did not reach: no row (a page's placeholder holds no state),
    # listed apart after the report, as natscli's renderMissing
    gone = set(listing.missing)
    infos = [to_doc(i) for i in listing]
    infos = [i for i in infos if i["config"]["name"] not in gone]
    if subject:
        wanted = set(js.stream_names(subject))
        infos = [i for i in infos if i["config"]["name"] in wanted]
        gone &= wanted
    if in_cluster:  # natscli's reportLimitCluster: a stream with no cluster information stays
        _check_cluster_filter(infos, in_cluster, "report")
        infos = [i for i in infos if not isinstance(i.get("cluster"), dict)
                 or i["cluster"].get("name", "") == in_cluster]
    stats = [_stat(i) for i in infos]
    if sort_consumers:
        key = "consumers"
    elif sort_messages:
        key = "messages"
    elif sort_name:
        key = "stream"
    elif sort_storage:
        key = "storage"
    else:
        key = "bytes"
    stats.sort(key=lambda s: (s[key], s["stream"]))
    graph = replication_dot(infos)
    if dot is not None and graph is not None:  # (natscli's: written when there is replication)
        from jetlink.core.outfile import write_output

        write_output(dot, graph, new_mode=0o600)

    def human(a: App, d: list[dict[str, Any]]) -> None:
        render_report(a, d, raw=raw, leaders=leaders)
        render_inaccessible(a, "stream", sorted(gone), after_table=True)

    app.emit(stats, human=human)
    if app.json and gone:
        output.notice(app, f"jetlink: warning: not reached (their servers did not answer), "
                           f"not in the report: {', '.join(sorted(gone))}")


def replication_dot(infos: list[dict[str, Any]]) -> str | None:
    """natscli's ``stream report --dot``: the mirrors and sources of ``infos`` (StreamInfo
    documents) as a GraphViz digraph labelled "Stream Replication Structure": a blue edge
    labelled Mirror from a mirror's origin, a green one from each source, labelled with its
    filter (or its one transform, ``SRC to DEST``); None when no stream mirrors or sources."""
    ids: dict[str, str] = {}
    nodes: list[str] = []
    edges: list[str] = []

    def node(name: str) -> str:
        if name not in ids:
            ids[name] = f"n{len(ids) + 1}"
            nodes.append(f"\t{ids[name]}[label={_dot_text(name)}];")
        return ids[name]

    for info in infos:
        cfg = info.get("config") or {}
        name = str(cfg.get("name", ""))
        for source in cfg.get("sources") or []:
            here, there = node(name), node(str(source.get("name", "")))
            attrs = ['color="green"']
            transforms = source.get("subject_transforms") or []
            if source.get("filter_subject") and not transforms:
                attrs.append(f"label={_dot_text(source['filter_subject'])}")
            elif len(transforms) == 1:  # (natscli labels it only beside a filter, which
                # a source with transforms can not have: 10144)
                attrs.append("label=" + _dot_text(f"{transforms[0].get('src', '')} to "
                                                  f"{transforms[0].get('dest', '')}"))
            edges.append(f"\t{there}->{here}[{','.join(attrs)}];")
        if cfg.get("mirror"):
            here, there = node(name), node(str(cfg["mirror"].get("name", "")))
            edges.append(f'\t{there}->{here}[color="blue",label="Mirror"];')
    if not edges:
        return None
    return "\n".join(["digraph  {", '\tlabel="Stream Replication Structure";', "",
                      *nodes, *edges, "}", ""])


def _dot_text(text: str) -> str:
    """A DOT string literal (quotes and backslashes escaped)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _check_cluster_filter(infos: list[dict[str, Any]], value: str, verb: str) -> None:
    """natscli's --cluster after stream report|find|cluster balance keeps the streams placed
    in a cluster; where no stream names one (the embedded engine's, a server outside a
    cluster) it could only keep all of them or none, while the operator most likely meant
    jetlink's own --cluster: refused (a usage error), naming that one."""
    if any(isinstance(i.get("cluster"), dict) and i["cluster"].get("name") for i in infos):
        return
    raise common.usage(f"--cluster {value} after stream {verb} is natscli's filter of the "
                       "streams placed in a cluster, and no stream here names one (none of "
                       "the embedded engine's does, nor a server's outside a cluster); on the "
                       "embedded engine jetlink's --cluster, the data directory's cluster, "
                       f"goes before the command (jetlink --cluster {value} stream {verb})")


def _found(js: Any, q: "StreamQuery", cluster: str | None, verb: str) -> list[dict[str, Any]]:
    """The streams jsm.go's stream query ``q`` selects (--cluster checked first)."""
    from jetlink.core.queries import query_streams

    infos = [to_doc(i) for i in js.streams()]
    if cluster is not None:
        _check_cluster_filter(infos, cluster, verb)
    return query_streams(infos, q, now_ns=now_ns())


def _stat(info: dict[str, Any]) -> dict[str, Any]:
    cfg, state = info.get("config") or {}, info.get("state") or {}
    lost = state.get("lost") or {}
    stat: dict[str, Any] = {
        "stream": cfg.get("name", ""),
        "storage": cfg.get("storage", "file"),
        "placement": cfg.get("placement"),
        "consumers": state.get("consumer_count", 0),
        "messages": state.get("messages", 0),
        "bytes": state.get("bytes", 0),
        "lost": {"msgs": len(lost.get("msgs") or []), "bytes": lost.get("bytes", 0)},
        "deleted": len(state.get("deleted") or []) or state.get("num_deleted", 0),
        "replicas": cfg.get("num_replicas", 1),
        # natscli's: the API level the stream needs (_nats.req.level, "0" when none) and
        # where its replicas are (the Replicas cell: output.cluster_cell)
        "api_level": str((cfg.get("metadata") or {}).get("_nats.req.level") or "0"),
        "cluster": info.get("cluster"),
    }
    if info.get("mirror"):
        stat["mirror"] = info["mirror"]
    if info.get("sources"):
        stat["sources"] = info["sources"]
    return stat


def render_report(app: App, stats: list[dict[str, Any]], *, raw: bool = False,
                  leaders: bool = False) -> None:
    """natscli's stream report: the Stream Report table, then the Replication Report of the
    mirrors and sources (when any), then with ``leaders`` the RAFT Leader Report; ``raw``:
    numbers and durations unformatted."""
    if not stats:
        output.line(app, "No Streams defined")
        return
    num = (lambda n: str(n)) if raw else output.comma
    size = (lambda n: str(n)) if raw else output.ibytes
    rows = _stream_rows(stats, num, size)
    output.table(
        app,
        (
            "Stream",
            "Storage",
            "Placement",
            "Consumers",
            "Messages",
            "Bytes",
            "Lost",
            "Deleted",
            "API Level",
            "Replicas",
        ),
        rows,
        title="Stream Report",
        no_wrap=("Stream", "Messages", "Bytes"),
    )
    replication = _replication_rows(stats, num, raw)
    if replication:
        output.line(app)
        output.table(
            app,
            (
                "Stream",
                "Kind",
                "API Prefix",
                "Source Stream",
                "Filters and Transforms",
                "Active",
                "Lag",
                "Error",
            ),
            replication,
            title="Replication Report",
        )
    if leaders:
        output.raft_leaders(app, (s.get("cluster") for s in stats), "Streams")


def _stream_rows(stats: list[dict[str, Any]], num: Callable[[int], str],
                 size: Callable[[int], str]) -> list[list[str]]:
    """The Stream Report's rows: per stream its storage, placement, counts and losses."""
    rows = []
    for s in stats:
        placement = ""
        p = s.get("placement") or {}
        if p.get("cluster"):
            placement = f"cluster: {p['cluster']} "
        if p.get("tags"):
            placement += f"tags: {', '.join(p['tags'])}"
        lost = "0"
        if s["lost"]["msgs"]:
            lost = f"{num(s['lost']['msgs'])} ({size(s['lost']['bytes'])})"
        rows.append(
            [
                s["stream"],
                _STORAGE.get(s["storage"], s["storage"]),
                placement.strip(),
                num(s["consumers"]),
                num(s["messages"]),
                size(s["bytes"]),
                lost,
                num(s["deleted"]),
                s.get("api_level", "0"),
                output.cluster_cell(s.get("cluster")) or str(s["replicas"]),
            ]
        )
    return rows


def _api_error_text(err: Any) -> str:
    """jsm.go's ApiError.Error(), as natscli's reports print an agreement's error:
    ``description (err_code)``."""
    if not isinstance(err, dict):
        return str(err)
    desc, code, err_code = err.get("description", ""), err.get("code", 0), err.get("err_code", 0)
    if not desc:
        return f"unknown JetStream {code} Error ({err_code})" if code else \
            "unknown JetStream Error"
    return f"{desc} ({err_code})"


def _replication_rows(stats: list[dict[str, Any]], num: Callable[[int], str],
                      raw: bool) -> list[list[str]]:
    """The Replication Report's rows: per mirror or source of a stream, its origin, filters
    and transforms, when it was last active, its lag and its error."""
    replication = []
    for s in stats:
        entries = ([("Mirror", s["mirror"])] if s.get("mirror") else []) + [
            ("Source", src) for src in s.get("sources") or []
        ]
        for kind, src in entries:
            filters = [
                f"{t.get('src', '')} to {t.get('dest', '')}"
                for t in src.get("subject_transforms") or []
            ]
            if not filters and src.get("filter_subject"):
                filters = [f"{src['filter_subject']} untransformed"]
            if kind == "Mirror":  # (natscli's renderReplication leaves a mirror's empty)
                filters = []
            err = src.get("error")
            active = src.get("active", -1)
            replication.append(
                [
                    s["stream"],
                    kind,
                    (src.get("external") or {}).get("api", ""),
                    src.get("name", ""),
                    ", ".join(filters),
                    str(active)
                    if raw
                    else (
                        _dur(active)
                        if isinstance(active, int) and 0 < active < 2**63 - 1
                        else "never"
                    ),
                    num(src.get("lag", 0)),
                    _api_error_text(err) if err else "",
                ]
            )
    return replication


# -- destructive verbs --------------------------------------------------------------------------


@stream_app.command("rm")
def rm(
    ctx: typer.Context, name: StreamArg, force: ForceOption = False, json_output: JsonOption = False
) -> None:
    """Remove a stream and its messages.

    Asks for confirmation on a terminal; without one, -f/--force is required (exit status
    2 otherwise). With --json: {"success": true}.
    """
    from jetlink.core.errors import ApiError

    app = App.of(ctx)
    js = open_jetstream(app)
    try:
        js.stream_info(name)  # a stream that is not there is said first, never asked about
    except ApiError as err:
        if err.err_code != 10118:  # offline (its servers gone): the meta leader deletes it
            raise
    output.confirm(app, f"Really delete Stream {name}", force=force, action=f"delete stream {name}")
    js.delete_stream(name)
    output.success(app, f"Stream {name} was deleted")


@stream_app.command("purge")
def purge(
    ctx: typer.Context,
    name: StreamArg,
    force: ForceOption = False,
    subject: Annotated[
        str | None,
        typer.Option(
            "--subject", metavar="SUBJECT", help="Limits the purge to a specific subject."
        ),
    ] = None,
    seq: Annotated[
        int | None,
        typer.Option(
            "--seq",
            metavar="SEQUENCE",
            min=1,
            max=UINT64_MAX,
            help="Purge up to but not including a specific message sequence.",
        ),
    ] = None,
    keep: Annotated[
        int | None,
        typer.Option(
            "--keep",
            metavar="MESSAGES",
            min=0,
            max=UINT64_MAX,
            help="Keeps a certain number of messages after the purge.",
        ),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Remove messages from a stream in bulk.

    All messages, or those of --subject, up to --seq (exclusive) or all but the last --keep.
    Asks for confirmation on a terminal; without one, -f/--force is required. With --json:
    {"success": true, "purged": N}.
    """
    app = App.of(ctx)
    if seq is not None and keep is not None:
        raise usage("--seq and --keep cannot be combined when purging")
    if subject is not None:  # a typo is no purge of nothing: as view's and subjects' filter
        common.check_subject_filter("--subject", subject)
    js = open_jetstream(app)
    js.stream_info(name)  # (not there: said before any question)
    output.confirm(app, f"Really purge Stream {name}", force=force, action=f"purge stream {name}")
    with _stream_named(name):
        purged = js.purge_stream(name, subject=subject, seq=seq, keep=keep)
    doc = {"success": True, "purged": purged}

    def human(a: App, d: dict[str, Any]) -> None:
        output.line(a, f"Purged {purged} messages from {name}")
        output.line(a)
        render_info(a, to_doc(js.stream_info(name)), state_only=True)

    app.emit(doc, human=human)


@stream_app.command("rmm")
def rmm(
    ctx: typer.Context,
    name: StreamArg,
    seq: Annotated[
        int,
        typer.Argument(
            metavar="SEQ", min=1, max=UINT64_MAX, help="Message sequence to remove.",
            show_default=False
        ),
    ],
    force: ForceOption = False,
    json_output: JsonOption = False,
) -> None:
    """Remove one message from a stream.

    Asks for confirmation on a terminal; without one, -f/--force is required. With --json:
    {"success": true}.
    """
    app = App.of(ctx)
    js = open_jetstream(app)
    js.stream_info(name)  # (not there: said before any question)
    output.confirm(
        app,
        f"Really remove message {seq} from Stream {name}",
        force=force,
        action=f"remove message {seq} from stream {name}",
    )
    with _stream_named(name):
        js.delete_msg(name, seq)
    output.success(app, f"Message {seq} was removed from stream {name}")


# a stream's refusal for people: the setting behind it (the JSON stays the server's)
# (by code and the server's text: 10057 and 10110 carry several)
_REFUSED = {(10110, "stream purge not permitted"):
            "stream {name} has deny_purge set: the server purges none of it",
            (10057, "message delete not permitted"):
            "stream {name} has deny_delete set: the server removes none of its messages",
            (10109, "invalid operation on sealed stream"):
            "stream {name} is sealed: nothing of it is removed or purged"}


@contextlib.contextmanager
def _stream_named(name: str) -> Iterator[None]:
    """A purge's or a removal's refusal names the stream and its setting (``detail``)."""
    from jetlink.core.errors import ApiError

    try:
        yield
    except ApiError as err:
        why = _REFUSED.get((err.err_code, err.description))
        if err.detail is None and why is not None:
            err.detail = why.format(name=name)
        raise


@stream_app.command("seal")
def seal(
    ctx: typer.Context, name: StreamArg, force: ForceOption = False, json_output: JsonOption = False
) -> None:
    """Seal a stream: no more changes.

    A sealed stream takes no messages, deletes or purges, and its configuration cannot be
    changed or unsealed. Asks for confirmation on a terminal; without one, -f/--force is
    required. With --json: the StreamInfo.
    """
    app = App.of(ctx)
    js = open_jetstream(app)
    cfg = config_of(js.stream_info(name))
    output.confirm(
        app,
        f"Really seal Stream {name}, sealed streams can not be unsealed or modified",
        force=force,
        action=f"seal stream {name}",
    )
    cfg.sealed = True
    info = js.update_stream(cfg)
    app.emit(to_doc(info), human=render_info)


# -- promote / failover -----------------------------------------------------------------------

MirrorArg = Annotated[
    str, typer.Argument(metavar="MIRROR", help="The mirror stream.", show_default=False,
                        autocompletion=completion.mirror_streams)
]
PromoteSubjectsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--subjects",
        metavar="SUBJECTS",
        help="Subjects of the promoted stream (repeatable; commas or spaces separate several; "
        "one that holds none, as '' from an unset variable, is refused: give the stream's "
        "name for the server's default). Default: the origin's subjects.",
        show_default=False,
    ),
]
PromoteDryRunOption = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Report the lag, the consumers that would be placed and the clamps; change "
        "nothing.",
    ),
]
NoConsumersOption = Annotated[
    bool,
    typer.Option(
        "--no-consumers",
        help="Do not place the origin's durable consumers on the promoted stream.",
    ),
]
TopologyOption = Annotated[
    Path | None,
    typer.Option(
        "--topology",
        metavar="FILE",
        dir_okay=False,  # (a directory, or an empty value: refused as dr's --topology)
        help="A topology file declaring the origin's stream: its subjects, when the origin "
        "does not answer and no positions were synced.",
        show_default=False,
    ),
]


@stream_app.command("promote")
def promote(
    ctx: typer.Context,
    name: MirrorArg,
    subjects: PromoteSubjectsOption = None,
    force: Annotated[bool, force_option("Promote")] = False,
    dry_run: PromoteDryRunOption = False,
    no_consumers: NoConsumersOption = False,
    json_output: JsonOption = False,
) -> None:
    """Turn a caught-up mirror into a normal stream.

    The mirror stops mirroring and takes publishes on the origin's subjects (or --subjects);
    its messages stay at their sequences and the next publish gets the next one. Needs the
    origin reachable and the mirror caught up (Confluent's promote): refused otherwise (exit
    status 1, nothing changed), saying which; let it catch up, or use stream failover (-f
    only skips the question). Each durable consumer of the origin
    is recreated on the promoted stream with its config, starting after its ack floor (read
    from the origin, or as jetlink positions sync last copied it); an ack floor beyond the
    mirror's last message is clamped to it, and so are the mirror's own consumers
    positioned past it. Every clamp is printed. Works on the embedded engine and on a live
    server (nats-server 2.12 or later). Asks for confirmation on a terminal; without one,
    -f/--force is required. Exit status 1 when the promotion stopped part-way (the report
    says what was done; running it again finishes it: "resumed", or "already_done" when
    nothing was left; --subjects given to a re-run change the subjects, asked as stream edit
    asks). With --json: the promotion report (stream, cluster, action, dry_run, forced,
    origin, mirror_last_seq, origin_last_seq, lag, subjects, subjects_from, clamps,
    consumers, positions, complete, resumed, already_done, promoted_at, subjects_before).
    """
    promote_mirror(App.of(ctx), name, subjects, force=force, failover=False,
                   dry_run=dry_run, no_consumers=no_consumers)


@stream_app.command("failover")
def failover(
    ctx: typer.Context,
    name: MirrorArg,
    subjects: PromoteSubjectsOption = None,
    force: Annotated[bool, force_option("Fail over")] = False,
    dry_run: PromoteDryRunOption = False,
    no_consumers: NoConsumersOption = False,
    topology: TopologyOption = None,
    json_output: JsonOption = False,
) -> None:
    """Promote a mirror whatever its lag or origin.

    As stream promote, but not refused for the origin: it may be down, removed or ahead of
    the mirror (what the mirror has not copied stays behind). When the origin does not
    answer, its consumers are placed from the positions jetlink positions sync copied to
    this side, and the report says how old they are; the promoted stream's subjects are
    the origin's as last synced, else those of the origin's stream in --topology FILE, else
    refused (exit status 2) until --subjects gives them: it never takes its own name
    silently. Run again, it finishes what an earlier run left, or says it was already done;
    --subjects then changes the promoted stream's subjects (asked, as stream edit asks);
    --topology giving other subjects, and --no-consumers once consumers were placed, are
    refused (exit status 2). Asks for confirmation on a terminal; without one, -f/--force
    is required. With --json: the promotion report, with "forced": true when a reachable
    origin was ahead and "subjects_from" saying where the subjects came from.
    """
    promote_mirror(App.of(ctx), name, subjects, force=force, failover=True,
                   dry_run=dry_run, no_consumers=no_consumers, topology=topology)


def promote_mirror(
    app: App, name: str, subjects: list[str] | None, *, force: bool, failover: bool,
    dry_run: bool = False, no_consumers: bool = False, what: str = "mirror",
    verb_name: str = "stream", adjust: Any = None, shown: str | None = None,
    topology: Path | None = None, bucket: str | None = None,
) -> None:
    """``stream|kv promote|failover``: the same promotion (core/dr/rules.py) on the site
    in force, rendered; exit status 1 with the report when it stopped part-way
    (``bucket``: a KV mirror's origin bucket, whose subjects it takes)."""
    from jetlink.core import dr

    site = common.open_site(app)
    # the synced positions also give the subjects of an origin that does not answer:
    # read with --no-consumers too, which only places none (transfer)
    positions = common.open_positions(app)
    wanted = None if subjects is None else given_subjects(subjects)
    naming = dr.Naming(what=what, shown=shown, instead=(
        f"fail over instead (jetlink {verb_name} failover {shown or name})"),
        again=f"jetlink {verb_name} {'failover' if failover else 'promote'} {shown or name}")
    promotion = dr.prepare(site, name, subjects=wanted, failover=failover,
                           positions=positions, transfer=not no_consumers, adjust=adjust,
                           naming=naming, topology=_topology(topology), bucket=bucket,
                           as_stream=verb_name == "stream")
    for warning in (dr.partial_warning(promotion, planned=dry_run),
                    dr.return_warning(promotion, planned=dry_run)):
        if warning is not None:
            output.notice(app, f"jetlink: warning: {warning}")
    if not dry_run and not promotion.rerun:
        verb = "fail over to" if failover else "promote"
        output.confirm(
            app,
            f"Really {verb} {what} {shown or name} "
            f"({_origin_phrase(promotion.facts, promotion.lag)}): it stops mirroring and "
            "becomes a normal stream",
            force=force,
            action=f"{verb} {what} {shown or name}",
        )
    elif not dry_run and promotion.subjects_before is not None:
        before, after = ", ".join(promotion.subjects_before), ", ".join(promotion.subjects)
        output.confirm(
            app,
            f"Really change the subjects of stream {name} (promoted before) from {before} "
            f"to {after}: producers publishing to the old ones are refused",
            force=force,
            action=f"change the subjects of stream {name}",
        )
    # The report names what the user named: a KV bucket, not its stream KV_<bucket>.
    label = f"KV bucket {shown}" if verb_name == "kv" and shown else None

    def render(a: App, d: dict[str, Any]) -> None:
        from jetlink.cli.promotion import render_promotion

        render_promotion(a, d, label=label)

    if dry_run:
        report = promotion.preview()
    else:
        try:
            report = promotion.carry_out()
        except dr.PartialPromotion as err:
            if not app.json:  # with --json the error's document holds the report
                render(app, err.report.to_json())
            raise
    app.emit(report.to_json(), human=render)


# -- failback --------------------------------------------------------------------------------

def _tail_path(value: str | None) -> str | None:
    return None if value is None else parquet_option(value)


FailbackTailOption = Annotated[
    str | None,
    typer.Option(
        "--tail",
        metavar="parquet:PATH",
        help="The Parquet dataset the divergent tail is saved to. Default: "
        "./failback-<old origin's stream>-<UTC time> (e.g. failback-ORDERS-20261127T043000Z), "
        "as the first run recorded it. A re-run given another path takes it (what an earlier "
        "run began writing is left and named), unless the tail was already saved.",
        callback=_tail_path,
        show_default=False,
    ),
]
FailbackSwitchOption = Annotated[
    bool,
    typer.Option(
        "--switch",
        help="Also switch back once the old origin caught up: it becomes the primary again, "
        "with the consumers, and this stream its mirror.",
    ),
]
FailbackDryRunOption = Annotated[
    bool,
    typer.Option("--dry-run", help="Show every step (the tail counted, what is deleted and "
                 "created, the consumers recorded); change nothing."),
]


@stream_app.command("failback")
def failback(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="STREAM", help="The stream a failover "
                                        "promoted.", show_default=False,
                                        autocompletion=completion.promoted_streams)],
    tail: FailbackTailOption = None,
    switch: FailbackSwitchOption = False,
    force: Annotated[bool, force_option("Fail back")] = False,
    dry_run: FailbackDryRunOption = False,
    json_output: JsonOption = False,
) -> None:
    """Fail back once the old origin is back.

    Run against the promoted stream (on its side). The old origin is found from the
    promotion record. Its divergent tail, the messages it took after the last one the mirror
    had copied, is saved whole (sequence, subject, headers, data, time) to a Parquet dataset
    in the lake schema, counted there before anything is removed, and listed (count, first
    and last sequence, per subject). Its messages at or below that last copied one which
    this stream does not hold (older than its first sequence, or a KV mirror's smaller
    history) are saved the same way beside it, to <tail>-unmatched. The old origin's
    consumers are recorded, its stream is deleted and created again as a mirror of this one
    (NATS cannot add a mirror to a stream), and it catches up. With --switch, once it has
    caught up: this stream is sealed, the old origin is promoted (as stream promote: caught
    up and reachable) with its config and the consumers placed at their positions here, and
    this stream becomes the mirror it was, its own consumers recreated. A run stopped at any
    point is finished by running the same command again (the plan is kept in jetlink's
    bucket JETLINK_FAILBACK). Asks for confirmation on a terminal; without one, -f/--force
    is required. With --json: the failback report (stream, cluster, kind, dry_run, switch,
    resumed, origin, promoted_last_seq, tail, unmatched, origin_consumers, mirror, reuse,
    placed, restored, steps, state, complete, already_done, failed_back_at). Run again once
    it finished, it says when (exit status 0).
    """
    fail_back(App.of(ctx), name, tail=tail, switch=switch, force=force, dry_run=dry_run)


def fail_back(app: App, name: str, *, tail: str | None, switch: bool, force: bool,
              dry_run: bool, kind: str = "stream", shown: str | None = None) -> None:
    """``stream|kv failback``: core/dr/failback.py on the site in force, rendered."""
    from jetlink.core import dr

    what = f"KV bucket {shown}" if kind == "kv" and shown else f"stream {name}"
    site = common.open_site(app)  # a cluster that is not there: said before any question
    if not dry_run:
        output.confirm(
            app,
            f"Really fail back {what}: its old origin's stream is deleted once its divergent "
            f"tail is saved, and created again as a mirror"
            + (f"; then {what} is sealed, deleted and created again as a mirror" if switch
               else ""),
            force=force,
            action=f"fail back {what}",
        )
    report = dr.failback(site, name, tail=tail, switch=switch, dry_run=dry_run, kind=kind)
    app.emit(report.to_json(), human=lambda a, d: render_failback(a, d, what=what))


def render_failback(app: App, doc: dict[str, Any], *, what: str) -> None:
    """The failback report: the old origin, the tail, the steps, the consumers."""
    origin = doc["origin"]
    kind = "domain" if "domain" in origin else "cluster"
    where = f"{origin['stream']} in {kind} {origin.get(kind) or 'of this side'}"
    # both sides named with their cluster or domain: a KV bucket's stream has one name
    there = f"{origin['stream']}@{origin[kind]}" if origin.get(kind) else origin["stream"]
    dry = doc["dry_run"]
    what_ = f"{what[0].upper()}{what[1:]}"
    if doc.get("already_done"):
        at = f" at {doc['failed_back_at']}" if doc.get("failed_back_at") else ""
        head = f"{what_} already failed back{at}: {there} is the primary again"
    elif dry:
        head = f"Failback of {what} (dry run): nothing changed"
    elif doc["state"] == "switched":
        head = f"{what_} failed back: {there} is the primary again"
    else:
        head = f"{what_}: {there} mirrors it again"
    cols = output.Columns(head)
    cols.title("Failback")
    cols.row("Old Origin", where)
    cols.row("Promoted At", f"sequence {output.comma(doc['promoted_last_seq'])}")
    if doc["resumed"]:
        cols.row("Resumed", "an earlier run had begun it")
    _render_saved(cols, doc, dry)
    m = doc.get("mirror") or {}
    if m:
        cols.title("Mirror")
        mkind = "domain" if "domain" in m else "cluster"
        shown_m = f"{m['stream']}@{m[mkind]}" if m.get(mkind) else m["stream"]
        if doc.get("dry_run") and not m["caught_up"]:  # nothing made yet: what it would be
            cols.row(shown_m, "planned: a mirror up to sequence "
                     f"{output.comma(m['last_seq'] + m['behind'])}")
        else:
            cols.row(shown_m, f"at sequence {output.comma(m['last_seq'])}, "
                     + ("caught up" if m["caught_up"] else
                        f"{output.comma(m['behind'])} behind"))
    r = doc.get("reuse") or {}
    if m and r and not doc.get("already_done"):
        kept = (f"{output.plural(r['messages'], 'message')} kept (up to sequence "
                f"{output.comma(r['upto_seq'])})" if r["upto_seq"] else "none")
        cols.row("Reused", kept)
        if doc.get("dry_run") and not r["copied"]:  # (counted once it copied)
            cols.row("Copied", "planned: every message after sequence "
                     f"{output.comma(r['upto_seq'])}" if r["upto_seq"] else
                     "planned: every message")
        else:
            cols.row("Copied", output.plural(r["copied"], "message"))
        cols.row("Why", r["reason"], bool(r["reason"]))
    cols.title("Steps")
    for s in doc["steps"]:
        cols.row(s["step"], f"{s['status']}: {s['detail']}" if s["detail"] else s["status"])
    for title, items in (("Consumers On The Primary", doc["placed"]),
                         ("Consumers On The Mirror", doc["restored"])):
        if items:
            cols.title(title)
            for p in items:
                clamp = ", clamped" if p["clamped"] else ""
                cols.row(p["consumer"], f"starts at {output.comma(p['start_seq'])}{clamp} "
                         f"({p['status']})")
    cols.render(app)



def _render_saved(cols: Any, doc: dict[str, Any], dry: bool) -> None:
    """The failback report's datasets: the divergent tail, and the old origin's messages
    this side does not hold (saved beside it)."""
    t = doc.get("tail")
    if t:
        cols.title("Divergent Tail")
        if t.get("note"):
            cols.row("Messages", t["note"])
        else:
            cols.row("Messages", f"{output.comma(t['messages'])} (sequences "
                     f"{output.comma(t['first_seq'])}..{output.comma(t['last_seq'])})")
            came = {"given": "given now", "default": "the default",
                    "recorded": "as the first run recorded it"}.get(t.get("path_from", ""), "")
            state = ("saved, counted there" if t["verified"] else
                     "would be saved" if dry else "")
            said = "; ".join(x for x in (state, came) if x)
            cols.row("Dataset", f"parquet:{t['path']}" + (f" ({said})" if said else ""))
            _subject_rows(cols, t)
        for path in t.get("abandoned") or []:
            cols.row("Left Behind", f"parquet:{path} (an earlier run's unfinished dataset, "
                     "left as it is)")
    u = doc.get("unmatched")
    if u:
        cols.title("Held Only By The Old Origin")
        cols.row("Messages", f"{output.comma(u['messages'])} (sequences "
                 f"{output.comma(u['first_seq'])}..{output.comma(u['last_seq'])}, at or below "
                 "the promoted sequence, not on this side)")
        state = "saved, counted there" if u["verified"] else "would be saved" if dry else ""
        cols.row("Dataset", f"parquet:{u['path']}" + (f" ({state})" if state else ""))
        _subject_rows(cols, u)


def _subject_rows(cols: Any, saved: dict[str, Any]) -> None:
    """A saved dataset's messages per subject (20 at most, then how many others)."""
    for subj, n in list(saved["subjects"].items())[:20]:
        cols.row(subj, output.comma(n))
    more = saved["subjects_total"] - min(len(saved["subjects"]), 20)
    cols.row("Other Subjects", str(more), more > 0)

def _topology(path: Path | None) -> Any:
    """The topology file of --topology, loaded (its problems are not this command's: only
    its streams' subjects are read). A file that is not there or does not read is the
    command line's problem: a usage error (exit 2), as any option's file."""
    if path is None:
        return None
    from jetlink.core.errors import UsageError
    from jetlink.core.topology import Topology

    if not path.is_file():  # (a directory named is refused by the option's dir_okay=False;
        # an empty value reaches here as the current one)
        why = ("is a directory (an empty value is the current one): give the topology file "
               "(TOML or JSON)" if path.is_dir() else
               "is not a regular file: give the topology file (TOML or JSON)"
               if path.exists() else "no such file")
        raise UsageError(f"--topology {str(path)!r}: {why}", field="topology")
    topo = Topology()
    topo.add_file(str(path))
    unread = [p for p in topo.problems if p.object is None]  # the file itself (not TOML...)
    if unread:
        raise UsageError(f"--topology {path}: {unread[0].description} (jetlink validate "
                         f"{path} lists every problem)", field="topology")
    return topo


def _origin_phrase(facts: Any, lag: int | None) -> str:
    text = f"origin {facts.stream} in {facts.where}"
    if not facts.reachable:
        text += f": {facts.error}"
        if lag is not None:
            text += f"; lag {output.comma(lag)} when last reported"
    if facts.pending:
        text += (f", {output.comma(facts.pending)} message{'s' if facts.pending != 1 else ''} "
                 "not copied")
    return text


# -- export / import: a stream to and from a lake (Parquet) -----------------------------------

PARQUET_PREFIX = "parquet:"
PROGRESS_MIN = 100_000  # messages: a bar for a longer export (on a terminal only)


def _parquet_path(ctx: typer.Context, value: str) -> str:
    """PATH of a ``parquet:PATH`` argument (a Click callback: a usage error naming the rule
    otherwise; the stream given as parquet:PATH instead, the arguments swapped, said so)."""
    first = ctx.params.get("name")
    if isinstance(first, str) and first.startswith(PARQUET_PREFIX) and \
            not value.startswith(PARQUET_PREFIX):
        verb = ctx.info_name or "export"
        raise typer.BadParameter(
            f"{value!r}: the stream comes first, then the dataset (jetlink stream {verb} "
            f"{value} {first})")
    return parquet_option(value)


def parquet_option(value: str, option: str | None = None) -> str:
    """:func:`_parquet_path`, naming ``option`` when it is called outside Click's own
    parsing of that option."""
    if not value.startswith(PARQUET_PREFIX) or not value[len(PARQUET_PREFIX) :]:
        hint = f"; did you mean parquet:{value}?" if value and ":" not in value else ""
        raise typer.BadParameter(
            f"{value!r}: a dataset is given as parquet:PATH, PATH a directory or a URI "
            f"(parquet:/data/orders, parquet:file:///data/orders){hint}",
            param_hint=f"'{option}'" if option else None,
        )
    from jetlink.core.lake import dataset_path_problem

    why = dataset_path_problem(value[len(PARQUET_PREFIX):])
    if why:
        raise typer.BadParameter(f"{value!r}: {why}",
                                 param_hint=f"'{option}'" if option else None)
    return value[len(PARQUET_PREFIX) :]


LakeArg = Annotated[
    str,
    typer.Argument(
        metavar="parquet:PATH",
        help="The Parquet dataset directory, as parquet:PATH (PATH may be a file:// URI).",
        callback=_parquet_path,
        show_default=False,
    ),
]


@stream_app.command("export")
def export(
    ctx: typer.Context,
    name: StreamArg,
    target: LakeArg,
    force: Annotated[
        bool,
        typer.Option(
            "--force", "-f", help="Replace a dataset already in the directory without asking."
        ),
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Export a stream to a Parquet dataset.

    Writes the stream's messages up to its last sequence when the export starts (one
    consistent cut) as part-00000.parquet, part-00001.parquet ... in the lake message schema
    (stream, partition, seq, subject, key, ts, headers, data; see docs/spark.md), then
    _jetlink.json with the stream's config, creation time and state. A directory that is not
    empty is replaced only after confirmation on a terminal or with -f/--force (and only when
    it holds nothing but a dataset).

    With a live server in force the stream is read over the network (one ordered consumer;
    sequences, times and header blocks as stored) and the export is resumable: each part
    file is recorded in _jetlink_progress.json as it completes, and running the same export
    to the same directory again after an interruption continues after the last complete
    part, with the same cut (a notice says so; delete the directory to start over with a new
    cut). With --json: {"stream", "path", "messages", "bytes_written", "first_seq",
    "last_seq", "files"}, and "resumed_from" (the last sequence an earlier run had written,
    or null) on a live server.
    """
    from jetlink.core import lake

    app = App.of(ctx)
    common.need_spark_extra(ctx.command_path)
    js = open_jetstream(app)

    def resuming(progress: dict[str, Any]) -> None:
        files = len(progress["files"])
        output.notice(
            app,
            f"Resuming the export of stream {name} to {target}: "
            f"{output.comma(progress['messages'])} messages in {files} "
            f"file{'s' if files != 1 else ''} were written, up to sequence "
            f"{output.comma(progress['through'])} of {output.comma(progress['cut'])}",
        )

    def export(replace: bool) -> dict[str, Any]:
        total = js.stream_info(name).state.messages
        with output.progress(app, "Exporting", total, enabled=total > PROGRESS_MIN) as bar:
            return lake.export_stream(js, name, target, force=replace, on_resume=resuming,
                                      on_rows=bar.advance)

    try:
        try:
            summary = export(force)
        except lake.LakeExistsError as err:
            output.confirm(
                app,
                f"{err}. Really replace the dataset in {target}",
                force=False,
                action=f"replace the dataset in {target}",
            )
            summary = export(True)
    except lake.LakeInterrupted as stop:  # what the interrupted export left, and the way on
        output.notice(app, f"jetlink: interrupted: {stop.left}")
        if app.json:  # (one document, as ever: what a script reads of the stop)
            output.print_json({"stream": name, "path": target, "interrupted": True,
                               "left": stop.left})
        raise

    def human(a: App, d: dict[str, Any]) -> None:
        files = len(d["files"])
        resumed = d.get("resumed_from")
        output.line(
            a,
            f"Exported {output.comma(d['messages'])} messages of stream {d['stream']} "
            f"({_seq_span(d)}) to {d['path']}: {files} file{'s' if files != 1 else ''}, "
            f"{output.ibytes(d['bytes_written'])}"
            + (f" (resumed after sequence {output.comma(resumed)})" if resumed is not None
               else ""),
        )

    app.emit(summary, human=human)


@stream_app.command("import")
def import_(
    ctx: typer.Context,
    name: StreamArg,
    source: LakeArg,
    json_output: JsonOption = False,
) -> None:
    """Import a stream from a Parquet dataset.

    Stores every row of the dataset (the lake message schema, as stream export writes it) at
    its own sequence and time, as a mirror stores its origin's messages. The stream is created
    with the config in the dataset's _jetlink.json when it does not exist; an existing stream
    must never have stored anything. Refused before anything is written: rows of a topic
    (partition, key), sequences that appear twice, rows without a time, subjects the stream
    would refuse. With --json: {"stream", "path",
    "messages", "first_seq", "last_seq", "created", "transactions"}.

    With a live server in force the rows are published, in sequence order and pipelined:
    subjects, headers and payloads kept, new sequences and times given by the server. Each
    row carries Nats-Msg-Id ORIGIN:IDENTITY:SEQ (its origin stream, that stream's identity
    from _jetlink.json, its sequence there; a Nats-Msg-Id of its own is replaced and
    Nats-Expected-* headers are left out), so running the import again within the stream's
    duplicate window stores nothing twice. The stream is created from _jetlink.json's config
    without mirror and sources when it does not exist; an existing one may hold messages.
    With --json the document also has "duplicates" (rows the server already had).
    """
    from contextlib import ExitStack

    from jetlink.core import lake

    app = App.of(ctx)
    common.need_spark_extra(ctx.command_path)
    js = open_jetstream(app)
    with ExitStack() as stack:
        bar: Any = None

        def counted(rows: int) -> None:  # the dataset is checked: a bar for a long import
            nonlocal bar
            bar = stack.enter_context(
                output.progress(app, "Importing", rows, enabled=rows > PROGRESS_MIN))

        try:
            summary = lake.import_stream(js, name, source, on_total=counted,
                                         on_rows=lambda n: bar.advance(n) if bar else None)
        except lake.LakeInterrupted as stop:  # what the interrupted import kept, the way on
            output.notice(app, f"jetlink: interrupted: {stop.left}")
            if app.json:
                output.print_json({"stream": name, "path": source, "interrupted": True,
                                   "left": stop.left})
            raise

    kept = int(to_doc(js.stream_info(name)).get("state", {}).get("messages", 0))

    def human(a: App, d: dict[str, Any]) -> None:
        how = "new stream" if d["created"] else "stream"
        dups = d.get("duplicates")
        output.line(
            a,
            f"Imported {output.comma(d['messages'])} messages into {how} {d['stream']} "
            f"({_seq_span(d)}) from {d['path']}"
            + (f"; {output.comma(dups)} duplicate{'s' if dups != 1 else ''} skipped"
               if dups else ""),
        )
        if kept < d["messages"]:  # the stream's limits removed some as they were stored
            output.line(a, f"The stream holds {output.comma(kept)} of them: its limits "
                           "removed the rest (jetlink stream info "
                           f"{d['stream']} shows its limits)")

    app.emit(summary, human=human)


def _seq_span(doc: dict[str, Any]) -> str:
    if not doc["messages"]:
        return "no messages"
    return f"sequences {output.comma(doc['first_seq'])} to {output.comma(doc['last_seq'])}"


# -- messages -------------------------------------------------------------------------------


@stream_app.command("get")
def get(
    ctx: typer.Context,
    name: StreamArg,
    seq: Annotated[
        int | None,
        typer.Argument(
            metavar="[SEQ]", min=1, max=UINT64_MAX, help="Message sequence to retrieve.",
            show_default=False
        ),
    ] = None,
    last_for: Annotated[
        str | None,
        typer.Option(
            "--last-for",
            "-S",
            metavar="SUBJECT",
            help="Retrieves the last message for a specific subject.",
        ),
    ] = None,
    translate: TranslateOption = None,
    json_output: JsonOption = False,
) -> None:
    """Retrieve a message from a stream.

    By sequence, or the last message of a subject (--last-for). With --json: the server's
    StoredMsg as $JS.API.STREAM.MSG.GET returns it: {"subject", "seq", "hdrs": the header
    block in base64 (absent without headers), "data": base64 (absent when empty), "time"}.
    """
    from jetlink.cli import translate as T

    app = App.of(ctx)
    translate = T.checked(translate)
    if seq is None and last_for is None:
        raise usage("give a message sequence (SEQ) or --last-for SUBJECT")
    if seq is not None and last_for is not None:
        raise usage("give either SEQ or --last-for SUBJECT, not both")
    from jetlink.core.errors import ApiError

    js = open_jetstream(app)
    try:
        msg = (js.get_msg(name, seq) if seq is not None
               else js.get_msg(name, last_by_subj=last_for))
    except ApiError as err:
        if err.err_code == 10037 and not err.detail:  # which one, as natscli's "could not
            err.detail = (f"{name}#{seq}" if seq is not None  # retrieve ORDERS#99"
                          else f"the last message of {last_for} in {name}")
        raise
    app.emit(msg.api_doc(), human=lambda a, _d: render_get(a, name, to_doc(msg),
                                                            translate=translate))


def render_get(app: App, stream: str, msg: dict[str, Any], *,
               translate: str | None = None) -> None:
    """natscli's stream get: ``Item: STREAM#SEQ received TIME (AGO) on Subject S``."""
    ns = output.rfc3339_ns(msg.get("time"))
    ago = output.since(max(now_ns() - ns, 0))
    output.line(
        app,
        f"Item: {stream}#{msg['seq']} received {output.go_time_utc(ns)} ({ago}) "
        f"on Subject {msg['subject']}",
    )
    output.line(app)
    if msg.get("headers"):
        output.line(app, "Headers:")
        output.print_headers(app, msg["headers"], indent="  ")
        output.line(app)
    from jetlink.cli import translate as T  # (loaded by the command already)

    T.print_body(app, output.body_text(msg.get("data", "")), translate, msg["subject"], stream)


VIEW_PAGE = 10  # natscli's page size


@stream_app.command("view")
def view(
    ctx: typer.Context,
    name: StreamArg,
    size: Annotated[
        int | None,
        typer.Argument(metavar="[SIZE]", min=1, show_default=False,
                       help="Messages per page on a terminal (natscli's page size; as --page)."),
    ] = None,
    subject: Annotated[
        str | None,
        typer.Option("--subject", metavar="SUBJECT", help="Filter the stream using a subject."),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since", metavar="DURATION", parser=DURATION,
            help="Messages received since a duration like 1d3h5m2s.",
        ),
    ] = None,
    start: Annotated[
        int | None,
        typer.Option("--id", metavar="SEQ", min=1, max=UINT64_MAX,
                     help="Start at a specific message sequence."),
    ] = None,
    count: Annotated[
        int | None, typer.Option("--count", metavar="N", min=1, help="Show at most N messages.")
    ] = None,
    page: Annotated[
        int, typer.Option("--page", metavar="N", min=0,
                          help="Messages per page on a terminal (0: no paging).")
    ] = VIEW_PAGE,
    show_all: Annotated[
        bool, typer.Option("--all", help="Do not page on a terminal (as --page 0).")
    ] = False,
    raw: Annotated[bool, typer.Option("--raw", help="Show the raw data received.")] = False,
    translate: TranslateOption = None,
    json_output: JsonOption = False,
) -> None:
    """View the messages of a stream.

    Prints the messages (natscli's layout, or only the bodies with --raw) from the first,
    from --id SEQ or from --since DURATION ago (natscli's: --since when both), optionally
    filtered by --subject, --count at most. On a terminal it pages like natscli: --page
    messages (10) at a time, then asks "Next page?" (Enter or y: go on; n: stop); --all or
    --page 0 prints them all. Not on a terminal (a pipe, a file, a script) every message
    is printed as it is read,
    without a question. With --json: a list of messages (no paging).
    """
    from jetlink.cli import translate as T
    from jetlink.cli.stream_flags import parse_duration_flag

    app = App.of(ctx)
    translate = T.checked(translate)
    start_time = None
    if since is not None:
        ago = parse_duration_flag(since, flag="--since")
        start_time = now_ns() - ago
        if ago > 0:
            start = None  # natscli's viewAction: --since before --id when both are given
    if subject is not None:
        common.check_subject_filter("--subject", subject)
    js = open_jetstream(app)
    js.stream_info(name)  # stream not found: the error before anything else
    # closed when the view ends (a --count reached, a reader gone, Ctrl-C) while the
    # connection is still open: a live server's consumer is deleted then, not left to its
    # inactive threshold by a generator collected after the connection closed
    with contextlib.closing(js.messages(name, start_seq=start, start_time_ns=start_time,
                                        subject=subject)) as found:
        _view(app, ctx, name, found, count=count, raw=raw, translate=translate, size=size,
              page=page, show_all=show_all)


def _view(app: App, ctx: typer.Context, name: str, found: Any, *, count: int | None,
          raw: bool, translate: str | None, size: int | None, page: int,
          show_all: bool) -> None:
    """The messages ``found`` as stream view prints them (JSON, pages, --raw)."""
    from jetlink.cli import translate as T  # (loaded by the command already)

    if app.json:
        msgs = []
        for msg in found:
            msgs.append(to_doc(msg))
            if count is not None and len(msgs) >= count:
                break
        app.emit(msgs)
        return
    if size is not None:
        from jetlink.cli.common import given

        if given(ctx, "page") and page != size:
            raise usage(f"page size {size} and --page {page}: give one of them")
        page = size
    paged = 0 if show_all else page
    if not (output.stdout_is_terminal() and output.is_interactive()):
        paged = 0
    shown = 0
    for msg in found:
        if paged and shown and shown % paged == 0:
            if not output.ask_yes_no("Next page?", default=True):
                return
        if raw and translate is not None:
            T.print_body(app, msg.data, translate, msg.subject, name, trailing_blank=False)
        else:
            output.print_message(app, to_doc(msg), functools.partial(
                _render_viewed, translate=translate, stream=name), raw=raw)
        shown += 1
        if count is not None and shown >= count:
            break
    if not shown:
        output.notice(app, "No messages")


def _render_viewed(app: App, msg: dict[str, Any], data: bytes, *,
                   translate: str | None = None, stream: str = "") -> None:
    """natscli's stream view: ``[SEQ] Subject: S Received: TIME``, the headers, the body
    (through --translate's command when given)."""
    when = output.local_time(msg.get("time"))
    output.line(app, f"[{msg['seq']}] Subject: {msg['subject']} Received: {when}")
    if msg.get("headers"):
        output.line(app)
        output.print_headers(app, msg["headers"], indent="  ")
    output.line(app)
    from jetlink.cli import translate as T  # (loaded by the command already)

    T.print_body(app, data, translate, msg["subject"], stream)


@stream_app.command("subjects")
def subjects(
    ctx: typer.Context,
    name: StreamArg,
    filter: Annotated[
        str,
        typer.Argument(
            metavar="[FILTER]",
            help="Limit the subjects to those matching a filter.",
            show_default=False,
        ),
    ] = ">",
    sort: Annotated[
        Literal["name", "subjects", "messages", "count"],
        typer.Option(
            "--sort",
            metavar="ORDER",
            help="Sorting order (name, messages).",
        ),
    ] = "messages",
    reverse: Annotated[
        bool, typer.Option("--reverse", "-R", help="Reverse the sorting order.")
    ] = False,
    names: Annotated[bool, typer.Option("--names", help="List only subject names.")] = False,
    json_output: JsonOption = False,
) -> None:
    """Count the messages of each subject.

    Subjects held in a stream with their message counts, optionally limited by FILTER
    (default >). With --json: {subject: count}, the subjects by name (as natscli's).
    """
    app = App.of(ctx)
    common.check_subject_filter("FILTER", filter)
    counts = dict(open_jetstream(app).subjects(name, filter))
    if sort in ("name", "subjects"):
        order = sorted(counts, reverse=reverse)
    else:
        order = sorted(counts, key=lambda s: (counts[s], s), reverse=reverse)
    if names and not app.json:
        output.lines(app, order)
        return
    # --json: natscli's map, printed by Go's encoder with its keys sorted by name
    app.emit(dict(sorted(counts.items())),
             human=lambda a, _d: render_subjects(a, name, filter, {s: counts[s] for s in order}))


def render_subjects(app: App, stream: str, filter: str, counts: dict[str, int]) -> None:
    if not counts:
        output.line(app, f"No subjects found matching {filter}")
        return
    names = list(counts)
    longest = max(len(s) for s in names)
    width = len(output.comma(max(counts.values())))
    cols = 3 if longest + width < 20 else 2 if longest + width < 30 else 1
    rows = []
    for i in range(0, len(names), cols):
        group = names[i : i + cols]
        row: list[str] = []
        for s in group:
            row += [s, output.comma(counts[s]) if counts[s] else ""]
        row += [""] * (2 * cols - len(row))
        rows.append(row)
    output.table(
        app,
        ("Subject", "Count") * cols,
        rows,
        title=f"{len(names)} Subjects in stream {stream}",
    )


# -- a clustered stream's RAFT group (natscli's stream cluster) ---------------------------------

stream_cluster_app = typer.Typer(
    name="cluster",
    help="Manage a clustered stream (its RAFT group).\n\nnatscli's stream cluster verbs, on a "
    "live JetStream cluster; the embedded engine and a single server have no group to manage "
    "(the server's 10010, clustering support required).",
    no_args_is_help=True,
)
stream_app.add_typer(stream_cluster_app, name="cluster")

STEP_DOWN_WAITS = 10  # natscli's: a new leader looked for every 0.5 s, 10 times
STEP_DOWN_EVERY = 0.5


def clustered_leader(cluster: dict[str, Any] | None, what: str, force: bool,
                     group_of_replicas: bool = True) -> str:
    """The leader of a clustered stream's or consumer's group (``what``: how it is named),
    natscli's refusals first: not clustered (no replicas), no current leader (unless
    ``force``: then ``<unknown>``)."""
    from jetlink.core.errors import JetlinkError

    if not cluster or (group_of_replicas and not cluster.get("replicas")):
        raise JetlinkError(f"{what} is not clustered")
    leader = str(cluster.get("leader") or "")
    if not leader and not force:
        raise JetlinkError(f"{what} has no current leader (-f/--force steps it down all the "
                           "same)")
    return leader or "<unknown>"


def await_new_leader(app: App, read: Callable[[], dict[str, Any]], leader: str, what: str,
                     tries: int, preferred: str | None = None) -> dict[str, Any]:
    """Read the group (``read``: its info document) every half second until its leader is
    another than ``leader`` (said on stderr, as natscli logs it); the last document read.
    A leader that did not change in ``tries`` reads is an error (exit 1), as natscli's. A
    new leader other than ``preferred`` (the server asked for: the server elects another
    when that one cannot lead, a server down) is warned of."""
    import time

    from jetlink.core.errors import JetlinkError

    start = time.monotonic()
    doc: dict[str, Any] = {}
    for _ in range(tries):
        time.sleep(STEP_DOWN_EVERY)
        try:
            doc = read()
        except JetlinkError as err:
            output.notice(app, f"Failed to retrieve the state of {what}: {err.description}")
            continue
        now = str((doc.get("cluster") or {}).get("leader") or "")
        if not now:
            output.notice(app, "No leader elected")
        elif now != leader:
            output.notice(app, f'New leader elected "{now}"')
            if preferred and now != preferred:
                output.notice(app, f"jetlink: warning: the preferred server {preferred} was "
                                   f"not elected ({now} was): it is down, or not one of the "
                                   "group's peers")
            return doc
    raise JetlinkError(f"{what} did not elect a new leader in time (its leader {leader} after "
                       f"{time.monotonic() - start:.1f}s)")


@stream_cluster_app.command("step-down")
def cluster_step_down(
    ctx: typer.Context,
    name: StreamArg,
    preferred: PreferredOpt = None,
    force: StepDownForceOpt = False,
    json_output: JsonOption = False,
) -> None:
    """Force a new leader election for a stream.

    natscli's stream cluster step-down: the stream's leader stands down, a new one is
    looked for every half second (up to 5 s; none: exit 1), then the stream is shown.
    Refused for a stream that is not clustered (no replicas). With --json: the StreamInfo
    once the new leader is known.
    """
    app = App.of(ctx)
    js = open_jetstream(app)
    what = f'stream "{name}"'
    doc = to_doc(js.stream_info(name))
    cluster = doc.get("cluster") or {}
    leader = clustered_leader(cluster, what, force)
    output.notice(app, f'Requesting leader step down of "{leader}" for stream "{name}" in a '
                       f"{len(cluster.get('replicas') or []) + 1} peer cluster group")
    js.stream_leader_step_down(name, preferred)
    doc = await_new_leader(app, lambda: to_doc(js.stream_info(name)), leader, what,
                           STEP_DOWN_WAITS, preferred)
    app.emit(doc, human=lambda a, d: render_info(a, d))


@stream_cluster_app.command("peer-remove")
def cluster_peer_remove(
    ctx: typer.Context,
    name: StreamArg,
    peer: Annotated[str, typer.Argument(metavar="PEER", help="The server to remove from the "
                                        "stream's group.", show_default=False)],
    force: Annotated[bool, typer.Option(
        "--force", "-f", help="Remove the only peer of the stream too (its data is lost).")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Remove a server from a stream's RAFT group.

    natscli's stream cluster peer-remove: the meta leader places the replica on another
    server (the stream keeps its replica count). Refused for a stream that is not clustered,
    a PEER that is not in its group (the server's 10040), and the only peer without -f. With
    --json: {"success": true}.
    """
    from jetlink.core.errors import JetlinkError

    app = App.of(ctx)
    js = open_jetstream(app)
    doc = to_doc(js.stream_info(name))
    cluster = doc.get("cluster") or {}
    if not cluster.get("name"):
        raise JetlinkError(f'stream "{name}" is not clustered')
    peers = [cluster.get("leader") or "", *(r.get("name", "") for r in
                                            cluster.get("replicas") or [])]
    if len([p for p in peers if p]) <= 1 and not force:
        raise JetlinkError("removing the only peer of a stream loses its data: -f/--force to "
                           "remove it all the same")
    output.notice(app, f'Removing peer "{peer}"')
    js.stream_peer_remove(name, peer)
    output.notice(app, f'Requested removal of peer "{peer}"')
    if app.json:
        output.print_json({"success": True})


@stream_cluster_app.command("balance")
def cluster_balance(
    ctx: typer.Context,
    server_name: ServerNameQ = None,
    cluster: ClusterQ = None,
    empty: EmptyQ = False,
    idle: IdleQ = None,
    created: CreatedQ = None,
    consumers: ConsumersQ = -1,
    subject: SubjectQ = None,
    replicas: ReplicasQ = 0,
    sourced: SourcedQ = False,
    mirrored: MirroredQ = False,
    leader: LeaderQ = None,
    invert: InvertQ = False,
    json_output: JsonOption = False,
) -> None:
    """Balance stream leaders over their servers.

    natscli's stream cluster balance (jsm.go's balancer): of the streams the criteria find
    (stream find's), each server leading more than its even share of its cluster's steps
    some down, picked at random, each for a server of the stream's group below its share
    (a preferred placement, nats-server 2.11+). Each request is said on stderr, then
    "Balanced N streams." With --json: {"balanced": N, "streams": [names]}. A stream not
    clustered (every one on the embedded engine) has no other server to move to.
    """
    from jetlink.core.balance import balance, group_of

    app = App.of(ctx)
    q = stream_query(locals())
    js = open_jetstream(app)
    found = _found(js, q, cluster, "cluster balance")
    # (an info without cluster information names no RAFT group: not clustered)
    moved = balance([group_of(i["config"]["name"], i) for i in found if i.get("cluster")],
                    read=lambda n: group_of(n, to_doc(js.stream_info(n))),
                    step_down=js.stream_leader_step_down,
                    log=lambda m: output.notice(app, m), what="stream")
    app.emit({"balanced": len(moved), "streams": moved},
             human=lambda a, d: output.line(a, f"Balanced {d['balanced']} streams."))


def register(app: typer.Typer) -> None:
    app.add_typer(stream_app, name="stream")
