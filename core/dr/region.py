"""A region's outage as one plan: ``jetlink dr failover --from REGION`` and ``jetlink dr
failback --from REGION``.

- **The region.** A cluster of the data directory or a JetStream domain (NATS), or the source
  cluster of cluster links (Kafka mirror topics, embedded engine). Its **objects** are the
  mirrors on the side addressed (embedded: every cluster of the data directory, or
  ``--cluster``; live: the server in force and its domain) whose origin is in the region:
  mirror streams, KV mirror buckets and mirror topics, and, on a re-run, the ones a failover
  promoted already (their promotion record, core/dr/rules.py). Sourced streams and KV
  aggregates that source from the region are **listed** (what they stop receiving), never
  promoted.
- **The plan** is each object's failover dry run as ``dr check`` reads it (core/dr/
  readiness.py ``check_nats_mirror`` / ``check_topics``: lag and what is not copied, the
  recovery point in seconds, subjects and where they come from, consumers to place, clamps)
  with totals (objects, messages at risk, the worst recovery point). An object whose failover
  the per-object verb would refuse (its subjects unknown, a failover that cannot be prepared)
  refuses the plan, unless ``--skip NAME`` names it or ``--skip-unready`` skips every object
  ``dr check`` grades CRITICAL.
- **The order.** An object that mirrors or sources another object of the plan on its side
  runs after it (levels of a topological order); objects of one level run in parallel up to
  the backend's :attr:`~jetlink.core.backend.Backend.parallel` (the embedded engine: one at a
  time, its SQLite connections are the thread's; a live server: several requests in flight
  over its one connection).
- **Each object** goes through its per-object verb's rules, not re-derived: a stream or KV
  bucket through ``prepare(...).carry_out()`` (failover), ``failback(...)`` (failback, its
  tail written to ``DIR/object=<name>`` when ``--tail parquet:DIR`` gives one dataset for the
  region); a mirror topic through its link's ``failover``. Each is idempotent (a promotion
  record, a failback record): a re-run finishes what a killed run left.
- **The fence** (``--fence``, a planned failover): each object's origin that answers is
  fenced (core/dr/fence.py) before its object is promoted, the object copies what the
  origin holds (at most :data:`CATCH_UP_SECONDS`), then it is promoted: no publish stored
  on both sides, none left on the old origin only. The fence is journalled with its object
  before it is made; an object that then fails, or a re-run skips, has it undone.
- **The journal.** jetlink's own KV bucket :data:`BUCKET` on each DR side (never exported,
  planned or pruned, as the positions bucket: core/dr/positions.py ``OWN_STREAMS``) holds one
  record per run (key ``<action>.<region>``): the plan's objects and each one's state, written
  before an object starts and when it ends. A run killed anywhere is finished by the same
  command again; a run of a finished plan is a no-op that says so. A record jetlink did not
  write is refused, naming it and how to start over (nothing changed).
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ApiError, JetlinkError, UsageError, did_you_mean
from .fence import (
    ALREADY,
    FENCED,
    Side,
    _verb,
    fenced_detail,
    mirror_topics,
    refuse_side_addressed,
    refuse_unknown_region,
    region_names,
    region_of,
    sides_of,
    when_it_answers,
)
from .positions import is_jetlink_own, key_for, open_own_bucket
from .rules import _stamp, _was_mirror, one_line, origin_name

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import Backend
    from ..clock import Clock
    from .fence import FenceItem, FenceReport
    from .readiness import MirrorReadiness

__all__ = ["BUCKET", "RegionObject", "RegionPlan", "RegionReport", "mirrored_from",
           "plan_region", "reading_from"]

#: jetlink's own bucket of region runs (one per DR side)
BUCKET = "JETLINK_REGIONS"
FAILOVER, FAILBACK = "failover", "failback"

#: an object's state in the plan and the journal
PLANNED, RUNNING, DONE, EARLIER, FAILED, SKIPPED, REFUSED, MANUAL = (
    "planned", "running", "done", "done earlier", "failed", "skipped", "refused", "manual")
#: the journal record's format (a record of another version is refused, not guessed)
VERSION = 1
#: --fence: seconds a mirror is given to copy what its origin, fenced first, holds before
#: it is promoted anyway (what it did not copy stays on the origin: the divergent tail,
#: which failback saves); failback waits for a mirror as long (core/dr/failback.py)
CATCH_UP_SECONDS = 30.0
#: --fence: seconds a live mirror may copy nothing before the wait for it ends
STALLED_SECONDS = 5.0


# --- the objects ---------------------------------------------------------------------------------
@dataclass
class RegionObject:
    """One object of the region on one side, and what the run does to it."""

    kind: str  # "stream" | "kv" | "topic"
    name: str  # as its verb takes it: STREAM, BUCKET, LINK/TOPIC
    side: str  # its side's cluster (embedded) or JetStream domain (live; "" none)
    cluster: str | None  # the embedded cluster to address (None: the live server)
    stream: str  # the mirror stream (a bucket's KV_<bucket>), or the mirror topic
    origin: str  # the origin's stream / bucket / topic
    region: str
    state: str = PLANNED
    detail: str = ""
    after: list[str] = field(default_factory=list)  # keys of objects it waits for
    origin_silent: bool = False  # a failback refused because its old origin does not answer
    plan: dict[str, Any] = field(default_factory=dict)  # the dry run's facts
    result: dict[str, Any] | None = None  # the verb's report once run
    status: str = "OK"  # dr check's grade of it (OK, WARNING, CRITICAL, UNKNOWN)
    link: str = ""  # a mirror topic's link
    promoted: bool = False  # a stream or bucket a promotion made (no mirror now)
    # --fence: its origin as the fence before its promotion found it (core/dr/fence.py
    # FenceItem: fenced now, or fenced already; None: not fenced first)
    fence: Any = field(default=None, repr=False)
    # the subjects its origin had when this run (or the stopped run it continues) fenced it
    # before promoting it (journalled with its state: a re-run knows the fence is its own)
    fenced_by_run: list[str] | None = None

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name}@{self.side}"

    @property
    def shown(self) -> str:
        return f"{self.name}@{self.side}" if self.side else self.name

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "side": self.side,
                "origin": self.origin, "region": self.region, "state": self.state,
                "detail": self.detail, "status": self.status, "after": self.after,
                "plan": self.plan, "result": self.result}


@dataclass
class Listed:
    """A sourced stream or KV aggregate on a side that sources from the region: it stops
    receiving those sources; nothing is done to it."""

    kind: str  # "stream" | "kv"
    name: str
    side: str
    sources: list[str]  # the region's streams it sources from

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "side": self.side,
                "sources": self.sources}


# --- the journal ---------------------------------------------------------------------------------
class Journal:
    """One side's record of a region run (bucket :data:`BUCKET`, key
    ``<action>.<region>[.<region>...]``), over core/kv.py's KV of that side; writes are
    serialized (objects run in threads). ``kv`` None: a Kafka cluster's side, which has no
    Key-Value: its mirror topics' own state (STOPPED) is their record, nothing is kept."""

    def __init__(self, kv: Any, action: str, regions: Sequence[str],
                 cluster: str | None = None) -> None:
        self.kv = kv
        self.cluster = cluster  # the embedded cluster it is kept in (None: the server's)
        self.key = ".".join([action, *(key_for(r) for r in sorted(regions))])
        self._bucket: Any = None
        self._lock = threading.Lock()
        self.doc: dict[str, Any] | None = None

    def _open(self, create: bool) -> Any:
        if self._bucket is None:
            self._bucket = open_own_bucket(
                self.kv, BUCKET, "jetlink: region failovers and failbacks (jetlink dr "
                "failover|failback --from)", create=create)
        return self._bucket

    def read(self) -> dict[str, Any] | None:
        if self.kv is None:
            return None
        try:
            bucket = self._open(False)
            entry = bucket.get(self.key)
        except ApiError as err:
            if err.err_code in (10037, 10059, 10058):
                return None
            raise
        doc = self._parse(self.key, entry.value)
        if not isinstance(doc, dict) or doc.get("version") != VERSION or \
                not isinstance(doc.get("objects"), dict) or \
                not all(_is_state(v) for v in doc["objects"].values()):
            raise self._damaged(self.key, f"not a record jetlink wrote (version {VERSION}, "
                                          "objects with their state)")
        for key in bucket.keys([f"{self.key}.>"]):  # each object's mark since (mark)
            try:
                mark = self._parse(key, bucket.get(key).value)
            except ApiError as err:
                if err.err_code == 10037:
                    continue  # deleted or purged since listed
                raise
            if not _is_state(mark) or not isinstance(mark.get("key"), str):
                raise self._damaged(key, "not a record jetlink wrote (an object's state)")
            if mark.get("run") == _run_of(doc):  # a mark of an earlier run: not ours
                doc["objects"][mark["key"]] = {k: mark[k] for k in ("state", "at", "detail",
                                                                    "fenced") if k in mark}
        self.doc = doc
        return doc

    def _damaged(self, key: str, why: str) -> JetlinkError:
        return JetlinkError(
            f"the region journal record {key} in bucket {BUCKET} is {why}: remove it to "
            f"start over: jetlink {'' if self.cluster is None else f'--cluster {self.cluster} '}"
            f"kv del {BUCKET} {key} -f (the objects keep their own "
            "records: a new run finds what was done)", field="journal")

    def _parse(self, key: str, value: bytes) -> Any:
        try:
            return json.loads(value)
        except ValueError:
            raise self._damaged(key, "not JSON, so not a record jetlink wrote") from None

    def write(self) -> None:
        """The run's record: its plan and each object's state as now (at the start and the
        end of a run)."""
        assert self.doc is not None
        if self.kv is None:
            return
        with self._lock:
            self._open(True).put(self.key, json.dumps(self.doc, separators=(",", ":"))
                                 .encode())

    def mark(self, obj: RegionObject, now: str) -> None:
        """One object's state: a small record of its own (``<key>.<object>``, tagged with the
        run), not the whole record again: a region of thousands of objects writes each
        once per change."""
        assert self.doc is not None
        state: dict[str, Any] = {"state": obj.state, "at": now, "detail": obj.detail}
        if obj.fenced_by_run is not None:
            state["fenced"] = obj.fenced_by_run
        with self._lock:
            self.doc["objects"][obj.key] = state
        if self.kv is None:
            return
        mark = {"key": obj.key, "run": _run_of(self.doc), **state}
        self._open(True).put(f"{self.key}.{key_for(obj.key)}",
                             json.dumps(mark, separators=(",", ":")).encode())


def _is_state(v: Any) -> bool:
    return isinstance(v, dict) and isinstance(v.get("state"), str)


def _later(a: dict[str, Any], a_key: str, b: dict[str, Any], b_key: str) -> bool:
    """Whether record ``a``'s time ``a_key`` ("started", "finished") is after ``b``'s
    ``b_key``: by their nanoseconds (``<key>_ns``) when both have them; else, for records
    written before, by the whole-second stamps (a failover begun in the second a failback
    ended then reads as no later)."""
    x, y = a.get(f"{a_key}_ns"), b.get(f"{b_key}_ns")
    if isinstance(x, int) and isinstance(y, int):
        return x > y
    return str(a.get(a_key) or "") > str(b.get(b_key) or "")


def _run_of(doc: dict[str, Any]) -> Any:
    """The run a record and its objects' marks belong to: its own ``run`` id (random, made
    when the run starts), or for a record written before runs had one its start time (whole
    seconds: two runs begun in one second would read each other's marks)."""
    return doc.get("run") or doc.get("started")


# --- the report ---------------------------------------------------------------------------------
@dataclass
class RegionReport:
    """A region run's outcome (``to_json``: docs/region.md "JSON")."""

    action: str
    regions: list[str]
    sides: list[str]
    objects: list[RegionObject]
    listed: list[Listed]
    dry_run: bool
    options: dict[str, Any]
    started: str | None = None
    finished: str | None = None
    nothing_to_do: bool = False
    fence: FenceReport | None = None

    def count(self, *states: str) -> int:
        return sum(1 for o in self.objects if o.state in states)

    @property
    def failed(self) -> list[RegionObject]:
        return [o for o in self.objects if o.state == FAILED]

    @property
    def refused(self) -> list[RegionObject]:
        return [o for o in self.objects if o.state == REFUSED]

    @property
    def exit_code(self) -> int:
        """0 every object done (or skipped, or listed for a manual step), 1 some failed,
        2 the plan refused."""
        if self.refused:
            return 2
        return 1 if self.failed else 0

    def totals(self) -> dict[str, Any]:
        """``messages_at_risk`` counts the objects whose lag is known; an object whose
        origin was never heard from has none (``at_risk_unknown`` counts them)."""
        at_risk = unknown = 0
        worst: float | None = None
        consumers = 0
        for o in self.objects:
            rp = o.plan.get("recovery_point") or {}
            secs = rp.get("seconds")
            if rp and secs is None:  # never heard from its origin: its lag is no figure
                unknown += 1
            else:
                at_risk += int(rp.get("messages") or 0)
            if secs is not None and (worst is None or secs > worst):
                worst = secs
            if o.state not in (REFUSED, SKIPPED):  # (none is placed on those)
                consumers += len(o.plan.get("consumers") or [])
        return {"objects": len(self.objects), "messages_at_risk": at_risk,
                "at_risk_unknown": unknown,
                "recovery_point_seconds": worst, "consumers": consumers,
                "listed": len(self.listed)}

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "regions": self.regions, "sides": self.sides,
                "dry_run": self.dry_run, "options": self.options, "started": self.started,
                "finished": self.finished, "totals": self.totals(),
                "objects": [o.to_json() for o in self.objects],
                "listed": [x.to_json() for x in self.listed],
                "done": self.count(DONE), "done_earlier": self.count(EARLIER),
                "skipped": self.count(SKIPPED), "manual": self.count(MANUAL),
                "failed": [o.shown for o in self.failed],
                "refused": [o.shown for o in self.refused],
                "nothing_to_do": self.nothing_to_do,
                "fence": self.fence.to_json() if self.fence is not None else None,
                "complete": not self.dry_run and not self.failed and not self.refused}


# --- finding the objects -------------------------------------------------------------------------
def mirrored_from(cfg: Any) -> tuple[str, Any, bool] | None:
    """A stream as an object of a region: (its kind, ``"stream"`` or ``"kv"``; the
    StreamSource of its origin, whose region is :func:`~jetlink.core.dr.fence.region_of`
    it; whether a promotion made it, its promotion record naming the mirror it was). None
    for any other stream (not a mirror and not promoted, or one of jetlink's own)."""
    from .readiness import mirror_kind

    kind = mirror_kind(cfg)
    if kind is not None:
        return kind, cfg.mirror, False
    was = _was_mirror(cfg)
    if was is None or was[0].mirror is None or is_jetlink_own(cfg.name):
        return None
    src = was[0].mirror
    return ("kv" if src.name.startswith("KV_") else "stream"), src, True


def _nats_objects(backend: Backend, side: Side, wanted: list[str], seen: set[str]
                  ) -> tuple[list[RegionObject], list[Listed], list[Any]]:
    """The mirrors of ``side`` whose origin is in ``wanted`` and the streams a promotion
    made from one, with their StreamInfos; the streams sourcing from the region."""
    from ..config.kv import bucket_of_stream

    site = backend.site(side.cluster)
    label = side.label if side.cluster is not None else str(site.label)
    found, listed, infos = [], [], []
    for info in site.js.streams():
        cfg = info.config
        if is_jetlink_own(cfg.name):
            continue
        mirrored = mirrored_from(cfg)
        if mirrored is not None:
            kind, src, promoted = mirrored
            region = region_of(label, src)
            seen.add(region)
            if region in wanted and region != label:
                name = (bucket_of_stream(cfg.name) or cfg.name) if kind == "kv" else cfg.name
                origin = origin_name(kind, src.name)
                found.append(RegionObject(kind, name, side.label if side.cluster else label,
                                          side.cluster, cfg.name, origin, region,
                                          promoted=promoted))
                infos.append(info)
            continue
        froms = []
        for s in cfg.sources or []:
            region = region_of(label, s)
            seen.add(region)
            if region in wanted and region != label:
                froms.append(f"{s.name}@{region}")
        if froms:
            kind_ = "kv" if bucket_of_stream(cfg.name) else "stream"
            listed.append(Listed(kind_, bucket_of_stream(cfg.name) or cfg.name,
                                 side.label if side.cluster else label, froms))
    return found, listed, infos


def _topic_objects(dd: Any, side: Side, wanted: list[str], action: str, clock: Clock,
                   seen: set[str]) -> list[RegionObject]:
    """The mirror topics of ``side``'s links whose source cluster is in ``wanted``."""
    from ..kafka import mirror_model as mm

    assert side.cluster is not None
    out = []
    # failed over elsewhere (read once for the side, not per topic)
    primaries = _topic_primaries(dd, clock, side.cluster) if action == FAILOVER else {}
    for info, region in mirror_topics(dd, side.cluster, clock):
        seen.add(region)
        if region not in wanted:
            continue
        obj = RegionObject("topic", f"{info.link_name}/{info.mirror_topic_name}",
                           side.label, side.cluster, info.mirror_topic_name,
                           info.source_topic_name, region, link=info.link_name)
        if info.mirror_status == mm.STOPPED:
            obj.state = EARLIER
            obj.detail = "its mirror was stopped (failed over or promoted) before"
        elif action == FAILOVER:
            others = primaries.get((region, info.source_topic_name))
            if others:  # (a region's plan refuses this across its sides: _one_primary)
                obj.state, obj.detail = REFUSED, (
                    f"topic {info.source_topic_name}@{region} was failed over already to "
                    f"{', '.join(others)}, a primary still: a second would make two "
                    "primaries taking writes for one topic (its offsets would fork); take "
                    f"{others[0]} back first, or fail over only one side")
        if action == FAILBACK:
            back = _back_command(dd, clock, region, side.cluster, info)
            if info.mirror_status == mm.PENDING_STOPPED:
                # a failover not finished yet: it goes back once it has (stopped)
                obj.state = MANUAL
                obj.detail = ("its failover is not finished (PENDING_STOPPED): jetlink "
                              f"replicate finishes it; then it goes back per link: {back}")
                out.append(obj)
                continue
            if info.mirror_status != mm.STOPPED:
                continue  # still mirroring: it was not failed over, nothing goes back
            went = _gone_back(dd, clock, region, side.cluster, info)
            if went is not None:
                obj.detail = went
            else:
                obj.state = MANUAL
                obj.detail = (f"a mirror topic goes back per link: {back}, with {region} "
                              "answering")
        out.append(obj)
    return out


def _topic_primaries(dd: Any, clock: Clock, here: str) -> dict[tuple[str, str], list[str]]:
    """The mirror topics on Kafka clusters other than ``here`` that were failed over
    (STOPPED), by their source (region, topic): each a primary taking its writes (one taken
    back is a mirror again, its row no longer stopped), as shown (LINK/TOPIC@CLUSTER)."""
    from ..kafka import mirror_model as mm

    out: dict[tuple[str, str], list[str]] = {}
    for name in dd.cluster_names():
        if name == here:
            continue
        try:
            if dd.open(name).kind != "kafka":
                continue
            for info, src in mirror_topics(dd, name, clock):
                if info.mirror_status == mm.STOPPED:
                    out.setdefault((src, info.source_topic_name), []).append(
                        f"{info.link_name}/{info.mirror_topic_name}@{name}")
        except (JetlinkError, OSError):
            continue
    return out


def _gone_back(dd: Any, clock: Clock, region: str, took_over: str, info: Any) -> str | None:
    """How the failed-over mirror topic ``info`` (on ``took_over``) went back already: its
    old source topic on ``region`` now a mirror of it (truncate-and-restore on ``region``,
    or reverse-and-start on ``took_over``); None when it has not, or ``region`` cannot be
    read."""
    from ..kafka import mirror_model as mm

    try:
        if not dd.has_cluster(region):
            return None
        back = [(m, src) for m, src in mirror_topics(dd, region, clock)
                if src == took_over and m.mirror_topic_name == info.source_topic_name
                and m.source_topic_name == info.mirror_topic_name
                and m.mirror_status != mm.STOPPED]
    except JetlinkError:
        return None
    if not back:
        return None
    m = back[0][0]
    return (f"it went back already: {m.mirror_topic_name} on {region} mirrors "
            f"{info.mirror_topic_name} of {took_over} through link {m.link_name}")


def _back_command(dd: Any, clock: Clock, region: str, took_over: str, info: Any) -> str:
    """The command that takes a failed-over mirror topic back, as it is typed: truncate-and-
    restore runs on ``region`` (the cluster it failed over from) on its topic there, through
    a link of ``region`` from ``took_over`` (named when there is one, else how to make one).
    Never reverse-and-start: it reverses a mirror still mirroring, and this one stopped."""
    from ..kafka.links import Links

    links = [li.name for li in Links(dd, region, clock).list(with_topics=False)
             if li.source_cluster == took_over] if dd.has_cluster(region) else []
    link = links[0] if links else "LINK"
    restore = (f"jetlink --cluster {region} mirrors truncate-and-restore "
               f"{info.source_topic_name} --link {link}")
    if not links:
        restore += (f", LINK a link of {region} from {took_over} made first (jetlink --cluster "
                    f"{region} links create LINK --source-cluster {took_over})")
    # Confluent's truncate-and-restore cuts the topic back to where the mirror stopped: what
    # it took since is removed, with no copy kept (unlike a stream's failback, no tail saved)
    return restore + (f" (it removes the records {info.source_topic_name} took on {region} "
                      "after the failover, keeping no copy: run it with --dry-run first to "
                      "count them)")


def _dependencies(objects: list[RegionObject], infos: dict[str, Any]) -> None:
    """``after``: an object that mirrors or sources another object's stream on its side runs
    after it (a stream that sources from a mirror after the mirror)."""
    by_stream = {(o.side, o.stream): o.key for o in objects if o.kind != "topic"}
    for o in objects:
        info = infos.get(o.key)
        if info is None:
            continue
        cfg = info.config
        refs = ([cfg.mirror] if cfg.mirror is not None else []) + list(cfg.sources or [])
        for s in refs:
            if s.external is None and (o.side, s.name) in by_stream:
                dep = by_stream[(o.side, s.name)]
                if dep != o.key:
                    o.after.append(dep)


def _levels(objects: list[RegionObject]) -> list[list[RegionObject]]:
    """The objects in an order that respects ``after`` (levels of a topological order; a
    cycle, which the server does not allow, runs as one level)."""
    left = {o.key: o for o in objects}
    done: set[str] = set()
    out = []
    while left:
        level = [o for o in left.values() if all(a in done or a not in left for a in o.after)]
        if not level:
            level = list(left.values())
        out.append(level)
        for o in level:
            done.add(o.key)
            del left[o.key]
    return out


# --- the plan ------------------------------------------------------------------------------------
class RegionPlan:
    """The region's objects, each read once (:func:`plan_region`); :meth:`preview` is the dry
    run's report, :meth:`carry_out` runs it."""

    def __init__(self, backend: Backend, action: str, regions: list[str], sides: list[Side],
                 objects: list[RegionObject], listed: list[Listed], journals: dict[str, Journal],
                 options: dict[str, Any], clock: Clock) -> None:
        self.backend, self.action, self.regions = backend, action, regions
        self.sides, self.objects, self.listed = sides, objects, listed
        self.journals, self.clock = journals, clock
        self.run_options = options  # what the objects' verbs are given
        #: the options as the report and the journal show them
        self.options = {k: v for k, v in options.items() if not k.startswith("_")}

    @property
    def todo(self) -> list[RegionObject]:
        return [o for o in self.objects if o.state == PLANNED]

    @property
    def refused(self) -> list[RegionObject]:
        return [o for o in self.objects if o.state == REFUSED]

    @property
    def answering(self) -> list[RegionObject]:
        """A failover's objects whose origin answers now, with no fence asked for: after
        it they and the promoted side both take their subjects (a split brain) until the
        region is fenced. Empty for a refused plan (it runs nothing)."""
        if self.action != "failover" or self.run_options.get("fence") or self.refused:
            return []
        return [o for o in self.todo if (o.plan.get("origin") or {}).get("reachable")
                and not (o.plan.get("origin") or {}).get("fenced")]

    def _report(self, dry_run: bool) -> RegionReport:
        started = None  # the run this one continues, or that did it all already
        work = bool(self.todo)
        for j in self.journals.values():
            if j.doc is not None and not (work and j.doc.get("finished")):
                started = started or j.doc.get("started")  # (a finished run's with work
                # left: this one is a new run, started when it starts: carry_out)
        return RegionReport(self.action, self.regions, [s.label for s in self.sides],
                            self.objects, self.listed, dry_run, self.options, started)

    def preview(self) -> RegionReport:
        report = self._report(True)
        report.nothing_to_do = not self.todo and not self.refused
        if report.nothing_to_do and not self._open():  # done already: when, as a run says
            report.finished = self._finished()
        if self.action == "failover" and self.run_options.get("fence") and not self.refused:
            report.fence = self._fence_preview()
        return report

    def _fence_preview(self) -> FenceReport:
        """What ``--fence`` would do (the dry run's): each planned object's origin that
        answers now and takes writes is to be fenced, before its object is promoted; one
        that does not answer is left for ``dr fence`` or ``dr watch --fence-on-return``."""
        from .fence import TO_FENCE, UNREACHABLE, FenceItem, FenceReport, topic_item
        from .fencing import fence_subject

        dd = self.backend.either(data_dir=lambda d: d, server=lambda _js: None)
        items = []
        for o in self.todo:
            origin = o.plan.get("origin") or {}
            if o.kind == "topic":  # (a data directory's: a live server has no links)
                if dd is not None:  # as dr fence will find it: to fence, or refused
                    items.append(topic_item(dd, o.origin, o.region, o.shown))
                continue
            if origin.get("fenced"):
                continue  # takes no writes already
            stream = str(origin.get("stream") or o.origin)
            item = FenceItem(o.kind, o.origin, o.region, o.shown,
                             list(o.plan.get("subjects") or []) or None,
                             [fence_subject(stream)], TO_FENCE, stream=stream)
            if not origin.get("reachable"):  # (the words the run's fence will say)
                item.action, item.subjects_after = UNREACHABLE, None
                item.detail = when_it_answers(str(origin.get("error") or "does not answer"),
                                              o.region)
            items.append(item)
        # the objects failed over already (a run stopped after its objects ended, before
        # its fence): their old origins, as the re-run's fence will find them
        seen = {(i.kind, i.name, i.region) for i in items}
        items += [i for i in self._fenced_later() if (i.kind, i.name, i.region) not in seen]
        sides = sorted({o.side for o in self.objects})
        return FenceReport(self.regions, sides, items, True)

    def _fenced_later(self) -> list[Any]:
        """The dry run of ``dr fence --from REGION`` on the side addressed: the old origins
        of what was failed over already (none: nothing failed over yet)."""
        plan = self._fence_plan()
        return [] if plan is None else list(plan.preview().items)

    def carry_out(self, on_event: Callable[[RegionObject], None] | None = None
                  ) -> RegionReport:
        """Run every planned object in order (refused: nothing is done, the report says
        which), the journal written before and after each."""
        report = self._report(False)
        if self.refused:
            return report
        for o in self.objects:  # skipped now, fenced first by the stopped run: given back
            if o.state == SKIPPED and o.fenced_by_run is not None:
                said = self._unfence(o)  # (the plan said it is to be: now, what was done)
                o.detail = o.detail.split("; its origin ")[0] + said
                self._mark(o)
                if on_event is not None:  # (its line, with what was done)
                    on_event(o)
        if not self.todo:
            if self.run_options.get("fence"):  # a re-run with --fence fences (again: a no-op
                report.fence = self._fence()   # for what is fenced already)
            report.finished = self._finish_stopped()
            report.nothing_to_do = report.finished is None
            report.finished = report.finished or self._finished()
            return report
        now = self._start_journals()
        report.started = report.started or now
        lock = threading.Lock()
        interrupted = False
        for level in _levels(self.todo):
            if interrupted:
                break
            failed = {o.key for o in self.objects if o.state == FAILED}
            runnable = []
            for o in level:
                if any(a in failed for a in o.after):
                    o.state, o.detail = FAILED, "not run: an object it depends on failed"
                    self._mark(o)
                else:
                    runnable.append(o)
            interrupted = self._run_level(runnable, on_event, lock)
        if interrupted and any(o.state in (PLANNED, RUNNING) for o in self.objects):
            raise KeyboardInterrupt  # (the objects left: the run stopped between two)
        if self.run_options.get("fence"):
            report.fence = self._fence()
            if report.fence is not None:  # the origins fenced before their objects: said so
                made = {_fenced_key(o.fence): o.fenced_by_run for o in self.objects
                        if o.fence is not None and o.fenced_by_run is not None}
                for item in report.fence.items:
                    had = made.get(_fenced_key(item))
                    if item.action == ALREADY and had is not None:
                        item.action, item.detail = FENCED, fenced_detail(item)
                        if item.kind != "topic":  # (a topic's fence changes no subjects)
                            item.subjects_before = list(had)
        if not report.failed:
            from ..interrupts import no_interrupt

            # every object ended: the run is recorded finished whole (an interrupt here
            # would leave it to a re-run to record, and a script would read a finished run
            # as an interrupted one)
            with no_interrupt():
                end_ns = self.clock.now_ns()
                end = _stamp(end_ns)
                for j in self.journals.values():
                    assert j.doc is not None
                    j.doc["finished"], j.doc["finished_ns"] = end, end_ns
                    j.write()
                report.finished = end
        return report

    def _start_journals(self) -> str:
        """Each journal written before the run: a new run's (the options, every object
        planned), or a stopped run's continued (a resumed run's options); the time now."""
        now_ns = self.clock.now_ns()
        now = _stamp(now_ns)
        for j in self.journals.values():
            given = self.options.get("tail") if self.action == FAILBACK else None
            if j.doc is None or j.doc.get("finished"):
                options = dict(self.options)
                had = ((j.doc or {}).get("options") or {}).get("tail")
                if self.action == FAILBACK and not given and had:
                    options["tail"] = had  # the tails an earlier run saved stay where it did
                j.doc = {"version": VERSION, "action": self.action, "regions": self.regions,
                         "side": None, "options": options, "started": now,
                         "started_ns": now_ns, "run": secrets.token_hex(8),
                         "finished": None, "objects": {}}
            else:
                if given:  # a run resumed with another --tail: its path is the one taken
                    j.doc.setdefault("options", {})["tail"] = given
                if self.action == FAILBACK and not self.options.get("switch"):
                    # a run killed with --switch finished by one without: what it finishes
                    # is not switched back, so a later --switch run still has that to do
                    j.doc.setdefault("options", {})["switch"] = False
            for o in self.objects:
                if self._journal(o) is j:
                    j.doc["objects"].setdefault(o.key, {"state": o.state, "at": now,
                                                        "detail": o.detail})
            j.write()
        return now

    def _fence_first(self, o: RegionObject) -> None:
        """``--fence``: ``o``'s origin fenced before ``o`` is promoted, as ``dr fence`` fences
        an old origin (core/dr/fence.py ``origin_item``, ``fence_item``): it takes no writes
        from then on, so ``o`` can copy all it holds (:func:`_caught_up`) and no publish is
        stored on both sides. An origin that does not answer now is promoted past (left to
        the fence after the last object, which reports it); one whose fence fails fails
        ``o``, not promoted: its origin keeps taking its writes. The fence is journalled
        with ``o`` before it is made (:attr:`RegionObject.fenced_by_run`): a run stopped
        anywhere after leaves it the re-run's to keep (the promotion) or undo."""
        from .fence import FAILED as FENCE_FAILED
        from .fence import REFUSED as FENCE_REFUSED
        from .fence import TO_FENCE, fence_item

        item = self._origin_item(o)
        if item is None:
            return
        if item.action == FENCE_REFUSED:  # (it answers and can not be fenced: as a failure)
            raise JetlinkError(f"its origin {item.name}@{item.region} can not be fenced "
                               f"({item.detail}): not promoted, the origin keeps taking its "
                               "writes (fail it over without --fence to accept that)")
        if item.action == TO_FENCE:
            o.fenced_by_run = list(item.subjects_before or [])
            o.detail = f"origin {item.name}@{item.region} fenced first"
            self._mark(o)
            fence_item(item)
            if item.action == FENCE_FAILED:
                o.fenced_by_run = None
                raise JetlinkError(f"its origin {item.name}@{item.region} could not be fenced "
                                   f"({item.detail}): not promoted, the origin keeps taking "
                                   "its writes")
        if item.action in (FENCED, ALREADY):
            o.fence = item
        if item.action == ALREADY and o.fenced_by_run is not None:
            o.detail = (f"origin {item.name}@{item.region} fenced first (by the run this one "
                        "continues)")

    def _origin_item(self, o: RegionObject) -> FenceItem | None:
        """``o``'s origin as it is now (core/dr/fence.py): a stream's or bucket's when the
        plan saw it answer, a topic's always; None when there is none to fence."""
        from .fence import origin_item, topic_item

        if o.kind == "topic":
            return topic_item(self.backend.data_dir("dr failover"), o.origin, o.region,
                              o.shown)
        if not (o.plan.get("origin") or {}).get("reachable") and o.fenced_by_run is None:
            return None
        return origin_item(self.backend.site(o.cluster), o.stream, o.side)

    def _unfence(self, o: RegionObject) -> str:
        """``o`` failed (or is skipped) with its origin fenced by this run (or the stopped
        run it continues) before its promotion: the fence undone, so its origin takes its
        writes again as before the run (nothing else takes them); what to add to ``o``'s
        detail. A fence this run did not make is left as found."""
        from .fence import unfence

        if o.fenced_by_run is None:
            return ""
        try:
            item = o.fence if o.fence is not None else self._origin_item(o)
            why = "it is no mirror now" if item is None else unfence(item)
        except JetlinkError as err:
            why = one_line(err)
        name = f"{o.origin}@{o.region}"
        if why is None:
            o.fenced_by_run = None
            return f"; its origin {name} unfenced: it takes its writes again"
        return (f"; its origin {name} stays fenced ({why}): nothing takes its writes until "
                "the same command is run again")

    def _fence(self) -> FenceReport | None:
        """``--fence``: every old origin of the region that answers now stops taking writes
        (core/dr/fence.py); one that does not answer is left for ``dr fence`` or ``dr watch
        --fence-on-return`` when it does."""
        plan = self._fence_plan()
        return None if plan is None else plan.carry_out()

    def _fence_plan(self) -> Any:
        """The region's old origins on the sides this plan looks at (core/dr/fence.py
        ``plan_fence``); None when nothing was failed over from the region (every object
        skipped, or none failed over yet)."""
        from .fence import plan_fence

        clusters = sorted({o.cluster for o in self.objects if o.cluster is not None}) or None
        try:
            return plan_fence(self.backend, self.regions, clusters=clusters, clock=self.clock)
        except UsageError:
            return None

    def stopped(self) -> tuple[list[RegionObject], list[RegionObject], list[RegionObject],
                               list[RegionObject]]:
        """Where a run stopped part-way (Ctrl-C) left its objects: those that ended (done
        or failed), those under way (their verb may have finished: the re-run finds out),
        and, with --fence, those done whose old origin is not fenced yet (it did not
        answer, or its cluster has no authorizer) and those under way whose origin this run
        fenced (nothing takes their writes until they are promoted)."""
        ended = [o for o in self.objects if o.state in (DONE, FAILED)]
        going = [o for o in self.objects if o.state == RUNNING]
        unfenced: list[RegionObject] = []
        waiting: list[RegionObject] = []
        if self.action == FAILOVER and self.run_options.get("fence"):
            unfenced = [o for o in self.objects if o.state == DONE and o.fence is None]
            waiting = [o for o in going if o.fenced_by_run is not None]
        return ended, going, unfenced, waiting

    def _open(self) -> list[Journal]:
        """The journal records a run began and did not finish (killed, or an object failed)."""
        return [j for j in self.journals.values() if j.doc and not j.doc.get("finished")]

    def _finish_stopped(self) -> str | None:
        """A run killed after its last object's verb but before the journal said so leaves
        its record open with nothing left to do: the record is finished now, each object as
        this plan found it (done earlier); when, or None (no record open)."""
        open_ = self._open()
        if not open_:
            return None
        end_ns = self.clock.now_ns()
        end = _stamp(end_ns)
        for o in self.objects:
            j = self._journal(o)
            if j in open_ and j.doc is not None:
                j.doc["objects"][o.key] = {"state": o.state, "at": end, "detail": o.detail}
        for j in open_:
            assert j.doc is not None
            j.doc["finished"], j.doc["finished_ns"] = end, end_ns
            j.write()
        return end

    def _finished(self) -> str | None:
        ends = [j.doc.get("finished") for j in self.journals.values() if j.doc]
        return max((e for e in ends if e), default=None)

    def _journal(self, o: RegionObject) -> Journal:
        return self.journals[o.side]

    def _mark(self, o: RegionObject) -> None:
        self._journal(o).mark(o, _stamp(self.clock.now_ns()))

    def _run_level(self, level: list[RegionObject],
                   on_event: Callable[[RegionObject], None] | None,
                   lock: threading.Lock) -> bool:
        """Run one level's objects (in parallel up to the backend's ``parallel``); True when
        an interrupt came while workers ran them (what was under way ended first)."""
        def one(o: RegionObject) -> None:
            o.state = RUNNING
            self._mark(o)
            try:
                if self.action == FAILOVER and self.run_options.get("fence"):
                    self._fence_first(o)
                o.result = self._run(o)
                o.state = DONE
                left = (o.result or {}).get("origin_pending") if o.fence is not None else None
                if left:  # the mirror could not copy all its fenced origin holds
                    o.detail += ("; " if o.detail else "") + (
                        f"{left:,} message{'' if left == 1 else 's'} stayed on the origin "
                        f"{o.origin}@{o.region} (fenced), never copied: the divergent tail, "
                        f"which jetlink {_verb(o.kind)} failback {o.name} saves")
            except JetlinkError as err:
                o.state, o.detail = FAILED, one_line(err)
                doc = getattr(err, "report", None)
                if doc is not None and hasattr(doc, "to_json"):
                    o.result = doc.to_json()
                o.detail += self._unfence(o)
            self._mark(o)
            if on_event is not None:
                with lock:
                    on_event(o)

        workers = max(1, min(self.backend.parallel, len(level)))
        if workers == 1:
            for o in level:
                one(o)
            return False
        return _run_parallel(level, one, workers)

    def _run(self, o: RegionObject) -> dict[str, Any]:
        if self.action == FAILOVER:
            return _failover(self.backend, o, self.run_options, self.clock)
        return _failback(self.backend, o, self.run_options)


def _run_parallel(level: list[RegionObject], one: Callable[[RegionObject], None],
                  workers: int) -> bool:
    """``one`` of each object of ``level`` in ``workers`` threads; True when an interrupt
    came meanwhile. Ctrl-C reaches the main thread only: the objects under way run to their
    end (a thread is not cut), none is started after it; the caller decides whether the
    run stopped (objects left) or ended whole (recorded finished)."""
    from concurrent.futures import ThreadPoolExecutor, wait

    stop = False
    under_way = 0
    turn = threading.Condition()

    def guarded(o: RegionObject) -> None:
        nonlocal under_way
        with turn:
            if stop:
                return
            under_way += 1
        try:
            one(o)
        finally:
            with turn:
                under_way -= 1
                turn.notify_all()

    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        futures = [pool.submit(guarded, o) for o in level]
        # waited for in short turns: a Ctrl-C the kernel hands to a worker thread is run by
        # the main thread only when it wakes (a wait without a time-out would let the
        # workers start the next objects first)
        while not all(f.done() for f in futures):
            wait(futures, timeout=0.1)
        for fut in futures:
            fut.result()
    except KeyboardInterrupt:
        # the objects under way are waited for by their own count: the pool may not know
        # every thread it started (an interrupt between a thread's start and its
        # registration: ThreadPoolExecutor._adjust_thread_count), so its shutdown would not
        # wait for that one
        with turn:
            stop = True
        pool.shutdown(wait=False, cancel_futures=True)
        with turn:
            while under_way:
                turn.wait(0.1)
        return True
    finally:
        pool.shutdown(wait=True)
    return False


def _fenced_key(item: Any) -> tuple[str, str]:
    """A fence item's origin: (its stream, or a topic's name; its region)."""
    return (item.stream or item.name, item.region)


def _naming(o: RegionObject) -> Any:
    from .rules import Naming

    verb = "kv" if o.kind == "kv" else "stream"
    return Naming(what="KV mirror" if o.kind == "kv" else "mirror", shown=o.name,
                  instead=f"fail over instead (jetlink {verb} failover {o.name})",
                  again=f"jetlink {verb} failover {o.name}",
                  subjects_hint="give --topology FILE naming the origin's stream, or fail it "
                  f"over alone with jetlink {verb} failover {o.name} --subjects SUBJECTS (what "
                  "the producers publish to) and run this again")


def _prepare(backend: Backend, o: RegionObject, options: dict[str, Any]) -> Any:
    """``o``'s promotion read and checked, as ``stream|kv failover`` read it (its subjects
    against the other streams: by the plan, once per side, not again per object)."""
    from .rules import kv_adjust, prepare

    no_consumers = bool(options.get("no_consumers"))
    # the synced positions also give the subjects of an origin that does not answer: read
    # with --no-consumers too, which only places none (``transfer``)
    positions = backend.positions(o.cluster)
    kv = o.kind == "kv"
    return prepare(backend.site(o.cluster), o.stream, failover=True,
                   positions=positions, transfer=not no_consumers,
                   adjust=kv_adjust if kv else None, naming=_naming(o),
                   topology=options.get("_topology"), bucket=o.origin if kv else None,
                   overlap=False)


def _failover(backend: Backend, o: RegionObject, options: dict[str, Any], clock: Clock
              ) -> dict[str, Any]:
    """``o`` failed over by its verb's rules; when its origin was fenced first (``o.fence``),
    after it copied what that origin holds (:func:`_caught_up`)."""
    if o.kind == "topic":
        from ..kafka.mirrors import Mirrors, pump_links

        dd = backend.data_dir("dr failover")
        assert o.cluster is not None
        if o.fence is not None:  # the fenced source topic's last records copied: one step
            pump_links(dd, clock, clusters=[o.cluster], links={o.cluster: [o.link]})
        r = Mirrors(dd, o.cluster, clock).failover([o.stream], o.link)[0]
        if not r.ok and not r.already_stopped:
            raise JetlinkError(r.error_message or f"mirror topic {o.name} was not failed over")
        return r.to_json()
    promotion = _caught_up(backend, o, options) if o.fence is not None else \
        _prepare(backend, o, options)
    report = promotion.carry_out()
    doc: dict[str, Any] = report.to_json()
    return doc


def _caught_up(backend: Backend, o: RegionObject, options: dict[str, Any]) -> Any:
    """``o``'s promotion prepared once it copied what its origin, fenced first, holds (what
    it has not copied counted on the origin, ``origin_pending``, as ``stream promote``
    reads it), or after :data:`CATCH_UP_SECONDS` whatever is left (the divergent tail,
    which stays on the origin)."""
    import time

    deadline = time.monotonic() + CATCH_UP_SECONDS
    site = backend.site(o.cluster)
    since: tuple[int, float] | None = None  # (what was left, when) with no copy since
    while True:
        promotion = _prepare(backend, o, options)
        facts = promotion.facts
        now = time.monotonic()
        if promotion.rerun or not facts.reachable or not facts.pending or now >= deadline \
                or facts.last_seq is None:
            return promotion
        if since is not None and facts.pending >= since[0]:
            # it copied nothing since: waiting will not catch it up (a mirror whose own
            # limits hold it back, a copy in error): the embedded pump copied all it could
            # in one step; a live server is given STALLED_SECONDS
            if backend.replicates or now - since[1] >= STALLED_SECONDS:
                return promotion
        else:
            since = (facts.pending, now)
        site.settle(o.stream, int(facts.last_seq), min(0.5, deadline - now))


def _tail_of(o: RegionObject, options: dict[str, Any]) -> str | None:
    """The object's part of the region's tail dataset (``DIR/object=<name>``), or None (its
    own default, ./failback-<stream>-<time>)."""
    import os

    base = options.get("tail")
    if not base:
        return None
    part = o.name.replace("/", "_")
    if o.cluster is not None:
        part += f"@{o.side}"
    return os.path.join(str(base), f"object={part}")


def _failback(backend: Backend, o: RegionObject, options: dict[str, Any]) -> dict[str, Any]:
    from .failback import failback

    report = failback(backend.site(o.cluster), o.stream, tail=_tail_of(o, options),
                      switch=bool(options.get("switch")), kind=o.kind,
                      tail_at=options.get("_tail_at"))
    doc: dict[str, Any] = report.to_json()
    if not report.complete:
        raise JetlinkError(f"{o.kind} {o.shown}: the failback stopped at "
                           f"{report.state or 'a step'}; run the same command again")
    return doc


def _plan_facts(backend: Backend, objects: list[RegionObject], infos: dict[str, Any],
                topology: Any, clock: Clock, dd: Any, options: dict[str, Any]) -> None:
    """Each object's dry run as ``dr check`` reads it: its facts and grade (``options``:
    the run's, ``no_consumers`` among them)."""
    from .readiness import _OnceSite, _Records, check_nats_mirror, check_topics

    no_consumers = bool(options.get("no_consumers"))

    sites: dict[str | None, Any] = {}
    records: dict[str | None, Any] = {}
    topics: dict[str, list[MirrorReadiness]] = {}
    for o in objects:
        if o.state != PLANNED:
            continue
        if o.kind == "topic":
            assert o.cluster is not None
            if o.cluster not in topics:
                topics[o.cluster] = check_topics(dd, o.cluster, clock, {})
            found = [m for m in topics[o.cluster]
                     if m.facts.get("link") == o.link and m.facts.get("topic") == o.stream]
            if found:
                o.plan = {k: found[0].facts.get(k) for k in
                          ("source", "status", "recovery_point", "positions", "clamps")}
                o.status = found[0].status.value
            continue
        if o.cluster not in sites:
            sites[o.cluster] = _OnceSite(backend.site(o.cluster))
            records[o.cluster] = _Records(backend.positions(o.cluster))
        info = infos[o.key]
        if info.config.mirror is None:  # promoted before: the re-run finishes it
            _plan_rerun(backend, o, options)
            continue
        m = check_nats_mirror(sites[o.cluster], info, o.name, o.kind, o.side,
                              records[o.cluster], topology, {}, _naming(o))
        o.status = m.status.value
        facts = m.facts
        if "failover" not in facts:
            o.state = REFUSED
            o.detail = (m.result.criticals or ["the failover could not be prepared"])[0]
        elif facts.get("not_promotable"):
            o.state = REFUSED
            o.detail = str(facts["not_promotable"])
        elif facts.get("subjects_from") == "unknown":
            o.state = REFUSED
            o.detail = str(facts.get("subjects_why") or "its subjects are unknown")
        fo = facts.get("failover") or {}
        rp = {k: (facts.get("recovery_point") or {}).get(k) for k in
              ("messages", "seconds", "seconds_from", "stale")}
        lag = fo.get("lag")
        if facts.get("recovery_point") and rp["seconds"] is None:
            # never heard from its origin: what the mirror lacks is no figure (dr check's
            # "Lag unknown (never reported)"), not the 0 of a mirror that never copied
            rp["messages"] = lag = None
        o.plan = {"origin": facts.get("origin"), "lag": lag,
                  "recovery_point": rp,
                  "subjects": facts.get("subjects"),
                  "subjects_from": facts.get("subjects_from"),
                  # --no-consumers places none: no consumer to place, none clamped
                  "consumers": [] if no_consumers else facts.get("consumers") or [],
                  "clamps": [] if no_consumers else facts.get("clamps") or [],
                  "positions": facts.get("positions")}
        if o.state == REFUSED:
            o.plan["criticals"] = list(m.result.criticals)


def _plan_rerun(backend: Backend, o: RegionObject, options: dict[str, Any]) -> None:
    """A stream or bucket promoted before: done by an earlier run when its record says the
    promotion finished, else planned (the re-run places what is missing)."""
    try:
        promotion = _prepare(backend, o, options)
    except JetlinkError as err:
        o.state, o.detail = REFUSED, one_line(err)
        return
    rec = promotion.record
    o.plan = {"subjects": list(promotion.info.config.subjects), "subjects_from": "promoted"}
    if promotion.finished:
        o.state = EARLIER
        o.detail = f"failed over at {rec.done if rec is not None else 'an earlier run'}"
    else:
        o.detail = "promoted by an earlier run that stopped: the rest is finished"
        # what the re-run places: the origin's consumers the earlier run had not placed
        preview = promotion.preview()
        o.plan["consumers"] = [p.to_json() for p in preview.consumers if p.status != "exists"]
        o.plan["clamps"] = [c.to_json() for c in preview.clamps]


def _failback_plan(backend: Backend, objects: list[RegionObject],
                   journals: dict[str, Journal], options: dict[str, Any]) -> list[RegionObject]:
    """The failback's objects: the streams and buckets a failover promoted, each with its
    failback's dry run (the tail counted, the steps); a mirror again that this plan's journal
    failed back (a re-run: done earlier); mirror topics as they were found (manual)."""
    from .failback import OriginSilent, failback

    out = []
    for o in objects:
        journal = journals[o.side]
        done = (journal.doc or {}).get("objects", {}).get(o.key, {})
        switched = bool(((journal.doc or {}).get("options") or {}).get("switch"))
        _same_tail(journal, options)
        if o.kind == "topic":
            out.append(o)
        elif not o.promoted and (not done or done.get("state") in (DONE, EARLIER)):
            # a mirror: failed back (switched) by this plan, or not ours; one this plan's
            # journal left unfinished (a run killed inside or after its switch) is its
            # failback's to finish or report (core/dr/failback.py's record), as below
            if done:
                o.state, o.detail = EARLIER, f"failed back at {done.get('at')}"
                out.append(o)
        elif done.get("state") in (DONE, EARLIER) and (switched or not options.get("switch")):
            # done by this plan's journal: a finished run, or one killed after this object
            # (its journal marks an object done only once its failback finished)
            o.state, o.detail = EARLIER, f"failed back at {done.get('at')}"
            out.append(o)
        else:
            try:
                dry = failback(backend.site(o.cluster), o.stream, tail=_tail_of(o, options),
                               switch=bool(options.get("switch")), dry_run=True,
                               kind=o.kind, tail_at=options.get("_tail_at"))
            except UsageError as err:
                o.state, o.detail = REFUSED, one_line(err)
            except JetlinkError as err:
                o.origin_silent = isinstance(err, OriginSilent)
                if _resumed(backend, o):
                    # a failback a killed run began: its record finishes it; the dry run
                    # cannot see past the steps left (an old origin deleted, not caught up)
                    o.detail = f"resumes the failback a run began ({one_line(err)})"
                else:
                    o.state, o.detail = REFUSED, one_line(err)
            else:
                doc = dry.to_json()
                o.plan = {k: doc.get(k) for k in ("origin", "promoted_last_seq", "tail",
                                                   "unmatched", "origin_consumers", "steps")}
                if dry.already_done:
                    o.state, o.detail = EARLIER, f"failed back at {dry.failed_back_at}"
            out.append(o)
    return out


def _same_tail(journal: Journal, options: dict[str, Any]) -> None:
    """A re-run of a finished failback given ``--tail``: the directory its run wrote the
    tails to, or refused (exit 2; a re-run never exits 0 with a flag it did not honour)."""
    import os

    doc = journal.doc or {}
    given = options.get("tail")
    if not given or not doc.get("finished"):
        return
    had = (doc.get("options") or {}).get("tail")
    if had and os.path.abspath(str(had)) == os.path.abspath(str(given)):
        return
    where = f"its tails went to parquet:{had}" if had else "its tails went to their defaults"
    raise UsageError(f"the region failback finished at {doc['finished']} and {where}: nothing "
                     f"is written to --tail parquet:{given}; run again without --tail",
                     field="tail")


def _resumed(backend: Backend, o: RegionObject) -> bool:
    """Whether ``o``'s failback was begun by a run and not finished (its record in
    core/dr/failback.py's bucket, before the phase done)."""
    from .failback_record import DONE as BACK
    from .failback_record import FailbackStore

    rec = FailbackStore(backend.site(o.cluster).kv()).read(o.stream)
    return rec is not None and rec.get("phase") != BACK


def _deleted(backend: Backend, sides: list[Side], journals: dict[str, Journal],
             objects: list[RegionObject], wanted: list[str], seen: set[str], action: str
             ) -> list[RegionObject]:
    """The objects this failback's journal left unfinished whose promoted stream is gone: a
    run killed inside a switch, between its steps delete-promoted and create-mirror-back
    (core/dr/failback.py), deleted it; its failback record (phase switch) finishes it."""
    from ..config.stream import StreamSource
    from .failback_record import DONE as BACK
    from .failback_record import FailbackStore

    found = {o.key for o in objects}
    out = []
    for side in sides:
        if not side.nats:  # a Kafka cluster keeps no failback records (mirror topics' are
            continue       # the link's): nothing of its own to finish here
        j = journals.get(side.label)
        if j is None:  # a side none of whose objects is left: kept only when one is found
            j = Journal(backend.kv(side.cluster), action, wanted, side.cluster)
            j.read()
        for key, was in ((j.doc or {}).get("objects") or {}).items():
            kind, _, rest = key.partition(":")
            name = rest.rpartition("@")[0]
            if key in found or kind not in ("stream", "kv") or was.get("state") in (
                    DONE, EARLIER, SKIPPED):
                continue
            store = FailbackStore(backend.site(side.cluster).kv())
            # a bucket's stream: KV_<bucket>, or the bucket's own name (core/config/kv.py)
            recs = [(n, store.read(n)) for n in ([f"KV_{name}", name] if kind == "kv"
                                                  else [name])]
            stream, rec = next(((n, r) for n, r in recs if r is not None), (name, None))
            if rec is None or rec.get("phase") == BACK or not rec.get("mirror"):
                continue
            src = StreamSource.from_json(rec["mirror"], strict=False)
            region = region_of(side.label, src)
            if region in wanted:
                seen.add(region)
                origin = origin_name(kind, src.name)
                out.append(RegionObject(kind, name, side.label, side.cluster, stream, origin,
                                        region, promoted=True))
                journals[side.label] = j
    return out


def reading_from(dd: Any, cluster: str, clock: Clock) -> list[str]:
    """What the other clusters of the data directory ``dd`` copy from ``cluster``: their
    mirrors (streams, KV buckets) and promoted mirrors whose origin is in it, the streams
    sourcing from it, and the mirror topics of links whose source cluster it is; each as
    ``NAME@CLUSTER (mirror of ORIGIN)`` / ``(sources ORIGIN)`` / ``(mirror topic of
    TOPIC)``, sorted. A cluster that does not open is passed over: this is what a removal
    says, not a check."""
    from ..config.kv import bucket_of_stream
    from ..jetstream import JetStream

    out: list[str] = []
    for name in dd.cluster_names():
        if name == cluster:
            continue
        try:
            handle = dd.open(name)
            if handle.kind == "kafka":
                for info, region in mirror_topics(dd, name, clock):
                    if region == cluster:
                        out.append(f"{info.link_name}/{info.mirror_topic_name}@{name} "
                                   f"(mirror topic of {info.source_topic_name})")
                continue
            infos = list(JetStream(handle, clock).streams())
        except (JetlinkError, OSError):
            continue
        for info in infos:
            cfg = info.config
            if is_jetlink_own(cfg.name):
                continue
            shown = bucket_of_stream(cfg.name) or cfg.name
            mirrored = mirrored_from(cfg)
            if mirrored is not None:
                kind, src, promoted = mirrored
                if region_of(name, src) == cluster and not promoted:
                    out.append(f"{shown}@{name} (mirror of {origin_name(kind, src.name)})")
                continue
            froms = [s.name for s in cfg.sources or [] if region_of(name, s) == cluster]
            if froms:
                out.append(f"{shown}@{name} (sources {', '.join(froms)})")
    return sorted(out)


def plan_region(backend: Backend, action: str, regions: Sequence[str], *,
                clusters: Sequence[str] | None = None, topology: Any = None,
                no_consumers: bool = False, skip: Sequence[str] = (),
                skip_unready: bool = False, tail: str | None = None, switch: bool = False,
                fence: bool = False, clock: Clock | None = None) -> RegionPlan:
    """The region run ``action`` (:data:`FAILOVER` or :data:`FAILBACK`) of ``regions`` on the
    side addressed (``clusters``: the embedded clusters looked at, None every one), each
    object read once and its journal record read. UsageError (nothing changed) for a region
    that is empty, unknown (with a suggestion) or the side addressed, a ``--skip`` that names
    no object, and a region with no object at all; JetlinkError for a journal record jetlink
    did not write."""
    from ..clock import SystemClock

    clock = clock or SystemClock()
    wanted = region_names(regions)
    # no replication step after it: a dry run copies nothing, a failover promotes and a
    # failback catches its old origins up itself (core/dr/failback.py)
    sides, known, dd = sides_of(backend, clusters, f"dr {action}", step=False,
                                regions=wanted)
    chosen = clusters is not None or dd is None  # the sides were named (or the server's)
    refuse_side_addressed(wanted, sides, chosen,
                          ("where the mirrors are" if action == FAILOVER else
                           "where the streams a failover promoted are")
                          + "); name the region that failed, where their origins are")
    addressed = [s.label for s in sides] if chosen else []
    sides = [s for s in sides if s.label not in wanted]
    seen: set[str] = set(known)
    objects: list[RegionObject] = []
    listed: list[Listed] = []
    infos: dict[str, Any] = {}
    for side in sides:
        if side.nats:
            found, lst, fi = _nats_objects(backend, side, wanted, seen)
            objects += found
            listed += lst
            infos.update({o.key: i for o, i in zip(found, fi, strict=True)})
        if side.links and dd is not None:
            objects += _topic_objects(dd, side, wanted, action, clock, seen)
    journals = {}
    nats_sides = {s.label for s in sides if s.nats}
    for first in {o.side: o for o in objects}.values():
        kv = backend.kv(first.cluster) if first.side in nats_sides or first.cluster is None \
            else None
        j = Journal(kv, action, wanted, first.cluster)
        j.read()
        if action == FAILBACK and j.doc is not None and j.doc.get("finished"):
            # a failback finished before the region's latest failover began is the last
            # cycle's: this failback is a new run (the failover record says when it began)
            over = Journal(kv, FAILOVER, wanted, first.cluster)
            over.read()
            if over.doc is not None and _later(over.doc, "started", j.doc, "finished"):
                j.doc = None
        journals[first.side] = j
    if action == FAILBACK:
        objects += _deleted(backend, sides, journals, objects, wanted, seen, action)
    options: dict[str, Any] = {"no_consumers": no_consumers, "skip": list(skip),
                               "skip_unready": skip_unready, "fence": fence}
    if action == FAILBACK:
        # one time for every default tail's name: the plan shown names what the run writes
        options = {"tail": tail, "switch": switch, "skip": list(skip),
                   "_tail_at": clock.now_ns()}
        objects = _failback_plan(backend, objects, journals, options)
    down = [c for c in known if c not in wanted and dd is not None and not sides
            and dd.open(c, create_local=False).down]
    _no_object(wanted, seen, objects, sides, action, dd is not None, addressed,
               bare=seen <= set(known), down=down)
    _dependencies(objects, infos)
    if action == FAILOVER:
        _plan_facts(backend, objects, infos, topology, clock, dd, options)
        _fenced_by_stopped_run(objects, journals)
    _apply_skips(objects, skip, skip_unready)
    if action == FAILOVER:
        _one_primary(objects, skip_unready)
        for o in objects:
            if o.state == SKIPPED and o.fenced_by_run is not None:
                o.detail += (f"; its origin {o.origin}@{o.region}, fenced by the run that "
                             "stopped, to be unfenced (it then takes its writes again)")
    return RegionPlan(backend, action, wanted, sides, objects, listed, journals,
                      {**options, "_topology": topology}, clock)


def _fenced_by_stopped_run(objects: list[RegionObject], journals: dict[str, Journal]) -> None:
    """The objects still to promote whose origin the stopped run this one continues fenced
    before promoting them (its journal's ``fenced``): the fence is this run's to keep (the
    promotion) or undo (the object fails, or is skipped now)."""
    for o in objects:
        j = journals.get(o.side)
        if o.state not in (PLANNED, REFUSED) or j is None or j.doc is None \
                or j.doc.get("finished"):
            continue
        had = (j.doc.get("objects") or {}).get(o.key, {}).get("fenced")
        if isinstance(had, list) and all(isinstance(x, str) for x in had):
            o.fenced_by_run = list(had)


def _no_object(wanted: list[str], seen: set[str], objects: list[RegionObject],
               sides: list[Side], action: str, embedded: bool,
               addressed: Sequence[str] = (), bare: bool = False,
               down: Sequence[str] = ()) -> None:
    """UsageError for a region nobody knows of, or one with nothing to take over
    (``bare``: the sides name no origin at all; ``down``: the clusters that would be sides
    but are down)."""
    for r in wanted:
        refuse_unknown_region(r, seen, embedded, "an origin of this server's mirrors is in",
                              addressed, bare)
        if not any(o.region == r for o in objects):
            verb = action.replace('fail', 'fail ')
            if not sides and down:  # the others are down: the region and side swapped?
                these = f"cluster{'s' if len(down) > 1 else ''} {', '.join(down)}"
                raise UsageError(
                    f"--from {r}: no side is left to {verb} to: {these}, not given as --from, "
                    f"{'are' if len(down) > 1 else 'is'} down (a side that is down takes "
                    f"nothing over); if {these} failed, the region and the side are swapped: "
                    f"jetlink dr {action} {' '.join(f'--from {d}' for d in down)}",
                    field="from")
            if not sides:  # every cluster is a region given: none is left to take over
                given = ", ".join(f"--from {w}" for w in wanted)
                raise UsageError(f"--from {r}: no side is left to {verb} to: every cluster is "
                                 f"one of the regions given ({given}); name only the regions "
                                 "that failed (every other cluster is a side that takes over)",
                                 field="from")
            where = ", ".join(s.label or "the server's domain" for s in sides)
            why = ("no mirror stream, KV mirror bucket or mirror topic has its origin there"
                   if action == FAILOVER else "no stream, KV bucket or mirror topic there "
                   f"was promoted by a failover from {r}")
            what = "mirrors from" if action == FAILOVER else "was failed over from"
            raise UsageError(f"--from {r}: nothing on {where} {what} {r} ({why}): nothing to "
                             f"{verb}", field="from")


def _one_primary(objects: list[RegionObject], skip_unready: bool) -> None:
    """core/dr/rules.py ``two_primaries`` over the plan: every object of an origin mirrored
    twice is refused, naming the others, until all but one are left out (``--skip-unready``
    leaves them all out). One promoted by an earlier run counts: the others are refused."""
    from .rules import Primary, two_primaries

    keyed = {Primary(o.region, o.kind, o.origin, o.side, o.shown): o for o in objects
             if o.state in (PLANNED, EARLIER)}
    for p, why in two_primaries(list(keyed)).items():
        o = keyed[p]
        if o.state != PLANNED:
            continue
        o.state, o.detail = (SKIPPED, f"--skip-unready: {why}") if skip_unready else \
            (REFUSED, why)


def _apply_skips(objects: list[RegionObject], skip: Sequence[str], skip_unready: bool
                 ) -> None:
    if any(not n for n in skip):
        raise UsageError("--skip: an object's name is not empty (NAME, or NAME@SIDE for one "
                         "side's)", field="skip")
    names = {n: False for n in skip}
    for o in objects:
        forms = {o.name, o.shown, o.stream, o.key}
        hit = [n for n in names if n in forms]
        for n in hit:
            names[n] = True
        if o.state not in (PLANNED, REFUSED):
            continue
        if hit:
            o.state, o.detail = SKIPPED, f"--skip {hit[0]}" + (
                f" ({o.detail})" if o.detail else "")
        elif skip_unready and (o.state == REFUSED or o.status == "CRITICAL"):
            why = o.detail or "dr check grades it CRITICAL"
            o.state, o.detail = SKIPPED, f"--skip-unready: {why}"

    missing = [n for n, hit in names.items() if not hit]
    if missing:
        name, _at, where = missing[0].rpartition("@")
        sides = sorted({o.shown for o in objects if where and where == o.region
                        and name in (o.name, o.origin)})
        if sides:  # NAME@REGION: the origin's side given where the mirror's is meant
            raise UsageError(f"--skip {missing[0]}: no object of the region is named "
                             f"{missing[0]}: NAME@SIDE names the side the mirror is on, not "
                             f"its origin's region; did you mean {' or '.join(sides)}?",
                             field="skip")
        hint = did_you_mean(missing[0], sorted({o.name for o in objects}))
        raise UsageError(f"--skip {missing[0]}: no object of the region is named "
                         f"{missing[0]}" + (f"; {hint}" if hint else ""), field="skip")
