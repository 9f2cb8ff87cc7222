"""`jetlink spark mirror / source / kv-aggregate` through the CLI: the summary, the errors,
and online replication continuing after a bulk job without a gap or a duplicate."""

from __future__ import annotations

import contextlib
import functools
import json

import pytest
from helpers import data_dir_bytes, wait_until

from jetlink.core import lake
from jetlink.core.jetstream import JetStream
from jetlink.core.store import DataDir

pytestmark = pytest.mark.spark


@pytest.fixture
def jl(jl, spark, cli_clock):
    """The CLI on a manual clock, reusing the suite's SparkSession (jobs find it active)."""
    return jl


def ok(result):
    assert result.exit_code == 0, result.output
    return result


def doc(result):
    return json.loads(ok(result).stdout)


def rows(data, cluster: str, stream: str) -> list[tuple]:
    dd = DataDir(data)
    try:
        out = []
        for b in lake.iter_stream_batches(str(dd.cluster_path(cluster)), stream, 0, 1 << 40):
            out += [(r["seq"], r["subject"], r["headers"], r["data"]) for r in b.to_pylist()]
        return out
    finally:
        dd.close()


def publish(jl, subject_prefix: str, n: int, start: int = 0, ids: bool = False) -> None:
    for i in range(start, start + n):
        flags = ["-H", f"Nats-Msg-Id:id{i}"] if ids else []
        ok(jl("pub", f"{subject_prefix}.{i % 5}", f"m{i}", *flags))


def test_mirror_seeds_then_the_pump_continues_without_gap(jl):
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 40)
    ok(jl("stream", "rmm", "ORDERS", "7", "-f"))
    summary = doc(jl("spark", "mirror", "store:ORDERS", "store:BACKUP", "-j"))
    assert set(summary) == {"job", "target", "output", "rows_in", "rows_out", "seconds",
                            "rows_per_second", "cursor_set", "cursors"}
    assert summary["job"] == "mirror"
    assert summary["target"] == "store:local/BACKUP"
    assert (summary["rows_in"], summary["rows_out"], summary["cursor_set"]) == (39, 39, True)
    assert summary["cursors"] == [{"origin": "ORDERS", "agreement": "ORDERS > >",
                                   "kind": "mirror", "cursor": 40}]
    info = doc(jl("stream", "info", "BACKUP", "-j"))
    assert info["config"]["mirror"] == {"name": "ORDERS"}
    assert info["state"]["messages"] == 39
    # online: new messages follow at once (the pub command's own replication step)
    publish(jl, "orders", 10, start=40)
    ok(jl("replicate"))
    assert rows(jl.data, "local", "BACKUP") == rows(jl.data, "local", "ORDERS")
    info = doc(jl("stream", "info", "BACKUP", "-j"))
    assert (info["state"]["first_seq"], info["state"]["last_seq"]) == (1, 50)
    assert info["mirror"]["lag"] == 0


def test_an_interrupt_while_the_target_is_written_removes_the_target(jl, monkeypatch):
    """Ctrl-C while a job writes the store's target (some transactions committed): the
    target it made is removed, as a failure's is (only SIGKILL leaves one for `jetlink
    replicate` to continue); exit 130."""
    from jetlink.sparkops.run import Runner

    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 20)
    real = Runner._write

    def written_then_interrupted(self, summary, df, js, target, *args, **kwargs):
        assert target.name in js.stream_names()  # made by the job, being written
        raise KeyboardInterrupt

    monkeypatch.setattr(Runner, "_write", written_then_interrupted)
    r = jl("spark", "mirror", "store:ORDERS", "store:BACKUP")
    assert r.exit_code == 130, r.output
    said = ("the job stopped while it wrote store:local/BACKUP: the target it created was "
            "removed (run the job again)")
    assert r.stderr == f"jetlink: interrupted: {said}\n", r.stderr
    # --json: one document all the same
    r = jl("spark", "mirror", "store:ORDERS", "store:BACKUP", "-j")
    assert (r.exit_code, json.loads(r.stdout)) == (130, {"interrupted": True,
                                                         "description": said})
    monkeypatch.setattr(Runner, "_write", real)
    assert "BACKUP" not in doc(jl("stream", "ls", "-n", "-j"))
    ok(jl("spark", "mirror", "store:ORDERS", "store:BACKUP"))  # the same job, anew


def test_an_interrupt_before_the_writing_says_nothing_was_changed(jl, monkeypatch):
    """Ctrl-C while the job plans or counts its rows (before a target exists): said so, the
    data directory byte for byte as it was, exit 130."""
    from jetlink.sparkops import jobs

    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 5)
    before = data_dir_bytes(jl.data)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(jobs, "mirror", interrupted)
    r = jl("spark", "mirror", "store:ORDERS", "store:BACKUP")
    assert (r.exit_code, r.stderr) == (130, (
        "jetlink: interrupted: the job stopped before it wrote store:local/BACKUP: nothing "
        "was changed (run the job again)\n"))
    assert data_dir_bytes(jl.data) == before


def test_an_interrupt_while_a_dataset_is_written_says_it_is_unfinished(jl, monkeypatch,
                                                                      tmp_path):
    """Ctrl-C while Spark writes a Parquet target: the dataset is not finished (no
    _jetlink.json), and the next run is refused at a directory left there with how to
    clear it (sparkops/io.py occupied_output)."""
    from jetlink.sparkops import io

    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 5)
    out = tmp_path / "lake"

    def half_written(df, path, meta):
        (out / "_temporary").mkdir(parents=True)
        raise KeyboardInterrupt

    monkeypatch.setattr(io, "write_parquet", half_written)
    r = jl("spark", "mirror", "store:ORDERS", f"parquet:{out}", "-j")
    said = (f"the job stopped while it wrote parquet:{out}: the dataset was not finished (no "
            "_jetlink.json: stream import refuses it); run the job again (a directory left "
            "there is named with how to clear it)")
    assert (r.exit_code, json.loads(r.stdout)) == (130, {"interrupted": True,
                                                         "description": said})
    assert r.stderr == f"jetlink: interrupted: {said}\n"
    monkeypatch.undo()
    r = jl("spark", "mirror", "store:ORDERS", f"parquet:{out}")
    assert r.exit_code == 1 and f"{out} holds what an unfinished job left" in r.stderr, r.stderr


def test_a_spark_failure_after_an_interrupt_is_the_interrupt(jl, monkeypatch):
    """py4j's clean-up of the gateway call an interrupt cut short can fail in its turn: that
    failure is the interrupt (exit 130), and the job says what it left all the same (here
    the store target it created, removed)."""
    from py4j.protocol import Py4JNetworkError

    from jetlink.sparkops import session
    from jetlink.sparkops.run import Runner

    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 5)

    def cut_short(self, *args, **kwargs):
        session._INTERRUPTED.append(2)
        raise Py4JNetworkError("Answer from Java side is empty")

    monkeypatch.setattr(Runner, "_write", cut_short)
    try:
        r = jl("spark", "mirror", "store:ORDERS", "store:BACKUP")
    finally:
        session._INTERRUPTED.clear()  # (the session outlives this test)
    assert (r.exit_code, r.stderr) == (130, (
        "jetlink: interrupted: the job stopped while it wrote store:local/BACKUP: the target "
        "it created was removed (run the job again)\n"))
    assert "BACKUP" not in doc(jl("stream", "ls", "-n", "-j"))


def test_an_interrupted_kv_aggregate_removes_the_bucket_it_made(jl, monkeypatch):
    from jetlink.sparkops.run import Runner

    ok(jl("kv", "add", "FLAGS"))
    ok(jl("kv", "put", "FLAGS", "a", "1"))

    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Runner, "_write", interrupted)
    r = jl("spark", "kv-aggregate", "AGG", "--source", "FLAGS")
    assert (r.exit_code, r.stderr) == (130, (
        "jetlink: interrupted: the job stopped before it finished filling KV_AGG, the "
        "bucket's stream: the bucket it created was removed (run the job again)\n"))
    assert ok(jl("kv", "ls", "-n")).stdout == "FLAGS\n"


def test_an_interrupt_once_the_job_is_done_is_no_interrupted_job(jl, monkeypatch):
    """A Ctrl-C landing as the job has finished (its target written) is ignored: the
    summary is printed, exit 0 (a script must not read a finished job as interrupted)."""
    import os
    import signal

    from jetlink.sparkops.run import Summary

    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 5)
    real = Summary.to_json

    def interrupted_then_rendered(self):
        os.kill(os.getpid(), signal.SIGINT)
        return real(self)

    monkeypatch.setattr(Summary, "to_json", interrupted_then_rendered)
    summary = doc(jl("spark", "mirror", "store:ORDERS", "store:BACKUP", "-j"))
    assert (summary["rows_out"], summary["target"]) == (5, "store:local/BACKUP")


@pytest.mark.parametrize("job", [("mirror", "store:CL", "store:M"),
                                 ("source", "store:M", "--from", "store:CL")])
def test_an_origin_no_server_would_read_is_refused_before_anything_is_made(jl, job):
    """An origin whose consumer_limits.max_ack_pending refuses the consumer a mirror or
    source reads it through (10082 on a server, and in the pump): the job is refused, no
    target made, no byte changed."""
    from helpers import data_dir_bytes

    ok(jl("stream", "add", "CL", "--subjects", "cl.>", "--limit-consumer-max-pending", "100",
          "--defaults"))
    publish(jl, "cl", 3)
    before = data_dir_bytes(jl.data)
    r = jl("spark", *job)
    assert r.exit_code == 1, r.output
    assert r.stderr.splitlines()[-1] == (
        "jetlink: error: ORIGIN store:local/CL: consumer requires ack policy for max ack "
        "pending (10082): its consumer_limits.max_ack_pending (100) refuses the consumer a "
        "mirror or source reads it through, as on a server: nothing would ever be copied; "
        "nothing was created")
    assert data_dir_bytes(jl.data) == before


def test_source_seeds_then_the_pump_continues_like_the_pump_alone(jl):
    ok(jl("stream", "add", "EU", "--subjects", "eu.>", "--defaults"))
    ok(jl("stream", "add", "US", "--subjects", "us.>", "--defaults"))
    publish(jl, "eu", 30, ids=True)
    publish(jl, "us", 20, ids=True)
    (jl.tmp / "all.json").write_text(json.dumps({"duplicate_window": 120_000_000_000}))
    summary = doc(jl("spark", "source", "store:ALL", "--from", "EU", "--from", "store:US",
                     "--transform", "*.>=all.{{wildcard(1)}}.>", "--config",
                     str(jl.tmp / "all.json"), "-j"))
    assert (summary["job"], summary["rows_in"], summary["cursor_set"]) == ("source", 50, True)
    # the same Nats-Msg-Id in both origins (same time): EU's copy wins, US's are dropped
    assert summary["rows_out"] == 30
    assert [c["cursor"] for c in summary["cursors"]] == [30, 20]
    # the same sources filled by the pump alone, for reference
    cfg = doc(jl("stream", "info", "ALL", "-j"))["config"]
    cfg["name"] = "REF"
    (jl.tmp / "ref.json").write_text(json.dumps(cfg))
    ok(jl("stream", "add", "REF", "--config", str(jl.tmp / "ref.json")))
    ok(jl("replicate"))
    publish(jl, "eu", 10, start=100, ids=True)
    publish(jl, "us", 10, start=100, ids=True)
    ok(jl("replicate"))

    def strip(rs):  # the agreements differ only in the target named in nothing: compare all
        return [(seq, subj, hdr, data) for seq, subj, hdr, data in rs]

    assert strip(rows(jl.data, "local", "ALL")) == strip(rows(jl.data, "local", "REF"))
    assert rows(jl.data, "local", "ALL")[0][1] == "all.eu.0"


def test_cross_cluster_mirror_and_refusals(jl):
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(jl("--cluster", "west", "stream", "add", "ORDERS", "--subjects", "orders.>",
          "--defaults"))
    for i in range(5):
        ok(jl("--cluster", "west", "pub", f"orders.{i}", f"m{i}"))
    summary = doc(jl("--cluster", "east", "spark", "mirror", "store:west/ORDERS", "BACKUP", "-j"))
    assert summary["target"] == "store:east/BACKUP"
    info = doc(jl("--cluster", "east", "stream", "info", "BACKUP", "-j"))
    assert info["config"]["mirror"] == {"name": "ORDERS",
                                        "external": {"api": "$JS.west.API", "deliver": ""}}
    assert info["state"]["messages"] == 5
    # a target that holds messages is not seeded again
    r = jl("--cluster", "east", "spark", "mirror", "store:west/ORDERS", "BACKUP")
    assert r.exit_code == 1
    assert "store:east/BACKUP holds 5 messages (sequences 1 to 5)" in r.stderr
    assert rows(jl.data, "east", "BACKUP") == rows(jl.data, "west", "ORDERS")
    # addresses and options
    # a malformed address is a usage error, named before Spark starts; nothing changes
    before = data_dir_bytes(jl.data)
    r = jl("spark", "mirror", "store:a/b/c/d", "X")
    assert (r.exit_code, r.stderr) == (2, (
        "jetlink: error: ORIGIN 'store:a/b/c/d': expected store:[CLUSTER/]STREAM, "
        "store:[CLUSTER/]topic/TOPIC or parquet:PATH\n"))
    for args, what in ((["source", "X", "--from", "bogus:y"], "--from 'bogus:y'"),
                       (["verify", "store:west/ORDERS", "parquet:"], "B 'parquet:'")):
        r = jl("spark", *args)
        assert r.exit_code == 2 and r.stderr.startswith(f"jetlink: error: {what}"), r.stderr
    # a target that is one of its origins is refused (the "remove the target" way on of a
    # target that holds messages would remove the origin)
    for args, what in ((["mirror", "store:west/ORDERS", "store:west/ORDERS"], "ORIGIN"),
                       (["--cluster", "west", "mirror", "ORDERS", "ORDERS"], "ORIGIN"),
                       (["source", "store:west/ORDERS", "--from", "store:west/ORDERS"],
                        "--from")):
        r = jl(*(args[:2] if args[0] == "--cluster" else []), "spark",
               *(args[2:] if args[0] == "--cluster" else args))
        assert (r.exit_code, r.stderr) == (2, (
            f"jetlink: error: TARGET store:west/ORDERS is also {what}: a job writes a new "
            "target from its origins, never into one of them\n"))
    # a cluster the data directory lacks: named with its argument, before Spark starts
    for args, said in ((["mirror", "store:wst/ORDERS", "X"],
                        "ORIGIN store:wst/ORDERS: cluster wst not found: did you mean west?"),
                       (["mirror", "store:west/ORDERS", "store:nope/X"],
                        "TARGET store:nope/X: cluster nope not found")):
        r = jl("spark", *args)
        assert (r.exit_code, r.stderr) == (1, f"jetlink: error: {said}\n")
    assert data_dir_bytes(jl.data) == before
    r = jl("spark", "mirror", "store:west/NOPE", "X")
    assert r.exit_code == 1 and "NOPE" in r.stderr
    r = jl("spark", "mirror", "store:west/ORDERS", "Y", "--conf", "novalue")
    assert r.exit_code == 2 and "expected KEY=VALUE" in r.stderr


def test_limits_refused_when_the_pump_would_stall(jl):
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 3)
    (jl.tmp / "t.json").write_text(json.dumps({"max_msgs": 1, "discard": "new"}))
    r = jl("spark", "mirror", "ORDERS", "M", "--config", str(jl.tmp / "t.json"))
    assert r.exit_code == 1
    assert "discard new messages" in r.stderr


def test_kv_mirror_equals_the_pumped_mirror_and_a_renamed_one_is_warned_of(jl):
    """spark kv-aggregate --mirror: the bucket kv add --mirror makes, filled as the pump
    fills it; a mirror under another name than its origin's gets kv add's warning (the DR
    verbs refuse it)."""
    ok(jl("kv", "add", "FLAGS", "--history", "3"))
    for i in range(9):
        ok(jl("kv", "put", "FLAGS", f"f.{i % 4}", f"v{i}"))
    ok(jl("kv", "del", "FLAGS", "f.2", "-f"))
    r = ok(jl("spark", "kv-aggregate", "FMIR", "--mirror", "FLAGS", "--history", "3"))
    assert r.stderr.startswith("jetlink: warning: KV mirror KV_FMIR mirrors bucket FLAGS "
                               "under another name"), r.stderr
    ok(jl("kv", "add", "REF", "--mirror", "FLAGS", "--history", "3"))
    ok(jl("replicate"))
    for key in ("f.0", "f.1", "f.2", "f.3"):
        got, ref = jl("kv", "history", "FMIR", key, "-j"), jl("kv", "history", "REF", key, "-j")
        assert (got.exit_code, ref.exit_code) == (0, 0)
        strip = lambda d: [(e["key"], e["value"], e["operation"]) for e in d]  # noqa: E731
        assert strip(json.loads(got.stdout)) == strip(json.loads(ref.stdout)), key


def test_kv_aggregate_equals_the_pumped_aggregate(jl):
    ok(jl("kv", "add", "A", "--history", "5"))
    ok(jl("kv", "add", "B", "--history", "5"))
    for i in range(12):
        ok(jl("kv", "put", "A", f"k.{i % 4}", f"a{i}"))
        ok(jl("kv", "put", "B", f"cfg.{i % 3}", f"b{i}"))
    ok(jl("kv", "del", "A", "k.1", "-f"))
    ok(jl("kv", "purge", "B", "cfg.2", "-f"))
    summary = doc(jl("spark", "kv-aggregate", "AGG", "--source", "A", "--source", "B:cfg.*",
                     "--history", "3", "-j"))
    assert summary["job"] == "kv-aggregate"
    assert summary["target"] == "store:local/KV_AGG"
    ok(jl("kv", "add", "REF", "--source", "A", "--source", "B:cfg.*", "--history", "3"))
    ok(jl("replicate"))
    for key in ["k.0", "k.1", "k.2", "k.3", "cfg.0", "cfg.1", "cfg.2"]:
        agg = jl("kv", "history", "AGG", key, "-j")
        ref = jl("kv", "history", "REF", key, "-j")
        assert agg.exit_code == ref.exit_code
        if agg.exit_code == 0:
            strip = lambda d: [(e["key"], e["value"], e["operation"], e["revision"]) for e in d]  # noqa: E731
            assert strip(json.loads(agg.stdout)) == strip(json.loads(ref.stdout))
    ok(jl("kv", "put", "A", "k.9", "later"))
    assert doc(jl("kv", "get", "AGG", "k.9", "-j"))["value"] is not None
    # the same job again: refused (the bucket holds messages), and the bucket, which this
    # run did not make, is kept whole
    kept = doc(jl("kv", "info", "AGG", "-j"))["values"]
    again = jl("spark", "kv-aggregate", "AGG", "--source", "A", "--source", "B:cfg.*",
               "--history", "3")
    assert again.exit_code == 1 and "a bulk job seeds only a new or never-written target" \
        in again.stderr, again.stderr
    assert doc(jl("kv", "info", "AGG", "-j"))["values"] == kept


def test_a_stream_job_into_a_kafka_cluster_is_refused_before_it_runs(jl):
    ok(jl("stream", "add", "KO", "--subjects", "ko.>", "--defaults"))
    publish(jl, "ko", 3)
    ok(jl("cluster", "add", "kw", "--kind", "kafka"))
    from helpers import data_dir_bytes

    before = data_dir_bytes(jl.data)
    r = jl("spark", "mirror", "KO", "store:kw/KO")
    assert data_dir_bytes(jl.data) == before  # refused: nothing changed anywhere
    assert (r.exit_code, r.stderr) == (1, "jetlink: error: cluster kw is a Kafka cluster: "
                                          "streams live in a NATS cluster (cluster add NAME "
                                          "--kind nats)\n"), r.stderr


def test_rows_in_are_the_rows_the_dataset_files_hold(jl):
    """"Rows in" counts the rows the job reads (the files' footers), not the count the
    dataset's _jetlink.json records (another writer may have added files since)."""
    import json

    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 4)
    lake_path = jl.tmp / "lake-count"
    ok(jl("stream", "export", "ORDERS", f"parquet:{lake_path}"))
    meta = json.loads((lake_path / "_jetlink.json").read_text())
    meta["state"]["messages"] = 99
    (lake_path / "_jetlink.json").write_text(json.dumps(meta))
    r = jl("spark", "mirror", f"parquet:{lake_path}", f"parquet:{jl.tmp / 'count-out'}")
    assert r.exit_code == 0, r.stderr
    fields = dict(line.split(": ", 1) for line in r.stdout.splitlines() if ": " in line)
    assert (fields["Rows in"].strip(), fields["Rows out"].strip()) == ("4", "4"), r.stdout


@pytest.mark.parametrize(("column", "kind"), [
    ("ts", "timestamp[ms, tz=UTC]"), ("ts", "timestamp[us]"), ("ts", "timestamp[ns, tz=UTC]"),
    ("seq", "uint64")])
def test_a_dataset_with_a_timestamp_or_unsigned_column_is_read_as_import_reads_it(
        jl, column, kind):
    """Another tool's dataset (pandas, a Go writer): ``ts`` a timestamp of any unit (a
    zone-less one as UTC), ``seq`` unsigned. A job reads the times and sequences stream
    import stores from it: verify finds the import equal, and a mirror job writes them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 5)
    real = jl.tmp / "real"
    ok(jl("stream", "export", "ORDERS", f"parquet:{real}"))
    [part] = list(real.glob("*.parquet"))
    table = pq.read_table(part)
    unit = kind.split("[")[1].split(",")[0].rstrip("]") if column == "ts" else "ns"
    step = {"ms": 1_000_000, "us": 1_000, "ns": 1}[unit]
    want = [(s, t // step * step) for s, t in zip(table.column("seq").to_pylist(),
                                                  table.column("ts").to_pylist(), strict=True)]
    typed = {"timestamp[ms, tz=UTC]": pa.timestamp("ms", "UTC"),
             "timestamp[us]": pa.timestamp("us"), "timestamp[ns, tz=UTC]": pa.timestamp(
                 "ns", "UTC"), "uint64": pa.uint64()}[kind]
    col = table.column(column)
    if column == "ts":
        col = pa.array([t // step for t in col.to_pylist()], pa.int64()).cast(typed)
    pq.write_table(table.set_column(table.schema.get_field_index(column), column,
                                    col.cast(typed)), part)
    ok(jl("stream", "rm", "ORDERS", "-f"))  # (the import's stream takes its subjects)
    ok(jl("stream", "import", "IMP", f"parquet:{real}"))
    r = jl("spark", "verify", f"parquet:{real}", "store:IMP")
    assert r.exit_code == 0, (r.stdout, r.stderr)
    out = jl.tmp / "out"
    ok(jl("spark", "mirror", f"parquet:{real}", f"parquet:{out}"))
    got = pq.read_table(out, columns=["seq", "ts"]).sort_by("seq")
    assert list(zip(got.column("seq").to_pylist(), got.column("ts").to_pylist(),
                    strict=True)) == want


def test_mirror_from_a_lake_export_into_the_store(jl):
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 12)
    ok(jl("stream", "rmm", "ORDERS", "3", "-f"))
    lake_path = jl.tmp / "lake"
    ok(jl("stream", "export", "ORDERS", f"parquet:{lake_path}"))
    summary = doc(jl("spark", "mirror", f"parquet:{lake_path}", "store:COPY", "-j"))
    assert (summary["rows_in"], summary["rows_out"]) == (11, 11)
    assert rows(jl.data, "local", "COPY") == rows(jl.data, "local", "ORDERS")
    # the mirror's origin is the store's ORDERS: the pump carries on from the export's cut
    publish(jl, "orders", 3, start=50)
    ok(jl("replicate"))
    assert rows(jl.data, "local", "COPY") == rows(jl.data, "local", "ORDERS")
    # and a lake target: the job's rows with their metadata
    out = jl.tmp / "out"
    summary = doc(jl("spark", "mirror", "store:ORDERS", f"parquet:{out}", "-j"))
    assert summary["output"] == f"parquet:{out}" and summary["cursor_set"] is False
    meta = json.loads((out / "_jetlink.json").read_text())
    assert meta["name"] == "ORDERS" and meta["state"]["messages"] == 14
    assert not (out / "_jetlink.json.tmp").exists()  # written beside it, renamed into place
    import pyarrow.parquet as pq

    table = pq.read_table(out).sort_by("seq")
    assert [(r["seq"], r["subject"], r["headers"], r["data"]) for r in table.to_pylist()] == \
        rows(jl.data, "local", "ORDERS")
    # a lake mirror of a lake: its config is checked beside its origin's as the job read it
    # (the server's rule: mirror_direct is the origin's allow_direct), as a store target's is
    both = jl.tmp / "both"
    ok(jl("spark", "mirror", f"parquet:{lake_path}", f"parquet:{both}"))
    config = json.loads((both / "_jetlink.json").read_text())["config"]
    assert (config["name"], config["mirror"], config["mirror_direct"]) == (
        "ORDERS", {"name": "ORDERS"}, True)
    assert doc(jl("stream", "info", "COPY", "-j"))["config"]["mirror_direct"] is True
    # imported under its origin's name it would mirror itself: said so, nothing created
    ok(jl("cluster", "add", "fresh"))
    r = jl("--cluster", "fresh", "stream", "import", "ORDERS", f"parquet:{both}")
    assert r.exit_code == 1 and r.stderr == (
        f"jetlink: error: cannot create stream ORDERS from the config in {both}: detected "
        'cycle (10052): mirror.name = "ORDERS" (the dataset is a mirror of ORDERS: import it '
        "under another name, a mirror of it, or create stream ORDERS yourself with its "
        "subjects (jetlink stream add) and import into it)\n"), r.stderr


def test_a_dataset_path_holding_glob_characters_is_read_as_written(jl):
    """A `parquet:` path with * [ ] (a name a user may give): read as written, never as a
    Hadoop glob (star* reading star1 too; br[1] reading br1), nor failed by a sibling whose
    name holds a colon that a glob would have listed."""
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 3)
    ok(jl("stream", "add", "EMPTY", "--subjects", "empty.>", "--defaults"))
    g = jl.tmp / "g"
    for name, stream in (("star*", "ORDERS"), ("star1", "ORDERS"), ("br[1]", "ORDERS"),
                         ("br1", "EMPTY")):
        ok(jl("stream", "export", stream, f"parquet:{g / name}"))
    r = jl("spark", "mirror", "store:ORDERS", f"parquet:parquet:{g / 'twice'}")
    assert (r.exit_code, r.stderr) == (2, (
        f"jetlink: error: TARGET 'parquet:parquet:{g / 'twice'}': the parquet: prefix is "
        f"given twice: the dataset at {g / 'twice'} is parquet:{g / 'twice'}\n"))
    # a target inside the dataset the job reads: refused before Spark starts
    before = sorted(p.name for p in (g / "star1").iterdir())
    r = jl("spark", "mirror", f"parquet:{g / 'star1'}", f"parquet:{g / 'star1' / 'inner'}")
    assert (r.exit_code, r.stderr) == (1, (
        f"jetlink: error: TARGET 'parquet:{g / 'star1' / 'inner'}': inside the dataset "
        f"parquet:{g / 'star1'} the job reads: its files would be read as that dataset's "
        "rows by every later reader; give a path outside it; nothing was started\n"))
    assert sorted(p.name for p in (g / "star1").iterdir()) == before
    (g / "col:on").mkdir()
    for name in ("star*", "br[1]"):
        summary = doc(jl("spark", "mirror", f"parquet:{g / name}", f"parquet:{g / 'o'}{name}",
                         "-j"))
        assert (summary["rows_in"], summary["rows_out"]) == (3, 3), (name, summary)


def test_a_cluster_marked_down_is_not_read_nor_written(jl):
    """A rehearsed outage (`cluster down`) is one for a job as for the pump."""
    ok(jl("cluster", "add", "dn"))
    ok(jl("--cluster", "dn", "stream", "add", "DS", "--subjects", "ds.>", "--defaults"))
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(jl("cluster", "down", "dn"))
    before = data_dir_bytes(jl.data)
    for args in (["mirror", "store:dn/DS", "store:local/DSM"],
                 ["mirror", "store:local/ORDERS", "store:dn/X"],
                 ["verify", "store:dn/DS", "store:dn/DS"]):
        r = jl("spark", *args)
        assert (r.exit_code, r.stderr) == (
            1, "jetlink: error: cluster dn is down (jetlink cluster up dn brings it back)\n")
    assert data_dir_bytes(jl.data) == before


def test_a_config_or_metadata_document_of_another_shape_is_one_error_line(jl):
    """--config holding JSON that is no object is the server's 10025 (as stream add says
    it); a dataset whose _jetlink.json misses its stream's name or holds a count that is
    no number is refused naming the field, by every reader (Spark's and the engine's
    import); nothing is created."""
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 5)
    for body, kind in (("[1, 2]", "array"), ('"x"', "string"), ("7", "number"),
                       ("null", "null")):
        (jl.tmp / "c.json").write_text(body)
        for args in (["mirror", "ORDERS", "M"], ["source", "S", "--from", "ORDERS"]):
            r = jl("spark", *args, "--config", str(jl.tmp / "c.json"))
            assert (r.exit_code, r.stderr) == (1, (
                f"jetlink: error: invalid JSON: json: cannot unmarshal {kind} into Go value "
                "of type server.StreamConfig (10025)\n")), args
            r = jl("spark", *args, "--config", str(jl.tmp / "c.json"), "-j")
            assert r.exit_code == 1 and json.loads(r.stdout)["error"]["err_code"] == 10025
    real = jl.tmp / "real"
    ok(jl("stream", "export", "ORDERS", f"parquet:{real}"))
    meta = json.loads((real / "_jetlink.json").read_text())
    for doc_, says in (({}, 'no "name" (the stream the dataset holds)'),
                       ({**meta, "state": {**meta["state"], "messages": "lots"}},
                        '"state.messages" is \'lots\', not a whole number of 0 or more'),
                       ({**meta, "state": {**meta["state"], "last_seq": None}},
                        '"state.last_seq" is None, not a whole number of 0 or more'),
                       ({**meta, "name": 5}, '"name" is 5, not a string')):
        (real / "_jetlink.json").write_text(json.dumps(doc_))
        for args in (["spark", "mirror", f"parquet:{real}", "M"],
                     ["spark", "verify", f"parquet:{real}", "ORDERS"],
                     ["stream", "import", "O2", f"parquet:{real}"]):
            r = jl(*args)
            assert r.exit_code == 1 and r.stderr.endswith(
                f"_jetlink.json: not a _jetlink.json document: {says}\n"), (args, r.stderr)
    assert sorted(doc(jl("stream", "ls", "-a", "-j"))) == ["ORDERS"]


def test_a_dataset_that_is_not_of_the_lake_schema_is_refused(jl):
    """Parquet files without the lake's columns (read with its schema they would be nulls)
    and a directory with none are named as such, never copied as empty messages nor
    compared as 0 messages; nothing is created."""
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 5)
    real = jl.tmp / "real"
    ok(jl("stream", "export", "ORDERS", f"parquet:{real}"))
    other = jl.tmp / "other"
    other.mkdir()
    pq.write_table(pa.table({"a": [1, 2], "b": ["x", "y"]}), other / "part-0.parquet")
    shutil.copy(real / "_jetlink.json", other / "_jetlink.json")  # a metadata file alone
    r = jl("spark", "mirror", f"parquet:{other}", "store:M")
    assert (r.exit_code, r.stderr) == (1, (
        f"jetlink: error: parquet:{other} is not a dataset of the lake schema: no stream, "
        "partition, seq, subject, key, ts, headers, data columns (jetlink stream export "
        "writes one)\n"))
    assert "M" not in doc(jl("stream", "ls", "-a", "-j"))
    # one lake column missing (here headers): refused as stream import refuses it, not
    # mirrored as if the messages had none
    table = pq.read_table(real)
    (jl.tmp / "noheaders").mkdir()
    pq.write_table(table.drop_columns(["headers"]), jl.tmp / "noheaders" / "part-0.parquet")
    shutil.copy(real / "_jetlink.json", jl.tmp / "noheaders" / "_jetlink.json")
    for args in (["spark", "mirror", f"parquet:{jl.tmp / 'noheaders'}", "store:M"],
                 ["stream", "import", "M", f"parquet:{jl.tmp / 'noheaders'}"]):
        r = jl(*args)
        assert r.exit_code == 1 and "headers" in r.stderr, (args, r.stderr)
    assert "M" not in doc(jl("stream", "ls", "-a", "-j"))
    # seq of another type than an integer (another tool's): named before a job reads it
    typed = jl.tmp / "typed"
    typed.mkdir()
    table = pq.read_table(next(real.glob("*.parquet")))
    table = table.set_column(table.schema.get_field_index("seq"), "seq",
                             pa.array([str(x) for x in table.column("seq").to_pylist()]))
    pq.write_table(table, typed / "part-0.parquet")
    shutil.copy(real / "_jetlink.json", typed / "_jetlink.json")
    r = jl("spark", "mirror", f"parquet:{typed}", "store:M")
    assert (r.exit_code, r.stderr) == (1, (
        f"jetlink: error: parquet:{typed} is not a dataset of the lake schema: column seq is "
        "string, not an integer (seq bigint)\n"))
    # a file: a job's origin is a dataset directory (with its metadata); a comparison reads
    # one Parquet file, never a file of something else (refused before a driver starts)
    (jl.tmp / "afile").write_text("hi")
    one = next(real.glob("*.parquet"))
    for args, says in (
            (["mirror", f"parquet:{jl.tmp / 'afile'}", "M"], "is a non-Parquet file"),
            (["mirror", f"parquet:{one}", "M"], "is a file"),
            (["verify", f"parquet:{jl.tmp / 'afile'}", "ORDERS"], "is a non-Parquet file")):
        r = jl("spark", *args)
        assert (r.exit_code, r.stderr) == (1, (
            f"jetlink: error: {args[1]} {says}, not a dataset directory (jetlink stream export "
            "writes one)\n")), args
    # a data file of 0 bytes beside the metadata (a copy cut short): named, never 0 rows
    cut = jl.tmp / "cut"
    cut.mkdir()
    shutil.copy(real / "_jetlink.json", cut / "_jetlink.json")
    (cut / "part-00000.parquet").write_bytes(b"")
    for args in (["mirror", f"parquet:{cut}", "store:CUT"],
                 ["source", "store:CUT", "--from", f"parquet:{cut}"],
                 ["verify", f"parquet:{cut}", "ORDERS"]):
        r = jl("spark", *args)
        assert (r.exit_code, r.stderr) == (1, (
            f"jetlink: error: parquet:{cut} holds an empty file part-00000.parquet (0 bytes): "
            "no Parquet file (a copy cut short?); restore it, or remove it if the dataset is "
            "whole without it\n")), (args, r.stderr)
    assert "CUT" not in doc(jl("stream", "ls", "-a", "-j"))
    # a row whose seq is null (written by another tool): one line, nothing left behind
    nulls = jl.tmp / "nullseq"
    nulls.mkdir()
    shutil.copy(real / "_jetlink.json", nulls / "_jetlink.json")
    table = pq.read_table(next(real.glob("*.parquet")))
    loose = pa.schema([f.with_nullable(True) for f in table.schema])
    rows = table.to_pylist()
    rows[0]["seq"] = None
    pq.write_table(pa.Table.from_pylist(rows, loose), nulls / "part-00000.parquet")
    r = jl("spark", "mirror", f"parquet:{nulls}", "store:NS")
    assert (r.exit_code, r.stderr) == (1, (
        f"jetlink: error: parquet:{nulls}: part-00000.parquet: a row without a sequence "
        "(column seq null): not a stream sequence (1 to 1099511627775); nothing was started "
        "(jetlink stream import refuses such rows too)\n")), r.stderr
    assert "NS" not in doc(jl("stream", "ls", "-a", "-j"))
    empty = jl.tmp / "empty"
    empty.mkdir()
    r = jl("spark", "verify", f"parquet:{empty}", "ORDERS")
    assert r.exit_code == 1 and r.stderr == (
        f"jetlink: error: parquet:{empty} holds no Parquet data files\n")
    # a file that is no Parquet: an error naming it, never "0 messages" that differ
    text = jl.tmp / "afile"
    text.write_text("")
    r = jl("spark", "verify", f"parquet:{text}", "ORDERS")
    assert (r.exit_code, r.stderr) == (1, (
        f"jetlink: error: parquet:{text} is a non-Parquet file, not a dataset directory "
        "(jetlink stream export writes one)\n"))
    assert "differ" not in r.stdout
    # ... a directory of files that are not Parquet: Spark's reading of it says so
    bad = jl.tmp / "bad"
    bad.mkdir()
    (bad / "part-0.parquet").write_text("not parquet")
    r = jl("spark", "verify", f"parquet:{bad}", "ORDERS")
    assert r.exit_code == 1 and len(r.stderr.splitlines()) == 1 and (
        f"{bad}/part-0.parquet is not a Parquet file" in r.stderr), r.stderr


def _slow_stage(spark) -> None:
    """One stage of four tasks, each 0.4 s long: long enough for the feed to see it."""
    import time

    def slow(batches):
        for b in batches:
            time.sleep(0.4)
            yield b

    spark.range(0, 4, numPartitions=4).mapInArrow(slow, "id long").collect()


def test_progress_reports_the_running_stages(spark):
    """The progress bar's feed: tasks of the active stages, from Spark's status tracker."""

    from jetlink.sparkops.progress import snapshot, watch

    seen = []
    with watch(lambda done, total, label: seen.append((done, total, label)), interval=0.05):
        _slow_stage(spark)
    running = [s for s in seen if s[1] > 0]
    assert running, seen
    assert all(0 <= done <= total == 4 and label == "1 stage running"
               for done, total, label in running)
    # Spark's status tracker hears of the stage's end on its listener bus, which runs behind
    # collect() returning: the finished stage leaves the feed soon after, not at once
    wait_until(lambda: snapshot(spark.sparkContext) == (0, 0, ""),
               message=lambda: f"the feed still reports {snapshot(spark.sparkContext)}")


def test_progress_finds_a_session_the_block_starts(spark, monkeypatch):
    """The job starts its session lazily, inside the watched block (after the checks that
    need no JVM): the feed looks for the session on each poll, not once on entry."""
    import time

    from pyspark import SparkContext

    from jetlink.sparkops.progress import watch

    sc = SparkContext._active_spark_context
    monkeypatch.setattr(SparkContext, "_active_spark_context", None)
    seen = []
    with watch(lambda done, total, label: seen.append((done, total, label)), interval=0.05):
        time.sleep(0.2)  # no session yet: nothing to report, the feed keeps looking
        SparkContext._active_spark_context = sc  # the session "starts"
        _slow_stage(spark)
    assert [s for s in seen if s[1] > 0], seen


def test_source_into_a_target_with_first_seq(jl):
    """A new target whose config sets first_seq: the job's sequences start there, as the
    pump's would."""
    ok(jl("stream", "add", "EU", "--subjects", "eu.>", "--defaults"))
    publish(jl, "eu", 4)
    (jl.tmp / "t.json").write_text(json.dumps({"first_seq": 100}))
    doc(jl("spark", "source", "T", "--from", "EU", "--config", str(jl.tmp / "t.json"), "-j"))
    assert [r[0] for r in rows(jl.data, "local", "T")] == [100, 101, 102, 103]
    publish(jl, "eu", 1, start=4)
    assert [r[0] for r in rows(jl.data, "local", "T")][-1] == 104


def test_a_source_job_stamps_its_messages_when_it_writes_them(jl, cli_clock, monkeypatch):
    """The job's messages are stored in the target at the time of the write, after the
    target was made (as the pump stamps what it copies), never at the job's start, before
    it: a max_age counted from the job's start removed them as soon as they were written
    (here the Spark pass takes a minute of the test's clock)."""
    from jetlink.core.clock import parse_rfc3339_nano
    from jetlink.sparkops.run import Runner

    create = Runner._create_target

    def after_a_minute(self, *args):
        cli_clock.advance(60 * 10**9)
        return create(self, *args)

    monkeypatch.setattr(Runner, "_create_target", after_a_minute)
    ok(jl("stream", "add", "EU", "--subjects", "eu.>", "--defaults"))
    publish(jl, "eu", 3)
    (jl.tmp / "t.json").write_text(json.dumps({"max_age": 600_000_000_000}))
    doc(jl("spark", "source", "T", "--from", "EU", "--config", str(jl.tmp / "t.json"), "-j"))
    info = doc(jl("stream", "info", "T", "-j"))
    created = parse_rfc3339_nano(info["created"])
    assert info["state"]["messages"] == 3
    assert parse_rfc3339_nano(info["state"]["first_ts"]) >= created, info


def test_source_from_a_lake_export_planned_on_the_driver(jl, cli_clock, monkeypatch):
    """`spark source --from parquet:PATH` (a `stream export`): planned on the driver from
    the Parquet columns (the Spark-planned job would fail this test), the rows the pump
    stores from the same origin; then the pump carries on from the export's cut."""
    from jetlink.sparkops import jobs

    def no(*_a, **_k):
        raise AssertionError("planned by Spark")

    monkeypatch.setattr(jobs, "_source_fast", no)
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 40, ids=True)
    cli_clock.advance(300 * 10**9)  # past ORDERS' duplicate window: it stores them again
    publish(jl, "orders", 10, start=20, ids=True)  # ids 20..29 again: duplicates
    ok(jl("stream", "rmm", "ORDERS", "7", "-f"))
    lake_path = jl.tmp / "lake"
    ok(jl("stream", "export", "ORDERS", f"parquet:{lake_path}"))
    (jl.tmp / "t.json").write_text(json.dumps({"duplicate_window": 120_000_000_000,
                                               "max_msgs_per_subject": 6}))
    summary = doc(jl("spark", "source", "store:ALL", "--from", f"parquet:{lake_path}",
                     "--transform", "orders.*=all.{{wildcard(1)}}", "--config",
                     str(jl.tmp / "t.json"), "-j"))
    assert (summary["rows_in"], summary["rows_out"]) == (49, 30)  # counted by the plan
    assert summary["cursors"][0]["cursor"] == 50
    info = doc(jl("stream", "info", "ALL", "-j"))
    assert info["sources"][0]["lag"] == 0  # the cursor was set with the last write
    cfg = info["config"]
    cfg["name"] = "REF"
    (jl.tmp / "ref.json").write_text(json.dumps(cfg))
    ok(jl("stream", "add", "REF", "--config", str(jl.tmp / "ref.json")))
    ok(jl("replicate"))
    assert rows(jl.data, "local", "ALL") == rows(jl.data, "local", "REF")
    assert rows(jl.data, "local", "ALL")[0][1] == "all.0"
    publish(jl, "orders", 5, start=100, ids=True)
    ok(jl("replicate"))
    assert rows(jl.data, "local", "ALL") == rows(jl.data, "local", "REF")
    # a message the pump would stall on: the same one line as the Spark-planned job's
    ok(jl("stream", "add", "LATE", "--subjects", "late.>", "--allow-msg-ttl", "--defaults"))
    publish(jl, "late", 3)
    ok(jl("pub", "late.1", "late", "-H", "Nats-TTL:5s"))
    publish(jl, "late", 2, start=4)
    ttl_lake = jl.tmp / "lake-ttl"
    ok(jl("stream", "export", "LATE", f"parquet:{ttl_lake}"))
    r = jl("spark", "source", "store:TTL", "--from", f"parquet:{ttl_lake}")
    assert r.exit_code == 1, r.output
    assert r.stderr.strip().splitlines() == [
        "jetlink: error: message 4 of LATE carries Nats-TTL (per-message TTLs are not "
        "carried by bulk jobs)"]


def test_a_job_failing_in_the_jvm_is_one_error_line(jl):
    """A failure inside Spark (here a Parquet file of the lake overwritten with garbage)
    ends the command with one line naming the cause and Spark's log, never a traceback."""
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 5)
    lake_path = jl.tmp / "lake"
    ok(jl("stream", "export", "ORDERS", f"parquet:{lake_path}"))
    (data_file,) = [p for p in lake_path.rglob("*.parquet")]
    data_file.write_bytes(b"PAR1" + b"\xff" * 200 + b"PAR1")
    r = jl("spark", "mirror", f"parquet:{lake_path}", "store:COPY")
    assert r.exit_code == 1, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("jetlink: error: the Spark job failed: ") and "Spark's log: " in line
    # The job failed before it wrote: no target was made, the store is as it was.
    assert "COPY" not in doc(jl("stream", "ls", "-n", "-j"))


def test_the_driver_exits_on_out_of_memory(spark):
    """Spark's driver JVM runs with -XX:+ExitOnOutOfMemoryError: a driver out of memory ends
    the command with one error line instead of leaving the job waiting for ever."""
    from jetlink.sparkops.session import EXIT_ON_OOM

    jvm = spark.sparkContext._jvm
    args = list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    assert EXIT_ON_OOM in args


def test_an_interrupt_ends_a_running_job_without_py4j_tracebacks(spark, caplog):
    """Ctrl-C while a job runs: KeyboardInterrupt alone (the command then exits 130, nothing
    printed). PySpark's own handler cancelled the jobs from inside the interrupted gateway
    call (a re-entrant read of the same connection) and py4j logged each failed call with
    its traceback; the session's handler does neither, and the gateway works afterwards."""
    import logging
    import os
    import signal
    import threading
    import time

    from jetlink.sparkops import session

    assert signal.getsignal(signal.SIGINT) is session._interrupt
    sc = spark.sparkContext
    seen: list[str] = []

    def interrupt_when_running() -> None:
        tracker = sc.statusTracker()
        deadline = time.monotonic() + 120
        while not tracker.getActiveJobsIds():
            if time.monotonic() > deadline:
                seen.append("no job became active in 120 s")
                return
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    caplog.set_level(logging.DEBUG)
    thread = threading.Thread(target=interrupt_when_running)
    thread.start()
    try:
        # KeyboardInterrupt, or py4j's clean-up of the call it cut short failing in its turn
        # (a new gateway connection refused on a busy machine): the command takes either
        # for the interrupt (cli/launch.py interrupted_job)
        with pytest.raises(BaseException) as raised:
            spark.range(10 ** 13).selectExpr("sum(id)").collect()
        chain, exc = [], raised.value
        while exc is not None:
            chain.append(type(exc).__name__)
            exc = exc.__context__
        assert "KeyboardInterrupt" in chain, chain
        assert session.interrupted()
    finally:
        thread.join()
        session._INTERRUPTED.clear()  # (the session outlives this test)
        wait_until(lambda: sc.cancelAllJobs() or True, message="the jobs cancelled")
        # the interrupted call's connection was closed: this thread's next one is another
        # JVM thread, where the session is not the active one (a thread-local)
        wait_until(lambda: spark._jvm.SparkSession.setActiveSession(spark._jsparkSession)
                   or True, message="the session active again")
    assert seen == []
    assert [(r.pathname, r.getMessage()) for r in caplog.records
            if "py4j" in r.pathname and r.levelno >= logging.WARNING] == []
    assert wait_until(lambda: spark.range(3).count() == 3, message="the gateway answering")
    # the session not active on the JVM thread of this thread's (new) gateway connection:
    # the next job takes the same context all the same, never a second one
    spark._jvm.SparkSession.clearActiveSession()
    again = session.get_session()
    assert again.sparkContext is sc
    spark._jvm.SparkSession.setActiveSession(spark._jsparkSession)


def test_an_unreachable_cluster_master_is_named_before_spark_starts(jl, tmp_path):
    """A ``spark://`` master none of whose addresses accepts a connection: one line naming
    it and each address's answer, exit 1, in well under Spark's own minute of retries;
    nothing is written."""
    import socket

    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 3)
    closed = []
    for _ in range(2):  # two ports nothing listens on (bound, then closed)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            closed.append(s.getsockname()[1])
    master = f"spark://127.0.0.1:{closed[0]},127.0.0.1:{closed[1]}"
    before = data_dir_bytes(jl.data)
    r = jl("spark", "mirror", "store:ORDERS", f"parquet:{tmp_path / 'out'}", "--master", master)
    assert (r.exit_code, r.stderr) == (1, (
        f"jetlink: error: --master {master}: no Spark master answers (127.0.0.1:{closed[0]}: "
        f"connection refused; 127.0.0.1:{closed[1]}: connection refused); nothing was "
        "started\n"))
    assert data_dir_bytes(jl.data) == before
    assert not (tmp_path / "out").exists()


@contextlib.contextmanager
def _two_ports():
    """(a port something listens on, a port nothing listens on) of 127.0.0.1."""
    import socket

    with socket.socket() as listening, socket.socket() as gone:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        gone.bind(("127.0.0.1", 0))
        port, dead = listening.getsockname()[1], gone.getsockname()[1]
        gone.close()
        yield port, dead


def test_a_cluster_master_with_one_address_answering_is_used():
    """``master_unreachable``: None when any of the master's addresses accepts a connection,
    and for every master that is not ``spark://`` or ``yarn`` (local, k8s: Spark resolves
    those)."""

    from jetlink.sparkops.session import master_unreachable

    with _two_ports() as (port, dead):
        assert master_unreachable(f"spark://127.0.0.1:{dead},127.0.0.1:{port}") is None
        assert master_unreachable(f"spark://127.0.0.1:{dead}") == (
            f"127.0.0.1:{dead}: connection refused")
    for master in ("local[*]", "local", "k8s://https://10.0.0.1:6443"):
        assert master_unreachable(master) is None


def _yarn_site(d, props: dict[str, str]) -> None:
    d.mkdir(exist_ok=True)
    body = "".join(f"<property><name>{k}</name><value>{v}</value></property>"
                   for k, v in props.items())
    (d / "yarn-site.xml").write_text(f"<?xml version='1.0'?><configuration>{body}"
                                     "</configuration>")


def test_a_yarn_resource_manager_that_does_not_answer_is_named_before_spark_starts(
        jl, tmp_path, monkeypatch):
    """``--master yarn``: the ResourceManager yarn-site.xml names (its address, else its
    hostname:8032, else Hadoop's 0.0.0.0:8032) must accept a connection, or one line names
    it, exit 1, nothing started (Spark's client would retry it for minutes, silent); with
    ResourceManager HA it is not judged here."""

    from jetlink.sparkops.session import master_unreachable

    conf = tmp_path / "hadoop"
    monkeypatch.delenv("YARN_CONF_DIR", raising=False)
    monkeypatch.setenv("HADOOP_CONF_DIR", str(conf))
    with _two_ports() as (port, dead):
        _yarn_site(conf, {"yarn.resourcemanager.address": f"127.0.0.1:{port}"})
        assert master_unreachable("yarn") is None
        _yarn_site(conf, {"yarn.resourcemanager.hostname": "127.0.0.1",
                          "yarn.resourcemanager.address":
                              f"${{yarn.resourcemanager.hostname}}:{dead}"})
        assert master_unreachable("yarn") == (
            f"ResourceManager 127.0.0.1:{dead} ({conf}/yarn-site.xml): connection refused")
        _yarn_site(conf, {"yarn.resourcemanager.ha.enabled": "true",
                          "yarn.resourcemanager.address": f"127.0.0.1:{dead}"})
        assert master_unreachable("yarn") is None
        _yarn_site(conf, {"yarn.resourcemanager.address": f"127.0.0.1:{dead}"})
        ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
        r = jl("spark", "verify", "ORDERS", "ORDERS", "--master", "yarn")
        assert (r.exit_code, r.stderr) == (1, (
            f"jetlink: error: --master yarn: no YARN ResourceManager answers (ResourceManager "
            f"127.0.0.1:{dead} ({conf}/yarn-site.xml): connection refused); nothing was "
            "started\n"))


def test_an_output_that_cannot_be_written_is_named_before_spark_starts(jl, tmp_path):
    """``spark mirror`` to a ``parquet:`` path under a file, or where no directory can be
    made: one line naming the target and why, exit 1, nothing written; the check leaves
    nothing behind where it can write."""
    from jetlink.sparkops.io import unwritable_output

    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 3)
    (tmp_path / "afile").write_text("x")
    before = data_dir_bytes(jl.data)
    for target, why in ((f"parquet:{tmp_path}/afile/out", f"{tmp_path}/afile is not a directory"),
                        (f"parquet:{tmp_path}/afile", f"{tmp_path}/afile is not a directory"),
                        ("parquet:/proc/jetlink-none/out",
                         "can not create a directory in /proc: no such file or directory")):
        r = jl("spark", "mirror", "store:ORDERS", target)
        assert (r.exit_code, r.stderr) == (
            1, f"jetlink: error: TARGET {target!r}: {why}; nothing was started\n")
    assert data_dir_bytes(jl.data) == before
    assert unwritable_output(str(tmp_path / "new" / "deeper")) is None
    assert unwritable_output(f"file://{tmp_path}/new") is None
    assert unwritable_output("hdfs://namenode:8020/lake/x") is None  # Spark's to judge
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".jetlink-write-check")]
    assert not (tmp_path / "new").exists()


def _streams(jl) -> list[str]:
    return doc(jl("stream", "ls", "-n", "-j"))


def test_a_refused_or_failed_job_changes_nothing(jl):
    """A job refused for its --config (a mirror of another origin, discard new, work-queue
    retention), one failing inside Spark (a malformed Parquet origin) and a KV aggregate of a
    bucket that is not there: one error line each, and the data directory's bytes are what
    they were (no target, no bucket for the pump to fill); the corrected job then runs."""
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(jl("stream", "add", "EVENTS", "--subjects", "events.>", "--defaults"))
    publish(jl, "orders", 6)
    publish(jl, "events", 2)
    lake_path = jl.tmp / "lake"
    ok(jl("stream", "export", "ORDERS", f"parquet:{lake_path}"))
    (data_file,) = [p for p in lake_path.rglob("*.parquet")]
    data_file.write_bytes(b"PAR1" + b"\xff" * 200 + b"PAR1")
    configs = {"other": {"mirror": {"name": "EVENTS"}}, "dnew": {"discard": "new",
                                                                 "max_msgs": 3},
               "wq": {"retention": "workqueue"}}
    for name, body in configs.items():
        (jl.tmp / f"{name}.json").write_text(json.dumps(body))
    before = data_dir_bytes(jl.data)
    for args, words in (
            (["mirror", "ORDERS", "M", "--config", str(jl.tmp / "other.json")],
             "store:local/M is not a mirror of ORDERS: --config's mirror names EVENTS"),
            (["mirror", "ORDERS", "M", "--config", str(jl.tmp / "dnew.json")], "discard new"),
            (["mirror", "ORDERS", "M", "--config", str(jl.tmp / "wq.json")], "work"),
            (["mirror", f"parquet:{lake_path}", "M"], "the Spark job failed: "),
            (["kv-aggregate", "AGG", "--source", "NOPE"],
             "--source NOPE: bucket NOPE not found; nothing was created"),
            (["kv-aggregate", "AGG", "--source", "NOPE@nowhere"],
             "--source NOPE@nowhere: cluster nowhere not found; nothing was created")):
        r = jl("spark", *args)
        assert r.exit_code == 1, (args, r.output)
        (line,) = r.stderr.strip().splitlines()
        assert words in line, (args, line)
        assert data_dir_bytes(jl.data) == before, args
    # the corrected job: a new target, seeded
    summary = doc(jl("spark", "mirror", "ORDERS", "M", "-j"))
    assert (summary["rows_out"], summary["cursor_set"]) == (6, True)
    assert rows(jl.data, "local", "M") == rows(jl.data, "local", "ORDERS")


def test_a_job_failing_while_it_writes_removes_only_the_target_it_made(jl, monkeypatch):
    """A job that fails after it made its target (here the writing breaks after the first
    batch) removes that target again; a target that was there before the job is kept, with
    what was written, and a job run again names what it holds and the two ways on; `jetlink
    replicate` then continues it like the pump's own."""
    from jetlink.sparkops import io
    from jetlink.sparkops.run import SparkJobError

    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 8)
    real = io.iter_arrow

    def broken(df, rows=50_000, *, total=None):
        it = real(df, 3, total=total)
        yield next(it)
        yield next(it)
        raise SparkJobError("the Spark job failed: lost an executor (test)")

    monkeypatch.setattr(io, "iter_arrow", broken)
    # transactions of 3 rows: the first is committed when the second breaks
    monkeypatch.setattr(lake, "write_stream_rows",
                        functools.partial(lake.write_stream_rows, txn_rows=3))
    r = jl("spark", "mirror", "ORDERS", "M")
    assert (r.exit_code, r.stderr) == (
        1, "jetlink: error: writing store:local/M: the Spark job failed: lost an executor "
        "(test)\n")
    assert "M" not in _streams(jl)
    # a target made before the job (never written: the pump has not run) is the user's
    dd = DataDir(jl.data)
    try:
        JetStream(dd.open("local"), None).add_stream({"name": "KEPT", "mirror": {"name":
                                                                                "ORDERS"}})
    finally:
        dd.close()
    r = jl("spark", "mirror", "ORDERS", "KEPT")
    assert r.exit_code == 1, r.output
    assert "KEPT" in _streams(jl)
    monkeypatch.undo()
    held = doc(jl("stream", "info", "KEPT", "-j"))["state"]
    assert held["messages"] >= 3  # the command's own replication step may go on
    r = jl("spark", "mirror", "ORDERS", "KEPT")
    assert (r.exit_code, r.stderr) == (1, (
        f"jetlink: error: store:local/KEPT holds {held['messages']} messages (sequences 1 to "
        f"{held['last_seq']}): a bulk job seeds only a new or never-written target. If they "
        "are an interrupted job's, `jetlink replicate` continues it from there; or remove "
        "the target (`jetlink stream rm KEPT -f`) and run the job again\n"))
    ok(jl("replicate"))
    assert rows(jl.data, "local", "KEPT") == rows(jl.data, "local", "ORDERS")


def test_source_keeps_the_configs_sources_and_refuses_what_does_not_match(jl):
    """`spark source --config FILE` with sources: their filters, transforms and start
    sequences are the job's (each --from matched by name), and `spark verify` finds the
    result identical to the engine's own sourcing stream of the same config; a --from the
    config does not name, a source of the config no --from gives and --transform beside the
    config's sources are refused, changing nothing."""
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(jl("stream", "add", "EVENTS", "--subjects", "events.>", "--defaults"))
    for i in range(12):
        ok(jl("pub", f"orders.{'us' if i % 3 else 'eu'}.{i}", f"o{i}"))
        ok(jl("pub", f"events.{'a' if i % 2 else 'b'}.{i}", f"e{i}"))
    sources = [{"name": "ORDERS", "filter_subject": "orders.us.>", "opt_start_seq": 3},
               {"name": "EVENTS", "subject_transforms": [
                   {"src": "events.b.*", "dest": "ev.{{wildcard(1)}}"}]}]
    config = {"sources": sources, "duplicate_window": 120_000_000_000}
    (jl.tmp / "src.json").write_text(json.dumps(config))
    (jl.tmp / "ref.json").write_text(json.dumps({**config, "name": "REF"}))
    ok(jl("stream", "add", "REF", "--config", str(jl.tmp / "ref.json")))
    ok(jl("replicate"))
    before = data_dir_bytes(jl.data)
    for args, line in (
            (["--from", "ORDERS", "--from", "EVENTS", "--transform", "a.*=b.{{wildcard(1)}}"],
             "--transform: --config gives sources (with their own subject_transforms); give "
             "the transforms in one place"),
            (["--from", "ORDERS", "--from", "EVENTS", "--from", "REF"],
             "--from store:local/REF: --config's sources name no REF (they name ORDERS, "
             "EVENTS)"),
            (["--from", "ORDERS"],
             "--config: source EVENTS has no --from origin (give --from for every source of "
             "the config)")):
        r = jl("spark", "source", "SP", *args, "--config", str(jl.tmp / "src.json"))
        assert (r.exit_code, r.stderr) == (1, f"jetlink: error: {line}\n"), r.output
    assert data_dir_bytes(jl.data) == before
    summary = doc(jl("spark", "source", "SP", "--from", "ORDERS", "--from", "store:EVENTS",
                     "--config", str(jl.tmp / "src.json"), "-j"))
    assert summary["rows_out"] == 7 + 6
    assert doc(jl("stream", "info", "SP", "-j"))["config"]["sources"] == sources
    res = jl("spark", "verify", "REF", "SP", "--ignore-time")
    assert res.exit_code == 0, res.output
    subjects = {r[1] for r in rows(jl.data, "local", "SP")}
    assert "ev.0" in subjects and not [s for s in subjects if s.startswith("events.")]


def test_a_created_target_gets_the_defaults_of_stream_add(jl):
    """The stream `spark source` / `spark mirror` creates has the config `jetlink stream add
    ... --defaults` gives the same stream (a 2m duplicate window for a sourcing stream,
    direct gets...): Nats-Msg-Id duplicates are dropped as the engine drops them."""
    ok(jl("stream", "add", "EU", "--subjects", "eu.>", "--defaults"))
    ok(jl("stream", "add", "US", "--subjects", "us.>", "--defaults"))
    publish(jl, "eu", 6, ids=True)
    publish(jl, "us", 4, ids=True)  # id0..id3 again, in another origin
    ok(jl("stream", "add", "REF", "--source", "EU", "--source", "US", "--subjects", "none.x",
          "--defaults"))
    ok(jl("stream", "add", "MREF", "--mirror", "EU", "--defaults"))
    ok(jl("replicate"))
    (jl.tmp / "subj.json").write_text(json.dumps({"subjects": ["none.y"]}))
    summary = doc(jl("spark", "source", "SP", "--from", "EU", "--from", "US", "--config",
                     str(jl.tmp / "subj.json"), "-j"))
    assert summary["rows_out"] == 6  # US's four are duplicates within the window
    doc(jl("spark", "mirror", "EU", "M", "-j"))

    def config(name):
        cfg = doc(jl("stream", "info", name, "-j"))["config"]
        return {k: v for k, v in cfg.items() if k not in ("name", "subjects")}

    assert config("SP") == config("REF")
    assert config("SP")["duplicate_window"] == 120_000_000_000
    assert config("M") == config("MREF")
    res = jl("spark", "verify", "REF", "SP", "--ignore-time")
    assert res.exit_code == 0, res.output


def test_a_parquet_target_in_use_is_named_before_spark_starts(jl, tmp_path, monkeypatch):
    """A ``parquet:`` TARGET holding what a killed job left (Spark's ``_temporary``, no
    ``_jetlink.json``) or a finished dataset: one line naming the path and how to clear it,
    exit 1, before a session is asked for; an empty directory is taken as a new one."""
    import jetlink.cli.spark as cli_spark

    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 4)
    left = tmp_path / "left"
    (left / "_temporary" / "0").mkdir(parents=True)
    (left / "_temporary" / "0" / "part-00000.parquet").write_bytes(b"PAR1")
    done = tmp_path / "done"
    ok(jl("stream", "export", "ORDERS", f"parquet:{done}"))
    real = cli_spark.job_runner

    def no_session(*_a, **_k):
        raise AssertionError("a session was asked for")

    monkeypatch.setattr(cli_spark, "job_runner", no_session)
    for path, why in (
            (left, f"{left} holds what an unfinished job left (no _jetlink.json): remove it "
                   f"(rm -r {left}) and run the job again"),
            (done, f"{done} holds a dataset already (_jetlink.json): a job writes a new "
                   f"dataset; remove it (rm -r {done}) or choose another path")):
        r = jl("spark", "mirror", "ORDERS", f"parquet:{path}")
        assert (r.exit_code, r.stderr) == (
            1, f"jetlink: error: TARGET 'parquet:{path}': {why}; nothing was started\n")
    monkeypatch.setattr(cli_spark, "job_runner", real)
    empty = tmp_path / "empty"
    empty.mkdir()
    summary = doc(jl("spark", "mirror", "ORDERS", f"parquet:{empty}", "-j"))
    assert summary["rows_out"] == 4 and (empty / "_jetlink.json").is_file()


def test_a_master_that_can_never_work_is_a_usage_error(jl, monkeypatch):
    """``--master`` values Spark could never use are named with the accepted forms before a
    driver starts (exit 2), nothing written."""
    from jetlink.sparkops.session import MASTER_FORMS

    monkeypatch.delenv("HADOOP_CONF_DIR", raising=False)
    monkeypatch.delenv("YARN_CONF_DIR", raising=False)
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    publish(jl, "orders", 2)
    before = data_dir_bytes(jl.data)
    for master, why in (
            ("bogus", f"expected {MASTER_FORMS}"),
            ("local[abc]", f"expected {MASTER_FORMS}"),
            ("spark://", f"'' is not HOST:PORT (expected {MASTER_FORMS})"),
            ("spark://h:1,:2", f"':2' is not HOST:PORT (expected {MASTER_FORMS})"),
            ("local[99999999999999]", "a thread or worker count is at most 2,147,483,647 "
                                      "(Spark reads it as an Int)"),
            ("local-cluster[2,1,4294967296]", "a thread or worker count is at most "
                                              "2,147,483,647 (Spark reads it as an Int)"),
            ("yarn", "set HADOOP_CONF_DIR or YARN_CONF_DIR to the cluster's Hadoop "
                     "configuration directory (Spark finds the resource manager there)")):
        r = jl("spark", "mirror", "ORDERS", "M", "--master", master)
        assert (r.exit_code, r.stderr) == (
            2, f"jetlink: error: --master {master!r}: {why}\n"), r.output
    assert data_dir_bytes(jl.data) == before


def test_a_bad_transform_is_a_usage_error_before_a_driver_starts(jl, monkeypatch):
    """``spark source --transform`` is checked with the server's transform rules first:
    the value named with the rule, exit 2, no JVM asked for."""
    from jetlink.cli import spark_session

    def no_session(*_a, **_k):
        raise AssertionError("a Spark session was asked for")

    monkeypatch.setattr(spark_session, "session", no_session)
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    for value, why in (("noequals", "expected SRC=DEST"),
                       ("orders.*=x.{{wildcard(2)}}", "invalid mapping destination: wildcard "
                        "index out of range in {{wildcard(2)}}: [2] (a source subject "
                        "transform")):
        r = jl("spark", "source", "T", "--from", "ORDERS", "--transform", value)
        assert r.exit_code == 2, r.output
        assert r.stderr.startswith(f"jetlink: error: --transform {value!r}: {why}"), r.stderr


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*]", "local[2, 3]",
                                    "local[*,4]", "local-cluster[ 2 , 1, 1024 ]"])
def test_the_master_forms_spark_takes_pass_the_check(master):
    """SparkMasterRegex's local forms, spaces around the commas included."""
    from jetlink.sparkops.session import master_form_error

    assert master_form_error(master) is None


def test_a_driver_jvm_exiting_at_start_names_its_cause(tmp_path, monkeypatch):
    """A driver JVM that exits before it answers (a bad --conf spark.driver.memory, Spark's
    own refusal of a master) is reported with what it said in Spark's log, not only "Java
    gateway process exited"; a spark:// address that does not answer in time is named as
    such."""
    import socket

    from jetlink.sparkops import session

    log = tmp_path / "spark.log"
    monkeypatch.setattr(session, "jvm_log_path", lambda: log)
    gone = RuntimeError("[JAVA_GATEWAY_EXITED] Java gateway process exited before sending its "
                        "port number.")
    log.write_text("Invalid maximum heap size: -Xmxnotasize\n"
                   "Error: Could not create the Java Virtual Machine.\n"
                   "Error: A fatal exception has occurred. Program will exit.\n")
    assert session.failure_text(gone) == (
        "the Spark driver JVM exited at start: Invalid maximum heap size: -Xmxnotasize "
        f"(Spark's log: {log})")
    log.write_text("WARNING: Using incubator modules: jdk.incubator.vector\n"
                   'Exception in thread "main" org.apache.spark.SparkException: A reason.\n'
                   "\tat org.apache.spark.deploy.SparkSubmit.main(SparkSubmit.scala)\n")
    assert session.failure_text(gone) == (
        "the Spark driver JVM exited at start: org.apache.spark.SparkException: A reason. "
        f"(Spark's log: {log})")
    log.write_text("")
    assert session.failure_text(gone).startswith("the Spark job failed: [JAVA_GATEWAY_EXITED]")

    def silent(address, timeout):
        raise TimeoutError("timed out")

    monkeypatch.setattr(socket, "create_connection", silent)
    assert session.master_unreachable("spark://10.255.255.1:7077", timeout=2) == (
        "10.255.255.1:7077: no answer within 2s")


def test_the_bar_follows_stderr_as_every_bar(monkeypatch):
    """The Spark bar goes to stderr: shown when stderr is a terminal (stdout piped too),
    never with --json or when stderr is not one."""
    from types import SimpleNamespace

    from jetlink.cli import output, spark

    used = []
    monkeypatch.setattr(spark, "with_progress", lambda job: used.append("bar") or job())

    class Summary:
        def to_json(self):
            return {"job": "mirror", "target": "t", "output": "", "rows_in": 0, "rows_out": 0,
                    "seconds": 0.0, "rows_per_second": 0.0, "cursors": []}

    monkeypatch.setattr(output, "emit", lambda *a, **k: None)
    for stderr_tty, stdout_tty, as_json, bar in ((True, False, False, True),
                                                 (False, True, False, False),
                                                 (True, True, True, False)):
        used.clear()
        monkeypatch.setattr(output, "stderr_is_terminal", lambda v=stderr_tty: v)
        monkeypatch.setattr(output, "stdout_is_terminal", lambda v=stdout_tty: v)
        spark._run(SimpleNamespace(json=as_json), Summary)
        assert bool(used) == bar, (stderr_tty, stdout_tty, as_json)


@pytest.mark.parametrize("value", ["0", "65"])
def test_kv_aggregate_history_is_kv_adds_range(jl, value):
    r = jl("spark", "kv-aggregate", "AGG", "--source", "CONFIG", "--history", value)
    assert r.exit_code == 2
    assert f"Invalid value for '--history': {value} is not in the range 1<=x<=64." in r.stderr
