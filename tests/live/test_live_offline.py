"""Streams and consumers whose servers are gone (a real three-node cluster, one node
stopped): the server answers their info with "stream is offline" (10118) / "consumer is
offline" (10119), and deletes them all the same (the meta leader's records): `stream rm -f`
and `consumer rm -f` remove them, as natscli's --force does."""

from __future__ import annotations

import json
import re

import pytest

from .clihelp import jetlink_process
from .servers import wait_until

_jetlink = jetlink_process


def _on(live_cluster, victim: str, make, leader_of) -> str:
    """A name of an R1 object ``make(name)`` made until one lands on ``victim``."""
    for i in range(30):
        name = f"OFF{i}"
        make(name)
        if leader_of(name) == victim:
            return name
    raise AssertionError(f"no R1 object landed on {victim} in 30 tries")


@pytest.mark.slow
def test_an_offline_stream_and_consumer_are_removed_with_force(live_cluster, tmp_path):
    c = live_cluster.client()
    wait_until(lambda: "error" not in c.stream_create(
        {"name": "OFFR3", "subjects": ["offr3.>"], "num_replicas": 3}), message="R3 create")
    meta = live_cluster.meta_leader()
    victim = next(n for n in live_cluster.nodes if n.name != meta)
    stream = _on(live_cluster, victim.name,
                 lambda n: c.stream_create({"name": n, "subjects": [n.lower() + ".>"]}),
                 live_cluster.stream_leader)

    def consumer_leader(name: str) -> str | None:
        info = live_cluster.api(f"CONSUMER.INFO.OFFR3.{name}")
        return (info.get("cluster") or {}).get("leader")

    consumer = _on(live_cluster, victim.name, lambda n: live_cluster.api(
        f"CONSUMER.CREATE.OFFR3.{n}", {"stream_name": "OFFR3", "config": {
            "durable_name": n, "ack_policy": "explicit", "num_replicas": 1}}),
        consumer_leader)
    other = next(n for n in live_cluster.nodes if n is not victim)
    victim.stop()
    try:
        wait_until(lambda: live_cluster.api(f"STREAM.INFO.{stream}").get(
            "error", {}).get("err_code") == 10118, message=f"{stream} offline")
        wait_until(lambda: live_cluster.api(f"CONSUMER.INFO.OFFR3.{consumer}").get(
            "error", {}).get("err_code") == 10119, message=f"{consumer} offline")
        # its info: the server's refusal, naming it
        r = _jetlink(tmp_path, other.url, "stream", "info", stream)
        assert (r.returncode, r.stderr) == (
            1, f"jetlink: error: stream is offline (10118): {stream}\n")
        r = _jetlink(tmp_path, other.url, "consumer", "info", "OFFR3", consumer)
        assert (r.returncode, r.stderr) == (
            1, f"jetlink: error: consumer is offline (10119): OFFR3 > {consumer}\n")
        # listed, its row without state, and named as not reached (natscli's
        # "Inaccessible Streams"), not shown as a stream that stores nothing
        r = _jetlink(tmp_path, other.url, "stream", "ls")
        assert r.returncode == 0, r.stderr
        listed, _, gone = r.stdout.partition("Inaccessible Streams")
        assert f" {stream} " in gone, r.stdout
        # every stream reached listed once (a page with missing names is not asked again)
        assert listed.count(" OFFR3 ") == 1, r.stdout
        assert r.stderr == ("jetlink: warning: 1 stream was not reached (its servers did not "
                            "answer): listed as inaccessible, with no state (not none "
                            "stored)\n")
        # the reports: no row without state for it, named apart (natscli's renderMissing)
        r = _jetlink(tmp_path, other.url, "stream", "report")
        assert r.returncode == 0, r.stderr
        report, _, gone = r.stdout.partition("Inaccessible Streams")
        assert f" {stream} " in gone and f" {stream} " not in report, r.stdout
        assert " OFFR3 " in report, r.stdout
        r = _jetlink(tmp_path, other.url, "stream", "report", "-j")
        assert stream not in [s["stream"] for s in json.loads(r.stdout)], r.stdout
        assert r.stderr == (f"jetlink: warning: not reached (their servers did not answer), "
                            f"not in the report: {stream}\n")
        r = _jetlink(tmp_path, other.url, "consumer", "report", "OFFR3")
        assert r.returncode == 0, r.stderr
        report, _, gone = r.stdout.partition("Inaccessible Consumers")
        assert f" {consumer} " in gone and f" {consumer} " not in report, r.stdout
        assert not re.search(r"^│\s+│", report, re.M), r.stdout  # (no row without a name)
        r = _jetlink(tmp_path, other.url, "consumer", "ls", "OFFR3", "-j")
        assert consumer in json.loads(r.stdout) and "" not in json.loads(r.stdout), r.stdout
        r = _jetlink(tmp_path, other.url, "consumer", "ls", "OFFR3")
        assert r.returncode == 0 and f" {consumer} " in r.stdout, r.stdout
        r = _jetlink(tmp_path, other.url, "consumer", "rm", "OFFR3", consumer, "-f")
        assert (r.returncode, r.stdout) == (0, f"Consumer OFFR3 > {consumer} was deleted\n"), \
            r.stderr
        r = _jetlink(tmp_path, other.url, "stream", "rm", stream, "-f")
        assert (r.returncode, r.stdout) == (0, f"Stream {stream} was deleted\n"), r.stderr
        # and a name that is not there is still said first, not deleted blindly
        r = _jetlink(tmp_path, other.url, "stream", "rm", "NOPE_OFF", "-f")
        assert r.returncode == 1 and "stream not found (10059)" in r.stderr
    finally:
        victim.restart()
        live_cluster.wait_ready()
