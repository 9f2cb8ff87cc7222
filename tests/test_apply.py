"""`jetlink apply` / `jetlink export` (core/topology/plan.py, apply.py, embedded.py;
cli/apply.py): round trip, idempotence, dry run, a plan with every kind of change, editable
rules, a failure half-way, prune with and without -f."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from helpers import data_dir_bytes

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "topology.toml"


def doc(result):
    return json.loads(result.stdout)


def ok(result, code=0):
    assert result.exit_code == code, (result.stdout, result.stderr)
    return result


def write(tmp, text, name="t.toml"):
    path = tmp / name
    path.write_text(text)
    return str(path)


BASE = """
version = 1
[clusters.west]
kind = "nats"
[clusters.east]
kind = "nats"
[clusters.kwest]
kind = "kafka"
[clusters.keast]
kind = "kafka"

[streams.ORDERS]
cluster = "west"
subjects = ["orders.>"]
max_age = "30d"

[streams.BACKUP]
cluster = "east"
mirror = { name = "ORDERS", domain = "west" }

[kv.CONFIG]
cluster = "west"
history = 5

[kv_mirrors.CONFIG_EAST]
cluster = "east"
origin_bucket = "CONFIG"
domain = "west"

[kv_aggregates.SETTINGS]
cluster = "east"
origins = [{ bucket = "CONFIG", domain = "west", keys = ["features.>"] }]

[topics.orders]
cluster = "kwest"
partitions = 3
configs = { "retention.ms" = "604800000" }

[links.dr]
cluster = "keast"
source_cluster = "kwest"
configs = { "consumer.offset.sync.enable" = "true" }
consumer_group_filters = [{ name = "*", patternType = "LITERAL", filterType = "INCLUDE" }]

[mirror_topics.orders]
cluster = "keast"
link = "dr"
"""


def test_export_apply_export_round_trip(jl, tmp_path):
    ok(jl("apply", write(tmp_path, BASE), "-f"))
    first = ok(jl("export")).stdout
    other = tmp_path / "other"
    out = tmp_path / "exported.toml"
    out.write_text(first)
    ok(jl("--data-dir", str(other), "apply", str(out)))
    second = ok(jl("--data-dir", str(other), "export")).stdout
    assert first == second
    exported = tomllib.loads(first)
    assert exported["streams"]["BACKUP"]["mirror"] == {"name": "ORDERS", "domain": "west"}
    assert exported["kv"]["CONFIG"]["history"] == 5
    assert exported["kv_mirrors"]["CONFIG_EAST"] == {
        "cluster": "east", "origin_bucket": "CONFIG", "domain": "west"}
    assert exported["kv_aggregates"]["SETTINGS"]["origins"] == [
        {"bucket": "CONFIG", "domain": "west", "keys": ["features.>"]}]
    assert "max_consumers" not in exported["streams"]["ORDERS"]  # defaults left out
    assert exported["mirror_topics"]["orders"]["link"] == "dr"
    assert exported["topics"]["orders"]["partitions"] == 3


def test_export_shows_what_an_edit_cannot_turn_back(jl, tmp_path):
    """allow_msg_ttl, which subject_delete_marker_ttl implies, is written all the same: an
    edit can never turn it off, so a file that drops the marker TTL still shows it and
    applies (the marker TTL removed), instead of meeting the server's 10052 for a field it
    does not hold."""
    ok(jl("stream", "add", "T", "--subjects", "t.>", "--defaults",
          "--subject-del-markers-ttl", "1m"))
    exported = tomllib.loads(ok(jl("export")).stdout)["streams"]["T"]
    assert exported["allow_msg_ttl"] is True and exported["subject_delete_marker_ttl"] == "1m0s"
    assert "allow_rollup_hdrs" not in exported  # implied and editable: left out
    del exported["subject_delete_marker_ttl"]
    path = tmp_path / "t.toml"
    path.write_text('version = 1\n[streams.T]\nsubjects = ["t.>"]\n'
                    'allow_direct = true\nallow_msg_ttl = true\n')
    assert set(exported) == {"subjects", "allow_direct", "allow_msg_ttl"}, exported
    ok(jl("apply", str(path), "-f"))
    cfg = doc(jl("stream", "info", "T", "-j"))["config"]
    assert (cfg["allow_msg_ttl"], cfg.get("subject_delete_marker_ttl", 0)) == (True, 0)


def test_promoted_mirrors_export_as_what_they_became_and_apply_keeps_their_marks(
        jl, tmp_path):
    """After a failover the DR side's export is what rebuilds a region: a promoted stream or
    KV bucket is written as a stream / bucket of its own (no promotion record, no
    mirror_direct, which a create refuses without a mirror), so validate and apply of it
    pass anywhere; applied back to the same data directory it is unchanged, and an update
    keeps the record a failback reads."""
    for args in (["cluster", "add", "west"], ["cluster", "add", "east"],
                 ["--cluster", "west", "stream", "add", "ORDERS", "--subjects", "orders.>",
                  "--defaults"],
                 ["--cluster", "east", "stream", "add", "BACKUP", "--mirror", "ORDERS@west",
                  "--defaults"],
                 ["--cluster", "west", "kv", "add", "CONFIG", "--history", "5"],
                 ["--cluster", "east", "kv", "add", "CONFIG", "--mirror", "CONFIG@west"],
                 ["--cluster", "west", "pub", "orders.a", "x"],
                 ["--cluster", "east", "positions", "sync"], ["cluster", "down", "west"],
                 ["--cluster", "east", "dr", "failover", "--from", "west", "-f"]):
        ok(jl(*args))
    out = tmp_path / "east.toml"
    ok(jl("export", "-c", "east", "-o", str(out)))
    exported = tomllib.loads(out.read_text())
    assert exported["kv"] == {"CONFIG": {"cluster": "east"}}
    assert "KV_CONFIG" not in exported.get("streams", {})
    backup = exported["streams"]["BACKUP"]
    assert "mirror_direct" not in backup and "metadata" not in backup
    assert backup["subjects"] == ["orders.>"]
    ok(jl("validate", str(out)))
    assert ok(jl("apply", str(out), "--dry-run")).stdout.startswith("No changes")
    fresh = tmp_path / "fresh"
    ok(jl("--data-dir", str(fresh), "apply", str(out)))
    info = doc(ok(jl("--data-dir", str(fresh), "--cluster", "east", "stream", "info", "BACKUP",
                     "-j")))["config"]
    assert not info.get("mirror_direct") and "jetlink.promoted_mirror" not in info.get(
        "metadata", {})
    # an update applied to the promoted stream keeps its record and mirror_direct
    before = doc(ok(jl("--cluster", "east", "stream", "info", "BACKUP", "-j")))["config"]
    assert "jetlink.promoted_mirror" in before["metadata"]
    out.write_text(out.read_text().replace('[streams.BACKUP]\n', '[streams.BACKUP]\n'
                                           'max_age = "1h"\n', 1))
    ok(jl("apply", str(out)))
    cfg = doc(ok(jl("--cluster", "east", "stream", "info", "BACKUP", "-j")))["config"]
    assert cfg["max_age"] == 3600 * 10**9
    assert cfg.get("mirror_direct") == before.get("mirror_direct")
    assert cfg["metadata"]["jetlink.promoted_mirror"] == \
        before["metadata"]["jetlink.promoted_mirror"]
    kv = doc(ok(jl("--cluster", "east", "stream", "info", "KV_CONFIG", "-j")))["config"]
    assert kv["mirror_direct"] is True  # the server keeps it from the mirror it was


def test_a_failbacks_divergence_record_is_not_exported_and_apply_keeps_it():
    """jetlink.divergence (core/dr/fencing.py) is jetlink's mark, as the promotion record:
    export leaves it out, apply's update of the stream keeps it (dr check reads it)."""
    from jetlink.core.config.stream import StreamConfig
    from jetlink.core.dr.fencing import (
        DIVERGENCE_KEY,
        divergence,
        with_promotion,
        without_promotion,
    )

    mark = '{"after":10,"last":12,"at":"2026-11-29T00:00:00Z"}'
    for mirror in (None, {"name": "ORDERS_EAST"}):  # switched back, or still mirroring
        stored = StreamConfig.from_json({
            "name": "ORDERS", "subjects": [] if mirror else ["orders.>"],
            **({"mirror": mirror} if mirror else {}),
            "metadata": {DIVERGENCE_KEY: mark, "team": "a"}})
        assert divergence(stored) == (10, 12, "2026-11-29T00:00:00Z")
        exported = without_promotion(stored)
        assert exported.metadata == {"team": "a"}
        declared = exported.copy()
        declared.metadata = {"team": "b"}
        assert with_promotion(declared, stored).metadata == {"team": "b", DIVERGENCE_KEY: mark}


def test_example_needs_a_single_server_and_then_applies_twice_the_same(jl, tmp_path):
    refused = jl("apply", str(EXAMPLE), "-j")  # replicas = 3: a clustered server's file
    assert refused.exit_code == 3
    assert {p["err_code"] for p in doc(refused)["plan"]["problems"]} == {10074}
    assert not (jl.data / "west.db").exists()
    single = tmp_path / "single.toml"
    single.write_text(EXAMPLE.read_text().replace("replicas = 3", "replicas = 1"))
    first = doc(ok(jl("apply", str(single), "-j")))
    assert first["result"]["applied"] and not first["result"].get("failed")
    second = doc(ok(jl("apply", str(single), "-j")))
    assert second["plan"]["changes"] == [] and second["result"] is None
    assert ok(jl("apply", str(single))).stdout.startswith("No changes: ")


def test_dry_run_changes_nothing(jl, tmp_path):
    result = doc(ok(jl("apply", write(tmp_path, BASE), "--dry-run", "-j")))
    assert result["dry_run"] is True and result["result"] is None
    assert {(c["action"], c["kind"], c["name"]) for c in result["plan"]["changes"]} >= {
        ("create", "cluster", "west"), ("create", "stream", "ORDERS"),
        ("create", "mirror_topic", "orders")}
    assert not jl.data.exists() or not list(jl.data.iterdir())


def test_a_dry_run_on_a_data_directory_not_made_yet_shows_the_plan(jl, tmp_path):
    """A first `apply --dry-run` on a new machine: the plan against nothing, and nothing
    made (neither the directory nor the default cluster)."""
    fresh = tmp_path / "not-yet"
    path = tmp_path / "t.toml"
    path.write_text('[streams.ORDERS]\nsubjects = ["orders.>"]\n')
    res = ok(jl("--data-dir", str(fresh), "apply", str(path), "--dry-run"))
    assert res.stdout == ("Plan:\n  + create stream ORDERS in cluster local\n"
                          "1 to create, 0 to update, 0 to delete, 0 unchanged\n")
    assert not fresh.exists()


def test_plan_with_every_kind_of_change(jl, tmp_path):
    ok(jl("apply", write(tmp_path, BASE)))
    changed = (BASE.replace('max_age = "30d"', 'max_age = "60d"')
               .replace("history = 5", "history = 7")
               .replace('"retention.ms" = "604800000"', '"retention.ms" = "86400000"')
               .replace('{ "consumer.offset.sync.enable" = "true" }',
                        '{ "consumer.offset.sync.enable" = "true", '
                        '"consumer.offset.sync.ms" = "5000" }')
               .replace("[kv.CONFIG]", '[streams.EXTRA]\ncluster = "west"\n'
                        'subjects = ["extra.>"]\n\n[kv.CONFIG]')
               .replace('[streams.BACKUP]\ncluster = "east"\n'
                        'mirror = { name = "ORDERS", domain = "west" }\n', ""))
    plan = doc(ok(jl("apply", write(tmp_path, changed, "c.toml"), "--prune", "--dry-run",
                     "-j")))["plan"]
    got = [(c["action"], c["kind"], c["name"], [d["field"] for d in c.get("diff", [])])
           for c in plan["changes"]]
    assert ("create", "stream", "EXTRA", []) in got
    assert ("update", "stream", "ORDERS", ["max_age"]) in got
    assert ("update", "kv", "CONFIG", ["history"]) in got
    assert ("update", "topic", "orders", ["configs"]) in got
    assert ("update", "link", "dr", ["configs"]) in got
    assert ("delete", "stream", "BACKUP", []) in got
    kinds = [(c["action"], c["kind"]) for c in plan["changes"]]
    assert kinds[0] == ("update", "topic") and kinds[-2:] == [("update", "link"),
                                                               ("delete", "stream")]
    human = ok(jl("apply", write(tmp_path, changed, "c.toml"), "--prune", "--dry-run")).stdout
    assert ("  ~ update stream ORDERS in cluster west\n"
            "      max_age: 720h0m0s -> 1440h0m0s\n") in human
    assert "  - delete stream BACKUP in cluster east\n" in human
    done = doc(ok(jl("apply", str(tmp_path / "c.toml"), "--prune", "-f", "-j")))
    assert len(done["result"]["applied"]) == 6 and "failed" not in done["result"]
    link = doc(ok(jl("--cluster", "keast", "links", "describe", "dr", "-j")))
    assert {c["name"]: c["value"] for c in link["configs"]}["consumer.offset.sync.ms"] == "5000"
    again = doc(ok(jl("apply", str(tmp_path / "c.toml"), "--prune", "-j")))
    assert again["plan"]["changes"] == []


def test_a_non_editable_change_is_reported_not_forced(jl, tmp_path):
    ok(jl("apply", write(tmp_path, BASE)))
    bad = BASE.replace('subjects = ["orders.>"]\nmax_age = "30d"',
                       'subjects = ["orders.>"]\nmax_age = "30d"\nstorage = "memory"')
    result = jl("apply", write(tmp_path, bad, "b.toml"), "-j")
    assert result.exit_code == 3
    problems = doc(result)["plan"]["problems"]
    assert any("stream ORDERS in cluster west can not be updated" in p["description"]
               for p in problems)
    (orders,) = [c for c in doc(result)["plan"]["changes"] if c["name"] == "ORDERS"]
    # the stored stream's storage is file, its default the table leaves out: not null
    assert orders["diff"] == [{"field": "storage", "from": "file", "to": "memory"}]
    assert doc(ok(jl("--cluster", "west", "stream", "info", "ORDERS", "-j")))["config"][
        "storage"] == "file"


KAFKA_REFUSED = [
    ("fewer partitions", ('partitions = 3\nconfigs = { "retention.ms"',
                          'partitions = 2\nconfigs = { "retention.ms"'),
     "topic orders in cluster kwest: the partition count can only grow (3 -> 2): The topic "
     "orders currently has 3 partition(s); 2 would not be an increase. (INVALID_PARTITIONS "
     "37)"),
    ("a link's source", ('cluster = "keast"\nsource_cluster = "kwest"',
                         'cluster = "keast"\nsource_cluster = "kwest2"'),
     "link dr in cluster keast: a link's source cluster can not change (delete and re-create "
     "the link)"),
    ("a mirror topic's link", ('[mirror_topics.orders]\ncluster = "keast"\nlink = "dr"',
                               '[mirror_topics.orders]\ncluster = "keast"\nlink = "dr2"'),
     "mirror_topic orders in cluster keast: a mirror topic's link, source topic and configs "
     "can not change (delete and re-create it, or promote it)"),
]


@pytest.mark.parametrize(("what", "edit", "said"), KAFKA_REFUSED,
                         ids=[w for w, _e, _s in KAFKA_REFUSED])
def test_a_kafka_change_the_engine_refuses_refuses_the_plan_before_anything(
        jl, tmp_path, what, edit, said):
    """Fewer partitions, a link's source, a mirror topic's link: refused while planning
    (exit status 3), the dry run too, and nothing changed: never a mirror topic deleted with
    its records, a link left as it was under "Applied", an apply stopped half-way."""
    more = ('\n[clusters.kwest2]\nkind = "kafka"\n[topics.orders2]\ncluster = "kwest2"\n'
            'name = "orders"\npartitions = 3\n[links.dr2]\ncluster = "keast"\n'
            'source_cluster = "kwest2"\n')
    ok(jl("apply", write(tmp_path, BASE + more)))
    ok(jl("--cluster", "kwest", "topic", "produce", "orders", input="a\nb\nc\n"))
    ok(jl("replicate"))
    before = data_dir_bytes(jl.data)
    old, new = edit
    assert old in BASE
    changed = write(tmp_path, BASE.replace(old, new) + more, "changed.toml")
    for extra in (["--dry-run"], []):
        r = jl("apply", changed, *extra, "-j")
        assert r.exit_code == 3, (what, extra, r.output)
        problems = [p["description"] for p in doc(r)["plan"]["problems"]]
        assert problems == [said], problems
    assert data_dir_bytes(jl.data) == before


@pytest.mark.parametrize(("change", "field"), [
    ('keys = ["b.>"]', "keys"), ('origin_bucket = "CFG2"', "origin_bucket")])
def test_a_kv_mirrors_refused_update_names_its_own_field(jl, tmp_path, change, field):
    """The stream's "mirror" is the KV mirror's keys or origin_bucket: the one changed."""
    text = ('version = 1\n[kv.CFG]\n[kv.CFG2]\n[kv_mirrors.M1]\norigin_bucket = "CFG"\n'
            'keys = ["a.>"]\n')
    ok(jl("apply", write(tmp_path, text)))
    changed = text.replace('keys = ["a.>"]' if field == "keys" else 'origin_bucket = "CFG"',
                           change)
    result = jl("apply", write(tmp_path, changed, "b.toml"), "--dry-run", "-j")
    assert result.exit_code == 3
    (problem,) = doc(result)["plan"]["problems"]
    assert (problem["object"], problem["field"], problem["err_code"]) == (
        "kv_mirror M1", field, 10055)


def test_a_kv_mirror_whose_origin_is_not_there_refuses_the_plan_before_anything(jl,
                                                                               tmp_path):
    """A KV mirror is made from its origin bucket's settings (the engine refuses one whose
    origin is not there): apply refuses the plan (exit 3) and creates nothing, never stops
    half-way; validate of the files alone warns (the target may hold the origin)."""
    text = ('version = 1\n[streams.FIRST]\nsubjects = ["first.>"]\n[kv_mirrors.M]\n'
            'origin_bucket = "NOPE"\n[streams.LAST]\nsubjects = ["last.>"]\n')
    path = write(tmp_path, text)
    before = data_dir_bytes(jl.data)
    result = jl("apply", path, "-j")
    assert result.exit_code == 3
    (problem,) = doc(result)["plan"]["problems"]
    assert (problem["object"], problem["field"], problem["err_code"]) == (
        "kv_mirror M", "origin_bucket", 10059)
    assert problem["description"] == (
        'stream not found: origin bucket "NOPE" (stream KV_NOPE) does not exist in cluster '
        '"local": a KV mirror is made from its origin bucket\'s settings, which must exist '
        "first (kv add --mirror refuses it too)")
    assert data_dir_bytes(jl.data) == before
    checked = jl("validate", path)
    assert checked.exit_code == 0 and "1 warning" in checked.stderr
    ok(jl("kv", "add", "NOPE"))
    ok(jl("apply", path))
    assert doc(jl("kv", "info", "M", "-j"))["kind"] == "mirror"


def test_implicit_clusters_the_target_lacks_refuse_the_plan_before_anything(jl, tmp_path):
    """A file without [clusters] names its clusters implicitly; apply creates only declared
    clusters, so an object in one the data directory lacks refuses the whole plan up front
    (it used to create the rest and fail half-way)."""
    fresh = tmp_path / "fresh"
    path = write(tmp_path, 'version = 1\n[streams.ORDERS]\nsubjects = ["orders.>"]\n'
                           '[streams.BACKUP]\ncluster = "west"\n'
                           'mirror = { name = "ORDERS", domain = "local" }\n')
    res = jl("--data-dir", str(fresh), "apply", path, "-f")
    assert res.exit_code == 3
    assert res.stdout == (
        f'{path}: stream BACKUP: cluster: cluster "west" does not exist in the data '
        "directory: declare it under [clusters] (apply creates it) or create it first "
        "(jetlink cluster add west)\n")
    assert not fresh.exists()
    ok(jl("--data-dir", str(fresh), "cluster", "add", "west"))
    res = ok(jl("--data-dir", str(fresh), "apply", path, "-f"))
    assert "Applied: create stream BACKUP in cluster west" in res.stdout


def test_an_invalid_file_changes_nothing(jl, tmp_path):
    bad = BASE.replace('mirror = { name = "ORDERS", domain = "west" }',
                       'mirror = { name = "ORDERS", domain = "west", filter_subject = "a..b" }')
    result = jl("apply", write(tmp_path, bad), "-j")
    assert result.exit_code == 3
    assert [(p["object"], p["field"], p["err_code"]) for p in doc(result)["plan"]["problems"]] \
        == [("stream BACKUP", "mirror.filter_subject", 10049)]
    assert not (jl.data / "west.db").exists()


def test_an_unreadable_file_is_a_file_problem_for_apply_as_for_validate(jl, tmp_path,
                                                                         monkeypatch):
    """A topology file that can not be read is the file's problem (exit 3) for apply as for
    validate, said by the loader, never the argument parser's usage error (exit 2)."""
    import builtins
    import os

    from jetlink.core.topology import load

    path = write(tmp_path, BASE)
    real_open, real_access = builtins.open, os.access

    def denied_open(name, *args, **kwargs):
        if str(name) == path:
            raise PermissionError(13, "Permission denied", path)
        return real_open(name, *args, **kwargs)

    monkeypatch.setattr(load, "open", denied_open, raising=False)
    monkeypatch.setattr(os, "access", lambda p, mode, *a, **k: False if str(p) == path
                        else real_access(p, mode, *a, **k))
    for verb in ("validate", "apply"):
        result = jl(verb, path)
        assert result.exit_code == 3, result.output
        assert f"{path}: can not read file: Permission denied" in result.output
    assert not (jl.data / "west.db").exists()


def test_a_missing_origin_is_a_warning_as_in_stream_add(jl, tmp_path):
    """One rule: the server accepts a mirror whose origin is not there; apply, validate and
    stream add all say so in the same words, and none of them fails on it."""
    bad = BASE.replace('mirror = { name = "ORDERS", domain = "west" }',
                       'mirror = { name = "NOPE", domain = "west" }')
    path = write(tmp_path, bad)
    text = ('stream not found: mirror origin "NOPE" does not exist in cluster "west": the server '
            "accepts this, the stream waits for its origin")
    checked = jl("validate", path)
    assert checked.exit_code == 0
    # validate says where it looked: the files only
    looked = text.replace('"west": the', '"west" in the files given (validate reads no data '
                          "directory or server; --live reads the servers they are bound to): "
                          "the")
    assert f"stream BACKUP: mirror.name: warning: {looked} (10059)" in checked.stderr
    assert checked.stdout == f"{path}: OK\n"
    strict = jl("validate", path, "--strict")
    assert strict.exit_code == 3  # the file is not called OK when its warnings fail it
    assert strict.stdout == "1 file not valid: 1 warning, problems under --strict\n"
    # beside a file with a problem: under --strict the warning's file is not OK either
    broken = write(tmp_path, '[streams.X]\nsubjects = ["a..b"]\n', "broken.toml")
    both = jl("validate", path, broken, "--strict")
    assert both.exit_code == 3 and f"{path}: OK" not in both.stdout, both.stdout
    assert f"{broken}: stream X: subjects" in both.stdout
    assert both.stderr.endswith("1 problem in 2 files, 1 warning\n"), both.stderr  # (both)
    assert jl("validate", path, broken).stdout.startswith(f"{path}: OK\n")
    applied = jl("apply", path, "-j")
    assert applied.exit_code == 0, applied.output
    assert [w["description"] for w in doc(applied)["plan"]["warnings"]] == [text]
    added = jl("--cluster", "east", "stream", "add", "M2", "--mirror", "NOPE@west", "--defaults")
    assert added.exit_code == 0
    assert added.stderr == f"jetlink: warning: {text}\n"


def test_a_data_directory_stream_never_fails_an_unrelated_file(jl, tmp_path):
    ok(jl("stream", "add", "M", "--mirror", "O@NOWHERE", "--defaults"))
    ok(jl("stream", "add", "S", "--subjects", "s", "--source", "GONE", "--defaults"))
    path = write(tmp_path, '[streams.X]\nsubjects = ["x.>"]\n', "unrelated.toml")
    result = jl("apply", path, "-j")
    assert result.exit_code == 0, result.output
    plan = doc(result)["plan"]
    assert plan["problems"] == [] and plan["warnings"] == []
    # exported and validated as a file of its own: warnings, not problems
    ok(jl("export", "-o", str(tmp_path / "all.toml")))
    assert jl("validate", str(tmp_path / "all.toml")).exit_code == 0


def test_failure_half_way_reports_and_stops(jl, tmp_path):
    ok(jl("apply", write(tmp_path, BASE.split("[links.dr]")[0])))
    ok(jl("cluster", "down", "kwest"))  # the engine refuses a link to an unreachable source
    result = jl("apply", write(tmp_path, BASE + """
[streams.LATE]
cluster = "east"
subjects = ["late.>"]
""", "more.toml"), "-j")
    assert result.exit_code == 1
    out = doc(result)["result"]
    assert [(c["kind"], c["name"]) for c in out["applied"]] == [("stream", "LATE")]
    assert (out["failed"]["kind"], out["failed"]["name"]) == ("link", "dr")
    assert out["failed"]["error"] == {"error": {
        "error_code": 40, "error_name": "INVALID_CONFIG",
        "message": "Unable to validate cluster link: source cluster 'kwest' is unreachable "
                   "(jetlink cluster up kwest first)"}}
    assert [(c["kind"], c["name"]) for c in out["not_applied"]] == [("mirror_topic", "orders")]
    assert doc(ok(jl("--cluster", "keast", "links", "ls", "-j"))) == []  # untouched
    human = jl("apply", str(tmp_path / "more.toml"))
    assert human.exit_code == 1
    assert human.stdout.endswith(
        "Failed: create link dr in cluster keast: Unable to validate cluster link: source "
        "cluster 'kwest' is unreachable (jetlink cluster up kwest first) (INVALID_CONFIG 40)\n"
        "Not applied: create mirror_topic orders in cluster keast\n")


def test_prune_asks_and_needs_force_without_a_terminal(jl, tmp_path):
    ok(jl("apply", write(tmp_path, BASE)))
    smaller = BASE.replace('[streams.BACKUP]\ncluster = "east"\n'
                           'mirror = { name = "ORDERS", domain = "west" }\n', "")
    path = write(tmp_path, smaller, "s.toml")
    refused = jl("apply", path, "--prune")
    assert refused.exit_code == 2 and "pass -f/--force to prune" in refused.stderr
    assert "BACKUP" in doc(ok(jl("--cluster", "east", "stream", "ls", "-j")))
    # with --json: the refusal, and the plan a run on a terminal would have shown first
    before = data_dir_bytes(jl.data)
    refused = jl("apply", path, "--prune", "-j")
    got = json.loads(refused.stdout)
    assert refused.exit_code == 2 and got["error"] == {
        "description": "no terminal to confirm on: pass -f/--force to prune"}
    assert [(c["action"], c["name"]) for c in got["plan"]["changes"]] == [
        ("delete", "BACKUP")]
    assert (got["result"], got["dry_run"]) == (None, False)
    assert data_dir_bytes(jl.data) == before
    ok(jl("apply", path))  # without --prune: BACKUP stays
    assert "BACKUP" in doc(ok(jl("--cluster", "east", "stream", "ls", "-j")))
    done = doc(ok(jl("apply", path, "--prune", "-f", "-j")))
    assert [(c["action"], c["name"]) for c in done["result"]["applied"]] == [
        ("delete", "BACKUP")]
    assert "BACKUP" not in doc(ok(jl("--cluster", "east", "stream", "ls", "-j")))


AGGREGATE = """
[clusters.west]
[clusters.east]
[kv.B]
cluster = "west"
[kv_aggregates.G]
cluster = "east"
origins = [{bucket = "B", domain = "west"}]
"""
ONLY_WEST = """
[clusters.west]
[streams.OTHER]
cluster = "west"
subjects = ["o.>"]
"""
GONE = ('<data directory>: kv_aggregate G: origins[0].bucket: warning: stream not found: '
        'aggregate origin bucket "B" (stream KV_B) does not exist in cluster "west": the '
        'server accepts this, the stream waits for its origin (10059)\n')


def test_a_prune_that_deletes_an_origin_still_sourced_warns(jl, tmp_path):
    """A warning the plan makes on an object the data directory holds (an aggregate whose
    origin --prune deletes) is shown, in the dry run and the apply; one it had before the
    file is not."""
    ok(jl("apply", write(tmp_path, AGGREGATE, "a.toml")))
    path = write(tmp_path, ONLY_WEST, "w.toml")
    dry = ok(jl("apply", path, "--prune", "--dry-run"))
    assert dry.stderr == GONE
    plan = doc(ok(jl("apply", path, "--prune", "--dry-run", "-j")))["plan"]
    assert [(w["object"], w["field"]) for w in plan["warnings"]] == [
        ("kv_aggregate G", "origins[0].bucket")]
    assert ok(jl("apply", path, "--prune", "-f")).stderr == GONE
    # done: the warning is the data directory's own now, not this file's doing
    assert ok(jl("apply", path, "--prune", "--dry-run")).stderr == ""


def test_a_plan_with_problems_in_the_data_directory_calls_no_file_ok(jl, tmp_path):
    """--prune deleting the origin of a KV mirror the data directory keeps: the problem is
    the data directory's object, the plan the file's: no "FILE: OK" line before it."""
    ok(jl("apply", write(tmp_path, AGGREGATE + """
[kv_mirrors.M]
cluster = "east"
origin_bucket = "B"
domain = "west"
""", "a.toml")))
    before = data_dir_bytes(jl.data)
    refused = jl("apply", write(tmp_path, ONLY_WEST, "w.toml"), "--prune", "-f")
    assert refused.exit_code == 3, refused.output
    assert refused.stdout == (
        '<data directory>: kv_mirror M: origin_bucket: stream not found: origin bucket "B" '
        '(stream KV_B) does not exist in cluster "west": a KV mirror is made from its '
        "origin bucket's settings, which must exist first (kv add --mirror refuses it too) "
        "(10059)\n")
    assert refused.stderr == GONE + "1 problem in the data directory, 1 warning\n"
    assert data_dir_bytes(jl.data) == before


def test_export_to_dash_is_stdout_and_the_global_cluster_is_said_unused(jl, tmp_path,
                                                                         monkeypatch):
    """export -o - writes to stdout (no file named -); the global --cluster before apply or
    export, which they do not take, is said on stderr, not silently dropped."""
    monkeypatch.chdir(tmp_path)
    ok(jl("apply", write(tmp_path, BASE)))
    r = ok(jl("export", "-o", "-"))
    assert r.stdout == ok(jl("export")).stdout and not (tmp_path / "-").exists()
    r = ok(jl("--cluster", "east", "export", "-c", "west"))
    assert r.stderr == ("jetlink: notice: --cluster east before the command is not used by "
                        "export: export --cluster NAME (after the command) selects the "
                        "clusters written\n")
    r = ok(jl("--cluster", "east", "apply", write(tmp_path, BASE)))
    assert r.stderr == ("jetlink: notice: --cluster east before the command is not used by "
                        "apply: each object of the file names its cluster (cluster = NAME; "
                        "without one: local)\n")


@pytest.mark.parametrize("kind", ["a file", "a symbolic link to nothing"])
def test_a_data_directory_that_can_not_be_made_refuses_the_plan_dry_run_too(jl, tmp_path,
                                                                            kind):
    """A --data-dir that is a file, or a symbolic link to nothing: the dry run says so as
    the run does (exit status 3, one problem), never a clean plan a run then fails on."""
    where = tmp_path / "dd"
    if kind == "a file":
        where.write_text("hi")
        said = f"data directory {where} is not a directory (a file of that name is there)"
    else:
        where.symlink_to(tmp_path / "nowhere" / "x")
        said = (f"data directory {where} is a symbolic link to {tmp_path / 'nowhere' / 'x'}, "
                "which does not exist")
    path = write(tmp_path, '[clusters.west]\n[streams.S]\ncluster = "west"\n')
    for extra in (["--dry-run"], []):
        r = jl("--data-dir", str(where), "apply", path, *extra, "-j")
        assert r.exit_code == 3, r.output
        [problem] = doc(r)["plan"]["problems"]
        assert problem["description"].startswith(said), problem
    assert not (tmp_path / "nowhere").exists()


def test_a_cluster_kind_change_is_the_one_problem_said(jl, tmp_path):
    """A file giving a nats cluster holding streams and a bucket the kind kafka: refused
    with the cause alone (its kind can not change), not after lines calling what it holds
    misplaced in a kafka cluster."""
    ok(jl("cluster", "add", "west"))
    ok(jl("--cluster", "west", "stream", "add", "S", "--subjects", "s", "--defaults"))
    ok(jl("--cluster", "west", "kv", "add", "B"))
    r = jl("apply", write(tmp_path, '[clusters.west]\nkind = "kafka"\n'), "-j")
    assert r.exit_code == 3
    assert [p["description"] for p in doc(r)["plan"]["problems"]] == [
        "cluster west exists with kind nats: a cluster's kind can not change"]


def test_export_of_some_clusters_to_a_file(jl, tmp_path):
    ok(jl("apply", write(tmp_path, BASE)))
    out = tmp_path / "west.json"
    assert doc(ok(jl("export", "--cluster", "west", "-o", str(out), "-j"))) == {
        "output": str(out), "format": "json", "clusters": 1}
    exported = json.loads(out.read_text())
    assert list(exported["clusters"]) == ["west"]
    assert set(exported["streams"]) == {"ORDERS"}
    missing = jl("export", "--cluster", "nope")
    assert missing.exit_code == 1 and "cluster nope not found" in missing.stderr
    close = jl("export", "--cluster", "wset")  # the closest cluster, as every verb names it
    assert close.stderr == "jetlink: error: cluster wset not found: did you mean west?\n"
    bad = jl("export", "--cluster", "a b")  # no cluster can have that name: a usage error
    assert (bad.exit_code, bad.stderr) == (2, "jetlink: error: invalid cluster name 'a b': use "
                                              "1 to 64 letters, digits, '_' or '-'\n")


PREFIXED_LINK = """
[links.west]
cluster = "keast"
source_cluster = "kwest"
configs = { "cluster.link.prefix" = "west." }
"""

MIRROR_ONLY = """
[clusters.keast]
kind = "kafka"

[mirror_topics."west.orders"]
cluster = "keast"
link = "west"
"""


def test_a_mirror_topic_finds_its_link_in_the_data_directory(jl, tmp_path):
    """A file declaring only a mirror topic: its source topic comes from the prefix of a link
    that only the data directory holds, when it is created and when it is compared."""
    ok(jl("apply", write(tmp_path, BASE + PREFIXED_LINK)))
    created = doc(ok(jl("apply", write(tmp_path, MIRROR_ONLY, "mirror.toml"), "-j")))
    assert [(c["action"], c["kind"], c["name"]) for c in created["plan"]["changes"]] == [
        ("create", "mirror_topic", "west.orders")]
    mirror = doc(ok(jl("--cluster", "keast", "mirrors", "describe", "west.orders", "-j")))
    assert mirror[0]["source_topic_name"] == "orders"
    again = doc(ok(jl("apply", write(tmp_path, MIRROR_ONLY, "mirror.toml"), "-j")))
    assert again["plan"]["changes"] == [] and again["plan"]["problems"] == []


def test_an_update_to_replicas_3_is_one_problem(jl, tmp_path):
    ok(jl("apply", write(tmp_path, BASE)))
    result = jl("apply", write(tmp_path, BASE.replace(
        'max_age = "30d"', 'max_age = "30d"\nnum_replicas = 3'), "r3.toml"), "-j")
    assert result.exit_code == 3
    problems = doc(result)["plan"]["problems"]
    assert [(p["object"], p["field"], p["err_code"]) for p in problems] == [
        ("stream ORDERS", "num_replicas", 10074)]


# -- files binding clusters to live servers (no server needed: refused before connecting) ---


def test_a_file_binding_some_clusters_lists_the_unbound_ones(jl, tmp_path):
    text = """
[clusters.west]
server = "nats://127.0.0.1:1"
[clusters.east]
[streams.S]
cluster = "east"
subjects = ["s.>"]
"""
    for args in (["apply", write(tmp_path, text), "-j"],
                 ["validate", write(tmp_path, text), "--live", "-j"]):
        result = jl(*args)
        assert result.exit_code == 3, result.stdout
        body = doc(result)
        problems = body["plan"]["problems"] if "plan" in body else body["problems"]
        assert [(p["object"], p["field"]) for p in problems] == [("cluster east", "server")]
    assert not jl.data.exists() or not list(jl.data.iterdir())  # the data directory untouched


def test_export_from_a_file_needs_bound_clusters(jl, tmp_path):
    plain = jl("export", "--from", write(tmp_path, "[clusters.west]\n"))
    assert plain.exit_code == 2 and "binds no cluster to a server" in plain.stderr
    broken = jl("export", "--from", write(tmp_path, '[clusters.west]\nserver = "http://x"\n',
                                          "b.toml"))
    # the file's problems as validate shows them, with its exit status (3)
    assert (broken.exit_code, broken.stdout, broken.stderr) == (3, (
        f"{tmp_path / 'b.toml'}: cluster west: server: invalid server URL "
        "'http://x' ([clusters.west] server): the scheme must be nats://, tls://, ws:// or "
        "wss://\n"), "1 problem in 1 file\n")
    unreadable = jl("export", "--from", write(tmp_path, "streams = [\n", "u.toml"), "-j")
    assert unreadable.exit_code == 3
    assert doc(unreadable) == {
        "files": [str(tmp_path / "u.toml")], "warnings": [], "valid": False,
        "problems": [{"file": str(tmp_path / "u.toml"), "object": None, "field": None,
                      "err_code": 0,
                      "description": "invalid TOML: Invalid value (at end of document)"}]}
    # nothing written: not --output's file, nor the data directory
    out = tmp_path / "out.toml"
    assert jl("export", "--from", str(tmp_path / "u.toml"), "-o", str(out)).exit_code == 3
    assert not out.exists()
    assert not jl.data.exists() or not list(jl.data.iterdir())


def test_validate_live_needs_something_bound(jl, tmp_path):
    result = jl("validate", write(tmp_path, BASE), "--live")
    assert result.exit_code == 2
    assert "--live needs a file whose clusters are bound to servers" in result.stderr
    # a file that does not read is its problem (exit 3), as validate without --live says
    bad = write(tmp_path, '[clusters.local]\nserver = "nats://127.0.0.1:1"\n[streams.A]\n'
                'subjects = ["a.>"\n', "bad.toml")
    for path, said in ((bad, "invalid TOML: Unclosed array (at end of document)"),
                       (str(tmp_path / "nope.toml"), "file not found")):
        result = jl("validate", path, "--live")
        assert (result.exit_code, result.stdout) == (3, f"{path}: {said}\n"), result.output


def test_a_file_without_clusters_applies_to_a_fresh_data_directory(jl, tmp_path):
    path = write(tmp_path, 'version = 1\n[streams.A]\nsubjects = ["a.>"]\n')
    assert not (jl.data / "local.db").exists()
    assert doc(jl("apply", str(path), "--dry-run", "-j"))["plan"]["changes"] == [
        {"action": "create", "kind": "stream", "cluster": "local", "name": "A"}]
    assert not (jl.data / "local.db").exists()  # a dry run makes nothing, not even local
    result = ok(jl("apply", str(path), "-f"))
    assert "Applied: create stream A in cluster local" in result.stdout
    assert doc(jl("stream", "info", "A", "-j"))["config"]["subjects"] == ["a.>"]
    assert "No changes" in ok(jl("apply", str(path), "-f")).stdout


def test_the_positions_bucket_is_never_exported_planned_or_pruned(jl, tmp_path):
    """JETLINK_POSITIONS is jetlink's own record of what a failover needs, not the user's."""
    path = write(tmp_path, BASE)
    ok(jl("apply", path))
    ok(jl("--cluster", "east", "positions", "sync"))
    assert "KV_JETLINK_POSITIONS" in doc(ok(jl("--cluster", "east", "stream", "ls", "-a",
                                               "-j")))
    exported = doc(ok(jl("export", "--cluster", "east", "-j")))
    assert "JETLINK_POSITIONS" not in json.dumps(exported)
    plan = doc(ok(jl("apply", path, "--prune", "--dry-run", "-j")))
    assert "JETLINK_POSITIONS" not in json.dumps(plan)
    ok(jl("apply", path, "--prune", "-f"))
    assert "KV_JETLINK_POSITIONS" in doc(ok(jl("--cluster", "east", "stream", "ls", "-a",
                                               "-j")))


JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="dr" '
        'password="s3cret";')


def test_a_links_secret_is_never_exported_nor_shown_and_a_file_without_it_keeps_it(jl, tmp_path):
    """A link's sensitive configs (sasl.jaas.config, passwords) are not exported (a warning
    per config on stderr); a plan keeps one the file leaves out (no difference, not deleted
    by an update) and shows a changed one as [hidden, changed], never its value."""
    from jetlink.core.clock import SystemClock
    from jetlink.core.kafka.links import Links
    from jetlink.core.store import DataDir

    def stored():
        dd = DataDir(jl.data)
        try:
            return Links.open(dd, dd.open("keast"), SystemClock()).get("dr").config.to_json()
        finally:
            dd.close()

    ok(jl("cluster", "add", "kwest", "--kind", "kafka"))
    ok(jl("cluster", "add", "keast", "--kind", "kafka"))
    ok(jl("--cluster", "keast", "links", "create", "dr", "--source-cluster", "kwest",
          "--config", f"sasl.jaas.config={JAAS}"))
    r = ok(jl("export", "--cluster", "keast"))
    assert "s3cret" not in r.stdout and "sasl.jaas.config" not in r.stdout
    assert r.stderr == (
        "jetlink: warning: link dr (cluster keast): sasl.jaas.config is sensitive and not "
        "exported; add it to the link's configs in the file before applying it elsewhere (a "
        "plan keeps the one a link has when the file leaves it out)\n")
    exported = write(tmp_path, r.stdout, "exported.toml")
    assert ok(jl("apply", exported, "-f")).stdout.startswith("No changes")
    tuned = write(tmp_path, r.stdout.replace('source_cluster = "kwest"',
                                             'source_cluster = "kwest"\n'
                                             'configs = {"acl.sync.ms" = "6000"}'), "tuned.toml")
    r = ok(jl("apply", tuned, "-f"))
    assert "s3cret" not in r.stdout + r.stderr
    assert stored()["sasl.jaas.config"] == JAAS and stored()["acl.sync.ms"] == "6000"
    other = JAAS.replace("s3cret", "n3w")
    secret = write(tmp_path, Path(tuned).read_text().replace(
        '"6000"}', f'"6000", "sasl.jaas.config" = {json.dumps(other)}}}'), "secret.toml")
    before = data_dir_bytes(jl.data)
    plan = doc(jl("apply", secret, "--dry-run", "-j"))["plan"]
    assert data_dir_bytes(jl.data) == before  # (the dry run changed no byte)
    change, = [c for c in plan["changes"] if c["action"] == "update"]
    assert change["diff"] == [{"field": "configs",
                               "from": {"acl.sync.ms": "6000", "sasl.jaas.config": "[hidden]"},
                               "to": {"acl.sync.ms": "6000",
                                      "sasl.jaas.config": "[hidden, changed]"}}]
    r = ok(jl("apply", secret, "-f"))
    assert "n3w" not in r.stdout + r.stderr and "s3cret" not in r.stdout + r.stderr
    assert stored()["sasl.jaas.config"] == other


def test_an_invalid_field_of_an_existing_stream_is_one_problem(jl, tmp_path):
    """An update the file's own check refuses (max_age negative) is listed once, as validate
    lists it: not again as "can not be updated" by the plan."""
    ok(jl("apply", write(tmp_path, BASE)))
    bad = write(tmp_path, BASE.replace('max_age = "30d"', 'max_age = "-5s"'), "bad.toml")
    checked = jl("validate", bad, "-j")
    applied = jl("apply", bad, "-j")
    assert (checked.exit_code, applied.exit_code) == (3, 3)
    want = [(p["object"], p["field"], p["err_code"])
            for p in json.loads(checked.stdout)["problems"]]
    got = [(p["object"], p["field"], p["err_code"])
           for p in json.loads(applied.stdout)["plan"]["problems"]]
    assert got == want == [("stream ORDERS", "max_age", 10052)]


def test_a_refused_update_shows_only_what_the_file_changes(jl, tmp_path):
    """The plan of a declaration its own checks refuse (max_age negative) shows the fields
    the file sets, not the ones it leaves to their defaults as going to null."""
    ok(jl("apply", write(tmp_path, BASE)))
    bad = write(tmp_path, BASE.replace('max_age = "30d"', 'max_age = "-5s"'), "bad.toml")
    plan = json.loads(jl("apply", bad, "-j").stdout)["plan"]
    (orders,) = [c for c in plan["changes"] if c["name"] == "ORDERS"]
    assert [d["field"] for d in orders["diff"]] == ["max_age"]


def test_a_kv_mirror_is_updated_as_a_bucket_is(jl, tmp_path):
    """A KV mirror MIR is the stream KV_MIR: its update is checked against that stream
    (it was looked up as MIR: a KeyError traceback)."""
    text = ('[kv.CFG]\nhistory = 2\n[kv_mirrors.MIR]\norigin_bucket = "CFG"\n'
            "history = 2\n")
    ok(jl("apply", write(tmp_path, text)))
    changed = write(tmp_path, text.replace("history = 2", "history = 3"), "b.toml")
    plan = doc(ok(jl("apply", changed, "--dry-run", "-j")))["plan"]
    assert [(c["kind"], c["name"], c["diff"]) for c in plan["changes"]] == [
        ("kv", "CFG", [{"field": "history", "from": 2, "to": 3}]),
        ("kv_mirror", "MIR", [{"field": "history", "from": 2, "to": 3}])]
    ok(jl("apply", changed))
    assert doc(ok(jl("kv", "info", "MIR", "-j")))["history"] == 3


def test_same_named_streams_of_two_clusters_apply_again_and_round_trip(jl, tmp_path):
    """Two clusters holding a stream ORD, declared under other keys with name = "ORD": a
    second apply changes nothing (the data directory read them as ORD@west, ORD@east with
    their name lost: overlaps refused), and the export names them, so it re-creates them
    elsewhere."""
    text = ('[clusters.west]\n[clusters.east]\n[streams.W]\ncluster = "west"\nname = "ORD"\n'
            'subjects = ["ord.>"]\n[streams.ORD]\ncluster = "east"\nsubjects = ["ord.>"]\n')
    path = write(tmp_path, text)
    ok(jl("apply", path))
    before = data_dir_bytes(jl.data)
    assert ok(jl("apply", path)).stdout.startswith("No changes")
    assert data_dir_bytes(jl.data) == before
    exported = ok(jl("export")).stdout
    assert tomllib.loads(exported)["streams"]["ORD@west"]["name"] == "ORD"
    other = tmp_path / "other"
    again = write(tmp_path, exported, "exp.toml")
    ok(jl("--data-dir", str(other), "apply", again))
    for cluster in ("west", "east"):
        assert doc(ok(jl("--data-dir", str(other), "--cluster", cluster, "stream", "ls",
                         "-j"))) == ["ORD"]


def test_a_pruned_stream_whose_subjects_a_new_one_takes_goes_first(jl, tmp_path):
    """Renaming a stream with --prune: the old one (its subjects the new one's) is deleted
    before the new one is created, which would overlap it (validation judged the state
    after pruning; the run created first and failed half way)."""
    ok(jl("apply", write(tmp_path, '[clusters.west]\n[streams.OLD]\ncluster = "west"\n'
                                   'subjects = ["a.>"]\n')))
    renamed = write(tmp_path, '[clusters.west]\n[streams.NEW]\ncluster = "west"\n'
                              'subjects = ["a.b"]\n', "new.toml")
    plan = doc(ok(jl("apply", renamed, "--prune", "--dry-run", "-j")))["plan"]
    assert [(c["action"], c["name"]) for c in plan["changes"]] == [
        ("delete", "OLD"), ("create", "NEW")]
    ok(jl("apply", renamed, "--prune", "-f"))
    assert doc(ok(jl("--cluster", "west", "stream", "ls", "-j"))) == ["NEW"]


def test_a_consumer_limit_an_existing_consumer_exceeds_refuses_the_plan(jl, tmp_path):
    """The engine (and a server) refuse such an update (10069): the plan says so before
    anything, exit 3, and the other update of the file is not made either."""
    base = ('[streams.A]\nsubjects = ["a.>"]\nmax_msgs = {n}\n[streams.N1]\nsubjects = '
            '["n1.>"]\nconsumer_limits = {{ inactive_threshold = "{t}" }}\n')
    ok(jl("apply", write(tmp_path, base.format(n=10, t="30s"))))
    ok(jl("consumer", "add", "N1", "C1", "--pull", "--defaults", "--inactive-threshold",
          "25s"))
    before = data_dir_bytes(jl.data)
    r = jl("apply", write(tmp_path, base.format(n=11, t="10s"), "c.toml"))
    assert r.exit_code == 3, r.output
    assert ("stream N1 in cluster local can not be updated: change to limits violates "
            "consumers: C1") in r.stdout + r.stderr
    assert data_dir_bytes(jl.data) == before
    ok(jl("apply", write(tmp_path, base.format(n=11, t="1m"), "d.toml")))  # above: fine


def test_a_kv_mirror_without_its_duplicate_window_is_no_change(jl, tmp_path):
    """nats.go (and jetlink) give a KV mirror's stream a 2m duplicate window; a server
    clears it when it restarts (fixCfgMirrorWithDedupWindow: no setting of a mirror). The
    plan and export compare mirrors without it: no change after every restart, and the
    export is still the [kv_mirrors] table."""
    from jetlink.core.clock import ManualClock
    from jetlink.core.jetstream import JetStream
    from jetlink.core.store import DataDir

    path = write(tmp_path, '[kv.CONFIG]\nhistory = 10\n[kv_mirrors.CM]\norigin_bucket = '
                           '"CONFIG"\n')
    ok(jl("apply", path))
    dd = DataDir(jl.data)
    try:  # (what a restarted server answers)
        js = JetStream(dd.open("local"), ManualClock(10**18))
        cfg = js.stream_info("KV_CM").config
        assert cfg.duplicate_window == 120 * 10**9
        js.update_stream(cfg.replace(duplicate_window=0))
    finally:
        dd.close()
    assert ok(jl("apply", path, "--dry-run")).stdout.startswith("No changes")
    assert tomllib.loads(ok(jl("export")).stdout)["kv_mirrors"] == {
        "CM": {"origin_bucket": "CONFIG"}}


def test_prune_deletes_mirrors_before_their_origins(jl, tmp_path):
    """The deletions go in the reverse dependency order, as the stored streams chain (ZZ
    mirrors AM mirrors Z): a run cut short never leaves a mirror without its origin (they
    went by name: AM, Z, ZZ)."""
    ok(jl("apply", write(tmp_path, '[streams.Z]\nsubjects = ["z.>"]\n[streams.AM]\nmirror = '
                                   '{ name = "Z" }\n[streams.ZZ]\nmirror = { name = "AM" }\n'
                                   '[streams.KEEP]\nsubjects = ["k"]\n')))
    keep = write(tmp_path, '[clusters.local]\n[streams.KEEP]\nsubjects = ["k"]\n', "k.toml")
    plan = doc(ok(jl("apply", keep, "--prune", "--dry-run", "-j")))["plan"]
    assert [(c["action"], c["name"]) for c in plan["changes"]] == [
        ("delete", "ZZ"), ("delete", "AM"), ("delete", "Z")]


def test_a_kv_mirror_is_its_stream_for_duplicates_origins_and_order(jl, tmp_path):
    """A KV mirror X is the stream KV_X, as a bucket X is: declared beside a bucket X it is
    a duplicate (apply created the bucket, then failed), and as an aggregate's origin it
    exists and is created before the aggregate."""
    dup = write(tmp_path, '[kv.Y]\n[kv.X]\n[kv_mirrors.X]\norigin_bucket = "Y"\n', "dup.toml")
    r = jl("validate", dup)
    assert r.exit_code == 3 and ('kv_mirror X: name: duplicate definition: stream "KV_X" in '
                                 'cluster "local" is already defined by kv X') in r.stdout
    before = data_dir_bytes(jl.data)
    assert jl("apply", dup).exit_code == 3 and data_dir_bytes(jl.data) == before
    # (its stream and the bucket it mirrors: named by its own bucket it would map keys its
    # stream does not store, a warning: test_an_aggregate_origin_named_by_a_kv_mirrors_...)
    agg = write(tmp_path, '[kv.CFG]\n[kv_mirrors.MIR]\norigin_bucket = "CFG"\n'
                          '[kv_aggregates.AGG]\norigins = [{ stream = "KV_MIR", bucket = '
                          '"CFG" }]\n', "agg.toml")
    r = jl("validate", agg, "--strict")
    assert (r.exit_code, r.stdout) == (0, f"{agg}: OK\n")
    plan = doc(ok(jl("apply", agg, "-j")))["plan"]
    assert [(c["kind"], c["name"]) for c in plan["changes"]] == [
        ("kv", "CFG"), ("kv_mirror", "MIR"), ("kv_aggregate", "AGG")]


def test_consumer_limits_export_their_duration_as_a_string(jl, tmp_path):
    """Export writes durations as strings ("1h0m0s"), the consumer limits' inactive
    threshold too (it was nanoseconds), and the file applies again with no change."""
    ok(jl("apply", write(tmp_path, '[streams.CL]\nsubjects = ["cl.>"]\nconsumer_limits = '
                                   '{ inactive_threshold = "1h", max_ack_pending = 10 }\n')))
    exported = ok(jl("export")).stdout
    assert tomllib.loads(exported)["streams"]["CL"]["consumer_limits"] == {
        "inactive_threshold": "1h0m0s", "max_ack_pending": 10}
    assert ok(jl("apply", write(tmp_path, exported, "e.toml"))).stdout.startswith(
        "No changes")


def test_a_users_nats_prefixed_metadata_is_exported_and_applied(jl, tmp_path):
    """Only the keys the server sets (jsm.go FilterServerMetadata: _nats.ver, _nats.level,
    _nats.req.level, a mirror's or source's origin) are the server's; a `_nats.custom` of
    the user's is exported, and a change of it applied (it was dropped and never seen)."""
    ok(jl("apply", write(tmp_path, '[streams.MD]\nsubjects = ["md"]\nmetadata = { '
                                   '"_nats.custom" = "x", k = "v" }\n')))
    exported = tomllib.loads(ok(jl("export")).stdout)
    assert exported["streams"]["MD"]["metadata"] == {"_nats.custom": "x", "k": "v"}
    changed = write(tmp_path, '[streams.MD]\nsubjects = ["md"]\nmetadata = { '
                              '"_nats.custom" = "y", k = "v" }\n', "c.toml")
    plan = doc(jl("apply", changed, "--dry-run", "-j"))["plan"]["changes"]
    assert [c["diff"] for c in plan] == [[{
        "field": "metadata", "from": {"_nats.custom": "x", "k": "v"},
        "to": {"_nats.custom": "y", "k": "v"}}]]
    ok(jl("apply", changed))
    meta = doc(jl("stream", "info", "MD", "-j"))["config"]["metadata"]
    assert meta["_nats.custom"] == "y" and "_nats.req.level" in meta


MIRROR_CONFIGS = """
[clusters.ks]
kind = "kafka"
[clusters.kd]
kind = "kafka"
[topics.a]
cluster = "ks"
configs = { "retention.ms" = "604800000" }
[topics.b]
cluster = "ks"
[topics.c]
cluster = "ks"
[links.L]
cluster = "kd"
source_cluster = "ks"
configs = { "mirror.start.offset.spec" = "latest" }
[mirror_topics.a]
cluster = "kd"
link = "L"
configs = { "mirror.start.offset.spec" = "earliest", "segment.bytes" = "1048576" }
[mirror_topics.b]
cluster = "kd"
link = "L"
[mirror_topics.c]
cluster = "kd"
link = "L"
configs = { "mirror.start.offset.spec" = "latest" }
"""


def test_a_mirror_topics_own_configs_and_start_are_exported(jl, tmp_path):
    """A mirror topic's own configs (not the ones synced from its source) and a start
    position other than its link's default are written back; the file applies elsewhere
    to the same mirrors and exports the same again."""
    ok(jl("apply", write(tmp_path, MIRROR_CONFIGS)))
    first = ok(jl("export")).stdout
    mirrors = tomllib.loads(first)["mirror_topics"]
    assert mirrors == {
        "a": {"cluster": "kd", "link": "L", "configs": {
            "mirror.start.offset.spec": "earliest", "segment.bytes": "1048576"}},
        "b": {"cluster": "kd", "link": "L"},
        "c": {"cluster": "kd", "link": "L"},
    }
    other = tmp_path / "other"
    ok(jl("--data-dir", str(other), "apply", write(tmp_path, first, "e.toml")))
    assert ok(jl("--data-dir", str(other), "export")).stdout == first
    assert "retention.ms" not in mirrors["a"]["configs"]  # synced from the source topic


def test_a_clusters_description_is_stored_planned_and_exported(jl, tmp_path):
    """`description` of a cluster: given to a cluster apply creates (and by cluster add
    --description), shown by cluster ls, a change is an update of the cluster, exported
    (the file applies elsewhere to the same); a file without it leaves it as it is."""
    text = '[clusters.west]\ndescription = "Frankfurt"\n[streams.S]\ncluster = "west"\n'
    ok(jl("apply", write(tmp_path, text)))
    assert [(c["name"], c.get("description")) for c in doc(ok(jl("cluster", "ls", "-j")))] == [
        ("west", "Frankfurt")]
    exported = ok(jl("export")).stdout
    assert tomllib.loads(exported)["clusters"]["west"] == {
        "kind": "nats", "description": "Frankfurt"}
    other = tmp_path / "other"
    ok(jl("--data-dir", str(other), "apply", write(tmp_path, exported, "e.toml")))
    assert ok(jl("--data-dir", str(other), "export")).stdout == exported
    plan = doc(ok(jl("apply", write(tmp_path, text.replace("Frankfurt", "Paris")),
                     "--dry-run", "-j")))["plan"]
    assert plan["changes"] == [{"action": "update", "kind": "cluster", "cluster": "west",
                                "name": "west", "diff": [{"field": "description",
                                                          "from": "Frankfurt", "to": "Paris"}]}]
    ok(jl("apply", write(tmp_path, text.replace("Frankfurt", "Paris"))))
    assert "│ west │ nats │ up     │ Paris       │" in ok(jl("cluster", "ls")).stdout
    assert ok(jl("apply", write(tmp_path, '[streams.S]\ncluster = "west"\n'))
              ).stdout.startswith("No changes")
    ok(jl("cluster", "add", "east", "--description", "Dublin"))
    assert doc(ok(jl("cluster", "ls", "-j")))[0]["description"] == "Dublin"


def test_a_files_bad_values_name_the_rule(jl, tmp_path):
    """The server's own texts (10025, unchanged in JSON) with the rule for people: the
    values an enum takes, the type a field has; an unknown key's closest name; a KV
    field named once."""
    path = write(tmp_path, '[streams.S3]\nsubjects = "s3.>"\nretention = "workq"\n'
                           'storage = "mem"\nmax_msgs = 1.5\nsubject = ["x"]\n'
                           '[kv.CFG]\nttl = "1x"\n')
    r = jl("validate", path)
    assert r.exit_code == 3
    assert r.stdout.splitlines() == [
        f'{path}: stream S3: subject: unknown key "subject": not a StreamConfig field; did '
        "you mean subjects?",
        f"{path}: stream S3: subjects: invalid JSON: json: cannot unmarshal string into Go "
        "struct field StreamConfigRequest.subjects of type []string (10025): subjects is an "
        'array of strings, e.g. ["a.>"]',
        f'{path}: stream S3: retention: invalid JSON: can not unmarshal "\\"workq\\"" (10025): '
        "retention is one of limits, interest, workqueue",
        f'{path}: stream S3: storage: invalid JSON: can not unmarshal "\\"mem\\"" (10025): '
        "storage is one of file, memory",
        f"{path}: stream S3: max_msgs: invalid JSON: json: cannot unmarshal number 1.5 into "
        "Go struct field StreamConfigRequest.max_msgs of type int64 (10025): max_msgs is a "
        "whole number from -9223372036854775808 to 9223372036854775807",
        f"{path}: kv CFG: ttl: invalid duration '1x': expected a number and a unit (ns, us, "
        "ms, s, m, h, d, w, M, y), e.g. 1h30m or 1.5d"]
    problems = doc(jl("validate", path, "-j"))["problems"]
    assert problems[2]["description"] == 'invalid JSON: can not unmarshal "\\"workq\\""'


FORMS = 'whole nanoseconds or a string with its unit, e.g. "1.5s", "90s", "1h30m"'
STREAM_S = '[streams.S]\nsubjects = ["s.>"]\nallow_msg_ttl = true\n'


@pytest.mark.parametrize(("table", "field", "shown"), [
    (STREAM_S + "max_age = 2.5\n", "max_age", "stream S"),
    (STREAM_S + "duplicate_window = 2.5\n", "duplicate_window", "stream S"),
    (STREAM_S + "subject_delete_marker_ttl = 2.5\n", "subject_delete_marker_ttl", "stream S"),
    (STREAM_S + "consumer_limits = { inactive_threshold = 2.5 }\n",
     "consumer_limits.inactive_threshold", "stream S"),
    ("[kv.B]\nttl = 2.5\n", "ttl", "kv B"),
    ("[kv.B]\nlimit_marker_ttl = 2.5\n", "limit_marker_ttl", "kv B"),
    ('[kv_mirrors.M]\norigin_bucket = "B"\nttl = 2.5\n', "ttl", "kv_mirror M"),
    ('[kv_aggregates.G]\norigins = [{bucket = "B"}]\nlimit_marker_ttl = 2.5\n',
     "limit_marker_ttl", "kv_aggregate G"),
])
def test_a_duration_given_a_fraction_names_the_forms_it_takes(jl, tmp_path, table, field,
                                                              shown):
    """A number with a fraction is no duration: the problem names the field, the value and
    the forms a duration is written in (a string with its unit among them); a stream's
    keeps the server's 10025 text."""
    path = write(tmp_path, table)
    r = jl("validate", path)
    assert r.exit_code == 3, r.output
    [line] = r.stdout.splitlines()
    if shown == "stream S":
        assert line == (f"{path}: {shown}: {field}: invalid JSON: json: cannot unmarshal number "
                        f"2.5 into Go struct field StreamConfigRequest.{field} of type "
                        f"time.Duration (10025): {field} = 2.5: a duration is {FORMS}")
    else:
        assert line == f"{path}: {shown}: {field}: expected a duration ({FORMS}), got float 2.5"


@pytest.mark.parametrize(("value", "shown"), [
    ("true", "true"), ("[1]", "[1]"), ("2024-01-01T00:00:00Z", "2024-01-01T00:00:00+00:00"),
    ('{ a = 1 }', '{"a": 1}')])
def test_a_duration_of_another_type_names_the_forms_it_takes(jl, tmp_path, value, shown):
    """Not "a whole number": a duration is written as a string with its unit too."""
    path = write(tmp_path, f'[streams.S]\nsubjects = ["s"]\nmax_age = {value}\n')
    r = jl("validate", path)
    assert r.exit_code == 3, r.output
    [line] = r.stdout.splitlines()
    assert line.endswith(f"of type time.Duration (10025): max_age = {shown}: a duration is "
                         f"{FORMS}"), line


def test_apply_lists_problems_as_validate_lists_them(jl, tmp_path):
    """By object in the order the file declares them, whichever check found each (a
    link's own rule is found while loading, a stream's cluster kind while validating)."""
    path = write(tmp_path, '[clusters.k]\nkind = "kafka"\n[streams.S]\ncluster = "k"\n'
                           'subjects = ["s.>"]\n[links.l]\ncluster = "k"\n'
                           'source_cluster = "k"\n')
    said = jl("validate", path)
    applied = jl("apply", path)
    assert (said.exit_code, applied.exit_code) == (3, 3)
    assert [ln.split(": ")[1] for ln in said.stdout.splitlines()] == ["stream S", "link l"]
    assert applied.stdout == said.stdout
    assert [p["object"] for p in doc(jl("apply", path, "--json"))["plan"]["problems"]] == [
        "stream S", "link l"]


@pytest.mark.parametrize(("table", "line"), [
    ('[kv.C]\nclustr = "x"\n', 'kv C: clustr: unknown key "clustr"; did you mean cluster?'),
    ('[kv_mirrors.M]\norigin_bucket = "B"\norigin_clustr = "x"\n',
     'kv_mirror M: origin_clustr: unknown key "origin_clustr"; did you mean origin_cluster?'),
    ('[kv_aggregates.G]\norigins = [{bucket = "B", clustr = "x"}]\n',
     'kv_aggregate G: origins[0].clustr: unknown key "clustr" in origins[0]; did you mean '
     "cluster?"),
    ("[kv.D]\nzzz = 1\n",
     'kv D: zzz: unknown key "zzz" (allowed: cluster, bucket, description, max_value_size, '
     "history, ttl, max_bytes, storage, replicas, placement, republish, mirror, sources, "
     "compression, metadata, limit_marker_ttl, allow_direct)"),
    ('[kv_mirrors.M]\norigin_bucket = "B"\nzzz = 1\n',
     'kv_mirror M: zzz: unknown key "zzz" (allowed: cluster, origin_cluster, name, '
     "origin_bucket, description, replicas, history, ttl, max_bytes, max_value_size, "
     "storage, placement, keys, external, domain, metadata, compression)"),
])
def test_a_kv_tables_unknown_key_names_the_keys_it_takes(jl, tmp_path, table, line):
    """The keys a KV table takes, as docs/topology.md lists them (where it lives included):
    the allowed list and a misspelling's suggestion."""
    path = write(tmp_path, table)
    r = jl("validate", path)
    assert r.exit_code == 3, r.output
    assert r.stdout.splitlines() == [f"{path}: {line}"]


def test_yaml_is_said_not_read_nor_written(jl, tmp_path):
    """A file named .yaml / .yml is said to be YAML, not given TOML's parse error; export
    refuses to write TOML under such a name (exit 2, nothing written)."""
    path = write(tmp_path, "streams:\n  A:\n    subjects: [a]\n", "t.yaml")
    for verb in ("validate", "apply"):
        r = jl(verb, path)
        assert r.exit_code == 3, r.output
        assert r.stdout.startswith(f"{path}: YAML is not read: a topology file is TOML, or "
                                   "JSON (a name ending in .json)\n"), r.stdout
    out = tmp_path / "out.yml"
    r = jl("export", "-o", str(out))
    assert r.exit_code == 2
    assert r.stderr == (f"jetlink: error: --output {out}: YAML is not written: a name ending "
                        "in .json gets JSON, any other TOML (the formats validate and apply "
                        "read)\n")
    assert not out.exists()


def test_applying_the_mirror_a_failover_promoted_says_what_happened_and_the_way_back(
        jl, tmp_path):
    path = write(tmp_path, """
        [clusters.west]
        [clusters.east]
        [streams.ORDERS]
        cluster = "west"
        subjects = ["orders.>"]
        [streams.BACKUP]
        cluster = "east"
        mirror = { name = "ORDERS", domain = "west" }
        """.replace("\n        ", "\n"))
    ok(jl("apply", path))
    for args in (["--cluster", "west", "pub", "orders.a", "x"],
                 ["--cluster", "east", "positions", "sync"], ["cluster", "down", "west"],
                 ["--cluster", "east", "stream", "failover", "BACKUP", "-f"]):
        ok(jl(*args))
    r = jl("apply", path, "--dry-run")
    assert r.exit_code == 3, r.output
    assert "stream BACKUP in cluster east can not be updated: stream mirror configuration " \
        "can not be updated (BACKUP was promoted by a failover at " in r.stdout
    assert "it mirrored ORDERS@west; jetlink dr failback --from west makes it a mirror " \
        "again)" in r.stdout


def test_problems_of_the_data_directory_are_not_counted_as_a_file(jl, tmp_path):
    """A cycle the data directory already holds (stream add warns of it): an apply of its
    own export changes nothing and warns of it (the target holds it so already); a file
    that changes one of its streams is refused for that stream, the data directory's own
    stream of the cycle a warning (the file does not change it)."""
    for args in (["cluster", "add", "west"], ["cluster", "add", "east"],
                 ["--cluster", "east", "stream", "add", "X", "--mirror", "Y@west",
                  "--defaults"],
                 ["--cluster", "west", "stream", "add", "Y", "--mirror", "X@east",
                  "--defaults"]):
        ok(jl(*args))
    out = tmp_path / "east.toml"
    ok(jl("export", "-c", "east", "-o", str(out)))
    r = ok(jl("apply", str(out), "--dry-run"))
    assert "stream X: mirror.name: warning: detected cycle" in r.stderr
    assert "(the target holds it so already; the file changes nothing there)" in r.stderr
    out.write_text(out.read_text().replace("[streams.X]", '[streams.X]\ndescription = "d"'))
    r = jl("apply", str(out), "--dry-run")
    assert r.exit_code == 3
    assert f"{out}: stream X: mirror.name: detected cycle" in r.stdout
    assert "<data directory>: stream Y: mirror.name: warning: detected cycle" in r.stderr
    assert r.stderr.endswith("1 problem in 1 file, 1 warning\n"), r.stderr


def test_a_damaged_cluster_stops_only_what_involves_it(jl, tmp_path):
    """A cluster whose database can not be read: export -c of another and a plan of a file
    that does not touch it go ahead; a whole export and a change in it are refused."""
    ok(jl("cluster", "add", "west"))
    ok(jl("--cluster", "west", "stream", "add", "O", "--subjects", "o.>", "--defaults"))
    (jl.data / "junk.db").write_bytes(b"garbage, not SQLite\n" * 10)
    assert "[clusters.west]" in ok(jl("export", "-c", "west")).stdout
    whole = jl("export")
    assert whole.exit_code == 1 and whole.stderr.startswith("jetlink: error: cluster junk: ")
    assert whole.stderr.endswith(": export -c NAME exports the other clusters\n")
    elsewhere = write(tmp_path, 'version = 1\n[clusters.west]\nkind = "nats"\n[streams.P]\n'
                                'cluster = "west"\nsubjects = ["p.>"]\n')
    ok(jl("apply", elsewhere))
    assert doc(jl("--cluster", "west", "stream", "info", "P", "-j"))["config"]["name"] == "P"
    into = write(tmp_path, 'version = 1\n[clusters.junk]\nkind = "nats"\n[streams.X]\n'
                           'cluster = "junk"\nsubjects = ["x.>"]\n', "j.toml")
    result = jl("apply", into, "-j")
    assert result.exit_code == 3
    problems = doc(result)["plan"]["problems"]
    assert any(p["object"] == "stream X" and p["field"] == "cluster"
               and p["description"].startswith("cluster junk: ") for p in problems), problems


def test_prune_of_a_link_that_auto_creates_its_mirror_topics_converges(jl, tmp_path):
    """The mirror topic deleted first leaves its mirror row until the next step: the link's
    deletion is never held, nor failed over, by a topic that is gone. One run prunes all."""
    both = 'version = 1\n[clusters.kw]\nkind = "kafka"\n[clusters.ke]\nkind = "kafka"\n'
    full = both + (
        '[topics.t1]\ncluster = "kw"\n[links.L]\ncluster = "ke"\nsource_cluster = "kw"\n'
        'configs = { "auto.create.mirror.topics.enable" = "true" }\n'
        'topic_filters = [{ name = "t", patternType = "PREFIXED", filterType = "INCLUDE" }]\n'
        '[mirror_topics.t1]\ncluster = "ke"\nlink = "L"\n')
    ok(jl("apply", write(tmp_path, full)))
    pruned = ok(jl("apply", write(tmp_path, both, "none.toml"), "--prune", "-f"))
    assert "Applied: delete link L in cluster ke" in pruned.stdout
    assert ok(jl("apply", write(tmp_path, both, "none.toml"), "--prune", "-f")).stdout \
        .startswith("No changes")
    assert doc(jl("--cluster", "ke", "links", "ls", "-j")) == []


def test_an_unchanged_object_with_a_problem_the_target_holds_is_a_warning(jl, tmp_path):
    """An origin's max_msg_size raised after its mirror was made (the server accepts the
    edit): export then apply back changes nothing, with a warning, never a refusal; a file
    changing the mirror meets the rule."""
    for c in ("west", "east"):
        ok(jl("cluster", "add", c))
    ok(jl("--cluster", "west", "stream", "add", "ORDERS", "--subjects", "orders.>",
          "--defaults", "--max-msg-size", "1048576"))
    ok(jl("--cluster", "east", "stream", "add", "ORDERS_EAST", "--mirror", "ORDERS@west",
          "--defaults", "--max-msg-size", "1048576"))
    ok(jl("--cluster", "west", "stream", "edit", "ORDERS", "--max-msg-size", "2097152", "-f"))
    path = write(tmp_path, ok(jl("export")).stdout)
    before = data_dir_bytes(jl.data, databases_only=True)
    applied = ok(jl("apply", path))
    assert applied.stdout.startswith("No changes")
    assert ("stream ORDERS_EAST: max_msg_size: warning: stream mirror must have max message "
            "size >= source") in applied.stderr
    assert "(the target holds it so already; the file changes nothing there)" in applied.stderr
    assert data_dir_bytes(jl.data, databases_only=True) == before
    text = (tmp_path / "t.toml").read_text()
    assert "[streams.ORDERS_EAST]" in text
    edited = text.replace("[streams.ORDERS_EAST]", '[streams.ORDERS_EAST]\ndescription = "x"')
    result = jl("apply", write(tmp_path, edited, "e.toml"), "-j")
    assert result.exit_code == 3
    assert any(p["err_code"] == 10030 for p in doc(result)["plan"]["problems"])


def test_a_sealed_stream_is_created_then_sealed(jl, tmp_path):
    """export writes a sealed stream's sealed = true; the server refuses a sealed create, so
    apply creates it and then seals it: the rebuild holds it sealed, a second apply changes
    nothing."""
    ok(jl("stream", "add", "SEAL", "--subjects", "s.>", "--defaults"))
    ok(jl("stream", "seal", "SEAL", "-f"))
    text = ok(jl("export")).stdout
    assert "sealed = true" in text
    path = write(tmp_path, text)
    other = tmp_path / "rebuilt"
    ok(jl("--data-dir", str(other), "apply", path))
    cfg = doc(jl("--data-dir", str(other), "stream", "info", "SEAL", "-j"))["config"]
    assert cfg["sealed"] is True
    assert ok(jl("--data-dir", str(other), "apply", path)).stdout.startswith("No changes")
    # a file saying only sealed = true: what a seal implies (deny_delete ...) is no change
    hand = write(tmp_path, 'version = 1\n[streams.S2]\nsubjects = ["s2.>"]\nsealed = true\n',
                 "h.toml")
    ok(jl("--data-dir", str(other), "apply", hand))
    assert doc(jl("--data-dir", str(other), "stream", "info", "S2", "-j"))["config"][
        "deny_delete"] is True
    assert ok(jl("--data-dir", str(other), "apply", hand)).stdout.startswith("No changes")


def test_an_aggregate_of_a_kv_mirror_applies_as_declared_twice_the_same(jl, tmp_path):
    """An aggregate origin is made as the file declares it (the CLI's kv add --source
    resolves a KV mirror's bucket itself; a file says stream and bucket): applied again it
    is unchanged, and export -> apply -> export is the same."""
    f = tmp_path / "agg.toml"
    f.write_text('[clusters.east]\n[kv.CONFIG]\ncluster = "east"\n'
                 '[kv_mirrors.CONFIG_EAST]\ncluster = "east"\norigin_bucket = "CONFIG"\n'
                 '[kv_aggregates.AGG]\ncluster = "east"\norigins = [{ stream = '
                 '"KV_CONFIG_EAST", bucket = "CONFIG", keys = ["services.>"] }]\n')
    ok(jl("apply", str(f)))
    assert ok(jl("apply", str(f))).stdout.startswith("No changes")
    ok(jl("--cluster", "east", "kv", "put", "CONFIG", "services.b", "2"))
    ok(jl("replicate"))
    assert ok(jl("--cluster", "east", "kv", "get", "AGG", "services.b", "--raw")).stdout == "2"
    first = ok(jl("export")).stdout
    assert 'stream = "KV_CONFIG_EAST"\nbucket = "CONFIG"' in first, first
    out = tmp_path / "out.toml"
    out.write_text(first)
    assert ok(jl("apply", str(out), "--dry-run")).stdout.startswith("No changes")


def _files(tmp_path, **texts):
    out = {}
    for name, text in texts.items():
        out[name] = tmp_path / f"{name}.toml"
        out[name].write_text(text)
    return out


def test_changes_are_ordered_so_that_each_can_be_made(jl, tmp_path):
    """Subjects moved from an updated stream to a new one: the update gives them up first;
    a pruned topic whose name a created one collides with goes first; a chain of mirror
    topics (kwest -> keast -> kcentral) is made upstream first."""
    f = _files(tmp_path,
               o1='[streams.Z]\nsubjects = ["z.>", "shared.>"]\n',
               o2='[streams.Z]\nsubjects = ["z.>"]\n[streams.B]\nsubjects = ["shared.>"]\n',
               t1='[clusters.k]\nkind = "kafka"\n[topics."a.b"]\ncluster = "k"\n',
               t2='[clusters.k]\nkind = "kafka"\n[topics."a_b"]\ncluster = "k"\n',
               ch='[clusters.kwest]\nkind = "kafka"\n[clusters.keast]\nkind = "kafka"\n'
                  '[clusters.kcentral]\nkind = "kafka"\n[topics.orders]\ncluster = "kwest"\n'
                  '[links.dr]\ncluster = "keast"\nsource_cluster = "kwest"\n'
                  '[links.dr2]\ncluster = "kcentral"\nsource_cluster = "keast"\n'
                  '[mirror_topics.orders]\ncluster = "keast"\nlink = "dr"\n'
                  '[mirror_topics.orders2]\ncluster = "kcentral"\nname = "orders"\n'
                  'link = "dr2"\n')
    ok(jl("apply", str(f["o1"])))
    out = ok(jl("apply", str(f["o2"]))).stdout
    assert out.index("update stream Z") < out.index("create stream B"), out
    ok(jl("apply", str(f["t1"])))
    out = ok(jl("apply", str(f["t2"]), "--prune", "-f")).stdout
    assert out.index("delete topic a.b") < out.index("create topic a_b"), out
    out = ok(jl("apply", str(f["ch"]))).stdout
    assert out.index("mirror_topic orders in cluster keast") < \
        out.index("mirror_topic orders in cluster kcentral"), out
    assert ok(jl("apply", str(f["ch"]))).stdout.startswith("No changes")


def test_subjects_moved_between_existing_streams_are_taken_once_given_up(jl, tmp_path):
    """An update is checked against the streams as the plan's earlier changes leave them:
    subjects moved from one existing stream to another (or from a pruned one) are taken
    after the other gives them up; a swap, which no order of two updates makes, is refused
    before anything is applied."""
    from helpers import data_dir_bytes

    f = _files(tmp_path,
               start='[clusters.local]\n[streams.A]\nsubjects = ["a.>"]\n'
                     '[streams.B]\nsubjects = ["b.>"]\n',
               moved='[clusters.local]\n[streams.A]\nsubjects = ["x.>"]\n'
                     '[streams.B]\nsubjects = ["b.>", "a.>"]\n',
               swap='[clusters.local]\n[streams.A]\nsubjects = ["b.>"]\n'
                    '[streams.B]\nsubjects = ["x.>", "a.>"]\n',
               pruned='[clusters.local]\n[streams.B]\nsubjects = ["b.>", "a.>", "x.>"]\n')
    ok(jl("apply", str(f["start"])))
    out = ok(jl("apply", str(f["moved"]))).stdout
    assert out.index("update stream A") < out.index("update stream B"), out
    assert json.loads(jl("stream", "info", "B", "-j").stdout)["config"]["subjects"] == [
        "b.>", "a.>"]
    before = data_dir_bytes(jl.data)
    r = jl("apply", str(f["swap"]))
    assert r.exit_code == 3 and "stream A in cluster local can not be updated: subjects " \
        "overlap with an existing stream (10065)" in r.stdout, (r.stdout, r.stderr)
    assert data_dir_bytes(jl.data) == before
    out = ok(jl("apply", str(f["pruned"]), "--prune", "-f")).stdout
    assert out.index("delete stream A") < out.index("update stream B"), out
    assert json.loads(jl("stream", "ls", "-j").stdout) == ["B"]


def test_prune_of_an_origin_others_depend_on_is_a_problem(jl, tmp_path):
    """--prune deleting a bucket a KV mirror of an undeclared cluster is made from: a
    problem of the file's doing (nothing applied), not one taken for the clusters' own."""
    f = _files(tmp_path,
               all='[clusters.west]\n[clusters.east]\n[kv.CONFIG]\ncluster = "west"\n'
                   '[kv_mirrors.CONFIG_EAST]\ncluster = "east"\norigin_bucket = "CONFIG"\n'
                   'domain = "west"\n',
               west='[clusters.west]\n[streams.LEDGER]\ncluster = "west"\n'
                    'subjects = ["ledger.>"]\n')
    ok(jl("apply", str(f["all"])))
    before = data_dir_bytes(jl.data, databases_only=True)
    r = jl("apply", str(f["west"]), "--prune", "-f")
    assert r.exit_code == 3 and 'origin bucket "CONFIG"' in r.output, r.output
    assert data_dir_bytes(jl.data, databases_only=True) == before
    assert "KV_CONFIG" in ok(jl("--cluster", "west", "stream", "ls", "--names")).stdout


def test_prune_with_no_declared_cluster_says_nothing_is_pruned(jl, tmp_path):
    f = _files(tmp_path, p1='[streams.X]\nsubjects = ["x"]\n[streams.Y]\nsubjects = ["y"]\n',
               p2='[streams.X]\nsubjects = ["x"]\n')
    ok(jl("apply", str(f["p1"])))
    r = ok(jl("apply", str(f["p2"]), "--prune", "-f"))
    assert "--prune deletes objects of the clusters the file declares" in r.stderr
    assert "declares none, so nothing is pruned" in r.stderr
    assert ok(jl("stream", "ls", "--names")).stdout == "X\nY\n"


def test_an_aggregate_origin_named_by_a_kv_mirrors_bucket_is_warned_of(jl, tmp_path):
    """{ bucket = "CONFIG_EAST" }, a KV mirror of CONFIG: its stream stores $KV.CONFIG.<key>,
    so the declared mapping copies nothing: a warning saying what to declare instead."""
    f = _files(tmp_path, agg='[clusters.east]\n[kv.CONFIG]\ncluster = "east"\n'
               '[kv_mirrors.CONFIG_EAST]\ncluster = "east"\norigin_bucket = "CONFIG"\n'
               '[kv_aggregates.AGG]\ncluster = "east"\n'
               'origins = [{ bucket = "CONFIG_EAST", keys = ["services.>"] }]\n')
    r = ok(jl("validate", str(f["agg"])))
    assert r.stderr == (
        f'{f["agg"]}: kv_aggregate AGG: origins[0].bucket: warning: aggregate origin bucket '
        '"CONFIG_EAST" is a KV mirror of bucket CONFIG (its keys are stored as '
        '$KV.CONFIG.<key>): $KV.CONFIG_EAST.> copies nothing from it; declare it { stream = '
        '"KV_CONFIG_EAST", bucket = "CONFIG" }\n1 warning\n')


def test_a_kv_objects_problem_shows_the_value_as_its_own_field_says_it(jl, tmp_path):
    f = _files(tmp_path, kt='[kv.B]\nttl = "-1s"\n')
    r = jl("validate", str(f["kt"]))
    assert (r.exit_code, r.stdout) == (3, (
        f'{f["kt"]}: kv B: ttl: max age can not be negative (10052): ttl = -1s\n'))


@pytest.mark.parametrize(("before", "after", "removes"), [
    ('[streams.S]\nsubjects = ["s.>"]\nmax_msgs = 100\n',
     '[streams.S]\nsubjects = ["s.>"]\nmax_msgs = 10\n', "max_msgs 10 < 50 stored"),
    ('[streams.S]\nsubjects = ["s.>"]\n',
     '[streams.S]\nsubjects = ["s.>"]\nretention = "interest"\n',
     "retention interest with no consumer: the 50 stored go, as nobody is interested"),
    ('[kv.K]\nhistory = 5\n', '[kv.K]\nhistory = 1\n',
     "history 1 < 3 revisions stored for one key"),
])
def test_an_update_that_removes_stored_messages_asks_as_stream_edit_does(
        jl, tmp_path, before, after, removes):
    """An update of the plan whose limits remove stored messages (core/removal.py, the rule
    stream edit and kv edit ask on) is shown in the plan, and without a terminal needs -f:
    exit 2 and nothing changed, as every destructive verb; with -f it is made."""
    ok(jl("apply", write(tmp_path, before, "a.toml")))
    if "kv" in before:
        for i in range(3):
            ok(jl("kv", "put", "K", "a", f"v{i}"))
    else:
        ok(jl("pub", "s.{{Count}}", "x", "--count", "50"))
    path = write(tmp_path, after, "b.toml")
    plan = doc(ok(jl("apply", path, "--dry-run", "-j")))["plan"]
    assert [c.get("removes") for c in plan["changes"]] == [removes]
    r = ok(jl("apply", path, "--dry-run"))
    assert f"      removes stored messages: {removes}\n" in r.stdout
    before_bytes = data_dir_bytes(jl.data)
    r = jl("apply", path)
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert r.stderr.endswith(f"pass -f/--force to apply updates that remove stored messages "
                             f"({plan['changes'][0]['kind']} "
                             f"{plan['changes'][0]['name']} in cluster local: {removes})\n")
    assert data_dir_bytes(jl.data) == before_bytes
    ok(jl("apply", path, "-f"))
    assert doc(ok(jl("apply", path, "--dry-run", "-j")))["plan"]["changes"] == []


def test_a_kv_plan_shows_a_default_it_sets_not_unset(jl, tmp_path):
    """history = 1 written in the file is shown as 1 (its default), not unset; a TTL the
    file leaves out is unset."""
    ok(jl("apply", write(tmp_path, '[kv.K]\nhistory = 5\nttl = "1h"\n', "a.toml")))
    plan = doc(ok(jl("apply", write(tmp_path, "[kv.K]\nhistory = 1\n", "b.toml"),
                     "--dry-run", "-j")))["plan"]
    assert plan["changes"][0]["diff"] == [{"field": "history", "from": 5, "to": 1},
                                          {"field": "ttl", "from": "1h0m0s", "to": None}]


def test_every_refusal_of_an_update_is_listed_not_only_the_first(jl, tmp_path):
    """Two fields an update can not change: both listed (the server's first first), each
    field set aside as stored and the rest checked again; nothing changed."""
    ok(jl("apply", write(tmp_path, '[streams.S]\nsubjects = ["s.>"]\n', "a.toml")))
    path = write(tmp_path, '[streams.S]\nsubjects = ["s.>"]\nstorage = "memory"\n'
                           'retention = "workqueue"\nmax_msgs = 10\n', "b.toml")
    before = data_dir_bytes(jl.data)
    r = jl("apply", path, "-j")
    assert r.exit_code == 3, (r.stdout, r.stderr)
    problems = doc(r)["plan"]["problems"]
    assert [(p["field"], p["description"]) for p in problems] == [
        ("storage", "stream S in cluster local can not be updated: stream configuration "
                    "update can not change storage type"),
        ("retention", "stream S in cluster local can not be updated: stream configuration "
                      "update can not change retention policy to/from workqueue")]
    assert data_dir_bytes(jl.data) == before


def test_an_update_names_every_limit_that_removes_stored_messages(jl, tmp_path):
    """Two limits of one update that each remove messages: both named in the plan (the one
    the operator confirms against), joined with "; "."""
    ok(jl("apply", write(tmp_path, '[streams.S]\nsubjects = ["s.>"]\n', "a.toml")))
    ok(jl("pub", "s.a", "x", "--count", "50"))
    path = write(tmp_path, '[streams.S]\nsubjects = ["s.>"]\nmax_msgs = 10\n'
                           "max_msgs_per_subject = 5\n", "b.toml")
    plan = doc(ok(jl("apply", path, "--dry-run", "-j")))["plan"]
    assert [c.get("removes") for c in plan["changes"]] == [
        "max_msgs 10 < 50 stored; max_msgs_per_subject 5 < 50 stored on one subject"]


@pytest.mark.parametrize("server", [[], ["-s", "nats://127.0.0.1:1"]])
def test_export_of_a_name_no_cluster_can_have_is_a_usage_error(jl, server):
    """--cluster names a cluster, or with a server a JetStream domain exported as a cluster
    of that name: one that cannot be is refused before anything is read or asked (no
    server at that address is ever contacted)."""
    r = jl(*server, "export", "-c", ">")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == ("jetlink: error: invalid cluster name '>': use 1 to 64 letters, "
                        "digits, '_' or '-'\n")


def test_no_changes_counts_in_words(jl, tmp_path):
    one = tmp_path / "one.toml"
    one.write_text('[streams.A]\nsubjects = ["a"]\n')
    ok(jl("apply", str(one)))
    assert ok(jl("apply", str(one))).stdout == (
        "No changes: 1 object is as the file declares them\n")


def test_applying_a_kv_mirror_a_failover_promoted_names_its_origin(jl, tmp_path):
    """The KV mirror promoted (kv failover): the file's kv_mirror is refused on the field
    that no longer holds, its origin (not keys, which the file did not change)."""
    path = write(tmp_path, """
        [clusters.west]
        [clusters.east]
        [kv.CONFIG]
        cluster = "west"
        [kv_mirrors.CONFIG]
        cluster = "east"
        origin_bucket = "CONFIG"
        domain = "west"
        """.replace("\n        ", "\n"))
    ok(jl("apply", path))
    for args in (["cluster", "down", "west"], ["--cluster", "east", "kv", "failover", "CONFIG",
                                               "-f"]):
        ok(jl(*args))
    r = jl("apply", path, "--dry-run", "-j")
    assert r.exit_code == 3, r.output
    [p] = [p for p in doc(r)["plan"]["problems"] if p["object"] == "kv_mirror CONFIG"]
    assert p["field"] == "origin_bucket", p
    assert "was promoted by a failover" in p["description"]


def test_an_update_refused_for_an_overlap_names_the_subject_and_the_stream(jl, tmp_path):
    one = write(tmp_path, '[streams.A]\nsubjects = ["a"]\n[streams.B]\nsubjects = ["b"]\n',
                "one.toml")
    ok(jl("apply", one))
    swapped = write(tmp_path, '[streams.A]\nsubjects = ["b"]\n[streams.B]\nsubjects = ["a"]\n',
                    "swapped.toml")
    r = jl("apply", swapped, "--dry-run")
    assert r.exit_code == 3
    assert ('stream A: subjects: stream A in cluster local can not be updated: subjects '
            'overlap with an existing stream (10065): "b" overlaps "b" of stream B') in r.stdout


# a cluster and five streams: six changes
FIVE_STREAMS = "version = 1\n[clusters.west]\n" + "".join(
    f'[streams.S{i}]\ncluster = "west"\nsubjects = ["s{i}.>"]\n' for i in range(5))


def test_an_interrupted_apply_says_what_it_made_and_what_is_left(jl, tmp_path, monkeypatch):
    """Ctrl-C half-way: the plan was printed before the first change, each change as it was
    made; stderr says how many of how many and the way on; exit 130; a run again makes the
    rest."""
    from jetlink.core.topology.embedded import EmbeddedClusters

    path = write(tmp_path, FIVE_STREAMS)
    real = EmbeddedClusters.apply
    seen = []

    def stop_at_the_fourth(self, change):
        seen.append(change)
        if len(seen) == 4:
            raise KeyboardInterrupt
        real(self, change)

    monkeypatch.setattr(EmbeddedClusters, "apply", stop_at_the_fourth)
    res = jl("apply", path)
    assert res.exit_code == 130
    assert res.stdout == (
        "Plan:\n  + create cluster west\n" + "".join(
            f"  + create stream S{i} in cluster west\n" for i in range(5))
        + "6 to create, 0 to update, 0 to delete, 0 unchanged\n"
        "Applied: create cluster west\n"
        "Applied: create stream S0 in cluster west\n"
        "Applied: create stream S1 in cluster west\n")
    assert res.stderr == (
        "jetlink: interrupted: apply stopped after 3 of 6 changes; the change under way "
        "(create stream S2 in cluster west) stopped with it (on a live server the server may "
        "have made it). Run the same apply again (--dry-run first) to see what is left.\n")
    monkeypatch.setattr(EmbeddedClusters, "apply", real)
    plan = doc(ok(jl("apply", path, "--dry-run", "-j")))["plan"]
    assert [c["name"] for c in plan["changes"]] == ["S2", "S3", "S4"]
    assert plan["unchanged"] == 3
    # --json: the one document all the same (what was made, under way, not made)
    seen.clear()
    monkeypatch.setattr(EmbeddedClusters, "apply", stop_at_the_fourth)
    res = jl("--data-dir", str(tmp_path / "other"), "apply", path, "-j")
    assert res.exit_code == 130
    got = json.loads(res.stdout)
    assert (got["interrupted"], got["dry_run"]) == (True, False)
    assert [c["name"] for c in got["result"]["applied"]] == ["west", "S0", "S1"]
    assert got["result"]["under_way"]["name"] == "S2"
    assert [c["name"] for c in got["result"]["not_applied"]] == ["S3", "S4"]
    assert [c["name"] for c in got["plan"]["changes"]] == ["west", "S0", "S1", "S2", "S3",
                                                           "S4"]


def test_a_ctrl_c_just_after_a_change_was_made_counts_it(jl, tmp_path, monkeypatch):
    """SIGINT landing once a change is committed, before it is told: held until the change
    is counted and its Applied line printed, then the run stops (it said "stopped after 2",
    the third made all the same)."""
    import os
    import signal

    from jetlink.core.topology.embedded import EmbeddedClusters

    path = write(tmp_path, FIVE_STREAMS)
    real = EmbeddedClusters.apply
    seen = []

    def interrupted_after_the_third(self, change):
        real(self, change)
        seen.append(change)
        if len(seen) == 3:
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(EmbeddedClusters, "apply", interrupted_after_the_third)
    res = jl("apply", path)
    assert res.exit_code == 130
    assert res.stdout.splitlines()[-1] == "Applied: create stream S1 in cluster west"
    assert res.stderr == ("jetlink: interrupted: apply stopped after 3 of 6 changes. Run the "
                          "same apply again (--dry-run first) to see what is left.\n")
    monkeypatch.setattr(EmbeddedClusters, "apply", real)
    plan = doc(ok(jl("apply", path, "--dry-run", "-j")))["plan"]
    assert [c["name"] for c in plan["changes"]] == ["S2", "S3", "S4"]


def test_apply_of_a_file_that_declares_nothing_warns_as_validate_does(jl, tmp_path):
    path = write(tmp_path, "version = 1\n", "nothing.toml")
    res = ok(jl("apply", path))
    assert res.stderr == (f"{path}: warning: the file declares nothing: no clusters, streams, "
                          "buckets, topics, links or ACLs\n")
    assert [w["description"] for w in doc(ok(jl("apply", path, "-j")))["plan"]["warnings"]] \
        == ["the file declares nothing: no clusters, streams, buckets, topics, links or ACLs"]


def test_prune_of_a_file_that_does_not_read_says_only_why(jl, tmp_path):
    path = write(tmp_path, "[clusters.west\n", "broken.toml")
    res = jl("apply", path, "--prune", "-f")
    assert res.exit_code == 3
    assert "--prune" not in res.stderr + res.stdout and "invalid TOML" in res.stdout


def test_a_cluster_neither_declared_nor_in_the_data_directory_says_where_it_was_looked(
        jl, tmp_path):
    """A file declaring no clusters, over a data directory holding some: the cluster an
    object names is said missing from the data directory (its clusters listed), with the
    two ways on, not "not declared" beside clusters the file never declared."""
    ok(jl("cluster", "add", "east"))
    ok(jl("cluster", "add", "west"))
    res = jl("apply", write(tmp_path, '[streams.A]\ncluster = "eats"\nsubjects = ["a.>"]\n'))
    assert res.exit_code == 3
    assert res.stdout.splitlines()[0].endswith(
        'stream A: cluster: cluster "eats" does not exist in the data directory (its '
        "clusters: east, west; did you mean east?): declare it under [clusters] (apply "
        "creates it) or create it first (jetlink cluster add eats)")


@pytest.mark.parametrize(("value", "line"), [
    ('"a b"', "stream A: cluster: invalid cluster name \"a b\": use 1 to 64 letters, digits, "
              "'_' or '-'"),
    ('""', "stream A: cluster: invalid cluster name \"\": use 1 to 64 letters, digits, '_' "
           "or '-'"),
    ('"' + "c" * 65 + '"', f"stream A: cluster: invalid cluster name \"{'c' * 65}\": use 1 "
                           "to 64 letters, digits, '_' or '-'"),
    ("5", "stream A: cluster: cluster must be a string (a cluster name)"),
])
def test_a_cluster_that_is_no_cluster_name_is_one_problem_never_one_to_create(
        jl, tmp_path, value, line):
    """The name's own problem alone, as validate says it: not also "does not exist ...
    (jetlink cluster add a b)", a command that would refuse that name; a name past 64
    characters is the data directory's rule too (validate took it, apply failed later)."""
    path = write(tmp_path, f"[streams.A]\ncluster = {value}\nsubjects = [\"a.>\"]\n")
    for words in (["apply", path, "--dry-run"], ["validate", path]):
        res = jl(*words)
        assert res.exit_code == 3
        assert res.stdout.splitlines()[0].endswith(line), res.stdout
        assert res.stderr.splitlines()[-1] == "1 problem in 1 file", res.stderr


def test_a_plan_line_writes_a_boolean_as_the_file_does(jl, tmp_path):
    """``allow_rollup_hdrs: false -> true``: TOML's and JSON's words, not Python's."""
    ok(jl("apply", write(tmp_path, 'version = 1\n[streams.A]\nsubjects = ["a.>"]\n', "a.toml"),
          "-f"))
    edited = write(tmp_path, 'version = 1\n[streams.A]\nsubjects = ["a.>"]\n'
                             'allow_rollup_hdrs = true\n', "a.toml")
    assert ok(jl("apply", edited, "--dry-run")).stdout.splitlines()[1:3] == [
        "  ~ update stream A in cluster local", "      allow_rollup_hdrs: false -> true"]
