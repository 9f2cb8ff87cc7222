"""Readiness for a failover now: ``jetlink dr check`` and the dashboard's readiness column.

For every mirror a failover could promote (a NATS mirror stream, a KV mirror bucket, a Kafka
mirror topic of the embedded engine's links) one check :class:`~jetlink.core.monitor.Result`
(check kind ``dr``), built from what a failover made now would do. Nothing is derived twice:
a NATS mirror is read by core/dr/rules.py :func:`~jetlink.core.dr.rules.prepare` (failover,
with the positions bucket and the topology file) and its
:meth:`~jetlink.core.dr.rules.Promotion.preview`, the failover's own dry run; a mirror topic
by core/kafka/mirrors.py (``Mirrors.list``, the failover's dry run for its clamps, and the
offset sync's pending groups, core/kafka/mirror_copy.py ``pending_offsets``).

Per mirror:

- **recovery point**: the messages behind (``origin_pending`` counted at the origin when it
  answers, else the mirror's lag as last reported, marked stale with its age, core/monitor/
  lag.py, and never OK: at least a warning while the origin does not answer; a topic's lag
  summed over its partitions), the age of the oldest of them in seconds (core/dr/recovery.py:
  the origin's timestamp of the first message not copied, or the time since a silent origin
  was last heard; ``rpo`` thresholds; the summary's worst), the time since the mirror last
  heard from its origin (StreamInfo ``mirror.active``; a topic's newest partition fetch),
  and whether the origin answers (one that does not is a warning: promote would be refused,
  failover goes ahead and loses what was not copied);
- **consumer positions**: the age of the last sync (the positions bucket's record; a link's
  last ConsumerOffsetSync run) and the origin's durable consumers without a synced position
  (when the origin answers: its consumers against the record; a topic: the groups whose
  offsets the sync has not written yet). No record at all is a warning;
- **subjects** the promoted stream would take and where they come from (``origin``,
  ``positions`` as last synced, ``topology``); "Subjects unknown" is critical (a
  failover now would be refused). Subjects known from the origin only (no record holds them,
  no topology file names the stream) are a warning: once the origin is gone they are unknown;
- **clamps** the failover would print (listed; informational);
- **blockers**: a failing mirror (its error), a failed or paused mirror topic, and the
  thresholds: ``lag`` (messages behind, at or above), ``seen`` (time since last contact, at
  or above), ``positions`` (age of the last sync, at or above; no sync at all reaches
  them), ``rpo`` (the recovery point in seconds, at or above; unknown reaches them), each
  ``-warn`` and ``-critical``, from flags else from the mirror stream's metadata
  ``io.nats.monitor.<flag>`` (core/monitor/thresholds.py, natscli's rule).

:class:`Readiness` holds the results; its status is the worst mirror's (UNKNOWN when there
is no mirror to check), CRITICAL when the mirrors cannot be listed (a server that refuses the
connection, never answers or does not speak NATS: ``could not list mirrors: ...``, as
natscli's checks report a server they cannot reach). Its renderings
(:meth:`Readiness.render`) are natscli's four: one Nagios line whose messages and perf data
carry the mirror's name (``NAME: message``, ``NAME.lag=..``), a JSON document (natscli's
Result fields for the whole, and ``mirrors``, one Result document each with its
``readiness`` facts), Prometheus gauges per mirror (``<namespace>_dr_<item>{item="NAME"}``)
and text (a summary, then natscli's text of each mirror). A NAME asked for that is no
mirror is a critical result of that name, as natscli reports a stream it cannot load.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..durations import MS, SECOND
from ..errors import JetlinkError, LiveError, UsageError, did_you_mean
from ..monitor.lag import LagReading, counted_now, lag_reading
from ..monitor.lag import ago as _ago
from ..monitor.render import (
    FORMATS,
    go_g,
    nagios,
    prom_label,
    prometheus,
    render_json,
    text,
)
from ..monitor.result import EXIT_CODES, PerfDataItem, Result, Status, reason
from ..monitor.thresholds import ThresholdError, _kind, _Thresholds
from .fence import region_of
from .recovery import (
    RecoveryPoint,
    stream_recovery_point,
    topic_recovery_point,
    worst_recovery_point,
    worst_summary,
)
from .rules import origin_name, plural, promotion_record, require_clusters

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import Backend
    from ..clock import Clock
    from ..config.stream import StreamConfig
    from ..store import DataDir
    from .positions import MirrorPositions, PositionStore

__all__ = ["CHECK", "DEFAULT_NAMESPACE", "DrNames", "DrThresholds", "MirrorReadiness",
           "Readiness", "check_readiness", "check_topics", "dr_names", "mirror_kind"]

CHECK = "dr"
#: the Prometheus namespace of ``dr check`` (its ``--namespace``)
DEFAULT_NAMESPACE = "jetlink"


@dataclass
class DrThresholds(_Thresholds):
    """``dr check``: messages, and durations in nanoseconds; 0 = not checked."""

    lag_warn: int = _kind("uint")
    lag_critical: int = _kind("uint")
    # natscli's keys (io.nats.monitor.seen-*), shared with server check stream: read as
    # jsm.go reads them (a negative duration turns the threshold off)
    seen_warn: int = _kind("duration")
    seen_critical: int = _kind("duration")
    # (jetlink's own keys: durations of 0 or more, as its flags)
    positions_warn: int = _kind("duration+")
    positions_critical: int = _kind("duration+")
    rpo_warn: int = _kind("duration+")
    rpo_critical: int = _kind("duration+")


def _grade(result: Result, value: float, warn: float, crit: float, bad: str, good: str
           ) -> None:
    """``bad`` as a critical / warning when ``value`` is at or above ``crit`` / ``warn``
    (each > 0), else ``good`` as OK."""
    if crit > 0 and value >= crit:
        result.critical(bad)
    elif warn > 0 and value >= warn:
        result.warn(bad)
    else:
        result.ok(good)


def _grade_lag(result: Result, reading: LagReading, origin_answers: bool,
               t: DrThresholds) -> None:
    """The recovery point's lag item: graded against the thresholds, marked when stale
    (core/monitor/lag.py). While the origin does not answer the figure is the last one the
    mirror reported and the real lag is unknown: never OK, at least a warning."""
    text_ = f"Lag {reading.shown()}"
    if not origin_answers and not (t.lag_critical > 0 and reading.lag >= t.lag_critical):
        result.warn(text_)
        return
    _grade(result, reading.lag, t.lag_warn, t.lag_critical, text_, text_)


@dataclass
class MirrorReadiness:
    """One mirror's readiness: its check result and the facts behind it."""

    name: str  # as asked for and shown: STREAM, BUCKET or LINK/TOPIC (+ @CLUSTER embedded)
    kind: str  # "stream" | "kv" | "topic" | "" (a name that is no mirror)
    cluster: str  # the embedded cluster, or the live server's JetStream domain
    result: Result
    facts: dict[str, Any] = field(default_factory=dict)
    # its origin's region as its config names it (cluster or domain; "" none known): the
    # region of a mirror whose check stopped before the origin was read (dr watch's label)
    region: str = ""
    origin: str = ""  # its origin as a region plan names it (a KV one's bucket; "" none)

    @property
    def status(self) -> Status:
        return self.result.status

    @property
    def split_brain(self) -> bool:
        """Whether this check is what ``dr check`` calls a split brain (CRITICAL), the one
        rule of it: a failed-over stream or bucket whose old origin answers again taking
        subjects it takes too (core/dr/fence.py ``returned_origin``, state "split brain"),
        or a failed-over mirror topic whose old source topic answers again and takes writes
        unfenced (:func:`_check_returned_topic`: what its producers write there is on
        neither side's record)."""
        state = (self.facts.get("returned_origin") or {}).get("state")
        return state == "split brain" or (self.kind == "topic" and state == "unfenced")

    def to_json(self) -> dict[str, Any]:
        import json

        doc: dict[str, Any] = json.loads(render_json(self.result))
        doc["kind"] = self.kind
        doc["cluster"] = self.cluster
        doc["readiness"] = self.facts
        return doc

    def summary(self) -> str:
        """One line for a table cell: the status and its first reason."""
        r = self.result
        first = (r.criticals or r.warnings or [""])[0]
        return f"{r.status.value}{': ' + first if first else ''}"


_ORDER = {Status.OK: 0, Status.UNKNOWN: 1, Status.WARNING: 2, Status.CRITICAL: 3}


@dataclass
class Readiness:
    """Every mirror checked (:func:`check_readiness`)."""

    mirrors: list[MirrorReadiness]
    where: str = ""  # what was looked at (the data directory or the server)
    # why the mirrors could not all be listed (a server that does not answer): critical
    failures: list[str] = field(default_factory=list)
    # failed-over streams whose old origin does not answer (no mirror to check)
    failed_over: list[str] = field(default_factory=list)
    failed_over_regions: list[str] = field(default_factory=list)  # their old origins' regions
    # the clusters addressed (--cluster) that are marked down: with no mirror in them, the
    # region and the side swapped (a region that is out holds the origins)
    down: list[str] = field(default_factory=list)
    # the failures are of what was asked for, not of a mirror's place: a data directory or
    # cluster that does not exist (a typo in a check's command line) is no outage
    unknown: bool = False

    @property
    def status(self) -> Status:
        """CRITICAL when the mirrors could not be listed (natscli's checks: a server that
        cannot be reached is critical), UNKNOWN when what was asked for does not exist (a
        data directory, a cluster: the check could not run), else the worst mirror's;
        UNKNOWN when there was no mirror to check."""
        if self.failures:
            return Status.UNKNOWN if self.unknown else Status.CRITICAL
        if not self.mirrors:
            return Status.UNKNOWN
        return max((m.status for m in self.mirrors), key=lambda s: _ORDER[s])

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    def counts(self) -> dict[str, int]:
        """Mirrors by status (a name asked for that is no mirror is not one: its CRITICAL
        is in the status, not in the mirrors' counts)."""
        out = {s.value: 0 for s in (Status.OK, Status.WARNING, Status.CRITICAL)}
        for m in self.mirrors:
            if m.kind:
                out[m.status.value] = out.get(m.status.value, 0) + 1
        return out

    def combined(self) -> Result:
        """The whole as one natscli Result: every mirror's messages as ``NAME: message``,
        its perf data as ``NAME.item``, then the counts."""
        out = Result(name=CHECK, check=CHECK)
        if self.unknown:  # the check could not run: said as its output, not as a state
            out.output = "; ".join(self.failures)
        else:
            out.criticals += self.failures
        for m in self.mirrors:
            out.criticals += [f"{m.name}: {c}" for c in m.result.criticals]
            out.warnings += [f"{m.name}: {w}" for w in m.result.warnings]
            out.oks += [f"{m.name}: {o}" for o in m.result.oks]
            out.perf_data += [replace(p, name=f"{m.name}.{p.name}")
                              for p in m.result.perf_data]
        if not self.mirrors and not self.failures:
            out.output = self.no_mirrors()
        if not self.unlisted:
            counts = self.counts()
            out.perf_data += [
                PerfDataItem("mirrors", sum(1 for m in self.mirrors if m.kind),
                             help="Mirrors checked"),
                PerfDataItem("mirrors_critical", counts["CRITICAL"],
                             help="Mirrors a failover now would not be ready for"),
                PerfDataItem("mirrors_warning", counts["WARNING"],
                             help="Mirrors with a warning for a failover now")]
        out.perf_data += self.worst_recovery_point()
        return out

    def no_mirrors(self) -> str:
        """What a check that found no mirror says (every format): where, the objects failed
        over whose old origins are silent, the clusters down."""
        where = f" in {self.where}" if self.where else ""
        return (f"no mirrors{where}" + (
            f" (failed over, their old origin silent: {', '.join(self.failed_over)}; "
            "fence each when its region returns)" if self.failed_over else "") + (
            f" ({', '.join(f'cluster {d}' for d in self.down)} "
            f"{'is' if len(self.down) == 1 else 'are'} down: a region that is out holds "
            "the origins, not their mirrors; check the cluster that holds them with "
            "--cluster NAME, or every cluster without --cluster)" if self.down else ""))

    @property
    def unlisted(self) -> bool:
        """The mirrors could not be listed at all: their counts are unknown, not 0 (no
        perf item, no sample, as any figure that is not known)."""
        return bool(self.failures) and not self.mirrors

    def worst_recovery_point(self) -> list[PerfDataItem]:
        """The region's worst recovery point, seconds and messages (core/dr/recovery.py
        ``worst_recovery_point``): the summary's perf items."""
        return worst_recovery_point(m.facts.get("recovery_point") for m in self.mirrors)

    def to_json(self) -> dict[str, Any]:
        import json

        doc: dict[str, Any] = json.loads(render_json(self.combined()))
        doc["status"] = self.status.value
        doc["mirrors"] = [m.to_json() for m in self.mirrors]
        return doc

    def render(self, fmt: str = "nagios", namespace: str = DEFAULT_NAMESPACE) -> str:
        """The check in ``fmt`` (one of core/monitor ``FORMATS``), as natscli prints one,
        without the final newline."""
        if fmt not in FORMATS:
            raise UsageError(f"--format {fmt}: one of {', '.join(FORMATS)}", field="format")
        if fmt == "json":
            from ..monitor.render import _encode

            return _encode(self.to_json(), "")
        if fmt == "prometheus":
            return self._prometheus(namespace)
        if fmt == "text":
            counts = self.counts()
            worst = worst_summary(self.worst_recovery_point(),
                                  checked=any(m.kind for m in self.mirrors))
            head = (f"{CHECK}: {self.status.value} ({plural(len(self.mirrors), 'mirror')}: "
                    f"{counts['OK']} ok, {counts['WARNING']} warning, "
                    f"{counts['CRITICAL']} critical{'; ' + worst if worst else ''})")
            if self.unlisted:  # no counts: they are not known
                head = f"{CHECK}: {self.status.value} (the mirrors could not be listed)"
            failed = "".join(f"\n\n{f}" for f in self.failures)
            if not self.mirrors:
                none = "" if self.failures else f"\n\n{self.no_mirrors()}"
                return head + failed + none + "\n"
            return head + failed + "\n\n" + "\n".join(text(m.result) for m in self.mirrors)
        line = nagios(self.combined())
        if self.status is Status.UNKNOWN:  # nothing to check is no OK (its words: output)
            line = Status.UNKNOWN.value + line[line.index(" "):]
        return line

    def _prometheus(self, namespace: str) -> str:
        """Each mirror's gauges (item = its name), merged into one family per metric."""
        families: dict[str, tuple[str, list[str]]] = {}
        for m in self.mirrors:
            for block in prometheus(m.result, namespace).split("\n# HELP ")[0:]:
                lines = block.removeprefix("# HELP ").split("\n")
                name, _, help_text = lines[0].partition(" ")
                fam = families.setdefault(name, (help_text, []))
                fam[1].extend(ln for ln in lines[2:] if ln)
        # the lag of a mirror whose origin does not answer is the one it last reported
        # (core/monitor/lag.py): JSON flags it "stale"; here a gauge of its own says so
        stale = f"{namespace}_{CHECK}_lag_stale" if namespace else f"{CHECK}_lag_stale"
        marks = [(m.name, p.stale) for m in self.mirrors for p in m.result.perf_data
                 if p.name == "lag"]
        if marks:
            families[stale] = (
                "1 when the mirror's lag is the one it last reported, its origin silent "
                "(not current)", [f'{stale}{{item="{prom_label(n.replace(chr(34), "."))}"}} '
                                  f"{int(flag)}" for n, flag in marks])
        total = f"{namespace}_{CHECK}_mirrors" if namespace else f"{CHECK}_mirrors"
        if not self.unlisted:
            families[total] = ("Mirrors checked, by status", [
                f'{total}{{status="{s}"}} {n}' for s, n in self.counts().items()])
        overall = f"{namespace}_{CHECK}_overall_status_code" if namespace else \
            f"{CHECK}_overall_status_code"
        families[overall] = ("Nagios compatible status code of the worst mirror", [
            f'{overall}{{status="{self.status.value}"}} {self.exit_code}'])
        for item in self.worst_recovery_point():  # the whole's: no item label
            name = f"{namespace}_{CHECK}_{item.name}" if namespace else f"{CHECK}_{item.name}"
            families[name] = (item.help, [f"{name} {go_g(float(item.value))}"])
        out = []
        for name in sorted(families):
            help_text, samples = families[name]
            out += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge", *samples]
        return "\n".join(out)


# --- NATS mirrors (streams and KV buckets) ------------------------------------------------------
class _Records:
    """The positions bucket's records of one side, read once (``read`` as PositionStore's)."""

    def __init__(self, store: PositionStore) -> None:
        self.store = store
        self._all: dict[str, MirrorPositions] | None = None
        try:
            self._all = {r.mirror: r for r in store.records()}
        except LiveError:
            raise  # the server does not answer: no record read one by one answers either
        except (JetlinkError, ValueError, KeyError, TypeError):
            self._all = None  # one record that does not read: each is read on its own

    def read(self, mirror: str) -> MirrorPositions | None:
        if self._all is not None:
            return self._all.get(mirror)
        return self.store.read(mirror)


class _OnceJS:
    """An origin's JetStream API whose consumer lists are read once per check (several
    mirrors of one origin need the same list)."""

    def __init__(self, js: Any, cache: dict[tuple[str, str], Any], where: str) -> None:
        self._js, self._cache, self._where = js, cache, where

    def consumers(self, stream: str) -> Any:
        key = (self._where, stream)
        if key not in self._cache:
            self._cache[key] = self._js.consumers(stream)
        return self._cache[key]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._js, name)


class _OnceSite:
    """A core/dr/rules.py ``Site`` for one check: the origins' consumers read once."""

    def __init__(self, site: Any) -> None:
        self._site = site
        self._cache: dict[tuple[str, str], Any] = {}
        # mirror stream -> its origin's API as the failover's dry run found it (None: the
        # origin does not answer), for the recovery point's read (core/dr/recovery.py)
        self.origin_js: dict[str, Any] = {}

    def origin(self, cfg: Any, mirror_last: int) -> tuple[Any, Any]:
        facts, ojs = self._site.origin(cfg, mirror_last)
        if ojs is not None:
            ojs = _OnceJS(ojs, self._cache, f"{facts.kind} {facts.cluster}")
        self.origin_js[cfg.name] = ojs
        return facts, ojs

    def subject_streams(self) -> Any:
        """The side's stream configs, read once for the whole check (every mirror's dry
        run asks for them)."""
        if "_configs" not in self.__dict__:
            self.__dict__["_configs"] = self._site.subject_streams()
        return self.__dict__["_configs"]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._site, name)


def _is_kv_mirror(cfg: Any) -> bool:
    """A mirror of a bucket (``mirror.name`` = ``KV_<bucket>``), as core/kv.py lists one."""
    m = cfg.mirror
    return m is not None and m.name.startswith("KV_")


def mirror_kind(cfg: Any) -> str | None:
    """What fails a mirror stream over: ``"stream"`` (stream promote / failover), ``"kv"``
    (a KV mirror: kv promote / failover), None (no mirror, or one of jetlink's own)."""
    from .positions import is_jetlink_own

    if cfg.mirror is None or is_jetlink_own(cfg.name):
        return None
    return "kv" if _is_kv_mirror(cfg) else "stream"


@dataclass
class DrNames:
    """The names the DR verbs take on one site, from its StreamInfos (:func:`dr_names`):
    what shell completion offers."""

    mirrors: list[str] = field(default_factory=list)  # stream promote / failover
    kv_mirrors: list[str] = field(default_factory=list)  # kv promote / failover (buckets)
    promoted: list[str] = field(default_factory=list)  # stream failback
    kv_promoted: list[str] = field(default_factory=list)  # kv failback (buckets)

    @property
    def checked(self) -> list[str]:
        """What `dr check NAME` takes of these: mirror streams and KV mirror buckets."""
        return self.mirrors + self.kv_mirrors


def dr_names(infos: Iterable[Any]) -> DrNames:
    """The mirrors (by :func:`mirror_kind`) and the streams a promote or failover made
    (their ``PROMOTED_KEY`` metadata, core/dr/fencing.py), KV ones by bucket name."""
    import json

    from ..config.stream import StreamSource
    from ..kv import bucket_of_stream
    from .fencing import PROMOTED_KEY

    out = DrNames()
    for info in infos:
        cfg = info.config
        bucket = bucket_of_stream(cfg.name) or cfg.name
        kind = mirror_kind(cfg)
        if kind is not None:
            if kind == "kv":
                out.kv_mirrors.append(bucket)
            else:
                out.mirrors.append(cfg.name)
            continue
        text = (cfg.metadata or {}).get(PROMOTED_KEY)
        if not text:
            continue
        try:
            was = StreamSource.from_json(json.loads(text)["mirror"], strict=False)
        except (ValueError, KeyError, TypeError, JetlinkError, RecursionError):
            continue
        if was.name.startswith("KV_"):
            out.kv_promoted.append(bucket)
        else:
            out.promoted.append(cfg.name)
    return out


def _one_primary(mirrors: Sequence[MirrorReadiness]) -> None:
    """A WARNING on each mirror a region failover of its origin's region refuses for the
    one-primary rule (core/dr/rules.py ``two_primaries``: its origin mirrored twice among
    the mirrors checked): promoted alone it would do, as part of its region it needs the
    others left out."""
    from .rules import Primary, two_primaries

    keyed = {Primary(m.region, m.kind, m.origin, m.cluster, m.name): m for m in mirrors
             if m.kind in ("stream", "kv", "topic") and m.region and m.origin}
    for p, why in two_primaries(list(keyed)).items():
        keyed[p].result.warn(f"A failover of region {p.region} refuses it: {why} (jetlink "
                             f"dr failover --from {p.region} --skip NAME)")


def check_nats_mirror(site: Any, info: Any, shown: str, kind: str, cluster: str,
                records: _Records, topology: Any, flags: Mapping[str, Any],
                naming: Any = None) -> MirrorReadiness:
    """One NATS mirror's readiness, from the failover's own dry run: the recovery point,
    the consumer positions, the subjects and the clamps, each graded (``naming``: the
    words of the failover's refusals, core/dr/rules.py ``Naming``, as the caller runs it)."""
    cfg = info.config
    stream = cfg.name
    result = Result(name=shown, check=CHECK)
    # the origin's region from the config: known even when the check stops early
    out = MirrorReadiness(shown, kind, cluster, result, {"stream": stream},
                          region=region_of(cluster, cfg.mirror),
                          origin=origin_name(kind, cfg.mirror.name))
    try:
        t = DrThresholds.resolve(flags, cfg.metadata)
    except ThresholdError as err:
        result.critical(f"could not configure based on metadata: {err}")
        return out
    state = info.mirror or {}
    failing = _mirror_error(state)
    if failing is not None:
        out.facts["error"] = failing
    bucket = _check_kv_promotable(site, shown, result) if kind == "kv" else None
    if kind == "kv" and bucket is None:  # kv failover refuses it: so does a region's plan
        out.facts["not_promotable"] = result.criticals[-1]
    record = records.read(stream)
    try:
        report, unknown_subjects = _failover_preview(site, stream, kind, records, topology,
                                                     bucket, naming)
    except JetlinkError as err:
        result.critical(f"could not prepare a failover: {reason(err)}")
        _own_contact(out, state, t)
        return out
    now = site.now_ns()
    reading, active = _grade_origin(result, report, state, failing, t)
    diverged = _grade_agreement(result, site, cfg, report)
    if diverged is not None:
        out.facts["diverged"] = diverged
    rp = _nats_recovery_point(site, cfg, report, reading, active, now)
    _grade_recovery_point(result, rp, t)
    out.facts["positions"] = _grade_positions(result, report, record, now, t)
    _grade_subjects(out, report, record, topology, unknown_subjects)
    _list_clamps(result, [f"Clamp {c.consumer}: {c.from_seq} -> {c.to_seq}"
                          for c in report.clamps])
    facts = report.origin
    out.facts.update(
        origin=facts.to_json(),
        recovery_point={"messages": rp.messages, "lag": report.lag, **reading.to_json(),
                        "origin_pending": facts.pending,
                        "last_seen_ms": active // MS if active >= 0 else None,
                        "mirror_last_seq": report.mirror_last_seq,
                        "origin_last_seq": facts.last_seq, "known_from": facts.known_from,
                        **rp.to_json()},
        clamps=[c.to_json() for c in report.clamps],
        consumers=[p.to_json() for p in report.consumers],
        failover=report.to_json())
    return out


def _grade_agreement(result: Result, site: Any, cfg: Any, report: Any
                     ) -> dict[str, Any] | None:
    """Whether the mirror still holds what its origin holds: its last message is the
    origin's message at the same sequence (the same data, the same time: a mirror keeps
    both). An origin that was replaced since (created again, failed back from another
    side, promoted on two sides) no longer holds it, and the mirror, which only ever
    appends after its last sequence, never sees that: CRITICAL "Diverged", with what each
    holds. None when it agrees or can not be compared (the origin does not answer, either
    side deleted that message). Returns the facts for ``--json``."""
    facts = report.origin
    last = int(report.mirror_last_seq or 0)
    ojs = site.origin_js.get(cfg.name)
    if not facts.reachable or ojs is None or last <= 0:
        return None
    fix = ("re-seed the mirror from its origin (stream rm, then stream add as it was) "
           "before failing over to it")
    if facts.last_seq is not None and facts.last_seq < last:
        result.critical(f"Diverged: the mirror holds sequence {last}, past its origin's "
                        f"last sequence {facts.last_seq} (the origin was created again or "
                        f"replaced since): {fix}")
        return {"seq": last, "origin_last_seq": facts.last_seq}
    cut = facts.divergence
    if cut is not None and last > cut[0]:
        # a failback replaced the origin's sequences past cut[0]: a mirror that copied them
        # before keeps them, and its last message agrees again once it copies newer ones
        seq = cut[0] + 1
        pair = _differing(site.js, cfg.name, ojs, facts.stream, seq)
        if pair is not None:
            mine, theirs = pair
            when = f" at {cut[2]}" if cut[2] else ""
            now = (f"{theirs.subject} there" if theirs.subject != mine.subject
                   else "other data or time on that subject there")
            result.critical(f"Diverged: sequence {seq} of the mirror ({mine.subject}) is the "
                            f"old origin's, which a failback{when} replaced (its sequences "
                            f"{seq}..{cut[1]}; now {now}): {fix}")
            return {"seq": seq, "subject": mine.subject, "origin_subject": theirs.subject}
    pair = _differing(site.js, cfg.name, ojs, facts.stream, last)
    if pair is None:
        return None
    mine, theirs = pair
    theirs_shown = (theirs.subject if theirs.subject != mine.subject
                    else "the same subject, other data or time")
    result.critical(f"Diverged: sequence {last} of the mirror ({mine.subject}) is not its "
                    f"origin's ({theirs_shown}): the origin was replaced since it was "
                    f"copied: {fix}")
    return {"seq": last, "subject": mine.subject, "origin_subject": theirs.subject}


def _differing(js: Any, mirror: str, ojs: Any, origin: str, seq: int) -> tuple[Any, Any] | None:
    """The mirror's and the origin's message at ``seq`` when their data or time differ (a
    mirror keeps both); None when they agree or either side deleted it since (deletes are
    not replicated)."""
    try:
        mine, theirs = js.get_msg(mirror, seq), ojs.get_msg(origin, seq)
    except JetlinkError:
        return None
    return None if mine.data == theirs.data and mine.ts == theirs.ts else (mine, theirs)


def _nats_recovery_point(site: Any, cfg: Any, report: Any, reading: LagReading,
                         active: int, now: int) -> RecoveryPoint:
    """A NATS mirror's recovery point in seconds (core/dr/recovery.py), read at the origin
    the failover's dry run reached (none when it does not answer: then the messages behind
    are at least those the origin held past the mirror's last sequence when its positions
    were synced, whatever lag the mirror reports: a server restarted during the outage
    reports 0)."""
    messages = reading.lag
    known = report.origin.last_seq
    if not report.origin.reachable and known is not None:
        messages = max(messages, int(known) - int(report.mirror_last_seq))
    return stream_recovery_point(site.origin_js.get(cfg.name), cfg, report.mirror_last_seq,
                                 messages, report.origin.reachable, active, now)


def _grade_recovery_point(result: Result, rp: RecoveryPoint, t: DrThresholds) -> None:
    """The recovery point in seconds, its perf item and message, graded against ``rpo``
    as the time since last seen is: an unknown age (never heard from the origin) reaches
    any threshold set."""
    item = rp.perf_item(t.rpo_warn, t.rpo_critical)
    if item is not None:
        result.pd(item)
    age = rp.age_ns if rp.age_ns is not None else math.inf
    _grade(result, age, t.rpo_warn, t.rpo_critical, rp.message(), rp.message())


def _mirror_error(state: Mapping[str, Any]) -> str | None:
    """The mirror's error as StreamInfo ``mirror.error`` reports it (its description), or
    None when it has none."""
    error = state.get("error")
    if not error:
        return None
    return error.get("description", str(error)) if isinstance(error, dict) else str(error)


def _check_kv_promotable(site: Any, shown: str, result: Result) -> str | None:
    """A KV mirror bucket: its origin bucket, or None and critical when ``kv promote``
    would refuse it (core/dr/rules.py ``kv_mirror_stream``)."""
    from .rules import kv_mirror_stream

    try:
        return kv_mirror_stream(site.js, shown.split("@")[0])[1]
    except JetlinkError as err:
        result.critical(f"Not promotable: {reason(err)}")
        return None


def _failover_preview(site: Any, stream: str, kind: str, records: _Records, topology: Any,
                      bucket: str | None = None, naming: Any = None
                      ) -> tuple[Any, str | None]:
    """The dry run of a failover now (core/dr/rules.py ``prepare`` then
    ``Promotion.preview``), as ``stream|kv failover`` would make it (``bucket``: a KV
    mirror's origin bucket, whose subjects it takes) and, when no subjects are known, why
    (its error; the rest of the dry run then made with the subjects left open)."""
    from .rules import kv_adjust, prepare

    unknown_subjects: str | None = None
    adjust = kv_adjust if kind == "kv" else None
    try:
        promotion = prepare(site, stream, failover=True, positions=records,
                            topology=topology, adjust=adjust, bucket=bucket, naming=naming)
    except UsageError as err:
        if err.field != "subjects":
            raise
        unknown_subjects = str(err)
        # the rest of the dry run, with the subjects left open
        promotion = prepare(site, stream, subjects=[], failover=True, positions=records,
                            topology=topology, adjust=adjust)
    return promotion.preview(), unknown_subjects


def _grade_origin(result: Result, report: Any, state: Mapping[str, Any],
                  failing: str | None, t: DrThresholds) -> tuple[LagReading, int]:
    """The origin and the recovery point: whether the origin answers (and the mirror copies
    while it does), the messages behind and the time since last contact. Returns the lag's
    reading and ``mirror.active`` (-1: never seen)."""
    facts = report.origin
    origin = f"Origin {facts.stream} in {facts.where}"
    if facts.reachable and facts.fenced:
        # (a region failover with --fence stopped between an origin's fence and its mirror's
        # promotion, core/dr/region.py: nothing takes the subjects until it is run again)
        result.critical(f"{origin} is fenced: it takes no writes ("
                        f"{', '.join(facts.subjects or [])} recorded) and this mirror copies "
                        "nothing new; unless a stream promoted elsewhere took them, nothing "
                        "takes them: run the failover that fenced it again (jetlink dr "
                        f"failover --from {facts.cluster or 'REGION'} --fence, where this "
                        "mirror is)")
    elif facts.reachable:
        result.ok(f"{origin} answers")
        if failing:  # the origin answers and the mirror does not copy: stalled
            result.critical(f"Mirror failing: {failing}")
    else:
        result.warn(f"{origin} does not answer ({facts.silence}): promote would be refused, "
                    "failover would go ahead")
    lag = report.lag or 0
    reading = counted_now(facts.pending) if facts.pending is not None else \
        lag_reading({**state, "lag": lag}, origin_answers=facts.reachable)
    active = int(state.get("active", -1))
    _grade_contact(result, reading, facts.reachable, active, t)
    return reading, active


def _contact_items(reading: LagReading, active: int, t: DrThresholds
                   ) -> tuple[list[PerfDataItem], list[PerfDataItem]]:
    """The lag's and the time since last contact's perf items (none for a lag never
    reported or a mirror never heard from)."""
    lag = [] if reading.stale and reading.age_ns is None else [
        PerfDataItem("lag", reading.lag, t.lag_warn, t.lag_critical,
                     help="Messages the mirror has not copied from its origin",
                     stale=reading.stale)]
    seen = [] if active < 0 else [
        PerfDataItem("active", active / SECOND, t.seen_warn / SECOND,
                     t.seen_critical / SECOND, unit="s",
                     help="Seconds since the mirror last heard from its origin")]
    return lag, seen


def _own_contact(out: MirrorReadiness, state: Mapping[str, Any], t: DrThresholds) -> None:
    """A mirror whose failover could not be prepared (no origin read): its lag and the
    time since it last heard from its origin as its own StreamInfo ``mirror`` reports them,
    so that its series go on while the critical says why (perf items, no grade; no
    recovery point, which needs the origin)."""
    reading = lag_reading(state)
    active = int(state.get("active", -1))
    lag, seen = _contact_items(reading, active, t)
    out.result.pd(*lag, *seen)


def _grade_contact(result: Result, reading: LagReading, origin_answers: bool, active: int,
                   t: DrThresholds) -> None:
    """The recovery point's items, a stream's or a topic's: the lag (perf data and grade)
    and the time since the mirror last heard from its origin (``active`` in nanoseconds,
    -1: never). A lag never reported has no perf item (as an unknown recovery point's
    seconds): a ``lag=0`` would read as caught up on a graph."""
    lag, seen = _contact_items(reading, active, t)
    result.pd(*lag)
    _grade_lag(result, reading, origin_answers, t)
    if active >= 0:
        result.pd(*seen)
        _grade(result, active, t.seen_warn, t.seen_critical,
               f"Last seen {_ago(active)} ago", f"Last seen {_ago(active)} ago")
    elif t.seen_critical > 0 or t.seen_warn > 0:
        (result.critical if t.seen_critical > 0 else result.warn)("Never seen")
    else:
        result.ok("Never seen")


def _grade_positions(result: Result, report: Any, record: MirrorPositions | None, now: int,
                     t: DrThresholds) -> dict[str, Any]:
    """The consumer positions: the age of the last sync, and the origin's durable consumers
    without a synced position (when the origin answers). Returns the facts' ``positions``."""
    synced: dict[str, Any] = {"synced": None, "age_ms": None, "consumers": 0, "unsynced": []}
    if record is None:
        text_ = "No positions synced (jetlink positions sync)"
        if t.positions_critical > 0:
            result.critical(text_)
        else:
            result.warn(text_)
    else:
        from ..clock import format_rfc3339_nano

        age = max(now - record.synced_ns, 0)
        synced.update(synced=format_rfc3339_nano(record.synced_ns), age_ms=age // MS,
                      consumers=len(record.positions))
        result.pd(PerfDataItem("positions_age", age / SECOND, t.positions_warn / SECOND,
                               t.positions_critical / SECOND, unit="s",
                               help="Seconds since the origin's consumer positions were "
                               "synced"))
        _grade(result, age, t.positions_warn, t.positions_critical,
               f"Positions synced {_ago(age)} ago",
               f"Positions synced {_ago(age)} ago "
               f"({plural(len(record.positions), 'consumer')})")
    if report.origin.reachable and report.positions.source == "origin":
        have = {p.consumer for p in record.positions} if record is not None else set()
        missing = [p.consumer for p in report.consumers if p.consumer not in have]
        _list_unsynced(result, synced, missing, "consumer",
                       "of the origin without a synced position",
                       "Durable consumers of the origin without a synced position")
    elif report.positions.note:
        synced["note"] = report.positions.note
    return synced


def _list_unsynced(result: Result, facts: dict[str, Any], names: list[str], word: str,
                   what: str, help_text: str) -> None:
    """The origin's consumers (a stream's) or the source's groups (a topic's) without a
    synced position: the facts' ``unsynced``, perf data ``consumers_unsynced``, a warning
    naming them."""
    facts["unsynced"] = names
    result.pd(PerfDataItem("consumers_unsynced", len(names), help=help_text))
    if names:
        result.warn(f"{plural(len(names), word)} {what}: {', '.join(names)}")


def _grade_subjects(out: MirrorReadiness, report: Any, record: MirrorPositions | None,
                    topology: Any, unknown_subjects: str | None) -> None:
    """The subjects the promoted stream would take, where they come from, and whether they
    stay known once the origin is gone (the positions record, the topology file)."""
    from .rules import topology_subjects

    result = out.result
    if unknown_subjects is not None:
        result.critical("Subjects unknown: a failover now would be refused (give --topology "
                        "FILE naming the origin's stream, or --subjects to its failover)")
        out.facts.update(subjects=None, subjects_from="unknown", subjects_why=unknown_subjects)
        return
    subjects, source = list(report.subjects), report.subjects_from
    result.ok(f"Subjects {', '.join(subjects)} (from {source})")
    out.facts.update(subjects=subjects, subjects_from=source)
    if source != "origin":
        return
    kept = record.origin_subjects if record is not None else None
    kept_from = "positions"
    if kept is None:
        kept, kept_from = topology_subjects(topology, report.origin), "topology"
    if kept is None:
        result.warn("Subjects known only from the origin: once it is gone a failover "
                    "needs --subjects (jetlink positions sync, or --topology FILE)")
    elif sorted(kept) != sorted(subjects):
        result.warn(f"Subjects as last known ({kept_from}: {', '.join(kept)}) differ "
                    f"from the origin's: sync the positions again")
    out.facts["subjects_if_origin_lost"] = kept
    out.facts["subjects_if_origin_lost_from"] = kept_from if kept is not None \
        else "unknown"


def _list_clamps(result: Result, clamps: Sequence[str]) -> None:
    """The clamps a failover now would print (perf data ``clamps``; each listed as OK)."""
    result.pd(PerfDataItem("clamps", len(clamps),
                           help="Consumers a failover now would clamp"))
    for c in clamps:
        result.ok(c)


def _nats_mirrors(backend: Backend, cluster: str | None, label: str, names: _Names,
                  topology: Any, flags: Mapping[str, Any]) -> list[MirrorReadiness]:
    """Every mirror of the side checked, in the order the server lists its streams; on a
    live server up to ``backend.parallel`` checks in flight over its one connection (each is
    a few requests: one after the other they cost the round trips of every mirror)."""
    from ..kv import bucket_of_stream

    site = _OnceSite(backend.site(cluster))
    records = _Records(backend.positions(cluster))
    suffix = f"@{label}" if cluster is not None else ""
    jobs: list[tuple[Any, str, str | None]] = []  # (info, shown, kind: None a returned one)
    present: set[str] = set()
    for info in site.js.streams():
        cfg = info.config
        present.add(cfg.name)
        names.seen_stream(cfg, suffix)
        kind = mirror_kind(cfg)
        if kind is None:
            jobs.append((info, "", None))
            continue
        shown = cfg.name
        if kind == "kv":
            shown = bucket_of_stream(cfg.name) or cfg.name
        shown += suffix
        if not names.wanted(shown, cfg.name + suffix):
            continue
        jobs.append((info, shown, kind))

    def one(job: tuple[Any, str, str | None]) -> list[MirrorReadiness]:
        info, shown, kind = job
        if kind is None:
            return _check_returned(site._site, info, suffix, label, names)
        return [check_nats_mirror(site, info, shown, kind, label, records, topology, flags)]

    gone = _switch_without_stream(site, present, suffix, label, names)
    workers = min(backend.parallel, len(jobs))
    if workers <= 1:
        return [m for job in jobs for m in one(job)] + gone
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return [m for found in pool.map(one, jobs) for m in found] + gone


def _switch_without_stream(site: Any, present: set[str], suffix: str, label: str,
                           names: _Names) -> list[MirrorReadiness]:
    """A failback whose switch stopped after deleting the promoted stream and before making
    it again as the mirror it was (core/dr/failback.py ``_mirror_again``): this side holds
    no copy of the origin until the switch is run again: CRITICAL, naming the command."""
    from ..kv import bucket_of_stream
    from .failback_record import stopped_without_stream

    out = []
    for rec in stopped_without_stream(site.kv(), present):
        stream = rec["stream"]
        kind = "kv" if rec.get("kind") == "kv" else "stream"
        bare = (bucket_of_stream(stream) or stream) if kind == "kv" else stream
        shown = bare + suffix
        if not names.wanted(shown, stream + suffix):
            continue
        found = rec.get("origin")
        origin: dict[str, Any] = found if isinstance(found, dict) else {}
        region = str(origin.get("domain") or origin.get("cluster") or "")
        there = f"{origin.get('stream') or 'its origin'}" + (f" in {region}" if region else "")
        whole = f" (or jetlink dr failback --from {region} --switch)" if region else ""
        result = Result(name=shown, check=CHECK)
        result.critical(f"Failback switch of {bare} stopped after deleting it here: this side "
                        f"holds no copy of {there} until the switch makes it again as the "
                        f"mirror it was; run jetlink {kind} failback {bare} --switch again"
                        f"{whole} to finish it")
        out.append(MirrorReadiness(shown, kind, label, result,
                                   {"stream": stream, "failback": "switch stopped"},
                                   region=region))
    return out


def _check_returned(site: Any, info: Any, suffix: str, label: str, names: _Names
                    ) -> list[MirrorReadiness]:
    """A failed-over stream or bucket whose old origin answers again writable
    (core/dr/fence.py ``returned_origin``): CRITICAL, a split brain (both capture the same
    subjects) or an unfenced origin, each naming the fix; OK once it is fenced. Nothing
    when its old origin does not answer or takes no writes."""
    from .fence import returned_origin

    unfinished = _unfinished_promotion(info, suffix, label, names)
    if unfinished is not None:
        return unfinished
    back = returned_origin(site, info, silent=True)
    if back is None:
        return []
    shown = back.shown + suffix
    if back.state == "silent":  # nothing to check: said beside "no mirrors" (not a row)
        from ..kv import bucket_of_stream

        origin = (bucket_of_stream(back.origin) or back.origin) if back.kind == "kv" \
            else back.origin
        names.silent.append(f"{shown} from {origin}@{back.region}")
        names.silent_regions.add(back.region)
        return []
    if not names.wanted(shown, info.config.name + suffix):
        return []
    result = Result(name=shown, check=CHECK)
    grade = {"fenced": result.ok, "failback": result.warn}.get(back.state,
                                                                  result.critical)
    grade(back.message())
    return [MirrorReadiness(shown, back.kind, label, result,
                            {"stream": info.config.name, "returned_origin": back.to_json()})]


def _unfinished_promotion(info: Any, suffix: str, label: str, names: _Names
                          ) -> list[MirrorReadiness] | None:
    """A stream or bucket a failover promoted and that stopped before it finished (its
    promotion record has no ``done``: consumers not all placed, its mirror's record not
    ended): CRITICAL whether named or not, never hidden as a region failed over whose
    objects have nothing left to check. None for any other stream."""
    from ..kv import bucket_of_stream

    rec = promotion_record(info.config)
    if rec is None or rec.done is not None:
        return None
    name = info.config.name
    bucket = bucket_of_stream(name)
    verb, bare = ("kv", bucket) if bucket else ("stream", name)
    shown = bare + suffix
    if not names.wanted(shown, name + suffix):
        return []
    result = Result(name=shown, check=CHECK)
    result.critical(f"promoted by a failover that stopped before it finished: run it again "
                    f"(jetlink {verb} failover {bare}, or the region's jetlink dr failover) to "
                    "finish it")
    return [MirrorReadiness(shown, verb, label, result,
                            {"stream": name, "promotion": "unfinished"})]


# --- Kafka mirror topics (the embedded engine's links) -----------------------------------------
def check_topics(dd: DataDir, cluster: str, clock: Clock, flags: Mapping[str, Any],
                 wanted: Callable[[str, str], bool] = lambda shown, alt: True,
                 suffix: str = "", silent: list[str] | None = None) -> list[MirrorReadiness]:
    """The mirror topics of the links stored in ``cluster``. A STOPPED one (failed over or
    promoted) is no mirror: checked for its old source topic taking writes again
    (:func:`_check_returned_topic`), or, that source's cluster silent, named in ``silent``."""
    from ..kafka import mirror_model as mm
    from ..kafka.mirrors import Mirrors

    m = Mirrors(dd, cluster, clock)
    out = []
    t = DrThresholds.resolve(flags, None)
    now_ms = clock.now_ns() // MS
    links: dict[str, Any] = {}
    for info in m.list():
        shown = f"{info.link_name}/{info.mirror_topic_name}{suffix}"
        if not wanted(shown, info.mirror_topic_name + suffix):
            continue
        if info.link_name not in links:
            links[info.link_name] = m.links.get(info.link_name, with_topics=False)
        if info.mirror_status == mm.STOPPED:
            out += _check_returned_topic(m, info, links[info.link_name], shown, cluster,
                                         silent)
            continue
        out.append(_check_topic(m, info, links[info.link_name], shown, cluster, t, now_ms))
    return out


def _check_returned_topic(m: Any, info: Any, li: Any, shown: str, cluster: str,
                          silent: list[str] | None) -> list[MirrorReadiness]:
    """A failed-over (or promoted) mirror topic whose old source topic answers again and
    takes writes: CRITICAL, what its producers write there is on neither side's record
    (a split brain), naming the fix (fence it, or fail back); OK once fenced (the DENY WRITE
    of ``dr fence``: core/kafka/acl_fence.py). Nothing when the source topic is gone or is
    a mirror again (failed back, reversed); its cluster silent: named in ``silent``, as a
    failed-over stream's is."""
    from ..kafka.acl_fence import is_fenced
    from ..kafka.errors import KafkaError
    from ..kafka.topics import Kafka

    dd, source = m.datadir, li.source_cluster
    old = f"{info.source_topic_name}@{source}"
    if not dd.has_cluster(source) or dd.is_down(source):
        if silent is not None:
            silent.append(f"{shown} from {old}")
        return []
    src = dd.open(source)
    try:
        topic = Kafka(src, m.clock).describe_topic(info.source_topic_name)
    except KafkaError:
        return []  # gone: nothing takes writes there
    if topic.mirror_link is not None:
        return []  # a mirror again (failed back, or the mirror reversed): read-only
    result = Result(name=shown, check=CHECK)
    fenced = is_fenced(src, info.source_topic_name)
    if fenced:
        result.ok(f"Old source {old} is fenced (DENY WRITE for User:*): its producers are "
                  "refused until the topic goes back")
    else:
        result.critical(f"Old source {old} answers again and takes writes: what producers "
                        f"write there is not on {shown} (a split brain): fence it (jetlink "
                        f"dr fence --from {source}) or take it back (jetlink dr failback "
                        f"--from {source} names the command)")
    # (returned_origin as a stream's, core/dr/fence.py OriginReturn.to_json: its state,
    # the old origin and its region)
    return [MirrorReadiness(shown, "topic", cluster, result, {
        "link": info.link_name, "topic": info.mirror_topic_name, "status": info.mirror_status,
        "returned_origin": {"state": "fenced" if fenced else "unfenced",
                            "origin": info.source_topic_name, "region": source}})]


def _check_topic(m: Any, info: Any, li: Any, shown: str, cluster: str, t: DrThresholds,
                 now_ms: int) -> MirrorReadiness:
    """One mirror topic's readiness (``li``: its link): its state, the recovery point, the
    group offsets' sync and the clamps of the failover's dry run."""
    result = Result(name=shown, check=CHECK)
    status = info.mirror_status
    reachable = _grade_topic_state(result, info, li, m)
    behind = sum(p.lag for p in info.mirror_lags)
    fetched = max((p.last_fetch_ms or 0 for p in info.mirror_lags), default=0)
    active = (now_ms - fetched) * MS if fetched else -1
    # a source that does not answer: the lag as of the last fetch; else counted by the
    # link from the source's log end (core/kafka/mirrors.py), current
    reading = lag_reading({"lag": behind, "active": active}, origin_answers=False) \
        if not reachable else counted_now(behind)
    _grade_contact(result, reading, reachable, active, t)
    rp = topic_recovery_point(m, info, reachable, active, now_ms)
    _grade_recovery_point(result, rp, t)
    positions = _grade_offset_sync(result, m, info, li, reachable, t, now_ms)
    acls = _grade_acl_sync(result, m, info, li, reachable)
    dry = m.failover([info.mirror_topic_name], info.link_name, dry_run=True)[0]
    _list_clamps(result, [f"Clamp {c.group} partition {c.partition}: {c.from_offset} -> "
                          f"{c.to_offset}" for c in dry.clamps])
    return MirrorReadiness(shown, "topic", cluster, result, {
        "link": info.link_name, "topic": info.mirror_topic_name,
        "source": {"topic": info.source_topic_name, "cluster": li.source_cluster,
                   "reachable": reachable},
        "status": status, "error": info.mirror_topic_error,
        "recovery_point": {"messages": rp.messages, **reading.to_json(),
                           "last_seen_ms": active // MS if active >= 0 else None,
                           "partitions": [{**p.to_json(), "log_end": p.log_end}
                                          for p in info.mirror_lags], **rp.to_json()},
        "positions": positions, "acls": acls,
        "clamps": [c.to_json() for c in dry.clamps]},
        region=li.source_cluster, origin=info.source_topic_name)


def _link_acl_text(m: Any, info: Any, li: Any) -> str:
    """A mirror whose link may not READ its source topic: the ACL missing (the source's
    authorizer, core/kafka/authz.py ``link_read_denied``)."""
    from ..kafka.authz import link_read_denied

    why = None
    if m.datadir.has_cluster(li.source_cluster) and li.principal is not None:
        why = link_read_denied(m.datadir.open(li.source_cluster), li.principal,
                               info.source_topic_name)
    return (f"Link {li.name} cannot read source topic {info.source_topic_name}: "
            f"{why or 'its principal lost the ACL READ on the topic'}")


def _grade_topic_state(result: Result, info: Any, li: Any, m: Any) -> bool:
    """A mirror topic's state (failing, its link failed, paused, being stopped, its link
    not authorized to read the source topic) and whether its source answers (returned)."""
    from ..kafka import mirror_model as mm

    status = info.mirror_status
    if status == mm.FAILED:
        result.critical(f"Mirror failing: {info.mirror_topic_error}")
    elif status == mm.LINK_FAILED:
        result.critical(f"Link {li.name} failed"
                        f"{': ' + li.link_error_message if li.link_error_message else ''}")
    elif status == mm.PAUSED:
        result.warn("Mirror paused: it copies nothing until resumed")
    elif status == mm.PENDING_STOPPED:
        result.warn("Mirror being stopped (a promote or failover is under way)")
    if info.mirror_topic_error == mm.SOURCE_TOPIC_NOT_AUTHORIZED:
        result.critical(_link_acl_text(m, info, li))
    source = f"Source {info.source_topic_name} in cluster {li.source_cluster}"
    # a paused mirror fetches nothing, so its state never says the source went away: the
    # link's own view of its source cluster does (core/kafka/links.py ``source_available``)
    reachable = status not in mm.SOURCE_UNREACHED and li.source_available
    if status == mm.SOURCE_UNAVAILABLE or (not reachable and status == mm.PAUSED):
        result.warn(f"{source} does not answer: promote would be refused, failover "
                    "would go ahead")
    elif reachable:
        result.ok(f"{source} answers")
    return reachable


def _grade_offset_sync(result: Result, m: Any, info: Any, li: Any, reachable: bool,
                       t: DrThresholds, now_ms: int) -> dict[str, Any]:
    """The link's consumer offset sync: enabled, the age of its last run, the source's
    groups whose offsets it has not written yet (when the source answers). Returns the
    facts' ``positions``."""
    from ..kafka.mirror_copy import pending_offsets

    positions: dict[str, Any] = {"offset_sync": li.config.consumer_offset_sync_enable}
    if not li.config.consumer_offset_sync_enable:
        result.warn("Consumer offset sync disabled: a failover keeps no group offsets "
                    "(consumer.offset.sync.enable)")
        return positions
    last = li.last_runs.get("ConsumerOffsetSync", 0)
    age = (now_ms - last) * MS if last else -1
    positions["age_ms"] = age // MS if age >= 0 else None
    if age < 0:
        (result.critical if t.positions_critical > 0 else result.warn)(
            "Consumer offsets never synced")
    else:
        result.pd(PerfDataItem("positions_age", age / SECOND,
                               t.positions_warn / SECOND,
                               t.positions_critical / SECOND, unit="s",
                               help="Seconds since the consumer offsets were synced"))
        _grade(result, age, t.positions_warn, t.positions_critical,
               f"Consumer offsets synced {_ago(age)} ago",
               f"Consumer offsets synced {_ago(age)} ago")
    if reachable:
        try:
            pending = pending_offsets(m, li, {info.mirror_topic_name:
                                              info.source_topic_name})
        except JetlinkError:
            pending = []
        groups = sorted({g for g, _t, _p, _o in pending})
        _list_unsynced(result, positions, groups, "group",
                       "of the source without synced offsets",
                       "Groups of the source whose offsets are not synced yet")
    return positions


def _consumer_groups(m: Any, info: Any, li: Any) -> set[str]:
    """The groups that consume the mirror: those with offsets committed on its source topic
    (source cluster) or on the mirror topic."""
    from ..kafka.topics import Kafka

    groups = set(m.kafka.committed_all(info.mirror_topic_name))
    try:
        src = Kafka(m.datadir.open(li.source_cluster), m.clock)
        groups |= set(src.committed_all(info.source_topic_name))
    except JetlinkError:
        pass
    return groups


def _grade_acl_sync(result: Result, m: Any, info: Any, li: Any, reachable: bool
                    ) -> dict[str, Any]:
    """The link's ACL sync (core/kafka/acl_sync.py) for this mirror: off while the source
    enforces ACLs (WARNING: the clients' ACLs are not on the DR side), or the source's ACLs
    the filters select that the destination lacks: CRITICAL for the topic and the groups
    its consumers use, WARNING for the others. Returns the facts' ``acls``."""
    from ..kafka.acl_sync import pending_acls
    from ..kafka.acls import AclStore

    facts: dict[str, Any] = {"acl_sync": li.config.acl_sync_enable}
    if not reachable:
        return facts
    try:
        enforced = AclStore(m.datadir.open(li.source_cluster)).settings().enabled
        missing = pending_acls(m.datadir, m.cl, li.source_cluster, li.config) \
            if li.config.acl_sync_enable else []
    except JetlinkError:
        return facts
    if not li.config.acl_sync_enable:
        if enforced:
            result.warn(f"ACL sync off on link {li.name} while cluster {li.source_cluster} "
                        "enforces ACLs: clients' ACLs are not on the DR side "
                        "(acl.sync.enable)")
        return facts
    if missing is None:
        result.warn(f"ACL sync of link {li.name} cannot run: a cluster without an "
                    "authorizer (its AclSync task says which)")
        return facts
    groups = _consumer_groups(m, info, li)
    topics = (info.source_topic_name, info.mirror_topic_name)
    used = [b for b in missing if any(b.matches_resource("TOPIC", x) for x in topics)
            or any(b.matches_resource("GROUP", g) for g in groups)]
    others = len(missing) - len(used)
    facts.update(missing=len(missing), missing_for_consumers=[b.to_json() for b in used])
    if used:
        shown = "; ".join(f"{b.pattern()} {b.entry()}" for b in used[:3])
        more = f" and {len(used) - 3} more" if len(used) > 3 else ""
        result.critical(f"{len(used)} ACL{'' if len(used) == 1 else 's'} of the source for "
                        f"this topic or its consumers' groups not on the DR side yet: "
                        f"{shown}{more}")
    if others:
        result.warn(f"{others} other ACL{'' if others == 1 else 's'} the link's filters "
                    "select not synced yet")
    if not missing:
        result.ok("ACL sync current")
    return facts


# --- the whole ---------------------------------------------------------------------------------
class _Names:
    """The NAME... asked for: which mirrors are wanted, and which names found none."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(dict.fromkeys(names))
        self.found: set[str] = set()
        self.streams: set[str] = set()  # streams seen (a name that is one, not a mirror)
        self.promoted: dict[str, str] = {}  # streams a promotion made: what to do about them
        self.mirrors: set[str] = set()  # the names mirrors answer to (for a suggestion)
        # failed-over streams whose old origin does not answer ("ORDERS_EAST@east from
        # ORDERS@west"): no mirror to check, said when there is none
        self.silent: list[str] = []
        self.silent_regions: set[str] = set()  # (their old origins' regions)

    def seen_stream(self, cfg: StreamConfig, suffix: str) -> None:
        """A stream of the side (a mirror or not): a name asked for that is not a mirror
        is "not mirrored", with what a promotion's record says (:meth:`missing`)."""
        if not self.names:
            return
        from ..config.kvnames import bucket_of_stream

        name = cfg.name
        bucket = bucket_of_stream(name)  # a KV bucket's stream answers to the bucket's name
        forms = (name, name + suffix) + ((bucket, bucket + suffix) if bucket else ())
        self.streams.update(forms)
        if cfg.mirror is not None:
            return
        rec = promotion_record(cfg)
        if rec is None or rec.done is None:  # (one that stopped part-way is a check of its
            return  # own, named or not: _unfinished_promotion)
        verb, shown = ("kv", bucket) if bucket else ("stream", name)
        why = (f"promoted at {rec.done} (jetlink {verb} failback {shown} makes it a mirror "
               "again)")
        for form in forms:
            self.promoted[form] = why

    def wanted(self, *aliases: str) -> bool:
        if not self.names:
            return True
        forms = set(aliases)
        for a in aliases:  # NAME@CLUSTER also answers to NAME; LINK/TOPIC to TOPIC
            forms.add(a.split("@")[0])
            if "/" in a:
                forms.add(a.split("/", 1)[1])
                forms.add(a.split("/", 1)[1].split("@")[0])
        self.mirrors.update(forms)
        hit = [n for n in self.names if n in forms]
        self.found.update(hit)
        return bool(hit)

    def missing(self) -> list[MirrorReadiness]:
        out = []
        for name in self.names:
            if name in self.found:
                continue
            result = Result(name=name, check=CHECK)
            if name in self.streams:
                why = self.promoted.get(name)
                result.critical(f"not mirrored: {why}" if why else "not mirrored")
            else:
                hint = did_you_mean(name, sorted(self.mirrors))
                result.critical(f"no mirror named {name} (no mirror stream, KV mirror bucket "
                                "or mirror topic of that name)" + (f"; {hint}" if hint else ""))
            out.append(MirrorReadiness(name, "", "", result))
        return out


def _topics_of(cluster: str, clock: Clock, flags: Mapping[str, Any], wanted: _Names
               ) -> Callable[[DataDir], list[MirrorReadiness]]:
    def topics(dd: DataDir) -> list[MirrorReadiness]:
        return check_topics(dd, cluster, clock, flags, wanted.wanted, f"@{cluster}",
                            silent=wanted.silent)

    return topics


def _no_topics(js: Any) -> list[MirrorReadiness]:
    return []  # a live server has no cluster links


def _unread(name: str, err: JetlinkError) -> str:
    """A cluster whose database cannot be used, as a check's critical reason."""
    why = reason(err)
    return f"could not read {why}" if why.startswith(f"cluster {name}:") else \
        f"could not read cluster {name}: {why}"


def _distinct_names(mirrors: list[MirrorReadiness]) -> None:
    """Two objects shown by one name (a stream CONFIG and the KV mirror bucket CONFIG, whose
    stream is KV_CONFIG): each named with its kind, ``CONFIG@east (kv)``, so that no two
    Nagios perf items or Prometheus series of one check share a name."""
    from collections import Counter

    seen = Counter(m.name for m in mirrors if m.kind)
    for m in mirrors:
        if m.kind and seen[m.name] > 1:
            m.name = m.result.name = f"{m.name} ({m.kind})"


def check_readiness(backend: Backend, names: Sequence[str] = (), *,
                    flags: Mapping[str, Any] | None = None, topology: Any = None,
                    clusters: Sequence[str] | None = None, clock: Clock | None = None
                    ) -> Readiness:
    """The readiness of every mirror on ``backend`` for a failover now (this module's
    opening). ``names``: only those mirrors (STREAM, BUCKET, LINK/TOPIC or TOPIC, each also
    as NAME@CLUSTER on the embedded engine); one that is no mirror is a critical result of
    its own. ``flags``: :class:`DrThresholds` field -> the flag's value, None when not given
    (the mirror's metadata fills those in). ``topology``: a core/topology Topology (the
    subjects of a failover whose origin is gone). ``clusters``: on the embedded engine the
    clusters looked at (None: every one of the data directory; a live server has its one
    JetStream domain). ``clock``: for the mirror topics' ages (default the system's)."""
    from ..clock import SystemClock

    flags = dict(flags or {})
    clock = clock or SystemClock()
    wanted = _Names(names)
    broken: list[tuple[str, JetlinkError]] = []  # clusters whose database cannot be used
    down: set[str] = set()  # clusters marked down (cluster down): a side that takes nothing

    def data_dir(dd: DataDir) -> list[tuple[str | None, str, str, bool]]:
        # a check copies nothing: no replication step when the command ends (the engine's
        # reads of consumers are write transactions, which would otherwise ask for one)
        backend.data_dir("dr check", step=False)
        infos = dd.clusters(create_local=False, broken=broken)
        require_clusters(dd, infos, clusters)
        chosen = [i for i in infos if clusters is None or i.name in clusters]
        down.update(i.name for i in chosen if i.down)
        out: list[tuple[str | None, str, str, bool]] = []
        for i in chosen:
            links = "links" in dd.open(i.name, create_local=False).table_names()
            out.append((i.name, i.name, i.kind, links))
        return out

    def server(js: Any) -> list[tuple[str | None, str, str, bool]]:
        label = ""
        try:
            label = str(js.api("INFO").get("domain", "") or "")
        except LiveError:
            raise  # a server that does not answer: said once, not after each request
        except (JetlinkError, AttributeError):
            pass
        return [(None, label, "nats", False)]

    mirrors: list[MirrorReadiness] = []
    try:
        places = backend.either(data_dir=data_dir, server=server)
        for cluster, label, kind, links in places:
            if kind == "nats":
                mirrors += _nats_mirrors(backend, cluster, label, wanted, topology, flags)
            if links and cluster is not None:
                mirrors += backend.either(data_dir=_topics_of(cluster, clock, flags, wanted),
                                          server=_no_topics)
    except UsageError:
        raise
    except JetlinkError as err:
        # a server that does not answer (refused, silent, not NATS): a check that cannot
        # look is critical, as natscli's checks are ("could not load info")
        from ..errors import NotFoundError

        return Readiness(mirrors, where=backend.label,
                         failures=[f"could not list mirrors: {reason(err)}"
                                   + (f": {err.detail}" if err.detail  # (the closest name)
                                      and "did you mean" in err.detail else "")],
                         unknown=isinstance(err, NotFoundError))
    # A mirror whose own cluster is marked down is in a region that is out itself: a
    # failover there is refused (core/dr/fence.py sides_of), whatever its origin says.
    for m in mirrors:
        if m.cluster in down:
            m.result.critical(f"Cluster {m.cluster} is down: a region failover there (dr "
                              f"failover) would be refused (jetlink cluster up {m.cluster} "
                              "once it answers)")
    # A cluster that cannot be read hides its mirrors: a check that cannot look is critical
    # (natscli's "could not load info"), named with what `cluster check` says of it; a
    # check of named mirrors all found elsewhere is not about it.
    unread = [_unread(name, err) for name, err in broken
              if clusters is None or name in clusters]
    missing = wanted.missing()
    if names and not missing:
        unread = []
    if not unread:
        mirrors += missing
    _distinct_names(mirrors)
    _one_primary(mirrors)
    where = backend.label
    if clusters is not None and backend.either(data_dir=lambda _dd: True,
                                               server=lambda _js: False):
        where = f"cluster{'s' if len(clusters) > 1 else ''} {', '.join(clusters)}"
    return Readiness(mirrors, where=where, failed_over=sorted(wanted.silent),
                     failed_over_regions=sorted(wanted.silent_regions),
                     failures=unread, down=sorted(down) if clusters is not None else [])
