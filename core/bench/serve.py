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

The pairs (:func:`bench_pairs`): on the same data directory, pair J creates link ``pJ``
and then a mirror topic on it (:data:`PAIR_MIX`, each answered 204), 1 client making the
pairs in a row and 20 clients sharing the same pairs, each count on its own server, the
count that goes first alternating run by run: pairs/s from the first request to the last
answer, each run's ratio 20 clients / 1 client and their median. Not timed: the wait (with a
deadline, :data:`REPLICATED_WAIT`) until the server lists every new mirror topic caught up,
then, the server stopped, the check that every link and mirror topic is in the data
directory with its records.

Standard library only (the server is a subprocess: ``python -m jetlink.cli.main``).
"""

from __future__ import annotations

import contextlib
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
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..errors import JetlinkError
from .children import child_env

__all__ = ["CLIENTS", "MIX", "PAIR_CLIENTS", "PAIR_MIX", "bench_serve", "measure_clients",
           "measure_pairs"]

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


# The pairs (``bench serve``'s figure for creating links): pair J = a new link ``pJ`` (prefix
# ``pJ_``) and a mirror topic on it of source topic ``tK`` (K = J mod 20), each 204 (both
# operations declare 204 No Content: cli/rest/schemas.py). Every client count makes the same
# pairs; client I makes pairs I, I + clients, ... in order.
PAIR_CLIENTS = (1, 20)
PAIRS = 200
PAIR_MIX: tuple[tuple[str, str, str, Any, tuple[int, ...]], ...] = (
    ("create link", "POST", "/links?link_name={link}",
     {"source_cluster_id": "kwest",
      "configs": [{"name": "cluster.link.prefix", "value": "{link}_"}]}, (204,)),
    ("create mirror", "POST", "/links/{link}/mirrors", {"source_topic_name": "{source}"},
     (204,)),
)
# How long the records of the pairs' mirror topics may take to be replicated after the last
# answer (not timed: a deadline for the check only).
REPLICATED_WAIT = 300.0


def _pair_names(j: int) -> dict[str, str]:
    return {"link": f"p{j}", "source": f"t{j % TOPICS}", "mirror": f"p{j}_t{j % TOPICS}"}


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
    env = child_env(os.path.join(tmp, "config"))
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

    def get(self, path: str) -> tuple[int, Any]:
        """``GET path``: (status, the JSON document or None); status 0 without an answer."""
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            self.conn.request("GET", path, headers={"Host": f"127.0.0.1:{self.port}"})
            resp = self.conn.getresponse()
            body = resp.read()
            return resp.status, json.loads(body) if body else None
        except (OSError, http.client.HTTPException, ValueError):
            self.close()
            return 0, None

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def _client_run(server: _Server, mix: Any, rounds: list[dict[str, str]], timeout: float,
                start: threading.Barrier, out: list[tuple[str, int, float, bool]]) -> None:
    """One client: ``mix`` once per entry of ``rounds`` (the names filled in), in order."""
    client = _Client(server.host, server.port, timeout)
    try:
        start.wait()
        for fields in rounds:
            for name, method, path, body, expected in mix:
                t0 = time.perf_counter()
                status = client.request(method, API + path.format(**fields),
                                        _fill(body, fields))
                out.append((name, status, time.perf_counter() - t0, status in expected))
    finally:
        client.close()


def _drive(server: _Server, mix: Any, per_client: list[list[dict[str, str]]],
           timeout: float) -> tuple[list[tuple[str, int, float, bool]], float]:
    """Every client (one thread each, ``per_client[i]`` its rounds) started at once: the
    answers ``(request, status, seconds, expected)`` and the seconds from the first request
    to the last answer."""
    results: list[list[tuple[str, int, float, bool]]] = [[] for _ in per_client]
    start = threading.Barrier(len(per_client) + 1)
    threads = [threading.Thread(target=_client_run, daemon=True,
                                args=(server, mix, rounds, timeout, start, results[i]))
               for i, rounds in enumerate(per_client)]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    return [x for per in results for x in per], time.perf_counter() - t0


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    k = min(len(ordered) - 1, max(0, int(round(q * len(ordered) + 0.5)) - 1))
    return ordered[k]


def _check_share(clients: int, n: int, what: str) -> None:
    if clients < 1 or clients > LINKS:
        raise ValueError(f"clients must be 1 to {LINKS}, not {clients}")
    if n < clients or n % clients:
        raise ValueError(f"{what} ({n}) must be a multiple of clients ({clients})")


@contextlib.contextmanager
def _served(command: list[str] | None) -> Iterator[tuple[str, _Server]]:
    """A fresh data directory made by :func:`_setup` and a ``jetlink serve`` on it (the
    caller stops it, :func:`_stop`); the directory is removed at the end."""
    tmp = tempfile.mkdtemp(prefix="jetlink-bench-serve-")
    try:
        data = os.path.join(tmp, "data")
        _setup(data)
        yield data, _start(data, tmp, command or [sys.executable, "-m", "jetlink.cli.main"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def measure_clients(clients: int, rounds: int, *, timeout: float = 30.0,
                    command: list[str] | None = None) -> dict[str, Any]:
    """One client count on its own data directory and server (module doc)."""
    _check_share(clients, rounds, "rounds")
    with _served(command) as (data, server):
        per_client = [[{**_names(i), "ms": str(30_000 + r % 2)} for r in range(rounds // clients)]
                      for i in range(clients)]
        try:
            done, seconds = _drive(server, MIX, per_client, timeout)
        finally:
            stop_seconds = _stop(server)
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


def _replicated(server: _Server, pairs: int, timeout: float) -> float | None:
    """Polls ``GET /links/-/mirrors`` until every pair's mirror topic is listed with lag 0
    on every partition (its source's records all copied): the seconds that took after the
    last answer, None when :data:`REPLICATED_WAIT` passed first."""
    want = {_pair_names(j)["mirror"] for j in range(pairs)}
    client = _Client(server.host, server.port, timeout)
    t0 = time.perf_counter()
    try:
        while True:
            status, doc = client.get(API + "/links/-/mirrors")
            if status == 200:
                done = {m["mirror_topic_name"] for m in doc["data"]
                        if all(p["lag"] == 0 for p in m["mirror_lags"])}
                if want <= done:
                    return time.perf_counter() - t0
            if time.perf_counter() - t0 > REPLICATED_WAIT:
                return None
            time.sleep(0.05)
    finally:
        client.close()


def _pairs_missing(data: str, pairs: int) -> list[str]:
    """The pairs whose link or mirror topic (holding its source's records) is not in the
    data directory."""
    from ..clock import SystemClock
    from ..kafka.links import Links
    from ..kafka.mirrors import Mirrors
    from ..store import DataDir

    dd = DataDir(data)
    try:
        clock = SystemClock()
        links = {li.name for li in Links.open(dd, "keast", clock).list()}
        have = {i.mirror_topic_name: i for i in Mirrors(dd, "keast", clock).list()}
        out = []
        for j in range(pairs):
            names = _pair_names(j)
            info = have.get(names["mirror"])
            if names["link"] not in links:
                out.append(f"link {names['link']}")
            elif info is None or info.link_name != names["link"] or \
                    sum(p.log_end for p in info.mirror_lags) != RECORDS:
                out.append(f"mirror topic {names['mirror']}")
        return out
    finally:
        dd.close()


def measure_pairs(clients: int, pairs: int, *, timeout: float = 30.0,
                  command: list[str] | None = None) -> dict[str, Any]:
    """``pairs`` pairs of :data:`PAIR_MIX` shared by ``clients`` clients, on the data
    directory of :func:`_setup` and its own server: pairs/s from the first request to the
    last answer; then (not timed) the wait until the server lists every new mirror topic
    caught up, and after the server stopped, the check that every link and mirror topic is
    in the data directory with its records."""
    _check_share(clients, pairs, "pairs")
    with _served(command) as (data, server):
        per_client = [[_pair_names(j) for j in range(i, pairs, clients)]
                      for i in range(clients)]
        try:
            done, seconds = _drive(server, PAIR_MIX, per_client, timeout)
            waited = _replicated(server, pairs, timeout)
        finally:
            stop_seconds = _stop(server)
        if len(done) != 2 * pairs:
            raise RuntimeError(f"{clients} clients: {len(done)} requests sent, not {2 * pairs}")
        ok = sum(1 for a, b in zip(done[::2], done[1::2], strict=True) if a[3] and b[3])
        latencies = [x[2] for x in done]
        return {
            "clients": clients,
            "pairs": pairs,
            "ok": ok,
            "unanswered": sum(1 for x in done if x[1] == 0),
            "wrong_status": sorted({f"{x[0]}: {x[1]}" for x in done if x[1] != 0 and not x[3]}),
            "seconds": round(seconds, 3),
            "pairs_per_sec": round(ok / seconds, 1) if seconds > 0 else 0.0,
            "p50_ms": round(_percentile(latencies, 0.50) * 1000, 1),
            "p99_ms": round(_percentile(latencies, 0.99) * 1000, 1),
            "replicated_after_s": None if waited is None else round(waited, 2),
            "stop_seconds": round(stop_seconds, 2),
            "missing": _pairs_missing(data, pairs),
        }


def bench_pairs(pairs: int = PAIRS, runs: int = 1, *, timeout: float = 30.0,
                command: list[str] | None = None) -> dict[str, Any]:
    """:func:`measure_pairs` with 1 and 20 clients (:data:`PAIR_CLIENTS`), ``runs`` times,
    the side that goes first alternating run by run: each run's pairs/s per count, the
    ratio 20 clients / 1 client of each run and their median; a JetlinkError when a run's
    checks fail (an unexpected status, records not replicated within
    :data:`REPLICATED_WAIT`, a link or mirror topic missing)."""
    one, many = PAIR_CLIENTS
    runs_out: list[dict[str, Any]] = []
    for r in range(runs):
        order = (one, many) if r % 2 == 0 else (many, one)
        got = {}
        for n in order:
            res = measure_pairs(n, pairs, timeout=timeout, command=command)
            problems = [f"{p}: {', '.join(res[k])}" for k, p in (
                ("wrong_status", "answers with an unexpected status"),
                ("missing", "not in the data directory afterwards")) if res[k]]
            if res["replicated_after_s"] is None:
                problems.append(f"mirror topics not caught up {REPLICATED_WAIT:.0f} s after "
                                "the last answer")
            if problems:
                raise JetlinkError(f"jetlink serve, pairs with {n} clients: "
                                   f"{'; '.join(problems)}")
            got[n] = res
        runs_out.append({"first": order[0], "results": [got[one], got[many]],
                         "ratio": round(got[many]["pairs_per_sec"]
                                        / max(got[one]["pairs_per_sec"], 1e-9), 3)})
    ratios = sorted(x["ratio"] for x in runs_out)
    mid = len(ratios) // 2
    median = ratios[mid] if len(ratios) % 2 else (ratios[mid - 1] + ratios[mid]) / 2

    def med(n: int) -> float:
        v = sorted(next(r for r in x["results"] if r["clients"] == n)["pairs_per_sec"]
                   for x in runs_out)
        return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2

    return {"pairs": pairs, "runs": runs_out, "mix": [m[0] for m in PAIR_MIX],
            "one_client_pairs_per_sec": round(med(one), 1),
            "many_clients_pairs_per_sec": round(med(many), 1),
            "many_clients": many, "ratio_median": round(median, 3)}


def bench_serve(clients: tuple[int, ...] = CLIENTS, rounds: int = 200, *,
                pairs: int = PAIRS, pair_runs: int = 1, timeout: float = 30.0,
                command: list[str] | None = None) -> dict[str, Any]:
    """Every client count of ``clients`` in turn (module doc), then the pairs
    (:func:`bench_pairs`): ``{"rounds", "mix", "results": [one dict per count], "pairs":
    the pairs' document}``; ``rounds`` 0 leaves the mix out (``results`` empty), ``pairs``
    0 the pairs (``pairs`` None). A JetlinkError when a count's checks fail (answers with an
    unexpected status, lost mirrors; requests not all sent: RuntimeError)."""
    out: list[dict[str, Any]] = []
    for n in clients if rounds else ():
        res = measure_clients(n, rounds, timeout=timeout, command=command)
        out.append(res)
        problems = [f"{p}: {', '.join(res[k])}" for k, p in (
            ("wrong_status", "answers with an unexpected status"),
            ("lost_mirrors", "mirror topics lost")) if res[k]]
        if problems:
            raise JetlinkError(f"jetlink serve with {n} clients: {'; '.join(problems)}")
    paired = bench_pairs(pairs, pair_runs, timeout=timeout, command=command) if pairs else None
    return {"rounds": rounds, "requests_per_round": len(MIX),
            "mix": [m[0] for m in MIX], "results": out, "pairs": paired}
