"""Consumer groups of the Kafka engine: members (join, heartbeat, leave; a member is gone
once its session timeout passed), Kafka's rebalance and RangeAssignor, committed offsets
(commit with Kafka's OffsetCommit membership rule, the internal writes of the mirrors'
offset sync and clamping), describe with lags, delete and offset delete
(``--reset-offsets``: group_reset.py).

A rebalance is Kafka's ClassicGroup eager protocol. A change of the members (a new member,
new topics, a leave, an expired session, a subscribed topic's partition count) puts the
group in PreparingRebalance: each member keeps the partitions of the generation it is in
and may still commit in it, a heartbeat tells it REBALANCE_IN_PROGRESS (it commits what it
handled and joins again), and a join is answered REBALANCE_IN_PROGRESS until every live
member has joined. The last join makes the next generation and its RangeAssignor assignment
at once (no CompletingRebalance state). A member that does not join again is gone when its
session runs out, or when the rebalance has waited the largest rebalance timeout of the
members (Kafka's JoinGroup rebalance_timeout_ms, the consumer's max.poll.interval.ms), even
while it keeps heartbeating: the join then completes with the members that did join
(GroupMetadataManager.completeClassicGroupJoin). So no partition is read by two members at
a time: its new owner starts from the offset its old owner committed.

Kafka's coordinator runs the session and rebalance timeouts on timers; here each write of
the groups runs first what they did up to then (:func:`timed_write`), each at its own
deadline, in the order of their deadlines. A read runs no timer: a rebalance whose timeout
ran out shows as under way until the next write (any heartbeat or join of its members).

Its functions take the topics' state (:class:`~jetlink.core.kafka.topic_store.TopicStore`)
as their first argument; the ``Kafka`` facade (topics.py) binds them as its methods.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .errors import KafkaError
from .topic_types import (
    GroupInfo,
    GroupMember,
    GroupOffset,
    get_topic,
    unknown_partition,
    unknown_topic,
)

if TYPE_CHECKING:  # pragma: no cover
    from .topic_store import TopicStore

__all__ = [
    "DEFAULT_REBALANCE_TIMEOUT_MS",
    "DEFAULT_SESSION_TIMEOUT_MS",
    "LIVE_MEMBER_SQL",
    "MAX_REBALANCE_TIMEOUT_MS",
    "MAX_SESSION_TIMEOUT_MS",
    "MIN_SESSION_TIMEOUT_MS",
    "assignment",
    "commit",
    "committed",
    "committed_all",
    "check_delete_group",
    "delete_group",
    "delete_offsets",
    "describe_group",
    "group_active",
    "groups",
    "heartbeat",
    "join",
    "keep_alive",
    "leave",
    "timed_write",
    "write_group_offsets",
    "write_offsets_internal",
]

# Kafka's broker defaults group.min.session.timeout.ms / group.max.session.timeout.ms.
MIN_SESSION_TIMEOUT_MS = 6_000
MAX_SESSION_TIMEOUT_MS = 1_800_000
DEFAULT_SESSION_TIMEOUT_MS = 45_000
# Kafka's consumer default max.poll.interval.ms, the rebalance timeout its JoinGroup carries;
# the largest a JoinGroup can carry (its int32 field)
DEFAULT_REBALANCE_TIMEOUT_MS = 300_000
MAX_REBALANCE_TIMEOUT_MS = 2**31 - 1

# The millisecond a group member's session ends: its last heartbeat + its session timeout,
# when Kafka's heartbeat timer fires (a timer fires when its deadline <= now); a member is
# live before it (parameter: now in ms). The one definition of "active" for groups, also
# used by the offset sync.
SESSION_END_SQL = "heartbeat_ms + session_timeout_ms"
LIVE_MEMBER_SQL = f"{SESSION_END_SQL} > ?"
# A rebalance whose timeout has run out (Kafka's timer fires when its deadline <= now).
REBALANCE_DUE_SQL = "preparing = 1 AND rebalance_deadline_ms <= ?"


def _check_group(group: Any, *, empty: bool = False) -> str:
    """INVALID_GROUP_ID for no group id (GroupMetadataManager's isGroupIdNotNull), or for
    an empty one where Kafka refuses it too (isGroupIdNotEmpty: not ``empty``)."""
    if not isinstance(group, str) or not (group or empty):
        raise KafkaError("INVALID_GROUP_ID", "The configured groupId is invalid.",
                         field="group")
    return group


def _run_timers(conn: Any, now: int) -> None:
    """What Kafka's coordinator timers did up to ``now``, each at its own deadline, the
    earliest first (a session ending at a rebalance's deadline first): a member whose session
    ended is removed (its group rebalances, or completes the rebalance it waited for), and a
    rebalance whose timeout ran out completes without the members that have not joined
    again (:func:`_rebalance_timed_out`). In deadline order because one changes the next: a
    rebalance a session's end begins has its deadline from that instant."""
    while True:
        ended, due = conn.execute(
            f"SELECT (SELECT MIN({SESSION_END_SQL}) FROM group_members WHERE NOT "
            f"({LIVE_MEMBER_SQL})), (SELECT MIN(rebalance_deadline_ms) FROM group_generations "
            f"WHERE {REBALANCE_DUE_SQL})", (now, now)).fetchone()
        if ended is None and due is None:
            return
        if due is None or (ended is not None and ended <= due):
            gone = [g for (g,) in conn.execute(
                f"SELECT DISTINCT grp FROM group_members WHERE NOT ({LIVE_MEMBER_SQL})",
                (ended,))]
            conn.execute(f"DELETE FROM group_members WHERE NOT ({LIVE_MEMBER_SQL})", (ended,))
            for group in gone:
                _members_changed(conn, group, ended)
        else:
            for (group,) in conn.execute(
                    "SELECT grp FROM group_generations WHERE preparing = 1 AND "
                    "rebalance_deadline_ms = ?", (due,)).fetchall():
                _rebalance_timed_out(conn, group, due)


@contextlib.contextmanager
def timed_write(kafka: TopicStore, now: int) -> Iterator[Any]:
    """A write of the groups, after the coordinator's timers due by ``now``
    (:func:`_run_timers`). What the timers did stands even when the write is then refused
    (a KafkaError rolls back the write's own changes: Kafka's timers ran whatever a later
    request was answered), so the removed member's refused heartbeat leaves it removed for
    the readers too; with no timer due, a refused write leaves the database as it was."""
    with kafka._schema.write() as conn:
        before = conn.total_changes
        _run_timers(conn, now)
        if conn.total_changes == before:
            yield conn
            return
        refused: KafkaError | None = None
        conn.execute("SAVEPOINT refused_write")
        try:
            yield conn
        except KafkaError as exc:
            conn.execute("ROLLBACK TO refused_write")
            refused = exc
        conn.execute("RELEASE refused_write")
    if refused is not None:
        raise refused


def _rebalance_timed_out(conn: Any, group: str, now: int) -> None:
    """Kafka's completeClassicGroupJoin when the rebalance timeout runs out: the members that
    have not joined again are removed (heartbeating or not: their next heartbeat is
    UNKNOWN_MEMBER_ID) and the next generation made of those that did (an Empty group's,
    when none did)."""
    conn.execute("DELETE FROM group_members WHERE grp = ? AND rejoined = 0", (group,))
    _members_changed(conn, group, now)


def _state_row(conn: Any, group: str) -> tuple[int, bool, dict[str, int]]:
    """(generation, preparing a rebalance, the partition counts its assignment was made on)."""
    row = conn.execute("SELECT generation, preparing, counts FROM group_generations "
                       "WHERE grp = ?", (group,)).fetchone()
    return (row[0], bool(row[1]), json.loads(row[2])) if row else (0, False, {})


def _state_name(live: bool, preparing: bool) -> str:
    """A group's state by ConsumerGroupState's names: PreparingRebalance or Stable with live
    members, else Empty."""
    return ("PreparingRebalance" if preparing else "Stable") if live else "Empty"


def _state(conn: Any, group: str, live: bool) -> str:
    return _state_name(live, live and _state_row(conn, group)[1])


def _members_changed(conn: Any, group: str, now: int) -> None:
    """A member left or expired: the others rebalance; a group left without members is
    Empty, in a generation of its own (Kafka's: its last rebalance made no assignment)."""
    if _live(conn, group, now):
        _begin_rebalance(conn, group, now)
        _settle(conn, group, now)
    else:
        conn.execute(
            "INSERT INTO group_generations(grp, generation) VALUES (?, 1) "
            "ON CONFLICT(grp) DO UPDATE SET generation = generation + 1, preparing = 0",
            (group,))


def _begin_rebalance(conn: Any, group: str, now: int) -> None:
    """PreparingRebalance: every member is to join again before the next generation. A
    rebalance begun now has its deadline now + the largest rebalance timeout of the live
    members (ClassicGroup.rebalanceTimeoutMs, taken when GroupMetadataManager's
    prepareRebalance schedules the join's completion); one under way keeps its own."""
    (timeout,) = conn.execute(
        "SELECT MAX(rebalance_timeout_ms) FROM group_members WHERE grp = ? AND "
        f"{LIVE_MEMBER_SQL}", (group, now)).fetchone()
    deadline = now + (timeout or 0)
    conn.execute(
        "INSERT INTO group_generations(grp, generation, preparing, rebalance_deadline_ms) "
        "VALUES (?, 0, 1, ?) ON CONFLICT(grp) DO UPDATE SET preparing = 1, "
        "rebalance_deadline_ms = CASE WHEN preparing THEN rebalance_deadline_ms "
        "ELSE excluded.rebalance_deadline_ms END", (group, deadline))


def _settle(conn: Any, group: str, now: int) -> None:
    """The rebalance completes when every live member has joined again: the next
    generation, each member's RangeAssignor partitions stored with it."""
    generation, preparing, _counts = _state_row(conn, group)
    live = _live(conn, group, now)
    if not preparing or not live or not all(row[7] for row in live):
        return
    counts = _counts_of(conn, {t for row in live for t in json.loads(row[2])})
    assignment = _assign([(row[0], json.loads(row[2])) for row in live], counts)
    generation += 1
    conn.execute("UPDATE group_generations SET generation = ?, preparing = 0, counts = ? "
                 "WHERE grp = ?", (generation, json.dumps(counts, sort_keys=True), group))
    conn.executemany(
        "UPDATE group_members SET member_gen = ?, rejoined = 0, assigned = ? "
        "WHERE grp = ? AND member = ?",
        [(generation, json.dumps(assignment[row[0]]), group, row[0]) for row in live])


def _counts_of(conn: Any, topics: Iterable[str]) -> dict[str, int]:
    """The partition counts of ``topics`` (those that exist)."""
    names = sorted(topics)
    if not names:
        return {}
    return {n: c for n, c in conn.execute(
        f"SELECT name, partitions FROM topics WHERE name IN ({', '.join('?' * len(names))})",
        names)}


def _rebalancing() -> KafkaError:
    return KafkaError("REBALANCE_IN_PROGRESS", field="group")


def _unknown_member() -> KafkaError:
    return KafkaError("UNKNOWN_MEMBER_ID", "The coordinator is not aware of this member.",
                      field="member")


def _check_generation(conn: Any, group: str, generation: int) -> None:
    current = _state_row(conn, group)[0]
    if generation != current:
        err = KafkaError("ILLEGAL_GENERATION", field="generation")
        err.detail = (f"generation {generation} of group '{group}', which is at generation "
                      f"{current}: its members changed since this member joined")
        raise err


def _live(conn: Any, group: str, now: int) -> list[tuple[Any, ...]]:
    """The live members' rows: member, client_id, topics, joined_ms, heartbeat_ms,
    session_timeout_ms, member_gen, rejoined, assigned."""
    return conn.execute(
        "SELECT member, client_id, topics, joined_ms, heartbeat_ms, session_timeout_ms, "
        f"member_gen, rejoined, assigned FROM group_members WHERE grp = ? AND "
        f"{LIVE_MEMBER_SQL} ORDER BY member", (group, now)).fetchall()


def group_active(kafka: TopicStore, group: str) -> bool:
    """Whether the group has a live member (its state is Stable)."""
    now = kafka.now_ms()
    with kafka._schema.read() as conn:
        return bool(_live(conn, group, now))


def _validate_offsets(conn: Any, offsets: Mapping[tuple[str, int], int]) -> list[Any]:
    counts: dict[str, int] = {}
    rows = []
    for (topic, part), off in offsets.items():
        if topic not in counts:
            row = conn.execute("SELECT partitions FROM topics WHERE name = ?",
                               (topic,)).fetchone()
            if row is None:
                raise unknown_topic(topic)
            counts[topic] = row[0]
        if not isinstance(part, int) or not 0 <= part < counts[topic]:
            raise unknown_partition(topic, part, counts[topic])
        if not isinstance(off, int) or off < 0:
            raise KafkaError("INVALID_REQUEST", f"Invalid negative offset {off}",
                             field="offset")
        rows.append((topic, part, off))
    return rows


def commit(kafka: TopicStore, group: str, offsets: Mapping[tuple[str, int], int], *,
           metadata: str = "", member: str | None = None, generation: int = -1) -> None:
    """Commit ``{(topic, partition): offset}`` for ``group`` (the next offset to read).

    Kafka's OffsetCommit rules (ClassicGroup.validateOffsetCommit): a live group (with
    members) takes commits only from its members (UNKNOWN_MEMBER_ID otherwise), and a
    member's commit only in the group's current ``generation`` (the one :func:`join`
    returned; ILLEGAL_GENERATION when its members changed since); an Empty group takes
    anyone's commit made without a member."""
    _check_group(group)
    kafka.authorize("OffsetCommit", group=group, topics=sorted({t for t, _p in offsets}))
    now = kafka.now_ms()
    with timed_write(kafka, now) as conn:
        live = {row[0] for row in _live(conn, group, now)}
        if member is None:
            if live:
                raise _unknown_member()
        else:
            if member not in live:
                raise _unknown_member()
            _check_generation(conn, group, generation)
        rows = _validate_offsets(conn, offsets)
        conn.executemany(
            "INSERT INTO group_offsets(grp, topic, partition, committed, metadata, commit_ms) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(grp, topic, partition) DO UPDATE SET "
            "committed = excluded.committed, metadata = excluded.metadata, "
            "commit_ms = excluded.commit_ms",
            [(group, t, p, o, metadata, now) for t, p, o in rows])


def committed(kafka: TopicStore, group: str) -> dict[tuple[str, int], int]:
    """``{(topic, partition): committed offset}`` of the group (empty when it has none)."""
    kafka.authorize("OffsetFetch", group=group)
    with kafka._schema.read() as conn:
        found = {
            (t, p): o for t, p, o in conn.execute(
                "SELECT topic, partition, committed FROM group_offsets WHERE grp = ? "
                "ORDER BY topic, partition", (group,))
        }
    shown = set(kafka.visible("TOPIC", {t for t, _p in found}))
    return {k: o for k, o in found.items() if k[0] in shown}


def _described(kafka: TopicStore, info: GroupInfo) -> GroupInfo:
    """``info`` with only the partitions of topics the principal may DESCRIBE: Kafka's
    OffsetFetch leaves the others out (TOPIC_AUTHORIZATION_FAILED per partition, skipped by
    the admin client), and their log end offsets need ListOffsets' DESCRIBE on the topic."""
    topics = {o.topic for o in info.offsets}
    shown = set(kafka.visible("TOPIC", topics))
    if shown != topics:
        info.offsets = [o for o in info.offsets if o.topic in shown]
    return info


def committed_all(kafka: TopicStore, topic: str | None = None
                  ) -> dict[str, dict[tuple[str, int], int]]:
    """Every group's committed offsets (of ``topic`` only when given), by group."""
    out: dict[str, dict[tuple[str, int], int]] = {}
    sql = "SELECT grp, topic, partition, committed FROM group_offsets"
    params: tuple[Any, ...] = ()
    if topic is not None:
        sql += " WHERE topic = ?"
        params = (topic,)
    with kafka._schema.read() as conn:
        for g, t, p, o in conn.execute(sql + " ORDER BY grp, topic, partition", params):
            out.setdefault(g, {})[(t, p)] = o
    return out


def write_offsets_internal(kafka: TopicStore, group: str, offsets: Mapping[tuple[str, int], int], *,
                           metadata: str = "") -> int:
    """Write committed offsets with no membership or topic checks (consumer offset sync
    and clamping of mirror topics); unchanged offsets are not rewritten. Returns how many
    offsets changed. Joins an open transaction of the cluster."""
    return write_group_offsets(
        kafka, ((group, t, p, o) for (t, p), o in offsets.items()), metadata=metadata)


def write_group_offsets(kafka: TopicStore, rows: Iterable[tuple[str, str, int, int]], *,
                        metadata: str = "") -> int:
    """Bulk form of :meth:`write_offsets_internal`: ``(group, topic, partition, offset)``
    rows, one executemany. Returns how many offsets changed."""
    now = kafka.now_ms()
    with kafka._schema.write() as conn:
        before = conn.total_changes
        conn.executemany(
            "INSERT INTO group_offsets(grp, topic, partition, committed, metadata, commit_ms) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(grp, topic, partition) DO UPDATE SET "
            "committed = excluded.committed, metadata = excluded.metadata, "
            "commit_ms = excluded.commit_ms WHERE committed != excluded.committed",
            ((g, t, p, o, metadata, now) for g, t, p, o in rows))
        return conn.total_changes - before


def join(kafka: TopicStore, group: str, member: str, topics: Iterable[str], *,
         session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS,
         rebalance_timeout_ms: int = DEFAULT_REBALANCE_TIMEOUT_MS, client_id: str = "") -> int:
    """``member`` joins ``group`` subscribed to ``topics``; the group's generation, the one
    the member's commits name. A member of the current generation with the same topics, the
    group not rebalancing, only refreshes its session. Otherwise (a new member, new topics,
    a member joining again in a rebalance) the group rebalances (module docstring): the
    answer is the new generation when this join completes it, else REBALANCE_IN_PROGRESS
    (KafkaError; its detail names the members still to join): join again on the next poll.
    The session timeout must be within Kafka's broker defaults 6000..1800000 ms
    (INVALID_SESSION_TIMEOUT); the rebalance timeout (the consumer's max.poll.interval.ms:
    how long a rebalance waits for the members to join again) within 1..2147483647 ms
    (INVALID_REQUEST)."""
    _check_group(group)
    kafka.authorize("JoinGroup", group=group)
    if not isinstance(member, str) or not member:
        raise KafkaError("MEMBER_ID_REQUIRED", field="member")
    if not MIN_SESSION_TIMEOUT_MS <= session_timeout_ms <= MAX_SESSION_TIMEOUT_MS:
        err = KafkaError("INVALID_SESSION_TIMEOUT", field="session_timeout_ms")
        err.detail = (f"session timeout {session_timeout_ms:,} ms, the broker's range "
                      f"{MIN_SESSION_TIMEOUT_MS:,} to {MAX_SESSION_TIMEOUT_MS:,} ms")
        raise err
    if (not isinstance(rebalance_timeout_ms, int)
            or not 1 <= rebalance_timeout_ms <= MAX_REBALANCE_TIMEOUT_MS):
        err = KafkaError("INVALID_REQUEST", "The rebalance timeout is not valid.",
                         field="rebalance_timeout_ms")
        err.detail = (f"rebalance timeout {rebalance_timeout_ms!r} ms: the consumer's "
                      f"max.poll.interval.ms is 1 to {MAX_REBALANCE_TIMEOUT_MS:,} ms")
        raise err
    names = json.dumps(sorted(set(topics)))
    now = kafka.now_ms()
    with timed_write(kafka, now) as conn:
        for name in json.loads(names):
            get_topic(conn, name)
        was = conn.execute("SELECT topics, member_gen FROM group_members WHERE grp = ? AND "
                           "member = ?", (group, member)).fetchone()
        conn.execute(
            "INSERT INTO group_members(grp, member, client_id, topics, joined_ms, "
            "heartbeat_ms, session_timeout_ms, rebalance_timeout_ms) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(grp, member) DO UPDATE SET client_id = excluded.client_id, "
            "topics = excluded.topics, heartbeat_ms = excluded.heartbeat_ms, "
            "session_timeout_ms = excluded.session_timeout_ms, "
            "rebalance_timeout_ms = excluded.rebalance_timeout_ms",
            (group, member, client_id, names, now, now, session_timeout_ms,
             rebalance_timeout_ms))
        generation, preparing, counts = _state_row(conn, group)
        if (was is not None and was[0] == names and was[1] == generation and not preparing
                and _counts_of(conn, json.loads(names)).items() <= counts.items()):
            return generation
        conn.execute("UPDATE group_members SET rejoined = 1 WHERE grp = ? AND member = ?",
                     (group, member))
        _begin_rebalance(conn, group, now)
        _settle(conn, group, now)
        generation, preparing, _counts = _state_row(conn, group)
        if not preparing:
            return generation
        waiting = [row[0] for row in _live(conn, group, now) if not row[7]]
        (deadline,) = conn.execute("SELECT rebalance_deadline_ms FROM group_generations "
                                   "WHERE grp = ?", (group,)).fetchone()
    # (refused after the transaction: the join and the rebalance it began stand)
    err = _rebalancing()
    err.detail = (f"group '{group}' is rebalancing: waiting for member"
                  f"{'s' if len(waiting) != 1 else ''} {', '.join(waiting)} to join again "
                  "(each does on its next heartbeat, or is gone when its session runs out "
                  f"or when the rebalance timeout does, in {deadline - now:,} ms)")
    raise err


def heartbeat(kafka: TopicStore, group: str, member: str, generation: int | None = None
              ) -> None:
    """Keep ``member`` alive: UNKNOWN_MEMBER_ID when its session already expired,
    ILLEGAL_GENERATION when ``generation`` (given) is not the group's, REBALANCE_IN_PROGRESS
    while the group rebalances (the member commits what it handled and joins again, as
    Kafka's heartbeat tells it to), which a subscribed topic's new partition count starts."""
    kafka.authorize("Heartbeat", group=group)
    now = kafka.now_ms()
    with timed_write(kafka, now) as conn:
        n = conn.execute("UPDATE group_members SET heartbeat_ms = ? WHERE grp = ? AND member = ?",
                         (now, group, member)).rowcount
        if not n:
            raise _unknown_member()
        if generation is not None:
            _check_generation(conn, group, generation)
        _gen, preparing, counts = _state_row(conn, group)
        if not preparing:
            topics = {t for row in _live(conn, group, now) for t in json.loads(row[2])}
            if _counts_of(conn, topics) == counts:
                return
            _begin_rebalance(conn, group, now)  # (a topic's partitions changed: Kafka's
            # consumer sees it in its metadata and joins again)
    raise _rebalancing()


def keep_alive(kafka: TopicStore, group: str, member: str) -> bool:
    """Refresh ``member``'s session while it handles a batch (Kafka's consumer heartbeats
    from a thread of its own, so a slow handler is not taken for a dead one): nothing else
    (a rebalance is learnt from the next :func:`heartbeat`). False: the member was gone
    already (its session ran out)."""
    kafka.authorize("Heartbeat", group=group)
    now = kafka.now_ms()
    with timed_write(kafka, now) as conn:
        return bool(conn.execute(
            "UPDATE group_members SET heartbeat_ms = ? WHERE grp = ? AND member = ?",
            (now, group, member)).rowcount)


def leave(kafka: TopicStore, group: str, member: str) -> None:
    """``member`` leaves ``group`` (no error when it is already gone): the others rebalance
    (an Empty group a new generation)."""
    kafka.authorize("LeaveGroup", group=group)
    now = kafka.now_ms()
    with kafka._schema.write() as conn:
        if conn.execute("DELETE FROM group_members WHERE grp = ? AND member = ?",
                        (group, member)).rowcount:
            _members_changed(conn, group, now)


def _assign(members: list[tuple[str, list[str]]],
            counts: Mapping[str, int]) -> dict[str, list[tuple[str, int]]]:
    """Kafka's RangeAssignor: per topic, the subscribed members sorted by id get
    consecutive ranges; the first ``n % m`` get one partition more."""
    out: dict[str, list[tuple[str, int]]] = {m: [] for m, _ in members}
    for topic in sorted({t for _, ts in members for t in ts}):
        n = counts.get(topic)
        if not n:
            continue
        subs = sorted(m for m, ts in members if topic in ts)
        per, extra = divmod(n, len(subs))
        for i, m in enumerate(subs):
            first = i * per + min(i, extra)
            length = per + (1 if i < extra else 0)
            out[m].extend((topic, p) for p in range(first, first + length))
    return out


def _catalog(conn: Any) -> tuple[dict[str, int], dict[tuple[str, int], int]]:
    """Partition counts by topic name and log end offsets by (topic, partition)."""
    counts = {name: n for name, n in conn.execute("SELECT name, partitions FROM topics")}
    ends = {
        (name, p): end for name, p, end in conn.execute(
            "SELECT t.name, p.partition, p.log_end FROM partitions p JOIN topics t "
            "ON t.id = p.topic")
    }
    return counts, ends


def _group(conn: Any, group: str, now: int,
           catalog: tuple[dict[str, int], dict[tuple[str, int], int]] | None = None
           ) -> GroupInfo | None:
    live = _live(conn, group, now)
    committed = conn.execute(
        "SELECT topic, partition, committed, metadata FROM group_offsets WHERE grp = ? "
        "ORDER BY topic, partition", (group,)).fetchall()
    if not live and not committed:
        return None
    counts, ends = catalog if catalog is not None else _catalog(conn)
    generation, preparing, _counts = _state_row(conn, group)
    members = [
        GroupMember(row[0], row[1], json.loads(row[2]), row[3], row[4], row[5],
                    _held(row, generation, preparing, counts))
        for row in live
    ]
    owner = {tp: mem for mem in members for tp in mem.assignment}
    rows: dict[tuple[str, int], GroupOffset] = {}
    for t, p, off, meta in committed:
        end = ends.get((t, p))
        rows[(t, p)] = GroupOffset(t, p, off, end, None if end is None else end - off,
                                   metadata=meta)
    for tp, mem in owner.items():
        if tp not in rows:
            end = ends.get(tp)
            rows[tp] = GroupOffset(tp[0], tp[1], None, end, None)
        rows[tp].member, rows[tp].client_id, rows[tp].host = mem.member, mem.client_id, mem.host
    offsets = [rows[k] for k in sorted(rows)]
    return GroupInfo(group, _state_name(bool(live), preparing), members, offsets)


def _held(row: tuple[Any, ...], generation: int, preparing: bool, counts: Mapping[str, int]
          ) -> list[tuple[str, int]]:
    """The partitions a live member's row holds: its generation's assignment while it is in
    the group's current generation and has not joined a rebalance (then none: it gave them
    up), of partitions that still exist."""
    if row[6] != generation or (preparing and row[7]):
        return []
    return [(t, p) for t, p in json.loads(row[8]) if p < counts.get(t, 0)]


def describe_group(kafka: TopicStore, group: str) -> GroupInfo:
    """State (Stable: a live member; Empty), members with their RangeAssignor partitions,
    and per partition the committed offset, log end offset and lag (like
    ``kafka-consumer-groups --describe``). GROUP_ID_NOT_FOUND for an unknown group."""
    _check_group(group, empty=True)
    kafka.authorize("DescribeGroups", group=group)
    now = kafka.now_ms()
    with kafka._schema.read() as conn:
        info = _group(conn, group, now)
        if info is None:
            raise _unknown_group(conn, group)
    return _described(kafka, info)


def _unknown_group(conn: Any, group: str) -> KafkaError:
    """GROUP_ID_NOT_FOUND, the closest group named for people (core/errors.py not_found)."""
    from ..errors import not_found

    err = KafkaError("GROUP_ID_NOT_FOUND", f"Consumer group '{group}' does not exist.",
                     field="group")
    names = {g for (g,) in conn.execute("SELECT DISTINCT grp FROM group_offsets")}
    names |= {g for (g,) in conn.execute("SELECT DISTINCT grp FROM group_members")}
    err.missing = ("group", group)
    not_found(err, group, sorted(names))
    return err


def groups(kafka: TopicStore) -> list[GroupInfo]:
    """Every group with committed offsets or live members, by name (for a principal: those
    it may DESCRIBE, Kafka's ListGroups)."""
    now = kafka.now_ms()
    with kafka._schema.read() as conn:
        names = sorted({g for (g,) in conn.execute("SELECT DISTINCT grp FROM group_offsets")}
                       | {g for (g,) in conn.execute(
                           f"SELECT DISTINCT grp FROM group_members WHERE "
                           f"{LIVE_MEMBER_SQL}", (now,))})
    names = kafka.visible("GROUP", names)
    with kafka._schema.read() as conn:
        out = []
        catalog = _catalog(conn)
        for name in names:
            info = _group(conn, name, now, catalog)
            if info is not None:
                out.append(_described(kafka, info))
        return out


def assignment(kafka: TopicStore, group: str, member: str) -> list[tuple[str, int]]:
    """The partitions ``member`` holds: the RangeAssignor's of the generation it is in (none
    while it waits for a rebalance to complete)."""
    now = kafka.now_ms()
    with kafka._schema.read() as conn:
        info = _group(conn, group, now)
    if info is None:
        return []
    for m in info.members:
        if m.member == member:
            return list(m.assignment)
    return []


def check_delete_group(kafka: TopicStore, group: str) -> None:
    """What :func:`delete_group` refuses before deleting, without deleting (asked before a
    confirmation): DELETE on the group, then GROUP_ID_NOT_FOUND for a group that does not
    exist (Kafka's DeleteGroups asks nothing else: no DESCRIBE)."""
    kafka.authorize("DeleteGroups", group=group)
    now = kafka.now_ms()
    with kafka._schema.read() as conn:
        if _group(conn, group, now) is None:
            raise _unknown_group(conn, group)


def delete_group(kafka: TopicStore, group: str) -> None:
    """Delete the group's committed offsets: NON_EMPTY_GROUP while it has live members,
    GROUP_ID_NOT_FOUND when it has nothing."""
    _check_group(group, empty=True)
    kafka.authorize("DeleteGroups", group=group)
    now = kafka.now_ms()
    with timed_write(kafka, now) as conn:
        live = _live(conn, group, now)
        if live:
            err = KafkaError("NON_EMPTY_GROUP", "The group is not empty.", field="group")
            err.detail = (f"group '{group}' has {len(live)} live member"
                          f"{'' if len(live) == 1 else 's'} (state "
                          f"{_state(conn, group, True)}): it can be "
                          "deleted once they leave or their session times out")
            raise err
        n = conn.execute("DELETE FROM group_offsets WHERE grp = ?", (group,)).rowcount
        if not n:
            raise _unknown_group(conn, group)
        conn.execute("DELETE FROM group_generations WHERE grp = ?", (group,))


def delete_offsets(kafka: TopicStore, group: str, scope: Iterable[tuple[str, int | None]]
                   ) -> list[tuple[str, int | None, KafkaError | None]]:
    """Kafka's OffsetDelete (``kafka-consumer-groups --delete-offsets``): the committed
    offsets of ``scope``'s partitions removed from ``group`` ((topic, partition); partition
    None: every partition of the topic, as the tool asks the topic's partitions first).

    The whole request is refused without DELETE on the group (GROUP_AUTHORIZATION_FAILED)
    and for a group that does not exist (GROUP_ID_NOT_FOUND). Each partition then gets the
    broker's answer (KafkaApis handleOffsetDeleteRequest, the coordinator's deleteOffsets):
    TOPIC_AUTHORIZATION_FAILED without READ on the topic (DESCRIBE for a topic named
    without partitions), UNKNOWN_TOPIC_OR_PARTITION for a topic or partition that does not
    exist, GROUP_SUBSCRIBED_TO_TOPIC while a live member is subscribed to the topic, else
    None: its offset is gone (a partition without one has nothing to remove, no error).
    Rows ``(topic, partition, error)`` in the tool's order (partition None: the topic's own
    error)."""
    _check_group(group)
    kafka.authorize("OffsetDelete", group=group)
    wanted = list(dict.fromkeys(scope))
    named = {t for t, p in wanted if p is None}
    described = set(kafka.authorized("DESCRIBE", "TOPIC", sorted(named)))
    readable = set(kafka.authorized("READ", "TOPIC", sorted({t for t, _p in wanted})))
    now = kafka.now_ms()
    out: dict[tuple[str, int | None], KafkaError | None] = {}
    with timed_write(kafka, now) as conn:
        info = _group(conn, group, now)
        if info is None:
            raise _unknown_group(conn, group)
        counts, _ends = _catalog(conn)
        subscribed = {t for m in info.members for t in m.topics}
        for topic, part in wanted:
            if part is None:  # (the tool's describeTopics of a topic given without partitions)
                if topic not in described:
                    out[(topic, None)] = KafkaError("TOPIC_AUTHORIZATION_FAILED", field="topic")
                elif topic not in counts:
                    out[(topic, None)] = unknown_topic(topic)
                else:
                    out.update(_offset_delete(conn, group, topic, range(counts[topic]),
                                              topic in readable, topic in subscribed))
                continue
            if topic in readable and topic in counts and not 0 <= part < counts[topic]:
                out[(topic, part)] = unknown_partition(topic, part, counts[topic])
                continue
            out.update(_offset_delete(conn, group, topic, [part], topic in readable,
                                      topic in subscribed, known=topic in counts))
    # (the tool's order: by the text topic + partition, "t10" before "t2")
    return [(t, p, e) for (t, p), e in
            sorted(out.items(), key=lambda kv: kv[0][0] + str(-1 if kv[0][1] is None
                                                              else kv[0][1]))]


def _offset_delete(conn: Any, group: str, topic: str, parts: Iterable[int], readable: bool,
                   subscribed: bool, *, known: bool = True
                   ) -> dict[tuple[str, int | None], KafkaError | None]:
    """One topic's partitions of :func:`delete_offsets`, in the broker's order of checks."""
    parts = list(parts)
    if not readable:
        return {(topic, p): KafkaError("TOPIC_AUTHORIZATION_FAILED", field="topic")
                for p in parts}
    if not known:
        return {(topic, p): unknown_topic(topic) for p in parts}
    if subscribed:
        return {(topic, p): KafkaError("GROUP_SUBSCRIBED_TO_TOPIC", field="topic")
                for p in parts}
    conn.executemany("DELETE FROM group_offsets WHERE grp = ? AND topic = ? AND partition = ?",
                     [(group, topic, p) for p in parts])
    return {(topic, p): None for p in parts}
