"""Stream configuration checks: create, update and the defaults the server fills in.

This reproduces nats-server 2.15's stream configuration checks (``checkStreamCfg``, the
stream create request and stream add path, ``configUpdateCheck``) for a single,
non-clustered server: same rules, same ORDER (the first failing rule is the one reported),
same error numbers and texts. Every error carries ``field``, the configuration field it is
about (``subjects``, ``mirror.subject_transforms[0].dest``, ``sources[1].name``, ...).

Three entry points:

- :func:`check_stream_config` - the shared checks and defaults (used by create and update).
- :func:`check_stream_create` - what a ``STREAM.CREATE`` request adds around them.
- :func:`check_stream_update` - what a ``STREAM.UPDATE`` request adds, plus the NATS documentation's
  "Editable" column where the server itself has no rule (see :data:`DIVERGENCES`).

Server metadata: on create and update the server stores ``_nats.req.level`` (the API level
the features in use require) in the stream's metadata, counting it toward the metadata size
limit, and adds ``_nats.ver`` / ``_nats.level`` only to responses. jetlink does the same:
:func:`check_stream_create` / :func:`check_stream_update` return configs holding
``_nats.req.level``; :func:`with_response_metadata` adds the two response-only keys.

Not reproduced (no such thing on a local engine): account/server resource limits (max
streams, max bytes required, server duplicate-window limit), cluster placement, and the
update check against existing consumers' limits. An update naming another stream is 10056
(the name travels in the request); "stream not found" (10059) belongs to the engine.
Like Go, a repeated create tells an absent list from an empty one (``"sources": []``) when it
compares with the stored config (10058): the decoder records which lists were given empty.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, Self, TypeVar, runtime_checkable

from ..errors import ApiError, JetlinkError, invalid_config, nats_error
from ..limits import CLUSTER_NAME_RE
from ..subjects import (
    SUBJECT_RULE,
    is_subset,
    is_valid_literal_subject,
    is_valid_publish_subject,
    is_valid_subject,
    overlaps,
)
from .codec import REQUIRED_LEVEL_KEY, SERVER_LEVEL_KEY, SERVER_VERSION_KEY, given_empty
from .stream import (
    COMPRESSION,
    DISCARD,
    RETENTION,
    STORAGE,
    StreamConfig,
    StreamSource,
)

__all__ = [
    "API_LEVEL",
    "DIVERGENCES",
    "DIVERGENCE_DETAILS",
    "SERVER_VERSION",
    "check_stream_config",
    "check_stream_create",
    "check_stream_update",
    "required_api_level",
    "with_response_metadata",
]

Lookup = Callable[[str], "StreamConfig | None"]


class _WithMetadata(Protocol):
    metadata: dict[str, str]

    def copy(self) -> Self: ...


# A StreamConfig or a ConsumerConfig: both carry the server-managed metadata keys.
_Config = TypeVar("_Config", bound=_WithMetadata)
_Error = TypeVar("_Error", bound=JetlinkError)

# --- the server's constants -------------------------------------------------------------
MS = 1_000_000
SECOND = 1_000 * MS
DEFAULT_DUPLICATE_WINDOW = 120 * SECOND
MIN_WINDOW = 100 * MS  # max_age and duplicate_window, when set
MAX_REPLICAS = 5
MAX_NAME_LEN = 255
MAX_DESCRIPTION_LEN = 4 * 1024
MAX_METADATA_LEN = 128 * 1024
JS_API_PREFIX = "$JS.API"
# Subject spaces a stream may only capture with no_ack, and the exceptions.
_JS_NAMESPACES = ("$JS.>", "$JSC.>", "$NRG.>")
_JS_EXCEPTION = "$JS.EVENT.>"
_SYS_NAMESPACE = "$SYS.>"
_SYS_EXCEPTION = "$SYS.ACCOUNT.>"
# The first tokens of those namespaces: a subject whose first token is none of them and does
# not start with a wildcard character overlaps none of them (subjects.overlaps), so the
# four overlap tests are skipped for it.
_API_HEADS = frozenset(ns.split(".", 1)[0] for ns in (*_JS_NAMESPACES, _SYS_NAMESPACE))
_ASSET_NAME_FORBIDDEN = frozenset(" \t\r\n\f.*>\\/")

SERVER_VERSION = "2.15.1"
API_LEVEL = 5

# --- update rules of the documentation only ------------------------------------------------
# Fields the NATS documentation's "Editable" column declares not editable although
# nats-server 2.15 accepts the change. jetlink refuses them (10052 "stream configuration
# update can not change <f>"), AFTER every rule of the server, so any config the server
# refuses gets the server's error.
DIVERGENCES: tuple[str, ...] = (
    "max_consumers",
    "first_seq",
    "deny_delete",
    "deny_purge",
)
DIVERGENCE_DETAILS: dict[str, str] = {
    "max_consumers": "any change; the server accepts it",
    "first_seq": "any change; the server accepts it (and stores the new value)",
    "deny_delete": "false -> true outside of sealing; the server accepts it (true -> false is "
    "the server's own rule)",
    "deny_purge": "false -> true outside of sealing; the server accepts it (true -> false is "
    "the server's own rule)",
}


# --- small helpers ------------------------------------------------------------------------
def _blen(s: str) -> int:
    """Go's ``len(string)``: the UTF-8 byte count."""
    return len(s.encode("utf-8", "surrogatepass"))


def is_valid_asset_name(name: str) -> bool:
    """A stream/consumer name the server accepts: not empty, none of `` \\t\\r\\n\\f.*>\\/``."""
    return bool(name) and not any(c in _ASSET_NAME_FORBIDDEN for c in name)


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
               "\v": "\\v", "\\": "\\\\", '"': '\\"'}


def go_quote(s: str) -> str:
    """Go's ``%q`` for a string (``strconv.Quote``)."""
    out = ['"']
    for ch in s:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif "\udc80" <= ch <= "\udcff":  # a byte that is not UTF-8 (surrogateescape):
            out.append(f"\\x{ord(ch) - 0xDC00:02x}")  # Go quotes an invalid byte as \xNN
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def _pedantic(err: str, field: str) -> ApiError:
    return nats_error("Pedantic", err=err, field=field)


def _origin_iname(src: StreamSource) -> tuple:
    """The server's source index name: what makes two sources the same agreement."""
    ident: tuple = (src.name,)
    if src.external is not None:
        ident += ("api", src.external.api)
    if src.consumer is not None:
        ident += ("consumer", src.consumer.name)
    if not src.subject_transforms:
        return ident + (src.filter_subject or ">", ">")
    return ident + (
        "\f".join(t.src or ">" for t in src.subject_transforms),
        "\f".join(t.dest or ">" for t in src.subject_transforms),
    )


def _consumer_cname(src: StreamSource) -> tuple:
    ident: tuple = (src.name,)
    if src.external is not None:
        ident += ("api", src.external.api)
    return ident + (src.consumer.name if src.consumer else "",)


def _durable_consumer_ok(src: StreamSource) -> bool:
    """The rules on a sourcing consumer given by the user (``consumer``)."""
    c = src.consumer
    assert c is not None
    if not is_valid_asset_name(c.name):
        return False
    if not is_valid_literal_subject(c.deliver_subject):
        return False
    if src.opt_start_seq != 0 or src.opt_start_time:
        return False
    return not src.filter_subject


def required_api_level(cfg: StreamConfig) -> int:
    """The JetStream API level the features of ``cfg`` need (the server's ``_nats.req.level``)."""
    level = 0
    if cfg.allow_msg_ttl or cfg.subject_delete_marker_ttl > 0:
        level = max(level, 1)
    if cfg.allow_msg_counter or cfg.allow_atomic or cfg.allow_msg_schedules:
        level = max(level, 2)
    if cfg.persist_mode == "async":
        level = max(level, 2)
    if cfg.allow_batched:
        level = max(level, 4)
    return level


def set_static_metadata(cfg: _Config, level: int) -> None:
    """What the server stores (stream or consumer config): response-only keys dropped,
    ``_nats.req.level`` set to ``level`` (the config's :func:`required_api_level`)."""
    md = dict(cfg.metadata)
    md.pop(SERVER_VERSION_KEY, None)
    md.pop(SERVER_LEVEL_KEY, None)
    md[REQUIRED_LEVEL_KEY] = str(level)
    cfg.metadata = md


def with_stored_level(cfg: _Config, current: _Config) -> _Config:
    """A copy of ``cfg`` without server-managed metadata but ``current``'s ``_nats.req.level``
    (if it has one): what a repeated create compares with the stored config."""
    out = cfg.copy()
    md = {k: v for k, v in out.metadata.items()
          if k not in (SERVER_VERSION_KEY, SERVER_LEVEL_KEY, REQUIRED_LEVEL_KEY)}
    if REQUIRED_LEVEL_KEY in current.metadata:
        md[REQUIRED_LEVEL_KEY] = current.metadata[REQUIRED_LEVEL_KEY]
    out.metadata = md
    return out


def with_response_metadata(cfg: _Config) -> _Config:
    """A copy of ``cfg`` (a stream or consumer config) with the keys the server adds to every
    response (version, level)."""
    out = cfg.copy()
    out.metadata = {**cfg.metadata, SERVER_VERSION_KEY: SERVER_VERSION,
                    SERVER_LEVEL_KEY: str(API_LEVEL)}
    return out


def _lookup_in(existing: Mapping[str, StreamConfig]) -> Lookup:
    return lambda name: existing.get(name)


# --- the shared checks (checkStreamCfg) ---------------------------------------------------
def check_stream_config(
    cfg: StreamConfig, lookup: Lookup | None = None, pedantic: bool = False
) -> StreamConfig:
    """The server's checks on a stream configuration, in its order, and its defaults.

    Returns a NEW config with the defaults filled in, or raises the first :class:`ApiError`.
    ``lookup(name)`` returns the configuration of another stream in the same account (or
    None); it is used for mirror/source origins (message sizes, mirror_direct, subjects,
    cycles). ``pedantic`` refuses instead of silently adjusting, as the server's pedantic mode.
    """
    find: Lookup = lookup or (lambda name: None)
    _check_names_and_sizes(cfg)
    out = cfg.copy()
    _check_enumerations(out)
    _check_replicas_and_limits(out, pedantic)
    _check_duplicate_window(out, pedantic)
    _check_feature_combinations(out, pedantic)
    _check_origins(out, find, pedantic)
    _check_cycles(out, find)
    # Subjects (a mirror with subjects was refused above).
    if not out.subjects:
        if out.mirror is None and not out.sources:
            out.subjects = [out.name]
    else:
        _check_subjects(out)
    _check_stream_transform(out)
    _check_republish(out, pedantic)
    _check_placement(out)
    return out


def _check_names_and_sizes(cfg: StreamConfig) -> None:
    if not is_valid_asset_name(cfg.name):
        raise invalid_config(
            "stream name is required and can not contain '.', '*', '>', '\\', '/'", field="name"
        )
    if _blen(cfg.name) > MAX_NAME_LEN:
        raise invalid_config(
            f"stream name is too long, maximum allowed is {MAX_NAME_LEN}", field="name"
        )
    if _blen(cfg.description) > MAX_DESCRIPTION_LEN:
        raise invalid_config(
            f"stream description is too long, maximum allowed is {MAX_DESCRIPTION_LEN}",
            field="description",
        )
    if sum(_blen(k) + _blen(v) for k, v in cfg.metadata.items()) > MAX_METADATA_LEN:
        raise invalid_config(
            f"stream metadata exceeds maximum size of {MAX_METADATA_LEN} bytes", field="metadata"
        )


def _check_enumerations(out: StreamConfig) -> None:
    """The JSON decoder already refuses unknown words; a config built in Python may still
    hold one. Fills in the default compression and storage."""
    if out.retention not in RETENTION:
        raise invalid_config("invalid retention", field="retention")
    if out.discard not in DISCARD:
        raise invalid_config("invalid discard policy", field="discard")
    if out.compression not in COMPRESSION + ("",):
        raise invalid_config("invalid compression", field="compression")
    if out.compression == "":
        out.compression = "none"
    if not out.storage:
        out.storage = "file"
    if out.storage not in STORAGE:
        raise invalid_config("invalid storage type", field="storage")


def _check_replicas_and_limits(out: StreamConfig, pedantic: bool) -> None:
    if out.num_replicas == 0:
        out.num_replicas = 1
    if out.num_replicas > MAX_REPLICAS:
        raise invalid_config(f"maximum replicas is {MAX_REPLICAS}", field="num_replicas")
    if out.num_replicas < 0:
        raise nats_error("ReplicasCountCannotBeNegative", field="num_replicas")
    for name in ("max_msgs", "max_msgs_per_subject", "max_bytes", "max_msg_size",
                 "max_consumers"):
        value = getattr(out, name)
        if value == 0 or value < -1:
            if pedantic and value < -1:
                raise _pedantic(f"{name} must be set to -1", name)
            setattr(out, name, -1)
    if out.max_age < 0:
        raise invalid_config("max age can not be negative", field="max_age")
    if out.max_age != 0 and out.max_age < MIN_WINDOW:
        raise invalid_config("max age needs to be >= 100ms", field="max_age")


def _check_duplicate_window(out: StreamConfig, pedantic: bool) -> None:
    """A default only for streams that neither mirror nor source."""
    if out.duplicate_window == 0 and out.mirror is None and not out.sources:
        if out.max_age != 0 and out.max_age < DEFAULT_DUPLICATE_WINDOW:
            if pedantic:
                raise _pedantic(
                    "duplicate window cannot be bigger than max age", "duplicate_window"
                )
            out.duplicate_window = out.max_age
        else:
            out.duplicate_window = DEFAULT_DUPLICATE_WINDOW
    if out.duplicate_window < 0:
        raise invalid_config("duplicates window can not be negative", field="duplicate_window")
    if out.max_age != 0 and out.duplicate_window > out.max_age:
        raise invalid_config(
            "duplicates window can not be larger then max age", field="duplicate_window"
        )
    if 0 < out.duplicate_window < MIN_WINDOW:
        raise invalid_config("duplicates window needs to be >= 100ms", field="duplicate_window")


def _check_feature_combinations(out: StreamConfig, pedantic: bool) -> None:
    if out.deny_purge and out.allow_rollup_hdrs:
        raise invalid_config("roll-ups require the purge permission", field="allow_rollup_hdrs")
    if out.allow_msg_counter:
        if out.discard == "new":
            raise invalid_config("counter stream cannot use discard new", field="discard")
        if out.allow_msg_ttl:
            raise invalid_config("counter stream cannot use message TTLs", field="allow_msg_ttl")
        if out.allow_msg_schedules:
            raise invalid_config(
                "counter stream cannot use message schedules", field="allow_msg_schedules"
            )
        if out.retention != "limits":
            raise invalid_config("counter stream can only use limits retention", field="retention")
    _check_discard_new_per_subject(out)
    _check_subject_delete_marker(out, pedantic)
    if out.allow_msg_schedules:
        if out.discard == "new":
            raise invalid_config("message scheduling cannot use discard new", field="discard")
        _turn_on_rollups(out, pedantic, "message scheduling")
    if out.persist_mode == "async":
        if out.storage != "file":
            raise invalid_config(
                "async persist mode is only supported on file storage", field="persist_mode"
            )
        if out.num_replicas > 1:
            raise invalid_config(
                "async persist mode is not supported on replicated streams", field="persist_mode"
            )
        if out.allow_atomic:
            raise invalid_config(
                "async persist mode is not supported with atomic batch publish",
                field="persist_mode",
            )


def _check_subject_delete_marker(out: StreamConfig, pedantic: bool) -> None:
    """A subject delete marker TTL turns on message TTLs and roll-ups (refused instead when
    pedantic)."""
    if out.subject_delete_marker_ttl > 0:
        if out.subject_delete_marker_ttl < SECOND:
            raise invalid_config(
                "subject delete marker TTL must be at least 1 second",
                field="subject_delete_marker_ttl",
            )
        if not out.allow_msg_ttl:
            if pedantic:
                raise invalid_config(
                    "subject delete marker cannot be set if message TTLs are disabled",
                    field="allow_msg_ttl",
                )
            out.allow_msg_ttl = True
        _turn_on_rollups(out, pedantic, "subject delete marker")
    elif out.subject_delete_marker_ttl < 0:
        raise invalid_config(
            "subject delete marker TTL must not be negative", field="subject_delete_marker_ttl"
        )


def _turn_on_rollups(out: StreamConfig, pedantic: bool, what: str) -> None:
    """``what`` (a subject delete marker, message scheduling) needs roll-ups: turned on (and
    purges allowed), or refused when pedantic."""
    if not out.allow_rollup_hdrs:
        if pedantic:
            raise invalid_config(
                f"{what} cannot be set if roll-ups are disabled", field="allow_rollup_hdrs"
            )
        out.allow_rollup_hdrs, out.deny_purge = True, False


def _check_origins(out: StreamConfig, find: Lookup, pedantic: bool) -> None:
    """The mirror and the sources, then the external delivery and API prefixes they name."""
    origin_subjects: list[str] = []  # subjects of the local origins we can see
    delivery_prefixes: list[tuple[str, str]] = []  # (prefix, field)
    api_prefixes: list[tuple[str, str]] = []
    if out.mirror is not None:
        _check_mirror(out, find, pedantic, origin_subjects, delivery_prefixes, api_prefixes)
    if out.sources and out.allow_msg_schedules:
        raise nats_error("SourceWithMsgSchedules", field="allow_msg_schedules")
    _check_sources(out, find, origin_subjects, delivery_prefixes, api_prefixes)

    for prefix, field in delivery_prefixes:
        if not is_valid_publish_subject(prefix):
            raise nats_error("StreamInvalidExternalDeliverySubj", prefix=prefix, field=field)
        for subject in origin_subjects:
            if overlaps(subject, f"{prefix}.{subject}"):
                raise nats_error(
                    "StreamExternalDelPrefixOverlaps", prefix=prefix, subject=subject, field=field
                )
    for prefix, field in api_prefixes:
        if not is_valid_publish_subject(prefix):
            raise invalid_config(
                f"stream external api prefix {go_quote(prefix)} must be a valid subject "
                "without wildcards",
                field=field,
            )
        if overlaps(prefix, JS_API_PREFIX):
            raise nats_error(
                "StreamExternalApiOverlap", prefix=prefix, subject=JS_API_PREFIX, field=field
            )


def _check_stream_transform(out: StreamConfig) -> None:
    if out.subject_transform is not None:
        st = out.subject_transform
        if st.src and not is_valid_subject(st.src):
            raise nats_error(
                "StreamTransformInvalidSource", err=f"invalid subject {st.src}",
                field="subject_transform.src",
            )
        from ..transform import TransformError, validate_mapping

        try:
            validate_mapping(st.src, st.dest)
        except TransformError as exc:
            raise nats_error(
                "StreamTransformInvalidDestination", err=exc.reason, field="subject_transform.dest"
            ) from None


def _check_republish(out: StreamConfig, pedantic: bool) -> None:
    if out.republish is not None:
        rp = out.republish
        if not rp.src:
            if pedantic:
                raise _pedantic("republish source can not be empty", "republish.src")
            rp.src = ">"
        if (
            rp.dest == ">" and rp.src == ">" and out.subject_transform is not None
            and len(out.subjects) == 1 and out.subject_transform.src == out.subjects[0]
        ):
            # Republish everything under the transformed subject.
            if pedantic:
                raise _pedantic("implicit republish based on subject transform", "republish")
            rp.src = rp.dest = out.subject_transform.dest
        if any(overlaps(rp.dest, subject) for subject in out.subjects):
            raise invalid_config(
                "stream configuration for republish destination forms a cycle",
                field="republish.dest",
            )
        from ..transform import TransformError, compile_transform

        try:
            compile_transform(rp.src, rp.dest)
        except TransformError:
            raise invalid_config(
                f"stream configuration for republish with transform from '{rp.src}' to "
                f"'{rp.dest}' not valid",
                field="republish",
            ) from None


def _check_placement(out: StreamConfig) -> None:
    """An empty placement object is no placement; a preferred server is refused."""
    if out.placement is not None and not (
        out.placement.cluster or out.placement.tags or out.placement.preferred
    ):
        out.placement = None
    if out.placement is not None and out.placement.preferred:
        raise invalid_config(
            "preferred server not permitted in placement", field="placement.preferred"
        )


def _check_discard_new_per_subject(cfg: StreamConfig) -> None:
    if cfg.discard_new_per_subject:
        if cfg.discard != "new":
            raise invalid_config(
                "discard new per subject requires discard new policy to be set",
                field="discard_new_per_subject",
            )
        if cfg.max_msgs_per_subject <= 0:
            raise invalid_config(
                "discard new per subject requires max msgs per subject > 0",
                field="discard_new_per_subject",
            )


def _check_mirror(
    cfg: StreamConfig,
    find: Lookup,
    pedantic: bool,
    origin_subjects: list[str],
    delivery_prefixes: list[tuple[str, str]],
    api_prefixes: list[tuple[str, str]],
) -> None:
    m = cfg.mirror
    assert m is not None
    if cfg.first_seq > 0:
        raise nats_error("MirrorWithFirstSeq", field="first_seq")
    if cfg.subjects:
        raise nats_error("MirrorWithSubjects", field="subjects")
    if cfg.sources:
        raise nats_error("MirrorWithSources", field="sources")
    if cfg.allow_msg_counter:
        raise nats_error("MirrorWithCounters", field="allow_msg_counter")
    if cfg.allow_atomic:
        raise nats_error("MirrorWithAtomicPublish", field="allow_atomic")
    if cfg.allow_batched:
        raise nats_error("MirrorWithBatchPublish", field="allow_batched")
    if cfg.allow_msg_schedules:
        raise nats_error("MirrorWithMsgSchedules", field="allow_msg_schedules")
    if m.consumer is not None and not _durable_consumer_ok(m):
        raise nats_error("MirrorDurableConsumerCfgInvalid", field="mirror.consumer")
    if m.filter_subject and m.subject_transforms:
        raise nats_error("MirrorMultipleFiltersNotAllowed", field="mirror.filter_subject")
    if cfg.subject_delete_marker_ttl > 0:
        raise invalid_config(
            "subject delete markers forbidden on mirrors", field="subject_delete_marker_ttl"
        )
    transforms = m.subject_transforms
    for i, tr in enumerate(transforms):
        path = f"mirror.subject_transforms[{i}]"
        if tr.src and not is_valid_subject(tr.src):
            raise nats_error(
                "MirrorInvalidSubjectFilter", err=f"invalid subject {tr.src}", field=f"{path}.src"
            )
        from ..transform import TransformError, validate_mapping

        try:
            validate_mapping(tr.src, tr.dest)
        except TransformError as exc:
            raise nats_error(
                "MirrorInvalidTransformDestination", err=exc.reason, field=f"{path}.dest"
            ) from None
        for j, other in enumerate(transforms):
            if j != i and overlaps(tr.src, other.src):
                raise nats_error(
                    "MirrorOverlappingSubjectFilters",
                    field=f"mirror.subject_transforms[{j}].src",
                )
    if m.external is None:
        if not is_valid_asset_name(m.name):
            raise nats_error("MirrorInvalidStreamName", field="mirror.name")
        origin = find(m.name)
        if origin is not None:
            origin_subjects.extend(origin.subjects)
            if 0 < cfg.max_msg_size < origin.max_msg_size:
                raise nats_error("MirrorMaxMessageSizeTooBig", field="max_msg_size")
            # The mirror serves direct gets exactly when its origin does.
            if pedantic and cfg.mirror_direct != origin.allow_direct:
                raise _pedantic(
                    "origin stream has direct get set, mirror has it disabled", "mirror_direct"
                )
            cfg.mirror_direct = origin.allow_direct
    else:
        if m.external.deliver:
            delivery_prefixes.append((m.external.deliver, "mirror.external.deliver"))
        if m.external.api:
            api_prefixes.append((m.external.api, "mirror.external.api"))


def _check_sources(
    cfg: StreamConfig,
    find: Lookup,
    origin_subjects: list[str],
    delivery_prefixes: list[tuple[str, str]],
    api_prefixes: list[tuple[str, str]],
) -> None:
    inames: set[tuple] = set()
    cnames: set[tuple] = set()
    for i, src in enumerate(cfg.sources):
        path = f"sources[{i}]"
        if src is None or not is_valid_asset_name(src.name):
            raise nats_error("SourceInvalidStreamName", field=f"{path}.name")
        iname = _origin_iname(src)
        if iname in inames:
            raise nats_error("SourceDuplicateDetected", field=path)
        inames.add(iname)
        if src.filter_subject and src.subject_transforms:
            raise nats_error("SourceMultipleFiltersNotAllowed", field=f"{path}.filter_subject")
        for j, tr in enumerate(src.subject_transforms):
            tpath = f"{path}.subject_transforms[{j}]"
            if tr.src and not is_valid_subject(tr.src):
                raise nats_error(
                    "SourceInvalidSubjectFilter", err=f"invalid subject {tr.src}",
                    field=f"{tpath}.src",
                )
            from ..transform import TransformError, validate_mapping

            try:
                validate_mapping(tr.src, tr.dest)
            except TransformError as exc:
                raise nats_error(
                    "SourceInvalidTransformDestination", err=exc.reason, field=f"{tpath}.dest"
                ) from None
        for j, tr in enumerate(src.subject_transforms):
            for k, other in enumerate(src.subject_transforms):
                if k != j and is_subset(tr.src, other.src):
                    raise nats_error(
                        "SourceOverlappingSubjectFilters",
                        field=f"{path}.subject_transforms[{k}].src",
                    )
        if src.consumer is not None:
            if not _durable_consumer_ok(src):
                raise nats_error("SourceDurableConsumerCfgInvalid", field=f"{path}.consumer")
            cname = _consumer_cname(src)
            if cname in cnames:
                raise nats_error(
                    "SourceDurableConsumerDuplicateDetected", field=f"{path}.consumer.name"
                )
            cnames.add(cname)
        if src.external is None:
            origin = find(src.name)
            if origin is not None:
                origin_subjects.extend(origin.subjects)
                if 0 < cfg.max_msg_size < origin.max_msg_size:
                    raise nats_error("SourceMaxMessageSizeTooBig", field="max_msg_size")
        else:
            if src.external.deliver:
                delivery_prefixes.append((src.external.deliver, f"{path}.external.deliver"))
            if src.external.api:
                api_prefixes.append((src.external.api, f"{path}.external.api"))


def source_closes_cycle(filter_subject: str, subjects: Sequence[str]) -> bool:
    """The server's rule of its cycle walk (``checkStreamCfg``): a source of a stream
    already on the path closes a cycle unless its filter collides with none of the stream's
    own subjects (``subject_transforms`` are not looked at: a source with transforms and no
    filter closes one)."""
    return not filter_subject or any(overlaps(s, filter_subject) for s in subjects)


def source_may_loop(filter_subject: str, subjects: Sequence[str]) -> bool:
    """:func:`source_closes_cycle`, or a stream without subjects of its own: it stores what
    its filtered source sends it, and nothing stops that message coming round again (the
    server accepts such a cycle, and 2.15.1 copies one message round it for ever). What
    jetlink's topology check and its cross-cluster warning follow."""
    return not subjects or source_closes_cycle(filter_subject, subjects)


def _check_cycles(cfg: StreamConfig, find: Lookup) -> None:
    """Sources/mirrors that lead back to a stream already on the path ("detected cycle").

    A breadth-first walk over the local origins, exactly as the server walks them: a stream
    sourcing a stream already visited is a cycle when its subjects can receive what that
    source delivers (no filter, or a filter colliding with its subjects); a mirror of a
    visited stream is always a cycle. The error names the origin of ``cfg`` the walk went
    through.
    """
    # (config, field path of the top-level origin it was reached through)
    to_visit: list[tuple[StreamConfig, str | None]] = [(cfg, None)]
    visited: set[str] = set()
    while to_visit:
        current, via = to_visit.pop(0)
        visited.add(current.name)
        for i, src in enumerate(current.sources):
            if src.external is not None:
                continue
            path = via or f"sources[{i}]"
            if src.name in visited:
                if source_closes_cycle(src.filter_subject, current.subjects):
                    raise invalid_config("detected cycle", field=f"{path}.name")
            else:
                origin = find(src.name)
                if origin is not None:
                    to_visit.append((origin, path))
        m = current.mirror
        if m is not None and m.external is None:
            path = via or "mirror"
            if m.name in visited:
                raise invalid_config("detected cycle", field=f"{path}.name")
            origin = find(m.name)
            if origin is not None:
                to_visit.append((origin, path))


def _may_overlap_api(subject: str) -> bool:
    """False when ``subject`` overlaps none of the JetStream and system API namespaces."""
    head = subject.split(".", 1)[0]
    return head in _API_HEADS or head[:1] in ("*", ">")


def check_subjects(cfg: StreamConfig) -> None:
    """The server's rules of a stream's own subjects (each valid, '>' only with no-ack and
    one replica, the JetStream and system API namespaces only with no-ack): ApiError 10052."""
    _check_subjects(cfg)


def _check_subjects(cfg: StreamConfig) -> None:
    # The server also has a "duplicate subjects detected" rule, but it can never fire: the
    # pairwise overlap test below reports a duplicate at its first occurrence.
    subjects = cfg.subjects
    for i, subject in enumerate(subjects):
        if not is_valid_subject(subject):
            raise invalid_config("invalid subject", field="subjects")
        if subject == ">":
            if not cfg.no_ack:
                raise invalid_config(
                    "capturing all subjects requires no-ack to be true", field="subjects"
                )
            if cfg.num_replicas != 1:
                raise invalid_config(
                    "capturing all subjects requires replicas of 1", field="subjects"
                )
        if not cfg.no_ack and _may_overlap_api(subject):
            for namespace in _JS_NAMESPACES:
                if overlaps(subject, namespace) and not is_subset(subject, _JS_EXCEPTION):
                    raise invalid_config(
                        "subjects that overlap with jetstream api require no-ack to be true",
                        field="subjects",
                    )
            if overlaps(subject, _SYS_NAMESPACE) and not is_subset(subject, _SYS_EXCEPTION):
                raise invalid_config(
                    "subjects that overlap with system api require no-ack to be true",
                    field="subjects",
                )
        for other in subjects[i + 1 :]:
            if overlaps(other, subject):
                raise invalid_config(
                    f"subject {go_quote(subject)} overlaps with {go_quote(other)}",
                    field="subjects",
                )


# --- create ---------------------------------------------------------------------------------
def _check_filters_on_add(cfg: StreamConfig) -> None:
    """The stream-add path's own check of plain filters (10049, code 500).

    (That path also re-checks transform sources and destinations, but only after
    check_stream_config has refused every bad one with 10145/10146/10151/10154.)
    """
    if cfg.mirror is not None and not cfg.mirror.subject_transforms:
        f = cfg.mirror.filter_subject
        if f and not is_valid_subject(f):
            # The server's text has no colon here, unlike the source's.
            raise nats_error(
                "StreamCreate", err=f"subject filter '{f}' for the mirror invalid subject",
                field="mirror.filter_subject",
            )
    for i, src in enumerate(cfg.sources):
        f = src.filter_subject
        if not src.subject_transforms and f and not is_valid_subject(f):
            raise nats_error(
                "StreamCreate", err=f"subject filter '{f}' for the source: invalid subject",
                field=f"sources[{i}].filter_subject",
            )


@runtime_checkable
class IndexedStreams(Protocol):
    """Streams by name whose subjects are indexed (core/streamdef.py ``StreamConfigs``)."""

    def overlap_candidates(self, subjects: list[str]) -> list[str]:
        """The names of the streams whose subjects may overlap one of ``subjects`` (a
        superset: core/subjects.py ``KeyedSubjectIndex``), in the mapping's order."""


def overlapping_stream(
    subjects: list[str], existing: Mapping[str, StreamConfig], skip: str | None
) -> str | None:
    """None, or which subject overlaps which of which stream (the refusal's detail; the
    live client gives a server's 10065 the same detail, from the server's streams): the
    first stream in ``existing``'s order with a clash, its first subject that clashes, the
    first of ``subjects`` it clashes with. An ``existing`` that indexes its subjects
    (:class:`IndexedStreams`) has only the streams that can clash looked at, in the same
    order, so the answer is the same."""
    if not subjects:  # a mirror's: nothing to overlap, no stream to look at
        return None
    names = existing.overlap_candidates(subjects) if isinstance(existing, IndexedStreams) \
        else existing
    for name in names:
        if name == skip:
            continue
        other = existing[name]
        for theirs in other.subjects:
            for mine in subjects:
                if overlaps(mine, theirs):
                    return f"{go_quote(mine)} overlaps {go_quote(theirs)} of stream {name}"
    return None


def _overlap_error(detail: str) -> ApiError:
    err = nats_error("StreamSubjectOverlap", field="subjects")
    err.detail = detail
    return err


_DURATION_FIELDS = ("max_age", "duplicate_window", "subject_delete_marker_ttl",
                    "consumer_limits.inactive_threshold", "ack_wait", "inactive_threshold",
                    "max_expires", "idle_heartbeat")


def explain(err: _Error, cfg: Any) -> _Error:
    """Give ``err`` (raised by the checks of ``cfg``, a stream or consumer config) its detail
    for people: the field and the offending value (the first invalid subject of a list, a
    duration as a duration). Returns ``err``; one that has a detail already keeps it."""
    if err.detail or not err.field:
        return err
    from ..durations import format_duration
    from ..errors import clip

    fld = err.field
    try:
        value = get_path(cfg.to_json(), fld)
    except Exception:  # pragma: no cover - a config that does not encode: no detail
        return err
    if value is _ABSENT:
        return err
    if fld in ("subjects", "filter_subjects") and isinstance(value, list) \
            and "invalid" in err.description:
        bad = [s for s in value if not isinstance(s, str) or not is_valid_subject(s)]
        if bad:
            err.detail = (f"{fld}: {go_quote(clip(str(bad[0])))} is not a valid subject "
                          f"({SUBJECT_RULE})")
            return err
    if fld in _DURATION_FIELDS and isinstance(value, int) and not isinstance(value, bool):
        shown = format_duration(value)
    elif isinstance(value, str):
        shown = go_quote(clip(value))
    else:
        import json

        shown = clip(json.dumps(value))
    err.detail = name_detail(fld, value) if fld == "name" and isinstance(value, str) and \
        "can not contain" in err.description else f"{fld} = {shown}"
    return err


# the characters of a name the server refuses, as said to people
_FORBIDDEN_NAMES = {" ": "a space", "\t": "a tab", "\r": "a carriage return",
                    "\n": "a newline", "\f": "a form feed"}


def name_detail(fld: str, value: str) -> str:
    """For people: a refused stream or consumer name and the first character the server
    refuses in it (the server's text lists '.', '*', '>', '\\', '/', not the blanks)."""
    from ..errors import clip

    said = f"{fld} = {go_quote(clip(value))}"
    bad = next((c for c in value if c in _ASSET_NAME_FORBIDDEN), None)
    return said if bad is None else f"{said} holds {_FORBIDDEN_NAMES.get(bad, repr(bad))}"

_ABSENT = object()


def get_path(doc: Any, path: str) -> Any:
    """The value at ``path`` (``mirror.name``, ``sources[1].filter_subject``) of a JSON
    document, or :data:`_ABSENT`."""
    node = doc
    for m in _PATH_PART.finditer(path):
        key: str | int = m.group(1) if m.group(1) is not None else int(m.group(2))
        if isinstance(key, int):
            if not isinstance(node, list) or key >= len(node):
                return _ABSENT
        elif not isinstance(node, dict) or key not in node:
            return _ABSENT
        node = node[key]
    return node


def check_create_only(cfg: StreamConfig) -> None:
    """The rules of ``STREAM.CREATE`` that an update does not have, checked before the
    config's own rules (the server's order): path separators in the name, ``sealed``,
    ``mirror_direct`` without a mirror."""
    if "\\" in cfg.name or "/" in cfg.name:
        raise nats_error("StreamNameContainsPathSeparators", field="name")
    if cfg.sealed:
        raise invalid_config("stream configuration for create can not be sealed", field="sealed")
    if cfg.mirror_direct and cfg.mirror is None:
        raise invalid_config(
            "stream has no mirror but does have mirror direct", field="mirror_direct"
        )


# How many problems of one config :func:`stream_config_problems` reports at most.
MAX_PROBLEMS = 50


def stream_config_problems(
    cfg: StreamConfig, lookup: Lookup | None = None, *, create: bool = True
) -> tuple[StreamConfig | None, list[ApiError]]:
    """Every problem of ``cfg``, not only the first: ``(the config with the server's defaults
    or None when it has a problem, [the errors in the order found])``.

    The server stops at its first error; this runs the same checks (``create``: those of
    STREAM.CREATE, else those every config gets) and, after each error, sets the field it
    names aside (its default instead) and checks again, until the config passes, an error
    names no field, or the same field fails again. The first error is always the server's.
    """
    errors: list[ApiError] = []
    doc: dict[str, Any] | None = None  # cfg's JSON, made after a first error only
    seen: set[str] = set()
    current = cfg
    while len(errors) < MAX_PROBLEMS:
        try:
            if create:
                # as STREAM.CREATE checks it: with the _nats.req.level the server stores
                # (its 16 bytes count in the metadata's size); the config returned keeps
                # the metadata as given
                probe = current.copy()
                set_static_metadata(probe, required_api_level(probe))
                check_create_only(probe)
                check_stream_config(probe, lookup)
            out = check_stream_config(current, lookup)
            if create:
                _check_filters_on_add(out)
                check_store_name(out)
            return (out if not errors else None), errors
        except ApiError as err:
            errors.append(explain(err, current))
            fld = err.field
            if fld and fld.endswith(".name"):
                fld = fld[: -len(".name")]  # a mirror's / source's name: set it all aside
            if doc is None:
                doc = cfg.to_json()  # current is still cfg: nothing was set aside yet
            if not fld or fld in seen:
                return None, errors
            if fld == "name":
                # a stream has a name: dropped, it would be "name is required" next; a valid
                # name stands in for it while the rest is checked
                doc["name"] = _NAME_SET_ASIDE
            elif not drop_path(doc, fld):
                return None, errors
            seen.add(fld)
            try:
                current = StreamConfig.from_json(doc, strict=False)
            except ApiError:  # pragma: no cover - a field set aside never breaks decoding
                return None, errors
    return None, errors


_NAME_SET_ASIDE = "JETLINK_NAME_SET_ASIDE"  # (a valid name no stream is expected to have)
_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def drop_path(doc: dict, path: str) -> bool:
    """Remove the field ``path`` (``max_age``, ``mirror.name``, ``sources[1].filter_subject``)
    from the JSON document ``doc``; a list element is removed whole. False: no such field."""
    parts: list[str | int] = [m.group(1) if m.group(1) is not None else int(m.group(2))
                              for m in _PATH_PART.finditer(path)]
    node: Any = doc
    for part in parts[:-1]:
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                return False
        elif not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    last = parts[-1] if parts else None
    if isinstance(last, int) and isinstance(node, list) and last < len(node):
        del node[last]
        return True
    if isinstance(last, str) and isinstance(node, dict) and last in node:
        del node[last]
        return True
    return False


def missing_origin_text(described: str, cluster: str, cluster_known: bool,
                        where: str = "declared", kind: str = "cluster",
                        known: Iterable[str] = (), files_only: bool = False,
                        waits: bool = True, name_hint: str | None = None) -> str:
    """The one wording of a mirror's or source's origin that is not there, for ``validate``,
    ``apply`` and ``stream add`` alike: a warning, since the server accepts such a stream
    (its mirror or source waits for the origin). ``described``: ``mirror origin "O"``,
    ``source "S"``, ``origin bucket "B" (stream KV_B)``... An unknown cluster close to one
    of ``known`` gets the suggestion (core/errors.py ``did_you_mean``). ``files_only``:
    only files were read (``validate`` without --live): the origin is in none of them.
    ``name_hint``: the closest stream name of that place (``did you mean ORDERS?``)."""
    from ..errors import did_you_mean

    text = nats_error("StreamNotFound").description
    hint = None if cluster_known else did_you_mean(cluster, known)
    note = "" if cluster_known else (f' ({kind} "{cluster}" is not {where}'
                                     + (f"; {hint}" if hint else "") + ")")
    if cluster_known and name_hint:
        note = f" ({name_hint})"
    if files_only:  # what was looked in: the files, no data directory, no server
        note += (" in the files given (validate reads no data directory or server; --live "
                 "reads the servers they are bound to)")
    # (a live server without a JetStream domain is a place without a name)
    place = f'in {kind} "{cluster}"' if cluster or not cluster_known else \
        "on this server (it has no JetStream domain)"
    tail = ("the server accepts this, the stream waits for its origin" if waits else
            "a KV mirror is made from its origin bucket's settings, which must exist first "
            "(kv add --mirror refuses it too)")
    return f'{text}: {described} does not exist {place}{note}: {tail}'


def empty_src_warnings(cfg: StreamConfig) -> list[str]:
    """A source whose subject transforms hold one with an empty ``src``, or a mirror whose
    several transforms do: nats-server 2.15.1 accepts the config, then asks the origin for
    a consumer whose filter is that empty ``src`` (setupSourceConsumer,
    setupMirrorConsumer): a source's create request is never answered, a mirror's is
    refused (10139), and nothing is ever copied. The engine reads the empty ``src`` as
    ``>`` (every subject), as a single mirror transform works on the server too."""
    out = []
    agreements = ([("mirror origin", cfg.mirror)] if cfg.mirror is not None else []) + \
        [("source", s) for s in cfg.sources]
    for what, src in agreements:
        transforms = src.subject_transforms or []
        if what == "mirror origin" and len(transforms) < 2:
            continue
        for i, tr in enumerate(transforms):
            if tr.src == "":
                out.append(
                    f'{what} "{src.name}": subject_transforms[{i}] has an empty src: '
                    "nats-server 2.15.1 gives the consumer it reads the origin through that "
                    "empty filter, and the " + ("mirror" if what == "mirror origin" else
                                               "source") + " never starts (nothing is "
                    "copied; the engine copies every subject): give src \">\" instead")
                break
    return out


def origin_warnings(cfg: StreamConfig, cluster: str, clusters: Any, *,
                    describe: Callable[[str], str] | None = None) -> list[str]:
    """The warnings of :func:`missing_origin_text` for a stream just created or updated:
    each mirror / source origin looked up where it is (``clusters``: core/kv.py
    ``Clusters`` over a data directory, or a live server's ``LiveDomains``). An origin
    whose side does not answer (a cluster down, a domain without responders) or that
    lies behind another API prefix is not judged. ``describe(origin stream)``: how an
    origin is named (a KV aggregate's: core/config/kvnames.py
    ``aggregate_origin_described``), else ``mirror origin "O"`` / ``source "S"``."""
    from ..errors import JetlinkError

    kind = getattr(clusters, "kind", "cluster")
    origins = ([("mirror origin", cfg.mirror)] if cfg.mirror is not None else []) + \
        [("source", s) for s in cfg.sources]
    out = []
    for what, src in origins:
        where = cluster if src.external is None else src.domain
        if where is None:
            continue  # another API prefix: not ours to look into
        described = describe(src.name) if describe is not None else f'{what} "{src.name}"'
        if kind == "cluster" and not CLUSTER_NAME_RE.fullmatch(where):
            from ..errors import clip

            out.append(f"{described}: API prefix $JS.{clip(where)}.API names no cluster a "
                       "data directory can hold (1 to 64 letters, digits, '_' or '-'): the "
                       "stream never reaches its origin")
            continue
        if not clusters.has_cluster(where):
            out.append(missing_origin_text(described, where, False, "in the data directory",
                                           kind, clusters.names()))
            continue
        if clusters.is_down(where):
            continue
        try:
            clusters.js(where, here=where == cluster).stream_info(src.name)
        except ApiError as err:
            if err.err_code == 10059:
                # (a stream's flags: a KV aggregate's origins are named otherwise)
                hint = (_held_elsewhere(clusters, where, cluster, src.name, what)
                        if kind == "cluster" and src.external is None and describe is None
                        else None) \
                    or _closest_stream(clusters, where, cluster, src.name)
                out.append(missing_origin_text(described, where, True, kind=kind,
                                               name_hint=hint))
        except JetlinkError as err:
            # no answer: the origin unknown; a domain no server answers for is said (a
            # misspelt --mirror-domain, or one not joined), as the data directory's
            # clusters that are not there are
            if kind == "domain" and where != cluster and err.field == "js_domain":
                out.append(f'{described}: JetStream domain "{where}" does not answer on '
                           "this server: the server accepts this, the stream waits for its "
                           "origin (a misspelt --mirror-domain, or a domain not joined "
                           "here?)")
    return out


def _held_elsewhere(clusters: Any, where: str, cluster: str, name: str,
                    what: str) -> str | None:
    """``cluster west holds a stream ORDERS: --mirror ORDERS@west``: the other clusters of
    the data directory that hold a stream of exactly that name (a forgotten @CLUSTER, or
    --mirror-domain), before any close name here (None: none, or none could be read: a
    hint only)."""
    from ..errors import JetlinkError

    holders = []
    for other in clusters.names():
        if other == where or clusters.is_down(other):
            continue
        try:
            if name in clusters.js(other, here=other == cluster).stream_names():
                holders.append(other)
        except JetlinkError:
            continue
    if not holders:
        return None
    from ..errors import held_by

    flag = "--mirror" if what == "mirror origin" else "--source"
    return f"{held_by(holders, 'stream', name)}: {flag} {name}@{holders[0]}"


def _closest_stream(clusters: Any, where: str, cluster: str, name: str) -> str | None:
    """``did you mean X?`` with X the stream of ``where`` closest to ``name`` (None: none
    close, or the names could not be read: a hint only)."""
    from ..errors import JetlinkError, did_you_mean

    try:
        return did_you_mean(name, clusters.js(where, here=where == cluster).stream_names())
    except JetlinkError:
        return None


def cycle_warning(cfg: StreamConfig, cluster: str, clusters: Any, *,
                  limit: int = 64) -> str | None:
    """The warning for a stream just created or updated whose mirror or sources lead back to
    it through other clusters (or domains): ``detected cycle: X@east -> Y@west -> X@east``,
    the words ``validate`` and ``apply`` refuse such a topology with (10052). The server
    walks only its own streams (``external`` origins are not followed), so it accepts the
    stream; this says what it cannot see. The walk follows each origin where it is
    (``clusters`` as :func:`origin_warnings`), the filter rule of :func:`source_may_loop`
    (which also catches, within one cluster, the cycle through a stream without subjects
    that the server accepts), and gives up after ``limit`` streams or at a side that does
    not answer."""
    from ..errors import JetlinkError

    start = (cluster, cfg.name)
    # (where, name), its config, the path to it, the first stream on it without subjects of
    # its own whose filtered source the server's walk does not follow (None: none)
    paths: list[tuple[tuple[str, str], StreamConfig, list[tuple[str, str]], str | None]] = [
        (start, cfg, [start], None)]
    seen = {start}
    while paths and len(seen) <= limit:
        (here, name), current, path, loose = paths.pop(0)
        origins = ([current.mirror] if current.mirror is not None else []) + \
            list(current.sources)
        for src in origins:
            mirror = src is current.mirror
            if not mirror and not source_may_loop(src.filter_subject, current.subjects):
                continue
            if loose is None and not mirror and not source_closes_cycle(src.filter_subject,
                                                                        current.subjects):
                loose_here: str | None = current.name
            else:
                loose_here = loose
            where = here if src.external is None else src.domain
            if where is None:
                continue  # another API prefix: not ours to look into
            node = (where, src.name)
            if node == start:
                one_cluster = all(c == cluster for c, _ in path)
                if one_cluster and loose_here is None:
                    return None  # within one cluster: the server's own check refuses it
                shown = " -> ".join(n if one_cluster else f"{n}@{c}"
                                    for c, n in [*path, start])
                why = ("which the server cannot see across clusters" if loose_here is None
                       else f"and {loose_here} has no subjects of its own: it stores what its "
                       "filtered source sends it, so a message goes round for ever; the "
                       "server's check lets this through")
                return (f"detected cycle: {shown}: each mirrors or sources the next, {why} "
                        "(validate and apply refuse this topology, 10052)")
            if node in seen:
                continue
            seen.add(node)
            try:
                if not clusters.has_cluster(where) or clusters.is_down(where):
                    continue
                origin = clusters.js(where, here=where == cluster).stream_info(
                    src.name).config
            except (ApiError, JetlinkError):
                continue  # not there, or no answer: no cycle through it known
            paths.append((node, origin, [*path, node], loose_here))
    return None


def check_single_server(cfg: StreamConfig) -> None:
    """A single server (no cluster, no gateway) keeps one copy of a stream: replicas > 1 is
    refused (10074) on create and update."""
    if cfg.num_replicas > 1:
        raise nats_error("StreamReplicasNotSupported", field="num_replicas")


def check_stream_create(
    cfg: StreamConfig, existing: Mapping[str, StreamConfig] | Lookup, *, pedantic: bool = False,
    single_server: bool = True,
) -> StreamConfig:
    """:func:`_check_stream_create`, its refusal given the offending value (:func:`explain`)."""
    try:
        return _check_stream_create(cfg, existing, pedantic=pedantic,
                                    single_server=single_server)
    except ApiError as err:
        raise explain(err, cfg) from None


def stored_differences(candidate: StreamConfig, current: StreamConfig) -> str | None:
    """What a create of ``candidate`` (defaults filled in) gives otherwise than the stream
    ``current`` holds, for the server's 10058 (``stream S: max_msgs 5 given, -1 stored``);
    None when nothing but the server-managed metadata differs."""
    from .codec import given_stored

    out = given_stored(with_stored_level(candidate, current), current)
    given, stored = ("sources" in given_empty(x) for x in (candidate, current))
    if given != stored and not candidate.sources and not current.sources:
        # Go tells `"sources": []` from no sources (reflect.DeepEqual of the two configs)
        out.append(f"sources {'[]' if given else 'none'} given, "
                   f"{'[]' if stored else 'none'} stored")
    if not out:
        return None
    return (f"stream {current.name}: {'; '.join(out)} (stream edit changes a stream's "
            "configuration)")


def _check_stream_create(
    cfg: StreamConfig, existing: Mapping[str, StreamConfig] | Lookup, *, pedantic: bool = False,
    single_server: bool = True,
) -> StreamConfig:
    """A ``STREAM.CREATE`` of ``cfg`` next to the ``existing`` streams (name -> config).

    Returns the configuration the stream gets (defaults filled in, ``_nats.req.level`` in its
    metadata) or raises the server's first error. Creating a stream again with a config equal
    to the existing one (after defaults) succeeds and returns the existing configuration.

    ``existing`` may instead be a lookup function (name -> config or None), as the live
    client passes: then only ``cfg``'s own rules and its origins are checked (the server
    checks the rest); ``single_server=False`` leaves out the embedded engine's replicas
    limit (a live cluster takes replicas > 1).
    """
    if callable(existing):
        out = cfg.copy()
        set_static_metadata(out, required_api_level(out))
        check_create_only(out)
        out = check_stream_config(out, existing, pedantic)
        if single_server:
            check_single_server(out)
        _check_filters_on_add(out)
        return out
    new = cfg.copy()
    set_static_metadata(new, required_api_level(new))
    check_create_only(new)
    out = check_stream_config(new, _lookup_in(existing), pedantic)
    check_single_server(out)
    current = existing.get(out.name)
    if current is not None:
        # Equal apart from the server-managed metadata: the create is a no-op.
        candidate = with_stored_level(out, current)
        # Go also tells `"sources": []` from no sources (the only list defaults keep apart).
        same_sources = ("sources" in given_empty(cfg)) == ("sources" in given_empty(current))
        if candidate == current and same_sources:
            return current.copy()
        err = nats_error("StreamNameExist", field="name")
        err.detail = stored_differences(out, current) or err.detail
        raise err
    _check_filters_on_add(out)
    clash = overlapping_stream(out.subjects, existing, None)
    if clash:
        raise _overlap_error(clash)
    check_store_name(out)
    return out


def check_store_name(cfg: StreamConfig) -> None:
    """The last step of a create, the store's: the server keeps a file stream in a
    directory named after it (filestore ``newFileStore``), and a name no file system can
    hold (a NUL byte) fails there, 10049 "error creating store for stream"
    (jetstream_api.go ``errStreamStoreFailed``); a memory stream has no directory."""
    if cfg.storage == "file" and "\x00" in cfg.name:
        raise nats_error("StreamCreate", err="error creating store for stream", field="name")


# --- update ---------------------------------------------------------------------------------
def _not_editable(field: str) -> ApiError:
    return invalid_config(f"stream configuration update can not change {field}", field=field)


def seal(cfg: StreamConfig) -> StreamConfig:
    """``cfg`` (changed in place, and returned) as the server stores a sealed stream's: it
    keeps everything it has (no max age, discard new, no deletes, no purges, no rollups)."""
    cfg.max_age = 0
    cfg.discard = "new"
    cfg.deny_delete = cfg.deny_purge = True
    cfg.allow_rollup_hdrs = False
    return cfg


def check_stream_update(
    old: StreamConfig,
    new: StreamConfig,
    existing: Mapping[str, StreamConfig] | Lookup,
    *,
    pedantic: bool = False,
    single_server: bool = True,
    consumers: Callable[[], Iterable[tuple[str, int, int]]] | None = None,
) -> StreamConfig:
    """:func:`_check_stream_update`, its refusal given the offending value (:func:`explain`).
    ``consumers``: the stream's consumers as ``(name, max_ack_pending, inactive_threshold)``,
    asked only when the update changes its consumer limits (:func:`check_consumer_limits`;
    a single server before the subjects' overlap, a cluster after it)."""
    try:
        return _check_stream_update(old, new, existing, pedantic=pedantic,
                                    single_server=single_server, consumers=consumers)
    except ApiError as err:
        raise explain(err, new) from None


def check_consumer_limits(old: StreamConfig, new: StreamConfig,
                          consumers: Callable[[], Iterable[tuple[str, int, int]]]) -> None:
    """A change of the stream's consumer limits that an existing consumer exceeds (its
    inactive_threshold or max_ack_pending above a new non-zero limit): 10069 naming them,
    as a single server's updateWithAdvisory and a cluster's meta leader
    (jsClusteredStreamUpdateRequest) refuse it ("change to limits violates consumers")."""
    o, n = old.consumer_limits, new.consumer_limits
    threshold = n.inactive_threshold if n.inactive_threshold > 0 and \
        n.inactive_threshold != o.inactive_threshold else 0
    pending = n.max_ack_pending if n.max_ack_pending > 0 and \
        n.max_ack_pending != o.max_ack_pending else 0
    if not threshold and not pending:
        return
    over = [name for name, max_ack, inactive in consumers()
            if (threshold and inactive > threshold) or (pending and max_ack > pending)]
    if over:
        raise nats_error("StreamUpdate", field="consumer_limits",
                         err=f"change to limits violates consumers: {', '.join(over)}")


def _check_stream_update(
    old: StreamConfig,
    new: StreamConfig,
    existing: Mapping[str, StreamConfig] | Lookup,
    *,
    pedantic: bool = False,
    single_server: bool = True,
    consumers: Callable[[], Iterable[tuple[str, int, int]]] | None = None,
) -> StreamConfig:
    """A ``STREAM.UPDATE`` of the stream configured ``old`` to ``new``.

    ``existing`` holds every stream (the one updated included, under its name). Returns the
    configuration the stream gets (defaults, sealing adjustments, ``_nats.req.level``) or
    raises the first error: the server's rules in its order, then the documentation's non-editable
    fields the server would accept (:data:`DIVERGENCES`).
    """
    find = existing if callable(existing) else _lookup_in(existing)
    # The request is checked as sent, then again (with the server's metadata) against the
    # stream's current configuration.
    first = check_stream_config(new, find, pedantic)
    # The stream is named by the request (`STREAM.UPDATE.<name>`, `stream edit NAME`).
    if first.name != old.name:
        raise nats_error("StreamMismatch", field="name")
    set_static_metadata(first, required_api_level(first))
    cfg = check_stream_config(first, find, pedantic)
    if single_server:
        check_single_server(cfg)
    if cfg.storage != old.storage:
        raise invalid_config(
            "stream configuration update can not change storage type", field="storage"
        )
    if cfg.retention != old.retention and "workqueue" in (cfg.retention, old.retention):
        raise invalid_config(
            "stream configuration update can not change retention policy to/from workqueue",
            field="retention",
        )
    if old.sealed and not cfg.sealed:
        raise invalid_config(
            "stream configuration update can not unseal a sealed stream", field="sealed"
        )
    if old.deny_delete and not cfg.deny_delete:
        raise invalid_config(
            "stream configuration update can not cancel deny message deletes", field="deny_delete"
        )
    if old.deny_purge and not cfg.deny_purge:
        raise invalid_config(
            "stream configuration update can not cancel deny purge", field="deny_purge"
        )
    # Adding or changing a mirror is refused; removing it promotes the mirror to a stream.
    if cfg.mirror is not None and cfg.mirror != old.mirror:
        raise nats_error("StreamMirrorNotUpdatable", field="mirror")
    _check_discard_new_per_subject(cfg)
    if old.allow_msg_ttl and not cfg.allow_msg_ttl:
        raise invalid_config("message TTL status can not be disabled", field="allow_msg_ttl")
    if cfg.allow_msg_counter != old.allow_msg_counter:
        raise invalid_config(
            "stream configuration update can not change message counter setting",
            field="allow_msg_counter",
        )
    if old.allow_msg_schedules and not cfg.allow_msg_schedules:
        raise invalid_config(
            "message schedules can not be disabled", field="allow_msg_schedules"
        )
    if (old.persist_mode or "default") != (cfg.persist_mode or "default"):
        raise invalid_config(
            "stream configuration update can not change persist mode", field="persist_mode"
        )

    requested = cfg.copy()
    if cfg.sealed:
        seal(cfg)

    # Only the subjects the update adds can clash: those it keeps were checked against every
    # stream when they were added (and every stream added since was checked against them),
    # so an update of thousands of streams (a region's failback) is not a scan each.
    if consumers is not None and single_server:  # (updateWithAdvisory: before the overlap)
        check_consumer_limits(old, cfg, consumers)
    added = [s for s in cfg.subjects if s not in old.subjects]
    clash = None if callable(existing) or not added else \
        overlapping_stream(added, existing, old.name)
    if clash:
        raise _overlap_error(clash)
    if consumers is not None and not single_server:  # (the meta leader's: after it)
        check_consumer_limits(old, cfg, consumers)

    # The documentation's "Editable" column where the server has no rule of its own.
    if requested.max_consumers != old.max_consumers:
        raise _not_editable("max_consumers")
    if requested.first_seq != old.first_seq:
        raise _not_editable("first_seq")
    if not requested.sealed:
        if requested.deny_delete and not old.deny_delete:
            raise _not_editable("deny_delete")
        if requested.deny_purge and not old.deny_purge:
            raise _not_editable("deny_purge")
    return cfg
