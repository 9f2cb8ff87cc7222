"""`jetlink dr fence --from REGION` and the split brain `dr check` reports, on the embedded
engine (core/dr/fence.py): west fails, east fails over taking west's subjects, west comes
back. Exact output, JSON and exit codes; the dry run changes no byte of the data directory;
failback --switch gives the fenced origin its recorded subjects back."""

from __future__ import annotations

import hashlib
import json

import pytest
from helpers import data_dir_bytes, doc, ok

SECOND = 1_000_000_000


@pytest.fixture
def jl(jl, cli_clock, utc):
    jl.clock = cli_clock
    return jl


def east(jl, *args):
    return jl("--cluster", "east", *args)


def west(jl, *args):
    return jl("--cluster", "west", *args)


@pytest.fixture
def returned(jl):
    """west: ORDERS on orders.> (2 messages) and the bucket CONFIG; east: their mirrors,
    failed over while west was down (ORDERS_EAST taking orders.>), then west up again."""
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(west(jl, "stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(east(jl, "stream", "add", "ORDERS_EAST", "--mirror", "ORDERS@west", "--defaults"))
    ok(west(jl, "kv", "add", "CONFIG"))
    ok(west(jl, "kv", "put", "CONFIG", "a", "1"))
    ok(east(jl, "kv", "add", "CONFIG", "--mirror", "CONFIG@west"))
    ok(west(jl, "pub", "orders.new", "one"))
    ok(west(jl, "pub", "orders.new", "two"))
    ok(west(jl, "consumer", "add", "ORDERS", "billing", "--defaults"))
    ok(jl("replicate"))
    ok(east(jl, "positions", "sync"))
    ok(jl("cluster", "down", "west"))
    dry = ok(east(jl, "stream", "failover", "ORDERS_EAST", "--dry-run"))
    assert dry.stderr.startswith(  # nothing promoted: what it would take
        "jetlink: warning: ORDERS_EAST would take orders.>, the subjects of its origin ORDERS")
    r = ok(east(jl, "stream", "failover", "ORDERS_EAST", "-f"))
    assert r.stderr == (
        "jetlink: warning: ORDERS_EAST takes orders.>, the subjects of its origin ORDERS (cluster "
        "west): when that origin answers again it captures them too (a publish stored on both "
        "sides, or a tail nobody reads) until it is fenced: jetlink dr fence --from west\n")
    r = ok(east(jl, "kv", "failover", "CONFIG", "-f"))
    assert "until it is fenced: jetlink dr fence --from west" in r.stderr
    ok(jl("cluster", "up", "west"))
    return jl


SPLIT = ("Split brain: the old origin ORDERS in cluster west answers again and takes "
         "orders.>, as ORDERS_EAST does: a publish there is stored on both sides; fence it: "
         "jetlink dr fence --from west (or jetlink stream failback ORDERS_EAST)")
SPLIT_KV = ("Split brain: the old origin KV_CONFIG in cluster west answers again and takes "
            "$KV.CONFIG.>, as CONFIG does: a put on either side is kept by that side's "
            "bucket alone: two buckets take writes, each missing the other's; fence it: "
            "jetlink dr fence --from west (or jetlink kv failback CONFIG)")


def _returned_results(result):
    d = json.loads(result.stdout)
    return {m["check_name"]: (m["status"], m.get("critical") or [], m.get("ok") or [],
                              m["readiness"]) for m in d["mirrors"]}


def test_dr_check_reports_the_split_brain_critical(returned):
    r = returned("dr", "check", "-j")
    assert r.exit_code == 2, r.stdout
    found = _returned_results(r)
    assert found["ORDERS_EAST@east"][:2] == ("CRITICAL", [SPLIT])
    assert found["ORDERS_EAST@east"][3]["returned_origin"] == {
        "state": "split brain", "origin": "ORDERS", "region": "west",
        "subjects": ["orders.>"], "promoted_subjects": ["orders.>"], "overlap": ["orders.>"],
        "fenced_subjects": None}
    assert found["CONFIG@east"][:2] == ("CRITICAL", [SPLIT_KV])


def test_an_unfenced_origin_on_other_subjects_is_critical(returned):
    ok(east(returned, "stream", "failover", "ORDERS_EAST", "--subjects", "east.orders.>",
            "-f"))
    r = returned("dr", "check", "ORDERS_EAST", "-j")
    assert r.exit_code == 2
    assert _returned_results(r)["ORDERS_EAST@east"][:2] == ("CRITICAL", [
        "Old origin ORDERS in cluster west answers again unfenced, taking orders.>: what "
        "producers still publish there is stored where nobody reads it; fence it: jetlink dr "
        "fence --from west (or jetlink stream failback ORDERS_EAST)"])


def test_an_origin_that_does_not_answer_is_not_listed(returned):
    ok(returned("cluster", "down", "west"))
    r = returned("dr", "check", "-j")
    assert json.loads(r.stdout)["mirrors"] == []


def _tree(path):
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


def test_the_dry_run_changes_nothing(returned):
    before = _tree(returned.data)
    r = ok(returned("dr", "fence", "--from", "west", "--dry-run"))
    assert r.stdout == (
        "kv CONFIG@west (failed over to CONFIG@east): to fence: $KV.CONFIG.> -> "
        "$JETLINK.fenced.KV_CONFIG\n"
        "stream ORDERS@west (failed over to ORDERS_EAST@east): to fence: orders.> -> "
        "$JETLINK.fenced.ORDERS\n"
        "Dry run: nothing changed\n")
    assert _tree(returned.data) == before


def test_fence_stops_writes_keeps_messages_and_a_rerun_is_a_noop(returned):
    d = doc(returned("dr", "fence", "--from", "west", "-f", "-j"))
    kept = "producers on its subjects get no responders; stored messages and consumers kept"
    assert d == {
        "regions": ["west"], "sides": ["east"], "dry_run": False,
        "objects": [
            {"kind": "kv", "name": "CONFIG", "region": "west",
             "failed_over_to": "CONFIG@east", "subjects_before": ["$KV.CONFIG.>"],
             "subjects_after": ["$JETLINK.fenced.KV_CONFIG"], "action": "fenced",
             "detail": kept},
            {"kind": "stream", "name": "ORDERS", "region": "west",
             "failed_over_to": "ORDERS_EAST@east", "subjects_before": ["orders.>"],
             "subjects_after": ["$JETLINK.fenced.ORDERS"], "action": "fenced",
             "detail": kept}],
        "fenced": 2, "already_fenced": 0, "not_fenced": [], "nothing_to_do": False,
        "complete": True}
    info = doc(west(returned, "stream", "info", "ORDERS", "-j"))
    assert info["config"]["subjects"] == ["$JETLINK.fenced.ORDERS"]
    assert json.loads(info["config"]["metadata"]["jetlink.fenced_subjects"]) == ["orders.>"]
    assert info["state"]["messages"] == 2 and info["state"]["consumer_count"] == 1
    r = west(returned, "pub", "orders.new", "three")
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: no stream matches subject orders.new (stream ORDERS is fenced by "
        "jetlink dr fence: it failed over, and its subjects orders.> are the other side's "
        "until a failback with --switch makes it the primary again)\n"))
    r = west(returned, "kv", "put", "CONFIG", "b", "2")
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: no stream matches subject $KV.CONFIG.b: bucket CONFIG is fenced by "
        "jetlink dr fence: it failed over, and its subjects $KV.CONFIG.> are the other "
        "side's until a failback with --switch makes it the primary again\n"))
    for write in (("create", "CONFIG", "b", "2"), ("update", "CONFIG", "a", "3", "1"),
                  ("del", "CONFIG", "a", "-f"), ("purge", "CONFIG", "a", "-f")):
        r = west(returned, "kv", *write)
        assert (r.exit_code, r.stderr) == (1, (
            f"jetlink: error: no stream matches subject $KV.CONFIG.{write[2]}: bucket CONFIG is "
            "fenced by jetlink dr fence: it failed over, and its subjects $KV.CONFIG.> are the "
            "other side's until a failback with --switch makes it the primary again\n")), write
    assert west(returned, "kv", "get", "CONFIG", "b").exit_code == 1  # (key not found)
    assert ok(west(returned, "kv", "get", "CONFIG", "a", "--raw")).stdout == "1"
    assert doc(west(returned, "stream", "info", "ORDERS", "-j"))["state"]["messages"] == 2
    r = ok(returned("dr", "fence", "--from", "west", "-f"))
    assert r.stdout == (
        "kv CONFIG@west (failed over to CONFIG@east): already fenced (its subjects "
        "$KV.CONFIG.> recorded)\n"
        "stream ORDERS@west (failed over to ORDERS_EAST@east): already fenced (its subjects "
        "orders.> recorded)\n"
        "Nothing to do: every old origin of west is fenced already\n")
    r = returned("dr", "check", "ORDERS_EAST", "-j")
    assert _returned_results(r)["ORDERS_EAST@east"][:3] == ("OK", [], [
        "Old origin ORDERS in cluster west fenced (its subjects orders.> recorded; jetlink "
        "stream failback ORDERS_EAST --switch gives them back)"])


def test_another_mirror_of_a_fenced_origin_takes_the_subjects_it_had(returned):
    """A second mirror of the fenced ORDERS (in a third cluster) failed over: it takes the
    subjects ORDERS had (recorded by the fence), not the fence's own subject, and no split
    brain is warned of (the fenced origin takes no writes)."""
    jl = returned
    ok(jl("cluster", "add", "central"))
    ok(jl("--cluster", "central", "stream", "add", "ORDERS_C", "--mirror", "ORDERS@west",
          "--defaults"))
    ok(jl("replicate"))
    ok(jl("dr", "fence", "--from", "west", "-f"))
    # ORDERS_EAST@east, promoted from ORDERS, is a primary still: a second would make two
    refused = jl("--cluster", "central", "stream", "failover", "ORDERS_C", "--dry-run")
    assert refused.exit_code == 1 and "ORDERS (cluster west) was failed over already to " \
        "ORDERS_EAST@east, a primary still: a second would make two primaries" in \
        refused.stderr, refused.stderr
    ok(east(jl, "stream", "rm", "ORDERS_EAST", "-f"))  # east given up: central takes over
    dry = ok(jl("--cluster", "central", "stream", "failover", "ORDERS_C", "--dry-run", "-j"))
    assert doc(dry)["subjects"] == ["orders.>"]
    assert dry.stderr == ""
    plan = ok(jl("--cluster", "central", "dr", "failover", "--from", "west", "--dry-run"))
    assert "subjects orders.> (from origin)" in plan.stdout
    assert "split brain" not in plan.stderr
    check = jl("dr", "check", "ORDERS_C", "-j")
    assert "$JETLINK.fenced" not in check.stdout


def test_failback_switch_gives_the_fenced_origin_its_subjects_back(returned):
    ok(returned("dr", "fence", "--from", "west", "-f"))
    ok(east(returned, "pub", "orders.new", "three"))
    ok(east(returned, "stream", "failback", "ORDERS_EAST", "--tail",
            f"parquet:{returned.tmp / 'tail'}", "-f"))
    ok(returned("replicate"))
    ok(east(returned, "stream", "failback", "ORDERS_EAST", "--switch", "-f"))
    info = doc(west(returned, "stream", "info", "ORDERS", "-j"))
    assert info["config"]["subjects"] == ["orders.>"]
    assert "jetlink.fenced_subjects" not in (info["config"].get("metadata") or {})
    assert info["state"]["last_seq"] == 3
    ok(west(returned, "pub", "orders.new", "four"))
    ok(returned("replicate"))
    assert doc(west(returned, "stream", "info", "ORDERS", "-j"))["state"]["messages"] == 4
    mirror = doc(east(returned, "stream", "info", "ORDERS_EAST", "-j"))
    assert mirror["config"]["mirror"]["name"] == "ORDERS" and \
        mirror["state"]["messages"] == 4
    ok(east(returned, "kv", "failback", "CONFIG", "--tail",
            f"parquet:{returned.tmp / 'kvtail'}", "-f"))
    ok(returned("replicate"))
    ok(east(returned, "kv", "failback", "CONFIG", "--switch", "-f"))
    kv = doc(west(returned, "stream", "info", "KV_CONFIG", "-j"))
    assert kv["config"]["subjects"] == ["$KV.CONFIG.>"]
    assert ok(west(returned, "kv", "get", "CONFIG", "a", "--raw")).stdout == "1"


def test_an_unreachable_origin_is_named_and_exits_1(returned):
    ok(returned("cluster", "down", "west"))
    r = returned("dr", "fence", "--from", "west", "-f")
    assert r.exit_code == 1
    hint = ("fenced when it answers (jetlink dr fence --from west, or dr watch "
            "--fence-on-return)")
    assert r.stdout == (
        f"kv CONFIG@west (failed over to CONFIG@east): unreachable (cluster west is down: "
        f"{hint})\n"
        f"stream ORDERS@west (failed over to ORDERS_EAST@east): unreachable (cluster west is "
        f"down: {hint})\n")
    assert r.stderr == (f"jetlink: error: not fenced: CONFIG@west (unreachable: cluster west "
                        f"is down: {hint}); ORDERS@west (unreachable: cluster west is down: "
                        f"{hint})\n")


@pytest.mark.parametrize(("args", "error"), [
    (("--from", "wets"), "--from wets: no cluster of the data directory is named wets; did "
     "you mean west?"),
    (("--from", ""), "--from: a region is a cluster (embedded engine) or a JetStream domain "
     "(live server), not an empty name"),
    # no cluster could be named so: the rule (not "no cluster is named a b")
    (("--from", "a b"), "--from: invalid cluster name 'a b': use 1 to 64 letters, digits, '_' "
     "or '-'"),
    (("--from", "east"), "--from east: nothing failed over from east on west (no stream, KV "
     "bucket or mirror topic there has its old origin in it): nothing to fence"),
    (("--cluster", "east", "--from", "east"), "--from east: that is the side addressed (the "
     "failed-over objects live there); name the region that failed, where the old origins "
     "are"),
])
def test_bad_regions_are_refused_and_change_nothing(returned, args, error):
    before = _tree(returned.data)
    glob, rest = (args[:2], args[2:]) if args[0] == "--cluster" else ((), args)
    r = returned(*glob, "dr", "fence", *rest, "-f")
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert r.stdout == "" and r.stderr == f"jetlink: error: {error}\n"
    assert _tree(returned.data) == before


def test_a_rerun_of_the_failover_does_not_warn_again(returned):
    r = ok(east(returned, "stream", "failover", "ORDERS_EAST", "-f"))
    assert r.stderr == ""


@pytest.mark.parametrize(("args", "status", "line"), [
    # (a check that could not run: UNKNOWN, never a CRITICAL that pages as an outage)
    (["dr", "check"], 3, "UNKNOWN dr could not list mirrors: cluster eats not found: did you "
                         "mean east?"),
    (["dr", "failover", "--from", "west", "--dry-run"], 1,
     "jetlink: error: cluster eats not found: did you mean east?"),
    (["dr", "fence", "--from", "west", "-f"], 1,
     "jetlink: error: cluster eats not found: did you mean east?"),
    (["dr", "failback", "--from", "west", "--dry-run"], 1,
     "jetlink: error: cluster eats not found: did you mean east?"),
])
def test_a_misspelt_side_is_named_not_silently_empty(returned, args, status, line):
    """--cluster names the side: one the data directory does not hold is an error naming it
    (with the closest), never a side with nothing on it (nothing changed)."""
    before = data_dir_bytes(returned.data)
    r = returned("--cluster", "eats", *args)
    assert r.exit_code == status
    assert line + "\n" in (r.stdout + r.stderr)
    assert data_dir_bytes(returned.data) == before


def test_apply_and_export_keep_the_fence(returned, tmp_path):
    """A topology file declaring the fenced origin as it was is no change: apply keeps the
    fence (and says so); a change to another field is made with the fence kept and the
    file's subjects recorded; export writes the stream as declared, not fenced."""
    ok(returned("dr", "fence", "--from", "west", "-f"))
    exported = ok(returned("export", "--cluster", "west")).stdout
    assert "$JETLINK" not in exported and "fenced" not in exported
    path = tmp_path / "west.toml"
    path.write_text(exported)
    plan = doc(returned("apply", str(path), "--dry-run", "-j"))["plan"]
    assert plan["changes"] == [] and plan["unchanged"] == 3
    assert sorted(w["description"] for w in plan["warnings"] if w["field"] == "subjects") == [
        "kv CONFIG in cluster west is fenced by jetlink dr fence (it failed over): apply "
        "keeps the fence, its subjects stay off until jetlink dr failback --switch gives "
        "them back",
        "stream ORDERS in cluster west is fenced by jetlink dr fence (it failed over): apply "
        "keeps the fence, its subjects stay off until jetlink dr failback --switch gives "
        "them back"]
    ok(returned("apply", str(path)))
    r = west(returned, "pub", "orders.new", "three")
    assert r.exit_code == 1 and "is fenced by jetlink dr fence" in r.stderr
    # another field changed: made, the fence kept
    assert '[streams.ORDERS]\ncluster = "west"\n' in exported
    path.write_text(exported.replace('[streams.ORDERS]\ncluster = "west"\n',
                                      '[streams.ORDERS]\ncluster = "west"\nmax_msgs = 1000\n'))
    ok(returned("apply", str(path)))
    cfg = doc(west(returned, "stream", "info", "ORDERS", "-j"))["config"]
    assert (cfg["subjects"], cfg["max_msgs"]) == (["$JETLINK.fenced.ORDERS"], 1000)
    assert json.loads(cfg["metadata"]["jetlink.fenced_subjects"]) == ["orders.>"]
    assert "Split brain" not in ok(east(returned, "dr", "check")).stdout
