"""Mirrors and sources on the embedded store (core/replication.py, docs/replication.md).

Table-driven where possible; every table case runs on both copy paths (the SQL path and the
per-message path, ``bulk=False``) and must give the same answer. Expected values follow
nats-server 2.15.1 (tests/conformance/test_replication_conformance.py compares with a live
server); the ManualClock moves time.
"""

from __future__ import annotations

import os
import random
import sqlite3

import pytest

from jetlink.core import lake
from jetlink.core import replication as R
from jetlink.core.clock import ManualClock
from jetlink.core.errors import ApiError
from jetlink.core.jetstream import JetStream
from jetlink.core.repair import repair
from jetlink.core.store import DataDir
from jetlink.core.streams import recount

SEC = 1_000_000_000
SS = "Nats-Stream-Source"
EAST = {"api": "$JS.east.API"}
TR_ARCHIVE = {"src": "orders.*.new", "dest": "archive.{{wildcard(1)}}.{{partition(3,1)}}"}


# --- helpers ---------------------------------------------------------------------------------
class World:
    """A data directory with clusters ``local`` and ``east`` on one ManualClock."""

    def __init__(self, path, bulk: bool = True) -> None:
        self.clock = ManualClock()
        self.dd = DataDir(path)
        self.bulk = bulk
        self.jss = {"local": JetStream(self.dd.open("local"), self.clock)}

    def js(self, cluster: str = "local") -> JetStream:
        if cluster not in self.jss:
            if not self.dd.has_cluster(cluster):
                self.dd.add_cluster(cluster, now_ns=self.clock.now_ns())
            self.jss[cluster] = JetStream(self.dd.open(cluster), self.clock)
        return self.jss[cluster]

    def pump(self, **kw):
        kw.setdefault("bulk", self.bulk)
        return R.pump_until_idle(self.dd, self.clock, **kw)

    def step(self, **kw):
        kw.setdefault("bulk", self.bulk)
        return R.pump(self.dd, self.clock, **kw)

    def run(self, ops) -> None:
        for op in ops:
            kind, *args = op
            if kind == "pub":
                subject, data, *rest = args
                self.js().publish(subject, data.encode(), rest[0] if rest else None)
            elif kind == "pub@":
                cluster, subject, data = args
                self.js(cluster).publish(subject, data.encode())
            elif kind == "rm":
                self.js().delete_msg(*args)
            elif kind == "purge":
                stream, kw = args
                self.js().purge_stream(stream, **kw)
            elif kind == "adv":
                self.clock.advance_s(args[0])
            elif kind == "add":
                self.js(args[1] if len(args) > 1 else "local").add_stream(args[0])
            elif kind == "pump":
                self.pump()
            else:  # pragma: no cover - a typo in a table
                raise AssertionError(op)


def rows(js, name):
    return [(m.seq, m.subject, m.headers, m.data.decode()) for m in js.messages(name)]


def state(js, name, **kw):
    return js.stream_info(name, **kw).state.to_json()


def sub(d: dict, keys) -> dict:
    """The ``keys`` of a state document (omitted empty fields as 0 / [])."""
    empty = {"num_deleted": 0, "deleted": [], "num_subjects": 0}
    return {k: d.get(k, empty.get(k)) for k in keys}


def ident(js, stream: str) -> str:
    return R.identity(js.stream_info(stream).created_ns)


def consistent(js, name):
    with js.cluster.read() as conn:
        sid, first, last, msgs, nbytes = conn.execute(
            "SELECT id, first_seq, last_seq, msgs, bytes FROM streams WHERE name = ?", (name,)
        ).fetchone()
        rc = recount(conn, sid)
    assert rc["chain_errors"] == [], rc["chain_errors"]
    assert (rc["msgs"], rc["bytes"]) == (msgs, nbytes)
    assert rc["subjects"] == rc["subjects_table"]
    if msgs:
        assert rc["min_seq"] == first and rc["max_seq"] <= last


@pytest.fixture(params=[True, False], ids=["sql", "per-message"])
def world(request, tmp_path):
    w = World(tmp_path / "data", bulk=request.param)
    yield w
    w.dd.close()


def mirror(name="M", of="O", **kw):
    src = {k: v for k, v in kw.items() if k in ("opt_start_seq", "opt_start_time", "filter_subject",
                                               "subject_transforms", "external")}
    rest = {k: v for k, v in kw.items() if k not in src}
    return {"name": name, "mirror": {"name": of, **src}, **rest}


O = {"name": "O", "subjects": ["o.>"]}  # noqa: E741 - named after the stream it configures
PUB5 = [("pub", "o.a", "1"), ("pub", "o.b", "2"), ("pub", "o.a", "3"), ("pub", "o.b", "4"),
        ("pub", "o.c", "5")]

# --- mirrors ---------------------------------------------------------------------------------
# (id, origin config, ops before the mirror, mirror config, ops after (then pump),
#  expected state fields, expected (seq, subject, data) rows)
MIRROR_CASES = [
    ("copies-all", O, PUB5, mirror(), [],
     {"messages": 5, "first_seq": 1, "last_seq": 5, "num_deleted": 0, "num_subjects": 3},
     [(1, "o.a", "1"), (2, "o.b", "2"), (3, "o.a", "3"), (4, "o.b", "4"), (5, "o.c", "5")]),
    ("origin-gaps-are-placeholders", O, PUB5 + [("rm", "O", 2), ("rm", "O", 4)], mirror(), [],
     {"messages": 3, "first_seq": 1, "last_seq": 5, "num_deleted": 2, "deleted": [2, 4]},
     [(1, "o.a", "1"), (3, "o.a", "3"), (5, "o.c", "5")]),
    ("filter-subject", O, PUB5, mirror(filter_subject="o.a"), [],
     {"messages": 2, "first_seq": 1, "last_seq": 3, "deleted": [2]},
     [(1, "o.a", "1"), (3, "o.a", "3")]),
    ("filter-first-match-later", O, PUB5, mirror(filter_subject="o.b"), [],
     {"messages": 2, "first_seq": 2, "last_seq": 4, "deleted": [3]},
     [(2, "o.b", "2"), (4, "o.b", "4")]),
    ("transforms", O, PUB5,
     mirror(subject_transforms=[{"src": "o.a", "dest": "m.a"}, {"src": "o.b", "dest": "x.b"}]),
     [], {"messages": 4, "last_seq": 4},
     [(1, "m.a", "1"), (2, "x.b", "2"), (3, "m.a", "3"), (4, "x.b", "4")]),
    ("opt-start-seq", O, PUB5, mirror(opt_start_seq=3), [],
     {"messages": 3, "first_seq": 3, "last_seq": 5, "num_deleted": 0},
     [(3, "o.a", "3"), (4, "o.b", "4"), (5, "o.c", "5")]),
    ("opt-start-seq-past-the-end", O, PUB5[:2], mirror(opt_start_seq=5),
     [("pump",), ("pub", "o.x", "3"), ("pub", "o.x", "4"), ("pub", "o.x", "5")],
     {"messages": 1, "first_seq": 5, "last_seq": 5}, [(5, "o.x", "5")]),
    ("origin-head-purged", O, PUB5 + [("purge", "O", {"seq": 3})], mirror(), [],
     {"messages": 3, "first_seq": 3, "last_seq": 5, "num_deleted": 0},
     [(3, "o.a", "3"), (4, "o.b", "4"), (5, "o.c", "5")]),
    ("deletes-not-replicated", O, PUB5[:3], mirror(),
     [("pump",), ("rm", "O", 2), ("purge", "O", {"subject": "o.a"}), ("pub", "o.d", "4")],
     {"messages": 4, "first_seq": 1, "last_seq": 4, "num_deleted": 0},
     [(1, "o.a", "1"), (2, "o.b", "2"), (3, "o.a", "3"), (4, "o.d", "4")]),
    ("delete-in-mirror-kept-deleted", O, PUB5[:3], mirror(),
     [("pump",), ("rm", "M", 2), ("pub", "o.d", "4")],
     {"messages": 3, "last_seq": 4, "deleted": [2]},
     [(1, "o.a", "1"), (3, "o.a", "3"), (4, "o.d", "4")]),
    ("discard-old-keeps-newest", O, PUB5, mirror(max_msgs=2), [],
     {"messages": 2, "first_seq": 4, "last_seq": 5}, [(4, "o.b", "4"), (5, "o.c", "5")]),
    ("per-subject-limit", O, PUB5, mirror(max_msgs_per_subject=1), [],
     {"messages": 3, "first_seq": 3, "last_seq": 5}, [(3, "o.a", "3"), (4, "o.b", "4"),
                                                     (5, "o.c", "5")]),
    ("external-origin", {**O, "@": "east"}, [("pub@", "east", "o.a", "1"),
                                              ("pub@", "east", "o.b", "2")],
     mirror(external=EAST), [("pub@", "east", "o.c", "3")],
     {"messages": 3, "last_seq": 3}, [(1, "o.a", "1"), (2, "o.b", "2"), (3, "o.c", "3")]),
    ("mirror-of-a-mirror-with-gaps", O, PUB5,
     mirror("M1"), [("pump",), ("rm", "M1", 3), ("add", mirror("M", of="M1"))],
     {"messages": 4, "last_seq": 5, "deleted": [3]},
     [(1, "o.a", "1"), (2, "o.b", "2"), (4, "o.b", "4"), (5, "o.c", "5")]),
]


@pytest.mark.parametrize("case", MIRROR_CASES, ids=[c[0] for c in MIRROR_CASES])
def test_mirror_table(world, case):
    _id, ocfg, before, mcfg, after, want_state, want_rows = case
    ocfg = dict(ocfg)
    where = ocfg.pop("@", "local")
    world.js(where).add_stream(ocfg)
    world.run(before)
    world.js().add_stream(mcfg)
    world.run(after)
    world.pump()
    js = world.js()
    st = state(js, "M", deleted_details=True)
    assert sub(st, want_state) == want_state
    assert [(s, subj, d) for s, subj, _h, d in rows(js, "M")] == want_rows
    consistent(js, "M")
    mirror_info = js.stream_info("M").to_json()["mirror"]
    assert mirror_info["lag"] == 0 and "error" not in mirror_info


def test_mirror_keeps_seq_time_headers_minus_expected(world):
    js, clock = world.js(), world.clock
    js.add_stream(O)
    js.publish("o.a", b"1", {"Nats-Msg-Id": "m1", "Nats-Expected-Stream": "O", "Foo": "bar"})
    clock.advance_s(1)
    js.publish("o.b", b"2", {"Nats-Expected-Last-Sequence": "1"})
    js.add_stream(mirror())
    clock.advance_s(5)
    world.pump()
    assert rows(js, "M") == [(1, "o.a", {"Nats-Msg-Id": ["m1"], "Foo": ["bar"]}, "1"),
                             (2, "o.b", {}, "2")]
    assert [m.ts for m in js.messages("M")] == [m.ts for m in js.messages("O")]
    # a block left empty is no header at all: 2 * 30 + subjects + data + (4 + header)
    assert state(js, "M")["bytes"] == 30 + 3 + 1 + 4 + len(
        b"NATS/1.0\r\nNats-Msg-Id: m1\r\nFoo: bar\r\n\r\n") + 30 + 3 + 1
    assert state(js, "M")["last_ts"] == state(js, "O")["last_ts"]
    with pytest.raises(ApiError) as e:
        js.publish("o.x", b"", {"Nats-Expected-Stream": "M"})
    assert e.value.err_code == 10060


def test_mirror_gap_get_is_10037_and_gap_from_ttl(world):
    js, clock = world.js(), world.clock
    js.add_stream({**O, "allow_msg_ttl": True})
    js.publish("o.a", b"1")
    js.publish("o.b", b"2", {"Nats-TTL": "1s"})
    js.publish("o.c", b"3")
    clock.advance_s(2)
    js.add_stream(mirror())
    world.pump()
    assert state(js, "M", deleted_details=True)["deleted"] == [2]
    with pytest.raises(ApiError) as e:
        js.get_msg("M", 2)
    assert (e.value.code, e.value.err_code) == (404, 10037)


def test_mirror_start_options_only_while_empty(world):
    js = world.js()
    js.add_stream(O)
    for op in PUB5:
        world.run([op, ("adv", 1)])
    t3 = js.get_msg("O", 3).time
    js.add_stream(mirror(opt_start_time=t3))
    world.pump()
    assert state(js, "M")["first_seq"] == 3
    js.purge_stream("M")  # emptied, but it held messages: resumes after its last sequence
    js.publish("o.z", b"6")
    world.pump()
    assert [r[0] for r in rows(js, "M")] == [6]


def test_mirror_made_before_the_burst_drops_each_as_the_server(world):
    """A mirror made before its origin took the messages (the conformance case
    mirror/discard-new-drops, measured on nats-server 2.15.1): each reached the server's
    mirror on its own, however quickly they were published, and was dropped; one step of
    the engine reading them all drops them the same way."""
    js = world.js()
    js.add_stream(O)
    js.add_stream(mirror(max_msgs=2, discard="new"))
    world.clock.advance_s(1)
    world.run(PUB5)
    rep = next(r for r in world.pump() if r.target == "M")
    assert (rep.copied, rep.stalled, rep.error, rep.lag) == (2, False, None, 0)
    assert js.stream_info("M").to_json()["mirror"] == {
        "name": "O", "lag": 0, "active": js.stream_info("M").to_json()["mirror"]["active"]}


def test_mirror_at_its_discard_new_limit_drops_as_the_server(world):
    """nats-server 2.15.1 (stream.go processInboundMirrorMsg): a message reaching the mirror
    on its own that the mirror's DiscardNew limit refuses is consumed and dropped (the
    server bumps its clfs and logs it), no error in the mirror info, lag the consumer's
    pending count; once there is room the next message takes the mirror's next sequence
    (measured: origin 6 stored as mirror 3)."""
    js = world.js()
    js.add_stream(O)
    js.add_stream(mirror(max_msgs=2, discard="new"))
    for op in PUB5:  # one at a time, a step after each
        world.run([op])
        reports = world.pump()
    rep = next(r for r in reports if r.target == "M")
    assert (rep.copied, rep.stalled, rep.error, rep.lag, rep.seq) == (0, False, None, 0, 5)
    st = state(js, "M")
    assert (st["messages"], st["last_seq"]) == (2, 2)
    info = js.stream_info("M").to_json()["mirror"]
    assert info["lag"] == 0 and "error" not in info
    for subject, data in (("o.f", b"6"), ("o.g", b"7")):
        js.publish(subject, data)
        world.pump()
    info = js.stream_info("M").to_json()["mirror"]
    assert info["lag"] == 0 and "error" not in info
    assert state(js, "O")["messages"] == 7  # nothing lost at the origin
    js.update_stream(mirror(max_msgs=100, discard="new"))
    world.pump()
    assert [r[0] for r in rows(js, "M")] == [1, 2]  # the dropped ones are not fetched again
    js.publish("o.h", b"8")
    world.pump()
    got = rows(js, "M")
    assert [(r[0], r[1]) for r in got] == [(1, "o.a"), (2, "o.b"), (3, "o.h")]
    assert js.stream_info("M").to_json()["mirror"]["lag"] == 0
    js.publish("o.i", b"9")
    world.pump()
    assert [(r[0], r[1]) for r in rows(js, "M")][-1] == (4, "o.i")


def test_mirror_refused_inside_a_burst_stalls_and_drops_nothing(world):
    """A DiscardNew refusal with more messages after it (a burst: the origin ran ahead, or
    the mirror was made on an origin with history): nats-server's processMirrorMsgs
    discards the rest of the burst and retries its consumer, storing nothing more (measured
    on 2.15.1: 10 messages into max_msgs 3, lag 5). The mirror stalls at the refused
    message, the refusal in its info, lag the pending count; nothing is dropped: with room,
    every message comes in at its origin sequence."""
    js = world.js()
    js.add_stream(O)
    world.run(PUB5)
    world.clock.advance_s(1)
    js.add_stream(mirror(max_msgs=2, discard="new"))  # on an origin with history: a burst
    rep = next(r for r in world.pump() if r.target == "M")
    assert (rep.copied, rep.stalled, rep.error, rep.lag, rep.seq) == (
        2, True, "maximum messages exceeded", 1, 2)  # the server's pending - 1
    info = js.stream_info("M").to_json()["mirror"]
    assert (info["lag"], info["error"]["err_code"]) == (1, 10077)
    assert (state(js, "M")["messages"], state(js, "M")["last_seq"]) == (2, 2)
    js.publish("o.f", b"6")
    js.publish("o.g", b"7")
    world.pump()
    info = js.stream_info("M").to_json()["mirror"]
    assert (info["lag"], info["error"]["err_code"]) == (3, 10077)
    assert [r[0] for r in rows(js, "M")] == [1, 2]
    js.update_stream(mirror(max_msgs=100, discard="new"))
    world.pump()
    assert [(r[0], r[3]) for r in rows(js, "M")] == [
        (i, str(i)) for i in range(1, 8)]  # each at its origin sequence
    info = js.stream_info("M").to_json()["mirror"]
    assert info["lag"] == 0 and "error" not in info


# --- sources ---------------------------------------------------------------------------------
def hs(js, origin, seq, subject, filters=">", dests=">", name=None):
    return f"{name or origin} {seq} {filters} {dests} {subject} {ident(js, origin)}"


def test_source_header_transform_and_bytes(world):
    js = world.js()
    js.add_stream({"name": "ORDERS", "subjects": ["orders.>"]})
    for i in range(10):
        js.publish(f"orders.{i}.new", str(i).encode())
    js.publish("orders.1.old", b"old")
    js.add_stream({"name": "ARCHIVE", "sources": [
        {"name": "ORDERS", "subject_transforms": [TR_ARCHIVE]}]})
    world.pump()
    got = rows(js, "ARCHIVE")
    parts = [0, 1, 1, 2, 1, 2, 2, 0, 1, 2]  # partition(3,1) as nats-server computes it
    assert got == [(i + 1, f"archive.{i}.{p}",
                    {SS: [hs(js, "ORDERS", i + 1, f"orders.{i}.new", TR_ARCHIVE["src"],
                             TR_ARCHIVE["dest"])]}, str(i)) for i, p in enumerate(parts)]
    assert state(js, "ARCHIVE")["bytes"] == 1661  # as nats-server 2.15.1 reports it
    consistent(js, "ARCHIVE")
    info = js.stream_info("ARCHIVE").to_json()
    assert list(info) == ["config", "created", "state", "cluster", "sources", "ts"]
    # seq: the last origin message delivered (orders.1.old is filtered out)
    assert info["sources"] == [{"name": "ORDERS", "lag": 0, "seq": 10, "active": 0,
                                "subject_transforms": [TR_ARCHIVE]}]


SOURCE_CASES = [
    # (id, source config, origin publishes, expected (subject, header tokens 2-4, data))
    ("plain", {"name": "O"}, [("o.a", "1"), ("o.b", "2")],
     [("o.a", "> > o.a", "1"), ("o.b", "> > o.b", "2")]),
    ("filter", {"name": "O", "filter_subject": "o.a"}, [("o.a", "1"), ("o.b", "2"), ("o.a", "3")],
     [("o.a", "o.a > o.a", "1"), ("o.a", "o.a > o.a", "3")]),
    ("first-transform-wins", {"name": "O", "subject_transforms": [
        {"src": "o.a.*", "dest": "x.{{wildcard(1)}}"}, {"src": "o.b", "dest": "y.b"},
        {"src": "o.c.>", "dest": ""}]},
     [("o.a.1", "1"), ("o.b", "2"), ("o.c.1", "3"), ("o.d", "skipped")],
     [("x.1", "o.a.*\fo.b\fo.c.> x.{{wildcard(1)}}\fy.b\f> o.a.1", "1"),
      ("y.b", "o.a.*\fo.b\fo.c.> x.{{wildcard(1)}}\fy.b\f> o.b", "2"),
      ("o.c.1", "o.a.*\fo.b\fo.c.> x.{{wildcard(1)}}\fy.b\f> o.c.1", "3")]),
    ("opt-start-seq", {"name": "O", "opt_start_seq": 2}, [("o.a", "1"), ("o.b", "2")],
     [("o.b", "> > o.b", "2")]),
]


@pytest.mark.parametrize("case", SOURCE_CASES, ids=[c[0] for c in SOURCE_CASES])
def test_source_table(world, case):
    _id, src, pubs, want = case
    js = world.js()
    js.add_stream(O)
    for subject, data in pubs:
        js.publish(subject, data.encode())
    js.add_stream({"name": "S", "sources": [src]})
    world.pump()
    got = rows(js, "S")
    seqs = [int(h[SS][0].split(" ")[1]) for _s, _subj, h, _d in got]
    assert [(subj, " ".join(h[SS][0].split(" ")[2:5]), d) for _s, subj, h, d in got] == want
    assert [s for s, *_ in got] == list(range(1, len(want) + 1))
    assert seqs == sorted(seqs)
    consistent(js, "S")


def test_source_header_replaced_in_daisy_chain_and_local_publishes(world):
    js = world.js()
    js.add_stream({"name": "A", "subjects": ["a.>"]})
    js.add_stream({"name": "B", "subjects": ["b.>"], "sources": [{"name": "A"}]})
    js.add_stream({"name": "C", "sources": [{"name": "B", "filter_subject": "a.>"}]})
    js.publish("a.1", b"1", {"K": "v", "Nats-Expected-Stream": "A"})
    world.pump()
    assert js.publish("b.local", b"2").seq == 2
    js.publish("a.2", b"3")
    world.pump()
    assert [h for _s, _subj, h, _d in rows(js, "B")] == [
        {"K": ["v"], SS: [hs(js, "A", 1, "a.1")]}, {}, {SS: [hs(js, "A", 2, "a.2")]}]
    assert rows(js, "C") == [(1, "a.1", {"K": ["v"], SS: [hs(js, "B", 1, "a.1", "a.>")]}, "1"),
                             (2, "a.2", {SS: [hs(js, "B", 3, "a.2", "a.>")]}, "3")]
    with pytest.raises(ApiError) as e:
        js.publish("b.x", b"", {SS: "A 1 > > a.1"})
    assert e.value.err_code == 10227


def test_source_dedupe_within_target_window(world):
    js, clock = world.js(), world.clock
    for n in ("A", "B"):
        js.add_stream({"name": n, "subjects": [f"{n.lower()}.>"], "duplicate_window": SEC})
    js.add_stream({"name": "S", "subjects": ["s.>"], "duplicate_window": 60 * SEC,
                   "sources": [{"name": "A"}, {"name": "B"}]})
    js.publish("a.1", b"first", {"Nats-Msg-Id": "k1"})
    world.pump()
    js.publish("b.1", b"dup", {"Nats-Msg-Id": "k1"})
    js.publish("b.2", b"other", {"Nats-Msg-Id": "k2"})
    reports = {r.origin: r for r in world.pump()}
    assert (reports["B"].copied, reports["B"].skipped) == (1, 1)
    assert js.publish("s.x", b"", {"Nats-Msg-Id": "k2"}).duplicate
    clock.advance_s(61)
    js.publish("b.3", b"late", {"Nats-Msg-Id": "k1"})  # outside the window: stored
    world.pump()
    assert [d for *_x, d in rows(js, "S")] == ["first", "other", "late"]
    assert js.stream_info("S").to_json()["sources"][1]["seq"] == 3


def test_a_skipped_duplicate_leaves_the_sources_seq_at_the_last_stored(world):
    """StreamSourceInfo's seq is the last origin sequence the target stored (nats-server
    2.15.1): a duplicate skipped after it does not move it; the next one stored does."""
    js = world.js()
    js.add_stream({"name": "Q", "subjects": ["q.>"]})
    js.add_stream({"name": "T", "subjects": ["t.>"], "duplicate_window": 120 * SEC,
                   "sources": [{"name": "Q"}]})
    for i in range(3):
        js.publish("q.b", f"n{i}".encode())
    js.publish("t.x", b"mine", {"Nats-Msg-Id": "k9"})
    js.publish("q.c", b"dup", {"Nats-Msg-Id": "k9"})  # Q's 4: a duplicate in T
    world.pump()
    info = js.stream_info("T").to_json()
    assert (info["state"]["messages"], info["sources"][0]["seq"]) == (4, 3)
    js.publish("q.d", b"after")
    world.pump()
    info = js.stream_info("T").to_json()
    assert (info["state"]["messages"], info["sources"][0]["seq"]) == (5, 5)


def test_source_merge_by_origin_time_then_name_then_seq(world):
    js, clock = world.js(), world.clock
    for n in ("A", "B", "C"):
        js.add_stream({"name": n, "subjects": [f"{n.lower()}.>"]})
    order = [("b", 0), ("a", 0), ("c", 1), ("a", 1), ("b", 1), ("a", 2), ("c", 2), ("b", 3)]
    for origin, t in order:
        clock.set(ManualClock().now_ns() + t * SEC)
        js.publish(f"{origin}.x", f"{origin}{t}".encode())
    js.add_stream({"name": "S", "sources": [{"name": "C"}, {"name": "B"}, {"name": "A"}]})
    world.pump(batch=2)  # small steps: the merge must not depend on the batch size
    assert [d for *_x, d in rows(js, "S")] == ["a0", "b0", "a1", "b1", "c1", "a2", "c2", "b3"]


@pytest.mark.parametrize("budget", [None, 1000, 300, 77, 1])
def test_source_merge_holds_when_one_origins_budget_runs_out(world, budget):
    """Steps with a budget per agreement (``replicate --follow``'s): a filtered origin reads
    further in time for the same count; when the other origin's budget runs out with
    messages pending, the filtered one's later messages wait, so the stored order is the
    merge's (origin time, name, sequence), the same for every budget."""
    js, clock = world.js(), world.clock
    js.add_stream({"name": "A1", "subjects": ["a1.>"]})
    js.add_stream({"name": "A2", "subjects": ["a2.>"]})
    for burst in range(12):  # alternating bursts of 40, half of A1's on the filtered subject
        for origin in (("A1", "A2") if burst % 2 == 0 else ("A2", "A1")):
            for i in range(40):
                js.publish(f"{origin.lower()}.{'a' if i % 2 == 0 else 'b'}", b"x")
                clock.advance(SEC // 1000)
    js.add_stream({"name": "S", "sources": [{"name": "A1", "filter_subject": "a1.a"},
                                            {"name": "A2"}]})
    if budget is None:
        world.pump()
    else:
        while world.step(max_msgs=budget) and js.stream_info("S").state.messages < 720:
            pass
    got = [(h[SS][0].split(" ")[0].split(":")[0], int(h[SS][0].split(" ")[1]))
           for _s, _subj, h, _d in rows(js, "S")]
    assert len(got) == 720
    times = {o: {m.seq: m.ts for m in js.messages(o)} for o in ("A1", "A2")}
    keys = [(times[o][seq], o, seq) for o, seq in got]
    assert keys == sorted(keys)


def test_source_discard_new_retries_nothing_lost(world):
    js = world.js()
    js.add_stream(O)
    js.add_stream({"name": "S", "max_msgs": 2, "discard": "new", "sources": [{"name": "O"}]})
    world.run(PUB5[:4])
    rep = world.pump()[-1]
    assert (rep.copied, rep.stalled) == (2, True)
    assert js.stream_info("S").to_json()["sources"] == [
        {"name": "O", "lag": 0, "seq": 2, "active": 0}]
    js.purge_stream("S")
    world.pump()
    assert [(s, h[SS][0].split(" ")[1]) for s, _subj, h, _d in rows(js, "S")] == [
        (3, "3"), (4, "4")]
    assert js.stream_info("S").to_json()["sources"][0]["seq"] == 4


def test_source_added_by_update_and_turned_from_mirror(world):
    js = world.js()
    js.add_stream(O)
    js.add_stream(mirror())
    world.run(PUB5[:2])
    world.pump()
    js.update_stream({"name": "M", "sources": [{"name": "O"}]})
    js.publish("o.c", b"3")
    world.pump()
    # mirrored messages carry no Nats-Stream-Source: the source starts at O's first message
    assert [(s, h.get(SS, [""])[0].split(" ")[1:2]) for s, _x, h, _d in rows(js, "M")] == [
        (1, []), (2, []), (3, ["1"]), (4, ["2"]), (5, ["3"])]
    assert js.stream_info("M").to_json()["sources"][0]["seq"] == 3
    # a source removed and added again resumes after the last header it left
    js.update_stream({"name": "M", "sources": []})
    js.publish("o.d", b"4")
    world.pump()
    js.update_stream({"name": "M", "sources": [{"name": "O"}]})
    world.pump()
    assert [h[SS][0].split(" ")[1] for *_x, h, _d in rows(js, "M")[5:]] == ["4"]


def test_source_origin_recreated_starts_over(world):
    js, clock = world.js(), world.clock
    js.add_stream(O)
    js.add_stream({"name": "S", "sources": [{"name": "O"}]})
    js.publish("o.a", b"1")
    world.pump()
    js.delete_stream("O")
    clock.advance_s(1)
    js.add_stream(O)
    js.publish("o.b", b"2")
    world.pump()
    assert [d for *_x, d in rows(js, "S")] == ["1", "2"]


def test_source_external_origin_name_in_header(world):
    east = world.js("east")
    east.add_stream(O)
    east.publish("o.a", b"1")
    js = world.js()
    js.add_stream({"name": "S", "sources": [{"name": "O", "external": EAST}]})
    world.pump()
    name = f"O:{R.go_hash('$JS.east.API')}"
    (h,) = [h for *_x, h, _d in rows(js, "S")]
    assert h[SS] == [f"{name} 1 > > o.a {R.identity(east.stream_info('O').created_ns)}"]
    info = js.stream_info("S").to_json()["sources"][0]
    assert info["external"] == {"api": "$JS.east.API", "deliver": ""}


# --- StreamSourceInfo, reports, clusters down --------------------------------------------------
def test_go_hash_and_iname_match_the_server():
    assert R.go_hash("mine") == "1P5461Zr"  # seen in a 2.15.1 header: "WQ2:C=1P5461Zr 1 ..."
    from jetlink.core.config.stream import StreamSource

    src = StreamSource.from_json({"name": "O", "subject_transforms": [
        {"src": "o.a", "dest": ""}, {"src": "", "dest": "x.>"}]})
    assert R.iname_of(src) == "O o.a\f> >\fx.>"


def test_info_before_any_pump_and_missing_origin(world):
    js, clock = world.js(), world.clock
    js.add_stream(mirror(of="NOPE"))
    assert js.stream_info("M").to_json()["mirror"] == {"name": "NOPE", "lag": 0, "active": -1}
    reports = world.pump()
    assert reports[0].error == "stream not found"
    clock.advance_s(3)
    assert R.source_infos(world.dd, "local", "M", clock)[0] == {
        "name": "NOPE", "lag": 0, "active": -1,
        "error": {"code": 404, "err_code": 10059, "description": "stream not found"}}
    js.add_stream({"name": "NOPE", "subjects": ["n.>"]})
    js.publish("n.1", b"")
    world.pump()
    assert js.stream_info("M").to_json()["mirror"] == {"name": "NOPE", "lag": 0, "active": 0}
    with pytest.raises(ApiError):
        R.source_infos(world.dd, "local", "ZZ", clock)


def test_cluster_down_reports_error_active_grows_resumes_without_loss(world):
    east, js, clock = world.js("east"), world.js(), world.clock
    east.add_stream(O)
    js.add_stream(mirror(external=EAST))
    js.add_stream({"name": "S", "sources": [{"name": "O", "external": EAST}]})
    east.publish("o.a", b"1")
    world.pump()
    world.dd.set_down("east")
    assert world.dd.is_down("east")
    for i in range(3):
        east.publish("o.b", str(i).encode())
    clock.advance_s(7)
    reports = world.pump()
    assert {r.error for r in reports} == {"origin cluster east is down"}
    info = js.stream_info("M").to_json()["mirror"]
    assert info["active"] == 7 * SEC
    assert info["error"] == {"code": 500, "err_code": 10029,
                             "description": "origin cluster east is down"}
    assert js.stream_info("S").to_json()["sources"][0]["error"]["err_code"] == 10045
    clock.advance_s(3)
    assert js.stream_info("M").to_json()["mirror"]["active"] == 10 * SEC
    world.dd.set_down("east", False)
    world.pump()
    assert state(js, "M")["messages"] == 4 and state(js, "S")["messages"] == 4
    assert js.stream_info("M").to_json()["mirror"] == {
        "name": "O", "external": EAST | {"deliver": ""}, "lag": 0, "active": 0}


def test_target_in_down_cluster_is_skipped(world):
    east = world.js("east")
    world.js().add_stream(O)
    east.add_stream(mirror(external={"api": "$JS.local.API"}))
    world.js().publish("o.a", b"1")
    world.dd.set_down("east")
    assert [r for r in world.pump() if r.target == "M"] == []
    world.dd.set_down("east", False)
    world.pump()
    assert state(east, "M")["messages"] == 1


def test_unknown_origin_cluster(world):
    js = world.js()
    js.add_stream(mirror(external={"api": "$JS.nowhere.API"}))
    (rep,) = world.pump()
    assert rep.error == "origin cluster nowhere not found"


def test_max_msgs_bounds_each_agreement_and_lag(world):
    js = world.js()
    js.add_stream(O)
    for i in range(10):
        js.publish("o.a", str(i).encode())
    js.add_stream(mirror())
    js.add_stream({"name": "S", "sources": [{"name": "O"}]})
    reports = {r.target: r for r in world.step(max_msgs=4)}
    assert (reports["M"].copied, reports["S"].copied) == (4, 4)
    # pending after the 4th is 6: the server reports pending - 1
    assert js.stream_info("M").to_json()["mirror"]["lag"] == 5
    assert js.stream_info("S").to_json()["sources"][0]["lag"] == 5
    world.pump()
    assert state(js, "M")["messages"] == state(js, "S")["messages"] == 10


def test_a_spent_budget_keeps_the_lag_its_step_counted(world):
    """A stream with two sources: once one source's budget is spent (the other still has
    some, so the pump steps again) its lag stays what its last step counted, never 0."""
    js = world.js()
    js.add_stream(O)
    js.add_stream({"name": "P", "subjects": ["p.>"]})
    js.add_stream({"name": "S", "sources": [{"name": "O"}, {"name": "P"}]})
    for i in range(10):
        js.publish("o.a", str(i).encode())
    js.publish("p.a", b"only one")
    world.step(max_msgs=4)
    lags = {s["name"]: s["lag"] for s in js.stream_info("S").to_json()["sources"]}
    assert lags == {"O": 5, "P": 0}
    world.step(max_msgs=4)
    lags = {s["name"]: s["lag"] for s in js.stream_info("S").to_json()["sources"]}
    # (P's message, published after O's ten, waits for O's last two: the merge's order)
    assert lags == {"O": 1, "P": 0} and state(js, "S")["messages"] == 8
    world.pump()
    assert [s["lag"] for s in js.stream_info("S").to_json()["sources"]] == [0, 0]


def test_agreements_forgotten_with_their_stream(world):
    js = world.js()
    js.add_stream(O)
    js.add_stream(mirror())
    js.publish("o.a", b"1")
    world.pump()
    js.delete_stream("M")
    js.add_stream(mirror(opt_start_seq=2))
    js.publish("o.a", b"2")
    world.pump()
    assert [r[0] for r in rows(js, "M")] == [2]
    with js.cluster.read() as conn:
        assert conn.execute("SELECT count(*) FROM repl_agreements").fetchone()[0] == 1


# --- WorkQueue / Interest origins, "bring your own" consumer ------------------------------------
def test_workqueue_origin_upgraded_durable_consumer(world):
    js = world.js()
    js.add_stream({"name": "WQ", "subjects": ["wq.>"], "retention": "workqueue"})
    for i in range(5):
        js.publish(f"wq.{i % 2}", b"x")
    js.add_stream({"name": "WS", "sources": [{"name": "WQ"}]})
    world.pump()
    assert state(js, "WS")["messages"] == 5
    assert state(js, "WQ")["messages"] == 0  # removed as they were replicated
    (ci,) = js.consumers("WQ")
    doc = ci.to_json()
    assert doc["name"].startswith("JS_SRC_") and doc["config"]["sourcing"] is True
    assert doc["config"]["ack_policy"] == "flow_control"
    assert doc["config"]["metadata"]["_nats.src.stream"] == "WS"
    assert doc["ack_floor"]["stream_seq"] == 5
    js.publish("wq.9", b"y")
    world.pump()
    assert (state(js, "WQ")["messages"], state(js, "WS")["messages"]) == (0, 6)
    js.update_stream({"name": "WS", "sources": []})
    world.pump()
    assert js.consumers("WQ") == []  # the upgraded consumer goes with its agreement


def test_interest_origin_mirror_keeps_messages_published_after_setup(world):
    js = world.js()
    js.add_stream({"name": "IN", "subjects": ["in.>"], "retention": "interest"})
    js.publish("in.0", b"lost")  # nobody interested yet
    js.add_stream(mirror("IM", of="IN"))
    world.pump()
    for i in range(3):
        js.publish(f"in.{i}", b"y")
    world.pump()
    assert state(js, "IN")["messages"] == 0
    assert [r[0] for r in rows(js, "IM")] == [2, 3, 4]
    assert [c.name for c in js.consumers("IN")][0].startswith("JS_MIRROR_")


def test_bring_your_own_consumer(world):
    js = world.js()
    js.add_stream({"name": "W2", "subjects": ["w2.>"], "retention": "workqueue"})
    for i in range(3):
        js.publish(f"w2.{i}", b"z")
    byo = {"name": "mine", "deliver_subject": "deliver.mine"}
    with pytest.raises(ApiError) as e:  # the seed: StartSeq / StartTime / FilterSubject refused
        js.add_stream({"name": "X", "sources": [{"name": "W2", "opt_start_seq": 2,
                                                 "consumer": byo}]})
    assert e.value.err_code == 10215
    js.add_stream({"name": "S2", "sources": [{"name": "W2", "consumer": byo}]})
    assert world.pump()[-1].error == "consumer not found"
    js.add_consumer("W2", {"name": "mine", "durable_name": "mine",
                           "deliver_subject": "deliver.mine", "ack_policy": "explicit"})
    assert world.pump()[-1].error == "stream source consumer requires flow control ack policy"
    js.delete_consumer("W2", "mine")
    js.add_consumer("W2", {"name": "mine", "durable_name": "mine",
                           "deliver_subject": "deliver.mine", "ack_policy": "flow_control",
                           "flow_control": True, "idle_heartbeat": SEC,
                           "filter_subject": "w2.1"})
    world.pump()
    got = rows(js, "S2")
    assert [(subj, h[SS][0].split(" ")[:2]) for _s, subj, h, _d in got] == [
        ("w2.1", ["W2:C=1P5461Zr", "2"])]
    assert state(js, "W2")["messages"] == 2  # only the consumer's messages go
    assert [c.name for c in js.consumers("W2")] == ["mine"]


# --- the two paths give the same result ------------------------------------------------------
def _snapshot(js, name):
    with js.cluster.read() as conn:
        row = conn.execute("SELECT first_seq, last_seq, last_ts, msgs, bytes, last_msg_id "
                           "FROM streams WHERE name = ?", (name,)).fetchone()
    return (row, state(js, name, subjects_filter=">", deleted_details=True),
            [(m.seq, m.subject, m.ts, m.hdr, m.data) for m in js.messages(name)],
            js.stream_info(name).to_json().get("mirror"),
            js.stream_info(name).to_json().get("sources"))


def _random_world(path, bulk, seed):
    rnd = random.Random(seed)
    clean = seed % 2 == 0  # no headers, no deletes: the SQL path takes sources too
    w = World(path, bulk=bulk)
    js = w.js()
    js.add_stream({"name": "O", "subjects": ["o.>"], "allow_msg_ttl": True})
    targets = [mirror("M1"), mirror("M2", filter_subject="o.k1.*"),
               {"name": "S1", "sources": [{"name": "O"}]},
               {"name": "S2", "sources": [{"name": "O", "subject_transforms": [
                   {"src": "o.*.*", "dest": "t.{{wildcard(2)}}.{{partition(2,1)}}"}]}]},
               {"name": "S3", "subjects": ["s3.>"], "duplicate_window": 60 * SEC,
                "sources": [{"name": "O", "filter_subject": "o.k2.>"}]},
               {"name": "S4", "sources": [{"name": "O", "subject_transforms": [
                   {"src": "o.*.*", "dest": "u.{{wildcard(2)}}.{{wildcard(1)}}"}]}]}]
    w.js("east").add_stream(mirror("E1", external={"api": "$JS.local.API"}))
    for t in targets:
        js.add_stream(t)
    for _round in range(4):
        for _ in range(rnd.randint(20, 120)):
            subject = f"o.k{rnd.randint(0, 3)}.{rnd.randint(0, 5)}"
            headers = None
            r = 1.0 if clean else rnd.random()
            if r < 0.15:
                headers = {"Nats-Msg-Id": str(rnd.randint(0, 30))}
            elif r < 0.2:
                headers = {"Nats-Expected-Stream": "O", "X": "y"}
            elif r < 0.22:
                headers = {"Nats-TTL": "5s"}
            js.publish(subject, bytes(rnd.randint(0, 40)), headers)
            if rnd.random() < 0.3:
                w.clock.advance(rnd.randint(0, SEC))
        last = state(js, "O")["last_seq"]
        for _ in range(0 if clean else rnd.randint(0, 6)):
            try:
                js.delete_msg("O", rnd.randint(1, last))
            except ApiError:
                pass
        if rnd.random() < 0.3:
            js.publish("s3.local", b"l")
        if rnd.random() < 0.5:
            w.step(max_msgs=rnd.randint(1, 50))
        else:
            w.pump()
        w.clock.advance_s(rnd.random() * 3)
    w.pump()
    return w, ["M1", "M2", "S1", "S2", "S3", "S4"]


# REPL_SEEDS=200 runs more random workloads (checked by hand: 80 seeds pass).
# split=True: every whole-origin copy of 4 messages or more is split in transactions
# (R._TailScan; the default splits from 20,000 messages on).
@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize("seed", range(int(os.environ.get("REPL_SEEDS", "6"))))
def test_sql_path_and_per_message_path_agree(tmp_path, monkeypatch, seed, split):
    used: list[str] = []
    splits: list[str] = []
    sql_copy, first_part = R._sql_copy, R._TailScan.first_part

    def spy(txn, d, a, limit, o):
        out = sql_copy(txn, d, a, limit, o)
        if out is not None:
            used.append(d.name)
        return out

    def split_spy(self, *args):
        splits.append(self.a.target)
        return first_part(self, *args)

    monkeypatch.setattr(R, "_sql_copy", spy)
    monkeypatch.setattr(R._TailScan, "first_part", split_spy)
    if split:
        monkeypatch.setattr(R, "SPLIT_MIN", 4)
    a, names = _random_world(tmp_path / "a", True, seed)
    if seed % 2 == 0:
        assert {"M1", "M2", "E1", "S1", "S4"} <= set(used)
    assert split or not splits  # (a first catch-up cut by max_msgs is not whole: no split)
    used.clear()
    b, _ = _random_world(tmp_path / "b", False, seed)
    assert used == []
    for name in names:
        assert _snapshot(a.js(), name) == _snapshot(b.js(), name), name
        consistent(a.js(), name)
    assert _snapshot(a.js("east"), "E1") == _snapshot(b.js("east"), "E1")
    consistent(a.js("east"), "E1")
    # mirrors hold what the origin holds (deletes not replicated: a superset)
    origin = {m.seq: (m.subject, m.ts, m.data) for m in a.js().messages("O")}
    mirrored = {m.seq: (m.subject, m.ts, m.data) for m in a.js().messages("M1")}
    assert all(mirrored[s] == v for s, v in origin.items())
    a.dd.close()
    b.dd.close()


@pytest.mark.parametrize("threaded", [True, False])
@pytest.mark.parametrize("where", [0, 10, 30, 80, 99])
def test_sql_path_guard_stops_at_a_header_and_split_agree(tmp_path, monkeypatch, where,
                                                          threaded):
    """The SQL path's INSERT is not preceded by a scan for headers: its guard stops the
    statement at a message the per-message path must see (mirror: Nats-Expected-*; source:
    any header), SQLite undoes the statement, and the range is scanned and cut before it.
    The catch-up is split in transactions (60/28/12 %: seqs 1-60, 61-88, 89-100);
    the header is in one of them, or nowhere (0). The later parts' stats are read on another
    thread, or (``threaded=False``) by the copying connection itself. Both paths give the
    same streams, byte counts and chains."""
    monkeypatch.setattr(R, "SPLIT_MIN", 50)
    scans: list[bool] = []
    copy_range = R._sql_copy_range

    def spy(txn, d, a, limit, o, *, scan):
        scans.append(scan)
        return copy_range(txn, d, a, limit, o, scan=scan)

    monkeypatch.setattr(R, "_sql_copy_range", spy)
    splits: list[str] = []
    first_part = R._TailScan.first_part
    monkeypatch.setattr(R._TailScan, "first_part", lambda self, *args: (
        splits.append(self.a.target), first_part(self, *args))[1])
    if not threaded:
        monkeypatch.setattr(R._TailScan, "start", lambda self: None)
    snaps = []
    for bulk in (True, False):
        w = World(tmp_path / str(bulk), bulk=bulk)
        js = w.js()
        js.add_stream({"name": "ORDERS", "subjects": ["orders.>"]})
        for i in range(1, 101):
            hdrs = {"Nats-Expected-Stream": "ORDERS", "X": str(i)} if i == where else None
            js.publish(f"orders.{i % 7}.new", bytes(i), hdrs)
        js.add_stream(mirror("M", of="ORDERS"))
        js.add_stream({"name": "A", "sources": [{"name": "ORDERS",
                                                 "subject_transforms": [TR_ARCHIVE]}]})
        w.pump()
        for name in ("M", "A"):
            consistent(js, name)
        assert state(js, "M")["messages"] == state(js, "A")["messages"] == 100
        snaps.append([_snapshot(js, name) for name in ("M", "A")])
        w.dd.close()
    assert snaps[0] == snaps[1]
    assert (True in scans) == bool(where)  # the guard fired and the range was scanned
    if not where or where > 60:  # the first part was copied by a split
        assert set(splits) == {"M", "A"}


@pytest.mark.parametrize("split", [False, True])
def test_split_catch_up_into_a_target_holding_messages_on_the_same_subjects(
        tmp_path, monkeypatch, split):
    """A sourced stream that already holds messages of its own on subjects the transform
    also writes, and a mirror started after messages were removed from the origin's front:
    every part of a split catch-up links its first message of a subject to what the target
    held (chains, subject counts, bytes), as the per-message path does."""
    monkeypatch.setattr(R, "SPLIT_MIN", 10 if split else 10**9)
    splits: list[str] = []
    first_part = R._TailScan.first_part
    monkeypatch.setattr(R._TailScan, "first_part", lambda self, *args: (
        splits.append(self.a.target), first_part(self, *args))[1])
    snaps = []
    for bulk in (True, False):
        w = World(tmp_path / str(bulk), bulk=bulk)
        js = w.js()
        js.add_stream({"name": "ORDERS", "subjects": ["orders.>"]})
        js.add_stream({"name": "A", "subjects": ["archive.>"], "sources": [
            {"name": "ORDERS", "subject_transforms": [TR_ARCHIVE]}]})
        for i in range(12):  # the target's own messages first, on the transform's subjects
            js.publish(f"archive.{i % 4}.0", b"own" + bytes([i]))
        js.publish("archive.9.9", b"only the target's")
        for i in range(1, 301):
            js.publish(f"orders.{i % 9}.new", bytes(i % 200))
            w.clock.advance(1_000)
        js.purge_stream("ORDERS", seq=21)  # the origin now starts at 21
        js.add_stream(mirror("M", of="ORDERS"))
        w.pump()
        for name in ("A", "M"):
            consistent(js, name)
        assert state(js, "A")["messages"] == 13 + 280 and state(js, "M")["messages"] == 280
        snaps.append([_snapshot(js, name) for name in ("A", "M")])
        w.dd.close()
    assert snaps[0] == snaps[1]
    assert sorted(splits) == (["A", "M"] if split else [])


def _raw_hdr_types(js, name) -> dict[str, int]:
    with js.cluster.read() as conn:
        sid = conn.execute("SELECT id FROM streams WHERE name = ?", (name,)).fetchone()[0]
        lo, hi = sid << 40, (sid << 40) | ((1 << 40) - 1)
        return dict(conn.execute("SELECT typeof(hdr), count(*) FROM msgs WHERE id BETWEEN ? "
                                 "AND ? GROUP BY typeof(hdr)", (lo, hi)).fetchall())


def _lake_rows(w, cluster, name):
    return [(r["seq"], r["subject"], r["headers"], r["data"])
            for b in lake.iter_stream_batches(str(w.dd.cluster_path(cluster)), name, 0, 1 << 40)
            for r in b.to_pylist()]


@pytest.mark.parametrize("split", [False, True])
def test_source_headers_stored_by_reference_read_as_the_server_stores_them(
        tmp_path, monkeypatch, split):
    """The SQL path stores a sourced message's Nats-Stream-Source header as a reference
    (store/schema.py ``src_hdrs``). Everything that reads it sees the server's block, and
    every size counts its bytes: stream reads, mirrors of the sourced stream in the same
    cluster (the same reference) and in another (the reference mapped to that database's,
    and back again from there), a source of it (per-message path), deletes and purges, a
    lake export, the source removed and added again (its start found from the newest
    header), and a repair. The per-message path is the reference. ``split``: every whole
    catch-up in three transactions (the later parts' sizes read from the origin)."""
    if split:
        monkeypatch.setattr(R, "SPLIT_MIN", 4)
    transaction = R._transaction

    def checked(js, name, *args):  # every transaction leaves its target consistent
        moved = transaction(js, name, *args)
        consistent(js, name)
        return moved

    monkeypatch.setattr(R, "_transaction", checked)
    snaps, lakes = [], []
    for bulk in (True, False):
        w = World(tmp_path / str(bulk), bulk=bulk)
        js = w.js()
        js.add_stream({"name": "ORDERS", "subjects": ["orders.>"]})
        for i in range(1, 201):
            js.publish(f"orders.{i % 7}.new", bytes(i % 50))
            w.clock.advance(1_000)
        src = {"name": "ORDERS", "subject_transforms": [TR_ARCHIVE]}
        js.add_stream({"name": "A", "subjects": ["own.>"], "sources": [src]})
        w.pump()
        types = _raw_hdr_types(js, "A")
        assert types == ({"integer": 200} if bulk else {"blob": 200})
        w.js("east").add_stream({"name": "EB", "subjects": ["eb.>"], "sources": [
            {"name": "ORDERS", "external": {"api": "$JS.local.API"}}]})  # east's own refs
        w.pump()  # (so that A's have other ids there)
        js.add_stream(mirror("MA", of="A"))
        w.js("east").add_stream(mirror("EA", of="A", external={"api": "$JS.local.API"}))
        js.add_stream({"name": "B", "sources": [{"name": "A"}]})
        w.pump()
        js.add_stream(mirror("LA", of="EA", external={"api": "$JS.east.API"}))  # and back
        w.pump()
        assert _raw_hdr_types(js, "MA") == _raw_hdr_types(w.js("east"), "EA") == \
            _raw_hdr_types(js, "LA") == types
        assert _raw_hdr_types(js, "B") == {"blob": 200}
        js.delete_msg("A", 5)
        js.purge_stream("A", subject="archive.1.*")
        js.purge_stream("A", seq=20)
        js.update_stream({"name": "A", "subjects": ["own.>"]})  # the source removed ...
        w.pump()  # (its agreement forgotten)
        for i in range(201, 241):
            js.publish(f"orders.{i % 7}.new", bytes(i % 50))
            w.clock.advance(1_000)
        js.publish("own.x", b"own")
        js.update_stream({"name": "A", "subjects": ["own.>"], "sources": [src]})  # ... back
        w.pump()
        # It resumes after origin seq 200, the newest in A's headers (by time: nothing).
        assert state(js, "A")["last_seq"] == 241
        for name in ("A", "MA", "B", "LA"):
            consistent(js, name)
        for name in ("EA", "EB"):
            consistent(w.js("east"), name)
        snaps.append([_snapshot(js, name) for name in ("A", "MA", "B", "LA")]
                     + [_snapshot(w.js("east"), name) for name in ("EA", "EB")])
        lakes.append(_lake_rows(w, "local", "A"))
        w.dd.close()
    assert snaps[0] == snaps[1]
    assert lakes[0] == lakes[1]
    heads = [h for _seq, _subj, h, _d in lakes[0]]
    assert heads[-1].startswith(b"NATS/1.0\r\nNats-Stream-Source: ORDERS 240 orders.*.new "
                                b"archive.{{wildcard(1)}}.{{partition(3,1)}} orders.2.new ")
    assert heads[-1].endswith(b"\r\n\r\n") and heads[-1].count(b"\r\n") == 3
    # A repair keeps the referenced headers (and drops only messages whose reference is lost).
    w = World(tmp_path / "True")
    before = [_snapshot(w.js(), "A")]
    w.dd.close()
    report = repair(DataDir(tmp_path / "True"), "local")
    assert report.dropped == 0
    w = World(tmp_path / "True")
    assert [_snapshot(w.js(), "A")] == before
    consistent(w.js(), "A")
    with w.js().cluster.transaction() as conn:
        (lost,) = conn.execute("SELECT count(*) FROM msgs WHERE typeof(hdr) = 'integer' AND "
                               "hdr >> 40 = (SELECT min(id) FROM src_hdrs)").fetchone()
        conn.execute("DELETE FROM src_hdrs WHERE id = (SELECT min(id) FROM src_hdrs)")
    w.dd.close()
    report = repair(DataDir(tmp_path / "True"), "local")
    assert report.dropped == lost > 0
    w = World(tmp_path / "True")
    for name in ("A", "MA", "B", "LA"):
        consistent(w.js(), name)
    assert state(w.js(), "A")["messages"] < before[0][0][3]
    w.dd.close()


def test_sql_path_bytes_and_chains_on_a_large_catch_up(tmp_path):
    w = World(tmp_path / "d")
    js = w.js()
    js.add_stream({"name": "ORDERS", "subjects": ["orders.>"]})
    for start in range(0, 20_000, 5_000):
        js.publish_batch([(f"orders.{i % 37}.new", bytes(i % 50), None)
                          for i in range(start, start + 5_000)])
    js.add_stream(mirror("M", of="ORDERS", storage="memory"))
    js.add_stream({"name": "A", "sources": [{"name": "ORDERS",
                                             "subject_transforms": [TR_ARCHIVE]}]})
    w.pump(batch=7_000)  # partial ranges: per-subject counts computed in SQL
    for name in ("M", "A"):
        consistent(js, name)
    assert state(js, "M")["bytes"] == sum(16 + len(m.subject) + len(m.data)
                                         for m in js.messages("ORDERS"))
    w.dd.close()


def test_one_transaction_per_step(tmp_path, monkeypatch):
    """A failure in the middle of a step leaves neither messages nor a moved cursor."""
    w = World(tmp_path / "d", bulk=False)
    js = w.js()
    js.add_stream(O)
    js.add_stream({"name": "S", "sources": [{"name": "O"}]})
    for i in range(5):
        js.publish("o.a", str(i).encode())

    def boom(*a, **kw):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(R, "_finish", boom)
    with pytest.raises(sqlite3.OperationalError):
        w.pump()
    assert state(js, "S")["messages"] == 0
    monkeypatch.undo()
    w.pump()
    assert [d for *_x, d in rows(js, "S")] == ["0", "1", "2", "3", "4"]
    w.dd.close()


@pytest.mark.parametrize("where", ["end", "both ends", "middle"])
def test_split_catch_up_of_a_filtered_mirror_whose_parts_select_nothing(tmp_path, monkeypatch,
                                                                        where):
    """A filtered mirror's whole-origin catch-up is split (60/28/12 %): a part holding no
    message its filter selects copies nothing and the step counts its range instead (the
    first part's copy was a TypeError on an empty range); the messages selected are copied
    once, with the same streams as the per-message path."""
    monkeypatch.setattr(R, "SPLIT_MIN", 50)
    new = {"end": range(91, 101), "both ends": [*range(1, 4), *range(96, 101)],
           "middle": range(70, 75)}[where]
    snaps = []
    for bulk in (True, False):
        w = World(tmp_path / str(bulk), bulk=bulk)
        js = w.js()
        js.add_stream({"name": "O", "subjects": ["o.>"]})
        for i in range(1, 101):
            js.publish(f"o.new.{i % 3}" if i in new else f"o.old.{i % 7}", bytes(i))
        js.add_stream({"name": "M", "mirror": {"name": "O", "filter_subject": "o.new.*"}})
        w.pump()
        consistent(js, "M")
        assert state(js, "M")["messages"] == len(new)
        snaps.append(_snapshot(js, "M"))
        w.dd.close()
    assert snaps[0] == snaps[1]


@pytest.mark.parametrize("bulk", [True, False], ids=["sql path", "per-message path"])
def test_an_interrupt_just_after_a_commit_is_counted_as_committed(tmp_path, monkeypatch, bulk):
    """Ctrl-C landing right after a step's COMMIT (``replicate --follow`` stopped then), on
    either path: the step's ``committed`` reports count that transaction, as the target
    stores it (it was left out: 'copied' fell short of what was stored by one
    transaction)."""
    import os
    import signal

    from jetlink.core.store.datadir import Cluster

    w = World(tmp_path / "data", bulk=bulk)
    w.js().add_stream({"name": "O", "subjects": ["o.>"]})
    w.js().publish_batch([("o.x", b"m", None)] * 50)
    w.js("west").add_stream(mirror("M", external={"api": "$JS.local.API"}))
    real = Cluster.committed
    fired = []

    def commit_then_sigint(self):
        real(self)
        if self.name == "west" and not fired and self.conn.execute(
                "SELECT last_seq FROM streams WHERE name = 'M'").fetchone()[0]:
            fired.append(True)  # the copy's COMMIT (not a schema's)
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(Cluster, "committed", commit_then_sigint)
    committed: list = []
    with pytest.raises(KeyboardInterrupt):
        R.pump(w.dd, w.clock, bulk=bulk, committed=committed)
    assert fired
    stored = w.js("west").stream_info("M").state.messages
    assert stored == 50 and sum(r.copied for r in committed) == stored
    w.dd.close()


@pytest.mark.parametrize("kind", ["mirror", "source"])
def test_an_origin_whose_consumer_limits_set_max_ack_pending_is_never_copied(tmp_path, kind):
    """The server reads an origin through a push AckNone consumer it makes there; the
    origin's consumer_limits.max_ack_pending becomes that consumer's, which an AckNone push
    consumer may not have: 10082, nothing copied, the agreement's error saying so (it was
    copied here while a real server copied nothing and reported lag 0)."""
    w = World(tmp_path / "data")
    js = w.js()
    js.add_stream({"name": "O", "subjects": ["o.>"],
                   "consumer_limits": {"max_ack_pending": 100}})
    js.publish("o.a", b"x")
    if kind == "mirror":
        js.add_stream({"name": "T", "mirror": {"name": "O"}})
    else:
        js.add_stream({"name": "T", "subjects": ["t"], "sources": [{"name": "O"}]})
    w.pump()
    info = js.stream_info("T")
    doc = info.to_json()
    agreement = doc["mirror"] if kind == "mirror" else doc["sources"][0]
    assert info.state.messages == 0
    assert (agreement["lag"], agreement["active"], agreement["error"]) == (
        0, -1, {"code": 400, "err_code": 10082,
                "description": "consumer requires ack policy for max ack pending"})
    # the limit lifted: the agreement copies (the server retries its consumer)
    js.update_stream({"name": "O", "subjects": ["o.>"]})
    w.pump()
    assert js.stream_info("T").state.messages == 1
    w.dd.close()


def test_a_new_filtered_mirrors_create_reply_has_no_filter_yet(world):
    """The server reports a mirror's filter once its consumer on the origin is set up
    (stream.go setupMirrorConsumer), after the create's reply: that reply's mirror has
    none, STREAM.INFO's has it; a create of the stream that exists answers as INFO does."""
    js = world.js()
    js.add_stream({"name": "O", "subjects": ["o.>"]})
    cfg = {"name": "M", "mirror": {"name": "O", "filter_subject": "o.1"}}
    assert js.add_stream(cfg).to_json()["mirror"] == {"name": "O", "lag": 0, "active": -1}
    assert js.stream_info("M").to_json()["mirror"] == {
        "name": "O", "lag": 0, "active": -1, "filter_subject": "o.1"}
    assert js.add_stream(cfg).to_json()["mirror"]["filter_subject"] == "o.1"
    # a source's filter is in its create reply, as the server's (sourceInfo sf at creation)
    src = js.add_stream({"name": "S", "sources": [{"name": "O", "filter_subject": "o.2"}]})
    assert src.to_json()["sources"][0]["filter_subject"] == "o.2"


def test_a_bulk_jobs_progress_never_goes_back_when_limits_removed_an_origins_messages(
        tmp_path):
    """A bulk job's transaction before its last records each source's progress from the
    newest Nats-Stream-Source header stored; once the target's limits removed every
    message of an origin, that position is the one an earlier transaction recorded, never
    0 (the pump would copy that origin's messages again: a job killed there duplicated
    them)."""
    w = World(tmp_path / "data")
    try:
        js = w.js()
        js.add_stream({"name": "A", "subjects": ["a.>"]})
        js.add_stream({"name": "B", "subjects": ["b.>"]})
        for i in range(3):
            js.publish(f"a.{i}", b"a")
        js.add_stream({"name": "T", "subjects": ["t.>"], "sources": [{"name": "A"},
                                                                    {"name": "B"}]})
        w.pump()
        for i in range(4):
            js.publish(f"b.{i}", b"b")
        w.pump()
        for seq in (1, 2, 3):  # (what max_msgs would remove: A's, the oldest)
            js.delete_msg("T", seq)
        src = js.stream_info("T").config.sources[0]
        assert src.name == "A"
        R.prepare_seed(js.cluster)
        with js.write() as txn:
            d = txn.catalog.by_name["T"]
            origin = txn.catalog.by_name["A"]
            R.seed_agreement(txn, "local", d, "source", src, R.identity(origin.created_ns),
                             cursor=None)
        js.publish("a.9", b"new")
        w.pump()
        assert [m.subject for m in js.messages("T")] == [
            "b.0", "b.1", "b.2", "b.3", "a.9"]  # A's first three not copied again
    finally:
        w.dd.close()
