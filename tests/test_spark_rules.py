"""sparkops/rules.py: core's subject rules as Spark SQL expressions, equal to core row for row.

Each check builds one DataFrame of subjects, puts one column per rule (filter list, transform,
transform list), collects once and compares every cell with core's Python result. Results are
compared as bytes (``.cast("binary")`` against core's ``surrogateescape`` bytes), so byte-wise
functions that cut a UTF-8 character in two are checked exactly too.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from jetlink.core.subjects import matches
from jetlink.core.transform import SubjectTransform, TransformError, compile_transform, fnv1a_32

# The partition Arrow UDF runs in Python workers, which need this interpreter (pyarrow, jetlink).
# Set before the session-scoped `spark` fixture starts Spark (fixtures run after collection).
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

# Each example is a Spark job: few of them, and no shrinking (a failure lists every mismatching
# rule and subject already).
FEW = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow],
               phases=[Phase.explicit, Phase.reuse, Phase.generate])


# --- helpers ------------------------------------------------------------------------------


def enc(value: str | None) -> bytes | None:
    """The bytes of a core result (a subject given with surrogate escapes keeps them)."""
    if value is None:
        return None
    try:
        return value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogatepass")


def spark_table(spark, subjects: Sequence[str | None], columns: list[Callable[[Any], Any]]
                ) -> list[list[Any]]:
    """One collect: for each subject (in order), the value of each column builder."""
    from pyspark.sql import functions as F

    df = spark.createDataFrame(list(enumerate(subjects)), "i int, s string")
    cols = [build(F.col("s")).alias(f"c{k}") for k, build in enumerate(columns)]
    rows = sorted(df.select("i", *cols).collect(), key=lambda r: r["i"])
    assert [r["i"] for r in rows] == list(range(len(subjects)))
    return [[bytes(v) if isinstance(v, (bytes, bytearray)) else v for v in list(r)[1:]]
            for r in rows]


def assert_table(subjects, names, got, expected):
    bad = []
    for s, row_got, row_exp in zip(subjects, got, expected, strict=True):
        for name, g, e in zip(names, row_got, row_exp, strict=True):
            if g != e:
                bad.append(f"{name} on {s!r}: spark {g!r}, core {e!r}")
    assert not bad, f"{len(bad)} mismatches:\n" + "\n".join(bad[:30])


def core_filter(filters: Sequence[str], subject: str) -> bool:
    return not filters or any(matches(p, subject) for p in filters)


def core_first(transforms: Sequence[SubjectTransform], subject: str) -> str | None:
    for tr in transforms:
        if tr.matches(subject):
            return tr.apply(subject)
    return subject


def core_pump(transforms, dt, subject: str) -> str:
    from jetlink.core.copyrules import target_subject

    return target_subject(subject, transforms, dt)  # the pump's rule


def check_filters(spark, filter_sets: list[list[str]], subjects: list[str]) -> None:
    from jetlink.sparkops import rules as R

    got = spark_table(spark, subjects,
                      [lambda c, f=f: R.subject_filter(c, f) for f in filter_sets])
    expected = [[core_filter(f, s) for f in filter_sets] for s in subjects]
    assert_table(subjects, [repr(f) for f in filter_sets], got, expected)


def check_transforms(spark, transforms: list[SubjectTransform], subjects: list[str]) -> None:
    from jetlink.sparkops import rules as R

    for tr in transforms:  # core itself: matches and apply agree
        for s in subjects:
            assert (tr.apply(s) is not None) == tr.matches(s), (tr, s)
    got = spark_table(spark, subjects,
                      [lambda c, t=t: R.transform_subject(c, t).cast("binary") for t in transforms])
    expected = [[enc(t.apply(s)) for t in transforms] for s in subjects]
    assert_table(subjects, [repr(t) for t in transforms], got, expected)


def check_lists(spark, cases: list[tuple[list[SubjectTransform], SubjectTransform | None]],
                subjects: list[str]) -> None:
    from jetlink.sparkops import rules as R

    columns: list[Callable[[Any], Any]] = []
    names = []
    for trs, dt in cases:
        columns.append(lambda c, trs=trs: R.first_transform(c, trs).cast("binary"))
        columns.append(lambda c, trs=trs, dt=dt: R.apply_like_pump(c, trs, dt).cast("binary"))
        names += [f"first_transform({trs})", f"apply_like_pump({trs}, {dt})"]
    got = spark_table(spark, subjects, columns)
    expected = [
        [v for trs, dt in cases for v in (enc(core_first(trs, s)), enc(core_pump(trs, dt, s)))]
        for s in subjects
    ]
    assert_table(subjects, names, got, expected)


def executed_plan(spark, column) -> str:
    from pyspark.sql import functions as F

    df = spark.createDataFrame([("a.b",)], "s string").select(column(F.col("s")))
    return df._jdf.queryExecution().executedPlan().toString()


# --- hand-written cases -------------------------------------------------------------------

LONG = ".".join(f"t{i}" for i in range(300))
SUBJECTS = [
    "a", "b", "a.b", "a.b.c", "a.b.c.d", "a.b.c.d.e", "foo.bar", "foo.bar.baz", "orders.eu.42",
    "orders.us.1.paid", "orders.1234567890.created.eu", "x.hello-world", "x.--a", "x.-a", "x.a--",
    "x.---", "x.-", "x.a-b--c-", "x.aXbXXc", "x.abcdefg", "x.abcdefgh",
    # multi-byte UTF-8: 2, 3 and 4 byte characters, cut anywhere by byte-wise functions
    "x.é", "x.éé", "x.aé", "x.€", "x.a€b€c", "x.日本語", "x.😀", "x.a😀b", "é.€.日本.😀x",
    "orders.ünïcödé.paid", "x.é-é--é", "x.ß€😀",
    # not literal subjects: empty tokens, wildcard tokens (core refuses them in transforms)
    "", ".", "a.", ".a", "a..b", "a.*", "a.>", "*", ">", "*.b", "a.*.c", "a.>.c", "a.*x",
    "a b.c", "tab\t.x", "nul\x00.x",
    LONG, "a." + LONG, "x." + "é" * 50,
]

FILTER_SETS = [
    [], [">"], ["a"], ["a.b"], ["*"], ["a.*"], ["*.b"], ["a.>"], ["*.>"], ["*.*"],
    ["a.*.c"], ["a.*.c.>"], ["*.b.>"], ["foo.bar", "orders.>"], ["a", "b", "a.b"],
    ["orders.*.paid", "orders.*.*.eu", "x.é"], ["x.*", ">"], ["a.>.c"], [">.>"], ["a.*x"],
    ["*x"], ["", "a.b"], ["a..b"], ["é.*.日本.>"], ["x.>"], ["t0.*.t2.>"],
    [".".join(["*"] * 300)], [".".join(["*"] * 299) + ".t299"], ["a.t0.>"],
]


def test_subject_filter_hand_cases(spark):
    check_filters(spark, FILTER_SETS, SUBJECTS)


def test_subject_filter_null_subject_and_type(spark):
    from jetlink.sparkops import rules as R

    sets = [[], [">"], ["a"], ["a.*"], ["a", "a.>"]]
    got = spark_table(spark, [None], [lambda c, f=f: R.subject_filter(c, f) for f in sets])
    assert got == [[True, True, None, None, None]]
    with pytest.raises(TypeError):
        R.subject_filter("s", "a.>")


MAPPINGS = [
    # wildcards, legacy $N, literal runs, the trailing '>'
    ("a.*", "{{wildcard(1)}}"), ("a.*.*", "x.$2.$1.y.z"),
    ("*.*", "{{ Wildcard( 2 ) }}.{{wildcard(1)}}"),
    ("orders.*.>", "ship.{{wildcard(1)}}.{{partition(8,1)}}.>"), ("a.>", "b.>"), (">", "x.>"),
    ("*.>", "{{wildcard(1)}}.>"), ("a.*.>", ">"), ("*.*.>", "$2.$1.>"), ("*", "$0"),
    ("*", "{{wildcard(0)}}.lit"), ("a.>", "{{wildcard(0)}}.>"), ("*.*", "$x.{{wildcard(2)}}.$"),
    # partition: modulus 0, powers of two (<= 4096 and larger), others, whole subject, several
    # tokens, negative counts (Go int32 -> uint32), no wildcards in the source
    ("*", "p.{{partition(10)}}"), ("*.*", "p.{{partition(0,1)}}"), ("*.*", "p.{{partition(1,2)}}"),
    ("*.*", "p.{{partition(8,1)}}"), ("*.*", "p.{{partition(4096,2)}}"),
    ("*.*", "p.{{partition(8192,1,2)}}"), ("*.*", "p.{{partition(1000,1,2)}}"),
    ("*.*", "p.{{partition(1000,2,1)}}"), ("*.*", "p.{{partition(4097,1)}}"),
    ("*.*", "p.{{partition(2147483647,1)}}"), ("*.*", "p.{{partition(-1,1)}}"),
    ("*.*", "p.{{partition(-7,2,1)}}"), ("foo.>", "p.{{partition(1000)}}.>"),
    ("foo.bar", "p.{{partition(10,1)}}"), ("orders.*.*.*", "{{partition(3,1,2,3)}}.$3"),
    ("*.*", "{{partition(5,1)}}.{{partition(7,2)}}.{{partition(11)}}"),
    # split
    ("x.*", "{{split(1,-)}}"), ("x.*", "s.{{split(1,--)}}.e"), ("x.*", "{{split(1,X)}}"),
    ("x.*", "{{split(1,é)}}"), ("x.*", "{{split(1,)}}"), ("x.*", "{{split(1,a)}}"),
    ("*.*", "{{split(2,-)}}.{{split(1,)}}"),
    # splitFromLeft / splitFromRight
    ("x.*", "{{splitFromLeft(1,1)}}"), ("x.*", "{{splitFromLeft(1,3)}}"),
    ("x.*", "{{SplitFromLeft(1,0)}}"), ("x.*", "{{splitFromLeft(1,-2)}}"),
    ("x.*", "{{splitFromLeft(1,100)}}"), ("x.*", "{{splitFromRight(1,1)}}"),
    ("x.*", "{{splitFromRight(1,2)}}"), ("x.*", "{{splitFromRight(1,0)}}"),
    ("x.*", "{{splitFromRight(1,7)}}"),
    # sliceFromLeft / sliceFromRight
    ("x.*", "{{sliceFromLeft(1,1)}}"), ("x.*", "{{sliceFromLeft(1,2)}}"),
    ("x.*", "{{sliceFromLeft(1,3)}}"), ("x.*", "{{sliceFromLeft(1,0)}}"),
    ("x.*", "{{sliceFromLeft(1,8)}}"), ("x.*", "{{sliceFromLeft(1,2147483647)}}"),
    ("x.*", "{{sliceFromRight(1,2147483647)}}"), ("x.*", "{{splitFromLeft(1,2147483647)}}"),
    ("x.*", "{{splitFromRight(1,2147483647)}}"), ("x.*", "{{left(1,2147483647)}}"),
    ("x.*", "{{right(1,2147483647)}}"), ("x.*", "{{left(1,-2147483648)}}"),
    ("x.*", "{{sliceFromLeft(1,-2147483648)}}"), ("x.*", "{{sliceFromRight(1,1)}}"),
    ("x.*", "{{sliceFromRight(1,2)}}"), ("x.*", "{{sliceFromRight(1,3)}}"),
    ("x.*", "{{sliceFromRight(1,-1)}}"), ("x.*", "{{sliceFromRight(1,4)}}"),
    # left / right
    ("x.*", "{{left(1,1)}}"), ("x.*", "{{left(1,2)}}"), ("x.*", "{{left(1,0)}}"),
    ("x.*", "{{left(1,5)}}"), ("x.*", "{{Right(1,1)}}"), ("x.*", "{{right(1,2)}}"),
    ("x.*", "{{right(1,-3)}}"), ("x.*", "{{right(1,100)}}"),
    ("*.*", "{{left(2,1)}}.{{right(2,1)}}.{{left(1,2)}}"),
    # random(0) is always "0"
    ("*", "r.{{random(0)}}.{{wildcard(1)}}"), ("a.b", "{{random(0)}}"),
    # no destination: matching subjects pass unchanged; the server's '>' shortcut
    ("a.*", ""), ("a.>", ""), (">", ""), (">", ">"), ("", ">"), ("*.b.*", ""), ("a.*x.>", ""),
    # a source token starting with '*' matches any token
    ("a.*x", "q.lit"), ("*x.*", "{{wildcard(1)}}"),
    # many tokens
    ("t0.>", "head.>"), (".".join(["*"] * 300), "$300.$1.{{partition(97,150,2)}}"),
    ("t0.*.t2.*.>", "{{sliceFromLeft(2,1)}}.$1.>"),
    # literal-only sources, literal tails after wildcards
    ("foo.bar", "baz"), ("orders.*.paid", "paid.$1"), ("a.*.c.d", "$1"),
]
# Sources that are not valid subjects (reachable with no destination only).
ODD_SOURCES = ["a..b", "a.>.b", ">.a", "a.b.", ".a", "*..>", "a.>.>", "x.*.>.y"]


def compiled_mappings() -> list[SubjectTransform]:
    return [compile_transform(src, dest) for src, dest in MAPPINGS] + [
        compile_transform(src, "") for src in ODD_SOURCES
    ]


def test_every_destination_function_is_covered():
    kinds = {entry[0] for tr in compiled_mappings() for entry in tr.plan}
    assert kinds >= {"literal", "wildcard", "rest", "partition", "split", "splitFromLeft",
                     "splitFromRight", "sliceFromLeft", "sliceFromRight", "left", "right",
                     "random"}


def test_transform_subject_hand_cases(spark):
    check_transforms(spark, compiled_mappings(), SUBJECTS)


def test_partition_values_are_core_fnv1a_32(spark):
    from jetlink.sparkops import rules as R

    cases = [  # (src, dest, subject, hashed bytes or str, modulus)
        ("*", "{{partition(10)}}", "foo", "foo", 10),
        ("*.*", "{{partition(1000,1,2)}}", "foo.bar", "foobar", 1000),
        ("*.*", "{{partition(1000,2,1)}}", "bar.foo", "foobar", 1000),
        ("foo.>", "{{partition(1000)}}.>", "foo.bar", "foo.bar", 1000),
        ("*.*", "{{partition(4096,1,2)}}", "é.日本語", "é日本語", 4096),
        ("*", "{{partition(-1,1)}}", "😀", "😀", 2**32 - 1),
        ("*", "{{partition(2147483647,1)}}", "a€b", "a€b", 2**31 - 1),
        ("*", "{{partition(7)}}", "x" * 1000, "x" * 1000, 7),
    ]
    trs = [compile_transform(src, dest) for src, dest, *_ in cases]
    subjects = [c[2] for c in cases]
    got = spark_table(spark, subjects, [lambda c, t=t: R.transform_subject(c, t) for t in trs])
    for k, (_src, _dest, subject, hashed, m) in enumerate(cases):
        value = str(fnv1a_32(hashed) % m)
        expected = trs[k].apply(subject)
        assert expected.split(".")[0] == value  # core's generated code agrees with fnv1a_32
        assert got[k][k] == expected


def test_random_is_refused_by_name(spark):
    from jetlink.sparkops import rules as R

    tr = compile_transform("*", "x.{{random(5)}}.$1")
    with pytest.raises(NotImplementedError, match=r"random\(5\)"):
        R.transform_subject("s", tr)
    with pytest.raises(R.UnsupportedTransformError, match="random"):
        R.apply_like_pump("s", [], tr)
    with pytest.raises(TypeError):
        R.transform_subject("s", ("*", "x"))


def test_null_subject(spark):
    from jetlink.sparkops import rules as R

    trs = [compile_transform("a.*", "$1"), compile_transform("*", "{{partition(3,1)}}")]
    got = spark_table(spark, [None], [
        lambda c: R.transform_subject(c, trs[0]), lambda c: R.transform_subject(c, trs[1]),
        lambda c: R.first_transform(c, trs), lambda c: R.apply_like_pump(c, trs, trs[1]),
    ])
    assert got == [[None, None, None, None]]


LIST_CASES = [
    ([], None),
    ([], compile_transform("a.*", "z.$1")),
    ([compile_transform("a.*", "A.$1"), compile_transform("*.*", "B.$2.$1")], None),
    ([compile_transform("*.*", "B.$2.$1"), compile_transform("a.*", "A.$1")], None),
    # an empty result counts as none in the pump ("x.-" split on '-' gives "")
    ([compile_transform("x.*", "{{split(1,-)}}")], None),
    ([compile_transform("x.*", "{{split(1,-)}}")], compile_transform("*.*", "{{split(2,-)}}")),
    # the stream transform sees the first transform's output, cut characters included
    ([compile_transform("x.*", "y.{{left(1,1)}}"), compile_transform(">", "")],
     compile_transform("y.*", "z.{{split(1,)}}.{{partition(9,1)}}.{{right(1,1)}}")),
    ([compile_transform("x.*", "y.{{sliceFromRight(1,1)}}")], compile_transform("y.>", "w.>")),
    ([compile_transform("orders.*.>", "ship.{{wildcard(1)}}.{{partition(8,1)}}.>")],
     compile_transform("ship.*.*.>", "s.$2.$1.>")),
    ([compile_transform(">", "all.>"), compile_transform("a.*", "never.$1")],
     compile_transform("all.>", "")),
    ([compile_transform("a..b", "")], compile_transform(">", ">")),
    # partition (Python) in both steps, and under the regular-expression functions
    ([compile_transform("*.*", "{{partition(5,1)}}.$2"),
      compile_transform("*", "$1.{{partition(3)}}")],
     compile_transform("*.*", "{{partition(7,1)}}.{{split(2,-)}}.{{sliceFromLeft(2,2)}}")),
]


def test_first_transform_and_apply_like_pump_hand_cases(spark):
    check_lists(spark, LIST_CASES, SUBJECTS)


def test_empty_transform_list_is_the_column_itself(spark):
    from pyspark.sql import functions as F

    from jetlink.sparkops import rules as R

    c = F.col("s")
    assert R.first_transform(c, []) is c
    assert R.apply_like_pump(c, []) is c


def test_python_runs_only_for_partition(spark):
    from jetlink.sparkops import rules as R

    native = [tr for tr in compiled_mappings()
              if not any(e[0] == "partition" and e[1][0] != 0 for e in tr.plan)]
    plan = executed_plan(spark, lambda c: R.first_transform(c, native))
    assert "EvalPython" not in plan
    plan = executed_plan(spark, lambda c: R.subject_filter(c, ["a.*.c.>", "x.*", "y"]))
    assert "EvalPython" not in plan
    tr = compile_transform("*.*", "p.{{partition(8,1)}}")
    plan = executed_plan(spark, lambda c: R.transform_subject(c, tr))
    assert "ArrowEvalPython" in plan and "BatchEvalPython" not in plan


# --- generated cases ----------------------------------------------------------------------

NAMED = ["a", "b", "ab", "abc", "orders", "é", "€uro", "日本語", "😀x", "ß", "a-b--c", "--a", "-",
         "x-", "1234567", "a€b€c", "é-é", "aXbXXc", "A"]
free_token = st.text(
    st.characters(exclude_characters=".", exclude_categories=("Cs",)), min_size=1, max_size=9
)
token = st.one_of(st.sampled_from(NAMED), free_token)
odd_token = st.sampled_from(["", "*", ">", "*x", ">y"])
any_token = st.one_of(token, token, token, odd_token)
subject = st.lists(any_token, min_size=1, max_size=7).map(".".join)


@st.composite
def instance(draw, src: str) -> str:
    """A subject ``src`` should match, sometimes changed a little."""
    toks = src.split(".")
    out: list[str] = []
    for i, t in enumerate(toks):
        if t.startswith("*"):
            out.append(draw(token))
        elif t == ">" and i == len(toks) - 1:
            out += draw(st.lists(token, min_size=1, max_size=3))
        else:
            out.append(t)
    change = draw(st.sampled_from(["none", "none", "none", "replace", "drop", "add"]))
    if change == "replace":
        out[draw(st.integers(0, len(out) - 1))] = draw(any_token)
    elif change == "drop" and len(out) > 1:
        out.pop(draw(st.integers(0, len(out) - 1)))
    elif change == "add":
        out.insert(draw(st.integers(0, len(out))), draw(any_token))
    return ".".join(out)


pattern = st.tuples(
    st.lists(st.sampled_from(["a", "b", "é", "日本語", "*", "*", "*x", ">"]), min_size=1,
             max_size=5),
    st.booleans(),
).map(lambda t: ".".join(t[0] + ([">"] if t[1] else [])))


@FEW
@given(data=st.data())
def test_subject_filter_matches_core(spark, data):
    filter_sets = data.draw(st.lists(st.lists(pattern, max_size=4), min_size=6, max_size=10))
    subjects = data.draw(st.lists(subject, min_size=10, max_size=30))
    for fs in filter_sets:
        for p in fs:
            subjects += data.draw(st.lists(instance(p), min_size=1, max_size=3))
    check_filters(spark, filter_sets, subjects)


def dest_token(w: int) -> st.SearchStrategy[str]:
    # Mostly valid wildcard indexes; 0 (the first token) and w + 1 (refused) now and then.
    i = st.sampled_from([*range(1, w + 1)] * 4 + [0, w + 1]) if w else st.sampled_from([0, 1])
    m = st.sampled_from([0, 1, 2, 3, 7, 8, 16, 100, 1024, 4096, 4097, 5000, 2**31 - 1, -1, -7])
    n = st.sampled_from([-(2**31), -1, 0, 1, 2, 3, 5, 100, 2**31 - 1])
    delim = st.sampled_from(["-", "--", "é", "", "a", "X", "€"])
    fn = st.sampled_from(["splitFromLeft", "splitFromRight", "sliceFromLeft", "sliceFromRight",
                          "left", "right"])
    by_name = st.tuples(fn, i, n).map(lambda t: f"{{{{{t[0]}({t[1]},{t[2]})}}}}")
    return st.one_of(
        st.sampled_from(["x", "y", "é", "$x", "lit-é"]),
        i.map(lambda k: f"{{{{wildcard({k})}}}}"),
        i.map(lambda k: f"${k}"),
        st.tuples(m, st.lists(i, max_size=3)).map(
            lambda t: "{{partition(" + ",".join(map(str, [t[0], *t[1]])) + ")}}"),
        st.tuples(i, delim).map(lambda t: f"{{{{split({t[0]},{t[1]})}}}}"),
        by_name, by_name, by_name, by_name, by_name,
        st.just("{{random(0)}}"),
    )


@st.composite
def mapping(draw) -> SubjectTransform | None:
    """A compiled transform, or None when core refuses the drawn mapping."""
    src_toks = draw(st.lists(st.sampled_from(["a", "b", "é", "日本語", "*", "*", "*", "*x"]),
                             min_size=1, max_size=5))
    fwc = draw(st.booleans())
    if draw(st.integers(0, 9)) == 0:  # no destination: any source, valid or not
        odd = draw(st.lists(st.sampled_from(["a", "*", ">", "", "*x"]), min_size=1, max_size=4))
        return compile_transform(".".join(odd), "")
    src = ".".join(src_toks + ([">"] if fwc else []))
    if draw(st.integers(0, 9)) == 0:
        return compile_transform(src, "")
    w = src_toks.count("*")
    dest_toks = draw(st.lists(dest_token(w), min_size=1, max_size=5))
    dest = ".".join(dest_toks + ([">"] if fwc else []))
    try:
        return compile_transform(src, dest)
    except TransformError:
        return None


def transforms_and_subjects(data, count: int) -> tuple[list[SubjectTransform], list[str]]:
    trs = [t for t in data.draw(st.lists(mapping(), min_size=count, max_size=count))
           if t is not None]
    subjects = data.draw(st.lists(subject, min_size=5, max_size=15))
    for tr in trs:
        subjects += data.draw(st.lists(instance(tr.src), min_size=2, max_size=5))
    return trs, subjects


@FEW
@given(data=st.data())
def test_transform_subject_matches_core(spark, data):
    trs, subjects = transforms_and_subjects(data, 12)
    check_transforms(spark, trs, subjects)


@FEW
@given(data=st.data())
def test_first_transform_and_apply_like_pump_match_core(spark, data):
    trs, subjects = transforms_and_subjects(data, 12)
    cases = []
    for _ in range(4):
        chosen = data.draw(st.lists(st.sampled_from(trs), max_size=3)) if trs else []
        dt = data.draw(st.one_of(st.none(), st.sampled_from(trs))) if trs else None
        cases.append((chosen, dt))
    check_lists(spark, cases, subjects)
