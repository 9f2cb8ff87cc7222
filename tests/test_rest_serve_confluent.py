"""``jetlink serve`` against Confluent's descriptions (cli/rest/schemas.py; Cloud's
``kafkarest/v3/api/openapi.yaml`` of ccloud-sdk-go-v2 at b5d63ec4 and Platform's
``kafkarestv3/api/openapi.yaml`` of kafka-rest-sdk-go at 26451bd7): schema-invalid requests
refused with the Error body and changing nothing, ClusterData without ``controller``, DELETE
link's status, the descriptions' own createKafkaLink examples (connection settings stored,
secrets never shown), link config flags under both descriptions' names, the single link config
operations, truncate-and-restore, Platform's promote-local-and-start/pause-remote-mirror, and
every validate_only form leaving the data directory's bytes unchanged. In-process (Starlette's
TestClient over ``create_app``), exact statuses and bodies."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from helpers import data_dir_bytes

from jetlink.cli.rest.schemas import OPERATIONS
from jetlink.cli.rest.server import create_app
from jetlink.core.clock import ManualClock
from jetlink.core.kafka.links import LINK_CONFIG_DEFAULTS, Links
from jetlink.core.kafka.mirrors import Mirrors
from jetlink.core.kafka.topics import Kafka
from jetlink.core.store import DataDir

API = "http://127.0.0.1/kafka/v3/clusters"
ALL_GROUPS = json.dumps({"groupFilters": [
    {"name": "*", "patternType": "LITERAL", "filterType": "INCLUDE"}]})
SYNC = {"consumer.offset.sync.enable": "true", "consumer.offset.group.filters": ALL_GROUPS}
SECRET = "password='<Kafka API Secret>'"
JAAS = ("sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f"username='<Kafka API Key>' {SECRET};")
# Cloud's CreateLinkRequest example "destination_initiated_link" (its source cluster renamed
# to one of the data directory).
CLOUD_EXAMPLE = {"source_cluster_id": "west", "configs": [
    {"name": "bootstrap.servers", "value": "cluster-1-bootstrap-server"},
    {"name": "acl.sync.enable", "value": "false"},
    {"name": "consumer.offset.sync.ms", "value": "30000"},
    {"name": "sasl.mechanism", "value": "PLAIN"},
    {"name": "security.protocol", "value": "SASL_SSL"},
    {"name": "sasl.jaas.config", "value": JAAS},
]}
# Platform's "destination_initiated_link" example, likewise.
PLATFORM_EXAMPLE = {"source_cluster_id": "west", "configs": [
    {"name": "bootstrap.servers", "value": "cluster-1-bootstrap-server"},
    {"name": "acl.sync.enable", "value": "false"},
    {"name": "consumer.offset.sync.ms", "value": "30000"},
]}


@pytest.fixture
def clock():
    return ManualClock()


def build(data: Path, clock, *, reverse_link: bool = True) -> None:
    """west: topic orders (p0: a0..a6, p1: b0..b2), group G at 7 on p0; east: link L from
    west (offset sync of every group), mirror orders holding a0..a4 and b0..b2 (a5, a6 not
    yet copied: lag 2 on p0), G synced at 7; west: link L from east (the bidirectional pair)
    when ``reverse_link``; east: topic local."""
    dd = DataDir(data)
    dd.add_cluster("west", "kafka")
    dd.add_cluster("east", "kafka")
    wk = Kafka(dd.open("west"), clock)
    wk.create_topic("orders", 2)
    wk.produce("orders", [(None, f"a{i}".encode()) for i in range(5)], partition=0)
    wk.produce("orders", [(None, f"b{i}".encode()) for i in range(3)], partition=1)
    Kafka(dd.open("east"), clock).create_topic("local", 1)
    Links(dd, "east", clock).create("L", "west", SYNC)
    m = Mirrors(dd, "east", clock)
    m.create("orders", "L")
    m.step()
    wk.produce("orders", [(None, b"a5"), (None, b"a6")], partition=0)
    wk.commit("G", {("orders", 0): 7})
    m.sync_offsets("L")
    if reverse_link:
        Links(dd, "west", clock).create("L", "east", SYNC)
    dd.close()


@pytest.fixture
def served(tmp_path, clock):
    data = tmp_path / "data"
    build(data, clock)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*httpx2")
        from starlette.testclient import TestClient
    with TestClient(create_app(data, clock_factory=lambda: clock), base_url="http://127.0.0.1",
                    raise_server_exceptions=False) as client:
        client.data = data
        client.clock = clock
        yield client


def url(path: str) -> str:
    return "/kafka/v3/clusters" + path


def error(r, status: int, code: int) -> str:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    body = r.json()
    assert sorted(body) == ["error_code", "message"] and body["error_code"] == code, body
    return body["message"]


def status_of(served, cluster: str, topic: str) -> str:
    r = served.get(url(f"/{cluster}/links/L/mirrors/{topic}"))
    assert r.status_code == 200, r.text
    return r.json()["mirror_status"]


# == request validation ========================================================================

SCHEMA_REFUSALS = [
    # (method, path, query, body, message)
    ("PUT", "/east/links/L/configs:alter", {}, {"data": [{"name": "acl.sync.ms", "value": "1"}],
                                                "validate_only": "yes"},
     'validate_only in the request body of updateKafkaLinkConfigBatch is "yes": it must be a '
     "boolean"),
    ("PUT", "/east/links/L/configs:alter", {"validate_only": "yes"},
     {"data": [{"name": "acl.sync.ms", "value": "1"}]},
     'Query parameter validate_only="yes" of updateKafkaLinkConfigBatch: it must be a boolean, '
     "true or false"),
    ("PUT", "/east/links/L/configs:alter", {}, {"data": [{"name": "acl.sync.ms", "value": 1}]},
     "data[0].value in the request body of updateKafkaLinkConfigBatch is 1: it must be a "
     "string"),
    ("PUT", "/east/links/L/configs:alter", {}, {"data": [{"value": "1"}]},
     "data[0].name is missing in the request body of updateKafkaLinkConfigBatch: "
     "AlterConfigBatchRequestData_data requires name"),
    ("POST", "/east/links", {"link_name": "N"},
     {"source_cluster_id": "west", "configs": [{"name": "acl.sync.ms"}]},
     "configs[0].value is missing in the request body of createKafkaLink: ConfigData requires "
     "name, value"),
    ("POST", "/east/links", {"link_name": "N"}, {"source_cluster_id": 5},
     "source_cluster_id in the request body of createKafkaLink is 5: it must be a string"),
    ("POST", "/east/links", {"link_name": "N"},
     {"source_cluster_id": "west", "configs": {"acl.sync.ms": "1"}},
     'configs in the request body of createKafkaLink is {"acl.sync.ms": "1"}: it must be an '
     "array"),
    ("POST", "/east/links", {"link_name": "N", "validate_link": "no"},
     {"source_cluster_id": "west"},
     'Query parameter validate_link="no" of createKafkaLink: it must be a boolean, true or '
     "false"),
    ("POST", "/east/links", {}, {"source_cluster_id": "west"},
     "Query parameter link_name of createKafkaLink is required"),
    ("POST", "/east/links", {"link_name": ""}, {"source_cluster_id": "west"},
     'Query parameter link_name="" of createKafkaLink: it must be a non-empty string'),
    ("POST", "/east/links", {"link_name": "N"}, ["west"],
     'The request body of createKafkaLink is ["west"]: it must be an object'),
    ("POST", "/east/links/L/mirrors", {}, {"source_topic_name": 7},
     "source_topic_name in the request body of createKafkaMirrorTopic is 7: it must be a "
     "string"),
    ("POST", "/east/links/L/mirrors", {}, {"source_topic_name": "orders",
                                           "replication_factor": True},
     "replication_factor in the request body of createKafkaMirrorTopic is true: it must be an "
     "integer"),
    # an int32 of the schema: Java's range, the value shown cut at 80 characters
    ("POST", "/east/links/L/mirrors", {}, {"source_topic_name": "orders",
                                           "replication_factor": 2 ** 31},
     "replication_factor in the request body of createKafkaMirrorTopic is 2147483648: it must "
     "be an integer from -2,147,483,648 to 2,147,483,647"),
    ("POST", "/east/links/L/mirrors", {}, {"source_topic_name": "orders",
                                           "replication_factor": -(10 ** 100)},
     "replication_factor in the request body of createKafkaMirrorTopic is -"
     + "1" + "0" * 78 + "...: it must be an integer from -2,147,483,648 to 2,147,483,647"),
    ("POST", "/east/links/L/mirrors", {"validate_only": "true"}, {"source_topic_name": "x"},
     "Query parameter validate_only is not a parameter of createKafkaMirrorTopic (its "
     "parameters: none)"),
    ("POST", "/east/links/L/mirrors:pause", {},
     {"mirror_topic_names": ["orders"], "mirror_topic_name_pattern": 5},
     "mirror_topic_name_pattern in the request body of updateKafkaMirrorTopicsPause is 5: it "
     "must be a string"),
    ("POST", "/east/links/L/mirrors:pause", {}, {"mirror_topic_names": ["orders", 3]},
     "mirror_topic_names[1] in the request body of updateKafkaMirrorTopicsPause is 3: it must "
     "be a string"),
    ("POST", "/east/links/L/mirrors:failover", {}, {"mirror_topic_names": None},
     "mirror_topic_names in the request body of updateKafkaMirrorTopicsFailover is null: it "
     "must be an array"),
    ("POST", "/east/links/L/mirrors:promote-local-and-start-remote-mirror", {},
     {"mirror_topic_name_pattern": ".*"},
     "mirror_topic_names is missing in the request body of "
     "updateKafkaMirrorTopicsPromoteLocalAndStartRemoteMirror: AlterMirrorsRequestData "
     "requires mirror_topic_names"),
    ("POST", "/east/links/L/mirrors:promote-local-and-pause-remote-mirror", {},
     {"mirror_topic_names": ["orders"], "mirror_topic_name_pattern": ".*"},
     "mirror_topic_name_pattern in the request body of "
     "updateKafkaMirrorTopicsPromoteLocalAndPauseRemoteMirror is not a field of "
     "AlterMirrorsRequestData (its fields: mirror_topic_names)"),
    ("POST", "/east/links/L/mirrors:truncate-and-restore",
     {"include_partition_level_truncation_data": "1"}, {"mirror_topic_names": ["orders"]},
     'Query parameter include_partition_level_truncation_data="1" of '
     "updateKafkaMirrorTopicsTruncateAndRestoreMirror: it must be a boolean, true or false"),
    ("PUT", "/east/links/L/configs/acl.sync.ms", {}, {"value": 300000},
     "value in the request body of updateKafkaLinkConfig is 300000: it must be a string"),
    ("PUT", "/east/links/L/configs/acl.sync.ms", {}, {},
     "value is missing in the request body of updateKafkaLinkConfig: "
     "UpdateLinkConfigRequestData requires value"),
    ("DELETE", "/east/links/L", {"force": "yes"}, None,
     'Query parameter force="yes" of deleteKafkaLink: it must be a boolean, true or false'),
    ("GET", "/east/links/-/mirrors", {"mirror_status": "active"}, None,
     'Query parameter mirror_status="active" of listKafkaMirrorTopics: it must be one of '
     "ACTIVE, FAILED, LINK_FAILED, LINK_PAUSED, PAUSED, PENDING_STOPPED, SOURCE_UNAVAILABLE, "
     "STOPPED, PENDING_MIRROR, PENDING_SYNCHRONIZE, PENDING_SETUP_FOR_RESTORE, "
     "PENDING_RESTORE"),
    ("GET", "/east/links", {"page_token": "x"}, None,
     "Query parameter page_token is not a parameter of listKafkaLinks (its parameters: none)"),
    ("GET", "/east/links/L", {"include_tasks": "maybe"}, None,
     'Query parameter include_tasks="maybe" of getKafkaLink: it must be a boolean, true or '
     "false"),
    ("GET", "/east", {"verbose": "true"}, None,
     "Query parameter verbose is not a parameter of getKafkaCluster (its parameters: none)"),
    ("GET", "", {"verbose": "true"}, None,
     "Query parameter verbose is not a parameter of listKafkaClusters (its parameters: none)"),
]


@pytest.mark.parametrize(("method", "path", "query", "body", "message"), SCHEMA_REFUSALS,
                         ids=[f"{m} {p} {msg[:40]}" for m, p, _q, _b, msg in SCHEMA_REFUSALS])
def test_schema_invalid_requests_are_refused_and_change_nothing(served, method, path, query,
                                                                body, message):
    before = data_dir_bytes(served.data)
    r = served.request(method, url(path), params=query,
                       **({"json": body} if body is not None else {}))
    assert (r.status_code, r.json()) == (400, {"error_code": 400, "message": message})
    assert data_dir_bytes(served.data) == before


def test_a_parameter_given_twice_is_refused(served):
    r = served.put(url("/east/links/L/configs:alter?validate_only=true&validate_only=false"),
                   json={"data": [{"name": "acl.sync.ms", "value": "1"}]})
    assert (r.status_code, r.json()) == (400, {
        "error_code": 400, "message": "Query parameter validate_only of "
                                      "updateKafkaLinkConfigBatch is given more than once"})


def test_a_body_key_given_twice_is_refused_and_changes_nothing(served):
    """A body naming a key twice is refused (400), never acted on with the last value: a
    pause of ["orders"] then ["x"] pauses nothing."""
    before = data_dir_bytes(served.data)
    r = served.post(url("/east/links/L/mirrors:pause"), content=(
        b'{"mirror_topic_names":["orders"],"mirror_topic_names":["x"]}'),
        headers={"Content-Type": "application/json"})
    assert (r.status_code, r.json()) == (400, {
        "error_code": 400, "message": "Request body: mirror_topic_names is given more than "
                                      "once"})
    r = served.put(url("/east/links/L/configs:alter"), content=(
        b'{"data":[{"name":"acl.sync.ms","value":"1","name":"acl.sync.enable"}]}'),
        headers={"Content-Type": "application/json"})
    assert (r.status_code, r.json()["message"]) == (
        400, "Request body: name is given more than once")
    assert data_dir_bytes(served.data) == before


def test_validate_only_yes_in_the_body_changes_no_config(served):
    r = served.put(url("/east/links/L/configs:alter"), json={
        "data": [{"name": "acl.sync.ms", "value": "7000"}], "validate_only": "yes"})
    assert r.status_code == 400
    r = served.get(url("/east/links/L/configs/acl.sync.ms"))
    assert r.json()["value"] == "5000"
    # the body's boolean validate_only (Cloud) is a dry run; false applies
    for flag, want in ((True, "5000"), (False, "7000")):
        r = served.put(url("/east/links/L/configs:alter"), json={
            "data": [{"name": "acl.sync.ms", "value": "7000"}], "validate_only": flag})
        assert (r.status_code, r.content) == (204, b"")
        assert served.get(url("/east/links/L/configs/acl.sync.ms")).json()["value"] == want


def test_a_pattern_of_the_wrong_type_next_to_names_pauses_nothing(served):
    r = served.post(url("/east/links/L/mirrors:pause"),
                    json={"mirror_topic_names": ["orders"], "mirror_topic_name_pattern": 5})
    assert r.status_code == 400
    assert status_of(served, "east", "orders") == "ACTIVE"
    r = served.post(url("/east/links/L/mirrors:pause"),
                    json={"mirror_topic_names": ["orders"], "mirror_topic_name_pattern": ".*"})
    assert (r.status_code, r.json()) == (400, {
        "error_code": 400,
        "message": "Give mirror_topic_names or mirror_topic_name_pattern, not both"})
    assert status_of(served, "east", "orders") == "ACTIVE"


def test_every_operation_has_a_handler_and_a_route(served):
    from jetlink.cli.rest.server import HANDLERS

    assert set(OPERATIONS) - set(HANDLERS) == {"listKafkaClusters"}  # its own endpoint
    paths = {r.path for r in served.app.routes}
    assert {"/kafka/v3" + op.path for op in OPERATIONS.values()} == paths


# == clusters ==================================================================================


def test_cluster_data_leaves_controller_out(served):
    r = served.get(url("/east"))
    base = f"{API}/east"
    assert (r.status_code, r.json()) == (200, {
        "kind": "KafkaCluster",
        "metadata": {"self": base, "resource_name": "crn:///kafka=east"},
        "cluster_id": "east",
        "acls": {"related": f"{base}/acls"},
        "brokers": {"related": f"{base}/brokers"},
        "broker_configs": {"related": f"{base}/broker-configs"},
        "consumer_groups": {"related": f"{base}/consumer-groups"},
        "topics": {"related": f"{base}/topics"},
        "partition_reassignments": {"related": f"{base}/topics/-/partitions/-/reassignment"},
    })
    listed = served.get(url("")).json()["data"]
    assert all("controller" not in c for c in listed) and len(listed) == 2


def test_a_damaged_cluster_file_leaves_the_others_listed(served, capsys):
    """listKafkaClusters answers with every usable Kafka cluster; a damaged database (one
    unrelated file) is left out and said on the server's log, never a 500 for everyone."""
    (served.data / "junk.db").write_bytes(b"garbage, not SQLite\n" * 10)
    r = served.get(url(""))
    assert r.status_code == 200, r.text
    assert [c["cluster_id"] for c in r.json()["data"]] == ["east", "west"]
    assert "jetlink: warning: GET /kafka/v3/clusters: cluster junk left out: " in \
        capsys.readouterr().err
    assert served.get(url("/east/links")).status_code == 200


# == links =====================================================================================


def test_delete_link_answers_204_no_content(served):
    r = served.delete(url("/west/links/L"))
    assert (r.status_code, r.content) == (204, b"")
    assert error(served.get(url("/west/links/L")), 404, 404) == "Cluster link 'L' not found"


@pytest.mark.parametrize(("example", "sensitive"), [(CLOUD_EXAMPLE, True),
                                                    (PLATFORM_EXAMPLE, False)])
def test_the_descriptions_create_link_examples_are_accepted(served, example, sensitive):
    r = served.post(url("/east/links"), params={"link_name": "X"}, json=example)
    assert (r.status_code, r.content) == (204, b"")
    dd = DataDir(served.data)
    stored = Links(dd, "east", served.clock).get("X").config.values
    dd.close()
    assert stored == {e["name"]: e["value"] for e in example["configs"]
                      if e["name"] not in ("acl.sync.enable", "consumer.offset.sync.ms")
                      } | {"acl.sync.enable": "false", "consumer.offset.sync.ms": "30000"}
    listing = served.get(url("/east/links/X/configs"))
    assert listing.status_code == 200
    by_name = {d["name"]: d for d in listing.json()["data"]}
    assert sorted(by_name) == sorted({*LINK_CONFIG_DEFAULTS, *stored})
    assert by_name["bootstrap.servers"] == {
        "kind": "KafkaLinkConfigData",
        "metadata": {"self": f"{API}/east/links/X/configs/bootstrap.servers",
                     "resource_name": None},
        "cluster_id": "east", "name": "bootstrap.servers", "value": "cluster-1-bootstrap-server",
        "is_default": False, "is_read_only": False, "is_sensitive": False,
        "default": False, "read_only": False, "sensitive": False,
        "source": "DYNAMIC_CLUSTER_LINK_CONFIG", "synonyms": [], "link_name": "X"}
    if sensitive:
        jaas = {"kind": "KafkaLinkConfigData",
                "metadata": {"self": f"{API}/east/links/X/configs/sasl.jaas.config",
                             "resource_name": None},
                "cluster_id": "east", "name": "sasl.jaas.config", "value": None,
                "is_default": False, "is_read_only": False, "is_sensitive": True,
                "default": False, "read_only": False, "sensitive": True,
                "source": "DYNAMIC_CLUSTER_LINK_CONFIG", "synonyms": [], "link_name": "X"}
        assert by_name["sasl.jaas.config"] == jaas
        single = served.get(url("/east/links/X/configs/sasl.jaas.config"))
        assert (single.status_code, single.json()) == (200, jaas)
        assert by_name["security.protocol"]["value"] == "SASL_SSL"
    # the secret is in no answer
    for path in ("/east/links", "/east/links/X", "/east/links/X/configs",
                 "/east/links/X/configs/sasl.jaas.config"):
        assert SECRET not in served.get(url(path)).text


def test_link_ids_and_remote_clusters_are_refused_clearly(served):
    r = served.post(url("/east/links"), params={"link_name": "B"},
                    json={"remote_cluster_id": "west", "configs": [
                        {"name": "link.mode", "value": "BIDIRECTIONAL"}]})
    assert error(r, 400, 40002) == ("jetlink creates destination-initiated links only: name "
                                    "the source cluster with source_cluster_id")
    r = served.post(url("/east/links"), params={"link_name": "B"},
                    json={"source_cluster_id": "west", "cluster_link_id": "eEBkTffYSESld6EO898x3w"})
    assert error(r, 400, 40002) == ("cluster_link_id 'eEBkTffYSESld6EO898x3w': jetlink gives "
                                    "each link an id of its own; a link cannot be created with "
                                    "a given one")
    assert [d["link_name"] for d in served.get(url("/east/links")).json()["data"]] == ["L"]


# == single link configs =======================================================================


def test_single_link_config_get_put_delete(served):
    path = url("/east/links/L/configs/acl.sync.ms")
    r = served.get(path)
    assert (r.status_code, r.json()) == (200, {
        "kind": "KafkaLinkConfigData",
        "metadata": {"self": f"{API}/east/links/L/configs/acl.sync.ms", "resource_name": None},
        "cluster_id": "east", "name": "acl.sync.ms", "value": "5000",
        "is_default": True, "is_read_only": False, "is_sensitive": False,
        "default": True, "read_only": False, "sensitive": False,
        "source": "DEFAULT_CONFIG", "synonyms": [], "link_name": "L"})
    r = served.put(path, json={"value": "300000"})
    assert (r.status_code, r.content) == (204, b"")
    got = served.get(path).json()
    assert (got["value"], got["is_default"], got["default"], got["source"]) == (
        "300000", False, False, "DYNAMIC_CLUSTER_LINK_CONFIG")
    r = served.delete(path)
    assert (r.status_code, r.content) == (204, b"")
    got = served.get(path).json()
    assert (got["value"], got["is_default"], got["source"]) == ("5000", True, "DEFAULT_CONFIG")
    # an unset connection setting: known, empty, default
    got = served.get(url("/east/links/L/configs/ssl.truststore.password")).json()
    assert (got["value"], got["is_sensitive"], got["is_default"]) == (None, True, True)
    # a secret set through the single config PUT is never shown either
    r = served.put(url("/east/links/L/configs/ssl.truststore.password"), json={"value": "pw"})
    assert (r.status_code, r.content) == (204, b"")
    got = served.get(url("/east/links/L/configs/ssl.truststore.password")).json()
    assert (got["value"], got["is_sensitive"], got["is_default"]) == (None, True, False)


def test_single_link_config_errors(served):
    assert error(served.get(url("/east/links/L/configs/no.such")), 404, 404) == (
        "Config no.such cannot be found for cluster link L.")
    assert error(served.get(url("/east/links/X/configs/acl.sync.ms")), 404, 404) == (
        "Cluster link 'X' not found")
    assert error(served.put(url("/east/links/L/configs/acl.sync.ms"), json={"value": "soon"}),
                 400, 40002) == ("Invalid value soon for configuration acl.sync.ms: Not a "
                                 "number of type INT")
    assert error(served.put(url("/east/links/L/configs/cluster.link.prefix"),
                            json={"value": "p."}), 400, 40002).startswith(
        "Configuration 'cluster.link.prefix' cannot be altered")
    # kafka-rest's safe update and reset: the config must exist first (404), for the single
    # config's PUT and DELETE and for each name of the batch (nothing changed)
    before = data_dir_bytes(served.data)
    for r in (served.delete(url("/east/links/L/configs/no.such")),
              served.put(url("/east/links/L/configs/no.such"), json={"value": "1"}),
              served.put(url("/east/links/L/configs:alter"), json={"data": [
                  {"name": "acl.sync.ms", "value": "7000"}, {"name": "no.such", "value": "1"}]})):
        assert error(r, 404, 404) == "Config no.such cannot be found for cluster link L."
    assert data_dir_bytes(served.data) == before
    assert served.get(url("/east/links/L/configs/acl.sync.ms")).json()["value"] == "5000"
    assert error(served.delete(url("/east/links/X/configs/acl.sync.ms")), 404, 404) == (
        "Cluster link 'X' not found")


# == mirrors ===================================================================================


def _failover_east(served) -> None:
    r = served.post(url("/east/links/L/mirrors:failover"), json={"mirror_topic_names": ["orders"]})
    assert r.status_code == 200 and r.json()["data"][0]["error_code"] is None, r.text
    assert status_of(served, "east", "orders") == "STOPPED"


def _restored_entry(lags, truncation) -> dict:
    return {"kind": "AlterMirrorsData",
            "metadata": {"self": f"{API}/west/links/L/mirrors/orders", "resource_name": None},
            "mirror_topic_name": "orders", "error_code": None, "error_message": None,
            "mirror_lags": lags, "messages_truncated": 2,
            "partition_level_truncation_data": truncation,
            # west's G committed 7 on partition 0, now beyond its log end: clamped to it
            "clamps": [{"group": "G", "topic": "orders", "partition": 0, "from": 7, "to": 5}]}


TRUNCATION = [{"partition_id": 0, "offset_truncated_to": 5, "messages_truncated": 2},
              {"partition_id": 1, "offset_truncated_to": 3, "messages_truncated": 0}]


def test_truncate_and_restore(served):
    _failover_east(served)
    path = url("/west/links/L/mirrors:truncate-and-restore")
    # a dry run: the same numbers, no byte changed
    before = data_dir_bytes(served.data)
    r = served.post(path, params={"validate_only": "true",
                                  "include_partition_level_truncation_data": "true"},
                    json={"mirror_topic_name_pattern": ".*"})
    assert (r.status_code, r.json()) == (200, {
        "kind": "KafkaPromoteMirror",
        "metadata": {"self": f"{API}/west/links/L/mirrors", "resource_name": None},
        "data": [_restored_entry([], TRUNCATION)]})
    assert data_dir_bytes(served.data) == before
    r = served.post(path, json={"mirror_topic_names": ["orders"]})
    assert r.status_code == 200, r.text
    lags = [{"partition": 0, "lag": 0, "last_source_fetch_offset": 5},
            {"partition": 1, "lag": 0, "last_source_fetch_offset": 3}]
    assert r.json()["data"] == [_restored_entry(lags, [])]
    assert status_of(served, "west", "orders") == "ACTIVE"
    # again: west's orders is a mirror now, a refusal entry
    [again] = served.post(path, json={"mirror_topic_names": ["orders"]}).json()["data"]
    assert (again["error_code"], again["error_message"]) == (
        400, "Topic 'orders' is already a mirror topic")
    assert [p["partition"] for p in again["mirror_lags"]] == [0, 1]  # a mirror's: its lags


def test_truncate_and_restore_refusals(served):
    path = url("/west/links/L/mirrors:truncate-and-restore")
    [entry] = served.post(path, json={"mirror_topic_names": ["orders"]}).json()["data"]
    assert (entry["error_code"], entry["error_message"]) == (
        400, "Topic 'orders' on cluster east is not a stopped mirror: truncate-and-restore "
             "fails back to a topic that was failed over or promoted")
    # the pattern selects the topics that could be restored: none before a failover
    r = served.post(path, json={"mirror_topic_name_pattern": ".*"})
    assert (r.status_code, r.json()["data"]) == (200, [])
    assert error(served.post(url("/west/links/X/mirrors:truncate-and-restore"),
                             json={"mirror_topic_names": ["orders"]}), 404, 404) == (
        "Cluster link 'X' not found")


@pytest.mark.parametrize(("how", "remote"), [("start", "ACTIVE"), ("pause", "PAUSED")])
def test_promote_local_and_start_or_pause_remote_mirror(served, how, remote):
    path = url(f"/east/links/L/mirrors:promote-local-and-{how}-remote-mirror")
    # promote's condition: east's mirror lags 2 records on partition 0
    r = served.post(path, json={"mirror_topic_names": ["orders"]})
    assert r.status_code == 200
    [refused] = r.json()["data"]
    assert (refused["error_code"], refused["error_message"]) == (
        400, "Topic 'orders' can not be promoted: it has mirroring lag (partition 0: 2); wait "
             f"for it to catch up, or use failover (promote-local-and-{how}-remote-mirror "
             "promotes the local mirror)")
    # a refused mirror's entry keeps its lags, as promote's own refusals do
    assert refused["mirror_lags"] == [{"partition": 0, "lag": 2, "last_source_fetch_offset": 5},
                                      {"partition": 1, "lag": 0, "last_source_fetch_offset": 3}]
    assert status_of(served, "east", "orders") == "ACTIVE"
    dd = DataDir(served.data)
    Mirrors(dd, "east", served.clock).step()  # caught up
    dd.close()
    before = data_dir_bytes(served.data)
    r = served.post(path, params={"validate_only": "true"},
                    json={"mirror_topic_names": ["orders"]})
    assert r.status_code == 200 and r.json()["data"][0]["error_code"] is None, r.text
    assert data_dir_bytes(served.data) == before
    r = served.post(path, json={"mirror_topic_names": ["orders"]})
    assert r.status_code == 200, r.text
    [entry] = r.json()["data"]
    assert {k: entry[k] for k in ("mirror_topic_name", "error_code", "error_message",
                                  "messages_truncated", "partition_level_truncation_data",
                                  "restored_mirror_status")} == {
        "mirror_topic_name": "orders", "error_code": None, "error_message": None,
        "messages_truncated": 0,
        "partition_level_truncation_data": [
            {"partition_id": 0, "offset_truncated_to": 7, "messages_truncated": 0},
            {"partition_id": 1, "offset_truncated_to": 3, "messages_truncated": 0}],
        "restored_mirror_status": remote}
    assert status_of(served, "east", "orders") == "STOPPED"
    assert status_of(served, "west", "orders") == remote


def test_promote_local_needs_the_link_both_ways(tmp_path, clock):
    data = tmp_path / "data"
    build(data, clock, reverse_link=False)
    dd = DataDir(data)
    Mirrors(dd, "east", clock).step()
    dd.close()
    from starlette.testclient import TestClient

    with TestClient(create_app(data, clock_factory=lambda: clock),
                    base_url="http://127.0.0.1") as client:
        r = client.post(url("/east/links/L/mirrors:promote-local-and-start-remote-mirror"),
                        json={"mirror_topic_names": ["orders"]})
        [entry] = r.json()["data"]
        assert (entry["error_code"], entry["error_message"]) == (
            400, "Cluster link 'L' is not bidirectional: cluster west has no link 'L' back to "
                 "east (promote-local-and-start-remote-mirror needs the link on both clusters, "
                 "each pointing at the other)")


def test_read_mirror_with_state_transition_errors(served):
    r = served.get(url("/east/links/L/mirrors/orders"),
                   params={"include_state_transition_errors": "true"})
    assert r.json()["mirror_state_transition_errors"] == []
    assert "mirror_state_transition_errors" not in served.get(
        url("/east/links/L/mirrors/orders")).json()


# == validate_only: no byte changes ============================================================

VALIDATE_ONLY = [
    ("POST", "/east/links", {"link_name": "V"}, CLOUD_EXAMPLE),
    ("DELETE", "/west/links/L", {}, None),
    ("DELETE", "/east/links/L", {"force": "true"}, None),
    ("PUT", "/east/links/L/configs:alter", {}, {"data": [
        {"name": "acl.sync.ms", "value": "1"}, {"name": "consumer.offset.sync.ms",
                                                "operation": "DELETE"}]}),
    ("POST", "/east/links/L/mirrors:promote", {}, {"mirror_topic_names": ["orders"]}),
    ("POST", "/east/links/L/mirrors:failover", {}, {"mirror_topic_names": ["orders"]}),
    ("POST", "/east/links/L/mirrors:pause", {}, {"mirror_topic_name_pattern": ".*"}),
    ("POST", "/east/links/L/mirrors:resume", {}, {"mirror_topic_names": ["orders"]}),
    ("POST", "/east/links/L/mirrors:reverse-and-start-mirror", {},
     {"mirror_topic_names": ["orders"]}),
    ("POST", "/east/links/L/mirrors:reverse-and-pause-mirror", {},
     {"mirror_topic_names": ["orders"]}),
    ("POST", "/west/links/L/mirrors:truncate-and-restore",
     {"include_partition_level_truncation_data": "true"}, {"mirror_topic_names": ["orders"]}),
    ("POST", "/east/links/L/mirrors:promote-local-and-start-remote-mirror", {},
     {"mirror_topic_names": ["orders"]}),
    ("POST", "/east/links/L/mirrors:promote-local-and-pause-remote-mirror", {},
     {"mirror_topic_names": ["orders"]}),
]


@pytest.mark.parametrize(("method", "path", "query", "body"), VALIDATE_ONLY,
                         ids=[f"{m} {p}" for m, p, _q, _b in VALIDATE_ONLY])
def test_every_validate_only_form_changes_no_byte(served, method, path, query, body):
    served.get(url("/east/links/-/mirrors"))  # statuses settled before the fingerprint
    before = data_dir_bytes(served.data)
    forms = [{**query, "validate_only": "true"}]
    if method == "PUT":  # Cloud's body flag too
        forms.append(query)
        body_forms = [body, {**body, "validate_only": True}]
    else:
        body_forms = [body]
    for q, b in zip(forms, body_forms, strict=True):
        r = served.request(method, url(path), params=q, **({"json": b} if b else {}))
        assert r.status_code in (200, 204), r.text
        assert data_dir_bytes(served.data) == before, (q, b)


@pytest.mark.parametrize(("method", "path", "query", "body"), VALIDATE_ONLY[:4],
                         ids=[f"{m} {p}" for m, p, _q, _b in VALIDATE_ONLY[:4]])
def test_the_same_requests_without_validate_only_change_bytes(served, method, path, query,
                                                              body):
    served.get(url("/east/links/-/mirrors"))
    before = data_dir_bytes(served.data)
    r = served.request(method, url(path), params=query, **({"json": body} if body else {}))
    assert r.status_code in (200, 204), r.text
    assert data_dir_bytes(served.data) != before


def test_link_mode_is_not_altered_over_rest_and_nothing_changes(served):
    """link.mode is set when a link is created: a PUT of it is refused (400, the Kafka
    error's code) and the data directory keeps every byte."""
    before = data_dir_bytes(served.data)
    r = served.put(url("/east/links/L/configs/link.mode"), json={"value": "SOURCE"})
    assert r.status_code == 400, r.text
    assert "Configuration 'link.mode' cannot be altered" in r.json()["message"]
    assert data_dir_bytes(served.data) == before
