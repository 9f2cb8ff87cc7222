"""Loading topology files into ONE :class:`Topology`: reading each file (TOML, JSON, a JSON
StreamConfig or StreamInfo, an array of those), the top-level tables, clusters, streams, KV
and Kafka objects (decoded by :mod:`.decode` and :mod:`.kafka_specs`); problems are
collected, never raised. :func:`load_topology` and :func:`load_files`.
"""

from __future__ import annotations

import dataclasses
import json
import re
import tomllib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from ..config.codec import DuplicateKey
from ..errors import TOO_DEEP, JetlinkError
from ..limits import CLUSTER_NAME_RE, MAX_INPUT_FILE
from ..numbers import reason
from .decode import (
    _KV_TABLES,
    _authorizer_keys,
    _binding,
    _cluster_of,
    _decode_stream,
    _format_of,
    _plain,
    _plain_table,
    _stream_origins,
    is_topology_document,
    with_full_fractions,
)
from .export import to_document
from .kafka_specs import _KAFKA_KEYS, _KAFKA_TABLES, _kafka_problem, acl_name
from .model import (
    CLUSTER_KEYS,
    CLUSTER_KINDS,
    CLUSTER_RULE,
    DEFAULT_CLUSTER,
    FORMAT_VERSION,
    KAFKA_KINDS,
    KIND_OF_TABLE,
    OBJECT_TABLES,
    TOP_LEVEL,
    Problem,
    TopologyCluster,
    TopologyObject,
    _FileEntry,
    _problem_for,
    follows_from,
    kv_field,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..config.stream import StreamConfig
    from .subject_index import SubjectIndex

__all__ = ["Topology", "load_files", "load_topology"]

T = TypeVar("T")


class Topology:
    """Everything the given files declare. Streams are keyed by (cluster, stream name); Kafka
    objects by (kind, cluster, name), kind "topic", "link" or "mirror_topic"."""

    def __init__(self) -> None:
        self.files: list[str] = []
        self.clusters: dict[str, TopologyCluster] = {}
        self.objects: list[TopologyObject] = []
        self.problems: list[Problem] = []  # found while loading
        # what the server accepts but is likely a mistake (a mirror or source whose origin
        # is not there): filled by validate_topology, never a reason to fail
        self.warnings: list[Problem] = []
        # what loading a file warns of (a file that declares nothing): kept when validation
        # computes the warnings afresh
        self.load_warnings: list[Problem] = []
        # read on its own (``jetlink validate`` without --live): an origin in no file may
        # well be in a data directory or on a server, which nothing here read
        self.files_only = False
        self.streams: dict[tuple[str, str], TopologyObject] = {}
        self.kafka: dict[tuple[str, str, str], TopologyObject] = {}
        self._sort: dict[int, tuple[int, int]] = {}  # id(problem or object) -> sort key
        self._counter = 0
        # cluster -> its streams' subjects: built by the overlap check, reused by the
        # republish loop check (core/topology/subject_index.py, checks.py)
        self._subject_indexes: dict[str, SubjectIndex] = {}

    # ----------------------------------------------------------------- loading
    def _read_text(self, path: str, fpos: int) -> str | None:
        """The text of file ``path``, or None with its problem said (not found, too large,
        not UTF-8: the byte named with its line and column). A byte order mark (an
        editor's, EF BB BF) is read past, as RFC 8259 lets a JSON reader do: it is no
        character of the document."""
        if path == "-":  # never a file named -, which a stdin meant would silently read
            self._problem(path, None, None, 0, "a topology is read from files, not from "
                          "stdin (give its path; a file named - as ./-)", fpos)
            return None
        try:
            with open(path, "rb") as fh:
                data = fh.read(MAX_INPUT_FILE + 1)
        except FileNotFoundError:
            self._problem(path, None, None, 0, "file not found", fpos)
            return None
        except IsADirectoryError:
            self._problem(path, None, None, 0, "is a directory, not a file", fpos)
            return None
        except OSError as exc:
            self._problem(path, None, None, 0, f"can not read file: {exc.strerror}", fpos)
            return None
        if len(data) > MAX_INPUT_FILE:
            self._problem(path, None, None, 0, f"is larger than {MAX_INPUT_FILE:,} bytes: no "
                          "topology file is that large", fpos)
            return None
        try:
            return data.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError as exc:
            before = data[:exc.start]
            line = before.count(b"\n") + 1
            column = exc.start - (before.rfind(b"\n") + 1) + 1
            self._problem(path, None, None, 0, f"file is not UTF-8 text: byte "
                          f"0x{data[exc.start]:02x} at line {line}, column {column} (byte "
                          f"{exc.start + 1:,} of the file)", fpos)
            return None

    def add_file(self, path: str) -> None:
        """Read one file (any kind) into the topology; problems are collected, not raised."""
        fpos = len(self.files)
        self.files.append(path)
        text = self._read_text(path, fpos)
        if text is None:
            return
        fmt = _format_of(path, text)
        if fmt == "yaml":  # named YAML: its TOML error would say nothing useful
            self._problem(path, None, None, 0, "YAML is not read: a topology file is TOML, "
                          "or JSON (a name ending in .json)", fpos)
            return
        if fmt == "sniff":  # no telling extension: JSON if it parses as JSON, else TOML
            try:
                doc = _json(text)
                fmt = "json"
            except ValueError:  # a JSONDecodeError, or a number too long to convert
                fmt = "json" if text.lstrip()[:1] == "{" else "toml"
            except RecursionError:
                fmt = "json"
        if fmt == "toml":
            try:
                doc = with_full_fractions(tomllib.loads(text), text)
            except tomllib.TOMLDecodeError as exc:
                self._problem(path, None, None, 0, f"invalid TOML: {_toml_error(text, exc)}",
                              fpos)
                return
            except ValueError as exc:  # a number too long to convert (core/numbers.py)
                self._problem(path, None, None, 0, f"invalid TOML: {reason(exc)}", fpos)
                return
            except RecursionError:
                self._problem(path, None, None, 0, f"invalid TOML: {TOO_DEEP}", fpos)
                return
        else:
            try:
                doc = _json(text)
            except RecursionError:
                self._problem(path, None, None, 0, f"invalid JSON: {TOO_DEEP}", fpos)
                return
            except DuplicateKey as exc:
                self._problem(path, None, None, 0, f"invalid JSON: {exc} (the second would "
                              "silently replace the first)", fpos)
                return
            except json.JSONDecodeError as exc:
                self._problem(
                    path, None, None, 0,
                    f"invalid JSON: {exc.msg} (at line {exc.lineno}, column {exc.colno})", fpos,
                )
                return
            except ValueError as exc:  # a number too long to convert (core/numbers.py)
                self._problem(path, None, None, 0, f"invalid JSON: {reason(exc)}", fpos)
                return
        from ..limits import nested_deeper

        if nested_deeper(doc):
            self._problem(path, None, None, 0, f"invalid {fmt.upper()}: {TOO_DEEP}", fpos)
            return
        if (isinstance(doc, dict) and (not doc or (set(doc) == {"version"}
                                                   and type(doc["version"]) is int
                                                   and doc["version"] == 1))) \
                or (isinstance(doc, list) and not doc):
            # (an empty file, one of comments only, or of its version alone; a JSON list of
            # stream configs holding none)
            self.load_warnings.append(Problem(path, None, None, 0, "the file declares "
                                              "nothing: no clusters, streams, buckets, "
                                              "topics, links or ACLs"))
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
        given_name = cfg_doc.get("name")
        name = given_name if isinstance(given_name, str) else ""
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
                    f'unknown top-level key "{key}"{_hint(key, TOP_LEVEL)} (allowed: '
                    f'{", ".join(TOP_LEVEL)})',
                    f.position,
                )
        version = doc.get("version", FORMAT_VERSION)
        if version != FORMAT_VERSION or isinstance(version, bool):
            typed = isinstance(version, int) and not isinstance(version, bool)
            self._problem(
                f.path, None, "version", 0,
                f"unsupported topology version {version!r}: this jetlink reads version "
                f"{FORMAT_VERSION}" if typed else
                f"version is {version!r}: it must be the integer {FORMAT_VERSION} "
                f"(version = {FORMAT_VERSION}, unquoted)",
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

        if not CLUSTER_NAME_RE.fullmatch(name):
            problem(None, f'invalid cluster name "{name}": {CLUSTER_RULE}')
            return
        if not isinstance(body, dict):
            problem(None, f"[clusters.{name}] must be a table")
            return
        for key in body:
            if key not in CLUSTER_KEYS:
                problem(
                    key, f'unknown key "{key}" in [clusters.{name}]'
                    f'{_hint(key, CLUSTER_KEYS)} (allowed: {", ".join(CLUSTER_KEYS)})'
                )
        kind = body.get("kind", "nats")
        if kind not in CLUSTER_KINDS:
            problem("kind", f'invalid cluster kind {kind!r}: kind must be "nats" or "kafka"')
            kind = "nats"
        description = body.get("description", "")
        if not isinstance(description, str):
            problem("description", "description must be a string")
            description = ""
        binding = _binding(name, body, problem, f.path)
        if binding and kind == "kafka" and ("server" in binding or "context" in binding):
            problem("kind", f'cluster "{name}" is bound to a NATS server (server / context): '
                    'its kind must be "nats", not "kafka"')
        authorizer, super_users, allow_everyone = _authorizer_keys(body, kind, problem)
        cluster = TopologyCluster(name, kind, description, f.path, binding, authorizer,
                                  super_users, allow_everyone)
        old = self.clusters.get(name)
        if old is None:
            self.clusters[name] = cluster
        elif (old.kind, old.description, old.binding, old.authorizer_settings) != (
                kind, description, binding, cluster.authorizer_settings):
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
        except JetlinkError as exc:
            self._object_problem(obj, exc)
            return
        doc.pop("cluster", None)
        found = self._decode_kv_all(obj, doc, key, cluster, decode)
        if found is None:
            return
        spec, cfg = found
        obj.spec, obj.config = spec, cfg
        obj.origins = _stream_origins(cfg, cluster)

    def _add_kafka_table(self, table: str, key: str, body: Any, f: _FileEntry) -> None:
        """An entry of ``[topics]``, ``[links]`` or ``[mirror_topics]``: the object, its own
        rules checked (every problem found), its spec when it has none."""
        kind = KIND_OF_TABLE[table]
        cluster, explicit = _cluster_of(body)
        if kind == "acl":  # its identity is the binding; the key is a label
            name = acl_name(body) or key
        else:
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
                    f'unknown key "{k}" in [{table}.{key}]{_hint(str(k), allowed)} (allowed: '
                    f'{", ".join(allowed)})',
                    field=k,
                ))
        if not isinstance(name, str) and kind != "acl":
            errors.append(JetlinkError("name must be a string", field="name"))
        decode = _KAFKA_TABLES[table]
        spec = decode(_plain(body), name if isinstance(name, str) else key, cluster, errors)
        for exc in errors:
            p = _kafka_problem(obj, exc)
            self.problems.append(p)
            self._sort[id(p)] = self._sort[id(obj)]
        if kind == "mirror_topic":
            given = body.get("source_topic")
            obj.given_source_topic = given if isinstance(given, str) else None
        if errors:  # a partial one for the rules between objects (TopologyObject.partial)
            obj.partial = spec
            return
        obj.spec = spec

    def resolve_mirror_sources(self) -> None:
        """Each mirror topic declared without ``source_topic``: its name without the prefix
        of its link (declared in this or another file), or its name."""
        for obj in self.objects:
            if obj.kind != "mirror_topic" or obj.spec is None:
                continue
            if obj.given_source_topic is not None:
                continue
            from ..kafka.errors import KafkaError
            from ..kafka.mirrors import mirror_source_topic

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
        """Decode a stream, reporting every field that does not decode (not only the first),
        so the object's own rules still run on what is left (:meth:`_every_problem`)."""
        return self._every_problem(
            obj, body, lambda doc: _decode_stream(doc, key, allow_cluster=allow_cluster))

    def _decode_kv_all(self, obj: TopologyObject, doc: dict[str, Any], key: str, cluster: str,
                       decode: Callable[..., Any]) -> tuple[Any, StreamConfig] | None:
        """A KV object's spec and stream, reporting every field that does not decode or
        breaks the KV rules (not only the first), as a stream's (:meth:`_every_problem`)."""
        import copy

        from ..config.stream import StreamConfig

        def attempt(table: Any) -> tuple[Any, StreamConfig]:
            spec = decode(copy.deepcopy(table), key, cluster)
            # through the stream's JSON decode: its Go types bound the numbers the KV table
            # sets (max_value_size is max_msg_size, an int32), as the server decodes them;
            # a refusal names the table's own field
            try:
                return spec, StreamConfig.from_json(spec.to_stream_config().to_json())
            except JetlinkError as exc:
                exc.field = kv_field(obj.kind, exc.field)
                raise

        return self._every_problem(obj, doc, attempt)

    def _every_problem(self, obj: TopologyObject, doc: Any, attempt: Callable[[Any], T]
                       ) -> T | None:
        """``attempt(doc)``, each field it refuses reported as a problem of ``obj``, set
        aside and the rest tried again; None: nothing decodes."""
        import copy

        from ..config.validate import MAX_PROBLEMS, drop_path

        seen: set[str] = set()
        dropped: dict[str, list[int]] = {}  # list path -> the indices set aside, as written
        for _ in range(MAX_PROBLEMS):
            try:
                return attempt(doc)
            except JetlinkError as exc:
                fld = exc.field
                shown = _as_written(fld, dropped) if fld else fld
                if follows_from(shown, seen):
                    # a field set aside for its fault, now missing (or the list or table
                    # holding it now empty for want of it): that fault is the problem,
                    # said once
                    return None
                if shown != fld:  # (the index in the list as written, not as left)
                    exc.field = shown
                    detail = getattr(exc, "detail", None)
                    if isinstance(detail, str) and fld and shown:  # ("subjects[0] is 2")
                        exc.detail = detail.replace(fld.rsplit(".", 1)[-1],
                                                    shown.rsplit(".", 1)[-1], 1)
                self._object_problem(obj, exc)
                if not fld or not shown or shown in seen or not isinstance(doc, dict):
                    return None
                seen.add(shown)  # (as written: the items after one set aside move up)
                obj.set_aside.add(shown)
                doc = copy.deepcopy(doc)
                if not drop_path(doc, fld):
                    return None
                m = _LIST_ITEM.match(shown or "")
                if m:
                    dropped.setdefault(m.group(1), []).append(int(m.group(2)))
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
        """The topology as a document in the topology format (what ``jetlink export`` writes
        with tomli-w): durations as human strings, fields at their defaults left out."""
        return to_document(self)


def _toml_error(text: str, exc: Exception) -> str:
    """tomllib's error, with the key and the table named where it says only "Cannot
    overwrite a value" (a key given twice in one table: the line it points at starts with
    the key): ``key "max_age" given twice in [streams.A] (at line 5, column 15): a key is
    set once per table``."""
    said = str(exc)
    m = re.fullmatch(r"Cannot overwrite a value \(at line (\d+), column (\d+)\)", said)
    if m is None:
        return said
    lines = text.splitlines()
    n = int(m.group(1))
    if not 0 < n <= len(lines):
        return said
    key = lines[n - 1].split("=", 1)[0].strip()
    if not key or key.startswith("["):
        return said
    table = next((ln.strip() for ln in reversed(lines[:n - 1])
                  if ln.strip().startswith("[")), None)
    where = f" in {table}" if table else ""
    return (f"key {json.dumps(key)} given twice{where} (at line {n}, column {m.group(2)}): "
            "a key is set once per table")


def _json(text: str) -> Any:
    """A topology file's JSON, every object's keys given once (core/config/codec.py
    ``one_of_each``)."""
    from ..config.codec import JsonNumber, one_of_each

    return json.loads(text, object_pairs_hook=one_of_each, parse_float=JsonNumber)


def load_topology(path: str) -> Topology:
    """Read one file into a Topology (load problems in ``.problems``; not validated yet)."""
    topo = Topology()
    topo.add_file(path)
    return topo


_LIST_ITEM = re.compile(r"^(.*)\[(\d+)\]$")


def _as_written(field: str, dropped: dict[str, list[int]]) -> str:
    """``field`` (``keys[2]``) with its index counted in the list as written, the items
    set aside before it (``dropped``: list path -> indices as written) put back."""
    m = _LIST_ITEM.match(field)
    if not m or m.group(1) not in dropped:
        return field
    i = int(m.group(2))
    for gone in sorted(dropped[m.group(1)]):
        if gone <= i:
            i += 1
    return f"{m.group(1)}[{i}]"


def load_files(paths: Iterable[str]) -> Topology:
    """Read several files into ONE Topology (objects of all files reference each other); a
    file named twice (the same file, however spelt) is read once: its objects are no
    duplicates of themselves."""
    import os

    topo = Topology()
    seen: set[str] = set()
    for path in paths:
        key = os.path.realpath(str(path)) if os.path.isfile(str(path)) else str(path)
        if key in seen:
            continue
        seen.add(key)
        topo.add_file(str(path))
    return topo


def _hint(key: str, allowed: Any) -> str:
    """``; did you mean X?`` for a key close to an allowed one (core/errors.py
    ``did_you_mean``: the one suggestion rule), else ""."""
    from ..errors import did_you_mean

    hint = did_you_mean(key, allowed) if isinstance(key, str) else None
    return f"; {hint}" if hint else ""
