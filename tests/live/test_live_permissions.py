"""A user the server's permissions restrict: what it may not do is named as the server's
permissions violation (not as a cluster without a meta leader, or a timeout), and what it
may do works with the API subjects nats.go uses (a bucket read with STREAM.INFO and direct
gets of its stream alone)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import runner

from jetlink.cli.main import app
from live.clihelp import ok
from live.servers import LiveServer, start_permissions


@pytest.fixture(scope="module")
def perms(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    srv = start_permissions(Path(tmp_path_factory.mktemp("perms")))
    try:
        yield srv
    finally:
        srv.close()


def jl(srv: LiveServer, user: str, *args: str):
    return runner.invoke(app, ["-s", srv.url, "--user", user, "--password", "pw",
                               "--timeout", "2s", *args], prog_name="jetlink")


def test_a_denied_request_names_the_permission_not_the_cluster(perms):
    ok(jl(perms, "admin", "stream", "add", "DELME", "--subjects", "d", "--defaults"))
    for user, args, subject in (
            ("ro", ("stream", "ls"), "$JS.API.STREAM.LIST"),
            ("nodel", ("stream", "rm", "DELME", "-f"), "$JS.API.STREAM.DELETE.DELME"),
            ("ro", ("pub", "other.x", "hi"), "other.x")):
        res = jl(perms, user, *args)
        assert res.exit_code == 1, res.output
        assert res.stderr.endswith(
            f'permissions violation: the server does not let this user publish to "{subject}" '
            "(its publish permissions; nothing was done)\n"), res.stderr
    assert ok(jl(perms, "admin", "stream", "info", "DELME", "-j"))  # still there
    # a core publish too: flushed, as natscli's, and the server's -ERR asked for
    res = jl(perms, "ro", "pub", "other.x", "hi", "--core")
    assert (res.exit_code, res.stdout) == (1, "")
    assert res.stderr == (
        'jetlink: error: publish to other.x: permissions violation: the server does not let '
        'this user publish to "other.x" (its publish permissions; nothing was done)\n')
    assert ok(jl(perms, "ro", "pub", "orders.x", "hi", "--core")).stdout == (
        'Published 2 bytes to "orders.x"\n')
    res = jl(perms, "nosub", "stream", "ls")
    assert res.exit_code == 1 and "permissions violation: the server does not let this user " \
        'subscribe to "_inbox.' in res.stderr, res.stderr
    # (--wait: a subscription taken as granted would end after it, never hang the suite)
    res = jl(perms, "nosub", "sub", "_INBOX.x", "--count", "1", "--wait", "5s")
    assert (res.exit_code, res.stderr) == (1, (
        "jetlink: error: subscribing to _INBOX.x: permissions violation: the server does not "
        'let this user subscribe to "_INBOX.x" (its subscribe permissions)\n'))


def test_a_bucket_reader_allowed_what_nats_go_reads_gets_its_values(perms):
    """kvro may publish only STREAM.INFO and DIRECT.GET of KV_CFG (nats.go's KeyValue and
    Get): kv get, kv info and server check kv work; a bucket it may not read is named."""
    ok(jl(perms, "admin", "kv", "add", "CFG"))
    ok(jl(perms, "admin", "kv", "put", "CFG", "k1", "v1"))
    ok(jl(perms, "admin", "kv", "put", "CFG", "k1", "v2"))
    assert ok(jl(perms, "kvro", "kv", "get", "CFG", "k1", "--raw")).stdout == "v2"
    got = json.loads(ok(jl(perms, "kvro", "kv", "get", "CFG", "k1", "-j")).stdout)
    assert (got["revision"], got["value"], got["served_by"]) == (2, "djI=", "KV_CFG")
    res = jl(perms, "kvro", "kv", "get", "CFG", "k1", "--revision", "1")
    assert (res.exit_code, res.stderr) == (
        1, "jetlink: error: key not found (10037): key k1 at revision 1 in bucket CFG\n")
    ok(jl(perms, "admin", "kv", "del", "CFG", "k1", "-f"))
    res = jl(perms, "kvro", "kv", "get", "CFG", "k1")
    assert (res.exit_code, res.stderr) == (
        1, "jetlink: error: key not found (10037): key k1 in bucket CFG\n")
    ok(jl(perms, "admin", "kv", "put", "CFG", "k2", "x"))
    assert ok(jl(perms, "kvro", "kv", "info", "CFG")).stdout.startswith(
        "Information for Key-Value Store Bucket CFG")
    res = jl(perms, "kvro", "server", "check", "kv", "--bucket", "CFG", "--key", "k2")
    assert (res.exit_code, res.stdout.split(" | ")[0]) == (
        0, "OK CFG OK:bucket CFG OK:key k2 found"), res.stdout
    res = jl(perms, "kvro", "kv", "get", "OTHER", "k")
    assert res.exit_code == 1 and res.stderr.endswith(
        'does not let this user publish to "$JS.API.STREAM.INFO.KV_OTHER" (its publish '
        "permissions; nothing was done)\n"), res.stderr


def test_a_direct_get_names_the_stream_that_answered_it(perms):
    """served_by is the stream whose server answered (the direct get's Nats-Stream): the
    bucket's mirror_direct mirror answers a share of kvro's direct gets (the server picks a
    responder of the queue group), and each answer names its stream."""
    import time

    ok(jl(perms, "admin", "kv", "add", "CFG"))  # (there already, or made)
    ok(jl(perms, "admin", "kv", "put", "CFG", "k3", "v3"))
    ok(jl(perms, "admin", "kv", "add", "CFGM", "--mirror", "CFG"))
    deadline, held = time.monotonic() + 30, None
    while time.monotonic() < deadline:
        held = json.loads(ok(jl(perms, "admin", "stream", "info", "KV_CFGM", "-j")).stdout)
        if held["state"]["last_seq"] >= json.loads(ok(jl(
                perms, "admin", "stream", "info", "KV_CFG", "-j")).stdout)["state"]["last_seq"]:
            break
        time.sleep(0.2)
    else:
        raise AssertionError(f"the mirror did not catch up: {held}")
    seen = set()
    for _ in range(60):  # (until the mirror answered one: each responder equally likely)
        got = json.loads(ok(jl(perms, "kvro", "kv", "get", "CFG", "k3", "-j")).stdout)
        assert got["value"] == "djM="
        seen.add(got["served_by"])
        if "KV_CFGM" in seen:
            break
    assert seen <= {"KV_CFG", "KV_CFGM"} and "KV_CFGM" in seen, seen


def test_a_natscli_contexts_user_without_a_password_is_a_user(perms, tmp_path):
    """jsm.go natscontext's NATSOptions: a context's user without a password connects as
    that user with an empty one (natscli's --user alone is a token; a context's is not)."""
    ctx = tmp_path / "config" / "nats" / "context"
    ctx.mkdir(parents=True)
    (ctx / "np.json").write_text(json.dumps({"url": perms.url, "user": "nopass"}))
    res = runner.invoke(app, ["--nats-context", "np", "stream", "ls", "-j"],
                        prog_name="jetlink", env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert res.exit_code == 0, res.output
