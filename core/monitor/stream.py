"""``server check stream``: the health of one stream, as natscli checks it (jsm.go
``CheckStreamInfoHealth``), over the JetStream API (core/api.py) of either backend.

In natscli's order:

- cluster (``--peer-expect``, ``--peer-lag-critical``, ``--peer-seen-critical``): only when
  the stream is clustered or peers are expected. A stream of one replica is "not clustered";
  the leader and its replicas are counted and each replica's lag (more than) and last-seen
  (more than) are checked; offline replicas are critical. The embedded engine keeps one copy
  of a stream (it refuses more than one replica) and its StreamInfo names no peers: there
  ``--peer-expect`` is always "Stream is not clustered", as on a single nats-server;
- messages (``--msgs-warn``, ``--msgs-critical``): critical / warning when the stream holds
  that many messages or fewer;
- subjects (``--subjects-warn``, ``--subjects-critical``): at or above the thresholds when
  warn < critical, at or below them otherwise (natscli's inversion; with only the critical
  threshold set the warning one is 0, so any count reaches it);
- sources: their count against ``--min-sources`` / ``--max-sources`` (critical outside);
  with ``--lag-critical`` or ``--seen-critical``, how many are lagged (lag at or above) or
  inactive (not seen for that long or more); a source whose lag is stale (core/monitor/lag.py)
  is named with it in the lagged / current message (``1 sources current (A Lag 0 (last
  reported 3m0s ago))``);
- mirror (with ``--lag-critical`` or ``--seen-critical``, on a stream without sources): not
  a mirror, a mirror without state, its lag and how long since it was last active. A lag
  last reported 10 s ago or more (core/monitor/lag.py) keeps natscli's status but is marked
  in the message (``Mirror ORDERS: Lag 0 (last reported 3m0s ago)``) and in JSON (the lag
  perf item's ``"stale": true``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..durations import SECOND, format_duration
from ..errors import JetlinkError
from .lag import lag_reading
from .result import PerfDataItem, Result, invalid_name, reason
from .thresholds import StreamThresholds, ThresholdError

if TYPE_CHECKING:  # pragma: no cover
    from ..api import JetStreamAPI, StreamInfoAPI

__all__ = ["check_stream"]


def check_stream(open_js: Callable[[], JetStreamAPI], stream: str,
                 flags: Mapping[str, Any]) -> Result:
    """The stream check of ``stream``; ``flags``: :class:`StreamThresholds` field -> the
    flag's value, None when not given (the stream's metadata fills those in).
    ``open_js`` gives the JetStream API: what it raises (an unreachable server), and a
    stream that does not load, are critical."""
    result = Result(name=stream, check="stream")
    if not stream:
        result.critical("stream name is required")
        return result
    bad = invalid_name(stream, "stream")
    if bad:
        result.critical(f"could not load info: {bad}")
        return result
    try:
        info = open_js().stream_info(stream)
    except JetlinkError as err:
        if not result.missing_target(err, "could not load info"):
            result.critical(f"could not load info: {reason(err)}")
        return result
    try:
        t = StreamThresholds.resolve(flags, info.config.metadata)
    except ThresholdError as err:
        result.critical(f"could not configure based on metadata: {err}")
        return result
    _cluster(info, result, t)
    _messages(info, result, t)
    _subjects(info, result, t)
    _sources(info, result, t)
    _mirror(info, result, t)
    return result


def _cluster(info: StreamInfoAPI, result: Result, t: StreamThresholds) -> None:
    cluster = info.to_json().get("cluster")
    clustered = bool(cluster) and info.config.num_replicas > 1
    if not clustered and t.peer_expect <= 0:
        return
    if not clustered:
        result.critical("Stream is not clustered")
        return
    assert cluster is not None
    if not cluster.get("leader"):
        result.critical("No leader")
        return
    replicas = cluster.get("replicas") or []
    peers = len(replicas) + 1
    if peers != t.peer_expect:
        result.critical(f"Expected {t.peer_expect} replicas got {peers}")
        return
    result.ok(f"{peers} peers")
    lagged = sum(1 for r in replicas
                 if t.peer_lag_critical > 0 and int(r.get("lag", 0)) > t.peer_lag_critical)
    inactive = sum(1 for r in replicas
                   if t.peer_seen_critical > 0 and int(r.get("active", 0)) > t.peer_seen_critical)
    offline = sum(1 for r in replicas if r.get("offline"))
    if offline:
        result.critical(f"{offline} replicas offline")
    if t.peer_lag_critical > 0:
        if lagged:
            result.critical(f"{lagged} replicas lagged")
        else:
            result.ok("replicas are current")
    if t.peer_seen_critical > 0:
        if inactive:
            result.critical(f"{inactive} replicas inactive")
        else:
            result.ok("replicas are active")


def _messages(info: StreamInfoAPI, result: Result, t: StreamThresholds) -> None:
    if t.msgs_critical <= 0 and t.msgs_warn <= 0:
        return
    msgs = info.state.messages
    result.pd(PerfDataItem("messages", msgs, t.msgs_warn, t.msgs_critical,
                           help="Messages stored in the stream"))
    if t.msgs_critical > 0 and msgs <= t.msgs_critical:
        result.critical(f"{msgs} messages")
    elif t.msgs_warn > 0 and msgs <= t.msgs_warn:
        result.warn(f"{msgs} messages")
    else:
        result.ok(f"{msgs} messages")


def _subjects(info: StreamInfoAPI, result: Result, t: StreamThresholds) -> None:
    warn, crit = t.subjects_warn, t.subjects_critical
    if warn <= 0 and crit <= 0:
        return
    count = info.state.num_subjects
    result.pd(PerfDataItem("subjects", count, warn, crit,
                           help="Number of subjects stored in the stream"))
    rising = warn < crit
    if (rising and count >= crit) or (not rising and count <= crit):
        result.critical(f"{count} subjects")
    elif (rising and count >= warn) or (not rising and count <= warn):
        result.warn(f"{count} subjects")
    else:
        result.ok(f"{count} subjects")


def _sources(info: StreamInfoAPI, result: Result, t: StreamThresholds) -> None:
    sources = info.sources
    count = len(sources)
    result.pd(PerfDataItem("sources", count, t.min_sources, t.max_sources,
                           help="Number of sources being consumed by this stream"))
    if (t.min_sources > 0 and count < t.min_sources) or (
            t.max_sources > 0 and count > t.max_sources):
        result.critical(f"{count} sources")
    else:
        result.ok(f"{count} sources")
    if t.lag_critical <= 0 and t.seen_critical <= 0:
        return
    lagged = sum(1 for s in sources
                 if t.lag_critical > 0 and int(s.get("lag", 0)) >= t.lag_critical)
    inactive = sum(1 for s in sources
                   if t.seen_critical > 0 and int(s.get("active", 0)) >= t.seen_critical)
    # the sources whose lag is as last reported long ago (core/monitor/lag.py): named, so
    # "current" is never read as a current lag
    stale = [f"{s.get('name', '')} Lag {r.shown()}"
             for s in sources for r in [lag_reading(s)] if r.stale]
    result.pd(PerfDataItem("sources_lagged", lagged, help="Number of sources that are behind "
                           "more than the configured threshold", stale=bool(stale)),
              PerfDataItem("sources_inactive", inactive,
                           help="Number of sources that are inactive"))
    marked = f" ({', '.join(stale)})" if stale else ""
    if lagged:
        result.critical(f"{lagged} sources are lagged{marked}")
    else:
        result.ok(f"{count} sources current{marked}")
    if inactive:
        result.critical(f"{inactive} sources are inactive")
    else:
        result.ok(f"{count} sources active")


def _mirror(info: StreamInfoAPI, result: Result, t: StreamThresholds) -> None:
    if (t.lag_critical <= 0 and t.seen_critical <= 0) or not info.config.name or info.sources:
        return
    mirror, state = info.config.mirror, info.mirror
    if mirror is None:
        result.critical("not mirrored")
        return
    if state is None:
        result.critical("invalid state")
        return
    lag, active = int(state.get("lag", 0)), int(state.get("active", 0))
    reading = lag_reading(state)
    result.pd(PerfDataItem("lag", lag, crit=t.lag_critical,
                           help="Number of operations this peer is behind its origin",
                           stale=reading.stale),
              PerfDataItem("active", active / SECOND, crit=t.seen_critical / SECOND, unit="s",
                           help="Indicates if this peer is active and catching up if lagged"))
    healthy = True
    if t.lag_critical > 0 and lag >= t.lag_critical:
        result.critical(f"Mirror Lag {reading.shown()}")
        healthy = False
    if t.seen_critical > 0 and active >= t.seen_critical:
        result.critical(f"Mirror Seen {format_duration(active)}")
        healthy = False
    if healthy:
        # natscli's status and message; a lag as last reported long ago says so
        # (core/monitor/lag.py), so an OK is never read as a current lag
        stale = f": Lag {reading.shown()}" if reading.stale else ""
        result.ok(f"Mirror {mirror.name}{stale}")
