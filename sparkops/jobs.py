"""The bulk jobs: functions DataFrame -> DataFrame over the lake schema (core/lake.py).

Each job produces exactly what the engine's pump (core/replication.py) would store from the
same input, with the rules compiled from core: the agreement's copy rules (core/copyrules.py:
headers stripped and added, dedupe, target subject, refusals), subject filters and
transforms (sparkops/rules.py), the target's limits as ``StreamTxn._store`` applies them
message by message (sparkops/limits.py).

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

How a source job runs: a target with rollups, max_msgs or max_bytes goes through
``limits.apply`` (one range sort of every row, windows); any other (a per-subject limit,
max_age, a duplicate window: the usual source target) is planned on the driver from the
origins' Parquet columns when they are local Parquet files in sequence order
(sparkops/planned.py: one Spark pass over the rows, nothing else), else through
``_source_fast``: one narrow pass
over (partition, subject, Nats-Msg-Id) groups planned on the driver (each subject's filter and
transforms evaluated once, duplicates found among the groups with an id, per-partition counts
and ranges, the refusal checks), one narrow pass over the subjects with more messages than the
per-subject limit (their cut-offs; those subjects' rows picked by their origin subjects, a
literal list, when few), then one pass over the whole rows: a partition-local sort, sequences
from the per-partition counts when the partitions hold disjoint ranges of the merge order
(else one range sort), the duplicates joined by broadcast, the cut-offs written into the plan
when few (else joined by broadcast), the header built on bytes. ``ordered=False`` leaves the
partitions in any order (a Parquet output).

Refused with a clear error (the pump would stall on them or needs per-message state a bulk job
does not carry): discard-new limits, interest / work-queue retention, counters, sealed targets,
subject delete markers, messages with ``Nats-TTL``, invalid ``Nats-Rollup`` values, messages
over the target's max_msg_size or with headers over 64 KiB.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from jetlink.core import copyrules as C
from jetlink.core import headers as H
from jetlink.core.clock import parse_rfc3339_nano
from jetlink.core.config.stream import StreamConfig, StreamSource
from jetlink.core.streams import (
    FILE_HEADER_OVERHEAD,
    FILE_RECORD_OVERHEAD,
    MAX_HEADER_SIZE,
    MEM_RECORD_OVERHEAD,
    StreamDef,
)

from . import limits as L
from . import rules as R

LATIN1 = "ISO-8859-1"  # bytes <-> characters one to one: header rules run on strings
_BLOCK_END = "\r\n\r\n"  # the last header line's CRLF and the blank line


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
    """Targets whose rules need the pump's per-message state are refused
    (core.copyrules ``bulk_target_refusal``)."""
    why = C.bulk_target_refusal(d)
    if why:
        raise JobError(why)


# --------------------------------------------------------------------------------------------
# header rules (on the latin-1 view of the header block)
# --------------------------------------------------------------------------------------------
def _hstr(col: Any) -> Any:
    from pyspark.sql import functions as F

    return F.decode(col, LATIN1)


def strip_headers(h: Any, prefixes: Sequence[str]) -> Any:
    """core.copyrules ``strip_lines``: drop the lines starting with a prefix; a block left
    with no line becomes null (unchanged when nothing was dropped)."""
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
    out = [(C.REFUSED_TTL,
            first_value(h, H.MSG_TTL).isNotNull()),
           (C.REFUSED_HEADERS, hlen > MAX_HEADER_SIZE)]
    if d.allow_rollup_purge:
        roll = F.lower(first_value(h, H.ROLLUP))
        out.append((C.REFUSED_ROLLUP,
                    roll.isNotNull() & (roll != "") & ~roll.isin("sub", "all")))
    if d.max_msg_size >= 0:
        out.append((C.refused_size(d.max_msg_size),
                    (hlen > d.max_msg_size) | (mlen > F.lit(d.max_msg_size) - hlen)))
    return out


def _rollup_col(d: StreamDef) -> Any:
    from pyspark.sql import functions as F

    if not d.allow_rollup_purge:
        return F.lit(None).cast("string")
    roll = F.lower(first_value(F.col("h"), H.ROLLUP))
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
    rules = C.copy_rules("mirror", src, d)
    rows = _start_cut(df, src).where(R.subject_filter(F.col("subject"), rules.filters))
    h = strip_headers(_hstr(F.col("headers")), rules.strip)
    rows = rows.select(
        F.col("seq"), F.col("ts").alias("ots"),
        _target_subject(F.col("subject"), rules).alias("subject"),
        h.alias("h"), F.col("data"))
    out = L.apply(rows, d, _checks(d), _rollup_col(d), now_ns=now_ns, mode="mirror",
                  size=lambda c: _size(d, c["subject"], c["h"], c["data"]))
    return _to_lake(out, target.name)


# --------------------------------------------------------------------------------------------
# source
# --------------------------------------------------------------------------------------------
def source(origins: Sequence[Origin], target: StreamConfig, *, now_ns: int,
           first_seq: int = 1, ordered: bool = True,
           facts: dict[str, Any] | None = None) -> Any:
    """The source job over one or more origins (each a StreamSource of the target): what the
    target (never written: every message is stamped ``now_ns``) stores when its next sequence
    is ``first_seq`` (lake schema, in sequence order; with ``ordered=False`` each partition is
    in sequence order and the partitions hold disjoint ranges, but the partitions may come in
    any order: enough for a Parquet dataset, whose files have no order anyway). When the job
    was planned on the driver, ``facts`` (a dict) receives ``rows_out`` and ``last_seq`` (the
    output's count and last sequence, None when empty): the caller need not count."""
    from pyspark.sql import functions as F

    if not origins:
        raise JobError("a source job needs at least one origin (--from)")
    d = target_def(target)
    check_target(d)
    if not d.allow_rollup_purge and not d.max_msgs and not d.max_bytes:
        got = _source_planned(origins, d, target.name, now_ns=now_ns, first_seq=first_seq,
                              ordered=ordered)
        if got is not None:
            out, plan = got
            if facts is not None:
                facts.update(rows_out=plan.rows_out,
                             last_seq=first_seq + plan.stored - 1 if plan.rows_out else None)
            return out
        out = _source_fast(origins, d, target.name, now_ns=now_ns, first_seq=first_seq,
                           ordered=ordered)
        if out is not None:
            return out
    parts = []
    for o in origins:
        src = o.src
        rules = C.copy_rules("source", src, d)
        head, mid, tail = rules.source_value_parts(o.identity)
        rows = _start_cut(o.df, src).where(R.subject_filter(F.col("subject"), rules.filters))
        stripped = strip_headers(_hstr(F.col("headers")), rules.strip)
        value = _utf8_as_latin1(F.concat(F.lit(head), F.col("seq").cast("string"),
                                         F.lit(mid), F.col("subject"), F.lit(tail)))
        base = F.when(stripped.isNull() | (F.length(stripped) <= 2),
                      F.lit(H.HDR_LINE.decode())) \
            .otherwise(F.expr("substring(_s, 1, length(_s) - 2)"))
        rows = (rows.withColumn("_s", stripped)
                .select(F.col("ts").alias("ots"), F.lit(src.name).alias("_origin"),
                        F.lit(rules.iname).alias("_iname"), F.col("seq").alias("_oseq"),
                        _target_subject(F.col("subject"), rules).alias("subject"),
                        F.concat(base, F.lit(C.SOURCE_LINE), value,
                                 F.lit(_BLOCK_END)).alias("h"),
                        F.col("data")))
        parts.append(rows)
    rows = parts[0]
    for p in parts[1:]:
        rows = rows.unionByName(p)
    if rules.dedupe:  # (every origin's: the target's duplicate window)
        mid = first_value(F.col("h"), H.MSG_ID)
        rows = L.drop_duplicate_ids(rows, mid, ["ots", "_origin", "_iname", "_oseq"])
    out = L.apply(rows, d, _checks(d), _rollup_col(d), now_ns=now_ns, mode="source",
                  size=lambda c: _size(d, c["subject"], c["h"], c["data"]),
                  order=["ots", "_origin", "_iname", "_oseq"], first_seq=first_seq,
                  ts=now_ns,
                  describe=lambda r: f"message {r['_oseq']} of {r['_origin']}")
    return _to_lake(out, target.name)


# --------------------------------------------------------------------------------------------
# source, planned for one scan of the rows (no rollups, max_msgs or max_bytes on the target)
# --------------------------------------------------------------------------------------------
_BROADCAST_SUBJECTS = 200_000  # distinct origin subjects mapped once and joined back
_BROADCAST_LOSERS = 2_000_000  # duplicate ids dropped by a broadcast anti-join
_DRIVER_GROUPS = 2_000_000  # (partition, subject, id) groups planned on the driver, at most


def _blit(text: str) -> Any:
    """A BINARY literal: the UTF-8 bytes of ``text``."""
    from pyspark.sql import functions as F

    return F.lit(bytearray(text.encode("utf-8")))


def _target_subject(col: Any, rules: C.CopyRules) -> Any:
    """core.copyrules ``target_subject`` of ``col`` (sparkops.rules ``apply_like_pump``)."""
    return R.apply_like_pump(col, list(rules.transforms), rules.stream_transform)


def _needs_strip(hb: Any) -> Any:
    """The header block holds a line the source rules remove (null: no block)."""
    needs = None
    for p in C.SOURCE_STRIP:
        c = hb.contains(_blit("\r\n" + p))
        needs = c if needs is None else needs | c
    return needs


def _source_value(rules: C.CopyRules, identity: str, seq: Any, subj: Any) -> list[Any]:
    """The ``Nats-Stream-Source`` value of an agreement's message (origin sequence ``seq``,
    origin subject ``subj``), as pieces: text, and bytes columns."""
    head, mid, tail = rules.source_value_parts(identity)
    return [head, seq.cast("string").cast("binary"), mid, subj.cast("binary"), tail]


def _source_header(hb: Any, value: list[Any], strip: bool = True) -> Any:
    """The header block ``_store_all`` writes for a sourced message, on the bytes: the
    origin's block without ``Nats-Stream-Source`` / ``Nats-Expected-*`` / ``Nats-Batch-*``
    lines, then ``Nats-Stream-Source: value`` (pieces: text, bytes columns). Blocks holding
    none of those lines (nearly all) are cut and joined as bytes; only the others go through
    the line rules on latin-1 text."""
    from pyspark.sql import functions as F

    start = H.HDR_LINE.decode()
    fast = F.when(hb.isNull() | (F.octet_length(hb) <= 2), _blit(start)) \
        .otherwise(F.substring(hb, F.lit(1), F.octet_length(hb) - 2))
    # where one of the lines is there, strip_headers removes something: its result is the
    # block without it, or null when no line is left (12 bytes: "NATS/1.0\r\n\r\n" or less)
    alt = "|".join(re.escape(p) for p in C.SOURCE_STRIP)
    out = F.regexp_replace(_hstr(hb), rf"(?s)\r\n(?:{alt})(?:(?!\r\n).)*", "")
    slow = F.encode(F.when(F.length(out) <= 12, F.lit(start))
                    .otherwise(F.substring(out, F.lit(1), F.length(out) - 2)), LATIN1)
    base = F.when(_needs_strip(hb), slow).otherwise(fast) if strip else fast
    pieces: list[Any] = []
    for p in [C.SOURCE_LINE, *value, _BLOCK_END]:  # adjacent texts as one
        if isinstance(p, str) and pieces and isinstance(pieces[-1], str):
            pieces[-1] += p
        else:
            pieces.append(p)
    return F.concat(base, *[_blit(p) if isinstance(p, str) else p for p in pieces])


def _msg_id(hb: Any) -> Any:
    """The ``Nats-Msg-Id`` of a header block (bytes), null when it has none."""
    from pyspark.sql import functions as F

    return F.when(hb.contains(_blit(H.MSG_ID)), first_value(_hstr(hb), H.MSG_ID))


def _fast_checks(d: StreamDef, hb: Any, h: Any, hmax: Any, data: Any) -> list[tuple[str, Any]]:
    """``_checks`` over ``hb`` (the origin's header bytes), ``h`` (the header bytes the job
    writes: computed only where a limit may be near), ``hmax`` (a bound of its length)."""
    from pyspark.sql import functions as F

    out = [(C.REFUSED_TTL,
            F.coalesce(hb.contains(_blit(f"\r\n{H.MSG_TTL}:")), F.lit(False))),
           (C.REFUSED_HEADERS,
            F.when(hmax > MAX_HEADER_SIZE, F.octet_length(h) > MAX_HEADER_SIZE)
            .otherwise(F.lit(False)))]
    if d.max_msg_size >= 0:
        hlen = F.octet_length(h)
        mlen = F.coalesce(F.octet_length(data), F.lit(0))
        out.append((C.refused_size(d.max_msg_size),
                    (hlen > d.max_msg_size) | (mlen > F.lit(d.max_msg_size) - hlen)))
    return out


@dataclass
class _Part:
    """One origin of a source job as ``_source_fast`` plans it."""

    rows: Any  # ots, _origin, _iname, _oseq, subject (target), _osubj, _hb, data, _oi
    header: Any  # (seq, origin subject, header bytes) -> the header bytes written
    stats: list[dict[str, int]]  # per partition of ``rows``: n, tlo, thi, slo, shi, bad<i>
    tally: Any  # messages per target subject (pandas Series, the subject's bytes as index)
    stable: bool  # the rows' partitions are the same in every query
    ided: Any  # pandas (_msgid, ots, _oseq, _pid, n, subject, _origin, _iname) per id and
    # partition (subject: the origin's, as bytes)
    base: Any  # the origin's rows (lake schema) after its start options
    mapping: Any  # pandas (subject, _tsubj): each kept origin subject and its target subject
    origin: str  # the origin stream's name
    iname: str  # the agreement's index name
    rules: C.CopyRules  # the agreement's copy rules into the target


def _stable(df: Any) -> bool:
    """Whether every query over ``df`` sees the same partitions (files, a data source, an
    RDD), unlike rows held on the driver (a local relation, sliced per query plan)."""
    try:
        leaves = df._jdf.queryExecution().optimizedPlan().collectLeaves()
        names = [leaves.apply(i).getClass().getSimpleName() for i in range(leaves.size())]
    except Exception:  # noqa: BLE001 - not knowable: assume not
        return False
    return bool(names) and not any("LocalRelation" in n for n in names)


def _plan_origin(o: Origin, k: int, d: StreamDef) -> _Part | None:
    """An origin's rows and, from one narrow pass over (partition, subject) groups: its
    subjects mapped once each (filter, transforms), per-subject counts, per-partition counts
    and (time, sequence) ranges, and the refusal checks."""
    from pyspark.sql import functions as F

    src = o.src
    rules = C.copy_rules("source", src, d)
    iname = rules.iname
    filters = list(rules.filters)
    every = not filters or ">" in filters
    base = _start_cut(o.df, src)

    strips = [True]  # whether any kept message has a line to strip (from the first pass)

    def header(seq: Any, subj: Any, hb: Any) -> Any:
        return _source_header(hb, _source_value(rules, o.identity, seq, subj), strips[0])

    # the written block but the origin sequence and subject, and room for them
    slack = len((C.SOURCE_BLOCK + "".join(rules.source_value_parts(o.identity))
                 + _BLOCK_END).encode()) + 24
    hb = F.col("headers")
    hmax = F.coalesce(F.octet_length(hb), F.lit(0)) + F.octet_length("subject") + F.lit(slack)
    checks = _fast_checks(d, hb, header(F.col("seq"), F.col("subject"), hb), hmax,
                          F.col("data"))
    keys = [F.spark_partition_id().alias("_pid"), F.col("subject")]
    if rules.dedupe:  # messages with an id are groups of their own (the rest: id null)
        keys.append(_msg_id(hb).alias("_msgid"))
    nbad = len(checks)
    # one narrow pass: the groups, each group's subject filtered and transformed (once per
    # group, not per row), all brought to the driver (few: subjects x partitions, plus the
    # messages with an id)
    groups = base.groupBy(*keys).agg(
        F.count(F.lit(1)).alias("n"), F.min("ts").alias("tlo"), F.max("ts").alias("thi"),
        F.min("seq").alias("slo"), F.max("seq").alias("shi"),
        *[F.sum(F.when(c, F.lit(1)).otherwise(F.lit(0))).alias(f"bad{i}")
          for i, (_w, c) in enumerate(checks)],
        F.sum(F.when(_needs_strip(hb), F.lit(1)).otherwise(F.lit(0))).alias("strip"))
    keep = F.lit(True) if every else R.subject_filter(F.col("subject"), filters)
    cols = [F.col("_pid"), F.col("subject").cast("binary").alias("subject"),
            _target_subject(F.col("subject"), rules).cast("binary").alias("_tsubj"),
            keep.alias("_keep"), "n", "tlo", "thi", "slo", "shi",
            *[f"bad{i}" for i in range(nbad)], "strip"]
    if rules.dedupe:
        cols.append(F.col("_msgid").cast("binary").alias("_msgid"))
    table = groups.select(*cols).limit(_DRIVER_GROUPS + 1).toArrow()
    if table.num_rows > _DRIVER_GROUPS:
        return None
    pdf = table.to_pandas()
    pdf = pdf[pdf["_keep"].astype(bool)]
    strips[0] = bool(pdf["strip"].sum())  # the header rules then need no line removed
    aggs = {"n": "sum", "tlo": "min", "thi": "max", "slo": "min", "shi": "max",
            **{f"bad{i}": "sum" for i in range(nbad)}}
    stats = [{"_pid": int(pid), **{c: int(v) for c, v in r.items()}}
             for pid, r in pdf.groupby("_pid").agg(aggs).iterrows()]
    tally = pdf.groupby("_tsubj")["n"].sum()
    ided = None
    if rules.dedupe:
        ided = pdf[pdf["_msgid"].notna()]
        ided = ided[ided["_msgid"].map(len) > 0]
        ided = ided[["_msgid", "tlo", "slo", "_pid", "n", "subject"]].rename(
            columns={"tlo": "ots", "slo": "_oseq"})
        ided = ided.assign(_origin=src.name, _iname=iname)
    rows = _mapped_rows(base, pdf, rules, filters, every, src.name, k)
    return _Part(rows, header, stats, tally, _stable(base), ided, base,
                 pdf[["subject", "_tsubj"]].drop_duplicates("subject"), src.name, iname, rules)


def _mapped_rows(base: Any, pdf: Any, rules: C.CopyRules, filters: list[str], every: bool,
                 origin: str, k: int) -> Any:
    """The origin's kept rows with their target subjects (as ``_Part.rows``): the subject
    itself when no filter or transform applies, else the driver's mapping of each kept
    subject (``pdf``: the groups of the narrow pass) joined back as a broadcast, or (too many
    subjects) the filter and transforms applied per row."""
    from pyspark.sql import functions as F

    identity_map = every and not rules.transforms and rules.stream_transform is None
    spark = base.sparkSession
    if identity_map:
        rows = base.withColumn("_tsubj", F.col("subject"))
    else:
        mapping = pdf[["subject", "_tsubj"]].drop_duplicates("subject")
        if len(mapping) <= _BROADCAST_SUBJECTS:
            import pyarrow as pa

            m = spark.createDataFrame(pa.table({
                "_msubj": pa.array(list(mapping["subject"]), pa.binary()),
                "_tsubj": pa.array(list(mapping["_tsubj"]), pa.binary())})).select(
                F.col("_msubj").cast("string").alias("_msubj"),
                F.col("_tsubj").cast("string").alias("_tsubj"))
            rows = base.join(F.broadcast(m), base["subject"] == m["_msubj"], "inner")
        else:
            rows = (base if every else base.where(R.subject_filter(F.col("subject"), filters))) \
                .withColumn("_tsubj", _target_subject(F.col("subject"), rules))
    return rows.select(
        F.col("ts").alias("ots"), F.lit(origin).alias("_origin"),
        F.lit(rules.iname).alias("_iname"), F.col("seq").alias("_oseq"),
        F.col("_tsubj").alias("subject"), F.col("subject").alias("_osubj"),
        F.col("headers").alias("_hb"), F.col("data"), F.lit(k).alias("_oi"))


_HOT_ORIGIN_SUBJECTS = 64  # origin subjects of the hot subjects read by a literal list
_HOT_LOSERS = 100_000  # duplicates among the hot subjects left out by a literal list
_CASE_CUTS = 64  # per-subject cut-offs written into the plan (more: a broadcast join)
_KEY_TYPES = {"ots": "long", "_oseq": "long", "_origin": "string", "_iname": "string"}


def _hot_rows(parts: Sequence[_Part], hot: Sequence[bytes], lost: Any, key: Sequence[str],
              multi: bool) -> Any:
    """The rows of the target subjects over the per-subject limit, as (target subject bytes,
    the merge key): read from each origin's rows by their origin subjects (a literal list:
    no join, no broadcast), the duplicates dropped (``lost``, found on the driver) left out
    by their sequences. None (the caller joins) when many origin subjects map to them, many
    duplicates are among them, or a subject is not valid UTF-8."""
    from pyspark.sql import functions as F

    hotset = set(hot)
    out = None
    for p in parts:
        m = p.mapping
        if m["subject"].isna().any() or m["_tsubj"].isna().any():
            return None
        m = m[m["_tsubj"].map(bytes).isin(hotset)]
        if len(m) > _HOT_ORIGIN_SUBJECTS:
            return None
        if not len(m):
            continue
        try:
            pairs = [(bytes(o).decode("utf-8"), bytes(t))
                     for o, t in zip(m["subject"], m["_tsubj"], strict=True)]
        except UnicodeDecodeError:
            return None
        names = [o for o, _t in pairs]
        rows = p.base.where(F.col("subject").isin(names))
        if lost is not None and len(lost):
            if lost["subject"].isna().any():
                return None
            mine = lost[lost["subject"].map(bytes).isin({o.encode() for o in names})]
            if multi:
                mine = mine[mine["_iname"] == p.iname]
            if len(mine) > _HOT_LOSERS:
                return None
            if len(mine):
                rows = rows.where(~F.col("seq").isin([int(x) for x in mine["_oseq"]]))
        subj = F.col("subject")
        if all(o.encode() == t for o, t in pairs):
            tsubj = subj.cast("binary")
        else:
            tsubj = None
            for o, t in pairs:
                v = F.lit(bytearray(t))
                tsubj = F.when(subj == o, v) if tsubj is None else tsubj.when(subj == o, v)
        rows = rows.select(tsubj.alias("subject"), F.col("ts").alias("ots"),
                           F.lit(p.origin).alias("_origin"), F.lit(p.iname).alias("_iname"),
                           F.col("seq").alias("_oseq")).select("subject", *key)
        out = rows if out is None else out.unionByName(rows)
    return out


def _cut_condition(cut: Any, key: Sequence[str]) -> Any:
    """Where a row dies under the per-subject limit, from few cut-offs (a pyarrow table of
    ``_csubj``, the target subject's bytes, and the key of its newest message that dies)
    written into the plan: no join. None when there are many or a subject is not UTF-8."""
    from pyspark.sql import functions as F

    if cut.num_rows > _CASE_CUTS or cut.column("_csubj").null_count:
        return None
    try:
        rows = [(bytes(r["_csubj"]).decode("utf-8"), r) for r in cut.to_pylist()]
    except UnicodeDecodeError:
        return None
    subj = F.col("subject")
    case = None
    for name, r in rows:
        ck = F.struct(*[F.lit(r[k]).cast(_KEY_TYPES[k]).alias(k) for k in key])
        c = F.struct(*key) <= ck
        case = F.when(subj == name, c) if case is None else case.when(subj == name, c)
    return F.coalesce(subj.isin([n for n, _r in rows]) & case, F.lit(False))


def _source_planned(origins: Sequence[Origin], d: StreamDef, name: str, *, now_ns: int,
                    first_seq: int, ordered: bool) -> Any:
    """``source`` planned on the driver from the origins' Parquet columns
    (sparkops/planned.py), when they are local Parquet datasets: (rows, plan); else None."""
    from . import planned

    rules = [C.copy_rules("source", o.src, d) for o in origins]

    def header(k: int, seq: Any, subj: Any, hb: Any, strip: bool) -> Any:
        value = _source_value(rules[k], origins[k].identity, seq, subj)
        return _source_header(hb, value, strip)

    return planned.run_source(origins, d, name, now_ns=now_ns, first_seq=first_seq,
                              ordered=ordered, header=header)


def _source_fast(origins: Sequence[Origin], d: StreamDef, name: str, *, now_ns: int,
                 first_seq: int, ordered: bool) -> Any:
    """``source`` for targets whose limits need only whether a message dies (a per-subject
    limit, max_age). The whole rows are read once, by the final pass; before it, narrow
    passes that read only their columns:

    1. per origin, (partition, subject) groups: each subject's filter and transforms
       evaluated once, counts per subject and per partition, the partitions' (time,
       sequence) ranges, the refusal checks (``_plan_origin``);
    2. duplicate ids: the messages with a ``Nats-Msg-Id`` (read from the origin's header,
       which the source rules never change there), the first of each id kept; the others
       (and their partitions) dropped later by a broadcast anti-join;
    3. per-subject cut-offs, only over the subjects with more than the limit's messages
       (read by their origin subjects when few: no join, no broadcast), applied by a
       condition in the plan when few (``_cut_condition``), else a broadcast join.

    When the partitions, each sorted locally by the merge order (origin time, origin,
    agreement, origin sequence), hold disjoint ranges of it (a single origin stored or
    written in sequence order), sequences come from per-partition counts: no global sort.
    The written header is built last, on the rows that are kept."""
    from pyspark.sql import functions as F

    planned = [_plan_origin(o, k, d) for k, o in enumerate(origins)]
    if any(p is None for p in planned):
        return None  # too many groups to plan on the driver
    parts: list[_Part] = planned  # type: ignore[assignment]
    rules = parts[0].rules  # (dedupe and the per-subject limit: the target's, every origin's)
    multi = len(origins) > 1
    key = ["ots", "_origin", "_iname", "_oseq"] if multi else ["ots", "_oseq"]
    rows, spans, starts, concatenated = _union(parts, multi)
    dropped: dict[int, int] = {}
    lost = None  # the duplicates dropped (pandas), when found on the driver
    losers_known = True
    if rules.dedupe:
        rows, dropped, lost, losers_known = _drop_duplicate_ids(parts, rows, starts, key, multi)
    header_of = _header_of(parts, multi)
    _check_refusals(d, rows, spans, key, header_of)
    cut = kill = None
    if rules.max_per:
        cut, kill = _cut_offs(parts, rows, lost, key, multi, losers_known, rules.max_per)
    out, in_order = _sequenced(rows, spans, dropped, concatenated, key, multi, first_seq)
    shuffled = False
    if kill is not None:
        out = out.where(~kill)
    if cut is not None:
        shuffled = cut[1] > L._BROADCAST_CUTS  # a shuffle join: partitions no longer ranges
        cuts = cut[0]
        out = out.join(cuts if shuffled else F.broadcast(cuts), out["subject"] == cuts["_csubj"],
                       "left")
        out = out.where(F.col("_ck").isNull() | (F.struct(*key) > F.col("_ck")))
    out = out.select(
        F.lit(name).alias("stream"), F.lit(0).cast("int").alias("partition"),
        F.col("seq"), F.col("subject"), F.lit(None).cast("binary").alias("key"),
        F.lit(now_ns).cast("long").alias("ts"),
        header_of(F.col("_oseq"), F.col("_osubj"), F.col("_hb")).alias("headers"),
        F.col("data"))
    if shuffled or (ordered and not in_order):
        out = out.orderBy("seq")
    return out


def _union(parts: Sequence[_Part], multi: bool) -> tuple[Any, list[dict[str, Any]], list[int],
                                                         bool]:
    """The origins' rows one after the other; per partition of the union (its partitions
    are its inputs' one after the other) the first pass's stats; each origin's first
    partition; and whether the union's partitions are its inputs' as counted (a driver-side
    input's partitions differ from query to query: no per-partition plan)."""
    rows = parts[0].rows
    for p in parts[1:]:
        rows = rows.unionByName(p.rows)
    spans, at, starts = [], 0, []
    for k, p in enumerate(parts):
        starts.append(at)
        for r in p.stats:
            spans.append({**r, "_pid": at + r["_pid"], "k": k,
                          "o": (p.origin, p.iname)})
        at += p.rows.rdd.getNumPartitions() if multi else 0
    concatenated = all(p.stable for p in parts) and (
        not multi or rows.rdd.getNumPartitions() == at)
    return rows, spans, starts, concatenated


def _drop_duplicate_ids(parts: Sequence[_Part], rows: Any, starts: list[int],
                        key: list[str], multi: bool) -> tuple[Any, dict[int, int], Any, bool]:
    """Duplicate ids: the first of each id in the merge order is kept, the others dropped
    by an anti-join. Returns the rows, the duplicates dropped per partition, the duplicates
    (pandas) when found on the driver, and whether they were (else: the ids read again, an
    id twice in one partition and subject)."""
    import pandas as pd
    import pyarrow as pa
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    spark = parts[0].rows.sparkSession
    ident = ["_iname", "_oseq"] if multi else ["_oseq"]
    lost = None
    losers_known = True
    ided = pd.concat([p.ided.assign(_pid=p.ided["_pid"] + st)
                      for p, st in zip(parts, starts, strict=True)],
                     ignore_index=True)
    if not len(ided) or (ided["n"] <= 1).all():  # each group one message
        ided = ided.sort_values(key)
        lost = ided[ided.duplicated("_msgid", keep="first")]
        dropped = {int(k): int(v) for k, v in lost["_pid"].value_counts().items()}
        n = len(lost)
        losers = spark.createDataFrame(pa.table(
            {c: pa.array(list(lost[c]), pa.int64() if c == "_oseq" else pa.string())
             for c in ident})) if n else None
    else:  # an id twice in one partition and subject: the ids read again
        losers_known = False
        sided = rows.select(_msg_id(F.col("_hb")).alias("_msgid"), *key,
                            F.spark_partition_id().alias("_pid")).where(
            F.col("_msgid").isNotNull() & (F.col("_msgid") != ""))
        w = Window.partitionBy("_msgid").orderBy(*key)
        losers = sided.withColumn("_rn", F.row_number().over(w)) \
            .where(F.col("_rn") > 1).select(*ident, "_pid").localCheckpoint(eager=True)
        dropped = {r["_pid"]: r["count"]
                   for r in losers.groupBy("_pid").count().collect()}
        n = sum(dropped.values())
        losers = losers.drop("_pid")
    if n:
        rows = rows.join(F.broadcast(losers) if n <= _BROADCAST_LOSERS else losers,
                         ident, "left_anti")
    return rows, dropped, lost, losers_known


def _header_of(parts: Sequence[_Part], multi: bool) -> Callable[[Any, Any, Any], Any]:
    """The written header's column: each origin's rules on its own rows."""
    from pyspark.sql import functions as F

    def header_of(seq: Any, subj: Any, hb: Any) -> Any:
        if not multi:
            return parts[0].header(seq, subj, hb)
        out = None
        for k, p in enumerate(parts):
            h = p.header(seq, subj, hb)
            out = F.when(F.col("_oi") == k, h) if out is None else out.when(F.col("_oi") == k, h)
        return out

    return header_of


def _check_refusals(d: StreamDef, rows: Any, spans: list[dict[str, Any]], key: list[str],
                    header_of: Callable[[Any, Any, Any], Any]) -> None:
    """Refusals (counted by the first pass over the duplicates too: checked again without
    them): the first offending message in the merge order is named."""
    from pyspark.sql import functions as F

    checks = _fast_checks(d, F.col("_hb"),
                          header_of(F.col("_oseq"), F.col("_osubj"), F.col("_hb")),
                          F.lit(MAX_HEADER_SIZE + 1), F.col("data"))
    for i, (what, cond) in enumerate(checks):
        if any(r[f"bad{i}"] for r in spans):
            first = rows.where(cond).orderBy(*key).first()
            if first is not None:
                raise L.LimitError(f"message {first['_oseq']} of {first['_origin']} {what}")


def _cut_offs(parts: Sequence[_Part], rows: Any, lost: Any, key: list[str], multi: bool,
              losers_known: bool, max_per: int) -> tuple[tuple[Any, int] | None, Any]:
    """Per-subject cut-offs: the key of each subject's (max_per + 1)-th newest message, over
    the subjects with more messages than that only. Returns (the cut-offs as a DataFrame to
    join, their number) when many, and the condition of the rows cut when few."""
    import pandas as pd
    import pyarrow as pa
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    spark = parts[0].rows.sparkSession
    w = Window.partitionBy("subject").orderBy(*[F.desc(k) for k in key])
    tally = pd.concat([p.tally for p in parts]).groupby(level=0).sum()
    hot = [bytes(b) for b in tally[tally > max_per].index]
    if not hot:
        return None, None
    many = _hot_rows(parts, hot, lost, key, multi) if losers_known else None
    if many is None:
        h = spark.createDataFrame(pa.table({"_hsubj": pa.array(hot, pa.binary())})) \
            .select(F.col("_hsubj").cast("string").alias("_hsubj"))
        many = rows.join(F.broadcast(h), rows["subject"] == h["_hsubj"], "left_semi")
    cut = (many.select("subject", *key).withColumn("_rn", F.row_number().over(w))
           .where(F.col("_rn") <= max_per + 1)
           .where(F.col("_rn") == max_per + 1)
           .select(F.col("subject").cast("binary").alias("_csubj"), *key).toArrow())
    ncut = cut.num_rows
    kill = _cut_condition(cut, key) if ncut else None
    if ncut and kill is None:
        return (spark.createDataFrame(cut).select(
            F.col("_csubj").cast("string").alias("_csubj"),
            F.struct(*key).alias("_ck")), ncut), None
    return None, kill


def _sequenced(rows: Any, spans: list[dict[str, Any]], dropped: dict[int, int],
               concatenated: bool, key: list[str], multi: bool,
               first_seq: int) -> tuple[Any, bool]:
    """The rows with their target sequences (``seq``), and whether they are in sequence
    order partition after partition. When the partitions hold disjoint ranges of the merge
    order, sequences come from per-partition counts (no global sort), else from one range
    sort."""
    from pyspark.sql import functions as F

    pid = F.spark_partition_id().alias("_pid")
    # A before B in the merge order for every pair of rows when A's newest time is before
    # B's oldest, or equal to it and A's origin (then sequences) come first
    spans = [r for r in spans if r["n"]]
    spans.sort(key=lambda r: (r["tlo"], r["o"], r["slo"]))

    def before(a: dict[str, Any], b: dict[str, Any]) -> bool:
        if a["thi"] != b["tlo"]:
            return a["thi"] < b["tlo"]
        if a["o"] != b["o"]:
            return a["o"] < b["o"]
        return a["shi"] < b["slo"]

    disjoint = concatenated and all(before(a, b) for a, b in zip(spans, spans[1:], strict=False))
    if disjoint:
        offsets, total = {}, 0
        for r in spans:
            offsets[r["_pid"]] = total
            total += r["n"] - dropped.get(r["_pid"], 0)
        in_order = [r["_pid"] for r in spans] == sorted(r["_pid"] for r in spans)
        tagged = rows.sortWithinPartitions(*key).select(
            "*", pid, F.monotonically_increasing_id().alias("_mid"))
    else:  # origins interleaved in time (or input out of order): one range sort, kept (its
        # sampled bounds must not change between the counts and the rows)
        from pyspark import StorageLevel

        tagged = rows.orderBy(*key).select(
            "*", pid, F.monotonically_increasing_id().alias("_mid")) \
            .persist(StorageLevel.MEMORY_AND_DISK)
        counts = tagged.groupBy("_pid").count().collect()
        offsets, total = {}, 0
        for r in sorted(counts, key=lambda r: r["_pid"]):
            offsets[r["_pid"]] = total
            total += r["count"]
        in_order = True
    local = F.col("_mid") - F.shiftleft(F.col("_pid").cast("long"), L._SHIFT)
    seq = (F.lit(first_seq) + L._by_pid(offsets) + local).cast("long")
    if disjoint:
        # the sequences hold only if each partition is the one counted: its rows inside
        # that partition's range (else the job fails rather than write wrong sequences)
        same = (F.col("_oseq") >= L._by_pid({r["_pid"]: r["slo"] for r in spans}, None)) \
            & (F.col("_oseq") <= L._by_pid({r["_pid"]: r["shi"] for r in spans}, None))
        if multi:
            same = same & (F.col("_oi") == L._by_pid({r["_pid"]: r["k"] for r in spans}, None))
        seq = F.when(same, seq).otherwise(F.raise_error(F.lit(
            "source job: a partition differs from the one its sequences were counted on")))
    return tagged.withColumn("seq", seq), in_order


def _to_lake(df: Any, name: str) -> Any:
    from pyspark.sql import functions as F

    return df.select(
        F.lit(name).alias("stream"), F.lit(0).cast("int").alias("partition"),
        F.col("seq").cast("long").alias("seq"), F.col("subject"),
        F.lit(None).cast("binary").alias("key"), F.col("ts").cast("long").alias("ts"),
        F.encode(F.col("h"), LATIN1).alias("headers"), F.col("data"))


__all__ = ["JobError", "Origin", "check_target", "first_value", "mirror", "source",
           "strip_headers", "target_def"]
