"""Failback keeps what the old origin already holds up to the divergence point
(core/dr/reuse.py) and the result is exactly what a full copy gives: each case is failed
back twice from the same world, once as jetlink does it and once with nothing reused (the
old origin deleted and created again empty, every message copied), and the two old origins
are compared: state, every message (sequence, subject, headers, data, time), the counters
against a recount; then the same after the promoted stream takes more and the mirrors copy
it, and after the switch back.

The world: west holds O (o.>, 12 messages on 3 subjects, some with headers); east its mirror
M, caught up; west goes down, M is promoted (failover), east takes 3 more; west comes back
and takes 2 more (the divergent tail, 13..14). Each case changes one thing before the
failback.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from jetlink.core import streams as S
from jetlink.core.clock import SystemClock
from jetlink.core.jetstream import JetStream
from jetlink.core.store import DataDir


def _world(path: Path, before_failover: Any = None) -> None:
    from jetlink.core.dr import promote
    from jetlink.core.dr.embedded import EmbeddedSite
    from jetlink.core.replication import pump_until_idle

    clock = SystemClock()
    dd = DataDir(path)
    try:
        dd.add_cluster("west")
        dd.add_cluster("east")
        west, east = JetStream(dd.open("west"), clock), JetStream(dd.open("east"), clock)
        west.add_stream({"name": "O", "subjects": ["o.>"]})
        for i in range(12):
            headers = {"Nats-Msg-Id": f"id{i}", "K": "v"} if i % 3 == 0 else None
            west.publish(f"o.{'abc'[i % 3]}", b"m%d" % i, headers=headers)
        if before_failover is not None:
            before_failover(west)
        east.add_stream({"name": "M", "mirror": {"name": "O",
                                                 "external": {"api": "$JS.west.API"}}})
        pump_until_idle(dd, clock)
        dd.set_down("west", True)
        promote(EmbeddedSite(dd, "east", clock), "M", failover=True, subjects=["m.>"])
        for i in range(3):
            east.publish("m.a", b"east%d" % i)
        dd.set_down("west", False)
        for i in range(2):
            west.publish("o.b", b"tail%d" % i)
    finally:
        dd.close()


def _failback(path: Path, tmp: Path, *, reuse: bool, switch: bool = False) -> dict:
    from jetlink.core.dr import failback
    from jetlink.core.dr.embedded import EmbeddedSite

    clock = SystemClock()
    dd = DataDir(path)
    try:
        site = EmbeddedSite(dd, "east", clock)
        if not reuse:  # the full copy: nothing kept
            from jetlink.core.dr.reuse import Reuse

            site.side = lambda cfg, _s=site.side: _no_reuse(_s(cfg), Reuse)  # type: ignore
        return failback(site, "M", tail=str(tmp / "tail"), switch=switch).to_json()
    finally:
        dd.close()


def _no_reuse(osite: Any, reuse: Any) -> Any:
    osite.agreed_prefix = lambda *a, **k: reuse(reason="full copy")
    return osite


def _dump(path: Path, cluster: str, stream: str) -> dict:
    dd = DataDir(path)
    try:
        js = JetStream(dd.open(cluster), SystemClock())
        info = js.stream_info(stream, subjects_filter=">", deleted_details=True)
        st = info.state.to_json() if hasattr(info.state, "to_json") else vars(info.state)
        msgs = [(m.seq, m.subject, m.hdr or None, bytes(m.data), m.ts)
                for m in js.messages(stream, start_seq=1)]
        conn = dd.open(cluster).conn
        sid = conn.execute("SELECT id FROM streams WHERE name = ?", (stream,)).fetchone()[0]
        rc = S.recount(conn, sid)
        assert rc["chain_errors"] == [], rc
        assert (rc["msgs"], rc["bytes"]) == (info.state.messages, info.state.bytes), rc
        assert rc["subjects"] == rc["subjects_table"], rc
        cfg = info.config.to_json()
        # the divergence record's "at" is when each failback ran (two runs compared: a
        # second apart at times); what it records is compared
        from jetlink.core.dr.fencing import DIVERGENCE_KEY

        meta = cfg.get("metadata") or {}
        if DIVERGENCE_KEY in meta:
            record = json.loads(meta[DIVERGENCE_KEY])
            record.pop("at", None)
            meta[DIVERGENCE_KEY] = json.dumps(record, sort_keys=True)
        return {"state": st, "msgs": msgs, "config": cfg}
    finally:
        dd.close()


def _more(path: Path) -> None:
    """East takes 2 more messages; every mirror copies them."""
    from jetlink.core.replication import pump_until_idle

    clock = SystemClock()
    dd = DataDir(path)
    try:
        east = JetStream(dd.open("east"), clock)
        for i in range(2):
            east.publish("m.c", b"later%d" % i)
        pump_until_idle(dd, clock)
    finally:
        dd.close()


def _exact(tmp: Path, before_failover: Any = None, change: Any = None) -> dict:
    """Fail back the world (with ``change`` made to the data directory first) both ways;
    assert the old origins equal at each point; the reuse part of jetlink's report."""
    world = tmp / "world"
    _world(world, before_failover)
    if change is not None:
        change(world)
    a, b = tmp / "reused", tmp / "copied"
    shutil.copytree(world, a)
    shutil.copytree(world, b)
    rep = _failback(a, tmp / "a", reuse=True)
    full = _failback(b, tmp / "b", reuse=False)
    assert full["reuse"]["messages"] == 0
    assert _dump(a, "west", "O") == _dump(b, "west", "O")
    assert rep["mirror"] == full["mirror"] and rep["mirror"]["caught_up"] is True
    assert rep["reuse"]["messages"] + rep["reuse"]["copied"] == \
        full["reuse"]["copied"]
    # later messages are published in each world at its own time: each old origin holds
    # exactly what its promoted stream holds, and the two worlds' counters agree
    _more(a)
    _more(b)
    _same(a, b)
    for p, t in ((a, tmp / "a"), (b, tmp / "b")):
        assert _failback(p, t, reuse=p == a, switch=True)["state"] == "switched"
    _same(a, b)
    return rep["reuse"]


_TIMES = ("first_ts", "last_ts")


def _same(a: Path, b: Path) -> None:
    """In each world O's messages are M's (up to M's last); the two worlds' O agree but for
    the times of the messages published after the failback."""
    dumps = {}
    for p in (a, b):
        o, m = _dump(p, "west", "O"), _dump(p, "east", "M")
        assert o["msgs"] == m["msgs"]
        dumps[p] = o
    oa, ob = dumps[a], dumps[b]
    assert {k: v for k, v in oa["state"].items() if k not in _TIMES} == \
        {k: v for k, v in ob["state"].items() if k not in _TIMES}
    assert [x[:4] for x in oa["msgs"]] == [x[:4] for x in ob["msgs"]]
    assert [x[4] for x in oa["msgs"][:-2]] == [x[4] for x in ob["msgs"][:-2]]


def test_a_prefix_both_hold_is_kept_and_the_tail_removed(tmp_path):
    """West's 1..12 are east's 1..12 (headers included): kept; its tail 13..14 saved and
    removed; east's 13..15 copied."""
    reuse = _exact(tmp_path)
    assert reuse == {"messages": 12, "upto_seq": 12, "copied": 3, "reason": (
        "O@west and M@east agree up to sequence 12 (subject, headers, data and time "
        "compared): every message up to the promoted sequence 12 agrees")}


def test_a_dry_run_counts_what_the_reuse_leaves_to_copy(tmp_path):
    """The dry run's "behind" is what the old origin, created again keeping its 1..12, has
    left to copy of east's 1..15: 3 (not 15, as if it kept nothing)."""
    from jetlink.core.dr import failback
    from jetlink.core.dr.embedded import EmbeddedSite

    path = tmp_path / "d"
    _world(path)
    dd = DataDir(path)
    try:
        rep = failback(EmbeddedSite(dd, "east", SystemClock()), "M",
                       tail=str(tmp_path / "tail"), dry_run=True).to_json()
    finally:
        dd.close()
    assert rep["reuse"]["upto_seq"] == 12
    assert (rep["mirror"]["last_seq"], rep["mirror"]["behind"]) == (12, 3)
    waiting = next(s for s in rep["steps"] if s["step"] == "switch")
    assert "is 3 messages behind" in waiting["detail"]


def _set_data(path: Path, cluster: str, stream: str, seq: int, data: bytes) -> None:
    """A stored message's data replaced in place, the same length (a side whose content at
    a sequence is not the other's, its counters unchanged)."""
    conn = sqlite3.connect(path / f"{cluster}.db")
    try:
        sid = conn.execute("SELECT id FROM streams WHERE name = ?", (stream,)).fetchone()[0]
        n = conn.execute("UPDATE msgs SET data = ? WHERE id = ?",
                         (data, S.msg_key(sid, seq))).rowcount
        conn.commit()
        assert n == 1
    finally:
        conn.close()


def test_content_that_differs_at_a_sequence_ends_the_prefix(tmp_path):
    reuse = _exact(tmp_path, change=lambda p: _set_data(p, "west", "O", 5, b"XX"))
    assert (reuse["messages"], reuse["upto_seq"], reuse["copied"]) == (4, 4, 11)
    assert reuse["reason"].endswith(": sequence 5 differs")


def _delete(cluster: str, stream: str, *seqs: int) -> Any:
    def change(path: Path) -> None:
        dd = DataDir(path)
        try:
            js = JetStream(dd.open(cluster), SystemClock())
            for seq in seqs:
                js.delete_msg(stream, seq)
        finally:
            dd.close()
    return change


def test_a_message_the_old_origin_deleted_after_the_copy_ends_the_prefix(tmp_path):
    reuse = _exact(tmp_path, change=_delete("west", "O", 3))
    assert (reuse["messages"], reuse["upto_seq"]) == (2, 2)
    assert reuse["reason"].endswith(": sequence 3 is on M@east only")


def test_a_message_the_promoted_stream_deleted_ends_the_prefix(tmp_path):
    reuse = _exact(tmp_path, change=_delete("east", "M", 7, 8))
    assert (reuse["messages"], reuse["upto_seq"]) == (6, 6)
    assert reuse["reason"].endswith(": sequence 7 is on O@west only")


def test_gaps_both_sides_have_are_kept_as_gaps(tmp_path):
    """Messages west deleted before the mirror copied them are gaps on both sides: the
    prefix goes on past them (and past a deleted first message)."""
    reuse = _exact(tmp_path, before_failover=lambda west: [west.delete_msg("O", s)
                                                           for s in (1, 4, 5)])
    assert (reuse["messages"], reuse["upto_seq"], reuse["copied"]) == (9, 12, 3)


def test_a_purged_old_origin_is_copied_whole(tmp_path):
    def purge(path: Path) -> None:
        dd = DataDir(path)
        try:
            JetStream(dd.open("west"), SystemClock()).purge_stream("O")
        finally:
            dd.close()

    reuse = _exact(tmp_path, change=purge)
    assert (reuse["messages"], reuse["upto_seq"], reuse["copied"]) == (0, 0, 15)
    assert reuse["reason"] == "nothing to reuse: sequence 1 is on M@east only"


def test_a_header_the_copy_acts_on_is_not_kept(tmp_path):
    """A message with a Nats-TTL header (the mirror's copy acts on it) is copied again,
    whatever it holds: the prefix ends before it."""
    def ttl(west: JetStream) -> None:
        west.update_stream({"name": "O", "subjects": ["o.>"], "allow_msg_ttl": True})
        west.publish("o.a", b"ttl", headers={"Nats-TTL": "1h"})

    reuse = _exact(tmp_path, before_failover=ttl)
    assert (reuse["messages"], reuse["upto_seq"]) == (12, 12)
    assert reuse["reason"].endswith(
        ": sequence 13 has a header the mirror's copy strips or acts on")


def test_a_message_removed_after_the_comparison_keeps_nothing(tmp_path, monkeypatch):
    """The old origin loses a message between the comparison and the reuse (an expiry, a
    delete): the reuse's transaction sees its counters moved and keeps nothing; every
    message is copied, the result exact."""
    from jetlink.core.dr import embedded

    world = tmp_path / "world"
    _world(world)
    real = embedded.EmbeddedSite.agreed_prefix

    def then_delete(self, stream, *args):
        got = real(self, stream, *args)
        self.js.delete_msg(stream, 2)
        return got

    monkeypatch.setattr(embedded.EmbeddedSite, "agreed_prefix", then_delete)
    rep = _failback(world, tmp_path, reuse=True)
    assert rep["reuse"] == {"messages": 0, "upto_seq": 0, "copied": 15, "reason": (
        "O@west changed while it was compared (a message removed): nothing kept, every "
        "message copied")}
    assert [s["step"] for s in rep["steps"]][:6] == [
        "record", "save-tail", "compare", "record-consumers", "delete-origin", "create-mirror"]
    assert _dump(world, "west", "O")["msgs"] == _dump(world, "east", "M")["msgs"]
