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

__all__ = ["bench_kv", "bench_link", "bench_pub", "bench_replicate"]

# nats-server 2.15.1 on this kind of machine (shared/reference/nats-semantics.md): mirror
# catch-up 110k-140k msgs/s, a sourced stream with a subject transform about 7.2k msgs/s.
SERVER_MIRROR_RATE = 140_000
SERVER_SOURCE_RATE = 7_200


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


def bench_replicate(n: int = 1_000_000, size: int = 128, *, subjects: int = 1_000,
                    bulk: bool = True, external: bool = False,
                    data_dir: str | None = None) -> dict[str, Any]:
    """Catch-up rates of replication (core/replication.py ``pump_until_idle``).

    An origin ``ORDERS`` holds ``n`` messages of ``size`` bytes on ``orders.<k>.new``
    (``subjects`` subjects); then, each timed on its own, (a) a mirror of it catches up, and
    (b) a sourced stream with the transform ``orders.*.new`` ->
    ``archive.{{wildcard(1)}}.{{partition(3,1)}}`` catches up. ``external=True`` puts both
    targets in another cluster (``external.api = "$JS.local.API"``: the origin database is
    attached); ``bulk=False`` times the per-message path instead of the SQL path.

    Returns ``{"messages", "mirror_seconds", "mirror_msgs_per_sec", "mirror_vs_server",
    "source_seconds", "source_msgs_per_sec", "source_vs_server", ...}``; the server figures
    are nats-server 2.15.1's on this kind of machine (mirror 140k/s, source 7.2k/s).
    """
    from .clock import SystemClock
    from .jetstream import JetStream
    from .replication import pump_until_idle
    from .store import DataDir

    if n <= 0 or size < 0 or subjects <= 0:
        raise ValueError("n and subjects must be positive, size not negative")
    tmp = tempfile.mkdtemp(prefix="jetlink-bench-", dir=data_dir)
    clock = SystemClock()
    try:
        dd = DataDir(os.path.join(tmp, "data"))
        origin = JetStream(dd.open("local"), clock)
        origin.add_stream({"name": "ORDERS", "subjects": ["orders.>"]})
        names = [f"orders.{i}.new" for i in range(subjects)]
        payload = os.urandom(size)
        for start in range(0, n, 10_000):
            origin.publish_batch([(names[i % subjects], payload, None)
                                  for i in range(start, min(n, start + 10_000))])
        target = origin
        ext: dict[str, Any] = {}
        if external:
            dd.add_cluster("east")
            target = JetStream(dd.open("east"), clock)
            ext = {"external": {"api": "$JS.local.API"}}
        out: dict[str, Any] = {"messages": n, "size": size, "subjects": subjects,
                               "bulk": bulk, "external": external}
        for kind, cfg in (
            ("mirror", {"name": "MIRROR", "mirror": {"name": "ORDERS", **ext}}),
            ("source", {"name": "ARCHIVE", "sources": [{
                "name": "ORDERS", **ext, "subject_transforms": [{
                    "src": "orders.*.new",
                    "dest": "archive.{{wildcard(1)}}.{{partition(3,1)}}"}]}]}),
        ):
            target.add_stream(cfg)
            t0 = time.perf_counter()
            reports = pump_until_idle(dd, clock, bulk=bulk)
            seconds = time.perf_counter() - t0
            state = target.stream_info(cfg["name"]).state
            copied = sum(r.copied for r in reports if r.target == cfg["name"])
            rate = copied / seconds if seconds else 0.0
            server = SERVER_MIRROR_RATE if kind == "mirror" else SERVER_SOURCE_RATE
            out.update({
                f"{kind}_seconds": round(seconds, 3),
                f"{kind}_msgs_per_sec": round(rate),
                f"{kind}_vs_server": round(rate / server, 1),
                f"{kind}_messages": state.messages,
                f"{kind}_bytes": state.bytes,
            })
            target.delete_stream(cfg["name"])  # the next target's catch-up runs alone
        dd.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def bench_kv(keys: int = 100_000, history: int = 5, *, value_size: int = 100,
             single: int = 20_000, gets: int = 100_000, batch: int = 1_000,
             keep: str | None = None, data_dir: str | None = None) -> dict[str, Any]:
    """Put and get rates of a KV bucket through the engine API (core/kv.py), bucket history
    ``history`` over ``keys`` keys, values of ``value_size`` bytes:

    - ``pipelined_puts_per_sec``: ``history`` rounds over every key with ``put_many`` in
      batches of ``batch`` (one transaction per batch, as a client pipelines asynchronous
      puts); the bucket then holds ``keys * history`` entries and is full (the history
      limit is checked on every put);
    - ``puts_per_sec``: ``single`` ``put`` calls, one transaction each, on existing keys
      (each removes the key's oldest revision: the bucket is full);
    - ``gets_per_sec``: ``gets`` ``get`` calls on keys spread over the whole bucket.

    ``keep``: a directory to leave the filled data directory in (for timing the CLI on it);
    returns ``{"keys", "history", "entries", "pipelined_puts_per_sec", "puts_per_sec",
    "gets_per_sec", ...}``.
    """
    from .clock import SystemClock
    from .config.kv import KeyValueConfig
    from .kv import KV
    from .store import DataDir

    if keys <= 0 or history <= 0 or single <= 0 or gets <= 0 or batch <= 0:
        raise ValueError("keys, history, single, gets and batch must be positive")
    tmp = keep or tempfile.mkdtemp(prefix="jetlink-bench-", dir=data_dir)
    out: dict[str, Any] = {"keys": keys, "history": history, "value_size": value_size}
    try:
        dd = DataDir(os.path.join(tmp, "data"))
        kv = KV(dd, "local", SystemClock())
        kv.create_bucket(KeyValueConfig(bucket="BENCH", history=history))
        b = kv.open("BENCH")
        value = os.urandom(value_size)
        names = [f"user.{i:07d}" for i in range(keys)]
        t0 = time.perf_counter()
        for _round in range(history):
            for i in range(0, keys, batch):
                b.put_many((k, value) for k in names[i:i + batch])
        seconds = time.perf_counter() - t0
        out["pipelined_puts"] = keys * history
        out["pipelined_seconds"] = round(seconds, 3)
        out["pipelined_puts_per_sec"] = round(keys * history / seconds)
        step = max(1, keys // single) if single < keys else 1
        t0 = time.perf_counter()
        for i in range(single):
            b.put(names[(i * step) % keys], value)
        seconds = time.perf_counter() - t0
        out["puts"] = single
        out["puts_per_sec"] = round(single / seconds)
        step = max(1, keys // gets) if gets < keys else 1
        t0 = time.perf_counter()
        for i in range(gets):
            b.get(names[(i * step + 7) % keys])
        seconds = time.perf_counter() - t0
        out["gets"] = gets
        out["gets_per_sec"] = round(gets / seconds)
        st = b.status()
        out["entries"] = st.values
        out["bytes"] = st.bytes
        dd.close()
    finally:
        if keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def bench_link(n: int = 1_000_000, partitions: int = 8, size: int = 100, *,
               groups: int = 10_000, data_dir: str | None = None) -> dict[str, Any]:
    """Cluster link figures (core/kafka/mirrors.py):

    - catch-up: a topic of ``n`` records (``size``-byte values) over ``partitions``
      partitions in cluster ``west``, then a mirror topic in ``east`` through link ``L``;
      the first link step copies everything: ``records_per_sec``;
    - the limit: in the same run, the raw ``INSERT ... SELECT`` of the same rows from the
      attached source database into an empty table of the same shape: ``raw_rows_per_sec``
      and ``ratio``;
    - offset sync + failover clamping: ``groups`` consumer groups committed on every
      partition in ``west`` (half beyond the mirror's log end, after records the mirror has
      not copied), then ONE offset sync (``groups * partitions`` offsets) and a failover that
      clamps the half beyond the log end: ``sync_failover_seconds``.
    """
    import sqlite3

    from .clock import SystemClock
    from .kafka.links import Links
    from .kafka.mirrors import Mirrors
    from .kafka.topics import Kafka
    from .store import DataDir, connect

    if n <= 0 or partitions <= 0 or groups <= 0 or size < 0:
        raise ValueError("n, partitions and groups must be positive, size not negative")
    tmp = tempfile.mkdtemp(prefix="jetlink-bench-", dir=data_dir)
    clock = SystemClock()
    out: dict[str, Any] = {"records": n, "partitions": partitions, "value_size": size}
    try:
        dd = DataDir(os.path.join(tmp, "data"))
        dd.add_cluster("west")
        dd.add_cluster("east")
        west = Kafka(dd.open("west"), clock)
        west.create_topic("orders", partitions)
        value = os.urandom(size)
        per = n // partitions
        chunk = 50_000
        for p in range(partitions):
            todo = per + (1 if p < n % partitions else 0)
            while todo > 0:
                k = min(chunk, todo)
                west.produce("orders", [(None, value)] * k, partition=p)
                todo -= k
        Links(dd, "east", clock).create("L", "west", {
            "consumer.offset.sync.enable": "true",
            "consumer.offset.sync.ms": "3600000",
            "consumer.offset.group.filters": '{"groupFilters": [{"name": "*", '
            '"patternType": "LITERAL", "filterType": "INCLUDE"}]}',
        })
        m = Mirrors(dd, "east", clock)
        m.create("orders", "L")
        t0 = time.perf_counter()
        copied = sum(r.copied for r in m.step())  # one link step copies everything
        seconds = time.perf_counter() - t0
        out["copied"] = copied
        out["seconds"] = round(seconds, 3)
        out["records_per_sec"] = round(copied / seconds) if seconds else 0
        # The limit: the same rows, attached database to attached database, no work at all.
        raw = connect(os.path.join(tmp, "raw.db"))
        raw.execute("CREATE TABLE records (id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, "
                    "key BLOB, value BLOB, headers BLOB)")
        raw.execute("ATTACH DATABASE ? AS src", (str(dd.cluster_path("west")),))
        t0 = time.perf_counter()
        raw.execute("BEGIN")
        rows = raw.execute("INSERT INTO main.records SELECT * FROM src.records").rowcount
        raw.execute("COMMIT")
        raw_s = time.perf_counter() - t0
        raw.execute("DETACH DATABASE src")
        raw.close()
        out["raw_rows_per_sec"] = round(rows / raw_s) if raw_s else 0
        out["ratio"] = round(out["records_per_sec"] / out["raw_rows_per_sec"], 3) \
            if out["raw_rows_per_sec"] else 0.0
        # Offset sync + clamping: records the mirror has not copied, groups half beyond.
        for p in range(partitions):
            west.produce("orders", [(None, value)] * 10, partition=p)
        ends = {q.partition: q.log_end for q in west.offsets("orders")}
        west.write_group_offsets(
            (f"group-{g:05d}", "orders", p, ends[p] if g % 2 else max(ends[p] - 20, 0))
            for g in range(groups) for p in range(partitions))
        t0 = time.perf_counter()
        synced = m.sync_offsets("L")
        res = m.failover(["orders"], "L")[0]
        sf = time.perf_counter() - t0
        out["groups"] = groups
        out["offsets_synced"] = synced
        out["clamps"] = len(res.clamps)
        out["sync_failover_seconds"] = round(sf, 3)
        dd.close()
    except sqlite3.Error:
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


if __name__ == "__main__":  # pragma: no cover - manual runs
    import json
    import sys

    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    print(json.dumps(bench_pub(count), indent=2))

