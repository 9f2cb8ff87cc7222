"""The log of a Kafka topic: produce (placement by Kafka's default partitioner or sticky,
``max.message.bytes``, keyless records on compacted topics, timestamps), fetch, the
partitions' offsets, ListOffsets by time, and iterating a partition's records.

Its functions take the topics' state (:class:`~jetlink.core.kafka.topic_store.TopicStore`)
as their first argument; the ``Kafka`` facade (topics.py) binds them as its methods.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .errors import KafkaError
from .partitioner import murmur2
from .topic_admin import describe_topic
from .topic_configs import LONG_MAX, Policy
from .topic_records import (
    MAX_OFFSET,
    OFFSET_BITS,
    PARTITION_BITS,
    as_bytes,
    decode_headers,
    encode_headers,
    first_at_or_after,
    norm_headers,
    partition_range,
    record_size,
    varint_size,
)
from .topic_retention import apply_policies, maintain
from .topic_types import PartitionInfo, Record, get_topic, unknown_partition

if TYPE_CHECKING:  # pragma: no cover
    from .topic_store import TopicStore

__all__ = ["fetch", "iter_records", "offset_for_timestamp", "offsets", "produce"]


def produce(kafka: TopicStore, topic: str, records: Iterable[Any], *, partition: int | None = None,
            headers: Any = (), timestamp_ms: int | None = None) -> list[tuple[int, int]]:
    """Append ``records`` to ``topic`` in ONE transaction; ``(partition, offset)`` per
    record, in order. All or nothing: the first refused record refuses the call.

    A record is ``(key, value)``, ``(key, value, headers)``, ``(key, value, headers,
    timestamp_ms)`` or a mapping with ``key``, ``value``, ``headers``, ``partition``,
    ``timestamp``; key / value are bytes, str (UTF-8) or None. ``partition``,
    ``headers`` and ``timestamp_ms`` are the defaults of the records that give none.

    Placement: an explicit partition; else Kafka's default partitioner for a keyed
    record (murmur2 of the key, positive, mod partitions); else sticky: every unkeyed
    record of the call goes to one partition, the one with the lowest log end offset
    (ties: the lowest number), so successive calls rotate over the partitions.

    Refusals: a mirror topic (INVALID_REQUEST ``Cannot append records to read-only
    mirror topic 'T'``), an unknown partition, a record over ``max.message.bytes``
    (MESSAGE_TOO_LARGE, size as :func:`record_size`), a keyless record on a compacted
    topic (INVALID_RECORD), a CreateTime timestamp outside
    ``message.timestamp.before/after.max.ms`` (INVALID_TIMESTAMP). LogAppendTime topics
    stamp every record with the clock's time.
    """
    kafka.authorize("Produce", topic=topic)
    now = kafka.now_ms()
    default_headers = norm_headers(headers)
    with kafka._schema.write() as conn:
        t = get_topic(conn, topic)
        if t.mirror_link is not None:
            raise KafkaError("INVALID_REQUEST",
                             f"Cannot append records to read-only mirror topic '{topic}'")
        apply_policies(conn, t, now)
        pol = t.policy
        n = t.partitions
        batch = _Batch(conn, t)
        default_hdr_json = encode_headers(default_headers)
        default_ts = now if (pol.log_append_time or timestamp_ms is None) else int(timestamp_ms)
        if partition is not None and not (isinstance(partition, int) and 0 <= partition < n):
            raise KafkaError("UNKNOWN_TOPIC_OR_PARTITION",
                             f"Invalid partition given with record: {partition} is not in "
                             f"the range [0...{n}).", field="partition")
        if not pol.log_append_time and timestamp_ms is not None:
            _check_ts(pol, now, default_ts, batch.ends[partition or 0])
        if not isinstance(records, list):
            records = list(records)
        simple = partition is None and not default_headers and not pol.compact
        if not (simple and _place_pairs(batch, records, default_ts, pol.max_message_bytes)):
            _place_records(batch, topic, records, partition, default_headers,
                           default_hdr_json, default_ts, pol, now)
        _append_rows(conn, t.rowid, batch)
        return batch.out


class _Batch:
    """What one produce call appends, gathered before anything is written: the partitions'
    log end offsets (``starts`` when the call began, ``ends`` as records are placed) and the
    bytes added, the sticky partition of its unkeyed records, the rows by shape, and the
    ``(partition, offset)`` of each record."""

    __slots__ = ("base", "ends", "hash_cache", "kv_rows", "n", "out", "rows", "sizes",
                 "starts", "sticky", "v_rows")

    def __init__(self, conn: Any, t: Any) -> None:
        n = self.n = t.partitions
        self.ends = [0] * n
        self.sizes = [0] * n
        for p, end in conn.execute(
                "SELECT partition, log_end FROM partitions WHERE topic = ?", (t.rowid,)):
            self.ends[p] = end
        self.starts = list(self.ends)
        self.sticky = min(range(n), key=lambda i: (self.ends[i], i))
        self.base = t.rowid << PARTITION_BITS
        self.hash_cache: dict[bytes, int] = {}
        # Rows by shape: sqlite3 binds int, str and bytearray on its fast path but looks
        # for adapters on bytes and None, so the common shapes go as bytearray through
        # statements that leave the NULL columns out (3x faster on a million records).
        self.kv_rows: list[tuple[Any, ...]] = []
        self.v_rows: list[tuple[Any, ...]] = []
        self.rows: list[tuple[Any, ...]] = []
        self.out: list[tuple[int, int]] = []

    def forget_pairs(self) -> None:
        """Undo what :func:`_place_pairs` placed (it left the call to the general loop)."""
        self.out.clear()
        self.kv_rows.clear()
        self.v_rows.clear()
        self.ends[:] = self.starts
        self.sizes[:] = [0] * self.n


def _place_pairs(batch: _Batch, records: list[Any], ts: int, max_bytes: int) -> bool:
    """The bulk path for (bytes, bytes) pairs, the benchmarks' shape: place every record
    (partition, offset, size, row) and say True; anything else (or a record near
    ``max.message.bytes``) undoes what it placed and says False, sending the whole call to
    :func:`_place_records`."""
    limit = max_bytes - 85
    n, sticky, base = batch.n, batch.sticky, batch.base
    ends, sizes, hash_cache = batch.ends, batch.sizes, batch.hash_cache
    add_kv, add_v, add_out = batch.kv_rows.append, batch.v_rows.append, batch.out.append
    ba = bytearray
    get: Any = hash_cache.get  # p stays an int for mypy; a miss is None
    for rec in records:
        if type(rec) is not tuple or len(rec) != 2:
            break
        key, value = rec
        if type(value) is not bytes:
            break
        vlen = len(value)
        if key is None:
            if vlen > limit:
                break
            p = sticky
            off = ends[p]
            ends[p] = off + 1
            body = (6 if vlen < 64 else 5 + varint_size(vlen)) + vlen
            sizes[p] += 62 + body if body < 64 else 61 + body + varint_size(body)
            add_v((((base | p) << OFFSET_BITS) | off, ts, ba(value)))
            add_out((p, off))
            continue
        if type(key) is not bytes:
            break
        klen = len(key)
        if klen + vlen > limit:
            break
        p = get(key)
        if p is None:
            p = hash_cache[key] = (murmur2(key) & 0x7FFFFFFF) % n
        off = ends[p]
        ends[p] = off + 1
        body = (6 if klen < 64 else 5 + varint_size(klen)) + klen \
            + (0 if vlen < 64 else varint_size(vlen) - 1) + vlen
        sizes[p] += 62 + body if body < 64 else 61 + body + varint_size(body)
        add_kv((((base | p) << OFFSET_BITS) | off, ts, ba(key), ba(value)))
        add_out((p, off))
    else:
        return True
    batch.forget_pairs()
    return False


def _place_records(batch: _Batch, topic: str, records: list[Any], partition: int | None,
                   default_headers: list[Any], default_hdr_json: str | None, default_ts: int,
                   pol: Policy, now: int) -> None:
    """The general path: place every record of any shape (its own partition, headers and
    timestamp), refusing the call at the first record over ``max.message.bytes``, keyless on
    a compacted topic, or with a timestamp out of range (:func:`produce`)."""
    n, sticky, base = batch.n, batch.sticky, batch.base
    ends, sizes, hash_cache = batch.ends, batch.sizes, batch.hash_cache
    add_kv, add_v = batch.kv_rows.append, batch.v_rows.append
    add_row, add_out = batch.rows.append, batch.out.append
    ba = bytearray
    max_bytes = pol.max_message_bytes
    compact = pol.compact
    for rec in records:
        own_ts = False
        hdrs = default_headers
        hdr_json = default_hdr_json
        ts = default_ts
        p = partition
        if type(rec) is tuple and len(rec) == 2:
            key, value = rec
        else:
            key, value, p, hdrs, hdr_json, ts, own_ts = _unpack(
                rec, partition, default_headers, default_hdr_json, default_ts, pol, n)
        if key is not None and type(key) is not bytes:
            key = as_bytes(key, "key")
        if value is not None and type(value) is not bytes:
            value = as_bytes(value, "value")
        if p is None:
            if key is None:
                p = sticky
            else:
                p = hash_cache.get(key)
                if p is None:
                    p = hash_cache[key] = (murmur2(key) & 0x7FFFFFFF) % n
        if own_ts:
            _check_ts(pol, now, ts, ends[p])
        size = record_size(key, value, hdrs)
        if size > max_bytes:
            raise KafkaError(
                "MESSAGE_TOO_LARGE",
                f"The record batch size in the append to {topic}-{p} is {size} "
                f"bytes which exceeds the maximum configured value of {max_bytes}.")
        sizes[p] += size
        off = ends[p]
        ends[p] = off + 1
        rid = ((base | p) << OFFSET_BITS) | off
        if hdr_json is None and value is not None:
            if key is not None:
                add_kv((rid, ts, ba(key), ba(value)))
            elif compact:
                raise KafkaError(
                    "INVALID_RECORD",
                    f"Compacted topic cannot accept message without key in topic "
                    f"partition {topic}-{p}.")
            else:
                add_v((rid, ts, ba(value)))
        else:
            if compact and key is None:
                raise KafkaError(
                    "INVALID_RECORD",
                    f"Compacted topic cannot accept message without key in topic "
                    f"partition {topic}-{p}.")
            add_row((rid, ts, key, value, hdr_json))
        add_out((p, off))


def _append_rows(conn: Any, rowid: int, batch: _Batch) -> None:
    """Write what the call placed: the records (in rowid order), then the partitions' log
    end offsets and sizes."""
    ends, starts, sizes = batch.ends, batch.starts, batch.sizes
    if any(e > MAX_OFFSET for e in ends):
        raise KafkaError("KAFKA_STORAGE_ERROR", "Partition offsets are limited to 2^40.")
    kv_rows, rows = batch.kv_rows, batch.rows
    if batch.n > 1:  # in rowid order: the B-tree then only appends to each partition's range
        kv_rows.sort()
        rows.sort()
    if kv_rows:
        conn.executemany(
            "INSERT INTO records(id, ts, key, value) VALUES (?, ?, ?, ?)", kv_rows)
    if batch.v_rows:
        conn.executemany("INSERT INTO records(id, ts, value) VALUES (?, ?, ?)", batch.v_rows)
    if rows:
        conn.executemany(
            "INSERT INTO records(id, ts, key, value, headers) VALUES (?, ?, ?, ?, ?)",
            rows)
    conn.executemany(
        "UPDATE partitions SET log_end = ?, bytes = bytes + ? "
        "WHERE topic = ? AND partition = ?",
        [(ends[p], sizes[p], rowid, p) for p in range(batch.n) if ends[p] != starts[p]])


def _unpack(rec: Any, partition: int | None, default_headers: list[Any],
            default_hdr_json: str | None, default_ts: int, pol: Policy,
            n: int) -> tuple[Any, ...]:
    hdrs = default_headers
    hdr_json = default_hdr_json
    ts = default_ts
    p = partition
    given_ts = None
    if isinstance(rec, Mapping):
        key, value = rec.get("key"), rec.get("value")
        if rec.get("headers") is not None:
            hdrs = norm_headers(rec["headers"])
            hdr_json = encode_headers(hdrs)
        if rec.get("partition") is not None:
            p = rec["partition"]
        given_ts = rec.get("timestamp")
    elif isinstance(rec, Record):
        key, value, hdrs, given_ts = rec.key, rec.value, rec.headers, rec.timestamp
        hdr_json = encode_headers(hdrs)
    else:
        rec = tuple(rec)
        if not 2 <= len(rec) <= 4:
            raise TypeError("a record is (key, value[, headers[, timestamp_ms]])")
        key, value = rec[0], rec[1]
        if len(rec) > 2 and rec[2] is not None:
            hdrs = norm_headers(rec[2])
            hdr_json = encode_headers(hdrs)
        if len(rec) > 3:
            given_ts = rec[3]
    if p is not None and not (isinstance(p, int) and 0 <= p < n):
        raise KafkaError("UNKNOWN_TOPIC_OR_PARTITION",
                         f"Invalid partition given with record: {p} is not in the range "
                         f"[0...{n}).", field="partition")
    own_ts = False
    if given_ts is not None and not pol.log_append_time:
        own_ts = True
        ts = int(given_ts)
    return key, value, p, hdrs, hdr_json, ts, own_ts


def _check_ts(pol: Policy, now: int, ts: int, off: int) -> None:
    low = now - pol.ts_before_ms
    high = now + pol.ts_after_ms
    if ts < low or ts > high:
        raise KafkaError(
            "INVALID_TIMESTAMP",
            f"Timestamp {ts} of message with offset {off} is out of range. The timestamp "
            f"should be within [{max(low, -LONG_MAX - 1)}, {min(high, LONG_MAX)}]")



def fetch(kafka: TopicStore, topic: str, partition: int, offset: int,
          max_records: int = 500) -> list[Record]:
    """Up to ``max_records`` records of ``partition`` from ``offset`` on (a compacted
    partition skips its holes). ``offset == log_end``: none. Outside
    ``[log_start, log_end]``: OFFSET_OUT_OF_RANGE."""
    kafka.authorize("Fetch", topic=topic)
    maintain(kafka, topic)
    with kafka._schema.read() as conn:
        t = get_topic(conn, topic)
        if not 0 <= partition < t.partitions:
            raise unknown_partition(topic, partition, t.partitions)
        start, end = conn.execute(
            "SELECT log_start, log_end FROM partitions WHERE topic = ? AND partition = ?",
            (t.rowid, partition)).fetchone()
        if offset < start or offset > end:
            raise KafkaError(
                "OFFSET_OUT_OF_RANGE",
                f"Fetch position offset {offset} is out of range for partition "
                f"{topic}-{partition}: log start offset {start}, log end offset {end}.")
        lo, hi = partition_range(t.rowid, partition)
        mask = MAX_OFFSET
        return [
            Record(partition, rid & mask, ts, key, value, decode_headers(hdrs))
            for rid, ts, key, value, hdrs in conn.execute(
                "SELECT id, ts, key, value, headers FROM records WHERE id >= ? AND id < ? "
                "ORDER BY id LIMIT ?", (lo + offset, hi, max(0, int(max_records))))
        ]


def offsets(kafka: TopicStore, topic: str) -> list[PartitionInfo]:
    """Log start / end offsets and sizes of every partition (retention applied first)."""
    return describe_topic(kafka, topic).partitions


def offset_for_timestamp(kafka: TopicStore, topic: str, partition: int, timestamp_ms: int) -> int:
    """ListOffsets by time: the first offset whose record timestamp is >= ``timestamp_ms``;
    the log end offset when there is none (topic_records.py ``first_at_or_after``)."""
    maintain(kafka, topic)
    with kafka._schema.read() as conn:
        t = get_topic(conn, topic)
        if not 0 <= partition < t.partitions:
            raise unknown_partition(topic, partition, t.partitions)
        end = conn.execute("SELECT log_end FROM partitions WHERE topic = ? AND partition = ?",
                           (t.rowid, partition)).fetchone()[0]
        return first_at_or_after(conn, t.rowid, partition, timestamp_ms, end)



def iter_records(kafka: TopicStore, topic: str, partition: int, start: int = 0,
                 chunk: int = 1000) -> Iterator[Record]:
    """Every record of the partition from ``start`` (clamped to the log start) on, each
    chunk its own read snapshot."""
    info = describe_topic(kafka, topic)
    off = max(start, info.partitions[partition].log_start)
    while True:
        batch = fetch(kafka, topic, partition, off, chunk)
        if not batch:
            return
        yield from batch
        off = batch[-1].offset + 1
