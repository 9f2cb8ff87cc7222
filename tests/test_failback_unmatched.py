"""Failback saves the old origin's messages the promoted side does not hold at or below the
promoted sequence (core/dr/unmatched.py), beside the tail, before anything of the old origin
is removed: the case here is a KV mirror keeping less history than its origin (history 1
against 5): west keeps the revisions of k1 east never held, and making west a mirror of
east would remove one of them (the one after the agreed prefix) with no copy anywhere.

West's CFG (history 5): k1=a (1), k2=b (2), k1=c (3), k1=d (4). East's mirror (history 1)
holds 2 and 4 (its first sequence 2, sequence 3 deleted). The comparison keeps west's 1..2
(1 is older than east's first: kept as a mirror keeps it); 3 is west's only: saved; 4 is
east's copy of west's: copied back.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from helpers import doc
from test_failback import _done, _killed_at

from jetlink.core.clock import parse_rfc3339_nano
from jetlink.core.dr.unmatched import unmatched_path


@pytest.mark.parametrize("tail,expected", [
    ("/data/failback-ORDERS-20261129T010203Z", "/data/failback-ORDERS-20261129T010203Z-unmatched"),
    ("/data/tails/", "/data/tails-unmatched"),
    ("tails", "tails-unmatched"),
    # a region's partition: its own dataset beside the region's, partitioned alike
    ("/data/region/object=ORDERS", "/data/region-unmatched/object=ORDERS"),
    ("/data/region/object=KV_CFG@east", "/data/region-unmatched/object=KV_CFG@east"),
    ("s3://bucket/tails/object=ORDERS", "s3://bucket/tails-unmatched/object=ORDERS"),
    ("s3://bucket/tail", "s3://bucket/tail-unmatched"),
])
def test_the_dataset_beside_the_tail(tail, expected):
    assert unmatched_path(tail) == expected


def _ok(jl):
    """The CLI that asserts success."""
    def run(*args):
        res = jl(*args)
        assert res.exit_code == 0, res.output
        return res
    return run


def _kv_history(jl) -> dict:
    """The module's scenario up to the failover (west back); west's messages by sequence."""
    run = _ok(jl)
    run("cluster", "add", "west")
    run("cluster", "add", "east")
    run("--cluster", "west", "kv", "add", "CFG", "--history", "5")
    for key, value in (("k1", "a"), ("k2", "b"), ("k1", "c"), ("k1", "d")):
        run("--cluster", "west", "kv", "put", "CFG", key, value)
    run("--cluster", "east", "kv", "add", "CFG", "--mirror", "CFG@west", "--history", "1")
    run("replicate")
    east = doc(run("--cluster", "east", "stream", "info", "KV_CFG", "-j"))["state"]
    assert (east["first_seq"], east["last_seq"], east["messages"]) == (2, 4, 2), east
    west = {}
    for seq in (1, 2, 3, 4):
        m = doc(run("--cluster", "west", "stream", "get", "KV_CFG", str(seq), "-j"))
        west[seq] = m
    run("cluster", "down", "west")
    run("--cluster", "east", "kv", "failover", "CFG", "-f")
    run("cluster", "up", "west")
    return west


def _rows(path: str) -> list[tuple]:
    table = pq.read_table(path, columns=["seq", "subject", "data"])
    return sorted(zip(*(table.column(x).to_pylist() for x in ("seq", "subject", "data")),
                      strict=True))


def test_a_kv_mirrors_smaller_history_saved_before_west_is_made_a_mirror(jl):
    west = _kv_history(jl)
    tail = jl.tmp / "tail"
    saved = f"{tail}-unmatched"
    plan = doc(jl("--cluster", "east", "kv", "failback", "CFG", "--tail", f"parquet:{tail}",
                  "--dry-run", "-j"))
    assert plan["unmatched"] == {
        "path": saved, "path_from": "beside the tail", "from_seq": 3, "messages": 1,
        "first_seq": 3, "last_seq": 3, "subjects": {"$KV.CFG.k1": 1}, "subjects_total": 1,
        "saved": False, "verified": False, "abandoned": []}
    assert not os.path.exists(saved)
    res = jl("--cluster", "east", "kv", "failback", "CFG", "--tail", f"parquet:{tail}", "-f",
             "-j")
    assert res.exit_code == 0, res.output
    rep = doc(res)
    assert rep["unmatched"] == {**plan["unmatched"], "saved": True, "verified": True}
    steps = [(s["step"], s["detail"]) for s in rep["steps"]]
    assert ("save-unmatched", (
        f"1 message of KV_CFG@west (3..3) not on KV_CFG@east, held nowhere else (1 at "
        f"sequences KV_CFG@east no longer holds) saved to parquet:{saved} and counted "
        "there")) in steps
    names = [s for s, _ in steps]
    # saved before anything of west changes
    assert names.index("save-unmatched") < names.index("reuse-origin")
    assert (rep["reuse"]["messages"], rep["reuse"]["upto_seq"]) == (2, 2)
    # the revision k1=c, byte for byte, with its time; nothing else
    assert _rows(saved) == [(3, "$KV.CFG.k1", b"c")]
    ts = pq.read_table(saved, columns=["ts"]).column("ts").to_pylist()
    assert ts == [parse_rfc3339_nano(west[3]["time"])]
    meta = json.loads((Path(saved) / "_jetlink.json").read_text())
    assert meta["name"] == "KV_CFG" and meta["selection"].startswith("not-held:3-4:below-2:")
    # west a mirror of east now: it no longer holds 3
    west_now = doc(jl("--cluster", "west", "stream", "info", "KV_CFG", "-j"))["state"]
    assert (west_now["first_seq"], west_now["last_seq"], west_now["messages"]) == (1, 4, 3)
    # the human report names the dataset
    out = jl("--cluster", "east", "kv", "failback", "CFG", "-f")
    assert out.exit_code == 0, out.output
    assert "Held Only By The Old Origin:" in out.stdout
    assert f"Dataset: parquet:{saved} (saved, counted there)" in out.stdout


@pytest.mark.parametrize("step", ["compare", "save-unmatched"])
def test_killed_around_the_save_and_run_again(jl, step):
    """SIGKILL right before and right after the save: the re-run saves the same one message
    once (an earlier run's dataset of the same selection is counted again, not written
    again) and west is then a mirror."""
    _kv_history(jl)
    tail = jl.tmp / "tail"
    args = ("kv", "failback", "CFG", "--tail", f"parquet:{tail}")
    _killed_at(jl.data, step, *args, "-f")
    west = doc(jl("--cluster", "west", "stream", "info", "KV_CFG", "-j"))
    assert "mirror" not in west["config"] and west["state"]["messages"] == 4
    rep = _done(jl.data, *args)
    assert rep["resumed"] is True
    assert (rep["unmatched"]["messages"], rep["unmatched"]["verified"]) == (1, True)
    assert _rows(f"{tail}-unmatched") == [(3, "$KV.CFG.k1", b"c")]
    west = doc(jl("--cluster", "west", "stream", "info", "KV_CFG", "-j"))
    assert west["config"]["mirror"]["name"] == "KV_CFG"


def test_nothing_unmatched_no_step_no_dataset(jl):
    """A mirror holding every message of its origin: no step, no dataset, ``unmatched``
    null."""
    run = _ok(jl)
    run("cluster", "add", "west")
    run("cluster", "add", "east")
    run("--cluster", "west", "stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults")
    run("--cluster", "west", "pub", "orders.{{Count}}", "o", "--count", "4")
    run("--cluster", "east", "stream", "add", "ORDERS_EAST", "--mirror", "ORDERS",
        "--mirror-domain", "west", "--defaults")
    run("replicate")
    run("--cluster", "east", "positions", "sync")
    run("cluster", "down", "west")
    run("--cluster", "east", "stream", "failover", "ORDERS_EAST", "-f")
    run("cluster", "up", "west")
    tail = jl.tmp / "tail"
    rep = doc(run("--cluster", "east", "stream", "failback", "ORDERS_EAST", "--tail",
                  f"parquet:{tail}", "-f", "-j"))
    assert rep["unmatched"] is None
    assert "save-unmatched" not in [s["step"] for s in rep["steps"]]
    assert not os.path.exists(f"{tail}-unmatched")
