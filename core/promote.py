"""Promote and fail over a NATS mirror: the mirror becomes a normal stream.

Since nats-server 2.12 a stream update that REMOVES ``mirror`` promotes the mirror (the server
stops its mirror consumer; the messages stay at their sequences; the next publish gets
last_seq + 1). :func:`promote` does that update, with the checks an operator wants first:

- ``promote``: refused (:class:`PromoteRefused`) while the origin is reachable and the mirror
  lags behind it (lag > 0), unless ``force``.
- ``failover=True``: done whatever the lag or the origin's state (the origin's cluster is down,
  removed, or its stream is gone).

Subjects of the promoted stream: ``subjects`` when given (``[]``: the server's default, the
stream's name); otherwise the origin's subjects, as last stored in the origin cluster's
database, so the promoted stream takes over the origin's role. Without them (origin cluster or
stream gone) the server's default applies (``[<name>]``). A mirror with subject_transforms
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

Origin facts (reachable, last sequence, lag) are read from the store directly: the origin
lives in the mirror's cluster, or in the one named by ``mirror.external.api =
"$JS.<cluster>.API"``. Reachable = that cluster exists and is not marked down, and the stream
exists there. A down cluster's database is still read for the report (a down cluster is a
simulated outage; its store is on disk): ``origin_last_seq`` is its last sequence.
``lag`` = origin messages after the mirror's last sequence that match the mirror's
filter_subject / subject_transform sources (or its opt_start_seq / opt_start_time while the
mirror is empty), as the server's mirror lag counts them.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from . import streams as S
from .clock import Clock, parse_rfc3339_nano
from .config.stream import StreamConfig
from .errors import ApiError, JetlinkError, NotFoundError, nats_error
from .messages import StreamInfo
from .store import Cluster, DataDir

__all__ = ["Clamp", "OriginFacts", "PromoteRefused", "PromoteReport", "origin_facts", "promote"]


class PromoteRefused(JetlinkError):
    """Promotion refused: the origin is reachable and the mirror lags behind it."""

    title = "promote refused"

    def __init__(self, description: str, *, lag: int, mirror_last_seq: int,
                 origin_last_seq: int | None) -> None:
        super().__init__(description)
        self.lag = lag
        self.mirror_last_seq = mirror_last_seq
        self.origin_last_seq = origin_last_seq


@dataclass
class Clamp:
    """A consumer moved back to the promoted stream's last sequence."""

    consumer: str
    from_seq: int  # its highest stream position: start - 1, delivered or ack floor
    to_seq: int  # the stream's last sequence

    def to_json(self) -> dict[str, Any]:
        return {"consumer": self.consumer, "from": self.from_seq, "to": self.to_seq}


@dataclass
class OriginFacts:
    """What the store tells about a mirror's origin."""

    cluster: str
    stream: str
    reachable: bool
    error: str | None  # why it is not reachable
    last_seq: int | None  # None: unknown (cluster or stream gone)
    lag: int | None  # None: unknown
    subjects: list[str] | None  # None: unknown

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"stream": self.stream, "cluster": self.cluster,
                               "reachable": self.reachable}
        if self.error:
            out["error"] = self.error
        return out


@dataclass
class PromoteReport:
    """The outcome of :func:`promote` (``to_json``: docs/replication.md "Promote")."""

    cluster: str
    stream: str
    action: str  # "promote" | "failover"
    forced: bool
    origin: OriginFacts
    mirror_last_seq: int
    subjects: list[str]  # the promoted stream's subjects
    clamps: list[Clamp] = field(default_factory=list)
    info: StreamInfo | None = None  # the promoted stream (not in to_json)
    dry_run: bool = False  # nothing was changed: ``clamps`` are the clamps that would happen

    @property
    def origin_last_seq(self) -> int | None:
        return self.origin.last_seq

    @property
    def lag(self) -> int | None:
        return self.origin.lag

    def to_json(self) -> dict[str, Any]:
        return {
            "stream": self.stream,
            "cluster": self.cluster,
            "action": self.action,
            "dry_run": self.dry_run,
            "forced": self.forced,
            "origin": self.origin.to_json(),
            "mirror_last_seq": self.mirror_last_seq,
            "origin_last_seq": self.origin.last_seq,
            "lag": self.origin.lag,
            "subjects": list(self.subjects),
            "clamps": [c.to_json() for c in self.clamps],
        }


# --- the origin -------------------------------------------------------------------------------
def _mirror_filters(cfg: StreamConfig) -> list[str]:
    m = cfg.mirror
    if m is None:
        return []
    if m.subject_transforms:
        return [t.src or ">" for t in m.subject_transforms]
    return [m.filter_subject] if m.filter_subject else []


@contextlib.contextmanager
def _origin_snapshot(cluster: Cluster, clock: Clock, reachable: bool
                     ) -> Iterator[tuple[sqlite3.Connection, S.Catalog]]:
    if reachable:
        # Like any call on a live cluster: due expiry applied first.
        from .jetstream import JetStream

        with JetStream(cluster, clock).read() as snap:
            yield snap
    else:
        with cluster.read() as conn:  # a down cluster: read only
            yield conn, S.Catalog.load(conn, cluster.cache)


def origin_facts(datadir: DataDir, cluster: str, mirror_cfg: StreamConfig, mirror_last_seq: int,
                 clock: Clock) -> OriginFacts:
    """Reachability, last sequence, subjects and lag of the origin of ``mirror_cfg``."""
    m = mirror_cfg.mirror
    if m is None:
        raise JetlinkError(f"stream {mirror_cfg.name} is not a mirror")
    ocluster = m.domain or cluster
    facts = OriginFacts(ocluster, m.name, False, None, None, None, None)
    if not datadir.has_cluster(ocluster):
        facts.error = f"cluster {ocluster} not found"
        return facts
    oc = datadir.open(ocluster, create_local=False)
    down = oc.down
    with _origin_snapshot(oc, clock, not down) as (conn, catalog):
        d = catalog.by_name.get(m.name)
        if d is None:
            facts.error = f"stream {m.name} not found in cluster {ocluster}"
            return facts
        facts.subjects = list(d.cfg.subjects)
        facts.last_seq = conn.execute("SELECT last_seq FROM streams WHERE id = ?",
                                      (d.id,)).fetchone()[0]
        if mirror_last_seq > 0:
            start = mirror_last_seq + 1
        elif m.opt_start_seq > 0:
            start = m.opt_start_seq
        elif m.opt_start_time:
            start = S.seq_for_time(conn, d.id, parse_rfc3339_nano(m.opt_start_time))
            start = start or facts.last_seq + 1
        else:
            start = 1
        facts.lag = S.count_msgs(conn, d.id, start, _mirror_filters(mirror_cfg))
    if down:
        facts.error = f"cluster {ocluster} is down"
    else:
        facts.reachable = True
    return facts


# --- promote ----------------------------------------------------------------------------------
def _choose_subjects(cfg: StreamConfig, facts: OriginFacts,
                     subjects: Sequence[str] | None) -> tuple[list[str], bool]:
    """(subjects for the update, taken from the origin?)."""
    if subjects is not None:
        return [s for s in subjects if s], False
    m = cfg.mirror
    if m is not None and m.subject_transforms:
        raise JetlinkError(
            f"mirror {cfg.name} transforms its origin's subjects: give the promoted stream's "
            "subjects", field="subjects")
    if facts.subjects is None:
        return [], False  # the server's default: the stream's name
    return list(facts.subjects), True


def _beyond(st: Any) -> int:
    """A consumer's highest stream position: start - 1, delivered or ack floor."""
    return max(st.sseq - 1, st.delivered_s, st.ack_floor_s, st.asflr)


def _clamp_consumers(txn: S.Txn, stream: str, last: int, *, apply: bool = True
                     ) -> list[Clamp]:
    """The consumers of ``stream`` positioned beyond ``last``, moved back to it (``apply``:
    else only reported)."""
    from .consumer_store import StoreBackend

    backend = StoreBackend(txn)
    out: list[Clamp] = []
    for name, rec in backend.records(stream).items():
        st = rec.state
        beyond = _beyond(st)
        if beyond <= last:
            continue
        out.append(Clamp(name, beyond, last))
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


def promote(datadir: DataDir, cluster: str, stream: str, clock: Clock, *,
            subjects: Sequence[str] | None = None, force: bool = False,
            failover: bool = False, dry_run: bool = False) -> PromoteReport:
    """Turn the mirror ``stream`` of ``cluster`` into a normal stream (see the module doc).

    Raises NotFoundError (cluster), ApiError 10059 (stream), JetlinkError (not a mirror;
    subjects needed), :class:`PromoteRefused` (origin reachable, lag > 0, neither ``force``
    nor ``failover``), the update's ApiError (e.g. 10065 for subjects overlapping a stream).
    ``dry_run``: the refusal and the report (the clamps that would happen), nothing changed;
    the stream update itself is not tried (an overlap of subjects shows only when done).
    """
    from .jetstream import JetStream

    if not datadir.has_cluster(cluster):
        raise NotFoundError(f"cluster {cluster} not found")
    tc = datadir.open(cluster, create_local=False)
    js = JetStream(tc, clock)
    info = js.stream_info(stream)
    cfg = info.config
    if cfg.mirror is None:
        raise JetlinkError(f"stream {stream} is not a mirror")
    mirror_last = info.state.last_seq
    facts = origin_facts(datadir, cluster, cfg, mirror_last, clock)
    if facts.reachable and facts.lag and not (force or failover):
        raise PromoteRefused(
            f"mirror {stream} is {facts.lag} message{'s' if facts.lag != 1 else ''} behind its "
            f"origin {facts.stream} (cluster {facts.cluster}, last sequence {facts.last_seq}; "
            f"mirror at {mirror_last}): let it catch up, or force the promotion",
            lag=facts.lag, mirror_last_seq=mirror_last, origin_last_seq=facts.last_seq)
    new_subjects, from_origin = _choose_subjects(cfg, facts, subjects)
    action = "failover" if failover else "promote"
    forced = bool(force or failover) and bool(facts.reachable and facts.lag)
    if dry_run:
        with js.write() as txn:
            clamps = _clamp_consumers(txn, stream, mirror_last, apply=False)
        return PromoteReport(
            cluster=cluster, stream=stream, action=action, forced=forced, origin=facts,
            mirror_last_seq=mirror_last, subjects=new_subjects or [stream], clamps=clamps,
            info=info, dry_run=True)
    new_cfg = cfg.copy()
    new_cfg.mirror = None
    new_cfg.subjects = new_subjects
    with tc.transaction():
        try:
            promoted = js.update_stream(new_cfg)
        except ApiError as err:
            if from_origin and err.err_code == 10065:
                raise JetlinkError(
                    f"the origin's subjects {', '.join(new_subjects)} overlap with another "
                    f"stream of cluster {cluster}: give the promoted stream's subjects",
                    field="subjects") from err
            raise
        last = promoted.state.last_seq
        with js.write() as txn:
            if txn.catalog.by_name.get(stream) is None:  # pragma: no cover - same transaction
                raise nats_error("StreamNotFound")
            clamps = _clamp_consumers(txn, stream, last)
    final = js.stream_info(stream)
    return PromoteReport(
        cluster=cluster, stream=stream, action=action, forced=forced, origin=facts,
        mirror_last_seq=mirror_last, subjects=list(final.config.subjects), clamps=clamps,
        info=final)
