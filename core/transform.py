"""ADR-30 subject transforms, with nats-server's validation rules and error texts.

``compile_transform(src, dest)`` parses and checks a mapping once and returns a
``SubjectTransform`` whose ``apply(subject)`` runs a precomputed plan. ``plan`` describes
each destination token so other back ends (the Spark compiler) translate the same rule:

``("literal", text)``                 the text itself
``("wildcard", pos)``                 source token at 0-based position ``pos``
``("partition", (m, positions))``     FNV-1a 32 of the tokens at ``positions`` concatenated
                                      with no separator (``()``: the whole subject), ``% m``;
                                      ``m == 0`` gives ``"0"``
``("split", (pos, delim))``           token split on ``delim``, empty parts dropped
``("splitFromLeft", (pos, p))``       ``tok[:p] + "." + tok[p:]`` when ``0 < p < len(tok)``
``("splitFromRight", (pos, p))``      ``tok[:-p] + "." + tok[-p:]`` when ``0 < p < len(tok)``
``("sliceFromLeft", (pos, size))``    chunks of ``size`` from the left, remainder last
``("sliceFromRight", (pos, size))``   chunks of ``size`` from the right, remainder first
``("left", (pos, n))`` / ``("right", (pos, n))``  first / last ``n`` bytes when ``0 < n < len``
``("random", m)``                     uniform in ``[0, m)``; ``m == 0`` gives ``"0"``
``("rest",)``                         the source tokens from ``rest_from`` on (trailing ``>``)

Wildcard indexes of the destination (1-based over the source's ``*`` tokens) are already
resolved to token positions in the plan. Lengths count UTF-8 bytes, as the server does.
"""

from __future__ import annotations

import random as _random
import re
from collections.abc import Callable
from typing import Any

from .numbers import IntTextError, parse_int
from .subjects import _is_subset_tokens

__all__ = [
    "SubjectTransform",
    "TransformError",
    "compile_transform",
    "fnv1a_32",
    "validate_mapping",
]

# The server's error texts (nats-server errors.go).
ERR_BAD_SUBJECT = "invalid subject"
_DEST = "invalid mapping destination"
ERR_INVALID_DEST_SUBJECT = f"{_DEST}: invalid transform"
ERR_NOT_USING_ALL_WILDCARDS = f"{_DEST}: not using all of the token wildcard(s)"
ERR_UNKNOWN_FUNCTION = f"{_DEST}: unknown function"
ERR_INDEX_OUT_OF_RANGE = f"{_DEST}: wildcard index out of range"
ERR_NOT_ENOUGH_ARGS = f"{_DEST}: not enough arguments passed to the function"
ERR_INVALID_ARG = f"{_DEST}: function argument is invalid or in the wrong format"
ERR_TOO_MANY_ARGS = f"{_DEST}: too many arguments passed to the function"
ERR_NOT_SUPPORTED_FOR_IMPORT = (
    f"{_DEST}: the only mapping function allowed for import transforms is {{{{Wildcard()}}}}"
)

_INT32_MAX = 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


class TransformError(Exception):
    """A rejected subject mapping.

    ``reason`` is the server's text without any context prefix, e.g. ``invalid subject`` or
    ``invalid mapping destination: unknown function in {{nope(1)}}``; ``why`` is the text
    before `` in <token>`` and ``token`` the offending destination token (or None).
    """

    def __init__(self, why: str, token: str | None = None) -> None:
        reason = why if not token else f"{why} in {token}"
        super().__init__(reason)
        self.reason = reason
        self.why = why
        self.token = token


# --- destination token parsing (the server's indexPlaceHolders) -------------------------

_WS = r"[\t\n\f\r ]*"  # Go regexp's \s


def _function_re(name: str) -> re.Pattern[str]:
    # Each word's first letter is case-insensitive: splitFromLeft -> [sS]plit[fF]rom[lL]eft.
    words = re.findall(r"[a-z]+|[A-Z][a-z]*", name)
    body = "".join(f"[{w[0].lower()}{w[0].upper()}]{w[1:]}" for w in words)
    return re.compile(r"\{\{" + _WS + body + _WS + r"\((.*)\)" + _WS + r"\}\}")


_FN = {
    name: _function_re(name)
    for name in (
        "wildcard",
        "partition",
        "splitFromLeft",
        "splitFromRight",
        "sliceFromLeft",
        "sliceFromRight",
        "right",
        "left",
        "split",
        "random",
    )
}
_ARG_SEP = re.compile(r"," + _WS)


def _go_int(
    text: str, lo: int = _INT64_MIN, hi: int = _INT64_MAX, *, trim: bool = True
) -> int | None:
    """Go's strconv.Atoi/ParseInt(base 10), after trimming spaces; None when it fails."""
    if trim:
        text = text.strip(" ")
    try:
        return parse_int(text, lo, hi)
    except IntTextError:
        return None


def _int32(value: int) -> int:
    """Go's int32(value) conversion (wraps around)."""
    return ((value + 2**31) & 0xFFFFFFFF) - 2**31


def _fn_args(name: str, token: str) -> list[str] | None:
    m = _FN[name].search(token)
    return None if m is None else _ARG_SEP.split(m.group(1))


# A parsed destination token: (kind, wildcard indexes, int argument, string argument).
_Parsed = tuple[str, tuple[int, ...], int, str]
_NO_TRANSFORM: _Parsed = ("literal", (), -1, "")


def _index_int_args(token: str, args: list[str], kind: str) -> _Parsed:
    if len(args) < 2:
        raise TransformError(ERR_NOT_ENOUGH_ARGS, token)
    if len(args) > 2:
        raise TransformError(ERR_TOO_MANY_ARGS, token)
    index = _go_int(args[0])
    value = _go_int(args[1], -(2**31), _INT32_MAX)
    if index is None or value is None:
        raise TransformError(ERR_INVALID_ARG, token)
    return (kind, (index,), value, "")


def _parse_dest_token(token: str) -> _Parsed:
    """Classify one destination token; raises TransformError with the server's text."""
    n = len(token)
    if n <= 1:
        return _NO_TRANSFORM
    if token[0] == "$":  # legacy $N
        index = _go_int(token[1:], trim=False)
        if index is None:
            return _NO_TRANSFORM  # other '$' tokens are plain text
        return ("wildcard", (index,), -1, "")
    if not (n > 4 and token.startswith("{{") and token.endswith("}}")):
        return _NO_TRANSFORM

    args = _fn_args("wildcard", token)
    if args is not None:
        if len(args) == 1 and args[0] == "":
            raise TransformError(ERR_NOT_ENOUGH_ARGS, token)
        if len(args) > 1:
            raise TransformError(ERR_TOO_MANY_ARGS, token)
        index = _go_int(args[0])
        if index is None:
            raise TransformError(ERR_INVALID_ARG, token)
        return ("wildcard", (index,), -1, "")

    args = _fn_args("partition", token)
    if args is not None:
        count = _go_int(args[0])
        if count is None or count > _INT32_MAX:
            raise TransformError(ERR_INVALID_ARG, token)
        indexes = []
        for arg in args[1:]:
            index = _go_int(arg)
            if index is None:
                raise TransformError(ERR_INVALID_ARG, token)
            indexes.append(index)
        return ("partition", tuple(indexes), _int32(count), "")

    for name in ("splitFromLeft", "splitFromRight", "sliceFromLeft", "sliceFromRight"):
        args = _fn_args(name, token)
        if args is not None:
            return _index_int_args(token, args, name)
    for name in ("right", "left"):
        args = _fn_args(name, token)
        if args is not None:
            return _index_int_args(token, args, name)

    args = _fn_args("split", token)
    if args is not None:
        if len(args) < 2:
            raise TransformError(ERR_NOT_ENOUGH_ARGS, token)
        if len(args) > 2:
            raise TransformError(ERR_TOO_MANY_ARGS, token)
        index = _go_int(args[0])
        if index is None or " " in args[1] or "." in args[1]:
            raise TransformError(ERR_INVALID_ARG, token)
        return ("split", (index,), -1, args[1])

    args = _fn_args("random", token)
    if args is not None:
        if len(args) != 1:  # the server says "not enough" for too many as well
            raise TransformError(ERR_NOT_ENOUGH_ARGS, token)
        bound = _go_int(args[0])
        if bound is None or bound > _INT32_MAX:
            raise TransformError(ERR_INVALID_ARG, token)
        return ("random", (), _int32(bound), "")

    raise TransformError(ERR_UNKNOWN_FUNCTION, token)


def _subject_info(subject: str) -> tuple[bool, list[str], int, bool]:
    """(valid, tokens, number of '*' tokens, has '>') - no whitespace check, as the server."""
    if not subject:
        return False, [], 0, False
    tokens = subject.split(".")
    fwc = False
    for t in tokens:
        if not t or fwc:
            return False, [], 0, False
        if t == ">":
            fwc = True
    return True, tokens, tokens.count("*"), fwc


# --- runtime pieces ---------------------------------------------------------------------


def _to_bytes(s: str) -> bytes:
    try:
        return s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogatepass")


# Each byte of a cut character (a surrogate escape \udc80-\udcff once decoded) as U+FFFD.
_CUT_BYTES = {c: "\ufffd" for c in range(0xDC80, 0xDD00)}


def _from_bytes(b: bytes) -> str:
    """A byte function's result as text: a character it cut in two (the server's functions
    count bytes) has each of its bytes read as U+FFFD, as Go's encoding/json writes every
    byte that is not UTF-8 (nats-server stores the bytes themselves; the engine's subjects
    are text, and a subject that is not UTF-8 could not be stored at all)."""
    text = b.decode("utf-8", "surrogateescape")
    return text if text.isascii() else text.translate(_CUT_BYTES)


def fnv1a_32(data: bytes | str) -> int:
    """FNV-1a 32-bit hash (Go's hash/fnv New32a) of ``data`` (str is hashed as UTF-8)."""
    if isinstance(data, str):
        data = _to_bytes(data)
    h = _FNV_OFFSET
    for b in data:
        h = ((h ^ b) * _FNV_PRIME) & 0xFFFFFFFF
    return h


def _split_token(tok: str, delim: str) -> str:
    # The server drops empty parts, except that a token starting with two or more
    # delimiters keeps one leading separator ("--a" -> ".a"). An empty delimiter splits
    # into characters.
    parts = tok.split(delim) if delim else list(tok)
    out: list[str] = []
    for k, part in enumerate(parts):
        if part:
            if out or k > 1:
                out.append(".")
            out.append(part)
    return "".join(out)


# The functions below count bytes like the server: they work on ``str`` for ASCII tokens and
# on the UTF-8 bytes otherwise (``seq`` is a str or bytes, ``sep`` the matching ".").


def _split_from_left(seq: Any, p: int, sep: Any) -> Any:
    return seq[:p] + sep + seq[p:] if 0 < p < len(seq) else seq


def _split_from_right(seq: Any, p: int, sep: Any) -> Any:
    n = len(seq)
    return seq[: n - p] + sep + seq[n - p :] if 0 < p < n else seq


def _slice_from_left(seq: Any, size: int, sep: Any) -> Any:
    n = len(seq)
    if 0 < size < n:
        return sep.join([seq[i : i + size] for i in range(0, n, size)])
    return seq


def _slice_from_right(seq: Any, size: int, sep: Any) -> Any:
    n = len(seq)
    if 0 < size < n:
        rem = n % size
        chunks = [seq[:rem]] if rem else []
        chunks += [seq[i : i + size] for i in range(rem, n, size)]
        return sep.join(chunks)
    return seq


def _left(seq: Any, size: int, sep: Any) -> Any:
    return seq[:size] if 0 < size < len(seq) else seq


def _right(seq: Any, size: int, sep: Any) -> Any:
    n = len(seq)
    return seq[n - size :] if 0 < size < n else seq


_BYTEWISE = {
    "splitFromLeft": _split_from_left,
    "splitFromRight": _split_from_right,
    "sliceFromLeft": _slice_from_left,
    "sliceFromRight": _slice_from_right,
    "left": _left,
    "right": _right,
}


def _apply_function(kind: str, tok: str, arg: Any) -> str:
    """One destination function applied to a token, as the server computes it."""
    if kind == "split":
        return _split_token(tok, arg)
    fn = _BYTEWISE[kind]
    if tok.isascii():
        return fn(tok, arg, ".")
    return _from_bytes(fn(_to_bytes(tok), arg, b"."))


PlanEntry = tuple[Any, ...]


class SubjectTransform:
    """A compiled mapping from ``src`` to ``dest``; build it with ``compile_transform``.

    ``src`` is the source pattern (``>`` when given empty), ``dest`` the destination as given
    (``""``: no transform, matching subjects pass unchanged). ``plan`` is the destination as a
    tuple of ``(kind, args)`` entries (see the module doc), ``rest_from`` the first source
    token position a trailing ``>`` copies (None without one).

    ``matches(subject) -> bool``: ``subject`` is a literal subject matched by ``src`` (the
    server's ``Match``). ``apply(subject) -> str | None``: the transformed subject, or None
    when it does not match. Both are generated functions stored on the instance (no method
    call in between).
    """

    __slots__ = ("src", "dest", "plan", "rest_from", "strict", "matches", "apply", "_built")

    matches: Callable[[str], bool]
    apply: Callable[[str], str | None]

    def __init__(self, src: str, dest: str, plan: tuple[PlanEntry, ...], strict: bool) -> None:
        self.src = src
        self.dest = dest
        self.plan = plan
        self.strict = strict
        stoks = src.split(".")
        self.rest_from: int | None = len(stoks) - 1 if stoks[-1] == ">" else None
        # The fast functions are generated on first use: validating a mapping (the
        # common case in `jetlink validate`) never pays for code generation.
        # A caller that kept the first-use function stays correct (and fast after one call).
        self._built: tuple[Callable[[str], bool], Callable[[str], str | None]] | None = None
        self.matches = self._first_matches
        self.apply = self._first_apply

    def _generate(self) -> tuple[Callable[[str], bool], Callable[[str], str | None]]:
        if self._built is None:
            self._built = _build(self.src, self.src.split("."), self.dest, self.plan,
                                 self.rest_from)
            self.matches, self.apply = self._built
        return self._built

    def _first_matches(self, subject: str) -> bool:
        return self._generate()[0](subject)

    def _first_apply(self, subject: str) -> str | None:
        return self._generate()[1](subject)

    def __call__(self, subject: str) -> str | None:
        return self.apply(subject)

    def __repr__(self) -> str:
        return f"SubjectTransform(src={self.src!r}, dest={self.dest!r})"


# A destination function evaluated per call: (tokens, subject) -> text.
_Op = Callable[[list[str], str], str]


def _random_op(bound: int) -> _Op:
    if bound == 0:
        return lambda t, s: "0"
    bits = _random.getrandbits
    return lambda t, s: str(bits(31) % bound)


def _token_op(kind: str, pos: int, arg: Any) -> _Op:
    return lambda t, s: _apply_function(kind, t[pos], arg)


# --- compiling a plan into a function ---------------------------------------------------
#
# A plan is turned into the source of one small function (as namedtuple and dataclasses
# do): straight-line code, no loop over the plan per call, the FNV walk inlined. Only
# integers are written into that source; every string and helper is passed in by name.


class _Codegen:
    def __init__(self) -> None:
        self.env: dict[str, Any] = {"_to_bytes": _to_bytes}

    def const(self, value: Any) -> str:
        name = f"_k{len(self.env)}"
        self.env[name] = value
        return name

    def function(self, name: str, body: list[str]) -> Callable[..., Any]:
        # The constants become closure cells of a factory (fast to read in the body).
        params = ", ".join(self.env)
        source = (
            f"def _make({params}):\n"
            f"    def {name}(subject):\n"
            + "".join(f"        {line}\n" for line in body)
            + f"    return {name}\n"
        )
        namespace: dict[str, Any] = {}
        exec(compile(source, f"<transform {name}>", "exec"), namespace)  # noqa: S102
        fn = namespace["_make"](**self.env)
        fn.__source__ = source
        return fn


def _reject_condition(gen: _Codegen, stoks: list[str], rest_from: int | None) -> str:
    """A Python expression over ``t`` that is true when the subject must be refused."""
    nsrc = len(stoks)
    conds = []
    if rest_from is not None:
        if nsrc > 1:
            conds.append(f"len(t) < {nsrc}")
    else:
        conds.append(f"len(t) != {nsrc}")
    for i, tok in enumerate(stoks[:rest_from]):
        # A source token starting with '*' matches any token (the server's isSubsetMatch).
        if tok[0] != "*":
            conds.append(f"t[{i}] != {gen.const(tok)}")
    conds.append('"" in t or "*" in t or ">" in t')
    return " or ".join(conds)


def _partition_code(
    gen: _Codegen, var: str, modulus: int, positions: tuple[int, ...]
) -> list[str]:
    """Statements that set ``var`` to the partition number's text."""
    if modulus == 0:
        return [f"{var} = '0'"]
    if positions:
        text = " + ".join(f"t[{p}]" for p in positions)  # tokens joined with no separator
    else:
        text = "subject"
    lines = [
        "try:",
        f"    {var}_b = ({text}).encode()",
        "except UnicodeEncodeError:",
        f"    {var}_b = _to_bytes({text})",
    ]
    if modulus <= 4096 and modulus & (modulus - 1) == 0:
        # Only the low bits of the hash decide the result and they evolve on their own:
        # the state stays below the modulus and each byte is one table look-up.
        mask = modulus - 1
        table = gen.const([((x & mask) * _FNV_PRIME) & mask for x in range(max(256, modulus))])
        names = gen.const([str(i) for i in range(modulus)])
        lines += [
            f"{var}_h = {_FNV_OFFSET & mask}",
            f"for b in {var}_b:",
            f"    {var}_h = {table}[{var}_h ^ b]",
            f"{var} = {names}[{var}_h]",
        ]
    else:
        lines += [
            f"{var}_h = {_FNV_OFFSET}",
            f"for b in {var}_b:",
            f"    {var}_h = (({var}_h ^ b) * {_FNV_PRIME}) & 0xFFFFFFFF",
        ]
        if modulus <= 4096:
            names = gen.const([str(i) for i in range(modulus)])
            lines.append(f"{var} = {names}[{var}_h % {modulus}]")
        else:
            lines.append(f"{var} = str({var}_h % {modulus})")
    return lines


def _build(
    src: str,
    stoks: list[str],
    dest: str,
    plan: tuple[PlanEntry, ...],
    rest_from: int | None,
) -> tuple[Callable[[str], bool], Callable[[str], str | None]]:
    """Make the (matches, apply) functions for a plan."""
    if src == ">" and dest in (">", ""):
        # The server's shortcut: everything passes unchanged, not even validated.
        return (lambda s: True), (lambda s: s)

    if not _subject_info(src)[0]:
        # Only reachable for "no transform" with a source the server never checks here.
        def odd_match(subject: str) -> bool:
            t = subject.split(".")
            return not ("" in t or "*" in t or ">" in t) and _is_subset_tokens(t, stoks)

        return odd_match, lambda s: s if odd_match(s) else None

    gen = _Codegen()
    reject = _reject_condition(gen, stoks, rest_from)
    matches = gen.function("matches", ['t = subject.split(".")', f"return not ({reject})"])
    if not dest:
        body = ['t = subject.split(".")', f"if {reject}:", "    return None", "return subject"]
        return matches, gen.function("apply", body)

    body = ['t = subject.split(".")', f"if {reject}:", "    return None"]
    pieces: list[str] = []  # expressions whose values are joined with "."
    literal_run: list[str] = []

    def flush() -> None:
        if literal_run:
            pieces.append(gen.const(".".join(literal_run)))
            literal_run.clear()

    for n, entry in enumerate(plan):
        kind = entry[0]
        if kind == "literal":
            literal_run.append(entry[1])
            continue
        flush()
        if kind == "wildcard":
            pieces.append(f"t[{entry[1]}]")
        elif kind == "rest":
            # The tokens a trailing '>' matched are the end of the subject itself.
            before = [f"len(t[{i}])" for i in range(rest_from or 0)]
            offset = " + ".join(before + [str(rest_from)])
            pieces.append(f"subject[{offset}:]")
        elif kind == "partition":
            body += _partition_code(gen, f"v{n}", *entry[1])
            pieces.append(f"v{n}")
        elif kind == "random":
            pieces.append(f"{gen.const(_random_op(entry[1]))}(t, subject)")
        else:
            pos, arg = entry[1]
            pieces.append(f"{gen.const(_token_op(kind, pos, arg))}(t, subject)")
    flush()
    dot = gen.const(".")
    # One f-string of names, indexing and calls: a single BUILD_STRING per call.
    body.append("return f'" + "{" + "}{".join(_interleave(pieces, dot)) + "}'")
    return matches, gen.function("apply", body)


def _interleave(items: list[str], sep: str) -> list[str]:
    out: list[str] = []
    for i, item in enumerate(items):
        if i:
            out.append(sep)
        out.append(item)
    return out


def _identity_plan(src: str) -> tuple[PlanEntry, ...]:
    """The plan of "no transform": every source token copied (empty for an invalid src)."""
    if not _subject_info(src)[0]:
        return ()
    return tuple(("rest",) if t == ">" else ("wildcard", i) for i, t in enumerate(src.split(".")))


def compile_transform(src: str, dest: str, *, strict: bool = False) -> SubjectTransform:
    """Check and compile the mapping ``src`` -> ``dest`` (nats-server NewSubjectTransform).

    ``strict`` is the server's rule for import mappings (only ``{{wildcard}}``/``$N``, all
    wildcards used). An empty ``src`` means ``>``; an empty ``dest`` means no transform.
    Raises TransformError.
    """
    if dest == "":
        source = src or ">"
        return SubjectTransform(source, "", _identity_plan(source), strict)
    if src == "":
        src = ">"

    svalid, stokens, npwcs, s_fwc = _subject_info(src)
    dvalid, dtokens, d_npwcs, d_fwc = _subject_info(dest)
    if not svalid or not dvalid or d_npwcs > 0 or s_fwc != d_fwc:
        raise TransformError(ERR_BAD_SUBJECT)

    plan: list[PlanEntry] = []
    if npwcs > 0 or s_fwc:
        # 1-based wildcard index -> source token position; unknown indexes (0, negative)
        # fall back to position 0 as in the server.
        positions = [i for i, t in enumerate(stokens) if t == "*"]
        placeholders = 0
        for token in dtokens:
            kind, indexes, intarg, strarg = _parse_dest_token(token)
            if strict and kind not in ("literal", "wildcard"):
                raise TransformError(ERR_NOT_SUPPORTED_FOR_IMPORT, token)
            if kind == "literal":
                plan.append(("rest",) if token == ">" else ("literal", token))
                continue
            if kind == "random":
                plan.append(("random", abs(intarg)))
                continue
            placeholders += len(indexes)
            resolved = []
            for index in indexes:
                if index > npwcs:
                    raise TransformError(ERR_INDEX_OUT_OF_RANGE, f"{token}: [{index}]")
                resolved.append(positions[index - 1] if index >= 1 else 0)
            plan.append(_plan_entry(kind, tuple(resolved), intarg, strarg))
        if strict and placeholders < npwcs:
            raise TransformError(ERR_NOT_USING_ALL_WILDCARDS, dest)
    else:
        for token in dtokens:
            kind, _indexes, intarg, _strarg = _parse_dest_token(token)
            if kind == "literal":
                plan.append(("literal", token))
            elif kind == "random":
                plan.append(("random", abs(intarg)))
            elif kind == "partition":
                # Without wildcards in the source the token list is ignored.
                plan.append(("partition", (intarg & 0xFFFFFFFF, ())))
            else:
                raise TransformError(ERR_INDEX_OUT_OF_RANGE, token)
    return SubjectTransform(src, dest, tuple(plan), strict)


def _plan_entry(kind: str, positions: tuple[int, ...], intarg: int, strarg: str) -> PlanEntry:
    if kind == "partition":
        return ("partition", (intarg & 0xFFFFFFFF, positions))
    if kind == "wildcard":
        return ("wildcard", positions[0])
    if kind == "split":
        return ("split", (positions[0], strarg))
    return (kind, (positions[0], intarg))


def validate_mapping(src: str, dest: str) -> None:
    """Check a stream/source/mirror transform as the server's ValidateMapping does.

    A first pass over the destination tokens runs before ``compile_transform``'s checks:
    an empty token or one after ``>`` is ``invalid mapping destination: invalid transform``
    (`` in <token>`` only when the token is not empty), a ``{{...}}`` token naming no known
    function is ``unknown function``, whitespace outside braces is ``invalid transform``.
    Raises TransformError.
    """
    if dest == "":
        return
    after_fwc = False
    for t in dest.split("."):
        n = len(t)
        if n == 0 or after_fwc:
            raise TransformError(ERR_INVALID_DEST_SUBJECT, t)
        if n > 4 and t.startswith("{{") and t.endswith("}}"):
            if not any(rx.search(t) for rx in _FN.values()):
                raise TransformError(ERR_UNKNOWN_FUNCTION, t)
            continue
        if t == ">":
            after_fwc = True
        elif " " in t or "\t" in t or "\n" in t or "\r" in t or "\f" in t:
            raise TransformError(ERR_INVALID_DEST_SUBJECT)
    compile_transform(src, dest)
