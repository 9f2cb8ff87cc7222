"""``server check consumer``: the health of one consumer, as natscli checks it (jsm.go
``CheckConsumerInfoHealth``), over the JetStream API (core/api.py) of either backend.

Perf data first (ack_pending, pull_waiting, pending, redelivered, and the seconds since the
last delivery and the last ack when there was one), then in natscli's order, each critical at
or above its threshold and skipped when the threshold is 0 or less: outstanding acks
(``--outstanding-ack-critical``), waiting pulls (``--waiting-critical``), unprocessed
messages, i.e. the consumer's num_pending (``--unprocessed-critical``), redeliveries
(``--redelivery-critical``), time since the last delivery (``--last-delivery-critical``) and
since the last ack (``--last-ack-critical``), critical too when there was none; ``--pinned``
asks for the pinned_client priority policy with a pinned client in every group.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..durations import SECOND, format_duration
from ..errors import JetlinkError
from .result import PerfDataItem, Result, invalid_name, reason
from .thresholds import ConsumerThresholds, ThresholdError

if TYPE_CHECKING:  # pragma: no cover
    from ..api import ConsumerInfoAPI, JetStreamAPI

__all__ = ["check_consumer", "go_time"]


def go_time(ns: int) -> str:
    """A UTC time as Go prints a ``time.Time`` (``2026-01-01 00:00:00.5 +0000 UTC``)."""
    secs, frac = divmod(ns, SECOND)
    text = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(secs))
    if frac:
        text += "." + f"{frac:09d}".rstrip("0")
    return text + " +0000 UTC"


def check_consumer(open_js: Callable[[], JetStreamAPI], stream: str, consumer: str,
                   flags: Mapping[str, Any], clock: Callable[[], int]) -> Result:
    """The consumer check of ``consumer`` on ``stream``, its ages at ``clock()`` read once
    the consumer's info has come (jsm.go's ``time.Since`` after the load: the time taken
    connecting never shortens them); ``flags``: :class:`ConsumerThresholds` field -> the
    flag's value, None when not given (the consumer's metadata fills those in)."""
    result = Result(name=f"{stream}_{consumer}", check="consumer")
    if not stream or not consumer:
        result.critical(f"{'stream' if not stream else 'consumer'} name is required")
        return result
    bad = invalid_name(stream, "stream") or invalid_name(consumer, "consumer")
    if bad:
        result.critical(f"could not load info: {bad}")
        return result
    try:
        info = open_js().consumer_info(stream, consumer)
    except JetlinkError as err:
        if not result.missing_target(err, "could not load info"):
            result.critical(f"could not load info: {reason(err)}")
        return result
    now_ns = clock()
    try:
        t = ConsumerThresholds.resolve(flags, info.config.metadata)
    except ThresholdError as err:
        result.critical(f"could not configure based on metadata: {err}")
        return result
    delivered, acked = info.delivered.last_active, info.ack_floor.last_active
    result.pd(
        PerfDataItem("ack_pending", info.num_ack_pending, crit=t.outstanding_ack_critical,
                     help="The number of messages waiting to be Acknowledged"),
        PerfDataItem("pull_waiting", info.num_waiting, crit=t.waiting_critical,
                     help="The number of waiting Pull requests"),
        PerfDataItem("pending", info.num_pending, crit=t.unprocessed_critical,
                     help="The number of messages that have not yet been consumed"),
        PerfDataItem("redelivered", info.num_redelivered, crit=t.redelivery_critical,
                     help="The number of messages currently being redelivered"))
    if delivered:
        result.pd(PerfDataItem("last_delivery", (now_ns - delivered) / SECOND, unit="s",
                               crit=t.last_delivery_critical / SECOND,
                               help="Seconds since the last message was delivered"))
    if acked:
        result.pd(PerfDataItem("last_ack", (now_ns - acked) / SECOND, unit="s",
                               crit=t.last_ack_critical / SECOND,
                               help="Seconds since the last message was acknowledged"))
    _at_most(result, t.outstanding_ack_critical, info.num_ack_pending, "Ack Pending")
    _at_most(result, t.waiting_critical, info.num_waiting, "Waiting Pulls")
    _at_most(result, t.unprocessed_critical, info.num_pending, "Unprocessed Messages")
    _at_most(result, t.redelivery_critical, info.num_redelivered, "Redelivered")
    _since(result, t.last_delivery_critical, delivered, now_ns, "No deliveries", "Last delivery")
    _since(result, t.last_ack_critical, acked, now_ns, "No acks", "Last ack")
    _pinned(info, result, t.pinned)
    return result


def _at_most(result: Result, crit: int, value: int, label: str) -> None:
    if crit <= 0:
        return
    if value >= crit:
        result.critical(f"{label}: {value}")
    else:
        result.ok(f"{label}: {value}")


def _since(result: Result, crit: int, last: int, now_ns: int, never: str, label: str) -> None:
    if crit <= 0:
        return
    if not last:
        result.critical(never)
    elif now_ns - last >= crit:
        result.critical(f"{label} {format_duration(now_ns - last)} ago")
    else:
        result.ok(f"{label} {go_time(last)}")


def _pinned(info: ConsumerInfoAPI, result: Result, required: bool) -> None:
    groups = info.to_json().get("priority_groups") or []
    pinned = sum(1 for g in groups if g.get("pinned_client_id"))
    cfg = info.config
    if cfg.priority_policy == "pinned_client":
        result.pd(PerfDataItem("pinned_groups", pinned,
                               help="The number of consumers groups with pinned clients"),
                  PerfDataItem("groups", len(cfg.priority_groups),
                               help="The total number of consumers groups"))
    if not required:
        return
    if not groups or not cfg.priority_groups or cfg.priority_policy != "pinned_client":
        result.critical("Not pinned client priority mode")
    elif pinned != len(cfg.priority_groups):
        result.critical(f"{pinned} / {len(cfg.priority_groups)} pinned clients")
    else:
        result.ok(f"{pinned} pinned clients")
