"""RePublish (core/republish.py): headers, when a store republishes, delivery, chains.

The expected header blocks were observed on nats-server 2.15.1 with the same scenarios
(docs/replication.md "RePublish", checked by hand with a raw subscriber): header order and
names, Nats-Last-Sequence after a delete, headers_only, chains through a capturing stream,
subject transforms, per-subject limits, duplicates, interest retention, subject delete markers,
sourced messages (refused by a capturing stream: their Nats-Stream-Source header).
Time moves with a ManualClock: no test sleeps.
"""

from __future__ import annotations

import logging

import pytest
from helpers import cfg

from jetlink.core import republish as RP
from jetlink.core.clock import format_rfc3339_nano
from jetlink.core.errors import ApiError

SEC = 1_000_000_000
T0 = "2026-01-01T00:00:00Z"


def hblock(*lines: str) -> bytes:
    return ("NATS/1.0\r\n" + "".join(f"{ln}\r\n" for ln in lines) + "\r\n").encode()


def rp_lines(stream, subject, seq, last, ts=T0, size=None):
    out = [f"Nats-Stream: {stream}", f"Nats-Subject: {subject}", f"Nats-Sequence: {seq}",
           f"Nats-Time-Stamp: {ts}", f"Nats-Last-Sequence: {last}"]
    if size is not None:
        out.append(f"Nats-Msg-Size: {size}")
    return out


def drain(sub):
    out = []
    while (m := sub.next(0)) is not None:
        out.append((m.subject, m.hdr, m.data))
    return out


def republished(sub, prefix):
    return [m for m in drain(sub) if m[0].startswith(prefix)]


# --- the header block --------------------------------------------------------------------------
@pytest.mark.parametrize("hdr,size,expected", [
    (None, None, hblock(*rp_lines("S", "s.a", 7, 3))),
    (hblock("A: 1", "B: two"), None, hblock("A: 1", "B: two", *rp_lines("S", "s.a", 7, 3))),
    (None, 5, hblock(*rp_lines("S", "s.a", 7, 3, size=5))),
    (hblock("Z: z"), 0, hblock("Z: z", *rp_lines("S", "s.a", 7, 3, size=0))),
])
def test_header_block(hdr, size, expected):
    got = RP.republish_header(hdr, "S", "s.a", 7, 1_767_225_600 * SEC, 3, size)
    assert got == expected


# --- one stream: what is republished, with which headers ---------------------------------------
# Each case: stream config (name S), publishes [(subject, data, headers)], expected
# republished messages [(subject, header lines, data)] in order.
CASES = {
    "basic, last sequence per subject, original headers first": (
        dict(subjects=["one.>"], republish={"src": "one.>", "dest": "uno.>"}),
        [("one.a", b"hello", None), ("one.a", b"hello2", {"A": "1", "B": "two"}),
         ("one.b", b"x", None)],
        [("uno.a", rp_lines("S", "one.a", 1, 0), b"hello"),
         ("uno.a", ["A: 1", "B: two", *rp_lines("S", "one.a", 2, 1)], b"hello2"),
         ("uno.b", rp_lines("S", "one.b", 3, 0), b"x")]),
    "headers_only: empty body, Nats-Msg-Size last": (
        dict(subjects=["h.>"], republish={"src": "h.>", "dest": "ho.>", "headers_only": True}),
        [("h.x", b"12345", None), ("h.x", b"123", {"Z": "z"})],
        [("ho.x", rp_lines("S", "h.x", 1, 0, size=5), b""),
         ("ho.x", ["Z: z", *rp_lines("S", "h.x", 2, 1, size=3)], b"")]),
    "src filters: only matching subjects": (
        dict(subjects=["one.>", "four.>"], republish={"src": "one.>", "dest": "uno.>"}),
        [("four.a", b"1", None), ("one.a", b"2", None)],
        [("uno.a", rp_lines("S", "one.a", 2, 0), b"2")]),
    "empty src means >": (
        dict(subjects=["p.>"], republish={"dest": "rp.>"}),
        [("p.x", b"1", None)],
        [("rp.p.x", rp_lines("S", "p.x", 1, 0), b"1")]),
    "wildcard mapping": (
        dict(subjects=["in.*.*"], republish={"src": "in.*.*", "dest": "out.{{wildcard(2)}}.$1"}),
        [("in.a.b", b"1", None)],
        [("out.b.a", rp_lines("S", "in.a.b", 1, 0), b"1")]),
    "stream subject_transform: src and Nats-Subject see the stored subject": (
        dict(subjects=["t.>"], subject_transform={"src": "t.>", "dest": "tt.>"},
             republish={"src": "tt.>", "dest": "rt.>"}),
        [("t.x", b"y", None)],
        [("rt.x", rp_lines("S", "tt.x", 1, 0), b"y")]),
    "per-subject limit 1: last sequence is the one the limit removes": (
        dict(subjects=["p.>"], max_msgs_per_subject=1, republish={"src": ">", "dest": "rp.>"}),
        [("p.x", b"1", None), ("p.x", b"2", None)],
        [("rp.p.x", rp_lines("S", "p.x", 1, 0), b"1"),
         ("rp.p.x", rp_lines("S", "p.x", 2, 1), b"2")]),
    "duplicate: not republished": (
        dict(subjects=["d.>"], republish={"src": ">", "dest": "rd.>"}),
        [("d.x", b"1", {"Nats-Msg-Id": "m"}), ("d.x", b"1", {"Nats-Msg-Id": "m"})],
        [("rd.d.x", ["Nats-Msg-Id: m", *rp_lines("S", "d.x", 1, 0)], b"1")]),
    "interest retention without consumers: nothing stored, nothing republished": (
        dict(subjects=["i.>"], retention="interest", republish={"src": ">", "dest": "ri.>"}),
        [("i.x", b"1", None)],
        []),
    "refused message: not republished": (
        dict(subjects=["m.>"], max_msg_size=3, republish={"src": ">", "dest": "rm.>"}),
        [("m.x", b"toolong", None), ("m.x", b"ok", None)],
        [("rm.m.x", rp_lines("S", "m.x", 1, 0), b"ok")]),
    "Nats-TTL kept as stored": (
        dict(subjects=["k.>"], allow_msg_ttl=True, republish={"src": ">", "dest": "rk.>"}),
        [("k.y", b"w", {"Nats-TTL": "1s"})],
        [("rk.k.y", ["Nats-TTL: 1s", *rp_lines("S", "k.y", 1, 0)], b"w")]),
    "counter stream: the stored value is republished": (
        dict(subjects=["c.>"], allow_msg_counter=True, republish={"src": ">", "dest": "rc.>"}),
        [("c.x", b"", {"Nats-Incr": "5"}), ("c.x", b"", {"Nats-Incr": "2"})],
        [("rc.c.x", ["Nats-Incr: 5", *rp_lines("S", "c.x", 1, 0)], b'{"val":"5"}'),
         ("rc.c.x", ["Nats-Incr: 2", *rp_lines("S", "c.x", 2, 1)], b'{"val":"7"}')]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_republish_cases(js, name):
    config, publishes, expected = CASES[name]
    js.add_stream(cfg(**config))
    with js.subscribe(">") as sub:
        for subject, data, headers in publishes:
            try:
                js.publish(subject, data, headers)
            except ApiError:
                pass
        got = [m for m in drain(sub) if m[1] and b"Nats-Stream: S" in m[1]]
    assert got == [(s, hblock(*lines), data) for s, lines, data in expected]


def test_last_sequence_after_delete_is_the_last_existing(js):
    js.add_stream(cfg(subjects=["one.>"], republish={"src": ">", "dest": "uno.>"}))
    with js.subscribe("uno.>") as sub:
        for data in (b"1", b"2", b"3"):
            js.publish("one.a", data)
        js.delete_msg("S", 3)
        js.publish("one.a", b"4")  # seq 4: seq 2 is the last existing one.a
        js.delete_msg("S", 1)
        js.delete_msg("S", 2)
        js.delete_msg("S", 4)
        js.publish("one.a", b"5")  # none left: 0
        got = [m[1] for m in drain(sub)][-2:]
    assert got == [hblock(*rp_lines("S", "one.a", 4, 2)), hblock(*rp_lines("S", "one.a", 5, 0))]


def test_time_stamp_is_the_stored_time_rfc3339nano(js, clock):
    js.add_stream(cfg(subjects=["s.>"], republish={"src": ">", "dest": "r.>"}))
    clock.advance(123_450_000)
    with js.subscribe("r.>") as sub:
        js.publish("s.a", b"1")
        (msg,) = drain(sub)
    assert b"Nats-Time-Stamp: 2026-01-01T00:00:00.12345Z\r\n" in msg[1]
    assert js.get_msg("S", 1).ts == clock.now_ns()


def test_follower_sees_the_publish_then_the_republish(js):
    js.add_stream(cfg(subjects=["s.>"], republish={"src": ">", "dest": "r.>"}))
    with js.subscribe(">") as sub:
        js.publish("s.a", b"1")
        js.publish_core("s.b", b"2")
        got = [(m[0], m[2]) for m in drain(sub)]
    assert got == [("s.a", b"1"), ("r.s.a", b"1"), ("s.b", b"2"), ("r.s.b", b"2")]


def test_publish_batch_republishes_every_stored_message(js):
    js.add_stream(cfg(subjects=["s.>"], max_msgs_per_subject=2,
                      republish={"src": ">", "dest": "r.>"}))
    with js.subscribe("r.>") as sub:
        acks = js.publish_batch([("s.a", b"1", None), ("s.a", b"2", None), ("s.a", b"3", None),
                                 ("s.b", b"4", {"H": "v"})])
        got = [(m[0], m[1], m[2]) for m in drain(sub)]
    assert [a.seq for a in acks] == [1, 2, 3, 4]
    assert got == [
        ("r.s.a", hblock(*rp_lines("S", "s.a", 1, 0)), b"1"),
        ("r.s.a", hblock(*rp_lines("S", "s.a", 2, 1)), b"2"),
        ("r.s.a", hblock(*rp_lines("S", "s.a", 3, 2)), b"3"),
        ("r.s.b", hblock("H: v", *rp_lines("S", "s.b", 4, 0)), b"4"),
    ]


def test_at_most_once_without_followers(js):
    js.add_stream(cfg(subjects=["s.>"], republish={"src": ">", "dest": "r.>"}))
    js.publish("s.a", b"1")  # nobody listens: gone
    with js.subscribe("r.>") as sub:
        js.publish("s.a", b"2")
        assert [m[2] for m in drain(sub)] == [b"2"]
    with js.cluster.read() as conn:
        assert conn.execute("SELECT count(*) FROM core_msgs").fetchone()[0] == 1


# --- delivery into streams of the same cluster ------------------------------------------------
def test_chain_through_capturing_streams(js):
    js.add_stream(cfg(name="A", subjects=["a.>"], republish={"src": "a.>", "dest": "b.>"}))
    js.add_stream(cfg(name="B", subjects=["b.>"], republish={"src": "b.>", "dest": "c.>"}))
    js.add_stream(cfg(name="C", subjects=["c.>"]))
    with js.subscribe(">") as sub:
        js.publish("a.1", b"m1", {"Nats-Msg-Id": "id1"})
        js.publish("a.1", b"m1", {"Nats-Msg-Id": "id1"})  # duplicate: stops here
        got = drain(sub)
    b_hdr = hblock("Nats-Msg-Id: id1", *rp_lines("A", "a.1", 1, 0))
    c_hdr = hblock("Nats-Msg-Id: id1", *rp_lines("A", "a.1", 1, 0), *rp_lines("B", "b.1", 1, 0))
    assert [m[0] for m in got] == ["a.1", "b.1", "c.1", "a.1"]
    assert got[1][1] == b_hdr and got[2][1] == c_hdr
    b, c = js.get_msg("B", 1), js.get_msg("C", 1)
    assert (b.subject, b.hdr, b.data) == ("b.1", b_hdr, b"m1")
    assert (c.subject, c.hdr, c.data) == ("c.1", c_hdr, b"m1")
    # the server's byte counts for these (its time stamps had 9 fraction digits: +10 each)
    assert js.state("B").bytes == 194 - 10 and js.state("C").bytes == 319 - 20


def test_capturing_stream_applies_its_checks_silently(js):
    js.add_stream(cfg(name="E", subjects=["e.>"], republish={"src": ">", "dest": "re.>"}))
    js.add_stream(cfg(name="CAP", subjects=["re.>"], max_msg_size=200))
    js.publish("e.1", b"a", {"Nats-Expected-Last-Sequence": "0"})  # CAP last 0: stored
    js.publish("e.2", b"b", {"Nats-Expected-Last-Sequence": "1"})  # CAP last 1: stored
    js.publish("e.3", b"x" * 300)  # over CAP's max_msg_size: refused, silently
    assert js.state("E").last_seq == 3
    assert js.state("CAP").last_seq == 2


def test_capturing_stream_transform_applies(js):
    js.add_stream(cfg(name="A", subjects=["a.>"], republish={"src": ">", "dest": "b.>"}))
    js.add_stream(cfg(name="B", subjects=["b.>"], subject_transform={"src": "b.>", "dest": "bb.>"}))
    js.publish("a.x", b"1")
    assert js.get_msg("B", 1).subject == "bb.a.x"


def test_sourced_message_is_refused_by_a_capturing_stream(js):
    """A sourced message keeps Nats-Stream-Source; a client publish carrying it is 10227."""
    js.add_stream(cfg(name="SX", subjects=["sx.>"], republish={"src": ">", "dest": "rsx.>"}))
    js.add_stream(cfg(name="CAP", subjects=["rsx.>"]))
    hdr = hblock("Nats-Stream-Source: X 1 > > x.1")
    with js.subscribe("rsx.>") as sub:
        with js.write() as txn:
            ack = txn.stream(txn.catalog.by_name["SX"]).append("x.1", hdr, b"a", sourced=True)
        assert ack.seq == 1
        (msg,) = drain(sub)
    assert msg[1] == hblock("Nats-Stream-Source: X 1 > > x.1", *rp_lines("SX", "x.1", 1, 0))
    assert js.state("CAP").messages == 0


def test_subject_delete_markers_are_republished(js, clock):
    js.add_stream(cfg(name="K", subjects=["k.>"], max_age=SEC, subject_delete_marker_ttl=SEC,
                      allow_msg_ttl=True, republish={"src": ">", "dest": "rk.>"}))
    with js.subscribe("rk.>") as sub:
        js.publish("k.x", b"v")
        clock.advance(SEC // 4)
        js.publish("k.y", b"w")
        clock.advance(2 * SEC)
        js.expire()
        got = drain(sub)
    marker = ["Nats-Marker-Reason: MaxAge", "Nats-TTL: 1s", "Nats-Rollup: sub"]
    t_x = format_rfc3339_nano(clock.now_ns() - 2 * SEC - SEC // 4 + SEC)
    t_y = format_rfc3339_nano(clock.now_ns() - 2 * SEC + SEC)
    assert got[2:] == [
        ("rk.k.x", hblock(*marker, *rp_lines("K", "k.x", 3, 1, ts=t_x)), b""),
        ("rk.k.y", hblock(*marker, *rp_lines("K", "k.y", 4, 2, ts=t_y)), b""),
    ]


def test_update_adds_and_removes_republish(js):
    js.add_stream(cfg(subjects=["s.>"]))
    with js.subscribe("r.>") as sub:
        js.publish("s.a", b"1")
        js.update_stream(cfg(subjects=["s.>"], republish={"src": ">", "dest": "r.>"}))
        js.publish("s.a", b"2")
        js.update_stream(cfg(subjects=["s.>"]))
        js.publish("s.a", b"3")
        got = drain(sub)
    assert got == [("r.s.a", hblock(*rp_lines("S", "s.a", 2, 1)), b"2")]


def test_republish_rolls_back_with_its_message(js):
    js.add_stream(cfg(name="A", subjects=["a.>"], republish={"src": ">", "dest": "b.>"}))
    js.add_stream(cfg(name="B", subjects=["b.>"]))
    with pytest.raises(RuntimeError):
        with js.write() as txn:
            txn.stream(txn.catalog.by_name["A"]).append("a.x", None, b"1")
            txn.flush()  # delivered into B inside the transaction ...
            raise RuntimeError("boom")  # ... and rolled back with it
    assert js.state("A").messages == 0 and js.state("B").messages == 0


# --- loops ---------------------------------------------------------------------------------------
def test_loop_stops_after_max_hops_with_a_logged_error(js, caplog):
    # `jetlink validate` refuses this pair; the engine, like the server, accepts each stream.
    js.add_stream(cfg(name="L1", subjects=["l1.>"], republish={"src": "l1.>", "dest": "l2.>"}))
    js.add_stream(cfg(name="L2", subjects=["l2.>"], republish={"src": "l2.>", "dest": "l1.>"}))
    with caplog.at_level(logging.ERROR, logger="jetlink.republish"):
        ack = js.publish("l1.x", b"loop")
    assert ack.seq == 1
    # hops 1..8 alternate L2, L1, ...: L1 holds the publish + hops 2, 4, 6, 8; L2 hops 1, 3, 5, 7
    assert js.state("L1").messages == 1 + RP.MAX_HOPS // 2
    assert js.state("L2").messages == RP.MAX_HOPS // 2
    (rec,) = [r for r in caplog.records if r.name == "jetlink.republish"]
    assert rec.levelno == logging.ERROR
    assert f"republish chain stopped after {RP.MAX_HOPS} hops" in rec.getMessage()
    # the next publish starts a new chain
    caplog.clear()
    with caplog.at_level(logging.ERROR, logger="jetlink.republish"):
        js.publish("l2.y", b"again")
    assert js.state("L2").messages == RP.MAX_HOPS // 2 + 1 + RP.MAX_HOPS // 2
    assert len(caplog.records) == 1


def test_compile_rule():
    assert RP.compile_rule(cfg()) is None
    assert RP.compile_rule(cfg(republish={"src": ">", "dest": ""})) is None
    rule = RP.compile_rule(cfg(republish={"src": "s.*", "dest": "r.$1", "headers_only": True}))
    assert RP.describe(rule) == {"stream": "S", "src": "s.*", "dest": "r.$1", "headers_only": True}
    assert rule.target("s.a") == "r.a" and rule.target("t.a") is None


def test_capturing_stream_deduplicates_republished_msg_ids(js):
    # server 2.15.1: two streams republishing the same Nats-Msg-Id into CAP2 store it once
    js.add_stream(cfg(name="E1", subjects=["e1.>"], republish={"src": ">", "dest": "rr.>"}))
    js.add_stream(cfg(name="E2", subjects=["e2.>"], republish={"src": ">", "dest": "rr.>"}))
    js.add_stream(cfg(name="CAP2", subjects=["rr.>"]))
    js.publish("e1.x", b"a", {"Nats-Msg-Id": "k"})
    js.publish("e2.x", b"b", {"Nats-Msg-Id": "k"})
    assert js.state("CAP2").messages == 1
    assert js.state("CAP2").bytes == 197 - 10  # the server's time stamp had 9 fraction digits
