"""Client principals (``--principal User:NAME``) on `topic produce|consume|create|describe`
and the `group` verbs of a Kafka cluster that enforces ACLs (core/kafka/authz.py): each
request authorized as Kafka's broker authorizes it; a refusal is the Kafka error on one
line, exit status 1, nothing produced, consumed or committed. Without --principal, or on a
cluster without an authorizer, nothing changes."""

from __future__ import annotations

import pytest
from helpers import doc, ok

NO_ACL = "no ACL matched the resource: allow.everyone.if.no.acl.found=false"


@pytest.fixture
def kw(jl):
    """Cluster kw enforces ACLs (super user User:admin); topic orders holds a, b."""
    ok(jl("cluster", "add", "kw", "--kind", "kafka", "--authorizer", "--super-users",
          "User:admin"))

    def run(*args, input=None):
        return jl("--cluster", "kw", *args, input=input)

    ok(run("topic", "create", "orders"))
    ok(run("topic", "produce", "orders", input="a\nb\n"))
    return run


def allow(kw, principal, *args):
    ok(kw("acls", "add", "--principal", principal, *args))


def refused(result, text):
    assert (result.exit_code, result.stdout) == (1, ""), (result.stdout, result.stderr)
    assert result.stderr == f"jetlink: error: {text}\n"


def log_end(kw):
    return doc(kw("topic", "describe", "orders", "-j"))["partitions"][0]["log_end_offset"]


def groups(kw):
    return [g["consumer_group_id"] for g in doc(kw("group", "ls", "-j"))]


def test_produce_needs_write_on_the_topic(kw):
    r = kw("topic", "produce", "orders", "x", "--principal", "User:bob")
    refused(r, f"User:bob is not authorized to WRITE topic orders: {NO_ACL} "
               "(TOPIC_AUTHORIZATION_FAILED 29)")
    assert log_end(kw) == 2  # nothing produced
    allow(kw, "User:bob", "--operation", "write", "--topic", "orders")
    r = ok(kw("topic", "produce", "orders", "x", "--principal", "User:bob"))
    assert r.stdout == "Produced 1 record to orders (partition 0, offset 2)\n"
    r = ok(kw("topic", "produce", "orders", "y", "--principal", "User:admin"))  # super user
    assert log_end(kw) == 4


def test_produce_needs_the_topic_s_metadata_too(kw):
    """A producer asks for the topic's metadata first (DESCRIBE, implied by WRITE): an
    explicit DENY DESCRIBE refuses it, as Kafka's broker refuses the Metadata request."""
    allow(kw, "User:bob", "--operation", "write", "--topic", "orders")
    allow(kw, "User:bob", "--operation", "describe", "--topic", "orders", "--deny")
    r = kw("topic", "produce", "orders", "x", "--principal", "User:bob")
    refused(r, "User:bob is not authorized to DESCRIBE topic orders: the DENY "
               "ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL) "
               "(principal=User:bob, host=*, operation=DESCRIBE, permissionType=DENY) matched "
               "(TOPIC_AUTHORIZATION_FAILED 29)")
    assert log_end(kw) == 2  # nothing produced


def test_consume_with_a_group_needs_read_on_the_topic_and_on_the_group(kw):
    allow(kw, "User:carol", "--operation", "read", "--topic", "orders")
    r = kw("topic", "consume", "orders", "--from-beginning", "-g", "app", "--principal",
           "User:carol")
    refused(r, f"User:carol is not authorized to READ group app: {NO_ACL} "
               "(GROUP_AUTHORIZATION_FAILED 30)")
    assert groups(kw) == []  # nothing committed
    r = ok(kw("topic", "consume", "orders", "--from-beginning", "--principal", "User:carol"))
    assert r.stdout == "a\nb\n"  # without a group: READ on the topic only
    allow(kw, "User:carol", "--operation", "read", "--group", "app")
    r = ok(kw("topic", "consume", "orders", "--from-beginning", "-g", "app", "--principal",
              "User:carol"))
    assert r.stdout == "a\nb\n"
    assert doc(kw("group", "describe", "app", "-j"))["lags"][0]["current_offset"] == 2


def test_consume_with_describe_only_reads_and_commits_nothing(kw):
    allow(kw, "User:dave", "--operation", "describe", "--topic", "orders")
    allow(kw, "User:dave", "--operation", "read", "--group", "app")
    r = kw("topic", "consume", "orders", "--from-beginning", "-g", "app", "--principal",
           "User:dave")
    refused(r, "User:dave is not authorized to READ topic orders: ACLs match the resource, "
               "none allows User:dave READ from host 127.0.0.1 (TOPIC_AUTHORIZATION_FAILED 29)")
    assert groups(kw) == []


def test_a_deny_wins_over_an_allow_for_everyone(kw):
    allow(kw, "User:*", "--operation", "read", "--topic", "orders")
    allow(kw, "User:eve", "--operation", "read", "--topic", "orders", "--deny")
    assert ok(kw("topic", "consume", "orders", "--from-beginning", "--principal",
                 "User:frank")).stdout == "a\nb\n"
    r = kw("topic", "consume", "orders", "--from-beginning", "--principal", "User:eve")
    refused(r, "User:eve is not authorized to READ topic orders: the DENY "
               "ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL) "
               "(principal=User:eve, host=*, operation=READ, permissionType=DENY) matched "
               "(TOPIC_AUTHORIZATION_FAILED 29)")


def test_group_verbs_need_what_kafka_consumer_groups_requests_need(kw):
    ok(kw("group", "set-offsets", "app", "--topic", "orders", "--to-offset", "1"))
    ok(kw("group", "set-offsets", "other", "--topic", "orders", "--to-offset", "1"))
    p = ("--principal", "User:gina")
    assert doc(kw("group", "ls", "-j", *p)) == []  # ListGroups: the groups it may DESCRIBE
    refused(kw("group", "describe", "app", *p),
            f"User:gina is not authorized to DESCRIBE group app: {NO_ACL} "
            "(GROUP_AUTHORIZATION_FAILED 30)")
    allow(kw, "User:gina", "--operation", "describe", "--group", "app")
    assert [g["consumer_group_id"] for g in doc(kw("group", "ls", "-j", *p))] == ["app"]
    assert doc(kw("group", "describe", "app", "-j", *p))["state"] == "Empty"
    refused(kw("group", "set-offsets", "app", "--topic", "orders", "--to-earliest", "--dry-run",
               *p),  # DESCRIBE on the group and on the topic
            f"User:gina is not authorized to DESCRIBE topic orders: {NO_ACL} "
            "(TOPIC_AUTHORIZATION_FAILED 29)")
    refused(kw("group", "set-offsets", "app", "--topic", "orders", "--to-earliest", *p),
            "User:gina is not authorized to READ group app: ACLs match the resource, none "
            "allows User:gina READ from host 127.0.0.1 (GROUP_AUTHORIZATION_FAILED 30)")
    # --all-topics of a group with no committed offset is no way around the group's ACL
    refused(kw("group", "set-offsets", "nobody", "--all-topics", "--to-earliest", *p),
            f"User:gina is not authorized to READ group nobody: {NO_ACL} "
            "(GROUP_AUTHORIZATION_FAILED 30)")
    allow(kw, "User:gina", "--operation", "read", "--group", "app", "--topic", "orders")
    ok(kw("group", "set-offsets", "app", "--topic", "orders", "--to-earliest", "--dry-run",
          *p))
    assert doc(kw("group", "describe", "app", "-j"))["lags"][0]["current_offset"] == 1
    ok(kw("group", "set-offsets", "app", "--topic", "orders", "--to-earliest", *p))
    assert doc(kw("group", "describe", "app", "-j"))["lags"][0]["current_offset"] == 0
    refused(kw("group", "rm", "app", "-f", *p),
            "Group 'app' could not be deleted due to: User:gina is not authorized to DELETE "
            "group app: ACLs match the resource, none allows User:gina DELETE from host "
            "127.0.0.1 (GROUP_AUTHORIZATION_FAILED 30)")
    allow(kw, "User:gina", "--operation", "delete", "--group", "app")
    ok(kw("group", "rm", "app", "-f", *p))
    assert groups(kw) == ["other"]
    allow(kw, "User:gina", "--operation", "describe", "--kafka-cluster")
    assert [g["consumer_group_id"] for g in doc(kw("group", "ls", "-j", *p))] == ["other"]


def test_all_topics_resets_only_the_topics_the_principal_may_describe(kw):
    """--all-topics resets the partitions OffsetFetch answers: a topic without DESCRIBE is
    left out of them (KafkaApis fetchAllOffsetsForGroup), not a refusal of the reset."""
    ok(kw("topic", "create", "secret"))
    ok(kw("group", "set-offsets", "app", "--topic", "orders", "--topic", "secret",
          "--to-offset", "0"))
    p = ("--principal", "User:carol")
    allow(kw, "User:carol", "--operation", "read", "--group", "app", "--topic", "orders")
    got = doc(kw("group", "set-offsets", "app", "--all-topics", "--to-latest", "-j", *p))
    assert [(r["topic"], r["new_offset"]) for r in got] == [("orders", 2)]
    assert {(o["topic_name"], o["current_offset"])
            for o in doc(kw("group", "describe", "app", "-j"))["lags"]} == {
        ("orders", 2), ("secret", 0)}


def test_group_rm_needs_delete_on_the_group_alone(kw):
    """DeleteGroups authorizes DELETE on the group and nothing else: a principal denied
    DESCRIBE deletes it (rm asked DESCRIBE first); one without DELETE is refused naming
    DELETE, for an unknown group too."""
    ok(kw("group", "set-offsets", "app", "--topic", "orders", "--to-offset", "1"))
    p = ("--principal", "User:erin")
    refused(kw("group", "rm", "nog", "-f", *p),
            "Group 'nog' could not be deleted due to: User:erin is not authorized to DELETE "
            f"group nog: {NO_ACL} (GROUP_AUTHORIZATION_FAILED 30)")
    allow(kw, "User:erin", "--operation", "delete", "--group", "app")
    ok(kw("acls", "add", "--principal", "User:erin", "--operation", "describe", "--group",
          "app", "--deny"))
    ok(kw("group", "rm", "app", "-f", *p))
    assert groups(kw) == []


def test_delete_offsets_needs_delete_on_the_group_and_read_on_each_topic(kw):
    """OffsetDelete (KafkaApis handleOffsetDeleteRequest): DELETE on the group refuses the
    whole request; a topic without READ is TOPIC_AUTHORIZATION_FAILED on its partitions
    while the others' offsets are deleted."""
    import json

    ok(kw("topic", "create", "pay"))
    ok(kw("group", "set-offsets", "app", "--topic", "orders", "--topic", "pay",
          "--to-offset", "0"))
    p = ("--principal", "User:gina")
    refused(kw("group", "delete-offsets", "app", "--topic", "orders", *p),
            f"User:gina is not authorized to DELETE group app: {NO_ACL} "
            "(GROUP_AUTHORIZATION_FAILED 30)")
    allow(kw, "User:gina", "--operation", "delete", "--group", "app")
    allow(kw, "User:gina", "--operation", "read", "--topic", "pay")
    r = kw("group", "delete-offsets", "app", "-t", "orders:0", "-t", "pay", "-j", *p)
    assert r.exit_code == 1 and json.loads(r.stdout)["partitions"] == [
        {"topic": "orders", "partition": 0, "error": {
            "error_code": 29, "error_name": "TOPIC_AUTHORIZATION_FAILED",
            "message": "Topic authorization failed."}},
        {"topic": "pay", "partition": 0, "error": None}]
    assert [(o["topic_name"], o["current_offset"])
            for o in doc(kw("group", "describe", "app", "-j"))["lags"]] == [("orders", 0)]


def test_a_groups_offsets_show_only_the_topics_the_principal_may_describe(kw):
    """OffsetFetch leaves out the partitions of topics without DESCRIBE, and their log end
    offsets need ListOffsets' DESCRIBE: a group describe (and ls) shows no offset, lag or
    log end of a topic the principal may not describe."""
    ok(kw("group", "set-offsets", "app", "--topic", "orders", "--to-offset", "1"))
    allow(kw, "User:eve", "--operation", "describe", "--group", "app")
    p = ("--principal", "User:eve")
    described = doc(kw("group", "describe", "app", "-j", *p))
    assert (described["state"], described["lags"]) == ("Empty", [])
    (listed,) = doc(kw("group", "ls", "-j", *p))
    assert listed["lags"] == []
    allow(kw, "User:eve", "--operation", "describe", "--topic", "orders")
    (lag,) = doc(kw("group", "describe", "app", "-j", *p))["lags"]
    assert (lag["topic_name"], lag["current_offset"], lag["log_end_offset"]) == ("orders", 1, 2)


def test_topic_describe_needs_describe_configs_as_kafka_topics_asks_it(kw):
    """kafka-topics --describe asks for the topic's configs (DescribeConfigs): without
    DESCRIBE_CONFIGS the whole describe fails, as the tool does."""
    ok(kw("topic", "alter", "orders", "-c", "retention.ms=12345"))
    allow(kw, "User:bob", "--operation", "write", "--topic", "orders")  # implies DESCRIBE
    refused(kw("topic", "describe", "orders", "--principal", "User:bob"),
            "User:bob is not authorized to DESCRIBE_CONFIGS topic orders: ACLs match the "
            "resource, none allows User:bob DESCRIBE_CONFIGS from host 127.0.0.1 "
            "(TOPIC_AUTHORIZATION_FAILED 29)")
    allow(kw, "User:bob", "--operation", "DescribeConfigs", "--topic", "orders")
    described = doc(kw("topic", "describe", "orders", "--principal", "User:bob", "-j"))
    assert described["configs"]["retention.ms"] == "12345"


def test_create_needs_create_on_the_cluster_or_the_topic(kw):
    refused(kw("topic", "create", "t1", "--principal", "User:hal"),
            f"User:hal is not authorized to CREATE topic t1: {NO_ACL} "
            "(TOPIC_AUTHORIZATION_FAILED 29)")
    allow(kw, "User:hal", "--operation", "create", "--topic", "t", "--prefixed")
    ok(kw("topic", "create", "t1", "--principal", "User:hal"))
    refused(kw("topic", "create", "x1", "--principal", "User:hal"),
            f"User:hal is not authorized to CREATE topic x1: {NO_ACL} "
            "(TOPIC_AUTHORIZATION_FAILED 29)")
    allow(kw, "User:hal", "--operation", "create", "--kafka-cluster")
    ok(kw("topic", "create", "x1", "--principal", "User:hal"))
    refused(kw("topic", "describe", "orders", "--principal", "User:hal"),
            f"User:hal is not authorized to DESCRIBE topic orders: {NO_ACL} "
            "(TOPIC_AUTHORIZATION_FAILED 29)")


def test_without_an_authorizer_or_a_principal_nothing_changes(jl, kw):
    ok(jl("cluster", "add", "plain", "--kind", "kafka"))
    ok(jl("--cluster", "plain", "topic", "create", "t", "--principal", "User:nobody"))
    ok(jl("--cluster", "plain", "topic", "produce", "t", "v", "--principal", "User:nobody"))
    assert ok(jl("--cluster", "plain", "topic", "consume", "t", "--from-beginning", "-g", "g",
                 "--principal", "User:nobody")).stdout == "v\n"
    assert ok(kw("topic", "consume", "orders", "--from-beginning")).stdout == "a\nb\n"


@pytest.mark.parametrize("principal", ["bob", "User:", ":bob", "User:" + "x" * 100_000])
def test_a_bad_principal_is_a_usage_error(kw, principal):
    r = kw("topic", "produce", "orders", "x", "--principal", principal)
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "principal" in r.stderr and "Traceback" not in r.stderr
    assert log_end(kw) == 2


def test_control_characters_in_a_name_are_shown_escaped(kw):
    """Kafka takes any string for a principal or a pattern: a table shows its control
    characters escaped (cli/output.py visible), one row per line, no terminal codes."""
    ok(kw("acls", "add", "--principal", "User:x\ny", "--operation", "read", "--topic",
          "t\x1b[31mRED"))
    out = ok(kw("acls", "ls")).stdout
    assert "\x1b" not in out and "t\\x1b[31mRED" in out and "User:x\\ny" in out
    # (the JSON keeps the names as they are)
    assert [(a["resource_name"], a["principal"]) for a in doc(kw("acls", "ls", "-j"))["data"]
            ] == [("t\x1b[31mRED", "User:x\ny")]
