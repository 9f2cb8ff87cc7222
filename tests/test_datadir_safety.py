"""A data directory's clusters removed, cut short, or not readable: ``cluster rm`` never
removes a database another process has open (its writes would go into a file no path leads
to), ``cluster check --repair`` copies what a truncated file holds, a file or directory
without permissions is said as such (not as damage), and a read says nothing of writing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ok, wait_until

from jetlink.core.store import DataDir

JETLINK = str(Path(sys.executable).with_name("jetlink"))
# Root reads and writes whatever the permissions say: its override is dropped for the
# commands that must meet them.
CAPSH = shutil.which("capsh")
NO_OVERRIDE = "--drop=cap_dac_override,cap_dac_read_search,cap_fowner"


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JETLINK_", "NATS_"))}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "config"), NO_COLOR="1", COLUMNS="200")
    return env


def _jetlink(tmp_path: Path, data: Path, *args: str,
             permissions: bool = False) -> subprocess.CompletedProcess[str]:
    """The installed jetlink on ``data``; ``permissions``: as a process the file permissions
    apply to (root without its override, through capsh)."""
    argv = [JETLINK, "--data-dir", str(data), *args]
    if permissions and os.geteuid() == 0:
        if CAPSH is None:
            pytest.skip("runs as root and capsh is missing: root's override of file "
                        "permissions cannot be dropped")
        argv = [CAPSH, NO_OVERRIDE, "--", "-c", " ".join(f"'{a}'" for a in argv)]
    return subprocess.run(argv, capture_output=True, text=True, env=_env(tmp_path),
                          timeout=300)


def _side_files(data: Path) -> list[str]:
    return sorted(p.name for p in data.iterdir() if p.name.endswith(("-wal", "-shm")))


# -- cluster rm while another process uses the cluster ------------------------------------

HOLDER = """
import sys
from jetlink.core.store import DataDir
from jetlink.core.jetstream import JetStream
dd = DataDir(sys.argv[1])
cluster = dd.open("west4")
cluster.info()  # open: its connection holds the database
print("open", flush=True)
sys.stdin.readline()  # until the test says: write now
js = JetStream(cluster)
js.publish("w.after", b"kept")
print("stored", flush=True)
sys.stdin.readline()
dd.close()
"""


def _count(path: Path) -> int:
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT coalesce(sum(msgs), 0) FROM streams").fetchone()[0])
    finally:
        conn.close()


def test_rm_is_refused_while_another_process_has_the_cluster_open(jl, tmp_path):
    ok(jl("cluster", "add", "west4"))
    ok(jl("--cluster", "west4", "stream", "add", "W", "--subjects", "w.>", "--defaults"))
    ok(jl("--cluster", "west4", "pub", "w.x", "--count", "10", "hi"))
    db = jl.data / "west4.db"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(jl.data)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline() == "open\n"
        r = jl("cluster", "rm", "west4", "-f")
        assert (r.exit_code, r.stderr) == (
            1, f"jetlink: error: cannot remove cluster west4: {db} is in use by another "
               "process (a command still running, 'jetlink replicate --follow', the "
               "dashboard, 'jetlink serve'...): stop what uses it, then run 'jetlink cluster "
               "rm west4' again; nothing was removed\n")
        assert db.exists()
        # the other process's write goes on into the cluster's file, kept
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline() == "stored\n"
        holder.stdin.write("\n")
        holder.stdin.close()
        assert holder.wait(timeout=120) == 0
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    assert _count(db) == 11
    ok(jl("cluster", "rm", "west4", "-f"))  # nothing uses it now
    assert sorted(p.name for p in jl.data.iterdir() if "west4" in p.name) == []


LOCKER = """
import fcntl, os, sys
from pathlib import Path
path = Path(sys.argv[1])
# what cluster rm holds while it removes the files: an exclusive lock on the -shm file's
# dead man switch byte (SQLite's unix VFS: UNIX_SHM_DMS, 120 + 8)
fd = os.open(f"{path}-shm", os.O_RDWR | os.O_CREAT, 0o600)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 128)
print("locked", flush=True)
sys.stdin.readline()
for suffix in ("", "-wal", "-journal", "-shm"):
    if os.path.exists(f"{path}{suffix}"):
        os.remove(f"{path}{suffix}")
os.remove(path.with_name(f".{path.name}.checked"))  # (cluster rm's store.health.forget)
os.close(fd)
"""


def test_a_writer_that_opens_the_cluster_as_rm_removes_it_stores_nothing(jl, tmp_path):
    """A connection being opened while ``cluster rm`` holds its lock waits for it, then finds
    the file gone: it says so and stores nothing (it never writes into the removed file and
    reports success), and leaves no file behind."""
    ok(jl("cluster", "add", "west4"))
    ok(jl("--cluster", "west4", "stream", "add", "W", "--subjects", "w.>", "--defaults"))
    db = jl.data / "west4.db"
    locker = subprocess.Popen([sys.executable, "-c", LOCKER, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert locker.stdout is not None and locker.stdin is not None
        assert locker.stdout.readline() == "locked\n"
        pub = subprocess.Popen([JETLINK, "--data-dir", str(jl.data), "--cluster", "west4",
                                "pub", "w.x", "hi"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=_env(tmp_path))
        # the writer has the database open and waits for the lock (the busy timeout)
        wait_until(lambda: any(os.path.realpath(f"/proc/{pub.pid}/fd/{fd}") == str(db)
                               for fd in os.listdir(f"/proc/{pub.pid}/fd")),
                   message="the writer opened the database")
        locker.stdin.write("\n")
        locker.stdin.close()
        assert locker.wait(timeout=120) == 0
        out, err = pub.communicate(timeout=300)
    finally:
        for proc in (locker,):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert pub.returncode == 1, (out, err)
    assert err.startswith("jetlink: error: cluster west4 not found"), err
    assert "Stored" not in out
    assert sorted(p.name for p in jl.data.iterdir() if "west4" in p.name) == []


# -- a truncated database is repaired -----------------------------------------------------

@pytest.mark.parametrize("cut", ["half-pages", "part-page"])
def test_repair_copies_what_a_truncated_file_holds(jl, cut):
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(jl("pub", "orders.a", "--count", "3000", "p" * 200))
    db = jl.data / "local.db"
    page = 8192
    half = os.path.getsize(db) // page // 2 * page
    os.truncate(db, half if cut == "half-pages" else half + 1000)
    r = jl("cluster", "check", "local", "--repair")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("Cluster local was repaired: ")
    assert r.stdout.endswith("Cluster local: ok\n")
    assert _side_files(jl.data) == []
    kept = int(r.stdout.split(": ", 1)[1].split(" messages kept")[0].replace(",", ""))
    assert 0 < kept < 3000
    info = ok(jl("stream", "info", "ORDERS", "-j"))
    assert '"messages": ' + str(kept) in info.stdout.replace(" ", "").replace(
        '"messages":', '"messages": ')


def test_a_failed_repair_leaves_no_side_file(jl):
    """A file whose schema cannot be read: the repair is refused, and its read-only open
    leaves neither a log nor its index behind."""
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    db = jl.data / "local.db"
    with open(db, "r+b") as f:  # the schema's page (page 1, after the header) overwritten
        f.seek(100)
        f.write(os.urandom(8192 - 100))
    r = jl("cluster", "check", "local", "--repair")
    assert r.exit_code == 1
    assert "Traceback" not in r.stderr and "read-only" not in r.stderr
    assert _side_files(jl.data) == []


# -- reads say nothing of writing -----------------------------------------------------------

def test_a_read_of_a_damaged_cluster_says_nothing_of_writing(jl):
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(jl("pub", "orders.a", "--count", "2000", "p" * 200))
    db = jl.data / "local.db"
    os.truncate(db, os.path.getsize(db) // 8192 // 2 * 8192)
    for args in (("stream", "ls"), ("stream", "view", "ORDERS", "--all"),
                 ("stream", "info", "ORDERS")):
        r = jl(*args)
        assert r.exit_code == 1 and "is truncated" in r.stderr, args
        assert "nothing was written" not in r.stderr, args
        assert "Restore it from a backup" in r.stderr, args
    with open(db, "r+b") as f:
        f.write(b"\0" * 100)
    r = jl("stream", "view", "ORDERS", "--all")
    assert r.exit_code == 1 and "is not a SQLite database" in r.stderr
    assert "nothing was written" not in r.stderr


def test_a_write_refused_by_the_check_says_nothing_was_written(jl):
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(jl("pub", "orders.a", "--count", "3000", "p" * 200))
    db = jl.data / "local.db"
    size = os.path.getsize(db)
    with open(db, "r+b") as f:
        f.seek(size // 8192 // 2 * 8192)
        f.write(os.urandom(8192))
    r = jl("pub", "orders.a", "more")
    assert r.exit_code == 1
    assert "is damaged" in r.stderr and "; nothing was written. Restore it" in r.stderr


# -- permissions ----------------------------------------------------------------------------

def test_a_database_without_read_permission_is_said_so_not_damage(jl, tmp_path):
    ok(jl("cluster", "add", "east"))
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    east = jl.data / "east.db"
    east.chmod(0)
    try:
        line = f"jetlink: error: cannot read {east}: Permission denied\n"
        for args in (("cluster", "check", "east"), ("cluster", "check", "east", "--repair"),
                     ("cluster", "check"), ("--cluster", "east", "stream", "ls"),
                     ("--cluster", "east", "pub", "a.b", "x")):
            r = _jetlink(tmp_path, jl.data, *args, permissions=True)
            assert (r.returncode, r.stderr) == (1, line), args
            assert "DAMAGED" not in r.stdout and "repair" not in r.stdout + r.stderr, args
        r = _jetlink(tmp_path, jl.data, "cluster", "ls", permissions=True)
        assert r.returncode == 0
        row = next(x for x in r.stdout.splitlines() if " east " in x)
        assert "UNREADABLE" in row and "DAMAGED" not in r.stdout
        assert sorted(p.name for p in jl.data.iterdir() if "east" in p.name) == ["east.db"]
    finally:
        east.chmod(0o600)
    assert ok(jl("cluster", "check")).stdout == "Cluster east: ok\nCluster local: ok\n"


def test_a_data_directory_without_permissions_cannot_be_used(jl, tmp_path):
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    jl.data.chmod(0)
    try:
        line = (f"data directory {jl.data} cannot be used: Permission denied: give another "
                "--data-dir")
        for args in (("cluster", "ls"), ("cluster", "check"), ("stream", "ls"),
                     ("stream", "info", "ORDERS"), ("pub", "orders.a", "x")):
            r = _jetlink(tmp_path, jl.data, *args, permissions=True)
            assert (r.returncode, r.stderr) == (1, f"jetlink: error: {line}\n"), args
        r = _jetlink(tmp_path, jl.data, "cluster", "check", "-j", permissions=True)
        assert r.returncode == 1 and '"description": "' + line + '"' in r.stdout
    finally:
        jl.data.chmod(0o700)
    assert DataDir(jl.data).cluster_names() == ["local"]
