"""Every request the ``--rest-url`` client sends, checked against Confluent's descriptions
(tests/restfacts).

A local recording HTTP server (http.server in a thread, 127.0.0.1, a free port) answers
Confluent-shaped documents built like the descriptions' examples, in either dialect: Cloud's
(is_default / is_read_only / is_sensitive; reverse-and-*, truncate-and-restore) or the
Platform's (default / read_only / sensitive; promote-local-and-*; the Cloud-only paths answer
404 as an unknown path). Every ``links`` / ``mirrors`` verb runs through CliRunner against it,
and each recorded request is checked: the operation exists, every query parameter and body
field is declared, required ones are present, types and enums hold.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from helpers import ENV_VARS, ok, runner
from restfacts import OPERATIONS, accepting, match, request_problems, response_problems

from jetlink.cli.main import app

SELF = "http://127.0.0.1/kafka/v3/clusters/east"
LINK_DATA = {
    "kind": "KafkaLinkData",
    "metadata": {"self": f"{SELF}/links/L", "resource_name": None},
    "source_cluster_id": "west", "link_name": "L",
    "link_id": "7840644d-f7d8-4844-a577-a10ef3df31df",
    "cluster_link_id": "eEBkTffYSESld6EO898x3w", "topic_names": ["orders"],
    "link_state": "ACTIVE",
}
LAGS = [{"partition": 0, "lag": 0, "last_source_fetch_offset": 5},
        {"partition": 1, "lag": 0, "last_source_fetch_offset": 3}]


def mirror_data(status: str = "STOPPED") -> dict[str, Any]:
    return {"kind": "KafkaMirrorData",
            "metadata": {"self": f"{SELF}/links/L/mirrors/orders", "resource_name": None},
            "link_name": "L", "mirror_topic_name": "orders", "source_topic_name": "orders",
            "num_partitions": 2, "mirror_lags": LAGS, "mirror_status": status,
            "state_time_ms": 1612550939300}


def config_data(name: str, value: str, dialect: str, *, default: bool = False
                ) -> dict[str, Any]:
    names = (("is_default", "is_read_only", "is_sensitive") if dialect == "cloud"
             else ("default", "read_only", "sensitive"))
    return {"kind": "KafkaLinkConfigData",
            "metadata": {"self": f"{SELF}/links/L/configs/{name}", "resource_name": None},
            "cluster_id": "east", "name": name, "value": value,
            names[0]: default, names[1]: False, names[2]: False,
            "source": "DEFAULT_CONFIG" if default else "DYNAMIC_CLUSTER_LINK_CONFIG",
            "synonyms": [], "link_name": "L"}


def collection(kind: str, path: str, data: list[Any]) -> dict[str, Any]:
    return {"kind": kind, "metadata": {"self": f"{SELF}{path}", "next": None}, "data": data}


def alter_entry(name: str, dialect: str) -> dict[str, Any]:
    entry = {"kind": "AlterMirrorsData",
             "metadata": {"self": f"{SELF}/links/L/mirrors/{name}", "resource_name": None},
             "mirror_topic_name": name, "error_code": None, "error_message": None,
             "mirror_lags": LAGS}
    if dialect == "cloud":
        entry["messages_truncated"] = 2
        entry["partition_level_truncation_data"] = [
            {"partition_id": 0, "offset_truncated_to": 5, "messages_truncated": 2}]
    return entry


ACL = {"resource_type": "TOPIC", "resource_name": "orders", "pattern_type": "LITERAL",
       "principal": "User:alice", "host": "*", "operation": "READ", "permission": "ALLOW"}


def acl_data() -> dict[str, Any]:
    return {"kind": "KafkaAcl", "metadata": {"self": f"{SELF}/acls?principal=User%3Aalice"},
            "cluster_id": "east", **ACL}


def canned(operation_id: str, params: dict[str, str], body: Any, dialect: str
           ) -> tuple[int, Any]:
    """The answer of the recording server: (status, JSON document or None)."""
    if dialect not in OPERATIONS[operation_id]["sources"]:
        return 404, {"error_code": 404, "message": "HTTP 404 Not Found"}
    if operation_id == "getKafkaAcls":
        return 200, collection("KafkaAclList", "/acls", [acl_data()])
    if operation_id == "deleteKafkaAcls":
        return 200, {"data": [acl_data()]}
    if operation_id in ("createKafkaAcls", "batchCreateKafkaAcls"):
        return 201, None
    if operation_id == "listKafkaLinks":
        return 200, collection("KafkaLinkDataList", "/links", [LINK_DATA])
    if operation_id == "getKafkaLink":
        return 200, LINK_DATA
    if operation_id == "listKafkaLinkConfigs":
        return 200, collection("KafkaLinkConfigDataList", "/links/L/configs", [
            config_data("acl.sync.ms", "5000", dialect),
            config_data("consumer.offset.sync.ms", "30000", dialect, default=True),
            config_data("cluster.link.prefix", "", dialect, default=True)])
    if operation_id == "getKafkaLinkConfigs":
        return 200, config_data(params["config_name"], "5000", dialect)
    if operation_id in ("listKafkaMirrorTopics", "listKafkaMirrorTopicsUnderLink"):
        return 200, collection("KafkaMirrorDataList", "/links/L/mirrors", [mirror_data()])
    if operation_id == "readKafkaMirrorTopic":
        return 200, mirror_data()
    if operation_id.startswith("updateKafkaMirrorTopics"):
        names = body.get("mirror_topic_names") or []
        return 200, collection("KafkaPromoteMirror", "/links/L/mirrors",
                               [alter_entry(n, dialect) for n in names])
    if operation_id == "deleteKafkaLink":
        return 200, None  # both descriptions: 200, no content
    return 204, None  # the other changes: 204 No Content


class Recorder:
    """The recording server of one dialect: ``requests`` holds (method, path, query pairs,
    body or None, whether a body came) in order."""

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self.requests: list[tuple[str, str, list[tuple[str, str]], Any, bool]] = []
        self.answers: list[tuple[str, int, Any]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                url = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                query = parse_qsl(url.query, keep_blank_values=True)
                recorder.requests.append((self.command, url.path, query, body, bool(raw)))
                found = match(self.command, url.path)
                if found is None:
                    status, doc = 404, {"error_code": 404, "message": "HTTP 404 Not Found"}
                else:
                    status, doc = canned(found[0]["operation_id"], found[1], body or {},
                                         recorder.dialect)
                    recorder.answers.append((found[0]["operation_id"], status, doc))
                data = b"" if doc is None else json.dumps(doc).encode()
                self.send_response(status)
                if data:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = _serve

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        # shutdown() waits for the loop's next poll: 0.5 s by default, per test
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,),
                                       daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(params=["cloud", "platform"])
def recorder(request):
    rec = Recorder(request.param)
    yield rec
    rec.close()


@pytest.fixture
def remote(recorder, tmp_path, monkeypatch):
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)

    def run(group: str, *args: str):
        return runner.invoke(app, ["--data-dir", str(tmp_path / "none"), "--cluster", "east",
                                   group, "--rest-url", recorder.url, *args],
                             prog_name="jetlink")

    return run


VERBS = [
    ("links", "create", "L", "--source-cluster", "west", "-c", "acl.sync.ms=5000"),
    ("links", "create", "L", "--source-cluster", "west", "--validate-only"),
    ("links", "ls"),
    ("links", "ls", "-j"),
    ("links", "describe", "L"),
    ("links", "describe", "L", "-j"),
    ("links", "alter", "L", "-c", "acl.sync.ms=1000", "--delete-config",
     "consumer.offset.sync.ms"),
    ("links", "delete", "L", "-f"),
    ("links", "config", "get", "L", "acl.sync.ms"),
    ("links", "config", "set", "L", "acl.sync.ms", "1000"),
    ("links", "config", "delete", "L", "acl.sync.ms", "-j"),
    ("mirrors", "create", "orders", "--link", "L"),
    ("mirrors", "ls"),
    ("mirrors", "ls", "--link", "L", "--mirror-status", "active"),
    ("mirrors", "describe", "orders", "--link", "L"),
    ("mirrors", "describe"),
    ("mirrors", "promote", "orders", "--link", "L"),
    ("mirrors", "promote", "orders", "--link", "L", "--dry-run"),
    ("mirrors", "failover", "--link", "L"),
    ("mirrors", "pause", "orders", "--link", "L"),
    ("mirrors", "resume", "orders", "--link", "L", "--dry-run"),
    ("mirrors", "reverse-and-start", "orders", "--link", "L"),
    ("mirrors", "reverse-and-pause", "orders", "--link", "L", "--dry-run"),
    ("mirrors", "truncate-and-restore", "orders", "--link", "L"),
    ("acls", "ls"),
    ("acls", "ls", "--topic", "orders", "--principal", "User:alice", "-j"),
    ("acls", "ls", "--group", "g", "--resource-pattern-type", "match"),
    ("acls", "add", "--principal", "User:alice", "--operation", "Read", "--topic", "orders"),
    ("acls", "add", "--principal", "User:alice", "--operation", "Write", "--operation",
     "Describe", "--topic", "orders", "--deny", "--host", "10.0.0.1"),
    ("acls", "rm", "--topic", "orders", "-f"),
    ("acls", "rm", "--kafka-cluster", "--operation", "Alter", "--principal", "User:bob",
     "--permission", "deny", "-f", "-j"),
]


@pytest.mark.parametrize("verb", VERBS, ids=lambda v: " ".join(v[:3]))
def test_every_request_of_a_verb_is_declared(remote, recorder, verb):
    result = remote(*verb)
    if verb[1] == "truncate-and-restore" and recorder.dialect == "platform":
        # the Platform's description has no truncate-and-restore: said, not guessed
        assert result.exit_code == 1
        assert "has no mirrors:truncate-and-restore" in result.stderr
        assert "Confluent Platform's does not" in result.stderr
    else:
        ok(result)
    assert recorder.requests, "the verb sent no request"
    for method, path, query, body, has_body in recorder.requests:
        problems = request_problems(method, path, query, body, has_body=has_body)
        assert all(not found for found in problems.values()), (method, path, query, body,
                                                               problems)
    # the canned answers themselves are what the dialect's description declares
    for operation_id, status, doc in recorder.answers:
        fact = OPERATIONS[operation_id]
        if recorder.dialect in fact["sources"]:
            assert response_problems(fact, status, doc, recorder.dialect) == [], operation_id


def test_operations_each_verb_reaches(remote, recorder):
    """The operations the verbs send, by dialect: the Platform's reverse verbs fall back to
    promote-local-and-*, the new single-config verbs use the single-config operations."""
    sent = []
    for verb in VERBS:
        recorder.requests.clear()
        remote(*verb)
        sent.append([match(m, p)[0]["operation_id"] for m, p, *_ in recorder.requests])
    by_verb = dict(zip((" ".join(v[:3]) for v in VERBS), sent, strict=False))
    assert by_verb["links config get"] == ["getKafkaLinkConfigs"]
    assert by_verb["links config set"] == ["updateKafkaLinkConfig", "getKafkaLinkConfigs"]
    assert by_verb["links config delete"] == ["deleteKafkaLinkConfig", "getKafkaLinkConfigs"]
    assert "createKafkaMirrorTopic" in by_verb["mirrors create orders"]
    assert by_verb["acls ls"] == ["getKafkaAcls"]
    # READ exists (the canned list has it): nothing created
    assert by_verb["acls add --principal"][0] == "getKafkaAcls"
    assert by_verb["acls rm --topic"] == ["getKafkaAcls", "deleteKafkaAcls"]
    adds = [s for v, s in zip(VERBS, sent, strict=True) if v[:2] == ("acls", "add")]
    assert adds[0] == ["getKafkaAcls"]
    # two ACLs to create: the batch where the description has it, else one request each
    assert adds[1] == (["getKafkaAcls", "batchCreateKafkaAcls"] if recorder.dialect == "cloud"
                       else ["getKafkaAcls", "batchCreateKafkaAcls", "createKafkaAcls",
                             "createKafkaAcls"])
    if recorder.dialect == "cloud":
        assert by_verb["mirrors reverse-and-start orders"] == [
            "updateKafkaMirrorTopicsReverseAndStartMirror"]
        assert by_verb["mirrors truncate-and-restore orders"] == [
            "updateKafkaMirrorTopicsTruncateAndRestoreMirror"]
    else:
        assert by_verb["mirrors reverse-and-start orders"] == [
            "updateKafkaMirrorTopicsReverseAndStartMirror", "getKafkaLink",
            "updateKafkaMirrorTopicsPromoteLocalAndStartRemoteMirror"]
        assert by_verb["mirrors reverse-and-pause orders"] == [
            "updateKafkaMirrorTopicsReverseAndPauseMirror", "getKafkaLink",
            "updateKafkaMirrorTopicsPromoteLocalAndPauseRemoteMirror"]


def test_link_configs_read_in_either_dialect(remote, recorder):
    """Cloud's is_default and the Platform's default read alike."""
    doc = json.loads(ok(remote("links", "describe", "L", "-j")).stdout)
    configs = {c["name"]: c for c in doc["configs"]}
    assert configs["acl.sync.ms"]["is_default"] is False
    assert configs["consumer.offset.sync.ms"]["is_default"] is True
    assert doc["configs"] == sorted(doc["configs"], key=lambda c: c["name"])
    one = json.loads(ok(remote("links", "config", "get", "L", "acl.sync.ms", "-j")).stdout)
    assert one == {"name": "acl.sync.ms", "value": "5000", "is_default": False,
                   "is_read_only": False, "is_sensitive": False,
                   "source": "DYNAMIC_CLUSTER_LINK_CONFIG"}
    assert ok(remote("links", "config", "get", "L", "acl.sync.ms")).stdout == \
        "acl.sync.ms=5000\n"


def test_mirror_create_validate_only_sends_nothing(remote, recorder):
    result = remote("mirrors", "create", "orders", "--link", "L", "--validate-only")
    assert result.exit_code == 2
    assert "createKafkaMirrorTopic" in result.stderr
    assert recorder.requests == []


def test_unknown_mirror_status_is_refused_before_sending(remote, recorder):
    result = remote("mirrors", "ls", "--mirror-status", "sleeping")
    assert result.exit_code == 2  # a bad option value: a usage error, as every enum option
    # the REST API's enum: the engine's statuses and those only a Confluent server reports
    assert result.stderr == ("jetlink: error: invalid value for --mirror-status: 'sleeping': "
                             "one of ACTIVE, FAILED, LINK_FAILED, LINK_PAUSED, PAUSED, "
                             "PENDING_STOPPED, SOURCE_UNAVAILABLE, STOPPED, PENDING_MIRROR, "
                             "PENDING_SYNCHRONIZE, PENDING_SETUP_FOR_RESTORE, "
                             "PENDING_RESTORE\n")
    assert recorder.requests == []
    ok(remote("mirrors", "ls", "--mirror-status", "paused"))  # any case, as before
    ok(remote("mirrors", "ls", "--mirror-status", "LINK_PAUSED"))
    assert recorder.requests[-1][2] == [("mirror_status", "LINK_PAUSED")]


def test_the_checker_finds_what_the_old_client_sent():
    """The request ``mirrors create --validate-only`` used to send is refused by the facts
    (createKafkaMirrorTopic declares no query parameter)."""
    problems = request_problems("POST", "/kafka/v3/clusters/east/links/L/mirrors",
                                {"validate_only": "true"}, {"source_topic_name": "orders"})
    assert accepting(problems) == []
    assert problems["cloud"] == [
        "query parameter validate_only is not declared by createKafkaMirrorTopic"]
    bad = request_problems("POST", "/kafka/v3/clusters/east/links/L/mirrors:promote",
                           {"validate_only": "yes"},
                           {"mirror_topic_name_pattern": ".*"})
    assert bad["cloud"] == ["query parameter validate_only='yes': not a boolean"]
    assert "body: required field mirror_topic_names is missing" in bad["platform"]
    assert "body: field mirror_topic_name_pattern is not declared" in bad["platform"]
