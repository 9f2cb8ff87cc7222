"""Integers a user typed: a flag, a header, a configuration value, a REST body.

One parser, :func:`parse_int`, for every place that turns such text into an ``int``:
decimal ASCII digits with an optional sign (what Go's ``strconv.ParseInt`` and Java's
``Long.parseLong`` read), checked against a range. A value with more digits than any bound
allows is refused as out of range *before* it is converted: Python's ``int()`` refuses text of
more than 4,300 digits with a ValueError most callers never expected (a traceback), and a
value past 64 bits overflows SQLite. The caller words the refusal in its system's conventions
(a usage error, a Kafka ``INVALID_CONFIG``, a NATS ``ApiError``) from :class:`IntTextError`.

:func:`go_parse_int64` is nats-server's own header parse (util.go ``parseInt64``): digits
only, else -1, and int64 arithmetic that wraps on overflow, as the server reads
``Nats-Expected-Last-Sequence`` and the like; it never converts more than 19 digits at once.
"""

from __future__ import annotations

import re
from typing import Literal

INT32_MAX = 2**31 - 1  # a Kafka partition, a console consumer's --max-messages (Java int)
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1

_INT = re.compile(r"[+-]?[0-9]+")
_CHUNK = 18  # digits converted at once by go_parse_int64 (always below 2**63)


class IntTextError(ValueError):
    """Text that is not an integer (``reason`` "syntax") or is outside ``[lo, hi]``
    ("range"). ``shown`` is the text as a message may quote it (long text clipped)."""

    def __init__(self, text: str, reason: Literal["syntax", "range"], lo: int, hi: int
                 ) -> None:
        from .errors import clip

        self.text = text
        self.shown = clip(text)
        self.reason = reason
        self.lo = lo
        self.hi = hi
        super().__init__(
            f"{self.shown!r} is not an integer" if reason == "syntax"
            else f"{self.shown!r} is out of range: from {lo:,} to {hi:,}")


def parse_int(text: str, lo: int = INT64_MIN, hi: int = INT64_MAX) -> int:
    """``text`` as an integer in ``[lo, hi]`` (default: a signed 64-bit integer), else
    :class:`IntTextError`. Whitespace is the caller's to trim (Go trims none, Java none)."""
    t = text
    if not _INT.fullmatch(t):
        raise IntTextError(text, "syntax", lo, hi)
    digits = t.lstrip("+-").lstrip("0")
    # more digits than the bounds have: out of range, and never given to int()
    if len(digits) > max(len(str(abs(lo))), len(str(abs(hi)))):
        raise IntTextError(text, "range", lo, hi)
    n = int(digits or "0")  # leading zeros count in int()'s digit limit too
    if t[0] == "-":
        n = -n
    if not lo <= n <= hi:
        raise IntTextError(text, "range", lo, hi)
    return n


def go_parse_int64(text: str) -> int:
    """nats-server util.go ``parseInt64``: -1 unless ``text`` is only ASCII digits; the
    digits accumulated in int64 arithmetic, wrapping on overflow as Go's does."""
    if not text or not text.isascii() or not text.isdigit():
        return -1
    n = 0
    text = text.lstrip("0")
    for i in range(0, len(text), _CHUNK):
        chunk = text[i:i + _CHUNK]
        n = (n * 10 ** len(chunk) + int(chunk)) % 2**64
    return n - 2**64 if n > INT64_MAX else n


def go_parse_uint64(text: str | None) -> int | None:
    """nats-server util.go ``parseUint64``: None unless ``text`` is only ASCII digits and
    fits 64 bits unsigned (an overflow is refused, not wrapped)."""
    if not text or not text.isascii() or not text.isdigit():
        return None
    digits = text.lstrip("0")
    if len(digits) > len(str(UINT64_MAX)):
        return None
    v = int(digits or "0")
    return v if v <= UINT64_MAX else None


_DIGIT_LIMIT = re.compile(r"Exceeds the limit \((\d+) digits\).*?value has (\d+) digits")


def reason(exc: ValueError) -> str:
    """The reason a parser's ValueError gives, in words for the user: Python's own refusal of
    a number with too many digits (json, tomllib) says how many, without its advice to
    change an interpreter setting; any other reason as it is."""
    m = _DIGIT_LIMIT.search(str(exc))
    if m is None:
        return str(exc)
    return (f"a number of {int(m.group(2)):,} digits (more than {int(m.group(1)):,}, "
            "past any value a field takes)")
