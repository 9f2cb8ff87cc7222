"""ADR-30 subject transforms: nats-server's results, error texts and properties."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jetlink.core.bench.transform import bench_transform
from jetlink.core.subjects import is_valid_literal_subject, matches
from jetlink.core.transform import (
    SubjectTransform,
    TransformError,
    compile_transform,
    fnv1a_32,
    validate_mapping,
)


def apply(src: str, dest: str, subject: str) -> str | None:
    return compile_transform(src, dest).apply(subject)


# --- partition ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [(b"", 0x811C9DC5), (b"a", 0xE40C292C), (b"foobar", 0xBF9CF968), ("foobar", 0xBF9CF968)],
)
def test_fnv1a_32_reference_values(data, expected):
    assert fnv1a_32(data) == expected


@pytest.mark.parametrize(
    ("src", "dest", "subject", "expected"),
    [
        # (nats-server's own rows, TestSubjectTransforms: tests/test_tables_nats_server.py)
        ("*.*", "bar.{{partition(0,1)}}", "a.b", "bar.0"),
        # Tokens are concatenated with no separator: "foo"+"bar" hashes like "foobar".
        ("*.*", "p.{{partition(1000,1,2)}}", "foo.bar", f"p.{0xBF9CF968 % 1000}"),
        ("*.*", "p.{{partition(1000,2,1)}}", "bar.foo", f"p.{0xBF9CF968 % 1000}"),
        # partition(n) alone hashes the whole subject, separators included.
        ("foo.>", "p.{{partition(1000)}}.>", "foo.bar", f"p.{fnv1a_32('foo.bar') % 1000}.bar"),
        # A source without wildcards ignores partition's token list.
        ("foo.bar", "p.{{partition(10,1)}}", "foo.bar", "p.6"),
    ],
)
def test_partition_vectors(src, dest, subject, expected):
    assert apply(src, dest, subject) == expected


def test_partition_3_over_first_wildcard():
    tr = compile_transform("*", "{{partition(3,1)}}")
    got = [tr.apply(str(i)) for i in range(10)]
    assert got == ["0", "1", "1", "2", "1", "2", "2", "0", "1", "2"]


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 10, 64, 100, 256, 1000, 4096, 5000, 65536, 2**31 - 1])
def test_partition_matches_fnv_for_every_modulus(n):
    # Power-of-two moduli take a different (table) path: both must equal FNV-1a % n.
    tr = compile_transform("orders.*.*", f"p.{{{{partition({n},1,2)}}}}")
    for i in range(0, 3000, 7):
        subject = f"orders.{i * 7919}.k{i % 13}"
        key = f"{i * 7919}k{i % 13}"
        assert tr.apply(subject) == f"p.{fnv1a_32(key) % n}"


def test_partition_hashes_utf8_bytes():
    tr = compile_transform("*", "{{partition(1000,1)}}")
    assert tr.apply("héllo") == str(fnv1a_32("héllo".encode()) % 1000)


def test_partition_negative_count_wraps_like_go():
    # The server converts n to int32 then uint32: -1 becomes 2**32 - 1.
    tr = compile_transform("*", "{{partition(-1,1)}}")
    assert tr.apply("foo") == str(fnv1a_32("foo") % (2**32 - 1))


# --- the other functions -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("src", "dest", "subject", "expected"),
    [
        # (nats-server's own rows, TestSubjectTransforms: tests/test_tables_nats_server.py)
        ("*", "{{SliceFromLeft(1,3)}}", "123456", "123.456"),
        ("*", "{{SliceFromRight(1,3)}}", "123456", "123.456"),
        ("*", "{{split(1,-)}}", "abc", "abc"),
        ("*", "{{split(1,ab)}}", "xabyabz", "x.y.z"),
        (
            "*.*",
            "{{split(2,-)}}.{{splitfromleft(1,2)}}",
            "foo.-abc-def--ghij-",
            "abc.def.ghij.fo.o",
        ),
        # Literal text with quotes and braces is copied as is.
        ("x.*", "it's.{x}.$1", "x.y", "it's.{x}.y"),
        # Positions out of (0, len): unchanged.
        ("*", "{{splitfromleft(1,0)}}", "12345", "12345"),
        ("*", "{{splitfromleft(1,5)}}", "12345", "12345"),
        ("*", "{{splitfromright(1,-2)}}", "12345", "12345"),
        ("*", "{{slicefromleft(1,0)}}", "12345", "12345"),
        ("*", "{{slicefromright(1,9)}}", "12345", "12345"),
        ("*", "{{left(1,0)}}", "12345", "12345"),
        ("*", "{{right(1,-1)}}", "12345", "12345"),
        ("in.*.*", "x.{{wildcard(2)}}.{{splitfromleft(1,2)}}", "in.abcd.k", "x.k.ab.cd"),
        # Spaces inside the braces and around arguments; first letters case-insensitive.
        ("*", "foo.{{ wildcard(1) }}", "a", "foo.a"),
        ("*", "foo.{{wildcard( 1 )}}", "a", "foo.a"),
        ("*.*", "{{ Partition (10, 1,  2) }}", "foo.bar", str(fnv1a_32("foobar") % 10)),
        ("*", "{{Wildcard(1)}}.{{Left(1,1)}}.{{Right(1,1)}}", "ab", "ab.a.b"),
        # $N with N=0 and wildcard(0) read the first token; other '$' tokens are literal.
        ("a.*", "x.$0.$1", "a.b", "x.a.b"),
        ("a.*", "x.{{wildcard(0)}}", "a.b", "x.a"),
        ("a.*", "x.{{wildcard(-3)}}", "a.b", "x.a"),
        ("a.*", "x.$+1", "a.b", "x.b"),
        ("a.*", "$foo.$.$1x.$1", "a.b", "$foo.$.$1x.b"),
        ("a.*", "x.$ 1", "a.b", "x.$ 1"),
        # Functions reach tokens after '>' only through index 0; '>' takes the rest.
        ("ab.>", "{{splitfromleft(0,1)}}.>", "ab.c.d", "a.b.c.d"),
        # Lengths count UTF-8 bytes, as in Go.
        ("*", "{{left(1,2)}}", "éa", "é"),
        # ... even when that cuts a character: each byte of the cut character is U+FFFD
        # (as Go's encoding/json writes the bytes the server stores)
        ("*", "{{right(1,1)}}", "aé", "\ufffd"),
        ("*", "{{left(1,2)}}", "héllo", "h\ufffd"),
        ("*", "{{left(1,3)}}", "a€", "a\ufffd\ufffd"),
        ("*", "{{sliceFromLeft(1,1)}}", "éa", "\ufffd.\ufffd.a"),
        ("*", "{{splitFromRight(1,1)}}", "😀", "\ufffd\ufffd\ufffd.\ufffd"),
    ],
)
def test_transform_results(src, dest, subject, expected):
    assert apply(src, dest, subject) == expected


def test_split_quirks_kept():
    # Two or more leading delimiters leave one leading separator (an empty first token).
    assert apply("*", "{{split(1,-)}}", "--a-b") == ".a.b"
    assert apply("*", "x.{{split(1,-)}}", "---") == "x."
    # An empty delimiter splits into characters.
    assert apply("*", "{{split(1,)}}", "abc") == "a.b.c"


def test_trailing_fwc_appends_the_matched_tokens():
    tr = compile_transform("orders.*.>", "ship.{{wildcard(1)}}.>")
    assert tr.apply("orders.7.a") == "ship.7.a"
    assert tr.apply("orders.7.a.b.c") == "ship.7.a.b.c"
    assert tr.apply("orders.7") is None
    assert compile_transform(">", "all.>").apply("x.y") == "all.x.y"
    assert compile_transform("a.>", ">").apply("a.b.c") == "b.c"


def test_random_within_bounds():
    tr = compile_transform("*", "bar.{{random(6)}}")
    seen = {tr.apply("qux") for _ in range(400)}
    assert seen <= {f"bar.{i}" for i in range(6)}
    assert len(seen) > 3
    assert compile_transform("*", "bar.{{random(0)}}").apply("qux") == "bar.0"
    assert compile_transform("foo", "bar.{{random(3)}}").apply("foo") in {"bar.0", "bar.1", "bar.2"}


@pytest.mark.parametrize(
    ("src", "dest", "yes", "no"),
    [
        ("orders.*", "x.$1", ["orders.1"], ["orders", "orders.1.2", "order.1", "orders.*"]),
        ("orders.*", "x.$1", ["orders.a"], ["orders.", "orders.>", ".orders.a"]),
        ("orders.>", "x.>", ["orders.1", "orders.1.2"], ["orders", "x.1", "orders.>", "orders..a"]),
        ("a.b", "c", ["a.b"], ["a.c", "a.b.c", "a"]),
        (">", "x.>", ["a", "a.b"], ["a..b", "*", "a.>"]),
        ("foo", "", ["foo"], ["bar", "foo.bar"]),
        # Server quirk: a source token starting with '*' matches any token.
        ("a.*x", "b", ["a.*x", "a.q"], ["a.q.r"]),
    ],
)
def test_matching(src, dest, yes, no):
    tr = compile_transform(src, dest)
    for s in yes:
        assert tr.matches(s), s
        assert tr.apply(s) is not None, s
    for s in no:
        assert not tr.matches(s), s
        assert tr.apply(s) is None, s


def test_identity_shortcut_passes_everything():
    # src '>' with dest '>' or empty: the server returns the subject untouched, unchecked.
    for dest in (">", ""):
        tr = compile_transform("", dest)
        assert tr.src == ">"
        assert tr.apply("a..b") == "a..b"
        assert tr.matches("anything")


# --- errors ------------------------------------------------------------------------------

OOR = "invalid mapping destination: wildcard index out of range in"
UNKNOWN = "invalid mapping destination: unknown function in"
NOT_ENOUGH = "invalid mapping destination: not enough arguments passed to the function in"
TOO_MANY = "invalid mapping destination: too many arguments passed to the function in"
BAD_ARG = "invalid mapping destination: function argument is invalid or in the wrong format in"


@pytest.mark.parametrize(
    ("src", "dest", "reason"),
    [
        # Invalid subjects, '*' in the destination, '>' on one side only.
        ("foo..", "bar", "invalid subject"),
        ("foo.>.bar", "x.>", "invalid subject"),
        ("foo", "bar..baz", "invalid subject"),
        ("foo.*", "bar.*", "invalid subject"),
        ("foo.*", "bar.$1.>", "invalid subject"),
        ("foo.>", "bar.baz", "invalid subject"),
        ("foo.>", "bar.>.baz", "invalid subject"),
        # Wildcard indexes: the token is followed by ": [index]" in the wildcard case.
        ("foo.*", "bar.$2", f"{OOR} $2: [2]"),
        ("foo.*", "foo.{{wildcard(2)}}", f"{OOR} {{{{wildcard(2)}}}}: [2]"),
        ("foo.*", "foo.{{partition(3,1,2)}}", f"{OOR} {{{{partition(3,1,2)}}}}: [2]"),
        ("foo.>", "foo.{{wildcard(1)}}.>", f"{OOR} {{{{wildcard(1)}}}}: [1]"),
        # Without any wildcard in the source only partition and random are allowed.
        ("foo", "bla.{{wildcard(1)}}", f"{OOR} {{{{wildcard(1)}}}}"),
        ("foo", "bla.$1", f"{OOR} $1"),
        ("foo", "bla.{{split(1,-)}}", f"{OOR} {{{{split(1,-)}}}}"),
        ("foo.bar", "{{left(1,1)}}", f"{OOR} {{{{left(1,1)}}}}"),
        ("foo.bar", "{{splitfromleft(1,1)}}", f"{OOR} {{{{splitfromleft(1,1)}}}}"),
        # Unknown functions (names are case-insensitive on each word's first letter only).
        ("foo.*", "foo.{{unimplemented(1)}}", f"{UNKNOWN} {{{{unimplemented(1)}}}}"),
        ("foo.*", "foo.{{ wildcard5) }}", f"{UNKNOWN} {{{{ wildcard5) }}}}"),
        ("foo.*", "foo.{{splitLeft(2,2}}", f"{UNKNOWN} {{{{splitLeft(2,2}}}}"),
        ("foo.*", "foo.{{WILDCARD(1)}}", f"{UNKNOWN} {{{{WILDCARD(1)}}}}"),
        ("foo.*", "foo.{{nope(1)}}", f"{UNKNOWN} {{{{nope(1)}}}}"),
        ("foo", "{{x}}", f"{UNKNOWN} {{{{x}}}}"),
        # Argument counts.
        ("foo.*", "foo.{{wildcard()}}", f"{NOT_ENOUGH} {{{{wildcard()}}}}"),
        ("foo.*", "foo.{{wildcard(1,2)}}", f"{TOO_MANY} {{{{wildcard(1,2)}}}}"),
        ("foo.*", "foo.{{splitfromleft(1)}}", f"{NOT_ENOUGH} {{{{splitfromleft(1)}}}}"),
        ("foo.*", "foo.{{slicefromright(1,2,3)}}", f"{TOO_MANY} {{{{slicefromright(1,2,3)}}}}"),
        ("foo.*", "foo.{{left(1)}}", f"{NOT_ENOUGH} {{{{left(1)}}}}"),
        ("foo.*", "foo.{{right(1,2,3)}}", f"{TOO_MANY} {{{{right(1,2,3)}}}}"),
        ("foo.*", "foo.{{split(1)}}", f"{NOT_ENOUGH} {{{{split(1)}}}}"),
        ("foo.*", "foo.{{split(1,-,x)}}", f"{TOO_MANY} {{{{split(1,-,x)}}}}"),
        ("foo.*", "foo.{{random(1,2)}}", f"{NOT_ENOUGH} {{{{random(1,2)}}}}"),
        # Invalid arguments.
        ("foo.*", "foo.{{partition()}}", f"{BAD_ARG} {{{{partition()}}}}"),
        ("foo.*", "foo.{{random()}}", f"{BAD_ARG} {{{{random()}}}}"),
        ("foo.*", "foo.{{wildcard(foo)}}", f"{BAD_ARG} {{{{wildcard(foo)}}}}"),
        ("foo.*", "foo.{{wildcard(1e0)}}", f"{BAD_ARG} {{{{wildcard(1e0)}}}}"),
        ("foo.*", "foo.{{partition(x,1)}}", f"{BAD_ARG} {{{{partition(x,1)}}}}"),
        ("foo.*", "foo.{{partition(2,y)}}", f"{BAD_ARG} {{{{partition(2,y)}}}}"),
        ("foo.*", "foo.{{partition(2147483648)}}", f"{BAD_ARG} {{{{partition(2147483648)}}}}"),
        ("foo.*", "foo.{{random(2147483648)}}", f"{BAD_ARG} {{{{random(2147483648)}}}}"),
        ("foo.*", "foo.{{left(1,2147483648)}}", f"{BAD_ARG} {{{{left(1,2147483648)}}}}"),
        ("foo.*", "foo.{{splitfromleft(a,2)}}", f"{BAD_ARG} {{{{splitfromleft(a,2)}}}}"),
        ("foo.*", "foo.{{split(1,- )}}", f"{BAD_ARG} {{{{split(1,- )}}}}"),
        ("foo.*", "foo.{{split(x,-)}}", f"{BAD_ARG} {{{{split(x,-)}}}}"),
        ("foo.*", "foo.{{wildcard(1_0)}}", f"{BAD_ARG} {{{{wildcard(1_0)}}}}"),
        ("foo.*", "foo.{{wildcard(\t1)}}", f"{BAD_ARG} {{{{wildcard(\t1)}}}}"),
        # The first bad token wins.
        ("foo.*", "{{nope()}}.{{wildcard(9)}}", f"{UNKNOWN} {{{{nope()}}}}"),
        ("foo.*", "{{wildcard(9)}}.{{nope()}}", f"{OOR} {{{{wildcard(9)}}}}: [9]"),
    ],
)
def test_compile_errors(src, dest, reason):
    with pytest.raises(TransformError) as info:
        compile_transform(src, dest)
    assert info.value.reason == reason
    assert str(info.value) == reason
    # validate_mapping reports the same, except where its own first pass fires earlier.
    with pytest.raises(TransformError) as again:
        validate_mapping(src, dest)
    assert again.value.reason == VALIDATE_MAPPING_FIRST.get(dest, reason)


# What validate_mapping's first pass (empty tokens, tokens after '>', unknown function
# names, whitespace) reports before compile_transform's checks run.
VALIDATE_MAPPING_FIRST = {
    "bar..baz": "invalid mapping destination: invalid transform",
    "bar.>.baz": "invalid mapping destination: invalid transform in baz",
    "{{wildcard(9)}}.{{nope()}}": f"{UNKNOWN} {{{{nope()}}}}",
}


def test_error_parts():
    with pytest.raises(TransformError) as info:
        compile_transform("foo.*", "x.{{nope(1)}}")
    assert info.value.why == "invalid mapping destination: unknown function"
    assert info.value.token == "{{nope(1)}}"
    with pytest.raises(TransformError) as info:
        compile_transform("foo.*", "x.*")
    assert (info.value.why, info.value.token) == ("invalid subject", None)


@pytest.mark.parametrize(
    ("src", "dest"),
    [
        ("foo.*.*", "bar.$2"),
        ("foo.*.*", "bar.{{wildcard(1)}}"),
        ("foo.*.*", "bar.{{partition(1)}}"),
        ("foo.*.*", "bar.{{random(5)}}"),
        ("foo", "bar"),
        ("foo.*.bar.*.baz", "req.$2.$1"),
        ("baz.>", "mybaz.>"),
        ("*", "{{splitfromleft(1,1)}}"),
        ("", "prefix.>"),
        ("*.*", "{{partition(10,1,2)}}"),
        ("foo.*.*", "foo.{{wildcard(1)}}.{{wildcard(2)}}.{{partition(5,1,2)}}"),
        ("foo.*", "foo.{{partition(2147483647)}}"),
        ("foo.*", "foo.{{random(2147483647)}}"),
        ("foo.bar", "foo.{{random(2147483647)}}"),
        ("foo.bar", "foo.{{partition(3, 1)}}"),
        ("foo.*", "foo.{{}}"),  # too short to be a function: literal text
        ("foo", "{{a}"),
        # compile_transform does not check whitespace (the server's NewSubjectTransform).
        ("foo bar", "x y"),
    ],
)
def test_compile_accepts(src, dest):
    tr = compile_transform(src, dest)
    assert isinstance(tr, SubjectTransform)
    assert tr.dest == dest
    assert tr.src == (src or ">")


# --- ValidateMapping (stream, source and mirror transforms) ------------------------------


@pytest.mark.parametrize(
    ("src", "dest"),
    [
        ("bar", "foo"),
        ("foo", "foo.bar"),
        ("*", "{{wildcard(1)}}"),
        ("foo.>", ">"),
        ("foo.*", "bar.{{wildcard(1)}}"),
        ("foo.>", "bar.>"),
        ("foo.*.>", "bar.{{wildcard(1)}}.>"),
        ("foo.*.bar", "bar.{{wildcard(1)}}.foo"),
        ("foo.bar.>", "foo.bar.foo.>"),
        ("*", "foo.{{ wildcard(1) }}"),
        ("*", "foo.{{wildcard( 1 )}}"),
        ("*", "foo.{{partition(2,1)}}"),
        ("*.*", "foo.{{SplitFromLeft(2,1)}}"),
        ("*.*", "foo.{{SplitFromRight(2,1)}}"),
        ("orders.*", "x.{{split(1,-)}}.{{slicefromleft(1,2)}}.{{random(3)}}"),
        # nats-server 2.15.1 accepts left/right in stream transforms (checked on the binary;
        # the main-branch ValidateMapping source lists neither).
        ("*", "foo.{{left(1,2)}}"),
        ("*", "foo.{{ Right (1, 2) }}"),
        # Unanchored, greedy function patterns: the first function found wins.
        ("foo.*", "x.{{left(1,2)}}{{nope}}"),
        ("foo.*", "x.{{partition(-9223372036854775808,1)}}"),
        ("foo.*", "x.$0.$-1.{{wildcard(+1)}}"),
        ("foo", ""),
        ("", ""),
    ],
)
def test_validate_mapping_accepts(src, dest):
    assert validate_mapping(src, dest) is None


@pytest.mark.parametrize(
    ("src", "dest", "reason"),
    [
        ("*", "foo.{{unknown(1)}}", f"{UNKNOWN} {{{{unknown(1)}}}}"),
        ("*.*", "x.{{SPLIT(1,-)}}", f"{UNKNOWN} {{{{SPLIT(1,-)}}}}"),
        ("*.*", "x.{{splitFROMleft(1,1)}}", f"{UNKNOWN} {{{{splitFROMleft(1,1)}}}}"),
        # An unknown function is reported before an earlier token's bad index.
        ("foo.*", "{{wildcard(9)}}.{{nope()}}", f"{UNKNOWN} {{{{nope()}}}}"),
        # The greedy argument pattern swallows the second call: "1)}}{{wildcard(1" is no int.
        (
            "foo.*",
            "x.{{ wildcard(1)}}{{wildcard(1)}}",
            f"{BAD_ARG} {{{{ wildcard(1)}}}}{{{{wildcard(1)}}}}",
        ),
        (
            "foo.*",
            "x.{{wildcard(99999999999999999999)}}",
            f"{BAD_ARG} {{{{wildcard(99999999999999999999)}}}}",
        ),
        (
            "foo.*",
            "x.{{wildcard(9223372036854775807)}}",
            f"{OOR} {{{{wildcard(9223372036854775807)}}}}: [9223372036854775807]",
        ),
        # Empty token: no " in <token>" suffix.
        ("foo", "foo..}", "invalid mapping destination: invalid transform"),
        ("foo", "foo.", "invalid mapping destination: invalid transform"),
        ("foo.>", "x.>.y", "invalid mapping destination: invalid transform in y"),
        # Whitespace outside braces.
        ("foo", "foo. bar}", "invalid mapping destination: invalid transform"),
        ("foo", "foo\tbar", "invalid mapping destination: invalid transform"),
        ("foo.*", "x.$ 1", "invalid mapping destination: invalid transform"),
        # Then everything compile_transform checks.
        ("foo.*", "bar.*", "invalid subject"),
        ("foo.*", "bar.$2", f"{OOR} $2: [2]"),
        ("foo", "bla.{{wildcard(1)}}", f"{OOR} {{{{wildcard(1)}}}}"),
    ],
)
def test_validate_mapping_errors(src, dest, reason):
    with pytest.raises(TransformError) as info:
        validate_mapping(src, dest)
    assert info.value.reason == reason


# --- strict (import) mappings --------------------------------------------------------------


def test_strict_rules():
    assert compile_transform("foo.*", "bar.{{Wildcard(1)}}", strict=True).apply("foo.a") == "bar.a"
    with pytest.raises(TransformError) as info:
        compile_transform("foo.*.*", "bar.$2", strict=True)
    assert info.value.reason == (
        "invalid mapping destination: not using all of the token wildcard(s) in bar.$2"
    )
    with pytest.raises(TransformError) as info:
        compile_transform("foo.*", "bar.{{Partition(2,1)}}", strict=True)
    assert info.value.reason == (
        "invalid mapping destination: the only mapping function allowed for import "
        "transforms is {{Wildcard()}} in {{Partition(2,1)}}"
    )
    # "$foo" is literal text, so not all wildcards are used.
    with pytest.raises(TransformError):
        compile_transform("foo.*", "foo.$foo", strict=True)


# --- plan ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("src", "dest", "plan", "rest_from"),
    [
        (
            "orders.*.>",
            "ship.{{wildcard(1)}}.{{partition(8,1)}}.>",
            (("literal", "ship"), ("wildcard", 1), ("partition", (8, (1,))), ("rest",)),
            2,
        ),
        (
            "a.*.b.*",
            "x.$2.{{split(1,-)}}.{{left(2,3)}}.{{random(4)}}.{{partition(5)}}",
            (
                ("literal", "x"),
                ("wildcard", 3),
                ("split", (1, "-")),
                ("left", (3, 3)),
                ("random", 4),
                ("partition", (5, ())),
            ),
            None,
        ),
        (
            "*.*",
            "{{splitFromLeft(1,2)}}.{{SplitFromRight(2,1)}}.{{sliceFromLeft(1,3)}}."
            "{{sliceFromRight(2,4)}}.{{right(1,1)}}.{{partition(6,2,1)}}",
            (
                ("splitFromLeft", (0, 2)),
                ("splitFromRight", (1, 1)),
                ("sliceFromLeft", (0, 3)),
                ("sliceFromRight", (1, 4)),
                ("right", (0, 1)),
                ("partition", (6, (1, 0))),
            ),
            None,
        ),
        ("foo.bar", "p.{{partition(4,1)}}", (("literal", "p"), ("partition", (4, ()))), None),
        ("a.*", "x.$0", (("literal", "x"), ("wildcard", 0)), None),
        ("a.*.>", "", (("wildcard", 0), ("wildcard", 1), ("rest",)), 2),
    ],
)
def test_plan(src, dest, plan, rest_from):
    tr = compile_transform(src, dest)
    assert tr.plan == plan
    assert tr.rest_from == rest_from


# --- properties ---------------------------------------------------------------------------

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Subject tokens with neither '*' nor '>' (a function could cut "a*" into "a.*").
sub_token = st.text(st.sampled_from(list("abcz0189-_é")), min_size=1, max_size=8)


@st.composite
def transform_and_subject(draw):
    """A valid wildcard source, a destination built from the functions, a matching subject."""
    src_tokens = draw(
        st.lists(st.one_of(st.just("*"), st.sampled_from(["a", "b"])), min_size=1, max_size=4)
    )
    if "*" not in src_tokens:
        src_tokens[draw(st.integers(0, len(src_tokens) - 1))] = "*"
    fwc = draw(st.booleans())
    nwild = src_tokens.count("*")
    index = st.integers(1, nwild)
    small = st.integers(-1, 6)
    dest_token = st.one_of(
        st.sampled_from(["lit", "x-y", "$foo"]),
        index.map(lambda i: f"${i}"),
        index.map(lambda i: f"{{{{wildcard({i})}}}}"),
        st.tuples(st.integers(0, 20), st.lists(index, max_size=3)).map(
            lambda a: "{{partition(" + ",".join(map(str, [a[0], *a[1]])) + ")}}"
        ),
        st.tuples(
            st.sampled_from(
                ["splitFromLeft", "splitFromRight", "sliceFromLeft", "sliceFromRight"]
                + ["left", "right"]
            ),
            index,
            small,
        ).map(lambda a: f"{{{{{a[0]}({a[1]},{a[2]})}}}}"),
        st.integers(1, 9).map(lambda n: f"{{{{random({n})}}}}"),
    )
    dest_tokens = draw(st.lists(dest_token, min_size=1, max_size=5))
    src = ".".join(src_tokens + ([">"] if fwc else []))
    dest = ".".join(dest_tokens + ([">"] if fwc else []))
    subject_tokens = [draw(sub_token) if t == "*" else t for t in src_tokens]
    if fwc:
        subject_tokens += draw(st.lists(sub_token, min_size=1, max_size=3))
    return src, dest, ".".join(subject_tokens)


@FAST
@given(transform_and_subject())
def test_prop_matching_subjects_map_to_valid_literal_subjects(case):
    src, dest, subject = case
    tr = compile_transform(src, dest)
    assert matches(src, subject)
    assert tr.matches(subject)
    out = tr.apply(subject)
    assert out is not None
    assert is_valid_literal_subject(out), (src, dest, subject, out)
    validate_mapping(src, dest)


@FAST
@given(st.lists(sub_token, min_size=1, max_size=4), st.integers(0, 70000))
def test_prop_partition_in_range(tokens, n):
    src = ".".join("*" for _ in tokens)
    positions = ",".join(str(i + 1) for i in range(len(tokens)))
    tr = compile_transform(src, f"{{{{partition({n},{positions})}}}}")
    out = tr.apply(".".join(tokens))
    expected = fnv1a_32("".join(tokens)) % n if n else 0
    assert out == str(expected)
    assert 0 <= int(out) < max(n, 1)


@FAST
@given(st.lists(sub_token, min_size=1, max_size=5))
def test_prop_non_matching_subjects_give_none(tokens):
    tr = compile_transform("orders.*.>", "ship.{{wildcard(1)}}.{{partition(8,1)}}.>")
    subject = ".".join(tokens)
    expected = len(tokens) >= 3 and tokens[0] == "orders"
    assert (tr.apply(subject) is not None) == expected == tr.matches(subject)


# --- benchmark helper -----------------------------------------------------------------------


def test_bench_transform_reports():
    r = bench_transform(20_000)
    assert set(r) == {"subjects", "seconds", "subjects_per_sec", "src", "dest"}
    assert r["subjects"] == 20_000
    assert r["src"] == "orders.*.>"
    assert r["dest"] == "ship.{{wildcard(1)}}.{{partition(8,1)}}.>"
    assert r["seconds"] > 0
    assert r["subjects_per_sec"] == pytest.approx(20_000 / r["seconds"])
    # A loose floor (the target is 300k/s); catches a plan that is re-parsed per call.
    assert r["subjects_per_sec"] > 50_000
