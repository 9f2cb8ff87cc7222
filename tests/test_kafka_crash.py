"""Crash safety of cluster link replication: the replicator is killed with SIGKILL while a
mirror topic catches up (100,000 records over 4 partitions, small steps, offset sync on), then
run to the end. Each step copies records and moves the partition offsets in one transaction of
the destination, so the mirror ends with the source's records at the same offsets, nothing
duplicated, the partition counters exact, and the synced group offsets equal to the source's.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from jetlink.core.clock import ManualClock
from jetlink.core.kafka.links import Links
from jetlink.core.kafka.mirrors import Mirrors
from jetlink.core.kafka.topics import Kafka, partition_range, records_bytes
from jetlink.core.store import DataDir

N = 100_000
PARTITIONS = 4
KILLS = 3

REPLICATOR = """
import sys
from jetlink.core.clock import SystemClock
from jetlink.core.kafka.mirrors import pump_links
from jetlink.core.store import DataDir
dd = DataDir(sys.argv[1])
while any(r.moved for r in pump_links(dd, SystemClock(), max_records=int(sys.argv[2]))):
    pass
"""


def _progress(path) -> int:
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            row = conn.execute("SELECT coalesce(sum(log_end - log_start), 0) FROM partitions"
                               ).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return 0
    return row[0]


@pytest.mark.slow
def test_sigkill_during_link_catch_up(tmp_path):
    rnd = random.Random(os.getpid() ^ int(time.time()))
    data = tmp_path / "data"
    dd = DataDir(data)
    clock = ManualClock()
    dd.add_cluster("west", "kafka")
    dd.add_cluster("east", "kafka")
    west = Kafka(dd.open("west"), clock)
    west.create_topic("orders", PARTITIONS, {"retention.ms": "-1"})  # system clock later
    for p in range(PARTITIONS):
        west.produce("orders", [(f"k{i}".encode(), i.to_bytes(4, "big"),
                                 [("n", str(i).encode())] if i % 5 == 0 else [])
                                for i in range(N // PARTITIONS)], partition=p)
    west.write_group_offsets((f"g{g}", "orders", p, 1000 * g + p)
                             for g in range(20) for p in range(PARTITIONS))
    Links(dd, "east", clock).create("L", "west", {
        "consumer.offset.sync.enable": "true", "consumer.offset.sync.ms": "0",
        "consumer.offset.group.filters": '{"groupFilters": [{"name": "*", '
        '"patternType": "LITERAL", "filterType": "INCLUDE"}]}'})
    Mirrors(dd, "east", clock).create("orders", "L")
    dd.close()
    east_db = data / "east.db"
    kills = 0
    for _ in range(KILLS):
        proc = subprocess.Popen([sys.executable, "-c", REPLICATOR, str(data),
                                 str(rnd.choice([101, 257, 499]))],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        start = _progress(east_db)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            if _progress(east_db) > start + rnd.randint(1_000, 15_000):
                break
            time.sleep(0.001)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            kills += 1
        else:
            assert proc.returncode == 0, proc.stderr.read().decode()
    final = subprocess.run([sys.executable, "-c", REPLICATOR, str(data), "3000"],
                           capture_output=True, text=True, timeout=600)
    assert final.returncode == 0, final.stderr
    assert kills >= 1

    dd = DataDir(data)
    west, east = Kafka(dd.open("west"), clock), Kafka(dd.open("east"), clock)
    src = {p.partition: p for p in west.offsets("orders")}
    dst = {p.partition: p for p in east.offsets("orders")}
    conn = dd.open("east").conn
    t_id = east.topic_rowid("orders")
    for p in range(PARTITIONS):
        assert (dst[p].log_start, dst[p].log_end) == (src[p].log_start, src[p].log_end)
        lo, hi = partition_range(t_id, p)
        count = conn.execute("SELECT count(*) FROM records WHERE id >= ? AND id < ?",
                             (lo, hi)).fetchone()[0]
        assert count == dst[p].log_end - dst[p].log_start  # nothing duplicated or missing
        assert dst[p].bytes == src[p].bytes == records_bytes(conn, lo, hi)
        got = [(r.offset, r.timestamp, r.key, r.value, r.headers)
               for r in east.iter_records("orders", p)]
        want = [(r.offset, r.timestamp, r.key, r.value, r.headers)
                for r in west.iter_records("orders", p)]
        assert got == want
    assert east.committed_all("orders") == west.committed_all("orders")
    dd.close()
