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
