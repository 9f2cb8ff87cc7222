import pytest
from hypothesis import given
from hypothesis import strategies as st

from jetlink.core.durations import (
    HOUR,
    MINUTE,
    MS,
    SECOND,
    DurationError,
    format_duration,
    humanize,
    parse_duration,
    parse_go_duration,
)


@pytest.mark.parametrize(
    "text,ns",
    [
        ("1h", HOUR),
        ("90s", 90 * SECOND),
        ("2m30s", 150 * SECOND),
        ("500ms", 500 * MS),
        ("1.5s", 1500 * MS),
        ("1d", 24 * HOUR),
        ("1w", 7 * 24 * HOUR),
        ("0", 0),
        ("0s", 0),
        (5, 5),
        ("1h30m", 90 * MINUTE),
        ("-1s", -SECOND),
        ("250us", 250_000),
        ("10ns", 10),
    ],
)
def test_parse_duration(text, ns):
    assert parse_duration(text) == ns


@pytest.mark.parametrize("bare", ["5", "1000", "120000000000", "1.5", ".5", "-1", "+3", " 7 "])
def test_a_bare_number_is_refused_for_its_missing_unit(bare):
    """natscli's rule (its flag library's and jsm.go's ParseDuration): only 0 goes without a
    unit; an int (a JSON document's nanoseconds) is not text and stays as it is."""
    with pytest.raises(DurationError, match=r"missing unit, e\.g\. 5s"):
        parse_duration(bare)


@pytest.mark.parametrize("zero", ["0", "-0", "+0", " 0 "])
def test_zero_needs_no_unit(zero):
    assert parse_duration(zero) == 0


@pytest.mark.parametrize("bad", ["", "1x", "h", "1h30", "abc", "1.2.3s", True])
def test_parse_duration_rejects(bad):
    with pytest.raises(DurationError):
        parse_duration(bad)


@pytest.mark.parametrize(
    "ns,text",
    [
        (0, "0s"),
        (2 * MINUTE, "2m0s"),
        (90 * MINUTE, "1h30m0s"),
        (1500 * MS, "1.5s"),
        (100 * MS, "100ms"),
        (1, "1ns"),
        (1500, "1.5µs"),
        (26 * HOUR, "26h0m0s"),
        (-SECOND, "-1s"),
    ],
)
def test_format_duration_is_go_style(ns, text):
    assert format_duration(ns) == text


@given(st.integers(min_value=0, max_value=10**15))
def test_format_then_parse_round_trips(ns):
    assert parse_duration(format_duration(ns)) == ns


@pytest.mark.parametrize(
    "ns,text",
    [(0, "forever"), (HOUR, "1h"), (26 * HOUR + 5 * MINUTE, "1d2h"), (90 * SECOND, "1m30s")],
)
def test_humanize(ns, text):
    assert humanize(ns) == text


# natscli's units (its flag library's ParseDuration test table, plus decimals and upper case).
@pytest.mark.parametrize(
    "text,ns",
    [
        ("-1m1d", -(MINUTE + 24 * HOUR)),
        ("1m1.1w", 184 * HOUR + MINUTE),  # 1.1w = 184.8h, counted in whole hours
        ("1M", 30 * 24 * HOUR),
        ("1Y1M", 365 * 24 * HOUR + 30 * 24 * HOUR),
        ("1y", 365 * 24 * HOUR),
        ("1.5d", 36 * HOUR),
        ("1.5D", 36 * HOUR),
        ("2W", 14 * 24 * HOUR),
        ("0.1d", 2 * HOUR),
        ("1d12h", 36 * HOUR),
        ("1h0.5m", HOUR + 30 * SECOND),
        (".5s", 500 * MS),
        ("1.s", SECOND),
        ("1.000000001s", SECOND + 1),
        ("2562047h47m16.854775807s", 2**63 - 1),
        ("+3s", 3 * SECOND),
        ("1µs", 1000),
    ],
)
def test_parse_duration_natscli_units(text, ns):
    assert parse_duration(text) == ns


@pytest.mark.parametrize(
    "bad,why",
    [
        ("1xX", "expected a number and a unit"),
        ("1H", "expected a number and a unit"),  # hours are lower case only, as in Go
        ("1mo", "expected a number and a unit"),
        ("1h 2m", "expected a number and a unit"),
        (".s", "expected a number and a unit"),
        ("99999999999999h", "more than the maximum 2562047h47m16.854775807s"),
        ("300y", "more than the maximum"),
        # digits of other scripts are no digits to Go's ParseDuration (nor to natscli's)
        ("\u0665s", "expected a number and a unit"),
        ("\uff15s", "expected a number and a unit"),
        ("\u0660.\u0660\u0664\u0662d", "expected a number and a unit"),
        ("1\u0665s", "expected a number and a unit"),
        ("\u0665", "expected a number and a unit"),
    ],
)
def test_parse_duration_refusals_say_why(bad, why):
    with pytest.raises(DurationError, match=why):
        parse_duration(bad)


@pytest.mark.parametrize(
    "text,ns",
    [("0", 0), ("-0", 0), ("1.5h", 90 * MINUTE), ("30s", 30 * SECOND), ("1h2m3.5s", 3723500 * MS)],
)
def test_go_duration(text, ns):
    assert parse_go_duration(text) == ns


@pytest.mark.parametrize("bad", ["", "1d", "1w", "5", "1M", "s", "1.5"])
def test_go_duration_refuses_what_go_refuses(bad):
    with pytest.raises(DurationError):
        parse_go_duration(bad)


_GO = {"ns": 1, "us": 1_000, "ms": MS, "s": SECOND, "m": MINUTE, "h": HOUR}
_LONG = {"d": 24, "D": 24, "w": 168, "W": 168, "M": 720, "y": 8760, "Y": 8760}


@given(
    st.lists(
        st.tuples(st.integers(0, 500), st.integers(0, 999),
                  st.sampled_from(sorted(_GO) + sorted(_LONG))),
        min_size=1,
        max_size=4,
    )
)
def test_grammar_sum_of_parts(parts):
    """Any sequence of NUMBER UNIT parts is the sum of its parts (the grammar is a
    concatenation); whole numbers are exact in every unit."""
    text = "".join(f"{whole}{unit}" for whole, _, unit in parts)
    want = sum(whole * (_GO[u] if u in _GO else _LONG[u] * HOUR) for whole, _, u in parts)
    if want > 2**63 - 1:
        with pytest.raises(DurationError, match="more than the maximum"):
            parse_duration(text)
    else:
        assert parse_duration(text) == want


@given(st.integers(0, 10_000), st.integers(0, 999), st.sampled_from(sorted(_GO)))
def test_go_fraction_is_truncated_like_go(whole, frac, unit):
    text = f"{whole}.{frac:03d}{unit}"
    want = whole * _GO[unit] + int(float(frac) * (_GO[unit] / 1000))
    assert parse_duration(text) == want == parse_go_duration(text)


@pytest.mark.parametrize(("text", "ns"), [
    ("PT1H", 3_600 * 10**9), ("P1D", 86_400 * 10**9), ("PT0.5S", 5 * 10**8),
    ("PT0,5S", 5 * 10**8), ("-PT1H", -3_600 * 10**9), ("PT-1H", -3_600 * 10**9),
    ("PT-0.5S", -5 * 10**8), ("P-1DT1H", -82_800 * 10**9), ("p1dt2h", 93_600 * 10**9),
    ("PT0.000000001S", 1), ("PT1H30M", 5_400 * 10**9),
    ("PT", None), ("P", None), ("PT1.1234567891S", None), ("1h", None), ("PT1.S", 10**9),
    ("P99999999999999999D", None), ("PT-9999999999999999999H", None),  # (past a long)
])
def test_java_durations_as_duration_parse_reads_them(text, ns):
    """java.time.Duration.parse's table (its Javadoc's examples and rules): signed parts,
    ',' or '.', at most nine fraction digits, exact nanoseconds."""
    from jetlink.core.durations import parse_java_duration

    assert parse_java_duration(text) == ns


@pytest.mark.parametrize(("ns", "unit", "rounded"), [
    (1_499_999_999, 1_000_000_000, 1_000_000_000),
    (1_500_000_000, 1_000_000_000, 2_000_000_000),  # halves away from zero, as Go's
    (-1_500_000_000, 1_000_000_000, -2_000_000_000),
    (-1_499_999_999, 1_000_000_000, -1_000_000_000),
    (0, 1_000_000, 0),
    (1_234_567, 1_000, 1_235_000),
])
def test_go_round_is_durations_round(ns, unit, rounded):
    from jetlink.core.durations import go_round

    assert go_round(ns, unit) == rounded


# natscli's columns.HumanizeDuration (columns_test.go TestHumanizeDuration_*, exact texts
# worked out by its formula: Round below a second, whole-unit fields above, "never" at
# math.MaxInt64)
HUMANIZED = [
    (2**63 - 1, "never"),
    (500, "1µs"),  # Round: halfway away from zero
    (1_500, "2µs"),
    (250_000_000, "250ms"),
    (45 * 10**9, "45.00s"),
    ((3 * 60 + 20) * 10**9, "3m20s"),
    ((2 * 3600 + 30 * 60) * 10**9, "2h30m0s"),
    ((3 * 24 + 1) * 3600 * 10**9, "3d1h0m0s"),
    (400 * 24 * 3600 * 10**9, "1y35d0h0m0s"),
    (2**63 - 2, "292y171d23h47m16s"),
]


@pytest.mark.parametrize(("ns", "text"), HUMANIZED)
def test_durations_as_natscli_columns_humanize_them(ns, text):
    from jetlink.cli.output import since

    assert since(ns) == text


# jsm.go's ParseDuration (jsm_test.go TestParseDurationOverflow, ...AccumulatedOverflow,
# ...Float64Precision; the rest worked out by its code: durationMatcher's parts summed, a
# long unit in float64, the first part's sign)
JSM = [
    ("0", 0), ("1d", 24 * HOUR), ("1w", 7 * 24 * HOUR), ("0.1d", 2 * HOUR + 24 * 60 * SECOND),
    ("1.1w", 184 * HOUR + 48 * 60 * SECOND), ("1h30m", 90 * 60 * SECOND), ("1h30", HOUR),
    (" 5m ", 300 * SECOND), ("-1h-5m", -(65 * 60 * SECOND)), ("1y1d1us", 366 * 24 * HOUR + 1000),
    ("1000y", None), ("1000000w", None), ("1000000d", None), ("10000M", None),
    ("200y100y", None), ("5", None), ("1hx", None), ("", None), ("x", None),
]


# fisk's ParseDuration (natscli's flag library, durations.go), which reads server check's
# duration flags: jsm.go's parts loop, a long unit's number a float32 counted in whole hours
FISK = [
    ("0", 0), ("1d", 24 * HOUR), ("0.1d", 2 * HOUR), ("1.1w", 184 * HOUR), ("1.5M", 1080 * HOUR),
    ("0.5y", 4380 * HOUR), ("1h30", HOUR), ("-5s", -5 * SECOND), ("-1h-5m", -(65 * 60 * SECOND)),
    (" 5m ", 300 * SECOND), ("1y1d1us", 366 * 24 * HOUR + 1000), ("1000y", None), ("5", None),
    ("1hx", None), ("", None), ("x", None), ("1.5.5s", None),
]


@pytest.mark.parametrize(("parser", "text", "ns"),
                         [("parse_jsm_duration", t, n) for t, n in JSM]
                         + [("parse_fisk_duration", t, n) for t, n in FISK])
def test_go_parse_durations(parser, text, ns):
    """jsm.go's ParseDuration (the io.nats.monitor.* metadata) and fisk's (server check's
    flags), each against its own table."""
    from jetlink.core import durations
    from jetlink.core.durations import DurationError

    parse = getattr(durations, parser)
    if ns is None:
        with pytest.raises(DurationError):
            parse(text)
    else:
        assert parse(text) == ns


@pytest.mark.parametrize("text", ["300y", "99999999999999999999d", "150y"])
def test_a_wait_past_any_duration_is_said_past_the_longest_wait(text):
    """The rule a wait breaks is its own (100y), not Go's maximum (292 years) that a
    longer text also breaks."""
    from jetlink.core.durations import DurationError, read_duration

    with pytest.raises(DurationError) as exc:
        read_duration(text, wait=True)
    assert "more than the longest wait, 100y (876000h0m0s)" in exc.value.reason
    with pytest.raises(DurationError) as exc:  # not a wait: Go's maximum
        read_duration("300y")
    assert "about 292 years" in exc.value.reason
