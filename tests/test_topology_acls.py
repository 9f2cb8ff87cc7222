"""Kafka ACLs in topology files (``[acls.<key>]``, ``authorizer`` of a kafka cluster):
validated, planned, applied, exported and pruned like the other Kafka objects; the ACLs a
link's ACL sync or `dr fence` created are never exported nor pruned."""

from __future__ import annotations

import json
import textwrap

import pytest
from helpers import doc, ok

from jetlink.core.kafka.acls import AclBinding, AclStore
from jetlink.core.store import DataDir

FILE = """
[clusters.kw]
kind = "kafka"
authorizer = true

[topics.orders]
cluster = "kw"

[acls.app-reads-orders]
cluster = "kw"
principal = "User:app"
operation = "Read"
resource_name = "orders"

[acls.app-groups]
cluster = "kw"
principal = "User:app"
operation = "READ"
resource_type = "group"
resource_name = "app"
pattern_type = "prefixed"
"""

READ_ORDERS = AclBinding("TOPIC", "orders", "LITERAL", "User:app", "*", "READ", "ALLOW")
READ_GROUPS = AclBinding("GROUP", "app", "PREFIXED", "User:app", "*", "READ", "ALLOW")


def write(jl, text, name="t.toml"):
    path = jl.tmp / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def acls(jl, cluster="kw"):
    dd = DataDir(jl.data)
    try:
        return AclStore(dd.open(cluster)).find()
    finally:
        dd.close()


def test_apply_export_round_trip_and_prune(jl):
    path = write(jl, FILE)
    r = ok(jl("apply", path, "-f"))
    assert "  + create acl User:app ALLOW READ TOPIC:orders in cluster kw\n" in r.stdout
    assert "  + create acl User:app ALLOW READ GROUP:app PREFIXED in cluster kw\n" in r.stdout
    assert acls(jl) == [READ_GROUPS, READ_ORDERS]
    exported = doc(jl("export", "-j"))
    assert exported["clusters"]["kw"] == {"kind": "kafka", "authorizer": True}
    assert exported["acls"] == {
        "User:app ALLOW READ GROUP:app PREFIXED": {
            "cluster": "kw", "principal": "User:app", "operation": "READ",
            "resource_type": "GROUP", "resource_name": "app", "pattern_type": "PREFIXED"},
        "User:app ALLOW READ TOPIC:orders": {
            "cluster": "kw", "principal": "User:app", "operation": "READ",
            "resource_name": "orders"}}
    again = write(jl, json.dumps(exported), "again.json")
    assert ok(jl("apply", again, "-f")).stdout.startswith("No changes: 4 objects")
    ok(jl("--cluster", "kw", "acls", "add", "--principal", "User:z", "--operation", "write",
          "--topic", "x"))
    plan = doc(jl("apply", path, "--prune", "--dry-run", "-j"))["plan"]
    assert plan["changes"] == [{"action": "delete", "kind": "acl", "cluster": "kw",
                                "name": "User:z ALLOW WRITE TOPIC:x"}]
    ok(jl("apply", path, "--prune", "-f"))
    assert acls(jl) == [READ_GROUPS, READ_ORDERS]


def test_acls_jetlink_made_are_neither_exported_nor_pruned(jl):
    ok(jl("apply", write(jl, FILE), "-f"))
    dd = DataDir(jl.data)
    fence = AclBinding("TOPIC", "orders", "LITERAL", "User:*", "*", "WRITE", "DENY")
    AclStore(dd.open("kw")).add([fence], owner="jetlink:fence")
    dd.close()
    assert len(doc(jl("export", "-j"))["acls"]) == 2
    ok(jl("apply", write(jl, FILE), "--prune", "-f"))
    assert fence in acls(jl)


def test_an_acl_needs_a_cluster_that_enforces_acls(jl):
    r = jl("apply", write(jl, FILE.replace("authorizer = true\n", "")), "-f")
    assert r.exit_code == 3
    assert ("acl app-reads-orders: cluster: acl User:app ALLOW READ TOPIC:orders in cluster "
            "kw: cluster kw has no authorizer, so it holds no ACLs: authorizer = true in "
            "[clusters.kw] (or jetlink cluster authorizer kw --enable) first "
            "(SECURITY_DISABLED 54)") in r.stdout + r.stderr
    assert not (jl.data / "kw.db").exists()


def test_authorizer_of_an_existing_cluster_is_an_update(jl):
    ok(jl("cluster", "add", "kw", "--kind", "kafka"))
    plan = doc(jl("apply", write(jl, FILE), "--dry-run", "-j"))["plan"]
    assert plan["changes"][0] == {"action": "update", "kind": "cluster", "cluster": "kw",
                                  "name": "kw", "diff": [{"field": "authorizer",
                                                          "from": False, "to": True}]}
    ok(jl("apply", write(jl, FILE), "-f"))
    assert doc(jl("cluster", "authorizer", "kw", "-j"))["authorizer"] is True


SETTINGS = FILE.replace("authorizer = true\n", """authorizer = true
super_users = ["User:admin", "User:ops"]
allow_everyone_if_no_acl_found = true
""")


def test_the_authorizers_settings_are_applied_exported_and_updated(jl):
    """super.users and allow.everyone.if.no.acl.found of a kafka cluster: applied with it,
    exported (the file applies elsewhere to the same settings), a change is an update of
    the cluster, a key left out leaves the setting as it is."""
    ok(jl("apply", write(jl, SETTINGS), "-f"))
    assert doc(jl("cluster", "authorizer", "kw", "-j")) == {
        "cluster": "kw", "authorizer": True, "super.users": "User:admin;User:ops",
        "allow.everyone.if.no.acl.found": True}
    exported = doc(jl("export", "-j"))
    assert exported["clusters"]["kw"] == {
        "kind": "kafka", "authorizer": True, "super_users": ["User:admin", "User:ops"],
        "allow_everyone_if_no_acl_found": True}
    other = jl.tmp / "other"
    ok(jl("--data-dir", str(other), "apply", write(jl, json.dumps(exported), "e.json"), "-f"))
    assert doc(jl("--data-dir", str(other), "export", "-j")) == exported
    changed = SETTINGS.replace('"User:admin", "User:ops"', '"User:ops"').replace(
        "allow_everyone_if_no_acl_found = true", "allow_everyone_if_no_acl_found = false")
    plan = doc(jl("apply", write(jl, changed), "--dry-run", "-j"))["plan"]
    assert plan["changes"] == [{"action": "update", "kind": "cluster", "cluster": "kw",
                                "name": "kw", "diff": [
                                    {"field": "super_users", "from": ["User:admin", "User:ops"],
                                     "to": ["User:ops"]},
                                    {"field": "allow_everyone_if_no_acl_found", "from": True,
                                     "to": False}]}]
    ok(jl("apply", write(jl, changed), "-f"))
    assert doc(jl("cluster", "authorizer", "kw", "-j")) == {
        "cluster": "kw", "authorizer": True, "super.users": "User:ops",
        "allow.everyone.if.no.acl.found": False}
    assert ok(jl("apply", write(jl, FILE), "-f")).stdout.startswith("No changes")


BAD = [
    ("every field's fault", """
[acls.bad]
cluster = "kw"
principal = "app"
operation = "Reed"
resource_name = "orders"
""", ["acl bad: principal: principal 'app' is not TYPE:NAME (e.g. User:alice, or User:* for "
      "every user)",
      "acl bad: operation: operation 'Reed' is not one of ALL, READ, WRITE, CREATE, DELETE, "
      "ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, "
      "CREATE_TOKENS, DESCRIBE_TOKENS (Kafka's names, in any case: the kafka-acls spellings "
      "Read, DescribeConfigs ... too)"]),
    ("operation the resource type does not take", """
[acls.bad]
cluster = "kw"
principal = "User:app"
operation = "Read"
resource_type = "cluster"
""", ["acl bad: operation: operation READ on a CLUSTER resource: ResourceType CLUSTER only "
      "supports operations [ALL, CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, "
      "IDEMPOTENT_WRITE, ALTER, DESCRIBE]"]),
    ("required and unknown", """
[acls.bad]
cluster = "kw"
principal = "User:a"
name = "orders"
""", ['acl bad: name: unknown key "name" in [acls.bad] (allowed: cluster, principal, '
      "operation, resource_type, resource_name, pattern_type, host, permission)",
      "acl bad: resource_name: resource_name is required",
      "acl bad: operation: operation is required"]),
    ("a 100,000-character name", """
[acls.bad]
cluster = "kw"
principal = "User:a"
operation = "READ"
resource_name = "%s"
""" % ("x" * 100_000), ["acl bad: resource_name: resource name of 100000 characters: at most "
                        "32767 (a Kafka protocol string)"]),
    ("twice", """
[acls.one]
cluster = "kw"
principal = "User:a"
operation = "READ"
resource_name = "orders"
[acls.two]
cluster = "kw"
principal = "User:a"
operation = "read"
resource_name = "orders"
""", ['acl two: name: duplicate definition: ACL "User:a ALLOW READ TOPIC:orders" in '
      'cluster "kw" is already defined by acl one']),
    ("authorizer of a nats cluster", """
[clusters.n]
authorizer = true
super_users = ["User:a"]
allow_everyone_if_no_acl_found = false
""", ['cluster n: authorizer: authorizer (a cluster that enforces Kafka ACLs) is for kind = '
      '"kafka" clusters',
      "cluster n: super_users: super_users (Kafka's super.users, principals the authorizer "
      'never refuses) is for kind = "kafka" clusters',
      "cluster n: allow_everyone_if_no_acl_found: allow_everyone_if_no_acl_found (Kafka's "
      'allow.everyone.if.no.acl.found) is for kind = "kafka" clusters']),
    ("authorizer settings of the wrong type", """
[clusters.k2]
kind = "kafka"
authorizer = "yes"
super_users = "User:a"
allow_everyone_if_no_acl_found = 1
""", ["cluster k2: authorizer: authorizer must be true or false, not 'yes'",
      'cluster k2: super_users: super_users must be an array of principals, e.g. '
      '["User:admin"]',
      "cluster k2: allow_everyone_if_no_acl_found: allow_everyone_if_no_acl_found must be "
      "true or false, not 1"]),
    ("a super user that is not a principal", """
[clusters.k2]
kind = "kafka"
super_users = ["User:a", "admin"]
""", ["cluster k2: super_users: super user 'admin' is not TYPE:NAME (e.g. User:admin)"]),
]


@pytest.mark.parametrize(("text", "expected"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_acls_are_problems_naming_the_field(jl, text, expected):
    head = '[clusters.kw]\nkind = "kafka"\nauthorizer = true\n'
    r = jl("validate", write(jl, head + text), "-j")
    assert r.exit_code == 3
    got = [f"{p['object']}: {p['field']}: {p['description']}"
           for p in json.loads(r.stdout)["problems"]]
    assert got == expected
    assert not jl.data.exists() or not list(jl.data.iterdir())


LINKED = """
[clusters.kw]
kind = "kafka"
authorizer = true

[clusters.ke]
kind = "kafka"

[topics.orders]
cluster = "kw"

[links.dr]
cluster = "ke"
source_cluster = "kw"

[mirror_topics.orders]
cluster = "ke"
link = "dr"
source_topic = "orders"

[acls.link-reads]
cluster = "kw"
principal = "User:ANONYMOUS"
operation = "Read"
resource_name = "orders"

[acls.link-describes-configs]
cluster = "kw"
principal = "User:ANONYMOUS"
operation = "DescribeConfigs"
resource_name = "orders"
"""


def test_the_acls_a_mirror_topic_needs_are_created_before_it(jl):
    """A link's principal needs READ and DESCRIBE_CONFIGS on a source topic that enforces
    ACLs: the file's ACLs are applied before its links and mirror topics (and an export of
    the result applies again on an empty data directory)."""
    r = ok(jl("apply", write(jl, LINKED), "-f"))
    applied = [line for line in r.stdout.splitlines() if line.startswith("Applied: ")]
    assert applied == [
        "Applied: create cluster ke", "Applied: create cluster kw",
        "Applied: create acl User:ANONYMOUS ALLOW DESCRIBE_CONFIGS TOPIC:orders in cluster kw",
        "Applied: create acl User:ANONYMOUS ALLOW READ TOPIC:orders in cluster kw",
        "Applied: create topic orders in cluster kw",
        "Applied: create link dr in cluster ke",
        "Applied: create mirror_topic orders in cluster ke"]
    mirror, = doc(jl("--cluster", "ke", "mirrors", "describe", "orders", "-j"))
    assert mirror["mirror_status"] == "ACTIVE"
    exported = jl.tmp / "exported.json"
    exported.write_text(ok(jl("export", "-j")).stdout)
    fresh = jl.tmp / "fresh"
    r = ok(jl("--data-dir", str(fresh), "apply", str(exported), "-f"))
    assert r.stdout.endswith("Applied: create mirror_topic orders in cluster ke\n")
    plan = doc(jl("apply", write(jl, LINKED), "--prune", "--dry-run", "-j"))["plan"]
    assert [c for c in plan["changes"] if c["action"] != "unchanged"] == []


def test_a_mirror_topic_the_planned_acls_do_not_allow_is_a_problem_before_anything(jl):
    """The check a mirror topic's creation makes (the link's principal needs READ and
    DESCRIBE_CONFIGS on the source topic), made over the ACLs the source will hold once the
    plan is applied: a problem (exit 3), nothing changed."""
    only_read = LINKED.split("[acls.link-describes-configs]")[0]
    r = jl("apply", write(jl, only_read), "-f")
    assert r.exit_code == 3
    assert (
        "mirror_topic orders: link: Cluster link 'dr' is not authorized to mirror source "
        "topic 'orders': its principal User:ANONYMOUS needs the ACLs READ and "
        "DESCRIBE_CONFIGS on the topic in source cluster kw, and lacks DESCRIBE_CONFIGS (ACLs "
        "match the resource, none allows User:ANONYMOUS DESCRIBE_CONFIGS from host 127.0.0.1) "
        "(TOPIC_AUTHORIZATION_FAILED 29)") in r.stdout + r.stderr
    assert not list(jl.data.iterdir())  # nothing applied: no cluster made
    # the link's own principal (its sasl.jaas.config) is the one asked for
    named = LINKED.replace('source_cluster = "kw"\n', 'source_cluster = "kw"\nconfigs = {'
                           '"sasl.jaas.config" = "org.apache.kafka.common.security.plain.'
                           'PlainLoginModule required username=\\"dr\\" password=\\"pw\\";"}\n')
    r = jl("apply", write(jl, named), "-f")
    assert r.exit_code == 3 and "its principal User:dr needs" in r.stdout + r.stderr
    ok(jl("apply", write(jl, named.replace("User:ANONYMOUS", "User:dr")), "-f"))
    # an ACL the same plan deletes (--prune) is gone for the mirror topic it would create
    dr = named.replace("User:ANONYMOUS", "User:dr")
    ok(jl("--data-dir", str(jl.tmp / "d2"), "apply", write(jl, dr.split("[links.dr]")[0] + dr[
        dr.index("[acls.link-reads]"):]), "-f"))
    r = jl("--data-dir", str(jl.tmp / "d2"), "apply", write(jl, dr.split(
        "[acls.link-describes-configs]")[0]), "--prune", "-f")
    assert r.exit_code == 3 and "and lacks DESCRIBE_CONFIGS" in r.stdout + r.stderr, r.stdout


def test_a_planned_super_user_may_mirror_without_acls(jl):
    """The link's principal a super user of the source (in the same plan): the mirror
    topic's authorization check passes without ACLs; without it, it is a problem."""
    bare = LINKED.split("[acls.link-reads]")[0]
    assert jl("apply", write(jl, bare), "--dry-run").exit_code == 3
    ok(jl("apply", write(jl, bare.replace("authorizer = true\n", 'authorizer = true\n'
                                          'super_users = ["User:ANONYMOUS"]\n', 1)), "-f"))
    assert [m["mirror_status"] for m in doc(jl("--cluster", "ke", "mirrors", "describe",
                                               "orders", "-j"))] == ["ACTIVE"]


_LINKED = """
[clusters.k1]
kind = "kafka"
{auth}
[clusters.k2]
kind = "kafka"
[topics.t1]
cluster = "k1"
[links.l1]
cluster = "k2"
source_cluster = "k1"
{link_configs}
[mirror_topics.t1]
cluster = "k2"
link = "l1"
{mirror_configs}
{acl}
"""


@pytest.mark.parametrize(("parts", "expected"), [
    ({"mirror_configs": 'configs = {"retention.ms" = "5"}'},
     ["mirror_topic t1: configs.retention.ms: Configuration retention.ms of a mirror topic is "
      "synced from its source topic and can not be set"]),
    ({"auth": "authorizer = true", "link_configs": 'configs = {"bogus" = "1"}'},
     ["link l1: configs.bogus: Unknown cluster link configuration 'bogus'"]),
    ({"auth": "authorizer = true",
      "acl": '[acls.a]\ncluster = "k1"\nprincipal = "app"\noperation = "READ"\n'
             'resource_name = "t1"'},
     ["acl a: principal: principal 'app' is not TYPE:NAME",
      "mirror_topic t1: link: Cluster link 'l1' is not authorized to mirror source topic"]),
], ids=["mirror-config", "link-config", "acl-principal"])
def test_apply_of_objects_with_problems_beside_a_mirror_topic_lists_them(jl, parts, expected):
    """The check that a mirror topic's link may read its source topic (the ACLs the plan
    leaves) skips the objects with problems of their own: apply lists every problem (exit
    3), as validate does, never a traceback; nothing is made."""
    text = _LINKED.format(**{"auth": "", "link_configs": "", "mirror_configs": "", "acl": "",
                             **parts})
    path = write(jl, text)
    r = jl("apply", path, "-f")
    assert r.exit_code == 3, (r.stdout, r.stderr)
    assert "Traceback" not in r.stdout + r.stderr
    for want in expected:
        assert f"t.toml: {want}" in r.stdout, (want, r.stdout)
    r = jl("apply", path, "-f", "-j")
    assert r.exit_code == 3 and len(json.loads(r.stdout)["plan"]["problems"]) == len(expected)
    assert jl("validate", path).exit_code == 3  # (its own checks: no ACLs of the plan)
    assert not (jl.data / "k1.db").exists()
