"""A cluster link's ACL sync (Confluent's "ACL migration": ``acl.sync.enable``,
``acl.sync.ms``, ``acl.filters``).

``acl.filters`` is Confluent's JSON ``{"aclFilters": [{"resourceFilter": {"resourceType",
"name", "patternType"}, "accessFilter": {"principal", "host", "operation",
"permissionType"}}]}``: each entry is one Kafka AclBindingFilter (:class:`.acls.AclFilter`);
an omitted field (or null) matches every value, and so does ``any`` (any case) in every
field but ``name`` (a topic or group may be named ``any``: an omitted name matches every
name). :func:`parse_acl_filters` checks it, naming the field of the first fault
(``aclFilters[0].accessFilter.operation``).

The sync belongs to the link, not to a mirror topic: every ``acl.sync.ms`` while the link
exists, is not paused and its source cluster answers, whatever its mirrors' states (none,
ACTIVE, STOPPED after a failover), :func:`step_acl_sync` copies the source cluster's ACLs
that match at least one filter to the destination and deletes the destination ACLs the link
created (owner :func:`owner_of`) that the source no longer has, in one destination
transaction (:meth:`.acls.AclStore.sync_owned`). An ACL the link did not create is never
touched, even when the filters match it; one that already existed on the destination is not
taken over. Deleting the link keeps the ACLs it created (after a failover the clients still
need them). A source or destination cluster without an authorizer cannot list or hold ACLs
(Kafka's SECURITY_DISABLED): the AclSync task is then IN_ERROR with that error
(:meth:`.links.Links.set_task_errors`) until a sync succeeds.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import JetlinkError
from .acls import CLUSTER_NAME, AclBinding, AclFilter, AclStore, refusal
from .errors import KafkaError
from .filter_json import filter_list

if TYPE_CHECKING:  # pragma: no cover
    from ..store import Cluster, DataDir

__all__ = ["ACL_FILTERS_KEY", "AclSyncResult", "doomed_acls", "link_acl_filters", "owner_of",
           "owning_link", "parse_acl_filters", "pending_acls", "step_acl_sync", "sync_acls"]

ACL_FILTERS_KEY = "acl.filters"
_TASK = "AclSync"
#: the fields of each part of an entry of ``aclFilters`` -> AclFilter.make's argument
_RESOURCE_FIELDS = {"resourceType": "resource_type", "name": "name",
                    "patternType": "pattern_type"}
_ACCESS_FIELDS = {"principal": "principal", "host": "host", "operation": "operation",
                  "permissionType": "permission"}
_PARTS = {"resourceFilter": _RESOURCE_FIELDS, "accessFilter": _ACCESS_FIELDS}
_ENUM_FIELDS = ("resourceType", "patternType", "operation", "permissionType")
#: the field an acls.py error names -> where it is in an entry
_ERROR_FIELDS = {"resource_type": "resourceFilter.resourceType",
                 "resource_name": "resourceFilter.name",
                 "pattern_type": "resourceFilter.patternType",
                 "principal": "accessFilter.principal", "host": "accessFilter.host",
                 "operation": "accessFilter.operation",
                 "permission": "accessFilter.permissionType"}


def owner_of(link: str) -> str:
    """The owner the ACL sync of ``link`` marks its ACLs with."""
    return f"link:{link}"


def owning_link(owner: str) -> str | None:
    """The link whose ACL sync marks its ACLs ``owner`` (:func:`owner_of`); None for
    another owner."""
    return owner[len("link:"):] if owner.startswith("link:") else None


def _bad(path: str, why: str) -> KafkaError:
    where = f"{path}: " if path else ""
    return KafkaError("INVALID_CONFIG",
                      f"Invalid value for configuration {ACL_FILTERS_KEY}: {where}{why}",
                      field=ACL_FILTERS_KEY)


def _document(text: str | Mapping[str, Any]) -> list[Any]:
    return filter_list(text, "aclFilters", _bad, 'expected {"aclFilters": [...]}')


def _entry(path: str, item: Any) -> AclFilter:
    if not isinstance(item, dict):
        raise _bad(path, "expected an object with resourceFilter and accessFilter")
    args: dict[str, str | None] = {}
    for k in item:
        if k not in _PARTS:
            raise _bad(f"{path}.{str(k)[:60]}",
                       "unknown field (fields: resourceFilter, accessFilter)")
    for part, fields in _PARTS.items():
        got = item.get(part)
        if got is None:
            continue
        where = f"{path}.{part}"
        if not isinstance(got, dict):
            raise _bad(where, f"expected an object with {', '.join(fields)}")
        for k, value in got.items():
            if k not in fields:
                raise _bad(f"{where}.{str(k)[:60]}",
                           f"unknown field (fields: {', '.join(fields)})")
            if value is None:
                continue
            if not isinstance(value, str):
                raise _bad(f"{where}.{k}", f"expected a string, not {json.dumps(value)[:60]}")
            if k in _ENUM_FIELDS and len(value) > 40:
                raise _bad(f"{where}.{k}", f"a value of {len(value)} characters is not one "
                           f"of Kafka's {k} names")
            args[fields[k]] = None if k != "name" and value.lower() == "any" else value
    try:
        return AclFilter.make(**args)
    except JetlinkError as err:  # the field AclFilter.make names, under its JSON name
        name = _ERROR_FIELDS.get(err.field or "", "")
        raise _bad(f"{path}.{name}" if name else path, err.description) from None


def parse_acl_filters(text: str | Mapping[str, Any]) -> list[AclFilter]:
    """The filters of ``acl.filters`` (module docstring); KafkaError INVALID_CONFIG naming
    the field and the rule of the first fault."""
    return [_entry(f"aclFilters[{i}]", item) for i, item in enumerate(_document(text))]


def link_acl_filters(configs: Any) -> list[AclFilter]:
    """The filters of a link's ``acl.filters`` (a LinkConfig or a mapping); [] unset."""
    text = configs.get(ACL_FILTERS_KEY) or ""
    return parse_acl_filters(text) if text else []


def _selected(datadir: DataDir, store: AclStore, filters: Sequence[AclFilter],
              destination: str) -> list[AclBinding]:
    """The ACLs of the source the filters select: what the sync copies into cluster
    ``destination``. Left out:

    - a region's fence (owner acl_fence.py FENCE_OWNER: the DENY WRITE ``dr fence`` puts on
      a returned old source's topics), that cluster's own write stop: synced, it would stop
      the writes of the side that took over;
    - the copies the source holds of the destination's own ACLs (:func:`_echoes`: made by
      links' ACL syncs along a chain that starts at ``destination``, the other half of a
      link pair or a longer ring). Synced back, an ACL removed on the destination would
      come back from its own copy, and the copy would stay for as long as the ACL it came
      back as: never removed."""
    from .acl_fence import FENCE_OWNER

    left_out = set(store.find(owner=FENCE_OWNER)) | _echoes(datadir, store, destination)
    return [b for b in store.find() if b not in left_out and any(f.matches(b) for f in filters)]


def _echoes(datadir: DataDir, store: AclStore, destination: str) -> set[AclBinding]:
    """The ACLs of ``store``'s cluster that are copies of ``destination``'s own: each made
    by the ACL sync of a link (owner ``link:NAME``) whose source is ``destination``, or
    whose source holds it as such a copy in turn (followed from cluster to cluster, each
    once)."""
    owners = {store.cluster.name: store.owners(store.find())}  # each cluster's, read once
    sources: dict[tuple[str, str], str | None] = {}  # (cluster, link) -> its source

    def source_of(cluster: str, link: str) -> str | None:
        if (cluster, link) not in sources:
            sources[cluster, link] = _link_source(datadir.open(cluster), link)
        return sources[cluster, link]

    out: set[AclBinding] = set()
    for b, owner in owners[store.cluster.name].items():
        cluster, seen = store.cluster.name, {store.cluster.name}
        while True:
            link = owning_link(owner)
            src = source_of(cluster, link) if link else None
            if src is None or src in seen or not datadir.has_cluster(src):
                break
            if src == destination:
                out.add(b)
                break
            seen.add(src)
            cluster = src
            if src not in owners:
                there = AclStore(datadir.open(src))
                owners[src] = there.owners(there.find())
            owner = owners[src].get(b, "")
    return out


def _link_source(cluster: Cluster, link: str) -> str | None:
    """The source cluster of ``link`` of ``cluster`` (the links table of
    core/kafka/links.py, read here: that module imports this one); None when it has none."""
    import sqlite3

    try:
        with cluster.read() as conn:
            row = conn.execute("SELECT source_cluster FROM links WHERE name = ?",
                               (link,)).fetchone()
    except sqlite3.OperationalError:  # no links table: the cluster never had a link
        return None
    return None if row is None else str(row[0])


@dataclass(frozen=True)
class AclSyncResult:
    """What one ACL sync did on the destination."""

    created: tuple[AclBinding, ...] = ()
    deleted: tuple[AclBinding, ...] = ()

    @property
    def changed(self) -> int:
        return len(self.created) + len(self.deleted)


def _describe_denied(src: AclStore, source: str, configs: Any) -> KafkaError | None:
    """ACL sync reads the source's ACLs: the link's principal needs DESCRIBE on the cluster
    of ``source``; its refusal (CLUSTER_AUTHORIZATION_FAILED), None when allowed."""
    principal = getattr(configs, "principal", None)
    if principal is None:
        return None
    d = src.authorize(principal, "DESCRIBE", "CLUSTER", CLUSTER_NAME)
    if d.allowed:
        return None
    return KafkaError("CLUSTER_AUTHORIZATION_FAILED", f"{refusal(d).message}; the link needs "
                      f"the ACL DESCRIBE on the cluster of {source} to sync ACLs")


def sync_unauthorized(datadir: DataDir, source: str, configs: Any) -> str | None:
    """Why a link's ACL sync (``configs``: acl.sync.enable) from ``source`` would fail now
    for want of DESCRIBE on its cluster (the error its task then shows); None when it
    would not, or syncs nothing (off, no authorizer on the source)."""
    if not configs.acl_sync_enable or not datadir.has_cluster(source):
        return None
    src = AclStore(datadir.open(source))
    if not src.settings().enabled:
        return None
    denied = _describe_denied(src, source, configs)
    return None if denied is None else f"{denied.message} ({denied.err_code})"


def sync_acls(datadir: DataDir, destination: Cluster, link: str, source: str,
              configs: Any) -> AclSyncResult:
    """One ACL sync of ``link`` (from cluster ``source``, its ``configs``) into
    ``destination`` (module docstring); KafkaError SECURITY_DISABLED when either cluster
    has no authorizer."""
    filters = link_acl_filters(configs)
    src = AclStore(datadir.open(source))
    src.require()
    dst = AclStore(destination)
    dst.require()
    denied = _describe_denied(src, source, configs)
    if denied is not None:
        raise denied
    created, deleted = dst.sync_owned(owner_of(link), _selected(datadir, src, filters,
                                                                destination.name))
    return AclSyncResult(tuple(created), tuple(deleted))


def doomed_acls(datadir: DataDir, destination: Cluster, link: str, source: str,
                configs: Any) -> list[AclBinding]:
    """The ACLs ``link`` created on ``destination`` that its next sync deletes because the
    filters of ``configs`` no longer select them: the source still has them (one it deleted
    goes whatever the filters say: not theirs to warn about). [] when the sync is off
    (turning it off keeps them), or a cluster has no authorizer (nothing syncs)."""
    if not configs.acl_sync_enable or not datadir.has_cluster(source):
        return []
    src = AclStore(datadir.open(source))
    dst = AclStore(destination)
    if not src.settings().enabled or not dst.settings().enabled:
        return []
    keep = set(_selected(datadir, src, link_acl_filters(configs), destination.name))
    held = set(src.find())
    return [b for b in dst.find(owner=owner_of(link)) if b not in keep and b in held]


def pending_acls(datadir: DataDir, destination: Cluster, source: str, configs: Any
                 ) -> list[AclBinding] | None:
    """The source's ACLs the filters select that ``destination`` lacks (what the next
    sync would create); None when either cluster has no authorizer (nothing can sync)."""
    src = AclStore(datadir.open(source))
    dst = AclStore(destination)
    if not src.settings().enabled or not dst.settings().enabled:
        return None
    have = set(dst.find())
    return [b for b in _selected(datadir, src, link_acl_filters(configs),
                                 destination.name) if b not in have]


def step_acl_sync(m: Any, li: Any, state: str, now: int) -> tuple[int, list[str]]:
    """The AclSync task of the link step (:mod:`.mirror_step`): when enabled, the link not
    paused and ``acl.sync.ms`` passed since its last run, sync (:func:`sync_acls`) and
    record the run and the task's errors. The ACLs created and deleted, and the task's
    errors as they stand (those of its last run while the next is not due): a sync that
    fails is in every step's report until it works, as the task list has it."""
    if not li.config.acl_sync_enable or state == "PAUSED":
        return 0, []
    if not li.due(_TASK, now):
        task = next((t for t in li.tasks if t.task_name == _TASK), None)
        held = task.errors if task is not None else ()
        if not held:
            return 0, []
        # said as the last run's, with when the next one is: an ACL made since is not seen
        # before it (an operator who fixed the cause re-runs after it, or waits for it)
        from ..durations import format_duration

        last = li.last_runs.get(_TASK, now)
        ms = 1_000_000
        when = (f" (its run {format_duration((now - last) * ms)} ago; the next in "
                f"{format_duration(max(0, li.config.acl_sync_ms - (now - last)) * ms)}, "
                "acl.sync.ms)")
        return 0, [e["error_message"] + when for e in held]
    errors: Iterable[Mapping[str, str]] = ()
    changed = 0
    try:
        changed = sync_acls(m.datadir, m.cl, li.name, li.source_cluster, li.config).changed
    except KafkaError as err:
        errors = [{"error_code": err.name, "error_message": err.description}]
    m.links.set_task_errors(li.name, _TASK, list(errors))
    m.links.record_run(li.name, _TASK, now)
    return changed, [e["error_message"] for e in errors]
