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
state); an export still running or interrupted keeps ``_tmp-part-*`` files there instead
(over the interface, a live server's stream, ``_jetlink_progress.json`` too), which
``stream import`` refuses; Spark and Parquet readers skip files whose names start with
``_``. Every part file jetlink writes carries Parquet page checksums; readers here verify
them (files without them read as before).

This module holds that definition (``COLUMNS``, from which pyarrow and Spark build their
schema objects) and what moves rows through it without Spark: the store's readers
(:func:`iter_stream_batches`, :func:`iter_topic_batches`), the writers into the store
(:func:`write_stream_rows`, :func:`write_topic_rows`), ``stream export`` and ``stream import``
on the embedded engine and over the JetStream API of a live server (resumable), and the
dataset metadata (``_jetlink.json``).
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


def arrow_schema():
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
def open_readonly(db_path: str):
    """A connection that only reads a cluster database (executors of a local master open
    the file themselves; ``query_only``: no statement of theirs changes it, and no file is
    left beside it: core/store/datadir.py ``connect_reading``)."""
    from .store.datadir import connect_reading

    return connect_reading(db_path)


def stream_id(conn, stream: str) -> int | None:
    row = conn.execute("SELECT id FROM streams WHERE name = ?", (stream,)).fetchone()
    return row[0] if row else None


def lake_batch(name: str, partitions: Any, seqs: Any, subjects: Any, keys: Any, tss: Any,
               headers: Any, datas: Any):
    """One RecordBatch of the lake schema from column values (``subjects`` / ``keys`` None:
    all null)."""
    import pyarrow as pa

    n = len(seqs)
    return pa.RecordBatch.from_arrays([
        pa.array([name] * n, pa.string()),
        pa.array(partitions, pa.int32()),
        pa.array(seqs, pa.int64()),
        pa.nulls(n, pa.string()) if subjects is None else pa.array(subjects, pa.string()),
        pa.nulls(n, pa.binary()) if keys is None else pa.array(keys, pa.binary()),
        pa.array(tss, pa.int64()),
        pa.array(headers, pa.binary()),
        pa.array(datas, pa.binary()),
    ], schema=arrow_schema())


def iter_stream_batches(db_path: str, stream: str, lo: int, hi: int, *,
                        batch_rows: int = 65_536, sid: int | None = None):
    """The stored messages of ``stream`` with ``lo <= seq <= hi``, in sequence order, as
    pyarrow RecordBatches of the lake schema (one read snapshot for the whole range).
    ``sid`` pins the stream's row id (a stream deleted and created again between planning and
    reading yields nothing rather than another stream's messages)."""
    from .streams import MAX_SEQ, hdr_sql, key_range

    conn = open_readonly(db_path)
    try:
        conn.execute("BEGIN")
        found = stream_id(conn, stream)
        if found is None or (sid is not None and found != sid):
            return
        base, top = key_range(found)
        k_lo, k_hi = base | max(lo, 0), base | min(max(hi, 0), MAX_SEQ)
        # (a database of schema v1, not yet opened by this version, holds no references)
        refs = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                            "name = 'src_hdrs'").fetchone()
        cur = conn.execute(
            f"SELECT m.id, s.subject, m.ts, {hdr_sql('m.') if refs else 'm.hdr'}, m.data "
            "FROM msgs m JOIN subjects s "
            "ON s.id = m.subject_id WHERE m.id BETWEEN ? AND ? ORDER BY m.id", (k_lo, k_hi))
        while True:
            rows = cur.fetchmany(batch_rows)
            if not rows:
                break
            keys, subjects, tss, hdrs, datas = zip(*rows, strict=True)
            yield lake_batch(stream, [0] * len(rows), [k & MAX_SEQ for k in keys], subjects,
                             None, tss, hdrs, datas)
        conn.execute("COMMIT")
    finally:
        conn.close()


# --------------------------------------------------------------------------------------------
# Moving a stream to and from a Parquet dataset (``jetlink stream export / import``)
# --------------------------------------------------------------------------------------------
# A dataset is a directory of Parquet files of the lake schema (``part-00000.parquet``, ...)
# with ``_jetlink.json`` beside them. Paths are local paths, ``file://`` URIs, or any URI
# pyarrow.fs knows (``s3://``, ``gs://``, ``hdfs://`` ... when pyarrow was built with them).
# (imported here rather than at the top: the definitions above stay import-free)
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence  # noqa: E402
from typing import Any  # noqa: E402

from .errors import JetlinkError  # noqa: E402

PART_FORMAT = "part-{:05d}.parquet"
# Headers the publish path acts on: a row carrying one is stored by ``append`` one at a time
# (core/replication.py's mirror branch does the same); the others go through the batch path.
_LEAN_UNSAFE = (b"Nats-Msg-Id", b"Nats-TTL", b"Nats-Rollup", b"Nats-Incr")


# What installs pyarrow (and Spark): the ``spark`` extra
SPARK_EXTRA_INSTALL = "pip install 'jetlink[spark]' (pyspark, pyarrow and pandas, about 0.7 GB)"


def missing_modules(*names: str) -> list[str]:
    """Those of the top-level modules ``names`` this installation does not have (looked up
    without importing them)."""
    import importlib.util

    def found(name: str) -> bool:
        try:
            return importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            return False

    return [n for n in names if not found(n)]


def require_pyarrow(what: str, then: str = "") -> None:
    """Refuse ``what`` (its words, before "needs") when pyarrow is not installed, with the
    line that installs it and ``then`` after it."""
    if missing_modules("pyarrow"):
        raise JetlinkError(f"{what} needs pyarrow, not installed here: "
                           f"{SPARK_EXTRA_INSTALL}{then}")


class LakeError(JetlinkError):
    """A Parquet dataset that cannot be read, written or imported as asked."""


class LakeLocationError(LakeError):
    """A dataset location no filesystem opens (a scheme pyarrow does not know): a usage
    error, exit status 2, as any malformed argument."""

    exit_code = 2


class LakeExistsError(LakeError):
    """The export's directory already holds files (``force`` replaces the dataset)."""


def dataset_path_problem(path: str) -> str | None:
    """Why ``path`` (what follows ``parquet:``) is no dataset path as given, one rule for the
    stream verbs and the Spark jobs: the prefix given twice (``parquet:parquet:/x`` would
    write ./parquet:/x, or name a filesystem "parquet"); None when it is one."""
    if path.startswith("parquet:"):
        return (f"the parquet: prefix is given twice: the dataset at "
                f"{path[len('parquet:'):] or 'PATH'} is {path}")
    return None


def row_stats_problem(directory: str, *, stream: bool = True) -> str | None:
    """What the Parquet statistics of a local dataset's data files (their footers only: no
    row is read) show that ``stream import`` would refuse: a sequence missing or outside 1
    to MAX_SEQ, a row without a time or one before the Unix epoch, a stream's row without a
    subject; None when
    they show none (or hold no statistics: the rows are then checked where they are
    written). A job that copies a dataset checks it so before it writes anything."""
    from .streams import MAX_SEQ

    for name, meta in _local_footers(directory):
        columns = {meta.schema.column(i).name: i for i in range(meta.num_columns)}
        for g in range(meta.num_row_groups):
            why = _group_problem(meta.row_group(g), columns, stream, MAX_SEQ)
            if why:
                return f"{name}: {why}"
    return None


def local_dataset_rows(directory: str) -> int:
    """The rows of a local dataset's data files, from their footers (no row read)."""
    return sum(meta.num_rows for _name, meta in _local_footers(directory))


def _local_footers(directory: str) -> Iterator[tuple[str, Any]]:
    """``(file name, pyarrow FileMetaData)`` of each Parquet data file of a local dataset
    directory, at any depth, in path order; names starting with ``_`` or ``.`` skipped, as
    Spark's and pyarrow's readers skip them (a file that is no Parquet too: the job's own
    read says so)."""
    import os

    import pyarrow.parquet as pq

    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
        for name in sorted(files):
            if name.startswith(("_", ".")):
                continue
            try:
                yield name, pq.ParquetFile(os.path.join(root, name)).metadata
            except (OSError, ValueError):
                continue


def _seq_rule(max_seq: int) -> str:
    """The rule of a row's sequence, as a refusal says it (import's and a job's alike)."""
    return f"not a stream sequence (1 to {max_seq})"


def _no_time() -> str:
    """The refusal of a row without a time (import's and a job's check alike)."""
    return ("a row without a time (column ts null: the time stored, nanoseconds since the "
            "Unix epoch; every message has one)")


def _before_epoch(ts: int) -> str:
    """The refusal of a row's negative time (import's and a job's check alike)."""
    return (f"time {ts} is before the Unix epoch (column ts: the time stored, nanoseconds "
            "since 1970-01-01T00:00:00Z, never negative)")


def _group_problem(group: Any, columns: dict[str, int], stream: bool, max_seq: int
                   ) -> str | None:
    """:func:`row_stats_problem` of one row group, from its column statistics."""
    def stats(col: str) -> Any:
        at = columns.get(col)
        return group.column(at).statistics if at is not None else None

    seq, ts, subject = stats("seq"), stats("ts"), stats("subject")
    if seq is not None and seq.null_count:
        return f"a row without a sequence (column seq null): {_seq_rule(max_seq)}"
    if seq is not None and seq.has_min_max and isinstance(seq.min, int) and \
            isinstance(seq.max, int) and (seq.min < 1 or seq.max > max_seq):
        return f"message {seq.min if seq.min < 1 else seq.max}: {_seq_rule(max_seq)}"
    if ts is not None and ts.null_count:
        return _no_time()
    if ts is not None and ts.has_min_max and isinstance(ts.min, int) and ts.min < 0:
        return _before_epoch(ts.min)
    if stream and subject is not None and subject.null_count:
        return "a row without a subject (column subject null)"
    return None


def local_path(path: str) -> str | None:
    """The absolute local path of a dataset location (a path, or a ``file:`` URI), None for
    another filesystem's URI."""
    import os
    from urllib.parse import unquote, urlparse

    if not path:
        raise LakeError("empty dataset path")
    if path.startswith("file:"):
        url = urlparse(path)
        if url.netloc not in ("", "localhost"):
            raise LakeError(f"{path}: a file:// URI names a local path (file:///dir/...)")
        path = unquote(url.path)
    elif "://" in path:
        return None
    return os.path.abspath(os.path.expanduser(path))


def lake_filesystem(path: str):
    """``(pyarrow FileSystem, path inside it)`` for a local path, a ``file://`` URI or another
    URI pyarrow.fs understands."""
    from pyarrow import fs as pafs

    local = local_path(path)
    if local is None:
        try:
            return pafs.FileSystem.from_uri(_bounded_retries(path))
        except (ValueError, NotImplementedError) as exc:  # ArrowInvalid / ArrowNotImplemented
            raise LakeLocationError(f"{path}: unsupported dataset location: "
                                    f"{_first_line(exc)}") from None
        except OSError as exc:  # a filesystem pyarrow knows that does not answer or load
            raise LakeError(f"{path}: cannot open the dataset location: "
                            f"{_first_line(exc)}{_fs_hint(exc)}") from None
    return pafs.LocalFileSystem(), local


#: the longest a Google Cloud Storage request is retried (pyarrow's default is 15 minutes:
#: a location without credentials or network would hang the command that long, silently);
#: a ``retry_limit_seconds`` of the URI's own is kept
GCS_RETRY_LIMIT_S = 30


def _bounded_retries(uri: str) -> str:
    """``uri`` with ``retry_limit_seconds`` = :data:`GCS_RETRY_LIMIT_S` for a ``gs://`` /
    ``gcs://`` location that does not give one (others unchanged)."""
    scheme = uri.partition("://")[0].lower()
    if scheme not in ("gs", "gcs") or "retry_limit_seconds=" in uri.partition("?")[2]:
        return uri
    return f"{uri}{'&' if '?' in uri else '?'}retry_limit_seconds={GCS_RETRY_LIMIT_S}"


def _first_line(exc: BaseException) -> str:
    """An exception's text as one line: its first (pyarrow's HDFS error lists every place
    it looked for the JVM, one line each), a Google Cloud status without its
    ``error_info={...}`` (the same message again, as metadata)."""
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if text.startswith("google::cloud::Status(") and " error_info={" in text:
        text = text.removeprefix("google::cloud::Status(").partition(" error_info={")[0]
    return text


def _fs_hint(exc: BaseException) -> str:
    """What to set when pyarrow's HDFS filesystem could not load the JVM or libhdfs."""
    text = str(exc)
    if "libjvm" in text or "libhdfs" in text:
        return (" (pyarrow's HDFS filesystem loads the JVM and libhdfs: set JAVA_HOME, "
                "HADOOP_HOME and CLASSPATH, or ARROW_LIBHDFS_DIR)")
    return ""


def _join(base: str, name: str) -> str:
    return base.rstrip("/") + "/" + name


def _meta_location(path: str):
    fs, base = lake_filesystem(path)
    return fs, _join(base, META_FILE)


def read_meta(path: str) -> dict[str, Any] | None:
    """The ``_jetlink.json`` document of the dataset directory ``path`` (None without one)."""
    from pyarrow import fs as pafs

    fs, where = _meta_location(path)
    if fs.get_file_info(where).type != pafs.FileType.File:
        return None
    try:
        with fs.open_input_stream(where) as f:
            data = f.read()
    except OSError as exc:
        raise LakeError(f"{where}: not a readable {META_FILE}: {exc}") from None
    return parse_meta(data, where)


def parse_meta(data: bytes, where: str) -> dict[str, Any]:
    """A ``_jetlink.json`` document from its bytes (LakeError naming ``where`` if it is not
    one); every reader, pyarrow's or Hadoop's, goes through here."""
    import json

    try:
        doc = json.loads(data.decode("utf-8"))
    except ValueError as exc:
        raise LakeError(f"{where}: not a readable {META_FILE}: {exc}") from None
    if not isinstance(doc, dict):
        raise LakeError(f"{where}: not a {META_FILE} document (expected a JSON object)")
    problem = _meta_problem(doc)
    if problem is not None:
        raise LakeError(f"{where}: not a {META_FILE} document: {problem}")
    return doc


_META_TYPES = (("kind", str, "a string"), ("name", str, "a string"),
               ("identity", str, "a string"), ("config", dict, "a JSON object"),
               ("state", dict, "a JSON object"))
_META_COUNTS = ("messages", "bytes", "first_seq", "last_seq")


def _meta_problem(doc: dict[str, Any]) -> str | None:
    """What makes ``doc`` no ``_jetlink.json`` its readers can use: a field of another
    type, a count in ``state`` that is no whole number of 0 or more (None: none)."""
    from .errors import clip

    for key, kind, word in _META_TYPES:
        if key in doc and not isinstance(doc[key], kind):
            return f'"{key}" is {clip(repr(doc[key]))}, not {word}'
    if doc.get("kind", "stream") == "stream" and "name" not in doc:
        return 'no "name" (the stream the dataset holds)'
    state = doc.get("state") or {}
    for key in _META_COUNTS:
        v = state.get(key)
        if key in state and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            return f'"state.{key}" is {clip(repr(v))}, not a whole number of 0 or more'
    return None


def meta_bytes(doc: dict[str, Any]) -> bytes:
    """How a ``_jetlink.json`` document is written (every writer)."""
    import json

    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_meta(path: str, doc: dict[str, Any]) -> None:
    """Write ``doc`` as the ``_jetlink.json`` of the dataset directory ``path``, atomically
    (a process killed while writing leaves the old file or none, never a torn one)."""
    fs, base = lake_filesystem(path)
    _write_json_atomically(fs, base, META_FILE, doc)


def stream_meta(js, name: str) -> dict[str, Any]:
    """The ``_jetlink.json`` document of stream ``name`` of the engine ``js`` (a JetStream):
    its config as the API gives it, creation time and identity, and state."""
    return _meta_of(js, js.stream_info(name))


def _meta_of(js, info) -> dict[str, Any]:
    from .replication import identity

    doc = info.to_json()
    st = info.state
    return {
        "kind": "stream",
        "name": info.config.name,
        "cluster": js.cluster.name,
        "config": doc["config"],
        "created": doc["created"],
        "created_ns": info.created_ns,
        "identity": identity(info.created_ns),
        "state": {"messages": st.messages, "bytes": st.bytes, "first_seq": st.first_seq,
                  "last_seq": st.last_seq},
    }


# -- writing rows into a stream ---------------------------------------------------------------
def _check_stream_rows(batch, where: str) -> None:
    """Refuse rows of a topic (partition != 0, a key, no subject): a stream has none."""
    import pyarrow.compute as pc

    names = batch.schema.names
    if "subject" not in names:
        raise LakeError(f"{where}: no subject column: not rows of the lake schema")
    bad = None
    if "partition" in names and batch.num_rows:
        part = batch.column("partition")
        nz = pc.sum(pc.cast(pc.not_equal(part, 0), "int64")).as_py() or 0
        if nz:
            bad = "partition != 0"
    if bad is None and "key" in names and batch.column("key").null_count != batch.num_rows:
        bad = "a key"
    if bad is None and batch.column("subject").null_count:
        bad = "no subject"
    if bad is not None:
        raise LakeError(f"{where}: rows of a topic ({bad}): only stream messages (partition "
                        "0, no key, a subject) go into a stream")


def _as_batches(batches: Iterable[Any]) -> Iterator[Any]:
    import pyarrow as pa

    for b in batches:
        if isinstance(b, pa.Table):
            yield from b.to_batches()
        else:
            yield b


def _rows(batches: Iterable[Any]) -> Iterator[tuple]:
    """``(seq, subject, ts, headers, data)`` per row; columns converted once per batch."""
    for batch in _as_batches(batches):
        if not batch.num_rows:
            continue
        _check_stream_rows(batch, "rows")
        cols = []
        for col in ("seq", "subject", "ts", "headers", "data"):
            try:
                cols.append(batch.column(col).to_pylist())
            except KeyError:
                raise LakeError(f"rows without a {col} column: not the lake schema") from None
        yield from zip(*cols, strict=True)


def write_stream_rows(js, stream: str, batches: Iterable[Any], *,
                      txn_rows: int = 100_000,
                      on_txn: Callable[[Any, Any, int], None] | None = None,
                      on_rows: Callable[[int], None] | None = None,
                      as_published: bool = False) -> dict[str, Any]:
    """Append rows of the lake schema (pyarrow RecordBatches or Tables, in sequence order) to
    the existing stream ``stream``, each at its own sequence and time, as the replication
    pump stores a mirrored message (the sequences in between read as deleted).

    One ``js.write()`` transaction per ``txn_rows`` rows; ``on_txn(txn, stream_def,
    last_seq)`` runs at the end of each, before it commits (with the last sequence it
    wrote); ``on_rows(n)`` after it commits, with the ``n`` rows it stored (a progress
    bar). A row at or below the stream's last sequence, a row the stream refuses (an
    ApiError: sealed, too big, a limit with discard new...) or takes as a duplicate raises a
    LakeError and that transaction rolls back (the ones before it stay committed).
    ``as_published`` (an import): each row is also checked as a publish to the stream is,
    its subject one of the stream's subjects (a stream that is neither a mirror nor sourcing,
    has them and transforms none)
    and its headers a NATS header block (``NATS/1.0``); a job seeding a mirror or a
    sourcing stream writes what the pump would, which no subject of its own limits.
    Returns ``{"rows", "first_seq", "last_seq", "transactions"}`` (0s when no rows)."""
    from .streams import MAX_SEQ

    if txn_rows < 1:
        raise ValueError("txn_rows must be at least 1")
    rows = _rows(batches)
    row = next(rows, None)
    total = txns = first = last = 0
    sid = None
    subjects_ok: set[str] = set()
    while row is not None:
        with js.write() as txn:
            d = _rows_target(txn, stream, sid)
            sid = d.id
            st = txn.stream(d)
            saved = txn.now
            lean = st.sourced_fast  # the pump's batch path, same results as append
            # (a stream with sources stores their messages on subjects not its own; one
            # with a subject transform stores the transformed subjects)
            own = _own_subjects(d.cfg) if as_published else None
            items: list[tuple] = []
            at: list[tuple[int, int]] = []
            top = st.last_seq
            n = 0
            try:
                while row is not None and n < txn_rows:
                    seq, subject, ts, hdr, data = row
                    if seq is None or seq < 1 or seq > MAX_SEQ:
                        raise LakeError(f"message {seq}: {_seq_rule(MAX_SEQ)}")
                    if seq <= top:
                        raise LakeError(_seq_order_problem(seq, top, last, stream))
                    if subject not in subjects_ok:
                        why = _subject_problem(seq, subject, stream, own, d.cfg.subjects)
                        if why:
                            raise LakeError(why)
                        subjects_ok.add(subject)
                    if as_published and hdr is not None:
                        bad_line = _header_block_problem(hdr)
                        if bad_line is not None:
                            raise LakeError(f"message {seq}: headers {bad_line!r} are not a "
                                            "NATS header block (column headers: NATS/1.0 and "
                                            "one header per line)")
                    if as_published and ts is not None and ts < 0:
                        raise LakeError(f"message {seq}: {_before_epoch(ts)}")
                    if data is None:
                        data = b""
                    if ts is None:
                        ts = saved
                    if lean and (hdr is None or not any(k in hdr for k in _LEAN_UNSAFE)):
                        items.append((subject, hdr, data))
                        at.append((seq, ts))
                    else:
                        if items:
                            _store_row_run(st, stream, items, at)
                        st.keep_duplicates = as_published  # (an import: every row stored)
                        try:
                            _store_row_alone(txn, st, stream, (seq, subject, ts, hdr, data),
                                             saved)
                        finally:
                            st.keep_duplicates = False
                    top = last = seq
                    if not first:
                        first = seq
                    n += 1
                    row = next(rows, None)
                if items:
                    _store_row_run(st, stream, items, at)
            finally:
                txn.now = saved
            st.flush()
            if on_txn is not None:
                on_txn(txn, d, last)
        total += n
        txns += 1
        if on_rows is not None:
            on_rows(n)
    return {"rows": total, "first_seq": first, "last_seq": last, "transactions": txns}


def _own_subjects(cfg: Any) -> Any:
    """The subjects a publish to the stream of ``cfg`` may have (a SubjectFilter), None when
    its rows' subjects are not its own: a mirror, a stream with sources (their messages keep
    theirs), one with a subject transform (it stores the transformed ones), or none."""
    from .subjects import SubjectFilter

    return (SubjectFilter(cfg.subjects) if cfg.subjects and cfg.mirror is None
            and not cfg.sources and not cfg.subject_transform else None)


def _subject_problem(seq: int, subject: Any, stream: str, own: Any,
                     subjects: Sequence[str]) -> str | None:
    """The refusal of an imported row's subject (one rule for the pass that checks every
    row before anything is written and for the write itself), None when it is fine."""
    from .subjects import is_valid_publish_subject

    if not isinstance(subject, str) or not is_valid_publish_subject(subject):
        return f"message {seq}: invalid subject {subject!r} (column subject)"
    if own is not None and not own.matches(subject):
        return (f"message {seq}: subject {subject!r} is not one of stream {stream}'s "
                f"subjects ({', '.join(subjects)}), as a publish there would be refused")
    return None


def _refuse_rows_first(fragments, schema, cfg: Any, stream: str) -> None:
    """What the write would refuse part-way, over the whole dataset before anything is
    stored (an existing stream refused half-written keeps what came before the row): a
    row without a time, a subject that is no publish subject or not one of the stream's
    (:func:`_subject_problem`). Reads the seq, subject and ts columns only."""
    import pyarrow.compute as pc

    own = _own_subjects(cfg)
    ok: set[str] = set()
    for where, batch in _fragment_batches(fragments, schema, ["seq", "subject", "ts"]):
        if not batch.num_rows:
            continue
        seqs = batch.column(0)
        ts = batch.column(2)
        if ts.null_count:
            at = pc.index(ts.is_null(), True).as_py()
            raise LakeError(f"{where}: message {seqs[at].as_py()}: {_no_time()}")
        col = batch.column(1)
        for subject in pc.unique(col).to_pylist():
            if subject in ok:
                continue
            at = (pc.index(col.is_null(), True) if subject is None
                  else pc.index(col, subject)).as_py()
            why = _subject_problem(seqs[at].as_py(), subject, stream, own, cfg.subjects)
            if why:
                raise LakeError(f"{where}: {why}")
            ok.add(subject)


def _seq_order_problem(seq: int, top: int, last: int, stream: str) -> str:
    """The refusal of a row at or below ``top`` (the stream's last sequence): given twice
    or out of order among the rows written (``last``: the previous row's sequence, 0 when
    none was), else before what the stream held already."""
    if last and seq == last:
        return f"message {seq}: {_twice(seq)}"
    if last and seq < last:
        return f"message {seq}: comes after message {last} (rows in sequence order)"
    return (f"message {seq}: stream {stream} is already at sequence {top} (rows must come "
            "after it, in order)")


def _header_block_problem(hdr: bytes) -> bytes | None:
    """The part of a row's header block that makes it no NATS header block of a stored
    message (the rule of the ``headers`` column, COLUMNS: the line ``NATS/1.0``, without a
    status, then one ``Name: value`` header per line): the offending line (its first 40
    bytes), None when there is none."""
    lines = bytes(hdr).split(b"\r\n")
    if lines[0] != b"NATS/1.0":
        return lines[0][:40]
    for line in lines[1:]:
        if line and b":" not in line:
            return line[:40]
    return None


def _rows_target(txn, stream: str, sid: int | None):
    """The stream rows are written to, in this transaction: the same one as before
    (``sid``: its id, None at the first)."""
    from .errors import nats_error

    d = txn.catalog.by_name.get(stream)
    if d is None:
        raise nats_error("StreamNotFound")
    if sid is not None and d.id != sid:
        raise LakeError(f"stream {stream} was deleted and created again while "
                        "rows were written to it")
    return d


def _store_row_run(st, stream: str, items: list[tuple], at: list[tuple[int, int]]) -> None:
    """Store the lean rows gathered (``items``: subject, headers, data; ``at``: sequence,
    time) at once, as the pump's batch path does; then empty both lists."""
    done, err = st.append_sourced(items, at)
    if err is not None:
        raise LakeError(f"message {at[done][0]} on {items[done][0]} "
                        f"refused by stream {stream}: {err.description} "
                        f"({err.err_code})") from err
    items.clear()
    at.clear()


def _store_row_alone(txn, st, stream: str, row: tuple, saved: int) -> None:
    """Store one row ``(seq, subject, ts, headers, data)`` through the publish path (a
    header it acts on), at its sequence and time; ``saved``: the transaction's own time."""
    from .errors import ApiError

    seq, subject, ts, hdr, data = row
    st.skip_to(seq - 1)
    txn.now = ts
    r = st.append(subject, hdr, data, sourced=True)
    txn.now = saved
    if isinstance(r, ApiError):
        raise LakeError(f"message {seq} on {subject} refused by stream "
                        f"{stream}: {r.description} ({r.err_code})") from r
    if r.duplicate:
        raise LakeError(f"message {seq} on {subject}: stream {stream} took "
                        f"it as a duplicate of message {r.seq} "
                        "(Nats-Msg-Id)")


# -- export -----------------------------------------------------------------------------------
_OWN_FILES = ("_SUCCESS", META_FILE, META_FILE + ".tmp", "_jetlink_progress.json",
              "_jetlink_progress.json.tmp")


def _replaceable(name: str) -> bool:
    """A file of a dataset (ours or Spark's) that a forced export may delete."""
    return (name in _OWN_FILES or name.endswith((".parquet", ".parquet.crc"))
            or (name.startswith(".") and name.endswith(".crc")))  # _tmp-part-*.parquet too


def _prepare_dir(fs, base: str, where: str, force: bool, *,
                 keep_old: bool = False) -> list[str]:
    """Make ``base`` a directory an export writes into: created when missing; a non-empty
    one refused (LakeExistsError) unless ``force`` and it holds nothing but a dataset, whose
    files are then deleted, or with ``keep_old`` returned (the caller deletes them once the
    new dataset is complete: :func:`_swap_in`); files no complete dataset holds (part files
    written aside, a progress record, a metadata file written aside) are deleted at once."""
    from pyarrow import fs as pafs

    info = fs.get_file_info(base)
    if info.type == pafs.FileType.NotFound:
        fs.create_dir(base, recursive=True)
        return []
    if info.type != pafs.FileType.Directory:
        raise LakeError(f"{where} exists and is not a directory")
    entries = fs.get_file_info(pafs.FileSelector(base))
    if not entries:
        return []
    # what no replace would remove is said first: no question is asked about it
    others = sorted(e.base_name for e in entries
                    if e.type != pafs.FileType.File or not _replaceable(e.base_name))
    if others:
        shown = ", ".join(others[:5]) + (", ..." if len(others) > 5 else "")
        raise LakeError(f"{where} holds more than a Parquet dataset ({shown}): not replacing "
                        "it; choose another directory or empty it yourself")
    if not force:
        if all(e.type == pafs.FileType.File and _replaceable(e.base_name) for e in entries) \
                and META_FILE not in {e.base_name for e in entries}:
            raise LakeExistsError(f"{where} holds Parquet files without {META_FILE} (an "
                                  "export that was interrupted, or a dataset jetlink did not "
                                  "write): refusing to overwrite it (-f/--force replaces "
                                  "them)")
        raise LakeExistsError(f"{where} is not empty ({len(entries)} entries): refusing to "
                              "overwrite it")
    old = []
    for e in entries:
        n = e.base_name
        if (not keep_old or n.startswith((TMP_PREFIX, NEW_PREFIX)) or n.endswith(".tmp")
                or n == PROGRESS_FILE):
            fs.delete_file(e.path)
        else:
            old.append(e.path)
    return old


def _swap_in(fs, base: str, old: list[str], written: list[str]) -> None:
    """Replace the dataset files ``old`` (paths) by the complete part files ``written``
    (names, written aside under TMP_PREFIX): its ``_jetlink.json`` first (from there on an
    import refuses the directory as an interrupted export while part files are still aside,
    :func:`_refuse_interrupted_export`), then its other files, then the new parts under
    their names; the caller writes the new ``_jetlink.json`` last."""
    for where in sorted(old, key=lambda w: w.rsplit("/", 1)[-1] != META_FILE):
        fs.delete_file(where)
    for fname in written:
        fs.move(_join(base, TMP_PREFIX + fname), _join(base, fname))


def _is_embedded(js) -> bool:
    from .jetstream import JetStream

    return isinstance(js, JetStream)


def export_stream(js, name: str, path: str, *, batch_rows: int = 65_536,
                  row_group_rows: int = 131_072, file_rows: int | None = None,
                  force: bool = False,
                  on_resume: Callable[[dict[str, Any]], None] | None = None,
                  on_file: Callable[[dict[str, Any]], None] | None = None,
                  on_rows: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Write stream ``name`` of ``js`` (any JetStreamAPI) as a Parquet dataset in the
    directory ``path``: the embedded engine's store is read in one snapshot
    (:func:`_export_embedded`); any other implementation, a live server's, over the
    interface, resumably (:func:`export_stream_api`: ``on_resume`` / ``on_file`` are its).
    ``on_rows(n)``: after each batch of ``n`` messages read (a progress bar)."""
    try:
        if _is_embedded(js):
            return _export_embedded(js, name, path, batch_rows=batch_rows,
                                    row_group_rows=row_group_rows,
                                    file_rows=file_rows or 1_048_576, force=force,
                                    on_rows=on_rows)
        return export_stream_api(js, name, path, batch_rows=batch_rows,
                                 row_group_rows=row_group_rows,
                                 file_rows=file_rows or API_FILE_ROWS, force=force,
                                 on_resume=on_resume, on_file=on_file, on_rows=on_rows)
    except OSError as exc:  # pyarrow's filesystem errors: a path that cannot be written
        raise _os_error(exc, path, "cannot write") from None


def _os_error(exc: OSError, path: str, what: str) -> LakeError:
    """An OSError of the filesystem under ``path`` as one line, ``WHAT PATH: REASON`` as the
    CLI words the operating system's refusals (pyarrow's texts carry "[Errno N]" and a
    "Detail:" of their own, left out)."""
    import re

    text = re.sub(r"^\[Errno \d+\] ", "", _first_line(exc) if str(exc) else
                  exc.strerror or type(exc).__name__)
    text = re.sub(r"\. Detail: \[errno \d+\] ", ": ", text)
    return LakeError(f"{what} {path}: {text}")


def _export_embedded(js, name: str, path: str, *, batch_rows: int = 65_536,
                     row_group_rows: int = 131_072, file_rows: int = 1_048_576,
                     force: bool = False,
                     on_rows: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Write stream ``name`` as a Parquet dataset in the directory ``path``: ``part-NNNNN.parquet``
    files of the lake schema (at most ``file_rows`` rows each, row groups of
    ``row_group_rows``; one empty file for a stream without messages), then ``_jetlink.json``.
    One consistent cut: the messages up to the last sequence of the stream when it starts.
    A non-empty directory is refused unless ``force`` (which replaces a dataset there, never
    other files: the old dataset stays whole until the new part files are all complete,
    written aside under TMP_PREFIX, then :func:`_swap_in`). Interrupted (KeyboardInterrupt),
    it raises :class:`LakeInterrupted` saying what it left. Returns ``{"stream", "path",
    "messages", "bytes_written", "first_seq", "last_seq", "files"}`` (``bytes_written``: the
    data files' size)."""
    if min(batch_rows, row_group_rows, file_rows) < 1:
        raise ValueError("batch_rows, row_group_rows and file_rows must be at least 1")
    info = js.stream_info(name)
    with js.read() as (_conn, catalog):
        d = catalog.by_name.get(name)
        if d is None or d.created_ns != info.created_ns:
            raise LakeError(f"stream {name} was deleted while it was exported")
        sid = d.id
    meta = _meta_of(js, info)
    fs, base = lake_filesystem(path)
    old = _prepare_dir(fs, base, path, force, keep_old=True)
    try:
        return _write_embedded(js, name, path, fs, base, sid, info, meta, old,
                               batch_rows=batch_rows, row_group_rows=row_group_rows,
                               file_rows=file_rows, on_rows=on_rows)
    except KeyboardInterrupt as exc:
        raise LakeInterrupted(_export_left(fs, base, name, path, bool(old))) from exc


class LakeInterrupted(KeyboardInterrupt):
    """An export or an embedded import interrupted (Ctrl-C): ``left`` says what it left (in
    the dataset's directory, in the stream) and the way on (the CLI prints it, exit status
    130 as any interrupted command)."""

    def __init__(self, left: str) -> None:
        super().__init__(left)
        self.left = left


def _export_left(fs, base: str, name: str, path: str, replacing: bool) -> str:
    """What an interrupted embedded export left in ``base``: the dataset it replaces whole
    (new part files aside, which readers skip), or an incomplete one."""
    from pyarrow import fs as pafs

    try:
        names = {e.base_name for e in fs.get_file_info(pafs.FileSelector(base))}
    except OSError:  # pragma: no cover - the interruption is what matters
        names = set()
    again = f"run the export again with -f (jetlink stream export {name} parquet:{path} -f)"
    if META_FILE in names:
        return (f"the export of stream {name} to {path} stopped before its new files were "
                f"complete: the dataset already there is whole and unchanged (the new files "
                f"written so far are left beside it as {TMP_PREFIX}part-*.parquet, which "
                f"readers skip); {again} to replace it")
    what = "the dataset it was replacing is gone and the new one " if replacing else ""
    return (f"the export of stream {name} to {path} stopped before it was complete: "
            f"{what or 'the dataset '}is incomplete (no {META_FILE}; stream import refuses "
            f"it); {again}")


def _write_embedded(js, name: str, path: str, fs, base: str, sid: int, info, meta,
                    old: list[str], *, batch_rows: int, row_group_rows: int,
                    file_rows: int, on_rows: Callable[[int], None] | None) -> dict[str, Any]:
    """The writing of :func:`_export_embedded`: the part files, then (``old``: the files of
    the dataset it replaces) the swap, then ``_jetlink.json``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = arrow_schema()
    files: list[str] = []
    written = messages = first = last = 0
    writer: Any = None  # a pq.ParquetWriter while a part file is open
    in_file = 0
    pending: list[Any] = []
    pending_rows = 0

    def open_next():
        # written as _tmp-part-NNNNN.parquet and renamed once complete: a run killed inside
        # leaves no torn file under a name readers take (they skip "_" names). A part is
        # renamed once the next one exists aside (or at the end): until the dataset is
        # complete, the directory always holds a part aside, which an import refuses
        # (_refuse_interrupted_export). One replacing a dataset keeps them all aside until
        # all are complete (_swap_in).
        fname = PART_FORMAT.format(len(files))
        files.append(fname)
        opened = pq.ParquetWriter(_join(base, TMP_PREFIX + fname), schema, filesystem=fs,
                                  write_page_checksum=True)
        if len(files) > 1 and not old:
            fs.move(_join(base, TMP_PREFIX + files[-2]), _join(base, files[-2]))
        return opened

    def close_part() -> None:
        writer.close()

    def flush_group() -> None:
        nonlocal pending, pending_rows
        if pending:
            writer.write_table(pa.Table.from_batches(pending, schema),
                               row_group_size=row_group_rows)
            pending, pending_rows = [], 0

    try:
        for batch in iter_stream_batches(str(js.cluster.path), name, 0, info.state.last_seq,
                                         batch_rows=batch_rows, sid=sid):
            if not first:
                first = batch.column("seq")[0].as_py()
            last = batch.column("seq")[-1].as_py()
            messages += batch.num_rows
            if on_rows is not None:
                on_rows(batch.num_rows)
            while batch.num_rows:
                if writer is None:
                    writer, in_file = open_next(), 0
                take = min(batch.num_rows, file_rows - in_file,
                           row_group_rows - pending_rows)
                pending.append(batch.slice(0, take))
                pending_rows += take
                in_file += take
                batch = batch.slice(take)
                if pending_rows >= row_group_rows:
                    flush_group()
                if in_file >= file_rows:
                    flush_group()
                    close_part()
                    writer = None
        if writer is None and not files:  # no messages: one empty file keeps the schema
            writer = open_next()
        if writer is not None:
            flush_group()
            close_part()
            writer = None
    finally:
        if writer is not None:
            writer.close()
    if old:
        _swap_in(fs, base, old, files)
    elif files:
        fs.move(_join(base, TMP_PREFIX + files[-1]), _join(base, files[-1]))
    for fname in files:
        written += fs.get_file_info(_join(base, fname)).size or 0
    write_meta(path, meta)
    return {"stream": name, "path": path, "messages": messages, "bytes_written": written,
            "first_seq": first, "last_seq": last, "files": files}


# -- import -----------------------------------------------------------------------------------
def _dataset(path: str):
    """``(fragments in path order, dataset schema)`` of the Parquet files at ``path`` (a
    directory, searched recursively, hive partitions read as columns; or one file). Every
    file's columns of the lake schema are checked against it (:func:`_column_problem`: one
    LakeError naming the file, the column and both types, before a row is read); the
    files' page checksums are verified as they are read (files written without them read
    as before)."""
    import pyarrow as pa
    import pyarrow.dataset as ds
    from pyarrow import fs as pafs

    fs, base = lake_filesystem(path)
    kind = fs.get_file_info(base).type
    if kind == pafs.FileType.NotFound:
        raise LakeError(f"{path}: no such file or directory")
    checked = ds.ParquetFileFormat(default_fragment_scan_options=ds.ParquetFragmentScanOptions(
        page_checksum_verification=True))
    try:
        dataset = ds.dataset(base, filesystem=fs, format=checked,
                             partitioning="hive" if kind == pafs.FileType.Directory else None)
        fragments = sorted(dataset.get_fragments(), key=lambda f: f.path)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise LakeError(f"{path}: not a Parquet dataset: {exc}") from None
    if not fragments:
        raise LakeError(f"{path}: no Parquet files")
    missing = [n for n in NAMES if n not in dataset.schema.names]
    if missing:
        raise LakeError(f"{path}: not the lake message schema (no column "
                        f"{', '.join(missing)})")
    import pyarrow.types as pt

    for name in ("seq", "partition"):  # the columns read as numbers before any cast
        kind_ = dataset.schema.field(name).type
        if not pt.is_integer(kind_):
            want = _LAKE_TYPES[name]
            raise LakeError(f"{path}: column {name} is {kind_}, not an integer: not the lake "
                            f"message schema ({name} {want})")
    for frag in fragments:
        try:
            physical = frag.physical_schema
        except (OSError, ValueError) as exc:
            raise LakeError(f"{frag.path}: not a Parquet file: {_first_line(exc)}") from None
        for name in NAMES:
            if name in physical.names:
                problem = _column_problem(name, physical.field(name).type)
                if problem is not None:
                    raise LakeError(f"{frag.path}: {problem}")
    # a dictionary-encoded column is read as its values (the scanner decodes it)
    schema = pa.schema([f.with_type(f.type.value_type) if pt.is_dictionary(f.type) else f
                        for f in dataset.schema])
    return fragments, schema


_LAKE_TYPES = {n: t for n, t, _null in COLUMNS}


def _column_problem(name: str, kind: Any) -> str | None:
    """Why a column ``name`` of type ``kind`` (pyarrow) cannot be read as the lake schema's
    (COLUMNS): integer columns take integers (``ts`` a timestamp too), string columns
    strings, binary columns bytes or strings (dictionary-encoded or not, as Spark reads
    them); a column of nulls only goes anywhere. None: it can."""
    import pyarrow.types as pt

    want = _LAKE_TYPES[name]
    if pt.is_null(kind):
        return None
    if pt.is_dictionary(kind):  # (a dictionary-encoded column: its values are the rows')
        kind = kind.value_type
    strings = (pt.is_string(kind) or pt.is_large_string(kind)
               or getattr(pt, "is_string_view", lambda _k: False)(kind))
    if want in ("int32", "int64"):
        fits = pt.is_integer(kind) or (name == "ts" and pt.is_timestamp(kind))
        what = "an integer" + (" or a timestamp" if name == "ts" else "")
    elif want == "string":
        fits, what = strings, "a string"
    else:
        fits = (strings or pt.is_binary(kind) or pt.is_large_binary(kind)
                or pt.is_fixed_size_binary(kind)
                or getattr(pt, "is_binary_view", lambda _k: False)(kind))
        what = "binary or a string"
    if fits:
        return None
    return f"column {name} is {kind}, not {what}: not the lake message schema ({name} {want})"


def _fragment_batches(fragments, schema, columns=None):
    """``(file, batch)`` for the batches of the dataset's files, in order. A file pyarrow
    cannot read (a page whose checksum does not match, a file cut short) or convert to the
    dataset's schema is a LakeError naming it."""
    for frag in fragments:
        try:
            for batch in frag.to_batches(schema=schema, columns=columns):
                yield frag.path, batch
        except OSError as exc:
            text = _first_line(exc)
            hint = " (the file is damaged: export the stream again)" \
                if "checksum" in text.lower() else ""
            raise LakeError(f"{frag.path}: cannot read it: {text}{hint}") from None
        except (ValueError, TypeError, NotImplementedError) as exc:  # ArrowInvalid, ...
            raise LakeError(f"{frag.path}: not readable as the lake message schema: "
                            f"{_first_line(exc)}") from None


def _iter_dataset(fragments, schema, columns=None, *, conform: bool = False):
    """The batches of the dataset's files, in order; ``conform``: in the lake schema
    (:func:`_conform`)."""
    target = arrow_schema() if conform else None
    for where, batch in _fragment_batches(fragments, schema, columns):
        yield batch if target is None else _conform(batch, target, where)


def _conform(batch, target, where: str = "rows"):
    """``batch`` with the lake schema's columns, in its order and types (``where``: the file
    it was read from, named in the LakeError of a value that does not convert: an unsigned
    sequence beyond int64, a text that is no number...)."""
    import pyarrow as pa
    import pyarrow.types as pt

    arrays = []
    for field in target:
        col = batch.column(field.name)
        if col.type != field.type:
            try:
                if pt.is_timestamp(col.type):  # its unit's counts: nanoseconds first
                    col = col.cast(pa.timestamp("ns", col.type.tz))
                col = col.cast(field.type)
            except (ValueError, TypeError, NotImplementedError) as exc:  # ArrowInvalid, ...
                raise LakeError(f"{where}: column {field.name} is {batch.column(field.name).type}"
                                f", not {field.type}: {_first_line(exc)}") from None
        arrays.append(col)
    return pa.RecordBatch.from_arrays(arrays, schema=target)


def _scan_order(fragments, schema, path: str) -> tuple[int, bool]:
    """Check every row is a stream message and the sequences are distinct: ``(rows, sorted)``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rows, prev, ordered = 0, None, True
    for where, batch in _fragment_batches(fragments, schema,
                                          ["partition", "key", "subject", "seq"]):
        if not batch.num_rows:
            continue
        _check_stream_rows(batch, path)
        seq = batch.column("seq")
        if seq.type != pa.int64():  # (a uint64 beyond int64 is named with its file here)
            seq = _conform(pa.RecordBatch.from_arrays([seq], names=["seq"]),
                           pa.schema([pa.field("seq", pa.int64())]), where).column(0)
        if seq.null_count:
            raise LakeError(f"{path}: rows without a sequence")
        rows += batch.num_rows
        if not ordered:
            continue
        first = seq[0].as_py()
        if prev is not None and first <= prev:
            if first == prev:
                raise _duplicate(path, first)
            ordered = False
            continue
        if batch.num_rows > 1:
            step = pc.subtract(seq.slice(1), seq.slice(0, batch.num_rows - 1))
            if pc.min(step).as_py() <= 0:
                if pc.any(pc.equal(step, 0)).as_py():
                    at = pc.index(step, 0).as_py()
                    raise _duplicate(path, seq[at].as_py())
                ordered = False
                continue
        prev = seq[-1].as_py()
    return rows, ordered


def _duplicate(path: str, seq: int) -> LakeError:
    return LakeError(f"{path}: {_twice(seq)}")


def _twice(seq: int) -> str:
    """The refusal of a sequence two rows hold (an import's and a job's alike)."""
    return f"sequence {seq} appears more than once (a stream holds one message per sequence)"


SEQ_CHECK_MAX_ROWS = 32_000_000  # rows out of sequence order sorted in memory at most


def seq_twice_problem(path: str, *, max_rows: int = SEQ_CHECK_MAX_ROWS) -> str | None:
    """A sequence two rows of the stream dataset at ``path`` hold (what ``stream import``
    refuses: :func:`_scan_order`), from its ``seq`` column alone: in one pass when the rows
    come in sequence order, else sorted in memory when there are at most ``max_rows``
    (beyond, None: the rows are checked where they are stored). None when every sequence
    is held once, or a column no number (the job's reading says so)."""
    import numpy as np
    import pyarrow as pa

    fragments, schema = _dataset(path)
    prev: int | None = None
    ordered, kept, rows = True, [], 0
    for _where, batch in _fragment_batches(fragments, schema, ["seq"]):
        col = batch.column(0)
        if not batch.num_rows or col.null_count:
            continue  # (a null sequence: the statistics' refusal, row_stats_problem)
        try:
            seq = col.cast(pa.int64()).to_numpy()
        except (ValueError, TypeError, NotImplementedError):
            return None
        rows += len(seq)
        if ordered:
            step = np.diff(seq, prepend=seq[:1] - 1 if prev is None else np.int64(prev))
            if step.min() <= 0:
                same = np.nonzero(step == 0)[0]
                if len(same):
                    return _twice(int(seq[same[0]]))
                ordered = False
            prev = int(seq[-1])
        if rows <= max_rows:
            kept.append(seq)
        elif not ordered:
            return None
    if ordered or not kept:
        return None
    every = np.sort(np.concatenate(kept))
    same = np.nonzero(every[1:] == every[:-1])[0]
    return _twice(int(every[same[0]])) if len(same) else None


def _sorted_rows(fragments, schema, path: str):
    """The whole dataset in memory, sorted by sequence (datasets not written in order)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    target = arrow_schema()
    table = pa.Table.from_batches(list(_iter_dataset(fragments, schema, conform=True)),
                                  target)
    table = table.sort_by("seq")
    seq = table.column("seq").combine_chunks()
    if len(seq) > 1:
        same = pc.equal(seq.slice(1), seq.slice(0, len(seq) - 1))
        if pc.any(same).as_py():
            raise _duplicate(path, seq[pc.index(same, True).as_py()].as_py())
    return table.to_batches()




def _open_stream_dataset(path: str,
                         on_total: Callable[[int], None] | None = None):
    """(fragments, schema, in sequence order?, metadata or None) of a dataset an import
    reads; a dataset of a topic is refused. ``on_total(rows)``: the rows the dataset holds,
    once its check has counted them. A directory holding what an interrupted export leaves
    is refused (:func:`_refuse_interrupted_export`)."""
    _refuse_interrupted_export(path)
    fragments, schema = _dataset(path)
    count, ordered = _scan_order(fragments, schema, path)
    meta = read_meta(path)
    if meta is not None and meta.get("kind", "stream") != "stream":
        raise LakeError(f"{path}: the dataset holds a {meta.get('kind')}, not a stream")
    if on_total is not None:
        on_total(count)
    return fragments, schema, ordered, meta


def _refuse_interrupted_export(path: str) -> None:
    """Refuse a dataset directory that holds what an interrupted jetlink export leaves: part
    files written aside (TMP_PREFIX) or an export's progress record (PROGRESS_FILE), and no
    ``_jetlink.json`` (every export writes it last, once its part files are complete: beside
    it, such files are what a replacement cut short left next to the whole dataset). A
    dataset written by another tool has none of them, with or without ``_jetlink.json``."""
    from pyarrow import fs as pafs

    fs, base = lake_filesystem(path)
    if fs.get_file_info(base).type != pafs.FileType.Directory:
        return
    names = {e.base_name for e in fs.get_file_info(pafs.FileSelector(base))
             if e.type == pafs.FileType.File}
    if META_FILE in names:
        return
    left = sorted(n for n in names
                  if n == PROGRESS_FILE or (n.startswith(TMP_PREFIX) and n.endswith(".parquet")))
    if left:
        shown = ", ".join(left[:3]) + (", ..." if len(left) > 3 else "")
        raise LakeError(f"{path} holds an export that was interrupted ({shown}; no "
                        f"{META_FILE}): its messages are incomplete, nothing was imported; "
                        "export the stream again (jetlink stream export STREAM "
                        f"parquet:{path} -f) and import that")


def _create_from_meta(js, name: str, doc: dict[str, Any], path: str) -> bool:
    """Create stream ``name`` from a dataset's recorded config ``doc`` (the metadata the
    server manages left out); a refusal is a LakeError saying what to do. A sealed
    stream's config is created unsealed (a create can not be sealed, 10052): True then,
    for the import to seal it once its rows are in (:func:`_seal_imported`)."""
    from .config.codec import user_metadata
    from .config.stream import StreamConfig
    from .errors import ApiError

    sealed = bool(doc.pop("sealed", False))
    meta_keys = user_metadata(doc.get("metadata"))
    if meta_keys:
        doc["metadata"] = meta_keys
    else:
        doc.pop("metadata", None)
    cfg = StreamConfig.from_json(doc, strict=False)
    itself = _mirrors_itself(cfg, js)
    try:
        if itself:  # (through its own cluster's API too,
            # which the server's cycle check, skipping external origins, lets through)
            from .errors import nats_error

            cycle = nats_error("StreamInvalidConfig", err="detected cycle", field="mirror.name")
            cycle.detail = f'mirror.name = "{cfg.name}"'
            raise cycle
        js.add_stream(cfg)
    except ApiError as err:
        detail = f": {err.detail}" if err.detail else ""  # (what overlaps what, ...)
        if itself:
            # a mirror's dataset names its origin: imported under the origin's name it would
            # mirror itself (the server's cycle check)
            detail += (f" (the dataset is a mirror of {name}: import it under another name, "
                       "a mirror of it, or")
            raise LakeError(f"cannot create stream {name} from the config in {path}: "
                            f"{err.description} ({err.err_code}){detail} create stream {name} "
                            "yourself with its subjects (jetlink stream add) and import into "
                            "it)") from err
        raise LakeError(f"cannot create stream {name} from the config in {path}: "
                        f"{err.description} ({err.err_code}){detail}; create the stream "
                        "yourself (jetlink stream add) and import into it") from err
    return sealed


def _mirrors_itself(cfg: Any, js: Any) -> bool:
    """Whether ``cfg`` is a mirror of the stream of its own name in ``js`` (no external API,
    or one of the prefixes that name ``js`` itself)."""
    m = cfg.mirror
    return m is not None and m.name == cfg.name and (
        m.external is None or not m.external.api or m.external.api in js.own_api_prefixes)


def _seal_imported(js, name: str) -> None:
    """Seal stream ``name``, which an import created from a sealed stream's config, now
    that its rows are in (a sealed stream takes none)."""
    info = js.stream_info(name)
    if not info.config.sealed:
        cfg = info.config.copy()
        cfg.sealed = True
        js.update_stream(cfg)


def import_stream(js, name: str, path: str, *, txn_rows: int = 100_000,
                  on_total: Callable[[int], None] | None = None,
                  on_rows: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Import the Parquet dataset at ``path`` into stream ``name`` of ``js`` (any
    JetStreamAPI): into the embedded engine's store with the sequences and times kept
    (:func:`_import_embedded`); into any other implementation, a live server, as new
    publishes deduplicated by ``Nats-Msg-Id`` (:func:`import_stream_api`).
    ``on_total(rows)``: the rows of the dataset, once counted (before anything is written);
    ``on_rows(n)``: after each transaction or pipelined batch of ``n`` rows (a progress
    bar; the ``n`` add up to the rows of the dataset)."""
    try:
        if _is_embedded(js):
            return _import_embedded(js, name, path, txn_rows=txn_rows, on_total=on_total,
                                    on_rows=on_rows)
        return import_stream_api(js, name, path, on_total=on_total, on_rows=on_rows)
    except OSError as exc:  # pyarrow's filesystem errors: a path that cannot be read
        raise _os_error(exc, path, "cannot read") from None


# An embedded import in progress is marked in its cluster's meta table (key IMPORT_MARK +
# stream, value: what identifies the dataset, the stream's creation time, and the last
# sequence the import stored with that message's time: :func:`_progress_mark`); each
# transaction of rows updates the mark with its rows, and the import's last one replaces it
# with the mark of a finished import (:func:`_done`). A run that finds the stream holding
# messages and the mark of the same dataset continues after the sequence the mark records,
# but only when the stream still ends there with that message (:func:`_resume_after`):
# anything else stored in between would take a dataset row's sequence.
IMPORT_MARK = "lake.import."
# beside an import's mark while it runs: the creation time of the stream it created from a
# sealed stream's dataset (created unsealed, sealed once its rows are in: a resumed run
# seals it too)
SEAL_MARK = ".seal"


def _import_mark(path: str, fragments: Any, meta: dict[str, Any] | None) -> str:
    """What identifies the dataset an import reads: its place, its files (name, size,
    modification time) and its metadata document."""
    import hashlib
    import json
    import os

    h = hashlib.sha256()
    # the place as a local path when it is one (a path and its file:// URI are one dataset,
    # so a re-run spelled the other way still finds the import it continues)
    h.update((local_path(path) or path).encode())
    for frag in fragments:
        where = getattr(frag, "path", str(frag))
        try:
            st = os.stat(where)
            h.update(f"{where}:{st.st_size}:{st.st_mtime_ns}".encode())
        except OSError:
            h.update(str(where).encode())
    h.update(json.dumps(meta, sort_keys=True, default=str).encode())
    return h.hexdigest()


def _after(batches: Iterable[Any], after: int,
           on_rows: Callable[[int], None] | None, skipped: list[int]) -> Iterator[Any]:
    """The rows of ``batches`` after sequence ``after`` (those up to it were stored by the
    import that was cut short; ``on_rows`` counts them as done, ``skipped[0]`` adds them
    up: the duplicates a live server's import would report skipping)."""
    import pyarrow.compute as pc

    for batch in batches:
        keep = pc.greater(batch.column("seq"), after)
        kept = batch.filter(keep)
        if kept.num_rows < batch.num_rows:
            skipped[0] += batch.num_rows - kept.num_rows
            if on_rows is not None:
                on_rows(batch.num_rows - kept.num_rows)
        if kept.num_rows:
            yield kept


def _progress_mark(mark: str, created_ns: int, last_seq: int, ts: int | None) -> str:
    """The import mark of an import in progress: the dataset's ``mark``, the stream's
    creation time, the last sequence the import stored and that message's time (``-``:
    none stored, or the stream's limits removed it)."""
    return f"{mark} {created_ns} {last_seq} {'-' if ts is None else ts}"


def _resume_after(js, name: str, path: str, found: Any, mark: str, info: Any) -> int:
    """The sequence an import of this dataset cut short stored up to, to continue after it:
    ``found`` (the stream's import mark) must be this dataset's, and the stream must still
    end with the message that import stored last (the same stream, the same last sequence,
    the message there of the same time unless it is gone); a LakeError naming what was
    found otherwise (nothing is written)."""
    from .errors import ApiError

    parts = found.split(" ") if isinstance(found, str) else []
    if not parts or parts[0] != mark:
        raise LakeError(f"stream {name} has stored messages (last sequence "
                        f"{info.state.last_seq}): an import keeps the sequences, so "
                        "it goes into a new stream or one that never stored anything")
    again = (f"nothing was imported: delete the stream (jetlink stream rm {name} -f) and run "
             "the import again")
    if len(parts) != 4 or not all(p.isdigit() for p in parts[1:3]):
        raise LakeError(f"stream {name} holds part of an import of {path} that was "
                        "interrupted, without the record of where it stopped (an earlier "
                        f"jetlink's): it cannot be continued safely; {again}")
    created_ns, last = int(parts[1]), int(parts[2])
    ts = int(parts[3]) if parts[3].lstrip("-").isdigit() else None
    if created_ns != info.created_ns:
        raise LakeError(f"stream {name} was deleted and created again since an import of "
                        f"{path} into it was interrupted; {again}")
    now = info.state.last_seq
    if now == last and ts is not None:
        try:
            stored = js.get_msg(name, last).ts
        except ApiError:  # deleted since, or removed by a limit: the sequence still says
            stored = ts
        if stored != ts:
            raise LakeError(f"stream {name} changed since an import of {path} into it was "
                            f"interrupted: its message {last} is not the one the import "
                            f"stored there (time {stored}, not {ts}); {again}")
    if now != last:
        raise LakeError(f"stream {name} changed since an import of {path} into it was "
                        f"interrupted: the import had stored up to sequence {last}, the stream "
                        f"now ends at sequence {now} (something else stored messages there, "
                        f"which take the dataset's sequences); {again}")
    return last


def _record_progress(txn: Any, d: Any, key: str, mark: str, last_seq: int) -> None:
    """Update the import mark in the transaction that stored rows up to ``last_seq`` (with
    them: a run killed after it continues from its end, never from the mark of an earlier
    one)."""
    from .streams import load_msg

    if not last_seq:
        return
    stored = load_msg(txn.conn, d.id, last_seq)
    txn.conn.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE "
                     "SET value = excluded.value",
                     (key, _progress_mark(mark, d.created_ns, last_seq,
                                          None if stored is None else stored.ts)))


def _done(created_ns: int, mark: str) -> str:
    """The import mark of a dataset imported whole into the stream created at
    ``created_ns`` (a stream made again under the name is another one): its re-run stores
    nothing."""
    return f"done {created_ns} {mark}"


def _mark_done(txn: Any, name: str, key: str, mark: str) -> None:
    txn.conn.execute("DELETE FROM meta WHERE key = ?", (key + SEAL_MARK,))
    d = txn.catalog.by_name.get(name)
    if d is None:
        txn.conn.execute("DELETE FROM meta WHERE key = ?", (key,))
        return
    txn.conn.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE "
                     "SET value = excluded.value", (key, _done(d.created_ns, mark)))


def _meta_last_seq(meta: dict[str, Any] | None, path: str) -> int | None:
    """The last sequence the dataset's ``_jetlink.json`` records (``state.last_seq``: the
    stream an import makes ends there), None without one; a LakeError naming the file and
    the field when no stream of jetlink can end there (core/streams.py MAX_SEQ)."""
    from .streams import MAX_SEQ

    end = ((meta or {}).get("state") or {}).get("last_seq")
    if not isinstance(end, int):
        return None
    if end > MAX_SEQ:
        where = _meta_location(path)[1]
        raise LakeError(f"{where}: not a {META_FILE} document jetlink imports: "
                        f"\"state.last_seq\" is {end}, beyond jetlink's limit {MAX_SEQ} (the "
                        "last sequence of a stream); nothing was imported")
    return end


def _dataset_rows(fragments: list[Any]) -> int:
    """The rows of a dataset's files, from their footers."""
    return sum(f.metadata.num_rows for f in fragments)


def _imported_already(name: str, path: str, fragments: list[Any]) -> dict[str, Any]:
    """The summary of an import of a dataset imported whole before: nothing stored, every
    row a duplicate."""
    return {"stream": name, "path": path, "messages": 0, "first_seq": 0, "last_seq": 0,
            "created": False, "transactions": 0, "duplicates": _dataset_rows(fragments)}


def _created_for_import(js, name: str, meta: dict[str, Any] | None, path: str,
                        key: str) -> tuple[Any, bool]:
    """Stream ``name`` created from the dataset's recorded config: its StreamInfo, and
    whether it is to be sealed once its rows are in (a sealed stream's dataset: recorded
    beside the import's mark, SEAL_MARK, so that a run cut short and run again seals it
    too)."""
    seal = _create_from_meta(js, name, _meta_config(meta, name, path), path)
    info = js.stream_info(name)
    if seal:
        js.cluster.meta_set(key + SEAL_MARK, str(info.created_ns))
    return info, seal


def _import_embedded(js, name: str, path: str, *, txn_rows: int = 100_000,
                     on_total: Callable[[int], None] | None = None,
                     on_rows: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Store the Parquet dataset at ``path`` (lake schema) into stream ``name``, every message
    at its own sequence and time.

    The stream is created from the dataset's ``_jetlink.json`` config (under ``name``) when it
    does not exist, and then removed again if the import fails; an existing stream must never
    have stored anything (the import keeps the sequences). Rows are read in sequence order
    (sorted in memory when the files are not); duplicate sequences and topic records are
    refused before anything is written. The stream ends at the last sequence the metadata
    records (messages deleted at the end of the origin stay deleted). Returns ``{"stream",
    "path", "messages", "first_seq", "last_seq", "created", "transactions"}``.
    ``on_total`` / ``on_rows``: as :func:`import_stream`.
    """
    fragments, schema, ordered, meta = _open_stream_dataset(path, on_total)
    end = _meta_last_seq(meta, path)
    mark = _import_mark(path, fragments, meta)
    key = IMPORT_MARK + name

    created = seal = False
    after = 0  # rows at or below this sequence are stored already (a resumed import)
    if name in js.stream_names():
        from .streams import empty_last_seq

        info = js.stream_info(name)
        if info.state.last_seq != empty_last_seq(info.config):
            if js.cluster.meta_get(key) == _done(info.created_ns, mark):
                # this dataset was imported here whole: run again, nothing to store (as an
                # import over the interface skips every row as a duplicate)
                return _imported_already(name, path, fragments)
            # an import of this dataset cut short: continue where it stopped
            after = _resume_after(js, name, path, js.cluster.meta_get(key), mark, info)
        created_ns = info.created_ns
        seal = js.cluster.meta_get(key + SEAL_MARK) == str(created_ns)  # (SEAL_MARK)
    else:
        info, seal = _created_for_import(js, name, meta, path, key)
        created, created_ns = True, info.created_ns
    try:
        _refuse_rows_first(fragments, schema, info.config, name)
    except LakeError:
        if created:
            js.delete_stream(name)
        raise
    if not after:
        js.cluster.meta_set(key, _progress_mark(mark, created_ns, info.state.last_seq, None))

    batches = _iter_dataset(fragments, schema, conform=True) if ordered \
        else _sorted_rows(fragments, schema, path)
    skipped = [0]
    if after:
        batches = _after(batches, after, on_rows, skipped)
    try:
        try:
            res = write_stream_rows(
                js, name, batches, txn_rows=txn_rows, on_rows=on_rows, as_published=True,
                on_txn=lambda txn, d, last: _record_progress(txn, d, key, mark, last))
        except LakeError as err:  # a row's fault: named with the dataset it is in
            raise LakeError(err.description if err.description.startswith(
                tuple(f.path for f in fragments)) else f"{path}: {err}") from None
        if seal:  # (before the import is marked done: a re-run seals nothing twice)
            _seal_imported(js, name)
        if end is not None and end > res["last_seq"]:
            with js.write() as txn:  # the origin's trailing deleted messages
                d = txn.catalog.by_name.get(name)
                if d is not None:
                    st = txn.stream(d)
                    st.skip_to(end)
                    st.flush()
                _mark_done(txn, name, key, mark)
        else:
            with js.write() as txn:
                _mark_done(txn, name, key, mark)
    except KeyboardInterrupt:
        # what was committed stays: the same import run again continues after it
        try:
            last = js.stream_info(name).state.last_seq
        except JetlinkError:  # pragma: no cover - the interrupt is what matters
            last = None
        held = f" up to sequence {last:,}" if last else ""
        raise LakeInterrupted(f"stream {name} keeps the messages imported so far{held}; the "
                              "same import run again continues after them") from None
    except BaseException:
        if created:
            try:
                js.delete_stream(name)
                with js.write() as txn:
                    txn.conn.execute("DELETE FROM meta WHERE key = ?", (key,))
            except JetlinkError:  # pragma: no cover - the original error matters
                pass
        raise
    return {"stream": name, "path": path, "messages": res["rows"],
            "first_seq": res["first_seq"], "last_seq": res["last_seq"], "created": created,
            "transactions": res["transactions"], "duplicates": skipped[0]}


# --------------------------------------------------------------------------------------------
# Any JetStreamAPI (a live server): export over the interface, resumable; import as publishes
# --------------------------------------------------------------------------------------------
# An export in progress keeps PROGRESS_FILE beside its data: the cut (the stream's last
# sequence when the export started), the ``_jetlink.json`` document it will write, and the
# part files completed so far with the last sequence they hold. A part file is written as
# ``_tmp-part-NNNNN.parquet`` and renamed when complete, then the progress file is replaced
# (written aside, then moved over it). A run that finds the progress file of the same stream
# (same name and identity) continues after the last complete part file with the same cut;
# the dataset is finished when ``_jetlink.json`` is written and the progress file removed.
# Readers skip both (names starting with ``_``).
PROGRESS_FILE = "_jetlink_progress.json"
TMP_PREFIX = "_tmp-"
# a complete part file of an export that replaces a dataset (-f), kept aside until every one
# is written (readers skip names starting with "_"), then renamed over the old dataset
NEW_PREFIX = "_new-"
API_FILE_ROWS = 262_144  # rows per part file of an export over the interface
IMPORT_CHUNK = 10_000  # rows per pipelined publish_many of an import over the interface
# Headers of a publish the server acts on as preconditions of THAT publish: satisfied when
# the row was first stored, meaningless (or failing) when it is published again.
_PRECONDITIONS = ("Nats-Expected-Stream", "Nats-Expected-Last-Sequence",
                  "Nats-Expected-Last-Subject-Sequence",
                  "Nats-Expected-Last-Subject-Sequence-Subject", "Nats-Expected-Last-Msg-Id")


def message_columns(msgs: Iterable[Any], last_seq: int, batch: int = 65_536
                    ) -> Iterator[dict[str, Any]]:
    """Stored messages (``StoredMsg``-like: seq, subject, ts, hdr, data; in sequence order)
    up to ``last_seq`` as column batches: dicts of pyarrow arrays ``seq``, ``subject``,
    ``ts``, ``headers``, ``data`` (what ``LiveJetStream.stored_columns`` yields)."""
    import pyarrow as pa

    cols: tuple[list[Any], ...] = ([], [], [], [], [])

    def out() -> dict[str, Any]:
        seqs, subjects, tss, hdrs, datas = cols
        return {"seq": pa.array(seqs, pa.int64()), "subject": pa.array(subjects, pa.string()),
                "ts": pa.array(tss, pa.int64()), "headers": pa.array(hdrs, pa.binary()),
                "data": pa.array(datas, pa.binary())}

    for m in msgs:
        if m.seq > last_seq:
            break
        for col, v in zip(cols, (m.seq, m.subject, m.ts, m.hdr or None, bytes(m.data)),
                          strict=True):
            col.append(v)
        if len(cols[0]) >= batch:
            yield out()
            cols = ([], [], [], [], [])
    if cols[0]:
        yield out()


def iter_api_batches(js, name: str, lo: int, hi: int, *,
                     batch_rows: int = 65_536) -> Generator[Any, None, None]:
    """The stored messages of stream ``name`` of ``js`` (any JetStreamAPI) with
    ``lo <= seq <= hi``, in sequence order, as RecordBatches of the lake schema. Uses the
    implementation's column reader when it has one (``stored_columns``: a live server's,
    one ordered consumer), else its ``messages`` iterator."""
    import pyarrow as pa

    reader = getattr(js, "stored_columns", None)
    if reader is not None:
        batches = reader(name, lo, hi, batch=batch_rows)
    else:
        batches = message_columns(js.messages(name, start_seq=max(1, lo)), hi, batch_rows)
    schema = arrow_schema()
    try:
        for cols in batches:
            n = len(cols["seq"])
            if not n:
                continue
            yield pa.RecordBatch.from_arrays([
                pa.repeat(pa.scalar(name, pa.string()), n),
                pa.repeat(pa.scalar(0, pa.int32()), n),
                cols["seq"], cols["subject"], pa.nulls(n, pa.binary()), cols["ts"],
                cols["headers"], cols["data"]], schema=schema)
    finally:
        close = getattr(batches, "close", None)
        if close is not None:  # a reader broken off: its consumer goes now
            close()


def api_stream_meta(js, info) -> dict[str, Any]:
    """The ``_jetlink.json`` document of a stream of any JetStreamAPI from its StreamInfo:
    config, creation time and state as the server reported them, its identity, and where
    it was read (``server``: ``js.where``)."""
    from .agreements import identity

    doc = info.to_json()
    st = info.state
    return {
        "kind": "stream",
        "name": info.config.name,
        "cluster": getattr(info, "cluster", "") or "",
        "server": js.where,
        "config": doc["config"],
        "created": doc["created"],
        "created_ns": info.created_ns,
        "identity": identity(info.created_ns),
        "state": {"messages": st.messages, "bytes": st.bytes, "first_seq": st.first_seq,
                  "last_seq": st.last_seq},
    }


def _read_json_file(fs, where: str) -> dict[str, Any] | None:
    from pyarrow import fs as pafs

    if fs.get_file_info(where).type != pafs.FileType.File:
        return None
    try:
        with fs.open_input_stream(where) as f:
            return parse_meta(f.read(), where)
    except (OSError, LakeError):
        return None  # a torn or foreign file: not a progress record of ours


def _write_json_atomically(fs, base: str, fname: str, doc: dict[str, Any]) -> None:
    tmp = _join(base, fname + ".tmp")
    with fs.open_output_stream(tmp) as f:
        f.write(meta_bytes(doc))
    fs.move(tmp, _join(base, fname))


def _clean_partial(fs, base: str, progress: dict[str, Any]) -> None:
    """Delete what an interrupted run left beside its complete part files: a part file
    being written, a part renamed but not recorded, a progress file written aside."""
    from pyarrow import fs as pafs

    files = progress["files"]
    # the dataset a replacing export keeps whole until its own parts are all written
    keep = {*files, *(NEW_PREFIX + f for f in files), *progress.get("replacing", ())}
    for e in fs.get_file_info(pafs.FileSelector(base)):
        if e.type != pafs.FileType.File:
            continue
        n = e.base_name
        if (n.startswith(TMP_PREFIX) or n == PROGRESS_FILE + ".tmp"
                or (n.startswith((NEW_PREFIX, "part-")) and n.endswith(".parquet")
                    and n not in keep)):
            fs.delete_file(e.path)


def _progress_matches(progress: dict[str, Any] | None, name: str, ident: str,
                      start_seq: int = 1, selection: str = "") -> bool:
    return (isinstance(progress, dict) and progress.get("stream") == name
            and progress.get("identity") == ident and progress.get("from", 1) == start_seq
            and progress.get("selection", "") == selection
            and isinstance(progress.get("files"), list)
            and isinstance(progress.get("meta"), dict)
            and isinstance(progress.get("cut"), int) and isinstance(progress.get("through"), int))


def export_stream_api(js, name: str, path: str, *, batch_rows: int = 65_536,
                      row_group_rows: int = 131_072, file_rows: int = API_FILE_ROWS,
                      force: bool = False,
                      on_resume: Callable[[dict[str, Any]], None] | None = None,
                      on_file: Callable[[dict[str, Any]], None] | None = None,
                      on_rows: Callable[[int], None] | None = None,
                      start_seq: int = 1,
                      config: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                      last_seq: int | None = None,
                      keep: Callable[[Any], Any] | None = None,
                      selection: str = "",
                      ) -> dict[str, Any]:
    """Write stream ``name`` of ``js`` (any JetStreamAPI; a live server's) as a Parquet
    dataset in the directory ``path``, in the lake schema (partition 0, key null, ``ts`` the
    stored time in ns, ``headers`` the header block as stored), with ``_jetlink.json`` as
    the server reported the stream when the export started. One consistent cut: the
    stream's last sequence then.

    Resumable (PROGRESS_FILE above): a directory holding an unfinished export of the same
    stream (same name and identity) is continued after its last complete part file, with
    its cut (``on_resume(progress)`` is called first; whatever ``force`` says); any other
    non-empty directory is refused unless ``force`` (LakeExistsError), as a finished
    dataset is. ``on_file(progress)`` runs after each part file is recorded. Returns
    ``{"stream", "path", "messages", "bytes_written", "first_seq", "last_seq", "files",
    "resumed_from"}`` (``resumed_from``: the last sequence an earlier run had written, or
    None; the counts cover the whole dataset). A dataset that ``force`` replaces stays whole
    until the new one is: its part files are committed aside (NEW_PREFIX), then
    :func:`_swap_aside`. ``start_seq``: the first sequence written
    (a range ``start_seq`` .. the cut: the divergent tail failback saves); a run resumed
    must ask for the same start. ``config``: how the stream's config is recorded in
    ``_jetlink.json`` (failback: a fenced origin's with its fence undone, the config an
    import of the tail should make). ``last_seq``: the cut at most that sequence;
    ``keep``: of each batch's ``seq`` column, the mask of the rows written (the rest of the
    range is read and left out), ``selection`` naming that choice (a run resumed must name
    the same one: failback's messages the promoted side does not hold)."""
    if min(batch_rows, row_group_rows, file_rows) < 1:
        raise ValueError("batch_rows, row_group_rows and file_rows must be at least 1")
    info = js.stream_info(name)
    meta = api_stream_meta(js, info)
    if config is not None:
        meta["config"] = config(meta["config"])
    if selection:
        meta["selection"] = selection
    fs, base = lake_filesystem(path)
    progress, resumed_from = _export_progress(fs, base, path, name, info, meta, start_seq,
                                              force, on_resume, last_seq, selection)
    parts = _PartFiles(fs, base, progress, row_group_rows, file_rows, on_file)
    cut = progress["cut"]
    batches = iter_api_batches(js, name, progress["through"] + 1, cut, batch_rows=batch_rows)
    try:
        for batch in batches:
            if keep is not None:
                batch = batch.filter(keep(batch.column("seq")))
                if not batch.num_rows:
                    continue
            if on_rows is not None:
                on_rows(batch.num_rows)
            parts.add(batch)
        parts.finish()
    except KeyboardInterrupt as exc:
        done, nfiles = progress["messages"], len(progress["files"])
        raise LakeInterrupted(
            f"the export of stream {name} to {path} stopped with {done} message"
            f"{'s' if done != 1 else ''} in {nfiles} complete file{'s' if nfiles != 1 else ''}"
            + (" written aside: the dataset it replaces is whole and unchanged"
               if "replacing" in progress else
               f" (no {META_FILE} yet; stream import refuses the directory)")
            + ": run the same export again to continue after them, with the same cut"
            ) from exc
    finally:
        batches.close()
        parts.abandon()
    now = js.stream_info(name)
    if now.created_ns != info.created_ns:
        raise LakeError(f"stream {name} was deleted and created again while it was exported")
    progress["through"] = cut
    if "replacing" in progress:
        _swap_aside(fs, base, progress)
    if selection or cut < int(progress["meta"]["state"]["last_seq"]):
        # a part of the stream: its state is what the dataset holds, up to its cut (a
        # selection: up to its last message), so an import ends the stream there, not at
        # the whole stream's last sequence
        last = progress["last_seq"] if selection and progress["messages"] else cut
        progress["meta"]["state"] = {
            "messages": progress["messages"], "bytes": progress["bytes"],
            "first_seq": progress["first_seq"], "last_seq": last}
    write_meta(path, progress["meta"])
    fs.delete_file(_join(base, PROGRESS_FILE))
    return {"stream": name, "path": path, "messages": progress["messages"],
            "bytes_written": progress["bytes"], "first_seq": progress["first_seq"],
            "last_seq": progress["last_seq"], "files": list(progress["files"]),
            "resumed_from": resumed_from}


def _export_progress(fs, base: str, path: str, name: str, info, meta: dict[str, Any],
                     start_seq: int, force: bool,
                     on_resume: Callable[[dict[str, Any]], None] | None,
                     last_seq: int | None = None, selection: str = ""
                     ) -> tuple[dict[str, Any], int | None]:
    """The export's progress record and the last sequence an earlier run had written (or
    None): an unfinished export of the same stream and start in the directory is continued
    (what it left aside deleted), else the directory is prepared and a new record written."""
    from pyarrow import fs as pafs

    kind = fs.get_file_info(base).type
    found = _read_json_file(fs, _join(base, PROGRESS_FILE)) \
        if kind == pafs.FileType.Directory else None
    start_seq = max(int(start_seq), 1)
    if _progress_matches(found, name, meta["identity"], start_seq, selection):
        progress = found
        assert progress is not None
        _clean_partial(fs, base, progress)
        if on_resume is not None:
            on_resume(progress)
        return progress, progress["through"]
    old = _prepare_dir(fs, base, path, force, keep_old=True)
    cut = info.state.last_seq if last_seq is None else min(info.state.last_seq, last_seq)
    progress = {"kind": "stream-export", "stream": name, "identity": meta["identity"],
                "cut": cut, "through": start_seq - 1, "messages": 0,
                "first_seq": 0,
                "last_seq": 0, "bytes": 0, "files": [], "meta": meta}
    if start_seq > 1:
        progress["from"] = start_seq
    if selection:
        progress["selection"] = selection
    if old:
        progress["replacing"] = sorted(p.rsplit("/", 1)[-1] for p in old)
    _write_json_atomically(fs, base, PROGRESS_FILE, progress)
    return progress, None


def _swap_aside(fs, base: str, progress: dict[str, Any]) -> None:
    """The new dataset of a replacing export in place of the old one: the old files deleted
    (its ``_jetlink.json`` first: from there on an import refuses the directory as an
    interrupted export), recorded as done, then the part files written aside renamed to
    their names; the caller writes the new ``_jetlink.json``. Run again after a crash it
    finishes what is left (an old name is never one of the moved parts: they are moved
    only once the old files are recorded gone)."""
    from pyarrow import fs as pafs

    for n in sorted(progress["replacing"], key=lambda n: n != META_FILE):
        where = _join(base, n)
        if fs.get_file_info(where).type == pafs.FileType.File:
            fs.delete_file(where)
    if progress["replacing"]:
        progress["replacing"] = []
        _write_json_atomically(fs, base, PROGRESS_FILE, progress)
    for fname in progress["files"]:
        aside = _join(base, NEW_PREFIX + fname)
        if fs.get_file_info(aside).type == pafs.FileType.File:
            fs.move(aside, _join(base, fname))


class _PartFiles:
    """The part files of :func:`export_stream_api`: rows gathered into row groups of
    ``row_group_rows``, files of ``file_rows``; each file written aside (TMP_PREFIX), then
    renamed and recorded in the progress file (``on_file(progress)`` after)."""

    def __init__(self, fs, base: str, progress: dict[str, Any], row_group_rows: int,
                 file_rows: int, on_file: Callable[[dict[str, Any]], None] | None) -> None:
        self.fs, self.base, self.progress = fs, base, progress
        self.row_group_rows, self.file_rows, self.on_file = row_group_rows, file_rows, on_file
        self.schema = arrow_schema()
        self.writer: Any = None
        self.tmp = ""
        self.rows = self.first = self.last = 0  # of the file being written
        self.pending: list[Any] = []  # the row group being gathered
        self.pending_rows = 0

    def add(self, batch) -> None:
        """Write the rows of ``batch``, opening and committing files as they fill."""
        while batch.num_rows:
            if self.writer is None:
                self.open()
            take = min(batch.num_rows, self.file_rows - self.rows,
                       self.row_group_rows - self.pending_rows)
            part = batch.slice(0, take)
            self.pending.append(part)
            self.pending_rows += take
            seqs = part.column("seq")
            if not self.rows:
                self.first = seqs[0].as_py()
            self.rows += take
            self.last = seqs[take - 1].as_py()
            batch = batch.slice(take)
            if self.pending_rows >= self.row_group_rows:
                self.flush_group()
            if self.rows >= self.file_rows:
                self.commit()

    def finish(self) -> None:
        """Commit the file being written; with no messages at all, one empty file keeps the
        schema."""
        if self.writer is None and not self.progress["files"]:
            self.open()
        if self.writer is not None:
            self.commit()

    def abandon(self) -> None:
        """Interrupted: the file being written stays aside, unrecorded."""
        if self.writer is not None:
            try:
                self.writer.close()
            except Exception:  # noqa: BLE001 - the interruption is what matters
                pass

    def open(self) -> None:
        import pyarrow.parquet as pq

        fname = PART_FORMAT.format(len(self.progress["files"]))
        self.tmp = _join(self.base, TMP_PREFIX + fname)
        self.writer = pq.ParquetWriter(self.tmp, self.schema, filesystem=self.fs,
                                       write_page_checksum=True)
        self.rows = self.first = self.last = 0

    def flush_group(self) -> None:
        import pyarrow as pa

        if self.pending:
            self.writer.write_table(pa.Table.from_batches(self.pending, self.schema),
                                    row_group_size=self.row_group_rows)
            self.pending, self.pending_rows = [], 0

    def commit(self) -> None:
        self.flush_group()
        self.writer.close()
        self.writer = None
        progress, fs = self.progress, self.fs
        fname = PART_FORMAT.format(len(progress["files"]))
        final = _join(self.base, (NEW_PREFIX if "replacing" in progress else "") + fname)
        fs.move(self.tmp, final)
        progress["files"].append(fname)
        progress["bytes"] += fs.get_file_info(final).size or 0
        if self.rows:
            progress["messages"] += self.rows
            progress["first_seq"] = progress["first_seq"] or self.first
            progress["last_seq"] = progress["through"] = self.last
        _write_json_atomically(fs, self.base, PROGRESS_FILE, progress)
        if self.on_file is not None:
            self.on_file(progress)


def _publish_headers(hdr: bytes | None, msg_id: str) -> bytes:
    """The header block a lake row is published with: its own, byte for byte (values that
    are not UTF-8, repeated names, their order and spacing as stored), without the lines
    of the publish preconditions and of its own Nats-Msg-Id, then ``Nats-Msg-Id: msg_id``."""
    from .headers import MSG_ID

    drop = {n.encode() for n in (MSG_ID, *_PRECONDITIONS)}
    lines = [b"NATS/1.0"]
    if hdr:
        for line in bytes(hdr).split(b"\r\n")[1:]:
            if line and line.split(b":", 1)[0].strip() not in drop:
                lines.append(line)
    lines.append(f"{MSG_ID}: {msg_id}".encode())
    return b"\r\n".join(lines) + b"\r\n\r\n"


def import_msg_id(stream: str, identity: str, seq: int) -> str:
    """The Nats-Msg-Id an imported row is published with: ``<stream>:<identity>:<seq>`` of
    the row's origin (``<stream>:<seq>`` when the dataset names no identity)."""
    return f"{stream}:{identity}:{seq}" if identity else f"{stream}:{seq}"


def import_stream_api(js, name: str, path: str, *, chunk: int = IMPORT_CHUNK,
                      on_total: Callable[[int], None] | None = None,
                      on_rows: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Publish the rows of the Parquet dataset at ``path`` (lake schema) to stream ``name``
    of ``js`` (any JetStreamAPI: a live server), in sequence order, pipelined
    (``publish_many``, ``chunk`` rows at a time): subject, headers and payload kept, the
    sequence and time the server's. Each row goes with ``Nats-Msg-Id`` =
    :func:`import_msg_id` of its origin stream, identity and sequence (replacing a
    Nats-Msg-Id of its own; publish preconditions, ``Nats-Expected-*``, are left out), so a
    run repeated within the stream's duplicate window stores nothing twice: the server
    answers ``duplicate`` and the row counts as a duplicate.

    The stream is created from the dataset's ``_jetlink.json`` config (under ``name``,
    without mirror and sources) when it does not exist; an existing stream may hold
    messages, must not be a mirror, and every row's subject must be one of its subjects
    (checked before anything is published). A refused publish raises a LakeError saying
    how far it got (the stream and what was stored stay: a re-run continues). Returns
    ``{"stream", "path", "messages", "duplicates", "first_seq", "last_seq", "created",
    "transactions"}`` (messages: rows stored now; first/last: the new sequences;
    transactions: the pipelined batches). ``on_total`` / ``on_rows``: as
    :func:`import_stream` (``on_rows`` after each batch the server acknowledged)."""
    if chunk < 1:
        raise ValueError("chunk must be at least 1")
    fragments, schema, ordered, meta = _open_stream_dataset(path, on_total)
    info, created, seal = _import_target(js, name, path, meta)
    _check_import_subjects(fragments, schema, info, name, path)
    identity = str((meta or {}).get("identity") or "")
    batches = _iter_dataset(fragments, schema, conform=True) if ordered \
        else _sorted_rows(fragments, schema, path)
    sender = _ImportSender(js, name, path, identity, on_rows)
    pending: list[tuple[Any, ...]] = []
    for batch in _as_batches(batches):
        if not batch.num_rows:
            continue
        cols = [batch.column(c).to_pylist() for c in ("stream", "seq", "subject", "headers",
                                                      "data")]
        for row in zip(*cols, strict=True):
            pending.append(row)
            if len(pending) >= chunk:
                sender.send(pending)
                pending = []
    if pending:
        sender.send(pending)
    if seal:  # (a sealed stream's dataset: sealed now that its rows are in)
        _seal_imported(js, name)
    return {"stream": name, "path": path, "messages": sender.stored,
            "duplicates": sender.duplicates, "first_seq": sender.first,
            "last_seq": sender.last, "created": created, "transactions": sender.calls}


def _import_target(js, name: str, path: str, meta: dict[str, Any] | None
                   ) -> tuple[Any, bool, bool]:
    """The stream an import publishes to (its StreamInfo), whether it was created now from
    the dataset's config (under ``name``, without mirror and sources), and whether it is to
    be sealed once its rows are in (a sealed stream's config, created unsealed)."""
    if name in js.stream_names():
        info = js.stream_info(name)
        if info.config.mirror is not None:
            raise LakeError(f"stream {name} is a mirror: it takes no publishes; import into "
                            "a stream of its own")
        return info, False, False
    doc = _meta_config(meta, name, path)
    was = "a mirror's" if doc.get("mirror") else "a stream that only sources" \
        if doc.get("sources") else "none given"
    for key in ("mirror", "sources"):
        doc.pop(key, None)
    if not doc.get("subjects"):
        raise LakeError(f"stream {name} does not exist and the config in {path} has no "
                        f"subjects ({was}): create the stream with subjects that "
                        "take the rows (jetlink stream add) and import into it")
    seal = _create_from_meta(js, name, doc, path)
    return js.stream_info(name), True, seal


def _meta_config(meta: dict[str, Any] | None, name: str, path: str) -> dict[str, Any]:
    """The stream config of the dataset's ``_jetlink.json`` under ``name``, for a stream an
    import creates (a LakeError when the dataset has none)."""
    if meta is None or not isinstance(meta.get("config"), dict):
        raise LakeError(f"stream {name} does not exist and {path} has no {META_FILE} "
                        "with a stream config: create the stream first (jetlink stream "
                        "add)")
    doc = dict(meta["config"])
    doc["name"] = name
    return doc


def _check_import_subjects(fragments, schema, info, name: str, path: str) -> None:
    """Every row's subject is one of the stream's subjects (before anything is published)."""
    import pyarrow.compute as pc

    from .subjects import SubjectFilter

    taken = SubjectFilter(info.config.subjects or [name])
    for batch in _iter_dataset(fragments, schema, ["subject"]):
        for subject in pc.unique(batch.column("subject")).to_pylist():
            if not taken.matches(subject):
                raise LakeError(f"{path}: subject {subject} is not one of stream {name}'s "
                                f"subjects ({', '.join(info.config.subjects or [name])}): "
                                "nothing was published")


class _ImportSender:
    """The pipelined publishes of :func:`import_stream_api` and what the server answered:
    rows stored, duplicates, the first and last new sequences, the batches sent."""

    def __init__(self, js, name: str, path: str, identity: str,
                 on_rows: Callable[[int], None] | None) -> None:
        self.js, self.name, self.path, self.identity = js, name, path, identity
        self.on_rows = on_rows
        self.stored = self.duplicates = self.first = self.last = self.calls = 0

    def refused(self, seq: int, subject: str, why: str) -> LakeError:
        stored, duplicates = self.stored, self.duplicates
        done = (f"{stored} message{'s' if stored != 1 else ''} stored and {duplicates} "
                f"duplicate{'s' if duplicates != 1 else ''} before it")
        return LakeError(f"message {seq} on {subject} of {self.path} refused by stream "
                         f"{self.name}: {why} ({done}; run the import again within the "
                         "stream's duplicate window to continue without duplicates)")

    def send(self, rows: list[tuple[Any, ...]]) -> None:
        """Publish ``rows`` (origin stream, seq, subject, headers, data) in one batch."""
        from .errors import ApiError

        identity, refused = self.identity, self.refused
        msgs = [(subject, data or b"", _publish_headers(hdr, import_msg_id(origin, identity,
                                                                            seq)))
                for origin, seq, subject, hdr, data in rows]
        results = self.js.publish_many(msgs)
        self.calls += 1
        # publish_many stops at the first refusal: fewer results than rows (checked below)
        for (_o, seq, subject, _h, _d), res in zip(rows, results, strict=False):
            if isinstance(res, ApiError):
                raise refused(seq, subject, f"{res.description} ({res.err_code})")
            if isinstance(res, Exception):
                raise refused(seq, subject, str(res))
            if res is None:
                raise refused(seq, subject, "no acknowledgement")
            if res.stream != self.name:
                raise refused(seq, subject, f"stored by stream {res.stream} instead")
            if res.duplicate:
                self.duplicates += 1
            else:
                self.stored += 1
                self.first = self.first or res.seq
                self.last = res.seq
        if len(results) < len(rows):
            _o, seq, subject, _h, _d = rows[len(results)]
            raise refused(seq, subject, "no acknowledgement")
        if self.on_rows is not None:
            self.on_rows(len(rows))


# --------------------------------------------------------------------------------------------
# Topics of the embedded store as Arrow batches, and rows into a mirror topic
# (``jetlink spark mirror-topic``)
# --------------------------------------------------------------------------------------------
def iter_topic_batches(db_path: str, topic: str, lo: int, hi: int, *, tid: int,
                       batch_rows: int = 65_536):
    """The records of ``topic`` whose record keys (core/kafka/topics.py ``record_key``) are
    ``lo <= id < hi`` (half-open, like ``partition_range``), in key order (partition, then
    offset), as pyarrow RecordBatches of the lake schema: ``stream`` the topic, ``seq`` the
    offset, ``subject`` null, ``ts`` the record's milliseconds * 1,000,000, ``headers`` the
    stored JSON (bytes) or null, ``data`` the value. One read snapshot for the whole range;
    ``tid`` pins the topic's rowid (a topic deleted and created again yields nothing)."""
    from .kafka.topics import MAX_OFFSET, MAX_PARTITIONS, OFFSET_BITS, record_key

    conn = open_readonly(db_path)
    try:
        conn.execute("BEGIN")
        row = conn.execute("SELECT id FROM topics WHERE name = ?", (topic,)).fetchone()
        if row is None or row[0] != tid:
            return
        k_lo, k_hi = max(lo, record_key(tid, 0, 0)), min(hi, record_key(tid + 1, 0, 0))
        if k_lo >= k_hi:
            return
        cur = conn.execute("SELECT id, ts, key, value, headers FROM records "
                           "WHERE id >= ? AND id < ? ORDER BY id", (k_lo, k_hi))

        def as_bytes(v):
            return v.encode("utf-8") if isinstance(v, str) else v

        while True:
            rows = cur.fetchmany(batch_rows)
            if not rows:
                break
            keys, tss, ks, vs, hdrs = zip(*rows, strict=True)
            yield lake_batch(topic, [(k >> OFFSET_BITS) & (MAX_PARTITIONS - 1) for k in keys],
                             [k & MAX_OFFSET for k in keys], None, [as_bytes(k) for k in ks],
                             [t * 1_000_000 for t in tss], [as_bytes(h) for h in hdrs],
                             [as_bytes(v) for v in vs])
        conn.execute("COMMIT")
    finally:
        conn.close()


def _topic_rows(batches: Iterable[Any]) -> Iterator[tuple]:
    """``(partition, offset, timestamp_ms, key, value, headers)`` per row of the lake schema
    (headers back to the stored JSON text); rows of a stream (a subject) are refused."""
    want = ("partition", "seq", "ts", "key", "data", "headers")
    for batch in _as_batches(batches):
        if not batch.num_rows:
            continue
        names = batch.schema.names
        missing = [c for c in want if c not in names]
        if missing:
            raise LakeError(f"rows without a {missing[0]} column: not the lake schema")
        if "subject" in names and batch.column("subject").null_count != batch.num_rows:
            raise LakeError("rows of a stream (a subject): only topic records go into a topic")
        cols = [batch.column(c).to_pylist() for c in want]
        for p, off, ts, key, data, hdr in zip(*cols, strict=True):
            yield (p, off, ts // 1_000_000, key, data,
                   None if hdr is None else bytes(hdr).decode("utf-8"))


def write_topic_rows(mirrors, plan, batches: Iterable[Any], *,
                     txn_rows: int = 100_000,
                     on_txn: Callable[[int], None] | None = None) -> int:
    """Write rows of the lake schema (pyarrow RecordBatches or Tables; offsets increasing
    per partition) into the mirror topic of a bulk copy: ``mirrors`` a
    core/kafka/mirrors.py ``Mirrors`` of the destination cluster, ``plan`` its
    ``bulk_begin`` result. The Kafka rules (ranges, the hold, offsets, sizes, fetch
    positions, one transaction per ``txn_rows`` rows) are ``Mirrors.bulk_write``'s; this
    converts the rows. Returns the rows written."""
    return int(mirrors.bulk_write(plan, _topic_rows(batches), txn_rows=txn_rows,
                                  on_txn=on_txn))
