"""Failback's reuse of what the old origin already holds (embedded engine).

A failback makes the old origin O a mirror of the promoted stream P. A mirror keeps its
origin's sequences, so O's messages up to the divergence point are the ones a fresh mirror
of P would copy first: they are kept instead of copied again (Confluent's
``truncate-and-restore`` does the same on a cluster link: the old source's partitions are
truncated to where both sides agree and the topic becomes a mirror).

The divergence point (:func:`agreed_prefix`, read only): O's and P's messages are compared
sequence by sequence from P's first sequence up to the promoted last sequence L (O's
messages before P's first, which P's limits dropped or it never copied, are kept: a mirror
keeps what its origin no longer holds, and nothing else holds them), in SQL over both databases (P's
attached to O's connection): a sequence agrees when both hold no message there, or both hold
one with the same subject, header block, data and time (the whole content, byte for byte,
not a digest of it). The first sequence that does not agree ends the prefix: held by one side
only, content that differs, or a header the mirror's copy strips or acts on
(core/replication.py ``_SQL_UNSAFE``: ``Nats-Expected-*``, ``Nats-Batch-*``, ``Nats-TTL``,
``Nats-Rollup``; a message with such a header is copied, never kept). The prefix kept ends at
the last message stored below it (K); nothing is reused when there is none.

The reuse (:func:`reuse_as_mirror`): ONE write transaction of O's database deletes O and
creates it again as the mirror (core/jetstream.py ``recreate_in_place``: the checks of a
creation, a new creation time, O's consumers, dedupe window, TTL entries, batches and
schedules gone as a deletion removes them) keeping its messages up to K and removing those
after it (the store's ``Truncate(K)``: the subjects' counts and last sequences, the stream's
counters, its last sequence K and last time the message K's). It is refused
(:class:`OriginChanged`) when O's counters moved since the comparison. The mirror's agreement
then starts where a mirror that already holds messages starts (core/replication.py
``_initial_start``: after its last sequence), so the pump copies P's messages from K + 1 at
their sequences: the result is what a full copy gives.

A SIGKILL leaves O as it was or the mirror with its prefix, nothing in between; a run after
either finds what to do (core/dr/failback.py).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .. import streams as S
from ..errors import JetlinkError

__all__ = ["LIVE_REASON", "OriginChanged", "Reuse", "agreed_prefix", "reuse_as_mirror"]

# Why nothing is reused on nats-server: said in the report.
LIVE_REASON = (
    "nats-server makes no stream a mirror by an update (it refuses a change of mirror) and "
    "creates a mirror empty, starting at its origin's first message or at opt_start_seq "
    "with nothing before it: the old origin is deleted and every message is copied")

_MISSING, _ACTED_ON, _DIFFERS, _ONLY_PROMOTED = 1, 2, 3, 4


class OriginChanged(JetlinkError):
    """The old origin changed between the comparison and the reuse (compared again)."""


@dataclass
class Reuse:
    """What failback keeps of the old origin: messages up to ``upto`` (0: none),
    ``messages`` of them; ``reason``: where and why the prefix ends; ``state``: the old
    origin's (first_seq, last_seq, msgs, bytes) when compared; ``copied``: the messages the
    mirror copied after the prefix (known once it copied)."""

    upto: int = 0
    messages: int = 0
    reason: str = ""
    state: list[int] = field(default_factory=list)
    copied: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"messages": self.messages, "upto_seq": self.upto, "copied": self.copied,
                "reason": self.reason}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Reuse:
        return cls(int(doc.get("upto_seq") or 0), int(doc.get("messages") or 0),
                   str(doc.get("reason") or ""), [int(x) for x in doc.get("state") or []],
                   int(doc.get("copied") or 0))


@contextlib.contextmanager
def _both(ocl: Any, pcl: Any) -> Iterator[tuple[sqlite3.Connection, str]]:
    """A read snapshot of O's database with P's attached (its schema name: ``main`` when
    both live in one database)."""
    conn = ocl.conn
    same = ocl is pcl or ocl.path == pcl.path  # one data directory: the same file
    if not same:
        conn.execute("ATTACH DATABASE ? AS fb_p", (str(pcl.path),))
    try:
        with ocl.read() as c:
            yield c, "main" if same else "fb_p"
    finally:
        if not same:
            conn.execute("DETACH DATABASE fb_p")


def _first_disagreement(c: sqlite3.Connection, p: str, ids: tuple[int, int], last: int,
                        start: int = 1) -> tuple[int, int]:
    """(the first sequence from ``start`` up to ``last`` where O and P (stream ids ``ids``)
    do not agree, why); (last + 1, 0) when every one agrees. Each side's subject ids are its
    own: O's mapped to P's by name first (a temporary table of this connection, kept for the
    next comparison: a temporary schema change makes the connection prepare its statements
    again)."""
    from ..replication import _SQL_UNSAFE

    ob, pb = S.msg_key(ids[0], 0), S.msg_key(ids[1], 0)
    c.execute("CREATE TEMP TABLE IF NOT EXISTS fb_subjects "
              "(oid INTEGER PRIMARY KEY, pid INTEGER)")
    c.execute("DELETE FROM temp.fb_subjects")
    c.execute(f"INSERT INTO temp.fb_subjects SELECT so.id, sp.id FROM main.subjects so "
              f"LEFT JOIN {p}.subjects sp ON sp.stream_id = ? AND sp.subject = so.subject "
              "WHERE so.stream_id = ?", (ids[1], ids[0]))
    acted = " OR ".join("instr(lower(CAST(o.hdr AS TEXT)), ?)" for _ in _SQL_UNSAFE)
    acted = f"o.hdr IS NOT NULL AND typeof(o.hdr) != 'integer' AND ({acted})"
    hdr = (f"CASE WHEN typeof(o.hdr) = 'integer' OR typeof(q.hdr) = 'integer' THEN "
           f"{S.hdr_sql('o.', 'main.')} IS NOT {S.hdr_sql('q.', p + '.')} "
           "ELSE o.hdr IS NOT q.hdr END")
    needles = [h.lower() for h in _SQL_UNSAFE]
    row = c.execute(
        f"SELECT o.id - ?, CASE WHEN q.id IS NULL THEN {_MISSING} WHEN {acted} "
        f"THEN {_ACTED_ON} ELSE {_DIFFERS} END FROM main.msgs o "
        f"JOIN temp.fb_subjects m ON m.oid = o.subject_id LEFT JOIN {p}.msgs q "
        "ON q.id = o.id - ? + ? WHERE o.id BETWEEN ? AND ? AND (q.id IS NULL OR "
        f"q.data != o.data OR q.ts != o.ts OR q.subject_id IS NOT m.pid OR {hdr} OR "
        f"({acted})) ORDER BY o.id LIMIT 1",
        (ob, *needles, ob, pb, ob + start, ob + last, *needles)).fetchone()
    bad, why = (row[0], row[1]) if row else (last + 1, 0)
    # from ``start`` to ``bad`` each of O's messages is P's: P holds no other when the
    # counts agree
    count = "SELECT count(*) FROM {}.msgs WHERE id BETWEEN ? AND ?"
    if bad > start and c.execute(count.format("main"),
                                 (ob + start, ob + bad - 1)).fetchone()[0] != \
            c.execute(count.format(p), (pb + start, pb + bad - 1)).fetchone()[0]:
        only_p = c.execute(
            f"SELECT q.id - ? FROM {p}.msgs q WHERE q.id BETWEEN ? AND ? AND NOT EXISTS "
            "(SELECT 1 FROM main.msgs o WHERE o.id = q.id - ? + ?) ORDER BY q.id LIMIT 1",
            (pb, pb + start, pb + bad - 1, pb, ob)).fetchone()
        return only_p[0], _ONLY_PROMOTED
    return bad, why


def agreed_prefix(ocl: Any, origin: str, pcl: Any, promoted: str, last: int,
                  shown: tuple[str, str]) -> Reuse:
    """The prefix of ``origin`` (cluster ``ocl``) that ``promoted`` (cluster ``pcl``) holds
    identically up to sequence ``last`` (the module's opening); ``shown``: both streams as
    the report names them (origin, promoted)."""
    with _both(ocl, pcl) as (c, p):
        orow = c.execute("SELECT id, first_seq, last_seq, msgs, bytes FROM main.streams "
                         "WHERE name = ?", (origin,)).fetchone()
        prow = c.execute(f"SELECT id, first_seq FROM {p}.streams WHERE name = ?",
                         (promoted,)).fetchone()
        if orow is None or prow is None:
            return Reuse(reason="a stream is missing: nothing compared")
        # P's history starts at its first sequence (its limits dropped what came before, or
        # it never copied it): O's messages below it are compared with nothing and kept,
        # as a mirror keeps what its origin no longer holds
        start = max(1, min(int(prow[1]), last + 1))
        bad, why = _first_disagreement(c, p, (orow[0], prow[0]), last, start)
        ob = S.msg_key(orow[0], 0)
        upto = c.execute("SELECT max(id) - ?, count(*) FROM main.msgs WHERE id BETWEEN ? AND ?",
                         (ob, ob + 1, ob + bad - 1)).fetchone()
        older = c.execute("SELECT count(*) FROM main.msgs WHERE id BETWEEN ? AND ?",
                          (ob + 1, ob + start - 1)).fetchone()[0] if start > 1 else 0
        state = list(orow[1:])
    there, here = shown
    words = {_MISSING: f"sequence {bad} is on {there} only",
             _ONLY_PROMOTED: f"sequence {bad} is on {here} only",
             _ACTED_ON: f"sequence {bad} has a header the mirror's copy strips or acts on",
             _DIFFERS: f"sequence {bad} differs"}
    end = words.get(why, f"every message up to the promoted sequence {last} agrees")
    if not upto[1]:
        return Reuse(reason=f"nothing to reuse: {end}", state=state)
    k = int(upto[0])
    kept = (f"; its {older} message{'s' if older != 1 else ''} before {here}'s first "
            f"sequence {start} kept (not on {here})") if older else ""
    return Reuse(k, int(upto[1]), f"{there} and {here} agree up to sequence {k} (subject, "
                 f"headers, data and time compared): {end}{kept}", state)


def _truncate(conn: sqlite3.Connection, d: S.StreamDef, upto: int) -> tuple[int, int]:
    """Stream ``d``'s messages after ``upto`` removed (the store's ``Truncate``); (messages,
    bytes) removed."""
    base, top = S.key_range(d.id)
    return S.remove_key_range(conn, base | (upto + 1), top, payload=d.payload_sql,
                              base_size=d.base_size, head=False)


def reuse_as_mirror(js: Any, cfg: Any, reuse: Reuse) -> None:
    """``cfg.name`` of ``js`` (the old origin) deleted and created again as the mirror
    ``cfg`` keeping its messages up to ``reuse.upto``, in one transaction (the module's
    opening); :class:`OriginChanged` when its counters moved since ``reuse`` was made."""
    with js.write() as txn:
        d = txn.catalog.by_name.get(cfg.name)
        if d is None or d.cfg.mirror is not None:
            raise OriginChanged(f"stream {cfg.name} changed while it was compared")
        txn.flush()
        conn = txn.conn
        now = list(conn.execute("SELECT first_seq, last_seq, msgs, bytes FROM streams "
                                "WHERE id = ?", (d.id,)).fetchone())
        if now != reuse.state:
            raise OriginChanged(f"stream {cfg.name} changed while it was compared")
        d = js.recreate_in_place(txn, d, cfg)
        removed, nbytes = _truncate(conn, d, reuse.upto)
        ts = conn.execute("SELECT ts FROM msgs WHERE id = ?",
                          (S.msg_key(d.id, reuse.upto),)).fetchone()[0]
        conn.execute("UPDATE streams SET last_seq = ?, last_ts = ?, msgs = msgs - ?, "
                     "bytes = bytes - ? WHERE id = ?",
                     (reuse.upto, ts, removed, nbytes, d.id))
