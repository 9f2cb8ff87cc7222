"""The bulk jobs against the engine's pump: same input, same stored rows (subjects, sequences,
timestamps, headers, payloads), row for row.

Each case builds origins with the engine (gaps from deletes and rollups, duplicate message
ids, many subjects, headers the pump strips or replaces), lets the pump fill a target with a
given config, runs the Spark job over the same origins with the same config and compares.
"""

from __future__ import annotations

import random

import pytest

from jetlink.core import lake
from jetlink.core import replication as RP
from jetlink.core.config.stream import StreamConfig
from jetlink.core.jetstream import JetStream

pytestmark = pytest.mark.spark


def _rows(dd, cluster: str, stream: str) -> list[tuple]:
    out = []
    for b in lake.iter_stream_batches(str(dd.cluster_path(cluster)), stream, 0, 1 << 40):
        for r in b.to_pylist():
            out.append((r["seq"], r["subject"], r["ts"], r["headers"], r["data"]))
    return out


def _spark_rows(df) -> list[tuple]:
    return [(r["seq"], r["subject"], r["ts"], bytes(r["headers"]) if r["headers"] else None,
             bytes(r["data"])) for r in df.collect()]


def _fill(js: JetStream, clock, name: str, subjects: list[str], n: int, seed: int, *,
          rollups: bool = False, step_ns: int = 1_000_000) -> None:
    """``n`` messages over ``subjects`` with gaps, duplicates ids and assorted headers."""
    rnd = random.Random(seed)
    js.add_stream({"name": name, "subjects": [f"{name.lower()}.>"],
                   "allow_rollup_hdrs": rollups, "duplicate_window": 0})
    ids = [f"id-{i}" for i in range(n // 3)]
    for i in range(n):
        subject = f"{name.lower()}.{rnd.choice(subjects)}"
        headers: dict[str, str] = {}
        roll = rnd.random()
        if roll < 0.25:
            headers["Nats-Msg-Id"] = rnd.choice(ids)
        elif roll < 0.35:
            headers["Nats-Expected-Stream"] = name
            headers["X-Trace"] = f"t{i}"
        elif roll < 0.45:
            headers["Nats-Stream-Source"] = "ELSEWHERE 9 > > abc"
            headers["Nats-Batch-Id"] = "b1"
        elif roll < 0.5:
            headers["X-Unicode"] = "значение ✓"
        elif rollups and roll < 0.53:
            headers["Nats-Rollup"] = "sub"
        if "Nats-Stream-Source" in headers:
            # a client may not publish it: stored as if it came from a source
            headers.pop("Nats-Stream-Source")
        body = f"payload {i} {'x' * rnd.randint(0, 40)}".encode()
        if "Nats-Batch-Id" in headers:
            # a committed atomic batch's message keeps its Nats-Batch-* headers in the store;
            # a lone one is refused at publish (10174): written as the store holds it
            from jetlink.core.headers import encode_headers

            with js.write() as txn:
                txn.stream(txn.catalog.by_name[name]).append(
                    subject, encode_headers(headers), body, sourced=True)
        else:
            js.publish(subject, body, headers=headers or None)
        clock.advance(rnd.choice([0, 0, step_ns, 3 * step_ns]))
    info = js.stream_info(name)
    last = info.state.last_seq if hasattr(info, "state") else info.to_json()["state"]["last_seq"]
    for seq in rnd.sample(range(1, last + 1), k=max(1, last // 12)):
        try:
            js.delete_msg(name, seq)
        except Exception:  # noqa: BLE001 - already gone (rollup, limit)
            pass


SUBJECTS = [f"s{i}" for i in range(24)] + ["a.b", "a.c", "deep.x.y.z", "ü.ñ"]

MIRROR_CASES = {
    "plain": {},
    "filter": {"mirror": {"filter_subject": "o.s1"}},
    "filter_wildcard": {"mirror": {"filter_subject": "o.a.*"}},
    "transforms": {"mirror": {"subject_transforms": [
        {"src": "o.a.*", "dest": "m.{{wildcard(1)}}.a"},
        {"src": "o.s1", "dest": "m.one"}]}},
    "start_seq": {"mirror": {"opt_start_seq": 40}},
    "start_time": {"mirror": {"opt_start_time": "2026-01-01T00:00:00.05Z"}},
    "per_subject": {"max_msgs_per_subject": 2},
    "max_msgs": {"max_msgs": 37},
    "max_bytes": {"max_bytes": 2500},
    "memory_bytes": {"max_bytes": 2500, "storage": "memory"},
    "per_subject_bytes": {"max_msgs_per_subject": 3, "max_bytes": 3000},
    "per_subject_msgs": {"max_msgs_per_subject": 3, "max_msgs": 20},
    "rollups_bytes": {"allow_rollup_hdrs": True, "max_bytes": 4000},
    "rollups": {"allow_rollup_hdrs": True, "max_msgs_per_subject": 4},
    "max_age": {"max_age": 200_000_000},
}


def _target(name: str, kind: str, extra: dict, origin: str = "O") -> StreamConfig:
    doc: dict = {"name": name}
    if kind == "mirror":
        doc["mirror"] = {"name": origin, **extra.get("mirror", {})}
    doc.update({k: v for k, v in extra.items() if k not in ("mirror", "sources")})
    if "sources" in extra:
        doc["sources"] = extra["sources"]
    return StreamConfig.from_json(doc)


@pytest.fixture
def origin(dd, js, clock):
    _fill(js, clock, "O", SUBJECTS, 300, seed=7, rollups=True)
    clock.advance(10_000_000)
    return js


def _store_input(spark, dd, name: str, cluster: str = "local"):
    from jetlink.sparkops import io

    js = JetStream(dd.open(cluster), None)  # noqa: F841 - opened for the path
    cl = dd.open(cluster)
    with cl.read() as conn:
        sid, first, last, msgs = conn.execute(
            "SELECT id, first_seq, last_seq, msgs FROM streams WHERE name = ?",
            (name,)).fetchone()
    return io.read_store_stream(spark, str(dd.cluster_path(cluster)), name, sid, first, last,
                                msgs)


@pytest.mark.parametrize("case", list(MIRROR_CASES))
def test_mirror_equals_pump(spark, dd, origin, clock, case):
    from jetlink.sparkops import jobs

    cfg = _target("M", "mirror", MIRROR_CASES[case])
    origin.add_stream(cfg.to_json())
    RP.pump_until_idle(dd, clock)
    want = _rows(dd, "local", "M")
    got = _spark_rows(jobs.mirror(_store_input(spark, dd, "O"), cfg, now_ns=clock.now_ns()))
    assert got == want
    assert want  # the case stores something


SOURCE_CASES = {
    "two_origins": {"sources": [{"name": "O"}, {"name": "P"}]},
    "dedupe": {"sources": [{"name": "O"}, {"name": "P"}], "duplicate_window": 120_000_000_000},
    "filters_transforms": {"sources": [
        {"name": "O", "subject_transforms": [{"src": "o.*", "dest": "x.{{wildcard(1)}}"}]},
        {"name": "P", "filter_subject": "p.a.>"}]},
    "keep_last": {"sources": [{"name": "O"}, {"name": "P"}], "max_msgs_per_subject": 2,
                  "duplicate_window": 120_000_000_000},
    "limits": {"sources": [{"name": "O"}, {"name": "P"}], "max_msgs": 40},
    "bytes_per_subject": {"sources": [{"name": "O"}, {"name": "P"}], "max_bytes": 3000,
                          "max_msgs_per_subject": 2},
    "start_seq": {"sources": [{"name": "O", "opt_start_seq": 100}, {"name": "P"}]},
    "rollups": {"sources": [{"name": "O"}, {"name": "P"}], "allow_rollup_hdrs": True},
    "stream_transform": {"sources": [{"name": "O"}],
                         "subject_transform": {"src": "o.>", "dest": "t.>"}},
}


@pytest.mark.parametrize("case", list(SOURCE_CASES))
def test_source_equals_pump(spark, dd, origin, clock, case):
    from jetlink.sparkops import jobs

    _fill(origin, clock, "P", SUBJECTS[:8], 150, seed=11)
    cfg = _target("T", "source", SOURCE_CASES[case])
    origin.add_stream(cfg.to_json())
    RP.pump_until_idle(dd, clock)
    want = _rows(dd, "local", "T")
    with dd.open("local").read() as conn:
        created = {n: c for n, c in conn.execute("SELECT name, created_ns FROM streams")}
    origins = [jobs.Origin(_store_input(spark, dd, s.name), s, RP.identity(created[s.name]))
               for s in cfg.sources]
    got = _spark_rows(jobs.source(origins, cfg, now_ns=clock.now_ns()))
    assert got == want
    assert want


# Origins read from Parquet (partitions that are the same in every query): the source job
# plans sequences from per-partition counts when the partitions hold disjoint ranges of the
# merge order, else sorts. Layouts: files each sorted and disjoint, rows shuffled inside
# disjoint files, files with overlapping ranges.
PARQUET_CASES = {
    "keep_last_dedupe": {"sources": [{"name": "O"}], "max_msgs_per_subject": 2,
                         "duplicate_window": 120_000_000_000},
    "transform_filter": {"sources": [{"name": "O", "subject_transforms": [
                                          {"src": "o.a.*", "dest": "x.{{wildcard(1)}}"},
                                          {"src": "o.s1", "dest": "one"}]}],
                         "duplicate_window": 120_000_000_000, "max_msgs_per_subject": 3},
    "stream_transform": {"sources": [{"name": "O", "opt_start_seq": 30}],
                         "subject_transform": {"src": "o.>", "dest": "t.>"}},
    "two_origins": {"sources": [{"name": "O"}, {"name": "P"}], "max_msgs_per_subject": 2,
                    "duplicate_window": 120_000_000_000},
}


def _to_parquet(spark, df, path: str, layout: str) -> None:
    from pyspark.sql import functions as F

    if layout == "sorted_files":
        df = df.repartitionByRange(3, "seq").sortWithinPartitions("seq")
    elif layout == "shuffled_within":
        df = df.repartitionByRange(3, "seq").sortWithinPartitions(F.rand(5))
    else:  # overlapping ranges
        df = df.repartition(3, F.col("seq") % 3)
    df.write.parquet(path)


@pytest.mark.parametrize("layout", ["sorted_files", "shuffled_within", "overlapping"])
@pytest.mark.parametrize("case", list(PARQUET_CASES))
def test_source_from_parquet_equals_pump(spark, dd, origin, clock, tmp_path, case, layout):
    from jetlink.sparkops import io, jobs

    _fill(origin, clock, "P", SUBJECTS[:8], 150, seed=11)
    cfg = _target("T", "source", PARQUET_CASES[case])
    origin.add_stream(cfg.to_json())
    RP.pump_until_idle(dd, clock)
    want = _rows(dd, "local", "T")
    with dd.open("local").read() as conn:
        created = {n: c for n, c in conn.execute("SELECT name, created_ns FROM streams")}
    origins = []
    for s in cfg.sources:
        path = str(tmp_path / f"in-{s.name}")
        _to_parquet(spark, _store_input(spark, dd, s.name), path, layout)
        origins.append(jobs.Origin(io.read_parquet(spark, path), s,
                                   RP.identity(created[s.name])))
    got = _spark_rows(jobs.source(origins, cfg, now_ns=clock.now_ns()))
    assert got == want
    assert want
    # unordered (a Parquet output): the same rows; each partition in order
    out = jobs.source(origins, cfg, now_ns=clock.now_ns(), ordered=False)
    assert sorted(_spark_rows(out)) == want
    parts = out.rdd.glom().map(lambda rows: [r["seq"] for r in rows]).collect()
    assert all(p == sorted(p) for p in parts)



@pytest.mark.parametrize("limit", [0, 1])
@pytest.mark.parametrize("case", ["transform_filter", "two_origins"])
def test_source_cutoffs_joined_equals_pump(spark, dd, origin, clock, tmp_path, monkeypatch,
                                           case, limit):
    """Past the literal-list limits (the hot subjects' origin subjects, their duplicates, the
    cut-offs written into the plan) the source job joins by broadcast instead: same rows."""
    from jetlink.sparkops import jobs

    monkeypatch.setattr(jobs, "_HOT_ORIGIN_SUBJECTS", limit)
    monkeypatch.setattr(jobs, "_HOT_LOSERS", limit)
    monkeypatch.setattr(jobs, "_CASE_CUTS", limit)
    test_source_from_parquet_equals_pump(spark, dd, origin, clock, tmp_path, case,
                                         "sorted_files")

def test_bench_data_job_equals_pump(spark, tmp_path):
    """`jetlink bench spark`'s check, small: its generated input (hot subjects over the
    keep-last limit, repeated Nats-Msg-Ids), the source job written as Parquet and the
    engine's pump over the same messages give the same rows and digest."""
    from jetlink.sparkops import bench as B
    from jetlink.sparkops import io

    src = str(tmp_path / "orders")
    n = 30_000  # 20 subjects: ~1,500 messages each, over the keep-last-1000 limit
    meta = B.generate(spark, src, n, subjects=20)
    want = B.pump_reference(spark, src, str(tmp_path), n)
    cfg = B.target_config()
    B._job(spark, src, str(tmp_path / "job"), meta, 1_800_000_000_000_000_000)
    got = B.digest(spark.read.parquet(str(tmp_path / "job")))
    assert got == want
    # duplicates (2.5 %) and the per-subject limit both removed some
    assert 0 < want["rows"] < n - n // 40
    assert cfg.max_msgs_per_subject == 1000 and io.read_meta(spark, src)["name"] == "ORDERS"
    # io.WRITE_OPTIONS: the headers column has no statistics and no dictionary, the other
    # columns theirs (a subject's dictionary kept)
    import glob

    import pyarrow.parquet as pq

    files = glob.glob(str(tmp_path / "job" / "*.parquet"))
    assert files
    for f in files:
        meta_f = pq.ParquetFile(f).metadata
        names = [meta_f.schema.column(i).name for i in range(meta_f.num_columns)]
        for g in range(meta_f.num_row_groups):
            chunk = meta_f.row_group(g).column
            stats = {n: chunk(i).statistics for i, n in enumerate(names)}
            assert stats["headers"] is None or not stats["headers"].has_min_max, f
            assert stats["seq"].has_min_max and stats["subject"].has_min_max, f
    # ... and no dictionary: headers that repeat are written plain, a subject's dictionary
    # kept
    from jetlink.core import lake

    same = spark.createDataFrame(
        [("S", 0, i + 1, "s.a", None, 1, b"NATS/1.0\r\nA: b\r\n\r\n", b"x")
         for i in range(500)], lake.spark_ddl())
    io.write_parquet(same, str(tmp_path / "same"), None)
    for f in glob.glob(str(tmp_path / "same" / "*.parquet")):
        meta_f = pq.ParquetFile(f).metadata
        names = [meta_f.schema.column(i).name for i in range(meta_f.num_columns)]
        encodings = {n: set(meta_f.row_group(0).column(i).encodings)
                     for i, n in enumerate(names)}
        dictionary = {"PLAIN_DICTIONARY", "RLE_DICTIONARY"}
        assert not encodings["headers"] & dictionary and encodings["subject"] & dictionary, \
            encodings
