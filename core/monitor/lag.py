"""When a mirror's or source's lag is stale: the one rule every check, ``dr check`` and the
dashboard use to mark it.

A mirror reports its lag as of its last contact with the origin: StreamInfo's ``lag`` beside
``active``, the nanoseconds since that contact (-1: never). nats-server hears from a healthy
origin at least once a second (stream.go ``sourceHealthHB``, the mirror consumer's
heartbeat) and calls a mirror that heard nothing for ``sourceHealthCheckInterval`` (10 s)
stalled (it re-creates its consumer, stream.go ``processMirrorMsgs``). The embedded engine
keeps the same ``active``: the time since the agreement's last replication step that read
the origin (core/replication.py ``_finish``); a ``down`` origin cluster is never read.

A lag figure is *stale* when:

- the origin is known not to answer: ``dr check`` asks it; and the mirror says so itself
  when its consumer on the origin could not be set up (its ``error`` with nats-server's
  ``JSMirrorConsumerSetupFailedErrF`` 10029, or ``JSSourceConsumerSetupFailedErrF`` 10045
  for a source: the origin timed out, had no responders, or its cluster is ``down`` on the
  embedded engine). The figure is the last one the mirror reported; or
- it was last reported :data:`STALE_AFTER_NS` ago or more (the server's stalled interval),
  or never (``active`` -1).

A figure counted at the origin now (``dr check``'s ``origin_pending``) is fresh. A stale
figure is shown as it was reported, marked with its age (:meth:`LagReading.mark`:
``Lag 0 (last reported 3m0s ago)``), flagged ``stale`` in JSON (the lag perf item's
``stale`` and ``dr check``'s recovery point), and never passes for a current one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..durations import MS, SECOND, format_duration, go_round

__all__ = ["SETUP_FAILED", "STALE_AFTER_NS", "LagReading", "ago", "counted_now", "lag_reading"]

#: nats-server stream.go ``sourceHealthCheckInterval``: no contact with the origin for this
#: long and the mirror is stalled; its lag is as old as that contact
STALE_AFTER_NS = 10 * SECOND
#: the errors of a mirror (10029) or source (10045) whose consumer on the origin could not
#: be set up: the origin does not answer
SETUP_FAILED = (10029, 10045)


def ago(ns: int) -> str:
    """A duration rounded for a message: whole seconds from 1s, milliseconds below
    (``3m0s``, ``250ms``)."""
    return format_duration(max(go_round(ns, SECOND if ns >= SECOND else MS), 0))


@dataclass(frozen=True)
class LagReading:
    """A lag figure and how old it is."""

    lag: int
    age_ns: int | None  # since the mirror last heard from its origin; None: never
    stale: bool

    def mark(self) -> str:
        """`` (last reported 3m0s ago)`` / `` (never reported)`` for a stale figure, else
        empty: what follows the figure in a message."""
        if not self.stale:
            return ""
        if self.age_ns is None:
            return " (never reported)"
        return f" (last reported {ago(self.age_ns)} ago)"

    def shown(self) -> str:
        """The figure with its :meth:`mark` for a message: ``12``, ``12 (last reported 3m0s
        ago)``; a lag never reported is no figure: ``unknown (never reported)``."""
        if self.stale and self.age_ns is None:
            return "unknown (never reported)"
        return f"{self.lag}{self.mark()}"

    def to_json(self) -> dict[str, Any]:
        """``stale`` and ``lag_age_ms`` (None: never reported), for a JSON document."""
        return {"stale": self.stale,
                "lag_age_ms": None if self.age_ns is None else self.age_ns // MS}


def lag_reading(info: Mapping[str, Any], *, origin_answers: bool | None = None
                ) -> LagReading:
    """The lag of a StreamSourceInfo (``mirror`` or one of ``sources``) with its age;
    ``origin_answers``: False when the origin is known not to answer, None when it was not
    asked (the info's own ``error`` says then)."""
    lag = int(info.get("lag", 0) or 0)
    active = int(info.get("active", -1))
    age = active if active >= 0 else None
    error = info.get("error")
    if origin_answers is None and isinstance(error, Mapping):
        origin_answers = error.get("err_code") not in SETUP_FAILED
    stale = origin_answers is False or age is None or age >= STALE_AFTER_NS
    return LagReading(lag, age, stale)


def counted_now(lag: int) -> LagReading:
    """A figure counted at the origin now: fresh."""
    return LagReading(lag, 0, False)
