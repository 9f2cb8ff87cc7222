"""KV buckets, KV mirrors and KV aggregates, as the NATS clients build them (ADR-8).

A bucket is a stream; every class here maps to the ``StreamConfig`` the real clients would
send, so every stream rule (``config.validate``) and every topology rule applies to buckets
unchanged.

``KeyValueConfig``    -> stream ``KV_<bucket>`` (section "Buckets"; nats.go's
                         ``prepareKeyValueConfig``), legacy ``mirror`` / ``sources`` included.
``KVMirrorConfig``    -> a read-only mirror of ``KV_<origin_bucket>`` ("Creation of Mirrors").
``KVAggregateConfig`` -> ``KV_<bucket>`` sourcing one or more buckets with subject transforms
                         ("Creation of Aggregates").

Choices where ADR-8 leaves room (documented in docs/topology.md too):

* KV mirror key filters: no keys (or the single key ``>``) mirror the whole bucket; ONE key
  becomes ``mirror.filter_subject = "$KV.<origin>.<key>"``; SEVERAL keys become
  ``mirror.subject_transforms = [{"src": "$KV.<origin>.<key>", "dest": ""}, ...]`` - an empty
  destination means "no transform" (ADR-30), so the mirror keeps the origin's subjects. An
  identical destination is not used because a destination may not contain ``*``.
* Aggregate key filters select keys; they never rename them: the transform maps the origin
  bucket's subject space onto the aggregate's and keeps every token of the key
  (``$KV.CFG.app.>`` -> ``$KV.AGG.app.>``, ``NEW.*.items`` ->
  ``NEW.{{wildcard(1)}}.items``), so ``app.other`` in CFG is ``app.other`` in AGG. This is
  what nats.go does for a KV source (``$KV.<origin>.>`` -> ``$KV.<bucket>.>``), so that a
  key reads the same in both buckets. ADR-8's own example (``$KV.ORDERS.NEW.>`` ->
  ``$KV.NEW_ORDERS.>``) drops the filtered prefix; jetlink does not follow that example
  (docs/topology.md says why).
* A read-only aggregate has ``deny_purge`` (ADR-8) and therefore ``allow_rollup_hdrs = false``
  (the server refuses "roll-ups require the purge permission"); a writable one is a normal
  bucket (rollups on, purge allowed) with sources.
* A KV mirror (``kv add KM --mirror KB``) is the stream nats.go's CreateKeyValue builds for
  a ``KeyValueConfig`` with ``Mirror`` (jetstream/kv.go ``prepareKeyValueConfig``; natscli's
  ``kv add --mirror`` calls it): the bucket's stream ``KV_KM`` with every bucket setting
  (history default 1, discard ``new``, ``allow_direct``, ``allow_rollup_hdrs``,
  ``deny_delete``, the duplicate window sent as 2m or the TTL when shorter), ``mirror`` =
  ``KV_KB``, ``mirror_direct`` and no subjects. ADR-8's "Creation of Mirrors" sketches a
  mirror named without the ``KV_`` prefix, with purges denied; no client builds that, and
  jetlink made such mirrors (the stream ``KM`` itself) before following nats.go: they still
  open, list and promote (core/kv.py). jetlink refuses writes through a mirror's name;
  nats.go sends them to the origin's subjects.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from ..durations import DURATION_FORMS, MINUTE, SECOND, DurationError, parse_duration
from ..errors import (
    ApiError,
    JetlinkError,
    client_error,
    invalid_config,
    value_kind,
    value_text,
)
from .kvnames import (
    ERR_INVALID_BUCKET,
    KV_STREAM_PREFIX,
    bucket_of_stream,
    kv_stream_name,
    kv_subjects,
    validate_bucket_name,
    validate_key,
    validate_key_filter,
    validate_search_key,
)
from .stream import (
    STORAGE,
    ExternalStream,
    Placement,
    RePublish,
    StorageType,
    StreamConfig,
    StreamSource,
    SubjectTransformConfig,
    _JsonMixin,
)

__all__ = [
    "KV_HISTORY_MAX",
    "KV_STREAM_PREFIX",
    "KVAggregateConfig",
    "KVAggregateOrigin",
    "KVMirrorConfig",
    "KeyValueConfig",
    "aggregate_transform",
    "bucket_of_stream",
    "check_kv_mirror",
    "kv_duplicate_window",
    "kv_subjects",
    "validate_bucket_name",
    "validate_key",
    "validate_key_filter",
    "validate_search_key",
]

KV_HISTORY_MAX = 64
DUPLICATE_WINDOW_MAX = 2 * MINUTE

ERR_HISTORY_TOO_LARGE = "nats: history limited to a max of 64"


# --------------------------------------------------------------------------- shared rules


def kv_duplicate_window(ttl: int, *, copies: bool = False) -> int:
    """ADR-8: TTL > 2m -> 2m; 0 < TTL <= 2m -> TTL; no TTL -> 0 (unset, server uses 2m).
    ``copies``: a bucket with a mirror or sources, for which the server's checkStreamCfg
    fills in no default, gets the 2m nats.go's prepareKeyValueConfig sends for every bucket."""
    if ttl <= 0:
        return DUPLICATE_WINDOW_MAX if copies else 0
    return min(ttl, DUPLICATE_WINDOW_MAX)


def _history(history: Any, owner: str) -> int:
    if isinstance(history, bool) or not isinstance(history, int):
        raise client_error(
            f"nats: invalid history {history!r} for {owner}: history must be an integer 1..64",
            field="history",
        )
    if history == 0:
        return 1  # nats.go: 0 means the default (1)
    if history > KV_HISTORY_MAX:
        raise client_error(
            f"{ERR_HISTORY_TOO_LARGE}: history {history} for {owner} is out of range; "
            "history (values kept per key) must be 1..64",
            field="history",
        )
    if history < 0:
        raise client_error(
            f"nats: invalid history {history} for {owner}: history (values kept per key) "
            "must be 1..64",
            field="history",
        )
    return history


def _limit_markers(limit_marker_ttl: int) -> tuple[bool, int]:
    """(allow_msg_ttl, subject_delete_marker_ttl) for a limit marker TTL (0 = no markers)."""
    if not limit_marker_ttl:
        return False, 0
    if limit_marker_ttl < 0:
        raise invalid_config(
            "subject delete marker TTL must not be negative", field="limit_marker_ttl"
        )
    if limit_marker_ttl < SECOND:
        # The server's rule and text (ADR-8: "must be a duration longer than a second").
        raise invalid_config(
            "subject delete marker TTL must be at least 1 second", field="limit_marker_ttl"
        )
    return True, limit_marker_ttl


def _unlimited(value: int) -> int:
    """nats.go: 0 (not set) becomes -1 (unlimited), so configs compare equal after create."""
    return value if value else -1


def _external(external: ExternalStream | None, domain: str) -> ExternalStream | None:
    if external is not None:
        return external.copy()
    if domain:
        return ExternalStream(api=f"$JS.{domain}.API")
    return None


def _copy(value: Any) -> Any:
    return value.copy() if value is not None else None


# --------------------------------------------------------------------------- buckets


@dataclass
class KeyValueConfig:
    """A KV bucket (nats.go ``jetstream.KeyValueConfig``). Durations are nanoseconds.

    ``allow_direct`` is not a client option: buckets always get it (ADR-8); it is kept
    here so a bucket whose stream was changed out of band (or created by a client that leaves
    it off, like nats-py) can be read back and described.
    """

    bucket: str
    description: str = ""
    max_value_size: int = 0  # 0 = unlimited (-1 in the stream)
    history: int = 1
    ttl: int = 0
    max_bytes: int = 0  # 0 = unlimited (-1 in the stream)
    storage: StorageType = "file"
    replicas: int = 1
    placement: Placement | None = None
    republish: RePublish | None = None
    mirror: StreamSource | None = None
    sources: list[StreamSource] = field(default_factory=list)
    compression: bool = False
    metadata: dict[str, str] = field(default_factory=dict)
    limit_marker_ttl: int = 0
    allow_direct: bool = True

    @property
    def stream_name(self) -> str:
        return kv_stream_name(self.bucket)

    def to_stream_config(self) -> StreamConfig:
        """The stream the clients create for this bucket (ADR-8 "Buckets")."""
        cfg = _bucket_stream(self, allow_direct=self.allow_direct,
                             copies=self.mirror is not None or bool(self.sources))
        if self.mirror is not None:
            # nats.go: the mirror is named by bucket or stream; KV_ is added when missing.
            m = self.mirror.copy()
            if not m.name.startswith(KV_STREAM_PREFIX):
                m.name = kv_stream_name(m.name)
            cfg.mirror = m
            cfg.mirror_direct = True
        else:
            for src in self.sources:
                s = src.copy()
                if not s.subject_transforms:
                    origin = bucket_of_stream(s.name)
                    if origin is None:
                        origin, s.name = s.name, kv_stream_name(s.name)
                    if s.external is None or origin != self.bucket:
                        s.subject_transforms = [
                            SubjectTransformConfig(
                                src=kv_subjects(origin), dest=kv_subjects(self.bucket)
                            )
                        ]
                cfg.sources.append(s)
            cfg.subjects = [kv_subjects(self.bucket)]
        return cfg

    @classmethod
    def from_stream_config(cls, cfg: StreamConfig) -> KeyValueConfig:
        """Read a bucket back from its stream (``KV_<bucket>``). Unlimited sizes read as 0."""
        bucket = bucket_of_stream(cfg.name)
        if bucket is None:
            raise client_error(
                f'{ERR_INVALID_BUCKET} "{cfg.name}": stream "{cfg.name}" is not a KV bucket '
                f'(bucket streams are named "{KV_STREAM_PREFIX}<bucket>")',
                field="name",
            )
        return cls(
            bucket=bucket,
            description=cfg.description,
            max_value_size=max(cfg.max_msg_size, 0),
            history=max(cfg.max_msgs_per_subject, 1),
            ttl=cfg.max_age,
            max_bytes=max(cfg.max_bytes, 0),
            storage=cfg.storage,
            replicas=cfg.num_replicas or 1,
            placement=_copy(cfg.placement),
            republish=_copy(cfg.republish),
            mirror=_copy(cfg.mirror),
            sources=[s.copy() for s in cfg.sources],
            compression=cfg.compression == "s2",
            metadata=dict(cfg.metadata),
            limit_marker_ttl=cfg.subject_delete_marker_ttl,
            allow_direct=cfg.allow_direct,
        )

    @classmethod
    def from_dict(cls, doc: Any, *, bucket: str | None = None) -> KeyValueConfig:
        """From a topology table (durations as ns or ``"24h"``); unknown keys are refused."""
        return _from_dict(cls, doc, {"bucket": bucket} if bucket is not None else {})


# --------------------------------------------------------------------------- mirrors


@dataclass
class KVMirrorConfig:
    """A mirror bucket of one bucket, as nats.go's CreateKeyValue with ``Mirror`` makes it.

    ``name`` is the mirror bucket's name: its stream is ``KV_<name>`` (nats.go jetstream/kv.go
    ``prepareKeyValueConfig``), the mirror ``KV_<origin_bucket>``. A name given with the
    ``KV_`` prefix is the stream's name as is. A KV mirror made before this rule is a stream
    named ``<name>`` itself; ``jetlink.core.kv`` still opens, lists and promotes it.
    The stream is :meth:`KeyValueConfig.to_stream_config` of the same settings with the
    mirror (one mapping): ``history`` 0 is nats.go's default, 1. ``keys`` empty mirrors all
    keys (else the filter of the module doc, jetlink's addition). ``domain`` is shorthand for
    ``external = ExternalStream(api="$JS.<domain>.API")``.
    """

    name: str
    origin_bucket: str
    description: str = ""
    replicas: int = 1
    history: int = 1  # 0 is nats.go's default too: 1
    ttl: int = 0
    max_bytes: int = 0
    max_value_size: int = 0
    storage: StorageType = "file"
    placement: Placement | None = None
    keys: list[str] = field(default_factory=list)
    external: ExternalStream | None = None
    domain: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    compression: bool = False

    @property
    def origin_stream(self) -> str:
        return kv_stream_name(self.origin_bucket)

    def filter_source(self) -> StreamSource:
        """The ``mirror`` agreement: origin stream plus the key filter (see module doc)."""
        validate_bucket_name(self.origin_bucket, field="origin_bucket")
        src = StreamSource(name=self.origin_stream, external=_external(self.external, self.domain))
        keys = [validate_key_filter(k, field=f"keys[{i}]") for i, k in enumerate(self.keys)]
        if keys == [">"]:
            keys = []
        prefix = f"$KV.{self.origin_bucket}."
        if len(keys) == 1:
            src.filter_subject = prefix + keys[0]
        elif keys:
            src.subject_transforms = [SubjectTransformConfig(src=prefix + k, dest="") for k in keys]
        return src

    @property
    def stream_name(self) -> str:
        """``KV_<name>`` (nats.go's name for a mirror bucket), or ``name`` when it has the
        ``KV_`` prefix already."""
        if not isinstance(self.name, str) or not self.name:
            raise client_error("a KV mirror needs a name (the mirror bucket's name)",
                               field="name")
        if bucket_of_stream(self.name) is not None:
            return self.name
        validate_bucket_name(self.name, field="name")
        return kv_stream_name(self.name)

    def to_stream_config(self) -> StreamConfig:
        stream = self.stream_name
        bucket = bucket_of_stream(stream)
        assert bucket is not None
        if self.storage not in STORAGE:
            raise client_error(
                f'invalid storage "{self.storage}" for KV mirror "{self.name}": '
                'storage must be "file" or "memory"',
                field="storage",
            )
        return KeyValueConfig(
            bucket=bucket,
            description=self.description,
            max_value_size=self.max_value_size,
            history=self.history,
            ttl=self.ttl,
            max_bytes=self.max_bytes,
            storage=self.storage,
            replicas=self.replicas,
            placement=_copy(self.placement),
            mirror=self.filter_source(),
            metadata=dict(self.metadata),
            compression=self.compression,
        ).to_stream_config()

    @classmethod
    def from_dict(cls, doc: Any, *, name: str | None = None) -> KVMirrorConfig:
        return _from_dict(cls, doc, {"name": name} if name is not None else {})


def check_kv_mirror(cfg: KVMirrorConfig, origin: StreamConfig | None) -> StreamConfig:
    """The mirror's StreamConfig, after confirming the origin bucket has ``allow_direct``.

    ``origin`` is the origin bucket's stream when known; None skips the check (the origin
    lives elsewhere; a missing origin is reported by whoever resolved it).
    """
    scfg = cfg.to_stream_config()
    if origin is not None and not origin.allow_direct:
        raise client_error(
            f'KV mirror "{cfg.name}": origin bucket "{cfg.origin_bucket}" (stream '
            f'"{origin.name}") does not have allow_direct set; a KV mirror can only serve '
            "direct gets for an origin with allow_direct (ADR-8 \"Creation of Mirrors\")",
            field="origin_bucket",
        )
    return scfg


# --------------------------------------------------------------------------- aggregates


@dataclass
class KVAggregateOrigin:
    """One origin of an aggregate. ``stream`` defaults to ``KV_<bucket>``; ``bucket`` to the
    stream name without ``KV_`` (needed when the origin is a mirror, which is not a bucket).
    ``keys`` empty means all keys (``>``)."""

    stream: str = ""
    bucket: str = ""
    keys: list[str] = field(default_factory=list)
    external: ExternalStream | None = None
    domain: str = ""

    def external_stream(self) -> ExternalStream | None:
        """Where its stream is: ``external``, else ``$JS.<domain>.API``, else here."""
        return _external(self.external, self.domain)

    def resolved(self, index: int = 0) -> tuple[str, str]:
        """(stream, bucket) with the defaults applied."""
        where = f"origins[{index}]"
        stream, bucket = self.stream, self.bucket
        if not bucket:
            bucket = (bucket_of_stream(stream) if stream else None) or ""
            if not bucket:
                raise client_error(
                    f'aggregate origin stream "{stream}" is not named KV_<bucket>: give the '
                    "origin's bucket name too (needed to map its keys)"
                    if stream
                    else "an aggregate origin needs a bucket (or a stream and a bucket)",
                    field=f"{where}.bucket",
                )
        validate_bucket_name(bucket, field=f"{where}.bucket")
        return stream or kv_stream_name(bucket), bucket


def aggregate_transform(origin_bucket: str, key: str, bucket: str) -> SubjectTransformConfig:
    """Map origin key pattern ``key`` into aggregate ``bucket``, keys kept (module doc).

    ``("CFG", "app.>", "AGG")`` -> ``$KV.CFG.app.>`` -> ``$KV.AGG.app.>``.
    """
    out: list[str] = []
    n = 0
    for tok in key.split("."):
        if tok == "*":
            n += 1
            out.append(f"{{{{wildcard({n})}}}}")
        else:
            out.append(tok)
    return SubjectTransformConfig(
        src=f"$KV.{origin_bucket}.{key}", dest=f"$KV.{bucket}." + ".".join(out)
    )


@dataclass
class KVAggregateConfig:
    """A bucket sourcing other buckets (ADR-8 "Creation of Aggregates")."""

    bucket: str
    writable: bool = False
    description: str = ""
    replicas: int = 1
    max_value_size: int = 0
    history: int = 1
    ttl: int = 0
    max_bytes: int = 0
    storage: StorageType = "file"
    placement: Placement | None = None
    republish: RePublish | None = None
    origins: list[KVAggregateOrigin] = field(default_factory=list)
    compression: bool = False
    metadata: dict[str, str] = field(default_factory=dict)
    limit_marker_ttl: int = 0

    def sources(self) -> list[StreamSource]:
        out = []
        for i, origin in enumerate(self.origins):
            stream, bucket = origin.resolved(i)
            keys = origin.keys or [">"]
            transforms = [
                aggregate_transform(
                    bucket, validate_key_filter(k, field=f"origins[{i}].keys[{j}]"), self.bucket
                )
                for j, k in enumerate(keys)
            ]
            out.append(
                StreamSource(
                    name=stream,
                    subject_transforms=transforms,
                    external=_external(origin.external, origin.domain),
                )
            )
        return out

    def to_stream_config(self) -> StreamConfig:
        validate_bucket_name(self.bucket)
        if not self.origins:
            raise client_error(
                f'aggregate "{self.bucket}" has no origins: an aggregate sources at least one '
                "bucket",
                field="origins",
            )
        base = _bucket_stream(self, copies=True)
        base.subjects = [kv_subjects(self.bucket)]
        base.sources = self.sources()
        if not self.writable:
            base.subjects = []
            base.deny_delete = True
            base.deny_purge = True
            base.allow_rollup_hdrs = False  # "roll-ups require the purge permission"
        return base

    @classmethod
    def from_dict(cls, doc: Any, *, bucket: str | None = None) -> KVAggregateConfig:
        return _from_dict(cls, doc, {"bucket": bucket} if bucket is not None else {})


# --------------------------------------------------------------------------- the stream


def _kv_stream(
    kv: KeyValueConfig | KVAggregateConfig,
    name: str,
    history: int,
    **rules: Any,
) -> StreamConfig:
    """The KV -> stream mapping every KV object shares (limits retention, no subjects,
    unlimited consumers and messages, 0 sizes as -1, history per key, no deletes); ``rules``
    are the bucket settings :func:`_bucket_stream` adds (a mirror bucket is a bucket with a
    mirror: :meth:`KVMirrorConfig.to_stream_config`)."""
    return StreamConfig(
        name=name,
        description=kv.description,
        subjects=[],
        retention="limits",
        max_consumers=-1,
        max_msgs=-1,
        max_bytes=_unlimited(kv.max_bytes),
        max_age=kv.ttl,
        max_msgs_per_subject=history,
        max_msg_size=_unlimited(kv.max_value_size),
        storage=kv.storage,
        num_replicas=kv.replicas or 1,
        placement=_copy(kv.placement),
        deny_delete=True,
        metadata=dict(kv.metadata),
        **rules,
    )


def _bucket_stream(
    kv: KeyValueConfig | KVAggregateConfig, *, allow_direct: bool = True, copies: bool = False
) -> StreamConfig:
    """A bucket's stream (ADR-8 "Buckets") before its mirror, sources and subjects: the
    settings buckets and aggregates share."""
    validate_bucket_name(kv.bucket)
    history = _history(kv.history, f'bucket "{kv.bucket}"')
    allow_msg_ttl, marker_ttl = _limit_markers(kv.limit_marker_ttl)
    if kv.storage not in STORAGE:
        raise client_error(
            f'invalid storage "{kv.storage}" for bucket "{kv.bucket}": '
            'storage must be "file" or "memory"',
            field="storage",
        )
    return _kv_stream(
        kv,
        kv_stream_name(kv.bucket),
        history,
        discard="new",
        duplicate_window=kv_duplicate_window(kv.ttl, copies=copies),
        compression="s2" if kv.compression else "none",
        republish=_copy(kv.republish),
        allow_direct=allow_direct,
        allow_rollup_hdrs=True,
        allow_msg_ttl=allow_msg_ttl,
        subject_delete_marker_ttl=marker_ttl,
    )


# --------------------------------------------------------------------------- table decoding

# Per class: key -> kind. Kinds: str, int, bool, duration, placement, republish, external,
# metadata, strlist, sources, source, origins.
_SCHEMAS: dict[type, dict[str, str]] = {
    KeyValueConfig: {
        "bucket": "str", "description": "str", "max_value_size": "int", "history": "int",
        "ttl": "duration", "max_bytes": "int", "storage": "str", "replicas": "int",
        "placement": "placement", "republish": "republish", "mirror": "source",
        "sources": "sources", "compression": "bool", "metadata": "metadata",
        "limit_marker_ttl": "duration", "allow_direct": "bool",
    },
    KVMirrorConfig: {
        "name": "str", "origin_bucket": "str", "description": "str", "replicas": "int",
        "history": "int", "ttl": "duration", "max_bytes": "int", "max_value_size": "int",
        "storage": "str", "placement": "placement", "keys": "strlist",
        "external": "external", "domain": "str", "metadata": "metadata",
        "compression": "bool",
    },
    KVAggregateConfig: {
        "bucket": "str", "writable": "bool", "description": "str", "replicas": "int",
        "max_value_size": "int", "history": "int", "ttl": "duration", "max_bytes": "int",
        "storage": "str", "placement": "placement", "republish": "republish",
        "origins": "origins", "compression": "bool", "metadata": "metadata",
        "limit_marker_ttl": "duration",
    },
    KVAggregateOrigin: {
        "stream": "str", "bucket": "str", "keys": "strlist", "external": "external",
        "domain": "str",
    },
}


# The keys a topology table holds besides the class's own (read by the topology layer before
# the table is decoded): named among the allowed keys, and in a misspelling's suggestion
_PLACE_KEYS: dict[type, tuple[str, ...]] = {
    KeyValueConfig: ("cluster",), KVMirrorConfig: ("cluster", "origin_cluster"),
    KVAggregateConfig: ("cluster",), KVAggregateOrigin: ("cluster",)}


def schema_keys(cls: type) -> tuple[str, ...]:
    """The keys a topology table of ``cls`` may hold."""
    return tuple(_SCHEMAS[cls])


def _format_error(description: str, field: str | None) -> JetlinkError:
    return JetlinkError(description, field=field)


def _decode(kind: str, value: Any, path: str) -> Any:
    def bad(expected: str) -> JetlinkError:
        return _format_error(
            f"{path}: expected {expected}, got {value_kind(value)} {value_text(value)}", path
        )

    if kind == "str":
        if not isinstance(value, str):
            raise bad("a string")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise bad("true or false")
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad("an integer")
        return value
    if kind == "duration":
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise bad(f"a duration ({DURATION_FORMS})")
        try:
            return parse_duration(value)
        except DurationError as e:
            raise _format_error(f"{path}: {e}", path) from None
    if kind == "strlist":
        if not isinstance(value, list) or any(not isinstance(v, str) for v in value):
            raise bad("a list of strings")
        return list(value)
    if kind == "metadata":
        if not isinstance(value, dict) or any(not isinstance(v, str) for v in value.values()):
            raise bad("a table of strings")
        return dict(value)
    if kind == "origins":
        if not isinstance(value, list):
            raise bad("a list of tables")
        return [
            _from_dict(KVAggregateOrigin, v, {}, prefix=f"{path}[{i}]")
            for i, v in enumerate(value)
        ]
    cls: type[_JsonMixin] | None = {
        "placement": Placement,
        "republish": RePublish,
        "external": ExternalStream,
        "source": StreamSource,
    }.get(kind)
    if kind == "sources":
        if not isinstance(value, list):
            raise bad("a list of tables")
        return [_decode("source", v, f"{path}[{i}]") for i, v in enumerate(value)]
    if cls is None:  # pragma: no cover - schema typo
        raise AssertionError(kind)
    if not isinstance(value, dict):
        raise bad("a table")
    try:
        return cls.from_json(value, strict=True)
    except ApiError as e:
        sub = f"{path}.{e.field}" if e.field else path
        if "unknown field" in e.description:
            key = e.description.rsplit('"', 2)[-2] if '"' in e.description else "?"
            raise _format_error(f'unknown key "{key}" in {path}', f"{path}.{key}") from None
        raise _format_error(f"{path}: {e.description}", sub) from None


def _from_dict(cls: type, doc: Any, preset: dict[str, Any], *, prefix: str = "") -> Any:
    schema = _SCHEMAS[cls]
    where = prefix or cls.__name__
    if not isinstance(doc, dict):
        raise _format_error(f"{where}: expected a table, got {type(doc).__name__}", prefix or None)
    kwargs: dict[str, Any] = {}
    for key, value in doc.items():
        path = f"{prefix}.{key}" if prefix else key
        kind = schema.get(key)
        if kind is None:
            from ..errors import did_you_mean

            known = [*_PLACE_KEYS.get(cls, ()), *schema]
            hint = did_you_mean(key, known) if isinstance(key, str) else None
            raise _format_error(
                f'unknown key "{key}"' + (f" in {prefix}" if prefix else "")
                + (f"; {hint}" if hint else f" (allowed: {', '.join(known)})"),
                path,
            )
        if value is None:
            continue
        kwargs[key] = _decode(kind, value, path)
    for key, value in preset.items():
        kwargs.setdefault(key, value)
    required = [
        f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING
    ]
    for name in required:
        if name not in kwargs:
            raise _format_error(f'missing key "{name}"' + (f" in {prefix}" if prefix else ""), name)
    return cls(**kwargs)

