"""Render docs/dashboard.svg: the dashboard's main screen over a demo data set.

    python scripts/dashboard_svg.py                  # writes docs/dashboard.svg
    python scripts/dashboard_svg.py --out FILE --tab streams --size 120x32

The data set (:func:`build`) is made through the engine's own calls with a manual clock, so
the picture is the same on every run: NATS clusters west and east (ORDERS with a RePublish
monitor subject, its mirror BACKUP and a sourced ARCHIVE in east, a KV bucket CONFIG with a
mirror and an aggregate), Kafka-style clusters kwest and keast (topic orders with three
partitions, consumer groups at different offsets, a link dr from kwest to keast with offset
sync and an auto-created mirror topic), then an outage of west while ORDERS has new messages.
The dashboard tests build the same data set and check docs/dashboard.svg is what this
script makes (tests/test_dashboard.py).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
START_NS = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z
SEC = 1_000_000_000


def build(path: Path, clock) -> None:
    """The demo data set in the data directory ``path`` (created), time from ``clock``
    (a ManualClock: it is advanced as the data is made)."""
    from jetlink.core.config.kv import (
        KeyValueConfig,
        KVAggregateConfig,
        KVAggregateOrigin,
        KVMirrorConfig,
    )
    from jetlink.core.jetstream import JetStream
    from jetlink.core.kafka.links import Links
    from jetlink.core.kafka.mirrors import Mirrors, pump_links
    from jetlink.core.kafka.topics import Kafka
    from jetlink.core.kv import KV
    from jetlink.core.replication import pump_until_idle
    from jetlink.core.store import DataDir

    dd = DataDir(path)
    try:
        for name, kind in (("west", "nats"), ("east", "nats"), ("kwest", "kafka"),
                           ("keast", "kafka")):
            dd.add_cluster(name, kind=kind, now_ns=clock.now_ns())
        west = JetStream(dd.open("west"), clock)
        east = JetStream(dd.open("east"), clock)
        west.add_stream({"name": "ORDERS", "subjects": ["orders.>"],
                         "max_msgs_per_subject": 100, "duplicate_window": 120 * SEC,
                         "republish": {"src": "orders.>", "dest": "monitor.orders.>"}})
        east.add_stream({"name": "BACKUP", "mirror": {
            "name": "ORDERS", "external": {"api": "$JS.west.API"}}})
        east.add_stream({"name": "ARCHIVE", "sources": [{
            "name": "ORDERS", "external": {"api": "$JS.west.API"},
            "subject_transforms": [{"src": "orders.*.>", "dest": "archive.{{wildcard(1)}}.>"}],
        }]})
        kv = KV(dd, "west", clock)
        kv.create_bucket(KeyValueConfig(bucket="CONFIG", history=5, ttl=3600 * SEC))
        bucket = kv.open("CONFIG")
        for key, value in (("region", b"eu"), ("limit", b"100"), ("limit", b"120")):
            bucket.put(key, value)
            clock.advance(SEC)
        KV(dd, "east", clock).create_mirror(
            KVMirrorConfig(name="CONFIG_EAST", origin_bucket="CONFIG", domain="west", history=5))
        KV(dd, "east", clock).create_aggregate(KVAggregateConfig(
            bucket="SETTINGS", origins=[KVAggregateOrigin(bucket="CONFIG", domain="west")]))
        for i in range(40):
            region = ("eu", "us", "apac")[i % 3]
            west.publish(f"orders.{region}.{i}", f"order {i}".encode())
            clock.advance(SEC // 4)
        pump_until_idle(dd, clock)

        kwest = Kafka(dd.open("kwest"), clock)
        kwest.create_topic("orders", 3)
        for p in range(3):
            kwest.produce("orders", [(None, f"o{p}-{i}".encode()) for i in range(10 + 5 * p)],
                          partition=p)
        kwest.commit("billing", {("orders", 0): 10, ("orders", 1): 12, ("orders", 2): 20})
        kwest.commit("audit", {("orders", 0): 4, ("orders", 1): 4, ("orders", 2): 4})
        Links(dd, "keast", clock).create("dr", "kwest", {
            "consumer.offset.sync.enable": "true",
            "consumer.offset.sync.ms": "1000",
            "consumer.offset.group.filters":
                '{"groupFilters": [{"name": "*", "patternType": "LITERAL", '
                '"filterType": "INCLUDE"}]}',
            "auto.create.mirror.topics.enable": "true",
            "auto.create.mirror.topics.filters":
                '{"topicFilters": [{"name": "orders", "patternType": "LITERAL", '
                '"filterType": "INCLUDE"}]}',
        })
        clock.advance(SEC)
        pump_links(dd, clock)
        clock.advance(2 * SEC)
        pump_links(dd, clock)
        Mirrors(dd, "keast", clock).refresh()

        # the drill: west goes down while ORDERS takes new orders; kwest keeps producing
        clock.advance(5 * SEC)
        dd.set_down("west", True)
        for i in range(40, 52):
            west.publish(f"orders.eu.{i}", f"order {i}".encode())
            clock.advance(SEC // 4)
        pump_until_idle(dd, clock)
        pump_links(dd, clock)
        # billing reads on in kwest; the offset sync copies its offset before the records
        # reach the mirror (one record per step here): a failover now would clamp it
        kwest.produce("orders", [(None, f"late-{i}".encode()) for i in range(6)], partition=1)
        kwest.commit("billing", {("orders", 1): 19})
        clock.advance(2 * SEC)
        pump_links(dd, clock, max_records=1)
        clock.advance(3 * SEC)
    finally:
        dd.close()


async def _shoot(path: Path, clock, out: Path, tab: str, size: tuple[int, int]) -> None:
    from jetlink.cli.dashboard.app import create_app
    from jetlink.core.jetstream import JetStream
    from jetlink.core.store import DataDir

    app = create_app(path, clock=clock, refresh=3600, label="demo data set",
                     min_interval=0)
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        # a few more seconds of traffic into ORDERS (west's own clients keep working while
        # it is cut off), one load per second: the sparklines
        dd = DataDir(path)
        west = JetStream(dd.open("west"), clock)
        for second, orders in enumerate((3, 5, 8, 6, 9, 12, 7, 10, 4, 6)):
            for i in range(orders):
                west.publish(f"orders.us.{100 + second * 20 + i}", b"late order")
            clock.advance(SEC)
            app.tick()
            await app.workers.wait_for_complete()
            await pilot.pause()
        dd.close()
        app.action_tab(tab)
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()  # the tab underline comes to rest
        await pilot.pause()
        svg = app.export_screenshot(title="jetlink dashboard")
    out.write_text(svg, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "dashboard.svg")
    parser.add_argument("--tab", default="streams")
    parser.add_argument("--size", default="120x32", help="COLUMNSxROWS")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.lower().split("x"))
    from jetlink.core.clock import ManualClock

    with tempfile.TemporaryDirectory(prefix="jetlink-dashboard-") as tmp:
        clock = ManualClock(START_NS)
        build(Path(tmp), clock)
        asyncio.run(_shoot(Path(tmp), clock, args.out, args.tab, (width, height)))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
