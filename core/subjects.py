"""NATS subject grammar: one definition used by every other module.

A subject is a ``.``-separated list of tokens. A pattern (filter) may use the wildcards
``*`` (exactly one token) and ``>`` (one or more trailing tokens); a character ``*`` or ``>``
is a wildcard only when it is a whole token (``foo*`` and ``>bar`` are literal tokens).

``is_subset`` and ``overlaps`` reproduce nats-server's ``isSubsetMatch`` and
``SubjectsCollide`` exactly, including one server quirk: in those two functions a token that
merely *starts* with ``*`` (``*x``) is treated like ``*``, and in ``overlaps`` a token
starting with ``>`` is treated as a wildcard as well. ``matches`` and ``SubjectFilter`` follow
the server's subscription matching (sublist, ``matchLiteral``), where only whole-token
wildcards count. For subjects made of ordinary tokens the two agree.

Standard library only.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any, Generic, TypeVar

__all__ = [
    "KeyedSubjectIndex",
    "SubjectFilter",
    "disjoint_groups",
    "has_wildcard",
    "is_subset",
    "is_valid_literal_subject",
    "is_valid_publish_subject",
    "is_valid_subject",
    "literal_prefix",
    "matches",
    "overlaps",
    "tokenize",
]

K = TypeVar("K", bound=Hashable)

PWC = "*"
FWC = ">"
SEP = "."
# The whitespace nats-server rejects inside subjects (Go's "\t\n\f\r ").
_WHITESPACE = ("\t", "\n", "\f", "\r", " ")


def tokenize(subject: str) -> list[str]:
    """Split ``subject`` on ``.``; empty tokens are kept (``"a..b"`` -> ``["a", "", "b"]``)."""
    return subject.split(SEP)


def _has_whitespace(s: str) -> bool:
    return " " in s or "\t" in s or "\n" in s or "\r" in s or "\f" in s


def is_valid_subject(s: str) -> bool:
    """True for a valid subject or pattern (nats-server ``IsValidSubject``).

    Not empty, no empty token, ``>`` only as the last token, no space/tab/CR/LF/FF.
    """
    if not s or _has_whitespace(s):
        return False
    tokens = s.split(SEP)
    if "" in tokens:
        return False
    # '>' may only be the last token.
    return FWC not in tokens or tokens.index(FWC) == len(tokens) - 1


#: :func:`is_valid_subject`'s rule, as an error states it
SUBJECT_RULE = ("tokens separated by '.', none empty, no spaces or tabs, '>' only as the "
                "last token")


def subject_problem(s: object, *, literal: bool = False) -> str | None:
    """Why ``s`` is not a valid subject (``literal``: one a message can carry, no wildcard),
    naming it and the rule; None when it is one."""
    if isinstance(s, str) and is_valid_subject(s) and not (literal and has_wildcard(s)):
        return None
    shown = repr(s) if not isinstance(s, str) or len(s) <= 80 else repr(s[:77] + "...")
    if literal and isinstance(s, str) and is_valid_subject(s):
        return f"subject {shown} has a wildcard token ('*' or '>'): a message's subject has none"
    return f"subject {shown} is not valid: {SUBJECT_RULE}"


def invalid_subject(subject: object, *, literal: bool = True) -> Any:
    """The error a NATS client raises before sending to a bad subject (nats.go's ``nats:
    invalid subject``, no err_code), with :func:`subject_problem` as its detail for people
    (``literal``: a publish, whose subject has no wildcard)."""
    from .errors import client_error

    err = client_error("nats: invalid subject", field="subject")
    err.detail = subject_problem(subject, literal=literal)
    return err


def is_valid_literal_subject(s: str) -> bool:
    """True for a valid subject with no ``*``/``>`` token (what a message can carry)."""
    return is_valid_subject(s) and not has_wildcard(s)


def is_valid_publish_subject(s: str) -> bool:
    """True for a subject a client may publish to (nats-server ``IsValidPublishSubject``)."""
    return is_valid_literal_subject(s)


def has_wildcard(s: str) -> bool:
    """True when some whole token of ``s`` is ``*`` or ``>``."""
    tokens = s.split(SEP)
    return PWC in tokens or FWC in tokens


def literal_prefix(pattern: str) -> str:
    """The tokens of ``pattern`` before its first wildcard token, each followed by ``.``
    (``"orders.eu.*.new"`` -> ``"orders.eu."``; ``""`` when it starts with one, or when it
    has none): every subject the pattern :func:`matches` starts with it."""
    head: list[str] = []
    for t in pattern.split(SEP):
        if t == PWC or t == FWC:
            return "".join(h + SEP for h in head)
        head.append(t)
    return ""


def _match_tokens(ptoks: list[str], stoks: list[str]) -> bool:
    n = len(stoks)
    last = len(ptoks) - 1
    for i, pt in enumerate(ptoks):
        if pt == FWC and i == last:
            return n > i
        if i >= n:
            return False
        if pt != PWC and pt != stoks[i]:
            return False
    return len(ptoks) == n


def matches(pattern: str, subject: str) -> bool:
    """True when the literal ``subject`` is matched by ``pattern``.

    ``*`` matches exactly one token, a final ``>`` one or more tokens; every other token
    (including ``foo*`` or ``>bar``) must be equal. ``subject`` is not validated.
    """
    if pattern == subject:
        return True
    return _match_tokens(pattern.split(SEP), subject.split(SEP))


def _is_subset_tokens(tokens: list[str], test: list[str]) -> bool:
    # nats-server isSubsetMatchTokenized, token by token.
    n = len(tokens)
    for i, t2 in enumerate(test):
        if i >= n or not t2:
            return False
        if t2 == FWC:
            return True
        t1 = tokens[i]
        if not t1 or t1 == FWC:
            return False
        if t1 == PWC:
            if t2 != PWC:
                return False
            continue
        if t2[0] != PWC and t1 != t2:
            return False
    return n == len(test)


def is_subset(a: str, b: str) -> bool:
    """True when every subject matched by ``a`` is matched by ``b``.

    Exactly nats-server's ``subjectIsSubsetMatch(a, b)``: ``foo.*`` is a subset of ``>``,
    ``*.*`` and ``foo.*``, not of ``foo.bar``; ``foo.>`` is a subset of ``foo.>`` but not of
    ``foo.*``. Server quirk kept: a token of ``b`` starting with ``*`` acts as ``*``.
    """
    return _is_subset_tokens(a.split(SEP), b.split(SEP))


def disjoint_groups(patterns: list[str]) -> list[list[str]]:
    """``patterns`` as groups a consumer's ``filter_subjects`` takes (nats-server refuses
    filters that overlap, 10138): a pattern that is a subset of another is dropped (the
    other matches all it does), the rest put in the first group none of whose patterns it
    overlaps. Every subject one of ``patterns`` matches is matched by exactly the same
    groups' union; a subject may be matched in two groups (read twice: de-duplicate)."""
    kept: list[str] = []
    for i, p in enumerate(patterns):
        if p in kept or any(is_subset(p, q) and not (is_subset(q, p) and j > i)
                            for j, q in enumerate(patterns) if j != i and q != p):
            continue
        kept.append(p)
    groups: list[list[str]] = []
    for p in kept:
        for g in groups:
            if not any(overlaps(p, q) for q in g):
                g.append(p)
                break
        else:
            groups.append([p])
    return groups


def _analyze(tokens: list[str]) -> tuple[bool, bool]:
    return PWC in tokens, FWC in tokens


def _tokens_can_match(t1: str, t2: str) -> bool:
    if not t1 or not t2:
        return False
    c1, c2 = t1[0], t2[0]
    if c1 == PWC or c2 == PWC or c1 == FWC or c2 == FWC:
        return True
    return t1 == t2


def overlaps(a: str, b: str) -> bool:
    """True when some literal subject could be matched by both ``a`` and ``b``.

    Exactly nats-server's ``SubjectsCollide(a, b)`` (symmetric): ``foo.*`` and ``*.foo``
    collide, ``foo.*`` and ``foo.*.bar.>`` do not. Server quirk kept: when both sides have
    wildcards, a token starting with ``*`` or ``>`` can match any token.
    """
    if a == b:
        return True
    toks1 = a.split(SEP)
    toks2 = b.split(SEP)
    pwc1, fwc1 = _analyze(toks1)
    pwc2, fwc2 = _analyze(toks2)
    lit1 = not (pwc1 or fwc1)
    lit2 = not (pwc2 or fwc2)
    if lit1 and lit2:
        return False  # a != b
    if lit1:
        return _is_subset_tokens(toks1, toks2)
    if lit2:
        return _is_subset_tokens(toks2, toks1)
    n1, n2 = len(toks1), len(toks2)
    if n1 != n2:
        # The shorter side needs a '>' to reach the longer one.
        if (n1 < n2 and not fwc1) or (n2 < n1 and not fwc2):
            return False
    for t1, t2 in zip(toks1, toks2, strict=False):  # the shorter side ends in '>' (above)
        if not _tokens_can_match(t1, t2):
            return False
    return True


class _Node:
    """A level of the SubjectFilter token trie."""

    __slots__ = ("children", "pwc", "fwc", "end")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.pwc: _Node | None = None  # child reached through a '*' token
        self.fwc = False  # some pattern ends with '>' here
        self.end = False  # some pattern ends exactly here


def _trie_match(node: _Node, toks: list[str], i: int, n: int) -> bool:
    while True:
        if i == n:
            return node.end
        if node.fwc:
            return True  # '>' takes the remaining (at least one) tokens
        if node.pwc is not None and _trie_match(node.pwc, toks, i + 1, n):
            return True
        nxt = node.children.get(toks[i])
        if nxt is None:
            return False
        node = nxt
        i += 1


class SubjectFilter:
    """A compiled set of patterns; ``.matches(subject)`` is True when any pattern matches.

    Same semantics as ``any(matches(p, subject) for p in patterns)``, in time that grows with
    the subject's length rather than with the number of patterns. An empty set matches
    nothing. Raises ``ValueError`` for an invalid pattern.
    """

    __slots__ = ("patterns", "_literals", "_all", "_root")

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns: tuple[str, ...] = tuple(patterns)
        literals: set[str] = set()
        root: _Node | None = None
        match_all = False
        for p in self.patterns:
            if not isinstance(p, str) or not is_valid_subject(p):
                raise ValueError(f"invalid subject filter {p!r}")
            toks = p.split(SEP)
            if PWC not in toks and FWC not in toks:
                literals.add(p)
                continue
            if p == FWC:
                match_all = True
            if root is None:
                root = _Node()
            node = root
            for t in toks:
                if t == FWC:
                    node.fwc = True
                    break
                if t == PWC:
                    if node.pwc is None:
                        node.pwc = _Node()
                    node = node.pwc
                else:
                    nxt = node.children.get(t)
                    if nxt is None:
                        nxt = node.children[t] = _Node()
                    node = nxt
            else:
                node.end = True
        self._literals = frozenset(literals)
        self._all = match_all
        self._root = root

    def matches(self, subject: str) -> bool:
        """True when ``subject`` (a literal subject) is matched by one of the patterns."""
        if self._all or subject in self._literals:
            return True
        root = self._root
        if root is None:
            return False
        toks = subject.split(SEP)
        return _trie_match(root, toks, 0, len(toks))

    __call__ = matches

    def __len__(self) -> int:
        return len(self.patterns)

    def __repr__(self) -> str:
        return f"SubjectFilter({list(self.patterns)!r})"


def _any_token(t: str) -> bool:
    """A token the index treats as standing for any one token: ``*``, and, as the server's
    ``SubjectsCollide`` / ``isSubsetMatch`` quirks do, any token starting with ``*`` or ``>``
    (a whole ``>`` token is kept apart: it takes the rest)."""
    return t[:1] == PWC or t[:1] == FWC


class _IndexNode:
    """A level of the :class:`KeyedSubjectIndex` token trie."""

    __slots__ = ("lit", "wild", "rest", "end")

    def __init__(self) -> None:
        self.lit: dict[str, _IndexNode] = {}  # child by a literal token
        self.wild: _IndexNode | None = None  # child by a token starting with '*' or '>'
        self.rest: dict[Any, int] = {}  # keys with a subject ending in '>' here (how many)
        self.end: dict[Any, int] = {}  # keys with a subject ending exactly here

    def empty(self) -> bool:
        return not (self.lit or self.wild or self.rest or self.end)


def _count(counts: dict[Any, int], key: Any, by: int) -> None:
    n = counts.get(key, 0) + by
    if n > 0:
        counts[key] = n
    else:
        counts.pop(key, None)


def _subtree_keys(node: _IndexNode, out: set[Any]) -> None:
    stack = [node]
    while stack:
        n = stack.pop()
        out.update(n.rest)
        out.update(n.end)
        stack.extend(n.lit.values())
        if n.wild is not None:
            stack.append(n.wild)


class KeyedSubjectIndex(Generic[K]):
    """Keys (streams) by the subjects they hold, to find without looking at every key those
    whose subjects can match or overlap a subject.

    ``candidates(subject)`` is a superset of the keys holding a subject ``s`` for which
    ``overlaps(subject, s)`` or ``matches(s, subject)`` is true (``s`` and ``subject`` any
    strings): a trie of the held subjects' tokens, walked with ``subject``'s; a token that
    may stand for others on either side (``*``, ``>``, and any token starting with one of
    them, the server's quirk) follows every branch. The caller applies the rule itself to
    the candidates, so the rule stays defined once (:func:`overlaps`, :func:`matches`). An
    invalid held subject makes its key a candidate of every subject; an invalid
    ``subject``'s candidates are every key. Changes are incremental (:meth:`put`,
    :meth:`discard`: the key's own subjects only). The engine's routing and the topology
    check's overlap search (core/topology/subject_index.py ``SubjectIndex``) both use it.
    """

    __slots__ = ("_root", "_subjects", "_odd")

    def __init__(self) -> None:
        self._root = _IndexNode()
        self._subjects: dict[K, tuple[str, ...]] = {}
        self._odd: dict[K, int] = {}  # keys with invalid subjects: candidates of everything

    def __len__(self) -> int:
        return len(self._subjects)

    def __contains__(self, key: object) -> bool:
        return key in self._subjects

    def subjects(self, key: K) -> tuple[str, ...]:
        """The subjects held for ``key`` (none: empty)."""
        return self._subjects.get(key, ())

    def put(self, key: K, subjects: Iterable[str]) -> None:
        """``key`` holds ``subjects`` now (in place of what it held; none: not indexed)."""
        self.discard(key)
        held = tuple(subjects)
        if not held:
            return
        self._subjects[key] = held
        for s in held:
            self._mark(key, s, 1)

    def discard(self, key: K) -> None:
        """``key`` holds no subject any more (nothing when it held none)."""
        held = self._subjects.pop(key, None)
        for s in held or ():
            self._mark(key, s, -1)

    def _mark(self, key: K, subject: str, by: int) -> None:
        if not is_valid_subject(subject):
            _count(self._odd, key, by)
            return
        path = [self._root] if by < 0 else None  # (to drop emptied branches)
        node = self._root
        for t in subject.split(SEP):
            if t == FWC:  # valid: the last token
                _count(node.rest, key, by)
                break
            if _any_token(t):
                nxt = node.wild
                if nxt is None:
                    nxt = node.wild = _IndexNode()
            else:
                nxt = node.lit.get(t)
                if nxt is None:
                    nxt = node.lit[t] = _IndexNode()
            node = nxt
            if path is not None:
                path.append(node)
        else:
            _count(node.end, key, by)
        if path is not None:  # drop the branches left empty
            toks = subject.split(SEP)
            for depth in range(len(path) - 1, 0, -1):
                if not path[depth].empty():
                    break
                parent, t = path[depth - 1], toks[depth - 1]
                if _any_token(t):
                    parent.wild = None
                else:
                    del parent.lit[t]

    def candidates(self, subject: str) -> set[K]:
        """The keys that may hold a subject overlapping or matching ``subject`` (a
        superset: apply the rule to each)."""
        if not is_valid_subject(subject):
            return set(self._subjects)
        out: set[K] = set(self._odd)
        toks = subject.split(SEP)
        n = len(toks)
        stack = [(self._root, 0)]
        while stack:
            node, i = stack.pop()
            if i == n:
                out.update(node.end)
                continue
            out.update(node.rest)  # a held '>' here takes this token and any after it
            t = toks[i]
            if t == FWC:  # valid: the last token; it takes one token or more of any below
                for child in node.lit.values():
                    _subtree_keys(child, out)
                if node.wild is not None:
                    _subtree_keys(node.wild, out)
                continue
            if _any_token(t):
                stack.extend((child, i + 1) for child in node.lit.values())
            else:
                same = node.lit.get(t)
                if same is not None:
                    stack.append((same, i + 1))
            if node.wild is not None:
                stack.append((node.wild, i + 1))
        return out

    def candidates_of(self, subjects: Iterable[str]) -> set[K]:
        """The union of :meth:`candidates` of each of ``subjects``."""
        out: set[K] = set()
        for s in subjects:
            out |= self.candidates(s)
        return out
