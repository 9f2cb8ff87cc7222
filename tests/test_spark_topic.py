"""`jetlink spark mirror-topic`: the bulk copy of a topic against the link's own pump.

The same source topic is mirrored twice: by the engine (``Mirrors.create`` + ``pump_links``)
into cluster ``north`` and by the Spark job into cluster ``east``. Records (partition, offset,
timestamp, key, value, headers, as stored), partition offsets / sizes / compaction
bookkeeping, fetch positions, synced group offsets and clamps must be identical; then the
link's pump continues after the job without a gap or a duplicate. Spark runs twice (one
core-level run, one CLI run); the hold, the refusals and a copy stopped half-way are checked
without Spark, with core/lake.py's reader feeding the writer.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from helpers import ok

from jetlink.core import lake
from jetlink.core.kafka.errors import KafkaError
from jetlink.core.kafka.links import Links
from jetlink.core.kafka.mirrors import Mirrors, pump_links
from jetlink.core.kafka.topics import Kafka, encode_headers, record_key
from jetlink.core.store import DataDir

pytestmark = pytest.mark.spark

HOUR_MS = 3_600_000
FILTERS = json.dumps({"groupFilters": [
    {"name": "app-", "patternType": "PREFIXED", "filterType": "INCLUDE"},
    {"name": "app-x", "patternType": "LITERAL", "filterType": "EXCLUDE"},
]})
LINK_CONFIG = {"consumer.offset.sync.enable": "true", "consumer.offset.group.filters": FILTERS}


def build(dd: DataDir, clock, topic: str = "orders", *, compact: bool = False) -> Kafka:
    """west holds ``topic`` (3 partitions): keys, null keys and values, binary values,
    headers (duplicates, null and non-UTF-8 values), timestamps out of order; with
    ``compact`` a compacted topic (holes), else retention.ms of an hour that has already
    trimmed old records from partition 0 (log start > 0). Groups: app-1 and app-2 (one
    offset beyond the log end: a clamp at failover) pass the link's filters, app-x (EXCLUDE)
    and other do not. east and north hold link L from west (offset sync on)."""
    for name in ("west", "east", "north"):
        if not dd.has_cluster(name):
            dd.add_cluster(name, "kafka")
    west = Kafka(dd.open("west"), clock)
    now = clock.now_ns() // 1_000_000
    if compact:
        west.create_topic(topic, 3, {"cleanup.policy": "compact",
                                     "min.cleanable.dirty.ratio": "0.01"})
        recs = []
        for i in range(60):
            value = None if i % 11 == 5 else f"v{i}".encode()
            recs.append({"key": f"k{i % 7}".encode(), "value": value, "partition": i % 3,
                         "headers": [("n", str(i).encode())] if i % 2 else [],
                         "timestamp": now - 1000 + i})
        west.produce(topic, recs)
    else:
        west.create_topic(topic, 3, {"retention.ms": str(HOUR_MS)})
        old = [(f"old{i}".encode(), b"stale", (), now - 2 * HOUR_MS + i) for i in range(4)]
        west.produce(topic, old, partition=0)
        recs = []
        for i in range(45):
            key = None if i % 9 == 0 else f"k{i % 5}".encode()
            value = None if i % 13 == 7 else (bytes([i, 0xFF, 0x00]) if i % 4 == 0
                                               else f"value-{i}".encode())
            headers = [("trace", f"t{i}".encode()), ("trace", b"\xff\xfe")] if i % 3 == 0 \
                else [("empty", None)] if i % 3 == 1 else []
            recs.append({"key": key, "value": value, "partition": i % 3, "headers": headers,
                         "timestamp": now - (i * 37 % 500)})
        west.produce(topic, recs)
    for off in west.offsets(topic):
        assert off.log_end > 0
    west.commit("app-1", {(topic, 0): 5, (topic, 1): 2})
    west.commit("app-2", {(topic, 2): 999})
    west.commit("app-x", {(topic, 0): 3})
    west.commit("other", {(topic, 1): 1})
    for name in ("east", "north"):
        if Links(dd, name, clock).find("L") is None:
            Links(dd, name, clock).create("L", "west", LINK_CONFIG)
    return west


def engine_copy(dd: DataDir, clock, topic: str = "orders") -> Mirrors:
    m = Mirrors(dd, "north", clock)
    m.create(topic, "L")
    pump_links(dd, clock, clusters=["north"])
    return m


def records(dd: DataDir, cluster: str, topic: str) -> list[tuple]:
    """(partition, offset, ts, key, value, headers, storage type of headers) as stored."""
    conn = dd.open(cluster).conn
    (tid,) = conn.execute("SELECT id FROM topics WHERE name = ?", (topic,)).fetchone()
    return [(rid >> 40 & 1023, rid & ((1 << 40) - 1), *rest) for rid, *rest in conn.execute(
        "SELECT id, ts, key, value, headers, typeof(headers) FROM records "
        "WHERE id >= ? AND id < ? ORDER BY id",
        (record_key(tid, 0, 0), record_key(tid + 1, 0, 0)))]


def state(dd: DataDir, cluster: str, topic: str) -> dict:
    conn = dd.open(cluster).conn
    (tid,) = conn.execute("SELECT id FROM topics WHERE name = ?", (topic,)).fetchone()
    return {
        "partitions": conn.execute(
            "SELECT partition, log_start, log_end, bytes, cleaned, clean_bytes, tomb_due_ms "
            "FROM partitions WHERE topic = ? ORDER BY partition", (tid,)).fetchall(),
        "fetch": conn.execute(
            "SELECT partition, last_fetch_offset, source_hw FROM mirror_partitions "
            "WHERE topic = ? ORDER BY partition", (topic,)).fetchall(),
        "groups": conn.execute(
            "SELECT grp, partition, committed FROM group_offsets WHERE topic = ? "
            "ORDER BY grp, partition", (topic,)).fetchall(),
        "synced": conn.execute(
            "SELECT link, grp FROM synced_offsets WHERE topic = ? ORDER BY grp",
            (topic,)).fetchall(),
        "mirror": conn.execute(
            "SELECT status, paused, started FROM mirrors WHERE topic = ?", (topic,)).fetchone(),
    }


# --------------------------------------------------------------------------------------------
# Spark: the job against the engine, then the pump continuing
# --------------------------------------------------------------------------------------------
def test_bulk_copy_equals_the_link_then_the_pump_continues(spark, dd, clock):
    from jetlink.sparkops.topics import seed_mirror_topic

    west = build(dd, clock)
    assert west.offsets("orders")[0].log_start == 4  # retention trimmed the old records
    engine_copy(dd, clock)
    summary = seed_mirror_topic(spark, dd, clock, "east", "orders", "L", txn_rows=7)

    source = records(dd, "west", "orders")
    assert records(dd, "east", "orders") == records(dd, "north", "orders") == source
    assert {r[6] for r in source} == {"text", "null"}  # headers stored as JSON text
    east, north = state(dd, "east", "orders"), state(dd, "north", "orders")
    assert east == north
    assert east["groups"] == [("app-1", 0, 5), ("app-1", 1, 2), ("app-2", 2, 999)]
    assert east["mirror"] == ("ACTIVE", 0, 1)
    ends = [(p.partition, p.log_end) for p in west.offsets("orders")]
    doc = summary.to_json()
    assert doc["job"] == "mirror-topic"
    assert (doc["target"], doc["source"], doc["link"]) == (
        "store:east/topic/orders", "store:west/topic/orders", "L")
    assert (doc["created"], doc["rows_in"], doc["rows_out"]) == (True, len(source), len(source))
    assert doc["transactions"] == -(-len(source) // 7)
    assert doc["cursor_set"] is True
    assert [(c["partition"], c["cursor"]) for c in doc["cursors"]] == ends
    assert doc["cursors"][0]["first"] == 4
    assert sum(c["records"] for c in doc["cursors"]) == len(source)
    assert (doc["mirror_status"], doc["offsets_synced"], doc["failover"], doc["clamps"]) == (
        "ACTIVE", 3, False, [])

    # online replication continues from the cut: no gap, no duplicate
    west.produce("orders", [(f"n{i}".encode(), f"new{i}".encode(), [("h", b"1")])
                            for i in range(20)])
    west.produce("orders", [(None, b"tail")], partition=2)
    west.commit("app-1", {("orders", 0): 9, ("orders", 1): 8})
    clock.advance_s(31)  # consumer.offset.sync.ms passed
    pump_links(dd, clock)
    source = records(dd, "west", "orders")
    assert records(dd, "east", "orders") == source == records(dd, "north", "orders")
    assert state(dd, "east", "orders") == state(dd, "north", "orders")
    assert state(dd, "east", "orders")["groups"][:2] == [("app-1", 0, 9), ("app-1", 1, 8)]

    # failover of both: the same clamps
    a = Mirrors(dd, "east", clock).failover(["orders"], "L")[0].clamps
    b = Mirrors(dd, "north", clock).failover(["orders"], "L")[0].clamps
    assert a == b and [c.to_json() for c in a] == [
        {"group": "app-2", "topic": "orders", "partition": 2, "from": 999,
         "to": west.offsets("orders")[2].log_end}]


# --------------------------------------------------------------------------------------------
# Spark through the CLI: a compacted topic, --failover, the human summary
# --------------------------------------------------------------------------------------------
@pytest.fixture
def cli_world(jl, spark, cli_clock):
    dd = DataDir(jl.data)
    west = build(dd, cli_clock, "ledger", compact=True)
    yield dd, west
    dd.close()


def test_cli_mirror_topic_failover_on_a_compacted_topic(jl, cli_world, cli_clock):
    dd, west = cli_world
    north = engine_copy(dd, cli_clock, "ledger")
    expected = north.failover(["ledger"], "L")[0].clamps
    assert [c.group for c in expected] == ["app-2"]
    source = records(dd, "west", "ledger")
    assert len(source) < 60  # compaction left holes
    result = ok(jl("--cluster", "east", "spark", "mirror-topic", "ledger", "-l", "L",
                   "--failover"))
    lines = result.stdout.splitlines()
    fields = dict(line.split(":", 1) for line in lines if not line.startswith("  "))
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    assert fields["Job"] == "mirror-topic"
    assert fields["Target"] == "store:east/topic/ledger (created)"
    assert fields["Source"] == "store:west/topic/ledger"
    assert fields["Rows in"] == fields["Rows out"] == str(len(source))
    ends = west.offsets("ledger")
    assert fields["Cursors"] == ", ".join(f"{p.partition} at {p.log_end}" for p in ends)
    assert fields["Mirror status"] == "STOPPED"
    assert fields["Clamps"] == "1"
    c = expected[0]
    assert lines[-1] == (f"  Clamped consumer group app-2 on ledger partition {c.partition}: "
                         f"offset 999 -> {c.to_offset}")
    assert records(dd, "east", "ledger") == records(dd, "north", "ledger")
    east_state, north_state = state(dd, "east", "ledger"), state(dd, "north", "ledger")
    assert east_state == north_state
    assert east_state["mirror"][0] == "STOPPED"
    # the failed-over topic is writable
    Kafka(dd.open("east"), cli_clock).produce("ledger", [(b"k", b"after")], partition=0)


def test_cli_mirror_topic_interrupted_says_what_it_kept(jl, cli_world, cli_clock, monkeypatch):
    """Ctrl-C while the copy writes: the mirror topic keeps what was written and goes back to
    its link (which continues from there), said on stderr, exit 130; --json: one document."""
    from jetlink.core import lake

    real = lake.write_topic_rows

    def some_then_interrupted(mirrors, plan, batches, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(lake, "write_topic_rows", some_then_interrupted)
    r = jl("--cluster", "east", "spark", "mirror-topic", "ledger", "-l", "L", "-j")
    monkeypatch.setattr(lake, "write_topic_rows", real)
    assert r.exit_code == 130, r.output
    said = ("mirror topic ledger keeps the 0 records the job wrote; the link continues from "
            "there (jetlink replicate)")
    assert r.stderr == f"jetlink: interrupted: {said}\n"
    assert json.loads(r.stdout) == {"interrupted": True, "description": said}


def test_cli_refusals(jl, cli_world, cli_clock, monkeypatch):
    """Each refused before a Spark driver starts (core's bulk_check, read only)."""
    from jetlink.sparkops import session as sparkops_session

    def no_session(*_a, **_k):
        raise AssertionError("a Spark session was asked for a refused seed")

    monkeypatch.setattr(sparkops_session, "get_session", no_session)
    dd, _west = cli_world
    east = Mirrors(dd, "east", cli_clock)
    east.create("ledger", "L")
    pump_links(dd, cli_clock, clusters=["east"])
    err = doc_error(jl("--cluster", "east", "spark", "mirror-topic", "ledger", "-l", "L", "-j"))
    assert err["error_name"] == "INVALID_REQUEST"
    assert err["message"].startswith("Mirror topic 'ledger' holds records already")
    err = doc_error(jl("--cluster", "east", "spark", "mirror-topic", "ledger", "-l", "NOPE",
                       "-j"))
    assert err["error_name"] == "CLUSTER_LINK_NOT_FOUND"
    err = doc_error(jl("--cluster", "east", "spark", "mirror-topic", "nope", "-l", "L", "-j"))
    assert "Topic 'nope' does not exist on the source cluster west" in err["message"]
    Kafka(dd.open("east"), cli_clock).create_topic("plain", 1)
    err = doc_error(jl("--cluster", "east", "spark", "mirror-topic", "plain", "-l", "L", "-j"))
    assert "is not a mirror topic of link 'L'" in err["message"]
    result = jl("--cluster", "east", "spark", "mirror-topic", "ledger", "-l", "L", "--conf",
                "nokeyvalue")
    assert result.exit_code == 2


def doc_error(result) -> dict:
    assert result.exit_code == 1, (result.stdout, result.stderr)
    return json.loads(result.stdout)["error"]


def test_help_mentions_the_cursor(jl):
    text = ok(jl("spark", "mirror-topic", "--help")).stdout
    assert "--failover" in text and "--link" in text


# --------------------------------------------------------------------------------------------
# core: reader, hold, a copy stopped half-way (no Spark)
# --------------------------------------------------------------------------------------------
def _source_batches(dd: DataDir, plan, rows_per_range: int = 1000):
    db = str(dd.cluster_path(plan.source_cluster))
    for lo, hi in plan.key_ranges(rows_per_range):
        yield from lake.iter_topic_batches(db, plan.source_topic, lo, hi,
                                           tid=plan.source_rowid, batch_rows=4)


def test_iter_topic_batches_reads_the_lake_schema(dd, clock):
    west = build(dd, clock)
    tid = west.topic_rowid("orders")
    db = str(dd.cluster_path("west"))
    rows = [r for b in lake.iter_topic_batches(db, "orders", record_key(tid, 1, 0),
                                               record_key(tid, 2, 0), tid=tid, batch_rows=5)
            for r in b.to_pylist()]
    fetched = west.fetch("orders", 1, 0, 1000)
    assert [(r["stream"], r["partition"], r["seq"], r["subject"]) for r in rows] == [
        ("orders", 1, f.offset, None) for f in fetched]
    assert [(r["key"], r["data"], r["ts"]) for r in rows] == [
        (f.key, f.value, f.timestamp * 1_000_000) for f in fetched]
    assert [r["headers"] for r in rows] == [
        None if not f.headers else encode_headers(f.headers).encode() for f in fetched]
    assert list(lake.iter_topic_batches(db, "orders", 0, 1 << 62, tid=tid + 1)) == []
    assert sum(b.num_rows for b in lake.iter_topic_batches(db, "orders", 0, 1 << 62,
                                                            tid=tid)) == len(
        records(dd, "west", "orders"))


def test_a_copy_stopped_half_way_is_finished_by_the_link(dd, clock):
    build(dd, clock)
    engine_copy(dd, clock)
    east = Mirrors(dd, "east", clock)
    plan = east.bulk_begin("orders", "L")
    assert east.describe("orders", "L").mirror_status == "PAUSED"
    # the pump copies nothing into a held mirror
    pump_links(dd, clock, clusters=["east"])
    assert records(dd, "east", "orders") == []

    def dying():
        for i, b in enumerate(_source_batches(dd, plan)):
            if i == 3:
                raise RuntimeError("executor lost")
            yield b

    with pytest.raises(RuntimeError):
        lake.write_topic_rows(east, plan, dying(), txn_rows=5)
    assert 0 < len(records(dd, "east", "orders")) < len(records(dd, "west", "orders"))
    # what it stored carries the source's epoch of the cut (a cut of the source from now on
    # reaches those records: core/kafka/epochs.py)
    with sqlite3.connect(dd.path / "east.db") as conn:
        assert {e for (e,) in conn.execute("SELECT source_epoch FROM mirror_partitions "
                                           "WHERE topic = 'orders' AND last_fetch_offset > 0"
                                           )} == {0}
    east.bulk_release(plan)
    assert east.describe("orders", "L").mirror_status == "ACTIVE"
    clock.advance_s(31)
    pump_links(dd, clock)
    assert records(dd, "east", "orders") == records(dd, "north", "orders") == \
        records(dd, "west", "orders")
    assert state(dd, "east", "orders")["groups"] == state(dd, "north", "orders")["groups"]


def test_a_mirror_resumed_during_the_copy_stops_it(dd, clock):
    build(dd, clock)
    east = Mirrors(dd, "east", clock)
    plan = east.bulk_begin("orders", "L")
    assert [r.ok for r in east.resume(["orders"], "L")] == [True]
    pump_links(dd, clock, clusters=["east"])  # the link copies everything
    with pytest.raises(KafkaError, match="was resumed while the bulk copy ran"):
        lake.write_topic_rows(east, plan, _source_batches(dd, plan))
    with pytest.raises(KafkaError, match="was resumed while the bulk copy ran"):
        east.bulk_finish(plan)
    east.bulk_release(plan)
    assert records(dd, "east", "orders") == records(dd, "west", "orders")


def test_an_existing_empty_mirror_is_seeded_from_its_start_spec(dd, clock):
    west = build(dd, clock)
    east = Mirrors(dd, "east", clock)
    east.create("orders", "L", configs={"mirror.start.offset.spec": "latest"})
    plan = east.bulk_begin("orders", "L")
    assert plan.created is False
    assert [(bp.first, bp.end, bp.records) for bp in plan.partitions] == [
        (p.log_end, p.log_end, 0) for p in west.offsets("orders")]
    assert plan.key_ranges() == []
    assert lake.write_topic_rows(east, plan, []) == 0
    res = east.bulk_finish(plan)
    assert res.status == "ACTIVE"
    west.produce("orders", [(None, b"x")], partition=1)
    pump_links(dd, clock, clusters=["east"])
    assert [r[:2] for r in records(dd, "east", "orders")] == [
        (1, west.offsets("orders")[1].log_end - 1)]


def test_rows_outside_the_plan_are_refused(dd, clock):
    build(dd, clock)
    east = Mirrors(dd, "east", clock)
    plan = east.bulk_begin("orders", "L")
    rows = [(0, plan.partitions[0].first, 0, None, b"v", None),
            (0, plan.partitions[0].first, 0, None, b"v", None)]
    with pytest.raises(KafkaError, match="offsets must increase"):
        east.bulk_write(plan, rows)
    with pytest.raises(KafkaError, match="not a partition of the bulk copy"):
        east.bulk_write(plan, [(7, 0, 0, None, b"v", None)])
    assert records(dd, "east", "orders") == []
