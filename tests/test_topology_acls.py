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
      "CREATE_TOKENS, DESCRIBE_TOKENS (Kafka's names; the kafka-acls spellings Read, "
      "DescribeConfigs ... too)"]),
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
""", ['cluster n: authorizer: authorizer (a cluster that enforces Kafka ACLs) is for kind = '
      '"kafka" clusters']),
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
