"""`jetlink topic ...` and `jetlink group ...` through the CLI (exact output, JSON, exit codes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import UTC

import pytest
from helpers import ENV_VARS, WAIT_TIMEOUT, data_dir_bytes, doc, join_group, ok, wait_until

from jetlink.core.kafka.errors import KafkaError
from jetlink.core.kafka.topics import Kafka
from jetlink.core.store import DataDir


@pytest.fixture
def jl(jl, cli_clock):
    return jl


@pytest.fixture
def engine(jl, cli_clock):
    """The Kafka API of the CLI's cluster `local`, on the CLI's clock."""
    d = DataDir(jl.data)  # creates the data directory and `local`
    yield Kafka(d.open(), cli_clock)
    d.close()


def lines(result):
    return result.stdout.splitlines()


# --- topics ----------------------------------------------------------------------------------
def test_a_misspelt_topic_group_or_source_cluster_gets_the_closest_name(jl):
    ok(jl("topic", "create", "orders"))
    ok(jl("topic", "produce", "orders", "x"))
    ok(jl("topic", "consume", "orders", "--group", "billing", "--from-beginning"))
    cases = [
        (["topic", "describe", "ordrs"], "Topic 'ordrs' does not exist as expected "
         "(UNKNOWN_TOPIC_OR_PARTITION 3): did you mean orders?"),
        (["group", "describe", "biling"], "Consumer group 'biling' does not exist. "
         "(GROUP_ID_NOT_FOUND 69): did you mean billing?"),
        (["group", "rm", "biling", "-f"], "Group 'biling' could not be deleted due to: The "
         "group id does not exist. (GROUP_ID_NOT_FOUND 69): did you mean billing?"),
        (["links", "create", "L", "--source-cluster", "locl"], "Unable to validate cluster "
         "link: source cluster 'locl' does not exist in the data directory (add it with "
         "jetlink cluster add) (INVALID_CONFIG 40): did you mean local?"),
        (["topic", "create", "t", "-c", "retenion.ms=1"], "Unknown topic config name: "
         "retenion.ms (INVALID_CONFIG 40): did you mean retention.ms?"),
    ]
    before = data_dir_bytes(jl.data)
    for args, said in cases:
        r = jl(*args)
        assert (r.exit_code, r.stderr) == (1, f"jetlink: error: {said}\n"), args
    assert data_dir_bytes(jl.data) == before  # (refusals: nothing made)
    # the JSON documents stay Kafka's (no suggestion in them)
    assert json.loads(jl("topic", "describe", "ordrs", "-j").stdout) == {"error": {
        "error_code": 3, "error_name": "UNKNOWN_TOPIC_OR_PARTITION",
        "message": "Topic 'ordrs' does not exist as expected"}}



def test_create_describe_ls_alter_rm(jl):
    r = ok(jl("topic", "create", "orders", "--partitions", "2", "--config", "retention.ms=60000",
              "--config", "cleanup.policy=delete"))
    assert r.stdout == "Created topic orders.\n"
    info = doc(jl("topic", "describe", "orders", "--json"))
    tid = info["topic_id"]
    assert info["configs"] == {"cleanup.policy": "delete", "retention.ms": "60000"}
    assert [p["log_end_offset"] for p in info["partitions"]] == [0, 0]
    r = ok(jl("topic", "describe", "orders"))
    assert r.stdout == (
        f"Topic: orders\tTopicId: {tid}\tPartitionCount: 2\tReplicationFactor: 1\t"
        "Configs: cleanup.policy=delete,retention.ms=60000\n"
        "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: N/A\t"
        "LastKnownElr: N/A\tLogStartOffset: 0\t"
        "LogEndOffset: 0\n"
        "\tTopic: orders\tPartition: 1\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: N/A\t"
        "LastKnownElr: N/A\tLogStartOffset: 0\t"
        "LogEndOffset: 0\n")
    r = ok(jl("topic", "alter", "orders", "--config", "retention.ms=1000",
              "--delete-config", "cleanup.policy", "--partitions", "3"))
    assert lines(r) == ["Completed updating config for topic orders.",
                        "Topic orders now has 3 partitions."]
    info = doc(jl("topic", "alter", "orders", "--config", "segment.ms=100", "-j"))
    assert (info["partitions_count"], info["configs"]) == (
        3, {"retention.ms": "1000", "segment.ms": "100"})
    ok(jl("topic", "produce", "orders", "x", "--partition", "1"))
    r = ok(jl("topic", "ls"))
    assert lines(r)[1].split() == ["│", "Name", "│", "Partitions", "│", "Records", "│", "Size",
                                   "│", "Mirror", "│"]
    assert lines(r)[3].split() == ["│", "orders", "│", "3", "│", "1", "│", "69", "B", "│", "│"]
    assert [t["topic_name"] for t in doc(jl("topic", "ls", "-j"))] == ["orders"]
    ok(jl("topic", "create", "audit"))
    assert ok(jl("topic", "ls", "--names")).stdout == "audit\norders\n"  # kafka-topics --list
    ok(jl("topic", "rm", "audit", "-f"))
    r = jl("topic", "rm", "orders")
    assert r.exit_code == 2
    assert "pass -f/--force to delete topic orders" in r.stderr
    assert ok(jl("topic", "rm", "orders", "-f")).stdout == "Deleted topic orders.\n"
    assert json.loads(jl("topic", "rm", "x", "-f", "-j").stdout) == {"error": {
        "error_code": 3, "error_name": "UNKNOWN_TOPIC_OR_PARTITION",
        "message": "Topic 'x' does not exist as expected"}}
    r = ok(jl("topic", "ls"))
    assert (r.stdout, r.stderr) == ("", "No topics found.\n")
    assert (ok(jl("topic", "ls", "--names")).stdout, ok(jl("topic", "ls", "-n")).stderr) == (
        "", "")
    assert doc(jl("topic", "ls", "--json")) == []


@pytest.mark.parametrize(("args", "error"), [
    (["topic", "create", "orders"], ("TOPIC_ALREADY_EXISTS", 36, "Topic 'orders' already exists.")),
    (["topic", "create", "x", "--config", "foo=1"],
     ("INVALID_CONFIG", 40, "Unknown topic config name: foo")),
    (["topic", "create", "x", "--config", "retention.ms=soon"],
     ("INVALID_CONFIG", 40,
      "Invalid value soon for configuration retention.ms: Not a number of type LONG")),
    # KRaft's createPartitions: a count of 0 or less is "not an increase" like any lower one
    (["topic", "alter", "orders", "--partitions", "0"],
     ("INVALID_PARTITIONS", 37,
      "The topic orders currently has 1 partition(s); 0 would not be an increase.")),
    (["topic", "alter", "orders", "--partitions", "-1"],
     ("INVALID_PARTITIONS", 37,
      "The topic orders currently has 1 partition(s); -1 would not be an increase.")),
    (["topic", "create", "x y"],
     ("INVALID_TOPIC_EXCEPTION", 17, "Topic name is invalid: 'x y' contains one or more "
      "characters other than ASCII alphanumerics, '.', '_' and '-'")),
    (["topic", "alter", "orders", "--partitions", "1"],
     ("INVALID_PARTITIONS", 37, "Topic already has 1 partition(s).")),
    (["topic", "describe", "nope"],
     ("UNKNOWN_TOPIC_OR_PARTITION", 3, "Topic 'nope' does not exist as expected")),
    (["topic", "produce", "orders", "x", "--partition", "4"],
     ("UNKNOWN_TOPIC_OR_PARTITION", 3,
      "Invalid partition given with record: 4 is not in the range [0...1).")),
    (["group", "set-offsets", "g", "--topic", "orders", "--partition", "9", "--to-earliest"],
     ("UNKNOWN_TOPIC_OR_PARTITION", 3,
      "This server does not host this topic-partition: partition 9 of topic 'orders' is not "
      "in the range [0...1).")),
    (["group", "describe", "nope"],
     ("GROUP_ID_NOT_FOUND", 69, "Consumer group 'nope' does not exist.")),
    (["topic", "alter", "orders", "--config", "retention.ms=1000", "--delete-config",
      "retention.ms"],
     ("INVALID_REQUEST", 42, "Error due to duplicate config keys : retention.ms")),
    # kafka-configs --alter --delete-config of a config the topic does not set (the keys
    # given one per option or separated by commas, as kafka-configs' 'k1,k2')
    (["topic", "alter", "orders", "--delete-config", "retention.ms", "--delete-config",
      "segment.ms"],
     ("INVALID_CONFIG", 40, "Invalid config(s): retention.ms,segment.ms",
      "retention.ms is not set on topic orders (its default applies); segment.ms is not set "
      "on topic orders (its default applies)")),
    (["topic", "alter", "orders", "--delete-config", "retention.ms, segment.ms"],
     ("INVALID_CONFIG", 40, "Invalid config(s): retention.ms,segment.ms",
      "retention.ms is not set on topic orders (its default applies); segment.ms is not set "
      "on topic orders (its default applies)")),
    # ... an unknown name is never set: the same refusal, before anything is sent
    (["topic", "alter", "orders", "--delete-config", "missing_config1", "--delete-config",
      "retenion.ms"],
     ("INVALID_CONFIG", 40, "Invalid config(s): missing_config1,retenion.ms",
      "missing_config1 is not a topic config; retenion.ms is not a topic config: did you "
      "mean retention.ms?")),
])
def test_kafka_errors(jl, args, error):
    ok(jl("topic", "create", "orders"))
    name, code, message, *detail = error
    r = jl(*args)
    assert r.exit_code == 1
    more = f": {detail[0]}" if detail else ""
    assert (r.stdout, r.stderr) == ("", f"jetlink: error: {message} ({name} {code}){more}\n")
    r = jl(*args, "--json")
    assert r.exit_code == 1
    assert json.loads(r.stdout) == {
        "error": {"error_code": code, "error_name": name, "message": message}}


@pytest.mark.parametrize(("args", "message"), [
    # kafka-topics' parseTopicConfigsToBeAdded: exactly "key=val" (an empty value, or a
    # second '=', is not)
    *[(["topic", cmd, "x", "--config", c],
       f"invalid --config '{c}': Invalid topic config: all configs to be added must be in the "
       'format "key=val".')
      for cmd in ("create", "alter")
      for c in ("retention.ms", "retention.ms=", "cleanup.policy= ", "retention.ms=1=2",
                "=5")],
    # kafka-topics' own checks (TopicCommand.createTopic; -1, the broker's default over the
    # API, is not the tool's)
    *[(["topic", "create", "x", "--partitions", n],
       f"invalid value for --partitions: {n}: The partitions must be greater than 0")
      for n in ("0", "-1")],
    (["topic", "alter", "x"], "nothing to alter: give --config, --delete-config or --partitions"),
    # kafka-topics' own check (-1, the broker's default over the API, is not the tool's)
    (["topic", "create", "x", "--replication-factor", "-1"],
     "invalid value for --replication-factor: -1: The replication factor must be between 1 "
     "and 32767 inclusive"),
    (["topic", "create", "x", "--replication-factor", "32768"],
     "invalid value for --replication-factor: 32768: The replication factor must be between "
     "1 and 32767 inclusive"),
    (["topic", "produce", "x", "--count", "2"],
     "--count needs VALUE (stdin gives one record per line)"),
    (["topic", "consume", "x", "--timeout", "1s"], "--timeout needs --follow"),
    (["group", "set-offsets", "g", "--topic", "x"],
     "give exactly one of --to-offset, --to-earliest, --to-latest, --to-current, --shift-by, "
     "--to-datetime, --by-duration, --from-file"),
    (["group", "set-offsets", "g", "--topic", "x", "--to-earliest", "--to-latest"],
     "give exactly one of --to-offset, --to-earliest, --to-latest, --to-current, --shift-by, "
     "--to-datetime, --by-duration, --from-file (given: --to-earliest, --to-latest)"),
    # the reset scopes (kafka-consumer-groups getPartitionsToReset, parseTopicsWithPartitions)
    (["group", "set-offsets", "g", "--to-earliest"],
     "One of the reset scopes should be defined: --all-topics, --topic."),
    (["group", "set-offsets", "g", "--to-earliest", "--all-topics", "--topic", "x"],
     "give one of the reset scopes --all-topics, --topic, not both"),
    (["group", "set-offsets", "g", "--to-earliest", "--topic", "x:1", "--partition", "0"],
     "--partition applies to one --topic TOPIC (or give --topic TOPIC:P[,P...])"),
    (["group", "set-offsets", "g", "--to-earliest", "--all-topics", "--partition", "0"],
     "--partition applies to one --topic TOPIC"),
    (["group", "set-offsets", "g", "--to-earliest", "--topic", "x:1:2"],
     "invalid value for --topic: Invalid topic arg 'x:1:2', expected topic name and "
     "partitions"),
    (["group", "set-offsets", "g", "--to-earliest", "--topic", "x:0,a"],
     "invalid value for --topic: Invalid partition 'a' specified in topic arg 'x:0,a': a "
     "partition is a number from 0 to 2147483647"),
    (["group", "set-offsets", "g", "--from-file", ""],
     "invalid value for --from-file: '.' is a directory (an empty value is the current one): "
     "give the reset plan's CSV file"),
    (["group", "set-offsets", "g", "--to-earliest", "--topic", "x:"],
     "invalid value for --topic: Invalid partition '' specified in topic arg 'x:': a "
     "partition is a number from 0 to 2147483647"),
    # --max-poll-interval: the consumer's max.poll.interval.ms (ConsumerConfig: an INT,
    # atLeast(1))
    (["topic", "consume", "t", "-g", "g", "--max-poll-interval", "500us"],
     "invalid value for --max-poll-interval: '500us': Invalid value 0 for configuration "
     "max.poll.interval.ms: Value must be at least 1"),
    (["topic", "consume", "t", "-g", "g", "--max-poll-interval", "25d"],
     "invalid value for --max-poll-interval: '25d': Invalid value 2160000000 for "
     "configuration max.poll.interval.ms: Not a number of type INT (at most 2147483647 ms)"),
])
def test_usage_errors(jl, args, message):
    r = jl(*args, input="")
    assert r.exit_code == 2
    assert r.stderr == f"jetlink: error: {message}\n"


@pytest.mark.parametrize("value", ["5s", "30m1s"])
def test_a_session_timeout_the_broker_refuses_names_the_option(jl, value):
    """The join's refusal, as the broker answers it (INVALID_SESSION_TIMEOUT 26, exit 1, as
    kafka-console-consumer ends on it), names the option and the value given; nothing
    changed."""
    from helpers import data_dir_bytes

    ok(jl("topic", "create", "t"))
    before = data_dir_bytes(jl.data)
    r = jl("topic", "consume", "t", "-g", "g", "--session-timeout", value)
    ms = {"5s": "5,000", "30m1s": "1,801,000"}[value]
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: The session timeout is not within the range allowed by the broker "
        "(as configured by group.min.session.timeout.ms and group.max.session.timeout.ms). "
        f"(INVALID_SESSION_TIMEOUT 26): --session-timeout {value}: session timeout {ms} ms, "
        "the broker's range 6,000 to 1,800,000 ms\n"))
    assert data_dir_bytes(jl.data) == before


def test_produce_shapes(jl, engine):
    ok(jl("topic", "create", "t", "--partitions", "3"))
    r = ok(jl("topic", "produce", "t", "hello", "--key", "k1", "-H", "trace:abc"))
    assert r.stdout == "Produced 1 record to t (partition 2, offset 0)\n"  # murmur2("k1") % 3
    r = ok(jl("topic", "produce", "t", "v{{Count}}", "--count", "3"))
    assert lines(r) == ["Produced 3 records to t", "  partition 0: offsets 0..2"]
    r = ok(jl("topic", "produce", "t", input="a\nb\r\n"))
    assert lines(r) == ["Produced 2 records to t", "  partition 1: offsets 0..1"]
    assert doc(jl("topic", "produce", "t", "--key-separator", ":", "-j",
                  input="k1:x\nk2:y:z\n")) == [{"partition": 2, "offset": 1},
                                               {"partition": 0, "offset": 3}]
    assert doc(jl("topic", "produce", "t", "v", "--key", "id-{{Count}}", "--count", "2",
                  "--json")) == [{"partition": 0, "offset": 4}, {"partition": 2, "offset": 2}]
    r = jl("topic", "produce", "t", "--key-separator", ":", input="k:1\nnosep\n")
    assert (r.exit_code, r.stderr) == (  # LineMessageReader's words; nothing is sent
        1, "jetlink: error: No key separator found on line number 2: 'nosep'\n")
    r = ok(jl("topic", "produce", "t", "--key-separator", "", "--partition", "1", "-j",
              input="k:v\n"))  # an empty separator: key "", as Kafka's indexOf("") gives
    assert doc(r) == [{"partition": 1, "offset": 2}]
    assert [(x.key, x.value) for x in engine.fetch("t", 1, 2)] == [(b"", b"k:v")]
    too_big = jl("topic", "create", "p", "--partitions", "9" * 20)
    assert too_big.exit_code == 2 and "is not in the range" in too_big.stderr  # a Java int
    ok(jl("topic", "create", "q", "-c", "retention.ms=1000"))  # -c as links and mirrors
    recs = engine.fetch("t", 2, 0)
    assert [(r.key, r.value, r.headers) for r in recs] == [
        (b"k1", b"hello", [("trace", b"abc")]), (b"k1", b"x", []), (b"id-2", b"v", [])]
    assert [r.value for r in engine.fetch("t", 0, 0)] == [b"v1", b"v2", b"v3", b"y:z", b"v"]
    assert [r.value for r in engine.fetch("t", 1, 0)] == [b"a", b"b", b"k:v"]
    r = ok(jl("topic", "produce", "t", input=""))
    assert (r.stdout, r.stderr) == ("", "Nothing to produce.\n")


def test_a_large_produce_goes_in_chunks_with_a_bar_on_a_terminal(jl, engine, monkeypatch):
    from jetlink.cli import output, topic

    bars = []
    real = output.progress

    class Recorded(real):
        def __init__(self, app, label, total, *, enabled=True):
            bars.append((label, total, enabled))
            super().__init__(app, label, total, enabled=enabled)

    monkeypatch.setattr(output, "progress", Recorded)
    monkeypatch.setattr(topic, "PRODUCE_CHUNK", 40)
    ok(jl("topic", "create", "t", "--partitions", "1"))
    r = ok(jl("topic", "produce", "t", "v{{Count}}", "--count", "100"))
    assert lines(r) == ["Produced 100 records to t", "  partition 0: offsets 0..99"]
    assert [r.value for r in engine.fetch("t", 0, 0, max_records=200)][-1] == b"v100"
    assert bars == [("Producing", 100, True)]
    ok(jl("topic", "produce", "t", "v", "--count", "3"))
    assert bars[-1] == ("Producing", 3, False)  # small: no bar


def test_produce_to_a_mirror_is_refused(jl, engine):
    engine.create_topic("m", 1, mirror_link="L")
    r = jl("topic", "produce", "m", "x")
    assert (r.exit_code, r.stderr) == (
        1, "jetlink: error: Cannot append records to read-only mirror topic 'm' "
        "(INVALID_REQUEST 42)\n")


def test_if_exists_and_if_not_exists_as_kafka_topics(jl):
    """TopicCommand's --if-not-exists (create: a topic there already is no error) and
    --if-exists (alter, describe, rm: a topic missing is no error): nothing done, said on
    stderr, exit 0; without them, Kafka's errors."""
    ok(jl("topic", "create", "o", "--partitions", "2"))
    r = ok(jl("topic", "create", "o", "--if-not-exists", "--partitions", "5"))
    assert (r.stdout, r.stderr) == (
        "", "jetlink: topic o: exists already: left as it is (--if-not-exists)\n")
    assert doc(jl("topic", "create", "o", "--if-not-exists", "-j"))["partitions_count"] == 2
    r = jl("topic", "create", "o")
    assert r.exit_code == 1 and "Topic 'o' already exists" in r.stderr
    # the tool checks the configs before it asks the broker (TopicCommand: LogConfig.validate):
    # a bad one is refused, the topic there or not, --if-not-exists or not
    for extra in ([], ["--if-not-exists"]):
        r = jl("topic", "create", "o", "--config", "message.timestamp.type=boom", *extra)
        assert (r.exit_code, r.stderr) == (1, (
            "jetlink: error: Invalid value boom for configuration message.timestamp.type: "
            "String must be one of: CreateTime, LogAppendTime (INVALID_CONFIG 40)\n")), extra
    for args, said in ((["alter", "nope", "--partitions", "3"], "nothing altered"),
                       (["describe", "nope"], "does not exist (--if-exists)"),
                       (["rm", "nope", "-f"], "nothing deleted")):
        r = ok(jl("topic", *args, "--if-exists"))
        assert r.stdout == "" and said in r.stderr, (args, r.stderr)
        r = jl("topic", *args)
        assert r.exit_code == 1 and "UNKNOWN_TOPIC_OR_PARTITION 3" in r.stderr, args
    assert doc(jl("topic", "describe", "nope", "--if-exists", "-j")) is None
    assert doc(jl("topic", "rm", "nope", "--if-exists", "-f", "-j")) == {"success": True}
    # on a topic that exists they change nothing of what the verb does
    ok(jl("topic", "rm", "o", "--if-exists", "-f"))
    assert doc(jl("topic", "ls", "-j")) == []


def test_a_name_that_is_not_utf8_is_shown_as_its_bytes(jl):
    """A command line's bytes that are not UTF-8 are a usage error naming the argument as
    its bytes (docs/exit-codes.md), as for every other verb."""
    r = jl("topic", "create", "\udcff\udcfe")
    assert (r.exit_code, r.stderr) == (2, "jetlink: error: argument '\\xff\\xfe' is not UTF-8 "
                                          "text (byte 0xff): names, subjects and keys are "
                                          "UTF-8\n")


def test_consume_commits_and_resumes(jl, engine, cli_clock):
    ok(jl("topic", "create", "t", "--partitions", "2"))
    engine.produce("t", [(b"a", b"1"), (b"b", b"2")], partition=0)
    engine.produce("t", [(None, b"3", [("h", b"v")])], partition=1)
    # no committed offsets, no --from-beginning: start at the log end
    r = ok(jl("topic", "consume", "t", "--group", "late"))
    assert (r.stdout, r.stderr) == ("", "Processed a total of 0 messages\n")
    # --max-messages 0: kafka-console-consumer's loop reads nothing
    r = ok(jl("topic", "consume", "t", "--group", "none", "--from-beginning", "--max", "0"))
    assert (r.stdout, r.stderr) == ("", "Processed a total of 0 messages\n")
    r = ok(jl("topic", "consume", "t", "--group", "g", "--from-beginning", "--max", "2",
              "--print-key", "--print-offset", "--print-partition"))
    assert r.stdout == "Partition:0\tOffset:0\ta\t1\nPartition:0\tOffset:1\tb\t2\n"
    assert r.stderr == "Processed a total of 2 messages\n"
    # every assigned partition's position, as Kafka's consumer commits on close: partition 1,
    # read nothing from, at where it started (the log start, --from-beginning)
    assert engine.committed("g") == {("t", 0): 2, ("t", 1): 0}
    assert not engine.group_active("g")  # the consumer left
    now = cli_clock.now_ns() // 1_000_000
    r = ok(jl("topic", "consume", "t", "--group", "g", "--from-beginning", "--print-timestamp",
              "--print-headers"))
    assert r.stdout == f"CreateTime:{now}\th:v\t3\n"
    assert engine.committed("g") == {("t", 0): 2, ("t", 1): 1}
    assert ok(jl("topic", "consume", "t", "--group", "g")).stdout == ""
    docs = doc(jl("topic", "consume", "t", "--from-beginning", "-j"))
    assert docs == [
        {"partition": 0, "offset": 0, "timestamp": now, "key": "a", "value": "1", "headers": []},
        {"partition": 0, "offset": 1, "timestamp": now, "key": "b", "value": "2", "headers": []},
        {"partition": 1, "offset": 0, "timestamp": now, "key": None, "value": "3",
         "headers": [["h", "v"]]}]
    # --follow --max stops after N records; --timeout after a quiet spell
    r = ok(jl("topic", "consume", "t", "--group", "f", "--from-beginning", "--follow",
              "--max", "3", "-j"))
    assert [json.loads(x)["offset"] for x in lines(r)] == [0, 1, 0]
    r = ok(jl("topic", "consume", "t", "--group", "f", "--follow", "--timeout", "50ms"))
    assert (r.stdout, r.stderr) == ("", "Processed a total of 0 messages\n")


@pytest.mark.parametrize(("args", "ms"), [([], 300_000), (["--max-poll-interval", "90s"], 90_000),
                                         (["--max-poll-interval", "1ms"], 1)])
def test_consume_joins_with_its_max_poll_interval(jl, engine, monkeypatch, args, ms):
    """--max-poll-interval is the rebalance timeout the member's joins carry (Kafka's
    consumer sends max.poll.interval.ms, default 300000, in its JoinGroup)."""
    from jetlink.core.kafka.topic_groups import join

    engine.create_topic("t", 1)
    seen = []

    def spy(kafka, *a, **kw):
        seen.append(kw["rebalance_timeout_ms"])
        return join(kafka, *a, **kw)

    monkeypatch.setattr("jetlink.core.kafka.topics.Kafka.join", spy)
    ok(jl("topic", "consume", "t", "-g", "g", *args))
    assert seen == [ms]


def test_a_consumer_joining_waits_for_the_rebalance_then_reads_from_the_commits(jl, engine):
    """A consumer joining a group with a member (Kafka's eager rebalance): it reads nothing
    until that member joins again on its next heartbeat (and does not stop as caught up
    meanwhile, without --follow), then reads the partition the new generation gives it from
    the group's committed offset."""
    import threading

    ok(jl("topic", "create", "t", "--partitions", "2"))
    engine.produce("t", [(None, b"a%d" % i) for i in range(3)], partition=0)
    engine.produce("t", [(None, b"b%d" % i) for i in range(3)], partition=1)
    # (member ids sort: "a-member" before "jetlink-consumer-...": it keeps partition 0)
    gen = engine.join("g", "a-member", ["t"])
    engine.commit("g", {("t", 0): 3, ("t", 1): 1}, member="a-member", generation=gen)
    seen: list[str] = []

    def other_member() -> None:  # its next poll, once the consumer asked to join
        try:
            wait_until(lambda: len(engine.describe_group("g").members) == 2,
                       message="the consumer joined")
            seen.append(engine.describe_group("g").state)
            try:
                engine.heartbeat("g", "a-member", gen)
            except KafkaError as exc:
                seen.append(exc.name)
            seen.append(str(engine.join("g", "a-member", ["t"]) - gen))
        except Exception as exc:  # (said by the assertion below)
            seen.append(repr(exc))

    thread = threading.Thread(target=other_member)
    thread.start()
    r = ok(jl("topic", "consume", "t", "--group", "g"))
    thread.join(WAIT_TIMEOUT)
    assert seen == ["PreparingRebalance", "REBALANCE_IN_PROGRESS", "1"]
    assert (r.stdout, r.stderr) == ("b1\nb2\n", "Processed a total of 2 messages\n")
    assert engine.committed("g") == {("t", 0): 3, ("t", 1): 3}


def test_group_describe_members_state_all_groups_and_ls_state(jl, engine):
    """kafka-consumer-groups --describe's views: --members (--verbose: ASSIGNMENT), --state,
    --all-groups (a table per group, by name); --list --state's filter."""
    ok(jl("topic", "create", "orders", "--partitions", "3"))
    ok(jl("topic", "create", "pay"))
    engine.commit("audit", {("orders", 0): 0})
    engine.join("billing", "consumer-1", ["orders", "pay"], client_id="app")
    with pytest.raises(KafkaError):  # REBALANCE_IN_PROGRESS: consumer-1 is to join again
        engine.join("billing", "consumer-2", ["orders"], client_id="app2")
    r = ok(jl("group", "describe", "billing", "--state"))
    assert (lines(r), r.stderr) == (
        ["", "GROUP                     STATE           #MEMBERS",
         "billing                   PreparingRebalance 2"],
        "\nWarning: Consumer group 'billing' is rebalancing.\n")
    assert lines(ok(jl("group", "ls", "--state", "preparingrebalance"))) == [
        "GROUP                     STATE", "billing                   PreparingRebalance"]
    join_group(engine, "billing", [("consumer-1", ["orders", "pay"], "app"),
                                   ("consumer-2", ["orders"], "app2")])
    r = ok(jl("group", "describe", "billing", "--members", "--verbose"))
    assert lines(r) == [
        "",
        "GROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     "
        "ASSIGNMENT",
        "billing         consumer-1      /127.0.0.1      app             3               "
        "(0), (0,1)",
        "billing         consumer-2      /127.0.0.1      app2            1               (2)",
    ]
    assert lines(ok(jl("group", "describe", "billing", "--members")))[1:] == [
        "GROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS",
        "billing         consumer-1      /127.0.0.1      app             3",
        "billing         consumer-2      /127.0.0.1      app2            1",
    ]
    # an Empty group: the tool's notice alone (shouldPrintMemberState: no row, no table)
    r = ok(jl("group", "describe", "audit", "--members"))
    assert (r.stdout, r.stderr) == ("", "\nConsumer group 'audit' has no active members.\n")
    r = ok(jl("group", "describe", "--all-groups", "--state"))
    assert lines(r) == ["", "GROUP                     STATE           #MEMBERS",
                        "audit                     Empty           0",
                        "", "GROUP                     STATE           #MEMBERS",
                        "billing                   Stable          2"]
    all_docs = doc(jl("group", "describe", "--all-groups", "-j"))
    assert [d["consumer_group_id"] for d in all_docs] == ["audit", "billing"]
    assert all_docs[1] == doc(jl("group", "describe", "billing", "-j"))
    for args, said in [
        ([], "give a GROUP or --all-groups"),
        (["billing", "--all-groups"], "give GROUP 'billing' or --all-groups, not both"),
        (["billing", "--members", "--state"], "give one of --offsets, --members, --state"),
        (["billing", "--verbose"], "--verbose applies to --members"),
    ]:
        r = jl("group", "describe", *args)
        assert (r.exit_code, r.stderr.splitlines()[0]) == (2, f"jetlink: error: {said}"), args
    # --list --state: the states named, in any case
    assert lines(ok(jl("group", "ls", "--state", "stable"))) == [
        "GROUP                     STATE", "billing                   Stable"]
    assert len(doc(jl("group", "ls", "--state", " Empty ,STABLE", "-j"))) == 2
    assert lines(ok(jl("group", "ls", "--state", "dead"))) == ["GROUP                     STATE"]
    assert len(doc(jl("group", "ls", "--state", "Empty,", "-j"))) == 1  # (Java's split)
    r = jl("group", "ls", "--state", "Stable,Runing")
    assert (r.exit_code, r.stderr.splitlines()[0]) == (
        2, "jetlink: error: Invalid state list 'Stable,Runing'. Valid states are: "
        "PreparingRebalance, CompletingRebalance, Stable, Dead, Empty, Assigning, Reconciling")


def test_group_delete_offsets(jl, engine):
    """kafka-consumer-groups --delete-offsets: per partition the broker's answer; a topic a
    live member subscribes to keeps its offsets (GROUP_SUBSCRIBED_TO_TOPIC), an unknown one
    too; the others are deleted; exit 1 when any partition failed."""
    ok(jl("topic", "create", "orders", "--partitions", "3"))
    ok(jl("topic", "create", "pay"))
    engine.commit("app", {("orders", 0): 0, ("orders", 1): 0, ("orders", 2): 0,
                          ("pay", 0): 0})
    r = ok(jl("group", "delete-offsets", "app", "--topic", "orders:0,1"))
    assert lines(r) == [
        "Request succeed for deleting offsets with topic orders:0,1 group app", "",
        "TOPIC                          PARTITION       STATUS",
        "orders                         0               Successful",
        "orders                         1               Successful"]
    assert engine.committed("app") == {("orders", 2): 0, ("pay", 0): 0}
    engine.join("app", "m1", ["pay"])
    r = jl("group", "delete-offsets", "app", "-t", "pay", "-t", "nope", "-t", "orders:9")
    assert r.exit_code == 1
    assert lines(r) == [
        "", "TOPIC                          PARTITION       STATUS",
        "nope                           Not Provided    Error: Topic 'nope' does not exist as "
        "expected (UNKNOWN_TOPIC_OR_PARTITION 3)",
        "orders                         9               Error: This server does not host this "
        "topic-partition: partition 9 of topic 'orders' is not in the range [0...3). "
        "(UNKNOWN_TOPIC_OR_PARTITION 3)",
        "pay                            0               Error: Deleting offsets of a topic is "
        "forbidden while the consumer group is actively subscribed to it. "
        "(GROUP_SUBSCRIBED_TO_TOPIC 86)"]
    assert r.stderr == ("\nError: Encounter some partition level error, see the follow-up "
                        "details:\n")
    assert engine.committed("app") == {("orders", 2): 0, ("pay", 0): 0}
    r = jl("group", "delete-offsets", "app", "-t", "pay", "-t", "orders", "-j")
    assert r.exit_code == 1 and json.loads(r.stdout) == {"group": "app", "partitions": [
        {"topic": "orders", "partition": p, "error": None} for p in range(3)] + [
        {"topic": "pay", "partition": 0, "error": {
            "error_code": 86, "error_name": "GROUP_SUBSCRIBED_TO_TOPIC",
            "message": "Deleting offsets of a topic is forbidden while the consumer group is "
                       "actively subscribed to it."}}]}
    assert engine.committed("app") == {("pay", 0): 0}
    before = data_dir_bytes(jl.data, databases_only=True)
    for args, code, said in [
        (["nogroup", "-t", "pay"], 1, "Consumer group 'nogroup' does not exist. "
         "(GROUP_ID_NOT_FOUND 69)"),
        (["app", "-t", "pay:x"], 2, "invalid value for --topic: Invalid partition 'x' "
         "specified in topic arg 'pay:x': a partition is a number from 0 to 2147483647"),
        (["app"], 2, "Missing option '--topic' / '-t'."),
    ]:
        r = jl("group", "delete-offsets", *args)
        assert (r.exit_code, f"{said}\n" in r.stderr) == (code, True), (args, r.stderr)
    # (refused whole: nothing deleted)
    assert data_dir_bytes(jl.data, databases_only=True) == before


def test_group_ls_describe_set_offsets_rm(jl, engine):
    ok(jl("topic", "create", "orders", "--partitions", "2"))
    engine.produce("orders", [(None, b"x")] * 5, partition=0)
    engine.commit("billing", {("orders", 0): 3})
    engine.commit("audit", {("orders", 1): 0})
    r = ok(jl("group", "ls"))
    assert lines(r) == ["GROUP                     STATE", "audit                     Empty",
                        "billing                   Empty"]
    assert [g["consumer_group_id"] for g in doc(jl("group", "ls", "-j"))] == ["audit", "billing"]
    r = ok(jl("group", "describe", "billing"))
    assert lines(r) == [
        "",
        "GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG"
        "             CONSUMER-ID     HOST            CLIENT-ID",
        "billing         orders          0          3               5               2"
        "               -               -               -",
    ]  # (the tool's --describe: the offsets table alone; --state has the state)
    assert r.stderr == "\nConsumer group 'billing' has no active members.\n"
    engine.join("billing", "consumer-1", ["orders"], client_id="app")
    r = ok(jl("group", "describe", "billing"))
    assert lines(r)[2:4] == [
        "billing         orders          0          3               5               2"
        "               consumer-1      /127.0.0.1      app",
        "billing         orders          1          -               0               -"
        "               consumer-1      /127.0.0.1      app",
    ]
    assert lines(ok(jl("group", "describe", "billing", "--state"))) == [
        "", "GROUP                     STATE           #MEMBERS",
        "billing                   Stable          1"]
    assert r.stderr == ""
    info = doc(jl("group", "describe", "billing", "-j"))
    assert info["state"] == "Stable"
    assert info["members"][0]["assignments"] == [
        {"topic_name": "orders", "partition_id": 0}, {"topic_name": "orders", "partition_id": 1}]
    r = jl("group", "set-offsets", "billing", "--topic", "orders", "--to-earliest")
    assert (r.exit_code, r.stderr) == (
        1, "jetlink: error: Assignments can only be reset if the group 'billing' is inactive, "
        "but the current state is Stable. (NON_EMPTY_GROUP 68)\n")
    # more members than partitions: the member with none has no row in the offsets table
    # (ConsumerGroupCommand's collectGroupsOffsets leaves it out), --members lists it
    join_group(engine, "billing", [("consumer-1", ["orders"], "app"),
                                   ("consumer-2", ["orders"], "app2"),
                                   ("consumer-3", ["orders"], "app3")])
    r = ok(jl("group", "describe", "billing"))
    assert [x.split()[1] for x in lines(r)[2:]] == ["orders", "orders"], lines(r)
    members = lines(ok(jl("group", "describe", "billing", "--members")))[2:]
    assert sorted(x.split()[4] for x in members) == ["0", "1", "1"], members
    for m in ("consumer-2", "consumer-3"):
        engine.leave("billing", m)
    engine.leave("billing", "consumer-1")
    r = ok(jl("group", "set-offsets", "billing", "--topic", "orders", "--to-offset", "9",
              "--dry-run"))
    assert lines(r) == ["", "GROUP                          TOPIC                          "
                        "PARTITION  NEW-OFFSET",
                        "billing                        orders                         0"
                        "          5",
                        "billing                        orders                         1"
                        "          0"]
    # ConsumerGroupCommand's warning for an offset past the log, on stderr
    assert r.stderr == (
        "New offset (9) is higher than latest offset for topic partition orders-0. "
        "Value will be set to 5\n"
        "New offset (9) is higher than latest offset for topic partition orders-1. "
        "Value will be set to 0\n")
    assert engine.committed("billing") == {("orders", 0): 3}
    r = ok(jl("group", "set-offsets", "billing", "-t", "orders", "-p", "0", "--to-offset", "-1",
              "--dry-run", "-j"))
    assert json.loads(r.stdout)[0]["new_offset"] == 0
    assert r.stderr == ("New offset (-1) is lower than earliest offset for topic partition "
                        "orders-0. Value will be set to 0\n")
    assert doc(jl("group", "set-offsets", "billing", "-t", "orders", "-p", "0",
                  "--to-earliest", "-j")) == [
        {"group": "billing", "topic": "orders", "partition": 0, "old_offset": 3,
         "new_offset": 0}]
    assert engine.committed("billing") == {("orders", 0): 0}
    r = ok(jl("group", "rm", "audit", "-f"))
    assert r.stdout == "Deletion of requested consumer groups ('audit') was successful.\n"
    assert [g.group for g in engine.groups()] == ["billing"]


# kafka-consumer-groups --delete of a group it can not delete (ConsumerGroupCommand
# deleteGroups: "Group 'G' could not be deleted due to: " and Errors' message, as
# DeleteConsumerGroupsTest checks it), on jetlink's one error line: (group, its member is
# live, the error line, the JSON document's error)
GROUP_RM_REFUSED = [
    ("nope", False,
     "Group 'nope' could not be deleted due to: The group id does not exist. "
     "(GROUP_ID_NOT_FOUND 69)",
     {"error_code": 69, "error_name": "GROUP_ID_NOT_FOUND",
      "message": "Group 'nope' could not be deleted due to: The group id does not exist."}),
    ("busy", True,
     "Group 'busy' could not be deleted due to: The group is not empty. (NON_EMPTY_GROUP 68): "
     "group 'busy' has 1 live member (state Stable): it can be deleted once they leave or "
     "their session times out",
     {"error_code": 68, "error_name": "NON_EMPTY_GROUP",
      "message": "Group 'busy' could not be deleted due to: The group is not empty."}),
]


@pytest.mark.parametrize(("group", "live", "line", "error"), GROUP_RM_REFUSED,
                         ids=[g[0] for g in GROUP_RM_REFUSED])
def test_group_rm_refused_says_why_as_kafka_consumer_groups(jl, engine, group, live, line,
                                                             error):
    engine.create_topic("orders", 1)
    if live:
        engine.join(group, "m", ["orders"])
    r = jl("group", "rm", group, "-f")
    assert (r.exit_code, r.stdout, r.stderr) == (1, "", f"jetlink: error: {line}\n")
    r = jl("group", "rm", group, "-f", "-j")
    assert (r.exit_code, json.loads(r.stdout)) == (1, {"error": error})
    assert [g.group for g in engine.groups()] == ([group] if live else [])


def _jetlink(data, *args):
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARS}
    return subprocess.Popen(
        [sys.executable, "-m", "jetlink.cli.main", "--data-dir", str(data), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _following(tmp_path):
    """Topic t holding "one", and a `topic consume t --group g --follow` process that printed
    it with g active: (its DataDir, Kafka, the process)."""
    d = DataDir(tmp_path / "data")
    k = Kafka(d.open())
    k.create_topic("t", 1)
    k.produce("t", [(None, b"one")])
    follower = _jetlink(tmp_path / "data", "topic", "consume", "t", "--group", "g",
                        "--from-beginning", "--follow")
    assert follower.stdout is not None and follower.stdout.readline() == "one\n"
    wait_until(lambda: k.group_active("g"), message="group g active")
    return d, k, follower


def test_follow_keeps_the_group_active_until_ctrl_c(tmp_path):
    d, k, follower = _following(tmp_path)
    try:
        k.produce("t", [(None, b"two")])
        assert follower.stdout.readline() == "two\n"
        wait_until(lambda: k.committed("g") == {("t", 0): 2},  # printed, then committed
                   message=lambda: f"group g's offset committed ({k.committed('g')})")
        follower.send_signal(signal.SIGINT)
        out, errs = follower.communicate(timeout=WAIT_TIMEOUT)
    finally:
        follower.kill()
        d.close()
    assert follower.returncode == 130
    assert not k.group_active("g")
    assert k.committed("g") == {("t", 0): 2}


def test_sigterm_leaves_the_group_as_ctrl_c_does(tmp_path):
    """systemd, Kubernetes or timeout stop a consumer with SIGTERM: it leaves its group
    (no member left behind for the session timeout, which would refuse offset resets and
    deletes as NON_EMPTY_GROUP), says its total, and exits 143 (128 + SIGTERM), as
    kafka-console-consumer's shutdown hook does."""
    d, k, follower = _following(tmp_path)
    try:
        follower.send_signal(signal.SIGTERM)
        _out, errs = follower.communicate(timeout=WAIT_TIMEOUT)
    finally:
        follower.kill()
        d.close()
    assert follower.returncode == 143, errs
    assert errs == "Processed a total of 1 messages\n"
    assert not k.group_active("g")


def test_a_new_group_that_read_nothing_gets_what_is_produced_next(jl, engine):
    """A new group's first run finds nothing (it starts at the log end) and commits that
    position on close, as Kafka's consumer does: the record produced next is the next run's
    first, not skipped as a new log end."""
    ok(jl("topic", "create", "t1"))
    r = ok(jl("topic", "consume", "t1", "--group", "fresh"))
    assert r.stderr == "Processed a total of 0 messages\n"
    assert engine.committed("fresh") == {("t1", 0): 0}
    ok(jl("topic", "produce", "t1", "m1"))
    r = ok(jl("topic", "consume", "t1", "--group", "fresh"))
    assert (r.stdout, r.stderr) == ("m1\n", "Processed a total of 1 messages\n")


def test_a_refusal_after_the_first_call_says_what_was_stored(jl, engine):
    """A produce of more than one call's records (10,000 each, each all or nothing) refused
    in a later call says how many records the earlier calls stored, and where: a retry
    would store them twice."""
    ok(jl("topic", "create", "t", "--config", "max.message.bytes=100"))
    lines_in = "".join(f"r{i}\n" for i in range(10_005)) + "x" * 200 + "\n"
    r = jl("topic", "produce", "t", input=lines_in)
    assert r.exit_code == 1
    assert r.stderr.endswith(
        "(MESSAGE_TOO_LARGE 10): the first 10000 records were stored before it (each call "
        "of 10000 records is all or nothing): partition 0: offsets 0..9999\n"), r.stderr
    assert engine.describe_topic("t").partitions[0].log_end == 10_000


def test_an_alteration_naming_a_key_twice_changes_nothing(jl):
    """Refused as Kafka's incrementalAlterConfigs refuses it, before anything is written."""
    ok(jl("topic", "create", "orders", "--config", "retention.ms=5000"))
    ok(jl("cluster", "add", "west", "--kind", "kafka"))
    ok(jl("links", "create", "L", "--source-cluster", "west"))
    before = data_dir_bytes(jl.data)
    for args in (["topic", "alter", "orders", "--config", "retention.ms=1000",
                  "--delete-config", "retention.ms"],
                 ["links", "alter", "L", "-c", "consumer.offset.sync.ms=444",
                  "--delete-config", "consumer.offset.sync.ms"]):
        r = jl(*args)
        assert r.exit_code == 1 and "Error due to duplicate config keys : " in r.stderr
    assert data_dir_bytes(jl.data) == before


@pytest.mark.parametrize("args, shown", [
    (["group", "set-offsets", "g", "-t", "orders", "--to-offset",
      "99999999999999999999999"], "'--to-offset': 99999999999999999999999 is not in the "
     "range -9223372036854775808<=x<=9223372036854775807."),
    (["group", "set-offsets", "g", "-t", "orders", "-p", "2147483648", "--to-earliest"],
     "'--partition' / '-p': 2147483648 is not in the range 0<=x<=2147483647."),
    (["topic", "produce", "orders", "x", "-p", "-1"],
     "'--partition' / '-p': -1 is not in the range 0<=x<=2147483647."),
    (["topic", "consume", "orders", "--max", "2147483648"],
     "'--max-messages' / '--max': 2147483648 is not in the range 0<=x<=2147483647."),
])
def test_numbers_past_their_java_type_are_usage_errors(jl, engine, args, shown):
    """An offset is a Java long, a partition and a console consumer's --max-messages an int:
    past their range is refused at parsing (exit 2), as the Kafka tools refuse it, never
    clamped or looked up."""
    engine.create_topic("orders", partitions=1)
    r = jl(*args)
    assert r.exit_code == 2, r.output
    assert f"Invalid value for {shown}\n" in r.stderr, r.stderr


def test_null_marker_nulls_keys_and_header_values_too_and_is_refused_where_kafka_refuses_it(jl):
    """LineMessageReader's null.marker: a key, value or header value equal to it is null; a
    marker equal to the key separator, or to a header's name, is refused, nothing sent."""
    ok(jl("topic", "create", "nm"))
    ok(jl("topic", "produce", "nm", "--key-separator", ":", "--null-marker", "NULL",
          "-H", "h:NULL", "-H", "g:v", input="NULL:v1\nk2:NULL\n"))
    ok(jl("topic", "produce", "nm", "x", "-k", "NULL", "--null-marker", "NULL", "-H", "h:NULL"))
    got = doc(jl("topic", "consume", "nm", "--from-beginning", "-j"))
    assert [(r["key"], r["value"], r["headers"]) for r in got] == [
        (None, "v1", [["h", None], ["g", "v"]]), ("k2", None, [["h", None], ["g", "v"]]),
        (None, "x", [["h", None]])]
    from helpers import data_dir_bytes

    before = data_dir_bytes(jl.data)
    for args, says in (
            (["--key-separator", ":", "--null-marker", ":"],
             "--null-marker and --key-separator are both ':': null.marker and key.separator "
             "may not be equal"),
            (["-H", "NULL:v", "--null-marker", "NULL"],
             "Header keys should not be equal to the null marker 'NULL' as they can't be null")):
        r = jl("topic", "produce", "nm", *args, input="a:b\n")
        assert (r.exit_code, r.stderr) == (2, f"jetlink: error: {says}\n")
    assert data_dir_bytes(jl.data) == before
    assert len(doc(jl("topic", "consume", "nm", "--from-beginning", "-j"))) == 3


def test_null_marker_produces_tombstones(jl):
    """kafka-console-producer's null.marker: a value equal to it is produced as null (a
    tombstone), from VALUE or from stdin's KEY<SEP>VALUE lines; consumed it reads null."""
    ok(jl("topic", "create", "cmp"))
    ok(jl("topic", "produce", "cmp", "v1", "-k", "a"))
    ok(jl("topic", "produce", "cmp", "NULL", "-k", "a", "--null-marker", "NULL"))
    ok(jl("topic", "produce", "cmp", "--key-separator", ":", "--null-marker", "NULL",
          input="b:x\nc:NULL\n"))
    got = doc(jl("topic", "consume", "cmp", "--from-beginning", "-j"))
    assert [(r["key"], r["value"]) for r in got] == [
        ("a", "v1"), ("a", None), ("b", "x"), ("c", None)]
    out = ok(jl("topic", "consume", "cmp", "--from-beginning", "--print-key")).stdout
    assert out == "a\tv1\na\tnull\nb\tx\nc\tnull\n"


def test_a_name_with_a_period_or_underscore_gets_kafka_topics_warning(jl):
    r = ok(jl("topic", "create", "o.x"))
    assert (r.stdout, r.stderr) == ("Created topic o.x.\n", (
        "jetlink: warning: Due to limitations in metric names, topics with a period ('.') or "
        "underscore ('_') could collide. To avoid issues it is best to use either, but not "
        "both.\n"))
    # printed before the create, as kafka-topics prints it: a refused create shows it too
    r = jl("topic", "create", "o_x")
    assert r.exit_code == 1 and r.stderr.startswith(
        "jetlink: warning: Due to limitations in metric names") and (
        "Topic 'o_x' collides with existing topic: o.x" in r.stderr)
    assert ok(jl("topic", "create", "plain")).stderr == ""


def test_set_offsets_by_shift_current_and_time(jl, engine, cli_clock):
    """kafka-consumer-groups --reset-offsets' other targets: --shift-by (from the committed
    offset, kept within the log with the tool's warning; refused without one),
    --to-current (the log end where none is committed; a committed offset as it is),
    --to-datetime (UTC without a zone) and --by-duration (the first offset at or after
    that time)."""
    from datetime import datetime

    ok(jl("topic", "create", "orders"))
    t0 = cli_clock.now_ns()
    engine.produce("orders", [(None, b"x")] * 5, partition=0)
    cli_clock.advance(10_000_000_000)
    engine.produce("orders", [(None, b"y")] * 5, partition=0)
    engine.commit("billing", {("orders", 0): 7})

    def reset(*args):
        got = doc(jl("group", "set-offsets", "billing", "--topic", "orders", *args, "-j"))
        return [r["new_offset"] for r in got]

    assert reset("--shift-by", "-2") == [5]
    r = ok(jl("group", "set-offsets", "billing", "--topic", "orders", "--shift-by", "12"))
    assert r.stderr == ("New offset (17) is higher than latest offset for topic partition "
                        "orders-0. Value will be set to 10\n")
    # past the long range a Java long's addition wraps (resetByShiftBy), then is clamped
    r = ok(jl("group", "set-offsets", "billing", "--topic", "orders", "--shift-by",
              "9223372036854775807", "--dry-run"))
    assert r.stderr == ("New offset (-9223372036854775799) is lower than earliest offset for "
                        "topic partition orders-0. Value will be set to 0\n")
    assert reset("--to-current") == [10]
    assert doc(jl("group", "set-offsets", "fresh", "--topic", "orders", "--to-current",
                  "--dry-run", "-j"))[0]["new_offset"] == 10
    at = datetime.fromtimestamp((t0 + 5_000_000_000) / 1e9, tz=UTC)
    assert reset("--to-datetime", at.strftime("%Y-%m-%dT%H:%M:%S.000Z")) == [5]
    assert reset("--to-datetime", at.strftime("%Y-%m-%dT%H:%M:%S.000+00:00")) == [5]
    assert reset("--to-datetime", at.strftime("%Y-%m-%dT%H:%M:%S.000+0000")) == [5]
    assert reset("--to-datetime", at.strftime("%Y-%m-%dT%H:%M:%S.000+00")) == [5]
    assert reset("--by-duration", "PT5S") == [5]
    assert reset("--by-duration", "PT4,5S") == [5]  # (Duration.parse: ',' as '.')
    assert reset("--by-duration", "-PT1H") == [10]  # (a time to come: the log end)
    # ... with the tool's warning (getLogTimestampOffsets: no record at or after that time)
    r = ok(jl("group", "set-offsets", "billing", "--topic", "orders", "--by-duration",
              "-PT1H", "--dry-run"))
    assert r.stderr == ("Warn: Partition 0 from topic orders is empty. Falling back to latest "
                        "known offset.\n")
    r = ok(jl("group", "set-offsets", "billing", "--topic", "orders", "--by-duration", "PT5S",
              "--dry-run"))
    assert r.stderr == ""
    assert reset("--by-duration", "P1D") == [0]
    assert reset("--by-duration", "1h") == [0]
    r = jl("group", "set-offsets", "fresh", "--topic", "orders", "--shift-by", "1")
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: Cannot shift offset for partition orders-0 since there is no current "
        "committed offset (INVALID_REQUEST 42)\n"))
    # a time without a zone is UTC, whatever the machine's zone (Kafka's Utils.getDateTime
    # appends Z): read in Tokyo, 9 hours ahead, it would be 9 hours in the past
    import time

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TZ", "Asia/Tokyo")
        time.tzset()
        try:
            assert reset("--to-datetime", at.strftime("%Y-%m-%dT%H:%M:%S.000")) == [5]
        finally:
            mp.undo()
            time.tzset()
    # --to-current keeps a committed offset the log start has passed (the tool clamps every
    # other target, not that one)
    assert reset("--to-offset", "2") == [2]
    ok(jl("topic", "alter", "orders", "--config", "retention.bytes=0"))
    assert doc(jl("topic", "describe", "orders", "-j"))["partitions"][0]["log_start_offset"] > 2
    assert reset("--to-current") == [2]
    # Kafka's Utils.getDateTime, strict: a date alone, a time without its milliseconds and
    # a day past its month are refused, never read as midnight or rolled over
    for value, says in (("2000-01-01", "it does not contain a 'T' according to ISO8601"),
                        ("2000-01-01T00:00:00", "(the milliseconds too)"),
                        ("2000-01-01T00:00:00.5Z", "(the milliseconds too)"),
                        ("2000-02-30T00:00:00.000", "day is out of range for month")):
        r = jl("group", "set-offsets", "billing", "--topic", "orders", "--to-datetime", value)
        assert r.exit_code == 2 and f"--to-datetime: {value!r}: " in r.stderr \
            and says in r.stderr, (value, r.stderr)
    for args, says in ((["--to-datetime", "yesterday"], "--to-datetime: 'yesterday'"),
                       (["--by-duration", "PT"], "--by-duration: 'PT'"),
                       (["--by-duration", "PT1.1234567891S"],
                        "--by-duration: 'PT1.1234567891S'"),
                       (["--to-current", "--to-latest"], "(given: --to-latest, --to-current)")):
        r = jl("group", "set-offsets", "billing", "--topic", "orders", *args)
        assert r.exit_code == 2 and says in r.stderr, (args, r.stderr)


def test_set_offsets_of_several_topics_all_topics_and_a_plan_round_trip(jl, engine):
    """kafka-consumer-groups' scopes and its CSV: --topic T:P,..., --all-topics (the
    partitions the group committed), --export (the tool's topic,partition,offset lines and
    its println's blank line) read back by --from-file, whose offsets are clamped with the
    tool's warning; a plan of groups takes this group's lines only."""
    ok(jl("topic", "create", "a", "--partitions", "2"))
    ok(jl("topic", "create", "b", "--partitions", "3"))
    engine.produce("a", [(None, b"x")] * 5, partition=0)
    engine.produce("b", [(None, b"x")] * 2, partition=2)
    engine.commit("g", {("a", 0): 4, ("b", 2): 1})
    r = ok(jl("group", "set-offsets", "g", "--all-topics", "--to-earliest", "--dry-run",
              "--export"))
    assert (r.stdout, r.stderr) == ("a,0,0\nb,2,0\n\n", "")
    r = jl("group", "set-offsets", "g", "--all-topics", "--to-earliest", "--export", "-j")
    assert (r.exit_code, json.loads(r.stdout)) == (2, {"error": {
        "description": "--export prints the new offsets as CSV, --json as JSON: give one"}})
    r = ok(jl("group", "set-offsets", "nobody", "--all-topics", "--to-earliest"))
    assert (r.stdout, r.stderr) == ("\n", "jetlink: notice: group nobody has no committed "
                                          "offset: nothing to reset (--all-topics resets the "
                                          "partitions it has committed offsets for)\n")
    r = ok(jl("group", "set-offsets", "g", "-t", "b:0,2", "-t", "a", "--to-latest",
              "--dry-run"))
    assert lines(r)[2:] == [
        "g                              a                              0          5",
        "g                              a                              1          0",
        "g                              b                              0          0",
        "g                              b                              2          2"]
    plan = jl.tmp / "plan.csv"
    # --export without --dry-run or --execute: kafka-consumer-groups' plan-making line is a
    # dry run, this verb's default writes: refused, nothing reset
    r = jl("group", "set-offsets", "g", "--all-topics", "--to-offset", "1", "--export")
    assert (r.exit_code, r.stderr) == (2, (
        "jetlink: error: --export: give --dry-run to write only the plan (as "
        "kafka-consumer-groups --export does without --execute), or --execute to reset the "
        "offsets and print them (nothing was reset)\n"))
    assert engine.committed("g") == {("a", 0): 4, ("b", 2): 1}
    plan.write_text(ok(jl("group", "set-offsets", "g", "--all-topics", "--to-offset", "1",
                          "--export", "--execute")).stdout)
    assert engine.committed("g") == {("a", 0): 1, ("b", 2): 1}
    engine.commit("g", {("a", 0): 3, ("b", 2): 0})
    plan.write_text("a,0,1\r\nb,2,9\r\n\n")  # a file written on Windows: CRLF
    r = ok(jl("group", "set-offsets", "g", "--from-file", str(plan), "-j"))
    assert doc(r) == [
        {"group": "g", "topic": "a", "partition": 0, "old_offset": 3, "new_offset": 1},
        {"group": "g", "topic": "b", "partition": 2, "old_offset": 0, "new_offset": 2}]
    assert r.stderr == ("New offset (9) is higher than latest offset for topic partition "
                        "b-2. Value will be set to 2\n")
    plan.write_text("h,a,0,0\ng,a,1,0\ng,a,0,2\n")
    assert doc(jl("group", "set-offsets", "g", "--from-file", str(plan), "-j")) == [
        {"group": "g", "topic": "a", "partition": 0, "old_offset": 1, "new_offset": 2},
        {"group": "g", "topic": "a", "partition": 1, "old_offset": None, "new_offset": 0}]
    assert engine.committed("g") == {("a", 0): 2, ("a", 1): 0, ("b", 2): 2}


@pytest.mark.parametrize(("content", "message"), [
    ("", "no reset plan: the file holds no line (expected topic,partition,offset per line)"),
    ("a,0\n", "line 1 'a,0' is neither topic,partition,offset nor "
               "group,topic,partition,offset"),
    ("a,0,1\na,1,2,3\n", "line 2 'a,1,2,3' is not topic,partition,offset (the form of its "
                          "first line)"),
    ("a,x,1\n", "line 1: partition 'x' is not a number from 0 to 2147483647"),
    ("a,-1,1\n", "line 1: partition '-1' is not a number from 0 to 2147483647"),
    ("a,0,9223372036854775808\n",
     "line 1: offset '9223372036854775808' is not a 64-bit integer"),
    ("h,a,0,1\n", "No reset plan for group g found (no line of group,topic,partition,offset "
                  "names it)"),
    ("a,5,1\n", None),
    ("nope,0,1\n", None),
])
def test_a_bad_reset_plan_is_one_line_and_resets_nothing(jl, engine, content, message):
    ok(jl("topic", "create", "a", "--partitions", "2"))
    engine.commit("g", {("a", 0): 0})
    plan = jl.tmp / "plan.csv"
    plan.write_text(content)
    before = data_dir_bytes(jl.data, databases_only=True)
    r = jl("group", "set-offsets", "g", "--from-file", str(plan))
    assert r.exit_code == 1, r.stdout + r.stderr
    if message is None:  # a partition or a topic that is not there: Kafka's error
        assert "(UNKNOWN_TOPIC_OR_PARTITION 3)" in r.stderr, r.stderr
    else:
        assert r.stderr == f"jetlink: error: {plan}: {message}\n"
    assert data_dir_bytes(jl.data, databases_only=True) == before


@pytest.mark.parametrize("value", ["PT", "xyz"])
def test_a_bad_by_duration_names_both_forms_it_takes(jl, value):
    r = jl("group", "set-offsets", "g", "--topic", "t", "--by-duration", value)
    assert r.exit_code == 2
    assert (f"'{value}': expected a number and a unit (ns, us, ms, s, m, h, d, w, M, y), e.g. "
            "1h30m or 1.5d, or java.time.Duration's PnDTnHnMnS as Kafka's tools read it, e.g. "
            "PT1H, P1DT2H, PT0.5S, -PT1H") in " ".join(r.stderr.split()), r.stderr


def test_consume_writes_keys_values_and_headers_as_their_bytes(jl):
    """kafka-console-consumer writes a record's bytes as they are (any bytes: a payload that
    is not UTF-8 is not turned into escapes a reader cannot tell from the text '\\xff');
    --json shows such bytes as base64."""
    ok(jl("topic", "create", "bin"))
    ok(jl("topic", "produce", "bin", "-H", "h:v", input=b"\xff\xfeabc\n"))
    r = ok(jl("topic", "consume", "bin", "--from-beginning", "--print-key", "--print-headers"))
    assert r.stdout_bytes == b"h:v\tnull\t\xff\xfeabc\n"
    got = doc(jl("topic", "consume", "bin", "--from-beginning", "-j"))
    assert got[0]["value"] == {"base64": "//5hYmM="}


def test_consume_one_partition_from_an_offset_as_kafka_console_consumer(jl):
    """--partition P [--offset earliest|latest|N]: that partition alone, no group, from its
    log end unless told; an offset outside the log starts at the log end (the tool's
    auto.offset.reset=latest); the tool's refusals with its texts (exit 2)."""
    ok(jl("topic", "create", "p3", "--partitions", "3"))
    for i in range(1, 7):
        ok(jl("topic", "produce", "p3", f"v{i}", "--partition", "1"))
    ok(jl("topic", "produce", "p3", "other", "--partition", "2"))

    def read(*args: str) -> str:
        return ok(jl("topic", "consume", "p3", "--print-offset", *args)).stdout

    assert read("--partition", "1", "--offset", "4") == "Offset:4\tv5\nOffset:5\tv6\n"
    assert read("--partition", "1", "--offset", "earliest", "--max-messages", "2") == (
        "Offset:0\tv1\nOffset:1\tv2\n")
    assert read("--partition", "1", "--from-beginning", "--max", "1") == "Offset:0\tv1\n"
    assert read("--partition", "1") == read("--partition", "1", "--offset", "latest") == ""
    assert read("--partition", "1", "--offset", "99") == ""
    assert read("--partition", "2", "--offset", "0") == "Offset:0\tother\n"
    r = jl("topic", "consume", "p3", "--partition", "7")
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: This server does not host this topic-partition: partition 7 of topic "
        "'p3' is not in the range [0...3). (UNKNOWN_TOPIC_OR_PARTITION 3)\n"))
    for args, says in (
            (["--offset", "1"], "The partition is required when offset is specified."),
            (["--partition", "1", "--offset", "1", "--from-beginning"],
             "Options from-beginning and offset cannot be specified together."),
            (["--partition", "1", "-g", "g"],
             "Options group and partition cannot be specified together."),
            (["--partition", "1", "--offset", "-1"],
             "The provided offset value '-1' is incorrect. Valid values are 'earliest', "
             "'latest', or a non-negative long.")):
        r = jl("topic", "consume", "p3", *args)
        assert (r.exit_code, r.stderr) == (2, f"jetlink: error: {says}\n"), args
    assert doc(jl("group", "ls", "-j")) == []  # (no group was made by any of them)


def test_set_offsets_takes_the_tools_execute_and_refuses_it_with_dry_run(jl):
    ok(jl("topic", "create", "orders"))
    ok(jl("topic", "produce", "orders", "x", "--count", "3"))
    ok(jl("topic", "consume", "orders", "-g", "g", "--from-beginning"))
    rows = doc(jl("group", "set-offsets", "g", "--topic", "orders", "--to-offset", "1",
                  "--execute", "-j"))
    assert [(r["old_offset"], r["new_offset"]) for r in rows] == [(3, 1)]
    from helpers import data_dir_bytes

    before = data_dir_bytes(jl.data)
    r = jl("group", "set-offsets", "g", "--topic", "orders", "--to-earliest", "--execute",
           "--dry-run")
    assert (r.exit_code, r.stderr) == (2, "jetlink: error: Option [reset-offsets] only accepts "
                                          "one of [execute] and [dry-run]\n")
    assert data_dir_bytes(jl.data) == before
    assert doc(jl("group", "describe", "g", "-j"))["lags"][0]["current_offset"] == 1


@pytest.mark.parametrize("json_flag", [[], ["-j"]])
def test_a_produce_interrupted_says_what_was_stored(tmp_path, json_flag):
    """Ctrl-C during `topic produce --count`: what the calls so far stored (each call all or
    nothing, an interrupt held until its call returns), exactly as the topic holds it; with
    --json the document of the records placed; exit 130, no traceback."""
    d = DataDir(tmp_path / "data")
    k = Kafka(d.open())
    k.create_topic("big", 1)
    proc = _jetlink(tmp_path / "data", "topic", "produce", "big", "--count", "50000000",
                    "x{{Count}}", *json_flag)
    try:
        wait_until(lambda: k.describe_topic("big").partitions[0].log_end > 0,
                   message="the first records stored")
        proc.send_signal(signal.SIGINT)
        out, errs = proc.communicate(timeout=WAIT_TIMEOUT)
    finally:
        proc.kill()
    end = k.describe_topic("big").partitions[0].log_end
    d.close()
    assert proc.returncode == 130, errs
    assert errs.splitlines()[-1] == (f"jetlink: interrupted: {end:,} of 50,000,000 records "
                                     f"were stored (partition 0: offsets 0..{end - 1})")
    if json_flag:
        assert len(json.loads(out)) == end


def test_produce_templates_follow_pub_s_rule(jl, engine):
    """A value template that does not parse is said and produced as typed; a header's is an
    error and nothing is produced (natscli's parseStringsToHeader, as `pub`)."""
    ok(jl("topic", "create", "t"))
    r = ok(jl("topic", "produce", "t", "v{{Nope}}"))
    assert r.stderr == 'Could not parse value template: function "Nope" not defined\n'
    assert engine.describe_topic("t").partitions[0].log_end == 1
    r = jl("topic", "produce", "t", "v", "-H", "k:{{Nope}}")
    assert (r.exit_code, r.stderr) == (1, 'jetlink: error: failed to parse Header template '
                                          'for k: function "Nope" not defined\n')
    assert engine.describe_topic("t").partitions[0].log_end == 1


def test_to_datetime_reads_every_millisecond_exactly():
    """Kafka's Utils.getDateTime parses to the exact millisecond; a float timestamp() * 1000
    read 2004-03-15T07:55:47.472 as ...471, a record early (ListOffsets by time)."""
    from datetime import datetime, timedelta

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from jetlink.cli.group import _datetime_ms

    assert _datetime_ms("2004-03-15T07:55:47.472") == 1079337347472
    assert _datetime_ms("2004-03-15T09:55:47.472+02:00") == 1079337347472

    @settings(max_examples=300, deadline=None)
    @given(st.integers(min_value=0, max_value=253402300799999))
    def exact(ms):
        at = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
        text = at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}"
        assert _datetime_ms(text) == ms

    exact()


def test_delete_offsets_rows_in_the_tool_s_order(jl, engine):
    """kafka-consumer-groups sorts the statuses by the text topic + partition: big1, big10,
    big11, big2."""
    ok(jl("topic", "create", "big", "--partitions", "12"))
    engine.commit("g", {("big", p): 0 for p in (1, 2, 10, 11)})
    got = doc(jl("group", "delete-offsets", "g", "-t", "big:2,1,11,10", "-j"))["partitions"]
    assert [r["partition"] for r in got] == [1, 10, 11, 2]
