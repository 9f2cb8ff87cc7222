"""``jetlink bench dr --region``: a region's failover and failback timed on the embedded engine
(jetlink.core.bench.region ``bench_region``) and on nats-servers started here
(cli/bench_live_region.py ``bench_live_region``); this module runs them and renders the
figures next to their goals."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from jetlink.cli import output
from jetlink.cli.app import App


class BenchBackend(StrEnum):
    embedded = "embedded"
    live = "live"
    both = "both"


#: each backend's default size: streams, KV buckets, consumers
SIZES = {"embedded": (900, 100, 2000), "live": (200, 20, 1000)}
#: the mirrors ``dr check`` reads on the live servers
CHECK_MIRRORS = 1000
#: ``dr watch --interval`` on the live servers (its default)
WATCH_INTERVAL_S = 15.0


def run(backend: BenchBackend, streams: int | None, kv: int | None, consumers: int | None,
        mirrors: int | None, watch_interval: float | None = None) -> dict[str, Any]:
    """The region bench of each backend asked for, sizes not given from :data:`SIZES`."""
    from jetlink.core.errors import JetlinkError

    doc: dict[str, Any] = {}
    for name in ("embedded", "live"):
        if backend not in (BenchBackend.both, BenchBackend(name)):
            continue
        s, k, c = SIZES[name]
        size = (s if streams is None else streams, k if kv is None else kv,
                c if consumers is None else consumers)
        if name == "embedded":
            from jetlink.core.bench.region import bench_region

            doc["embedded"] = bench_region(*size)
            continue
        from jetlink.cli.bench_live_region import bench_live_region

        try:
            doc["live"] = bench_live_region(
                *size, mirrors=CHECK_MIRRORS if mirrors is None else mirrors,
                watch_interval=WATCH_INTERVAL_S if watch_interval is None else watch_interval)
        except FileNotFoundError as err:
            raise JetlinkError(f"{err}: jetlink bench dr --region --backend live needs "
                               "nats-server (pip install 'jetlink[live]')") from None
    return doc


_EMBEDDED = [
    ("plan", "plan (dr failover --from west --dry-run)",
     lambda d: f"{d['objects']:,} objects, {d['consumers_to_place']:,} consumers to place"),
    ("failover", "failover (dr failover --from west)",
     lambda d: f"{d['objects']:,} objects, {d['consumers_placed']:,} consumers placed"),
]
_LIVE = [
    ("failover", "failover (dr failover --from west)",
     lambda d: f"{d['objects']:,} objects, {d['consumers_placed']:,} consumers placed"),
    ("fence", "fence (dr fence --from west, west back)",
     lambda d: f"{d['fenced']:,} old origins fenced"),
]
_FAILBACK = ("failback", "failback + switch (dr failback --from west --tail parquet:DIR "
             "--switch)",
             lambda d: f"{d['objects']:,} objects, tails {d['tail_messages']:,} messages "
             f"({d['tail_rows']:,} rows), round trip exact for {d['objects_exact']:,}, "
             f"{d['consumers_back']:,} consumers back")
_CHECK = ("check", "dr check",
          lambda d: f"{d['mirrors']:,} mirrors, status {d['status']}")


def _figure(title: str, d: dict[str, Any], counts: str) -> str:
    met = "met" if d["seconds"] < d["goal_s"] else "NOT met"
    return f"  {title}: {d['seconds']:.3f}s (goal under {d['goal_s']:g}s: {met}); {counts}"


def render(app: App, doc: dict[str, Any]) -> None:
    """Each backend's size, then one line per figure with its goal and its counts."""
    for name, steps in (("embedded", [*_EMBEDDED, _FAILBACK]),
                        ("live", [*_LIVE, _FAILBACK, _CHECK])):
        d = doc.get(name)
        if d is None:
            continue
        where = "embedded engine" if name == "embedded" else \
            "nats-servers west (hub) and east (leaf)"
        output.line(app, f"region west on the {where}: {d['streams']:,} streams + "
                         f"{d['kv']:,} KV buckets = {d['objects']:,} mirrors on east, "
                         f"{d['consumers']:,} durable consumers (built in {d['build_s']:g}s)")
        for key, title, counts in steps:
            output.line(app, _figure(title, d[key], counts(d[key])))
        w = d.get("watch")
        if w is not None:
            output.line(app, f"  dr watch --interval {w['interval_s']:g}s: "
                             f"{w['cpu_s_per_interval']:.3f} CPU-seconds per interval (no "
                             f"goal; {w['cpu_s']:.3f}s over {w['checks']} intervals, checks "
                             f"of {', '.join(f'{s:.2f}s' for s in w['check_s'])}); "
                             f"{w['objects']:,} objects")
