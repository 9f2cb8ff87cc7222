"""jetlink's own records (consumer positions, a promotion's record, a failback's) changed by
hand: the commands that read them say the record is not one jetlink wrote and what to do,
never a traceback (a JSON value of another shape, a number past any sequence, 1e400)."""

from __future__ import annotations

import pytest
from helpers import doc, ok

# a record as positions sync writes it, its fields changed by the cases below
_RECORD = ('{"mirror":"E","origin":{"stream":"ORDERS","domain":"west"},"origin_last_seq":1,'
           '"origin_subjects":["orders.>"],"synced":"2026-01-01T00:00:00Z","consumers":[{'
           '"name":"C","config":{"durable_name":"C","ack_policy":"explicit"},"ack_floor":0,'
           '"delivered":0,"num_pending":1}]}')


@pytest.fixture
def promoted(jl):
    """west ORDERS, east E its mirror, positions synced, E failed over (promoted)."""
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(jl("--cluster", "west", "stream", "add", "ORDERS", "--subjects", "orders.>",
          "--defaults"))
    ok(jl("--cluster", "west", "pub", "orders.1", "x"))
    ok(jl("--cluster", "west", "consumer", "add", "ORDERS", "C", "--defaults"))
    ok(jl("--cluster", "east", "stream", "add", "E", "--mirror", "ORDERS", "--mirror-domain",
          "west", "--defaults"))
    ok(jl("replicate"))
    ok(jl("--cluster", "east", "positions", "sync"))
    return jl


@pytest.mark.parametrize(("value", "why"), [
    ("[]", "not the fields jetlink writes"), ("null", "not the fields jetlink writes"),
    ("{}", "not the fields jetlink writes"), ("garbage", "not JSON"),
    ('{"mirror":"E","synced":"yesterday","consumers":[]}', "not the fields jetlink writes"),
    ('{"mirror":"E","synced":' + "[" * 1000 + "]" * 1000 + "}",
     "nested deeper than any record"),
    (_RECORD.replace('"origin_subjects":["orders.>"]', '"origin_subjects":[1,null]'),
     "not the fields jetlink writes"),
    (_RECORD.replace('"origin_last_seq":1', '"origin_last_seq":"x"'),
     "not the fields jetlink writes"),
    (_RECORD.replace('"origin_last_seq":1', '"origin_last_seq":NaN'),
     "not the fields jetlink writes"),
    (_RECORD.replace('"ack_floor":0', '"ack_floor":1e400'), "not the fields jetlink writes"),
], ids=["list", "null", "object", "text", "types", "deep", "subjects", "seq-text", "nan",
        "inf"])
def test_positions_put_by_hand_are_not_a_record(promoted, value, why):
    jl = promoted
    ok(jl("--cluster", "east", "kv", "put", "JETLINK_POSITIONS", "E", value))
    said = (f"the consumer positions of mirror E in bucket JETLINK_POSITIONS are not a record "
            f"jetlink wrote ({why}): run jetlink positions sync again")
    r = jl("--cluster", "east", "positions", "ls")
    assert (r.exit_code, r.stderr) == (1, f"jetlink: error: {said}\n")
    r = jl("--cluster", "east", "dr", "check")
    assert r.exit_code == 2 and said in r.stdout and "Traceback" not in r.output
    # the origin down: the failover reads the record (and refuses it, changing nothing)
    ok(jl("cluster", "down", "west"))
    r = jl("--cluster", "east", "stream", "failover", "E", "-f")
    assert (r.exit_code, r.stderr) == (1, f"jetlink: error: {said}\n"), r.output
    assert doc(jl("--cluster", "east", "stream", "info", "E", "-j"))["config"]["mirror"]


@pytest.mark.parametrize("last", ["1e400", "99999999999999999999", '"7"', "-1"])
def test_a_promotion_record_changed_by_hand_is_said_to_be_one(promoted, last):
    jl = promoted
    ok(jl("--cluster", "east", "stream", "failover", "E", "-f"))
    record = ('{"mirror":{"name":"ORDERS","external":{"api":"$JS.west.API"}},"last_seq":'
              + last + "}")
    ok(jl("--cluster", "east", "stream", "edit", "E", "-f", "--metadata",
          f"jetlink.promoted_mirror={record}"))
    r = jl("--cluster", "east", "stream", "failback", "E", "--dry-run")
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: stream E's jetlink.promoted_mirror is not a record jetlink wrote "
        "(not the mirror and a last sequence from 0 to 2^63-1): changed by hand, it can not "
        "be failed back; restore the record, or edit the stream back into a mirror of its "
        "origin\n"))
    for args in (["--cluster", "east", "dr", "check"], ["dr", "fence", "--from", "west",
                 "--dry-run"], ["dr", "failback", "--from", "west", "--dry-run"]):
        r = jl(*args)
        assert isinstance(r.exception, (SystemExit, type(None))), (args, r.output)
