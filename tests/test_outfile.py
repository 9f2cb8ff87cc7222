"""Every option that writes a file the user names (``server check --outfile``, ``dr check
--outfile``, ``export -o``, ``bench all -o``) goes through core/outfile.py ``write_output``:
a regular file (or nothing) is replaced atomically, a symbolic link is followed and stays a
link, a character device or a FIFO is written through, a directory, socket or block device is
refused (exit 2), and a failed write is one line with exit 1.

The device tests run as root here: they never point a command at the real /dev nodes unless
the process cannot replace them. As root the devices are private copies made with mknod in
the test's directory (same major/minor as /dev/null and /dev/full), so even a regression
that renames over the path cannot touch the machine's /dev; each test asserts the node is
still a character device afterwards.
"""

from __future__ import annotations

import json
import os
import socket
import stat

import pytest
from helpers import ok

from jetlink.core.errors import JetlinkError, UsageError
from jetlink.core.outfile import write_output

# name -> (the command line before the file, the exit status of a run that wrote the file)
WRITERS = {
    "server-check": (("server", "check", "stream", "--stream", "S", "--outfile"), 0),
    "dr-check": (("dr", "check", "--outfile"), 3),  # UNKNOWN: no mirrors
    "export": (("export", "-o"), 0),
}


@pytest.fixture
def jl(jl):
    ok(jl("stream", "add", "S", "--subjects", "s.>", "--defaults"))
    return jl


def expected_text(jl, name):
    """What the command writes: its standard output without the file option."""
    args, status = WRITERS[name]
    res = jl(*args[:-1])
    assert res.exit_code == status, (res.exit_code, res.stdout, res.stderr)
    return res.stdout if res.stdout.endswith("\n") else res.stdout + "\n"


def write(jl, name, path):
    args, _ = WRITERS[name]
    return jl(*args, str(path))


def device(tmp_path, which):
    """A character device equal to /dev/<which>: a private mknod copy when root (so nothing
    can replace the real node), else the real one (a non-root process cannot replace it)."""
    real = f"/dev/{which}"
    if os.geteuid() != 0:
        return real
    st = os.stat(real)
    path = tmp_path / which
    os.mknod(path, stat.S_IFCHR | 0o666, st.st_rdev)
    return str(path)


def is_chr(path):
    return stat.S_ISCHR(os.lstat(path).st_mode)


@pytest.mark.parametrize("name", WRITERS)
def test_regular_file_is_replaced_atomically_keeping_its_mode(jl, name):
    target = jl.tmp / "out.txt"
    target.write_text("old content that is longer than nothing\n")
    os.chmod(target, 0o640)
    before = target.stat().st_ino
    res = write(jl, name, target)
    assert res.exit_code == WRITERS[name][1], (res.stdout, res.stderr)
    assert target.read_text() == expected_text(jl, name)
    assert target.stat().st_ino != before  # a new file renamed into place
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [p.name for p in jl.tmp.iterdir() if p.name.startswith(".out.txt")] == []


@pytest.mark.parametrize("name", WRITERS)
def test_missing_file_is_created(jl, name):
    target = jl.tmp / "new.txt"
    res = write(jl, name, target)
    assert res.exit_code == WRITERS[name][1], (res.stdout, res.stderr)
    assert target.read_text() == expected_text(jl, name)
    assert stat.S_ISREG(target.lstat().st_mode)


@pytest.mark.parametrize("name", WRITERS)
def test_symlink_is_followed_and_stays_a_link(jl, name):
    real = jl.tmp / "real.txt"
    real.write_text("old\n")
    link = jl.tmp / "link.txt"
    link.symlink_to(real)
    res = write(jl, name, link)
    assert res.exit_code == WRITERS[name][1], (res.stdout, res.stderr)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == expected_text(jl, name)


def test_dangling_symlink_creates_its_target(jl):
    real = jl.tmp / "later.txt"
    link = jl.tmp / "link.txt"
    link.symlink_to(real)
    ok(write(jl, "server-check", link))
    assert link.is_symlink()
    assert real.read_text() == "OK S OK:0 sources | sources=0\n"


@pytest.mark.parametrize("name", WRITERS)
def test_fifo_is_written_through(jl, name):
    fifo = jl.tmp / "pipe"
    os.mkfifo(fifo)
    # The reader is open (non-blocking) before the command runs: its open of the FIFO for
    # writing then returns at once, and what it writes waits in the pipe.
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        res = write(jl, name, fifo)
        assert res.exit_code == WRITERS[name][1], (res.stdout, res.stderr)
        got = b""
        while chunk := os.read(reader, 65536):
            got += chunk
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert got.decode() == expected_text(jl, name)


@pytest.mark.parametrize("name", WRITERS)
def test_dev_null_is_written_through(jl, name, tmp_path):
    null = device(tmp_path, "null")
    res = write(jl, name, null)
    assert res.exit_code == WRITERS[name][1], (res.stdout, res.stderr)
    assert is_chr(null)


@pytest.mark.parametrize("name", WRITERS)
def test_dev_full_is_one_error_line_with_exit_1(jl, name, tmp_path):
    """A full device is one error line: exit 1, or a check's UNKNOWN (3: it could not
    deliver its answer; 1 would read as a WARNING)."""
    full = device(tmp_path, "full")
    res = write(jl, name, full)
    assert (res.exit_code, res.stderr) == (
        3 if name.endswith("check") else 1,
        f"jetlink: error: cannot write {full}: No space left on device\n")
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert is_chr(full)


def test_dev_full_as_json(jl, tmp_path):
    full = device(tmp_path, "full")
    res = jl("server", "check", "stream", "--stream", "S", "--outfile", full, "-j")
    assert res.exit_code == 3  # UNKNOWN: the check could not deliver its answer
    assert json.loads(res.stdout) == {"error": {
        "description": f"cannot write {full}: No space left on device"}}
    assert is_chr(full)


@pytest.mark.parametrize("name", WRITERS)
def test_socket_is_refused(jl, name):
    path = jl.tmp / "sock"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(path))
        res = write(jl, name, path)
    finally:
        sock.close()
    # a check's bad command line is UNKNOWN (3), any other command's a usage error (2)
    code = 3 if name.endswith("check") else 2
    assert (res.exit_code, res.stderr) == (code, (
        f"jetlink: error: cannot write {path}: it is a socket (a regular file, a character "
        "device such as /dev/stdout, or a FIFO can be written)\n"))
    assert stat.S_ISSOCK(os.lstat(path).st_mode)


def test_bench_all_output_goes_through_the_same_rule(jl, tmp_path, monkeypatch):
    doc = {"machine": {}, "benchmarks": [], "goals": []}
    monkeypatch.setattr("jetlink.core.bench.suite.bench_all", lambda *a, **k: doc)
    monkeypatch.setattr("jetlink.core.bench.server.server_available", lambda: None)
    real = jl.tmp / "bench.json"
    link = jl.tmp / "bench-link.json"
    link.symlink_to(real)
    ok(jl("bench", "all", "--output", str(link), "-j"))
    assert link.is_symlink() and json.loads(real.read_text()) == doc
    full = device(tmp_path, "full")
    res = jl("bench", "all", "--output", full, "-j")
    assert res.exit_code == 1 and is_chr(full)
    assert json.loads(res.stdout) == {"error": {
        "description": f"cannot write {full}: No space left on device"}}


# -- the core function ---------------------------------------------------------------------------

def test_new_file_mode(tmp_path):
    write_output(tmp_path / "a", "x\n", new_mode=0o600)
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o600
    assert (tmp_path / "a").read_text() == "x\n"


def test_directory_is_refused(tmp_path):
    with pytest.raises(UsageError, match=r"it is a directory"):
        write_output(tmp_path, "x\n")


def test_unwritable_directory_names_the_path(tmp_path):
    with pytest.raises(JetlinkError, match=r"^cannot write .*/missing/out: No such file"):
        write_output(tmp_path / "missing" / "out", "x\n")


def test_a_name_of_an_open_descriptor_is_written_to_it_never_replaced(tmp_path):
    """/dev/stdout (and /dev/fd/N, /proc/self/fd/N) while stdout is a log file: the text is
    appended where the log stands, in order with the process's own lines; the log is the
    same file (never renamed over nor truncated)."""
    import subprocess
    import sys

    log = tmp_path / "log"
    log.write_text("before\n")
    inode = log.stat().st_ino
    script = ("from jetlink.core.outfile import write_output\n"
              "print('one', flush=False)\n"
              "write_output('/dev/stdout', 'two\\n')\n"
              "write_output('/proc/self/fd/1', 'three\\n')\n"
              "print('four')\n")
    with open(log, "a") as out:
        subprocess.run([sys.executable, "-c", script], stdout=out, check=True, timeout=60)
    assert log.read_text() == "before\none\ntwo\nthree\nfour\n"
    assert log.stat().st_ino == inode
    other = tmp_path / "fd9"
    with open(other, "w") as f9:
        subprocess.run([sys.executable, "-c", "from jetlink.core.outfile import write_output\n"
                        f"write_output('/dev/fd/{f9.fileno()}', 'nine\\n')"],
                       pass_fds=(f9.fileno(),), check=True, timeout=60)
    assert other.read_text() == "nine\n"


@pytest.mark.parametrize("args", [
    *(WRITERS[name][0] for name in WRITERS),
    ("stream", "add", "T", "--subjects", "t", "--defaults", "--output"),
    ("consumer", "add", "S", "C", "--defaults", "--output"),
])
@pytest.mark.parametrize("which", ["local.db", "other.db-wal", "elsewhere.sqlite"])
def test_a_sqlite_database_is_never_replaced(jl, args, which):
    """`-o data/local.db` typed for `-o data/local.toml`: a SQLite database (a cluster's
    first of all), or the write-ahead log beside one, is refused (exit 2; a check's bad
    command line 3) and keeps every byte; the cluster still answers."""
    import sqlite3

    if which == "local.db":
        path = jl.data / which
    else:  # (any SQLite database, not only a data directory's; a -wal file by its name)
        db = jl.tmp / which.removesuffix("-wal")
        conn = sqlite3.connect(db)
        conn.execute("CREATE TABLE t(x)")
        conn.commit()
        conn.close()
        path = jl.tmp / which
        if which.endswith("-wal"):
            path.write_bytes(b"not yet a log")
    before = path.read_bytes()
    res = jl(*args, str(path))
    code = 3 if "check" in args else 2
    assert res.exit_code == code, (res.stdout, res.stderr)
    assert res.stderr.startswith(f"jetlink: error: cannot write {path}: it is ")
    assert "is never replaced by a command's output" in res.stderr
    assert path.read_bytes() == before
    ok(jl("stream", "info", "S"))
