"""``jetlink bench all``: every benchmark in one run, the machine described, the goals judged.

Each benchmark runs as its own ``jetlink bench NAME --json`` process (the same command a
person types, so a figure here is the figure of that command), one after the other; their
documents are kept as printed. Then each goal of the project (:data:`GOALS`) is read from
them: met, not met, or not measured (a benchmark skipped or failed; why is kept). The whole is
one JSON document, from which scripts/benchmarks_md.py writes the summary at the top of
docs/benchmarks.md.

Standard library only.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["BENCHES", "GOALS", "Goal", "bench_all", "figure_text", "judge", "machine"]

# name -> the arguments of `jetlink bench NAME` (besides --json); "needs" says what it needs
BENCHES: dict[str, dict[str, Any]] = {
    "transform": {"args": []},
    "validate": {"args": []},
    "validate-process": {"args": ["validate", "--process", "--runs", "5"]},
    "pub": {"args": []},
    "replicate": {"args": ["replicate", "--runs", "3"], "needs": "server"},
    "kv": {"args": []},
    "link": {"args": ["link", "--runs", "3"]},
    "startup": {"args": ["startup", "--runs", "10"]},
    "spark": {"args": ["spark", "--runs", "3"], "needs": "spark"},
    "live": {"args": ["live", "--runs", "3"], "needs": "server"},
    "live-export": {"args": ["live-export", "--runs", "3"], "needs": "server"},
    "live-dr": {"args": ["live-dr", "--runs", "3"], "needs": "server"},
    "acls": {"args": []},
    "demo": {"args": ["demo", "--runs", "3"], "needs": "spark"},
    "batch": {"args": ["batch", "--runs", "3"], "needs": "server"},
    "scale": {"args": []},
    "dr": {"args": ["dr", "--runs", "3"]},
    "serve": {"args": ["serve"]},
}


@dataclass(frozen=True)
class Goal:
    """A goal of the project: which benchmark, what figure (read by ``read``), the rule."""

    bench: str
    what: str
    goal: str
    read: Callable[[dict[str, Any]], float]
    met: Callable[[float], bool]
    unit: str = ""


def _dig(doc: Any, *keys: str) -> Any:
    for k in keys:
        doc = doc[k]
    return doc


def _find(doc: Any, key: str) -> list[Any]:
    """Every value of ``key`` anywhere in ``doc`` (depth first)."""
    out: list[Any] = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k == key:
                out.append(v)
            out += _find(v, key)
    elif isinstance(doc, list):
        for v in doc:
            out += _find(v, key)
    return out


def _scale_ratio(series: str) -> Callable[[dict[str, Any]], float]:
    """``bench scale``'s ratio of ``series`` (per-unit cost at its largest size / smallest)."""
    return lambda d: float(_dig(d, "series", series, "ratio"))


GOALS: tuple[Goal, ...] = (
    Goal("transform", "subject transforms", ">= 300,000 subjects/s",
         lambda d: d["subjects_per_sec"], lambda v: v >= 300_000, "subjects/s"),
    Goal("validate", "10,000 configs validated in-process", "< 2 s",
         lambda d: d["seconds"], lambda v: v < 2, "s"),
    Goal("validate-process", "10,000 configs through `jetlink validate FILE`", "< 2 s",
         lambda d: d["seconds_median"], lambda v: v < 2, "s"),
    Goal("pub", "publish through the engine vs raw SQLite", ">= 0.75x",
         lambda d: d["ratio"], lambda v: v >= 0.75, "x"),
    Goal("replicate", "mirror catch-up vs nats-server, same count", ">= 3x",
         lambda d: d["mirror_vs_server_median"], lambda v: v >= 3, "x"),
    Goal("replicate", "sourced catch-up (transform) vs nats-server, same count", ">= 20x",
         lambda d: d["source_vs_server_median"], lambda v: v >= 20, "x"),
    Goal("kv", "KV puts through the API (pipelined: put_many, as a client's async puts)",
         ">= 20,000 puts/s",
         lambda d: d["pipelined_puts_per_sec"], lambda v: v >= 20_000, "puts/s"),
    Goal("kv", "KV gets through the API", ">= 20,000 gets/s",
         lambda d: d["gets_per_sec"], lambda v: v >= 20_000, "gets/s"),
    Goal("link", "mirror topic catch-up vs raw copy", ">= 0.5x",
         lambda d: d["ratio"], lambda v: v >= 0.5, "x"),
    Goal("link", "offset sync + failover of 10,000 groups x 8 partitions", "< 1 s",
         lambda d: d["sync_failover_seconds"], lambda v: v < 1, "s"),
    Goal("startup", "`jetlink --help`", "< 200 ms",
         lambda d: d["help_ms_median"], lambda v: v < 200, "ms"),
    Goal("startup", "`jetlink kv get`", "< 200 ms",
         lambda d: d["kv_get_ms_median"], lambda v: v < 200, "ms"),
    Goal("startup", "`jetlink validate FILE` (one stream)", "< 200 ms",
         lambda d: d["validate_ms_median"], lambda v: v < 200, "ms"),
    Goal("startup", "`jetlink kv get` vs the bare interpreter (median of per-run ratios)",
         "<= 3x", lambda d: d["kv_get_vs_python"], lambda v: v <= 3, "x"),
    Goal("spark", "Spark source job vs plain Parquet copy (median of pairs)", "<= 1.3x",
         lambda d: (_find(d, "ratio_median") or _find(d, "ratio"))[0], lambda v: v <= 1.3, "x"),
    Goal("spark", "`jetlink spark mirror` of 10,000 messages, JVM start included", "< 10 s",
         lambda d: _find(d, "e2e_seconds")[0], lambda v: v < 10, "s"),
    Goal("live", "`pub --count` vs plain nats-py", ">= 0.8x",
         lambda d: _dig(d, "publish", "median_ratio"), lambda v: v >= 0.8, "x"),
    Goal("live", "`stream view` vs plain nats-py", ">= 0.8x",
         lambda d: _dig(d, "read", "median_ratio"), lambda v: v >= 0.8, "x"),
    Goal("live-export", "`stream export` vs a plain nats-py ordered consumer", ">= 0.8x",
         lambda d: d["median_ratio"], lambda v: v >= 0.8, "x"),
    Goal("live-dr", "apply of 1,000 streams to a live server", "< 15 s",
         lambda d: _dig(d, "apply", "median_s"), lambda v: v < 15, "s"),
    Goal("live-dr", "failover placing 200 consumers", "< 3 s",
         lambda d: _dig(d, "failover", "median_s"), lambda v: v < 3, "s"),
    Goal("acls", "produce / consume authorized against 10,000 ACLs vs no authorizer",
         "< 1.05x", lambda d: _dig(d, "authorization", "ratio_median"),
         lambda v: v < 1.05, "x"),
    Goal("acls", "ACL sync of 10,000 ACLs (copy + removal pass)", "< 2 s",
         lambda d: _dig(d, "sync", "sync_median_s"), lambda v: v < 2, "s"),
    Goal("batch", "atomic batches of 1,000, engine vs nats-server batches/s (median of pairs)",
         ">= 1.0x", lambda d: d["median_ratio"], lambda v: v >= 1.0, "x"),
    Goal("demo", "the drill (`jetlink demo`, a whole process, median)", "<= 30 s",
         lambda d: d["seconds_median"], lambda v: v <= 30, "s"),
    *(Goal("scale", f"{what}: per-unit cost at the largest size / at the smallest",
           "<= 1.5x", _scale_ratio(series), lambda v: v <= 1.5, "x")
      for series, what in (("mirror", "mirror catch-up, 10k to 1M messages"),
                           ("check", "`dr check`, 100 to 10,000 mirrors"),
                           ("failover", "a region's failover, 10 to 1,000 mirrors"),
                           ("filtered", "a filtered mirror, 1k to 100k origin subjects"))),
    Goal("dr", "failback of 100 streams x 10k vs a plain copy of the same data (median of "
         "pairs)", "<= 2.5x", lambda d: _dig(d, "failback", "ratio_median"),
         lambda v: v <= 2.5, "x"),
    Goal("serve", "`jetlink serve`: a cluster link + a mirror topic created per pair of "
         "requests, 1 client", ">= 50 pairs/s",
         lambda d: _dig(d, "pairs", "one_client_pairs_per_sec"), lambda v: v >= 50, "pairs/s"),
    Goal("serve", "`jetlink serve` pairs: 20 clients in total vs 1 client (median of runs)",
         ">= 1x", lambda d: _dig(d, "pairs", "ratio_median"), lambda v: v >= 1, "x"),
)


def figure_text(value: float, unit: str) -> str:
    """A measured figure as the goal tables show it (``775,973 subjects/s``, ``2.33x``)."""
    shown = f"{value:,.0f}" if value >= 100 else f"{value:,.3g}"
    return f"{shown}x" if unit == "x" else f"{shown} {unit}".strip()


def judge(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Each goal read from ``results`` (bench name -> its document, or ``{"skipped": why}``
    / ``{"failed": why}``): ``{bench, what, goal, measured, unit, met}``; ``met`` None when
    not measured."""
    out = []
    for g in GOALS:
        doc = results.get(g.bench)
        row: dict[str, Any] = {"bench": g.bench, "what": g.what, "goal": g.goal,
                               "unit": g.unit, "measured": None, "met": None}
        if not isinstance(doc, dict) or "skipped" in doc or "failed" in doc:
            why = (doc or {}).get("skipped") or (doc or {}).get("failed") or "not run"
            row["note"] = str(why)
        else:
            try:
                value = float(g.read(doc))
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                row["note"] = f"figure not in the document ({exc!r})"
            else:
                row["measured"] = measured_figure(value)
                row["met"] = bool(g.met(value))
        out.append(row)
    return out


def _first_line(cmd: list[str]) -> str:
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "not found"
    text = (res.stdout or res.stderr).strip().splitlines()
    return text[0] if text else "not found"


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    mem = ""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            kib = int(f.readline().split()[1])
        mem = f"{kib / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    server = os.path.join(os.path.dirname(sys.executable), "nats-server")
    return {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cpus": os.cpu_count(),
        "memory": mem,
        "system": f"{platform.system()} {platform.release()} {platform.machine()}",
        "python": platform.python_version(),
        "java": _first_line(["java", "-version"]),
        "nats_server": _first_line([server, "--version"]) if os.path.exists(server)
        else "not installed",
        "load_average_start": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


def measured_figure(value: float) -> float:
    """A goal's figure as the judgement shows it: 3 decimals, a figure under 0.001 to 4
    significant digits (a sub-millisecond time is kept, never 0)."""
    return round(value, 3) if abs(value) >= 0.001 or not value else float(f"{value:.4g}")


def bench_all(jetlink: list[str], *, only: list[str] | None = None,
              skip: list[str] | None = None, have: dict[str, str | None] | None = None,
              on_start: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the benchmarks (``only`` those / not those in ``skip``) as ``jetlink ...``
    processes; ``have``: what is missing for a benchmark's needs (``{"server": why or None,
    "spark": why or None}``). Returns ``{machine, benchmarks, goals}``."""
    have = have or {}
    doc: dict[str, Any] = {"machine": machine(), "benchmarks": {}}
    for name, spec in BENCHES.items():
        if only and name not in only:
            continue
        if skip and name in skip:
            doc["benchmarks"][name] = {"skipped": "--skip"}
            continue
        missing = have.get(spec.get("needs", ""))
        if missing:
            doc["benchmarks"][name] = {"skipped": missing}
            continue
        if on_start is not None:
            on_start(name)
        args = spec["args"] or [name]
        t0 = time.perf_counter()
        res = subprocess.run([*jetlink, "bench", *args, "--json"], capture_output=True,
                             text=True)
        seconds = round(time.perf_counter() - t0, 1)
        try:
            result = json.loads(res.stdout)
        except ValueError:
            result = None
        if res.returncode != 0 or not isinstance(result, dict):
            tail = (res.stderr or res.stdout).strip().splitlines()[-3:]
            doc["benchmarks"][name] = {"failed": f"exit {res.returncode}: " + " / ".join(tail)}
            continue
        result["_command"] = "jetlink bench " + " ".join(args)
        result["_seconds"] = seconds
        doc["benchmarks"][name] = result
    if hasattr(os, "getloadavg"):
        doc["machine"]["load_average_end"] = list(os.getloadavg())
    doc["goals"] = judge(doc["benchmarks"])
    return doc
