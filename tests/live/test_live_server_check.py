"""``jetlink server check`` against a real nats-server: a mirror that lags is CRITICAL with
``--lag-critical``, and the same command on the embedded engine prints the same line (but for
the seconds since the mirror was last active, which are the server's own); an unreachable
server is CRITICAL; a KV bucket and a consumer are checked over the server's API."""

from __future__ import annotations

import re

from helpers import wait_until

from live.clihelp import doc, ok

BIG = "y" * 50  # larger than the mirror's max_msg_size: the mirror stalls on it
ACTIVE = re.compile(r" active=\d+\.\d{4}s")



def lagging_mirror(run):
    """ORIG holds 5 messages, MIR stalls on the second (too large for it)."""
    ok(run("stream", "add", "ORIG", "--subjects", "orig.>", "--defaults"))
    ok(run("stream", "add", "MIR", "--mirror", "ORIG", "--max-msg-size", "10", "--defaults"))
    ok(run("pub", "orig.a", "small"))
    ok(run("pub", "orig.b", BIG))
    for _ in range(3):
        ok(run("pub", "orig.a", "x"))


def test_mirror_lag_is_critical_on_both_backends(cli, live, tmp_path):
    def on_server(*args):
        return cli("--server", live.url, *args)

    lagging_mirror(on_server)
    wait_until(lambda: doc(on_server("stream", "info", "MIR", "-j"))["mirror"]["lag"] == 2,
               message=lambda: "the server's mirror reporting lag 2 ("
               f"{doc(on_server('stream', 'info', 'MIR', '-j'))['mirror']['lag']})")
    command = ("server", "check", "stream", "--stream", "MIR", "--lag-critical", "2")
    served = on_server(*command)
    assert served.exit_code == 2, served.stdout
    assert ACTIVE.sub(" active=Ns", served.stdout) == (
        "CRITICAL MIR Crit:Mirror Lag 2 OK:0 sources OK:0 sources current OK:0 sources active"
        " | sources=0 sources_lagged=0 sources_inactive=0 lag=2;;2 active=Ns\n")

    def embedded(*args):
        return cli("--data-dir", str(tmp_path / "data"), *args)

    lagging_mirror(embedded)
    local = embedded(*command)
    assert local.exit_code == 2
    assert ACTIVE.sub(" active=Ns", local.stdout) == ACTIVE.sub(" active=Ns", served.stdout)


def test_unreachable_server_is_critical(cli):
    res = cli("--server", "nats://127.0.0.1:1", "server", "check", "stream", "--stream", "S")
    assert res.exit_code == 2
    assert res.stdout.startswith("CRITICAL S Crit:could not load info: ")
    assert "could not connect" in res.stdout
    res = cli("--server", "nats://127.0.0.1:1", "server", "check", "kv", "--bucket", "B")
    assert res.exit_code == 2
    assert res.stdout.startswith("CRITICAL B Crit:connection failed: ")


def test_kv_and_consumer_on_a_server(cli, live):
    def run(*args):
        return cli("--server", live.url, *args)

    ok(run("kv", "add", "CFG"))
    ok(run("kv", "put", "CFG", "a", "1"))
    res = run("server", "check", "kv", "--bucket", "CFG", "--key", "a", "--values-critical", "1")
    assert res.exit_code == 2
    assert re.fullmatch(r"CRITICAL CFG Crit:1 values OK:bucket CFG OK:key a found"
                        r" \| values=1;;1 bytes=\d+B replicas=1\n", res.stdout), res.stdout
    # a KV_ stream that keeps no value per key: nats.go's ErrBadBucket, as on the engine
    ok(run("stream", "add", "KV_FAKE", "--subjects", "fake.>", "--defaults"))
    res = run("server", "check", "kv", "--bucket", "FAKE")
    assert (res.exit_code, res.stdout) == (2, "CRITICAL FAKE Crit:could not load bucket: nats: "
                                              "bucket not valid key-value store\n")
    ok(run("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(run("pub", "orders.1", "x"))
    ok(run("consumer", "add", "ORDERS", "C", "--pull", "--defaults",
           "--metadata", "io.nats.monitor.unprocessed-critical=1"))
    res = run("server", "check", "consumer", "--stream", "ORDERS", "--consumer", "C")
    assert (res.exit_code, res.stdout) == (
        2, "CRITICAL ORDERS_C Crit:Unprocessed Messages: 1"
           " | ack_pending=0 pull_waiting=0 pending=1;;1 redelivered=0\n")
