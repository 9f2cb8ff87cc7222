"""Every copy path stores the same messages (core/copyrules.py, docs/replication.md "The copy
paths"): generated origins copied by the pump's per-message path and its SQL path
(core/replication.py), the Spark-planned jobs (sparkops/jobs.py: ``mirror``, and ``source``
through ``_source_fast``) and the driver-planned source job (sparkops/planned.py), compared
message by message: sequence, subject, time, headers, payload.

The origin ``O`` takes messages of its own and, sourced from ``U``, messages that carry a
``Nats-Stream-Source`` header already (a daisy chain); headers include ``Nats-Expected-*``,
``Nats-Batch-*``, ``Nats-Msg-Id`` and names that only look like them. A second origin ``P``
(published after ``O``, so that the driver can plan the merge) joins some source agreements.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_spark_jobs import _rows, _spark_rows, _store_input

from jetlink.core import replication as RP
from jetlink.core.clock import ManualClock
from jetlink.core.config.stream import StreamConfig
from jetlink.core.jetstream import JetStream
from jetlink.core.store import DataDir

pytestmark = pytest.mark.spark

SEC = 1_000_000_000
MS = 1_000_000

# --- generated origins -----------------------------------------------------------------------
_VALUE = st.text(alphabet="ab1 ü", max_size=4)
_HEADER = st.one_of(
    st.tuples(st.just("Nats-Msg-Id"), st.sampled_from(["a", "b", "c", "d"])),
    st.tuples(st.just("Nats-Expected-Stream"), st.just("$stream")),
    st.tuples(st.sampled_from(["Nats-Batch-Id", "Nats-Batch-Sequence", "Nats-Expected-Foo"]),
              _VALUE),
    st.tuples(st.sampled_from(["X-A", "Nats-Stream-Sources", "X-Nats-Expected-Stream",
                               "Nats-Msg-Idx", "X-Nats-Batch-Id"]),
              st.one_of(_VALUE, st.lists(_VALUE, min_size=1, max_size=2))),
)
_HEADERS = st.one_of(st.none(), st.lists(_HEADER, min_size=1, max_size=3))


def _message(subjects: list[str]) -> st.SearchStrategy:
    return st.tuples(st.sampled_from(subjects), _HEADERS, st.binary(max_size=6),
                     st.sampled_from([0, 0, MS, 3 * MS]))


_O_SUBJECTS = ["o.a.1", "o.a.2", "o.b.1", "o.b.ü"]
_U_SUBJECTS = ["u.x", "u.y"]
_P_SUBJECTS = ["p.a", "p.b", "p.ü"]

# (filter_subject, subject_transforms) of the agreements on O
MIRROR_SELECT = [
    (None, None),
    ("o.b.*", None),
    (None, [{"src": "o.a.*", "dest": "m.{{wildcard(1)}}"}, {"src": "u.>", "dest": "mu.>"}]),
]
SOURCE_SELECT = [
    (None, None),
    ("o.a.*", None),
    ("u.>", None),
    (None, [{"src": "o.*.*", "dest": "t.{{wildcard(2)}}.{{wildcard(1)}}"}]),
    (None, [{"src": "o.a.>", "dest": "a.>"}, {"src": "u.*", "dest": "up.{{wildcard(1)}}"}]),
]


# Agreements the SQL path takes for a source too (every subject, mapped one to one)
SQL_SOURCE_SELECT = [SOURCE_SELECT[0], SOURCE_SELECT[3]]


@st.composite
def worlds(draw) -> dict:
    # plain: no headers, no upstream, no gaps, no limits, one agreement: the SQL path's case
    plain = draw(st.booleans())
    rounds = draw(st.lists(st.tuples(
        st.lists(_message(_O_SUBJECTS), max_size=6),
        st.lists(_message(_U_SUBJECTS), max_size=0 if plain else 4)), min_size=1, max_size=3))
    if not any(r[0] for r in rounds):
        rounds[0] = ([draw(_message(_O_SUBJECTS))], rounds[0][1])
    kind = draw(st.sampled_from(["mirror", "source"]))
    select = draw(st.sampled_from(MIRROR_SELECT if kind == "mirror" else
                                  SQL_SOURCE_SELECT if plain else SOURCE_SELECT))
    agreement: dict = {"name": "O"}
    if select[0]:
        agreement["filter_subject"] = select[0]
    if select[1]:
        agreement["subject_transforms"] = select[1]
    target: dict = {}
    if not plain and draw(st.booleans()):
        target["max_msgs_per_subject"] = draw(st.integers(1, 3))
    p_msgs: list = []
    if kind == "mirror":
        target["mirror"] = agreement
    else:
        if draw(st.booleans()):
            agreement["opt_start_seq"] = draw(st.integers(1, 6))
        sources = [agreement]
        if not plain and draw(st.booleans()):
            p_msgs = draw(st.lists(_message(_P_SUBJECTS), min_size=1, max_size=5))
            sources.append({"name": "P"})
        target["sources"] = sources
        if draw(st.booleans()):
            target["duplicate_window"] = 120 * SEC
        if draw(st.booleans()):
            target["subject_transform"] = {"src": "o.>", "dest": "s.>"}
    if plain:
        rounds = [([(s, None, d, dt) for s, _h, d, dt in o], u) for o, u in rounds]
        p_msgs = [(s, None, d, dt) for s, _h, d, dt in p_msgs]
    delete = None if plain else draw(st.one_of(st.none(), st.integers(1, 8)))
    return {"rounds": rounds, "p": p_msgs, "kind": kind, "target": target,
            "delete": delete}


def _publish(js: JetStream, clock: ManualClock, stream: str, msgs: list) -> None:
    for subject, headers, data, dt in msgs:
        hdrs = None
        if headers:
            hdrs = {}
            for name, value in headers:
                value = stream if value == "$stream" else value
                hdrs.setdefault(name, [])
                hdrs[name] += value if isinstance(value, list) else [value]
        if hdrs and any(n.startswith("Nats-Batch-") for n in hdrs):
            # The messages of a committed atomic batch keep their Nats-Batch-* headers in the
            # store (as the server's do); a lone one is refused at publish (10174): written
            # as the store holds it.
            from jetlink.core.headers import encode_headers

            with js.write() as txn:
                txn.stream(txn.catalog.by_name[stream]).append(
                    subject, encode_headers(hdrs), data, sourced=True)
        else:
            js.publish(subject, data, headers=hdrs)
        clock.advance(dt)


def _build(path: Path, world: dict) -> tuple[DataDir, ManualClock, StreamConfig]:
    """The origins, then the target twice: filled by the SQL path (``<T>_SQL``) and by the
    per-message path (``<T>_MSG``)."""
    clock = ManualClock()
    dd = DataDir(path)
    js = JetStream(dd.open(), clock)
    js.add_stream({"name": "U", "subjects": ["u.>"], "duplicate_window": 0})
    js.add_stream({"name": "O", "subjects": ["o.>"], "duplicate_window": 0,
                   "sources": [{"name": "U"}]})
    for own, upstream in world["rounds"]:
        _publish(js, clock, "U", upstream)
        RP.pump_until_idle(dd, clock)
        _publish(js, clock, "O", own)
    RP.pump_until_idle(dd, clock)
    if world["delete"] is not None:
        last = js.stream_info("O").to_json()["state"]["last_seq"]
        if world["delete"] < last:
            js.delete_msg("O", world["delete"])
    if world["p"]:
        clock.advance(MS)
        js.add_stream({"name": "P", "subjects": ["p.>"], "duplicate_window": 0})
        _publish(js, clock, "P", world["p"])
    clock.advance(10 * MS)
    cfg = None
    for name, bulk in (("T_SQL", True), ("T_MSG", False)):
        cfg = StreamConfig.from_json({"name": name, **world["target"]})
        js.add_stream(cfg.to_json())
        RP.pump_until_idle(dd, clock, bulk=bulk)
    assert cfg is not None
    return dd, clock, cfg


# --- the Spark paths -------------------------------------------------------------------------
def _spark_paths(spark, dd: DataDir, clock: ManualClock, cfg: StreamConfig, tmp: Path
                 ) -> dict[str, list[tuple]]:
    """The target's rows from each Spark path: ``mirror`` (mirrors); ``source`` planned by
    Spark (``_source_fast``, the origins read from the store) and on the driver (the origins
    written as Parquet, one file each in sequence order)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from jetlink.core import lake
    from jetlink.sparkops import io, jobs

    now = clock.now_ns()
    if cfg.mirror is not None:
        return {"spark mirror": _spark_rows(jobs.mirror(_store_input(spark, dd, "O"), cfg,
                                                        now_ns=now))}
    with dd.open("local").read() as conn:
        created = dict(conn.execute("SELECT name, created_ns FROM streams"))
    out = {}
    fast = jobs._source_fast
    used: list[str] = []

    def spy(*args, **kw):
        got = fast(*args, **kw)
        used.append("fast" if got is not None else "general")
        return got

    stored = [jobs.Origin(_store_input(spark, dd, s.name), s, RP.identity(created[s.name]))
              for s in cfg.sources]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(jobs, "_source_fast", spy)
        out["spark planned"] = _spark_rows(jobs.source(stored, cfg, now_ns=now))
    assert used == ["fast"]  # planned by Spark, not the general path

    files = []
    for k, o in enumerate(stored):
        path = tmp / f"in-{k}"
        path.mkdir()
        batches = list(lake.iter_stream_batches(str(dd.cluster_path("local")), o.src.name, 0,
                                                1 << 40))
        pq.write_table(pa.Table.from_batches(batches, lake.arrow_schema()),
                       str(path / "part-0.parquet"))
        files.append(jobs.Origin(io.read_parquet(spark, str(path)), o.src, o.identity))

    def not_planned(*_a, **_k):
        raise AssertionError("the driver did not plan the source job")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(jobs, "_source_fast", not_planned)
        out["driver planned"] = _spark_rows(jobs.source(files, cfg, now_ns=now))
    return out


# --- the comparison --------------------------------------------------------------------------
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(worlds())
def test_every_copy_path_stores_the_same_messages(spark, world):
    sql_used: list[str] = []
    sql_copy = RP._sql_copy

    def spy(txn, d, a, limit, o):
        got = sql_copy(txn, d, a, limit, o)
        if got is not None and d.name == "T_SQL":
            sql_used.append(d.name)
        return got

    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(RP, "_sql_copy", spy)
        dd, clock, cfg = _build(Path(tmp) / "data", world)
        try:
            want = _rows(dd, "local", "T_MSG")
            paths = {"SQL path": _rows(dd, "local", "T_SQL")}
            event(f"{world['kind']}: SQL path {'used' if sql_used else 'not used'}")
            paths.update(_spark_paths(spark, dd, clock, cfg, Path(tmp)))
        finally:
            dd.close()
    for path, got in paths.items():
        assert len(got) == len(want), path
        for g, w in zip(got, want, strict=True):
            assert g == w, f"{path}: {g} != {w} (per-message path)"
