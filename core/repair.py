"""``jetlink cluster check [NAME] [--repair]``: the integrity of a data directory's databases,
and the repair of a damaged one.

A check runs, per cluster, the file checks of core/store/health.py and SQLite's
``PRAGMA integrity_check``; it never writes.

A repair copies what is still readable of a damaged database into a new file, table by
table in key order (a damaged page loses the rows it held, the rows after it are found by
probing further keys), then makes the streams' derived state true again for the messages
that survived: each subject's count, first and last sequence and chain (``prev`` / ``next``),
each stream's message and byte counts and first sequence, and expiry entries of messages that
are gone. A stream's last sequence never goes back (a sequence is never used twice). The new
file must pass ``integrity_check`` before it replaces the damaged one, which is kept beside
it as ``<name>.db.damaged-<UTC time>``. Nothing else may use the cluster meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .store import DataDir, health
from .store.datadir import connect, connect_salvage, integrity, whole_file
from .store.schema import MIGRATIONS, SCHEMA_VERSION
from .streams import (
    FILE_RECORD_OVERHEAD,
    MEM_RECORD_OVERHEAD,
    SEQ_BITS,
    is_src_ref_sql,
    payload_sql,
    src_ref_id_sql,
)

BATCH = 1_000


@dataclass
class CheckReport:
    name: str
    path: str
    ok: bool
    problems: list[str]
    # False when nothing in the file can be read (emptied, its header overwritten, not a
    # file): a repair would copy nothing; restore it or remove the cluster
    repairable: bool = True
    # the schema version of a sound file a newer jetlink wrote (this one can not use it:
    # not damaged, never repaired: upgrade jetlink)
    newer: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "path": self.path, "ok": self.ok,
                               "problems": self.problems}
        if not self.ok:
            out["repairable"] = self.repairable
        if self.newer is not None:
            out["schema_version"] = self.newer
        return out


@dataclass
class RepairReport:
    name: str
    path: str
    damaged_copy: str
    tables: dict[str, int] = field(default_factory=dict)  # rows copied per table
    incomplete: list[str] = field(default_factory=list)  # tables that lost rows
    messages_before: int = 0  # what the streams' counters said
    messages_after: int = 0
    dropped: int = 0  # readable messages whose stream or subject was lost

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "path": self.path, "damaged_copy": self.damaged_copy,
                "tables": self.tables, "incomplete": self.incomplete,
                "messages_before": self.messages_before, "messages_after": self.messages_after,
                "messages_lost": max(0, self.messages_before - self.messages_after),
                "dropped": self.dropped}


def _names(dd: DataDir, names: list[str] | None) -> list[str]:
    from .errors import NotFoundError, not_found

    dd.check_exists()  # a check only reads: a directory that does not exist is said
    if names:
        for n in names:
            if not dd.has_cluster(n):  # (a loop of links is there: checked, DAMAGED)
                raise not_found(NotFoundError(f"cluster {n} not found"), n,
                                dd.cluster_names())
        return list(dict.fromkeys(names))
    return dd.cluster_names()


def check(dd: DataDir, names: list[str] | None = None) -> list[CheckReport]:
    """Each cluster's file checks and ``PRAGMA integrity_check`` (reads only)."""
    out = []
    for name in _names(dd, names):
        path = dd.cluster_path(name)
        problems = integrity(path)
        problem = health.file_problem(path) if problems else None
        newer = None if problems else _newer_schema(path)
        if newer is not None:
            out.append(CheckReport(name, str(path), False, [
                f"schema version {newer}, written by a newer jetlink; this version reads up "
                f"to {SCHEMA_VERSION}: upgrade jetlink (the file is sound: nothing to "
                "repair)"], repairable=False, newer=newer))
            continue
        out.append(CheckReport(name, str(path), not problems, problems,
                               repairable=not (problem and health.unreadable(problem))))
    return out


def _newer_schema(path: Path) -> int | None:
    """The schema version of the sound database at ``path`` when a newer jetlink wrote it
    (above SCHEMA_VERSION: every verb refuses it), else None (read only)."""
    from .store.datadir import connect_reading

    try:
        conn = connect_reading(path)
    except sqlite3.Error:
        return None
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    return version if version > SCHEMA_VERSION else None


# -- repair ----------------------------------------------------------------------------------

def _copy_rowid_table(src: sqlite3.Connection, dst: sqlite3.Connection, table: str,
                      cols: list[str]) -> tuple[int, bool]:
    """Rows of a rowid table in rowid order, skipping what cannot be read: (copied, whole).
    Rows are taken one by one from the cursor, so those before a damaged page are kept."""
    q = ", ".join(f'"{c}"' for c in cols)
    ins = f'INSERT INTO main."{table}"({q}) VALUES ({", ".join("?" * len(cols))})'
    sel = f'SELECT rowid, {q} FROM "{table}" WHERE rowid > ? ORDER BY rowid LIMIT {BATCH}'
    last = -(1 << 63)
    copied, whole = 0, True
    while True:
        got = 0
        try:
            for row in src.execute(sel, (last,)):
                dst.execute(ins, row[1:])
                last = row[0]
                got += 1
        except sqlite3.DatabaseError:
            copied += got
            whole = False
            nxt = _probe(src, table, last)
            if nxt is None:
                return copied, whole
            # From the row found on (never the same place twice: a row a scan cannot reach
            # although it reads alone is passed over).
            last = nxt if got == 0 and nxt == last + 1 else nxt - 1
            continue
        copied += got
        if got < BATCH:
            return copied, whole


def _probe(src: sqlite3.Connection, table: str, last: int) -> int | None:
    """The first readable rowid after a damaged stretch that begins after ``last``: keys
    further and further on are tried (a damaged page hides a range of keys)."""
    step = 1
    while last + step < (1 << 63):
        try:
            row = src.execute(f'SELECT rowid FROM "{table}" WHERE rowid >= ? ORDER BY rowid '
                              "LIMIT 1", (last + step,)).fetchone()
            if row is not None:
                src.execute(f'SELECT * FROM "{table}" WHERE rowid = ?', (row[0],)).fetchone()
        except sqlite3.DatabaseError:
            step *= 2
            continue
        return row[0] if row else None
    return None


def _copy_other_table(src: sqlite3.Connection, dst: sqlite3.Connection, table: str,
                      cols: list[str]) -> tuple[int, bool]:
    """A WITHOUT ROWID table (small: metadata, positions): every row readable in one scan."""
    q = ", ".join(f'"{c}"' for c in cols)
    ins = f'INSERT OR IGNORE INTO main."{table}"({q}) VALUES ({", ".join("?" * len(cols))})'
    copied = 0
    try:
        for row in src.execute(f'SELECT {q} FROM "{table}"'):
            dst.execute(ins, row)
            copied += 1
    except sqlite3.DatabaseError:
        return copied, False
    return copied, True


def _subjects_from_index(src: sqlite3.Connection, dst: sqlite3.Connection) -> int:
    """The subject rows a damaged ``subjects`` table lost, read back from its index
    (``subjects_by_name``: stream, subject and row id, on pages of their own): without them
    every message of those subjects would be dropped, the messages whole. Their counts and
    sequences are _rebuild_streams's. How many rows came back."""
    try:
        rows = src.execute("SELECT id, stream_id, subject FROM subjects INDEXED BY "
                           "subjects_by_name").fetchall()
    except sqlite3.DatabaseError:
        rows = []
        try:  # the index read as far as it goes
            for row in src.execute("SELECT id, stream_id, subject FROM subjects INDEXED BY "
                                   "subjects_by_name"):
                rows.append(row)
        except sqlite3.DatabaseError:
            pass
    cur = dst.executemany("INSERT OR IGNORE INTO subjects(id, stream_id, subject, msgs, "
                          "first_seq, last_seq) VALUES (?, ?, ?, 0, 0, 0)", rows)
    return max(cur.rowcount, 0)


def _rebuild_streams(conn: sqlite3.Connection, report: RepairReport) -> None:
    """The streams' derived state made true for the messages that survived."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not {"streams", "subjects", "msgs"} <= tables:
        return
    shift = 1 << SEQ_BITS
    mask = shift - 1
    # Messages whose stream or subject row was lost cannot be told apart any more, nor those
    # whose source header (a reference, see store/schema.py src_hdrs) was lost.
    lost_hdr = (f" OR ({is_src_ref_sql('hdr')} AND {src_ref_id_sql('hdr')} NOT IN "
                "(SELECT id FROM src_hdrs))") if "src_hdrs" in tables else ""
    report.dropped = conn.execute(
        f"DELETE FROM msgs WHERE (id / {shift}) NOT IN (SELECT id FROM streams) "
        f"OR subject_id NOT IN (SELECT id FROM subjects){lost_hdr}").rowcount
    conn.execute("DELETE FROM subjects WHERE stream_id NOT IN (SELECT id FROM streams)")
    # Each subject's chain, count, first and last from its messages (in sequence order).
    conn.execute(
        f"UPDATE msgs SET prev = c.p, next = c.n FROM (SELECT id, "
        f"coalesce((lag(id) OVER w) & {mask}, 0) AS p, "
        f"coalesce((lead(id) OVER w) & {mask}, 0) "
        "AS n FROM msgs WINDOW w AS (PARTITION BY subject_id ORDER BY id)) AS c "
        "WHERE msgs.id = c.id")
    if "msg_next" in tables:  # every next is now in msgs.next (store/schema.py msg_next)
        conn.execute("DELETE FROM msg_next")
    conn.execute(
        f"UPDATE subjects SET msgs = c.n, first_seq = c.f & {mask}, last_seq = c.l & {mask} "
        "FROM (SELECT subject_id, count(*) AS n, min(id) AS f, max(id) AS l FROM msgs "
        "GROUP BY subject_id) AS c WHERE subjects.id = c.subject_id")
    conn.execute("DELETE FROM subjects WHERE id NOT IN (SELECT DISTINCT subject_id FROM msgs)")
    import json

    for sid, config, last_seq, first_seq in conn.execute(
            "SELECT id, config, last_seq, first_seq FROM streams").fetchall():
        file_storage = json.loads(config).get("storage", "file") != "memory"
        fixed = FILE_RECORD_OVERHEAD if file_storage else MEM_RECORD_OVERHEAD
        n, nbytes, lo, hi = conn.execute(
            f"SELECT count(*), coalesce(sum({fixed} + length(CAST(s.subject AS BLOB)) + "
            f"{payload_sql(file_storage, 'm.')}), 0), min(m.id), max(m.id) FROM msgs m "
            "JOIN subjects s ON s.id = m.subject_id WHERE m.id BETWEEN ? AND ?",
            (sid * shift, sid * shift + mask)).fetchone()
        last = max(last_seq, (hi & mask) if hi is not None else 0)
        # empty: the next sequence once anything was stored; a stream never written has 0,
        # or 1 once purged (the server's purge sets last + 1): its own value kept
        first = (lo & mask) if lo is not None else (
            last + 1 if last else (1 if first_seq == 1 else 0))
        conn.execute("UPDATE streams SET msgs = ?, bytes = ?, first_seq = ?, last_seq = ? "
                     "WHERE id = ?", (n, nbytes, first, last, sid))
        report.messages_after += n
    if "msg_ttl" in tables:
        conn.execute("DELETE FROM msg_ttl WHERE id NOT IN (SELECT id FROM msgs)")


def repair(dd: DataDir, name: str) -> RepairReport:
    """Copy what is readable of cluster ``name`` into a new database that replaces it; the
    damaged file is kept beside it. Refused for a file SQLite cannot read at all, and for a
    data directory that cannot be written (nothing changed then)."""
    from .errors import JetlinkError

    path = dd.cluster_path(name)
    try:
        return _repair(dd, name)
    except OSError as err:
        _leftovers(path)
        raise health.os_error(err, dd.path, f"cannot repair cluster {name}") from err
    except sqlite3.Error as err:  # the new file could not be made (a full disk...)
        _leftovers(path)
        converted = health.storage_error(err, name, path)
        raise (converted or JetlinkError(f"cannot repair cluster {name}: {err}")) from err


def unrepairable(name: str, path: Path | str) -> str:
    """What to do with a cluster file nothing can be read of (a repair would copy nothing)."""
    return (f"nothing in it can be read, so it cannot be repaired; restore it from a backup, "
            f"or remove it with 'jetlink cluster rm {name}'"
            + (" (a directory: when it is empty)" if Path(path).is_dir() else ""))


def _leftovers(path: Path) -> None:
    """This process's half-made repaired copy (and its log files) removed."""
    tmp = path.with_name(f".{path.name}.repair-{os.getpid()}")
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            os.remove(f"{tmp}{suffix}")


def _copy_tables(src: sqlite3.Connection, dst: sqlite3.Connection,
                 schema: list[tuple[str, str, str]], report: RepairReport) -> None:
    """Every table of ``schema`` made in ``dst`` and filled with what ``src`` still reads
    of it (what was copied, and the tables that lost rows, in ``report``)."""
    for kind, tname, sql in schema:
        if kind == "table" and not tname.startswith("sqlite_"):
            dst.execute(sql)
    for kind, tname, sql in schema:
        if kind == "table" and not tname.startswith("sqlite_"):
            cols = [r[1] for r in dst.execute(f'PRAGMA table_info("{tname}")')]
            rowid = "WITHOUT ROWID" not in sql.upper()
            copy = _copy_rowid_table if rowid else _copy_other_table
            n, whole = copy(src, dst, tname, cols)
            report.tables[tname] = n
            if not whole:
                report.incomplete.append(tname)
    if "subjects" in report.incomplete:
        report.tables["subjects"] += _subjects_from_index(src, dst)


def _repair(dd: DataDir, name: str) -> RepairReport:
    from .errors import JetlinkError

    names = _names(dd, [name])
    path = dd.cluster_path(names[0])
    problem = health.file_problem(path)
    if problem and health.unreadable(problem):
        raise health.DamagedError(f"cluster {name}: {path} {problem}: "
                                  f"{unrepairable(name, path)}")
    dd.close()
    src = connect_salvage(path)
    try:
        try:
            schema = src.execute("SELECT type, name, sql FROM sqlite_master "
                                 "WHERE sql IS NOT NULL ORDER BY rowid").fetchall()
            version = src.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as err:
            raise health.DamagedError(
                f"cluster {name}: {path}: its schema cannot be read ({err}), so it cannot be "
                "repaired; restore it from a backup") from err
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        tmp = path.with_name(f".{path.name}.repair-{os.getpid()}")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(f"{tmp}{suffix}"):
                os.remove(f"{tmp}{suffix}")
        report = RepairReport(name, str(path), str(path.with_name(f"{path.name}.damaged-{stamp}")))
        try:
            report.messages_before = int(src.execute(
                "SELECT coalesce(sum(msgs), 0) FROM streams").fetchone()[0])
        except sqlite3.Error:
            report.messages_before = 0
        os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600))
        dst = connect(tmp)
        try:
            dst.execute("BEGIN IMMEDIATE")
            _copy_tables(src, dst, schema, report)
            for kind, tname, sql in schema:
                if kind in ("index", "trigger", "view") and not tname.startswith("sqlite_"):
                    dst.execute(sql)
            if 1 <= int(version) < SCHEMA_VERSION:  # the copy brought to this version's
                for step in MIGRATIONS[int(version):]:  # schema
                    for stmt in step:
                        dst.execute(stmt)
                version = SCHEMA_VERSION
            _rebuild_streams(dst, report)
            dst.execute(f"PRAGMA user_version={int(version)}")
            dst.execute("COMMIT")
            problems = health.check(dst, full=True)
            if problems:
                raise JetlinkError(f"cluster {name}: the repaired copy does not pass "
                                   f"integrity_check ({problems[0]}); {path} is unchanged")
            # whole before it replaces the damaged file: its log merged in (a full disk
            # fails here, the damaged file left in place), not pages left in a log under
            # the temporary name
            whole_file(dst)
        except BaseException:
            dst.close()
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(f"{tmp}{suffix}"):
                    os.remove(f"{tmp}{suffix}")
            raise
        dst.close()
    finally:
        src.close()
    for suffix in ("", "-wal", "-shm"):
        old = f"{path}{suffix}"
        if suffix and os.path.exists(old) and (suffix == "-shm" or not os.path.getsize(old)):
            os.remove(old)  # an index of the log, or an empty log: nothing to keep
        elif os.path.exists(old):
            os.replace(old, f"{report.damaged_copy}{suffix}")
    os.replace(tmp, path)
    health.forget(path)
    return report
