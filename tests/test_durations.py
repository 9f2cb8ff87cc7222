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
        ("120000000000", 120 * SECOND),
        (5, 5),
        ("1h30m", 90 * MINUTE),
        ("-1s", -SECOND),
        ("250us", 250_000),
        ("10ns", 10),
    ],
)
def test_parse_duration(text, ns):
    assert parse_duration(text) == ns


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
    "ns,text", [(0, "forever"), (HOUR, "1h"), (26 * HOUR + 5 * MINUTE, "1d2h"), (90 * SECOND, "1m30s")]
)
def test_humanize(ns, text):
    assert humanize(ns) == text
