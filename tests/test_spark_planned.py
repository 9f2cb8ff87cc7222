"""The source job planned on the driver (sparkops/planned.py) against the engine's pump, and
its parts: which rows a Spark partition reads (file splits, row groups), the Nats-Msg-Id
rule on bytes, the subject map as a Spark expression, the refusals, and where it steps
aside for the Spark-planned job."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_spark_jobs import (
    PARQUET_CASES,
    SUBJECTS,
    _fill,
    _rows,
    _spark_rows,
    _store_input,
    _target,
    origin,  # noqa: F401 - the fixture (the tests take it as a parameter)
)

from jetlink.core import copyrules as C
from jetlink.core import headers as H
from jetlink.core import replication as RP
from jetlink.core.transform import compile_transform

# --------------------------------------------------------------------------------------------
# Nats-Msg-Id on bytes: the rule of core.headers (first_values)
# --------------------------------------------------------------------------------------------
ID_BLOCKS = [
    (b"NATS/1.0\r\nNats-Msg-Id: a1\r\n\r\n", b"a1"),
    (b"NATS/1.0\r\nNats-Msg-Id:a1\r\n\r\n", b"a1"),
    (b"NATS/1.0\r\nNats-Msg-Id:   a1 \r\n\r\n", b"a1 "),
    (b"NATS/1.0\r\nX: y\r\nNats-Msg-Id: two\r\nNats-Msg-Id: later\r\n\r\n", b"two"),
    (b"NATS/1.0\r\nNats-Msg-Id: \r\n\r\n", None),  # empty: no id
    (b"NATS/1.0\r\nNats-Msg-Id: x\r\r\n\r\n", b"x\r"),  # a lone CR belongs to the value
    (b"NATS/1.0\r\nNats-Msg-Id: a\nb\r\n\r\n", b"a\nb"),
    (b"NATS/1.0\r\nNats-Msg-Idx: no\r\n\r\n", None),
    (b"NATS/1.0\r\nX-Nats-Msg-Id: no\r\nNats-Msg-Id: yes\r\n\r\n", b"yes"),
    (b"NATS/1.0\r\nX: Nats-Msg-Id: no\r\n\r\n", None),
    (b"NATS/1.0\r\nnats-msg-id: no\r\n\r\n", None),  # names are exact
    (b"NATS/1.0\r\nNats-Msg-Id: \xff\xfe\r\n\r\n", b"\xff\xfe"),
    (b"NATS/1.0\r\nX: 1\r\nNats-Msg-Id: \xff\xfe \r\n\r\n", b"\xff\xfe "),
    (b"NATS/1.0\r\nNats-Msg-Id: open", b"open"),  # no line end
    (b"NATS/1.0 503\r\nNats-Msg-Id: s\r\n\r\n", b"s"),
    (b"NATS/1.0\r\n\r\n", None),
]


def _core_id(block: bytes) -> bytes | None:
    v = H.first_values(block).get(H.MSG_ID)
    return v.encode("utf-8", "surrogateescape") if v else None


@pytest.mark.parametrize("block,want", ID_BLOCKS)
def test_msg_ids_table(block, want):
    import pyarrow as pa

    from jetlink.sparkops.planned import msg_ids

    assert _core_id(block) == want  # the table is core's rule
    assert msg_ids(pa.array([block], pa.binary())).to_pylist() == [want]


_LINE = st.one_of(
    st.tuples(st.sampled_from(["Nats-Msg-Id", "Nats-Msg-Id ", "X-A", "nats-msg-id"]),
              st.sampled_from([":", ": ", ":  "]),
              st.binary(max_size=8)),
    st.binary(max_size=12).map(lambda b: (b.decode("latin-1"), "", b"")))


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=4), st.booleans())
def test_msg_ids_equal_core_on_any_block(lines, tail):
    import pyarrow as pa

    from jetlink.sparkops.planned import msg_ids

    block = b"NATS/1.0" + b"".join(
        b"\r\n" + name.encode("latin-1") + sep.encode() + value for name, sep, value in lines)
    block += b"\r\n\r\n" if tail else b""
    assert msg_ids(pa.array([block, None], pa.binary())).to_pylist() == [_core_id(block), None]


# --------------------------------------------------------------------------------------------
# the subject map as an expression
# --------------------------------------------------------------------------------------------
SUBJECT_MAPS = [
    # (transform src, dest, subjects, the expression's kind)
    ("orders.*.>", "shipping.{{wildcard(1)}}.>", ["orders.eu.1.a", "orders.us.22.b"], "prefix"),
    (">", "mirror.>", ["a", "a.b.c", "ü.ñ"], "prefix"),
    ("o.>", "o.>", ["o.a", "o.b"], "same"),
    ("a.*.*", "a.{{wildcard(2)}}.{{wildcard(1)}}", ["a.x.y", "a.p.q"], "transform"),
    ("o.*", "{{wildcard(1)}}", ["o.a", "o.b"], "prefix"),  # "o." removed
    ("*.*", "{{wildcard(2)}}.{{wildcard(1)}}", ["a.b", "c.d"], "transform"),
    ("orders.>", "ord.>", ["orders.a", "orders.b.c"], "prefix"),
    ("ü.>", "ñé.>", ["ü.a", "ü.ñ.€", "ü.x"], "prefix"),  # the prefix cut on bytes, not chars
    ("ü.*", "{{wildcard(1)}}", ["ü.ñ", "ü.a"], "prefix"),
]


@pytest.mark.parametrize("src,dest,subjects,kind", SUBJECT_MAPS)
def test_subject_expr_equals_core(spark, src, dest, subjects, kind):
    from pyspark.sql import functions as F

    from jetlink.sparkops.planned import subject_expr

    trs = [compile_transform(src, dest)]
    pairs = {s: C.target_subject(s, trs, None) for s in subjects}
    expr = subject_expr(F.col("s"), pairs, trs, None)
    got = [r[0] for r in spark.createDataFrame([(s,) for s in subjects], "s string")
           .select(expr).collect()]
    assert got == [pairs[s] for s in subjects]
    text = str(expr)
    assert {"same": text == "Column<'s'>", "prefix": "substring" in text and "concat" in text,
            "transform": "CASE" in text.upper()}[kind]


# --------------------------------------------------------------------------------------------
# the job against the pump
# --------------------------------------------------------------------------------------------
def _pumped(dd, js, clock, extra):
    _fill(js, clock, "P", SUBJECTS[:8], 150, seed=11)
    cfg = _target("T", "source", extra)
    js.add_stream(cfg.to_json())
    RP.pump_until_idle(dd, clock)
    with dd.open("local").read() as conn:
        created = {n: c for n, c in conn.execute("SELECT name, created_ns FROM streams")}
    return cfg, _rows(dd, "local", "T"), created


def _parquet_origins(spark, dd, tmp_path, cfg, created, *, block: int | None = None):
    from jetlink.sparkops import io, jobs

    out = []
    for s in cfg.sources:
        path = str(tmp_path / f"in-{s.name}")
        df = _store_input(spark, dd, s.name).repartitionByRange(3, "seq") \
            .sortWithinPartitions("seq")
        w = df.write
        if block is not None:  # row groups of ~``block`` bytes (sizes checked often)
            for k, v in (("parquet.block.size", block), ("parquet.page.size", 256),
                         ("parquet.block.size.row.check.min", 10),
                         ("parquet.block.size.row.check.max", 10),
                         ("parquet.page.size.row.check.min", 5),
                         ("parquet.page.size.row.check.max", 5)):
                w = w.option(k, v)
        w.parquet(path)
        out.append(jobs.Origin(io.read_parquet(spark, path), s, RP.identity(created[s.name])))
    return out


@pytest.fixture
def planned_only(monkeypatch):
    """The Spark-planned source job fails the test: the driver's plan must apply."""
    from jetlink.sparkops import jobs

    def no(*_a, **_k):
        raise AssertionError("the source job was planned by Spark, not on the driver")

    monkeypatch.setattr(jobs, "_source_fast", no)


@pytest.mark.parametrize("case", list(PARQUET_CASES))
def test_planned_on_the_driver_equals_pump(spark, dd, origin,  # noqa: F811 - the fixture
                                           clock, tmp_path, planned_only, case):
    from jetlink.sparkops import jobs

    cfg, want, created = _pumped(dd, origin, clock, PARQUET_CASES[case])
    origins = _parquet_origins(spark, dd, tmp_path, cfg, created)
    facts: dict = {}
    assert _spark_rows(jobs.source(origins, cfg, now_ns=clock.now_ns(), facts=facts)) == want
    # the plan's count and last sequence: what the caller writes without counting
    assert facts == {"rows_out": len(want), "last_seq": want[-1][0]}
    out = jobs.source(origins, cfg, now_ns=clock.now_ns(), ordered=False)
    assert sorted(_spark_rows(out)) == want
    parts = out.rdd.glom().map(lambda rows: [r["seq"] for r in rows]).collect()
    assert all(p == sorted(p) for p in parts)
    assert want


def test_files_split_by_row_groups_equals_pump(spark, dd, origin,  # noqa: F811 - the fixture
                                               clock, tmp_path, planned_only):
    """Files of many row groups read in several splits each: the driver reads each split's
    row groups by Parquet's midpoint rule, as Spark's reader does (a wrong guess fails the
    job's partition check or the comparison)."""
    import pyarrow.parquet as pq

    from jetlink.sparkops import jobs, planned

    cfg, want, created = _pumped(dd, origin, clock, PARQUET_CASES["two_origins"])
    keys = ("spark.sql.files.maxPartitionBytes", "spark.sql.files.openCostInBytes")
    saved = {k: spark.conf.get(k) for k in keys}
    spark.conf.set(keys[0], "1500")
    spark.conf.set(keys[1], "0")
    try:
        origins = _parquet_origins(spark, dd, tmp_path, cfg, created, block=1024)
        splits = planned.scan_splits(origins[0].df)
        files = {p for part in splits for p, _s, _n in part}
        assert len(splits) > 2 * len(files)  # files split, some splits with no row group
        assert all(pq.ParquetFile(f).metadata.num_row_groups > 3 for f in files)
        assert _spark_rows(jobs.source(origins, cfg, now_ns=clock.now_ns())) == want
    finally:
        for k, v in saved.items():
            spark.conf.set(k, v)


@pytest.mark.parametrize("layout", ["shuffled_within", "overlapping"])
def test_not_planned_on_the_driver_out_of_order(spark, dd, origin,  # noqa: F811 - the fixture
                                                clock, tmp_path, layout):
    """Partitions not in the merge order (rows shuffled, ranges overlapping): no plan, and
    the Spark-planned job gives the pump's rows."""
    from test_spark_jobs import _to_parquet

    from jetlink.sparkops import io, jobs, planned

    cfg, want, created = _pumped(dd, origin, clock, PARQUET_CASES["keep_last_dedupe"])
    path = str(tmp_path / "in")
    _to_parquet(spark, _store_input(spark, dd, "O"), path, layout)
    o = jobs.Origin(io.read_parquet(spark, path), cfg.sources[0], RP.identity(created["O"]))
    d = jobs.target_def(cfg)
    assert planned.plan_source([o], [planned.scan_splits(o.df)], d, max_msg_size=False) is None
    assert _spark_rows(jobs.source([o], cfg, now_ns=clock.now_ns())) == want


def test_not_a_bare_file_scan(spark, dd, origin, clock):  # noqa: F811 - the fixture
    from pyspark.sql import functions as F

    from jetlink.sparkops import planned

    df = _store_input(spark, dd, "O")
    assert planned.scan_splits(df) is None  # jetlink's store reader
    assert planned.scan_splits(spark.range(3)) is None
    assert planned.scan_splits(df.where(F.col("seq") > 3)) is None


# --------------------------------------------------------------------------------------------
# refusals: the same message, the first offending message in the merge order, either way
# --------------------------------------------------------------------------------------------
REFUSALS = [
    ({"Nats-TTL": "5s"}, {}, "carries Nats-TTL"),
    ({"X-Big": "v" * 66_000}, {}, "has headers over 65535 bytes"),
    ({"X-Some": "v" * 300}, {"max_msg_size": 200}, "exceeds the target's max_msg_size 200"),
]


@pytest.mark.parametrize("headers,limits,what", REFUSALS)
def test_refusals_name_the_first_message(spark, tmp_path, monkeypatch, headers, limits, what):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from jetlink.core import lake
    from jetlink.sparkops import io, jobs
    from jetlink.sparkops import limits as L

    hdr = H.encode_headers(headers)
    n = 30
    table = pa.table({
        "stream": ["O"] * n, "partition": [0] * n, "seq": list(range(1, n + 1)),
        "subject": [f"o.{i % 4}" for i in range(n)], "key": [None] * n,
        "ts": [1_000_000 * (i + 1) for i in range(n)],
        "headers": [hdr if i + 1 in (18, 24) else None for i in range(n)],
        "data": [b"x" * 10] * n}, schema=lake.arrow_schema())
    (tmp_path / "in").mkdir()
    pq.write_table(table, str(tmp_path / "in" / "part-0.parquet"))
    cfg = _target("T", "source", {"sources": [{"name": "O"}],
                                  "duplicate_window": 120_000_000_000, **limits})
    o = jobs.Origin(io.read_parquet(spark, str(tmp_path / "in")), cfg.sources[0], "abc")
    with pytest.raises(L.LimitError) as planned_err:
        jobs.source([o], cfg, now_ns=2_000_000_000)
    assert str(planned_err.value).startswith(f"message 18 of O {what}")
    monkeypatch.setattr(jobs, "_source_planned", lambda *a, **k: None)
    with pytest.raises(L.LimitError) as spark_err:
        jobs.source([o], cfg, now_ns=2_000_000_000)
    assert str(spark_err.value) == str(planned_err.value)


@pytest.mark.parametrize("over", [0, 1])
def test_max_msg_size_at_the_boundary(spark, tmp_path, monkeypatch, over):
    """A target max_msg_size equal to the largest written message (header as the pump writes
    it, plus payload) takes every message; one byte less refuses that message, either way."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from jetlink.core import lake
    from jetlink.sparkops import io, jobs
    from jetlink.sparkops import limits as L

    blocks = [None, H.encode_headers({"X-A": "1"}), b"NATS/1.0\r\n\r\n",
              H.encode_headers({"Nats-Expected-Stream": "O", "X-B": "22"}),
              H.encode_headers({"Nats-Batch-Id": "b"}), None, H.encode_headers({"X-C": "v" * 40})]
    n = len(blocks)
    subjects = [f"o.{'ü' * (i % 3)}{i}" for i in range(n)]
    data = [b"p" * (5 * i) for i in range(n)]
    table = pa.table({"stream": ["O"] * n, "partition": [0] * n, "seq": list(range(7, 7 + n)),
                      "subject": subjects, "key": [None] * n,
                      "ts": [1_000 * (i + 1) for i in range(n)], "headers": blocks,
                      "data": data}, schema=lake.arrow_schema())
    (tmp_path / "in").mkdir()
    pq.write_table(table, str(tmp_path / "in" / "part-0.parquet"))
    sizes = [len(C.source_header(b, f"O {7 + i} > > {subjects[i]} ident")) + len(data[i])
             for i, b in enumerate(blocks)]
    top = max(sizes)
    cfg = _target("T", "source", {"sources": [{"name": "O"}], "max_msg_size": top - over})
    o = jobs.Origin(io.read_parquet(spark, str(tmp_path / "in")), cfg.sources[0], "ident")
    errors = []
    for planned in (True, False):
        if not planned:
            monkeypatch.setattr(jobs, "_source_planned", lambda *a, **k: None)
        try:
            got = jobs.source([o], cfg, now_ns=10**12).collect()
            assert len(got) == n
            errors.append(None)
        except L.LimitError as e:
            errors.append(str(e))
    first = 7 + sizes.index(top)
    want = None if not over else f"message {first} of O exceeds the target's max_msg_size " \
        f"{top - 1}"
    assert errors == [want, want]


def test_files_pyarrow_cannot_plan_go_to_spark(spark, tmp_path):
    """A dataset whose files lack a column the plan reads (Spark reads it as null) is
    planned by Spark instead: the job still runs, with the pump's rules."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from jetlink.sparkops import io, jobs, planned

    n = 6
    table = pa.table({"stream": ["O"] * n, "partition": [0] * n, "seq": list(range(1, n + 1)),
                      "subject": [f"o.{i % 2}" for i in range(n)], "key": [None] * n,
                      "ts": [1000 * (i + 1) for i in range(n)],
                      "data": [b"x"] * n})  # no headers column
    (tmp_path / "in").mkdir()
    pq.write_table(table, str(tmp_path / "in" / "part-0.parquet"))
    cfg = _target("T", "source", {"sources": [{"name": "O"}], "max_msgs_per_subject": 2,
                                  "duplicate_window": 120_000_000_000})
    o = jobs.Origin(io.read_parquet(spark, str(tmp_path / "in")), cfg.sources[0], "abc")
    assert planned.run_source([o], jobs.target_def(cfg), "T", now_ns=1, first_seq=1,
                              ordered=True, header=None) is None
    got = jobs.source([o], cfg, now_ns=10**12).collect()
    assert [(r["seq"], r["subject"]) for r in got] == [
        (3, "o.0"), (4, "o.1"), (5, "o.0"), (6, "o.1")]
    assert all(r["headers"].startswith(b"NATS/1.0\r\nNats-Stream-Source: O ") for r in got)


def test_sessions_record_no_dataframe_call_sites(spark):
    """jetlink's sessions build queries without pyspark's call-site recording (each Column
    function otherwise walks the Python stack and makes about eight more Py4J round trips:
    a planned source job made 1,076 where it now makes under 700); --conf turns it back on."""
    import py4j.clientserver as cs
    from pyspark.errors import utils as PU
    from pyspark.sql import functions as F

    from jetlink.sparkops.session import SparkOptions

    key = "spark.python.sql.dataFrameDebugging.enabled"
    assert spark.conf.get(key) == "false"
    assert PU.is_debugging_enabled() is False
    assert SparkOptions(master="spark://10.0.0.5:7077").settings()[key] == "false"
    assert SparkOptions(conf=[f"{key}=true"]).settings()[key] == "true"
    calls = []
    real = cs.ClientServerConnection.send_command

    def counted(self, command, *args, **kwargs):
        calls.append(command)
        return real(self, command, *args, **kwargs)

    def round_trips(debugging: bool) -> int:
        calls.clear()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(cs.ClientServerConnection, "send_command", counted)
            mp.setattr(PU, "_enable_debugging_cache", debugging)
            F.concat(F.col("a"), F.lit("b"))
        return len(calls)

    # three Column functions: their call sites cost more round trips than the functions
    assert round_trips(True) >= round_trips(False) + 3 * 3


def test_subject_ids_map_each_distinct_subject_once_across_partitions():
    """A source job's plan maps each distinct origin subject once, however many partitions'
    dictionaries hold it (each looked up in the subjects seen: only new ones go through the
    agreement's rules); a filtered-out subject is -1; a later partition's new subject that
    is not UTF-8 makes the plan give way to Spark (None)."""
    import types

    import numpy as np
    import pyarrow as pa

    from jetlink.sparkops import planned as P

    asked = []

    def target_subject(s):
        asked.append(s)
        return "to." + s

    og = types.SimpleNamespace(rules=types.SimpleNamespace(target_subject=target_subject),
                               pairs={})
    tnames: dict[str, int] = {}
    ids = P._SubjectIds(og, lambda s: not s.startswith("x."), tnames)
    got = [ids.lut(pa.array(names, pa.string())).tolist() for names in (
        ["a.1", "x.9", "b.2"], ["b.2", "c.3", "a.1", "x.9"], ["c.3"], [])]
    assert got == [[0, -1, 1], [1, 2, 0, -1], [2], []]
    assert asked == ["a.1", "b.2", "c.3"]
    assert tnames == {"to.a.1": 0, "to.b.2": 1, "to.c.3": 2}
    assert og.pairs == {"a.1": "to.a.1", "b.2": "to.b.2", "c.3": "to.c.3"}
    bad = pa.array([b"a.1", b"\xff.z"], pa.binary()).view(pa.string())
    assert ids.lut(bad) is None
    assert ids.lut(pa.array(["a.1"], pa.string())).dtype == np.int32
