"""Durations: nanoseconds in JSON, human strings (``1h``, ``90s``, ``2m30s``) for people.

The human form is Go's ``time.ParseDuration`` grammar (what natscli accepts), plus ``d``
(24h) and ``w`` (7d) units and a bare integer meaning nanoseconds.
"""

from __future__ import annotations

import re

NS = 1
US = 1_000
MS = 1_000_000
SECOND = 1_000_000_000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR
WEEK = 7 * DAY

_UNITS = {
    "ns": NS,
    "us": US,
    "µs": US,
    "μs": US,
    "ms": MS,
    "s": SECOND,
    "m": MINUTE,
    "h": HOUR,
    "d": DAY,
    "w": WEEK,
}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h|d|w)")


class DurationError(ValueError):
    """A duration string that does not parse; the message says why."""


def parse_duration(value: str | int) -> int:
    """Return nanoseconds for ``value`` (``"2m30s"``, ``"1h"``, ``"500ms"``, ``0``, ``"1000"``)."""
    if isinstance(value, bool):
        raise DurationError(f"invalid duration {value!r}")
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if not text:
        raise DurationError("invalid duration \"\": empty")
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    sign = 1
    if text[0] in "+-":
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    pos = 0
    total = 0.0
    exact = 0
    while pos < len(text):
        m = _PART.match(text, pos)
        if not m:
            raise DurationError(
                f"invalid duration {value!r}: expected a number and a unit "
                "(ns, us, ms, s, m, h, d, w), e.g. 1h30m"
            )
        number, unit = m.groups()
        scale = _UNITS[unit]
        if "." in number:
            total += float(number) * scale
        else:
            exact += int(number) * scale
        pos = m.end()
    return sign * (exact + round(total))


def format_duration(ns: int) -> str:
    """Go's ``time.Duration.String()``: ``2m0s``, ``1h30m0s``, ``1.5s``, ``100ms``, ``0s``."""
    if ns == 0:
        return "0s"
    neg = ns < 0
    u = -ns if neg else ns
    if u < SECOND:
        if u < US:
            out = f"{u}ns"
        elif u < MS:
            out = _frac(u, US) + "µs"
        else:
            out = _frac(u, MS) + "ms"
    else:
        hours, rem = divmod(u, HOUR)
        minutes, rem = divmod(rem, MINUTE)
        secs = _frac(rem, SECOND)
        out = ""
        if hours:
            out += f"{hours}h"
        if hours or minutes:
            out += f"{minutes}m"
        out += f"{secs}s"
    return ("-" if neg else "") + out


def _frac(value: int, unit: int) -> str:
    whole, rest = divmod(value, unit)
    if not rest:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}." + f"{rest:0{digits}d}".rstrip("0")


def humanize(ns: int) -> str:
    """A short human form for tables (``1d2h``, ``15m``, ``forever`` for 0)."""
    if ns <= 0:
        return "forever" if ns == 0 else format_duration(ns)
    parts = []
    for unit, size in (("y", 365 * DAY), ("d", DAY), ("h", HOUR), ("m", MINUTE), ("s", SECOND)):
        if ns >= size:
            n, ns = divmod(ns, size)
            parts.append(f"{n}{unit}")
    if not parts:
        return format_duration(ns)
    return "".join(parts[:2])
