"""Topology as code over a data directory or live servers: export, plan a file, apply.

One planner (:func:`plan_topology`) and one applier (:func:`apply_changes`) over two
backends that read and change a state: :class:`EmbeddedBackend` (the clusters of a data
directory; :func:`make_plan` / :func:`apply_plan` / :func:`export_document` are its
shorthands) and :class:`LiveBackend` (a LiveJetStream per cluster bound to a live server,
``[clusters.west] server = ...`` / ``context = ...``; :func:`live_bindings` resolves the
bindings through core/contexts.py and core/live/settings.py and names their problems before
anything is connected, one connection per server). Live, the file's cluster names in
``domain = "west"`` / ``$JS.west.API`` are translated to the bound JetStream domains at one
seam (:class:`_FileSpace`), so the planner compares and checks everything in the file's
terms; origins in domains the file does not bind are looked up on the server.

- :func:`export_document` reads clusters, streams (KV buckets, KV mirrors and aggregates
  written as such when their stream is exactly what the KV table makes, else as streams),
  topics, cluster links and mirror topics into a document of core/topology/'s format
  (``jetlink export`` writes it with tomli-w).
- :func:`make_plan` validates the DESIRED state as a whole: what the data directory holds,
  with the file's objects replacing or adding to it (with ``prune``: only the file's objects,
  in the clusters the file declares). Every problem of that state, and every change the
  engine would refuse (a non-editable stream field, a link's source, fewer partitions, a
  mirror topic's link or source), is a :class:`~jetlink.core.topology.Problem`: the plan is
  then not applied at all. Otherwise it lists one :class:`Change` per object (create /
  update with the field differences / delete / unchanged).
- :func:`apply_plan` makes the changes in dependency order: clusters, topics, streams (origins
  before their mirrors and sources), links, mirror topics; deletions in the reverse order.
  Each change is one engine call, i.e. one transaction: an object is either fully created /
  updated or untouched. The first failure stops the run; the :class:`ApplyReport` says what
  was applied, what failed and what was not tried.

Objects are identified by (kind, cluster, name); a NATS object is applied as the stream it
becomes (add_stream / update_stream / delete_stream of the cluster's JetStream API, the
calls every stream and KV verb ends in; KV objects are created through core/kv.py KV's
create_bucket / create_mirror / create_aggregate), Kafka objects through
Kafka.create_topic / alter_topic / delete_topic, Links.create / alter / delete and
Mirrors.create. On live servers the streams are read once per plan (a paged STREAM.LIST per
cluster) and each change is one API request; a change refused by jetlink's checks or by the
server stops the run as above, and a lost connection marks the failed change ``uncertain``
(the server may or may not have made it).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .clock import Clock
from .errors import ApiError, JetlinkError
from .store import DataDir
from .topology import Problem, Topology, TopologyObject, object_table, validate_topology

NATS_KINDS = ("stream", "kv", "kv_mirror", "kv_aggregate")
# creation order of the kinds (streams are further ordered origins first)
ORDER = {"cluster": 0, "topic": 1, "stream": 2, "kv": 2, "kv_mirror": 2, "kv_aggregate": 2,
         "link": 3, "mirror_topic": 4}


# =========================================================================== export


def _user_config(cfg: Any) -> Any:
    """``cfg`` without the metadata the server manages (what a file declares)."""
    from .config.validate import user_metadata

    mine = user_metadata(cfg.metadata)
    if mine == cfg.metadata:
        return cfg
    out = cfg.copy()
    out.metadata = mine
    return out


def _kv_table(cfg: Any) -> tuple[str, str, dict[str, Any]] | None:
    """A KV stream as (table, name, its [kv] / [kv_aggregates] / [kv_mirrors] table) when
    that table makes exactly this stream (else None: the stream is exported as a stream,
    which apply recreates as it is)."""
    from .config.kv import KeyValueConfig, bucket_of_stream
    from .config.validate import check_stream_config

    def same(spec: Any) -> bool:
        try:
            made = _user_config(check_stream_config(spec.to_stream_config()))
        except JetlinkError:
            return False
        return made.to_json() == cfg.to_json()

    from .topology import kv_table

    bucket = bucket_of_stream(cfg.name)
    candidates: list[tuple[str, str, Any]] = []
    try:
        if bucket is not None and cfg.mirror is None:
            if cfg.sources:
                candidates.append(("kv_aggregates", bucket, _aggregate_spec(cfg, bucket)))
            candidates.append(("kv", bucket, KeyValueConfig.from_stream_config(cfg)))
        elif cfg.mirror is not None and bucket_of_stream(cfg.mirror.name) is not None:
            spec = _kv_mirror_spec(cfg)
            candidates.append(("kv_mirrors", spec.name, spec))
            if bucket is not None:  # a mirror bucket with settings [kv_mirrors] lacks
                candidates.append(("kv", bucket, KeyValueConfig.from_stream_config(cfg)))
    except (JetlinkError, ValueError, TypeError):
        return None
    for table, name, spec in candidates:
        if same(spec):
            return table, name, kv_table(spec)
    return None


def _domain(src: Any) -> tuple[Any, str]:
    """(external, domain) of a StreamSource: ``$JS.<d>.API`` without deliver is a domain."""
    if src.domain and not src.external.deliver:
        return None, src.domain
    return src.external, ""


def _keys(src: Any, bucket: str) -> list[str]:
    prefix = f"$KV.{bucket}."
    subjects = [src.filter_subject] if src.filter_subject else [
        t.src for t in src.subject_transforms]
    keys = [s[len(prefix):] for s in subjects if s and s.startswith(prefix)]
    return [] if keys == [">"] else keys


def _kv_mirror_spec(cfg: Any) -> Any:
    from .config.kv import KVMirrorConfig, bucket_of_stream

    origin = bucket_of_stream(cfg.mirror.name)
    assert origin is not None, "only a mirror of a KV_ stream is a KV mirror"
    external, domain = _domain(cfg.mirror)
    return KVMirrorConfig(
        name=bucket_of_stream(cfg.name) or cfg.name, origin_bucket=origin,
        description=cfg.description,
        replicas=cfg.num_replicas or 1, history=max(cfg.max_msgs_per_subject, 0),
        ttl=cfg.max_age, max_bytes=max(cfg.max_bytes, 0),
        max_value_size=max(cfg.max_msg_size, 0), storage=cfg.storage,
        placement=cfg.placement, keys=_keys(cfg.mirror, origin), external=external,
        domain=domain, metadata=dict(cfg.metadata))


def _aggregate_spec(cfg: Any, bucket: str) -> Any:
    from .config.kv import KVAggregateConfig, KVAggregateOrigin, bucket_of_stream

    origins = []
    for src in cfg.sources:
        origin = bucket_of_stream(src.name) or ""
        external, domain = _domain(src)
        origins.append(KVAggregateOrigin(bucket=origin, keys=_keys(src, origin),
                                         external=external, domain=domain))
    return KVAggregateConfig(
        bucket=bucket, writable=bool(cfg.subjects), description=cfg.description,
        replicas=cfg.num_replicas or 1, max_value_size=max(cfg.max_msg_size, 0),
        history=max(cfg.max_msgs_per_subject, 1), ttl=cfg.max_age,
        max_bytes=max(cfg.max_bytes, 0), storage=cfg.storage, placement=cfg.placement,
        republish=cfg.republish, origins=origins, compression=cfg.compression == "s2",
        metadata=dict(cfg.metadata), limit_marker_ttl=cfg.subject_delete_marker_ttl)


def _decoded(table: dict[str, Any], name: str) -> Any:
    """The StreamConfig a ``[streams.<name>]`` table declares (None: it does not decode)."""
    topo = Topology()
    topo.add_document({"version": 1, "streams": {name: table}}, "<export>")
    return None if topo.problems or not topo.objects else topo.objects[0].config


def minimal_stream_table(cfg: Any) -> dict[str, Any]:
    """The shortest ``[streams]`` table that makes the stored ``cfg``: every field whose
    absence the server's defaults fill with the same value is left out (an exported file
    reads like one written by hand, and apply makes the same stream)."""
    from .config.validate import check_stream_config
    from .topology import stream_table

    want = cfg.to_json()
    table = stream_table(cfg)
    for key in [k for k in table if k not in ("mirror", "sources")]:
        trial = {k: v for k, v in table.items() if k != key}
        declared = _decoded(trial, cfg.name)
        if declared is None:
            continue
        try:
            made = _user_config(check_stream_config(declared))
        except JetlinkError:
            continue
        if made.to_json() == want:
            table = trial
    return table


def export_document(dd: DataDir, clock: Clock, clusters: Sequence[str] | None = None
                    ) -> dict[str, Any]:
    """The topology of ``dd`` (only ``clusters`` when given) in the file format, normalized
    through :class:`Topology` (what ``export -> apply -> export`` keeps equal)."""
    return EmbeddedBackend(dd, clock).read(clusters)


class _Document:
    """An export document being built: cluster tables, object tables keyed by (cluster,
    name); :meth:`finish` names the tables (``NAME@cluster`` when two clusters hold one
    name) and normalizes the whole through :class:`Topology`."""

    def __init__(self) -> None:
        self.doc: dict[str, Any] = {"version": 1, "clusters": {}}
        self.tables: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
        self.names: dict[str, list[tuple[str, str]]] = {}  # table -> [(cluster, name)]

    def cluster(self, name: str, table: dict[str, Any]) -> None:
        self.doc["clusters"][name] = table

    def add(self, table: str, cluster: str, name: str, body: dict[str, Any]) -> None:
        body = dict(body)
        body["cluster"] = cluster
        self.tables.setdefault(table, {})[(cluster, name)] = body
        self.names.setdefault(table, []).append((cluster, name))

    def stream(self, cluster: str, stored: Any, *, minimal: bool = True) -> None:
        """A stream as the engine or server stores it: a KV table when it is exactly what
        one makes, else a stream table (the shortest one with ``minimal``: what export
        writes; the plain one reads back the same and is quicker, for a plan)."""
        from .dr.positions import is_jetlink_own
        from .topology import stream_table

        if is_jetlink_own(stored.name):
            return  # jetlink's own record (the positions bucket), not the user's
        cfg = _user_config(stored)
        kv = _kv_table(cfg)
        if kv is not None:
            self.add(kv[0], cluster, kv[1], kv[2])
        else:
            self.add("streams", cluster, cfg.name,
                     minimal_stream_table(cfg) if minimal else stream_table(cfg))

    def finish(self) -> dict[str, Any]:
        doc = self.doc
        for table, entries in self.tables.items():
            counts: dict[str, int] = {}
            for _cluster, name in self.names[table]:
                counts[name] = counts.get(name, 0) + 1
            out = {}
            for (cluster, name), body in sorted(entries.items(),
                                                key=lambda kv: (kv[0][1], kv[0][0])):
                key = name if counts[name] == 1 else f"{name}@{cluster}"
                if key != name:
                    body = {"name" if table not in ("kv", "kv_aggregates") else "bucket": name,
                            **body}
                out[key] = body
            doc[table] = out
        topo = Topology()
        topo.add_document(doc, "<export>")
        return topo.to_document()


def _export(dd: DataDir, clock: Clock, clusters: Sequence[str] | None = None,
            stored: dict[tuple[str, str], Any] | None = None, *, minimal: bool = True
            ) -> dict[str, Any]:
    """:func:`export_document`; ``stored`` (when given) receives (cluster, stream) -> the
    configuration the engine stores, read in the same pass."""
    from .jetstream import JetStream
    from .kafka.links import Links
    from .kafka.mirrors import Mirrors
    from .kafka.topics import Kafka

    wanted = None if clusters is None else set(clusters)
    infos = dd.clusters(create_local=False)
    known = {c.name for c in infos}
    for name in sorted(wanted or ()):
        if name not in known:
            from .errors import NotFoundError

            raise NotFoundError(f"cluster {name} not found", field="cluster")
    out = _Document()
    for info in infos:
        if wanted is not None and info.name not in wanted:
            continue
        out.cluster(info.name, {"kind": info.kind})
        cl = dd.open(info.name, create_local=False)
        for sinfo in JetStream(cl, clock).streams():
            if stored is not None:
                stored[(info.name, sinfo.config.name)] = sinfo.config
            out.stream(info.name, sinfo.config, minimal=minimal)
        have = cl.table_names()
        if "topics" not in have and "links" not in have:
            continue
        kafka = Kafka(cl, clock)
        mirrored = {}
        links = Links.open(dd, cl, clock).list() if "links" in have else []
        if links:
            for m in Mirrors(dd, info.name, clock).list():
                if m.mirror_status not in ("STOPPED",):
                    mirrored[m.mirror_topic_name] = m
        for t in kafka.topics():
            if t.name in mirrored:
                m = mirrored[t.name]
                out.add("mirror_topics", info.name, t.name, {
                    "link": m.link_name, "source_topic": m.source_topic_name})
            else:
                out.add("topics", info.name, t.name, {
                    "partitions": len(t.partitions), "configs": dict(sorted(t.configs.items()))})
        for li in links:
            out.add("links", info.name, li.name, {"source_cluster": li.source_cluster,
                                                  "configs": li.config.to_json()})
    return out.finish()


# =========================================================================== plan


@dataclass
class Change:
    action: str  # create | update | delete | unchanged
    kind: str  # cluster, stream, kv, kv_mirror, kv_aggregate, topic, link, mirror_topic
    cluster: str
    name: str
    diff: list[dict[str, Any]] = field(default_factory=list)  # {field, from, to}
    obj: TopologyObject | None = None  # the desired object (create / update)
    current: TopologyObject | None = None  # the object in the data directory
    cluster_kind: str = "nats"  # a cluster change: its kind
    config: Any = None  # a stream update: the complete config sent (declared + defaults)

    @property
    def desired(self) -> TopologyObject:
        """``obj`` of a create or an update (which always carry it)."""
        assert self.obj is not None, f"a {self.action} carries the desired object"
        return self.obj

    @property
    def existing(self) -> TopologyObject:
        """``current`` of an update or a delete (which always carry it)."""
        assert self.current is not None, f"a {self.action} carries the existing object"
        return self.current

    @property
    def shown(self) -> str:
        """The name as the file writes it: a bucket's name, not its KV_ stream's."""
        obj = self.obj or self.current
        if obj is not None and obj.kind in ("kv", "kv_aggregate") and obj.spec is not None:
            return obj.spec.bucket
        return self.name

    @property
    def label(self) -> str:
        return f"{self.kind} {self.shown}" + ("" if self.kind == "cluster" else
                                              f" in cluster {self.cluster}")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "kind": self.kind,
                               "cluster": self.cluster, "name": self.shown}
        if self.diff:
            out["diff"] = self.diff
        return out


@dataclass
class Plan:
    changes: list[Change]
    problems: list[Problem]
    prune: bool = False
    # what the server accepts but is likely a mistake (an origin that is not there): shown,
    # never a reason to refuse the plan
    warnings: list[Problem] = field(default_factory=list)

    @property
    def pending(self) -> list[Change]:
        return [c for c in self.changes if c.action != "unchanged"]

    def to_json(self) -> dict[str, Any]:
        return {"prune": self.prune, "changes": [c.to_json() for c in self.pending],
                "unchanged": sum(1 for c in self.changes if c.action == "unchanged"),
                "problems": [p.to_dict() for p in self.problems],
                "warnings": [p.to_dict() for p in self.warnings]}


def _ident(obj: TopologyObject) -> tuple[str, str, str]:
    """An object's identity: a NATS object is the stream it becomes, whatever table declares
    it (a bucket exported as a stream is the same object)."""
    return ("nats" if obj.kind in NATS_KINDS else obj.kind, obj.cluster, obj.name)


def _effective(obj: TopologyObject, state: Topology) -> Any:
    """The stream a NATS object declares with the server's defaults filled in (what the
    engine stores), without the server's own metadata; its declared config when invalid."""
    from .config.validate import check_stream_config

    def lookup(name: str) -> Any:
        other = state.streams.get((obj.cluster, name))
        return other.config if other is not None else None

    cfg = obj.config
    assert cfg is not None, "called for objects that decoded (_effective_table)"
    try:
        return _user_config(check_stream_config(cfg, lookup))
    except JetlinkError:
        return _user_config(cfg)


def _declared(obj: TopologyObject) -> Any:
    """:func:`_effective` of an object validated in the plan's state (its ``effective``)."""
    return None if obj.config is None else _user_config(obj.effective or obj.config)


def _table(cfg: Any) -> dict[str, Any]:
    from .topology import stream_table

    return {} if cfg is None else stream_table(cfg)


def _effective_table(obj: TopologyObject, state: Topology) -> dict[str, Any]:
    """:func:`_effective` as a table, to compare a declaration with the data directory."""
    return _table(None if obj.config is None else _effective(obj, state))


def _diff(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key in sorted(set(old) | set(new)):
        if key == "cluster":
            continue
        if old.get(key) != new.get(key):
            out.append({"field": key, "from": old.get(key), "to": new.get(key)})
    return out


def _refusal(change: Change, dd_problem: str, fld: str | None) -> Problem:
    obj = change.obj or change.current
    return Problem(obj.file if obj else "", f"{change.kind} {change.name}", fld, 0,
                   f"{change.label}: {dd_problem}")


def _check_update(change: Change, current_streams: dict[tuple[str, str], Any],
                  problems: list[Problem], *, single_server: bool = True) -> None:
    """The engine's (the server's) editable rules, checked before anything is applied."""
    from .config.validate import check_stream_update

    obj, cur = change.obj, change.current
    assert obj is not None and cur is not None
    if change.kind in NATS_KINDS:
        if obj.config is None:
            return
        existing = {n: c for (cl, n), c in current_streams.items() if cl == change.cluster}
        try:
            check_stream_update(current_streams[(change.cluster, cur.name)], change.config,
                                existing, single_server=single_server)
        except JetlinkError as err:
            p = Problem(obj.file, obj.label, getattr(err, "field", None),
                        getattr(err, "err_code", 0),
                        f"{change.label} can not be updated: {err.description}")
            problems.append(p)
    elif change.kind == "topic":
        if obj.spec.partitions < cur.spec.partitions:
            problems.append(_refusal(change, f"the partition count can only grow "
                                             f"({cur.spec.partitions} -> {obj.spec.partitions})",
                                     "partitions"))
    elif change.kind == "link":
        if obj.spec.source_cluster != cur.spec.source_cluster:
            problems.append(_refusal(change, "a link's source cluster can not change (delete "
                                             "and re-create the link)", "source_cluster"))
        elif (obj.spec.configs.get("cluster.link.prefix", "")
              != cur.spec.configs.get("cluster.link.prefix", "")):
            problems.append(_refusal(change, "cluster.link.prefix can not change",
                                     "configs.cluster.link.prefix"))
    elif change.kind == "mirror_topic":
        problems.append(_refusal(change, "a mirror topic's link, source topic and configs can "
                                         "not change (delete and re-create it, or promote it)",
                                 None))


def make_plan(dd: DataDir, clock: Clock, desired: Topology, *, prune: bool = False) -> Plan:
    """The plan that brings ``dd`` to ``desired`` (module doc). ``desired`` is a loaded file
    (its own problems are kept as they are)."""
    return plan_topology(EmbeddedBackend(dd, clock), desired, prune=prune)


def plan_topology(backend: Any, desired: Topology, *, prune: bool = False) -> Plan:
    """The plan that brings what ``backend`` holds (:class:`EmbeddedBackend`: a data
    directory; :class:`LiveBackend`: the live servers the file's clusters are bound to) to
    ``desired``, a loaded file (its own problems are kept as they are). One planner for
    both: the backend reads its state once and names its own limits."""
    current = Topology()
    current_streams: dict[tuple[str, str], Any] = {}  # what an update is checked against
    current.add_document(backend.read(stored=current_streams, minimal=False), backend.label)
    declared = set(desired.clusters)
    problems = list(desired.problems)
    # The state to validate: what the backend holds, replaced by the file's objects.
    state = Topology()
    for name, c in current.clusters.items():
        if not (prune and name in declared):
            state.clusters.setdefault(name, c)
    for name, c in desired.clusters.items():
        state.clusters[name] = c
    file_ids = {_ident(o) for o in desired.objects}
    current_ids = {_ident(o) for o in current.objects}
    keep = [o for o in current.objects
            if _ident(o) not in file_ids and not (prune and o.cluster in declared)]
    for obj in keep:
        obj.creating = False
        state.adopt(obj)
    # The file's objects as validated in that state: their effective configs, mirror topics'
    # source topics resolved through links that may live only in the data directory. One
    # that exists already is an update (checked as one below), not a create.
    for obj in desired.objects:
        obj.creating = _ident(obj) not in current_ids
    declared_objects = [state.adopt(obj) for obj in desired.objects]
    backend.complete(state)
    # What the backend held before the file was read is not the file's doing: a problem of
    # the backend's own objects that is there without the file (e.g. a stream of the data
    # directory whose origin is gone) never makes an unrelated file fail.
    already = {_key(p) for p in validate_topology(_alone(current, keep))}
    found = validate_topology(state)
    problems += [p for p in backend.relevant(found)
                 if not (p.file == backend.label and _key(p) in already)]
    warnings = [w for w in state.warnings if w.file != backend.label]
    # Compare.
    changes: list[Change] = []
    cur_by_id = {_ident(o): o for o in current.objects}
    for name, c in desired.clusters.items():
        if name in current.clusters:
            old = current.clusters[name]
            if old.kind != c.kind:
                problems.append(Problem(c.file, f"cluster {name}", "kind", 0,
                                        f"cluster {name} exists with kind {old.kind}: a "
                                        "cluster's kind can not change"))
            changes.append(Change("unchanged", "cluster", name, name))
        else:
            changes.append(Change("create", "cluster", name, name, cluster_kind=c.kind))
    for obj in declared_objects:
        cur = cur_by_id.get(_ident(obj))
        if cur is None:
            changes.append(Change("create", obj.kind, obj.cluster, obj.name, obj=obj))
            continue
        if obj.kind in NATS_KINDS:
            diff = _diff(_effective_table(cur, state), _table(_declared(obj)))
            if diff and cur.kind == obj.kind != "stream":  # shown in the KV table's terms
                diff = _diff(object_table(cur), object_table(obj)) or diff
        elif obj.kind == "mirror_topic":  # its configs are creation settings, not read back
            diff = _diff({k: v for k, v in object_table(cur).items() if k != "configs"},
                         {k: v for k, v in object_table(obj).items() if k != "configs"})
        else:
            diff = _diff(object_table(cur), object_table(obj))
        change = Change("update" if diff else "unchanged", obj.kind, obj.cluster, obj.name,
                        diff, obj=obj, current=cur)
        if diff and obj.kind in NATS_KINDS and obj.config is not None:
            change.config = _declared(obj)
        if diff:
            _check_update(change, current_streams, problems,
                          single_server=backend.single_server)
        changes.append(change)
    problems += backend.limits(changes)
    if prune:
        for obj in current.objects:
            if obj.cluster in declared and _ident(obj) not in file_ids:
                changes.append(Change("delete", obj.kind, obj.cluster, obj.name, current=obj))
    return Plan(_ordered(changes, state), _unique(problems), prune, _unique(warnings))


def _key(p: Problem) -> tuple[Any, ...]:
    return (p.file, p.object, p.field, p.err_code, p.description)


def _alone(current: Topology, keep: list[TopologyObject]) -> Topology:
    """The backend's kept objects as a topology of their own (their problems without the
    file)."""
    alone = Topology()
    alone.clusters = dict(current.clusters)
    for obj in keep:
        alone.adopt(obj)
    return alone


def _engine_limits(changes: list[Change]) -> list[Problem]:
    """What the embedded engine refuses that a clustered server accepts, for the objects to
    create (an update meets the same rule in :func:`_check_update`): replicas > 1 (10074),
    checked before anything is applied."""
    from .config.validate import check_single_server

    out = []
    for c in changes:
        obj = c.obj
        if c.action != "create" or obj is None or obj.config is None:
            continue
        try:
            check_single_server(obj.config)
        except ApiError as err:
            fld = "num_replicas" if obj.kind == "stream" else "replicas"
            out.append(Problem(obj.file, obj.label, fld, err.err_code,
                               f"{c.label}: {err.description} (the embedded engine is a "
                               "single server)"))
    return out


def unique_problems(problems: Iterable[Problem]) -> list[Problem]:
    """``problems`` without repeats, in order."""
    return _unique(problems)


def _unique(problems: Iterable[Problem]) -> list[Problem]:
    seen, out = set(), []
    for p in problems:
        key = (p.file, p.object, p.field, p.err_code, p.description)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def _ordered(changes: list[Change], state: Topology) -> list[Change]:
    """Creations and updates by kind, streams origins first; deletions after them, in the
    reverse order (mirrors before their origins, mirror topics before links before topics)."""
    rank: dict[tuple[str, str], int] = {}

    def depth(cluster: str, name: str, seen: frozenset = frozenset()) -> int:
        key = (cluster, name)
        if key in rank:
            return rank[key]
        obj = state.streams.get(key)
        d = 0
        if obj is not None and key not in seen:
            for o in obj.origins:
                if o.cluster is not None and (o.cluster, o.name) in state.streams:
                    d = max(d, 1 + depth(o.cluster, o.name, seen | {key}))
        rank[key] = d
        return d

    def sort_key(c: Change) -> tuple:
        obj = c.obj or c.current
        d = depth(c.cluster, obj.name) if c.kind in NATS_KINDS and obj else 0
        if c.action == "delete":
            return (1, -ORDER[c.kind], -d, c.cluster, c.name)
        return (0, ORDER[c.kind], d, c.cluster, c.name)

    return sorted(changes, key=sort_key)


# =========================================================================== apply


@dataclass
class ApplyReport:
    applied: list[Change] = field(default_factory=list)
    failed: Change | None = None
    error: JetlinkError | None = None
    not_applied: list[Change] = field(default_factory=list)
    # the failure lost the connection: the server may or may not have made the change
    uncertain: bool = False

    @property
    def ok(self) -> bool:
        return self.failed is None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"applied": [c.to_json() for c in self.applied]}
        if self.failed is not None:
            out["failed"] = {**self.failed.to_json(),
                             "error": self.error.to_dict() if self.error else None}
            if self.uncertain:
                out["failed"]["uncertain"] = True
        out["not_applied"] = [c.to_json() for c in self.not_applied]
        return out


def _config_delta(old: dict[str, Any], new: dict[str, Any]
                  ) -> tuple[dict[str, Any], list[str]]:
    """The configs to set and the ones to delete (back to their defaults) from old to new."""
    return {k: v for k, v in new.items() if old.get(k) != v}, [k for k in old if k not in new]


def _apply_nats(js: Any, kv: Any, c: Change) -> None:
    """A NATS object's change: a stream through the JetStream API; a KV object created
    through core/kv.py KV (the bucket, mirror or aggregate it declares), updated with its
    complete stream config, deleted as its stream."""
    if c.action == "create":
        spec = c.desired.spec
        if c.kind == "kv":
            kv.create_bucket(spec)
        elif c.kind == "kv_mirror":
            kv.create_mirror(spec)
        elif c.kind == "kv_aggregate":
            kv.create_aggregate(spec)
        else:
            js.add_stream(c.desired.config)
    elif c.action == "update":
        js.update_stream(c.config)
    else:
        js.delete_stream(c.existing.name)


def _apply_one(dd: DataDir, clock: Clock, c: Change) -> None:
    from .jetstream import JetStream
    from .kafka.links import Links
    from .kafka.mirrors import Mirrors
    from .kafka.topics import Kafka
    from .kv import KV

    if c.kind == "cluster":
        dd.add_cluster(c.name, kind=c.cluster_kind, now_ns=clock.now_ns())
        if c.cluster_kind == "kafka":  # its tables belong to adding it (core/kafka/schema.py)
            from .kafka.schema import create_schema

            create_schema(dd.open(c.name, create_local=False))
        return
    # The default cluster (``local``) is made by the first write to it, as every command
    # does: a file without a [clusters] table applies to a fresh data directory.
    cl = dd.open(c.cluster)
    if c.kind in NATS_KINDS:
        _apply_nats(JetStream(cl, clock), KV(dd, c.cluster, clock), c)
    elif c.kind == "topic":
        kafka = Kafka(cl, clock)
        if c.action == "create":
            kafka.create_topic(c.name, c.desired.spec.partitions, c.desired.spec.configs)
        elif c.action == "update":
            configs, delete = _config_delta(c.existing.spec.configs, c.desired.spec.configs)
            kafka.alter_topic(
                c.name, configs=configs, delete=delete,
                partitions=c.desired.spec.partitions
                if c.desired.spec.partitions != c.existing.spec.partitions else None)
        else:
            kafka.delete_topic(c.name)
    elif c.kind == "link":
        links = Links.open(dd, cl, clock)
        if c.action == "create":
            links.create(c.name, c.desired.spec.source_cluster, c.desired.spec.configs)
        elif c.action == "update":
            configs, delete = _config_delta(c.existing.spec.configs, c.desired.spec.configs)
            links.alter(c.name, configs, delete=delete)
        else:
            links.delete(c.name, force=True)
    elif c.kind == "mirror_topic":
        if c.action == "create":
            Mirrors(dd, c.cluster, clock).create(
                c.name, c.desired.spec.link, source_topic=c.desired.spec.source_topic,
                configs=c.desired.spec.configs or None)
        else:
            Kafka(cl, clock).delete_topic(c.name)


def apply_plan(dd: DataDir, clock: Clock, plan: Plan) -> ApplyReport:
    """Make the plan's changes in order (module doc). Refuses a plan with problems."""
    return apply_changes(EmbeddedBackend(dd, clock), plan)


def apply_changes(backend: Any, plan: Plan,
                  on_change: Callable[[Change, JetlinkError | None], None] | None = None
                  ) -> ApplyReport:
    """Make the plan's changes in order through ``backend`` (one call each); the first
    failure stops the run (module doc). ``on_change(change, error)`` is told of each change
    as it is made or fails. Refuses a plan with problems."""
    if plan.problems:
        raise JetlinkError("the plan has problems: nothing applied")
    report = ApplyReport()
    pending = plan.pending
    for i, c in enumerate(pending):
        try:
            backend.apply(c)
        except JetlinkError as err:
            report.failed, report.error = c, err
            report.not_applied = pending[i + 1:]
            report.uncertain = backend.uncertain(err)
            if on_change is not None:
                on_change(c, err)
            return report
        report.applied.append(c)
        if on_change is not None:
            on_change(c, None)
    return report


# =========================================================================== backends


class EmbeddedBackend:
    """The embedded engine's data directory, as the planner reads and changes it."""

    label = "<data directory>"
    single_server = True  # replicas > 1 refused (10074)

    def __init__(self, dd: DataDir, clock: Clock) -> None:
        self.dd = dd
        self.clock = clock

    def read(self, clusters: Sequence[str] | None = None, *,
             stored: dict[tuple[str, str], Any] | None = None, minimal: bool = True
             ) -> dict[str, Any]:
        return _export(self.dd, self.clock, clusters, stored, minimal=minimal)

    def complete(self, state: Topology) -> None:
        """Nothing outside the data directory to look up."""

    def relevant(self, problems: list[Problem]) -> list[Problem]:
        return problems

    def limits(self, changes: list[Change]) -> list[Problem]:
        return _engine_limits(changes)

    def apply(self, change: Change) -> None:
        _apply_one(self.dd, self.clock, change)

    def uncertain(self, err: JetlinkError) -> bool:
        return False  # one transaction: made or not

    def close(self) -> None:
        """The data directory is the caller's."""


# =========================================================================== live servers

_DOMAIN_API = re.compile(r"^\$JS\.([A-Za-z0-9_-]+)\.API$")
# ServerTarget field -> the [clusters.<name>] key (core/topology/ BINDING_KEYS)
_TARGET_KEYS = {"servers": "server", "js_domain": "js_domain", "user": "user",
                "password": "password", "token": "token", "creds": "creds", "nkey": "nkey",
                "tls_cert": "tls_cert", "tls_key": "tls_key", "tls_ca": "tls_ca",
                "tls_first": "tls_first", "timeout": "timeout"}


@dataclass
class Binding:
    """A cluster of a topology bound to a live server: the connection settings resolved
    (core/live/target.py ServerTarget) and the ``[clusters.<name>]`` table that says so
    (what export writes)."""

    cluster: str
    target: Any  # ServerTarget
    table: dict[str, Any]
    file: str = ""

    @property
    def domain(self) -> str | None:
        """The JetStream domain of the cluster (None: the server's own JetStream, named by
        no domain)."""
        if self.target.js_api_prefix:
            m = _DOMAIN_API.match(self.target.js_api_prefix.rstrip("."))
            return m.group(1) if m else None
        return self.target.js_domain or None

    @property
    def connection_key(self) -> Any:
        """Bindings with the same key share one connection (they differ in domain only)."""
        return dataclasses.replace(self.target, js_domain=None, js_api_prefix=None, origin="")

    @property
    def where(self) -> str:
        d = self.domain
        return self.target.url + (f", JetStream domain {d}" if d else "")


def _binding_env(environ: Any) -> dict[str, str]:
    """The environment a file's binding is resolved in: natscli's variables (NATS_URL,
    NATS_CONTEXT, NATS_USER...) left out, so the file alone says where each cluster is."""
    import os

    env = os.environ if environ is None else environ
    return {k: v for k, v in env.items() if not k.startswith("NATS_")}


def resolve_binding(cluster: Any, environ: Any = None) -> Any:
    """The ServerTarget of a bound cluster (core/topology/ Cluster): ``context = NAME``
    is the jetlink context NAME (core/contexts.py), else the natscli context NAME
    (core/live/settings.py); the table's other keys override the context's settings, as
    the command line options override a context's. JetlinkError (one sentence naming the
    cluster) when the context does not exist or gives no server."""
    from .contexts import NAME_RE, ContextStore, config_dir
    from .errors import NotFoundError
    from .live.settings import nats_context_dir, resolve_target

    env = _binding_env(environ)
    b = cluster.binding
    where = f"[clusters.{cluster.name}]"
    options = {fld: b.get(key) for fld, key in _TARGET_KEYS.items()}
    jetlink_ctx = None
    nats_ctx = None
    name = b.get("context")
    if name:
        store = ContextStore(config_dir(env))
        found = False
        if NAME_RE.fullmatch(name):
            try:
                jetlink_ctx = store.load(name)
                found = True
            except NotFoundError:
                pass
            except JetlinkError as err:
                raise JetlinkError(f"{where} context = {name!r}: {err.description}",
                                   field="context") from None
        if not found:
            nats_ctx = name
            if not (nats_context_dir(env) / f"{name}.json").is_file():
                raise JetlinkError(
                    f"{where} context = {name!r}: no such context: neither a jetlink context "
                    f"({store.context_dir}) nor a natscli context ({nats_context_dir(env)})",
                    field="context")
    try:
        target = resolve_target(options, env, jetlink_ctx, nats_ctx)
    except JetlinkError as err:
        raise JetlinkError(f"{where}: {err.description}", field=err.field or "server") from None
    if target is None:
        raise JetlinkError(f"{where} context = {name!r} gives no server URL: add server = "
                           '"nats://host:port"', field="context")
    return dataclasses.replace(target, origin=f"{where} of {cluster.file}")


def target_table(target: Any, domain: str | None) -> dict[str, Any]:
    """The ``[clusters.<name>]`` keys binding a cluster to ``target`` (what export writes):
    ``context = NAME`` when the server came from a context, else ``server`` and the file
    settings (credentials, TLS files); passwords and tokens are never written."""
    source = (target.sources or {}).get("servers", "")
    m = re.match(r"^(?:jetlink|natscli) context (\S+)", source)
    out: dict[str, Any] = {}
    if m:
        out["context"] = m.group(1)
    else:
        out["server"] = target.url
        for fld in ("creds", "nkey", "tls_cert", "tls_key", "tls_ca"):
            if getattr(target, fld):
                out[fld] = getattr(target, fld)
        if target.tls_first:
            out["tls_first"] = True
    if domain:
        out["js_domain"] = domain
    return out


def _in_domain(target: Any, domain: str | None) -> Any:
    return dataclasses.replace(target, js_domain=domain or None, js_api_prefix=None)


def live_bindings(topo: Topology, default: Any = None, environ: Any = None
                  ) -> tuple[dict[str, Binding], list[Problem]]:
    """Where each cluster of ``topo`` lives on a live server, and the problems that keep
    it from being planned there (nothing is connected yet).

    A cluster with ``server`` / ``context`` is bound to that server. A cluster without:
    with a server in force (``default``), ``local`` (objects without ``cluster``) is that
    server's own JetStream (its --js-domain) and any other cluster NAME is the JetStream
    domain NAME through that server; without one, it is a problem (a file is applied to
    live servers or to the data directory, never to both). Kafka clusters and objects,
    two clusters on one JetStream, and a stream reaching into another cluster bound without
    a JetStream domain are problems."""
    from .topology import DEFAULT_CLUSTER, KAFKA_KINDS, kv_field

    problems: list[Problem] = []
    used: dict[str, str] = {}  # cluster -> the file naming it first
    for name, declared in topo.clusters.items():
        used.setdefault(name, declared.file)
    for obj in topo.objects:
        used.setdefault(obj.cluster, obj.file)
    bindings: dict[str, Binding] = {}
    broken = {p.object for p in topo.problems}
    for name, file in used.items():
        c = topo.clusters.get(name)
        label = f"cluster {name}"
        if label in broken:
            continue  # its table has problems of its own (a bad server URL...)
        if c is not None and c.kind == "kafka":
            problems.append(Problem(file, label, "kind", 0,
                                    f'cluster "{name}" is a kafka cluster: a file applied to '
                                    "live NATS servers declares NATS clusters only (apply "
                                    "Kafka clusters to the data directory, from a file of "
                                    "their own)"))
            continue
        if c is not None and c.bound:
            try:
                target = resolve_binding(c, environ)
            except JetlinkError as err:
                problems.append(Problem(file, label, err.field or "context", 0,
                                        err.description))
                continue
            table = {k: v for k, v in c.to_table().items() if k not in ("kind", "description")}
            bindings[name] = Binding(name, target, table, file)
        elif c is not None and c.binding:
            continue  # its server key is broken: reported with the file's problems
        elif default is not None:
            target = default if name == DEFAULT_CLUSTER else _in_domain(default, name)
            b = Binding(name, target, {}, file)
            b.table = target_table(target, b.domain)
            bindings[name] = b
        else:
            problems.append(Problem(file, label, "server", 0,
                                    f'cluster "{name}" is not bound to a server: in a file '
                                    "that binds clusters to live servers every cluster needs "
                                    'server = "nats://host:port" or context = "NAME" (or a '
                                    "server in force: --server, NATS_URL, a context)"))
    for obj in topo.objects:
        if obj.kind in KAFKA_KINDS:
            c = topo.clusters.get(obj.cluster)
            if c is None or not (c.bound or c.kind == "kafka"):
                problems.append(Problem(obj.file, obj.label, "cluster", 0,
                                        f"{obj.label}: Kafka objects can not be applied to a "
                                        "live NATS server (they live in kafka clusters of the "
                                        "data directory)"))
    seen: dict[Any, str] = {}
    for name, b in bindings.items():
        key = (b.connection_key, b.target.api_prefix)
        if key in seen:
            problems.append(Problem(b.file, f"cluster {name}", "js_domain", 0,
                                    f'cluster "{name}" is bound to the same JetStream as '
                                    f'cluster "{seen[key]}" ({b.where}): each cluster of a '
                                    "file is a JetStream of its own; give each its own "
                                    "js_domain"))
        else:
            seen[key] = name
    for obj in topo.objects:
        for origin in obj.origins:
            if origin.cluster is None or origin.cluster == obj.cluster:
                continue
            bound = bindings.get(origin.cluster)
            if bound is None or bound.domain is not None:
                continue
            fld = (f"{origin.field}.domain" if obj.kind == "stream"
                   else kv_field(obj.kind, f"{origin.field}.external"))
            problems.append(Problem(obj.file, obj.label, fld, 0,
                                    f'origin "{origin.name}" in cluster "{origin.cluster}": '
                                    f"that cluster is bound to {bound.target.url} without a "
                                    f'JetStream domain, so a stream of cluster "{obj.cluster}" '
                                    "can not reach it (set js_domain in "
                                    f"[clusters.{origin.cluster}])"))
    return bindings, problems


def bound_clusters(topo: Topology, only: Sequence[str] | None = None
                   ) -> tuple[dict[str, Binding], list[Problem]]:
    """The clusters ``topo`` binds to servers (those named in ``only`` when given), for
    ``jetlink export --from FILE``: (bindings, problems of the file's clusters and of the
    bindings). The file's objects play no part."""
    from .topology import validate_topology

    problems = [p for p in validate_topology(topo)
                if p.object is None or p.object.startswith("cluster ")]
    if problems:
        return {}, problems
    wanted = Topology()
    for name, c in topo.clusters.items():
        if c.bound and (not only or name in only):
            wanted.clusters[name] = c
    return live_bindings(wanted)


def _map_domains(cfg: Any, mapping: dict[str, str | None]) -> Any:
    """``cfg`` with each origin's ``external.api = "$JS.<d>.API"`` (without ``deliver``)
    renamed per ``mapping``: d -> d2 (``$JS.d2.API``), d -> None (no external: the stream's
    own JetStream). ``cfg`` itself when nothing changes."""
    def domain(src: Any) -> str | None:
        ext = src.external
        if ext is None or ext.deliver:
            return None
        m = _DOMAIN_API.match(ext.api or "")
        return m.group(1) if m else None

    if not any(domain(s) in mapping for s in ([cfg.mirror] if cfg.mirror else []) + cfg.sources):
        return cfg
    out = cfg.copy()
    for src in ([out.mirror] if out.mirror else []) + out.sources:
        d = domain(src)
        if d is None or d not in mapping:
            continue
        new = mapping[d]
        if new is None:
            src.external = None
        else:
            src.external.api = f"$JS.{new}.API"
    return out


class _FileSpace:
    """A bound cluster's LiveJetStream as the planner sees it: origins in other clusters
    are named by the file's cluster names (``$JS.<cluster>.API``), translated to and from
    the servers' JetStream domains at this seam (the same text when a cluster is named
    after its domain). Everything else passes through."""

    def __init__(self, backend: LiveBackend, js: Any, cluster: str) -> None:
        self._b, self._js, self._cluster = backend, js, cluster

    def __getattr__(self, name: str) -> Any:
        return getattr(self._js, name)

    def add_stream(self, cfg: Any) -> Any:
        return self._js.add_stream(self._b.to_server(_as_config(cfg), self._cluster))

    def update_stream(self, cfg: Any) -> Any:
        return self._js.update_stream(self._b.to_server(_as_config(cfg), self._cluster))

    def stream_info(self, name: str, **kw: Any) -> Any:
        info = self._js.stream_info(name, **kw)
        info.config = self._b.to_file(info.config, self._cluster)
        return info

    def streams(self, subject: str | None = None) -> list[Any]:
        out = self._js.streams(subject)
        for info in out:
            info.config = self._b.to_file(info.config, self._cluster)
        return out


def _as_config(cfg: Any) -> Any:
    from .config.stream import StreamConfig

    return cfg if isinstance(cfg, StreamConfig) else StreamConfig.from_json(dict(cfg))


class _LiveClusters:
    """core/kv.py's clusters (``Clusters``) over the bound clusters, from ``here``: a
    cluster of the file is its binding; another name, that JetStream domain through
    ``here``'s connection."""

    def __init__(self, backend: LiveBackend, here: str) -> None:
        self._b, self._here = backend, here

    def js(self, name: str, *, here: bool) -> Any:
        if here or not name or name == self._here:
            return self._b.js(self._here)
        if name in self._b.bindings:
            return self._b.js(name)
        return _FileSpace(self._b, self._b.raw(self._here).in_domain(name), self._here)

    def has_cluster(self, name: str) -> bool:
        return True  # a domain that does not answer is the API's own error

    def is_down(self, name: str) -> bool:
        return False


class LiveBackend:
    """The live servers a topology's clusters are bound to, as the planner reads and
    changes them: one connection per server (clusters that differ only in JetStream domain
    share it), one LiveJetStream per cluster; the streams of every cluster read once
    (STREAM.LIST, paged) per plan; each change one API request."""

    single_server = False  # the server answers for its own replicas limit

    def __init__(self, bindings: dict[str, Binding]) -> None:
        self.bindings = bindings
        self._conns: dict[Any, Any] = {}
        self._js: dict[str, Any] = {}
        self._fs: dict[str, _FileSpace] = {}
        self._to_server_map: dict[str, str | None] = {n: b.domain for n, b in bindings.items()}
        urls = sorted({b.target.url for b in bindings.values()})
        self.label = f"<{', '.join(urls) or 'live servers'}>"

    @classmethod
    def connect(cls, bindings: dict[str, Binding]) -> LiveBackend:
        """Connect to every bound server (LiveError, naming the cluster, when one does not
        answer; the connections made are closed again)."""
        from .live.client import LiveError, connect
        from .live.jetstream import LiveJetStream

        backend = cls(bindings)
        try:
            for name, b in bindings.items():
                key = b.connection_key
                conn = backend._conns.get(key)
                if conn is None:
                    try:
                        conn = backend._conns[key] = connect(b.target)
                    except LiveError as err:
                        raise LiveError(f"cluster {name}: {err.description}",
                                        field=err.field) from None
                backend._js[name] = LiveJetStream(conn, api_prefix=b.target.api_prefix)
        except BaseException:
            backend.close()
            raise
        return backend

    @classmethod
    def for_target(cls, target: Any, domains: Sequence[str] = ()) -> LiveBackend:
        """The server in force as clusters: each of ``domains`` as the cluster of that
        name; without, the target's own JetStream as one cluster, named after its domain
        (``--js-domain``, else the one the server reports) or ``local``."""
        from .live.client import connect
        from .live.jetstream import LiveJetStream
        from .topology import DEFAULT_CLUSTER

        conn = connect(target)
        try:
            if domains:
                names: list[str | None] = list(dict.fromkeys(domains))
            else:
                own = Binding("", target, {}).domain
                if own is None and not target.js_api_prefix:
                    own = LiveJetStream(conn).api("INFO").get("domain") or None
                names = [own]
            bindings = {}
            for d in names:
                t = _in_domain(target, d) if (d or domains) else target
                b = Binding(d or DEFAULT_CLUSTER, t, target_table(t, d))
                bindings[b.cluster] = b
            backend = cls(bindings)
            backend._conns[next(iter(bindings.values())).connection_key] = conn
            for name, b in bindings.items():
                backend._js[name] = LiveJetStream(conn, api_prefix=b.target.api_prefix)
        except BaseException:
            conn.close()
            raise
        return backend

    def close(self) -> None:
        conns, self._conns = list(self._conns.values()), {}
        for conn in conns:
            conn.close()

    # -- the domains' names ------------------------------------------------------------------
    def to_server(self, cfg: Any, cluster: str) -> Any:
        """A config of the file (origins by cluster) as the server takes it (by domain)."""
        mapping = {name: (d if d is not None else (None if name == cluster else name))
                   for name, d in self._to_server_map.items()}
        return _map_domains(cfg, {k: v for k, v in mapping.items() if v != k})

    def to_file(self, cfg: Any, cluster: str) -> Any:
        """A config the server holds (origins by domain) with the file's cluster names:
        clusters on the same connection first."""
        mine = self.bindings[cluster].connection_key if cluster in self.bindings else None
        mapping: dict[str, str | None] = {}
        for same in (False, True):
            for name, b in self.bindings.items():
                if b.domain is not None and (b.connection_key == mine) == same:
                    mapping[b.domain] = name
        return _map_domains(cfg, {k: v for k, v in mapping.items() if v != k})

    def raw(self, cluster: str) -> Any:
        return self._js[cluster]

    def js(self, cluster: str) -> _FileSpace:
        fs = self._fs.get(cluster)
        if fs is None:
            fs = self._fs[cluster] = _FileSpace(self, self._js[cluster], cluster)
        return fs

    # -- the planner's calls -----------------------------------------------------------------
    def read(self, clusters: Sequence[str] | None = None, *,
             stored: dict[tuple[str, str], Any] | None = None, minimal: bool = True
             ) -> dict[str, Any]:
        """The bound clusters' streams and KV objects as a document (the bindings in the
        cluster tables), read with one paged STREAM.LIST per cluster."""
        out = _Document()
        for name, b in self.bindings.items():
            if clusters and name not in clusters:
                continue
            out.cluster(name, {"kind": "nats", **b.table})
            for info in self.js(name).streams():
                if stored is not None:
                    stored[(name, info.config.name)] = info.config
                out.stream(name, info.config, minimal=minimal)
        return out.finish()

    def complete(self, state: Topology) -> None:
        """Origins in JetStream domains no cluster of the file is bound to: looked up on
        the server of the stream that names them, and added to ``state`` when found (an
        origin neither in the file nor on the server stays missing)."""
        from .errors import JetlinkError as _Err
        from .topology import stream_table

        looked: set[tuple[str, str]] = set()
        for obj in list(state.objects):
            if obj.cluster not in self._js:
                continue
            for origin in obj.origins:
                oc = origin.cluster
                if oc is None or oc in self.bindings:
                    continue
                key = (oc, origin.name)
                if key in state.streams or key in looked:
                    continue
                looked.add(key)
                js = _FileSpace(self, self.raw(obj.cluster).in_domain(oc), obj.cluster)
                try:
                    info = js.stream_info(origin.name)
                except _Err:
                    continue  # not there, or the domain does not answer: missing
                cfg = _user_config(info.config)
                found = Topology()
                found.add_document({"version": 1, "streams": {
                    cfg.name: {"cluster": oc, **stream_table(cfg)}}},
                    f"<{self.raw(obj.cluster).where}, JetStream domain {oc}>")
                for o in found.objects:
                    o.explicit_cluster = False
                    state.adopt(o)

    def relevant(self, problems: list[Problem]) -> list[Problem]:
        """A server's own stream whose origin is missing is the server's state, not the
        file's doing: left out (every other problem stands)."""
        return [p for p in problems if not (p.file == self.label and p.err_code == 10059)]

    def limits(self, changes: list[Change]) -> list[Problem]:
        return []  # the server answers for itself (replicas on a single server: 10074)

    def apply(self, change: Change) -> None:
        from .kv import KV

        c = change
        if c.kind not in NATS_KINDS:  # never planned: live clusters hold NATS objects only
            raise JetlinkError(f"{c.label}: not a NATS object")
        _apply_nats(self.js(c.cluster), KV.over(_LiveClusters(self, c.cluster), c.cluster), c)

    def uncertain(self, err: JetlinkError) -> bool:
        """A connection failure (not the server's answer): the change may have been made."""
        from .live.client import LiveError

        return isinstance(err, LiveError)



def open_live(topo: Topology, default: Any = None, environ: Any = None
              ) -> tuple[LiveBackend | None, list[Problem]]:
    """The live backend of a topology (its bound clusters, or the server in force
    ``default``): (None, problems) when the bindings have problems (nothing connected),
    else (connected backend, []). LiveError when a server does not answer."""
    bindings, problems = live_bindings(topo, default, environ)
    if problems:
        return None, problems
    return LiveBackend.connect(bindings), []
