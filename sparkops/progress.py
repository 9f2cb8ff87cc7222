"""Progress of the running Spark jobs, from the SparkContext's status tracker.

``watch(callback)`` polls the tracker in a daemon thread while the block runs and calls
``callback(done_tasks, total_tasks, label)`` for the stages running now (the label names the
stage count); the caller renders it (the CLI draws a bar on a terminal).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

Callback = Callable[[int, int, str], None]


def snapshot(sc: Any) -> tuple[int, int, str]:
    """``(completed tasks, tasks, label)`` over the active stages (0, 0, "" when idle)."""
    tracker = sc.statusTracker()
    done = total = 0
    stages = 0
    for sid in tracker.getActiveStageIds():
        info = tracker.getStageInfo(sid)
        if info is None:
            continue
        stages += 1
        done += info.numCompletedTasks
        total += info.numTasks
    if not stages:
        return 0, 0, ""
    return done, total, f"{stages} stage{'s' if stages > 1 else ''} running"


@contextlib.contextmanager
def watch(callback: Callback, *, interval: float = 0.25) -> Iterator[None]:
    from pyspark import SparkContext

    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(interval):
            # looked up each time: the block may start the session (the job makes it
            # lazily, after the checks that need no JVM)
            sc = SparkContext._active_spark_context
            if sc is None:
                continue
            try:
                callback(*snapshot(sc))
            except Exception:  # noqa: BLE001 - the JVM going away must not break the job
                return

    thread = threading.Thread(target=loop, name="jetlink-spark-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=2)
