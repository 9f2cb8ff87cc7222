"""Fencing a returned region: ``jetlink dr fence --from REGION`` and the split brain
``dr check`` reports.

After a failover the promoted stream P takes writes on the DR side. When the old origin O
comes back (its cluster up again, its domain's server restarted and the leafnode joined) it
still has its subjects: producers still writing to it store a tail nobody reads, and when P
took O's subjects (``stream failover`` without ``--subjects``; a KV bucket's ``$KV.<b>.>``
always) every publish across a leafnode is stored on both sides, a split brain (a bucket's
puts are kept by the side they are made on: two buckets take writes).

- **What a fence is.** O's subjects are replaced by one subject nobody publishes to,
  :func:`fence_subject` (``$JETLINK.fenced.<stream>``), and the subjects it had are recorded
  in its metadata, :data:`FENCE_KEY`. Producers on O's subjects then get "no responders"
  (no stream captures them) and nothing is stored. Its stored messages and consumers stay.
  Not an empty subject list: nats-server 2.15.1 answers a STREAM.UPDATE without subjects, or
  with ``[]``, by giving the stream its own name as its subject (stream.go checkStreamCfg),
  where a producer could still store. Not a seal either: a sealed stream can never be
  unsealed, and failback needs O back as the primary.
- **Undone only by failback.** ``stream|kv failback`` records O's config before it deletes O
  and makes it a mirror; :func:`unfenced_config` is that record with the recorded subjects
  back and the fence's key dropped, so ``--switch`` promotes O with its own subjects.
- **Where.** The objects are the failed-over objects on the side addressed (every cluster
  of the data directory, or ``--cluster``; a live server's JetStream domain): streams and KV
  buckets a promotion made (their ``jetlink.promoted_mirror`` record, core/dr/rules.py)
  whose old origin is in a region named by ``--from`` (its cluster, or JetStream domain),
  and the stopped mirror topics of links whose source cluster is that region: their old
  source topic is fenced by a DENY WRITE ACL for ``User:*`` in that cluster
  (core/kafka/acl_fence.py), when it enforces ACLs (refused, saying so, when it has no
  authorizer); the mirror topic's failback (truncate-and-restore, reverse) removes it.

One implementation over core/dr/rules.py's ``Site`` (``origin``, ``side``) and the Backend's
``either`` / ``site``: the embedded engine and live servers alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..config.stream import StreamConfig
from ..errors import JetlinkError, UsageError, did_you_mean
from ..monitor.result import reason
from .failback_record import under_way
from .fencing import FENCE_KEY, fence_subject, fenced_subjects, with_fence, without_fence
from .rules import _was_mirror, mirror_filters, one_line, require_clusters

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import Backend
    from ..clock import Clock

__all__ = ["FENCE_KEY", "FenceItem", "FencePlan", "FenceReport", "OriginReturn",
           "fence_subject", "fenced_subjects", "plan_fence", "region_names", "region_of",
           "returned_origin",
           "return_warning", "unfenced_config", "with_fence", "without_fence"]

#: what a fence does to a stream of the object, for the reports
FENCED, ALREADY, UNREACHABLE, REFUSED, FAILED, TO_FENCE = (
    "fenced", "already fenced", "unreachable", "refused", "failed", "to fence")
#: an old origin a failback's switch under way makes the primary again: never fenced
PRIMARY = "left as the primary"


def fence_hint(configs: Iterable[StreamConfig], subject: str) -> str | None:
    """Why no stream captures ``subject`` when a fence took it off a stream (or bucket):
    which one, and what gives its subjects back; None when no fenced stream had it."""
    from ..config.kvnames import bucket_of_stream
    from ..subjects import matches

    for cfg in configs:
        had = fenced_subjects(cfg)
        if had and any(matches(p, subject) for p in had):
            bucket = bucket_of_stream(cfg.name)
            what = f"bucket {bucket}" if bucket else f"stream {cfg.name}"
            return (f"{what} is fenced by jetlink dr fence: it failed over, and its subjects "
                    f"{', '.join(had)} are the other side's until a failback with --switch "
                    "makes it the primary again")
    return None


def mirror_hint(configs: Iterable[StreamConfig], subject: str) -> str | None:
    """Why no stream captures ``subject`` where mirrors are (the disaster-recovery side of
    streams): a mirror whose filters take the subject, named with its origin; else the
    mirrors without filters whose origins' subjects may take it (not known here, or known
    and taking it: a KV bucket's ``$KV.<bucket>.>``, an origin among ``configs``), as the
    places a publish may have meant; None when there is no such mirror here."""
    from ..config.kvnames import bucket_of_stream, kv_subjects
    from ..subjects import matches

    configs = list(configs)
    by_name = {c.name: c for c in configs}

    def origin(cfg: StreamConfig) -> str:
        m = cfg.mirror
        assert m is not None
        return m.name + (f" of {m.domain}" if m.domain else "")

    def may_take(cfg: StreamConfig) -> bool:
        """Whether the origin of ``cfg`` may capture ``subject``, as far as known here."""
        m = cfg.mirror
        assert m is not None
        bucket = bucket_of_stream(m.name)
        if bucket is not None:
            return matches(kv_subjects(bucket), subject)
        here = by_name.get(m.name) if not m.domain and m.external is None else None
        if here is not None and here.mirror is None:
            return any(matches(p, subject) for p in here.subjects)
        return True

    unfiltered = []
    for cfg in configs:
        if cfg.mirror is None:
            continue
        filters = mirror_filters(cfg)
        if not filters:
            if may_take(cfg):
                unfiltered.append(cfg)
        elif any(matches(f, subject) for f in filters):
            return (f"stream {cfg.name} here is a mirror of {origin(cfg)}, which takes no "
                    f"publishes: publish where {cfg.mirror.name} is; --core would store it "
                    "nowhere")
    if not unfiltered:
        return None
    shown = ", ".join(f"{c.name} of {origin(c)}" for c in unfiltered[:3]) + (
        f" and {len(unfiltered) - 3} more" if len(unfiltered) > 3 else "")
    return (f"the mirrors here take no publishes ({shown}): if the subject is one of their "
            "origins', publish where that origin is; --core would store it nowhere")


def unfenced_config(doc: dict[str, Any]) -> dict[str, Any]:
    """A stream config document with the fence undone: the recorded subjects back, the
    fence's key dropped (a document of a stream that is not fenced: as it is)."""
    cfg = StreamConfig.from_json(dict(doc), strict=False)
    subjects = fenced_subjects(cfg)
    if subjects is None:
        return doc
    out = dict(doc)
    out["subjects"] = subjects
    meta = {k: v for k, v in (doc.get("metadata") or {}).items() if k != FENCE_KEY}
    out["metadata"] = meta
    if not meta:
        out.pop("metadata")
    return out


# --- the objects ---------------------------------------------------------------------------
def region_of(label: str, src: Any) -> str:
    """The region of a mirror's or source's stream (a StreamSource) seen from the side
    ``label``: its cluster or JetStream domain (``label`` itself when it names none)."""
    if src.domain:
        return str(src.domain)
    if src.external is not None and src.external.api:
        return str(src.external.api)
    return label


def _region(site: Any, was: StreamConfig) -> str:
    """The region of a promoted stream's old origin: its cluster or JetStream domain."""
    assert was.mirror is not None
    return region_of(str(site.label), was.mirror)


def _verb(kind: str) -> str:
    return "kv" if kind == "kv" else "stream"


@dataclass
class _Promoted:
    """A failed-over stream or bucket on one side (or a mirror a failover is about to
    promote): its name as the verbs take it, its (old) origin and that origin's region."""

    kind: str  # "stream" | "kv"
    shown: str  # the stream, or the bucket
    stream: str
    site: Any
    was: StreamConfig  # its config with the mirror it was
    last: int
    region: str


def _promoted(site: Any, info: Any) -> _Promoted | None:
    """A stream a promotion made (its record), with its old origin in another region."""
    was = _was_mirror(info.config)
    if was is None:
        return None
    cfg, last, _own = was
    return _of_mirror(site, cfg, last)


def _of_mirror(site: Any, cfg: StreamConfig, last: int) -> _Promoted | None:
    """The object of the mirror config ``cfg`` (a mirror now, or the one a promoted stream
    was) of ``site``, ``last`` its last sequence; None when its origin is on the same side
    (no region fails over or returns)."""
    from ..kv import bucket_of_stream

    assert cfg.mirror is not None
    region = _region(site, cfg)
    if region == site.label:
        return None
    kind = "kv" if cfg.mirror.name.startswith("KV_") else "stream"
    shown = (bucket_of_stream(cfg.name) or cfg.name) if kind == "kv" else cfg.name
    return _Promoted(kind, shown, cfg.name, site, cfg, last, region)


def _origin_config(p: _Promoted) -> tuple[Any, Any]:
    """(the origin's facts, its StreamInfo or None when it does not answer)."""
    facts, ojs = p.site.origin(p.was, p.last, count_pending=False)
    if not facts.reachable or ojs is None:
        return facts, None
    return facts, ojs.stream_info(facts.stream)


# --- dr check: the old origin back -----------------------------------------------------------
@dataclass
class OriginReturn:
    """A failed-over object's old origin that answers again and is writable (not a mirror,
    not sealed): ``state`` ``split brain`` (it captures subjects the promoted stream
    captures too), ``unfenced`` (it takes writes nobody reads) or ``fenced``; with
    ``returned_origin(silent=True)`` also ``silent`` (it does not answer) or ``failback``
    (a failback deleted it and stopped before making it a mirror)."""

    kind: str
    shown: str  # the promoted stream / bucket
    origin: str
    where: str  # "domain west"
    region: str
    state: str
    subjects: list[str]  # the origin's subjects now
    promoted_subjects: list[str]
    overlap: list[str]
    recorded: list[str] | None = None  # a fenced origin's recorded subjects
    promoted: bool = False  # a half-done switch's old origin promoted already

    @property
    def fix(self) -> str:
        return (f"fence it: jetlink dr fence --from {self.region} (or jetlink "
                f"{_verb(self.kind)} failback {self.shown})")

    def message(self) -> str:
        what = f"{self.origin} in {self.where}"
        if self.state == "failback":
            return (f"Failback of {self.shown} under way: its old origin {what} was deleted "
                    f"and is not a mirror yet; run jetlink {_verb(self.kind)} failback "
                    f"{self.shown} again to finish it")
        if self.state == "switch":
            now = (f"its old origin {what} takes its writes again, {self.shown} not its "
                   "mirror yet" if self.promoted else
                   f"its old origin {what} still mirrors it, so nothing takes its writes")
            return (f"Failback switch of {self.shown} stopped half-way: {self.shown} is sealed "
                    f"here and {now}; run jetlink {_verb(self.kind)} failback {self.shown} "
                    "--switch again to finish it (never fence the old origin now: it is the "
                    "primary the switch makes)")
        if self.state == "split brain":
            # a bucket's puts do not cross: nats-server keeps $KV.> from crossing a leafnode
            # between JetStream domains (jetstream_api.go denyAllClientJs)
            both = ("a put on either side is kept by that side's bucket alone: two buckets "
                    "take writes, each missing the other's" if self.kind == "kv" else
                    "a publish there is stored on both sides")
            return (f"Split brain: the old origin {what} answers again and takes "
                    f"{', '.join(self.overlap)}, as {self.shown} does: {both}; {self.fix}")
        if self.state == "unfenced":
            return (f"Old origin {what} answers again unfenced, taking "
                    f"{', '.join(self.subjects)}: what producers still publish there is "
                    f"stored where nobody reads it; {self.fix}")
        return (f"Old origin {what} fenced (its subjects {', '.join(self.recorded or [])} "
                f"recorded; jetlink {_verb(self.kind)} failback {self.shown} --switch gives "
                "them back)")

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "origin": self.origin, "region": self.region,
                "subjects": self.subjects, "promoted_subjects": self.promoted_subjects,
                "overlap": self.overlap, "fenced_subjects": self.recorded}


def returned_origin(site: Any, info: Any, *, silent: bool = False) -> OriginReturn | None:
    """The old origin of the stream ``info`` of ``site`` when it answers again writable
    (:class:`OriginReturn`); None when ``info`` is no failed-over stream of another region,
    or its old origin does not answer (``silent``: then an OriginReturn of state
    ``silent``), or takes no writes (a mirror, sealed)."""
    from ..subjects import overlaps

    p = _promoted(site, info)
    if p is None:
        return None
    facts, oinfo = _origin_config(p)
    if oinfo is None and silent:
        state = "failback" if under_way(p.site.kv(), p.stream) else "silent"
        return OriginReturn(p.kind, p.shown, facts.stream, facts.where, p.region, state,
                            [], list(info.config.subjects), [])
    if oinfo is not None and info.config.sealed and under_way(p.site.kv(), p.stream):
        # a failback's switch stopped half-way: this side sealed (its subjects moved
        # aside), the old origin still its mirror (nothing takes the subjects) or promoted
        # (it takes them, this side not its mirror yet): the switch run again finishes it
        return OriginReturn(p.kind, p.shown, facts.stream, facts.where, p.region, "switch",
                            list(oinfo.config.subjects), list(info.config.subjects), [],
                            promoted=oinfo.config.mirror is None)
    if oinfo is None or oinfo.config.mirror is not None or oinfo.config.sealed:
        return None
    ocfg = oinfo.config
    mine = list(info.config.subjects)
    theirs = list(ocfg.subjects)
    recorded = fenced_subjects(ocfg)
    overlap = [s for s in theirs if any(overlaps(s, x) for x in mine)]
    state = "fenced" if recorded is not None else "split brain" if overlap else "unfenced"
    return OriginReturn(p.kind, p.shown, facts.stream, facts.where, p.region, state, theirs,
                        mine, overlap, recorded)


def partial_warning(promotion: Any, planned: bool = False) -> str | None:
    """What ``stream|kv promote|failover`` warns of when the mirror copied only part of its
    origin (a filter or subject transforms): the promoted stream holds none of the origin's
    other messages (a KV mirror made with --keys: none of its other keys), and failing
    back refuses such a mirror (core/dr/failback.py). None for a whole mirror, or a re-run
    (``planned``: a dry run's, "would hold")."""
    from ..config.kvnames import bucket_of_stream

    cfg = promotion.cfg
    if promotion.rerun or cfg.mirror is None:
        return None
    filters = [f for f in mirror_filters(cfg) if f and f != ">"]
    if not filters:
        return None
    holds = "would hold" if planned else "holds"
    origin = cfg.mirror.name
    bucket = bucket_of_stream(origin) if bucket_of_stream(cfg.name) else None
    if bucket is not None:  # a KV mirror (kv add --mirror --keys): said in keys
        prefix = f"$KV.{bucket}."
        keys = [f[len(prefix):] if f.startswith(prefix) else f for f in filters]
        what = (f"KV mirror {bucket_of_stream(cfg.name) or cfg.name} copied only the keys "
                f"{', '.join(keys)} of bucket {bucket}: the promoted bucket {holds} none of "
                "its other keys")
    else:
        what = (f"mirror {cfg.name} copied only {', '.join(filters)} of {origin}: the "
                f"promoted stream {holds} none of its other messages")
    return what + " (and failing back refuses a filtered mirror)"


def return_warning(promotion: Any, planned: bool = False) -> str | None:
    """What ``stream|kv failover`` warns of when the promoted stream takes subjects its old
    origin in another region captures (a stream without ``--subjects``: the origin's; a KV
    bucket: ``$KV.<bucket>.>`` always): the origin, once it answers again, captures them too
    until it is fenced (``planned``: a dry run's, "would take"). None otherwise (a re-run,
    a promote, other subjects)."""
    from ..config.kvnames import bucket_of_stream, kv_subjects
    from ..subjects import overlaps

    if not promotion.failover or promotion.rerun or promotion.facts.fenced:
        return None  # (a fenced origin takes no writes: nothing to split)
    facts = promotion.facts
    region = _region(promotion.site, promotion.cfg)
    theirs = facts.subjects
    bucket = bucket_of_stream(facts.stream)
    if theirs is None and bucket is not None:  # a bucket's stream captures its keys
        theirs = [kv_subjects(bucket)]
    if region == promotion.site.label or theirs is None:
        return None
    mine = promotion.subjects or []
    if not any(overlaps(s, x) for s in theirs for x in mine):
        return None
    takes = "would take" if planned else "takes"
    mine_bucket = bucket_of_stream(promotion.stream)
    shown, origin = ((f"bucket {mine_bucket}", f"origin bucket {bucket}")
                     if bucket is not None and mine_bucket is not None  # (as kv names them)
                     else (promotion.stream, f"origin {facts.stream}"))
    return (f"{shown} {takes} {', '.join(mine)}, the subjects of its "
            f"{origin} ({facts.where}): when that origin answers again it "
            "captures them too (a publish stored on both sides, or a tail nobody reads) "
            f"until it is fenced: jetlink dr fence --from {region}")


# --- dr fence ----------------------------------------------------------------------------------
@dataclass
class FenceItem:
    """One old origin of the region and what the fence does to it."""

    kind: str  # "stream" | "kv" | "topic"
    name: str  # the old origin: its stream, bucket, or topic
    region: str
    failed_over_to: str  # the object on the side addressed (NAME@SIDE)
    subjects_before: list[str] | None
    subjects_after: list[str] | None
    action: str  # FENCED | ALREADY | PRIMARY | UNREACHABLE | REFUSED | FAILED | TO_FENCE
    detail: str = ""
    stream: str = ""  # the origin's stream (a bucket's KV_<bucket>)
    _promoted: _Promoted | None = field(default=None, repr=False)
    _config: StreamConfig | None = field(default=None, repr=False)
    _cluster: Any = field(default=None, repr=False)  # a topic's: its cluster

    @property
    def ok(self) -> bool:
        return self.action in (FENCED, ALREADY, PRIMARY, TO_FENCE)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "region": self.region,
                "failed_over_to": self.failed_over_to,
                "subjects_before": self.subjects_before,
                "subjects_after": self.subjects_after, "action": self.action,
                "detail": self.detail}


@dataclass
class FenceReport:
    """``dr fence``'s outcome (``to_json``: docs/dr.md "When a region returns")."""

    regions: list[str]
    sides: list[str]
    items: list[FenceItem]
    dry_run: bool

    @property
    def not_fenced(self) -> list[FenceItem]:
        return [i for i in self.items if not i.ok]

    @property
    def nothing_to_do(self) -> bool:
        return bool(self.items) and all(i.action in (ALREADY, PRIMARY) for i in self.items)

    def to_json(self) -> dict[str, Any]:
        return {"regions": self.regions, "sides": self.sides, "dry_run": self.dry_run,
                "objects": [i.to_json() for i in self.items],
                "fenced": sum(1 for i in self.items if i.action == FENCED),
                "already_fenced": sum(1 for i in self.items if i.action == ALREADY),
                "not_fenced": [f"{i.name}@{i.region}" for i in self.not_fenced],
                "nothing_to_do": self.nothing_to_do,
                "complete": not self.dry_run and not self.not_fenced}


def _stream_item(p: _Promoted, side: str, switching: bool = False) -> FenceItem:
    """A failed-over stream's or bucket's old origin as it is now: to fence, already
    fenced (or taking no writes), or unreachable; ``switching``: its failback's switch is
    under way (the promoted stream sealed), which makes the old origin the primary again:
    never fenced then."""
    to = f"{p.shown}@{side}" if side else p.shown
    assert p.was.mirror is not None
    name = p.shown if p.kind == "kv" else p.was.mirror.name
    item = FenceItem(p.kind, name, p.region, to, None, None, UNREACHABLE,
                     stream=p.was.mirror.name, _promoted=p)
    try:
        facts, oinfo = _origin_config(p)
    except JetlinkError as err:
        item.detail = one_line(err)
        return item
    if switching and oinfo is not None:
        item.action, item.subjects_before = PRIMARY, list(oinfo.config.subjects)
        item.subjects_after = list(oinfo.config.subjects)
        item.detail = (f"the failback switch of {p.shown} is under way ({p.shown} sealed): "
                       f"it makes this origin the primary again; run jetlink "
                       f"{_verb(p.kind)} failback {p.shown} --switch again to finish it")
        return item
    if oinfo is None:
        if under_way(p.site.kv(), p.stream):
            # its stream deleted by a failback that stopped before making it a mirror
            item.action = ALREADY
            item.detail = (f"its stream is gone: the failback of {p.shown} is under way; "
                           f"run jetlink {_verb(p.kind)} failback {p.shown} again to finish "
                           "it")
            return item
        item.detail = when_it_answers(facts.error or f"{facts.where} does not answer",
                                       item.region)
        return item
    cfg = oinfo.config
    item.subjects_before = list(cfg.subjects)
    recorded = fenced_subjects(cfg)
    if recorded is not None:
        item.action, item.subjects_after = ALREADY, list(cfg.subjects)
        item.detail = f"its subjects {', '.join(recorded)} recorded"
    elif cfg.mirror is not None:
        item.action, item.subjects_after = ALREADY, list(cfg.subjects)
        item.detail = "a mirror now (failback under way): it takes no writes"
    elif cfg.sealed:
        item.action, item.subjects_after = ALREADY, list(cfg.subjects)
        item.detail = "sealed: it takes no writes"
    else:
        item.action, item.subjects_after = TO_FENCE, [fence_subject(cfg.name)]
        item._config = cfg
    return item


# what a fenced old origin does now
FENCED_DETAIL = "producers on its subjects get no responders; stored messages and consumers kept"


def _fence(item: FenceItem) -> None:
    """``item``'s origin fenced: its subjects replaced by :func:`fence_subject`, the ones it
    had recorded in :data:`FENCE_KEY` (one stream update)."""
    p, cfg = item._promoted, item._config
    assert p is not None and cfg is not None
    new = with_fence(cfg)
    try:
        _facts, ojs = p.site.origin(p.was, p.last, count_pending=False)
        if ojs is None:
            raise JetlinkError(_facts.error or "the origin does not answer")
        done = ojs.update_stream(new)
    except JetlinkError as err:
        item.action, item.detail = FAILED, one_line(err)
        return
    item.action, item.subjects_after = FENCED, list(done.config.subjects)
    item.detail = FENCED_DETAIL


def origin_item(site: Any, stream: str, side: str) -> FenceItem | None:
    """The origin of the mirror ``stream`` of ``site`` (the side ``side``) as it is now, as
    :func:`plan_fence` reads an old origin (to fence, fenced already, unreachable): what
    ``dr failover --fence`` fences before it promotes the mirror (:func:`fence_item`), so
    that the mirror can copy all its origin holds and no publish is stored on both sides;
    None when ``stream`` is no mirror of another region's stream."""
    info = site.js.stream_info(stream)
    if info.config.mirror is None:
        return None
    p = _of_mirror(site, info.config, int(info.state.last_seq))
    return None if p is None else _stream_item(p, side)


def unfence(item: FenceItem) -> str | None:
    """The fence of a mirror's origin made before the mirror's promotion (``dr failover
    --fence``) undone, when the promotion failed or the mirror is left out: its origin takes
    its writes again, as before the run (nothing else would take them). None when undone
    (or it was not fenced), else why not."""
    if item.kind == "topic" and item._cluster is None:
        return item.detail or f"cluster {item.region} does not answer"
    try:
        if item.kind == "topic":
            from ..kafka.acl_fence import unfence_topic

            unfence_topic(item._cluster, item.name)
            return None
        p = item._promoted
        assert p is not None
        _facts, ojs = p.site.origin(p.was, p.last, count_pending=False)
        if ojs is None:
            return _facts.error or "the origin does not answer"
        cfg = ojs.stream_info(item.stream).config
        if fenced_subjects(cfg) is not None:
            ojs.update_stream(without_fence(cfg))
    except JetlinkError as err:
        return one_line(err)
    return None


def fence_item(item: FenceItem) -> None:
    """``item`` (to fence) fenced: a stream's subjects replaced, a topic's DENY WRITE added;
    its action FENCED, or FAILED with why."""
    if item.kind == "topic":
        _fence_topic(item)
    else:
        _fence(item)


_TOPIC_REFUSED = (
    "cluster {region} has no authorizer: a topic is fenced by a DENY WRITE ACL, which only a "
    "cluster that enforces ACLs applies; jetlink cluster authorizer {region} --enable first "
    "(or stop the producers of {topic} yourself)")
_TOPIC_FENCE = "DENY WRITE for User:* (host *) on topic {topic}"


def topic_item(dd: Any, topic: str, region: str, to: str) -> FenceItem:
    """An old source topic of a failed-over mirror as it is now: to fence (a DENY WRITE
    ACL, core/kafka/acl_fence.py), already fenced, refused (no authorizer) or unreachable."""
    from ..kafka.acl_fence import is_fenced
    from ..kafka.acls import AclStore

    item = FenceItem("topic", topic, region, to, None, None, UNREACHABLE)
    if not dd.has_cluster(region):
        item.detail = f"cluster {region} does not exist"
        return item
    cl = dd.open(region, create_local=False)
    if cl.down:
        item.detail = when_it_answers(f"cluster {region} is down", region)
        return item
    item._cluster = cl
    if not AclStore(cl).settings().enabled:
        item.action, item.detail = REFUSED, _TOPIC_REFUSED.format(topic=topic, region=region)
    elif is_fenced(cl, topic):
        item.action, item.detail = ALREADY, _TOPIC_FENCE.format(topic=topic) + " there"
    else:
        item.action, item.detail = TO_FENCE, _TOPIC_FENCE.format(topic=topic)
    return item


def _fence_topic(item: FenceItem) -> None:
    """``item``'s old source topic fenced: the DENY WRITE ACL added (one transaction)."""
    from ..kafka.acl_fence import fence_topic

    try:
        made = fence_topic(item._cluster, item.name)
    except JetlinkError as err:
        item.action, item.detail = FAILED, one_line(err)
        return
    item.action = FENCED if made else ALREADY
    item.detail = fenced_detail(item) if made else \
        _TOPIC_FENCE.format(topic=item.name) + " there"


def fenced_detail(item: FenceItem) -> str:
    """What a fenced old origin does now, as a report says it of one fenced by this run."""
    if item.kind == "topic":
        return _TOPIC_FENCE.format(topic=item.name) + (
            ": producers get TOPIC_AUTHORIZATION_FAILED")
    return FENCED_DETAIL


def mirror_topics(dd: Any, cluster: str, clock: Clock) -> list[tuple[Any, str]]:
    """The mirror topics of ``cluster``'s links, each with its link's source cluster (the
    region it mirrors from)."""
    from ..kafka.mirrors import Mirrors

    m = Mirrors(dd, cluster, clock)
    sources: dict[str, str] = {}
    out = []
    for info in m.list():
        if info.link_name not in sources:
            sources[info.link_name] = m.links.get(info.link_name,
                                                  with_topics=False).source_cluster
        out.append((info, sources[info.link_name]))
    return out


def _topic_items(dd: Any, cluster: str, clock: Clock, regions: Sequence[str]
                 ) -> tuple[list[FenceItem], set[str]]:
    """The stopped (failed-over or promoted) mirror topics of ``cluster``'s links whose
    source cluster is one of ``regions``, each with its old source topic
    (:func:`topic_item`); and every link's source cluster."""
    from ..kafka import mirror_model as mm

    out = []
    found = mirror_topics(dd, cluster, clock)
    for info, region in found:
        if info.mirror_status != mm.STOPPED or region not in regions:
            continue
        out.append(topic_item(dd, info.source_topic_name, region,
                               f"{info.link_name}/{info.mirror_topic_name}@{cluster}"))
    return out, {region for _info, region in found}


class FencePlan:
    """The old origins of the regions, each read once (:func:`plan_fence`);
    :meth:`preview` is the dry run's report, :meth:`carry_out` fences."""

    def __init__(self, regions: list[str], sides: list[str], items: list[FenceItem]) -> None:
        self.regions, self.sides, self.items = regions, sides, items

    @property
    def to_fence(self) -> list[FenceItem]:
        return [i for i in self.items if i.action == TO_FENCE]

    def preview(self) -> FenceReport:
        return FenceReport(self.regions, self.sides, self.items, True)

    def carry_out(self, on_fenced: Callable[[Any], None] | None = None) -> FenceReport:
        """Fence every old origin of the plan, in order; ``on_fenced(item)`` after each
        (what an interrupted run says it fenced)."""
        for item in self.to_fence:
            fence_item(item)
            if on_fenced is not None:
                on_fenced(item)
        return FenceReport(self.regions, self.sides, self.items, False)


@dataclass
class Side:
    """A side a region's objects are looked for on: an embedded cluster (``cluster``) or
    the live server's JetStream domain (``cluster`` None), named ``label``."""

    cluster: str | None
    label: str
    links: bool = False  # it holds cluster links (mirror topics)
    nats: bool = True  # a NATS cluster (a Kafka one only has links)


def sides_of(backend: Backend, clusters: Sequence[str] | None, verb: str, *, step: bool,
             regions: Sequence[str] = ()) -> tuple[list[Side], list[str], Any]:
    """The sides addressed (embedded: every cluster of the data directory that is up, or
    those of ``clusters``; live: the server's domain), the regions known there (every
    cluster; the server's domain) and the data directory (None: live). ``step``: whether the
    command ends with a replication step (``verb`` copies or changes what mirrors read).

    A cluster whose database cannot be used is known as a region (the one that failed may
    well be damaged: ``regions``), but one that would be a side is refused (JetlinkError,
    nothing changed): its objects could be in the plan and cannot be read."""

    def data_dir(dd: Any) -> tuple[list[Side], list[str], Any]:
        backend.data_dir(verb, step=step)
        broken: list[tuple[str, JetlinkError]] = []
        infos = dd.clusters(create_local=False, broken=broken)
        for name, err in broken:
            if name not in regions and (clusters is None or name in clusters):
                raise JetlinkError(
                    f"{verb}: cluster {name} cannot be read, so the objects it holds cannot "
                    f"be planned ({reason(err)}); repair it ('jetlink cluster check {name} "
                    "--repair'), or name the clusters to plan with --cluster",
                    field="cluster")
        unread = {name for name, _err in broken}  # known: not "not found" either
        require_clusters(dd, infos, [c for c in clusters if c not in unread]
                         if clusters is not None else None)
        sides, down = [], []
        for i in infos:
            if clusters is not None and i.name not in clusters:
                continue
            c = dd.open(i.name, create_local=False)
            if c.down:
                down.append(i.name)
                continue  # a side that is down is a region, not where objects are taken
            sides.append(Side(i.name, i.name, "links" in c.table_names(), i.kind == "nats"))
        if clusters is not None and not sides and down:
            # the clusters that answer, but the region itself: it is not where mirrors are
            up = [i.name for i in infos if i.name not in down and i.name not in regions
                  and not dd.open(i.name, create_local=False).down]
            named = ", ".join(f"--cluster {d}" for d in down)
            these = f"cluster{'s' if len(down) > 1 else ''} {', '.join(down)}"
            ways = (f"address the cluster that holds the mirrors ({', '.join(up)} "
                    f"answer{'s' if len(up) == 1 else ''}), or leave --cluster out to plan "
                    "every cluster that answers") if up else (
                f"mark {'them' if len(down) > 1 else 'it'} up once "
                f"{'they answer' if len(down) > 1 else 'it answers'} (jetlink cluster up "
                f"{' '.join(down)}), or, if {these} failed, give it as --from and address "
                "the cluster that holds the mirrors with --cluster")
            raise UsageError(
                f"{named}: {these} {'are' if len(down) > 1 else 'is'} down: a side that is "
                f"down takes nothing over (it is a region); {ways}", field="cluster")
        return sides, [i.name for i in infos] + sorted(unread), dd

    def server(js: Any) -> tuple[list[Side], list[str], Any]:
        label = str(backend.site(None).label)
        return [Side(None, label)], [label] if label else [], None

    found: tuple[list[Side], list[str], Any] = backend.either(data_dir=data_dir, server=server)
    return found


def region_names(regions: Sequence[str]) -> list[str]:
    """The regions of ``--from`` (``dr fence``, ``dr watch``), each once; UsageError for an
    empty one."""
    wanted = list(dict.fromkeys(r.strip() for r in regions))
    for r in wanted:
        if not r:
            raise UsageError("--from: a region is a cluster (embedded engine) or a JetStream "
                             "domain (live server), not an empty name", field="from")
    return wanted


def refuse_side_addressed(wanted: Sequence[str], sides: Sequence[Side], refused: bool,
                          why: str) -> None:
    """UsageError (nothing changed) for a ``--from`` that names a side addressed, when
    ``refused`` (the sides were named with ``--cluster``, or a live server's domain); ``why``
    ends the sentence (what lives on the side, where the region is instead)."""
    labels = {s.label for s in sides}
    for r in wanted:
        if refused and r in labels:
            raise UsageError(f"--from {r}: that is the side addressed ({why}", field="from")


def refuse_unknown_region(r: str, seen: set[str], embedded: bool, live: str,
                          addressed: Sequence[str] = (), bare: bool = False) -> None:
    """UsageError (with a suggestion) for a ``--from`` no cluster of the data directory
    (``embedded``) or no JetStream domain ``live`` says is named ``r``. The sides
    ``addressed`` are never suggested: a region is where the origins are, not them.
    ``bare``: the server's side names no origin at all (said: the likely wrong -s)."""
    if r in seen:
        return
    if embedded:  # no cluster could be named so: the rule, not "no cluster is named"
        from ..store.datadir import validate_cluster_name

        try:
            validate_cluster_name(r, field="from")
        except UsageError as err:
            raise UsageError(f"--from: {err.description}", field="from") from None
    hint = did_you_mean(r, sorted(seen - set(addressed)))
    what = "cluster of the data directory" if embedded else f"JetStream domain {live}"
    if not embedded and bare:  # no origin at all (``bare``): likely the wrong server
        hint = ("the server holds no such object: is -s the server of the side that takes "
                "over (or --js-domain its domain)?")
    raise UsageError(f"--from {r}: no {what} is named {r}" + (f"; {hint}" if hint else ""),
                     field="from")


def plan_fence(backend: Backend, regions: Sequence[str], *,
               clusters: Sequence[str] | None = None, clock: Clock | None = None
               ) -> FencePlan:
    """Every old origin in ``regions`` of a failed-over object on the side addressed
    (``clusters``: on the embedded engine the clusters looked at, None every one), each read
    once. UsageError (nothing changed) for a region that is empty, unknown (with a
    suggestion, core/errors.py ``did_you_mean``) or the side addressed."""
    from ..clock import SystemClock

    clock = clock or SystemClock()
    wanted = region_names(regions)
    sides, known, dd = sides_of(backend, clusters, "dr fence", step=False,  # copies nothing
                                regions=wanted)
    chosen = clusters is not None or dd is None  # the sides were named (or the server's)
    refuse_side_addressed(wanted, sides, chosen,
                          "the failed-over objects live there); name the region that "
                          "failed, where the old origins are")
    addressed = [s.label for s in sides] if chosen else []
    sides = [s for s in sides if s.label not in wanted]
    items: list[FenceItem] = []
    seen: set[str] = set(known)
    for side in sides:
        if side.links and dd is not None and side.cluster is not None:
            found, sources = _topic_items(dd, side.cluster, clock, wanted)
            items += found
            seen.update(sources)
        if not side.nats:
            continue
        site = backend.site(side.cluster)
        for info in site.js.streams():
            if info.config.mirror is not None:  # a region its mirrors copy from
                seen.add(_region(site, info.config))
                continue
            p = _promoted(site, info)
            if p is None:
                continue
            seen.add(p.region)
            if p.region in wanted:
                # live: the server's JetStream domain names the side (none: the name alone)
                switching = info.config.sealed and under_way(site.kv(), info.config.name)
                items.append(_stream_item(p, side.label if side.cluster else
                                          str(site.label or ""), switching))
    for r in wanted:
        refuse_unknown_region(r, seen, dd is not None, "an origin of this server's mirrors or "
                              "failed-over streams is in", addressed, bare=seen <= set(known))
        if not any(i.region == r for i in items):
            where = ", ".join(s.label or "the server's domain" for s in sides) or "no side"
            raise UsageError(f"--from {r}: nothing failed over from {r} on {where} (no stream, "
                             "KV bucket or mirror topic there has its old origin in it): "
                             "nothing to fence", field="from")
    return FencePlan(wanted, [s.label for s in sides], items)


def when_it_answers(why: str, region: str) -> str:
    """An old origin that cannot be fenced now (``why``), and how it will be: the dry run's
    words and the run's alike (a region's plan, core/dr/region.py, says it too)."""
    return (f"{why}: fenced when it answers (jetlink dr fence --from {region}, or dr watch "
            "--fence-on-return)")
