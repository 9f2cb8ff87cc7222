"""Overlap detection of stream subjects: :class:`SubjectIndex`, (pattern, owner) entries
queried with patterns (the whole-topology check that the subjects of two streams of one
cluster do not overlap is core/topology/checks.py's, and uses it).

The walk is core/subjects.py's :class:`~jetlink.core.subjects.KeyedSubjectIndex` (the
engine's routing index): it gives the entries that may overlap, and the rule itself,
:func:`~jetlink.core.subjects.overlaps` (nats-server ``SubjectsCollide``), decides.
"""

from __future__ import annotations

from ..subjects import KeyedSubjectIndex, overlaps

__all__ = ["SubjectIndex"]


class SubjectIndex:
    """Subject patterns of many streams; ``query(p)`` finds the stored patterns overlapping
    ``p`` (nats-server ``SubjectsCollide``) without comparing against every one of them."""

    def __init__(self) -> None:
        self._entries: list[tuple[str, int]] = []
        self._index: KeyedSubjectIndex[int] = KeyedSubjectIndex()

    def insert(self, subject: str, owner: int) -> None:
        self._index.put(len(self._entries), (subject,))
        self._entries.append((subject, owner))

    def query(self, subject: str) -> list[tuple[str, int]]:
        """Stored (subject, owner) pairs whose subject overlaps ``subject``, in the order
        they were stored."""
        entries = self._entries
        return [entries[k] for k in sorted(self._index.candidates(subject))
                if overlaps(subject, entries[k][0])]
