"""The publish path: headers, limits x discard, TTL, max_age, markers, dedupe, bytes.

Every expected error (code, err_code, text) and state below was observed on nats-server
2.15.1 with the same scenario (docs/engine.md "Checked against the server"). Time moves with
a ManualClock: no test sleeps.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from helpers import cfg, state

from jetlink.core import streams as S
from jetlink.core.errors import ApiError, JetlinkError
from jetlink.core.jetstream import JetStream
from jetlink.core.messages import PubAck

SEC = 1_000_000_000


def outcome(js, subject, data=b"x", headers=None):
    """seq, ("dup", seq) or (code, err_code, description)."""
    try:
        ack = js.publish(subject, data, headers)
    except ApiError as e:
        return (e.code, e.err_code, e.description)
    return ("dup", ack.seq) if ack.duplicate else ack.seq


# --- byte accounting (file: 30+subj+data [+4+hdr]; memory: 16+subj+hdr+data) -------------------
@pytest.mark.parametrize("storage,subject,data,headers,size", [
    ("file", "s.a", b"hello", None, 38),
    ("file", "t2.a", b"hello", None, 39),
    ("file", "t2.a", b"hello", {"Nats-Msg-Id": "x"}, 71),
    ("file", "t2.bb", b"", None, 35),
    ("file", "t2.a", b"", {"A": "b"}, 56),
    ("file", "t2.a", b"x" * 1000, None, 1034),
    ("memory", "t2.a", b"hello", None, 25),
    ("memory", "t2.a", b"hello", {"Nats-Msg-Id": "x"}, 53),
    ("memory", "t2.bb", b"", None, 21),
    ("memory", "t2.a", b"", {"A": "b"}, 38),
    ("memory", "t2.a", b"x" * 1000, None, 1020),
    ("file", "t2.é", b"hello", None, 40),        # subject length in UTF-8 bytes
    ("memory", "t2.é", b"h\xc3\xa9", {"K": "é"}, 16 + 5 + 19 + 3),
])
def test_bytes_like_the_server(js, storage, subject, data, headers, size):
    js.add_stream(cfg(subjects=["s.>", "t2.>"], storage=storage))
    js.publish(subject, data, headers)
    assert state(js)["bytes"] == size


# --- headers: one row per rule ---------------------------------------------------------------
# Stream S: seq 1 "s.a" (Nats-Msg-Id m1), seq 2 "s.b", seq 3 "s.a"; then publish "s.a" with:
WRONG4 = (400, 10071, "wrong last sequence: 3")
HEADER_CASES = [
    ({"Nats-Expected-Stream": "X"}, (400, 10060, "expected stream does not match")),
    ({"Nats-Expected-Stream": "S"}, 4),
    ({"Nats-Expected-Last-Sequence": "3"}, 4),
    ({"Nats-Expected-Last-Sequence": "1"}, WRONG4),
    ({"Nats-Expected-Last-Sequence": "abc"}, WRONG4),
    ({"Nats-Expected-Last-Sequence": ""}, 4),
    ({"Nats-Expected-Last-Subject-Sequence": "3"}, 4),
    ({"Nats-Expected-Last-Subject-Sequence": "0"}, WRONG4),
    ({"Nats-Expected-Last-Subject-Sequence": "2"}, WRONG4),
    ({"Nats-Expected-Last-Subject-Sequence-Subject": "s.a"},
     (400, 10193, "missing sequence for expected last sequence per subject")),
    ({"Nats-Expected-Last-Subject-Sequence": "2",
      "Nats-Expected-Last-Subject-Sequence-Subject": "s.b"}, 4),
    ({"Nats-Expected-Last-Subject-Sequence": "1",
      "Nats-Expected-Last-Subject-Sequence-Subject": "s.b"},
     (400, 10071, "wrong last sequence: 2")),
    ({"Nats-Expected-Last-Subject-Sequence": "0",
      "Nats-Expected-Last-Subject-Sequence-Subject": "s.zz"}, 4),
    ({"Nats-Expected-Last-Subject-Sequence": "3",
      "Nats-Expected-Last-Subject-Sequence-Subject": "s.*"}, 4),
    ({"Nats-Expected-Last-Msg-Id": "m1"}, (400, 10070, "wrong last msg ID: ")),
    ({"Nats-Expected-Last-Msg-Id": ""}, 4),
    ({"Nats-Msg-Id": "m1"}, ("dup", 1)),
    ({"Nats-Msg-Id": "m2"}, 4),
    ({"Nats-Msg-Id": "m1", "Nats-Expected-Last-Msg-Id": "zz"}, ("dup", 1)),
    ({"Nats-Msg-Id": "m1", "Nats-Expected-Stream": "X"},
     (400, 10060, "expected stream does not match")),
    ({"Nats-Msg-Id": "m1", "Nats-Expected-Last-Sequence": "99"}, WRONG4),
    ({"Nats-Rollup": "all"}, (500, 10111, "rollup not permitted")),
    ({"Nats-Rollup": "bad"}, (500, 10111, "rollup not permitted")),
    ({"Nats-TTL": "5s"}, (400, 10166, "per-message TTL is disabled")),
    ({"Nats-TTL": "bad"}, (400, 10165, "invalid per-message TTL")),
    ({"Nats-Stream-Source": "X 1"}, (400, 10227, "message stream source header is not allowed")),
    ({"Nats-Incr": "1"}, (400, 10168, "message counters is disabled")),
    ({"Nats-Incr": "x"}, (400, 10171, "message counter increment is invalid")),
    ({"Nats-Schedule": "@every 1s"}, (400, 10188, "message schedules is disabled")),
    ({"X": "y" * 70000}, (400, 10097, "header size exceeds maximum allowed of 64k")),
    ({"Nats-Expected-Stream": "X", "Nats-Expected-Last-Sequence": "1"},
     (400, 10060, "expected stream does not match")),
]


@pytest.mark.parametrize("headers,expect", HEADER_CASES, ids=lambda v: json.dumps(v)[:60])
def test_header_rules(js, headers, expect):
    js.add_stream(cfg())
    js.publish("s.a", b"1", {"Nats-Msg-Id": "m1"})
    js.publish("s.b", b"2")
    js.publish("s.a", b"3")
    before = state(js)
    assert outcome(js, "s.a", b"4", headers) == expect
    if not isinstance(expect, int):
        assert state(js) == before  # nothing stored


def test_expected_last_msg_id_follows_the_last_message(js):
    js.add_stream(cfg())
    assert outcome(js, "s.a", b"1", {"Nats-Msg-Id": "m1"}) == 1
    assert outcome(js, "s.a", b"1", {"Nats-Expected-Last-Msg-Id": "m1"}) == 2
    # the message stored without an id reset the stream's last msg id
    assert outcome(js, "s.a", b"1", {"Nats-Expected-Last-Msg-Id": "m1"}) == (
        400, 10070, "wrong last msg ID: ")


def test_expected_last_subject_sequence_zero_means_first(js):
    js.add_stream(cfg())
    assert outcome(js, "s.a", headers={"Nats-Expected-Last-Subject-Sequence": "0"}) == 1
    assert outcome(js, "s.a", headers={"Nats-Expected-Last-Subject-Sequence": "0"}) == (
        400, 10071, "wrong last sequence: 1")
    assert outcome(js, "s.a", headers={"Nats-Expected-Last-Subject-Sequence": "1"}) == 2


# --- rollups and TTL with the features on ----------------------------------------------------
ROLL = [
    ({"Nats-Rollup": "sub"}, 5, dict(messages=3, subjects={"s.a": 1, "s.b": 1, "s.c": 1})),
    ({"Nats-Rollup": "SUB"}, 5, dict(messages=3, subjects={"s.a": 1, "s.b": 1, "s.c": 1})),
    ({"Nats-Rollup": "all"}, 5, dict(messages=1, subjects={"s.a": 1})),
    ({"Nats-Rollup": "bad"}, (500, 10111, 'rollup value invalid: "bad"'), None),
    ({"Nats-TTL": "500ms"}, (400, 10165, "invalid per-message TTL"), None),
    ({"Nats-TTL": "0"}, (400, 10165, "invalid per-message TTL"), None),
    ({"Nats-TTL": "0s"}, (400, 10165, "invalid per-message TTL"), None),
    ({"Nats-TTL": "-1"}, (400, 10165, "invalid per-message TTL"), None),
    ({"Nats-TTL": "1s"}, 5, None),
    ({"Nats-TTL": "10"}, 5, None),
    ({"Nats-TTL": "never"}, 5, None),
    ({"Nats-TTL": "NEVER"}, 5, None),
    ({"Nats-TTL": "1.5s"}, 5, None),
    ({"Nats-TTL": "1m30s"}, 5, None),
]


@pytest.mark.parametrize("headers,expect,after", ROLL, ids=lambda v: json.dumps(v)[:40])
def test_rollup_and_ttl_values(js, headers, expect, after):
    js.add_stream(cfg(allow_rollup_hdrs=True, allow_msg_ttl=True))
    for s in ("s.a", "s.b", "s.a", "s.c"):
        js.publish(s, b"x")
    assert outcome(js, "s.a", b"5", headers) == expect
    if after:
        st = state(js, subjects_filter=">")
        assert {k: st[k] for k in after} == after


@pytest.mark.parametrize("text,seconds", [
    ("1s", 1), ("10", 10), ("1.5s", 1), ("1h", 3600), ("1m30s", 90), ("never", -1),
    ("Never", -1), ("", 0), ("500ms", None), ("0", None), ("-1", None), ("abc", None),
    ("-5s", None), ("1d", None),
])
def test_parse_msg_ttl(text, seconds):
    value, error = S.parse_msg_ttl(text)
    if seconds is None:
        assert error is not None and error.err_code == 10165
    else:
        assert (value, error) == (seconds, None)


def test_rollup_refused_when_purge_denied(js):
    with pytest.raises(ApiError) as e:
        js.add_stream(cfg(allow_rollup_hdrs=True, deny_purge=True))
    assert e.value.description == "roll-ups require the purge permission"


# --- limits x discard policy (observed on the server, subjects s.a s.a s.b s.a s.c) ------------
SEQ = ["s.a", "s.a", "s.b", "s.a", "s.c"]
MAXM = (503, 10077, "maximum messages exceeded")
MAXB = (503, 10077, "maximum bytes exceeded")
MAXP = (503, 10077, "maximum messages per subject exceeded")
NEW, NEWPER = dict(discard="new"), dict(discard="new", discard_new_per_subject=True)
LIMITS = [
    # storage, limits, acks, (messages, bytes, first_seq, last_seq)
    ("file", dict(max_msgs=2, **NEW), [1, 2, MAXM, MAXM, MAXM], (2, 76, 1, 2)),
    ("file", dict(max_bytes=80, **NEW), [1, 2, MAXB, MAXB, MAXB], (2, 76, 1, 2)),
    ("file", dict(max_msgs_per_subject=1, **NEW), [1, 2, 3, 4, 5], (3, 114, 3, 5)),
    ("file", dict(max_msgs_per_subject=1, **NEWPER), [1, MAXP, 2, MAXP, 3], (3, 114, 1, 3)),
    ("file", dict(max_msgs=2, max_msgs_per_subject=1, **NEW), [1, 2, 3, 4, MAXM], (2, 76, 3, 4)),
    ("file", dict(max_bytes=100, max_msgs_per_subject=1, **NEW), [1, 2, 3, 4, MAXB],
     (2, 76, 3, 4)),
    ("file", dict(max_bytes=60, max_msgs_per_subject=1, **NEW), [1, 2, MAXB, 3, MAXB],
     (1, 38, 3, 3)),
    ("file", dict(max_msgs=2), [1, 2, 3, 4, 5], (2, 76, 4, 5)),
    ("file", dict(max_bytes=80), [1, 2, 3, 4, 5], (2, 76, 4, 5)),
    ("file", dict(max_msgs_per_subject=2), [1, 2, 3, 4, 5], (4, 152, 2, 5)),
    ("file", dict(max_msgs=3, max_msgs_per_subject=2), [1, 2, 3, 4, 5], (3, 114, 3, 5)),
    ("memory", dict(max_msgs=2, **NEW), [1, 2, MAXM, MAXM, MAXM], (2, 48, 1, 2)),
    ("memory", dict(max_bytes=80, **NEW), [1, 2, 3, MAXB, MAXB], (3, 72, 1, 3)),
    ("memory", dict(max_msgs_per_subject=1, **NEW), [1, 2, 3, 4, 5], (3, 72, 3, 5)),
    ("memory", dict(max_msgs_per_subject=1, **NEWPER), [1, MAXP, 2, MAXP, 3], (3, 72, 1, 3)),
    ("memory", dict(max_msgs=2, max_msgs_per_subject=1, **NEW), [1, 2, 3, 4, MAXM],
     (2, 48, 3, 4)),
    ("memory", dict(max_bytes=100, max_msgs_per_subject=1, **NEW), [1, 2, 3, 4, 5],
     (3, 72, 3, 5)),
    ("memory", dict(max_bytes=60, max_msgs_per_subject=1, **NEW), [1, 2, 3, 4, MAXB],
     (2, 48, 3, 4)),
    ("memory", dict(max_msgs=2), [1, 2, 3, 4, 5], (2, 48, 4, 5)),
    ("memory", dict(max_bytes=80), [1, 2, 3, 4, 5], (3, 72, 3, 5)),
    ("memory", dict(max_msgs_per_subject=2), [1, 2, 3, 4, 5], (4, 96, 2, 5)),
    ("memory", dict(max_msgs=3, max_msgs_per_subject=2), [1, 2, 3, 4, 5], (3, 72, 3, 5)),
]


@pytest.mark.parametrize("storage,limits,acks,after", LIMITS,
                         ids=lambda v: json.dumps(v)[:50])
def test_limits_and_discard(js, storage, limits, acks, after):
    js.add_stream(cfg(storage=storage, **limits))
    assert [outcome(js, s, b"12345") for s in SEQ] == acks
    st = state(js)
    assert (st["messages"], st["bytes"], st["first_seq"], st["last_seq"]) == after


def test_discard_new_per_subject_lets_rollups_through(js):
    js.add_stream(cfg(max_msgs_per_subject=1, discard="new", discard_new_per_subject=True,
                      allow_rollup_hdrs=True))
    assert outcome(js, "s.a", b"1") == 1
    assert outcome(js, "s.a", b"2", {"Nats-Rollup": "sub"}) == 2
    st = state(js)
    assert (st["messages"], st["first_seq"], st["bytes"]) == (1, 2, 68)


def test_limits_in_one_batch_match_one_by_one(dd, clock):
    """The in-memory overlay of publish_batch gives the state one-by-one publishes give."""
    subjects = [f"s.{i % 7}" for i in range(300)] + [f"s.{i % 3}" for i in range(100)]
    results = []
    for k, batch in enumerate((True, False)):
        js = JetStream(dd.open(), clock)
        name = f"L{k}"
        js.add_stream(cfg(name=name, subjects=[f"{name}.>"], max_msgs=150,
                          max_msgs_per_subject=17, max_bytes=5000))
        msgs = [(f"{name}.{s}", b"p" * (i % 13), None) for i, s in enumerate(subjects)]
        if batch:
            acks = js.publish_batch(msgs)
        else:
            acks = [js.publish(*m) for m in msgs]
        st = js.stream_info(name, subjects_filter=">", deleted_details=True).state.to_json()
        st.pop("first_ts"), st.pop("last_ts")
        results.append((
            [a.seq for a in acks],
            {k.split(".", 1)[1]: v for k, v in st.pop("subjects").items()}, st,
            [(m.seq, m.data) for m in js.messages(name)],
        ))
    assert results[0] == results[1]


# --- max_msg_size, client-side refusals -------------------------------------------------------
def test_max_msg_size(js):
    js.add_stream(cfg(max_msg_size=100))
    big = (400, 10054, "message size exceeds maximum allowed")
    assert outcome(js, "s.a", b"x" * 100) == 1
    assert outcome(js, "s.a", b"x" * 101) == big
    assert outcome(js, "s.a", b"x" * 60, {"A": "b" * 30}) == big
    assert outcome(js, "s.a", b"x" * 60, {"A": "b" * 20}) == 2


@pytest.mark.parametrize("subject,data,headers,text", [
    ("", b"x", None, "nats: invalid subject"),
    ("a b", b"x", None, "nats: invalid subject"),
    ("s.*", b"x", None, "nats: invalid subject"),
    ("s..a", b"x", None, "nats: invalid subject"),
    ("s.a", b"x" * (1024 * 1024 + 1), None,
     "payload is 1,048,577 bytes: over the server's max_payload (1,048,576 bytes): "
     "nats: maximum payload exceeded"),
    ("s.a", b"x", {"bad key": "v"}, "nats: invalid header: 'bad key'"),
    ("s.a", b"x", {"a:b": "v"}, "nats: invalid header: 'a:b'"),
], ids=["empty", "space", "wildcard", "empty-token", "payload", "header-space", "header-colon"])
def test_client_side_refusals(js, subject, data, headers, text):
    js.add_stream(cfg())
    with pytest.raises(ApiError) as e:
        js.publish(subject, data, headers)
    assert (e.value.err_code, e.value.description) == (0, text)


def test_header_values_are_sanitised_like_nats_py(js):
    js.add_stream(cfg())
    js.publish("s.a", b"x", {" K ": "  a\r\nb  "})
    assert js.get_msg("S", 1).hdr == b"NATS/1.0\r\nK: a  b\r\n\r\n"


def test_no_ack_stream_answers_nothing(js):
    js.add_stream(cfg(no_ack=True, max_msgs=1, discard="new"))
    assert js.publish("s.a", b"1") is None  # stored, no PubAck
    assert js.publish("s.a", b"2", {"Nats-Expected-Last-Sequence": "7"}) is None  # refused
    assert js.publish_batch([("s.b", b"3", None), ("s.c", b"4", {"A": "b"})]) == [None, None]
    st = state(js)
    assert (st["messages"], st["last_seq"]) == (1, 1)


def test_a_mirror_takes_no_publish(js):
    js.add_stream(cfg(name="O", subjects=["o.>"]))
    js.add_stream(cfg(name="M", subjects=[], mirror={"name": "O"}))
    assert js.publish("o.x", b"1").stream == "O"  # a mirror has no subjects to capture with
    assert js.stream_info("M").state.messages == 0
    assert js.stream_names("o.x") == ["O"]


def test_no_stream_matches(js):
    js.add_stream(cfg())
    with pytest.raises(S.NoStreamError) as e:
        js.publish("other.x", b"x")
    assert e.value.description == "no stream matches subject other.x"
    assert isinstance(e.value, JetlinkError)


# --- subject transform -------------------------------------------------------------------------
def test_subject_transform_applies_after_capture(js):
    js.add_stream(cfg(subjects=["d.>"], subject_transform={"src": "d.*",
                                                           "dest": "x.{{wildcard(1)}}"}))
    assert js.publish("d.a", b"1").seq == 1
    assert js.publish("d.a.b", b"2").seq == 2  # does not match src: stored unchanged
    with pytest.raises(S.NoStreamError):
        js.publish("x.a", b"3")  # the transform's destination is not captured
    assert js.get_msg("S", 1).subject == "x.a"
    assert js.get_msg("S", 2).subject == "d.a.b"
    # expectations use the stored (transformed) subject
    assert outcome(js, "d.a", headers={"Nats-Expected-Last-Subject-Sequence": "1"}) == 3


# --- duplicates window --------------------------------------------------------------------------
def test_duplicate_window(js, clock):
    js.add_stream(cfg(duplicate_window=SEC))
    assert outcome(js, "s.a", headers={"Nats-Msg-Id": "a"}) == 1
    clock.advance(SEC - 1)
    assert outcome(js, "s.a", headers={"Nats-Msg-Id": "a"}) == ("dup", 1)
    clock.advance(1)  # now - ts >= window: forgotten
    assert outcome(js, "s.a", headers={"Nats-Msg-Id": "a"}) == 2
    assert outcome(js, "s.b", headers={"Nats-Msg-Id": "a"}) == ("dup", 2)
    assert state(js)["messages"] == 2


def test_duplicates_survive_purge_and_batches(js):
    js.add_stream(cfg())
    js.publish("s.a", b"x", {"Nats-Msg-Id": "a"})
    js.purge_stream("S")
    assert outcome(js, "s.a", headers={"Nats-Msg-Id": "a"}) == ("dup", 1)
    acks = js.publish_batch([("s.a", b"1", {"Nats-Msg-Id": "b"}),
                             ("s.a", b"2", {"Nats-Msg-Id": "b"})])
    assert [(a.seq, a.duplicate) for a in acks] == [(2, False), (2, True)]


def test_dedupe_table_is_pruned(js, clock):
    js.add_stream(cfg(duplicate_window=SEC))
    for i in range(5):
        js.publish("s.a", b"x", {"Nats-Msg-Id": str(i)})
    clock.advance(3 * SEC)
    js.publish("s.a", b"x", {"Nats-Msg-Id": "new"})
    with js.cluster.read() as conn:
        assert [r[0] for r in conn.execute("SELECT msg_id FROM dedupe")] == ["new"]


def test_no_dedupe_without_window_on_sources(js):
    js.add_stream(cfg(name="O", subjects=["o.>"]))
    js.add_stream(cfg(name="AGG", subjects=["agg.>"], sources=[{"name": "O"}]))
    assert js.stream_info("AGG").config.duplicate_window == 0
    assert outcome(js, "agg.a", headers={"Nats-Msg-Id": "a"}) == 1
    assert outcome(js, "agg.a", headers={"Nats-Msg-Id": "a"}) == 2


# --- max_age, TTL, subject delete markers ---------------------------------------------------------
def test_max_age(js, clock):
    js.add_stream(cfg(max_age=SEC))
    js.publish("s.a", b"1"), js.publish("s.b", b"2")
    clock.advance(600_000_000)
    js.publish("s.a", b"3")
    clock.advance(400_000_000)  # the first two are exactly max_age old: gone
    st = state(js)
    assert (st["messages"], st["first_seq"], st["last_seq"]) == (1, 3, 3)
    clock.advance(700_000_000)
    st = state(js)
    assert (st["messages"], st["first_seq"], st["last_seq"], st["first_ts"]) == (
        0, 4, 3, "0001-01-01T00:00:00Z")


def test_ttl_expiry_and_never(js, clock):
    js.add_stream(cfg(allow_msg_ttl=True, max_age=SEC))
    js.publish("s.a", b"x", {"Nats-TTL": "never"})
    js.publish("s.b", b"x")
    js.publish("s.c", b"x", {"Nats-TTL": "1h"})  # max_age still applies
    clock.advance(2 * SEC)
    st = state(js, subjects_filter=">")
    assert (st["messages"], st["subjects"]) == (1, {"s.a": 1})


def test_ttl_without_max_age(js, clock):
    js.add_stream(cfg(allow_msg_ttl=True))
    js.publish("s.a", b"x", {"Nats-TTL": "1s"})
    js.publish("s.b", b"x", {"Nats-TTL": "2"})
    js.publish("s.c", b"x")
    clock.advance(SEC)
    assert js.subjects("S") == {"s.b": 1, "s.c": 1}
    clock.advance(SEC)
    assert js.subjects("S") == {"s.c": 1}
    st = state(js)
    assert (st["first_seq"], st["last_seq"]) == (3, 3)


def test_subject_delete_markers(js, clock):
    js.add_stream(cfg(max_age=1_500_000_000, subject_delete_marker_ttl=SEC))
    t0 = clock.now_ns()
    js.publish("s.a", b"1"), js.publish("s.a", b"2")
    js.publish("s.b", b"3", {"Nats-TTL": "1s"})
    js.publish("s.c", b"4", {"Nats-TTL": "never"})
    clock.advance(2_300_000_000)
    st = js.stream_info("S", deleted_details=True, subjects_filter=">").state.to_json()
    # s.b's TTL ran out at 1s: marker 5 (expired at 2s); s.a's last message at 1.5s: marker 6
    assert (st["messages"], st["first_seq"], st["last_seq"], st["deleted"], st["subjects"]) == (
        2, 4, 6, [5], {"s.a": 1, "s.c": 1})
    m = js.get_msg("S", 6)
    assert m.subject == "s.a" and m.data == b""
    assert m.hdr == (b"NATS/1.0\r\nNats-Marker-Reason: MaxAge\r\nNats-TTL: 1s\r\n"
                     b"Nats-Rollup: sub\r\n\r\n")
    assert m.ts == t0 + 1_500_000_000  # stamped when the server's timer would have fired
    assert st["bytes"] == 109 + 67  # marker: 34+3+72 header bytes; s.c: 34+3+29+1
    clock.advance(1_600_000_000)
    st = state(js, subjects_filter=">")
    assert (st["messages"], st["subjects"], st["num_deleted"]) == (1, {"s.c": 1}, 2)


def test_marker_ttl_raises_short_message_ttls(js):
    js.add_stream(cfg(subject_delete_marker_ttl=5 * SEC, max_age=10 * SEC))
    js.publish("s.a", b"x", {"Nats-TTL": "1s"})
    js.publish("s.a", b"x", {"Nats-TTL": "10s", "A": "b"})
    assert js.get_msg("S", 1).hdr == b"NATS/1.0\r\nNats-TTL: 5\r\n\r\n"
    assert js.get_msg("S", 2).hdr == b"NATS/1.0\r\nNats-TTL: 10s\r\nA: b\r\n\r\n"


def test_markers_never_leave_markers(js, clock):
    js.add_stream(cfg(max_age=SEC, subject_delete_marker_ttl=SEC))
    js.publish("s.a", b"", {"KV-Operation": "PURGE"})
    js.publish("s.b", b"", {"Nats-Marker-Reason": "Remove"})
    js.publish("s.c", b"x")
    clock.advance(1_600_000_000)
    st = state(js, subjects_filter=">")
    assert (st["messages"], st["subjects"], st["last_seq"]) == (1, {"s.c": 1}, 4)


# --- counters -------------------------------------------------------------------------------------
def test_counter_stream(js):
    js.add_stream(cfg(allow_msg_counter=True))
    assert js.publish("s.a", b"", {"Nats-Incr": "5"}).val == "5"
    assert js.publish("s.a", b"", {"Nats-Incr": "-2"}).to_json() == {
        "stream": "S", "seq": 2, "val": "3"}
    assert outcome(js, "s.a", b"x", {"Nats-Incr": "1"}) == (
        400, 10170, "message counter has payload")
    assert outcome(js, "s.a", b"") == (400, 10169, "message counter increment is missing")
    assert js.get_msg("S", 2).data == b'{"val":"3"}'


# --- retention hooks ------------------------------------------------------------------------------
class Interested(S.NoConsumers):
    def __init__(self, subjects):
        self.subjects = subjects
        self.purges = []

    def has_interest(self, txn, stream, subject):
        return subject in self.subjects

    def on_purge(self, txn, stream, subject):
        self.purges.append((stream, subject))


def test_interest_retention_asks_the_hook(dd, clock):
    hooks = Interested({"s.a"})
    js = JetStream(dd.open(), clock, hooks=hooks)
    js.add_stream(cfg(retention="interest"))
    assert [js.publish(s, b"x").seq for s in ("s.a", "s.b", "s.a")] == [1, 2, 3]
    st = state(js)
    assert (st["messages"], st["first_seq"], st["last_seq"], st["num_deleted"]) == (2, 1, 3, 1)
    js.purge_stream("S", subject="s.a")
    assert hooks.purges == [("S", "s.a")]


def test_interest_with_nobody_uses_the_sequence(js):
    js.add_stream(cfg(retention="interest"))
    assert outcome(js, "s.a", headers={"Nats-Msg-Id": "a"}) == 1
    assert outcome(js, "s.a", headers={"Nats-Msg-Id": "a"}) == ("dup", 1)
    assert outcome(js, "s.b") == 2
    st = state(js)
    assert (st["messages"], st["first_seq"], st["last_seq"]) == (0, 3, 2)


def test_remove_msgs_hook_keeps_counters(js):
    js.add_stream(cfg(retention="workqueue"))
    for s in ("s.a", "s.b", "s.a", "s.c"):
        js.publish(s, b"x")
    with js.write() as txn:
        assert S.remove_msgs(txn, "S", [1, 3, 99]) == 2
    st = state(js, subjects_filter=">")
    assert (st["messages"], st["first_seq"], st["subjects"]) == (2, 2, {"s.b": 1, "s.c": 1})


def test_workqueue_ack_removes_through_the_consumer_engine(js):
    js.add_stream(cfg(retention="workqueue"))
    js.add_consumer("S", {"durable_name": "w", "ack_policy": "explicit"})
    for s in ("s.a", "s.b"):
        js.publish(s, b"x")
    msgs = js.fetch("S", "w", 2)
    assert [m.seq for m in msgs] == [1, 2]
    js.ack("S", "w", 1)
    st = state(js)
    assert (st["messages"], st["first_seq"], st["consumer_count"]) == (1, 2, 1)


# --- batches --------------------------------------------------------------------------------------
def test_publish_batch_mixes_results(js):
    js.add_stream(cfg(max_msgs=3, discard="new"))
    out = js.publish_batch([
        ("s.a", b"1", None), ("zz", b"2", None), ("s.b", b"3", {"Nats-Expected-Stream": "X"}),
        ("s.c", b"4", None), ("s.d", b"5", None), ("s.e", b"6", None),
    ])
    assert isinstance(out[0], PubAck) and out[0].seq == 1
    assert isinstance(out[1], S.NoStreamError)
    assert out[2].err_code == 10060
    assert [o.seq for o in out[3:5]] == [2, 3]
    assert out[5].description == "maximum messages exceeded"
    assert state(js)["messages"] == 3


def test_publish_batch_keeps_the_order_across_streams(js):
    js.add_stream(cfg())
    js.add_stream(cfg(name="T", subjects=["t.>"]))
    out = js.publish_batch([
        ("s.a", b"1", None), ("zz", b"x", None), ("s.a", b"2", None), ("t.a", b"3", None),
        ("s.b", b"4", None), ("t.b", b"5", {"A": "b"}), ("s.c", b"6", None),
    ])
    got = [(o.stream, o.seq) if isinstance(o, PubAck) else type(o).__name__ for o in out]
    assert got == [("S", 1), "NoStreamError", ("S", 2), ("T", 1), ("S", 3), ("T", 2), ("S", 4)]
    assert [m.data for m in js.messages("S")] == [b"1", b"2", b"4", b"6"]


# --- core pub/sub ---------------------------------------------------------------------------------
def test_core_publish_and_subscribe(js):
    js.add_stream(cfg())
    sub = js.subscribe("s.*")
    js.publish_core("s.a", b"1", {"H": "v"})
    js.publish("s.b", b"2")  # a JetStream publish is a message on the subject too
    js.publish_core("other", b"3")
    got = [sub.next(0), sub.next(0), sub.next(0)]
    assert [(m.subject, m.data) for m in got[:2]] == [("s.a", b"1"), ("s.b", b"2")]
    assert got[0].headers == {"H": ["v"]}
    assert got[2] is None
    assert state(js)["messages"] == 2  # the core publish was stored by the stream
    sub.close()
    js.publish_core("s.c", b"4")
    with js.cluster.read() as conn:  # nobody listens: nothing written for followers
        assert conn.execute("SELECT count(*) FROM core_msgs WHERE subject='s.c'").fetchone()[0] == 0


def test_a_queue_group_shares_the_messages_each_to_one_member(js):
    """Members of one queue group get each message once between them; a subscriber outside
    the group, or of another group, gets every one (NATS's queue subscriptions)."""
    a = js.subscribe("q.*", queue="workers")
    b = js.subscribe("q.*", queue="workers")
    other = js.subscribe("q.*", queue="audit")
    plain = js.subscribe("q.*")
    for i in range(30):
        js.publish_core(f"q.{i % 3}", str(i).encode())

    def drain(sub):
        out = []
        while (m := sub.next(0)) is not None:
            out.append(m.data)
        return out

    got_b, got_a = drain(b), drain(a)  # (whoever polls first claims what it sees)
    assert sorted(got_a + got_b, key=int) == [str(i).encode() for i in range(30)]
    assert not set(got_a) & set(got_b)
    assert len(drain(other)) == 30 and len(drain(plain)) == 30
    for sub in (a, b, other, plain):
        sub.close()


def test_core_publish_is_at_most_once(js):
    js.publish_core("x", b"before")
    sub = js.subscribe(">")
    js.publish_core("x", b"after")
    assert sub.next(0).data == b"after"
    assert sub.next(0) is None
    sub.close()


def test_core_publish_refusal_is_silent(js):
    js.add_stream(cfg(max_msgs=1, discard="new"))
    js.publish_core("s.a", b"1")
    js.publish_core("s.a", b"2")  # refused by the stream, no error for a core publish
    js.publish_core("nostream", b"3")
    assert state(js)["messages"] == 1


# --- bad input never corrupts ---------------------------------------------------------------------
def _dump(js) -> str:
    conn = js.cluster.conn
    h = hashlib.sha256()
    for line in conn.iterdump():
        h.update(line.encode())
    return h.hexdigest()


def test_bad_input_leaves_the_store_unchanged(js):
    js.add_stream(cfg(max_msg_size=1000, max_msgs_per_subject=2, discard="new",
                      discard_new_per_subject=True))
    js.publish("s.a", b"1", {"Nats-Msg-Id": "m1"})
    js.publish("s.a", b"2")
    js.publish("s.b", b"3")
    before = _dump(js)
    info_before = js.stream_info("S").to_json()
    bad_configs = [
        {"name": "a.b"}, {"name": "X", "subjects": ["s.>"]}, {"name": "X", "max_age": -1},
        {"name": "S", "max_msgs": 1}, {"name": "X", "bogus": True},
        {"name": "X", "storage": "tape"},
    ]
    for doc in bad_configs:
        with pytest.raises(JetlinkError):
            js.add_stream(doc)
    with pytest.raises(JetlinkError):
        js.update_stream(cfg(storage="memory", max_msg_size=1000))
    bad_publishes = [
        ("s.a", b"x" * 2000, None),                       # over max_msg_size
        ("s.a", b"x" * (2 << 20), None),                 # over max_payload
        ("s.a", b"x", {"Nats-Expected-Last-Sequence": "1"}),
        ("s.a", b"x", {"Nats-Expected-Stream": "other"}),
        ("s.a", b"x", {"Nats-Rollup": "all"}),
        ("s.a", b"x", {"Nats-TTL": "1s"}),
        ("s.a", b"x", {"Nats-Stream-Source": "x"}),
        ("s.a", b"x", {"bad header": "x"}),
        ("s.a", b"x", {"X": "y" * 70000}),
        ("s.a", b"x", None),                              # discard new per subject
        ("s.*", b"x", None), ("", b"x", None), ("nostream", b"x", None),
    ]
    for subject, data, headers in bad_publishes:
        with pytest.raises(JetlinkError):
            js.publish(subject, data, headers)
    with pytest.raises(JetlinkError):
        js.publish_batch([("s.b", b"ok", None), ("s.*", b"bad", None)])  # refused up front
    for call in (lambda: js.purge_stream("S", seq=2, keep=1), lambda: js.delete_msg("S", 99),
                 lambda: js.get_msg("S", 0), lambda: js.purge_stream("nope")):
        with pytest.raises(JetlinkError):
            call()
    assert js.publish("s.a", b"dup", {"Nats-Msg-Id": "m1"}).duplicate
    assert _dump(js) == before
    after = js.stream_info("S").to_json()
    after.pop("ts"), info_before.pop("ts")
    assert after == info_before


# --- publish_many: one transaction, the semantics of one publish per message --------------------
def test_publish_many_stops_at_the_first_refusal(js):
    js.add_stream(cfg(max_msgs=3, discard="new", duplicate_window=60 * SEC))
    js.add_stream(cfg(name="N", subjects=["n.>"], no_ack=True))
    msgs = [("s.a", b"1", None), ("s.a", b"2", {"Nats-Msg-Id": "m"}), ("s.a", b"3", None),
            ("s.a", b"4", {"Nats-Msg-Id": "m"}), ("s.a", b"5", None), ("s.a", b"6", None)]
    results = js.publish_many(msgs)
    assert [r.seq for r in results[:3]] == [1, 2, 3]
    assert results[3].duplicate and results[3].seq == 2
    assert isinstance(results[4], ApiError) and results[4].err_code == 10077
    assert len(results) == 5  # message 6 never published
    assert state(js, "S")["messages"] == 3
    # a client-side refusal mid-way: what came before it is stored, nothing after it
    results = js.publish_many([("n.a", b"x", None), ("bad subject", b"", None), ("n.b", b"", None)])
    assert results[0] is None and isinstance(results[1], JetlinkError) and len(results) == 2
    assert state(js, "N")["messages"] == 1
    # no stream: the error, then nothing
    results = js.publish_many([("zzz", b"", None), ("n.c", b"", None)])
    assert len(results) == 1 and "no stream matches subject" in str(results[0])
    assert state(js, "N")["messages"] == 1


def test_an_empty_placement_object_is_dropped_as_the_server_does(js):
    """``"placement": {}`` is no placement: created without one, read back without one."""
    info = js.add_stream({"name": "P", "subjects": ["p.>"], "placement": {}})
    assert info.config.placement is None
    assert "placement" not in js.stream_info("P").config.to_json()
