"""Counters on the publish path (ADR-49, nats-server 2.12+): ``allow_msg_counter`` streams.

What nats-server 2.15's ``processJetStreamMsg`` does with ``Nats-Incr`` (stream.go, the
header checks and "Apply increment for counter"), used by ``StreamAppend._append_slow``:

- :func:`incr_of`: the header checks. A ``Nats-Incr`` value that is not a decimal integer
  (Go's ``big.Int.SetString(s, 10)``) is 10171 for every message, sourced ones too; for a
  client's publish: not a counter stream 10168, a body 10170, next to ``Nats-Rollup`` or any
  ``Nats-Expected-*`` header 10171. ``Nats-Msg-Id`` is allowed (the duplicate window applies).
- :func:`apply`: after the other header rules. On a counter stream a message without
  ``Nats-Incr`` is 10169 (sourced ones too). The subject's last message must hold a
  ``{"val":"N"}`` body (``CounterValue``) and a ``Nats-Counter-Sources`` header, when it has
  one, must decode as ``{"<stream>":{"<subject>":"<value>"}}`` (``CounterSources``): else
  10172. A sourced message (``Nats-Stream-Source``: ``<stream> <seq> <filters> <dests>
  <subject> ...``) does not add its ``Nats-Incr``: its body's value becomes the source's
  entry in the sources map and the increment is the difference from that entry's previous
  value, written back as ``Nats-Incr``. The new value is stored as ``{"val":"N"}``; the
  sources map, when not empty, as ``Nats-Counter-Sources`` (``setHeader``: the first such
  line replaced, else appended). Over the server's max_payload: 10054.

Values are unbounded integers (the server's ``big.Int``). A stored value the server parses
with ``SetString`` after a failed parse keeps the digits read so far (``"12x"`` is 12, ``""``
0), which :func:`go_int_prefix` reproduces. The JSON documents follow Go's
``encoding/json``: a key matches ``val`` regardless of case, ``null`` leaves a value unset,
maps are written with sorted keys and ``<``, ``>``, ``&`` escaped.

Messages the engine writes itself with ``sourced`` and no ``Nats-Stream-Source`` (a lake
import restoring a stream) are stored as they are.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .. import headers as H
from ..errors import ApiError, nats_error
from ..gojson import marshal
from ..limits import MAX_PAYLOAD
from ..messages import StoredMsg

__all__ = [
    "apply",
    "counter_body",
    "go_int_prefix",
    "incr_of",
    "int_text",
    "parse_big_int",
    "parse_counter_value",
    "parse_sources",
    "set_header",
    "sources_text",
]

# The headers a client's increment may not carry (the server's "incompatible headers").
_INCOMPATIBLE = (H.ROLLUP, H.EXPECTED_STREAM, H.EXPECTED_LAST_MSG_ID,
                 H.EXPECTED_LAST_SUBJ_SEQ_SUBJ, H.EXPECTED_LAST_SEQ, H.EXPECTED_LAST_SUBJ_SEQ)

# Python refuses int <-> str conversions of more than 4,300 digits by default; counters are
# unbounded (a Nats-Incr may hold up to a header's 64 KiB of digits), so longer texts are
# converted in halves.
_CHUNK = 4000
_CHUNK_POW = 10 ** _CHUNK


def _digits_int(s: str) -> int:
    if len(s) <= _CHUNK:
        return int(s)
    half = len(s) // 2
    return _digits_int(s[:-half]) * 10 ** half + _digits_int(s[-half:])


def int_text(v: int) -> str:
    """``big.Int.String()``: the decimal text of ``v``, any size."""
    if v < 0:
        return "-" + int_text(-v)
    if v < _CHUNK_POW:
        return str(v)
    half = (v.bit_length() * 3 // 10) // 2  # about half the digits
    hi, lo = divmod(v, 10 ** half)
    return int_text(hi) + int_text(lo).rjust(half, "0")


def parse_big_int(text: str) -> int | None:
    """Go's ``big.Int.SetString(text, 10)`` when it succeeds: an optional sign, then
    decimal digits only; None when it fails."""
    t = text[1:] if text[:1] in ("+", "-") else text
    if not t or not t.isascii() or not t.isdigit():
        return None
    v = _digits_int(t)
    return -v if text[0] == "-" else v


def go_int_prefix(text: str) -> int:
    """The value ``big.Int.SetString(text, 10)`` leaves in a fresh ``big.Int``, failed or
    not: an optional sign, then the decimal digits up to the first other character (none:
    0). The server reads stored counter values this way."""
    t = text
    neg = False
    if t[:1] in ("+", "-"):
        neg = t[0] == "-"
        t = t[1:]
    n = 0
    while n < len(t) and "0" <= t[n] <= "9":
        n += 1
    if n == 0:
        return 0
    v = _digits_int(t[:n])
    return -v if neg else v


def counter_body(value: int) -> bytes:
    """The stored body of a counter message: ``{"val":"N"}``."""
    return b'{"val":"' + int_text(value).encode() + b'"}'


# --- Go's encoding/json, as far as counters use it ------------------------------------------
def _no_constant(name: str) -> Any:
    raise ValueError(f"invalid JSON value {name}")


def _loads(data: bytes | str, hook: Callable[[list[tuple[str, Any]]], Any] | None = None
           ) -> Any:
    """``json.Unmarshal``'s syntax: no NaN/Infinity; invalid UTF-8 read as U+FFFD."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return json.loads(text, parse_constant=_no_constant, object_pairs_hook=hook)


def parse_counter_value(data: bytes) -> str | None:
    """``json.Unmarshal(data, &CounterValue)``: the ``val`` text ("" when absent or null);
    None when Go refuses (not JSON, not an object or null, ``val`` not a string)."""
    pairs: list[list[tuple[str, Any]]] = []

    def keep(items: list[tuple[str, Any]]) -> dict[str, Any]:
        pairs.append(items)
        return dict(items)

    try:
        doc = _loads(data, keep)
    except (ValueError, RecursionError):
        return None
    if doc is None:
        return ""
    if not isinstance(doc, dict):
        return None
    top = pairs[-1]  # the outermost object is closed last
    val = ""
    bad = False
    for key, value in top:
        if key != "val" and key.casefold() != "val":
            continue
        if isinstance(value, str):
            val = value
        elif value is not None:
            bad = True  # Go goes on decoding, then reports the type error
    return None if bad else val


Sources = dict[str, dict[str, str] | None]


def parse_sources(text: str) -> Sources | None:
    """``json.Unmarshal(text, &CounterSources)`` (``map[string]map[string]string``): {} for
    ``null``; a stream mapped to ``null`` kept as None; a ``null`` value read as ""; None
    when Go refuses."""
    try:
        doc = _loads(text)
    except (ValueError, RecursionError):
        return None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        return None
    out: Sources = {}
    for stream, subjects in doc.items():
        if subjects is None:
            out[stream] = None
            continue
        if not isinstance(subjects, dict):
            return None
        inner: dict[str, str] = {}
        for subject, value in subjects.items():
            if value is None:
                inner[subject] = ""
            elif isinstance(value, str):
                inner[subject] = value
            else:
                return None
        out[stream] = inner
    return out


def sources_text(sources: Sources) -> str:
    """``json.Marshal`` of the sources map: keys sorted, no spaces, HTML characters escaped."""
    return marshal(sources, sort_keys=True)


# --- headers --------------------------------------------------------------------------------
def set_header(hdr: bytes | None, key: str, value: str) -> bytes:
    """The server's ``setHeader``: the first ``key:`` line's value replaced (a single space
    after the colon kept), else ``key: value`` appended as the block's last line."""
    if hdr:
        lines = hdr.split(H.CRLF)
        prefix = key.encode() + b":"
        for i in range(1, len(lines)):
            line = lines[i]
            if line.startswith(prefix):
                start = len(prefix) + (1 if line[len(prefix):len(prefix) + 1] == b" " else 0)
                lines[i] = line[:start] + value.encode()
                return H.CRLF.join(lines)
    return H.append_header(hdr, key, value)


# --- the publish path -----------------------------------------------------------------------
Applied = tuple[bytes | None, bytes, str | None]  # header, body, the new value (None: as is)

def incr_of(fv: dict[str, str], data: bytes, allow_counter: bool, sourced: bool
            ) -> tuple[int | None, ApiError | None]:
    """The ``Nats-Incr`` header checks of ``processJetStreamMsg``: (the increment or None,
    the refusal or None). ``fv``: the message's first header values."""
    text = fv.get(H.INCR)
    if not text:
        return None, None
    incr = parse_big_int(text)
    if incr is None:
        return None, nats_error("MessageIncrInvalid")
    if sourced:
        return incr, None  # stored as it comes (a counter stream recomputes it in apply)
    if not allow_counter:
        return None, nats_error("MessageIncrDisabled")
    if data:
        return None, nats_error("MessageIncrPayload")
    if any(fv.get(k) for k in _INCOMPATIBLE):
        return None, nats_error("MessageIncrInvalid")
    return incr, None


def apply(subject: str, hdr: bytes | None, data: bytes, incr: int | None,
          fv: dict[str, str] | None, sourced: bool,
          last: Callable[[], StoredMsg | None]) -> Applied | ApiError:
    """A counter stream's message as stored: ``(header, body, the new value)``, or the
    refusal. ``last`` loads the subject's last message (None: none)."""
    source = fv.get(H.STREAM_SOURCE) if fv else None
    if sourced and not source:
        return hdr, data, None  # the engine's own writes: as they are
    if incr is None:
        return nats_error("MessageIncrMissing")
    initial = 0
    sources: Sources | None = None
    prev = last()
    if prev is not None:
        val = parse_counter_value(prev.data)
        if val is None:
            return nats_error("MessageCounterBroken")
        text = H.header_value(prev.hdr, H.COUNTER_SOURCES)
        if text:
            sources = parse_sources(text)
            if sources is None:
                return nats_error("MessageCounterBroken")
        initial = go_int_prefix(val)
    if source:
        fields = source.split(" ")
        origin = fields[0]
        origin_subject = fields[4] if len(fields) >= 5 else subject
        body_val = parse_counter_value(data)
        if body_val is None:
            return nats_error("MessageCounterBroken")
        value = go_int_prefix(body_val)
        if sources is None:
            sources = {}
        entries = sources.get(origin)
        if entries is None:
            entries = sources[origin] = {}
        previous = go_int_prefix(entries.get(origin_subject, ""))
        entries[origin_subject] = int_text(value)
        incr = value - previous
        hdr = set_header(hdr, H.INCR, int_text(incr))
    total = initial + incr
    body = counter_body(total)
    if sources:
        hdr = set_header(hdr, H.COUNTER_SOURCES, sources_text(sources))
    hlen = len(hdr) if hdr else 0
    if hlen > MAX_PAYLOAD or len(body) > MAX_PAYLOAD - hlen:
        return nats_error("StreamMessageExceedsMaximum")
    return hdr, body, int_text(total)
