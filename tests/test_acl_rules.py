"""Kafka's authorizer rules (core/kafka/acls.py ``decide``), as a table: the cases of Apache
Kafka's StandardAuthorizer (super users, DENY wins, implied operations for ALLOW only,
LITERAL / wildcard / PREFIXED patterns, hosts, ``User:*``, ``allow.everyone.if.no.acl.found``),
filters with ANY and MATCH, and the store's indexed lookup against a scan of every binding."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jetlink.core.errors import UsageError
from jetlink.core.kafka.acls import (
    AclBinding,
    AclFilter,
    AclStore,
    AuthorizerSettings,
    decide,
)

ON = AuthorizerSettings(enabled=True, super_users=("User:admin",))
OPEN = AuthorizerSettings(enabled=True, allow_everyone_if_no_acl_found=True)


def acl(spec: str) -> AclBinding:
    """``ALLOW User:alice READ TOPIC foo [PREFIXED] [host]``."""
    parts = spec.split()
    perm, principal, op, rtype, name = parts[:5]
    pattern = parts[5] if len(parts) > 5 else "LITERAL"
    host = parts[6] if len(parts) > 6 else "*"
    return AclBinding(rtype, name, pattern, principal, host, op, perm)


# (bindings, settings, principal, operation, resource (type, name), host, allowed, rule)
TABLE = [
    # super users and the operator
    (["DENY User:admin ALL TOPIC foo"], ON, "User:admin", "WRITE", ("TOPIC", "foo"), "1.1.1.1",
     True, "super user"),
    ([], ON, None, "DELETE", ("TOPIC", "foo"), "1.1.1.1", True, "operator"),
    ([], AuthorizerSettings(), "User:bob", "WRITE", ("TOPIC", "foo"), "1.1.1.1", True,
     "no authorizer"),
    # no binding matches the resource: allow.everyone.if.no.acl.found decides
    ([], ON, "User:bob", "READ", ("TOPIC", "foo"), "1.1.1.1", False, "no acl"),
    ([], OPEN, "User:bob", "READ", ("TOPIC", "foo"), "1.1.1.1", True, "no acl"),
    (["ALLOW User:bob READ TOPIC bar"], OPEN, "User:bob", "READ", ("TOPIC", "foo"), "1.1.1.1",
     True, "no acl"),
    (["ALLOW User:bob READ GROUP foo"], ON, "User:bob", "READ", ("TOPIC", "foo"), "1.1.1.1",
     False, "no acl"),
    # a binding on the resource for someone else: no longer "no acl"
    (["ALLOW User:alice READ TOPIC foo"], OPEN, "User:bob", "READ", ("TOPIC", "foo"),
     "1.1.1.1", False, "default deny"),
    (["ALLOW User:alice READ TOPIC foo"], ON, "User:alice", "READ", ("TOPIC", "foo"),
     "1.1.1.1", True, "allow"),
    (["ALLOW User:alice READ TOPIC foo"], ON, "User:alice", "WRITE", ("TOPIC", "foo"),
     "1.1.1.1", False, "default deny"),
    # DENY wins, User:* included
    (["ALLOW User:alice READ TOPIC foo", "DENY User:* READ TOPIC foo"], ON, "User:alice",
     "READ", ("TOPIC", "foo"), "1.1.1.1", False, "deny"),
    (["ALLOW User:* READ TOPIC foo"], ON, "User:carol", "READ", ("TOPIC", "foo"), "1.1.1.1",
     True, "allow"),
    (["ALLOW User:alice ALL TOPIC foo", "DENY User:alice WRITE TOPIC foo"], ON, "User:alice",
     "WRITE", ("TOPIC", "foo"), "1.1.1.1", False, "deny"),
    # implied operations: ALLOW only
    (["ALLOW User:alice READ TOPIC foo"], ON, "User:alice", "DESCRIBE", ("TOPIC", "foo"),
     "1.1.1.1", True, "allow"),
    (["ALLOW User:alice WRITE TOPIC foo"], ON, "User:alice", "DESCRIBE", ("TOPIC", "foo"),
     "1.1.1.1", True, "allow"),
    (["ALLOW User:alice DELETE TOPIC foo"], ON, "User:alice", "DESCRIBE", ("TOPIC", "foo"),
     "1.1.1.1", True, "allow"),
    (["ALLOW User:alice ALTER TOPIC foo"], ON, "User:alice", "DESCRIBE", ("TOPIC", "foo"),
     "1.1.1.1", True, "allow"),
    (["ALLOW User:alice CREATE TOPIC foo"], ON, "User:alice", "DESCRIBE", ("TOPIC", "foo"),
     "1.1.1.1", False, "default deny"),
    (["ALLOW User:alice ALTER_CONFIGS TOPIC foo"], ON, "User:alice", "DESCRIBE_CONFIGS",
     ("TOPIC", "foo"), "1.1.1.1", True, "allow"),
    (["ALLOW User:alice DESCRIBE TOPIC foo"], ON, "User:alice", "READ", ("TOPIC", "foo"),
     "1.1.1.1", False, "default deny"),
    (["ALLOW User:alice ALL TOPIC foo", "DENY User:alice READ TOPIC foo"], ON, "User:alice",
     "DESCRIBE", ("TOPIC", "foo"), "1.1.1.1", True, "allow"),
    (["ALLOW User:alice READ TOPIC foo", "DENY User:alice ALL TOPIC foo"], ON, "User:alice",
     "DESCRIBE", ("TOPIC", "foo"), "1.1.1.1", False, "deny"),
    # patterns: wildcard, prefixed, literal is exact
    (["ALLOW User:alice READ TOPIC *"], ON, "User:alice", "READ", ("TOPIC", "anything"),
     "1.1.1.1", True, "allow"),
    (["ALLOW User:alice READ TOPIC fo PREFIXED"], ON, "User:alice", "READ", ("TOPIC", "foo"),
     "1.1.1.1", True, "allow"),
    (["ALLOW User:alice READ TOPIC fo PREFIXED"], ON, "User:alice", "READ", ("TOPIC", "bar"),
     "1.1.1.1", False, "no acl"),
    (["ALLOW User:alice READ TOPIC fo"], ON, "User:alice", "READ", ("TOPIC", "foo"),
     "1.1.1.1", False, "no acl"),
    (["ALLOW User:alice READ TOPIC foo", "DENY User:alice READ TOPIC f PREFIXED"], ON,
     "User:alice", "READ", ("TOPIC", "foo"), "1.1.1.1", False, "deny"),
    (["DENY User:alice READ TOPIC *", "ALLOW User:alice READ TOPIC foo"], ON, "User:alice",
     "READ", ("TOPIC", "foo"), "1.1.1.1", False, "deny"),
    # hosts
    (["ALLOW User:alice READ TOPIC foo LITERAL 192.168.0.1"], ON, "User:alice", "READ",
     ("TOPIC", "foo"), "192.168.0.1", True, "allow"),
    (["ALLOW User:alice READ TOPIC foo LITERAL 192.168.0.1"], ON, "User:alice", "READ",
     ("TOPIC", "foo"), "10.0.0.1", False, "default deny"),
    (["DENY User:alice READ TOPIC foo LITERAL 10.0.0.1", "ALLOW User:alice READ TOPIC foo"],
     ON, "User:alice", "READ", ("TOPIC", "foo"), "192.168.0.1", True, "allow"),
    # other resource types
    (["ALLOW User:alice READ GROUP g"], ON, "User:alice", "READ", ("GROUP", "g"), "1.1.1.1",
     True, "allow"),
    (["ALLOW User:alice IDEMPOTENT_WRITE CLUSTER kafka-cluster"], ON, "User:alice",
     "IDEMPOTENT_WRITE", ("CLUSTER", "kafka-cluster"), "1.1.1.1", True, "allow"),
    (["ALLOW User:alice WRITE TRANSACTIONAL_ID tx PREFIXED"], ON, "User:alice", "WRITE",
     ("TRANSACTIONAL_ID", "tx-1"), "1.1.1.1", True, "allow"),
]


@pytest.mark.parametrize(("bindings", "conf", "principal", "op", "resource", "host",
                          "allowed", "rule"), TABLE)
def test_kafkas_decision(bindings, conf, principal, op, resource, host, allowed, rule):
    d = decide(conf, [acl(b) for b in bindings], principal, op, *resource, host)
    assert (d.allowed, d.rule) == (allowed, rule), d.reason()


def test_the_decision_names_the_binding_and_the_implication():
    d = decide(ON, [acl("ALLOW User:alice READ TOPIC foo")], "User:alice", "DESCRIBE",
               "TOPIC", "foo")
    assert d.reason() == (
        "the ALLOW ResourcePattern(resourceType=TOPIC, name=foo, patternType=LITERAL) "
        "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW) matched (READ "
        "implies DESCRIBE)")
    assert decide(ON, [], "User:bob", "READ", "TOPIC", "foo").reason() == (
        "no ACL matched the resource: allow.everyone.if.no.acl.found=false")


FILTERS = [
    (AclFilter(), ["a", "b", "c", "d", "e"]),
    (AclFilter(resource_type="GROUP"), ["e"]),
    (AclFilter(name="foo"), ["a", "b", "e"]),
    (AclFilter(name="foo", pattern_type="LITERAL"), ["a", "e"]),
    (AclFilter(name="foo", pattern_type="PREFIXED"), ["b"]),
    (AclFilter(name="foobar", pattern_type="MATCH", resource_type="TOPIC"), ["b", "c", "d"]),
    # MATCH with no name: every pattern (Kafka's ResourcePatternFilter, a null name)
    (AclFilter.make(pattern_type="MATCH", resource_type="TOPIC"), ["a", "b", "c", "d"]),
    (AclFilter(principal="User:bob"), ["c"]),
    (AclFilter(operation="WRITE", permission="DENY"), ["d"]),
]
NAMED = {"a": acl("ALLOW User:alice READ TOPIC foo"),
         "b": acl("ALLOW User:alice READ TOPIC foo PREFIXED"),
         "c": acl("ALLOW User:bob READ TOPIC *"),
         "d": acl("DENY User:alice WRITE TOPIC fo PREFIXED"),
         "e": acl("ALLOW User:alice READ GROUP foo")}


@pytest.mark.parametrize(("flt", "expected"), FILTERS)
def test_filters(flt, expected):
    assert sorted(k for k, b in NAMED.items() if flt.matches(b)) == expected


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"principal": "alice"}, "principal 'alice' is not TYPE:NAME (e.g. User:alice, or User:* "
                             "for every user)"),
    ({"principal": "User"}, "principal 'User' is not TYPE:NAME"),
    ({"operation": "Reed"}, "operation 'Reed' is not one of ALL, READ, WRITE"),
    ({"resource_type": "QUEUE"}, "resource type 'QUEUE' is not one of TOPIC, GROUP"),
    ({"name": "x" * 100_000}, "resource name of 100000 characters: at most 32767 (a Kafka "
                              "protocol string)"),
    ({"name": ""}, "a resource name must not be empty"),
    ({"pattern_type": "MATCH"}, "pattern type 'MATCH' is not one of LITERAL, PREFIXED"),
])
def test_hostile_bindings_are_one_clear_line(kwargs, message):
    base = {"resource_type": "TOPIC", "name": "foo", "pattern_type": "LITERAL",
            "principal": "User:alice", "host": "*", "operation": "Read", "permission": "Allow"}
    with pytest.raises(UsageError) as err:
        AclBinding.make(**{**base, **kwargs})
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)


def test_a_principal_with_an_empty_part_is_taken_and_warned_of():
    """SecurityUtils.parseKafkaPrincipal splits at the first ':' and takes empty parts:
    so does jetlink, with a warning that the ACL matches no client."""
    from jetlink.core.kafka.acls import binding_warnings

    base = {"resource_type": "TOPIC", "name": "foo", "pattern_type": "LITERAL",
            "host": "*", "operation": "Read", "permission": "Allow"}
    for principal, part in (("User:", "name"), (":alice", "type")):
        b = AclBinding.make(**base, principal=principal)
        assert b.principal == principal
        assert binding_warnings([b]) == [
            f"principal {principal!r} has an empty {part}: Kafka takes it, but no client "
            "authenticates as it, so this ACL matches no client"]


def test_kafka_tool_spellings_are_read():
    b = AclBinding.make("Topic", "foo", "Prefixed", "User:alice", "*", "DescribeConfigs",
                        "Deny")
    assert (b.resource_type, b.pattern_type, b.operation, b.permission) == (
        "TOPIC", "PREFIXED", "DESCRIBE_CONFIGS", "DENY")


_names = st.text(alphabet="fob*", min_size=1, max_size=4)
_bindings = st.builds(
    AclBinding, st.sampled_from(["TOPIC", "GROUP"]), _names,
    st.sampled_from(["LITERAL", "PREFIXED"]), st.sampled_from(["User:a", "User:b", "User:*"]),
    st.sampled_from(["*", "h1"]), st.sampled_from(["READ", "WRITE", "DESCRIBE", "ALL"]),
    st.sampled_from(["ALLOW", "DENY"]))


@settings(max_examples=60, deadline=None)
@given(st.lists(_bindings, max_size=12), st.sampled_from(["TOPIC", "GROUP"]),
       st.text(alphabet="fob", min_size=1, max_size=5),
       st.sampled_from(["READ", "WRITE", "DESCRIBE"]), st.sampled_from(["h1", "h2"]))
def test_the_store_reads_the_same_bindings_a_scan_would(tmp_path_factory, bindings, rtype,
                                                        name, op, host):
    from jetlink.core.store import DataDir

    dd = DataDir(tmp_path_factory.mktemp("acls"))
    try:
        dd.add_cluster("k", "kafka")
        store = AclStore(dd.open("k"))
        store.configure(enabled=True)
        store.add(bindings)
        indexed = store.authorize("User:a", op, rtype, name, host)
        scanned = decide(store.settings(), bindings, "User:a", op, rtype, name, host)
        assert (indexed.allowed, indexed.rule, indexed.binding) == (
            scanned.allowed, scanned.rule, scanned.binding)
    finally:
        dd.close()


def test_the_store_adds_once_removes_by_filter_and_keeps_owners_apart(tmp_path):
    from jetlink.core.store import DataDir

    dd = DataDir(tmp_path / "d")
    dd.add_cluster("k", "kafka")
    store = AclStore(dd.open("k"))
    a, b = NAMED["a"], NAMED["b"]
    assert store.add([a, b]) == [a, b]
    assert store.add([a]) == []  # exists: left as it is
    assert store.add([NAMED["c"]], owner="link:L") == [NAMED["c"]]
    assert store.find() == sorted([a, b, NAMED["c"]])
    assert store.remove([AclFilter()], owner="link:L") == [NAMED["c"]]
    assert store.remove([AclFilter(pattern_type="PREFIXED")]) == [b]
    assert store.find() == [a]
    dd.close()


def test_a_cluster_without_authorizer_answers_security_disabled(tmp_path):
    from jetlink.core.kafka.errors import KafkaError
    from jetlink.core.store import DataDir

    dd = DataDir(tmp_path / "d")
    dd.add_cluster("k", "kafka")
    with pytest.raises(KafkaError) as err:
        AclStore(dd.open("k")).require()
    assert (err.value.name, err.value.error_code) == ("SECURITY_DISABLED", 54)
    dd.close()


def test_a_remembered_decision_is_forgotten_when_the_bindings_change(tmp_path):
    """Decisions are remembered per view of the bindings; a change made here (the store's
    generation) or committed by another connection (PRAGMA data_version) makes a new view."""
    from jetlink.core.store import DataDir

    allow = AclBinding("TOPIC", "orders", "LITERAL", "User:a", "*", "READ", "ALLOW")
    deny = AclBinding("TOPIC", "orders", "LITERAL", "User:a", "*", "READ", "DENY")
    dd, other = DataDir(tmp_path / "d"), None
    try:
        dd.add_cluster("k", "kafka")
        store = AclStore(dd.open("k"))
        store.configure(enabled=True)
        store.add([allow])
        assert [store.authorize("User:a", "READ", "TOPIC", "orders").rule for _ in "ab"] == [
            "allow", "allow"]
        store.add([deny])  # this connection
        assert store.authorize("User:a", "READ", "TOPIC", "orders").rule == "deny"
        other = DataDir(tmp_path / "d")
        AclStore(other.open("k")).remove([AclFilter(permission="DENY")])  # another one
        assert store.authorize("User:a", "READ", "TOPIC", "orders").rule == "allow"
        AclStore(other.open("k")).configure(enabled=False)
        assert store.authorize("User:a", "READ", "TOPIC", "orders").rule == "no authorizer"
    finally:
        dd.close()
        if other is not None:
            other.close()


def test_a_view_remembers_a_bounded_number_of_decisions(tmp_path):
    from jetlink.core.kafka.acls import AclView
    from jetlink.core.store import DataDir

    dd = DataDir(tmp_path / "d")
    try:
        dd.add_cluster("k", "kafka")
        store = AclStore(dd.open("k"))
        store.configure(enabled=True)
        view = store.view()
        for i in range(AclView.MEMO + 10):
            assert view.authorize("User:a", "READ", "TOPIC", f"t{i}").rule == "no acl"
        assert 0 < len(view._memo) <= AclView.MEMO
        assert store.view() is view  # nothing changed: the same view
    finally:
        dd.close()
