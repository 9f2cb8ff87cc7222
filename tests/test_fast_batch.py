"""Fast batch publish (ADR-50 fast ingest, nats-server 2.14) on the embedded engine.

The table follows nats-server's jetstream_batching tests for fast batches
(TestJetStreamFastBatchPublish*, the R1 cases: facts only) and getFastBatch /
processJetStreamFastBatchMsg / checkFlowControl (server/stream.go,
server/jetstream_batching.go). Where the 2.15.1 binary differs from nats-server's main
branch it is followed: a sequence going back is reported as a gap, and
Nats-Expected-Last-Msg-Id is checked. tests/live/test_parity_fast_batch.py runs the table and
the CLI steps on a server.
"""

from __future__ import annotations

import json

import pytest

from jetlink.core.errors import ApiError, JetlinkError
from jetlink.core.fastpublish import FastPublisher, outcome
from jetlink.core.messages import BatchPubAck
from jetlink.core.streamstore import fastbatch as F

INBOX = "_INBOX.t"


def r(seq: int, op: int, *, bid: str = "uuid", flow: int = 0, gap: str = "fail") -> str:
    return f"{INBOX}.{bid}.{flow}.{gap}.{seq}.{op}.$FI"


def err(code: int, err_code: int, description: str, stream: str = "TEST") -> dict:
    return {"error": {"code": code, "err_code": err_code, "description": description},
            "stream": stream, "seq": 0}


def ack(seq: int, msgs: int) -> dict:
    return {"type": "ack", "seq": seq, "msgs": msgs}


def gap(last: int, seq: int) -> dict:
    return {"type": "gap", "last_seq": last, "seq": seq}


def pub(seq: int, bid: str, count: int) -> dict:
    return {"stream": "TEST", "seq": seq, "batch": bid, "count": count}


def flow_err(seq: int, description: str, err_code: int = 10071) -> dict:
    return {"type": "err", "seq": seq,
            "error": {"code": 400, "err_code": err_code, "description": description}}


DISABLED = err(400, 10205, "batch publish is disabled")
PATTERN = err(400, 10206, "batch publish pattern is invalid")
LONG_ID = err(400, 10207, "batch publish ID is invalid")
UNKNOWN = err(400, 10208, "batch publish ID unknown")

# (name, stream config extras, [(subject, headers, reply, expected replies)])
CASES = [
    ("disabled", {"allow_batched": False}, [("foo", None, r(1, 0), [DISABLED])]),
    ("seq-0", {}, [("foo", None, r(0, 0), [PATTERN])]),
    ("eob-on-1", {}, [("foo", None, r(1, 3), [PATTERN])]),
    ("start-not-1", {}, [("foo", None, r(2, 0), [PATTERN])]),
    ("append-on-1", {}, [("foo", None, r(1, 1), [PATTERN])]),
    ("unknown-op", {}, [("foo", None, r(1, 5), [PATTERN])]),
    ("unknown-gap-mode", {}, [("foo", None, r(1, 0, gap="unknown"), [PATTERN])]),
    ("max-uint64", {}, [("foo", None, r(2**64 - 1, 1), [PATTERN])]),
    ("too-few-tokens", {}, [("foo", None, "uuid.0.fail.1.0.$FI", [PATTERN])]),
    ("long-id", {}, [("foo", None, r(1, 0, bid="A" * 65), [LONG_ID])]),
    ("id-64", {}, [("foo", None, r(1, 2, bid="A" * 64), [pub(1, "A" * 64, 1)])]),
    ("misses-start", {}, [("foo", None, r(2, 1), [UNKNOWN])]),
    ("commit-at-once", {}, [("foo", None, r(1, 2), [pub(1, "uuid", 1)])]),
    ("five", {}, [("foo", None, r(1, 0), [ack(0, 10)]), ("foo", None, r(2, 1), []),
                  ("foo", None, r(3, 1), []), ("foo", None, r(4, 1), []),
                  ("foo", None, r(5, 2), [pub(5, "uuid", 5)])]),
    ("flow-2", {}, [("foo", None, r(1, 0, flow=2), [ack(0, 2)]),
                    ("foo", None, r(2, 1, flow=2), [ack(2, 2)]),
                    ("foo", None, r(3, 1, flow=2), []),
                    ("foo", None, r(4, 1, flow=2), [ack(4, 2)]),
                    ("foo", None, r(5, 2, flow=2), [pub(5, "uuid", 5)])]),
    ("flow-1", {}, [("foo", None, r(1, 0, flow=1, gap="ok"), [ack(0, 1), ack(1, 1)])]),
    ("gap-fail", {}, [("foo", None, r(1, 0), [ack(0, 10)]),
                      ("foo", None, r(3, 1), [gap(2, 3), pub(1, "uuid", 1)]),
                      ("foo", None, r(4, 1), [UNKNOWN])]),
    ("gap-ok", {}, [("foo", None, r(1, 0, gap="ok"), [ack(0, 10)]),
                    ("foo", None, r(3, 1, gap="ok"), [gap(2, 3)]),
                    ("foo", None, r(4, 3, gap="ok"), [pub(2, "uuid", 3)])]),
    ("gap-ok-backward", {}, [("foo", None, r(1, 0, gap="ok"), [ack(0, 10)]),
                             ("foo", None, r(5, 1, gap="ok"), [gap(2, 5)]),
                             ("foo", None, r(3, 1, gap="ok"), [gap(6, 3), pub(2, "uuid", 5)])]),
    ("header-error-fail", {}, [
        ("foo", None, r(1, 0), [ack(0, 10)]),
        ("foo", {"Nats-Expected-Last-Sequence": "100"}, r(2, 1),
         [flow_err(2, "wrong last sequence: 1"), pub(1, "uuid", 1)])]),
    ("header-error-ok", {}, [
        ("foo", None, r(1, 0, gap="ok"), [ack(0, 10)]),
        ("foo", {"Nats-Expected-Last-Sequence": "100"}, r(2, 1, gap="ok"),
         [flow_err(2, "wrong last sequence: 1")]),
        ("foo", None, r(3, 3, gap="ok"), [pub(1, "uuid", 2)])]),
    ("header-error-on-commit-gap-ok", {}, [
        ("foo", None, r(1, 0, gap="ok"), [ack(0, 10)]),
        ("foo", {"Nats-Expected-Last-Sequence": "100"}, r(3, 2, gap="ok"),
         [gap(2, 3), flow_err(3, "wrong last sequence: 1"), pub(1, "uuid", 2)])]),
    ("first-fails", {}, [
        ("foo", {"Nats-Expected-Last-Sequence": "100"}, r(1, 0),
         [ack(0, 10), err(400, 10071, "wrong last sequence: 0")]),
        ("foo", None, r(2, 1), [UNKNOWN])]),
    ("ping", {}, [("foo", None, r(1, 0, flow=2, gap="ok"), [ack(0, 2)]),
                  ("foo", None, r(2, 1, flow=2, gap="ok"), [ack(2, 2)]),
                  ("foo", None, r(2, 4, flow=2, gap="ok"), [ack(2, 2)]),
                  ("foo", None, r(3, 4, flow=2, gap="ok"), [gap(3, 4), ack(2, 2)]),
                  ("foo", None, r(4, 1, flow=2, gap="ok"), [ack(4, 2)]),
                  ("foo", None, r(100, 4, flow=2, gap="ok"), [gap(5, 101), ack(100, 2)]),
                  ("foo", None, r(101, 3, flow=2, gap="ok"), [pub(3, "uuid", 100)])]),
    ("ping-gap-fail", {}, [("foo", None, r(1, 0), [ack(0, 10)]),
                           ("foo", None, r(3, 4), [gap(2, 4), pub(1, "uuid", 1)])]),
    ("no-ack-stream", {"no_ack": True}, [
        ("foo", None, r(1, 0), []), ("foo", None, r(2, 2), [pub(2, "uuid", 2)]),
        ("foo", None, r(5, 1), [])]),
]


@pytest.fixture
def test_stream(js):
    def make(extra):
        cfg = {"name": "TEST", "subjects": ["foo"], "allow_batched": True,
               "duplicate_window": 60_000_000_000, **extra}
        js.add_stream(cfg)
        return js
    return make


@pytest.mark.parametrize("name,extra,steps", CASES, ids=[c[0] for c in CASES])
def test_server_table(test_stream, name, extra, steps):
    js = test_stream(extra)
    for subject, headers, reply, want in steps:
        assert js.publish_fast_msg(subject, b"x", headers, reply=reply) == want, reply


def test_duplicates(test_stream):
    """TestJetStreamFastBatchPublishDuplicates (R1): a one-message batch of a duplicate is
    answered as a publish; a batch of duplicates only skips them, acks on the flow and ends
    with sequence 0."""
    js = test_stream({})
    js.publish("foo", b"x", {"Nats-Msg-Id": "msgId"})
    h = {"Nats-Msg-Id": "msgId"}
    assert js.publish_fast_msg("foo", b"x", h, reply=r(1, 2)) == [
        {"stream": "TEST", "seq": 1, "duplicate": True, "batch": "uuid", "count": 1}]
    got = [js.publish_fast_msg("foo", b"x", h, reply=r(s, 0 if s == 1 else 2 if s == 5 else 1,
                                                          flow=3)) for s in range(1, 6)]
    assert got == [[ack(0, 3)], [], [ack(3, 3)], [], [pub(0, "uuid", 5)]]
    assert js.stream_info("TEST").state.messages == 1


def test_duplicate_then_error(test_stream):
    """TestJetStreamFastBatchSequentialDuplicateAndErrorPubAck."""
    js = test_stream({})
    js.publish("foo", b"x", {"Nats-Msg-Id": "msgId"})
    assert js.publish_fast_msg("foo", b"x", {"Nats-Msg-Id": "msgId"},
                               reply=r(1, 0, flow=2)) == [ack(0, 2)]
    assert js.publish_fast_msg("foo", b"x", {"Nats-Expected-Last-Sequence": "100"},
                               reply=r(2, 1, flow=2)) == [
        flow_err(2, "wrong last sequence: 1"), pub(0, "uuid", 1)]


def test_second_batch_starts_slow(test_stream):
    """fastBatchInit (TestJetStreamFastBatchInitAckMessages): beside another batch in
    flight a new one acks every message; alone, the client's flow up to 500."""
    js = test_stream({})
    assert js.publish_fast_msg("foo", b"x", reply=r(1, 0, bid="b1", flow=1000)) == [
        ack(0, 500)]
    assert js.publish_fast_msg("foo", b"x", reply=r(1, 0, bid="b2", flow=1000)) == [
        ack(0, 1), ack(1, 2)]
    # then it ramps up, doubling at each flow ack, up to 500 / 2 batches
    assert js.publish_fast_msg("foo", b"x", reply=r(2, 1, bid="b2", flow=1000)) == []
    assert js.publish_fast_msg("foo", b"x", reply=r(3, 1, bid="b2", flow=1000)) == [ack(3, 4)]


def test_idle_batch_forgotten(test_stream, clock):
    js = test_stream({})
    assert js.publish_fast_msg("foo", b"x", reply=r(1, 0)) == [ack(0, 10)]
    clock.advance_s(9.9)
    assert js.publish_fast_msg("foo", b"x", reply=r(2, 1)) == []  # the timer restarted
    clock.advance_s(10.0)
    assert js.publish_fast_msg("foo", b"x", reply=r(3, 1)) == [UNKNOWN]


def test_disabling_drops_batches(test_stream):
    js = test_stream({})
    js.publish_fast_msg("foo", b"x", reply=r(1, 0))
    cfg = js.stream_info("TEST").config.copy()
    cfg.allow_batched = False
    js.update_stream(cfg)
    cfg.allow_batched = True
    js.update_stream(cfg)
    assert js.publish_fast_msg("foo", b"x", reply=r(2, 1)) == [UNKNOWN]


def test_expected_last_msg_id_checked(test_stream):
    """nats-server 2.15.1 checks Nats-Expected-Last-Msg-Id in a fast batch (measured on the
    binary: tests/live/test_parity_fast_batch.py)."""
    js = test_stream({})
    assert js.publish_fast_msg("foo", b"x", {"Nats-Expected-Last-Msg-Id": "nope"},
                               reply=r(1, 2)) == [err(400, 10070, "wrong last msg ID: ")]


@pytest.mark.parametrize("reply,want", [
    ("a.b", None), ("x.$FI", F.INVALID), (r(1, 0), F.FastBatchReply("uuid", 1, 10, False, 0)),
    (r(3, 2, flow=70000, gap="ok"), F.FastBatchReply("uuid", 3, 65535, True, 2)),
    (f"{INBOX}.id.x.ok.2.4.$FI", F.FastBatchReply("id", 2, 10, True, 4)),
    (f"{INBOX}.id.5.ok.-2.1.$FI", F.INVALID),
])
def test_parse_reply(reply, want):
    assert F.parse_reply(reply) == want


def test_publish_fast_batch(test_stream):
    js = test_stream({})
    res = js.publish_fast_batch([("foo", str(i).encode(), None) for i in range(1, 1501)],
                                batch_id="big", flow=100)
    assert res.doc == {"stream": "TEST", "seq": 1500, "batch": "big", "count": 1500}
    assert res.ack == BatchPubAck("TEST", 1500, "big", 1500)
    assert res.replies[0] == ack(0, 100)
    # the flow ramps up from 100 to the client's 100: one ack every 100 messages
    assert [a["seq"] for a in res.flow_acks] == [0, *range(100, 1500, 100)]
    assert outcome(res, False) is None
    assert js.stream_info("TEST").state.messages == 1500


def test_publish_fast_batch_fail_mode_stops(test_stream):
    js = test_stream({})
    msgs = [("foo", b"a", None), ("foo", b"b", {"Nats-Expected-Last-Sequence": "9"}),
            ("foo", b"c", None)]
    res = js.publish_fast_batch(msgs, batch_id="b")
    assert res.sent == 2
    assert res.doc == pub(1, "b", 1)
    e = outcome(res, False)
    assert isinstance(e, ApiError) and e.err_code == 10071
    assert "message 2 of the batch" in e.detail
    ok = js.publish_fast_batch(msgs, batch_id="c", gap_ok=True)
    assert ok.sent == 3 and ok.doc == pub(3, "c", 3) and outcome(ok, True) is None
    assert len(ok.errors) == 1


def test_publish_fast_batch_refused(test_stream):
    js = test_stream({"allow_batched": False})
    res = js.publish_fast_batch([("foo", b"a", None), ("foo", b"b", None)], batch_id="b")
    assert res.sent == 1 and res.doc == DISABLED
    assert outcome(res, False) == ApiError(400, 10205, "batch publish is disabled")


def test_client_checks():
    with pytest.raises(JetlinkError):
        FastPublisher("a.b", size=1)
    with pytest.raises(JetlinkError):
        FastPublisher("ok", size=1, flow=0)
    p = FastPublisher("id", size=2, flow=5, max_outstanding=1)
    assert p.reply(last=False) == "_INBOX.id.5.fail.1.0.$FI"
    assert p.must_wait
    p.take(ack(0, 2))
    assert not p.must_wait
    assert p.reply(last=True) == "_INBOX.id.5.fail.2.2.$FI"
    assert p.must_wait  # 0 + 2 * 1 <= 2


# --- jetlink pub --fast -------------------------------------------------------------------
def _streams(jl):
    jl("stream", "add", "F", "--subjects", "f.>", "--allow-fast", "--defaults")
    jl("stream", "add", "P", "--subjects", "p.>", "--defaults")


CLI = [
    (["f.a", "x", "--fast", "--count", "250", "--flow", "50", "--batch-id", "b1", "-j"], 0,
     {"stream": "F", "seq": 250, "batch": "b1", "count": 250}),
    (["f.a", "x", "--fast", "--count", "5", "--batch-size", "2", "--batch-id", "b", "-j"], 0,
     [{"stream": "F", "seq": 2, "batch": "b", "count": 2},
      {"stream": "F", "seq": 4, "batch": "b-2", "count": 2},
      {"stream": "F", "seq": 5, "batch": "b-3", "count": 1}]),
    (["p.a", "x", "--fast", "--count", "3", "-j"], 1,
     {"error": {"code": 400, "err_code": 10205, "description": "batch publish is disabled"}}),
    (["f.a", "x", "--fast", "--batch-id", "L" * 65, "-j"], 1,
     {"error": {"code": 400, "err_code": 10207, "description": "batch publish ID is invalid"}}),
    (["f.a", "x", "--fast", "--count", "2", "-H", "Nats-Expected-Last-Sequence:9", "-j"], 1,
     {"error": {"code": 400, "err_code": 10071, "description": "wrong last sequence: 0"}}),
    (["f.a", "x", "--fast", "--count", "3", "-H", "Nats-Expected-Last-Sequence:0",
      "--continue-on-gap", "--batch-id", "g", "-j"], 0,
     {"stream": "F", "seq": 1, "batch": "g", "count": 2}),  # the commit was refused
]


@pytest.mark.parametrize("args,status,want", CLI, ids=[" ".join(c[0][2:6]) for c in CLI])
def test_cli_fast(jl, args, status, want):
    _streams(jl)
    res = jl("pub", *args)
    assert res.exit_code == status, res.output
    assert json.loads(res.stdout) == want


def test_cli_fast_ended_early(jl):
    """Gap mode fail: the refused message ends the batch; the error says what was stored."""
    _streams(jl)
    res = jl("pub", "f.a", "x", "--fast", "--count", "3", "-H", "Nats-Expected-Last-Sequence:0",
             "--batch-id", "e")
    assert res.exit_code == 1
    assert res.stderr == ("jetlink: error: wrong last sequence: 1 (10071): message 2 of the "
                          "batch; the server ended the batch at message 1 of 3 (stream "
                          "sequence 1)\n")
    res = jl("pub", "f.a", "x", "--fast", "--count", "2")
    assert res.exit_code == 0
    assert res.stdout.startswith("Wrote fast batch ID: ")
    assert res.stdout.endswith(" Messages: 2 Sequence: 3 Flow acks: 1\n")


def test_cli_fast_on_a_stream_without_it_names_the_flag(jl):
    jl("stream", "add", "PLAIN", "--subjects", "plain.>", "--defaults")
    res = jl("pub", "plain.a", "x", "--fast", "--count", "2")
    assert (res.exit_code, res.stderr) == (1, (
        "jetlink: error: batch publish is disabled (10205): the stream allows it with jetlink "
        "stream edit PLAIN --allow-fast\n"))


@pytest.mark.parametrize("args", [["--fast", "--core"], ["--fast", "--atomic"], ["--flow", "5"],
                                  ["--batch-id", "x"], ["--batch-size", "2"]])
def test_cli_fast_usage(jl, args):
    _streams(jl)
    assert jl("pub", "f.a", "x", *args).exit_code == 2


@pytest.mark.parametrize("args", [
    ["p.a", "x", "--fast", "--count", "3"],  # the stream does not allow fast batches: 10205
    ["f.a", "x", "--fast", "--batch-id", "L" * 65],  # an invalid batch id: 10207
    ["f.a", "x", "--fast", "--atomic"],  # a usage error
])
def test_cli_fast_refused_changes_nothing(jl, args):
    from helpers import data_dir_bytes

    _streams(jl)
    before = data_dir_bytes(jl.data)
    assert jl("pub", *args).exit_code in (1, 2)
    assert data_dir_bytes(jl.data) == before
