"""A target's limits over a whole job at once, with the result the engine reaches applying
them message by message (core/streamstore/append.py ``StreamTxn._store``, discard old).

Per message the engine stores, then removes the subject's oldest beyond
``max_msgs_per_subject``, then the stream's oldest while over ``max_msgs`` or ``max_bytes``,
then applies a ``Nats-Rollup`` (the subject's or the whole stream's earlier messages go).
Over a whole input that means:

- every message has a *death*: the first later message that removes it by the per-subject
  limit (the ``max_msgs_per_subject``-th newer one of its subject) or by a rollup (the next
  ``sub`` rollup of its subject, the next ``all`` rollup); a message with no death survives
  those rules;
- removals for ``max_msgs`` / ``max_bytes`` always take the oldest stored message, so they
  cut the stream at a moving watermark W: what survives is ``seq > W`` without a death.
  Without deaths (or for ``max_msgs`` alone with per-subject deaths only) W is where the
  newest survivors exceed the limit, counted from the end (a distributed running sum);
  ``max_bytes`` together with deaths needs the order of events, so W comes from one pass over
  ``(seq, size, death)`` on the driver (linear, 24 bytes a message);
- ``max_age``: what is older than ``now - max_age`` is gone at the next read.

Sequences (and, for mirrors, the never-decreasing stored time) come from a range sort and
per-partition offsets (``monotonically_increasing_id`` within each sorted partition plus the
counts of the partitions before it): no single-partition window anywhere. When only whether a
message dies matters (a per-subject limit without rollups or max_bytes), each subject's cut-off
comes from the narrow ``(subject, seq)`` rows and joins back by broadcast, so the rows are not
shuffled by subject, and a source job's rows, never moved after their sequences were assigned,
are not sorted again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from jetlink.core.streams import StreamDef

_SHIFT = 33  # monotonically_increasing_id: partition index << 33 | row number in partition
_BROADCAST_CUTS = 200_000  # per-subject cut-offs joined back by broadcast (about 15 MB)


class LimitError(Exception):
    """Input the pump would stall on (the message names the rule and the first message):
    ``message <seq> of <origin> <why>``, the texts of core/copyrules.py."""


def drop_duplicate_ids(rows: Any, msg_id: Any, order: Sequence[str]) -> Any:
    """Keep the first message (in ``order``) of each non-empty ``Nats-Msg-Id``."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    rows = rows.withColumn("_msgid", msg_id)
    plain = rows.where(F.col("_msgid").isNull() | (F.col("_msgid") == ""))
    ided = rows.where(F.col("_msgid").isNotNull() & (F.col("_msgid") != ""))
    w = Window.partitionBy("_msgid").orderBy(*order)
    first = ided.withColumn("_rn", F.row_number().over(w)).where(F.col("_rn") == 1).drop("_rn")
    return plain.unionByName(first).drop("_msgid")


def _offsets(stats: list[Any], key: str) -> dict[int, int]:
    out, total = {}, 0
    for r in sorted(stats, key=lambda r: r["_pid"]):
        out[r["_pid"]] = total
        total += r[key] or 0
    return out


def _by_pid(mapping: dict[int, Any], default: Any = 0) -> Any:
    from pyspark.sql import functions as F

    if not mapping:
        return F.lit(default)
    expr = F.create_map(*[x for k, v in sorted(mapping.items()) for x in (F.lit(k), F.lit(v))])
    return F.coalesce(F.element_at(expr, F.col("_pid")), F.lit(default))


def apply(rows: Any, d: StreamDef, checks: Sequence[tuple[str, Any]], rollup: Any, *,
          now_ns: int, mode: str, size: Callable[[Any], Any],
          order: Sequence[str] = ("seq",), first_seq: int = 1, ts: int = 0,
          describe: Callable[[Any], str] | None = None) -> Any:
    """The stored result of ``rows`` (columns: subject, h, data, ots, and ``seq`` for a mirror)
    in target ``d``: columns seq, subject, ts, h, data, sorted by seq."""
    from pyspark import StorageLevel
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    flags = [F.when(cond, F.lit(1)).otherwise(F.lit(0)).alias(f"_bad{i}")
             for i, (_what, cond) in enumerate(checks)]
    rows = rows.select("*", rollup.alias("_roll"), *flags)
    rows = rows.withColumn("_size", size(rows))
    tagged = rows.orderBy(*order).select(
        "*", F.spark_partition_id().alias("_pid"), F.monotonically_increasing_id().alias("_mid"))
    tagged = tagged.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        aggs = [F.count(F.lit(1)).alias("n"), F.max("ots").alias("maxts"),
                F.sum(F.when(F.col("_roll") == "sub", 1).otherwise(0)).alias("subs"),
                F.sum(F.when(F.col("_roll") == "all", 1).otherwise(0)).alias("alls")]
        aggs += [F.sum(f"_bad{i}").alias(f"bad{i}") for i in range(len(checks))]
        stats = tagged.groupBy("_pid").agg(*aggs).collect()
        for i, (what, _cond) in enumerate(checks):
            if any(r[f"bad{i}"] for r in stats):
                first = tagged.where(F.col(f"_bad{i}") == 1).orderBy("_pid", "_mid").first()
                where = describe(first) if describe else f"message {first['seq']}"
                raise LimitError(f"{where} {what}")
        local = F.col("_mid") - F.shiftleft(F.col("_pid").cast("long"), _SHIFT)
        if mode == "source":
            seq = F.lit(first_seq) + _by_pid(_offsets(stats, "n")) + local
            out = tagged.withColumn("seq", seq.cast("long")).withColumn("ts", F.lit(ts))
        else:
            prev_max: dict[int, int] = {}
            run = ts
            for r in sorted(stats, key=lambda r: r["_pid"]):
                prev_max[r["_pid"]] = run
                run = max(run, r["maxts"] or 0)
            w = Window.partitionBy("_pid").orderBy("_mid").rowsBetween(
                Window.unboundedPreceding, Window.currentRow)
            out = tagged.withColumn("ts", F.greatest(F.max("ots").over(w), _by_pid(prev_max)))
        subs = sum(r["subs"] for r in stats)
        alls = sum(r["alls"] for r in stats)
        ps_death = F.lit(None).cast("long")
        in_order = mode == "source"  # no exchange after `tagged` yet: rows are in seq order
        if d.max_per and not subs and not alls and not d.max_bytes:
            # only whether a message dies matters (not when): per-subject cut-offs
            out, cut_in_order = _per_subject_cut(out, d.max_per)
            in_order = in_order and cut_in_order
        elif d.max_per:
            in_order = False
            wdesc = Window.partitionBy("subject").orderBy(F.desc("seq"))
            ps_death = F.lag("seq", d.max_per).over(wdesc)
        rolls = []
        if subs:
            in_order = False
            wnext = Window.partitionBy("subject").orderBy("seq").rowsBetween(
                1, Window.unboundedFollowing)
            rolls.append(F.min(F.when(F.col("_roll") == "sub", F.col("seq"))).over(wnext))
        if alls:
            seqs = [r[0] for r in out.where(F.col("_roll") == "all").select("seq").collect()]
            arr = F.array(*[F.lit(s) for s in sorted(seqs)])
            rolls.append(F.array_min(F.filter(arr, lambda x: x > F.col("seq"))))
        roll_death = (F.lit(None).cast("long") if not rolls
                      else rolls[0] if len(rolls) == 1 else F.least(*rolls))
        if "_dps" not in out.columns:
            out = out.withColumn("_dps", ps_death)
        out = out.withColumn("_drl", roll_death) \
                 .withColumn("_death", F.least("_dps", "_drl"))
        if d.max_msgs or d.max_bytes:
            if not d.max_per and not rolls:
                out = _suffix(out, d, count_only=False)
            elif not rolls and not d.max_bytes:
                out = _suffix(out, d, count_only=True)
            else:
                out = out.where(F.col("seq") > _watermark_by_events(out, d))
        out = out.where(F.col("_death").isNull())
        if d.max_age:
            out = out.where(F.col("ts") > now_ns - d.max_age)
        out = out.select("seq", "subject", "ts", "h", "data")
        if in_order and not (d.max_msgs or d.max_bytes):
            # sequences were assigned in the physical order of `tagged` (range-partitioned,
            # sorted) and nothing since moved a row: sorting again would only cost a shuffle
            return out
        return out.orderBy("seq")
    except BaseException:
        tagged.unpersist()
        raise


def _per_subject_cut(out: Any, keep: int) -> tuple[Any, bool]:
    """``out`` with ``_dps`` non-null exactly for the messages the per-subject limit removes
    (``keep`` newer ones of their subject follow them), and whether the rows kept their order.

    Instead of a window over the whole rows by subject (a shuffle of every message and a sort
    by subject), each subject's cut-off, the sequence of its ``keep + 1``-th newest message,
    comes from the narrow ``(subject, seq)`` projection (top ``keep + 1`` per subject before
    the shuffle), and joins back broadcast: the rows stay where they are, in sequence order.
    The value of ``_dps`` is then the cut-off, not the removing message: callers use it only
    as dead / alive. Too many cut-offs to broadcast: the window, as before."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    w = Window.partitionBy("subject").orderBy(F.desc("seq"))
    cut = (out.select("subject", "seq").withColumn("_rn", F.row_number().over(w))
           .where(F.col("_rn") <= keep + 1).where(F.col("_rn") == keep + 1)
           .select(F.col("subject").alias("_csubject"), F.col("seq").alias("_cut")))
    cut = cut.localCheckpoint(eager=True)
    n = cut.count()
    if n == 0:
        return out.withColumn("_dps", F.lit(None).cast("long")), True
    if n > _BROADCAST_CUTS:
        return out.withColumn("_dps", F.lag("seq", keep).over(w)), False
    joined = out.join(F.broadcast(cut), out["subject"] == cut["_csubject"], "left")
    joined = joined.withColumn("_dps", F.when(F.col("seq") <= F.col("_cut"), F.col("_cut")))
    return joined.drop("_csubject", "_cut"), True


def _suffix(out: Any, d: StreamDef, *, count_only: bool) -> Any:
    """Survivors (no death) kept from the newest back while within max_msgs (and max_bytes,
    when no message has a death): per-partition running sums plus the partitions after."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    alive = F.col("_death").isNull()
    one = F.when(alive, F.lit(1)).otherwise(F.lit(0))
    sz = F.when(alive, F.col("_size")).otherwise(F.lit(0))
    out = out.withColumn("_one", one).withColumn("_sz", sz)
    w = Window.partitionBy("_pid").orderBy("_mid").rowsBetween(
        Window.unboundedPreceding, Window.currentRow)
    stats = out.groupBy("_pid").agg(F.sum("_one").alias("n"), F.sum("_sz").alias("b")).collect()
    total_n = sum(r["n"] or 0 for r in stats)
    total_b = sum(r["b"] or 0 for r in stats)
    out = out.withColumn("_rn", _by_pid(_offsets(stats, "n")) + F.sum("_one").over(w)) \
             .withColumn("_rb", _by_pid(_offsets(stats, "b")) + F.sum("_sz").over(w))
    # from the end: messages at or after this one (this one included)
    keep = F.lit(True)
    if d.max_msgs:
        keep = keep & (F.lit(total_n) - F.col("_rn") + F.col("_one") <= d.max_msgs)
    if d.max_bytes and not count_only:
        keep = keep & (F.lit(total_b) - F.col("_rb") + F.col("_sz") <= d.max_bytes)
    return out.where(keep).drop("_one", "_sz", "_rn", "_rb")


def _watermark_by_events(out: Any, d: StreamDef) -> int:
    """W from the events in order (max_bytes with deaths, or rollups): at each message, the
    per-subject removal, then the oldest stored while over a limit, then the rollup."""
    import numpy as np

    pdf = out.select("seq", "_size", "_dps", "_drl").orderBy("seq").toPandas()
    seq = pdf["seq"].to_numpy(np.int64)
    size = pdf["_size"].to_numpy(np.int64)
    dps = pdf["_dps"].fillna(-1).to_numpy(np.int64)
    drl = pdf["_drl"].fillna(-1).to_numpy(np.int64)
    n = len(seq)
    index = {int(s): i for i, s in enumerate(seq)}
    by_ps: dict[int, list[int]] = {}
    by_roll: dict[int, list[int]] = {}
    for i in np.nonzero(dps >= 0)[0]:
        by_ps.setdefault(index[int(dps[i])], []).append(int(i))
    for i in np.nonzero(drl >= 0)[0]:
        by_roll.setdefault(index[int(drl[i])], []).append(int(i))
    max_msgs = d.max_msgs or n + 1
    max_bytes = d.max_bytes or (1 << 62)
    gone = np.zeros(n, dtype=bool)  # removed by a per-subject limit or a rollup
    w = 0  # index of the oldest message not cut yet
    cnt = total = 0
    for i in range(n):
        cnt += 1
        total += int(size[i])
        for p in by_ps.get(i, ()):
            if p >= w and not gone[p]:
                gone[p] = True
                cnt -= 1
                total -= int(size[p])
        while (cnt > max_msgs or total > max_bytes) and w <= i:
            if not gone[w]:
                cnt -= 1
                total -= int(size[w])
            w += 1
        for p in by_roll.get(i, ()):
            if p >= w and not gone[p]:
                gone[p] = True
                cnt -= 1
                total -= int(size[p])
    return int(seq[w - 1]) if w > 0 else 0
