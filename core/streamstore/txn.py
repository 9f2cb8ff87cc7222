"""StreamTxn: one stream inside one write transaction, the engine behind core/jetstream.py.

Composed of its collaborators, each a class over the shared core (overlay.py), so a method
of one calls the others' directly, with no call layer on the hot paths: appending
(append.py), limits (limits.py) and purge (purge.py). ``Txn.stream(StreamDef)`` in
core/streams.py creates one per stream and transaction.
"""

from __future__ import annotations

from .append import StreamAppend
from .limits import StreamLimits
from .purge import StreamPurge


class StreamTxn(StreamAppend, StreamLimits, StreamPurge):
    """One stream inside one write transaction. ``flush()`` writes everything back.

    Appends and removals work on an in-memory overlay: pending rows (lists, so a later
    append can still set their ``next`` pointer), removed sequences, pointer changes of stored
    rows, subject states. ``flush()`` turns them into a few ``executemany`` statements.

    - the shared core (:class:`~.overlay.StreamOverlay`): ``flush``, ``prefetch_subjects``,
      ``last_seq_for``, the counters ``first_seq`` / ``last_seq`` / ``last_ts`` / ``msgs`` /
      ``bytes``, ``wrote``;
    - appending (:class:`~.append.StreamAppend`): ``append``, ``append_plain``,
      ``append_sourced``, ``sourced_fast``, ``prefetch_msg_ids``, ``maybe_prune_dedupe``;
    - limits (:class:`~.limits.StreamLimits`): ``expire``, ``enforce_limits``;
    - purge (:class:`~.purge.StreamPurge`): ``purge``, ``notify_purge``, ``remove_seqs``,
      ``skip_to``.
    """
