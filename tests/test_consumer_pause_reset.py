"""Consumer pause (pause_until, nats-server 2.11: CONSUMER.PAUSE) and reset (CONSUMER.RESET,
2.14: resetStartingSeqLocked) on the engine and through the CLI, on the engine's clock."""

from __future__ import annotations

import json

import pytest
from helpers import doc

from jetlink.core.config.consumer import ConsumerConfig
from jetlink.core.config.stream import StreamConfig
from jetlink.core.consumers import ConsumerEngine, MemoryConsumerStore
from jetlink.core.errors import ApiError

SECOND = 1_000_000_000


def _engine(retention: str = "limits", n: int = 5, **cfg):
    be = MemoryConsumerStore()
    be.add_stream(StreamConfig.from_json(
        {"name": "S", "subjects": ["s.>"], "retention": retention}))
    ConsumerEngine(be, SECOND).add("S", ConsumerConfig.from_json(
        {"durable_name": "C", "ack_policy": "explicit", **cfg}))
    for i in range(n):
        be.publish("S", "s.a", b"m%d" % i, ts=(i + 1) * SECOND)
    return be


def test_pause_and_resume_on_the_clock():
    be = _engine()
    eng = ConsumerEngine(be, 2 * SECOND)
    assert eng.pause("S", "C", 12 * SECOND) == {
        "paused": True, "pause_until": "1970-01-01T00:00:12Z", "pause_remaining": 10 * SECOND}
    assert eng.fetch("S", "C", 1) == []
    info = ConsumerEngine(be, 5 * SECOND).info("S", "C").to_json()
    assert (info["paused"], info["pause_remaining"]) == (True, 7 * SECOND)
    assert info["config"]["pause_until"] == "1970-01-01T00:00:12Z"
    # the pause request sets the static metadata again (jsConsumerPauseRequest): level 1
    assert info["config"]["metadata"]["_nats.req.level"] == "1"
    # the deadline passes: delivery resumes, info says nothing of a pause
    later = ConsumerEngine(be, 12 * SECOND)
    assert [m.seq for m in later.fetch("S", "C", 1)] == [1]
    assert "paused" not in later.info("S", "C").to_json()
    # resume: a zero time
    eng = ConsumerEngine(be, 13 * SECOND)
    eng.pause("S", "C", 100 * SECOND)
    assert eng.pause("S", "C", 0) == {"paused": False, "pause_until": "0001-01-01T00:00:00Z"}
    assert "pause_until" not in eng.info("S", "C").to_json()["config"]
    assert eng.info("S", "C").to_json()["config"]["metadata"]["_nats.req.level"] == "0"
    assert [m.seq for m in eng.fetch("S", "C", 1)] == [2]


def test_pause_in_the_past():
    be = _engine()
    assert ConsumerEngine(be, 20 * SECOND).pause("S", "C", 10 * SECOND) == {
        "paused": False, "pause_until": "1970-01-01T00:00:10Z"}


def test_pause_unknown_consumer():
    with pytest.raises(ApiError) as err:
        ConsumerEngine(_engine(), 2 * SECOND).pause("S", "NOPE", 10 * SECOND)
    assert err.value.err_code == 10014


# reset: (consumer config, reset seq asked, error text or (reset_seq, delivered stream seq,
# num_pending)) after 3 of 5 messages were delivered and the first acknowledged.
RESETS = [
    ({}, 0, (2, 1, 4)),                        # back to just after the ack floor
    ({}, 4, (4, 3, 2)),
    ({}, 1, (1, 0, 5)),
    ({}, 9, (9, 8, 0)),                        # past the end: nothing pending
    ({"deliver_policy": "by_start_sequence", "opt_start_seq": 2}, 3, (3, 2, 3)),
    ({"deliver_policy": "by_start_sequence", "opt_start_seq": 2}, 1, "invalid reset: below "
     "start seq"),
    ({"deliver_policy": "by_start_time", "opt_start_time": "1970-01-01T00:00:02Z"}, 1,
     "invalid reset: below start time"),
    ({"deliver_policy": "by_start_time", "opt_start_time": "1970-01-01T00:00:02Z"}, 2,
     (2, 1, 4)),
    ({"deliver_policy": "new"}, 3, "invalid reset: not allowed"),
    ({"deliver_policy": "last"}, 3, "invalid reset: not allowed"),
    ({"deliver_policy": "last"}, 0, (6, 5, 0)),  # to the ack floor: always allowed
]


@pytest.mark.parametrize(("cfg", "seq", "expected"), RESETS)
def test_reset(cfg, seq, expected):
    be = MemoryConsumerStore()
    be.add_stream(StreamConfig.from_json({"name": "S", "subjects": ["s.>"]}))
    for i in range(5):
        be.publish("S", "s.a", b"m%d" % i, ts=(i + 1) * SECOND)
    eng = ConsumerEngine(be, 10 * SECOND)
    eng.add("S", ConsumerConfig.from_json({"durable_name": "C", "ack_policy": "explicit",
                                           **cfg}))
    got = eng.fetch("S", "C", 3)
    if got:
        eng.ack("S", "C", got[0].seq)
    if isinstance(expected, str):
        with pytest.raises(ApiError) as err:
            eng.reset("S", "C", seq)
        assert (err.value.code, err.value.err_code, err.value.description) == (
            400, 10204, expected)
        return
    info, reset_seq = eng.reset("S", "C", seq)
    doc_ = info.to_json()
    assert (reset_seq, doc_["delivered"]["stream_seq"], doc_["num_pending"]) == expected
    assert doc_["delivered"]["consumer_seq"] == 0 and doc_["ack_floor"]["consumer_seq"] == 0
    assert doc_["ack_floor"]["stream_seq"] == reset_seq - 1
    assert (doc_["num_ack_pending"], doc_["num_redelivered"]) == (0, 0)
    nxt = eng.fetch("S", "C", 1)
    assert [m.seq for m in nxt] == ([reset_seq] if reset_seq <= 5 else [])
    if nxt:
        assert nxt[0].consumer_seq == 1


def test_reset_interest_stream_drops_what_lost_interest():
    be = _engine("interest")
    eng = ConsumerEngine(be, 10 * SECOND)
    eng.reset("S", "C", 4)
    assert sorted(be.streams["S"][1].messages) == [4, 5]


# -- the CLI ---------------------------------------------------------------------------------
@pytest.fixture
def jlc(jl, cli_clock, utc):
    jl.clock = cli_clock
    assert jl("stream", "add", "S", "--subjects", "s.>", "--defaults").exit_code == 0
    assert jl("pub", "s.a", "m{{Count}}", "--count", "4").exit_code == 0
    assert jl("consumer", "add", "S", "C", "--defaults").exit_code == 0
    return jl


def test_cli_pause_resume(jlc):
    res = jlc("consumer", "pause", "S", "C", "1h")
    assert res.exit_code == 2  # asks for confirmation: no terminal, no --force
    res = jlc("consumer", "pause", "S", "C", "1h", "-f")
    assert res.stdout == "Paused S > C until 2026-01-01 01:00:00 (1h0m0s)\n"
    assert json.loads(jlc("consumer", "next", "S", "C", "-j").stdout) == []
    held = jlc("consumer", "next", "S", "C")  # says why nothing came
    assert (held.exit_code, held.stderr) == (0, (
        "No messages delivered: consumer S > C is paused until 2026-01-01T01:00:00Z (jetlink "
        "consumer resume S C)\n"))
    info = jlc("consumer", "info", "S", "C")
    assert "Paused Until Deadline: 2026-01-01 01:00:00 (1h0m0s remaining)" in info.stdout
    assert "Paused Until: 2026-01-01 01:00:00 (1h0m0s remaining)" in info.stdout
    # natscli's PauseRemaining.Round(time.Second): 59m58.5s left is 59m59s
    jlc.clock.advance(1500 * SECOND // 1000)
    assert "(59m59s remaining)" in jlc("consumer", "info", "S", "C").stdout
    # a start time as natscli prints its *time.Time: Go's String()
    assert jlc("consumer", "add", "S", "T", "--defaults", "--deliver", "1h").exit_code == 0
    assert "Deliver Policy: Since 2025-12-31 23:00:01.5 +0000 UTC" in jlc(
        "consumer", "info", "S", "T").stdout
    jlc.clock.advance(60 * SECOND)
    res = jlc("consumer", "resume", "S", "C", "-f")
    assert res.stdout == ("Consumer S > C was resumed while previously paused until "
                          "2026-01-01 01:00:00\n")
    res = jlc("consumer", "resume", "S", "C", "-f")
    assert (res.exit_code, res.stderr) == (1, "jetlink: error: consumer is not paused\n")
    assert [m["seq"] for m in json.loads(jlc("consumer", "next", "S", "C", "-j").stdout)] == [1]


def test_cli_pause_until_time_and_past(jlc):
    res = jlc("consumer", "pause", "S", "C", "2026-01-02 00:00:00", "-f", "-j")
    assert doc(res) == {"paused": True, "pause_until": "2026-01-02T00:00:00Z",
                        "pause_remaining": 86400 * SECOND}
    # far ahead: the time left is a Go time.Duration, saturated at int64's largest
    res = jlc("consumer", "pause", "S", "C", "9999-12-31 23:59:59", "-f", "-j")
    assert doc(res) == {"paused": True, "pause_until": "9999-12-31T23:59:59Z",
                        "pause_remaining": 2**63 - 1}
    assert doc(jlc("consumer", "info", "S", "C", "-j"))["pause_remaining"] == 2**63 - 1
    # a time in the past is refused before it is sent: the server would take it as "not
    # paused" and resume the consumer paused above
    res = jlc("consumer", "pause", "S", "C", "2025-01-02 00:00:00", "-f")
    assert (res.exit_code, res.stderr) == (2, (
        "jetlink: error: invalid value for UNTIL: '2025-01-02 00:00:00': 2025-01-02 00:00:00 "
        "is not in the future (a pause that ended already; jetlink consumer resume ends "
        "one)\n"))
    assert doc(jlc("consumer", "info", "S", "C", "-j"))["pause_remaining"] == 2**63 - 1
    assert jlc("consumer", "pause", "S", "C", "0s", "-f").exit_code == 2
    res = jlc("consumer", "pause", "S", "C", "soon", "-f")
    assert res.exit_code == 2
    assert "invalid value for UNTIL: 'soon'" in res.stderr
    # a duration too long is said to be one, with the maximum (not "a time or a duration")
    res = jlc("consumer", "pause", "S", "C", "99999999h", "-f")
    assert (res.exit_code, res.stderr) == (2, (
        "jetlink: error: invalid value for UNTIL: '99999999h': more than the maximum "
        "2562047h47m16.854775807s (about 292 years)\n"))
    res = jlc("consumer", "add", "S", "D", "--defaults", "--deliver", "999999999h")
    assert res.stderr.startswith("jetlink: error: invalid value for --deliver: '999999999h': "
                                 "more than the maximum ")


def test_cli_add_pause(jlc):
    res = jlc("consumer", "add", "S", "P", "--defaults", "--pause", "30m", "-j")
    d = doc(res)
    assert d["config"]["pause_until"] == "2026-01-01T00:30:00Z"
    assert (d["paused"], d["pause_remaining"]) == (True, 1800 * SECOND)


def test_cli_reset(jlc):
    assert jlc("consumer", "next", "S", "C", "--count", "3").exit_code == 0
    res = jlc("consumer", "reset", "S", "C")
    assert res.exit_code == 2
    res = jlc("consumer", "reset", "S", "C", "--sequence", "2", "-f", "-j")
    d = doc(res)
    assert (d["reset_seq"], d["delivered"]["stream_seq"], d["num_pending"]) == (2, 1, 3)
    res = jlc("consumer", "reset", "S", "C", "-f")
    assert "State for Consumer S > C" in res.stdout
    assert "Unprocessed Messages: 3" in res.stdout
    assert jlc("consumer", "add", "S", "N", "--defaults", "--deliver", "new").exit_code == 0
    res = jlc("consumer", "reset", "S", "N", "--sequence", "1", "-f")
    assert (res.exit_code, res.stderr) == (
        1, "jetlink: error: invalid reset: not allowed (10204)\n")
    # below a consumer's own start: which start (the JSON stays the server's)
    assert jlc("consumer", "add", "S", "D", "--defaults", "--deliver", "3").exit_code == 0
    res = jlc("consumer", "reset", "S", "D", "--sequence", "2", "-f")
    assert (res.exit_code, res.stderr) == (1, (
        "jetlink: error: invalid reset: below start seq (10204): --sequence 2: consumer S > D "
        "starts at stream sequence 3\n"))
    res = jlc("consumer", "reset", "S", "D", "--sequence", "2", "-f", "-j")
    assert json.loads(res.stdout)["error"]["description"] == "invalid reset: below start seq"
