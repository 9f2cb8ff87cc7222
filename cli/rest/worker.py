"""The engine side of ``jetlink serve``: one thread runs the engine work of every request, in
the order the requests arrived, and the bounded replication steps that mutating requests end
with. ``on_busy(queued)`` runs before a job that more work follows, ``on_idle()`` whenever
it has nothing left to do, before the answer that leaves it so (the server keeps its
databases open in between, and requests queued back to back share them).

Why one thread: the engine's writes are SQLite transactions on the data directory's
databases, one writer at a time whatever the number of threads; threads of one process that
compete for a database wait in SQLite's busy handler, which sleeps and polls (up to 100 ms a
turn), so that many concurrent requests each took longer than all of them in a row. One
queue is also fair (first come, first served) and lets the server drop the work of a client
that went away before it was started (:meth:`Job.abandon`) and stop at once on SIGINT
(:meth:`EngineWorker.close`).

The replication step (``jetlink.core.step.bounded_step``, one pass over every agreement and
cluster link of the data directory) is shared: a request that wrote is answered once a step
that started after its write has finished, as a mutating CLI command is; the requests that
wrote while the queue was busy share one step, run when the queue is empty or when the
oldest of them has waited :data:`STEP_EVERY` seconds or, when steps are slow (a step goes
over every link of the data directory), :data:`STEP_GAP` times as long as the last step took:
under load steps then take at most about a quarter of the thread's time. Every step runs in
this thread: two steps never run at once in the server, and no request runs during one.

A create of a cluster link or a mirror topic (a job submitted with ``create=True``) is
answered at once, as Confluent's server answers before the link's first fetch (the mirror
topic exists, its records follow through the link's replication): it owes a step of its link
only (``links_step(links)``, links of its cluster). That step runs before the next job that
is not such a create (so whatever a client asks next sees the link stepped, as when the
create waited for it), or in the background: once no request has arrived for
:data:`STEP_IDLE` seconds, or when the oldest of those creates has waited
:data:`LINKS_STEP_EVERY` seconds or :data:`STEP_GAP` times as long as the last such step
took (then of the links owed for at least half that time: the others wait for the next). A
full step also covers the links owed until it starts.
"""

from __future__ import annotations

import collections
import concurrent.futures
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["LINKS_STEP_EVERY", "STEP_EVERY", "STEP_GAP", "STEP_IDLE", "EngineWorker", "Outcome",
           "WorkerClosed"]

# The least a request that wrote waits for a step while other requests keep arriving ...
STEP_EVERY = 0.05
# ... and, in multiples of the last step's duration, the longest.
STEP_GAP = 3.0
# How long the queue stays empty before the links owed by creates get their step ...
STEP_IDLE = 0.02
# ... and the least they wait for it while requests keep arriving (STEP_GAP times the last
# such step when longer): the step of a link's create then mostly serves its mirror's too.
LINKS_STEP_EVERY = 0.25


class WorkerClosed(Exception):
    """The server is stopping: the request was not run."""


@dataclass
class Outcome:
    """What one request's engine work gave: its ``value`` or its ``error``, and whether it
    changed the store (then it is answered after a replication step)."""

    value: Any = None
    error: BaseException | None = None
    wrote: bool = False
    # a create answered at once: the links ((cluster, link)) whose step it owes (module doc)
    links: frozenset[tuple[str, str]] = frozenset()


class Job:
    """One request's engine work, queued."""

    def __init__(self, work: Callable[[], Outcome], create: bool = False) -> None:
        self.work = work
        self.create = create  # a create answered before its link's step (module doc)
        self.future: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def abandon(self) -> bool:
        """The client went away: the work is dropped if it has not started (True then)."""
        return self.future.cancel()


class EngineWorker:
    """The thread of module doc; ``step()`` runs one bounded replication step and
    ``links_step(links)`` one step of the links owed by creates (default: ``step()``);
    neither may raise: failures are theirs to report. The thread starts with the first
    job."""

    def __init__(self, step: Callable[[], None], *,
                 links_step: Callable[[frozenset[tuple[str, str]]], None] | None = None,
                 on_busy: Callable[[bool], None] | None = None,
                 on_idle: Callable[[], None] | None = None,
                 step_every: float = STEP_EVERY, step_idle: float = STEP_IDLE) -> None:
        self._step = step
        # on_busy(queued) before a job that more work follows (queued: jobs are queued
        # behind it; or a step is owed); on_idle() once nothing is left to do, before the
        # answer that leaves it so, and as the thread ends (neither may raise)
        self._on_busy = on_busy or (lambda _queued: None)
        self._on_idle = on_idle or (lambda: None)
        self._links_step = links_step or (lambda _links: step())
        self._step_every = step_every
        self._step_idle = step_idle
        self._queue: collections.deque[Job] = collections.deque()
        self._waiting: list[tuple[Job, Outcome]] = []  # wrote; answered after the next step
        self._first_wait = 0.0
        self._gap = step_every  # the wait before a step while requests keep arriving
        # links whose step creates owe -> when the first of those creates was answered
        self._owed: dict[tuple[str, str], float] = {}
        self._first_owed = 0.0
        self._links_every = max(step_every, LINKS_STEP_EVERY)
        self._links_gap = self._links_every  # the same for the step of the links owed
        self._last_job = 0.0
        self._cond = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None

    def submit(self, work: Callable[[], Outcome], *, create: bool = False) -> Job:
        """Queue ``work`` (it runs in the worker thread and must not raise); its Job's
        future gets the value or the error, or WorkerClosed when the server stops first.
        ``create``: a create of a link or mirror topic (module doc)."""
        job = Job(work, create)
        with self._cond:
            if self._closed:
                job.future.set_exception(WorkerClosed())
                return job
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="jetlink-engine",
                                                daemon=True)
                self._thread.start()
            self._queue.append(job)
            self._cond.notify()
        return job

    def close(self, wait: float = 1.5) -> None:
        """Stop: queued work is not run (its futures get WorkerClosed), the request running
        now finishes, then the step owed to the requests that wrote (or the links' step
        owed by creates); waits at most ``wait`` seconds for that (the databases are
        consistent whenever the process ends: every write is one transaction)."""
        with self._cond:
            self._closed = True
            dropped = list(self._queue)
            self._queue.clear()
            self._cond.notify()
            thread = self._thread
        for job in dropped:
            if job.future.set_running_or_notify_cancel():
                job.future.set_exception(WorkerClosed())
        if thread is not None and thread is not threading.current_thread():
            thread.join(wait)

    # -- the thread ------------------------------------------------------------------------

    def _next(self) -> tuple[Job | None, bool, bool]:
        """The next job (None: a step is due, or the worker is closed), whether more are
        queued, whether the worker is closed. Waits while nothing is to be done."""
        with self._cond:
            while not self._queue and not self._waiting and not self._closed:
                if not self._owed:
                    self._cond.release()
                    try:
                        self._on_idle()
                    finally:
                        self._cond.acquire()
                    while not self._queue and not self._closed:
                        self._cond.wait()
                    continue
                now = time.monotonic()
                left = min(self._last_job + self._step_idle,
                           self._first_owed + self._links_gap) - now
                if left <= 0:
                    break
                self._cond.wait(left)
            return (self._queue.popleft() if self._queue else None, bool(self._queue),
                    self._closed)

    def _loop(self) -> None:
        while True:
            job, more, closed = self._next()
            if job is not None:
                if self._owed and not job.create:
                    self._step_owed()  # what follows a create sees its link stepped
                if more or self._owed or self._waiting:
                    self._on_busy(more)
                else:
                    self._on_idle()  # a lone job: nothing is kept for it
                self._run(job)
                self._last_job = time.monotonic()
            now = time.monotonic()
            if self._waiting and (not more or closed or now - self._first_wait >= self._gap):
                self._step_and_answer()
            elif self._owed and job is None:
                self._step_owed()  # idle, or closing: every link owed
            elif self._owed and now - self._first_owed >= self._links_gap:
                self._step_owed(older_than=now - self._links_gap / 2)
            if closed and job is None and not self._waiting and not self._owed:
                self._on_idle()
                return

    def _run(self, job: Job) -> None:
        if not job.future.set_running_or_notify_cancel():
            return  # abandoned by its client before it started
        try:
            outcome = job.work()
        except BaseException as exc:  # noqa: BLE001 - work() reports its own errors
            outcome = Outcome(error=exc)
        if outcome.wrote:
            if not self._waiting:
                self._first_wait = time.monotonic()
            self._waiting.append((job, outcome))
            return
        if outcome.links:
            now = time.monotonic()
            if not self._owed:
                self._first_owed = now
            for link in outcome.links:
                self._owed.setdefault(link, now)
        self._settle()
        _answer(job, outcome)

    def _step_and_answer(self) -> None:
        waiting, self._waiting = self._waiting, []
        self._owed = {}  # the step covers every link
        started = time.monotonic()
        try:
            self._step()
        finally:
            self._gap = max(self._step_every, STEP_GAP * (time.monotonic() - started))
            self._settle()
            for job, outcome in waiting:
                _answer(job, outcome)

    def _settle(self) -> None:
        """Before an answer: ``on_idle()`` when nothing is left to do (no job queued, no
        step owed), so that the answer comes when the files are as the thread leaves them."""
        if not self._queue and not self._waiting and not self._owed:
            self._on_idle()

    def _step_owed(self, older_than: float | None = None) -> None:
        """The step of the links owed (``older_than``: of those owed since before then
        only, the others wait for the next: under load a link's create and its mirror's
        create, answered a few requests apart, then share one step)."""
        if older_than is None:
            owed, self._owed = frozenset(self._owed), {}
        else:
            owed = frozenset(k for k, t in self._owed.items() if t <= older_than)
            self._owed = {k: t for k, t in self._owed.items() if k not in owed}
            self._first_owed = min(self._owed.values(), default=0.0)
        started = time.monotonic()
        try:
            self._links_step(owed)
        finally:
            self._links_gap = max(self._links_every, STEP_GAP * (time.monotonic() - started))


def _answer(job: Job, outcome: Outcome) -> None:
    if outcome.error is not None:
        job.future.set_exception(outcome.error)
    else:
        job.future.set_result(outcome.value)
