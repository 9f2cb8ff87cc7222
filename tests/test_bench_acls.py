"""`jetlink bench acls` at a tiny size: both figures, their goals beside them, the counts
the bench asserts, the sides alternating; the goals judged from its document."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from jetlink.cli.main import build_app
from jetlink.core.bench.acls import PRINCIPAL, _acls
from jetlink.core.bench.suite import judge, measured_figure


def test_bench_acls_prints_both_figures_beside_their_goals():
    result = CliRunner().invoke(build_app(), ["bench", "acls", "--acls", "40", "--requests",
                                              "10", "--runs", "2", "-j"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    auth, sync = doc["authorization"], doc["sync"]
    assert (auth["acls"], auth["requests_per_side"], auth["runs"]) == (40, 20, 2)
    assert len(auth["plain_s"]) == len(auth["secured_s"]) == len(auth["ratios"]) == 2
    assert auth["goal_ratio"] == 1.05
    assert auth["goal_met"] == (auth["ratio_median"] < 1.05)
    assert auth["authorize_secured_us"] > 0 and auth["authorize_plain_us"] > 0
    assert (sync["acls"], sync["runs"], sync["goal_s"]) == (40, 2, 2.0)
    assert len(sync["sync_s"]) == 2
    # a small run's sub-millisecond times are kept as measured, never rounded to 0
    assert all(x > 0 for x in (*sync["copy_s"], *sync["removal_s"], *sync["sync_s"],
                               *auth["plain_s"], *auth["secured_s"], auth["build_s"]))
    assert sync["goal_met"] == (sync["sync_median_s"] < 2.0)
    rows = [g for g in judge({"acls": doc}) if g["bench"] == "acls"]
    assert [g["measured"] for g in rows] == [measured_figure(auth["ratio_median"]),
                                             measured_figure(sync["sync_median_s"])]


def test_the_human_form_names_each_goal_next_to_its_figure():
    result = CliRunner().invoke(build_app(), ["bench", "acls", "--acls", "5", "--requests",
                                              "3", "--runs", "1"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "authorization (secured / plain):"
    at = [i for i, line in enumerate(lines) if line.startswith("ratio_median:")][0]
    assert lines[at + 1].split() == ["goal_ratio:", "1.05"]
    at = [i for i, line in enumerate(lines) if line.startswith("sync_median_s:")][0]
    assert lines[at + 1].split() == ["goal_s:", "2"]


def test_the_acls_are_distinct_and_let_the_bench_principal_in():
    acls = _acls(10_000)
    assert len(acls) == len(set(acls)) == 10_000
    mine = {(b.resource_type, b.name, b.operation) for b in acls if b.principal == PRINCIPAL}
    assert mine == {("TOPIC", "orders", "WRITE"), ("TOPIC", "orders", "READ"),
                    ("GROUP", "bench", "READ")}
    assert {b.pattern_type for b in acls} == {"LITERAL", "PREFIXED"}
    assert {b.permission for b in acls} == {"ALLOW", "DENY"}
