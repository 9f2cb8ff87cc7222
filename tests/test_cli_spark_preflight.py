"""`jetlink spark ...` refuses an input that is not there before a Spark driver starts: the
store's stream, topic, bucket or link, a local dataset, a data directory that does not exist.
No session is asked for, nothing is created (not the data directory, not the default
cluster) and the data directory's bytes are unchanged."""

from __future__ import annotations

import pytest
from helpers import data_dir_bytes


@pytest.fixture
def no_spark(monkeypatch):
    """Any Spark session asked for fails the test (a driver would start there)."""
    from jetlink.cli import spark_session
    from jetlink.sparkops import session as sparkops_session

    def no_session(*_a, **_k):
        raise AssertionError("a Spark session was asked for")

    monkeypatch.setattr(spark_session, "session", no_session)
    monkeypatch.setattr(sparkops_session, "get_session", no_session)


MISSING_DIR = "data directory {dd} does not exist (nothing to read or act on: the first " \
              "command that creates something makes it)"

# (arguments, the error line after "jetlink: error: ") in a data directory holding the
# stream ORDERS, the bucket CFG, the topic t1 and no link
CASES = [
    (["spark", "mirror", "ORDRES", "parquet:{tmp}/out"],
     "stream not found (10059): store:local/ORDRES; did you mean ORDERS?"),
    (["spark", "mirror", "parquet:{tmp}/nothing", "M"], "parquet:{tmp}/nothing: no such dataset"),
    (["spark", "mirror", "parquet:{tmp}", "M"],
     "parquet:{tmp} has no _jetlink.json (write it with `jetlink stream export` or a jetlink "
     "job)"),
    (["spark", "source", "T", "--from", "ORDERS", "--from", "NOPE"],
     "stream not found (10059): store:local/NOPE"),
    (["spark", "kv-aggregate", "AGG", "--source", "CGF"],
     "--source CGF: bucket CGF not found; nothing was created"),
    (["spark", "kv-aggregate", "KM", "--mirror", "NOPE"],
     "--mirror NOPE: bucket NOPE not found; nothing was created"),
    (["spark", "verify", "ORDERS", "store:topic/t2"],
     "store:local/topic/t2: no such topic: did you mean t1?"),
    (["spark", "verify", "parquet:{tmp}/nothing", "ORDERS"],
     "parquet:{tmp}/nothing: no such dataset"),
    (["spark", "mirror-topic", "t1", "--link", "NOPE"],
     "Cluster link 'NOPE' not found (CLUSTER_LINK_NOT_FOUND 10000)"),
    # the job's own checks of its target and config come before its session too
    (["spark", "mirror", "ORDERS", "M", "--config", "{tmp}/subjects.json"],
     'store:local/M: stream mirrors can not contain subjects (10034): subjects = ["x.>"]'),
    (["spark", "mirror", "ORDERS", "parquet:{tmp}/out", "--config", "{tmp}/negative.json"],
     "parquet:{tmp}/out: max age can not be negative (10052): max_age = -5ns"),
    (["spark", "source", "S", "--from", "ORDERS", "--from", "ORDERS"],
     'store:local/S: duplicate source configuration detected (10140): sources[1] = '
     '{{"name": "ORDERS"}}'),
    (["spark", "source", "parquet:{tmp}/out", "--from", "ORDERS"],
     "TARGET parquet:{tmp}/out: a source job writes into a stream of the store (its "
     "sequences continue the target's)"),
    (["spark", "mirror", "store:topic/t1", "M"],
     "store:local/topic/t1 is a topic: this job reads streams"),
    (["spark", "mirror", "ORDERS", "M", "--config", "{tmp}/discard-new.json"],
     "bulk jobs cannot fill this target: the target's limits discard new messages (the pump "
     "applies them one by one); use `jetlink replicate`"),
    (["spark", "mirror", "ORDERS", "M", "--config", "{tmp}/array.json"],
     "invalid JSON: json: cannot unmarshal array into Go value of type server.StreamConfig "
     "(10025)"),
    (["spark", "verify", "ORDERS", "store:topic/t1"],
     "cannot compare a stream (store:local/ORDERS) with a topic (store:local/topic/t1)"),
    (["spark", "mirror", "parquet:{tmp}/badmeta", "M"],
     "{tmp}/badmeta/_jetlink.json: not a _jetlink.json document: no \"name\" (the stream the "
     "dataset holds)"),
    (["spark", "mirror", "parquet:{tmp}/afile", "M"],
     "parquet:{tmp}/afile is a non-Parquet file, not a dataset directory (jetlink stream "
     "export writes one)"),
]


@pytest.mark.parametrize(("args", "error"), CASES, ids=[" ".join(c[0][:3]) for c in CASES])
def test_a_missing_input_is_refused_before_spark_starts(jl, no_spark, args, error):
    for made in (["stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"],
                 ["kv", "add", "CFG"], ["topic", "create", "t1"]):
        r = jl(*made)
        assert r.exit_code == 0, r.output
    (jl.tmp / "subjects.json").write_text('{"subjects": ["x.>"]}')
    (jl.tmp / "negative.json").write_text('{"max_age": -5}')
    (jl.tmp / "discard-new.json").write_text('{"max_msgs": 1, "discard": "new"}')
    (jl.tmp / "array.json").write_text('[1, 2]')
    (jl.tmp / "afile").write_text("hi")
    (jl.tmp / "badmeta").mkdir()
    (jl.tmp / "badmeta" / "_jetlink.json").write_text('{"kind": "stream"}')
    before = data_dir_bytes(jl.data)
    files = sorted(p.name for p in jl.data.iterdir())  # (the logs folded in: none beside)
    r = jl(*[a.format(tmp=jl.tmp) for a in args])
    assert (r.exit_code, r.stderr) == (1, f"jetlink: error: {error.format(tmp=jl.tmp)}\n")
    assert sorted(p.name for p in jl.data.iterdir()) == files  # no -wal, -shm left beside
    assert data_dir_bytes(jl.data) == before


@pytest.mark.parametrize("args", [
    ["spark", "mirror", "ORDERS", "parquet:{tmp}/out"],
    ["spark", "source", "T", "--from", "ORDERS"],
    ["spark", "kv-aggregate", "AGG", "--source", "CFG"],
    ["spark", "verify", "A", "B"],
    ["spark", "mirror-topic", "t1", "--link", "L"],
], ids=lambda a: " ".join(a[:2]))
def test_a_data_directory_that_does_not_exist_is_not_created(jl, no_spark, args):
    missing = jl.tmp / "none"
    r = jl("--data-dir", str(missing), *[a.format(tmp=jl.tmp) for a in args])
    if args[1] == "kv-aggregate":  # its origins are named, as kv add names them
        want = "--source CFG: bucket CFG not found; nothing was created"
    else:
        want = MISSING_DIR.format(dd=missing)
    assert (r.exit_code, r.stderr) == (1, f"jetlink: error: {want}\n")
    assert not missing.exists()
    assert not (jl.tmp / "out").exists()


def test_a_properties_file_larger_than_any_real_one_is_refused(tmp_path, monkeypatch):
    """--properties-file /dev/zero: refused once core/limits.py MAX_INPUT_FILE bytes were
    read, never read whole into memory."""
    import jetlink.core.limits as limits
    from jetlink.sparkops.session import SparkConfError, read_properties

    monkeypatch.setattr(limits, "MAX_INPUT_FILE", 1000)
    big = tmp_path / "spark.conf"
    big.write_text("spark.x 1\n" * 200)
    with pytest.raises(SparkConfError, match=r"larger than 1,000 bytes: no properties file"):
        read_properties(str(big))
    small = tmp_path / "small.conf"
    small.write_text("spark.executor.memory 2g\n# a comment\nspark.ui.enabled=false\n")
    assert read_properties(str(small)) == {"spark.executor.memory": "2g",
                                           "spark.ui.enabled": "false"}


@pytest.mark.parametrize(("change", "said"), [
    (lambda t: t.set_column(t.schema.get_field_index("ts"), "ts",
                            __import__("pyarrow").array([-5] * t.num_rows, "int64")),
     "time -5 is before the Unix epoch (column ts: the time stored, nanoseconds since "
     "1970-01-01T00:00:00Z, never negative)"),
    (lambda t: t.set_column(t.schema.get_field_index("seq"), "seq",
                            __import__("pyarrow").array(range(0, t.num_rows), "int64")),
     "message 0: not a stream sequence (1 to 1099511627775)"),
    (lambda t: t.set_column(t.schema.get_field_index("subject"), "subject",
                            __import__("pyarrow").array([None] * t.num_rows, "string")),
     "a row without a subject (column subject null)"),
    # a null time: a job would make one up (the row before's, or 0), as import refuses it
    (lambda t: t.set_column(t.schema.get_field_index("ts"), "ts", __import__("pyarrow").array(
        [None] + t.column("ts").to_pylist()[1:], "int64")),
     "a row without a time (column ts null: the time stored, nanoseconds since the Unix "
     "epoch; every message has one)"),
])
def test_a_dataset_whose_statistics_show_rows_import_refuses_is_refused_before_spark(
        jl, no_spark, tmp_path, change, said):
    """A hand-written dataset (pyarrow) with a negative time, a sequence 0, rows without a
    subject: what stream import refuses, refused by a job before a driver starts, read from
    the files' statistics (no row read), the job's target not made."""
    import pyarrow.parquet as pq

    assert jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults").exit_code == 0
    assert jl("pub", "orders.x", "m{{Count}}", "--count", "5").exit_code == 0
    lake = tmp_path / "lake"
    assert jl("stream", "export", "ORDERS", f"parquet:{lake}").exit_code == 0
    [part] = [p for p in lake.rglob("*.parquet")]
    pq.write_table(change(pq.read_table(part)), part)
    before = data_dir_bytes(jl.data)
    r = jl("spark", "mirror", f"parquet:{lake}", f"parquet:{tmp_path / 'out'}")
    assert (r.exit_code, r.stderr) == (1, (
        f"jetlink: error: parquet:{lake}: {part.name}: {said}; nothing was started (jetlink "
        "stream import refuses such rows too)\n")), r.stderr
    assert data_dir_bytes(jl.data) == before and not (tmp_path / "out").exists()


@pytest.mark.parametrize("seqs", [[1, 2, 2, 4, 5], [4, 1, 2, 5, 2]], ids=["in order", "unsorted"])
def test_a_dataset_holding_a_sequence_twice_is_refused_before_spark(jl, no_spark, tmp_path,
                                                                    seqs):
    """A sequence two rows hold shows in no statistics: the seq column alone is read (one
    pass in order, sorted in memory when not), as stream import refuses it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    assert jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults").exit_code == 0
    assert jl("pub", "orders.x", "m{{Count}}", "--count", "5").exit_code == 0
    lake = tmp_path / "lake"
    assert jl("stream", "export", "ORDERS", f"parquet:{lake}").exit_code == 0
    [part] = [p for p in lake.rglob("*.parquet")]
    t = pq.read_table(part)
    pq.write_table(t.set_column(t.schema.get_field_index("seq"), "seq",
                                pa.array(seqs, "int64")), part)
    before = data_dir_bytes(jl.data)
    r = jl("spark", "mirror", f"parquet:{lake}", f"parquet:{tmp_path / 'out'}")
    assert (r.exit_code, r.stderr) == (1, (
        f"jetlink: error: parquet:{lake}: sequence 2 appears more than once (a stream holds "
        "one message per sequence); nothing was started (jetlink stream import refuses such "
        "rows too)\n")), r.stderr
    assert data_dir_bytes(jl.data) == before and not (tmp_path / "out").exists()


def test_a_dataset_path_under_the_home_directory_is_read_there(jl, no_spark, tmp_path,
                                                               monkeypatch):
    """``parquet:~/x`` is x in the home directory, as the stream verbs read it (Hadoop's
    Path alone would make a directory named ~ of it)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    monkeypatch.chdir(tmp_path)
    r = jl("spark", "mirror", "parquet:~/nothing", "M")
    assert (r.exit_code, r.stderr) == (
        1, f"jetlink: error: parquet:{tmp_path / 'home' / 'nothing'}: no such dataset\n")
    assert not (tmp_path / "~").exists()
