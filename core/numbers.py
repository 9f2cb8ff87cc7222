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


_GO_BASES = {"x": 16, "o": 8, "b": 2}
_GO_DIGITS = "0123456789abcdef"
# Go's floating-point literal (strconv.ParseFloat's syntax), compiled when first needed (the
# few commands that read one: a start-up never pays for it)
_GO_FLOAT_PATTERN = (r"[+-]?(?:(?:[0-9_]+\.?[0-9_]*|\.[0-9_]+)(?:[eE][+-]?[0-9][0-9_]*)?"
                     r"|0[xX](?:[0-9a-fA-F_]+\.?[0-9a-fA-F_]*|\.[0-9a-fA-F_]+)[pP][+-]?[0-9][0-9_]*"
                     r"|inf|infinity|nan)")


def _go_underscores_ok(text: str) -> bool:
    """Go's strconv ``underscoreOK``: underscores only between digits (a base prefix
    counting as one), never first or last."""
    s = text[1:] if text[:1] in ("+", "-") else text
    saw, i, hexa = "^", 0, False
    if len(s) >= 2 and s[0] == "0" and s[1].lower() in "box":
        saw, i, hexa = "0", 2, s[1].lower() == "x"
    for c in s[i:]:
        if c.isdigit() or (hexa and c.lower() in "abcdef"):
            saw = "0"
        elif c == "_":
            if saw != "0":
                return False
            saw = "_"
        else:
            if saw == "_":
                return False
            saw = "!"
    return saw != "_"


def go_parse_int_base0(text: str, lo: int = INT64_MIN, hi: int = INT64_MAX) -> int:
    """Go's ``strconv.ParseInt(text, 0, 64)`` (``ParseUint`` when ``lo`` is 0: no sign):
    what natscli's 64-bit flags read (fisk's int64 and uint64 values). The base from the
    prefix: ``0x`` 16, ``0o`` 8, ``0b`` 2, a leading ``0`` 8 (``010`` is 8), else 10;
    underscores between digits (``1_000``). Else :class:`IntTextError`."""
    if not text.isascii():
        raise IntTextError(text, "syntax", lo, hi)
    body, negative = text, False
    if body[:1] in ("+", "-"):
        if lo >= 0:
            raise IntTextError(text, "syntax", lo, hi)
        negative, body = body[0] == "-", body[1:]
    base = 10
    if len(body) >= 2 and body[0] == "0" and body[1].lower() in _GO_BASES:
        base, body = _GO_BASES[body[1].lower()], body[2:]
    elif len(body) >= 2 and body[0] == "0":
        base, body = 8, body[1:]
    if "_" in body and not _go_underscores_ok(text):
        raise IntTextError(text, "syntax", lo, hi)
    digits = body.replace("_", "").lower().lstrip("0") or ("0" if body else "")
    if not digits or any(c not in _GO_DIGITS[:base] for c in digits):
        raise IntTextError(text, "syntax", lo, hi)
    if len(digits) > 70:  # past 64 bits in any base: never given to int()
        raise IntTextError(text, "range", lo, hi)
    n = -int(digits, base) if negative else int(digits, base)
    if not lo <= n <= hi:
        raise IntTextError(text, "range", lo, hi)
    return n


def go_int_of_float(text: str) -> int:
    """What natscli's ``int`` flags read: fisk's int value is ``strconv.ParseFloat(text,
    64)`` converted to Go's int, so ``2.5`` is 2, ``-2.5`` -2, ``1e3`` 1000 and ``1_000``
    1000 (decimal or hexadecimal floating-point literals, underscores between digits as
    Go's ``underscoreOK`` allows them, ``inf`` and ``nan`` too). A value whose conversion
    Go leaves to the platform (not finite, or past 64 bits) is refused as out of range, as
    is text Go refuses (:class:`IntTextError`)."""
    import math

    lo, hi = INT64_MIN, INT64_MAX
    if not re.fullmatch(_GO_FLOAT_PATTERN, text, re.ASCII | re.IGNORECASE) or (
            "_" in text and not _go_underscores_ok(text)):
        raise IntTextError(text, "syntax", lo, hi)
    plain = text.replace("_", "")  # (readFloat skips the separators underscoreOK allows)
    try:
        value = float.fromhex(plain) if "x" in plain.lower() else float(plain)
    except (ValueError, OverflowError):
        raise IntTextError(text, "range", lo, hi) from None
    if not math.isfinite(value) or not -(2.0**63) <= value < 2.0**63:
        raise IntTextError(text, "range", lo, hi)
    return int(value)  # toward zero, as Go converts


_SIZE = r"(\d+)([A-Za-z]+)"  # a size with its unit (compiled when first needed)
_SIZE_UNITS = {"B": 0, "K": 10, "KB": 10, "KIB": 10, "M": 20, "MB": 20, "MIB": 20, "G": 30,
               "GB": 30, "GIB": 30, "T": 40, "TB": 40, "TIB": 40}
_SIZE_MAX = {32: 2**31 - 1, 64: 2**63 - 1}


def parse_byte_size(text: str, bits: int = 64) -> int:
    """natscli's ``ParseStringAsBytes``: ``-1`` (any negative) is unlimited (-1), ``512``,
    ``512MB``, ``1GiB``, ``2t`` (1024-based), at most the largest int of ``bits`` bits;
    ValueError saying the rule otherwise (the caller names the option and the value)."""
    value = text.strip()
    if value.startswith("-"):
        return -1
    if re.fullmatch(r"\d+", value):
        digits, shift = value, 0
    else:
        m = re.fullmatch(_SIZE, value, re.ASCII)
        unit = m.group(2).upper() if m else ""
        if not m or unit not in _SIZE_UNITS:
            raise ValueError(
                "bytes are a whole number ending in B, K, KB, KiB, M, MB, MiB, G, GB, GiB, T, "
                "TB or TiB (all 1024-based), or -1 for unlimited")
        digits, shift = m.group(1), _SIZE_UNITS[unit]
    try:
        return parse_int(digits, 0, _SIZE_MAX[bits] >> shift) << shift
    except IntTextError:
        raise ValueError(f"maximum is {_SIZE_MAX[bits]:,}") from None


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
