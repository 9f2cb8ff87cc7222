"""``jetlink serve`` under load: concurrent clients lose no acknowledged write, the engine
thread (cli/rest/worker.py) drops abandoned work and shares steps, connections time out and
are capped (cli/rest/conn.py), accept failures are logged once, SIGINT stops the server
within two seconds, and loopback is decided on the address bound (cli/serve.py).

Real ``jetlink serve`` processes and real sockets, except for the worker's and the listening
socket's own tests.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import WAIT_TIMEOUT, wait_until
from test_rest_server import JSON, Server, server_env

from jetlink.cli.rest.conn import Listener, connection_cap
from jetlink.cli.rest.server import Anchor
from jetlink.cli.rest.worker import EngineWorker, Outcome, WorkerClosed
from jetlink.core.clock import SystemClock
from jetlink.core.kafka.links import Links
from jetlink.core.kafka.mirrors import Mirrors, pump_links
from jetlink.core.kafka.topics import Kafka
from jetlink.core.store import DataDir

API = "/kafka/v3/clusters"


def make_data(tmp: Path, topics: int = 20, records: int = 3) -> Path:
    """Clusters kwest and keast (kafka), topics t0.. on kwest with ``records`` records."""
    data = tmp / "data"
    dd = DataDir(data)
    dd.add_cluster("kwest", "kafka")
    dd.add_cluster("keast", "kafka")
    west = Kafka(dd.open("kwest"), SystemClock())
    for k in range(topics):
        west.create_topic(f"t{k}", 1)
        west.produce(f"t{k}", [(None, f"v{j}".encode()) for j in range(records)])
    dd.close()
    return data


# -- concurrent clients ---------------------------------------------------------------------


def test_concurrent_clients_lose_no_acknowledged_write(tmp_path):
    """Four clients, each on links of its own: create a link, two mirror topics, read them
    back, delete the previous link (forced); every acknowledged write is there afterwards,
    every acknowledged delete gone, and no replication step failed."""
    data = make_data(tmp_path)
    server = Server(data, tmp_path)
    created: dict[str, list[str]] = {}  # link -> its mirrors (acknowledged)
    deleted: set[str] = set()
    problems: list[str] = []
    lock = threading.Lock()

    def client(i: int) -> None:
        with httpx.Client(base_url=server.url + API + "/keast", timeout=60) as http:
            previous = None
            for j in range(6):
                link, prefix = f"l{i}-{j}", f"a{i}x{j}_"
                r = http.post("/links", params={"link_name": link}, headers=JSON, json={
                    "source_cluster_id": "kwest",
                    "configs": [{"name": "cluster.link.prefix", "value": prefix}]})
                if r.status_code != 204:
                    problems.append(f"create {link}: {r.status_code} {r.text}")
                    return
                with lock:
                    created[link] = []
                for k in ((i + j) % 20, (i + j + 7) % 20):
                    r = http.post(f"/links/{link}/mirrors", headers=JSON,
                                  json={"source_topic_name": f"t{k}"})
                    if r.status_code != 204:
                        problems.append(f"mirror {link} t{k}: {r.status_code} {r.text}")
                        continue
                    with lock:
                        created[link].append(prefix + f"t{k}")
                    r = http.get(f"/links/{link}/mirrors/{prefix}t{k}")
                    if r.status_code != 200:
                        problems.append(f"read back {prefix}t{k}: {r.status_code} {r.text}")
                if previous is not None:
                    r = http.delete(f"/links/{previous}", params={"force": "true"})
                    if r.status_code not in (200, 204):
                        problems.append(f"delete {previous}: {r.status_code} {r.text}")
                    else:
                        with lock:
                            deleted.add(previous)
                previous = link

    try:
        threads = [threading.Thread(target=client, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert problems == []
        assert len(created) == 24 and len(deleted) == 20
        with httpx.Client(base_url=server.url + API + "/keast", timeout=30) as http:
            for link, mirrors in created.items():
                status = http.get(f"/links/{link}").status_code
                assert status == (404 if link in deleted else 200), link
                if link in deleted:
                    continue
                assert len(mirrors) == 2
                for name in mirrors:
                    r = http.get(f"/links/{link}/mirrors/{name}")
                    assert r.status_code == 200, (name, r.text)
                    assert r.json()["mirror_status"] == "ACTIVE"
        log = server.stderr()
        assert "replication step failed" not in log and "Traceback" not in log, log
    finally:
        server.stop()
    # the engine agrees: the four remaining links' mirrors hold their records
    dd = DataDir(data)
    try:
        mirrors = {m.mirror_topic_name: m for m in Mirrors(dd, "keast", SystemClock()).list()}
        for link, names in created.items():
            for name in names:
                if link not in deleted:
                    assert sum(p.log_end for p in mirrors[name].mirror_lags) == 3, name
    finally:
        dd.close()


def test_mirrors_created_while_another_process_steps_are_kept(tmp_path):
    """The orphan cleanup of a link step (``Mirrors.drop_orphans``) running while mirror
    topics are created from another connection (another request, another process) never
    takes a new mirror for an orphan: it used to read the topics, then the mirror rows, and
    dropped a mirror created in between."""
    data = make_data(tmp_path, topics=150, records=1)
    creator = DataDir(data)
    links = Links.open(creator, "keast", SystemClock())
    links.create("L", "kwest", {"cluster.link.prefix": "m_"})
    stop = threading.Event()
    errors: list[BaseException] = []

    def stepper() -> None:
        dd = DataDir(data)
        try:
            while not stop.is_set():
                pump_links(dd, SystemClock())
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            dd.close()

    t = threading.Thread(target=stepper)
    t.start()
    try:
        m = Mirrors(creator, "keast", SystemClock())
        for k in range(150):
            m.create(f"m_t{k}", "L", source_topic=f"t{k}")
    finally:
        stop.set()
        t.join()
    assert errors == []
    names = {i.mirror_topic_name for i in Mirrors(creator, "keast", SystemClock()).list()}
    creator.close()
    assert names == {f"m_t{k}" for k in range(150)}


# -- the engine thread ----------------------------------------------------------------------


def test_abandoned_work_is_not_run_and_close_drops_the_queue():
    started, release, ran = threading.Event(), threading.Event(), []
    worker = EngineWorker(lambda: None)

    def blocking() -> Outcome:
        started.set()
        release.wait(WAIT_TIMEOUT)
        ran.append("first")
        return Outcome(value=1)

    first = worker.submit(blocking)
    assert started.wait(WAIT_TIMEOUT)
    gone = worker.submit(lambda: ran.append("abandoned") or Outcome(value=2))
    queued = worker.submit(lambda: ran.append("queued") or Outcome(value=3))
    assert gone.abandon()  # its client went away before it started
    assert not first.abandon()  # running: it finishes
    worker.close(wait=0)
    release.set()
    assert first.future.result(WAIT_TIMEOUT) == 1
    with pytest.raises(WorkerClosed):
        queued.future.result(WAIT_TIMEOUT)
    worker.close()
    assert ran == ["first"]
    late = worker.submit(lambda: Outcome(value=4))
    with pytest.raises(WorkerClosed):
        late.future.result(WAIT_TIMEOUT)


def test_requests_that_wrote_share_a_step_started_after_their_write():
    log: list[str] = []
    release = threading.Event()
    worker = EngineWorker(lambda: log.append("step"), step_every=10.0)

    def hold() -> Outcome:
        release.wait(WAIT_TIMEOUT)
        return Outcome(value="read")

    def write(n: int) -> Outcome:
        log.append(f"write {n}")
        return Outcome(value=n, wrote=True)

    jobs = [worker.submit(hold), *(worker.submit(lambda n=n: write(n)) for n in range(5))]
    release.set()
    assert [j.future.result(WAIT_TIMEOUT) for j in jobs] == ["read", 0, 1, 2, 3, 4]
    # the five writes were queued together: one step after the last of them
    assert log == ["write 0", "write 1", "write 2", "write 3", "write 4", "step"]
    failing = worker.submit(lambda: Outcome(error=ValueError("refused"), wrote=True))
    with pytest.raises(ValueError):
        failing.future.result(WAIT_TIMEOUT)
    assert log[-1] == "step"  # a refused request that wrote is answered after a step too
    worker.close()


def test_a_create_is_answered_before_the_step_of_its_link_which_follows():
    """Confluent answers a create before the link's first fetch: the job that created is
    answered while the step of its link has not run; that step runs in the background (once
    the queue is idle), for the links the creates named, and a full step is not run."""
    log: list[Any] = []
    release = threading.Event()

    def links_step(links: frozenset[tuple[str, str]]) -> None:
        release.wait(WAIT_TIMEOUT)
        log.append(sorted(links))

    worker = EngineWorker(lambda: log.append("step"), links_step=links_step, step_every=10.0)
    jobs = [worker.submit(lambda n=n: Outcome(value=n, links=frozenset({("east", f"L{n}")})),
                          create=True) for n in range(3)]
    assert [j.future.result(WAIT_TIMEOUT) for j in jobs] == [0, 1, 2]
    assert log == []  # answered, the links' step not done
    release.set()
    wait_until(lambda: log, message=lambda: f"the links' step ({log})")
    assert log == [[("east", "L0"), ("east", "L1"), ("east", "L2")]]
    # a job that is not a create runs after the step the creates before it owe; a request
    # that wrote is still answered after a full step
    worker.submit(lambda: Outcome(value="c", links=frozenset({("east", "L3")})), create=True)
    assert worker.submit(lambda: Outcome(value="w", wrote=True)).future.result(WAIT_TIMEOUT) \
        == "w"
    assert log[1:] == [[("east", "L3")], "step"]
    worker.close()


def test_the_engine_keeps_the_databases_open_while_busy_and_closes_them_when_idle(tmp_path):
    """While the engine thread works, the server's Anchor holds a connection to each
    database, so a request's own close is not the last one (no checkpoint then: the
    write-ahead log stays); once the thread is idle it is released and the last close
    checkpoints and removes the log, as without it."""
    data = make_data(tmp_path, topics=1)
    wal = data / "kwest.db-wal"
    anchor = Anchor(data)
    worker = EngineWorker(lambda: None, on_idle=anchor.release)

    def produce() -> Outcome:
        anchor.hold()
        dd = DataDir(data)
        try:
            Kafka(dd.open("kwest"), SystemClock()).produce("t0", [(None, b"x")])
        finally:
            dd.close()
        return Outcome(value=wal.exists())

    assert not wal.exists()
    assert worker.submit(produce).future.result(WAIT_TIMEOUT) is True
    wait_until(lambda: not wal.exists(), message="the log checkpointed once idle")
    assert anchor.store is None
    worker.close()


def test_queued_requests_share_the_held_databases_only_while_the_files_are_the_same(tmp_path):
    """A job with more queued behind it runs on the Anchor's DataDir (its writes counted
    through the held connections); a job with nothing queued opens its own; a cluster file
    removed and created again by another process is never written through the old
    connection: the Anchor is released, and held again on the new file."""
    data = make_data(tmp_path, topics=1)
    anchor = Anchor(data)
    anchor.hold(queued=False)
    assert anchor.shared() is None
    anchor.hold(queued=True)
    store = anchor.shared()
    assert store is not None
    before = anchor.changes()
    Kafka(store.open("kwest"), SystemClock()).produce("t0", [(None, b"x")])
    assert anchor.changes() > before  # the record written through the held connection
    # (jetlink cluster rm refuses while a connection is held: the files removed by hand)
    for suffix in ("", "-wal", "-shm"):
        (data / f"keast.db{suffix}").unlink(missing_ok=True)
    other = DataDir(data)
    other.add_cluster("keast", "kafka")
    other.close()
    assert anchor.shared() is None and anchor.store is None
    anchor.hold(queued=True)
    assert anchor.shared() is not None
    anchor.release()


def test_a_link_step_runs_only_the_links_named(tmp_path):
    """``pump_links(links=...)`` (the step a create owes in ``jetlink serve``) copies the
    records of the named links' mirror topics only."""
    data = make_data(tmp_path, topics=2)
    dd = DataDir(data)
    clock = SystemClock()
    try:
        links = Links.open(dd, "keast", clock)
        m = Mirrors(dd, "keast", clock)
        for name, topic in (("a", "t0"), ("b", "t1")):
            links.create(name, "kwest", {"cluster.link.prefix": f"{name}_"})
            m.create(f"{name}_{topic}", name, source_topic=topic)
        reports = pump_links(dd, clock, links={"keast": ["a", "gone"]})
        assert [(r.link, r.copied) for r in reports] == [("a", 3)]
        ends = {i.mirror_topic_name: sum(p.log_end for p in i.mirror_lags) for i in m.list()}
        assert ends == {"a_t0": 3, "b_t1": 0}
    finally:
        dd.close()


def test_sigint_stops_a_busy_server(tmp_path):
    """The server stops on SIGINT while 20 clients keep their connections busy (they stop
    only after it exited): the connections get their grace (cli/serve.py STOP_GRACE), they
    are not waited for."""
    data = make_data(tmp_path, topics=2)
    server = Server(data, tmp_path)
    stop = threading.Event()
    answered = [0] * 20

    def hammer(i: int) -> None:
        with httpx.Client(base_url=server.url + API + "/keast", timeout=30) as http:
            j = 0
            while not stop.is_set():
                try:
                    http.post("/links", params={"link_name": f"h{i}-{j}"}, headers=JSON,
                              json={"source_cluster_id": "kwest"})
                except httpx.TransportError:
                    return
                answered[i] += 1
                j += 1

    threads = [threading.Thread(target=hammer, args=(i,), daemon=True) for i in range(20)]
    try:
        for t in threads:
            t.start()
        wait_until(lambda: sum(answered) >= 100,
                   message=lambda: f"the clients' first 100 answers ({sum(answered)})")
        server.proc.send_signal(signal.SIGINT)
        server.proc.wait(WAIT_TIMEOUT)
        assert "Traceback" not in server.stderr()
    finally:
        stop.set()
        server.stop()


# -- connections ----------------------------------------------------------------------------


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``sock`` within ``seconds`` (it sends nothing first)."""
    sock.settimeout(seconds)
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def _address(server: Server) -> tuple[str, int]:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


@contextlib.contextmanager
def _beyond_the_cap(tmp_path, request_timeout: str):
    """A server with a cap of 16 connections and 40 idle ones opened to it, which has
    answered a request all the same: (server, its address, the idle sockets)."""
    data = make_data(tmp_path, topics=1)
    server = Server(data, tmp_path, "--request-timeout", request_timeout,
                    "--max-connections", "16")
    address = _address(server)
    socks: list[socket.socket] = []
    try:
        socks = [socket.create_connection(address) for _ in range(40)]  # idle, beyond the cap
        r = httpx.get(server.url + API + "/keast/links", timeout=WAIT_TIMEOUT)
        assert r.status_code == 200
        yield server, address, socks
    finally:
        for s in socks:
            s.close()
        server.stop()


def test_idle_connections_beyond_the_cap_make_room(tmp_path):
    """40 idle connections, a cap of 16 and an hour's request deadline: a request is answered,
    the cap closing the oldest idle ones (the deadline would close them an hour later)."""
    with _beyond_the_cap(tmp_path, "1h") as (_server, _address_, socks):
        assert _closed_within(socks[0], WAIT_TIMEOUT)  # the oldest: closed by the cap


def test_idle_partial_and_slow_connections_time_out_and_are_capped(tmp_path):
    with _beyond_the_cap(tmp_path, "1s") as (server, address, socks):
        idle = socket.create_connection(address)
        partial = socket.create_connection(address)
        partial.sendall(b"GET /kafka/v3/clusters HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: b")
        slow = socket.create_connection(address)
        slow.sendall(b"POST /kafka/v3/clusters/keast/links?link_name=s HTTP/1.1\r\n"
                     b"Host: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"source_")
        t0 = time.monotonic()
        for sock in (idle, partial, slow):
            assert _closed_within(sock, WAIT_TIMEOUT), sock
            sock.close()
        assert time.monotonic() - t0 > 0.5  # by the deadline (1 s from their start), not at once
        # every idle socket of the first batch was closed too (by the cap or the deadline)
        assert all(_closed_within(s, WAIT_TIMEOUT) for s in socks)
        assert httpx.get(server.url + API + "/keast/links/s",
                         timeout=WAIT_TIMEOUT).status_code == 404
        # a keep-alive connection that answered gets the same deadline for its next request
        with httpx.Client(timeout=WAIT_TIMEOUT) as http:
            assert http.get(server.url + API).status_code == 200
            time.sleep(1.5)
            assert http.get(server.url + API).status_code == 200  # reconnects
        assert len(server.stderr()) < 500, server.stderr()  # no line per connection


def test_connections_beyond_the_open_file_limit_are_shed_and_logged_once(tmp_path):
    """1,200 idle sockets against an open-file limit of 1,024, at a smaller scale: a limit of
    128 and 600 idle sockets.
    The cap fits under the limit, so a normal request is answered and the log stays short."""
    data = make_data(tmp_path, topics=1)
    err_path = tmp_path / "serve.err"

    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))

    with open(err_path, "w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "jetlink.cli.main", "--data-dir", str(data), "serve",
             "--port", "0", "-j", "--max-connections", "5000", "--request-timeout", "30s"],
            stdout=subprocess.PIPE, stderr=err, text=True, env=server_env(tmp_path),
            preexec_fn=low_limit)
    socks: list[socket.socket] = []
    try:
        url = json.loads(proc.stdout.readline())["url"]
        host, port = url.removeprefix("http://").split("/", 1)[0].rsplit(":", 1)
        for _ in range(600):
            try:
                socks.append(socket.create_connection((host, int(port)), timeout=5))
            except OSError:
                break
        r = httpx.get(url + "/keast/links", timeout=WAIT_TIMEOUT)
        assert r.status_code == 200
        assert proc.poll() is None
        log = err_path.read_text()
        assert len(log.splitlines()) <= 2 and len(log) < 1000, log
    finally:
        for s in socks:
            s.close()
        proc.send_signal(signal.SIGINT)
        proc.wait(10)
        proc.stdout.close()


def test_connection_cap_fits_the_open_file_limit():
    assert connection_cap(256, 1024) == 256
    assert connection_cap(5000, 1024) == 960
    assert connection_cap(256, 40) == 8
    assert connection_cap(256, None) == 256


def test_accept_without_descriptors_sheds_the_connection_and_logs_once(capfd):
    listener = Listener(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    clients = [socket.create_connection(listener.getsockname()) for _ in range(3)]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    fillers: list[int] = []
    try:
        highest = max(int(fd) for fd in os.listdir("/proc/self/fd"))
        resource.setrlimit(resource.RLIMIT_NOFILE, (highest + 8, hard))
        while True:
            try:
                fillers.append(os.open(os.devnull, os.O_RDONLY))
            except OSError as exc:
                assert exc.errno == errno.EMFILE
                break
        for _ in clients:
            with pytest.raises(ConnectionAbortedError):
                listener.accept()
    finally:
        for fd in fillers:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert listener.shed == 3
    for c in clients:  # each was accepted and closed at once
        assert _closed_within(c, 2)
        c.close()
    late = socket.create_connection(listener.getsockname())
    conn, _ = listener.accept()  # descriptors again: accepted as usual
    conn.close()
    late.close()
    listener.close()
    err = capfd.readouterr().err
    assert err.count("cannot accept a connection") == 1, err


# -- the loopback check -----------------------------------------------------------------------


def test_loopback_is_decided_on_the_bound_address():
    from jetlink.cli.serve import bound_is_loopback

    for host in ("127.0.0.1", "127.0.0.2", "0.0.0.0"):
        with socket.socket() as s:
            s.bind((host, 0))
            assert bound_is_loopback(s) == host.startswith("127."), host
    if socket.has_ipv6:
        for host in ("::1", "::"):
            try:
                s = socket.socket(socket.AF_INET6)
                s.bind((host, 0))
            except OSError:
                continue
            with s:
                assert bound_is_loopback(s) == (host == "::1"), host


@pytest.mark.parametrize("resolved, code, complaint", [
    ("0.0.0.0", 2, "--host evil.localhost is not a loopback address (it is bound to 0.0.0.0)"),
    ("10.9.9.9", 1, "cannot listen on evil.localhost"),
])
def test_a_localhost_name_resolving_elsewhere_is_not_served_without_a_token(
        jl, monkeypatch, resolved, code, complaint):
    """``--host evil.localhost`` with a hosts entry elsewhere: judged by what it binds."""
    real = socket.getaddrinfo

    def hosts(host, *args, **kwargs):
        return real(resolved if host == "evil.localhost" else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", hosts)
    result = jl("serve", "--host", "evil.localhost", "--port", "0")
    assert result.exit_code == code, result.output
    assert complaint in result.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_with_a_client_mid_body_prints_nothing(tmp_path, sig):
    """A client still sending its body when the grace runs out: its request is cut and
    answered 503; nothing is printed on the stop (no uvicorn error, no traceback)."""
    data = make_data(tmp_path, topics=1)
    server = Server(data, tmp_path)
    socks = []
    try:
        for _ in range(2):
            sock = socket.create_connection(_address(server))
            sock.sendall(b"POST /kafka/v3/clusters/keast/links?link_name=x HTTP/1.1\r\n"
                         b"Host: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 30\r\n\r\n{\"source")
            socks.append(sock)
        time.sleep(0.5)  # the requests are in the application, reading their bodies
        server.proc.send_signal(sig)
        code = server.proc.wait(WAIT_TIMEOUT)
        assert code == (130 if sig == signal.SIGINT else 0)
        assert server.stderr() == "", server.stderr()
    finally:
        for sock in socks:
            sock.close()
        server.stop()
