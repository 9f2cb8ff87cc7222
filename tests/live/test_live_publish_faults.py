"""Publishes while a stream's servers go away (a real three-node cluster): a stream with no
leader answers "no responders" (503), which is not "no stream matches". The publish is
tried again while the timeout lasts, as nats.go does; when the stream stays without a leader
the error names the stream and the cause; a subject no stream captures still fails at once
with "no stream matches"."""

from __future__ import annotations

import pytest

from .clihelp import jetlink_process
from .servers import wait_until

_jetlink = jetlink_process


@pytest.mark.slow
def test_a_stream_without_a_leader_is_not_a_missing_stream(live_cluster, tmp_path):
    cfg = {"name": "R3P", "subjects": ["r3p.>"], "num_replicas": 3}
    wait_until(lambda: "error" not in live_cluster.client().stream_create(cfg),
               message="R3 create")
    leader = live_cluster.meta_leader()
    survivor = next(n for n in live_cluster.nodes if n.name != leader)
    # No stream captures the subject: said at once, not after the timeout (an hour here:
    # a publish that waited for it would outlast _jetlink's deadline and fail there).
    r = _jetlink(tmp_path, survivor.url, "--timeout", "1h", "pub", "nowhere.x", "m")
    assert r.returncode == 1
    assert r.stderr.startswith("jetlink: error: no stream matches subject nowhere.x")
    # The stream's leader dies: until the others elect one, publishes meet no responders.
    # Each is tried again within the timeout: every message is stored, none twice.
    stream_leader = live_cluster.stream_leader("R3P")
    victim = live_cluster.node(stream_leader)
    other = next(n for n in live_cluster.nodes if n is not victim)
    victim.kill()
    # Within a timeout shorter than the election: the cause, never a missing stream (a
    # resend may also go unanswered while the routes learn the node is gone).
    r = _jetlink(tmp_path, other.url, "--timeout", "500ms", "pub", "r3p.early", "m")
    assert "no stream matches" not in r.stderr
    assert r.returncode == 0 or r.stderr.strip() in (
        "jetlink: error: publish to r3p.early: stream R3P did not answer within 500ms (no "
        "responders): it has no leader now, an election or too few of its servers up; "
        "nothing was stored",
        f"jetlink: error: publish to r3p.early: no acknowledgement within 500ms from "
        f"{other.url}",
        "jetlink: error: publish to r3p.early: no responders within 500ms, and JetStream did "
        "not answer whether a stream captures the subject (its leaders may be being "
        "elected); nothing was stored"), r.stderr
    # the early message: stored (acknowledged), not stored (no responders), or unknown
    early = {1} if r.returncode == 0 else {0, 1} if "no acknowledgement" in r.stderr else {0}
    r = _jetlink(tmp_path, other.url, "--timeout", "60s", "pub", "r3p.{{Count}}", "m",
                 "--count", "3000", "-j")
    assert r.returncode == 0, r.stderr
    assert "no stream matches" not in r.stderr
    state = wait_until(lambda: live_cluster.api("STREAM.INFO.R3P").get("state"),
                       message="R3P's state after the election")
    assert state["messages"] == state["num_subjects"]  # none twice
    assert state["messages"] - 3000 in early
    victim.restart()
