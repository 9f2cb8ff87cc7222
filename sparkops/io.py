"""Where jobs read and write: the embedded store and Parquet datasets (core/lake.py schema).

Addresses (``jetlink spark`` arguments):
- ``store:STREAM`` / ``store:CLUSTER/STREAM``: a stream of the data directory (the global
  --cluster when none is named); ``store:topic/T`` / ``store:CLUSTER/topic/T``: a topic;
- ``parquet:PATH``: a dataset on any Hadoop filesystem path (file://, hdfs://, s3a://...),
  with its ``_jetlink.json`` beside the data files when jetlink wrote it;
- a bare NAME means ``store:NAME``.

The store is read by a Python data source (``jetlink_store``): the driver plans sequence
ranges (the cuts are passed as options, never pushed down as filters) and each task reads its
range from the cluster's SQLite file, read-only, as Arrow batches. It needs executors that
see the data directory's files: a local master. The store is written on the driver, through
the engine, in large transactions (core/lake.py ``write_stream_rows``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from jetlink.core import lake

SOURCE_NAME = "jetlink_store"
_ROWS_PER_SPLIT = 250_000


class AddressError(ValueError):
    """A malformed input or output address (the message names it and the rule)."""


@dataclass(frozen=True)
class Address:
    kind: str  # "stream" | "topic" | "parquet"
    name: str = ""  # stream or topic (parquet: from its metadata, when known)
    cluster: str = ""
    path: str = ""

    def __str__(self) -> str:
        if self.kind == "parquet":
            return f"parquet:{self.path}"
        mid = "topic/" if self.kind == "topic" else ""
        return f"store:{self.cluster}/{mid}{self.name}"


def parse_address(text: str, default_cluster: str, *, what: str = "address") -> Address:
    if text.startswith("parquet:"):
        path = text[len("parquet:"):]
        if not path:
            raise AddressError(f"{what} {text!r}: parquet: needs a path")
        why = lake.dataset_path_problem(path)
        if why:
            raise AddressError(f"{what} {text!r}: {why}")
        if path.startswith("~"):  # the home directory, as the stream verbs read a path
            # (core/lake.py local_path); Hadoop's Path would make ./~ of it
            import os

            path = os.path.expanduser(path)
        return Address("parquet", path=path)
    body = text[len("store:"):] if text.startswith("store:") else text
    if ":" in body.split("/")[0] and not text.startswith("store:"):
        raise AddressError(f"{what} {text!r}: expected store:[CLUSTER/]STREAM, "
                           "store:[CLUSTER/]topic/TOPIC or parquet:PATH")
    parts = body.split("/")
    if len(parts) == 1:
        cluster, kind, name = default_cluster, "stream", parts[0]
    elif len(parts) == 2 and parts[0] == "topic":
        cluster, kind, name = default_cluster, "topic", parts[1]
    elif len(parts) == 2:
        cluster, kind, name = parts[0], "stream", parts[1]
    elif len(parts) == 3 and parts[1] == "topic":
        cluster, kind, name = parts[0], "topic", parts[2]
    else:
        raise AddressError(f"{what} {text!r}: expected store:[CLUSTER/]STREAM, "
                           "store:[CLUSTER/]topic/TOPIC or parquet:PATH")
    if not name or not cluster:
        raise AddressError(f"{what} {text!r}: the name is empty")
    return Address(kind, name=name, cluster=cluster)


def store_names(data_dir: Any, cluster: str, table: str) -> list[str]:
    """The names in a cluster's ``streams`` or ``topics`` table, read only: a data directory
    or a cluster without a database has none (nothing is created, as a read creates
    nothing: core/store/datadir.py DataDir ``create``)."""
    db = data_dir.cluster_path(cluster)
    if not db.exists():
        return []
    conn = lake.open_readonly(str(db))
    try:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                        (table,)).fetchone() is None:
            return []
        return [str(r[0]) for r in conn.execute(f"SELECT name FROM {table}")]  # noqa: S608
    finally:
        conn.close()


def check_input(data_dir: Any, addr: Address, *, meta: bool = True) -> None:
    """Refuse an input that is not there, before a Spark driver starts: a stream or topic
    of the store (read only: not the data directory, not a cluster is created), a dataset on
    the local filesystem (with its ``_jetlink.json`` when ``meta``: a job's origin). A
    dataset on another filesystem is Spark's to find. The texts are the job's own
    (sparkops/run.py Runner ``read``, :func:`read_topic`)."""
    import os

    from jetlink.core.errors import JetlinkError, NotFoundError, not_found

    if addr.kind == "parquet":
        try:
            here = lake.local_path(addr.path)
        except lake.LakeError:
            return  # a malformed location: the job's own reading of it says why
        if here is None:
            return
        if not os.path.exists(here):
            raise NotFoundError(f"{addr}: no such dataset")
        if not os.path.isdir(here):  # a job's origin is a directory (with its metadata);
            # a comparison may read one Parquet file (its magic first: "PAR1")
            try:
                with open(here, "rb") as f:
                    parquet = f.read(4) == b"PAR1"
            except OSError as exc:
                raise JetlinkError(f"{addr}: {exc.strerror or exc}") from None
            if meta or not parquet:
                raise JetlinkError(f"{addr} is a {'' if parquet else 'non-Parquet '}file, "
                                   "not a dataset directory (jetlink stream export writes "
                                   "one)")
        if meta and os.path.isdir(here) and not os.path.isfile(os.path.join(here,
                                                                            lake.META_FILE)):
            raise JetlinkError(f"{addr} has no {lake.META_FILE} (write it with `jetlink "
                               "stream export` or a jetlink job)")
        if meta and os.path.isdir(here):
            doc = lake.read_meta(here)  # one its readers refuse, refused before a driver
            # starts; so are rows its statistics show stream import would refuse
            stream = (doc or {}).get("kind", "stream") == "stream"
            why = lake.row_stats_problem(here, stream=stream)
            if not why and stream:  # (a sequence held twice shows in no statistics)
                try:
                    why = lake.seq_twice_problem(here)
                except lake.LakeError:
                    why = None  # (a file no reader takes: the job's own reading says why)
            if why:
                raise JetlinkError(f"{addr}: {why}; nothing was started (jetlink stream "
                                   "import refuses such rows too)")
        return
    data_dir.check_exists()
    topic = addr.kind == "topic"
    names = store_names(data_dir, addr.cluster, "topics" if topic else "streams")
    if addr.name not in names:
        if topic:
            raise not_found(NotFoundError(f"{addr}: no such topic"), addr.name, names)
        # the server's document (10059), the address and the closest name for people
        from jetlink.core.errors import did_you_mean, nats_error

        err = nats_error("StreamNotFound", field="stream")
        hint = did_you_mean(addr.name, names)
        err.detail = f"{addr}" + (f"; {hint}" if hint else "")
        raise err


def unwritable_output(path: str) -> str | None:
    """Why a job could not write a dataset at ``path`` on the local filesystem (no scheme or
    ``file:``), or None (it can, or another filesystem: Spark's own to judge). Asked of the
    nearest directory that exists, by creating and removing an empty directory there: the
    question Spark's writer meets first, answered before a driver starts."""
    import os
    import tempfile

    try:
        here = lake.local_path(path)
    except lake.LakeError:
        return None  # a malformed location: the job's own reading of it says why
    if here is None:
        return None
    while not os.path.lexists(here):
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    if not os.path.isdir(here):
        return f"{here} is not a directory"
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".jetlink-write-check-", dir=here))
    except OSError as exc:
        return f"can not create a directory in {here}: {(exc.strerror or str(exc)).lower()}"
    return None


def occupied_output(path: str) -> str | None:
    """Why a job cannot write a new dataset at ``path`` on the local filesystem because
    something is there already, or None (nothing there, an empty directory, or another
    filesystem: Spark's own to judge). A job writes a new dataset only: a finished one (its
    ``_jetlink.json``) or the leftovers of a job that never finished (Spark's ``_temporary``,
    part files, no ``_jetlink.json``) are named with how to clear them."""
    import os

    try:
        here = lake.local_path(path)
    except lake.LakeError:
        return None
    if here is None or not os.path.isdir(here):
        return None
    try:
        names = os.listdir(here)
    except OSError as exc:
        return f"can not read {here}: {(exc.strerror or str(exc)).lower()}"
    if not names:
        return None
    if lake.META_FILE in names:
        return (f"{here} holds a dataset already ({lake.META_FILE}): a job writes a new "
                f"dataset; remove it (rm -r {here}) or choose another path")
    if "_temporary" in names or any(n.startswith("part-") for n in names):
        return (f"{here} holds what an unfinished job left (no {lake.META_FILE}): remove it "
                f"(rm -r {here}) and run the job again")
    return f"{here} is not empty: a job writes a new dataset into a new or empty directory"


# --------------------------------------------------------------------------------------------
# the store as a Spark data source
# --------------------------------------------------------------------------------------------
def _source_class() -> type:
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class _Range(InputPartition):
        def __init__(self, lo: int, hi: int) -> None:
            super().__init__((lo, hi))
            self.lo, self.hi = lo, hi

    class _Reader(DataSourceReader):
        def __init__(self, options: dict[str, str]) -> None:
            self.db = options["db"]
            self.kind = options.get("kind", "stream")
            self.name = options["name"]
            self.sid = int(options["sid"])
            self.ranges = json.loads(options["ranges"])

        def partitions(self) -> list[Any]:
            return [_Range(lo, hi) for lo, hi in self.ranges]

        def read(self, partition: Any) -> Iterator[Any]:
            from jetlink.core import lake as _lake

            if self.kind == "topic":
                yield from _lake.iter_topic_batches(self.db, self.name, partition.lo,
                                                    partition.hi, tid=self.sid)
            else:
                yield from _lake.iter_stream_batches(self.db, self.name, partition.lo,
                                                     partition.hi, sid=self.sid)

    class JetlinkStore(DataSource):
        @classmethod
        def name(cls) -> str:
            return SOURCE_NAME

        def schema(self) -> str:
            return lake.spark_ddl()

        def reader(self, schema: Any) -> Any:
            return _Reader(self.options)

    return JetlinkStore


def _register(spark: Any) -> None:
    conf_key = "jetlink.store.registered"
    if spark.conf.get(conf_key, "false") == "true":
        return
    spark.dataSource.register(_source_class())
    spark.conf.set(conf_key, "true")


def seq_ranges(first: int, last: int, msgs: int, parts: int) -> list[tuple[int, int]]:
    """``[first, last]`` cut into about ``msgs / 250,000`` ranges (at least ``parts`` when
    there are that many messages, at least one)."""
    if msgs <= 0 or last < first:
        return [(1, 0)]
    n = max(1, min(max(parts, -(-msgs // _ROWS_PER_SPLIT)), msgs))
    span = last - first + 1
    step = -(-span // n)
    return [(lo, min(lo + step - 1, last)) for lo in range(first, last + 1, step)]


# Streams up to this many messages are read on the driver in one go (no Python worker per
# task: much faster for the small and medium inputs of a local master).
DRIVER_READ_MAX = 1_000_000


def read_store_stream(spark: Any, db_path: str, name: str, sid: int, first: int, last: int,
                      msgs: int) -> Any:
    """The messages ``first..last`` of a stream (one job-wide cut: later messages are left
    to the pump)."""
    if msgs <= DRIVER_READ_MAX:
        import pyarrow as pa

        table = pa.Table.from_batches(
            list(lake.iter_stream_batches(db_path, name, first, last, sid=sid)),
            schema=lake.arrow_schema())
        return spark.createDataFrame(table)
    _register(spark)
    ranges = seq_ranges(first, last, msgs, spark.sparkContext.defaultParallelism)
    return (spark.read.format(SOURCE_NAME).option("db", db_path).option("kind", "stream")
            .option("name", name).option("sid", str(sid))
            .option("ranges", json.dumps(ranges)).load())


def read_store_topic(spark: Any, db_path: str, name: str, tid: int,
                     ranges: list[tuple[int, int]]) -> Any:
    """A topic's records (topic rowid ``tid``): ``ranges`` are record keys
    (core/kafka/topics.py ``record_key``) as ``(lo, hi)`` pairs, ``lo <= id < hi``, each
    inside one partition (core/kafka/mirrors.py ``BulkPlan.key_ranges``): one Spark
    partition per range, read by core/lake.py ``iter_topic_batches``. No range: no rows."""
    _register(spark)
    cuts = [(int(lo), int(hi)) for lo, hi in ranges] or [(0, 0)]
    return (spark.read.format(SOURCE_NAME).option("db", db_path).option("kind", "topic")
            .option("name", name).option("sid", str(tid))
            .option("ranges", json.dumps(cuts)).load())


def read_topic(spark: Any, datadir: Any, addr: Address) -> Any:
    """Every stored record of topic ``addr`` (one Spark partition per topic partition),
    after the topic's due retention ran (as a fetch would see it)."""
    from jetlink.core.errors import JetlinkError
    from jetlink.core.kafka.topics import partition_range

    if not datadir.has_cluster(addr.cluster):
        raise JetlinkError(f"cluster {addr.cluster} not found")
    cl = datadir.open(addr.cluster)
    with cl.read() as conn:
        row = conn.execute("SELECT id, partitions FROM topics WHERE name = ?",
                           (addr.name,)).fetchone() if _has_topics(conn) else None
    if row is None:
        raise JetlinkError(f"{addr}: no such topic")
    tid, parts = row
    return read_store_topic(spark, str(datadir.cluster_path(addr.cluster)), addr.name, tid,
                            [partition_range(tid, p) for p in range(parts)])


def _has_topics(conn: Any) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'topics'"
                        ).fetchone() is not None


# --------------------------------------------------------------------------------------------
# Parquet on any Hadoop filesystem
# --------------------------------------------------------------------------------------------
def _hadoop_path(spark: Any, path: str) -> tuple[Any, Any]:
    jvm = spark.sparkContext._jvm
    p = jvm.org.apache.hadoop.fs.Path(path)
    fs = p.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    return fs, p


def read_meta(spark: Any, path: str) -> dict[str, Any] | None:
    """The dataset's ``_jetlink.json`` (None when it has none)."""
    fs, base = _hadoop_path(spark, path)
    jvm = spark.sparkContext._jvm
    p = jvm.org.apache.hadoop.fs.Path(base, lake.META_FILE)
    if not fs.exists(p):
        return None
    stream = fs.open(p)
    try:
        data = jvm.org.apache.commons.io.IOUtils.toByteArray(stream)
    finally:
        stream.close()
    return lake.parse_meta(bytes(data), str(p))


def write_meta(spark: Any, path: str, doc: dict[str, Any]) -> None:
    """``doc`` as the dataset's ``_jetlink.json``, written beside it first and renamed into
    place (core/lake.py ``write_meta``'s rule: a job killed while writing never leaves a
    torn file; Hadoop's rename does not replace, so an old one is deleted just before)."""
    fs, base = _hadoop_path(spark, path)
    Path = spark.sparkContext._jvm.org.apache.hadoop.fs.Path
    final, tmp = Path(base, lake.META_FILE), Path(base, lake.META_FILE + ".tmp")
    out = fs.create(tmp, True)
    try:
        out.write(lake.meta_bytes(doc))
    finally:
        out.close()
    if fs.exists(final):
        fs.delete(final, False)
    if not fs.rename(tmp, final):
        raise OSError(f"could not rename {tmp} to {final}")


def _data_files(spark: Any, path: str) -> Iterator[Any]:
    """The Hadoop FileStatus of each data file under ``path`` (a name not starting with
    ``_`` or ``.``, as Spark's readers skip those), at any depth (partitioned datasets)."""
    fs, p = _hadoop_path(spark, path)
    if not fs.exists(p):
        return
    files = fs.listFiles(p, True)
    while files.hasNext():
        status = files.next()
        if not status.getPath().getName().startswith(("_", ".")):
            yield status


def _has_data_files(spark: Any, path: str) -> bool:
    return next(_data_files(spark, path), None) is not None


def _empty_data_file(spark: Any, path: str) -> str | None:
    """The name of a data file of 0 bytes under ``path`` (Spark skips such a file as no
    rows: a dataset of one would read as 0 messages), or None."""
    return next((str(f.getPath().getName()) for f in _data_files(spark, path)
                 if f.getLen() == 0), None)


def path_exists(spark: Any, path: str) -> bool:
    fs, p = _hadoop_path(spark, path)
    return bool(fs.exists(p))


# A dataset's path read as written: Spark's readers take a path holding * ? [ ] { } as a
# Hadoop glob (star* read star1 and star* together, br[1] read br1) and list its directory
# to match it (a sibling named col:on failed the read); DataSource's __globPaths__ option
# (its GLOB_PATHS_KEY) turns that off, as stream export / import read a path.
LITERAL_PATH = {"__globPaths__": "false"}


def read_parquet(spark: Any, path: str, convert: dict[str, Any] | None = None) -> Any:
    """The dataset at ``path`` read with the lake schema; ``convert``: columns read with
    their own Spark types (:func:`read_lake`) and converted to the lake's."""
    if not convert:
        return spark.read.options(**LITERAL_PATH).schema(lake.spark_ddl()).parquet(path)
    from pyspark.sql import functions as F

    ddl = ", ".join(f"`{n}` {convert[n].simpleString()}" if n in convert else part
                    for n, part in zip(lake.NAMES, lake.spark_ddl().split(", "), strict=True))
    df = spark.read.options(**LITERAL_PATH).schema(ddl).parquet(path)

    def lake_col(name: str) -> Any:
        kind = convert.get(name)
        if kind is None:
            return F.col(name)
        want = _INTEGER_COLUMNS[name]
        if kind.typeName() in _TIMESTAMPS:  # microseconds (the session's zone is UTC)
            value = F.unix_micros(F.col(name).cast("timestamp")) * 1000
        else:
            value = F.col(name)
        return value.cast(want).alias(name)

    return df.select(*(lake_col(n) for n in lake.NAMES))


def dataset_rows(df: Any, path: str) -> int:
    """The rows the dataset ``df`` (read from ``path``) holds, what a job reads: from the
    files' footers on the local filesystem (no Spark job), else Spark's count (of the
    footers too, for Parquet). Not its ``_jetlink.json`` count, which another writer may
    have left behind."""
    try:
        here = lake.local_path(path)
    except lake.LakeError:
        here = None
    if here is not None:
        import os

        if os.path.isdir(here):
            return lake.local_dataset_rows(here)
    return int(df.count())


# The lake columns a dataset must have: every one, as `stream import` requires them
# (core/lake.py NAMES; a column may be all null: a stream's key and partition, a topic's
# subject, but a dataset without one is not of the lake schema)
LAKE_REQUIRED = lake.NAMES


class LakeColumnsError(Exception):
    """The Parquet files of a dataset are not rows of the lake schema (the message says why,
    after the dataset's address)."""


def read_lake(spark: Any, path: str) -> Any:
    """The rows of the dataset at ``path`` in the lake schema, its columns checked first
    (raises LakeColumnsError: no Parquet data files at all, columns missing (read with the
    lake schema they would be nulls: a job would write empty messages), a data file of 0
    bytes among them (a cut copy, never read as a part holding no rows), a number column
    of another type). Read as ``stream import`` reads them where the lake has another type:
    ``ts`` a timestamp of any unit as its nanoseconds since the epoch (a zone-less one as
    UTC; nanosecond timestamps read as their count: the session's
    ``spark.sql.legacy.parquet.nanosAsLong``), an unsigned 64-bit number (Spark's
    ``decimal(20,0)``) as the integer it holds."""
    empty = _empty_data_file(spark, path)
    if empty is not None:
        raise LakeColumnsError(
            f"holds an empty file {empty} (0 bytes): no Parquet file (a copy cut short?); "
            "restore it, or remove it if the dataset is whole without it")
    try:
        schema = spark.read.options(**LITERAL_PATH).parquet(path).schema
    except Exception as exc:  # noqa: BLE001 - Spark's AnalysisException: schema unreadable
        if not _has_data_files(spark, path):
            raise LakeColumnsError("holds no Parquet data files") from None
        fs, p = _hadoop_path(spark, path)
        if fs.getFileStatus(p).isFile():
            # one file that is no Parquet (empty, text): never read as 0 rows
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            raise LakeColumnsError(f"is not a Parquet dataset: Spark cannot read its schema "
                                   f"({first})") from None
        return read_parquet(spark, path)  # (damaged files: the job's read says what it found)
    found = {f.name: f.dataType for f in schema.fields}
    missing = [n for n in LAKE_REQUIRED if n not in found]
    if missing:
        raise LakeColumnsError(
            f"is not a dataset of the lake schema: no {', '.join(missing)} column"
            f"{'s' if len(missing) > 1 else ''} (jetlink stream export writes one)")
    # the lake schema's integer columns (core/lake.py COLUMNS): another type fails inside
    # Spark's reader (a SchemaColumnConvertNotSupportedException), or worse, a timestamp's
    # microseconds read as a number of nanoseconds
    convert = {}
    for name, kind in found.items():
        want = _INTEGER_COLUMNS.get(name)
        if want is None or kind.typeName() in _INTEGRAL:
            continue
        if not (_unsigned(kind) or (name == "ts" and kind.typeName() in _TIMESTAMPS)):
            raise LakeColumnsError(
                f"is not a dataset of the lake schema: column {name} is "
                f"{kind.simpleString()}, not an integer ({name} {want}"
                f"{' or a timestamp' if name == 'ts' else ''})")
        convert[name] = kind
    return read_parquet(spark, path, convert)


def _unsigned(kind: Any) -> bool:
    """Spark's type of a Parquet unsigned 64-bit integer column: decimal(20,0)."""
    return kind.typeName() == "decimal" and kind.scale == 0 and kind.precision == 20


_TIMESTAMPS = ("timestamp", "timestamp_ntz")


_INTEGRAL = ("long", "integer", "short", "byte")
# the lake's integer columns and their types in Spark's words (int64: bigint, int32: int)
_INTEGER_COLUMNS = {name: {"int64": "bigint", "int32": "int"}[kind]
                    for name, kind, _null in lake.COLUMNS if kind.startswith("int")}


# Parquet writer settings of a job's output: the headers column without min/max and size
# statistics and without a dictionary (parquet-java's per-column ``#`` keys). No reader
# filters on header blocks, and a source job writes a different Nats-Stream-Source line on
# every row: comparing and copying those ~90-byte values for its page and chunk statistics
# took about a tenth of the job's time, and the writer's dictionary of them (filled until
# it outgrows its page, then dropped for plain pages, in every row group) about another
# tenth (docs/benchmarks.md "Spark"). Every other column keeps its statistics and
# dictionary (a subject repeats: its dictionary pays).
WRITE_OPTIONS = {"parquet.column.statistics.enabled#headers": "false",
                 "parquet.size.statistics.enabled#headers": "false",
                 "parquet.enable.dictionary#headers": "false"}


def write_parquet(df: Any, path: str, meta: dict[str, Any] | None) -> None:
    """Write rows (sorted by partition, seq) as a Parquet dataset (:data:`WRITE_OPTIONS`);
    refuses an existing path other than an empty directory (removed first: Spark's writer
    refuses any path there)."""
    fs, p = _hadoop_path(df.sparkSession, path)
    if fs.exists(p) and fs.getFileStatus(p).isDirectory() and not fs.listStatus(p):
        fs.delete(p, False)
    df.write.mode("errorifexists").options(**WRITE_OPTIONS).parquet(path)
    if meta is not None:
        write_meta(df.sparkSession, path, meta)


def iter_arrow(df: Any, rows: int = 50_000, *, total: int | None = None) -> Iterator[Any]:
    """The rows of ``df`` in order as pyarrow RecordBatches of the lake schema (on the
    driver: at once through Arrow when ``total`` is known and at most DRIVER_READ_MAX, else
    one partition at a time)."""
    import pyarrow as pa

    schema = lake.arrow_schema()
    if total is not None and total <= DRIVER_READ_MAX:
        table = df.select(*lake.NAMES).toArrow()
        try:
            table = table.cast(schema)
        except (ValueError, pa.ArrowInvalid) as exc:  # a null seq, a column of another type
            raise lake.LakeError(f"rows not of the lake schema: {exc}") from None
        yield from table.to_batches(max_chunksize=rows)
        return
    buf: dict[str, list[Any]] = {n: [] for n in lake.NAMES}
    count = 0
    for r in df.toLocalIterator(prefetchPartitions=True):
        for n in lake.NAMES:
            v = r[n]
            buf[n].append(bytes(v) if isinstance(v, (bytearray, memoryview)) else v)
        count += 1
        if count >= rows:
            yield pa.RecordBatch.from_pydict(buf, schema=schema)
            buf = {n: [] for n in lake.NAMES}
            count = 0
    if count:
        yield pa.RecordBatch.from_pydict(buf, schema=schema)
