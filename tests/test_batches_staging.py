"""Atomic batches staged in memory within a transaction (core/streamstore/staging.py).

A batch published in one ``publish_batch`` call keeps its staged messages in memory until its
commit; one left open at the end of a call is written to the ``atomic_batch_msgs`` table and
read back by a later call. Either way the answers, the stored messages and the batches left in
flight must be those of publishing the same messages one call each (tests/test_batches.py
checks those against the server's rules)."""

from __future__ import annotations

import pytest
from test_batches import CASES, hdrs
from test_fast_batch import CASES as FAST_CASES

from jetlink.core import headers as H
from jetlink.core.clock import ManualClock
from jetlink.core.errors import ApiError
from jetlink.core.jetstream import JetStream
from jetlink.core.messages import PubAck
from jetlink.core.store import DataDir
from jetlink.core.streams import next_sql
from jetlink.core.streamstore import batches as B
from jetlink.core.streamstore import fastbatch as F

MASK = (1 << 40) - 1


def _js(path) -> JetStream:
    js = JetStream(DataDir(path).open(), ManualClock(1_700_000_000_000_000_000))
    js.add_stream({"name": "AT", "subjects": ["at.>"], "allow_atomic": True,
                   "allow_rollup_hdrs": True, "duplicate_window": 60_000_000_000})
    js.add_stream({"name": "PLAIN", "subjects": ["plain.>"]})
    return js


def _answer(r: object) -> object:
    if isinstance(r, ApiError):
        return r.err_code
    return r.to_json() if isinstance(r, PubAck) else r


def _state(js: JetStream) -> tuple:
    conn = js.cluster.conn
    # subjects by name: ids are the engine's own (a rolled-back commit may leave a gap)
    # a chain's next as every reader takes it (a link set later is in msg_next)
    msgs = conn.execute(f"SELECT m.id & {MASK}, s.subject, m.prev, {next_sql('m.')}, m.hdr, "
                        "m.data FROM "
                        "msgs m JOIN subjects s ON s.id = m.subject_id ORDER BY m.id").fetchall()
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    if "atomic_batches" not in tables:
        return msgs, [], []
    return (msgs,
            conn.execute("SELECT stream_id, batch_id, last_seq FROM atomic_batches "
                         "ORDER BY 1, 2").fetchall(),
            conn.execute("SELECT stream_id, batch_id, seq, subject, hdr, data FROM "
                         "atomic_batch_msgs ORDER BY 1, 2, 3").fetchall())


def _one_by_one(js: JetStream, msgs: list) -> list:
    out = []
    for subject, data, h in msgs:
        try:
            out.append(_answer(js.publish(subject, data, h)))
        except ApiError as err:
            out.append(err.err_code)
    return out


def _in_calls(js: JetStream, msgs: list, cut: int) -> list:
    """``msgs`` in two ``publish_batch`` calls, the first ``cut`` in the first."""
    out = []
    for part in (msgs[:cut], msgs[cut:]):
        if part:
            out += [_answer(r) for r in js.publish_batch(part)]
    return out


def _check(tmp_path, msgs: list) -> None:
    want_js = _js(tmp_path / "one")
    want = (_one_by_one(want_js, msgs), _state(want_js))
    for cut in range(len(msgs) + 1):
        js = _js(tmp_path / f"cut{cut}")
        got = (_in_calls(js, msgs, cut), _state(js))
        assert got == want, f"split after {cut} of {len(msgs)}"


@pytest.mark.parametrize("steps", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_rules_in_one_call_match_one_call_each(tmp_path, steps):
    _check(tmp_path, [(s, f"m{i}".encode(), h) for i, (s, h) in enumerate(steps)])


def test_interleaved_batches_and_a_refused_commit(tmp_path):
    """Two batches interleaved with plain messages; one commit is refused (all or nothing:
    the savepoint is rolled back) while the other batch is still open, and commits after."""
    msgs = [
        ("at.a", b"1", hdrs("x", 1)),
        ("at.b", b"2", hdrs("y", 1)),
        ("at.p", b"plain", None),
        ("at.c", b"3", hdrs("x", 2)),
        ("at.d", b"4", hdrs("y", 2, Nats_Msg_Id="m")),
        ("at.e", b"5", hdrs("x", 3, "1", Nats_Expected_Last_Msg_Id="q")),  # refused: 10177
        ("at.f", b"6", hdrs("y", 3)),
        ("at.g", b"7", hdrs("z", 1)),
        ("at.h", b"8", hdrs("y", 4, "1")),
        ("at.i", b"9", hdrs("z", 2)),  # left open
    ]
    _check(tmp_path, msgs)


def test_open_batch_written_and_committed_later(tmp_path):
    js = _js(tmp_path / "d")
    assert js.publish_batch([("at.a", b"1", hdrs("b", 1)), ("at.b", b"2", hdrs("b", 2))]) \
        == [None, None]
    _msgs, batches, staged = _state(js)
    assert [b[1:] for b in batches] == [("b", 2)]
    assert [(m[1], m[2], m[3], m[5]) for m in staged] == [("b", 1, "at.a", b"1"),
                                                          ("b", 2, "at.b", b"2")]
    ack = js.publish("at.c", b"3", hdrs("b", 3, "1"))
    assert ack.to_json() == {"stream": "AT", "seq": 3, "batch": "b", "count": 3}
    assert [m.data for m in js.messages("AT")] == [b"1", b"2", b"3"]
    assert _state(js)[1:] == ([], [])


def test_inflight_limit_counts_batches_started_in_the_same_call(tmp_path):
    js = _js(tmp_path / "d")
    acks = js.publish_batch([("at.a", b"", hdrs(f"b{i}", 1))
                             for i in range(B.MAX_INFLIGHT_PER_STREAM + 1)])
    assert acks[:-1] == [None] * B.MAX_INFLIGHT_PER_STREAM
    assert (acks[-1].code, acks[-1].err_code) == (429, 10210)


def test_idle_batch_staged_by_an_earlier_call_is_abandoned(tmp_path):
    js = _js(tmp_path / "d")
    js.publish_batch([("at.a", b"1", hdrs("b", 1))])
    js.clock.advance(B.BATCH_TIMEOUT_NS)
    acks = js.publish_batch([("at.a", b"2", hdrs("b", 2)), ("at.a", b"3", hdrs("b", 3, "1"))])
    assert [a.err_code for a in acks] == [10176, 10176]
    assert _state(js)[1:] == ([], [])


# --- fast batches: their state kept in memory within a transaction ----------------------------
@pytest.mark.parametrize("extra,steps", [c[1:] for c in FAST_CASES],
                         ids=[c[0] for c in FAST_CASES])
def test_fast_batch_steps_in_one_transaction_match_one_each(tmp_path, extra, steps):
    """The server table of tests/test_fast_batch.py with all its steps in one transaction,
    or split in two: the same answers, messages and batches left in flight."""
    def fresh(path):
        js = JetStream(DataDir(path).open(), ManualClock(1_700_000_000_000_000_000))
        js.add_stream({"name": "TEST", "subjects": ["foo"], "allow_batched": True,
                       "duplicate_window": 60_000_000_000, **extra})
        return js

    def in_txns(js, parts):
        out = []
        for part in parts:
            with js.write() as txn:
                for subject, headers, reply in part:
                    hdr = H.encode_headers(headers)
                    out.append(js._fast_msg(txn, subject, hdr, b"x", F.parse_reply(reply)))
        return out

    def state(js):
        conn = js.cluster.conn
        msgs = conn.execute(f"SELECT id & {MASK}, hdr, data FROM msgs ORDER BY id").fetchall()
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        rows = conn.execute("SELECT * FROM fast_batches ORDER BY 1, 2").fetchall() \
            if "fast_batches" in tables else []
        return msgs, rows

    sent = [(s, h, reply) for s, h, reply, _want in steps]
    one = fresh(tmp_path / "one")
    want = (in_txns(one, [[m] for m in sent]), state(one))
    assert want[0] == [w for *_x, w in steps]
    for cut in range(len(sent) + 1):
        js = fresh(tmp_path / f"cut{cut}")
        assert (in_txns(js, [sent[:cut], sent[cut:]]), state(js)) == want, cut


def test_fast_batch_messages_reach_core_subscribers(tmp_path):
    """A fast batch's messages are publishes: core subscribers see each, in order, once
    (the transaction's subscribers are loaded once and written at its end)."""
    js = JetStream(DataDir(tmp_path / "d").open(), ManualClock(1_700_000_000_000_000_000))
    js.add_stream({"name": "FB", "subjects": ["fb.>"], "allow_batched": True})
    sub = js.subscribe("fb.*")
    res = js.publish_fast_batch([(f"fb.{i % 3}", str(i).encode(), None) for i in range(2500)],
                                batch_id="x")
    assert res.doc == {"stream": "FB", "seq": 2500, "batch": "x", "count": 2500}
    seen = []
    while (m := sub.next(0)) is not None:
        seen.append((m.subject, m.data))
    assert seen == [(f"fb.{i % 3}", str(i).encode()) for i in range(2500)]
    sub.close()
