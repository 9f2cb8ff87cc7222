"""A console consumer of one topic on the engine: the consumer-group protocol the way
``kafka-console-consumer`` runs it (``jetlink topic consume``).

:class:`TopicConsumer` joins the group (when it has one) as a member of its own, and each
:meth:`TopicConsumer.poll` is one pass: a heartbeat (joining again when the group evicted the
member or its members changed: a new generation), the partitions assigned to it, each read
from its position (the group's committed offset when it lies in the log, else the log start
with ``from_beginning``, else the log end; an offset that fell out of range is reset the
same way), at most :data:`FETCH_MAX` records per partition, handed over, then committed in
the generation the member joined in. A commit the group refuses because its members changed
meanwhile (ILLEGAL_GENERATION, or UNKNOWN_MEMBER_ID once evicted) ends the pass and is said
through ``on_notice``, as Kafka's consumer logs a failed commit; the member joins again: a
partition still its own keeps its position and is committed in the new generation (never
behind the group's offset), one that went to another member is dropped, and its new owner
reads it from the group's committed offset (the records this member handled since its last
commit of it are read again: at least once; the offset a new owner committed is never moved
back). :meth:`TopicConsumer.close` leaves the group. Without a group every partition is read
and nothing is committed.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .errors import KafkaError

if TYPE_CHECKING:  # pragma: no cover
    from .topics import Kafka, Record

__all__ = ["CLIENT_ID", "FETCH_MAX", "TopicConsumer"]

FETCH_MAX = 500  # records fetched per partition and pass
# a commit or heartbeat refused so: the member joins the group again (Kafka's consumer
# coordinator rejoins on both)
_REJOIN = ("ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID")
CLIENT_ID = "jetlink-consumer"


class TopicConsumer:
    """One member reading ``topic`` (see the module docstring)."""

    def __init__(self, kafka: Kafka, topic: str, *, group: str | None = None,
                 from_beginning: bool = False, session_timeout_ms: int = 45_000,
                 client_id: str = CLIENT_ID, partition: int | None = None,
                 offset: int | None = None,
                 on_notice: Callable[[str], Any] | None = None) -> None:
        self.kafka, self.topic, self.group = kafka, topic, group
        self.from_beginning = from_beginning
        # kafka-console-consumer's --partition / --offset: that partition alone (assigned,
        # no group), from that offset (out of the log: reset as any out-of-range position)
        if partition is not None and group is not None:
            raise ValueError("a consumer of one partition has no group")
        self.partition, self.offset = partition, offset
        self.session_timeout_ms = session_timeout_ms
        self.client_id = client_id
        self.member = f"{client_id}-{uuid.uuid4()}"
        self.positions: dict[int, int] = {}
        self.generation = -1
        self.on_notice = on_notice
        if group is not None:
            self._join()

    def _join(self, *, evicted: bool = False) -> dict[int, int | None]:
        """Join the group (again: evicted, or its members changed): the group's generation
        now. A member still live (its members changed: ILLEGAL_GENERATION) keeps the
        partitions still assigned to it: their positions (moved up to the group's committed
        offset if another member read further meanwhile) are committed in this generation
        where ahead of the group's offset, as Kafka's consumer commits before it gives a
        partition up and keeps the ones a cooperative rebalance leaves it; the others are
        dropped (their new owners read them from the group's committed offset). An evicted
        member (its session ran out: UNKNOWN_MEMBER_ID) lost every partition, as Kafka's
        onPartitionsLost: it commits nothing (an operator may have reset or deleted the
        group meanwhile) and reads each one from the group's committed offset. Returns
        ``{partition: position kept, or None: lost}`` of the partitions it held."""
        assert self.group is not None
        held = self.positions
        self.generation = self.kafka.join(
            self.group, self.member, [self.topic], session_timeout_ms=self.session_timeout_ms,
            client_id=self.client_id)
        self.positions = {}
        if evicted or not held:
            return dict.fromkeys(held)
        committed = self.kafka.committed(self.group)
        mine = set(self.assigned())
        ahead = {}
        for p, pos in held.items():
            if p not in mine:
                continue
            at = committed.get((self.topic, p))
            self.positions[p] = pos if at is None else max(pos, at)
            if at is None or pos > at:
                ahead[(self.topic, p)] = pos
        if ahead and self._refused(ahead) is not None:
            self.positions = {}  # changed again meanwhile: the next pass joins again
        return {p: self.positions.get(p) for p in held}

    def _refused(self, offsets: dict[tuple[str, int], int]) -> KafkaError | None:
        """Commit ``offsets`` in this member's generation; the group's refusal because its
        members changed or this member was evicted, as a value (None: committed)."""
        assert self.group is not None
        try:
            self.kafka.commit(self.group, offsets, member=self.member,
                              generation=self.generation)
        except KafkaError as err:
            if err.name not in _REJOIN:
                raise
            return err
        return None

    def _commit(self, offsets: dict[tuple[str, int], int]) -> bool:
        """Commit ``offsets`` in this member's generation. When the group refuses it (its
        members changed, or this member was evicted): join again (:meth:`_join`: what is
        still this member's is committed then), say so through on_notice, and False."""
        err = self._refused(offsets)
        if err is None:
            return True
        evicted = err.name == "UNKNOWN_MEMBER_ID"
        after = self._join(evicted=evicted)
        if self.on_notice is not None:
            at = ", ".join(f"{t}-{p} at offset {o}" for (t, p), o in sorted(offsets.items()))
            why = f" ({err.detail})" if err.detail else ""
            fates = ["its session had run out, so it lost its partitions: it reads them "
                     "from the group's committed offsets"] if evicted else [
                f"{self.topic}-{p} " + (
                    f"is still its own, committed at offset {after[p]}"
                    if after.get(p) is not None else "went to another member, which reads "
                    "it from the group's committed offset") for (_t, p) in sorted(offsets)]
            self.on_notice(
                f"Offset commit failed on partition{'s' if len(offsets) > 1 else ''} "
                f"{at}: {err.name}: {err.description}{why}; the consumer joined the "
                f"group again (generation {self.generation}): {'; '.join(fates)}")
        return False

    def assigned(self) -> list[int]:
        """The partitions this member reads (every one without a group, or the one asked
        for)."""
        if self.partition is not None:
            count = self.kafka.describe_topic(self.topic).partition_count
            if not 0 <= self.partition < count:
                from .topic_types import unknown_partition

                raise unknown_partition(self.topic, self.partition, count)
            return [self.partition]
        if self.group is None:
            return list(range(self.kafka.describe_topic(self.topic).partition_count))
        return [p for t, p in self.kafka.assignment(self.group, self.member) if t == self.topic]

    def _start_of(self, p: int, committed: dict[tuple[str, int], int], *,
                  reset: bool = False) -> int:
        """Where partition ``p`` is read from: the committed offset, the offset asked for
        (unless ``reset``: it fell out of the log), else the log start or end."""
        if self.offset is not None and not reset:
            return self.offset
        part = self.kafka.describe_topic(self.topic).partitions[p]
        off = committed.get((self.topic, p))
        if off is not None and part.log_start <= off <= part.log_end:
            return off
        return part.log_start if self.from_beginning else part.log_end

    def poll(self, limit: int | None, handle: Callable[[Record], Any]) -> int:
        """One pass: at most ``limit`` records (None: :data:`FETCH_MAX` per partition), each
        given to ``handle`` before its batch is committed; how many were read."""
        kafka, topic, group = self.kafka, self.topic, self.group
        if group is not None:
            try:
                kafka.heartbeat(group, self.member, self.generation)
            except KafkaError as err:
                if err.name not in _REJOIN:
                    raise
                evicted = err.name == "UNKNOWN_MEMBER_ID"
                if evicted and self.positions and self.on_notice is not None:
                    self.on_notice(
                        f"Heartbeat failed: {err.name}: {err.description} (the session "
                        f"timeout of {self.session_timeout_ms:,} ms ran out); the consumer "
                        "joins the group again and reads its partitions from the group's "
                        "committed offsets")
                self._join(evicted=evicted)  # a member of this generation
        mine = self.assigned()
        committed = kafka.committed(group) if group is not None else {}
        self.positions = {p: self.positions[p] if p in self.positions
                          else self._start_of(p, committed) for p in mine}
        read = 0
        for p in mine:
            want = FETCH_MAX if limit is None else min(FETCH_MAX, limit - read)
            if want <= 0:
                break
            try:
                batch = kafka.fetch(topic, p, self.positions[p], want)
            except KafkaError as err:
                if err.name != "OFFSET_OUT_OF_RANGE":
                    raise
                self.positions[p] = self._start_of(p, {}, reset=True)
                batch = kafka.fetch(topic, p, self.positions[p], want)
            if not batch:
                continue
            for record in batch:
                handle(record)
                # the position follows each record handled: a stop inside a batch (Ctrl-C)
                # commits on close what was handled, no more (nothing skipped) and no less
                # (nothing handled twice by the next run)
                self.positions[p] = record.offset + 1
            read += len(batch)
            if group is not None and not self._commit({(topic, p): self.positions[p]}):
                break  # (joined again: the next pass reads what is assigned now)
        return read

    def close(self) -> None:
        """Commit the position of every assigned partition, then leave the group (nothing
        without one). As Kafka's consumer commits on close: a partition it read nothing from
        is committed at the position it started from (the log end for a new group), so a
        record produced after this run is the next run's first, not skipped."""
        if self.group is not None:
            try:
                committed = self.kafka.committed(self.group)
                todo = {(self.topic, p): pos for p, pos in self.positions.items()
                        if committed.get((self.topic, p)) != pos}
                if todo:
                    self._commit(todo)
            except KafkaError:  # (the commit's refusal said; no error leaves the group open)
                pass
            self.kafka.leave(self.group, self.member)

    def __enter__(self) -> TopicConsumer:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is KeyboardInterrupt:  # Ctrl-C may have cut a transaction of a poll
            self.kafka.cluster.end_interrupted()
        self.close()
