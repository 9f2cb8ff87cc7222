"""The data directory, cluster databases, schema migrations and the injectable clock."""

from __future__ import annotations

import json
import os
import sqlite3
import stat

import pytest
from helpers import data_dir_bytes

from jetlink.core.clock import (
    ManualClock,
    SystemClock,
    format_rfc3339_nano,
    parse_rfc3339_nano,
)
from jetlink.core.errors import JetlinkError, NotFoundError
from jetlink.core.store import (
    LOCAL,
    SCHEMA_VERSION,
    DataDir,
    connect,
    default_data_dir,
    validate_cluster_name,
)


# --- data directory --------------------------------------------------------------------------
def test_directory_created_0700_and_local_on_first_use(dd):
    assert not dd.path.exists()
    infos = dd.clusters()
    assert [c.name for c in infos] == [LOCAL]
    assert infos[0].kind == "nats" and infos[0].down is False
    assert stat.S_IMODE(os.stat(dd.path).st_mode) == 0o700
    db = dd.path / "local.db"
    assert stat.S_IMODE(os.stat(db).st_mode) == 0o600


def test_open_local_creates_it(dd):
    c = dd.open()
    assert c.name == LOCAL and c.kind == "nats"
    assert (dd.path / "local.db").exists()


def test_add_list_remove(dd):
    info = dd.add_cluster("east", kind="nats")
    assert info.name == "east" and info.kind == "nats"
    dd.add_cluster("k1", kind="kafka")
    assert [(c.name, c.kind) for c in dd.clusters()] == [
        ("east", "nats"), ("k1", "kafka"), ("local", "nats")]
    dd.remove_cluster("east")
    assert [c.name for c in dd.clusters()] == ["k1", "local"]
    assert not (dd.path / "east.db").exists()


def test_add_twice_refused(dd):
    dd.add_cluster("east")
    with pytest.raises(JetlinkError, match="already exists"):
        dd.add_cluster("east")


def test_unknown_cluster_and_kind(dd):
    with pytest.raises(NotFoundError):
        dd.open("nope")
    with pytest.raises(NotFoundError):
        dd.remove_cluster("nope")
    with pytest.raises(JetlinkError, match="invalid cluster kind"):
        dd.add_cluster("x", kind="redis")


@pytest.mark.parametrize("name", [
    "", "../etc", "a/b", "a.b", "..", "x" * 65, "sp ace", "nul\x00", "a\\b", "é", None, 3,
])
def test_invalid_cluster_names_never_touch_the_filesystem(dd, name):
    with pytest.raises(JetlinkError, match="invalid cluster name"):
        dd.add_cluster(name)
    with pytest.raises(JetlinkError, match="invalid cluster name"):
        dd.open(name)
    assert not dd.path.exists() or os.listdir(dd.path) == []


@pytest.mark.parametrize("name", ["local", "a", "East-1", "x_y", "Z" * 64])
def test_valid_cluster_names(name):
    assert validate_cluster_name(name) == name


def test_default_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("JETLINK_DATA_DIR", str(tmp_path / "d"))
    assert default_data_dir() == tmp_path / "d"
    monkeypatch.delenv("JETLINK_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "x"))
    assert default_data_dir() == tmp_path / "x" / "jetlink"


def test_down_flag_is_shared_between_handles(dd):
    dd.add_cluster("east")
    a = dd.open("east")
    other = DataDir(dd.path)
    b = other.open("east")
    assert a.down is False
    b.set_down(True)
    assert a.down is True
    assert [c.down for c in dd.clusters() if c.name == "east"] == [True]
    b.set_down(False)
    assert a.down is False
    other.close()


# --- schema ----------------------------------------------------------------------------------
def test_wal_busy_timeout_and_schema_version(dd):
    c = dd.open()
    conn = c.conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"meta", "streams", "subjects", "msgs", "msg_ttl", "dedupe", "core_msgs",
            "core_subs", "schema_components"} <= tables
    # msgs has no index on subjects (the per-subject chains replace it)
    indexes = {r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master"
        " WHERE type='index' AND tbl_name='msgs' AND sql IS NOT NULL")}
    assert indexes == set()


def test_reopen_does_not_migrate_again(dd):
    c = dd.open()
    c.meta_set("probe", 42)
    dd.close()
    again = DataDir(dd.path).open()
    assert again.meta_get("probe") == 42
    assert again.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    again.close()


def test_a_v1_database_is_brought_to_this_version_with_its_messages(tmp_path):
    """Schema v2 adds ``src_hdrs`` (source headers by reference), v3 ``msg_next`` (links set
    later); a v1 database gains both when opened for writing, and keeps its streams and
    messages."""
    from jetlink.core.clock import ManualClock
    from jetlink.core.jetstream import JetStream
    from jetlink.core.store.schema import MIGRATIONS

    path = tmp_path / "local.db"
    conn = sqlite3.connect(path, isolation_level=None)
    for stmt in MIGRATIONS[0]:
        conn.execute(stmt)
    conn.execute("PRAGMA user_version=1")
    conn.close()
    dd = DataDir(tmp_path)
    js = JetStream(dd.open("local"), ManualClock())
    assert js.cluster.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
    js.add_stream({"name": "S", "subjects": ["s.>"]})
    js.publish("s.a", b"x", {"K": "v"})
    assert [(m.subject, m.headers, m.data) for m in js.messages("S")] == [
        ("s.a", {"K": ["v"]}, b"x")]
    dd.close()


def _as_v1(path) -> None:
    """A database of this version without references, turned back into schema v1."""
    conn = sqlite3.connect(path, isolation_level=None)
    assert conn.execute("SELECT count(*) FROM src_hdrs").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM msg_next").fetchone()[0] == 0
    conn.execute("DROP TABLE src_hdrs")
    conn.execute("DROP TABLE msg_next")
    conn.execute("PRAGMA user_version=1")
    conn.close()


def test_a_v1_database_read_by_the_lake_and_repaired(tmp_path):
    """A v1 database not yet opened by this version: the lake reads it as it is (no
    references there), and a repair copies it into a database of this version."""
    from jetlink.core import lake
    from jetlink.core.clock import ManualClock
    from jetlink.core.jetstream import JetStream
    from jetlink.core.repair import repair

    dd = DataDir(tmp_path)
    js = JetStream(dd.open("local"), ManualClock())
    js.add_stream({"name": "S", "subjects": ["s.>"]})
    js.publish("s.a", b"x", {"K": "v"})
    js.publish("s.b", b"y")
    dd.close()
    _as_v1(tmp_path / "local.db")
    got = [(r["seq"], r["headers"], r["data"]) for b in lake.iter_stream_batches(
        str(tmp_path / "local.db"), "S", 0, 1 << 40) for r in b.to_pylist()]
    assert got == [(1, b"NATS/1.0\r\nK: v\r\n\r\n", b"x"), (2, None, b"y")]
    report = repair(DataDir(tmp_path), "local")
    assert report.dropped == 0 and report.messages_after == 2
    conn = sqlite3.connect(tmp_path / "local.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM src_hdrs").fetchone()[0] == 0
    conn.close()
    dd = DataDir(tmp_path)
    js = JetStream(dd.open("local"), ManualClock())
    assert [(m.seq, m.data) for m in js.messages("S")] == [(1, b"x"), (2, b"y")]
    dd.close()


def test_a_database_of_a_newer_jetlink_is_refused(jl):
    DataDir(jl.data).open().close()  # the default cluster created
    conn = sqlite3.connect(jl.data / "local.db", isolation_level=None)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.close()
    dd = DataDir(jl.data)
    with pytest.raises(JetlinkError) as e:
        _ = dd.open("local").conn
    dd.close()
    assert str(e.value) == (
        f"cluster local: {jl.data / 'local.db'} has schema version {SCHEMA_VERSION + 1}, "
        f"written by a newer jetlink; this version reads up to {SCHEMA_VERSION}: upgrade "
        "jetlink")
    r = jl("stream", "ls")
    assert r.exit_code == 1 and "written by a newer jetlink" in r.stderr
    assert "Traceback" not in r.output and r.stdout == ""
    # cluster ls and cluster check agree with the verbs: NEWER, not damaged, never repaired
    before = data_dir_bytes(jl.data)
    r = jl("cluster", "ls")
    assert "NEWER" in r.stdout and "DAMAGED" not in r.stdout, r.stdout
    r = jl("cluster", "check", "--repair")
    assert (r.exit_code, r.stdout) == (1, (
        f"Cluster local: NEWER ({jl.data / 'local.db'})\n"
        f"  schema version {SCHEMA_VERSION + 1}, written by a newer jetlink; this version "
        f"reads up to {SCHEMA_VERSION}: upgrade jetlink (the file is sound: nothing to "
        "repair)\n"))
    assert r.stderr == ("jetlink: 1 cluster database written by a newer jetlink (local): "
                        "upgrade jetlink to use it\n")
    assert json.loads(jl("cluster", "check", "-j").stdout)[0]["schema_version"] == \
        SCHEMA_VERSION + 1
    assert data_dir_bytes(jl.data) == before


def test_component_schema_applied_once(dd):
    c = dd.open()
    steps = [["CREATE TABLE t1 (a INTEGER)"], ["ALTER TABLE t1 ADD COLUMN b TEXT"]]
    c.ensure_schema("demo", steps[:1])
    c.ensure_schema("demo", steps[:1])
    c.ensure_schema("demo", steps)
    cols = [r[1] for r in c.conn.execute("PRAGMA table_info(t1)")]
    assert cols == ["a", "b"]
    other = DataDir(dd.path).open()
    other.ensure_schema("demo", steps)  # another handle: nothing to do
    assert other.conn.execute(
        "SELECT version FROM schema_components WHERE component='demo'").fetchone()[0] == 2
    other.close()


def test_component_schema_inside_an_open_transaction(dd):
    c = dd.open()
    steps = [["CREATE TABLE t2 (a INTEGER)"]]
    with pytest.raises(RuntimeError):
        with c.transaction():
            c.ensure_schema("inner", steps)  # joins the caller's transaction
            c.conn.execute("INSERT INTO t2 VALUES (1)")
            raise RuntimeError("the caller rolls back")
    assert c.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 't2'").fetchone() is None
    with c.transaction():
        c.ensure_schema("inner", steps)  # made again: the rollback took it away
    assert c.conn.execute("SELECT count(*) FROM t2").fetchone()[0] == 0


def test_transaction_rolls_back_on_error_and_nests(dd):
    c = dd.open()
    with pytest.raises(RuntimeError):
        with c.transaction() as conn:
            conn.execute("INSERT INTO meta(key, value) VALUES ('a', 1)")
            with c.transaction() as inner:  # joins the outer one
                inner.execute("INSERT INTO meta(key, value) VALUES ('b', 2)")
            raise RuntimeError("boom")
    assert c.meta_get("a") is None and c.meta_get("b") is None
    with c.transaction() as conn:
        conn.execute("INSERT INTO meta(key, value) VALUES ('a', 1)")
    assert c.meta_get("a") == 1


def test_readers_do_not_block_a_writer(dd):
    c = dd.open()
    reader = connect(c.path)
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM meta").fetchone()[0] >= 1
    c.meta_set("w", 1)  # the writer commits while a read transaction is open
    # the reader still sees its snapshot
    assert reader.execute("SELECT count(*) FROM meta WHERE key='w'").fetchone()[0] == 0
    reader.execute("COMMIT")
    assert reader.execute("SELECT count(*) FROM meta WHERE key='w'").fetchone()[0] == 1
    reader.close()


def test_sql_values_are_parameters(dd):
    c = dd.open()
    evil = "x'); DROP TABLE meta; --"
    c.meta_set(evil, evil)
    assert c.meta_get(evil) == evil
    assert c.conn.execute("SELECT count(*) FROM sqlite_master WHERE name='meta'").fetchone()[0]


def test_remove_open_cluster(dd):
    dd.add_cluster("gone")
    c = dd.open("gone")
    c.meta_set("x", 1)
    dd.remove_cluster("gone")
    assert not dd.has_cluster("gone")
    with pytest.raises(NotFoundError):
        dd.open("gone")


def test_not_a_database_is_reported(dd):
    dd.ensure()
    (dd.path / "bad.db").write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(JetlinkError, match="is not a SQLite database"):
        dd.open("bad")


# --- clock -----------------------------------------------------------------------------------
def test_manual_clock_moves_only_when_told():
    c = ManualClock(1_000)
    assert c.now_ns() == 1_000
    assert c.now_ns() == 1_000
    c.advance(500)
    assert c.now_ns() == 1_500
    c.advance_s(1.5)
    assert c.now_ns() == 1_500 + 1_500_000_000
    c.set(7)
    assert c.now_ns() == 7


def test_system_clock_is_wall_time():
    import time

    a = time.time_ns()
    b = SystemClock().now_ns()
    assert abs(b - a) < 5_000_000_000


@pytest.mark.parametrize("ns,text", [
    (0, "0001-01-01T00:00:00Z"),
    (1_767_225_600_000_000_000, "2026-01-01T00:00:00Z"),
    (1_767_225_600_123_456_789, "2026-01-01T00:00:00.123456789Z"),
    (1_767_225_600_120_000_000, "2026-01-01T00:00:00.12Z"),
    (1_767_225_600_000_000_001, "2026-01-01T00:00:00.000000001Z"),
])
def test_rfc3339_nano_like_go(ns, text):
    assert format_rfc3339_nano(ns) == text
    assert parse_rfc3339_nano(text) == ns


def test_parse_rfc3339_offsets():
    assert parse_rfc3339_nano("2026-01-01T01:00:00+01:00") == 1_767_225_600_000_000_000
    # Go takes an offset of 24 hours (Python's timezone less): applied by hand
    assert parse_rfc3339_nano("2026-01-02T00:00:00+24:00") == 1_767_225_600_000_000_000
    assert parse_rfc3339_nano("2025-12-31T22:30:00.5-01:30") == 1_767_225_600_500_000_000


def test_new_databases_have_8_kib_pages_and_old_ones_keep_theirs(tmp_path):
    from jetlink.core.store.datadir import PAGE_SIZE

    dd = DataDir(tmp_path / "a")
    assert dd.open("local").conn.execute("PRAGMA page_size").fetchone()[0] == PAGE_SIZE == 8192
    dd.close()
    old = tmp_path / "b"
    old.mkdir()
    conn = sqlite3.connect(old / "local.db")  # a database made with SQLite's 4 KiB default
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    dd = DataDir(old)
    assert dd.open("local").conn.execute("PRAGMA page_size").fetchone()[0] == 4096
    dd.close()


def test_checkpoints_aside_copy_the_log_on_another_thread_and_wait_for_it(tmp_path):
    """Inside ``checkpoints_aside`` the connection's own commits do not checkpoint; a
    request runs one on the checkpointer's connection and thread; leaving the block waits
    for the last one (the log is then fully copied) and restores automatic checkpoints."""
    import threading

    dd = DataDir(tmp_path / "d")
    cl = dd.open("local")
    conn = cl.conn
    conn.execute("CREATE TABLE t (x BLOB)")
    names = []
    with cl.checkpoints_aside() as cp:
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        for _ in range(3):
            with cl.transaction() as c:
                c.executemany("INSERT INTO t VALUES (?)", [(os.urandom(1000),)] * 2000)
            cp.request()
            names += [t.name for t in threading.enumerate()]
        # without the checkpointer, the log would now hold every frame not yet copied
    assert "jetlink-checkpoint" in names
    assert "jetlink-checkpoint" not in [t.name for t in threading.enumerate()]
    assert cp.requests == 3 and cp.error is None
    busy, log, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    assert busy == 0 and log == copied  # nothing left to copy
    assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
    assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 6000
    dd.close()


def test_an_interrupt_while_the_checkpointer_starts_is_the_interrupt(tmp_path, monkeypatch):
    """Ctrl-C inside the checkpointer thread's start (``replicate --follow`` stopped at
    that instant): the block ends with the KeyboardInterrupt, not with "cannot join thread
    before it is started" and a traceback."""
    import threading

    dd = DataDir(tmp_path / "d")
    cl = dd.open("local")

    def interrupted(self):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        with cl.checkpoints_aside() as cp:
            monkeypatch.setattr(threading.Thread, "start", interrupted)
            cp.request()
    monkeypatch.undo()
    assert cl.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
    dd.close()


def test_checkpoints_aside_without_a_request_start_no_thread(tmp_path):
    import threading

    dd = DataDir(tmp_path / "d")
    cl = dd.open("local")
    before = threading.active_count()
    with cl.checkpoints_aside() as cp:
        with cl.transaction() as c:
            c.execute("CREATE TABLE t (x)")
        assert threading.active_count() == before
    assert cp.requests == 0
    assert cl.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
    dd.close()


class _CutAfterBegin:
    """A connection whose BEGIN is followed by Ctrl-C (KeyboardInterrupt as the statement
    returns, where Python checks for signals)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        cur = self._conn.execute(sql, *args)
        if sql.startswith("BEGIN"):
            raise KeyboardInterrupt
        return cur

    def __getattr__(self, name: str) -> object:
        return getattr(self._conn, name)


@pytest.mark.parametrize("scope", ["transaction", "read"])
def test_ctrl_c_as_begin_returns_leaves_no_transaction_open(dd, scope):
    cluster = dd.open()
    real = cluster.conn
    cluster._conn = _CutAfterBegin(real)
    try:
        with pytest.raises(KeyboardInterrupt), getattr(cluster, scope)():
            pass
    finally:
        cluster._conn = real
    assert not real.in_transaction  # else the next transaction() would join it, never commit
    with cluster.transaction() as conn:
        conn.execute("INSERT INTO meta(key, value) VALUES ('after', 1)")
    assert dd.open("local").meta_get("after") == 1


def test_end_interrupted_rolls_back_what_an_interrupt_left_open(dd, tmp_path):
    cluster = dd.open()
    cluster.conn.execute("BEGIN IMMEDIATE")  # as a generator scope cut in its __enter__
    cluster.conn.execute("INSERT INTO meta(key, value) VALUES ('cut', 1)")
    cluster.end_interrupted()
    assert not cluster.conn.in_transaction
    cluster.end_interrupted()  # nothing open: nothing done
    other = DataDir(dd.path).open("local")
    assert other.meta_get("cut") is None
    other.meta_set("next", 2)  # the write lock is free again
    assert cluster.meta_get("next") == 2


def test_repair_keeps_the_first_sequence_of_a_purged_empty_stream(tmp_path):
    """A stream never written then purged has first_seq 1 (last + 1, as the server's
    purge sets it); a repair kept recomputing 0."""
    from jetlink.core.clock import ManualClock
    from jetlink.core.jetstream import JetStream
    from jetlink.core.repair import repair

    js = JetStream(DataDir(tmp_path / "d").open("local"), ManualClock())
    js.add_stream({"name": "O", "subjects": ["o.>"]})
    js.add_stream({"name": "N", "subjects": ["n.>"]})
    js.purge_stream("O")
    assert (js.stream_info("O").state.first_seq, js.stream_info("N").state.first_seq) == (1, 0)
    js.cluster.conn.close()
    repair(DataDir(tmp_path / "d"), "local")
    js = JetStream(DataDir(tmp_path / "d").open("local"), ManualClock())
    assert (js.stream_info("O").state.first_seq, js.stream_info("N").state.first_seq) == (1, 0)
