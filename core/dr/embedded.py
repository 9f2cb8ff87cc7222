"""The embedded engine as the place a mirror is promoted: :class:`EmbeddedSite`, a cluster
of a data directory as core/dr/rules.py's ``Site`` (that module's opening has the rules:
refusal, subjects, consumer placement, clamps; its ``promote`` is the one entry point).

Since nats-server 2.12 a stream update that REMOVES ``mirror`` promotes the mirror (the server
stops its mirror consumer; the messages stay at their sequences; the next publish gets
last_seq + 1). A promotion at this site does that update, with the checks an operator wants
first:

- ``promote``: refused (:class:`PromoteRefused`) while the origin is reachable and the mirror
  lags behind it (lag > 0), and while it does not answer.
- ``failover=True``: done whatever the lag or the origin's state (the origin's cluster is down,
  removed, or its stream is gone), once the subjects are known.

Subjects of the promoted stream: ``subjects`` when given (``[]``: the server's default, the
stream's name); otherwise the origin's subjects, as last stored in the origin cluster's
database (or as last synced to the mirror's side while it is down), so the promoted stream
takes over the origin's role. Without them (origin cluster or stream gone, no positions
synced, no topology naming it) the promotion is refused, asking for ``subjects``; the
server's default is never taken silently. A mirror with subject_transforms
stores transformed subjects: it needs ``subjects``. The origin's subjects overlapping another
stream of the mirror's cluster (e.g. the origin itself, in the same cluster): refused, give
``subjects``.

After the update, durable consumers of the promoted stream whose position lies beyond its last
sequence L (a start sequence ``opt_start_seq`` past the end, or delivered / ack floor copied
from elsewhere) are clamped to L: next sequence L + 1, delivered and ack floor at most L,
pending deliveries beyond L dropped. On a real server such a consumer would silently skip
the new messages L + 1 .. its start (checked on 2.15.1: a consumer created with
opt_start_seq 100 on a 5-message mirror still shows delivered 99 after promotion and a
publish at 6). Everything (update + clamps) is one transaction of the mirror's cluster.

Origin facts (reachable, last sequence, subjects, pending) are read from the store directly:
the origin lives in the mirror's cluster, or in the one named by ``mirror.external.api =
"$JS.<cluster>.API"``. Reachable = that cluster exists and is not marked down, and the stream
exists there. A down cluster is an outage: it is not looked into (its files are on disk, but
a mirror's side could not read them), exactly as a live origin that does not answer; its last
sequence and subjects then come from the positions synced to the mirror's side, if any.
``pending`` = origin messages after the mirror's last sequence that match the mirror's
filter_subject / subject_transform sources (or its opt_start_seq / opt_start_time while the
mirror is empty). The report's ``lag`` is the mirror's own, as stream info shows it.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from .. import streams as S
from ..clock import Clock, parse_rfc3339_nano
from ..config.stream import StreamConfig
from ..errors import JetlinkError, NotFoundError, nats_error, not_found
from ..messages import StreamInfo
from ..store import Cluster, DataDir
from ..store.health import StorageError, unusable
from .rules import (
    OriginFacts,
    OwnConsumer,
    PositionClamp,
    _was_mirror,
    beyond_position,
    lag_start,
    mirror_filters,
)

__all__ = ["EmbeddedSite", "origin_facts"]


# --- the origin -------------------------------------------------------------------------------
@contextlib.contextmanager
def _origin_snapshot(cluster: Cluster, clock: Clock
                     ) -> Iterator[tuple[sqlite3.Connection, S.Catalog]]:
    # Like any call on a live cluster: due expiry applied first.
    from ..jetstream import JetStream

    with JetStream(cluster, clock).read() as snap:
        yield snap


def origin_facts(datadir: DataDir, cluster: str, mirror_cfg: StreamConfig, mirror_last_seq: int,
                 clock: Clock, *, count_pending: bool = True) -> OriginFacts:
    """Reachability, last sequence, subjects and pending messages of the origin of
    ``mirror_cfg`` (only reachability when its cluster is down)."""
    m = mirror_cfg.mirror
    if m is None:
        raise JetlinkError(f"stream {mirror_cfg.name} is not a mirror")
    ocluster = m.domain or cluster
    facts = OriginFacts(ocluster, m.name, False, None, None, None, None)
    if not datadir.has_cluster(ocluster):
        facts.error = f"cluster {ocluster} not found"
        return facts
    try:
        oc = datadir.open(ocluster, create_local=False)
        down = oc.down
    except StorageError:  # a region that failed may be damaged too: it does not answer
        facts.error = unusable(ocluster)
        return facts
    if down:
        facts.error = f"cluster {ocluster} is down"
        return facts
    with _origin_snapshot(oc, clock) as (conn, catalog):
        d = catalog.by_name.get(m.name)
        if d is None:
            facts.error = f"stream {m.name} not found in cluster {ocluster}"
            return facts
        facts.read_config(d.cfg)
        facts.last_seq = conn.execute("SELECT last_seq FROM streams WHERE id = ?",
                                      (d.id,)).fetchone()[0]
        if count_pending:
            start, start_time = lag_start(mirror_cfg, mirror_last_seq)
            if start_time is not None:
                start = S.seq_for_time(conn, d.id, parse_rfc3339_nano(start_time))
                start = start or facts.last_seq + 1
            facts.pending = S.count_msgs(conn, d.id, start, mirror_filters(mirror_cfg))
    facts.reachable = True
    return facts


# --- the mirror's own consumers ----------------------------------------------------------------
def _clamp_consumers(txn: S.Txn, stream: str, last: int, *, apply: bool = True
                     ) -> list[PositionClamp]:
    """The consumers of ``stream`` positioned beyond ``last``, moved back to it (``apply``:
    else only reported)."""
    from ..consumer_store import SqlConsumerStore

    backend = SqlConsumerStore(txn)
    out: list[PositionClamp] = []
    for name, rec in backend.records(stream).items():
        st = rec.state
        beyond = beyond_position(st.sseq, st.delivered_s, st.ack_floor_s, st.asflr)
        if beyond <= last:
            continue
        out.append(PositionClamp(name, beyond, last, stream))
        if not apply:
            continue
        st.sseq = min(st.sseq, last + 1)
        st.asflr = min(st.asflr, last)
        st.delivered_s = min(st.delivered_s, last)
        st.ack_floor_s = min(st.ack_floor_s, last)
        for seq in [s for s in st.pending if s > last]:
            del st.pending[seq]
            st.rdc.pop(seq, None)
        st.rdq[:] = [s for s in st.rdq if s <= last]
        st.lss[:] = [s for s in st.lss if s <= last]
        st.lss_resume = min(st.lss_resume, last)
        if not st.pending:
            st.adflr, st.asflr = st.dseq - 1, st.sseq - 1
        backend.save(stream, rec)
    return out


# --- the site -----------------------------------------------------------------------------------
_PROMOTIONS: Any = None  # a WeakKeyDictionary: DataDir -> (its writes' count, the map)


def _promotions(dd: DataDir, clock: Clock) -> dict[tuple[str, str], list[str]]:
    """(origin stream, origin cluster) -> the streams (``NAME@CLUSTER``) a failover promoted
    from it that are primaries still (no mirror again), over every cluster of ``dd`` that
    can be read; made again when this process wrote through ``dd`` since."""
    import weakref

    from ..jetstream import JetStream
    from ..replication import origin_cluster

    global _PROMOTIONS
    if _PROMOTIONS is None:
        _PROMOTIONS = weakref.WeakKeyDictionary()
    names = dd.cluster_names()
    writes = 0
    for n in names:
        try:
            writes += dd.open(n, create_local=False).changes
        except JetlinkError:
            continue  # (damaged: read below, passed over)
    version = (tuple(names), writes)
    cached = _PROMOTIONS.get(dd)
    if cached is not None and cached[0] == version:
        found: dict[tuple[str, str], list[str]] = cached[1]
        return found
    out: dict[tuple[str, str], list[str]] = {}
    for name in names:
        try:
            infos = JetStream(dd.open(name, create_local=False), clock).streams()
        except JetlinkError:
            continue  # a cluster that cannot be read has no primary to count
        for info in infos:
            was = _was_mirror(info.config) if info.config.mirror is None else None
            if was is None or was[0].mirror is None:  # (the one reading of the record)
                continue
            key = (was[0].mirror.name, origin_cluster(was[0].mirror, name)[0])
            out.setdefault(key, []).append(f"{info.config.name}@{name}")
    _PROMOTIONS[dd] = (version, out)
    return out


class EmbeddedSite:
    """A cluster of a data directory as the place a mirror is promoted (core/dr/rules.py
    ``Site``): the origin is read from its cluster's database (a cluster marked down is not
    reachable; its last sequence is still reported, as last known), and the update and the
    clamps of the mirror's own consumers are one transaction."""

    catch_up = "jetlink replicate"

    def __init__(self, datadir: DataDir, cluster: str, clock: Clock) -> None:
        from ..jetstream import JetStream

        if not datadir.has_cluster(cluster) and cluster != "local":
            raise not_found(NotFoundError(f"cluster {cluster} not found", field="cluster"),
                            cluster, datadir.cluster_names())
        self.datadir = datadir
        self.cluster = self.label = cluster
        self.clock = clock
        self._tc = datadir.open(cluster, create_local=cluster == "local")
        self.js = JetStream(self._tc, clock)

    def now_ns(self) -> int:
        return self.clock.now_ns()

    def subject_streams(self) -> dict[str, StreamConfig]:
        return {i.config.name: i.config for i in self.js.streams() if i.config.subjects}

    def other_primaries(self, mirror: Any) -> list[str]:
        """(rules.py ``Site``) the other clusters of the data directory read for streams a
        failover promoted from the same origin: every cluster read once per data directory
        and its writes (:func:`_promotions`), not once per mirror asked about (a region's
        check of thousands of mirrors)."""
        from ..replication import origin_cluster

        found = _promotions(self.datadir, self.clock)
        return [n for n in found.get((mirror.name, origin_cluster(mirror, self.cluster)[0]),
                                     []) if n.rpartition("@")[2] != self.cluster]

    def origin(self, cfg: StreamConfig, mirror_last: int, *, count_pending: bool = True
               ) -> tuple[OriginFacts, Any]:
        from ..jetstream import JetStream

        facts = origin_facts(self.datadir, self.cluster, cfg, mirror_last, self.clock,
                             count_pending=count_pending)
        if not facts.reachable:
            return facts, None
        return facts, JetStream(self.datadir.open(facts.cluster, create_local=False),
                                self.clock)

    def cut_off(self) -> str | None:
        """(rules.py ``Site``) this cluster marked down: partitioned, nothing in or out."""
        return f"cluster {self.cluster}, the mirror's, is down" if self._tc.down else None

    def own_clamps(self, stream: str, last: int) -> list[PositionClamp]:
        from ..consumer_store import has_schema

        if not has_schema(self.js.cluster.conn):
            return []  # no consumer was ever made here: none to clamp, and no write
        with self.js.write() as txn:
            return _clamp_consumers(txn, stream, last, apply=False)

    def own_plan(self, stream: str, last: int) -> list[OwnConsumer]:
        return []  # the update and the clamps are one transaction: nothing is left half done

    def finish_own(self, stream: str, last: int, plan: Sequence[OwnConsumer]
                   ) -> list[PositionClamp]:
        return []

    def promote_update(self, cfg: StreamConfig, last: int
                       ) -> tuple[StreamInfo, list[PositionClamp]]:
        with self._tc.transaction():
            promoted = self.js.update_stream(cfg)
            with self.js.write() as txn:
                if txn.catalog.by_name.get(cfg.name) is None:  # pragma: no cover
                    raise nats_error("StreamNotFound")
                clamps = _clamp_consumers(txn, cfg.name, int(promoted.state.last_seq))
        return self.js.stream_info(cfg.name), clamps

    # -- failback (core/dr/failback.py) --------------------------------------------------------
    def side(self, cfg: StreamConfig) -> EmbeddedSite:
        m = cfg.mirror
        if m is None:
            raise JetlinkError(f"stream {cfg.name} is not a mirror")
        ocluster = m.domain or self.cluster
        if not self.datadir.has_cluster(ocluster):
            raise not_found(NotFoundError(f"cluster {ocluster} not found", field="cluster"),
                            ocluster, self.datadir.cluster_names())
        return type(self)(self.datadir, ocluster, self.clock)

    def source_for(self, stream: str, at: Any) -> dict[str, Any]:
        if getattr(at, "cluster", None) == self.cluster:
            return {"name": stream}
        return {"name": stream, "external": {"api": f"$JS.{self.cluster}.API"}}

    def kv(self) -> Any:
        from ..kv import KV

        return KV(self.datadir, self.cluster, self.clock)

    def agreed_prefix(self, stream: str, promoted: Any, name: str, last: int,
                      shown: tuple[str, str]) -> Any:
        from .reuse import agreed_prefix

        return agreed_prefix(self.js.cluster, stream, promoted.js.cluster, name, last, shown)

    def reuse_as_mirror(self, cfg: StreamConfig, reuse: Any) -> None:
        from .reuse import reuse_as_mirror

        reuse_as_mirror(self.js, cfg, reuse)

    def settle(self, stream: str, upto: int, timeout: float) -> int:
        from ..replication import pump_until_idle

        # only this stream's agreements: a wait for one mirror does not copy every other
        # (a region's failback waits once per object)
        pump_until_idle(self.datadir, self.clock, clusters=[self.cluster], streams=[stream])
        return int(self.js.stream_info(stream).state.last_seq)
