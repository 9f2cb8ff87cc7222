"""TLS asked for is TLS or nothing: a ``tls://`` URL, ``--tlsca`` or ``--tlscert`` never
connect in plaintext, whatever the server offers. A fake server on 127.0.0.1 records every
byte it receives: against one that offers no TLS, the command ends with one line and exit 1
and nothing was sent (no CONNECT, no password); against one that offers TLS without
requiring it, the client upgrades (its first bytes are a TLS handshake)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

JETLINK = str(Path(sys.executable).with_name("jetlink"))
INFO = {"server_id": "FAKE", "server_name": "fake", "version": "2.15.1", "proto": 1,
        "host": "127.0.0.1", "port": 0, "headers": True, "max_payload": 1048576,
        "auth_required": True}


class FakeServer:
    """Sends INFO to each client, then records what the client sends until it closes."""

    def __init__(self, info: dict) -> None:
        self.info = info
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.received = bytearray()
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.settimeout(5)
                conn.sendall(b"INFO " + json.dumps(self.info).encode() + b"\r\n")
                try:
                    while True:
                        data = conn.recv(65536)
                        if not data:
                            break
                        self.received += data
                        if data[:1] == b"\x16":  # a TLS ClientHello: this fake speaks none
                            break
                except OSError:
                    pass

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    from live.servers import make_tls_files

    return make_tls_files(tmp_path_factory.mktemp("tls"))


def _jetlink(tmp_path, *args: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "JETLINK_DATA_DIR": str(tmp_path / "data")}
    return subprocess.run([JETLINK, *args], capture_output=True, text=True, timeout=60,
                          env=env)


@pytest.mark.parametrize("how", ["tls-url", "tlsca", "tlscert"])
def test_no_tls_on_offer_means_nothing_is_sent(tmp_path, tls_files, how):
    server = FakeServer(INFO)
    try:
        url = f"tls://127.0.0.1:{server.port}" if how == "tls-url" \
            else f"nats://127.0.0.1:{server.port}"
        flags = {"tls-url": [], "tlsca": ["--tlsca", tls_files.ca_file],
                 "tlscert": ["--tlscert", tls_files.cert_file, "--tlskey", tls_files.key_file]}
        r = _jetlink(tmp_path, "-s", url, "--user", "alice", "--password", "s3cret",
                     *flags[how], "stream", "ls")
    finally:
        server.close()
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert r.stdout == ""
    scheme = "tls" if how == "tls-url" else "nats"
    assert r.stderr.splitlines() == [
        f"jetlink: error: connecting: {scheme}://127.0.0.1:{server.port} does not offer TLS, "
        "which this connection asks for (a tls:// URL, --tlsca, --tlscert or a context's TLS "
        "settings): refused before anything was sent"]
    assert server.connections >= 1
    assert bytes(server.received) == b""  # no CONNECT, no password: nothing at all


def test_tls_on_offer_is_taken_not_skipped(tmp_path, tls_files):
    server = FakeServer({**INFO, "tls_available": True})
    try:
        r = _jetlink(tmp_path, "-s", f"tls://127.0.0.1:{server.port}", "--user", "alice",
                     "--password", "s3cret", "--tlsca", tls_files.ca_file, "stream", "ls")
    finally:
        server.close()
    assert r.returncode == 1  # the fake speaks no TLS: the handshake fails
    assert len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr
    assert server.received[:1] == b"\x16"  # a TLS handshake, not a CONNECT
    assert b"s3cret" not in server.received and b"CONNECT" not in server.received


def test_without_tls_options_plaintext_is_used(tmp_path):
    """The control: nothing asks for TLS, so CONNECT goes in plaintext as natscli's does."""
    server = FakeServer({**INFO, "auth_required": False})
    try:
        _jetlink(tmp_path, "-s", f"nats://127.0.0.1:{server.port}", "--timeout", "1s",
                 "stream", "ls")
    finally:
        server.close()
    assert server.received.startswith(b"CONNECT ")
