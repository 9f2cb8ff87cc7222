"""Leader epochs of a partition's log, as far as a log can diverge in the engine: a log cut
back (truncate-and-restore, or a mirror following its source's cut) starts a new epoch at the
offset it was cut to, as a new leader's epoch starts at its log end in Kafka's
LeaderEpochFileCache. A mirror partition keeps the source's epoch of its last fetch; before
copying on, it asks where that epoch ends in the source's history (Kafka's
OffsetsForLeaderEpoch, which a follower asks before fetching after a leader change) and cuts
its own log back there when it holds more: the records past that offset are not the
source's any more, and the copy continues from it. So every mirror of a topic, not only the
one failed back, follows a cut of its source, and a mirror of a mirror follows in turn.

Table ``partition_epochs`` (schema component ``kafka``): ``(topic rowid, partition, epoch,
start offset)``; a partition with no row is in epoch 0 from its first offset. Only the
engine's own cuts add rows; retention and compaction never do (they remove no offset a
mirror could hold differently).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .topic_records import partition_range, record_key, records_bytes

__all__ = ["current_epoch", "epoch_end", "history", "truncate_partition"]

#: one partition's epochs, ``[(epoch, start offset)]`` (none: never cut back, epoch 0)
Epochs = Sequence[tuple[int, int]]


def history(conn: Any, topic_rowid: int, db: str = "main") -> dict[int, list[tuple[int, int]]]:
    """Each partition's :data:`Epochs` of the topic, one query (a partition never cut back
    is absent); ``db``: the schema holding it (a source attached to a destination's
    connection)."""
    out: dict[int, list[tuple[int, int]]] = {}
    for p, epoch, start in conn.execute(f"SELECT partition, epoch, start_offset FROM "
                                        f"{db}.partition_epochs WHERE topic = ?",
                                        (topic_rowid,)):
        out.setdefault(int(p), []).append((int(epoch), int(start)))
    return out


def current_epoch(epochs: Epochs) -> int:
    """A partition's epoch now (0 when its log was never cut back)."""
    return max((e for e, _start in epochs), default=0)


def epoch_end(epochs: Epochs, epoch: int) -> int | None:
    """Where ``epoch`` ends in a partition's history: the start offset of the first later
    epoch (OffsetsForLeaderEpoch's end offset), None while ``epoch`` is the current one."""
    return min((start for e, start in epochs if e > epoch), default=None)


def truncate_partition(conn: Any, topic_rowid: int, partition: int, to: int) -> tuple[int, int]:
    """Cut the partition's log (schema ``main``) back to offset ``to``: its records from
    ``to`` on are removed, its log end becomes ``to`` (its log start too when past it), and
    when that removed offsets a new epoch starts at ``to`` (the later epochs' entries go:
    those offsets are no more). Inside the caller's write transaction. Returns (records
    removed, their bytes)."""
    base, hi = partition_range(topic_rowid, partition)
    lo = record_key(topic_rowid, partition, to)
    count = conn.execute("SELECT count(*) FROM main.records WHERE id >= ? AND id < ?",
                         (lo, hi)).fetchone()[0]
    size = records_bytes(conn, lo, hi)
    row = conn.execute("SELECT log_start, log_end, cleaned, clean_bytes FROM main.partitions "
                       "WHERE topic = ? AND partition = ?", (topic_rowid, partition)).fetchone()
    start, end, cleaned, clean_bytes = row if row is not None else (0, to, 0, 0)
    conn.execute("DELETE FROM main.records WHERE id >= ? AND id < ?", (lo, hi))
    # the compaction's progress below the cut stays (what it cleaned there is still clean):
    # marked dirty, the whole log would be cleaned at once, ahead of its source's
    if cleaned > to:
        cleaned = to
        clean_bytes = records_bytes(conn, base + min(start, to), lo)
    conn.execute("UPDATE main.partitions SET log_end = ?, log_start = min(log_start, ?), "
                 "bytes = max(bytes - ?, 0), cleaned = ?, clean_bytes = ? "
                 "WHERE topic = ? AND partition = ?",
                 (to, to, size, cleaned, clean_bytes, topic_rowid, partition))
    if end > to:
        epoch = current_epoch(history(conn, topic_rowid).get(partition, ())) + 1
        conn.execute("DELETE FROM main.partition_epochs WHERE topic = ? AND partition = ? AND "
                     "start_offset > ?", (topic_rowid, partition, to))
        conn.execute("INSERT INTO main.partition_epochs(topic, partition, epoch, start_offset) "
                     "VALUES (?, ?, ?, ?)", (topic_rowid, partition, epoch, to))
    return int(count), int(size)
