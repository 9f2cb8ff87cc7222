"""Running a failover again (embedded engine, through the CLI): what a re-run does with the
flags it is given, and what it says it did.

The rules (docs/failover.md "Running a DR verb again"): `--subjects` given to a re-run is
applied as `stream edit` would (asked, or -f), and reported with the subjects it replaced;
`--topology` whose origin subjects differ from the promoted stream's is refused (exit 2),
naming the command that changes them; `--no-consumers` after an earlier run placed the
origin's consumers is refused (exit 2: they cannot be taken back by a flag). A re-run of a
promotion that had finished reports `"already_done": true` (and when it was promoted), never
`"resumed": true`.

The scenario: cluster west holds ORDERS (orders.>, 2 messages; consumer billing acked to 1),
the default cluster `local` its mirror BACKUP; positions synced; west down; BACKUP failed
over (the origin's subjects, as last synced; billing placed). The clock is the manual one
of tests/conftest.py (2026-01-01T00:00:00Z).
"""

from __future__ import annotations

import json

import pytest
from helpers import data_dir_bytes, doc, ok

PROMOTED_AT = "2026-01-01T00:00:00Z"


@pytest.fixture
def jl(jl, cli_clock, utc):
    return jl


def _failed_over(jl) -> dict:
    ok(jl("cluster", "add", "west"))
    ok(jl("--cluster", "west", "stream", "add", "ORDERS", "--subjects", "orders.>",
          "--defaults"))
    ok(jl("stream", "add", "BACKUP", "--mirror", "ORDERS@west", "--defaults"))
    ok(jl("--cluster", "west", "pub", "orders.a", "one"))
    ok(jl("--cluster", "west", "pub", "orders.b", "two"))
    ok(jl("--cluster", "west", "consumer", "add", "ORDERS", "billing", "--pull",
          "--ack", "explicit", "--defaults"))
    ok(jl("--cluster", "west", "consumer", "next", "ORDERS", "billing", "--ack"))
    ok(jl("positions", "sync"))
    ok(jl("cluster", "down", "west"))
    return doc(jl("stream", "failover", "BACKUP", "-f", "-j"))


def test_a_rerun_applies_the_subjects_given(jl):
    first = _failed_over(jl)
    assert (first["subjects"], first["subjects_from"], first["resumed"]) == (
        ["orders.>"], "positions", False)
    # no terminal and no -f: the change is asked for, so refused as any unconfirmed change
    res = jl("stream", "failover", "BACKUP", "--subjects", "east.orders.>")
    assert (res.exit_code, res.stderr) == (2, (
        "jetlink: error: no terminal to confirm on: pass -f/--force to change the subjects "
        "of stream BACKUP\n"))
    # the dry run says what would change, and changes nothing
    plan = doc(jl("stream", "failover", "BACKUP", "--subjects", "east.orders.>", "--dry-run",
                  "-j"))
    assert (plan["subjects"], plan["subjects_from"], plan["subjects_before"]) == (
        ["east.orders.>"], "given", ["orders.>"])
    info = doc(jl("stream", "info", "BACKUP", "-j"))
    assert info["config"]["subjects"] == ["orders.>"]
    res = ok(jl("stream", "failover", "BACKUP", "--subjects", "east.orders.>", "-f"))
    lines = res.stdout.splitlines()
    assert lines[0] == (f"Stream BACKUP was already promoted (failover) at {PROMOTED_AT}: its "
                        "subjects were changed from orders.> to east.orders.>")
    assert "              Subjects: east.orders.> (given; replaced orders.>)" in lines
    info = doc(jl("stream", "info", "BACKUP", "-j"))
    assert info["config"]["subjects"] == ["east.orders.>"]
    pubbed = doc(jl("pub", "east.orders.x", "three", "-j"))
    assert (pubbed["stream"], pubbed["seq"]) == ("BACKUP", 3)
    # the same subjects again: nothing changes, nothing asked
    rep = doc(jl("stream", "failover", "BACKUP", "--subjects", "east.orders.>", "-j"))
    assert (rep["subjects"], rep["subjects_from"], rep["subjects_before"]) == (
        ["east.orders.>"], "promoted", None)


def test_a_rerun_with_subjects_another_stream_has_is_refused_by_the_server(jl):
    _failed_over(jl)
    ok(jl("stream", "add", "OTHER", "--subjects", "other.>", "--defaults"))
    res = jl("stream", "failover", "BACKUP", "--subjects", "other.>", "-f", "-j")
    assert res.exit_code == 1
    assert json.loads(res.stdout)["error"]["err_code"] == 10065
    assert doc(jl("stream", "info", "BACKUP", "-j"))["config"]["subjects"] == ["orders.>"]


def test_a_rerun_refuses_topology_subjects_that_differ(jl, tmp_path):
    _failed_over(jl)
    topo = tmp_path / "topo.toml"
    topo.write_text('[clusters.west]\n[streams.ORDERS]\ncluster = "west"\n'
                    'subjects = ["west.orders.>"]\n')
    res = jl("stream", "failover", "BACKUP", "--topology", str(topo), "-f")
    assert (res.exit_code, res.stderr) == (2, (
        "jetlink: error: stream BACKUP was promoted before, with the subjects orders.>; the "
        "topology file gives its origin ORDERS west.orders.>: a re-run does not take subjects "
        "from a topology file (the promoted stream has its own); to change them run jetlink "
        "stream failover BACKUP --subjects 'west.orders.>'\n"))
    assert doc(jl("stream", "info", "BACKUP", "-j"))["config"]["subjects"] == ["orders.>"]
    topo.write_text('[clusters.west]\n[streams.ORDERS]\ncluster = "west"\n'
                    'subjects = ["orders.>"]\n')
    rep = doc(jl("stream", "failover", "BACKUP", "--topology", str(topo), "-f", "-j"))
    assert (rep["subjects"], rep["already_done"]) == (["orders.>"], True)


def test_a_rerun_refuses_no_consumers_once_they_were_placed(jl):
    first = _failed_over(jl)
    assert [(p["consumer"], p["status"]) for p in first["consumers"]] == [
        ("billing", "created")]
    res = jl("stream", "failover", "BACKUP", "--no-consumers", "-f")
    assert (res.exit_code, res.stderr) == (2, (
        f"jetlink: error: stream BACKUP was promoted at {PROMOTED_AT} and 1 consumer of its "
        "origin was placed on it then: --no-consumers cannot take it back; remove what is not "
        "wanted with jetlink consumer rm BACKUP NAME (jetlink consumer ls BACKUP lists them)\n"))
    # nothing changed: billing is where the failover placed it
    billing = doc(jl("consumer", "info", "BACKUP", "billing", "-j"))
    assert billing["config"]["opt_start_seq"] == 2


def test_no_consumers_twice_is_fine(jl):
    ok(jl("cluster", "add", "west"))
    ok(jl("--cluster", "west", "stream", "add", "ORDERS", "--subjects", "orders.>",
          "--defaults"))
    ok(jl("stream", "add", "BACKUP", "--mirror", "ORDERS@west", "--defaults"))
    ok(jl("--cluster", "west", "consumer", "add", "ORDERS", "billing", "--pull",
          "--defaults"))
    first = doc(jl("stream", "failover", "BACKUP", "--no-consumers", "-f", "-j"))
    assert first["consumers"] == []
    again = doc(jl("stream", "failover", "BACKUP", "--no-consumers", "-f", "-j"))
    assert (again["already_done"], again["resumed"], again["consumers"]) == (True, False, [])


def test_a_rerun_of_a_finished_failover_is_already_done_not_resumed(jl):
    _failed_over(jl)
    rep = doc(jl("stream", "failover", "BACKUP", "-f", "-j"))
    assert (rep["resumed"], rep["already_done"], rep["promoted_at"], rep["complete"]) == (
        False, True, PROMOTED_AT, True)
    assert (rep["consumers"], rep["clamps"], rep["subjects_before"]) == ([], [], None)
    res = ok(jl("stream", "failover", "BACKUP", "-f"))
    assert res.stdout.splitlines()[0] == (
        f"Stream BACKUP was already promoted (failover) at {PROMOTED_AT}: nothing left to do")
    plan = doc(jl("stream", "failover", "BACKUP", "--dry-run", "-j"))
    assert (plan["resumed"], plan["already_done"]) == (False, True)
    # the other verb's re-run reports what was done: a failover
    other = ok(jl("stream", "promote", "BACKUP", "-f"))
    assert other.stdout.splitlines()[0] == (
        f"Stream BACKUP was already promoted (failover) at {PROMOTED_AT}: nothing left to do")
    assert doc(jl("stream", "promote", "BACKUP", "-f", "-j"))["action"] == "failover"


def test_a_kv_failover_rerun_is_already_done(jl):
    ok(jl("cluster", "add", "west"))
    ok(jl("--cluster", "west", "kv", "add", "CONFIG"))
    ok(jl("--cluster", "west", "kv", "put", "CONFIG", "a", "1"))
    ok(jl("kv", "add", "KV_CONFIG", "--mirror", "CONFIG", "--mirror-domain", "west"))
    ok(jl("cluster", "down", "west"))
    first = doc(jl("kv", "failover", "KV_CONFIG", "-f", "-j"))
    assert (first["resumed"], first["already_done"]) == (False, False)
    again = doc(jl("kv", "failover", "KV_CONFIG", "-f", "-j"))
    assert (again["resumed"], again["already_done"], again["subjects"]) == (
        False, True, ["$KV.CONFIG.>"])
    assert doc(jl("kv", "promote", "KV_CONFIG", "-f", "-j"))["action"] == "failover"


def test_a_topology_file_that_does_not_read_is_named_not_a_missing_stream(jl, tmp_path):
    """--topology FILE that is not there, or not TOML (or JSON), is a usage error (exit 2)
    naming the file and the parse error; one that reads but lacks the origin's stream says
    how many problems it has."""
    ok(jl("cluster", "add", "west"))
    ok(jl("--cluster", "west", "stream", "add", "ORDERS", "--subjects", "orders.>",
          "--defaults"))
    ok(jl("stream", "add", "BACKUP", "--mirror", "ORDERS@west", "--defaults"))
    ok(jl("cluster", "down", "west"))  # no positions synced: the subjects come from the file
    bad = tmp_path / "bad.toml"
    bad.write_text("garbage = [\n")
    before = data_dir_bytes(jl.data)
    missing = tmp_path / "missing.toml"
    for args in (("stream", "failover", "BACKUP"), ("dr", "failover", "--from", "west")):
        res = jl(*args, "--topology", str(missing), "--dry-run")
        assert (res.exit_code, res.stderr) == (2, (
            f"jetlink: error: --topology '{missing}': no such file\n")), args
        res = jl(*args, "--topology", "/dev/null", "--dry-run")
        assert (res.exit_code, res.stderr) == (2, (
            "jetlink: error: --topology '/dev/null': is not a regular file: give the topology "
            "file (TOML or JSON)\n")), args
        res = jl(*args, "--topology", str(tmp_path), "--dry-run")
        assert res.exit_code == 2 and res.stderr.endswith(
            f"Invalid value for '--topology': File '{tmp_path}' is a directory.\n"), args
        res = jl(*args, "--topology", "", "--dry-run")  # (the current directory)
        assert (res.exit_code, res.stderr) == (2, (
            "jetlink: error: --topology '.': is a directory (an empty value is the current "
            "one): give the topology file (TOML or JSON)\n")), args
    res = jl("stream", "failover", "BACKUP", "--topology", str(bad), "--dry-run")
    assert (res.exit_code, res.stderr) == (2, (
        f"jetlink: error: --topology {bad}: invalid TOML: Invalid value (at end of document) "
        f"(jetlink validate {bad} lists every problem)\n"))
    odd = tmp_path / "odd.toml"
    odd.write_text('[clusters.west.streams.ORDERS]\nsubjects = ["orders.>"]\n')
    res = jl("stream", "failover", "BACKUP", "--topology", str(odd), "-f")
    assert res.exit_code == 2
    assert ("the topology file has no stream ORDERS (it has 1 problem: jetlink validate lists "
            "them)") in res.stderr
    assert data_dir_bytes(jl.data) == before
