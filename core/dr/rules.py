"""Promote and fail over a mirror, with its origin's consumers placed on the promoted stream.

One implementation over the JetStream interface (core/api.py), for the embedded engine and
for live servers alike. What differs between them is a :class:`Site`: where the mirror's
origin is and what it holds (:meth:`Site.origin`), and how the update that removes
``mirror`` is made together with the clamps of the mirror's own consumers
(:meth:`Site.promote_update`). The embedded site is core/dr/embedded.py ``EmbeddedSite`` (one
transaction of the mirror's cluster); the live one is core/dr/live.py ``LiveSite``.

The rules, defined here once:

- **Lag.** Two numbers, named apart. ``lag`` is the mirror's lag as the server reports it in
  STREAM.INFO ``mirror.lag``: the same number ``stream info``, ``stream report`` and
  ``jetlink replicate`` show, at every moment of an outage (while the origin does not answer
  it is the last one reported). ``origin_pending`` is counted now at the origin: its messages
  after the mirror's last sequence that the mirror copies (its filters, or its start while
  empty); None while the origin does not answer, which is never looked into.
- **Refusal.** ``promote`` is refused (:class:`PromoteRefused`, nothing changed) while the
  origin is reachable and ``origin_pending`` > 0; ``failover`` goes ahead whatever is
  pending.
- **Subjects.** Those the operator gives; else the origin's (read live, or as last synced);
  else those of the origin's stream in a topology file. When nothing knows them (the origin
  does not answer or is gone, no positions were synced, no topology names it) the promotion
  is refused (a UsageError naming ``--subjects``), never given the server's default (the
  stream's name). A mirror that transforms subjects needs them given.
- **Consumer placement.** Each durable consumer of the origin is recreated on the promoted
  stream with its own config, delivering from the message after its ack floor (what it had
  acknowledged is not delivered again; what it had been delivered but not acknowledged is).
  An ack floor beyond the mirror's last sequence L is clamped to L (the consumer starts at
  L + 1, the first message published after the promotion), and the clamp is reported: the
  way Confluent clamps a consumer group's offsets to a mirror topic's end on failover.
  The origin's consumers are read live when the origin answers; otherwise from the positions
  synced to the mirror's side (core/dr/positions.py), and the report says how old they are.
  A consumer of that name that already exists on the promoted stream is left as it is.
- **Own consumers.** Consumers of the mirror itself positioned beyond L are moved back to L
  (a real server would otherwise skip the messages published at L + 1 .. their position).
- **Partial results.** The stream update comes first; consumers are placed one by one after
  it. When something fails after the update (a server gone mid-way), :class:`PartialPromotion`
  carries the report of what was done and what was not, and says what to do next.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..api import JetStreamAPI
from ..config.codec import user_metadata
from ..config.consumer import ConsumerConfig
from ..config.kvnames import kv_subjects
from ..config.stream import StreamConfig
from ..errors import ApiError, JetlinkError, UsageError, nats_error
from .fencing import (  # the record's key, with jetlink's other marks
    PROMOTED_KEY,
    promotion_doc,
    record_seq,
)

__all__ = [
    "OriginFacts", "PartialPromotion", "PlacedConsumer", "PositionClamp", "PositionsUsed",
    "PromoteRefused",
    "PromoteReport", "Site", "beyond_position", "mirror_filters", "one_line", "place",
    "Naming", "Promotion", "PromotionRecord", "prepare", "promote", "promotion_record",
]


class PromoteRefused(JetlinkError):
    """Promotion refused: the origin does not answer, or the mirror lags behind it (promote
    needs both; failover does not)."""

    title = "promote refused"

    def __init__(self, description: str, *, pending: int | None, mirror_last_seq: int,
                 origin_last_seq: int | None, origin: str = "") -> None:
        super().__init__(description)
        # the origin's messages the mirror has not copied (None: the origin does not answer)
        self.pending = pending
        self.mirror_last_seq = mirror_last_seq
        self.origin_last_seq = origin_last_seq
        self.origin = origin  # "ORDERS (cluster west"


@dataclass
class PositionClamp:
    """A consumer placed at the promoted stream's last sequence instead of its position (a
    stream sequence, per consumer; the way Confluent clamps a group's offsets, whose Kafka
    form is core/kafka/mirror_model.py ``OffsetClamp``)."""

    consumer: str
    from_seq: int  # its position: the origin's ack floor, or (own consumers) start - 1,
    # delivered or ack floor
    to_seq: int  # the promoted stream's last sequence
    stream: str = ""  # the promoted stream

    def to_json(self) -> dict[str, Any]:
        return {"stream": self.stream, "consumer": self.consumer, "from": self.from_seq,
                "to": self.to_seq}


@dataclass
class OwnConsumer:
    """A consumer of the mirror itself positioned beyond its last sequence: recreated from
    ``config`` (its JSON document) at the promoted stream's last sequence + 1."""

    name: str
    config: dict[str, Any]
    position: int  # the last stream sequence it had been delivered or started beyond

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "config": self.config, "position": self.position}

    @classmethod
    def from_json(cls, doc: Any) -> OwnConsumer:
        return cls(str(doc["name"]), dict(doc["config"]), int(doc["position"]))


@dataclass
class OriginFacts:
    """What is known of a mirror's origin."""

    cluster: str  # its cluster (embedded) or JetStream domain (live; "" the target's own)
    stream: str
    reachable: bool
    error: str | None  # why it is not reachable
    last_seq: int | None  # None: unknown
    pending: int | None  # its messages the mirror has not copied, counted now; None: unknown
    subjects: list[str] | None  # None: unknown
    kind: str = "cluster"  # "cluster" | "domain"
    known_from: str = "origin"  # where last_seq / subjects came from: "origin" | "positions"
    # fenced by dr fence: it takes no writes, and ``subjects`` are the ones it had (recorded
    # in its metadata, core/dr/fencing.py), not the fence's own subject
    fenced: bool = False
    # a failback created it again: (the divergence point, the last sequence it held past
    # it, when), core/dr/fencing.py ``divergence``; None: none
    divergence: tuple[int, int, str] | None = None

    def read_config(self, cfg: StreamConfig) -> None:
        """``subjects``, ``fenced`` and ``divergence`` from the origin's config as stored."""
        from .fencing import divergence, fenced_subjects

        recorded = fenced_subjects(cfg)
        self.fenced = recorded is not None
        self.subjects = list(recorded if recorded is not None else cfg.subjects)
        self.divergence = divergence(cfg)

    @property
    def where(self) -> str:
        """``cluster west`` / ``domain west`` / ``the same domain``."""
        if self.kind == "domain" and not self.cluster:
            return "the mirror's own domain"
        return f"{self.kind} {self.cluster}"

    @property
    def silence(self) -> str:
        """:attr:`error` as the reason in ``... does not answer (REASON)``: without the
        words ``<where> does not answer`` it may hold itself (a live origin's)."""
        text = self.error or ""
        said = f"{self.where} does not answer ("
        return text[len(said):-1] if text.startswith(said) and text.endswith(")") else text

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"stream": self.stream, self.kind: self.cluster,
                               "reachable": self.reachable}
        if self.fenced:
            out["fenced"] = True
        if self.error:
            out["error"] = self.error
        return out


@dataclass
class Position:
    """A consumer of the origin as it was read: its config and where it stood."""

    consumer: str
    config: dict[str, Any]  # the consumer's config document
    ack_floor: int  # stream sequence
    delivered: int  # stream sequence
    num_pending: int = 0
    synced_ns: int | None = None  # when it was read (positions bucket); None: read now

    @classmethod
    def of_info(cls, info: Any, synced_ns: int | None = None) -> Position:
        cfg = info.config
        return cls(info.name, cfg.to_json(), int(info.ack_floor.stream_seq),
                   int(info.delivered.stream_seq), int(info.num_pending), synced_ns)


@dataclass
class PositionsUsed:
    """Where the consumer positions of a promotion came from."""

    source: str  # "origin" (read live) | "synced" (the positions bucket) | "none"
    synced_ns: int | None = None  # the oldest position's sync time (source "synced")
    age_ns: int | None = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        from ..clock import format_rfc3339_nano

        out: dict[str, Any] = {"source": self.source}
        if self.synced_ns is not None:
            out["synced"] = format_rfc3339_nano(self.synced_ns)
            out["age_ms"] = (self.age_ns or 0) // 1_000_000
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class PlacedConsumer:
    """One origin consumer placed (or to be placed) on the promoted stream."""

    consumer: str
    ack_floor: int  # on the origin
    start_seq: int  # the first sequence it is given on the promoted stream
    clamped: bool
    status: str = "planned"  # planned | created | exists | failed | not tried
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"consumer": self.consumer, "ack_floor": self.ack_floor,
                               "start_seq": self.start_seq, "clamped": self.clamped,
                               "status": self.status}
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
    subjects: list[str]
    # where the subjects come from: "given", "bucket" (a KV mirror: its origin bucket's
    # $KV.<bucket>.>), "origin", "positions" (as last synced), "topology" (the topology
    # file), "promoted" (an earlier run's update)
    subjects_from: str = "origin"
    lag: int | None = None  # the mirror's lag as the server reports it (None: not a mirror now)
    clamps: list[PositionClamp] = field(default_factory=list)
    consumers: list[PlacedConsumer] = field(default_factory=list)
    positions: PositionsUsed = field(default_factory=lambda: PositionsUsed("none"))
    info: Any = None  # the promoted stream (not in to_json)
    dry_run: bool = False
    promoted: bool = False  # the stream update was made
    complete: bool = False
    # A re-run (the stream promoted by an earlier run): ``resumed`` when this run continued
    # what that run had left unfinished (placed a consumer, recreated an own consumer);
    # ``already_done`` when that run had finished (or nothing was left to do).
    resumed: bool = False
    already_done: bool = False
    promoted_at: str | None = None  # when the earlier run promoted it (a re-run; None: unknown)
    subjects_before: list[str] | None = None  # a re-run that changed the subjects: the old ones

    @property
    def origin_last_seq(self) -> int | None:
        return self.origin.last_seq

    @property
    def origin_pending(self) -> int | None:
        return self.origin.pending

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
            "lag": self.lag,
            "origin_pending": self.origin.pending,
            "subjects": list(self.subjects),
            "subjects_from": self.subjects_from,
            "clamps": [c.to_json() for c in self.clamps],
            "consumers": [p.to_json() for p in self.consumers],
            "positions": self.positions.to_json(),
            "complete": self.complete,
            "resumed": self.resumed,
            "already_done": self.already_done,
            "promoted_at": self.promoted_at,
            "subjects_before": self.subjects_before,
        }


class PartialPromotion(JetlinkError):
    """The promotion stopped after the stream update: ``report`` says what was done."""

    title = "promotion incomplete"

    def __init__(self, description: str, report: PromoteReport) -> None:
        super().__init__(description)
        self.report = report

    def to_dict(self) -> dict[str, Any]:
        """The report, with the error: one JSON document says what was done and why the
        rest was not."""
        return {**self.report.to_json(), **super().to_dict()}


class Site(Protocol):
    """Where a mirror is promoted: its JetStream API and the backend-specific steps."""

    @property
    def js(self) -> JetStreamAPI:
        """The JetStream API of the mirror's side."""
    label: str  # the mirror's cluster / domain, for the report
    catch_up: str  # how a lagging mirror catches up, for the refusal

    def origin(self, cfg: StreamConfig, mirror_last: int) -> tuple[OriginFacts, Any]:
        """The origin's facts, and its JetStreamAPI when it answers (else None)."""

    def promote_update(self, cfg: StreamConfig, last: int) -> tuple[Any, list[PositionClamp]]:
        """Update the stream to ``cfg`` (no mirror) and clamp its own consumers beyond the
        stream's last sequence: (the promoted StreamInfo, the clamps)."""

    def own_clamps(self, stream: str, last: int) -> list[PositionClamp]:
        """The clamps :meth:`promote_update` would make (nothing changed)."""

    def own_plan(self, stream: str, last: int) -> list[OwnConsumer]:
        """The mirror's own consumers :meth:`promote_update` will recreate one by one
        (recorded in the promoted stream's metadata first, so that a run stopped between
        them is finished by :meth:`finish_own`); none where the update and the clamps are
        one transaction."""

    def finish_own(self, stream: str, last: int, plan: Sequence[OwnConsumer]
                   ) -> list[PositionClamp]:
        """After a promotion stopped part-way: every consumer of ``plan`` that is missing
        or still beyond ``last`` placed at ``last + 1``; the clamps made now."""

    def now_ns(self) -> int: ...

    def cut_off(self) -> str | None:
        """Why this side reaches no other now (a cluster of the data directory marked down:
        a partition, nothing in or out), or None (a live server reaches what answers)."""

    def subject_streams(self) -> dict[str, StreamConfig]:
        """The configs of the streams of the mirror's side that take subjects (a mirror
        takes none), by name: what a promoted stream's subjects must not overlap."""

    def other_primaries(self, mirror: Any) -> list[str]:
        """The streams of the other sides this site can see (``NAME@SIDE``) that a failover
        promoted from the origin of ``mirror`` (a StreamSource) and that are primaries
        still (not failed back): a second failover would make two. A live server sees its
        own domain only: none."""

    # -- failback (core/dr/failback.py) --------------------------------------------------------
    def side(self, cfg: StreamConfig) -> Site:
        """The site of the origin of ``cfg`` (a mirror's config, or a promoted stream's with
        the mirror it was): where failback works on the old origin."""

    def source_for(self, stream: str, at: Site) -> dict[str, Any]:
        """The ``mirror`` document by which a stream at ``at`` mirrors ``stream`` of this
        site (its name, and the external API of this site's domain / cluster)."""

    def kv(self) -> Any:
        """Key-Value of this site (core/kv.py KV): jetlink's own records live there."""

    def agreed_prefix(self, stream: str, promoted: Site, name: str, last: int,
                      shown: tuple[str, str]) -> Any:
        """What failback keeps of the old origin ``stream`` of this site when it becomes a
        mirror of ``name`` at ``promoted``: core/dr/reuse.py ``Reuse`` (the messages up to
        the divergence point, compared up to ``last``; on a live server none, and why)."""

    def reuse_as_mirror(self, cfg: StreamConfig, reuse: Any) -> None:
        """The old origin deleted and created again as the mirror ``cfg`` keeping what
        ``reuse`` says, in one transaction (core/dr/reuse.py)."""

    def settle(self, stream: str, upto: int, timeout: float) -> int:
        """Let the mirror ``stream`` of this site copy up to sequence ``upto`` (embedded:
        the replication pump; live: the server copies, this waits at most ``timeout``
        seconds); its last sequence then."""


# --- rules ------------------------------------------------------------------------------------
def mirror_filters(cfg: StreamConfig) -> list[str]:
    """The origin subjects a mirror copies (empty: all; core/agreements.py
    ``source_filters``)."""
    from ..agreements import source_filters

    return [] if cfg.mirror is None else source_filters(cfg.mirror)


def _at_its_limit(info: Any) -> bool:
    """Whether a mirror holds its max_msgs or max_bytes already (discard new: what it reads
    next is refused, however long it waits)."""
    cfg, state = info.config, info.state
    return bool((cfg.max_msgs > 0 and int(state.messages) >= cfg.max_msgs)
                or (cfg.max_bytes > 0 and int(state.bytes) >= cfg.max_bytes))


def mirror_lag(info: Any, *, origin_answers: bool = True) -> int | None:
    """The mirror's lag as its StreamInfo reports it (``mirror.lag``); None: not a mirror,
    or, its origin silent (``origin_answers`` False), a mirror that never heard from it
    (``active`` -1: a server restarted during the outage reports 0 then, which is no
    figure: ``dr check``'s "Lag unknown (never reported)")."""
    mirror = getattr(info, "mirror", None)
    if not mirror or (not origin_answers and mirror.get("active", 0) == -1):
        return None
    return int(mirror.get("lag", 0))


def lag_start(cfg: StreamConfig, mirror_last: int) -> tuple[int, str | None]:
    """Where the messages a mirror has not copied begin: (start sequence, or 0 with the
    start time of an empty mirror with opt_start_time)."""
    m = cfg.mirror
    assert m is not None
    if mirror_last > 0:
        return mirror_last + 1, None
    if m.opt_start_seq > 0:
        return m.opt_start_seq, None
    if m.opt_start_time:
        return 0, m.opt_start_time
    return 1, None


def beyond_position(sseq: int, delivered: int, ack_floor: int, asflr: int = 0) -> int:
    """A consumer's highest stream position: its next sequence - 1, delivered or ack floor."""
    return max(sseq - 1, delivered, ack_floor, asflr)


def place(pos: Position, last: int) -> PlacedConsumer:
    """Where an origin consumer starts on a promoted stream whose last sequence is ``last``:
    after its ack floor, clamped to ``last``."""
    if pos.ack_floor > last:
        return PlacedConsumer(pos.consumer, pos.ack_floor, last + 1, True)
    return PlacedConsumer(pos.consumer, pos.ack_floor, pos.ack_floor + 1, False)


def placed_config(pos: Position, start_seq: int) -> ConsumerConfig:
    """The origin consumer's config, delivering from ``start_seq``."""
    cfg = ConsumerConfig.from_json(dict(pos.config), strict=False)
    cfg.deliver_policy = "by_start_sequence"
    cfg.opt_start_seq = start_seq
    cfg.opt_start_time = ""
    # metadata the server manages is the new server's to set
    if cfg.metadata:
        cfg.metadata = user_metadata(cfg.metadata)
    return cfg


def _not_placed(js: JetStreamAPI, stream: str, name: str, start_seq: int) -> str:
    """Why a consumer of the origin's name that the promoted stream holds already is not
    where the placement would put it: "" when it is the placement (an earlier run's:
    delivering from ``start_seq``), else what it is, kept as it is (a consumer made on the
    mirror by hand: the promotion never changes it)."""
    try:
        cfg = js.consumer_info(stream, name).config
    except (ApiError, JetlinkError):
        return ""
    if cfg.deliver_policy == "by_start_sequence" and cfg.opt_start_seq == start_seq:
        return ""
    how = f"deliver {cfg.deliver_policy}" + (
        f" from {cfg.opt_start_seq}" if cfg.deliver_policy == "by_start_sequence" else "")
    return (f"a consumer of that name was on the mirror already, kept as it is ({how}, ack "
            f"{cfg.ack_policy}): it does not start at {start_seq} (consumer rm it, then "
            f"consumer add it with --deliver {start_seq}, to start where the origin's was)")


def is_durable(config: dict[str, Any]) -> bool:
    """A consumer that outlives its clients: a durable name, or a name without an
    inactivity threshold."""
    if config.get("durable_name"):
        return True
    return bool(config.get("name")) and not config.get("inactive_threshold")


def origin_name(kind: str, stream: str) -> str:
    """A mirror's origin as the region plans and checks name it: a KV mirror's by its bucket
    (``KV_CONFIG`` is ``CONFIG``), a stream's by its name."""
    from ..config.kvnames import bucket_of_stream

    return (bucket_of_stream(stream) or stream) if kind == "kv" else stream


@dataclass(frozen=True)
class Primary:
    """A mirror a region failover would make a primary: its origin (``kind`` "stream", "kv"
    or "topic", ``origin`` its stream or source topic, in ``region``), the ``side`` it is
    on, its name as shown."""

    region: str
    kind: str
    origin: str
    side: str
    shown: str


def two_primaries(mirrors: Sequence[Primary]) -> dict[Primary, str]:
    """The one-primary rule of a region failover: an origin with two mirrors in one plan,
    on two sides or on one, ends with two primaries taking writes for one stream (each
    failback then keeps one side's and sets the other's aside; on one side the second
    promotion's subjects overlap the first's and it fails half-way through the run; two
    mirror topics of one source topic fork its offsets). Each
    such mirror and why, naming the others and the way out (``--cluster`` for the side that
    takes over, or ``--skip``)."""
    groups: dict[tuple[str, str, str], list[Primary]] = {}
    for m in mirrors:
        groups.setdefault((m.region, m.kind, m.origin), []).append(m)
    out = {}
    for (region, kind, origin), group in groups.items():
        if len(group) < 2:
            continue
        for m in group:
            others = ", ".join(x.shown for x in group if x is not m)
            what = {"kv": "bucket", "topic": "topic"}.get(kind, "stream")
            if any(x.side != m.side for x in group):
                where, how = "on other sides too", "fail over one side (--cluster) or --skip"
            else:
                where, how = (f"twice on {m.side}" if m.side else "twice"), "--skip"
            out[m] = (f"{what} {origin}@{region} is mirrored {where} ({others}): a failover "
                      f"of each would make two primaries taking writes for one {what}; "
                      f"{how} the others")
    return out


def one_line(err: Exception) -> str:
    """An error's first line (its description), for a report."""
    text = getattr(err, "description", None) or str(err)
    return text.splitlines()[0] if text else type(err).__name__


# --- promote ----------------------------------------------------------------------------------
def choose_subjects(cfg: StreamConfig, facts: OriginFacts, subjects: Sequence[str] | None,
                    topology: Any = None, given: str = "given"
                    ) -> tuple[list[str] | None, str]:
    """The promoted stream's subjects and where they come from: given (``given`` says by
    whom: "given", or "bucket" for a KV mirror's), else the origin's (read now, or as last
    synced: ``facts.known_from``), else the topology file's stream of the origin's name
    (``topology``: a core/topology Topology); ``(None, "unknown")`` when nothing knows them
    (an origin without subjects of its own, a mirror itself, knows none). A mirror that
    transforms its origin's subjects needs them given."""
    if subjects is not None:
        return [s for s in subjects if s], given
    m = cfg.mirror
    if m is not None and m.subject_transforms:
        raise UsageError(
            f"mirror {cfg.name} transforms its origin's subjects: give the promoted stream's "
            "subjects (--subjects)", field="subjects")
    if facts.subjects:
        return list(facts.subjects), facts.known_from
    # an origin with no subjects of its own (itself a mirror, or a stream only sourcing) says
    # nothing of them: promoted without any, a stream would take its own name
    found = topology_subjects(topology, facts)
    if found is not None:
        return found, "topology"
    return None, "unknown"


def topology_subjects(topology: Any, facts: OriginFacts) -> list[str] | None:
    """The subjects a topology file gives the origin's stream: the stream of that name in
    the origin's cluster, else the only stream of that name in the file (None: none, or
    several in other clusters)."""
    if topology is None:
        return None
    found = {cluster: cfg for (cluster, name), cfg in topology.stream_configs().items()
             if name == facts.stream}
    exact = [found[facts.cluster]] if facts.cluster in found else []
    only = list(found.values()) if len(found) == 1 else []
    pick = exact or only
    if not pick or not pick[0].subjects:
        return None
    return list(pick[0].subjects)


@dataclass
class Naming:
    """The words a promotion's refusal uses for what is promoted: ``what`` ("mirror", "KV
    mirror"), ``shown`` (the name the user gave, e.g. a KV bucket; default the stream's),
    ``instead``, what to do rather than promote (the command that fails over), and
    ``again``, the command itself (what a re-run's refusal tells the operator to run)."""

    what: str = "mirror"
    shown: str | None = None
    instead: str = "fail over instead"
    again: str = ""
    # how to give the subjects of a promoted stream whose origin is gone and unknown
    subjects_hint: str = ("give them with --subjects (what the producers publish to), or "
                          "--topology FILE naming the origin's stream")


class Promotion:
    """A promotion read and checked, not made yet (:func:`prepare`): the mirror's info and
    its origin's facts, each read once; :meth:`preview` is the dry run's report,
    :meth:`carry_out` makes it. A caller that asks the operator first shows
    :attr:`facts` and :attr:`lag` (nothing is read again).

    A re-run (:attr:`rerun`: the stream was promoted by an earlier run, its record in the
    metadata :data:`PROMOTED_KEY`) continues what that run left unfinished; once that run
    had finished (:attr:`finished`) nothing is placed again. Either way the subjects given
    now are applied (:attr:`subjects_before`: the stream's subjects they replace)."""

    def __init__(self, site: Site, stream: str, info: Any, cfg: StreamConfig,
                 mirror_last: int, rerun: bool, facts: OriginFacts, origin_js: Any,
                 synced: Any, subjects: list[str], subjects_from: str, failover: bool,
                 transfer: bool, adjust: Callable[[StreamConfig], None] | None,
                 own_plan: Sequence[OwnConsumer] = (), record: PromotionRecord | None = None,
                 subjects_before: list[str] | None = None) -> None:
        self.site, self.stream, self.info, self.cfg = site, stream, info, cfg
        self.mirror_last, self.rerun, self.facts = mirror_last, rerun, facts
        self._origin_js, self._synced = origin_js, synced
        self.subjects, self.subjects_from = subjects, subjects_from
        self.failover, self.transfer, self.adjust = failover, transfer, adjust
        self.own_plan = list(own_plan)
        self.record = record
        self.subjects_before = subjects_before
        self.lag = mirror_lag(info, origin_answers=facts.reachable)

    @property
    def finished(self) -> bool:
        """A re-run of a promotion that an earlier run had finished."""
        return self.record is not None and self.record.done is not None

    def _report(self, dry_run: bool) -> tuple[PromoteReport, list[Position], bool, list[str]]:
        site, stream, facts, js = self.site, self.stream, self.facts, self.site.js
        new_subjects = self.subjects
        from_origin = self.subjects_from in ("origin", "positions", "topology")
        action = "failover" if self.failover else "promote"
        if self.finished and self.record is not None and self.record.action:
            action = self.record.action  # a re-run reports what the earlier run did
        forced = self.failover and bool(facts.reachable and facts.pending)
        report = PromoteReport(cluster=site.label, stream=stream, action=action, forced=forced,
                               origin=facts, mirror_last_seq=self.mirror_last,
                               subjects=new_subjects or [stream],
                               subjects_from=self.subjects_from, lag=self.lag, info=self.info,
                               dry_run=dry_run, subjects_before=self.subjects_before,
                               promoted_at=self.record.at if self.record else None)
        found: list[Position] = []
        if self.finished:
            report.positions = PositionsUsed("none", note=(
                "nothing placed now: the earlier run had finished the promotion"))
            return report, found, from_origin, new_subjects
        # the origin's consumers: read live, else as last synced
        if self.transfer:
            found, report.positions = _positions(site, facts, self._origin_js, self._synced)
        elif self.rerun:
            report.positions = PositionsUsed("none", note=(
                "--no-consumers: no consumer of the origin is placed by this run (those an "
                "earlier run placed stay)"))
        existing = set(js.consumer_names(stream))
        for pos in found:
            p = place(pos, self.mirror_last)
            if pos.consumer in existing:
                p.status = "exists"
                p.error = _not_placed(js, stream, pos.consumer, p.start_seq)
            report.consumers.append(p)
        return report, found, from_origin, new_subjects

    def _rerun_outcome(self, report: PromoteReport, own: Sequence[Any]) -> None:
        """A re-run's ``resumed`` (the earlier run did not finish: this one finishes it,
        placing what is left, if only its record's end) or ``already_done``."""
        if not self.rerun:
            return
        report.resumed = not self.finished
        report.already_done = not report.resumed

    def preview(self) -> PromoteReport:
        """What :meth:`carry_out` would do (nothing changed)."""
        report, _found, _from_origin, _subjects = self._report(True)
        if self.finished:
            own: list[Any] = []
        elif self.rerun:  # what finish_own would recreate
            own = [PositionClamp(o.name, o.position, self.mirror_last, self.stream)
                   for o in self.own_plan]
        else:
            own = self.site.own_clamps(self.stream, self.mirror_last)
        report.clamps = own + _transfer_clamps(report)
        self._rerun_outcome(report, own)
        return report

    def carry_out(self) -> PromoteReport:
        """Update the stream without ``mirror``, clamp its own consumers, place the
        origin's (:func:`promote` has the errors)."""
        site, stream, js, cfg = self.site, self.stream, self.site.js, self.cfg
        mirror_last = self.mirror_last
        report, found, from_origin, new_subjects = self._report(False)
        own: list[PositionClamp] = []
        if self.rerun:
            promoted = self.info
            if self.subjects_before is not None:  # as stream edit changes them
                changed = self.info.config.copy()
                changed.subjects = list(new_subjects)
                promoted = js.update_stream(changed)
            if not self.finished:
                own = site.finish_own(stream, mirror_last, self.own_plan)
        else:
            new_cfg = cfg.copy()
            new_cfg.mirror = None
            new_cfg.subjects = new_subjects
            if self.adjust is not None:
                self.adjust(new_cfg)
            _promoted_config(new_cfg, cfg.mirror, mirror_last,
                             site.own_plan(stream, mirror_last), at=_stamp(site.now_ns()),
                             action="failover" if self.failover else "promote",
                             window=cfg.duplicate_window)
            try:
                promoted, own = site.promote_update(new_cfg, mirror_last)
            except ApiError as err:
                if from_origin and err.err_code == 10065:
                    raise JetlinkError(
                        f"the origin's subjects {', '.join(new_subjects)} overlap with another "
                        f"stream of {site.label or 'the server'}: give the promoted stream's "
                        "subjects", field="subjects") from err
                raise
        report.promoted = True
        report.info = promoted
        report.subjects = list(promoted.config.subjects) or [stream]
        report.clamps = [*own]
        self._rerun_outcome(report, own)
        if self.finished:
            report.complete = True
            return report
        _place_consumers(js, stream, report, found)
        report.info = _mark_done(js, stream, site.now_ns(), report) or report.info
        return report


def _place_consumers(js: Any, stream: str, report: PromoteReport, found: list[Position]
                     ) -> None:
    """Create the origin's consumers planned in ``report`` on the promoted stream, one by
    one; :class:`PartialPromotion` when one could not be placed."""
    by_name = {x.consumer: x for x in found}
    failure: Exception | None = None
    for p in report.consumers:
        if p.status != "planned":
            continue
        if failure is not None:
            p.status = "not tried"
            continue
        try:
            js.add_consumer(stream, placed_config(by_name[p.consumer], p.start_seq),
                            action="create")
            p.status = "created"
        except ApiError as err:
            p.status, p.error = "failed", one_line(err)
            if err.err_code == 10148:  # consumer name already in use: leave it as it is
                p.status, p.error = "exists", ""
        except JetlinkError as err:  # the connection: nothing more can be done now
            p.status, p.error = "failed", one_line(err)
            failure = err
    report.clamps += _transfer_clamps(report)
    failed = [p for p in report.consumers if p.status in ("failed", "not tried")]
    report.complete = not failed
    if failed:
        names = ", ".join(p.consumer for p in failed)
        when = ("once the server answers" if failure is not None else
                "once what the server refused is fixed")
        raise PartialPromotion(
            f"stream {stream} was promoted, but {len(failed)} consumer"
            f"{'s were' if len(failed) != 1 else ' was'} not placed ({names}): "
            f"{failed[0].error or 'not tried'}. Run the same command again {when}: it "
            "places what is missing and leaves the consumers already placed as they are",
            report)


def prepare(site: Site, stream: str, *, subjects: Sequence[str] | None = None,
            failover: bool = False, positions: Any = None, transfer: bool = True,
            adjust: Callable[[StreamConfig], None] | None = None,
            naming: Naming | None = None, topology: Any = None,
            bucket: str | None = None, overlap: bool = True,
            as_stream: bool = False) -> Promotion:
    """Read and check the promotion of the mirror ``stream`` (:func:`promote` has the
    arguments): the mirror and its origin are read once here; :class:`PromoteRefused`
    (worded by ``naming``) when it must not go ahead, a UsageError (``subjects``) when the
    promoted stream's subjects are unknown. ``overlap`` false: the subjects are not checked
    against the other streams here (a region's run, whose plan checked them; the update
    itself still refuses an overlap). ``as_stream``: a stream verb's promotion, refused for
    a KV mirror bucket's stream (:func:`bucket_as_stream`)."""
    naming = naming or Naming()
    given_from = "given"
    if bucket is not None:  # a KV mirror becomes its origin bucket: the bucket's subjects
        subjects, given_from = [kv_subjects(bucket)], "bucket"
    shown = naming.shown or stream
    js = site.js
    info = js.stream_info(stream)
    cfg = info.config
    if as_stream and bucket is None and cfg.mirror is not None:
        bucket_as_stream(stream, cfg.mirror.name, failover)
    mirror_last = int(info.state.last_seq)
    resumed = False
    own_plan: list[OwnConsumer] = []
    record = None
    if cfg.mirror is None:
        was = _was_mirror(cfg)  # promoted before: a re-run
        if was is None:
            raise JetlinkError(f"stream {stream} is not a mirror")
        (cfg, mirror_last, own_plan), resumed = was, True
        record = promotion_record(info.config)
    facts, origin_js = site.origin(cfg, mirror_last)
    synced = positions.read(stream) if positions is not None else None
    if not facts.reachable and synced is not None and synced.origin_last_seq is not None \
            and facts.last_seq is None:
        # as last synced; the mirror's own sequences are the origin's, so the origin held at
        # least what the mirror copied since
        facts.last_seq = max(synced.origin_last_seq, mirror_last)
        facts.known_from = "positions"
        if facts.subjects is None and synced.origin_subjects is not None:
            facts.subjects = list(synced.origin_subjects)
    if not resumed and cfg.mirror is not None:
        others = site.other_primaries(cfg.mirror)
        if others:  # (a region's plan refuses this across its sides: _one_primary)
            raise PromoteRefused(
                f"{naming.what} {shown} cannot be {'failed over' if failover else 'promoted'}"
                f": {facts.stream} ({facts.where}) was failed over already to "
                f"{', '.join(others)}, a primary still: a second would make two primaries "
                "taking writes for one stream (each failback then keeps one side's writes "
                f"and sets the other's aside); fail back {others[0]} first, or fail over "
                "only one side",
                pending=None, mirror_last_seq=mirror_last, origin_last_seq=facts.last_seq,
                origin=f"{facts.stream} ({facts.where})")
    if not (failover or resumed):
        # promote, as Confluent's: the origin reachable and the mirror caught up
        if not facts.reachable:
            raise PromoteRefused(
                f"{naming.what} {shown} cannot be promoted: its origin {facts.stream} "
                f"({facts.where}) is not reachable ({facts.error}); promote needs the origin "
                f"reachable and caught up: {naming.instead}",
                pending=None, mirror_last_seq=mirror_last, origin_last_seq=facts.last_seq,
                origin=f"{facts.stream} ({facts.where})")
        if facts.pending:
            behind = f"{facts.pending} message{'s' if facts.pending != 1 else ''}"
            mirror_info = getattr(info, "mirror", None) or {}
            failing = mirror_info.get("error")
            mcfg = info.config
            limited = mcfg.discard == "new" and (mcfg.max_msgs > 0 or mcfg.max_bytes > 0
                                                 or mcfg.max_msgs_per_subject > 0)
            # a mirror that never catches up by waiting: its copy fails (the error it
            # reports), or its own limits under discard new dropped what its consumer read
            # (nats-server's processInboundMirrorMsg: consumed, not stored, no error, lag 0)
            if isinstance(failing, dict):
                wait = (f"its copy fails ({failing.get('description', 'error')}"
                        f"{' ' + str(failing['err_code']) if failing.get('err_code') else ''})"
                        ", so waiting will not catch it up: fix that (stream edit, e.g. its "
                        f"limits) or {naming.instead}")
            elif limited and (not int(mirror_info.get("lag", 0) or 0)
                              or _at_its_limit(info)):
                wait = ("its own limits (discard new) refuse what it reads, which it does "
                        "not read again, so waiting will not catch it up: "
                        f"{naming.instead}")
            else:
                wait = f"let it catch up ({site.catch_up}) or {naming.instead}"
            raise PromoteRefused(
                f"{naming.what} {shown} is {behind} behind its origin {facts.stream} "
                f"({facts.where}, last sequence {facts.last_seq}; mirror at {mirror_last}): "
                f"{wait}",
                pending=facts.pending, mirror_last_seq=mirror_last,
                origin_last_seq=facts.last_seq, origin=f"{facts.stream} ({facts.where})")
    before: list[str] | None = None
    if resumed:
        chosen, source, before = _rerun_subjects(info.config, facts, subjects, topology,
                                                 naming, given_from)
        if record is not None and record.done is not None and not transfer and record.placed:
            # the consumers an earlier run placed cannot be taken back by a flag
            many = record.placed != 1
            raise UsageError(
                f"stream {stream} was promoted at {record.at or 'an earlier run'} and "
                f"{record.placed} consumer{'s' if many else ''} of its origin "
                f"{'were' if many else 'was'} placed on it then: --no-consumers cannot take "
                f"{'them' if many else 'it'} back; remove what is not wanted with jetlink "
                f"consumer rm {stream} NAME (jetlink consumer ls {stream} lists them)",
                field="no_consumers")
    else:
        found, source = choose_subjects(cfg, facts, subjects, topology, given_from)
        if found is None:
            nothing = ["no positions were synced (jetlink positions sync)" if synced is None
                       else "the synced positions hold none"]
            if topology is not None:
                bad = len(getattr(topology, "problems", ()) or ())
                nothing.append(f"the topology file has no stream {facts.stream}" + (
                    f" (it has {bad} problem{'s' if bad != 1 else ''}: jetlink validate "
                    "lists them)" if bad else ""))
            why = (f"is not there ({facts.error})" if "not found" in (facts.error or "")
                   else "is not reachable")
            raise UsageError(
                f"the subjects of the promoted stream {shown} are unknown: its origin "
                f"{facts.stream} ({facts.where}) {why} and {' and '.join(nothing)}: "
                f"{naming.subjects_hint}", field="subjects")
        chosen = found
        if overlap:
            _no_overlap(site, stream, chosen, source)
    _subjects_taken(cfg, chosen, source)
    return Promotion(site, stream, info, cfg, mirror_last, resumed, facts, origin_js, synced,
                     chosen, source, bool(failover), transfer, adjust, own_plan, record,
                     before)


def _subjects_taken(cfg: StreamConfig, subjects: Sequence[str], source: str) -> None:
    """The subjects a promoted stream takes, checked by the server's stream subject rules
    (core/config/validate.py ``check_subjects``: a valid subject, '>' only with no-ack, the
    API namespaces) before anything is changed, so that a dry run refuses what the run
    would (10052, naming the subject)."""
    from ..config.validate import check_subjects
    from ..subjects import is_valid_subject

    promoted = cfg.copy()
    promoted.mirror = None
    promoted.subjects = list(subjects)
    try:
        check_subjects(promoted)
    except ApiError as err:
        from ..subjects import SUBJECT_RULE

        bad = next((s for s in subjects if not is_valid_subject(s)), None)
        shown = repr(bad) if bad is not None else ", ".join(subjects)
        rule = f" ({SUBJECT_RULE})" if bad is not None else ""
        if err.detail is None:  # (``source``: where they came from, "given" by --subjects)
            err.detail = (f"--subjects {shown}{rule}" if source == "given"
                          else f"subjects {shown} (from {source}){rule}")
        raise


def _no_overlap(site: Site, stream: str, subjects: Sequence[str], source: str) -> None:
    """The promoted stream's subjects against the other streams' of its side, before
    anything is changed (the dry run, dr check and a region's plan see it too): the
    server's overlap rule (core/config/validate.py ``overlapping_stream``), the stream and
    subject named with the way out."""
    from ..config.validate import overlapping_stream

    clash = overlapping_stream(list(subjects), site.subject_streams(), stream)
    if clash is None:
        return
    if source in ("origin", "positions", "topology"):
        raise JetlinkError(f"the origin's subjects {', '.join(subjects)} overlap with another "
                           f"stream of {site.label or 'the server'} ({clash}): give the "
                           "promoted stream's subjects with --subjects", field="subjects")
    err = nats_error("StreamSubjectOverlap", field="subjects")  # the update's refusal
    err.detail = clash
    raise err


def _rerun_subjects(promoted: StreamConfig, facts: OriginFacts,
                    subjects: Sequence[str] | None, topology: Any, naming: Naming,
                    given_from: str = "given") -> tuple[list[str], str, list[str] | None]:
    """A re-run's subjects: (subjects, from, the ones they replace or None). Subjects given
    are applied, as ``stream edit --subjects`` would apply them (the operator named them);
    a topology file is only a fallback for subjects nothing else knows, and the promoted
    stream knows its own: one that disagrees is refused (UsageError) rather than applied
    silently or ignored."""
    current = list(promoted.subjects)
    if subjects is not None:
        given = [s for s in subjects if s]
        if sorted(given) != sorted(current):
            return given, given_from, current
        return current, "promoted", None
    found = topology_subjects(topology, facts)
    if found is not None and sorted(found) != sorted(current):
        shown = naming.shown or promoted.name
        run = naming.again or f"jetlink stream failover {shown}"
        raise UsageError(
            f"stream {promoted.name} was promoted before, with the subjects "
            f"{', '.join(current)}; the topology file gives its origin {facts.stream} "
            f"{', '.join(found)}: a re-run does not take subjects from a topology file (the "
            f"promoted stream has its own); to change them run {run} --subjects "
            f"'{','.join(found)}'", field="topology")
    return current, "promoted", None


def promote(site: Site, stream: str, *, subjects: Sequence[str] | None = None,
            failover: bool = False, dry_run: bool = False, positions: Any = None,
            transfer: bool = True, adjust: Callable[[StreamConfig], None] | None = None,
            naming: Naming | None = None, topology: Any = None,
            bucket: str | None = None, as_stream: bool = False) -> PromoteReport:
    """Turn the mirror ``stream`` into a normal stream and place its origin's consumers on it.

    ``promote`` (``failover=False``) needs the origin reachable and caught up;
    ``failover=True`` goes ahead whatever the origin's state (Confluent's meanings).
    ``subjects``: the promoted stream's (default: the origin's, read now or as last synced,
    else the stream of the origin's name in ``topology``); ``bucket``: the origin bucket of
    a KV mirror, whose subjects (``$KV.<bucket>.>``) it takes. ``positions``: a
    core/dr/positions.py ``PositionStore`` of the mirror's side (the consumer positions
    synced there), used when the origin does not answer; None: none kept.
    ``transfer=False``: no consumer of the origin is placed. ``adjust``: changes to the
    promoted config besides removing ``mirror`` (a KV mirror becoming its bucket).
    ``naming``: the words of the refusal; ``as_stream``: a stream verb's (a KV mirror
    bucket's stream refused: :func:`bucket_as_stream`). Raises ApiError 10059 (stream),
    JetlinkError (not a mirror), UsageError (subjects unknown or needed),
    :class:`PromoteRefused`, the update's ApiError (nothing changed),
    :class:`PartialPromotion` (updated, not every consumer placed).
    """
    promotion = prepare(site, stream, subjects=subjects, failover=failover,
                        positions=positions, transfer=transfer, adjust=adjust, naming=naming,
                        topology=topology, bucket=bucket, as_stream=as_stream)
    return promotion.preview() if dry_run else promotion.carry_out()




def _stamp(ns: int) -> str:
    """A record's time: RFC 3339, whole seconds (UTC)."""
    from ..clock import format_rfc3339_nano

    return format_rfc3339_nano(ns - ns % 1_000_000_000)


def _promoted_config(cfg: StreamConfig, mirror: Any, last: int,
                     own: Sequence[OwnConsumer] = (), at: str | None = None,
                     action: str | None = None, window: int | None = None) -> None:
    """The promoted stream's config: the mirror it was in its metadata
    (:data:`PROMOTED_KEY`, with ``at``, the time of the promotion, and ``window``, the
    mirror's duplicate_window: the promoted stream gets the server's default one, and a
    failback makes the mirror again as it was), with the own consumers still to be
    recreated, so that a promotion stopped before every consumer was placed can be finished
    by running it again (``mirror_direct`` is kept, as the server keeps it)."""
    import json

    doc: dict[str, Any] = {"mirror": mirror.to_json(), "last_seq": last}
    if window is not None:
        doc["duplicate_window"] = window
    if at:
        doc["at"] = at
    if action:  # promote or failover: what a re-run of either verb reports it was
        doc["action"] = action
    if own:
        doc["own"] = [o.to_json() for o in own]
    cfg.metadata = {**(cfg.metadata or {}),
                    PROMOTED_KEY: json.dumps(doc, separators=(",", ":"))}


@dataclass
class PromotionRecord:
    """What the promoted stream's :data:`PROMOTED_KEY` says besides the mirror it was:
    ``at`` (when it was promoted), ``done`` (when every step was finished; None: a run
    stopped before) and ``placed`` (the origin's consumers on it then)."""

    at: str | None
    done: str | None
    placed: int
    action: str | None = None  # promote | failover (None: a record from before it was kept)


def promotion_record(cfg: StreamConfig) -> PromotionRecord | None:
    """The promotion record of a stream jetlink promoted (None: none, or not readable)."""
    doc = promotion_doc(cfg)
    if doc is None:
        return None
    try:
        action = doc.get("action")
        return PromotionRecord(doc.get("at"), doc.get("done"),
                               record_seq(doc.get("placed") or 0),
                               action if action in ("promote", "failover") else None)
    except (ValueError, TypeError, AttributeError):
        return None


def _mark_done(js: Any, stream: str, now_ns: int, report: PromoteReport) -> Any:
    """Record in the promoted stream's :data:`PROMOTED_KEY` that every step is done (the
    own consumers' plan dropped, the origin's consumers placed counted), so that a re-run
    knows there is nothing to finish; the stream's info after it."""
    import json

    info = js.stream_info(stream)
    cfg = info.config.copy()
    doc = promotion_doc(cfg)
    if doc is None:  # pragma: no cover - the update wrote it
        return info
    doc.pop("own", None)
    doc["done"] = _stamp(now_ns)
    doc["placed"] = sum(1 for p in report.consumers if p.status in ("created", "exists"))
    cfg.metadata = {**(cfg.metadata or {}), PROMOTED_KEY: json.dumps(doc, separators=(",", ":"))}
    return js.update_stream(cfg)


def _was_mirror(cfg: StreamConfig) -> tuple[StreamConfig, int, list[OwnConsumer]] | None:
    """A promoted stream's config with the mirror it was, its last sequence then and the
    own consumers it was to recreate (None: not promoted by jetlink)."""
    from ..config.stream import StreamSource

    doc = promotion_doc(cfg)
    if doc is None:
        return None
    try:
        mirror = StreamSource.from_json(doc["mirror"], strict=False)
        last = record_seq(doc["last_seq"])
        own = [OwnConsumer.from_json(o) for o in doc.get("own") or []]
    except (ValueError, KeyError, TypeError, JetlinkError, RecursionError):
        return None
    out = cfg.copy()
    out.mirror = mirror
    return out, last, own


def _transfer_clamps(report: PromoteReport) -> list[PositionClamp]:
    return [PositionClamp(p.consumer, p.ack_floor, p.start_seq - 1, report.stream)
            for p in report.consumers if p.clamped and p.status != "exists"]


def _positions(site: Site, facts: OriginFacts, origin_js: Any, synced: Any
               ) -> tuple[list[Position], PositionsUsed]:
    if facts.reachable and origin_js is not None:
        try:
            infos = origin_js.consumers(facts.stream)
        except JetlinkError as err:
            infos = None
            note = f"the origin's consumers could not be read ({one_line(err)})"
        else:
            found = [Position.of_info(i) for i in infos if is_durable(i.config.to_json())]
            return found, PositionsUsed("origin")
    else:
        note = ""
    if synced is not None and synced.positions:
        oldest = min(p.synced_ns or 0 for p in synced.positions)
        return list(synced.positions), PositionsUsed(
            "synced", oldest, max(site.now_ns() - oldest, 0), note)
    if synced is not None:  # synced, and the origin had no durable consumer then
        return [], PositionsUsed("synced", synced.synced_ns,
                                 max(site.now_ns() - (synced.synced_ns or 0), 0), note)
    return [], PositionsUsed(
        "none", note=note or "the origin does not answer and no consumer positions were "
        "synced for this mirror (jetlink positions sync): no consumer was placed")


def count_pending(js: Any, stream: str, start: int, start_time: str | None,
                  filters: Iterable[str]) -> int:
    """Messages of ``stream`` from ``start`` (or ``start_time``) matching ``filters``, counted
    by a short-lived consumer the server deletes on its own (num_pending)."""
    doc: dict[str, Any] = {"ack_policy": "none", "mem_storage": True,
                           "inactive_threshold": 10_000_000_000}
    if start_time:
        doc.update(deliver_policy="by_start_time", opt_start_time=start_time)
    else:
        doc.update(deliver_policy="by_start_sequence", opt_start_seq=max(start, 1))
    pats = [f for f in filters if f]
    if len(pats) == 1:
        doc["filter_subject"] = pats[0]
    elif pats:
        doc["filter_subjects"] = pats
    info = js.add_consumer(stream, ConsumerConfig.from_json(doc))
    try:
        return int(info.num_pending)
    finally:
        try:
            js.delete_consumer(stream, info.name)
        except JetlinkError:
            pass


# --- KV -----------------------------------------------------------------------------------------
def kv_mirror_stream(js: Any, bucket: str) -> tuple[str, str]:
    """(the mirror stream, its origin bucket) that ``kv promote|failover BUCKET`` promotes:
    ``KV_BUCKET`` (nats.go's name for a mirror bucket), else the stream ``BUCKET`` (a KV
    mirror jetlink made before that naming). It must be named
    ``KV_<origin bucket>``: its keys are stored under the origin's subjects
    (``$KV.<origin>.<key>``), so only as that bucket can they be read and written after
    the promotion. A stream promoted by jetlink before (a re-run) is found the same way."""

    names = set(js.stream_names())
    stream = f"KV_{bucket}" if f"KV_{bucket}" in names else bucket
    if stream not in names:
        from ..kv import bucket_not_found

        raise bucket_not_found(bucket, names)
    cfg = js.stream_info(stream).config
    mirror = cfg.mirror
    if mirror is None:
        was = _was_mirror(cfg)
        mirror = was[0].mirror if was is not None else None
    from ..config.kvnames import bucket_of_stream, mirror_name_problem

    origin = bucket_of_stream(mirror.name) if mirror is not None else None
    if origin is None:
        raise JetlinkError(f"bucket {bucket} is not a KV mirror (stream {stream} mirrors no "
                           "bucket)", field="bucket")

    problem = mirror_name_problem(stream, origin)
    if problem:
        raise JetlinkError(_renamed_refusal(problem, origin), field="bucket")
    return stream, origin


def _renamed_refusal(problem: str, origin: str) -> str:
    """The refusal of a KV mirror under another name than its origin bucket, by the kv and
    the stream verbs alike: why, and which mirror can be failed over."""
    return (f"{problem}: neither kv nor stream promote / failover takes it; a mirror bucket "
            f"named {origin} can be (jetlink kv add {origin} --mirror {origin} ...)")


def bucket_as_stream(stream: str, origin: str, failover: bool) -> None:
    """A KV mirror bucket's stream (``KV_<bucket>`` mirroring ``KV_<origin>``) promoted by a
    stream verb is refused: as a plain stream it would take its origin's subjects without
    the bucket's settings (direct gets), and a bucket of another name than its origin would
    read and write none of its keys; the KV verb makes it a bucket, or says why not
    (:func:`kv_mirror_stream`)."""
    from ..config.kvnames import bucket_of_stream, mirror_name_problem

    mine, theirs = bucket_of_stream(stream), bucket_of_stream(origin)
    if mine is None or theirs is None:
        return
    problem = mirror_name_problem(stream, theirs)
    if problem:  # the KV verb refuses it too: the reason, not a pointer to that verb
        raise JetlinkError(_renamed_refusal(problem, theirs), field="stream")
    verb = "failover" if failover else "promote"
    raise JetlinkError(f"stream {stream} is the stream of KV bucket {mine}, a mirror of bucket "
                       f"{theirs}: {'fail it over' if failover else 'promote it'} as "
                       f"a bucket (jetlink kv {verb} {mine})", field="stream")


def kv_adjust(cfg: StreamConfig) -> None:
    """A promoted KV mirror as a bucket: direct gets answered by itself (``deny_purge`` stays
    as the mirror had it: the server cannot cancel it, so ``kv purge`` is refused there)."""
    cfg.allow_direct = True


def require_clusters(dd: Any, infos: Sequence[Any], clusters: Sequence[str] | None) -> None:
    """Each cluster named (``--cluster``) is one of the data directory's ``infos``: else
    its open's error (``cluster eats not found``, with the closest name), never a side
    silently left out."""
    known = {i.name for i in infos}
    for name in clusters or ():
        if name not in known:
            dd.open(name, create_local=False)


def plural(n: int, word: str) -> str:
    """``1 message``, ``2 messages``."""
    return f"{n} {word}{'' if n == 1 else 's'}"
