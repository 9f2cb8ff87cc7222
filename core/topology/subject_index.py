"""Overlap detection of stream subjects: :class:`SubjectIndex`, a trie of (pattern, owner)
entries queried with patterns, and the whole-topology check that the subjects of two
streams of one cluster do not overlap (10065 on the later object).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..subjects import overlaps
from .model import _ERR_OVERLAP, Problem, _is_duplicate, kv_field

if TYPE_CHECKING:  # pragma: no cover
    from .load import Topology

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


def _check_overlaps(topo: Topology, add) -> None:
    """10065: subjects of two streams of one cluster overlap (reported on the later one)."""
    code, err_code, text = _ERR_OVERLAP
    indexes: dict[str, SubjectIndex] = {}
    by_index = {obj.index: obj for obj in topo.objects}
    for obj in topo.objects:
        cfg = obj.effective
        if cfg is None or _is_duplicate(obj) or not cfg.subjects:
            continue
        index = indexes.get(obj.cluster)
        if index is None:
            index = indexes[obj.cluster] = SubjectIndex()
        clashes: list[str] = []
        seen_owners: set[int] = set()
        for subject in cfg.subjects:
            hits = sorted(index.query(subject), key=lambda e: e[1])
            for theirs, owner in hits:
                if owner in seen_owners:
                    continue
                seen_owners.add(owner)
                other = by_index[owner]
                where = f" ({other.label} in {other.file})" if other.file != obj.file else ""
                clashes.append(f'"{subject}" overlaps "{theirs}" of stream {other.name}{where}')
        for subject in cfg.subjects:
            index.insert(subject, obj.index)
        if clashes:
            more = f"; and {len(clashes) - 3} more" if len(clashes) > 3 else ""
            add(obj, Problem(
                obj.file, obj.label, kv_field(obj.kind, "subjects"), err_code,
                f"{text}: " + "; ".join(clashes[:3]) + more,
            ))
    topo._subject_indexes = indexes  # reused by the republish loop check
