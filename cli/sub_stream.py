"""``jetlink sub --stream S / --all / --new / --last / --since D / --start-sequence N /
--last-per-subject / -T``: natscli's JetStream subscription, the messages a stream stored.

natscli subscribes through an ephemeral consumer with no acks (its deliver policy the flag
given, DeliverAll without one) and follows what the stream stores next; ``-T`` stops once it
has caught up. Here the stored messages are read through the seam's ``messages`` (the
embedded store, or ordered consumers on a live server), from the start the flag gives, then
read again every poll for what was stored since: the same messages in the same order on
either backend, acknowledged by nobody.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from itertools import islice
from typing import Any

from jetlink.cli.common import usage

#: the end of the stored messages, with -T (a value the follower yields, then stops at)
END = object()

#: stored messages read at a time
CHUNK = 1000


@dataclass
class Start:
    """Where a JetStream subscription starts (natscli's flags, one of them)."""

    all: bool = False
    new: bool = False
    last: bool = False
    since_ns: int | None = None  # a duration back from now
    start_seq: int | None = None
    last_per_subject: bool = False

    def given(self) -> bool:
        return (self.all or self.new or self.last or self.last_per_subject
                or self.since_ns is not None or bool(self.start_seq))

    def check(self) -> None:
        chosen = [flag for flag, on in (
            ("--all", self.all), ("--new", self.new), ("--last", self.last),
            ("--since", self.since_ns is not None), ("--start-sequence", bool(self.start_seq)),
            ("--last-per-subject", self.last_per_subject)) if on]
        if len(chosen) > 1:
            raise usage(f"{' and '.join(chosen)}: a JetStream subscription starts at one "
                        "place: give one of them")

    def said(self) -> str:
        if self.start_seq:
            return f"starting at sequence {self.start_seq}"
        if self.new:
            return "for new messages"
        if self.last:
            return "from the last message"
        if self.since_ns is not None:
            from jetlink.core.durations import format_duration

            return "since " + format_duration(self.since_ns)
        if self.last_per_subject:
            return "for the last message per subject"
        return "from the first message"


def stream_of(js: Any, subject: str, stream: str | None) -> str:
    """The stream a JetStream subscription reads: ``--stream``, else the one stream whose
    subjects take ``subject`` (natscli's StreamNameBySubject)."""
    if stream:
        js.stream_info(stream)  # (an unknown stream: its 10059, named)
        return stream
    names = js.stream_names(subject)
    if not names:
        raise usage(f"no stream stores subject {subject}: give the stream with --stream")
    if len(names) > 1:
        raise usage(f"subject {subject} is stored by streams {', '.join(sorted(names))}: give "
                    "one with --stream")
    return str(names[0])


class StoredFeed:
    """``next(timeout)`` over the messages ``stream`` stores on ``subject``: the backlog the
    start gives, then each one stored after it as it comes (read every poll); with
    ``terminate`` (-T) :data:`END` once a read finds nothing new."""

    def __init__(self, js: Any, stream: str, subject: str, start: Start, *,
                 terminate: bool = False, now_ns: int = 0) -> None:
        self.js, self.stream, self.subject, self.terminate = js, stream, subject, terminate
        self.held: deque[Any] = deque()
        # stored after the held ones, when they were read; the message last given's
        # num_pending (natscli's line: the messages still to come then; None: not known,
        # a work-queue stream on a server)
        self.after: int | None = 0
        self.pending: int | None = 0
        self.since: int | None = None
        last_seq = int(js.stream_info(stream).state.last_seq)
        self.next_seq = 1
        if start.new:
            self.next_seq = last_seq + 1
        elif start.start_seq:
            self.next_seq = int(start.start_seq)
        elif start.since_ns is not None:
            self.since = now_ns - int(start.since_ns)
            self.next_seq = last_seq + 1  # (when nothing was stored since then)
        elif start.last or start.last_per_subject:
            latest = list(js.last_msgs(stream, [subject]))
            self.next_seq = last_seq + 1
            if start.last and latest:
                self.next_seq = max(m.seq for m in latest)
            elif start.last_per_subject:
                self.held.extend(sorted(latest, key=lambda m: m.seq))

    def _read(self) -> int:
        """Read the next chunk of stored messages into the held ones; how many."""
        msgs = list(islice(self.js.messages(
            self.stream, start_seq=None if self.since is not None else self.next_seq,
            subject=self.subject, start_time_ns=self.since, chunk=CHUNK), CHUNK))
        self.since = None  # (a time start is read once: then by sequence)
        if msgs:
            self.next_seq = msgs[-1].seq + 1
            self.held.extend(msgs)
            self.after = self.js.count_msgs(self.stream, start_seq=self.next_seq,
                                            subject=self.subject)
        return len(msgs)

    def _given(self) -> Any:
        msg = self.held.popleft()
        self.pending = None if self.after is None else len(self.held) + self.after
        return msg

    def next(self, timeout: float | None) -> Any:
        if self.held:
            return self._given()
        if self._read():
            return self._given()
        if self.terminate:
            return END
        time.sleep(min(timeout or 0.0, 0.5))
        return None
