"""What the dashboard shows: one :class:`Snapshot` of a data directory (or of a live
server's JetStream domain: :func:`load_live`), read through core.

:func:`load` reads every cluster of the data directory with the same core calls the CLI's
``cluster ls``, ``stream info``, ``kv ls``, ``links ls``, ``mirrors describe`` and ``group
describe`` make, and keeps the documents those commands print with ``--json`` (the detail
view shows them). It runs in a worker thread of the dashboard, never on the UI thread, on
its own connections (a DataDir opened and closed per load). :class:`Rates` turns successive
snapshots into the message rates the sparklines draw.

No Textual here: the data layer is tested on its own and used by ``dashboard --json``.
"""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Container, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.core.clock import Clock
    from jetlink.core.store import DataDir

# How many rate samples a sparkline keeps (one per refresh).
SPARK_SAMPLES = 12
# The span a stream's rate averages over. Messages land in bursts (a client's batch, the
# replication step that copies into a mirror, a server flushing its mirror consumer), so the
# growth between two refreshes a second apart reads 0/s, then a burst, then 0/s again under
# a steady load; over 10 s of loads a steady 150 msg/s reads as that.
RATE_WINDOW_NS = 10 * 1_000_000_000
_BARS = "▁▂▃▄▅▆▇█"


@dataclass
class ClusterRow:
    name: str
    kind: str
    down: bool
    streams: int = 0
    buckets: int = 0
    topics: int = 0
    links: int = 0
    error: str = ""  # why the cluster could not be read
    doc: dict[str, Any] = field(default_factory=dict)
    answers: bool = True  # False: a live server that does not answer (``error`` says why)

    @property
    def key(self) -> str:
        return self.name

    @property
    def damaged(self) -> bool:
        """Its database could not be used at all (no kind read), as cluster ls lists it."""
        return bool(self.error and not self.kind)


@dataclass
class AgreementRow:
    """One mirror or source agreement of a stream (StreamSourceInfo)."""

    cluster: str
    stream: str
    kind: str  # mirror | source | promoted (a failed-over stream whose old origin is back)
    origin: str  # ORIGIN or ORIGIN@CLUSTER
    lag: int
    active_ns: int  # since the origin was last seen (-1: never)
    error: str
    stale: bool = False  # the lag is as last reported long ago (core/monitor/lag.py)

    @property
    def key(self) -> str:
        return f"{self.cluster}/{self.stream}/{self.kind}/{self.origin}"


@dataclass
class StreamRow:
    cluster: str
    name: str
    subjects: list[str]
    messages: int
    bytes: int
    first_seq: int
    last_seq: int
    role: str  # stream | mirror | sourced
    doc: dict[str, Any]  # StreamInfo
    consumers: int = 0

    @property
    def key(self) -> str:
        return f"{self.cluster}/{self.name}"


@dataclass
class BucketRow:
    cluster: str
    bucket: str
    kind: str  # bucket | mirror | aggregate
    values: int
    history: int
    ttl_ns: int
    origins: list[str]  # mirror / aggregate origins, as BUCKET or BUCKET@CLUSTER
    doc: dict[str, Any]  # KVStatus

    @property
    def key(self) -> str:
        return f"{self.cluster}/{self.bucket}"


@dataclass
class LinkRow:
    cluster: str
    name: str
    source: str
    state: str
    error: str
    mirrors: int
    doc: dict[str, Any]  # REST v3 link data with configs

    @property
    def key(self) -> str:
        return f"{self.cluster}/{self.name}"


@dataclass
class MirrorRow:
    """One partition of a mirror topic (the topic's first row carries its name)."""

    cluster: str
    topic: str
    link: str
    source_topic: str
    status: str
    error: str
    status_time_ms: int
    partition: int
    lag: int
    last_fetch_offset: int
    doc: dict[str, Any]  # REST v3 mirror data

    @property
    def key(self) -> str:
        return f"{self.cluster}/{self.topic}/{self.partition}"


@dataclass
class GroupRow:
    """One committed partition of a consumer group (a group without offsets: one row)."""

    cluster: str
    group: str
    state: str
    topic: str
    partition: int | None
    offset: int | None
    log_end: int | None
    lag: int | None
    doc: dict[str, Any]  # the group as group describe --json

    @property
    def key(self) -> str:
        return f"{self.cluster}/{self.group}/{self.topic}/{self.partition}"


@dataclass
class RegionObject:
    """One object of a region (core/dr/region.py): a mirror on a side whose origin is in
    the region, or one failed over from it, with what ``dr check`` said of it."""

    side: str  # the cluster (embedded) or JetStream domain it is on
    region: str  # its origin's cluster or domain (core/dr/fence.py ``region_of``)
    kind: str  # "stream" | "kv" | "topic"
    name: str  # as its verb takes it: STREAM, BUCKET, LINK/TOPIC
    failed_over: bool  # promoted (its promotion record), or a stopped mirror topic
    status: str = ""  # dr check's grade of a mirror ("" not checked)
    messages: int | None = None  # its recovery point: messages a failover now loses
    seconds: float | None = None  # and the age of the oldest of them (None: unknown)
    returned: str = ""  # its old origin back: "split brain", "unfenced" or "fenced"
    # what dr check calls a split brain (core/dr/readiness.py MirrorReadiness.split_brain):
    # an old source topic back unfenced is one too
    split_brain: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "side": self.side,
                "failed_over": self.failed_over, "status": self.status or None,
                "recovery_point": {"messages": self.messages, "seconds": self.seconds},
                "old_origin": self.returned or None, "split_brain": self.split_brain}


@dataclass
class RegionRow:
    """A region as the Regions tab shows it: its objects counted (:meth:`Snapshot.regions`).
    Ready: a mirror ``dr check`` grades OK or WARNING (``dr failover --skip-unready``
    leaves the CRITICAL ones out)."""

    name: str
    down: bool | None  # its cluster taken down (embedded); None: no cluster of that name
    objects: list[RegionObject] = field(default_factory=list)
    # False when the readiness checks could not be made: grades, old origins back and the
    # recovery point are unknown (None), never counted as not ready or none
    graded: bool = True

    @property
    def key(self) -> str:
        return self.name

    def count(self, test: Any) -> int:
        return sum(1 for o in self.objects if test(o))

    @property
    def mirrors(self) -> int:
        return self.count(lambda o: not o.failed_over)

    @property
    def failed_over(self) -> int:
        return self.count(lambda o: o.failed_over)

    @property
    def ready(self) -> int | None:
        if not self.graded:
            return None
        return self.count(lambda o: not o.failed_over and o.status in ("OK", "WARNING"))

    @property
    def not_ready(self) -> int | None:
        ready = self.ready
        return None if ready is None else self.mirrors - ready

    @property
    def messages_at_risk(self) -> int | None:
        """As the region plan's totals: the mirrors' messages not copied, summed."""
        if not self.graded:
            return None
        return sum(o.messages or 0 for o in self.objects if not o.failed_over)

    @property
    def worst_seconds(self) -> float | None:
        """The oldest message a failover now loses, in seconds; None (unknown) when a mirror
        has an unknown one (never heard from its origin: core/dr/recovery.py), as the
        region plan's totals say "unknown"."""
        mirrors = [o for o in self.objects if not o.failed_over]
        if not self.graded or any(o.seconds is None for o in mirrors):
            return None
        return max((o.seconds for o in mirrors if o.seconds is not None), default=None)

    def returned(self, state: str) -> int | None:
        return self.count(lambda o: o.returned == state) if self.graded else None

    @property
    def split_brains(self) -> int | None:
        """Its objects ``dr check`` grades CRITICAL as a split brain (None: not graded)."""
        return self.count(lambda o: o.split_brain) if self.graded else None

    @property
    def unfenced(self) -> int | None:
        """Old origins back unfenced that are no split brain (they take other subjects)."""
        if not self.graded:
            return None
        return self.count(lambda o: o.returned == "unfenced" and not o.split_brain)

    @property
    def doc(self) -> dict[str, Any]:
        return self.to_json()

    def to_json(self) -> dict[str, Any]:
        return {"region": self.name, "down": self.down, "objects": len(self.objects),
                "mirrors": self.mirrors, "failed_over": self.failed_over,
                "ready": self.ready, "not_ready": self.not_ready,
                "messages_at_risk": self.messages_at_risk,
                "recovery_point_seconds": self.worst_seconds,
                "fenced": self.returned("fenced"), "split_brain": self.split_brains,
                "unfenced": self.unfenced,
                "members": [o.to_json() for o in self.objects]}


@dataclass
class Snapshot:
    taken_ns: int
    clusters: list[ClusterRow] = field(default_factory=list)
    streams: list[StreamRow] = field(default_factory=list)
    agreements: list[AgreementRow] = field(default_factory=list)
    buckets: list[BucketRow] = field(default_factory=list)
    links: list[LinkRow] = field(default_factory=list)
    mirrors: list[MirrorRow] = field(default_factory=list)
    groups: list[GroupRow] = field(default_factory=list)
    # each mirror's readiness for a failover now (core/dr/readiness.py, as `dr check`):
    # (cluster, stream or mirror topic) -> "STATUS" or "STATUS: first reason"
    readiness: dict[tuple[str, str], str] = field(default_factory=dict)
    # the same checks whole (their facts: the recovery point, an old origin back)
    checks: dict[tuple[str, str], Any] = field(default_factory=dict)
    # every object of a region on the sides read (:func:`add_regions`)
    region_objects: list[RegionObject] = field(default_factory=list)
    # what this snapshot could not read, said on the status line (and in --json)
    problems: list[str] = field(default_factory=list)
    graded: bool = True  # the readiness checks were made (False: grades unknown)

    def regions(self, side: str | None = None) -> list[RegionRow]:
        """One row per region, of the objects on ``side`` (None: on every side)."""
        down = {c.name: c.down for c in self.clusters}
        rows: dict[str, RegionRow] = {}
        for o in self.region_objects:
            if side is None or o.side == side:
                rows.setdefault(o.region, RegionRow(o.region, down.get(o.region),
                                                    graded=self.graded)).objects.append(o)
        return [rows[name] for name in sorted(rows)]

    def to_json(self) -> dict[str, Any]:
        """The documents behind the tables (``dashboard --json``), per cluster; the
        regions."""
        from jetlink.core.clock import format_rfc3339_nano

        out: dict[str, Any] = {"time": format_rfc3339_nano(self.taken_ns), "clusters": [],
                               "regions": [r.to_json() for r in self.regions()],
                               "problems": list(self.problems)}
        for c in self.clusters:
            doc = dict(c.doc)
            doc["error"] = c.error or None
            doc["streams"] = [s.doc for s in self.streams if s.cluster == c.name]
            doc["kv"] = [b.doc for b in self.buckets if b.cluster == c.name]
            doc["links"] = [lk.doc for lk in self.links if lk.cluster == c.name]
            seen: dict[str, dict[str, Any]] = {}
            for m in self.mirrors:
                if m.cluster == c.name:
                    seen.setdefault(m.topic, m.doc)
            doc["mirrors"] = list(seen.values())
            groups: dict[str, dict[str, Any]] = {}
            for g in self.groups:
                if g.cluster == c.name:
                    groups.setdefault(g.group, g.doc)
            doc["groups"] = list(groups.values())
            out["clusters"].append(doc)
        return out


def _error_text(err: Any) -> str:
    """A StreamSourceInfo ``error`` ({code, err_code, description}) as one line."""
    if not err:
        return ""
    if isinstance(err, dict):
        return str(err.get("description") or err)
    return str(err)


def _origin(src: Any) -> str:
    """A StreamSource as ORIGIN, or ORIGIN@CLUSTER when it names a domain (a cluster)."""
    return f"{src.name}@{src.domain}" if src.domain else src.name


def _origins(cfg: Any) -> list[Any]:
    """A stream config's agreements in StreamInfo's order: its mirror, else its sources."""
    return [cfg.mirror] if cfg.mirror is not None else list(cfg.sources)


def _load_nats(dd: DataDir, row: ClusterRow, clock: Clock, snap: Snapshot) -> None:
    from jetlink.core.jetstream import JetStream

    js = JetStream(dd.open(row.name, create_local=False), clock)
    _add_streams(row, js.streams(), snap)


def _add_streams(row: ClusterRow, infos: list[Any], snap: Snapshot) -> None:
    """The streams, their agreements and the KV buckets among them, of one cluster or
    domain (StreamInfos of either backend)."""
    from jetlink.core.kv import kv_statuses
    from jetlink.core.monitor.lag import lag_reading

    for info in infos:
        doc = info.to_json()
        cfg, st = doc["config"], doc.get("state") or {}
        mirror, sources = doc.get("mirror"), doc.get("sources") or []
        role = "mirror" if cfg.get("mirror") else "sourced" if cfg.get("sources") else "stream"
        snap.streams.append(StreamRow(
            row.name, cfg["name"], list(cfg.get("subjects") or []), st.get("messages", 0),
            st.get("bytes", 0), st.get("first_seq", 0), st.get("last_seq", 0), role, doc,
            st.get("consumer_count", 0)))
        kind = "mirror" if mirror else "source"
        for src, src_info in zip(_origins(info.config), [mirror] if mirror else sources,
                                 strict=False):  # a StreamInfo may lack them (None / [])
            snap.agreements.append(AgreementRow(
                row.name, cfg["name"], kind, _origin(src), src_info.get("lag", 0),
                src_info.get("active", -1), _error_text(src_info.get("error")),
                lag_reading(src_info).stale))
    row.streams = sum(1 for s in snap.streams if s.cluster == row.name)
    for status in kv_statuses(infos):  # KV(...).statuses() without reading them again
        doc = status.to_json()
        origins = [_origin(s) for s in _origins(status.config)]
        snap.buckets.append(BucketRow(row.name, status.bucket, status.kind, status.values,
                                      status.history, status.ttl, origins, doc))
    row.buckets = sum(1 for b in snap.buckets if b.cluster == row.name)


def load_live(js: Any, clock: Clock, last: Snapshot | None = None) -> Snapshot:
    """A snapshot of a live server's JetStream domain (one connection, ``js``): its streams
    with the server's own mirror / source infos (lag, last seen, error), KV buckets and
    consumer counts. The "cluster" row is the domain (or the server's URL without one); a
    server that does not answer is that row's error (:func:`unanswered`, ``last``: the
    last snapshot it answered)."""
    from jetlink.core.errors import JetlinkError

    target = js.conn.target
    try:
        domain = str(js.api("INFO").get("domain", "") or "")
    except JetlinkError as err:
        return unanswered(target.shown_url, err, clock, last)
    snap = Snapshot(taken_ns=clock.now_ns())
    name = domain or target.shown_url
    row = ClusterRow(name, "nats", False, doc={"name": name, "kind": "nats",
                                               "server": target.shown_url, "domain": domain})
    snap.clusters.append(row)
    try:
        _add_streams(row, js.streams(), snap)
    except JetlinkError as err:
        row.error = str(err)
    return snap


def unanswered(url: str, err: Exception, clock: Clock, last: Snapshot | None = None
               ) -> Snapshot:
    """A live server that does not answer (its connection refused, a request timed out):
    its row, named as when it last answered (its domain), with the error and no counts;
    the other tables keep ``last``, the last snapshot it answered (its time the status
    line's "updated"), said stale in ``problems``."""
    from dataclasses import replace
    from datetime import UTC, datetime

    name = last.clusters[0].name if last is not None and last.clusters else url
    row = ClusterRow(name, "nats", False, error=str(err), answers=False,
                     doc={"name": name, "kind": "nats", "server": url})
    if last is None:
        return Snapshot(taken_ns=clock.now_ns(), clusters=[row],
                        problems=[f"{url} does not answer"])
    when = datetime.fromtimestamp(last.taken_ns / 1e9, UTC)
    return replace(last, clusters=[row], problems=[
        f"{url} does not answer: the tables show what it said at {when:%H:%M:%S}Z"])


def _load_kafka(dd: DataDir, row: ClusterRow, clock: Clock, snap: Snapshot) -> None:
    """Topics, links, mirror topics and groups of a cluster that has any (a cluster of
    either kind may hold them; nothing is created in one that has none). A link whose
    source cluster cannot be read (damaged) is UNAVAILABLE, its mirror topics
    SOURCE_UNAVAILABLE (core/kafka/links.py): the cluster's own rows are shown all the
    same."""
    from jetlink.core.kafka import links as kl
    from jetlink.core.kafka import mirrors as km
    from jetlink.core.kafka.topics import Kafka

    cl = dd.open(row.name, create_local=False)
    tables = cl.table_names()
    if "topics" not in tables and "links" not in tables:
        return
    kafka = Kafka(cl, clock)
    row.topics = len(kafka.topic_names())
    links = kl.Links.open(dd, cl, clock).list() if "links" in tables else []
    row.links = len(links)
    for li in links:
        snap.links.append(LinkRow(row.name, li.name, li.source_cluster, li.state,
                                  li.link_error_message or ("" if li.link_error == kl.NO_ERROR
                                                            else li.link_error),
                                  len(li.topic_names), li.to_json(include_configs=True)))
    if links:
        for m in km.Mirrors(dd, row.name, clock).list():
            doc = m.to_json()
            for p in m.mirror_lags or []:
                snap.mirrors.append(MirrorRow(
                    row.name, m.mirror_topic_name, m.link_name, m.source_topic_name,
                    m.mirror_status, "" if m.mirror_topic_error == km.NO_ERROR
                    else m.mirror_topic_error, m.status_time_ms, p.partition, p.lag,
                    p.last_source_fetch_offset, doc))
    for g in kafka.groups():
        doc = g.to_json()
        if not g.offsets:
            snap.groups.append(GroupRow(row.name, g.group, g.state, "", None, None, None,
                                        None, doc))
        for o in g.offsets:
            snap.groups.append(GroupRow(row.name, g.group, g.state, o.topic, o.partition,
                                        o.committed, o.log_end, o.lag, doc))


def add_readiness(snap: Snapshot, backend: Any, clock: Clock) -> Snapshot:
    """Each mirror's readiness (core/dr/readiness.py ``check_readiness``, what ``dr check``
    prints) into ``snap.readiness``; a check that fails leaves the column empty."""
    import sqlite3

    from jetlink.core.dr import check_readiness
    from jetlink.core.errors import JetlinkError

    try:
        readiness = check_readiness(backend, clock=clock)
        found = readiness.mirrors
        # what the checks could not read (a damaged cluster's mirrors): dr check's CRITICAL
        snap.problems += [f"failover readiness: {f}" for f in readiness.failures]
    except (JetlinkError, sqlite3.Error) as err:
        # the regions' objects are still listed, their grades unknown, and it is said
        found = []
        snap.graded = False
        snap.problems.append(f"the failover readiness could not be checked ({err}): "
                             "grades and regions unknown")
    only = snap.clusters[0].name if len(snap.clusters) == 1 else ""
    for m in found:
        name = m.facts.get("stream") or m.facts.get("topic")
        if name:
            snap.readiness[(m.cluster or only, name)] = m.summary()
            snap.checks[(m.cluster or only, name)] = m
        back = m.facts.get("returned_origin")
        stream = m.facts.get("stream")  # (a mirror topic's is on the Links tab)
        if stream and back is not None:  # a failed-over stream whose old origin is back
            snap.agreements.append(AgreementRow(
                m.cluster or only, stream, "promoted", f"{back['origin']}@{back['region']}",
                0, -1, ""))
    add_regions(snap)
    return snap


def add_regions(snap: Snapshot) -> Snapshot:
    """The objects of every region (``snap.region_objects``) as ``dr failover|failback
    --from REGION`` finds them (core/dr/region.py): on each side, the mirror streams, KV
    mirror buckets and mirror topics whose origin is in another region, and those failed
    over from one; each with the grade, recovery point and returned old origin of the
    readiness checks already read (``snap.checks``), nothing read again."""
    from jetlink.core.config.kv import bucket_of_stream
    from jetlink.core.config.stream import StreamConfig
    from jetlink.core.dr.fence import region_of
    from jetlink.core.dr.region import mirrored_from
    from jetlink.core.errors import JetlinkError
    from jetlink.core.kafka.mirror_model import STOPPED

    # the sides a region plan takes objects on (core/dr/fence.py ``sides_of``): the clusters
    # that are up (a live server's one domain); streams on the NATS ones, mirror topics on
    # every one with links
    up = {c.name for c in snap.clusters if not c.down}
    sides = {c.name for c in snap.clusters if c.kind == "nats" and c.name in up}
    for s in snap.streams:
        try:
            cfg = StreamConfig.from_json(dict(s.doc.get("config") or {}), strict=False)
        except JetlinkError:
            continue
        mirrored = mirrored_from(cfg) if s.cluster in sides else None
        if mirrored is None:
            continue
        kind, src, promoted = mirrored
        region = region_of(s.cluster, src)
        if region != s.cluster:
            name = (bucket_of_stream(cfg.name) or cfg.name) if kind == "kv" else cfg.name
            snap.region_objects.append(_graded(RegionObject(
                s.cluster, region, kind, name, promoted), snap.checks.get((s.cluster, s.name))))
    sources = {(lk.cluster, lk.name): lk.source for lk in snap.links}
    topics: set[tuple[str, str]] = set()
    for m in snap.mirrors:
        region = sources.get((m.cluster, m.link))
        if m.cluster in up and region and (m.cluster, m.topic) not in topics:
            topics.add((m.cluster, m.topic))
            snap.region_objects.append(_graded(RegionObject(
                m.cluster, region, "topic", f"{m.link}/{m.topic}", m.status == STOPPED),
                snap.checks.get((m.cluster, m.topic))))
    return snap


def _graded(o: RegionObject, check: Any) -> RegionObject:
    """``o`` with its readiness check's facts (None: not checked)."""
    if check is None:
        return o
    back = check.facts.get("returned_origin")
    if back is not None:  # a failed-over object whose old origin answers again
        o.returned = str(back.get("state") or "")
        o.split_brain = check.split_brain
        return o
    rp = check.facts.get("recovery_point") or {}
    o.status, o.messages, o.seconds = check.status.value, rp.get("messages"), rp.get("seconds")
    return o


def load(path: Path, clock: Clock, *, clusters: Container[str] | None = None) -> Snapshot:
    """A snapshot of the data directory at ``path`` (nothing is created when it does not
    exist), of the clusters named in ``clusters`` (None: every one). A cluster that cannot be
    read gets its ``error``; sqlite3.OperationalError (a locked or busy database) and a
    transient JetlinkError (a database that changed under the read, store/health.py) are
    raised for the caller to report and retry."""
    from jetlink.core.errors import JetlinkError
    from jetlink.core.store import DataDir
    from jetlink.core.store.health import storage_error

    snap = Snapshot(taken_ns=clock.now_ns())
    if not path.is_dir():
        if path.exists():  # (checked before the dashboard starts: gone or replaced since)
            raise JetlinkError(f"the data directory {path} is no directory now")
        snap.problems.append(f"the data directory {path} is not there (moved or removed?): "
                             "nothing to show")
        return snap
    dd = DataDir(path)
    try:
        broken: list[tuple[str, JetlinkError]] = []
        infos = dd.clusters(create_local=False, broken=broken)
        for _name, err in broken:
            if err.transient:
                raise err  # a database that changed under the read: the caller retries
        rows = [ClusterRow(info.name, info.kind, info.down, doc=info.to_json())
                for info in infos]
        rows += [ClusterRow(name, "", False, error=str(err), doc=dd.damaged_doc(name, err))
                 for name, err in broken]
        for row in sorted(rows, key=lambda r: r.name):
            if clusters is not None and row.name not in clusters:
                continue
            snap.clusters.append(row)
            if row.error:
                continue
            try:
                _load_nats(dd, row, clock, snap)
                _load_kafka(dd, row, clock, snap)
            except JetlinkError as err:
                if err.transient:
                    raise
                row.error = str(err)
            except sqlite3.OperationalError as err:
                if storage_error(err) is None:
                    raise  # locked or busy: the caller reports it and tries again
                row.error = str(_confirmed(dd, row.name, err))
            except sqlite3.DatabaseError as err:
                row.error = str(_confirmed(dd, row.name, err))
    finally:
        dd.close()
    # (a cluster that cannot be read may hold mirrors: the checks say so, as dr check does)
    if any(s.role == "mirror" or _promoted(s) for s in snap.streams) or snap.mirrors \
            or any(r.error for r in snap.clusters):
        from jetlink.core.backend import open_backend

        with open_backend(None, path, "local", lambda: clock, create=False,
                          step=False) as backend:
            add_readiness(snap, backend, clock)
    return snap


def _promoted(s: StreamRow) -> bool:
    """A stream a failover or promote made (core/dr/rules.py ``PROMOTED_KEY``): its old
    origin, back, is a split brain ``dr check`` reports."""
    from jetlink.core.dr.fencing import PROMOTED_KEY

    return bool((s.doc.get("config", {}).get("metadata") or {}).get(PROMOTED_KEY))


def _confirmed(dd: DataDir, name: str, err: sqlite3.Error) -> Exception:
    """An SQLite error of cluster ``name`` that escaped the store's wrapping, as the store
    reports it (damage only when ``cluster check`` agrees); a transient one is raised."""
    from jetlink.core.store.datadir import confirmed
    from jetlink.core.store.health import storage_error

    path = dd.cluster_path(name)
    converted = storage_error(err, name, path)
    if converted is None:
        return Exception(f"not a usable database ({err})")
    converted = confirmed(converted, err, name, path)
    if converted.transient:
        raise converted from err
    return converted


# -- rates ----------------------------------------------------------------------------------


class Rates:
    """Message rates per stream from successive snapshots: messages appended (last sequence
    growth) per second, averaged over the last :data:`RATE_WINDOW_NS` (from the newest load
    at or before the window's start to the latest one; over what there is until then), the
    last :data:`SPARK_SAMPLES` rates kept for the sparkline."""

    def __init__(self, samples: int = SPARK_SAMPLES, window_ns: int = RATE_WINDOW_NS) -> None:
        self.samples = samples
        self.window_ns = window_ns
        self._seen: dict[str, deque[tuple[int, int]]] = {}  # key -> (time ns, last_seq)...
        self._rates: dict[str, deque[float]] = {}

    def update(self, snap: Snapshot) -> None:
        seen = set()
        for s in snap.streams:
            seen.add(s.key)
            loads = self._seen.setdefault(s.key, deque())
            if loads and snap.taken_ns <= loads[-1][0]:
                continue
            if loads and s.last_seq < loads[-1][1]:
                loads.clear()  # the stream was made again: its sequence started over
                self._rates.pop(s.key, None)
            loads.append((snap.taken_ns, s.last_seq))
            start = snap.taken_ns - self.window_ns
            while len(loads) > 2 and loads[1][0] <= start:
                loads.popleft()
            if len(loads) < 2:
                continue
            (t0, seq0), (t1, seq1) = loads[0], loads[-1]
            rate = (seq1 - seq0) * 1e9 / (t1 - t0)
            self._rates.setdefault(s.key, deque(maxlen=self.samples)).append(rate)
        for key in set(self._seen) - seen:  # a stream that went away
            self._seen.pop(key, None)
            self._rates.pop(key, None)

    def rate(self, key: str) -> float | None:
        """The latest rate (messages per second), None before two loads."""
        values = self._rates.get(key)
        return values[-1] if values else None

    def sparkline(self, key: str) -> str:
        return sparkline(self._rates.get(key) or ())


def sparkline(values: Iterable[float]) -> str:
    """One block character per value, scaled to the largest ('' for no values)."""
    values = list(values)
    if not values:
        return ""
    top = max(values)
    if top <= 0:
        return _BARS[0] * len(values)
    return "".join(_BARS[min(int(v / top * (len(_BARS) - 1) + 0.5), len(_BARS) - 1)]
                   for v in values)


def rate_text(rate: float | None) -> str:
    """``12/s``, ``1.5k/s``; '' before the first rate."""
    if rate is None:
        return ""
    if rate >= 1000:
        return f"{rate / 1000:.1f}k/s"
    if rate >= 10 or rate == 0:
        return f"{rate:.0f}/s"
    return f"{rate:.1f}/s"
