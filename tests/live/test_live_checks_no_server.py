"""Checks against a server that does not answer, over real sockets on 127.0.0.1: a port
that refuses the connection, a listener that accepts and never says a word, and a listener
that answers bytes that are not NATS (an HTTP status line). ``dr check`` and every ``server
check`` kind answer as natscli's checks do when they cannot connect: a CRITICAL result
(exit 2) in the Nagios, JSON and text formats, the status gauge (exit 0) in Prometheus;
never a bare error."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families


class _Listener:
    """A TCP listener on 127.0.0.1 that accepts connections and keeps them open, sending
    ``greeting`` (if any) to each; closed by the test."""

    def __init__(self, greeting: bytes) -> None:
        self.greeting = greeting
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.05)  # accept() wakes up to see the stop flag
        self.port = self.sock.getsockname()[1]
        self.conns: list[socket.socket] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.conns.append(conn)
            self._accepted(conn)

    def _accepted(self, conn: socket.socket) -> None:
        if self.greeting:
            conn.sendall(self.greeting)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=30)
        assert not self.thread.is_alive(), "the listener's thread did not end"
        self.sock.close()
        for c in self.conns:
            c.close()


# what each case's failure says after "connecting: "
CASES = {
    "refused": "could not connect to {url}: connection refused",
    "silent": "timed out after 1s waiting for {url}",
    "not-nats": "{url} does not speak NATS: its first line was no INFO message (is that a "
                "NATS server's client port?)",
}


@pytest.fixture(params=sorted(CASES))
def dead(request) -> Iterator[tuple[str, str]]:
    """(the server URL, the start of what connecting to it fails with)."""
    if request.param == "refused":
        with socket.socket() as s:  # bound and never listening: the connection is refused
            s.bind(("127.0.0.1", 0))
            url = f"nats://127.0.0.1:{s.getsockname()[1]}"
            yield url, CASES["refused"].format(url=url)
        return
    greeting = b"" if request.param == "silent" else \
        b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"
    listener = _Listener(greeting)
    url = f"nats://127.0.0.1:{listener.port}"
    try:
        yield url, CASES[request.param].format(url=url)
    finally:
        listener.close()


def test_dr_check_is_critical_in_every_format(cli, dead):
    url, why = dead

    def check(*args):
        return cli("--server", url, "--timeout", "1s", "dr", "check", *args)

    res = check()
    assert res.exit_code == 2, (res.stdout, res.stderr)
    line = res.stdout.rstrip("\n")
    assert "\n" not in line
    head, _, perf = line.partition(" | ")
    assert head.startswith(f"CRITICAL dr Crit:could not list mirrors: connecting: {why}"), line
    assert perf == ""  # the mirrors' counts are not known: no perf items (not 0s)
    assert res.stderr == ""

    res = check("--format", "json")
    assert res.exit_code == 2
    got = json.loads(res.stdout)
    assert (got["status"], got["check_suite"], got["mirrors"]) == ("CRITICAL", "dr", [])
    [critical] = got["critical"]
    assert critical.startswith(f"could not list mirrors: connecting: {why}")

    res = check("--format", "prometheus")
    assert res.exit_code == 0  # a scrape reads the status gauge
    families = {f.name: f for f in text_string_to_metric_families(res.stdout)}
    [overall] = families["jetlink_dr_overall_status_code"].samples
    assert (overall.labels, overall.value) == ({"status": "CRITICAL"}, 2)
    assert "jetlink_dr_mirrors" not in families

    res = check("--format", "text")
    assert res.exit_code == 2
    assert res.stdout.startswith("dr: CRITICAL (the mirrors could not be listed)\n\n"
                                 f"could not list mirrors: connecting: {why}")


@pytest.mark.parametrize(("args", "name", "says"), [
    (("stream", "--stream", "S"), "S", "could not load info"),
    (("consumer", "--stream", "S", "--consumer", "C"), "S_C", "could not load info"),
    (("kv", "--bucket", "B"), "B", "connection failed"),
])
def test_every_server_check_is_critical(cli, dead, args, name, says):
    url, why = dead
    res = cli("--server", url, "--timeout", "1s", "server", "check", *args)
    assert res.exit_code == 2, (res.stdout, res.stderr)
    assert res.stdout.startswith(f"CRITICAL {name} Crit:{says}: connecting: {why}"), res.stdout
    assert res.stdout.count("\n") == 1 and res.stderr == ""
    res = cli("--server", url, "--timeout", "1s", "server", "check", *args,
              "--format", "prometheus")
    assert res.exit_code == 0
    assert f'status_code{{item="{name}",status="CRITICAL"}} 2' in res.stdout


class _DeafNats(_Listener):
    """A listener that speaks NATS's handshake (INFO, PONG) and never answers a request:
    a server whose JetStream is gone silent. ``requests``: the subjects published to it.
    Subclasses answer a request in :meth:`_request`."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.sids: dict[bytes, bytes] = {}  # subscribed subject -> its sid
        super().__init__(b"")

    def _accepted(self, conn: socket.socket) -> None:
        threading.Thread(target=self._talk, args=(conn,), daemon=True).start()

    def _talk(self, conn: socket.socket) -> None:
        conn.sendall(b'INFO {"server_id":"fake","version":"2.15.1","proto":1,"headers":true,'
                     b'"max_payload":1048576}\r\n')
        buf = b""
        try:
            while not self.stop.is_set():
                data = conn.recv(65536)
                if not data:
                    return
                buf += data
                while b"\r\n" in buf:
                    line, buf = buf.split(b"\r\n", 1)
                    parts = line.split()
                    if line.startswith(b"PING"):
                        conn.sendall(b"PONG\r\n")
                    elif line.startswith(b"SUB "):
                        self.sids[parts[1]] = parts[-1]
                    elif line.startswith((b"PUB ", b"HPUB ")):
                        self.requests.append(parts[1].decode())
                        size = int(parts[-1]) + 2
                        while len(buf) < size:
                            buf += conn.recv(65536)
                        buf = buf[size:]
                        if not self._request(conn, parts):
                            return
        except OSError:
            return

    def _request(self, conn: socket.socket, parts: list[bytes]) -> bool:
        """A request published (``parts``: its PUB line's words); False ends the connection
        (closed by then). Here: never answered."""
        return True

    def _reply_sid(self, reply: bytes) -> bytes:
        return next(v for k, v in self.sids.items() if reply.startswith(k.rstrip(b"*")))


def test_dr_check_of_a_server_whose_jetstream_never_answers_asks_once(cli):
    """The first request that goes unanswered ends the check (CRITICAL, naming it): not one
    time-out per request it would have made (JetStream's INFO, the positions bucket's
    stream names, the stream list)."""
    deaf = _DeafNats()
    url = f"nats://127.0.0.1:{deaf.port}"
    try:
        res = cli("--server", url, "--timeout", "1s", "dr", "check")
        assert res.exit_code == 2, (res.stdout, res.stderr)
        assert res.stdout.startswith("CRITICAL dr Crit:could not list mirrors: INFO: timed "
                                     f"out after 1s waiting for {url}"), res.stdout
        assert [r for r in deaf.requests if r.startswith("$JS.")] == ["$JS.API.INFO"]
    finally:
        deaf.close()


class _HangUpNats(_DeafNats):
    """The handshake, then the connection closed on the first request: a server gone while
    a command waits for its answer."""

    def _request(self, conn: socket.socket, parts: list[bytes]) -> bool:
        conn.shutdown(socket.SHUT_RDWR)
        conn.close()
        return False


def test_a_connection_lost_while_waiting_for_an_answer_is_said_so_not_a_timeout(cli):
    """The server closes the connection while the command waits for a reply: the error is
    the lost connection, said when it happens (a --timeout of 60s is not waited out, or the
    error would be that time-out's), one line, exit 1."""
    gone = _HangUpNats()
    url = f"nats://127.0.0.1:{gone.port}"
    try:
        res = cli("--server", url, "--timeout", "60s", "stream", "ls")
        assert (res.exit_code, res.stdout, res.stderr) == (
            1, "", f"jetlink: error: STREAM.LIST: lost the connection to {url}\n")
        assert gone.requests == ["$JS.API.STREAM.LIST"]
    finally:
        gone.close()


class _AnswersOnce(_DeafNats):
    """The handshake; the first request answered (an empty JSON document), every later one
    with no responders (a 503 status, as a server whose JetStream went away says it)."""

    def _request(self, conn: socket.socket, parts: list[bytes]) -> bool:
        reply = parts[2]
        sid = self._reply_sid(reply)
        if len(self.requests) == 1:
            conn.sendall(b"MSG %s %s 2\r\n{}\r\n" % (reply, sid))
        else:
            hdr = b"NATS/1.0 503\r\n\r\n"
            conn.sendall(b"HMSG %s %s %d %d\r\n%s\r\n" % (reply, sid, len(hdr), len(hdr), hdr))
        return True


def test_an_api_that_answered_and_has_no_responders_now_stopped_answering():
    """A JetStream API that answered a request of this connection and then has no responders
    (its domain's server gone, its leafnode down): said as stopped, not as a domain that may
    not be joined (which it was)."""
    from jetlink.core.errors import LiveError
    from jetlink.core.live.client import LiveConnection
    from jetlink.core.live.target import ServerTarget

    once = _AnswersOnce()
    url = f"nats://127.0.0.1:{once.port}"
    try:
        with LiveConnection(ServerTarget((url,), timeout=5)) as conn:
            assert conn.api("INFO", prefix="$JS.west.API") == {}
            with pytest.raises(LiveError) as err:
                conn.api("STREAM.NAMES", prefix="$JS.west.API")
        assert str(err.value) == (
            f"STREAM.NAMES: JetStream API $JS.west.API stopped answering on {url} (it answered "
            "earlier: its server gone, or its leafnode connection; run the command again once "
            "it answers)")
        assert err.value.transient
    finally:
        once.close()
