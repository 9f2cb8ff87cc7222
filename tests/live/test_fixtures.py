"""The live-server fixtures themselves: each comes up and behaves as the tests rely on."""

from __future__ import annotations

import asyncio
import os
import socket
import ssl

import pytest

from live.servers import LiveServer, ServerAPI, wait_until

pytestmark = pytest.mark.live


def _connect_error(url: str, **kw) -> Exception | None:
    """The exception ``nats.connect`` raises (None when it connected)."""
    import nats

    async def _quiet(*_args) -> None:
        return None

    async def attempt() -> Exception | None:
        try:
            nc = await nats.connect(url, connect_timeout=2, allow_reconnect=False,
                                    max_reconnect_attempts=1, reconnect_time_wait=0.05,
                                    error_cb=_quiet, **kw)
        except Exception as exc:  # noqa: BLE001
            return exc
        await nc.close()
        return None

    return asyncio.run(attempt())


def test_single_answers_jetstream_info(live: LiveServer):
    info = live.api("INFO")
    assert "error" not in info and info["type"] == "io.nats.jetstream.api.v1.account_info_response"
    assert live.url == f"nats://127.0.0.1:{live.port}"
    assert live.pid == live.proc.pid and live.running
    assert os.path.isdir(live.store_dir) and "Server is ready" in live.log_tail(200)


def test_live_cleans_streams(live: LiveServer):
    c = live.client()
    assert c.stream_names() == []
    assert "error" not in c.stream_create({"name": "LEFTOVER", "subjects": ["left.>"]})
    live.reset()
    assert c.stream_names() == [] and live.stream_dirs() == []


def test_cluster_r3_stream_has_two_replicas(live_cluster):
    assert [n.name for n in live_cluster.nodes] == ["n1", "n2", "n3"]
    assert live_cluster.url == ",".join(n.url for n in live_cluster.nodes)
    resp = live_cluster.client().stream_create(
        {"name": "R3", "subjects": ["r3.>"], "num_replicas": 3})
    assert "error" not in resp, resp
    assert resp["cluster"]["name"] == "C3"
    assert len(resp["cluster"]["replicas"]) == 2
    # every node answers the JetStream API
    for n in live_cluster.nodes:
        assert "error" not in n.api("INFO")


def test_domains_mirror_east_of_west(live_domains):
    c = live_domains.client()
    assert live_domains.domains == ("west", "east")
    assert live_domains.hub.url == live_domains.url and live_domains.leaf.url != live_domains.url
    resp = c.stream_create({"name": "ORDERS", "subjects": ["orders.>"]}, domain="west")
    assert "error" not in resp, resp
    resp = c.api("$JS.east.API.STREAM.CREATE.ORDERS_M",
                 {"name": "ORDERS_M", "mirror": {"name": "ORDERS",
                                                 "external": {"api": "$JS.west.API"}}})
    assert "error" not in resp, resp
    for i in range(3):
        assert "error" not in c.js_publish(f"orders.{i}.new", b"x")
    wait_until(lambda: c.stream_info("ORDERS_M", domain="east")["state"]["messages"] == 3,
               message="the east mirror holds 3 messages")
    # the stream is in west only, the mirror in east only
    assert c.stream_names(domain="west") == ["ORDERS"]
    assert c.stream_names(domain="east") == ["ORDERS_M"]
    # a client of the leaf reaches both domains too
    assert live_domains.leaf.api("STREAM.INFO.ORDERS", domain="west")["state"]["messages"] == 3


def test_tls_plain_refused_tls_with_ca_works(live_tls: LiveServer):
    assert live_tls.url == f"tls://127.0.0.1:{live_tls.port}"
    # a plain-text client is told TLS is required
    with socket.create_connection(("127.0.0.1", live_tls.port), timeout=2) as s:
        assert b'"tls_required":true' in s.recv(4096)  # INFO
        s.sendall(b'CONNECT {"verbose":false}\r\nPING\r\n')
        s.settimeout(3)
        reply = b""
        try:
            while b"\r\n" not in reply:
                chunk = s.recv(4096)
                if not chunk:
                    break
                reply += chunk
        except OSError:
            pass
    assert b"PONG" not in reply  # the server closes the connection
    # nats-py upgrades to TLS by itself, but without the CA the certificate is not trusted
    assert isinstance(_connect_error(f"nats://127.0.0.1:{live_tls.port}"),
                      ssl.SSLCertVerificationError)
    # with the CA it connects
    ctx = ssl.create_default_context(cafile=live_tls.ca_file)
    assert _connect_error(live_tls.url, tls=ctx) is None
    assert "error" not in live_tls.api("INFO")


def test_tls_verify_requires_client_cert(nats_tls_verify: LiveServer):
    srv = nats_tls_verify
    ctx = ssl.create_default_context(cafile=srv.ca_file)
    assert _connect_error(srv.url, tls=ctx) is not None
    ctx.load_cert_chain(srv.cert_file, srv.key_file)
    assert _connect_error(srv.url, tls=ctx) is None
    assert srv.cli_args()[-4:] == ["--tlscert", srv.cert_file, "--tlskey", srv.key_file]


def test_auth_password_and_nkey(live_auth: LiveServer, nkey_user):
    import nkeys

    assert (live_auth.user, live_auth.password) == ("ops", "s3cret")
    assert nkeys.from_seed(nkey_user.seed.encode()).public_key.decode() == live_auth.nkey_public
    assert live_auth.nkey_public.startswith("U") and nkey_user.seed.startswith("SU")
    assert open(live_auth.nkey_seed_file).read().strip() == nkey_user.seed
    err = _connect_error(live_auth.url)
    assert err is not None and "authorization" in str(err).lower()
    err = _connect_error(live_auth.url, user="ops", password="wrong")
    assert err is not None and "authorization" in str(err).lower()
    assert _connect_error(live_auth.url, user="ops", password="s3cret") is None
    assert _connect_error(live_auth.url, nkeys_seed=live_auth.nkey_seed_file) is None
    with ServerAPI(live_auth.url, nkeys_seed=live_auth.nkey_seed_file) as c:
        assert "error" not in c.api("INFO")


def test_kill_and_restart_keep_the_store(nats_fresh: LiveServer):
    srv = nats_fresh
    c = srv.client()
    assert "error" not in c.stream_create({"name": "KEEP", "subjects": ["keep.>"]})
    for i in range(5):
        assert "error" not in c.js_publish(f"keep.{i}", b"x")
    pid, port = srv.pid, srv.port
    srv.kill()
    assert not srv.running and srv.proc.returncode == -9
    import nats.errors

    # reconnecting is refused (ConnectionError), or nats-py fails the request on the dead socket
    with pytest.raises((ConnectionError, TimeoutError, nats.errors.Error)):
        c.api("INFO", timeout=1)
    srv.restart()
    assert srv.running and srv.pid != pid and srv.port == port
    # the shared client reconnects by itself; the file store survived the SIGKILL
    assert c.stream_info("KEEP")["state"]["messages"] == 5
    srv.stop()
    assert not srv.running and srv.proc.returncode == 0
    srv.restart()
    assert c.stream_info("KEEP")["state"]["messages"] == 5


@pytest.mark.slow
def test_killed_cluster_node_is_back_for_the_next_test(live_cluster):
    # kill a node that is not the meta leader: the cluster keeps its quorum (an R3 create
    # may time out once while a replica is missing; the repeated create answers), and
    # live_cluster restarts the node before the next test
    leader = live_cluster.meta_leader()
    victim = next(n for n in live_cluster.nodes if n.name != leader)
    victim.kill()
    cfg = {"name": "R3K", "subjects": ["r3k.>"], "num_replicas": 3}
    wait_until(lambda: "error" not in live_cluster.client().stream_create(cfg),
               message="R3 create with one node down")
    live_cluster.reset()
    assert all(n.running for n in live_cluster.nodes)
    assert live_cluster.client().stream_names() == []


def test_domains_hub_restart(live_domains):
    live_domains.hub.restart()
    live_domains.wait_ready()
    assert "error" not in live_domains.api("INFO", domain="east")
