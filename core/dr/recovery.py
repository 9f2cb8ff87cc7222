"""The recovery point in seconds: how old the oldest message a failover now would lose is.

``dr check`` counts the messages a mirror has not copied (core/dr/readiness.py); this module
adds their age, per mirror and for the whole check (docs/dr.md, "Readiness check"):

- **origin**: the origin answers. Nothing behind is 0 s. Otherwise the first message the
  mirror has not copied is read at the origin: the first stored at or after the mirror's
  last sequence + 1 (a mirror's sequences are its origin's) that the mirror copies (its
  filter, or each source subject of its transforms), by one STREAM.MSG.GET with
  ``next_by_subj`` (nats-server jetstream_api.go ``jsMsgGetRequest``; the embedded engine's
  JetStream answers the same request), with the connection's request timeout; an empty
  mirror with ``opt_start_time`` starts at that time instead. Its age is now minus its
  timestamp (the origin's clock). Nothing stored there any more (removed by the origin's
  limits since it was counted): 0 s. A Kafka mirror topic (embedded engine) reads the first
  record of the source partition at or after the mirror partition's log end offset (a
  mirror topic's offsets are its source's), from the source's log start when retention
  removed it, for every partition behind: the oldest of them.
- **silence**: the origin does not answer (or the read above failed): the time since the
  mirror last heard from it (StreamInfo ``mirror.active``; a topic's newest partition fetch).
  Whatever the origin took since is lost and no older than that; when the mirror was already
  behind at that contact (its lag as last reported), older messages are lost too, so the
  figure is then a lower bound. A mirror that never heard from its origin has no figure
  (``seconds`` null).

Graded against ``rpo-warn`` / ``rpo-critical`` (durations, at or above; core/dr/readiness.py
``DrThresholds``), as ``seen`` is; no figure reaches a threshold that is set, as "Never seen"
does. The summary of the whole check carries the worst figure of all mirrors.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..durations import MS, SECOND
from ..errors import ApiError, JetlinkError
from ..monitor.lag import ago
from ..monitor.result import PerfDataItem

__all__ = ["ORIGIN", "PERF_NAME", "SILENCE", "WORST_MESSAGES", "WORST_SECONDS",
           "RecoveryPoint", "first_not_copied", "stream_recovery_point",
           "topic_recovery_point", "worst_recovery_point", "worst_summary"]

#: where the seconds come from (``recovery_point.seconds_from``)
ORIGIN = "origin"
SILENCE = "silence"
#: the perf item of a mirror's recovery point (``<namespace>_dr_recovery_point_seconds``)
PERF_NAME = "recovery_point_seconds"
_HELP = "Age in seconds of the oldest message a failover now would lose"
WORST_SECONDS = f"worst_{PERF_NAME}"
WORST_MESSAGES = "worst_recovery_point_messages"


@dataclass(frozen=True)
class RecoveryPoint:
    """A mirror's recovery point: the messages behind and the age of the oldest of them."""

    messages: int
    age_ns: int | None  # None: unknown (a silent origin never heard from)
    source: str  # ORIGIN | SILENCE
    oldest: dict[str, Any] | None = None  # the first message not copied, when read

    def to_json(self) -> dict[str, Any]:
        """``seconds`` (null: unknown), ``seconds_from`` and ``oldest`` for the facts'
        ``recovery_point``."""
        return {"seconds": None if self.age_ns is None else self.age_ns / SECOND,
                "seconds_from": self.source, "oldest": self.oldest}

    def message(self) -> str:
        """The check's message: ``Recovery point 12 messages, 3s``; from a silent origin
        ``Recovery point 3m0s since the origin was last heard (0 messages as last
        reported)``; ``Recovery point unknown: never heard from the origin``."""
        if self.age_ns is None:
            return "Recovery point unknown: never heard from the origin"
        n = f"{self.messages} message{'' if self.messages == 1 else 's'}"
        if self.source == ORIGIN:
            return f"Recovery point {n}, {ago(self.age_ns)}"
        return (f"Recovery point {ago(self.age_ns)} since the origin was last heard "
                f"({n} as last reported)")

    def perf_item(self, warn_ns: int, crit_ns: int) -> PerfDataItem | None:
        """The perf item ``recovery_point_seconds`` with its thresholds (nanoseconds, 0:
        none); None when the age is unknown."""
        if self.age_ns is None:
            return None
        return PerfDataItem(PERF_NAME, self.age_ns / SECOND, warn_ns / SECOND,
                            crit_ns / SECOND, unit="s", help=_HELP)


def _silence(messages: int, active_ns: int) -> RecoveryPoint:
    return RecoveryPoint(messages, active_ns if active_ns >= 0 else None, SILENCE)


# --- NATS mirror streams and KV mirror buckets --------------------------------------------------
def first_not_copied(origin_js: Any, cfg: Any, mirror_last: int) -> Any | None:
    """The origin's first stored message the mirror ``cfg`` has not copied (its last
    sequence ``mirror_last``), of the subjects it copies; None when none is stored."""
    from .rules import lag_start, mirror_filters

    assert cfg.mirror is not None
    stream = cfg.mirror.name
    filters = mirror_filters(cfg) or [">"]
    start, start_time = lag_start(cfg, mirror_last)
    found = []
    for subject in filters:
        if start_time is not None:  # an empty mirror that starts at a time
            from ..clock import parse_rfc3339_nano

            msgs = origin_js.messages(stream, start_time_ns=parse_rfc3339_nano(start_time),
                                      subject=None if subject == ">" else subject, chunk=1)
            try:
                msg = next(iter(msgs), None)
            finally:
                close = getattr(msgs, "close", None)
                if close is not None:
                    close()
        else:
            try:
                msg = origin_js.get_msg(stream, max(start, 1), next_by_subj=subject)
            except ApiError as err:
                if err.err_code != 10037:  # no message found
                    raise
                msg = None
        if msg is not None:
            found.append(msg)
    return min(found, key=lambda m: m.seq, default=None)


def stream_recovery_point(origin_js: Any, cfg: Any, mirror_last: int, messages: int,
                          reachable: bool, active_ns: int, now_ns: int) -> RecoveryPoint:
    """The recovery point of a NATS mirror (this module's opening): ``messages`` behind
    (counted at the origin when ``reachable``, else as last reported), ``origin_js`` the
    origin's JetStream API when it answers, ``active_ns`` since the mirror last heard from
    it (-1: never)."""
    if not reachable or origin_js is None:
        return _silence(messages, active_ns)
    if messages <= 0:
        return RecoveryPoint(0, 0, ORIGIN)
    from ..clock import format_rfc3339_nano

    try:
        msg = first_not_copied(origin_js, cfg, mirror_last)
    except JetlinkError:  # the origin stopped answering since it was counted
        return _silence(messages, active_ns)
    if msg is None:
        return RecoveryPoint(messages, 0, ORIGIN)
    return RecoveryPoint(messages, max(now_ns - msg.ts, 0), ORIGIN,
                         {"seq": msg.seq, "time": format_rfc3339_nano(msg.ts)})


# --- Kafka mirror topics (embedded engine) ------------------------------------------------------
def topic_recovery_point(m: Any, info: Any, reachable: bool, active_ns: int, now_ms: int
                         ) -> RecoveryPoint:
    """The recovery point of a mirror topic (``m``: core/kafka/mirrors.py ``Mirrors`` of its
    cluster, ``info`` its MirrorInfo): the oldest first record not copied over the
    partitions behind, read at the source when it answers. A partition the source topic
    added that the mirror has not yet (config sync adds it) is behind by every record it
    holds: a failover then would leave them all on the source."""
    from ..kafka.errors import KafkaError

    behind = [p for p in info.mirror_lags if p.lag > 0]
    messages = sum(p.lag for p in behind)
    if not reachable:
        return _silence(messages, active_ns)
    try:
        _li, src = m._source(info.link_name)
        if src is None:
            return _silence(messages, active_ns)
        parts = src.offsets(info.source_topic_name)
        mirrored = {p.partition for p in info.mirror_lags}
        added = [p for p in parts if p.partition not in mirrored and p.log_end > p.log_start]
        if not behind and not added:
            return RecoveryPoint(0, 0, ORIGIN)
        messages += sum(p.log_end - p.log_start for p in added)
        starts = {p.partition: p.log_start for p in parts}
        records = []
        for p in behind:
            offset = max(p.log_end, starts.get(p.partition, 0))
            records += src.fetch(info.source_topic_name, p.partition, offset, max_records=1)
        for p in added:
            records += src.fetch(info.source_topic_name, p.partition, p.log_start,
                                 max_records=1)
    except KafkaError:
        return _silence(messages, active_ns)
    if not records:
        return RecoveryPoint(messages, 0, ORIGIN)
    from ..clock import format_rfc3339_nano

    oldest = min(records, key=lambda r: (r.timestamp, r.partition))
    return RecoveryPoint(messages, max(now_ms - oldest.timestamp, 0) * MS, ORIGIN,
                         {"partition": oldest.partition, "offset": oldest.offset,
                          "time": format_rfc3339_nano(oldest.timestamp * MS)})


# --- the whole ----------------------------------------------------------------------------------
def worst_recovery_point(points: Iterable[dict[str, Any] | None]) -> list[PerfDataItem]:
    """The summary's perf items over every mirror's ``recovery_point`` facts (None: a name
    that is no mirror): the worst seconds (``worst_recovery_point_seconds``) and messages
    (``worst_recovery_point_messages``) of the mirrors with a figure; none when no mirror
    has one."""
    known = [p for p in points if p is not None and "messages" in p]
    out = []
    # (a mirror never heard from has no figure: its 0 is no count, left out, not a 0 a
    # dashboard would read as nothing at risk)
    figured = [p for p in known if p.get("seconds") is not None]
    if figured:
        out.append(PerfDataItem(WORST_SECONDS, max(p["seconds"] for p in figured), unit="s",
                                help="The worst mirror's recovery point in seconds"))
        out.append(PerfDataItem(WORST_MESSAGES, max(int(p["messages"]) for p in figured),
                                help="Messages behind of the mirror furthest behind"))
    return out


def worst_summary(items: Iterable[PerfDataItem], checked: bool = False) -> str:
    """The worst recovery point in a line (``worst recovery point: 5s, 2 messages``;
    ``worst recovery point: unknown`` when mirrors were ``checked`` but none has a
    figure), or "" when no mirror was checked."""
    found = {i.name: i.value for i in items}
    if WORST_MESSAGES not in found:
        return "worst recovery point: unknown" if checked else ""
    n = int(found[WORST_MESSAGES])
    age = found.get(WORST_SECONDS)
    shown = "unknown" if age is None else ago(round(age * SECOND))
    return f"worst recovery point: {shown}, {n} message{'' if n == 1 else 's'}"
