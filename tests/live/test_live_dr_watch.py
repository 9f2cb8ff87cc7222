"""`jetlink dr watch` on real nats-servers: two JetStream domains joined by a leafnode (west
the hub, east the leaf), the watch a real process talking to east.

West's ORDERS is mirrored to east: the watch exports the mirror with region ``west`` (its
origin's domain) and cluster ``east`` (the server's). West is killed, east fails over taking
west's subjects, west comes back: with --fence-on-return the watch fences west's ORDERS by
itself, once (one line on stderr, one action counted), and exports it fenced.
"""

from __future__ import annotations

import signal

import pytest
from test_dr_watch import Watcher, obj, samples

from live.clihelp import ok
from live.servers import wait_until


@pytest.mark.slow
def test_live_watch_exports_the_mirror_and_fences_a_returned_origin_once(
        live_domains, cli, tmp_path):
    d = live_domains
    c = d.client()
    c.stream_create({"name": "ORDERS", "subjects": ["orders.>"]}, domain="west")
    for i in range(3):
        c.js_publish("orders.eu", b"m%d" % (i + 1))
    c.stream_create({"name": "ORDERS_EAST", "mirror": {
        "name": "ORDERS", "external": {"api": "$JS.west.API"}}}, domain="east")
    wait_until(lambda: c.stream_info("ORDERS_EAST", domain="east")["state"]["last_seq"] == 3,
               message="the mirror caught up")
    ok(cli("--server", d.leaf.url, "positions", "sync"))
    w = Watcher(tmp_path, ["--server", d.leaf.url], "--interval", "300ms",
                "--fence-on-return")
    try:
        mirror = obj("ORDERS_EAST", cluster="east", region="west")
        got = w.metrics()
        assert samples(got, "jetlink_dr_lag") == {mirror: 0}
        assert samples(got, "jetlink_dr_split_brain") == {mirror: 0}
        assert w.get("/healthz") == (200, "ok\n")
        d.hub.kill()  # the outage
        try:
            ok(cli("--server", d.leaf.url, "stream", "failover", "ORDERS_EAST", "-f"))
            # a watch of the region started now, west failed over and silent: west is a
            # region all the same (its mirrors are gone: it was refused, "no region named")
            (tmp_path / "from").mkdir()
            w2 = Watcher(tmp_path / "from", ["--server", d.leaf.url], "--interval", "300ms",
                         "--from", "west", "--fence-on-return", "--dry-run")
            try:
                wait_until(lambda: w2.metrics()["jetlink_dr_checks"].samples[0].value >= 1,
                           message=w2.seen)
                assert w2.proc.poll() is None, w2.seen()
            finally:
                w2.kill()
        finally:
            d.hub.restart()
            d.wait_ready()  # west is back, the leafnode joined: a split brain
        wait_until(lambda: samples(w.metrics(), "jetlink_dr_fenced") == {mirror: 1},
                   message=w.seen)
        assert samples(w.metrics(), "jetlink_dr_actions") == {
            (("action", "fence"), ("region", "west"), ("result", "fenced")): 1}
        cfg = d.client().stream_info("ORDERS", domain="west")["config"]
        assert cfg["subjects"] == ["$JETLINK.fenced.ORDERS"]
        checks = w.metrics()["jetlink_dr_checks"].samples[0].value
        wait_until(lambda: w.metrics()["jetlink_dr_checks"].samples[0].value >= checks + 2,
                   message=w.seen)
        assert [ln for ln in w.stderr().splitlines() if "dr watch: fenced" in ln] == [
            "jetlink: dr watch: fenced stream ORDERS@west (failed over to ORDERS_EAST@east): "
            "producers on its subjects get no responders; stored messages and consumers "
            "kept"]
        assert w.stop(signal.SIGTERM) == 0
    finally:
        w.kill()


def test_a_watch_connects_again_after_the_server_restarts(live):
    """A failed check closes the backend's connection (which never reconnects by itself):
    the next check connects anew, so a restarted server is watched again."""
    from jetlink.core.backend import LiveBackend
    from jetlink.core.dr.watch import Watch
    from jetlink.core.live.target import ServerTarget

    backend = LiveBackend(ServerTarget((live.url,)))
    w = Watch(backend)
    try:
        assert w.check().failure == ""
        live.restart()
        failed = w.check()
        assert "lost the connection" in failed.failure, failed.failure
        again = w.check()
        assert again.failure == "", again.failure
    finally:
        backend.close()
