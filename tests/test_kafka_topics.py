"""Kafka-style topics and consumer groups (core/kafka/topics.py, errors.py, partitioner.py)."""

from __future__ import annotations

import json

import pytest
from helpers import join_group

from jetlink.core.kafka.errors import ERROR_CODES, JETLINK_RANGE, KafkaError, error_code
from jetlink.core.kafka.partitioner import default_partition, murmur2, to_positive
from jetlink.core.kafka.topics import (
    MIRROR_SYNCED_CONFIGS,
    SCHEMA_STEPS,
    TOPIC_CONFIG_DEFAULTS,
    Kafka,
    Record,
    partition_range,
    record_key,
    record_size,
    records_bytes,
    validate_topic_config,
    validate_topic_name,
)
from jetlink.core.store import DataDir

DAY_MS = 86_400_000


@pytest.fixture
def kafka(dd, clock):
    return Kafka(dd.open(), clock)


def err(excinfo):
    e = excinfo.value
    return e.name, e.description


def sizes_consistent(kafka, topic):
    """partitions.bytes equals the records' summed sizes, partition by partition."""
    rowid = kafka.topic_rowid(topic)
    info = kafka.describe_topic(topic)
    with kafka.cluster.read() as conn:
        for p in info.partitions:
            lo, hi = partition_range(rowid, p.partition)
            assert records_bytes(conn, lo, hi) == p.bytes, p


def offsets_of(kafka, topic, partition=0):
    start = kafka.describe_topic(topic).partitions[partition].log_start
    return [r.offset for r in kafka.fetch(topic, partition, start, 10_000)]


# --- partitioner -------------------------------------------------------------------------------

# Apache Kafka clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java testMurmur2
MURMUR2_VECTORS = [
    (b"21", -973932308),
    (b"foobar", -790332482),
    (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
    (b"abc", 479470107),
]


@pytest.mark.parametrize(("data", "expected"), MURMUR2_VECTORS)
def test_murmur2_kafka_vectors(data, expected):
    assert murmur2(data) == expected


def test_default_partition_matches_kafka_streams_precomputed_partitions():
    # streams/src/test/.../KTableKTableForeignKeyInnerJoinMultiIntegrationTest: String keys
    # "0".."9" over 3 partitions, "pre-computed using the default Murmur2 hash".
    expected = [2, 0, 2, 2, 1, 0, 1, 0, 0, 2]
    assert [default_partition(str(i).encode(), 3) for i in range(10)] == expected


def test_to_positive_is_a_mask_not_abs():
    assert to_positive(-2147483648) == 0
    assert to_positive(-1) == 2147483647
    assert to_positive(5) == 5
    assert default_partition(b"foobar", 1) == 0
    with pytest.raises(ValueError):
        default_partition(b"x", 0)


# --- errors ------------------------------------------------------------------------------------


def test_error_codes_are_kafkas():
    assert {name: ERROR_CODES[name] for name in (
        "OFFSET_OUT_OF_RANGE", "UNKNOWN_TOPIC_OR_PARTITION", "MESSAGE_TOO_LARGE",
        "INVALID_TOPIC_EXCEPTION", "UNKNOWN_MEMBER_ID", "TOPIC_ALREADY_EXISTS",
        "INVALID_PARTITIONS", "INVALID_REPLICATION_FACTOR", "INVALID_CONFIG", "INVALID_REQUEST",
        "POLICY_VIOLATION", "NON_EMPTY_GROUP", "GROUP_ID_NOT_FOUND", "INVALID_RECORD",
        "CLUSTER_LINK_NOT_FOUND", "CLUSTER_LINK_EXISTS", "CLUSTER_LINK_IN_USE")} == {
        "OFFSET_OUT_OF_RANGE": 1, "UNKNOWN_TOPIC_OR_PARTITION": 3, "MESSAGE_TOO_LARGE": 10,
        "INVALID_TOPIC_EXCEPTION": 17, "UNKNOWN_MEMBER_ID": 25, "TOPIC_ALREADY_EXISTS": 36,
        "INVALID_PARTITIONS": 37, "INVALID_REPLICATION_FACTOR": 38, "INVALID_CONFIG": 40,
        "INVALID_REQUEST": 42, "POLICY_VIOLATION": 44, "NON_EMPTY_GROUP": 68,
        "GROUP_ID_NOT_FOUND": 69, "INVALID_RECORD": 87, "CLUSTER_LINK_NOT_FOUND": 10000,
        "CLUSTER_LINK_EXISTS": 10001, "CLUSTER_LINK_IN_USE": 10002}
    assert ERROR_CODES["INVALID_CLUSTER_LINK"] in JETLINK_RANGE
    assert len(set(ERROR_CODES.values())) == len(ERROR_CODES)


def test_kafka_error_document_and_aliases():
    e = KafkaError("RECORD_TOO_LARGE", "too big")
    assert (e.name, e.error_code) == ("MESSAGE_TOO_LARGE", 10)
    assert e.to_dict() == {"error": {"error_code": 10, "error_name": "MESSAGE_TOO_LARGE",
                                     "message": "too big"}}
    assert KafkaError("NON_EMPTY_GROUP").description == "The group is not empty."
    assert KafkaError.from_code(36).name == "TOPIC_ALREADY_EXISTS"
    assert error_code("TOPIC_EXISTS") == 36
    with pytest.raises(KeyError):
        KafkaError("NO_SUCH_ERROR")


# --- names and configs ----------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "reason"), [
    ("", "the empty string is not allowed"),
    (".", "'.' is not allowed"),
    ("..", "'..' is not allowed"),
    ("a" * 250, f"the length of '{'a' * 250}' is longer than the max allowed length 249"),
    ("a b",
     "'a b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"),
    ("ördër",
     "'ördër' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"),
])
def test_invalid_topic_names(name, reason):
    with pytest.raises(KafkaError) as exc:
        validate_topic_name(name)
    assert err(exc) == ("INVALID_TOPIC_EXCEPTION", f"Topic name is invalid: {reason}")


@pytest.mark.parametrize("name", ["orders", "a.b_c-D9", "a" * 249, "..."])
def test_valid_topic_names(name):
    assert validate_topic_name(name) == name


CONFIG_REFUSALS = [
    ("foo.bar", "1", "Unknown topic config name: foo.bar"),
    ("retention.ms", "abc",
     "Invalid value abc for configuration retention.ms: Not a number of type LONG"),
    ("retention.ms", "-2",
     "Invalid value -2 for configuration retention.ms: Value must be at least -1"),
    ("retention.ms", "1.5",
     "Invalid value 1.5 for configuration retention.ms: Not a number of type LONG"),
    ("max.message.bytes", "2147483648",
     "Invalid value 2147483648 for configuration max.message.bytes: Not a number of type INT"),
    ("max.message.bytes", "-1",
     "Invalid value -1 for configuration max.message.bytes: Value must be at least 0"),
    ("min.insync.replicas", "0",
     "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"),
    ("cleanup.policy", "compact,remove",
     "Invalid value compact,remove for configuration cleanup.policy: "
     "String must be one of: compact, delete"),
    ("compression.type", "brotli",
     "Invalid value brotli for configuration compression.type: "
     "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"),
    ("message.timestamp.type", "createtime",
     "Invalid value createtime for configuration message.timestamp.type: "
     "String must be one of: CreateTime, LogAppendTime"),
    ("unclean.leader.election.enable", "yes",
     "Invalid value yes for configuration unclean.leader.election.enable: "
     "Expected value to be either true or false"),
    ("segment.bytes", "13",
     "Invalid value 13 for configuration segment.bytes: Value must be at least 14"),
    ("segment.ms", "0", "Invalid value 0 for configuration segment.ms: Value must be at least 1"),
    ("max.compaction.lag.ms", "0",
     "Invalid value 0 for configuration max.compaction.lag.ms: Value must be at least 1"),
    ("min.cleanable.dirty.ratio", "1.5",
     "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: "
     "Value must be no more than 1"),  # (LogConfig's between(0, 1): Integer bounds)
    ("min.cleanable.dirty.ratio", "-0.5d",
     "Invalid value -0.5d for configuration min.cleanable.dirty.ratio: "
     "Value must be at least 0"),
    # Java's Double.parseDouble: no digit separators, no Python spellings of infinity
    ("min.cleanable.dirty.ratio", "1_0e-1",
     "Invalid value 1_0e-1 for configuration min.cleanable.dirty.ratio: "
     "Not a number of type DOUBLE"),
    ("min.cleanable.dirty.ratio", "inf",
     "Invalid value inf for configuration min.cleanable.dirty.ratio: "
     "Not a number of type DOUBLE"),
    ("compression.gzip.level", "0",
     "Invalid value 0 for configuration compression.gzip.level: "
     "Value must be between 1 and 9 or equal to -1"),
    ("compression.lz4.level", "18",
     "Invalid value 18 for configuration compression.lz4.level: Value must be no more than 17"),
    # the suffix is skipped, not applied: parseDouble reads a double, never a float's value
    ("min.cleanable.dirty.ratio", "1.00000001f",
     "Invalid value 1.00000001f for configuration min.cleanable.dirty.ratio: "
     "Value must be no more than 1"),
    ("min.cleanable.dirty.ratio", "NaNd",
     "Invalid value NaNd for configuration min.cleanable.dirty.ratio: "
     "Not a number of type DOUBLE"),
    ("min.cleanable.dirty.ratio", "0x1",  # (a hexadecimal double needs its p exponent)
     "Invalid value 0x1 for configuration min.cleanable.dirty.ratio: "
     "Not a number of type DOUBLE"),
    # String.trim strips only characters up to U+0020: a no-break space stays, and is no
    # digit nor a choice
    ("retention.ms", "5\u00a0",
     "Invalid value 5\u00a0 for configuration retention.ms: Not a number of type LONG"),
    ("compression.type", "\u2003gzip",
     "Invalid value \u2003gzip for configuration compression.type: "
     "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"),
    ("leader.replication.throttled.replicas", "0:1,x",
     "Invalid value [0:1, x] for configuration leader.replication.throttled.replicas: "
     "leader.replication.throttled.replicas must be the literal '*' or a list of replicas in "
     "the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."),
    ("message.format.version", "4.0",
     "Invalid value 4.0 for configuration message.format.version: "
     "Version 4.0 is not a valid version"),
    ("message.format.version", "3.0-IV2",
     "Invalid value 3.0-IV2 for configuration message.format.version: "
     "Version 3.0-IV2 is not a valid version"),
    # LogConfig.validateRemoteStorageOnlyIfSystemEnabled: no tiered storage here
    ("remote.storage.enable", "true",
     "Tiered Storage functionality is disabled in the broker. Topic cannot be configured "
     "with remote log storage."),
    ("confluent.placement.constraints", "{not json",
     "Invalid value {not json for configuration confluent.placement.constraints: "
     "Value must be JSON text "
     "(Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"),
    ("confluent.placement.constraints", "[" * 5000 + "]" * 5000,
     "Invalid value " + "[" * 40 + "... (10,000 characters) for configuration "
     "confluent.placement.constraints: Value must be JSON text "
     "(nested too deeply (more levels than a configuration ever has))"),
]


@pytest.mark.parametrize(("key", "value", "message"), CONFIG_REFUSALS,
                         ids=[f"{k}={v[:40]}" for k, v, _ in CONFIG_REFUSALS])
def test_config_refusals(kafka, key, value, message):
    with pytest.raises(KafkaError) as exc:
        validate_topic_config(key, value)
    assert err(exc) == ("INVALID_CONFIG", message)
    assert exc.value.field == key
    with pytest.raises(KafkaError) as exc:
        kafka.create_topic("t", 1, {key: value})
    assert err(exc) == ("INVALID_CONFIG", message)
    assert kafka.topics() == []


@pytest.mark.parametrize(("key", "value", "stored"), [
    ("retention.ms", " 60000 ", "60000"),
    ("retention.ms", "-1", "-1"),
    ("retention.bytes", "-5", "-5"),
    ("cleanup.policy", "compact, delete", "compact, delete"),
    ("cleanup.policy", "", ""),
    ("unclean.leader.election.enable", "TRUE", "TRUE"),
    ("min.cleanable.dirty.ratio", "0", "0"),
    ("min.cleanable.dirty.ratio", " .5 ", ".5"),
    ("compression.gzip.level", "-1", "-1"),
    ("compression.zstd.level", "-131072", "-131072"),
    ("confluent.placement.constraints", '{"version": 1, "replicas": []}',
     '{"version": 1, "replicas": []}'),
    ("max.message.bytes", 100, "100"),
    # Java's Double.parseDouble: a suffix, a hexadecimal value, NaN (which ConfigDef.Range
    # lets through: both its comparisons are false)
    ("min.cleanable.dirty.ratio", "0.5d", "0.5d"),
    ("min.cleanable.dirty.ratio", "0x1p-1", "0x1p-1"),
    ("min.cleanable.dirty.ratio", "NaN", "NaN"),
    # Long.parseLong reads any script's decimal digits; String.trim strips control chars
    ("retention.ms", "\u0663", "\u0663"),
    ("retention.ms", "\x015", "5"),
    ("compression.type", "gzip\x00", "gzip"),
    # LogConfig's other names
    ("leader.replication.throttled.replicas", "*", "*"),
    ("follower.replication.throttled.replicas", "100:10,12:10", "100:10,12:10"),
    ("leader.replication.throttled.replicas", "", ""),
    ("message.format.version", "3.0", "3.0"),
    ("message.format.version", "0.10.0.1", "0.10.0.1"),
    ("message.format.version", "2.8-IV1", "2.8-IV1"),
    ("message.downconversion.enable", "false", "false"),
    ("remote.log.copy.disable", "true", "true"),
    ("remote.log.delete.on.disable", "false", "false"),
    ("remote.storage.enable", "false", "false"),
])
def test_config_accepted(key, value, stored):
    assert validate_topic_config(key, value) == stored


def test_policy_reads_a_double_as_java_does():
    """The engine reads min.cleanable.dirty.ratio with the rule that accepted it."""
    from jetlink.core.kafka.topic_configs import Policy

    assert Policy.of({"min.cleanable.dirty.ratio": "0x1p-1"}).dirty_ratio == 0.5
    assert Policy.of({"min.cleanable.dirty.ratio": "0.25d"}).dirty_ratio == 0.25
    assert Policy.of({"retention.ms": "\u0663"}).retention_ms == 3


def test_config_defaults():
    d = TOPIC_CONFIG_DEFAULTS
    assert d["max.message.bytes"] == "1048588"
    assert d["retention.ms"] == "604800000"
    assert d["retention.bytes"] == "-1"
    assert d["cleanup.policy"] == "delete"
    assert d["min.insync.replicas"] == "1"
    assert d["compression.type"] == "producer"
    assert d["delete.retention.ms"] == "86400000"
    assert d["min.compaction.lag.ms"] == "0"
    assert d["max.compaction.lag.ms"] == "9223372036854775807"
    assert d["message.timestamp.type"] == "CreateTime"
    assert d["message.timestamp.difference.max.ms"] == "9223372036854775807"
    assert d["segment.bytes"] == "1073741824"
    assert d["segment.ms"] == "604800000"
    assert d["unclean.leader.election.enable"] == "false"
    assert d["confluent.placement.constraints"] == ""
    assert set(MIRROR_SYNCED_CONFIGS) <= set(d)


def test_min_compaction_lag_above_max_is_refused(kafka):
    with pytest.raises(KafkaError) as exc:
        kafka.create_topic("t", 1, {"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"})
    assert err(exc) == ("INVALID_CONFIG", "conflict topic config setting min.compaction.lag.ms "
                                          "(10) > max.compaction.lag.ms (5)")


# --- topics -----------------------------------------------------------------------------------


def test_create_describe_list_delete(kafka, clock):
    info = kafka.create_topic("orders", 3, {"retention.ms": "60000"})
    assert (info.name, info.partition_count, info.configs) == (
        "orders", 3, {"retention.ms": "60000"})
    assert len(info.topic_id) == 22 and not info.topic_id.startswith("-")
    assert info.created_ms == clock.now_ns() // 1_000_000
    again = kafka.describe_topic("orders")
    assert again.topic_id == info.topic_id
    assert again.effective_configs()["retention.ms"] == "60000"
    assert again.effective_configs()["max.message.bytes"] == "1048588"
    assert again.to_json() == {
        "topic_name": "orders", "topic_id": info.topic_id, "is_internal": False,
        "replication_factor": 1, "partitions_count": 3, "mirror_link": None,
        "created_ms": info.created_ms, "configs": {"retention.ms": "60000"},
        "partitions": [{"partition_id": p, "leader": 1, "replicas": [1], "isr": [1],
                        "log_start_offset": 0, "log_end_offset": 0, "size_bytes": 0}
                       for p in range(3)]}
    kafka.create_topic("a", 1)
    assert [t.name for t in kafka.topics()] == ["a", "orders"]
    kafka.delete_topic("orders")
    assert [t.name for t in kafka.topics()] == ["a"]
    with pytest.raises(KafkaError) as exc:
        kafka.describe_topic("orders")
    assert err(exc) == ("UNKNOWN_TOPIC_OR_PARTITION", "Topic 'orders' does not exist as expected")
    with pytest.raises(KafkaError):
        kafka.delete_topic("orders")


def test_create_refusals(kafka):
    kafka.create_topic("orders", 1)
    cases = [
        (("orders", 1), "TOPIC_ALREADY_EXISTS", "Topic 'orders' already exists."),
        (("x", 0), "INVALID_PARTITIONS",
         "Number of partitions was set to an invalid non-positive value."),
        (("x", 1025), "INVALID_PARTITIONS",
         "Number of partitions 1025 is above jetlink's limit of 1024 per topic."),
        (("bad name", 1), "INVALID_TOPIC_EXCEPTION",
         "Topic name is invalid: 'bad name' contains one or more characters other than ASCII "
         "alphanumerics, '.', '_' and '-'"),
    ]
    for args, name, text in cases:
        with pytest.raises(KafkaError) as exc:
            kafka.create_topic(*args)
        assert err(exc) == (name, text)
    kafka.create_topic("a.b", 1)
    with pytest.raises(KafkaError) as exc:
        kafka.create_topic("a_b", 1)
    assert err(exc) == ("INVALID_TOPIC_EXCEPTION", "Topic 'a_b' collides with existing topic: a.b")
    with pytest.raises(KafkaError) as exc:
        kafka.create_topic("x", 1, replication_factor=3)
    assert exc.value.name == "INVALID_REPLICATION_FACTOR"
    assert "target replication factor of 3 cannot be reached" in exc.value.description
    assert kafka.create_topic("v", 2, validate_only=True).partition_count == 2
    assert not kafka.has_topic("v")


def test_alter_configs_and_partitions(kafka):
    kafka.create_topic("t", 2, {"retention.ms": "1000", "segment.ms": "5000"})
    info = kafka.alter_topic("t", configs={"cleanup.policy": "compact"}, delete=["segment.ms"])
    assert info.configs == {"cleanup.policy": "compact", "retention.ms": "1000"}
    info = kafka.alter_topic("t", partitions=4)
    assert [p.partition for p in info.partitions] == [0, 1, 2, 3]
    for partitions, text in [
        (4, "Topic already has 4 partition(s)."),
        (3, "The topic t currently has 4 partition(s); 3 would not be an increase."),
    ]:
        with pytest.raises(KafkaError) as exc:
            kafka.alter_topic("t", partitions=partitions)
        assert err(exc) == ("INVALID_PARTITIONS", text)
    with pytest.raises(KafkaError) as exc:
        kafka.alter_topic("t", delete=["nope"])
    assert err(exc) == ("INVALID_CONFIG", "Unknown topic config name: nope")
    with pytest.raises(KafkaError) as exc:
        kafka.alter_topic("t", configs={"retention.ms": "x"})
    assert exc.value.name == "INVALID_CONFIG"
    assert kafka.describe_topic("t").configs == {"cleanup.policy": "compact",
                                                 "retention.ms": "1000"}


def test_mirror_topics_are_read_only_and_keep_synced_configs(kafka):
    kafka.create_topic("m", 2, {"retention.ms": "1000"}, mirror_link="L")
    assert kafka.describe_topic("m").mirror_link == "L"
    with pytest.raises(KafkaError) as exc:
        kafka.produce("m", [(None, b"x")])
    assert err(exc) == ("INVALID_REQUEST", "Cannot append records to read-only mirror topic 'm'")
    with pytest.raises(KafkaError) as exc:
        kafka.alter_topic("m", configs={"retention.ms": "5"})
    assert err(exc) == ("INVALID_CONFIG", "Topic config 'retention.ms' of mirror topic 'm' is "
                                          "synced from its source topic and cannot be altered.")
    with pytest.raises(KafkaError) as exc:
        kafka.alter_topic("m", partitions=3)
    assert exc.value.name == "INVALID_REQUEST"
    # not synced: users may override; config sync (internal) may change the synced ones
    kafka.alter_topic("m", configs={"min.insync.replicas": "2"})
    kafka.alter_topic("m", configs={"retention.ms": "5"}, partitions=3, internal=True)
    info = kafka.describe_topic("m")
    assert info.configs == {"min.insync.replicas": "2", "retention.ms": "5"}
    assert info.partition_count == 3
    kafka.set_mirror_link("m", None)
    assert kafka.produce("m", [(None, b"x")]) == [(0, 0)]


# --- produce / fetch ----------------------------------------------------------------------------


def test_record_key_scheme():
    assert record_key(1, 0, 0) == 1 << 50
    assert record_key(3, 2, 7) == (((3 << 10) | 2) << 40) | 7
    lo, hi = partition_range(3, 2)
    assert (lo, hi - lo) == (record_key(3, 2, 0), 1 << 40)


def test_record_size_is_kafkas_v2_batch_of_one():
    # 61 bytes of batch header + DefaultRecord: length varint, attributes, timestamp delta,
    # offset delta, key length -1, value length 1, "a", header count 0.
    assert record_size(None, b"a") == 61 + 1 + 7
    assert record_size(b"k", b"v", [("h", b"1")]) == 61 + 1 + 12
    assert record_size(b"k" * 64, None) == 61 + 2 + (3 + 2 + 64 + 1 + 1)


def test_keyed_records_use_the_default_partitioner(kafka):
    kafka.create_topic("t", 3)
    placed = kafka.produce("t", [(str(i).encode(), b"v") for i in range(10)])
    assert [p for p, _ in placed] == [2, 0, 2, 2, 1, 0, 1, 0, 0, 2]
    assert [off for p, off in placed if p == 2] == [0, 1, 2, 3]
    # str keys are UTF-8
    assert kafka.produce("t", [("foobar", "v")])[0][0] == default_partition(b"foobar", 3)


def test_unkeyed_records_are_sticky_per_call_and_rotate(kafka):
    kafka.create_topic("t", 3)
    assert kafka.produce("t", [(None, b"a"), (None, b"b")]) == [(0, 0), (0, 1)]
    assert kafka.produce("t", [(None, b"c")]) == [(1, 0)]
    assert kafka.produce("t", [(None, b"d")]) == [(2, 0)]
    assert kafka.produce("t", [(None, b"e")]) == [(1, 1)]
    assert kafka.produce("t", [(None, b"f")], partition=0) == [(0, 2)]
    with pytest.raises(KafkaError) as exc:
        kafka.produce("t", [(None, b"g")], partition=3)
    assert err(exc) == ("UNKNOWN_TOPIC_OR_PARTITION",
                        "Invalid partition given with record: 3 is not in the range [0...3).")


def test_fetch_records_headers_and_json(kafka, clock):
    kafka.create_topic("t", 1)
    now = clock.now_ns() // 1_000_000
    kafka.produce("t", [
        (b"k", b"v", [("h", b"1"), ("h", b"2"), ("bin", b"\xff")]),
        {"key": None, "value": None, "timestamp": now - 5},
        (b"\x00\xfe", "caf\u00e9"),
    ])
    recs = kafka.fetch("t", 0, 0)
    assert recs[0] == Record(0, 0, now, b"k", b"v", [("h", b"1"), ("h", b"2"), ("bin", b"\xff")])
    assert recs[1] == Record(0, 1, now - 5, None, None, [])
    assert [r.to_json() for r in recs] == [
        {"partition": 0, "offset": 0, "timestamp": now, "key": "k", "value": "v",
         "headers": [["h", "1"], ["h", "2"], ["bin", {"base64": "/w=="}]]},
        {"partition": 0, "offset": 1, "timestamp": now - 5, "key": None, "value": None,
         "headers": []},
        {"partition": 0, "offset": 2, "timestamp": now, "key": {"base64": "AP4="},
         "value": "caf\u00e9", "headers": []},
    ]
    assert [r.offset for r in kafka.fetch("t", 0, 1, max_records=1)] == [1]
    assert kafka.fetch("t", 0, 3) == []
    with pytest.raises(KafkaError) as exc:
        kafka.fetch("t", 0, 4)
    assert err(exc) == ("OFFSET_OUT_OF_RANGE", "Fetch position offset 4 is out of range for "
                        "partition t-0: log start offset 0, log end offset 3.")
    with pytest.raises(KafkaError) as exc:
        kafka.fetch("t", 1, 0)
    assert exc.value.name == "UNKNOWN_TOPIC_OR_PARTITION"
    sizes_consistent(kafka, "t")


def test_max_message_bytes(kafka):
    kafka.create_topic("t", 1, {"max.message.bytes": "100"})
    fits = b"x" * (100 - record_size(None, b""))
    assert record_size(None, fits) == 100
    kafka.produce("t", [(None, fits)])
    with pytest.raises(KafkaError) as exc:
        kafka.produce("t", [(None, b"ok"), (None, fits + b"x")])
    assert err(exc) == ("MESSAGE_TOO_LARGE", "The record batch size in the append to t-0 is 101 "
                        "bytes which exceeds the maximum configured value of 100.")
    assert kafka.describe_topic("t").partitions[0].log_end == 1  # all or nothing
    big = b"x" * 1_048_588
    kafka.create_topic("d", 1)
    with pytest.raises(KafkaError) as exc:
        kafka.produce("d", [(b"k", big)])
    assert exc.value.name == "MESSAGE_TOO_LARGE"


def test_timestamps(kafka, clock):
    now = clock.now_ns() // 1_000_000
    kafka.create_topic("c", 1, {"message.timestamp.before.max.ms": "1000"})
    kafka.produce("c", [(None, b"a")], timestamp_ms=now - 1000)
    with pytest.raises(KafkaError) as exc:
        kafka.produce("c", [(None, b"a", None, now - 1001)])
    assert err(exc) == ("INVALID_TIMESTAMP", f"Timestamp {now - 1001} of message with offset 1 "
                        f"is out of range. The timestamp should be within [{now - 1000}, "
                        "9223372036854775807]")
    kafka.create_topic("l", 1, {"message.timestamp.type": "LogAppendTime"})
    kafka.produce("l", [(None, b"a", None, 5)])
    assert kafka.fetch("l", 0, 0)[0].timestamp == now


def test_compacted_topics_refuse_keyless_records(kafka):
    kafka.create_topic("t", 2, {"cleanup.policy": "compact"})
    with pytest.raises(KafkaError) as exc:
        kafka.produce("t", [(None, b"v")], partition=1)
    assert err(exc) == ("INVALID_RECORD", "Compacted topic cannot accept message without key in "
                        "topic partition t-1.")


def test_bulk_produce(kafka):
    kafka.create_topic("t", 8)
    n = 20_000
    placed = kafka.produce("t", ((b"key-%d" % i, b"value-%d" % i) for i in range(n)))
    assert len(placed) == n
    info = kafka.describe_topic("t")
    assert sum(p.log_end for p in info.partitions) == n
    for p, off in placed[:50]:
        assert kafka.fetch("t", p, off, 1)[0].offset == off
    sizes_consistent(kafka, "t")
    kafka.create_topic("u", 4)
    assert {p for p, _ in kafka.produce("u", [(None, b"v")] * 1000)} == {0}
    sizes_consistent(kafka, "u")


def test_offset_for_timestamp(kafka, clock):
    kafka.create_topic("t", 1)
    now = clock.now_ns() // 1_000_000
    kafka.produce("t", [(None, b"a", None, now - 30), (None, b"b", None, now - 20),
                        (None, b"c", None, now - 10)])
    assert kafka.offset_for_timestamp("t", 0, now - 25) == 1
    assert kafka.offset_for_timestamp("t", 0, 0) == 0
    assert kafka.offset_for_timestamp("t", 0, now) == 3


# --- retention and compaction ----------------------------------------------------------------


def test_retention_ms_advances_log_start(kafka, clock):
    kafka.create_topic("t", 1, {"retention.ms": "60000"})
    kafka.produce("t", [(None, b"a"), (None, b"b")])
    clock.advance_s(30)
    kafka.produce("t", [(None, b"c")])
    clock.advance_s(30)  # now - first == 60000: not yet (Kafka deletes when > retention.ms)
    assert kafka.describe_topic("t").partitions[0].log_start == 0
    clock.advance_s(0.001)
    part = kafka.describe_topic("t").partitions[0]
    assert (part.log_start, part.log_end) == (2, 3)
    assert offsets_of(kafka, "t") == [2]
    with pytest.raises(KafkaError) as exc:
        kafka.fetch("t", 0, 1)
    assert exc.value.name == "OFFSET_OUT_OF_RANGE"
    sizes_consistent(kafka, "t")
    clock.advance_s(31)
    assert kafka.apply_retention() == 1
    part = kafka.describe_topic("t").partitions[0]
    assert (part.log_start, part.log_end, part.bytes) == (3, 3, 0)
    assert kafka.apply_retention() == 0
    assert kafka.produce("t", [(None, b"d")]) == [(0, 3)]


def test_retention_ms_minus_one_keeps_everything(kafka, clock):
    kafka.create_topic("t", 1, {"retention.ms": "-1"})
    kafka.produce("t", [(None, b"a")])
    clock.advance_s(86400 * 365)
    assert kafka.describe_topic("t").partitions[0].log_start == 0


def test_retention_bytes_keeps_at_least_the_limit(kafka):
    one = record_size(None, b"x" * 10)
    kafka.create_topic("t", 1, {"retention.bytes": str(3 * one + 1)})
    kafka.produce("t", [(None, b"x" * 10)] * 5)
    part = kafka.describe_topic("t").partitions[0]
    # Kafka's rule: delete the oldest while what stays is still >= retention.bytes
    assert (part.log_start, part.log_end, part.bytes) == (1, 5, 4 * one)
    kafka.alter_topic("t", configs={"retention.bytes": str(3 * one)})
    part = kafka.describe_topic("t").partitions[0]
    assert (part.log_start, part.bytes) == (2, 3 * one)
    sizes_consistent(kafka, "t")


def test_compaction_keeps_the_last_record_per_key(kafka, clock):
    kafka.create_topic("t", 1, {"cleanup.policy": "compact"})
    kafka.produce("t", [(b"a", b"1"), (b"b", b"1"), (b"a", b"2"), (b"c", b"1"), (b"b", b"2")])
    recs = kafka.fetch("t", 0, 0)
    assert [(r.offset, r.key, r.value) for r in recs] == [
        (2, b"a", b"2"), (3, b"c", b"1"), (4, b"b", b"2")]
    part = kafka.describe_topic("t").partitions[0]
    assert (part.log_start, part.log_end) == (0, 5)  # the log start stays
    assert kafka.fetch("t", 0, 1)[0].offset == 2  # a fetch skips the holes
    sizes_consistent(kafka, "t")
    # a later batch compacts against the cleaned part
    kafka.produce("t", [(b"a", b"3"), (b"c", b"2"), (b"d", b"1")])
    kafka.apply_retention()
    assert [(r.offset, r.key, r.value) for r in kafka.fetch("t", 0, 0)] == [
        (4, b"b", b"2"), (5, b"a", b"3"), (6, b"c", b"2"), (7, b"d", b"1")]
    sizes_consistent(kafka, "t")


def test_compaction_tombstones_go_after_delete_retention(kafka, clock):
    kafka.create_topic("t", 1, {"cleanup.policy": "compact", "delete.retention.ms": "1000"})
    kafka.produce("t", [(b"a", b"1"), (b"b", b"1"), (b"a", None)])
    assert [(r.key, r.value) for r in kafka.fetch("t", 0, 0)] == [(b"b", b"1"), (b"a", None)]
    clock.advance_s(1)
    assert [(r.key, r.value) for r in kafka.fetch("t", 0, 0)] == [(b"b", b"1")]
    part = kafka.describe_topic("t").partitions[0]
    assert (part.log_start, part.log_end) == (0, 3)
    sizes_consistent(kafka, "t")


def test_min_compaction_lag_delays_cleaning(kafka, clock):
    kafka.create_topic("t", 1, {"cleanup.policy": "compact", "min.compaction.lag.ms": "10000"})
    kafka.produce("t", [(b"a", b"1"), (b"a", b"2")])
    assert len(kafka.fetch("t", 0, 0)) == 2
    clock.advance_s(10)
    assert [(r.offset, r.value) for r in kafka.fetch("t", 0, 0)] == [(1, b"2")]


def test_dirty_ratio_defers_cleaning(kafka):
    kafka.create_topic("t", 1, {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.9"})
    kafka.produce("t", [(b"k%d" % i, b"v") for i in range(10)])
    kafka.apply_retention()
    kafka.produce("t", [(b"k0", b"w")])  # 1 dirty of 11: below 0.9
    assert len(kafka.fetch("t", 0, 0)) == 11
    kafka.alter_topic("t", configs={"min.cleanable.dirty.ratio": "0"})
    assert len(kafka.fetch("t", 0, 0)) == 10


def test_compact_and_delete(kafka, clock):
    kafka.create_topic("t", 1, {"cleanup.policy": "compact,delete", "retention.ms": "1000"})
    kafka.produce("t", [(b"a", b"1"), (b"a", b"2"), (b"b", b"1")])
    assert [r.offset for r in kafka.fetch("t", 0, 0)] == [1, 2]
    clock.advance_s(2)
    kafka.produce("t", [(b"c", b"1")])
    part = kafka.describe_topic("t").partitions[0]
    assert (part.log_start, part.log_end) == (3, 4)
    sizes_consistent(kafka, "t")


# --- consumer groups ---------------------------------------------------------------------------


@pytest.fixture
def orders(kafka):
    kafka.create_topic("orders", 3)
    kafka.produce("orders", [(None, b"x")] * 5, partition=0)
    kafka.produce("orders", [(None, b"x")] * 3, partition=1)
    return kafka


def test_commit_and_describe_an_empty_group(orders):
    k = orders
    k.commit("g", {("orders", 0): 2, ("orders", 1): 3})
    assert k.committed("g") == {("orders", 0): 2, ("orders", 1): 3}
    info = k.describe_group("g")
    assert info.state == "Empty" and not info.active and info.members == []
    assert [(o.topic, o.partition, o.committed, o.log_end, o.lag) for o in info.offsets] == [
        ("orders", 0, 2, 5, 3), ("orders", 1, 3, 3, 0)]
    assert info.total_lag == 3
    assert info.to_json()["lags"][0] == {
        "topic_name": "orders", "partition_id": 0, "current_offset": 2, "log_end_offset": 5,
        "lag": 3, "consumer_id": None, "client_id": None, "host": None}
    assert [g.group for g in k.groups()] == ["g"]
    with pytest.raises(KafkaError) as exc:
        k.describe_group("nope")
    assert err(exc) == ("GROUP_ID_NOT_FOUND", "Consumer group 'nope' does not exist.")
    for offsets, name in [({("nope", 0): 1}, "UNKNOWN_TOPIC_OR_PARTITION"),
                          ({("orders", 3): 1}, "UNKNOWN_TOPIC_OR_PARTITION"),
                          ({("orders", 0): -1}, "INVALID_REQUEST")]:
        with pytest.raises(KafkaError) as exc:
            k.commit("g", offsets)
        assert exc.value.name == name
    with pytest.raises(KafkaError) as exc:
        k.commit("", {("orders", 0): 1})
    assert exc.value.name == "INVALID_GROUP_ID"
    # a partition the topic lacks is named with its topic and the range
    unknown = ("This server does not host this topic-partition: partition 3 of topic 'orders' "
               "is not in the range [0...3).")
    for call in (lambda: k.commit("g", {("orders", 3): 1}),
                 lambda: k.fetch("orders", 3, 0, 1),
                 lambda: k.offset_for_timestamp("orders", 3, 0)):
        with pytest.raises(KafkaError) as exc:
            call()
        assert (exc.value.name, exc.value.description, exc.value.field) == (
            "UNKNOWN_TOPIC_OR_PARTITION", unknown, "partition")


def test_group_refusals_name_the_group_and_the_range(orders):
    """The Kafka error as Kafka words it (the REST body and --json keep it); the human
    line's detail names the group and its live members, the timeout and the broker's
    range."""
    k = orders
    with pytest.raises(KafkaError) as exc:
        k.join("g", "m1", ["orders"], session_timeout_ms=1000)
    assert exc.value.name == "INVALID_SESSION_TIMEOUT"
    assert exc.value.detail == "session timeout 1,000 ms, the broker's range 6,000 to " \
        "1,800,000 ms"
    k.join("g", "m1", ["orders"], session_timeout_ms=10_000)
    with pytest.raises(KafkaError) as exc:
        k.delete_group("g")
    assert err(exc) == ("NON_EMPTY_GROUP", "The group is not empty.")
    assert exc.value.detail == ("group 'g' has 1 live member (state Stable): it can be "
                                "deleted once they leave or their session times out")


def test_members_make_a_group_active_until_their_session_times_out(orders, clock):
    k = orders
    gen = k.join("g", "m1", ["orders"], session_timeout_ms=10_000, client_id="c1")
    assert k.group_active("g")
    info = k.describe_group("g")
    assert info.state == "Stable"
    assert [(m.member, m.client_id, m.assignment) for m in info.members] == [
        ("m1", "c1", [("orders", 0), ("orders", 1), ("orders", 2)])]
    assert [(o.partition, o.committed, o.member) for o in info.offsets] == [
        (0, None, "m1"), (1, None, "m1"), (2, None, "m1")]
    # only members commit to a live group
    with pytest.raises(KafkaError) as exc:
        k.commit("g", {("orders", 0): 1})
    assert err(exc) == ("UNKNOWN_MEMBER_ID", "The coordinator is not aware of this member.")
    k.commit("g", {("orders", 0): 1}, member="m1", generation=gen)
    clock.advance_s(9)
    k.heartbeat("g", "m1")
    clock.advance_s(9.999)
    assert k.group_active("g")  # 1 ms before heartbeat + session timeout: still live
    clock.advance_s(0.001)
    assert not k.group_active("g")  # at it: gone (Kafka's heartbeat timer, deadline <= now)
    assert k.describe_group("g").state == "Empty"
    with pytest.raises(KafkaError) as exc:
        k.heartbeat("g", "m1")
    assert exc.value.name == "UNKNOWN_MEMBER_ID"
    k.commit("g", {("orders", 0): 2})  # anyone may commit to an Empty group


def test_a_member_commits_only_in_the_groups_current_generation(orders, clock):
    """Kafka's ClassicGroup: each change of the members (a new member or new topics, a
    leave, an expiry) is a rebalance: the members keep committing in their generation while
    it prepares (a heartbeat says REBALANCE_IN_PROGRESS), and the join that completes it
    makes the next generation; a commit or heartbeat naming an older one is
    ILLEGAL_GENERATION and changes nothing (validateOffsetCommit), so a member that stalled
    while its partition moved can not move the new owner's offset back."""
    k = orders
    g1 = k.join("g", "m-a", ["orders"], session_timeout_ms=10_000)
    assert k.join("g", "m-a", ["orders"], session_timeout_ms=10_000) == g1  # a refresh
    with pytest.raises(KafkaError) as exc:
        k.join("g", "m-b", ["orders"], session_timeout_ms=20_000)
    assert exc.value.name == "REBALANCE_IN_PROGRESS"
    assert k.describe_group("g").state == "PreparingRebalance"
    k.commit("g", {("orders", 0): 1}, member="m-a", generation=g1)  # still its generation
    with pytest.raises(KafkaError) as exc:
        k.heartbeat("g", "m-a", g1)
    assert err(exc) == ("REBALANCE_IN_PROGRESS",
                        "The group is rebalancing, so a rejoin is needed.")
    g2 = k.join("g", "m-a", ["orders"], session_timeout_ms=10_000)  # the last to join
    assert g2 == g1 + 1 and k.describe_group("g").state == "Stable"
    assert k.join("g", "m-b", ["orders"], session_timeout_ms=20_000) == g2
    k.commit("g", {("orders", 2): 3}, member="m-b", generation=g2)  # m-b owns partition 2
    for call in (lambda: k.commit("g", {("orders", 2): 1}, member="m-a", generation=g1),
                 lambda: k.commit("g", {("orders", 0): 5}, member="m-a"),  # none named
                 lambda: k.heartbeat("g", "m-a", g1)):
        with pytest.raises(KafkaError) as exc:
            call()
        assert err(exc) == ("ILLEGAL_GENERATION", "Specified group generation id is not valid.")
    assert exc.value.detail == (f"generation {g1} of group 'g', which is at generation {g2}: "
                                "its members changed since this member joined")
    assert k.committed("g") == {("orders", 0): 1, ("orders", 2): 3}
    k.heartbeat("g", "m-a", g2)
    k.heartbeat("g", "m-a")  # (no generation named: liveness alone)
    clock.advance_s(15)  # m-a's session (10 s) ran out: m-b rebalances, still in g2
    k.commit("g", {("orders", 2): 4}, member="m-b", generation=g2)
    with pytest.raises(KafkaError) as exc:
        k.heartbeat("g", "m-b", g2)
    assert exc.value.name == "REBALANCE_IN_PROGRESS"
    g3 = k.join("g", "m-b", ["orders"], session_timeout_ms=20_000)
    assert g3 == g2 + 1
    assert k.assignment("g", "m-b") == [("orders", 0), ("orders", 1), ("orders", 2)]
    with pytest.raises(KafkaError) as exc:
        k.commit("g", {("orders", 0): 2}, member="m-a", generation=g3)
    assert exc.value.name == "UNKNOWN_MEMBER_ID"  # (not a member any more: asked first)
    k.leave("g", "m-b")
    k.leave("g", "m-b")  # already gone: no new generation
    assert k.join("g", "m-c", ["orders"]) == g3 + 2
    k.leave("g", "m-c")
    k.delete_group("g")  # a group deleted starts again from its first generation
    assert k.join("g", "m-d", ["orders"]) == 1


def test_a_new_partition_count_rebalances_the_group(orders):
    """A subscribed topic's partitions added (Kafka's consumer sees it in its metadata): the
    group rebalances, and the new partition is assigned by the next generation."""
    k = orders
    g1 = k.join("g", "m", ["orders"])
    assert k.assignment("g", "m") == [("orders", 0), ("orders", 1), ("orders", 2)]
    k.alter_topic("orders", partitions=4)
    with pytest.raises(KafkaError) as exc:
        k.heartbeat("g", "m", g1)
    assert exc.value.name == "REBALANCE_IN_PROGRESS"
    assert k.join("g", "m", ["orders"]) == g1 + 1
    assert k.assignment("g", "m") == [("orders", p) for p in range(4)]
    k.heartbeat("g", "m", g1 + 1)


def test_a_member_joining_waits_for_the_rebalance_so_nothing_is_read_twice(kafka, clock):
    """Kafka's eager rebalance: a member joining while another handles a batch waits
    (joining, no partition) while that one commits its batch in its own generation; the
    heartbeat of its next poll tells it to join again (it commits and gives its partitions
    up), the last join makes the next generation, and each reads its partitions on from the
    committed offsets: no record handled twice. An eviction while handling (its session ran
    out) refuses its commit, said, not an error: it lost its partitions and joins again."""
    from jetlink.core.kafka.consumer import TopicConsumer

    kafka.create_topic("t", 2)
    kafka.produce("t", [(None, b"a%d" % i) for i in range(6)], partition=0)
    kafka.produce("t", [(None, b"b%d" % i) for i in range(4)], partition=1)
    notices, seen_a, seen_b = [], [], []
    # (members sort by id, the client id first: "fast" gets partition 0 once it is in)
    slow = TopicConsumer(kafka, "t", group="G", from_beginning=True, client_id="slow",
                         session_timeout_ms=10_000, on_notice=notices.append)
    fast = None

    def stall(record):
        nonlocal fast
        seen_a.append((record.partition, record.offset))
        if fast is None:
            kafka.produce("t", [(None, b"a%d" % i) for i in range(6, 9)], partition=0)
            fast = TopicConsumer(kafka, "t", group="G", from_beginning=True,
                                 client_id="fast", session_timeout_ms=60_000)
            assert fast.joining
            assert fast.poll(None, lambda r: seen_b.append((r.partition, r.offset))) == 0

    assert slow.poll(None, stall) == 10  # its batches, committed in its generation
    assert seen_a == [(0, i) for i in range(6)] + [(1, i) for i in range(4)]
    assert kafka.committed("G") == {("t", 0): 6, ("t", 1): 4}
    info = kafka.describe_group("G")
    assert (info.state, [(m.client_id, m.assignment) for m in info.members]) == (
        "PreparingRebalance", [("fast", []), ("slow", [("t", 0), ("t", 1)])])
    with pytest.raises(KafkaError) as exc:
        kafka.join("G", fast.member, ["t"], session_timeout_ms=60_000, client_id="fast")
    assert err(exc) == ("REBALANCE_IN_PROGRESS",
                        "The group is rebalancing, so a rejoin is needed.")
    assert exc.value.detail == (
        f"group 'G' is rebalancing: waiting for member {slow.member} to join again (each "
        "does on its next heartbeat, or is gone when its session runs out or when the "
        "rebalance timeout does, in 300,000 ms)")
    assert fast.poll(None, seen_b.append) == 0 and fast.joining
    seen_a.clear()
    assert slow.poll(None, lambda r: seen_a.append((r.partition, r.offset))) == 0
    assert not slow.joining  # (its join completed the rebalance)
    assert fast.poll(None, lambda r: seen_b.append((r.partition, r.offset))) == 3
    assert seen_b == [(0, 6), (0, 7), (0, 8)]  # from slow's commit: nothing read twice
    assert slow.generation == fast.generation
    assert kafka.assignment("G", slow.member) == [("t", 1)]
    assert kafka.committed("G") == {("t", 0): 9, ("t", 1): 4}
    assert notices == []
    # evicted while handling: the commit refused and said; it lost its partitions (Kafka's
    # onPartitionsLost): nothing committed, read again from the group's offset
    kafka.produce("t", [(None, b"b4")], partition=1)
    assert slow.poll(None, lambda r: clock.advance_s(11)) == 1
    assert notices == [
        "Offset commit failed on partition t-1 at offset 5: UNKNOWN_MEMBER_ID: The "
        "coordinator is not aware of this member.; its session timeout of 10,000 ms ran "
        "out, so it lost its partitions: the consumer joins the group again and reads them "
        "from the group's committed offsets"]
    assert kafka.committed("G") == {("t", 0): 9, ("t", 1): 4}
    fast.close()
    seen_a.clear()
    assert slow.poll(None, seen_a.append) == 1  # b4 again; partition 0 from fast's 9
    assert [(r.partition, r.offset) for r in seen_a] == [(1, 4)]
    slow.close()
    assert kafka.committed("G") == {("t", 0): 9, ("t", 1): 5}


def test_a_consumer_handling_a_batch_past_its_max_poll_interval_is_removed(kafka, clock):
    """A member that hands records over longer than its max.poll.interval.ms while its
    group rebalances keeps its session (its heartbeat thread) but is removed at the
    rebalance timeout its join carried: the rebalance completes without it, its commit is
    refused and said (why: not its session), and it joins again as a new member."""
    from jetlink.core.kafka.consumer import TopicConsumer

    kafka.create_topic("t", 1)
    kafka.produce("t", [(None, b"v%d" % i) for i in range(10)])
    notices = []
    slow = TopicConsumer(kafka, "t", group="G", from_beginning=True, client_id="slow",
                         session_timeout_ms=10_000, max_poll_interval_ms=20_000,
                         heartbeat_interval_s=0, on_notice=notices.append)
    fast = None

    def stall(record):  # each record takes 5 s; a second consumer joins at the first
        nonlocal fast
        if fast is None:
            fast = TopicConsumer(kafka, "t", group="G", from_beginning=True,
                                 client_id="fast", session_timeout_ms=60_000,
                                 max_poll_interval_ms=20_000)
            assert fast.joining
        clock.advance_s(5)

    assert slow.poll(None, stall) == 4  # at 20 s, its session kept: removed
    assert notices == [
        "Offset commit failed on partition t-0 at offset 4: UNKNOWN_MEMBER_ID: The "
        "coordinator is not aware of this member.; the group rebalanced without it: it did "
        "not join again within the rebalance timeout (the largest max.poll.interval.ms of "
        "the group's members; its own 20,000 ms), so it lost its partitions: the consumer "
        "joins the group again and reads them from the group's committed offsets"]
    info = kafka.describe_group("G")
    assert (info.state, [m.client_id for m in info.members]) == ("Stable", ["fast"])
    assert fast.poll(None, lambda r: None) == 10  # (nothing committed: from the start)
    assert slow.poll(None, lambda r: None) == 0 and slow.joining  # back: a new rebalance
    # a consumer closing with a batch the group took from it: its notice says no joining
    notices.clear()
    slow.generation, slow.positions = 0, {0: 3}
    slow.close()
    assert notices[0].endswith("so it lost its partitions: the group's next member reads "
                               "them from its committed offsets")


def test_an_evicted_consumer_never_undoes_a_reset_made_while_it_was_gone(kafka, clock):
    """A consumer stalled past its session (SIGSTOP): the group is Empty, an operator
    resets its offsets to the earliest; the consumer back (its heartbeat refused) joins
    again and reads from the reset offset, never committing its old position over it."""
    from jetlink.core.kafka.consumer import TopicConsumer

    kafka.create_topic("t", 1)
    kafka.produce("t", [(None, b"v%d" % i) for i in range(10)])
    notices, seen = [], []
    c = TopicConsumer(kafka, "t", group="G", from_beginning=True, session_timeout_ms=6_000,
                      on_notice=notices.append)
    assert c.poll(None, lambda r: None) == 10
    assert kafka.committed("G") == {("t", 0): 10}
    clock.advance_s(7)  # stopped past its session: the group is Empty
    assert kafka.set_offsets("G", [("t", None)], to_earliest=True) == [("t", 0, 10, 0)]
    assert c.poll(None, lambda r: seen.append(r.offset)) == 10
    assert seen == list(range(10))  # read again from the reset offset
    assert [n.split(": ")[1] for n in notices] == ["UNKNOWN_MEMBER_ID"]
    assert notices[0].startswith("Heartbeat failed: UNKNOWN_MEMBER_ID")
    c.close()
    assert kafka.committed("G") == {("t", 0): 10}


def test_a_slow_handler_keeps_its_session_and_a_pass_takes_the_partitions_in_turn(
        kafka, clock):
    """A member whose records take long to hand over (a slow reader of its output) refreshes
    its session while it does (Kafka's heartbeat thread), so it is not taken for dead and its
    commit stands; one that does not (an interval longer than the batch) is evicted and its
    commit refused. A pass reads at most FETCH_MAX records, the next pass starting with the
    next partition (Kafka's max.poll.records)."""
    from jetlink.core.kafka.consumer import FETCH_MAX, TopicConsumer

    kafka.create_topic("t", 2)
    kafka.produce("t", [(None, b"a%d" % i) for i in range(FETCH_MAX + 5)], partition=0)
    kafka.produce("t", [(None, b"b%d" % i) for i in range(3)], partition=1)
    notices: list[str] = []
    slow = TopicConsumer(kafka, "t", group="G", from_beginning=True, session_timeout_ms=10_000,
                         on_notice=notices.append, heartbeat_interval_s=0)
    assert slow.poll(None, lambda r: clock.advance_s(0.1)) == FETCH_MAX  # 50 s in all
    assert notices == [] and kafka.committed("G") == {("t", 0): FETCH_MAX}
    seen: list[tuple[int, int]] = []
    assert slow.poll(None, lambda r: seen.append((r.partition, r.offset))) == 8
    assert seen == [(1, 0), (1, 1), (1, 2)] + [(0, FETCH_MAX + i) for i in range(5)]
    slow.close()
    kafka.produce("t", [(None, b"c%d" % i) for i in range(3)], partition=1)
    late = TopicConsumer(kafka, "t", group="G", session_timeout_ms=10_000,
                         on_notice=notices.append, heartbeat_interval_s=3600)
    assert late.poll(None, lambda r: clock.advance_s(4)) == 3
    assert [n.split(": ")[1] for n in notices] == ["UNKNOWN_MEMBER_ID"]
    assert kafka.committed("G") == {("t", 0): FETCH_MAX + 5, ("t", 1): 3}
    late.close()


def test_a_partition_a_consumer_keeps_through_a_join_is_not_read_twice(kafka):
    """The members change while a consumer handles a batch of a partition that stays its
    own: its commit is taken (the group still in its generation while it rebalances), and
    the records are not read again after the rebalance."""
    from jetlink.core.kafka.consumer import TopicConsumer

    kafka.create_topic("t", 2)
    kafka.produce("t", [(None, b"a%d" % i) for i in range(5)], partition=0)
    notices, seen, other = [], [], []
    first = TopicConsumer(kafka, "t", group="G", from_beginning=True, client_id="a",
                          on_notice=notices.append)

    def join_meanwhile(record):
        seen.append(record.offset)
        if not other:
            other.append(TopicConsumer(kafka, "t", group="G", from_beginning=True,
                                       client_id="b"))  # takes partition 1

    assert first.poll(None, join_meanwhile) == 5
    assert kafka.committed("G") == {("t", 0): 5}
    assert first.poll(None, seen.append) == 0  # joined again: partition 0 still its own
    # (what it held committed before it joined again: partition 1 where it started)
    assert kafka.committed("G") == {("t", 0): 5, ("t", 1): 0}
    assert other[0].poll(None, seen.append) == 0  # partition 1: empty
    assert (kafka.assignment("G", first.member), kafka.assignment("G", other[0].member)) == (
        [("t", 0)], [("t", 1)])
    assert seen == [0, 1, 2, 3, 4] and notices == []
    other[0].close()
    first.close()


def test_range_assignment_and_leave(orders):
    k = orders
    join_group(k, "g", [("m-b", ["orders"], ""), ("m-a", ["orders"], "")])
    assert k.assignment("g", "m-a") == [("orders", 0), ("orders", 1)]
    assert k.assignment("g", "m-b") == [("orders", 2)]
    k.leave("g", "m-a")  # m-b holds partition 2 until it joins again
    assert k.assignment("g", "m-b") == [("orders", 2)]
    with pytest.raises(KafkaError):
        k.heartbeat("g", "m-b")
    k.join("g", "m-b", ["orders"])
    assert k.assignment("g", "m-b") == [("orders", 0), ("orders", 1), ("orders", 2)]
    k.leave("g", "m-b")
    with pytest.raises(KafkaError):
        k.describe_group("g")  # no member, no offsets: gone
    with pytest.raises(KafkaError) as exc:
        k.join("g", "m", ["orders"], session_timeout_ms=5999)
    assert exc.value.name == "INVALID_SESSION_TIMEOUT"
    with pytest.raises(KafkaError) as exc:
        k.join("g", "m", ["nope"])
    assert exc.value.name == "UNKNOWN_TOPIC_OR_PARTITION"


def error_of(call):
    """The Kafka error name ``call`` answers (None: it succeeded)."""
    try:
        call()
    except KafkaError as exc:
        return exc.name
    return None


# Kafka's rebalance timeout: prepareRebalance schedules the join's completion at the group's
# largest rebalance_timeout_ms (ClassicGroup.rebalanceTimeoutMs) after the rebalance began; the
# timer fires when its deadline <= now, and completeClassicGroupJoin removes the members that
# have not joined again, heartbeating or not. (case, the stalled member's rebalance timeout,
# the joining member's (None: the default, 300000), ms from the rebalance's start to the
# joining member's last poll, the stalled member removed then)
REBALANCE_TIMEOUT = [
    ("the default, 1 ms before", None, None, 299_999, False),
    ("the default, reached", None, None, 300_000, True),
    ("the joining member's, the larger, 1 ms before", 10_000, 20_000, 19_999, False),
    ("the joining member's, the larger, reached", 10_000, 20_000, 20_000, True),
    ("the stalled member's, the larger, 1 ms before", 20_000, 10_000, 19_999, False),
    ("the stalled member's, the larger, reached", 20_000, 10_000, 20_000, True),
]


@pytest.mark.parametrize(("case", "stalled_ms", "joining_ms", "at", "removed"),
                         REBALANCE_TIMEOUT, ids=[r[0] for r in REBALANCE_TIMEOUT])
def test_a_member_that_never_joins_again_is_removed_at_the_rebalance_timeout(
        orders, clock, case, stalled_ms, joining_ms, at, removed):
    """A member that keeps heartbeating (answered REBALANCE_IN_PROGRESS) but never joins
    again holds the rebalance only until its timeout: then it is removed (its next heartbeat
    is UNKNOWN_MEMBER_ID) and the join completes with the member that did join."""
    k = orders

    def timeout(ms):
        return {} if ms is None else {"rebalance_timeout_ms": ms}

    def poll():  # the joining member's poll: it joins again
        return k.join("g", "joining", ["orders"], session_timeout_ms=10_000,
                      **timeout(joining_ms))

    g1 = k.join("g", "stalled", ["orders"], session_timeout_ms=10_000, **timeout(stalled_ms))
    assert error_of(poll) == "REBALANCE_IN_PROGRESS"  # the rebalance begins
    t = 0
    for step in [*range(5_000, at, 5_000), at]:  # every 5 s, then the last poll at ``at``
        clock.advance((step - t) * 1_000_000)
        t = step
        if step < at:  # both keep their sessions; the stalled one never joins again
            assert error_of(lambda: k.heartbeat("g", "stalled", g1)) == \
                "REBALANCE_IN_PROGRESS"
            assert error_of(poll) == "REBALANCE_IN_PROGRESS"
    if removed:
        assert poll() == g1 + 1
        info = k.describe_group("g")
        assert (info.state, [(m.member, m.assignment) for m in info.members]) == (
            "Stable", [("joining", [("orders", 0), ("orders", 1), ("orders", 2)])])
        assert error_of(lambda: k.heartbeat("g", "stalled", g1)) == "UNKNOWN_MEMBER_ID"
    else:
        assert error_of(poll) == "REBALANCE_IN_PROGRESS"
        assert error_of(lambda: k.heartbeat("g", "stalled", g1)) == "REBALANCE_IN_PROGRESS"
        assert k.describe_group("g").state == "PreparingRebalance"
        assert [m.member for m in k.describe_group("g").members] == ["joining", "stalled"]


def test_the_rebalance_deadline_is_set_when_the_rebalance_begins(orders, clock):
    """prepareRebalance schedules the completion once, with the rebalance timeouts of the
    members then: a member joining the rebalance under way with a larger one does not move
    it; a member that never joins again is removed at it even so."""
    k = orders
    g1 = k.join("g", "stalled", ["orders"], session_timeout_ms=10_000,
                rebalance_timeout_ms=6_000)
    assert error_of(lambda: k.join("g", "a", ["orders"], rebalance_timeout_ms=6_000)) == \
        "REBALANCE_IN_PROGRESS"
    clock.advance_s(3)
    assert error_of(lambda: k.join("g", "b", ["orders"], rebalance_timeout_ms=60_000)) == \
        "REBALANCE_IN_PROGRESS"
    assert error_of(lambda: k.heartbeat("g", "stalled", g1)) == "REBALANCE_IN_PROGRESS"
    clock.advance_s(3)
    assert k.join("g", "a", ["orders"]) == g1 + 1  # at 6 s: "stalled" removed
    assert [m.member for m in k.describe_group("g").members] == ["a", "b"]


def test_a_rebalance_nobody_joins_leaves_the_group_empty_at_its_timeout(orders, clock):
    """completeClassicGroupJoin with no member joined again: every one is removed (each
    heartbeating), and the group is Empty in a generation of its own."""
    k = orders
    k.commit("g", {("orders", 0): 1})
    g = join_group(k, "g", [("m1", ["orders"], "c"), ("m2", ["orders"], "c")],
                   session_timeout_ms=10_000, rebalance_timeout_ms=8_000)[0]
    k.alter_topic("orders", partitions=4)  # the members' heartbeats: rebalance
    for _ in range(2):
        for m in ("m1", "m2"):
            assert error_of(lambda m=m: k.heartbeat("g", m, g)) == "REBALANCE_IN_PROGRESS"
        clock.advance_s(4)
    for m in ("m1", "m2"):
        assert error_of(lambda m=m: k.heartbeat("g", m, g)) == "UNKNOWN_MEMBER_ID"
    assert k.describe_group("g").state == "Empty"
    assert k.join("g", "m3", ["orders"]) == g + 2  # (the Empty group's was g + 1)


# JoinGroup's rebalance_timeout_ms (the consumer's max.poll.interval.ms: ConsumerConfig's
# atLeast(1), a Java int): (value, taken)
REBALANCE_TIMEOUT_VALUES = [(1, True), (2**31 - 1, True), (0, False), (-1, False),
                            (2**31, False), (1.5, False)]


@pytest.mark.parametrize(("value", "taken"), REBALANCE_TIMEOUT_VALUES)
def test_the_rebalance_timeout_is_a_positive_int32(orders, value, taken):
    k = orders
    if taken:
        assert k.join("g", "m", ["orders"], rebalance_timeout_ms=value) == 1
        return
    with pytest.raises(KafkaError) as exc:
        k.join("g", "m", ["orders"], rebalance_timeout_ms=value)
    assert (exc.value.name, exc.value.field, exc.value.detail) == (
        "INVALID_REQUEST", "rebalance_timeout_ms",
        f"rebalance timeout {value!r} ms: the consumer's max.poll.interval.ms is 1 to "
        "2,147,483,647 ms")
    assert error_of(lambda: k.describe_group("g")) == "GROUP_ID_NOT_FOUND"  # nothing joined


def test_a_rebalance_under_way_in_an_older_store_gets_its_deadline(dd, clock):
    """A store made before the rebalance timeout (schema step 4) with a group rebalancing:
    its rows read as they were, its members' timeout the default, and the rebalance's
    deadline 300000 ms after its members' last heartbeat."""
    cluster = dd.open()
    cluster.ensure_schema("kafka", SCHEMA_STEPS[:4])
    now = clock.now_ns() // 1_000_000
    with cluster.transaction():
        conn = cluster.conn
        conn.execute("INSERT INTO topics(name, topic_id, partitions, created_ms) "
                     "VALUES ('orders', 'AAAAAAAAAAAAAAAAAAAAAA', 1, ?)", (now,))
        conn.execute("INSERT INTO partitions(topic, partition) SELECT id, 0 FROM topics")
        conn.execute("INSERT INTO group_generations(grp, generation, preparing, counts) "
                     "VALUES ('g', 1, 1, '{\"orders\": 1}')")
        conn.executemany(
            "INSERT INTO group_members(grp, member, topics, joined_ms, heartbeat_ms, "
            "session_timeout_ms, member_gen, rejoined, assigned) "
            "VALUES ('g', ?, '[\"orders\"]', ?, ?, 45000, ?, ?, ?)",
            [("stalled", now - 9_000, now - 2_000, 1, 0, '[["orders", 0]]'),
             ("joining", now - 1_000, now - 1_000, -1, 1, "[]")])
    k = Kafka(cluster, clock)
    info = k.describe_group("g")
    assert (info.state, [(m.member, m.assignment) for m in info.members]) == (
        "PreparingRebalance", [("joining", []), ("stalled", [("orders", 0)])])
    with cluster.read() as conn:
        assert conn.execute("SELECT member, rebalance_timeout_ms FROM group_members "
                            "ORDER BY member").fetchall() == [("joining", 300_000),
                                                              ("stalled", 300_000)]
        assert conn.execute("SELECT rebalance_deadline_ms FROM group_generations").fetchall() \
            == [(now - 1_000 + 300_000,)]
    for _ in range(29):  # both keep their sessions
        clock.advance_s(10)
        assert error_of(lambda: k.heartbeat("g", "stalled", 1)) == "REBALANCE_IN_PROGRESS"
        assert error_of(lambda: k.join("g", "joining", ["orders"])) == "REBALANCE_IN_PROGRESS"
    clock.advance_s(9)  # (the deadline: the last heartbeat + 300 s)
    assert k.join("g", "joining", ["orders"]) == 2
    assert error_of(lambda: k.heartbeat("g", "stalled", 1)) == "UNKNOWN_MEMBER_ID"


def test_set_offsets(orders, clock):
    k = orders
    k.commit("g", {("orders", 0): 4})
    assert k.set_offsets("g", ORDERS, to_earliest=True) == [
        ("orders", 0, 4, 0), ("orders", 1, None, 0), ("orders", 2, None, 0)]
    assert k.set_offsets("g", ORDERS, to_latest=True, dry_run=True) == [
        ("orders", 0, 0, 5), ("orders", 1, 0, 3), ("orders", 2, 0, 0)]
    assert k.committed("g")[("orders", 0)] == 0  # dry run
    # --to-offset is kept within [log start, log end], as kafka-consumer-groups does
    assert k.set_offsets("g", ORDERS, to_offset=4) == [
        ("orders", 0, 0, 4), ("orders", 1, 0, 3), ("orders", 2, 0, 0)]
    assert k.set_offsets("g", [("orders", 1)], to_offset=1) == [("orders", 1, 3, 1)]
    k.join("g", "m", ["orders"])
    with pytest.raises(KafkaError) as exc:
        k.set_offsets("g", ORDERS, to_earliest=True)
    assert err(exc) == ("NON_EMPTY_GROUP", "Assignments can only be reset if the group 'g' is "
                        "inactive, but the current state is Stable.")
    with pytest.raises(KafkaError) as exc:
        k.delete_group("g")
    assert exc.value.name == "NON_EMPTY_GROUP"
    clock.advance_s(46)
    assert k.set_offsets("g", [("orders", 2)], to_latest=True) == [("orders", 2, 0, 0)]
    with pytest.raises(KafkaError):
        k.set_offsets("g", ORDERS, to_earliest=True, to_latest=True)
    k.delete_group("g")
    assert k.committed("g") == {}


ORDERS = [("orders", None)]


def test_set_offsets_scopes_and_plans(orders):
    """The tool's scopes: --all-topics is every partition the group committed (not every
    partition of those topics); a plan (--from-file) its own partitions, clamped; a
    partition or topic that is not there is refused before anything is written."""
    k = orders
    k.commit("g", {("orders", 0): 4, ("orders", 2): 0})
    assert k.set_offsets("g", None, to_earliest=True) == [
        ("orders", 0, 4, 0), ("orders", 2, 0, 0)]
    assert k.set_offsets("g", None, plan={("orders", 1): 2, ("orders", 0): 99}) == [
        ("orders", 0, 0, 5), ("orders", 1, None, 2)]
    assert k.committed("g") == {("orders", 0): 5, ("orders", 1): 2, ("orders", 2): 0}
    for scope, plan in (([("orders", 3)], None), ([("nope", None)], None),
                        (None, {("orders", 0): 1, ("orders", 7): 1})):
        with pytest.raises(KafkaError) as exc:
            k.set_offsets("g", scope, **({"plan": plan} if plan else {"to_offset": 1}))
        assert exc.value.name == "UNKNOWN_TOPIC_OR_PARTITION"
    assert k.committed("g") == {("orders", 0): 5, ("orders", 1): 2, ("orders", 2): 0}
    assert k.set_offsets("h", None, to_latest=True) == []  # nothing committed: nothing


def test_write_offsets_internal_skips_unchanged(orders):
    k = orders
    k.join("g", "m", ["orders"])  # no membership checks
    assert k.write_offsets_internal("g", {("orders", 0): 3, ("orders", 1): 1}) == 2
    assert k.write_offsets_internal("g", {("orders", 0): 3, ("orders", 1): 2}) == 1
    assert k.committed("g") == {("orders", 0): 3, ("orders", 1): 2}
    rows = [(f"g{i}", "orders", p, i) for i in range(100) for p in range(3)]
    assert k.write_group_offsets(rows) == 300
    assert k.write_group_offsets(rows) == 0
    assert k.committed_all("orders")["g7"] == {("orders", 0): 7, ("orders", 1): 7,
                                               ("orders", 2): 7}


def test_deleting_a_topic_drops_its_committed_offsets(orders):
    orders.commit("g", {("orders", 0): 1})
    orders.delete_topic("orders")
    assert orders.committed("g") == {}


def test_topics_live_beside_streams_in_any_cluster(dd, clock):
    dd.add_cluster("east", "kafka")
    k = Kafka(dd.open("east"), clock)
    k.create_topic("t", 1)
    assert Kafka(dd.open("east"), clock).topic_names() == ["t"]
    assert Kafka(dd.open(), clock).topic_names() == []
    with dd.open("east").read() as conn:
        row = conn.execute("SELECT version FROM schema_components WHERE component = 'kafka'")
        # (its steps: the tables, partition_epochs, group_generations, rebalances,
        # rebalance timeouts)
        assert row.fetchone()[0] == 5
    assert json.loads(json.dumps(k.describe_topic("t").to_json()))["topic_name"] == "t"


# -- the console consumer (core/kafka/consumer.py) ---------------------------------------------

def test_a_group_consumer_resumes_from_its_commits_and_resets_an_offset_out_of_range(kafka):
    from jetlink.core.kafka.consumer import TopicConsumer

    kafka.create_topic("t", 2)
    kafka.produce("t", [(None, b"a%d" % i) for i in range(4)], partition=0)
    kafka.produce("t", [(None, b"b%d" % i) for i in range(3)], partition=1)
    seen = []
    with TopicConsumer(kafka, "t", group="G", from_beginning=True) as c:
        assert c.assigned() == [0, 1]
        assert c.poll(5, seen.append) == 5  # partition 0's 4, then 1 of partition 1
        assert c.poll(None, seen.append) == 2
        assert c.poll(None, seen.append) == 0
    assert [r.value for r in seen] == [b"a0", b"a1", b"a2", b"a3", b"b0", b"b1", b"b2"]
    assert kafka.committed("G") == {("t", 0): 4, ("t", 1): 3}
    kafka.produce("t", [(None, b"a4")], partition=0)
    again = []
    with TopicConsumer(kafka, "t", group="G") as c:  # resumes at the commits
        assert c.poll(None, again.append) == 1
    assert [r.value for r in again] == [b"a4"]
    # a committed offset beyond the log: read from the start (from_beginning), else the end
    kafka.commit("G", {("t", 1): 99})
    late = []
    with TopicConsumer(kafka, "t", group="G", from_beginning=True) as c:
        c.poll(None, late.append)
    assert [r.value for r in late] == [b"b0", b"b1", b"b2"]
    # without a group: every partition, nothing committed
    with TopicConsumer(kafka, "t", from_beginning=True) as c:
        assert c.poll(None, lambda r: None) == 8
    assert kafka.committed("G") == {("t", 0): 5, ("t", 1): 3}


def test_a_stop_inside_a_batch_commits_what_was_handled(kafka):
    """Ctrl-C while the 5th record of a batch is handled (written): close commits the 4
    handled before it, so the next run starts with that 5th record (shown again, never
    skipped), not with the batch's first (its records shown twice)."""
    from jetlink.core.kafka.consumer import TopicConsumer

    kafka.create_topic("t", 1)
    kafka.produce("t", [(None, b"v%d" % i) for i in range(10)])
    seen = []

    def handle(record):
        if len(seen) == 4:
            raise KeyboardInterrupt
        seen.append(record)

    with pytest.raises(KeyboardInterrupt), \
            TopicConsumer(kafka, "t", group="G", from_beginning=True) as c:
        c.poll(None, handle)
    assert kafka.committed("G") == {("t", 0): 4}
    again = []
    with TopicConsumer(kafka, "t", group="G") as c:
        c.poll(None, again.append)
    assert [r.value for r in again] == [b"v%d" % i for i in range(4, 10)]


def test_ctrl_c_in_a_poll_still_leaves_the_group(kafka, dd, clock):
    """Ctrl-C may cut a poll's transaction where its scope can not roll it back (a generator
    context manager interrupted as its __enter__ returns): leaving the group must not join
    that transaction, which would be dropped uncommitted when the process exits."""
    from jetlink.core.kafka.consumer import TopicConsumer

    kafka.create_topic("t", 1)
    other = Kafka(DataDir(dd.path).open(), clock)  # another process's view
    with pytest.raises(KeyboardInterrupt), TopicConsumer(kafka, "t", group="G") as c:
        assert other.group_active("G")
        c.kafka.cluster.conn.execute("BEGIN")  # the transaction the interrupt left open
        raise KeyboardInterrupt
    assert not kafka.cluster.conn.in_transaction
    assert not other.group_active("G")


def test_a_consumer_blocked_on_one_record_keeps_its_session(kafka, clock):
    """Kafka's heartbeat thread: a member whose handling of one record blocks (a write to a
    reader that stopped reading) past its session timeout keeps its session, refreshed from
    a thread of its own while the record is not handed over, so its commit stands."""
    from helpers import wait_until

    from jetlink.core.kafka.consumer import TopicConsumer

    kafka.create_topic("t", 1)
    kafka.produce("t", [(None, b"v%d" % i) for i in range(3)])

    def member_heartbeat(client):
        return {m.client_id: m.heartbeat_ms for m in kafka.describe_group("G").members
                }.get(client)

    def blocked(client):
        def handle(record):
            if record.offset:
                return
            for _ in range(4):  # 20 s inside one record, the session 10 s
                clock.advance_s(5)
                now = kafka.now_ms()
                wait_until(lambda now=now: member_heartbeat(client) == now, timeout=30,
                           message=lambda now=now: f"a heartbeat at {now} "
                                                   f"({member_heartbeat(client)})")
        return handle

    notices: list[str] = []
    c = TopicConsumer(kafka, "t", group="G", from_beginning=True, client_id="blocked",
                      session_timeout_ms=10_000, heartbeat_interval_s=0.01,
                      on_notice=notices.append)
    assert c.poll(None, blocked("blocked")) == 3
    assert notices == [] and kafka.committed("G") == {("t", 0): 3}
    c.close()
