"""A publisher killed with SIGKILL loses no acknowledged message and leaves no partial one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from jetlink.core.jetstream import JetStream
from jetlink.core.store import DataDir
from jetlink.core.streams import recount

CHILD = textwrap.dedent(
    """
    import sys, hashlib
    from jetlink.core.store import DataDir
    from jetlink.core.jetstream import JetStream
    from jetlink.core.errors import ApiError

    js = JetStream(DataDir(sys.argv[1]).open())
    try:
        js.add_stream({"name": "C", "subjects": ["c.>"], "max_msgs_per_subject": 1000})
    except ApiError:
        pass
    round_ = sys.argv[2]
    print("READY", flush=True)
    i = 0
    while True:
        batch = []
        for _ in range(int(sys.argv[3])):
            i += 1
            body = (f"{round_}-{i}-" * (1 + i % 40)).encode()
            digest = hashlib.sha256(body).hexdigest()
            batch.append((f"c.{i % 13}", body, {"Sum": digest}))
        acks = js.publish_batch(batch) if len(batch) > 1 else [js.publish(*batch[0])]
        print("ACK " + " ".join(str(a.seq) for a in acks), flush=True)
    """
)


def _run_and_kill(path: str, round_: str, batch: int, acks_wanted: int) -> list[int]:
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, path, round_, str(batch)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    acked: list[int] = []
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "READY", proc.stderr.read()
        deadline = time.monotonic() + 20
        while len(acked) < acks_wanted and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            acked.extend(int(s) for s in line.split()[1:])
        os.kill(proc.pid, signal.SIGKILL)  # mid-loop: likely inside a transaction
        rest, _ = proc.communicate(timeout=10)
        for line in rest.splitlines():  # acks printed before the kill landed
            if line.startswith("ACK "):
                acked.extend(int(s) for s in line.split()[1:])
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    return acked


def _check(path: str, acked: list[int]) -> int:
    import hashlib

    dd = DataDir(path)
    js = JetStream(dd.open())
    conn = js.cluster.conn
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    st = js.stream_info("C").state
    # every acknowledged message is there, intact
    for seq in acked:
        m = js.get_msg("C", seq)
        assert hashlib.sha256(m.data).hexdigest() == m.headers["Sum"][0]
    # the counters equal a recount: no half-written message or counter
    sid = conn.execute("SELECT id FROM streams WHERE name='C'").fetchone()[0]
    rc = recount(conn, sid)
    assert (rc["msgs"], rc["bytes"]) == (st.messages, st.bytes)
    assert rc["subjects"] == rc["subjects_table"]
    assert rc["chain_errors"] == []
    assert rc["max_seq"] == st.last_seq and rc["min_seq"] == st.first_seq
    assert st.last_seq >= max(acked)
    assert st.messages == st.last_seq - st.first_seq + 1  # no gaps: nothing removed
    dd.close()
    return st.last_seq


def test_sigkill_loses_no_acknowledged_message(tmp_path):
    path = str(tmp_path / "data")
    acked = _run_and_kill(path, "r1", 50, 600)
    assert len(acked) >= 50
    last = _check(path, acked)
    # a second process resumes where the first stopped, and is killed too
    more = _run_and_kill(path, "r2", 1, 40)
    assert min(more) == last + 1
    _check(path, acked + more)
