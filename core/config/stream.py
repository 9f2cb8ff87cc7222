"""StreamConfig and its parts, with the exact NATS JSON field names.

Field names are the JSON names, so ``cfg.max_msgs_per_subject`` is what ``nats stream info
--json`` prints. Durations are nanoseconds. ``to_json()`` reproduces the server's document
(field order and omitted empty fields); ``from_json()`` decodes like the server does.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Self, get_args

from .codec import decode, encode, jfield

# The policies' JSON values, as Literal types (nats.py's RetentionPolicy, DiscardPolicy and
# StorageType enums) and as the tuples the decoder and the checks test values against.
RetentionPolicy = Literal["limits", "interest", "workqueue"]
DiscardPolicy = Literal["old", "new"]
StorageType = Literal["file", "memory"]
RETENTION: tuple[RetentionPolicy, ...] = get_args(RetentionPolicy)
DISCARD: tuple[DiscardPolicy, ...] = get_args(DiscardPolicy)
STORAGE: tuple[StorageType, ...] = get_args(StorageType)
COMPRESSION = ("none", "s2")
PERSIST_MODE = ("default", "async")


class _JsonMixin:
    @classmethod
    def from_json(cls, doc: Any, *, strict: bool = True) -> Self:
        return decode(cls, doc, strict=strict)

    def to_json(self) -> dict[str, Any]:
        return encode(self)

    def copy(self) -> Self:
        """A deep copy: lists, dicts and nested configs are new objects (fast, no deepcopy).

        Every attribute is copied, ``_given_empty`` too (what ``copy.copy`` copies), without
        ``copy.copy``'s ``__reduce_ex__`` round trip: validating 10,000 configs copies each
        one once."""
        new = object.__new__(type(self))
        attrs = new.__dict__
        attrs.update(self.__dict__)
        for name, value in attrs.items():
            if type(value) in _SCALARS:
                continue
            if isinstance(value, list):
                attrs[name] = [v.copy() if isinstance(v, _JsonMixin) else v for v in value]
            elif isinstance(value, dict):
                attrs[name] = dict(value)
            elif isinstance(value, _JsonMixin):
                attrs[name] = value.copy()
        return new


# Attribute values copy() shares as they are (immutable).
_SCALARS = frozenset({str, int, bool, float, type(None), frozenset})


@dataclass
class SubjectTransformConfig(_JsonMixin):
    src: str = jfield("src", "string", "")
    dest: str = jfield("dest", "string", "")


@dataclass
class ExternalStream(_JsonMixin):
    api: str = jfield("api", "string", "")
    deliver: str = jfield("deliver", "string", "")


@dataclass
class StreamConsumerSource(_JsonMixin):
    name: str = jfield("name", "string", "", omitempty=True)
    deliver_subject: str = jfield("deliver_subject", "string", "", omitempty=True)


@dataclass
class StreamSource(_JsonMixin):
    name: str = jfield("name", "string", "")
    opt_start_seq: int = jfield("opt_start_seq", "uint64", 0, omitempty=True)
    opt_start_time: str = jfield("opt_start_time", "time.Time", "", omitempty=True)
    filter_subject: str = jfield("filter_subject", "string", "", omitempty=True)
    subject_transforms: list[SubjectTransformConfig] = jfield(
        "subject_transforms", "[]SubjectTransformConfig", omitempty=True, factory=list
    )
    external: ExternalStream | None = jfield("external", "ExternalStream", None, omitempty=True)
    consumer: StreamConsumerSource | None = jfield(
        "consumer", "StreamConsumerSource", None, omitempty=True
    )

    @property
    def domain(self) -> str | None:
        """The JetStream domain (cluster) named by ``external.api = "$JS.<d>.API"``, if any."""
        if (self.external and self.external.api.startswith("$JS.")
                and self.external.api.endswith(".API")):
            inner = self.external.api[len("$JS.") : -len(".API")]
            return inner or None
        return None

    def key(self) -> str:
        """An index key like the server's ``iname``: name + filters/transforms + external api."""
        parts = [self.name]
        if self.subject_transforms:
            parts += [f"{t.src}>{t.dest}" for t in self.subject_transforms]
        elif self.filter_subject:
            parts.append(self.filter_subject)
        if self.external:
            parts.append(self.external.api)
        return " ".join(parts)


@dataclass
class RePublish(_JsonMixin):
    src: str = jfield("src", "string", "", omitempty=True)
    dest: str = jfield("dest", "string", "")
    headers_only: bool = jfield("headers_only", "bool", False, omitempty=True)


@dataclass
class Placement(_JsonMixin):
    cluster: str = jfield("cluster", "string", "", omitempty=True)
    tags: list[str] = jfield("tags", "[]string", omitempty=True, factory=list)
    preferred: str = jfield("preferred", "string", "", omitempty=True)


@dataclass
class StreamConsumerLimits(_JsonMixin):
    inactive_threshold: int = jfield("inactive_threshold", "time.Duration", 0, omitempty=True)
    max_ack_pending: int = jfield("max_ack_pending", "int", 0, omitempty=True)


@dataclass
class StreamConfig(_JsonMixin):
    """A JetStream stream configuration (``io.nats.jetstream.api.v1.stream_configuration``)."""

    name: str = jfield("name", "string", "")
    description: str = jfield("description", "string", "", omitempty=True)
    subjects: list[str] = jfield("subjects", "[]string", omitempty=True, factory=list)
    retention: RetentionPolicy = jfield("retention", "enum", "limits", enum=RETENTION)
    max_consumers: int = jfield("max_consumers", "int", 0)
    max_msgs: int = jfield("max_msgs", "int64", 0)
    max_bytes: int = jfield("max_bytes", "int64", 0)
    max_age: int = jfield("max_age", "time.Duration", 0)
    max_msgs_per_subject: int = jfield("max_msgs_per_subject", "int64", 0)
    max_msg_size: int = jfield("max_msg_size", "int32", 0, omitempty=True)
    # any case, as the server's DiscardPolicy.UnmarshalJSON reads it (stored lower case)
    discard: DiscardPolicy = jfield("discard", "enum_fold", "old", enum=DISCARD)
    storage: StorageType = jfield("storage", "enum", "file", enum=STORAGE)
    num_replicas: int = jfield("num_replicas", "int", 0)
    no_ack: bool = jfield("no_ack", "bool", False, omitempty=True)
    duplicate_window: int = jfield("duplicate_window", "time.Duration", 0, omitempty=True)
    placement: Placement | None = jfield("placement", "Placement", None, omitempty=True)
    mirror: StreamSource | None = jfield("mirror", "StreamSource", None, omitempty=True)
    sources: list[StreamSource] = jfield("sources", "[]StreamSource", omitempty=True, factory=list)
    compression: str = jfield("compression", "compression", "none", enum=COMPRESSION)
    first_seq: int = jfield("first_seq", "uint64", 0, omitempty=True)
    subject_transform: SubjectTransformConfig | None = jfield(
        "subject_transform", "SubjectTransformConfig", None, omitempty=True
    )
    republish: RePublish | None = jfield("republish", "RePublish", None, omitempty=True)
    allow_direct: bool = jfield("allow_direct", "bool", False)
    mirror_direct: bool = jfield("mirror_direct", "bool", False)
    discard_new_per_subject: bool = jfield("discard_new_per_subject", "bool", False, omitempty=True)
    sealed: bool = jfield("sealed", "bool", False)
    deny_delete: bool = jfield("deny_delete", "bool", False)
    deny_purge: bool = jfield("deny_purge", "bool", False)
    allow_rollup_hdrs: bool = jfield("allow_rollup_hdrs", "bool", False)
    consumer_limits: StreamConsumerLimits = jfield(
        "consumer_limits", "StreamConsumerLimits", factory=StreamConsumerLimits
    )
    allow_msg_ttl: bool = jfield("allow_msg_ttl", "bool", False)
    subject_delete_marker_ttl: int = jfield(
        "subject_delete_marker_ttl", "time.Duration", 0, omitempty=True
    )
    allow_msg_counter: bool = jfield("allow_msg_counter", "bool", False, omitempty=True)
    allow_atomic: bool = jfield("allow_atomic", "bool", False, omitempty=True)
    allow_msg_schedules: bool = jfield("allow_msg_schedules", "bool", False, omitempty=True)
    persist_mode: str = jfield(
        "persist_mode", "enum", "", omitempty=True, enum=PERSIST_MODE + ("",)
    )
    allow_batched: bool = jfield("allow_batched", "bool", False, omitempty=True)
    metadata: dict[str, str] = jfield("metadata", "map[string]string", omitempty=True, factory=dict)

    @classmethod
    def from_json(cls, doc: Any, *, strict: bool = True) -> StreamConfig:
        """Decode like the server's API (strict mode, its default: unknown fields refused).
        The request's ``pedantic`` (StreamConfigRequest's, not a config field) is kept
        aside: :func:`pedantic_requested`."""
        pedantic = False
        if isinstance(doc, dict) and "pedantic" in doc:
            doc = dict(doc)
            value = doc.pop("pedantic")
            if value is not None and not isinstance(value, bool):
                from .codec import _json_kind, invalid_json

                raise invalid_json(f"json: cannot unmarshal {_json_kind(value)} into Go struct "
                                   "field StreamConfigRequest.pedantic of type bool",
                                   field="pedantic")
            pedantic = bool(value)
        cfg = decode(cls, doc, strict=strict, struct="StreamConfigRequest")
        if cfg.persist_mode == "default":
            cfg.persist_mode = ""
        if pedantic:
            object.__setattr__(cfg, "_pedantic", True)
        return cfg

    @classmethod
    def from_any(cls, doc: Any, *, strict: bool = True) -> StreamConfig:
        """A StreamConfig document, or a StreamInfo (``nats stream info --json``) holding one."""
        if isinstance(doc, dict) and isinstance(doc.get("config"), dict) and (
            "state" in doc or "created" in doc or "name" not in doc
        ):
            return cls.from_json(doc["config"], strict=strict)
        return cls.from_json(doc, strict=strict)

    @property
    def is_mirror(self) -> bool:
        return self.mirror is not None

    def origins(self) -> list[StreamSource]:
        """The mirror, or the sources: the agreements this stream pulls from."""
        return [self.mirror] if self.mirror else list(self.sources)

    def replace(self, **changes: Any) -> StreamConfig:
        return dataclasses.replace(self.copy(), **changes)


# The backing streams of KV buckets, object stores and MQTT state: "system" streams a
# listing leaves out unless asked (jsm.go IsInternalStream, natscli's stream ls -a)
SYSTEM_STREAM_PREFIXES = ("KV_", "OBJ_", "$MQTT_")


def is_system_stream(name: str) -> bool:
    """Whether ``name`` is a backing stream (:data:`SYSTEM_STREAM_PREFIXES`)."""
    return name.startswith(SYSTEM_STREAM_PREFIXES)


def pedantic_requested(cfg: StreamConfig) -> bool:
    """Whether the request ``cfg`` was decoded from asked for the server's pedantic mode
    (``"pedantic": true``: refuse what the server would otherwise adjust, 10157)."""
    return bool(getattr(cfg, "_pedantic", False))


def interest_keeps_none(old: StreamConfig, new: StreamConfig, consumers: int) -> bool:
    """An update to interest retention of a stream with no consumer: nobody is interested,
    so no stored message stays (nats-server 2.15.1 removes them all)."""
    return old.retention != "interest" and new.retention == "interest" and not consumers


def parse_time(text: str) -> datetime:
    """Parse an RFC3339 time (``Z`` or offset, optional fraction up to nanoseconds)."""
    t = text.strip()
    if "T" not in t and "t" not in t:
        raise ValueError(text)
    if t.endswith(("Z", "z")):
        t = t[:-1] + "+00:00"
    head, _, tail = t.partition(".")
    if tail:
        digits = ""
        rest = tail
        while rest and rest[0].isdigit():
            digits, rest = digits + rest[0], rest[1:]
        t = head + "." + (digits[:6].ljust(6, "0")) + rest
    dt = datetime.fromisoformat(t)
    if dt.tzinfo is None:
        raise ValueError(text)
    return dt


# Which fields `stream edit` may change, from the "Editable" column of the NATS documentation's
# stream configuration table.
# "once" = only from false to true (sealed, allow_msg_ttl, allow_msg_schedules).
EDITABLE: dict[str, str] = {
    "name": "no",
    "storage": "no",
    "subjects": "yes",
    "num_replicas": "yes",
    "max_age": "yes",
    "max_bytes": "yes",
    "max_msgs": "yes",
    "max_msg_size": "yes",
    "max_consumers": "no",
    "no_ack": "yes",
    "retention": "no",
    "discard": "yes",
    "duplicate_window": "yes",
    "placement": "yes",
    "mirror": "yes",
    "sources": "yes",
    "max_msgs_per_subject": "yes",
    "description": "yes",
    "sealed": "once",
    "deny_delete": "no",
    "deny_purge": "no",
    "allow_rollup_hdrs": "yes",
    "republish": "yes",
    "allow_direct": "yes",
    "mirror_direct": "yes",
    "discard_new_per_subject": "yes",
    "metadata": "yes",
    "compression": "yes",
    "first_seq": "no",
    "subject_transform": "yes",
    "consumer_limits": "yes",
    "allow_msg_ttl": "once",
    "subject_delete_marker_ttl": "yes",
    "allow_atomic": "yes",
    "allow_msg_counter": "no",
    "allow_msg_schedules": "once",
    "persist_mode": "yes",
    "allow_batched": "yes",
}
