"""`jetlink bench serve`'s pairs (a cluster link, then a mirror topic on it, per pair of
requests; 1 and 20 clients): every pair counted and checked afterwards, the ratio of each
run and the goals of `bench all` read from the document."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from jetlink.cli.main import build_app
from jetlink.core.bench.suite import judge


def test_bench_serve_pairs_count_and_check_every_pair():
    result = CliRunner().invoke(build_app(), ["bench", "serve", "--rounds", "0", "--pairs", "20",
                                              "--pair-runs", "2", "-j"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["results"] == []  # --rounds 0: no mix
    pairs = doc["pairs"]
    assert (pairs["pairs"], pairs["mix"]) == (20, ["create link", "create mirror"])
    # the count that goes first alternates run by run
    assert [run["first"] for run in pairs["runs"]] == [1, 20]
    for run in pairs["runs"]:
        one, many = run["results"]
        assert (one["clients"], many["clients"]) == (1, 20)
        for r in (one, many):
            assert (r["pairs"], r["ok"], r["unanswered"], r["wrong_status"], r["missing"]) == \
                (20, 20, 0, [], [])
            assert r["replicated_after_s"] is not None
        assert run["ratio"] == round(many["pairs_per_sec"] / one["pairs_per_sec"], 3)
    assert pairs["ratio_median"] == round(sum(r["ratio"] for r in pairs["runs"]) / 2, 3)
    goals = {g["what"]: g for g in judge({"serve": doc}) if g["bench"] == "serve"}
    assert len(goals) == 2 and all(g["measured"] is not None for g in goals.values())


def test_bench_serve_pairs_must_be_a_multiple_of_the_clients():
    result = CliRunner().invoke(build_app(), ["bench", "serve", "--rounds", "0", "--pairs", "30"])
    assert result.exit_code == 2
    assert "--pairs 30 is not a multiple of 20" in result.output


def test_serve_goals_are_read_from_the_pairs():
    doc = {"pairs": {"one_client_pairs_per_sec": 78.5, "ratio_median": 0.96}}
    rows = {g["what"]: (g["measured"], g["met"]) for g in judge({"serve": doc})
            if g["bench"] == "serve"}
    assert sorted(rows.values()) == [(0.96, False), (78.5, True)]
