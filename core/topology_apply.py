"""Topology as code over a data directory: export it, plan a file against it, apply the plan.

- :func:`export_document` reads clusters, streams (KV buckets, KV mirrors and aggregates
  written as such when their stream is exactly what the KV table makes, else as streams),
  topics, cluster links and mirror topics into a document of core/topology.py's format
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
becomes (JetStream.add_stream / update_stream / delete_stream, the calls every stream and KV
verb ends in), Kafka objects through Kafka.create_topic / alter_topic / delete_topic,
Links.create / alter / delete and Mirrors.create.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from .clock import Clock
from .errors import JetlinkError
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
            candidates.append(("kv_mirrors", cfg.name, _kv_mirror_spec(cfg)))
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
    external, domain = _domain(cfg.mirror)
    return KVMirrorConfig(
        name=cfg.name, origin_bucket=origin, description=cfg.description,
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
    return _export(dd, clock, clusters)


def _export(dd: DataDir, clock: Clock, clusters: Sequence[str] | None = None,
            stored: dict[tuple[str, str], Any] | None = None) -> dict[str, Any]:
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
    doc: dict[str, Any] = {"version": 1, "clusters": {}}
    tables: dict[str, dict[str, Any]] = {}
    names: dict[str, list[tuple[str, str]]] = {}  # table -> [(cluster, name)]

    def add(table: str, cluster: str, name: str, body: dict[str, Any]) -> None:
        body = dict(body)
        body["cluster"] = cluster
        tables.setdefault(table, {})[(cluster, name)] = body
        names.setdefault(table, []).append((cluster, name))

    for info in infos:
        if wanted is not None and info.name not in wanted:
            continue
        doc["clusters"][info.name] = {"kind": info.kind}
        cl = dd.open(info.name, create_local=False)
        for sinfo in JetStream(cl, clock).streams():
            if stored is not None:
                stored[(info.name, sinfo.config.name)] = sinfo.config
            cfg = _user_config(sinfo.config)
            kv = _kv_table(cfg)
            if kv is not None:
                add(kv[0], info.name, kv[1], kv[2])
            else:
                add("streams", info.name, cfg.name, minimal_stream_table(cfg))
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
                add("mirror_topics", info.name, t.name, {
                    "link": m.link_name, "source_topic": m.source_topic_name})
            else:
                add("topics", info.name, t.name, {
                    "partitions": len(t.partitions), "configs": dict(sorted(t.configs.items()))})
        for li in links:
            add("links", info.name, li.name, {"source_cluster": li.source_cluster,
                                              "configs": li.config.to_json()})
    for table, entries in tables.items():
        counts: dict[str, int] = {}
        for _cluster, name in names[table]:
            counts[name] = counts.get(name, 0) + 1
        out = {}
        for (cluster, name), body in sorted(entries.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            key = name if counts[name] == 1 else f"{name}@{cluster}"
            if key != name:
                body = {"name" if table not in ("kv", "kv_aggregates") else "bucket": name,
                        **body}
            out[key] = body
        doc[table] = out
    topo = Topology()
    topo.add_document(doc, "<export>")
    return topo.to_document()


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

    @property
    def pending(self) -> list[Change]:
        return [c for c in self.changes if c.action != "unchanged"]

    def to_json(self) -> dict[str, Any]:
        return {"prune": self.prune, "changes": [c.to_json() for c in self.pending],
                "unchanged": sum(1 for c in self.changes if c.action == "unchanged"),
                "problems": [p.to_dict() for p in self.problems]}


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

    try:
        return _user_config(check_stream_config(obj.config, lookup))
    except JetlinkError:
        return _user_config(obj.config)


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
                  problems: list[Problem]) -> None:
    """The engine's editable rules, checked before anything is applied."""
    from .config.validate import check_stream_update

    obj, cur = change.obj, change.current
    assert obj is not None and cur is not None
    if change.kind in NATS_KINDS:
        if obj.config is None:
            return
        existing = {n: c for (cl, n), c in current_streams.items() if cl == change.cluster}
        try:
            check_stream_update(current_streams[(change.cluster, cur.name)], change.config,
                                existing)
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
    current = Topology()
    current_streams: dict[tuple[str, str], Any] = {}  # what an update is checked against
    current.add_document(_export(dd, clock, stored=current_streams), "<data directory>")
    declared = set(desired.clusters)
    problems = list(desired.problems)
    # The state to validate: the data directory's objects, replaced by the file's.
    state = Topology()
    for name, c in current.clusters.items():
        if not (prune and name in declared):
            state.clusters.setdefault(name, c)
    for name, c in desired.clusters.items():
        state.clusters[name] = c
    file_ids = {_ident(o) for o in desired.objects}
    keep = [o for o in current.objects
            if _ident(o) not in file_ids and not (prune and o.cluster in declared)]
    for obj in keep:
        state.adopt(obj)
    # The file's objects as validated in that state: their effective configs, mirror topics'
    # source topics resolved through links that may live only in the data directory.
    declared_objects = [state.adopt(obj) for obj in desired.objects]
    problems += validate_topology(state)
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
            _check_update(change, current_streams, problems)
        changes.append(change)
    problems += _engine_limits(changes)
    if prune:
        for obj in current.objects:
            if obj.cluster in declared and _ident(obj) not in file_ids:
                changes.append(Change("delete", obj.kind, obj.cluster, obj.name, current=obj))
    return Plan(_ordered(changes, state), _unique(problems), prune)


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
        except JetlinkError as err:
            fld = "num_replicas" if obj.kind == "stream" else "replicas"
            out.append(Problem(obj.file, obj.label, fld, err.err_code,
                               f"{c.label}: {err.description} (the embedded engine is a "
                               "single server)"))
    return out


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
        d = depth(c.cluster, (c.obj or c.current).name) if c.kind in NATS_KINDS and (
            c.obj or c.current) else 0
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

    @property
    def ok(self) -> bool:
        return self.failed is None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"applied": [c.to_json() for c in self.applied]}
        if self.failed is not None:
            out["failed"] = {**self.failed.to_json(),
                             "error": self.error.to_dict() if self.error else None}
        out["not_applied"] = [c.to_json() for c in self.not_applied]
        return out


def _config_delta(old: dict[str, Any], new: dict[str, Any]
                  ) -> tuple[dict[str, Any], list[str]]:
    """The configs to set and the ones to delete (back to their defaults) from old to new."""
    return {k: v for k, v in new.items() if old.get(k) != v}, [k for k in old if k not in new]


def _apply_one(dd: DataDir, clock: Clock, c: Change) -> None:
    from .jetstream import JetStream
    from .kafka.links import Links
    from .kafka.mirrors import Mirrors
    from .kafka.topics import Kafka

    if c.kind == "cluster":
        dd.add_cluster(c.name, kind=c.cluster_kind, now_ns=clock.now_ns())
        return
    cl = dd.open(c.cluster, create_local=False)
    if c.kind in NATS_KINDS:
        js = JetStream(cl, clock)
        if c.action == "create":
            js.add_stream(c.obj.config)
        elif c.action == "update":
            js.update_stream(c.config)
        else:
            js.delete_stream(c.current.name)
    elif c.kind == "topic":
        kafka = Kafka(cl, clock)
        if c.action == "create":
            kafka.create_topic(c.name, c.obj.spec.partitions, c.obj.spec.configs)
        elif c.action == "update":
            configs, delete = _config_delta(c.current.spec.configs, c.obj.spec.configs)
            kafka.alter_topic(
                c.name, configs=configs, delete=delete,
                partitions=c.obj.spec.partitions
                if c.obj.spec.partitions != c.current.spec.partitions else None)
        else:
            kafka.delete_topic(c.name)
    elif c.kind == "link":
        links = Links.open(dd, cl, clock)
        if c.action == "create":
            links.create(c.name, c.obj.spec.source_cluster, c.obj.spec.configs)
        elif c.action == "update":
            configs, delete = _config_delta(c.current.spec.configs, c.obj.spec.configs)
            links.alter(c.name, configs, delete=delete)
        else:
            links.delete(c.name, force=True)
    elif c.kind == "mirror_topic":
        if c.action == "create":
            Mirrors(dd, c.cluster, clock).create(
                c.name, c.obj.spec.link, source_topic=c.obj.spec.source_topic,
                configs=c.obj.spec.configs or None)
        else:
            Kafka(cl, clock).delete_topic(c.name)


def apply_plan(dd: DataDir, clock: Clock, plan: Plan) -> ApplyReport:
    """Make the plan's changes in order (module doc). Refuses a plan with problems."""
    if plan.problems:
        raise JetlinkError("the plan has problems: nothing applied")
    report = ApplyReport()
    pending = plan.pending
    for i, c in enumerate(pending):
        try:
            _apply_one(dd, clock, c)
        except JetlinkError as err:
            report.failed, report.error = c, err
            report.not_applied = pending[i + 1:]
            return report
        report.applied.append(c)
    return report
