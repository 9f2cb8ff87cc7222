"""A console consumer of one topic on the engine: the consumer-group protocol the way
``kafka-console-consumer`` runs it (``jetlink topic consume``).

:class:`TopicConsumer` joins the group (when it has one) as a member of its own, and each
:meth:`TopicConsumer.poll` is one pass: a heartbeat, the partitions assigned to it, each read
from its position (the group's committed offset when it lies in the log, else the log start
with ``from_beginning``, else the log end; an offset that fell out of range is reset the
same way), at most :data:`FETCH_MAX` records a pass (Kafka's max.poll.records; the pass
starts with the next partition each time), handed over, then committed in the generation
the member is in. While it hands records over the member refreshes its session every
:data:`HEARTBEAT_INTERVAL_S` (Kafka's heartbeat thread): a slow reader of its output is not
taken for a dead member. When the group rebalances (core/kafka/topic_groups.py: a
member joined, left or expired; the heartbeat says REBALANCE_IN_PROGRESS) the member
commits the position of every partition it holds and gives them up, as Kafka's consumer
does in onPartitionsRevoked of the eager protocol, then joins again; until the rebalance
completes (every member joined) it reads nothing (:attr:`TopicConsumer.joining`), then
reads the partitions of the new generation from the group's committed offsets: a record
is handled twice only when its member was gone before it committed. A commit the group
refuses (UNKNOWN_MEMBER_ID once the member's session ran out, ILLEGAL_GENERATION) is said
through ``on_notice``, as Kafka's consumer logs a failed commit: the member lost its
partitions (Kafka's onPartitionsLost), commits nothing and joins again, so an offset
another member or an operator set meanwhile stands. A member that handles one pass longer
than its ``max_poll_interval_ms`` (Kafka's max.poll.interval.ms, the rebalance timeout its
join carries) while the group rebalances is removed from it the same way, its session
refreshed or not: the rebalance completes without it. :meth:`TopicConsumer.close` commits
and leaves the group. Without a group every partition is read and nothing is committed.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .errors import KafkaError
from .topic_groups import DEFAULT_REBALANCE_TIMEOUT_MS

if TYPE_CHECKING:  # pragma: no cover
    from .topics import Kafka, Record

__all__ = ["CLIENT_ID", "FETCH_MAX", "HEARTBEAT_INTERVAL_S", "TopicConsumer"]

FETCH_MAX = 500  # records per pass (Kafka's max.poll.records), the partitions in turn
# a member handling a batch refreshes its session this often (Kafka's heartbeat.interval.ms,
# at most a third of the session timeout)
HEARTBEAT_INTERVAL_S = 3.0
# a commit or heartbeat refused so: the member lost its partitions and joins again
_LOST = ("ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID")
CLIENT_ID = "jetlink-consumer"


class TopicConsumer:
    """One member reading ``topic`` (see the module docstring)."""

    def __init__(self, kafka: Kafka, topic: str, *, group: str | None = None,
                 from_beginning: bool = False, session_timeout_ms: int = 45_000,
                 max_poll_interval_ms: int = DEFAULT_REBALANCE_TIMEOUT_MS,
                 client_id: str = CLIENT_ID, partition: int | None = None,
                 offset: int | None = None,
                 on_notice: Callable[[str], Any] | None = None,
                 heartbeat_interval_s: float | None = None) -> None:
        self.kafka, self.topic, self.group = kafka, topic, group
        self.from_beginning = from_beginning
        # kafka-console-consumer's --partition / --offset: that partition alone (assigned,
        # no group), from that offset (out of the log: reset as any out-of-range position)
        if partition is not None and group is not None:
            raise ValueError("a consumer of one partition has no group")
        self.partition, self.offset = partition, offset
        self.session_timeout_ms = session_timeout_ms
        self.max_poll_interval_ms = max_poll_interval_ms
        self._beat_ms = 0  # (the engine's time of the member's last heartbeat that counted)
        self._closing = False
        self.client_id = client_id
        self.member = f"{client_id}-{uuid.uuid4()}"
        self.positions: dict[int, int] = {}
        self.generation = -1  # (-1: not in a generation: joining)
        self.on_notice = on_notice
        self._turn = 0  # the partition a pass starts with, in turn
        self._beat_every = (min(HEARTBEAT_INTERVAL_S, session_timeout_ms / 3000)
                            if heartbeat_interval_s is None else heartbeat_interval_s)
        if group is not None:
            self._join()

    @property
    def joining(self) -> bool:
        """Whether the member waits for its group's rebalance to complete (it holds no
        partition meanwhile; the next :meth:`poll` joins again)."""
        return self.group is not None and self.generation < 0

    def _join(self) -> bool:
        """Join the group: True in the generation it answered (the partitions of it read
        from the group's committed offsets), False while it rebalances."""
        assert self.group is not None
        self.positions = {}
        try:
            self._beat_ms = self.kafka.now_ms()
            self.generation = self.kafka.join(
                self.group, self.member, [self.topic],
                session_timeout_ms=self.session_timeout_ms,
                rebalance_timeout_ms=self.max_poll_interval_ms, client_id=self.client_id)
        except KafkaError as err:
            if err.name != "REBALANCE_IN_PROGRESS":
                raise
            self.generation = -1
            return False
        return True

    def _gone_why(self) -> str:
        """Why the group no longer knew this member (UNKNOWN_MEMBER_ID): its session ran out
        since its last heartbeat, or else a rebalance completed without it."""
        if self.kafka.now_ms() - self._beat_ms >= self.session_timeout_ms:
            return f"its session timeout of {self.session_timeout_ms:,} ms ran out"
        return ("the group rebalanced without it: it did not join again within the "
                "rebalance timeout (the largest max.poll.interval.ms of the group's members; "
                f"its own {self.max_poll_interval_ms:,} ms)")

    def _unsaved(self) -> dict[tuple[str, int], int]:
        """The positions the group's committed offsets do not hold yet."""
        assert self.group is not None
        committed = self.kafka.committed(self.group)
        return {(self.topic, p): pos for p, pos in self.positions.items()
                if committed.get((self.topic, p)) != pos}

    def _revoke(self) -> None:
        """The group rebalances: commit every position (the group takes commits of its
        current generation until the rebalance completes) and give the partitions up."""
        todo = self._unsaved()
        if todo:
            self._commit(todo)
        self.positions, self.generation = {}, -1

    def _commit(self, offsets: dict[tuple[str, int], int]) -> bool:
        """Commit ``offsets`` in this member's generation. Refused because the member's
        session ran out or the generation is over: the partitions are lost (nothing
        committed, the member joins again on the next poll), said through on_notice, and
        False."""
        assert self.group is not None
        try:
            self.kafka.commit(self.group, offsets, member=self.member,
                              generation=self.generation)
        except KafkaError as err:
            if err.name not in _LOST:
                raise
            self._lost(err, offsets)
            return False
        return True

    def _lost(self, err: KafkaError, offsets: dict[tuple[str, int], int]) -> None:
        self.positions, self.generation = {}, -1
        if self.on_notice is not None:
            at = ", ".join(f"{t}-{p} at offset {o}" for (t, p), o in sorted(offsets.items()))
            why = f" ({err.detail})" if err.detail else ""
            cause = (self._gone_why() if err.name == "UNKNOWN_MEMBER_ID" else
                     "its generation of the group is over")
            then = ("the group's next member reads them from its committed offsets"
                    if self._closing else "the consumer joins the group again and reads "
                    "them from the group's committed offsets")
            self.on_notice(
                f"Offset commit failed on partition{'s' if len(offsets) > 1 else ''} "
                f"{at}: {err.name}: {err.description}{why}; {cause}, so it lost its "
                f"partitions: {then}")

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
        """One pass: at most ``limit`` records (None: :data:`FETCH_MAX`), each
        given to ``handle`` before its batch is committed; how many were read (0 also while
        :attr:`joining`)."""
        kafka, topic, group = self.kafka, self.topic, self.group
        if group is not None:
            if self.generation >= 0:
                self._heartbeat()
            if self.generation < 0 and not self._join():
                return 0
        mine = self.assigned()
        committed = kafka.committed(group) if group is not None else {}
        self.positions = {p: self.positions[p] if p in self.positions
                          else self._start_of(p, committed) for p in mine}
        read = 0
        budget = FETCH_MAX if limit is None else min(FETCH_MAX, limit)
        first = self._turn % len(mine) if mine else 0
        self._turn += 1
        beat = time.monotonic()
        for p in mine[first:] + mine[:first]:
            want = budget - read
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
            gone = False
            with _Heartbeats(self) as beats:
                for record in batch:
                    handle(record)
                    # the position follows each record handled: a stop inside a batch
                    # (Ctrl-C) commits on close what was handled, no more (nothing skipped)
                    # and no less (nothing handled twice by the next run)
                    self.positions[p] = record.offset + 1
                    read += 1
                    if beats.gone:
                        gone = True  # (no longer a member: the commit says so)
                        break
                    if (group is not None and not beats.threaded
                            and time.monotonic() - beat >= self._beat_every):
                        beat = time.monotonic()
                        if not kafka.keep_alive(group, self.member):
                            gone = True
                            break
                        self._beat_ms = kafka.now_ms()
            if group is not None and (not self._commit({(topic, p): self.positions[p]})
                                      or gone):
                break  # (the partitions lost: the next pass joins again)
        return read

    def _heartbeat(self) -> None:
        """The pass's heartbeat: in a rebalance, the partitions committed and given up; the
        member gone (its session ran out) or its generation over, the partitions lost."""
        assert self.group is not None
        try:
            now = self.kafka.now_ms()
            self.kafka.heartbeat(self.group, self.member, self.generation)
            self._beat_ms = now
        except KafkaError as err:
            if err.name == "REBALANCE_IN_PROGRESS":  # (a heartbeat that counted)
                self._beat_ms = now
                self._revoke()
                return
            if err.name not in _LOST:
                raise
            if err.name == "UNKNOWN_MEMBER_ID" and self.positions and self.on_notice:
                self.on_notice(
                    f"Heartbeat failed: {err.name}: {err.description} "
                    f"({self._gone_why()}); the consumer joins the group again and reads "
                    "its partitions from the group's committed offsets")
            self.positions, self.generation = {}, -1

    def close(self) -> None:
        """Commit the position of every assigned partition, then leave the group (nothing
        without one). As Kafka's consumer commits on close: a partition it read nothing from
        is committed at the position it started from (the log end for a new group), so a
        record produced after this run is the next run's first, not skipped."""
        if self.group is not None:
            self._closing = True  # (a refused commit's notice: no joining again)
            try:
                if self.generation >= 0:
                    todo = self._unsaved()
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


class _Heartbeats:
    """Kafka's heartbeat thread while a consumer hands a batch's records over: the member's
    session refreshed every ``_beat_every`` seconds of wall time even while one record's
    handling blocks (a write to a reader that stopped reading: a pipe paused, ``| less``),
    through a connection of its own (the consumer's is the main thread's); without the
    thread the handling loop refreshes it between records; ``gone``: a refresh found the
    member removed (its session ran out, or a rebalance completed without it). No thread
    for a consumer without a group, nor with an interval of 0 (a refresh after every record,
    inline: tests)."""

    def __init__(self, consumer: TopicConsumer) -> None:
        self.consumer = consumer
        self.gone = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    @property
    def threaded(self) -> bool:
        """The thread refreshes the session (the handling loop need not)."""
        return self._thread is not None

    def __enter__(self) -> _Heartbeats:
        c = self.consumer
        if c.group is not None and c._beat_every > 0:
            self._thread = threading.Thread(target=self._run, name="jetlink-kafka-heartbeat",
                                            daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._error is not None and exc[0] is None:
            raise self._error

    def _run(self) -> None:
        from ..store.datadir import Cluster

        c = self.consumer
        assert c.group is not None
        kafka = c.kafka
        own = type(kafka)(Cluster(kafka.cluster.name, kafka.cluster.path), kafka.clock,
                          principal=kafka.principal)
        try:
            while not self._stop.wait(c._beat_every):
                if not own.keep_alive(c.group, c.member):
                    self.gone = True
                    return
                c._beat_ms = own.now_ms()
        except BaseException as err:  # noqa: BLE001 - said by the handling loop's thread
            self._error = err
        finally:
            own.cluster.close()

