"""Integers a user types, past any range: refused as any out-of-range value is (one line,
the command's usual exit status and code), never a traceback. Python's int() refuses text of
more than 4,300 digits with a ValueError, and a value past 64 bits overflows SQLite; every
such input goes through core/numbers.py (``parse_int``, and the server's own wrapping
``parseInt64`` for publish headers).

Each case runs with a 29-digit value (past 64 bits, which was always refused) and a
5,000-digit one: the same exit status, one line, and the value clipped in the message.
The REST side is in tests/test_rest_server.py (``test_*_past_any_range_*``).
"""

from __future__ import annotations

import json

import pytest
from helpers import ok

from jetlink.core.numbers import (
    INT64_MAX,
    UINT64_MAX,
    IntTextError,
    go_parse_int64,
    go_parse_uint64,
    parse_int,
)

BIG = "9" * 5000
WIDE = "9" * 29
MAX = "2562047h47m16.854775807s (about 292 years)"


def shown(text: str) -> str:
    """core/errors.py clip: a value over 100 characters as its first 40 and its length."""
    return text if len(text) <= 100 else f"{text[:40]}... ({len(text):,} characters)"


# (arguments with {n} for the number, exit status, the error line with {v} for the whole
# offending text as the message quotes it, {n} for the number alone)
CASES = [
    (["stream", "add", "X", "--subjects", "x", "--max-bytes", "{n}", "--defaults"], 2,
     "invalid value for --max-bytes: '{v}': maximum is 9,223,372,036,854,775,807"),
    (["stream", "add", "X", "--subjects", "x", "--max-msg-size", "{n}K", "--defaults"], 2,
     "invalid value for --max-msg-size: '{v}': maximum is 2,147,483,647"),
    (["stream", "add", "X", "--subjects", "x", "--max-age", "{n}s", "--defaults"], 2,
     f"invalid value for --max-age: '{{v}}': more than the maximum {MAX}"),
    (["stream", "add", "X", "--subjects", "x", "--max-age", "{n}d", "--defaults"], 2,
     f"invalid value for --max-age: '{{v}}': more than the maximum {MAX}"),
    (["stream", "add", "X", "--subjects", "x", "--dupe-window", "{n}ms", "--defaults"], 2,
     f"invalid value for --dupe-window: '{{v}}': more than the maximum "
     f"{MAX}"),
    (["stream", "view", "S", "--since", "{n}s"], 2,
     f"invalid value for --since: '{{v}}': more than the maximum {MAX}"),
    (["consumer", "add", "S", "C", "--deliver", "{n}", "--defaults"], 2,
     "invalid value for --deliver: '{v}': a stream sequence is at most "
     "18,446,744,073,709,551,615"),
    (["consumer", "add", "S", "C", "--wait", "{n}s", "--defaults"], 2,
     f"invalid value for --wait: '{{v}}': more than the maximum {MAX}"),
    (["kv", "add", "K", "--ttl", "{n}s"], 2,
     f"invalid value for --ttl: '{{v}}': more than the maximum {MAX}"),
    (["--cluster", "keast", "links", "create", "x", "--source-cluster", "kwest", "-c",
      "consumer.offset.sync.ms={n}"], 1,
     "Invalid value {v} for configuration consumer.offset.sync.ms: Not a number of type INT "
     "(INVALID_CONFIG 40)"),
    (["--cluster", "kwest", "topic", "create", "t", "--config", "retention.ms={n}"], 1,
     "Invalid value {v} for configuration retention.ms: Not a number of type LONG "
     "(INVALID_CONFIG 40)"),
    # publish headers: read as nats-server reads them (parseInt64 wraps around in int64)
    (["pub", "s.a", "x", "-H", "Nats-Expected-Last-Sequence:{n}"], 1,
     "wrong last sequence: 0 (10071): the message's Nats-Expected-Last-Sequence: {n}"),
    (["pub", "s.a", "x", "-H", "Nats-Expected-Last-Subject-Sequence:{n}"], 1,
     "wrong last sequence: 0 (10071): the message's Nats-Expected-Last-Subject-Sequence: {n}"),
    (["pub", "s.a", "x", "-H", "Nats-TTL:{n}s"], 1, "invalid per-message TTL (10165): the "
     "message's Nats-TTL: {v}"),
    (["pub", "s.a", "x", "-H", "Nats-Batch-Id:b", "-H", "Nats-Batch-Sequence:{n}"], 1,
     "atomic publish is disabled (10174)"),
]


def _quoted(args: list[str], n: str) -> str:
    """The text the message quotes: the argument holding the number (a -c value: the
    number alone, as Kafka's text quotes the value; a Nats-TTL header: its value)."""
    arg = next(a for a in args if "{n}" in a).replace("{n}", n)
    if arg.startswith("Nats-TTL:"):
        return arg.split(":", 1)[1]
    return arg.split("=", 1)[1] if "=" in arg else arg


@pytest.fixture
def jl(jl):
    ok(jl("stream", "add", "S", "--subjects", "s.>", "--defaults"))
    ok(jl("cluster", "add", "kwest", "--kind", "kafka"))
    ok(jl("cluster", "add", "keast", "--kind", "kafka"))
    return jl


@pytest.mark.parametrize("n", [WIDE, BIG], ids=["29-digits", "5000-digits"])
@pytest.mark.parametrize(("args", "status", "line"), CASES,
                         ids=[" ".join(c[0])[:60] for c in CASES])
def test_integer_past_any_range_is_refused_in_one_line(jl, args, status, line, n):
    res = jl(*[a.replace("{n}", n) for a in args])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    message = line.replace("{v}", shown(_quoted(args, n))).replace("{n}", shown(n))
    if "more than the maximum" in line or "--max-bytes" in line or "--max-msg-size" in line:
        # a duration or size flag is refused while the command line is parsed (cli/options.py
        # DurationType, SizeType): click's usage error, the same message, exit 2
        assert (res.exit_code, res.stdout) == (status, ""), res.stderr
        assert f"Error: {message}\n" in res.stderr
        assert "Traceback" not in res.stderr
        return
    want = "jetlink: error: " + message + "\n"
    assert (res.exit_code, res.stdout, res.stderr) == (status, "", want)


def test_stream_view_id_past_the_store_finds_nothing(jl):
    ok(jl("pub", "s.a", "x"))
    for seq in (str(2**40), str(INT64_MAX), str(UINT64_MAX)):
        res = ok(jl("stream", "view", "S", "--id", seq, "-j"))
        assert res.stdout.split() == ["[]"], (seq, res.stdout)
    # past uint64 (a stream sequence's range): refused before anything is asked, exit 2
    res = jl("stream", "view", "S", "--id", WIDE, "-j")
    assert res.exit_code == 2 and "is not in the range" in res.stdout + res.stderr
    assert len(json.loads(ok(jl("stream", "view", "S", "--id", "1", "-j")).stdout)) == 1


def test_consumer_start_sequence_past_the_store_waits(jl):
    ok(jl("pub", "s.a", "x"))
    ok(jl("consumer", "add", "S", "C", "--pull", "--deliver", str(UINT64_MAX), "--defaults"))
    res = ok(jl("consumer", "next", "S", "C", "-j"))
    assert json.loads(res.stdout) == []  # nothing at or after that sequence


@pytest.mark.parametrize(("freq", "kept"), [(BIG, False), ("-" + BIG, False),
                                            ("0" * 5000 + "5", True)],
                         ids=["5000-digits", "minus-5000-digits", "leading-zeros"])
def test_consumer_sample_frequency_past_any_range(jl, tmp_path, freq, kept):
    """The server's strconv.Atoi of sample_freq: out of range (10095), whatever its length;
    leading zeros do not count."""
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"durable_name": "C", "ack_policy": "explicit",
                                "sample_freq": freq}))
    res = jl("consumer", "add", "S", "--config", str(path), "-j")
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    if kept:
        assert json.loads(ok(res).stdout)["config"]["sample_freq"] == freq
        return
    assert res.exit_code == 1
    assert json.loads(res.stdout) == {"error": {
        "code": 400, "err_code": 10095, "description":
        "failed to parse consumer sampling configuration: strconv.Atoi: parsing "
        f'"{freq}": value out of range'}}


@pytest.mark.parametrize("suffix", ["toml", "json"])
def test_topology_file_number_past_any_range(jl, tmp_path, suffix):
    path = tmp_path / f"t.{suffix}"
    if suffix == "toml":
        path.write_text(f'version = 1\n[clusters.c.streams.S]\nsubjects = ["s"]\n'
                        f"max_msgs = {BIG}\n")
    else:
        path.write_text('{"version": 1, "clusters": {"c": {"streams": {"S": '
                        f'{{"subjects": ["s"], "max_msgs": {BIG}}}}}}}}}}}')
    res = jl("validate", str(path))
    assert res.exit_code == 3, (res.stdout, res.stderr)
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert (f"invalid {suffix.upper()}: a number of 5,000 digits (more than 4,300, past any "
            "value a field takes)") in res.stdout + res.stderr


# -- the core functions --------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "lo", "hi", "expected"), [
    ("0", 0, 10, 0),
    ("-5", -10, 10, -5),
    ("+7", 0, 10, 7),
    ("0" * 5000 + "5", 0, 10, 5),  # leading zeros: no digit limit either
    (str(INT64_MAX), None, None, INT64_MAX),
    (str(-(2**63)), None, None, -(2**63)),
    (str(INT64_MAX + 1), None, None, "range"),
    (BIG, None, None, "range"),
    ("-" + BIG, None, None, "range"),
    ("11", 0, 10, "range"),
    ("", None, None, "syntax"),
    (" 5", None, None, "syntax"),  # whitespace is the caller's to trim
    ("1_000", None, None, "syntax"),
    ("٣", None, None, "syntax"),  # a non-ASCII digit
    ("1e3", None, None, "syntax"),
])
def test_parse_int(text, lo, hi, expected):
    bounds = {} if lo is None else {"lo": lo, "hi": hi}
    if isinstance(expected, int):
        assert parse_int(text, **bounds) == expected
    else:
        with pytest.raises(IntTextError) as err:
            parse_int(text, **bounds)
        assert err.value.reason == expected
        assert len(str(err.value)) < 200


@pytest.mark.parametrize(("text", "expected"), [
    ("", -1), ("12", 12), ("-1", -1), ("1a", -1),
    (str(INT64_MAX), INT64_MAX),
    (str(INT64_MAX + 1), -(2**63)),  # Go's int64 arithmetic wraps
    (str(2**64 + 3), 3),
    (WIDE, (int(WIDE) + 2**63) % 2**64 - 2**63),
    (BIG, None),
])
def test_go_parse_int64(text, expected):
    if expected is None:  # compare with the wrap computed in Python with the limit lifted
        import sys

        old = sys.get_int_max_str_digits()
        sys.set_int_max_str_digits(0)
        try:
            expected = (int(text) + 2**63) % 2**64 - 2**63
        finally:
            sys.set_int_max_str_digits(old)
    assert go_parse_int64(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("", None), ("0", 0), (str(UINT64_MAX), UINT64_MAX), (str(UINT64_MAX + 1), None),
    (BIG, None), ("0" * 5000 + "1", 1), ("+1", None),
])
def test_go_parse_uint64(text, expected):
    assert go_parse_uint64(text) == expected
