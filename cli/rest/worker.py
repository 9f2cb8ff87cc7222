"""The engine side of ``jetlink serve``: one thread runs the engine work of every request, in
the order the requests arrived, and the bounded replication steps that mutating requests end
with.

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
"""

from __future__ import annotations

import collections
import concurrent.futures
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["STEP_EVERY", "STEP_GAP", "EngineWorker", "Outcome", "WorkerClosed"]

# The least a request that wrote waits for a step while other requests keep arriving ...
STEP_EVERY = 0.05
# ... and, in multiples of the last step's duration, the longest.
STEP_GAP = 3.0


class WorkerClosed(Exception):
    """The server is stopping: the request was not run."""


@dataclass
class Outcome:
    """What one request's engine work gave: its ``value`` or its ``error``, and whether it
    changed the store (then it is answered after a replication step)."""

    value: Any = None
    error: BaseException | None = None
    wrote: bool = False


class Job:
    """One request's engine work, queued."""

    def __init__(self, work: Callable[[], Outcome]) -> None:
        self.work = work
        self.future: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def abandon(self) -> bool:
        """The client went away: the work is dropped if it has not started (True then)."""
        return self.future.cancel()


class EngineWorker:
    """The thread of module doc; ``step()`` runs one bounded replication step (it must not
    raise: failures are its own to report). The thread starts with the first job."""

    def __init__(self, step: Callable[[], None], *, step_every: float = STEP_EVERY) -> None:
        self._step = step
        self._step_every = step_every
        self._queue: collections.deque[Job] = collections.deque()
        self._waiting: list[tuple[Job, Outcome]] = []  # wrote; answered after the next step
        self._first_wait = 0.0
        self._gap = step_every  # the wait before a step while requests keep arriving
        self._cond = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None

    def submit(self, work: Callable[[], Outcome]) -> Job:
        """Queue ``work`` (it runs in the worker thread and must not raise); its Job's
        future gets the value or the error, or WorkerClosed when the server stops first."""
        job = Job(work)
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
        now finishes, then the step owed to the requests that wrote; waits at most ``wait``
        seconds for that (the databases are consistent whenever the process ends: every
        write is one transaction)."""
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

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._waiting and not self._closed:
                    self._cond.wait()
                job = self._queue.popleft() if self._queue else None
                more = bool(self._queue)
                closed = self._closed
            if job is not None:
                self._run(job)
            if self._waiting and (not more or closed or
                                  time.monotonic() - self._first_wait >= self._gap):
                self._step_and_answer()
            if closed and job is None and not self._waiting:
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
        else:
            _answer(job, outcome)

    def _step_and_answer(self) -> None:
        waiting, self._waiting = self._waiting, []
        started = time.monotonic()
        try:
            self._step()
        finally:
            self._gap = max(self._step_every, STEP_GAP * (time.monotonic() - started))
            for job, outcome in waiting:
                _answer(job, outcome)


def _answer(job: Job, outcome: Outcome) -> None:
    if outcome.error is not None:
        job.future.set_exception(outcome.error)
    else:
        job.future.set_result(outcome.value)
