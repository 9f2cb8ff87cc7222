"""Kafka's rules for topic names, partition counts and topic configurations (Kafka's
``Topic.validate``, CreateTopics' checks, ``LogConfig``'s definitions and texts), the
defaults of every topic config, the configs a mirror topic takes from its source topic, and
:class:`Policy`: the effective configs the engine acts on, parsed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import TOO_DEEP, clip
from ..numbers import IntTextError, parse_int
from .errors import KafkaError
from .topic_records import MAX_PARTITIONS

__all__ = [
    "CONFIG_DEFS",
    "LONG_MAX",
    "MAX_TOPIC_NAME",
    "MIRROR_SYNCED_CONFIGS",
    "TOPIC_CONFIG_DEFAULTS",
    "Policy",
    "check_topic_collision",
    "validate_partitions",
    "validate_topic_config",
    "validate_topic_configs",
    "validate_topic_name",
]

_TOPIC_NAME_RE = re.compile(r"[a-zA-Z0-9._-]+")
MAX_TOPIC_NAME = 249


# Java's Double.parseDouble (FloatingDecimal.readJavaFormatString): ASCII digits, an
# optional exponent and f/F/d/D suffix, NaN, Infinity, hexadecimal with a binary exponent
_JAVA_DOUBLE = re.compile(
    r"(?P<sign>[+-]?)(?:(?P<special>NaN|Infinity)"
    r"|(?P<dec>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<hex>0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+))"
    r"(?P<suffix>[fFdD]?)")
# Java's Integer.parseInt / Long.parseLong: a sign, then digits (Character.digit: any
# script's decimal digits, as Python's \d)
_JAVA_INT = re.compile(r"[+-]?\d+")
_JAVA_SPACE = "".join(map(chr, range(0x21)))  # String.trim: every char up to U+0020


def java_trim(text: str) -> str:
    """Java's ``String.trim`` (ConfigDef trims a value before parsing it): the characters up
    to U+0020 at both ends, control characters included, and no other space."""
    return text.strip(_JAVA_SPACE)


def java_double(text: str) -> float | None:
    """The value of ``text`` as Java's ``Double.parseDouble`` reads it (trimmed; ``0.5d``,
    ``1e3f`` (a suffix only skipped), ``0x1p-1``, ``NaN``, ``-Infinity``), None where Java
    throws."""
    m = _JAVA_DOUBLE.fullmatch(java_trim(text))
    if m is None or (m["special"] and m["suffix"]):
        return None
    if m["special"]:
        x = float("nan") if m["special"] == "NaN" else float("inf")
    elif m["hex"]:
        x = float.fromhex(m["hex"])
    else:
        x = float(m["dec"])
    return -x if m["sign"] == "-" else x  # (a suffix is lexical: parseDouble's a double)


def java_long(text: str) -> str:
    """``text`` trimmed as Java does, its digits of any script made ASCII (Long.parseLong
    reads them all): the form :func:`parse_int` checks."""
    trimmed = java_trim(text)
    if not _JAVA_INT.fullmatch(trimmed) or trimmed.isascii():
        return trimmed
    import unicodedata

    return "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in trimmed)


def validate_topic_name(name: Any) -> str:
    """Kafka's ``Topic.validate``: ``[a-zA-Z0-9._-]``, 1..249 characters, not ``.`` / ``..``.
    KafkaError INVALID_TOPIC_EXCEPTION ``Topic name is invalid: ...`` otherwise."""
    reason = None
    if not isinstance(name, str) or name == "":
        reason = "the empty string is not allowed"
    elif name == ".":
        reason = "'.' is not allowed"
    elif name == "..":
        reason = "'..' is not allowed"
    elif len(name) > MAX_TOPIC_NAME:
        reason = f"the length of '{name}' is longer than the max allowed length {MAX_TOPIC_NAME}"
    elif not _TOPIC_NAME_RE.fullmatch(name):
        reason = (f"'{name}' contains one or more characters other than ASCII alphanumerics, "
                  "'.', '_' and '-'")
    if reason:
        err = KafkaError("INVALID_TOPIC_EXCEPTION", f"Topic name is invalid: {reason}",
                         field="name")
        if isinstance(name, str) and any("\udc80" <= c <= "\udcff" for c in name):
            # bytes that are not UTF-8 (a command line's, held as lone surrogates): the CLI
            # names the argument, a usage error (cli/launch.py)
            err.not_utf8 = name  # type: ignore[attr-defined]
        raise err
    return name


def check_topic_collision(name: str, others: Iterable[str]) -> None:
    """Kafka's rule that topic names differing only in '.' versus '_' collide (their metric
    names would be the same): KafkaError INVALID_TOPIC_EXCEPTION ``Topic 'a.b' collides with
    existing topic: a_b`` for the first of ``others`` that collides with ``name``."""
    if "." not in name and "_" not in name:
        return
    unified = name.replace(".", "_")
    for other in others:
        if other != name and other.replace(".", "_") == unified:
            raise KafkaError("INVALID_TOPIC_EXCEPTION",
                             f"Topic '{name}' collides with existing topic: {other}", field="name")


def validate_partitions(partitions: Any) -> int:
    """A new topic's partition count: at least 1 (Kafka's INVALID_PARTITIONS text) and at
    most :data:`MAX_PARTITIONS` (jetlink's limit); KafkaError INVALID_PARTITIONS otherwise."""
    if not isinstance(partitions, int) or isinstance(partitions, bool) or partitions <= 0:
        raise KafkaError("INVALID_PARTITIONS",
                         "Number of partitions was set to an invalid non-positive value.",
                         field="partitions")
    if partitions > MAX_PARTITIONS:
        raise KafkaError("INVALID_PARTITIONS",
                         f"Number of partitions {partitions} is above jetlink's limit of "
                         f"{MAX_PARTITIONS} per topic.", field="partitions")
    return partitions


LONG_MAX = 9223372036854775807
_INT_MAX = 2147483647

# name -> (type, default, rule); rule: (min, max) for numbers, a tuple of choices for
# strings / lists, None for anything; "json" for JSON text.
CONFIG_DEFS: dict[str, tuple[str, str, Any]] = {
    "cleanup.policy": ("list", "delete", ("compact", "delete")),
    "compression.gzip.level": ("int", "-1", "gzip"),
    "compression.lz4.level": ("int", "9", (1, 17)),
    "compression.type": ("string", "producer",
                         ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")),
    "compression.zstd.level": ("int", "3", (-131072, 22)),
    "confluent.placement.constraints": ("json", "", None),
    "delete.retention.ms": ("long", "86400000", (0, None)),
    "file.delete.delay.ms": ("long", "60000", (0, None)),
    "flush.messages": ("long", str(LONG_MAX), (1, None)),
    "follower.replication.throttled.replicas": ("replicas", "", None),
    "flush.ms": ("long", str(LONG_MAX), (0, None)),
    "index.interval.bytes": ("int", "4096", (0, None)),
    "leader.replication.throttled.replicas": ("replicas", "", None),
    "local.retention.bytes": ("long", "-2", (-2, None)),
    "local.retention.ms": ("long", "-2", (-2, None)),
    "max.compaction.lag.ms": ("long", str(LONG_MAX), (1, None)),
    "max.message.bytes": ("int", "1048588", (0, None)),
    "message.downconversion.enable": ("boolean", "true", None),
    "message.format.version": ("version", "3.0-IV1", None),
    "message.timestamp.after.max.ms": ("long", str(LONG_MAX), (0, None)),
    "message.timestamp.before.max.ms": ("long", str(LONG_MAX), (0, None)),
    "message.timestamp.difference.max.ms": ("long", str(LONG_MAX), (0, None)),
    "message.timestamp.type": ("string", "CreateTime", ("CreateTime", "LogAppendTime")),
    "min.cleanable.dirty.ratio": ("double", "0.5", (0, 1)),  # between(0, 1): Integer bounds
    "min.compaction.lag.ms": ("long", "0", (0, None)),
    "min.insync.replicas": ("int", "1", (1, None)),
    "preallocate": ("boolean", "false", None),
    "remote.log.copy.disable": ("boolean", "false", None),
    "remote.log.delete.on.disable": ("boolean", "false", None),
    "remote.storage.enable": ("boolean", "false", None),
    "retention.bytes": ("long", "-1", (None, None)),
    "retention.ms": ("long", "604800000", (-1, None)),
    "segment.bytes": ("int", "1073741824", (14, None)),
    "segment.index.bytes": ("int", "10485760", (4, None)),
    "segment.jitter.ms": ("long", "0", (0, None)),
    "segment.ms": ("long", "604800000", (1, None)),
    "unclean.leader.election.enable": ("boolean", "false", None),
}

TOPIC_CONFIG_DEFAULTS: dict[str, str] = {name: d[1] for name, d in CONFIG_DEFS.items()}

# MetadataVersion's versions (message.format.version's MetadataVersionValidator): a release
# and how many IVs it had; "x.y" (three parts before 1.0) names its latest IV
_RELEASE_IVS = {
    "0.8.0": 0, "0.8.1": 0, "0.8.2": 0, "0.9.0": 0, "0.10.0": 2, "0.10.1": 3, "0.10.2": 1,
    "0.11.0": 3, "1.0": 1, "1.1": 1, "2.0": 2, "2.1": 3, "2.2": 2, "2.3": 2, "2.4": 2,
    "2.5": 1, "2.6": 1, "2.7": 3, "2.8": 2, "3.0": 2, "3.1": 1, "3.2": 1, "3.3": 4, "3.4": 1,
    "3.5": 3, "3.6": 3, "3.7": 5, "3.8": 1, "3.9": 1,
}
_METADATA_VERSIONS = frozenset(
    [*_RELEASE_IVS, *(f"{r}-IV{i}" for r, n in _RELEASE_IVS.items() for i in range(n))])


def _metadata_version_valid(text: str) -> bool:
    """MetadataVersion.fromVersionString: the first three dot-separated parts of a 0.x
    version, two of any other, one of the known versions."""
    parts = text.split(".")
    keep = 3 if text.startswith("0.") else 2
    return (text if keep >= len(parts) else ".".join(parts[:keep])) in _METADATA_VERSIONS

# Configurations a mirror topic always takes from its source topic (with the partition
# count): users cannot alter them while the topic is a mirror (Confluent's list, in its
# Mirror Topics documentation).
MIRROR_SYNCED_CONFIGS: tuple[str, ...] = (
    "max.message.bytes",
    "cleanup.policy",
    "retention.bytes",
    "retention.ms",
    "delete.retention.ms",
    "min.compaction.lag.ms",
    "max.compaction.lag.ms",
    "message.timestamp.type",
    "message.timestamp.difference.max.ms",
)


def _invalid(key: str, value: Any, rule: str) -> KafkaError:
    # Kafka's ConfigException text: "Invalid value V for configuration K: RULE"
    return KafkaError("INVALID_CONFIG",
                      f"Invalid value {clip(str(value))} for configuration {key}: {rule}",
                      field=key)


def unknown_config(key: Any) -> KafkaError:
    """INVALID_CONFIG for a topic config name Kafka does not know (its text), the closest
    known one for people (core/errors.py ``did_you_mean``)."""
    from ..errors import did_you_mean

    err = KafkaError("INVALID_CONFIG", f"Unknown topic config name: {key}", field=str(key))
    err.detail = did_you_mean(str(key), CONFIG_DEFS) if isinstance(key, str) else None
    return err


def validate_topic_config(key: Any, value: Any) -> str:
    """The value to store for topic config ``key`` (the given text, trimmed), or KafkaError
    INVALID_CONFIG naming the key and the rule (Kafka's texts: ``Unknown topic config name:
    k``, ``Invalid value v for configuration k: Value must be at least 0`` ...)."""
    if not isinstance(key, str) or key not in CONFIG_DEFS:
        raise unknown_config(key)
    kind, _default, rule = CONFIG_DEFS[key]
    if value is None:
        raise _invalid(key, value, "Value must be non-null")
    if isinstance(value, bool):
        value = "true" if value else "false"
    text = java_trim(str(value))
    if kind in ("int", "long"):
        limit = _INT_MAX if kind == "int" else LONG_MAX
        try:
            n = parse_int(java_long(text), -limit - 1, limit)
        except IntTextError:
            raise _invalid(key, value, f"Not a number of type {kind.upper()}") from None
        if rule == "gzip":
            if n > 9 or (n < 1 and n != -1):
                raise _invalid(key, value, "Value must be between 1 and 9 or equal to -1")
        elif rule is not None:
            low, high = rule
            if low is not None and n < low:
                raise _invalid(key, value, f"Value must be at least {low}")
            if high is not None and n > high:
                raise _invalid(key, value, f"Value must be no more than {high}")
    elif kind == "double":
        # Java's Double.parseDouble (no "_" between digits nor Python's "inf" spellings,
        # which float() would take)
        x = java_double(text)
        if x is None:
            raise _invalid(key, value, "Not a number of type DOUBLE")
        low, high = rule  # ConfigDef.Range: NaN passes both comparisons, as in Java
        if x < low:
            raise _invalid(key, value, f"Value must be at least {low}")
        if x > high:
            raise _invalid(key, value, f"Value must be no more than {high}")
    elif kind == "boolean":
        if text.lower() not in ("true", "false"):
            raise _invalid(key, value, "Expected value to be either true or false")
        if key == "remote.storage.enable" and text.lower() == "true":
            # LogConfig.validateRemoteStorageOnlyIfSystemEnabled: this broker has no tiered
            # storage (remote.log.storage.system.enable is false)
            raise KafkaError("INVALID_CONFIG", "Tiered Storage functionality is disabled in "
                             "the broker. Topic cannot be configured with remote log storage.",
                             field=key)
    elif kind == "replicas":
        # ThrottledReplicaListValidator: '*' or partitionId:brokerId pairs, a LIST
        items = [i.strip() for i in re.split(r"\s*,\s*", text)] if text else []
        if not (all(re.fullmatch(r"(?:[0-9]+:[0-9]+)?", i) for i in items)
                or "".join(items) == "*"):
            raise KafkaError(
                "INVALID_CONFIG", f"Invalid value [{clip(', '.join(items))}] for configuration "
                f"{key}: {key} must be the literal '*' or a list of replicas in the following "
                "format: [partitionId]:[brokerId],[partitionId]:[brokerId],...", field=key)
    elif kind == "version":
        if not _metadata_version_valid(text):
            raise _invalid(key, value, f"Version {clip(text)} is not a valid version")
    elif kind == "string":
        if text not in rule:
            raise _invalid(key, value, f"String must be one of: {', '.join(rule)}")
    elif kind == "list":
        items = [] if text == "" else re.split(r"\s*,\s*", text)
        for item in items:
            if item not in rule:
                raise _invalid(key, value, f"String must be one of: {', '.join(rule)}")
    elif kind == "json":
        if text:
            try:
                json.loads(text)
            except ValueError as exc:
                raise _invalid(key, value, f"Value must be JSON text ({exc})") from None
            except RecursionError:
                raise _invalid(key, value, f"Value must be JSON text ({TOO_DEEP})") from None
    return text


def validate_topic_configs(configs: Mapping[str, Any] | None,
                           base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every config of ``configs`` validated (:func:`validate_topic_config`), then the
    cross-config rule of Kafka's ``LogConfig.validateValues`` over ``base`` + ``configs``
    (``min.compaction.lag.ms`` <= ``max.compaction.lag.ms``). Returns the validated ones."""
    out = {key: validate_topic_config(key, value) for key, value in (configs or {}).items()}
    merged = {**TOPIC_CONFIG_DEFAULTS, **(base or {}), **out}
    lo, hi = int(merged["min.compaction.lag.ms"]), int(merged["max.compaction.lag.ms"])
    if lo > hi:
        raise KafkaError(
            "INVALID_CONFIG",
            f"conflict topic config setting min.compaction.lag.ms ({lo}) > "
            f"max.compaction.lag.ms ({hi})", field="min.compaction.lag.ms")
    return out


@dataclass(frozen=True)
class Policy:
    """The effective configs the engine acts on, parsed."""

    delete: bool
    compact: bool
    retention_ms: int
    retention_bytes: int
    max_message_bytes: int
    log_append_time: bool
    ts_before_ms: int
    ts_after_ms: int
    min_lag_ms: int
    max_lag_ms: int
    dirty_ratio: float
    delete_retention_ms: int

    @classmethod
    def of(cls, configs: Mapping[str, str]) -> Policy:
        c = {**TOPIC_CONFIG_DEFAULTS, **configs}
        policy = {p for p in re.split(r"\s*,\s*", c["cleanup.policy"].strip()) if p}
        diff = int(c["message.timestamp.difference.max.ms"])
        return cls(
            delete="delete" in policy,
            compact="compact" in policy,
            retention_ms=int(c["retention.ms"]),
            retention_bytes=int(c["retention.bytes"]),
            max_message_bytes=int(c["max.message.bytes"]),
            log_append_time=c["message.timestamp.type"] == "LogAppendTime",
            ts_before_ms=min(int(c["message.timestamp.before.max.ms"]), diff),
            ts_after_ms=min(int(c["message.timestamp.after.max.ms"]), diff),
            min_lag_ms=int(c["min.compaction.lag.ms"]),
            max_lag_ms=int(c["max.compaction.lag.ms"]),
            dirty_ratio=java_double(c["min.cleanable.dirty.ratio"]) or 0.0,
            delete_retention_ms=int(c["delete.retention.ms"]),
        )
