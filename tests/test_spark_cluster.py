"""`jetlink spark source` on a real Spark standalone cluster of two workers on 127.0.0.1
(the suite's, tests/conftest.py spark_standalone: sparkops/cluster.py LocalCluster, a master
and two workers started from the installed pyspark, stopped by PID). The job runs as a
`jetlink` process with its own driver; its tasks run on both workers' executors; what it
stores equals what the pump stores from the same origins."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jetlink.core import lake
from jetlink.core import replication as RP
from jetlink.core.store import DataDir

pytestmark = pytest.mark.spark

JETLINK = Path(sys.executable).with_name("jetlink")


def _rows(dd: DataDir, stream: str) -> list[tuple]:
    out = []
    for b in lake.iter_stream_batches(str(dd.cluster_path("local")), stream, 0, 1 << 40):
        out += [(r["seq"], r["subject"], r["headers"], r["data"]) for r in b.to_pylist()]
    return out


def test_source_job_on_two_workers_equals_the_pump(spark_standalone, tmp_path, clock):
    from jetlink.core.jetstream import JetStream
    from jetlink.sparkops.cluster import spark_env

    if not JETLINK.exists():
        pytest.skip(f"{JETLINK} is not installed")
    data = tmp_path / "data"
    dd = DataDir(data)
    js = JetStream(dd.open("local"), clock)
    for name in ("EU", "US"):
        js.add_stream({"name": name, "subjects": [f"{name.lower()}.>"]})
    for i in range(400):
        origin = "eu" if i % 3 else "us"
        headers = {"Nats-Msg-Id": f"id-{i % 60}"} if i % 5 == 0 else None
        js.publish(f"{origin}.{i % 23}.new", f"order {i}".encode() * 4, headers=headers)
        clock.advance(1_000_000 if i % 4 else 0)
    stored = js.state("EU").messages + js.state("US").messages  # the origins dedupe too
    dd.close()
    cfg = tmp_path / "all.json"
    cfg.write_text(json.dumps({"duplicate_window": 120_000_000_000, "max_msgs_per_subject": 5}))
    cluster = spark_standalone
    assert len([w for w in cluster.state()["workers"] if w["state"] == "ALIVE"]) == 2

    def apps() -> set[str]:
        state = cluster.state()
        return {a["id"] for a in state.get("completedapps", []) + state.get("activeapps", [])}

    before = apps()
    proc = subprocess.run(
        [str(JETLINK), "--data-dir", str(data), "spark", "source", "store:ALL",
         "--from", "store:EU", "--from", "store:US",
         "--transform", "*.>=all.{{wildcard(1)}}.>", "--config", str(cfg),
         "--master", cluster.url, "--conf", "spark.sql.shuffle.partitions=4", "--json"],
        env={**spark_env(), "XDG_CACHE_HOME": str(tmp_path / "cache")},
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert proc.returncode == 0, (proc.stdout, proc.stderr[-3000:])
    summary = json.loads(proc.stdout)
    assert summary["job"] == "source" and summary["rows_in"] == stored
    # the job ran as one application of this cluster (the master may not yet have seen its
    # driver exit: active or completed)
    assert len(apps() - before) == 1, cluster.state()
    used = [w for w in cluster.state()["workers"] if w.get("state") == "ALIVE"]
    assert len(used) == 2
    # the pump alone, from the same origins into a stream of the same config
    dd = DataDir(data)
    try:
        js = JetStream(dd.open("local"), clock)
        ref = js.stream_info("ALL").config.to_json()
        ref["name"] = "REF"
        js.add_stream(ref)
        RP.pump_until_idle(dd, clock)
        got, want = _rows(dd, "ALL"), _rows(dd, "REF")
        assert summary["rows_out"] == len(want) and len(want) > 50
        assert got == want
    finally:
        dd.close()
