"""Reversing a mirror topic (core/kafka/mirror_promote.py ``reverse_and_start`` /
``reverse_and_pause``): the shared rules (both clusters up, a bidirectional link, checked
before anything changes), the truncation of the old source and the clamps, a run killed
between the two databases finished by a re-run; the verbs ``mirrors reverse-and-pause`` /
``reverse-and-start`` and ``kafka-mirrors --reverse-and-pause[-mirror]`` (exact JSON, lines
and exit statuses, dry runs that change no byte), reverse-and-pause -> resume -> records
flowing the other way, and the same verbs through ``jetlink serve`` and ``--rest-url``."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from helpers import ENV_VARS, data_dir_bytes, doc, ok, runner

from jetlink.cli.main import app
from jetlink.core.clock import SystemClock
from jetlink.core.kafka import mirror_promote
from jetlink.core.kafka.errors import KafkaError
from jetlink.core.kafka.links import Links
from jetlink.core.kafka.mirrors import ACTIVE, PAUSED, STOPPED, Mirrors, pump_links
from jetlink.core.kafka.topics import Kafka
from jetlink.core.store import DataDir

ALL_GROUPS = json.dumps({"groupFilters": [
    {"name": "*", "patternType": "LITERAL", "filterType": "INCLUDE"}]})
SYNC = {"consumer.offset.sync.enable": "true", "consumer.offset.group.filters": ALL_GROUPS}


def build(dd: DataDir, clock, *, reverse_link: bool = True, west: str = "west",
          east: str = "east") -> None:
    """west: topic orders (p0: a0..a6, p1: b0..b2), group G at 7 on p0; east: link L from
    west (offset sync of every group), mirror orders holding a0..a4 and b0..b2 only (a5, a6
    are the records it never copied), G synced at 7; west: link L from east when
    ``reverse_link`` (the bidirectional pair). ``west`` / ``east``: the clusters' names."""
    dd.add_cluster(west, "kafka")
    dd.add_cluster(east, "kafka")
    wk = Kafka(dd.open(west), clock)
    wk.create_topic("orders", 2)
    wk.produce("orders", [(None, f"a{i}".encode()) for i in range(5)], partition=0)
    wk.produce("orders", [(None, f"b{i}".encode()) for i in range(3)], partition=1)
    Links(dd, east, clock).create("L", west, SYNC)
    m = Mirrors(dd, east, clock)
    m.create("orders", "L")
    m.step()
    wk.produce("orders", [(None, b"a5"), (None, b"a6")], partition=0)  # never copied
    wk.commit("G", {("orders", 0): 7})
    m.sync_offsets("L")  # east's G is at 7, beyond its log end 5: clamped on the stop
    if reverse_link:
        Links(dd, west, clock).create("L", east, SYNC)


def values(k: Kafka, topic: str, partition: int = 0) -> list[bytes]:
    return [r.value for r in k.fetch(topic, partition, k.offsets(topic)[partition].log_start,
                                     1000)]


@pytest.fixture
def world(dd, clock):
    build(dd, clock)
    return dd, clock, Kafka(dd.open("west"), clock), Kafka(dd.open("east"), clock)


# == core =========================================================================================


def test_truncate_and_restore_clamps_the_groups_the_truncation_left_beyond_the_log(world):
    """West's G committed 7 on partition 0; the truncation to 5 would leave it beyond the
    log end, and the records mirrored into offsets 5 and 6 would never reach it: clamped
    to 5 (dry run: reported, nothing changed), then it reads them."""
    dd, clock, west, east = world
    Mirrors(dd, "east", clock).failover(["orders"], "L")
    Mirrors(dd, "east", clock).finish_pending()
    east.produce("orders", [(None, b"e1"), (None, b"e2")], partition=0)  # offsets 5, 6
    m_west = Mirrors(dd, "west", clock)
    dry = m_west.truncate_and_restore("orders", "L", dry_run=True)
    clamp = {"group": "G", "topic": "orders", "partition": 0, "from": 7, "to": 5}
    assert [c.to_json() for c in dry.clamps] == [clamp]
    assert west.committed("G")[("orders", 0)] == 7  # (the REST test compares the bytes)
    res = m_west.truncate_and_restore("orders", "L")
    assert [c.to_json() for c in res.clamps] == [clamp]
    assert west.committed("G")[("orders", 0)] == 5
    m_west.step()
    assert [r.value for r in west.fetch("orders", 0, 5, 10)] == [b"e1", b"e2"]


def test_every_mirror_of_a_truncated_source_follows_the_cut(world):
    """A third cluster mirrors west's orders (a0..a6), and a fourth mirrors that mirror.
    West is truncated to 5 by its failback and takes e1, e2 from east: both followers cut
    their logs back to 5 at their next fetch (the source's epoch of their last fetch ends
    there: OffsetsForLeaderEpoch) and copy e1, e2; their own offsets of the other partition
    stay; a mirror that had not fetched past the cut cuts nothing."""
    dd, clock, west, east = world
    for name, source in (("c3", "west"), ("c4", "c3")):
        dd.add_cluster(name, "kafka")
        Links(dd, name, clock).create("W", source)
        Mirrors(dd, name, clock).create("orders", "W")
    followers = [Mirrors(dd, "c3", clock), Mirrors(dd, "c4", clock)]
    for m in followers:
        m.step()  # (only these: east keeps a5, a6 uncopied)
    c3, c4 = Kafka(dd.open("c3"), clock), Kafka(dd.open("c4"), clock)
    assert values(c3, "orders") == values(c4, "orders") == values(west, "orders")
    assert len(values(west, "orders")) == 7
    Mirrors(dd, "east", clock).failover(["orders"], "L")
    Mirrors(dd, "east", clock).finish_pending()
    east.produce("orders", [(None, b"e1"), (None, b"e2")], partition=0)
    assert Mirrors(dd, "west", clock).truncate_and_restore("orders", "L").messages_truncated == 2
    with sqlite3.connect(dd.path / "west.db") as conn:  # the cut's epoch
        assert conn.execute("SELECT epoch, start_offset FROM partition_epochs").fetchall() == [
            (1, 5)]
    Mirrors(dd, "west", clock).step()  # west copies e1, e2 from east
    reports = [r for m in followers for r in m.step()]
    cut = [{"topic": "orders", "partition": 0, "offset_truncated_to": 5,
            "messages_truncated": 2}]
    # (c4 fetched in c3's epoch 0, which c3's cut ended at 5: c4 follows c3 in turn)
    assert [(r.cluster, r.truncated) for r in reports] == [("c3", cut), ("c4", cut)]
    want = [b"a0", b"a1", b"a2", b"a3", b"a4", b"e1", b"e2"]
    assert values(west, "orders") == values(c3, "orders") == values(c4, "orders") == want
    assert values(c3, "orders", 1) == values(c4, "orders", 1) == [b"b0", b"b1", b"b2"]
    for m in followers:
        assert m.describe("orders", "W").mirror_status == ACTIVE
        assert [r.truncated for r in m.step()] == [[]]  # (in step now: nothing more to cut)


@pytest.mark.parametrize("paused", [True, False])
def test_reverse_stops_clamps_truncates_and_mirrors_the_other_way(world, paused):
    dd, clock, west, east = world
    m_east = Mirrors(dd, "east", clock)
    verb = m_east.reverse_and_pause if paused else m_east.reverse_and_start
    res, trunc = verb("orders", "L")
    assert res.ok
    assert [c.to_json() for c in res.clamps] == [
        {"group": "G", "topic": "orders", "partition": 0, "from": 7, "to": 5}]
    assert trunc.to_json() == {
        "mirror_topic_name": "orders",
        "partitions": [{"partition": 0, "messages_truncated": 2, "offset_truncated_to": 5},
                       {"partition": 1, "messages_truncated": 0, "offset_truncated_to": 3}],
        "mirror_status": PAUSED if paused else ACTIVE,
        # west's G was at 7 too, beyond the truncation
        "clamps": [{"group": "G", "topic": "orders", "partition": 0, "from": 7, "to": 5}],
    }
    assert m_east.describe("orders", "L").mirror_status == STOPPED
    m_west = Mirrors(dd, "west", clock)
    assert m_west.describe("orders", "L").mirror_status == (PAUSED if paused else ACTIVE)
    assert values(west, "orders") == [b"a0", b"a1", b"a2", b"a3", b"a4"]  # a5, a6 truncated
    with pytest.raises(KafkaError):
        west.produce("orders", [(None, b"x")], partition=0)  # west holds the mirror now
    east.produce("orders", [(None, b"e0")], partition=0)  # east is writable
    pump_links(dd, clock)
    copied = [b"a0", b"a1", b"a2", b"a3", b"a4"] + ([] if paused else [b"e0"])
    assert values(west, "orders") == copied
    if paused:
        assert m_west.describe("orders", "L").max_per_partition_mirror_lag == 1
        assert [r.ok for r in m_west.resume(["orders"], "L")] == [True]
        pump_links(dd, clock)
        assert values(west, "orders") == values(east, "orders")
    with sqlite3.connect(dd.path / "east.db") as conn:  # the reverse's mark is gone
        assert conn.execute("SELECT pending FROM mirrors WHERE topic = 'orders'"
                            ).fetchone() == (None,)


def test_a_round_trip_ends_in_the_original_topology(world):
    dd, clock, west, east = world
    Mirrors(dd, "east", clock).reverse_and_start("orders", "L")
    east.produce("orders", [(None, b"e0")], partition=0)
    pump_links(dd, clock)
    res, trunc = Mirrors(dd, "west", clock).reverse_and_start("orders", "L")  # and back
    assert res.ok and trunc.messages_truncated == 0
    west.produce("orders", [(None, b"w0")], partition=0)
    pump_links(dd, clock)
    assert Mirrors(dd, "east", clock).describe("orders", "L").mirror_status == ACTIVE
    assert values(east, "orders") == values(west, "orders") == [
        b"a0", b"a1", b"a2", b"a3", b"a4", b"e0", b"w0"]


def _state(dd: DataDir) -> dict[str, list[tuple]]:
    """The rows a reverse changes: mirrors, partitions' log ends, group offsets."""
    out = {}
    for name in ("west", "east"):
        with sqlite3.connect(dd.path / f"{name}.db") as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            out[name] = [
                *(conn.execute("SELECT topic, link, status, paused, pending FROM mirrors")
                  if "mirrors" in tables else []),
                *conn.execute("SELECT partition, log_end FROM partitions ORDER BY 1"),
                *conn.execute("SELECT grp, partition, committed FROM group_offsets"),
            ]
    return out


def _other_link(dd, clock):
    dd.add_cluster("north", "kafka")
    Links(dd, "west", clock).delete("L")
    Links(dd, "west", clock).create("L", "north")


def _gone(dd, clock):
    Links(dd, "west", clock).delete("L")


def _source_mode(dd, clock):
    """west's link L back to east re-created in SOURCE mode (a mode is set at creation)."""
    _gone(dd, clock)
    Links(dd, "west", clock).create("L", "east", {"link.mode": "SOURCE"})


@pytest.mark.parametrize(("setup", "topic", "message"), [
    (_gone, "orders",
     "Cluster link 'L' is not bidirectional: cluster west has no link 'L' back to east "
     "({verb} needs the link on both clusters, each pointing at the other)"),
    (_other_link, "orders",
     "Cluster link 'L' is not bidirectional: on cluster west it points to north, not back to "
     "east ({verb} needs the link on both clusters, each pointing at the other)"),
    (lambda dd, clock: dd.set_down("west", True), "orders",
     "Cluster link 'L': the source cluster west can not be reached: {verb} needs both "
     "clusters up (failover stops the mirror whatever the source's state)"),
    (_source_mode, "orders",
     "Cluster link 'L' on cluster west has link.mode=SOURCE: jetlink runs destination links "
     "only, and the reversed mirror needs one"),
    (lambda dd, clock: Kafka(dd.open("east"), clock).create_topic("plain", 1), "plain",
     "Topic 'plain' is not mirrored by link 'L'"),
    (lambda dd, clock: Mirrors(dd, "east", clock).failover(["orders"], "L"), "orders",
     "Topic 'orders' has already stopped its mirror from 'L': {verb} reverses a mirror that "
     "is still mirroring (after a failover, truncate-and-restore on cluster west fails back)"),
])
@pytest.mark.parametrize("verb", ["reverse-and-start", "reverse-and-pause"])
def test_refusals_name_the_rule_and_change_nothing(world, setup, topic, message, verb):
    dd, clock, _west, _east = world
    setup(dd, clock)
    before = _state(dd)
    m = Mirrors(dd, "east", clock)
    for dry_run in (True, False):
        with pytest.raises(KafkaError) as err:
            getattr(m, verb.replace("-", "_"))(topic, "L", dry_run=dry_run)
        assert (err.value.name, err.value.description) == (
            "INVALID_REQUEST", message.format(verb=verb))
    assert _state(dd) == before


@pytest.mark.parametrize("verb", ["reverse_and_start", "reverse_and_pause"])
def test_the_reversed_links_principal_needs_what_a_created_mirrors_needs(world, verb):
    """West's link L back to east copies east's orders once reversed: where east enforces
    ACLs its principal needs READ and DESCRIBE_CONFIGS on orders there, as mirror create
    asks; refused (TOPIC_AUTHORIZATION_FAILED, dry run too) before anything changes."""
    from jetlink.core.kafka.acls import AclBinding, AclStore

    dd, clock, _west, _east = world
    acls = AclStore(dd.open("east"))
    acls.configure(enabled=True)
    before = _state(dd)
    m = Mirrors(dd, "east", clock)
    for dry_run in (True, False):
        with pytest.raises(KafkaError) as err:
            getattr(m, verb)("orders", "L", dry_run=dry_run)
        assert err.value.name == "TOPIC_AUTHORIZATION_FAILED"
        assert err.value.description.startswith(
            "Cluster link 'L' is not authorized to mirror source topic 'orders': its "
            "principal User:ANONYMOUS needs the ACLs READ and DESCRIBE_CONFIGS on the topic "
            "in source cluster east, and lacks READ and DESCRIBE_CONFIGS")
        assert err.value.description.endswith(
            f"({verb.replace('_', '-')} makes topic 'orders' of cluster west a mirror of it "
            "through that link)")
    assert _state(dd) == before
    acls.add([AclBinding("TOPIC", "orders", "LITERAL", "User:ANONYMOUS", "*", op, "ALLOW")
              for op in ("READ", "DESCRIBE_CONFIGS")])
    getattr(m, verb)("orders", "L", dry_run=True)  # allowed now


def test_truncate_and_restore_needs_what_a_created_mirror_needs(world):
    """Failing back makes west's orders a mirror of east's through west's link L: where
    east enforces ACLs, that link's principal needs READ and DESCRIBE_CONFIGS there, as
    mirror create asks; refused (dry run too) before any record is truncated."""
    from jetlink.core.kafka.acls import AclBinding, AclStore

    dd, clock, _west, _east = world
    Mirrors(dd, "east", clock).failover(["orders"], "L")
    acls = AclStore(dd.open("east"))
    acls.configure(enabled=True)
    before = _state(dd)
    m = Mirrors(dd, "west", clock)
    for dry_run in (True, False):
        with pytest.raises(KafkaError) as err:
            m.truncate_and_restore("orders", "L", dry_run=dry_run)
        assert err.value.name == "TOPIC_AUTHORIZATION_FAILED"
        assert err.value.description.startswith(
            "Cluster link 'L' is not authorized to mirror source topic 'orders': its "
            "principal User:ANONYMOUS needs the ACLs READ and DESCRIBE_CONFIGS on the topic "
            "in source cluster east")
        assert err.value.description.endswith(
            "(truncate-and-restore makes topic 'orders' a mirror of it through that link)")
    assert _state(dd) == before
    acls.add([AclBinding("TOPIC", "orders", "LITERAL", "User:ANONYMOUS", "*", op, "ALLOW")
              for op in ("READ", "DESCRIBE_CONFIGS")])
    m.truncate_and_restore("orders", "L", dry_run=True)  # allowed now


def test_an_unknown_link_is_not_found(world):
    dd, clock, _west, _east = world
    with pytest.raises(KafkaError) as err:
        Mirrors(dd, "east", clock).reverse_and_pause("orders", "NOPE")
    assert err.value.name == "CLUSTER_LINK_NOT_FOUND"


def test_a_link_that_is_on_the_other_side_says_where_the_verb_runs(dd, clock):
    """Run on the wrong side (the link is not here): Kafka's CLUSTER_LINK_NOT_FOUND, with
    which cluster the verb runs on and the command there."""
    build(dd, clock, reverse_link=False)
    with pytest.raises(KafkaError) as err:
        Mirrors(dd, "west", clock).reverse_and_start("orders", "L")
    assert (err.value.name, err.value.description) == ("CLUSTER_LINK_NOT_FOUND",
                                                       "Cluster link 'L' not found")
    assert err.value.detail == ("the link is on cluster east, which holds the mirror: jetlink "
                                "--cluster east mirrors reverse-and-start orders --link L")
    Mirrors(dd, "east", clock).failover(["orders"], "L")
    with pytest.raises(KafkaError) as err:
        Mirrors(dd, "west", clock).truncate_and_restore("orders", "L")
    assert err.value.detail == (
        "truncate-and-restore runs here, on the cluster the topic failed over from, through "
        "a link from where it took over: jetlink --cluster west links create L "
        "--source-cluster east")
    with pytest.raises(KafkaError) as err:
        Mirrors(dd, "west", clock).truncate_and_restore("orders", "NOPE")
    assert err.value.detail is None or "--source-cluster" not in err.value.detail
    # run on the side that took over, through its own link L (from west): the topic here
    # is the stopped mirror; where the verb runs, and the commands there
    before = _state(dd)
    with pytest.raises(KafkaError) as err:
        Mirrors(dd, "east", clock).truncate_and_restore("orders", "L")
    assert (err.value.name, err.value.description) == (
        "INVALID_REQUEST", "Topic 'orders' on cluster west is not a stopped mirror: "
        "truncate-and-restore fails back to a topic that was failed over or promoted")
    assert err.value.detail == (
        "topic orders here, on cluster east, is the stopped mirror: truncate-and-restore runs "
        "on the cluster it failed over from, west, through a link from this one: jetlink "
        "--cluster west links create L --source-cluster east, then jetlink --cluster west "
        "mirrors truncate-and-restore orders --link L")
    assert _state(dd) == before


def test_a_dry_run_reports_the_same_and_changes_nothing(world):
    dd, clock, _west, _east = world
    before = _state(dd)
    m = Mirrors(dd, "east", clock)
    dry = m.reverse_and_pause("orders", "L", dry_run=True)
    assert _state(dd) == before
    real = m.reverse_and_pause("orders", "L")
    assert [r.to_json() for r in dry] == [r.to_json() for r in real]


def test_a_reverse_killed_after_the_stop_is_finished_by_a_rerun(world):
    dd, clock, west, _east = world
    m = Mirrors(dd, "east", clock)
    # the first database's step of a reverse, as a killed run leaves it
    mirror_promote._stop(m, ["orders"], "L", "failover", False, mark=mirror_promote.REVERSING)
    assert m.describe("orders", "L").mirror_status == STOPPED
    assert west.describe_topic("orders").mirror_link is None  # not restored yet
    Kafka(dd.open("east"), clock).produce("orders", [(None, b"e0")], partition=0)  # writable
    dry = m.reverse_and_pause("orders", "L", dry_run=True)[1].to_json()
    res, trunc = m.reverse_and_pause("orders", "L")
    assert trunc.to_json() == dry  # truncated to where the mirror stopped, not to e0's end
    assert res.ok and res.clamps == []  # the killed run made them
    assert trunc.to_json()["partitions"][0] == {
        "partition": 0, "messages_truncated": 2, "offset_truncated_to": 5}
    assert trunc.mirror_status == PAUSED
    assert Mirrors(dd, "west", clock).describe("orders", "L").mirror_status == PAUSED
    assert Kafka(dd.open("east"), clock).committed("G")[("orders", 0)] == 5  # clamped once
    with pytest.raises(KafkaError, match="has already stopped its mirror"):
        m.reverse_and_pause("orders", "L")  # done: the mark is gone


def test_a_reverse_killed_after_the_restore_is_finished_by_a_rerun(world):
    dd, clock, _west, _east = world
    m = Mirrors(dd, "east", clock)
    mirror_promote._stop(m, ["orders"], "L", "failover", False, mark=mirror_promote.REVERSING)
    mirror_promote.truncate_and_restore(Mirrors(dd, "west", clock), "orders", "L")
    dry = m.reverse_and_pause("orders", "L", dry_run=True)[1].to_json()
    res, trunc = m.reverse_and_pause("orders", "L")  # the start's killed run, paused now
    assert trunc.to_json() == dry
    assert res.ok
    assert trunc.to_json() == {
        "mirror_topic_name": "orders",
        "partitions": [{"partition": 0, "messages_truncated": 0, "offset_truncated_to": 5},
                       {"partition": 1, "messages_truncated": 0, "offset_truncated_to": 3}],
        "mirror_status": PAUSED,
        "clamps": [],
    }
    with sqlite3.connect(dd.path / "east.db") as conn:
        assert conn.execute("SELECT status, pending FROM mirrors WHERE topic = 'orders'"
                            ).fetchone() == (STOPPED, None)


# == the CLI ======================================================================================


@pytest.fixture
def cli(tmp_path, monkeypatch, cli_clock):
    """``cli(*args)``: jetlink on a data directory holding :func:`build`'s world
    (``cli.data``); ``cli.make(name, **kw)`` builds another one."""
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)

    def make(name: str, **kw) -> Path:
        data = tmp_path / name
        dd = DataDir(data)
        try:
            build(dd, cli_clock, **kw)
        finally:
            dd.close()
        return data

    def run(*args, data=None):
        return runner.invoke(app, ["--data-dir", str(data or run.data), *args],
                             prog_name="jetlink")

    run.make = make
    run.data = make("w")
    return run


STOPPED_DOC = {
    "mirror_topic_name": "orders",
    "error_code": None,
    "error_message": None,
    "mirror_lags": [{"partition": 0, "lag": 2, "last_source_fetch_offset": 5},
                    {"partition": 1, "lag": 0, "last_source_fetch_offset": 3}],
    "clamps": [{"group": "G", "topic": "orders", "partition": 0, "from": 7, "to": 5}],
}


def restored_doc(status: str) -> dict:
    return {
        "mirror_topic_name": "orders",
        "partitions": [{"partition": 0, "messages_truncated": 2, "offset_truncated_to": 5},
                       {"partition": 1, "messages_truncated": 0, "offset_truncated_to": 3}],
        "mirror_status": status,
        "clamps": [{"group": "G", "topic": "orders", "partition": 0, "from": 7, "to": 5}],
    }


@pytest.mark.parametrize("dry_run", [False, True])
def test_mirrors_reverse_and_pause_json(cli, dry_run):
    extra = ["--dry-run"] if dry_run else []
    got = doc(cli("--cluster", "east", "mirrors", "reverse-and-pause", "orders", "--link", "L",
                  "-j", *extra))
    assert got == {"dry_run": dry_run, "stopped": STOPPED_DOC, "restored": restored_doc(PAUSED)}


def test_mirrors_reverse_and_start_json(cli):
    got = doc(cli("--cluster", "east", "mirrors", "reverse-and-start", "orders", "--link", "L",
                  "-j"))
    assert got == {"dry_run": False, "stopped": STOPPED_DOC, "restored": restored_doc(ACTIVE)}


@pytest.mark.parametrize(("verb", "dry_run", "lines"), [
    ("reverse-and-pause", False, [
        "Topic orders: mirror stopped; orders on the source cluster mirrors it from now on, "
        "paused (mirrors resume orders --link L on that cluster starts it)",
        "  Clamped consumer group G on orders partition 0: offset 7 -> 5",
        "Topic orders partition 0: 2 messages truncated, log end offset 5",
        "Topic orders partition 1: 0 messages truncated, log end offset 3",
        "  Clamped consumer group G on orders partition 0: offset 7 -> 5"]),
    ("reverse-and-pause", True, [
        "Topic orders: mirror would stop; orders on the source cluster would mirror it from "
        "now on, paused (mirrors resume orders --link L on that cluster starts it)",
        "  Would clamp consumer group G on orders partition 0: offset 7 -> 5",
        "Topic orders partition 0: 2 messages would be truncated, log end offset 5",
        "Topic orders partition 1: 0 messages would be truncated, log end offset 3",
        "  Would clamp consumer group G on orders partition 0: offset 7 -> 5"]),
    ("reverse-and-start", False, [
        "Topic orders: mirror stopped; orders on the source cluster mirrors it from now on",
        "  Clamped consumer group G on orders partition 0: offset 7 -> 5",
        "Topic orders partition 0: 2 messages truncated, log end offset 5",
        "Topic orders partition 1: 0 messages truncated, log end offset 3",
        "  Clamped consumer group G on orders partition 0: offset 7 -> 5"]),
])
def test_the_lines(cli, verb, dry_run, lines):
    r = ok(cli("--cluster", "east", "mirrors", verb, "orders", "--link", "L",
               *(["--dry-run"] if dry_run else [])))
    assert r.stdout.splitlines() == lines
    assert r.stderr == ""


@pytest.mark.parametrize("args", [
    ["mirrors", "reverse-and-pause", "orders", "--link", "L", "--dry-run"],
    ["mirrors", "reverse-and-start", "orders", "--link", "L", "--dry-run", "-j"],
    ["kafka-mirrors", "--reverse-and-pause", "--topics", "orders", "--link", "L", "--dry-run"],
    ["kafka-mirrors", "--reverse-and-pause-mirror", "--topics", "orders", "--link", "L",
     "--dry-run", "-j"],
    ["mirrors", "reverse-and-pause", "orders", "--link", "NOPE", "--dry-run"],
])
def test_a_dry_run_changes_no_byte(cli, args):
    ok(cli("--cluster", "east", "mirrors", "ls"))  # statuses current
    before = data_dir_bytes(cli.data)
    r = cli("--cluster", "east", *args)
    assert r.exit_code == (1 if "NOPE" in args else 0), r.stdout + r.stderr
    assert data_dir_bytes(cli.data) == before


def test_truncate_and_restore_run_again_is_done_not_refused(cli):
    """Every DR verb can be run again (a run killed after its transaction, or one that
    finished): the topic is the mirror through the link the verb makes, nothing is left to
    do, exit 0, nothing changed; a mirror through another link stays Kafka's refusal."""
    ok(cli("--cluster", "east", "mirrors", "failover", "orders", "--link", "L"))
    first = ok(cli("--cluster", "west", "mirrors", "truncate-and-restore", "orders",
                   "--link", "L"))
    assert "messages truncated" in first.stdout
    before = data_dir_bytes(cli.data)
    again = ok(cli("--cluster", "west", "mirrors", "truncate-and-restore", "orders",
                   "--link", "L"))
    assert again.stdout == ("Topic orders is already a mirror through link L (restored by an "
                            "earlier run): nothing left to do\n")
    assert json.loads(ok(cli("--cluster", "west", "mirrors", "truncate-and-restore", "orders",
                             "--link", "L", "-j")).stdout) == {
        "mirror_topic_name": "orders", "partitions": [], "clamps": [], "already_done": True}
    assert data_dir_bytes(cli.data) == before


@pytest.mark.parametrize("kafka", [
    ["--reverse-and-pause"], ["--reverse-and-pause-mirror"]])
@pytest.mark.parametrize("extra", [[], ["-j"], ["--dry-run"]])
def test_kafka_mirrors_runs_the_mirrors_verb(cli, kafka, extra):
    one, two = cli.make("one"), cli.make("two")
    a = cli("--cluster", "east", "kafka-mirrors", *kafka, "--topics", "orders", "--link", "L",
            *extra, data=one)
    b = cli("--cluster", "east", "mirrors", "reverse-and-pause", "orders", "--link", "L",
            *extra, data=two)
    assert (a.exit_code, a.stdout, a.stderr) == (ok(b).exit_code, b.stdout, b.stderr)
    s = cli("--cluster", "east", "kafka-mirrors", "--reverse-and-start-mirror", "--topics",
            "orders", "--link", "L", "--dry-run", data=one)
    t = cli("--cluster", "east", "mirrors", "reverse-and-start", "orders", "--link", "L",
            "--dry-run", data=two)
    assert (s.exit_code, s.stdout, s.stderr) == (t.exit_code, t.stdout, t.stderr)


@pytest.mark.parametrize(("args", "message"), [
    (["--reverse-and-pause", "--topics", "a,b", "--link", "L"],
     "--reverse-and-pause needs exactly one topic: --topics TOPIC"),
    (["--reverse-and-pause", "--topics", "orders"], "--reverse-and-pause needs --link LINK"),
    (["--reverse-and-pause", "--reverse-and-start", "--topics", "orders", "--link", "L"],
     "give only one action, not --reverse-and-start and --reverse-and-pause"),
])
def test_kafka_mirrors_usage_errors(cli, args, message):
    r = cli("--cluster", "east", "kafka-mirrors", *args)
    assert r.exit_code == 2
    assert message in r.stderr


def test_refused_when_not_bidirectional(cli):
    data = cli.make("one-way", reverse_link=False)
    before = data_dir_bytes(data)
    r = cli("--cluster", "east", "mirrors", "reverse-and-pause", "orders", "--link", "L",
            data=data)
    assert r.exit_code == 1
    assert r.stdout == ""
    assert r.stderr == (
        "jetlink: error: Cluster link 'L' is not bidirectional: cluster west has no link 'L' "
        "back to east (reverse-and-pause needs the link on both clusters, each pointing at "
        "the other) (INVALID_REQUEST 42)\n")
    r = cli("--cluster", "east", "kafka-mirrors", "--reverse-and-pause", "--topics", "orders",
            "--link", "L", "-j", data=data)
    assert r.exit_code == 1
    assert json.loads(r.stdout) == {"error": {
        "error_code": 42, "error_name": "INVALID_REQUEST",
        "message": "Cluster link 'L' is not bidirectional: cluster west has no link 'L' back "
                   "to east (reverse-and-pause needs the link on both clusters, each pointing "
                   "at the other)"}}
    assert data_dir_bytes(data) == before


def test_refused_with_the_source_down(cli):
    ok(cli("cluster", "down", "west"))
    before = data_dir_bytes(cli.data)
    r = cli("--cluster", "east", "mirrors", "reverse-and-pause", "orders", "--link", "L")
    assert r.exit_code == 1
    assert r.stderr == (
        "jetlink: error: Cluster link 'L': the source cluster west can not be reached: "
        "reverse-and-pause needs both clusters up (failover stops the mirror whatever the "
        "source's state) (INVALID_REQUEST 42)\n")
    assert data_dir_bytes(cli.data) == before


def _consume(cli, cluster: str) -> list[tuple[int, int, str]]:
    got = doc(cli("--cluster", cluster, "topic", "consume", "orders", "--from-beginning",
                  "-j"))
    return sorted((r["partition"], r["offset"], r["value"]) for r in got)


def test_reverse_and_pause_then_resume_flows_the_other_way(cli):
    ok(cli("--cluster", "east", "mirrors", "reverse-and-pause", "orders", "--link", "L"))
    described = doc(cli("--cluster", "west", "mirrors", "describe", "orders", "--link", "L",
                        "-j"))
    assert [(d["mirror_status"], d["source_topic_name"]) for d in described] == [
        (PAUSED, "orders")]
    ok(cli("--cluster", "east", "topic", "produce", "orders", "e0", "-p", "0"))
    ok(cli("--cluster", "east", "topic", "produce", "orders", "e1", "-p", "1"))
    assert _consume(cli, "west") == [  # paused: nothing copied, a5 and a6 truncated
        (0, 0, "a0"), (0, 1, "a1"), (0, 2, "a2"), (0, 3, "a3"), (0, 4, "a4"),
        (1, 0, "b0"), (1, 1, "b1"), (1, 2, "b2")]
    lags = doc(cli("--cluster", "west", "mirrors", "ls", "-j"))
    assert [(d["mirror_status"], d["max_per_partition_mirror_lag"]) for d in lags] == [
        (PAUSED, 1)]
    r = ok(cli("--cluster", "west", "mirrors", "resume", "orders", "--link", "L"))
    assert r.stdout == ("Request for resuming topic orders's mirror was successfully "
                        "completed.\n")
    assert _consume(cli, "west") == _consume(cli, "east") == [
        (0, 0, "a0"), (0, 1, "a1"), (0, 2, "a2"), (0, 3, "a3"), (0, 4, "a4"), (0, 5, "e0"),
        (1, 0, "b0"), (1, 1, "b1"), (1, 2, "b2"), (1, 3, "e1")]
    r = cli("--cluster", "west", "topic", "produce", "orders", "x", "-p", "0")
    assert r.exit_code == 1  # west's topic is the read-only mirror now


# == through `jetlink serve` and --rest-url =======================================================


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from test_rest_client import start_server, stop_server

    root = tmp_path_factory.mktemp("served")
    data = root / "data"
    data.mkdir(mode=0o700)
    served = start_server(root, data)
    yield served
    stop_server(served)


@pytest.fixture
def served_world(server, tmp_path):
    """``make(name, **kw)``: :func:`build`'s world in the served data directory under
    cluster names of its own (``w<name>``, ``e<name>``), then a copy of that directory for
    the local runs; returns (west, east, local data directory)."""

    def make(name: str, **kw) -> tuple[str, str, Path]:
        west, east = f"w{name}", f"e{name}"
        dd = DataDir(server.data)
        try:
            build(dd, SystemClock(), west=west, east=east, **kw)
        finally:
            dd.close()
        local = tmp_path / f"local-{name}"
        shutil.copytree(server.data, local)
        return west, east, local

    return make


def test_serve_round_trip_through_the_rest_client(server, served_world, tmp_path,
                                                 monkeypatch):
    from test_rest_client import TOKEN

    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)
    nowhere = tmp_path / "no-data-dir-for-remote-runs"

    def both(local: Path, cluster: str, *args):
        rest = ["--rest-url", server.url, "--rest-token", TOKEN]
        remote = runner.invoke(app, ["--data-dir", str(nowhere), "--cluster", cluster,
                                     "mirrors", *rest, *args], prog_name="jetlink")
        here = runner.invoke(app, ["--data-dir", str(local), "--cluster", cluster, "mirrors",
                                   *args], prog_name="jetlink")
        assert not nowhere.exists(), "a remote run touched the local store"
        assert remote.exception is None or isinstance(remote.exception, SystemExit)
        return here, remote

    def on_both(local: Path, fn):
        for data in (local, server.data):
            dd = DataDir(data)
            try:
                fn(dd)
            finally:
                dd.close()

    west, east, local = served_world("1")
    for extra in (["--dry-run"], ["--dry-run", "-j"]):
        a, b = both(local, east, "reverse-and-pause", "orders", "--link", "L", *extra)
        assert (ok(b).exit_code, b.stdout, b.stderr) == (a.exit_code, a.stdout, a.stderr)
    a, b = both(local, east, "reverse-and-pause", "orders", "--link", "L")
    assert (ok(b).exit_code, b.stdout, b.stderr) == (ok(a).exit_code, a.stdout, a.stderr)
    assert b.stdout.splitlines()[0] == (
        "Topic orders: mirror stopped; orders on the source cluster mirrors it from now on, "
        "paused (mirrors resume orders --link L on that cluster starts it)")
    # the other way: east's topic takes a record, west's paused mirror is resumed
    on_both(local, lambda dd: Kafka(dd.open(east), SystemClock()).produce(
        "orders", [(None, b"e0")], partition=0))
    a, b = both(local, west, "resume", "orders", "--link", "L")
    assert (ok(b).exit_code, b.stdout) == (ok(a).exit_code, a.stdout)
    a, b = both(local, west, "describe", "orders", "--link", "L", "-j")
    assert [d["mirror_lags"] for d in json.loads(ok(b).stdout)] == \
        [d["mirror_lags"] for d in json.loads(ok(a).stdout)] == [[
            {"partition": 0, "lag": 0, "last_source_fetch_offset": 6},
            {"partition": 1, "lag": 0, "last_source_fetch_offset": 3}]]
    seen = []
    on_both(local, lambda dd: seen.append(values(Kafka(dd.open(west), SystemClock()),
                                                 "orders")))
    assert seen == [[b"a0", b"a1", b"a2", b"a3", b"a4", b"e0"]] * 2
    # the JSON of a reverse, both ways
    west, east, local = served_world("2")
    a, b = both(local, east, "reverse-and-start", "orders", "--link", "L", "-j")
    assert json.loads(ok(b).stdout) == json.loads(ok(a).stdout) == {
        "dry_run": False, "stopped": STOPPED_DOC, "restored": restored_doc(ACTIVE)}
    # refusals read the same (the suffix names the side: Kafka's error, or HTTP's)
    west, east, local = served_world("3", reverse_link=False)
    a, b = both(local, east, "reverse-and-start", "orders", "--link", "L")
    assert a.exit_code == b.exit_code == 1
    text = (f"jetlink: error: Cluster link 'L' is not bidirectional: cluster {west} has no "
            f"link 'L' back to {east} (reverse-and-start needs the link on both clusters, "
            "each pointing at the other)")
    assert (a.stderr, b.stderr) == (text + " (INVALID_REQUEST 42)\n", text + " (HTTP 400)\n")
    a, b = both(local, east, "reverse-and-pause", "orders", "--link", "NOPE")
    assert a.exit_code == b.exit_code == 1
    assert a.stderr.rsplit(" (", 1)[0] == b.stderr.rsplit(" (", 1)[0] == \
        "jetlink: error: Cluster link 'NOPE' not found"


# == SIGKILL at each step, then the same command again ============================================

KILLED = """
import os, signal, sys
from jetlink.core.kafka import mirror_promote

point = sys.argv[1]

def die(*_a, **_k):
    os.kill(os.getpid(), signal.SIGKILL)

if point == "mid-stop":  # PENDING_STOPPED written, not yet STOPPED
    mirror_promote.finish_pending = die
    from jetlink.core.kafka.mirrors import Mirrors
    Mirrors.finish_pending = die
elif point == "after-stop":  # this database done, the other not touched
    mirror_promote.truncate_and_restore = die
elif point == "after-restore":  # both written, the mark not yet cleared
    real = mirror_promote.truncate_and_restore

    def restore_then_die(*a, **k):
        real(*a, **k)
        die()

    mirror_promote.truncate_and_restore = restore_then_die
from jetlink.cli import common
from jetlink.core.clock import ManualClock
common.make_clock = ManualClock  # the tests' time (cli_clock): no retention runs on the world
from jetlink.cli.main import run
sys.argv = ["jetlink", *sys.argv[2:]]
run()
"""


@pytest.mark.parametrize("point", ["mid-stop", "after-stop", "after-restore"])
def test_a_reverse_killed_at_each_step_is_finished_by_running_it_again(cli, point):
    import subprocess
    import sys

    args = ["--data-dir", str(cli.data), "--cluster", "east", "mirrors", "reverse-and-pause",
            "orders", "--link", "L"]
    proc = subprocess.run([sys.executable, "-c", KILLED, point, *args], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == -9, (proc.returncode, proc.stdout, proc.stderr)
    with sqlite3.connect(cli.data / "east.db") as conn:  # where the kill left it
        assert conn.execute("SELECT status, pending FROM mirrors").fetchall() == [
            ("PENDING_STOPPED" if point == "mid-stop" else STOPPED, "reverse")]
    with sqlite3.connect(cli.data / "west.db") as conn:  # the old source: restored or not
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'mirrors'"
                            ).fetchone() == ((1,) if point == "after-restore" else (0,))
    r = ok(cli(*args[2:]))  # the same command again
    lines = r.stdout.splitlines()
    assert lines[0].startswith("Topic orders: mirror stopped; orders on the source cluster "
                               "mirrors it from now on, paused")
    # what the killed run had done is not done twice
    truncated = {"after-restore": "0 messages truncated"}.get(point, "2 messages truncated")
    assert f"Topic orders partition 0: {truncated}, log end offset 5" in lines
    with sqlite3.connect(cli.data / "east.db") as conn:
        assert conn.execute("SELECT status, pending FROM mirrors").fetchall() == [
            (STOPPED, None)]
        assert conn.execute("SELECT committed FROM group_offsets WHERE grp = 'G' AND "
                            "partition = 0").fetchone() == (5,)
    listed = doc(cli("--cluster", "west", "mirrors", "ls", "-j"))
    assert [(d["mirror_topic_name"], d["mirror_status"]) for d in listed] == [
        ("orders", PAUSED)]
    ok(cli("--cluster", "east", "topic", "produce", "orders", "e0", "-p", "0"))
    ok(cli("--cluster", "west", "mirrors", "resume", "orders", "--link", "L"))
    assert _consume(cli, "west") == _consume(cli, "east")
    assert [v for p, _o, v in _consume(cli, "west") if p == 0] == [
        "a0", "a1", "a2", "a3", "a4", "e0"]
    again = cli(*args[2:])  # and once finished, it is done: refused
    assert again.exit_code == 1 and "has already stopped its mirror" in again.stderr


@pytest.mark.parametrize("as_json", [False, True])
def test_replicate_says_which_mirror_partitions_followed_their_sources_cut(cli, cli_clock,
                                                                            as_json):
    """A mirror of west (cluster c3) that copied a5, a6 before west's failback cut them:
    `replicate` cuts it back too, says so on stderr, and lists the cut in its JSON."""
    dd = DataDir(cli.data)
    try:
        dd.add_cluster("c3", "kafka")
        Links(dd, "c3", cli_clock).create("W", "west")
        Mirrors(dd, "c3", cli_clock).create("orders", "W")
        Mirrors(dd, "c3", cli_clock).step()
        Mirrors(dd, "east", cli_clock).failover(["orders"], "L")
        Mirrors(dd, "east", cli_clock).finish_pending()
        Kafka(dd.open("east"), cli_clock).produce("orders", [(None, b"e1")], partition=0)
        Mirrors(dd, "west", cli_clock).truncate_and_restore("orders", "L")
    finally:
        dd.close()
    if as_json:
        links = {(d["cluster"], d["link"]): d for d in doc(cli("replicate", "-j"))["links"]}
        assert links[("c3", "W")]["truncated"] == [
            {"topic": "orders", "partition": 0, "offset_truncated_to": 5,
             "messages_truncated": 2}]
        assert "truncated" not in links[("west", "L")]
    r = cli("replicate")
    assert r.exit_code == 0, r.output
    assert r.stderr == "" if as_json else r.stderr == (
        "jetlink: warning: mirror topic orders of link W@c3: partition 0 truncated to offset 5 "
        "(2 records removed): its source's log was cut back there (a fail-back's truncation, "
        "here or upstream); the mirror copies on from the source\n")
    assert _consume(cli, "c3") == _consume(cli, "west") == [
        (0, 0, "a0"), (0, 1, "a1"), (0, 2, "a2"), (0, 3, "a3"), (0, 4, "a4"), (0, 5, "e1"),
        (1, 0, "b0"), (1, 1, "b1"), (1, 2, "b2")]


def test_a_restored_mirror_knows_its_sources_epoch_and_one_cut_since_is_followed(dd, clock):
    """Fail-back cut points follow epochs: B's mirror of A was paused while A was cut back
    and given C's records (c1..c4 at 8..11); B's own tail (a2-1..a2-4) holds A's old
    records there. Reversing B cuts A back to where B's source epoch of A ends (8), not to
    where B stopped (12), and A then mirrors B's records exactly. The restored mirror
    starts with its source's epoch (never an unknown one: a cut before its first fetch is
    followed too)."""
    for name in ("A", "B", "C"):
        dd.add_cluster(name, "kafka")
    ka, kb = Kafka(dd.open("A"), clock), Kafka(dd.open("B"), clock)
    ka.create_topic("T", 1)
    ka.produce("T", [(None, f"a{i}".encode()) for i in range(1, 9)], partition=0)
    Links(dd, "B", clock).create("L", "A")
    Links(dd, "A", clock).create("L", "B")
    Links(dd, "C", clock).create("L", "A")
    mb, mc, ma = Mirrors(dd, "B", clock), Mirrors(dd, "C", clock), Mirrors(dd, "A", clock)
    mb.create("T", "L")
    mc.create("T", "L")
    mb.step()
    mc.step()
    mc.pause(["T"], "L")
    ka.produce("T", [(None, f"a2-{i}".encode()) for i in range(1, 5)], partition=0)
    mb.step()  # B: 12
    mb.pause(["T"], "L")
    mc.failover(["T"], "L")
    mc.finish_pending()
    Kafka(dd.open("C"), clock).produce("T", [(None, f"c{i}".encode()) for i in range(1, 6)],
                                       partition=0)
    Links(dd, "A", clock).create("LC", "C")
    assert ma.truncate_and_restore("T", "LC").messages_truncated == 4  # A cut to 8
    with sqlite3.connect(dd.path / "A.db") as conn:
        assert conn.execute("SELECT source_epoch FROM mirror_partitions WHERE topic = 'T'"
                            ).fetchall() == [(0,)]  # (C's epoch, never unknown)
    ma.step()
    ma.failover(["T"], "LC")
    ma.finish_pending()
    assert values(ka, "T")[8:] == [b"c1", b"c2", b"c3", b"c4", b"c5"]
    mb.resume(["T"], "L")
    _res, trunc = mb.reverse_and_start("T", "L")
    assert trunc.partitions == [{"partition": 0, "messages_truncated": 5,
                                 "offset_truncated_to": 8}]
    pump_links(dd, clock)
    assert values(ka, "T") == values(kb, "T") == [
        *(f"a{i}".encode() for i in range(1, 9)), *(f"a2-{i}".encode() for i in range(1, 5))]


def test_a_restore_failing_half_way_changes_nothing(world, monkeypatch):
    """The truncation, the mirror's rows and the topic's mirror mark are one transaction: a
    failure before its end (here the fence's removal) leaves the topic as it was, writable
    and whole (it was left a mirror that still took writes)."""
    dd, clock, west, east = world
    Mirrors(dd, "east", clock).failover(["orders"], "L")
    Mirrors(dd, "east", clock).finish_pending()
    before = values(west, "orders")

    def boom(*_a, **_k):
        raise RuntimeError("killed")

    monkeypatch.setattr(mirror_promote, "unfence_topic", boom)
    with pytest.raises(RuntimeError):
        Mirrors(dd, "west", clock).truncate_and_restore("orders", "L")
    assert values(west, "orders") == before
    assert west.describe_topic("orders").mirror_link is None
    assert Mirrors(dd, "west", clock).list() == []


def test_a_cut_keeps_the_compactions_progress_below_it(dd, clock):
    """What the cleaner cleaned below the cut is still clean (it marked the whole log dirty,
    so a compacted topic's mirror cleaned at once, ahead of its source, and lost records the
    source still served)."""
    from jetlink.core.kafka.epochs import truncate_partition
    from jetlink.core.kafka.topic_records import record_key, records_bytes

    dd.add_cluster("k", "kafka")
    k = Kafka(dd.open("k"), clock)
    k.create_topic("T", 1)
    k.produce("T", [(f"k{i}".encode(), b"v" * 20) for i in range(10)], partition=0)
    t_id = k.topic_rowid("T")
    conn = dd.open("k").conn
    with conn:
        conn.execute("UPDATE partitions SET cleaned = 6, clean_bytes = ? WHERE topic = ?",
                     (records_bytes(conn, record_key(t_id, 0, 0), record_key(t_id, 0, 6)),
                      t_id))
        truncate_partition(conn, t_id, 0, 8)  # above the cleaned part: kept as it is
        row = conn.execute("SELECT cleaned, clean_bytes, log_end FROM partitions").fetchone()
        assert row == (6, records_bytes(conn, record_key(t_id, 0, 0), record_key(t_id, 0, 6)),
                       8)
        truncate_partition(conn, t_id, 0, 4)  # inside it: clean up to the cut
        row = conn.execute("SELECT cleaned, clean_bytes, log_end FROM partitions").fetchone()
        assert row == (4, records_bytes(conn, record_key(t_id, 0, 0), record_key(t_id, 0, 4)),
                       4)
