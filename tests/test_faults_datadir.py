"""Faults of the data directory itself (store/health.py, core/repair.py): a damaged page, an
emptied, truncated or overwritten file, a full disk, a read-only directory. For each, every
verb family runs, and: no traceback, the documented exit status and message, no acknowledged
message lost, and the database bytes unchanged by a refused command."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import subprocess

import pytest
from helpers import doc, ok

from jetlink.core.store import DataDir, health
from jetlink.core.store.datadir import PAGE_SIZE
from jetlink.core.streams import recount

PAYLOAD = "p" * 200


def _seed(jl) -> None:
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(jl("kv", "add", "CFG"))
    ok(jl("kv", "put", "CFG", "limit", "100"))
    ok(jl("consumer", "add", "ORDERS", "C1", "--pull", "--defaults"))
    for s in ("a", "b", "c"):
        ok(jl("pub", f"orders.{s}", "--count", "1500", PAYLOAD))


def _db(jl):
    return jl.data / "local.db"


def _bytes(path) -> bytes:
    return path.read_bytes() if path.exists() else b""


def _no_traceback(result) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert "Traceback" not in result.stdout + result.stderr


def damage_page(path) -> None:
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.seek((size // 4096 // 2) * 4096)
        f.write(os.urandom(4096))


def damage_msgs_leaf(path) -> None:
    """Random bytes over the middle leaf page of the messages' table (SQLite's ``dbstat``)."""
    conn = sqlite3.connect(path)
    try:
        (size,) = conn.execute("PRAGMA page_size").fetchone()
        leaves = [n for (n,) in conn.execute("SELECT pageno FROM dbstat WHERE name = 'msgs' "
                                             "AND pagetype = 'leaf' ORDER BY pageno")]
    finally:
        conn.close()
    with open(path, "r+b") as f:
        f.seek((leaves[len(leaves) // 2] - 1) * size)
        f.write(os.urandom(size))


def empty(path) -> None:
    open(path, "w").close()


def truncate(path) -> None:
    os.truncate(path, (os.path.getsize(path) // 4096 // 2) * 4096)


def overwrite_header(path) -> None:
    with open(path, "r+b") as f:
        f.write(b"\0" * 100)


FAULTS = {
    # fault: (how, what the error says, whether SQLite can still read parts of it)
    "page": (damage_page, "is damaged", True),
    "empty": (empty, "is empty (0 bytes)", False),
    "truncated": (truncate, "is truncated", True),
    "header": (overwrite_header, "is not a SQLite database", False),
}

WRITES = [
    ("pub", "orders.a", "more"),
    ("kv", "put", "CFG", "limit", "200"),
    ("stream", "add", "NEW", "--subjects", "new.>", "--defaults"),
    ("consumer", "add", "ORDERS", "C2", "--pull", "--defaults"),
    ("stream", "purge", "ORDERS", "-f"),
]
READS = [
    ("stream", "info", "ORDERS"),
    ("stream", "ls"),
    ("kv", "get", "CFG", "limit"),
    ("stream", "view", "ORDERS", "--all"),
    ("cluster", "ls"),
    ("replicate",),  # nothing pending: it reads
]


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_damaged_database_is_never_written(jl, fault):
    _seed(jl)
    how, says, _readable = FAULTS[fault]
    how(_db(jl))
    before = _bytes(_db(jl))
    for args in WRITES:
        r = jl(*args)
        _no_traceback(r)
        assert r.exit_code == 1, (args, r.stdout, r.stderr)
        assert says in r.stderr and str(_db(jl)) in r.stderr, (args, r.stderr)
        assert _bytes(_db(jl)) == before, args  # not one byte written
    for args in READS:  # a read fails cleanly where it meets the damage, or works
        r = jl(*args)
        _no_traceback(r)
        assert r.exit_code in (0, 1), (args, r.exit_code)
        if r.exit_code:
            assert str(_db(jl)) in r.stderr and "damaged" in r.stderr or says in r.stderr
    assert _bytes(_db(jl)) == before
    # cluster check names the file and exits 1
    r = jl("cluster", "check", "--json")
    _no_traceback(r)
    assert r.exit_code == 1
    (rep,) = json.loads(r.stdout)
    assert rep["name"] == "local" and rep["ok"] is False and rep["problems"]
    assert rep["path"] == str(_db(jl))


def test_an_emptied_database_is_not_taken_for_a_new_cluster(jl):
    _seed(jl)
    empty(_db(jl))
    for args in (("stream", "add", "X", "--subjects", "x.>", "--defaults"), ("stream", "ls")):
        r = jl(*args)
        assert r.exit_code == 1
        assert "is empty (0 bytes): the file was emptied or replaced" in r.stderr
        assert "jetlink cluster rm local" in r.stderr  # nothing to repair: what to do instead
    assert _db(jl).stat().st_size == 0
    r = jl("cluster", "check", "local", "--repair")  # said in its report, not tried
    assert r.exit_code == 1 and "cannot be repaired" in r.stdout
    assert r.stderr == "jetlink: 1 damaged cluster database\n"  # no --repair to suggest
    assert _db(jl).stat().st_size == 0
    ok(jl("cluster", "rm", "local", "-f"))  # what the error says to do: start anew
    ok(jl("stream", "add", "X", "--subjects", "x.>", "--defaults"))
    assert doc(jl("stream", "ls", "--json")) == ["X"]


def test_repair_keeps_what_is_readable_and_the_damaged_file(jl):
    _seed(jl)
    stored = doc(jl("stream", "info", "ORDERS", "--json"))["state"]["messages"]
    damage_msgs_leaf(_db(jl))
    damaged_bytes = _bytes(_db(jl))
    r = jl("cluster", "check", "local", "--repair", "--json")
    _no_traceback(r)
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["clusters"] == [{"name": "local", "path": str(_db(jl)), "ok": True,
                              "problems": []}]
    (rep,) = d["repaired"]
    total = stored + 1  # and the KV bucket's one message
    assert rep["messages_before"] == total
    assert 0 < rep["messages_after"] < total
    assert rep["messages_lost"] == total - rep["messages_after"]
    # one leaf page of ~250-byte rows lost, not the rows around it: 17 rows for a 4 KiB
    # page, about 32 for the 8 KiB of new databases
    page = int.from_bytes(damaged_bytes[16:18], "big") or 65536
    assert page == PAGE_SIZE
    assert rep["messages_lost"] <= page // 200, rep
    # the damaged file is kept beside the new one, byte for byte
    assert open(rep["damaged_copy"], "rb").read() == damaged_bytes
    assert oct(_db(jl).stat().st_mode & 0o777) == "0o600"
    # the streams' state is true for what survived, and the cluster is usable again
    info = doc(jl("stream", "info", "ORDERS", "--json"))["state"]
    assert info["messages"] == rep["messages_after"] - 1  # the KV bucket keeps one
    assert info["last_seq"] == stored  # a sequence is never used twice
    ack = doc(jl("pub", "orders.a", "after", "--json"))
    assert ack["seq"] == stored + 1
    conn = sqlite3.connect(_db(jl))
    try:
        for (sid,) in conn.execute("SELECT id FROM streams"):
            rc = recount(conn, sid)
            assert rc["chain_errors"] == []
            assert rc["subjects"] == rc["subjects_table"]
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    assert doc(jl("kv", "get", "CFG", "limit", "--json"))["value"] is not None
    r = jl("cluster", "check")
    assert r.exit_code == 0 and "Cluster local: ok" in r.stdout


def test_repair_goes_on_past_a_file_nothing_can_be_read_of(jl):
    """cluster check names each damaged cluster and whether a repair can help: one emptied
    (nothing readable) is said so and not tried, and --repair repairs the next one all the
    same; --repair is suggested only for one it can repair."""
    ok(jl("cluster", "add", "a"))
    _seed(jl)
    empty(jl.data / "a.db")
    r = jl("cluster", "check")
    assert r.exit_code == 1
    assert r.stderr == "jetlink: 1 damaged cluster database\n", r.stderr  # no --repair hint
    assert "  nothing in it can be read, so it cannot be repaired; restore it from a " \
           "backup, or remove it with 'jetlink cluster rm a'\n" in r.stdout, r.stdout
    checked = {c["name"]: c for c in json.loads(jl("cluster", "check", "-j").stdout)}
    assert checked["a"]["repairable"] is False and "repairable" not in checked["local"]
    damage_msgs_leaf(_db(jl))
    r = jl("cluster", "check")
    assert r.stderr == ("jetlink: 2 damaged cluster databases: restore from a backup or run "
                        "'jetlink cluster check local --repair'\n"), r.stderr
    r = jl("cluster", "check", "--repair", "-j")
    assert r.exit_code == 1, r.output
    out = json.loads(r.stdout)
    assert [x["name"] for x in out["repaired"]] == ["local"]
    assert {c["name"]: c["ok"] for c in out["clusters"]} == {"a": False, "local": True}
    assert (jl.data / "a.db").stat().st_size == 0


def test_the_repair_hint_names_every_repairable_cluster(jl):
    """Two damaged clusters a repair can help: the hint's one command names both."""
    _seed(jl)
    ok(jl("cluster", "add", "b"))
    ok(jl("--cluster", "b", "stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    for s in ("a", "b", "c"):
        ok(jl("--cluster", "b", "pub", f"orders.{s}", "--count", "1500", PAYLOAD))
    damage_msgs_leaf(_db(jl))
    damage_msgs_leaf(jl.data / "b.db")
    r = jl("cluster", "check")
    assert r.stderr == ("jetlink: 2 damaged cluster databases: restore from a backup or run "
                        "'jetlink cluster check b local --repair'\n"), r.stderr


def test_only_changed_files_are_checked_again(jl, monkeypatch):
    """The quick check before a write runs when the files are not as jetlink left them."""
    ok(jl("stream", "add", "S", "--subjects", "s.>", "--defaults"))
    path = _db(jl)
    assert health.trusted(path)
    calls = []
    real = health.check
    monkeypatch.setattr(health, "check", lambda conn, full=False: calls.append(1) or real(
        conn, full=full))
    ok(jl("pub", "s.a", "one"))
    assert calls == []  # unchanged since jetlink's last verified use: no scan
    with open(path, "r+b") as f:  # touched by something else (same bytes: still changed)
        f.seek(200)
        b = f.read(1)
        f.seek(200)
        f.write(b)
    os.utime(path)
    assert not health.trusted(path)
    ok(jl("pub", "s.a", "two"))
    assert calls == [1]


def test_a_cluster_is_created_whole_or_not_at_all(tmp_path):
    dd = DataDir(tmp_path / "d")
    dd.ensure()
    (tmp_path / "d" / ".east.db.new-1").write_bytes(b"left by a killed process")
    dd.add_cluster("east")
    names = sorted(p.name for p in (tmp_path / "d").iterdir() if p.name.endswith(".db"))
    assert names == ["east.db"]
    assert health.file_problem(tmp_path / "d" / "east.db") is None
    dd.close()


# -- a full disk ----------------------------------------------------------------------------

@contextlib.contextmanager
def _mounted(kind: str, target, source=None, options: str = ""):
    """A mount for the test when this process may mount (root), else None."""
    if os.geteuid() != 0:
        yield None
        return
    args = ["mount"] + (["-t", kind] if kind else []) + (["-o", options] if options else [])
    args += [source or kind, str(target)]
    if subprocess.run(args, capture_output=True).returncode != 0:
        yield None
        return
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True)


@pytest.fixture(params=["tmpfs", "capped"])
def small_disk(request, tmp_path, monkeypatch):
    """A data directory on a 3 MiB tmpfs (needs root: skipped otherwise), or on a database
    capped by max_page_count (the same SQLITE_FULL, anywhere). Yields (data dir, free():
    frees space)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if request.param == "capped":
        from jetlink.core.store import datadir

        cap = {"pages": 600}
        real = datadir.connect

        def capped(path, **kw):
            conn = real(path, **kw)
            conn.execute(f"PRAGMA max_page_count={cap['pages']}")
            return conn

        monkeypatch.setattr(datadir, "connect", capped)
        yield mnt / "data", lambda: cap.update(pages=100_000)
        return
    with _mounted("tmpfs", mnt, options="size=3m") as m:
        if m is None:
            pytest.skip("mounting a tmpfs needs root")
        ballast = mnt / "ballast"
        ballast.write_bytes(b"\0" * (1024 * 1024))

        def free() -> None:
            ballast.unlink()
            (mnt / "fill").unlink(missing_ok=True)

        yield mnt / "data", free


def test_disk_full_is_one_line_and_loses_nothing_acknowledged(small_disk, jl):
    data, free = small_disk

    def run(*args):
        return jl("--data-dir", str(data), *args)

    ok(run("stream", "add", "BIG", "--subjects", "big.>", "--defaults"))
    ok(run("kv", "add", "FULLKV"))
    acked = 0
    payload = "x" * 4000
    full = "database or disk is full"
    # Publish until the store refuses: SQLite finds no space (SQLITE_FULL), or pub --count
    # refuses up front what cannot fit in the free space it sees.
    for _ in range(1000):
        r = run("pub", "big.a", "--count", "20", payload, "--json")
        _no_traceback(r)
        if r.exit_code:
            break
        acked += len(json.loads(r.stdout))
    said = r.stdout + r.stderr  # (with --json the error is the document on stdout)
    assert r.exit_code == 1 and (full in said or "not enough free space" in said), said
    # Whatever space is left taken too: every write meets SQLITE_FULL now.
    if (data.parent / "ballast").exists():
        with contextlib.suppress(OSError), open(data.parent / "fill", "wb") as f:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
    else:
        r = run("pub", "big.a", "--count", "20", payload, "--json")
        assert full in r.stdout  # (the cap leaves the filesystem free: no refusal up front)
    r = run("kv", "put", "FULLKV", "big", "v" * 100_000)  # new pages: there are none
    _no_traceback(r)
    assert r.exit_code == 1, r.stdout
    assert full in r.stderr and str(data / "local.db") in r.stderr, r.stderr
    assert "free on its filesystem" in r.stderr and "nothing acknowledged is lost" in r.stderr
    for args in (("stream", "add", "X", "--subjects", "x.>", "--defaults"),
                 ("consumer", "add", "BIG", "C", "--pull", "--defaults")):
        r = run(*args)  # small writes may still fit in a page's free space
        _no_traceback(r)
        assert r.exit_code == 0 or (r.exit_code == 1 and full in r.stderr), r.stderr
    info = doc(run("stream", "info", "BIG", "--json"))["state"]
    assert info["messages"] == acked  # every acknowledged message, nothing half-written
    free()
    r = run("pub", "big.a", "--count", "10", payload, "--json")
    assert r.exit_code == 0, r.stdout + r.stderr  # the same command works again
    assert doc(run("stream", "info", "BIG", "--json"))["state"]["messages"] == acked + 10
    conn = sqlite3.connect(data / "local.db")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


# -- a read-only data directory ----------------------------------------------------------------

@pytest.fixture
def readonly(jl, tmp_path):
    """The seeded data directory made read-only: a read-only bind mount (root), else
    permissions (another user)."""
    _seed(jl)
    ok(jl("cluster", "add", "k", "--kind", "kafka"))
    ok(jl("--cluster", "k", "topic", "create", "orders"))
    view = tmp_path / "ro"
    view.mkdir()
    with _mounted("", view, source=str(jl.data), options="bind,ro") as m:
        if m is not None:
            # a bind mount is read-only only after a remount
            if subprocess.run(["mount", "-o", "remount,bind,ro", str(view)],
                              capture_output=True).returncode == 0:
                yield view
                return
        if os.geteuid() == 0:
            pytest.skip("cannot make a read-only directory here (root without mount)")
        for p in jl.data.iterdir():
            p.chmod(0o400)
        jl.data.chmod(0o500)
        try:
            yield jl.data
        finally:
            jl.data.chmod(0o700)
            for p in jl.data.iterdir():
                p.chmod(0o600)


def test_a_read_only_directory_is_read_and_never_written(jl, readonly):
    def run(*args):
        return jl("--data-dir", str(readonly), *args)

    info = doc(run("stream", "info", "ORDERS", "--json"))
    assert info["state"]["messages"] == 4500
    assert doc(run("kv", "get", "CFG", "limit", "--json"))["revision"] == 1
    r = ok(run("stream", "view", "ORDERS", "--count", "2"))
    assert PAYLOAD in r.stdout
    assert [c["name"] for c in doc(run("cluster", "ls", "--json"))] == ["k", "local"]
    assert ok(run("cluster", "check")).stdout.count(": ok") == 2
    assert "orders" in ok(run("--cluster", "k", "topic", "ls")).stdout
    for args in [("pub", "orders.a", "x"), ("kv", "put", "CFG", "limit", "1"),
                 ("stream", "add", "N", "--subjects", "n.>", "--defaults"),
                 ("cluster", "add", "east"), ("--cluster", "k", "topic", "create", "t")]:
        r = run(*args)
        _no_traceback(r)
        assert r.exit_code == 1, (args, r.stdout)
        assert f"data directory {readonly} is read-only" in r.stderr, (args, r.stderr)


def test_storage_errors_name_the_file():
    err = sqlite3.OperationalError("database or disk is full")
    err.sqlite_errorname = "SQLITE_FULL"
    e = health.storage_error(err, "east", "/x/east.db")
    assert isinstance(e, health.DiskFullError) and "cluster east: /x/east.db" in str(e)
    err = sqlite3.DatabaseError("database disk image is malformed")
    err.sqlite_errorname = "SQLITE_CORRUPT"
    assert isinstance(health.storage_error(err, "a", "/x/a.db"), health.DamagedError)
    assert health.storage_error(ValueError("x")) is None
    busy = sqlite3.OperationalError("database is locked")
    busy.sqlite_errorname = "SQLITE_BUSY"
    assert health.storage_error(busy, "a", "/x/a.db") is None


def test_a_count_cut_short_by_a_full_disk_says_what_was_stored(jl, monkeypatch):
    """pub --count stores in chunks of 1,000 (one transaction each): when the disk fills
    part-way, the chunks acknowledged before are kept and the command says which."""
    from jetlink.core.store import datadir

    real = datadir.connect

    def capped(path, **kw):
        conn = real(path, **kw)
        conn.execute(f"PRAGMA max_page_count={400 * 4096 // PAGE_SIZE}")  # 1.6 MB
        return conn

    monkeypatch.setattr(datadir, "connect", capped)
    ok(jl("stream", "add", "BIG", "--subjects", "big.>", "--defaults"))
    r = jl("pub", "big.a", "--count", "5000", "x" * 500)
    _no_traceback(r)
    assert r.exit_code == 1
    assert "database or disk is full" in r.stderr
    stored = doc(jl("stream", "info", "BIG", "--json"))["state"]["messages"]
    assert 0 < stored < 5000 and stored % 1000 == 0
    (line,) = r.stderr.strip().splitlines()  # one line: the error, then what was kept
    assert line.endswith(f": {stored:,} of 5,000 messages were stored (acknowledged; "
                         f"sequences 1..{stored:,}) before the error")
    ok(jl("stream", "purge", "BIG", "-f"))  # pages free again: some chunks fit
    r = jl("pub", "big.a", "--count", "5000", "x" * 500, "--json")
    assert r.exit_code == 1 and "database or disk is full" in json.loads(r.stdout)[
        "error"]["description"]  # --json: the error's document, what was kept on stderr
    assert r.stderr.startswith("jetlink: ") and "messages were stored" in r.stderr


def test_a_damaged_cluster_stops_only_what_involves_it(jl):
    """Replication and cluster ls go on for the healthy clusters; the damaged one is named."""
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(jl("stream", "add", "M", "--mirror", "ORDERS", "--defaults"))
    ok(jl("cluster", "add", "east"))
    ok(jl("--cluster", "east", "stream", "add", "E", "--subjects", "e.>", "--defaults"))
    empty(jl.data / "east.db")
    r = jl("pub", "orders.a", "--count", "5", "x")  # its replication step warns, once
    assert r.exit_code == 0 and r.stderr.count("east.db is empty (0 bytes)") == 1, r.stderr
    ok(jl("pub", "orders.a", "--count", "5", "x"))
    r = jl("replicate")
    _no_traceback(r)
    assert r.exit_code == 1
    assert f"cluster east: {jl.data / 'east.db'} is empty (0 bytes)" in r.stderr
    assert doc(jl("stream", "info", "M", "--json"))["state"]["messages"] == 10  # local ran
    r = jl("cluster", "ls", "--json")
    assert r.exit_code == 0 and "cannot be used" in r.stderr
    listed = {d["name"]: d for d in json.loads(r.stdout)}
    assert listed["local"]["kind"] == "nats" and "error" not in listed["local"]
    assert listed["east"]["kind"] is None and "is empty (0 bytes)" in listed["east"]["error"]
    r = ok(jl("cluster", "ls"))
    assert "DAMAGED" in r.stdout


@pytest.mark.parametrize("target_trusted", [False, True])
def test_a_damaged_origin_is_named_never_its_mirrors_cluster(jl, target_trusted,
                                                            monkeypatch):
    """An origin cluster with damaged pages: the mirror beside it reports that origin cluster
    cannot be used (never copying what its readable pages hold), replicate names the origin's
    cluster, and the mirror's own cluster is not blamed, whether or not it is checked in the
    same command (quick_check of the main database only, not of the origin attached)."""
    ok(jl("cluster", "add", "west"))
    ok(jl("--cluster", "west", "stream", "add", "ORDERS", "--subjects", "orders.>",
          "--defaults"))
    ok(jl("--cluster", "west", "pub", "orders.a", "--count", "1500", PAYLOAD))
    # the steps commands end with copy one message each: the mirror is far behind when the
    # origin is damaged
    monkeypatch.setattr("jetlink.core.step.STEP_MAX_MSGS", 1)
    ok(jl("stream", "add", "M", "--mirror", "ORDERS@west", "--defaults"))
    damage_msgs_leaf(jl.data / "west.db")
    if target_trusted:  # the mirror's cluster written since: its record spares it the check
        ok(jl("stream", "add", "T", "--subjects", "t.>", "--defaults"))
    before = _bytes(jl.data / "west.db")
    copied = doc(jl("stream", "info", "M", "--json"))["state"]["messages"]
    assert copied < 1500
    r = jl("replicate", "--json")
    _no_traceback(r)
    assert r.exit_code == 1, (r.stdout, r.stderr)
    assert "cluster local" not in r.stdout + r.stderr
    assert "origin cluster west cannot be used" in r.stdout, r.stdout
    assert doc(jl("stream", "info", "M", "--json"))["state"]["messages"] == copied
    assert _bytes(jl.data / "west.db") == before
    ok(jl("stream", "add", "U", "--subjects", "u.>", "--defaults"))  # local stays writable
    r = jl("cluster", "check")
    assert r.exit_code == 1 and "local: ok" in r.stdout and "west: DAMAGED" in r.stdout, \
        r.stdout


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_damaged_kafka_cluster_is_never_written(jl, fault):
    """The Kafka verb family on a damaged cluster: the same guarantees."""
    ok(jl("cluster", "add", "k", "--kind", "kafka"))
    ok(jl("--cluster", "k", "topic", "create", "t", "--partitions", "3"))
    ok(jl("--cluster", "k", "topic", "produce", "t", "--count", "3000", PAYLOAD))
    ok(jl("--cluster", "k", "group", "ls"))
    how, says, _readable = FAULTS[fault]
    path = jl.data / "k.db"
    how(path)
    before = _bytes(path)
    for args in (("topic", "produce", "t", "more"), ("topic", "create", "t2"),
                 ("topic", "alter", "t", "--partitions", "4"), ("topic", "rm", "t", "-f")):
        r = jl("--cluster", "k", *args)
        _no_traceback(r)
        assert r.exit_code == 1, (args, r.stdout, r.stderr)
        assert says in r.stderr and str(path) in r.stderr, (args, r.stderr)
        assert _bytes(path) == before, args
    for args in (("topic", "ls"), ("topic", "describe", "t"), ("group", "ls"),
                 ("topic", "consume", "t", "--from-beginning", "--max", "5000")):
        r = jl("--cluster", "k", *args)
        _no_traceback(r)
        assert r.exit_code in (0, 1), (args, r.exit_code, r.stderr)
        if r.exit_code:
            assert str(path) in r.stderr, (args, r.stderr)
    assert _bytes(path) == before


def test_writers_side_by_side_do_not_check_each_other(tmp_path, monkeypatch):
    """A follower holding the database open while commands write: each writer's commits keep
    the record of verified files fresh, so no writer scans for the others' writes."""
    from jetlink.core.clock import SystemClock
    from jetlink.core.jetstream import JetStream

    calls = []
    real = health.check
    monkeypatch.setattr(health, "check", lambda conn, full=False: calls.append(1) or real(
        conn, full=full))
    a = DataDir(tmp_path / "d")
    ja = JetStream(a.open(), SystemClock())
    ja.add_stream({"name": "S", "subjects": ["s.>"]})  # new file: checked once
    assert calls == [1]
    for i in range(3):
        b = DataDir(tmp_path / "d")  # another process's command, while a stays open
        JetStream(b.open(), SystemClock()).publish(f"s.{i}", b"x")
        b.close()
        ja.publish("s.a", b"y")  # a writes again after b
    assert calls == [1]  # each b found the files as a's last commit left them: no scan
    a.close()
    assert health.trusted(tmp_path / "d" / "local.db")


def test_repair_and_export_into_a_read_only_directory_are_one_line(jl, tmp_path):
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(jl("pub", "orders.a", "--count", "3000", PAYLOAD))
    damage_page(_db(jl))
    before = _bytes(_db(jl))
    view = tmp_path / "ro"
    view.mkdir()
    with _mounted("", view, source=str(jl.data), options="bind,ro") as m:
        if m is not None and subprocess.run(["mount", "-o", "remount,bind,ro", str(view)],
                                            capture_output=True).returncode == 0:
            target = view
        elif os.geteuid() == 0:
            pytest.skip("cannot make a read-only directory here (root without mount)")
        else:
            jl.data.chmod(0o500)
            target = jl.data
        try:
            r = jl("--data-dir", str(target), "cluster", "check", "local", "--repair")
            _no_traceback(r)
            assert r.exit_code == 1
            assert f"data directory {target} is read-only: cannot repair cluster local" \
                in r.stderr
            r = jl("stream", "export", "ORDERS", f"parquet:{target / 'lake'}")
            _no_traceback(r)
            assert r.exit_code == 1 and r.stderr.startswith("jetlink: error: cannot write")
        finally:
            jl.data.chmod(0o700)
    assert _bytes(_db(jl)) == before


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_a_cluster_path_that_is_no_file_is_named_never_a_traceback(jl, kind):
    """A directory (or a pipe) where a cluster's database file belongs: every command says
    what it is and what to do, one line, exit 1."""
    ok(jl("cluster", "add", "other"))
    path = jl.data / "odd.db"
    if kind == "directory":
        path.mkdir()
        what = "is a directory, not a database file"
    else:
        os.mkfifo(path)
        what = "is not a regular file (a device, a pipe or a socket), not a database file"
    for args in (("stream", "ls"), ("stream", "add", "N", "--subjects", "n.>", "--defaults"),
                 ("kv", "ls")):
        r = jl("--cluster", "odd", *args)
        _no_traceback(r)
        # (met as the cluster is opened, before any write began: nothing said of writing)
        assert (r.exit_code, r.stderr) == (1, f"jetlink: error: cluster odd: {path} {what}. "
                                              "Move it out of the data "
                                              "directory: a cluster is one database file, and "
                                              "jetlink never makes anything else under its "
                                              "name\n"), args
    r = jl("--cluster", "odd", "stream", "ls", "-j")
    assert r.exit_code == 1 and what in json.loads(r.stdout)["error"]["description"]


def test_a_data_directory_that_is_a_file_is_named_so(tmp_path):
    """A file where the data directory should be: "is not a directory" for a read and a
    write alike (not "does not exist", not "File exists"); the file is left as it was."""
    from helpers import runner

    from jetlink.cli.main import app

    path = tmp_path / "file"
    path.write_bytes(b"mine")
    line = (f"jetlink: error: data directory {path} is not a directory (a file of that name is "
            "there): give another --data-dir\n")
    for args in (("stream", "ls"), ("stream", "add", "X", "--subjects", "x", "--defaults")):
        r = runner.invoke(app, ["--data-dir", str(path), *args], prog_name="jetlink")
        assert (r.exit_code, r.stderr) == (1, line), args
    assert path.read_bytes() == b"mine"


def test_a_data_directory_the_system_or_sqlite_cannot_use_is_one_line(tmp_path):
    """A data directory whose name the system refuses (a component over 255 bytes) is named,
    never a traceback, for every verb; one whose databases' paths would be longer than
    SQLite opens is named with the limit, before any directory is made."""
    from helpers import runner

    from jetlink.cli.main import app

    def run(data, *args):
        return runner.invoke(app, ["--data-dir", str(data), *args], prog_name="jetlink")

    long_name = tmp_path / ("a" * 300)
    line = (f"jetlink: error: data directory {long_name} cannot be used: File name too long: "
            "give another --data-dir\n")
    for args in (("stream", "ls"), ("stream", "add", "X", "--subjects", "x", "--defaults"),
                 ("cluster", "ls"), ("cluster", "add", "w"), ("replicate",), ("export",),
                 ("positions", "sync"), ("kv", "get", "B", "k")):
        r = run(long_name, *args)
        assert (r.exit_code, r.stderr) == (1, line), (args, r.stderr)
    deep = tmp_path / ("b" * 200) / ("c" * 200) / ("d" * 100)
    for args, name in ((("cluster", "add", "q"), "q"),
                       (("stream", "add", "X", "--subjects", "x", "--defaults"), "local")):
        r = run(deep, *args)
        assert r.exit_code == 1 and "Traceback" not in r.stderr
        assert re.fullmatch(
            rf"jetlink: error: cluster {name}: {re.escape(str(deep))}/\.{name}\.db\.new-\d+ "
            r"is \d+ bytes long: SQLite opens database paths of at most 504 bytes: give a "
            r"shorter --data-dir\n", r.stderr), r.stderr
    assert list(tmp_path.iterdir()) == []  # nothing made


def test_a_link_to_nothing_is_no_cluster_and_a_directory_is_a_damaged_one(tmp_path):
    """The data directory's listing never fails on an entry it cannot stat: a NAME.db
    symbolic link to nothing is no cluster (no traceback); a directory named NAME.db is
    listed, DAMAGED, so that cluster ls and check show what every command on it says."""
    from helpers import runner

    from jetlink.cli.main import app

    data = tmp_path / "data"
    data.mkdir()

    def jl(*args):
        return runner.invoke(app, ["--data-dir", str(data), *args], prog_name="jetlink")

    assert jl("cluster", "add", "east").exit_code == 0
    (data / "ghost.db").symlink_to(tmp_path / "nonexistent")
    r = jl("cluster", "add", "ghost")  # (the link holds the name: said, not "already exists")
    assert (r.exit_code, r.stderr) == (1, (
        f"jetlink: error: cannot add cluster ghost: {data / 'ghost.db'} is a symbolic link to "
        f"nothing ({tmp_path / 'nonexistent'}): remove the link, or restore what it points "
        "to\n")), r.output
    (data / "west.db").mkdir()
    r = jl("cluster", "ls", "-n")
    assert (r.exit_code, r.stdout) == (0, "east\nwest\n"), r.output
    r = jl("cluster", "check")
    assert r.exit_code == 1 and "Cluster west: DAMAGED" in r.stdout, r.output
    assert "ghost" not in r.output and "Traceback" not in r.output
    # cluster rm: a directory holding anything is no file jetlink made: it stays, the
    # sentence says what to do; an empty one is removed
    (data / "west.db" / "notes.txt").write_text("mine")
    r = jl("cluster", "rm", "west", "-f")
    assert (r.exit_code, r.stderr) == (1, (
        f"jetlink: error: cluster west: {data / 'west.db'} is a directory holding 1 entry, "
        "not a database file; jetlink removes only the files it made: move the directory out "
        "of the data directory\n")), r.output
    assert (data / "west.db" / "notes.txt").read_text() == "mine"
    r = jl("cluster", "check", "west", "--repair")
    assert r.exit_code == 1 and r.stdout.endswith(
        "or remove it with 'jetlink cluster rm west' (a directory: when it is empty)\n"), r.output
    (data / "west.db" / "notes.txt").unlink()
    r = jl("cluster", "rm", "west", "-f")
    assert (r.exit_code, r.stderr) == (0, ""), r.output
    assert not (data / "west.db").exists()
    assert jl("cluster", "ls", "-n").stdout == "east\n"


def test_a_loop_of_symbolic_links_is_a_damaged_cluster_not_a_traceback(tmp_path):
    """``ln -s loop.db loop.db`` in the data directory: listed DAMAGED, checked as one that
    can not be read, refused by its commands, removed (the link) by cluster rm."""
    from helpers import runner

    from jetlink.cli.main import app

    data = tmp_path / "data"
    data.mkdir()

    def jl(*args):
        return runner.invoke(app, ["--data-dir", str(data), *args], prog_name="jetlink")

    assert jl("cluster", "add", "west").exit_code == 0
    (data / "loop.db").symlink_to("loop.db")
    r = jl("cluster", "ls", "-n")
    assert (r.exit_code, r.stdout) == (0, "loop\nwest\n"), r.output
    for args in (["cluster", "check"], ["cluster", "check", "loop"]):
        r = jl(*args)
        assert r.exit_code == 1 and isinstance(r.exception, (SystemExit, type(None))), args
        assert ("Cluster loop: DAMAGED" in r.stdout and "the file can not be read (Too many "
                "levels of symbolic links)" in r.stdout), (args, r.output)
    r = jl("cluster", "check", "loop", "--repair")  # nothing in it can be read
    assert r.exit_code == 1 and "nothing in it can be read, so it cannot be repaired" in \
        r.stdout, r.output
    r = jl("--cluster", "loop", "stream", "ls")
    assert r.exit_code == 1 and "can not be read (Too many levels of symbolic links)" in \
        r.stderr, r.output
    assert "--repair" not in r.stderr  # (no repair can read it)
    assert jl("--cluster", "west", "stream", "ls").exit_code == 0
    r = jl("cluster", "rm", "loop", "-f")
    assert (r.exit_code, r.stdout) == (0, "Cluster loop was removed\n"), r.output
    assert sorted(p.name for p in data.iterdir() if p.suffix == ".db") == ["west.db"]


def test_a_file_built_aside_is_made_whole_before_it_is_put_in_place(tmp_path):
    """A cluster's file (and a repaired copy) is built under a temporary name in WAL mode:
    its log is merged into the file before the file is linked into place (whole_file), so
    a failure there (a full disk; here another connection holding it) is an error, never a
    file cut short whose pages stay in a log under the temporary name; a created cluster
    leaves no temporary file or log behind."""
    import sqlite3

    import pytest

    from jetlink.core.store import DataDir
    from jetlink.core.store.datadir import connect, whole_file

    db = tmp_path / "x.db"
    conn = connect(db)
    conn.execute("CREATE TABLE t(a)")
    other = sqlite3.connect(db)
    other.execute("BEGIN")
    other.execute("SELECT * FROM t").fetchall()  # a reader holds the log
    with pytest.raises(sqlite3.OperationalError):
        whole_file(conn)
    other.rollback()
    other.close()
    whole_file(conn)
    conn.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.db"]
    d = DataDir(tmp_path / "data")
    d.add_cluster("west")
    d.close()
    assert sorted(p.name for p in (tmp_path / "data").iterdir()
                  if p.name.startswith(".west")) == []


def test_an_io_error_with_no_room_left_is_the_full_disk(tmp_path, monkeypatch):
    """SQLite's I/O error on a filesystem with next to no room (its log index could not be
    created) is said as the full disk it is, with what to do, not as a failing storage or
    a database that changed while read; with room left it stays an I/O error."""
    import sqlite3

    from jetlink.core.store import health

    err = sqlite3.OperationalError("disk I/O error")
    err.sqlite_errorname = "SQLITE_IOERR_SHMOPEN"  # type: ignore[attr-defined]
    monkeypatch.setattr(health, "free_bytes", lambda _p: 4096)
    got = health.storage_error(err, "east", tmp_path / "east.db")
    assert isinstance(got, health.DiskFullError), got
    assert str(got).startswith(f"cluster east: {tmp_path / 'east.db'}: database or disk is "
                               "full (")
    assert "free some space and run the command again" in str(got)
    monkeypatch.setattr(health, "free_bytes", lambda _p: 10 << 30)
    got = health.storage_error(err, "east", tmp_path / "east.db")
    assert not isinstance(got, health.DiskFullError) and "the storage failed" in str(got)


def test_repair_reads_the_subjects_a_damaged_table_lost_back_from_its_index(tmp_path):
    """The one page of the subjects table zeroed: its index still names every subject, so
    the repair keeps every message (not "0 kept, all lost" because the rows that name their
    subjects were on one page)."""
    import sqlite3

    from helpers import runner

    from jetlink.cli.main import app

    data = tmp_path / "data"
    data.mkdir()

    def jl(*args):
        return runner.invoke(app, ["--data-dir", str(data), *args], prog_name="jetlink")

    for args in (["stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"],
                 ["pub", "orders.x", "hello", "--count", "300"], ["pub", "orders.a", "a"],
                 ["kv", "add", "CFG"], ["kv", "put", "CFG", "k1", "v1"]):
        assert jl(*args).exit_code == 0, args
    db = data / "local.db"
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'subjects'"
                        ).fetchone()[0]
    conn.close()
    with open(db, "r+b") as f:
        f.seek((root - 1) * page)
        f.write(b"\0" * page)
    r = jl("cluster", "check", "local", "--repair", "-j")
    assert r.exit_code == 0, r.output
    info = json.loads(jl("stream", "info", "ORDERS", "-j").stdout)
    assert info["state"]["messages"] == 301, info["state"]
    assert jl("kv", "get", "CFG", "k1", "--raw").stdout == "v1"


def test_a_repair_that_cannot_make_its_copy_names_the_cluster_and_leaves_nothing(
        tmp_path, monkeypatch):
    """The repaired copy cannot be written (a full disk): one line naming the cluster and
    its file, the damaged file left as it was, no half-made copy left behind."""
    import sqlite3

    import pytest

    from jetlink.core import repair as R
    from jetlink.core.store import DataDir, health

    dd = DataDir(tmp_path / "data")
    dd.add_cluster("west")
    before = (tmp_path / "data" / "west.db").read_bytes()
    real = R.connect

    def full(path, *a, **k):
        conn = real(path, *a, **k)
        if ".repair-" in str(path):
            err = sqlite3.OperationalError("database or disk is full")
            err.sqlite_errorname = "SQLITE_FULL"  # type: ignore[attr-defined]
            conn.close()
            raise err
        return conn

    monkeypatch.setattr(R, "connect", full)
    with pytest.raises(health.DiskFullError) as exc:
        R.repair(dd, "west")
    assert str(exc.value).startswith(
        f"cluster west: {tmp_path / 'data' / 'west.db'}: database or disk is full (")
    assert (tmp_path / "data" / "west.db").read_bytes() == before
    assert [p.name for p in (tmp_path / "data").iterdir() if ".repair-" in p.name] == []
    dd.close()


def test_a_check_of_a_linked_database_leaves_no_file_beside_it(tmp_path):
    """cluster check reads a database behind a symbolic link as the one it leads to: SQLite
    puts the side files beside the target, and the check leaves none there nor beside the
    link (core/store/datadir.py connect_reading)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    made = DataDir(elsewhere)
    made.add_cluster("east")
    made.close()
    data = tmp_path / "data"
    data.mkdir()
    (data / "east.db").symlink_to(elsewhere / "east.db")
    for d in (elsewhere, data):
        for side in d.glob("*.db-*"):
            side.unlink()
    from jetlink.core.store.datadir import integrity

    assert integrity(data / "east.db") == []
    assert sorted(p.name for p in elsewhere.iterdir() if not p.name.startswith(".")) == [
        "east.db"]
    assert sorted(p.name for p in data.iterdir()) == ["east.db"]


def test_text_a_damaged_page_gives_is_the_damage_not_a_traceback(jl):
    """sqlite3 decodes a TEXT column as UTF-8: random bytes a damaged page put there raise
    UnicodeDecodeError out of any read. With a database of the data directory checking
    damaged, that is its damage (one line naming it); with every one sound it is a bug,
    left as it is (its traceback)."""
    from jetlink.cli.launch import command_error
    from jetlink.core.store.health import DamagedError

    ok(jl("cluster", "add", "k", "--kind", "kafka"))
    ok(jl("--cluster", "k", "topic", "create", "t", "--partitions", "3"))
    ok(jl("--cluster", "k", "topic", "produce", "t", "--count", "3000", PAYLOAD))
    bad = UnicodeDecodeError("utf-8", b"\x16\xd6\xac", 1, 2, "invalid continuation byte")
    assert command_error(bad, jl.data) is None  # (all sound: a bug, left to raise)
    damage_page(jl.data / "k.db")
    err = command_error(bad, jl.data)
    assert isinstance(err, DamagedError), err
    assert str(jl.data / "k.db") in err.description and "is damaged" in err.description
