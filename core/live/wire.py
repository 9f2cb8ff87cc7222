"""What crosses the wire to a live server: names inside API subjects, header bytes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..clock import parse_rfc3339_nano
from ..errors import ApiError

__all__ = ["encode_hdrs", "flat_headers"]


def encode_hdrs(headers: Mapping[str, str] | None, drop: Iterable[str] = ()) -> bytes | None:
    """NATS header bytes from nats-py's parsed headers (status keys left out)."""
    if not headers:
        return None
    skip = {"Status", "Description", *drop}
    lines = [f"{k}: {v}" for k, v in headers.items() if k not in skip]
    if not lines:
        return None
    return ("NATS/1.0\r\n" + "\r\n".join(lines) + "\r\n\r\n").encode()


def flat_headers(headers: Mapping[str, Any] | None) -> dict[str, str] | None:
    """nats-py takes one value per header: lists are joined with ", " (HTTP's rule)."""
    if not headers:
        return None
    out: dict[str, str] = {}
    for k, v in headers.items():
        if isinstance(v, (list, tuple)):
            out[str(k)] = ", ".join(str(x) for x in v)
        else:
            out[str(k)] = str(v)
    return out


def _name(name: str) -> str:
    """A stream name as the API subject takes it (no wildcards, dots or spaces): the
    server's own 10059-style refusal for one that can not be a stream's."""
    if not name or any(c in name for c in ".*> \t\r\n"):
        raise ApiError(400, 10059 if name else 10073, "stream not found" if name else
                       "stream name is required")
    return name


def _ts(text: Any) -> int:
    """A time the server wrote (RFC 3339) as nanoseconds; 0 when absent or unreadable."""
    if not text:
        return 0
    try:
        return parse_rfc3339_nano(str(text))
    except ValueError:
        return 0
