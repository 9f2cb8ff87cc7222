"""The bulk copy of a topic into its mirror topic (``jetlink spark mirror-topic``).

What the link's pump (core/kafka/mirror_copy.py ``copy_records``) does record by record,
done for a whole history at once, with the same result:

- the job (:func:`mirror_topic`, DataFrame -> DataFrame over the lake schema): per partition,
  the source records at offsets ``first <= offset < end`` of the plan, each at its own offset,
  with its timestamp, key, value and headers unchanged (gaps of a compacted partition stay
  gaps). Retention is the engine's, not the job's: the plan starts no lower than the source's
  log start after the source's retention ran (the mirror's log start follows the source's),
  and the mirror topic's own retention (its synced configs) runs through core once the rows
  are written, as after a pump step;
- the orchestration (:func:`seed_mirror_topic`): core plans and holds the mirror
  (``Mirrors.bulk_begin``: created paused through ``Mirrors.create`` when absent; an existing
  mirror must hold no records; the cut is the source's log end offsets), Spark reads the cut
  from the source cluster's SQLite file (sparkops/io.py ``read_store_topic``), the rows are
  written through core in large transactions (core/lake.py ``write_topic_rows`` ->
  ``Mirrors.bulk_write``), then ``Mirrors.bulk_finish`` sets the cursors (each partition's
  log end and fetch position at the cut), hands the mirror back to the link (the pump
  continues from the cut: no gap, no duplicate), runs the consumer offset sync through the
  link's group filters and, with ``failover``, fails the mirror over, clamping synced group
  offsets to the mirror's log end offsets (every clamp reported).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jetlink.core import lake
from jetlink.core.clock import Clock
from jetlink.core.errors import JetlinkError
from jetlink.core.kafka.mirrors import BulkPlan, Mirrors
from jetlink.core.store import DataDir

from . import io

_MAX_ROWS_PER_RANGE = 250_000
_MIN_ROWS_PER_RANGE = 10_000


@dataclass
class TopicSummary:
    """What a mirror-topic job did (``--json`` prints :meth:`to_json`)."""

    target: str
    source: str
    link: str
    created: bool = False
    rows_in: int = 0
    rows_out: int = 0
    seconds: float = 0.0
    transactions: int = 0
    cursors: list[dict[str, Any]] = field(default_factory=list)
    mirror_status: str = ""
    offsets_synced: int = 0
    failover: bool = False
    clamps: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        rate = self.rows_in / self.seconds if self.seconds > 0 else 0.0
        return {"job": "mirror-topic", "target": self.target, "source": self.source,
                "link": self.link, "created": self.created, "rows_in": self.rows_in,
                "rows_out": self.rows_out, "seconds": round(self.seconds, 3),
                "rows_per_second": round(rate, 1), "transactions": self.transactions,
                "cursor_set": bool(self.cursors), "cursors": self.cursors,
                "mirror_status": self.mirror_status, "offsets_synced": self.offsets_synced,
                "failover": self.failover, "clamps": self.clamps}


# --------------------------------------------------------------------------------------------
# the job
# --------------------------------------------------------------------------------------------
def mirror_topic(df: Any, plan: BulkPlan) -> Any:
    """The mirror topic's rows from the source topic's (lake schema): per partition of the
    plan, offsets ``first <= seq < end``, everything else of a row kept; ``stream`` becomes
    the mirror topic's name; sorted by partition, then offset. A row of a stream (with a
    subject) fails the job."""
    from pyspark.sql import functions as F

    if not plan.partitions:
        return df.limit(0)
    firsts = F.create_map(*[x for bp in plan.partitions
                            for x in (F.lit(bp.partition), F.lit(bp.first))])
    ends = F.create_map(*[x for bp in plan.partitions
                          for x in (F.lit(bp.partition), F.lit(bp.end))])
    part, seq = F.col("partition"), F.col("seq")
    keep = (seq >= F.try_element_at(firsts, part)) & (seq < F.try_element_at(ends, part))
    subject = F.when(F.col("subject").isNotNull(), F.raise_error(F.concat(
        F.lit("a row with a subject (a stream message, "), F.col("subject"),
        F.lit("): a topic's records have none")))).cast("string")
    return (df.where(keep)
            .select(F.lit(plan.topic).alias("stream"), part.cast("int").alias("partition"),
                    seq.cast("long").alias("seq"), subject.alias("subject"), F.col("key"),
                    F.col("ts").cast("long").alias("ts"), F.col("headers"), F.col("data"))
            .orderBy("partition", "seq"))


def rows_per_range(plan: BulkPlan, parallelism: int) -> int:
    """Offsets per read range: the copy spread over the executors' cores, 10,000 to
    250,000 offsets a range."""
    span = sum(max(bp.end - bp.first, 0) for bp in plan.partitions)
    want = -(-span // max(parallelism, 1)) if span else 1
    return max(_MIN_ROWS_PER_RANGE, min(_MAX_ROWS_PER_RANGE, want))


# --------------------------------------------------------------------------------------------
# the orchestration
# --------------------------------------------------------------------------------------------
def seed_mirror_topic(spark: Any, datadir: DataDir, clock: Clock, cluster: str, topic: str,
                      link: str, *, failover: bool = False, txn_rows: int = 100_000,
                      progress: Callable[[int], None] | None = None) -> TopicSummary:
    """Copy the source topic of mirror topic ``topic`` (link ``link``, stored in ``cluster``,
    the destination) with Spark, then hand the mirror back to the link (module doc)."""
    from .run import SparkJobError

    t0 = time.perf_counter()
    mirrors = Mirrors(datadir, cluster, clock)
    plan = mirrors.bulk_begin(topic, link)
    summary = TopicSummary(target=f"store:{cluster}/topic/{plan.topic}",
                           source=f"store:{plan.source_cluster}/topic/{plan.source_topic}",
                           link=link, created=plan.created, rows_in=plan.rows_in,
                           failover=failover)
    try:
        ranges = plan.key_ranges(rows_per_range(plan, spark.sparkContext.defaultParallelism))
        df = io.read_store_topic(spark, str(datadir.cluster_path(plan.source_cluster)),
                                 plan.source_topic, plan.source_rowid, ranges)
        out = mirror_topic(df, plan)
        lake.write_topic_rows(mirrors, plan, io.iter_arrow(out), txn_rows=txn_rows,
                              on_txn=progress)
    except JetlinkError:
        mirrors.bulk_release(plan)
        raise
    except BaseException as e:
        mirrors.bulk_release(plan)
        from .session import as_interrupt, failure_text

        stop = as_interrupt(e)
        if stop is not None:  # what it left, for the interrupted line
            stop.left = (f"mirror topic {plan.topic} keeps the {plan.rows_out:,} records "  # type: ignore[attr-defined]
                         "the job wrote; the link continues from there (jetlink replicate)")
            raise stop from stop.__cause__
        if not isinstance(e, Exception):
            raise
        # Spark's errors, reported by their first line
        raise SparkJobError(f"{failure_text(e)}; mirror topic {plan.topic} keeps the "
                            f"{plan.rows_out} records written, the link continues from there"
                            ) from None
    result = mirrors.bulk_finish(plan, failover=failover)
    summary.rows_out = plan.rows_out
    summary.transactions = plan.transactions
    summary.cursors = [bp.to_json() for bp in plan.partitions]
    summary.mirror_status = result.status
    summary.offsets_synced = result.offsets_synced
    summary.clamps = [c.to_json() for c in result.clamps]
    summary.seconds = time.perf_counter() - t0
    return summary


__all__ = ["TopicSummary", "mirror_topic", "rows_per_range", "seed_mirror_topic"]
