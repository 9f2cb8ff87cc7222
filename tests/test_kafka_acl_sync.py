"""A cluster link's ACL sync (core/kafka/acl_sync.py): Confluent's acl.filters, what a sync
copies and deletes (only what the link created), its schedule (acl.sync.ms), the AclSync
task's state and errors, and a sync that goes on whatever the link's mirrors are."""

from __future__ import annotations

import json

import pytest

from jetlink.core.kafka.acl_sync import owner_of, parse_acl_filters, pending_acls
from jetlink.core.kafka.acls import AclBinding, AclFilter, AclStore
from jetlink.core.kafka.errors import KafkaError
from jetlink.core.kafka.links import Links
from jetlink.core.kafka.mirrors import STOPPED, Mirrors, pump_links
from jetlink.core.kafka.topics import Kafka

ALL = {"aclFilters": [{"resourceFilter": {"resourceType": "any", "patternType": "any"},
                       "accessFilter": {"operation": "any", "permissionType": "any"}}]}


def acl(name="orders", principal="User:alice", op="READ", rt="TOPIC", perm="ALLOW",
        pattern="LITERAL"):
    return AclBinding(rt, name, pattern, principal, "*", op, perm)


@pytest.fixture
def world(dd, clock):
    for name in ("west", "east"):
        dd.add_cluster(name, "kafka")
        AclStore(dd.open(name)).configure(enabled=True)
    # the link's principal (no sasl.jaas.config: User:ANONYMOUS) may read west's ACLs: a
    # super user there, so that the ACLs these tests compare are only their own
    AclStore(dd.open("west")).configure(super_users="User:ANONYMOUS")
    return dd, clock, AclStore(dd.open("west")), AclStore(dd.open("east"))


def make_link(dd, clock, filters=None, **extra):
    configs = {"acl.sync.enable": "true", "acl.filters": json.dumps(filters or ALL), **extra}
    Links(dd, "east", clock).create("L", "west", configs)


def task(dd, clock, name="AclSync"):
    return next(t.to_json() for t in Links(dd, "east", clock).tasks("L")
                if t.task_name == name)


def step(dd, clock, seconds=5):
    clock.advance_s(seconds)
    return pump_links(dd, clock)


def test_sync_copies_then_deletes_what_the_source_dropped(world):
    dd, clock, west, east = world
    west.add([acl(), acl("g1", rt="GROUP")])
    make_link(dd, clock)
    (rep,) = pump_links(dd, clock)
    assert rep.acls_synced == 2 and rep.to_json()["acls_synced"] == 2
    assert east.owned(owner_of("L")) == sorted([acl(), acl("g1", rt="GROUP")])
    assert east.authorize("User:alice", "READ", "TOPIC", "orders").allowed
    west.remove([AclFilter.make(resource_type="GROUP")])
    assert pump_links(dd, clock)[0].acls_synced == 0  # acl.sync.ms (5000) not passed yet
    assert len(east.find()) == 2
    assert step(dd, clock)[0].acls_synced == 1
    assert east.find() == [acl()]
    assert task(dd, clock) == {"task_name": "AclSync", "state": "ACTIVE", "errors": []}


def test_acls_the_link_did_not_create_are_never_touched(world):
    dd, clock, west, east = world
    mine = acl("orders", "User:ops", "WRITE")
    east.add([mine, acl()])  # acl() made on the destination by hand, also on the source
    west.add([acl()])
    make_link(dd, clock)
    pump_links(dd, clock)
    assert east.owned(owner_of("L")) == []  # it existed: not taken over
    west.remove([AclFilter()])
    step(dd, clock)
    assert east.find() == sorted([mine, acl()])


@pytest.mark.parametrize(("filters", "copied"), [
    ({"aclFilters": [{"accessFilter": {"principal": "User:alice"}}]},
     ["User:alice"]),
    ({"aclFilters": [{"resourceFilter": {"resourceType": "topic", "name": "orders"},
                      "accessFilter": {"permissionType": "DENY"}}]}, ["User:eve"]),
    ({"aclFilters": [{"resourceFilter": {"resourceType": "GROUP"}}]}, []),  # matches nothing
    ({"aclFilters": []}, []),
])
def test_filters_select_what_is_copied(world, filters, copied):
    dd, clock, west, east = world
    west.add([acl(), acl(principal="User:bob"), acl(principal="User:eve", perm="DENY")])
    make_link(dd, clock, filters)
    pump_links(dd, clock)
    assert [b.principal for b in east.find()] == copied
    assert task(dd, clock)["state"] == "ACTIVE"


def test_source_without_authorizer_is_the_tasks_error_until_it_has_one(world):
    dd, clock, west, east = world
    west.configure(enabled=False)
    make_link(dd, clock)
    pump_links(dd, clock)
    assert task(dd, clock) == {"task_name": "AclSync", "state": "IN_ERROR", "errors": [{
        "error_code": "SECURITY_DISABLED",
        "error_message": "No Authorizer is configured on cluster west: add it with jetlink "
                         "cluster authorizer west --enable"}]}
    west.configure(enabled=True)
    west.add([acl()])
    # fixed, but the next run is not due: the last run's error, said as that run's
    (rep,) = step(dd, clock, 2)
    assert rep.errors == [
        "ACL sync: No Authorizer is configured on cluster west: add it with jetlink cluster "
        "authorizer west --enable (its run 2s ago; the next in 3s, acl.sync.ms)"]
    (rep,) = step(dd, clock, 3)
    assert rep.errors == []
    assert task(dd, clock)["state"] == "ACTIVE"
    assert east.find() == [acl()]


def test_sync_belongs_to_the_link_whatever_its_mirrors(world):
    dd, clock, west, east = world
    make_link(dd, clock)
    west.add([acl("a")])
    pump_links(dd, clock)  # no mirror at all
    assert east.find() == [acl("a")]
    Kafka(dd.open("west"), clock).create_topic("orders", 1)
    m = Mirrors(dd, "east", clock)
    m.create("orders", "L")
    pump_links(dd, clock)
    m.failover(["orders"], "L")
    pump_links(dd, clock)
    assert m.describe("orders", "L").mirror_status == STOPPED
    west.add([acl("b")])
    step(dd, clock)
    assert east.find() == [acl("a"), acl("b")]


def test_a_paused_link_does_not_sync_and_a_deleted_link_leaves_its_acls(world):
    dd, clock, west, east = world
    make_link(dd, clock, **{"cluster.link.paused": "true"})
    west.add([acl()])
    step(dd, clock)
    assert east.find() == [] and task(dd, clock)["state"] == "LINK_PAUSED"
    Links(dd, "east", clock).resume("L")
    step(dd, clock)
    assert east.find() == [acl()]
    Links.open(dd, "east", clock).delete("L")
    assert east.find() == [acl()]
    # kept as ordinary ACLs: a link created later under that name, syncing from a source
    # that has none of them, never takes them for its own (a DENY among them included)
    assert east.owned(owner_of("L")) == []
    dd.add_cluster("north", "kafka")
    AclStore(dd.open("north")).configure(enabled=True, super_users="User:ANONYMOUS")
    Links(dd, "east", clock).create("L", "north", {"acl.sync.enable": "true",
                                                   "acl.filters": json.dumps(ALL)})
    step(dd, clock)
    assert east.find() == [acl()]


def test_pending_acls_is_what_the_next_sync_creates(world):
    dd, clock, west, east = world
    make_link(dd, clock)
    west.add([acl(), acl("g", rt="GROUP")])
    li = Links(dd, "east", clock).get("L")
    assert pending_acls(dd, dd.open("east"), "west", li.config) == sorted(
        [acl(), acl("g", rt="GROUP")])
    pump_links(dd, clock)
    assert pending_acls(dd, dd.open("east"), "west", li.config) == []
    east.configure(enabled=False)
    assert pending_acls(dd, dd.open("east"), "west", li.config) is None


HOSTILE = [
    ("{", "not a JSON document: Expecting property name enclosed in double quotes: line 1 "
          "column 2 (char 1)"),
    ('{"aclFilters": {}}', "aclFilters: expected a list of filters"),
    ('{"acl": []}', "acl: unknown field (the document has one field, aclFilters)"),
    ('{"aclFilters": [1]}',
     "aclFilters[0]: expected an object with resourceFilter and accessFilter"),
    ('{"aclFilters": [{"accessFilter": {"operation": "Reed"}}]}',
     "aclFilters[0].accessFilter.operation: operation 'Reed' is not one of ALL, READ, WRITE, "
     "CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, "
     "IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS, ANY (Kafka's names, in any case: "
     "the kafka-acls spellings Read, DescribeConfigs ... too)"),
    ('{"aclFilters": [{"accessFilter": {"principal": "alice"}}]}',
     "aclFilters[0].accessFilter.principal: principal 'alice' is not TYPE:NAME (e.g. "
     "User:alice, or User:* for every user)"),
    ('{"aclFilters": [{"resourceFilter": {"nme": "x"}}]}',
     "aclFilters[0].resourceFilter.nme: unknown field (fields: resourceType, name, "
     "patternType)"),
    ('{"aclFilters": [{"resourceFilter": {"name": 5}}]}',
     "aclFilters[0].resourceFilter.name: expected a string, not 5"),
    (json.dumps({"aclFilters": [{"resourceFilter": {"name": "x" * 100_000}}]}),
     "aclFilters[0].resourceFilter.name: resource name of 100000 characters: at most 32767 "
     "(a Kafka protocol string)"),
    (json.dumps({"aclFilters": [{"accessFilter": {"operation": "R" * 100_000}}]}),
     "aclFilters[0].accessFilter.operation: a value of 100000 characters is not one of "
     "Kafka's operation names"),
]


@pytest.mark.parametrize(("text", "why"), HOSTILE, ids=[w[:30] for _, w in HOSTILE])
def test_hostile_filters_are_one_line_naming_the_field(world, text, why):
    dd, clock, _west, _east = world
    with pytest.raises(KafkaError) as exc:
        parse_acl_filters(text)
    assert (exc.value.name, exc.value.field) == ("INVALID_CONFIG", "acl.filters")
    assert exc.value.description == f"Invalid value for configuration acl.filters: {why}"
    with pytest.raises(KafkaError):
        Links(dd, "east", clock).create("L", "west", {"acl.sync.enable": "true",
                                                      "acl.filters": text})
    assert Links(dd, "east", clock).names() == []


def test_any_matches_every_value_but_a_name_is_a_name():
    (f,) = parse_acl_filters({"aclFilters": [{"resourceFilter": {
        "resourceType": "ANY", "name": "any", "patternType": "Any"},
        "accessFilter": {"principal": "any", "host": "any", "operation": "any",
                         "permissionType": "any"}}]})
    assert f == AclFilter(name="any")
