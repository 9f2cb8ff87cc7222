"""Topology files: many clusters, streams, KV objects and Kafka objects declared together,
checked as a whole.

``jetlink validate FILE...`` reads every file into ONE :class:`Topology` and reports every
:class:`Problem` it finds (it never stops at the first one). File kinds:

* a JSON StreamConfig, or a StreamInfo (``nats stream info --json``): one stream in cluster
  ``local``; a JSON array of those: several streams;
* a topology, TOML or JSON, with the top-level tables ``version``, ``clusters``, ``streams``,
  ``kv``, ``kv_mirrors``, ``kv_aggregates``, ``topics``, ``links``, ``mirror_topics`` (a JSON
  object holding any of these keys is a topology; any other JSON object is a stream config).
  The format is in docs/topology.md.

A NATS cluster may be bound to a live server (``[clusters.west] server = "nats://..."`` or
``context = "NAME"``, with natscli's other connection keys: :data:`BINDING_KEYS`,
``Cluster.binding``); the keys are checked here (URLs and timeouts by core/live/settings.py's
rules), resolved and connected by core/topology_apply.py. A bound cluster holds no Kafka
objects.

Kafka objects (``topics``, ``links``, ``mirror_topics``) are :class:`TopologyObject` of kind
``topic`` / ``link`` / ``mirror_topic`` whose ``spec`` is a :class:`TopicSpec`,
:class:`LinkSpec` or :class:`MirrorTopicSpec` (``config`` None, no origins). They are kept in
``Topology.kafka`` keyed by (kind, cluster, name), never in ``Topology.streams``; the stream
checks pass them by. Their rules are the engine's own (core/kafka: topic names, partitions and
configs; LinkConfig.build; the mirror topic rules of Mirrors.create); their problems have
err_code 0 (the field holds NATS numbers) and end with the Kafka error's name and number,
``(INVALID_CONFIG 40)``, as jetlink prints engine errors.

Checks, in this order (problems are then sorted by file and object):

1. parsing: unreadable files and TOML/JSON syntax (err_code 0, with line and column);
   unknown keys, wrong types, bad durations (err_code 0, or the server's 10025 for a JSON
   type mismatch); bad server binding keys; undeclared clusters; duplicate definitions of
   one stream in one cluster; Kafka objects in a cluster bound to a NATS server.
2. each object's own rules: KV objects become their streams (``config.kv``), then every
   stream goes through the server's checks (``config.validate.stream_config_problems``: a
   STREAM.CREATE's unless the stream exists, then ``check_stream_config``'s) with a lookup
   of the streams of its cluster, and EVERY problem of the object is reported, the server's
   first one first;
   errors on KV objects name the KV field (``history``, ``origins[0].keys[1]``...). Kafka
   objects are checked against their own rules as they are loaded (every problem of one
   object, not only the first: name, partitions, configs).
3. whole-topology rules, which also reach across clusters (domains), where a single server
   cannot see:
   - a mirror or source whose origin is not declared in its cluster: a WARNING (in
     ``topo.warnings``, never a reason to fail: the server accepts such a stream and its
     mirror or source waits), 10059 ``stream not found: ...``, naming the stream and the
     cluster; ``stream add`` words it the same way (:func:`missing_origin_text`);
   - a KV mirror whose origin bucket lacks ``allow_direct`` (client error, err_code 0);
   - a mirror (10030) or source (10046) with a max_msg_size smaller than its origin's;
   - subjects of two streams of one cluster overlapping: 10065 on the later object;
   - mirror/source cycles: 10052 ``detected cycle: A -> B -> A`` on each stream of the cycle;
   - RePublish loops (ADR-28's "Loop Prevention" caution): stream X republishes into
     subjects stored by stream Y, and so on back to X: 10052 ``stream configuration for republish
     destination forms a cycle: X -> Y -> X (...)`` on each stream of the loop;
   - Kafka: a link's source cluster must be declared; a mirror topic's link must be declared
     in its cluster, in DESTINATION mode; its name is the link's prefix + the source topic,
     which must be declared (topic or mirror topic) in the link's source cluster; no topic of
     its name in its cluster; topic names of one cluster must not collide ('.' vs '_').
   A whole-topology problem that restates an object's own error (the server sees local
   cycles and message sizes too) replaces it with the more detailed text instead of
   repeating it.

Standard library only.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import os
import re
import time
import tomllib
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable

from .config.stream import (
    ExternalStream,
    Placement,
    RePublish,
    StreamConfig,
    StreamConsumerLimits,
    StreamConsumerSource,
    StreamSource,
    SubjectTransformConfig,
)
from .config.validate import check_stream_config, missing_origin_text, stream_config_problems
from .durations import DurationError, format_duration, parse_duration
from .errors import NATS_ERRORS, TOO_DEEP, ApiError, JetlinkError
from .subjects import overlaps

# The KV rules (config/kv.py) and the Kafka rules (core/kafka/) are imported by the
# functions that check or write KV or Kafka objects: a topology of streams only never loads
# them (`jetlink validate` start-up).
if TYPE_CHECKING:  # pragma: no cover
    from .config.kv import KVAggregateConfig, KVMirrorConfig, KeyValueConfig
    from .kafka.links import LinkConfig

__all__ = [
    "BINDING_KEYS",
    "CLUSTER_KINDS",
    "DEFAULT_CLUSTER",
    "FORMAT_VERSION",
    "KAFKA_KINDS",
    "Cluster",
    "LinkSpec",
    "MirrorTopicSpec",
    "Origin",
    "Problem",
    "TopicSpec",
    "Topology",
    "TopologyObject",
    "bench_validate",
    "kv_table",
    "load_files",
    "load_topology",
    "object_table",
    "stream_table",
    "validate_files",
    "validate_topology",
]

FORMAT_VERSION = 1
DEFAULT_CLUSTER = "local"
CLUSTER_KINDS = ("nats", "kafka")
OBJECT_TABLES = (
    "streams", "kv", "kv_mirrors", "kv_aggregates", "topics", "links", "mirror_topics",
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
}
KAFKA_KINDS = ("topic", "link", "mirror_topic")
_TABLE_OF_KIND = {kind: table for table, kind in KIND_OF_TABLE.items()}
_NAME_RE = re.compile(r"[A-Za-z0-9_-]+")  # cluster / domain names (fullmatch)
# A cluster bound to a live NATS server: ``[clusters.<name>]`` keys naming how to connect
# (natscli's connection settings, as core/live/target.py ServerTarget holds them). ``server``
# or ``context`` binds; the others refine (they override the context's settings).
BINDING_KEYS = ("server", "context", "js_domain", "user", "password", "token", "creds", "nkey",
                "tls_cert", "tls_key", "tls_ca", "tls_first", "timeout")
CLUSTER_KEYS = ("kind", "description", *BINDING_KEYS)
_PATH_KEYS = ("creds", "nkey", "tls_cert", "tls_key", "tls_ca")
_CONTEXT_NAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,100}")  # jetlink's or natscli's context names

_ERR_NOT_FOUND = NATS_ERRORS["StreamNotFound"]  # (404, 10059, "stream not found")
_ERR_OVERLAP = NATS_ERRORS["StreamSubjectOverlap"]  # (400, 10065, ...)
_ERR_INVALID = NATS_ERRORS["StreamInvalidConfig"]  # (500, 10052, "{err}")
_ERR_MIRROR_SIZE = NATS_ERRORS["MirrorMaxMessageSizeTooBig"]  # 10030
_ERR_SOURCE_SIZE = NATS_ERRORS["SourceMaxMessageSizeTooBig"]  # 10046
TEXT_CYCLE = "detected cycle"
TEXT_REPUBLISH_CYCLE = "stream configuration for republish destination forms a cycle"


# =========================================================================== data


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
class Cluster:
    name: str
    kind: str = "nats"
    description: str = ""
    file: str = ""
    # the live server the cluster is bound to: BINDING_KEYS as the file gives them ({}: not
    # bound; the embedded engine's data directory, or the server in force)
    binding: dict[str, Any] = field(default_factory=dict)

    @property
    def bound(self) -> bool:
        """Bound to a live server (``server`` or ``context`` given)."""
        return bool(self.binding.get("server") or self.binding.get("context"))

    def to_table(self) -> dict[str, Any]:
        """The ``[clusters.<name>]`` table (kind, description when set, the binding)."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.description:
            out["description"] = self.description
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
        from .kafka.links import LinkConfig

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


@dataclass
class TopologyObject:
    """A declared stream, KV bucket, KV mirror or KV aggregate, as the stream it becomes; or
    a declared Kafka topic, cluster link or mirror topic (``config`` None, no origins)."""

    kind: str  # "stream" | "kv" | "kv_mirror" | "kv_aggregate" | "topic" | "link" | "mirror_topic"
    key: str  # the table key ([streams.<key>]); the stream name for a JSON stream file
    cluster: str
    name: str  # the stream name (KV_<bucket> for buckets and aggregates); the Kafka name
    file: str
    index: int = 0
    # StreamConfig / KeyValueConfig / KVMirrorConfig / KVAggregateConfig / TopicSpec /
    # LinkSpec / MirrorTopicSpec (None: the object did not decode or broke its own rules)
    spec: Any = None
    config: StreamConfig | None = None  # the declared stream (None: the object did not decode)
    effective: StreamConfig | None = None  # after check_stream_config (None: invalid)
    origins: list[Origin] = field(default_factory=list)
    explicit_cluster: bool = False
    # checked as a STREAM.CREATE (sealed, mirror_direct without a mirror, plain filters);
    # False when the stream exists already (jetlink apply: an update)
    creating: bool = True
    # mirror topics: source_topic as declared (None: the name without the link's prefix)
    given_source_topic: str | None = None

    @property
    def label(self) -> str:
        return f"{self.kind} {self.key}"


@dataclass
class _FileEntry:
    path: str
    position: int


class Topology:
    """Everything the given files declare. Streams are keyed by (cluster, stream name); Kafka
    objects by (kind, cluster, name), kind "topic", "link" or "mirror_topic"."""

    def __init__(self) -> None:
        self.files: list[str] = []
        self.clusters: dict[str, Cluster] = {}
        self.objects: list[TopologyObject] = []
        self.problems: list[Problem] = []  # found while loading
        # what the server accepts but is likely a mistake (a mirror or source whose origin
        # is not there): filled by validate_topology, never a reason to fail
        self.warnings: list[Problem] = []
        self.streams: dict[tuple[str, str], TopologyObject] = {}
        self.kafka: dict[tuple[str, str, str], TopologyObject] = {}
        self._sort: dict[int, tuple[int, int]] = {}  # id(problem or object) -> sort key
        self._counter = 0

    # ----------------------------------------------------------------- loading
    def add_file(self, path: str) -> None:
        """Read one file (any kind) into the topology; problems are collected, not raised."""
        fpos = len(self.files)
        self.files.append(path)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            self._problem(path, None, None, 0, "file not found", fpos)
            return
        except IsADirectoryError:
            self._problem(path, None, None, 0, "is a directory, not a file", fpos)
            return
        except OSError as exc:
            self._problem(path, None, None, 0, f"can not read file: {exc.strerror}", fpos)
            return
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._problem(path, None, None, 0, f"file is not UTF-8 text: {exc}", fpos)
            return
        fmt = _format_of(path, text)
        if fmt == "sniff":  # no telling extension: JSON if it parses as JSON, else TOML
            try:
                doc = json.loads(text)
                fmt = "json"
            except json.JSONDecodeError:
                fmt = "json" if text.lstrip()[:1] == "{" else "toml"
            except RecursionError:
                fmt = "json"
        if fmt == "toml":
            try:
                doc = tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                self._problem(path, None, None, 0, f"invalid TOML: {exc}", fpos)
                return
            except RecursionError:
                self._problem(path, None, None, 0, f"invalid TOML: {TOO_DEEP}", fpos)
                return
        else:
            try:
                doc = json.loads(text)
            except RecursionError:
                self._problem(path, None, None, 0, f"invalid JSON: {TOO_DEEP}", fpos)
                return
            except json.JSONDecodeError as exc:
                self._problem(
                    path, None, None, 0,
                    f"invalid JSON: {exc.msg} (at line {exc.lineno}, column {exc.colno})", fpos,
                )
                return
        self.add_document(doc, path, fmt=fmt, _fpos=fpos)

    def add_document(
        self, doc: Any, file: str = "<memory>", *, fmt: str = "json", _fpos: int | None = None
    ) -> None:
        """Add a parsed document (what ``tomllib``/``json`` returned) from ``file``."""
        if _fpos is None:
            _fpos = len(self.files)
            self.files.append(file)
        f = _FileEntry(file, _fpos)
        if fmt == "toml" or is_topology_document(doc):
            if not isinstance(doc, dict):
                self._problem(file, None, None, 0, "a topology must be an object/table", _fpos)
                return
            self._add_topology(doc, f)
        elif isinstance(doc, list):
            for i, item in enumerate(doc):
                self._add_stream_json(item, f, where=f"[{i}]")
        elif isinstance(doc, dict):
            self._add_stream_json(doc, f)
        else:
            self._problem(
                file, None, None, 0,
                "expected a JSON object: a StreamConfig, a StreamInfo or a topology", _fpos,
            )

    def _add_stream_json(self, doc: Any, f: _FileEntry, where: str = "") -> None:
        if not isinstance(doc, dict):
            self._problem(
                f.path, None, where or None, 0, "expected a StreamConfig object", f.position
            )
            return
        cfg_doc = doc
        if isinstance(doc.get("config"), dict) and (
            "state" in doc or "created" in doc or "name" not in doc
        ):
            cfg_doc = doc["config"]  # a StreamInfo
        name = cfg_doc.get("name") if isinstance(cfg_doc.get("name"), str) else ""
        obj = self._new_object("stream", name or "?", DEFAULT_CLUSTER, name, f)
        decoded = self._decode_all(obj, cfg_doc, name, allow_cluster=False)
        if decoded is None:
            return
        cfg = decoded[1]
        obj.spec = obj.config = cfg
        obj.origins = _stream_origins(cfg, obj.cluster)

    def _add_topology(self, doc: dict[str, Any], f: _FileEntry) -> None:
        for key in doc:
            if key not in TOP_LEVEL:
                self._problem(
                    f.path, None, key, 0,
                    f'unknown top-level key "{key}" (allowed: {", ".join(TOP_LEVEL)})',
                    f.position,
                )
        version = doc.get("version", FORMAT_VERSION)
        if version != FORMAT_VERSION or isinstance(version, bool):
            self._problem(
                f.path, None, "version", 0,
                f"unsupported topology version {version!r}: this jetlink reads version "
                f"{FORMAT_VERSION}",
                f.position,
            )
        tables: dict[str, dict[str, Any]] = {}
        for table in ("clusters",) + OBJECT_TABLES:
            value = doc.get(table, {})
            if not isinstance(value, dict):
                self._problem(
                    f.path, None, table, 0,
                    f'"{table}" must be a table of named objects ([{table}.<name>])',
                    f.position,
                )
                value = {}
            tables[table] = value
        for name, body in tables["clusters"].items():
            self._add_cluster(name, body, f)
        for key, body in tables["streams"].items():
            self._add_stream_table(key, body, f)
        for table in _KV_TABLES:
            for key, body in tables[table].items():
                self._add_kv_table(table, key, body, f)
        for table in _KAFKA_TABLES:
            for key, body in tables[table].items():
                self._add_kafka_table(table, key, body, f)
        self.resolve_mirror_sources()

    def _add_cluster(self, name: str, body: Any, f: _FileEntry) -> None:
        label = f"cluster {name}"
        index = self._next_index()

        def problem(fld: str | None, text: str) -> None:
            p = Problem(f.path, label, fld, 0, text)
            self.problems.append(p)
            self._sort[id(p)] = (f.position, index)

        if not _NAME_RE.fullmatch(name):
            problem(None, f'invalid cluster name "{name}": cluster names may contain only '
                    'letters, digits, "_" and "-"')
            return
        if not isinstance(body, dict):
            problem(None, f"[clusters.{name}] must be a table")
            return
        for key in body:
            if key not in CLUSTER_KEYS:
                problem(
                    key, f'unknown key "{key}" in [clusters.{name}] (allowed: '
                    f'{", ".join(CLUSTER_KEYS)})'
                )
        kind = body.get("kind", "nats")
        if kind not in CLUSTER_KINDS:
            problem("kind", f'invalid cluster kind {kind!r}: kind must be "nats" or "kafka"')
            kind = "nats"
        description = body.get("description", "")
        if not isinstance(description, str):
            problem("description", "description must be a string")
            description = ""
        binding = _binding(name, body, problem)
        if binding and kind == "kafka" and ("server" in binding or "context" in binding):
            problem("kind", f'cluster "{name}" is bound to a NATS server (server / context): '
                    'its kind must be "nats", not "kafka"')
        cluster = Cluster(name, kind, description, f.path, binding)
        old = self.clusters.get(name)
        if old is None:
            self.clusters[name] = cluster
        elif (old.kind, old.description, old.binding) != (kind, description, binding):
            problem(None, f'cluster "{name}" is declared again with a different kind, '
                    f"description or server binding (first declared in {old.file})")

    def _add_stream_table(self, key: str, body: Any, f: _FileEntry) -> None:
        name = body.get("name", key) if isinstance(body, dict) else key
        cluster, explicit = _cluster_of(body)
        obj = self._new_object("stream", key, cluster, name if isinstance(name, str) else key, f)
        obj.explicit_cluster = explicit
        decoded = self._decode_all(obj, body, key, allow_cluster=True)
        if decoded is None:
            return
        cluster, cfg = decoded
        obj.spec = obj.config = cfg
        obj.origins = _stream_origins(cfg, cluster)

    def _add_kv_table(self, table: str, key: str, body: Any, f: _FileEntry) -> None:
        """An entry of ``[kv]``, ``[kv_mirrors]`` or ``[kv_aggregates]``: the object under its
        stream name, its spec decoded from a copy of the table, then the spec's stream."""
        name_key, stream_name, decode = _KV_TABLES[table]
        cluster, explicit = _cluster_of(body)
        name = body.get(name_key, key) if isinstance(body, dict) else key
        obj = self._new_object(KIND_OF_TABLE[table], key, cluster, stream_name(str(name)), f)
        obj.explicit_cluster = explicit
        try:
            doc = _plain_table(body, f"[{table}.{key}]")
            doc.pop("cluster", None)
            spec = decode(doc, key, cluster)
            cfg = spec.to_stream_config()
        except JetlinkError as exc:
            self._object_problem(obj, exc)
            return
        obj.spec, obj.config = spec, cfg
        obj.origins = _stream_origins(cfg, cluster)

    def _add_kafka_table(self, table: str, key: str, body: Any, f: _FileEntry) -> None:
        """An entry of ``[topics]``, ``[links]`` or ``[mirror_topics]``: the object, its own
        rules checked (every problem found), its spec when it has none."""
        kind = KIND_OF_TABLE[table]
        cluster, explicit = _cluster_of(body)
        name = body.get("name", key) if isinstance(body, dict) else key
        obj = self._new_object(kind, key, cluster, name if isinstance(name, str) else key, f)
        obj.explicit_cluster = explicit
        if not isinstance(body, dict):
            self._object_problem(obj, JetlinkError(f"[{table}.{key}] must be a table"))
            return
        errors: list[JetlinkError] = []
        allowed = _KAFKA_KEYS[table]
        for k in body:
            if k not in allowed:
                errors.append(JetlinkError(
                    f'unknown key "{k}" in [{table}.{key}] (allowed: {", ".join(allowed)})',
                    field=k,
                ))
        if not isinstance(name, str):
            errors.append(JetlinkError("name must be a string", field="name"))
        decode = _KAFKA_TABLES[table]
        spec = decode(_plain(body), name if isinstance(name, str) else key, cluster, errors)
        for exc in errors:
            p = _kafka_problem(obj, exc)
            self.problems.append(p)
            self._sort[id(p)] = self._sort[id(obj)]
        if errors:
            return
        obj.spec = spec
        if kind == "mirror_topic":
            given = body.get("source_topic")
            obj.given_source_topic = given if isinstance(given, str) else None

    def resolve_mirror_sources(self) -> None:
        """Each mirror topic declared without ``source_topic``: its name without the prefix
        of its link (declared in this or another file), or its name."""
        for obj in self.objects:
            if obj.kind != "mirror_topic" or obj.spec is None:
                continue
            if obj.given_source_topic is not None:
                continue
            from .kafka.errors import KafkaError
            from .kafka.mirrors import mirror_source_topic

            link = self.kafka.get(("link", obj.cluster, obj.spec.link))
            prefix = link.spec.config.prefix if link is not None and link.spec else ""
            try:
                source = mirror_source_topic(obj.spec.name, prefix)
            except KafkaError:  # not under the prefix: its own name
                source = obj.spec.name
            if source != obj.spec.source_topic:
                obj.spec = dataclasses.replace(obj.spec, source_topic=source)

    def adopt(self, obj: TopologyObject) -> TopologyObject:
        """Add a copy of an object of another Topology (its file, kind, spec and config kept;
        a new index here, sorted after what this topology holds from that file). Returns the
        copy; validation state (``effective``, duplicates) is recomputed by validate."""
        copy = dataclasses.replace(obj, effective=None, origins=list(obj.origins))
        if obj.file in self.files:
            fpos = self.files.index(obj.file)
        else:
            fpos = len(self.files)
            self.files.append(obj.file)
        copy.index = self._next_index()
        self._sort[id(copy)] = (fpos, copy.index)
        self.objects.append(copy)
        if copy.kind in KAFKA_KINDS:
            self.kafka.setdefault((copy.kind, copy.cluster, copy.name), copy)
        else:
            self.streams.setdefault((copy.cluster, copy.name), copy)
        return copy

    # ----------------------------------------------------------------- bookkeeping
    def _next_index(self) -> int:
        self._counter += 1
        return self._counter

    def _new_object(
        self, kind: str, key: str, cluster: str, name: str, f: _FileEntry
    ) -> TopologyObject:
        obj = TopologyObject(kind=kind, key=key, cluster=cluster, name=name, file=f.path)
        obj.index = self._next_index()
        self._sort[id(obj)] = (f.position, obj.index)
        self.objects.append(obj)
        # re-indexed (with problems) by validate
        if kind in KAFKA_KINDS:
            self.kafka.setdefault((kind, cluster, name), obj)
        else:
            self.streams.setdefault((cluster, name), obj)
        return obj

    def _problem(
        self, file: str, obj: str | None, fld: str | None, err_code: int, text: str, fpos: int
    ) -> None:
        p = Problem(file, obj, fld, err_code, text)
        self.problems.append(p)
        self._sort[id(p)] = (fpos, 0)

    def _decode_all(self, obj: TopologyObject, body: Any, key: str, *, allow_cluster: bool
                    ) -> tuple[str, StreamConfig] | None:
        """Decode a stream, reporting every field that does not decode (not only the first):
        each one is set aside and the rest decoded again, so the object's own rules still
        run on what is left. None: it does not decode at all."""
        import copy

        from .config.validate import MAX_PROBLEMS, drop_path

        doc = body
        seen: set[str] = set()
        for _ in range(MAX_PROBLEMS):
            try:
                return _decode_stream(doc, key, allow_cluster=allow_cluster)
            except JetlinkError as exc:
                self._object_problem(obj, exc)
                fld = exc.field
                if not fld or fld in seen or not isinstance(doc, dict):
                    return None
                seen.add(fld)
                doc = copy.deepcopy(doc)
                if not drop_path(doc, fld):
                    return None
        return None

    def _object_problem(self, obj: TopologyObject, exc: JetlinkError) -> None:
        p = _problem_for(obj, exc)
        self.problems.append(p)
        self._sort[id(p)] = self._sort[id(obj)]

    def sort_key(self, obj: TopologyObject) -> tuple[int, int]:
        return self._sort[id(obj)]

    # ----------------------------------------------------------------- access
    def stream(self, cluster: str, name: str) -> TopologyObject | None:
        """The object declaring stream ``name`` in ``cluster`` (the first one, when a stream
        is declared twice), or None."""
        return self.streams.get((cluster, name))

    def stream_configs(self) -> dict[tuple[str, str], StreamConfig]:
        """(cluster, name) -> the stream config (with defaults when valid) of every object."""
        out = {}
        for key, obj in self.streams.items():
            cfg = obj.effective or obj.config
            if cfg is not None:
                out[key] = cfg
        return out

    def to_document(self) -> dict[str, Any]:
        """The topology as a document in this module's format (what ``jetlink export`` writes
        with tomli-w): durations as human strings, fields at their defaults left out."""
        return to_document(self)


# =========================================================================== decoding


def is_topology_document(doc: Any) -> bool:
    """A JSON object with any of the object tables (or ``clusters`` or ``version``) is a
    topology (a StreamConfig has none of these fields)."""
    return isinstance(doc, dict) and any(k in doc for k in TOP_LEVEL)


def _binding(name: str, body: dict[str, Any], problem: Callable[[str | None, str], None]
             ) -> dict[str, Any]:
    """The server binding keys of ``[clusters.<name>]`` that are valid (each bad one is a
    problem naming the key, the value and the rule). URLs and timeouts are checked with the
    rules of ``--server`` / ``--timeout`` (core/live/settings.py)."""
    from .live.settings import parse_servers, parse_timeout

    where = f"[clusters.{name}]"
    out: dict[str, Any] = {}
    for key in BINDING_KEYS:
        if key not in body:
            continue
        value = body[key]
        if key == "tls_first":
            if not isinstance(value, bool):
                problem(key, f"{where} tls_first = {value!r}: must be true or false")
                continue
        elif key == "timeout":
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                problem(key, f"{where} timeout = {value!r}: give seconds (a number) or a "
                        'duration such as "5s" or "500ms"')
                continue
            try:
                parse_timeout(value, f"{where} timeout")
            except JetlinkError as exc:
                problem(key, exc.description)
                continue
        elif not isinstance(value, str) or not value.strip():
            what = {"server": "one or more URLs (nats://host:port, comma-separated)",
                    "context": "a jetlink or natscli context name",
                    "js_domain": "a JetStream domain name"}.get(
                        key, "a file path" if key in _PATH_KEYS else "a string")
            problem(key, f"{where} {key} = {value!r}: must be a non-empty string ({what})")
            continue
        elif key == "server":
            try:
                parse_servers(value, f"{where} server")
            except JetlinkError as exc:
                problem(key, exc.description)
                continue
        elif key == "context":
            if not _CONTEXT_NAME_RE.fullmatch(value) or value in (".", ".."):
                problem(key, f"{where} context = {value!r}: invalid context name: a context "
                        'name has 1 to 100 letters, digits, "_", "-" or "."')
                continue
        elif key == "js_domain":
            if not _NAME_RE.fullmatch(value):
                problem(key, f"{where} js_domain = {value!r}: invalid JetStream domain: a "
                        'domain name may contain only letters, digits, "_" and "-"')
                continue
        out[key] = value
    if not ("server" in body or "context" in body):
        for key in out:
            problem(key, f"{where} {key} = {out[key]!r} without server or context: a cluster "
                    'is bound to a live server by server = "nats://host:port" or context = '
                    '"NAME"; the other connection keys only refine that binding')
        return {}
    return out


def _format_of(path: str, text: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext == ".toml":
        return "toml"
    if ext == ".json":
        return "json"
    return "sniff" if text.lstrip()[:1] in ("{", "[") else "toml"


def _cluster_of(body: Any) -> tuple[str, bool]:
    if isinstance(body, dict) and "cluster" in body:
        value = body["cluster"]
        return (value if isinstance(value, str) else repr(value)), True
    return DEFAULT_CLUSTER, False


def _plain(value: Any) -> Any:
    """TOML dates and times become RFC3339 strings; tables and arrays are copied."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, _dt.datetime):
        if value.tzinfo is not None and value.utcoffset() == _dt.timedelta(0):
            return value.replace(tzinfo=None).isoformat() + "Z"
        return value.isoformat()
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    return value


def _stream_doc_copy(body: dict[str, Any]) -> dict[str, Any]:
    """A copy of a stream table deep enough for the edits decoding makes (cheaper than
    :func:`_plain`); TOML datetimes (``opt_start_time``) become RFC3339 strings."""
    doc = dict(body)
    for key in ("mirror", "consumer_limits"):
        if isinstance(doc.get(key), dict):
            doc[key] = _plain(doc[key])
    if isinstance(doc.get("sources"), list):
        doc["sources"] = [_plain(s) for s in doc["sources"]]
    return doc


def _plain_table(body: Any, where: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise JetlinkError(f"{where} must be a table")
    return _plain(body)


# JSON field -> nested class (a list of them for "[]"), for the unknown-key check.
_NESTED: dict[type, dict[str, tuple[type, bool]]] = {
    StreamConfig: {
        "placement": (Placement, False),
        "mirror": (StreamSource, False),
        "sources": (StreamSource, True),
        "subject_transform": (SubjectTransformConfig, False),
        "republish": (RePublish, False),
        "consumer_limits": (StreamConsumerLimits, False),
    },
    StreamSource: {
        "subject_transforms": (SubjectTransformConfig, True),
        "external": (ExternalStream, False),
        "consumer": (StreamConsumerSource, False),
    },
}
_EXTRA_KEYS: dict[type, tuple[str, ...]] = {StreamSource: ("domain",)}
_JSON_NAMES: dict[type, tuple[str, ...]] = {}
_DURATIONS = ("max_age", "duplicate_window", "subject_delete_marker_ttl")


def _json_names(cls: type) -> tuple[str, ...]:
    names = _JSON_NAMES.get(cls)
    if names is None:
        import dataclasses

        names = _JSON_NAMES[cls] = tuple(f.metadata["json"] for f in dataclasses.fields(cls))
    return names


def _check_keys(cls: type, doc: Any, path: str) -> None:
    if not isinstance(doc, dict):
        return  # the decoder reports the type
    allowed = _json_names(cls)
    extra = _EXTRA_KEYS.get(cls, ())
    nested = _NESTED.get(cls, {})
    for key, value in doc.items():
        here = f"{path}.{key}" if path else key
        if key not in allowed and key not in extra:
            what = {StreamConfig: "StreamConfig"}.get(cls, cls.__name__)
            raise JetlinkError(f'unknown key "{key}": not a {what} field', field=here)
        sub = nested.get(key)
        if sub is not None and value is not None:
            sub_cls, is_list = sub
            if is_list and isinstance(value, list):
                for i, item in enumerate(value):
                    _check_keys(sub_cls, item, f"{here}[{i}]")
            elif not is_list:
                _check_keys(sub_cls, value, here)


def _duration(doc: dict[str, Any], key: str, path: str) -> None:
    value = doc.get(key)
    if isinstance(value, str):
        try:
            doc[key] = parse_duration(value)
        except DurationError as exc:
            raise JetlinkError(str(exc), field=path) from None


def _expand_domain(src: Any, path: str) -> None:
    """``domain = "east"`` -> ``external.api = "$JS.east.API"`` in a mirror/source table."""
    if not isinstance(src, dict) or "domain" not in src:
        return
    domain = src.pop("domain")
    if not isinstance(domain, str) or not _NAME_RE.fullmatch(domain):
        raise JetlinkError(
            f"{path}.domain: invalid domain {domain!r}: a domain (cluster) name may contain "
            'only letters, digits, "_" and "-"',
            field=f"{path}.domain",
        )
    api = f"$JS.{domain}.API"
    external = src.get("external")
    if isinstance(external, dict) and external.get("api") not in (None, "", api):
        raise JetlinkError(
            f'{path}: domain "{domain}" contradicts external.api "{external.get("api")}" '
            f'(domain = "{domain}" means external.api = "{api}")',
            field=f"{path}.domain",
        )
    src["external"] = {**(external if isinstance(external, dict) else {}), "api": api}


def _decode_stream(body: Any, key: str, *, allow_cluster: bool) -> tuple[str, StreamConfig]:
    """A stream table (or JSON StreamConfig) -> (cluster, StreamConfig). Raises JetlinkError."""
    if not isinstance(body, dict):
        raise JetlinkError("a stream must be a table/object of StreamConfig fields")
    doc = _stream_doc_copy(body)
    cluster = DEFAULT_CLUSTER
    if allow_cluster and "cluster" in doc:
        cluster = doc.pop("cluster")
        if not isinstance(cluster, str):
            raise JetlinkError("cluster must be a string (a cluster name)", field="cluster")
    if key and "name" not in doc:
        doc["name"] = key
    _check_keys(StreamConfig, doc, "")
    for k in _DURATIONS:
        _duration(doc, k, k)
    limits = doc.get("consumer_limits")
    if isinstance(limits, dict):
        _duration(limits, "inactive_threshold", "consumer_limits.inactive_threshold")
    _expand_domain(doc.get("mirror"), "mirror")
    sources = doc.get("sources")
    if isinstance(sources, list):
        for i, src in enumerate(sources):
            _expand_domain(src, f"sources[{i}]")
    try:
        return cluster, StreamConfig.from_json(doc, strict=True)
    except ApiError as exc:
        # The codec's own errors (10025 invalid JSON: ...): keep code and text, name the field.
        raise exc from None


def _domain_of(external: ExternalStream | None) -> str | None:
    """The domain named by ``$JS.<domain>.API`` (one name token), else None."""
    if external is None:
        return None
    domain = StreamSource(name="", external=external).domain
    return domain if domain and _NAME_RE.fullmatch(domain) else None


def _origin_location(
    cluster: str,
    origin_cluster: Any,
    domain: str,
    external: ExternalStream | None,
    cluster_field: str,
    domain_field: str,
) -> str:
    """Where a KV mirror/aggregate origin lives: domain, else origin cluster, else here."""
    if origin_cluster is not None and (
        not isinstance(origin_cluster, str) or not _NAME_RE.fullmatch(origin_cluster)
    ):
        raise JetlinkError(
            f"{cluster_field}: invalid cluster name {origin_cluster!r}", field=cluster_field
        )
    if domain and not _NAME_RE.fullmatch(domain):
        raise JetlinkError(
            f'{domain_field}: invalid domain "{domain}": a domain (cluster) name may contain '
            'only letters, digits, "_" and "-"',
            field=domain_field,
        )
    ext_domain = _domain_of(external)
    named = [v for v in (domain, origin_cluster, ext_domain) if v]
    if len(set(named)) > 1:
        raise JetlinkError(
            f"{cluster_field} / {domain_field} disagree ({', '.join(sorted(set(named)))}): "
            "a cluster is a JetStream domain, name it once",
            field=domain_field,
        )
    return named[0] if named else cluster


def _kv_spec(doc: dict[str, Any], key: str, cluster: str) -> KeyValueConfig:
    from .config.kv import KeyValueConfig

    _expand_domain(doc.get("mirror"), "mirror")  # legacy KV mirror/sources
    sources = doc.get("sources")
    for i, src in enumerate(sources if isinstance(sources, list) else ()):
        _expand_domain(src, f"sources[{i}]")
    return KeyValueConfig.from_dict(doc, bucket=key)


def _kv_mirror_spec(doc: dict[str, Any], key: str, cluster: str) -> KVMirrorConfig:
    from .config.kv import KVMirrorConfig

    origin_cluster = doc.pop("origin_cluster", None)
    spec = KVMirrorConfig.from_dict(doc, name=key)
    where = _origin_location(
        cluster, origin_cluster, spec.domain, spec.external, "origin_cluster", "domain"
    )
    if where != cluster and not spec.domain and spec.external is None:
        spec.domain = where  # a cluster is a JetStream domain
    return spec


def _kv_aggregate_spec(doc: dict[str, Any], key: str, cluster: str) -> KVAggregateConfig:
    from .config.kv import KVAggregateConfig

    origin_clusters: list[Any] = []
    origins = doc.get("origins")
    if isinstance(origins, list):
        doc["origins"] = []
        for item in origins:
            if isinstance(item, dict):
                item = dict(item)
                origin_clusters.append(item.pop("cluster", None))
            else:
                origin_clusters.append(None)
            doc["origins"].append(item)
    spec = KVAggregateConfig.from_dict(doc, bucket=key)
    for i, (origin, oc) in enumerate(zip(spec.origins, origin_clusters)):
        where = _origin_location(
            cluster, oc, origin.domain, origin.external,
            f"origins[{i}].cluster", f"origins[{i}].domain",
        )
        if where != cluster and not origin.domain and origin.external is None:
            origin.domain = where
    return spec


def _kv_stream_name(bucket: str) -> str:
    """config/kv.py ``kv_stream_name`` (imported when a topology declares KV objects)."""
    from .config.kv import kv_stream_name

    return kv_stream_name(bucket)


# KV table -> (key naming the object, its stream name from that, the spec decoder), in the
# order the tables are read.
_KV_TABLES: dict[str, tuple[str, Callable[[str], str], Callable[..., Any]]] = {
    "kv": ("bucket", _kv_stream_name, _kv_spec),
    "kv_mirrors": ("name", str, _kv_mirror_spec),
    "kv_aggregates": ("bucket", _kv_stream_name, _kv_aggregate_spec),
}


# =========================================================================== Kafka objects

# Kafka table -> its keys, in the order the docs list them.
_KAFKA_KEYS: dict[str, tuple[str, ...]] = {
    "topics": ("cluster", "name", "partitions", "configs"),
    "links": (
        "cluster", "name", "source_cluster", "configs", "consumer_group_filters", "topic_filters",
    ),
    "mirror_topics": ("cluster", "name", "link", "source_topic", "configs"),
}
# link table array -> the link configuration it stands for
_FILTER_FIELDS: dict[str, str] = {
    "consumer_group_filters": "consumer.offset.group.filters",
    "topic_filters": "auto.create.mirror.topics.filters",
}
_FIELD_OF_FILTER = {key: fld for fld, key in _FILTER_FIELDS.items()}


def _kafka_problem(obj: TopologyObject, exc: JetlinkError, fld: str | None = None) -> Problem:
    """A Problem for a Kafka-side error: err_code 0 (the field holds NATS numbers), the Kafka
    error's name and number after its text, as jetlink prints engine errors:
    ``... (INVALID_CONFIG 40)``."""
    from .kafka.errors import KafkaError

    text = exc.description
    if isinstance(exc, KafkaError):
        text = f"{text} ({exc.name} {exc.error_code})"
    return Problem(obj.file, obj.label, fld if fld is not None else exc.field, 0, text)


def _refield(exc: JetlinkError, fld: str | None) -> JetlinkError:
    exc.field = fld
    return exc


def _configs_field(key: str) -> str:
    """The problem field of config ``key`` (the engine names ``key`` or ``config.key``)."""
    if key.startswith("config."):
        key = key[len("config."):]
    return f"configs.{key}"


def _config_table(body: dict[str, Any], errors: list[JetlinkError], *,
                  scalars_only: bool = True) -> dict[str, Any]:
    """``configs`` of a Kafka object: a table of config names to values (strings; integers,
    floats and booleans are the engine's to turn into Kafka's text)."""
    value = body.get("configs", {})
    if not isinstance(value, dict):
        errors.append(JetlinkError(
            "configs must be a table of configuration names and values", field="configs"))
        return {}
    out: dict[str, Any] = {}
    for key, v in value.items():
        if scalars_only and (not isinstance(v, (str, int, float)) or v is None):
            errors.append(JetlinkError(
                f'configs."{key}": a configuration value must be a string, a number or a '
                "boolean", field=_configs_field(key)))
            continue
        out[key] = v
    return out


def _checked_configs(body: dict[str, Any], errors: list[JetlinkError],
                     check: Callable[[dict[str, Any]], dict[str, str]]) -> dict[str, str]:
    """``configs`` of a topic or mirror topic through the engine's ``check`` ({} and the
    problem, named ``configs.<name>``, when it refuses one)."""
    from .kafka.errors import KafkaError

    configs = _config_table(body, errors)
    try:
        return check(configs)
    except KafkaError as exc:
        errors.append(_refield(exc, _configs_field(exc.field or "")))
        return {}


def _topic_spec(body: dict[str, Any], name: str, cluster: str,
                errors: list[JetlinkError]) -> TopicSpec | None:
    from .kafka.errors import KafkaError
    from .kafka.topics import validate_partitions, validate_topic_configs, validate_topic_name

    try:
        validate_topic_name(name)
    except KafkaError as exc:
        errors.append(_refield(exc, "name"))
    partitions = body.get("partitions", 1)
    if not isinstance(partitions, int) or isinstance(partitions, bool):
        errors.append(JetlinkError(
            "partitions must be an integer (the number of partitions)", field="partitions"))
    else:
        try:
            validate_partitions(partitions)
        except KafkaError as exc:
            errors.append(_refield(exc, "partitions"))
    checked = _checked_configs(body, errors, validate_topic_configs)
    if errors:
        return None
    return TopicSpec(name, partitions, dict(sorted(checked.items())))


def _link_spec(body: dict[str, Any], name: str, cluster: str,
               errors: list[JetlinkError]) -> LinkSpec | None:
    from .kafka.errors import KafkaError
    from .kafka.links import FILTER_KEYS, LinkConfig, link_to_self, validate_link_name

    try:
        validate_link_name(name)
    except KafkaError as exc:
        errors.append(_refield(exc, "name"))
    source = body.get("source_cluster")
    if source is None:
        errors.append(JetlinkError(
            "source_cluster is required: the cluster the link copies from (the link itself "
            "lives on its destination cluster, cluster)", field="source_cluster"))
    elif not isinstance(source, str) or not _NAME_RE.fullmatch(source):
        errors.append(JetlinkError(
            f'invalid cluster name {source!r}: cluster names may contain only letters, '
            'digits, "_" and "-"', field="source_cluster"))
    elif source == cluster:
        errors.append(link_to_self(cluster))
    configs = _config_table(body, errors, scalars_only=False)
    given_in_configs = set(configs)
    for fld, key in _FILTER_FIELDS.items():
        if fld not in body:
            continue
        if key in configs:
            errors.append(JetlinkError(
                f"{key} is given twice: by {fld} and by configs", field=fld))
            continue
        items = body[fld]
        if not isinstance(items, list):
            errors.append(JetlinkError(
                f"{fld} must be an array of filters: "
                '[{ name = "...", patternType = "LITERAL", filterType = "INCLUDE" }, ...]',
                field=fld))
            continue
        configs[key] = json.dumps({FILTER_KEYS[key]: items})
    try:
        cfg = LinkConfig.build(configs, creating=True)
    except KafkaError as exc:
        key = exc.field or ""
        if key in _FIELD_OF_FILTER and key not in given_in_configs:
            fld = _FIELD_OF_FILTER[key]
        else:
            fld = _configs_field(key)
        errors.append(_refield(exc, fld))
        return None
    if errors:
        return None
    return LinkSpec(name, source, cfg.to_json())


def _mirror_topic_spec(body: dict[str, Any], name: str, cluster: str,
                       errors: list[JetlinkError]) -> MirrorTopicSpec | None:
    from .kafka.errors import KafkaError
    from .kafka.mirrors import check_mirror_topic_configs
    from .kafka.topics import validate_topic_name

    try:
        validate_topic_name(name)
    except KafkaError as exc:
        errors.append(_refield(exc, "name"))
    link = body.get("link")
    if link is None:
        errors.append(JetlinkError(
            "link is required: the cluster link (declared in the same cluster) the topic "
            "mirrors through", field="link"))
    elif not isinstance(link, str) or not link:
        errors.append(JetlinkError("link must be a link name", field="link"))
    source = body.get("source_topic")
    if source is not None:
        try:
            validate_topic_name(source)
        except KafkaError as exc:
            errors.append(_refield(exc, "source_topic"))
    checked = _checked_configs(body, errors, check_mirror_topic_configs)
    if errors:
        return None
    return MirrorTopicSpec(name, link, source or name, dict(sorted(checked.items())))


# Kafka table -> its spec decoder, in the order the tables are read.
_KAFKA_TABLES: dict[str, Callable[..., Any]] = {
    "topics": _topic_spec,
    "links": _link_spec,
    "mirror_topics": _mirror_topic_spec,
}


def _stream_origins(cfg: StreamConfig, cluster: str) -> list[Origin]:
    out = []
    items = [("mirror", cfg.mirror, True)] if cfg.mirror is not None else []
    items += [(f"sources[{i}]", s, False) for i, s in enumerate(cfg.sources)]
    for path, src, is_mirror in items:
        if src is None or not src.name:
            continue
        where: str | None = cluster
        if src.external is not None:
            where = _domain_of(src.external)  # None: an API prefix that names no domain
        out.append(Origin(path, src.name, where, is_mirror, src.filter_subject))
    return out


# =========================================================================== KV field names

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
    from .config.kv import KVAggregateConfig

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
    return Problem(obj.file, obj.label, fld, getattr(exc, "err_code", 0), exc.description,
                   detail=exc.detail if obj.kind == "stream" else None)


# =========================================================================== subject index


# Not subjects.SubjectFilter's trie: that one answers yes/no for LITERAL subjects; this one
# keeps (pattern, owner) entries and is queried with PATTERNS for overlaps (SubjectsCollide).
class _Node:
    __slots__ = ("lit", "pwc", "fwc", "end")

    def __init__(self) -> None:
        self.lit: dict[str, _Node] = {}
        self.pwc: _Node | None = None
        self.fwc: list[tuple[str, int]] = []  # patterns with '>' at this depth
        self.end: list[tuple[str, int]] = []  # patterns ending here


_ODD_TOKEN = re.compile(r"(?:^|\.)[*>][^.]")


def _odd(subject: str) -> bool:
    """A token that only starts with a wildcard character: the server's overlap quirks apply."""
    return ("*" in subject or ">" in subject) and _ODD_TOKEN.search(subject) is not None


class SubjectIndex:
    """Subject patterns of many streams; ``query(p)`` finds the stored patterns overlapping
    ``p`` (nats-server ``SubjectsCollide``) without comparing against every one of them."""

    def __init__(self) -> None:
        self.root = _Node()
        self.odd: list[tuple[str, int]] = []
        self.all: list[tuple[str, int]] = []

    def insert(self, subject: str, owner: int) -> None:
        entry = (subject, owner)
        self.all.append(entry)
        tokens = subject.split(".")
        if _odd(subject):
            self.odd.append(entry)
            return
        node = self.root
        for t in tokens:
            if t == ">":
                node.fwc.append(entry)
                return
            if t == "*":
                if node.pwc is None:
                    node.pwc = _Node()
                node = node.pwc
            else:
                nxt = node.lit.get(t)
                if nxt is None:
                    nxt = node.lit[t] = _Node()
                node = nxt
        node.end.append(entry)

    def query(self, subject: str) -> list[tuple[str, int]]:
        """Stored (subject, owner) pairs whose subject overlaps ``subject``."""
        tokens = subject.split(".")
        if _odd(subject):
            return [e for e in self.all if overlaps(subject, e[0])]
        found: list[tuple[str, int]] = []
        n = len(tokens)
        stack = [(self.root, 0)]
        while stack:
            node, i = stack.pop()
            if i == n:
                found.extend(node.end)
                continue
            found.extend(node.fwc)
            t = tokens[i]
            if t == ">":
                for child in node.lit.values():
                    _collect(child, found)
                if node.pwc is not None:
                    _collect(node.pwc, found)
                continue
            if t == "*":
                stack.extend((child, i + 1) for child in node.lit.values())
            else:
                child = node.lit.get(t)
                if child is not None:
                    stack.append((child, i + 1))
            if node.pwc is not None:
                stack.append((node.pwc, i + 1))
        if self.odd:
            found.extend(e for e in self.odd if overlaps(subject, e[0]))
        return found


def _collect(node: _Node, out: list[tuple[str, int]]) -> None:
    stack = [node]
    while stack:
        nd = stack.pop()
        out.extend(nd.end)
        out.extend(nd.fwc)
        stack.extend(nd.lit.values())
        if nd.pwc is not None:
            stack.append(nd.pwc)


# =========================================================================== validation


def load_topology(path: str) -> Topology:
    """Read one file into a Topology (load problems in ``.problems``; not validated yet)."""
    topo = Topology()
    topo.add_file(path)
    return topo


def load_files(paths: Iterable[str]) -> Topology:
    """Read several files into ONE Topology (objects of all files reference each other)."""
    topo = Topology()
    for path in paths:
        topo.add_file(str(path))
    return topo


def validate_files(paths: Iterable[str]) -> list[Problem]:
    """Every problem of the files, read together as one topology."""
    return validate_topology(load_files(paths))


def check_files(paths: Iterable[str]) -> tuple[list[Problem], list[Problem]]:
    """``(problems, warnings)`` of the files read together as one topology (``jetlink
    validate``)."""
    topo = load_files(paths)
    return validate_topology(topo), list(topo.warnings)


def validate_topology(topo: Topology) -> list[Problem]:
    """Run every check on a loaded topology; returns all problems, sorted by file and object."""
    found: dict[int, list[Problem]] = {}  # object index -> its problems (merged)

    def add(obj: TopologyObject, problem: Problem) -> None:
        mine = found.setdefault(obj.index, [])
        for p in mine:
            # A whole-topology problem restating an object's own error replaces it.
            if (
                p.err_code == problem.err_code
                and p.description != problem.description
                and problem.description.startswith(p.description)
            ):
                p.description = problem.description
                p.field = problem.field or p.field
                return
            if p.err_code == problem.err_code and p.description == problem.description:
                return
        mine.append(problem)

    def add_error(obj: TopologyObject, exc: JetlinkError, *, stream_fields: bool = True) -> None:
        add(obj, _problem_for(obj, exc, stream_fields=stream_fields))

    topo.warnings = []
    _index(topo, add)
    topo.resolve_mirror_sources()
    _check_kafka(topo, add)
    _check_objects(topo, add_error)
    _check_origins(topo, add, add_error)
    _check_overlaps(topo, add)
    _check_cycles(topo, add)
    _check_republish_loops(topo, add)

    out: list[tuple[tuple[int, int, int], Problem]] = []
    for seq, p in enumerate(topo.problems):
        fpos, idx = topo._sort[id(p)]
        out.append(((fpos, idx, seq), p))
    by_index = {obj.index: obj for obj in topo.objects}
    base = len(topo.problems)
    for idx, problems in found.items():
        fpos = topo.sort_key(by_index[idx])[0]
        for k, p in enumerate(problems):
            out.append(((fpos, idx, base + k), p))
    out.sort(key=lambda item: item[0])
    return [p for _, p in out]


def _index(topo: Topology, add) -> None:
    """Undeclared clusters, kafka clusters, duplicate streams and Kafka objects; fills
    ``topo.streams`` and ``topo.kafka``."""
    topo.streams = {}
    topo.kafka = {}
    declared = topo.clusters
    for obj in topo.objects:
        if obj.explicit_cluster:
            if declared and obj.cluster not in declared:
                add(obj, Problem(
                    obj.file, obj.label, "cluster", 0,
                    f'cluster "{obj.cluster}" is not declared (declared clusters: '
                    f'{", ".join(sorted(declared))})',
                ))
            elif not _NAME_RE.fullmatch(obj.cluster):
                add(obj, Problem(
                    obj.file, obj.label, "cluster", 0,
                    f'invalid cluster name "{obj.cluster}": cluster names may contain only '
                    'letters, digits, "_" and "-"',
                ))
        if obj.kind in KAFKA_KINDS:
            bound = declared.get(obj.cluster)
            if bound is not None and bound.bound:
                add(obj, Problem(
                    obj.file, obj.label, "cluster", 0,
                    f'cluster "{obj.cluster}" is bound to a live NATS server '
                    f"({_binding_text(bound)}): {_KAFKA_WORDS[obj.kind]}s live in kafka "
                    "clusters of the data directory, not on a NATS server",
                ))
            _index_kafka(topo, obj, add)
            continue
        c = declared.get(obj.cluster)
        if c is not None and c.kind != "nats":
            add(obj, Problem(
                obj.file, obj.label, "cluster", 0,
                f'cluster "{obj.cluster}" is a {c.kind} cluster: streams and KV buckets live '
                "in nats clusters",
            ))
        key = (obj.cluster, obj.name)
        first = topo.streams.get(key)
        if first is None:
            topo.streams[key] = obj
            continue
        fld = {"kv": "bucket", "kv_aggregate": "bucket"}.get(obj.kind, "name")
        where = f"{first.label}" + (f" in {first.file}" if first.file != obj.file else "")
        add(obj, Problem(
            obj.file, obj.label, fld, 0,
            f'duplicate definition: stream "{obj.name}" in cluster "{obj.cluster}" is already '
            f"defined by {where}",
        ))
        obj.duplicate_of = first  # type: ignore[attr-defined]


_KAFKA_WORDS = {"topic": "topic", "link": "cluster link", "mirror_topic": "mirror topic"}


def _binding_text(cluster: Cluster) -> str:
    """``server nats://...`` / ``context NAME`` of a bound cluster, for messages."""
    b = cluster.binding
    if b.get("server"):
        return f"server {b['server']}"
    return f"context {b.get('context')}"


def _index_kafka(topo: Topology, obj: TopologyObject, add) -> None:
    """A Kafka object into ``topo.kafka``; a second definition of one (kind, cluster, name)
    is a problem. Any cluster kind may hold them (the engine does not tell kinds apart)."""
    key = (obj.kind, obj.cluster, obj.name)
    first = topo.kafka.get(key)
    if first is None:
        topo.kafka[key] = obj
        return
    where = f"{first.label}" + (f" in {first.file}" if first.file != obj.file else "")
    add(obj, Problem(
        obj.file, obj.label, "name", 0,
        f'duplicate definition: {_KAFKA_WORDS[obj.kind]} "{obj.name}" in cluster '
        f'"{obj.cluster}" is already defined by {where}',
    ))
    obj.duplicate_of = first  # type: ignore[attr-defined]


def _check_kafka(topo: Topology, add) -> None:
    """Rules between Kafka objects, as the engine applies them when it creates them: a
    link's source cluster; a mirror topic's link, name, source topic; colliding names."""
    declared = topo.clusters
    names: dict[str, list[str]] = {}  # cluster -> topic and mirror topic names so far
    for obj in topo.objects:
        if obj.kind not in KAFKA_KINDS or _is_duplicate(obj):
            continue
        from .kafka.errors import KafkaError
        from .kafka.topics import check_topic_collision

        def problem(fld: str | None, exc: JetlinkError, _obj: TopologyObject = obj) -> None:
            add(_obj, _kafka_problem(_obj, exc, fld))

        if obj.kind in ("topic", "mirror_topic"):
            earlier = names.setdefault(obj.cluster, [])
            try:
                check_topic_collision(obj.name, earlier)
            except KafkaError as exc:
                problem("name", exc)
            earlier.append(obj.name)
        spec = obj.spec
        if spec is None:
            continue  # broken: reported on its own
        if obj.kind == "link":
            if declared and spec.source_cluster not in declared:
                problem("source_cluster", JetlinkError(
                    f'source cluster "{spec.source_cluster}" is not declared (declared '
                    f'clusters: {", ".join(sorted(declared))})'))
            elif spec.source_cluster in declared and declared[spec.source_cluster].bound:
                problem("source_cluster", JetlinkError(
                    f'source cluster "{spec.source_cluster}" is bound to a live NATS server '
                    f"({_binding_text(declared[spec.source_cluster])}): a cluster link "
                    "copies from a kafka cluster"))
        elif obj.kind == "mirror_topic":
            _check_mirror_topic(topo, obj, spec, problem)


def _check_mirror_topic(topo: Topology, obj: TopologyObject, spec: MirrorTopicSpec,
                        problem) -> None:
    from .kafka.errors import KafkaError
    from .kafka.mirrors import mirror_source_topic, mirror_topic_exists, unknown_source_topic

    link = topo.kafka.get(("link", obj.cluster, spec.link))
    if link is None:
        elsewhere = sorted(c for (k, c, n) in topo.kafka if k == "link" and n == spec.link)
        note = ""
        if elsewhere:
            note = (f" (it is declared in cluster {', '.join(elsewhere)}: a mirror topic lives "
                    "on the destination cluster of its link, where the link lives)")
        problem("link", KafkaError(
            "CLUSTER_LINK_NOT_FOUND",
            f"Cluster link '{spec.link}' not found: no link {spec.link} is declared in cluster "
            f"{obj.cluster}{note}"))
        return
    if link.spec is None:
        return  # broken: reported on its own
    cfg = link.spec.config
    if not cfg.is_destination:
        problem("link", KafkaError(
            "INVALID_REQUEST",
            f"Cluster link '{spec.link}' is not in DESTINATION mode: mirror topics are created "
            "on a link's destination cluster"))
    given = obj.given_source_topic
    name_ok = True
    try:
        mirror_source_topic(spec.name, cfg.prefix, given)
    except KafkaError as exc:
        problem("name", exc)
        name_ok = False
    if ("topic", obj.cluster, spec.name) in topo.kafka:
        problem("name", mirror_topic_exists(spec.name))
    source_cluster = link.spec.source_cluster
    if topo.clusters and source_cluster not in topo.clusters:
        return  # the link's problem
    if name_ok and not any(
        (kind, source_cluster, spec.source_topic) in topo.kafka
        for kind in ("topic", "mirror_topic")
    ):
        problem("source_topic" if given is not None else "name",
                unknown_source_topic(spec.source_topic, source_cluster, spec.link))


def _is_duplicate(obj: TopologyObject) -> bool:
    return getattr(obj, "duplicate_of", None) is not None


def _check_objects(topo: Topology, add_error) -> None:
    """Each object's own rules (check_stream_config with a lookup of its cluster)."""
    streams = topo.streams
    for obj in topo.objects:
        if obj.config is None or _is_duplicate(obj):
            continue
        cluster = obj.cluster

        def lookup(name: str, _c: str = cluster) -> StreamConfig | None:
            other = streams.get((_c, name))
            return other.config if other is not None else None

        effective, errors = stream_config_problems(obj.config, lookup, create=obj.creating)
        obj.effective = effective
        fields: set[str | None] = set()
        for exc in errors:
            # one problem per field of the object as declared (a KV's ttl is its stream's
            # max_age and duplicate_window: one problem, the first)
            fld = _field_for(obj, exc.field)
            if fld in fields and fld is not None:
                continue
            fields.add(fld)
            add_error(obj, exc)


def _resolve(topo: Topology, origin: Origin) -> TopologyObject | None:
    if origin.cluster is None:
        return None
    found = topo.streams.get((origin.cluster, origin.name))
    if found is None or found.config is None:
        return None
    return found


def _describe_origin(obj: TopologyObject, origin: Origin) -> str:
    if obj.kind in ("kv_mirror", "kv_aggregate"):
        from .config.kv import bucket_of_stream
    if obj.kind == "kv_mirror":
        bucket = bucket_of_stream(origin.name) or origin.name
        return f'origin bucket "{bucket}" (stream {origin.name})'
    if obj.kind == "kv_aggregate":
        bucket = bucket_of_stream(origin.name)
        if bucket:
            return f'aggregate origin bucket "{bucket}" (stream {origin.name})'
        return f'aggregate origin stream "{origin.name}"'
    return f'{"mirror origin" if origin.is_mirror else "source"} "{origin.name}"'


def _check_origins(topo: Topology, add, add_error) -> None:
    """Missing origins (10059, a warning), KV mirror origins without allow_direct, message
    sizes."""
    code, err_code, text = _ERR_NOT_FOUND
    for obj in topo.objects:
        if obj.config is None or _is_duplicate(obj):
            continue
        for origin in obj.origins:
            if origin.cluster is None:
                continue  # an external API prefix outside the topology
            target = topo.streams.get((origin.cluster, origin.name))
            if target is None:
                topo.warnings.append(Problem(
                    obj.file, obj.label, _field_for(obj, f"{origin.field}.name"), err_code,
                    missing_origin_text(_describe_origin(obj, origin), origin.cluster,
                                        not topo.clusters or origin.cluster in topo.clusters),
                ))
                continue
            if target.config is None:
                continue  # declared but broken: reported on its own
            if obj.kind == "kv_mirror" and origin.is_mirror:
                from .config.kv import check_kv_mirror

                try:
                    check_kv_mirror(obj.spec, target.config)
                except JetlinkError as exc:
                    add_error(obj, exc, stream_fields=False)
            mine = (obj.effective or obj.config).max_msg_size
            theirs = (target.effective or target.config).max_msg_size
            if 0 < mine < theirs:
                c, e, t = _ERR_MIRROR_SIZE if origin.is_mirror else _ERR_SOURCE_SIZE
                where = "" if origin.cluster == obj.cluster else f' in cluster "{origin.cluster}"'
                add(obj, Problem(
                    obj.file, obj.label, kv_field(obj.kind, "max_msg_size"), e,
                    f"{t}: max_msg_size {mine} is smaller than {theirs}, the max_msg_size of "
                    f"{'mirror origin' if origin.is_mirror else 'source'} {origin.name}{where}",
                ))


def _check_overlaps(topo: Topology, add) -> None:
    """10065: subjects of two streams of one cluster overlap (reported on the later one)."""
    code, err_code, text = _ERR_OVERLAP
    indexes: dict[str, SubjectIndex] = {}
    by_index = {obj.index: obj for obj in topo.objects}
    for obj in topo.objects:
        cfg = obj.effective
        if cfg is None or _is_duplicate(obj) or not cfg.subjects:
            continue
        index = indexes.get(obj.cluster)
        if index is None:
            index = indexes[obj.cluster] = SubjectIndex()
        clashes: list[str] = []
        seen_owners: set[int] = set()
        for subject in cfg.subjects:
            hits = sorted(index.query(subject), key=lambda e: e[1])
            for theirs, owner in hits:
                if owner in seen_owners:
                    continue
                seen_owners.add(owner)
                other = by_index[owner]
                where = f" ({other.label} in {other.file})" if other.file != obj.file else ""
                clashes.append(f'"{subject}" overlaps "{theirs}" of stream {other.name}{where}')
        for subject in cfg.subjects:
            index.insert(subject, obj.index)
        if clashes:
            more = f"; and {len(clashes) - 3} more" if len(clashes) > 3 else ""
            add(obj, Problem(
                obj.file, obj.label, kv_field(obj.kind, "subjects"), err_code,
                f"{text}: " + "; ".join(clashes[:3]) + more,
            ))
    topo._subject_indexes = indexes  # type: ignore[attr-defined]  (reused by republish loops)


# ----------------------------------------------------------------------------- cycles


def _strongly_connected(nodes: list[int], edges: dict[int, list[int]]) -> list[list[int]]:
    """Tarjan's algorithm, iterative. Returns the components (each a list of node ids)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(edges.get(start, ())))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(edges.get(w, ()))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
    return out


def _cycle_through(v: int, edges: dict[int, list[int]], members: set[int]) -> list[int]:
    """A shortest cycle v -> ... -> v inside one component (breadth-first)."""
    parent: dict[int, int] = {}
    queue = deque([v])
    seen = {v}
    while queue:
        u = queue.popleft()
        for w in edges.get(u, ()):
            if w == v:
                path = [u]
                while path[-1] != v:
                    path.append(parent[path[-1]])
                path.reverse()
                return path + [v]
            if w in members and w not in seen:
                seen.add(w)
                parent[w] = u
                queue.append(w)
    return [v, v]  # pragma: no cover - a component always has a cycle


_EXACT_CYCLES_UP_TO = 300  # components this big get a shortest cycle per stream


def _cycles(nodes: list[int], edges: dict[int, list[int]]) -> dict[int, tuple[list, int]]:
    """For each node on a cycle: (a cycle through it, node first and last; the size of its
    strongly connected component). In components larger than ``_EXACT_CYCLES_UP_TO`` the
    cycle is elided to ``[v, next, None, v]`` (``None`` standing for the rest)."""
    out: dict[int, tuple[list, int]] = {}
    for comp in _strongly_connected(nodes, edges):
        members = set(comp)
        if len(comp) == 1:
            v = comp[0]
            if v in edges.get(v, ()):
                out[v] = ([v, v], 1)
            continue
        if len(comp) <= _EXACT_CYCLES_UP_TO:
            for v in comp:
                out[v] = (_cycle_through(v, edges, members), len(comp))
            continue
        for v in comp:
            nxt = next(w for w in edges.get(v, ()) if w in members)
            out[v] = ([v, nxt, None, v], len(comp))
    return out


def _path_text(path: list, by_index: dict[int, TopologyObject]) -> str:
    """``A -> B -> A``; ``name@cluster`` when the path crosses clusters; long paths elided."""
    if len(path) > 12:
        path = path[:8] + [None] + path[-3:]
    objs = [by_index[i] for i in path if i is not None]
    if len({o.cluster for o in objs}) == 1:
        names = [by_index[i].name if i is not None else "..." for i in path]
    else:
        names = [
            f"{by_index[i].name}@{by_index[i].cluster}" if i is not None else "..." for i in path
        ]
    return " -> ".join(names)


def _cycle_note(path: list, size: int, what: str) -> str:
    if None in path or len(path) > 12:
        return f"{size} streams in cycles; {what}"
    return what


def _check_cycles(topo: Topology, add) -> None:
    """Sources and mirrors leading back to a stream (also across clusters): 10052."""
    edges: dict[int, list[int]] = {}
    via: dict[tuple[int, int], str] = {}
    nodes = []
    for obj in topo.objects:
        cfg = obj.effective or obj.config
        if cfg is None or _is_duplicate(obj):
            continue
        nodes.append(obj.index)
        for origin in obj.origins:
            target = _resolve(topo, origin)
            if target is None:
                continue
            # The server's rule: a source whose filter cannot reach this stream's subjects
            # does not close a cycle.
            if not origin.is_mirror and origin.filter_subject and cfg.subjects and not any(
                overlaps(s, origin.filter_subject) for s in cfg.subjects
            ):
                continue
            edges.setdefault(obj.index, []).append(target.index)
            via.setdefault((obj.index, target.index), origin.field)
    by_index = {obj.index: obj for obj in topo.objects}
    _, err_code, _ = _ERR_INVALID
    for v, (path, size) in _cycles(nodes, edges).items():
        obj = by_index[v]
        fld = _field_for(obj, f"{via[(path[0], path[1])]}.name")
        note = _cycle_note(path, size, "each stream sources or mirrors the next")
        add(obj, Problem(
            obj.file, obj.label, fld, err_code,
            f"{TEXT_CYCLE}: {_path_text(path, by_index)} ({note})",
        ))


# ----------------------------------------------------------------------------- republish

_FN_TOKEN = re.compile(r"^\{\{\s*([A-Za-z]+)\s*\(.*\)\s*\}\}$")
_MULTI_TOKEN_FNS = {"split", "splitfromleft", "splitfromright", "slicefromleft", "slicefromright"}


def republish_image(dest: str) -> str:
    """A pattern covering every subject a RePublish destination can produce.

    Literal tokens stay; a ``{{function()}}`` or ``$N`` token becomes ``*``; functions that may
    produce several tokens (split, splitFrom*, sliceFrom*) end the pattern with ``>``.
    """
    out = []
    for tok in dest.split("."):
        if tok == ">":
            out.append(">")
            break
        m = _FN_TOKEN.match(tok)
        if m:
            if m.group(1).lower() in _MULTI_TOKEN_FNS:
                out.append(">")
                break
            out.append("*")
        elif len(tok) > 1 and tok[0] == "$" and tok[1:].isdigit():
            out.append("*")
        else:
            out.append(tok)
    return ".".join(out)


def _check_republish_loops(topo: Topology, add) -> None:
    """Streams republishing into each other's subjects in a loop (ADR-28's caution): 10052."""
    indexes: dict[str, SubjectIndex] = getattr(topo, "_subject_indexes", {})
    by_index = {obj.index: obj for obj in topo.objects}
    edges: dict[int, list[int]] = {}
    detail: dict[tuple[int, int], str] = {}
    nodes = []
    for obj in topo.objects:
        cfg = obj.effective
        if cfg is None or cfg.republish is None or _is_duplicate(obj):
            continue
        index = indexes.get(obj.cluster)
        if index is None:
            continue
        nodes.append(obj.index)
        image = republish_image(cfg.republish.dest)
        for theirs, owner in sorted(index.query(image), key=lambda e: e[1]):
            if owner == obj.index:
                continue
            if (obj.index, owner) not in detail:
                edges.setdefault(obj.index, []).append(owner)
                detail[(obj.index, owner)] = (
                    f'{obj.name} republishes to "{cfg.republish.dest}", which stream '
                    f'{by_index[owner].name} stores ("{theirs}")'
                )
    _, err_code, _ = _ERR_INVALID
    for v, (path, size) in _cycles(nodes, edges).items():
        if len(path) < 3:
            continue  # a stream into itself is the server's own rule, reported per object
        obj = by_index[v]
        note = _cycle_note(path, size, detail[(path[0], path[1])])
        add(obj, Problem(
            obj.file, obj.label, "republish.dest", err_code,
            f"{TEXT_REPUBLISH_CYCLE}: {_path_text(path, by_index)} ({note})",
        ))


# =========================================================================== export


def _stream_table(cfg: StreamConfig, key: str, cluster: str, with_cluster: bool) -> dict[str, Any]:
    doc = cfg.to_json()
    default = StreamConfig(name=cfg.name).to_json()
    out: dict[str, Any] = {}
    if with_cluster:
        out["cluster"] = cluster
    for k, v in doc.items():
        if k == "name" and v == key:
            continue
        if k in default and default[k] == v and k != "subjects":
            continue
        if k in _DURATIONS and isinstance(v, int) and v:
            v = format_duration(v)
        if k in ("mirror", "sources"):
            v = [_origin_table(s) for s in v] if k == "sources" else _origin_table(v)
        out[k] = v
    return out


def _origin_table(src: dict[str, Any]) -> dict[str, Any]:
    ext = src.get("external")
    if ext and not ext.get("deliver"):
        api = ext.get("api", "")
        if api.startswith("$JS.") and api.endswith(".API") and _NAME_RE.fullmatch(api[4:-4]):
            src = {k: v for k, v in src.items() if k != "external"}
            src["domain"] = api[4:-4]
    return src


def _field_default(f: Any) -> Any:
    import dataclasses

    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def _spec_table(
    spec: Any, key_field: str, key: str, cluster: str, with_cluster: bool
) -> dict[str, Any]:
    """A KV object's table: fields away from their defaults, durations as strings."""
    import dataclasses

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
        elif dataclasses.is_dataclass(value):
            value = value.to_json()
        elif isinstance(value, list):
            value = [v.to_json() if dataclasses.is_dataclass(v) else v for v in value]
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
    if spec.name != key:
        out["name"] = spec.name
    configs = dict(sorted(spec.configs.items()))
    if isinstance(spec, TopicSpec):
        if spec.partitions != 1:
            out["partitions"] = spec.partitions
    elif isinstance(spec, LinkSpec):
        from .kafka.links import group_filters, topic_filters

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


def stream_table(cfg: StreamConfig) -> dict[str, Any]:
    """A stream's ``[streams.<name>]`` table as :func:`to_document` writes it (no
    ``cluster``, no ``name``: the table key is the stream name)."""
    return _stream_table(cfg, cfg.name, "", False)


def kv_table(spec: Any) -> dict[str, Any]:
    """A KV object's table (KeyValueConfig, KVMirrorConfig or KVAggregateConfig) as
    :func:`to_document` writes it (no ``cluster``; the bucket / name is the table key)."""
    from .config.kv import KVMirrorConfig

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


def to_document(topo: Topology) -> dict[str, Any]:
    """The topology in the file format (see :meth:`Topology.to_document`)."""
    doc: dict[str, Any] = {"version": FORMAT_VERSION}
    if topo.clusters:
        doc["clusters"] = {c.name: c.to_table() for c in topo.clusters.values()}
    tables = {t: {} for t in OBJECT_TABLES}
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


# =========================================================================== benchmark


def bench_document(n: int) -> dict[str, Any]:
    """A topology document with ``n`` varied streams in two clusters (about 3% invalid)."""
    streams: dict[str, Any] = {}
    per_cluster: dict[str, list[str]] = {"west": [], "east": []}
    for i in range(n):
        name = f"S{i:06d}"
        cluster = "east" if i % 4 == 0 else "west"
        prior = per_cluster[cluster]
        app = f"app{i % 64}"
        kind = i % 20
        body: dict[str, Any] = {"cluster": cluster}
        if kind < 12 or len(prior) < 3:
            body.update(
                subjects=[f"{app}.s{i}.>", f"{app}.t{i}.*"],
                max_age="24h",
                max_msgs_per_subject=5,
                max_bytes=1 << 30,
                max_msg_size=1 << 20,
                discard="new",
                duplicate_window="2m",
            )
            if kind == 1:
                body["subject_transform"] = {
                    "src": f"{app}.t{i}.*", "dest": f"{app}.t{i}.{{{{partition(4,1)}}}}.x"
                }
            if kind == 2:
                body["republish"] = {"src": f"{app}.s{i}.>", "dest": f"mon.s{i}.>"}
            if kind == 3:
                body["allow_rollup_hdrs"] = True
                body["allow_direct"] = True
        elif kind < 15:
            a, b = prior[-1], prior[-3]
            body.update(
                subjects=[f"agg.s{i}.>"],
                sources=[
                    {"name": a, "subject_transforms": [
                        {"src": f"app{(int(a[1:])) % 64}.s{int(a[1:])}.*.>",
                         "dest": f"agg.s{i}.{{{{wildcard(1)}}}}.>"}]},
                    {"name": b, "filter_subject": f"app{int(b[1:]) % 64}.s{int(b[1:])}.>"},
                ],
            )
        elif kind < 17:
            origin = prior[-2]
            body.update(mirror={"name": origin}, max_msg_size=1 << 20)
        elif kind == 17:
            other = "west" if cluster == "east" else "east"
            src = per_cluster[other][-1] if per_cluster[other] else prior[-1]
            body.update(
                mirror={"name": src, "domain": other, "filter_subject": f"app{int(src[1:]) % 64}.>"}
            )
        elif kind == 18:
            body.update(subjects=[f"{app}.s{i}..bad"])  # invalid subject
        else:
            if i % 40 == 19:
                body.update(subjects=[f"{app}.s{i - 19}.x"])  # overlaps an earlier stream
            else:
                body.update(mirror={"name": f"MISSING{i}"})  # origin not declared
        streams[name] = body
        prior.append(name)
    return {
        "version": FORMAT_VERSION,
        "clusters": {"west": {"kind": "nats"}, "east": {"kind": "nats"}},
        "streams": streams,
    }


def bench_validate(n: int = 10_000) -> dict[str, Any]:
    """Time loading and validating ``n`` generated stream configs as one topology."""
    doc = bench_document(n)
    start = time.perf_counter()
    topo = Topology()
    topo.add_document(doc, "<bench>", fmt="toml")
    problems = validate_topology(topo)
    seconds = time.perf_counter() - start
    return {
        "configs": n,
        "seconds": round(seconds, 4),
        "configs_per_sec": round(n / seconds, 1) if seconds > 0 else float("inf"),
        "problems": len(problems),
    }
