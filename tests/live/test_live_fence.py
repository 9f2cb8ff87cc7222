"""The split brain and `dr fence` on real nats-servers: two JetStream domains joined by a
leafnode (west the hub, east the leaf), jetlink talking to east.

West's ORDERS (orders.>) is mirrored to east; west is killed; east fails over taking the
origin's subjects (as last synced); west is started again and the leafnode joins: over the
leafnode both domains share the account's subjects, so a publish on orders.> is stored by
both streams. `dr check` says so (CRITICAL, naming the fence); `dr fence --from west` takes
west's subjects away (recorded in its metadata) and nothing is stored twice any more; with
east on its own subjects a publish on west's is refused (no responders) and stored nowhere;
`stream failback ... --switch` gives west its subjects back, and a publish is stored once in
west and mirrored once to east.
"""

from __future__ import annotations

import json

import pytest

from live.clihelp import doc, ok
from live.servers import wait_until


@pytest.fixture
def east(live_domains, cli):
    def run(*args):
        return cli("--server", live_domains.leaf.url, *args)

    run.domains = live_domains
    return run


def _counts(c):
    return (c.stream_info("ORDERS", domain="west")["state"]["messages"],
            c.stream_info("ORDERS_EAST", domain="east")["state"]["messages"])


def _refused(c, subject):
    """The publish's error (a request nobody answers), or None when a stream took it."""
    try:
        c.js_publish(subject, b"x")
    except Exception as err:  # noqa: BLE001 - the client's no-responders error
        return f"{type(err).__name__}: {err}"
    return None


def _stored_on_both(c, subject):
    """One publish of ``subject``, and whether both streams stored it (the ack is the first
    stream's; the other's interest crosses the leafnode once it has joined: until then a
    publish reaches one side only, and the next poll publishes again)."""
    before = _counts(c)
    if _refused(c, subject) is not None:
        return False
    try:
        wait_until(lambda: _counts(c) == (before[0] + 1, before[1] + 1), timeout=2,
                   message="both streams stored it")
    except AssertionError:
        return False
    return True


@pytest.mark.slow
def test_split_brain_seen_fenced_and_undone_by_failback(east, cli, tmp_path):
    d = east.domains
    c = d.client()
    c.stream_create({"name": "ORDERS", "subjects": ["orders.>"]}, domain="west")
    for i in range(5):
        c.js_publish("orders.eu", b"m%d" % (i + 1))
    c.stream_create({"name": "ORDERS_EAST", "mirror": {
        "name": "ORDERS", "external": {"api": "$JS.west.API"}}}, domain="east")
    wait_until(lambda: c.stream_info("ORDERS_EAST", domain="east")["state"]["last_seq"] == 5,
               message="the mirror caught up")
    ok(east("positions", "sync"))
    d.hub.kill()  # the outage
    try:
        r = ok(east("stream", "failover", "ORDERS_EAST", "-f"))
        assert r.stderr == (
            "jetlink: warning: ORDERS_EAST takes orders.>, the subjects of its origin ORDERS "
            "(domain west): when that origin answers again it captures them too (a publish "
            "stored on both sides, or a tail nobody reads) until it is fenced: jetlink dr "
            "fence --from west\n")
    finally:
        d.hub.restart()
        d.wait_ready()  # west is back, the leafnode joined
    c = d.client()
    # the split brain: one publish, stored on both sides
    wait_until(lambda: _stored_on_both(c, "orders.dup.check"),
               message=lambda: f"orders.dup.check stored in both domains (counts "
                               f"{_counts(c)})")
    base = _counts(c)
    r = east("dr", "check", "-j")
    assert r.exit_code == 2, r.stdout
    mine = [m for m in json.loads(r.stdout)["mirrors"] if m["check_name"] == "ORDERS_EAST"]
    assert mine[0]["status"] == "CRITICAL" and mine[0]["critical"] == [
        "Split brain: the old origin ORDERS in domain west answers again and takes orders.>, "
        "as ORDERS_EAST does: a publish there is stored on both sides; fence it: jetlink dr "
        "fence --from west (or jetlink stream failback ORDERS_EAST)"]
    # the dry run changes no stream config
    configs = ({k: v for k, v in c.stream_info("ORDERS", domain="west")["config"].items()},
               c.stream_info("ORDERS_EAST", domain="east")["config"])
    plan = doc(east("dr", "fence", "--from", "west", "--dry-run", "-j"))
    assert [(o["name"], o["action"]) for o in plan["objects"]] == [("ORDERS", "to fence")]
    assert (c.stream_info("ORDERS", domain="west")["config"],
            c.stream_info("ORDERS_EAST", domain="east")["config"]) == configs
    rep = doc(east("dr", "fence", "--from", "west", "-f", "-j"))
    assert rep["objects"] == [{
        "kind": "stream", "name": "ORDERS", "region": "west",
        "failed_over_to": "ORDERS_EAST@east", "subjects_before": ["orders.>"],
        "subjects_after": ["$JETLINK.fenced.ORDERS"], "action": "fenced",
        "detail": "producers on its subjects get no responders; stored messages and "
                  "consumers kept"}]
    cfg = c.stream_info("ORDERS", domain="west")["config"]
    assert json.loads(cfg["metadata"]["jetlink.fenced_subjects"]) == ["orders.>"]
    again = ok(east("dr", "fence", "--from", "west", "-f"))
    assert again.stdout.endswith("Nothing to do: every old origin of west is fenced already\n")
    # stored once now: in east only
    assert c.js_publish("orders.after.fence")["stream"] == "ORDERS_EAST"
    assert _counts(c) == (base[0], base[1] + 1)
    # east on its own subjects: a publish on west's is refused and stored nowhere
    ok(east("stream", "failover", "ORDERS_EAST", "--subjects", "east.orders.>", "-f"))
    wait_until(lambda: _refused(c, "orders.refused") is not None,
               message="a publish on orders.> refused once east left it")
    assert "no responders" in _refused(c, "orders.refused").lower()
    # jetlink's own publish in west says why (the fence), as on the embedded engine
    r = cli("--server", d.hub.url, "pub", "orders.refused", "x")
    assert r.exit_code == 1 and r.stderr.startswith(
        "jetlink: error: no stream matches subject orders.refused (stream ORDERS is fenced by "
        "jetlink dr fence: it failed over, and its subjects orders.> are the other side's"), \
        r.stderr
    assert _counts(c) == (base[0], base[1] + 1)
    assert east("dr", "check", "ORDERS_EAST").exit_code != 2
    # failback: the tail (orders.dup.check, west's 6) saved, west a mirror, then the switch
    ok(east("stream", "failback", "ORDERS_EAST", "--tail", f"parquet:{tmp_path / 'tail'}",
            "-f"))
    ok(east("stream", "failback", "ORDERS_EAST", "--switch", "-f"))
    o = c.stream_info("ORDERS", domain="west")
    assert o["config"]["subjects"] == ["orders.>"] and "mirror" not in o["config"]
    assert "jetlink.fenced_subjects" not in (o["config"].get("metadata") or {})
    last = o["state"]["last_seq"]
    assert c.js_publish("orders.final")["stream"] == "ORDERS"
    wait_until(lambda: c.stream_info("ORDERS_EAST", domain="east")["state"]["last_seq"]
               == last + 1, message="east mirrored the publish after the switch")
    assert c.stream_info("ORDERS", domain="west")["state"]["last_seq"] == last + 1
    m = c.stream_info("ORDERS_EAST", domain="east")
    assert m["config"]["mirror"]["name"] == "ORDERS"
    assert m["state"]["messages"] == c.stream_info("ORDERS", domain="west")["state"][
        "messages"]
