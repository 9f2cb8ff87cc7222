"""Injectable time.

Every rule that depends on time (max_age, Nats-TTL, duplicate windows, subject delete
markers, consumer ack_wait, sync intervals) asks a :class:`Clock`, so tests move time with a
:class:`ManualClock` instead of sleeping.

Times are integers: nanoseconds since the Unix epoch, UTC (Go's ``time.Now().UnixNano()``).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "SystemClock", "ManualClock", "format_rfc3339_nano", "ZERO_TIME"]

# Go prints a zero time.Time as this (the JSON form of an unset first_ts/last_ts).
ZERO_TIME = "0001-01-01T00:00:00Z"


@runtime_checkable
class Clock(Protocol):
    def now_ns(self) -> int:
        """Nanoseconds since the Unix epoch (UTC)."""
        ...


class SystemClock:
    """The wall clock."""

    __slots__ = ()

    def now_ns(self) -> int:
        return time.time_ns()

    def __repr__(self) -> str:
        return "SystemClock()"


# 2026-01-01T00:00:00Z: a fixed, readable default start for tests.
DEFAULT_MANUAL_START_NS = 1_767_225_600 * 1_000_000_000


class ManualClock:
    """A clock that only moves when told to: ``advance(ns)`` / ``set(ns)``."""

    __slots__ = ("_now",)

    def __init__(self, start_ns: int = DEFAULT_MANUAL_START_NS) -> None:
        self._now = int(start_ns)

    def now_ns(self) -> int:
        return self._now

    def advance(self, ns: int) -> int:
        """Move forward by ``ns`` nanoseconds (negative moves back); returns the new time."""
        self._now += int(ns)
        return self._now

    def advance_s(self, seconds: float) -> int:
        """Move forward by ``seconds`` (convenience for tests)."""
        return self.advance(round(seconds * 1_000_000_000))

    def set(self, ns: int) -> None:
        self._now = int(ns)

    def __repr__(self) -> str:
        return f"ManualClock({self._now})"


def format_rfc3339_nano(ns: int) -> str:
    """Go's ``time.Unix(0, ns).UTC().Format(time.RFC3339Nano)``: trailing zeros trimmed.

    ``0`` (unset) gives Go's zero time ``0001-01-01T00:00:00Z``.
    """
    if not ns:
        return ZERO_TIME
    secs, frac = divmod(ns, 1_000_000_000)
    base = datetime.fromtimestamp(secs, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    if frac:
        return f"{base}.{frac:09d}".rstrip("0") + "Z"
    return base + "Z"


def parse_rfc3339_nano(text: str) -> int:
    """The inverse of :func:`format_rfc3339_nano` (any RFC3339 offset; up to 9 fraction digits)."""
    t = text.strip()
    if t == ZERO_TIME:
        return 0
    if t[-1:] in ("Z", "z"):
        t = t[:-1] + "+00:00"
    frac_ns = 0
    dot = t.find(".")
    if dot != -1:
        end = dot + 1
        while end < len(t) and t[end].isdigit():
            end += 1
        digits = t[dot + 1 : end]
        frac_ns = int(digits.ljust(9, "0")[:9]) if digits else 0
        t = t[:dot] + t[end:]
    offset = 0
    if len(t) >= 6 and t[-6] in "+-" and t[-3] == ":":
        # applied by hand: Go takes offsets up to 24h60m, Python's timezone less than 24h
        sign = -1 if t[-6] == "-" else 1
        offset = sign * (int(t[-5:-3]) * 3600 + int(t[-2:]) * 60)
        t = t[:-6]
    else:
        raise ValueError(f"time without offset: {text!r}")
    dt = datetime.fromisoformat(t).replace(tzinfo=UTC)
    return (int(dt.timestamp()) - offset) * 1_000_000_000 + frac_ns
