"""`jetlink mirrors ...` through the CLI: kafka-mirrors' lines, describe format, JSON, exit
codes, and `jetlink replicate` driving links."""

from __future__ import annotations

import json

import pytest
from helpers import data_dir_bytes, doc, ok

from jetlink.core.kafka.links import Links
from jetlink.core.kafka.topics import Kafka
from jetlink.core.store import DataDir


@pytest.fixture
def world(jl, cli_clock):
    """west holds topic `orders` (2 partitions, 5 + 3 records, group G at 4 on partition 0);
    east holds link L (west -> east) with offset sync on for every group."""
    dd = DataDir(jl.data)
    dd.add_cluster("west", "kafka")
    dd.add_cluster("east", "kafka")
    west = Kafka(dd.open("west"), cli_clock)
    west.create_topic("orders", 2)
    west.produce("orders", [(None, f"a{i}".encode()) for i in range(5)], partition=0)
    west.produce("orders", [(None, f"b{i}".encode()) for i in range(3)], partition=1)
    west.commit("G", {("orders", 0): 4})
    Links(dd, "east", cli_clock).create("L", "west", {
        "consumer.offset.sync.enable": "true",
        "consumer.offset.group.filters": json.dumps({"groupFilters": [
            {"name": "*", "patternType": "LITERAL", "filterType": "INCLUDE"}]}),
    })
    yield dd, west
    dd.close()


def east(jl, *args):
    return jl("--cluster", "east", *args)


def test_create_describe_and_list(jl, world):
    assert ok(east(jl, "mirrors", "create", "orders", "--link", "L")).stdout == \
        "Created topic orders.\n"
    ok(east(jl, "replicate"))
    out = ok(east(jl, "mirrors", "describe", "orders", "--link", "L")).stdout.splitlines()
    assert out[0].startswith("Topic: orders\tLinkName: L\tLinkId: ")
    assert "\tSourceTopic: orders\tState: ACTIVE\tStoppedSequenceNumber: 0\tStateTime: " in out[0]
    assert out[1].startswith("\tPartition: 0\tState: ACTIVE\tLocalLogEndOffset: 5\t"
                             "LastFetchSourceHighWatermark: 5\tLag: 0\tTimeSinceLastFetchMs: ")
    assert out[2].startswith("\tPartition: 1\tState: ACTIVE\tLocalLogEndOffset: 3\t")
    docs = doc(east(jl, "mirrors", "ls", "-j"))
    assert [(d["mirror_topic_name"], d["mirror_status"], d["num_partitions"],
             d["max_per_partition_mirror_lag"]) for d in docs] == [("orders", "ACTIVE", 2, 0)]
    d = doc(east(jl, "mirrors", "describe", "orders", "--link", "L", "-j"))[0]
    assert list(d) == ["link_name", "mirror_topic_name", "source_topic_name", "num_partitions",
                       "mirror_lags", "mirror_status", "mirror_topic_error", "state_time_ms"]
    assert d["mirror_lags"] == [
        {"partition": 0, "lag": 0, "last_source_fetch_offset": 5},
        {"partition": 1, "lag": 0, "last_source_fetch_offset": 3},
    ]


def test_empty_list_and_unknown_link(jl, world):
    assert ok(east(jl, "mirrors", "ls")).stderr == "No mirror topics found.\n"
    result = east(jl, "mirrors", "ls", "--link", "NOPE")
    assert result.exit_code == 1 and "NOPE" in result.stderr
    for verb in ("promote", "failover", "pause", "resume"):
        result = ok(east(jl, "mirrors", verb, "--link", "L"))
        assert (result.stdout, result.stderr) == (
            "", f"Link 'L' has no mirror topics: nothing to {verb}\n")
        assert doc(east(jl, "mirrors", verb, "--link", "L", "-j"))["data"] == []
    ok(east(jl, "mirrors", "create", "orders", "--link", "L"))
    result = east(jl, "mirrors", "describe", "orders", "--link", "NOPE")
    assert (result.exit_code, result.stderr) == (
        1, "jetlink: error: Cluster link 'NOPE' not found (CLUSTER_LINK_NOT_FOUND 10000)\n")


def test_create_config_takes_comma_separated_pairs(jl, world):
    ok(east(jl, "mirrors", "create", "orders", "--link", "L", "--config",
            "mirror.start.offset.spec=earliest,min.insync.replicas=1"))
    line = ok(east(jl, "topic", "describe", "orders")).stdout.splitlines()[0]
    assert line.endswith("Configs: min.insync.replicas=1"), line


def test_create_on_a_link_that_is_not_active_says_what_makes_it_active(jl, world):
    ok(east(jl, "links", "alter", "L", "--config", "cluster.link.paused=true"))
    res = east(jl, "mirrors", "create", "orders", "--link", "L")
    assert (res.exit_code, res.stderr) == (1, (
        "jetlink: error: Cluster link 'L' is PAUSED, not ACTIVE: mirror topics can only be "
        "created on an active link (INVALID_REQUEST 42): resume it: jetlink --cluster east "
        "links alter L --config cluster.link.paused=false\n"))
    ok(east(jl, "links", "alter", "L", "--config", "cluster.link.paused=false"))
    ok(jl("cluster", "down", "west"))
    res = east(jl, "mirrors", "create", "orders", "--link", "L")
    assert (res.exit_code, res.stderr) == (1, (
        "jetlink: error: Cluster link 'L' is UNAVAILABLE, not ACTIVE: mirror topics can only be "
        "created on an active link (INVALID_REQUEST 42): its source cluster west is "
        "unreachable (jetlink cluster up west when it is marked down)\n"))


def test_create_refusals(jl, world):
    result = east(jl, "mirrors", "create", "nope", "--link", "L")
    assert result.exit_code == 1
    assert "Topic 'nope' does not exist on the source cluster west" in result.stderr


def test_create_takes_the_confluent_cli_replication_factor(jl, world):
    """confluent kafka mirror create's --replication-factor (and kafka-mirrors --create's):
    checked as a topic's on this one-broker cluster, before anything is created (the
    databases' bytes: the fixture's own connection stays open)."""
    from helpers import data_dir_bytes

    before = data_dir_bytes(jl.data, databases_only=True)
    res = east(jl, "mirrors", "create", "orders", "--link", "L", "--replication-factor", "3")
    assert (res.exit_code, res.stderr) == (1, (
        "jetlink: error: Unable to replicate the partition 3 time(s): The target replication "
        "factor of 3 cannot be reached because only 1 broker(s) are registered. "
        "(INVALID_REPLICATION_FACTOR 38)\n"))
    res = jl("kafka-mirrors", "--bootstrap-server", "east:9092", "--create", "--mirror-topic",
             "orders", "--link", "L", "--replication-factor", "0")
    assert res.exit_code == 1 and "(INVALID_REPLICATION_FACTOR 38)" in res.stderr
    assert data_dir_bytes(jl.data, databases_only=True) == before
    assert ok(east(jl, "mirrors", "create", "orders", "--link", "L", "--replication-factor",
                   "1")).stdout == "Created topic orders.\n"


def test_a_link_given_twice_is_refused_naming_both(jl, world):
    """--link L --link R acted on R, silently (Click keeps the last): a failover of the
    wrong link's mirrors. One link, exactly (Confluent's "exactly one specified cluster
    link"): a usage error naming both values, nothing done."""
    from helpers import data_dir_bytes

    ok(east(jl, "mirrors", "create", "orders", "--link", "L"))
    before = data_dir_bytes(jl.data, databases_only=True)
    for args in (["--cluster", "east", "mirrors", "failover", "-l", "L", "-l", "R"],
                 ["kafka-mirrors", "--bootstrap-server", "east:9092", "--failover",
                  "--link", "L", "--links", "R"]):
        res = jl(*args)
        assert res.exit_code == 2, res.output
        assert "given 2 times (L, R): it takes one value" in res.stderr
    assert data_dir_bytes(jl.data, databases_only=True) == before


def test_promote_refused_with_lag_then_promoted(jl, world):
    dd, west = world
    ok(east(jl, "mirrors", "create", "orders", "--link", "L"))
    west.produce("orders", [(None, b"late")], partition=0)  # not replicated yet
    east_k = Kafka(dd.open("east"), None)
    result = east(jl, "mirrors", "promote", "orders", "--link", "L", "--dry-run")
    assert result.exit_code == 1
    assert "\nTopic 'orders' can not be promoted: it has mirroring lag " \
           "(partition 0: 1)" in "\n" + result.stderr  # (the topic named once)
    ok(east(jl, "replicate"))
    out = ok(east(jl, "mirrors", "promote", "orders", "--link", "L")).stdout
    assert out == (
        "Calculating max offset and ms lag for mirror topics: [orders]\n"
        "Finished calculating max offset lag and max lag ms for mirror topics: [orders]\n"
        "Request for stopping topic orders's mirror was successfully scheduled. Please use the "
        "describe command with the --pending-stopped-only option to monitor progress.\n"
    )
    assert doc(east(jl, "mirrors", "ls", "--mirror-status", "stopped", "-j"))[0][
        "mirror_topic_name"] == "orders"
    assert east_k.committed("G") == {("orders", 0): 4}
    again = ok(east(jl, "mirrors", "promote", "orders", "--link", "L")).stderr
    assert "Topic 'orders' has already stopped its mirror from 'L'\n" in again
    # documented: a re-run is no failure (exit 0), the row carries INVALID_REQUEST 42
    again = doc(ok(east(jl, "mirrors", "promote", "orders", "--link", "L", "-j")))["data"]
    assert [(x["error_code"], x["error_message"]) for x in again] == [
        (42, "Topic 'orders' has already stopped its mirror from 'L'")]


def test_a_forced_link_delete_prints_the_clamps_of_its_failover(jl, world, cli_clock):
    """links delete --force fails the link's mirror topics over: the consumer offsets that
    clamps are printed (and in --json), as mirrors failover prints them."""
    dd, west = world
    ok(east(jl, "mirrors", "create", "orders", "--link", "L"))
    ok(east(jl, "replicate"))
    west.produce("orders", [(None, b"x"), (None, b"y")], partition=0)
    west.commit("G", {("orders", 0): 7})
    cli_clock.advance(31_000_000_000)
    from jetlink.core.kafka.mirrors import Mirrors

    Mirrors(dd, "east", cli_clock).sync_offsets("L")
    ok(jl("cluster", "down", "west"))
    out = ok(east(jl, "links", "delete", "L", "--force"))
    assert out.stdout == ("Clamped consumer group G on orders partition 0: offset 7 -> 5\n"
                          "Cluster link 'L' deletion successfully completed.\n")
    assert out.stderr == "jetlink: mirror topics of link L stopped mirroring: orders\n"
    assert doc(east(jl, "group", "describe", "G", "-j"))  # the group is there, clamped
    from jetlink.core.kafka.topics import Kafka

    assert Kafka(dd.open("east"), cli_clock).committed("G") == {("orders", 0): 5}


def test_failover_prints_the_clamps(jl, world, cli_clock):
    dd, west = world
    ok(east(jl, "mirrors", "create", "orders", "--link", "L"))
    ok(east(jl, "replicate"))  # 5 records and G at 4 synced
    west.produce("orders", [(None, b"x"), (None, b"y")], partition=0)
    west.commit("G", {("orders", 0): 7})
    cli_clock.advance(31_000_000_000)
    from jetlink.core.kafka.mirrors import Mirrors

    m = Mirrors(dd, "east", cli_clock)
    m.sync_offsets("L")  # only the offset moved
    ok(jl("cluster", "down", "west"))
    dry = ok(east(jl, "mirrors", "failover", "orders", "--link", "L", "--dry-run")).stdout
    assert "  Would clamp consumer group G on orders partition 0: offset 7 -> 5\n" in dry
    out = ok(east(jl, "mirrors", "failover", "--link", "L")).stdout
    assert "  Clamped consumer group G on orders partition 0: offset 7 -> 5\n" in out
    result = doc(east(jl, "mirrors", "describe", "orders", "--link", "L", "-j"))[0]
    assert result["mirror_status"] == "STOPPED"
    lines = ok(east(jl, "mirrors", "describe", "orders", "--link", "L")).stdout.splitlines()
    assert "\tLastFetchSourceHighWatermark: -1\tLag: -1\t" in lines[1]


def test_pause_resume_json(jl, world):
    ok(east(jl, "mirrors", "create", "orders", "--link", "L"))
    d = doc(east(jl, "mirrors", "pause", "orders", "--link", "L", "-j"))
    assert d["kind"] == "KafkaAlterMirrorResultList"
    # a success's error_code is null, as REST v3's alter-mirrors answer has it
    assert [(x["mirror_topic_name"], x["error_code"], x["error_message"])
            for x in d["data"]] == [("orders", None, None)]
    assert doc(east(jl, "mirrors", "ls", "-j"))[0]["mirror_status"] == "PAUSED"
    ok(east(jl, "mirrors", "resume", "orders", "--link", "L"))
    assert doc(east(jl, "mirrors", "ls", "-j"))[0]["mirror_status"] == "ACTIVE"


def test_not_mirrored_and_missing_link_option(jl, world):
    out = east(jl, "mirrors", "promote", "other", "--link", "L")
    assert out.exit_code == 1 and "Topic 'other' is not mirrored\n" in out.stderr
    assert east(jl, "mirrors", "promote", "orders").exit_code == 2


def test_a_misspelt_mirror_topic_is_not_mirrored_with_a_suggestion_and_nothing_else(jl, world):
    """No "Calculating ..." lines for a topic that is no mirror; the closest mirror topic of
    the link is suggested (did_you_mean); the REST document stays Confluent's."""
    ok(east(jl, "mirrors", "create", "orders", "--link", "L"))
    out = east(jl, "mirrors", "failover", "ordrs", "--link", "L")
    assert (out.exit_code, out.stderr) == (
        1, "Topic 'ordrs' is not mirrored; did you mean orders?\n")
    far = east(jl, "mirrors", "promote", "zzz", "--link", "L")
    assert (far.exit_code, far.stderr) == (1, "Topic 'zzz' is not mirrored\n")
    d = json.loads(east(jl, "mirrors", "failover", "ordrs", "--link", "L", "-j").stdout)
    assert d["data"] == [{"mirror_topic_name": "ordrs", "error_code": 42,
                          "error_message": "Topic 'ordrs' is not mirrored", "mirror_lags": [],
                          "clamps": []}]
    both = east(jl, "mirrors", "pause", "ordrs", "orders", "--link", "L")
    assert "Topic 'ordrs' is not mirrored; did you mean orders?\n" in both.stderr
    # describe too (no topic of that name at all: Kafka's error, then the suggestion)
    out = east(jl, "mirrors", "describe", "ordrs", "--link", "L")
    assert (out.exit_code, out.stderr) == (1, (
        "jetlink: error: This server does not host this topic-partition: there is no topic "
        "'ordrs'. (UNKNOWN_TOPIC_OR_PARTITION 3): did you mean orders?\n"))


def test_describe_of_a_topic_that_does_not_exist_is_unknown_topic(jl, world):
    """No topic of the name: Kafka's UNKNOWN_TOPIC_OR_PARTITION (the REST API's 40403 for
    the same); a topic that exists and is no mirror: INVALID_REQUEST "is not mirrored"."""
    ok(east(jl, "topic", "create", "plain"))
    missing = east(jl, "mirrors", "describe", "nosuch", "--link", "L", "-j")
    message = "This server does not host this topic-partition: there is no topic 'nosuch'."
    assert (missing.exit_code, json.loads(missing.stdout)) == (1, {"error": {
        "error_code": 3, "error_name": "UNKNOWN_TOPIC_OR_PARTITION", "message": message}})
    # the value is named in the message, before the code, as every Kafka error's
    assert east(jl, "mirrors", "describe", "nosuch", "--link", "L").stderr == (
        f"jetlink: error: {message} (UNKNOWN_TOPIC_OR_PARTITION 3)\n")
    plain = east(jl, "mirrors", "describe", "plain", "--link", "L")
    assert (plain.exit_code, plain.stderr) == (
        1, "jetlink: error: Topic 'plain' is not mirrored by link 'L' (INVALID_REQUEST 42)\n")


def test_replicate_reports_links(jl, world):
    ok(east(jl, "mirrors", "create", "orders", "--link", "L"))
    d = doc(jl("replicate", "-j"))
    assert [(x["link"], x["cluster"], x["state"], x["mirrors"], x["lag"]) for x in d["links"]] \
        == [("L", "east", "ACTIVE", 1, 0)]
    ok(jl("cluster", "down", "west"))
    res = jl("replicate")
    assert (res.exit_code, res.stderr) == (1, "jetlink: 1 link in error: exit status 1\n")
    out = res.stdout
    assert "│ L@east │ UNAVAILABLE │" in out
    assert doc(east(jl, "mirrors", "ls", "-j"))[0]["mirror_status"] == "SOURCE_UNAVAILABLE"


def test_replicate_counts_links_and_agreements_in_error_by_their_own_word(jl, world):
    """A cluster link in error is a link, a NATS mirror or source an agreement: the last line
    counts each by its word, both when both are."""
    ok(east(jl, "mirrors", "create", "orders", "--link", "L"))
    ok(jl("cluster", "add", "nw"))
    ok(jl("--cluster", "nw", "stream", "add", "ORDERS", "--subjects", "orders.>",
          "--defaults"))
    ok(jl("stream", "add", "BACKUP", "--mirror", "ORDERS@nw", "--defaults"))
    ok(jl("replicate"))
    ok(jl("cluster", "down", "nw"))
    res = jl("replicate")
    assert (res.exit_code, res.stderr) == (1, "jetlink: 1 agreement in error: exit status 1\n")
    ok(jl("cluster", "down", "west"))
    res = jl("replicate")
    assert (res.exit_code, res.stderr) == (
        1, "jetlink: 1 agreement and 1 link in error: exit status 1\n")
    ok(jl("cluster", "up", "nw"))
    res = jl("replicate")
    assert (res.exit_code, res.stderr) == (1, "jetlink: 1 link in error: exit status 1\n")


def test_replicate_exits_1_while_a_mirror_is_failed(jl, world, cli_clock):
    """A mirror whose source topic is gone copies nothing: `replicate` names it in the
    link's error and exits 1, with when it fails inside the retry timeout, FAILED past it
    (it exited 0 with an empty Error column, so a cron job on its status never noticed)."""
    dd, west = world
    ok(east(jl, "links", "alter", "L", "-c", "cluster.link.retry.timeout.ms=1000"))
    ok(east(jl, "mirrors", "create", "orders", "--link", "L"))
    ok(jl("replicate"))
    ok(jl("--cluster", "west", "topic", "rm", "orders", "-f"))
    res = jl("replicate", "-j")  # inside the retry timeout: said, with when it fails
    assert res.exit_code == 1
    assert json.loads(res.stdout)["errors"] == 1  # the link in error, as the exit status
    assert json.loads(res.stdout)["links"][0]["errors"] == [
        "orders: source topic orders not found: the mirror fails in 1s "
        "(cluster.link.retry.timeout.ms) unless it comes back"]
    # describe says it too, on stderr (its lines stay kafka-mirrors'; ACTIVE, NO_ERROR in
    # REST's document, as Confluent's until it fails)
    res = ok(east(jl, "mirrors", "describe", "orders", "--link", "L"))
    assert res.stderr == (
        "jetlink: warning: mirror topic orders: source topic orders not found: the mirror "
        "fails in 1s (cluster.link.retry.timeout.ms) unless it comes back\n")
    assert "\tState: ACTIVE\t" in res.stdout
    cli_clock.advance(2_000_000_000)
    res = jl("replicate", "-j")
    assert res.exit_code == 1
    (link,) = json.loads(res.stdout)["links"]
    assert link["errors"] == ["orders: mirror FAILED (SOURCE_TOPIC_MAY_BE_DELETED)"]
    assert res.stderr == "jetlink: 1 link in error: exit status 1\n"  # a link, no agreement


def test_a_source_topic_created_again_under_its_name_is_not_copied_on(jl, world, cli_clock):
    """The topic mirrored was deleted and another made under its name (another topic id,
    KIP-516): its records are never copied into the mirror (it mixed both: the old records,
    then the new ones from the mirror's offset on, ACTIVE with lag 0); said by `replicate`
    (exit 1), FAILED with SOURCE_TOPIC_MAY_BE_DELETED after the retry timeout."""
    dd, west = world
    ok(east(jl, "links", "alter", "L", "-c", "cluster.link.retry.timeout.ms=1000"))
    ok(east(jl, "mirrors", "create", "orders", "--link", "L"))
    ok(jl("replicate"))
    ok(jl("--cluster", "west", "topic", "rm", "orders", "-f"))
    ok(jl("--cluster", "west", "topic", "create", "orders", "--partitions", "2"))
    for i in range(12):
        ok(jl("--cluster", "west", "topic", "produce", "orders", f"new {i}", "--partition",
              "0"))
    res = jl("replicate", "-j")
    assert res.exit_code == 1
    assert json.loads(res.stdout)["links"][0]["errors"] == [
        "orders: source topic orders was deleted and created again (another topic id): its "
        "records are not copied into this mirror, which fails after "
        "cluster.link.retry.timeout.ms; to mirror the new topic, delete mirror topic orders "
        "and create it again, or keep what it holds with mirrors failover"]
    got = doc(east(jl, "topic", "consume", "orders", "--from-beginning", "-j"))
    assert sorted(r["value"] for r in got) == sorted(
        [f"a{i}" for i in range(5)] + [f"b{i}" for i in range(3)])
    cli_clock.advance(2_000_000_000)
    res = jl("replicate", "-j")
    assert json.loads(res.stdout)["links"][0]["errors"] == [
        "orders: mirror FAILED (SOURCE_TOPIC_MAY_BE_DELETED)"]
    (m,) = doc(east(jl, "mirrors", "ls", "-j"))
    assert (m["mirror_status"], m["mirror_topic_error"]) == ("FAILED",
                                                             "SOURCE_TOPIC_MAY_BE_DELETED")


def test_a_reset_of_a_synced_group_on_a_mirror_warns_that_the_sync_sets_it_back(jl, world):
    """A group whose offsets the link syncs, reset on the destination's mirror topic: the
    link's next offset sync sets them back to the source's (Confluent's rule for groups not
    active on the destination): said, naming the link; a dry run, a group the filters leave
    out or a promoted mirror: nothing said."""
    ok(east(jl, "mirrors", "create", "orders", "--link", "L"))
    r = ok(east(jl, "group", "set-offsets", "G", "--topic", "orders", "--to-offset", "1"))
    assert r.stderr == (
        "jetlink: warning: cluster link L syncs the offsets of group G on mirror topic orders "
        "(consumer.offset.sync.enable): its next offset sync sets the reset offsets back to the "
        "source's; leave the group out of consumer.offset.group.filters, or promote the mirror, "
        "to keep them\n")
    r = ok(east(jl, "group", "set-offsets", "G", "--topic", "orders", "--to-offset", "1",
                "--dry-run"))
    assert "warning" not in r.stderr
    ok(east(jl, "links", "alter", "L", "-c", 'consumer.offset.group.filters={"groupFilters":'
            '[{"name":"G","patternType":"LITERAL","filterType":"EXCLUDE"},'
            '{"name":"*","patternType":"LITERAL","filterType":"INCLUDE"}]}'))
    r = ok(east(jl, "group", "set-offsets", "G", "--topic", "orders", "--to-offset", "1"))
    assert "warning" not in r.stderr


def test_replicate_follow_counts_what_the_links_copied_when_it_stops(jl, world, monkeypatch):
    """The summary of replicate --follow counts the records the cluster links copied too
    (its lines said 8 copied; the summary said 0)."""
    from jetlink.cli import replicate as replicate_cli

    _dd, west = world
    ok(east(jl, "mirrors", "create", "orders", "--link", "L"))  # (its step copies the 8)
    west.produce("orders", [(None, f"c{i}".encode()) for i in range(6)], partition=0)

    def stop(_seconds):
        raise KeyboardInterrupt

    monkeypatch.setattr(replicate_cli, "sleep", stop)
    r = jl("replicate", "--follow")
    assert r.exit_code == 130, (r.stdout, r.stderr)
    assert r.stderr.splitlines()[-1] == ("Stopped after 2 steps: 0 messages copied, 6 records "
                                         "by cluster links")


def test_deleting_a_topic_auto_create_makes_again_warns_with_the_way_out(jl, tmp_path):
    """Confluent's Mirror Topics: a mirror topic the link's auto-create filters select is
    created again by the next step (its history copied again), so its delete is futile:
    topic rm says so before it deletes, naming the EXCLUDE filter that makes it stick."""
    ok(jl("cluster", "add", "west", "--kind", "kafka"))
    ok(jl("cluster", "add", "east", "--kind", "kafka"))
    ok(jl("--cluster", "west", "topic", "create", "foo"))
    filters = tmp_path / "tf.json"
    filters.write_text(json.dumps({"topicFilters": [
        {"name": "*", "patternType": "LITERAL", "filterType": "INCLUDE"}]}))
    ok(east(jl, "links", "create", "A", "--source-cluster", "west", "--config",
            "auto.create.mirror.topics.enable=true", "--config", "cluster.link.prefix=w.",
            "--topic-filters-json-file", str(filters)))
    ok(jl("replicate"))
    res = ok(east(jl, "topic", "rm", "w.foo", "-f"))
    assert res.stderr == (
        "jetlink: warning: link A's auto-create selects source topic foo, which exists: its "
        "next step creates w.foo again and copies its history; to delete it for good, add an "
        "EXCLUDE filter for foo to the link's auto.create.mirror.topics.filters first "
        "(jetlink links alter A --config ...)\n")
    ok(east(jl, "topic", "create", "plain"))  # no link selects it: nothing said
    assert ok(east(jl, "topic", "rm", "plain", "-f")).stderr == ""


def test_promote_of_a_paused_lagging_mirror_says_to_resume_it(jl, world):
    """A paused mirror copies nothing: "wait for it to catch up" would wait forever, so the
    refusal says to resume it first."""
    _dd, west = world
    ok(east(jl, "mirrors", "create", "orders", "--link", "L"))
    ok(jl("replicate"))
    ok(east(jl, "mirrors", "pause", "orders", "--link", "L"))
    west.produce("orders", [(None, b"late")], partition=0)
    res = east(jl, "mirrors", "promote", "orders", "--link", "L", "--dry-run")
    assert ("Topic 'orders' can not be promoted: it has mirroring lag (partition 0: 1); it "
            "is paused: resume it (jetlink mirrors resume orders --link L) and let it catch "
            "up, or use failover") in res.stdout + res.stderr, res.output


@pytest.mark.parametrize("args", [
    ["--cluster", "east", "mirrors", "create", "orders", "--link", "L", "-c", "retention.ms"],
    ["kafka-mirrors", "--bootstrap-server", "east:9092", "--create", "--mirror-topic", "orders",
     "--link", "L", "--config", "retention.ms"],
])
def test_a_config_without_its_value_is_a_usage_error(jl, world, args):
    """The mistake a topic's and a link's --config refuse as a usage error (exit 2) is one
    for a mirror topic's too (it was INVALID_CONFIG, exit 1); nothing is created."""
    from helpers import data_dir_bytes

    world[0].close()
    before = data_dir_bytes(jl.data)
    res = jl(*args)
    assert (res.exit_code, res.stdout) == (2, "")
    assert res.stderr.splitlines()[-1] == ("jetlink: error: --config 'retention.ms': expected "
                                           "KEY=VALUE")
    assert data_dir_bytes(jl.data) == before


def test_a_mirror_resumed_while_its_link_is_paused_says_the_link_is(jl, world):
    """The whole link paused (cluster.link.paused): a mirror's own resume succeeds (Confluent's
    result) but it stays PAUSED, which is said with the way to resume the link; promote's
    refusal points at the link, not at the mirror's resume that did nothing."""
    ok(east(jl, "mirrors", "create", "orders", "--link", "L"))
    ok(east(jl, "links", "alter", "L", "--config", "cluster.link.paused=true"))
    ok(jl("--cluster", "west", "topic", "produce", "orders", "new", "--partition", "0"))
    r = ok(east(jl, "mirrors", "resume", "orders", "--link", "L"))
    assert r.stderr == ("jetlink: warning: topic orders: link L is paused "
                        "(cluster.link.paused=true): its mirrors stay PAUSED until it is "
                        "resumed: jetlink links alter L --config cluster.link.paused=false\n")
    assert json.loads(east(jl, "mirrors", "resume", "orders", "--link", "L", "-j").stdout)[
        "data"][0]["error_code"] is None
    out = east(jl, "mirrors", "promote", "orders", "--link", "L")
    assert out.exit_code == 1
    assert "its link is paused: resume it (jetlink links alter L --config " \
           "cluster.link.paused=false) and let it catch up, or use failover" in out.stderr


def test_a_refused_promote_says_every_condition_that_holds_it_back(jl, world):
    """Records behind and a synced config changed on the source: both said at once (not the
    second only once the first clears)."""
    ok(east(jl, "mirrors", "create", "orders", "--link", "L"))
    ok(east(jl, "mirrors", "pause", "orders", "--link", "L"))  # (so that it lags)
    ok(jl("--cluster", "west", "topic", "produce", "orders", "late", "--partition", "0"))
    ok(jl("--cluster", "west", "topic", "alter", "orders", "--config", "retention.ms=86400000"))
    before = data_dir_bytes(jl.data, databases_only=True)
    out = east(jl, "mirrors", "promote", "orders", "--link", "L", "--dry-run")
    assert data_dir_bytes(jl.data, databases_only=True) == before
    assert out.exit_code == 1
    assert ("Topic 'orders' can not be promoted: it has mirroring lag (partition 0: 1); it is "
            "paused: resume it (jetlink mirrors resume orders --link L) and let it catch up, or "
            "use failover; config sync is pending (retention.ms): the link syncs topic configs "
            "every 5000 ms (topic.config.sync.ms), at a replication step when due; run jetlink "
            "replicate once the sync is due (jetlink links alter L --config K=MS shortens an "
            "interval), or use failover\n") in out.stderr
