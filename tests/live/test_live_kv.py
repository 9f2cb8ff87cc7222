"""`jetlink kv ...` on real nats-servers: buckets, entries and their errors, watchers fed by
an ordered consumer, KV mirrors across JetStream domains (leafnode), aggregates."""

from __future__ import annotations

import json
import threading

import pytest
from helpers import runner, wait_until

from jetlink.cli.main import app
from live.clihelp import doc, ok


@pytest.fixture
def kv(live, monkeypatch):
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)

    def run(*args, server=None, input=None):
        return runner.invoke(app, ["--server", server or live.url, *args], input=input,
                             prog_name="jetlink")

    run.server = live
    return run


def test_bucket_life(kv, live):
    status = doc(kv("kv", "add", "CONFIG", "--history", "5", "-j"))
    assert status["bucket"] == "CONFIG" and status["history"] == 5
    # added again: the same settings are the bucket there; others the server's 10058,
    # saying which differ (as the engine)
    assert doc(kv("kv", "add", "CONFIG", "--history", "5", "-j"))["history"] == 5
    r = kv("kv", "add", "CONFIG")
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: stream name already in use with a different configuration (10058): "
        "bucket CFG: history 1 given, 5 stored (kv edit changes a bucket's settings)\n"
    ).replace("CFG", "CONFIG"))
    # the server holds the stream a client would have made
    cfg = live.client().stream_info("KV_CONFIG")["config"]
    assert cfg["subjects"] == ["$KV.CONFIG.>"] and cfg["max_msgs_per_subject"] == 5
    assert cfg["allow_direct"] is True and cfg["allow_rollup_hdrs"] is True
    assert doc(kv("kv", "put", "CONFIG", "a", "1", "-j"))["revision"] == 1
    assert doc(kv("kv", "put", "CONFIG", "a", "2", "-j"))["revision"] == 2
    got = doc(kv("kv", "get", "CONFIG", "a", "-j"))
    assert (got["key"], got["revision"], got["operation"]) == ("a", 2, "PUT")
    assert ok(kv("kv", "get", "CONFIG", "a", "--raw")).stdout == "2"
    # create on an existing key: the server's 10071 with the client's text
    res = kv("kv", "create", "CONFIG", "a", "x", "-j")
    assert res.exit_code == 1
    assert json.loads(res.stdout) == {"error": {"code": 400, "err_code": 10071,
                                                "description": "key exists"}}
    # update with a stale revision: the server's own answer
    res = kv("kv", "update", "CONFIG", "a", "x", "1", "-j")
    assert json.loads(res.stdout)["error"]["err_code"] == 10071
    assert doc(kv("kv", "update", "CONFIG", "a", "3", "2", "-j"))["revision"] == 3
    ok(kv("kv", "del", "CONFIG", "a", "-f"))
    res = kv("kv", "get", "CONFIG", "a", "-j")
    assert json.loads(res.stdout)["error"]["err_code"] == 10037
    # create after a delete is allowed
    assert doc(kv("kv", "create", "CONFIG", "a", "again", "-j"))["revision"] == 5
    hist = doc(kv("kv", "history", "CONFIG", "a", "-j"))
    assert [(h["revision"], h["operation"]) for h in hist] == [
        (1, "PUT"), (2, "PUT"), (3, "PUT"), (4, "DEL"), (5, "PUT")]
    # a "*" inside a token: literal to the server as to nats.go's searchKeyValid (said),
    # never asked of the server beside other filters (its last-per-subject delivery takes
    # "a*" for a wildcard there: "ab" came back, and "a" was crowded out)
    ok(kv("kv", "add", "STARS", "--history", "5"))
    for key in ("a", "a.b", "a.c.d", "ab", "abc", "x.b", "x.bc", "x.b.c"):
        ok(kv("kv", "put", "STARS", key, "v"))
    res = kv("kv", "keys", "STARS", "a*", "a", "x.b", "-j")
    assert (res.exit_code, json.loads(res.stdout)) == (0, ["a", "x.b"])
    assert "key filter 'a*' matches no key" in res.stderr
    assert doc(kv("kv", "keys", "STARS", "a*", "-j")) == []
    ok(kv("kv", "rm", "STARS", "-f"))
    assert doc(kv("kv", "revert", "CONFIG", "a", "1", "-f", "-j"))["revision"] == 6
    assert ok(kv("kv", "get", "CONFIG", "a", "--raw")).stdout == "1"
    ok(kv("kv", "purge", "CONFIG", "a", "-f"))
    assert doc(kv("kv", "history", "CONFIG", "a", "-j"))[0]["operation"] == "PURGE"
    ok(kv("kv", "rm", "CONFIG", "-f"))
    res = kv("kv", "info", "CONFIG", "-j")
    assert json.loads(res.stdout)["error"]["err_code"] == 10059


def test_reads_come_from_the_bucket_not_from_its_mirrors(kv, live):
    """A filtered mirror and a history-1 mirror of R1 both serve direct gets for KV_R1
    (mirror_direct): nats-server answers DIRECT.GET.KV_R1 from any of them. history, keys,
    watch and revert read R1's own stream (ordered consumers, ADR-8), so every run gives
    the whole answer."""
    ok(kv("kv", "add", "R1", "--history", "5"))
    for v in ("v1", "v2", "v3"):
        ok(kv("kv", "put", "R1", "k", v))
    ok(kv("kv", "put", "R1", "other", "x"))
    ok(kv("kv", "add", "R1M", "--mirror", "R1", "--keys", "other"))
    ok(kv("kv", "add", "R1H", "--mirror", "R1", "--history", "1"))
    c = live.client()
    wait_until(lambda: c.stream_info("KV_R1H")["state"]["last_seq"] == 4,
               message="the history-1 mirror copied R1")
    for _ in range(8):
        hist = doc(kv("kv", "history", "R1", "k", "-j"))
        assert [h["revision"] for h in hist] == [1, 2, 3]
        assert ok(kv("kv", "keys", "R1")).stdout.split() == ["k", "other"]
        lines = ok(kv("kv", "watch", "R1", "--timeout", "0.3s")).stdout.splitlines()
        assert len(lines) == 2, lines
    assert doc(kv("kv", "revert", "R1", "k", "1", "-f", "-j"))["revision"] == 5
    assert ok(kv("kv", "get", "R1", "k", "--raw")).stdout == "v1"


def test_add_prints_the_status_info_prints(kv):
    """nats.go reads the bucket's status after creating it: kv add prints what kv info
    prints (the cluster section included, which a create answer lacks)."""
    added = ok(kv("kv", "add", "CI1")).stdout
    info = ok(kv("kv", "info", "CI1")).stdout
    assert "Cluster Information" in added
    assert added.split("Cluster Information")[1] == info.split("Cluster Information")[1]
    assert "cluster" in doc(kv("kv", "add", "CI2", "-j"))["stream_info"]


def test_keys_with_filters(kv):
    ok(kv("kv", "add", "K"))
    for key in ("app.a", "app.b", "db.x", "gone"):
        ok(kv("kv", "put", "K", key, "v"))
    ok(kv("kv", "del", "K", "gone", "-f"))
    assert doc(kv("kv", "keys", "K", "-j")) == ["app.a", "app.b", "db.x"]
    assert doc(kv("kv", "keys", "K", "app.*", "-j")) == ["app.a", "app.b"]


def test_compact_ls_verbose_and_watch_from_a_revision(kv, live):
    """natscli's kv compact (PurgeDeletes: young markers stay), kv ls -v and kv watch
    --revision on a real server."""
    ok(kv("kv", "add", "C", "--history", "5"))
    ok(kv("kv", "put", "C", "a", "1"))
    ok(kv("kv", "put", "C", "b", "1"))
    ok(kv("kv", "put", "C", "b", "2"))
    ok(kv("kv", "rm", "C", "b", "-f"))  # natscli's rm with a key: a delete marker (rev 4)
    entries = doc(kv("kv", "ls", "C", "-v", "-j"))
    assert [(e["key"], e["revision"], e["delta"]) for e in entries] == [("a", 1, 0)]
    watched = [json.loads(x) for x in ok(kv("kv", "watch", "C", "--revision", "3",
                                            "--count", "2", "-j")).stdout.splitlines()]
    assert [(e.get("revision"), e.get("operation")) for e in watched] == [
        (3, "PUT"), (4, "DEL")]
    assert doc(kv("kv", "compact", "C", "-f", "-j")) == {"success": True, "keys": 1,
                                                         "purged": 2}
    assert [h["revision"] for h in doc(kv("kv", "history", "C", "b", "-j"))] == [4]
    assert live.client().stream_info("KV_C")["state"]["messages"] == 2


def test_watch_initial_data_then_updates(kv, live):
    ok(kv("kv", "add", "W"))
    ok(kv("kv", "put", "W", "a", "1"))
    ok(kv("kv", "put", "W", "b", "2"))

    def later():  # an update: once the watcher's consumer is there (its initial data set)
        c = live.client()
        wait_until(lambda: c.api("CONSUMER.NAMES.KV_W").get("consumers"),
                   message="the watcher's consumer")
        c.js_publish("$KV.W.c", b"3")

    threading.Thread(target=later, daemon=True).start()
    res = ok(kv("kv", "watch", "W", "--count", "3", "--timeout", "120s", "-j"))
    lines = [json.loads(x) for x in res.stdout.splitlines()]
    entries = [x for x in lines if "key" in x]
    assert [(e["key"], e["revision"], e["delta"]) for e in entries] == [
        ("a", 1, 1), ("b", 2, 0), ("c", 3, 0)]
    assert {"end_of_initial_data": True} in lines
    # the watcher's consumer is gone afterwards
    assert live.client().api("CONSUMER.NAMES.KV_W").get("consumers") in ([], None)


def test_a_watch_notices_its_bucket_removed_and_outlives_its_consumer(kv, live,
                                                                     monkeypatch):
    """Two idle heartbeats missed ask the server why (nats.go's ordered consumer does the
    same): the bucket removed ends the watch with 10059, as the engine's does; the watch's
    consumer alone gone (a server restart loses it: it is in memory) is made again after
    the last entry delivered, and the watch goes on."""
    monkeypatch.setattr("jetlink.core.live.jetstream.TAIL_HEARTBEAT_NS", 300_000_000)
    c = live.client()
    ok(kv("kv", "add", "GONE"))
    ok(kv("kv", "put", "GONE", "a", "1"))

    def remove():
        wait_until(lambda: c.api("CONSUMER.NAMES.KV_GONE").get("consumers"),
                   message="the watcher's consumer")
        c.api("STREAM.DELETE.KV_GONE")

    threading.Thread(target=remove, daemon=True).start()
    r = kv("kv", "watch", "GONE", "--timeout", "120s")
    assert r.exit_code == 1, r.output
    assert r.stderr.splitlines()[-1] == ("jetlink: error: bucket not found (10059): GONE "
                                         "(removed while watched)")

    ok(kv("kv", "add", "LOST"))
    ok(kv("kv", "put", "LOST", "a", "1"))

    def lose_the_consumer():
        names = wait_until(lambda: c.api("CONSUMER.NAMES.KV_LOST").get("consumers"),
                           message="the watcher's consumer")
        c.api(f"CONSUMER.DELETE.KV_LOST.{names[0]}")
        wait_until(lambda: (c.api("CONSUMER.NAMES.KV_LOST").get("consumers") or [None])[0]
                   not in (None, names[0]), message="the watcher's consumer made again")
        c.js_publish("$KV.LOST.b", b"2")

    threading.Thread(target=lose_the_consumer, daemon=True).start()
    res = ok(kv("kv", "watch", "LOST", "--count", "2", "--timeout", "120s", "-j"))
    entries = [json.loads(x) for x in res.stdout.splitlines() if '"key"' in x]
    assert [(e["key"], e["revision"]) for e in entries] == [("a", 1), ("b", 2)]


def test_watch_with_overlapping_key_filters(kv, live):
    """The server refuses a consumer whose filters overlap (10138): the watcher reads the
    bucket's subjects and keeps what the keys select, as on the embedded engine."""
    ok(kv("kv", "add", "OV"))
    for key in ("a.b.c", "a.x", "z"):
        ok(kv("kv", "put", "OV", key, "v"))

    def later():
        c = live.client()
        wait_until(lambda: c.api("CONSUMER.NAMES.KV_OV").get("consumers"),
                   message="the watcher's consumer")
        c.js_publish("$KV.OV.z", b"not selected")
        c.js_publish("$KV.OV.a.b.d", b"new")

    threading.Thread(target=later, daemon=True).start()
    res = ok(kv("kv", "watch", "OV", "a.>", "a.b.*", "--count", "3", "--timeout", "120s",
                "-j"))
    keys = [json.loads(x)["key"] for x in res.stdout.splitlines() if '"key"' in x]
    assert keys == ["a.b.c", "a.x", "a.b.d"]


def test_watch_empty_bucket_times_out_cleanly(kv):
    ok(kv("kv", "add", "E"))
    res = ok(kv("kv", "watch", "E", "--timeout", "300ms", "-j"))
    assert [json.loads(x) for x in res.stdout.splitlines()] == [{"end_of_initial_data": True}]


def test_aggregate_of_two_buckets(kv, live):
    ok(kv("kv", "add", "A"))
    ok(kv("kv", "add", "B"))
    ok(kv("kv", "put", "A", "a1", "x"))
    ok(kv("kv", "put", "B", "b1", "y"))
    status = doc(kv("kv", "add", "ALL", "--source", "A", "--source", "B", "-j"))
    assert status["kind"] == "aggregate" and status["read_only"] is True
    wait_until(lambda: doc(kv("kv", "keys", "ALL", "-j")) == ["a1", "b1"],
               message=lambda: f"the aggregate's keys ({doc(kv('kv', 'keys', 'ALL', '-j'))})")
    res = kv("kv", "put", "ALL", "z", "1")
    assert res.exit_code == 1 and "read-only aggregate" in res.stderr


def _on(url: str, *options: str):
    """`jetlink --server URL OPTIONS ...` as a function of the rest of the arguments."""
    def run(*args: str):
        return runner.invoke(app, ["--server", url, *options, *args], prog_name="jetlink")
    return run


def test_kv_mirror_across_domains(live_domains, monkeypatch):
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)
    hub = live_domains.hub.url
    west, east = _on(hub, "--js-domain", "west"), _on(hub, "--js-domain", "east")

    ok(west("kv", "add", "CONFIG"))
    ok(west("kv", "put", "CONFIG", "k", "v1"))
    status = doc(east("kv", "add", "CONFIG_EAST", "--mirror", "CONFIG", "--mirror-domain",
                      "west", "--compress", "-j"))
    assert status["kind"] == "mirror"
    assert status["is_compressed"] is True
    cfg = status["stream_info"]["config"]
    assert cfg["compression"] == "s2"
    assert cfg["mirror"]["external"]["api"] == "$JS.west.API"
    wait_until(lambda: (r := east("kv", "get", "CONFIG_EAST", "k", "--raw")).exit_code == 0
               and r.stdout == "v1", message=lambda: "the mirror's value of k ("
               f"{east('kv', 'get', 'CONFIG_EAST', 'k', '--raw').output!r})")
    res = east("kv", "put", "CONFIG_EAST", "k", "v2")
    assert res.exit_code == 1
    assert res.stderr == ("jetlink: error: KV CONFIG_EAST is a read-only mirror of bucket "
                          "CONFIG of domain west: write to the bucket CONFIG of domain west "
                          "instead (jetlink --js-domain west kv put CONFIG ...)\n")
    assert doc(east("kv", "edit", "CONFIG_EAST", "--no-compress", "-j"))["is_compressed"] is False
    # an origin bucket that does not exist in its domain: refused before anything is made
    res = east("kv", "add", "NOPE_EAST", "--mirror", "NOPE", "--mirror-domain", "west", "-j")
    assert res.exit_code == 1
    assert json.loads(res.stdout)["error"]["err_code"] == 10059
    assert "NOPE_EAST" not in json.dumps(doc(east("stream", "ls", "--names", "-j")))


def test_kv_writes_reach_the_addressed_domain_across_a_leafnode(live_domains, monkeypatch):
    """From east's leaf, `--js-domain west` writes go through west's API prefix
    ($JS.west.API.$KV.<bucket>.<key>, as nats.go's KV): a plain $KV.<bucket>.<key> would be
    stored by east's bucket of the same name, or by no stream at all."""
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)
    leaf = live_domains.leaf.url
    west, east = _on(leaf, "--js-domain", "west"), _on(leaf)

    ok(west("kv", "add", "SAME"))
    ok(east("kv", "add", "SAME"))
    ok(west("kv", "put", "SAME", "k", "west"))
    ok(west("kv", "put", "SAME", "only", "west"))
    ok(east("kv", "put", "SAME", "k", "east"))
    assert ok(west("kv", "get", "SAME", "k", "--raw")).stdout == "west"
    assert ok(east("kv", "get", "SAME", "k", "--raw")).stdout == "east"
    assert doc(west("kv", "keys", "SAME", "-j")) == ["k", "only"]
    assert doc(east("kv", "keys", "SAME", "-j")) == ["k"]
    ok(west("kv", "del", "SAME", "only", "-f"))
    assert doc(west("kv", "keys", "SAME", "-j")) == ["k"]
    assert [e["revision"] for e in doc(west("kv", "history", "SAME", "k", "-j"))] == [1]


def test_a_kv_mirror_of_a_missing_bucket_says_where_it_was_looked_for(nats_single, tmp_path):
    """The origin is looked for in the server's own JetStream domain: the refusal says so
    (it said "in cluster " with no name)."""
    from helpers import runner

    from jetlink.cli.main import app

    res = runner.invoke(app, ["--server", nats_single.url, "kv", "add", "MNOPE", "--mirror",
                              "NOPE"], prog_name="jetlink",
                        env={"JETLINK_DATA_DIR": str(tmp_path / "d")})
    assert (res.exit_code, res.stderr) == (1, (
        "jetlink: error: origin bucket NOPE not found in the server's JetStream domain "
        "(10059)\n"))


def test_a_watch_ended_by_two_interrupts_leaves_no_consumer(live, tmp_path):
    """`kv watch` is an ordered push consumer, deleted when the watch ends: two SIGINTs at
    once (Ctrl-C pressed twice, `timeout -s INT`) leave none on the server either (its
    deletion is not interrupted: core/interrupts.py)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    ok(runner.invoke(app, ["--server", live.url, "kv", "add", "WI"], prog_name="jetlink"))
    ok(runner.invoke(app, ["--server", live.url, "kv", "put", "WI", "k", "v"],
                     prog_name="jetlink"))
    c = live.client()
    for gap in (0.0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.08, 0.12):
        proc = subprocess.Popen(
            [sys.executable, "-m", "jetlink.cli", "--server", live.url, "kv", "watch", "WI"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")})
        wait_until(lambda p=proc: p.poll() is not None
                   or c.stream_info("KV_WI")["state"]["consumer_count"] == 1,
                   message="the watch's consumer made")
        proc.send_signal(signal.SIGINT)
        time.sleep(gap)  # (the second while the first is being handled: no fixed outcome)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        # 130, or killed by the second one as the interpreter exits (a shell says 130 too)
        assert proc.returncode in (130, -signal.SIGINT), (proc.returncode, out, err)
        assert "Traceback" not in err, err
        assert c.stream_info("KV_WI")["state"]["consumer_count"] == 0
