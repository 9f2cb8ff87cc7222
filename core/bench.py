"""Engine benchmarks (``jetlink bench ...``): measure, do not assert.

``bench_pub`` publishes through the real publish path (``JetStream.publish_batch``) into a
stream with a per-subject limit and a duplicate window, and in the same run measures the raw
SQLite ``executemany`` rate for the same rows into a bare table, so the ratio says how much of
SQLite's own insert speed the engine keeps.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from typing import Any

__all__ = ["bench_pub"]


def bench_pub(n: int = 1_000_000, size: int = 128, *, batch: int = 10_000,
              subjects: int = 1_000, max_per_subject: int = 0, msg_ids: bool = False,
              storage: str = "file", data_dir: str | None = None) -> dict[str, Any]:
    """Publish ``n`` messages of ``size`` bytes in batches of ``batch`` over ``subjects``
    subjects through ``JetStream.publish_batch``; in the same run, the raw executemany of the
    same rows into a bare table.

    The stream: ``max_msgs_per_subject`` = ``max_per_subject`` (default: enough to keep
    every message, so the limit is checked on every publish but never removes), duplicate
    window 2m (``msg_ids=True`` adds a ``Nats-Msg-Id`` to every message).

    The two are measured batch by batch, alternately (engine batch k, then raw batch k), so a
    busy machine slows both alike. The raw side builds each row tuple ``(stream, seq, subject,
    ts, headers, data)`` from the same input and inserts it with ``executemany`` into a table
    with no key and no index, one transaction per batch, same connection settings.

    Returns ``{"messages", "bytes", "seconds", "msgs_per_sec", "mb_per_sec",
    "raw_rows_per_sec", "ratio", ...}`` (MB = 10^6 bytes of payload).
    """
    from .clock import SystemClock
    from .headers import encode_headers
    from .jetstream import JetStream
    from .store import DataDir, connect

    if n <= 0 or size < 0 or batch <= 0 or subjects <= 0:
        raise ValueError("n, batch and subjects must be positive, size not negative")
    per_subject = max_per_subject or (n // subjects + 2)
    tmp = tempfile.mkdtemp(prefix="jetlink-bench-", dir=data_dir)
    try:
        dd = DataDir(os.path.join(tmp, "data"))
        js = JetStream(dd.open("local"), SystemClock())
        js.add_stream({
            "name": "BENCH", "subjects": ["bench.>"], "storage": storage,
            "max_msgs_per_subject": per_subject, "duplicate_window": 120_000_000_000,
        })
        raw = connect(os.path.join(tmp, "raw.db"))
        raw.execute("CREATE TABLE raw (stream_id, seq, subject, ts, hdr, data)")
        names = [f"bench.s{i}" for i in range(subjects)]
        payload = os.urandom(size)
        seconds = raw_seconds = 0.0
        for start in range(0, n, batch):
            stop = min(n, start + batch)
            if msg_ids:
                msgs = [(names[i % subjects], payload, {"Nats-Msg-Id": str(i)})
                        for i in range(start, stop)]
            else:
                msgs = [(names[i % subjects], payload, None) for i in range(start, stop)]
            t0 = time.perf_counter()
            js.publish_batch(msgs)
            seconds += time.perf_counter() - t0

            t0 = time.perf_counter()
            now = time.time_ns()
            rows = [(1, start + k + 1, m[0], now,
                     encode_headers(m[2]) if m[2] else None, m[1]) for k, m in enumerate(msgs)]
            raw.execute("BEGIN IMMEDIATE")
            raw.executemany("INSERT INTO raw VALUES (?, ?, ?, ?, ?, ?)", rows)
            raw.execute("COMMIT")
            raw_seconds += time.perf_counter() - t0
        raw.close()
        state = js.stream_info("BENCH").state
        dd.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    msgs_per_sec = n / seconds if seconds else 0.0
    raw_rate = n / raw_seconds if raw_seconds else 0.0
    return {
        "messages": n,
        "bytes": n * size,
        "seconds": round(seconds, 3),
        "msgs_per_sec": round(msgs_per_sec),
        "mb_per_sec": round(n * size / seconds / 1e6, 2) if seconds else 0.0,
        "raw_rows_per_sec": round(raw_rate),
        "ratio": round(msgs_per_sec / raw_rate, 3) if raw_rate else 0.0,
        "batch": batch,
        "subjects": subjects,
        "max_msgs_per_subject": per_subject,
        "msg_ids": msg_ids,
        "storage": storage,
        "stream_messages": state.messages,
        "stream_bytes": state.bytes,
    }


if __name__ == "__main__":  # pragma: no cover - manual runs
    import json
    import sys

    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    print(json.dumps(bench_pub(count), indent=2))

