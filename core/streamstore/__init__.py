"""The stream engine inside one write transaction, :class:`txn.StreamTxn`, by concern.

- base.py: the stored form of a stream (keys, byte accounting, source-header references,
  the reads and parse rules core/streams.py shares with the engine), the bottom of the
  stream modules;
- overlay.py: the shared state, one stream's in-memory overlay (pending rows, removed
  sequences, pointer changes, subject states) with its chain bookkeeping and ``flush()``;
- append.py: the publish path (header rules, the store, the duplicate window, rollups);
- limits.py: removals a limit causes (discard old, expiry, a config update);
- purge.py: removals asked for (purge, compact, given sequences, skips);
- txn.py: :class:`StreamTxn`, the three collaborators composed over the state;
- counters.py and schedules.py: runtime features the publish path applies; batches.py and
  fastbatch.py: atomic and fast batch publish, called by core/jetstream.py with a StreamTxn.

Below the engine: core/streamdef.py (``StreamDef``, ``Catalog``), core/republish_rule.py
(what the store needs of RePublish) and core/txnstate.py (the transaction's state the engine
is given). Above it: core/streams.py, whose ``Txn`` composes the engine (imported when a
transaction first writes a stream, ``Txn.stream``, so a read such as `jetlink kv get` does
not load it) and core/republish.py's delivery. The import path of :class:`StreamTxn` stays
``jetlink.core.streams``.
"""
