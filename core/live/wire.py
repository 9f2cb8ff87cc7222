"""What crosses the wire to a live server: names inside API subjects, header bytes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..clock import parse_rfc3339_nano
from ..errors import ApiError, not_found

__all__ = ["encode_hdrs", "flat_headers", "nc_publish", "repeats"]


def encode_hdrs(headers: Mapping[str, str] | None, drop: Iterable[str] = ()) -> bytes | None:
    """NATS header bytes from nats-py's parsed headers (status keys left out)."""
    if not headers:
        return None
    skip = {"Status", "Description", *drop}
    lines = [f"{k}: {v}" for k, v in headers.items() if k not in skip]
    if not lines:
        return None
    return ("NATS/1.0\r\n" + "\r\n".join(lines) + "\r\n\r\n").encode()


def repeats(headers: Mapping[str, Any] | bytes | None) -> bool:
    """Whether a header has several values (lines of the same name), or the headers are a
    header block as bytes (sent as it is: :func:`nc_publish`)."""
    if isinstance(headers, bytes):
        return True
    return bool(headers) and any(isinstance(v, (list, tuple)) and len(v) > 1
                                 for v in (headers or {}).values())


async def nc_publish(nc: Any, subject: str, data: bytes, *, reply: str = "",
                     headers: Mapping[str, Any] | bytes | None = None) -> None:
    """Publish on nats-py's connection ``nc``. A header of several values goes out as
    several lines of that name (natscli's ``-H X:1 -H X:2``, nats.go's ``Header.Add``):
    nats-py takes one value per header, so that message's HPUB is built from jetlink's own
    header block (core/headers.py ``encode_headers``) and queued as nats-py queues its own
    (its checks first: a closed or draining connection, the server's max_payload);
    otherwise nats-py publishes it. A header block given as bytes goes out as it is."""
    if not isinstance(headers, bytes) and not repeats(headers):
        await nc.publish(subject, data, reply=reply, headers=flat_headers(headers))
        return
    import nats.errors as ne
    from nats.protocol import command as prot_command

    from ..headers import encode_headers

    if nc.is_closed:
        raise ne.ConnectionClosedError
    if nc.is_draining_pubs:
        raise ne.ConnectionDrainingError
    if len(data) > nc._max_payload:
        raise ne.MaxPayloadError
    hdr = headers if isinstance(headers, bytes) else (encode_headers(headers) or b"")
    nc.stats["out_msgs"] += 1
    nc.stats["out_bytes"] += len(data)
    await nc._send_command(prot_command.hpub_cmd(subject, reply, hdr, data))
    if nc._flush_queue is not None and nc._flush_queue.empty():
        await nc._flush_pending()


def flat_headers(headers: Mapping[str, Any] | None) -> dict[str, str] | None:
    """nats-py takes one value per header: lists are joined with ", " (HTTP's rule); a
    publish sends several values as lines of their own (:func:`nc_publish`)."""
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
    server's own ``stream not found`` for one that can not be a stream's (an empty one
    too), as the engine answers it."""
    if not name or any(c in name for c in ".*> \t\r\n"):
        raise not_found(ApiError(404, 10059, "stream not found"), name, ())
    return name


def _ts(text: Any) -> int:
    """A time the server wrote (RFC 3339) as nanoseconds; 0 when absent or unreadable."""
    if not text:
        return 0
    try:
        return parse_rfc3339_nano(str(text))
    except ValueError:
        return 0


# Config refusals only the server can make, and the field each is about (the engine makes
# them too, naming the field: core/config/validate.py ``explain`` gives both the detail).
_FIELD_OF_CODE = {10074: "num_replicas", 10058: "name", 10126: "num_replicas"}


def name_the_field(err: ApiError, cfg: Any) -> ApiError:
    """A config refusal only the server makes (replicas > 1 on a single server, a name in use
    with another config) names the field and the value it refused, as the engine's does
    (core/config/validate.py ``explain``), for a stream's or a consumer's config; the code
    and text stay the server's."""
    if err.detail or err.err_code not in _FIELD_OF_CODE:
        return err
    from ..config.validate import explain

    err.field = err.field or _FIELD_OF_CODE[err.err_code]
    found: ApiError = explain(err, cfg)
    return found
