"""Faults of the storage itself: a damaged, emptied, truncated or replaced database, a full
disk, a read-only data directory. How they are noticed, and the one error line each becomes.

- **Before SQLite opens a file** (every use, a stat and 100 bytes): a 0-byte file, a file
  without SQLite's header, a page size that is not one, a file shorter than its header says.
  jetlink never leaves such a file itself (a cluster's database is built under a temporary
  name and linked into place whole), so each is reported as what it is, never taken for a new
  cluster.
- **Before the first write of a process** (:func:`verify`): ``PRAGMA quick_check``, unless
  the files are exactly as jetlink left them after its last verified use (inode, size and
  modification time of the database and its write-ahead log, recorded in
  ``.<name>.db.checked`` beside it after each write transaction of a verified process that
  changed something, and when it closes after one: jetlink processes writing side by side
  keep the record fresh for each other; a write transaction that changed nothing, as a
  validate-only request's, writes no file at all). Anything else that touched the files
  (another program, a copy, a disk fault that changed them) makes the next writer check
  again. A damaged database is never written to.
- **While in use**: SQLite's own errors are turned into one line naming the file
  (:func:`storage_error`): damage, a full disk, a read-only file, an I/O error.
- ``jetlink cluster check [NAME] [--repair]``: ``PRAGMA integrity_check`` of each database;
  ``--repair`` copies what is readable into a new file (core/store/repair.py) and keeps the
  damaged one beside it.
"""

from __future__ import annotations

import _thread
import errno
import json
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

from ..errors import JetlinkError

HEADER = b"SQLite format 3\x00"
CHECK_LINES = 20  # problems quick_check / integrity_check report at most


class StorageError(JetlinkError):
    """A fault of the data directory's storage (exit 1)."""


class DamagedError(StorageError):
    """A cluster database that is damaged, emptied, truncated or not a database at all."""


def unusable(cluster: str) -> str:
    """What a cluster whose database cannot be opened is, as an origin or a region: like a
    server that does not answer, its state unknown."""
    return (f"cluster {cluster} cannot be used (its database is damaged: see jetlink cluster "
            "check)")


class DiskFullError(StorageError):
    """SQLite could not write: database or disk is full."""

    transient = True


class ChangedError(StorageError):
    """SQLite reported damage or an I/O error, and the database checks sound right after:
    the files changed under this process's read (another program replaced or rewrote them,
    an immutable open saw a write). Not damage; the next try reads them anew."""

    transient = True


class ReadOnlyError(StorageError):
    """A write to a data directory (or database file) that cannot be written."""


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:,} bytes" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n:,} bytes"  # pragma: no cover - the loop always returns


def file_problem(path: Path) -> str | None:
    """What is wrong with ``path`` as a SQLite database, seen without opening it (None: the
    file looks like one). A missing file is not this function's business (None)."""
    try:
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            return "is a directory, not a database file"
        if not stat.S_ISREG(st.st_mode):
            return "is not a regular file (a device, a pipe or a socket), not a database file"
        if st.st_size == 0:
            return "is empty (0 bytes): the file was emptied or replaced"
        size = st.st_size
        head = read_head(path, st)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except PermissionError:
        return None  # SQLite says so when it opens it
    except OSError as err:  # a loop of symbolic links, an I/O error: said, never raised
        return f"can not be read ({err.strerror or err})"
    if len(head) < 100 or not head.startswith(HEADER):
        return "is not a SQLite database: its header was overwritten or the file was replaced"
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    if page < 512 or page & (page - 1):
        return f"has a damaged header (page size {page})"
    try:
        if os.path.getsize(f"{path}-wal") > 0:
            # A checkpoint cut short (a full disk) leaves the file shorter than its header
            # says while the log still holds every page: SQLite reads them from there.
            return None
    except OSError:
        pass
    if size % page:
        return f"is truncated ({size:,} bytes, not a whole number of {page:,}-byte pages)"
    pages = int.from_bytes(head[28:32], "big")
    if pages and head[24:28] == head[92:96] and size < pages * page:
        return f"is truncated ({size:,} bytes; its header says {pages * page:,})"
    return None


# SQLite locks a database with POSIX advisory locks, which belong to the process, and the
# operating system releases all of a process's locks on a file when ANY descriptor of that
# file is closed (SQLite's "How To Corrupt An SQLite Database File", section 2.2). Opening
# the database to read its header and closing it again would therefore drop the locks of
# every other connection of this process (the dashboard's follow thread, a helper thread of
# the copy, serve's other requests): another process would then checkpoint into pages they
# read, or delete the write-ahead log under them. So the header is read through one
# descriptor per file (device and inode) that stays open while anything else of this process
# may hold the file. It is closed only when it is the process's last descriptor of that file
# (no SQLite connection has it open, so no lock can be lost: checked in /proc/self/fd),
# once more than HEAD_FDS_KEPT are open; where /proc/self/fd cannot be read, they stay open.
# Connections are opened under HEAD_LOCK (store/datadir.py ``connect``), so none appears
# between that check and the close. SQLite's own descriptors are safe: it defers their
# close while a lock is held.
_HEAD_FDS: dict[tuple[int, int], int] = {}
_SPARE_FDS: list[tuple[tuple[int, int], int]] = []
HEAD_LOCK = _thread.RLock()  # threading.RLock, without importing threading
HEAD_FDS_KEPT = 64


def _prune_heads() -> None:
    """Close the header descriptors no other descriptor of this process shares a file with
    (called under HEAD_LOCK)."""
    try:
        entries = os.listdir("/proc/self/fd")
    except OSError:
        return  # no way to tell: keep them all
    ours = set(_HEAD_FDS.values()) | {fd for _key, fd in _SPARE_FDS}
    shared: set[tuple[int, int]] = set()
    for entry in entries:
        try:
            fd = int(entry)
            if fd in ours:
                continue
            st = os.stat(f"/proc/self/fd/{entry}")
        except (ValueError, OSError):
            continue
        shared.add((st.st_dev, st.st_ino))
    closing = [(key, fd) for key, fd in _HEAD_FDS.items() if key not in shared]
    closing += [(key, fd) for key, fd in _SPARE_FDS if key not in shared]
    for key, fd in closing:  # no SQLite connection has the file open: no lock to lose
        if _HEAD_FDS.get(key) == fd:
            del _HEAD_FDS[key]
        try:
            os.close(fd)
        except OSError:
            pass
    _SPARE_FDS[:] = [(key, fd) for key, fd in _SPARE_FDS if key in shared]


def read_head(path: Path | str, st: os.stat_result | None = None, n: int = 100) -> bytes:
    """The first ``n`` bytes of the database at ``path``, read without closing a
    descriptor that could drop this process's locks (see above). ``st``: ``os.stat(path)``
    when the caller has it."""
    if st is None:
        st = os.stat(path)
    key = (st.st_dev, st.st_ino)
    with HEAD_LOCK:
        fd = _HEAD_FDS.get(key)
        if fd is None:
            if len(_HEAD_FDS) >= HEAD_FDS_KEPT:
                _prune_heads()
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            opened = os.fstat(fd)
            # Kept under the inode it really has (the path may have been replaced between
            # the stat and the open).
            okey = (opened.st_dev, opened.st_ino)
            if _HEAD_FDS.setdefault(okey, fd) != fd:  # one kept for that file already
                _SPARE_FDS.append((okey, fd))  # closed by a prune, as the others
        return os.pread(fd, n, 0)


def writable(path: Path) -> bool:
    """Whether the database at ``path`` (and its directory, where SQLite keeps the
    write-ahead log) can be written by this process."""
    directory = path.parent
    return os.access(directory, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


def damaged_text(name: str, path: Path | str, why: str, *, readable: bool = True,
                 writing: bool = True) -> str:
    """The one line of a damaged database: what is wrong, and what to do (``readable``: SQLite
    can still read parts of it, so a repair can copy them out; ``writing``: met by a write,
    which is then refused whole, so the line says nothing was written; a read says nothing
    of writing)."""
    if why.startswith(("is a directory", "is not a regular file")):
        todo = ("Move it out of the data directory: a cluster is one database file, and "
                "jetlink never makes anything else under its name")
    elif readable:
        todo = (f"Restore it from a backup, or run 'jetlink cluster check {name} --repair' to "
                "copy what is readable into a new file (the damaged one is kept beside it)")
    else:
        todo = (f"Restore it from a backup, or remove it with 'jetlink cluster rm {name}' to "
                "start the cluster anew (what it held is lost)")
    return f"cluster {name}: {path} {why}{'; nothing was written' if writing else ''}. {todo}"


def damaged(name: str, path: Path | str, why: str, *, readable: bool = True,
            writing: bool = True) -> DamagedError:
    return DamagedError(damaged_text(name, path, why, readable=readable, writing=writing))


def read_denied(path: Path | str) -> StorageError | None:
    """A database file (or one on its way) this process may not read, as one line: ``cannot
    read PATH: Permission denied`` (its permissions, not damage: no repair can help). None
    when it can be read, or is not there. The check opens nothing (``access(2)``): closing a
    descriptor of a database would drop this process's locks on it (:func:`read_head`)."""
    try:
        os.stat(path)
    except PermissionError as err:
        return StorageError(f"cannot read {path}: {err.strerror or err}")
    except OSError:
        return None
    if not os.access(path, os.R_OK):
        return StorageError(f"cannot read {path}: {os.strerror(errno.EACCES)}")
    return None


def unreadable(problem: str) -> bool:
    """Whether a :func:`file_problem` leaves nothing SQLite can read (empty, no header)."""
    return problem.startswith(("is empty", "is not a SQLite", "has a damaged header",
                               "is a directory", "is not a regular file", "can not be read"))


def readonly(directory: Path | str, what: str) -> ReadOnlyError:
    return ReadOnlyError(f"data directory {directory} is read-only: {what}")


def os_error(err: OSError, directory: Path | str, what: str) -> JetlinkError:
    """An OSError of creating a file or directory in the data directory, as one line."""
    if err.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return readonly(directory, what)
    if err.errno in (errno.ENOSPC, errno.EDQUOT):
        return DiskFullError(f"no space left in data directory {directory} "
                             f"({_free(directory)} free): {what}")
    return StorageError(f"data directory {directory}: {what}: {err.strerror or err}")


def free_bytes(path: Path | str) -> int:
    """The free bytes of the filesystem that holds ``path`` (or would: a data directory not
    made yet is looked up through its nearest existing parent)."""
    import shutil

    p = Path(path)
    while not p.exists() and p != p.parent:
        p = p.parent
    return shutil.disk_usage(p).free


NEARLY_FULL = 1 << 20  # bytes free below which an I/O error is taken for a full disk


def _nearly_full(path: Path | str) -> bool:
    try:
        return free_bytes(Path(path).parent) < NEARLY_FULL
    except OSError:
        return False


def _free(path: Path | str) -> str:
    try:
        return _size(free_bytes(path))
    except OSError:  # pragma: no cover - a path that vanished meanwhile
        return "unknown"


def storage_error(err: BaseException, name: str | None = None,
                  path: Path | str | None = None, *,
                  writing: bool = True) -> JetlinkError | None:
    """``err`` (an exception of sqlite3) as one line naming the file, or None when it is not
    a fault of the storage (a bug, a busy timeout: the caller lets it go on). ``writing``:
    met by a write (the line then says nothing was written; a read's says nothing of
    writing)."""
    if not isinstance(err, sqlite3.Error):
        return None
    code = str(getattr(err, "sqlite_errorname", "") or "")
    where = f"cluster {name}: {path}" if name and path else "the data directory's database"
    if code.startswith("SQLITE_CORRUPT") or code == "SQLITE_NOTADB" or (
            not code and "malformed" in str(err)):
        if name and path:
            return damaged(name, path, f"is damaged ({err})", writing=writing)
        return DamagedError(f"{where} is damaged ({err}); nothing was written. Run "
                            "'jetlink cluster check' to find which database, and restore it "
                            "or repair it with 'jetlink cluster check NAME --repair'")
    if code == "SQLITE_FULL" or ((code.startswith("SQLITE_IOERR") or code ==
                                  "SQLITE_CANTOPEN") and path and _nearly_full(path)):
        # (an I/O error on a filesystem with next to no room left is the full disk: its
        # write-ahead log index, or a page of the log, could not be written)
        free = _free(Path(path).parent) if path else "unknown"
        return DiskFullError(
            f"{where}: database or disk is full ({free} free on its filesystem): the write "
            "in progress was rolled back, nothing acknowledged is lost; free some space and "
            "run the command again")
    if code.startswith("SQLITE_READONLY"):
        directory = Path(path).parent if path else "in force"
        return readonly(directory, f"cluster {name} cannot be written" if name
                        else "it cannot be written")
    if code.startswith("SQLITE_IOERR") or code == "SQLITE_CANTOPEN":
        return StorageError(f"{where}: the storage failed ({err})"
                            + ("; nothing was written" if writing else ""))
    return None


# -- the record of the last verified state --------------------------------------------------

def _stamp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.checked")


def stamp(path: Path) -> list[Any]:
    """Inode, size and modification time of the database and of a write-ahead log that
    holds anything (an empty log, as each connection makes one, counts as none)."""
    out: list[Any] = []
    for p in (str(path), f"{path}-wal"):
        try:
            st = os.stat(p)
        except FileNotFoundError:
            out.append(None)
            continue
        out.append([st.st_ino, st.st_size, st.st_mtime_ns] if st.st_size or p == str(path)
                   else None)
    return out


def trusted(path: Path) -> bool:
    """Whether the database's files are as jetlink recorded them after its last verified
    use (then nothing else has touched them since)."""
    try:
        with open(_stamp_path(path), encoding="utf-8") as f:
            return json.load(f) == stamp(path)
    except (OSError, ValueError):
        return False


def record(path: Path) -> None:
    """Record the files' state as verified (after a verified connection's write
    transaction that changed something, and when it closes after one). Best effort: a
    directory that cannot be written keeps no record.

    Written in place, not through a temporary file renamed over it (a rename costs a
    hundred times more, and a writer records after every commit): the record only spares
    the next writer a check, so a torn one, read while it is rewritten or left by a crash,
    is at worst a record that does not match, and that writer checks."""
    target = _stamp_path(path)
    try:
        data = json.dumps(stamp(path)).encode()
        fd = os.open(target, os.O_CREAT | os.O_WRONLY, 0o600)
        try:
            os.write(fd, data)
            os.ftruncate(fd, len(data))
        finally:
            os.close(fd)
    except OSError:
        pass


def forget(path: Path) -> None:
    try:
        os.remove(_stamp_path(path))
    except OSError:
        pass


def check(conn: sqlite3.Connection, *, full: bool = False) -> list[str]:
    """``PRAGMA quick_check`` (``integrity_check`` when ``full``): its problems, at most
    :data:`CHECK_LINES` ([] when the database is sound)."""
    pragma = "integrity_check" if full else "quick_check"
    try:
        # main only: without a schema the pragma checks every attached database too (the
        # origin a replication step attaches), and would blame this one for its damage
        rows = [str(r[0]) for r in conn.execute(f"PRAGMA main.{pragma}({CHECK_LINES})")]
    except sqlite3.DatabaseError as err:
        return [str(err)]
    return [] if rows == ["ok"] else rows


def verify(conn: sqlite3.Connection, name: str, path: Path) -> None:
    """Before the first write of a process: DamagedError when the database is damaged
    (checked unless :func:`trusted`). The state is recorded once a write transaction changed
    something (core/store/datadir.py ``committed``): a write transaction that changed
    nothing (a validate-only request) leaves every file as it found it, this record too."""
    if trusted(path):
        return
    problems = check(conn)
    if problems:
        raise damaged(name, path, f"is damaged (quick_check: {problems[0]})")
