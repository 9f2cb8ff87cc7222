"""Overlap detection of stream subjects: :class:`SubjectIndex`, a trie of (pattern, owner)
entries queried with patterns (the whole-topology check that the subjects of two streams of
one cluster do not overlap is core/topology/checks.py's, and uses it).
"""

from __future__ import annotations

import re

from ..subjects import overlaps

__all__ = ["SubjectIndex"]

# Not subjects.SubjectFilter's trie: that one answers yes/no for LITERAL subjects; this one
# keeps (pattern, owner) entries and is queried with PATTERNS for overlaps (SubjectsCollide).
class _Node:
    __slots__ = ("lit", "pwc", "fwc", "end")

    def __init__(self) -> None:
        self.lit: dict[str, _Node] = {}
        self.pwc: _Node | None = None
        self.fwc: list[tuple[str, int]] = []  # patterns with '>' at this depth
        self.end: list[tuple[str, int]] = []  # patterns ending here


_ODD_TOKEN = re.compile(r"(?:^|\.)[*>][^.]")


def _odd(subject: str) -> bool:
    """A token that only starts with a wildcard character: the server's overlap quirks apply."""
    return ("*" in subject or ">" in subject) and _ODD_TOKEN.search(subject) is not None


class SubjectIndex:
    """Subject patterns of many streams; ``query(p)`` finds the stored patterns overlapping
    ``p`` (nats-server ``SubjectsCollide``) without comparing against every one of them."""

    def __init__(self) -> None:
        self.root = _Node()
        self.odd: list[tuple[str, int]] = []
        self.all: list[tuple[str, int]] = []

    def insert(self, subject: str, owner: int) -> None:
        entry = (subject, owner)
        self.all.append(entry)
        tokens = subject.split(".")
        if _odd(subject):
            self.odd.append(entry)
            return
        node = self.root
        for t in tokens:
            if t == ">":
                node.fwc.append(entry)
                return
            if t == "*":
                if node.pwc is None:
                    node.pwc = _Node()
                node = node.pwc
            else:
                nxt = node.lit.get(t)
                if nxt is None:
                    nxt = node.lit[t] = _Node()
                node = nxt
        node.end.append(entry)

    def query(self, subject: str) -> list[tuple[str, int]]:
        """Stored (subject, owner) pairs whose subject overlaps ``subject``."""
        tokens = subject.split(".")
        if _odd(subject):
            return [e for e in self.all if overlaps(subject, e[0])]
        found: list[tuple[str, int]] = []
        n = len(tokens)
        stack = [(self.root, 0)]
        while stack:
            node, i = stack.pop()
            if i == n:
                found.extend(node.end)
                continue
            found.extend(node.fwc)
            t = tokens[i]
            if t == ">":
                for child in node.lit.values():
                    _collect(child, found)
                if node.pwc is not None:
                    _collect(node.pwc, found)
                continue
            if t == "*":
                stack.extend((child, i + 1) for child in node.lit.values())
            else:
                step = node.lit.get(t)
                if step is not None:
                    stack.append((step, i + 1))
            if node.pwc is not None:
                stack.append((node.pwc, i + 1))
        if self.odd:
            found.extend(e for e in self.odd if overlaps(subject, e[0]))
        return found


def _collect(node: _Node, out: list[tuple[str, int]]) -> None:
    stack = [node]
    while stack:
        nd = stack.pop()
        out.extend(nd.end)
        out.extend(nd.fwc)
        stack.extend(nd.lit.values())
        if nd.pwc is not None:
            stack.append(nd.pwc)
