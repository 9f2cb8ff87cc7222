"""``jetlink server check stream|consumer|kv`` on the embedded engine (natscli's ``nats server
check``): exact Nagios lines and exit codes, thresholds from flags and from metadata, and
every format (the Nagios line against its grammar, the Prometheus text through
prometheus_client's parser, the JSON document field by field, the text tables).

The engine runs with a manual clock (cli/common.py ``make_clock``) so "seconds since" values
are fixed.
"""

from __future__ import annotations

import json
import re
import stat

import pytest
from helpers import ok
from prometheus_client.parser import text_string_to_metric_families

from jetlink.core.monitor import PerfDataItem, Result, render
from jetlink.core.monitor.render import go_g, go_json_number, perf_item
from jetlink.core.monitor.thresholds import StreamThresholds, ThresholdError

SECOND = 1_000_000_000
BIG = "y" * 50  # larger than the mirror's max_msg_size: the mirror stalls on it

# Nagios plugin output: STATUS, the check's name and messages, then perf data after " | ":
# label=value[UOM][;warn[;crit]] separated by spaces.
NUM = r"-?\d+(?:\.\d+)?"
PERF = rf"(?:'[^']+'|[^\s=']+)={NUM}(?:s|B)?(?:;(?:{NUM})?)?(?:;{NUM})?"
NAGIOS = re.compile(rf"^(OK|WARNING|CRITICAL|UNKNOWN) (\S+)((?: (?:Crit|Warn|OK):[^|]*?)*)"
                    rf"(?: \| ({PERF}(?: {PERF})*))?$")


@pytest.fixture
def jl(jl, cli_clock, utc):
    jl.clock = cli_clock
    return jl


def check(jl, *args):
    return jl("server", "check", *args)


def nagios(res):
    """The Nagios line of a run, checked against the grammar: (status, perf items)."""
    line = res.stdout
    assert line.endswith("\n") and line.count("\n") == 1, line
    m = NAGIOS.match(line.rstrip("\n"))
    assert m, line
    return m.group(1), (m.group(4) or "").split()


def lagging_mirror(jl):
    """ORIG holds 5 messages; its mirror MIR stored the first and stalls on the second (too
    large for it): lag 2 (the figure a nats-server reports for it too)."""
    ok(jl("stream", "add", "ORIG", "--subjects", "orig.>", "--defaults"))
    ok(jl("stream", "add", "MIR", "--mirror", "ORIG", "--max-msg-size", "10", "--defaults"))
    ok(jl("pub", "orig.a", "small"))
    ok(jl("pub", "orig.b", BIG))
    for _ in range(3):
        ok(jl("pub", "orig.a", "x"))
    jl.clock.advance(5 * SECOND)


# -- stream ---------------------------------------------------------------------------------------

def test_mirror_lag_critical(jl):
    lagging_mirror(jl)
    res = check(jl, "stream", "--stream", "MIR", "--lag-critical", "2")
    assert res.stdout == (
        "CRITICAL MIR Crit:Mirror Lag 2 OK:0 sources OK:0 sources current OK:0 sources active"
        " | sources=0 sources_lagged=0 sources_inactive=0 lag=2;;2 active=5.0000s\n")
    assert res.exit_code == 2
    assert nagios(res)[0] == "CRITICAL"


@pytest.mark.parametrize(("flags", "status", "code", "messages"), [
    (("--lag-critical", "3"), "OK", 0, "OK:0 sources OK:0 sources current OK:0 sources active "
     "OK:Mirror ORIG"),
    (("--seen-critical", "5s"), "CRITICAL", 2, "Crit:Mirror Seen 5s OK:0 sources "
     "OK:0 sources current OK:0 sources active"),
    (("--seen-critical", "1m"), "OK", 0, "OK:0 sources OK:0 sources current "
     "OK:0 sources active OK:Mirror ORIG"),
    (("--lag-critical", "1", "--seen-critical", "1s"), "CRITICAL", 2,
     "Crit:Mirror Lag 2 Crit:Mirror Seen 5s OK:0 sources OK:0 sources current "
     "OK:0 sources active"),
    (("--min-sources", "1"), "CRITICAL", 2, "Crit:0 sources"),
    # natscli: that many messages or fewer
    (("--msgs-warn", "1"), "WARNING", 1, "Warn:1 messages OK:0 sources"),
    (("--msgs-critical", "1", "--msgs-warn", "5"), "CRITICAL", 2, "Crit:1 messages OK:0 sources"),
    (("--subjects-warn", "1", "--subjects-critical", "3"), "WARNING", 1,
     "Warn:1 subjects OK:0 sources"),
    (("--subjects-warn", "2", "--subjects-critical", "3"), "OK", 0,
     "OK:1 subjects OK:0 sources"),
    # inverted: critical below warn means "this many or fewer"
    (("--subjects-warn", "3", "--subjects-critical", "1"), "CRITICAL", 2,
     "Crit:1 subjects OK:0 sources"),
    (("--peer-expect", "3"), "CRITICAL", 2, "Crit:Stream is not clustered OK:0 sources"),
])
def test_stream_thresholds(jl, flags, status, code, messages):
    lagging_mirror(jl)
    res = check(jl, "stream", "--stream", "MIR", *flags)
    assert res.exit_code == code, res.stdout
    got_status, _ = nagios(res)
    assert got_status == status
    assert res.stdout.split(" | ")[0].rstrip("\n") == f"{status} MIR {messages}"


def test_sources_lag_and_counts(jl):
    ok(jl("stream", "add", "A", "--subjects", "a.>", "--defaults"))
    ok(jl("stream", "add", "B", "--subjects", "b.>", "--defaults"))
    ok(jl("stream", "add", "AGG", "--source", "A", "--source", "B", "--defaults"))
    ok(jl("pub", "a.1", "x"))
    res = check(jl, "stream", "--stream", "AGG", "--lag-critical", "1", "--max-sources", "1")
    assert res.exit_code == 2
    assert res.stdout == (
        "CRITICAL AGG Crit:2 sources OK:2 sources current OK:2 sources active"
        " | sources=2;;1 sources_lagged=0 sources_inactive=0\n")
    res = check(jl, "stream", "--stream", "AGG", "--min-sources", "2", "--max-sources", "2")
    assert (res.exit_code, res.stdout) == (0, "OK AGG OK:2 sources | sources=2;2;2\n")


@pytest.mark.parametrize(("args", "line"), [
    (["stream", "--stream", "a.b"], 'CRITICAL a.b Crit:could not load info: "a.b" is not a '
                                    "valid stream name"),
    (["stream", "--stream", "*"], 'CRITICAL * Crit:could not load info: "*" is not a valid '
                                  "stream name"),
    (["stream", "--stream", "bad name"], 'CRITICAL bad name Crit:could not load info: "bad '
                                         'name" is not a valid stream name'),
    (["consumer", "--stream", "S", "--consumer", "x>"],
     'CRITICAL S_x> Crit:could not load info: "x>" is not a valid consumer name'),
    (["consumer", "--stream", "a.b", "--consumer", "C"],
     'CRITICAL a.b_C Crit:could not load info: "a.b" is not a valid stream name'),
    # IsValidName refuses / and \ too (jsm.go, since 2022)
    (["stream", "--stream", "a/b"], 'CRITICAL a/b Crit:could not load info: "a/b" is not a '
                                    "valid stream name"),
    (["stream", "--stream", "a\\b"], 'CRITICAL a\\b Crit:could not load info: "a\\\\b" is '
                                     "not a valid stream name"),
])
def test_a_name_jsm_would_not_ask_about_is_named_as_invalid(jl, args, line):
    """jsm.go's loaders refuse a name holding '>', '*', '.', a space, '/', '\\' or NUL
    before asking the server (IsValidName): the check says so, not "not found" from a
    server never asked."""
    res = check(jl, *args)
    assert (res.exit_code, res.stdout) == (2, line + "\n")


def test_missing_stream_and_not_a_mirror(jl):
    res = check(jl, "stream", "--stream", "NOPE")
    assert (res.exit_code, res.stdout) == (
        2, "CRITICAL NOPE Crit:could not load info: stream not found (10059)\n")
    ok(jl("stream", "add", "ORIG", "--subjects", "orig.>", "--defaults"))
    res = check(jl, "stream", "--stream", "ORIG", "--lag-critical", "5")
    assert (res.exit_code, res.stdout) == (
        2, "CRITICAL ORIG Crit:not mirrored OK:0 sources OK:0 sources current "
           "OK:0 sources active | sources=0 sources_lagged=0 sources_inactive=0\n")


@pytest.mark.parametrize("args, line", [
    (("stream", "--stream", "ORDERS"),
     "UNKNOWN ORDERS could not load info: cluster wset not found: did you mean west?"),
    (("consumer", "--stream", "ORDERS", "--consumer", "C"),
     "UNKNOWN ORDERS_C could not load info: cluster wset not found: did you mean west?"),
    (("kv", "--bucket", "CFG"),
     "UNKNOWN CFG could not load bucket: cluster wset not found: did you mean west?"),
])
def test_a_cluster_that_is_not_there_is_unknown_not_an_outage(jl, args, line):
    """A --cluster of the embedded engine that does not exist (a typo in a monitoring line)
    is UNKNOWN (3) with the closest name, as dr check says it, not a page; the data
    directory byte for byte as it was."""
    from helpers import data_dir_bytes

    ok(jl("cluster", "add", "west"))
    before = data_dir_bytes(jl.data)
    res = jl("--cluster", "wset", "server", "check", *args)
    assert (res.exit_code, res.stdout) == (3, line + "\n")
    res = jl("--cluster", "wset", "server", "check", *args, "--format", "json")
    assert (res.exit_code, json.loads(res.stdout)["status"]) == (3, "UNKNOWN")
    res = jl("--cluster", "wset", "server", "check", *args, "--format", "text")
    assert res.exit_code == 3
    assert res.stdout.splitlines()[:3] == [line.split(" ", 2)[1] + ": UNKNOWN", "",
                                           line.split(" ", 2)[2]]
    assert data_dir_bytes(jl.data) == before


def test_a_data_directory_that_is_not_there_is_unknown(jl, tmp_path):
    missing = tmp_path / "nodir"
    res = jl("--data-dir", str(missing), "server", "check", "stream", "--stream", "S")
    assert (res.exit_code, res.stdout) == (3, (
        f"UNKNOWN S could not load info: data directory {missing} does not exist (nothing to "
        "read or act on: the first command that creates something makes it)\n"))
    assert not missing.exists()


def test_stream_metadata_thresholds_and_flags_override(jl):
    lagging_mirror(jl)
    ok(jl("stream", "edit", "MIR", "--metadata", "io.nats.monitor.lag-critical=2",
          "--metadata", "io.nats.monitor.seen-critical=1m", "-f"))
    jl.clock.advance(5 * SECOND)  # the edit's replication step saw the origin again
    res = check(jl, "stream", "--stream", "MIR")
    assert res.exit_code == 2
    assert res.stdout.startswith("CRITICAL MIR Crit:Mirror Lag 2 OK:0 sources")
    assert res.stdout.endswith(" lag=2;;2 active=5.0000s;;60.0000\n")
    # a flag wins over the metadata
    res = check(jl, "stream", "--stream", "MIR", "--lag-critical", "3")
    assert res.exit_code == 0
    assert res.stdout.endswith(" lag=2;;3 active=5.0000s;;60.0000\n")
    ok(jl("stream", "edit", "MIR", "--metadata", "io.nats.monitor.lag-critical=lots", "-f"))
    # a value that does not read is CRITICAL, a flag given for that threshold or not (the
    # stream's configuration is wrong either way, as jsm.go reads every key it holds)
    for flags in ([], ["--lag-critical", "3"]):
        res = check(jl, "stream", "--stream", "MIR", *flags)
        assert (res.exit_code, res.stdout) == (
            2, "CRITICAL MIR Crit:could not configure based on metadata: "
               "io.nats.monitor.lag-critical: 'lots' is not a whole number of 0 or more\n")
    ok(jl("stream", "edit", "MIR", "--metadata",
          "io.nats.monitor.lag-critical=18446744073709551616", "-f"))
    res = check(jl, "stream", "--stream", "MIR")
    assert (res.exit_code, res.stdout) == (
        2, "CRITICAL MIR Crit:could not configure based on metadata: "
           "io.nats.monitor.lag-critical: 18446744073709551616 is out of range (0 to "
           "18446744073709551615)\n")


@pytest.mark.parametrize(("args", "flag", "value", "low", "high"), [
    (["stream", "--stream", "S"], "--lag-critical", str(1 << 64), 0, (1 << 64) - 1),
    (["stream", "--stream", "S"], "--msgs-warn", str(1 << 64), 0, (1 << 64) - 1),
    (["stream", "--stream", "S"], "--min-sources", str(1 << 63), -(1 << 63), (1 << 63) - 1),
    (["kv", "--bucket", "B"], "--values-critical", str(1 << 63), -(1 << 63), (1 << 63) - 1),
    (["consumer", "--stream", "S", "--consumer", "C"], "--waiting-critical", str(1 << 63),
     -(1 << 63), (1 << 63) - 1),
])
def test_a_threshold_past_its_range_is_a_usage_error(capsys, args, flag, value, low, high):
    """natscli's flags are 64-bit (int, or uint for counts): past the range is refused
    before anything is asked, not taken as a threshold (UNKNOWN, a check's bad command
    line)."""
    from jetlink.cli.main import run

    with pytest.raises(SystemExit) as exc:
        run(["server", "check", *args, flag, value])
    assert exc.value.code == 3
    assert capsys.readouterr().err.splitlines()[0] == (
        f"jetlink: error: Invalid value for '{flag}': '{value}' is out of range: from "
        f"{low:,} to {high:,}")


def test_a_long_number_is_quoted_by_its_start_and_length(capsys):
    from jetlink.cli.main import run

    with pytest.raises(SystemExit) as exc:
        run(["server", "check", "stream", "--stream", "S", "--lag-critical", "9" * 5000])
    assert exc.value.code == 3
    assert capsys.readouterr().err.splitlines()[0] == (
        "jetlink: error: Invalid value for '--lag-critical': '99999999999999999999999999999"
        "99999999999... (5,000 characters)' is out of range: from 0 to "
        "18,446,744,073,709,551,615")


# natscli's flag library (fisk) reads a uint64 / int64 flag with strconv.ParseUint /
# ParseInt in base 0 and an int flag with strconv.ParseFloat made an int (values.go,
# values_generated.go): the same text, the same threshold
GO_FLAG_NUMBERS = [
    ("uint64", "10", 10), ("uint64", "010", 8), ("uint64", "0x10", 16), ("uint64", "0X1f", 31),
    ("uint64", "0o17", 15), ("uint64", "0b101", 5), ("uint64", "1_000", 1000),
    ("uint64", "0_10", 8), ("uint64", "0x_1F", 31), ("uint64", "00", 0),
    ("uint64", "18446744073709551615", 2**64 - 1), ("uint64", "18446744073709551616", "range"),
    ("uint64", "-1", "syntax"), ("uint64", "+1", "syntax"), ("uint64", "08", "syntax"),
    ("uint64", "1__0", "syntax"), ("uint64", "_1", "syntax"), ("uint64", "1_", "syntax"),
    ("uint64", "0x", "syntax"), ("uint64", "1.5", "syntax"), ("uint64", " 1", "syntax"),
    ("uint64", "", "syntax"), ("uint64", "\u0661", "syntax"),
    ("int64", "-0x10", -16), ("int64", "+7", 7), ("int64", "-9223372036854775808", -2**63),
    ("int64", "9223372036854775808", "range"), ("int64", "-", "syntax"),
    ("int", "2.5", 2), ("int", "-2.5", -2), ("int", "1e3", 1000), ("int", ".5", 0),
    ("int", "5.", 5), ("int", "0x1p4", 16), ("int", "0x_1p4", 16), ("int", "+3", 3),
    ("int", "0x10", "syntax"), ("int", "1_000", 1000), ("int", "1_0", 10),
    ("int", "1_23.50_0_0e+1_2", 123500000000000), ("int", "0_10", 10), ("int", "1__0", "syntax"),
    ("int", "_1", "syntax"), ("int", "1_", "syntax"), ("int", "+_1", "syntax"),
    ("int", "1_.5", "syntax"), ("int", "1._5", "syntax"), ("int", "1e_3", "syntax"),
    ("int", "1e3_", "syntax"), ("int", "_", "syntax"), ("int", "_.", "syntax"),
    ("int", "0x1p1_0", 1024), ("int", "0x1p_1", "syntax"),
    ("int", ".", "syntax"), ("int", "abc", "syntax"),
    ("int", " 1", "syntax"), ("int", "inf", "range"), ("int", "NaN", "range"),
    ("int", "1e400", "range"), ("int", "9.3e18", "range"), ("int", "9223372036854775807", "range"),
]


@pytest.mark.parametrize(("kind", "text", "expected"), GO_FLAG_NUMBERS)
def test_a_threshold_flag_reads_as_natscli_reads_it(kind, text, expected):
    from jetlink.core.numbers import (
        UINT64_MAX,
        IntTextError,
        go_int_of_float,
        go_parse_int_base0,
    )

    text = text.encode().decode("unicode_escape")

    def read() -> int:
        if kind == "int":
            return go_int_of_float(text)
        return go_parse_int_base0(text, *((0, UINT64_MAX) if kind == "uint64" else ()))

    if isinstance(expected, str):
        with pytest.raises(IntTextError) as exc:
            read()
        assert exc.value.reason == expected
    else:
        assert read() == expected


def test_the_same_threshold_text_gives_natscli_s_status(jl):
    """``--msgs-critical 010`` is 8 to natscli (stream NINE of 9 messages: OK, where a
    decimal 10 is CRITICAL); ``--min-sources 2.5`` is 2; ``--seen-critical=-5s`` parses
    and, 0 or less, is off; ``1h30`` is 1h (fisk's ParseDuration skips the rest)."""
    ok(jl("stream", "add", "NINE", "--subjects", "nine", "--defaults"))
    ok(jl("pub", "nine", "x", "--count", "9"))
    for flags, line in (
            (["--msgs-critical", "010"], "OK NINE OK:9 messages OK:0 sources | "
                                         "messages=9;;8 sources=0"),
            (["--msgs-critical", "10"], "CRITICAL NINE Crit:9 messages OK:0 sources | "
                                        "messages=9;;10 sources=0"),
            (["--msgs-warn", "0x10"], "WARNING NINE Warn:9 messages OK:0 sources | "
                                      "messages=9;16 sources=0"),
            (["--min-sources", "2.5"], "CRITICAL NINE Crit:0 sources | sources=0;2"),
            (["--seen-critical=-5s"], "OK NINE OK:0 sources | sources=0")):
        res = check(jl, "stream", "--stream", "NINE", *flags)
        assert res.stdout == line + "\n", (flags, res.stdout, res.stderr)
    res = check(jl, "stream", "--stream", "NINE", "--min-sources", "abc")
    assert (res.exit_code, res.stdout) == (2, "")  # a usage error (3 through main's run)
    assert ("Invalid value for '--min-sources': 'abc' is not a number, e.g. 10, 2.5 (2) or "
            "1e3") in res.stderr


# -- consumer -------------------------------------------------------------------------------------

def orders_with_consumer(jl, *flags):
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    for i in range(4):
        ok(jl("pub", f"orders.{i}", "x"))
    ok(jl("consumer", "add", "ORDERS", "C", "--pull", "--defaults", *flags))


def test_consumer_thresholds(jl):
    orders_with_consumer(jl)
    res = check(jl, "consumer", "--stream", "ORDERS", "--consumer", "C")
    assert (res.exit_code, res.stdout) == (
        0, "OK ORDERS_C | ack_pending=0 pull_waiting=0 pending=4 redelivered=0\n")
    ok(jl("consumer", "next", "ORDERS", "C", "--count", "2", "--no-ack"))
    jl.clock.advance(90 * SECOND)
    res = check(jl, "consumer", "--stream", "ORDERS", "--consumer", "C",
                "--outstanding-ack-critical", "2", "--unprocessed-critical", "3",
                "--waiting-critical", "1", "--redelivery-critical", "1",
                "--last-delivery-critical", "1m", "--last-ack-critical", "1h")
    assert res.exit_code == 2
    assert res.stdout == (
        "CRITICAL ORDERS_C Crit:Ack Pending: 2 Crit:Last delivery 1m30s ago Crit:No acks "
        "OK:Waiting Pulls: 0 OK:Unprocessed Messages: 2 OK:Redelivered: 0"
        " | ack_pending=2;;2 pull_waiting=0;;1 pending=2;;3 redelivered=0;;1"
        " last_delivery=90.0000s;;60.0000\n")
    nagios(res)


def test_consumer_metadata_and_pinned(jl):
    orders_with_consumer(jl, "--metadata", "io.nats.monitor.unprocessed-critical=4",
                         "--metadata", "io.nats.monitor.pinned=true")
    res = check(jl, "consumer", "--stream", "ORDERS", "--consumer", "C")
    assert (res.exit_code, res.stdout) == (
        2, "CRITICAL ORDERS_C Crit:Unprocessed Messages: 4 Crit:Not pinned client priority mode"
           " | ack_pending=0 pull_waiting=0 pending=4;;4 redelivered=0\n")
    res = check(jl, "consumer", "--stream", "ORDERS", "--consumer", "C",
                "--unprocessed-critical", "5")
    assert res.stdout.startswith("CRITICAL ORDERS_C Crit:Not pinned client priority mode "
                                 "OK:Unprocessed Messages: 4 |")
    res = check(jl, "consumer", "--stream", "ORDERS", "--consumer", "NOPE")
    assert (res.exit_code, res.stdout) == (
        2, "CRITICAL ORDERS_NOPE Crit:could not load info: consumer not found (10014)\n")


# -- kv -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("flags", "code", "line"), [
    ((), 0, "OK CFG OK:bucket CFG | values=2 bytes={b}B replicas=1"),
    (("--key", "a"), 0, "OK CFG OK:bucket CFG OK:key a found | values=2 bytes={b}B replicas=1"),
    (("--key", "gone"), 2, "CRITICAL CFG Crit:key gone not found OK:bucket CFG"
     " | values=2 bytes={b}B replicas=1"),
    (("--values-warn", "2", "--values-critical", "5"), 1,
     "WARNING CFG Warn:2 values OK:bucket CFG | values=2;2;5 bytes={b}B replicas=1"),
    (("--values-warn", "3", "--values-critical", "2"), 2,
     "CRITICAL CFG Crit:2 values OK:bucket CFG | values=2;3;2 bytes={b}B replicas=1"),
    (("--values-critical", "10"), 0,
     "OK CFG OK:bucket CFG OK:2 values | values=2;;10 bytes={b}B replicas=1"),
])
def test_kv(jl, flags, code, line):
    ok(jl("kv", "add", "CFG"))
    ok(jl("kv", "put", "CFG", "a", "1"))
    ok(jl("kv", "put", "CFG", "gone", "2"))
    ok(jl("kv", "del", "CFG", "gone", "-f"))
    size = json.loads(ok(jl("kv", "info", "CFG", "-j")).stdout)["bytes"]
    res = check(jl, "kv", "--bucket", "CFG", *flags)
    assert (res.exit_code, res.stdout) == (code, line.format(b=size) + "\n")
    nagios(res)


def test_kv_missing_bucket(jl):
    res = check(jl, "kv", "--bucket", "NOPE")
    assert (res.exit_code, res.stdout) == (2, "CRITICAL NOPE Crit:bucket NOPE not found\n")


# -- formats --------------------------------------------------------------------------------------

def test_prometheus_format_parses_and_exits_0(jl):
    lagging_mirror(jl)
    res = check(jl, "stream", "--stream", "MIR", "--lag-critical", "2", "--format", "prometheus",
                "--namespace", "ops")
    assert res.exit_code == 0  # as natscli: a scrape reads the status gauge
    families = {f.name: f for f in text_string_to_metric_families(res.stdout)}
    assert sorted(families) == sorted(
        f"ops_stream_{n}" for n in ("active", "lag", "sources", "sources_inactive",
                                    "sources_lagged", "status_code"))
    assert {f.type for f in families.values()} == {"gauge"}
    samples = {f.name: f.samples[0] for f in families.values()}
    assert samples["ops_stream_lag"].value == 2
    assert samples["ops_stream_lag"].labels == {"item": "MIR"}
    assert samples["ops_stream_active"].value == 5
    status = samples["ops_stream_status_code"]
    assert (status.value, status.labels) == (2, {"item": "MIR", "status": "CRITICAL"})
    assert families["ops_stream_lag"].documentation == (
        "Number of operations this peer is behind its origin")
    assert res.stdout.splitlines()[:3] == [
        "# HELP ops_stream_active Indicates if this peer is active and catching up if lagged",
        "# TYPE ops_stream_active gauge",
        'ops_stream_active{item="MIR"} 5']
    default = check(jl, "stream", "--stream", "MIR", "--format", "prometheus")
    assert 'nats_server_check_stream_status_code{item="MIR",status="OK"} 0\n' in default.stdout
    # jsm.go prints the exposition text (each line ending with its newline) with Println
    assert default.stdout.endswith('status="OK"} 0\n\n'), default.stdout[-40:]
    assert check(jl, "stream", "--stream", "MIR").stdout.endswith("\n") and not \
        check(jl, "stream", "--stream", "MIR").stdout.endswith("\n\n")  # nagios: one line


def test_json_format_field_by_field(jl):
    lagging_mirror(jl)
    for args in (("--format", "json"), ("-j",)):
        res = check(jl, "stream", "--stream", "MIR", "--lag-critical", "2", *args)
        assert res.exit_code == 2
        d = json.loads(res.stdout)
        assert list(d) == ["status", "check_suite", "check_name", "critical", "ok", "perf_data"]
        assert d["status"] == "CRITICAL"
        assert d["check_suite"] == "stream"
        assert d["check_name"] == "MIR"
        assert d["critical"] == ["Mirror Lag 2"]
        assert d["ok"] == ["0 sources", "0 sources current", "0 sources active"]
        assert d["perf_data"][3] == {"name": "lag", "value": 2, "warning": 0, "critical": 2}
        assert d["perf_data"][4] == {"name": "active", "value": 5, "warning": 0, "critical": 0,
                                     "unit": "s"}
        assert '"value": 5,' in res.stdout and res.stdout.startswith('{\n  "status": ')


def test_text_table_pads_wide_characters_by_their_columns():
    """go-pretty pads a cell by the columns it takes (go-runewidth): a wide character two,
    a combining mark none; the borders stay in line."""
    from jetlink.core.monitor.render import _table

    lines = _table(["Status", "Message"], [["OK", "Mirror 日本"], ["OK", "e\u0301te"],
                                          ["OK", "plain"]]).split("\n")
    assert lines[3] == "│ OK     │ Mirror 日本 │"
    assert lines[4] == "│ OK     │ e\u0301te         │"
    assert lines[5] == "│ OK     │ plain       │"


def test_text_format(jl):
    ok(jl("stream", "add", "ORIG", "--subjects", "orig.>", "--defaults"))
    ok(jl("pub", "orig.a", "x"))
    res = check(jl, "stream", "--stream", "ORIG", "--msgs-warn", "1", "--format", "text")
    assert res.exit_code == 1
    lines = res.stdout.split("\n")
    assert lines[:4] == ["ORIG: WARNING", "", "Status Detail", ""]
    assert lines[4:9] == ["╭─────────┬────────────╮", "│ Status  │ Message    │",
                          "├─────────┼────────────┤", "│ OK      │ 0 sources  │",
                          "│ Warning │ 1 messages │"]
    assert lines[10:13] == ["", "Check Metrics", ""]
    assert lines[14].startswith("│ Metric   │ Value │ Unit │ Critical Threshold │")
    assert lines[16].startswith("│ messages │ 1     │      │ 0                  │ 1  ")
    assert res.stdout.endswith("╯\n\n")


def test_outfile(jl):
    ok(jl("stream", "add", "ORIG", "--subjects", "orig.>", "--defaults"))
    target = jl.tmp / "check.txt"
    res = check(jl, "stream", "--stream", "ORIG", "--outfile", str(target))
    assert (res.exit_code, res.stdout) == (0, "")
    assert target.read_text() == "OK ORIG OK:0 sources | sources=0\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in jl.tmp.iterdir() if p.name.startswith(".check")] == []


def test_output_options_before_the_checks_name_as_natscli_takes_them(jl):
    """natscli defines --format, --namespace and --outfile on `check`: a Nagios command
    line written for it gives them before the check's name. The check's own win."""
    ok(jl("stream", "add", "ORIG", "--subjects", "orig.>", "--defaults"))
    after = check(jl, "stream", "--stream", "ORIG", "--format", "json")
    before = jl("server", "check", "--format", "json", "stream", "--stream", "ORIG")
    assert (before.exit_code, before.stdout) == (after.exit_code, after.stdout)
    assert json.loads(before.stdout)["status"] == "OK"
    prom = jl("server", "check", "--format", "prometheus", "--namespace", "acme", "stream",
              "--stream", "ORIG")
    assert prom.exit_code == 0 and "acme_stream_sources" in prom.stdout
    both = jl("server", "check", "--format", "json", "stream", "--stream", "ORIG", "--format",
              "nagios")
    assert both.stdout == "OK ORIG OK:0 sources | sources=0\n"
    target = jl.tmp / "before.txt"
    res = jl("server", "check", "--outfile", str(target), "stream", "--stream", "ORIG")
    assert (res.exit_code, res.stdout) == (0, "")
    assert target.read_text() == "OK ORIG OK:0 sources | sources=0\n"


@pytest.mark.parametrize("namespace", ["bad-ns", "1abc", "a b"])
def test_a_namespace_that_is_no_metric_name_prefix_is_refused(jl, namespace):
    """A namespace with a character a Prometheus metric name can not hold would break the
    whole scrape: refused naming it and the rule, UNKNOWN as any bad command line of a
    check."""
    ok(jl("stream", "add", "ORIG", "--subjects", "orig.>", "--defaults"))
    res = check(jl, "stream", "--stream", "ORIG", "--format", "prometheus", "--namespace",
                namespace)
    assert (res.exit_code, res.stdout) == (3, "")  # a check's bad command line: UNKNOWN
    assert res.stderr.startswith(f"jetlink: error: --namespace {namespace!r}: a Prometheus "
                                 "namespace is a metric name prefix")
    # the other formats never use it (natscli): not refused for it
    res = check(jl, "stream", "--stream", "ORIG", "--format", "nagios", "--namespace",
                namespace)
    assert (res.exit_code, res.stdout) == (0, "OK ORIG OK:0 sources | sources=0\n")


@pytest.mark.parametrize("words", [["dr", "check", "--format", "prometheus"],
                                   ["srv", "check", "stream", "--stream", "ORIG", "--format",
                                    "prometheus"],
                                   ["dr", "watch"]])
def test_every_check_refuses_a_bad_namespace(jl, words):
    """dr check and dr watch (its /metrics) refuse it too; server check under natscli's
    alias srv is a check as well (UNKNOWN, 3); dr watch, a daemon, exits 2."""
    ok(jl("stream", "add", "ORIG", "--subjects", "orig.>", "--defaults"))
    res = jl(*words, "--namespace", "9bad")
    assert (res.exit_code, res.stdout) == (2 if words[1] == "watch" else 3, "")
    assert res.stderr == ("jetlink: error: --namespace '9bad': a Prometheus namespace is a "
                          "metric name prefix: a letter, '_' or ':', then letters, digits, "
                          "'_' or ':'\n")


def test_a_bad_bucket_name_is_quoted_without_an_error_code(jl):
    """nats.go refuses the name before any request: there is no server code to quote."""
    res = check(jl, "kv", "--bucket", "a.b")
    assert (res.exit_code, res.stdout) == (2, (
        'CRITICAL a.b Crit:could not load bucket: nats: invalid bucket name "a.b": bucket '
        'names may contain only letters, digits, "_" and "-"\n'))


def test_a_kv_stream_that_keeps_no_value_per_key_is_no_bucket(jl):
    """nats.go's KeyValue refuses a KV_ stream whose max_msgs_per_subject is below 1
    (ErrBadBucket): the check is CRITICAL, kv verbs refuse it, as natscli's do."""
    ok(jl("stream", "add", "KV_FAKE", "--subjects", "fake.>", "--defaults"))
    res = check(jl, "kv", "--bucket", "FAKE")
    assert (res.exit_code, res.stdout) == (2, "CRITICAL FAKE Crit:could not load bucket: nats: "
                                              "bucket not valid key-value store\n")
    res = jl("kv", "get", "FAKE", "k")
    assert (res.exit_code, res.stderr) == (1, (
        "jetlink: error: nats: bucket not valid key-value store: stream KV_FAKE (subjects "
        "fake.>, max_msgs_per_subject -1) is no bucket: a bucket's stream holds $KV.FAKE.> and "
        "keeps 1 or more values per key\n"))
    # one holding the bucket's subjects (what the kv verbs keep serving, a failover's of an
    # older KV mirror) is still nothing nats.go opens: the check says so, as natscli's
    ok(jl("stream", "add", "KV_KEPT", "--subjects", "$KV.KEPT.>", "--defaults"))
    ok(jl("kv", "info", "KEPT"))
    res = check(jl, "kv", "--bucket", "KEPT")
    assert (res.exit_code, res.stdout) == (2, "CRITICAL KEPT Crit:could not load bucket: nats: "
                                              "bucket not valid key-value store\n")


def test_bad_duration_is_a_usage_error(jl):
    res = check(jl, "stream", "--stream", "S", "--seen-critical", "soon")
    assert res.exit_code == 2 and res.stdout == ""


# -- the core pieces ------------------------------------------------------------------------------

@pytest.mark.parametrize(("item", "text"), [
    (PerfDataItem("lag", 2, crit=5), "lag=2;;5"),
    (PerfDataItem("sources", 2, 1, 3), "sources=2;1;3"),
    (PerfDataItem("sources", 2, 1), "sources=2;1"),
    (PerfDataItem("active", 1.23456, crit=60, unit="s"), "active=1.2346s;;60.0000"),
    (PerfDataItem("bytes", 1024, unit="B"), "bytes=1024B"),
    (PerfDataItem("two words", 1), "'two words'=1"),
    # the plugin guidelines: '=' and "'" quote a label too, a "'" doubled inside
    (PerfDataItem("a=b@east.lag", 0), "'a=b@east.lag'=0"),
    (PerfDataItem("it's@east.lag", 0), "'it''s@east.lag'=0"),
    # "|" has no escape in the guidelines: written as a broken bar, the line still splits
    (PerfDataItem("a|b@east.lag", 0), "a\u00a6b@east.lag=0"),
])
def test_perf_items(item, text):
    assert perf_item(item) == text


@pytest.mark.parametrize(("value", "g", "js"), [
    (0.0, "0", "0"), (1.0, "1", "1"), (0.5, "0.5", "0.5"), (123456.0, "123456", "123456"),
    (1234567.0, "1.234567e+06", "1234567"), (1e-5, "1e-05", "0.00001"), (1e-7, "1e-07", "1e-7"),
    (1e21, "1e+21", "1e+21"), (-2.5, "-2.5", "-2.5"),
])
def test_numbers_as_go_writes_them(value, g, js):
    assert (go_g(value), go_json_number(value)) == (g, js)


def test_status_and_exit_codes():
    r = Result("X", "stream")
    assert (r.status, r.exit_code, render(r)) == ("OK", 0, "OK X")
    r.warn("w")
    assert (r.status, r.exit_code) == ("WARNING", 1)
    r.critical("c")
    assert (r.status, r.exit_code, render(r)) == ("CRITICAL", 2, "CRITICAL X Crit:c Warn:w")


def test_a_pipe_in_a_name_never_splits_the_nagios_line():
    """The plugin guidelines' one separator: only the "|" before the perf data is one."""
    r = Result("Stream a|b", "stream")
    r.critical("a|b: 3 of 4")
    r.pd(PerfDataItem("a|b@east.lag", 3, crit=1))
    line = render(r)
    assert line == ("CRITICAL Stream a\u00a6b Crit:a\u00a6b: 3 of 4 | "
                    "a\u00a6b@east.lag=3;;1")
    assert line.count("|") == 1


def test_metadata_kinds():
    t = StreamThresholds.resolve({"lag_critical": None, "max_sources": 4},
                                 {"io.nats.monitor.seen-critical": "1.5d",
                                  "io.nats.monitor.max-sources": "9",
                                  "io.nats.monitor.subjects-warn": "-1"})
    assert (t.seen_critical, t.max_sources, t.subjects_warn, t.lag_critical) == (
        36 * 3600 * SECOND, 4, -1, 0)
    with pytest.raises(ThresholdError, match="peer-seen-critical"):
        StreamThresholds.resolve({}, {"io.nats.monitor.peer-seen-critical": "later"})


# (metadata key, value, the field it sets or the error): read as jsm.go reads them with
# Go's strconv (ParseBool, ParseUint, ParseInt), the text as stored (never trimmed)
METADATA_TEXTS = [
    ("enabled", "true", ("enabled", True)),
    ("enabled", "1", ("enabled", True)),
    ("enabled", "F", ("enabled", False)),
    ("enabled", "yes", "io.nats.monitor.enabled: 'yes' is not a boolean (true or false)"),
    ("enabled", " true", "io.nats.monitor.enabled: ' true' is not a boolean (true or false)"),
    ("lag-critical", "5", ("lag_critical", 5)),
    ("lag-critical", " 5", "io.nats.monitor.lag-critical: ' 5' is not a whole number of 0 or "
                           "more"),
    ("lag-critical", "+5", "io.nats.monitor.lag-critical: '+5' is not a whole number of 0 or "
                           "more"),
    ("min-sources", "+5", ("min_sources", 5)),
    ("min-sources", "5\n", "io.nats.monitor.min-sources: '5\\n' is not a whole number"),
    # durations: jsm.go's ParseDuration (blanks trimmed, a long unit's fraction kept)
    ("seen-critical", " 0.1d ", ("seen_critical", 8_640_000_000_000)),
    ("seen-critical", "1.1w", ("seen_critical", 665_280_000_000_000)),
    ("seen-critical", "5", "io.nats.monitor.seen-critical: invalid duration '5': missing "
                           "unit, e.g. 5s"),
]


@pytest.mark.parametrize(("key", "text", "expected"), METADATA_TEXTS)
def test_metadata_text_as_go_parses_it(key, text, expected):
    meta = {f"io.nats.monitor.{key}": text}
    if isinstance(expected, str):
        with pytest.raises(ThresholdError) as err:
            StreamThresholds.resolve({}, meta)
        assert str(err.value) == expected
    else:
        assert getattr(StreamThresholds.resolve({}, meta), expected[0]) == expected[1]


def test_a_bad_enabled_fails_the_check_as_natscli(jl):
    ok(jl("stream", "add", "E", "--subjects", "e.>", "--defaults", "--metadata",
          "io.nats.monitor.enabled=maybe"))
    res = check(jl, "stream", "--stream", "E")
    assert (res.exit_code, res.stdout) == (
        2, "CRITICAL E Crit:could not configure based on metadata: "
           "io.nats.monitor.enabled: 'maybe' is not a boolean (true or false)\n")


def test_a_check_only_reads(jl):
    """A check creates nothing: not the default cluster of an empty data directory."""
    result = jl("server", "check", "stream", "--stream", "X")
    assert result.exit_code == 2
    assert result.stdout.startswith("CRITICAL X ")
    assert list(jl.data.iterdir()) == []


# -- a lag as last reported ---------------------------------------------------------------------

def _origin_gone(jl):
    """west: ORDERS; east: BACKUP, its mirror, caught up at 1 message. Then west goes down
    and takes 2 more messages BACKUP never sees; 3 minutes pass."""
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(jl("--cluster", "west", "stream", "add", "ORDERS", "--subjects", "orders.>",
          "--defaults"))
    ok(jl("--cluster", "east", "stream", "add", "BACKUP", "--mirror", "ORDERS@west",
          "--defaults"))
    ok(jl("--cluster", "west", "pub", "orders.a", "1"))
    ok(jl("cluster", "down", "west"))
    ok(jl("--cluster", "west", "pub", "orders.a", "2"))
    ok(jl("--cluster", "west", "pub", "orders.a", "3"))
    jl.clock.advance(180 * SECOND)


def test_a_stale_mirror_lag_is_marked_in_every_format(jl):
    _origin_gone(jl)
    args = ("--cluster", "east", "server", "check", "stream", "--stream", "BACKUP",
            "--lag-critical", "1")
    res = jl(*args)
    # natscli's status (the figure is under the threshold), its age beside it
    assert (res.exit_code, res.stdout) == (0, (
        "OK BACKUP OK:0 sources OK:0 sources current OK:0 sources active "
        "OK:Mirror ORDERS: Lag 0 (last reported 3m0s ago) | sources=0 sources_lagged=0 "
        "sources_inactive=0 lag=0;;1 active=180.0000s\n"))
    d = json.loads(jl(*args, "-j").stdout)
    assert d["ok"][-1] == "Mirror ORDERS: Lag 0 (last reported 3m0s ago)"
    assert d["perf_data"][3:] == [
        {"name": "lag", "value": 0, "warning": 0, "critical": 1, "stale": True},
        {"name": "active", "value": 180, "warning": 0, "critical": 0, "unit": "s"}]
    text = jl(*args, "--format", "text")
    assert text.exit_code == 0
    assert "│ OK     │ Mirror ORDERS: Lag 0 (last reported 3m0s ago) │" in text.stdout
    prom = jl(*args, "--format", "prometheus")
    assert prom.exit_code == 0
    samples = {f.name: f.samples[0] for f in text_string_to_metric_families(prom.stdout)}
    assert samples["nats_server_check_stream_lag"].value == 0
    assert samples["nats_server_check_stream_active"].value == 180
    # the origin's error alone (its consumer could not be set up) makes it stale at once
    ok(jl("cluster", "up", "west"))
    ok(jl("--cluster", "west", "pub", "orders.a", "4"))  # the step catches the mirror up
    fresh = jl(*args[:-2], "--lag-critical", "5")
    assert (fresh.exit_code, fresh.stdout) == (0, (
        "OK BACKUP OK:0 sources OK:0 sources current OK:0 sources active OK:Mirror ORDERS "
        "| sources=0 sources_lagged=0 sources_inactive=0 lag=0;;5 active=0.0000s\n"))
    ok(jl("cluster", "down", "west"))
    jl.clock.advance(2 * SECOND)
    assert "OK:Mirror ORDERS: Lag 0 (last reported 2s ago)" in jl(*args).stdout


def test_a_stale_source_lag_is_named(jl):
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(jl("--cluster", "west", "stream", "add", "A", "--subjects", "a.>", "--defaults"))
    ok(jl("--cluster", "east", "stream", "add", "AGG", "--source", "A@west", "--defaults"))
    ok(jl("cluster", "down", "west"))
    jl.clock.advance(60 * SECOND)
    res = jl("--cluster", "east", "server", "check", "stream", "--stream", "AGG",
             "--lag-critical", "5")
    assert (res.exit_code, res.stdout) == (0, (
        "OK AGG OK:1 sources OK:1 sources current (A Lag 0 (last reported 1m0s ago)) "
        "OK:1 sources active | sources=1 sources_lagged=0 sources_inactive=0\n"))


@pytest.mark.parametrize("args", [
    ["server", "check", "stream", "--stream", "S", "--format", "prometheus", "-j"],
    ["server", "check", "kv", "--bucket", "B", "--format", "prometheus", "-j"],
    ["dr", "check", "--format", "nagios", "-j"],
])
def test_json_and_another_format_conflict(jl, args):
    """-j is --format json: given with another --format, the two are refused together (a
    check's bad command line: UNKNOWN), never one of them silently dropped."""
    res = jl(*args)
    fmt = args[args.index("--format") + 1]
    assert res.exit_code == 3
    assert json.loads(res.stdout) == {"error": {"description": (
        f"-j/--json and --format {fmt} conflict: give one (-j is --format json)")}}
    assert json.loads(jl(*[a for a in args if a not in ("--format", fmt)]).stdout)["status"]


def test_the_checks_own_json_wins_over_the_groups_format(jl):
    """A --format given before the check's name is the group's: the check's own -j (an
    option after the name) wins, as every option given there does."""
    res = jl("server", "check", "--format", "text", "kv", "--bucket", "B", "-j")
    assert json.loads(res.stdout)["check_suite"] == "kv", res.output


@pytest.mark.parametrize(("value", "shown"), [
    (0, "0"), (1234, "1,234"), (1234.56789, "1,234.567"), (-1234.5, "-1,234.5"),
    (2**53 + 1, "9,007,199,254,740,992"),  # as the float64 Go holds it
    (2**64 - 1, "18,446,744,073,709,552,000"),
])
def test_text_numbers_are_go_humanize_commaf_of_a_float64(value, shown):
    """go-humanize CommafWithDigits(v, 3) of the float64 value (the text table's)."""
    from jetlink.core.monitor.render import _commaf3

    assert _commaf3(value) == shown


@pytest.mark.parametrize("flag", ["--lag-warn", "--lag-critical"])
def test_dr_check_s_lag_past_64_bits_is_a_usage_error(capsys, flag):
    """dr check's lag thresholds are natscli's uint64 too (past it: taken as a threshold,
    CRITICAL, where the same value to server check was UNKNOWN)."""
    from jetlink.cli.main import run

    with pytest.raises(SystemExit) as exc:
        run(["dr", "check", flag, str(1 << 64)])
    assert exc.value.code == 3
    assert capsys.readouterr().err.splitlines()[0] == (
        f"jetlink: error: Invalid value for '{flag}': '{1 << 64}' is out of range: from 0 "
        f"to {(1 << 64) - 1:,}")


@pytest.mark.parametrize("given", [["-j"], ["--format", "json"], ["--format=json"]])
@pytest.mark.parametrize("check", [["dr", "check"], ["server", "check", "stream", "--stream",
                                                     "S"]])
def test_a_checks_bad_command_line_is_one_json_document_in_either_spelling(capsys, given,
                                                                           check):
    """--format json is a check's other spelling of -j: a bad command line is then one
    JSON document on stdout too, exit 3 (UNKNOWN)."""
    from jetlink.cli.main import run

    with pytest.raises(SystemExit) as exc:
        run([*check, *given, "--lag-critcal", "2"])
    assert exc.value.code == 3
    out = capsys.readouterr()
    assert json.loads(out.out)["error"]["description"].startswith(
        "No such option: --lag-critcal (Possible options: --lag-critical"), out
    assert out.err == ""
