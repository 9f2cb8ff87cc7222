"""Writing a topology as a document of the topology format (``jetlink export``; ``jetlink
apply`` builds its tables with them too): a stream, KV object or Kafka object as its table,
durations as human strings, fields at their defaults left out.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Protocol

from ..config.stream import StreamConfig, _JsonMixin
from ..durations import format_duration
from .decode import _DURATIONS
from .kafka_specs import _FIELD_OF_FILTER
from .model import (
    _NAME_RE,
    _TABLE_OF_KIND,
    DEFAULT_CLUSTER,
    FORMAT_VERSION,
    KAFKA_KINDS,
    OBJECT_TABLES,
    AclSpec,
    LinkSpec,
    TopicSpec,
    _is_duplicate,
)

if TYPE_CHECKING:  # pragma: no cover
    from .model import TopologyCluster, TopologyObject

__all__ = ["kv_table", "object_table", "stream_table", "to_document"]


class _Declarations(Protocol):
    """What :func:`to_document` reads of a topology (core/topology/load.py ``Topology``,
    which is written through this module: it is not imported here)."""

    clusters: dict[str, TopologyCluster]
    objects: list[TopologyObject]


def _stream_table(cfg: StreamConfig, key: str, cluster: str, with_cluster: bool) -> dict[str, Any]:
    doc = cfg.to_json()
    default = StreamConfig(name=cfg.name).to_json()
    out: dict[str, Any] = {}
    if with_cluster:
        out["cluster"] = cluster
    for k, v in doc.items():
        if k == "name":
            if v != key:  # a table keyed otherwise (NAME@cluster) names its stream
                out[k] = v
            continue
        if k in default and default[k] == v and k != "subjects":
            continue
        if k in _DURATIONS and isinstance(v, int) and v:
            v = format_duration(v)
        if k == "consumer_limits" and isinstance(v, dict) and \
                isinstance(v.get("inactive_threshold"), int) and v["inactive_threshold"]:
            v = {**v, "inactive_threshold": format_duration(v["inactive_threshold"])}
        if k in ("mirror", "sources"):
            v = [_origin_table(s) for s in v] if k == "sources" else _origin_table(v)
        out[k] = v
    return out


def stream_table_defaults() -> dict[str, Any]:
    """The value each field :func:`stream_table` leaves out stands for (the field at its
    default), to show both sides of a change of one."""
    return {k: v for k, v in StreamConfig(name="").to_json().items() if k != "name"}


def _origin_table(src: dict[str, Any]) -> dict[str, Any]:
    ext = src.get("external")
    if ext and not ext.get("deliver"):
        api = ext.get("api", "")
        if api.startswith("$JS.") and api.endswith(".API") and _NAME_RE.fullmatch(api[4:-4]):
            src = {k: v for k, v in src.items() if k != "external"}
            src["domain"] = api[4:-4]
    return src


def kv_table_defaults(spec: Any) -> dict[str, Any]:
    """The value each field of a KV object's table (:func:`kv_table`) stands for when left
    out, for the fields whose default is a setting (history 1, replicas 1, storage file):
    to show both sides of a change of one. A field whose default is no setting (no TTL,
    no limit given as 0, no description) is left out: shown unset."""
    out = {}
    for f in dataclasses.fields(spec):
        value = _field_default(f)
        if value not in (None, 0, "", False) and not isinstance(value, (list, dict)):
            out[f.name] = value
    return out


def _field_default(f: Any) -> Any:

    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def _spec_table(
    spec: Any, key_field: str, key: str, cluster: str, with_cluster: bool
) -> dict[str, Any]:
    """A KV object's table: fields away from their defaults, durations as strings."""

    out: dict[str, Any] = {}
    if with_cluster:
        out["cluster"] = cluster
    for f in dataclasses.fields(spec):
        value = getattr(spec, f.name)
        if (f.name == key_field and value == key) or value == _field_default(f):
            continue
        if f.name in ("ttl", "limit_marker_ttl") and isinstance(value, int):
            value = format_duration(value)
        elif f.name == "origins":
            value = [_spec_table(o, "", "", "", False) for o in value]
        elif isinstance(value, _JsonMixin):  # the nested configs (Placement, StreamSource, ...)
            value = value.to_json()
        elif isinstance(value, list):
            value = [v.to_json() if isinstance(v, _JsonMixin) else v for v in value]
        out[f.name] = value
    return out


def _kafka_table(
    obj: TopologyObject, taken: dict[str, Any], with_cluster: bool
) -> tuple[str, dict[str, Any]]:
    """(table key, table) of a Kafka object: ``name`` only when it differs from the key (a
    key already taken by an object of another cluster becomes ``<key>@<cluster>``), fields
    at their defaults left out, configs sorted, link filters as arrays of tables."""
    spec = obj.spec
    key = obj.key if obj.key not in taken else f"{obj.key}@{obj.cluster}"
    out: dict[str, Any] = {}
    if with_cluster:
        out["cluster"] = obj.cluster
    if isinstance(spec, AclSpec):
        return key, {**out, **_acl_table(spec)}
    if spec.name != key:
        out["name"] = spec.name
    configs = dict(sorted(spec.configs.items()))
    if isinstance(spec, TopicSpec):
        if spec.partitions != 1:
            out["partitions"] = spec.partitions
    elif isinstance(spec, LinkSpec):
        from ..kafka.links import group_filters, topic_filters

        out["source_cluster"] = spec.source_cluster
        filters = {
            "consumer_group_filters": group_filters(spec.configs),
            "topic_filters": topic_filters(spec.configs),
        }
        configs = {k: v for k, v in configs.items() if k not in _FIELD_OF_FILTER}
        if configs:
            out["configs"] = configs
        for fld, items in filters.items():
            if items:
                out[fld] = [f.to_json() for f in items]
        return key, out
    else:
        out["link"] = spec.link
        if spec.source_topic != spec.name:
            out["source_topic"] = spec.source_topic
    if configs:
        out["configs"] = configs
    return key, out


def _acl_table(spec: AclSpec) -> dict[str, Any]:
    """An ACL's table: its fields, those at their defaults (TOPIC, LITERAL, ``*``, ALLOW)
    left out; the CLUSTER resource's name too."""
    out: dict[str, Any] = {"principal": spec.principal, "operation": spec.operation}
    if spec.resource_type != "TOPIC":
        out["resource_type"] = spec.resource_type
    if spec.resource_type != "CLUSTER":
        out["resource_name"] = spec.resource_name
    for fld, default in (("pattern_type", "LITERAL"), ("host", "*"),
                         ("permission", "ALLOW")):
        if getattr(spec, fld) != default:
            out[fld] = getattr(spec, fld)
    return out


def stream_table(cfg: StreamConfig) -> dict[str, Any]:
    """A stream's ``[streams.<name>]`` table as :func:`to_document` writes it (no
    ``cluster``, no ``name``: the table key is the stream name)."""
    return _stream_table(cfg, cfg.name, "", False)


def kv_table(spec: Any) -> dict[str, Any]:
    """A KV object's table (KeyValueConfig, KVMirrorConfig or KVAggregateConfig) as
    :func:`to_document` writes it (no ``cluster``; the bucket / name is the table key)."""
    from ..config.kv import KVMirrorConfig

    key_field = "name" if isinstance(spec, KVMirrorConfig) else "bucket"
    return _spec_table(spec, key_field, getattr(spec, key_field), "", False)


def object_table(obj: TopologyObject) -> dict[str, Any]:
    """The table :func:`to_document` writes for ``obj``, without ``cluster`` and the name
    (its identity), to compare two declarations of one object; {} when it did not decode."""
    if obj.spec is None:
        return {}
    if obj.kind in KAFKA_KINDS:
        table = _kafka_table(obj, {}, False)[1]
        table.pop("name", None)
        return table
    if obj.kind == "stream":
        return stream_table(obj.spec)
    return kv_table(obj.spec)


def to_document(topo: _Declarations) -> dict[str, Any]:
    """The topology in the file format (see :meth:`Topology.to_document`)."""
    doc: dict[str, Any] = {"version": FORMAT_VERSION}
    if topo.clusters:
        doc["clusters"] = {c.name: c.to_table() for c in topo.clusters.values()}
    tables: dict[str, dict[str, dict[str, Any]]] = {t: {} for t in OBJECT_TABLES}
    for obj in topo.objects:
        if obj.spec is None or _is_duplicate(obj):
            continue
        with_cluster = obj.cluster != DEFAULT_CLUSTER
        if obj.kind in KAFKA_KINDS:
            key, table = _kafka_table(obj, tables[_TABLE_OF_KIND[obj.kind]], with_cluster)
            tables[_TABLE_OF_KIND[obj.kind]][key] = table
            continue
        if obj.kind == "stream":
            table = _stream_table(obj.spec, obj.key, obj.cluster, with_cluster)
        else:
            key_field = "name" if obj.kind == "kv_mirror" else "bucket"
            table = _spec_table(obj.spec, key_field, obj.key, obj.cluster, with_cluster)
        tables[_TABLE_OF_KIND[obj.kind]][obj.key] = table
    for t in OBJECT_TABLES:
        if tables[t]:
            doc[t] = tables[t]
    return doc
