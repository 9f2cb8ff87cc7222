"""`jetlink bench all`, `bench startup`, `bench validate --process`, `bench link`'s pairs: the
goals judged from the documents, the pairs alternating, the docs summary fresh."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jetlink.cli.main import build_app
from jetlink.core.bench.engine import bench_link, bench_startup, bench_validate_process, pairs
from jetlink.core.bench.suite import GOALS, judge

ROOT = Path(__file__).resolve().parent.parent


def test_pairs_alternate_which_side_goes_first():
    order = []
    got = pairs(4, lambda: order.append("a") or "A", lambda: order.append("b") or "B")
    assert got == [("A", "B")] * 4
    assert order == ["a", "b", "b", "a", "a", "b", "b", "a"]


@pytest.mark.parametrize(("bench", "doc", "what", "measured", "met"), [
    ("transform", {"subjects_per_sec": 775_973}, "subject transforms", 775_973, True),
    ("transform", {"subjects_per_sec": 200_000}, "subject transforms", 200_000, False),
    ("replicate", {"mirror_vs_server_median": 2.33, "source_vs_server_median": 11.9},
     "mirror catch-up vs nats-server, same count", 2.33, False),
    ("link", {"ratio": 0.61, "sync_failover_seconds": 0.18},
     "offset sync + failover of 10,000 groups x 8 partitions", 0.18, True),
    ("live-dr", {"apply": {"median_s": 1.18}, "failover": {"median_s": 0.61}},
     "failover placing 200 consumers", 0.61, True),
    ("live", {"publish": {"median_ratio": 1.22}, "read": {"median_ratio": 0.7}},
     "`stream view` vs plain nats-py", 0.7, False),
    ("dr", {"failback": {"ratio_median": 1.4}},
     "failback of 100 streams x 10k vs a plain copy of the same data (median of pairs)", 1.4,
     True),
    ("dr", {"failback": {"ratio_median": 5.83}},
     "failback of 100 streams x 10k vs a plain copy of the same data (median of pairs)", 5.83,
     False),
])
def test_goals_are_read_from_the_documents(bench, doc, what, measured, met):
    [row] = [g for g in judge({bench: doc}) if g["what"] == what]
    assert (row["measured"], row["met"]) == (measured, met)


def test_goals_not_measured_say_why():
    rows = judge({"spark": {"skipped": "pyspark is not installed"}, "kv": {"gets": 1}})
    spark = [g for g in rows if g["bench"] == "spark"]
    assert all(g["met"] is None and g["note"] == "pyspark is not installed" for g in spark)
    kv = [g for g in rows if g["bench"] == "kv"]
    assert all(g["met"] is None and g["note"].startswith("figure not in the document")
               for g in kv)
    assert {g.bench for g in GOALS} >= {"transform", "replicate", "spark", "startup"}


def test_bench_all_runs_the_benchmarks_as_processes_and_judges():
    result = CliRunner().invoke(build_app(), ["bench", "all", "--only", "startup", "-j"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {"machine", "benchmarks", "goals"}
    assert doc["machine"]["cpus"] >= 1
    startup = doc["benchmarks"]["startup"]
    assert startup["_command"] == "jetlink bench startup --runs 10"
    assert len(startup["help_ms"]) == 10
    measured = {g["what"]: g for g in doc["goals"] if g["bench"] == "startup"}
    assert all(g["measured"] is not None for g in measured.values())
    assert all(g["met"] is None for g in doc["goals"] if g["bench"] != "startup")


def test_bench_all_refuses_an_unknown_name():
    result = CliRunner().invoke(build_app(), ["bench", "all", "--only", "nope"])
    assert result.exit_code == 2
    assert "invalid value for --only/--skip: 'nope': a benchmark is one of transform" \
        in result.output


def test_bench_startup_and_validate_process_time_whole_processes():
    doc = bench_startup(1)
    assert doc["runs"] == 1 and doc["kv_get_ms_median"] > 0 and len(doc["validate_ms"]) == 1
    # the bare interpreter, timed in the same rounds: each command's per-run ratio to it
    assert len(doc["python_ms"]) == 1 and doc["python_ms_median"] > 0
    ratio = doc["kv_get_ms"][0] / doc["python_ms"][0]  # of the printed (rounded) times
    assert abs(doc["kv_get_vs_python_runs"][0] - ratio) < 0.1
    assert doc["kv_get_vs_python"] > 0 and doc["kv_get_cpu_vs_python"] > 0
    assert isinstance(doc["bytecode"], bool)
    doc = bench_validate_process(200, 1)
    assert doc["configs"] == 200 and len(doc["seconds"]) == 1


def test_bench_link_alternates_with_the_raw_copy_and_counts():
    doc = bench_link(4_000, 4, groups=10, runs=2)
    assert doc["copied"] == 4_000 and len(doc["ratios"]) == 2
    assert doc["ratio"] == pytest.approx(sorted(doc["ratios"])[0] / 2 + sorted(doc["ratios"])[1]
                                         / 2, abs=0.002)


def test_docs_summary_is_the_recorded_run():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "benchmarks_md.py"),
                           "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_bench_dr_checks_and_fails_back_against_a_copy_and_counts():
    result = CliRunner().invoke(build_app(), ["bench", "dr", "--mirrors", "12", "--streams", "3",
                                              "--messages", "300", "--runs", "2", "-j"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    # (every mirror of the one origin on one side: each a WARNING by the one-primary rule,
    # which a region failover would refuse; the bench measures the check over them all)
    assert (doc["check"]["mirrors"], doc["check"]["status"]) == (12, "WARNING")
    fb = doc["failback"]
    # 100 messages and 10 new ones per promoted stream: the old origins keep their 100
    assert (fb["streams"], fb["messages"], fb["tail_per_stream"], fb["runs"]) == (3, 330, 10, 2)
    assert (fb["reused"], fb["copied"], fb["new_per_stream"]) == (300, 30, 10)
    assert len(fb["failback_s"]) == len(fb["copy_s"]) == len(fb["ratios"]) == 2
    # each ratio is its pair's failback / copy (the times are printed rounded to 1 ms)
    for r, a, b in zip(fb["ratios"], fb["failback_s"], fb["copy_s"], strict=True):
        assert (a - 0.0005) / (b + 0.0005) - 0.005 <= r <= (a + 0.0005) / (b - 0.0005) + 0.005


def test_benchmarks_start_their_jetlink_processes_apart_from_the_users_settings(
        tmp_path, monkeypatch):
    """A selected context, JETLINK_CLUSTER and NATS_URL of the user's shell do not reach the
    processes a benchmark starts (core/bench/children.py): they time their own work."""
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    made = CliRunner().invoke(build_app(), [
        "context", "add", "prod", "--data-dir", str(tmp_path / "elsewhere"), "--cluster",
        "east", "--select"])
    assert made.exit_code == 0, made.output
    monkeypatch.setenv("JETLINK_CLUSTER", "nowhere")
    monkeypatch.setenv("NATS_URL", "nats://127.0.0.1:1")
    doc = bench_startup(1)
    assert doc["kv_get_ms_median"] > 0
    r = CliRunner().invoke(build_app(), ["bench", "kv", "--keys", "200", "--puts", "10",
                                         "--gets", "10", "--cli-runs", "1", "-j"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["cli_get_runs"] == 1
    assert not (tmp_path / "elsewhere").exists()


def test_bench_spark_checks_its_master_before_a_jvm_starts():
    """--master of bench spark: the form every spark verb checks, exit 2 naming it, nothing
    started (it was Spark's SparkException from a JVM)."""
    res = CliRunner().invoke(build_app(), ["bench", "spark", "--master", "bogus", "--messages",
                                           "10", "--e2e-messages", "0"], prog_name="jetlink")
    assert res.exit_code == 2, res.output
    assert "--master 'bogus': expected local, local[N]" in res.output
    assert "SparkException" not in res.output


def test_bench_all_help_names_each_benchmark_as_only_and_skip_take_it():
    """The help of bench all lists the benchmarks by the names --only / --skip take, every
    one of them, in the order they run."""
    import re

    from jetlink.cli.bench import all_
    from jetlink.core.bench.suite import BENCHES

    text = " ".join((all_.__doc__ or "").split())
    listed = re.search(r"other \(([^:]+): the names --only and --skip take", text)
    assert listed is not None, text
    assert [n.strip() for n in listed.group(1).split(",")] == list(BENCHES)
