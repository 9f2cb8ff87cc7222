"""`jetlink bench ...`'s options: values that would measure nothing refused (exit 2, the
option, its value and the rule), repeated --clients measured once, counts with their
singular, metavars, and figures printed without scientific notation. Fast: the measuring
functions are faked where a bench would run."""

from __future__ import annotations

import json
import re

import pytest
from helpers import runner

from jetlink.cli import bench as bench_cli
from jetlink.cli.main import app


def invoke(*args: str):
    return runner.invoke(app, list(args), prog_name="jetlink")


# -- nothing to measure --------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "error"), [
    (["serve", "--rounds", "0", "--pairs", "0"],
     "--rounds 0 and --pairs 0 measure nothing (the request mix and the pairs left out): at "
     "least one must be above 0"),
    (["serve", "--clients", "1", "--rounds", "0", "--pairs", "0"],
     "--clients 1 applies to the request mix, which --rounds 0 leaves out"),
    (["serve", "--clients", "5", "--clients", "1", "--rounds", "0", "--pairs", "20"],
     "--clients 5, 1 applies to the request mix, which --rounds 0 leaves out"),
    (["serve", "--pairs", "0", "--pair-runs", "2"],
     "--pair-runs 2 applies to the pairs, which --pairs 0 leaves out"),
    (["validate", "--runs", "2"],
     "--runs 2 applies to the whole-process timing, which runs only with --process"),
    (["dr", "--streams", "0", "--messages", "10"],
     "--messages 10 applies to the failback part, which --streams 0 leaves out"),
    (["all", "--only", "transform", "--skip", "transform"],
     "--only transform and --skip transform leave no benchmark to run"),
    # options another mode would ignore
    (["dr", "--region", "--mirrors", "10", "--runs", "2"],
     "--mirrors, --runs do not apply with --region (the region's bench takes "
     "--region-streams, --region-kv, --region-consumers, --region-mirrors, "
     "--region-watch-interval)"),
    (["spark", "--master", "local[2]", "--local-cluster", "2"],
     "--master local[2] and --local-cluster 2 name two masters: --local-cluster runs on the "
     "one it starts; give one"),
])
def test_options_that_measure_nothing_are_refused(args, error, monkeypatch):
    def measured(*_a, **_k):  # pragma: no cover - what a refusal must never reach
        raise AssertionError("a bench ran")

    import jetlink.core.bench.serve as serve_mod
    import jetlink.core.bench.suite as suite_mod

    monkeypatch.setattr(serve_mod, "bench_serve", measured)
    monkeypatch.setattr(suite_mod, "bench_all", measured)
    result = invoke("bench", *args)
    assert result.exit_code == 2, result.output
    assert (result.stdout, result.stderr) == ("", f"jetlink: error: {error}\n")
    as_json = invoke("bench", *args, "--json")
    assert as_json.exit_code == 2
    assert json.loads(as_json.stdout) == {"error": {"description": error}}


def test_every_bench_still_accepts_its_parts_alone(monkeypatch):
    """Only what measures nothing is refused: --rounds 0 with pairs, --pairs 0 with rounds,
    --streams 0 of dr without --messages, --process with --runs."""
    import jetlink.core.bench.serve as serve_mod

    seen: list[tuple[tuple[int, ...], int, int]] = []

    def bench_serve(counts, rounds, *, pairs, pair_runs, timeout):
        seen.append((counts, rounds, pairs))
        return {"rounds": rounds, "requests_per_round": 8, "mix": [], "results": [],
                "pairs": None}

    monkeypatch.setattr(serve_mod, "bench_serve", bench_serve)
    assert invoke("bench", "serve", "--rounds", "0", "--pairs", "20", "-j").exit_code == 0
    assert invoke("bench", "serve", "--pairs", "0", "--clients", "5", "--rounds", "5",
                  "-j").exit_code == 0
    assert seen == [((1, 5, 20, 50), 0, 20), ((5,), 5, 0)]


# -- bench serve: --clients once each, counts with their singular ---------------------------------


def test_serve_measures_each_client_count_once_and_says_1_round(monkeypatch):
    import jetlink.core.bench.serve as serve_mod

    seen = []

    def bench_serve(counts, rounds, *, pairs, pair_runs, timeout):
        seen.append(counts)
        return {"rounds": rounds, "requests_per_round": 8, "mix": ["get link", "list mirrors"],
                "results": [{"clients": n, "requests": 8, "ok": 8, "unanswered": 0,
                             "requests_per_sec": 400.0, "p50_ms": 2.1, "p99_ms": 3.5,
                             "max_ms": 3.5, "stop_seconds": 0.12} for n in counts],
                "pairs": None}

    monkeypatch.setattr(serve_mod, "bench_serve", bench_serve)
    result = invoke("bench", "serve", "--clients", "1", "--clients", "1", "--rounds", "1",
                    "--pairs", "0")
    assert result.exit_code == 0, result.output
    assert seen == [(1,)]  # measured once
    assert result.stdout.splitlines()[0] == \
        "1 round of 8 requests per client count (get link, list mirrors)"
    rows = [[c for c in line.split() if c != "│"] for line in result.stdout.splitlines()[1:]]
    assert ["1", "8", "8", "0", "400", "2.1", "3.5", "3.5", "0.12"] in rows
    # the order given is kept, each count once
    invoke("bench", "serve", "--clients", "5", "--clients", "1", "--clients", "5",
           "--rounds", "5", "--pairs", "0", "-j")
    assert seen[-1] == (5, 1)


def test_serve_pairs_line_counts_pairs_with_their_word(monkeypatch):
    import jetlink.core.bench.serve as serve_mod

    def bench_serve(counts, rounds, *, pairs, pair_runs, timeout):
        return {"rounds": rounds, "requests_per_round": 8, "mix": [], "results": [],
                "pairs": {"pairs": pairs, "mix": ["create link", "create mirror"], "runs": [],
                          "one_client_pairs_per_sec": 80.0, "many_clients": 20,
                          "many_clients_pairs_per_sec": 90.0, "ratio_median": 1.125}}

    monkeypatch.setattr(serve_mod, "bench_serve", bench_serve)
    result = invoke("bench", "serve", "--rounds", "0", "--pairs", "20")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "20 pairs per run and client count (create link, create mirror)"
    assert lines[-1] == ("median: 1 client 80.0 pairs/s, 20 clients 90.0 pairs/s, ratio "
                         "1.125")


# -- metavars ------------------------------------------------------------------------------------


def test_every_bench_option_shows_a_metavar_not_a_type():
    names = [c.name for c in bench_cli.bench_app.registered_commands]
    assert "kv" in names and "link" in names
    for name in names:
        result = invoke("bench", name or "", "--help")
        assert result.exit_code == 0, name
        assert "<int range>" not in result.stdout, name
    assert re.search(r"--history N +The bucket's history per key",
                     invoke("bench", "kv", "--help").stdout)
    assert re.search(r"--partitions N +Partitions of the topic",
                     invoke("bench", "link", "--help").stdout)


# -- figures -------------------------------------------------------------------------------------


def test_bench_transform_prints_tiny_seconds_in_plain_decimals(monkeypatch):
    import jetlink.core.bench.transform as transform_mod

    def bench_transform(n):
        return {"subjects": n, "seconds": 3.345e-06, "subjects_per_sec": n / 3.345e-06,
                "src": "orders.*.>", "dest": "ship.>"}

    monkeypatch.setattr(transform_mod, "bench_transform", bench_transform)
    result = invoke("bench", "transform", "--count", "1")
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "subjects:          1\n"
        "seconds:           0.000003345\n"
        "subjects_per_sec:  298,954\n"
        "src:               orders.*.>\n"
        "dest:              ship.>\n"
    )
    # --json keeps the figure as measured
    assert json.loads(invoke("bench", "transform", "--count", "1", "-j").stdout)[
        "seconds"] == 3.345e-06


def test_bench_transform_real_run_has_no_scientific_notation():
    result = invoke("bench", "transform", "--count", "1")
    assert result.exit_code == 0, result.output
    assert re.search(r"^seconds: +0\.\d+$", result.stdout, re.M), result.stdout
    assert "e-" not in result.stdout


@pytest.mark.parametrize(("value", "shown"), [
    (3.345e-06, "0.000003345"), (0.0005, "0.0005"), (0.00012346, "0.0001235"),
    (-0.0002, "-0.0002"), (0.25, 0.25), (0.0, 0.0), (12, 12),
    ([0.0005, 1.5], ["0.0005", 1.5]),
])
def test_readable_figures(value, shown):
    assert bench_cli.readable(value) == shown
