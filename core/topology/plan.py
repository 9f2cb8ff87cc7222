"""The planner of topology as code: what a file changes in the clusters it is planned against.

One planner (:func:`plan_topology`) over two kinds of clusters that read and change a
state: core/topology/embedded.py ``EmbeddedClusters`` (the clusters of a data directory) and
core/topology/live.py ``LiveClusters`` (the live servers a file's clusters are bound to,
core/topology/bindings.py). It validates the DESIRED state as a whole: what the clusters
hold, with the file's objects replacing or adding to it (with ``prune``: only the file's
objects, in the clusters the file declares). Every problem of that state, and every change
the engine would refuse (a non-editable stream field, a link's source, fewer partitions, a
mirror topic's link or source), is a :class:`~jetlink.core.topology.Problem`: the plan is
then not applied at all. Otherwise it lists one :class:`Change` per object (create / update
with the field differences / delete / unchanged), in dependency order: clusters, ACLs,
topics, streams (origins before their mirrors and sources), links, mirror topics; deletions
in the reverse order. core/topology/apply.py makes the changes.

Objects are identified by (kind, cluster, name); a NATS object is the stream it becomes,
whatever table declares it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..dr.fencing import fenced_subjects, with_fence, with_promotion
from ..errors import JetlinkError
from .checks import missing_cluster, validate_topology
from .export import kv_table_defaults, object_table, stream_table, stream_table_defaults
from .load import Topology
from .model import AUTHORIZER_KEYS, Problem, TopologyObject
from .stored import _user_config

__all__ = ["NATS_KINDS", "Change", "Plan", "plan_topology", "unique_problems"]

NATS_KINDS = ("stream", "kv", "kv_mirror", "kv_aggregate")
# creation order of the kinds (streams are further ordered origins first). ACLs come with
# their cluster, before the links and mirror topics they authorize (a mirror topic's link
# needs READ and DESCRIBE_CONFIGS on its source topic where the source enforces ACLs), and
# are deleted after them.
ORDER = {"cluster": 0, "acl": 1, "topic": 2, "stream": 3, "kv": 3, "kv_mirror": 3,
         "kv_aggregate": 3, "link": 4, "mirror_topic": 5}


@dataclass
class Change:
    action: str  # create | update | delete | unchanged
    kind: str  # cluster, stream, kv, kv_mirror, kv_aggregate, topic, link, mirror_topic, acl
    cluster: str
    name: str
    diff: list[dict[str, Any]] = field(default_factory=list)  # {field, from, to}
    obj: TopologyObject | None = None  # the desired object (create / update)
    current: TopologyObject | None = None  # the object in the data directory
    cluster_kind: str = "nats"  # a cluster change: its kind
    # a kafka cluster change: authorizer, super_users, allow_everyone_if_no_acl_found as
    # the file gives them (None: not said, left as it is; model.py AUTHORIZER_KEYS)
    authorizer_settings: tuple[Any, ...] = (None, None, None)
    description: str | None = None  # a cluster change: its description (None: as it is)
    config: Any = None  # a stream update: the complete config sent (declared + defaults)
    # a stream or bucket update: what it removes of what is stored (core/removal.py), ""
    # for nothing; apply asks (or needs -f without a terminal) before such an update
    removes: str = ""

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
        if obj is not None and obj.kind == "kv_mirror" and obj.spec is not None:
            return str(obj.spec.name)  # (the mirror's name, not its KV_ stream's)
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
        if self.removes:
            out["removes"] = self.removes
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
    from ..config.validate import check_stream_config

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


def _with_defaults(diff: list[dict[str, Any]], defaults: dict[str, Any] | None = None
                   ) -> list[dict[str, Any]]:
    """A stream's (or with ``defaults``, a KV object's) differences with a field one side
    leaves out shown at its default (the stored ``file`` storage, a history of 1: not
    null)."""
    defaults = stream_table_defaults() if defaults is None else defaults
    for d in diff:
        for side in ("from", "to"):
            if d[side] is None:
                d[side] = defaults.get(d["field"])
    return diff


def _link_diff(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """A link's differences. A sensitive config (core/kafka/links.py ``SENSITIVE_CONFIGS``:
    ``sasl.jaas.config``, passwords, keys) the file leaves out is kept as it is, as export
    leaves them out, so it is no difference; one the file changes is one, shown as
    ``[hidden]`` before and ``[hidden, changed]`` after (a plan is printed and logged:
    never a secret)."""
    from ..kafka.links import SENSITIVE_CONFIGS

    have, want = dict(old.get("configs") or {}), new.get("configs") or {}
    for key in SENSITIVE_CONFIGS & have.keys() - want.keys():
        del have[key]
    before = {k: v for k, v in old.items() if k != "configs"}
    if have:
        before["configs"] = have
    diff = _diff(before, new)
    for d in diff:
        if d["field"] == "configs":
            d["from"], d["to"] = _hidden(d["from"], None), _hidden(d["to"], have)
    return diff


def _hidden(configs: dict[str, Any] | None, before: dict[str, Any] | None
            ) -> dict[str, Any] | None:
    """``configs`` with each sensitive value ``[hidden]`` (``[hidden, changed]`` when it
    differs from ``before``'s)."""
    from ..kafka.links import SENSITIVE_CONFIGS

    if not configs:
        return configs
    return {k: v if k not in SENSITIVE_CONFIGS else "[hidden, changed]"
            if before is not None and before.get(k) != v else "[hidden]"
            for k, v in configs.items()}


def _refusal(change: Change, dd_problem: str, fld: str | None) -> Problem:
    obj = change.obj or change.current
    return Problem(obj.file if obj else "", f"{change.kind} {change.name}", fld, 0,
                   f"{change.label}: {dd_problem}")


def _promoted_hint(stored: Any, declared: Any) -> str:
    """Why a file's mirror meets a stream that is none (10055) when a failover or promote
    made it one of its own, and the way back: "" otherwise."""
    from ..dr.fencing import promotion_doc

    if declared is None or declared.mirror is None or stored.mirror is not None:
        return ""
    record = promotion_doc(stored)
    if record is None:
        return ""
    try:
        origin = str(record["mirror"]["name"])
        api = str((record["mirror"].get("external") or {}).get("api") or "")
    except (KeyError, TypeError, AttributeError):
        return ""
    parts = api.split(".")
    region = parts[1] if len(parts) == 3 and parts[0] == "$JS" and parts[2] == "API" else ""
    when = f" at {record['at']}" if record.get("at") else ""
    back = f"jetlink dr failback --from {region}" if region else "jetlink stream failback " \
        + stored.name
    return (f" ({stored.name} was promoted by a {record.get('action') or 'failover'}{when}: "
            f"it mirrored {origin}{'@' + region if region else ''}; {back} makes it a "
            "mirror again)")


def _object_field(change: Change, stream_field: str | None, stored: Any = None
                  ) -> str | None:
    """The field of the declared object a refused stream field is (a KV mirror's ``mirror``
    is its ``keys``, ``domain`` or ``origin_bucket``: the one that changed; its origin when
    the stored stream mirrors nothing any more, promoted)."""
    from .model import kv_field

    if change.kind == "kv_mirror" and stream_field == "mirror" and stored is not None \
            and getattr(stored, "mirror", None) is None:
        return "origin_bucket"
    if change.kind == "kv_mirror" and stream_field == "mirror":
        new, old = getattr(change.obj, "spec", None), getattr(change.current, "spec", None)
        for key in ("keys", "domain", "origin_bucket"):
            if new is not None and old is not None and \
                    getattr(new, key, None) != getattr(old, key, None):
                return key
    return kv_field(change.kind, stream_field)


def _check_update(change: Change, current_streams: dict[tuple[str, str], Any],
                  problems: list[Problem], *, single_server: bool,
                  before: dict[tuple[str, str], Any], consumers: Any = None) -> None:
    """The engine's (the server's) editable rules, checked before anything is applied.
    ``before``: the streams as the plan's earlier changes leave them when this one is
    applied (:func:`_check_updates`: subjects a stream gave up earlier in the plan can be
    taken). ``consumers(cluster, stream)``: the stream's consumers' limits, asked when the
    update changes its consumer limits (the clusters' ``consumer_limits``)."""

    obj, cur = change.obj, change.current
    assert obj is not None and cur is not None
    if change.kind in NATS_KINDS:
        if obj.config is None:
            return
        # the stream the object is (a KV mirror MIR is the stream KV_MIR)
        stream = cur.config.name if cur.config is not None else cur.name
        stored = current_streams[(change.cluster, stream)]
        existing = {n: c for (cl, n), c in before.items() if cl == change.cluster}
        existing[stream] = stored
        limits = None if consumers is None else \
            (lambda: consumers(change.cluster, stream))  # noqa: E731 - asked only if needed
        for err in _update_problems(stored, change.config, existing, single_server, limits):
            p = Problem(obj.file, obj.label,
                        _object_field(change, getattr(err, "field", None), stored),
                        getattr(err, "err_code", 0),
                        f"{change.label} can not be updated: {err.description}"
                        + _promoted_hint(stored, change.config),
                        getattr(err, "detail", None))
            if not any((q.file, q.object, q.field, q.err_code) ==
                       (p.file, p.object, p.field, p.err_code) for q in problems):
                problems.append(p)  # (the file's own check named it already: once)
    elif change.kind == "topic":
        if obj.spec.partitions < cur.spec.partitions:  # (topic alter's refusal)
            from ..kafka.topic_types import not_an_increase

            err = not_an_increase(change.name, cur.spec.partitions, obj.spec.partitions)
            problems.append(_refusal(
                change, f"the partition count can only grow ({cur.spec.partitions} -> "
                        f"{obj.spec.partitions}): {err.description} ({err.name} "
                        f"{err.error_code})", "partitions"))
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


def _check_updates(ordered: list[Change], current_streams: dict[tuple[str, str], Any],
                   problems: list[Problem], *, single_server: bool,
                   consumers: Any = None) -> None:
    """Each update checked (:func:`_check_update`) against the streams as the changes
    before it in the plan's order leave them: subjects moved from one stream to another
    are taken once given up; a swap, which no order of two updates makes, is refused."""
    at = dict(current_streams)
    for c in ordered:
        if c.kind not in NATS_KINDS:
            # a topic, link or mirror topic: its own rules (fewer partitions, a link's
            # source, a mirror topic's link), which no earlier change of the plan moves
            if c.action == "update" and c.kind in ("topic", "link", "mirror_topic"):
                _check_update(c, current_streams, problems, single_server=single_server,
                              before=at)
            continue
        if c.action == "update":
            _check_update(c, current_streams, problems, single_server=single_server,
                          before=at, consumers=consumers)
            cur = c.current.config if c.current is not None else None
            if cur is not None and c.config is not None:
                at[(c.cluster, cur.name)] = c.config
        elif c.action == "delete" and c.current is not None and c.current.config is not None:
            at.pop((c.cluster, c.current.config.name), None)
        elif c.action == "create" and c.obj is not None and c.obj.config is not None:
            at[(c.cluster, c.obj.config.name)] = c.obj.config


def _update_problems(stored: Any, wanted: Any, existing: dict[str, Any],
                     single_server: bool, consumers: Any = None) -> list[JetlinkError]:
    """Every refusal of the update of ``stored`` to ``wanted``, not only the server's
    first: after each, the field it names is set aside (kept as stored: no change) and the
    update checked again, until it passes, a refusal names no field, or the same field is
    refused again (as validate's every problem of a create, config/validate.py)."""
    from ..config.stream import StreamConfig
    from ..config.validate import MAX_PROBLEMS, check_stream_update

    errors: list[JetlinkError] = []
    seen: set[str] = set()
    current = wanted
    while len(errors) < MAX_PROBLEMS:
        try:
            check_stream_update(stored, current, existing, single_server=single_server,
                                consumers=consumers)
            return errors
        except JetlinkError as err:
            errors.append(err)
            top = (getattr(err, "field", None) or "").split(".")[0].split("[")[0]
            if not top or top in seen:
                return errors
            seen.add(top)
            doc, was = current.to_json(), stored.to_json()
            if top in was:
                doc[top] = was[top]
            else:
                doc.pop(top, None)
            current = StreamConfig.from_json(doc, strict=False)
    return errors


def _implicit_clusters_missing(desired: Topology, known: set[str], label: str,
                               said: set[tuple[str, str | None]]) -> list[Problem]:
    """A topology without ``[clusters]`` (its clusters implicit) applied where none exists
    yet: each object in a cluster the target does not have, refused before anything is
    applied (apply creates declared clusters only; ``local`` is always there). ``said``:
    the (file, object) whose cluster has a problem already (no string, no cluster name):
    that one is the problem, never also a cluster to create."""
    from ..errors import did_you_mean
    from .model import DEFAULT_CLUSTER

    known = known | {DEFAULT_CLUSTER}
    return [missing_cluster(obj, label, sorted(known), did_you_mean(obj.cluster, sorted(known)),
                            listed=False)
            for obj in desired.objects
            if obj.cluster not in known and (obj.file, obj.label) not in said]


def plan_topology(clusters: Any, desired: Topology, *, prune: bool = False) -> Plan:
    """The plan that brings what ``clusters`` hold (core/topology/embedded.py
    ``EmbeddedClusters``: a data directory; core/topology/live.py ``LiveClusters``: the live
    servers the file's clusters are bound to) to ``desired``, a loaded file (its own problems
    are kept as they are). One planner for both: the clusters read their state once and name
    their own limits."""
    current = Topology()
    current_streams: dict[tuple[str, str], Any] = {}  # what an update is checked against
    current.add_document(clusters.read(stored=current_streams, minimal=False), clusters.label)
    declared = set(desired.clusters)
    problems = list(desired.problems)
    # The state to validate: what the clusters hold, replaced by the file's objects.
    state = Topology()
    for name, c in current.clusters.items():
        if not (prune and name in declared):
            state.clusters.setdefault(name, c)
    for name, c in desired.clusters.items():
        had = current.clusters.get(name)
        # a kind the file changes is refused below (a cluster's kind can not change): the
        # state keeps the kind the cluster has, so that what it holds is not also said to
        # be in a cluster of the wrong kind (the real cause said once, not after two lines
        # that are not true)
        state.clusters[name] = had if had is not None and had.kind != c.kind else c
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
    clusters.complete(state)
    # What the clusters held before the file was read is not the file's doing: a problem of
    # the clusters' own objects that is there without the file (e.g. a stream of the data
    # directory whose origin is gone) never makes an unrelated file fail.
    # (with what --prune deletes: an origin it deletes is missed by what stays, and that
    # problem is the file's doing)
    unfiled = [o for o in current.objects if _ident(o) not in file_ids]
    before = _alone(current, unfiled)
    already = {_key(p) for p in validate_topology(before)}
    warned = {_key(w) for w in before.warnings}
    # ... nor does a problem of an object the file declares as the clusters hold it, the
    # clusters holding the same problem already (a server accepted the origin's edit that
    # made it: a mirror's max_msg_size below its origin's raised one): the file changes
    # nothing there, so apply leaves it as it is, with a warning
    held = {_bare(p) for p in validate_topology(_alone(current, current.objects))}
    found = validate_topology(state)
    problems += [p for p in clusters.relevant(found)
                 if not (p.file == clusters.label and _key(p) in already)]
    # the same for warnings: one the clusters' objects had without the file is not shown,
    # one this plan makes there is (an aggregate whose origin --prune deletes)
    # (and what loading the file warned of: a file that declares nothing)
    warnings = [*desired.load_warnings, *(w for w in state.warnings
                                           if not (w.file == clusters.label
                                                   and _key(w) in warned))]
    if not state.clusters:
        problems += _implicit_clusters_missing(
            desired, set(current.clusters) | set(clusters.damaged), clusters.label,
            said={(p.file, p.object) for p in problems if p.field == "cluster"})
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
            diff: list[dict[str, Any]] = []
            if c.description and c.description != old.description:
                diff.append({"field": "description", "from": old.description,
                             "to": c.description})
            for key, was, want in zip(AUTHORIZER_KEYS, old.authorizer_settings,
                                      c.authorizer_settings, strict=True):
                was = (list(was or ()) if key == "super_users" else bool(was))
                if want is not None and (list(want) if key == "super_users" else want) != was:
                    diff.append({"field": key, "from": was,
                                 "to": list(want) if key == "super_users" else want})
            if diff:
                changes.append(Change("update", "cluster", name, name, diff,
                                      cluster_kind=c.kind,
                                      authorizer_settings=c.authorizer_settings,
                                      description=c.description or None))
            else:
                changes.append(Change("unchanged", "cluster", name, name))
        else:
            changes.append(Change("create", "cluster", name, name, cluster_kind=c.kind,
                                  authorizer_settings=c.authorizer_settings,
                                  description=c.description or None))
    for obj in declared_objects:
        cur = cur_by_id.get(_ident(obj))
        if cur is None:
            changes.append(Change("create", obj.kind, obj.cluster, obj.name, obj=obj))
            continue
        if obj.kind in NATS_KINDS:
            diff = _diff(_effective_table(cur, state), _table(_declared(obj)))
            if obj.config is not None and obj.effective is None:
                # a declaration its own checks refused has no defaults filled in: what it
                # leaves out is no change (it is shown once, as the file's problem)
                diff = [d for d in diff if d["to"] is not None]
            if diff and cur.kind == obj.kind != "stream":  # shown in the KV table's terms
                kv_diff = _diff(object_table(cur), object_table(obj))
                diff = _with_defaults(kv_diff, kv_table_defaults(obj.spec)) if kv_diff \
                    else diff
            elif obj.kind == "stream":
                diff = _with_defaults(diff)
        elif obj.kind == "mirror_topic":  # its configs are creation settings: never updated
            diff = _diff({k: v for k, v in object_table(cur).items() if k != "configs"},
                         {k: v for k, v in object_table(obj).items() if k != "configs"})
        elif obj.kind == "link":
            diff = _link_diff(object_table(cur), object_table(obj))
        else:
            diff = _diff(object_table(cur), object_table(obj))
        change = Change("update" if diff else "unchanged", obj.kind, obj.cluster, obj.name,
                        diff, obj=obj, current=cur)
        stored = current_streams.get((obj.cluster, cur.config.name if cur.config is not None
                                      else obj.name)) if obj.kind in NATS_KINDS else None
        fenced = stored is not None and fenced_subjects(stored) is not None
        if diff and obj.kind in NATS_KINDS and obj.config is not None:
            change.config = _declared(obj)
            if fenced:  # the update keeps the fence; the declared subjects are recorded
                change.config = with_fence(change.config)
            if stored is not None:  # and a promoted stream's marks (its record, failback's)
                change.config = with_promotion(change.config, stored)
        if fenced:
            warnings.append(Problem(
                obj.file, obj.label, "subjects", 0,
                f"{obj.label} in cluster {obj.cluster} is fenced by jetlink dr fence (it failed "
                "over): apply keeps the fence, its subjects stay off until jetlink dr "
                "failback --switch gives them back"))
        changes.append(change)
    if prune:
        for obj in current.objects:
            if obj.cluster in declared and _ident(obj) not in file_ids:
                changes.append(Change("delete", obj.kind, obj.cluster, obj.name, current=obj))
    ordered = _ordered(changes, state)  # (the order applied: each update checked in it)
    _check_updates(ordered, current_streams, problems, single_server=clusters.single_server,
                   consumers=clusters.consumer_limits)
    problems += clusters.limits(changes)  # (the deletions too: an ACL pruned is gone)
    same = {c.obj.label for c in changes if c.action == "unchanged" and c.obj is not None}
    kept = [p for p in problems if not ((p.object in same or p.file == clusters.label)
                                        and _bare(p) in held)]
    warnings += [dataclasses.replace(p, description=f"{p.description} (the target holds it "
                                     "so already; the file changes nothing there)")
                 for p in problems if p not in kept]
    if not kept:  # what an update removes of what is stored: read from the clusters
        for change in changes:
            if (change.action == "update" and change.kind in NATS_KINDS
                    and change.config is not None and change.current is not None
                    and change.current.config is not None):
                change.removes = clusters.removes(change)
    return Plan(ordered, _declared_order(desired, _unique(kept)), prune, _unique(warnings))


def _declared_order(desired: Topology, problems: list[Problem]) -> list[Problem]:
    """``problems`` in the order ``jetlink validate`` lists them (core/topology/checks.py
    ``validate_topology``): by file, then by object as the files declare them, a file's own
    problems first; the clusters' problems (not the file's) after, as found."""
    at: dict[tuple[str, str | None], tuple[int, int]] = {
        (o.file, o.label): desired.sort_key(o) for o in desired.objects}
    last = (len(desired.files) + 1, 0)

    def key(p: Problem) -> tuple[int, int]:
        return desired._sort.get(id(p)) or at.get((p.file, p.object)) or last

    return sorted(problems, key=key)


def _key(p: Problem) -> tuple[Any, ...]:
    return (p.file, p.object, p.field, p.err_code, p.description)


def _bare(p: Problem) -> tuple[Any, ...]:
    """:func:`_key` without the file: the same problem of the same object, wherever read."""
    return (p.object, p.field, p.err_code, p.description)


def _alone(current: Topology, keep: list[TopologyObject]) -> Topology:
    """The clusters' kept objects as a topology of their own (their problems without the
    file)."""
    alone = Topology()
    alone.clusters = dict(current.clusters)
    for obj in keep:
        alone.adopt(obj)
    return alone


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


def _deletion_depth(changes: list[Change]) -> Any:
    """``depth(cluster, name)`` of a deleted stream, as it is stored now: how many deleted
    streams it mirrors or sources through (a mirror of a mirror: 2), so it goes before its
    origins (the file's state holds neither any more)."""
    gone = {(c.cluster, c.name): c.current for c in changes
            if c.action == "delete" and c.kind in NATS_KINDS and c.current is not None}

    def depth(cluster: str, name: str, seen: frozenset = frozenset()) -> int:
        obj = gone.get((cluster, name))
        if obj is None or (cluster, name) in seen:
            return 0
        return max([1 + depth(o.cluster, o.name, seen | {(cluster, name)})
                    for o in obj.origins
                    if o.cluster is not None and (o.cluster, o.name) in gone], default=0)

    return depth


def _ordered(changes: list[Change], state: Topology) -> list[Change]:
    """Creations and updates by kind, streams origins first; deletions after them, in the
    reverse order (mirrors before their origins, mirror topics before links before topics),
    but a pruned stream whose subjects a created or changed one takes before them all."""
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

    gone_depth = _deletion_depth(changes)
    from ..subjects import overlaps

    def mirror_depth(c: Change, seen: frozenset = frozenset()) -> int:
        """A mirror topic made after the mirror topic its link's source cluster makes of
        the same topic (a chain: kwest -> keast -> kcentral), else first."""
        obj = c.obj or c.current
        spec = getattr(obj, "spec", None)
        link = state.kafka.get(("link", c.cluster, getattr(spec, "link", "")))
        source = getattr(getattr(link, "spec", None), "source_cluster", None)
        key = (c.cluster, c.name)
        if source is None or key in seen:
            return 0
        up = by_mirror.get((source, getattr(spec, "source_topic", "")))
        return 0 if up is None else 1 + mirror_depth(up, seen | {key})

    by_mirror = {(c.cluster, c.name): c for c in changes
                 if c.kind == "mirror_topic" and c.action == "create"}

    def subjects(c: Change, obj: Any) -> list[str]:
        cfg = obj.config if obj is not None else None
        return list(cfg.subjects) if cfg is not None else []

    # What the file creates or changes, per cluster: a pruned stream whose subjects one of
    # them takes (a stream renamed), or an update that gives subjects up to another (they
    # moved), goes first, or the create would overlap it.
    wanted: dict[str, list[tuple[int, str]]] = {}
    for c in changes:
        if c.action in ("create", "update") and c.kind in NATS_KINDS:
            wanted.setdefault(c.cluster, []).extend((id(c), x) for x in subjects(c, c.obj))

    def frees(c: Change, given: list[str]) -> bool:
        return any(overlaps(a, b) for a in given
                   for who, b in wanted.get(c.cluster, ()) if who != id(c))

    def gives_up(c: Change) -> bool:
        keeps = set(subjects(c, c.obj))
        return frees(c, [x for x in subjects(c, c.current) if x not in keeps])

    # A Kafka topic (or mirror topic) pruned whose name a created one takes, or collides
    # with ('.' and '_' alike, Kafka's rule), goes first, or the create is refused.
    created = {(c.cluster, c.name.replace(".", "_")) for c in changes
               if c.action == "create" and c.kind in ("topic", "mirror_topic")}

    def makes_room(c: Change) -> bool:
        if c.kind in NATS_KINDS:
            return frees(c, subjects(c, c.current))
        return c.kind in ("topic", "mirror_topic") and \
            (c.cluster, c.name.replace(".", "_")) in created

    def sort_key(c: Change) -> tuple:
        obj = c.obj or c.current
        d = depth(c.cluster, obj.name) if c.kind in NATS_KINDS and obj else \
            mirror_depth(c) if c.kind == "mirror_topic" else 0
        if c.action == "delete":
            d = gone_depth(c.cluster, c.name) if c.kind in NATS_KINDS else d
            if makes_room(c):
                return (-1, -ORDER[c.kind], -d, c.cluster, c.name)
            return (1, -ORDER[c.kind], -d, c.cluster, c.name)
        if c.action == "update" and c.kind in NATS_KINDS and gives_up(c):
            return (-1, ORDER[c.kind], d, c.cluster, c.name)
        return (0, ORDER[c.kind], d, c.cluster, c.name)

    return sorted(changes, key=sort_key)
