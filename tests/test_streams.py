"""Streams on the embedded engine: CRUD, state, purge, get, delete, subjects, view, seal.

Expected values were observed on nats-server 2.15.1 (same scenario run against the server by
hand: docs/engine.md "Checked against the server").
"""

from __future__ import annotations

import pytest
from helpers import cfg, state

from jetlink.core.errors import ApiError
from jetlink.core.streams import recount


def err(exc_info) -> tuple[int, int, str]:
    e = exc_info.value
    return (e.code, e.err_code, e.description)


def publish_all(js, *subjects, data=b"x"):
    return [js.publish(s, data).seq for s in subjects]


def assert_consistent(js, name="S"):
    """The stored counters equal a recount of the rows."""
    with js.cluster.read() as conn:
        sid, first, last, msgs, nbytes = conn.execute(
            "SELECT id, first_seq, last_seq, msgs, bytes FROM streams WHERE name = ?", (name,)
        ).fetchone()
        rc = recount(conn, sid)
    assert rc["msgs"] == msgs and rc["bytes"] == nbytes
    assert rc["subjects"] == rc["subjects_table"]
    assert rc["chain_errors"] == []
    if msgs:
        assert rc["min_seq"] == first and rc["max_seq"] <= last
    else:
        assert first == last + 1 or (first == 0 and last == 0)


# --- CRUD ------------------------------------------------------------------------------------
def test_add_fills_defaults_and_info_shape(js):
    info = js.add_stream(cfg()).to_json()
    c = info["config"]
    assert c["max_msgs"] == -1 and c["duplicate_window"] == 120_000_000_000
    # a Go map: encoding/json writes its keys sorted
    assert list(c["metadata"].items()) == [
        ("_nats.level", "5"), ("_nats.req.level", "0"), ("_nats.ver", "2.15.1")]
    # a single server names no leader in its answer to a create (jsStreamCreateRequest) nor
    # to an update; STREAM.INFO does, and STREAM.LIST's configs lack the response metadata
    assert list(info) == ["config", "created", "state", "ts"]
    assert "cluster" not in js.update_stream(cfg(description="d")).to_json()
    assert list(js.stream_info("S").to_json()) == [
        "config", "created", "state", "cluster", "ts"]
    assert js.stream_info("S").to_json()["cluster"] == {"leader": "local"}
    listed = js.streams()[0].to_json()
    assert list(listed) == ["config", "created", "state", "ts"]
    assert listed["config"]["metadata"] == {"_nats.req.level": "0"}
    assert info["state"] == {
        "messages": 0, "bytes": 0, "first_seq": 0, "first_ts": "0001-01-01T00:00:00Z",
        "last_seq": 0, "last_ts": "0001-01-01T00:00:00Z", "consumer_count": 0}


def test_add_again_same_is_ok_different_is_10058(js):
    js.add_stream(cfg())
    js.add_stream(cfg())
    with pytest.raises(ApiError) as e:
        js.add_stream(cfg(max_msgs=5))
    assert err(e) == (400, 10058, "stream name already in use with a different configuration")
    assert e.value.detail.endswith(": max_msgs 5 given, -1 stored (stream edit changes a "
                                   "stream's configuration)"), e.value.detail


def test_add_checks_config_and_overlap(js):
    with pytest.raises(ApiError) as e:
        js.add_stream(cfg(name="a.b"))
    assert e.value.err_code == 10052
    js.add_stream(cfg())
    with pytest.raises(ApiError) as e:
        js.add_stream(cfg(name="T", subjects=["s.a"]))
    assert err(e) == (400, 10065, "subjects overlap with an existing stream")


def test_add_accepts_json_documents(js):
    info = js.add_stream({"name": "J", "subjects": ["j"]})
    assert info.config.name == "J"
    with pytest.raises(ApiError) as e:
        js.add_stream({"name": "J2", "bogus": 1})
    assert e.value.err_code == 10025


def test_first_seq(js):
    js.add_stream(cfg(first_seq=10))
    st = state(js)
    assert (st["first_seq"], st["last_seq"]) == (10, 9)
    assert js.publish("s.a", b"1").seq == 10


def test_update_delete_names_list(js):
    js.add_stream(cfg())
    js.add_stream(cfg(name="B", subjects=["b.*"]))
    info = js.update_stream(cfg(description="hello"))
    assert info.config.description == "hello"
    assert js.stream_names() == ["B", "S"]
    assert js.stream_names("b.x") == ["B"]
    assert js.stream_names("*.x") == ["B", "S"]
    assert [i.config.name for i in js.streams()] == ["B", "S"]
    js.delete_stream("B")
    assert js.stream_names() == ["S"]
    for call in (lambda: js.delete_stream("B"), lambda: js.stream_info("B"),
                 lambda: js.update_stream(cfg(name="B", subjects=["b.*"]))):
        with pytest.raises(ApiError) as e:
            call()
        assert err(e) == (404, 10059, "stream not found")


def test_delete_stream_removes_its_rows(js):
    js.add_stream(cfg())
    publish_all(js, "s.a", "s.b")
    js.delete_stream("S")
    with js.cluster.read() as conn:
        for table in ("msgs", "subjects", "dedupe", "streams"):
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0
    js.add_stream(cfg())
    assert state(js)["messages"] == 0


def test_update_rules_from_validate(js):
    js.add_stream(cfg())
    with pytest.raises(ApiError) as e:
        js.update_stream(cfg(storage="memory"))
    assert e.value.description == "stream configuration update can not change storage type"


@pytest.mark.parametrize("update,expect", [
    # lowered limits apply at once with discard old (observed on the server)
    (dict(max_msgs=4), dict(messages=4, first_seq=3, subjects={"s.a": 2, "s.b": 1, "s.c": 1})),
    (dict(max_msgs_per_subject=1), dict(messages=3, first_seq=4,
                                        subjects={"s.a": 1, "s.b": 1, "s.c": 1})),
    (dict(max_bytes=40), dict(messages=1, first_seq=6, subjects={"s.b": 1})),
    # discard new never removes on update, except the per-subject limit
    (dict(max_msgs=4, discard="new"), dict(messages=6, first_seq=1,
                                           subjects={"s.a": 3, "s.b": 2, "s.c": 1})),
    (dict(max_msgs_per_subject=1, discard="new"), dict(messages=3, first_seq=4,
                                                       subjects={"s.a": 1, "s.b": 1, "s.c": 1})),
])
def test_update_enforces_limits(js, update, expect):
    js.add_stream(cfg(discard=update.get("discard", "old")))
    publish_all(js, "s.a", "s.b", "s.a", "s.c", "s.a", "s.b")
    js.update_stream(cfg(**update))
    st = state(js, subjects_filter=">")
    assert {k: st[k] for k in expect} == expect
    assert_consistent(js)


# --- state -----------------------------------------------------------------------------------
def test_state_counters_and_deleted(js, clock):
    js.add_stream(cfg())
    t0 = clock.now_ns()
    publish_all(js, "s.a", "s.b")
    clock.advance(1_000)
    publish_all(js, "s.a", "s.c")
    js.delete_msg("S", 2)
    st = js.stream_info("S", deleted_details=True, subjects_filter="s.a").state
    assert (st.messages, st.first_seq, st.last_seq, st.num_deleted, st.num_subjects) == (
        3, 1, 4, 1, 2)
    assert st.deleted == [2]
    assert st.subjects == {"s.a": 2}
    assert st.first_ts == t0 and st.last_ts == t0 + 1_000
    assert st.bytes == 3 * 34
    doc = st.to_json()
    assert list(doc) == ["messages", "bytes", "first_seq", "first_ts", "last_seq", "last_ts",
                         "num_subjects", "subjects", "num_deleted", "deleted", "consumer_count"]


# --- purge (PurgeEx): table observed on the server --------------------------------------------
BASE = ["s.a", "s.b", "s.a", "s.c", "s.a", "s.b"]  # seqs 1..6, then seq 2 deleted


@pytest.mark.parametrize("storage", ["file", "memory"])
@pytest.mark.parametrize("req,purged,after,next_seq", [
    ({}, 5, dict(messages=0, first_seq=7, last_seq=6), 7),
    ({"seq": 3}, 1, dict(messages=4, first_seq=3, last_seq=6), 7),
    ({"seq": 1}, 0, dict(messages=5, first_seq=1, last_seq=6), 7),
    ({"seq": 100}, 5, dict(messages=0, first_seq=100, last_seq=99), 100),
    ({"seq": 7}, 5, dict(messages=0, first_seq=7, last_seq=6), 7),
    ({"seq": 6}, 4, dict(messages=1, first_seq=6, last_seq=6), 7),
    ({"keep": 2}, 3, dict(messages=2, first_seq=5, last_seq=6), 7),
    ({"keep": 10}, 0, dict(messages=5, first_seq=1, last_seq=6), 7),
    ({"subject": "s.a"}, 3, dict(messages=2, first_seq=4, last_seq=6), 7),
    ({"subject": "s.a", "keep": 1}, 2, dict(messages=3, first_seq=4, last_seq=6), 7),
    ({"subject": "s.*", "keep": 2}, 3, dict(messages=2, first_seq=5, last_seq=6), 7),
    ({"subject": "s.a", "seq": 5}, 2, dict(messages=3, first_seq=4, last_seq=6), 7),
    ({"subject": ">", "seq": 4}, 2, dict(messages=3, first_seq=4, last_seq=6), 7),
    ({"subject": ">", "keep": 3}, 2, dict(messages=3, first_seq=4, last_seq=6), 7),
    ({"subject": "zz"}, 0, dict(messages=5, first_seq=1, last_seq=6), 7),
])
def test_purge(js, storage, req, purged, after, next_seq):
    js.add_stream(cfg(storage=storage))
    publish_all(js, *BASE)
    js.delete_msg("S", 2)
    assert js.purge_stream("S", **req) == purged
    st = state(js)
    assert {k: st[k] for k in after} == after
    assert js.publish("s.a", b"n").seq == next_seq
    assert_consistent(js)


def test_purge_keeps_last_ts(js, clock):
    js.add_stream(cfg())
    publish_all(js, "s.a")
    ts = state(js)["last_ts"]
    clock.advance(10**9)
    js.purge_stream("S")
    assert state(js)["last_ts"] == ts


def test_purge_errors(js):
    js.add_stream(cfg())
    with pytest.raises(ApiError) as e:
        js.purge_stream("S", seq=5, keep=1)
    assert err(e) == (400, 10003, "bad request")
    with pytest.raises(ApiError) as e:
        js.purge_stream("nope")
    assert e.value.err_code == 10059


# --- delete message: file and memory answer differently (observed) ---------------------------
@pytest.mark.parametrize("storage,seq,expect", [
    ("file", 0, (500, 10057, "no message found")),
    ("file", 1, (500, 10057, "no message found")),       # below first_seq
    ("file", 4, (400, 10043, "sequence 4 not found")),   # interior, already deleted
    ("file", 9, (500, 10057, "stream store EOF")),       # past last_seq
    ("memory", 1, (400, 10043, "sequence 1 not found")),
    ("memory", 4, (400, 10043, "sequence 4 not found")),
    ("memory", 9, (400, 10043, "sequence 9 not found")),
])
def test_delete_msg_errors(js, storage, seq, expect):
    js.add_stream(cfg(storage=storage))
    publish_all(js, *BASE)
    js.purge_stream("S", seq=3)
    js.delete_msg("S", 4)
    with pytest.raises(ApiError) as e:
        js.delete_msg("S", seq)
    assert err(e) == expect


def test_delete_msg_on_empty_file_stream_is_eof(js):
    js.add_stream(cfg())
    with pytest.raises(ApiError) as e:
        js.delete_msg("S", 1)
    assert err(e) == (500, 10057, "stream store EOF")


def test_delete_first_and_last(js):
    js.add_stream(cfg())
    publish_all(js, "s.a", "s.b", "s.a")
    js.delete_msg("S", 1)
    js.delete_msg("S", 3)
    st = state(js)
    assert (st["messages"], st["first_seq"], st["last_seq"]) == (1, 2, 3)
    assert js.subjects("S") == {"s.b": 1}
    js.delete_msg("S", 2)
    st = state(js)
    assert (st["messages"], st["first_seq"], st["last_seq"]) == (0, 4, 3)
    assert_consistent(js)


# --- deny / seal -----------------------------------------------------------------------------
def test_deny_delete_and_purge(js):
    js.add_stream(cfg(deny_delete=True, deny_purge=True))
    publish_all(js, "s.a")
    with pytest.raises(ApiError) as e:
        js.delete_msg("S", 1)
    assert err(e) == (500, 10057, "message delete not permitted")
    with pytest.raises(ApiError) as e:
        js.purge_stream("S")
    assert err(e) == (500, 10110, "stream purge not permitted")
    with pytest.raises(ApiError) as e:  # the request's own check comes first
        js.purge_stream("S", seq=3, keep=1)
    assert e.value.err_code == 10003


def test_seal(js):
    js.add_stream(cfg(max_age=3600 * 10**9))
    publish_all(js, "s.a")
    info = js.update_stream(cfg(sealed=True, max_age=3600 * 10**9)).config
    assert (info.sealed, info.discard, info.deny_delete, info.deny_purge, info.max_age) == (
        True, "new", True, True, 0)
    sealed = (400, 10109, "invalid operation on sealed stream")
    for call in (lambda: js.delete_msg("S", 1), lambda: js.purge_stream("S"),
                 lambda: js.publish("s.a", b"y")):
        with pytest.raises(ApiError) as e:
            call()
        assert err(e) == sealed
    with pytest.raises(ApiError) as e:
        js.update_stream(cfg(sealed=False))
    assert e.value.description == "stream configuration update can not unseal a sealed stream"
    assert state(js)["messages"] == 1


# --- get -------------------------------------------------------------------------------------
@pytest.mark.parametrize("req,expect", [
    (dict(seq=3), 3),
    (dict(last_by_subj="s.b"), 2),
    (dict(last_by_subj="s.*"), 5),
    (dict(last_by_subj=">"), None),          # loads the message AT last_seq (deleted here)
    (dict(next_by_subj="s.b", seq=3), None),
    (dict(next_by_subj="s.b"), 2),
    (dict(next_by_subj="s.c", seq=1), 4),
    (dict(next_by_subj=">", seq=6), None),
    (dict(seq=6), None),
    (dict(seq=99), None),
])
def test_get_msg(js, req, expect):
    js.add_stream(cfg())
    publish_all(js, *BASE)
    js.delete_msg("S", 6)
    seq = req.pop("seq", None)
    if expect is None:
        with pytest.raises(ApiError) as e:
            js.get_msg("S", seq, **req)
        assert err(e) == (404, 10037, "no message found")
    else:
        assert js.get_msg("S", seq, **req).seq == expect


@pytest.mark.parametrize("kw", [
    dict(), dict(seq=0), dict(seq=1, last_by_subj="s.a"),
    dict(last_by_subj="s.a", next_by_subj="s.a"),
])
def test_get_msg_bad_request(js, kw):
    js.add_stream(cfg())
    with pytest.raises(ApiError) as e:
        js.get_msg("S", **kw)
    assert err(e) == (400, 10003, "bad request")


def test_stored_message_json(js, clock):
    js.add_stream(cfg())
    js.publish("s.a", b"hello", {"A": "1", "B": ["2", "3"]})
    m = js.get_msg("S", 1)
    assert m.to_json() == {
        "subject": "s.a", "seq": 1, "time": "2026-01-01T00:00:00Z",
        "headers": {"A": ["1"], "B": ["2", "3"]}, "data": "aGVsbG8="}
    assert m.hdr == b"NATS/1.0\r\nA: 1\r\nB: 2\r\nB: 3\r\n\r\n"
    empty = js.publish("s.b", b"")
    assert js.get_msg("S", empty.seq).to_json()["headers"] == {}


# --- subjects and view ----------------------------------------------------------------------
def test_subjects(js):
    js.add_stream(cfg())
    publish_all(js, "s.a", "s.b.c", "s.a", "s.b.d")
    assert js.subjects("S") == {"s.a": 2, "s.b.c": 1, "s.b.d": 1}
    assert js.subjects("S", "s.b.*") == {"s.b.c": 1, "s.b.d": 1}
    assert js.subjects("S", "s.x") == {}


def test_messages_view(js, clock):
    js.add_stream(cfg())
    publish_all(js, "s.a", "s.b")
    clock.advance(5)
    publish_all(js, "s.a", "s.c")
    js.delete_msg("S", 3)
    assert [m.seq for m in js.messages("S")] == [1, 2, 4]
    assert [m.seq for m in js.messages("S", start_seq=2)] == [2, 4]
    assert [m.seq for m in js.messages("S", subject="s.a")] == [1]
    assert [m.seq for m in js.messages("S", start_time_ns=clock.now_ns())] == [4]
    assert [m.seq for m in js.messages("S", start_time_ns=clock.now_ns() + 1)] == []
    assert [m.seq for m in js.messages("S", chunk=1)] == [1, 2, 4]


# --- random operations against a model ------------------------------------------------------
def test_random_operations_match_a_model(js, clock):
    """Publishes (with a per-subject limit and max_msgs), deletes and purges of every kind,
    in one-by-one and batch form; after each step the live messages equal a plain Python
    model and the stored counters and subject chains equal a recount."""
    import random

    rng = random.Random(7)
    js.add_stream(cfg(max_msgs_per_subject=4, max_msgs=60))
    live: dict[int, str] = {}  # seq -> subject
    last = 0

    def model_store(subject):
        nonlocal last
        last += 1
        live[last] = subject
        same = sorted(s for s, subj in live.items() if subj == subject)
        for s in same[:-4]:
            del live[s]
        while len(live) > 60:
            del live[min(live)]

    subjects = [f"s.{c}" for c in "abcdefg"] + ["s.x.y"]
    for step in range(400):
        op = rng.random()
        if op < 0.55:
            subject = rng.choice(subjects)
            js.publish(subject, b"m%d" % step)
            model_store(subject)
        elif op < 0.65:
            batch = [rng.choice(subjects) for _ in range(rng.randint(1, 30))]
            acks = js.publish_batch([(s, b"b", None) for s in batch])
            for s in batch:
                model_store(s)
            assert [a.seq for a in acks] == list(range(last - len(batch) + 1, last + 1))
        elif op < 0.8 and live:
            seq = rng.choice(list(live))
            js.delete_msg("S", seq)
            del live[seq]
        elif op < 0.86:
            subject = rng.choice(subjects + ["s.*", "s.>"])
            keep = rng.choice([0, 0, 1, 2])
            from jetlink.core.subjects import matches
            victims = sorted(s for s, subj in live.items() if matches(subject, subj))
            victims = victims[:max(0, len(victims) - keep)] if keep else victims
            assert js.purge_stream("S", subject=subject, keep=keep or None) == len(victims)
            for s in victims:
                del live[s]
        elif op < 0.9:
            upto = rng.randint(1, last + 2)
            victims = [s for s in live if s < upto]
            purged = js.purge_stream("S", seq=upto)
            if upto > 1:
                assert purged == len(victims)
                for s in victims:
                    del live[s]
            if upto > last + 1:
                last = upto - 1
        elif op < 0.93:
            keep = rng.randint(1, 10)
            victims = sorted(live)[:max(0, len(live) - keep)]
            assert js.purge_stream("S", keep=keep) == len(victims)
            for s in victims:
                del live[s]
        if step % 10 == 0 or step == 399:
            st = state(js)
            assert st["messages"] == len(live)
            assert st["last_seq"] == last
            if live:
                assert st["first_seq"] == min(live)
            assert [m.seq for m in js.messages("S")] == sorted(live)
            assert js.subjects("S") == {
                subj: sum(1 for v in live.values() if v == subj) for subj in set(live.values())}
            assert_consistent(js)


@pytest.mark.parametrize("storage", ["file", "memory"])
def test_an_update_keeps_first_seq_0_of_a_stream_never_written(js, storage):
    # nats-server 2.15.1: an update of an empty, never written stream reports first_seq 0
    # (a purge makes it 1); the engine said 1 after any update (found by the live parity
    # suite, `kv edit`).
    js.add_stream({"name": "S", "subjects": ["s.>"], "storage": storage})
    cfg = js.stream_info("S").config
    cfg.max_msgs = 5
    assert js.update_stream(cfg).state.first_seq == 0
    assert js.stream_info("S").state.first_seq == 0
    js.purge_stream("S")
    assert js.stream_info("S").state.first_seq == 1
