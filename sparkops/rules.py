"""Core's subject rules compiled into Spark SQL Column expressions.

There is one definition of each rule, in core: the subject grammar and ``matches`` in
core/subjects.py, the ADR-30 transforms in core/transform.py. This module reads core's parsed form
(the pattern's tokens; a compiled ``SubjectTransform``'s ``src``, ``dest``, ``plan`` and
``rest_from``) and builds the same rule as Catalyst expressions. Every function gives the same
result as core, row for row (tests/test_spark_rules.py checks it against core).

Native Spark SQL (no Python in the executors):
- ``subject_filter``: a pattern's tokens become ``=``/``IN``, ``startswith``/``endswith`` and
  token comparisons, with a token count for ``*`` and ``>``;
- the match test of every transform (core's reject rule: token count, literal source tokens,
  no empty, ``*`` or ``>`` subject token);
- the destination functions ``{{wildcard(n)}}`` / ``$n``, the trailing ``>``, ``split``,
  ``splitFromLeft``, ``splitFromRight``, ``sliceFromLeft``, ``sliceFromRight``, ``left``,
  ``right``, ``random(0)`` and ``partition(0, ...)`` (both always ``"0"``);
- ``first_transform`` and ``apply_like_pump`` (CASE WHEN chains over the above).

Arrow UDF: ``partition(n, ...)`` with ``n != 0``. Only the hash runs in Python, in an Arrow
batch: core's ``fnv1a_32`` over the UTF-8 bytes of the selected tokens; the tokens, the modulo
and the text are native. Rows a transform does not match send NULL to the UDF, not bytes.

Not supported: ``random(n)`` with ``n > 0`` raises ``UnsupportedTransformError`` (a
``NotImplementedError``). Its values cannot match core's, and a random column would make a
re-executed Spark task write other subjects than its first attempt.

Bytes: like the server and core, ``left``, ``right``, ``split*From*`` and ``slice*`` count
UTF-8 bytes and may cut a character in two; core then reads each byte of the cut character as
U+FFFD, and so does ``_valid_text`` here. Tokens are taken with ``substring_index``, the byte
functions work on BINARY and every join is a byte concatenation, so results are the exact
bytes core gives; compare with ``.cast("binary")``. ``{{split(n,)}}`` (empty delimiter: one
part per character) cuts the token's hex digits with a regular expression of well-formed UTF-8
sequences, which is how core's ``list(token)`` sees bytes that are not UTF-8.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import LongType

from jetlink.core.subjects import FWC, PWC, SEP
from jetlink.core.transform import SubjectTransform, _subject_info, _to_bytes, fnv1a_32

__all__ = [
    "UnsupportedTransformError",
    "apply_like_pump",
    "first_transform",
    "subject_filter",
    "transform_subject",
]

_MAX_LEN = 2**31 - 1  # "to the end" for substring


class UnsupportedTransformError(NotImplementedError):
    """A transform destination function that has no Spark form (the message names it)."""


# --- tokens -----------------------------------------------------------------------------
#
# Only byte-wise string functions (substring_index, replace, octet_length, startswith, ...):
# split and regexp go through Java strings and would turn bytes that are not UTF-8 into U+FFFD
# (the regular expressions below run on hex digits only).


def _ntokens(s: Column) -> Column:
    """The number of ``.``-separated tokens (``len(s.split("."))``)."""
    dots = F.octet_length(s) - F.octet_length(F.replace(s, F.lit(SEP), F.lit("")))
    return dots + 1


def _token(s: Column, i: int) -> Column:
    """Token ``i`` (0-based) of a subject with more than ``i`` tokens."""
    head = F.substring_index(s, SEP, i + 1)
    return head if i == 0 else F.substring_index(head, SEP, -1)


def _bad_token(s: Column) -> Column:
    """Some token is empty, ``*`` or ``>`` (core: ``"" in t or "*" in t or ">" in t``)."""
    padded = F.concat(F.lit(SEP), s, F.lit(SEP))
    return (
        padded.contains(SEP + SEP)
        | padded.contains(SEP + PWC + SEP)
        | padded.contains(SEP + FWC + SEP)
    )


def _all(conds: list[Column]) -> Column | None:
    out = None
    for c in conds:
        out = c if out is None else out & c
    return out


def _any(conds: list[Column]) -> Column | None:
    out = None
    for c in conds:
        out = c if out is None else out | c
    return out


def _tokens_match(
    s: Column, n: Column, toks: list[str], wild: Callable[[str], bool], *, rest: bool
) -> Column | None:
    """The subject's tokens match ``toks`` (then, with ``rest``, one or more tokens more).

    ``wild(tok)`` tells a token that matches any token; the others must be equal. None: always.
    """
    k = len(toks)
    if not rest and not any(wild(t) for t in toks):
        return s == F.lit(SEP.join(toks))
    lead = 0
    while lead < k and not wild(toks[lead]):
        lead += 1
    tail = k
    if not rest:
        while tail > lead and not wild(toks[tail - 1]):
            tail -= 1
    conds: list[Column] = []
    if not (rest and lead == k):  # else implied by the prefix test
        conds.append(n > k if rest else n == k)
    if lead:
        conds.append(s.startswith(F.lit(SEP.join(toks[:lead]) + SEP)))
    if tail < k:
        conds.append(s.endswith(F.lit(SEP + SEP.join(toks[tail:]))))
    for i in range(lead, tail):
        if not wild(toks[i]):
            conds.append(_token(s, i) == F.lit(toks[i]))
    return _all(conds)


# --- subject filters (core/subjects.py matches) -----------------------------------------


def _as_column(col: Column | str) -> Column:
    return F.col(col) if isinstance(col, str) else col


def subject_filter(col: Column | str, filters: Sequence[str]) -> Column:
    """True when the subject matches one of ``filters`` (core ``matches(pattern, subject)``).

    No filter, or a ``>`` among them, selects every subject: ``lit(True)``. Native.
    """
    if isinstance(filters, str):
        raise TypeError("filters: a sequence of subject filters, not a string")
    filters = list(filters)
    if not filters or FWC in filters:
        return F.lit(True)
    s = _as_column(col)
    n = _ntokens(s)
    literals: list[str] = []
    conds: list[Column] = []
    for pattern in dict.fromkeys(filters):
        toks = pattern.split(SEP)
        rest = len(toks) > 1 and toks[-1] == FWC
        if rest:
            toks = toks[:-1]
        if not rest and PWC not in toks:
            literals.append(pattern)
            continue
        cond = _tokens_match(s, n, toks, lambda t: t == PWC, rest=rest)
        if cond is None:
            return F.lit(True)
        conds.append(cond)
    if literals:
        conds.insert(0, s == F.lit(literals[0]) if len(literals) == 1 else s.isin(literals))
    return _any(conds)  # type: ignore[return-value]


# --- destination functions --------------------------------------------------------------


def _bin(tok: Column) -> Column:
    return tok.cast("binary")


def _str(b: Column) -> Column:
    return b.cast("string")


def _left(tok: Column, size: int) -> Column:
    if size <= 0:
        return tok
    return F.when(F.octet_length(tok) > size, _str(F.substring(_bin(tok), 1, size))).otherwise(tok)


def _right(tok: Column, size: int) -> Column:
    if size <= 0:
        return tok
    return F.when(F.octet_length(tok) > size, _str(F.substring(_bin(tok), -size, size))).otherwise(
        tok
    )


def _split_from_left(tok: Column, p: int) -> Column:
    if p <= 0:
        return tok
    b = _bin(tok)
    rest = F.substring(b, min(p + 1, _MAX_LEN), _MAX_LEN)
    cut = F.concat(_str(F.substring(b, 1, p)), F.lit(SEP), _str(rest))
    return F.when(F.octet_length(tok) > p, cut).otherwise(tok)


def _split_from_right(tok: Column, p: int) -> Column:
    if p <= 0:
        return tok
    b, n = _bin(tok), F.octet_length(tok)
    cut = F.concat(_str(F.substring(b, F.lit(1), n - p)), F.lit(SEP), _str(F.substring(b, -p, p)))
    return F.when(n > p, cut).otherwise(tok)


# Functions that cut a token into several parts work on the hex digits of its bytes (ASCII
# only, so the regular expressions see no decoded text) and build the result with "2E", the
# hex of ".", which no token byte can be. No higher-order function (lambda) is used: Spark
# refuses a lambda over a Python UDF's result, which apply_like_pump can feed in (partition).


def _utf8(text: str) -> bytes:
    # The bytes core's strings stand for.
    return _to_bytes(text)


def _hex(tok: Column) -> Column:
    return F.hex(_bin(tok))


def _unhex(h: Column) -> Column:
    return _str(F.unhex(h))


def _hex_chunks(size: int) -> str:
    # Up to `size` bytes; matches run from the start, so they stay on byte boundaries.
    return f"[0-9A-F]{{1,{min(2 * size, _MAX_LEN)}}}"


def _slice_from_left(tok: Column, size: int) -> Column:
    if size <= 0:
        return tok
    marked = F.regexp_replace(_hex(tok), F.lit(_hex_chunks(size)), F.lit("2E$0"))
    return F.when(F.octet_length(tok) > size, _unhex(F.substring(marked, 3, _MAX_LEN))).otherwise(
        tok
    )


def _slice_from_right(tok: Column, size: int) -> Column:
    if size <= 0:
        return tok
    # Chunks from the right are chunks from the left of the reversed hex digits.
    marked = F.reverse(
        F.regexp_replace(F.reverse(_hex(tok)), F.lit(_hex_chunks(size)), F.lit("E2$0"))
    )  # "<chunk>2E<chunk>2E...<chunk>2E"
    cut = _unhex(F.substring(marked, F.lit(1), F.length(marked) - 2))
    return F.when(F.octet_length(tok) > size, cut).otherwise(tok)


# After the delimiters became "2E " markers: a first run of two or more markers before some
# byte keeps one marker ($1; "++" takes the whole run, so a byte follows); a single first
# marker, a run at the end and the repeats of any other run go ($2 keeps one marker of an
# inner run).
_SPLIT_CLEANUP = "^(?:(2E )(?:2E )++(?=[0-9A-F])|2E )|(?:2E )+$|(2E )(?:2E )*"


def _split(tok: Column, delim: str) -> Column:
    # core _split_token: empty parts dropped, but a token starting with two or more
    # delimiters keeps one leading separator; an empty delimiter splits into characters.
    if delim == "":
        return _split_chars(tok)
    if SEP in delim:
        raise UnsupportedTransformError(f"split with a delimiter containing {SEP!r}: {delim!r}")
    # One "XY " group per byte: a literal replace of the delimiter's groups can then only
    # match on byte boundaries, left to right without overlap, as str.split does.
    spaced = F.regexp_replace(_hex(tok), F.lit("[0-9A-F]{2}"), F.lit("$0 "))
    delim_hex = "".join(f"{b:02X} " for b in _utf8(delim))
    marked = F.replace(spaced, F.lit(delim_hex), F.lit("2E "))
    cleaned = F.regexp_replace(marked, F.lit(_SPLIT_CLEANUP), F.lit("$1$2"))
    return _unhex(F.replace(cleaned, F.lit(" "), F.lit("")))


# One character of a token, in the hex digits of its bytes: a well-formed UTF-8 sequence, else
# a single byte. This is how Python decodes bytes with "surrogateescape" (each byte outside a
# well-formed sequence becomes a character of its own), so this gives core's list(token) for
# any bytes.
_C = "[89AB][0-9A-F]"  # a continuation byte 80-BF
_UTF8_CHAR_HEX = "|".join(
    [
        f"F0[9AB][0-9A-F]{_C}{_C}",  # F0 90-BF
        f"F[1-3]{_C}{_C}{_C}",
        f"F48[0-9A-F]{_C}{_C}",  # F4 80-8F
        f"E0[AB][0-9A-F]{_C}",  # E0 A0-BF
        f"E[1-9A-CEF]{_C}{_C}",
        f"ED[89][0-9A-F]{_C}",  # ED 80-9F (no surrogates)
        f"(?:C[2-9A-F]|D[0-9A-F]){_C}",
        "[0-7][0-9A-F]",
        "[0-9A-F]{2}",  # any other byte, on its own
    ]
)


# The well-formed sequences alone (every alternative but the last, the lone byte).
_UTF8_WELL_FORMED_HEX = _UTF8_CHAR_HEX.rsplit("|", 1)[0]
# From the end of the previous match (\\G), a run of well-formed sequences (possessive: never
# given back) then one byte outside them: that byte becomes EF BF BD.
_CUT_BYTE_HEX = rf"\G((?:{_UTF8_WELL_FORMED_HEX})*+)[0-9A-F]{{2}}"


def _valid_text(b: Column) -> Column:
    """core transform ``_from_bytes``: each byte a function's cut left outside a well-formed
    UTF-8 sequence becomes U+FFFD (EF BF BD)."""
    return _unhex(F.regexp_replace(_hex(b), F.lit(_CUT_BYTE_HEX), F.lit("$1EFBFBD")))


def _split_chars(tok: Column) -> Column:
    """``".".join(list(tok))``: a "." (2E) before each character, the first one dropped."""
    marked = F.regexp_replace(_hex(tok), F.lit(f"(?:{_UTF8_CHAR_HEX})"), F.lit("2E$0"))
    return _unhex(F.substring(marked, 3, _MAX_LEN))


_TOKEN_FUNCTIONS: dict[str, Callable[[Column, Any], Column]] = {
    "split": _split,
    "splitFromLeft": _split_from_left,
    "splitFromRight": _split_from_right,
    "sliceFromLeft": _slice_from_left,
    "sliceFromRight": _slice_from_right,
    "left": _left,
    "right": _right,
}


def _fnv1a_32_batch(data: pa.Array) -> pa.Array:
    # The Arrow UDF's body: core's own hash, one value per row (NULL stays NULL).
    return pa.array(
        [None if b is None else fnv1a_32(b) for b in data.to_pylist()], type=pa.int64()
    )


_UDF: list[Any] = []  # the Arrow UDF, made on first use (executors import this module too)


def _fnv1a_32_udf(data: Column) -> Column:
    if not _UDF:
        _UDF.append(F.arrow_udf(_fnv1a_32_batch, LongType()))
    return _UDF[0](data)


def _partition(s: Column, cond: Column | None, modulus: int, positions: tuple[int, ...]) -> Column:
    if modulus == 0:
        return F.lit("0")
    text = s if not positions else F.concat(*[_token(s, p) for p in positions])
    data = _bin(text)
    if cond is not None:
        data = F.when(cond, data)  # Python UDFs run on every row: send only the matched ones
    return (_fnv1a_32_udf(data) % F.lit(modulus)).cast("string")


def _rest(s: Column, rest_from: int) -> Column:
    """The source tokens from position ``rest_from`` on (the part a trailing '>' matched)."""
    if rest_from == 0:
        return s
    skip = F.octet_length(F.substring_index(s, SEP, rest_from)) + 2  # 1-based, after the '.'
    return _str(F.substring(_bin(s), skip, F.lit(_MAX_LEN)))


# --- transforms -------------------------------------------------------------------------


def _odd_match(s: Column, n: Column, stoks: list[str]) -> Column:
    # core _build's odd_match for an invalid source (only with no destination): no bad token
    # and core _is_subset_tokens(subject tokens, source tokens).
    for j, t2 in enumerate(stoks):
        if t2 == "":
            return F.lit(False)
        if t2 == FWC:
            cond = _tokens_match(s, n, stoks[:j], lambda t: t[0] == PWC, rest=True)
            break
    else:
        cond = _tokens_match(s, n, stoks, lambda t: t[0] == PWC, rest=False)
    return ~_bad_token(s) if cond is None else cond & ~_bad_token(s)


def _compile(s: Column, tr: SubjectTransform) -> tuple[Column | None, Column]:
    """(match condition, result when it matches) of ``tr`` on ``s``; condition None: always."""
    if not isinstance(tr, SubjectTransform):
        raise TypeError(f"expected a compiled SubjectTransform, got {type(tr).__name__}")
    src, dest, plan, rest_from = tr.src, tr.dest, tr.plan, tr.rest_from
    if src == FWC and dest in (FWC, ""):
        return None, s  # core: everything passes unchanged, not even validated
    stoks = src.split(SEP)
    n = _ntokens(s)
    if not _subject_info(src)[0]:
        return _odd_match(s, n, stoks), s
    fixed = stoks if rest_from is None else stoks[:rest_from]
    cond = _tokens_match(s, n, fixed, lambda t: t[0] == PWC, rest=rest_from is not None)
    cond = ~_bad_token(s) if cond is None else cond & ~_bad_token(s)
    if not dest:
        return cond, s

    pieces: list[Column] = []
    run: list[str] = []
    for entry in plan:
        kind = entry[0]
        if kind == "literal":
            run.append(entry[1])
            continue
        if run:
            pieces.append(F.lit(SEP.join(run)))
            run = []
        if kind == "wildcard":
            pieces.append(_token(s, entry[1]))
        elif kind == "rest":
            pieces.append(_rest(s, rest_from or 0))
        elif kind == "partition":
            pieces.append(_partition(s, cond, *entry[1]))
        elif kind == "random":
            if entry[1] != 0:
                raise UnsupportedTransformError(
                    f"transform {src!r} -> {dest!r}: {{{{random({entry[1]})}}}} has no Spark "
                    "form (core's values are random, and a retried Spark task would write "
                    "other subjects)"
                )
            pieces.append(F.lit("0"))
        elif kind in _TOKEN_FUNCTIONS:
            pos, arg = entry[1]
            piece = _TOKEN_FUNCTIONS[kind](_token(s, pos), arg)
            pieces.append(piece if kind == "split" else _valid_text(piece))
        else:
            raise UnsupportedTransformError(
                f"transform {src!r} -> {dest!r}: destination function {kind!r} has no Spark form"
            )
    if run:
        pieces.append(F.lit(SEP.join(run)))
    value = pieces[0]
    if len(pieces) > 1:
        with_dots: list[Column] = []
        for i, p in enumerate(pieces):
            if i:
                with_dots.append(F.lit(SEP))
            with_dots.append(p)
        value = F.concat(*with_dots)
    return cond, value


def transform_subject(col: Column | str, tr: SubjectTransform) -> Column:
    """``tr.apply(subject)``: the transformed subject when ``tr`` matches it, else NULL.

    ``tr`` is a compiled core transform (core ``compile_transform``). Native, except
    ``partition(n, ...)`` with ``n != 0`` (Arrow UDF for the hash); raises
    ``UnsupportedTransformError`` for ``random(n)`` with ``n > 0``.
    """
    cond, value = _compile(_as_column(col), tr)
    return value if cond is None else F.when(cond, value)


def _first(s: Column, transforms: Sequence[SubjectTransform], *, pump: bool) -> Column:
    out: Column | None = None
    for tr in transforms:
        cond, value = _compile(s, tr)
        if pump:
            value = _or(tr, value, s)
        if cond is None:  # matches every subject: the later ones are never reached
            return value if out is None else out.otherwise(value)
        out = F.when(cond, value) if out is None else out.when(cond, value)
    return s if out is None else out.otherwise(s)


def first_transform(col: Column | str, transforms: Sequence[SubjectTransform]) -> Column:
    """The result of the first of ``transforms`` that matches the subject (NATS: first match
    wins), else the subject unchanged; ``col`` itself for an empty list."""
    return _first(_as_column(col), list(transforms), pump=False)


# Destination functions whose text is never empty on a matched subject (its tokens are not
# empty); a destination of several tokens has a "." anyway. Only split can give "".
_NEVER_EMPTY = frozenset(
    {"literal", "wildcard", "rest", "partition", "random", "splitFromLeft", "splitFromRight",
     "sliceFromLeft", "sliceFromRight", "left", "right"}
)


def _or(tr: SubjectTransform, value: Column, fallback: Column) -> Column:
    """Python's ``tr.apply(subject) or fallback`` where ``tr`` matched (value not NULL)."""
    if not tr.dest or len(tr.plan) > 1 or (tr.plan and tr.plan[0][0] in _NEVER_EMPTY):
        return value  # (no destination: the value is the subject, "" only when it is "")
    return F.when(value == F.lit(""), fallback).otherwise(value)


def apply_like_pump(
    col: Column | str,
    transforms: Sequence[SubjectTransform],
    stream_transform: SubjectTransform | None = None,
) -> Column:
    """The target subject as core/copyrules.py ``target_subject`` computes it (every copy
    path's rule).

    ``tsubj = tr.apply(subject) or subject`` for the first ``tr`` of ``transforms`` that
    matches (else the subject), then, with a ``stream_transform`` (the target stream's own),
    ``stream_transform.apply(tsubj) or tsubj``. An empty result counts as none, as in core.
    """
    tsubj = _first(_as_column(col), list(transforms), pump=True)
    if stream_transform is None:
        return tsubj
    cond, value = _compile(tsubj, stream_transform)
    out = _or(stream_transform, value, tsubj)
    return out if cond is None else F.when(cond, out).otherwise(tsubj)
