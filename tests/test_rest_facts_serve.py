"""Every answer of ``jetlink serve``, checked against Confluent's descriptions
(tests/restfacts): valid requests (the descriptions' examples first, on clusters and topics
named as in them) answer a declared success status with the declared document; invalid ones
(what the request schemas refuse) answer 400 with an ``Error`` document. An answer passes
when one description (Cloud's or the Platform's) declares it. A validate-only request leaves
the data directory byte for byte unchanged.

In process: Starlette's TestClient on ``create_app`` (Host 127.0.0.1, no token).
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import data_dir_bytes
from restfacts import OPERATIONS, match, response_problems

from jetlink.core.clock import SystemClock
from jetlink.core.kafka.acls import AclStore
from jetlink.core.kafka.links import Links
from jetlink.core.kafka.mirrors import Mirrors
from jetlink.core.kafka.topics import Kafka
from jetlink.core.store import DataDir

ROOT = "/kafka/v3/clusters"
C = f"{ROOT}/cluster-1"
L = f"{C}/links/link-1"
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def served(tmp_path):
    """Clusters cluster-1 (destination: link link-1 from cluster-2, mirrors topic-1 and
    topic-2; an authorizer, no ACL) and cluster-2 (topics topic-1, topic-2, topic-3; no
    authorizer) as the descriptions' examples name them; a TestClient on serve's
    application."""
    from starlette.testclient import TestClient

    from jetlink.cli.rest.server import create_app

    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    clock = SystemClock()
    dd = DataDir(data)
    try:
        dd.add_cluster("cluster-1", kind="kafka")
        dd.add_cluster("cluster-2", kind="kafka")
        AclStore(dd.open("cluster-1")).configure(enabled=True)
        src = Kafka(dd.open("cluster-2"), clock)
        for t in ("topic-1", "topic-2", "topic-3"):
            src.create_topic(t, 2)
        Links(dd, "cluster-1", clock).create("link-1", "cluster-2", {})
        m = Mirrors(dd, "cluster-1", clock)
        m.create("topic-1", "link-1")
        m.create("topic-2", "link-1")
        m.step()
    finally:
        dd.close()
    with TestClient(create_app(data), base_url="http://127.0.0.1") as client:
        client.data = data
        yield client


def call(client, method: str, path: str, query: dict[str, str] | None = None,
         body: Any = None) -> tuple[dict[str, Any], int, Any, list[str]]:
    """The operation, status, JSON document and, per description, the problems of the
    answer (an empty list for a description that declares it)."""
    resp = client.request(method, path, params=query, json=body,
                          headers=JSON if body is not None else None)
    doc = resp.json() if resp.content else None
    found = match(method, path)
    assert found is not None, (method, path)
    fact = found[0]
    ctype = resp.headers.get("content-type", "")
    problems = {s: response_problems(fact, resp.status_code, doc, s, content_type=ctype)
                for s in fact["sources"]}
    best = min(problems.values(), key=len)
    return fact, resp.status_code, doc, best


# -- valid requests: a declared success status and document --------------------------------

DESTINATION_LINK = {  # the descriptions' createKafkaLink example "destination_initiated_link"
    "source_cluster_id": "cluster-2",
    "configs": [
        {"name": "bootstrap.servers", "value": "cluster-2-bootstrap-server"},
        {"name": "acl.sync.enable", "value": "false"},
        {"name": "consumer.offset.sync.ms", "value": "30000"},
        {"name": "sasl.mechanism", "value": "PLAIN"},
        {"name": "security.protocol", "value": "SASL_SSL"},
        {"name": "sasl.jaas.config", "value": "org.apache.kafka.common.security.plain."
                                              "PlainLoginModule required username='k' "
                                              "password='s';"},
    ],
}

ACL_TOPIC = {"resource_type": "TOPIC", "resource_name": "topic-", "pattern_type": "PREFIXED",
             "principal": "User:alice", "host": "*", "operation": "ALL", "permission": "ALLOW"}
ACL_CLUSTER = {"resource_type": "CLUSTER", "resource_name": "kafka-cluster",
               "pattern_type": "LITERAL", "principal": "User:alice", "host": "*",
               "operation": "DESCRIBE", "permission": "DENY"}

VALID = [
    ("GET", ROOT, None, None),
    ("GET", C, None, None),
    ("GET", f"{C}/links", None, None),
    ("POST", f"{C}/links", {"link_name": "link-2"}, DESTINATION_LINK),
    ("POST", f"{C}/links", {"link_name": "link-3"}, {"source_cluster_id": "cluster-2"}),
    ("GET", L, None, None),
    ("GET", L, {"include_tasks": "true"}, None),
    ("GET", f"{L}/configs", None, None),
    ("GET", f"{L}/configs/consumer.offset.sync.ms", None, None),
    ("PUT", f"{L}/configs/consumer.offset.sync.ms", None, {"value": "300000"}),
    ("DELETE", f"{L}/configs/consumer.offset.sync.ms", None, None),
    ("PUT", f"{L}/configs:alter", None,
     {"data": [{"name": "acl.sync.ms", "operation": "DELETE"},
               {"name": "consumer.offset.sync.ms", "value": "60000"}]}),
    ("GET", f"{L}/mirrors", None, None),
    ("GET", f"{L}/mirrors", {"mirror_status": "ACTIVE"}, None),
    ("GET", f"{C}/links/-/mirrors", None, None),
    ("GET", f"{C}/links/-/mirrors", {"mirror_status": "PENDING_RESTORE"}, None),
    ("GET", f"{L}/mirrors/topic-1", None, None),
    ("POST", f"{L}/mirrors", None,  # the "generic_example", on this engine's configs
     {"source_topic_name": "topic-3", "replication_factor": 1}),
    ("POST", f"{L}/mirrors:pause", None, {"mirror_topic_names": ["topic-1", "topic-2"]}),
    ("POST", f"{L}/mirrors:resume", None, {"mirror_topic_name_pattern": ".*"}),
    ("POST", f"{L}/mirrors:promote", {"validate_only": "true"},
     {"mirror_topic_names": ["topic-1"]}),
    ("POST", f"{L}/mirrors:failover", None, {"mirror_topic_names": ["topic-2"]}),
    ("POST", f"{L}/mirrors:reverse-and-start-mirror", None, {"mirror_topic_names": ["topic-1"]}),
    ("POST", f"{L}/mirrors:reverse-and-pause-mirror", None, {"mirror_topic_names": ["topic-1"]}),
    ("POST", f"{L}/mirrors:truncate-and-restore",
     {"include_partition_level_truncation_data": "true"}, {"mirror_topic_names": ["topic-1"]}),
    ("POST", f"{L}/mirrors:promote-local-and-start-remote-mirror", None,
     {"mirror_topic_names": ["topic-1"]}),
    ("POST", f"{L}/mirrors:promote-local-and-pause-remote-mirror", None,
     {"mirror_topic_names": ["topic-1"]}),
    ("DELETE", L, {"force": "true"}, None),
    # ACLs: the descriptions' examples (TOPIC topic- PREFIXED, CLUSTER kafka-cluster DENY)
    ("GET", f"{C}/acls", None, None),
    ("GET", f"{C}/acls", {"principal": "User:alice"}, None),
    ("GET", f"{C}/acls", {"pattern_type": "MATCH"}, None),  # no name: every ACL, as Kafka's
    ("GET", f"{C}/acls", {"resource_type": "topic", "resource_name": "topic-1",
                          "pattern_type": "MATCH", "operation": "Read"}, None),
    ("POST", f"{C}/acls", None, ACL_TOPIC),
    ("POST", f"{C}/acls:batch", None, {"data": [ACL_TOPIC, ACL_CLUSTER]}),
    ("DELETE", f"{C}/acls", {**ACL_TOPIC}, None),
    ("DELETE", f"{C}/acls", {"resource_type": "ANY", "pattern_type": "ANY",
                             "operation": "ANY", "permission": "ANY"}, None),
]


@pytest.mark.parametrize(("method", "path", "query", "body"), VALID,
                         ids=lambda v: v if isinstance(v, str) else None)
def test_valid_request_answers_as_declared(served, method, path, query, body):
    fact, status, doc, problems = call(served, method, path, query, body)
    assert 200 <= status < 300, (fact["operation_id"], status, doc)
    assert problems == [], (fact["operation_id"], status, doc)


# -- invalid requests: 400 with an Error document -------------------------------------------

INVALID = [
    # createKafkaLink: a config entry without its required value
    ("POST", f"{C}/links", {"link_name": "link-4"},
     {"source_cluster_id": "cluster-2", "configs": [{"name": "acl.sync.enable"}]}),
    ("POST", f"{C}/links", None, {"source_cluster_id": "cluster-2"}),  # link_name required
    ("POST", f"{C}/links", {"link_name": "link-4"}, {"source_cluster_id": 2}),
    ("POST", f"{C}/links", {"link_name": "link-4", "validate_only": "maybe"},
     {"source_cluster_id": "cluster-2"}),
    ("POST", f"{C}/links", {"link_name": "link-4"},
     {"source_cluster_id": "cluster-2", "configs": [{"name": "acl.sync.ms", "value": 5000}]}),
    ("POST", f"{C}/links", {"link_name": "link-4"}, ["cluster-2"]),
    ("PUT", f"{L}/configs:alter", None, {"data": {"name": "acl.sync.ms"}}),
    ("PUT", f"{L}/configs:alter", None, {"data": [{"value": "1"}]}),
    ("PUT", f"{L}/configs:alter", None,
     {"data": [{"name": "acl.sync.ms", "value": "1000"}], "validate_only": "yes"}),
    ("PUT", f"{L}/configs/acl.sync.ms", None, {}),
    ("PUT", f"{L}/configs/acl.sync.ms", None, {"value": 1000}),
    ("GET", f"{L}/mirrors", {"mirror_status": "SLEEPING"}, None),
    ("POST", f"{L}/mirrors", None, {"mirror_topic_name": "topic-3"}),
    ("POST", f"{L}/mirrors", None, {"source_topic_name": "topic-3", "replication_factor": "3"}),
    ("POST", f"{L}/mirrors", None, {"source_topic_name": 3}),
    ("POST", f"{L}/mirrors:pause", None, {"mirror_topic_names": ["topic-1", 2]}),
    ("POST", f"{L}/mirrors:pause", None,
     {"mirror_topic_names": ["topic-1"], "mirror_topic_name_pattern": 5}),
    ("POST", f"{L}/mirrors:pause", None, {"mirror_topic_names": "topic-1"}),
    ("POST", f"{L}/mirrors:promote", {"validate_only": "1"}, {"mirror_topic_names": ["topic-1"]}),
    ("DELETE", L, {"force": "yes"}, None),
    # ACLs: hostile input
    ("GET", f"{C}/acls", {"resource_type": "USER"}, None),  # not in AclResourceType
    ("GET", f"{C}/acls", {"operation": "NOPE"}, None),
    ("GET", f"{C}/acls", {"permission": "UNKNOWN"}, None),
    ("POST", f"{C}/acls", None, {**ACL_TOPIC, "operation": "Nope"}),
    ("POST", f"{C}/acls", None, {**ACL_TOPIC, "principal": "alice"}),
    ("POST", f"{C}/acls", None, {**ACL_TOPIC, "resource_name": "t" * 100_000}),
    ("POST", f"{C}/acls", None, {**ACL_TOPIC, "resource_name": ""}),
    ("POST", f"{C}/acls", None, {**ACL_TOPIC, "resource_type": "ANY"}),
    ("POST", f"{C}/acls", None, {**ACL_TOPIC, "pattern_type": "MATCH"}),
    ("POST", f"{C}/acls", None, {**ACL_TOPIC, "permission": "ANY"}),
    ("POST", f"{C}/acls", None, {**ACL_CLUSTER, "resource_name": "topic-1"}),
    ("POST", f"{C}/acls", None, {k: v for k, v in ACL_TOPIC.items() if k != "host"}),
    ("POST", f"{C}/acls", None, {**ACL_TOPIC, "resource_type": "USER"}),
    ("POST", f"{C}/acls:batch", None, {"data": [ACL_TOPIC, {**ACL_TOPIC, "host": ""}]}),
    ("POST", f"{C}/acls:batch", None, ACL_TOPIC),
    ("DELETE", f"{C}/acls", {"resource_name": "topic-"}, None),  # resource_type required
    ("DELETE", f"{C}/acls", {"resource_type": "TOPIC", "pattern_type": "ANY",
                             "operation": "UNKNOWN", "permission": "ANY"}, None),
]


@pytest.mark.parametrize(("method", "path", "query", "body"), INVALID,
                         ids=lambda v: v if isinstance(v, str) else None)
def test_invalid_request_is_400_with_an_error(served, method, path, query, body):
    before = data_dir_bytes(served.data)
    fact, status, doc, problems = call(served, method, path, query, body)
    assert status == 400, (fact["operation_id"], status, doc)
    assert problems == [], (fact["operation_id"], status, doc)
    assert isinstance(doc["message"], str) and doc["message"]
    assert data_dir_bytes(served.data) == before  # refused: nothing changed


# -- validate-only: nothing changes ---------------------------------------------------------

VALIDATE_ONLY = [
    ("POST", f"{C}/links", {"link_name": "link-5", "validate_only": "true"},
     {"source_cluster_id": "cluster-2"}),
    ("PUT", f"{L}/configs:alter", {"validate_only": "true"},
     {"data": [{"name": "acl.sync.ms", "value": "1000"}]}),
    ("PUT", f"{L}/configs:alter", None,
     {"data": [{"name": "acl.sync.ms", "value": "1000"}], "validate_only": True}),
    ("POST", f"{L}/mirrors:failover", {"validate_only": "true"},
     {"mirror_topic_names": ["topic-1", "topic-2"]}),
    ("POST", f"{L}/mirrors:pause", {"validate_only": "true"},
     {"mirror_topic_name_pattern": "topic-.*"}),
    ("DELETE", L, {"force": "true", "validate_only": "true"}, None),
]


@pytest.mark.parametrize(("method", "path", "query", "body"), VALIDATE_ONLY,
                         ids=lambda v: v if isinstance(v, str) else None)
def test_validate_only_changes_no_byte(served, method, path, query, body):
    before = data_dir_bytes(served.data)
    fact, status, doc, problems = call(served, method, path, query, body)
    assert 200 <= status < 300 and problems == [], (fact["operation_id"], status, doc)
    assert data_dir_bytes(served.data) == before


def test_unknown_link_is_a_declared_error(served):
    fact, status, doc, problems = call(served, "GET", f"{C}/links/nope")
    assert status in (400, 404)
    assert isinstance(doc, dict) and isinstance(doc.get("error_code"), int)
    assert isinstance(doc.get("message"), str)


def test_observed_statuses_are_few_and_carry_their_evidence():
    """Where serve follows what Confluent's servers answer instead of the descriptions, the
    fact says so with its evidence; nothing else is accepted outside the descriptions."""
    observed = {op: fact["observed"] for op, fact in OPERATIONS.items() if fact["observed"]}
    assert set(observed) == {"deleteKafkaLink"}
    assert set(observed["deleteKafkaLink"]) == {204}
    assert "kafka_rest_router.go" in observed["deleteKafkaLink"][204]


# -- ACLs -----------------------------------------------------------------------------------


def _each_source(fact, status, doc):
    return {s: response_problems(fact, status, doc, s) for s in fact["sources"]}


def test_acls_created_listed_and_deleted_as_each_description_declares(served):
    """Created one by one and in a batch, listed (every AclData field, sorted as kafka-rest
    sorts), deleted by a filter: each answer passes every description that declares the
    operation, not only one."""
    fact, status, _doc, _ = call(served, "POST", f"{C}/acls", None, ACL_TOPIC)
    assert status == 201 and _each_source(fact, status, None) == {"cloud": [], "platform": []}
    fact, status, _doc, _ = call(served, "POST", f"{C}/acls:batch", None,
                                 {"data": [ACL_CLUSTER, ACL_TOPIC]})  # one exists: kept
    assert status == 201
    assert _each_source(fact, status, None) == {"cloud": [], "kafka-rest": []}
    fact, status, doc, _ = call(served, "GET", f"{C}/acls")
    assert status == 200 and _each_source(fact, status, doc) == {"cloud": [], "platform": []}
    assert doc["kind"] == "KafkaAclList"
    assert [{k: d[k] for k in ACL_TOPIC} for d in doc["data"]] == [ACL_CLUSTER, ACL_TOPIC]
    assert {d["cluster_id"] for d in doc["data"]} == {"cluster-1"}
    assert doc["data"][1]["metadata"]["self"] == (
        "http://127.0.0.1/kafka/v3/clusters/cluster-1/acls?resource_type=TOPIC&resource_name="
        "topic-&pattern_type=PREFIXED&principal=User%3Aalice&host=%2A&operation=ALL"
        "&permission=ALLOW")
    # MATCH: the ACLs that apply to topic topic-1 (the prefix topic-)
    _f, _s, doc, _ = call(served, "GET", f"{C}/acls", {"resource_type": "TOPIC",
                                                      "resource_name": "topic-1",
                                                      "pattern_type": "MATCH"})
    assert [d["resource_name"] for d in doc["data"]] == ["topic-"]
    # a search's self: kafka-rest's seven parameters, the enumerations by name, ANY unset
    _f, _s, doc, _ = call(served, "GET", f"{C}/acls", {"resource_type": "topic",
                                                      "operation": "all"})
    assert doc["metadata"]["self"] == (
        "http://127.0.0.1/kafka/v3/clusters/cluster-1/acls?resource_type=TOPIC&resource_name="
        "&pattern_type=ANY&principal=&host=&operation=ALL&permission=ANY")
    fact, status, doc, _ = call(served, "DELETE", f"{C}/acls", {
        "resource_type": "ANY", "pattern_type": "ANY", "operation": "ANY",
        "permission": "DENY"})
    assert status == 200 and _each_source(fact, status, doc) == {"cloud": [], "platform": []}
    assert [{k: d[k] for k in ACL_TOPIC} for d in doc["data"]] == [ACL_CLUSTER]
    _f, _s, doc, _ = call(served, "GET", f"{C}/acls")
    assert [d["resource_name"] for d in doc["data"]] == ["topic-"]


def test_a_delete_that_matches_nothing_answers_no_acl_and_changes_nothing(served):
    call(served, "POST", f"{C}/acls", None, ACL_TOPIC)
    before = data_dir_bytes(served.data)
    fact, status, doc, problems = call(served, "DELETE", f"{C}/acls", {
        "resource_type": "GROUP", "pattern_type": "ANY", "operation": "ANY",
        "permission": "ANY"})
    assert (status, doc, problems) == (200, {"data": []}, [])
    assert data_dir_bytes(served.data) == before


def test_a_refused_batch_creates_none_of_its_acls(served):
    fact, status, doc, problems = call(served, "POST", f"{C}/acls:batch", None,
                                       {"data": [ACL_TOPIC, {**ACL_TOPIC, "principal": "x"}]})
    assert (status, problems) == (400, [])
    assert doc["message"] == ("data[1]: principal 'x' is not TYPE:NAME (e.g. User:alice, or "
                              "User:* for every user)")
    assert call(served, "GET", f"{C}/acls")[2]["data"] == []


@pytest.mark.parametrize(("method", "query", "body", "text"), [
    ("GET", None, None, "No Authorizer is configured on cluster cluster-2"),
    ("POST", None, ACL_TOPIC, "No Authorizer is configured on cluster cluster-2"),
    ("DELETE", {"resource_type": "ANY", "pattern_type": "ANY", "operation": "ANY",
                "permission": "ANY"}, None, "No Authorizer is configured on cluster cluster-2"),
])
def test_a_cluster_without_an_authorizer_answers_security_disabled(served, method, query, body,
                                                                   text):
    """As Confluent's REST server answers Kafka's SecurityDisabledException: 400 with
    error_code 40002 (rest-utils KafkaExceptionMapper)."""
    before = data_dir_bytes(served.data)
    fact, status, doc, problems = call(served, method, f"{ROOT}/cluster-2/acls", query, body)
    assert (status, doc["error_code"], problems) == (400, 40002, [])
    assert doc["message"].startswith(text)
    assert data_dir_bytes(served.data) == before


def test_a_resource_type_rest_does_not_list_is_answered_unknown(served):
    """A USER binding (Kafka has the type, AclResourceType does not): UNKNOWN, as kafka-rest
    answers a type it does not know, and the answer stays within the closed enum."""
    from jetlink.core.kafka.acls import AclBinding

    dd = DataDir(served.data)
    try:
        AclStore(dd.open("cluster-1")).add([AclBinding.make(
            "USER", "alice", "LITERAL", "User:admin", "*", "ALL", "ALLOW")])
    finally:
        dd.close()
    fact, status, doc, _ = call(served, "GET", f"{C}/acls")
    assert status == 200 and _each_source(fact, status, doc) == {"cloud": [], "platform": []}
    assert [(d["resource_type"], d["resource_name"]) for d in doc["data"]] == [
        ("UNKNOWN", "alice")]


def test_a_pattern_whose_backtracking_explodes_is_refused_not_a_hang(served):
    """mirror_topic_name_pattern is matched in a child interpreter stopped after a bound:
    ``(a+)+`` against a 41-character mirror topic name (exponential backtracking) is a 400
    naming the pattern, and the server answers the next request."""
    from jetlink.cli.rest.server import PATTERN_SECONDS

    name = "a" * 40 + "-"
    dd = DataDir(served.data)
    try:
        Kafka(dd.open("cluster-2"), SystemClock()).create_topic(name, 1)
        m = Mirrors(dd, "cluster-1", SystemClock())
        m.create(name, "link-1")
    finally:
        dd.close()
    fact, status, doc, problems = call(served, "POST", f"{L}/mirrors:pause",
                                       {"validate_only": "true"},
                                       {"mirror_topic_name_pattern": "(a+)+"})
    assert status == 400 and doc["error_code"] == 40002, (status, doc)
    assert doc["message"] == (f"mirror_topic_name_pattern '(a+)+': matching it took longer "
                              f"than {PATTERN_SECONDS:g} s (its backtracking explodes): give a "
                              "simpler pattern or mirror_topic_names")
    fact, status, doc, problems = call(served, "POST", f"{L}/mirrors:pause",
                                       {"validate_only": "true"},
                                       {"mirror_topic_name_pattern": "a+-"})
    assert status == 200 and [d["mirror_topic_name"] for d in doc["data"]] == [name]
