"""``jetlink bench validate``: a generated topology of many varied streams, validated and
timed (the topology rules are core/topology/'s).
"""

from __future__ import annotations

import time
from typing import Any

from ..topology import FORMAT_VERSION, Topology, validate_topology

__all__ = ["bench_document", "bench_validate"]

def bench_document(n: int) -> dict[str, Any]:
    """A topology document with ``n`` varied streams in two clusters (about 3% invalid)."""
    streams: dict[str, Any] = {}
    per_cluster: dict[str, list[str]] = {"west": [], "east": []}
    for i in range(n):
        name = f"S{i:06d}"
        cluster = "east" if i % 4 == 0 else "west"
        prior = per_cluster[cluster]
        app = f"app{i % 64}"
        kind = i % 20
        body: dict[str, Any] = {"cluster": cluster}
        if kind < 12 or len(prior) < 3:
            body.update(
                subjects=[f"{app}.s{i}.>", f"{app}.t{i}.*"],
                max_age="24h",
                max_msgs_per_subject=5,
                max_bytes=1 << 30,
                max_msg_size=1 << 20,
                discard="new",
                duplicate_window="2m",
            )
            if kind == 1:
                body["subject_transform"] = {
                    "src": f"{app}.t{i}.*", "dest": f"{app}.t{i}.{{{{partition(4,1)}}}}.x"
                }
            if kind == 2:
                body["republish"] = {"src": f"{app}.s{i}.>", "dest": f"mon.s{i}.>"}
            if kind == 3:
                body["allow_rollup_hdrs"] = True
                body["allow_direct"] = True
        elif kind < 15:
            a, b = prior[-1], prior[-3]
            body.update(
                subjects=[f"agg.s{i}.>"],
                sources=[
                    {"name": a, "subject_transforms": [
                        {"src": f"app{(int(a[1:])) % 64}.s{int(a[1:])}.*.>",
                         "dest": f"agg.s{i}.{{{{wildcard(1)}}}}.>"}]},
                    {"name": b, "filter_subject": f"app{int(b[1:]) % 64}.s{int(b[1:])}.>"},
                ],
            )
        elif kind < 17:
            origin = prior[-2]
            body.update(mirror={"name": origin}, max_msg_size=1 << 20)
        elif kind == 17:
            other = "west" if cluster == "east" else "east"
            src = per_cluster[other][-1] if per_cluster[other] else prior[-1]
            body.update(
                mirror={"name": src, "domain": other, "filter_subject": f"app{int(src[1:]) % 64}.>"}
            )
        elif kind == 18:
            body.update(subjects=[f"{app}.s{i}..bad"])  # invalid subject
        else:
            if i % 40 == 19:
                body.update(subjects=[f"{app}.s{i - 19}.x"])  # overlaps an earlier stream
            else:
                body.update(mirror={"name": f"MISSING{i}"})  # origin not declared
        streams[name] = body
        prior.append(name)
    return {
        "version": FORMAT_VERSION,
        "clusters": {"west": {"kind": "nats"}, "east": {"kind": "nats"}},
        "streams": streams,
    }


def bench_validate(n: int = 10_000) -> dict[str, Any]:
    """Time loading and validating ``n`` generated stream configs as one topology."""
    doc = bench_document(n)
    start = time.perf_counter()
    topo = Topology()
    topo.add_document(doc, "<bench>", fmt="toml")
    problems = validate_topology(topo)
    seconds = time.perf_counter() - start
    return {
        "configs": n,
        "seconds": round(seconds, 4),
        "configs_per_sec": round(n / seconds, 1) if seconds > 0 else float("inf"),
        "problems": len(problems),
    }
