"""The link step of mirror topics (``Mirrors.step``, driven by ``pump_links``; mirrors.py
steps 1 to 6): per link, the mirrors a promote or failover left PENDING_STOPPED are stopped
(:func:`.mirror_promote.finish_pending`, with their clamps), the statuses recomputed, then,
when the source cluster answers, auto-create (:func:`.mirror_create.auto_create`, not on a
PAUSED link), config sync when due, the record copy of every ACTIVE mirror and the consumer
offset sync when due (:mod:`.mirror_copy`), the link's ACL sync when due
(:mod:`.acl_sync`), each in its own destination transaction.

Its functions take the mirrors' state (:class:`~jetlink.core.kafka.mirror_state.MirrorState`)
as their first argument; the ``Mirrors`` facade binds ``step`` as its method.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .acl_sync import step_acl_sync
from .authz import link_read_denied
from .errors import KafkaError
from .mirror_copy import (
    copy_records,
    denied_groups,
    record_source_ends,
    sync_configs,
    write_offsets,
)
from .mirror_create import auto_create
from .mirror_model import (
    ACTIVE,
    FAILED,
    NO_ERROR,
    PAUSED,
    PENDING_STOPPED,
    LinkReport,
    now_ms,
    source_replaced,
)
from .mirror_promote import finish_pending

if TYPE_CHECKING:  # pragma: no cover
    from .mirror_state import MirrorState

__all__ = ["step", "step_link"]


def step(m: MirrorState, *, max_records: int | None = None, links: Iterable[str] | None = None
         ) -> list[LinkReport]:
    """One step of every link stored in this cluster (module doc); ``links``: of those
    links only (by name; one that does not exist, or no longer, is skipped), each read alone
    rather than the whole list."""
    reports = []
    if links is None:
        infos = m.links.list()
    else:
        infos = [li for li in map(m.links.find, sorted(set(links))) if li is not None]
    for li in infos:
        try:
            reports.append(step_link(m, li, max_records))
        except KafkaError as err:
            # deleted meanwhile (another request or process): nothing of it is left to run
            if err.name != "CLUSTER_LINK_NOT_FOUND" or m.links.find(li.name) is not None:
                raise
    return reports


def step_link(m: MirrorState, li: Any, max_records: int | None) -> LinkReport:
    """One step of link ``li`` (module doc, steps 1 to 6)."""
    state = m._state(li.name)
    rep = LinkReport(m.cluster, li.name, state)
    rep.stopped = [r[0] for r in m._rows(li.name) if r[3] == PENDING_STOPPED]
    rep.clamps = finish_pending(m, li.name)
    m.refresh(li.name)
    _li, src = m._source(li.name)
    if src is None or state in ("UNAVAILABLE", "FAILED"):
        rows = m._rows(li.name)
        rep.mirrors = len(rows)
        rep.lag = sum(m._info(r, None).max_per_partition_mirror_lag for r in rows)
        if src is None:
            rep.errors.append(f"source cluster {li.source_cluster} is unavailable")
        return rep
    if state != PAUSED:
        rep.created, auto_errors = auto_create(m, li, src)
        rep.errors += [f"auto-create: {e}" for e in auto_errors]
    rows = m._rows(li.name)
    rep.mirrors = len(rows)
    now = now_ms(m.clock)
    active = _readable(m, li, src, [r for r in rows if r[3] == ACTIVE], rep)
    if li.due("TopicConfigsSync", now):
        rep.configs_synced = sync_configs(m, li, src, active)
        m.links.record_run(li.name, "TopicConfigsSync", now)
    for r in active:
        try:
            copied, cuts = copy_records(m, li, src, r, max_records)
            rep.copied += copied
            rep.truncated += cuts
        except (KafkaError, sqlite3.Error) as err:
            rep.errors.append(f"{r[0]}: {err}")
    paused = [r for r in rows if r[3] == PAUSED and not (
        li.principal and link_read_denied(src.cluster, li.principal, r[2]))]
    if paused:
        try:
            record_source_ends(m, paused, src)
        except sqlite3.Error as err:
            rep.errors.append(f"{paused[0][0]}: {err}")
    if li.config.consumer_offset_sync_enable and li.due("ConsumerOffsetSync", now):
        readable = {r[0] for r in active}
        live = {r[0]: r[2] for r in m._rows(li.name) if r[3] == ACTIVE and r[0] in readable}
        if live:  # the period starts with the first mirror to sync offsets for
            _report_denied_groups(m, li, live, rep)
            rep.offsets_synced = write_offsets(m, li, live)
            m.links.record_run(li.name, "ConsumerOffsetSync", now)
    rep.acls_synced, acl_errors = step_acl_sync(m, li, state, now)  # whatever its mirrors
    rep.errors += [f"ACL sync: {e}" for e in acl_errors]
    named = {e.split(": ", 1)[0] for e in rep.errors}  # mirrors whose error is said already
    for r in m._rows(li.name):
        info = m._info(r, src)
        rep.lag += info.max_per_partition_mirror_lag
        # a mirror that copies nothing any more (FAILED), or will be once its source is gone
        # for the link's retry timeout, is the link's error: `replicate` exits 1 for it
        if r[0] in named:
            continue
        if info.mirror_status == FAILED or info.mirror_topic_error != NO_ERROR:
            rep.errors.append(f"{r[0]}: mirror {info.mirror_status} "
                              f"({info.mirror_topic_error})")
        elif info.mirror_status == ACTIVE and r[9] is not None:  # inside the retry timeout
            rep.errors.append(f"{r[0]}: {m.trouble(r, src, li.config.retry_timeout_ms, now)}")
    return rep


def _readable(m: MirrorState, li: Any, src: Any, rows: list[tuple], rep: LinkReport
              ) -> list[tuple]:
    """The ACTIVE mirror ``rows`` whose source topic the link may READ (source ACLs) and is
    still the topic mirrored (its topic id); the others copy nothing from now on (reported;
    FAILED after the retry timeout, :meth:`.mirror_state.MirrorState.refresh`)."""
    out = []
    for r in rows:
        why = link_read_denied(src.cluster, li.principal, r[2]) if li.principal else None
        if why is None and r[13]:
            try:
                if source_replaced(r, src.describe_topic(r[2])):
                    why = (f"source topic {r[2]} was deleted and created again (another "
                           "topic id): its records are not copied into this mirror, which "
                           "fails after cluster.link.retry.timeout.ms; to mirror the new "
                           f"topic, delete mirror topic {r[0]} and create it again, or keep "
                           "what it holds with mirrors failover")
            except KafkaError:
                pass  # gone: the statuses say so (SOURCE_TOPIC_MAY_BE_DELETED)
        if why is None:
            out.append(r)
        else:
            rep.errors.append(f"{r[0]}: {why}")
    return out


def _report_denied_groups(m: MirrorState, li: Any, live: dict[str, str], rep: LinkReport
                          ) -> None:
    """Groups whose offsets the link may not sync (no DESCRIBE on the group in the source):
    skipped by the sync (:func:`.mirror_copy.offsets_to_sync`), reported here and as the
    ConsumerOffsetSync task's errors (cleared once none is left)."""
    denied = sorted({g for source in live.values() for g in denied_groups(m, li, source)})
    errors = [{"error_code": "GROUP_AUTHORIZATION_FAILED",
               "error_message": f"Consumer offsets of group '{g}' not synced: the link's "
               f"principal {li.principal} needs the ACL DESCRIBE on the group in source "
               f"cluster {li.source_cluster}"} for g in denied]
    for e in errors:
        rep.errors.append(e["error_message"])
    task = next((t for t in li.tasks if t.task_name == "ConsumerOffsetSync"), None)
    if task is not None and [dict(e) for e in task.errors] != errors:
        m.links.set_task_errors(li.name, "ConsumerOffsetSync", errors)

