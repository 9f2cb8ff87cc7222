"""``jetlink pub`` and ``jetlink sub``: natscli's templates and headers, PubAck JSON and exit
codes against the embedded engine, and a cross-process ``sub`` follower.
"""

from __future__ import annotations

import base64
import json
import os
import random
import re
import subprocess
import sys
import time

import pytest
from helpers import ENV_VARS, WAIT_TIMEOUT, data_dir_bytes, doc, ok, runner

from jetlink.cli.main import app
from jetlink.cli.pub import TemplateError, expand, parse_headers
from jetlink.core.errors import UsageError

NOW = 1_767_323_045_123_456_789  # 2026-01-02T03:04:05.123456789Z


# -- templates (natscli's PubReplyBodyTemplate) ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("order {{Count}}", "order 7"),
        ("order {{ Count }}", "order 7"),
        ("order {{.Count}}", "order 7"),
        ("order {{Cnt}}", "order 7"),
        ("{{Unix}}", "1767323045"),
        ("{{UnixNano}}", str(NOW)),
        ("no templates {here}", "no templates {here}"),
        # Go's trim markers: "{{- " and " -}}" trim the white space beside them
        ("a {{- Count -}} b", "a7b"),
        ("a  {{- .Cnt }}  b", "a7  b"),
        ("{{ Count -}}\n\t z", "7z"),
        # natscli's pubData fields: .Request is empty for a publish
        ("x{{.Request}}y", "xy"),
    ],
)
def test_expand(text, expected):
    assert expand(text, 7, NOW) == expected


def test_expand_time_stamp_and_kitchen(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        assert expand("{{TimeStamp}}", 1, NOW) == "2026-01-02T03:04:05Z"
        assert expand("{{Time}}", 1, NOW) == "3:04AM"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_expand_id_and_random():
    rng = random.Random(1)
    ids = {expand("{{ID}}", 1, NOW, rng) for _ in range(50)}
    assert len(ids) == 50 and all(len(i) == 22 and i.isalnum() for i in ids)
    for _ in range(20):
        text = expand("{{Random 3 6}}", 1, NOW, rng)
        assert 3 <= len(text) <= 6 and text.isalnum()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{{Nope}}", 'function "Nope" not defined'),
        ("{{Random 1}}", "Random takes two numbers"),
        ("{{Count 2}}", "Count takes no arguments"),
        ("{{.ID}}", "can't evaluate field ID"),  # a function, not a field of pubData
        ("{{.Count 1}}", "can't give argument to non-function .Count"),
        ("{{Request}}", 'function "Request" not defined'),  # (a reply's only)
        ("{{Count", "unclosed action"),  # Go's text/template: never closed
        ("a {{Count}} b {{ID", "unclosed action"),
    ],
)
def test_expand_errors(text, message):
    with pytest.raises(TemplateError, match=message):
        expand(text, 1, NOW)


def test_parse_headers():
    assert parse_headers(["A:1", " B : two words ", "A:2", "Url:http://x"]) == [
        ("A", "1"),
        ("B", "two words"),
        ("A", "2"),
        ("Url", "http://x"),
    ]
    with pytest.raises(UsageError, match="invalid header 'nocolon': expected NAME:VALUE"):
        parse_headers(["nocolon"])


# -- pub against the engine ---------------------------------------------------------------------


@pytest.fixture
def jl(jl, cli_clock):
    """``jl`` (tests/conftest.py) with a manual clock (``jl.clock``) and a stream ORDERS."""
    jl.clock = cli_clock
    assert (
        jl("stream", "add", "ORDERS", "--subjects", "orders.*", "--defaults", "-j").exit_code == 0
    )
    return jl


def test_pub_prints_the_puback(jl):
    assert doc(jl("pub", "orders.new", "hello", "-j")) == {"stream": "ORDERS", "seq": 1}
    assert ok(jl("pub", "orders.new", "again")).stdout == "Stored in Stream: ORDERS Sequence: 2\n"
    assert doc(jl("pub", "orders.new", "n{{Count}}", "--count", "2", "-j")) == [
        {"stream": "ORDERS", "seq": 3},
        {"stream": "ORDERS", "seq": 4},
    ]
    stored = doc(jl("stream", "view", "ORDERS", "--id", "3", "-j"))
    assert [m["data"] for m in stored] == ["bjE=", "bjI="]  # n1, n2
    # natscli's pub: a count below 1 publishes one message
    for n in ("0", "-3"):
        assert ok(jl("pub", "orders.new", "x", "--count", n)).stdout.count("Stored in") == 1
    assert doc(jl("stream", "info", "ORDERS", "-j"))["state"]["messages"] == 6


def test_pub_headers_and_duplicates(jl):
    first = doc(
        jl("pub", "orders.new", "x", "-H", "Nats-Msg-Id:order-1", "-H", "Trace: {{Count}}", "-j")
    )
    assert first == {"stream": "ORDERS", "seq": 1}
    from jetlink.core.headers import decode_headers

    hdrs = base64.b64decode(doc(jl("stream", "get", "ORDERS", "1", "-j"))["hdrs"])
    assert decode_headers(hdrs) == {"Nats-Msg-Id": ["order-1"], "Trace": ["1"]}
    assert doc(jl("pub", "orders.new", "x", "-H", "Nats-Msg-Id:order-1", "-j")) == {
        "stream": "ORDERS",
        "seq": 1,
        "duplicate": True,
    }
    human = ok(jl("pub", "orders.new", "x", "-H", "Nats-Msg-Id:order-1"))
    assert human.stdout == "Stored in Stream: ORDERS Sequence: 1 Duplicate: true\n"
    bad = jl("pub", "orders.new", "x", "-H", "oops")
    assert (bad.exit_code, bad.stderr) == (
        2,
        "jetlink: error: invalid header 'oops': expected NAME:VALUE\n",
    )


@pytest.mark.parametrize(("header", "line"), [
    ("Nats-Expected-Last-Sequence:7", "wrong last sequence: 1 (10071): the message's "
     "Nats-Expected-Last-Sequence: 7"),
    ("Nats-Expected-Last-Subject-Sequence:5", "wrong last sequence: 1 (10071): the "
     "message's Nats-Expected-Last-Subject-Sequence: 5"),
    ("Nats-Expected-Last-Msg-Id:a", "wrong last msg ID:  (10070): the message's "
     "Nats-Expected-Last-Msg-Id: a"),
    ("Nats-Expected-Stream:OTHER", "expected stream does not match (10060): the message's "
     "Nats-Expected-Stream: OTHER; orders.new is stored by stream ORDERS"),
])
def test_a_refused_expectation_names_its_header(jl, header, line):
    """The server's text names the stream's side; the error line adds the message's (its
    JSON stays the server's document)."""
    ok(jl("pub", "orders.new", "x"))
    r = jl("pub", "orders.new", "y", "-H", header)
    assert (r.exit_code, r.stderr) == (1, f"jetlink: error: {line}\n")
    r = jl("pub", "orders.new", "y", "-H", header, "-j")
    assert r.exit_code == 1 and "detail" not in json.loads(r.stdout)["error"], r.stdout


@pytest.mark.parametrize(("args", "line"), [
    (["sch.a", "v", "-H", "Nats-TTL:bogus"], "invalid per-message TTL (10165): the message's "
     "Nats-TTL: bogus"),
    (["sch.a", "v", "--schedule-dest", "sch.b", "--schedule-cron", "bogus"],
     "message schedules pattern is invalid (10189): the message's Nats-Schedule: bogus"),
    (["sch.a", "v", "--schedule-dest", "sch.b", "--schedule-cron", "@every 1m",
      "--schedule-source", "a..b"], "message schedules source is invalid (10203): the "
     "message's Nats-Schedule-Source: a..b"),
])
def test_a_refused_header_value_is_named(jl, args, line):
    """The server's text says what is wrong, not with what: the error line names the header
    (the flag that set it) and its value; nothing is stored."""
    ok(jl("stream", "add", "SCH", "--subjects", "sch.>", "--defaults", "--allow-msg-ttl",
          "--allow-schedules"))
    r = jl("pub", *args)
    assert (r.exit_code, r.stderr) == (1, f"jetlink: error: {line}\n")
    assert doc(jl("stream", "info", "SCH", "-j"))["state"]["messages"] == 0


def test_pub_body_from_stdin(jl):
    assert doc(jl("pub", "orders.new", "-j", input="from stdin\n")) == {
        "stream": "ORDERS",
        "seq": 1,
    }
    assert (
        doc(jl("stream", "get", "ORDERS", "1", "-j"))["data"] == "ZnJvbSBzdGRpbgo="
    )  # "from stdin\n"


def test_pub_send_on_newline_publishes_each_line_of_stdin(jl):
    """natscli's --send-on newline: each line (its \\n or \\r\\n taken off) is a body, an
    empty line in between too, an empty last one not; --count per line; templates."""
    res = ok(jl("pub", "orders.new", "--send-on", "newline", "--force-stdin",
                input=b"l1\nl2\r\n\n#{{Count}}\xff\n"))
    assert res.stdout == "".join(f"Stored in Stream: ORDERS Sequence: {n}\n" for n in (1, 2, 3, 4))
    import base64

    got = [base64.b64decode(doc(jl("stream", "get", "ORDERS", str(n), "-j")).get("data", ""))
           for n in (1, 2, 3, 4)]
    assert got == [b"l1", b"l2", b"", b"#1\xff"]
    out = doc(jl("pub", "orders.new", "--send-on", "newline", "--count", "2", "-j",
                 input="a\nb"))
    assert [r["seq"] for r in out] == [5, 6, 7, 8]
    assert ok(jl("pub", "orders.new", "--send-on", "newline", "--core", input="x\n")
              ).stdout == 'Published 1 bytes to "orders.new"\n'
    # a line refused is said and the next ones go on (natscli's); exit 1, one JSON document
    ok(jl("stream", "add", "FULL", "--subjects", "full.>", "--max-msgs", "2", "--discard", "new",
          "--defaults"))
    res = jl("pub", "full.a", "--send-on", "newline", input="f1\nf2\nf3\n" + "x" * 1_048_577 +
             "\nf5\n")
    assert res.exit_code == 1
    assert res.stdout == ("Stored in Stream: FULL Sequence: 1\n"
                          "Stored in Stream: FULL Sequence: 2\n")
    assert res.stderr == (
        "Could not publish message: maximum messages exceeded (10077): max_msgs = 2 (discard "
        "new): the stream holds 2\n"
        "Could not publish message: line 4 of stdin is longer than 1,048,576 bytes (the largest "
        "payload, max_payload)\n"
        "Could not publish message: maximum messages exceeded (10077): max_msgs = 2 (discard "
        "new): the stream holds 2\n"
        "jetlink: error: 3 of 5 lines were not published (each said above)\n")
    res = jl("pub", "full.a", "--send-on", "newline", "-j", input="g1\n")
    assert res.exit_code == 1
    assert json.loads(res.stdout) == [{"line": 1, "error": {
        "code": 503, "err_code": 10077, "description": "maximum messages exceeded"},
        "stream": "FULL", "seq": 0}]
    for args in (["body"], ["--atomic"], ["--fast"]):
        res = jl("pub", "orders.new", "--send-on", "newline", *args, input="x\n")
        assert (res.exit_code, res.stderr) == (2, (
            "jetlink: error: --send-on newline: the bodies are stdin's lines, one publish (or "
            "--count) each: not with BODY, --atomic or --fast\n")), args
    res = jl("pub", "orders.new", "--send-on", "tab", input="x")
    assert (res.exit_code, res.stderr) == (
        2, "jetlink: error: invalid value for --send-on: 'tab' (one of eof, newline)\n")


def test_pub_many_prints_a_summary(jl):
    result = ok(jl("pub", "orders.new", "m{{Count}}", "--count", "25"))
    assert result.stdout == "Stored 25 messages in Stream: ORDERS Sequences: 1..25\n"
    assert ok(jl("pub", "orders.new", "q", "--count", "3", "--quiet")).stdout == ""


def test_a_binary_body_in_a_template_error_is_said_in_bytes(jl):
    # a binary body from stdin whose bytes look like an action: its bytes said as \xNN
    # (never Python's surrogate escapes), the body stored as it was
    import base64

    raw = b"x{{\xff\x89J}}y"
    result = ok(jl("pub", "orders.new", input=raw))
    assert result.stderr == ('Could not parse body template: function "\\xff\\x89J" not '
                             'defined\n')
    assert base64.b64decode(doc(jl("stream", "get", "ORDERS", "1", "-j"))["data"]) == raw


def test_pub_templates(jl):
    result = ok(jl("pub", "orders.new", "{{Nope}} x"))
    assert result.stderr == 'Could not parse body template: function "Nope" not defined\n'
    assert (
        doc(jl("stream", "get", "ORDERS", "1", "-j"))["data"] == "e3tOb3BlfX0geA=="
    )  # kept as given
    # a header's template that does not parse is an error, nothing published (natscli's
    # parseStringsToHeader), where a body's or subject's only warns
    bad = jl("pub", "orders.new", "x", "-H", "X:{{Nope}}")
    assert (bad.exit_code, bad.stderr) == (1, 'jetlink: error: failed to parse Header '
                                              'template for X: function "Nope" not defined\n')
    assert doc(jl("stream", "info", "ORDERS", "-j"))["state"]["messages"] == 1
    # --no-templates is the body's and the subject's: headers are expanded all the same
    # (natscli: "does not affect headers")
    ok(jl("pub", "orders.new", "{{Count}}", "--no-templates", "-H", "N:{{Count}}"))
    got = doc(jl("stream", "get", "ORDERS", "2", "-j"))
    assert got["data"] == "e3tDb3VudH19"  # {{Count}}
    assert base64.b64decode(got["hdrs"]) == b"NATS/1.0\r\nN: 1\r\n\r\n"
    ok(jl("pub", "orders.{{Count}}", "s", "--count", "2"))
    assert doc(jl("stream", "subjects", "ORDERS", "-j")) == {
        "orders.new": 2,
        "orders.1": 1,
        "orders.2": 1,
    }


def test_pub_on_a_mirrors_side_names_the_mirrors_and_their_origins(jl):
    """A publish where mirrors are (the disaster-recovery side): the error names them and
    their origins' places rather than pointing at --core (which would store it nowhere); a
    filtered mirror that does not take the subject is not named. Nothing is stored."""
    for c in ("west", "east"):
        ok(jl("cluster", "add", c))
    ok(jl("--cluster", "west", "stream", "add", "ORDERS", "--subjects", "orders.>",
          "--defaults"))
    ok(jl("--cluster", "east", "stream", "add", "ORDERS_EAST", "--mirror", "ORDERS@west",
          "--defaults"))
    before = data_dir_bytes(jl.data)
    r = jl("--cluster", "east", "pub", "orders.x", "hi")
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: no stream matches subject orders.x (the mirrors here take no "
        "publishes (ORDERS_EAST of ORDERS of west): if the subject is one of their origins', "
        "publish where that origin is; --core would store it nowhere)\n"))
    assert data_dir_bytes(jl.data) == before
    from jetlink.core.config.stream import StreamConfig
    from jetlink.core.dr.fence import mirror_hint

    filtered = StreamConfig.from_json({"name": "M", "mirror": {
        "name": "ORDERS", "filter_subject": "orders.eu.>"}})
    whole = StreamConfig.from_json({"name": "I", "mirror": {"name": "INV"}})
    assert mirror_hint([filtered], "orders.us.1") is None
    # a mirror whose filter takes the subject is the one named, before any without filters
    assert mirror_hint([whole, filtered], "orders.eu.1") == (
        "stream M here is a mirror of ORDERS, which takes no publishes: publish where ORDERS "
        "is; --core would store it nowhere")
    assert mirror_hint([whole, filtered], "orders.us.1").startswith(
        "the mirrors here take no publishes (I of INV)")
    # a KV mirror's origin captures $KV.<bucket>.> only; an origin here, its own subjects:
    # neither is named for a subject they never take
    kv = StreamConfig.from_json({"name": "KV_M", "mirror": {"name": "KV_ORIG"}})
    inv = StreamConfig.from_json({"name": "INV", "subjects": ["inv.>"]})
    assert mirror_hint([kv], "nothere.x") is None
    assert mirror_hint([kv], "$KV.ORIG.a").startswith(
        "the mirrors here take no publishes (KV_M of KV_ORIG)")
    assert mirror_hint([inv, whole], "nothere.x") is None


def test_pub_without_stream(jl):
    result = jl("pub", "nowhere.x", "lost")
    assert result.exit_code == 1
    assert result.stderr == (
        "jetlink: error: no stream matches subject nowhere.x "
        "(use --core for a core NATS publish, without a stream)\n"
    )
    as_json = jl("pub", "nowhere.x", "lost", "-j")
    assert as_json.exit_code == 1
    assert json.loads(as_json.stdout) == {
        "error": {
            "code": 503,  # a real server's no responders
            "description": "no stream matches subject nowhere.x "
            "(use --core for a core NATS publish, without a stream)"
        }
    }
    core = ok(jl("pub", "nowhere.x", "lost", "--core"))
    assert core.stdout == 'Published 4 bytes to "nowhere.x"\n'
    assert doc(jl("pub", "nowhere.x", "lost", "--core", "-j")) == {
        "subject": "nowhere.x",
        "bytes": 4,
    }
    # a core publish is stored when a stream captures the subject
    assert doc(jl("pub", "orders.core", "c", "--core", "--count", "2", "-j")) == [
        {"subject": "orders.core", "bytes": 1},
        {"subject": "orders.core", "bytes": 1},
    ]
    assert doc(jl("stream", "subjects", "ORDERS", "-j")) == {"orders.core": 2}


def test_pub_invalid_subject(jl):
    result = jl("pub", "orders.*", "x", "-j")
    assert result.exit_code == 1
    assert "error" in json.loads(result.stdout)


# -- sub: a follower in another process ------------------------------------------------------------


def _jetlink(data, *args, **popen):
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARS}
    return subprocess.Popen(
        [sys.executable, "-m", "jetlink.cli.main", "--data-dir", str(data), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        **popen,
    )


def test_sub_follows_messages_across_processes(jl):
    follower = _jetlink(jl.data, "sub", "orders.>", "--count", "2", "--json")
    try:
        assert follower.stderr.readline() == "Subscribing on orders.>\n"
        ok(jl("pub", "orders.new", "one", "-H", "A:1"))
        ok(jl("pub", "elsewhere", "ignored", "--core"))
        ok(jl("pub", "orders.paid", "two", "--core"))
        out, err = follower.communicate(timeout=30)
    finally:
        follower.kill()
    assert follower.returncode == 0, err
    lines = out.splitlines()
    assert len(lines) == 2  # JSON lines: one compact document per message
    first, second = (json.loads(line) for line in lines)
    assert (first["subject"], first["headers"], first["data"]) == (
        "orders.new",
        {"A": ["1"]},
        "b25l",
    )
    assert (second["subject"], second["data"]) == ("orders.paid", "dHdv")
    assert list(first) == ["subject", "time", "headers", "data"]


def _stored(jl):
    for subject, body in (("orders.a", "a1"), ("orders.b", "b1"), ("orders.a", "a2"),
                          ("orders.b", "b2"), ("orders.a", "a3")):
        ok(jl("pub", subject, body, "-q"))


@pytest.mark.parametrize(("args", "said", "bodies"), [
    # natscli's JetStream subscription: where it starts, -T stops at the end of what is stored
    (["orders.>", "--all"], "from the first message", ["a1", "b1", "a2", "b2", "a3"]),
    (["orders.>", "--stream", "ORDERS"], "from the first message",
     ["a1", "b1", "a2", "b2", "a3"]),
    (["orders.a", "--all"], "from the first message", ["a1", "a2", "a3"]),
    (["orders.>", "--last"], "from the last message", ["a3"]),
    (["orders.b", "--last"], "from the last message", ["b2"]),
    (["orders.>", "--last-per-subject"], "for the last message per subject", ["b2", "a3"]),
    (["orders.>", "--start-sequence", "4"], "starting at sequence 4", ["b2", "a3"]),
    (["orders.>", "--since", "1h"], "since 1h0m0s", ["a1", "b1", "a2", "b2", "a3"]),
    (["orders.>", "--since", "1s"], "since 1s", []),  # (the manual clock: an hour on)
    (["orders.>", "--new"], "for new messages", []),
])
def test_sub_reads_what_a_stream_stored_as_natscli(jl, args, said, bodies):
    _stored(jl)
    jl.clock.advance(3600 * 10**9) if "1s" in args else None
    res = ok(jl("sub", *args, "-T", "--raw"))
    assert res.stdout.split() == bodies
    assert res.stderr == f"Subscribing to stream ORDERS on {args[0]} {said}\n"
    lines = [json.loads(x) for x in ok(jl("sub", *args, "-T", "-j")).stdout.splitlines()]
    assert [base64.b64decode(d["data"]).decode() for d in lines] == bodies
    assert all(list(d) == ["subject", "seq", "time", "headers", "data"] for d in lines)


def test_sub_timestamps_as_natscli(jl, monkeypatch):
    """-t: Go's time.StampMicro of when a stored message was stored, in local time; -d: how
    long ago (Go's Duration text); both: natscli's refusal."""
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        _stored(jl)
        stored = jl.clock.now_ns()
        jl.clock.advance(1_500_000_000)
        res = ok(jl("sub", "orders.a", "--last", "-T", "-t"))
        day = time.strftime("%d", time.gmtime(stored // 10**9)).lstrip("0").rjust(2)
        when = time.strftime(f"%b {day} %H:%M:%S", time.gmtime(stored // 10**9))
        at = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(stored // 10**9))
        line = ("Received JetStream message: stream: ORDERS seq: 5 / pending: 0 / subject: "
                f"orders.a / time: {at}")
        assert res.stdout == f"[#1] @ {when}.{stored // 1000 % 10**6:06d} {line}\na3\n\n"
        res = ok(jl("sub", "orders.a", "--last", "-T", "-d"))
        assert res.stdout == f"[#1] @ 1.5s {line}\na3\n\n"
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    res = jl("sub", "orders.a", "-t", "-d")
    assert (res.exit_code, res.stderr) == (
        2, "jetlink: error: timestamp and delta-time flags are mutually exclusive\n")


def test_sub_dump_writes_natscli_s_documents(jl, tmp_path):
    """--dump DIR: DIR/<stream sequence>.json per message, nats.go's Msg as json.Marshal
    writes it (HTML characters escaped, Header null without headers, Data base64), 0600;
    --dump -: the documents on stdout, each ending in a NUL; --translate changes Data."""
    ok(jl("pub", "orders.a", "<a&b>", "-H", "Z:2", "-H", "A:1", "-q"))
    ok(jl("pub", "orders.b", "", "-q"))
    target = tmp_path / "dump" / "here"
    res = ok(jl("sub", "orders.>", "--all", "-T", "--dump", str(target)))
    assert res.stdout == ""
    assert sorted(p.name for p in target.iterdir()) == ["1.json", "2.json"]
    first = (target / "1.json").read_text()
    assert first == ('{"Subject":"orders.a","Reply":"","Header":{"A":["1"],"Z":["2"]},'
                     '"Data":"PGEmYj4=","Sub":null}')
    assert json.loads(first)["Subject"] == "orders.a"
    assert (target / "2.json").read_text() == (
        '{"Subject":"orders.b","Reply":"","Header":null,"Data":"","Sub":null}')
    assert (target / "1.json").stat().st_mode & 0o777 == 0o600
    assert target.stat().st_mode & 0o777 == 0o700
    res = ok(jl("sub", "orders.a", "--all", "-T", "--dump", "-", "--translate", "tr a-z A-Z"))
    assert res.stdout.split("\0") == [
        '{"Subject":"orders.a","Reply":"","Header":{"A":["1"],"Z":["2"]},'
        f'"Data":"{base64.b64encode(b"<A&B>").decode()}","Sub":null}}', ""]
    res = jl("sub", "orders.a", "--all", "-T", "--dump", "-", "-j")
    assert (res.exit_code, json.loads(res.stdout)) == (
        2, {"error": {"description": "--dump and --json: one output or the other"}})
    (tmp_path / "file").write_text("")
    res = jl("sub", "orders.a", "--all", "-T", "--dump", str(tmp_path / "file" / "x"))
    assert (res.exit_code, res.stderr) == (
        1, f"jetlink: error: --dump: cannot make the directory "
           f"'{tmp_path / 'file' / 'x'}': Not a directory\n")


def test_a_jetstream_subscription_prints_natscli_s_jetstream_line(jl):
    """natscli's printJetStreamMsg: the stream, the sequence, the messages still to come
    (num_pending: those stored after it on the subject), the subject and the stored time;
    the headers and body as a core message's."""
    _stored(jl)
    res = ok(jl("sub", "orders.a", "--all", "-T"))
    heads = [x for x in res.stdout.splitlines() if x.startswith("[#")]
    assert [h.split(" / time: ")[0] for h in heads] == [
        "[#1] Received JetStream message: stream: ORDERS seq: 1 / pending: 2 / subject: "
        "orders.a",
        "[#2] Received JetStream message: stream: ORDERS seq: 3 / pending: 1 / subject: "
        "orders.a",
        "[#3] Received JetStream message: stream: ORDERS seq: 5 / pending: 0 / subject: "
        "orders.a"]
    res = ok(jl("sub", "--stream", "ORDERS", "--start-sequence", "4", "-T", "--subjects-only"))
    assert [x.split(" / time: ")[0] for x in res.stdout.splitlines()] == [
        "[#1] Received JetStream message: stream: ORDERS seq: 4 / pending: 1 / subject: "
        "orders.b",
        "[#2] Received JetStream message: stream: ORDERS seq: 5 / pending: 0 / subject: "
        "orders.a"]


def test_a_dumped_core_message_as_nats_go_holds_it(tmp_path):
    """A header block with no header is an empty map ({}: nats.go decodes HMSG into a map),
    no block null; a push consumer's delivery (its $JS.ACK reply) is filed by its stream
    sequence, as natscli's printMsg names it."""
    from types import SimpleNamespace

    from jetlink.cli.app import App
    from jetlink.cli.sub_dump import Dump

    dump = Dump(App(), str(tmp_path / "d"), None)
    reply = "$JS.ACK.ORDERS.push.1.42.7.1700000000000000000.0"
    dump.write(1, SimpleNamespace(hdr=b"NATS/1.0\r\n\r\n"),
               {"subject": "q.c", "headers": {}, "data": "YWI=", "reply": reply}, False)
    dump.write(2, SimpleNamespace(hdr=None), {"subject": "q.d", "headers": {}, "data": ""},
               False)
    assert (tmp_path / "d" / "42.json").read_text() == (
        f'{{"Subject":"q.c","Reply":"{reply}","Header":{{}},"Data":"YWI=","Sub":null}}')
    assert (tmp_path / "d" / "2.json").read_text() == (
        '{"Subject":"q.d","Reply":"","Header":null,"Data":"","Sub":null}')


def test_sub_of_a_stream_follows_what_it_stores_next(jl):
    _stored(jl)
    follower = _jetlink(jl.data, "sub", "orders.a", "--last", "--count", "3", "--raw")
    try:
        assert follower.stderr.readline() == (
            "Subscribing to stream ORDERS on orders.a from the last message\n")
        ok(jl("pub", "orders.b", "b3"))
        ok(jl("pub", "orders.a", "a4"))
        ok(jl("pub", "orders.a", "a5"))
        out, err = follower.communicate(timeout=30)
    finally:
        follower.kill()
    assert follower.returncode == 0, err
    assert out.split() == ["a3", "a4", "a5"]


@pytest.mark.parametrize(("args", "message"), [
    (["orders.a", "-T"], "--terminate-at-end is only supported for JetStream subscriptions "
     "(--stream or a start flag: --all, --new, --last, --since, --start-sequence, "
     "--last-per-subject)"),
    (["orders.a", "orders.b", "--all"], "streams subscribe support only 1 subject"),
    (["orders.a", "--all", "--new"], "--all and --new: a JetStream subscription starts at one "
     "place: give one of them"),
    (["nowhere.x", "--all"], "no stream stores subject nowhere.x: give the stream with "
     "--stream"),
    (["orders.a", "--all", "--queue", "q"], "--queue: a JetStream subscription reads what the "
     "stream stored; a queue group shares core messages"),
])
def test_sub_of_a_stream_usage_errors(jl, args, message):
    res = jl("sub", *args)
    assert (res.exit_code, res.stderr) == (2, f"jetlink: error: {message}\n")


def test_sub_needs_a_subject_but_of_a_stream(jl):
    res = jl("sub")
    assert (res.exit_code, res.stderr) == (
        2, "jetlink: error: subject is required (or --stream STREAM: its messages)\n")
    _stored(jl)  # --stream without a subject: every message of the stream
    assert ok(jl("sub", "--stream", "ORDERS", "--all", "-T", "--raw")).stdout.split() == [
        "a1", "b1", "a2", "b2", "a3"]
    res = jl("sub", "orders.a", "--since", "5")  # (a duration's unit, as every flag's)
    assert res.exit_code == 2 and "--since: '5': missing unit, e.g. 5s" in res.stderr


def test_sub_follows_several_subjects_as_natscli(jl):
    """natscli's sub SUBJECT...: one subscription per subject given (twice: each message
    twice), the messages in the order they were published."""
    follower = _jetlink(jl.data, "sub", "a.x", "b.*", "a.x", "--count", "5", "--raw")
    try:
        assert follower.stderr.readline() == "Subscribing on a.x, b.*, a.x\n"
        for subject, body in (("a.x", "1"), ("b.y", "2"), ("a.x", "3")):
            ok(jl("pub", subject, body, "--core"))
        out, err = follower.communicate(timeout=30)
    finally:
        follower.kill()
    assert follower.returncode == 0, err
    assert out.split() == ["1", "1", "2", "3", "3"]  # published order, a.x twice


def test_sub_gives_the_messages_of_several_subscriptions_in_publication_order():
    """One message held per subscription, the oldest given first: a.1, a.2, b.1, a.3
    published in one poll's window come in that order, not interleaved by subject; a
    subject given twice has two subscriptions (natscli's: each message twice)."""
    from types import SimpleNamespace

    from jetlink.cli.sub import _next_of

    class Queue:
        def __init__(self, msgs):
            self.msgs = list(msgs)

        def next(self, _timeout):
            return self.msgs.pop(0) if self.msgs else None

    def m(name, ts):
        return SimpleNamespace(subject=name, ts=ts)

    nxt = _next_of([Queue([m("a.1", 1), m("a.2", 2), m("a.3", 4)]), Queue([m("b.1", 3)])])
    assert [nxt(0.1).subject for _ in range(4)] == ["a.1", "a.2", "b.1", "a.3"]
    assert nxt(0.1) is None


def test_sub_human_output_and_wait(jl):
    # (--count 0 is natscli's "no limit": the two messages below, then --wait ends it)
    follower = _jetlink(jl.data, "sub", "orders.*", "--wait", "1s", "--count", "0")
    try:
        assert follower.stderr.readline() == "Subscribing on orders.*\n"
        ok(jl("pub", "orders.new", "hello", "-H", "K:v"))
        ok(jl("pub", "orders.new", "", "--core"))
        out, err = follower.communicate(timeout=30)
    finally:
        follower.kill()
    assert follower.returncode == 0, err
    assert (
        out
        == '[#1] Received on "orders.new"\nK: v\n\nhello\n\n'
        '[#2] Received on "orders.new"\nnil body\n\n'
    )


def test_sub_ignores_subjects_and_counts_only_what_it_shows(jl):
    """natscli's --ignore-subject (-I): a message on a subject colliding with one is neither
    shown nor counted; --subjects-only prints the first line of each."""
    follower = _jetlink(jl.data, "sub", "orders.*", "-I", "orders.skip", "--count", "1",
                        "--subjects-only")
    try:
        assert follower.stderr.readline() == "Subscribing on orders.*\n"
        assert follower.stderr.readline() == "Ignored subjects: orders.skip\n"
        ok(jl("pub", "orders.skip", "hidden", "--core"))
        ok(jl("pub", "orders.new", "shown", "-H", "K:v", "--core"))
        out, err = follower.communicate(timeout=30)
    finally:
        follower.kill()
    assert (follower.returncode, out) == (0, '[#1] Received on "orders.new"\n'), err


def test_sub_headers_only_and_a_bad_ignored_subject(capsys, jl):
    from jetlink.cli.sub import render_message

    msg = {"subject": "orders.new", "data": "aGk=", "headers": {"K": ["v"]}}
    render_message(None, 1, msg, shown="headers")
    assert capsys.readouterr().out == '[#1] Received on "orders.new"\nK: v\n\n'
    r = jl("sub", "orders.*", "-I", "a..b")
    assert r.exit_code == 2 and r.stderr.startswith("jetlink: error: --ignore-subject: "), \
        r.stderr


def test_sub_wait_0_waits_for_ever_as_natscli(jl):
    """natscli starts the idle timer only for a positive --wait: 0 is no limit (it used to
    quit at once, having received nothing)."""
    follower = _jetlink(jl.data, "sub", "orders.*", "--wait", "0", "--count", "1", "--raw")
    try:
        assert follower.stderr.readline() == "Subscribing on orders.*\n"
        time.sleep(1.5)  # longer than one poll: a follower that quit has exited by now
        assert follower.poll() is None, "sub --wait 0 quit without a message"
        ok(jl("pub", "orders.new", "late", "--core"))
        out, err = follower.communicate(timeout=30)
    finally:
        follower.kill()
    assert (follower.returncode, out) == (0, "late\n"), err


def test_follow_with_no_idle_limit_keeps_polling():
    from jetlink.cli.common import follow

    def source(items):
        it = iter(items)
        return lambda _wait: next(it, None)

    for idle in (None, 0):  # three empty polls, then the item
        assert next(follow(source([None, None, None, "x"]), idle, 0.001)) == "x"
    assert list(follow(source([]), 1, 0.001)) == []  # 1 ns without an item: done


def test_sub_bad_arguments(jl):
    bad = jl("sub", "orders..x", "-j")
    assert bad.exit_code == 1
    assert json.loads(bad.stdout) == {
        "error": {"code": 400, "description": "nats: invalid subject"}
    }
    wait = jl("sub", "x", "--wait", "soon")
    assert wait.exit_code == 2 and "invalid value for --wait: 'soon': " in wait.stderr


# -- bench pub --------------------------------------------------------------------------------


def test_bench_pub(monkeypatch):
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)
    result = ok(
        runner.invoke(
            app, ["bench", "pub", "--count", "200", "--size", "16", "-j"], prog_name="jetlink"
        )
    )
    bench = json.loads(result.stdout)
    assert (bench["messages"], bench["bytes"], bench["runs"]) == (200, 3200, 3)
    assert {"seconds", "msgs_per_sec", "mb_per_sec", "raw_rows_per_sec", "ratio"} <= set(bench)
    assert len(bench["ratios"]) == 3 and bench["ratio"] == sorted(bench["ratios"])[1]
    human = ok(runner.invoke(app, ["bench", "pub", "--count", "100"], prog_name="jetlink"))
    assert human.stdout.startswith("messages:")
    assert "msgs_per_sec:" in human.stdout
    spread = json.loads(ok(runner.invoke(
        app, ["bench", "pub", "--count", "300", "--subjects", "7", "--batch", "40", "-j"],
        prog_name="jetlink")).stdout)
    assert (spread["subjects"], spread["batch"], spread["stream_messages"]) == (7, 40, 300)
    bad = runner.invoke(app, ["bench", "pub", "--subjects", "0"], prog_name="jetlink")
    assert bad.exit_code == 2 and "--subjects" in bad.stderr


def test_bench_pub_alternates_the_side_that_goes_first_and_checks_counts(monkeypatch):
    """Run by run the side that goes first alternates (engine, raw, engine...); a run whose
    stream did not take every message fails rather than print a ratio of unequal work."""
    from jetlink.core.bench import engine
    from jetlink.core.jetstream import JetStream

    firsts, real = [], engine._pub_run

    def recorded(*args, raw_first, **kwargs):
        firsts.append(raw_first)
        return real(*args, raw_first=raw_first, **kwargs)

    monkeypatch.setattr(engine, "_pub_run", recorded)
    engine.bench_pub(50, 8, batch=10, subjects=5, runs=3)
    assert firsts == [False, True, False]
    monkeypatch.setattr(JetStream, "publish_batch", lambda self, msgs: [])  # stores nothing
    with pytest.raises(AssertionError, match="not 50 each"):
        engine.bench_pub(50, 8, batch=10, subjects=5, runs=1)


def _ignoring_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("started", ["foreground", "background"])
def test_sub_ctrl_c_exits_130_and_unsubscribes(jl, started):
    """SIGINT ends a following command with 130, also when it was started as a background
    job of a shell without job control, which starts it with SIGINT ignored (natscli, a Go
    program, listens to SIGINT all the same: cli/main.py run)."""
    import signal
    import sqlite3

    popen = {"preexec_fn": _ignoring_sigint} if started == "background" else {}
    follower = _jetlink(jl.data, "sub", "orders.>", **popen)
    try:
        assert follower.stderr.readline() == "Subscribing on orders.>\n"
        db = sqlite3.connect(jl.data / "local.db")
        assert db.execute("SELECT count(*) FROM core_subs").fetchone() == (1,)
        follower.send_signal(signal.SIGINT)
        follower.communicate(timeout=WAIT_TIMEOUT)
    finally:
        follower.kill()
    assert follower.returncode == 130
    assert db.execute("SELECT count(*) FROM core_subs").fetchone() == (0,)


def test_topic_consume_follow_ctrl_c_says_the_total_and_exits_130(jl):
    """kafka-console-consumer's shutdown hook prints the total on Ctrl-C too."""
    import signal

    ok(jl("cluster", "add", "k", "--kind", "kafka"))
    # (kept for ever: the records carry the test clock's time, the follower runs on the
    # real one, and a 7-day retention would remove them there)
    ok(jl("--cluster", "k", "topic", "create", "t", "-c", "retention.ms=-1"))
    ok(jl("--cluster", "k", "topic", "produce", "t", "r{{Count}}", "--count", "2"))
    follower = _jetlink(jl.data, "--cluster", "k", "topic", "consume", "t", "--group", "g",
                        "--from-beginning", "--follow")
    try:
        assert follower.stdout.readline() == "r1\n"
        assert follower.stdout.readline() == "r2\n"
        follower.send_signal(signal.SIGINT)
        _out, err = follower.communicate(timeout=WAIT_TIMEOUT)
    finally:
        follower.kill()
    assert (follower.returncode, err) == (130, "Processed a total of 2 messages\n")
    described = ok(jl("--cluster", "k", "group", "describe", "g")).stdout
    assert " 2 " in described  # its position committed on the way out


def test_pub_count_stops_at_the_first_refused_message(jl):
    """--count N publishes in chunks of PUBLISH_CHUNK per transaction; a refusal still stops
    the command at that message, what came before it stored (2 chunks here)."""
    ok(jl("stream", "add", "CAPPED", "--subjects", "capped.>", "--max-msgs", "1500",
          "--discard", "new", "--defaults"))
    bad = jl("pub", "capped.x", "m{{Count}}", "--count", "3000", "-j")
    assert bad.exit_code == 1
    assert json.loads(bad.stdout)["error"]["err_code"] == 10077
    info = doc(jl("stream", "info", "CAPPED", "-j"))
    assert info["state"]["messages"] == 1500 and info["state"]["last_seq"] == 1500
    assert doc(jl("stream", "get", "CAPPED", "1500", "-j"))["data"] == "bTE1MDA="  # m1500


def test_pub_count_progress_bar_only_on_a_terminal(monkeypatch):
    """pub --count: a progress bar on stderr when it is a terminal (not with --json, not for
    the per-message lines); elsewhere nothing is drawn."""
    import io

    from jetlink.cli import output
    from jetlink.cli.app import App

    class Tty(io.StringIO):
        def isatty(self):
            return True

    pipe = io.StringIO()
    monkeypatch.setattr("sys.stderr", pipe)
    with output.progress(App(), "Publishing", 10) as bar:
        bar.advance(10)
    assert pipe.getvalue() == ""

    tty = Tty()
    monkeypatch.setattr("sys.stderr", tty)
    with output.progress(App(), "Publishing", 10) as bar:
        bar.advance(10)
    assert "Publishing" in tty.getvalue()

    tty = Tty()
    monkeypatch.setattr("sys.stderr", tty)
    app = App()
    app.json = True
    with output.progress(app, "Publishing", 10) as bar:
        bar.advance(10)
    with output.progress(App(), "Publishing", 10, enabled=False) as bar:
        bar.advance(10)
    assert tty.getvalue() == ""


def test_a_ttl_the_stream_does_not_take_names_it_and_the_way(jl):
    r = jl("pub", "orders.a", "hi", "-H", "Nats-TTL:5s")
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: per-message TTL is disabled (10166): stream ORDERS takes no Nats-TTL: "
        "jetlink stream edit ORDERS --allow-msg-ttl allows it\n"))


@pytest.mark.parametrize("queue", ["", "a b", "\tq"])
def test_a_bad_queue_group_name_is_a_usage_error(jl, queue):
    r = jl("sub", "x", "--queue", queue)
    assert (r.exit_code, r.stderr) == (2, f"jetlink: error: invalid value for --queue: "
                                          f"{queue!r}: a queue group name is not empty and "
                                          "holds no blank\n")


def test_a_bad_subscription_subject_is_refused_before_connecting(jl):
    """The client's own refusal, with its rule, on either backend: a live server is not
    even dialled (nothing listens on port 1)."""
    for target in ([], ["-s", "nats://127.0.0.1:1"]):
        r = jl(*target, "sub", "orders..>", "--count", "1")
        assert (r.exit_code, r.stderr) == (1, (
            "jetlink: error: nats: invalid subject: subject 'orders..>' is not valid: tokens "
            "separated by '.', none empty, no spaces or tabs, '>' only as the last token\n"))


def test_replicate_follow_stopped_by_sigterm_says_what_it_did(jl):
    """A service manager's stop (SIGTERM) ends `replicate --follow` as Ctrl-C does: the
    summary on stderr, then 128 + 15."""
    import signal

    follower = _jetlink(jl.data, "replicate", "--follow", "--interval", "200ms")
    try:
        assert follower.stderr.readline() == "Replicating every 200ms; Ctrl-C to stop\n"
        follower.send_signal(signal.SIGTERM)
        _out, err = follower.communicate(timeout=WAIT_TIMEOUT)
    finally:
        if follower.poll() is None:
            follower.kill()
    assert follower.returncode == 128 + signal.SIGTERM
    assert re.fullmatch(r"Stopped after \d+ steps?: 0 messages copied\n", err), err


def test_replicate_follow_interrupted_inside_a_step_counts_what_it_committed(jl):
    """Ctrl-C while a step copies into one target after another (each target its own
    transactions): the targets done before the stop keep their messages, and the summary
    and the JSON lines count every one of them, the interrupted step's too."""
    import signal

    from helpers import wait_until

    ok(jl("stream", "add", "BIG", "--subjects", "big.>", "--defaults"))
    ok(jl("cluster", "add", "west"))
    mirrors = [f"M{i}" for i in range(10)]
    for m in mirrors:
        ok(jl("--cluster", "west", "stream", "add", m, "--mirror", "BIG@local", "--defaults"))
    ok(jl("cluster", "down", "west"))
    ok(jl("pub", "big.x", "m{{Count}}", "--count", "30000"))
    ok(jl("cluster", "up", "west"))

    def stored() -> dict[str, int]:
        return {m: doc(jl("--cluster", "west", "stream", "info", m, "-j"))["state"]["messages"]
                for m in mirrors}

    before = stored()
    follower = _jetlink(jl.data, "replicate", "--follow", "-j")
    try:
        assert follower.stderr.readline() == "Replicating every 1s; Ctrl-C to stop\n"
        first = mirrors[0]
        wait_until(lambda: stored()[first] > before[first],
                   message=lambda: f"the first target's first transaction ({stored()})")
        follower.send_signal(signal.SIGINT)
        out, err = follower.communicate(timeout=WAIT_TIMEOUT)
    finally:
        if follower.poll() is None:
            follower.kill()
    assert follower.returncode == 130, err
    copied = sum(stored().values()) - sum(before.values())
    assert sum(json.loads(line)["copied"] for line in out.splitlines()) == copied, out
    assert re.fullmatch(rf"Stopped after \d+ steps?: {copied:,} messages copied\n", err), \
        (err, copied)


def test_pub_takes_natscli_jetstream_flag_and_sleeps_between_publishes(jl, monkeypatch):
    """natscli's -J (jetlink's default publish) and --sleep (a pause between the publishes
    of --count, one at a time); their conflicts are usage errors, nothing published."""
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.*", "--defaults"))
    slept: list[float] = []
    monkeypatch.setattr("time.sleep", slept.append)
    r = ok(jl("pub", "-J", "orders.new", "m{{Count}}", "--count", "3", "--sleep", "250ms"))
    assert r.stdout.splitlines() == [f"Stored in Stream: ORDERS Sequence: {n}" for n in (1, 2, 3)]
    assert slept == [0.25, 0.25]
    ok(jl("pub", "orders.new", "c", "--core", "--count", "2", "--sleep", "1s"))
    assert slept[2:] == [1.0]
    for args, says in ((["-J", "--core"], "--jetstream and --core: a publish is one or the "
                        "other"),
                       (["--sleep", "1s", "--atomic"], "--sleep: the publishes of a batch go "
                        "together, not with --atomic or --fast")):
        r = jl("pub", "orders.new", "x", *args)
        assert (r.exit_code, r.stderr) == (2, f"jetlink: error: {says}\n"), args
    assert doc(jl("stream", "info", "ORDERS", "-j"))["state"]["messages"] == 5


def test_an_interrupted_count_says_what_was_stored_and_json_prints_it(jl, monkeypatch):
    """Ctrl-C in the middle of --count: exit 130; stderr says what the server acknowledged;
    with --json stdout still has one document, the acks received."""
    import jetlink.cli.pub as pub

    real, calls = pub._publish, []

    def second_interrupted(js, msgs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(js, msgs)

    monkeypatch.setattr(pub, "_publish", second_interrupted)
    r = jl("pub", "orders.x", "m", "--count", "2500", "-j")
    assert r.exit_code == 130
    acks = json.loads(r.stdout)
    assert len(acks) == pub.PUBLISH_CHUNK and acks[-1]["seq"] == pub.PUBLISH_CHUNK
    assert r.stderr == (
        "jetlink: interrupted: 1,000 of 2,500 messages were stored (acknowledged; sequences "
        "1..1,000); 1,000 more were sent without an acknowledgement: they may or may not be "
        "stored\n")


def test_an_interrupt_inside_the_engines_transaction_says_the_chunk_was_not_stored(
        jl, monkeypatch):
    """On the embedded engine a chunk is one transaction: Ctrl-C inside it rolls it back,
    so the chunk being stored is said not stored (not "may or may not be"), and it is not."""
    from jetlink.core.jetstream import JetStream

    real, calls = JetStream._publish_answer, []

    def interrupted_mid_chunk(self, txn, subject, hdr, data):
        calls.append(1)
        if len(calls) == 1500:  # the second chunk's 500th message, inside its transaction
            raise KeyboardInterrupt
        return real(self, txn, subject, hdr, data)

    monkeypatch.setattr(JetStream, "_publish_answer", interrupted_mid_chunk)
    r = jl("pub", "orders.x", "m", "--count", "2500")
    assert r.exit_code == 130
    assert r.stderr == (
        "jetlink: interrupted: 1,000 of 2,500 messages were stored (acknowledged; sequences "
        "1..1,000); the 1,000 being stored when it stopped were not stored (their transaction "
        "was rolled back)\n")
    monkeypatch.undo()
    assert doc(jl("stream", "info", "ORDERS", "-j"))["state"]["last_seq"] == 1000


def test_a_count_interleaved_with_another_publisher_says_its_span_is_shared(jl,
                                                                           monkeypatch):
    """Another publisher storing between the chunks: the summary's sequences are the first
    and last of this command's, said so (not all between are its own)."""
    import jetlink.cli.pub as pub

    real = pub._publish

    def interleaved(js, msgs):
        js.publish("orders.other", b"x")
        return real(js, msgs)

    monkeypatch.setattr(pub, "_publish", interleaved)
    r = ok(jl("pub", "orders.x", "m", "--count", "2500"))
    assert r.stdout == ("Stored 2,500 messages in Stream: ORDERS Sequences: 2..2,503 (first "
                        "and last: other publishes were stored between them)\n")
    monkeypatch.undo()
    r = ok(jl("pub", "orders.x", "m", "--count", "2500"))
    assert r.stdout == "Stored 2,500 messages in Stream: ORDERS Sequences: 2,504..5,003\n"


def test_core_publishes_of_a_count_end_with_their_summary(jl):
    r = ok(jl("pub", "--core", "orders.c", "x", "--count", "25"))
    assert r.stdout == "Published 25 messages\n"


def test_a_refused_publish_is_the_server_s_pub_ack_document(jl):
    """The server answers a refused publish with its PubAck around the error (the stream
    that refused it, seq 0: stream.go processJetStreamMsg): --json prints that document."""
    ok(jl("stream", "add", "ACKED", "--subjects", "acked.>", "--defaults"))
    res = jl("pub", "acked.a", "x", "-H", "Nats-Expected-Last-Sequence:5", "-j")
    assert res.exit_code == 1
    assert json.loads(res.stdout) == {
        "error": {"code": 400, "err_code": 10071, "description": "wrong last sequence: 0"},
        "stream": "ACKED", "seq": 0}
