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
from helpers import data_dir_bytes, doc, ok
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


def _kv_history(jl, bucket: str = "CFG", clusters: bool = True) -> dict:
    """The module's scenario up to the failover (west back); west's messages by sequence."""
    run = _ok(jl)
    if clusters:
        run("cluster", "add", "west")
        run("cluster", "add", "east")
    run("--cluster", "west", "kv", "add", bucket, "--history", "5")
    for key, value in (("k1", "a"), ("k2", "b"), ("k1", "c"), ("k1", "d")):
        run("--cluster", "west", "kv", "put", bucket, key, value)
    run("--cluster", "east", "kv", "add", bucket, "--mirror", f"{bucket}@west", "--history",
        "1")
    run("replicate")
    stream = f"KV_{bucket}"
    east = doc(run("--cluster", "east", "stream", "info", stream, "-j"))["state"]
    assert (east["first_seq"], east["last_seq"], east["messages"]) == (2, 4, 2), east
    west = {}
    for seq in (1, 2, 3, 4):
        m = doc(run("--cluster", "west", "stream", "get", stream, str(seq), "-j"))
        west[seq] = m
    run("--cluster", "east", "positions", "sync")
    run("cluster", "down", "west")
    run("--cluster", "east", "kv", "failover", bucket, "-f")
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
    before = data_dir_bytes(jl.data, databases_only=True)
    plan = doc(jl("--cluster", "east", "kv", "failback", "CFG", "--tail", f"parquet:{tail}",
                  "--dry-run", "-j"))
    assert data_dir_bytes(jl.data, databases_only=True) == before
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
    assert meta["name"] == "KV_CFG" and meta["selection"].startswith("not-held:KV_CFG:")
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


def test_another_buckets_dataset_at_the_path_is_not_taken_for_this_ones(jl):
    """C8's failback saved its messages to V-unmatched; C9's, given the same --tail, finds a
    dataset of another stream there (the selection alike): refused, nothing of C9 deleted,
    the way out named; another --tail then saves C9's own."""
    _kv_history(jl, "C8")
    _kv_history(jl, "C9", clusters=False)
    v = jl.tmp / "V"
    ok(jl("--cluster", "east", "kv", "failback", "C8", "--tail", f"parquet:{v}", "-f"))
    before = data_dir_bytes(jl.data, databases_only=True)
    r = jl("--cluster", "east", "kv", "failback", "C9", "--tail", f"parquet:{v}", "-f")
    assert r.exit_code == 1, r.output
    assert f"{v}-unmatched" in r.stderr and "nothing of KV_C9 was deleted; run again with " \
        "another --tail parquet:PATH" in r.stderr, r.stderr
    west = doc(jl("--cluster", "west", "stream", "info", "KV_C9", "-j"))
    assert "mirror" not in west["config"] and west["state"]["messages"] == 4
    # (its plan written first, in jetlink's own bucket on east: what a re-run takes on; the
    # user's streams and buckets as they were)
    after = data_dir_bytes(jl.data, databases_only=True)
    assert after["west.db"] == before["west.db"]
    w = jl.tmp / "W"
    rep = doc(jl("--cluster", "east", "kv", "failback", "C9", "--tail", f"parquet:{w}", "-f",
                 "-j"))
    assert rep["unmatched"]["path"] == f"{w}-unmatched"
    assert _rows(f"{w}-unmatched") == [(3, "$KV.C9.k1", b"c")]
    streams = pq.read_table(f"{w}-unmatched", columns=["stream"]).column(0).to_pylist()
    assert streams == ["KV_C9"]


def test_a_finished_failback_says_where_it_saved_and_an_import_ends_at_its_cut(jl):
    """Run again once finished, the report still names the datasets (not null); the
    unmatched dataset imported into a stream of its own ends at its cut (sequence 3), not
    at the old origin's last sequence."""
    _kv_history(jl)
    tail = jl.tmp / "tail"
    ok(jl("--cluster", "east", "kv", "failback", "CFG", "--tail", f"parquet:{tail}", "-f"))
    ok(jl("--cluster", "east", "kv", "failback", "CFG", "--switch", "-f"))
    again = doc(jl("--cluster", "east", "kv", "failback", "CFG", "-f", "-j"))
    assert again["already_done"] is True
    assert (again["unmatched"]["path"], again["unmatched"]["messages"]) == (
        f"{tail}-unmatched", 1)
    assert again["tail"]["path"] == str(tail)
    ok(jl("cluster", "add", "imp"))
    ok(jl("--cluster", "imp", "stream", "import", "RU", f"parquet:{tail}-unmatched"))
    st = doc(jl("--cluster", "imp", "stream", "info", "RU", "-j"))["state"]
    assert (st["messages"], st["first_seq"], st["last_seq"]) == (1, 3, 3), st


def test_a_rerun_given_another_tail_says_where_the_unmatched_were_saved(jl):
    """Killed after save-unmatched, run again with another --tail (the tail was empty, so
    it is taken): the unmatched dataset stays where it was saved, and the report says so
    rather than calling it beside the new tail."""
    _kv_history(jl)
    p1, p2 = jl.tmp / "P1", jl.tmp / "P2"
    _killed_at(jl.data, "save-unmatched", "kv", "failback", "CFG", "--tail", f"parquet:{p1}",
               "-f")
    rep = _done(jl.data, "kv", "failback", "CFG", "--tail", f"parquet:{p2}")
    assert rep["tail"]["path"] == str(p2)
    assert (rep["unmatched"]["path"], rep["unmatched"]["path_from"]) == (
        f"{p1}-unmatched", "beside the first run's tail, where it was saved")


@pytest.mark.parametrize(("after", "said"), [
    (6, "; any other mirror that copied its sequences 7..7 keeps them: jetlink dr check "
        "names each (Diverged), to re-seed"),
    (10, "; the mark of an earlier failback stays (its sequences 7..7: jetlink dr check still "
         "names a mirror that copied them)"),
])
def test_the_divergence_mark_is_said_as_this_failbacks_or_an_earlier_ones(after, said):
    import json as _json

    from jetlink.core.config.stream import StreamConfig
    from jetlink.core.dr.failback import _divergence_note
    from jetlink.core.dr.fencing import DIVERGENCE_KEY

    cfg = StreamConfig.from_json({"name": "KV_C3", "metadata": {DIVERGENCE_KEY: _json.dumps(
        {"after": 6, "last": 7, "at": "2026-11-29T19:58:15Z"})}}, strict=False)
    assert _divergence_note(cfg, after) == said
