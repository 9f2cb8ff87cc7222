"""The bulk jobs: functions DataFrame -> DataFrame over the lake schema (core/lake.py).

Each job produces exactly what the engine's pump (core/replication.py) would store from the
same input, with the rules compiled from core: subject filters and transforms
(sparkops/rules.py), the header rules of ``_store_all``, the target's limits as
``StreamTxn._store`` applies them message by message (sparkops/limits.py).

- ``mirror``: origin sequences and timestamps kept (a stored time never goes back: the pump
  stores at ``max(origin time, last stored time)``), gaps kept, ``Nats-Expected-*`` and
  ``Nats-Batch-*`` headers dropped, filter / subject transforms, opt_start_seq /
  opt_start_time, then the target's limits.
- ``source``: per origin: start options, filters, the first matching transform then the
  target's own transform; ``Nats-Stream-Source`` written as the pump writes it (replacing one
  already there); origins merged in the pump's order: origin time, then origin name, then the
  agreement's index name, then origin sequence; ``Nats-Msg-Id`` duplicates dropped (the first
  in that order is kept; the whole job runs at one instant, so every earlier id is inside the
  duplicate window); new dense sequences from the target's next sequence, every message stamped
  with the job's time; then the target's limits.

Refused with a clear error (the pump would stall on them or needs per-message state a bulk job
does not carry): discard-new limits, interest / work-queue retention, counters, sealed targets,
subject delete markers, messages with ``Nats-TTL``, invalid ``Nats-Rollup`` values, messages
over the target's max_msg_size or with headers over 64 KiB.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from jetlink.core.config.stream import StreamConfig, StreamSource
from jetlink.core.replication import iname_of, source_filters
from jetlink.core.streams import (FILE_HEADER_OVERHEAD, FILE_RECORD_OVERHEAD,
                                  MAX_HEADER_SIZE, MEM_RECORD_OVERHEAD, StreamDef)
from jetlink.core.clock import parse_rfc3339_nano
from jetlink.core.transform import compile_transform

from . import limits as L
from . import rules as R

LATIN1 = "ISO-8859-1"  # bytes <-> characters one to one: header rules run on strings
_MIRROR_STRIP = ("Nats-Expected-", "Nats-Batch-")
_SOURCE_STRIP = ("Nats-Stream-Source:", "Nats-Expected-", "Nats-Batch-")


class JobError(Exception):
    """A bulk job refused its input or target (the message says which rule)."""


@dataclass
class Origin:
    """One input of a source job: its rows, the agreement (a StreamSource of the target's
    config) and the origin stream's identity (the hash ``Nats-Stream-Source`` carries)."""

    df: Any
    src: StreamSource
    identity: str


def target_def(cfg: StreamConfig) -> StreamDef:
    """The engine's compiled view of a target config (limits, flags, transform)."""
    return StreamDef(0, cfg, 0, "")


def check_target(d: StreamDef) -> None:
    """Targets whose rules need the pump's per-message state are refused."""
    why = None
    if d.sealed:
        why = "the target is sealed"
    elif d.discard_new and (d.max_msgs or d.max_bytes or (d.max_per and d.discard_new_per)):
        why = "the target's limits discard new messages (the pump stalls instead)"
    elif d.retention != "limits":
        why = f"the target's retention is {d.retention} (consumer interest decides storage)"
    elif d.allow_counter:
        why = "the target is a counter stream"
    elif d.sdm_ttl_s:
        why = "the target writes subject delete markers"
    if why:
        raise JobError(f"bulk jobs cannot fill this target: {why}; use `jetlink replicate`")


# --------------------------------------------------------------------------------------------
# header rules (on the latin-1 view of the header block)
# --------------------------------------------------------------------------------------------
def _hstr(col: Any) -> Any:
    from pyspark.sql import functions as F

    return F.decode(col, LATIN1)


def strip_headers(h: Any, prefixes: Sequence[str]) -> Any:
    """``_strip_prefixes``: drop the lines starting with a prefix; a block left with no line
    becomes null (unchanged when nothing was dropped)."""
    import re

    from pyspark.sql import functions as F

    alt = "|".join(re.escape(p) for p in prefixes)
    out = F.regexp_replace(h, rf"(?s)\r\n(?:{alt})(?:(?!\r\n).)*", "")
    return (F.when(h.isNull(), F.lit(None).cast("string"))
            .when(out == h, h)
            .when(F.length(out) <= 12, F.lit(None).cast("string"))
            .otherwise(out))


def first_value(h: Any, name: str) -> Any:
    """``first_values(hdr).get(name)`` (null when absent)."""
    import re

    from pyspark.sql import functions as F

    pattern = rf"(?s)\r\n{re.escape(name)}: *((?:(?!\r\n).)*)"
    return F.when(h.rlike(pattern), F.regexp_extract(h, pattern, 1))


def _utf8_as_latin1(col: Any) -> Any:
    from pyspark.sql import functions as F

    return F.decode(F.encode(col, "UTF-8"), LATIN1)


def _size(d: StreamDef, subject: Any, hdr: Any, data: Any) -> Any:
    """``msg_size``: the bytes a message counts for the target's limits."""
    from pyspark.sql import functions as F

    slen, mlen = F.octet_length(subject), F.coalesce(F.octet_length(data), F.lit(0))
    hlen = F.coalesce(F.length(hdr), F.lit(0))  # latin-1: one character a byte
    if d.file:
        return (F.lit(FILE_RECORD_OVERHEAD) + slen + mlen
                + F.when(hlen > 0, hlen + FILE_HEADER_OVERHEAD).otherwise(0)).cast("long")
    return (F.lit(MEM_RECORD_OVERHEAD) + slen + hlen + mlen).cast("long")


def _start_cut(df: Any, src: StreamSource) -> Any:
    """An agreement's start options on a fresh target (``_initial_start``): by sequence, by
    time (the first message stored at or after it), else everything."""
    from pyspark.sql import functions as F

    if src.opt_start_seq > 0:
        return df.where(F.col("seq") >= src.opt_start_seq)
    if src.opt_start_time:
        t = parse_rfc3339_nano(src.opt_start_time)
        first = df.where(F.col("ts") >= t).agg(F.min("seq")).first()[0]
        if first is None:
            return df.limit(0)
        return df.where(F.col("seq") >= first)
    return df


def _checks(d: StreamDef) -> list[tuple[str, Any]]:
    """Per-row conditions that make the pump stall (the job refuses them), as
    ``(what, condition)`` over the columns ``h`` (latin-1 header), ``data``."""
    from pyspark.sql import functions as F

    h = F.col("h")
    hlen = F.coalesce(F.length(h), F.lit(0))
    mlen = F.coalesce(F.octet_length("data"), F.lit(0))
    out = [("carries Nats-TTL (per-message TTLs are not carried by bulk jobs)",
            first_value(h, "Nats-TTL").isNotNull()),
           ("has headers over 65535 bytes", hlen > MAX_HEADER_SIZE)]
    if d.allow_rollup_purge:
        roll = F.lower(first_value(h, "Nats-Rollup"))
        out.append(("has an invalid Nats-Rollup value",
                    roll.isNotNull() & (roll != "") & ~roll.isin("sub", "all")))
    if d.max_msg_size >= 0:
        out.append((f"exceeds the target's max_msg_size {d.max_msg_size}",
                    (hlen > d.max_msg_size) | (mlen > F.lit(d.max_msg_size) - hlen)))
    return out


def _rollup_col(d: StreamDef) -> Any:
    from pyspark.sql import functions as F

    if not d.allow_rollup_purge:
        return F.lit(None).cast("string")
    roll = F.lower(first_value(F.col("h"), "Nats-Rollup"))
    return F.when(roll.isin("sub", "all"), roll)


# --------------------------------------------------------------------------------------------
# mirror
# --------------------------------------------------------------------------------------------
def mirror(df: Any, target: StreamConfig, *, now_ns: int) -> Any:
    """The mirror job: ``df`` holds the origin's messages (lake schema); the result is what
    the target stores (lake schema, in sequence order)."""
    from pyspark.sql import functions as F

    src = target.mirror
    if src is None:
        raise JobError(f"stream {target.name} is not a mirror")
    d = target_def(target)
    check_target(d)
    trs = [compile_transform(t.src or ">", t.dest) for t in src.subject_transforms]
    rows = _start_cut(df, src).where(R.subject_filter(F.col("subject"), source_filters(src)))
    h = strip_headers(_hstr(F.col("headers")), _MIRROR_STRIP)
    rows = rows.select(
        F.col("seq"), F.col("ts").alias("ots"),
        R.apply_like_pump(F.col("subject"), trs, d.transform).alias("subject"),
        h.alias("h"), F.col("data"))
    out = L.apply(rows, d, _checks(d), _rollup_col(d), now_ns=now_ns, mode="mirror",
                  size=lambda c: _size(d, c["subject"], c["h"], c["data"]))
    return _to_lake(out, target.name)


# --------------------------------------------------------------------------------------------
# source
# --------------------------------------------------------------------------------------------
def source(origins: Sequence[Origin], target: StreamConfig, *, now_ns: int,
           first_seq: int = 1) -> Any:
    """The source job over one or more origins (each a StreamSource of the target): what the
    target (never written: every message is stamped ``now_ns``) stores when its next sequence
    is ``first_seq`` (lake schema, in sequence order)."""
    from pyspark.sql import functions as F

    if not origins:
        raise JobError("a source job needs at least one origin (--from)")
    d = target_def(target)
    check_target(d)
    parts = []
    for o in origins:
        src = o.src
        iname = iname_of(src)
        name, flt, dest = iname.split(" ")
        trs = [compile_transform(t.src or ">", t.dest) for t in src.subject_transforms]
        rows = _start_cut(o.df, src).where(
            R.subject_filter(F.col("subject"), source_filters(src)))
        stripped = strip_headers(_hstr(F.col("headers")), _SOURCE_STRIP)
        value = _utf8_as_latin1(F.concat(F.lit(f"{name} "), F.col("seq").cast("string"),
                                         F.lit(f" {flt} {dest} "), F.col("subject"),
                                         F.lit(f" {o.identity}")))
        base = F.when(stripped.isNull() | (F.length(stripped) <= 2), F.lit("NATS/1.0\r\n")) \
            .otherwise(F.expr("substring(_s, 1, length(_s) - 2)"))
        rows = (rows.withColumn("_s", stripped)
                .select(F.col("ts").alias("ots"), F.lit(src.name).alias("_origin"),
                        F.lit(iname).alias("_iname"), F.col("seq").alias("_oseq"),
                        R.apply_like_pump(F.col("subject"), trs, d.transform).alias("subject"),
                        F.concat(base, F.lit("Nats-Stream-Source: "), value,
                                 F.lit("\r\n\r\n")).alias("h"),
                        F.col("data")))
        parts.append(rows)
    rows = parts[0]
    for p in parts[1:]:
        rows = rows.unionByName(p)
    if d.dup_window:
        mid = first_value(F.col("h"), "Nats-Msg-Id")
        rows = L.drop_duplicate_ids(rows, mid, ["ots", "_origin", "_iname", "_oseq"])
    out = L.apply(rows, d, _checks(d), _rollup_col(d), now_ns=now_ns, mode="source",
                  size=lambda c: _size(d, c["subject"], c["h"], c["data"]),
                  order=["ots", "_origin", "_iname", "_oseq"], first_seq=first_seq,
                  ts=now_ns,
                  describe=lambda r: f"message {r['_oseq']} of {r['_origin']}")
    return _to_lake(out, target.name)


def _to_lake(df: Any, name: str) -> Any:
    from pyspark.sql import functions as F

    return df.select(
        F.lit(name).alias("stream"), F.lit(0).cast("int").alias("partition"),
        F.col("seq").cast("long").alias("seq"), F.col("subject"),
        F.lit(None).cast("binary").alias("key"), F.col("ts").cast("long").alias("ts"),
        F.encode(F.col("h"), LATIN1).alias("headers"), F.col("data"))


__all__ = ["JobError", "Origin", "check_target", "first_value", "mirror", "source",
           "strip_headers", "target_def"]
