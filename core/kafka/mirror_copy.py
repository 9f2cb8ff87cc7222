"""What the link step of mirror topics (:mod:`.mirror_step`) moves from the source cluster,
each in one destination transaction:

- config sync (``topic.config.sync.ms``): the synced configurations and the partition count
  of each mirror follow its source topic;
- the record copy: per partition, records at offsets [mirror log end, source log end) copied
  with ``INSERT ... SELECT`` from the source database attached to the destination
  connection (same offsets, timestamps, keys, values, headers); the mirror's log start
  follows the source's (retention); a mirror that fell behind the source's log start jumps
  to it; a partition that never fetched starts at ``mirror.start.offset.spec``
  (:func:`initial_offset`, also the bulk copy's rule);
- consumer offset sync (``consumer.offset.sync.ms``, when enabled): the committed offsets of
  the source's groups the link's group filters select, for ACTIVE mirrors, for groups not
  live on the destination, unchanged offsets skipped; each written (group, topic) recorded
  as synced by the link (what clamping looks at). :func:`offsets_to_sync` is the one
  definition of which offsets: the sync writes them, promote's check reads them.

Its functions take the mirrors' state (:class:`~jetlink.core.kafka.mirror_state.MirrorState`)
as their first argument; the ``Mirrors`` facade binds ``sync_offsets`` as its method.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .authz import groups_denied
from .epochs import Epochs, current_epoch, epoch_end, history, truncate_partition
from .errors import KafkaError
from .links import parse_start_offset_spec
from .mirror_model import (
    ACTIVE,
    ATTACHED,
    SYNCED_CONFIGS,
    now_ms,
)
from .topic_records import partition_range, record_key, records_bytes

if TYPE_CHECKING:  # pragma: no cover
    from .mirror_state import MirrorState

__all__ = [
    "attached",
    "copy_records",
    "denied_groups",
    "initial_offset",
    "offset_sync_overwrites",
    "offsets_to_sync",
    "pending_offsets",
    "sync_configs",
    "sync_offsets",
    "write_offsets",
]


def sync_configs(m: MirrorState, li: Any, src: Any, rows: Sequence[tuple]) -> int:
    """Synced configs and partition count of each mirror follow its source topic."""
    n = 0
    for r in rows:
        try:
            s = src.describe_topic(r[2])
            mine = m.kafka.describe_topic(r[0])
        except KafkaError:
            continue
        want = {k: v for k, v in s.configs.items() if k in SYNCED_CONFIGS}
        have = {k: v for k, v in mine.configs.items() if k in SYNCED_CONFIGS}
        drop = [k for k in have if k not in want]
        parts = len(s.partitions) if len(s.partitions) > len(mine.partitions) else None
        if want != have or parts:
            m.kafka.alter_topic(r[0], configs=want, delete=drop, partitions=parts,
                                internal=True)
            if parts:
                with m._schema.write() as conn:
                    conn.executemany(
                        "INSERT OR IGNORE INTO mirror_partitions(topic, partition) "
                        "VALUES (?, ?)", [(r[0], p) for p in range(parts)])
            n += 1
    return n


def denied_groups(m: MirrorState, li: Any, source: str) -> list[str]:
    """The groups with offsets of source topic ``source`` the link's group filters select
    that its principal may not DESCRIBE in a source that enforces ACLs
    (:func:`.authz.groups_denied`): their offsets are not synced."""
    from .links import filter_selects, group_filters
    from .topics import Kafka

    if li.principal is None or not m.datadir.has_cluster(li.source_cluster):
        return []
    src = m.datadir.open(li.source_cluster)
    filters = group_filters(li.configs)
    groups = [g for g in Kafka(src, m.clock).committed_all(source)
              if filter_selects(filters, g)]
    return groups_denied(src, li.principal, groups) if groups else []


def offsets_to_sync(m: MirrorState, li: Any, mirror: str, source: str) -> tuple[str, list[Any]]:
    """``FROM ... WHERE ...`` selecting, in the source database attached as ``kl_src``,
    the committed offsets the offset sync writes for ``mirror`` (from ``source``): groups
    the link's group filters select, that the link may DESCRIBE (:func:`denied_groups`),
    not live on this cluster, whose offset here is missing or different, on a partition the
    mirror has (one the source added is the mirror's once config sync adds it: a commit
    to a partition a topic lacks is UNKNOWN_TOPIC_OR_PARTITION). The one
    definition of the rule: the sync writes these rows and promote's "pending offset sync"
    check reads them."""
    from .links import filters_sql, group_filters
    from .topic_groups import LIVE_MEMBER_SQL

    cond, cond_args = filters_sql(group_filters(li.configs), "s.grp")
    denied = denied_groups(m, li, source)
    skip = f" AND s.grp NOT IN ({', '.join('?' * len(denied))})" if denied else ""
    sql = (f"FROM {ATTACHED}.group_offsets s LEFT JOIN main.group_offsets d "
           "ON d.grp = s.grp AND d.topic = ? AND d.partition = s.partition "
           f"WHERE s.topic = ? AND ({cond}){skip} AND (d.committed IS NULL OR "
           "d.committed != s.committed) AND s.grp NOT IN (SELECT grp FROM "
           f"main.group_members WHERE {LIVE_MEMBER_SQL}) AND s.partition IN (SELECT "
           "partition FROM main.mirror_partitions WHERE topic = ?)")
    return sql, [mirror, source, *cond_args, *denied, now_ms(m.clock), mirror]


def pending_offsets(m: MirrorState, li: Any, topics: dict[str, str]
                    ) -> list[tuple[str, str, int, int]]:
    """(group, mirror topic, partition, source offset) the offset sync would write now
    for ``topics`` (mirror -> source topic)."""
    if not topics or not li.config.consumer_offset_sync_enable:
        return []
    out: list[tuple[str, str, int, int]] = []
    with attached(m, li.source_cluster):
        with m._schema.read() as conn:
            for mirror, source in topics.items():
                picked, args = offsets_to_sync(m, li, mirror, source)
                out += [(g, mirror, p, off) for g, p, off in conn.execute(
                    f"SELECT s.grp, s.partition, s.committed {picked}", args)]
    return out


def offset_sync_overwrites(m: MirrorState, group: str, topics: Any) -> dict[str, list[str]]:
    """link -> the ACTIVE mirror topics among ``topics`` whose committed offsets of
    ``group`` the link's consumer offset sync sets to the source's (enabled, and its group
    filters select the group): an offset set on this cluster for them lasts until that
    sync's next run (while the group has no live member here, :func:`offsets_to_sync`)."""
    wanted = set(topics)
    out: dict[str, list[str]] = {}
    selects: dict[str, bool] = {}
    for row in m._rows():
        topic, link, status = row[0], row[1], row[3]
        if topic not in wanted or status != ACTIVE:
            continue
        if link not in selects:
            selects[link] = m.links.get(link, with_topics=False).config.selects_group(group)
        if selects[link]:
            out.setdefault(link, []).append(topic)
    return out


def sync_offsets(m: MirrorState, link: str) -> int:
    """Run the link's consumer offset sync now, whatever its schedule, for its ACTIVE
    mirrors; the offsets changed."""
    li = m.links.get(link)
    m.refresh(link)
    return write_offsets(m, li, {r[0]: r[2] for r in m._rows(link) if r[3] == ACTIVE})


def write_offsets(m: MirrorState, li: Any, topics: dict[str, str]) -> int:
    """Write what :func:`pending_offsets` lists (one destination transaction, the
    source database attached) and note the (group, topic) pairs as synced by the link;
    the offsets changed."""
    if not topics or not li.config.consumer_offset_sync_enable:
        return 0
    now = now_ms(m.clock)
    conn = m.cl.conn
    changed = 0
    with attached(m, li.source_cluster):
        conn.execute("BEGIN")
        try:
            conn.execute("DELETE FROM main.mirrors WHERE 0")  # the destination's lock
            for mirror, source in topics.items():
                picked, args = offsets_to_sync(m, li, mirror, source)
                conn.execute(
                    "INSERT INTO main.synced_offsets(link, grp, topic, synced_ms) "
                    f"SELECT DISTINCT ?, s.grp, ?, ? {picked} "
                    "ON CONFLICT(link, grp, topic) DO UPDATE SET synced_ms = "
                    "excluded.synced_ms", [li.name, mirror, now, *args])
                mark = conn.total_changes
                conn.execute(
                    "INSERT INTO main.group_offsets(grp, topic, partition, committed, "
                    f"metadata, commit_ms) SELECT s.grp, ?, s.partition, s.committed, '', ? "
                    f"{picked} ON CONFLICT(grp, topic, partition) DO UPDATE SET "
                    "committed = excluded.committed, commit_ms = excluded.commit_ms",
                    [mirror, now, *args])
                changed += conn.total_changes - mark
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    return changed


@contextlib.contextmanager
def attached(m: MirrorState, cluster: str) -> Iterator[None]:
    """The database of ``cluster`` attached to this cluster's connection as
    ``kl_src`` (outside any transaction: SQLite attaches only then)."""
    conn = m.cl.conn
    if any(r[1] == ATTACHED for r in conn.execute("PRAGMA database_list")):
        conn.execute(f"DETACH DATABASE {ATTACHED}")
    conn.execute(f"ATTACH DATABASE ? AS {ATTACHED}",
                 (str(m.datadir.cluster_path(cluster)),))
    try:
        yield
    finally:
        try:
            conn.execute(f"DETACH DATABASE {ATTACHED}")
        except sqlite3.Error:
            pass


def initial_offset(src: Any, source_topic: str, partition: int, start: str | int,
                    s_start: int, s_end: int) -> int:
    """Where a mirror partition that never fetched starts (``mirror.start.offset.spec``
    parsed): ``earliest`` the source's log start, ``latest`` its log end, a time the first
    offset with a timestamp at or after it. One rule for the pump and the bulk copy."""
    if start == "earliest":
        return s_start
    if start == "latest":
        return s_end
    return src.offset_for_timestamp(source_topic, partition, int(start))


def copy_records(m: MirrorState, li: Any, src: Any, row: tuple, max_records: int | None
                 ) -> tuple[int, list[dict[str, Any]]]:
    """Copy what the source partitions have beyond the mirror's log end (one
    transaction of the destination, the source database attached), each partition first
    cut back where its source's log was cut since its last fetch (core/kafka/epochs.py).
    Returns (records copied, the cuts: ``{topic, partition, offset_truncated_to,
    messages_truncated}``)."""
    topic, source_topic, spec, started = row[0], row[2], row[11], row[12]
    conn = m.cl.conn
    copied = 0
    cuts: list[dict[str, Any]] = []
    with attached(m, li.source_cluster):
        conn.execute("BEGIN")
        try:
            conn.execute("DELETE FROM main.mirrors WHERE 0")  # the destination's lock only
            try:
                s_id = m._topic_rowid(source_topic, ATTACHED, conn)
            except KafkaError:
                conn.execute("COMMIT")
                return 0, cuts
            d_id = m._topic_rowid(topic, "main", conn)
            s_parts = {p: (a, b) for p, a, b in conn.execute(
                f"SELECT partition, log_start, log_end FROM {ATTACHED}.partitions "
                "WHERE topic = ?", (s_id,))}
            d_parts = {p: (a, b, n) for p, a, b, n in conn.execute(
                "SELECT partition, log_start, log_end, bytes FROM main.partitions "
                "WHERE topic = ?", (d_id,))}
            fetched = dict(conn.execute("SELECT partition, source_epoch FROM "
                                        "main.mirror_partitions WHERE topic = ?", (topic,)))
            s_epochs = history(conn, s_id, ATTACHED)  # (one read; the copy cuts no source)
            now = now_ms(m.clock)
            start = parse_start_offset_spec(spec) if not started else None
            budget = max_records
            fetch_rows = []
            for p in sorted(d_parts):
                if p not in s_parts:
                    continue
                epochs = s_epochs.get(p, ())
                cut = _follow_cut(conn, (d_id, p), d_parts[p][1], fetched.get(p), epochs)
                if cut is not None:
                    cuts.append({"topic": topic, "partition": p, "offset_truncated_to": cut[0],
                                 "messages_truncated": cut[1]})
                    d_parts[p] = conn.execute(
                        "SELECT log_start, log_end, bytes FROM main.partitions WHERE topic = ? "
                        "AND partition = ?", (d_id, p)).fetchone()
                n, m_end, budget = _copy_partition(
                    conn, src, source_topic, (s_id, d_id, p), s_parts[p], d_parts[p], start,
                    budget)
                copied += n
                fetch_rows.append((m_end, s_parts[p][1], now, current_epoch(epochs), topic, p))
            conn.executemany(
                "UPDATE main.mirror_partitions SET last_fetch_offset = ?, source_hw = ?, "
                "last_fetch_ms = ?, source_epoch = ? WHERE topic = ? AND partition = ?",
                fetch_rows)
            if not started:
                conn.execute("UPDATE main.mirrors SET started = 1 WHERE topic = ?", (topic,))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    return copied, cuts


def _follow_cut(conn: Any, ids: tuple[int, int], m_end: int, epoch: int | None,
                source: Epochs) -> tuple[int, int] | None:
    """Inside :func:`copy_records`' transaction: where the source partition's epoch of the
    mirror's last fetch ends in its history ``source`` (OffsetsForLeaderEpoch), when the
    mirror partition ``ids`` (its log end ``m_end``) holds offsets past it (its source was
    cut back and may hold other records there since), the mirror partition is cut back to
    it as well (a new epoch of its own: its mirrors follow in turn). Returns (the offset cut
    to, records removed), None when nothing diverged."""
    if epoch is None:  # never fetched (or before epochs were kept): nothing to compare
        return None
    end = epoch_end(source, epoch)
    if end is None or end >= m_end:
        return None
    return end, truncate_partition(conn, *ids, end)[0]


def record_source_ends(m: MirrorState, rows: Sequence[tuple], src: Any) -> int:
    """PAUSED mirrors ``rows`` copy nothing, but the link still reads their source
    partitions' ends: each is kept as the partition's ``source_hw`` (what describe shows as
    LastFetchSourceHighWatermark and reckons the lag from once the source no longer answers;
    the offsets fetched and the fetch time stay the last fetch's). Returns the partitions
    whose recorded end moved (one destination transaction, none when none did)."""
    changes = []
    with m._schema.read() as conn:
        for r in rows:
            try:
                ends = {p.partition: p.log_end for p in src.offsets(r[2])}
            except KafkaError:
                continue  # gone or unreadable: the statuses say so
            for p, hw in conn.execute("SELECT partition, source_hw FROM mirror_partitions "
                                      "WHERE topic = ?", (r[0],)).fetchall():
                if p in ends and ends[p] != hw:
                    changes.append((ends[p], r[0], p, hw))
    if changes:
        with m._schema.write() as conn:
            conn.executemany("UPDATE mirror_partitions SET source_hw = ? WHERE topic = ? "
                             "AND partition = ? AND source_hw = ?", changes)
    return len(changes)


def _copy_partition(conn: Any, src: Any, source_topic: str, ids: tuple[int, int, int],
                    s_range: tuple[int, int], d_row: tuple[int, int, int],
                    start: str | int | None, budget: int | None
                    ) -> tuple[int, int, int | None]:
    """Inside :func:`copy_records`' transaction: bring mirror partition ``p`` (``ids``: the
    source and mirror topic rowids and ``p``) up to the source's ``(log start, log end)``
    ``s_range`` from its ``(log start, log end, bytes)`` ``d_row``: the starting offset of a
    partition that never fetched (``start``, the parsed spec), the jump past the source's
    retention, the records copied (at most ``budget`` offsets), the log start following the
    source's. Returns (records copied, the mirror's new log end, the budget left)."""
    s_id, d_id, p = ids
    s_start, s_end = s_range
    m_start, m_end, m_bytes = d_row
    base_s, _t = partition_range(s_id, p)
    base_d, _t = partition_range(d_id, p)
    if start is not None and m_end == 0 and m_start == 0:
        m_start = m_end = initial_offset(src, source_topic, p, start, s_start, s_end)
    if m_end < s_start:  # the source's retention went past the mirror
        conn.execute("DELETE FROM main.records WHERE id >= ? AND id < ?",
                     (base_d, record_key(d_id, p, s_start)))
        m_start = m_end = s_start
        m_bytes = 0
    hi = s_end
    if budget is not None:
        hi = min(hi, m_end + max(budget, 0))
    added = copied = 0
    if hi > m_end:
        cur = conn.execute(
            f"INSERT INTO main.records(id, ts, key, value, headers) "
            f"SELECT id - ? + ?, ts, key, value, headers FROM "
            f"{ATTACHED}.records WHERE id >= ? AND id < ?",
            (base_s, base_d, record_key(s_id, p, m_end), record_key(s_id, p, hi)))
        copied = cur.rowcount if cur.rowcount is not None else 0
        if budget is not None:
            budget -= hi - m_end
        added = records_bytes(conn, record_key(d_id, p, m_end), record_key(d_id, p, hi))
        m_end = hi
    removed = 0
    if s_start > m_start:  # the log start follows the source's
        removed = records_bytes(conn, base_d, record_key(d_id, p, s_start))
        conn.execute("DELETE FROM main.records WHERE id >= ? AND id < ?",
                     (base_d, record_key(d_id, p, s_start)))
        m_start = min(s_start, m_end)
    conn.execute(
        "UPDATE main.partitions SET log_start = ?, log_end = ?, bytes = ?, "
        "cleaned = max(cleaned, ?), clean_bytes = CASE WHEN cleaned < ? "
        "THEN 0 ELSE clean_bytes END WHERE topic = ? AND partition = ?",
        (m_start, m_end, max(m_bytes + added - removed, 0), m_start, m_start, d_id, p))
    return copied, m_end, budget
