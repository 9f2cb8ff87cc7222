"""``jetlink bench demo``: how long the drill takes, as ``make demo`` runs it.

Each run is a whole ``jetlink demo --json`` process (start-up, the two regions built, the
Spark seed and its JVM, the outage, failback, the REST step, the temporary data directory
removed): the wall time from its start to its exit, and the drill's own ``seconds`` beside
it. A run counts only when the process exits 0 and its summary shows the drill's work done
(:func:`drill_counts`: nine steps, the messages each replication moved, the Spark seed's rows
in and out equal, the divergent tail saved as predicted); anything else is an error naming
what was seen. The median of the runs' wall times is the figure the goal reads.

Standard library only.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import tempfile
import time
from typing import Any

from ..errors import JetlinkError
from .children import child_env

__all__ = ["DEMO_GOAL_S", "bench_demo", "drill_counts"]

DEMO_GOAL_S = 30.0
STEPS = 9


def drill_counts(doc: dict[str, Any]) -> dict[str, Any]:
    """The counts of one drill's summary (``jetlink demo --json``): steps run, messages
    moved in all, the Spark seed's rows, the tail saved against the tail predicted. Raises
    a JetlinkError naming what is missing or wrong."""
    steps = [s.get("step") for s in doc.get("steps", [])]
    if steps != list(range(1, STEPS + 1)):
        raise JetlinkError(f"bench demo: the drill ran steps {steps}, not 1 to {STEPS}")
    moved = 0
    for m in doc.get("moved", []):
        n = m.get("messages", m.get("records", m.get("values")))
        if not isinstance(n, int) or n <= 0:
            raise JetlinkError(f"bench demo: {m.get('what')!r} moved {n!r}")
        moved += n
    spark = doc.get("spark") or {}
    if not spark.get("rows_in") or spark.get("rows_in") != spark.get("rows_out"):
        raise JetlinkError(f"bench demo: the Spark seed read {spark.get('rows_in')!r} rows and "
                           f"wrote {spark.get('rows_out')!r}")
    point = doc.get("recovery_point") or {}
    if point.get("predicted") != point.get("tail_saved"):
        raise JetlinkError(f"bench demo: the tail saved ({point.get('tail_saved')!r}) is not "
                           f"the one predicted ({point.get('predicted')!r})")
    return {"steps": len(steps), "moved": moved, "spark_rows": spark["rows_in"],
            "tail_saved": point.get("tail_saved")}


def bench_demo(runs: int = 3, *, command: list[str] | None = None) -> dict[str, Any]:
    """``runs`` whole ``jetlink demo --json`` processes one after the other: each run's wall
    seconds, the drill's own seconds, its counts (:func:`drill_counts`), and the median."""
    from .engine import _jetlink_command

    cmd = [*(command or _jetlink_command()), "demo", "--json"]
    walls: list[float] = []
    drills: list[float] = []
    counts: list[dict[str, Any]] = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="jetlink-bench-") as config:
            env = child_env(config)  # (no context selected there)
            t0 = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
            wall = time.perf_counter() - t0
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
            raise JetlinkError(f"bench demo: `{' '.join(cmd)}` exited {done.returncode}: "
                               f"{tail}")
        try:
            doc = json.loads(done.stdout)
        except ValueError:
            raise JetlinkError(f"bench demo: `{' '.join(cmd)}` printed no JSON summary: "
                               f"{done.stdout[:200]!r}") from None
        counts.append(drill_counts(doc))
        walls.append(round(wall, 2))
        drills.append(float(doc.get("seconds", 0.0)))
    median = round(statistics.median(walls), 2)
    return {"runs": runs, "command": " ".join(cmd), "seconds": walls,
            "drill_seconds": drills, "counts": counts, "seconds_median": median,
            "goal_s": DEMO_GOAL_S, "goal_met": median <= DEMO_GOAL_S}
