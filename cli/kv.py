"""``jetlink kv ...``: Key-Value buckets, KV mirrors and KV aggregates (natscli's ``nats kv``).

Parsing and rendering only: every verb calls ``jetlink.core.kv`` (``KV`` for the buckets of
the addressed cluster, ``KeyValue`` for the keys of one bucket), which owns the rules (ADR-8,
ADR-8): what a name opens (a bucket, a KV mirror, the bucket seen through a read replica
of it), read-only handles, revisions, the watcher's end of initial data.

- ``add`` creates a bucket; with ``--mirror ORIGIN`` a read-only KV mirror named BUCKET
  (``KV.create_mirror``), with ``--source ORIGIN[:KEYS][@CLUSTER]`` (repeatable) an aggregate
  (``KV.create_aggregate``), read-only unless ``--writable``. ``edit`` changes the values a
  bucket was created with, and ``--source`` adds origins to an aggregate. ``info``, ``ls``
  and ``rm`` show and destroy buckets.
- ``put``, ``get``, ``create``, ``update``, ``del``, ``purge``, ``history``, ``revert``,
  ``keys`` and ``watch`` work on keys.

Human output follows natscli's layouts (``nats kv info``'s columns, ``get``'s header line,
the ``History for B > K`` table, ``watch``'s ``[time] OP B > K: value`` lines). natscli has
no --json for kv; jetlink's documents are ``KVStatus.to_json()`` (add, edit, info, and a list
of them for ls), ``Entry.to_json()`` (+ ``served_by`` for get), ``{"bucket", "key",
"revision", "operation"}`` for the writes, and JSON lines for watch (one Entry per line, and
``{"end_of_initial_data": true}`` when the initial data is delivered).

Every command that writes ends with one replication step (cli/common.py ``data_dir``), so a
KV mirror or aggregate of a bucket sees a put at once.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any

import typer

from jetlink.cli import common, completion, output
from jetlink.cli.app import App
from jetlink.cli.common import usage
from jetlink.cli.kv_get import open_bucket, printable, show_entry
from jetlink.cli.options import (
    DURATION,
    SIZE,
    SIZE32,
    UNLIMITED_DURATION,
    WAIT,
    JsonLinesOption,
    JsonOption,
    force_option,
)
from jetlink.core.numbers import UINT64_MAX

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.core.kv import KV, Entry

kv_app = typer.Typer(
    name="kv",
    help="Manage Key-Value buckets (natscli's verbs).\n\nA bucket B is the stream KV_B on "
    "the subjects $KV.B.>: history, TTLs and limits are stream limits. KV mirrors (add "
    "--mirror) are read-only copies of a bucket, possibly in another cluster; aggregates "
    "(add --source) merge keys of several buckets. The verbs and flags are natscli's "
    "(nats kv ...).",
    no_args_is_help=True,
)

# How long one wait of `kv watch` for an entry lasts before checking --timeout again.
POLL_SECONDS = 0.25

# natscli's limit on values shown in tables (history/revert: 40; get: cli/kv_get.py).
TABLE_SHOW_MAX = 40

OPERATION_NAMES = {"PUT": "PUT", "DEL": "DELETE", "PURGE": "PURGE"}

# -- arguments and options ----------------------------------------------------------------------

BucketArg = Annotated[
    str, typer.Argument(metavar="BUCKET", help="Bucket name.", show_default=False,
                        autocompletion=completion.buckets)
]
# the DR verbs: kv promote / failover take a KV mirror, kv failback a bucket they promoted
MirrorBucketArg = Annotated[
    str, typer.Argument(metavar="BUCKET", help="Bucket name.", show_default=False,
                        autocompletion=completion.kv_mirror_buckets)
]
PromotedBucketArg = Annotated[
    str, typer.Argument(metavar="BUCKET", help="Bucket name.", show_default=False,
                        autocompletion=completion.promoted_buckets)
]
KeyArg = Annotated[str, typer.Argument(metavar="KEY", help="Key.", show_default=False)]
ValueArg = Annotated[
    str | None,
    typer.Argument(
        metavar="[VALUE]",
        help="Value to store (read from stdin when absent, or '' with stdin not a terminal).",
        show_default=False,
    ),
]
RevisionArg = Annotated[
    int,
    typer.Argument(metavar="REVISION", min=1, max=UINT64_MAX, help="Revision of the key.",
                   show_default=False),
]


def _opt(*decls: str, help: str, metavar: str | None = None, **kw: Any) -> Any:
    return typer.Option(*decls, help=help, metavar=metavar, show_default=False, **kw)


HistoryOption = Annotated[
    int | None,
    _opt(
        "--history",
        metavar="N",
        min=1,
        max=64,
        help="How many historic values to keep per key, 1..64 (default 1, a KV mirror's "
        "too: it keeps this many of what its origin sends).",
    ),
]
TtlOption = Annotated[
    str | None,
    _opt("--ttl", metavar="DURATION", parser=UNLIMITED_DURATION,
         help="How long to keep values (e.g. 1h, 7d; 0: forever)."),
]
MarkerTtlOption = Annotated[
    str | None,
    _opt(
        "--marker-ttl",
        metavar="DURATION", parser=DURATION,
        help="Keep limit markers for this long (at least 1s); enables per-key TTLs.",
    ),
]
MaxValueSizeOption = Annotated[
    str | None,
    _opt(
        "--max-value-size",
        metavar="BYTES", parser=SIZE32,
        help="Maximum size of a single value (e.g. 1KB, 1MiB; -1: unlimited).",
    ),
]
MaxBucketSizeOption = Annotated[
    str | None,
    _opt(
        "--max-bucket-size",
        metavar="BYTES", parser=SIZE,
        help="Maximum size of the bucket (e.g. 512MB, 1GB; -1: unlimited).",
    ),
]
StorageOption = Annotated[
    str | None, _opt("--storage", metavar="TYPE", help="Storage backend: file or memory.")
]
ReplicasOption = Annotated[
    int | None, _opt("--replicas", metavar="N", min=1, help="How many replicas to keep.")
]
CompressOption = Annotated[
    bool | None, _opt("--compress/--no-compress", help="Compress the bucket's data (S2).")
]
DescriptionOption = Annotated[
    str | None, _opt("--description", metavar="TEXT", help="A description for the bucket.")
]
MetadataOption = Annotated[
    list[str] | None,
    _opt("--metadata", metavar="KEY=VALUE", help="Metadata to set on the bucket (repeatable)."),
]
RepublishSourceOption = Annotated[
    str | None,
    _opt(
        "--republish-source",
        metavar="SUBJECT",
        help="Republish values whose subject matches this ($KV.<bucket>.<key>).",
    ),
]
RepublishDestinationOption = Annotated[
    str | None,
    _opt(
        "--republish-destination",
        metavar="SUBJECT",
        help="Subject to republish stored values to.",
    ),
]
RepublishHeadersOption = Annotated[
    bool | None,
    _opt("--republish-headers/--no-republish-headers", help="Republish only the headers."),
]
PlacementClusterOption = Annotated[
    str | None,
    _opt(
        "--cluster-placement",
        "--placement-cluster",
        metavar="NAME",
        help="Place the bucket on a specific cluster (natscli's --cluster; --cluster is "
        "jetlink's global option).",
    ),
]
PlacementTagsOption = Annotated[
    list[str] | None,
    _opt(
        "--placement-tags",
        "--tags",
        metavar="TAG",
        help="Place the bucket on servers that have specific tags (repeatable).",
    ),
]
SourceOption = Annotated[
    list[str] | None,
    _opt(
        "--source",
        metavar="ORIGIN[:KEYS][@CLUSTER]",
        help="Aggregate the keys of bucket ORIGIN (repeatable): KEYS is a comma-separated "
        "list of key filters (default all keys), CLUSTER the cluster ORIGIN lives in.",
    ),
]


# -- the engine ---------------------------------------------------------------------------------


def open_kv(app: App) -> KV:
    """The KV API the command acts on (cli/common.py open_kv)."""
    return common.open_kv(app)


# -- flag values --------------------------------------------------------------------------------


def _value_fields(
    *,
    history: int | None,
    ttl: str | None,
    marker_ttl: str | None,
    max_value_size: str | None,
    max_bucket_size: str | None,
    storage: str | None,
    replicas: int | None,
    compress: bool | None,
    description: str | None,
    metadata: list[str] | None,
    republish_source: str | None,
    republish_destination: str | None,
    republish_headers: bool | None,
    placement_cluster: str | None,
    placement_tags: list[str] | None,
) -> dict[str, Any]:
    """The given value flags as KeyValueConfig fields (flags not given are left out)."""
    from jetlink.cli.stream_flags import (
        STORAGE_NAMES,
        choose,
        parse_duration_flag,
        parse_metadata,
        parse_size,
    )
    from jetlink.core.config.stream import Placement, RePublish

    out: dict[str, Any] = {}
    if history is not None:
        out["history"] = history
    if ttl is not None:
        out["ttl"] = parse_duration_flag(ttl, flag="--ttl", unlimited=True)
    if marker_ttl is not None:
        out["limit_marker_ttl"] = parse_duration_flag(marker_ttl, flag="--marker-ttl")
    if max_value_size is not None:
        out["max_value_size"] = parse_size(max_value_size, flag="--max-value-size", bits=32)
    if max_bucket_size is not None:
        out["max_bytes"] = parse_size(max_bucket_size, flag="--max-bucket-size")
    if storage is not None:
        out["storage"] = choose(storage, STORAGE_NAMES, flag="--storage")
    if replicas is not None:
        out["replicas"] = replicas
    if compress is not None:
        out["compression"] = compress
    if description is not None:
        out["description"] = description
    if metadata is not None:
        out["metadata"] = parse_metadata(metadata)
    if republish_destination is not None:
        out["republish"] = RePublish(
            src=republish_source or "",
            dest=republish_destination,
            headers_only=bool(republish_headers),
        )
    elif republish_source is not None or republish_headers is not None:
        raise usage(
            "--republish-source and --republish-headers go with --republish-destination"
        )
    if placement_cluster is not None or placement_tags is not None:
        tags = [t for t in placement_tags or [] if t]
        if placement_cluster or tags:
            out["placement"] = Placement(cluster=placement_cluster or "", tags=tags)
        else:
            out["placement"] = None
    return out


# KeyValueConfig fields a KV mirror does not take (the flag that sets each).
_NOT_FOR_MIRRORS = {
    "republish": "--republish-destination",
    "limit_marker_ttl": "--marker-ttl",
}


def parse_mirror(text: str, domain: str | None) -> tuple[str, str]:
    """(origin bucket, cluster) of ``--mirror ORIGIN[@CLUSTER]`` and ``--mirror-domain``."""
    from jetlink.cli.stream_flags import cluster_api

    origin, at, cluster = text.strip().rpartition("@")
    if not at:
        origin, cluster = text.strip(), ""
    if not origin or (at and not cluster):
        raise usage(f"invalid value for --mirror: {text!r}: expected BUCKET or BUCKET@CLUSTER")
    if domain is not None:
        if cluster:
            raise usage("--mirror-domain conflicts with the cluster given by --mirror")
        cluster = domain
    if cluster:
        cluster_api(cluster, flag="--mirror-domain" if domain is not None else "--mirror")
    return _bucket_of(origin), cluster


def _bucket_of(name: str) -> str:
    """An origin named by its stream (``KV_ORDERS``) is the bucket ``ORDERS``, as nats.go's
    prepareKeyValueConfig reads the names of a mirror and of the sources."""
    return name[3:] if name.startswith("KV_") and len(name) > 3 else name


def parse_source(text: str) -> Any:
    """A KVAggregateOrigin from ``--source ORIGIN[:KEYS][@CLUSTER]`` (KEYS: comma-separated
    key filters; CLUSTER: the cluster ORIGIN lives in)."""
    from jetlink.cli.stream_flags import cluster_api
    from jetlink.core.config.kv import KVAggregateOrigin

    value = text.strip()
    rest, at, cluster = value.rpartition("@")
    if not at:
        rest, cluster = value, ""
    bucket, colon, keys = rest.partition(":")
    filters = [k.strip() for k in keys.split(",") if k.strip()] if colon else []
    if not bucket or (at and not cluster) or (colon and not filters):
        raise usage(
            f"invalid value for --source: {text!r}: expected ORIGIN, ORIGIN:KEYS, "
            "ORIGIN@CLUSTER or ORIGIN:KEYS@CLUSTER (KEYS: comma-separated key filters)"
        )
    if cluster:
        cluster_api(cluster, flag="--source")
    return KVAggregateOrigin(bucket=_bucket_of(bucket), keys=filters, domain=cluster)


def read_value(value: str | None) -> tuple[bytes, str]:
    """(the value to store, what ``put``, ``create`` and ``update`` echo), as natscli's:
    VALUE as given; none, or '' with stdin not a terminal, reads all of stdin, and then
    the echo is an empty line (natscli prints the VALUE argument, '' then: never the bytes
    read, which may be binary or large)."""
    isatty = getattr(sys.stdin, "isatty", None)
    tty = isatty is not None and isatty()
    if value is not None and (value != "" or tty):
        return value.encode("utf-8", "surrogateescape"), value
    if tty:
        raise usage("missing argument VALUE: give it, or pipe the value on stdin")
    from jetlink.core.limits import MAX_PAYLOAD

    return common.read_stdin(MAX_PAYLOAD, "the value"), ""


# -- add / edit ---------------------------------------------------------------------------------


@kv_app.command("add")
def add(
    ctx: typer.Context,
    bucket: BucketArg,
    history: HistoryOption = None,
    ttl: TtlOption = None,
    marker_ttl: MarkerTtlOption = None,
    max_value_size: MaxValueSizeOption = None,
    max_bucket_size: MaxBucketSizeOption = None,
    storage: StorageOption = None,
    replicas: ReplicasOption = None,
    compress: CompressOption = None,
    description: DescriptionOption = None,
    metadata: MetadataOption = None,
    republish_source: RepublishSourceOption = None,
    republish_destination: RepublishDestinationOption = None,
    republish_headers: RepublishHeadersOption = None,
    placement_cluster: PlacementClusterOption = None,
    placement_tags: PlacementTagsOption = None,
    mirror: Annotated[
        str | None,
        _opt(
            "--mirror",
            metavar="ORIGIN[@CLUSTER]",
            help="Create a read-only KV mirror named BUCKET (stream KV_BUCKET) of bucket ORIGIN.",
        ),
    ] = None,
    mirror_domain: Annotated[
        str | None,
        _opt("--mirror-domain", metavar="CLUSTER", help="Cluster the mirrored bucket lives in."),
    ] = None,
    keys: Annotated[
        list[str] | None,
        _opt(
            "--keys",
            metavar="FILTER",
            help="Mirror only the keys matching this filter (repeatable; with --mirror).",
        ),
    ] = None,
    source: SourceOption = None,
    writable: Annotated[
        bool,
        typer.Option("--writable", help="An aggregate (--source) that also takes writes."),
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Create a bucket, a KV mirror or an aggregate.

    A bucket takes natscli's flags (--history 1..64, --ttl, --max-bucket-size ...).

    --mirror ORIGIN (with --mirror-domain CLUSTER, or ORIGIN@CLUSTER, when ORIGIN lives in
    another cluster) creates a read-only mirror of bucket ORIGIN named BUCKET, optionally of
    some --keys only; gets of ORIGIN addressed from this cluster are then served by the
    mirror, writes and watches go to ORIGIN.

    --source ORIGIN[:KEYS][@CLUSTER] (repeatable) creates an aggregate: the keys of each
    origin (or those matching KEYS, comma-separated filters) copied into BUCKET. It is
    read-only unless --writable.

    Shows the bucket's status; with --json the KVStatus.
    """
    from jetlink.core.config.kv import KeyValueConfig, KVAggregateConfig, KVMirrorConfig

    app = App.of(ctx)
    values = _value_fields(
        history=history,
        ttl=ttl,
        marker_ttl=marker_ttl,
        max_value_size=max_value_size,
        max_bucket_size=max_bucket_size,
        storage=storage,
        replicas=replicas,
        compress=compress,
        description=description,
        metadata=metadata,
        republish_source=republish_source,
        republish_destination=republish_destination,
        republish_headers=republish_headers,
        placement_cluster=placement_cluster,
        placement_tags=placement_tags,
    )
    if mirror is not None and source:
        raise usage("--mirror and --source cannot be combined: a KV mirror has one origin")
    if mirror is None and mirror_domain is not None:
        raise usage("--mirror-domain goes with --mirror")
    if mirror is None and keys:
        raise usage("--keys goes with --mirror (an aggregate takes --source ORIGIN:KEYS)")
    if writable and not source:
        raise usage("--writable goes with --source (an aggregate)")
    kv = open_kv(app)
    if mirror is not None:
        for field, flag in _NOT_FOR_MIRRORS.items():
            if field in values:
                raise usage(f"{flag} does not apply to a KV mirror (it holds what ORIGIN holds)")
        origin, cluster = parse_mirror(mirror, mirror_domain)
        status = kv.create_mirror(
            KVMirrorConfig(
                name=bucket, origin_bucket=origin, domain=cluster, keys=list(keys or []), **values
            )
        )
        warn_renamed_mirror(app, bucket, origin)
        cfg = (status.to_json().get("stream_info") or {}).get("config") or {}
        if keys and cfg.get("mirror_direct"):
            # a mirror with mirror_direct answers the direct gets of its origin's bucket, its
            # filter or not (the server subscribes it to the origin's direct get subject)
            output.notice(app, f"jetlink: warning: KV mirror {bucket} holds only the keys "
                               f"{', '.join(keys)} but answers direct gets of bucket {origin} "
                               "(mirror_direct, as its origin allows direct gets): clients "
                               "reading other keys of it with direct get (nats.go, nats-py) "
                               "get \"key not found\" when this mirror answers first")
    elif source:
        # an origin named by a KV mirror maps the keys of the bucket it mirrors
        origins = [kv.resolve_origin(parse_source(s), i) for i, s in enumerate(source)]
        status = kv.create_aggregate(
            KVAggregateConfig(bucket=bucket, origins=origins, writable=writable, **values)
        )
        app.emit(status.to_json(), human=render_status)
        _warn_missing_origins(app, kv, bucket)
        return
    else:
        with _bucket_explained(bucket, values.get("limit_marker_ttl")):
            status = kv.create_bucket(KeyValueConfig(bucket=bucket, **values))
    app.emit(status.to_json(), human=render_status)


# The settings of a KV mirror `kv edit` changes (its origin and key filter stay).
_MIRROR_EDITABLE = {"description", "history", "ttl", "max_bytes", "max_value_size", "metadata",
                    "compression"}


def _confirm_removal(app: App, kv: Any, bucket: str, old: Any, new: Any, *,
                     force: bool) -> None:
    """Ask (a terminal) or refuse (none, without -f) an edit whose limits remove stored
    values, as stream edit does (core/removal.py ``removed_by``, in a bucket's terms)."""
    if force:
        return
    from jetlink.cli.common import now_ns
    from jetlink.core.removal import removed_by

    removes = removed_by(kv.js(), old.name, old, new, now_ns(), kv=True)
    if removes:
        output.confirm(app, f"Really edit bucket {bucket}: it removes stored values "
                       f"({removes})", force=False,
                       action=f"edit bucket {bucket} (it removes stored values: {removes})")


@kv_app.command("edit")
def edit(
    ctx: typer.Context,
    bucket: BucketArg,
    history: HistoryOption = None,
    ttl: TtlOption = None,
    marker_ttl: MarkerTtlOption = None,
    max_value_size: MaxValueSizeOption = None,
    max_bucket_size: MaxBucketSizeOption = None,
    replicas: ReplicasOption = None,
    compress: CompressOption = None,
    description: DescriptionOption = None,
    metadata: MetadataOption = None,
    republish_source: RepublishSourceOption = None,
    republish_destination: RepublishDestinationOption = None,
    republish_headers: RepublishHeadersOption = None,
    placement_cluster: PlacementClusterOption = None,
    placement_tags: PlacementTagsOption = None,
    source: SourceOption = None,
    force: Annotated[bool, force_option("Edit")] = False,
    json_output: JsonOption = False,
) -> None:
    """Change a bucket's settings.

    Only the flags given change (--metadata replaces the metadata a user set). --source
    ORIGIN[:KEYS][@CLUSTER] (repeatable) adds origins to an aggregate. Shows the bucket's
    status; with --json the KVStatus. An edit that removes stored values (a history below
    the revisions a key holds, a TTL shorter than the oldest value's age) asks first on a
    terminal and, without one, is refused unless -f/--force (exit status 2, nothing
    changed), as stream edit. A bucket size at or below the bytes stored removes nothing
    (a bucket discards new values): it is said, as a put is then refused until it has room
    (but one replacing the oldest revision of a key at its history limit, as nats-server
    allows).
    """
    from jetlink.core.errors import JetlinkError

    app = App.of(ctx)
    values = _value_fields(
        history=history,
        ttl=ttl,
        marker_ttl=marker_ttl,
        max_value_size=max_value_size,
        max_bucket_size=max_bucket_size,
        storage=None,  # set at creation only: natscli's kv edit has no --storage
        replicas=replicas,
        compress=compress,
        description=description,
        metadata=metadata,
        republish_source=republish_source,
        republish_destination=republish_destination,
        republish_headers=republish_headers,
        placement_cluster=placement_cluster,
        placement_tags=placement_tags,
    )
    origins = [parse_source(s) for s in source or []]
    kv = open_kv(app)
    status = None
    if values or not origins:
        handle = kv.open(bucket)
        if handle.kind == "mirror":
            extra = set(values) - _MIRROR_EDITABLE
            if extra:
                raise JetlinkError(
                    f"KV {handle.name} is a KV mirror: only its description, history, TTL, "
                    f"sizes, compression and metadata can be edited, not "
                    f"{', '.join(sorted(extra))}",
                    field="bucket",
                )
            changes = {"description": values.get("description"),
                       "history": values.get("history"), "ttl": values.get("ttl"),
                       "max_bytes": values.get("max_bytes"),
                       "max_value_size": values.get("max_value_size"),
                       "metadata": values.get("metadata"),
                       "compression": values.get("compression")}
            _confirm_removal(app, kv, handle.name, *kv.mirror_update(handle.name, **changes),
                             force=force)
            status = kv.update_mirror(handle.name, **changes)
            app.emit(status.to_json(), human=render_status)
            return
        cfg = kv.bucket_config(bucket)
        if "metadata" in values:
            from jetlink.core.config.codec import with_user_metadata

            values["metadata"] = with_user_metadata(cfg.metadata, values["metadata"])
        for field, value in values.items():
            setattr(cfg, field, value)
        with _bucket_explained(bucket, values.get("limit_marker_ttl")):
            _confirm_removal(app, kv, bucket, *kv.bucket_update(cfg), force=force)
            status = kv.update_bucket(cfg)
    for origin in origins:
        status = kv.add_aggregate_origin(bucket, kv.resolve_origin(origin))
    assert status is not None
    app.emit(status.to_json(), human=render_status)
    full = status.config.max_bytes
    if "max_bytes" in values and 0 < full <= status.bytes:  # (discard new: nothing goes)
        output.notice(app, f"jetlink: warning: bucket {bucket} holds {status.bytes:,} bytes, "
                           f"its maximum size {full:,}: a put is refused (maximum bytes "
                           "exceeded, 10077) until values are deleted or it grows, unless "
                           "it replaces the oldest revision of a key at its history limit "
                           "with no more bytes than the bucket's oldest value")
    if origins:
        _warn_missing_origins(app, kv, bucket)


def _warn_missing_origins(app: App, kv: Any, bucket: str) -> None:
    """An aggregate's origin buckets that are not there, one warning each on stderr (the
    server accepts them: the aggregate waits for its origins), as stream add warns."""
    from jetlink.cli.stream import warn_missing_origins
    from jetlink.core.config.kvnames import aggregate_origin_described

    warn_missing_origins(app, kv.bucket_stream_config(bucket), aggregate_origin_described)


# -- info / ls / rm -----------------------------------------------------------------------------


@kv_app.command("info")
def info(ctx: typer.Context, bucket: BucketArg, json_output: JsonOption = False) -> None:
    """Show a bucket's status.

    natscli's layout: the configuration (bucket name, history kept, values stored, TTLs,
    compression, backing store, sizes), mirror or sources information with their lag,
    metadata. With --json: the KVStatus (bucket, values, history, ttl, limit_marker_ttl,
    is_compressed, backing_store, bytes, kind, read_only, stream_info).
    """
    app = App.of(ctx)
    app.emit(open_kv(app).status(bucket).to_json(), human=render_status)


@kv_app.command("status")
def status_(ctx: typer.Context, bucket: BucketArg, json_output: JsonOption = False) -> None:
    """Show a bucket's status (as kv info).

    natscli's name for kv info: the same output, in natscli's layout or, with --json, the
    KVStatus.
    """
    info(ctx, bucket, json_output)


_STORAGE = {"file": "File", "memory": "Memory"}


def _size_limit(n: int) -> str:
    return "unlimited" if n is None or n < 0 else output.ibytes(n)


def render_status(app: App, doc: dict[str, Any]) -> None:
    """natscli's ``showStatus`` (nats kv info / add / edit)."""
    info = doc.get("stream_info") or {}
    cfg = info.get("config") or {}
    cols = output.Columns(
        f"Information for Key-Value Store Bucket {doc['bucket']} created "
        f"{output.local_time(info.get('created'))}"
    )
    cols.title("Configuration")
    cols.row("Bucket Name", doc["bucket"])
    cols.row("History Kept", output.comma(doc.get("history", 0)))
    cols.row("Values Stored", output.comma(doc.get("values", 0)))
    cols.row("Compressed", bool(doc.get("is_compressed")))
    marker_ttl = doc.get("limit_marker_ttl", 0)
    cols.row("Per-Key TTL Supported", marker_ttl > 0)
    cols.row("Limit Marker TTL", output.since(marker_ttl), marker_ttl > 0)
    cols.row("Backing Store Kind", doc.get("backing_store", "JetStream"))
    cols.row("Description", cfg.get("description", ""), bool(cfg.get("description")))
    cols.row("Bucket Size", output.ibytes(doc.get("bytes", 0)))
    cols.row("Maximum Bucket Size", _size_limit(cfg.get("max_bytes", -1)))
    cols.row("Maximum Value Size", _size_limit(cfg.get("max_msg_size", -1)))
    ttl = doc.get("ttl", 0)
    cols.row("Maximum Age", "unlimited" if ttl <= 0 else output.since(ttl))
    cols.row("JetStream Stream", cfg.get("name", ""))
    cols.row("Storage", _STORAGE.get(cfg.get("storage", "file"), str(cfg.get("storage"))))
    republish = cfg.get("republish")
    if republish:
        label = "Republishing Headers" if republish.get("headers_only") else "Republishing"
        cols.row(label, f"{republish.get('src', '')} to {republish.get('dest', '')}")
    mirror = info.get("mirror") or cfg.get("mirror")
    if mirror:
        cols.title("Mirror Information")
        _origin_rows(cols, "Origin Bucket", mirror)
    sources = info.get("sources") or cfg.get("sources")
    if sources:
        cols.title("Sources Information")
        for src in sources:
            _origin_rows(cols, "Source Bucket", src)
    cols.metadata(cfg.get("metadata"))
    cluster = info.get("cluster")
    if cluster:
        cols.title("Cluster Information")
        cols.row("Name", cluster.get("name", ""))
        cols.row("Leader", cluster.get("leader", ""))
        for peer in cluster.get("replicas") or []:  # natscli's renderNatsGoClusterInfo
            cols.row("Replica", output.replica_row(peer))
    cols.render(app)


def _origin_rows(cols: output.Columns, label: str, src: dict[str, Any]) -> None:
    """One origin of natscli's Mirror / Sources Information (a StreamSourceInfo, or the
    StreamSource of the config before the first replication step)."""
    from jetlink.core.config.kv import bucket_of_stream

    name = src.get("name", "")
    cols.row(label, bucket_of_stream(name) or name)
    ext = src.get("external") or {}
    cols.row("External API", ext.get("api", ""), bool(ext.get("api")))
    active = src.get("active", -1)
    seen = isinstance(active, int) and 0 < active < 2**63 - 1
    cols.row("Last Seen", output.since(active) if seen else "never")
    cols.row("Lag", output.comma(src.get("lag", 0)))


@kv_app.command("ls")
def ls(
    ctx: typer.Context,
    bucket: Annotated[
        str | None,
        typer.Argument(
            metavar="[BUCKET]",
            help="List the keys of this bucket instead (as kv keys).",
            show_default=False,
        ),
    ] = None,
    filters: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[FILTER]...", help="Key filters (with BUCKET).", show_default=False
        ),
    ] = None,
    names: Annotated[
        bool, typer.Option("--names", "-n", help="Show just the bucket names.")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="With BUCKET: a table of its keys' "
                           "latest entries (created, delta, revision).")
    ] = False,
    display_value: Annotated[
        bool, typer.Option("--display-value", help="With --verbose: show the values too.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """List the buckets (or the keys of one).

    Table of Bucket, Description, Created, Size, Values, Last Update (smallest first, as
    natscli); KV mirrors are listed under their own names. --names prints one name per
    line. With BUCKET: its keys, as kv keys; with -v/--verbose a table "Contents for
    bucket" of Key, Created, Delta, Revision (and Value with --display-value). With --json:
    the list of KVStatus documents (with --names: the list of names; with BUCKET: the keys,
    with --verbose their latest Entry documents).
    """
    app = App.of(ctx)
    if bucket is not None:
        if verbose:
            _keys_verbose(app, bucket, filters or [], display_value)
        else:
            _keys(app, bucket, filters or [])
        return
    statuses = [s.to_json() for s in open_kv(app).statuses()]
    if names:
        app.emit([s["bucket"] for s in statuses], human=output.lines)
        return
    app.emit(statuses, human=render_ls)


def render_ls(app: App, statuses: list[dict[str, Any]]) -> None:
    if not statuses:
        output.line(app, "No Key-Value buckets found")
        return
    statuses = sorted(statuses, key=lambda s: (s.get("bytes", 0), s["bucket"]))
    rows = []
    for s in statuses:
        info = s.get("stream_info") or {}
        rows.append(
            [
                s["bucket"],
                (info.get("config") or {}).get("description", ""),
                output.local_time(info.get("created")),
                output.ibytes(s.get("bytes", 0)),
                output.comma(s.get("values", 0)),
                common.ago((info.get("state") or {}).get("last_ts"), info),
            ]
        )
    output.table(
        app,
        ("Bucket", "Description", "Created", "Size", "Values", "Last Update"),
        rows,
        title="Key-Value Buckets",
        no_wrap=("Bucket", "Created", "Size", "Values", "Last Update"),
    )


OptionalKeyArg = Annotated[
    str | None,
    typer.Argument(metavar="[KEY]", help="Key to delete (without it: the whole bucket).",
                   show_default=False),
]


@kv_app.command("rm")
def rm(
    ctx: typer.Context,
    bucket: BucketArg,
    key: OptionalKeyArg = None,
    force: Annotated[bool, force_option("Delete")] = False,
    json_output: JsonOption = False,
) -> None:
    """Remove a bucket (or with KEY delete the key).

    Removes a bucket or a KV mirror; with KEY, deletes the key as kv del does. natscli's kv
    rm and kv del are one verb: with KEY a delete marker is stored (the key's history is
    kept); without it the bucket goes, with its values. Asks for confirmation on
    a terminal; without one, -f/--force is required (exit status 2 otherwise). Prints
    nothing (as natscli); with --json: {"success": true} for a bucket, {"bucket", "key",
    "revision", "operation": "DEL"} for a key.
    """
    _delete(App.of(ctx), bucket, key, force)


def _delete(app: App, bucket: str, key: str | None, force: bool) -> None:
    """kv rm / kv del (natscli's deleteAction): the key's delete, or the bucket's removal."""
    if key is None:
        kv = open_kv(app)
        kv.check_bucket(bucket)  # (not there: said before any question)
        output.confirm(app, f"Delete bucket {bucket}?", force=force,
                       action=f"delete bucket {bucket}")
        kv.delete_bucket(bucket)
        app.emit({"success": True}, human=_silent)
        return
    handle = open_bucket(app, bucket)
    output.confirm(
        app,
        f"Delete key {handle.name} > {key}?",
        force=force,
        action=f"delete key {key} of bucket {handle.name}",
    )
    with _fence_explained(handle):
        revision = handle.delete(key)
    app.emit(_written(handle.name, key, revision, "DEL"), human=_silent)


def _silent(app: App, data: Any) -> None:
    """natscli prints nothing after del, purge and rm."""


# -- promote / failover ---------------------------------------------------------------------------


def _kv_promote(ctx: typer.Context, bucket: str, *, force: bool, failover: bool,
                dry_run: bool, no_consumers: bool) -> None:
    from jetlink.cli.stream import promote_mirror
    from jetlink.core.dr import kv_adjust, kv_mirror_stream

    app = App.of(ctx)
    stream, origin = kv_mirror_stream(common.open_jetstream(app), bucket)
    promote_mirror(app, stream, None, force=force, failover=failover,
                   dry_run=dry_run, no_consumers=no_consumers, what="KV mirror",
                   verb_name="kv", adjust=kv_adjust, shown=bucket, bucket=origin)


_KV_DRY_RUN = typer.Option("--dry-run", help="Report the lag and what would change; change "
                           "nothing.")
_KV_NO_CONSUMERS = typer.Option("--no-consumers", help="Do not place the origin's durable "
                                "consumers on the promoted bucket.")


@kv_app.command("promote")
def promote(
    ctx: typer.Context,
    bucket: MirrorBucketArg,
    force: Annotated[bool, force_option("Promote")] = False,
    dry_run: Annotated[bool, _KV_DRY_RUN] = False,
    no_consumers: Annotated[bool, _KV_NO_CONSUMERS] = False,
    json_output: JsonOption = False,
) -> None:
    """Make a caught-up KV mirror a writable bucket.

    The mirror (its stream must be named KV_<origin bucket>, e.g. in another domain or
    cluster than the origin) stops mirroring and takes writes on $KV.<bucket>.>, with
    every key and revision it holds; direct gets are answered by itself. Refused (exit
    status 1, nothing changed) while the origin is reachable and the mirror lags: let it
    catch up, or use kv failover. A mirror made with deny_purge (jetlink's mirrors before
    they followed nats.go, which sets none) keeps refusing purges: the server cannot cancel
    it. Asks for confirmation on a terminal; without one, -f/--force is
    required. With --json: the promotion report, as stream promote prints it.
    """
    _kv_promote(ctx, bucket, force=force, failover=False, dry_run=dry_run,
                no_consumers=no_consumers)


@kv_app.command("failover")
def failover(
    ctx: typer.Context,
    bucket: MirrorBucketArg,
    force: Annotated[bool, force_option("Fail over")] = False,
    dry_run: Annotated[bool, _KV_DRY_RUN] = False,
    no_consumers: Annotated[bool, _KV_NO_CONSUMERS] = False,
    json_output: JsonOption = False,
) -> None:
    """Promote a KV mirror whatever its lag.

    As kv promote, but never refused: the origin may be down or ahead of the mirror (the
    revisions the mirror has not copied stay behind). Asks for confirmation on a terminal;
    without one, -f/--force is required. With --json: the promotion report.
    """
    _kv_promote(ctx, bucket, force=force, failover=True, dry_run=dry_run,
                no_consumers=no_consumers)


@kv_app.command("failback")
def failback(
    ctx: typer.Context,
    bucket: PromotedBucketArg,
    tail: Annotated[str | None, typer.Option(
        "--tail", metavar="parquet:PATH", help="The Parquet dataset the divergent tail is "
        "saved to. Default: ./failback-KV_<bucket>-<UTC time>, as the first run recorded it. "
        "A re-run given another path takes it (what an earlier run began writing is left and "
        "named), unless the tail was already saved.",
        show_default=False)] = None,
    switch: Annotated[bool, typer.Option(
        "--switch", help="Also switch back once the old origin caught up: its bucket becomes "
        "the primary again and this one its mirror.")] = False,
    force: Annotated[bool, force_option("Fail back")] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Show every step; change nothing.")] = False,
    json_output: JsonOption = False,
) -> None:
    """Fail back a bucket once its origin is back.

    As stream failback, for the bucket's stream KV_<bucket>: the old origin bucket's
    revisions written after the failover's last copied one are saved to a Parquet dataset
    and counted there, the old bucket is created again as a mirror of this one and catches
    up; with --switch it becomes the writable bucket again and this one its mirror. A run
    stopped part-way is finished by running it again. Asks for confirmation on a terminal;
    without one, -f/--force is required. With --json: the failback report, as stream
    failback prints it.
    """
    from jetlink.cli.stream import fail_back, parquet_option

    app = App.of(ctx)
    stream = f"KV_{bucket}"
    fail_back(app, stream, tail=None if tail is None else parquet_option(tail, "--tail"),
              switch=switch,
              force=force, dry_run=dry_run, kind="kv", shown=bucket)


# -- writes -------------------------------------------------------------------------------------


def _written(bucket: str, key: str, revision: int, operation: str) -> dict[str, Any]:
    return {"bucket": bucket, "key": key, "revision": revision, "operation": operation}


def _echo(text: str) -> Any:
    """natscli's put / create / update output: the value as it was given."""
    return lambda app, doc: output.line(app, text)


@kv_app.command("put")
def put(
    ctx: typer.Context,
    bucket: BucketArg,
    key: KeyArg,
    value: ValueArg = None,
    json_output: JsonOption = False,
) -> None:
    """Store a value.

    VALUE, or all of stdin when VALUE is absent (or '' with stdin not a terminal). Prints
    the VALUE given, an empty line for stdin (natscli); with --json: {"bucket", "key",
    "revision", "operation": "PUT"}.
    """
    app = App.of(ctx)
    handle = open_bucket(app, bucket)
    data, echo = read_value(value)
    with _fence_explained(handle), _bucket_explained(handle.name):
        revision = handle.put(key, data)
    app.emit(_written(handle.name, key, revision, "PUT"), human=_echo(echo))


@contextlib.contextmanager
def _fence_explained(handle: Any) -> Iterator[None]:
    """A write no stream captures says why when a fence took the bucket's subjects off
    (core/dr/fence.py ``fence_hint``)."""
    from jetlink.core.dr.fence import fence_hint
    from jetlink.core.streams import NoStreamError

    try:
        yield
    except NoStreamError as err:
        hint = fence_hint(handle.js.stream_configs(), err.subject)
        if hint:
            err.detail = hint
        raise


# A bucket's stream fields as kv's options (nats.go's KeyValueConfig -> StreamConfig)
_KV_OPTION_OF_FIELD = {"max_msg_size": "--max-value-size", "max_age": "--ttl",
                       "max_msgs_per_subject": "--history", "max_bytes": "--max-bucket-size",
                       "subject_delete_marker_ttl": "--marker-ttl",
                       "allow_msg_ttl": "--marker-ttl", "num_replicas": "--replicas"}


@contextlib.contextmanager
def _bucket_explained(bucket: str, marker_ttl: int | None = None) -> Iterator[None]:
    """A refusal of a bucket's stream config or of a write to it, said in kv's terms: the
    option the user gave (``--max-value-size``), not the stream field it becomes
    (``max_msg_size``); a marker TTL's refusal with the value given."""
    from jetlink.core.durations import format_duration
    from jetlink.core.errors import ApiError

    try:
        yield
    except ApiError as err:
        detail = err.detail or ""
        field = detail.split(" = ", 1)[0] if " = " in detail else ""
        option = _KV_OPTION_OF_FIELD.get(field)
        if field == "allow_msg_ttl":  # the server: TTLs once allowed stay allowed
            err.detail = (f"--marker-ttl {format_duration(marker_ttl or 0)} would turn off "
                          f"bucket {bucket}'s per-key TTLs, which the server keeps once on")
        elif option is not None:
            said = detail.split(" = ", 1)[1].replace("the stream holds", "the bucket holds")
            err.detail = f"bucket {bucket}: {option} {said.replace('message needs', 'value needs')}"
        elif (not detail and marker_ttl is not None
              and "delete marker TTL" in err.description):
            err.detail = f"--marker-ttl {format_duration(marker_ttl)}"
        raise


@contextlib.contextmanager
def _key_named(handle: Any, key: str, revision: int | None = None) -> Iterator[None]:
    """A key's error names the key and the bucket for people (the JSON document stays the
    server's): ``key not found (10037): key k at revision 6 in bucket CFG``, as kv get's."""
    from jetlink.core.errors import ApiError, JetlinkError

    try:
        yield
    except ApiError as err:
        if err.err_code in (10037, 10071) and err.detail is None:
            err.detail = (f"key {key}" + (f" at revision {revision}" if revision else "")
                          + f" in bucket {handle.name}")
        elif err.err_code == 10166 and err.detail is None:  # per-message TTL is disabled
            err.detail = (f"bucket {handle.name} takes no per-key TTL: jetlink kv edit "
                          f"{handle.name} --marker-ttl DURATION allows it")
        elif err.err_code == 10165 and err.detail is None:  # invalid per-message TTL
            err.detail = "a per-key TTL is at least 1s"
        raise
    except JetlinkError as err:
        if err.field == "revision" and err.detail is None \
                and "history=1" in err.description:  # natscli's words: which key
            err.detail = f"key {key} of bucket {handle.name} has one revision"
        raise


@kv_app.command("create")
def create(
    ctx: typer.Context,
    bucket: BucketArg,
    key: KeyArg,
    value: ValueArg = None,
    ttl: Annotated[
        str | None,
        _opt(
            "--ttl",
            metavar="DURATION",
            parser=DURATION,
            help="How long the key lives (the bucket needs --marker-ttl).",
        ),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Store a value only if the key does not exist.

    A key whose latest entry is a delete or purge counts as absent; an existing key fails
    with "key exists" (10071). Prints the VALUE given (an empty line for stdin); with
    --json: {"bucket", "key", "revision", "operation": "PUT"}.
    """
    from jetlink.cli.stream_flags import parse_duration_flag

    app = App.of(ctx)
    ttl_ns = parse_duration_flag(ttl, flag="--ttl") if ttl is not None else None
    handle = open_bucket(app, bucket)
    data, echo = read_value(value)
    with _fence_explained(handle), _key_named(handle, key), _bucket_explained(handle.name):
        revision = handle.create(key, data, ttl=ttl_ns or None)
    app.emit(_written(handle.name, key, revision, "PUT"), human=_echo(echo))


@kv_app.command("update")
def update(
    ctx: typer.Context,
    bucket: BucketArg,
    key: KeyArg,
    value: Annotated[
        str,
        typer.Argument(
            metavar="VALUE",
            help="Value to store ('' reads stdin when it is not a terminal).",
            show_default=False,
        ),
    ],
    revision: Annotated[
        int,
        typer.Argument(
            metavar="REVISION",
            min=0, max=UINT64_MAX,
            help="The key's latest revision: the update fails if it has changed since (0: "
            "the key has no entry at all, as nats.go's Update with 0).",
            show_default=False,
        ),
    ],
    json_output: JsonOption = False,
) -> None:
    """Update a key if unchanged since REVISION.

    Compare-and-set: fails with "wrong last sequence: N" (10071) when the key's latest
    revision is not REVISION. Prints the VALUE given (an empty line for stdin); with
    --json: {"bucket", "key", "revision", "operation": "PUT"}.
    """
    app = App.of(ctx)
    handle = open_bucket(app, bucket)
    data, echo = read_value(value)
    with _fence_explained(handle), _key_named(handle, key), _bucket_explained(handle.name):
        new = handle.update(key, data, revision)
    app.emit(_written(handle.name, key, new, "PUT"), human=_echo(echo))


@kv_app.command("del")
def delete(
    ctx: typer.Context,
    bucket: BucketArg,
    key: OptionalKeyArg = None,
    force: Annotated[bool, force_option("Delete")] = False,
    json_output: JsonOption = False,
) -> None:
    """Delete a key (without KEY: the bucket).

    With KEY: stores a delete marker. Without KEY: removes the bucket (natscli's kv del and
    kv rm are one verb). Asks for confirmation on a terminal; without one, -f/--force is
    required. Prints nothing (as natscli); with --json: {"bucket", "key", "revision",
    "operation": "DEL"}, or {"success": true} for a bucket.
    """
    _delete(App.of(ctx), bucket, key, force)


@kv_app.command("compact")
def compact(
    ctx: typer.Context,
    bucket: BucketArg,
    force: Annotated[bool, force_option("Compact")] = False,
    json_output: JsonOption = False,
) -> None:
    """Reclaim the space of deleted keys.

    natscli's kv compact (nats.go's PurgeDeletes): every key whose latest entry is a delete
    or purge marker loses its history; the marker goes too when it is older than 30
    minutes (a younger one stays, so watchers still see the key deleted). Asks for
    confirmation on a terminal; without one, -f/--force is required. Prints nothing (as
    natscli); with --json: {"success": true, "keys": keys compacted, "purged": messages
    removed}.
    """
    app = App.of(ctx)
    handle = open_bucket(app, bucket)
    output.confirm(
        app,
        f"Purge all historic values and audit trails for deleted keys in bucket {handle.name}?",
        force=force,
        action=f"compact bucket {handle.name}",
    )
    done = handle.purge_deletes()
    app.emit({"success": True, **done}, human=_silent)


@kv_app.command("purge")
def purge(
    ctx: typer.Context,
    bucket: BucketArg,
    key: KeyArg,
    ttl: Annotated[
        str | None,
        _opt(
            "--ttl",
            metavar="DURATION",
            parser=DURATION,
            help="How long the purge marker lives (the bucket needs --marker-ttl).",
        ),
    ] = None,
    force: Annotated[bool, force_option("Purge")] = False,
    json_output: JsonOption = False,
) -> None:
    """Purge a key: remove its values and history.

    Leaves one purge marker. Asks for confirmation on a terminal; without one, -f/--force
    is required. Prints nothing (as natscli); with --json: {"bucket", "key", "revision",
    "operation": "PURGE"}.
    """
    from jetlink.cli.stream_flags import parse_duration_flag

    app = App.of(ctx)
    ttl_ns = parse_duration_flag(ttl, flag="--ttl") if ttl is not None else None
    handle = open_bucket(app, bucket)
    output.confirm(
        app,
        f"Purge key {handle.name} > {key}?",
        force=force,
        action=f"purge key {key} of bucket {handle.name}",
    )
    with _fence_explained(handle), _key_named(handle, key):
        revision = handle.purge(key, ttl=ttl_ns or None)
    app.emit(_written(handle.name, key, revision, "PURGE"), human=_silent)


@kv_app.command("revert")
def revert(
    ctx: typer.Context,
    bucket: BucketArg,
    key: KeyArg,
    revision: RevisionArg,
    force: Annotated[bool, force_option("Revert")] = False,
    json_output: JsonOption = False,
) -> None:
    """Store a key's value at REVISION again.

    The value the key had at REVISION becomes its latest value (a new revision). On a
    terminal it shows that value and asks for confirmation; without one, -f/--force is
    required. Then prints the key's history; with --json: {"bucket", "key", "revision",
    "operation": "PUT"}.
    """
    app = App.of(ctx)
    handle = open_bucket(app, bucket)
    if not force and output.is_interactive():
        with _key_named(handle, key, revision):
            old = handle.get(key, revision=revision)
        output.line(app, f"Revision: {old.revision}")
        output.line(app)
        output.line(app, _short(old.value, TABLE_SHOW_MAX))
        output.line(app)
    output.confirm(
        app,
        f"Really revert to revision {revision}",
        force=force,
        action=f"revert key {key} of bucket {handle.name} to revision {revision}",
    )
    with _key_named(handle, key, revision):
        new = handle.revert(key, revision)
    doc = _written(handle.name, key, new, "PUT")
    app.emit(doc, human=lambda a, d: render_history(a, handle.name, key, handle.history(key)))


# -- reads --------------------------------------------------------------------------------------


def _short(value: bytes, limit: int) -> str:
    """A value in a table cell: :func:`printable`, cut to ``first15...last15`` past ``limit``."""
    text = printable(value)
    if len(text) > limit:
        return text[:15] + "..." + text[-15:]
    return text


@kv_app.command("get")
def get(
    ctx: typer.Context,
    bucket: BucketArg,
    key: KeyArg,
    revision: Annotated[
        int | None,
        _opt("--revision", metavar="N", min=0, max=UINT64_MAX,
             help="Get this revision of the key (0: the latest, as natscli)."),
    ] = None,
    raw: Annotated[
        bool, typer.Option("--raw", help="Show only the value, exactly as stored.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Get a key's value.

    The latest value, or the one at --revision N; a deleted or purged key is "key not
    found" (10037). From the cluster of a KV mirror, a get of the mirrored bucket is served
    by the mirror. With --json: the Entry (bucket, key, value as base64, revision, created,
    delta, operation) and served_by, the stream that answered.
    """
    show_entry(App.of(ctx), bucket, key, revision=revision or None, raw=raw)


@kv_app.command("history")
def history(
    ctx: typer.Context,
    bucket: BucketArg,
    key: Annotated[str, typer.Argument(
        metavar="KEY", help="Key, or a key filter (wildcards * and > allowed).",
        show_default=False)],
    json_output: JsonOption = False,
) -> None:
    """Show every stored revision of a key.

    Table of Key, Revision, Op, Created, Length, Value (oldest first, deletes and purges
    included). A KEY with wildcards (users.*, >) shows every revision of the keys it
    matches, in revision order, as nats.go's History. With --json: the list of Entries.
    A "*" or ">" inside a token (a*) is literal text, as nats.go takes it: such a filter
    matches no key, said on stderr.
    """
    app = App.of(ctx)
    handle = open_bucket(app, bucket)
    _literal_wildcards_said(app, [key])
    with _key_named(handle, key):
        entries = handle.history(key)
    app.emit(
        [e.to_json() for e in entries],
        human=lambda a, d: render_history(a, handle.name, key, entries),
    )


def render_history(app: App, bucket: str, key: str, entries: list[Entry]) -> None:
    rows = [
        [
            e.key,
            str(e.revision),
            OPERATION_NAMES.get(e.operation, "UNKNOWN"),
            output.local_ns(e.created),
            output.comma(len(e.value)),
            _short(e.value, TABLE_SHOW_MAX),
        ]
        for e in entries
    ]
    output.table(
        app,
        ("Key", "Revision", "Op", "Created", "Length", "Value"),
        rows,
        title=f"History for {bucket} > {key}",
        no_wrap=("Key", "Revision", "Op", "Created", "Length"),
    )


@kv_app.command("keys")
def keys(
    ctx: typer.Context,
    bucket: BucketArg,
    filters: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[FILTER]...",
            help="Only keys matching these filters (wildcards * and > allowed).",
            show_default=False,
        ),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """List the keys of a bucket.

    One key per line (sorted), deleted and purged keys left out; "No keys found in bucket"
    on stderr when there is none. With --json: the list of keys. A "*" or ">" inside a token (a*) is
    literal text, as nats.go takes it: such a filter matches no key, said on stderr.
    """
    _keys(App.of(ctx), bucket, filters or [])


def _literal_wildcards_said(app: App, filters: list[str]) -> None:
    """A notice for each filter with a ``*`` or ``>`` inside a longer token (``a*``): taken
    as nats.go's searchKeyValid takes it, literal text to the server, so it matches no key
    (a wildcard is a whole token)."""
    from jetlink.core.config.kvnames import literal_wildcards, validate_search_key
    from jetlink.core.errors import JetlinkError

    for f in filters:
        try:  # (a filter refused is said by its refusal alone)
            tokens = literal_wildcards(validate_search_key(f))
        except JetlinkError:
            continue
        if tokens:
            output.notice(app, f"jetlink: notice: key filter {f!r} matches no key: \"*\" "
                          "and \">\" are wildcards only as a whole token (a.*, a.>); in "
                          f"{', '.join(tokens)} they are literal text, which no valid key holds")


def _keys(app: App, bucket: str, filters: list[str]) -> None:
    handle = open_bucket(app, bucket)
    _literal_wildcards_said(app, filters)
    found = handle.keys(filters)

    def human(a: App, names: list[str]) -> None:
        if not names:
            output.notice(a, "No keys found in bucket")
        output.lines(a, names)

    app.emit(found, human=human)


def _keys_verbose(app: App, bucket: str, filters: list[str], values: bool) -> None:
    """natscli's ``kv ls -v`` (displayKeyInfo): each key's latest entry."""
    handle = open_bucket(app, bucket)
    _literal_wildcards_said(app, filters)
    entries = handle.latest(filters)

    def human(a: App, docs: list[dict[str, Any]]) -> None:
        if not entries:
            output.notice(a, "No keys found in bucket")
            return
        headers = ("Key", "Created", "Delta", "Revision", *(("Value",) if values else ()))
        rows = []
        for e in entries:
            row = [e.key, output.local_ns(e.created), str(e.delta), str(e.revision)]
            if values:  # as get and history show it (natscli's Base64IfNotPrintable)
                row.append(printable(e.value))
            rows.append(row)
        output.table(a, headers, rows, title=f"Contents for bucket '{handle.name}'")

    app.emit([e.to_json() for e in entries], human=human)


@kv_app.command("watch")
def watch(
    ctx: typer.Context,
    bucket: BucketArg,
    keys: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[KEYS]...",
            help="Watch only keys matching these filters (default: all keys).",
            show_default=False,
        ),
    ] = None,
    history: Annotated[
        bool, typer.Option("--history", help="Start with every stored revision, not the latest.")
    ] = False,
    deletes: Annotated[
        bool,
        typer.Option(
            "--deletes/--no-deletes", help="Include deletes and purges (--no-deletes: leave "
            "them out)."
        ),
    ] = True,
    ignore_deletes: Annotated[
        bool,
        typer.Option("--ignore-deletes", help="Leave out deletes and purges (as --no-deletes)."),
    ] = False,
    meta_only: Annotated[
        bool, typer.Option("--meta-only", help="Leave out the values.")
    ] = False,
    updates_only: Annotated[
        bool,
        typer.Option(
            "--updates-only", "--updates", help="Show only changes made from now on."
        ),
    ] = False,
    revision: Annotated[
        int | None,
        _opt("--revision", metavar="REVISION", min=0, max=UINT64_MAX,
             help="Start from this revision: every entry from it on (natscli's --revision; "
                  "0: none)."),
    ] = None,
    count: Annotated[
        int | None,
        _opt("--count", metavar="N", min=1, help="Stop after N entries."),
    ] = None,
    timeout: Annotated[
        str | None,
        _opt(
            "--timeout",
            metavar="DURATION", parser=WAIT,
            help="Stop when nothing arrives for this long (e.g. 5s; 0: never, as without it).",
        ),
    ] = None,
    json_output: JsonLinesOption = False,
) -> None:
    """Watch a bucket for changes.

    First the latest entry of every matching key (--history: every stored entry;
    --updates-only: none; --revision N: every entry from revision N on), then the end of the
    initial data (always signalled, also for an empty bucket: "End of initial data" on
    stderr), then every change as it is stored, until --count N entries, --timeout
    DURATION without one, or Ctrl-C (exit status 130).
    Lines as natscli: [TIME] PUT BUCKET > KEY: VALUE, [TIME] DELETE BUCKET > KEY.

    With --json: JSON lines, one Entry per line, and {"end_of_initial_data": true} when the
    initial data has been delivered. A "*" or ">" inside a token (a*) is
    literal text, as nats.go takes it: such a filter matches no key, said on stderr.
    """
    app = App.of(ctx)
    if ignore_deletes and common.parameter_source(ctx, "deletes") == "COMMANDLINE" and deletes:
        raise usage("--deletes and --ignore-deletes contradict each other: give one")
    if history and updates_only:  # (nats.go's error for the watcher itself: its words)
        raise usage("--history and --updates-only contradict each other: a watcher can not "
                    "both include history and send only updates")
    idle_ns = None
    if timeout is not None:
        from jetlink.cli.stream_flags import parse_duration_flag

        idle_ns = parse_duration_flag(timeout, flag="--timeout", wait=True)
    from jetlink.core.interrupts import interrupt_once

    handle = open_bucket(app, bucket)
    _literal_wildcards_said(app, keys or [])
    with interrupt_once():  # (a second Ctrl-C never cuts the watch's clean-up short)
        _watch(app, handle, keys, history=history,
               ignore_deletes=ignore_deletes or not deletes, meta_only=meta_only,
               updates_only=updates_only, revision=revision or None, idle_ns=idle_ns,
               count=count)


def _watch(app: App, handle: Any, keys: list[str] | None, *, history: bool,
           ignore_deletes: bool, meta_only: bool, updates_only: bool, revision: int | None,
           idle_ns: int | None, count: int | None) -> None:
    """The watch of ``handle`` (a bucket) until --count, --timeout or Ctrl-C; its consumer
    (on a server) deleted at the end."""
    from jetlink.core.interrupts import interrupt_deferred, no_interrupt
    from jetlink.core.kv import END_OF_INITIAL_DATA

    watcher = None
    received = 0
    try:
        # (a Ctrl-C while a live watch's consumer is made takes effect once it is: in this
        # try, whose end deletes it; two Ctrl-C while it ends do not cut that short)
        with interrupt_deferred():
            watcher = handle.watch(
                list(keys or []),
                include_history=history,
                ignore_deletes=ignore_deletes,
                meta_only=meta_only,
                updates_only=updates_only,
                revision=revision or 0,
            )
        for item in common.follow(watcher.next, idle_ns, POLL_SECONDS):
            if item is END_OF_INITIAL_DATA:
                if app.json:
                    output.json_line({"end_of_initial_data": True}, app)
                else:
                    output.notice(app, "End of initial data")
                continue
            received += 1
            if app.json:
                output.json_line(item.to_json(), app)
            else:
                render_watched(app, item, meta_only=meta_only)
            if count is not None and received >= count:
                break
    finally:
        if watcher is not None:
            with no_interrupt():
                watcher.stop()


def warn_renamed_mirror(app: App, bucket: str, origin: str) -> None:
    """The warning for a KV mirror ``bucket`` of ``origin`` made under another name (core's
    ``mirror_name_problem``): readable as it is, the DR verbs refuse it: said when it is
    made, not at 3 a.m."""
    from jetlink.core.config.kvnames import kv_stream_name, mirror_name_problem

    problem = mirror_name_problem(kv_stream_name(bucket), origin)
    if problem:
        output.notice(app, f"jetlink: warning: {problem}: kv promote and kv failover refuse "
                           f"it, and dr check grades it CRITICAL; name it {origin} to fail it "
                           "over")


def render_watched(app: App, entry: Entry, *, meta_only: bool = False) -> None:
    """natscli's watch lines: ``[TIME] PUT B > K: VALUE`` (the value as stored),
    ``[TIME] DELETE B > K``; the operation green or red on a colour terminal."""
    op = OPERATION_NAMES.get(entry.operation, "UNKNOWN")
    shown = op
    if app.color:
        shown = f"\x1b[{32 if op == 'PUT' else 31}m{op}\x1b[0m"
    head = f"[{output.local_ns(entry.created)}] {shown} {entry.bucket} > {entry.key}"
    if op == "PUT" and not meta_only:
        head += ": " + entry.value.decode("utf-8", "backslashreplace")
    output.line(app, head)


def register(app: typer.Typer) -> None:
    app.add_typer(kv_app, name="kv")
