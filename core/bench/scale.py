"""``jetlink bench scale``: how cost grows with size (goal: nothing super-linear).

Four series, each run at three sizes with the code of the other benchmarks (building is
never timed; every step asserts the count it moved):

- ``mirror``: a mirror's catch-up of an origin of 10k, 100k and 1M messages (engine.py
  :func:`~.engine.bench_replicate`, mirror only): microseconds per message;
- ``check``: ``dr check`` of 100, 1,000 and 10,000 mirrors (dr.py
  :func:`~.dr.bench_dr_check`): milliseconds per mirror;
- ``failover``: a region's failover (``dr failover --from west``, core/dr/region.py
  ``plan_region`` + ``carry_out``) of 10, 100 and 1,000 mirrors (region.py
  :func:`~.region.bench_region_failover`): milliseconds per mirror;
- ``filtered``: a mirror filtered on ``orders.*.new`` of an origin of 1k, 10k and 100k
  subjects (half of them selected): its catch-up of two messages per subject, then how it
  follows a tenth as many new messages, 1,000 at a time (:func:`bench_filtered`):
  microseconds per origin subject.

The figure of each series is the ratio of its per-unit cost at the largest size to that at
the smallest (goal: at most :data:`GOAL_RATIO`). :func:`scale_svg` draws the per-unit costs
(relative to the smallest size's) against the size on a log axis, one line per series.

Standard library only.
"""

from __future__ import annotations

import math
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape

__all__ = ["GOAL_RATIO", "SERIES", "Series", "bench_filtered", "bench_scale", "scale_svg"]

#: the goal of every series: per-unit cost at the largest size / at the smallest
GOAL_RATIO = 1.5


@dataclass(frozen=True)
class Series:
    """One series: what grows, the unit of its cost, its default sizes, how one size runs
    (``run(size, runs, data_dir)`` -> (the median of ``runs`` timed seconds, the count moved
    at that size, asserted))."""

    name: str
    title: str
    size_unit: str
    cost_unit: str
    per_second: float  # cost units in one second
    sizes: tuple[int, ...]
    run: Callable[[int, int, str | None], tuple[float, int]]


def _each(runs: int, one: Callable[[], tuple[float, int]]) -> tuple[float, int]:
    """``one()`` ``runs`` times (each on a world of its own): the median seconds, and the
    count, the same every run (else RuntimeError)."""
    got = [one() for _ in range(runs)]
    counts = {c for _, c in got}
    if len(counts) != 1:
        raise RuntimeError(f"bench scale: the runs moved {sorted(counts)}")
    return statistics.median(s for s, _ in got), counts.pop()


def _mirror(size: int, runs: int, data_dir: str | None) -> tuple[float, int]:
    from .engine import bench_replicate

    def one() -> tuple[float, int]:
        doc = bench_replicate(size, kinds=("mirror",), data_dir=data_dir)  # asserts the count
        rate = doc["mirror_msgs_per_sec"]  # less rounded than mirror_seconds at small sizes
        return (size / rate if rate else float(doc["mirror_seconds"]),
                int(doc["mirror_messages"]))

    return _each(runs, one)


def _check(size: int, runs: int, data_dir: str | None) -> tuple[float, int]:
    from .dr import bench_dr_check

    # one world, ``runs`` checks of it; each asserts the mirrors it checked
    doc = bench_dr_check(size, runs=runs, data_dir=data_dir)
    rate = doc["mirrors_per_s"]  # less rounded than median_s at small sizes
    return (size / rate if rate else float(doc["median_s"])), int(doc["mirrors"])


def _failover(size: int, runs: int, data_dir: str | None) -> tuple[float, int]:
    from .region import bench_region_failover

    def one() -> tuple[float, int]:
        doc = bench_region_failover(size, data_dir=data_dir)  # asserts every object done
        return float(doc["seconds"]), int(doc["objects"])

    return _each(runs, one)


def _filtered(size: int, runs: int, data_dir: str | None) -> tuple[float, int]:
    def one() -> tuple[float, int]:
        doc = bench_filtered(size, data_dir=data_dir)  # asserts what the mirror holds
        return float(doc["seconds"]), int(doc["subjects"])

    return _each(runs, one)


SERIES: dict[str, Series] = {s.name: s for s in (
    Series("mirror", "mirror catch-up", "messages", "µs/message", 1e6,
           (10_000, 100_000, 1_000_000), _mirror),
    Series("check", "dr check", "mirrors", "ms/mirror", 1e3, (100, 1_000, 10_000), _check),
    Series("failover", "region failover", "mirrors", "ms/mirror", 1e3, (10, 100, 1_000),
           _failover),
    Series("filtered", "filtered mirror", "origin subjects", "µs/subject", 1e6,
           (1_000, 10_000, 100_000), _filtered),
)}


def bench_filtered(subjects: int, *, per_subject: int = 2, size: int = 64,
                   step: int = 1_000, data_dir: str | None = None) -> dict[str, Any]:
    """A mirror filtered on ``orders.*.new`` (core/replication.py) of an origin of
    ``subjects`` subjects, ``orders.<i>.new`` for even ``i`` and ``orders.<i>.old`` for odd
    ones, messages of ``size`` bytes on them in turn. Timed: its catch-up of ``per_subject``
    messages per subject, then how it follows ``subjects // 10`` new messages (at least
    one) arriving ``step`` at a time, the pump run until idle after each (as ``jetlink pub``
    and ``replicate --follow`` run it; publishing is not timed). The mirror must hold
    exactly the messages of the ``.new`` subjects after each phase."""
    from ..clock import SystemClock
    from ..jetstream import JetStream
    from ..replication import pump_until_idle
    from ..store import DataDir
    from .engine import publish_spread

    if subjects <= 0 or per_subject <= 0 or size < 0 or step <= 0:
        raise ValueError("subjects, per_subject and step must be positive, size not negative")
    tmp = tempfile.mkdtemp(prefix="jetlink-bench-scale-", dir=data_dir)
    clock = SystemClock()
    names = [f"orders.{i}.{'old' if i % 2 else 'new'}" for i in range(subjects)]
    payload = os.urandom(size)

    def selected(upto: int) -> int:  # messages 0..upto-1 on a .new subject
        whole, rest = divmod(upto, subjects)
        return whole * ((subjects + 1) // 2) + (rest + 1) // 2

    def timed_pump(total: int) -> float:
        t0 = time.perf_counter()
        pump_until_idle(dd, clock)
        seconds = time.perf_counter() - t0
        held = int(js.stream_info("FILTERED").state.messages)
        if held != selected(total):
            raise RuntimeError(f"bench scale: the filtered mirror holds {held:,} messages "
                               f"after {total:,} in its origin, not {selected(total):,}")
        return seconds

    try:
        dd = DataDir(os.path.join(tmp, "data"))
        js = JetStream(dd.open("local"), clock)
        js.add_stream({"name": "ORDERS", "subjects": ["orders.>"]})
        total = subjects * per_subject
        publish_spread(js, "ORDERS", total, names, payload)
        js.add_stream({"name": "FILTERED", "mirror": {"name": "ORDERS",
                                                      "filter_subject": "orders.*.new"}})
        catch_up = timed_pump(total)
        follow = 0.0
        new = max(1, subjects // 10)
        for k in range(0, new, step):
            n = min(step, new - k)
            publish_spread(js, "ORDERS", n, names, payload, first=total)
            total += n
            follow += timed_pump(total)
        dd.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"subjects": subjects, "messages": total, "mirrored": selected(total),
            "catch_up_seconds": round(catch_up, 4), "new_messages": new, "step": step,
            "follow_seconds": round(follow, 4), "seconds": round(catch_up + follow, 4)}


def _point(s: Series, size: int, runs: int, data_dir: str | None) -> dict[str, Any]:
    """``runs`` measurements of ``s`` at ``size``: the median seconds, its per-unit cost."""
    median, count = s.run(size, runs, data_dir)
    if count != size:
        raise RuntimeError(f"bench scale {s.name}: {count:,} {s.size_unit} moved at size "
                           f"{size:,}")
    return {"size": size, "count": size, "seconds": round(median, 4),
            "cost": round(median / size * s.per_second, 4)}


def bench_scale(only: Sequence[str] = (), sizes: Sequence[int] = (), *, runs: int = 1,
                data_dir: str | None = None,
                on_point: Callable[[str, int], None] | None = None) -> dict[str, Any]:
    """Each series of :data:`SERIES` (``only`` those, in their order) at its sizes
    (``sizes`` instead: the same for every series; at least two), ``runs`` measurements per
    size (their median): ``{"runs", "goal_ratio", "series": {name: {"title", "size_unit",
    "cost_unit", "points": [{"size", "count", "seconds", "cost"}], "ratio"}}}``;
    ``on_point(series, size)`` is called before each size runs."""
    unknown = [n for n in only if n not in SERIES]
    if unknown:
        raise ValueError(f"unknown series {unknown[0]!r}: one of {', '.join(SERIES)}")
    if sizes and (len(set(sizes)) < 2 or min(sizes) <= 0):
        raise ValueError("sizes: at least two different positive sizes")
    if runs <= 0:
        raise ValueError("runs must be positive")
    out: dict[str, Any] = {"runs": runs, "goal_ratio": GOAL_RATIO, "series": {}}
    for s in SERIES.values():
        if only and s.name not in only:
            continue
        points = []
        for size in sorted(set(sizes or s.sizes)):
            if on_point is not None:
                on_point(s.name, size)
            points.append(_point(s, size, runs, data_dir))
        first, last = points[0]["cost"], points[-1]["cost"]
        out["series"][s.name] = {
            "title": s.title, "size_unit": s.size_unit, "cost_unit": s.cost_unit,
            "points": points, "ratio": round(last / first, 3) if first else None}
    return out


# -- the plot -----------------------------------------------------------------------------------

_W, _H = 800, 420
_LEFT, _RIGHT, _TOP, _BOTTOM = 70, 310, 40, 60
_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def _ticks_log(lo: float, hi: float) -> list[int]:
    return [10 ** e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]


def _size_text(n: float) -> str:
    for div, suffix in ((1_000_000, "M"), (1_000, "k")):
        if n >= div:
            return f"{n / div:g}{suffix}"
    return f"{n:g}"


def scale_svg(doc: dict[str, Any]) -> str:
    """An SVG document of :func:`bench_scale`'s ``doc``: per-unit cost relative to the smallest
    size (y, linear, the goal as a dashed line) against the size (x, log), one polyline per
    series, the legend naming each series with its costs at the smallest and largest size."""
    series = [(name, s) for name, s in doc["series"].items() if s["points"] and
              s["points"][0]["cost"]]
    sizes = [p["size"] for _, s in series for p in s["points"]] or [1, 10]
    xt = _ticks_log(min(sizes), max(sizes))
    if len(xt) < 2:
        xt = [xt[0], xt[0] * 10]
    rel = [p["cost"] / s["points"][0]["cost"] for _, s in series for p in s["points"]]
    goal = float(doc.get("goal_ratio", GOAL_RATIO))
    ytop = max([goal * 1.2, *rel])
    ytop = math.ceil(ytop * 2) / 2
    pw, ph = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM
    lx0, lx1 = math.log10(xt[0]), math.log10(xt[-1])

    def x(v: float) -> float:
        return _LEFT + (math.log10(v) - lx0) / (lx1 - lx0) * pw

    def y(v: float) -> float:
        return _TOP + ph - v / ytop * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_W} {_H}" '
           f'width="{_W}" height="{_H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{_W}" height="{_H}" fill="white"/>',
           f'<text x="{_LEFT}" y="22" font-size="14" font-weight="bold">'
           f'{escape("jetlink bench scale: per-unit cost vs size (1 = the smallest size)")}</text>',
           f'<rect x="{_LEFT}" y="{_TOP}" width="{pw}" height="{ph}" fill="none" '
           'stroke="#888"/>']
    for t in xt:
        out.append(f'<line x1="{x(t):.1f}" y1="{_TOP}" x2="{x(t):.1f}" y2="{_TOP + ph}" '
                   f'stroke="#ddd"/><text x="{x(t):.1f}" y="{_TOP + ph + 16}" '
                   f'text-anchor="middle">{_size_text(t)}</text>')
    step = 0.5 if ytop <= 4 else math.ceil(ytop / 8)
    v = 0.0
    while v <= ytop + 1e-9:
        out.append(f'<line x1="{_LEFT}" y1="{y(v):.1f}" x2="{_LEFT + pw}" y2="{y(v):.1f}" '
                   f'stroke="#eee"/><text x="{_LEFT - 6}" y="{y(v) + 4:.1f}" '
                   f'text-anchor="end">{v:g}</text>')
        v += step
    out.append(f'<line x1="{_LEFT}" y1="{y(goal):.1f}" x2="{_LEFT + pw}" y2="{y(goal):.1f}" '
               f'stroke="#555" stroke-dasharray="6 4"/><text x="{_LEFT + pw - 4}" '
               f'y="{y(goal) - 5:.1f}" text-anchor="end">goal {goal:g}x</text>')
    out.append(f'<text x="{_LEFT + pw / 2}" y="{_H - 18}" text-anchor="middle">size '
               '(messages, mirrors or origin subjects; log scale)</text>')
    out.append(f'<text transform="translate(18 {_TOP + ph / 2}) rotate(-90)" '
               'text-anchor="middle">per-unit cost / at the smallest size</text>')
    out += _lines(series, x, y)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _lines(series: list[tuple[str, dict[str, Any]]], x: Callable[[float], float],
           y: Callable[[float], float]) -> list[str]:
    """Each series' polyline, its points and its legend entry."""
    out = []
    for k, (name, s) in enumerate(series):
        colour = _COLOURS[k % len(_COLOURS)]
        first = s["points"][0]["cost"]
        pts = [(x(p["size"]), y(p["cost"] / first)) for p in s["points"]]
        out.append(f'<polyline data-series="{escape(name)}" fill="none" stroke="{colour}" '
                   'stroke-width="2" points="'
                   + " ".join(f"{px:.1f},{py:.1f}" for px, py in pts) + '"/>')
        out += [f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{colour}"/>'
                for px, py in pts]
        ly = _TOP + 14 + k * 36
        lx = _W - _RIGHT + 16
        last = s["points"][-1]
        out.append(f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 20}" y2="{ly - 4}" '
                   f'stroke="{colour}" stroke-width="2"/><text x="{lx + 26}" y="{ly}">'
                   f'{escape(s["title"])}</text><text x="{lx + 26}" y="{ly + 15}" '
                   f'fill="#555" font-size="11">{escape(_legend(s, first, last))}</text>')
    return out


def _legend(s: dict[str, Any], first: float, last: dict[str, Any]) -> str:
    small = _size_text(s["points"][0]["size"])
    return (f"{first:.3g} {s['cost_unit']} at {small}, {last['cost']:.3g} at "
            f"{_size_text(last['size'])} ({last['cost'] / first:.2f}x)")
