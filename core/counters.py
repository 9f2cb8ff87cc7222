"""Distributed counters as a client sees them (ADR-49): natscli's ``nats counter`` verbs.

The client side of counter streams, over the JetStream seam (core/api.py), so the same code
runs on the embedded engine and on a live server. What natscli 0.4's ``counter`` command and
orbit.go's ``counters`` package do:

- the stream: ``--stream``, else the first stream whose subjects take the subject (the
  STREAM.NAMES request with a subject filter); it must have ``allow_msg_counter`` and
  ``allow_direct``, else ``"<name>" is not a valid counter stream``;
- ``add``: a publish of an empty body with ``Nats-Incr: <value>``; the new value is the
  PubAck's ``val``;
- ``entry``: the subject's last message: its ``{"val":"N"}`` body, its ``Nats-Incr`` and its
  ``Nats-Counter-Sources`` (``{"<stream>":{"<subject>":"<value>"}}``); a subject with no
  message is ``counter not initialized for subject``;
- ``subjects``: the stream's subjects matching a pattern (``>``: all).

How the stream stores an increment is the engine's (core/streamstore/counters.py) or the
server's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import headers as H
from .errors import ApiError, JetlinkError, UsageError, nats_error
from .streamstore.counters import (
    go_int_prefix,
    int_text,
    parse_big_int,
    parse_counter_value,
    parse_sources,
)

if TYPE_CHECKING:  # pragma: no cover
    from .api import JetStreamAPI, PubAckAPI

__all__ = ["CounterEntry", "add", "counter_stream", "entry", "parse_value", "subjects"]

# orbit.go's errors (counters/errors.go) and natscli's own.
NOT_INITIALIZED = "counter not initialized for subject"
NO_COUNTERS = "no counters found"
INVALID_VALUE = "invalid value"


@dataclass(frozen=True)
class CounterEntry:
    """One counter: the subject's value, its last increment and the sources' values."""

    stream: str
    subject: str
    value: int
    incr: int | None
    sources: dict[str, dict[str, int]]

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"stream": self.stream, "subject": self.subject,
                               "val": int_text(self.value)}
        if self.incr is not None:
            doc["incr"] = int_text(self.incr)
        if self.sources:
            doc["sources"] = {s: {k: int_text(v) for k, v in sorted(vals.items())}
                              for s, vals in sorted(self.sources.items())}
        return doc


def parse_value(text: str, *, negate: bool = False, field: str = "value") -> int:
    """A counter increment typed by a user (``big.Int.SetString(s, 10)``, as natscli reads
    it: no blanks around it)."""
    v = parse_big_int(text)
    if v is None:
        raise UsageError(f"{INVALID_VALUE}: {text!r} is not a decimal integer", field=field)
    return -v if negate else v


def counter_stream(js: JetStreamAPI, subject: str | None, stream: str | None, *,
                   by_option: bool = True) -> str:
    """The counter stream the verbs act on (checked: counters and direct access on);
    ``by_option``: the verb takes ``--stream`` (get, view, list; increment and decrement
    publish, and the stream is the one whose subjects match)."""
    name = stream or ""
    if not name:
        names = js.stream_names(subject or ">")
        if not names:
            missing = nats_error("StreamNotFound")
            missing.detail = f"no stream's subjects match {subject}" + (
                "; give its stream with --stream" if by_option else
                " (a counter is a subject of a stream made with --allow-counter "
                "--allow-direct)")
            raise missing
        name = names[0]
    cfg = js.stream_info(name).config
    if not (cfg.allow_msg_counter and cfg.allow_direct):
        err = JetlinkError(f'"{name}" is not a valid counter stream', field="stream")
        err.detail = ("a counter stream has allow_msg_counter and allow_direct "
                      "(stream add --allow-counter --allow-direct)")
        raise err
    return name


def add(js: JetStreamAPI, subject: str, value: int) -> PubAckAPI:
    """Add ``value`` to the counter of ``subject``: the PubAck (``val``: the new value)."""
    ack = js.publish(subject, b"", {H.INCR: [int_text(value)]})
    if ack is None or not ack.val:
        raise JetlinkError("counter increment response missing value")
    return ack


def entry(js: JetStreamAPI, stream: str, subject: str, *,
          value_only: bool = False) -> CounterEntry:
    """The counter of ``subject`` in ``stream`` (orbit.go's ``Get``; ``value_only``: its
    ``Load``, which reads the value alone: no sources, no increment)."""
    try:
        msg = js.get_msg(stream, last_by_subj=subject)
    except ApiError as err:
        if err.err_code == 10037:
            raise JetlinkError(f"{NOT_INITIALIZED}: {subject}", field="subject") from None
        raise
    val = parse_counter_value(msg.data)
    if val is None or parse_big_int(val) is None:
        raise JetlinkError(f"{INVALID_VALUE}: the last message of {subject} in {stream} "
                           "is not a counter")
    if value_only:
        return CounterEntry(stream, subject, go_int_prefix(val), None, {})
    hdr = msg.hdr
    sources: dict[str, dict[str, int]] = {}
    text = H.header_value(hdr, H.COUNTER_SOURCES)
    parsed = parse_sources(text) if text else {}
    if parsed is None:
        raise JetlinkError(f"failed to parse sources of {subject} in {stream}")
    for origin, vals in parsed.items():
        sources[origin] = {}
        for k, v in (vals or {}).items():
            n = parse_big_int(v)
            if n is None:  # orbit.go parseSources: each value a big.Int, or Get fails
                raise JetlinkError(f"failed to parse sources of {subject} in {stream}: "
                                   f"invalid counter value for subject {k}: {v}")
            sources[origin][k] = n
    incr_text = H.header_value(hdr, H.INCR)
    incr = parse_big_int(incr_text) if incr_text else None
    if incr_text and incr is None:
        raise JetlinkError(f"invalid counter increment value: {incr_text} (the last message "
                           f"of {subject} in {stream})")
    return CounterEntry(stream, subject, go_int_prefix(val), incr, sources)


def subjects(js: JetStreamAPI, stream: str, pattern: str) -> list[str]:
    """The counters (subjects) of ``stream`` matching ``pattern``, sorted."""
    found = sorted(js.subjects(stream, pattern or ">"))
    if not found:
        raise JetlinkError(NO_COUNTERS)
    return found
