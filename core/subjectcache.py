"""Subject-filter verdicts remembered for one process, by subject NAME.

Whether a stored subject is selected by a filter set depends on the subject's name and the
filters only (``SubjectFilter`` in core/subjects.py, the one definition of matching). The
readers that select an origin's messages by filter (core/replication.py: the per-message
read, the pending count, the SQL path's subject map) ask :func:`memo` for the filter set's
:class:`FilterMemo`: each name is matched once per process, then looked up.

The verdicts are kept by name, never by the ``subjects`` row id. The table has no
AUTOINCREMENT: the id of a deleted subject is given to the next new subject (of any stream of
the cluster), by this process or another one, so a verdict kept by id could outlive its
subject. The readers take each message's subject name in the same query as the message (a
join on ``subjects``), so the name is the current one whatever was deleted, re-created or
written by other processes meanwhile: nothing here needs invalidating.

:func:`matched_hint` is the other thing kept: how many of a stream's subjects a filter set
selected when last counted, kept up to date with the subjects created since (ids above the
last one seen). Readers use it only to choose between two exact ways to read (walk the
subjects' chains when few are selected, scan the range otherwise); a stale hint costs time,
never a wrong answer.

Standard library only.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from .subjects import SubjectFilter

__all__ = ["FilterMemo", "matched_hint", "memo"]

# Names remembered in all (every filter set's verdicts dropped beyond it), and filter sets
# remembered, before starting afresh: a long-lived process (`jetlink serve`) stays bounded.
MAX_NAMES = 1 << 19
MAX_SETS = 256
_remembered = [0]  # names remembered by every memo of the process


class FilterMemo:
    """A filter set's verdicts by subject name: ``matches(subject)`` is
    ``SubjectFilter(filters).matches(subject)``, computed once per name."""

    __slots__ = ("filters", "_flt", "_seen")

    def __init__(self, filters: tuple[str, ...]) -> None:
        self.filters = filters
        self._flt = SubjectFilter(filters)
        self._seen: dict[str, bool] = {}

    def matches(self, subject: str) -> bool:
        seen = self._seen
        verdict = seen.get(subject)
        if verdict is None:
            if _remembered[0] >= MAX_NAMES:
                _forget()
            _remembered[0] += 1
            verdict = seen[subject] = self._flt.matches(subject)
        return verdict

    __call__ = matches


_memos: dict[tuple[str, ...], FilterMemo] = {}


def _forget() -> None:
    for fm in _memos.values():
        fm._seen.clear()
    _remembered[0] = 0


def _key(filters: Iterable[str]) -> tuple[str, ...]:
    # an empty filter selects everything, as core/streamstore/base.py matching_subjects
    return tuple(sorted({f or ">" for f in filters}))


def memo(filters: Iterable[str]) -> FilterMemo:
    """The process's memo of the filter set ``filters`` (order and repeats do not matter)."""
    key = _key(filters)
    found = _memos.get(key)
    if found is None:
        if len(_memos) >= MAX_SETS:
            _forget()
            _memos.clear()
        found = _memos[key] = FilterMemo(key)
    return found


# (database file, stream id, filter set) -> [highest subject id seen (any stream), subjects
# of the stream selected]
_hints: dict[tuple[str, int, tuple[str, ...]], list[int]] = {}


def _db_file(conn: sqlite3.Connection) -> str:
    for _seq, name, path in conn.execute("PRAGMA database_list"):
        if name == "main":
            return str(path)
    return ""  # pragma: no cover - every connection has a main database


def matched_hint(conn: sqlite3.Connection, stream_id: int, filters: Iterable[str]) -> int:
    """About how many subjects of stream ``stream_id`` the filter set selects: counted once
    per process, then extended by the subjects created since (a range of row ids above the
    last one seen: the new rows only). Deleted subjects stay counted and a reused id is not
    seen: a hint for choosing a way to read, never a result."""
    fm = memo(filters)
    key = (_db_file(conn), stream_id, fm.filters)
    hint = _hints.get(key)
    if hint is None:
        if len(_hints) >= MAX_SETS:
            _hints.clear()
        hint = _hints[key] = [0, 0]
    top, count = hint
    new_top = conn.execute("SELECT max(id) FROM subjects").fetchone()[0] or 0
    if new_top < top:  # the highest subjects deleted (or the database made anew): recount
        top = count = 0
    if new_top > top:
        match = fm.matches
        count += sum(1 for (subject,) in conn.execute(
            "SELECT subject FROM subjects WHERE id > ? AND id <= ? AND stream_id = ?",
            (top, new_top, stream_id)) if match(subject))
    hint[0], hint[1] = max(top, new_top), count
    return count
