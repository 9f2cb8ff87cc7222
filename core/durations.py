"""Durations: nanoseconds in JSON, human strings (``1h``, ``90s``, ``2m30s``) for people.

The human form is what natscli reads (its flag library's ParseDuration):

- Go's ``time.ParseDuration`` units ``ns``, ``us`` (``µs``), ``ms``, ``s``, ``m``, ``h``, in
  combinations such as ``1h30m`` and with decimals (``1.5s``);
- natscli's own units ``d``/``D`` (24 h), ``w``/``W`` (7 d), ``M`` (30 d) and ``y``/``Y``
  (365 d), with decimals too (``1.5d``). As in natscli, a fraction of these counts in whole
  hours: ``0.1d`` is 2h, ``1.1w`` is 184h;
- a bare number other than ``0`` is refused, "missing unit, e.g. 5s": natscli's rule (its
  flag library's ParseDuration, and jsm.go's for the ``io.nats.monitor.*`` metadata, find no
  unit and refuse it, as Go's ``time.ParseDuration`` does). It holds for every duration a
  person types: a flag, an environment variable, a metadata value, a string in a file. An
  *integer* (not a string) is nanoseconds: what the JSON documents of the API hold.

The ``io.nats.monitor.*`` metadata thresholds are read by jsm.go's own ParseDuration
(:func:`parse_jsm_duration`): the same units, a long unit's fraction to the nanosecond
(``0.1d`` is 2h24m), text between the parts skipped.

A duration is at most Go's maximum (2562047h47m16.854775807s, about 292 years). A *wait* (a
pause or timeout a command sleeps through: ``--interval``, ``--timeout``, ``--wait``,
``--refresh``) is at most :data:`MAX_WAIT`, 100 years: Python's ``time.sleep`` and thread waits
end at the monotonic clock's int64 nanoseconds (about 292 years minus the machine's uptime) and
fail beyond it (OverflowError, EINVAL); 100 years keeps well clear of that on any machine.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable

from .errors import clip
from .numbers import IntTextError, parse_int

NS = 1
US = 1_000
MS = 1_000_000
SECOND = 1_000_000_000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR
WEEK = 7 * DAY
MONTH = 30 * DAY
YEAR = 365 * DAY
MAX_DURATION = 2**63 - 1
MAX_WAIT = 100 * YEAR  # the longest wait or pause a command takes (see the module's notes)

# Go's own units; a decimal fraction is scaled exactly as time.ParseDuration does.
_GO_UNITS = {"ns": NS, "us": US, "µs": US, "μs": US, "ms": MS, "s": SECOND, "m": MINUTE,
             "h": HOUR}
# natscli's long units, in hours; a fraction is truncated to whole hours as natscli does.
_LONG_UNITS = {"d": 24, "D": 24, "w": 7 * 24, "W": 7 * 24, "M": 30 * 24, "y": 365 * 24,
               "Y": 365 * 24}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h|d|D|w|W|M|y|Y)", re.ASCII)
_UNIT_HELP = "ns, us, ms, s, m, h, d, w, M, y"
_BARE_NUMBER = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)", re.ASCII)
MISSING_UNIT = "missing unit, e.g. 5s"
# a duration a file may write: whole nanoseconds, or text with its unit
DURATION_FORMS = 'whole nanoseconds or a string with its unit, e.g. "1.5s", "90s", "1h30m"'


class DurationError(ValueError):
    """A duration string that does not parse; the message says why: ``invalid duration '5':
    missing unit, e.g. 5s``. ``value`` is the text refused and ``reason`` the why alone, for
    a caller that names the flag (``invalid value for --ttl: '5': missing unit, e.g. 5s``)."""

    def __init__(self, message: str, *, value: object = None, reason: str | None = None,
                 too_long: bool = False) -> None:
        super().__init__(message)
        self.value = value
        self.reason = reason or message
        self.too_long = too_long  # a well-formed duration past the maximum


def _refused(text: str, reason: str) -> DurationError:
    return DurationError(f"invalid duration {clip(text)!r}: {reason}", value=clip(text),
                         reason=reason)


def _too_long(text: str, part: str = "") -> DurationError:
    err = _refused(text, f"{part}{' is ' if part else ''}more than the maximum "
                         f"{format_duration(MAX_DURATION)} (about 292 years)")
    err.too_long = True
    return err


def _float32(value: float) -> float:
    return struct.unpack("f", struct.pack("f", value))[0]


def _part_ns(number: str, unit: str) -> int:
    if unit in _LONG_UNITS:
        value = float(number)
        if value * _LONG_UNITS[unit] * HOUR > MAX_DURATION:  # inf too: an overflow
            raise IntTextError(number, "range", 0, MAX_DURATION)
        return int(_float32(value) * _LONG_UNITS[unit]) * HOUR
    scale = _GO_UNITS[unit]
    whole, _, frac = number.partition(".")
    # time.ParseDuration's leadingInt: a whole part past int64 is an overflow (core/numbers.py
    # refuses it before any conversion); the caller reports it as over the maximum
    ns = parse_int(whole or "0", 0, MAX_DURATION) * scale
    if frac.strip("0"):
        # leadingFraction: the digits that fit 63 bits count, the rest are read and dropped
        digits = frac[:19] if int(frac[:19]) <= 2**63 else frac[:18]
        ns += int(float(int(digits)) * (scale / 10 ** len(digits)))
    return ns


def parse_duration(value: str | int) -> int:
    """Return nanoseconds for ``value`` (``"2m30s"``, ``"1.5d"``, ``"1M"``, ``"0"``; an int is
    nanoseconds already). The one duration parser of jetlink: a bare number other than 0 is
    refused (:data:`MISSING_UNIT`)."""
    if isinstance(value, bool):
        raise DurationError(f"invalid duration {value!r}")
    if isinstance(value, int):
        return value
    return _parse(str(value).strip(), long_units=True)


def parse_go_duration(text: str) -> int:
    """Go's ``time.ParseDuration`` alone (what the server reads, e.g. a ``Nats-TTL`` header):
    no bare numbers but ``0``, no ``d``/``w``/``M``/``y``."""
    return _parse(text, long_units=False)


# jsm.go's durationMatcher: every "<number><letters>" found in the text, what lies between
# them skipped
_JSM_PART = re.compile(r"([-+]?)(([\d.]+)([a-zA-Z]+))", re.ASCII)
_JSM_LONG_NS = {"w": WEEK, "W": WEEK, "d": DAY, "D": DAY, "M": MONTH, "y": YEAR, "Y": YEAR}


def parse_jsm_duration(text: str) -> int:
    """jsm.go's ``ParseDuration``, which reads the ``io.nats.monitor.*`` metadata thresholds:
    blanks trimmed; every ``<number><unit>`` found in the text summed (anything between them
    skipped: ``1h30`` is 1h); a long unit (``w``, ``d``, ``M``, ``y``) multiplied in float64
    and truncated to nanoseconds (``0.1d`` is 2h24m, where a flag's parser gives 2h); Go's
    units through ``time.ParseDuration``; the sign of the first part alone; no part, an
    unknown unit or a sum past Go's maximum refused."""

    def long_ns(number: str, unit: str) -> float:
        return float(number) * _JSM_LONG_NS[unit]

    return _sum_parts(text, long_ns)


def parse_fisk_duration(text: str) -> int:
    """natscli's flag library's ``ParseDuration`` (fisk), which reads ``server check``'s
    duration flags: as :func:`parse_jsm_duration` (parts found and summed, text between them
    skipped, the first part's sign for the whole: ``-5s`` is negative, a threshold then
    off), but a long unit's number read as a float32 and counted in whole hours (``0.1d`` is
    2h), as :func:`parse_duration` counts it."""

    def long_ns(number: str, unit: str) -> float:
        try:
            return float(_part_ns(number, unit))  # the flag parsers' one long-unit rule
        except IntTextError:
            return float("inf")  # past the maximum: refused as such

    return _sum_parts(text, long_ns)


def _sum_parts(text: str, long_ns: Callable[[str, str], float]) -> int:
    """The parts loop jsm.go's and fisk's ParseDuration share; ``long_ns(number, unit)``:
    the nanoseconds of a long-unit part (a ValueError when ``number`` is no number)."""
    if text == "0":
        return 0
    body = text.strip()
    parts = _JSM_PART.findall(body)
    if not parts:
        raise _refused(text, MISSING_UNIT if _BARE_NUMBER.fullmatch(body) else
                       f"expected a number and a unit ({_UNIT_HELP}), e.g. 1h30m or 1.5d")
    total = 0
    for _sign, part, number, unit in parts:
        if unit in _JSM_LONG_NS:
            try:
                ns = long_ns(number, unit)
            except (ValueError, OverflowError):
                raise _refused(text, f"{number!r} is not a number") from None
            if ns >= 2.0**63:
                raise _too_long(text, part)
            total += int(ns)
        elif unit in _GO_UNITS:
            total += parse_go_duration(part)
        else:
            raise _refused(text, f"invalid unit {unit!r} ({_UNIT_HELP})")
        if total > MAX_DURATION:
            raise _too_long(text)
    return -total if parts[0][0] == "-" else total


def _parse(text: str, *, long_units: bool) -> int:
    if not text:
        raise DurationError('invalid duration "": empty', value="", reason="empty")
    if text.lstrip("+-") == "0" and len(text) - len(text.lstrip("+-")) <= 1:
        total = 0
    elif _BARE_NUMBER.fullmatch(text):
        raise _refused(text, MISSING_UNIT)
    else:
        sign = 1
        body = text
        if body[0] in "+-":
            sign = -1 if body[0] == "-" else 1
            body = body[1:]
        pos = 0
        total = 0
        while pos < len(body) or pos == 0:
            m = _PART.match(body, pos)
            if not m or (not long_units and m.group(2) in _LONG_UNITS):
                raise _refused(text, "expected a number and a unit " + (
                    f"({_UNIT_HELP}), e.g. 1h30m or 1.5d" if long_units
                    else "(ns, us, ms, s, m, h), e.g. 1h30m"))
            try:
                total += _part_ns(*m.groups())
            except IntTextError:
                total = MAX_DURATION + 1  # an overflow: refused below as over the maximum
                break
            pos = m.end()
        total *= sign
    if abs(total) > MAX_DURATION:
        raise _too_long(text)
    return total


def read_duration(text: str, *, unlimited: bool = False, wait: bool = False) -> int:
    """A duration a person typed for a flag or a variable, in nanoseconds: :func:`parse_duration`
    (a unit is required, but for 0), never negative. With ``unlimited``: ``-1`` (natscli's
    "unlimited"), ``unlimited`` and ``0`` give 0. With ``wait``: a pause or timeout a command
    sleeps through, at most :data:`MAX_WAIT`. DurationError says why otherwise."""
    value = str(text).strip()
    if unlimited and value in ("-1", "0", "unlimited"):
        return 0
    try:
        ns = parse_duration(value)
    except DurationError as err:
        if not (wait and err.too_long):
            raise
        # past any duration, so past the longest wait: said as that rule
        raise _refused(value, f"more than the longest wait, 100y ({format_duration(MAX_WAIT)})"
                       ) from None
    if ns < 0:
        raise _refused(value, "must not be negative")
    if wait:
        try:
            check_wait(ns)
        except DurationError as exc:
            raise _refused(value, str(exc)) from None
    return ns


def check_wait(ns: int) -> int:
    """``ns`` when a command can wait that long, else DurationError naming the limit."""
    if ns > MAX_WAIT:
        raise DurationError(
            f"{format_duration(ns)} is more than the longest wait, 100y "
            f"({format_duration(MAX_WAIT)})"
        )
    return ns


# java.time.Duration.parse's pattern: a sign for the whole and for each part, a fraction of
# the seconds after '.' or ',' of at most 9 digits
_JAVA_DURATION = re.compile(
    r"([-+]?)P(?:([-+]?[0-9]+)D)?(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?"
    r"(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?", re.IGNORECASE)


def parse_java_duration(text: str) -> int | None:
    """java.time.Duration's ISO-8601 form (``PT1H30M``, ``P1D``, ``PT0.5S``, ``PT0,5S``,
    ``-PT1H``, ``PT-1H``: days, hours, minutes, seconds, each signed) as nanoseconds (exact,
    no float), what Kafka's tools take (``--by-duration``); None for text not in that form
    (as Duration.parse throws: a ``T`` with nothing after it, no part at all)."""
    t = text.strip()
    m = _JAVA_DURATION.fullmatch(t)
    if m is None:
        return None
    sign, days, t_part, hours, minutes, secs, frac = m.groups()
    if not (days or hours or minutes or secs) or (t_part is not None and not (
            hours or minutes or secs)):
        return None
    whole = ((int(days or 0) * 24 + int(hours or 0)) * 60 + int(minutes or 0)) * 60
    seconds = int(secs or 0)
    nanos = int((frac or "").ljust(9, "0")) if frac else 0
    if abs(whole + seconds) > 2**63 - 1:  # Duration.parse's multiplyExact: past a long
        return None
    ns = (whole + seconds) * 1_000_000_000 + (-nanos if secs and secs.startswith("-")
                                              else nanos)
    return -ns if sign == "-" else ns


def seconds_text(seconds: float) -> str:
    """A time in seconds as Go prints a Duration (``5s``, ``500ms``, ``1ns``): what the
    waits and time-outs say."""
    return format_duration(round(seconds * 1e9))


def go_round(ns: int, unit: int) -> int:
    """Go's ``time.Duration.Round(unit)``: the nearest multiple of ``unit``, halves away from
    zero."""
    whole = (abs(ns) + unit // 2) // unit * unit
    return whole if ns >= 0 else -whole


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
