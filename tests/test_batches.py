"""Atomic batch publish (ADR-50) on the embedded engine and through `jetlink pub`.

The cases follow nats-server 2.15.1's processJetStreamAtomicBatchMsg and
checkMsgHeadersPreClusteredProposal (server/stream.go, server/jetstream_batching.go) and
its jetstream_batching tests; tests/live/test_parity_batches.py runs the CLI ones on a server.
"""

from __future__ import annotations

import json

import pytest

from jetlink.core.errors import ApiError
from jetlink.core.messages import BatchPubAck
from jetlink.core.streamstore import batches as B


def hdrs(bid: str, seq: int | str, commit: str | None = None, **extra: str) -> dict[str, str]:
    h = {B.BATCH_ID: bid, B.BATCH_SEQ: str(seq)}
    if commit is not None:
        h[B.BATCH_COMMIT] = commit
    h.update({k.replace("_", "-"): v for k, v in extra.items()})
    return h


@pytest.fixture
def at(js):
    js.add_stream({"name": "AT", "subjects": ["at.>"], "allow_atomic": True,
                   "allow_rollup_hdrs": True, "duplicate_window": 60_000_000_000})
    js.add_stream({"name": "PLAIN", "subjects": ["plain.>"]})
    return js


def run(js, steps):
    """Publish each (subject, headers) in turn: its PubAck document, None (staged) or the
    error code."""
    out = []
    for subject, h in steps:
        try:
            r = js.publish(subject, b"x", h)
            out.append(r.to_json() if r is not None else None)
        except ApiError as err:
            out.append(err.err_code)
    return out


# (name, steps, results, messages stored in AT afterwards)
CASES = [
    ("one message commits", [("at.a", hdrs("b", 1, "1"))],
     [{"stream": "AT", "seq": 1, "batch": "b", "count": 1}], 1),
    ("staged until the commit", [("at.a", hdrs("b", 1)), ("at.b", hdrs("b", 2)),
                                 ("at.c", hdrs("b", 3, "1"))],
     [None, None, {"stream": "AT", "seq": 3, "batch": "b", "count": 3}], 3),
    ("not started at 1", [("at.a", hdrs("b", 2, "1"))], [10176], 0),
    ("a gap abandons", [("at.a", hdrs("b", 1)), ("at.a", hdrs("b", 3, "1")),
                        ("at.a", hdrs("b", 2, "1"))], [None, 10176, 10176], 0),
    ("sequence missing", [("at.a", {B.BATCH_ID: "b"})], [10175], 0),
    ("sequence not a number", [("at.a", hdrs("b", "-1"))], [10175], 0),
    ("commit value", [("at.a", hdrs("b", 1, "true"))], [10200], 0),
    ("id of 65", [("at.a", hdrs("i" * 65, 1, "1"))], [10179], 0),
    ("id of 64", [("at.a", hdrs("i" * 64, 1, "1"))],
     [{"stream": "AT", "seq": 1, "batch": "i" * 64, "count": 1}], 1),
    ("past 1000 unknown", [("at.a", hdrs("b", 1001, "1"))], [10199], 0),
    ("1001 eob unknown: 1000 counted", [("at.a", hdrs("b", 1001, "eob"))], [10176], 0),
    ("eob on 1", [("at.a", hdrs("b", 1, "eob"))], [10176], 0),
    ("eob commits what came before", [("at.a", hdrs("b", 1)), ("at.a", hdrs("b", 2, "eob"))],
     [None, {"stream": "AT", "seq": 1, "batch": "b", "count": 1}], 1),
    ("disabled", [("plain.a", hdrs("b", 1, "1"))], [10174], 0),
    ("expected last msg id", [("at.a", hdrs("b", 1, "1", Nats_Expected_Last_Msg_Id="m"))],
     [10177], 0),
    ("msg id twice", [("at.a", hdrs("b", 1, Nats_Msg_Id="m")),
                      ("at.a", hdrs("b", 2, "1", Nats_Msg_Id="m"))], [None, 10201], 0),
    ("expected last seq on the first", [("at.a", hdrs("b", 1, Nats_Expected_Last_Sequence="0")),
                                        ("at.a", hdrs("b", 2, "1"))],
     [None, {"stream": "AT", "seq": 2, "batch": "b", "count": 2}], 2),
    ("expected last seq after the first",
     [("at.a", hdrs("b", 1)), ("at.a", hdrs("b", 2, "1", Nats_Expected_Last_Sequence="1"))],
     [None, 10164], 0),
    ("expected last seq, wrong, after the first",
     [("at.a", hdrs("b", 1)), ("at.a", hdrs("b", 2, "1", Nats_Expected_Last_Sequence="5"))],
     [None, 10071], 0),
    ("expected subject seq on a subject written",
     [("at.a", hdrs("b", 1)),
      ("at.a", hdrs("b", 2, "1", Nats_Expected_Last_Subject_Sequence="1"))], [None, 10164], 0),
    ("rollup sub after the subject", [("at.a", hdrs("b", 1)),
                                      ("at.a", hdrs("b", 2, "1", Nats_Rollup="sub"))],
     [None, 10111], 0),
    ("rollup all after the first", [("at.a", hdrs("b", 1)),
                                    ("at.b", hdrs("b", 2, "1", Nats_Rollup="all"))],
     [None, 10111], 0),
    ("rollup all first", [("at.a", hdrs("b", 1, Nats_Rollup="all")), ("at.b", hdrs("b", 2, "1"))],
     [None, {"stream": "AT", "seq": 2, "batch": "b", "count": 2}], 2),
]


@pytest.mark.parametrize("steps,results,stored", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_batch_rules(at, steps, results, stored):
    assert run(at, steps) == results
    assert at.state("AT").messages == stored


def test_all_or_nothing(at):
    """A refusal of a later message stores none of the batch (its sequences too)."""
    at.publish("at.z", b"before")
    acks = at.publish_many([("at.a", b"1", hdrs("b", 1, Nats_Expected_Last_Sequence="1")),
                            ("at.b", b"2", hdrs("b", 2)),
                            ("at.c", b"3", hdrs("b", 3, "1", Nats_Expected_Last_Msg_Id="q"))])
    assert acks[:2] == [None, None] and acks[2].err_code == 10177
    st = at.state("AT")
    assert (st.messages, st.last_seq) == (1, 1)
    assert at.publish("at.z", b"after").seq == 2


def test_commit_stores_headers_and_eob_marker(at):
    at.publish_many([("at.a", b"1", hdrs("b", 1)), ("at.b", b"2", hdrs("b", 2)),
                     ("at.b", b"", hdrs("b", 3, "eob"))])
    m = at.get_msg("AT", 2)
    assert m.data == b"2"
    assert m.headers == {B.BATCH_ID: ["b"], B.BATCH_SEQ: ["2"], B.BATCH_COMMIT: ["1"]}
    assert at.get_msg("AT", 1).headers == {B.BATCH_ID: ["b"], B.BATCH_SEQ: ["1"]}


def test_idle_batch_abandoned_after_timeout(at, clock):
    at.publish("at.a", b"1", hdrs("b", 1))
    clock.advance(B.BATCH_TIMEOUT_NS - 1)
    at.publish("at.a", b"2", hdrs("b", 2))  # activity resets the timer
    clock.advance(B.BATCH_TIMEOUT_NS)
    with pytest.raises(ApiError) as e:
        at.publish("at.a", b"3", hdrs("b", 3, "1"))
    assert e.value.err_code == 10176
    assert at.state("AT").messages == 0


def test_inflight_per_stream(at):
    for i in range(B.MAX_INFLIGHT_PER_STREAM):
        assert at.publish("at.a", b"", hdrs(f"b{i}", 1)) is None
    with pytest.raises(ApiError) as e:
        at.publish("at.a", b"", hdrs("one-more", 1))
    assert (e.value.code, e.value.err_code) == (429, 10210)
    assert e.value.description == "atomic publish too many inflight"


def test_batch_of_1000_and_1001(at):
    acks = at.publish_batch([("at.x", b"m", hdrs("k", i, "1" if i == 1000 else None))
                             for i in range(1, 1001)])
    assert acks[-1] == BatchPubAck("AT", 1000, "k", 1000)
    acks = at.publish_batch([("at.x", b"m", hdrs("l", i, "1" if i == 1001 else None))
                             for i in range(1, 1002)])
    assert acks[-1].err_code == 10199
    assert acks[-1].description == "atomic publish batch is too large: 1000"
    assert at.state("AT").messages == 1000


def test_deleted_stream_drops_its_batches(at):
    at.publish("at.a", b"1", hdrs("b", 1))
    at.delete_stream("AT")
    at.add_stream({"name": "AT", "subjects": ["at.>"], "allow_atomic": True})
    with pytest.raises(ApiError) as e:
        at.publish("at.a", b"2", hdrs("b", 2, "1"))
    assert e.value.err_code == 10176


# --- the CLI ----------------------------------------------------------------------------------
CLI_CASES = [
    (["pub", "at.a", "x", "--atomic", "--count", "5", "--batch-size", "2", "-j"], 0,
     [(2, 2), (4, 2), (5, 1)]),
    (["pub", "at.a", "x", "--atomic", "--count", "3", "-j"], 0, [(3, 3)]),
    (["pub", "plain.a", "x", "--atomic", "-j"], 1, 10174),
    (["pub", "at.a", "x", "--atomic", "--count", "1001", "-j"], 1, 10199),
]


@pytest.mark.parametrize("args,status,want", CLI_CASES, ids=[" ".join(c[0][3:]) for c in CLI_CASES])
def test_cli_atomic(jl, args, status, want):
    jl("stream", "add", "AT", "--subjects", "at.>", "--allow-batch", "--defaults")
    jl("stream", "add", "PLAIN", "--subjects", "plain.>", "--defaults")
    res = jl(*args)
    assert res.exit_code == status, res.output
    doc = json.loads(res.stdout)
    if isinstance(want, int):
        assert doc["error"]["err_code"] == want
        return
    docs = doc if isinstance(doc, list) else [doc]
    assert [(d["seq"], d["count"]) for d in docs] == want
    assert all(d["stream"] == "AT" and len(d["batch"]) == 22 for d in docs)
    assert len({d["batch"] for d in docs}) == len(docs)


def test_cli_batch_by_headers_and_human_output(jl):
    jl("stream", "add", "AT", "--subjects", "at.>", "--allow-batch", "--defaults")
    res = jl("pub", "at.a", "one", "-H", "Nats-Batch-Id:b1", "-H", "Nats-Batch-Sequence:1", "-j")
    assert (res.exit_code, res.stdout) == (0, "null\n")
    res = jl("pub", "at.a", "one", "-H", "Nats-Batch-Id:b2", "-H", "Nats-Batch-Sequence:1")
    assert res.exit_code == 0
    assert res.stdout.startswith("Sent: no acknowledgement")
    res = jl("pub", "at.b", "two", "-H", "Nats-Batch-Id:b1", "-H", "Nats-Batch-Sequence:2",
             "-H", "Nats-Batch-Commit:1", "-j")
    assert json.loads(res.stdout) == {"stream": "AT", "seq": 2, "batch": "b1", "count": 2}
    res = jl("pub", "at.c", "x", "--atomic", "--count", "2")
    assert res.exit_code == 0
    assert res.stdout.startswith("Wrote batch ID: ") and res.stdout.endswith(
        " Messages: 2 Sequence: 4\n")


@pytest.mark.parametrize("args,text", [
    (["--atomic", "--core"], "--atomic: an atomic batch is a JetStream publish"),
    (["--batch-size", "2"], "--batch-size: only with --atomic"),
    (["--atomic", "--batch-size", "0"], "--batch-size"),
])
def test_cli_usage(jl, args, text):
    res = jl("pub", "at.a", "x", *args)
    assert res.exit_code == 2
    assert text in res.stderr


@pytest.mark.parametrize("args", [
    ["plain.a", "x", "--atomic"],  # the stream takes no batches: 10174
    ["at.a", "x", "-H", "Nats-Batch-Id:" + "L" * 65, "-H", "Nats-Batch-Sequence:1"],  # 10179
    ["at.a", "x", "-H", "Nats-Batch-Id:b1"],  # no Nats-Batch-Sequence: 10175
])
def test_cli_refused_batch_changes_nothing(jl, args):
    from helpers import data_dir_bytes

    jl("stream", "add", "AT", "--subjects", "at.>", "--allow-batch", "--defaults")
    jl("stream", "add", "PLAIN", "--subjects", "plain.>", "--defaults")
    before = data_dir_bytes(jl.data)
    res = jl("pub", *args)
    assert res.exit_code == 1
    assert data_dir_bytes(jl.data) == before
    if "--atomic" in args:  # the server's words, then the flag that allows it
        assert res.stderr == ("jetlink: error: atomic publish is disabled (10174): the stream "
                              "allows it with jetlink stream edit PLAIN --allow-batch\n")
