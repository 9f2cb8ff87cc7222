"""Where a new consumer starts: the clamp at the end of the server's ``selectStartingSeqNo``.

Its own small module so that the replication step (a mirror or source reading its origin
from the start) uses the same rule as :func:`core.consumers.start_state` without importing
the consumer machinery.
"""

from __future__ import annotations


def clamp_start(sseq: int, first: int, last: int, *, explicit: bool) -> int:
    """``sseq`` chosen by the deliver policy, clamped to the stream (``first``/``last``: its
    first and last sequence). ``explicit``: ``sseq`` is the consumer's own
    ``opt_start_seq``, which may point past the end."""
    if first == 0 and not explicit:
        return 1
    if sseq > last and not explicit:
        return last + 1
    if sseq < first:
        return first
    return sseq


def deliver_all_start(first: int, last: int) -> int:
    """The first sequence of a ``deliver_policy: all`` consumer (filters do not move it)."""
    return clamp_start(first, first, last, explicit=False)
