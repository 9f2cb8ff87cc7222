"""Mirror topics: byte-for-byte, offset-preserving copies owned by a cluster link (Confluent's
Mirror Topics documentation).

A mirror topic lives in the link's DESTINATION cluster (the cluster the link is stored in); its
source topic, ``source_topic``, lives in the link's source cluster. The mirror's name is the
link's ``cluster.link.prefix`` + the source topic's name. Everything here is driven by
:func:`pump_links` (``jetlink replicate``, and one bounded step at the end of every command
that wrote), one destination transaction per link step:

1. states: each mirror's status is recomputed from the link (PAUSED link or paused mirror ->
   PAUSED, source cluster down -> SOURCE_UNAVAILABLE, failed link -> LINK_FAILED) and its
   source topic (missing, or fewer partitions: retried for ``cluster.link.retry.timeout.ms``,
   then FAILED with ``SOURCE_TOPIC_MAY_BE_DELETED`` / ``SOURCE_PARTITIONS_DECREASED``);
   ``status_time_ms`` changes on every transition;
2. auto-create (``auto.create.mirror.topics.enable`` + topic filters; EXCLUDE wins; with a
   prefix a source topic that is itself a mirror is not chained);
3. config sync every ``topic.config.sync.ms``: the synced configurations of Confluent's list
   and the partition count (partitions added on the source are added to the mirror);
4. data: per partition, records at offsets [mirror log end, source log end) copied with
   ``INSERT ... SELECT`` from the attached source database (same offsets, timestamps, keys,
   values, headers); the mirror's log start follows the source's (retention); a mirror that
   fell behind the source's log start jumps to it;
5. consumer offset sync every ``consumer.offset.sync.ms`` (when enabled): committed offsets of
   the source's groups passing the group filters, for partitions of ACTIVE mirrors, for groups
   not active on the destination, unchanged offsets skipped; each written offset is recorded
   as synced by the link (what clamping looks at);
6. PENDING_STOPPED mirrors finish: a promote's final config and offset sync, then (promote and
   failover) offset clamping and STOPPED: the topic is writable from then on, and keeps its
   Last Source Fetch Offsets and status time while the link exists.

Promote refuses (per topic, in its result) while the source is unreachable, a partition lags,
a synced config differs, or a synced group offset differs; failover never refuses. Clamping
(Confluent's Mirror Topics documentation: "Why consumer offsets may be clamped"): every
consumer group offset the link synced for the topic (a group the offset sync ever wrote for
that topic, any partition) that is beyond the mirror partition's log end offset is reset to
it; each clamp is reported (group, topic, partition, from, to). ``dry_run`` computes the same
results and clamps and changes nothing.

Failing back: ``truncate_and_restore`` (on the ORIGINAL cluster, through a link pointing to the
cluster that took over): the local topic is truncated per partition to the log end offsets at
which the other side's mirror stopped and becomes a mirror of the other side's topic again,
reporting messages truncated per partition; a committed group offset left beyond a partition's
new log end is clamped to it (reported as a stop's clamps: that group would otherwise skip the
records mirrored into those offsets). ``reverse_and_start`` / ``reverse_and_pause`` (on the
cluster holding the mirror, both clusters up, the link of the same name on the source cluster
pointing back): stops the mirror (as failover) and runs ``truncate_and_restore`` on the source
side through that reverse link, so the source becomes the mirror (left PAUSED by
``reverse_and_pause``); a run killed between the two databases is finished by a re-run.

This module holds the :class:`Mirrors` facade and :func:`pump_links`. Arrows point down:
facade -> rules -> state -> model. The state is :class:`~.mirror_state.MirrorState` (the
mirror rows, their reads, the status recomputation, the cleanup); ``Mirrors`` is that state
composing the modules holding the rules, whose functions take the state (never the facade)
as their first argument and are bound here as methods: :mod:`.mirror_create` (creation,
auto-create), :mod:`.mirror_copy` (config sync, record copy, consumer offset sync),
:mod:`.mirror_promote` (pause / resume, promote / failover with clamping, failing back),
:mod:`.mirror_step` (the link step: steps 1 to 6 above) and :mod:`.mirror_bulk` (the bulk copy
of ``jetlink spark mirror-topic``). The statuses, tables, result objects and naming rules are
in :mod:`.mirror_model`, re-exported here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..clock import Clock
from ..errors import JetlinkError
from . import mirror_bulk, mirror_copy, mirror_create, mirror_promote, mirror_step
from .mirror_model import (
    ACTIVE,
    COMPONENT,
    FAILED,
    LINK_FAILED,
    NO_ERROR,
    PAUSED,
    PENDING_STOPPED,
    SCHEMA_STEPS,
    SOURCE_PARTITIONS_DECREASED,
    SOURCE_TOPIC_MAY_BE_DELETED,
    SOURCE_UNAVAILABLE,
    START_OFFSET_SPEC,
    STATUSES,
    STOPPED,
    SYNCED_CONFIGS,
    AlterResult,
    BulkPartition,
    BulkPlan,
    BulkResult,
    LinkReport,
    MirrorInfo,
    OffsetClamp,
    PartitionLag,
    TruncateResult,
    already_stopped_message,
    check_mirror_topic_configs,
    mirror_source_topic,
    mirror_topic_exists,
    not_mirrored_message,
    unknown_source_topic,
)
from .mirror_state import MirrorState

if TYPE_CHECKING:  # pragma: no cover
    from ..store import Cluster, DataDir

__all__ = [
    "COMPONENT",
    "NO_ERROR",
    "SCHEMA_STEPS",
    "SOURCE_PARTITIONS_DECREASED",
    "SOURCE_TOPIC_MAY_BE_DELETED",
    "START_OFFSET_SPEC",
    "STATUSES",
    "PartitionLag",
    "ACTIVE",
    "FAILED",
    "LINK_FAILED",
    "PAUSED",
    "PENDING_STOPPED",
    "SOURCE_UNAVAILABLE",
    "STOPPED",
    "SYNCED_CONFIGS",
    "AlterResult",
    "BulkPartition",
    "BulkPlan",
    "BulkResult",
    "OffsetClamp",
    "LinkReport",
    "MirrorInfo",
    "Mirrors",
    "TruncateResult",
    "already_stopped_message",
    "check_mirror_topic_configs",
    "mirror_source_topic",
    "mirror_topic_exists",
    "not_mirrored_message",
    "pump_links",
    "unknown_source_topic",
]



# --------------------------------------------------------------------------- the API


class Mirrors(MirrorState):
    """Mirror topics of the links stored in ``cluster`` (their destination cluster).

    The state (the mirror rows, their reads and statuses, their cleanup) is
    :class:`~.mirror_state.MirrorState`; the methods below are the functions of the modules
    holding their rules (module doc), which take the state as their first argument, bound
    here."""

    # -- creation (mirror_create) ----------------------------------------------------------
    create = mirror_create.create
    recreated_by = mirror_create.recreated_by

    # -- pause / resume, promote / failover, failing back (mirror_promote) ------------------
    pause = mirror_promote.pause
    resume = mirror_promote.resume
    promote = mirror_promote.promote
    failover = mirror_promote.failover
    finish_pending = mirror_promote.finish_pending
    truncate_and_restore = mirror_promote.truncate_and_restore
    reverse_and_start = mirror_promote.reverse_and_start
    reverse_and_pause = mirror_promote.reverse_and_pause
    promote_local_and_start = mirror_promote.promote_local_and_start
    promote_local_and_pause = mirror_promote.promote_local_and_pause
    restorable = mirror_promote.restorable

    # -- the link step (mirror_step) and the offset sync run now (mirror_copy) -------------
    step = mirror_step.step
    sync_offsets = mirror_copy.sync_offsets
    offset_sync_overwrites = mirror_copy.offset_sync_overwrites

    # -- bulk copy (mirror_bulk) ------------------------------------------------------------
    bulk_begin = mirror_bulk.bulk_begin
    bulk_check = mirror_bulk.bulk_check
    bulk_write = mirror_bulk.bulk_write
    bulk_finish = mirror_bulk.bulk_finish
    bulk_release = mirror_bulk.bulk_release


def link_hooks(datadir: DataDir, cluster: Any, clock: Clock | None = None) -> Any:
    """What ``Links.open`` asks the mirrors module: a link's mirror topics, which of them
    block its deletion (not STOPPED), failing them over on a forced delete, and dropping the
    stopped mirrors' history with the link."""
    from .links import LinkHooks

    name = cluster if isinstance(cluster, str) else cluster.name

    def mirrors() -> Mirrors:
        return Mirrors(datadir, name, clock)

    def on_force(link: str, topics: list[str]) -> None:
        if topics:
            mirrors().failover(topics, link)

    def on_delete(link: str) -> None:
        m = mirrors()
        m.forget_link(link)
        # the ACLs its sync created stay (the clients still need them after a failover), as
        # ordinary ones: a link created later under that name never takes them for its own
        from .acl_sync import owner_of
        from .acls import AclStore

        AclStore.of(m.cl).disown(owner_of(link))

    return LinkHooks(
        mirror_topics=lambda link: mirrors().topics_of(link),
        in_use=lambda link: mirrors().topics_of(link, live_only=True),
        on_force=on_force,
        on_delete=on_delete,
    )




def pump_links(datadir: DataDir, clock: Clock, *, clusters: Iterable[str] | None = None,
               max_records: int | None = None,
               on_error: Callable[[str, Exception], None] | None = None,
               links: Mapping[str, Iterable[str]] | None = None) -> list[LinkReport]:
    """One step of every cluster link of the data directory (clusters that are down are
    skipped: their links do not run; so are clusters whose database cannot be used, which
    the replication pump reports). ``links`` (cluster -> link names): one step of those
    links only (``jetlink serve``'s step after a create, cli/rest/worker.py), without the
    orphan cleanup of the clusters' other mirrors."""
    wanted = None if clusters is None else set(clusters)
    if links is not None:
        wanted = set(links) if wanted is None else wanted & set(links)
    reports: list[LinkReport] = []
    for info in datadir.clusters(create_local=False, broken=[]):
        if info.down or (wanted is not None and info.name not in wanted):
            continue
        cl = datadir.open(info.name)
        if not _has_links(cl):
            continue
        try:
            m = Mirrors(datadir, info.name, clock)
            if links is None:
                m.drop_orphans()
                reports += m.step(max_records=max_records)
            else:
                reports += m.step(max_records=max_records, links=links[info.name])
        except (JetlinkError, sqlite3.Error) as err:
            if on_error is None:
                raise
            on_error(info.name, err)
    return reports


def _has_links(cl: Cluster) -> bool:
    if "links" not in cl.table_names():
        return False
    with cl.read() as conn:
        return conn.execute("SELECT 1 FROM links LIMIT 1").fetchone() is not None
