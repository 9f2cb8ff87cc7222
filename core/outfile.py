"""Writing a file the user named on the command line (``--outfile``, ``--output``/``-o``).

One rule for every such option, by what is at the path:

- nothing, or a regular file: the text goes to a temporary file beside it that then replaces
  it (``os.replace``), so a reader (a Prometheus textfile collector, a monitoring agent) never
  sees half a file. A replaced file keeps its permission bits and, where the process may set
  it, its owner; a new one gets ``new_mode``.
- a symbolic link: followed, never replaced; the file it names is written by the same rule
  (the link stays a link).
- a character device (``/dev/null``, ``/dev/stdout``, a terminal) or a FIFO: written through,
  as a shell's ``>`` does (a FIFO waits for its reader). Nothing is ever renamed over them.
- a name of one of this process's open descriptors (``/dev/stdout``, ``/dev/stderr``,
  ``/dev/fd/N``, ``/proc/self/fd/N``): written to that descriptor where it stands, whatever
  it is open on (a log file the caller redirected stdout to is appended to, never
  replaced nor truncated).
- a directory, a socket or a block device: refused (a usage error, exit 2), nothing written.
- a SQLite database, or the write-ahead log or shared-memory file beside one (a data
  directory's cluster database above all, ``-o data/local.db`` typed for ``-o data/local.toml``):
  refused the same way, never replaced by text: what it held would be gone.

A write that fails (``/dev/full``, a full disk, a directory without write permission) is a
one-line error naming the path and the system's reason (exit 1); a temporary file is removed.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import tempfile

from .errors import JetlinkError, UsageError

_REFUSED = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISBLK, "a block device"),
)


def _cannot(path: str | os.PathLike[str], err: OSError) -> JetlinkError:
    return JetlinkError(f"cannot write {os.fspath(path)}: {err.strerror or err}")


def write_output(path: str | os.PathLike[str], text: str, *, new_mode: int | None = None
                 ) -> None:
    """Write ``text`` (UTF-8) to the user's ``path`` by the rule above. ``new_mode`` is the
    permission of a file that did not exist (default: 0666 less the umask, as ``open``)."""
    data = text.encode("utf-8")
    fd = _own_descriptor(path)
    if fd is not None:
        _write_fd(path, fd, data)
        return
    try:
        st: os.stat_result | None = os.stat(path)  # follows symbolic links
    except FileNotFoundError:
        st = None
    except OSError as err:
        raise _cannot(path, err) from None
    if st is not None:
        for test, what in _REFUSED:
            if test(st.st_mode):
                raise UsageError(
                    f"cannot write {os.fspath(path)}: it is {what} (a regular file, a "
                    "character device such as /dev/stdout, or a FIFO can be written)")
        if not stat.S_ISREG(st.st_mode):
            _write_through(path, data)
            return
        database = _database_file(path)
        if database is not None:
            raise UsageError(
                f"cannot write {os.fspath(path)}: it is {database}: it is never replaced by a "
                "command's output (what it holds would be lost); name another file")
    _replace(path, data, st, new_mode)


#: the first bytes of a SQLite write-ahead log (either byte order)
_WAL_MAGIC = (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")


def _database_file(path: str | os.PathLike[str]) -> str | None:
    """What a regular file at ``path`` is when it is a SQLite database, or the ``-wal`` /
    ``-shm`` file of one (the database beside it, by name), else None."""
    from .store.health import HEADER  # (a database's first bytes: one definition)

    head = _head(path)  # (unreadable: the write itself says why it fails)
    if head == HEADER:
        return "a SQLite database (a jetlink data directory's cluster database, or another's)"
    real = os.path.realpath(path)
    for suffix in ("-wal", "-shm", "-journal"):
        if real.endswith(suffix) and _head(real[:-len(suffix)]) == HEADER:
            return f"the {suffix[1:]} file of SQLite database {real[:-len(suffix)]}"
    if head[:4] in _WAL_MAGIC:
        return "a SQLite write-ahead log"
    return None


def _head(path: str | os.PathLike[str]) -> bytes:
    """A file's first 16 bytes (none when it can not be read)."""
    try:
        with open(path, "rb") as f:
            return f.read(16)
    except OSError:
        return b""


_STD = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_FD_PATH = re.compile(r"/(?:dev/fd|proc/self/fd)/(\d+)", re.ASCII)


def _own_descriptor(path: str | os.PathLike[str]) -> int | None:
    """The descriptor of this process a path names (``/dev/stdout`` is 1), or None."""
    text = os.path.normpath(os.fspath(path))
    if text in _STD:
        return _STD[text]
    found = _FD_PATH.fullmatch(text)
    return int(found.group(1)) if found else None


def _write_fd(path: str | os.PathLike[str], fd: int, data: bytes) -> None:
    """Written to open descriptor ``fd`` after what Python still holds for it (so the
    command's own lines and the file's stay in order)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and stream.fileno() == fd:
                stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    _write_all(path, fd, data)


def _write_all(path: str | os.PathLike[str], fd: int, data: bytes) -> None:
    """Every byte of ``data`` to descriptor ``fd`` (short writes continued)."""
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except OSError as err:
        raise _cannot(path, err) from None


def _write_through(path: str | os.PathLike[str], data: bytes) -> None:
    """A character device or a FIFO: opened for writing (no create, no truncate) and
    written; ``O_NOCTTY`` so a terminal never becomes the controlling one."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOCTTY)
    except OSError as err:
        raise _cannot(path, err) from None
    try:
        _write_all(path, fd, data)
    finally:
        os.close(fd)


def _replace(path: str | os.PathLike[str], data: bytes, st: os.stat_result | None,
             new_mode: int | None) -> None:
    """Nothing or a regular file at ``path`` (after its symbolic links): a temporary file in
    the real file's directory, then renamed over the real file, not over a link to it."""
    real = os.path.realpath(path)
    directory, name = os.path.split(real)
    if st is not None:
        mode = stat.S_IMODE(st.st_mode)
    elif new_mode is not None:
        mode = new_mode
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(dir=directory or ".", prefix=f".{name}.")
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, mode)
            if st is not None:
                try:
                    os.fchown(fd, st.st_uid, st.st_gid)
                except OSError:
                    pass  # another owner's file: the writer owns the new one
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, real)
        tmp = None
    except OSError as err:
        raise _cannot(path, err) from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
