"""Validating a loaded topology: :func:`validate_topology` (each object's own rules with the
server's checks, then the whole-topology rules: missing origins as warnings, KV mirror
``allow_direct``, message sizes of mirrors and sources, subject overlaps through
:mod:`.subject_index`, mirror/source cycles, RePublish loops, the Kafka cross-object rules),
and :func:`validate_files` / :func:`check_files` over files.
"""

from __future__ import annotations

import dataclasses
import re
from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..config.validate import (
    missing_origin_text,
    source_closes_cycle,
    source_may_loop,
    stream_config_problems,
)
from ..errors import JetlinkError, did_you_mean
from ..limits import CLUSTER_NAME_RE
from .kafka_specs import _kafka_problem
from .load import load_files
from .model import (
    _ERR_INVALID,
    _ERR_MIRROR_SIZE,
    _ERR_NOT_FOUND,
    _ERR_OVERLAP,
    _ERR_SOURCE_SIZE,
    CLUSTER_RULE,
    KAFKA_KINDS,
    TEXT_CYCLE,
    TEXT_REPUBLISH_CYCLE,
    Problem,
    _field_for,
    _is_duplicate,
    _problem_for,
    follows_from,
    kv_field,
)
from .subject_index import SubjectIndex

if TYPE_CHECKING:  # pragma: no cover
    from ..config.stream import StreamConfig
    from .load import Topology
    from .model import MirrorTopicSpec, Origin, TopologyCluster, TopologyObject

__all__ = ["check_files", "republish_image", "validate_files", "validate_topology"]

def validate_files(paths: Iterable[str]) -> list[Problem]:
    """Every problem of the files, read together as one topology."""
    return validate_topology(load_files(paths))


def check_files(paths: Iterable[str]) -> tuple[list[Problem], list[Problem]]:
    """``(problems, warnings)`` of the files read together as one topology (``jetlink
    validate``)."""
    paths_list = list(paths)
    topo = load_files(paths_list)
    topo.files_only = True
    problems = validate_topology(topo)
    if not any(c.bound for c in topo.clusters.values()):
        return problems, list(topo.warnings)
    from .targets import file_bindings, same_jetstream, unreachable_origins

    # two clusters bound to one JetStream, an origin in a cluster bound without a JetStream
    # domain: seen from the files' bindings alone
    bindings = file_bindings(topo.clusters, {p.object for p in topo.problems if p.object})
    shared = same_jetstream(bindings) + unreachable_origins(topo, bindings)
    files: dict[str, int] = {}  # each file's problems together, in the files' order
    for f in [*(str(x) for x in paths_list), *(p.file for p in problems + shared)]:
        files.setdefault(f, len(files))
    return sorted(problems + shared, key=lambda p: files[p.file]), list(topo.warnings)


def validate_topology(topo: Topology) -> list[Problem]:
    """Run every check on a loaded topology; returns all problems, sorted by file and object."""
    found: dict[int, list[Problem]] = {}  # object index -> its problems (merged)

    def add(obj: TopologyObject, problem: Problem) -> None:
        if follows_from(problem.field, obj.set_aside):
            return  # (its field's own fault is the problem, said when it was set aside)
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

    topo.warnings = list(topo.load_warnings)
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
                hint = did_you_mean(obj.cluster, sorted(declared))
                held = {c.file for c in declared.values()}
                if len(held) == 1 and next(iter(held)).startswith("<"):
                    # no file declares a cluster: those listed are the target's (a plan
                    # over a data directory or servers, core/topology/plan.py)
                    add(obj, missing_cluster(obj, next(iter(held)), sorted(declared), hint,
                                             listed=True))
                else:
                    add(obj, Problem(
                        obj.file, obj.label, "cluster", 0,
                        f'cluster "{obj.cluster}" is not declared (declared clusters: '
                        f'{", ".join(sorted(declared))}' + (f"; {hint}" if hint else "") + ")",
                    ))
            elif not CLUSTER_NAME_RE.fullmatch(obj.cluster):
                add(obj, Problem(obj.file, obj.label, "cluster", 0,
                                 f'invalid cluster name "{obj.cluster}": {CLUSTER_RULE}'))
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


_KAFKA_WORDS = {"topic": "topic", "link": "cluster link", "mirror_topic": "mirror topic",
                "acl": "ACL"}


def missing_cluster(obj: TopologyObject, label: str, known: list[str], hint: str | None,
                    *, listed: bool) -> Problem:
    """The cluster ``obj`` names is not in the target ``label`` (a planner's label: ``<data
    directory>`` or the servers' URLs) and no file declares it: the two ways on
    (``listed``: the target's clusters ``known`` named beside the closest one)."""
    place = "the data directory" if label == "<data directory>" else label.strip("<>")
    said = ([f"its clusters: {', '.join(known)}"] if listed else []) + ([hint] if hint else [])
    return Problem(obj.file, obj.label, "cluster", 0,
                   f'cluster "{obj.cluster}" does not exist in {place}'
                   + (f" ({'; '.join(said)})" if said else "") + ": declare it under "
                   f"[clusters] (apply creates it) or create it first (jetlink cluster add "
                   f"{obj.cluster})")


def _binding_text(cluster: TopologyCluster) -> str:
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
        from ..kafka.errors import KafkaError
        from ..kafka.topics import check_topic_collision

        def problem(fld: str | None, exc: JetlinkError, _obj: TopologyObject = obj) -> None:
            add(_obj, _kafka_problem(_obj, exc, fld))

        if obj.kind in ("topic", "mirror_topic"):
            earlier = names.setdefault(obj.cluster, [])
            try:
                check_topic_collision(obj.name, earlier)
            except KafkaError as exc:
                problem("name", exc)
            earlier.append(obj.name)
        # one that broke its own rules is checked here by what passed (its ``partial``):
        # a bad prefix does not hide an undeclared source cluster
        spec = obj.spec if obj.spec is not None else obj.partial
        if spec is None:
            continue  # nothing of it to check against the others: reported on its own
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
    from ..kafka.errors import KafkaError
    from ..kafka.mirrors import mirror_source_topic, mirror_topic_exists

    def exists() -> None:  # a topic of its name in its cluster: whatever its link says
        if ("topic", obj.cluster, spec.name) in topo.kafka:
            problem("name", mirror_topic_exists(spec.name))

    link = topo.kafka.get(("link", obj.cluster, spec.link))
    if link is None:
        exists()
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
    given = obj.given_source_topic
    if link.spec is None:  # the link broke its own rules: its mode and prefix are not known
        exists()
        if link.partial is not None and given is not None:
            _check_source_topic(topo, spec, link.partial.source_cluster, problem, "source_topic")
        return
    cfg = link.spec.config
    if not cfg.is_destination:
        problem("link", KafkaError(
            "INVALID_REQUEST",
            f"Cluster link '{spec.link}' is not in DESTINATION mode: mirror topics are created "
            "on a link's destination cluster"))
    name_ok = True
    try:
        mirror_source_topic(spec.name, cfg.prefix, given)
    except KafkaError as exc:
        problem("name", exc)
        name_ok = False
    exists()
    if name_ok:
        _check_source_topic(topo, spec, link.spec.source_cluster, problem,
                            "source_topic" if given is not None else "name")


def _check_source_topic(topo: Topology, spec: MirrorTopicSpec, source_cluster: str, problem,
                        fld: str) -> None:
    """The mirror topic's source topic is declared (a topic or a mirror topic) in its link's
    source cluster; an undeclared source cluster is the link's problem."""
    from ..kafka.mirrors import unknown_source_topic

    if topo.clusters and source_cluster not in topo.clusters:
        return
    if not any((kind, source_cluster, spec.source_topic) in topo.kafka
               for kind in ("topic", "mirror_topic")):
        problem(fld, unknown_source_topic(spec.source_topic, source_cluster, spec.link))


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

        # a sealed stream the file creates is created unsealed, then sealed (apply.py
        # ``_apply_nats``: the server refuses a sealed create): checked as that create
        declared = (dataclasses.replace(obj.config, sealed=False)
                    if obj.creating and obj.config.sealed else obj.config)
        effective, errors = stream_config_problems(declared, lookup, create=obj.creating)
        if effective is not None and obj.config.sealed:  # as the server stores it sealed
            from ..config.validate import seal

            effective = seal(dataclasses.replace(effective, sealed=True))
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
        from ..config.kv import bucket_of_stream
    if obj.kind == "kv_mirror":
        bucket = bucket_of_stream(origin.name) or origin.name
        return f'origin bucket "{bucket}" (stream {origin.name})'
    if obj.kind == "kv_aggregate":
        from ..config.kvnames import aggregate_origin_described

        return aggregate_origin_described(origin.name)
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
                # a stream waits for its origin; a KV mirror is made from its origin's
                # settings (the engine's create_mirror refuses it): refused where the
                # target was read, a warning when only the files were
                kv_mirror = obj.kind == "kv_mirror" and origin.is_mirror
                problem = Problem(
                    obj.file, obj.label, _field_for(obj, f"{origin.field}.name"), err_code,
                    missing_origin_text(_describe_origin(obj, origin), origin.cluster,
                                        not topo.clusters or origin.cluster in topo.clusters,
                                        known=topo.clusters, files_only=topo.files_only,
                                        waits=not kv_mirror))
                if kv_mirror and not topo.files_only:
                    add(obj, problem)
                else:
                    topo.warnings.append(problem)
                continue
            if target.config is None:
                continue  # declared but broken: reported on its own
            if obj.kind == "kv_aggregate" and not origin.is_mirror:
                _aggregate_of_a_mirror(topo, obj, origin, target)
            if obj.kind == "kv_mirror" and origin.is_mirror:
                from ..config.kv import check_kv_mirror

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


def _aggregate_of_a_mirror(topo: Topology, obj: TopologyObject, origin: Origin,
                           target: TopologyObject) -> None:
    """A warning: an aggregate origin named by a KV mirror's bucket maps keys its stream does
    not store (a KV mirror of bucket X stores ``$KV.X.<key>``), so it copies nothing; the
    file should declare the stream and the bucket it mirrors."""
    from ..config.kv import bucket_of_stream

    mirror = target.config.mirror if target.config is not None else None
    mirrored = bucket_of_stream(mirror.name) if mirror is not None else None
    if mirrored is None:
        return
    for src in (obj.config.sources if obj.config is not None else None) or []:
        if src.name != origin.name:
            continue
        mapped = {t.src.split(".")[1] for t in src.subject_transforms or []
                  if t.src.startswith("$KV.") and t.src.count(".") >= 2}
        if mapped and mirrored not in mapped:
            named = sorted(mapped)[0]
            topo.warnings.append(Problem(
                obj.file, obj.label, _field_for(obj, f"{origin.field}.name"), 0,
                f'aggregate origin bucket "{named}" is a KV mirror of bucket {mirrored} '
                f"(its keys are stored as $KV.{mirrored}.<key>): $KV.{named}.> copies "
                f'nothing from it; declare it {{ stream = "{origin.name}", bucket = '
                f'"{mirrored}" }}'))


# ----------------------------------------------------------------------------- overlaps


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
    topo._subject_indexes = indexes  # reused by the republish loop check


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
    # the edges the server's walk does not follow: the stream without subjects on each
    loose: dict[tuple[int, int], str] = {}
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
            # A source whose filter cannot reach this stream's subjects closes no cycle
            # (the server's rule; a stream without subjects: jetlink's, source_may_loop).
            if not origin.is_mirror and not source_may_loop(origin.filter_subject,
                                                            cfg.subjects):
                continue
            edges.setdefault(obj.index, []).append(target.index)
            via.setdefault((obj.index, target.index), origin.field)
            if not origin.is_mirror and not source_closes_cycle(origin.filter_subject,
                                                                cfg.subjects):
                loose[(obj.index, target.index)] = obj.name
    by_index = {obj.index: obj for obj in topo.objects}
    _, err_code, _ = _ERR_INVALID
    for v, (path, size) in _cycles(nodes, edges).items():
        obj = by_index[v]
        fld = _field_for(obj, f"{via[(path[0], path[1])]}.name")
        what = "each stream sources or mirrors the next"
        names = [loose[e] for e in zip(path, path[1:], strict=False) if e in loose]
        if names:
            what += (f"; {names[0]} has no subjects of its own: it stores what its filtered "
                     "source sends it, so a message goes round for ever; the server's check "
                     "lets this through")
        note = _cycle_note(path, size, what)
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
    indexes = topo._subject_indexes
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
