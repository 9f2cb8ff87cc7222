"""``jetlink bench serve``: requests per second and latency of ``jetlink serve`` (Confluent's
REST API v3 over the embedded engine) with several concurrent clients.

For every client count a fresh data directory gets the same content, made through the engine
before the server starts (not timed): clusters ``kwest`` and ``keast`` (``kafka`` kind),
topics ``t0`` .. ``t19`` on ``kwest`` with :data:`RECORDS` records each, and on ``keast``
:data:`LINKS` links ``b0`` .. (one per client of the largest count, so every count works on
the same amount of data), link ``bI`` holding mirror topic ``bI_tK`` (K = I mod 20). A real
``jetlink serve --port 0 -j`` process then serves it and ``clients`` threads, each with its
own keep-alive HTTP connection (``http.client``), share ``rounds`` rounds of :data:`MIX`
(client I works on link ``bI``): the same requests in the same proportions whatever the
client count. The clock runs from the first request to the last answer; requests/s counts
the answers with the expected status; p50 / p99 are over every request (a refused or
timed-out one counts with the time it took). Then the server gets SIGINT and the time it
takes to exit is measured (killed after :data:`STOP_WAIT` seconds).

Checks (an error, not a figure, when they fail): every round's requests were sent, every
answer has the expected status, and afterwards every mirror topic the setup made still
exists as a mirror with its records (nothing acknowledged is lost). A request that got no
answer within ``timeout`` (a figure: ``unanswered``) is not counted in requests/s.

Standard library only (the server is a subprocess: ``python -m jetlink.cli.main``).
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..errors import JetlinkError

__all__ = ["CLIENTS", "MIX", "bench_serve", "measure_clients"]

CLIENTS = (1, 5, 20, 50)
TOPICS = 20
RECORDS = 100
LINKS = max(CLIENTS)
STOP_WAIT = 15.0
START_WAIT = 60.0
API = "/kafka/v3/clusters/keast"

# One round of client I (link bI, mirror bI_tK, a scratch link bI-r): (name, method, path,
# body, expected statuses). Four of the eight change something (each ends with the server's
# bounded replication step); the scratch link is created and deleted, so the data directory
# does not grow from round to round.
MIX: tuple[tuple[str, str, str, Any, tuple[int, ...]], ...] = (
    ("create link", "POST", "/links?link_name={link}-r", {"source_cluster_id": "kwest"},
     (201, 204)),
    ("get link", "GET", "/links/{link}-r", None, (200,)),
    ("delete link", "DELETE", "/links/{link}-r", None, (200, 204)),
    ("get mirror", "GET", "/links/{link}/mirrors/{mirror}", None, (200,)),
    ("list mirrors", "GET", "/links/{link}/mirrors", None, (200,)),
    ("alter configs", "PUT", "/links/{link}/configs:alter",
     {"data": [{"name": "consumer.offset.sync.ms", "value": "{ms}"}]}, (204,)),
    ("pause mirror", "POST", "/links/{link}/mirrors:pause",
     {"mirror_topic_names": ["{mirror}"]}, (200,)),
    ("resume mirror", "POST", "/links/{link}/mirrors:resume",
     {"mirror_topic_names": ["{mirror}"]}, (200,)),
)


def _names(i: int) -> dict[str, str]:
    return {"link": f"b{i}", "mirror": f"b{i}_t{i % TOPICS}"}


def _fill(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return value.format(**names)
    if isinstance(value, list):
        return [_fill(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, names) for k, v in value.items()}
    return value


def _setup(data: str) -> None:
    """The data directory every client count starts from (module doc)."""
    from ..clock import SystemClock
    from ..kafka.links import Links
    from ..kafka.mirrors import Mirrors
    from ..kafka.topics import Kafka
    from ..store import DataDir

    clock = SystemClock()
    dd = DataDir(data)
    try:
        dd.add_cluster("kwest", "kafka")
        dd.add_cluster("keast", "kafka")
        west = Kafka(dd.open("kwest"), clock)
        for k in range(TOPICS):
            west.create_topic(f"t{k}", 1)
            west.produce(f"t{k}", [(None, f"r{j}".encode()) for j in range(RECORDS)])
        links = Links.open(dd, "keast", clock)
        mirrors = Mirrors(dd, "keast", clock)
        for i in range(LINKS):
            names = _names(i)
            links.create(names["link"], "kwest", {"cluster.link.prefix": f"b{i}_"})
            mirrors.create(names["mirror"], names["link"], source_topic=f"t{i % TOPICS}")
        from ..step import bounded_step

        def fail(err: Exception) -> None:
            raise err

        bounded_step(dd, clock, fail)  # the mirrors hold their records before the clock runs
    finally:
        dd.close()


def _lost(data: str) -> list[str]:
    """Mirror topics of the setup that are no longer mirrors holding their records."""
    from ..clock import SystemClock
    from ..kafka.mirrors import Mirrors
    from ..store import DataDir

    dd = DataDir(data)
    try:
        m = Mirrors(dd, "keast", SystemClock())
        have = {i.mirror_topic_name: i for i in m.list()}
        out = []
        for i in range(LINKS):
            name = _names(i)["mirror"]
            info = have.get(name)
            if info is None or sum(p.log_end for p in info.mirror_lags) < RECORDS:
                out.append(name)
        return out
    finally:
        dd.close()


@dataclass
class _Server:
    proc: subprocess.Popen[str]
    host: str
    port: int
    log_path: str
    log: Any = field(repr=False, default=None)


def _start(data: str, tmp: str, command: list[str]) -> _Server:
    log_path = os.path.join(tmp, "serve.log")
    log = open(log_path, "w", encoding="utf-8")  # noqa: SIM115 - closed by _stop
    env = {k: v for k, v in os.environ.items()
           if k not in ("JETLINK_CONTEXT", "JETLINK_CLUSTER", "JETLINK_DATA_DIR")}
    env["XDG_CONFIG_HOME"] = os.path.join(tmp, "config")
    proc = subprocess.Popen([*command, "--data-dir", data, "serve", "--port", "0", "-j"],
                            stdout=subprocess.PIPE, stderr=log, text=True, env=env)
    line = _readline(proc, START_WAIT)
    if not line:
        proc.kill()
        log.close()
        raise RuntimeError(f"jetlink serve did not start: {_tail(log_path)}")
    url = urlsplit(json.loads(line)["url"])
    return _Server(proc, url.hostname or "127.0.0.1", url.port or 80, log_path, log)


def _readline(proc: subprocess.Popen[str], wait: float) -> str:
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(proc.stdout.readline()  # type: ignore
                                                        ), daemon=True)
    reader.start()
    reader.join(wait)
    return got[0] if got else ""


def _tail(path: str, n: int = 2000) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()[-n:]


def _stop(server: _Server) -> float:
    """SIGINT, then the seconds until the process exited (killed after STOP_WAIT)."""
    t0 = time.perf_counter()
    server.proc.send_signal(signal.SIGINT)
    try:
        server.proc.wait(STOP_WAIT)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait()
    seconds = time.perf_counter() - t0
    server.log.close()
    return seconds


class _Client:
    """One keep-alive connection; reconnects after a failure."""

    def __init__(self, host: str, port: int, timeout: float) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.conn: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: Any) -> int:
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        headers = {"Host": f"127.0.0.1:{self.port}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        try:
            self.conn.request(method, path, body=data, headers=headers)
            resp = self.conn.getresponse()
            resp.read()
            return resp.status
        except (OSError, http.client.HTTPException):
            self.close()
            return 0  # no answer (timed out, connection reset)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def _client_run(server: _Server, i: int, rounds: int, timeout: float, start: threading.Barrier,
                out: list[tuple[str, int, float, bool]]) -> None:
    names = _names(i)
    client = _Client(server.host, server.port, timeout)
    try:
        start.wait()
        for r in range(rounds):
            ms = str(30_000 + r % 2)
            for name, method, path, body, expected in MIX:
                fields = {**names, "ms": ms}
                t0 = time.perf_counter()
                status = client.request(method, API + path.format(**fields),
                                        _fill(body, fields))
                out.append((name, status, time.perf_counter() - t0, status in expected))
    finally:
        client.close()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    k = min(len(ordered) - 1, max(0, int(round(q * len(ordered) + 0.5)) - 1))
    return ordered[k]


def measure_clients(clients: int, rounds: int, *, timeout: float = 30.0,
                    command: list[str] | None = None) -> dict[str, Any]:
    """One client count on its own data directory and server (module doc)."""
    if clients < 1 or clients > LINKS:
        raise ValueError(f"clients must be 1 to {LINKS}, not {clients}")
    if rounds < clients or rounds % clients:
        raise ValueError(f"rounds ({rounds}) must be a multiple of clients ({clients})")
    cmd = command or [sys.executable, "-m", "jetlink.cli.main"]
    tmp = tempfile.mkdtemp(prefix="jetlink-bench-serve-")
    try:
        data = os.path.join(tmp, "data")
        _setup(data)
        server = _start(data, tmp, cmd)
        stop_seconds = None
        try:
            results: list[list[tuple[str, int, float, bool]]] = [[] for _ in range(clients)]
            start = threading.Barrier(clients + 1)
            threads = [threading.Thread(target=_client_run, daemon=True,
                                        args=(server, i, rounds // clients, timeout, start,
                                              results[i]))
                       for i in range(clients)]
            for t in threads:
                t.start()
            start.wait()
            t0 = time.perf_counter()
            for t in threads:
                t.join()
            seconds = time.perf_counter() - t0
        finally:
            stop_seconds = _stop(server)
        done = [x for per in results for x in per]
        expected = rounds * len(MIX)
        if len(done) != expected:
            raise RuntimeError(f"{clients} clients: {len(done)} requests sent, not {expected}")
        ok = sum(1 for x in done if x[3])
        answered = sum(1 for x in done if x[1] != 0)
        wrong = sorted({f"{x[0]}: {x[1]}" for x in done if x[1] != 0 and not x[3]})
        lost = _lost(data)
        latencies = [x[2] for x in done]
        log = _tail(server.log_path, 1 << 20)
        return {
            "clients": clients,
            "requests": expected,
            "ok": ok,
            "unanswered": expected - answered,
            "wrong_status": wrong,
            "seconds": round(seconds, 3),
            "requests_per_sec": round(ok / seconds, 1) if seconds > 0 else 0.0,
            "p50_ms": round(_percentile(latencies, 0.50) * 1000, 1),
            "p99_ms": round(_percentile(latencies, 0.99) * 1000, 1),
            "max_ms": round(max(latencies) * 1000, 1),
            "stop_seconds": round(stop_seconds, 2),
            "log_lines": len(log.splitlines()),
            "lost_mirrors": lost,
            "p99_ms_by_request": {
                name: round(_percentile([x[2] for x in done if x[0] == name], 0.99) * 1000, 1)
                for name in (m[0] for m in MIX)},
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def bench_serve(clients: tuple[int, ...] = CLIENTS, rounds: int = 200, *,
                timeout: float = 30.0, command: list[str] | None = None) -> dict[str, Any]:
    """Every client count of ``clients`` in turn (module doc): ``{"rounds", "mix",
    "results": [one dict per count]}``; a JetlinkError when a count's checks fail (answers
    with an unexpected status, lost mirrors; requests not all sent: RuntimeError)."""
    out: list[dict[str, Any]] = []
    for n in clients:
        res = measure_clients(n, rounds, timeout=timeout, command=command)
        out.append(res)
        problems = [f"{p}: {', '.join(res[k])}" for k, p in (
            ("wrong_status", "answers with an unexpected status"),
            ("lost_mirrors", "mirror topics lost")) if res[k]]
        if problems:
            raise JetlinkError(f"jetlink serve with {n} clients: {'; '.join(problems)}")
    return {"rounds": rounds, "requests_per_round": len(MIX),
            "mix": [m[0] for m in MIX], "results": out}
