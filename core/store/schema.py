"""The SQLite schema of one cluster database, as ordered migrations.

The core schema version is ``PRAGMA user_version``; :data:`MIGRATIONS` is the ordered list of
steps (step ``i`` brings the database from version ``i`` to ``i + 1``), each applied in its
own ``BEGIN IMMEDIATE`` transaction, so a crash never leaves half a migration behind and two
processes opening a fresh database at once apply each step exactly once.

Other modules (consumers, Kafka-kind clusters, replication) keep their own tables as
*components*: ``Cluster.ensure_schema(component, steps)`` applies their steps the same way and
records the component's version in the ``schema_components`` table. A component's steps, like
the core's, are append-only: never edit a released step, add a new one.

Table notes (see docs/engine.md "Storage layout"):

- ``msgs`` is a rowid table keyed by ``id = (stream_id << 40) | seq``: a stream's messages are
  one contiguous key range (purges are range deletes) and appends to the newest stream use
  SQLite's append path. There is NO secondary index on subjects: each message carries
  ``prev`` / ``next``, the sequences of the previous / next message on the same subject, and
  ``subjects`` keeps each subject's count, first and last sequence. A pointer is meaningful
  only inside [first_seq, last_seq] of its subject (outside it means "none"), so removing a
  subject's oldest or newest message never rewrites a neighbour. ``hdr`` is the raw NATS
  header block exactly as the server stores it (NULL when the message has none). A message's
  accounted size is derived, never stored: ``base + length(subject) + length(data) +
  (4 + length(hdr) if hdr)`` for file storage, ``16 + subject + hdr + data`` for memory.
- ``src_hdrs`` (v2): a message copied by a source's bulk catch-up (core/replication.py, the
  SQL path) whose only header is its ``Nats-Stream-Source`` line stores in ``hdr`` not the
  block but an INTEGER ``(ref << 40) | origin_seq``: the block is ``head || origin_seq ||
  tail`` of ``src_hdrs`` row ``ref`` (``size`` = the bytes of head and tail), the same bytes
  as the server's. Readers never see the integer: ``streams.hdr_sql`` expands it in the
  query and ``streams.payload_sql`` counts its size (one definition each). Rows of
  ``src_hdrs`` are never removed (a few per source and subject).
- ``msg_next`` (v3): a forward link set on a row already stored (the first message of a
  later transaction on the row's subject, a relink around a removed message, a catch-up's
  link into what the target had) is written here, keyed by the row's ``id``, instead of
  rewriting the message's row: a row's next is this table's ``next`` when it has an entry,
  else ``msgs.next`` (``streams.next_sql`` is the rule's one definition in SQL). Writing a
  small row instead of rewriting a message row with its payload is what keeps a publish of
  many subjects near a plain insert. Entries go with their rows (every delete of ``msgs``
  deletes the same keys here); a repair folds them into ``msgs.next`` and empties it.
- ``msg_ttl`` holds the expiry (ns; -1 for ``never``) of messages with a Nats-TTL header only,
  keyed by the same ``id``: ordinary messages pay nothing for TTL support.
- ``core_msgs`` / ``core_subs``: core NATS pub/sub across processes. A subscriber registers
  its filter (refreshed while it lives); a publish writes a ``core_msgs`` row only when a live
  subscription matches, followers poll ``id > cursor``; old rows are pruned by count.
- ``streams`` keeps the StreamState counters (msgs, bytes, first/last seq, last ts) so that
  ``stream info`` never counts; every mutation updates them in the same transaction.
"""

from __future__ import annotations

# Each step is a list of single SQL statements (no executescript: it would COMMIT).
MIGRATIONS: list[list[str]] = [
    # v1: meta, streams, subjects, messages, dedupe window, core pub/sub.
    [
        """CREATE TABLE meta (
            key   TEXT PRIMARY KEY,
            value
        ) WITHOUT ROWID""",
        """CREATE TABLE schema_components (
            component TEXT PRIMARY KEY,
            version   INTEGER NOT NULL
        ) WITHOUT ROWID""",
        """CREATE TABLE streams (
            id          INTEGER PRIMARY KEY,
            name        TEXT NOT NULL UNIQUE,
            config      TEXT NOT NULL,
            created_ns  INTEGER NOT NULL,
            first_seq   INTEGER NOT NULL,
            last_seq    INTEGER NOT NULL,
            last_ts     INTEGER NOT NULL,
            msgs        INTEGER NOT NULL,
            bytes       INTEGER NOT NULL,
            last_msg_id TEXT NOT NULL DEFAULT '',
            dedupe_pruned_ns INTEGER NOT NULL DEFAULT 0
        )""",
        """CREATE TABLE subjects (
            id        INTEGER PRIMARY KEY,
            stream_id INTEGER NOT NULL,
            subject   TEXT NOT NULL,
            msgs      INTEGER NOT NULL,
            first_seq INTEGER NOT NULL,
            last_seq  INTEGER NOT NULL
        )""",
        "CREATE UNIQUE INDEX subjects_by_name ON subjects(stream_id, subject)",
        """CREATE TABLE msgs (
            id         INTEGER PRIMARY KEY,
            subject_id INTEGER NOT NULL,
            ts         INTEGER NOT NULL,
            prev       INTEGER NOT NULL,
            next       INTEGER NOT NULL,
            hdr        BLOB,
            data       BLOB NOT NULL
        )""",
        """CREATE TABLE msg_ttl (
            id      INTEGER PRIMARY KEY,
            expires INTEGER NOT NULL
        )""",
        "CREATE INDEX msg_ttl_by_expiry ON msg_ttl(expires)",
        """CREATE TABLE dedupe (
            stream_id INTEGER NOT NULL,
            msg_id    TEXT NOT NULL,
            seq       INTEGER NOT NULL,
            ts        INTEGER NOT NULL,
            PRIMARY KEY (stream_id, msg_id)
        ) WITHOUT ROWID""",
        """CREATE TABLE core_msgs (
            id      INTEGER PRIMARY KEY AUTOINCREMENT,
            subject TEXT NOT NULL,
            hdr     BLOB,
            data    BLOB NOT NULL,
            ts      INTEGER NOT NULL
        )""",
        """CREATE TABLE core_subs (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            filter     TEXT NOT NULL,
            pid        INTEGER NOT NULL,
            expires_ns INTEGER NOT NULL
        )""",
    ],
    # v2: source headers by reference (see ``src_hdrs`` in the table notes).
    [
        """CREATE TABLE src_hdrs (
            id   INTEGER PRIMARY KEY,
            head TEXT NOT NULL,
            tail TEXT NOT NULL,
            size INTEGER NOT NULL
        )""",
        "CREATE UNIQUE INDEX src_hdrs_by_text ON src_hdrs(head, tail)",
    ],
    # v3: forward links written after their row (see ``msg_next`` in the table notes).
    [
        """CREATE TABLE msg_next (
            id   INTEGER PRIMARY KEY,
            next INTEGER NOT NULL
        )""",
    ],
]

SCHEMA_VERSION = len(MIGRATIONS)
