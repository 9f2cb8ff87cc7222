"""Where a check's thresholds come from: the command's flags, else the stream's or consumer's
metadata ``io.nats.monitor.<flag-name>`` (natscli's metadata based monitoring: a stream with
``io.nats.monitor.lag-critical: 200`` is checked against 200 unless ``--lag-critical`` says
otherwise), else off.

A threshold is declared once, as a field of :class:`StreamThresholds` or
:class:`ConsumerThresholds` whose flag name is the field's name with dashes; its kind says how
a metadata value reads: a whole number (``uint`` refuses a sign), a duration (jsm.go's
ParseDuration, core/durations.py ``parse_jsm_duration``, held as nanoseconds: natscli's
units, a long unit's fraction kept to the nanosecond, a bare number other than 0 refused,
"missing unit"; a flag reads as natscli's flags read, ``parse_duration``) or a boolean (Go's
``strconv.ParseBool`` spellings). A value that does not read makes the check CRITICAL
"could not configure based on metadata: ..." (jsm.go monitor CheckStreamHealth).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from ..durations import DurationError, parse_jsm_duration
from ..errors import clip
from ..numbers import INT64_MAX, INT64_MIN, UINT64_MAX, IntTextError, parse_int

__all__ = ["META_PREFIX", "ConsumerThresholds", "StreamThresholds", "ThresholdError",
           "meta_key"]

META_PREFIX = "io.nats.monitor."

_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")

T = TypeVar("T", bound="_Thresholds")


class ThresholdError(ValueError):
    """A metadata threshold that does not read as its kind; the message names the key."""


def meta_key(name: str) -> str:
    """The metadata key of threshold ``name`` (a field name): ``io.nats.monitor.lag-critical``."""
    return META_PREFIX + name.replace("_", "-")


def _kind(k: str) -> Any:
    return field(default=0 if k != "bool" else False, metadata={"kind": k})


def _parse(key: str, kind: str, text: str) -> int | bool:
    # read as jsm.go reads it (strconv.ParseBool / ParseInt / ParseUint: the text as stored,
    # surrounding blanks included, never trimmed; jsm.ParseDuration trims them)
    value = text
    if kind in ("duration", "duration+"):
        try:
            ns = parse_jsm_duration(value)
        except DurationError as err:
            raise ThresholdError(f"{key}: {err}") from None
        if kind == "duration+" and ns < 0:  # (jetlink's own checks: as their flags)
            raise ThresholdError(f"{key}: {clip(text)!r} is negative: a time threshold is 0 "
                                 "or more")
        return ns
    if kind == "bool":
        if value in _TRUE or value in _FALSE:
            return value in _TRUE
        raise ThresholdError(f"{key}: {text!r} is not a boolean (true or false)")
    pattern = value[1:] if kind == "int" and value[:1] in "+-" else value
    if not pattern.isascii() or not pattern.isdigit():
        whole = "whole number" if kind == "int" else "whole number of 0 or more"
        raise ThresholdError(f"{key}: {clip(text)!r} is not a {whole}")
    # Go's strconv.ParseInt / ParseUint, 64 bits: past the range is "value out of range"
    low, high = (INT64_MIN, INT64_MAX) if kind == "int" else (0, UINT64_MAX)
    try:
        return parse_int(value, low, high)
    except IntTextError:
        raise ThresholdError(f"{key}: {clip(value)} is out of range ({low} to {high})"
                             ) from None


@dataclass
class _Thresholds:
    @classmethod
    def resolve(cls: type[T], flags: Mapping[str, Any], metadata: Mapping[str, str] | None
                ) -> T:
        """The thresholds from ``flags`` (field name -> value, None when the flag was not
        given), else from ``metadata``, else off. Raises ThresholdError for a metadata value
        that does not read, a flag given for it or not (as jsm.go reads every key the
        metadata holds: the stream's configuration is wrong either way)."""
        out = cls()
        meta = metadata or {}
        for f in fields(cls):
            if meta_key(f.name) in meta:
                setattr(out, f.name, _parse(meta_key(f.name), f.metadata["kind"],
                                            meta[meta_key(f.name)]))
            given = flags.get(f.name)
            if given is not None:
                setattr(out, f.name, given)
        return out


@dataclass
class StreamThresholds(_Thresholds):
    """``server check stream``: durations in nanoseconds, 0 = not checked. ``enabled``
    (``io.nats.monitor.enabled``) is read and must be a boolean, as jsm.go's
    populateStreamHealthCheckOptions reads it; the check of one named stream does not
    depend on it there either."""

    enabled: bool = _kind("bool")
    lag_critical: int = _kind("uint")
    seen_critical: int = _kind("duration")
    min_sources: int = _kind("int")
    max_sources: int = _kind("int")
    peer_expect: int = _kind("int")
    peer_lag_critical: int = _kind("uint")
    peer_seen_critical: int = _kind("duration")
    msgs_warn: int = _kind("uint")
    msgs_critical: int = _kind("uint")
    subjects_warn: int = _kind("int")
    subjects_critical: int = _kind("int")


@dataclass
class ConsumerThresholds(_Thresholds):
    """``server check consumer``: durations in nanoseconds, 0 (or less) = not checked;
    ``enabled`` as for a stream (jsm.go populateConsumerHealthCheckOptions)."""

    enabled: bool = _kind("bool")
    outstanding_ack_critical: int = _kind("int")
    waiting_critical: int = _kind("int")
    unprocessed_critical: int = _kind("int")
    last_delivery_critical: int = _kind("duration")
    last_ack_critical: int = _kind("duration")
    redelivery_critical: int = _kind("int")
    pinned: bool = _kind("bool")
