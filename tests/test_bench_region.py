"""`jetlink bench dr --region` on the embedded engine at a tiny size: a region's plan,
failover and failback with tails and --switch, the counts it moved asserted and reported
(core/bench/region.py); its options go with --region only."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from jetlink.cli.main import build_app


def test_bench_region_embedded_reports_what_it_moved():
    result = CliRunner().invoke(build_app(), [
        "bench", "dr", "--region", "--backend", "embedded", "--region-streams", "4",
        "--region-kv", "2", "--region-consumers", "9", "-j"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert list(doc) == ["embedded"]
    d = doc["embedded"]
    assert {k: d[k] for k in ("backend", "streams", "kv", "objects", "consumers",
                              "messages_per_object", "writes_per_object",
                              "tail_per_object")} == {
        "backend": "embedded", "streams": 4, "kv": 2, "objects": 6, "consumers": 9,
        "messages_per_object": 100, "writes_per_object": 5, "tail_per_object": 5}
    plan, failover, failback = d["plan"], d["failover"], d["failback"]
    assert {k: plan[k] for k in ("objects", "consumers_to_place", "messages_at_risk",
                                 "goal_s")} == {
        "objects": 6, "consumers_to_place": 9, "messages_at_risk": 0, "goal_s": 2.0}
    assert {k: failover[k] for k in ("objects", "consumers_placed", "promoted_streams",
                                     "promoted_buckets", "goal_s")} == {
        "objects": 6, "consumers_placed": 9, "promoted_streams": 4, "promoted_buckets": 2,
        "goal_s": 10.0}
    # every tail is what west took (5 per object), the round trip holds the 100 messages of
    # the origin and the 5 east took during the outage, the 9 consumers back on west
    assert {k: failback[k] for k in ("objects", "tail_messages", "tail_rows",
                                     "objects_exact", "consumers_back",
                                     "messages_per_object", "goal_s")} == {
        "objects": 6, "tail_messages": 30, "tail_rows": 30, "objects_exact": 6,
        "consumers_back": 9, "messages_per_object": 105, "goal_s": 20.0}
    for step in (plan, failover, failback):  # measured and printed, never bounded
        assert isinstance(step["seconds"], (int, float))


def test_bench_region_human_output_names_each_goal():
    result = CliRunner().invoke(build_app(), [
        "bench", "dr", "--region", "--backend", "embedded", "--region-streams", "2",
        "--region-kv", "1", "--region-consumers", "3"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("region west on the embedded engine: 2 streams + 1 KV buckets "
                               "= 3 mirrors on east, 3 durable consumers (built in ")
    assert [ln.split(":")[0] for ln in lines[1:]] == [
        "  plan (dr failover --from west --dry-run)", "  failover (dr failover --from west)",
        "  failback + switch (dr failback --from west --tail parquet"]
    assert "(goal under 2s: " in lines[1] and lines[1].endswith(
        "3 objects, 3 consumers to place")
    assert "(goal under 10s: " in lines[2] and lines[2].endswith(
        "3 objects, 3 consumers placed")
    assert "(goal under 20s: " in lines[3] and lines[3].endswith(
        "3 objects, tails 15 messages (15 rows), round trip exact for 3, 3 consumers back")


def test_region_options_go_with_region():
    for args in (["--region-streams", "3"], ["--backend", "live"],
                 ["--region-watch-interval", "1s"]):
        result = CliRunner().invoke(build_app(), ["bench", "dr", *args])
        assert result.exit_code == 2
        assert result.stderr == f"jetlink: error: {args[0]} goes with --region (the region's " \
            "failover bench)\n"
