"""One data directory shared by many processes and threads.

SQLite's locks are POSIX advisory locks: they belong to the process, and closing any
descriptor of a database file releases every lock the process holds on it (SQLite's "How To
Corrupt An SQLite Database File", 2.2). jetlink reads a database's header before it opens it
(core/store/health.py ``file_problem``); these tests pin that this read never costs another
connection of the same process its locks, which once let another process checkpoint under a
reader and delete the write-ahead log of a follower (the dashboard's "disk I/O error" and
"database disk image is malformed" with a sound file, and real damage).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from jetlink.core.repair import check
from jetlink.core.store import DataDir, health
from jetlink.core.store.datadir import confirmed_in


def _write_in_another_process(path) -> None:
    """Another process opens the database, commits a row and closes. A closing connection
    that believes it is the database's last one checkpoints and deletes the log."""
    code = textwrap.dedent(f"""
        import sqlite3
        c = sqlite3.connect({str(path)!r}, isolation_level=None)
        c.execute("PRAGMA journal_mode=WAL")
        c.execute("CREATE TABLE IF NOT EXISTS t(x)")
        c.execute("INSERT INTO t VALUES (1)")
        c.close()
    """)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_reading_the_header_keeps_this_process_locks(tmp_path):
    dd = DataDir(tmp_path)
    cluster = dd.open()
    with cluster.read() as conn:
        conn.execute("SELECT count(*) FROM meta").fetchone()
    wal = f"{cluster.path}-wal"
    # A second user in this process (the dashboard's loader beside its follower) checks
    # the file again and again.
    for _ in range(3):
        assert health.file_problem(cluster.path) is None
        assert DataDir(tmp_path).open().conn is not None
    _write_in_another_process(cluster.path)
    # This process still holds its connection: the other process was not the last one,
    # so it left the log in place for this process's connection.
    assert os.path.exists(wal)
    with cluster.read() as conn:
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (1,)
    dd.close()


def test_header_descriptors_are_closed_only_when_nothing_else_holds_the_file(tmp_path):
    dd = DataDir(tmp_path)
    held = dd.open()  # a connection of this process: SQLite holds the file
    for name in ("c0", "c1"):
        other = DataDir(tmp_path)
        other.add_cluster(name)
        other.close()
    paths = [held.path, tmp_path / "c0.db", tmp_path / "c1.db"]
    keys = []
    for p in paths:
        assert health.file_problem(p) is None
        st = os.stat(p)
        keys.append((st.st_dev, st.st_ino))
    fd = health._HEAD_FDS[keys[0]]
    assert health.file_problem(paths[0]) is None
    assert health._HEAD_FDS[keys[0]] == fd  # the same descriptor again
    with health.HEAD_LOCK:
        health._prune_heads()
    # local.db is held by a connection: its descriptor stays (closing it would drop the
    # connection's locks); c0 and c1 are held by nothing else: closed
    assert keys[0] in health._HEAD_FDS and os.fstat(fd)
    assert keys[1] not in health._HEAD_FDS and keys[2] not in health._HEAD_FDS
    dd.close()
    with health.HEAD_LOCK:
        health._prune_heads()
    assert keys[0] not in health._HEAD_FDS
    with pytest.raises(OSError):
        os.fstat(fd)


def _sqlite_error(kind, text: str, code: str):
    err = kind(text)
    err.sqlite_errorname = code
    return err


@pytest.mark.parametrize("kind,text,code", [
    (sqlite3.DatabaseError, "database disk image is malformed", "SQLITE_CORRUPT"),
    (sqlite3.DatabaseError, "file is not a database", "SQLITE_NOTADB"),
    (sqlite3.OperationalError, "disk I/O error", "SQLITE_IOERR_SHORT_READ"),
])
def test_damage_is_reported_only_when_cluster_check_agrees(tmp_path, kind, text, code):
    dd = DataDir(tmp_path)
    cluster = dd.open()
    err = cluster.storage_error(_sqlite_error(kind, text, code))
    # The database is sound: the files changed under the read; the connection is let go.
    assert isinstance(err, health.ChangedError) and err.transient
    assert not isinstance(err, health.DamagedError)
    assert f"cluster local: {cluster.path} changed while it was read ({text})" in str(err)
    assert cluster._conn is None
    assert all(r.ok for r in check(dd))
    dd.close()


def _damaged(tmp_path):
    """The default cluster of a data directory in ``tmp_path``, closed, with random bytes
    over a page in the middle of its file."""
    dd = DataDir(tmp_path)
    cluster = dd.open()
    with cluster.transaction() as conn:
        conn.execute("CREATE TABLE filler(x)")
        conn.executemany("INSERT INTO filler VALUES (?)", [("x" * 500,)] * 400)
    dd.close()
    size = os.path.getsize(cluster.path)
    with open(cluster.path, "r+b") as f:
        f.seek((size // 8192 // 2) * 8192)
        f.write(os.urandom(8192))
    return cluster


def test_a_damaged_file_is_reported_as_damage_never_as_a_change(tmp_path):
    _damaged(tmp_path)
    assert not all(r.ok for r in check(DataDir(tmp_path)))
    dd2 = DataDir(tmp_path)
    c2 = dd2.open()
    err = c2.storage_error(_sqlite_error(sqlite3.DatabaseError,
                                         "database disk image is malformed", "SQLITE_CORRUPT"))
    assert isinstance(err, health.DamagedError) and not err.transient
    err = c2.storage_error(_sqlite_error(sqlite3.OperationalError, "disk I/O error",
                                         "SQLITE_IOERR"))
    assert not err.transient and "'jetlink cluster check local' finds:" in str(err)
    # Not known which database: every one of the directory is checked, the damaged named.
    err = confirmed_in(health.storage_error(_sqlite_error(
        sqlite3.DatabaseError, "database disk image is malformed", "SQLITE_CORRUPT")),
        RuntimeError("x"), tmp_path)
    assert isinstance(err, health.DamagedError) and "cluster local:" in str(err)
    dd2.close()


def test_a_full_disk_and_a_read_only_directory_are_not_checked(tmp_path):
    dd = DataDir(tmp_path)
    cluster = dd.open()
    full = cluster.storage_error(_sqlite_error(sqlite3.OperationalError,
                                               "database or disk is full", "SQLITE_FULL"))
    assert isinstance(full, health.DiskFullError) and full.transient
    ro = cluster.storage_error(_sqlite_error(sqlite3.OperationalError,
                                             "attempt to write a readonly database",
                                             "SQLITE_READONLY"))
    assert isinstance(ro, health.ReadOnlyError) and not ro.transient
    dd.close()


def test_a_damaged_file_is_checked_again_only_when_it_changed(tmp_path, monkeypatch):
    """A loop that meets the same damaged file (the dashboard's following) does not run
    integrity_check over the whole file at every pass."""
    from jetlink.core.store import datadir

    cluster = _damaged(tmp_path)
    checks = []
    real = datadir.integrity
    monkeypatch.setattr(datadir, "integrity", lambda p: checks.append(p) or real(p))
    corrupt = _sqlite_error(sqlite3.DatabaseError, "database disk image is malformed",
                            "SQLITE_CORRUPT")
    for _ in range(3):
        err = datadir.confirmed(health.storage_error(corrupt, "local", cluster.path), corrupt,
                                "local", cluster.path)
        assert isinstance(err, health.DamagedError)
    assert len(checks) == 1
    os.utime(cluster.path, ns=(1, 1))  # changed: checked again
    datadir.confirmed(health.storage_error(corrupt, "local", cluster.path), corrupt, "local",
                      cluster.path)
    assert len(checks) == 2
