"""The object model of a topology: the format's constants (tables, kinds, cluster keys, the
server errors the checks report), :class:`Problem`, :class:`TopologyCluster`, :class:`Origin`, the
Kafka specs (:class:`TopicSpec`, :class:`LinkSpec`, :class:`MirrorTopicSpec`),
:class:`TopologyObject`, and how a problem names an object's field (a KV object's errors
name the KV field: :func:`kv_field`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import NATS_ERRORS

if TYPE_CHECKING:  # pragma: no cover
    from ..config.stream import StreamConfig
    from ..errors import JetlinkError
    from ..kafka.links import LinkConfig


__all__ = [
    "BINDING_KEYS",
    "AUTHORIZER_KEYS",
    "CLUSTER_KEYS",
    "CLUSTER_KINDS",
    "DEFAULT_CLUSTER",
    "FORMAT_VERSION",
    "KAFKA_KINDS",
    "KIND_OF_TABLE",
    "AclSpec",
    "OBJECT_TABLES",
    "TEXT_CYCLE",
    "TEXT_REPUBLISH_CYCLE",
    "TOP_LEVEL",
    "LinkSpec",
    "MirrorTopicSpec",
    "Origin",
    "Problem",
    "TopicSpec",
    "TopologyCluster",
    "TopologyObject",
    "kv_field",
]

FORMAT_VERSION = 1
DEFAULT_CLUSTER = "local"
CLUSTER_KINDS = ("nats", "kafka")
OBJECT_TABLES = (
    "streams", "kv", "kv_mirrors", "kv_aggregates", "topics", "links", "mirror_topics", "acls",
)
TOP_LEVEL = ("version", "clusters") + OBJECT_TABLES
# table -> the object kind named in Problem.object ("stream ORDERS", "kv CONFIG", ...)
KIND_OF_TABLE = {
    "streams": "stream",
    "kv": "kv",
    "kv_mirrors": "kv_mirror",
    "kv_aggregates": "kv_aggregate",
    "topics": "topic",
    "links": "link",
    "mirror_topics": "mirror_topic",
    "acls": "acl",
}
KAFKA_KINDS = ("topic", "link", "mirror_topic", "acl")
_TABLE_OF_KIND = {kind: table for table, kind in KIND_OF_TABLE.items()}
_NAME_RE = re.compile(r"[A-Za-z0-9_-]+")  # JetStream domain names (fullmatch)
# cluster names: the data directory's rule (core/limits.py), said in its words
CLUSTER_RULE = "use 1 to 64 letters, digits, '_' or '-'"
# A cluster bound to a live NATS server: ``[clusters.<name>]`` keys naming how to connect
# (natscli's connection settings, as core/live/target.py ServerTarget holds them). ``server``
# or ``context`` binds; the others refine (they override the context's settings).
BINDING_KEYS = ("server", "context", "js_domain", "user", "password", "token", "creds", "nkey",
                "tls_cert", "tls_key", "tls_ca", "tls_first", "timeout")
# a kafka cluster's authorizer: whether it enforces ACLs, Kafka's super.users and
# allow.everyone.if.no.acl.found
AUTHORIZER_KEYS = ("authorizer", "super_users", "allow_everyone_if_no_acl_found")
CLUSTER_KEYS = ("kind", "description", *AUTHORIZER_KEYS, *BINDING_KEYS)
_PATH_KEYS = ("creds", "nkey", "tls_cert", "tls_key", "tls_ca")
_CONTEXT_NAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,100}")  # jetlink's or natscli's context names

_ERR_NOT_FOUND = NATS_ERRORS["StreamNotFound"]  # (404, 10059, "stream not found")
_ERR_OVERLAP = NATS_ERRORS["StreamSubjectOverlap"]  # (400, 10065, ...)
_ERR_INVALID = NATS_ERRORS["StreamInvalidConfig"]  # (500, 10052, "{err}")
_ERR_MIRROR_SIZE = NATS_ERRORS["MirrorMaxMessageSizeTooBig"]  # 10030
_ERR_SOURCE_SIZE = NATS_ERRORS["SourceMaxMessageSizeTooBig"]  # 10046
TEXT_CYCLE = "detected cycle"
TEXT_REPUBLISH_CYCLE = "stream configuration for republish destination forms a cycle"


@dataclass
class Problem:
    """One thing wrong in the files: where (file, object, field) and what (err_code, text)."""

    file: str
    object: str | None
    field: str | None
    err_code: int
    description: str
    # the offending value, for people (``max_age = 50ms``): only when known
    detail: str | None = None

    def __post_init__(self) -> None:
        # a text that starts with its field (a KV config's "ttl: invalid duration ...") says
        # it once: the field is shown beside it
        said = f"{self.field}: "
        if self.field and self.description.startswith(said):
            self.description = self.description[len(said):]

    def to_dict(self) -> dict[str, Any]:
        out = {
            "file": self.file,
            "object": self.object,
            "field": self.field,
            "err_code": self.err_code,
            "description": self.description,
        }
        if self.detail:
            out["detail"] = self.detail
        return out


@dataclass
class TopologyCluster:
    """A cluster as a topology file declares it (``[clusters.<name>]``): its kind, its
    description and the live server it is bound to, if any."""

    name: str
    kind: str = "nats"
    description: str = ""
    file: str = ""
    # the live server the cluster is bound to: BINDING_KEYS as the file gives them ({}: not
    # bound; the embedded engine's data directory, or the server in force)
    binding: dict[str, Any] = field(default_factory=dict)
    # a kafka cluster: whether it enforces ACLs (``authorizer = true``), its super users
    # (principals never refused) and whether a resource without ACLs is open; None: not said
    authorizer: bool | None = None
    super_users: tuple[str, ...] | None = None
    allow_everyone_if_no_acl_found: bool | None = None

    @property
    def authorizer_settings(self) -> tuple[Any, ...]:
        """The authorizer keys as the file gives them (AUTHORIZER_KEYS' order)."""
        return (self.authorizer, self.super_users, self.allow_everyone_if_no_acl_found)

    @property
    def bound(self) -> bool:
        """Bound to a live server (``server`` or ``context`` given)."""
        return bool(self.binding.get("server") or self.binding.get("context"))

    def to_table(self) -> dict[str, Any]:
        """The ``[clusters.<name>]`` table (kind, description when set, the binding)."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.description:
            out["description"] = self.description
        for key, value in zip(AUTHORIZER_KEYS, self.authorizer_settings, strict=True):
            if value is not None:
                out[key] = list(value) if key == "super_users" else value
        out.update({k: self.binding[k] for k in BINDING_KEYS if k in self.binding})
        return out


@dataclass
class Origin:
    """A mirror or source agreement of an object, with the cluster it resolves to.

    ``cluster`` is None when the origin is reached through an external API prefix that does
    not name a domain (``$JS.<domain>.API``): it lies outside what the topology describes.
    """

    field: str  # the StreamConfig field: "mirror" or "sources[2]"
    name: str
    cluster: str | None
    is_mirror: bool
    filter_subject: str = ""


@dataclass(frozen=True)
class TopicSpec:
    """A declared Kafka topic (``[topics.<key>]``): configs validated, as Kafka's strings."""

    name: str
    partitions: int = 1
    configs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class LinkSpec:
    """A declared cluster link (``[links.<key>]``), living on its destination cluster (the
    object's ``cluster``). ``configs``: the explicitly set link configurations as
    ``LinkConfig.build(...).to_json()`` gives them (normalised, sorted); the filters of
    ``consumer_group_filters`` / ``topic_filters`` are folded in as the JSON text of
    ``consumer.offset.group.filters`` / ``auto.create.mirror.topics.filters``."""

    name: str
    source_cluster: str
    configs: dict[str, str] = field(default_factory=dict)

    @property
    def config(self) -> LinkConfig:
        from ..kafka.links import LinkConfig

        return LinkConfig(self.configs)


@dataclass(frozen=True)
class MirrorTopicSpec:
    """A declared mirror topic (``[mirror_topics.<key>]``) on its link's destination cluster.
    ``source_topic``: as given, else the name without the link's ``cluster.link.prefix``
    (resolved when the link is loaded, in any file). ``configs``: the mirror's own configs
    (not synced from the source; ``mirror.start.offset.spec`` allowed), validated."""

    name: str
    link: str
    source_topic: str
    configs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class AclSpec:
    """A declared Kafka ACL (``[acls.<key>]``) of its cluster: the binding's fields as Kafka
    names them (checked by core/kafka/acls.py ``AclBinding.make``). ``name`` is its identity,
    :func:`acl_identity` of the binding: the key of a table is only a label."""

    name: str
    resource_type: str
    resource_name: str
    pattern_type: str
    principal: str
    host: str
    operation: str
    permission: str

    @property
    def configs(self) -> dict[str, str]:  # what every Kafka spec has: none here
        return {}

    def binding(self) -> Any:
        from ..kafka.acls import AclBinding

        return AclBinding(self.resource_type, self.resource_name, self.pattern_type,
                          self.principal, self.host, self.operation, self.permission)


def acl_identity(b: Any) -> str:
    """An ACL binding as one line, its identity in a topology:
    ``User:app ALLOW READ TOPIC:orders`` (`` PREFIXED`` and `` from HOST`` when not the
    defaults LITERAL and ``*``)."""
    text = f"{b.principal} {b.permission} {b.operation} {b.resource_type}:{b.name}"
    if b.pattern_type != "LITERAL":
        text += f" {b.pattern_type}"
    return text + (f" from {b.host}" if b.host != "*" else "")


@dataclass
class TopologyObject:
    """A declared stream, KV bucket, KV mirror or KV aggregate, as the stream it becomes; or
    a declared Kafka topic, cluster link or mirror topic (``config`` None, no origins)."""

    kind: str  # "stream" | "kv" | "kv_mirror" | "kv_aggregate" | "topic" | "link" |
    # "mirror_topic" | "acl"
    key: str  # the table key ([streams.<key>]); the stream name for a JSON stream file
    cluster: str
    name: str  # the stream name (KV_<bucket> for buckets and aggregates); the Kafka name
    file: str
    index: int = 0
    # StreamConfig / KeyValueConfig / KVMirrorConfig / KVAggregateConfig / TopicSpec /
    # LinkSpec / MirrorTopicSpec (None: the object did not decode or broke its own rules)
    spec: Any = None
    # a link or mirror topic that broke its own rules: what its fields that passed say
    # (name, source cluster, link), so that the rules between objects still check it (a
    # bad prefix does not hide an undeclared source cluster); None otherwise
    partial: Any = None
    config: StreamConfig | None = None  # the declared stream (None: the object did not decode)
    effective: StreamConfig | None = None  # after check_stream_config (None: invalid)
    origins: list[Origin] = field(default_factory=list)
    explicit_cluster: bool = False
    # checked as a STREAM.CREATE (sealed, mirror_direct without a mirror, plain filters);
    # False when the stream exists already (jetlink apply: an update)
    creating: bool = True
    # mirror topics: source_topic as declared (None: the name without the link's prefix)
    given_source_topic: str | None = None
    # the fields set aside for a fault of their own (a value that does not decode): a later
    # rule's problem about one of them (now missing) follows from that fault, said once
    set_aside: set[str] = field(default_factory=set)

    @property
    def label(self) -> str:
        return f"{self.kind} {self.key}"


def follows_from(fld: str | None, aside: set[str]) -> bool:
    """Whether a problem about field ``fld`` is about a field set aside (``aside``): that
    field, one inside it, or the table or list holding it (``mirror.name`` set aside:
    ``mirror.name`` and ``mirror``; ``origins[0]``: ``origins``)."""
    if not fld or not aside:
        return False
    for a in aside:
        if fld == a or fld.startswith((a + ".", a + "[")) or a.startswith((fld + ".",
                                                                           fld + "[")):
            return True
    return False


@dataclass
class _FileEntry:
    path: str
    position: int


# StreamConfig field (regex over the error's field) -> the KV object's field. The patterns
# are compiled the first time a problem of a KV object of that kind is named (kv_field).
_N = r"\[(\d+)\]"
_KV_FIELD_PATTERNS: dict[str, list[tuple[str, str]]] = {}
_KV_FIELD_RULES: dict[str, list[tuple[re.Pattern[str], str]]] = {}


def _rules(kind: str) -> list[tuple[re.Pattern[str], str]]:
    rules = _KV_FIELD_RULES.get(kind)
    if rules is None:
        rules = _KV_FIELD_RULES[kind] = [
            (re.compile(p), r) for p, r in _KV_FIELD_PATTERNS[kind]
        ]
    return rules


_BUCKET_RULES = [
    (r"^name$", "bucket"),
    (r"^subjects.*", "bucket"),
    (r"^max_msgs_per_subject$", "history"),
    (r"^(max_age|duplicate_window)$", "ttl"),
    (r"^max_msg_size$", "max_value_size"),
    (r"^num_replicas$", "replicas"),
    (r"^(subject_delete_marker_ttl|allow_msg_ttl)$", "limit_marker_ttl"),
]
_KV_FIELD_PATTERNS["kv"] = _BUCKET_RULES
_KV_FIELD_PATTERNS["kv_aggregate"] = (
    _BUCKET_RULES
    + [
        (rf"^sources{_N}\.subject_transforms{_N}.*", r"origins[\1].keys[\2]"),
        (rf"^sources{_N}\.external.*", r"origins[\1].domain"),
        (rf"^sources{_N}\.name$", r"origins[\1].bucket"),
        (rf"^sources{_N}.*", r"origins[\1]"),
        (r"^sources$", "origins"),
    ]
)
_KV_FIELD_PATTERNS["kv_mirror"] = [
    (r"^mirror\.subject_transforms" + _N + ".*", r"keys[\1]"),
    (r"^mirror\.filter_subject$", "keys"),
    (r"^mirror\.external.*", "domain"),
    (r"^mirror.*", "origin_bucket"),
    (r"^max_msgs_per_subject$", "history"),
    (r"^max_age$", "ttl"),
    (r"^max_msg_size$", "max_value_size"),
    (r"^num_replicas$", "replicas"),
]


def kv_field(kind: str, stream_field: str | None) -> str | None:
    """The field of a KV object that a StreamConfig field comes from (unchanged otherwise)."""
    if stream_field is None or kind not in _KV_FIELD_PATTERNS:
        return stream_field
    for rx, repl in _rules(kind):
        if rx.match(stream_field):
            return rx.sub(repl, stream_field, count=1)
    return stream_field


def _field_for(obj: TopologyObject, stream_field: str | None) -> str | None:
    """``kv_field``, naming ``origins[i].stream`` when the aggregate origin gave a stream."""
    fld = kv_field(obj.kind, stream_field)
    if obj.kind != "kv_aggregate" or not fld:
        return fld
    from ..config.kv import KVAggregateConfig

    if isinstance(obj.spec, KVAggregateConfig):
        m = re.match(r"^origins\[(\d+)\]\.bucket$", fld)
        if m and int(m.group(1)) < len(obj.spec.origins):
            origin = obj.spec.origins[int(m.group(1))]
            if origin.stream and not origin.bucket:
                fld = f"origins[{m.group(1)}].stream"
    return fld


def _problem_for(obj: TopologyObject, exc: JetlinkError, *, stream_fields: bool = False) -> Problem:
    fld = exc.field
    if stream_fields:
        fld = _field_for(obj, fld)
    detail = exc.detail if obj.kind == "stream" else None
    # a KV object's: the value as its own field says it (ttl = -1s for its max_age), when
    # the stream field's detail is that value
    head = f"{exc.field} = "
    if obj.kind != "stream" and exc.detail and fld and exc.detail.startswith(head):
        detail = f"{fld} = {exc.detail[len(head):]}"
    return Problem(obj.file, obj.label, fld, getattr(exc, "err_code", 0), exc.description,
                   detail=detail)


def _is_duplicate(obj: TopologyObject) -> bool:
    return getattr(obj, "duplicate_of", None) is not None
