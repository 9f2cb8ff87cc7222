"""``kafka-consumer-groups --reset-offsets`` of the Kafka engine.

What is reset (the tool's *scope*, ``getPartitionsToReset``): the partitions of topics
(``--topic T`` every partition, ``--topic T:0,2`` those), or every partition the group has
a committed offset for (``--all-topics``: the tool's ``getCommittedOffsets``), or the
partitions a reset plan names (``--from-file``). To what (the *scenario*,
``prepareOffsetsToReset``): an offset, the log start or end, the committed offset, a shift
of it, the first offset at or after a time, or the plan's offset; every target but the
committed offset is kept within the log (``checkOffsetsRange``).

The reset plan's CSV is the one the tool's ``--export`` prints and ``--from-file`` reads:
a line ``topic,partition,offset`` per partition (one group), or
``group,topic,partition,offset`` (several groups: the lines of the others are left out).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import JetlinkError
from ..numbers import INT32_MAX, INT64_MAX, INT64_MIN, IntTextError, parse_int
from .errors import KafkaError
from .topic_groups import _check_group, _live, _state, timed_write
from .topic_records import first_at_or_after
from .topic_retention import maintain
from .topic_types import get_topic, unknown_partition

if TYPE_CHECKING:  # pragma: no cover
    from .topic_store import TopicStore

__all__ = ["export_csv", "parse_topic_scope", "reset_plan", "set_offsets"]

#: A scope: (topic, None) for every partition of the topic, (topic, p) for one of them;
#: None for every partition the group has a committed offset for (--all-topics).
Scope = Sequence[tuple[str, int | None]] | None
#: One reset: (topic, partition, the committed offset before or None, the new offset).
Row = tuple[str, int, int | None, int]


def shifted_offset(committed: int, shift_by: int) -> int:
    """``--shift-by``'s target: a Java long's addition (ConsumerGroupCommand's
    resetByShiftBy), which wraps past the long range; the range check then clamps it to the
    log's start or end as any other target."""
    return (committed + shift_by + (1 << 63)) % (1 << 64) - (1 << 63)


def parse_topic_scope(text: str) -> list[tuple[str, int | None]]:
    """A ``--topic`` value as the tool reads it (``parseTopicPartitionsToReset``): ``T``
    (every partition) or ``T:P[,P...]`` (those partitions); JetlinkError in the tool's
    words for anything else (field ``topic``)."""
    if ":" not in text:
        return [(text, None)]
    parts = text.split(":")
    if len(parts) != 2:
        raise JetlinkError(f"Invalid topic arg '{text}', expected topic name and partitions",
                           field="topic")
    topic, partitions = parts
    out: list[tuple[str, int | None]] = []
    for p in partitions.split(","):
        try:
            out.append((topic, parse_int(p, 0, INT32_MAX)))
        except IntTextError:
            raise JetlinkError(f"Invalid partition '{p}' specified in topic arg '{text}': a "
                               f"partition is a number from 0 to {INT32_MAX}",
                               field="topic") from None
    return out


def reset_plan(text: str, group: str, where: str) -> dict[tuple[str, int], int]:
    """The offsets a reset plan's CSV ``text`` gives ``group`` (read from ``where``, a file
    the error names): every line ``topic,partition,offset``, or every line
    ``group,topic,partition,offset`` (the form of the first line decides, as the tool's
    ``parseResetPlan``; a later line of the same partition wins). Blank lines and a
    carriage return before a line's end are left out. JetlinkError naming the line, its
    text and the rule for a line of another form, and when no line is ``group``'s."""
    lines = [(n, line.rstrip("\r")) for n, line in enumerate(text.split("\n"), 1)
             if line.strip()]
    if not lines:
        raise JetlinkError(f"{where}: no reset plan: the file holds no line (expected "
                           "topic,partition,offset per line)", field="from_file")
    import csv

    def cells_of(line: str) -> list[str]:
        # the tool reads the file with Jackson's CSV reader: a quoted field is its text
        # ("t" is t, "a,b" one field, "" inside quotes a quote)
        try:
            return next(csv.reader([line], strict=True))
        except csv.Error:
            return line.split(",")

    width = len(cells_of(lines[0][1]))
    if width not in (3, 4):
        n, line = lines[0]
        raise JetlinkError(f"{where}: line {n} {line[:80]!r} is neither "
                           "topic,partition,offset nor group,topic,partition,offset",
                           field="from_file")
    plan: dict[tuple[str, int], int] = {}
    for n, line in lines:
        cells = cells_of(line)
        if len(cells) != width:
            form = "topic,partition,offset" if width == 3 else "group,topic,partition,offset"
            raise JetlinkError(f"{where}: line {n} {line[:80]!r} is not {form} (the form of "
                               "its first line)", field="from_file")
        if width == 4 and cells[0] != group:
            continue
        topic, p_text, o_text = cells[-3:]
        try:
            partition = parse_int(p_text.strip(), 0, INT32_MAX)
            offset = parse_int(o_text.strip(), INT64_MIN, INT64_MAX)
        except IntTextError as exc:
            what = "partition" if exc.text == p_text.strip() else "offset"
            rule = (f"a number from 0 to {INT32_MAX}" if what == "partition"
                    else "a 64-bit integer")
            raise JetlinkError(f"{where}: line {n}: {what} {exc.shown!r} is not {rule}",
                               field="from_file") from None
        plan[(topic, partition)] = offset
    if not plan:
        raise JetlinkError(f"{where}: No reset plan for group {group} found (no line of "
                           "group,topic,partition,offset names it)", field="from_file")
    return plan


def export_csv(rows: Sequence[Row]) -> list[str]:
    """The lines the tool's ``--export`` prints for one group: ``topic,partition,offset``."""
    return [f"{t},{p},{new}" for t, p, _old, new in rows]


def set_offsets(kafka: TopicStore, group: str, scope: Scope, *,
                to_offset: int | None = None, to_earliest: bool = False,
                to_latest: bool = False, to_current: bool = False,
                shift_by: int | None = None, to_time_ms: int | None = None,
                plan: Mapping[tuple[str, int], int] | None = None,
                dry_run: bool = False) -> list[Row]:
    """Reset the group's committed offsets of ``scope`` (or of ``plan``'s partitions) to
    ``to_offset``, the log start (``to_earliest``), the log end (``to_latest``), the
    committed offset (``to_current``; the log end where there is none, as the tool), the
    committed offset plus ``shift_by`` (a partition without one is refused, as the tool
    refuses it), the first offset whose timestamp is at or after ``to_time_ms`` (the log
    end where there is none: ``--to-datetime`` / ``--by-duration``), or ``plan``'s offset.
    Every target but the committed offset is clamped into [log start, log end], as the
    tool's checkOffsetsRange. Refused while the group is active (NON_EMPTY_GROUP with the
    tool's text). Returns the rows by topic and partition; ``dry_run`` writes nothing. A
    principal needs what the tool's requests need: READ on the group and each topic
    (OffsetCommit), DESCRIBE on them for a ``dry_run``."""
    _check_group(group)
    chosen = sum(1 for x in (to_offset is not None, to_earliest, to_latest, to_current,
                             shift_by is not None, to_time_ms is not None,
                             plan is not None) if x)
    if chosen != 1:
        raise KafkaError("INVALID_REQUEST", "Exactly one of to_offset, to_earliest, "
                         "to_latest, to_current, shift_by, to_time_ms, plan must be given.")
    # the group first: a scope found empty (--all-topics of a group with no offsets) is no
    # way around it, as the tool's own requests are not
    kafka.authorize("DescribeGroups" if dry_run else "OffsetCommit", group=group)
    if plan is not None:
        scope = [(t, p) for t, p in plan]
    elif scope is None:  # --all-topics: the group's committed offsets, as OffsetFetch
        # answers them (the partitions of topics the principal may not DESCRIBE left out)
        with kafka._schema.read() as conn:
            scope = [(t, p) for t, p in conn.execute(
                "SELECT topic, partition FROM group_offsets WHERE grp = ?", (group,))]
        shown = set(kafka.visible("TOPIC", {t for t, _p in scope}))
        scope = [(t, p) for t, p in scope if t in shown]
    topics = list(dict.fromkeys(t for t, _p in scope))
    for topic in topics:
        if dry_run:
            kafka.authorize("DescribeGroups", group=group)
            kafka.authorize("ListOffsets", topic=topic)
        else:
            kafka.authorize("OffsetCommit", group=group, topic=topic)
        maintain(kafka, topic)
    now = kafka.now_ms()
    with timed_write(kafka, now) as conn:
        if _live(conn, group, now):
            raise KafkaError(
                "NON_EMPTY_GROUP",
                f"Assignments can only be reset if the group '{group}' is inactive, but "
                f"the current state is {_state(conn, group, True)}.", field="group")
        old = {(t, p): o for t, p, o in conn.execute(
            "SELECT topic, partition, committed FROM group_offsets WHERE grp = ?", (group,))}
        result: dict[tuple[str, int], Row] = {}
        for (topic, p), start, end, rowid in _partitions(conn, scope):
            committed = old.get((topic, p))
            if to_earliest:
                target = start
            elif to_latest:
                target = end
            elif to_current:
                target = end if committed is None else committed
            elif shift_by is not None:
                if committed is None:
                    raise KafkaError(
                        "INVALID_REQUEST", f"Cannot shift offset for partition {topic}-{p} "
                        "since there is no current committed offset", field="shift_by")
                target = shifted_offset(committed, shift_by)
            elif to_time_ms is not None:
                target = first_at_or_after(conn, rowid, p, to_time_ms, end)
            else:
                target = int(plan[(topic, p)] if plan is not None else to_offset)  # type: ignore[arg-type]
            # (the tool's --to-current keeps a committed offset as it is, even one the log
            # start has passed: no checkOffsetsRange on that branch of prepareOffsetsToReset)
            result[(topic, p)] = (topic, p, committed,
                                  target if to_current else min(max(target, start), end))
        rows = [result[k] for k in sorted(result)]
        if not dry_run:
            conn.executemany(
                "INSERT INTO group_offsets(grp, topic, partition, committed, metadata, "
                "commit_ms) VALUES (?, ?, ?, ?, '', ?) ON CONFLICT(grp, topic, partition) "
                "DO UPDATE SET committed = excluded.committed, commit_ms = excluded.commit_ms",
                [(group, t, p, new, now) for t, p, _o, new in rows])
        return rows


def _partitions(conn: Any, scope: Sequence[tuple[str, int | None]]
                ) -> list[tuple[tuple[str, int], int, int, int]]:
    """((topic, partition), log start, log end, topic rowid) of every partition of
    ``scope``: UNKNOWN_TOPIC_OR_PARTITION for a topic or a partition that is not there."""
    out = []
    for topic in dict.fromkeys(t for t, _p in scope):
        t = get_topic(conn, topic)
        wanted = {p for name, p in scope if name == topic}
        for p in sorted(x for x in wanted if x is not None):
            if not 0 <= p < t.partitions:
                raise unknown_partition(topic, p, t.partitions)
        for p, start, end in conn.execute(
                "SELECT partition, log_start, log_end FROM partitions WHERE topic = ? "
                "ORDER BY partition", (t.rowid,)):
            if None in wanted or p in wanted:
                out.append(((topic, p), start, end, t.rowid))
    return out
