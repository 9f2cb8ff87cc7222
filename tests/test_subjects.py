"""Subject grammar: nats-server's rules (sublist.go) as tables, plus grammar properties."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jetlink.core.subjects import (
    SubjectFilter,
    has_wildcard,
    is_subset,
    is_valid_literal_subject,
    is_valid_publish_subject,
    is_valid_subject,
    matches,
    overlaps,
    tokenize,
)

# --- tables ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("subject", "tokens"),
    [
        ("foo", ["foo"]),
        ("foo.bar.baz", ["foo", "bar", "baz"]),
        ("foo.*.>", ["foo", "*", ">"]),
        ("a..b", ["a", "", "b"]),
        (".a", ["", "a"]),
        ("", [""]),
    ],
)
def test_tokenize(subject, tokens):
    assert tokenize(subject) == tokens


VALID = [
    "foo", "foo.bar.*", "foo.bar.>", "*", ">", "*.*", "*.>", "foo*", "foo**", "foo.**",
    "foo*bar", "foo.*bar", "foo*.bar", "*bar", "foo>", "foo.>>", "foo>bar", "foo.>bar",
    "foo>.bar", ">bar", "$JS.API.>", "héllo.wörld", "a-b_c.~!@#$%^&()",
]  # fmt: skip
INVALID = [
    "", ".", ".foo", "foo.", "foo..bar", ">.bar", "foo.>.bar", "foo.>.>", "foo bar",
    "foo.\tbar", "foo\n", "\r", "foo.\f", " ", "foo. ", "a.b c.d",
]  # fmt: skip


@pytest.mark.parametrize("subject", VALID)
def test_valid_subjects(subject):
    assert is_valid_subject(subject)


@pytest.mark.parametrize("subject", INVALID)
def test_invalid_subjects(subject):
    assert not is_valid_subject(subject)
    assert not is_valid_literal_subject(subject)
    assert not is_valid_publish_subject(subject)


def test_vertical_tab_and_nbsp_are_not_whitespace_for_the_server():
    # The server only rejects "\t\n\f\r ".
    assert is_valid_subject("a\vb")
    assert is_valid_subject("a\u00a0b")


@pytest.mark.parametrize(
    ("subject", "literal"),
    [
        ("foo", True),
        ("foo.bar.baz", True),
        ("foo.bar.*", False),
        ("foo.bar.>", False),
        ("*", False),
        (">", False),
        ("foo.*.bar", False),
        # Wildcard characters inside a longer token are literal text.
        ("foo*", True),
        ("foo.**", True),
        ("foo.*bar", True),
        ("*bar", True),
        ("foo.>>", True),
        (">bar", True),
        ("foo>.bar", True),
    ],
)
def test_literal_and_wildcards(subject, literal):
    assert is_valid_literal_subject(subject) is literal
    assert is_valid_publish_subject(subject) is literal
    assert has_wildcard(subject) is (not literal)


@pytest.mark.parametrize(
    ("pattern", "subject", "expected"),
    [
        # nats-server matchLiteral vectors (literal, pattern) swapped into (pattern, subject).
        ("foo", "foo", True),
        ("bar", "foo", False),
        ("*", "foo", True),
        (">", "foo", True),
        (">", "foo.bar", True),
        ("foo.>", "foo.bar", True),
        ("bar.>", "foo.bar", False),
        ("stats.>", "stats.test.22", True),
        ("stats.*.*", "stats.test.22", True),
        ("foo", "foo.bar", False),
        ("stats.test.foos", "stats.test.foos", True),
        ("stats.test.foo", "stats.test.foos", False),
        ("stats.test.*", "stats.test", False),
        ("stats.*", "stats.test.foos", False),
        ("stats.*.*.foos", "stats.test.foos", False),
        ("foo.>", "foo", False),
        ("*.bar", "foo.bar", True),
        ("*.*", "foo", False),
        ("*bar", "*bar", True),
        ("*bar", "xbar", False),
        ("foo*", "foo*", True),
        ("foo.***.bar", "foo.***.bar", True),
        (">bar", ">bar", True),
        (">bar", "foo", False),
        ("foo.>>>.bar", "foo.>>>.bar", True),
    ],
)
def test_matches(pattern, subject, expected):
    assert matches(pattern, subject) is expected
    assert SubjectFilter([pattern]).matches(subject) is expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("foo.*", ">", True),
        ("foo.*", "*.*", True),
        ("foo.*", "foo.*", True),
        ("foo.*", "foo.bar", False),
        ("foo.bar", "foo.*", True),
        ("foo.bar", "foo.>", True),
        ("foo.>", "foo.>", True),
        ("foo.>", ">", True),
        ("foo.>", "foo.*", False),
        ("foo.*", "foo.>", True),
        ("foo.*.bar", "foo.>", True),
        ("foo", "foo.>", False),
        (">", "foo.>", False),
        ("*", ">", True),
        (">", ">", True),
        ("*.*", "foo.*", False),
        ("foo.bar", "foo.bar", True),
        ("foo.bar", "foo.baz", False),
        ("foo", "foo.bar", False),
        ("foo.bar", "foo", False),
        ("$KV.B.>", "$KV.>", True),
        ("$JS.EVENT.>", "$JS.>", True),
        ("$JS.>", "$JS.EVENT.>", False),
        # Server quirk: a token of b that starts with '*' acts as '*'.
        ("a.b", "a.*x", True),
        ("a.b", "a.x*", False),
    ],
)
def test_is_subset(a, b, expected):
    assert is_subset(a, b) is expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        # nats-server TestSublistSubjectCollide
        ("foo.*", "foo.*.bar.>", False),
        ("foo.*", "foo.foo", True),
        ("foo.*", "*.foo", True),
        ("foo.bar.>", "*.bar.foo", True),
        ("foo", "foo", True),
        ("foo", "bar", False),
        ("foo.>", "foo", False),
        ("foo.>", "foo.bar.baz", True),
        (">", "foo", True),
        (">", "*", True),
        ("*", "*.*", False),
        ("*.>", "*", False),
        ("*.>", "*.*.*", True),
        ("a.*.c", "a.b.*", True),
        ("a.*.c", "a.b.d", False),
        ("a.*.c", "*.x.>", True),
        ("a.>", "b.>", False),
        ("orders.*", "orders.new", True),
        ("$JS.API.>", "$JS.>", True),
        ("$SYS.>", "$SYSX.>", False),
        # Server quirk: with wildcards on both sides a token starting with '*' or '>' is a
        # wildcard, so these collide although no literal subject matches both.
        ("a.*x.*", "a.b.*", True),
        ("a.>x.*", "a.b.*", True),
    ],
)
def test_overlaps(a, b, expected):
    assert overlaps(a, b) is expected
    assert overlaps(b, a) is expected


def test_subject_filter_mixed_patterns():
    f = SubjectFilter(["orders.new", "orders.*.eu", "ship.>", "*.x.*"])
    yes = ["orders.new", "orders.1.eu", "ship.a", "ship.a.b.c", "q.x.y"]
    no = ["orders.old", "orders.1.us", "ship", "orders.1.eu.x", "q.x", "x"]
    assert [f.matches(s) for s in yes] == [True] * len(yes)
    assert [f.matches(s) for s in no] == [False] * len(no)
    assert len(f) == 4


def test_subject_filter_empty_and_everything():
    assert not SubjectFilter([]).matches("foo")
    assert SubjectFilter([">"]).matches("any.thing")
    assert SubjectFilter(["a", ">"]).matches("b")


def test_subject_filter_backtracks_between_star_and_literal():
    # "a.b.c" must be found through the '*' branch after the literal branch fails.
    f = SubjectFilter(["a.b.d", "a.*.c"])
    assert f.matches("a.b.c")
    assert f.matches("a.b.d")
    assert not f.matches("a.b.e")


@pytest.mark.parametrize("bad", ["", "a..b", "foo.>.bar", "a b"])
def test_subject_filter_rejects_invalid_patterns(bad):
    with pytest.raises(ValueError):
        SubjectFilter(["ok", bad])


# --- properties --------------------------------------------------------------------------

FAST = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

# Ordinary tokens: no separator, no whitespace, not starting with '*' or '>' (the server's
# prefix quirk in is_subset/overlaps is pinned by the tables above).
_TOKEN_CHARS = st.sampled_from(list("abcxyz019-_$") + ["é", "ß", "*", ">"])
token = st.text(_TOKEN_CHARS, min_size=1, max_size=4).filter(lambda t: t[0] not in "*>")
# Tokens drawn from a tiny set so that generated patterns and subjects meet often.
small_token = st.sampled_from(["a", "b", "c"])
literal = st.lists(token, min_size=1, max_size=5).map(".".join)
small_literal = st.lists(small_token, min_size=1, max_size=4).map(".".join)


@st.composite
def patterns(draw, tokens=small_token):
    parts = draw(st.lists(st.one_of(tokens, st.just("*")), min_size=0, max_size=4))
    if not parts or draw(st.booleans()):
        parts.append(">" if draw(st.booleans()) or not parts else draw(tokens))
    return ".".join(parts)


@st.composite
def instance_of(draw, pattern):
    """A literal subject matched by ``pattern``."""
    out = []
    for t in pattern.split("."):
        if t == "*":
            out.append(draw(small_token))
        elif t == ">":
            out.extend(draw(st.lists(small_token, min_size=1, max_size=3)))
        else:
            out.append(t)
    return ".".join(out)


@FAST
@given(literal)
def test_prop_literal_round_trip(s):
    assert ".".join(tokenize(s)) == s
    assert is_valid_subject(s)
    assert is_valid_literal_subject(s)
    assert not has_wildcard(s)
    assert matches(s, s)


@FAST
@given(st.lists(token, min_size=1, max_size=5), st.data())
def test_prop_wildcards_make_patterns(tokens, data):
    # Replacing tokens by '*' and the tail by '>' keeps it valid and matching the original.
    subject = ".".join(tokens)
    stars = data.draw(st.lists(st.booleans(), min_size=len(tokens), max_size=len(tokens)))
    pattern_tokens = ["*" if s else t for s, t in zip(stars, tokens, strict=True)]
    cut = data.draw(st.integers(0, len(tokens)))
    if cut < len(tokens):
        pattern_tokens = pattern_tokens[:cut] + [">"]
    pattern = ".".join(pattern_tokens)
    assert is_valid_subject(pattern)
    assert has_wildcard(pattern) == (pattern != subject)
    assert matches(pattern, subject)
    assert is_subset(subject, pattern)
    assert overlaps(subject, pattern)


@FAST
@given(st.text(st.sampled_from(list("ab.*> \t")), max_size=8))
def test_prop_validity_agrees_with_the_grammar(s):
    tokens = s.split(".")
    expected = (
        bool(s)
        and all(tokens)
        and not any(c in s for c in " \t")
        and all(t != ">" for t in tokens[:-1])
    )
    assert is_valid_subject(s) == expected
    assert is_valid_literal_subject(s) == (expected and "*" not in tokens and tokens[-1] != ">")


@FAST
@given(st.lists(st.sampled_from(["a", "*a", "a*", ">b", "b>", "x"]), min_size=1, max_size=4),
       literal)
def test_prop_literal_pattern_matches_only_itself(ptoks, s):
    p = ".".join(ptoks)  # literal, even with '*'/'>' characters inside tokens
    assert matches(p, s) == (p == s)
    assert matches(p, p)


@FAST
@given(patterns(), patterns(), st.data())
def test_prop_superset_matches_every_instance(a, b, data):
    s = data.draw(instance_of(a))
    assert matches(a, s)
    if is_subset(a, b):
        assert matches(b, s)
    if not overlaps(a, b):
        assert not matches(b, s)


@FAST
@given(patterns(), patterns())
def test_prop_overlaps_symmetric_and_implied_by_subset(a, b):
    assert overlaps(a, b) == overlaps(b, a)
    if is_subset(a, b) or is_subset(b, a):
        assert overlaps(a, b)
    assert is_subset(a, a) and overlaps(a, a)


@FAST
@given(small_literal, st.data())
def test_prop_two_generalisations_of_one_subject_overlap(s, data):
    def generalise() -> str:
        toks = s.split(".")
        stars = data.draw(st.lists(st.booleans(), min_size=len(toks), max_size=len(toks)))
        out = ["*" if star else t for star, t in zip(stars, toks, strict=True)]
        cut = data.draw(st.integers(0, len(toks)))
        return ".".join(out[:cut] + [">"]) if cut < len(toks) else ".".join(out)

    a, b = generalise(), generalise()
    assert matches(a, s) and matches(b, s)
    assert overlaps(a, b)


@FAST
@given(st.lists(patterns(), max_size=6), st.lists(small_literal, min_size=1, max_size=10))
def test_prop_subject_filter_equals_any_match(pats, subjects):
    f = SubjectFilter(pats)
    for s in subjects:
        assert f.matches(s) == any(matches(p, s) for p in pats)


@FAST
@given(patterns(), st.data())
def test_prop_filter_is_subset_consistent(p, data):
    # A literal subject is matched by a pattern exactly when it is a subset of it.
    s = data.draw(small_literal)
    assert matches(p, s) == is_subset(s, p)
