"""A job on a real Spark standalone cluster: the suite's master and two workers on 127.0.0.1
(tests/conftest.py spark_standalone), started from the installed pyspark, and ``jetlink spark
mirror parquet:IN parquet:OUT --master spark://...`` run as a subprocess (it makes its own
driver; the suite's in-process session is not touched). The rows it writes must be what
the engine's mirror holds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jetlink.core import lake
from jetlink.core import replication as RP
from jetlink.sparkops.session import SparkOptions, is_loopback

pytestmark = pytest.mark.spark

JETLINK = Path(sys.executable).with_name("jetlink")


def _env() -> dict[str, str]:
    from jetlink.sparkops.cluster import spark_env

    return spark_env()


@pytest.fixture
def standalone(spark_standalone):
    """``spark://127.0.0.1:PORT``: the suite's standalone cluster (tests/conftest.py)."""
    return spark_standalone.url


def _fill(js, clock, n: int = 300) -> None:
    js.add_stream({"name": "ORDERS", "subjects": ["orders.>"], "duplicate_window": 0})
    for i in range(n):
        headers = None
        if i % 7 == 0:
            headers = {"Nats-Msg-Id": f"id-{i % 50}"}
        elif i % 11 == 0:
            headers = {"Nats-Expected-Stream": "ORDERS", "X-Trace": f"t{i}"}
        js.publish(f"orders.{('eu', 'us', 'ap')[i % 3]}.{i % 17}", f"order {i}".encode() * 3,
                   headers=headers)
        clock.advance(1_000_000 if i % 4 else 0)
    for seq in range(5, n, 29):
        js.delete_msg("ORDERS", seq)


def _engine_rows(dd, stream: str) -> list[tuple]:
    rows = []
    for b in lake.iter_stream_batches(str(dd.cluster_path("local")), stream, 0, 1 << 40):
        rows += [(r["seq"], r["subject"], r["ts"], r["headers"], r["data"])
                 for r in b.to_pylist()]
    return rows


def _parquet_rows(path: Path) -> list[tuple]:
    import pyarrow.parquet as pq

    table = pq.read_table(path).sort_by("seq")
    return [(r["seq"], r["subject"], r["ts"], r["headers"], r["data"])
            for r in table.to_pylist()]


def test_mirror_parquet_on_a_standalone_cluster(standalone, tmp_path, dd, js, clock):
    if not JETLINK.exists():
        pytest.skip(f"{JETLINK} is not installed")
    _fill(js, clock)
    src, out = tmp_path / "in", tmp_path / "out"
    lake.export_stream(js, "ORDERS", str(src))
    config = tmp_path / "mirror.json"
    config.write_text(json.dumps({"max_msgs_per_subject": 4}))
    # what the engine's own mirror stores from the same origin
    js.add_stream({"name": "M", "mirror": {"name": "ORDERS"}, "max_msgs_per_subject": 4})
    RP.pump_until_idle(dd, clock)
    want = _engine_rows(dd, "M")

    # one core of the cluster (spark.cores.max): one executor, on one of the two workers
    proc = subprocess.run(
        [str(JETLINK), "--data-dir", str(tmp_path / "cli-data"), "spark", "mirror",
         f"parquet:{src}", f"parquet:{out}", "--config", str(config),
         "--master", standalone, "--conf", "spark.cores.max=1", "--json"],
        env=_env(), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600,
        cwd=tmp_path)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    summary = json.loads(proc.stdout)
    assert summary["rows_out"] == len(want)
    assert summary["output"] == f"parquet:{out}"
    assert _parquet_rows(out) == want
    assert len(want) > 40  # the per-subject limit left something to compare
    meta = json.loads((out / lake.META_FILE).read_text())
    assert meta["state"]["last_seq"] == want[-1][0]


def test_cluster_master_settings(monkeypatch):
    """A cluster master gets the Python of executors; a loopback one the loopback driver."""
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    local = SparkOptions(master="local[2]").settings()
    assert "spark.pyspark.python" not in local
    remote = SparkOptions(master="spark://10.0.0.5:7077").settings()
    assert remote["spark.pyspark.python"] == sys.executable
    assert "spark.driver.host" not in remote
    loop = SparkOptions(master="spark://127.0.0.1:7077",
                        conf=["spark.pyspark.python=/opt/py/bin/python"]).settings()
    assert loop["spark.driver.host"] == "127.0.0.1"
    assert loop["spark.pyspark.python"] == "/opt/py/bin/python"
    assert is_loopback("spark://localhost:7077,127.0.0.2:7078")
    assert not is_loopback("spark://127.0.0.1:7077,spark-b:7077")
    assert not is_loopback("yarn")


def test_job_size_settings(monkeypatch, tmp_path):
    """A small job gets a quick JIT; a large local one more shuffle partitions and memory."""
    from jetlink.core.store import DataDir
    from jetlink.sparkops import session as S

    monkeypatch.delenv("JETLINK_SPARK_JIT", raising=False)
    assert S.jit_options(SparkOptions(expected_rows=10_000)) == [S.QUICK_JIT]
    assert S.jit_options(SparkOptions(expected_rows=5_000_000)) == []
    assert S.jit_options(SparkOptions()) == []  # unknown size: the full JIT
    assert S.jit_options(SparkOptions(master="spark://h:7077", expected_rows=10)) == [S.QUICK_JIT]
    monkeypatch.setenv("JETLINK_SPARK_JIT", "quick")
    assert S.jit_options(SparkOptions()) == [S.QUICK_JIT]
    small = SparkOptions(expected_rows=10_000).settings()
    assert small["spark.sql.shuffle.partitions"] == "4"
    assert "spark.driver.memory" not in small
    big = SparkOptions(expected_rows=5_000_000).settings()
    assert big["spark.sql.shuffle.partitions"] == "50"
    assert int(big["spark.driver.memory"].rstrip("m")) >= 1024
    mine = SparkOptions(expected_rows=5_000_000, conf=["spark.driver.memory=2g"]).settings()
    assert mine["spark.driver.memory"] == "2g"

    dd = DataDir(tmp_path / "data")
    from jetlink.core.clock import ManualClock
    from jetlink.core.jetstream import JetStream

    js = JetStream(dd.open("local"), ManualClock())
    js.add_stream({"name": "S", "subjects": ["s.>"]})
    for i in range(7):
        js.publish(f"s.{i}", b"x")
    lake.export_stream(js, "S", str(tmp_path / "lake"))
    assert S.input_rows_hint(["store:S"], dd, "local") == 7
    assert S.input_rows_hint(["S", f"parquet:{tmp_path / 'lake'}"], dd, "local") == 14
    assert S.input_rows_hint(["store:NOPE"], dd, "local") is None
    assert S.input_rows_hint([f"parquet:{tmp_path / 'none'}"], dd, "local") is None
    dd.close()


def test_cds_archives_are_checked(monkeypatch, tmp_path):
    """Flags to make an archive when there is none (or a damaged one), to use it when its
    size is the one recorded."""
    from jetlink.sparkops import session as S

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    plan = S.ClassDataSharing.plan()
    if plan is None:
        pytest.skip("no Java runtime with CDS archives here")
    if plan.dynamic:
        assert "-XX:+AutoCreateSharedArchive" in plan.driver_flags
        return
    assert any(f.startswith("-XX:ArchiveClassesAtExit=") for f in plan.driver_flags)
    assert plan.driver_archive.parent == tmp_path / "cache" / "jetlink"
    # a finished archive is kept with its size; a truncated one is made again
    plan.driver_tmp.write_bytes(b"x" * 100)
    S.ClassDataSharing._promote(plan.driver_tmp, plan.driver_archive)
    again = S.ClassDataSharing.plan()
    assert f"-XX:SharedArchiveFile={plan.driver_archive}" in again.driver_flags
    plan.driver_archive.chmod(0o600)
    plan.driver_archive.write_bytes(b"x" * 50)
    third = S.ClassDataSharing.plan()
    assert any(f.startswith("-XX:ArchiveClassesAtExit=") for f in third.driver_flags)
    third.discard()
    assert not plan.driver_archive.exists()


def test_archives_of_other_installations_are_not_kept_forever(tmp_path):
    """Each set of archives is about 200 MB: besides the current one, only the most recently
    used other set stays (tests/test_spark_cds.py has the rest)."""

    from jetlink.sparkops import session as S

    folder = tmp_path / "cache"
    folder.mkdir()
    stems = [f"cds-spark-4.3.0-java17-{k * 4}" for k in ("aaaa", "bbbb", "cccc", "dddd")]
    for age, stem in enumerate(stems):  # aaaa the newest ... dddd the oldest
        for part in ("driver.jsa", "driver.jsa.size", "launcher.jsa", "launcher.jsa.size"):
            f = folder / f"{stem}-{part}"
            f.write_bytes(b"x")
            os.utime(f, (1_000_000 - age * 100, 1_000_000 - age * 100))
    (folder / f"{stems[3]}-driver.jsa.123.tmp").write_bytes(b"x")  # being written: left
    S.ClassDataSharing._keep_recent(folder, stems[2])  # the current one is cccc (older)
    left = sorted({f.name.split(".jsa")[0].rsplit("-", 1)[0] for f in folder.iterdir()
                   if not f.name.endswith(".tmp")})
    assert left == [stems[0], stems[2]]  # the current set and the newest other one
    assert len(list(folder.glob(f"{stems[0]}-*"))) == 4
    assert (folder / f"{stems[3]}-driver.jsa.123.tmp").exists()


def test_each_command_has_its_driver_log_and_a_user_keeps_the_newest(monkeypatch, tmp_path):
    """A driver log per command ($TMPDIR/jetlink-spark-<uid>-<pid>.log: two jobs at once do
    not truncate each other's); the user's oldest beyond LOGS_KEPT removed at a start,
    another user's left."""
    import os
    import tempfile

    from jetlink.sparkops import session

    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    uid = os.getuid()
    mine = session.jvm_log_path()
    assert mine == tmp_path / f"jetlink-spark-{uid}-{os.getpid()}.log"
    for i in range(15):  # older commands' logs, the oldest first
        p = tmp_path / f"jetlink-spark-{uid}-{100000 + i}.log"
        p.write_text("x")
        os.utime(p, (1_000_000 + i, 1_000_000 + i))
    other = tmp_path / f"jetlink-spark-{uid + 1}-5.log"
    other.write_text("someone else's")
    session.prune_logs()
    left = sorted(p.name for p in tmp_path.glob(f"jetlink-spark-{uid}-*.log"))
    assert left == [f"jetlink-spark-{uid}-{100000 + i}.log"
                    for i in range(15 - (session.LOGS_KEPT - 1), 15)]
    assert other.exists()
