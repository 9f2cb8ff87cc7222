"""Which streams and consumers a query finds (natscli's ``stream find`` and ``consumer
find``): jsm.go's ``QueryStreams`` and ``QueryConsumers`` rules, applied to the StreamInfo
and ConsumerInfo documents either engine answers.

Streams: every criterion given must hold (each filters what the one before left), in jsm.go's order;
``invert`` turns each one given around ("before becomes after, with becomes without"):

| criterion | a stream is found when (inverted: when not, with the bounds as jsm.go has them) |
|---|---|
| ``created_ns`` | it was created at least that long ago (inverted: at most) |
| ``idle_ns`` | its last message is more than that long ago (an empty stream is idle) |
| ``empty`` | it holds no message (inverted: it holds one or more) |
| ``consumers`` | it has at most that many consumers (inverted: at least) |
| ``cluster`` | its cluster's name matches the regular expression (searched, as Go's MatchString) |
| ``subject`` | one of its subjects is within the subject (core.subjects ``is_subset``) |
| ``server`` | its leader or one of its replicas matches the regular expression |
| ``replicas`` | it has at most that many replicas (inverted: at least) |
| ``sourced`` / ``mirrored`` | it has sources / a mirror |
| ``leader`` | its leader is that server (a stream without cluster information is never found) |
| ``api_level`` | the API level it needs (``_nats.req.level``, else 0) is at least that |

Inverted, ``subject`` finds a stream with one subject not within it (none: never found).

Consumers, in jsm.go's order (``pull`` and ``push`` together are refused):

| criterion | a consumer is found when (inverted: when not; the bounds as jsm.go has them) |
|---|---|
| ``pull`` / ``push`` | it has no / a deliver subject |
| ``bound`` | a push consumer is bound or pulls are waiting |
| ``pinned`` | (pinned_client consumers only) a client is pinned in every priority group |
| ``ack_pending``, ``waiting``, ``pending`` | it has some, fewer than that (inverted: more) |
| ``created_ns`` | it was created at least that long ago (inverted: less) |
| ``delivered_ns`` | it delivered within that period (inverted: longer ago) |
| ``replicas`` | its ``num_replicas`` (0: the stream's) is at most that (inverted: at least) |
| ``leader`` / ``api_level`` | as for streams |

A consumer with none of the counted ones, or that never delivered, is never found by those
criteria, inverted or not. ``delivered_ns`` is natscli's ``consumer find --idle``: jsm.go
finds the consumers that *did* deliver within the period, though natscli's help says "no
new deliveries"; the code's rule is kept. jsm.go's ``--expression`` (the expr language
over the info) has no counterpart here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .clock import parse_rfc3339_nano
from .config.validate import REQUIRED_LEVEL_KEY
from .errors import JetlinkError, UsageError
from .subjects import is_subset


@dataclass(frozen=True)
class StreamQuery:
    """The criteria of a query; None (or 0, False) leaves one out, as jsm.go's options do."""

    created_ns: int | None = None
    idle_ns: int | None = None
    empty: bool = False
    consumers: int | None = None
    cluster: re.Pattern[str] | None = None
    subject: str | None = None
    server: re.Pattern[str] | None = None
    replicas: int = 0
    sourced: bool = False
    mirrored: bool = False
    leader: str | None = None
    api_level: int = 0
    invert: bool = False


def pattern(value: str, *, field: str) -> re.Pattern[str] | None:
    """A regular expression given for ``field`` (an empty one leaves the criterion out, as
    jsm.go's ``StreamQueryServerName("")``); UsageError naming the field and the value."""
    if value == "":
        return None
    try:
        return re.compile(value)
    except re.error as exc:
        raise UsageError(f"{field} {value!r} is not a regular expression: {exc}",
                         field=field) from None


def _ns(text: Any) -> int:
    try:
        return parse_rfc3339_nano(str(text)) if text else 0
    except ValueError:
        return 0


def _api_level(cfg: dict[str, Any], what: str = "stream") -> int:
    raw = (cfg.get("metadata") or {}).get(REQUIRED_LEVEL_KEY, "")
    if raw == "":
        return 0
    try:
        return int(raw)
    except ValueError:  # jsm.go matchApiLevel's error
        raise JetlinkError(f"invalid {REQUIRED_LEVEL_KEY} metadata value {raw!r} of {what} "
                         f"{cfg.get('name') or cfg.get('durable_name') or ''!r}: not an "
                         "integer",
                         field=REQUIRED_LEVEL_KEY) from None


def _cluster(info: dict[str, Any]) -> dict[str, Any] | None:
    c = info.get("cluster")
    return c if isinstance(c, dict) else None


@dataclass(frozen=True)
class ConsumerQuery:
    """The criteria of a consumer query; None (or 0, False) leaves one out."""

    pull: bool = False
    push: bool = False
    bound: bool = False
    pinned: bool = False
    ack_pending: int = 0
    waiting: int = 0
    pending: int = 0
    created_ns: int | None = None
    delivered_ns: int | None = None
    replicas: int = 0
    leader: str | None = None
    api_level: int = 0
    invert: bool = False

    def __post_init__(self) -> None:
        if self.pull and self.push:  # jsm.go QueryConsumers' own check
            raise UsageError("cannot match pull and push concurrently", field="--pull")


def _leader_and_level(q: StreamQuery | ConsumerQuery, info: dict[str, Any],
                      cfg: dict[str, Any], what: str) -> bool:
    """jsm.go's last two matchers, the same for streams and consumers: the leader (no
    cluster information: never found) and the API level needed."""
    cluster = _cluster(info)
    if q.leader is not None and (cluster is None or (
            cluster.get("leader", "") == q.leader) == q.invert):
        return False
    if q.api_level > 0:
        need = _api_level(cfg, what)
        if not (need < q.api_level if q.invert else need >= q.api_level):
            return False
    return True


def _fewer(value: int, bound: int, invert: bool) -> bool:
    """jsm.go's ack-pending / waiting / pending rule: some, and fewer (inverted: more)."""
    return value > 0 and (value > bound if invert else value < bound)


def _consumer_found(q: ConsumerQuery, info: dict[str, Any], now_ns: int) -> bool:
    cfg = info.get("config") or {}

    def holds(yes: bool) -> bool:
        return yes != q.invert

    push = bool(cfg.get("deliver_subject"))
    if (q.pull and not holds(not push)) or (q.push and not holds(push)):
        return False
    if q.bound and not holds(bool(info.get("push_bound")) or int(info.get("num_waiting", 0)) > 0):
        return False
    if q.pinned:
        if cfg.get("priority_policy") != "pinned_client":
            return False
        pinned = sum(1 for g in info.get("priority_groups") or [] if g.get("pinned_client_id"))
        if not holds(pinned == len(cfg.get("priority_groups") or [])):
            return False
    for bound, key in ((q.ack_pending, "num_ack_pending"), (q.waiting, "num_waiting"),
                       (q.pending, "num_pending")):
        if bound > 0 and not _fewer(int(info.get(key, 0)), bound, q.invert):
            return False
    if q.created_ns is not None:
        created = _ns(info.get("created"))
        age = now_ns - created
        if not created or not (age < q.created_ns if q.invert else age >= q.created_ns):
            return False
    if q.delivered_ns is not None:
        last = _ns((info.get("delivered") or {}).get("last_active"))
        since = now_ns - last
        if not last or not (since > q.delivered_ns if q.invert else since < q.delivered_ns):
            return False
    if q.replicas:
        r = int(cfg.get("num_replicas") or 0)
        if not (r >= q.replicas if q.invert else r <= q.replicas):
            return False
    return _leader_and_level(q, info, cfg, "consumer")


def query_consumers(infos: Iterable[dict[str, Any]], q: ConsumerQuery, *,
                    now_ns: int) -> list[dict[str, Any]]:
    """The ConsumerInfo documents of ``infos`` the query finds, in their order."""
    return [i for i in infos if _consumer_found(q, i, now_ns)]


def _found(q: StreamQuery, info: dict[str, Any], now_ns: int) -> bool:
    cfg = info.get("config") or {}
    state = info.get("state") or {}
    cluster = _cluster(info)

    def holds(yes: bool) -> bool:
        return yes != q.invert

    if q.created_ns is not None:
        age = now_ns - _ns(info.get("created"))
        if not (age <= q.created_ns if q.invert else age >= q.created_ns):
            return False
    if q.idle_ns is not None and not holds(now_ns - _ns(state.get("last_ts")) > q.idle_ns):
        return False
    if q.empty and not holds(int(state.get("messages", 0)) == 0):
        return False
    if q.consumers is not None:
        n = int(state.get("consumer_count", 0))
        if not (n >= q.consumers if q.invert else n <= q.consumers):
            return False
    if q.cluster is not None and not holds(
            cluster is not None and bool(q.cluster.search(cluster.get("name") or ""))):
        return False
    if q.subject is not None:
        subset = [is_subset(s, q.subject) for s in cfg.get("subjects") or []]
        # jsm.go matchSubjectWildcard: one subject decides either way; none, never found
        if not ((subset and not all(subset)) if q.invert else any(subset)):
            return False
    if q.server is not None:
        names = [cluster.get("leader") or ""] + [
            r.get("name") or "" for r in cluster.get("replicas") or []] if cluster else []
        if not holds(any(q.server.search(n) for n in names)):
            return False
    if q.replicas:
        r = int(cfg.get("num_replicas") or 1)
        if not (r >= q.replicas if q.invert else r <= q.replicas):
            return False
    if q.sourced and not holds(bool(cfg.get("sources"))):
        return False
    if q.mirrored and not holds(cfg.get("mirror") is not None):
        return False
    return _leader_and_level(q, info, cfg, "stream")


def query_streams(infos: Iterable[dict[str, Any]], q: StreamQuery, *,
                  now_ns: int) -> list[dict[str, Any]]:
    """The StreamInfo documents of ``infos`` the query finds, in their order."""
    return [i for i in infos if _found(q, i, now_ns)]
