"""The stream engine inside one write transaction, :class:`txn.StreamTxn`, by concern.

- base.py: the stored form of a stream (keys, byte accounting, source-header references,
  the reads and parse rules core/streams.py shares with the engine);
- overlay.py: the shared core, one stream's in-memory overlay (pending rows, removed
  sequences, pointer changes, subject states) with its chain bookkeeping and ``flush()``;
- append.py: the publish path (header rules, the store, the duplicate window, rollups);
- limits.py: removals a limit causes (discard old, expiry, a config update);
- purge.py: removals asked for (purge, compact, given sequences, skips);
- txn.py: :class:`StreamTxn`, the three collaborators composed over the core.

core/streams.py imports base.py; the engine itself is imported when a transaction first
writes a stream (``Txn.stream``), so a read such as `jetlink kv get` does not load it. The
import path of :class:`StreamTxn` stays ``jetlink.core.streams``.
"""
