"""The message schema jetlink writes to and reads from a lake (Parquet), and that the Spark
jobs work on: one row per message of a stream or record of a topic.

=========  =======  ====================================================================
column     type     meaning
=========  =======  ====================================================================
stream     string   the stream's (or topic's) name
partition  int32    the topic partition (0 for a stream)
seq        int64    the stream sequence (or the record's offset)
subject    string   the message's subject (null for a topic record)
key        binary   the record's key (null for a stream message)
ts         int64    the time stored, nanoseconds since the Unix epoch (UTC)
headers    binary   a stream message's header block as published (``NATS/1.0\\r\\n...``), a
                    record's headers as jetlink stores them (a JSON array of
                    ``[name, base64(value)]``); null when there are none
data       binary   the payload (the record's value; null only for a tombstone)
=========  =======  ====================================================================

Rows carry no deleted messages: a gap in ``seq`` is a gap in the stream. Beside the data files,
``_jetlink.json`` records what the rows came from (kind, name, config, creation time, identity,
state); Spark and Parquet readers skip files whose names start with ``_``.

This module holds the definition only; the readers and writers (pyarrow, Spark) build their
schema objects from ``COLUMNS``.
"""

from __future__ import annotations

COLUMNS: tuple[tuple[str, str, bool], ...] = (
    # (name, type, nullable); types: string, int32, int64, binary
    ("stream", "string", False),
    ("partition", "int32", False),
    ("seq", "int64", False),
    ("subject", "string", True),
    ("key", "binary", True),
    ("ts", "int64", False),
    ("headers", "binary", True),
    ("data", "binary", True),
)
NAMES = tuple(c[0] for c in COLUMNS)
META_FILE = "_jetlink.json"


def arrow_schema():  # type: ignore[no-untyped-def]
    """The schema as a pyarrow.Schema (pyarrow imported here, not at module import)."""
    import pyarrow as pa

    types = {"string": pa.string(), "int32": pa.int32(), "int64": pa.int64(),
             "binary": pa.binary()}
    return pa.schema([pa.field(n, types[t], nullable=null) for n, t, null in COLUMNS])


def spark_ddl() -> str:
    """The schema as a Spark DDL string."""
    types = {"string": "STRING", "int32": "INT", "int64": "BIGINT", "binary": "BINARY"}
    return ", ".join(f"`{n}` {types[t]}{'' if null else ' NOT NULL'}" for n, t, null in COLUMNS)


# --------------------------------------------------------------------------------------------
# Reading a stream of the embedded store as Arrow batches
# --------------------------------------------------------------------------------------------
def open_readonly(db_path: str):  # type: ignore[no-untyped-def]
    """A read-only connection to a cluster database (executors of a local master open the
    file themselves; nothing they do can write to it)."""
    import sqlite3
    from pathlib import Path

    uri = Path(db_path).resolve().as_uri() + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=30.0, isolation_level=None)
    conn.execute("PRAGMA query_only = ON")
    return conn


def stream_id(conn, stream: str) -> int | None:  # type: ignore[no-untyped-def]
    row = conn.execute("SELECT id FROM streams WHERE name = ?", (stream,)).fetchone()
    return row[0] if row else None


def iter_stream_batches(db_path: str, stream: str, lo: int, hi: int, *,
                        batch_rows: int = 65_536, sid: int | None = None):  # type: ignore[no-untyped-def]
    """The stored messages of ``stream`` with ``lo <= seq <= hi``, in sequence order, as
    pyarrow RecordBatches of the lake schema (one read snapshot for the whole range).
    ``sid`` pins the stream's row id (a stream deleted and created again between planning and
    reading yields nothing rather than another stream's messages)."""
    import pyarrow as pa

    from .streams import MAX_SEQ, key_range

    schema = arrow_schema()
    conn = open_readonly(db_path)
    try:
        conn.execute("BEGIN")
        found = stream_id(conn, stream)
        if found is None or (sid is not None and found != sid):
            return
        base, top = key_range(found)
        k_lo, k_hi = base | max(lo, 0), base | min(max(hi, 0), MAX_SEQ)
        cur = conn.execute(
            "SELECT m.id, s.subject, m.ts, m.hdr, m.data FROM msgs m JOIN subjects s "
            "ON s.id = m.subject_id WHERE m.id BETWEEN ? AND ? ORDER BY m.id", (k_lo, k_hi))
        while True:
            rows = cur.fetchmany(batch_rows)
            if not rows:
                break
            keys, subjects, tss, hdrs, datas = zip(*rows)
            n = len(rows)
            yield pa.RecordBatch.from_arrays([
                pa.array([stream] * n, pa.string()),
                pa.array([0] * n, pa.int32()),
                pa.array([k & MAX_SEQ for k in keys], pa.int64()),
                pa.array(subjects, pa.string()),
                pa.nulls(n, pa.binary()),
                pa.array(tss, pa.int64()),
                pa.array(hdrs, pa.binary()),
                pa.array(datas, pa.binary()),
            ], schema=schema)
        conn.execute("COMMIT")
    finally:
        conn.close()
