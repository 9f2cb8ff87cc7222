"""`jetlink dr check` on mirror topics whose link syncs ACLs (core/dr/readiness.py
``_grade_acl_sync``): the source's ACLs the DR side lacks are CRITICAL for the topic and the
groups its consumers use, WARNING for the others; sync off while the source enforces ACLs is
a WARNING."""

from __future__ import annotations

import json

import pytest
from helpers import ok

from jetlink.core.kafka.topics import Kafka
from jetlink.core.store import DataDir

ALL = '{"aclFilters":[{"resourceFilter":{"resourceType":"any"}}]}'


def check(jl):
    r = jl("dr", "check", "-j")
    [m] = json.loads(r.stdout)["mirrors"]
    return r.exit_code, m


@pytest.fixture
def kafka(jl, cli_clock):
    """west (ACLs enforced) holds topic orders, consumed by group G; east holds link L and
    the mirror orders."""
    ok(jl("cluster", "add", "west", "--kind", "kafka", "--authorizer"))
    ok(jl("cluster", "add", "east", "--kind", "kafka", "--authorizer"))
    ok(jl("--cluster", "west", "topic", "create", "orders"))
    # the link's principal (User:ANONYMOUS) may mirror orders and read west's ACLs
    ok(jl("--cluster", "west", "acls", "add", "--principal", "User:ANONYMOUS", "--operation",
          "read", "--operation", "describe-configs", "--topic", "orders"))
    ok(jl("--cluster", "west", "acls", "add", "--principal", "User:ANONYMOUS", "--operation",
          "describe", "--kafka-cluster"))
    dd = DataDir(jl.data)
    Kafka(dd.open("west"), cli_clock).commit("G", {("orders", 0): 0})
    dd.close()
    jl.clock = cli_clock
    return jl


def add(jl, *args):
    ok(jl("--cluster", "west", "acls", "add", "--principal", "User:app", *args))


def test_acls_missing_on_the_dr_side_are_graded(kafka):
    jl = kafka
    ok(jl("--cluster", "east", "links", "create", "L", "--source-cluster", "west", "-c",
          "acl.sync.enable=true", "-c", "acl.sync.ms=600000", "-c", f"acl.filters={ALL}"))
    ok(jl("--cluster", "east", "mirrors", "create", "orders", "--link", "L"))
    code, m = check(jl)
    assert "ACL sync current" in m["ok"]
    assert m["readiness"]["acls"] == {"acl_sync": True, "missing": 0,
                                      "missing_for_consumers": []}
    add(jl, "--operation", "read", "--topic", "other")  # not synced yet: acl.sync.ms
    code, m = check(jl)
    assert "1 other ACL the link's filters select not synced yet" in m["warning"]
    assert "critical" not in m
    add(jl, "--operation", "read", "--group", "G")
    add(jl, "--operation", "read", "--topic", "ord", "--prefixed")
    code, m = check(jl)
    assert code == 2
    assert m["critical"] == [
        "2 ACLs of the source for this topic or its consumers' groups not on the DR side yet: "
        "ResourcePattern(resourceType=GROUP, name=G, patternType=LITERAL) (principal=User:app, "
        "host=*, operation=READ, permissionType=ALLOW); ResourcePattern(resourceType=TOPIC, "
        "name=ord, patternType=PREFIXED) (principal=User:app, host=*, operation=READ, "
        "permissionType=ALLOW)"]
    assert m["readiness"]["acls"]["missing"] == 3
    jl.clock.advance_s(600)  # acl.sync.ms passes: the next link step syncs
    ok(jl("replicate"))
    code, m = check(jl)
    assert "ACL sync current" in m["ok"] and "critical" not in m


def test_sync_off_while_the_source_enforces_acls_warns(kafka):
    jl = kafka
    ok(jl("--cluster", "east", "links", "create", "L", "--source-cluster", "west"))
    ok(jl("--cluster", "east", "mirrors", "create", "orders", "--link", "L"))
    _code, m = check(jl)
    assert ("ACL sync off on link L while cluster west enforces ACLs: clients' ACLs are not "
            "on the DR side (acl.sync.enable)") in m["warning"]
    assert m["readiness"]["acls"] == {"acl_sync": False}
    ok(jl("cluster", "authorizer", "west", "--disable"))
    _code, m = check(jl)
    assert not any("ACL" in w for w in m["warning"])
    assert m["readiness"]["acls"] == {"acl_sync": False}
