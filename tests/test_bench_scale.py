"""`jetlink bench scale` at tiny sizes: every series' counts asserted and reported, the
per-unit costs and ratios in the JSON document, the SVG plot (core/bench/scale.py); no speed
is asserted."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest
from typer.testing import CliRunner

from jetlink.cli.main import build_app
from jetlink.core.bench.scale import SERIES, Series, _point, bench_filtered, scale_svg

SVG = "{http://www.w3.org/2000/svg}"


def test_bench_scale_reports_every_series_at_each_size_with_its_counts(tmp_path):
    svg = tmp_path / "scale.svg"
    result = CliRunner().invoke(build_app(), [
        "bench", "scale", "--sizes", "10,3", "--svg", str(svg), "-j"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert list(doc) == ["runs", "goal_ratio", "series", "svg"]
    assert (doc["runs"], doc["goal_ratio"], doc["svg"]) == (1, 1.5, str(svg))
    assert list(doc["series"]) == ["mirror", "check", "failover", "filtered"]
    units = {name: (s["title"], s["size_unit"], s["cost_unit"])
             for name, s in doc["series"].items()}
    assert units == {
        "mirror": ("mirror catch-up", "messages", "µs/message"),
        "check": ("dr check", "mirrors", "ms/mirror"),
        "failover": ("region failover", "mirrors", "ms/mirror"),
        "filtered": ("filtered mirror", "origin subjects", "µs/subject")}
    for name, s in doc["series"].items():
        assert list(s) == ["title", "size_unit", "cost_unit", "points", "ratio"], name
        # sizes sorted; the count each step moved (asserted by the bench) is the size
        assert [(p["size"], p["count"]) for p in s["points"]] == [(3, 3), (10, 10)], name
        for p in s["points"]:  # measured and printed, never bounded
            assert all(isinstance(p[k], (int, float)) and p[k] >= 0
                       for k in ("seconds", "cost")), (name, p)
        first, last = s["points"][0]["cost"], s["points"][-1]["cost"]
        if first:  # the ratio of the per-unit costs, as printed
            # (printed to 3 decimals)
            assert s["ratio"] == pytest.approx(last / first, rel=0.01, abs=0.0005), name
    root = ET.fromstring(svg.read_text(encoding="utf-8"))
    lines = root.findall(f"{SVG}polyline")
    assert [ln.get("data-series") for ln in lines] == ["mirror", "check", "failover",
                                                         "filtered"]
    assert all(len(ln.get("points", "").split()) == 2 for ln in lines)


def test_bench_scale_only_runs_the_series_named_and_prints_the_ratio():
    result = CliRunner().invoke(build_app(), [
        "bench", "scale", "--only", "filtered", "--only", "failover", "--sizes", "2,4"])
    assert result.exit_code == 0, result.output
    ratios = [ln for ln in result.stdout.splitlines() if "per-unit cost" in ln]
    # the series in their own order, whatever the order of --only
    found = [re.fullmatch(r"(.*): [0-9.]+x \(goal at most 1\.5x: (met|NOT met)\)", ln)
             for ln in ratios]
    assert [m.group(1) if m else ln for m, ln in zip(found, ratios, strict=True)] == [
        "region failover: per-unit cost at 4 / at 2",
        "filtered mirror: per-unit cost at 4 / at 2"]
    assert "4 origin subjects" in result.stdout and "2 mirrors" in result.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--sizes", "5"], "invalid value for --sizes: '5': at least two different positive "
     "integers, comma-separated (e.g. 100,1000)"),
    (["--sizes", "5,0"], "invalid value for --sizes: '5,0': at least two"),
    (["--sizes", "5,x"], "invalid value for --sizes: '5,x': at least two"),
    (["--only", "nope"], "invalid value for --only: 'nope': a series is one of mirror, check, "
     "failover, filtered"),
])
def test_bench_scale_refuses_bad_options(args, message):
    result = CliRunner().invoke(build_app(), ["bench", "scale", *args])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_filtered_mirror_holds_the_selected_messages_after_each_phase():
    # 7 subjects, .new on the even ones (0, 2, 4, 6): 14 messages then 1 more (on subject 0)
    doc = bench_filtered(7)
    assert {k: doc[k] for k in ("subjects", "messages", "mirrored", "new_messages",
                                "step")} == {
        "subjects": 7, "messages": 15, "mirrored": 9, "new_messages": 1, "step": 1_000}
    # 30 subjects: 60 messages, then 3 more one step at a time (subjects 0, 1, 2)
    doc = bench_filtered(30, step=1)
    assert (doc["messages"], doc["mirrored"], doc["new_messages"]) == (63, 32, 3)


def test_a_step_that_moved_another_count_fails_naming_it():
    wrong = Series("odd", "odd", "messages", "µs/message", 1e6, (1, 2),
                   lambda size, _runs, _dir: (0.1, size - 1))
    with pytest.raises(RuntimeError, match="bench scale odd: 9 messages moved at size 10"):
        _point(wrong, 10, 1, None)


def test_runs_take_the_median_and_the_same_count_each_time():
    from jetlink.core.bench.scale import _each

    got = iter([(0.3, 5), (0.1, 5), (0.2, 5)])
    assert _each(3, lambda: next(got)) == (0.2, 5)
    got = iter([(0.3, 5), (0.1, 4)])
    with pytest.raises(RuntimeError, match=r"bench scale: the runs moved \[4, 5\]"):
        _each(2, lambda: next(got))


def test_svg_plot_is_xml_with_one_polyline_per_series():
    doc = {"goal_ratio": 1.5, "series": {
        "a": {"title": "a < b & c", "size_unit": "messages", "cost_unit": "µs/message",
              "points": [{"size": 10, "cost": 2.0}, {"size": 1_000, "cost": 3.0},
                         {"size": 1_000_000, "cost": 2.5}], "ratio": 1.25},
        "b": {"title": "b", "size_unit": "mirrors", "cost_unit": "ms/mirror",
              "points": [{"size": 100, "cost": 1.0}, {"size": 10_000, "cost": 4.0}],
              "ratio": 4.0}}}
    root = ET.fromstring(scale_svg(doc))
    assert root.tag == f"{SVG}svg"
    lines = root.findall(f"{SVG}polyline")
    assert [ln.get("data-series") for ln in lines] == ["a", "b"]
    pts = [[tuple(map(float, p.split(","))) for p in ln.get("points").split()] for ln in lines]
    assert [len(p) for p in pts] == [3, 2]
    # log x: 10 -> 1k and 1k -> 1M are 2 and 3 decades; both series start at 1 (same y)
    (x0, y0), (x1, _), (x2, _) = pts[0]
    assert (x2 - x1) / (x1 - x0) == pytest.approx(1.5, rel=0.01)
    assert pts[1][0][1] == y0 and pts[1][1][1] < y0  # b's 4x is higher up
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "a < b & c" in texts and "goal 1.5x" in texts
    assert "2 µs/message at 10, 2.5 at 1M (1.25x)" in texts
    assert "1M" in texts and "10" in texts


def test_series_defaults_are_the_sizes_of_the_goal():
    assert {n: s.sizes for n, s in SERIES.items()} == {
        "mirror": (10_000, 100_000, 1_000_000), "check": (100, 1_000, 10_000),
        "failover": (10, 100, 1_000), "filtered": (1_000, 10_000, 100_000)}


def test_bench_all_judges_each_series_ratio():
    from jetlink.core.bench.suite import BENCHES, judge

    assert BENCHES["scale"] == {"args": []}
    doc = {"series": {"mirror": {"ratio": 0.41}, "check": {"ratio": 1.22},
                      "failover": {"ratio": 1.84}, "filtered": {"ratio": 1.5}}}
    rows = [g for g in judge({"scale": doc}) if g["bench"] == "scale"]
    assert [(r["what"].split(",")[0], r["goal"], r["measured"], r["met"]) for r in rows] == [
        ("mirror catch-up", "<= 1.5x", 0.41, True), ("`dr check`", "<= 1.5x", 1.22, True),
        ("a region's failover", "<= 1.5x", 1.84, False),
        ("a filtered mirror", "<= 1.5x", 1.5, True)]
