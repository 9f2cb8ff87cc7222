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

from collections.abc import Iterable

__all__ = [
    "SubjectFilter",
    "has_wildcard",
    "is_subset",
    "is_valid_literal_subject",
    "is_valid_publish_subject",
    "is_valid_subject",
    "matches",
    "overlaps",
    "tokenize",
]

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
