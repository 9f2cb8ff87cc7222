"""Mirror topics (core/kafka/mirrors.py): creation conditions, replication, states, offset
sync, promote / failover with clamping (the seed's example), failing back."""

from __future__ import annotations

import pytest

from jetlink.core.kafka.errors import KafkaError
from jetlink.core.kafka.links import Links
from jetlink.core.kafka.mirrors import (
    ACTIVE,
    FAILED,
    PAUSED,
    SOURCE_UNAVAILABLE,
    STOPPED,
    Mirrors,
    OffsetClamp,
    pump_links,
)
from jetlink.core.kafka.topics import Kafka

MS = 1_000_000


@pytest.fixture
def world(dd, clock):
    dd.add_cluster("west", "kafka")
    dd.add_cluster("east", "kafka")
    west = Kafka(dd.open("west"), clock)
    east = Kafka(dd.open("east"), clock)
    return dd, clock, west, east


def link(dd, clock, name="L", source="west", dest="east", **configs):
    Links(dd, dest, clock).create(name, source, {k.replace("_", "."): str(v)
                                                for k, v in configs.items()})
    return Mirrors(dd, dest, clock)


def produce(k, topic, n, *, partition=0, start=0):
    return k.produce(topic, [(None, f"v{start + i}".encode()) for i in range(n)],
                     partition=partition)


def records(k, topic, partition=0):
    out = []
    offset = k.offsets(topic)[partition].log_start
    while True:
        got = k.fetch(topic, partition, offset, 1000)
        if not got:
            return out
        out += [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in got]
        offset = got[-1].offset + 1


def test_mirror_is_an_offset_preserving_copy(world):
    dd, clock, west, east = world
    west.create_topic("orders", 2)
    produce(west, "orders", 5, partition=0)
    produce(west, "orders", 3, partition=1)
    west.produce("orders", [(b"k", b"with header")], partition=1, headers=[("h", b"v")])
    m = link(dd, clock)
    m.create("orders", "L")
    pump_links(dd, clock)
    for p in (0, 1):
        assert records(east, "orders", p) == records(west, "orders", p)
    info = m.describe("orders", "L")
    assert (info.mirror_status, info.num_partitions, info.max_per_partition_mirror_lag) == (
        ACTIVE, 2, 0)
    with pytest.raises(KafkaError):
        east.produce("orders", [(None, b"x")])  # read-only


@pytest.mark.parametrize(
    "setup, topic, error",
    [
        ("none", "nope", "UNKNOWN_TOPIC_OR_PARTITION"),  # no source topic
        ("exists", "orders", "TOPIC_ALREADY_EXISTS"),  # a topic of that name here
    ],
)
def test_creation_conditions(world, setup, topic, error):
    dd, clock, west, east = world
    west.create_topic("orders", 1)
    m = link(dd, clock)
    if setup == "exists":
        east.create_topic("orders", 1)
    with pytest.raises(KafkaError) as err:
        m.create(topic, "L")
    assert err.value.name == error


def test_creation_needs_an_active_link(world):
    dd, clock, west, _east = world
    west.create_topic("orders", 1)
    m = link(dd, clock)
    dd.set_down("west", True)
    with pytest.raises(KafkaError, match="not ACTIVE|can not be reached"):
        m.create("orders", "L")


def test_start_offset_latest(world):
    dd, clock, west, east = world
    west.create_topic("orders", 1)
    produce(west, "orders", 4)
    m = link(dd, clock, mirror_start_offset_spec="latest")
    m.create("orders", "L")
    pump_links(dd, clock)
    produce(west, "orders", 2, start=4)
    pump_links(dd, clock)
    assert [r[0] for r in records(east, "orders")] == [4, 5]


def test_states_pause_unavailable_and_failed(world):
    dd, clock, west, _east = world
    west.create_topic("orders", 1)
    m = link(dd, clock, cluster_link_retry_timeout_ms=1000)
    m.create("orders", "L")
    m.pause(["orders"], "L")
    assert m.describe("orders", "L").mirror_status == PAUSED
    produce(west, "orders", 3)
    pump_links(dd, clock)
    assert m.describe("orders", "L").max_per_partition_mirror_lag == 3
    m.resume(["orders"], "L")
    pump_links(dd, clock)
    assert m.describe("orders", "L").mirror_status == ACTIVE
    dd.set_down("west", True)
    assert m.describe("orders", "L").mirror_status == SOURCE_UNAVAILABLE
    dd.set_down("west", False)
    assert m.describe("orders", "L").mirror_status == ACTIVE
    west.delete_topic("orders")
    pump_links(dd, clock)
    assert m.describe("orders", "L").mirror_status == ACTIVE  # retried for a while
    clock.advance(2000 * MS)
    info = m.describe("orders", "L")
    assert (info.mirror_status, info.mirror_topic_error) == (FAILED,
                                                             "SOURCE_TOPIC_MAY_BE_DELETED")


def test_a_paused_mirror_keeps_the_source_end_it_saw_once_the_source_is_down(world):
    """A PAUSED mirror copies nothing, but each link step records its source partitions'
    ends: with the source down its lag is the last end seen (it read 0, the end at the
    last fetch, before the records produced while paused), and the fetch stays the last
    fetch's."""
    dd, clock, west, _east = world
    west.create_topic("orders", 2)
    produce(west, "orders", 4, partition=0)
    m = link(dd, clock)
    m.create("orders", "L")
    pump_links(dd, clock)
    m.pause(["orders"], "L")
    produce(west, "orders", 3, partition=1)
    pump_links(dd, clock)
    ends = [(p.partition, p.source_hw, p.last_source_fetch_offset, p.lag)
            for p in m.describe("orders", "L").mirror_lags]
    assert ends == [(0, 4, 4, 0), (1, 3, 0, 3)]
    dd.set_down("west", True)
    info = m.describe("orders", "L")
    assert info.mirror_status == PAUSED
    assert [(p.partition, p.source_hw, p.lag) for p in info.mirror_lags] == [(0, 4, 0),
                                                                           (1, 3, 3)]
    assert info.max_per_partition_mirror_lag == 3


def test_partitions_added_on_the_source_are_added(world):
    dd, clock, west, east = world
    west.create_topic("orders", 1)
    m = link(dd, clock)
    m.create("orders", "L")
    west.alter_topic("orders", partitions=3)
    produce(west, "orders", 2, partition=2)
    clock.advance(6000 * MS)
    pump_links(dd, clock)
    assert len(east.describe_topic("orders").partitions) == 3
    assert [r[0] for r in records(east, "orders", 2)] == [0, 1]


def sync_link(dd, clock, **extra):
    return link(dd, clock, consumer_offset_sync_enable="true",
                consumer_offset_group_filters='{"groupFilters": [{"name": "*", '
                '"patternType": "LITERAL", "filterType": "INCLUDE"}]}', **extra)


def test_the_seeds_clamping_example(world):
    """Source at 100, mirrored up to 90; group A at 80 stays, group B at 95 becomes 90."""
    dd, clock, west, east = world
    west.create_topic("t", 1)
    produce(west, "t", 90)
    m = sync_link(dd, clock)
    m.create("t", "L")
    west.commit("A", {("t", 0): 80})
    west.commit("B", {("t", 0): 85})
    pump_links(dd, clock)  # 90 records and both offsets synced
    produce(west, "t", 10, start=90)  # the source reaches 100 ...
    west.commit("B", {("t", 0): 95})
    clock.advance(31_000 * MS)
    m.sync_offsets("L")
    dd.set_down("west", True)  # ... disaster before records 90..99 were mirrored
    results = m.failover(["t"], "L")
    assert results[0].ok
    assert results[0].clamps == [OffsetClamp("B", "t", 0, 95, 90)]
    assert east.committed("A")[("t", 0)] == 80
    assert east.committed("B")[("t", 0)] == 90
    assert m.describe("t", "L").mirror_status == STOPPED
    east.produce("t", [(None, b"after failover")])  # writable now
    assert east.offsets("t")[0].log_end == 91


def test_a_failover_cut_short_is_all_or_nothing_and_a_rerun_finishes_it(world, monkeypatch):
    """STOPPED, the clamps and the topic made writable are one transaction: a failover cut
    short before its end (here: the last step raising, as a kill would stop it) leaves the
    mirror as it was, PENDING, and the next run makes all three."""
    dd, clock, west, east = world
    west.create_topic("t", 1)
    produce(west, "t", 90)
    m = sync_link(dd, clock)
    m.create("t", "L")
    west.commit("B", {("t", 0): 85})
    pump_links(dd, clock)
    produce(west, "t", 10, start=90)
    west.commit("B", {("t", 0): 95})
    clock.advance(31_000 * MS)
    m.sync_offsets("L")
    dd.set_down("west", True)

    def killed(*_a, **_k):
        raise KeyboardInterrupt  # the process stopped here

    monkeypatch.setattr(type(m.kafka), "set_mirror_link", killed)
    with pytest.raises(KeyboardInterrupt):
        m.failover(["t"], "L")
    assert m.describe("t", "L").mirror_status != STOPPED
    assert east.committed("B")[("t", 0)] == 95  # not clamped: nothing of the end was made
    monkeypatch.undo()
    results = Mirrors(dd, "east", clock).failover(["t"], "L")
    assert results[0].ok, results[0].error_message
    assert east.committed("B")[("t", 0)] == 90
    assert m.describe("t", "L").mirror_status == STOPPED
    east.produce("t", [(None, b"after failover")])  # writable now


def test_promote_refusals_and_success(world):
    dd, clock, west, east = world
    west.create_topic("t", 1)
    m = sync_link(dd, clock)
    m.create("t", "L")
    produce(west, "t", 5)
    res = m.promote(["t"], "L")[0]  # lag 5
    assert not res.ok and "mirroring lag" in res.error_message
    pump_links(dd, clock)
    west.commit("G", {("t", 0): 3})
    res = m.promote(["t"], "L")[0]  # offset sync pending
    assert not res.ok and "consumer offset sync is pending" in res.error_message
    clock.advance(31_000 * MS)
    pump_links(dd, clock)
    west.alter_topic("t", configs={"retention.ms": "1000000"})
    res = m.promote(["t"], "L")[0]
    assert not res.ok and "config sync is pending (retention.ms)" in res.error_message
    clock.advance(6_000 * MS)
    pump_links(dd, clock)
    assert m.promote(["t"], "L", dry_run=True)[0].ok
    assert m.describe("t", "L").mirror_status == ACTIVE  # dry run changed nothing
    (res,) = m.promote(["t", "t"], "L")  # a topic named twice is promoted once
    assert res.ok and res.clamps == []
    assert m.describe("t", "L").mirror_status == STOPPED
    again = m.promote(["t"], "L")[0]
    assert again.already_stopped
    dd.set_down("west", True)
    assert [i.mirror_topic_name for i in m.list("L", "stopped")] == ["t"]


def test_promote_refused_when_the_source_is_down(world):
    dd, clock, west, _east = world
    west.create_topic("t", 1)
    m = link(dd, clock)
    m.create("t", "L")
    dd.set_down("west", True)
    res = m.promote(["t"], "L")[0]
    assert not res.ok and "not reachable" in res.error_message
    assert m.failover(["t"], "L")[0].ok


def test_promote_on_a_failed_link_names_the_link_s_error(world):
    """The source cluster removed and created again under its name: it answers, but is not
    the link's source (FAILED, SOURCE_CLUSTER_ID_MISMATCH): promote says that, not that the
    cluster is unreachable."""
    dd, clock, west, _east = world
    west.create_topic("t", 1)
    m = link(dd, clock)
    m.create("t", "L")
    dd.remove_cluster("west")
    dd.add_cluster("west", "kafka", now_ns=1)
    res = m.promote(["t"], "L")[0]
    assert not res.ok
    assert res.error_message.startswith(
        "Topic 't' can not be promoted: cluster link L is FAILED (SOURCE_CLUSTER_ID_MISMATCH: "
        "Source cluster 'west' was removed and re-created"), res.error_message


def test_offset_sync_skips_groups_active_on_the_destination(world):
    dd, clock, west, east = world
    west.create_topic("t", 1)
    produce(west, "t", 5)
    m = sync_link(dd, clock)
    m.create("t", "L")
    west.commit("busy", {("t", 0): 4})
    west.commit("idle", {("t", 0): 2})
    east.join("busy", "m1", ["t"], session_timeout_ms=60_000)
    pump_links(dd, clock)
    assert east.committed("idle") == {("t", 0): 2}
    assert east.committed("busy") == {}


def test_auto_create_with_filters(world):
    dd, clock, west, east = world
    for t in ["foo.a", "foo.bar.b", "other"]:
        west.create_topic(t, 1)
    link(dd, clock, auto_create_mirror_topics_enable="true",
         auto_create_mirror_topics_filters='{"topicFilters": ['
         '{"name": "foo", "patternType": "PREFIXED", "filterType": "INCLUDE"},'
         '{"name": "foo.bar", "patternType": "PREFIXED", "filterType": "EXCLUDE"}]}')
    pump_links(dd, clock)
    assert sorted(t.name for t in east.topics()) == ["foo.a"]
    east.delete_topic("foo.a")  # still matches the filters: it comes back
    pump_links(dd, clock)
    assert sorted(t.name for t in east.topics()) == ["foo.a"]


def test_a_topic_auto_create_cannot_mirror_is_an_error_of_its_task_until_it_can(world):
    """A selected source topic whose mirror topic cannot be made (it collides with a topic
    of the destination) is not skipped silently: the AutoCreateMirror task is IN_ERROR
    naming it, the step reports it; the collision gone, the mirror is made and the error
    cleared. A topic the link may not read stays no error of the task."""
    dd, clock, west, east = world
    west.create_topic("a.b", 1)
    west.create_topic("ok", 1)
    east.create_topic("a_b", 1)
    m = link(dd, clock, auto_create_mirror_topics_enable="true",
             auto_create_mirror_topics_filters='{"topicFilters": [{"name": "*", '
             '"patternType": "LITERAL"}]}')
    [rep] = pump_links(dd, clock)
    said = ("source topic 'a.b' not mirrored as 'a.b': Topic 'a.b' collides with existing "
            "topic: a_b")
    assert (rep.created, rep.errors) == (
        ["ok"], [f"auto-create: {said} (INVALID_TOPIC_EXCEPTION 17)"])
    task = next(t for t in m.links.get("L").tasks if t.task_name == "AutoCreateMirror")
    assert task.to_json() == {"task_name": "AutoCreateMirror", "state": "IN_ERROR", "errors": [
        {"error_code": "INVALID_TOPIC_EXCEPTION", "error_message": said}]}
    east.delete_topic("a_b")
    [rep] = pump_links(dd, clock)
    assert (rep.created, rep.errors) == (["a.b"], [])
    task = next(t for t in m.links.get("L").tasks if t.task_name == "AutoCreateMirror")
    assert (task.state, task.errors) == ("ACTIVE", ())


def test_chaining_and_fan_out(world):
    dd, clock, west, east = world
    dd.add_cluster("north", "kafka")
    north = Kafka(dd.open("north"), clock)
    west.create_topic("t", 1)
    produce(west, "t", 3)
    link(dd, clock, "WE", "west", "east").create("t", "WE")
    link(dd, clock, "EN", "east", "north").create("t", "EN")
    link(dd, clock, "WN", "west", "north")  # fan-out link; the name t is taken on north
    for _ in range(3):
        pump_links(dd, clock)
    assert records(north, "t") == records(west, "t")


def test_failback_truncate_and_restore(world):
    dd, clock, west, east = world
    west.create_topic("t", 1)
    produce(west, "t", 5)
    m_east = link(dd, clock, "L", "west", "east")
    m_east.create("t", "L")
    pump_links(dd, clock)
    produce(west, "t", 2, start=5)  # never reached east
    dd.set_down("west", True)
    m_east.failover(["t"], "L")
    east.produce("t", [(None, b"east-1"), (None, b"east-2")], partition=0)
    dd.set_down("west", False)
    m_west = link(dd, clock, "L", "east", "west")  # the reverse link
    res = m_west.truncate_and_restore("t", "L")
    assert res.partitions == [{"partition": 0, "messages_truncated": 2,
                               "offset_truncated_to": 5}]
    pump_links(dd, clock)
    assert records(west, "t") == records(east, "t")
    assert [r[3] for r in records(west, "t")][-2:] == [b"east-1", b"east-2"]


def test_link_failed_and_paused_link(world):
    dd, clock, west, _east = world
    west.create_topic("t", 1)
    m = link(dd, clock)
    m.create("t", "L")
    m.links.set_error("L", "AUTHENTICATION_FAILURE", "the link's credentials were revoked")
    assert m.describe("t", "L").mirror_status == "LINK_FAILED"
    m.links.clear_error("L")
    assert m.describe("t", "L").mirror_status == ACTIVE
    m.links.alter("L", {"cluster.link.paused": "true"})
    assert m.describe("t", "L").mirror_status == PAUSED
    produce(west, "t", 2)
    pump_links(dd, clock)
    assert m.describe("t", "L").max_per_partition_mirror_lag == 2  # nothing copied
    m.links.alter("L", {"cluster.link.paused": "false"})
    pump_links(dd, clock)
    assert m.describe("t", "L").max_per_partition_mirror_lag == 0


def test_an_exclude_filter_lets_an_auto_created_topic_go(world):
    dd, clock, west, east = world
    west.create_topic("foo.a", 1)
    m = link(dd, clock, auto_create_mirror_topics_enable="true",
             auto_create_mirror_topics_filters='{"topicFilters": [{"name": "*", '
             '"patternType": "LITERAL", "filterType": "INCLUDE"}]}')
    pump_links(dd, clock)
    assert [t.name for t in east.topics()] == ["foo.a"]
    m.links.alter("L", {"auto.create.mirror.topics.filters": '{"topicFilters": ['
                        '{"name": "*", "patternType": "LITERAL", "filterType": "INCLUDE"},'
                        '{"name": "foo.a", "patternType": "LITERAL", "filterType": "EXCLUDE"}]}'})
    east.delete_topic("foo.a")
    pump_links(dd, clock)
    assert east.topics() == []
    assert m.list("L") == []  # its mirror rows went with it


def test_dr_drill_consumers_resume_without_a_gap(world):
    """Produce, sync offsets, source down, failover: no group offset beyond the mirror's log
    end, and a consumer resuming on the destination reads the next record, no gap."""
    dd, clock, west, east = world
    west.create_topic("t", 2)
    m = sync_link(dd, clock)
    m.create("t", "L")
    for p in (0, 1):
        produce(west, "t", 50, partition=p)
    west.commit("billing", {("t", 0): 40, ("t", 1): 50})
    pump_links(dd, clock)
    for p in (0, 1):
        produce(west, "t", 10, partition=p, start=50)  # never mirrored
    west.commit("billing", {("t", 0): 55, ("t", 1): 60})
    clock.advance(31_000 * MS)
    m.sync_offsets("L")
    dd.set_down("west", True)
    res = m.failover(["t"], "L")[0]
    assert [(c.partition, c.from_offset, c.to_offset) for c in res.clamps] == [
        (0, 55, 50), (1, 60, 50)]
    ends = {p.partition: p.log_end for p in east.offsets("t")}
    for (_topic, p), off in east.committed("billing").items():
        assert off <= ends[p]
    east.produce("t", [(None, b"new-0")], partition=0)
    nxt = east.fetch("t", 0, east.committed("billing")[("t", 0)], 10)
    assert [r.offset for r in nxt] == [50]  # resumes at the mirror's end: nothing skipped
    assert nxt[0].value == b"new-0"


def test_reverse_and_start(world):
    dd, clock, west, east = world
    west.create_topic("t", 1)
    produce(west, "t", 3)
    m_east = link(dd, clock, "L", "west", "east")
    m_east.create("t", "L")
    pump_links(dd, clock)
    link(dd, clock, "L", "east", "west")  # the reverse link, same name
    produce(west, "t", 1, start=3)  # west has one record east never got
    res, trunc = m_east.reverse_and_start("t", "L")
    assert res.ok
    assert trunc.partitions == [{"partition": 0, "messages_truncated": 1,
                                 "offset_truncated_to": 3}]
    east.produce("t", [(None, b"from east")])
    pump_links(dd, clock)
    assert [r[3] for r in records(west, "t")] == [b"v0", b"v1", b"v2", b"from east"]
    with pytest.raises(KafkaError):
        west.produce("t", [(None, b"x")])  # west's topic is the mirror now


def test_bulk_check_refuses_what_bulk_begin_would_holding_nothing(world):
    """The checks a bulk copy's driver start waits for: the link, an existing mirror's
    state, the source topic; nothing is created or held."""
    dd, clock, west, _east = world
    m = link(dd, clock)
    with pytest.raises(KafkaError) as err:
        m.bulk_check("nope", "L")
    assert (err.value.name, err.value.description) == (
        "UNKNOWN_TOPIC_OR_PARTITION",
        "Topic 'nope' does not exist on the source cluster west of link 'L'")
    assert not m.kafka.has_topic("nope")
    with pytest.raises(KafkaError) as err:
        m.bulk_check("nope", "X")
    assert err.value.name == "CLUSTER_LINK_NOT_FOUND"
    west.create_topic("orders", 1)
    m.bulk_check("orders", "L")  # a new mirror of a source topic that is there: no refusal
    assert not m.kafka.has_topic("orders")


def test_a_mirror_asked_of_another_link_names_its_own(world):
    """A verb given the wrong --link for a mirror topic: not mirrored by that link, with
    the link it is a mirror topic of as the hint."""
    dd, clock, west, east = world
    west.create_topic("t", 1)
    link(dd, clock, "L")
    m = link(dd, clock, "N")
    m.create("t", "N")
    res = m.failover(["t"], "L")[0]
    assert not res.ok
    assert (res.error_message, res.hint) == ("Topic 't' is not mirrored",
                                             "it is a mirror topic of link N: give --link N")
