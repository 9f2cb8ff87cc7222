"""The data directory: one SQLite database per cluster.

``<data-dir>/<cluster>.db`` in WAL mode with a busy timeout, ``synchronous=NORMAL`` (a
committed transaction survives a SIGKILL of the process; only an OS crash may lose the last
commits). The directory is created with mode 0700 and the databases with 0600. Cluster names
are validated before they touch the filesystem, and SQL only ever takes values as parameters.

Several processes may use one data directory at once: each write is one ``BEGIN IMMEDIATE``
transaction (writers queue on the busy timeout), readers use plain deferred transactions and
never block the writer (WAL).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import stat
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import JetlinkError, NotFoundError, UsageError, not_found, quoted
from ..limits import CLUSTER_NAME_RE
from .health import (
    HEAD_LOCK,
    ChangedError,
    DamagedError,
    DiskFullError,
    StorageError,
    check,
    damaged,
    file_problem,
    forget,
    os_error,
    read_denied,
    record,
    stamp,
    storage_error,
    unreadable,
    verify,
    writable,
)
from .health import ReadOnlyError as ReadOnlyError_
from .health import readonly as readonly_error
from .schema import MIGRATIONS, SCHEMA_VERSION

__all__ = [
    "BUSY_TIMEOUT_MS",
    "KINDS",
    "LOCAL",
    "Cluster",
    "ClusterInfo",
    "DataDir",
    "connect",
    "default_data_dir",
    "validate_cluster_name",
]

LOCAL = "local"
KINDS = ("nats", "kafka")
NAME_RE = CLUSTER_NAME_RE
DB_SUFFIX = ".db"
BUSY_TIMEOUT_MS = 30_000
CACHE_KIB = 65_536  # page cache per connection (negative cache_size = KiB)
# Pages of new databases (SQLite's default is 4 KiB; an existing database keeps its own).
# Bulk copies write every page twice (the log, then the checkpoint): larger pages mean fewer
# system calls for the same bytes, while a single small commit (a KV put) writes more. 8 KiB
# is the balance measured (docs/benchmarks.md "Page size"): a sourced catch-up 16 % faster
# than with 4 KiB, a KV put 4 % slower; 16 KiB gained 8 % more and cost puts 13 %.
PAGE_SIZE = 8192
AUTOCHECKPOINT_PAGES = 1000  # SQLite's default: a commit past it checkpoints the log


def validate_cluster_name(name: Any, *, field: str = "name") -> str:
    """``name`` when it is a valid cluster name (``[A-Za-z0-9_-]{1,64}``), else a usage
    error naming ``field`` (exit 2, wherever the name was typed)."""
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise UsageError(
            f"invalid cluster name {quoted(name)}: use 1 to 64 letters, digits, '_' or "
            "'-'",
            field=field,
        )
    return name


def _deferred_if(on_commit: Callable[[], None] | None) -> Any:
    """SIGINT held (core/interrupts.py ``interrupt_deferred``) when there is an
    ``on_commit`` to run after a COMMIT, else nothing (imported only then: a read's start-up
    never pays for it)."""
    if on_commit is None:
        return contextlib.nullcontext()
    from ..interrupts import interrupt_deferred

    return interrupt_deferred()


def default_data_dir() -> Path:
    """``$JETLINK_DATA_DIR``, else ``$XDG_DATA_HOME/jetlink``, else ``~/.local/share/jetlink``
    (core/xdg.py)."""
    from ..xdg import home

    env = os.environ.get("JETLINK_DATA_DIR")
    if env:
        return Path(env)
    return home("data")


def connect(path: str | os.PathLike[str], *, readonly: bool = False,
            existing: bool = False) -> sqlite3.Connection:
    """A connection with jetlink's settings; autocommit mode (transactions are explicit).

    ``readonly``: for a data directory this process cannot write (SQLite ``mode=ro``; when
    the directory cannot even hold the shared-memory file of the write-ahead log, the file
    is opened ``immutable``, which is right only while no write-ahead log is pending).
    ``existing``: the file must be there (SQLite ``mode=rw``: a file removed meanwhile is
    an error, never made anew, empty)."""
    # Opened under HEAD_LOCK: a header descriptor is never closed while a connection to its
    # file is being made (store/health.py read_head).
    with HEAD_LOCK:
        if readonly:
            return _connect_readonly(Path(path))
        conn = sqlite3.connect(
            Path(path).absolute().as_uri() + "?mode=rw" if existing else os.fspath(path),
            uri=existing,
            isolation_level=None,
            timeout=BUSY_TIMEOUT_MS / 1000,
            check_same_thread=False,
        )
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute(f"PRAGMA page_size={PAGE_SIZE}")  # a new database's; a no-op on others
    mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    if str(mode).lower() != "wal":  # pragma: no cover - a filesystem without WAL support
        raise JetlinkError(f"cannot use WAL mode for {os.fspath(path)}: journal mode is {mode}")
    conn.execute("PRAGMA synchronous=NORMAL")
    _settings(conn)
    return conn


def _settings(conn: sqlite3.Connection) -> None:
    conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    conn.execute("PRAGMA temp_store=MEMORY")


def connect_reading(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """A connection that only reads (``PRAGMA query_only``) and leaves no file behind. A
    read-only open (``mode=ro``) of a database in WAL mode makes its ``-wal`` and ``-shm``
    files and cannot remove them when it closes: when none of the database's side files is
    there (no other connection has it open, no log is pending: nothing to checkpoint) and
    this process may write the file and its directory (those of the file a symbolic link
    leads to: SQLite puts the side files there), it is opened read-write, and SQLite's own
    close of the last connection removes what the open made; otherwise, or when that open
    fails, read-only (:func:`connect` ``readonly``: the side files were there already, or
    can not be made)."""
    real = os.path.realpath(path)
    side = [f"{real}{suffix}" for suffix in ("-wal", "-shm", "-journal")]
    if (any(os.path.lexists(p) for p in side) or not os.path.isfile(real)
            or not os.access(real, os.R_OK | os.W_OK)
            or not os.access(os.path.dirname(real), os.W_OK)):
        return connect(path, readonly=True)
    try:
        with HEAD_LOCK:
            conn = sqlite3.connect(real, isolation_level=None,
                                   timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
        try:
            conn.execute("PRAGMA query_only = ON")
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            _settings(conn)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error:
            conn.close()
            raise
    except sqlite3.Error:
        return connect(path, readonly=True)
    return conn


def _connect_readonly(path: Path) -> sqlite3.Connection:
    uri = path.absolute().as_uri()
    last: sqlite3.Error | None = None
    pending = False
    before = _side_files(path)
    for query in ("?mode=ro", "?mode=ro&immutable=1"):
        if "immutable" in query and os.path.exists(f"{path}-wal") \
                and os.path.getsize(f"{path}-wal") > 0:
            pending = True
            break  # a pending write-ahead log: an immutable open would not see it
        conn = sqlite3.connect(uri + query, uri=True, isolation_level=None,
                               timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as err:
            conn.close()
            # a mode=ro open makes the log's files and cannot remove them as it closes
            drop_side_files(path, keep=before)
            last = err
            if _damage(err):
                raise  # the file itself: said as damage by the caller (store/health.py)
            continue
        _settings(conn)
        return conn
    if pending:
        raise readonly_error(path.parent, f"{path.name} cannot be read: it has a pending "
                             f"write-ahead log ({path.name}-wal) that only a process allowed "
                             f"to write the directory can apply ({last})")
    assert last is not None
    raise last


def _damage(err: sqlite3.Error) -> bool:
    """Whether SQLite's ``err`` says the file is damaged or no database (SQLITE_CORRUPT,
    SQLITE_NOTADB)."""
    code = str(getattr(err, "sqlite_errorname", "") or "")
    return code.startswith("SQLITE_CORRUPT") or code == "SQLITE_NOTADB"


def connect_salvage(path: Path) -> sqlite3.Connection:
    """A read-only connection to a damaged database for ``cluster check --repair``: with
    ``PRAGMA writable_schema`` on, SQLite reads a file shorter than its header says (it
    counts the pages the file holds instead of refusing the file as malformed: btree.c
    ``lockBtree``), so the pages that are there can be copied. Opened ``immutable`` (no
    lock, no side file made) unless a write-ahead log holds pages, which only a ``mode=ro``
    open reads."""
    wal = f"{path}-wal"
    pending = os.path.exists(wal) and os.path.getsize(wal) > 0
    uri = path.absolute().as_uri() + ("?mode=ro" if pending else "?mode=ro&immutable=1")
    with HEAD_LOCK:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None,
                               timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA writable_schema = ON")
    return conn


# SQLite's unix VFS: every connection to a database in WAL mode holds a shared POSIX lock on
# one byte of the ``-shm`` file while it is open, the "dead man switch" UNIX_SHM_DMS, byte
# UNIX_SHM_BASE + SQLITE_SHM_NLOCK = 120 + 8 (UNIX_SHM_BASE is WALINDEX_LOCK_OFFSET, the lock
# bytes after the WAL-index header). A process that gets an exclusive lock on it knows that no
# connection of any other process has the database open; while it holds that lock, a new
# connection waits (SQLITE_BUSY, retried within its busy timeout) in unixLockSharedMemory.
SHM_DMS = 120 + 8


def _side_files(path: Path) -> set[str]:
    return {s for s in ("-wal", "-shm") if os.path.lexists(f"{path}{s}")}


def _other_fds(target: os.stat_result, own: int | None) -> bool | None:
    """Whether this process has ``target`` (a file) open on a descriptor other than ``own``
    (a connection of this process: POSIX locks of one process never conflict, so the lock
    test cannot see it; and closing ``own`` would drop that connection's locks). None
    when /proc/self/fd cannot be read."""
    try:
        entries = os.listdir("/proc/self/fd")
    except OSError:
        return None
    for entry in entries:
        try:
            fd = int(entry)
            if fd == own:
                continue
            st = os.stat(f"/proc/self/fd/{entry}")
        except (ValueError, OSError):
            continue
        if (st.st_dev, st.st_ino) == (target.st_dev, target.st_ino):
            return True
    return False


@contextlib.contextmanager
def unused(path: Path, *, make: bool = False) -> Iterator[bool]:
    """Whether no connection, of this process or another, has the database at ``path`` open
    (WAL mode), answered under an exclusive lock on the ``-shm`` file's :data:`SHM_DMS` byte
    that is held until the block ends: meanwhile no connection can open it (they wait), so
    its files can be removed. ``make``: the ``-shm`` file is made when missing, so that the
    lock also keeps out a connection being opened right now. False: in use (or, without
    ``make``, no ``-shm`` file to lock). Called with this process's own connections to it
    closed; under HEAD_LOCK, so that none is opened meanwhile."""
    import fcntl

    shm = f"{path}-shm"
    with HEAD_LOCK:
        try:
            fd = os.open(shm, os.O_RDWR | getattr(os, "O_CLOEXEC", 0)
                         | (os.O_CREAT if make else 0), 0o600)
        except FileNotFoundError:
            yield False
            return
        try:
            if _other_fds(os.fstat(fd), fd):  # a connection of this process
                yield False
                return
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, SHM_DMS)
            except OSError as err:
                if err.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                yield False
                return
            yield True
        finally:
            os.close(fd)  # (this process's lock on it goes with it)


def drop_side_files(path: Path, keep: Collection[str] = ()) -> None:
    """Remove the ``-shm`` file and an empty ``-wal`` of the database at ``path`` that an open
    left behind (a ``mode=ro`` open cannot remove them as it closes; a connection to a file
    removed meanwhile neither), except those in ``keep`` (there before), and only when no
    connection has the database open (:func:`unused`). Best effort."""
    if not _side_files(path) - set(keep):
        return
    try:
        with unused(path) as free:
            if not free:
                return
            wal = f"{path}-wal"
            if "-wal" not in keep and os.path.exists(wal) and not os.path.getsize(wal):
                os.remove(wal)
            if "-shm" not in keep:
                os.remove(f"{path}-shm")
    except OSError:
        pass


def _migrate(conn: sqlite3.Connection) -> None:
    """Bring the core schema to SCHEMA_VERSION, one transaction per step."""
    while True:
        if conn.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-read under the write lock: another process may have migrated meanwhile.
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version < SCHEMA_VERSION:
                for stmt in MIGRATIONS[version]:
                    conn.execute(stmt)
                conn.execute(f"PRAGMA user_version={version + 1}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # (SQLite may have rolled back already: a full disk)
                conn.execute("ROLLBACK")
            raise


# -- what an error of a database in use really is (store/health.py classifies it) ------

def confirmed(err: JetlinkError, cause: BaseException, name: str,
              path: Path | str, *, writing: bool = True) -> JetlinkError:
    """``err`` (the :func:`storage_error` of ``cause``, on a database in use) as what the
    database says it is: damage or an I/O error is reported only when the checks of
    ``jetlink cluster check`` (the file checks and ``PRAGMA integrity_check``, on a
    connection of their own) find a problem too; when they find the database sound, it is
    a :class:`ChangedError`. Other errors (a full disk, a read-only directory) are returned
    as they are. ``writing``: met by a write (the line says nothing was written)."""
    if isinstance(err, (DiskFullError, ReadOnlyError_, ChangedError)):
        return err
    problems = _problems(Path(path))
    if problems:
        return _as_found(err, name, Path(path), problems, writing=writing)
    return ChangedError(f"cluster {name}: {path} changed while it was read ({cause}); it "
                        f"checks sound{': nothing was written,' if writing else ';'} the next "
                        "try reads it anew")


def confirmed_in(err: JetlinkError, cause: BaseException,
                 directory: Path | str) -> JetlinkError:
    """:func:`confirmed` when the database is not known (an SQLite error that escaped the
    store's own wrapping): every database of the data directory is checked, and the first
    with a problem is named; when all are sound, the files changed."""
    if isinstance(err, (DiskFullError, ReadOnlyError_, ChangedError)):
        return err
    try:
        found = _first_with_problems(Path(directory))
    except OSError:
        return err
    if found is not None:
        return _as_found(err, *found)
    return ChangedError(f"data directory {directory}: a database changed while it was read "
                        f"({cause}); every one checks sound: nothing was written, the next "
                        "try reads them anew")


def damage_in(cause: BaseException, directory: Path | str) -> JetlinkError | None:
    """The damaged database of the data directory behind ``cause`` (text a read could not
    decode: the bytes of a damaged page), as :func:`confirmed_in` names it; None when every
    database checks sound (the cause is no damage)."""
    try:
        found = _first_with_problems(Path(directory))
    except OSError:
        return None
    if found is None:
        return None
    name, path, problems = found
    return damaged(name, path, f"is damaged ({problems[0]})")


def _first_with_problems(directory: Path) -> tuple[str, Path, list[str]] | None:
    """(cluster, database, its problems) of the first database of ``directory`` the checks
    find a problem in; None when every one is sound (OSError: it can not be listed)."""
    entries = sorted(e for e in os.listdir(directory) if e.endswith(DB_SUFFIX))
    for entry in entries:
        problems = _problems(directory / entry)
        if problems:
            return entry[: -len(DB_SUFFIX)], directory / entry, problems
    return None


def _as_found(err: JetlinkError, name: str, path: Path, problems: list[str], *,
              writing: bool = True) -> JetlinkError:
    """``err`` once the checks found ``problems`` in cluster ``name``'s database."""
    if isinstance(err, DamagedError):
        return damaged(name, path, f"is damaged ({problems[0]})", writing=writing)
    return StorageError(f"{err.description}; 'jetlink cluster check {name}' finds: "
                        f"{problems[0]}")


# The last problems :func:`confirmed` found per database, with the files' stamp then: a loop
# that meets the same damaged file again (the dashboard's following) does not check the whole
# file again while nothing changed it.
_VERDICTS: dict[str, tuple[list[Any], list[str]]] = {}


def _problems(path: Path) -> list[str]:
    """:func:`integrity`, remembered while the files stay as they were."""
    key = os.fspath(path)
    seen = _VERDICTS.get(key)
    now = stamp(path)
    if seen is not None and seen[0] == now:
        return seen[1]
    problems = integrity(path)
    if problems:
        _VERDICTS[key] = (now, problems)
    else:
        _VERDICTS.pop(key, None)
    return problems


def integrity(path: Path) -> list[str]:
    """What ``jetlink cluster check`` finds wrong with the database at ``path`` ([]: sound):
    the file checks, then ``PRAGMA integrity_check`` on a read-only connection. A file this
    process may not read is no damage: its StorageError (``cannot read PATH: Permission
    denied``) is raised."""
    denied = read_denied(path)
    if denied is not None:
        raise denied
    problem = file_problem(path)
    if problem:
        return [f"the file {problem}"]
    try:
        conn = connect_reading(path)
    except (sqlite3.Error, StorageError) as err:
        return [str(err)]
    try:
        return check(conn, full=True)
    finally:
        conn.close()



@dataclass(frozen=True)
class ClusterInfo:
    name: str
    kind: str
    down: bool
    path: str
    created_ns: int
    description: str = ""

    def to_json(self) -> dict[str, Any]:
        from ..clock import format_rfc3339_nano

        out = {
            "name": self.name,
            "kind": self.kind,
            "down": self.down,
            "path": self.path,
            "created": format_rfc3339_nano(self.created_ns),
        }
        if self.description:
            out["description"] = self.description
        return out


class Cluster:
    """One cluster database. Holds one connection, opened on first use.

    ``transaction()`` gives the connection inside ``BEGIN IMMEDIATE ... COMMIT`` (ROLLBACK on
    any exception); ``read()`` inside a deferred transaction (one consistent snapshot). Both
    nest: inside an open transaction they simply join it.
    """

    def __init__(self, name: str, path: Path) -> None:
        self.name = name
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._components: dict[str, int] = {}
        self._kind: str | None = None
        # Opened read-only (a directory this process cannot write): writes are refused.
        self.readonly = False
        # Checked (or known unchanged) before this process's first write: see store/health.py.
        self._verified = False
        # A write transaction of this connection committed: only then does its close record
        # the files (a verified connection whose writes were all rolled back, a validate-only
        # request, leaves every file as it found it, the record too).
        self._wrote = False
        # Rows changed by transactions rolled back since the connection opened: not changes
        # (:attr:`changes` is what this process changed and kept).
        self._undone = 0
        # Rows changed before this object was the file's: the default cluster's first
        # write, made in memory and copied into the file it made (:class:`_Absent`).
        self._carried = 0
        # Per-connection caches other modules may keep (e.g. compiled stream configs).
        self.cache: dict[str, Any] = {}
        # Inside a write transaction (or opening one): a fault met then refuses the write
        # whole, and its line says nothing was written; a read's says nothing of writing.
        self._in_write = False
        # (device, inode) of the file the connection opened (:meth:`gone`)
        self._identity: tuple[int, int] | None = None

    def __repr__(self) -> str:
        return f"Cluster({self.name!r}, {str(self.path)!r})"

    # --- connection ---------------------------------------------------------------------
    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            if not _there(self.path):
                raise NotFoundError(f"cluster {self.name} not found")
            denied = read_denied(self.path)
            if denied is not None:
                raise denied
            problem = file_problem(self.path)
            if problem:
                raise damaged(self.name, self.path, problem,
                              readable=not unreadable(problem), writing=self._in_write)
            ro = not writable(self.path)
            try:
                before = os.stat(self.path)
            except FileNotFoundError:
                raise self._removed() from None
            try:
                conn = connect(self.path, readonly=ro, existing=True)
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                # This connection now holds its lock on the database (store ``unused``),
                # so ``cluster rm`` is refused from here on. The file at the path must be
                # the one opened: one removed between the stat and that lock would take
                # this process's writes into a file no path leads to, and lose them.
                try:
                    now: os.stat_result | None = os.stat(self.path)
                except FileNotFoundError:
                    now = None
                if now is None or (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
                    conn.close()
                    if now is None:
                        drop_side_files(self.path)
                    raise self._removed()
                self._identity = (now.st_dev, now.st_ino)
                if version > SCHEMA_VERSION:
                    conn.close()
                    raise JetlinkError(
                        f"cluster {self.name}: {self.path} has schema version {version}, "
                        f"written by a newer jetlink; this version reads up to "
                        f"{SCHEMA_VERSION}: upgrade jetlink")
                if ro:
                    if version < SCHEMA_VERSION:
                        conn.close()
                        raise readonly_error(
                            self.path.parent, f"cluster {self.name} must be upgraded to this "
                            "version of jetlink, which needs to write it")
                else:
                    _migrate(conn)
            except sqlite3.Error as err:
                if not _there(self.path):
                    raise self._removed() from err
                raise self.error(err) from err
            self.readonly = ro
            self._conn = conn
        return self._conn

    def gone(self) -> str | None:
        """Whether the file this open connection reads and writes is still at its path: a
        sentence when it was removed (or replaced) since (what the connection writes then
        goes where no path leads: a long-running command stops, core/backend.py
        ``Backend.gone``); None when it is, or nothing is open."""
        if self._conn is None or self._identity is None:
            return None
        try:
            now = os.stat(self.path)
        except FileNotFoundError:
            return f"the database of cluster {self.name} ({self.path}) was removed"
        except OSError:
            return None  # (not decidable now: the next pass's error says it)
        if (now.st_dev, now.st_ino) != self._identity:
            return f"the database of cluster {self.name} ({self.path}) was replaced"
        return None

    def _removed(self) -> NotFoundError:
        return NotFoundError(f"cluster {self.name} not found: {self.path} was removed (or "
                             "replaced) while this command opened it; nothing was written")

    def error(self, err: sqlite3.Error) -> JetlinkError:
        """``err`` as one line naming this cluster's file (store/health.py)."""
        converted = self.storage_error(err)
        if converted is not None:
            return converted
        return JetlinkError(f"cluster {self.name}: {self.path} is not a usable database ({err})")

    def storage_error(self, err: BaseException) -> JetlinkError | None:
        """A fault of this cluster's storage as one line (None: not one). Damage and I/O
        errors are confirmed by ``cluster check``'s own checks first (:func:`confirmed`):
        when the database checks sound, the files changed under this
        connection, which is then closed so that the next use opens them anew."""
        converted = storage_error(err, self.name, self.path, writing=self._in_write)
        if converted is None:
            return None
        converted = confirmed(converted, err, self.name, self.path, writing=self._in_write)
        if converted.transient and self._conn is not None \
                and not self._conn.in_transaction:
            self._drop()
        return converted

    def _drop(self) -> None:
        """Forget this connection (closed) and what was cached with it."""
        conn, self._conn = self._conn, None
        self.cache.clear()
        self._components.clear()
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def check_writable(self) -> None:
        """Before a write: ReadOnlyError for a directory this process cannot write,
        DamagedError for a damaged database (checked once per process, store/health.py)."""
        conn = self.conn
        if self.readonly:
            raise readonly_error(self.path.parent, f"cluster {self.name} cannot be written")
        self.check_sound(conn)

    def check_sound(self, conn: sqlite3.Connection | None = None) -> None:
        """DamagedError for a damaged database, checked once per process (store/health.py
        ``verify``): before the first write, and before replication reads an origin (whose
        damaged pages would otherwise be copied into its mirrors as far as they read)."""
        if not self._verified:
            verify(conn if conn is not None else self.conn, self.name, self.path)
            self._verified = True

    def committed(self) -> None:
        """After a write transaction of this verified process: the files as they are now are
        jetlink's own (another jetlink process writing alongside keeps the record fresh, so
        neither checks again for the other's writes; store/health.py)."""
        if self._verified:
            self._wrote = True
            record(self.path)

    @contextlib.contextmanager
    def checkpoints_aside(self) -> Iterator[Checkpointer]:
        """A long run of large write transactions (a replication catch-up): inside, this
        connection's commits do not copy the write-ahead log into the database themselves;
        the :class:`Checkpointer` does that on a second connection and thread while the next
        transaction is built (SQLite runs without Python's lock). On exit it waits for the
        last checkpoint, so the work is done when the block ends, and the connection's
        automatic checkpoints resume."""
        conn = self.conn
        cp = Checkpointer(self)
        conn.execute("PRAGMA wal_autocheckpoint=0")
        try:
            yield cp
        finally:
            try:
                cp.finish()
            finally:
                if self._conn is conn:
                    conn.execute(f"PRAGMA wal_autocheckpoint={AUTOCHECKPOINT_PAGES}")
                    if cp.requests:
                        self.committed()  # the files as the checkpoints left them

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
            if self._verified and self._wrote:
                record(self.path)  # the files as this verified process left them
            self._verified = self._wrote = False
            self._undone = 0

    @property
    def changes(self) -> int:
        """Rows this process changed and kept through this cluster's connection so far
        (SQLite's ``total_changes`` less those of transactions rolled back: a refused write
        is none, and no replication step follows it; 0 when the database was never
        opened)."""
        own = self._conn.total_changes - self._undone if self._conn is not None else 0
        return self._carried + own

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self, on_commit: Callable[[], None] | None = None
                    ) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``); nested calls join the outer one (and
        leave ``on_commit`` to it). ``on_commit``: called right after the COMMIT, with
        SIGINT held from the COMMIT until it has run (what records a committed change is
        never cut off from it by a Ctrl-C between the two)."""
        outer, self._in_write = self._in_write, True
        try:
            with self._transaction(on_commit) as conn:
                yield conn
        finally:
            self._in_write = outer

    @contextlib.contextmanager
    def _transaction(self, on_commit: Callable[[], None] | None
                     ) -> Iterator[sqlite3.Connection]:
        conn = self.conn
        if conn.in_transaction:
            assert on_commit is None, "a joined transaction is committed by the outer one"
            yield conn
            return
        self.check_writable()
        try:
            changes = conn.total_changes
            try:  # BEGIN inside: a KeyboardInterrupt as it returns must not leave it open
                conn.execute("BEGIN IMMEDIATE")
                yield conn
            except BaseException as exc:
                if conn.in_transaction:
                    self._undone += conn.total_changes - changes
                    conn.execute("ROLLBACK")
                    if isinstance(exc, KeyboardInterrupt):  # what it cut short is known gone
                        exc.rolled_back = True
                raise
            else:
                # (one that changed nothing wrote nothing)
                self.commit(on_commit, changed=conn.total_changes != changes)
        except sqlite3.Error as err:
            if storage_error(err, self.name, self.path) is None:
                raise
            if conn.in_transaction:  # a failed COMMIT (disk full) leaves it open
                self._undone += conn.total_changes - changes
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            raise self.error(err) from err

    def commit(self, on_commit: Callable[[], None] | None = None, *, changed: bool = True
               ) -> None:
        """COMMIT the open transaction; recorded (:meth:`committed`) when it ``changed``
        anything; then ``on_commit``, SIGINT held from the COMMIT until it has run (what
        records a committed change is never cut off from it by a Ctrl-C between the two).
        :meth:`transaction`'s end, and that of a caller that began its own (a replication
        step with another database attached)."""
        with _deferred_if(on_commit):
            self.conn.execute("COMMIT")
            if changed:
                self.committed()
            if on_commit is not None:
                on_commit()

    @contextlib.contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read snapshot (deferred transaction); nested calls join the outer one."""
        conn = self.conn
        if conn.in_transaction:
            yield conn
            return
        try:
            try:  # BEGIN inside, as in transaction()
                conn.execute("BEGIN")
                yield conn
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")
        except sqlite3.Error as err:
            if storage_error(err, self.name, self.path) is None:
                raise
            raise self.error(err) from err

    def end_interrupted(self) -> None:
        """Roll back what a scope cut by KeyboardInterrupt left open: a generator context
        manager (``transaction()`` or one wrapping it) interrupted as its ``__enter__``
        returns never gets its ``__exit__``, so its transaction stays open, holding the
        write lock, and a later ``transaction()`` would join it and never commit. For the
        clean-up after an interrupt, outside every transaction scope of this connection."""
        if self._conn is not None and self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    # --- meta -----------------------------------------------------------------------------
    def meta_get(self, key: str, default: Any = None) -> Any:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else row[0]

    def meta_set(self, key: str, value: Any) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    @property
    def kind(self) -> str:
        if self._kind is None:
            self._kind = str(self.meta_get("kind", "nats"))
        return self._kind

    @property
    def down(self) -> bool:
        """Marked unreachable (``cluster down``); read fresh: another process may change it."""
        return bool(self.meta_get("down", 0))

    def set_down(self, down: bool) -> None:
        self.meta_set("down", 1 if down else 0)

    @property
    def description(self) -> str:
        """The operator's words on the cluster (``cluster add --description``, a topology's
        ``description``); "" when none."""
        return str(self.meta_get("description", "") or "")

    def set_description(self, text: str) -> None:
        self.meta_set("description", text)

    def info(self) -> ClusterInfo:
        with self.read():
            return ClusterInfo(
                name=self.name,
                kind=self.kind,
                down=self.down,
                path=str(self.path),
                created_ns=int(self.meta_get("created_ns", 0) or 0),
                description=self.description,
            )

    # --- component schemas ------------------------------------------------------------------
    def table_names(self) -> set[str]:
        """The tables of this database: which components were ever used in it (a viewer
        reads a component only where it exists, creating nothing)."""
        with self.read() as conn:
            return {r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}

    def ensure_schema(self, component: str, steps: Sequence[Sequence[str]]) -> None:
        """Apply the not yet applied ``steps`` of ``component`` (each step: SQL statements).

        Cheap after the first call on this Cluster object. Safe across processes: each step
        runs in its own ``BEGIN IMMEDIATE`` transaction after re-reading the version, or in
        the caller's transaction when one is open.
        """
        if self._components.get(component, -1) >= len(steps):
            return
        conn = self.conn
        while True:
            row = conn.execute(
                "SELECT version FROM schema_components WHERE component = ?", (component,)
            ).fetchone()
            version = row[0] if row else 0
            if version >= len(steps):
                if not conn.in_transaction:  # (an outer transaction may still roll back)
                    self._components[component] = version
                return
            # Its own transaction, or the caller's when one is open (a schema made inside
            # a transaction that rolls back is made again next time).
            with self.transaction():
                row = conn.execute(
                    "SELECT version FROM schema_components WHERE component = ?", (component,)
                ).fetchone()
                version = row[0] if row else 0
                if version < len(steps):
                    for stmt in steps[version]:
                        conn.execute(stmt)
                    conn.execute(
                        "INSERT INTO schema_components(component, version) VALUES (?, ?) "
                        "ON CONFLICT(component) DO UPDATE SET version = excluded.version",
                        (component, version + 1),
                    )


class Checkpointer:
    """Checkpoints one cluster's write-ahead log on its own connection and thread
    (:meth:`Cluster.checkpoints_aside`). ``request()`` after a commit asks for a checkpoint
    (``PASSIVE``: it never waits for, nor blocks, the writer or the readers); requests made
    while one runs are served by one more. ``finish()`` runs the last one and waits for it.
    A checkpoint that fails is not an error of the transactions: they are committed in the
    log, and the next checkpoint (this one's or the connection's own) copies them."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.requests = 0
        self._thread: Any = None
        self._wake: Any = None
        self._stop = False
        self.error: Exception | None = None

    def request(self) -> None:
        import threading

        self.requests += 1
        if self._thread is None:
            self._wake = threading.Event()
            thread = threading.Thread(target=self._run, name="jetlink-checkpoint",
                                      daemon=True)
            thread.start()  # (a Ctrl-C inside: no thread recorded, :meth:`finish` joins none)
            self._thread = thread
        self._wake.set()

    def _run(self) -> None:
        conn = None
        try:
            conn = connect(self.cluster.path)
            while True:
                self._wake.wait()
                self._wake.clear()
                stop = self._stop
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                if stop:
                    return
        except Exception as err:  # noqa: BLE001 - the connection's own checkpoints take over
            self.error = err
        finally:
            if conn is not None:
                conn.close()

    def finish(self) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stop = True
        self._wake.set()
        thread.join()


class _Absent(Cluster):
    """The default cluster of a data directory that has none yet, as a command sees it
    (``DataDir(create=False)`` or ``lazy_local``): empty, in memory, never a file while
    nothing is kept in it (a read, a change refused or a dry run creates nothing; with
    ``lazy_local`` a missing directory is made with the file). A write transaction that
    commits a change makes it the file it stands for, from this database
    (:meth:`DataDir._create`: whole or not at all, the directory made first when
    missing), and this object is then that cluster: a change is never kept in memory and
    lost, and one whose file could not be made is not kept either. A file made meanwhile by
    another process (or another handle) is found before each use outside a transaction,
    and this object is then that cluster too."""

    def __init__(self, name: str, path: Path,
                 make: Callable[[sqlite3.Connection], bool]) -> None:
        super().__init__(name, path)
        self._make = make
        self._schema_rows = 0  # rows the components' tables wrote: no change of the cluster
        self._writing = False  # inside this object's own write transaction

    def _became(self) -> bool:
        """Whether the cluster's file is there now (outside a transaction): this object is
        then that cluster (:class:`Cluster`), what it read in memory forgotten."""
        if self._conn is not None and self._conn.in_transaction:
            return False
        if not _there(self.path):
            return False
        self.close()
        self.__class__ = Cluster  # type: ignore[assignment]  # the file holds it now
        self.cache.clear()
        self._components.clear()
        return True

    def _memory(self) -> sqlite3.Connection:
        """The in-memory database (made empty, with the schema, on first use); never the
        file's: the callers checked for it just before (:meth:`_became`)."""
        if self._conn is None:
            conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA page_size={PAGE_SIZE}")  # the file's, for its copy
            _migrate(conn)
            for key, value in (("kind", "nats"), ("down", 0), ("created_ns", 0),
                               ("config_gen", 0)):
                conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)",
                             (key, value))
            self._conn = conn
            self._verified = True
        return self._conn

    @property
    def conn(self) -> sqlite3.Connection:
        if self._became():
            return self.conn
        return self._memory()

    def ensure_schema(self, component: str, steps: Sequence[Sequence[str]]) -> None:
        """A component's tables in memory, in the caller's transaction when one is open,
        never in one of its own: a read makes them too, and they are no change of this
        cluster (a file made later holds them)."""
        if self._became():
            self.ensure_schema(component, steps)
            return
        conn = self._memory()
        before = conn.total_changes
        row = conn.execute("SELECT version FROM schema_components WHERE component = ?",
                           (component,)).fetchone()
        for stmt in (s for step in steps[row[0] if row else 0:] for s in step):
            conn.execute(stmt)
        conn.execute("INSERT INTO schema_components(component, version) VALUES (?, ?) "
                     "ON CONFLICT(component) DO UPDATE SET version = excluded.version",
                     (component, len(steps)))
        self._schema_rows += conn.total_changes - before

    @contextlib.contextmanager
    def transaction(self, on_commit: Callable[[], None] | None = None
                    ) -> Iterator[sqlite3.Connection]:
        """A write transaction in memory; when it commits a change, the cluster's file is
        made from this database and this object is that cluster from then on. (When the
        file is there already, the transaction runs in it.) ``on_commit`` as
        :meth:`Cluster.transaction`'s (here once the file is made)."""
        if self._became():
            with self.transaction(on_commit) as joined:
                yield joined
            return
        conn = self._memory()
        if conn.in_transaction:
            # joining: only this object's own write transaction (a write inside a read()
            # would be committed by the read, in memory, and never make the file)
            assert self._writing, "a write inside a read() of a default cluster not made yet"
            assert on_commit is None, "a joined transaction is committed by the outer one"
            yield conn
            return
        changes, schema_rows = conn.total_changes, self._schema_rows
        self._writing = True
        try:
            conn.execute("BEGIN")
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            self._writing = False
        with _deferred_if(on_commit):
            self._commit(conn, changes, schema_rows)
            if on_commit is not None:
                on_commit()

    def _commit(self, conn: sqlite3.Connection, changes: int, schema_rows: int) -> None:
        conn.execute("COMMIT")
        made = conn.total_changes - changes - (self._schema_rows - schema_rows)
        if not made:
            return
        try:
            stored = self._make(conn)
        finally:
            if not _there(self.path):
                self.close()  # not kept: not in memory either (a full disk, no permission)
        if not stored:
            self.close()  # (what it holds is not kept: the next use finds the file)
            raise JetlinkError(
                f"cluster {self.name} was created by another command while this one ran: "
                "its change was not stored; run the command again")
        self._became()
        self._carried += made
        # the file is this process's own copy, whole: known sound, recorded as such now and
        # again as this connection leaves it (opening it sets WAL in its header)
        self._verified = self._wrote = True
        record(self.path)

    def committed(self) -> None:
        pass  # no file, no record

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._verified = False

    @property
    def changes(self) -> int:
        return 0


def whole_file(conn: sqlite3.Connection) -> None:
    """A database built under a temporary name made whole before it is put in place: its
    write-ahead log merged into the file and removed (journal mode DELETE; the next open
    sets WAL again). A failure (a full disk) is an error here, not a file cut short whose
    pages stay behind in a log under the temporary name."""
    mode = conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
    if str(mode).lower() != "delete":
        raise sqlite3.OperationalError(
            f"the write-ahead log could not be merged into the file (journal mode {mode})")


# The longest database path SQLite's unix VFS opens: MAX_PATHNAME (512) with room for its
# journal's name ("-journal" appended); longer, it answers "unable to open database file".
SQLITE_MAX_PATH = 504


def _openable(path: Path, name: str) -> None:
    """StorageError naming the cluster when SQLite could not open ``path`` for its length."""
    n = len(os.fsencode(os.path.abspath(path)))
    if n > SQLITE_MAX_PATH:
        raise StorageError(f"cluster {name}: {path} is {n} bytes long: SQLite opens database "
                           f"paths of at most {SQLITE_MAX_PATH} bytes: give a shorter "
                           "--data-dir")


def _there(path: Path) -> bool:
    """Whether ``path`` is there: a file (through a link too), or something that can not be
    read (a loop of symbolic links: opened, it is DAMAGED and says why); a link to nothing
    is not."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return True
    return True


def _a_cluster_file(path: Path) -> bool:
    """Whether ``NAME.db`` is a cluster's, to be listed: a regular file (through a symbolic
    link too); a directory is one too, listed as it stands (opened, it is DAMAGED and says
    why: an overview never hides a cluster its commands fail on); a symbolic link to
    nothing, or something gone since the directory was read, is none."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    except OSError:
        return True  # there, and not readable: its commands say why
    return stat.S_ISREG(mode) or stat.S_ISDIR(mode)


class DataDir:
    """A jetlink data directory: ``<path>/<cluster>.db`` per cluster.

    ``create=False`` (the CLI's reads): nothing is ever created, not the directory (a
    directory that does not exist is a NotFoundError naming it), not the default cluster
    (``local`` without a file reads as an empty cluster). ``lazy_local`` (every command of
    the CLI): ``local`` without a file reads as an empty cluster too, and its first write
    makes the file (and the directory, when the command may create)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *,
                 create: bool = True, lazy_local: bool = False) -> None:
        self.path = Path(path) if path is not None else default_data_dir()
        self.create = create
        # The CLI's commands: the default cluster's file (and the directory) made by its
        # first write (:class:`_Absent`), so that a command refused before it makes none.
        self.lazy_local = lazy_local
        self._open: dict[str, Cluster] = {}

    def check_exists(self) -> None:
        """NotFoundError when the directory does not exist (for a read, or a command on
        objects that exist: cli/common.py READ_VERBS, COPY_VERBS)."""
        self._not_a_file()
        if not self._is_dir():
            raise NotFoundError(f"data directory {self.path} does not exist (nothing to read "
                                "or act on: the first command that creates something makes "
                                "it)")

    def __repr__(self) -> str:
        return f"DataDir({str(self.path)!r})"

    def _is_dir(self) -> bool:
        """Whether the directory exists (False: nothing there). A path the system cannot
        look up (a name too long, a loop of links, no permission on a parent) is a
        StorageError naming it: every command says it in one line."""
        try:
            mode = os.stat(self.path).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return False
        except OSError as err:
            raise self._unusable(err) from None
        if stat.S_ISDIR(mode) and not os.access(self.path, os.X_OK):
            # (no search permission: none of its files can be reached, not even to read)
            raise self._unusable(PermissionError(errno.EACCES, os.strerror(errno.EACCES)))
        return stat.S_ISDIR(mode)

    def _unusable(self, err: OSError) -> StorageError:
        return StorageError(f"data directory {self.path} cannot be used: "
                            f"{err.strerror or err}: give another --data-dir")

    def _not_a_file(self) -> None:
        if not self._is_dir() and self.path.exists():
            raise StorageError(f"data directory {self.path} is not a directory (a file of "
                               "that name is there): give another --data-dir")

    def unusable(self) -> str | None:
        """Why this data directory can be neither used nor made (a file of its name, a
        symbolic link to nothing), said as :meth:`ensure` would fail; None when it can (a
        dry run says it before a run fails on it)."""
        try:
            self._not_a_file()
            self._dangling()
        except StorageError as err:
            return str(err)
        return None

    def _dangling(self) -> None:
        if not self._is_dir() and os.path.islink(self.path):
            raise StorageError(f"data directory {self.path} is a symbolic link to "
                               f"{os.readlink(self.path)}, which does not exist: give another "
                               "--data-dir (or make that directory)")

    def ensure(self) -> Path:
        """Create the directory (mode 0700) if needed."""
        self._not_a_file()
        self._dangling()
        if not self._is_dir():
            try:
                self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
                os.chmod(self.path, 0o700)
            except OSError as err:
                raise os_error(err, self.path, "cannot create it") from err
        return self.path

    def cluster_path(self, name: str) -> Path:
        return self.path / (validate_cluster_name(name) + DB_SUFFIX)

    def _create(self, name: str, kind: str, now_ns: int, description: str = "", *,
                source: sqlite3.Connection | None = None) -> bool:
        """Create ``name``'s database if it does not exist; True when this call created it.
        ``source``: the database it starts as (the default cluster's first write, made in
        memory: :class:`_Absent`), copied whole."""
        path = self.cluster_path(name)
        # Built whole under a temporary name, then linked into place (which fails if the
        # name exists): a cluster's file is never seen half made, so an empty or cut file
        # is never jetlink's own and is reported (store/health.py), not taken for a new one.
        tmp = self.path / f".{name}.db.new-{os.getpid()}"
        _openable(tmp, name)  # before the directory is made
        self.ensure()
        if path.exists():
            return False
        what = f"cannot create cluster {name}"
        try:
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(f"{tmp}{suffix}")
            fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
            os.close(fd)
            conn = connect(tmp)
            try:
                if source is not None:
                    source.backup(conn)
                _migrate(conn)
                conn.execute("BEGIN IMMEDIATE")
                for key, value in (("kind", kind), ("down", 0), ("created_ns", now_ns),
                                   ("config_gen", 0), *((("description", description),)
                                                        if description else ())):
                    conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)",
                                 (key, value))
                conn.execute("UPDATE meta SET value = ? WHERE key = 'created_ns' AND value = 0",
                             (now_ns,))
                conn.execute("COMMIT")
                whole_file(conn)
            finally:
                conn.close()
            try:
                os.link(tmp, path)
            except FileExistsError:
                if path.is_symlink() and not _there(path):  # a link to nothing holds the name
                    raise JetlinkError(
                        f"cannot add cluster {name}: {path} is a symbolic link to nothing "
                        f"({os.readlink(path)}): remove the link, or restore what it points "
                        "to", field="name") from None
                return False
        except OSError as err:
            raise os_error(err, self.path, what) from err
        except sqlite3.Error as err:
            converted = storage_error(err, name, tmp)
            raise (converted or JetlinkError(f"{what}: {err}")) from err
        finally:  # the temporary file and its journal files go, whatever happened
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(OSError):
                    os.remove(f"{tmp}{suffix}")
        return True

    def _made_local(self, source: sqlite3.Connection) -> bool:
        """The default cluster's file made from ``source``, the database its first write
        ran in (:class:`_Absent`); False when another process made it meanwhile."""
        import time

        return self._create(LOCAL, "nats", time.time_ns(), source=source)

    def _ensure_local(self) -> None:
        import time

        if not self.create:
            return
        if not self.cluster_path(LOCAL).exists():
            self._create(LOCAL, "nats", time.time_ns())

    def add_cluster(self, name: str, kind: str = "nats", *,
                    now_ns: int | None = None, description: str = "") -> ClusterInfo:
        """Create cluster ``name`` (JetlinkError if it exists or the name/kind is invalid),
        with the operator's ``description``."""
        import time

        validate_cluster_name(name)
        if kind not in KINDS:
            raise JetlinkError(
                f"invalid cluster kind {kind!r}: use one of {', '.join(KINDS)}", field="kind"
            )
        if self._is_dir():
            twin = next((n for n in self.cluster_names()
                         if n != name and n.lower() == name.lower()), None)
            if twin is not None:  # one file on a case-insensitive filesystem (macOS, Windows)
                raise JetlinkError(f"cluster {name} differs from cluster {twin} only in case: "
                                   "their files would be one on a case-insensitive filesystem; "
                                   "choose another name", field="name")
        if not self._create(name, kind, time.time_ns() if now_ns is None else now_ns,
                            description):
            raise JetlinkError(f"cluster {name} already exists", field="name")
        return self.open(name).info()

    def clusters(self, *, create_local: bool = True,
                 broken: list[tuple[str, JetlinkError]] | None = None) -> list[ClusterInfo]:
        """Every cluster of the directory, by name (``local`` is created on first use,
        unless ``create_local`` is false: a viewer lists what exists). A cluster whose
        database cannot be used (damaged, emptied: store/health.py) raises its error, or,
        given a ``broken`` list, is left out and appended there as (name, error): the
        others are still served."""
        if not self.create:
            self.check_exists()
        if create_local:
            self._ensure_local()
        out = []
        for name in self.cluster_names():
            try:
                out.append(self.open(name).info())
            except JetlinkError as err:
                if broken is None or isinstance(err, NotFoundError):
                    raise
                broken.append((name, err))
        return out

    def damaged_doc(self, name: str, err: JetlinkError) -> dict[str, Any]:
        """The document of a cluster whose database cannot be used (``clusters``'s
        ``broken``): ClusterInfo's keys, kind, down and created null, and its ``error``."""
        return {"name": name, "kind": None, "down": None, "path": str(self.cluster_path(name)),
                "created": None, "error": err.description}

    def cluster_names(self) -> list[str]:
        """The names of the clusters whose files are in the directory, sorted (nothing is
        opened: a damaged file is named too)."""
        if not self._is_dir():
            return []
        out = []
        try:
            entries = os.listdir(self.path)
        except PermissionError as err:  # (no read permission: its files cannot be listed)
            raise self._unusable(err) from None
        for entry in sorted(entries):
            name = entry[: -len(DB_SUFFIX)]
            if entry.endswith(DB_SUFFIX) and NAME_RE.fullmatch(name) and _a_cluster_file(
                    self.path / entry):
                out.append(name)
        return out

    def has_cluster(self, name: str) -> bool:
        """Whether the data directory holds cluster ``name`` (never one that can have no
        cluster's name: an API prefix's domain, a file's value)."""
        if not isinstance(name, str) or not NAME_RE.fullmatch(name):
            return False
        return _there(self.cluster_path(name))

    def set_down(self, name: str, down: bool = True) -> None:
        """Mark cluster ``name`` unreachable (``cluster down``) or reachable again (``up``):
        agreements whose origin lives there report it and resume when it is up
        (NotFoundError if the cluster does not exist)."""
        self.open(name).set_down(down)

    def is_down(self, name: str) -> bool:
        """Whether cluster ``name`` is marked down (read fresh; NotFoundError if absent)."""
        return self.open(name).down

    def open(self, name: str = LOCAL, *, create_local: bool = True) -> Cluster:
        """The cluster ``name``; ``local`` is created by its first write (until then it
        reads as an empty cluster: :class:`_Absent`), others must exist."""
        validate_cluster_name(name)
        cached = self._open.get(name)
        if cached is not None and (cached.path.exists() or isinstance(cached, _Absent)):
            return cached
        self._is_dir()  # a directory the system cannot look up: named, not its clusters
        if name == LOCAL and create_local and not self.lazy_local:
            self._ensure_local()
        path = self.cluster_path(name)
        if not _there(path):
            if self.create:
                self._not_a_file()
            else:
                self.check_exists()
            if name == LOCAL and create_local:
                absent = self._open[name] = _Absent(name, path, self._made_local)
                return absent
            raise not_found(NotFoundError(f"cluster {name} not found", field="cluster"),
                            name, self.cluster_names())
        _openable(path, name)
        cluster = Cluster(name, path)
        try:
            _ = cluster.conn  # open and migrate now: errors surface here
        except JetlinkError:
            cluster.close()
            raise
        self._open[name] = cluster
        return cluster

    def takes(self, name: str, kind: str) -> bool:
        """Whether cluster ``name`` holds what a cluster of ``kind`` holds: one of that kind,
        or the default cluster (``local``), which takes both so that the first commands need
        no ``cluster add``."""
        return name == LOCAL or self.open(name).kind == kind

    def open_kind(self, name: str, kind: str, what: str) -> Cluster:
        """The cluster ``name`` for ``what`` (a verb family: "streams", "topics" ...), which
        needs a cluster of ``kind`` (:meth:`takes`): JetlinkError naming the cluster and its
        kind when it is of the other kind."""
        cluster = self.open(name)
        if not self.takes(name, kind):
            label = {"nats": "NATS", "kafka": "Kafka"}
            raise JetlinkError(
                f"cluster {name} is a {label.get(cluster.kind, cluster.kind)} cluster: "
                f"{what} live in a {label[kind]} cluster (cluster add NAME --kind {kind})",
                field="cluster")
        return cluster

    def remove_cluster(self, name: str) -> None:
        """Delete cluster ``name``'s database (NotFoundError if it does not exist). Refused
        (JetlinkError, nothing removed) while a connection of another process, or another
        of this one, has it open: a writer would go on writing into a file no path leads to,
        its writes acknowledged and lost. Its files are removed under the lock that tells
        (:func:`unused`), so a connection being opened meanwhile waits, then finds nothing
        (Cluster.conn)."""
        path = self.cluster_path(name)
        # This data directory's own connections closed first (one of them may have it
        # attached: a replication step's origin), so that only others hold it.
        self.close()
        if not _there(path) and not path.is_symlink():  # (a loop of links: the link goes)
            raise NotFoundError(f"cluster {name} not found")
        if path.is_dir() and not path.is_symlink():
            self._remove_directory(name, path)
            return
        what = f"cannot remove cluster {name}"
        link = path.is_symlink()
        # SQLite keeps the side files beside the file a link leads to. Of a link only the
        # link goes (the file it leads to stays, its log too); a link that leads to no file
        # (a loop) can have no connection.
        real = Path(os.path.realpath(path))
        lock = (unused(real, make=not link) if os.path.isfile(real)
                else contextlib.nullcontext(True))
        try:
            with lock as free:
                if not free:
                    raise JetlinkError(
                        f"cannot remove cluster {name}: {path} is in use by another process "
                        "(a command still running, 'jetlink replicate --follow', the "
                        "dashboard, 'jetlink serve'...): stop what uses it, then run "
                        f"'jetlink cluster rm {name}' again; nothing was removed",
                        field="cluster")
                # the database first, its index of the log (-shm) last: a connection that
                # waits for the lock then finds its file gone from the path (Cluster.conn)
                for suffix in ("", "-wal", "-journal", "-shm"):
                    with contextlib.suppress(FileNotFoundError):
                        os.remove(f"{path}{suffix}")
                forget(path)  # the record of the last verified state (store/health.py)
        except OSError as err:
            raise os_error(err, self.path, what) from err

    def _remove_directory(self, name: str, path: Path) -> None:
        """A directory where cluster ``name``'s database belongs (``cluster ls``: DAMAGED):
        removed when empty; one holding anything is no file jetlink made, and stays."""
        try:
            os.rmdir(path)
        except OSError as err:
            if err.errno != errno.ENOTEMPTY:
                raise os_error(err, self.path, f"cannot remove cluster {name}") from err
            held = sum(1 for _ in os.scandir(path))
            raise JetlinkError(
                f"cluster {name}: {path} is a directory holding {held} "
                f"{'entry' if held == 1 else 'entries'}, not a database file; jetlink removes "
                "only the files it made: move the directory out of the data directory",
                field="cluster") from None
        forget(path)

    def gone(self) -> str | None:
        """A sentence when the data directory, or the database of a cluster this DataDir
        opened, was removed or replaced since (:meth:`Cluster.gone`); None otherwise."""
        if self._open and not self.path.is_dir():
            return f"the data directory {self.path} was removed"
        for cluster in self._open.values():
            said = cluster.gone() if isinstance(cluster, Cluster) else None
            if said:
                return said
        return None

    def wrote(self) -> bool:
        """Whether this DataDir changed a row of any cluster database it opened."""
        return any(cluster.changes > 0 for cluster in self._open.values())

    def close(self) -> None:
        for cluster in self._open.values():
            cluster.close()
        self._open.clear()
