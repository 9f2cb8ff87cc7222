"""Crash safety of replication: the replicator is killed with SIGKILL at random points.

A subprocess runs ``pump_until_idle`` on a 100,000-message catch-up (a mirror and a sourced
stream in another cluster, small steps, the SQL path or the per-message path chosen at random
per run; the first run copies the whole catch-up at once, which the SQL path splits in
transactions whose logs are checkpointed on another thread); it is killed with SIGKILL 3
times while it copies, then run to the end. A step writes the messages and the cursor in one
transaction of the target, so the mirror ends identical to its origin and the sourced stream
holds every origin message exactly once.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

from helpers import WAIT_TIMEOUT, wait_until

from jetlink.core.clock import ManualClock
from jetlink.core.jetstream import JetStream
from jetlink.core.store import DataDir
from jetlink.core.streams import recount

N = 100_000
KILLS = 3

REPLICATOR = """
import sys
from jetlink.core.clock import SystemClock
from jetlink.core.replication import pump_until_idle
from jetlink.core.store import DataDir
pump_until_idle(DataDir(sys.argv[1]), SystemClock(), batch=int(sys.argv[2]),
                bulk=sys.argv[3] == "sql")
"""


def _progress(path) -> int:
    """Messages copied so far (mirror + sourced stream), read without blocking the writer."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            rows = conn.execute("SELECT msgs FROM streams WHERE name IN ('M', 'S')").fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return 0
    return sum(r[0] for r in rows)


def _start(data, rnd, whole=False):
    """The replicator in a subprocess: small steps or the whole catch-up at once (a batch of
    1,000,000: the SQL path splits it in transactions), the SQL path or the per-message
    path, chosen at random unless ``whole``."""
    batch = 1_000_000 if whole else rnd.choice([997, 2_000, 5_003, 1_000_000])
    path = "sql" if whole else rnd.choice(["sql", "per-message"])
    return subprocess.Popen([sys.executable, "-c", REPLICATOR, str(data), str(batch), path],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def test_sigkill_during_catch_up_loses_and_duplicates_nothing(tmp_path):
    rnd = random.Random(os.getpid() ^ int(time.time()))
    data = tmp_path / "data"
    dd = DataDir(data)
    clock = ManualClock()
    origin = JetStream(dd.open("local"), clock)
    origin.add_stream({"name": "O", "subjects": ["o.>"]})
    for start in range(0, N, 10_000):
        batch = []
        for i in range(start, start + 10_000):
            headers = {"Nats-Msg-Id": f"id{i}"} if i % 7 == 0 else None
            batch.append((f"o.{i % 50}.x", i.to_bytes(4, "big"), headers))
        origin.publish_batch(batch)
        clock.advance(1_000_000)
    dd.add_cluster("east")
    east = JetStream(dd.open("east"), clock)
    ext = {"external": {"api": "$JS.local.API"}}
    east.add_stream({"name": "M", "mirror": {"name": "O", **ext}})
    east.add_stream({"name": "S", "sources": [{"name": "O", **ext, "subject_transforms": [
        {"src": "o.*.x", "dest": "s.{{wildcard(1)}}"}]}]})
    dd.close()
    target_db = data / "east.db"

    kills = 0
    thresholds = sorted(rnd.uniform(0.05, 0.9) * 2 * N for _ in range(KILLS))
    for i, threshold in enumerate(thresholds):
        proc = _start(data, rnd, whole=i == 0)  # the first run: the split whole catch-up
        try:
            wait_until(lambda p=proc, t=threshold: p.poll() is not None
                       or _progress(target_db) >= t, interval=0.002,
                       message=lambda t=threshold: f"the replicator copying past {t:.0f} "
                       f"messages (copied {_progress(target_db)})")
        except AssertionError:  # pragma: no cover - a stuck replicator
            proc.kill()
            raise
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
        if proc.returncode not in (0, -signal.SIGKILL):
            raise AssertionError(proc.stderr.read().decode())
    proc = _start(data, rnd)
    assert proc.wait(timeout=WAIT_TIMEOUT) == 0, proc.stderr.read().decode()
    assert kills >= 1  # at least one kill landed while it was copying

    dd = DataDir(data)
    origin = JetStream(dd.open("local"), clock)
    east = JetStream(dd.open("east"), clock)
    # The mirror is the origin, message for message.
    want = [(m.seq, m.subject, m.ts, m.hdr, m.data) for m in origin.messages("O", chunk=20_000)]
    got = [(m.seq, m.subject, m.ts, m.hdr, m.data) for m in east.messages("M", chunk=20_000)]
    assert got == want
    assert east.state("M").to_json()["bytes"] == origin.state("O").to_json()["bytes"]
    # The sourced stream holds each origin message exactly once, in origin order.
    seqs = []
    for m in east.messages("S", chunk=20_000):
        value = m.headers["Nats-Stream-Source"][0].split(" ")
        seqs.append(int(value[1]))
        assert m.subject == "s." + value[4].split(".")[1]
        assert m.data == (seqs[-1] - 1).to_bytes(4, "big")
    assert seqs == list(range(1, N + 1))
    with east.cluster.read() as conn:
        for name in ("M", "S"):
            sid = conn.execute("SELECT id FROM streams WHERE name = ?", (name,)).fetchone()[0]
            rc = recount(conn, sid)
            assert rc["chain_errors"] == [] and rc["msgs"] == N
            assert rc["subjects"] == rc["subjects_table"]
    info = east.stream_info("S").to_json()["sources"][0]
    assert (info["lag"], info["seq"]) == (0, N)
    dd.close()
