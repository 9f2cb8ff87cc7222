"""The live client (core/live) against real nats-servers: connection failures as one line,
the JetStream API's documents as the server sent them, jetlink's rules before the server's,
pipelined publishes, batched direct gets, clusters and domains."""

from __future__ import annotations

import threading
import time

import pytest
from helpers import WAIT_TIMEOUT, returns, wait_until

from jetlink.core.errors import ApiError, NoStreamError
from jetlink.core.live.client import LiveError, connect
from jetlink.core.live.jetstream import LiveJetStream
from jetlink.core.live.target import ServerTarget


def js_for(url: str, **kw) -> LiveJetStream:
    return LiveJetStream(connect(ServerTarget(tuple(url.split(",")), **kw)))


@pytest.fixture
def js(live):
    j = js_for(live.url)
    yield j
    j.close()


# -- connecting ----------------------------------------------------------------------------


def test_refused_is_one_line_and_fast():
    # at once, not after the timeout (an hour: waiting for it would outlast returns())
    with pytest.raises(LiveError) as err:
        returns(lambda: connect(ServerTarget(("nats://127.0.0.1:1",), timeout=3600)),
                "a refused connection reported")
    assert str(err.value) == (
        "connecting: could not connect to nats://127.0.0.1:1: connection refused")
    assert err.value.exit_code == 1


def test_wrong_password(live_auth):
    with pytest.raises(LiveError, match="authorization violation on .*check --user"):
        connect(ServerTarget((live_auth.url,), user="ops", password="wrong"))


def test_right_password_and_nkey(live_auth):
    with js_for(live_auth.url, user="ops", password="s3cret").conn as conn:
        assert conn.api("INFO")["type"] == "io.nats.jetstream.api.v1.account_info_response"
    with js_for(live_auth.url, nkey=live_auth.nkey_seed_file).conn as conn:
        assert "limits" in conn.api("INFO")


def test_missing_nkey_file(live_auth, tmp_path):
    with pytest.raises(LiveError, match="--nkey .*: no such file"):
        connect(ServerTarget((live_auth.url,), nkey=str(tmp_path / "nope.nk")))


def test_tls_only_server(live_tls):
    plain = live_tls.url.replace("tls://", "nats://")
    with pytest.raises(LiveError) as err:
        connect(ServerTarget((plain,)))
    assert "TLS" in str(err.value) or "certificate" in str(err.value)
    with js_for(live_tls.url, tls_ca=live_tls.ca_file).conn as conn:
        assert "limits" in conn.api("INFO")


def test_jetstream_not_enabled(tmp_path):
    import subprocess

    from jetlink.core.live.server import find_nats_server, free_port, stop_server

    port = free_port()
    proc = subprocess.Popen([find_nats_server(), "-a", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        conn = wait_until(lambda: connect(ServerTarget((f"nats://127.0.0.1:{port}",))),
                          message="a connection to the server without JetStream")
        with conn, pytest.raises(LiveError, match="JetStream is not enabled on"):
            conn.api("INFO")
        # a JetStream publish says so at once, not after the timeout's retries as if the
        # cluster elected its leaders (a core publish goes through)
        from helpers import runner

        from jetlink.cli.main import app

        url = f"nats://127.0.0.1:{port}"
        res = runner.invoke(app, ["-s", url, "--timeout", "30s", "pub", "foo", "x"],
                            prog_name="jetlink")
        assert (res.exit_code, res.stderr) == (1, (
            f"jetlink: error: JetStream is not enabled on {url} (no responders for "
            "$JS.API.INFO)\n"))
        res = runner.invoke(app, ["-s", url, "pub", "foo", "x", "--core"], prog_name="jetlink")
        assert res.exit_code == 0, res.stderr
    finally:
        stop_server(proc)


def test_wrong_domain(live):
    with js_for(live.url, js_domain="nowhere").conn as conn:
        with pytest.raises(LiveError, match="JetStream domain nowhere does not answer"):
            conn.api("INFO")


def test_server_killed_mid_command(nats_fresh):
    js = js_for(nats_fresh.url)
    js.add_stream({"name": "S", "subjects": ["s.>"]})
    js.publish_many([("s.1", b"x", None)] * 10)
    nats_fresh.kill()
    with pytest.raises(LiveError, match="lost the connection|could not connect|timed out"):
        js.stream_info("S")
    js.close()


def test_a_pipeline_waiting_for_answers_ends_when_the_connection_closes(nats_fresh):
    """Publishes sent to a server that stops answering (SIGSTOP), then is killed: the
    pipeline ends with the lost connection as soon as it closes, not after its timeout
    (an hour here: the deadline below would fail first)."""
    import os
    import signal

    js = js_for(nats_fresh.url, timeout=3600.0)
    js.add_stream({"name": "S", "subjects": ["s.>"]})
    os.kill(nats_fresh.pid, signal.SIGSTOP)  # frozen: what is sent is never answered

    def stopped() -> bool:  # (a signal is asynchronous: on a busy machine the server may
        with open(f"/proc/{nats_fresh.pid}/stat") as f:  # run on a little while)
            return f.read().rsplit(")", 1)[1].split()[0] == "T"

    wait_until(stopped, message="the server stopped by SIGSTOP")
    got: dict[str, object] = {}

    def run() -> None:
        try:
            got["result"] = js.publish_many([("s.1", b"x", None)] * 5)
        except LiveError as err:
            got["error"] = err

    t = threading.Thread(target=run, daemon=True)
    t.start()
    time.sleep(0.5)  # (sequencing only: the publishes go out and their answers are awaited)
    nats_fresh.kill()
    t.join(WAIT_TIMEOUT)
    assert not t.is_alive(), "still waiting for answers after the connection closed"
    assert "lost the connection" in str(got.get("error")), got
    js.close()


# -- streams ---------------------------------------------------------------------------------


def test_info_is_the_servers_document(js, live):
    created = js.add_stream({"name": "ORDERS", "subjects": ["orders.>"]})
    raw = live.client().api("STREAM.INFO.ORDERS")
    info = js.stream_info("ORDERS").to_json()
    # the server's document without the response's own keys, as natscli prints it
    assert raw["type"] == "io.nats.jetstream.api.v1.stream_info_response"
    envelope = {"type", "total", "offset", "limit"}
    assert list(info) == [k for k in raw if k not in envelope]
    assert info["config"] == raw["config"] and info["state"] == raw["state"]
    assert created.to_json()["config"]["subjects"] == ["orders.>"]
    assert created.config.name == "ORDERS"
    assert js.stream_names() == ["ORDERS"]
    assert [i.name for i in js.streams()] == ["ORDERS"]


def test_jetlink_rules_before_the_server(js, live):
    # jetlink's own refusal (mirror with subjects, 10034): nothing is created
    with pytest.raises(ApiError) as err:
        js.add_stream({"name": "M", "subjects": ["m.>"], "mirror": {"name": "X"}})
    assert err.value.err_code == 10034
    assert js.stream_names() == []
    # the server's refusal as it gave it (overlap, 10065)
    js.add_stream({"name": "A", "subjects": ["a.>"]})
    with pytest.raises(ApiError) as err:
        js.add_stream({"name": "B", "subjects": ["a.b"]})
    assert (err.value.code, err.value.err_code) == (400, 10065)
    assert err.value.description == "subjects overlap with an existing stream"


def test_replicas_refused_by_the_single_server_itself(js):
    with pytest.raises(ApiError) as err:
        js.add_stream({"name": "R3", "subjects": ["r.>"], "num_replicas": 3})
    assert err.value.err_code == 10074


def test_r3_on_a_cluster(live_cluster):
    js = js_for(live_cluster.url)
    try:
        info = js.add_stream({"name": "R3", "subjects": ["r.>"], "num_replicas": 3})
        assert info.config.num_replicas == 3
        doc = js.stream_info("R3").to_json()
        assert doc["cluster"]["name"] == "C3"
        assert len(doc["cluster"].get("replicas", [])) == 2
    finally:
        js.close()


def test_update_and_delete(js):
    js.add_stream({"name": "S", "subjects": ["s.>"]})
    cfg = js.stream_info("S").config
    cfg.description = "changed"
    assert js.update_stream(cfg).to_json()["config"]["description"] == "changed"
    cfg.storage = "memory"
    with pytest.raises(ApiError) as err:
        js.update_stream(cfg)
    assert err.value.err_code == 10052
    js.delete_stream("S")
    with pytest.raises(ApiError) as err:
        js.stream_info("S")
    assert (err.value.code, err.value.err_code) == (404, 10059)


# -- messages ----------------------------------------------------------------------------------


def test_publish_get_view_subjects_purge(js):
    js.add_stream({"name": "S", "subjects": ["s.>"], "allow_direct": True})
    acks = js.publish_many([(f"s.{i % 3}", str(i).encode(), None) for i in range(2500)])
    assert [a.seq for a in acks] == list(range(1, 2501))
    assert js.get_msg("S", 7).data == b"6"
    assert js.get_msg("S", last_by_subj="s.0").seq == 2500
    seqs = [m.seq for m in js.messages("S", start_seq=10)]
    assert seqs == list(range(10, 2501))
    only = [m.seq for m in js.messages("S", subject="s.1")]
    assert only == list(range(2, 2501, 3))
    assert js.subjects("S") == {"s.0": 834, "s.1": 833, "s.2": 833}
    assert js.purge_stream("S", subject="s.2") == 833
    assert js.purge_stream("S", keep=10) == 2500 - 833 - 10
    assert js.stream_info("S").state.messages == 10


def test_messages_without_direct_get(js):
    js.add_stream({"name": "S", "subjects": ["s.>"]})
    js.publish_many([("s.a", b"1", None), ("s.b", b"2", {"K": ["v"]}), ("s.a", b"3", None)])
    msgs = list(js.messages("S"))
    assert [(m.seq, m.subject, m.data) for m in msgs] == [(1, "s.a", b"1"), (2, "s.b", b"2"),
                                                          (3, "s.a", b"3")]
    assert msgs[1].headers == {"K": ["v"]}
    assert [m.seq for m in js.messages("S", subject="s.a")] == [1, 3]


def test_direct_get_keeps_the_messages_headers(js):
    js.add_stream({"name": "S", "subjects": ["s.>"], "allow_direct": True})
    js.publish("s.a", b"x", {"Kind": ["new"]})
    (msg,) = list(js.messages("S"))
    assert msg.headers == {"Kind": ["new"]}
    assert js.get_msg("S", 1).headers == {"Kind": ["new"]}


def test_publish_refusals(js):
    js.add_stream({"name": "L", "subjects": ["l.>"], "max_msgs": 2, "discard": "new"})
    res = js.publish_many([("l.a", b"1", None), ("l.a", b"2", None), ("l.a", b"3", None)])
    assert [getattr(r, "seq", None) for r in res[:2]] == [1, 2]
    assert isinstance(res[2], ApiError) and res[2].err_code == 10077
    with pytest.raises(NoStreamError):
        js.publish("nowhere.1", b"x")


def test_delete_msg(js):
    js.add_stream({"name": "S", "subjects": ["s.>"]})
    js.publish_many([("s.a", b"1", None)] * 3)
    js.delete_msg("S", 2)
    with pytest.raises(ApiError) as err:
        js.delete_msg("S", 2)
    assert (err.value.err_code, err.value.description) == (10043, "sequence 2 not found")


def test_subscribe_receives_core_messages(js, live):
    sub = js.subscribe("core.>")

    def later():
        time.sleep(0.1)
        live.client().publish("core.x", b"hi")

    threading.Thread(target=later).start()
    msg = sub.next(timeout=WAIT_TIMEOUT)
    assert msg is not None and msg.subject == "core.x" and msg.data == b"hi"
    assert sub.next(timeout=0.1) is None
    sub.close()


# -- domains -------------------------------------------------------------------------------


def test_cross_domain_mirror(live_domains):
    west = js_for(live_domains.hub.url, js_domain="west")
    east = js_for(live_domains.hub.url, js_domain="east")
    try:
        west.add_stream({"name": "ORDERS", "subjects": ["orders.>"]})
        west.publish_many([("orders.1", b"x", None)] * 5)
        east.add_stream({"name": "ORDERS_M",
                         "mirror": {"name": "ORDERS", "external": {"api": "$JS.west.API"}}})
        wait_until(lambda: east.stream_info("ORDERS_M").state.messages == 5,
                   message=lambda: f"the mirror holding 5 messages "
                                   f"({east.stream_info('ORDERS_M').state.messages})")
        assert "ORDERS_M" not in west.stream_names()
    finally:
        west.close()
        east.close()


def test_messages_without_direct_get_through_an_ordered_consumer(js, live):
    js.add_stream({"name": "N", "subjects": ["n.>"]})
    assert list(js.messages("N")) == []  # an empty stream: nothing, at once
    js.publish_batch([(f"n.{i % 2}", b"x", None) for i in range(3000)])
    assert [m.seq for m in js.messages("N")] == list(range(1, 3001))
    assert [m.seq for m in js.messages("N", start_seq=2999)] == [2999, 3000]
    assert [m.seq for m in js.messages("N", subject="n.1")][:3] == [2, 4, 6]
    assert list(js.messages("N", subject="n.none")) == []
    # the ordered consumers are gone once read
    assert live.client().api("CONSUMER.NAMES.N").get("consumers") in ([], None)


def test_publishes_nobody_acknowledges_end_with_an_error(live):
    """A subscriber that is not a stream takes the publishes and answers nothing: after the
    timeout the publish reports it (no hang, nothing claimed as stored)."""
    import asyncio

    import nats

    async def ignore(_msg):
        return None

    async def listener():
        nc = await nats.connect(live.url)
        await nc.subscribe("quiet.>", cb=ignore)
        await nc.flush()
        return nc

    loop = asyncio.new_event_loop()
    t = threading.Thread(target=loop.run_forever, daemon=True)
    t.start()
    nc = asyncio.run_coroutine_threadsafe(listener(), loop).result(WAIT_TIMEOUT)
    js = js_for(live.url, timeout=1)
    try:
        # one timeout for the pipeline, not one per message (3,000 s would outlast returns())
        res = returns(lambda: js.publish_many([("quiet.x", b"x", None)] * 3000),
                      "3,000 unacknowledged publishes reported")
        assert res and isinstance(res[-1], LiveError)
        assert "no acknowledgement within 1s" in str(res[-1])
        assert not any(getattr(r, "seq", None) for r in res)
    finally:
        js.close()
        asyncio.run_coroutine_threadsafe(nc.close(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)


def test_a_queue_group_shares_the_messages_each_to_one_member(js, live):
    """NATS's queue subscriptions through the same call as the data directory's: the members
    of a group get each message once between them, a plain subscriber every one."""
    other = js_for(live.url)
    a = js.subscribe("lq.*", queue="workers")
    b = other.subscribe("lq.*", queue="workers")
    plain = js.subscribe("lq.*")
    other.conn.flush()  # (b's SUB at the server before the first publish)
    for i in range(40):
        js.publish_core(f"lq.{i % 4}", str(i).encode())
    got: dict[str, list[bytes]] = {"a": [], "b": [], "plain": []}

    def drained() -> bool:
        for key, sub in (("a", a), ("b", b), ("plain", plain)):
            while (m := sub.next(0.05)) is not None:
                got[key].append(m.data)
        return len(got["a"]) + len(got["b"]) == 40 and len(got["plain"]) == 40

    wait_until(drained, message=lambda: f"40 to the group, 40 to the plain one: {got}")
    assert not set(got["a"]) & set(got["b"])
    for sub in (a, b, plain):
        sub.close()
    other.close()
