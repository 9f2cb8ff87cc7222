"""``jetlink dr watch``: the readiness check run every interval, exported to Prometheus.

- **The check** is core/dr/readiness.py :func:`~jetlink.core.dr.readiness.check_readiness`,
  unchanged (the thresholds, the topology file and the clusters as ``dr check`` takes them);
  :class:`Watch` keeps the last one (:class:`WatchCheck`) and what it did by itself.
- **Rows.** Every object of a check (a mirror, or a failed-over stream or bucket whose old
  origin answers again) is one :class:`ObjectRow`: its name, kind and cluster as ``dr check``
  shows them, its **region** (the origin's cluster or JetStream domain: a mirror's origin, a
  mirror topic's source cluster, a returned origin's region), its status in natscli's
  numbering (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN), and the figures ``dr check`` reports
  as perf data (``lag``, ``recovery_point_seconds``, ``positions_age``), whether its old
  origin is fenced and whether it is a split brain (core/dr/fence.py ``returned_origin``).
  ``--from REGION`` keeps the rows of those regions (a mirror whose check stopped early has
  its config's region; a row whose region is not known at all is kept: never hidden).
- **Fence on return** (opt-in): after a check, the regions with a row whose old origin is
  back unfenced (``split brain`` or ``unfenced``) are fenced, core/dr/fence.py
  ``plan_fence(...).carry_out()``, each old origin at most once by itself: what was done
  (fenced, or tried and failed) is remembered for the life of the process
  (:class:`WatchAction`).
- **Failover after** (opt-in, ``--from`` regions only): a region whose mirrors' origins
  have all been silent for the whole duration, every check of it finding the DR side
  answering and each mirror's positions synced within ``--positions-max-age``, is failed
  over by its region plan, core/dr/region.py ``plan_region(...).carry_out()``, once.
  ``--dry-run``: both only say what they would do (the plans' ``preview``).
- **Exposition**: :class:`WatchCollector` turns the last check into prometheus_client metric
  families (names: :data:`METRICS`, ``<namespace>_dr_<item>``, the names of ``dr check
  --format prometheus`` where it has one); :func:`serve` answers ``/metrics`` (prometheus_
  client's WSGI app over a registry of its own) and ``/healthz`` on a wsgiref server of its
  own thread. prometheus_client and wsgiref are imported by the functions that use them.
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..durations import SECOND
from ..errors import JetlinkError, UsageError, did_you_mean
from ..monitor.result import EXIT_CODES, Status, reason
from .fence import FAILED, FENCED, TO_FENCE, Side, refuse_side_addressed, region_names
from .readiness import CHECK, DEFAULT_NAMESPACE, MirrorReadiness, Readiness, check_readiness

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import Backend
    from ..clock import Clock

__all__ = ["METRICS", "RETURNED_UNFENCED", "MetricsServer", "ObjectRow", "Watch",
           "WatchAction", "WatchCheck", "WatchCollector", "listen_address", "region_of",
           "serve"]

#: the returned-origin states a fence on return acts on (core/dr/fence.py ``OriginReturn``)
RETURNED_UNFENCED = ("split brain", "unfenced")
#: a region failover's result when every object was failed over (or was already)
FAILED_OVER = "failed over"

_ORDER = {Status.OK: 0, Status.UNKNOWN: 1, Status.WARNING: 2, Status.CRITICAL: 3}

#: every metric (without the namespace): item -> (type, labels, help)
METRICS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "status_code": ("gauge", ("name", "kind", "cluster", "region"),
                    "Nagios compatible status code of the object (0 OK, 1 WARNING, "
                    "2 CRITICAL, 3 UNKNOWN)"),
    "lag": ("gauge", ("name", "kind", "cluster", "region"),
            "Messages the mirror has not copied from its origin"),
    "lag_stale": ("gauge", ("name", "kind", "cluster", "region"),
                  "1 when the lag is the one the mirror last reported, its origin silent "
                  "(not current)"),
    "recovery_point_seconds": ("gauge", ("name", "kind", "cluster", "region"),
                               "Age in seconds of the oldest message a failover now would "
                               "lose"),
    "positions_age": ("gauge", ("name", "kind", "cluster", "region"),
                      "Seconds since the origin's consumer positions were synced"),
    "fenced": ("gauge", ("name", "kind", "cluster", "region"),
               "1 when the failed-over object's old origin answers again and is fenced"),
    "split_brain": ("gauge", ("name", "kind", "cluster", "region"),
                    "1 when the old origin answers again and takes the subjects the "
                    "promoted stream takes"),
    "region_status_code": ("gauge", ("region",),
                           "Nagios compatible status code of the region's worst object"),
    "region_lag": ("gauge", ("region",),
                   "Messages the mirrors of the region have not copied (summed)"),
    "region_lag_stale": ("gauge", ("region",),
                         "1 when a lag of the region's sum is one last reported, not current"),
    "region_recovery_point_seconds": ("gauge", ("region",),
                                      "The region's worst recovery point in seconds"),
    "region_positions_age": ("gauge", ("region",),
                             "Seconds since the region's least recently synced positions"),
    "region_fenced": ("gauge", ("region",),
                      "1 when every old origin of the region that answers again is fenced"),
    "region_split_brain": ("gauge", ("region",),
                           "1 when an old origin of the region is a split brain"),
    "mirrors": ("gauge", ("status",), "Objects checked, by status"),
    "overall_status_code": ("gauge", (), "Nagios compatible status code of the worst object "
                            "(CRITICAL when the mirrors could not be listed)"),
    "worst_recovery_point_seconds": ("gauge", (), "The worst mirror's recovery point in "
                                     "seconds"),
    "worst_recovery_point_messages": ("gauge", (), "Messages behind of the mirror furthest "
                                      "behind"),
    "last_check_timestamp_seconds": ("gauge", (), "Unix time the last check finished"),
    "check_duration_seconds": ("gauge", (), "Seconds the last check took"),
    "checks": ("counter", (), "Checks run"),
    "check_failures": ("counter", (), "Checks that could not list the mirrors"),
    "actions": ("counter", ("action", "region", "result"),
                "Actions dr watch took by itself, by action, region and result"),
}


def listen_address(text: str) -> tuple[str, int]:
    """``--listen HOST:PORT`` (an IPv6 host in brackets, ``[::1]:9180``): the host and the
    port (0 to 65535; 0: one the system chooses). UsageError naming the rule otherwise."""
    host, sep, port = text.rpartition(":")
    bare = host.strip("[]")
    rule = "HOST:PORT, e.g. 127.0.0.1:9180 or [::1]:9180"
    if not sep or not bare or not port.isdigit() or (":" in bare) != host.startswith("["):
        raise UsageError(f"--listen {text!r}: not {rule}", field="listen")
    if int(port) > 65535:
        raise UsageError(f"--listen {text!r}: port {port} out of range (0 to 65535)",
                         field="listen")
    return bare, int(port)


# --- rows --------------------------------------------------------------------------------------
def region_of(m: MirrorReadiness) -> str:
    """The region of an object of a check: its origin's cluster or JetStream domain (for a
    mirror whose check stopped before its origin was read, as its config names it)."""
    back = m.facts.get("returned_origin")
    if back:
        return str(back["region"])
    origin = m.facts.get("origin")
    if origin:  # a mirror of the same domain names none: the mirror's own
        return str(origin.get("cluster", origin.get("domain")) or m.cluster)
    source = m.facts.get("source")
    if source:
        return str(source.get("cluster") or "")
    return m.region  # from the mirror's config: a check stopped early


@dataclass(frozen=True)
class ObjectRow:
    """One object of a check, as exported (module doc)."""

    name: str
    kind: str
    cluster: str
    region: str
    status: Status
    lag: float | None
    recovery_point_seconds: float | None
    positions_age: float | None
    fenced: bool
    split_brain: bool
    origin: str = ""  # a returned origin: its stream
    returned: str = ""  # a returned origin: its state (core/dr/fence.py OriginReturn)
    origin_answers: bool | None = None  # a mirror's origin (a topic's source); None: unknown
    # positions that apply to it were never synced (its age is no figure: +Inf in the
    # exposition, so an alert on the age fires; the region's too)
    positions_never: bool = False
    lag_stale: bool = False  # the lag as last reported (core/monitor/lag.py), not current

    @classmethod
    def of(cls, m: MirrorReadiness) -> ObjectRow:
        perf = {p.name: p.value for p in m.result.perf_data}
        back = m.facts.get("returned_origin") or {}
        state = str(back.get("state", ""))
        seen = m.facts.get("origin") or m.facts.get("source") or {}
        answers = bool(seen["reachable"]) if "reachable" in seen else None
        positions = m.facts.get("positions") or {}
        never = "synced" in positions and positions["synced"] is None
        stale = any(p.stale for p in m.result.perf_data if p.name == "lag")
        return cls(m.name, m.kind, m.cluster, region_of(m), m.status, perf.get("lag"),
                   perf.get("recovery_point_seconds"), perf.get("positions_age"),
                   state == "fenced", m.split_brain, str(back.get("origin", "")),
                   state, answers, never, stale)

    @property
    def labels(self) -> list[str]:
        return [self.name, self.kind, self.cluster, self.region]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "cluster": self.cluster,
                "region": self.region, "status": self.status.value,
                "status_code": EXIT_CODES[self.status], "lag": self.lag,
                "recovery_point_seconds": self.recovery_point_seconds,
                "positions_age": self.positions_age, "fenced": self.fenced,
                "split_brain": self.split_brain}


def _worst(statuses: Sequence[Status]) -> Status:
    return max(statuses, key=lambda s: _ORDER[s]) if statuses else Status.UNKNOWN


#: what a :class:`WatchAction` does, as its lines say it
_VERBS = {"fence": "fence", "failover": "fail over"}
#: a :class:`WatchAction`'s result when ``--dry-run`` kept it from acting
DRY_RUN = "dry run"


@dataclass
class WatchAction:
    """Something dr watch did by itself: ``fence`` an old origin (``result``: core/dr/
    fence.py ``FENCED`` or ``FAILED``), ``failover`` a region (``failed over``, ``failed``,
    ``refused``), or with ``--dry-run`` only said it would (:data:`DRY_RUN`); ``detail``
    says what came of it."""

    action: str  # "fence" | "failover"
    region: str
    target: str  # "stream ORDERS@west (failed over to ORDERS_EAST@east)", "region west"
    result: str
    detail: str = ""

    def message(self) -> str:
        """The line logged (the CLI prefixes ``jetlink: dr watch:``)."""
        verb = _VERBS[self.action]
        if self.result == DRY_RUN:
            return f"would {verb} {self.target} (dry run): {self.detail}"
        if self.result in (FENCED, FAILED_OVER):
            return f"{self.result} {self.target}: {self.detail}"
        return f"could not {verb} {self.target} ({self.result}): {self.detail}"

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "region": self.region, "target": self.target,
                "result": self.result, "detail": self.detail}


@dataclass
class WatchCheck:
    """One check of the watch: when, how long, what it found (rows within ``--from``) and
    what was done by itself after it."""

    time_ns: int
    duration: float  # seconds
    rows: list[ObjectRow]
    readiness: Readiness | None  # None: the check raised (``failure``)
    failure: str = ""  # why the mirrors could not be listed
    actions: list[WatchAction] = field(default_factory=list)

    @property
    def status(self) -> Status:
        if self.failure:
            return Status.CRITICAL
        return _worst([r.status for r in self.rows])

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in (Status.OK, Status.WARNING, Status.CRITICAL)}
        for r in self.rows:
            out[r.status.value] = out.get(r.status.value, 0) + 1
        return out

    def worst(self) -> tuple[float | None, int | None]:
        """The worst recovery point of the rows: (seconds, messages); None: no figure."""
        seconds = [r.recovery_point_seconds for r in self.rows
                   if r.recovery_point_seconds is not None]
        lags = [r.lag for r in self.rows if r.lag is not None]
        return (max(seconds) if seconds else None, int(max(lags)) if lags else None)

    def to_json(self) -> dict[str, Any]:
        from ..clock import format_rfc3339_nano

        seconds, messages = self.worst()
        return {"time": format_rfc3339_nano(self.time_ns), "status": self.status.value,
                "status_code": EXIT_CODES[self.status], "counts": self.counts(),
                "worst_recovery_point": {"seconds": seconds, "messages": messages},
                "duration_seconds": round(self.duration, 6), "failure": self.failure or None,
                "objects": [r.to_json() for r in self.rows],
                "actions": [a.to_json() for a in self.actions]}


#: ``--positions-max-age`` when not given: twelve passes of ``positions sync --follow``
POSITIONS_MAX_AGE = 60 * SECOND


def _check_options(regions: Sequence[str], fence_on_return: bool, failover_after: int | None,
                   positions_max_age: int | None, dry_run: bool) -> None:
    """UsageError for options that go only with others."""
    if failover_after is not None and not regions:
        raise UsageError("--failover-after: name the regions the watch may fail over with "
                         "--from REGION", field="failover_after")
    if positions_max_age is not None and failover_after is None:
        raise UsageError("--positions-max-age: only with --failover-after (how recent the "
                         "positions must be for a failover by itself)",
                         field="positions_max_age")
    if dry_run and not fence_on_return and failover_after is None:
        raise UsageError("--dry-run: only with --fence-on-return or --failover-after (what "
                         "the watch would do by itself)", field="dry_run")


# --- the loop's state --------------------------------------------------------------------------
class Watch:
    """The readiness check of ``backend``, run by :meth:`check` (every interval, by the
    caller's loop), its last result and what was done by itself; read by the collector and
    ``/healthz`` from other threads (one lock)."""

    def __init__(self, backend: Backend, *, regions: Sequence[str] = (),
                 flags: Mapping[str, Any] | None = None, topology: Any = None,
                 clusters: Sequence[str] | None = None, clock: Clock | None = None,
                 fence_on_return: bool = False, failover_after: int | None = None,
                 positions_max_age: int | None = None, dry_run: bool = False) -> None:
        from ..clock import SystemClock

        self.backend = backend
        self.regions = region_names(regions)
        self.flags = dict(flags or {})
        self.topology = topology
        self.clusters = list(clusters) if clusters is not None else None
        self.clock = clock or SystemClock()
        self.fence_on_return = fence_on_return
        self.failover_after = failover_after  # ns; None: no failover by itself
        self.positions_max_age = POSITIONS_MAX_AGE if positions_max_age is None \
            else positions_max_age  # ns
        self.dry_run = dry_run
        _check_options(self.regions, fence_on_return, failover_after, positions_max_age,
                       dry_run)
        self._down_since: dict[str, int] = {}  # region -> when it was first seen down
        self._lock = threading.Lock()
        self._last: WatchCheck | None = None
        self._checks = 0
        self._failures = 0
        self._actions: Counter[tuple[str, str, str]] = Counter()
        self._done: set[tuple[str, str, str]] = set()  # (action, region, origin stream)

    @property
    def last(self) -> WatchCheck | None:
        with self._lock:
            return self._last

    def check(self) -> WatchCheck:
        """One check (and, with ``fence_on_return``, the fences it calls for), kept as the
        last. A check that raises is a failed one (its reason kept), never the loop's end."""
        started = time.monotonic()
        readiness: Readiness | None = None
        try:
            found = check_readiness(self.backend, flags=self.flags, topology=self.topology,
                                    clusters=self.clusters, clock=self.clock)
        except JetlinkError as err:
            if isinstance(err, UsageError) and self._checks == 0:
                raise  # the command line's (the first check): the watch ends there
            failure = f"check failed: {reason(err)}"
        except Exception as err:  # noqa: BLE001 - a failed check, reported; the watch goes on
            failure = f"check failed: {type(err).__name__}: {err}"
        else:
            readiness, failure = found, "; ".join(found.failures)
        if failure:
            # A live connection never reconnects by itself (core/live/client.py): after a
            # check that failed (the server addressed may have restarted) the next one
            # connects anew, so a server that came back is watched again.
            self.backend.close(step=False)
        if self._checks == 0 and self.regions:
            self.check_regions(readiness, failure)
        rows = [] if readiness is None else self._within(readiness.mirrors)
        done = WatchCheck(self.clock.now_ns(), time.monotonic() - started, rows, readiness,
                          failure)
        if self.fence_on_return:
            done.actions = self._fence_returned(rows)
        if self.failover_after is not None:
            done.actions += self._fail_over_regions(done)
        with self._lock:
            self._last = done
            self._checks += 1
            self._failures += bool(failure)
            for a in done.actions:
                self._actions[(a.action, a.region, a.result)] += 1
        return done

    def _within(self, mirrors: Sequence[MirrorReadiness]) -> list[ObjectRow]:
        rows = [ObjectRow.of(m) for m in mirrors]
        if self.regions:
            rows = [r for r in rows if not r.region or r.region in self.regions]
        return rows

    def check_regions(self, first: Readiness | None, failure: str) -> None:
        """``--from``: UsageError for a region that is neither a cluster of the data
        directory nor the region of an object the first check found (with a suggestion,
        core/errors.py ``did_you_mean``). Not checked when that check could not list the
        mirrors of a live server (nothing is known of its regions)."""
        if self.clusters is not None:  # the sides named (--cluster): none is a region
            refuse_side_addressed(self.regions, [Side(c, c) for c in self.clusters], True,
                                  "where the mirrors are); name the region that failed, "
                                  "where their origins are")

        def data_dir(dd: Any) -> list[str]:
            return list(dd.cluster_names())  # a damaged one too: it is a region all the same

        known = set(self.backend.either(data_dir=data_dir, server=lambda js: []))
        if first is None or (failure and not known):
            return
        known.update(region_of(m) for m in first.mirrors)
        known.update(first.failed_over_regions)  # a region failed over, its origins silent
        known.discard("")
        for r in self.regions:
            if r not in known:
                hint = did_you_mean(r, sorted(known))
                raise UsageError(f"--from {r}: no region named {r} (a cluster of the data "
                                 "directory, or the cluster or JetStream domain of an "
                                 "origin)" + (f"; {hint}" if hint else ""), field="from")

    def _fence_returned(self, rows: Sequence[ObjectRow]) -> list[WatchAction]:
        """The regions with an old origin back unfenced, fenced (core/dr/fence.py
        ``plan_fence`` then ``carry_out``), each old origin at most once by itself."""
        from .fence import plan_fence

        todo: dict[str, list[ObjectRow]] = {}
        for r in rows:
            if r.returned in RETURNED_UNFENCED and \
                    ("fence", r.region, r.origin) not in self._done:
                todo.setdefault(r.region, []).append(r)
        out: list[WatchAction] = []
        for region, returned in sorted(todo.items()):
            self._done.update(("fence", region, r.origin) for r in returned)
            try:
                plan = plan_fence(self.backend, [region], clusters=self.clusters,
                                  clock=self.clock)
                report = plan.preview() if self.dry_run else plan.carry_out()
            except JetlinkError as err:
                out += [WatchAction("fence", region, f"{r.kind} {r.origin}@{region} (failed "
                                    f"over to {r.name})", FAILED, reason(err))
                        for r in returned]
                continue
            for item in report.items:
                if item.action in (FENCED, FAILED, TO_FENCE):
                    self._done.add(("fence", region, item.stream))
                    dry = item.action == TO_FENCE
                    detail = f"{', '.join(item.subjects_before or [])} -> " \
                        f"{', '.join(item.subjects_after or [])}" if dry else item.detail
                    out.append(WatchAction("fence", region, f"{item.kind} {item.name}@"
                                           f"{item.region} (failed over to "
                                           f"{item.failed_over_to})",
                                           DRY_RUN if dry else item.action, detail))
        return out

    def _fail_over_regions(self, done: WatchCheck) -> list[WatchAction]:
        """``--failover-after``: each region of ``--from`` whose every origin has not
        answered for that long (:meth:`_down`, check after check) failed over (core/dr/
        region.py ``plan_region`` then ``carry_out``; ``--dry-run``: its preview), once."""
        out = []
        assert self.failover_after is not None
        for region in self.regions:
            if ("failover", region, "") in self._done:
                continue
            if not self._down(done, region):
                self._down_since.pop(region, None)  # the whole duration starts again
                continue
            since = self._down_since.setdefault(region, done.time_ns)
            if done.time_ns - since >= self.failover_after:
                self._done.add(("failover", region, ""))
                out.append(self._fail_over(region, done.time_ns - since))
        return out

    def _down(self, done: WatchCheck, region: str) -> bool:
        """Whether ``region`` is out as a failover by itself needs it: the DR side answered
        (the check listed the mirrors), the region has mirrors, none of their origins
        answers, and each one's positions were synced within ``positions_max_age``."""
        if done.failure:
            return False
        mirrors = [r for r in done.rows if r.region == region and not r.returned]
        return bool(mirrors) and all(
            r.origin_answers is False and r.positions_age is not None
            and r.positions_age * SECOND <= self.positions_max_age for r in mirrors)

    def _fail_over(self, region: str, down_ns: int) -> WatchAction:
        """The region's failover (or its dry run) as one action."""
        from ..monitor.lag import ago
        from .region import DONE, EARLIER, FAILOVER, plan_region

        target = f"region {region} (its origins silent for {ago(down_ns)})"
        try:
            plan = plan_region(self.backend, FAILOVER, [region], clusters=self.clusters,
                               topology=self.topology, clock=self.clock)
            report = plan.preview() if self.dry_run else plan.carry_out()
        except JetlinkError as err:
            return WatchAction("failover", region, target, FAILED, reason(err))
        if report.refused or report.failed:
            bad = report.refused or report.failed
            return WatchAction("failover", region, target, bad[0].state, "; ".join(
                f"{o.shown}: {o.detail}" for o in bad))
        names = ", ".join(o.shown for o in report.objects)
        if self.dry_run:  # what it would fail over, not what an earlier run did
            todo = ", ".join(o.shown for o in report.objects
                             if o.state not in (DONE, EARLIER)) or "nothing left"
            earlier = [o.shown for o in report.objects if o.state in (DONE, EARLIER)]
            return WatchAction("failover", region, target, DRY_RUN, todo + (
                f" ({', '.join(earlier)} failed over earlier)" if earlier else ""))
        return WatchAction("failover", region, target, FAILED_OVER,
                           f"{report.count(DONE, EARLIER)} of {len(report.objects)} done "
                           f"({names})")

    def health(self) -> tuple[bool, str]:
        """``/healthz``: (healthy, why): the last check ran and listed the mirrors."""
        last = self.last
        if last is None:
            return False, "no check has completed yet"
        if last.failure:
            return False, f"the last check failed: {last.failure}"
        return True, "ok"

    def snapshot(self) -> tuple[WatchCheck | None, int, int, dict[tuple[str, str, str], int]]:
        with self._lock:
            return self._last, self._checks, self._failures, dict(self._actions)


# --- exposition --------------------------------------------------------------------------------
class WatchCollector:
    """A prometheus_client collector (its ``collect``) of a :class:`Watch`'s last check:
    the families of :data:`METRICS` named ``<namespace>_dr_<item>``."""

    def __init__(self, watch: Watch, namespace: str = DEFAULT_NAMESPACE) -> None:
        self.watch = watch
        self.namespace = namespace

    def name(self, item: str) -> str:
        return f"{self.namespace}_{CHECK}_{item}" if self.namespace else f"{CHECK}_{item}"

    def _family(self, item: str) -> Any:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        kind, labels, help_text = METRICS[item]
        cls = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
        return cls(self.name(item), help_text, labels=list(labels))

    def collect(self) -> Iterator[Any]:
        last, checks, failures, actions = self.watch.snapshot()
        families = {item: self._family(item) for item in METRICS}
        families["checks"].add_metric([], checks)
        families["check_failures"].add_metric([], failures)
        for (action, region, result), n in sorted(actions.items()):
            families["actions"].add_metric([action, region, result], n)
        if last is not None:
            _add_check(families, last)
        yield from families.values()


def _add_check(families: dict[str, Any], last: WatchCheck) -> None:
    """The families of one check: per object, per region, the whole."""
    regions: dict[str, list[ObjectRow]] = {}
    for r in last.rows:
        _add_row(families, "", r.labels, r)
        regions.setdefault(r.region, []).append(r)
    for region, rows in sorted(regions.items()):
        returned = [r for r in rows if r.returned]
        lags = [r.lag for r in rows if r.lag is not None]
        merged = ObjectRow(
            "", "", "", region, _worst([r.status for r in rows]),
            sum(lags) if lags else None,
            _top(r.recovery_point_seconds for r in rows), _top(r.positions_age for r in rows),
            bool(returned) and all(r.fenced for r in returned),
            any(r.split_brain for r in rows), positions_never=any(
                r.positions_never for r in rows),
            lag_stale=any(r.lag_stale for r in rows if r.lag is not None))
        _add_row(families, "region_", [region], merged)
    if not (last.failure and not last.rows):  # listed: counts; else unknown, no sample
        for status, n in last.counts().items():
            families["mirrors"].add_metric([status], n)
    families["overall_status_code"].add_metric([], EXIT_CODES[last.status])
    seconds, messages = last.worst()
    if seconds is not None:
        families["worst_recovery_point_seconds"].add_metric([], seconds)
    if messages is not None:
        families["worst_recovery_point_messages"].add_metric([], messages)
    families["last_check_timestamp_seconds"].add_metric([], last.time_ns / 1e9)
    families["check_duration_seconds"].add_metric([], last.duration)


def _top(values: Any) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def _add_row(families: dict[str, Any], prefix: str, labels: list[str], r: ObjectRow) -> None:
    families[prefix + "status_code"].add_metric(labels, EXIT_CODES[r.status])
    age = math.inf if r.positions_never else r.positions_age
    for item, value in (("lag", r.lag), ("recovery_point_seconds", r.recovery_point_seconds),
                        ("positions_age", age)):
        if value is not None:
            families[prefix + item].add_metric(labels, value)
    if r.lag is not None:
        families[prefix + "lag_stale"].add_metric(labels, int(r.lag_stale))
    families[prefix + "fenced"].add_metric(labels, int(r.fenced))
    families[prefix + "split_brain"].add_metric(labels, int(r.split_brain))


class MetricsServer:
    """The HTTP server of :func:`serve`, on a thread of its own; :meth:`close` stops it."""

    def __init__(self, httpd: Any) -> None:
        self.httpd = httpd
        self.thread = threading.Thread(target=httpd.serve_forever, kwargs={
            "poll_interval": 0.2}, name="dr-watch-http", daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{'[' + host + ']' if ':' in host else host}:{port}"

    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        if self.thread.is_alive():
            self.httpd.shutdown()
        self.httpd.server_close()


def _app(watch: Watch, namespace: str) -> Any:
    """The WSGI application: ``/metrics`` (prometheus_client's, over a registry holding
    only the watch's collector) and ``/healthz`` (200 ``ok``, or 503 and why); HEAD answers
    as GET without the body."""
    from prometheus_client import CollectorRegistry
    from prometheus_client.exposition import make_wsgi_app

    registry = CollectorRegistry(auto_describe=False)
    registry.register(WatchCollector(watch, namespace))
    metrics = make_wsgi_app(registry)

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        if environ.get("REQUEST_METHOD") == "HEAD":  # GET's status and headers, no body
            list(app({**environ, "REQUEST_METHOD": "GET"}, start_response))
            return []
        path = environ.get("PATH_INFO") or "/"
        if path == "/metrics":
            return list(metrics(environ, start_response))
        if path == "/healthz":
            healthy, why = watch.health()
            status = "200 OK" if healthy else "503 Service Unavailable"
        else:
            status, why = "404 Not Found", "not found: /metrics or /healthz"
        body = (why + "\n").encode()
        start_response(status, [("Content-Type", "text/plain; charset=utf-8"),
                                ("Content-Length", str(len(body)))])
        return [body]

    return app


def serve(watch: Watch, host: str, port: int, namespace: str = DEFAULT_NAMESPACE
          ) -> MetricsServer:
    """A :class:`MetricsServer` listening on ``host``:``port`` (not started);
    JetlinkError ``cannot listen on HOST:PORT: why`` when the address cannot be bound."""
    import socket
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    from prometheus_client.exposition import ThreadingWSGIServer

    class Quiet(WSGIRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass  # no line per scrape

    class Server(ThreadingWSGIServer):
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

    try:
        httpd = make_server(host, port, _app(watch, namespace), server_class=Server,
                            handler_class=Quiet)
    except (OSError, OverflowError) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        raise JetlinkError(f"cannot listen on {host}:{port}: {why}") from None
    return MetricsServer(httpd)
