"""The default cluster before its file exists (core/store/datadir.py ``_Absent``).

A command that creates nothing (a read, a change to objects that must exist, a dry run)
sees the default cluster ``local`` of a data directory without ``local.db`` as an empty
cluster in memory. A change it commits there makes the file, from that database, and is
kept: never made in memory and lost. A change refused leaves no file. On a data directory
that does not exist, the commands that can only act on objects it would hold (a consumer
in a stream, a mirror topic on a link, a link from another cluster, an ACL in an
authorizer, consuming a topic) create nothing and say the directory is missing.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from helpers import data_dir_bytes, doc, ok

from jetlink.core.errors import JetlinkError
from jetlink.core.store import DataDir

MISSING = "does not exist (nothing to read or act on"


@pytest.fixture
def beside(jl):
    """A data directory holding a Kafka cluster ``a`` with topic ``t`` and no default
    cluster's file."""
    ok(jl("cluster", "add", "a", "--kind", "kafka"))
    ok(jl("--cluster", "a", "topic", "create", "t"))
    assert not (jl.data / "local.db").exists()
    return jl


def test_enabling_the_authorizer_of_a_default_cluster_not_yet_made_is_kept(beside):
    jl = beside
    ok(jl("cluster", "authorizer", "local", "--enable"))
    assert (jl.data / "local.db").is_file()
    r = jl("cluster", "authorizer", "local")
    assert r.exit_code == 0 and "authorizer on" in r.stdout, r.stdout


def test_marking_a_default_cluster_not_yet_made_down_is_kept(beside):
    jl = beside
    ok(jl("cluster", "down", "local"))
    rows = {c["name"]: c for c in doc(jl("cluster", "ls", "-j"))}
    assert rows["local"]["down"] is True, rows


@pytest.mark.parametrize("tool", ["links", "kafka-cluster-links"])
def test_a_link_into_a_default_cluster_not_yet_made_is_kept(beside, tool):
    jl = beside
    if tool == "links":
        ok(jl("links", "create", "L", "--source-cluster", "a"))
    else:
        ok(jl("kafka-cluster-links", "--create", "--link", "L", "--cluster-id", "a"))
    links = doc(jl("links", "list", "-j"))
    assert [link["link_name"] for link in links] == ["L"], links
    r = jl("cluster", "check")
    assert r.exit_code == 0, r.stdout + r.stderr


@pytest.mark.parametrize("args", [
    ["consumer", "add", "S", "C", "--defaults"],
    ["group", "set-offsets", "g", "--topic", "t", "--to-earliest"],
    ["pub", "s", "x"],
    ["kv", "put", "B", "k", "v"],
    ["mirrors", "create", "t", "--link", "L"],
    ["acls", "add", "--principal", "User:a", "--operation", "Read", "--topic", "t"],
    ["topic", "consume", "t", "--group", "g"],
    ["apply", "--dry-run", "plan.json"],
])
def test_a_refused_change_or_a_dry_run_makes_no_default_cluster(beside, args):
    jl = beside
    (jl.tmp / "plan.json").write_text(json.dumps(
        {"streams": {"S": {"subjects": ["s"]}}}))
    before = data_dir_bytes(jl.data)
    r = jl(*args)
    assert r.exit_code in (0, 1), r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    assert data_dir_bytes(jl.data) == before


@pytest.mark.parametrize("args", [
    ["topic", "consume", "t"],
    ["mirrors", "create", "t", "--link", "L"],
    ["links", "create", "L", "--source-cluster", "a"],
    ["consumer", "add", "S", "C", "--defaults"],
    ["acls", "add", "--principal", "User:a", "--operation", "Read", "--topic", "t"],
    ["kafka-acls", "--add", "--allow-principal", "User:a", "--operation", "Read",
     "--topic", "t"],
    ["kafka-mirrors", "--create", "--mirror-topic", "t", "--link", "L"],
    ["kafka-cluster-links", "--create", "--link", "L", "--cluster-id", "a"],
])
def test_a_change_inside_objects_of_a_missing_data_directory_creates_nothing(jl, args):
    missing = jl.tmp / "never"
    r = jl("--data-dir", str(missing), *args)
    assert r.exit_code == 1, r.stdout + r.stderr
    assert f"data directory {missing} {MISSING}" in r.stderr, r.stderr
    assert not missing.exists()


def test_a_first_write_racing_another_process_keeps_the_other_and_says_so(tmp_path):
    """The default cluster made by another process while this one's first write runs in
    memory: this write is not stored (one sentence: run it again), the other's stays; a
    handle that finds the file made before it writes writes there."""
    data = tmp_path / "d"
    data.mkdir()
    ours = DataDir(data, create=False)
    absent = ours.open()
    assert absent.conn.execute("SELECT value FROM meta WHERE key = 'down'").fetchone() == (0,)
    with pytest.raises(JetlinkError, match="created by another command while this one ran: "
                                           "its change was not stored; run the command again"):
        with absent.transaction() as conn:
            conn.execute("UPDATE meta SET value = 1 WHERE key = 'down'")
            theirs = DataDir(data)
            with theirs.open().transaction() as other:
                other.execute("UPDATE meta SET value = 'theirs' WHERE key = 'config_gen'")
            theirs.close()
    check = sqlite3.connect(data / "local.db")
    try:
        meta = dict(check.execute("SELECT key, value FROM meta"))
    finally:
        check.close()
    assert meta["config_gen"] == "theirs" and meta["down"] == 0, meta
    later = DataDir(data, create=False).open()  # opened before: finds the file now
    with absent.transaction() as conn:
        conn.execute("UPDATE meta SET value = 1 WHERE key = 'down'")
    assert later.down is True
    absent.close()
    later.close()


def test_the_file_made_from_a_first_write_is_a_cluster_like_any(tmp_path):
    """Made from the database the first write ran in: the schema of a file made by
    ``cluster add``, the write, a creation time, and no file left aside."""
    data = tmp_path / "d"
    data.mkdir()
    absent = DataDir(data, lazy_local=True).open()
    assert not (data / "local.db").exists()
    with absent.transaction() as conn:
        conn.execute("UPDATE meta SET value = 1 WHERE key = 'down'")
    absent.close()
    made = DataDir(data).open()
    assert made.down is True
    DataDir(data).add_cluster("other")

    def schema(name: str) -> list[tuple[str, str]]:
        conn = sqlite3.connect(data / f"{name}.db")
        try:
            return sorted(conn.execute("SELECT name, sql FROM sqlite_master"))
        finally:
            conn.close()

    assert schema("local") == schema("other")
    created = dict(made.conn.execute("SELECT key, value FROM meta"))["created_ns"]
    assert isinstance(created, int) and created > 0
    made.close()
    assert sorted(p.name for p in data.glob("*.db")) == ["local.db", "other.db"]
    assert not [p for p in data.iterdir() if ".new-" in p.name]


REFUSED_CREATES = [
    ["stream", "add", "X", "--subjects", "x..", "--defaults"],
    ["stream", "add", "X", "--subjects", "x", "--defaults", "--replicas", "6"],
    ["kv", "add", "BAD.NAME"],
    ["kv", "add", "B", "--mirror", "O@west"],
    ["topic", "create", "t", "--partitions", "1025"],  # (the engine's limit: a refused create)
]


@pytest.mark.parametrize("args", REFUSED_CREATES, ids=lambda a: " ".join(a[:3]))
def test_a_refused_create_makes_no_default_cluster(beside, args):
    jl = beside
    before = data_dir_bytes(jl.data)
    r = jl(*args)
    assert r.exit_code == 1, r.stdout + r.stderr
    assert data_dir_bytes(jl.data) == before


@pytest.mark.parametrize("args", REFUSED_CREATES, ids=lambda a: " ".join(a[:3]))
def test_a_refused_first_create_makes_no_data_directory(jl, args):
    missing = jl.tmp / "never"
    r = jl("--data-dir", str(missing), *args)
    assert r.exit_code == 1, r.stdout + r.stderr
    assert not missing.exists()
    ok(jl("--data-dir", str(missing), "stream", "add", "S", "--subjects", "s", "--defaults"))
    assert sorted(p.name for p in missing.glob("*.db")) == ["local.db"]
    assert doc(jl("--data-dir", str(missing), "stream", "ls", "-j")) == ["S"]
