"""The stored form of a stream, shared by core/streams.py and the write engine beside it.

- keys: a message's ``msgs.id`` is ``(stream_id << SEQ_BITS) | seq`` (:func:`msg_key`,
  :func:`key_range`);
- byte accounting: what the server reports as ``state.bytes`` (:func:`msg_size`; sizes are
  not stored, :func:`payload_sql` computes them);
- source headers stored by reference (``src_hdrs`` in store/schema.py): the SQL rules;
- :func:`parse_msg_ttl` and the server's integer parse (``parseInt64``): rules of the publish
  path that core/streams.py exports;
- the reads the engine shares with the readers of core/streams.py (:func:`matching_subjects`,
  :func:`load_msg`, a subject's chain).

The bottom of the stream modules: it imports none of them (core/streamdef.py reads its record
sizes). core/streams.py re-exports the public names (their import path stays
``jetlink.core.streams``); the underscore names are for core/streams.py, core/streamdef.py and
core/streamstore/ only.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from ..errors import ApiError, JetlinkError, nats_error
from ..messages import StoredMsg
from ..numbers import go_parse_int64
from ..subjects import SubjectFilter, has_wildcard, literal_prefix

#: a subject's row of the ``subjects`` table (its counts per stream), written in bulk by the
#: store's flush and by the replication's SQL copy
INSERT_SUBJECTS_SQL = ("INSERT INTO subjects(id, stream_id, subject, msgs, first_seq, last_seq) "
                       "VALUES (?, ?, ?, ?, ?, ?)")
UPDATE_SUBJECTS_SQL = "UPDATE subjects SET msgs = ?, first_seq = ?, last_seq = ? WHERE id = ?"

# --- keys -----------------------------------------------------------------------------------
SEQ_BITS = 40
MAX_SEQ = (1 << SEQ_BITS) - 1  # jetlink's largest sequence (first_seq above it is refused)
_MASK = MAX_SEQ


def msg_key(stream_id: int, seq: int) -> int:
    """The ``msgs.id`` of ``seq`` in stream ``stream_id``."""
    return (stream_id << SEQ_BITS) | seq


def key_range(stream_id: int) -> tuple[int, int]:
    base = stream_id << SEQ_BITS
    return base, base | MAX_SEQ


# --- the store's discard-new refusals ----------------------------------------------------------
# The errors ``storeRawMsg`` refuses a message with when a DiscardNew limit is met (the
# server's ErrMaxMsgs, ErrMaxBytes, ErrMaxMsgsPerSubject), as StreamStoreFailed (10077) texts.
MAX_MSGS_REFUSED = "maximum messages exceeded"
MAX_BYTES_REFUSED = "maximum bytes exceeded"
MAX_PER_SUBJECT_REFUSED = "maximum messages per subject exceeded"
_LIMIT_REFUSALS = frozenset((MAX_MSGS_REFUSED, MAX_BYTES_REFUSED, MAX_PER_SUBJECT_REFUSED))


def is_limit_refusal(err: ApiError) -> bool:
    """Whether ``err`` is the store refusing a message at a DiscardNew limit (a mirror drops
    such a message: core/replication.py)."""
    return err.err_code == 10077 and err.description in _LIMIT_REFUSALS


# --- byte accounting (what the server reports as state.bytes) -----------------------------
# file store: record length(4) + seq(8) + ts(8) + subject length(2) + subject + message + hash(8)
#             and, when there are headers, header length(4) + headers.
# memory store: subject + headers + message + 16 (seq + timestamp).
FILE_RECORD_OVERHEAD = 30
FILE_HEADER_OVERHEAD = 4
MEM_RECORD_OVERHEAD = 16
MAX_HEADER_SIZE = 65535  # math.MaxUint16
_UINT64_MAX = (1 << 64) - 1
_SECOND = 1_000_000_000


def msg_size(file_storage: bool, slen: int, hlen: int, mlen: int) -> int:
    if file_storage:
        return FILE_RECORD_OVERHEAD + slen + mlen + (FILE_HEADER_OVERHEAD + hlen if hlen else 0)
    return MEM_RECORD_OVERHEAD + slen + hlen + mlen


def _blen(subject: str) -> int:
    """A subject's length in bytes (UTF-8), as Go's len(string)."""
    return len(subject) if subject.isascii() else len(subject.encode())


# --- the parse rules of the publish headers -----------------------------------------------
def _parse_int64(text: str) -> int:
    """The server's parseInt64: decimal digits only, else -1 (core/numbers.py)."""
    return go_parse_int64(text)


def _as_uint64(text: str) -> int:
    """``uint64(parseInt64(text))`` (a bad number becomes 2^64-1 and never matches)."""
    n = _parse_int64(text)
    return _UINT64_MAX if n < 0 else n & _UINT64_MAX


def _go_parse_duration(text: str) -> int | None:
    """Go's ``time.ParseDuration`` (None when it fails)."""
    from ..durations import DurationError, parse_go_duration

    try:
        return parse_go_duration(text)
    except DurationError:
        return None


def parse_msg_ttl(text: str | None) -> tuple[int, ApiError | None]:
    """The server's ``parseMessageTTL``: seconds (>0), -1 for ``never``, 0 when absent.

    A Go duration (``30s``, ``1h``; at least 1s) or a plain number of seconds; anything else
    is 10165 ``invalid per-message TTL``.
    """
    if not text:
        return 0, None
    if text.lower() == "never":
        return -1, None
    dur = _go_parse_duration(text)
    if dur is not None:
        if dur < _SECOND:
            return 0, nats_error("MessageTTLInvalid")
        return dur // _SECOND, None
    n = _parse_int64(text)
    if n < 0:
        return 0, nats_error("MessageTTLInvalid")
    return n, None


# A source header stored by reference (``src_hdrs`` in store/schema.py): ``msgs.hdr`` holds
# the INTEGER ``(ref << SEQ_BITS) | origin_seq``. These are the rule's only definitions.
def max_src_ref() -> int:
    """The largest ``src_hdrs`` id: a reference stays a positive 64-bit integer."""
    return (1 << (63 - SEQ_BITS)) - 1


def is_src_ref_sql(h: str) -> str:
    """SQL: the header column ``h`` holds a reference."""
    return f"typeof({h}) = 'integer'"


def src_ref_id_sql(h: str) -> str:
    """SQL: the ``src_hdrs`` id of the reference in ``h``."""
    return f"({h} >> {SEQ_BITS})"


def src_ref_sql(ref: str, seq: str) -> str:
    """SQL: the reference to row ``ref`` for origin sequence ``seq``."""
    return f"(({ref} << {SEQ_BITS}) | ({seq} & {_MASK}))"


def hdr_sql(alias: str = "", schema: str = "") -> str:
    """SQL for a stored row's header block as the server stores it: ``hdr``, or, when it
    holds a source header by reference, that block rebuilt. ``schema`` qualifies
    ``src_hdrs`` (``"o."``) as ``msgs`` is."""
    h = f"{alias}hdr"
    return (f"(CASE WHEN {is_src_ref_sql(h)} THEN (SELECT CAST(x.head || ({h} & {_MASK}) "
            f"|| x.tail AS BLOB) FROM {schema}src_hdrs x WHERE x.id = {src_ref_id_sql(h)}) "
            f"ELSE {h} END)")


# A forward link written after its row (``msg_next`` in store/schema.py): the table's entry,
# when the row has one, is its next. These are the rule's only definitions.
SET_NEXT_SQL = "INSERT OR REPLACE INTO msg_next(id, next) VALUES (?, ?)"


def next_sql(alias: str = "msgs.", schema: str = "") -> str:
    """SQL for a stored row's next on its subject's chain: ``alias`` names the row's table
    (qualified: inside the look-up a bare ``id`` would be the entry's own), ``schema`` as for
    :func:`hdr_sql`."""
    return (f"coalesce((SELECT x.next FROM {schema}msg_next x WHERE x.id = {alias}id), "
            f"{alias}next)")


def later_links(conn: sqlite3.Connection, lo: int, hi: int) -> dict[int, int]:
    """The ``msg_next`` entries of keys ``lo``..``hi`` (key -> next): what overrides
    ``msgs.next`` for rows a range read took with their stored ``next``."""
    return dict(conn.execute("SELECT id, next FROM msg_next WHERE id BETWEEN ? AND ?",
                             (lo, hi)))


def drop_links(conn: sqlite3.Connection, singles: list[tuple[int]],
               spans: list[tuple[int, int]]) -> None:
    """The ``msg_next`` entries of removed rows: keys ``singles`` and ranges ``spans``."""
    if singles:
        conn.executemany("DELETE FROM msg_next WHERE id = ?", singles)
    if spans:
        conn.executemany("DELETE FROM msg_next WHERE id BETWEEN ? AND ?", spans)


def payload_sql(file_storage: bool, alias: str = "", schema: str = "") -> str:
    """SQL for a stored row's size without the fixed part and the subject (see msg_size);
    ``schema`` as for :func:`hdr_sql`."""
    extra = FILE_HEADER_OVERHEAD if file_storage else 0
    h = f"{alias}hdr"
    return (f"(length({alias}data) + CASE WHEN {h} IS NULL THEN 0 "
            f"WHEN {is_src_ref_sql(h)} THEN (SELECT x.size FROM {schema}src_hdrs x WHERE "
            f"x.id = {src_ref_id_sql(h)}) + length({h} & {_MASK}) + {extra} "
            f"ELSE length({h}) + {extra} END)")


# --- reads shared with core/streams.py -------------------------------------------------------
def remove_key_range(conn: sqlite3.Connection, lo: int, hi: int, *, payload: str,
                     base_size: int, head: bool) -> tuple[int, int]:
    """Remove a stream's messages with keys ``lo``..``hi`` in one range scan and one range
    delete: the oldest ones (``head``: a purge below a sequence) or the newest (the store's
    ``Truncate``). Each subject loses that end of its chain: its first sequence moves to the
    next of its last removed message (``head``) or its last sequence to the previous of its
    first removed one; a subject left without messages loses its row. ``payload``: the
    stream's payload size SQL (``StreamDef.payload_sql``), ``base_size`` its record size.
    Returns (messages, bytes) removed; the stream's row is the caller's."""
    per: dict[int, list[int]] = {}  # subject id -> [count, payload, the new chain end, key]
    for key, sid, size, edge in conn.execute(
            f"SELECT id, subject_id, {payload}, {'next' if head else 'prev'} FROM msgs "
            "WHERE id BETWEEN ? AND ? ORDER BY id", (lo, hi)):
        p = per.get(sid)
        if p is None:
            per[sid] = [1, size, edge, key]
        else:
            p[0] += 1
            p[1] += size
            if head:
                p[2] = edge
                p[3] = key
    if not per:
        return 0, 0
    if head:  # the chain ends' next as next_sql reads it (one look-up per subject)
        for p in per.values():
            row = conn.execute("SELECT next FROM msg_next WHERE id = ?", (p[3],)).fetchone()
            if row is not None:
                p[2] = row[0]
    conn.execute("DELETE FROM msgs WHERE id BETWEEN ? AND ?", (lo, hi))
    conn.execute("DELETE FROM msg_ttl WHERE id BETWEEN ? AND ?", (lo, hi))
    drop_links(conn, [], [(lo, hi)])
    count = total = 0
    upd, dele = [], []
    for sid, (n, size, edge, _key) in per.items():
        msgs, subject = conn.execute("SELECT msgs, subject FROM subjects WHERE id = ?",
                                     (sid,)).fetchone()
        count += n
        total += size + n * (base_size + _blen(subject))
        if msgs <= n:
            dele.append((sid,))
        else:
            upd.append((msgs - n, edge, sid))
    if upd:
        conn.executemany(f"UPDATE subjects SET msgs = ?, {'first_seq' if head else 'last_seq'}"
                         " = ? WHERE id = ?", upd)
    if dele:
        conn.executemany("DELETE FROM subjects WHERE id = ?", dele)
    return count, total


def matching_subjects(conn: sqlite3.Connection, stream_id: int,
                      pattern: str) -> Iterator[tuple[int, int, int, int, str]]:
    """(id, msgs, first_seq, last_seq, subject) of the stream's subjects matching
    ``pattern``."""
    cols = "id, msgs, first_seq, last_seq, subject"
    if pattern in ("", ">"):
        yield from conn.execute(f"SELECT {cols} FROM subjects WHERE stream_id = ?",
                                (stream_id,))
        return
    if not has_wildcard(pattern):
        row = conn.execute(f"SELECT {cols} FROM subjects WHERE stream_id = ? AND subject = ?",
                           (stream_id, pattern)).fetchone()
        if row:
            yield row
        return
    flt = SubjectFilter([pattern])
    # only the subjects under the pattern's literal tokens, a range of the index
    # subjects_by_name (BINARY order: every "p.<more>" sorts from "p." to before "p/")
    head = literal_prefix(pattern)
    rows = conn.execute(
        f"SELECT {cols} FROM subjects WHERE stream_id = ? AND subject >= ? AND subject < ?",
        (stream_id, head, head[:-1] + "/")) if head else \
        conn.execute(f"SELECT {cols} FROM subjects WHERE stream_id = ?", (stream_id,))
    for row in rows:
        if flt.matches(row[4]):
            yield row


def _chain_from(conn: sqlite3.Connection, base: int, seq: int, last: int,
                payload: str = "0") -> Iterator[tuple[int, int, int]]:
    """(seq, payload size, next) along a subject's chain from ``seq`` up to its ``last``."""
    while seq and seq <= last:
        row = conn.execute(f"SELECT {payload}, {next_sql()} FROM msgs WHERE id = ?",
                           (base | seq,)).fetchone()
        if row is None:  # pragma: no cover - chains are always complete
            raise JetlinkError(f"store inconsistency: broken subject chain at {seq}")
        yield seq, row[0], row[1]
        if seq == last:
            return
        seq = row[1]


_MSG_COLS = f"m.id, s.subject, m.ts, {hdr_sql('m.')}, m.data"
_MSG_FROM = "FROM msgs m JOIN subjects s ON s.id = m.subject_id"


def _stored(row: tuple) -> StoredMsg:
    key, subject, ts, hdr, data = row[:5]
    return StoredMsg(subject=subject, seq=key & _MASK, ts=ts, hdr=hdr, data=data)


def load_msg(conn: sqlite3.Connection, stream_id: int, seq: int) -> StoredMsg | None:
    if not 0 < seq <= MAX_SEQ:
        return None
    row = conn.execute(f"SELECT {_MSG_COLS} {_MSG_FROM} WHERE m.id = ?",
                       (msg_key(stream_id, seq),)).fetchone()
    return _stored(row) if row else None
