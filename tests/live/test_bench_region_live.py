"""`jetlink bench dr --region --backend live` at a tiny size, on the two nats-servers it
starts (west the hub, east the leaf: core/live/local.py): failover, fence with west back,
failback with tails and --switch, dr check, dr watch's CPU per interval; the counts it moved
asserted and reported (cli/bench_live_region.py)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from jetlink.cli.main import build_app


@pytest.mark.slow
def test_bench_region_live_reports_what_it_moved():
    result = CliRunner().invoke(build_app(), [
        "bench", "dr", "--region", "--backend", "live", "--region-streams", "3",
        "--region-kv", "1", "--region-consumers", "7", "--region-mirrors", "6",
        "--region-watch-interval", "500ms", "-j"])
    assert result.exit_code == 0, result.output
    d = json.loads(result.stdout)["live"]
    assert {k: d[k] for k in ("backend", "streams", "kv", "objects", "consumers",
                              "tail_per_object")} == {
        "backend": "live", "streams": 3, "kv": 1, "objects": 4, "consumers": 7,
        "tail_per_object": 5}
    assert {k: d["failover"][k] for k in ("objects", "consumers_placed", "goal_s")} == {
        "objects": 4, "consumers_placed": 7, "goal_s": 5.0}
    assert {k: d["fence"][k] for k in ("fenced", "goal_s")} == {"fenced": 4, "goal_s": 2.0}
    assert {k: d["failback"][k] for k in ("objects", "tail_messages", "tail_rows",
                                          "objects_exact", "consumers_back", "goal_s")} == {
        "objects": 4, "tail_messages": 20, "tail_rows": 20, "objects_exact": 4,
        "consumers_back": 7, "goal_s": 30.0}
    assert {k: d["check"][k] for k in ("mirrors", "goal_s")} == {"mirrors": 6, "goal_s": 5.0}
    w = d["watch"]
    assert {k: w[k] for k in ("interval_s", "checks", "objects")} == {
        "interval_s": 0.5, "checks": 3, "objects": 6}
    assert len(w["check_s"]) == 3 and w["cpu_s_per_interval"] == round(w["cpu_s"] / 3, 3)
