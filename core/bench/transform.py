"""``jetlink bench transform``: the reference subject transform applied to many varied
subjects, timed (the transform itself is core/transform.py's).
"""

from __future__ import annotations

import time
from typing import Any

from ..transform import compile_transform

__all__ = ["BENCH_DEST", "BENCH_SRC", "bench_transform"]

BENCH_SRC = "orders.*.>"
BENCH_DEST = "ship.{{wildcard(1)}}.{{partition(8,1)}}.>"


def bench_transform(n: int = 1_000_000) -> dict[str, Any]:
    """Time ``apply`` of the reference transform over ``n`` varied subjects.

    Subjects look like ``orders.<id>.<a>.<b>`` with ids of varying length; building them is
    not timed. Returns ``{"subjects", "seconds", "subjects_per_sec", "src", "dest"}``.
    """
    tr = compile_transform(BENCH_SRC, BENCH_DEST)
    kinds = ("created", "paid", "shipped", "cancelled")
    regions = ("eu", "us", "apac")
    subjects = [
        f"orders.{(i * 2654435761) % 10_000_019:x}{i}.{kinds[i % 4]}.{regions[i % 3]}"
        for i in range(n)
    ]
    tr.apply(subjects[0])  # generates the fast function once, outside the timed loop
    apply = tr.apply
    t0 = time.perf_counter()
    for s in subjects:
        apply(s)
    seconds = time.perf_counter() - t0
    return {
        "subjects": n,
        "seconds": seconds,
        "subjects_per_sec": n / seconds if seconds > 0 else float("inf"),
        "src": BENCH_SRC,
        "dest": BENCH_DEST,
    }
