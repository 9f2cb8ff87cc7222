"""Topology as code over a data directory: the embedded engine's clusters as the planner
reads and changes them (:class:`EmbeddedClusters`), and the shorthands
:func:`export_document`, :func:`make_plan` and :func:`apply_plan`.

The data directory is read into a document (core/topology/stored.py): clusters, streams (KV
buckets, KV mirrors and aggregates written as such when their stream is exactly what the KV
table makes, else as streams), topics, cluster links and mirror topics (``jetlink export``
writes it with tomli-w). Each change is one engine call, i.e. one transaction: streams
through the cluster's JetStream, KV objects through core/kv.py KV, Kafka objects through
Kafka.create_topic / alter_topic / delete_topic, Links.create / alter / delete,
Mirrors.create and AclStore.add / remove (ACLs: those a cluster's operator made, not the
ones a link's ACL sync or ``dr fence`` created, which carry an owner and are never exported
or pruned; created only in a cluster that enforces ACLs). What the embedded engine refuses
that a clustered server accepts (replicas > 1, 10074) is a problem of the plan.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..clock import Clock
from ..errors import ApiError, JetlinkError
from ..store import DataDir
from .apply import ApplyReport, _apply_nats, apply_changes, stored_removed
from .load import Topology
from .model import Problem
from .plan import NATS_KINDS, Change, Plan, plan_topology
from .stored import _Document

__all__ = ["EmbeddedClusters", "apply_plan", "export_document", "make_plan"]


class EmbeddedClusters:
    """The embedded engine's data directory, as the planner reads and changes it."""

    label = "<data directory>"
    single_server = True  # replicas > 1 refused (10074)

    def __init__(self, dd: DataDir, clock: Clock) -> None:
        self.dd = dd
        self.clock = clock
        # clusters whose database cannot be read (damaged): left out of the state read, and
        # refused only for what a plan changes in them (a damaged cluster stops only what
        # involves it: docs/datadir.md)
        self.damaged: dict[str, JetlinkError] = {}

    def read(self, clusters: Sequence[str] | None = None, *,
             stored: dict[tuple[str, str], Any] | None = None, minimal: bool = True
             ) -> dict[str, Any]:
        return _export(self.dd, self.clock, clusters, stored, minimal=minimal,
                       damaged=self.damaged)

    def complete(self, state: Topology) -> None:
        """Nothing outside the data directory to look up."""

    def relevant(self, problems: list[Problem]) -> list[Problem]:
        return problems

    def limits(self, changes: list[Change]) -> list[Problem]:
        unusable = self.dd.unusable() if changes else None
        if unusable:  # (every change would fail on it: said once, before any is tried)
            first = next((c.obj.file for c in changes if c.obj is not None), "")
            return [Problem(first, None, None, 0, unusable)]
        out = [Problem(c.obj.file, c.obj.label, "cluster", 0,
                       self.damaged[c.cluster].description)  # ("cluster junk: ...")
               for c in changes if c.cluster in self.damaged and c.obj is not None]
        return out + _engine_limits(self.dd, changes)

    def apply(self, change: Change) -> None:
        _apply_one(self.dd, self.clock, change)

    def consumer_limits(self, cluster: str, stream: str) -> list[tuple[str, int, int]]:
        """Each consumer of ``stream`` as a consumer-limits change is checked against."""
        from ..jetstream import JetStream
        from .stored import consumer_limits

        return consumer_limits(JetStream(self.dd.open(cluster), self.clock), stream)

    def removes(self, change: Change) -> str:
        """What a stream or bucket update removes of what is stored (apply.py)."""
        from ..jetstream import JetStream

        return stored_removed(JetStream(self.dd.open(change.cluster), self.clock), change,
                              self.clock.now_ns())

    def uncertain(self, err: JetlinkError) -> bool:
        return False  # one transaction: made or not

    def close(self) -> None:
        """The data directory is the caller's."""


def export_document(dd: DataDir, clock: Clock, clusters: Sequence[str] | None = None,
                    withheld: list[tuple[str, str, str]] | None = None) -> dict[str, Any]:
    """The topology of ``dd`` (only ``clusters`` when given) in the file format, normalized
    through :class:`Topology` (what ``export -> apply -> export`` keeps equal). A link's
    sensitive configs (core/kafka/links.py ``SENSITIVE_CONFIGS``: its ``sasl.jaas.config``,
    passwords, keys) are never written: each left out is added to ``withheld`` as
    (cluster, link, config), and a plan keeps a sensitive config a file leaves out."""
    return _export(dd, clock, clusters, withheld=withheld if withheld is not None else [])


def _export(dd: DataDir, clock: Clock, clusters: Sequence[str] | None = None,
            stored: dict[tuple[str, str], Any] | None = None, *, minimal: bool = True,
            withheld: list[tuple[str, str, str]] | None = None,
            damaged: dict[str, JetlinkError] | None = None) -> dict[str, Any]:
    """:func:`export_document`; ``stored`` (when given) receives (cluster, stream) -> the
    configuration the engine stores, read in the same pass. Without ``withheld`` (a plan's
    reading of the data directory) the sensitive configs are kept. A cluster whose database
    cannot be read stops the export only when it is one of ``clusters`` (all of them when
    None), unless ``damaged`` is given (a plan's reading): it then receives it, left out."""
    from ..jetstream import JetStream
    from ..kafka.links import SENSITIVE_CONFIGS, Links
    from ..kafka.mirrors import Mirrors
    from ..kafka.topics import Kafka

    wanted = None if clusters is None else set(clusters)
    broken: list[tuple[str, JetlinkError]] = []
    infos = dd.clusters(create_local=False, broken=broken)
    known = {c.name for c in infos} | {name for name, _err in broken}
    for name in sorted(wanted or ()):
        if name not in known:
            from ..errors import NotFoundError, not_found

            raise not_found(NotFoundError(f"cluster {name} not found", field="cluster"),
                            name, sorted(known))
    for name, err in broken:
        if wanted is not None and name not in wanted:
            continue
        if damaged is None:
            if wanted is None:  # a whole export would leave it out: said, with the way on
                err.detail = ((err.detail + "; ") if err.detail else "") + (
                    "export -c NAME exports the other clusters")
            raise err
        damaged[name] = err
    out = _Document()
    for info in infos:
        if wanted is not None and info.name not in wanted:
            continue
        cl = dd.open(info.name, create_local=False)
        out.cluster(info.name, _cluster_table(info.kind, cl))
        for sinfo in JetStream(cl, clock).streams():
            if stored is not None:
                stored[(info.name, sinfo.config.name)] = sinfo.config
            out.stream(info.name, sinfo.config, minimal=minimal)
        have = cl.table_names()
        if "acls" in have:
            _export_acls(out, info.name, cl)
        if "topics" not in have and "links" not in have:
            continue
        kafka = Kafka(cl, clock)
        mirrored = {}
        links = Links.open(dd, cl, clock).list() if "links" in have else []
        mirrors = Mirrors(dd, info.name, clock)
        if links:
            for m in mirrors.list():
                if m.mirror_status not in ("STOPPED",):
                    mirrored[m.mirror_topic_name] = m
        for t in kafka.topics():
            if t.name in mirrored:
                m = mirrored[t.name]
                table: dict[str, Any] = {"link": m.link_name,
                                         "source_topic": m.source_topic_name}
                configs = mirrors.creation_configs(t.name)
                if configs:
                    table["configs"] = configs
                out.add("mirror_topics", info.name, t.name, table)
            else:
                out.add("topics", info.name, t.name, {
                    "partitions": len(t.partitions), "configs": dict(sorted(t.configs.items()))})
        for li in links:
            configs = li.config.to_json()
            if withheld is not None:
                for key in sorted(SENSITIVE_CONFIGS & configs.keys()):
                    del configs[key]
                    withheld.append((info.name, li.name, key))
            out.add("links", info.name, li.name, {"source_cluster": li.source_cluster,
                                                  "configs": configs})
    return out.finish()


def _cluster_table(kind: str, cl: Any) -> dict[str, Any]:
    """A cluster's table: its kind, its description; a kafka cluster's authorizer settings
    that are not
    Kafka's defaults (``authorizer = true``, its ``super_users``,
    ``allow_everyone_if_no_acl_found = true``)."""
    from ..kafka.acls import AclStore

    table: dict[str, Any] = {"kind": kind}
    if cl.description:
        table["description"] = cl.description
    if kind == "kafka" and "authorizer" in cl.table_names():
        settings = AclStore(cl).settings()
        if settings.enabled:
            table["authorizer"] = True
        if settings.super_users:
            table["super_users"] = list(settings.super_users)
        if settings.allow_everyone_if_no_acl_found:
            table["allow_everyone_if_no_acl_found"] = True
    return table


def _export_acls(out: _Document, cluster: str, cl: Any) -> None:
    """The ACLs of ``cluster`` created by hand (``acls add``, ``kafka-acls``, a topology):
    not those a link's ACL sync or ``dr fence`` made (they have an owner), which jetlink
    keeps itself."""
    from ..kafka.acls import AclStore
    from .kafka_specs import _acl_table_of
    from .model import acl_identity

    for b in AclStore(cl).find(owner=""):
        out.add("acls", cluster, acl_identity(b), _acl_table_of(b))


def make_plan(dd: DataDir, clock: Clock, desired: Topology, *, prune: bool = False) -> Plan:
    """The plan that brings ``dd`` to ``desired`` (module doc). ``desired`` is a loaded file
    (its own problems are kept as they are)."""
    return plan_topology(EmbeddedClusters(dd, clock), desired, prune=prune)


def _enforces_acls(dd: DataDir, cluster: str, changes: list[Change]) -> bool:
    """Whether ``cluster`` enforces ACLs once the plan is applied: its cluster change's
    ``authorizer``, else the data directory's setting."""
    from ..kafka.acls import AclStore

    said = [x.authorizer_settings[0] for x in changes if x.kind == "cluster"
            and x.name == cluster and x.authorizer_settings[0] is not None]
    if said:
        return said[0]
    return dd.has_cluster(cluster) and \
        AclStore(dd.open(cluster, create_local=False)).settings().enabled


def _acl_limit(dd: DataDir, c: Change, changes: list[Change]) -> list[Problem]:
    """An ACL is created only in a cluster that enforces ACLs, or will once the plan's
    cluster change is made (Kafka's CreateAcls on a broker without an authorizer:
    SECURITY_DISABLED)."""
    if _enforces_acls(dd, c.cluster, changes):
        return []
    return [Problem(c.desired.file, c.desired.label, "cluster", 0,
                    f"{c.label}: cluster {c.cluster} has no authorizer, so it holds no ACLs: "
                    f"authorizer = true in [clusters.{c.cluster}] (or jetlink cluster "
                    f"authorizer {c.cluster} --enable) first (SECURITY_DISABLED 54)")]


def _planned_acls(dd: DataDir, cluster: str, changes: list[Change]) -> Any:
    """The ACLs ``cluster`` holds once the plan is applied (those it holds, including the
    ones a link's ACL sync or a fence made, less the plan's deletions, with its creations),
    as the view the authorizer decides over, enforced."""
    from dataclasses import replace

    from ..kafka.acls import AclStore, AclView, AuthorizerSettings

    settings, rows = AuthorizerSettings(), set()
    if dd.has_cluster(cluster):
        store = AclStore(dd.open(cluster, create_local=False))
        settings, rows = store.settings(), set(store.find())
    for x in changes:  # the plan's super users and allow.everyone.if.no.acl.found
        if x.kind == "cluster" and x.name == cluster:
            _enabled, users, everyone = x.authorizer_settings
            if users is not None:
                settings = replace(settings, super_users=users)
            if everyone is not None:
                settings = replace(settings, allow_everyone_if_no_acl_found=everyone)
    for x in changes:
        if x.kind == "acl" and x.cluster == cluster and x.action in ("create", "delete"):
            aspec = (x.obj or x.existing).spec
            if aspec is None:  # (an ACL with problems: reported by the checks)
                continue
            b = aspec.binding()
            (rows.add if x.action == "create" else rows.discard)(b)
    return AclView(None, replace(settings, enabled=True), sorted(rows))


def _mirror_authorized(dd: DataDir, c: Change, changes: list[Change],
                       views: dict[str, Any]) -> list[Problem]:
    """A mirror topic to create through a link whose source enforces ACLs (now, or once the
    plan's cluster change is made): the link's principal is allowed READ and DESCRIBE_CONFIGS
    on the source topic by the ACLs the source holds after the plan (core/kafka/authz.py
    ``mirror_denied``, the check the mirror's creation makes), else a problem before anything
    is applied."""
    from ..kafka.authz import link_principal, mirror_denied
    from .kafka_specs import _kafka_problem

    spec = c.desired.spec
    if spec is None:  # (a mirror topic with problems: reported by the checks)
        return []
    link = next((x for x in changes if x.kind == "link" and x.cluster == c.cluster
                 and x.name == spec.link and x.action != "delete"), None)
    if link is None:  # (a missing link is the checks' problem)
        return []
    lspec = (link.obj or link.existing).spec
    if lspec is None:  # (a link with problems: the checks')
        return []
    if not _enforces_acls(dd, lspec.source_cluster, changes):
        return []
    configs = dict(link.current.spec.configs) if link.current is not None else {}
    configs.update(lspec.configs)
    view = views.get(lspec.source_cluster)
    if view is None:  # (read once per source cluster of the plan, not once per mirror)
        view = views[lspec.source_cluster] = _planned_acls(dd, lspec.source_cluster, changes)
    err = mirror_denied(view, lspec.source_cluster, link_principal(configs),
                        spec.source_topic, spec.link)
    return [] if err is None else [_kafka_problem(c.desired, err, "link")]


def _engine_limits(dd: DataDir, changes: list[Change]) -> list[Problem]:
    """What the embedded engine refuses that a clustered server accepts, for the objects to
    create (an update meets the same rule in :func:`_check_update`): replicas > 1 (10074),
    checked before anything is applied."""
    from ..config.validate import check_single_server

    out = []
    views: dict[str, Any] = {}  # source cluster -> its ACLs as the plan leaves them
    for c in changes:
        obj = c.obj
        if c.action == "create" and c.kind == "acl" and obj is not None:
            out += _acl_limit(dd, c, changes)
        if c.action == "create" and c.kind == "mirror_topic" and obj is not None:
            out += _mirror_authorized(dd, c, changes, views)
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


def _config_delta(old: dict[str, Any], new: dict[str, Any], *, keep: Iterable[str] = ()
                  ) -> tuple[dict[str, Any], list[str]]:
    """The configs to set and the ones to delete (back to their defaults) from old to new;
    ``keep``: configs kept as they are when new leaves them out."""
    kept = set(keep)
    return ({k: v for k, v in new.items() if old.get(k) != v},
            [k for k in old if k not in new and k not in kept])


def _apply_one(dd: DataDir, clock: Clock, c: Change) -> None:
    from ..jetstream import JetStream
    from ..kafka.links import Links
    from ..kafka.mirrors import Mirrors
    from ..kafka.topics import Kafka
    from ..kv import KV

    if c.kind == "cluster":
        if c.action == "create":
            dd.add_cluster(c.name, kind=c.cluster_kind, now_ns=clock.now_ns(),
                           description=c.description or "")
            if c.cluster_kind == "kafka":  # its tables belong to adding it (kafka/schema.py)
                from ..kafka.schema import create_schema

                create_schema(dd.open(c.name, create_local=False))
        elif c.description is not None:
            dd.open(c.name, create_local=False).set_description(c.description)
        if c.authorizer_settings != (None, None, None):  # a kafka cluster's authorizer
            from ..kafka.acls import AclStore

            enabled, users, everyone = c.authorizer_settings
            AclStore(dd.open(c.name, create_local=False)).configure(
                enabled=enabled, super_users=None if users is None else ";".join(users),
                allow_everyone=everyone)
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
            from ..kafka.links import SENSITIVE_CONFIGS

            configs, delete = _config_delta(c.existing.spec.configs, c.desired.spec.configs,
                                            keep=SENSITIVE_CONFIGS)
            links.alter(c.name, configs, delete=delete)
        else:
            links.delete(c.name, force=True)
    elif c.kind == "acl":
        from ..kafka.acls import AclFilter, AclStore

        b = (c.obj or c.existing).spec.binding()
        if c.action == "create":
            AclStore(cl).add([b])
        else:  # a delete (an ACL has no field to update: its fields are its identity)
            AclStore(cl).remove([AclFilter(b.resource_type, b.name, b.pattern_type,
                                           b.principal, b.host, b.operation, b.permission)],
                                owner="")
    elif c.kind == "mirror_topic":
        if c.action == "create":
            Mirrors(dd, c.cluster, clock).create(
                c.name, c.desired.spec.link, source_topic=c.desired.spec.source_topic,
                configs=c.desired.spec.configs or None)
        else:
            Kafka(cl, clock).delete_topic(c.name)


def apply_plan(dd: DataDir, clock: Clock, plan: Plan) -> ApplyReport:
    """Make the plan's changes in order (module doc). Refuses a plan with problems."""
    return apply_changes(EmbeddedClusters(dd, clock), plan)
