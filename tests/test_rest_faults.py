"""Faults of ``jetlink serve`` (docs/faults.md "jetlink serve"): oversize bodies
(Content-Length or chunked) are 413, deeply nested JSON is 400 before the parser recurses,
wrong content types 415 and malformed JSON 400, server faults 500 with a body that names no
path and no traceback (the details on stderr only), and a deterministic fuzz run over the
app in-process (Starlette's TestClient) and over a real ``jetlink serve`` (raw sockets, for
chunked bodies and Content-Length lies).

The fuzz tests print their counts: ``pytest -s tests/test_rest_faults.py -k fuzz``.
"""

from __future__ import annotations

import json
import random
import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from helpers import WAIT_TIMEOUT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_rest_server import Server

from jetlink.cli.rest import server as rest_server
from jetlink.cli.rest.server import (
    INTERNAL_ERROR,
    MAX_BODY_BYTES,
    MAX_JSON_DEPTH,
    STORE_ERROR,
    create_app,
    json_depth,
)
from jetlink.core.store import DataDir

API = "/kafka/v3/clusters"
JSON = {"Content-Type": "application/json"}
SEED = 22


def make_data(tmp: Path, bad: bool = False) -> Path:
    """A data directory with Kafka clusters ``east`` and ``west`` (topic ``orders``) and, when
    ``bad``, a cluster file ``bad.db`` that is not a SQLite database."""
    from jetlink.core.clock import SystemClock
    from jetlink.core.kafka.topics import Kafka

    data = tmp / "data"
    dd = DataDir(data)
    dd.add_cluster("east", "kafka")
    dd.add_cluster("west", "kafka")
    Kafka(dd.open("west"), SystemClock()).create_topic("orders", 1)
    dd.close()
    if bad:
        (data / "bad.db").write_bytes(b"this is not a SQLite database\n" * 200)
    return data


def client(data: Path):
    import warnings

    with warnings.catch_warnings():  # "install httpx2 instead": httpx is what the suite has
        warnings.filterwarnings("ignore", message=".*httpx2")
        from starlette.testclient import TestClient

    return TestClient(create_app(data), base_url="http://127.0.0.1",
                      raise_server_exceptions=False)


def confluent_error(status: int, headers, body: bytes, data: Path | None = None) -> dict:
    """The body is Confluent's error document, without a path of ``data`` or a traceback."""
    assert headers["content-type"] == "application/json", (status, body[:200])
    doc = json.loads(body)
    assert sorted(doc) == ["error_code", "message"], doc
    assert isinstance(doc["error_code"], int) and isinstance(doc["message"], str), doc
    assert b"Traceback" not in body
    if data is not None:
        assert str(data).encode() not in body and str(data.parent).encode() not in body
    return doc


def error(response, status: int, code: int, data: Path | None = None) -> str:
    assert response.status_code == status, response.text[:300]
    doc = confluent_error(response.status_code, response.headers, response.content, data)
    assert doc["error_code"] == code, doc
    return doc["message"]


@pytest.fixture
def app_client(tmp_path):
    data = make_data(tmp_path, bad=True)
    with client(data) as c:
        c.data = data
        yield c


# -- a real server and raw HTTP -------------------------------------------------------------


@dataclass
class Raw:
    """What a raw exchange gave: the status (None: the connection ended without an answer),
    headers (lower-case names) and body."""

    status: int | None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


def _read_response(sock: socket.socket, head_only: bool = False) -> Raw:
    buf = b""
    while b"\r\n\r\n" not in buf:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, TimeoutError):
            chunk = b""
        if not chunk:
            return Raw(None)
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    m = re.fullmatch(r"HTTP/1\.[01] (\d{3}) .*", lines[0])
    assert m, f"not an HTTP status line: {lines[0]!r}"
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    status = int(m.group(1))
    if head_only or status in (204, 304):
        return Raw(status, headers, b"")
    if "content-length" in headers:
        length = int(headers["content-length"])
    else:  # chunked, or until the server closes
        length = None
    while length is None or len(rest) < length:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, TimeoutError):
            break
        if not chunk:
            break
        rest += chunk
    if length is None:
        if headers.get("transfer-encoding", "").lower() == "chunked":
            rest = _dechunk(rest)
        return Raw(status, headers, rest)
    assert len(rest) >= length, f"short body: {len(rest)} of {length}"
    return Raw(status, headers, rest[:length])


def _dechunk(data: bytes) -> bytes:
    out = b""
    while data:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out, data = out + data[:size], data[size + 2:]
    return out


def raw_exchange(url: str, parts: list[bytes], *, pause: float = 0.0, close_early: bool = False,
                 head_only: bool = False) -> Raw:
    """Send ``parts`` on a fresh connection to ``url`` (``http://127.0.0.1:P``) and read one
    response; ``close_early``: close after sending, without waiting for one (Raw(None))."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        for part in parts:
            try:
                sock.sendall(part)
            except (BrokenPipeError, ConnectionResetError):
                break  # the server answered and closed: read what it said
            if pause:
                time.sleep(pause)
        if close_early:
            return Raw(None)
        return _read_response(sock, head_only)


def request_bytes(method: str, path: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in
                                                              headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def chunked(body: bytes, size: int = 65536) -> list[bytes]:
    """``body`` as HTTP/1.1 chunks (one part each), then the last chunk."""
    parts = [b"%x\r\n%s\r\n" % (len(body[i:i + size]), body[i:i + size])
             for i in range(0, len(body), size)]
    return [*parts, b"0\r\n\r\n"]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A ``jetlink serve`` subprocess on a data directory with ``east``, ``west`` and the
    unusable ``bad.db`` (written once the server runs: ``jetlink serve`` refuses to start on
    a data directory with an unusable database); ``served.log()`` is its stderr so far."""
    tmp = tmp_path_factory.mktemp("faults")
    data = make_data(tmp)
    server = Server(data, tmp)
    (data / "bad.db").write_bytes(b"this is not a SQLite database\n" * 200)
    server.log = server.stderr
    yield server
    server.stop()


def links_post(link: str = "x") -> str:
    return f"{API}/east/links?link_name={link}"


# -- 413: oversize bodies -------------------------------------------------------------------


def test_chunked_body_over_the_limit_is_413_like_a_content_length_one(served):
    before = served.log()
    headers = {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
    body = b'{"source_cluster_id": "' + b"w" * (MAX_BODY_BYTES + 10) + b'"}'
    r = raw_exchange(served.url, [request_bytes("POST", links_post(), headers), *chunked(body)])
    assert r.status == 413, r
    chunked_doc = confluent_error(413, r.headers, r.body, served.data)
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
    r = raw_exchange(served.url, [request_bytes("POST", links_post(), headers)])  # no body sent
    assert r.status == 413, r
    assert confluent_error(413, r.headers, r.body, served.data) == chunked_doc
    assert chunked_doc == {"error_code": 413, "message": "HTTP 413 Request Entity Too Large: "
                           f"a request body is at most {MAX_BODY_BYTES} bytes"}
    new = served.log()[len(before):]
    assert "Traceback" not in new and "_RequestBodyTooLarge" not in new, new
    lines = new.splitlines()
    assert len(lines) == 2 and all(line.startswith("jetlink: warning: POST ") and
                                   "413 Request Entity Too Large" in line for line in lines)
    # a chunked body within the limit is read in full
    ok = json.dumps({"source_cluster_id": "west", "configs": []}).encode()
    r = raw_exchange(served.url, [request_bytes("POST", links_post("chunked-ok"), {
        "Content-Type": "application/json", "Transfer-Encoding": "chunked"}), *chunked(ok, 7)])
    assert (r.status, r.body) == (204, b"")


def test_content_length_over_the_limit_in_process(app_client):
    r = app_client.post(links_post(), content=b"[" * (MAX_BODY_BYTES + 1), headers=JSON)
    assert "1048576 bytes" in error(r, 413, 413, app_client.data)
    # on a GET too: the limit is the server's, whatever the route
    r = app_client.request("GET", f"{API}/east/links", content=b" " * (MAX_BODY_BYTES + 1))
    error(r, 413, 413, app_client.data)


# -- 400: nesting, malformed JSON -------------------------------------------------------------


@pytest.mark.parametrize("unit, close", [("[", "]"), ('{"a":', "}"), ('[{"a":', "}]")])
def test_deeply_nested_json_is_400_before_parsing(app_client, capsys, unit, close):
    for depth in (100_000, 1_000, MAX_JSON_DEPTH + 1):
        n = depth // (unit.count("[") + unit.count("{")) + 1
        body = (unit * n + "0" + close * n).encode()
        assert json_depth(body.decode()) > MAX_JSON_DEPTH
        r = app_client.post(links_post(), content=body, headers=JSON)
        msg = error(r, 400, 400, app_client.data)
        assert msg == ("Request body is not valid JSON: arrays and objects nest deeper than "
                       f"{MAX_JSON_DEPTH} levels")
    assert capsys.readouterr().err == ""  # a client's error: nothing on the log


def test_nesting_up_to_the_limit_and_brackets_in_strings_are_parsed(app_client):
    # Parsed: the refusal is the schema's (the field is not CreateLinkRequestData's), not the
    # JSON parser's.
    deep = "[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1)  # inside the object: 64
    r = app_client.post(links_post(), headers=JSON,
                        content=json.dumps({"source_cluster_id": "west", "x": json.loads(deep)}))
    assert error(r, 400, 400).startswith("x in the request body of createKafkaLink is not a "
                                         "field of CreateLinkRequestData")
    # 100,000 brackets inside a string (escaped quotes included) are not nesting
    text = '\\"[{' * 100_000
    r = app_client.post(links_post("y"), headers=JSON,
                        content=f'{{"source_cluster_id": "west", "note": "{text}"}}')
    assert error(r, 400, 400).startswith("note in the request body of createKafkaLink is not "
                                         "a field of CreateLinkRequestData")


def test_json_depth():
    assert json_depth("") == json_depth('"[[["') == json_depth("1") == 0
    assert json_depth('[1, {"a": [2]}, []]') == 3
    assert json_depth('["]", "\\"]", [{}]]') == 3
    assert json_depth('"\\"[[[' + "[" * 5) == 0  # an unterminated string runs to the end
    assert json_depth("[" * 100_000) == 100_000
    # escaped quotes after a bracket: linear, not quadratic. 3,000,000 of them take a
    # fraction of a second scanned once and days scanned again from each quote; run apart,
    # so a quadratic scan fails at the deadline instead of holding the test.
    scan = subprocess.run(
        [sys.executable, "-c", "from jetlink.cli.rest.server import json_depth; "
         "print(json_depth('[' + '\"\\\\\"' * 3_000_000))"],
        capture_output=True, text=True, timeout=WAIT_TIMEOUT)
    assert (scan.returncode, scan.stdout, scan.stderr) == (0, "1\n", "")


@pytest.mark.parametrize("body, complaint", [
    (b"{nope", "Expecting property name"),
    (b'{"source_cluster_id": NaN}', "NaN is not a JSON value"),
    (b'{"source_cluster_id": "west", "configs": [{"name": "a", "value": Infinity}]}',
     "Infinity is not a JSON value"),
    (b'{"source_cluster_id": "\\ud800"}', "lone surrogate"),
    (b'{"source_cluster_id": "west", "configs": [{"name": "\\udfff", "value": "1"}]}',
     "lone surrogate"),
    (b"\xff\xfe\xfd", "not valid JSON"),
    (b'{"a": 1' + b"1" * 5000 + b"}", "not valid JSON"),
])
def test_malformed_json_is_400(app_client, capsys, body, complaint):
    msg = error(app_client.post(links_post(), content=body, headers=JSON), 400, 400,
                app_client.data)
    assert msg.startswith("Request body is not valid JSON") and complaint in msg, msg
    assert capsys.readouterr().err == ""


# -- 415: content types ---------------------------------------------------------------------


@pytest.mark.parametrize("headers", [
    {"Content-Type": "text/plain"},
    {},
    {"Content-Type": "application/x-www-form-urlencoded"},
    {"Content-Type": "multipart/form-data; boundary=x"},
    {"Content-Type": "application/xml"},
    {"Content-Type": "json"},
])
def test_wrong_content_types_are_415(app_client, headers):
    body = b'{"source_cluster_id": "west"}'
    for path, method in ((links_post(), "POST"), (f"{API}/east/links/L/configs:alter", "PUT"),
                         (f"{API}/east/links/L/mirrors:promote", "POST")):
        r = app_client.request(method, path, content=body, headers=headers)
        assert error(r, 415, 415, app_client.data).startswith(
            "HTTP 415 Unsupported Media Type")
    r = app_client.post(links_post(), data={"source_cluster_id": "west"})
    error(r, 415, 415)
    r = app_client.post(links_post(), files={"f": ("a.json", b"{}", "application/json")})
    error(r, 415, 415)
    # a JSON media type with parameters, or a +json one, is JSON
    for ctype in ("application/json; charset=utf-8", "application/vnd.kafka.v3+json"):
        r = app_client.post(links_post(), content=b"{nope", headers={"Content-Type": ctype})
        assert "not valid JSON" in error(r, 400, 400)


# -- 500: server faults ---------------------------------------------------------------------


def test_an_unusable_database_is_500_without_its_path(served):
    """A request of the damaged cluster is a 500 without its path (the path on the log);
    the cluster listing lists the others (200) and logs the damaged one as left out."""
    before = served.log()
    for path in (f"{API}/bad/links", f"{API}/bad/links/-/mirrors"):
        r = raw_exchange(served.url, [request_bytes("GET", path, {})])
        assert r.status == 500, r
        doc = confluent_error(500, r.headers, r.body, served.data)
        assert doc == {"error_code": 500, "message": STORE_ERROR}
    r = raw_exchange(served.url, [request_bytes("POST", f"{API}/bad/links?link_name=L", {
        "Content-Type": "application/json", "Content-Length": "29"},
        b'{"source_cluster_id": "west"}')])
    assert r.status == 500 and b"bad.db" not in r.body
    listed = raw_exchange(served.url, [request_bytes("GET", API, {})])
    assert listed.status == 200 and b'"cluster_id":"bad"' not in listed.body
    lines = served.log()[len(before):].splitlines()
    assert len(lines) == 4, lines  # one line per fault, no traceback
    bad = str(served.data / "bad.db")
    for line in lines[:3]:
        assert line.startswith("jetlink: error: ") and f"cluster bad: {bad}" in line, line
    assert lines[3].startswith("jetlink: warning: GET /kafka/v3/clusters: cluster bad left "
                               f"out: cluster bad: {bad}"), lines[3]
    assert raw_exchange(served.url, [request_bytes("GET", f"{API}/east/links", {})]).status == 200


def test_an_unexpected_exception_is_500_with_the_traceback_on_the_log_only(app_client, capsys,
                                                                           monkeypatch):
    from jetlink.core.kafka.links import Links

    def boom(*_args, **_kwargs):
        raise RuntimeError(f"boom in {app_client.data / 'east.db'}")

    monkeypatch.setattr(Links, "list", boom)
    r = app_client.get(f"{API}/east/links")
    assert error(r, 500, 500, app_client.data) == INTERNAL_ERROR
    err = capsys.readouterr().err
    first, *rest = err.splitlines()
    assert first == (f"jetlink: error: GET {API}/east/links: 500 RuntimeError: boom in "
                     f"{app_client.data / 'east.db'}")
    assert rest[0] == "Traceback (most recent call last):" and "RuntimeError" in rest[-1]


def test_an_exception_outside_the_endpoints_is_500_too(app_client, capsys, monkeypatch):
    def boom(_host):
        raise ValueError(f"cannot judge the host (in {app_client.data})")

    monkeypatch.setattr(rest_server, "is_loopback_host", boom)
    r = app_client.get(f"{API}/east/links")
    assert error(r, 500, 500, app_client.data) == INTERNAL_ERROR
    err = capsys.readouterr().err
    assert err.startswith(f"jetlink: error: GET {API}/east/links: 500 ValueError: cannot judge")
    assert "Traceback (most recent call last):" in err


def test_log_lines_escape_control_characters(app_client, capsys, monkeypatch):
    from jetlink.core.kafka.links import Links

    def disk_full(*_args, **_kwargs):
        raise OSError("disk\nfull")

    monkeypatch.setattr(Links, "get", disk_full)
    r = app_client.get(f"{API}/east/links/a%0Ab")
    assert error(r, 500, 500, app_client.data) == STORE_ERROR
    err = capsys.readouterr().err
    assert err == f"jetlink: error: GET {API}/east/links/a%0Ab: 500 OSError: disk\\nfull\n"


# -- the fuzz run -----------------------------------------------------------------------------


@dataclass
class Counts:
    tried: int = 0
    ok: int = 0  # 2xx
    refused: int = 0  # 4xx with Confluent's body
    http_layer: int = 0  # 400 from uvicorn's HTTP parser (before the app)
    faults: int = 0  # 500 with STORE_ERROR for the unusable cluster: expected
    crashes: int = 0  # any other 5xx, or a dropped connection
    left: int = 0  # the client closed before its body was complete: no answer is due
    statuses: dict[int, int] = field(default_factory=dict)
    crashed: list[str] = field(default_factory=list)  # what crashed, for the failure message

    def line(self, what: str) -> str:
        return (f"{what}: tried {self.tried}, 2xx {self.ok}, refused cleanly (4xx) "
                f"{self.refused + self.http_layer}"
                + (f" (by uvicorn's parser {self.http_layer})" if self.http_layer else "")
                + (f", client left mid-body {self.left}" if self.left else "")
                + f", expected server faults (500) {self.faults}, crashes {self.crashes}; "
                f"statuses {dict(sorted(self.statuses.items()))}")


ROUTES = [
    ("GET", ""), ("GET", "/links"), ("POST", "/links"), ("GET", "/links/L"),
    ("DELETE", "/links/L"), ("GET", "/links/L/configs"), ("PUT", "/links/L/configs:alter"),
    ("GET", "/links/L/mirrors"), ("GET", "/links/-/mirrors"), ("POST", "/links/L/mirrors"),
    ("GET", "/links/L/mirrors/orders"), ("POST", "/links/L/mirrors:promote"),
    ("POST", "/links/L/mirrors:failover"), ("POST", "/links/L/mirrors:pause"),
    ("POST", "/links/L/mirrors:resume"), ("POST", "/links/L/mirrors:reverse-and-start-mirror"),
    ("POST", "/links/L/mirrors:reverse-and-pause-mirror"),
]
VALID_BODIES = [
    {"source_cluster_id": "west", "configs": [{"name": "consumer.offset.sync.ms",
                                               "value": "1000"}]},
    {"data": [{"name": "consumer.offset.sync.ms", "value": "2000", "operation": "SET"}]},
    {"source_topic_name": "orders", "mirror_topic_name": "orders"},
    {"mirror_topic_names": ["orders"]},
    {"mirror_topic_name_pattern": ".*"},
]
ODD_SEGMENTS = [
    "..", "%2e%2e", "%2E%2E%2F%2E%2E", "%2F", "a%2Fb", "%00", "%ff", "%C3%A9t%C3%A9", "%25",
    ".", "", "-", "%20", "a b", "L?x=1", "L#frag", "~", "%u0041", "\u00e9",
    "a" * 300, "b" * 9000, "x:y", ";", "%0d%0aX-Injected: 1",
]
ODD_CTYPES = [None, "text/plain", "application/x-www-form-urlencoded",
              "multipart/form-data; boundary=z", "application/xml", "application/json",
              "application/json; charset=utf-8", "application/problem+json", "*/*", "",
              "application/json\x7f"]
ODD_METHODS = ["PATCH", "OPTIONS", "TRACE", "HEAD", "FOO", "PROPFIND"]


def mutate(rng: random.Random, raw: bytes) -> bytes:
    """One malformation of ``raw``."""
    how = rng.randrange(12)
    if how == 0:
        return raw[: rng.randrange(len(raw))]
    if how == 1:
        i = rng.randrange(len(raw))
        return raw[:i] + bytes([rng.randrange(256)]) + raw[i + 1:]
    if how == 2:
        i = rng.randrange(len(raw))
        return raw[:i] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 20))) + raw[i:]
    if how == 3:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    if how == 4:
        return raw.replace(b'"', b"'")
    if how == 5:
        return rng.choice([b"NaN", b"-Infinity", b"1e999", b"-0", b"null", b"true", b"[]",
                           b'"str"', b"1" * 5000, b'"\\ud800"', b"\xef\xbb\xbf{}",
                           b"{}{}", b'{"a":1,"a":2}'])
    if how == 6:  # a field of the wrong type
        doc = json.loads(raw)
        key = rng.choice(list(doc))
        doc[key] = rng.choice([None, 1, -1, 1.5, True, "", "x" * 1000, [], {}, [1, "a"],
                               [{"name": 1}], {"name": "x"}, "\ud800"])
        return json.dumps(doc).encode("utf-8", "surrogatepass")
    if how == 7:  # nesting around the limit, or far beyond it
        depth = rng.choice([MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 500, 5000,
                            100_000])
        unit, close = rng.choice([(b"[", b"]"), (b'{"a":', b"}")])
        closed = rng.random() < 0.5
        return unit * depth + b"1" + (close * depth if closed else b"")
    if how == 8:  # brackets inside strings
        return b'{"source_cluster_id": "' + b"[{" * rng.randrange(1, 5000) + b'"}'
    if how == 9:
        return raw.decode().encode(rng.choice(["utf-16", "utf-32", "utf-16-be", "latin-1"]))
    if how == 10:
        return b" \t\r\n" * rng.randrange(1, 10)
    return raw + b"," + raw


def fuzz_inputs(rng: random.Random, n: int) -> list[tuple[str, str, dict[str, str], bytes]]:
    """``n`` requests (method, path with query, headers, body), a deterministic function of
    ``rng``: malformed JSON, nesting, oversize bodies, wrong content types, odd methods and
    odd paths and queries, over every route of the three clusters (east, west, nowhere)."""
    out = []
    for i in range(n):
        method, route = rng.choice(ROUTES)
        cluster = rng.choice(["east", "west", "nowhere"])
        link = rng.choice(["L", "L", "M", "west-link"])
        path = f"{API}/{cluster}{route}".replace("/L", f"/{link}")
        query = ""
        headers: dict[str, str] = {}
        body = b""
        kind = i % 6
        if method in ("POST", "PUT"):
            headers["Content-Type"] = "application/json"
            body = json.dumps(rng.choice(VALID_BODIES)).encode()
            if route == "/links":
                query = f"?link_name={rng.choice(['fz', 'fz2', 'L', ''])}{i % 7}"
        if kind == 0:  # malformed JSON
            body = mutate(rng, json.dumps(rng.choice(VALID_BODIES)).encode())
            headers["Content-Type"] = "application/json"
            method = rng.choice(["POST", "PUT", method])
        elif kind == 1:  # wrong content type
            ctype = rng.choice(ODD_CTYPES)
            headers.pop("Content-Type", None)
            if ctype is not None:
                headers["Content-Type"] = ctype
            body = body or json.dumps(rng.choice(VALID_BODIES)).encode()
        elif kind == 2:  # odd method
            method = rng.choice(ODD_METHODS)
        elif kind == 3:  # odd path segments
            segs = path.split("/")
            j = rng.randrange(4, len(segs) + 1)
            segs.insert(j, rng.choice(ODD_SEGMENTS))
            path = "/".join(segs)
            if rng.random() < 0.3:
                path = rng.choice(["/", "//", "/kafka", "/kafka/v3", f"{API}/", f"{API}//links",
                                   f"{API}/east/links/../../west/links", "/%2e%2e/etc/passwd",
                                   "/" + "x" * 20000])
        elif kind == 4:  # odd queries
            query = "?" + "&".join(rng.choice([
                "validate_only=maybe", "validate_only=", "force=TRUE", "link_name=%00",
                "link_name=a%2Fb", "link_name=" + "n" * 500, "mirror_status=%ff",
                "mirror_status=PAUSED", "validate_link=no", "x=%", "=", "&&", "a=1&a=2",
                "link_name=..%2F..", "validate_only=true",
            ]) for _ in range(rng.randrange(1, 4)))
        elif rng.random() < 0.05:  # oversize, a few
            body = b'{"source_cluster_id": "' + b"x" * MAX_BODY_BYTES + b'"}'
        out.append((method, path + query, headers, body))
    return out


def check_response(counts: Counts, status: int | None, headers, body: bytes, data: Path,
                   with_bad: bool, method: str) -> None:
    """Count one response and check it (``with_bad``: the data directory holds the unusable
    ``bad.db``, so a 500 with STORE_ERROR is the expected answer of a request that opens it:
    a cluster list, or cluster ``bad``; the caller checks that the log names only it)."""
    counts.tried += 1
    if status is None:
        counts.crashes += 1
        counts.crashed.append(f"{method}: no response")
        return
    counts.statuses[status] = counts.statuses.get(status, 0) + 1
    assert 100 <= status <= 599
    assert b"Traceback" not in body and str(data).encode() not in body, body[:300]
    if status >= 500:
        if with_bad and status == 500 and json.loads(body)["message"] == STORE_ERROR:
            counts.faults += 1
        else:
            counts.crashes += 1
            counts.crashed.append(f"{method}: {status} {body[:200]!r}")
        return
    if status >= 400:
        if method != "HEAD":
            confluent_error(status, headers, body, data)
        counts.refused += 1
        return
    counts.ok += 1
    if body:
        json.loads(body)


FUZZ_INPUTS = 600


def test_fuzz_in_process(tmp_path, capsys):
    data = make_data(tmp_path, bad=True)
    rng = random.Random(SEED)
    inputs = fuzz_inputs(rng, FUZZ_INPUTS)
    # the unusable cluster: the same requests, some of them, on it (server faults)
    inputs += [(m, p.replace(f"{API}/east", f"{API}/bad", 1), h, b)
               for m, p, h, b in rng.sample(inputs, 30) if p.startswith(f"{API}/east")]
    counts = Counts()
    with client(data) as c:
        for method, path, headers, body in inputs:
            r = c.request(method, path, headers=headers, content=body)
            check_response(counts, r.status_code, r.headers, r.content, data, True, method)
        assert c.get(f"{API}/east/links").status_code == 200
    err = capsys.readouterr().err
    assert "Traceback" not in err, err[-3000:]
    for line in err.splitlines():  # only 413 warnings and the bad cluster's fault lines
        assert line.startswith(("jetlink: warning: ", "jetlink: error: ")), line
        assert "413 Request Entity Too Large" in line or "bad.db" in line, line
    with capsys.disabled():
        print("\n" + counts.line("REST fuzz, in-process (TestClient)"))
    assert counts.tried == len(inputs) and counts.crashes == 0, counts.crashed
    assert counts.refused > counts.tried // 2 and counts.faults > 0 and counts.ok > 0


def test_fuzz_over_a_real_server(served):
    """Chunked bodies and Content-Length lies, which only a real HTTP server sees, on raw
    sockets; uvicorn's own parser refuses framing errors with its 400 text (counted apart)."""
    rng = random.Random(SEED)
    before = served.log()
    counts = Counts()
    big = b'{"source_cluster_id": "' + b"y" * MAX_BODY_BYTES + b'"}'
    cases: list[tuple[str, list[bytes], dict]] = []
    for i in range(40):
        body = rng.choice([big, json.dumps(rng.choice(VALID_BODIES)).encode()])
        if rng.random() < 0.5:
            body = mutate(rng, json.dumps(rng.choice(VALID_BODIES)).encode())
        path = f"{API}/{rng.choice(['east', 'west', 'nowhere'])}/links?link_name=r{i}"
        ctype = rng.choice(["application/json", "application/json", "text/plain"])
        chunk = rng.choice([1, 100, 65536] if len(body) < 10_000 else [4096, 65536])
        head = {"Content-Type": ctype, "Transfer-Encoding": "chunked"}
        cases.append(("chunked", [request_bytes("POST", path, head), *chunked(body, chunk)], {}))
    for i in range(10):  # Content-Length smaller than the body: the body is cut there
        body = json.dumps(rng.choice(VALID_BODIES)).encode()
        head = {"Content-Type": "application/json", "Content-Length": str(len(body) // 2)}
        cases.append(("short length", [request_bytes("POST", links_post(f"s{i}"), head, body)],
                      {}))
    for i in range(5):  # Content-Length larger than what comes, then the client leaves
        head = {"Content-Type": "application/json", "Content-Length": "1000"}
        cases.append(("long length", [request_bytes("POST", links_post(f"g{i}"), head, b"{")],
                      {"close_early": True}))
    framing = [
        b"GARBAGE\r\n\r\n",
        b"GET / HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n",
        request_bytes("POST", links_post(), {"Content-Length": "abc"}),
        request_bytes("POST", links_post(), {"Content-Length": "-1"}),
        request_bytes("POST", links_post(), {"Content-Length": "2", "content-length": "3"},
                      b"{}"),
        request_bytes("POST", links_post(), {"Transfer-Encoding": "chunked"}) + b"zz\r\n",
        request_bytes("GET", "/" + "x" * 70000, {}),
        request_bytes("GET", f"{API}/east/links", {"X-Big": "v" * 70000}),
        request_bytes("POST", links_post(), {"Content-Length": "5",
                                             "Transfer-Encoding": "chunked"}) + b"0\r\n\r\n",
        b"GET /\xff\xfe HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(40),  # a TLS hello
    ]
    cases += [("framing", [raw], {}) for raw in framing]
    for what, parts, opts in cases:
        r = raw_exchange(served.url, parts, **opts)
        if opts.get("close_early"):
            counts.tried += 1
            counts.left += 1  # nothing to answer; the server must live on (checked below)
            continue
        if what == "framing" and r.status == 400 and r.headers.get(
                "content-type", "").startswith("text/plain"):
            assert r.body == b"Invalid HTTP request received.", r
            counts.tried += 1
            counts.http_layer += 1
            counts.statuses[400] = counts.statuses.get(400, 0) + 1
            continue
        check_response(counts, r.status, r.headers, r.body, served.data, False, "POST")
    final = raw_exchange(served.url, [request_bytes("GET", f"{API}/east/links", {})])
    assert final.status == 200 and served.proc.poll() is None
    log = served.log()[len(before):]
    assert "Traceback" not in log, log[-3000:]
    print("\n" + counts.line("REST fuzz, jetlink serve over raw sockets"))
    assert counts.crashes == 0, counts.crashed
    assert counts.refused > 0 and counts.http_layer > 0


@pytest.fixture(scope="module")
def hypo_client(tmp_path_factory):
    data = make_data(tmp_path_factory.mktemp("hypo"))
    with client(data) as c:
        c.data = data
        yield c


HYPO = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])


@HYPO
@given(body=st.one_of(
    st.binary(max_size=300),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                 lambda inner: st.lists(inner, max_size=4)
                 | st.dictionaries(st.sampled_from(["source_cluster_id", "configs", "name",
                                                    "value", "data", "operation",
                                                    "mirror_topic_names",
                                                    "source_topic_name"]), inner, max_size=4),
                 max_leaves=20).map(lambda d: json.dumps(d).encode()),
), route=st.sampled_from([r for r in ROUTES if r[0] in ("POST", "PUT")]))
def test_fuzz_hypothesis_bodies(hypo_client, body, route):
    method, path = route
    r = hypo_client.request(method, f"{API}/east{path}?link_name=h", content=body,
                            headers=JSON)
    counts = Counts()
    check_response(counts, r.status_code, r.headers, r.content, hypo_client.data, False,
                   method)
    assert counts.crashes == 0, r.text


@HYPO
@given(segment=st.text(min_size=1, max_size=40), query=st.text(max_size=40))
def test_fuzz_hypothesis_paths(hypo_client, segment, query):
    from urllib.parse import quote

    r = hypo_client.get(f"{API}/east/links/{quote(segment, safe='')}/mirrors"
                        f"?mirror_status={quote(query, safe='')}")
    counts = Counts()
    check_response(counts, r.status_code, r.headers, r.content, hypo_client.data, False, "GET")
    assert counts.crashes == 0, r.text
