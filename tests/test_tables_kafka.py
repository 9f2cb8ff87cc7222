"""Apache Kafka's own unit-test tables, transcribed onto jetlink (apache/kafka at 1eb7644).

Topic names and the '.'/'_' collision rule (TopicTest), the default partitioner's stability,
LogConfig's validation (LogConfigTest), the StandardAuthorizer's decisions
(StandardAuthorizerTest, AuthorizerTest), ACL bindings, filters and their validation
(AclBindingTest, ResourcePatternTest, ResourcePatternFilterTest, AclControlManagerTest,
StandardAclTest, SecurityUtilsTest), ``jetlink kafka-acls`` as AclCommandTest drives
kafka-acls, ``jetlink group set-offsets`` as ResetConsumerGroupOffsetTest drives
kafka-consumer-groups --reset-offsets (both through the in-process CLI), and
Utils.getDateTime's formats (UtilsTest). Each table names the Kafka test it comes from. Where
jetlink differs on purpose, the case is left out or asserts jetlink's documented behaviour,
with a comment saying so.
"""

from __future__ import annotations

import json
import string
from datetime import UTC, datetime, timedelta, timezone

import pytest
from helpers import ok

from jetlink.cli.group import _datetime_ms
from jetlink.core.errors import UsageError
from jetlink.core.kafka.acls import (
    AclBinding,
    AclFilter,
    AclStore,
    AclView,
    AuthorizerSettings,
    decide,
    parse_principal,
)
from jetlink.core.kafka.errors import KafkaError
from jetlink.core.kafka.partitioner import default_partition
from jetlink.core.kafka.topic_configs import (
    CONFIG_DEFS,
    check_topic_collision,
    validate_topic_config,
    validate_topic_configs,
    validate_topic_name,
)
from jetlink.core.kafka.topics import Kafka
from jetlink.core.store import DataDir


def acl(rt: str, name: str, pt: str, principal: str, host: str, op: str, perm: str
        ) -> AclBinding:
    return AclBinding(rt, name, pt, principal, host, op, perm)


# === clients/.../common/internals/TopicTest.java ==============================================

# shouldAcceptValidTopicNames ("..." and a 249-character name are in test_kafka_topics.py; the
# test's TestUtils.randomString(249), letters and digits, is a fixed one here)
VALID_TOPIC_NAMES = ["valid", "TOPIC", "nAmEs", "ar6", "VaL1d", "_0-9_.",
                     ((string.ascii_letters + string.digits) * 5)[:249]]


@pytest.mark.parametrize("name", VALID_TOPIC_NAMES)
def test_topic_accepts_valid_names(name):
    assert validate_topic_name(name) == name


def _invalid_topic(name: str) -> tuple[str, str]:
    with pytest.raises(KafkaError) as exc:
        validate_topic_name(name)
    return exc.value.name, exc.value.description


CHARS = ("contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'")

# shouldThrowOnInvalidTopicNames ("", "..", "." and 250 characters: test_kafka_topics.py)
INVALID_TOPIC_NAMES = ["foo bar", "foo:bar", "foo=bar"]


@pytest.mark.parametrize("name", INVALID_TOPIC_NAMES)
def test_topic_throws_on_invalid_names(name):
    assert _invalid_topic(name) == ("INVALID_TOPIC_EXCEPTION",
                                    f"Topic name is invalid: '{name}' {CHARS}")


# shouldRecognizeInvalidCharactersInTopicNames: "Is " + c + "illegal"
INVALID_TOPIC_CHARS = ["/", "\\", ",", "\u0000", ":", '"', "'", ";", "*", "?", " ", "\t", "\r",
                       "\n", "="]


@pytest.mark.parametrize("char", INVALID_TOPIC_CHARS)
def test_topic_recognizes_invalid_characters(char):
    name = "Is " + char + "illegal"
    assert _invalid_topic(name) == ("INVALID_TOPIC_EXCEPTION",
                                    f"Topic name is invalid: '{name}' {CHARS}")


# testTopicHasCollisionChars: Topic.hasCollisionChars is kafka-topics --create's warning
COLLISION_WARNING = (
    "jetlink: warning: Due to limitations in metric names, topics with a period ('.') or "
    "underscore ('_') could collide. To avoid issues it is best to use either, but not both.\n")
HAS_COLLISION_CHARS = [(t, False) for t in ("start", "end", "middle", "many")] + [
    (t, True) for t in (".start", "end.", "mid.dle", ".ma.ny.", "_start", "end_", "mid_dle",
                        "_ma_ny.")]


@pytest.mark.parametrize(("name", "warned"), HAS_COLLISION_CHARS)
def test_topic_has_collision_chars(jl, name, warned):
    r = ok(jl("topic", "create", name))
    assert r.stderr == (COLLISION_WARNING if warned else "")


PERIOD_FIRST_MIDDLE_LAST_NONE = [".topic", "to.pic", "topic.", "topic"]
UNDERSCORE_FIRST_MIDDLE_LAST_NONE = ["_topic", "to_pic", "topic_", "topic"]

# testTopicHasCollision "Same Position" (topic/topic is the name itself: the next table) and
# testUnifyCollisionChars ("_.topic" and "__topic" unify alike; ".topic" -> "_topic" is the
# first pair; "topic" has no collision character: the warning table above)
COLLIDING = [(p, u) for p, u in zip(PERIOD_FIRST_MIDDLE_LAST_NONE,
                                    UNDERSCORE_FIRST_MIDDLE_LAST_NONE, strict=True) if p != u]
COLLIDING += [("_.topic", "__topic")]


@pytest.mark.parametrize(("name", "existing"), COLLIDING)
def test_topic_has_collision(name, existing):
    with pytest.raises(KafkaError) as exc:
        check_topic_collision(name, [existing])
    assert (exc.value.name, exc.value.description) == (
        "INVALID_TOPIC_EXCEPTION", f"Topic '{name}' collides with existing topic: {existing}")


# testTopicHasCollision "Self": Kafka's hasCollision(t, t) is true, but a broker answers a
# name that exists with TOPIC_ALREADY_EXISTS before the collision check
# (ReplicationControlManager.createTopics): jetlink's collision check skips the name itself,
# and its create answers TOPIC_ALREADY_EXISTS
SELF = list(dict.fromkeys(PERIOD_FIRST_MIDDLE_LAST_NONE + UNDERSCORE_FIRST_MIDDLE_LAST_NONE))


@pytest.mark.parametrize("name", SELF)
def test_topic_collision_with_itself_is_topic_already_exists(dd, clock, name):
    assert check_topic_collision(name, [name]) is None
    kafka = Kafka(dd.open(), clock)
    kafka.create_topic(name)
    with pytest.raises(KafkaError) as exc:
        kafka.create_topic(name)
    assert exc.value.name == "TOPIC_ALREADY_EXISTS"


# testTopicHasCollision "Different Position": the underscore list reversed
NOT_COLLIDING = list(zip(PERIOD_FIRST_MIDDLE_LAST_NONE,
                         reversed(UNDERSCORE_FIRST_MIDDLE_LAST_NONE), strict=True))


@pytest.mark.parametrize(("name", "existing"), NOT_COLLIDING)
def test_topic_has_no_collision_at_different_positions(name, existing):
    assert check_topic_collision(name, [existing]) is None


# UtilsTest.testMurmur2's vectors: test_kafka_topics.py test_murmur2_kafka_vectors.
# clients/.../producer/internals/DefaultPartitionerTest.java testKeyPartitionIsStable
def test_default_partitioner_key_partition_is_stable():
    first = default_partition(b"key", 3)
    assert [default_partition(b"key", 3) for _ in range(3)] == [first] * 3


# === core/src/test/scala/unit/kafka/log/LogConfigTest.scala ===================================

# storage/.../log/LogConfig.java: LogConfig.configNames, in its define order
LOG_CONFIG_NAMES = [
    "segment.bytes", "segment.ms", "segment.jitter.ms", "segment.index.bytes", "flush.messages",
    "flush.ms", "retention.bytes", "retention.ms", "max.message.bytes", "index.interval.bytes",
    "delete.retention.ms", "min.compaction.lag.ms", "max.compaction.lag.ms",
    "file.delete.delay.ms", "min.cleanable.dirty.ratio", "cleanup.policy",
    "unclean.leader.election.enable", "min.insync.replicas", "compression.type",
    "compression.gzip.level", "compression.lz4.level", "compression.zstd.level", "preallocate",
    "message.format.version", "message.timestamp.type", "message.timestamp.difference.max.ms",
    "message.timestamp.before.max.ms", "message.timestamp.after.max.ms",
    "leader.replication.throttled.replicas", "follower.replication.throttled.replicas",
    "message.downconversion.enable", "remote.storage.enable", "local.retention.ms",
    "local.retention.bytes", "remote.log.copy.disable", "remote.log.delete.on.disable",
]

# testFromPropsInvalid: these names' values, every other name's "not_a_number" and "-1"
FROM_PROPS_INVALID_SPECIAL = {
    "unclean.leader.election.enable": ["not a boolean"],
    "retention.bytes": ["not_a_number"],
    "retention.ms": ["not_a_number"],
    "cleanup.policy": ["true", "foobar"],
    "min.cleanable.dirty.ratio": ["not_a_number", "-0.1", "1.2"],
    "min.insync.replicas": ["not_a_number", "0", "-1"],
    "message.format.version": [""],
    "remote.storage.enable": ["not_a_boolean"],
    "local.retention.ms": ["not_a_number", "-3"],
    "local.retention.bytes": ["not_a_number", "-3"],
    "compression.gzip.level": ["not_a_number", "-2"],
    "compression.lz4.level": ["not_a_number", "-1"],
    "compression.zstd.level": ["not_a_number", "-0.1"],
    "remote.log.copy.disable": ["not_a_number", "remove", "0"],
    "remote.log.delete.on.disable": ["not_a_number", "remove", "0"],
}
# (min.insync.replicas=0 and max.message.bytes=-1: test_kafka_topics.py CONFIG_REFUSALS)
FROM_PROPS_INVALID = [
    (name, value) for name in LOG_CONFIG_NAMES
    for value in FROM_PROPS_INVALID_SPECIAL.get(name, ["not_a_number", "-1"])
    if (name, value) not in {("min.insync.replicas", "0"), ("max.message.bytes", "-1")}]


def test_log_config_names_are_all_known():
    assert sorted(set(LOG_CONFIG_NAMES) - set(CONFIG_DEFS)) == []


@pytest.mark.parametrize(("name", "value"), FROM_PROPS_INVALID)
def test_log_config_from_props_invalid(name, value):
    with pytest.raises(KafkaError) as exc:
        validate_topic_config(name, value)
    assert (exc.value.name, exc.value.field) == ("INVALID_CONFIG", name)


# testInvalidCompactionLagConfig
def test_log_config_invalid_compaction_lag():
    with pytest.raises(KafkaError) as exc:
        validate_topic_configs({"max.compaction.lag.ms": "100", "min.compaction.lag.ms": "200"})
    assert (exc.value.name, exc.value.description) == (
        "INVALID_CONFIG",
        "conflict topic config setting min.compaction.lag.ms (200) > max.compaction.lag.ms (100)")


THROTTLED_KEYS = ["leader.replication.throttled.replicas",
                  "follower.replication.throttled.replicas"]
# shouldValidateThrottledReplicasConfig: valid (the value as stored: Java's trim) ...
THROTTLED_VALID = [("*", "*"), ("* ", "*"), ("", ""), (" ", ""), ("100:10", "100:10"),
                   ("100:10,12:10", "100:10,12:10"), ("100:10,12:10,15:1", "100:10,12:10,15:1"),
                   ("100:10,12:10,15:1  ", "100:10,12:10,15:1"), ("100:0,", "100:0,")]
# ... and invalid (the value as ConfigDef's LIST parse shows it in the refusal)
THROTTLED_INVALID = [("100", "[100]"), ("100:", "[100:]"), ("100:0,10", "[100:0, 10]"),
                     ("100:0,10:", "[100:0, 10:]"), ("100:0,10:   ", "[100:0, 10:]"),
                     ("100 :0,10:   ", "[100 :0, 10:]"), ("100: 0,10:   ", "[100: 0, 10:]"),
                     ("100:0,10 :   ", "[100:0, 10 :]"), ("*,100:10", "[*, 100:10]"),
                     ("* ,100:10", "[*, 100:10]")]


@pytest.mark.parametrize("key", THROTTLED_KEYS)
@pytest.mark.parametrize(("value", "stored"), THROTTLED_VALID)
def test_log_config_throttled_replicas_valid(key, value, stored):
    assert validate_topic_config(key, value) == stored


@pytest.mark.parametrize("key", THROTTLED_KEYS)
@pytest.mark.parametrize(("value", "shown"), THROTTLED_INVALID)
def test_log_config_throttled_replicas_invalid(key, value, shown):
    with pytest.raises(KafkaError) as exc:
        validate_topic_config(key, value)
    assert (exc.value.name, exc.value.description) == (
        "INVALID_CONFIG",
        f"Invalid value {shown} for configuration {key}: {key} must be the literal '*' or a "
        "list of replicas in the following format: [partitionId]:[brokerId],"
        "[partitionId]:[brokerId],...")


# testValidRemoteLogCopyDisabled / testValidRemoteLogDeleteOnDisable (LogConfig.validate(props));
# testDisableRemoteLogStorage(wasRemoteStorageEnabled=false);
# testTopicCreationWithInvalidRetentionTime / ...RetentionSize(sysRemoteStorageEnabled=false).
# jetlink has no tiered storage: the sysRemoteStorageEnabled=true variants,
# testInvalidLocalLogRetentionProps and testEnableRemoteLogStorageOnCompactedTopic (which need
# it) are left out, and testEnableRemoteLogStorage(false)'s refusal is in
# test_kafka_topics.py CONFIG_REFUSALS.
VALID_PROPS = [
    {"remote.log.copy.disable": "true"}, {"remote.log.copy.disable": "false"},
    {"remote.log.delete.on.disable": "true"}, {"remote.log.delete.on.disable": "false"},
    {"remote.storage.enable": "false"},
    {"remote.storage.enable": "false", "retention.ms": "500"},
    {"remote.storage.enable": "false", "retention.bytes": "128"},
]


@pytest.mark.parametrize("props", VALID_PROPS)
def test_log_config_validate_accepts(props):
    assert validate_topic_configs(props) == props


# === metadata/.../authorizer/StandardAuthorizerTest.java ======================================

# MockAuthorizableRequestContext's client address, InetAddress.getLocalHost(): this
# machine's address, one that is neither 192.168.1.1 nor 192.168.1.2
LOCALHOST = "10.0.0.5"
SUPERMAN = AuthorizerSettings(enabled=True, super_users=("User:superman",))


def results(settings: AuthorizerSettings, bindings: list[AclBinding], principal: str,
            host: str, actions: list[tuple[str, str, str]]) -> list[str]:
    """ALLOWED / DENIED per (operation, resource type, name): decide()'s answer, when the
    store's indexed view (AclView) answers the same; SPLIT when they differ."""
    view = AclView(object(), settings, bindings)
    out = []
    for op, rt, name in actions:
        got = {decide(settings, bindings, principal, op, rt, name, host).allowed,
               view.authorize(principal, op, rt, name, host).allowed}
        out.append("SPLIT" if len(got) > 1 else "ALLOWED" if got.pop() else "DENIED")
    return out


def foo_acl(op: str, perm: str) -> AclBinding:  # newFooAcl
    return acl("TOPIC", "foo_", "PREFIXED", "User:bob", "*", op, perm)


def bar_acl(op: str, perm: str) -> AclBinding:  # newBarAcl
    return acl("GROUP", "bar", "LITERAL", "User:*", "*", op, perm)


# testFindResultImplication / testFindResultPrincipalMatching: findResult of one ACL, ALLOWED
# DENIED or null: jetlink's rule of the decision over that ACL alone, "allow", "deny" or
# "default deny" (the ACL matches the resource and does not apply)
FIND_RESULT = [
    *[(foo_acl(op, "ALLOW"), "User:bob", "DESCRIBE", "TOPIC", "foo_bar", "allow")
      for op in ("DESCRIBE", "READ", "WRITE", "DELETE", "ALTER")],
    (foo_acl("CREATE", "ALLOW"), "User:bob", "DESCRIBE", "TOPIC", "foo_bar", "default deny"),
    *[(foo_acl(op, "DENY"), "User:bob", "DESCRIBE", "TOPIC", "foo_bar", "default deny")
      for op in ("READ", "WRITE", "DELETE", "ALTER")],
    (foo_acl("DESCRIBE", "DENY"), "User:bob", "DESCRIBE", "TOPIC", "foo_bar", "deny"),
    *[(foo_acl(op, "ALLOW"), "User:bob", "DESCRIBE_CONFIGS", "TOPIC", "foo_bar", "allow")
      for op in ("DESCRIBE_CONFIGS", "ALTER_CONFIGS")],
    (foo_acl("ALTER_CONFIGS", "DENY"), "User:bob", "DESCRIBE_CONFIGS", "TOPIC", "foo_bar",
     "default deny"),
    (foo_acl("ALTER_CONFIGS", "DENY"), "User:bob", "ALTER_CONFIGS", "TOPIC", "foo_bar", "deny"),
    (foo_acl("READ", "ALLOW"), "User:bob", "READ", "TOPIC", "foo_bar", "allow"),
    (foo_acl("READ", "ALLOW"), "User:alice", "READ", "TOPIC", "foo_bar", "default deny"),
    (bar_acl("READ", "DENY"), "User:alice", "READ", "GROUP", "bar", "deny"),
]


@pytest.mark.parametrize(("binding", "principal", "op", "rt", "name", "rule"), FIND_RESULT,
                         ids=[f"{c[0].permission}-{c[0].operation}-{c[1]}-{c[2]}"
                              for c in FIND_RESULT])
def test_standard_authorizer_find_result(binding, principal, op, rt, name, rule):
    assert decide(SUPERMAN, [binding], principal, op, rt, name, LOCALHOST).rule == rule


MANY_ACLS = [  # addManyAcls
    acl("TOPIC", "green2", "LITERAL", "User:*", "*", "READ", "ALLOW"),
    acl("TOPIC", "green", "PREFIXED", "User:bob", "*", "READ", "ALLOW"),
    acl("TOPIC", "betamax4", "LITERAL", "User:bob", "*", "READ", "ALLOW"),
    acl("TOPIC", "betamax", "LITERAL", "User:bob", "*", "READ", "ALLOW"),
    acl("TOPIC", "beta", "PREFIXED", "User:*", "*", "READ", "ALLOW"),
    acl("TOPIC", "alpha", "PREFIXED", "User:*", "*", "READ", "ALLOW"),
    acl("TOPIC", "alp", "PREFIXED", "User:bob", "*", "READ", "DENY"),
    acl("GROUP", "*", "LITERAL", "User:bob", "*", "WRITE", "ALLOW"),
    acl("GROUP", "wheel", "LITERAL", "User:*", "*", "WRITE", "DENY"),
]
DENY_PRECEDENCE_ACLS = [
    acl("TOPIC", "foo", "LITERAL", "User:alice", "*", "ALL", "DENY"),
    acl("TOPIC", "foo", "PREFIXED", "User:alice", "*", "READ", "ALLOW"),
    acl("TOPIC", "foo", "LITERAL", "User:*", "*", "ALL", "DENY"),
    acl("TOPIC", "foo", "PREFIXED", "User:*", "*", "DESCRIBE", "ALLOW"),
]
OPERATION_ALL_ACLS = [
    acl("TOPIC", "foo", "LITERAL", "User:*", "*", "ALL", "ALLOW"),
    acl("TOPIC", "bar", "PREFIXED", "User:alice", "*", "ALL", "ALLOW"),
    acl("TOPIC", "baz", "LITERAL", "User:bob", "*", "ALL", "ALLOW"),
]
HOST1, HOST2 = "192.168.1.1", "192.168.1.2"
HOST_ACLS = [
    acl("TOPIC", "foo", "LITERAL", "User:alice", HOST1, "READ", "DENY"),
    acl("TOPIC", "foo", "LITERAL", "User:alice", "*", "READ", "ALLOW"),
    acl("TOPIC", "bar", "LITERAL", "User:bob", HOST2, "READ", "ALLOW"),
    acl("TOPIC", "bar", "LITERAL", "User:*", LOCALHOST, "DESCRIBE", "ALLOW"),
]
HOST_ACTIONS = [("READ", "TOPIC", "foo"), ("READ", "TOPIC", "bar"), ("DESCRIBE", "TOPIC", "bar")]
PREFIX_ACLS = [
    acl("TOPIC", "fooa", "PREFIXED", "User:alice", "*", "ALL", "ALLOW"),
    acl("TOPIC", "foobar", "LITERAL", "User:bob", "*", "ALL", "ALLOW"),
    acl("TOPIC", "f", "PREFIXED", "User:bob", "*", "ALL", "ALLOW"),
]
EVERYONE = AuthorizerSettings(True, ("User:alice", "User:chris"), True)
NOT_EVERYONE = AuthorizerSettings(True, ("User:alice", "User:chris"), False)
TOPIC1_ALICE = [acl("TOPIC", "topic1", "LITERAL", "User:Alice", "*", "READ", "ALLOW")]

# (test, settings, ACLs, principal, client host, actions, results)
STANDARD_AUTHORIZER = [
    ("testAllowEveryoneIfNoAclFoundConfigEnabled", EVERYONE, TOPIC1_ALICE, "User:Bob",
     LOCALHOST, [("READ", "TOPIC", "topic1"), ("READ", "TOPIC", "topic2")],
     ["DENIED", "ALLOWED"]),
    ("testAllowEveryoneIfNoAclFoundConfigDisabled", NOT_EVERYONE, TOPIC1_ALICE, "User:Bob",
     LOCALHOST, [("READ", "TOPIC", "topic1"), ("READ", "TOPIC", "topic2")],
     ["DENIED", "DENIED"]),
    ("testSimpleAuthorizations", SUPERMAN,
     [foo_acl("READ", "ALLOW"), foo_acl("WRITE", "ALLOW"), bar_acl("DESCRIBE_CONFIGS", "ALLOW"),
      bar_acl("ALTER_CONFIGS", "ALLOW")], "User:bob", LOCALHOST,
     [("READ", "TOPIC", "foo_")], ["ALLOWED"]),
    ("testSimpleAuthorizations", SUPERMAN,
     [foo_acl("READ", "ALLOW"), foo_acl("WRITE", "ALLOW"), bar_acl("DESCRIBE_CONFIGS", "ALLOW"),
      bar_acl("ALTER_CONFIGS", "ALLOW")], "User:fred", LOCALHOST,
     [("ALTER_CONFIGS", "GROUP", "bar")], ["ALLOWED"]),
    ("testDenyPrecedenceWithOperationAll", SUPERMAN, DENY_PRECEDENCE_ACLS, "User:alice",
     LOCALHOST, [("WRITE", "TOPIC", "foo"), ("READ", "TOPIC", "foo"),
                 ("DESCRIBE", "TOPIC", "foo"), ("READ", "TOPIC", "foobar")],
     ["DENIED", "DENIED", "DENIED", "ALLOWED"]),
    ("testDenyPrecedenceWithOperationAll", SUPERMAN, DENY_PRECEDENCE_ACLS, "User:bob",
     LOCALHOST, [("DESCRIBE", "TOPIC", "foo"), ("READ", "TOPIC", "foo"),
                 ("WRITE", "TOPIC", "foo"), ("DESCRIBE", "TOPIC", "foobaz"),
                 ("READ", "TOPIC", "foobaz")],
     ["DENIED", "DENIED", "DENIED", "ALLOWED", "DENIED"]),
    ("testTopicAclWithOperationAll", SUPERMAN, OPERATION_ALL_ACLS, "User:alice", LOCALHOST,
     [("WRITE", "TOPIC", "foo"), ("DESCRIBE_CONFIGS", "TOPIC", "bar"),
      ("DESCRIBE", "TOPIC", "baz")], ["ALLOWED", "ALLOWED", "DENIED"]),
    ("testTopicAclWithOperationAll", SUPERMAN, OPERATION_ALL_ACLS, "User:bob", LOCALHOST,
     [("WRITE", "TOPIC", "foo"), ("READ", "TOPIC", "bar"), ("DESCRIBE", "TOPIC", "baz")],
     ["ALLOWED", "DENIED", "ALLOWED"]),
    ("testTopicAclWithOperationAll", SUPERMAN, OPERATION_ALL_ACLS, "User:malory", LOCALHOST,
     [("DESCRIBE", "TOPIC", "foo"), ("WRITE", "TOPIC", "bar"), ("READ", "TOPIC", "baz")],
     ["ALLOWED", "DENIED", "DENIED"]),
    ("testHostAddressAclValidation", SUPERMAN, HOST_ACLS, "User:alice", LOCALHOST,
     HOST_ACTIONS, ["ALLOWED", "DENIED", "ALLOWED"]),
    ("testHostAddressAclValidation", SUPERMAN, HOST_ACLS, "User:alice", HOST1, HOST_ACTIONS,
     ["DENIED", "DENIED", "DENIED"]),
    ("testHostAddressAclValidation", SUPERMAN, HOST_ACLS, "User:alice", HOST2, HOST_ACTIONS,
     ["ALLOWED", "DENIED", "DENIED"]),
    ("testHostAddressAclValidation", SUPERMAN, HOST_ACLS, "User:bob", LOCALHOST, HOST_ACTIONS,
     ["DENIED", "DENIED", "ALLOWED"]),
    ("testHostAddressAclValidation", SUPERMAN, HOST_ACLS, "User:bob", HOST1, HOST_ACTIONS,
     ["DENIED", "DENIED", "DENIED"]),
    ("testHostAddressAclValidation", SUPERMAN, HOST_ACLS, "User:bob", HOST2, HOST_ACTIONS,
     ["DENIED", "ALLOWED", "ALLOWED"]),
    ("testAuthorizationWithManyAcls", SUPERMAN, MANY_ACLS, "User:bob", LOCALHOST,
     [("READ", "TOPIC", "green1"), ("WRITE", "GROUP", "wheel")], ["ALLOWED", "DENIED"]),
    ("testAuthorizationWithManyAcls", SUPERMAN, MANY_ACLS, "User:bob", LOCALHOST,
     [("READ", "TOPIC", "alpha"), ("WRITE", "GROUP", "arbitrary"), ("READ", "TOPIC", "ala")],
     ["DENIED", "ALLOWED", "DENIED"]),
    # (its AuthorizerNotReadyException before the initial load has no counterpart: a
    # jetlink cluster's ACLs are read from its database; the super user part)
    ("testAuthorizationPriorToCompleteInitialLoad", SUPERMAN, MANY_ACLS, "User:superman",
     LOCALHOST, [("READ", "TOPIC", "green1"), ("WRITE", "GROUP", "wheel")],
     ["ALLOWED", "ALLOWED"]),
    ("testPrefixAcls", SUPERMAN, PREFIX_ACLS, "User:bob", LOCALHOST,
     [("WRITE", "TOPIC", "foobarr"), ("READ", "TOPIC", "goobar"), ("READ", "TOPIC", "fooa")],
     ["ALLOWED", "DENIED", "ALLOWED"]),
    ("testPrefixAcls", SUPERMAN, PREFIX_ACLS, "User:alice", LOCALHOST,
     [("DESCRIBE", "TOPIC", "fooa"), ("WRITE", "TOPIC", "bar"), ("READ", "TOPIC", "baz")],
     ["ALLOWED", "DENIED", "DENIED"]),
]


@pytest.mark.parametrize(("test", "settings", "bindings", "principal", "host", "actions",
                          "expected"), STANDARD_AUTHORIZER,
                         ids=[f"{c[0]}-{c[3]}@{c[4]}" for c in STANDARD_AUTHORIZER])
def test_standard_authorizer(test, settings, bindings, principal, host, actions, expected):
    assert results(settings, bindings, principal, host, actions) == expected


# testListAcls: the ANY filter, then TOPIC/null/ANY after foo's WRITE ACL is removed
def test_standard_authorizer_list_acls():
    foo = [foo_acl("READ", "ALLOW"), foo_acl("WRITE", "ALLOW")]
    bar = [bar_acl("DESCRIBE_CONFIGS", "DENY"), bar_acl("ALTER_CONFIGS", "DENY")]
    assert [b for b in foo + bar if AclFilter().matches(b)] == foo + bar
    rest = [foo[0], *bar]
    assert [b for b in rest if AclFilter("TOPIC", None, "ANY").matches(b)] == [foo[0]]


# testDenyAuditLogging / testAllowAuditLogging: the rule (MatchingAcl) the decision names
@pytest.mark.parametrize(("name", "rule", "binding"), [
    ("alpha", "deny", MANY_ACLS[6]),   # alp PREFIXED User:bob READ DENY
    ("green1", "allow", MANY_ACLS[1]),  # green PREFIXED User:bob READ ALLOW
])
def test_standard_authorizer_matching_acl(name, rule, binding):
    view = AclView(object(), SUPERMAN, MANY_ACLS)
    d = view.authorize("User:bob", "READ", "TOPIC", name, "127.0.0.1")
    assert (d.rule, d.binding) == (rule, binding)


@pytest.fixture
def acl_store(dd):
    dd.add_cluster("k", "kafka")
    return AclStore(dd.open("k"))


# testGetConfiguredSuperUsers (an empty map: a cluster never configured) and
# testConfigure's super users
@pytest.mark.parametrize(("value", "users"), [
    (None, set()),
    (" ", set()),
    ("User:bob;User:alice ", {"User:bob", "User:alice"}),
    (";  User:bob  ;  User:alice ", {"User:bob", "User:alice"}),
    ("User:alice;User:chris", {"User:alice", "User:chris"}),
    # AuthorizerTest's (BaseAuthorizerTest.superUsers)
    ("User:superuser1; User:superuser2", {"User:superuser1", "User:superuser2"}),
])
def test_standard_authorizer_configured_super_users(acl_store, value, users):
    settings = acl_store.settings() if value is None else acl_store.configure(super_users=value)
    assert set(settings.super_users) == users


def test_standard_authorizer_configured_super_users_refuses_a_bad_principal(acl_store):
    # Kafka: "expected a string in format principalType:principalName but got bob"
    with pytest.raises(UsageError) as exc:
        acl_store.configure(super_users="bob;:alice")
    assert (exc.value.field, str(exc.value)) == (
        "super_users", "super user 'bob' is not TYPE:NAME (e.g. User:admin)")
    assert acl_store.settings().super_users == ()


# testGetDefaultResult and testConfigure's default result
def test_standard_authorizer_default_result(acl_store):
    assert acl_store.settings().allow_everyone_if_no_acl_found is False
    assert acl_store.configure(allow_everyone=True).allow_everyone_if_no_acl_found is True
    assert acl_store.configure(allow_everyone=False).allow_everyone_if_no_acl_found is False


# === core/src/test/scala/unit/kafka/security/authorizer/AuthorizerTest.scala ==================

SUPERUSERS = AuthorizerSettings(True, ("User:superuser1", "User:superuser2"))
EVERYONE_SUPERUSERS = AuthorizerSettings(True, SUPERUSERS.super_users, True)
# "foo-" + UUID.randomUUID(), fixed here
RESOURCE = "foo-5f0e8c2a-3b7d-4e19-a6c4-9d21b0f7e358"
CONTEXT_HOST = "192.168.0.1"  # BaseAuthorizerTest's requestContext: User:alice from it
ALLOW_READ = ("User:*", "*", "READ", "ALLOW")
ALLOW_WRITE = ("User:*", "*", "WRITE", "ALLOW")
DENY_READ = ("User:*", "*", "READ", "DENY")


def on(entries: list[tuple[str, str, str, str]], name: str = RESOURCE, pt: str = "LITERAL",
       rt: str = "TOPIC") -> list[AclBinding]:
    return [acl(rt, name, pt, *entry) for entry in entries]


TOPIC_ACL = on([("User:alice", HOST1, "READ", "ALLOW"), ("User:alice", HOST2, "READ", "ALLOW"),
                ("User:alice", HOST1, "READ", "DENY"), ("User:alice", HOST1, "WRITE", "ALLOW"),
                ("User:alice", "*", "DESCRIBE", "ALLOW"), ("User:rob", "*", "READ", "ALLOW"),
                ("User:batman", "*", "WRITE", "ALLOW")])
WILDCARD_READ = on([("User:alice", "192.168.3.1", "READ", "ALLOW")], name="*")
PREFIXED_DENIALS = [  # testAuthorizeWithPrefixedResource (its random UUIDs fixed)
    ("a_other", "LITERAL"), ("a_other", "PREFIXED"),
    ("foo-0b6d1e4a-7c2f-4a83-9e5d-61f3a8c2b704", "PREFIXED"),
    ("foo-e4c9a7b2-1d3f-4b6e-8a05-c7d2f9e16b38", "PREFIXED"),
    ("foo-7a1f3c5e-9b2d-4e6a-b8c0-d4e6f8a0b2c4-zzz", "PREFIXED"),
    ("fooo-2c4e6a8b-0d1f-4a3c-9e5b-7d9f1b3d5f7a", "PREFIXED"),
    ("fo-9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b", "PREFIXED"),
    ("fop-3d5f7b9c-1e2a-4c4e-a6b8-d0f2a4c6e8b0", "PREFIXED"),
    ("fon-6b8d0f2a-4c6e-4a8c-b0d2-f4a6c8e0b2d4", "PREFIXED"),
    ("fon-", "PREFIXED"), ("z_other", "PREFIXED"), ("z_other", "LITERAL"),
]

# (test, settings, ACLs, principal, client host, (operation, resource type, name), allowed)
AUTHORIZER = [
    ("testAuthorizeWithEmptyResourceName", SUPERUSERS, [], "User:alice", CONTEXT_HOST,
     ("READ", "GROUP", ""), False),
    ("testAuthorizeWithEmptyResourceName", SUPERUSERS, on([ALLOW_READ], "*", rt="GROUP"),
     "User:alice", CONTEXT_HOST, ("READ", "GROUP", ""), True),
    *[("testTopicAcl", SUPERUSERS, TOPIC_ACL, user, host, (op, "TOPIC", RESOURCE), allowed)
      for user, host, op, allowed in [
          ("User:alice", HOST2, "READ", True), ("User:alice", HOST1, "READ", False),
          ("User:alice", HOST1, "WRITE", True), ("User:alice", HOST2, "WRITE", False),
          ("User:alice", HOST1, "DESCRIBE", True), ("User:alice", HOST2, "DESCRIBE", True),
          ("User:alice", HOST1, "ALTER", False), ("User:alice", HOST2, "ALTER", False),
          ("User:rob", HOST1, "DESCRIBE", True), ("User:batman", HOST1, "DESCRIBE", True),
          ("User:rob", HOST1, "READ", True), ("User:batman", HOST1, "WRITE", True)]],
    # (a custom principal class compares by type and name: jetlink's principals are the
    # TYPE:NAME text, so its cases are the plain ones)
    *[("testAllowAccessWithCustomPrincipal", SUPERUSERS,
       on([("User:alice", HOST1, "READ", "DENY"), ("User:alice", HOST2, "READ", "ALLOW")]),
       "User:alice", host, ("READ", "TOPIC", RESOURCE), allowed)
      for host, allowed in [(HOST2, True), (HOST1, False)]],
    ("testDenyTakesPrecedence", SUPERUSERS,
     on([("User:*", "*", "ALL", "ALLOW"), ("User:alice", "192.168.2.1", "ALL", "DENY")]),
     "User:alice", "192.168.2.1", ("READ", "TOPIC", RESOURCE), False),
    ("testAllowAllAccess", SUPERUSERS, on([("User:*", "*", "ALL", "ALLOW")]), "User:random",
     "192.0.4.4", ("READ", "TOPIC", RESOURCE), True),
    *[("testSuperUserHasAccess", SUPERUSERS, on([("User:*", "*", "ALL", "DENY")]), user,
       "192.0.4.4", ("READ", "TOPIC", RESOURCE), True)
      for user in ("User:superuser1", "User:superuser2")],
    ("testWildCardAcls", SUPERUSERS, [], "User:alice", CONTEXT_HOST,
     ("READ", "TOPIC", RESOURCE), False),
    ("testWildCardAcls", SUPERUSERS, WILDCARD_READ, "User:alice", "192.168.3.1",
     ("READ", "TOPIC", RESOURCE), True),
    ("testWildCardAcls", SUPERUSERS,
     WILDCARD_READ + on([("User:alice", "192.168.3.1", "WRITE", "ALLOW")])
     + on([("User:alice", "192.168.3.1", "WRITE", "DENY")], name="*"),
     "User:alice", "192.168.3.1", ("WRITE", "TOPIC", RESOURCE), False),
    ("testNoAclFound", SUPERUSERS, [], "User:alice", CONTEXT_HOST,
     ("READ", "TOPIC", RESOURCE), False),
    ("testNoAclFoundOverride", EVERYONE_SUPERUSERS, [], "User:alice", CONTEXT_HOST,
     ("READ", "TOPIC", RESOURCE), True),
    ("testAccessAllowedIfAllowAclExistsOnWildcardResource", SUPERUSERS, on([ALLOW_READ], "*"),
     "User:alice", CONTEXT_HOST, ("READ", "TOPIC", RESOURCE), True),
    ("testAccessAllowedIfAllowAclExistsOnPrefixedResource", SUPERUSERS,
     on([ALLOW_READ], "foo", "PREFIXED"), "User:alice", CONTEXT_HOST,
     ("READ", "TOPIC", RESOURCE), True),
    ("testAuthorizeWithPrefixedResource", SUPERUSERS,
     [b for name, pt in PREFIXED_DENIALS for b in on([DENY_READ], name, pt)]
     + on([ALLOW_READ], "foo", "PREFIXED"),
     "User:alice", CONTEXT_HOST, ("READ", "TOPIC", RESOURCE), True),
    *[("testSingleCharacterResourceAcls", SUPERUSERS, on([ALLOW_READ], "f"), "User:alice",
       CONTEXT_HOST, ("READ", "TOPIC", name), allowed)
      for name, allowed in [("f", True), ("foo", False)]],
    *[("testSingleCharacterResourceAcls", SUPERUSERS,
       on([ALLOW_READ], "f") + on([ALLOW_READ], "_", "PREFIXED"), "User:alice", CONTEXT_HOST,
       ("READ", "TOPIC", name), allowed)
      for name, allowed in [("_foo", True), ("_", True), ("foo_", False)]],
]


@pytest.mark.parametrize(("test", "settings", "bindings", "principal", "host", "action",
                          "allowed"), AUTHORIZER,
                         ids=[f"{c[0]}-{c[3]}@{c[4]}-{c[5][0]}-{c[5][2][:8]}"
                              for c in AUTHORIZER])
def test_authorizer(test, settings, bindings, principal, host, action, allowed):
    assert results(settings, bindings, principal, host, [action]) == [
        "ALLOWED" if allowed else "DENIED"]


VALID_OPS = ["ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION",
             "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS",
             "DESCRIBE_TOKENS"]  # AclOperation.values without ANY and UNKNOWN
EVERY_OP = set(VALID_OPS) - {"ALL"}


# testAclInheritance: testImplicationsOfAllow / testImplicationsOfDeny on the cluster
@pytest.mark.parametrize(("kind", "parent", "implied"), [
    ("ALLOW", "ALL", EVERY_OP), ("DENY", "ALL", EVERY_OP),
    ("ALLOW", "READ", {"DESCRIBE"}), ("ALLOW", "WRITE", {"DESCRIBE"}),
    ("ALLOW", "DELETE", {"DESCRIBE"}), ("ALLOW", "ALTER", {"DESCRIBE"}),
    ("DENY", "DESCRIBE", set()), ("ALLOW", "ALTER_CONFIGS", {"DESCRIBE_CONFIGS"}),
    ("DENY", "DESCRIBE_CONFIGS", set()),
])
def test_authorizer_acl_inheritance(kind, parent, implied):
    entries = [("User:alice", "*", parent, kind)]
    if kind == "DENY":
        entries.append(("User:alice", "*", "ALL", "ALLOW"))
    bindings = on(entries, "kafka-cluster", rt="CLUSTER")
    got = results(SUPERUSERS, bindings, "User:alice", "192.168.3.1",
                  [(op, "CLUSTER", "kafka-cluster") for op in VALID_OPS])
    hit = "ALLOWED" if kind == "ALLOW" else "DENIED"
    miss = "DENIED" if kind == "ALLOW" else "ALLOWED"
    assert dict(zip(VALID_OPS, got, strict=True)) == {
        op: hit if op in implied or op == parent else miss for op in VALID_OPS}


def _ace(b: AclBinding) -> tuple[str, str, str, str]:
    return b.principal, b.host, b.operation, b.permission


def _store_acls(store: AclStore, rt: str, name: str, pt: str) -> set[tuple[str, str, str, str]]:
    """getAcls(authorizer, resourcePattern): the entries of that pattern."""
    return {_ace(b) for b in store.find(AclFilter(rt, name, pt))}


WILDCARD, PREFIXED, LITERAL = ("TOPIC", "*", "LITERAL"), ("TOPIC", "foo", "PREFIXED"), (
    "TOPIC", RESOURCE, "LITERAL")


# testDeleteAclOnWildcardResource, testDeleteAllAclOnWildcardResource,
# testDeleteAclOnPrefixedResource, testDeleteAllAclOnPrefixedResource (removeAcls: the
# entries given, or every ACL of the pattern when none is)
@pytest.mark.parametrize("pattern", [WILDCARD, PREFIXED])
@pytest.mark.parametrize(("added", "removed", "left"), [
    ([ALLOW_READ, ALLOW_WRITE], [ALLOW_READ], {ALLOW_WRITE}),
    ([ALLOW_READ, ALLOW_WRITE], [], set()),
])
def test_authorizer_delete_acls(acl_store, pattern, added, removed, left):
    rt, name, pt = pattern
    acl_store.add(on(added, name, pt, rt))
    filters = [AclFilter(rt, name, pt, *entry) for entry in removed] or [AclFilter(rt, name, pt)]
    acl_store.remove(filters)
    assert _store_acls(acl_store, rt, name, pt) == left
    assert {_ace(b) for b in acl_store.find()} == left


# testAddAclsOnLiteralResource / OnWildcardResource / OnPrefixedResource
@pytest.mark.parametrize("pattern", [LITERAL, WILDCARD, PREFIXED])
def test_authorizer_add_acls(acl_store, pattern):
    rt, name, pt = pattern
    acl_store.add(on([ALLOW_READ, ALLOW_WRITE], name, pt, rt))
    acl_store.add(on([ALLOW_WRITE, DENY_READ], name, pt, rt))
    assert {p: _store_acls(acl_store, *p) for p in (LITERAL, WILDCARD, PREFIXED)} == {
        p: {ALLOW_READ, ALLOW_WRITE, DENY_READ} if p == pattern else set()
        for p in (LITERAL, WILDCARD, PREFIXED)}


# testLocalConcurrentModificationOfResourceAcls
def test_authorizer_acls_added_one_by_one(acl_store):
    acl_store.add(on([("User:alice", "*", "READ", "ALLOW")], "test"))
    acl_store.add(on([("User:bob", "*", "READ", "DENY")], "test"))
    assert _store_acls(acl_store, "TOPIC", "test", "LITERAL") == {
        ("User:alice", "*", "READ", "ALLOW"), ("User:bob", "*", "READ", "DENY")}


# testGetAclsPrincipal: (ACL's principal, filter's principal) -> ACLs found
@pytest.mark.parametrize(("principal", "wanted", "count"), [
    ("User:alice", "User:*", 0), ("User:alice", "User:alice", 1),
    ("User:*", "User:*", 1), ("User:*", "User:alice", 0),
])
def test_authorizer_get_acls_principal(principal, wanted, count):
    bindings = on([(principal, "*", "WRITE", "ALLOW")])
    assert sum(AclFilter(principal=wanted).matches(b) for b in bindings) == count


AF_ACL1 = acl("TOPIC", "foo-1c3e5a7b", "LITERAL", "User:alice", "*", "READ", "ALLOW")
AF_ACL2 = acl("TOPIC", "foo-1c3e5a7b", "LITERAL", "User:alice", "192.168.0.1", "WRITE", "ALLOW")
AF_ACL3 = acl("TOPIC", "bar-9d8c7b6a", "LITERAL", "User:alice", "*", "DESCRIBE", "ALLOW")
AF_ACL4 = acl("TOPIC", "bar-", "PREFIXED", "User:*", "*", "READ", "ALLOW")


# testAclsFilter ("foo-"/"bar-" + UUID fixed): acls(filter), then deleteAcls' per-filter
# results (each filter's matches found before any is deleted)
@pytest.mark.parametrize(("flt", "found"), [
    (AclFilter(), {AF_ACL1, AF_ACL2, AF_ACL3, AF_ACL4}),
    (AclFilter("TOPIC", AF_ACL1.name, "LITERAL"), {AF_ACL1, AF_ACL2}),
    (AclFilter("TOPIC", "bar-", "PREFIXED"), {AF_ACL4}),
    (AclFilter("ANY", AF_ACL3.name, "MATCH"), {AF_ACL3, AF_ACL4}),
    (AclFilter(*(getattr(AF_ACL1, f) for f in (
        "resource_type", "name", "pattern_type", "principal", "host", "operation",
        "permission"))), {AF_ACL1}),
    (AclFilter("TOPIC", AF_ACL3.name, "LITERAL"), {AF_ACL3}),
    (AclFilter("TOPIC", "baz", "ANY"), set()),
])
def test_authorizer_acls_filter(flt, found):
    assert {b for b in (AF_ACL1, AF_ACL2, AF_ACL3, AF_ACL4) if flt.matches(b)} == found


# testAclManagementAPIs (its ACL on CLUSTER "*" left out: jetlink's cluster resource is
# only kafka-cluster, AclBinding.make refuses another name)
def test_authorizer_acl_management(acl_store):
    acl1 = ("User:alice", "host1", "READ", "ALLOW")
    acl2 = ("User:alice", "host1", "WRITE", "ALLOW")
    acl3 = ("User:bob", "host2", "READ", "ALLOW")
    acl4 = ("User:bob", "host2", "WRITE", "ALLOW")
    acl5 = ("User:bob", "*", "READ", "ALLOW")
    acl_store.add(on([acl1, acl2, acl3, acl4]))
    acl_store.add(on([acl5]))  # addAcl is additive
    assert set(acl_store.find(AclFilter(principal="User:alice"))) == set(on([acl1, acl2]))
    assert set(acl_store.find(AclFilter(principal="User:bob"))) == set(on([acl3, acl4, acl5]))
    acls = [acl1, acl2, acl3, acl4, acl5]
    others = {("TOPIC", "*"): [("User:bob", "*", "READ", "ALLOW")], ("GROUP", "*"): acls,
              ("GROUP", "test-ConsumerGroup"): acls}
    for (rt, name), entries in others.items():
        acl_store.add(on(entries, name, rt=rt))
    assert set(acl_store.find()) == {b for (rt, name), entries in others.items()
                                     for b in on(entries, name, rt=rt)} | set(on(acls))
    acl_store.remove([AclFilter(*LITERAL, *entry) for entry in (acl1, acl5)])
    assert _store_acls(acl_store, *LITERAL) == {acl2, acl3, acl4}
    acl_store.remove([AclFilter(*LITERAL)])
    assert _store_acls(acl_store, *LITERAL) == set()
    acl_store.add(on([acl1]))
    assert _store_acls(acl_store, *LITERAL) == {acl1}
    acl_store.remove([AclFilter(*LITERAL, *acl1)])
    assert _store_acls(acl_store, *LITERAL) == set()


# === clients/.../common/acl/AclBindingTest.java, ResourcePatternTest.java =====================

ACL1 = acl("TOPIC", "mytopic", "LITERAL", "User:ANONYMOUS", "", "ALL", "ALLOW")
ACL2 = acl("TOPIC", "mytopic", "LITERAL", "User:*", "", "READ", "ALLOW")
ACL3 = acl("TOPIC", "mytopic2", "LITERAL", "User:ANONYMOUS", "127.0.0.1", "READ", "DENY")
ANY_ANONYMOUS = AclFilter(principal="User:ANONYMOUS")
ANY_DENY = AclFilter(permission="DENY")
ANY_MYTOPIC = AclFilter("TOPIC", "mytopic", "LITERAL")


# testMatching (its UNKNOWN_ACL cases left out: jetlink has no UNKNOWN operation)
def test_acl_binding_equality():
    assert ACL1 == acl("TOPIC", "mytopic", "LITERAL", "User:ANONYMOUS", "", "ALL", "ALLOW")
    assert ACL1 != ACL2
    assert ACL2 != ACL1


@pytest.mark.parametrize(("flt", "binding", "matches"), [
    (AclFilter(), ACL1, True), (AclFilter(), ACL2, True), (AclFilter(), ACL3, True),
    (ANY_ANONYMOUS, ACL1, True), (ANY_ANONYMOUS, ACL2, False), (ANY_ANONYMOUS, ACL3, True),
    (ANY_DENY, ACL1, False), (ANY_DENY, ACL2, False), (ANY_DENY, ACL3, True),
    (ANY_MYTOPIC, ACL1, True), (ANY_MYTOPIC, ACL2, True), (ANY_MYTOPIC, ACL3, False),
])
def test_acl_binding_matching(flt, binding, matches):
    assert flt.matches(binding) is matches


# AclBindingTest shouldThrowOnMatchPatternType / shouldThrowOnAnyPatternType /
# shouldThrowOnAnyResourceType, ResourcePatternTest shouldThrowIfResourceTypeIsAny /
# PatternTypeIsMatch / PatternTypeIsAny / ResourceNameIsNull: the field refused. (Its
# shouldNotThrowOnUnknownPatternType / ResourceType: a new ACL with UNKNOWN is refused, as
# AclControlManager.validateNewAcl refuses it below.)
@pytest.mark.parametrize(("rt", "name", "pt", "field"), [
    ("TOPIC", "foo", "MATCH", "pattern_type"),
    ("TOPIC", "foo", "ANY", "pattern_type"),
    ("ANY", "foo", "LITERAL", "resource_type"),
    ("ANY", "name", "LITERAL", "resource_type"),
    ("TOPIC", "name", "MATCH", "pattern_type"),
    ("TOPIC", "name", "ANY", "pattern_type"),
    ("TOPIC", None, "ANY", "resource_name"),  # (the name is checked first, as Kafka's)
])
def test_acl_binding_refuses_a_filter_value(rt, name, pt, field):
    with pytest.raises(UsageError) as exc:
        AclBinding.make(rt, name, pt, "User:ANONYMOUS", "*", "ALL", "ALLOW")
    assert exc.value.field == field


# === clients/.../common/acl/ResourcePatternFilterTest.java ====================================
# (shouldBeUnknownIfResourceTypeUnknown / PatternTypeUnknown left out: no UNKNOWN here)
RESOURCE_PATTERN_FILTER = [
    ("shouldNotMatchIfDifferentResourceType", ("TOPIC", "Name", "LITERAL"),
     ("GROUP", "Name", "LITERAL"), False),
    ("shouldNotMatchIfDifferentName", ("TOPIC", "Different", "PREFIXED"),
     ("TOPIC", "Name", "PREFIXED"), False),
    ("shouldNotMatchIfDifferentNameCase", ("TOPIC", "NAME", "LITERAL"),
     ("TOPIC", "Name", "LITERAL"), False),
    ("shouldNotMatchIfDifferentPatternType", ("TOPIC", "Name", "LITERAL"),
     ("TOPIC", "Name", "PREFIXED"), False),
    ("shouldMatchWhereResourceTypeIsAny", ("ANY", "Name", "PREFIXED"),
     ("TOPIC", "Name", "PREFIXED"), True),
    ("shouldMatchWhereResourceNameIsAny", ("TOPIC", None, "PREFIXED"),
     ("TOPIC", "Name", "PREFIXED"), True),
    ("shouldMatchWherePatternTypeIsAny", ("TOPIC", None, "ANY"),
     ("TOPIC", "Name", "PREFIXED"), True),
    ("shouldMatchWherePatternTypeIsMatch", ("TOPIC", None, "MATCH"),
     ("TOPIC", "Name", "PREFIXED"), True),
    ("shouldMatchLiteralIfExactMatch", ("TOPIC", "Name", "LITERAL"),
     ("TOPIC", "Name", "LITERAL"), True),
    ("shouldMatchLiteralIfNameMatchesAndFilterIsOnPatternTypeAny", ("TOPIC", "Name", "ANY"),
     ("TOPIC", "Name", "LITERAL"), True),
    ("shouldMatchLiteralIfNameMatchesAndFilterIsOnPatternTypeMatch", ("TOPIC", "Name", "MATCH"),
     ("TOPIC", "Name", "LITERAL"), True),
    ("shouldNotMatchLiteralIfNamePrefixed", ("TOPIC", "Name-something", "MATCH"),
     ("TOPIC", "Name", "LITERAL"), False),
    ("shouldMatchLiteralWildcardIfExactMatch", ("TOPIC", "*", "LITERAL"),
     ("TOPIC", "*", "LITERAL"), True),
    ("shouldNotMatchLiteralWildcardAgainstOtherName", ("TOPIC", "Name", "LITERAL"),
     ("TOPIC", "*", "LITERAL"), False),
    ("shouldNotMatchLiteralWildcardTheWayAround", ("TOPIC", "*", "LITERAL"),
     ("TOPIC", "Name", "LITERAL"), False),
    ("shouldNotMatchLiteralWildcardIfFilterHasPatternTypeOfAny", ("TOPIC", "Name", "ANY"),
     ("TOPIC", "*", "LITERAL"), False),
    ("shouldMatchLiteralWildcardIfFilterHasPatternTypeOfMatch", ("TOPIC", "Name", "MATCH"),
     ("TOPIC", "*", "LITERAL"), True),
    ("shouldMatchPrefixedIfExactMatch", ("TOPIC", "Name", "PREFIXED"),
     ("TOPIC", "Name", "PREFIXED"), True),
    ("shouldNotMatchIfBothPrefixedAndFilterIsPrefixOfResource", ("TOPIC", "Name", "PREFIXED"),
     ("TOPIC", "Name-something", "PREFIXED"), False),
    ("shouldNotMatchIfBothPrefixedAndResourceIsPrefixOfFilter",
     ("TOPIC", "Name-something", "PREFIXED"), ("TOPIC", "Name", "PREFIXED"), False),
    ("shouldNotMatchPrefixedIfNamePrefixedAnyFilterTypeIsAny",
     ("TOPIC", "Name-something", "ANY"), ("TOPIC", "Name", "PREFIXED"), False),
    ("shouldMatchPrefixedIfNamePrefixedAnyFilterTypeIsMatch",
     ("TOPIC", "Name-something", "MATCH"), ("TOPIC", "Name", "PREFIXED"), True),
]


@pytest.mark.parametrize(("test", "flt", "pattern", "matches"), RESOURCE_PATTERN_FILTER,
                         ids=[c[0] for c in RESOURCE_PATTERN_FILTER])
def test_resource_pattern_filter(test, flt, pattern, matches):
    binding = acl(*pattern, "User:ANONYMOUS", "*", "ALL", "ALLOW")
    assert AclFilter(*flt).matches(binding) is matches


# === metadata/.../controller/AclControlManagerTest.java =======================================

# testValidateNewAcl: the valid ACL, then UNKNOWN in each field refused ("Invalid patternType
# UNKNOWN" ...: jetlink names the field)
def test_acl_control_manager_validate_new_acl_accepts():
    assert AclBinding.make("TOPIC", "*", "LITERAL", "User:*", "*", "ALTER", "ALLOW") == acl(
        "TOPIC", "*", "LITERAL", "User:*", "*", "ALTER", "ALLOW")


@pytest.mark.parametrize(("fields", "field"), [
    (("TOPIC", "*", "UNKNOWN", "User:*", "*", "ALTER", "ALLOW"), "pattern_type"),
    (("UNKNOWN", "*", "LITERAL", "User:*", "*", "ALTER", "ALLOW"), "resource_type"),
    (("TOPIC", "*", "LITERAL", "User:*", "*", "UNKNOWN", "ALLOW"), "operation"),
    (("TOPIC", "*", "LITERAL", "User:*", "*", "ALTER", "UNKNOWN"), "permission"),
])
def test_acl_control_manager_validate_new_acl_refuses(fields, field):
    with pytest.raises(UsageError) as exc:
        AclBinding.make(*fields)
    assert exc.value.field == field


# testValidateFilter ("Unknown patternFilter." / "Unknown entryFilter.": jetlink names the
# field)
def test_acl_control_manager_validate_filter_accepts():
    assert AclFilter.make("ANY", "*", "LITERAL", "User:*", "*", "ANY", "ANY") == AclFilter(
        "ANY", "*", "LITERAL", "User:*", "*", "ANY", "ANY")


@pytest.mark.parametrize(("fields", "field"), [
    (("ANY", "*", "UNKNOWN", "User:*", "*", "ANY", "ANY"), "pattern_type"),
    (("ANY", "*", "MATCH", "User:*", "*", "ANY", "UNKNOWN"), "permission"),
])
def test_acl_control_manager_validate_filter_refuses(fields, field):
    with pytest.raises(UsageError) as exc:
        AclFilter.make(*fields)
    assert exc.value.field == field


# StandardAclTest.TEST_ACLS (also AclControlManagerTest's)
TEST_ACLS = [
    acl("CLUSTER", "kafka-cluster", "LITERAL", "User:*", "*", "ALTER", "ALLOW"),
    acl("TOPIC", "foo_", "PREFIXED", "User:*", "*", "READ", "ALLOW"),
    acl("GROUP", "mygroup", "LITERAL", "User:foo", "*", "READ", "DENY"),
    acl("GROUP", "mygroup", "PREFIXED", "User:foo", "*", "READ", "DENY"),
    acl("GROUP", "foo", "PREFIXED", "User:foo", "*", "READ", "DENY"),
]


# testCreateAclDeleteAcl: three created, one with an UNKNOWN pattern type refused; the
# filter (ANY, null, LITERAL) deletes the literal two, one with an UNKNOWN resource type is
# refused
def test_acl_control_manager_create_acl_delete_acl(acl_store):
    assert acl_store.add(TEST_ACLS[:3]) == TEST_ACLS[:3]
    with pytest.raises(UsageError) as exc:
        AclBinding.make("TOPIC", "*", "UNKNOWN", "User:*", "*", "ALTER", "ALLOW")
    assert exc.value.field == "pattern_type"
    assert set(acl_store.remove([AclFilter("ANY", None, "LITERAL")])) == {
        TEST_ACLS[0], TEST_ACLS[2]}
    with pytest.raises(UsageError) as exc:
        AclFilter.make("UNKNOWN", None, "LITERAL")
    assert exc.value.field == "resource_type"
    assert acl_store.find() == [TEST_ACLS[1]]


# testDeleteDedupe: the ANY filter, the ACL's own filter, then both in one deletion: the ACL
# is deleted once each time
def test_acl_control_manager_delete_dedupe(acl_store):
    b = acl("TOPIC", "topic-1", "LITERAL", "User:user", "10.0.0.1", "ALL", "ALLOW")
    exact = AclFilter(b.resource_type, b.name, b.pattern_type, b.principal, b.host,
                      b.operation, b.permission)
    for filters in ([AclFilter()], [exact], [AclFilter(), exact]):
        assert acl_store.add([b]) == [b]
        assert acl_store.remove(filters) == [b]
        assert acl_store.find() == []


# === metadata/.../authorizer/StandardAclTest.java =============================================
# testEquals (testCompareTo left out: jetlink orders bindings by its own fields, not by
# StandardAcl.compareTo; testToBindingRoundTrips: one type here)
@pytest.mark.parametrize("i", range(len(TEST_ACLS)))
def test_standard_acl_equals(i):
    assert [TEST_ACLS[i] == other for other in TEST_ACLS] == [j == i for j in
                                                              range(len(TEST_ACLS))]


# === clients/.../common/utils/SecurityUtilsTest.java ==========================================
# testPrincipalNameCanContainSeparator / testParseKafkaPrincipalWithNonUserPrincipalType
@pytest.mark.parametrize("principal", ["User:name:with:separator:in:it", "Group:foo"])
def test_security_utils_parse_kafka_principal(principal):
    assert parse_principal(principal) == principal


# === core/src/test/java/kafka/admin/AclCommandTest.java =======================================
# kafka-acls through `jetlink kafka-acls --bootstrap-server kw:9092`: that option names the
# cluster kw, and jetlink says so in one notice line on stderr (Kafka's tests expect an empty
# stderr). A usage error exits 2 (jetlink's usage status; kafka-acls exits 1).

NOTICE = ("jetlink: notice: --bootstrap-server kw:9092 selects cluster kw; --bootstrap-server "
          "and --command-config are otherwise ignored\n")
USERS = ["User:CN=writeuser,OU=Unknown,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", "User:test2",
         'User:CN=\\#User with special chars in CN : (\\, \\+ " \\ \\< \\> \\; \')']
HOSTS = ["host1", "host2"]

# RESOURCE_TO_COMMAND and RESOURCE_TO_OPERATIONS: resources, their options, operations and the
# --operation values naming them
ACL_CLI_RESOURCES = {
    "TOPIC": ([("TOPIC", "test-1"), ("TOPIC", "test-2")],
              ["--topic", "test-1", "--topic", "test-2"],
              ["READ", "WRITE", "CREATE", "DESCRIBE", "DELETE", "DESCRIBE_CONFIGS",
               "ALTER_CONFIGS", "ALTER"],
              ["Read", "Write", "Create", "Describe", "Delete", "DescribeConfigs",
               "AlterConfigs", "Alter"]),
    "CLUSTER": ([("CLUSTER", "kafka-cluster")], ["--cluster"],
                ["CREATE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS",
                 "IDEMPOTENT_WRITE", "ALTER", "DESCRIBE"],
                ["Create", "ClusterAction", "DescribeConfigs", "AlterConfigs",
                 "IdempotentWrite", "Alter", "Describe"]),
    "GROUP": ([("GROUP", "testGroup-1"), ("GROUP", "testGroup-2")],
              ["--group", "testGroup-1", "--group", "testGroup-2"],
              ["READ", "DESCRIBE", "DELETE"], ["Read", "Describe", "Delete"]),
    "TRANSACTIONAL_ID": ([("TRANSACTIONAL_ID", "t0"), ("TRANSACTIONAL_ID", "t1")],
                         ["--transactional-id", "t0", "--transactional-id", "t1"],
                         ["DESCRIBE", "WRITE"], ["Describe", "Write"]),
    "DELEGATION_TOKEN": ([("DELEGATION_TOKEN", "token1"), ("DELEGATION_TOKEN", "token2")],
                         ["--delegation-token", "token1", "--delegation-token", "token2"],
                         ["DESCRIBE"], ["Describe"]),
    "USER": ([("USER", "User:test-user1"), ("USER", "User:test-user2")],
             ["--user-principal", "User:test-user1", "--user-principal", "User:test-user2"],
             ["CREATE_TOKENS", "DESCRIBE_TOKENS"], ["CreateTokens", "DescribeTokens"]),
}


def get_acls(perm: str, ops: list[str]) -> set[tuple[str, str, str, str]]:
    """AclCommand.getAcls(USERS, perm, ops, HOSTS)."""
    return {(u, h, op, perm) for u in USERS for op in ops for h in HOSTS}


def get_cmd(perm: str) -> list[str]:
    """getCmd: per user, its hosts and its principal option."""
    side = "allow" if perm == "ALLOW" else "deny"
    out: list[str] = []
    for user in USERS:
        out += [f"--{side}-host", "host1", f"--{side}-host", "host2", f"--{side}-principal", user]
    return out


@pytest.fixture
def kafka_acls(jl):
    """`jetlink kafka-acls --bootstrap-server kw:9092 ...` on a cluster kw with an authorizer
    (super.users User:ANONYMOUS, as the test cluster's); ``.acls()`` its bindings."""
    ok(jl("cluster", "add", "kw", "--kind", "kafka", "--authorizer", "--super-users",
          "User:ANONYMOUS"))

    def run(*args: str):
        return jl("kafka-acls", "--bootstrap-server", "kw:9092", *args)

    def acls() -> list[AclBinding]:
        d = DataDir(jl.data)
        try:
            return AclStore(d.open("kw")).find()
        finally:
            d.close()

    run.acls = acls
    return run


def entries_of(bindings: list[AclBinding], rt: str, name: str, pt: str = "LITERAL"
               ) -> set[tuple[str, str, str, str]]:
    return {_ace(b) for b in bindings if (b.resource_type, b.name, b.pattern_type) == (
        rt, name, pt)}


def blocks(stdout: str, prefix: str) -> set[str]:
    """The ``Adding ACLs for resource `...`: `` / ``Current ACLs ...`` lines of an output."""
    return {line for line in stdout.splitlines() if line.startswith(prefix)}


def block_lines(prefix: str, resources: list[tuple[str, str]]) -> set[str]:
    return {f"{prefix} for resource `ResourcePattern(resourceType={rt}, name={name}, "
            "patternType=LITERAL)`: " for rt, name in resources}


# testAclCli: per resource set and permission, --add, --list, then --remove (testRemove)
@pytest.mark.parametrize("perm", ["ALLOW", "DENY"])
@pytest.mark.parametrize("key", list(ACL_CLI_RESOURCES))
def test_acl_command_acl_cli(kafka_acls, key, perm):
    resources, resource_cmd, ops, op_values = ACL_CLI_RESOURCES[key]
    op_cmd = [arg for value in op_values for arg in ("--operation", value)]
    r = kafka_acls(*get_cmd(perm), *resource_cmd, *op_cmd, "--add")
    assert (r.exit_code, r.stderr) == (0, NOTICE)
    assert blocks(r.stdout, "Adding ACLs") == block_lines("Adding ACLs", resources)
    bindings = kafka_acls.acls()
    assert {res: entries_of(bindings, *res) for res in resources} == {
        res: get_acls(perm, ops) for res in resources}
    r = kafka_acls("--list")
    assert (r.exit_code, r.stderr) == (0, NOTICE)
    assert blocks(r.stdout, "Current ACLs") == block_lines("Current ACLs", resources)
    r = kafka_acls(*resource_cmd, "--remove", "--force")
    assert (r.exit_code, r.stderr) == (0, NOTICE)
    assert kafka_acls.acls() == []


CONSUMER_RESOURCE_TO_ACLS = {"TOPIC": ["READ", "DESCRIBE"], "GROUP": ["READ"]}


def producer_resource_to_acls(idempotent: bool) -> dict[str, list[str]]:
    return {"TOPIC": ["WRITE", "DESCRIBE", "CREATE"], "TRANSACTIONAL_ID": ["WRITE", "DESCRIBE"],
            "CLUSTER": ["IDEMPOTENT_WRITE"] if idempotent else []}


def _consumer_and(idempotent: bool) -> dict[str, list[str]]:
    producer = producer_resource_to_acls(idempotent)
    return {key: ops + producer.get(key, []) for key, ops in CONSUMER_RESOURCE_TO_ACLS.items()}


# CMD_TO_RESOURCES_TO_ACL: the shortcut options and the ACLs each makes per resource set
CMD_TO_RESOURCES_TO_ACL = [
    (["--producer"], producer_resource_to_acls(False)),
    (["--producer", "--idempotent"], producer_resource_to_acls(True)),
    (["--consumer"], CONSUMER_RESOURCE_TO_ACLS),
    (["--producer", "--consumer"], _consumer_and(False)),
    (["--producer", "--idempotent", "--consumer"], _consumer_and(True)),
]


# testProducerConsumerCli: --add with the shortcut, the ACLs of each resource set, then
# testRemove with the same resources and shortcut (every ACL made is gone: also the cluster's
# IdempotentWrite that --idempotent adds without --cluster)
@pytest.mark.parametrize(("cmd", "resources_to_acls"), CMD_TO_RESOURCES_TO_ACL,
                         ids=[" ".join(c[0]) for c in CMD_TO_RESOURCES_TO_ACL])
def test_acl_command_producer_consumer_cli(kafka_acls, cmd, resources_to_acls):
    resource_cmd = [arg for key in resources_to_acls for arg in ACL_CLI_RESOURCES[key][1]]
    r = kafka_acls(*get_cmd("ALLOW"), *resource_cmd, *cmd, "--add")
    assert (r.exit_code, r.stderr) == (0, NOTICE)
    bindings = kafka_acls.acls()
    expected = {res: get_acls("ALLOW", ops) for key, ops in resources_to_acls.items()
                for res in ACL_CLI_RESOURCES[key][0]}
    assert {res: entries_of(bindings, *res) for res in expected} == expected
    r = kafka_acls(*resource_cmd, *cmd, "--remove", "--force")
    assert (r.exit_code, r.stderr) == (0, NOTICE)
    assert kafka_acls.acls() == []


# testAclsOnPrefixedResources
def test_acl_command_acls_on_prefixed_resources(kafka_acls):
    cmd = ["--allow-principal", "User:test2", "--producer", "--topic", "Test-",
           "--resource-pattern-type", "Prefixed"]
    r = kafka_acls(*cmd, "--add")
    assert (r.exit_code, r.stderr) == (0, NOTICE)
    assert entries_of(kafka_acls.acls(), "TOPIC", "Test-", "PREFIXED") == {
        ("User:test2", "*", op, "ALLOW") for op in ("WRITE", "DESCRIBE", "CREATE")}
    r = kafka_acls(*cmd, "--remove", "--force")
    assert (r.exit_code, r.stderr) == (0, NOTICE)
    bindings = kafka_acls.acls()
    assert entries_of(bindings, "CLUSTER", "kafka-cluster", "PREFIXED") == set()
    assert entries_of(bindings, "TOPIC", "Test-", "PREFIXED") == set()


def _pattern_refused(value: str, *extra: str) -> str:
    return (f"jetlink: error: pattern type {value!r} is not one of "
            f"{', '.join(('LITERAL', 'PREFIXED', *extra))} (Kafka's names, in any case: the "
            "kafka-acls spellings Literal, Prefixed ... too)\n")


def _not_for_add(value: str) -> str:
    return (f"jetlink: error: A '--resource-pattern-type' value of '{value}' is not valid when "
            "adding acls.\n")


NOTHING_REMOVED = "jetlink: notice: no ACL matched: nothing removed\n"

# testPatternTypes: PatternType.values() in order, each with --add (valid when specific),
# --list and --remove (valid unless UNKNOWN): (exit status, stderr) of the three
PATTERN_TYPES = [
    ("UNKNOWN", [(2, _pattern_refused("UNKNOWN")),
                 (2, _pattern_refused("UNKNOWN", "ANY", "MATCH")),
                 (2, _pattern_refused("UNKNOWN", "ANY", "MATCH"))]),
    ("ANY", [(2, _not_for_add("ANY")), (0, NOTICE), (0, NOTICE + NOTHING_REMOVED)]),
    ("MATCH", [(2, _not_for_add("MATCH")), (0, NOTICE), (0, NOTICE + NOTHING_REMOVED)]),
    ("LITERAL", [(0, NOTICE), (0, NOTICE), (0, NOTICE)]),
    ("PREFIXED", [(0, NOTICE), (0, NOTICE), (0, NOTICE)]),
]


def test_acl_command_pattern_types(kafka_acls):
    got = []
    for pattern_type, _expected in PATTERN_TYPES:
        for args in (["--allow-principal", "User:test2", "--producer", "--topic", "Test",
                      "--add", "--resource-pattern-type", pattern_type],
                     ["--topic", "Test", "--list", "--resource-pattern-type", pattern_type],
                     ["--topic", "Test", "--force", "--remove", "--resource-pattern-type",
                      pattern_type]):
            r = kafka_acls(*args)
            got.append((r.exit_code, r.stderr))
    assert got == [step for _pattern_type, steps in PATTERN_TYPES for step in steps]
    assert kafka_acls.acls() == []


LOCAL = ["--bootstrap-server", "localhost:9092"]

# assertInitializeInvalidOptionsExitCodeAndMsg cases: (test, arguments, Kafka's message)
ACL_COMMAND_OPTION_CHECKS = [
    ("testUseBootstrapServerOptWithBootstrapControllerOpt",
     [*LOCAL, "--bootstrap-controller", "localhost:9092"],
     "Only one of --bootstrap-server or --bootstrap-controller must be specified"),
    # (Kafka's text ends with a space)
    ("testExactlyOneAction", [*LOCAL, "--add", "--list"],
     "Command must include exactly one action: --list, --add, --remove."),
    ("testExactlyOneAction", [*LOCAL, "--add", "--list", "--remove"],
     "Command must include exactly one action: --list, --add, --remove."),
    ("testUseListPrincipalsOptWithoutListOpt", [*LOCAL, "--add", "--principal", "User:CN=client"],
     "The --principal option is only available if --list is set"),
    ("testUseProducerOptWithoutTopicOpt", [*LOCAL, "--add", "--producer"],
     "With --producer you must specify a --topic"),
    ("testUseIdempotentOptWithoutProducerOpt", [*LOCAL, "--add", "--idempotent"],
     "The --idempotent option is only available if --producer is set"),
    ("testUseConsumerOptWithoutRequiredOpt", [*LOCAL, "--add", "--consumer"],
     "With --consumer you must specify a --topic and a --group and no --cluster or "
     "--transactional-id option should be specified."),
    ("testInvalidArgs", [*LOCAL, "--list", "--producer"],
     'Option "[list]" can\'t be used with option "[producer]"'),
    # testUseWithoutBootstrapServerOptAndBootstrapControllerOpt (no arguments): jetlink needs
    # no --bootstrap-server (the cluster is --cluster's or the default), so the next check
    # answers, not "One of --bootstrap-server or --bootstrap-controller must be specified"
    ("testUseWithoutBootstrapServerOptAndBootstrapControllerOpt", [],
     "Command must include exactly one action: --list, --add, --remove."),
]


@pytest.mark.parametrize(("test", "args", "message"), ACL_COMMAND_OPTION_CHECKS,
                         ids=[f"{c[0]}-{' '.join(c[1][2:])}" for c in ACL_COMMAND_OPTION_CHECKS])
def test_acl_command_option_checks(jl, test, args, message):
    r = jl("kafka-acls", *args)
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"jetlink: error: {message}\n")


# testInvalidArgs' --producer / --consumer with a bare --operation: jetlink's --operation takes
# a value, so its parser refuses the line first (Kafka: Option "[producer]" / "[consumer]"
# can't be used with option "[operation]")
@pytest.mark.parametrize(("args", "last_line"), [
    ([*LOCAL, "--add", "--producer", "--operation"],
     "Error: Option '--operation' requires an argument."),
    ([*LOCAL, "--add", "--consumer", "--operation", "--topic", "test-topic", "--group",
      "test-group"], "Error: Got unexpected extra argument(s) (test-topic)"),
])
def test_acl_command_bare_operation(jl, args, last_line):
    r = jl("kafka-acls", *args)
    assert (r.exit_code, r.stdout, r.stderr.splitlines()[-1]) == (2, "", last_line)


# testUseConsumerOptWithoutRequiredOpt's checkNotThrow: --consumer with --topic and --group
# passes the option checks; with no principal the command then stops at its next check
def test_acl_command_consumer_with_topic_and_group_passes_the_checks(jl):
    ok(jl("cluster", "add", "localhost", "--kind", "kafka", "--authorizer"))
    r = jl("kafka-acls", *LOCAL, "--add", "--consumer", "--topic", "test-topic", "--group",
           "test-group")
    assert (r.exit_code, r.stderr) == (2, (
        "jetlink: notice: --bootstrap-server localhost:9092 selects cluster localhost; "
        "--bootstrap-server and --command-config are otherwise ignored\n"
        "jetlink: error: You must specify one of: --allow-principal, --deny-principal when "
        "trying to add ACLs.\n"))


# === tools/.../consumer/group/ResetConsumerGroupOffsetTest.java ===============================
# kafka-consumer-groups --reset-offsets through `jetlink group set-offsets GROUP ... --json`;
# produceConsumeAndShutdown is a produce of 100 records (small ones: the test's are 100 kB)
# and `jetlink topic consume --group`, which commits what it read. The cluster's clock is
# the tests' ManualClock (2026-01-01T00:00:00Z): the records' times and "now".

@pytest.fixture
def engine(jl, cli_clock):
    """The Kafka API of the CLI's cluster `local`, on the CLI's clock."""
    d = DataDir(jl.data)
    yield Kafka(d.open(), cli_clock)
    d.close()


def produce(engine: Kafka, topic: str, count: int, partitions: int = 1) -> None:
    for p in range(partitions):
        engine.produce(topic, [(None, b"x")] * (count // partitions), partition=p)


def produce_consume_and_shutdown(jl, engine: Kafka, topic: str, group: str,
                                 partitions: int = 1) -> None:
    if topic not in engine.topic_names():
        engine.create_topic(topic, partitions)
    produce(engine, topic, 100, partitions)
    ok(jl("topic", "consume", topic, "--group", group, "--from-beginning"))


def reset(jl, group: str, *args: str) -> dict[tuple[str, int], int]:
    """The new offsets `group set-offsets` reports, by (topic, partition)."""
    rows = json.loads(ok(jl("group", "set-offsets", group, *args, "--json")).stdout)
    return {(row["topic"], row["partition"]): row["new_offset"] for row in rows}


# The scenarios with --all-topics: (test, options, records produced after the consumer
# shut down, seconds the clock moves before the reset, the offset)
RESET_ALL_TOPICS = [
    ("testResetOffsetsByDuration", ["--by-duration", "PT1M"], 0, 0, 0),
    # (the time the test's consumer takes: more than 0.1 s)
    ("testResetOffsetsByDurationToEarliest", ["--by-duration", "PT0.1S"], 0, 1, 100),
    ("testResetOffsetsToEarliest", ["--to-earliest"], 0, 0, 0),
    ("testResetOffsetsToLatest", ["--to-latest"], 100, 0, 200),
    ("testResetOffsetsToCurrentOffset", ["--to-current"], 100, 0, 100),
    ("testResetOffsetsToSpecificOffset", ["--to-offset", "1"], 0, 0, 1),
    ("testResetOffsetsShiftPlus", ["--shift-by", "50"], 100, 0, 150),
    ("testResetOffsetsShiftMinus", ["--shift-by", "-50"], 100, 0, 50),
    ("testResetOffsetsShiftByLowerThanEarliest", ["--shift-by", "-150"], 100, 0, 0),
    ("testResetOffsetsShiftByHigherThanLatest", ["--shift-by", "150"], 100, 0, 200),
]


@pytest.mark.parametrize(("test", "options", "more", "seconds", "offset"), RESET_ALL_TOPICS,
                         ids=[c[0] for c in RESET_ALL_TOPICS])
def test_reset_offsets_all_topics(jl, engine, cli_clock, test, options, more, seconds,
                                  offset):
    topic, group = "foo-all", "test.group-all"
    produce_consume_and_shutdown(jl, engine, topic, group)
    produce(engine, topic, more)
    cli_clock.advance_s(seconds)
    expected = {(topic, 0): offset}
    assert reset(jl, group, "--all-topics", *options, "--execute") == expected
    assert engine.committed(group) == expected


# testResetOffsetsToLocalDateTime: a day ago, without a zone (Utils.getDateTime reads UTC)
def test_reset_offsets_to_local_date_time(jl, engine, cli_clock):
    produce_consume_and_shutdown(jl, engine, "foo-local", "test.group-local")
    yesterday = datetime.fromtimestamp(cli_clock.now_ns() / 1e9, UTC) - timedelta(days=1)
    text = yesterday.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]
    expected = {("foo-local", 0): 0}
    assert reset(jl, "test.group-local", "--all-topics", "--to-datetime", text,
                 "--execute") == expected
    assert engine.committed("test.group-local") == expected


# testResetOffsetsToZonedDateTime: 50 records, the checkpoint, 50 records; the checkpoint
# with its zone (the test's system zone: +05:30 here)
def test_reset_offsets_to_zoned_date_time(jl, engine, cli_clock):
    engine.create_topic("foo-zoned", 1)
    produce(engine, "foo-zoned", 50)
    cli_clock.advance_s(1)
    checkpoint = datetime.fromtimestamp(cli_clock.now_ns() / 1e9,
                                        timezone(timedelta(hours=5, minutes=30)))
    cli_clock.advance_s(1)
    produce(engine, "foo-zoned", 50)
    ok(jl("topic", "consume", "foo-zoned", "--group", "test.group-zoned", "--from-beginning"))
    text = checkpoint.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "+05:30"
    expected = {("foo-zoned", 0): 50}
    assert reset(jl, "test.group-zoned", "--all-topics", "--to-datetime", text,
                 "--execute") == expected
    assert engine.committed("test.group-zoned") == expected


# testResetOffsetsNotExistingGroup
def test_reset_offsets_not_existing_group(jl, engine):
    engine.create_topic("foo-missing", 1)
    assert reset(jl, "missing.group", "--all-topics", "--to-current", "--execute") == {}
    assert engine.committed("missing.group") == {}


# testResetOffsetsExistingTopic: a group with no committed offset, --to-offset 50 with
# --dry-run (nothing committed), without --dry-run or --execute, and with --execute. Kafka's
# tool only plans without --execute; jetlink's --execute is the default (it writes), so that
# step comes after the dry run here and commits.
def test_reset_offsets_existing_topic(jl, engine):
    engine.create_topic("foo-existing", 1)
    produce(engine, "foo-existing", 100)
    args = ["--topic", "foo-existing", "--to-offset", "50"]
    expected = {("foo-existing", 0): 50}
    assert reset(jl, "new.group", *args, "--dry-run") == expected
    assert engine.committed("new.group") == {}
    assert reset(jl, "new.group", *args) == expected
    assert engine.committed("new.group") == expected
    assert reset(jl, "new.group", *args, "--execute") == expected
    assert engine.committed("new.group") == expected


# testResetOffsetsByDurationFallbackToLatestWhenNoRecords
def test_reset_offsets_by_duration_fallback_to_latest_when_no_records(jl, engine):
    engine.create_topic("foo-empty", 1)
    expected = {("foo-empty", 0): 0}
    assert reset(jl, "test.group-empty", "--topic", "foo-empty", "--by-duration", "PT1M",
                 "--execute") == expected
    assert engine.committed("test.group-empty") == expected


# testResetOffsetsToEarliestOnOneTopic / OnTopics: --topic per topic
@pytest.mark.parametrize("topics", [["foo-one"], ["foo-1", "foo-2"]])
def test_reset_offsets_to_earliest_on_topics(jl, engine, topics):
    for topic in topics:
        produce_consume_and_shutdown(jl, engine, topic, "test.group-topics")
    expected = {(topic, 0): 0 for topic in topics}
    args = [arg for topic in topics for arg in ("--topic", topic)]
    assert reset(jl, "test.group-topics", *args, "--to-earliest", "--execute") == expected
    assert engine.committed("test.group-topics") == expected


# testResetOffsetsToEarliestOnOneTopicAndPartition / OnTopicsAndPartitions: TOPIC:1 of
# two-partition topics; partition 0 keeps its committed offset
@pytest.mark.parametrize("topics", [["foo-onep"], ["foo-p1", "foo-p2"]])
def test_reset_offsets_to_earliest_on_topics_and_partitions(jl, engine, topics):
    for topic in topics:
        produce_consume_and_shutdown(jl, engine, topic, "test.group-parts", partitions=2)
    prior = engine.committed("test.group-parts")
    assert prior == {(topic, p): 50 for topic in topics for p in (0, 1)}
    args = [arg for topic in topics for arg in ("--topic", f"{topic}:1")]
    expected = {(topic, 1): 0 for topic in topics}
    assert reset(jl, "test.group-parts", *args, "--to-earliest", "--execute") == expected
    assert engine.committed("test.group-parts") == {**prior, **expected}


# testResetOffsetsExportImportPlanSingleGroupArg: --export's topic,partition,offset lines read
# back by --from-file. (The test's export has no --execute: the tool only plans; jetlink's
# plan-only run is --dry-run.)
def test_reset_offsets_export_import_plan_single_group_arg(jl, engine):
    produce_consume_and_shutdown(jl, engine, "foo-exp", "test.group-exp", partitions=2)
    r = ok(jl("group", "set-offsets", "test.group-exp", "--all-topics", "--to-offset", "2",
              "--export", "--dry-run"))
    assert (r.stdout, r.stderr) == ("foo-exp,0,2\nfoo-exp,1,2\n\n", "")
    plan = jl.tmp / "reset.csv"
    plan.write_text(r.stdout)
    assert reset(jl, "test.group-exp", "--all-topics", "--from-file", str(plan),
                 "--dry-run") == {("foo-exp", 0): 2, ("foo-exp", 1): 2}
    assert engine.committed("test.group-exp") == {("foo-exp", 0): 50, ("foo-exp", 1): 50}


# testResetOffsetsExportImportPlan, its single --group import of the group,topic,partition,
# offset file that the two-group export writes (jetlink's set-offsets takes one group: the
# export of several --group and their import are left out, as are the ...SelectedGroups,
# ...AllGroups and ...AllTopicsAllGroups tests, which reset several groups in one run)
def test_reset_offsets_export_import_plan_one_group_of_the_file(jl, engine):
    produce_consume_and_shutdown(jl, engine, "foo-t1", "test.group-g1", partitions=2)
    produce_consume_and_shutdown(jl, engine, "foo-t2", "test.group-g2", partitions=2)
    plan = jl.tmp / "reset.csv"
    plan.write_text("test.group-g1,foo-t1,0,2\ntest.group-g1,foo-t1,1,2\n"
                    "test.group-g2,foo-t2,0,2\ntest.group-g2,foo-t2,1,2\n")
    assert reset(jl, "test.group-g1", "--all-topics", "--from-file", str(plan),
                 "--dry-run") == {("foo-t1", 0): 2, ("foo-t1", 1): 2}


# === clients/.../common/utils/UtilsTest.java getDateTime ======================================
# (jetlink's --to-datetime reader, cli/group.py). shouldAcceptValidDateFormats formats
# new Date() with each pattern in the system's zone: a fixed instant here, in three zones.
INSTANT_MS = 1_604_925_296_789  # 2020-11-09T12:34:56.789Z
HOUR_MS = 3_600_000
VALID_DATE_FORMATS = [
    # UTC
    ("yyyy-MM-dd'T'HH:mm:ss.SSS", "2020-11-09T12:34:56.789", INSTANT_MS),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "2020-11-09T12:34:56.789+0000", INSTANT_MS),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSX", "2020-11-09T12:34:56.789Z", INSTANT_MS),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSXX", "2020-11-09T12:34:56.789Z", INSTANT_MS),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2020-11-09T12:34:56.789Z", INSTANT_MS),
    # +08:00 (a time without a zone is read as UTC: getDateTime appends Z)
    ("yyyy-MM-dd'T'HH:mm:ss.SSS", "2020-11-09T20:34:56.789", INSTANT_MS + 8 * HOUR_MS),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "2020-11-09T20:34:56.789+0800", INSTANT_MS),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSX", "2020-11-09T20:34:56.789+08", INSTANT_MS),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSXX", "2020-11-09T20:34:56.789+0800", INSTANT_MS),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2020-11-09T20:34:56.789+08:00", INSTANT_MS),
    # +05:30 (one X drops the half hour: the time read is 30 minutes later)
    ("yyyy-MM-dd'T'HH:mm:ss.SSS", "2020-11-09T18:04:56.789", INSTANT_MS + 11 * HOUR_MS // 2),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "2020-11-09T18:04:56.789+0530", INSTANT_MS),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSX", "2020-11-09T18:04:56.789+05", INSTANT_MS + HOUR_MS // 2),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSXX", "2020-11-09T18:04:56.789+0530", INSTANT_MS),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2020-11-09T18:04:56.789+05:30", INSTANT_MS),
]


@pytest.mark.parametrize(("pattern", "text", "ms"), VALID_DATE_FORMATS,
                         ids=[c[1] for c in VALID_DATE_FORMATS])
def test_utils_accepts_valid_date_formats(pattern, text, ms):
    assert _datetime_ms(text) == ms


FORM = ("expected YYYY-MM-DDTHH:mm:SS.sss (the milliseconds too), UTC, or with Z or an offset "
        "such as +02:00")

# shouldThrowOnInvalidDateFormatOrNullTimestamp (its null timestamp left out: a command
# line's value is never null). Kafka: "Unparseable date", and "It does not contain a 'T'
# according to ISO8601 format" for the pattern without a T.
INVALID_DATE_FORMATS = [
    ("yyyy-MM-dd'T'HH:mm:ss.X", "2020-11-09T12:34:56.Z", FORM),
    ("yyyy-MM-dd'T'HH:mm:ss.X", "2020-11-09T20:34:56.+08", FORM),
    ("yyyy-MM-dd HH:mm:ss", "2020-11-09 12:34:56",
     f"it does not contain a 'T' according to ISO8601 format: {FORM}"),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSSSSSSS", "2020-11-09T12:34:56.123456789", FORM),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSSSS", "2020-11-09T12:34:56.123456", FORM),
    ("yyyy-MM-dd'T'HH:mm:ss", "2020-11-09T12:34:56", FORM),
]


@pytest.mark.parametrize(("pattern", "text", "why"), INVALID_DATE_FORMATS,
                         ids=[c[1] for c in INVALID_DATE_FORMATS])
def test_utils_throws_on_invalid_date_formats(pattern, text, why):
    with pytest.raises(UsageError) as exc:
        _datetime_ms(text)
    assert str(exc.value) == f"invalid value for --to-datetime: {text!r}: {why}"
