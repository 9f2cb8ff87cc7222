"""``jetlink bench spark``: the source job against Spark's own Parquet copy, and the end-to-end
time of a small ``jetlink spark mirror`` (JVM start included).

In one run, on one session:

1. generates ``messages`` messages of stream ORDERS in the lake schema (core/lake.py) with
   Spark SQL (``spark.range``), written as Parquet with a ``_jetlink.json`` (io.write_meta):
   subjects ``orders.<region>.<n>.created`` over ``subjects`` subjects (1 % of the messages on
   ten hot subjects, so a keep-last-1000 limit removes some), 5 % of the messages carrying a
   ``Nats-Msg-Id`` (half of them repeating the one before: duplicates), ~100-byte payloads;
2. the reference (not timed): the same messages written into an embedded store's ORDERS
   stream, and the engine's pump filling SHIPPING from it (core/replication.py, the same
   comparison as tests/test_spark_jobs.py); its row count and content digest
   (``digest``: sequence, subject, headers, payload of every row) are what every job run
   must write;
3. ``runs`` pairs, the side going first alternating pair by pair (core/bench/engine.py ``pairs``):
   (a) a plain Spark Parquet -> Parquet copy of that data (read + write: what Spark itself
   needs to move these bytes here) and (b) the source job (sparkops.jobs.source) into
   SHIPPING: transform ``orders.*.>`` -> ``shipping.{{wildcard(1)}}.>``,
   ``max_msgs_per_subject`` 1000, duplicate window 2m, written to Parquet (io.write_parquet);
   each job's output is checked against the reference (rows and digest: a mismatch fails
   the benchmark); reports each pair's ratio job / copy and their median (``ratio_median``;
   ``ratio`` is the same figure), and the medians of each side;
4. times ``jetlink spark mirror store:ORDERS10K store:M`` over a ``e2e_messages`` stream of
   the embedded store as a subprocess (JVM start included), ``runs`` times after one first
   run, reported apart (``e2e_first_seconds``; ``e2e_first_built_archive``: that run made
   the JVM's class-data-sharing archive, none being there).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jetlink.core import lake
from jetlink.core.config.stream import StreamConfig

TRANSFORM = ("orders.*.>", "shipping.{{wildcard(1)}}.>")
REGIONS = ("eu", "us", "ap", "sa")
BASE_TS = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z


def generate(spark: Any, path: str, n: int, subjects: int = 10_000) -> dict[str, Any]:
    """Write ``n`` ORDERS messages (lake schema) at ``path`` with their ``_jetlink.json``."""
    from pyspark.sql import functions as F

    from . import io

    hot = min(10, subjects)
    ident = F.col("id")
    num = F.when(ident % 100 == 0, (ident / 100).cast("long") % hot) \
           .otherwise((ident * 7919) % subjects)
    region = F.element_at(F.array(*[F.lit(r) for r in REGIONS]),
                          (num % len(REGIONS) + 1).cast("int"))
    pair = (ident - ident % 40) / 40
    msgid = F.when(ident % 40 < 2, F.concat(F.lit("NATS/1.0\r\nNats-Msg-Id: o"),
                                             pair.cast("long").cast("string"),
                                             F.lit("\r\n\r\n")))
    payload = F.concat(F.lit('{"order":'), ident.cast("string"), F.lit(',"sku":"'),
                       F.sha2(ident.cast("string"), 256), F.lit('"}'))
    df = spark.range(n, numPartitions=max(2, -(-n // 1_000_000))).select(
        F.lit("ORDERS").alias("stream"), F.lit(0).cast("int").alias("partition"),
        (ident + 1).alias("seq"),
        F.concat(F.lit("orders."), region, F.lit("."), num.cast("string"),
                 F.lit(".created")).alias("subject"),
        F.lit(None).cast("binary").alias("key"),
        (F.lit(BASE_TS) + ident * 1000).alias("ts"),
        F.encode(msgid, "UTF-8").alias("headers"),
        F.encode(payload, "UTF-8").alias("data"))
    df.write.mode("errorifexists").parquet(path)
    from jetlink.core.replication import identity

    cfg = StreamConfig.from_json({"name": "ORDERS", "subjects": ["orders.>"]})
    meta = {"kind": "stream", "name": "ORDERS", "cluster": "", "config": cfg.to_json(),
            "created_ns": BASE_TS, "identity": identity(BASE_TS),
            "state": {"messages": n, "first_seq": 1 if n else 0, "last_seq": n}}
    io.write_meta(spark, path, meta)
    return meta


def target_config() -> StreamConfig:
    return StreamConfig.from_json({
        "name": "SHIPPING", "max_msgs_per_subject": 1000, "duplicate_window": 120_000_000_000,
        "sources": [{"name": "ORDERS", "subject_transforms": [
            {"src": TRANSFORM[0], "dest": TRANSFORM[1]}]}]})


def _copy(spark: Any, src: str, dst: str) -> None:
    spark.read.schema(lake.spark_ddl()).parquet(src).write.mode("errorifexists").parquet(dst)


def _job(spark: Any, src: str, dst: str, meta: dict[str, Any], now_ns: int) -> None:
    from . import io, jobs

    cfg = target_config()
    df = io.read_parquet(spark, src)
    out = jobs.source([jobs.Origin(df, cfg.sources[0], meta["identity"])], cfg, now_ns=now_ns,
                      ordered=False)
    io.write_parquet(out, dst, {"kind": "stream", "name": cfg.name,
                                "config": cfg.to_json(), "created_ns": now_ns})


def digest(df: Any) -> dict[str, Any]:
    """Rows and a content digest of a stream's rows (lake schema): order-independent sums of
    two hashes of (seq, subject, headers, data) per row (the times are left out: a source
    job stamps its own)."""
    import hashlib

    from pyspark.sql import functions as F

    cols = ["seq", "subject", "headers", "data"]
    r = df.select(F.count(F.lit(1)).alias("n"),
                  F.sum(F.xxhash64(*cols).cast("decimal(38,0)")).alias("x"),
                  F.sum(F.hash(*cols).cast("decimal(38,0)")).alias("m")).first()
    text = f"{r['n']}:{r['x'] or 0}:{r['m'] or 0}"
    return {"rows": int(r["n"]), "digest": hashlib.sha256(text.encode()).hexdigest()[:16]}


def pump_reference(spark: Any, src: str, work: str, messages: int) -> dict[str, Any]:
    """What the engine's pump stores in SHIPPING from the messages at ``src``: the messages
    written into an embedded store's ORDERS (each at its own sequence and time, created at
    BASE_TS so its identity is the dataset's), then ``pump_until_idle`` (a manual clock: the
    whole copy inside the duplicate window, as the job assumes). Rows and digest."""
    from jetlink.core.clock import ManualClock
    from jetlink.core.jetstream import JetStream
    from jetlink.core.replication import pump_until_idle
    from jetlink.core.store import DataDir

    from . import io

    data = os.path.join(work, "pump")
    clock = ManualClock(BASE_TS)
    dd = DataDir(data)
    try:
        js = JetStream(dd.open("local"), clock)
        # a mirror (of a stream this store does not hold) takes every message as it is,
        # repeated ids included, as a stream that received them over time holds them
        js.add_stream({"name": "ORDERS", "mirror": {"name": "ORDERS_UPSTREAM"}})
        df = io.read_parquet(spark, src).orderBy("seq")
        lake.write_stream_rows(js, "ORDERS", io.iter_arrow(df, total=messages))
        clock.set(BASE_TS + messages * 1000 + 1_000_000_000)
        js.add_stream(target_config().to_json())
        pump_until_idle(dd, clock)
        with dd.open("local").read() as conn:
            sid, first, last, msgs = conn.execute(
                "SELECT id, first_seq, last_seq, msgs FROM streams WHERE name = 'SHIPPING'"
            ).fetchone()
        out = io.read_store_stream(spark, str(dd.cluster_path("local")), "SHIPPING", sid,
                                   first, last, msgs)
        return digest(out)
    finally:
        dd.close()


def _du(path: str) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def jetlink_command() -> list[str]:
    """The installed ``jetlink`` beside this interpreter, else ``python -m jetlink.cli``."""
    exe = Path(sys.executable).with_name("jetlink")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "jetlink.cli"]


def make_store_stream(data_dir: str, name: str, n: int, subjects: int = 1_000) -> None:
    """A stream ``name`` of ``n`` messages (1 in 10 with a Nats-Msg-Id) in cluster local."""
    from jetlink.core.clock import SystemClock
    from jetlink.core.jetstream import JetStream
    from jetlink.core.store import DataDir

    dd = DataDir(data_dir)
    try:
        js = JetStream(dd.open("local"), SystemClock())
        js.add_stream({"name": name, "subjects": ["orders.>"]})
        batch = []
        for i in range(n):
            batch.append((f"orders.{REGIONS[i % 4]}.{i % subjects}.created",
                          b'{"order":%d,"sku":"%s"}' % (i, b"x" * 64),
                          {"Nats-Msg-Id": f"o{i}"} if i % 10 == 0 else None))
            if len(batch) == 10_000:
                js.publish_batch(batch)
                batch = []
        if batch:
            js.publish_batch(batch)
    finally:
        dd.close()


def first_use() -> bool:
    """Whether the next Spark JVM is the first (no intact class-data-sharing archive yet:
    it makes one, and is slower)."""
    from .session import ClassDataSharing, _intact, cds_enabled

    if not cds_enabled():
        return False
    plan = ClassDataSharing.plan()
    return plan is not None and not _intact(plan.driver_archive)


def time_cli_mirror(n: int, runs: int, master: str = "local[*]",
                    note: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Whole-process ``jetlink spark mirror store:ORDERS10K store:M<i>`` over an ``n``-message
    stream: one warm-up run, then ``runs`` timed runs (median, min, max)."""
    tmp = tempfile.mkdtemp(prefix="jetlink-bench-spark-e2e-")
    try:
        data = os.path.join(tmp, "data")
        make_store_stream(data, "ORDERS10K", n)
        env = {k: v for k, v in os.environ.items() if k not in ("JETLINK_DATA_DIR",
                                                                 "PYSPARK_GATEWAY_PORT",
                                                                 "PYSPARK_GATEWAY_SECRET")}
        walls, jobs = [], []
        first = 0.0
        built = first_use()
        for i in range(runs + 1):
            if note:
                note(f"end to end: run {i}/{runs}" if i else "end to end: first run")
            argv = [*jetlink_command(), "--data-dir", data, "spark", "mirror",
                    "store:ORDERS10K", f"store:M{i}", "--master", master, "--json"]
            t0 = time.perf_counter()
            proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True)
            wall = time.perf_counter() - t0
            if proc.returncode != 0:
                raise RuntimeError(f"jetlink spark mirror failed ({proc.returncode}): "
                                   f"{(proc.stderr or proc.stdout).strip()[-500:]}")
            import json

            doc = json.loads(proc.stdout)
            if doc["rows_out"] != n:
                raise RuntimeError(f"jetlink spark mirror wrote {doc['rows_out']} of {n}")
            if i == 0:
                first = wall
            else:
                walls.append(wall)
                jobs.append(float(doc["seconds"]))
        return {"e2e_messages": n, "e2e_runs": runs,
                "e2e_seconds": round(statistics.median(walls), 2),
                "e2e_min_seconds": round(min(walls), 2),
                "e2e_max_seconds": round(max(walls), 2),
                "e2e_job_seconds": round(statistics.median(jobs), 2),
                "e2e_first_seconds": round(first, 2),
                "e2e_first_built_archive": built}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def bench_spark(messages: int = 5_000_000, *, runs: int = 1, subjects: int = 10_000,
                e2e_messages: int = 10_000, master: str = "local[*]",
                conf: list[str] | None = None, work_dir: str | None = None,
                note: Callable[[str], None] | None = None) -> dict[str, Any]:
    """See the module doc. Returns the figures as one flat dict (seconds are medians)."""
    from jetlink.sparkops.session import SparkOptions, get_session

    if messages < 1 or runs < 1 or subjects < 1 or e2e_messages < 0:
        raise ValueError("messages, runs and subjects must be positive")
    out: dict[str, Any] = {"messages": messages, "subjects": subjects, "runs": runs,
                           "master": master, "cores": os.cpu_count()}
    if e2e_messages:
        # first, before this process starts its own JVM (which would hold memory and cores)
        out.update(time_cli_mirror(e2e_messages, runs, master, note))
    tmp = tempfile.mkdtemp(prefix="jetlink-bench-spark-", dir=work_dir)
    try:
        if note:
            note("starting Spark")
        t0 = time.perf_counter()
        spark = get_session(SparkOptions(master=master, conf=list(conf or []),
                                         app_name="jetlink-bench", expected_rows=messages))
        out["session_seconds"] = round(time.perf_counter() - t0, 2)
        src = os.path.join(tmp, "orders")
        if note:
            note(f"generating {messages:,} messages")
        t0 = time.perf_counter()
        meta = generate(spark, src, messages, subjects)
        out["generate_seconds"] = round(time.perf_counter() - t0, 2)
        out["input_bytes"] = _du(src)
        if note:
            note(f"the engine's pump over the same {messages:,} messages (reference)")
        t0 = time.perf_counter()
        want = pump_reference(spark, src, tmp, messages)
        out["reference_seconds"] = round(time.perf_counter() - t0, 2)
        out["rows_out_reference"] = want["rows"]
        out["digest_reference"] = want["digest"]
        from jetlink.core.bench.engine import pairs

        count = [0, 0]

        def copy() -> float:
            count[0] += 1
            dst = os.path.join(tmp, f"copy{count[0]}")
            if note:
                note(f"pair {max(count)}/{runs}: Parquet copy")
            t0 = time.perf_counter()
            _copy(spark, src, dst)
            took = time.perf_counter() - t0
            shutil.rmtree(dst, ignore_errors=True)
            return took

        def job() -> float:
            count[1] += 1
            dst = os.path.join(tmp, f"job{count[1]}")
            if note:
                note(f"pair {max(count)}/{runs}: source job")
            t0 = time.perf_counter()
            _job(spark, src, dst, meta, time.time_ns())
            took = time.perf_counter() - t0
            got = digest(spark.read.parquet(dst))
            spark.catalog.clearCache()  # what the job persisted
            shutil.rmtree(dst, ignore_errors=True)
            if got != want:
                raise RuntimeError(
                    f"the source job wrote {got['rows']:,} rows (digest {got['digest']}), the "
                    f"engine's pump {want['rows']:,} (digest {want['digest']}): not the same")
            return took

        results = pairs(runs, copy, job)
        copies = [c for c, _j in results]
        jobs_s = [j for _c, j in results]
        ratios = [j / c for c, j in results]
        copy_s, job_s = statistics.median(copies), statistics.median(jobs_s)
        ratio = statistics.median(ratios)
        out.update({
            "copy_seconds": round(copy_s, 2),
            "copy_rows_per_sec": round(messages / copy_s),
            "job_seconds": round(job_s, 2),
            "job_rows_per_sec": round(messages / job_s),
            "ratios": [round(r, 2) for r in ratios],
            "ratio_median": round(ratio, 2),
            "ratio": round(ratio, 2),
            "rows_out": want["rows"],
            "digest": want["digest"],
            "output_checked": True,
            "copy_runs_seconds": [round(x, 2) for x in copies],
            "job_runs_seconds": [round(x, 2) for x in jobs_s],
        })
        out["java"] = spark.sparkContext._jvm.java.lang.System.getProperty("java.version")
        out["pyspark"] = spark.version
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out
