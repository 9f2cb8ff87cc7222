"""NATS message headers: the raw header block and its ``dict`` form.

A stored message keeps its headers as the raw NATS header block, byte for byte what the server
stores (``NATS/1.0\\r\\nKey: value\\r\\n...\\r\\n``): the server's byte accounting counts these
bytes, and its header lookups (``sliceHeader``) work on them. ``Headers`` is the friendly form,
``{name: [values]}``, order kept.

Encoding follows nats-py (the reference client here): names must be RFC 7230 tokens, values are
stripped and CR/LF become spaces; each value is one ``Name: value`` line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from .errors import client_error

__all__ = [
    "HDR_LINE",
    "Headers",
    "append_header",
    "decode_headers",
    "encode_headers",
    "encode_headers_fv",
    "first_values",
    "header_value",
    "remove_header",
]

Headers = dict[str, list[str]]
HeadersIn = Mapping[str, str | Sequence[str]]

HDR_LINE = b"NATS/1.0\r\n"
CRLF = b"\r\n"
_KEY_RE = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_NEWLINES = str.maketrans({"\r": " ", "\n": " "})

# Header names the JetStream publish path reads (the server's constants).
MSG_ID = "Nats-Msg-Id"
EXPECTED_STREAM = "Nats-Expected-Stream"
EXPECTED_LAST_SEQ = "Nats-Expected-Last-Sequence"
EXPECTED_LAST_SUBJ_SEQ = "Nats-Expected-Last-Subject-Sequence"
EXPECTED_LAST_SUBJ_SEQ_SUBJ = "Nats-Expected-Last-Subject-Sequence-Subject"
EXPECTED_LAST_MSG_ID = "Nats-Expected-Last-Msg-Id"
STREAM_SOURCE = "Nats-Stream-Source"
ROLLUP = "Nats-Rollup"
MSG_TTL = "Nats-TTL"
MARKER_REASON = "Nats-Marker-Reason"
INCR = "Nats-Incr"
COUNTER_SOURCES = "Nats-Counter-Sources"
SCHEDULE = "Nats-Schedule"
SCHEDULE_NEXT = "Nats-Schedule-Next"
SCHEDULER = "Nats-Scheduler"
KV_OPERATION = "KV-Operation"


def encode_headers(headers: HeadersIn | None) -> bytes | None:
    """The header block for ``headers`` (None when there is nothing to send).

    A value may be a string or a list of strings (one line each). Raises the client error
    ``nats: invalid header: 'k'`` for a name that is not a token, as nats-py does.
    """
    return encode_headers_fv(headers)[0]


def encode_headers_fv(headers: HeadersIn | None) -> tuple[bytes | None, dict[str, str]]:
    """:func:`encode_headers` and the block's :func:`first_values`, in one pass. A header
    block given as bytes (``NATS/1.0`` and its lines: a stored message's, as an import
    republishes it) is sent as it is, byte for byte."""
    fv: dict[str, str] = {}
    if not headers:
        return None, fv
    if isinstance(headers, bytes):
        return headers, first_values(headers)
    # The common case: names that are tokens, one string value each (Nats-Msg-Id, an
    # atomic batch's headers, ...); anything else takes the general loop below.
    lines = []
    for name, value in headers.items():
        if type(value) is list and len(value) == 1:  # {name: [value]}, as nats-py's
            value = value[0]
        if type(name) is not str or type(value) is not str or not _KEY_RE.fullmatch(name):
            fv.clear()
            break
        value = fv[name] = value.strip().translate(_NEWLINES)
        lines.append(f"{name}: {value}\r\n")
    else:
        return HDR_LINE + "".join(lines).encode() + CRLF, fv
    parts = [HDR_LINE]
    for name, values in headers.items():
        if not isinstance(name, str):
            raise client_error(f"nats: invalid header: {name!r}")
        key = name.strip()
        if not key:
            continue
        if not _KEY_RE.fullmatch(key):
            raise client_error(f"nats: invalid header: {key!r}")
        if isinstance(values, (str, bytes)):
            values = [values]
        for value in values:
            if isinstance(value, bytes):
                value = value.decode("utf-8", "surrogateescape")
            elif not isinstance(value, str):
                value = str(value)
            value = value.strip().translate(_NEWLINES)
            if key not in fv:
                fv[key] = value
            # a bytes value (decoded with surrogateescape above) keeps its exact bytes
            parts.append(f"{key}: {value}\r\n".encode("utf-8", "surrogateescape"))
    if len(parts) == 1:
        return None, {}
    parts.append(CRLF)
    return b"".join(parts), fv


def decode_headers(hdr: bytes | None) -> Headers:
    """``{name: [values]}`` of a header block (names as stored; order kept)."""
    out: Headers = {}
    if not hdr:
        return out
    text = hdr.decode("utf-8", "replace")
    lines = text.split("\r\n")
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            continue
        out.setdefault(name, []).append(value.lstrip(" "))
    return out


def first_values(hdr: bytes) -> dict[str, str]:
    """The server's view of a header block: each name's FIRST value (exact, case-sensitive).

    Same answers as nats-server's ``sliceHeader(key, hdr)`` for every key: a key is found only
    at the start of a line and must be followed directly by ``:``; spaces before the value are
    skipped; the value runs to the end of the line.
    """
    out: dict[str, str] = {}
    text = hdr.decode("utf-8", "surrogateescape")
    for line in text.split("\r\n")[1:]:
        name, sep, value = line.partition(":")
        if sep and name not in out:
            out[name] = value.lstrip(" ")
    return out


def header_value(hdr: bytes | None, key: str) -> str | None:
    """``sliceHeader(key, hdr)`` as a string (None when absent)."""
    if not hdr:
        return None
    return first_values(hdr).get(key)


def remove_header(hdr: bytes | None, key: str) -> bytes | None:
    """The server's ``removeHeaderIfPresent``: drop every ``key:`` line; None if none remain."""
    if not hdr:
        return hdr
    lines = hdr.split(CRLF)
    prefix = key.encode() + b":"
    kept = [lines[0]] + [ln for ln in lines[1:] if not ln.startswith(prefix)]
    out = CRLF.join(kept)
    if len(out) <= len(HDR_LINE) + len(CRLF):
        return None
    return out


def append_header(hdr: bytes | None, key: str, value: str) -> bytes:
    """The server's ``genHeader``: add ``key: value`` as the last line of the block."""
    base = hdr[: -len(CRLF)] if hdr and len(hdr) > len(CRLF) else HDR_LINE
    return base + f"{key}: {value}\r\n".encode() + CRLF
