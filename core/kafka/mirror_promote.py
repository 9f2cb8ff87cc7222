"""State changes of mirror topics an operator asks for: pause / resume, promote / failover
with offset clamping, and failing back (``truncate_and_restore``, ``reverse_and_start``,
``reverse_and_pause``).

Promote refuses (per topic, in its result) while the source is unreachable, a partition lags,
a synced config differs, or a synced group offset differs; failover never refuses. Both set
the mirror PENDING_STOPPED; :func:`finish_pending` then (promote: after a final config and
offset sync) clamps and stops it. Clamping (Confluent's Mirror Topics documentation: "Why
consumer offsets may be clamped"): every consumer group offset the link synced for the topic
(a group the offset sync ever wrote for that topic, any partition) that is beyond the mirror
partition's log end offset is reset to it; each clamp is reported (group, topic, partition,
from, to). ``dry_run`` computes the same results and clamps and changes nothing.

Reversing (Confluent's ``reverse-and-start-mirror`` / ``reverse-and-pause-mirror``; the rules
are :func:`_reverse_check`, one definition for both verbs): run on the cluster holding the
mirror, on a bidirectional link (jetlink's form: a destination link of the same name on each
cluster, each pointing at the other) with both clusters up. The mirror stops as in failover
(clamps made and reported) and its source topic becomes a mirror of it through the link of
the same name on the source cluster, truncated to where this mirror stopped (the records the
mirror never copied are counted per partition, as truncate-and-restore counts them);
reverse-and-pause leaves that new mirror PAUSED (``resume`` starts it). Every condition is
checked before anything changes. Confluent Platform's ``promote-local-and-start-remote-mirror``
/ ``promote-local-and-pause-remote-mirror`` (:func:`promote_local_and_start`,
:func:`promote_local_and_pause`) are the same reversal with the local mirror PROMOTED rather
than failed over: promote's conditions (source reachable, no lag, configs and consumer offsets
synced; :func:`_promote_problem`) are checked first, and once they hold the promote's final
sync has nothing left to copy, so the stop is the reversal's. The two clusters are two
databases: the stop is marked (``pending = 'reverse'`` on the stopped row) until the restore is
written, so a run killed in between is finished by running the same verb again.

Failing back removes the fence ``dr fence`` put on the old source topic (its DENY WRITE ACL,
core/kafka/acl_fence.py): :func:`truncate_and_restore`, which the reverse verbs run on the
other side too, drops it once the topic is a mirror again.

Its functions take the mirrors' state (:class:`~jetlink.core.kafka.mirror_state.MirrorState`)
as their first argument; the ``Mirrors`` facade binds them as its methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import did_you_mean
from .acl_fence import unfence_topic
from .errors import KafkaError
from .mirror_copy import pending_offsets, sync_configs, write_offsets
from .mirror_model import (
    ACTIVE,
    FAILED,
    NO_ERROR,
    PAUSED,
    PENDING_STOPPED,
    STOPPED,
    SYNCED_CONFIGS,
    AlterResult,
    MirrorInfo,
    OffsetClamp,
    TruncateResult,
    already_stopped_message,
    code_of,
    not_mirrored_message,
    now_ms,
)

if TYPE_CHECKING:  # pragma: no cover
    from .mirror_state import MirrorState

__all__ = [
    "failover",
    "finish_pending",
    "pause",
    "promote",
    "promote_local_and_pause",
    "promote_local_and_start",
    "restorable",
    "resume",
    "reverse_and_pause",
    "reverse_and_start",
    "truncate_and_restore",
]

# The mark a reverse leaves on the mirror it stopped until its source is restored as the
# mirror (``mirrors.pending`` of a STOPPED row): a killed reverse is finished by a re-run.
REVERSING = "reverse"


def _select(m: MirrorState, topics: Sequence[str], link: str) -> list[tuple[str, tuple | None]]:
    m.links.get(link)
    m.refresh(link)
    rows = {r[0]: r for r in m._rows(link)}
    # a topic named twice is done once, where it was first named
    names = list(dict.fromkeys(topics)) if topics else list(rows)
    return [(t, rows.get(t)) for t in names]


def _not_mirrored(m: MirrorState, res: AlterResult, link: str) -> None:
    """``res`` as the result of a topic that is no mirror topic of ``link``, with a hint for
    people: the link it is a mirror topic of, else the closest of the link's mirror topics
    (did_you_mean)."""
    res.not_mirrored = True
    res.error_code = code_of("INVALID_REQUEST")
    res.error_message = not_mirrored_message(res.mirror_topic_name)
    owner = [r[1] for r in m._rows(topic=res.mirror_topic_name) if r[1] != link]
    res.hint = (f"it is a mirror topic of link {owner[0]}: give --link {owner[0]}" if owner
                else did_you_mean(res.mirror_topic_name, [r[0] for r in m._rows(link)]))


def pause(m: MirrorState, topics: Sequence[str], link: str, *, dry_run: bool = False
          ) -> list[AlterResult]:
    return _set_paused(m, topics, link, True, dry_run)


def resume(m: MirrorState, topics: Sequence[str], link: str, *, dry_run: bool = False
           ) -> list[AlterResult]:
    return _set_paused(m, topics, link, False, dry_run)


def _set_paused(m: MirrorState, topics: Sequence[str], link: str, paused: bool, dry_run: bool
                ) -> list[AlterResult]:
    out = []
    mirrors = []  # the entries of topics that are mirrors: their lags, refused or not
    for name, row in _select(m, topics, link):
        res = AlterResult(name)
        if row is not None:
            mirrors.append(res)
        if row is None:
            _not_mirrored(m, res, link)
        elif row[3] in (STOPPED, PENDING_STOPPED, FAILED):
            res.error_code = code_of("INVALID_REQUEST")
            res.error_message = (f"Topic '{name}' is {row[3]}: only an active or paused "
                                 "mirror can be paused or resumed")
        elif not dry_run:
            with m._schema.write() as conn:
                conn.execute("UPDATE mirrors SET paused = ? WHERE topic = ?",
                             (int(paused), name))
        if row is not None and res.ok and not paused:
            res.hint = _link_paused(m, link)
        out.append(res)
    if not dry_run:
        m.refresh(link)
    for res in mirrors:
        res.mirror_lags = m.describe(res.mirror_topic_name, link).mirror_lags
    return out


def _link_paused(m: MirrorState, link: str) -> str | None:
    """For people: the mirror stays PAUSED while its whole link is paused, whatever its own
    resume; how to resume the link (None: the link is not paused)."""
    if not m.links.get(link, with_topics=False).paused:
        return None
    return (f"link {link} is paused (cluster.link.paused=true): its mirrors stay PAUSED until "
            f"it is resumed: jetlink links alter {link} --config cluster.link.paused=false")


def promote(m: MirrorState, topics: Sequence[str], link: str, *, dry_run: bool = False
            ) -> list[AlterResult]:
    return _stop(m, topics, link, "promote", dry_run)


def failover(m: MirrorState, topics: Sequence[str], link: str, *, dry_run: bool = False
             ) -> list[AlterResult]:
    return _stop(m, topics, link, "failover", dry_run)


def _stop(m: MirrorState, topics: Sequence[str], link: str, how: str, dry_run: bool,
          mark: str | None = None) -> list[AlterResult]:
    li, src = m._source(link)
    out = []
    for name, row in _select(m, topics, link):
        res = AlterResult(name)
        out.append(res)
        if row is None:
            _not_mirrored(m, res, link)
            continue
        # a mirror's lags are in its entry, refused or not (AlterMirrorStatusResponseData:
        # ``mirror_lags`` required); [] only for a topic that is no mirror
        info = m._info(row, src)
        res.mirror_lags = info.mirror_lags
        if row[3] == STOPPED:
            res.already_stopped = True
            res.error_code = code_of("INVALID_REQUEST")
            res.error_message = already_stopped_message(name, link)
            continue
        if how == "promote" and row[3] != PENDING_STOPPED:
            problem = _promote_problem(m, li, row, src, info)
            if problem:
                res.error_code = code_of("INVALID_REQUEST")
                res.error_message = problem
                continue
        if dry_run:  # the clamps stopping it would make (else: made when it stops)
            res.clamps = _clamps(m, link, name, include_pending_sync=(how == "promote"),
                                 src=src, li=li)
            continue
        with m._schema.write() as conn:
            conn.execute(
                "UPDATE mirrors SET status = ?, pending = ?, status_time_ms = ? "
                "WHERE topic = ?", (PENDING_STOPPED, mark or how, now_ms(m.clock), name))
    if not dry_run:
        done = finish_pending(m, link)
        by_topic: dict[str, list[OffsetClamp]] = {}
        for c in done:
            by_topic.setdefault(c.topic, []).append(c)
        for res in out:
            if res.ok:
                res.clamps = by_topic.get(res.mirror_topic_name, [])
    return out


def _promote_problem(m: MirrorState, li: Any, row: tuple, src: Any, info: MirrorInfo) -> str | None:
    name = row[0]
    state = m._state(li.name)
    if state == "FAILED" and li.link_error_message:  # (reachable, but not the link's source)
        return (f"Topic '{name}' can not be promoted: cluster link {li.name} is FAILED "
                f"({li.link_error}: {li.link_error_message}) (failover stops the mirror "
                "regardless)")
    if src is None or state in ("UNAVAILABLE", "FAILED"):
        return (f"Topic '{name}' can not be promoted: the source cluster "
                f"{li.source_cluster} is not reachable (failover stops the mirror "
                "regardless)")
    # every condition that holds the promote back, each said (not the first alone: the
    # next would only show once it clears)
    held: list[str] = []
    lagging = [p for p in info.mirror_lags if p.lag > 0]
    if lagging:
        parts = ", ".join(f"partition {p.partition}: {p.lag}" for p in lagging)
        # a paused mirror copies nothing: waiting never catches it up
        wait = ("its link is paused: resume it (jetlink links alter "
                f"{li.name} --config cluster.link.paused=false) and let it catch up"
                if info.mirror_status == PAUSED and li.paused else
                f"it is paused: resume it (jetlink mirrors resume {name} --link {li.name}) "
                "and let it catch up" if info.mirror_status == PAUSED
                else "wait for it to catch up")
        held.append(f"it has mirroring lag ({parts}); {wait}, or use failover")
    try:
        scfg = src.describe_topic(row[2])
    except KafkaError:
        return f"Topic '{name}' can not be promoted: its source topic is gone"
    mine = m.kafka.describe_topic(name)
    diff = [k for k in SYNCED_CONFIGS
            if scfg.effective_configs().get(k) != mine.effective_configs().get(k)]
    if diff or len(scfg.partitions) != len(mine.partitions):
        what = ", ".join(diff) or "number of partitions"
        held.append(f"config sync is pending ({what}): the link syncs topic configs every "
                    f"{li.config.topic_config_sync_ms} ms (topic.config.sync.ms), at a "
                    "replication step when due")
    pending = pending_offsets(m, li, {name: row[2]})
    if pending:
        groups = ", ".join(sorted({g for g, _t, _p, _o in pending}))
        held.append(f"consumer offset sync is pending (groups {groups}): the link syncs "
                    f"offsets every {li.config.consumer_offset_sync_ms} ms "
                    "(consumer.offset.sync.ms), at a replication step when due")
    if not held:
        return None
    if len(held) > 1 or not held[0].startswith("it has mirroring lag"):
        # (what to do about a pending sync: the lag's remedy is in its own sentence)
        held.append(f"run jetlink replicate once the sync is due (jetlink links alter "
                    f"{li.name} --config K=MS shortens an interval), or use failover")
    return f"Topic '{name}' can not be promoted: " + "; ".join(held)


def _clamps(m: MirrorState, link: str, topic: str, *, include_pending_sync: bool, src: Any,
            li: Any) -> list[OffsetClamp]:
    """The clamps stopping ``topic`` would make now (after a promote's final offset sync
    when ``include_pending_sync``): synced group offsets beyond the log end offsets."""
    ends = {p.partition: p.log_end for p in m.kafka.offsets(topic)}
    end_sql = "CASE g.partition " + " ".join(
        f"WHEN {int(p)} THEN {int(e)}" for p, e in ends.items()) + " ELSE 0 END" \
        if ends else "0"
    with m._schema.read() as conn:
        current = {(g, p): off for g, p, off in conn.execute(
            "SELECT g.grp, g.partition, g.committed FROM synced_offsets s JOIN "
            "group_offsets g ON g.grp = s.grp AND g.topic = s.topic "
            f"WHERE s.link = ? AND s.topic = ? AND g.committed > ({end_sql})",
            (link, topic))}
    if include_pending_sync and src is not None:
        with m._schema.read() as conn:
            row = conn.execute("SELECT source_topic FROM mirrors WHERE topic = ?",
                               (topic,)).fetchone()
        if row:
            for g, _t, p, off in pending_offsets(m, li, {topic: row[0]}):
                current[(g, p)] = off
    return [OffsetClamp(g, topic, p, off, ends.get(p, 0))
            for (g, p), off in sorted(current.items()) if off > ends.get(p, 0)]


def finish_pending(m: MirrorState, link: str | None = None) -> list[OffsetClamp]:
    """PENDING_STOPPED mirrors -> STOPPED (promote: final config and offset sync first),
    clamping synced group offsets; returns the clamps made."""
    clamps: list[OffsetClamp] = []
    for row in m._rows(link):
        if row[3] != PENDING_STOPPED:
            continue
        topic, lname, how = row[0], row[1], row[8]
        try:
            li, src = m._source(lname)
        except KafkaError:
            li, src = None, None
        if how == "promote" and src is not None and li is not None:
            sync_configs(m, li, src, [row])
            write_offsets(m, li, {topic: row[2]})
        made = _clamps(m, lname, topic, include_pending_sync=False, src=None, li=li)
        now = now_ms(m.clock)
        # One transaction: STOPPED, the clamps and the topic made writable are made together
        # or not at all. (Three, a run killed between them left a STOPPED mirror a re-run
        # skips, its topic still read-only and its offsets past the log end.)
        with m._schema.write() as conn:
            seq = conn.execute("SELECT coalesce(max(stopped_seq), 0) + 1 FROM mirrors"
                               ).fetchone()[0]
            conn.execute("UPDATE mirrors SET status = ?, pending = ?, error = ?, "
                         "status_time_ms = ?, stopped_seq = ? WHERE topic = ?",
                         (STOPPED, REVERSING if how == REVERSING else None, NO_ERROR, now,
                          seq, topic))
            if made:
                ends = {p.partition: p.log_end for p in m.kafka.offsets(topic)}
                end_sql = "CASE partition " + " ".join(
                    f"WHEN {int(p)} THEN {int(e)}" for p, e in ends.items()) + " ELSE 0 END"
                conn.execute(
                    f"UPDATE group_offsets SET committed = ({end_sql}), commit_ms = ? "
                    f"WHERE topic = ? AND committed > ({end_sql}) AND grp IN (SELECT grp "
                    "FROM synced_offsets WHERE link = ? AND topic = ?)",
                    (now, topic, lname, topic))
                clamps += made
            m.kafka.set_mirror_link(topic, None)  # (joins this transaction)
    return clamps


def _unreachable(li: Any, link: str, rule: str = "") -> KafkaError:
    """The source cluster of ``link`` cannot be reached (down, removed, or the link FAILED):
    the refusal of the verbs that need both clusters up, ``rule`` saying why."""
    return KafkaError("INVALID_REQUEST", f"Cluster link '{link}': the source cluster "
                      f"{li.source_cluster} can not be reached" + (f": {rule}" if rule else ""),
                      field="link")


def _truncation(m: MirrorState, topic: str, stopped: dict[int, int]) -> list[dict[str, int]]:
    """Per partition of local ``topic``: where it is truncated to (the other side's mirror
    stopped at ``stopped``) and how many records lie beyond (the records that mirror never
    copied)."""
    parts = []
    for p in m.kafka.describe_topic(topic).partitions:
        to = stopped.get(p.partition, 0)
        parts.append({"partition": p.partition,
                      "messages_truncated": max(p.log_end - max(to, p.log_start), 0),
                      "offset_truncated_to": min(to, p.log_end)})
    return parts


def _truncation_clamps(m: MirrorState, topic: str, parts: list[dict[str, int]]
                       ) -> list[OffsetClamp]:
    """The committed group offsets of ``topic`` beyond where :func:`_truncation` cuts each
    partition: clamped to the new log end (every group, synced or not: each would otherwise
    skip the records the new mirror copies into those offsets)."""
    to = {p["partition"]: p["offset_truncated_to"] for p in parts}
    return [OffsetClamp(g, topic, p, off, to[p])
            for g, offsets in m.kafka.committed_all(topic).items()
            for (_t, p), off in sorted(offsets.items()) if p in to and off > to[p]]


def _source_named(m: MirrorState, link: str, verb: str, topic: str) -> tuple[Any, Any]:
    """``m._source(link)``; a link that is not on this cluster (CLUSTER_LINK_NOT_FOUND, its
    text Kafka's) says, when another cluster holds a link of that name, which side the verb
    runs on: truncate-and-restore on the cluster the topic failed over from, through a link
    from the one that took over; the reverse verbs on the cluster holding the mirror."""
    try:
        return m._source(link)
    except KafkaError as err:
        if err.name != "CLUSTER_LINK_NOT_FOUND":
            raise
        elsewhere = []
        for name in m.datadir.cluster_names():
            if name == m.cluster or m.datadir.open(name).kind != "kafka":
                continue
            try:
                there = type(m)(m.datadir, name, m.clock).links.get(link, with_topics=False)
            except KafkaError:
                continue
            elsewhere.append((name, there.source_cluster))
        if verb == "truncate-and-restore":
            took = [c for c, src in elsewhere if src == m.cluster]
            if took:
                err.detail = (f"{verb} runs here, on the cluster the topic failed over from, "
                              f"through a link from where it took over: jetlink --cluster "
                              f"{m.cluster} links create {link} --source-cluster {took[0]}")
        elif elsewhere:
            where = elsewhere[0][0]
            err.detail = (f"the link is on cluster {where}, which holds the mirror: jetlink "
                          f"--cluster {where} mirrors {verb} {topic} --link {link}")
        raise


def truncate_and_restore(m: MirrorState, topic: str, link: str, *, dry_run: bool = False,
                         paused: bool = False) -> TruncateResult:
    """Make local ``topic`` a mirror (through ``link``) of the other side's topic that
    failed over: truncate it per partition to the log end offsets at which that mirror
    stopped, then resume mirroring from there (``paused``: the new mirror starts PAUSED,
    in the same transaction)."""
    from .epochs import current_epoch, history, truncate_partition

    li, src = _source_named(m, link, "truncate-and-restore", topic)
    if src is None:
        raise _unreachable(li, link)
    prefix = li.config.prefix
    if prefix and not topic.startswith(prefix):
        raise KafkaError("INVALID_REQUEST", f"Topic '{topic}' does not carry the link's "
                         f"prefix '{prefix}'", field="topic")
    source_topic = topic[len(prefix):] if prefix else topic
    other = type(m)(m.datadir, li.source_cluster, m.clock)
    rows = [r for r in other._rows(topic=source_topic) if r[3] == STOPPED]
    if not rows:
        err = KafkaError("INVALID_REQUEST", f"Topic '{source_topic}' on cluster "
                         f"{li.source_cluster} is not a stopped mirror: truncate-and-restore "
                         "fails back to a topic that was failed over or promoted",
                         field="topic")
        if any(r[3] == STOPPED for r in m._rows(topic=topic)):  # run on the side that took over
            err.detail = (f"topic {topic} here, on cluster {m.cluster}, is the stopped mirror: "
                          f"truncate-and-restore runs on the cluster it failed over from, "
                          f"{li.source_cluster}, through a link from this one: jetlink --cluster "
                          f"{li.source_cluster} links create {link} --source-cluster "
                          f"{m.cluster}, then jetlink --cluster {li.source_cluster} mirrors "
                          f"truncate-and-restore {source_topic} --link {link}")
        raise err
    mine = m.kafka.describe_topic(topic)
    if mine.mirror_link == link and any(r[2] == source_topic for r in m._rows(link, topic)):
        # restored by an earlier run (finished, or killed after its transaction): the
        # mirror of that topic through that link is what the verb makes; nothing is left
        return TruncateResult(topic, [], already_done=True)
    if mine.mirror_link:
        raise KafkaError("INVALID_REQUEST", f"Topic '{topic}' is already a mirror topic",
                         field="topic")
    # the restored mirror copies the other side's topic through the link: its principal
    # needs what a created mirror's needs there, checked before anything is truncated
    from .authz import ANONYMOUS, mirror_refusal

    refused = mirror_refusal(src.cluster, li.principal or ANONYMOUS, source_topic, link)
    if refused is not None:
        refused.description += (f" (truncate-and-restore makes topic '{topic}' a mirror of "
                                "it through that link)")
        raise refused
    stopped = _stopped_at(m, other, rows[0], topic)
    parts = _truncation(m, topic, stopped)
    clamps = _truncation_clamps(m, topic, parts)
    if dry_run:
        return TruncateResult(topic, parts, clamps=clamps)
    source_id = src.describe_topic(source_topic).topic_id  # the topic mirrored from now on
    t_id = m._topic_rowid(topic)
    now = now_ms(m.clock)
    with src._schema.read() as sconn:  # the new source's epochs: a cut of it is followed
        s_epochs = history(sconn, m._topic_rowid(source_topic, "main", sconn))
        epochs = {p["partition"]: current_epoch(s_epochs.get(p["partition"], ()))
                  for p in parts}
    with m._schema.write() as conn:
        for part in parts:  # (a new epoch where records went: the topic's other mirrors
            # follow the cut, core/kafka/epochs.py)
            part["messages_truncated"] = truncate_partition(
                conn, t_id, part["partition"], part["offset_truncated_to"])[0]
        conn.executemany(
            "UPDATE group_offsets SET committed = ?, commit_ms = ? WHERE grp = ? AND "
            "topic = ? AND partition = ? AND committed > ?",
            [(c.to_offset, now, c.group, topic, c.partition, c.to_offset) for c in clamps])
        conn.execute("DELETE FROM mirrors WHERE topic = ?", (topic,))
        conn.execute("DELETE FROM mirror_partitions WHERE topic = ?", (topic,))
        conn.execute(
            "INSERT INTO mirrors(topic, link, source_topic, status, status_time_ms, "
            "created_ms, start_spec, started, paused, source_topic_id) "
            "VALUES (?, ?, ?, ?, ?, ?, 'earliest', 1, ?, ?)",
            (topic, link, source_topic, PAUSED if paused else ACTIVE, now, now, int(paused),
             source_id))
        conn.executemany(
            "INSERT INTO mirror_partitions(topic, partition, last_fetch_offset, source_epoch) "
            "VALUES (?, ?, ?, ?)",
            [(topic, p["partition"], p["offset_truncated_to"], epochs[p["partition"]])
             for p in parts])
        # (in the same transaction: never a mirror that still takes writes)
        m.kafka.set_mirror_link(topic, link)
        unfence_topic(m.cl, topic)  # dr fence's DENY WRITE on the old source topic, if any
    return TruncateResult(topic, parts, clamps=clamps)


def _stopped_at(m: MirrorState, other: MirrorState, row: tuple, topic: str) -> dict[int, int]:
    """Per partition, where local ``topic`` is cut to: where the other side's stopped
    mirror ``row`` stopped (its log end at its last fetch: it took writes since), or where
    its source epoch of that fetch ends in this topic's history when this topic was cut
    after it (the records it holds past that are this topic's old ones, not this topic's
    now: OffsetsForLeaderEpoch)."""
    from .epochs import epoch_end, history

    stopped = {p.partition: p.last_source_fetch_offset for p in other._lags(row, None)}
    with other._schema.read() as oconn:
        fetched = dict(oconn.execute("SELECT partition, source_epoch FROM mirror_partitions "
                                     "WHERE topic = ?", (row[0],)))
    with m.kafka._schema.read() as conn:  # (the topics' component holds the epochs)
        mine = history(conn, m._topic_rowid(topic, "main", conn))
    for p, epoch in fetched.items():
        end = None if epoch is None else epoch_end(mine.get(p, ()), epoch)
        if end is not None and p in stopped:
            stopped[p] = min(stopped[p], end)
    return stopped


def reverse_and_start(m: MirrorState, topic: str, link: str, *, dry_run: bool = False
                      ) -> tuple[AlterResult, TruncateResult]:
    """Reverse this cluster's mirror ``topic``: it stops (as failover) and its source topic
    becomes a mirror of it through the link of the same name on the source cluster, mirroring
    at once (module docstring)."""
    return _reverse(m, topic, link, paused=False, dry_run=dry_run)


def reverse_and_pause(m: MirrorState, topic: str, link: str, *, dry_run: bool = False
                      ) -> tuple[AlterResult, TruncateResult]:
    """:func:`reverse_and_start`, leaving the new mirror on the source cluster PAUSED (its
    ``resume`` starts it)."""
    return _reverse(m, topic, link, paused=True, dry_run=dry_run)


def promote_local_and_start(m: MirrorState, topic: str, link: str, *, dry_run: bool = False
                            ) -> tuple[AlterResult, TruncateResult]:
    """:func:`reverse_and_start` with promote's conditions for the local mirror (module
    docstring): KafkaError INVALID_REQUEST with promote's text when one does not hold."""
    return _reverse(m, topic, link, paused=False, dry_run=dry_run, promote=True)


def promote_local_and_pause(m: MirrorState, topic: str, link: str, *, dry_run: bool = False
                            ) -> tuple[AlterResult, TruncateResult]:
    """:func:`promote_local_and_start`, leaving the new remote mirror PAUSED."""
    return _reverse(m, topic, link, paused=True, dry_run=dry_run, promote=True)


def restorable(m: MirrorState, link: str) -> list[str]:
    """The local topics ``truncate_and_restore`` through ``link`` could make mirrors again:
    not mirrors themselves, carrying the link's prefix, whose counterpart on the link's source
    cluster is a STOPPED mirror (sorted)."""
    li, src = m._source(link)
    if src is None:
        return []
    prefix = li.config.prefix
    other = type(m)(m.datadir, li.source_cluster, m.clock)
    stopped = {r[0] for r in other._rows() if r[3] == STOPPED}
    return sorted(t.name for t in m.kafka.topics()
                  if not t.mirror_link and t.name.startswith(prefix)
                  and t.name[len(prefix):] in stopped)


def _reverse_check(m: MirrorState, topic: str, link: str, verb: str
                   ) -> tuple[Any, MirrorState, tuple, str]:
    """The conditions of both reverse verbs, checked before anything changes: (the link, the
    source cluster's mirror state, the mirror's row, the source topic) or a KafkaError
    INVALID_REQUEST naming what is missing."""
    li, src = _source_named(m, link, verb, topic)
    if src is None or m._state(link) in ("UNAVAILABLE", "FAILED"):
        raise _unreachable(li, link, f"{verb} needs both clusters up (failover stops the "
                           "mirror whatever the source's state)")
    other = type(m)(m.datadir, li.source_cluster, m.clock)
    back = f"{verb} needs the link on both clusters, each pointing at the other"
    try:
        rev = other.links.get(link, with_topics=False)
    except KafkaError as err:
        if err.name != "CLUSTER_LINK_NOT_FOUND":
            raise
        raise KafkaError("INVALID_REQUEST", f"Cluster link '{link}' is not bidirectional: "
                         f"cluster {li.source_cluster} has no link '{link}' back to "
                         f"{m.cluster} ({back})", field="link") from None
    if rev.source_cluster != m.cluster:
        raise KafkaError("INVALID_REQUEST", f"Cluster link '{link}' is not bidirectional: "
                         f"on cluster {li.source_cluster} it points to {rev.source_cluster}, "
                         f"not back to {m.cluster} ({back})", field="link")
    if not rev.config.is_destination:
        raise KafkaError("INVALID_REQUEST", f"Cluster link '{link}' on cluster "
                         f"{li.source_cluster} has link.mode={rev.config.link_mode}: jetlink "
                         "runs destination links only, and the reversed mirror needs one",
                         field="link")
    rows = m._rows(link, topic)
    if not rows:
        raise KafkaError("INVALID_REQUEST", f"{not_mirrored_message(topic)} by link "
                         f"'{link}'", field="topic")
    row = rows[0]
    if row[3] == STOPPED and row[8] != REVERSING:
        raise KafkaError("INVALID_REQUEST", f"{already_stopped_message(topic, link)}: {verb} "
                         "reverses a mirror that is still mirroring (after a failover, "
                         f"truncate-and-restore on cluster {li.source_cluster} fails back)",
                         field="topic")
    source_topic = row[2]
    if source_topic != rev.config.prefix + topic:
        raise KafkaError("INVALID_REQUEST", f"Topic '{source_topic}' on cluster "
                         f"{li.source_cluster} can not mirror '{topic}' through link "
                         f"'{link}' there: a mirror topic's name is the link's prefix "
                         f"'{rev.config.prefix}' followed by its source topic's name",
                         field="topic")
    theirs = other.kafka.describe_topic(source_topic)
    if theirs.mirror_link and not (row[3] == STOPPED and theirs.mirror_link == link):
        raise KafkaError("INVALID_REQUEST", f"Topic '{source_topic}' on cluster "
                         f"{li.source_cluster} is itself a mirror topic (of link "
                         f"'{theirs.mirror_link}'): only a writable source can be reversed",
                         field="topic")
    # the reversed mirror copies this cluster's topic through the link back: its principal
    # needs what a created mirror's needs (READ and DESCRIBE_CONFIGS here, when ACLs are
    # enforced), checked as mirror create checks it, before anything changes
    from .authz import ANONYMOUS, mirror_refusal

    refused = mirror_refusal(m.cl, rev.principal or ANONYMOUS, topic, link)
    if refused is not None:
        refused.description += (f" ({verb} makes topic '{source_topic}' of cluster "
                                f"{li.source_cluster} a mirror of it through that link)")
        raise refused
    return li, other, row, source_topic


def _reverse(m: MirrorState, topic: str, link: str, *, paused: bool, dry_run: bool,
             promote: bool = False) -> tuple[AlterResult, TruncateResult]:
    if promote:
        verb = ("promote-local-and-pause-remote-mirror" if paused
                else "promote-local-and-start-remote-mirror")
    else:
        verb = "reverse-and-pause" if paused else "reverse-and-start"
    li, other, row, source_topic = _reverse_check(m, topic, link, verb)
    if promote and row[3] != STOPPED:  # a killed run's stop was already checked
        m.refresh()
        row = m._rows(link, topic)[0]
        _li, src = m._source(link)
        problem = _promote_problem(m, li, row, src, m._info(row, src))
        if problem:
            raise KafkaError("INVALID_REQUEST", f"{problem} ({verb} promotes the local "
                             "mirror)", field="topic")
    status = PAUSED if paused or other.links.get(link, with_topics=False).paused else ACTIVE
    if row[3] == STOPPED:  # a reverse stopped it and was killed before the restore
        res = AlterResult(topic, mirror_lags=m._info(row, None).mirror_lags)
    else:
        res = _stop(m, [topic], link, "failover", dry_run, mark=REVERSING)[0]
        if not res.ok:  # pragma: no cover - _reverse_check refused what failover refuses
            raise KafkaError("INVALID_REQUEST", res.error_message, field="topic")
    # Truncated to where the mirror stopped (or stops now), as truncate_and_restore reads
    # it from the stopped mirror
    stopped = _stopped_at(other, m, row, source_topic)
    restored = other.kafka.describe_topic(source_topic).mirror_link == link
    parts = _truncation(other, source_topic, stopped)
    if restored:  # by the killed run: what it truncated is gone, nothing more is
        parts = [dict(p, messages_truncated=0) for p in parts]
    if dry_run:
        return res, TruncateResult(source_topic, parts, status,
                                   clamps=_truncation_clamps(other, source_topic, parts))
    if restored:  # only the new mirror's paused flag and the mark are left
        with other._schema.write() as conn:
            conn.execute("UPDATE mirrors SET paused = ? WHERE topic = ?",
                         (int(paused), source_topic))
        trunc = TruncateResult(source_topic, parts)
    else:
        trunc = truncate_and_restore(other, source_topic, link, paused=paused)
    with m._schema.write() as conn:
        conn.execute("UPDATE mirrors SET pending = NULL WHERE topic = ? AND pending = ?",
                     (topic, REVERSING))
    trunc.mirror_status = other.describe(source_topic, link).mirror_status
    return res, trunc
