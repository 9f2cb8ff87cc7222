"""Counters (ADR-49) on the embedded engine and through ``jetlink counter``.

The engine cases are nats-server 2.15's counter tests, as tables (jetstream_test.go
``TestJetStreamAllowMsgCounter*``, jetstream_batching_test.go
``TestJetStreamCounterNullSourcesHeaderDoesNotPanic``): the same operations and the server's
results. The Go parsing of stored values and headers (core/streamstore/counters.py) has its
own tables. tests/live/test_parity_counters.py runs the CLI scenarios on a real server too.
"""

from __future__ import annotations

import json

import pytest
from helpers import data_dir_bytes, doc

from jetlink.core import headers as H
from jetlink.core import replication as R
from jetlink.core.config.stream import StreamConfig
from jetlink.core.errors import ApiError
from jetlink.core.messages import StoredMsg
from jetlink.core.streamstore import counters as C


def add(js, name, subjects=None, **kw):
    doc_ = {"name": name, **kw}
    if subjects is not None:
        doc_["subjects"] = subjects
    return js.add_stream(StreamConfig.from_json(doc_))


def incr(js, subject, value, data=b"", **hdrs):
    h = {H.INCR: value} if value is not None else {}
    h.update({k.replace("_", "-"): v for k, v in hdrs.items()})
    return js.publish(subject, data, h or None)


def err_code(fn, *a, **kw):
    with pytest.raises(ApiError) as e:
        fn(*a, **kw)
    return e.value.err_code


def last(js, stream, subject):
    m = js.get_msg(stream, last_by_subj=subject)
    return json.loads(m.data)["val"], H.first_values(m.hdr) if m.hdr else {}


def pump(dd, clock):
    R.pump_until_idle(dd, clock)


# --- TestJetStreamAllowMsgCounter ------------------------------------------------------------
INCREMENTS = [("1", 1, "1"), ("2", 2, "3"), ("-3", 3, "0"), ("1", 4, "1"), ("-1", 5, "0")]


def test_counter_disabled_and_setting_fixed(js):
    add(js, "TEST", ["foo"])
    assert js.publish("foo", b"", {"Key": "Value"}).seq == 1
    assert err_code(incr, js, "foo", "1") == 10168
    with pytest.raises(ApiError) as e:
        js.update_stream(StreamConfig.from_json(
            {"name": "TEST", "subjects": ["foo"], "allow_msg_counter": True}))
    assert (e.value.err_code, e.value.description) == (
        10052, "stream configuration update can not change message counter setting")


@pytest.mark.parametrize("value, data, extra, code", [
    (None, b"", {}, 10169),  # no Nats-Incr
    (None, b"", {"Key": "Value"}, 10169),
    ("1", b"data", {}, 10170),  # a body
    ("bogus", b"", {}, 10171),
    ("1.5", b"", {}, 10171),
    ("0x10", b"", {}, 10171),
    ("1_000", b"", {}, 10171),
    ("1", b"", {H.ROLLUP: "1"}, 10171),
    ("1", b"", {H.EXPECTED_LAST_SEQ: "1"}, 10171),
    ("1", b"", {H.EXPECTED_LAST_SUBJ_SEQ: "1"}, 10171),
    ("1", b"", {H.EXPECTED_LAST_SUBJ_SEQ_SUBJ: "1"}, 10171),
    ("1", b"", {H.EXPECTED_LAST_MSG_ID: "1"}, 10171),
    ("1", b"", {H.EXPECTED_STREAM: "TEST"}, 10171),
    ("1", b"", {H.MSG_TTL: "1s"}, 10166),  # a counter stream never allows TTLs
])
def test_counter_refusals(js, value, data, extra, code):
    add(js, "TEST", ["foo"], allow_msg_counter=True)
    h = {H.INCR: value} if value is not None else {}
    h.update(extra)
    assert err_code(js.publish, "foo", data, h or None) == code
    assert js.stream_info("TEST").state.messages == 0


def test_counter_increments_and_dedupe(js):
    add(js, "TEST", ["foo"], allow_msg_counter=True, duplicate_window=60_000_000_000)
    for value, seq, total in INCREMENTS:
        ack = incr(js, "foo", value)
        assert (ack.seq, ack.val) == (seq, total)
        assert last(js, "TEST", "foo")[0] == total
        assert js.get_msg("TEST", seq).data == b'{"val":"%s"}' % total.encode()
    ack = incr(js, "foo", "1", Nats_Msg_Id="dedupe")
    assert ack.to_json() == {"stream": "TEST", "seq": 6, "val": "1"}
    ack = incr(js, "foo", "1", Nats_Msg_Id="dedupe")
    assert ack.to_json() == {"stream": "TEST", "seq": 6, "duplicate": True}  # no val
    assert last(js, "TEST", "foo")[0] == "1"


# --- TestJetStreamAtomicBatchPublishCounterSingleServer -------------------------------------
# increments in one atomic batch: (batch messages as (Nats-Incr, body, extra headers), the
# commit's result: the stored values, or the refusal's code with nothing stored)
BATCH_COUNTERS = [
    ([("1", b"", {}), ("2", b"", {})], ["1", "3"]),
    ([("1", b"", {}), ("1", b"body", {})], 10170),
    ([("1", b"", {}), ("1", b"", {"Nats-Rollup": "sub"})], 10171),
    ([("1", b"", {}), ("x", b"", {})], 10171),
]


@pytest.mark.parametrize("items,expected", BATCH_COUNTERS)
def test_counter_increments_in_a_batch(js, items, expected):
    add(js, "TEST", ["foo"], allow_msg_counter=True, allow_atomic=True)
    result = None
    for n, (value, body, extra) in enumerate(items, 1):
        h = {"Nats-Batch-Id": "uuid", "Nats-Batch-Sequence": str(n), H.INCR: value, **extra}
        if n == len(items):
            h["Nats-Batch-Commit"] = "1"
        try:
            result = js.publish("foo", body, h)
        except ApiError as e:
            result = e.err_code
    if isinstance(expected, int):
        assert result == expected
        assert js.stream_info("TEST").state.to_json()["messages"] == 0
        return
    assert (result.seq, result.batch, result.count) == (len(items), "uuid", len(items))
    for seq, total in enumerate(expected, 1):
        assert js.get_msg("TEST", seq).data == b'{"val":"%s"}' % total.encode()
    # the counter goes on from the batch's total
    assert incr(js, "foo", "5").val == str(int(expected[-1]) + 5)


def test_counter_big_values(js):
    add(js, "TEST", ["foo"], allow_msg_counter=True)
    big = "9" * 5000  # past Python's default 4,300-digit conversion limit
    assert incr(js, "foo", big).val == big
    assert incr(js, "foo", "+1").val == "1" + "0" * 5000
    assert incr(js, "foo", "-" + "1" + "0" * 5000).val == "0"


# --- TestJetStreamAllowMsgCounterMaxPayloadAndSize --------------------------------------------
def test_counter_max_msg_size(js):
    add(js, "TEST", ["foo"], allow_msg_counter=True)
    for value, total in (("1", "1"), ("-2", "-1"), ("1", "0")):
        assert incr(js, "foo", value).val == total
    js.update_stream(StreamConfig.from_json(
        {"name": "TEST", "subjects": ["foo"], "allow_msg_counter": True, "max_msg_size": 37}))
    assert incr(js, "foo", "1").seq == 4  # exactly 37 bytes: 26 of headers, 11 of body
    assert err_code(incr, js, "foo", "10") == 10054


# --- TestJetStreamAllowMsgCounterIncompatibleSettings ------------------------------------------
@pytest.mark.parametrize("extra, text", [
    ({"discard": "new"}, "counter stream cannot use discard new"),
    ({"allow_msg_ttl": True}, "counter stream cannot use message TTLs"),
    ({"allow_msg_schedules": True}, "counter stream cannot use message schedules"),
    ({"retention": "interest"}, "counter stream can only use limits retention"),
    ({"retention": "workqueue"}, "counter stream can only use limits retention"),
])
def test_counter_incompatible_settings(js, extra, text):
    with pytest.raises(ApiError) as e:
        add(js, "TEST", ["foo"], allow_msg_counter=True, **extra)
    assert (e.value.err_code, e.value.description) == (10052, text)


# --- TestJetStreamAllowMsgCounterMirror ---------------------------------------------------------
def test_counter_mirror(js, dd, clock):
    add(js, "O", ["foo"], allow_msg_counter=True)
    assert err_code(add, js, "M", mirror={"name": "O"}, allow_msg_counter=True) == 10173
    add(js, "M", mirror={"name": "O"})
    assert incr(js, "foo", "1").seq == 1
    pump(dd, clock)
    m = js.get_msg("M", 1)
    assert (H.header_value(m.hdr, H.INCR), m.data) == ("1", b'{"val":"1"}')


# --- TestJetStreamAllowMsgCounterSourceAggregates / SourceVerbatim -------------------------------
TO_FOO = [{"src": "foo.*", "dest": "foo"}]


def _two_origins(js, **kw):
    add(js, "O1", ["foo.1"], allow_msg_counter=True, **kw)
    add(js, "O2", ["foo.2"], allow_msg_counter=True, **kw)


def _sources():
    return [{"name": "O1", "subject_transforms": TO_FOO},
            {"name": "O2", "subject_transforms": TO_FOO}]


@pytest.mark.parametrize("counter, vals, incrs, sources", [
    # a counter stream aggregates: the sum, each source's value, the difference as Nats-Incr
    (True, ["1", "3"], ["1", "2"],
     [None, '{"O1":{"foo.1":"1"},"O2":{"foo.2":"2"}}']),
    # any other stream stores the origins' messages as they are
    (False, ["1", "2"], ["1", "2"], [None, None]),
])
def test_counter_sourced(js, dd, clock, counter, vals, incrs, sources):
    _two_origins(js)
    add(js, "M", sources=_sources(), allow_msg_counter=counter)
    assert incr(js, "foo.1", "1").seq == 1
    pump(dd, clock)
    assert incr(js, "foo.2", "2").seq == 1
    pump(dd, clock)
    for seq in (1, 2):
        m = js.get_msg("M", seq)
        assert m.subject == "foo"
        assert json.loads(m.data) == {"val": vals[seq - 1]}
        fv = H.first_values(m.hdr)
        assert fv[H.INCR] == incrs[seq - 1]
        assert fv.get(H.COUNTER_SOURCES) == (sources[seq - 1] if seq == 2 or not counter
                                             else '{"O1":{"foo.1":"1"}}')


def test_counter_sourced_second_value_is_a_difference(js, dd, clock):
    _two_origins(js)
    add(js, "M", sources=_sources(), allow_msg_counter=True)
    incr(js, "foo.1", "+3")
    incr(js, "foo.1", "4")
    pump(dd, clock)
    m = js.get_msg("M", 2)
    assert (m.data, H.header_value(m.hdr, H.INCR)) == (b'{"val":"7"}', "4")
    assert H.header_value(m.hdr, H.COUNTER_SOURCES) == '{"O1":{"foo.1":"7"}}'
    # the header line order: the origin's, Nats-Stream-Source, then Nats-Counter-Sources
    assert [k for k in H.decode_headers(m.hdr)] == [
        H.INCR, H.STREAM_SOURCE, H.COUNTER_SOURCES]


def test_counter_sourced_from_a_plain_stream_stalls(js, dd, clock):
    add(js, "P", ["p.>"])
    add(js, "M", sources=[{"name": "P"}], allow_msg_counter=True)
    js.publish("p.a", b"x")
    (report,) = R.pump_until_idle(dd, clock)
    assert js.stream_info("M").state.messages == 0  # refused: 10169, the source stalls
    assert (report.stalled, report.error) == (True, "message counter increment is missing")


def test_counter_sources_into_one_subject(js, dd, clock):
    """Measured on nats-server 2.15.1: CNT (cnt.a = 7) and CNTB (cntb.a = 1100) sourced into
    one subject hold 1107, each source's value in Nats-Counter-Sources."""
    add(js, "CNT", ["cnt.>"], allow_msg_counter=True)
    add(js, "CNTB", ["cntb.>"], allow_msg_counter=True)
    incr(js, "cnt.a", "+3")
    incr(js, "cnt.a", "4")
    incr(js, "cntb.a", "1100")
    add(js, "AGG", ["agg.>"], allow_msg_counter=True, sources=[
        {"name": n, "subject_transforms": [{"src": f"{p}.*", "dest": "agg.$1"}]}
        for n, p in (("CNT", "cnt"), ("CNTB", "cntb"))])
    pump(dd, clock)
    m = js.get_msg("AGG", last_by_subj="agg.a")
    assert (m.seq, m.data) == (3, b'{"val":"1107"}')
    assert H.header_value(m.hdr, H.COUNTER_SOURCES) == (
        '{"CNT":{"cnt.a":"7"},"CNTB":{"cntb.a":"1100"}}')
    assert [H.header_value(js.get_msg("AGG", s).hdr, H.INCR) for s in (1, 2, 3)] == [
        "3", "4", "1100"]


# --- TestJetStreamAllowMsgCounterSourceStartingAboveZero -----------------------------------------
def test_counter_sourced_starting_above_zero(js, dd, clock):
    _two_origins(js, max_msgs_per_subject=1)
    for i in range(5):
        assert incr(js, "foo.1", "1").seq == i + 1
        assert incr(js, "foo.2", "2").seq == i + 1
    add(js, "M", ["foo"], allow_msg_counter=True)
    assert incr(js, "foo", "1").seq == 1
    js.update_stream(StreamConfig.from_json(
        {"name": "M", "subjects": ["foo"], "allow_msg_counter": True, "sources": _sources()}))
    pump(dd, clock)
    assert incr(js, "foo", "1").seq == 4
    m = js.get_msg("M", 4)
    assert json.loads(m.data) == {"val": "17"}
    assert json.loads(H.header_value(m.hdr, H.COUNTER_SOURCES)) == {
        "O1": {"foo.1": "5"}, "O2": {"foo.2": "10"}}
    got = [H.header_value(js.get_msg("M", s).hdr, H.INCR) for s in (1, 2, 3, 4)]
    assert got[0] == "1" and sorted(got[1:3]) == ["10", "5"] and got[3] == "1"
    assert {js.get_msg("M", s).subject for s in (1, 2, 3, 4)} == {"foo"}


# --- TestJetStreamCounterNullSourcesHeaderDoesNotPanic --------------------------------------------
def test_counter_null_sources_header(js, dd, clock):
    add(js, "O1", ["foo.*"], allow_msg_counter=True)
    incr(js, "foo.1", "5")
    add(js, "M", ["foo"], allow_msg_counter=True)
    js.publish("foo", b"", {H.INCR: "1", H.COUNTER_SOURCES: '{"O1":null}'})
    assert H.header_value(js.get_msg("M", 1).hdr, H.COUNTER_SOURCES) == '{"O1":null}'
    js.update_stream(StreamConfig.from_json(
        {"name": "M", "subjects": ["foo"], "allow_msg_counter": True,
         "sources": [{"name": "O1", "subject_transforms": TO_FOO}]}))
    pump(dd, clock)
    m = js.get_msg("M", 2)
    assert json.loads(m.data) == {"val": "6"}
    assert H.header_value(m.hdr, H.COUNTER_SOURCES) == '{"O1":{"foo.1":"5"}}'


# --- the Go parsing of stored values (a broken counter: 10172) -----------------------------------
def _apply(prev_body, prev_hdr=None, incr_=1):
    prev = StoredMsg("foo", 1, 0, prev_hdr, prev_body)
    return C.apply("foo", b"NATS/1.0\r\nNats-Incr: 1\r\n\r\n", b"", incr_,
                   {H.INCR: "1"}, False, lambda: prev)


@pytest.mark.parametrize("body, total", [
    (b"", None),  # json.Unmarshal of nothing: an error
    (b"x", None),
    (b"[]", None),
    (b'"5"', None),
    (b"5", None),
    (b'{"val":5}', None),
    (b'{"val":"5"} x', None),
    (b"NaN", None),
    (b"null", "1"),
    (b"{}", "1"),
    (b'{"val":null}', "1"),
    (b'{"val":"5"}', "6"),
    (b'{"VAL":"5"}', "6"),  # Go matches keys regardless of case
    (b'{"val":"5","Val":"7"}', "8"),  # the last match wins
    (b'{"val":"12x"}', "13"),  # SetString keeps the digits read before failing
    (b'{"val":"-4"}', "-3"),
    (b'{"val":"abc"}', "1"),
    (b'{"val":""}', "1"),
    (b'{"val":"+9"}', "10"),
])
def test_counter_previous_body(body, total):
    r = _apply(body)
    if total is None:
        assert isinstance(r, ApiError) and r.err_code == 10172
    else:
        assert not isinstance(r, ApiError) and r[1:] == (b'{"val":"%s"}' % total.encode(), total)


@pytest.mark.parametrize("sources, out", [
    ('{"O1":{"a":"5"}}', '{"O1":{"a":"5"}}'),
    ('{"B":{"z":"1","a":"2"},"A":null}', '{"A":null,"B":{"a":"2","z":"1"}}'),  # sorted keys
    ('{"O1":{"a":null}}', '{"O1":{"a":""}}'),
    ('{"O<1>":{"a&b":"1"}}', '{"O\\u003c1\\u003e":{"a\\u0026b":"1"}}'),  # Go's HTML escapes
    ("null", None),
    ("{}", None),
    ('{"O1":{"a":5}}', 10172),
    ('{"O1":[]}', 10172),
    ("[]", 10172),
    ("nope", 10172),
])
def test_counter_previous_sources_header(sources, out):
    hdr = f"NATS/1.0\r\n{H.COUNTER_SOURCES}: {sources}\r\n\r\n".encode()
    r = _apply(b'{"val":"1"}', hdr)
    if out == 10172:
        assert isinstance(r, ApiError) and r.err_code == 10172
        return
    assert not isinstance(r, ApiError)
    assert H.header_value(r[0], H.COUNTER_SOURCES) == out


@pytest.mark.parametrize("hdr, key, value, out", [
    (b"NATS/1.0\r\nA: 1\r\n\r\n", "A", "22", b"NATS/1.0\r\nA: 22\r\n\r\n"),
    (b"NATS/1.0\r\nA:1\r\nA: 3\r\n\r\n", "A", "2", b"NATS/1.0\r\nA:2\r\nA: 3\r\n\r\n"),
    (b"NATS/1.0\r\nB: 1\r\n\r\n", "A", "2", b"NATS/1.0\r\nB: 1\r\nA: 2\r\n\r\n"),
    (b"NATS/1.0\r\nXA: 1\r\n\r\n", "A", "2", b"NATS/1.0\r\nXA: 1\r\nA: 2\r\n\r\n"),
])
def test_set_header(hdr, key, value, out):
    assert C.set_header(hdr, key, value) == out


@pytest.mark.parametrize("text, strict, prefix", [
    ("12", 12, 12), ("+12", 12, 12), ("-12", -12, -12), ("", None, 0), ("-", None, 0),
    ("12x", None, 12), ("-3-", None, -3), (" 1", None, 0), ("1 ", None, 1), ("٣", None, 0),
])
def test_big_int_parsing(text, strict, prefix):
    assert C.parse_big_int(text) == strict
    assert C.go_int_prefix(text) == prefix


# --- the CLI: natscli's counter verbs ----------------------------------------------------------
@pytest.fixture
def counters_cli(jl):
    for args in (["CNT", "--subjects", "cnt.>"], ["CNTB", "--subjects", "cntb.>"]):
        doc(jl("stream", "add", *args, "--allow-counter", "--allow-direct", "--defaults", "-j"))
    doc(jl("stream", "add", "PLAIN", "--subjects", "plain.>", "--defaults", "-j"))
    return jl


def test_cli_counter_verbs(counters_cli):
    jl = counters_cli
    assert jl("counter", "incr", "cnt.a", "+3").stdout == "3\n"
    assert doc(jl("counter", "increment", "cnt.a", "4", "-j")) == {
        "stream": "CNT", "seq": 2, "val": "7"}
    assert jl("counter", "decrement", "cnt.a", "2").stdout == "5\n"
    assert jl("counter", "decr", "cnt.a", "-2").stdout == "7\n"
    assert jl("counter", "incr", "cntb.a", "1100").stdout == "1100\n"
    assert jl("counter", "get", "cnt.a").stdout == "7\n"
    assert doc(jl("counter", "get", "cnt.a", "-j")) == {
        "stream": "CNT", "subject": "cnt.a", "val": "7"}
    assert doc(jl("counter", "view", "cnt.a", "-j")) == {
        "stream": "CNT", "subject": "cnt.a", "val": "7", "incr": "2"}
    assert jl("counter", "view", "cnt.a").stdout == (
        "Counter cnt.a\nValue:      7\nIncrement:  2\nSubject:    cnt.a\n\n"
        "No source information found\n")
    assert jl("counter", "ls", "cnt.>").stdout == "cnt.a\n"
    assert doc(jl("counter", "list", "--stream", "CNTB", "-j")) == ["cntb.a"]


@pytest.mark.parametrize("args", [["cnt..a"], ["cnt.a b"], ["--stream", "CNT", "cnt.>.x"]])
def test_cli_counter_list_refuses_an_invalid_pattern(counters_cli, args):
    """A PATTERN that is no subject filter: a usage error naming it and the rule, before
    anything is asked (a traceback before), and nothing changed."""
    jl = counters_cli
    jl("counter", "incr", "cnt.a", "1")
    before = data_dir_bytes(jl.data)
    r = jl("counter", "list", *args, "-j")
    pattern = args[-1]
    assert (r.exit_code, json.loads(r.stdout)) == (2, {"error": {"description": (
        f"PATTERN: subject '{pattern}' is not valid: tokens separated by '.', none empty, no "
        "spaces or tabs, '>' only as the last token")}})
    assert data_dir_bytes(jl.data) == before


def test_cli_counter_aggregate(counters_cli):
    jl = counters_cli
    jl("counter", "incr", "cnt.a", "+3")
    jl("counter", "incr", "cnt.a", "4")
    jl("counter", "incr", "cntb.a", "1100")
    doc(jl("stream", "add", "AGG", "--subjects", "agg.>", "--allow-counter", "--allow-direct",
           "--source", "CNT", "--source", "CNTB", "--defaults", "-j"))
    assert doc(jl("counter", "view", "cntb.a", "--stream", "AGG", "-j")) == {
        "stream": "AGG", "subject": "cntb.a", "val": "1100", "incr": "1100",
        "sources": {"CNTB": {"cntb.a": "1100"}}}  # a subject's own sources
    out = jl("counter", "view", "cnt.a", "--stream", "AGG").stdout
    assert out.endswith("Sources:\n\nCNT:  cnt.a: 7\n")


@pytest.mark.parametrize("args, code, err", [
    (["get", "cnt.zz"], 1, "counter not initialized for subject: cnt.zz"),
    (["incr", "plain.a", "1"], 1, '"PLAIN" is not a valid counter stream'),
    (["incr", "cnt.a", "1x"], 2, "invalid value: '1x' is not a decimal integer"),
    (["incr", "cnt.a", " 5"], 2, "invalid value: ' 5' is not a decimal integer"),  # as Go's
    (["ls"], 2, "no stream or subject specified"),
    (["ls", "cnt.none.>"], 1, "no counters found"),
    # increment publishes: no --stream to give (the hint names what makes a counter)
    (["incr", "nomatch.a", "1"], 1, "stream not found (10059): no stream's subjects match "
                                    "nomatch.a (a counter is a subject of a stream made with "
                                    "--allow-counter --allow-direct)\n"),
    (["decr", "nomatch.a", "1"], 1, "no stream's subjects match nomatch.a (a counter"),
    (["get", "nomatch.a"], 1, "stream not found (10059): no stream's subjects match nomatch.a; "
                              "give its stream with --stream\n"),
])
def test_cli_counter_errors(counters_cli, args, code, err):
    r = counters_cli("counter", *args)
    assert r.exit_code == code, (r.stdout, r.stderr)
    assert err in r.stderr
    assert r.stdout == ""


def test_cli_pub_counter_refusal_json(counters_cli):
    r = counters_cli("pub", "cnt.a", "body", "-H", "Nats-Incr:1", "-j")
    assert r.exit_code == 1
    assert json.loads(r.stdout) == {"error": {"code": 400, "err_code": 10170,
                                              "description": "message counter has payload"},
                                    "stream": "CNT", "seq": 0}  # the server's PubAck


def test_cli_pub_to_a_counter_says_its_value(counters_cli):
    """natscli's pub line ends with the counter's value after the increment (the ack's
    val, ADR-49): " Counter Value: N"."""
    r = counters_cli("pub", "cnt.pv", "", "-H", "Nats-Incr:5")
    assert r.exit_code == 0 and r.stdout.endswith(" Counter Value: 5\n"), (r.stdout, r.stderr)
    r = counters_cli("pub", "cnt.pv", "", "-H", "Nats-Incr:-7")
    assert r.stdout.endswith(" Counter Value: -2\n"), r.stdout


def test_cli_counter_view_of_a_sources_header_not_of_numbers(counters_cli):
    """orbit.go's Get (natscli's counter view) fails on a Nats-Counter-Sources value that
    is no big.Int (parseSources: TestParseSources' "invalid value format"): a client may
    publish such a header with its increment, and the stream keeps it."""
    jl = counters_cli
    assert jl("pub", "cnt.s", "", "-H", "Nats-Incr:2", "-H",
              'Nats-Counter-Sources:{"SRC":{"x.y":"not-a-number"}}').exit_code == 0
    r = jl("counter", "view", "cnt.s")
    assert (r.exit_code, r.stdout) == (1, "")
    assert r.stderr == ("jetlink: error: failed to parse sources of cnt.s in CNT: invalid "
                        "counter value for subject x.y: not-a-number\n")
    assert jl("counter", "get", "cnt.s").stdout == "2\n"  # the value alone reads (LoadValue)
