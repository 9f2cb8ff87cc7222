"""A cluster link's principal and the source cluster's ACLs (core/kafka/authz.py): the
principal of the link's sasl.jaas.config, mirror creation (by hand and auto-create) needing
READ and DESCRIBE_CONFIGS on the source topic, a revoked or denied READ stopping the copy at
once and failing the mirror after cluster.link.retry.timeout.ms (Confluent's Mirror Topics
document), consumer offset sync needing DESCRIBE on the groups, `dr check` naming the ACL,
and client principals on the destination after a failover. The clock is the manual one."""

from __future__ import annotations

import json

import pytest
from helpers import doc, ok

MS = 1_000_000
SECRET = "s3cr3t-never-shown"
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
        f'username="linker" password="{SECRET}";')
ALL = json.dumps({"groupFilters": [{"name": "*", "patternType": "LITERAL",
                                    "filterType": "INCLUDE"}]})


@pytest.fixture
def w(jl, cli_clock):
    """west enforces ACLs (super user User:admin) and holds `orders` (3 records) and
    `clicks`; east holds link L from west as User:linker, retry timeout 10s."""
    ok(jl("cluster", "add", "west", "--kind", "kafka", "--authorizer", "--super-users",
          "User:admin"))
    ok(jl("cluster", "add", "east", "--kind", "kafka"))
    ok(west(jl, "topic", "create", "orders"))
    ok(west(jl, "topic", "create", "clicks"))
    ok(west(jl, "topic", "produce", "orders", "r{{Count}}", "--count", "3"))
    ok(east(jl, "links", "create", "L", "--source-cluster", "west", "-c",
            f"sasl.jaas.config={JAAS}", "-c", "cluster.link.retry.timeout.ms=10000"))
    jl.clock = cli_clock
    return jl


def west(jl, *args):
    return jl("--cluster", "west", *args)


def east(jl, *args):
    return jl("--cluster", "east", *args)


def grant(jl, *args):
    ok(west(jl, "acls", "add", "--principal", "User:linker", *args))


def mirror(jl, topic="orders"):
    return doc(east(jl, "mirrors", "describe", topic, "--link", "L", "-j"))[0]


def step(jl, code=0):
    """`jetlink replicate` on east: exit status 1 while a link reports an error."""
    r = east(jl, "replicate", "-j")
    assert r.exit_code == code, (r.exit_code, r.stdout, r.stderr)
    return json.loads(r.stdout)


def records(jl, topic="orders", cluster="east"):
    return jl("--cluster", cluster, "topic", "consume", topic, "--from-beginning"
              ).stdout.splitlines()


def groups(jl, *args):
    return [g["consumer_group_id"] for g in doc(east(jl, "group", "ls", "-j", *args))]


def test_the_link_principal_is_its_sasl_username_and_no_secret_is_shown(w):
    out = ok(east(w, "links", "describe", "L")).stdout
    assert out.splitlines()[-1] == "Principal on the source: User:linker"
    assert SECRET not in out
    # the secret is null on the Configs: line and in the table alike
    assert "Configs: cluster.link.retry.timeout.ms=10000,sasl.jaas.config=null" in out
    (row,) = [line for line in out.splitlines() if "sasl.jaas.config " in line]
    assert [cell.strip() for cell in row.split("│")[1:4]] == ["sasl.jaas.config", "null", "no"]
    d = doc(east(w, "links", "describe", "L", "-j"))
    assert d["principal"] == "User:linker" and SECRET not in json.dumps(d)
    scram = ('org.apache.kafka.common.security.scram.ScramLoginModule required '
             'password="x" username="scrammer";')
    ok(east(w, "links", "create", "S", "--source-cluster", "west", "-c",
            f"sasl.jaas.config={scram}"))
    ok(east(w, "links", "create", "N", "--source-cluster", "west"))
    assert doc(east(w, "links", "describe", "S", "-j"))["principal"] == "User:scrammer"
    assert doc(east(w, "links", "describe", "N", "-j"))["principal"] == "User:ANONYMOUS"


def test_mirror_creation_needs_read_and_describe_configs_on_the_source_topic(w):
    r = east(w, "mirrors", "create", "orders", "--link", "L")
    assert r.exit_code == 1
    assert r.stderr == (
        "jetlink: error: Cluster link 'L' is not authorized to mirror source topic 'orders': "
        "its principal User:linker needs the ACLs READ and DESCRIBE_CONFIGS on the topic in "
        "source cluster west, and lacks READ and DESCRIBE_CONFIGS (no ACL matched the "
        "resource: allow.everyone.if.no.acl.found=false) (TOPIC_AUTHORIZATION_FAILED 29)\n")
    grant(w, "--operation", "read", "--topic", "orders")
    r = east(w, "mirrors", "create", "orders", "--link", "L")
    assert r.exit_code == 1 and "and lacks DESCRIBE_CONFIGS (ACLs match the resource, none " \
        "allows User:linker DESCRIBE_CONFIGS from host 127.0.0.1)" in r.stderr
    assert ok(east(w, "topic", "ls", "-j")).stdout.strip() == "[]"  # nothing created
    grant(w, "--operation", "describe-configs", "--topic", "orders")
    assert ok(east(w, "mirrors", "create", "orders", "--link", "L")).stdout == \
        "Created topic orders.\n"
    ok(east(w, "replicate"))
    assert records(w) == ["r1", "r2", "r3"]


def test_a_revoked_read_stops_copying_at_once_and_fails_the_mirror_after_the_retry_timeout(w):
    grant(w, "--operation", "read", "--operation", "describe-configs", "--topic", "orders")
    ok(east(w, "mirrors", "create", "orders", "--link", "L"))
    ok(east(w, "replicate"))
    ok(west(w, "acls", "rm", "--principal", "User:linker", "--operation", "read", "--topic",
            "orders", "-f"))
    ok(west(w, "topic", "produce", "orders", "late"))
    [rep] = step(w, 1)["links"]
    assert rep["errors"] == [
        "orders: User:linker is not authorized to READ topic orders: ACLs match the "
        "resource, none allows User:linker READ from host 127.0.0.1; the link needs the ACL "
        "READ on topic orders in source cluster west"]
    assert records(w) == ["r1", "r2", "r3"]  # stopped at once
    m = mirror(w)
    assert (m["mirror_status"], m["mirror_topic_error"]) == ("ACTIVE",
                                                             "TOPIC_AUTHORIZATION_FAILED")
    line = ok(east(w, "mirrors", "describe", "orders", "--link", "L")).stdout.splitlines()[0]
    assert line.endswith("\tMirrorTopicError: TOPIC_AUTHORIZATION_FAILED")
    # restored before the retry timeout: it goes on
    w.clock.advance(9000 * MS)
    grant(w, "--operation", "read", "--topic", "orders")
    ok(east(w, "replicate"))
    assert records(w) == ["r1", "r2", "r3", "late"]
    assert (mirror(w)["mirror_status"], mirror(w)["mirror_topic_error"]) == ("ACTIVE",
                                                                             "NO_ERROR")
    # revoked again: FAILED once cluster.link.retry.timeout.ms passed (counted anew)
    ok(west(w, "acls", "rm", "--principal", "User:linker", "--operation", "read", "--topic",
            "orders", "-f"))
    step(w, 1)
    w.clock.advance(9999 * MS)
    assert mirror(w)["mirror_status"] == "ACTIVE"
    w.clock.advance(1 * MS)
    m = mirror(w)
    assert (m["mirror_status"], m["mirror_topic_error"]) == ("FAILED",
                                                             "TOPIC_AUTHORIZATION_FAILED")
    grant(w, "--operation", "read", "--topic", "orders")  # too late: FAILED stays
    assert mirror(w)["mirror_status"] == "FAILED"


def test_a_deny_acl_wins_and_dr_check_names_the_acl(w):
    ok(west(w, "acls", "add", "--principal", "User:*", "--operation", "read",
            "--operation", "describe-configs", "--topic", "orders"))
    ok(east(w, "mirrors", "create", "orders", "--link", "L"))
    ok(east(w, "replicate"))
    ok(west(w, "acls", "add", "--principal", "User:linker", "--operation", "read",
            "--topic", "orders", "--deny"))
    ok(west(w, "topic", "produce", "orders", "after-deny"))
    step(w, 1)
    assert records(w) == ["r1", "r2", "r3"]
    got = json.loads(east(w, "dr", "check", "-j").stdout)
    [m] = got["mirrors"]
    assert m["status"] == "CRITICAL"
    assert ("Link L cannot read source topic orders: User:linker is not authorized to READ "
            "topic orders: the DENY ResourcePattern(resourceType=TOPIC, name=orders, "
            "patternType=LITERAL) (principal=User:linker, host=*, operation=READ, "
            "permissionType=DENY) matched; the link needs the ACL READ on topic orders in "
            "source cluster west") in m["critical"]


def test_auto_create_respects_the_source_acls(w):
    grant(w, "--operation", "read", "--operation", "describe-configs", "--topic", "orders")
    topics = json.dumps({"topicFilters": [{"name": "*", "patternType": "LITERAL",
                                           "filterType": "INCLUDE"}]})
    ok(east(w, "links", "alter", "L", "-c", "auto.create.mirror.topics.enable=true", "-c",
            f"auto.create.mirror.topics.filters={topics}"))
    ok(east(w, "replicate"))
    assert [d["mirror_topic_name"] for d in doc(east(w, "mirrors", "ls", "-j"))] == ["orders"]
    grant(w, "--operation", "read", "--operation", "describe-configs", "--topic", "clicks")
    w.clock.advance(5000 * MS)  # topic.config.sync.ms: the next auto-create
    ok(east(w, "replicate"))
    assert [d["mirror_topic_name"] for d in doc(east(w, "mirrors", "ls", "-j"))] == [
        "clicks", "orders"]


def test_offset_sync_skips_and_reports_groups_the_link_may_not_describe(w):
    grant(w, "--operation", "read", "--operation", "describe-configs", "--topic", "orders")
    grant(w, "--operation", "describe", "--group", "allowed")
    for g in ("allowed", "hidden"):
        ok(west(w, "group", "set-offsets", g, "--topic", "orders", "--to-offset", "2"))
    ok(east(w, "links", "alter", "L", "-c", "consumer.offset.sync.enable=true", "-c",
            f"consumer.offset.group.filters={ALL}"))
    ok(east(w, "mirrors", "create", "orders", "--link", "L"))
    text = ("Consumer offsets of group 'hidden' not synced: the link's principal User:linker "
            "needs the ACL DESCRIBE on the group in source cluster west")
    assert groups(w) == ["allowed"]
    task = {t["task_name"]: t for t in doc(east(w, "links", "describe", "L", "-j"))["tasks"]}
    assert task["ConsumerOffsetSync"] == {"task_name": "ConsumerOffsetSync",
                                          "state": "IN_ERROR", "errors": [
                                              {"error_code": "GROUP_AUTHORIZATION_FAILED",
                                               "error_message": text}]}
    w.clock.advance(30000 * MS)  # consumer.offset.sync.ms: the next sync reports it again
    [rep] = step(w, 1)["links"]
    assert rep["errors"] == [text]
    grant(w, "--operation", "describe", "--group", "hidden")
    w.clock.advance(30000 * MS)  # consumer.offset.sync.ms
    step(w)
    assert groups(w) == ["allowed", "hidden"]
    task = {t["task_name"]: t for t in doc(east(w, "links", "describe", "L", "-j"))["tasks"]}
    assert task["ConsumerOffsetSync"]["state"] == "ACTIVE"


def _fail_over_then_alice_and_bob_consume(w):
    """Fail the mirror topic over on east; alice consumes it whole with group app; bob's
    consume (group app2) is refused with nothing printed: bob's result."""
    ok(east(w, "mirrors", "failover", "orders", "--link", "L"))
    r = east(w, "topic", "consume", "orders", "--from-beginning", "-g", "app",
             "--principal", "User:alice")
    assert (r.exit_code, r.stdout) == (0, "r1\nr2\nr3\n")
    r = east(w, "topic", "consume", "orders", "--from-beginning", "-g", "app2",
             "--principal", "User:bob")
    assert (r.exit_code, r.stdout) == (1, "")
    return r


def test_after_a_failover_only_principals_with_acls_on_the_destination_consume(w):
    grant(w, "--operation", "read", "--operation", "describe-configs", "--topic", "orders")
    ok(east(w, "mirrors", "create", "orders", "--link", "L"))
    ok(east(w, "replicate"))
    ok(w("cluster", "authorizer", "east", "--enable"))
    ok(east(w, "acls", "add", "--principal", "User:alice", "--operation", "read",
            "--topic", "orders", "--group", "app"))
    r = _fail_over_then_alice_and_bob_consume(w)
    assert r.stderr == ("jetlink: error: User:bob is not authorized to DESCRIBE topic orders: "
                        "ACLs match the resource, none allows User:bob DESCRIBE from host "
                        "127.0.0.1 (TOPIC_AUTHORIZATION_FAILED 29)\n")
    assert groups(w) == ["app"]  # app2 committed nothing
    assert doc(east(w, "group", "describe", "app", "-j"))["lags"][0]["current_offset"] == 3


def test_the_bulk_copy_needs_the_links_read_too(w):
    from jetlink.core.kafka.errors import KafkaError
    from jetlink.core.kafka.mirrors import Mirrors
    from jetlink.core.store import DataDir

    grant(w, "--operation", "read", "--operation", "describe-configs", "--topic", "orders")
    ok(east(w, "mirrors", "create", "orders", "--link", "L"))
    ok(west(w, "acls", "add", "--principal", "User:linker", "--operation", "read",
            "--topic", "orders", "--deny"))
    dd = DataDir(w.data)
    try:
        with pytest.raises(KafkaError) as err:
            Mirrors(dd, "east", w.clock).bulk_begin("orders", "L")
        assert err.value.name == "TOPIC_AUTHORIZATION_FAILED"
        assert str(err.value.message).startswith(
            "User:linker is not authorized to READ topic orders: the DENY")
    finally:
        dd.close()


def test_after_a_failover_principals_whose_acls_the_link_synced_consume(w, tmp_path):
    """The link copies west's ACLs (acl.sync); after the failover alice, whose ACLs were
    synced, consumes from the promoted topic on east; bob, who had none on west, is refused
    and nothing is consumed or committed for him."""
    grant(w, "--operation", "read", "--operation", "describe-configs", "--topic", "orders")
    grant(w, "--operation", "describe", "--kafka-cluster")  # ACL sync reads west's ACLs
    ok(west(w, "acls", "add", "--principal", "User:alice", "--operation", "read",
            "--topic", "orders", "--group", "app"))
    ok(w("cluster", "authorizer", "east", "--enable"))
    filters = tmp_path / "filters.json"
    filters.write_text('{"aclFilters":[{"accessFilter":{"principal":"User:alice"}}]}')
    ok(east(w, "links", "alter", "L", "-c", "acl.sync.enable=true",
            "--acl-filters-json-file", str(filters)))
    ok(east(w, "mirrors", "create", "orders", "--link", "L"))
    ok(east(w, "replicate"))
    synced = doc(east(w, "acls", "ls", "--principal", "User:alice", "-j"))["data"]
    assert sorted((a["resource_type"], a["resource_name"]) for a in synced) == [
        ("GROUP", "app"), ("TOPIC", "orders")]
    r = _fail_over_then_alice_and_bob_consume(w)
    assert "TOPIC_AUTHORIZATION_FAILED 29" in r.stderr
    assert groups(w) == ["app"]
