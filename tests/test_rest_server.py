"""``jetlink serve``: Confluent's REST API v3 over the embedded engine, through a real server.

One server per module (``jetlink --data-dir D serve --port 0 -j`` as a subprocess, stopped
by its PID); httpx is the client. Each test builds its own clusters in D with the engine
(clusters are cheap), so the tests do not depend on each other. Response bodies are checked
field by field against the reference shapes (shared/reference/kafka-cluster-linking.md
"REST API v3", and Confluent's OpenAPI documents named in cli/rest/server.py).
"""

from __future__ import annotations

import base64
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import ENV_VARS, wait_until

from jetlink.core.clock import SystemClock
from jetlink.core.kafka.links import LINK_CONFIG_DEFAULTS
from jetlink.core.kafka.mirrors import Mirrors
from jetlink.core.kafka.topics import Kafka
from jetlink.core.store import DataDir

ALL_GROUPS = '{"groupFilters":[{"name":"*","patternType":"LITERAL","filterType":"INCLUDE"}]}'
SYNC_CONFIGS = [
    {"name": "consumer.offset.sync.enable", "value": "true"},
    {"name": "consumer.offset.group.filters", "value": ALL_GROUPS},
]
JSON = {"Content-Type": "application/json"}
START_TIMEOUT = 120.0  # bounds a failure only


# -- the server ---------------------------------------------------------------------------


def server_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARS}
    env["XDG_CONFIG_HOME"] = str(tmp / "config")  # no context of the machine's user
    return env


class Server:
    """A ``jetlink serve`` subprocess: ``url`` is its base (``http://127.0.0.1:P``)."""

    def __init__(self, data: Path, tmp: Path, *args: str, json_line: bool = True,
                 **popen: Any) -> None:
        self.data = data
        self.err_path = tmp / f"serve-{os.getpid()}-{time.monotonic_ns()}.err"
        self._err = open(self.err_path, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jetlink.cli.main", "--data-dir", str(data), "serve",
             "--port", "0", *(["-j"] if json_line else []), *args],
            stdout=subprocess.PIPE, stderr=self._err, text=True, env=server_env(tmp),
            **popen,
        )
        self.announced: dict | None = None
        try:
            if json_line:
                self.announced = json.loads(self._first_stdout_line())
                self.url = self.announced["url"].removesuffix("/kafka/v3/clusters")
            else:
                self.url = self._url_from_notice()
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _first_stdout_line(self) -> str:
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: lines.put(self.proc.stdout.readline()),
                         daemon=True).start()
        try:
            line = lines.get(timeout=START_TIMEOUT)
        except queue.Empty:
            raise AssertionError(f"jetlink serve printed nothing: {self.stderr()}") from None
        assert line, f"jetlink serve exited ({self.proc.poll()}): {self.stderr()}"
        return line

    def _url_from_notice(self) -> str:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            m = re.search(r" on (http://\S+)/kafka/v3/clusters/\{cluster\}\n", self.stderr())
            if m:
                return m.group(1)
            assert self.proc.poll() is None, self.stderr()
            time.sleep(0.05)
        raise AssertionError(f"no notice from jetlink serve: {self.stderr()}")

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                httpx.get(self.url + "/", timeout=2)
                return
            except httpx.TransportError:
                assert self.proc.poll() is None, self.stderr()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def stderr(self) -> str:
        if not self._err.closed:
            self._err.flush()
        return self.err_path.read_text()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.proc.stdout:
            self.proc.stdout.close()
        self._err.close()


@pytest.fixture(scope="module")
def rest(tmp_path_factory):
    """The module's server on a data directory with clusters ``west`` (topic ``orders``, 2
    partitions, 5 records in partition 0) and ``east``; ``rest.http`` is an httpx client on
    it, ``rest.api`` the prefix ``/kafka/v3/clusters``."""
    tmp = tmp_path_factory.mktemp("rest")
    data = tmp / "data"
    dd = DataDir(data)
    dd.add_cluster("west", "kafka")
    dd.add_cluster("east", "kafka")
    west = Kafka(dd.open("west"), SystemClock())
    west.create_topic("orders", 2)
    west.produce("orders", [(None, f"order {i}".encode()) for i in range(5)], partition=0)
    dd.close()
    server = Server(data, tmp)
    server.tmp = tmp
    server.api = server.url + "/kafka/v3/clusters"
    server.http = httpx.Client(base_url=server.api, timeout=30)
    yield server
    server.http.close()
    server.stop()
    assert "Traceback" not in server.stderr(), server.stderr()  # no request failed with a 500


def engine(rest, cluster: str) -> tuple[DataDir, Kafka]:
    dd = DataDir(rest.data)
    return dd, Kafka(dd.open(cluster), SystemClock())


def clusters(rest, *names: str) -> None:
    dd = DataDir(rest.data)
    for name in names:
        dd.add_cluster(name, "kafka")
    dd.close()


def topic(rest, cluster: str, name: str, records: int = 0, partitions: int = 1) -> None:
    dd, k = engine(rest, cluster)
    k.create_topic(name, partitions)
    if records:
        k.produce(name, [(None, f"v{i}".encode()) for i in range(records)], partition=0)
    dd.close()


def create_link(rest, dest: str, name: str, source: str, configs=(), **query) -> httpx.Response:
    return rest.http.post(f"/{dest}/links", params={"link_name": name, **query}, headers=JSON,
                          json={"source_cluster_id": source, "configs": list(configs)})


def created(response: httpx.Response) -> None:
    assert (response.status_code, response.content) == (204, b""), response.text


def error(response: httpx.Response, status: int, code: int, message: str | None = None
          ) -> str:
    """The response is Confluent's error body with this status and error_code; returns its
    message (checked when given)."""
    body = response.json()
    assert response.status_code == status, body
    assert response.headers["content-type"] == "application/json"
    assert sorted(body) == ["error_code", "message"]
    assert body["error_code"] == code, body
    if message is not None:
        assert body["message"] == message
    return body["message"]


def uuid_of(cluster_link_id: str) -> str:
    return str(uuid.UUID(bytes=base64.urlsafe_b64decode(cluster_link_id + "==")))


def tasks(**states: str) -> list[dict]:
    return [{"task_name": n, "state": states.get(n, "NOT_CONFIGURED"), "errors": []}
            for n in ("AclSync", "AutoCreateMirror", "ConsumerOffsetSync", "TopicConfigsSync")]


def lag(partition: int, lag: int, fetched: int) -> dict:
    return {"partition": partition, "lag": lag, "last_source_fetch_offset": fetched}


# -- the server itself --------------------------------------------------------------------


def test_serve_json_line_names_url_and_clusters(rest):
    assert rest.announced == {"url": rest.api, "clusters": ["east", "west"]}
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", rest.url)


def test_unknown_cluster_path_and_method(rest):
    error(rest.http.get("/nowhere/links"), 404, 404, "Cluster nowhere cannot be found.")
    error(rest.http.get("/bad.name/links"), 404, 404, "Cluster bad.name cannot be found.")
    # a name of 20,000 characters is not echoed whole (core/errors.py clip)
    long = "x" * 20_000
    error(rest.http.get(f"/{long}/links"), 404, 404,
          f"Cluster {'x' * 40}... (20,000 characters) cannot be found.")
    r = rest.http.get(f"/east/links/{long}")
    assert r.status_code == 404 and len(r.json()["message"]) < 200, r.json()
    error(rest.http.get("/east/nothing"), 404, 404, "HTTP 404 Not Found")
    r = rest.http.put("/east/links")
    error(r, 405, 405, "HTTP 405 Method Not Allowed")
    assert set(r.headers["allow"].split(", ")) == {"GET", "HEAD", "OPTIONS", "POST"}


def test_options_answers_the_methods_of_a_path(rest):
    """OPTIONS as the JAX-RS runtime of Confluent's server answers it (WADL off): 200, the
    path's methods in Allow, no body and no CORS grant."""
    for path, allow in (("/east/links", "GET, HEAD, OPTIONS, POST"),
                        ("/east/links/L", "DELETE, GET, HEAD, OPTIONS"),
                        ("", "GET, HEAD, OPTIONS")):
        r = rest.http.options(path)
        assert (r.status_code, r.headers["allow"], r.content) == (200, allow, b""), path
        assert not any(k.startswith("access-control-") for k in r.headers), r.headers


def test_a_trailing_slash_is_the_path_without_it_never_a_redirect(rest):
    """JAX-RS matches /links/ as /links: the same answer, not a 307 a script without
    redirects on would take for done."""
    clusters(rest, "ts")
    assert rest.http.get("/ts/links/").json() == rest.http.get("/ts/links").json()
    r = rest.http.post("/ts/links/", params={"link_name": "T"}, headers=JSON,
                       json={"source_cluster_id": "west"})
    created(r)
    assert rest.http.get("/ts/links/T/").json()["link_name"] == "T"
    error(rest.http.get("/ts/links/nope/"), 404, 404, "Cluster link 'nope' not found")
    error(rest.http.get("/ts/nothing/"), 404, 404, "HTTP 404 Not Found")
    assert rest.http.get("/").json()["kind"] == "KafkaClusterList"


def test_only_loopback_host_headers_without_a_token(rest):
    r = rest.http.get("/east/links", headers={"Host": "evil.example:8090"})
    assert "evil.example" in error(r, 400, 400)
    assert rest.http.get("/east/links", headers={"Host": "localhost"}).status_code == 200


# -- links --------------------------------------------------------------------------------


def test_links_create_list_get(rest):
    clusters(rest, "l1")
    r = rest.http.get("/l1/links")
    assert r.json() == {"kind": "KafkaLinkDataList",
                        "metadata": {"self": f"{rest.api}/l1/links", "next": None},
                        "data": []}
    created(create_link(rest, "l1", "L", "west", SYNC_CONFIGS))
    link = rest.http.get("/l1/links/L")
    assert link.status_code == 200
    got = link.json()
    cid = got["cluster_link_id"]
    assert len(cid) == 22
    expected = {
        "kind": "KafkaLinkData",
        "metadata": {"self": f"{rest.api}/l1/links/L", "resource_name": None},
        "link_name": "L",
        "cluster_link_id": cid,
        "link_id": uuid_of(cid),
        "source_cluster_id": "west",
        "destination_cluster_id": "l1",
        "topic_names": [],
        "link_state": "ACTIVE",
        "link_error": "NO_ERROR",
        "link_error_message": None,
        "tasks": tasks(ConsumerOffsetSync="ACTIVE", TopicConfigsSync="ACTIVE"),
    }
    assert got == expected
    assert rest.http.get("/l1/links").json() == {
        "kind": "KafkaLinkDataList",
        "metadata": {"self": f"{rest.api}/l1/links", "next": None},
        "data": [expected],
    }


def test_link_create_validate_only_creates_nothing(rest):
    clusters(rest, "l2")
    created(create_link(rest, "l2", "V", "west", validate_only="true"))
    error(rest.http.get("/l2/links/V"), 404, 404, "Cluster link 'V' not found")
    # validate_link=false: a source that does not exist (yet) is accepted
    created(create_link(rest, "l2", "later", "nosuch", validate_link="false"))
    assert rest.http.get("/l2/links/later").json()["link_state"] == "UNAVAILABLE"


def test_link_create_errors(rest):
    clusters(rest, "l3")
    created(create_link(rest, "l3", "L", "west"))
    error(create_link(rest, "l3", "L", "west"), 400, 40002, "Cluster link 'L' already exists")
    msg = error(create_link(rest, "l3", "M", "west",
                            [{"name": "consumer.offset.sync.ms", "value": "often"}]), 400, 40002)
    assert msg == ("Invalid value often for configuration consumer.offset.sync.ms: "
                   "Not a number of type INT")
    assert "no.such.config" in error(create_link(
        rest, "l3", "M", "west", [{"name": "no.such.config", "value": "1"}]), 400, 40002)
    # a config named twice (a null one too) is refused as configs:alter refuses it, never
    # the last one kept; so is a mirror topic's
    for dup in ([{"name": "consumer.offset.sync.ms", "value": "1000"},
                 {"name": "consumer.offset.sync.ms", "value": "5000"}],
                [{"name": "consumer.offset.sync.ms", "value": "1000"},
                 {"name": "consumer.offset.sync.ms", "value": None}]):
        error(create_link(rest, "l3", "M", "west", dup), 400, 40002,
              "Error due to duplicate config keys : consumer.offset.sync.ms")
    error(rest.http.post("/l3/links/L/mirrors", json={
        "source_topic_name": "orders",
        "configs": [{"name": "retention.ms", "value": "1"},
                    {"name": "retention.ms", "value": "2"}]}), 400, 40002,
          "Error due to duplicate config keys : retention.ms")
    error(rest.http.get("/l3/links/M"), 404, 404, "Cluster link 'M' not found")
    assert rest.http.get("/l3/links/L/mirrors").json()["data"] == []
    assert "does not exist" in error(create_link(rest, "l3", "M", "nosuch"), 400, 40002)
    assert "cannot create cluster link to self" in error(
        create_link(rest, "l3", "M", "l3"), 400, 40002)
    error(rest.http.post("/l3/links", json={"source_cluster_id": "west"}), 400, 400,
          "Query parameter link_name of createKafkaLink is required")
    error(rest.http.post("/l3/links", params={"link_name": "M"}), 400, 400,
          "A JSON request body is required")
    error(rest.http.post("/l3/links", params={"link_name": "M"}, json={}), 400, 400,
          "source_cluster_id is required")
    assert "destination-initiated" in error(rest.http.post(
        "/l3/links", params={"link_name": "M"}, json={"destination_cluster_id": "x"}),
        400, 40002)
    assert "not valid JSON" in error(rest.http.post(
        "/l3/links", params={"link_name": "M"}, headers=JSON, content=b"{nope"), 400, 400)
    r = rest.http.post("/l3/links", params={"link_name": "M"},
                       content=b'{"source_cluster_id": "west"}',
                       headers={"Content-Type": "text/plain"})
    assert error(r, 415, 415).startswith("HTTP 415 Unsupported Media Type")
    error(create_link(rest, "l3", "M", "west", validate_only="maybe"), 400, 400,
          'Query parameter validate_only="maybe" of createKafkaLink: it must be a boolean, '
          "true or false")
    error(create_link(rest, "nowhere", "M", "west"), 404, 404, "Cluster nowhere cannot be found.")
    # a destination that is not this cluster is refused, never silently another one; an id
    # that is no cluster name says the rule (a long one cut, not echoed whole)
    error(rest.http.post("/l3/links", params={"link_name": "M"},
                         json={"source_cluster_id": "west", "destination_cluster_id": "x"}),
          400, 40002, "destination_cluster_id 'x': a link created here has this cluster, l3, "
          "as its destination (give it, or leave it out)")
    created(rest.http.post("/l3/links", params={"link_name": "N", "validate_only": "true"},
                           json={"source_cluster_id": "west", "destination_cluster_id": "l3"}))
    # remote_cluster_id is the remote cluster the client expects: this link's source
    error(rest.http.post("/l3/links", params={"link_name": "M"},
                         json={"source_cluster_id": "west", "remote_cluster_id": "east"}),
          400, 40002, "remote_cluster_id 'east': the remote cluster of a link created here is "
          "its source, source_cluster_id 'west' (give the same id, or leave it out)")
    created(rest.http.post("/l3/links", params={"link_name": "N", "validate_only": "true"},
                           json={"source_cluster_id": "west", "remote_cluster_id": "west"}))
    msg = error(create_link(rest, "l3", "M", "w" * 100_000), 400, 40002)
    assert msg == (f"source_cluster_id '{'w' * 39}... (100,002 characters): a cluster id here "
                   "is a cluster name, 1 to 64 letters, digits, '_' or '-'")
    assert [d["link_name"] for d in rest.http.get("/l3/links").json()["data"]] == ["L"]


def test_link_configs_list_and_alter(rest):
    clusters(rest, "l4")
    created(create_link(rest, "l4", "C", "west"))
    r = rest.http.get("/l4/links/C/configs")
    assert r.status_code == 200
    body = r.json()
    assert (body["kind"], body["metadata"]) == (
        "KafkaLinkConfigDataList", {"self": f"{rest.api}/l4/links/C/configs", "next": None})
    names = [d["name"] for d in body["data"]]
    assert names == sorted(LINK_CONFIG_DEFAULTS)
    by_name = {d["name"]: d for d in body["data"]}
    assert by_name["consumer.offset.sync.ms"] == {
        "kind": "KafkaLinkConfigData",
        "metadata": {"self": f"{rest.api}/l4/links/C/configs/consumer.offset.sync.ms",
                     "resource_name": None},
        "cluster_id": "l4",
        "name": "consumer.offset.sync.ms",
        "value": "30000",
        "is_default": True,
        "is_read_only": False,
        "is_sensitive": False,
        "default": True,
        "read_only": False,
        "sensitive": False,
        "source": "DEFAULT_CONFIG",
        "synonyms": [],
        "link_name": "C",
    }
    assert by_name["cluster.link.prefix"]["is_read_only"] is True

    def alter(data, **query):
        return rest.http.put("/l4/links/C/configs:alter", params=query, json={"data": data})

    def config(name):
        return {d["name"]: d for d in rest.http.get("/l4/links/C/configs").json()["data"]}[name]

    created(alter([{"name": "consumer.offset.sync.ms", "value": "5000"},
                   {"name": "acl.sync.ms", "value": "7000", "operation": "SET"}]))
    got = config("consumer.offset.sync.ms")
    assert (got["value"], got["is_default"], got["source"]) == (
        "5000", False, "DYNAMIC_CLUSTER_LINK_CONFIG")
    assert config("acl.sync.ms")["value"] == "7000"
    created(alter([{"name": "acl.sync.ms", "value": "1"}], validate_only="true"))
    r = rest.http.put("/l4/links/C/configs:alter",
                      json={"data": [{"name": "acl.sync.ms", "value": "2"}],
                            "validate_only": True})
    created(r)
    assert config("acl.sync.ms")["value"] == "7000"  # validate_only changed nothing
    created(alter([{"name": "consumer.offset.sync.ms", "operation": "DELETE"}]))
    assert config("consumer.offset.sync.ms")["is_default"] is True
    created(alter([{"name": "cluster.link.paused", "value": "true"}]))
    assert rest.http.get("/l4/links/C").json()["link_state"] == "PAUSED"
    assert "Not a number" in error(alter([{"name": "acl.sync.ms", "value": "x"}]), 400, 40002)
    error(alter([{"name": "acl.sync.ms"}]), 400, 40002,
          "Config acl.sync.ms: operation SET needs a value")
    error(alter([{"name": "acl.sync.ms", "value": "1", "operation": "APPEND"}]), 400, 400,
          'data[0].operation in the request body of updateKafkaLinkConfigBatch is "APPEND": '
          "it must be one of SET, DELETE")
    # a key named twice, whatever its operations (Kafka's incrementalAlterConfigs): refused,
    # nothing changed (the last entry won)
    for dup in ([{"name": "acl.sync.ms", "value": "111"},
                 {"name": "acl.sync.ms", "operation": "DELETE"}],
                [{"name": "acl.sync.ms", "value": "1"}, {"name": "acl.sync.ms", "value": "2"}]):
        error(alter(dup), 400, 40002, "Error due to duplicate config keys : acl.sync.ms")
    assert config("acl.sync.ms")["value"] == "7000"
    error(rest.http.put("/l4/links/C/configs:alter", json={}), 400, 400,
          "data is missing in the request body of updateKafkaLinkConfigBatch: "
          "AlterConfigBatchRequestData requires data")
    error(rest.http.put("/l4/links/X/configs:alter", json={"data": []}), 404, 404,
          "Cluster link 'X' not found")
    error(rest.http.get("/l4/links/X/configs"), 404, 404, "Cluster link 'X' not found")


def test_link_delete(rest):
    clusters(rest, "l5")
    topic(rest, "west", "del-t", 2)
    created(create_link(rest, "l5", "D", "west"))
    created(rest.http.post("/l5/links/D/mirrors", json={"source_topic_name": "del-t"}))
    msg = error(rest.http.delete("/l5/links/D"), 400, 40002)
    assert msg.startswith("Cluster link 'D' is in use by mirror topics: del-t")
    created(rest.http.delete("/l5/links/D", params={"force": "true", "validate_only": "true"}))
    assert rest.http.get("/l5/links/D").status_code == 200
    created(rest.http.delete("/l5/links/D", params={"force": "true"}))
    error(rest.http.get("/l5/links/D"), 404, 404, "Cluster link 'D' not found")
    error(rest.http.delete("/l5/links/D"), 404, 404, "Cluster link 'D' not found")
    dd, k = engine(rest, "l5")
    assert k.describe_topic("del-t").mirror_link is None  # failed over: a normal topic now
    dd.close()


# -- mirror topics ------------------------------------------------------------------------


def test_mirror_create_get_list(rest):
    clusters(rest, "m1")
    created(create_link(rest, "m1", "M", "west"))
    created(rest.http.post("/m1/links/M/mirrors", headers=JSON,
                           json={"source_topic_name": "orders", "replication_factor": 1,
                                 "configs": [{"name": "min.insync.replicas", "value": "1"}]}))
    r = rest.http.get("/m1/links/M/mirrors/orders")
    assert r.status_code == 200
    got = r.json()
    expected = {
        "kind": "KafkaMirrorData",
        "metadata": {"self": f"{rest.api}/m1/links/M/mirrors/orders", "resource_name": None},
        "link_name": "M",
        "mirror_topic_name": "orders",
        "source_topic_name": "orders",
        "num_partitions": 2,
        "mirror_lags": [lag(0, 0, 5), lag(1, 0, 0)],  # the request's step copied the records
        "mirror_status": "ACTIVE",
        "mirror_topic_error": "NO_ERROR",
        "state_time_ms": got["state_time_ms"],
    }
    assert got == expected
    assert abs(got["state_time_ms"] - time.time() * 1000) < 600_000
    listing = {"kind": "KafkaMirrorDataList",
               "metadata": {"self": f"{rest.api}/m1/links/M/mirrors", "next": None},
               "data": [expected]}
    assert rest.http.get("/m1/links/M/mirrors").json() == listing
    assert rest.http.get("/m1/links/-/mirrors").json() == dict(
        listing, metadata={"self": f"{rest.api}/m1/links/-/mirrors", "next": None})
    for status, n in (("ACTIVE", 1), ("STOPPED", 0), ("LINK_PAUSED", 0)):
        for path in ("/m1/links/M/mirrors", "/m1/links/-/mirrors"):
            data = rest.http.get(path, params={"mirror_status": status}).json()["data"]
            assert len(data) == n, (path, status)
    for bad in ("BOGUS", "active"):  # MirrorTopicStatus is an enum of upper-case names
        assert error(rest.http.get("/m1/links/-/mirrors", params={"mirror_status": bad}),
                     400, 400).startswith(f'Query parameter mirror_status="{bad}" of '
                                          "listKafkaMirrorTopics: it must be one of ACTIVE, ")
    assert rest.http.get("/m1/links").json()["data"][0]["topic_names"] == ["orders"]


def test_mirror_errors(rest):
    clusters(rest, "m2")
    topic(rest, "m2", "local-topic")
    created(create_link(rest, "m2", "E", "west"))
    created(rest.http.post("/m2/links/E/mirrors", json={"source_topic_name": "orders"}))
    error(rest.http.post("/m2/links/E/mirrors", json={"source_topic_name": "orders"}),
          400, 40002, "Topic 'orders' already exists: a mirror topic is always created as a "
          "new topic (an existing topic can not be converted)")
    error(rest.http.post("/m2/links/E/mirrors", json={"source_topic_name": "nope"}),
          404, 40403, "Topic 'nope' does not exist on the source cluster west of link 'E'")
    # a name no topic can have is Topic.validate's refusal, not "does not exist"
    error(rest.http.post("/m2/links/E/mirrors", json={"source_topic_name": "bad/name"}),
          400, 40002, "Topic name is invalid: 'bad/name' contains one or more characters "
          "other than ASCII alphanumerics, '.', '_' and '-'")
    error(rest.http.post("/m2/links/E/mirrors", json={}), 400, 400,
          "source_topic_name is missing in the request body of createKafkaMirrorTopic: "
          "CreateMirrorTopicRequestData requires source_topic_name")
    error(rest.http.post("/m2/links/E/mirrors", json={"source_topic_name": "orders",
                                                      "replication_factor": "3"}),
          400, 400, 'replication_factor in the request body of createKafkaMirrorTopic is "3": '
                    "it must be an integer")
    # the mirror topic's replication factor, as a topic's (it was ignored: 204 for any)
    for rf, why in ((-5, "Replication factor must be larger than 0, or -1 to use the "
                         "default value."),
                    (3, "Unable to replicate the partition 3 time(s): The target replication "
                        "factor of 3 cannot be reached because only 1 broker(s) are "
                        "registered.")):
        error(rest.http.post("/m2/links/E/mirrors", json={"source_topic_name": "orders",
                                                          "replication_factor": rf}),
              400, 40002, why)
    # 1 and -1 pass it: the next rule speaks (the topic exists already)
    for rf in (1, -1):
        error(rest.http.post("/m2/links/E/mirrors", json={"source_topic_name": "orders",
                                                          "replication_factor": rf}),
              400, 40002, "Topic 'orders' already exists: a mirror topic is always created "
              "as a new topic (an existing topic can not be converted)")
    error(rest.http.post("/m2/links/X/mirrors", json={"source_topic_name": "orders"}),
          404, 404, "Cluster link 'X' not found")
    error(rest.http.get("/m2/links/E/mirrors/nope"), 404, 40403,
          "This server does not host this topic-partition: there is no topic 'nope'.")
    error(rest.http.get("/m2/links/E/mirrors/local-topic"), 404, 404,
          "Topic 'local-topic' is not a mirror topic of cluster link 'E'")
    error(rest.http.get("/m2/links/X/mirrors/orders"), 404, 404, "Cluster link 'X' not found")
    error(rest.http.get("/m2/links/X/mirrors"), 404, 404, "Cluster link 'X' not found")
    # createKafkaMirrorTopic declares no validate_only: refused, nothing created (a server
    # that ignored it would create the mirror)
    topic(rest, "west", "vo-t")
    error(rest.http.post("/m2/links/E/mirrors", params={"validate_only": "true"},
                         json={"source_topic_name": "vo-t"}), 400, 400,
          "Query parameter validate_only is not a parameter of createKafkaMirrorTopic (its "
          "parameters: none)")
    error(rest.http.get("/m2/links/E/mirrors/vo-t"), 404, 40403)


def alter(rest, cluster, link, how, body, **query) -> httpx.Response:
    return rest.http.post(f"/{cluster}/links/{link}/mirrors:{how}", params=query, json=body)


def alter_doc(rest, cluster, link, entries) -> dict:
    return {
        "kind": "KafkaPromoteMirror",
        "metadata": {"self": f"{rest.api}/{cluster}/links/{link}/mirrors",
                     "resource_name": None},
        "data": [{
            "kind": "AlterMirrorsData",
            "metadata": {"self": f"{rest.api}/{cluster}/links/{link}/mirrors/{name}",
                         "resource_name": None},
            "mirror_topic_name": name,
            "error_code": code,
            "error_message": message,
            "mirror_lags": lags,
            "messages_truncated": None,
            "partition_level_truncation_data": [],
            "clamps": clamps,
        } for name, code, message, lags, clamps in entries],
    }


def status(rest, cluster, link, name) -> dict:
    return rest.http.get(f"/{cluster}/links/{link}/mirrors/{name}").json()


def test_pause_and_resume(rest):
    clusters(rest, "ps", "pd")
    topic(rest, "ps", "p", 3)
    created(create_link(rest, "pd", "P", "ps"))
    created(rest.http.post("/pd/links/P/mirrors", json={"source_topic_name": "p"}))
    r = alter(rest, "pd", "P", "pause", {"mirror_topic_names": ["p", "not-a-mirror"]})
    assert r.status_code == 200
    assert r.json() == alter_doc(rest, "pd", "P", [
        ("p", None, None, [lag(0, 0, 3)], []),
        ("not-a-mirror", 400, "Topic 'not-a-mirror' is not mirrored", [], []),
    ])
    assert status(rest, "pd", "P", "p")["mirror_status"] == "PAUSED"
    assert [d["mirror_topic_name"] for d in rest.http.get(
        "/pd/links/-/mirrors", params={"mirror_status": "PAUSED"}).json()["data"]] == ["p"]
    dd, src = engine(rest, "ps")
    src.produce("p", [(None, b"x"), (None, b"y")], partition=0)
    dd.close()
    r = alter(rest, "pd", "P", "resume", {"mirror_topic_names": ["p"]}, validate_only="true")
    assert r.json()["data"][0]["error_code"] is None
    got = status(rest, "pd", "P", "p")
    assert (got["mirror_status"], got["mirror_lags"]) == ("PAUSED", [lag(0, 2, 3)])
    r = alter(rest, "pd", "P", "resume", {"mirror_topic_name_pattern": "p.*"})
    assert [d["mirror_topic_name"] for d in r.json()["data"]] == ["p"]
    got = status(rest, "pd", "P", "p")  # the resume request's step copied the two records
    assert (got["mirror_status"], got["mirror_lags"]) == ("ACTIVE", [lag(0, 0, 5)])
    assert alter(rest, "pd", "P", "pause", {"mirror_topic_name_pattern": "q.*"}).json()[
        "data"] == []
    assert status(rest, "pd", "P", "p")["mirror_status"] == "ACTIVE"
    error(alter(rest, "pd", "P", "pause", {}), 400, 400,
          "mirror_topic_names or mirror_topic_name_pattern is required")
    assert "mirror_topic_name_pattern" in error(
        alter(rest, "pd", "P", "pause", {"mirror_topic_name_pattern": "("}), 400, 40002)
    error(alter(rest, "pd", "P", "pause", {"mirror_topic_names": "p"}), 400, 400,
          'mirror_topic_names in the request body of updateKafkaMirrorTopicsPause is "p": '
          "it must be an array")
    error(alter(rest, "pd", "X", "pause", {"mirror_topic_names": ["p"]}), 404, 404,
          "Cluster link 'X' not found")


def test_validate_only_after_writes_changes_no_file_not_even_the_health_record(rest):
    """After a link and a mirror topic were created (writes that leave the store's health
    record, .<cluster>.db.checked), validate-only promote and config requests, and a
    refused create, leave every
    file of the data directory as it was, that record included: a connection that committed
    nothing records nothing when it closes."""
    def files() -> dict[str, bytes]:  # as they are: no checkpoint (that is a change too)
        return {p.name: p.read_bytes() for p in sorted(rest.data.iterdir()) if p.is_file()}

    clusters(rest, "vs", "vd")
    topic(rest, "vs", "v", 3)
    created(create_link(rest, "vd", "V1", "vs"))
    created(rest.http.post("/vd/links/V1/mirrors", json={"source_topic_name": "v"}))
    status(rest, "vd", "V1", "v")  # the create's step done (a GET runs it first)
    before = files()
    assert ".vd.db.checked" in before
    for _ in range(3):
        r = alter(rest, "vd", "V1", "promote", {"mirror_topic_names": ["v"]},
                  validate_only="true")
        assert r.status_code == 200, r.text
        created(rest.http.put("/vd/links/V1/configs:alter", params={"validate_only": "true"},
                              json={"data": [{"name": "acl.sync.ms", "value": "1"}]}))
        # refused creates too: a config named twice (nothing made, nothing recorded)
        error(create_link(rest, "vd", "V2", "vs", [{"name": "acl.sync.ms", "value": "1"},
                                                   {"name": "acl.sync.ms", "value": "2"}]),
              400, 40002, "Error due to duplicate config keys : acl.sync.ms")
    assert files() == before


def test_promote(rest):
    clusters(rest, "rs", "rd")
    topic(rest, "rs", "r", 4)
    created(create_link(rest, "rd", "R", "rs"))
    created(rest.http.post("/rd/links/R/mirrors", json={"source_topic_name": "r"}))
    r = alter(rest, "rd", "R", "promote", {"mirror_topic_names": ["r"]}, validate_only="true")
    assert r.json() == alter_doc(rest, "rd", "R", [("r", None, None, [lag(0, 0, 4)], [])])
    assert status(rest, "rd", "R", "r")["mirror_status"] == "ACTIVE"
    r = alter(rest, "rd", "R", "promote", {"mirror_topic_names": ["r"]})
    assert r.json() == alter_doc(rest, "rd", "R", [("r", None, None, [lag(0, 0, 4)], [])])
    assert status(rest, "rd", "R", "r")["mirror_status"] == "STOPPED"
    r = alter(rest, "rd", "R", "promote", {"mirror_topic_names": ["r"]})
    # Confluent's own example text for this case, with the mirror's lags (its example
    # lists them: AlterMirrorStatusResponseData's mirror_lags is required, [] only for a
    # topic that is no mirror)
    assert r.json() == alter_doc(rest, "rd", "R", [
        ("r", 400, "Topic 'r' has already stopped its mirror from 'R'", [lag(0, 0, 4)], [])])
    r = alter(rest, "rd", "R", "pause", {"mirror_topic_names": ["r"]})
    assert r.json() == alter_doc(rest, "rd", "R", [
        ("r", 400, "Topic 'r' is STOPPED: only an active or paused mirror can be paused or "
         "resumed", [lag(0, 0, 4)], [])])
    dd, dst = engine(rest, "rd")
    dst.produce("r", [(None, b"writable")])  # a normal topic now
    dd.close()


def test_the_seeds_clamping_example_through_rest(rest):
    """Source at 100, mirrored up to 90; group A committed 80 and B 95, both synced; after a
    failover through REST, A stays at 80 and B is clamped to 90."""
    clusters(rest, "seed-src", "seed-dst")
    topic(rest, "seed-src", "t", 90)
    dd, src = engine(rest, "seed-src")
    src.commit("A", {("t", 0): 80})
    src.commit("B", {("t", 0): 85})
    dd.close()
    created(create_link(rest, "seed-dst", "DR", "seed-src", SYNC_CONFIGS))
    # the request's step copies the 90 records and syncs both groups' offsets
    created(rest.http.post("/seed-dst/links/DR/mirrors", json={"source_topic_name": "t"}))
    assert status(rest, "seed-dst", "DR", "t")["mirror_lags"] == [lag(0, 0, 90)]
    dd, src = engine(rest, "seed-src")
    src.produce("t", [(None, f"v{i}".encode()) for i in range(90, 100)], partition=0)
    src.commit("B", {("t", 0): 95})
    Mirrors(dd, "seed-dst", SystemClock()).sync_offsets("DR")  # B's 95 reaches the destination
    dd.set_down("seed-src", True)  # ... and the source is lost before records 90..99 are
    _, dst = engine(rest, "seed-dst")
    assert dst.committed("A") == {("t", 0): 80} and dst.committed("B") == {("t", 0): 95}
    assert dst.offsets("t")[0].log_end == 90
    dd.close()

    r = alter(rest, "seed-dst", "DR", "promote", {"mirror_topic_names": ["t"]})
    [refused] = r.json()["data"]
    assert refused["error_code"] == 400
    assert refused["error_message"].startswith(
        "Topic 't' can not be promoted: the source cluster seed-src is not reachable")
    clamp = {"group": "B", "topic": "t", "partition": 0, "from": 95, "to": 90}
    r = alter(rest, "seed-dst", "DR", "failover", {"mirror_topic_names": ["t"]},
              validate_only="true")
    assert r.json()["data"][0]["clamps"] == [clamp]
    assert status(rest, "seed-dst", "DR", "t")["mirror_status"] == "SOURCE_UNAVAILABLE"
    r = alter(rest, "seed-dst", "DR", "failover", {"mirror_topic_names": ["t"]})
    assert r.status_code == 200
    data = r.json()["data"]
    assert data == alter_doc(rest, "seed-dst", "DR", [
        ("t", None, None, data[0]["mirror_lags"], [clamp])])["data"]
    assert [p["last_source_fetch_offset"] for p in data[0]["mirror_lags"]] == [90]
    assert status(rest, "seed-dst", "DR", "t")["mirror_status"] == "STOPPED"
    dd, dst = engine(rest, "seed-dst")
    assert dst.committed("A") == {("t", 0): 80}
    assert dst.committed("B") == {("t", 0): 90}
    dd.close()


# -- authentication and binding -----------------------------------------------------------


def test_bearer_token(rest, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-Token_1\n")
    token_file.chmod(0o600)
    server = Server(rest.data, tmp_path, "--auth-token-file", str(token_file), json_line=False)
    try:
        assert re.search(rf"Serving the REST API v3 of {re.escape(str(rest.data))} on "
                         r"http://127\.0\.0\.1:\d+/kafka/v3/clusters/\{cluster\}\n",
                         server.stderr())
        url = server.url + "/kafka/v3/clusters/east/links"
        r = httpx.get(url)
        error(r, 401, 40101, "Authentication failed")
        assert r.headers["www-authenticate"].startswith("Bearer")
        error(httpx.get(url, headers={"Authorization": "Bearer wrong"}), 401, 40101,
              "Authentication failed")
        error(httpx.get(url, headers={"Authorization": "Basic s3cret-Token_1"}), 401, 40101)
        r = httpx.get(url, headers={"Authorization": "Bearer s3cret-Token_1"})
        assert r.status_code == 200 and r.json()["kind"] == "KafkaLinkDataList"
        # with a token, any Host header is served (the token defeats DNS rebinding)
        r = httpx.get(url, headers={"Authorization": "bearer s3cret-Token_1",
                                    "Host": "jetlink.example"})
        assert r.status_code == 200
        error(httpx.post(url, params={"link_name": "Z"}, json={"source_cluster_id": "west"}),
              401, 40101)
    finally:
        server.stop()


@pytest.fixture
def jl_serve(jl):
    """``jetlink serve ...`` in-process: for the refusals that happen before binding."""
    return lambda *args: jl("serve", *args)


def test_a_data_directory_that_is_not_there_is_not_served(jl):
    """A misspelt --data-dir: said as every verb says it (REST makes no cluster, so it
    could only ever serve nothing), nothing made, nothing bound."""
    missing = jl.tmp / "nodata"
    result = jl("--data-dir", str(missing), "serve", "--port", "0")
    assert (result.exit_code, result.stderr) == (1, (
        f"jetlink: error: data directory {missing} does not exist (nothing to read or act on: "
        "the first command that creates something makes it)\n"))
    assert not missing.exists()


@pytest.mark.parametrize("host", ["a..b", "."])
def test_a_host_no_resolver_takes_is_a_usage_error(jl_serve, host):
    """A label empty or too long: said in one line (not the IDNA codec's traceback)."""
    result = jl_serve("--host", host, "--port", "0")
    assert (result.exit_code, result.stderr) == (2, (
        f"jetlink: error: --host: host {host!r} is no host name (label empty or too long)\n"))


def test_non_loopback_host_needs_a_token(jl_serve):
    result = jl_serve("--host", "0.0.0.0")
    assert result.exit_code == 2
    assert "--host 0.0.0.0 is not a loopback address" in result.stderr
    assert "--auth-token-file" in result.stderr
    result = jl_serve("--host", "0.0.0.0", "-j")
    assert result.exit_code == 2
    assert "is not a loopback address" in json.loads(result.stdout)["error"]["description"]


@pytest.mark.parametrize("mode, text, complaint", [
    (0o644, "t0ken", "accessible by its group or others (mode 0644)"),
    (0o640, "t0ken", "chmod 600"),
    (0o600, "  \n", "the file is empty"),
    (0o600, "two words", "one word of printable characters"),
])
def test_token_file_is_checked(jl_serve, tmp_path, mode, text, complaint):
    token_file = tmp_path / "token"
    token_file.write_text(text)
    token_file.chmod(mode)
    result = jl_serve("--host", "0.0.0.0", "--auth-token-file", str(token_file))
    assert result.exit_code == 2
    assert complaint in result.stderr


def test_missing_token_file(jl_serve, tmp_path):
    result = jl_serve("--auth-token-file", str(tmp_path / "absent"))
    assert result.exit_code == 2
    assert "No such file or directory" in result.stderr


def test_loopback_rules():
    """The Host header rule (names not resolved; the bound address is
    tests/test_rest_load.py's)."""
    from jetlink.cli.rest.server import is_loopback_host

    for host in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST."):
        assert is_loopback_host(host), host
    for host in ("0.0.0.0", "::", "10.0.0.1", "example.com"):
        assert not is_loopback_host(host), host


def test_link_id_is_the_uuid_of_cluster_link_id():
    from jetlink.cli.rest.server import link_id_uuid

    # Confluent's example pair (REST v3 OpenAPI, ListLinksResponseData)
    assert link_id_uuid("eEBkTffYSESld6EO898x3w") == "7840644d-f7d8-4844-a577-a10ef3df31df"


# -- integers past any range (core/numbers.py parse_int) -----------------------------------

BIG = "9" * 5000  # more digits than Python's int() converts (4,300)


@pytest.mark.parametrize(("cluster", "value"), [("big1", BIG), ("big2", "9" * 29),
                                                  ("big3", f"-{BIG}")],
                         ids=["5000-digits", "29-digits", "minus-5000-digits"])
def test_link_config_integer_past_any_range_is_a_400(rest, cluster, value):
    clusters(rest, cluster)
    created(create_link(rest, cluster, "B", "west"))
    shown = value if len(value) <= 100 else f"{value[:40]}... ({len(value):,} characters)"
    want = (f"Invalid value {shown} for configuration consumer.offset.sync.ms: "
            "Not a number of type INT")
    error(rest.http.put(f"/{cluster}/links/B/configs/consumer.offset.sync.ms",
                        json={"value": value}), 400, 40002, want)
    error(rest.http.put(f"/{cluster}/links/B/configs:alter",
                        json={"data": [{"name": "consumer.offset.sync.ms", "value": value}]}),
          400, 40002, want)
    error(create_link(rest, cluster, "B2", "west",
                      [{"name": "consumer.offset.sync.ms", "value": value}]), 400, 40002, want)
    got = {d["name"]: d for d in rest.http.get(f"/{cluster}/links/B/configs").json()["data"]}
    assert got["consumer.offset.sync.ms"]["value"] == "30000"


def test_json_number_past_any_range_is_a_400(rest):
    clusters(rest, "big4")
    created(create_link(rest, "big4", "B", "west"))
    r = rest.http.put("/big4/links/B/configs/consumer.offset.sync.ms", headers=JSON,
                      content=b'{"value": ' + BIG.encode() + b"}")
    error(r, 400, 400, "Request body is not valid JSON: a number of 5,000 digits (more than "
                       "4,300, past any value a field takes)")


# -- stopping ------------------------------------------------------------------------------------
STOP_DEADLINE = 30.0  # generous: the stop itself takes about a second (STOP_GRACE)


def _stopped_by(tmp_path: Path, sig: int, **popen: Any) -> tuple[int, str]:
    """A served request, then ``sig``: the exit status and stderr of `jetlink serve`."""
    data = tmp_path / "data"
    dd = DataDir(data)
    dd.add_cluster("kwest", "kafka")
    dd.close()
    server = Server(data, tmp_path, **popen)
    try:
        assert httpx.get(server.url + "/kafka/v3/clusters/kwest/links", timeout=10
                         ).status_code == 200
        server.proc.send_signal(sig)
        try:
            code = server.proc.wait(STOP_DEADLINE)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"serve still running {STOP_DEADLINE}s after {sig!r}: "
                                 f"{server.stderr()}") from None
        return code, server.stderr()
    finally:
        server.stop()


def test_sigterm_stops_serve_gracefully_with_status_0(tmp_path):
    """systemctl stop / docker stop send SIGTERM: the same graceful stop as Ctrl-C, and the
    status of a clean stop (docs/serve.md)."""
    code, err = _stopped_by(tmp_path, signal.SIGTERM)
    assert code == 0, (code, err)
    assert "Traceback" not in err and "Error" not in err, err


def test_a_stop_lets_the_running_request_finish_and_answers_it(tmp_path):
    """SIGTERM while the engine runs a request that takes longer than the stop's grace (a
    pattern matched until its 2 s bound): the request finishes and is answered with what it
    did (here its 400), never the stop's 503, which would say that nothing was done."""
    data = tmp_path / "data"
    dd = DataDir(data)
    for name in ("kwest", "keast"):
        dd.add_cluster(name, "kafka")
    Kafka(dd.open("kwest"), SystemClock()).create_topic("a" * 40, 1)
    dd.close()
    server = Server(data, tmp_path)
    try:
        http = httpx.Client(base_url=server.url + "/kafka/v3/clusters", timeout=60)
        http.post("/keast/links", params={"link_name": "L"},
                  headers={"Content-Type": "application/json"},
                  json={"source_cluster_id": "kwest"}).raise_for_status()
        http.post("/keast/links/L/mirrors", headers={"Content-Type": "application/json"},
                  json={"source_topic_name": "a" * 40}).raise_for_status()
        answer: list[httpx.Response] = []
        threading.Thread(target=lambda: answer.append(http.post(
            "/keast/links/L/mirrors:pause", headers={"Content-Type": "application/json"},
            json={"mirror_topic_name_pattern": "(a+)+b"})), daemon=True).start()

        def matching() -> bool:  # the pattern's child interpreter runs: the engine is in it
            tasks = Path(f"/proc/{server.proc.pid}/task")
            return any((t / "children").read_text().split() for t in tasks.iterdir())

        wait_until(matching, message="the pattern being matched in a child interpreter")
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(STOP_DEADLINE) == 0, server.stderr()
        wait_until(lambda: answer, message="the pause's answer")
        assert answer[0].status_code == 400, (answer[0].status_code, answer[0].text)
        assert "took longer than 2 s" in answer[0].json()["message"]
    finally:
        server.stop()


def test_sigint_stops_serve_with_status_130(tmp_path):
    code, err = _stopped_by(tmp_path, signal.SIGINT)
    assert code == 130, (code, err)
    assert "Traceback" not in err, err


def test_sigint_stops_serve_with_status_130_from_a_background_job(tmp_path):
    """A shell starts a background job with SIGINT ignored; `kill -INT` still stops the
    server (uvicorn listens to it) and the status is the documented 130."""
    code, err = _stopped_by(tmp_path, signal.SIGINT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert code == 130, (code, err)
    assert "Traceback" not in err, err


def test_mirror_topic_name_pattern_is_read_as_java_reads_it(tmp_path):
    """Confluent's server matches mirror_topic_name_pattern with java.util.regex: Java's
    named groups, quoting and POSIX classes select what they select there; what Python
    would read otherwise (a class intersection) is a 400 naming it, the pattern quoted as
    sent, nothing paused."""
    data = tmp_path / "data"
    dd = DataDir(data)
    for name in ("kwest", "keast"):
        dd.add_cluster(name, "kafka")
    k = Kafka(dd.open("kwest"), SystemClock())
    for topic in ("orders", "payments"):
        k.create_topic(topic, 1)
    dd.close()
    server = Server(data, tmp_path)
    try:
        http = httpx.Client(base_url=server.url + "/kafka/v3/clusters/keast/links",
                            headers={"Content-Type": "application/json"}, timeout=60)
        http.post("", params={"link_name": "L"}, json={"source_cluster_id": "kwest"}
                  ).raise_for_status()
        for topic in ("orders", "payments"):
            http.post("/L/mirrors", json={"source_topic_name": topic}).raise_for_status()
        for pattern, selected in (("(?<x>or)ders", ["orders"]), (r"\Qorders\E", ["orders"]),
                                  (r"\p{Lower}+", ["orders", "payments"])):
            r = http.post("/L/mirrors:pause", params={"validate_only": "true"},
                          json={"mirror_topic_name_pattern": pattern})
            assert r.status_code == 200, (pattern, r.text)
            assert sorted(d["mirror_topic_name"] for d in r.json()["data"]) == selected
        r = http.post("/L/mirrors:pause", json={"mirror_topic_name_pattern": "[a-z&&[^x]]+"})
        assert (r.status_code, r.json()) == (400, {"error_code": 40002, "message": (
            "mirror_topic_name_pattern '[a-z&&[^x]]+': the class intersection && at 4 is "
            "read otherwise here: list the characters the class keeps (a Java regular "
            "expression)")})
        states = {m["mirror_topic_name"]: m["mirror_status"]
                  for m in http.get("/L/mirrors").json()["data"]}
        assert states == {"orders": "ACTIVE", "payments": "ACTIVE"}
        assert "Warning" not in server.stderr()
    finally:
        server.stop()
