"""Topology as code on real nats-servers: `jetlink apply` / `validate --live` / `export` of
files whose clusters are bound to servers (core/topology/live.py LiveClusters, cli/apply.py).

Round trip export -> apply with no changes; creation in dependency order across the two
domains of a leafnode pair; updates with their field differences; an illegal update refused
by validate --live and by apply, nothing changed; prune; subjects overlapping a stream the
server holds; a missing origin; a server killed in the middle of an apply (a partial report,
exit 1); the server in force taking a file's unbound clusters; contexts; 1,000 streams timed.
"""

from __future__ import annotations

import json
import re
import threading
import time
import tomllib

import pytest
from helpers import WAIT_TIMEOUT, runner, wait_until

from jetlink.cli.main import app
from live.clihelp import doc, ok


@pytest.fixture(autouse=True)
def no_terminal(monkeypatch):
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)


def jl(*args):
    return runner.invoke(app, list(args), prog_name="jetlink")


def write(tmp_path, text, name="t.toml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def problems_of(res):
    assert res.exit_code == 3, (res.exit_code, res.stdout, res.stderr)
    body = json.loads(res.stdout)
    return body["plan"]["problems"] if "plan" in body else body["problems"]


def two_domains(url):
    return f"""
version = 1
[clusters.west]
server = "{url}"
js_domain = "west"
[clusters.east]
server = "{url}"
js_domain = "east"
"""


OBJECTS = """
[streams.ORDERS_EAST]            # declared before its origin: applied after it
cluster = "east"
mirror = { name = "ORDERS", domain = "west" }

[streams.ARCHIVE]
cluster = "east"
subjects = ["archive.>"]
sources = [{ name = "ORDERS", domain = "west", filter_subject = "orders.eu.>" }]

[streams.ORDERS]
cluster = "west"
subjects = ["orders.>"]
max_age = "30d"
max_msgs_per_subject = 10
allow_direct = true

[kv.CONFIG]
cluster = "west"
history = 5

[kv_mirrors.CONFIG_EAST]
cluster = "east"
origin_bucket = "CONFIG"
domain = "west"
keys = ["services.>"]

[kv_aggregates.SETTINGS]
cluster = "east"
origins = [{ bucket = "CONFIG", domain = "west", keys = ["features.>"] }]
"""


def names(server, domain=None):
    return server.client().stream_names(domain=domain)


# -- create, round trip -------------------------------------------------------------------


def test_create_in_dependency_order_across_domains(live_domains, tmp_path):
    path = write(tmp_path, two_domains(live_domains.url) + OBJECTS)
    assert ok(jl("validate", path, "--live")).stdout == f"{path}: OK\n"
    plan = doc(jl("apply", path, "--dry-run", "-j"))["plan"]
    order = [(c["kind"], c["name"], c["cluster"]) for c in plan["changes"]]
    assert set(order) == {("stream", "ORDERS", "west"), ("kv", "CONFIG", "west"),
                          ("stream", "ORDERS_EAST", "east"), ("stream", "ARCHIVE", "east"),
                          ("kv_mirror", "CONFIG_EAST", "east"),
                          ("kv_aggregate", "SETTINGS", "east")}
    for origin, follower in [("ORDERS", "ORDERS_EAST"), ("ORDERS", "ARCHIVE"),
                             ("CONFIG", "CONFIG_EAST"), ("CONFIG", "SETTINGS")]:
        pos = {name: i for i, (_k, name, _c) in enumerate(order)}
        assert pos[origin] < pos[follower], order
    assert names(live_domains, "west") == [] and names(live_domains, "east") == []  # dry run

    done = doc(jl("apply", path, "-j"))
    assert len(done["result"]["applied"]) == 6 and "failed" not in done["result"]
    assert names(live_domains, "west") == ["KV_CONFIG", "ORDERS"]
    assert names(live_domains, "east") == ["ARCHIVE", "KV_CONFIG_EAST", "KV_SETTINGS",
                                           "ORDERS_EAST"]
    mirror = live_domains.client().stream_info("ORDERS_EAST", domain="east")["config"]
    assert mirror["mirror"]["external"]["api"] == "$JS.west.API"
    # the mirror and the source work: messages published in west reach east
    for i in range(3):
        live_domains.client().js_publish(f"orders.eu.{i}", b"x")
    def counts():
        east = live_domains.client()
        return (east.stream_info("ORDERS_EAST", domain="east")["state"]["messages"],
                east.stream_info("ARCHIVE", domain="east")["state"]["messages"])

    wait_until(lambda: counts() == (3, 3),
               message=lambda: f"ORDERS_EAST and ARCHIVE holding 3 messages ({counts()})")
    again = ok(jl("apply", path))
    assert again.stdout.startswith("No changes: ")


def test_export_apply_round_trip(live_domains, tmp_path):
    url = live_domains.url
    ok(jl("apply", write(tmp_path, two_domains(url) + OBJECTS)))
    # a stream made by another client, with settings of its own: exported as it is
    live_domains.client().stream_create({"name": "OTHER", "subjects": ["other.>"],
                                         "storage": "memory", "max_msgs": 1000,
                                         "description": "made elsewhere"}, domain="west")
    exported = ok(jl("-s", url, "export", "-c", "west", "-c", "east")).stdout
    body = tomllib.loads(exported)
    assert body["clusters"] == {
        "west": {"kind": "nats", "server": url, "js_domain": "west"},
        "east": {"kind": "nats", "server": url, "js_domain": "east"}}
    assert body["streams"]["ORDERS_EAST"]["mirror"] == {"name": "ORDERS", "domain": "west"}
    assert body["streams"]["OTHER"] == {"cluster": "west", "subjects": ["other.>"],
                                        "description": "made elsewhere", "max_msgs": 1000,
                                        "storage": "memory"}
    assert body["kv"]["CONFIG"] == {"cluster": "west", "history": 5}
    assert body["kv_mirrors"]["CONFIG_EAST"]["keys"] == ["services.>"]
    path = write(tmp_path, exported, "exported.toml")
    res = ok(jl("apply", path))
    assert res.stdout.startswith("No changes: "), res.stdout
    assert doc(jl("validate", path, "--live", "-j"))["valid"] is True
    # export --from FILE: the file's bindings, the same objects
    again = ok(jl("export", "--from", path)).stdout
    assert again == exported
    # the server in force alone: its own domain (the one it reports) as one cluster
    west_only = tomllib.loads(ok(jl("-s", url, "export")).stdout)
    assert list(west_only["clusters"]) == ["west"]
    assert set(west_only["streams"]) == {"ORDERS", "OTHER"}
    assert doc(jl("-s", url, "--js-domain", "east", "export", "-j"))["clusters"] == {
        "east": {"kind": "nats", "server": url, "js_domain": "east"}}


def test_cluster_names_other_than_the_domains(live_domains, tmp_path):
    """A file's cluster names its own: `domain = "primary"` in a mirror names cluster
    primary, sent to the server as primary's JetStream domain, read back as primary."""
    url = live_domains.url
    text = f"""
[clusters.primary]
server = "{url}"
js_domain = "west"
description = "the primary region"
[clusters.dr]
server = "{url}"
js_domain = "east"

[streams.ORDERS]
cluster = "primary"
subjects = ["orders.>"]

[streams.ORDERS_DR]
cluster = "dr"
mirror = {{ name = "ORDERS", domain = "primary" }}

[kv_mirrors.CONFIG_DR]
cluster = "dr"
origin_bucket = "CONFIG"
domain = "primary"

[kv.CONFIG]
cluster = "primary"
"""
    path = write(tmp_path, text)
    ok(jl("apply", path))
    server = live_domains.client()
    assert server.stream_info("ORDERS_DR", domain="east")["config"]["mirror"] == {
        "name": "ORDERS", "external": {"api": "$JS.west.API", "deliver": ""}}
    assert server.stream_info("KV_CONFIG_DR", domain="east")["config"]["mirror"]["external"][
        "api"] == "$JS.west.API"
    assert ok(jl("apply", path)).stdout.startswith("No changes: ")
    exported = tomllib.loads(ok(jl("export", "--from", path)).stdout)
    assert exported["streams"]["ORDERS_DR"]["mirror"] == {"name": "ORDERS",
                                                          "domain": "primary"}
    assert exported["kv_mirrors"]["CONFIG_DR"]["domain"] == "primary"
    # a server holds no description: the file's is the cluster's, never a change
    assert exported["clusters"]["primary"]["description"] == "the primary region"
    # a cluster bound without a JetStream domain can not be reached from another cluster
    nodomain = text.replace('js_domain = "west"\n', "", 1)
    problems = problems_of(jl("validate", write(tmp_path, nodomain, "n.toml"), "--live",
                              "-j"))
    assert [(p["object"], p["field"]) for p in problems] == [
        ("stream ORDERS_DR", "mirror.domain"), ("kv_mirror CONFIG_DR", "domain")]
    assert "without a JetStream domain" in problems[0]["description"]


# -- updates ---------------------------------------------------------------------------------


def bound(url, body):
    return f'[clusters.west]\nserver = "{url}"\n\n' + body


STREAMS = """
[streams.A]
cluster = "west"
subjects = ["a.>"]
max_age = "1h"

[streams.B]
cluster = "west"
subjects = ["b.>"]
"""


def test_export_cluster_local_of_a_server_without_a_domain_is_its_own_jetstream(live,
                                                                                tmp_path):
    """Plain export names a server without a JetStream domain's JetStream `local`; `export
    -c local` is that same cluster (it asked $JS.local.API, which no server answers)."""
    ok(jl("apply", write(tmp_path, bound(live.url, STREAMS))))
    plain = tomllib.loads(ok(jl("-s", live.url, "export")).stdout)
    named = tomllib.loads(ok(jl("-s", live.url, "export", "-c", "local")).stdout)
    assert named == plain and sorted(named["streams"]) == ["A", "B"]
    assert list(named["clusters"]) == ["local"]


def test_export_never_writes_a_password_or_token_and_apply_says_where_they_go(live_auth,
                                                                              tmp_path):
    """A server URL's ``user:password@`` (or ``--user``/``--password``) is written as
    ``user`` alone; a token in the URL not at all; a notice says what apply needs again.
    Credentials on the command line are no bound cluster's: refused when the file binds
    every cluster; a bound cluster without them names its table's keys."""
    host = live_auth.url.split("://", 1)[1]
    in_url = f"nats://ops:s3cret@{host}"
    for args in (["-s", in_url], ["-s", live_auth.url, "--user", "ops", "--password", "s3cret"]):
        out = tmp_path / "t.toml"
        res = jl(*args, "export", "-o", str(out))
        assert res.exit_code == 0, res.output
        assert "s3cret" not in out.read_text()
        assert tomllib.loads(out.read_text())["clusters"]["local"] == {
            "kind": "nats", "server": live_auth.url, "user": "ops"}
        assert res.stderr.startswith(
            "jetlink: notice: cluster local: the connection's password is not written "
            '(secrets never are); before jetlink apply of the file, add password = "..." to '
            "[clusters.local] or bind it to a context (context = NAME)\n"), res.stderr
    res = jl("-s", live_auth.url, "--user", "ops", "--password", "s3cret", "apply", str(out),
             "--dry-run")
    assert (res.exit_code, res.stderr) == (2, (
        "jetlink: error: --user, --password are not used for the clusters the file binds to "
        'servers: each takes its connection settings from its [clusters.NAME] table (user = '
        '"...", password = "...", creds = "...", tls_ca = "...", ..., or context = "NAME"); '
        "the file binds every cluster it declares, so leave them out (nothing was done)\n"))
    bare = write(tmp_path, f'version = 1\n[clusters.local]\nserver = "{live_auth.url}"\n',
                 "bare.toml")
    res = jl("apply", bare, "--dry-run")
    assert res.exit_code == 1 and res.stderr.endswith(
        "check the user and password (or token, creds, nkey) keys of [clusters.local] of "
        f"{bare}, or its context = NAME (none is set; the command line's credentials are not "
        "used for a cluster a file binds)\n"), res.stderr
    out.write_text(out.read_text().replace('user = "ops"', 'user = "ops"\npassword = "s3cret"'))
    assert ok(jl("apply", str(out), "--dry-run")).stdout.startswith("No changes")
    # export --from that file (its password key), or one with the secret in its URL or a
    # token: the file's own table copied without it, said as the connection's is
    token_url = write(tmp_path, f'version = 1\n[clusters.local]\nserver = "{in_url}"\n',
                      "inurl.toml")
    for given, left in ((str(out), "password"), (token_url, "password")):
        res = jl("export", "--from", given)
        assert res.exit_code == 0, res.output
        assert "s3cret" not in res.stdout
        assert tomllib.loads(res.stdout)["clusters"]["local"] == {
            "kind": "nats", "server": live_auth.url, "user": "ops"}
        assert res.stderr == (
            f"jetlink: notice: cluster local: the {left} of the file's binding is not written "
            f'(secrets never are); before jetlink apply of the file, add {left} = "..." to '
            "[clusters.local] or bind it to a context (context = NAME)\n"), res.stderr


def test_updates_with_field_differences(live, tmp_path):
    ok(jl("apply", write(tmp_path, bound(live.url, STREAMS))))
    changed = STREAMS.replace('max_age = "1h"', 'max_age = "2h"\ndescription = "alpha"')
    path = write(tmp_path, bound(live.url, changed), "c.toml")
    plan = doc(jl("apply", path, "--dry-run", "-j"))["plan"]
    assert plan["changes"] == [{"action": "update", "kind": "stream", "cluster": "west",
                                "name": "A", "diff": [
                                    {"field": "description", "from": None, "to": "alpha"},
                                    {"field": "max_age", "from": "1h0m0s", "to": "2h0m0s"}]}]
    human = ok(jl("apply", path)).stdout
    assert ("  ~ update stream A in cluster west\n      description: unset -> alpha\n"
            "      max_age: 1h0m0s -> 2h0m0s\n") in human
    assert "Applied: update stream A in cluster west" in human
    cfg = live.client().stream_info("A")["config"]
    assert (cfg["max_age"], cfg["description"]) == (7_200_000_000_000, "alpha")
    assert ok(jl("apply", path)).stdout.startswith("No changes: ")


def test_illegal_update_is_refused_and_nothing_changes(live, tmp_path):
    ok(jl("apply", write(tmp_path, bound(live.url, STREAMS))))
    bad = STREAMS.replace('max_age = "1h"', 'max_age = "3h"\nstorage = "memory"')
    path = write(tmp_path, bound(live.url, bad), "bad.toml")
    for res in (jl("validate", path, "--live", "-j"), jl("apply", path, "-j")):
        problems = problems_of(res)
        assert [(p["object"], p["field"], p["err_code"]) for p in problems] == [
            ("stream A", "storage", 10052)]
        assert problems[0]["description"] == (
            "stream A in cluster west can not be updated: stream configuration update can "
            "not change storage type")
    text = jl("validate", path, "--live")
    assert text.exit_code == 3 and "can not change storage type" in text.stdout
    cfg = live.client().stream_info("A")["config"]
    assert (cfg["storage"], cfg["max_age"]) == ("file", 3_600_000_000_000)  # untouched


def test_stops_at_the_first_refusal_as_the_server_answered(live, tmp_path):
    body = STREAMS + '\n[streams.AR3]\ncluster = "west"\nsubjects = ["r.>"]\nnum_replicas = 3\n'
    res = jl("apply", write(tmp_path, bound(live.url, body)), "-j")
    assert res.exit_code == 1, res.stdout
    result = json.loads(res.stdout)["result"]
    assert [c["name"] for c in result["applied"]] == ["A"]
    assert result["failed"]["name"] == "AR3"
    assert result["failed"]["error"] == {"error": {
        "code": 500, "err_code": 10074,
        "description": "replicas > 1 not supported in non-clustered mode"}}
    assert "uncertain" not in result["failed"]
    assert [c["name"] for c in result["not_applied"]] == ["B"]
    assert names(live) == ["A"]
    human = jl("apply", write(tmp_path, bound(live.url, body)))
    assert human.exit_code == 1
    # the error as the error line words it: the server's code too
    assert "Failed: create stream AR3 in cluster west: replicas > 1 not supported in " \
        "non-clustered mode (10074)" in human.stdout
    assert "Not applied: create stream B in cluster west" in human.stdout
    assert "Partly applied: 0 applied, 1 failed, 1 not tried." in human.stderr


# -- prune -----------------------------------------------------------------------------------


def test_prune_only_in_the_files_bound_clusters(live_domains, tmp_path):
    url = live_domains.url
    only_west = f'[clusters.west]\nserver = "{url}"\njs_domain = "west"\n' + STREAMS
    ok(jl("apply", write(tmp_path, only_west)))
    live_domains.client().stream_create({"name": "EASTSIDE", "subjects": ["e.>"]},
                                        domain="east")
    smaller = only_west.replace('[streams.B]\ncluster = "west"\nsubjects = ["b.>"]\n', "")
    path = write(tmp_path, smaller, "s.toml")
    plan = doc(jl("apply", path, "--prune", "--dry-run", "-j"))["plan"]
    assert plan["changes"] == [{"action": "delete", "kind": "stream", "cluster": "west",
                                "name": "B"}]
    refused = jl("apply", path, "--prune")
    assert refused.exit_code == 2 and "pass -f/--force to prune" in refused.stderr
    assert names(live_domains, "west") == ["A", "B"]
    ok(jl("apply", path))  # without --prune B stays
    assert names(live_domains, "west") == ["A", "B"]
    done = doc(jl("apply", path, "--prune", "-f", "-j"))
    assert [(c["action"], c["name"]) for c in done["result"]["applied"]] == [("delete", "B")]
    assert names(live_domains, "west") == ["A"]
    assert names(live_domains, "east") == ["EASTSIDE"]  # a cluster the file does not bind


# -- what the servers hold -------------------------------------------------------------------


def test_subjects_overlapping_a_stream_on_the_server(live, tmp_path):
    live.client().stream_create({"name": "THEIRS", "subjects": ["a.b.>"]})
    path = write(tmp_path, bound(live.url, STREAMS))
    assert ok(jl("validate", path)).stdout == f"{path}: OK\n"  # the file alone is fine
    for res in (jl("validate", path, "--live", "-j"), jl("apply", path, "-j")):
        problems = problems_of(res)
        assert [(p["object"], p["field"], p["err_code"]) for p in problems] == [
            ("stream A", "subjects", 10065)]
        assert problems[0]["description"].startswith(
            'subjects overlap with an existing stream: "a.>" overlaps "a.b.>" of stream THEIRS')
    assert names(live) == ["THEIRS"]


def test_missing_origin_neither_in_the_file_nor_on_the_server(live_domains, tmp_path):
    url = live_domains.url
    east_only = f"""
[clusters.east]
server = "{url}"
js_domain = "east"

[streams.COPY]
cluster = "east"
mirror = {{ name = "ORDERS", domain = "west" }}
"""
    path = write(tmp_path, east_only)

    def warnings_of(res):
        assert res.exit_code == 0, (res.exit_code, res.stdout, res.stderr)
        body = json.loads(res.stdout)
        return (body["plan"] if "plan" in body else body)["warnings"]

    # the server accepts a mirror whose origin is not there (it waits): a warning, as
    # `stream add` gives, not a refusal
    checked = warnings_of(jl("validate", path, "--live", "-j"))
    assert [(w["object"], w["field"], w["err_code"]) for w in checked] == [
        ("stream COPY", "mirror.name", 10059)]
    assert 'mirror origin "ORDERS" does not exist in cluster "west"' in checked[0]["description"]
    assert jl("validate", path, "--live", "--strict").exit_code == 3
    applied = warnings_of(jl("apply", path, "-j"))
    assert [w["description"] for w in applied] == [checked[0]["description"]]
    assert names(live_domains, "east") == ["COPY"]
    # on the server (in a domain the file does not bind): found there, no warning
    live_domains.client().stream_create({"name": "ORDERS", "subjects": ["orders.>"]},
                                        domain="west")
    assert warnings_of(jl("validate", path, "--live", "-j")) == []
    # and in the same cluster: a source of a stream only the server holds is fine
    live_domains.client().stream_create({"name": "LOCAL", "subjects": ["l.>"]}, domain="east")
    more = east_only + ('\n[streams.AGG]\ncluster = "east"\nsubjects = ["agg.>"]\n'
                        'sources = [{ name = "LOCAL" }, { name = "NOPE" }]\n')
    found = warnings_of(jl("validate", write(tmp_path, more, "m.toml"), "--live", "-j"))
    assert [(w["object"], w["field"], w["err_code"]) for w in found] == [
        ("stream AGG", "sources[1].name", 10059)]


def test_a_sealed_stream_is_created_then_sealed_on_the_server(live, tmp_path):
    """The server refuses a sealed create: apply creates the stream, then seals it with an
    update, as on the engine; a KV mirror whose origin bucket is nowhere refuses the plan
    before anything (exit 3), as kv add --mirror does."""
    body = '[streams.SEALED_T]\ncluster = "west"\nsubjects = ["sealed-t.>"]\nsealed = true\n'
    path = write(tmp_path, bound(live.url, body))
    ok(jl("apply", path))
    cfg = live.client().stream_info("SEALED_T")["config"]
    assert cfg["sealed"] is True
    assert ok(jl("apply", path)).stdout.startswith("No changes: ")
    kvm = write(tmp_path, bound(live.url, '[kv_mirrors.KVM_T]\ncluster = "west"\n'
                                          'origin_bucket = "NOPE_T"\n'), "k.toml")
    res = jl("apply", kvm, "-j")
    assert res.exit_code == 3, (res.stdout, res.stderr)
    (problem,) = json.loads(res.stdout)["plan"]["problems"]
    assert (problem["object"], problem["field"], problem["err_code"]) == (
        "kv_mirror KVM_T", "origin_bucket", 10059)
    assert "KV_KVM_T" not in names(live)
    live.client().stream_delete("SEALED_T")


def test_a_server_that_does_not_answer_is_one_line(tmp_path):
    path = write(tmp_path, bound("nats://127.0.0.1:1", STREAMS))
    for args in (["validate", path, "--live"], ["apply", path], ["export", "--from", path]):
        res = jl(*args)
        assert res.exit_code == 1, (args, res.stdout, res.stderr)
        assert "Traceback" not in res.stderr + res.stdout
        lines = res.stderr.strip().splitlines()
        assert lines == ["jetlink: error: cluster west: connecting: could not connect to "
                         "nats://127.0.0.1:1: connection refused"], lines


def test_binding_problems_are_listed_before_connecting(tmp_path):
    text = """
[clusters.west]
server = "http://nowhere"
[clusters.east]
server = "nats://127.0.0.1:1"
[clusters.kx]
kind = "kafka"
[topics.t]
cluster = "kx"
[streams.S]
cluster = "east"
subjects = ["s.>"]
"""
    problems = problems_of(jl("apply", write(tmp_path, text), "-j"))
    assert [(p["object"], p["field"]) for p in problems] == [
        ("cluster west", "server"), ("cluster kx", "kind")]
    assert "invalid server URL 'http://nowhere'" in problems[0]["description"]


# -- a server killed in the middle -----------------------------------------------------------


def test_server_killed_mid_apply_is_a_partial_report(nats_fresh, tmp_path):
    body = "".join(f'\n[streams.S{i:04d}]\ncluster = "west"\nsubjects = ["s{i:04d}.>"]\n'
                   for i in range(400))
    path = write(tmp_path, bound(nats_fresh.url, body))

    applied = threading.Event()

    def killer():  # until the apply made 20 streams (or ended: the test then fails)
        while not applied.is_set():
            try:
                if nats_fresh.monitor("/jsz").get("streams", 0) >= 20:
                    nats_fresh.kill()
                    return
            except Exception:  # noqa: BLE001 - the monitor port is not up yet
                pass
            time.sleep(0.005)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    res = jl("apply", path, "-j")
    applied.set()
    thread.join(WAIT_TIMEOUT)
    assert res.exit_code == 1, (res.stdout, res.stderr)
    assert "Traceback" not in res.stdout + res.stderr
    result = json.loads(res.stdout)["result"]
    applied, failed, rest = result["applied"], result["failed"], result["not_applied"]
    assert len(applied) >= 20 and rest, (len(applied), len(rest))
    assert len(applied) + 1 + len(rest) == 400
    assert failed["uncertain"] is True
    assert re.search(r"lost the connection|timed out|could not connect|connection closed",
                     failed["error"]["error"]["description"]), failed
    # what is left, once the server is back: the plan of the same file
    # a stream killed mid-create cannot be recovered: /healthz stays 503 for it
    nats_fresh.restart(healthz="/healthz?js-enabled-only=true")
    res = jl("apply", path, "--dry-run", "-j")
    left = json.loads(res.stdout)["plan"]["changes"]
    assert len(left) in (len(rest), len(rest) + 1)  # the uncertain one made or not


def test_server_killed_mid_apply_human_report(nats_fresh, tmp_path):
    body = "".join(f'\n[streams.S{i:04d}]\ncluster = "west"\nsubjects = ["s{i:04d}.>"]\n'
                   for i in range(400))
    path = write(tmp_path, bound(nats_fresh.url, body))

    applied = threading.Event()

    def killer():  # until the apply made 10 streams (or ended: the test then fails)
        while not applied.is_set():
            try:
                if nats_fresh.monitor("/jsz").get("streams", 0) >= 10:
                    nats_fresh.kill()
                    return
            except Exception:  # noqa: BLE001
                pass
            time.sleep(0.005)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    res = jl("apply", path)
    applied.set()
    thread.join(WAIT_TIMEOUT)
    assert res.exit_code == 1
    assert "Traceback" not in res.stdout + res.stderr
    assert re.search(r"^Failed: create stream S\d{4} in cluster west: ", res.stdout, re.M)
    assert "Not applied: create stream S0399 in cluster west" in res.stdout
    assert re.search(r"Partly applied: \d+ applied, 1 failed, \d+ not tried\. The connection "
                     r"failed during that change: the server may or may not have made it\. "
                     r"Run the same apply again", res.stderr), res.stderr


# -- the server in force, contexts -------------------------------------------------------------


def test_the_server_in_force_takes_the_unbound_clusters(live_domains, tmp_path):
    """`jetlink -s URL apply FILE` of a file binding nothing: any cluster NAME is the
    JetStream domain NAME through that server; `local` (objects without a cluster) is the
    server's own JetStream (its --js-domain)."""
    url = live_domains.url
    text = """
[streams.THERE]                  # declared first: made after its origin
cluster = "east"
mirror = { name = "HERE", domain = "west" }

[streams.HERE]
cluster = "west"
subjects = ["here.>"]
"""
    path = write(tmp_path, text)
    done = doc(jl("-s", url, "apply", path, "-j"))
    assert [c["name"] for c in done["result"]["applied"]] == ["HERE", "THERE"]
    assert names(live_domains, "west") == ["HERE"] and names(live_domains, "east") == ["THERE"]
    assert ok(jl("-s", url, "apply", path)).stdout.startswith("No changes: ")
    assert ok(jl("-s", url, "validate", path, "--live")).stdout == f"{path}: OK\n"
    local = write(tmp_path, '[streams.L]\nsubjects = ["l.>"]\n', "local.toml")
    ok(jl("-s", url, "--js-domain", "east", "apply", local))
    assert names(live_domains, "east") == ["L", "THERE"]
    # a file that binds nothing and no server in force: --live has nothing to check against
    res = jl("validate", local, "--live")
    assert res.exit_code == 2 and "--live needs a file whose clusters are bound" in res.stderr


def test_context_bindings(live, tmp_path, monkeypatch):
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    ok(jl("context", "add", "prod", "--server", live.url))
    nats_dir = config / "nats" / "context"
    nats_dir.mkdir(parents=True)
    (nats_dir / "natsprod.json").write_text(json.dumps({"url": live.url}))
    text = STREAMS.replace('cluster = "west"', 'cluster = "{c}"')
    for ctx_name in ("prod", "natsprod"):
        body = f'[clusters.{ctx_name}]\ncontext = "{ctx_name}"\n' + text.format(c=ctx_name)
        path = write(tmp_path, body, f"{ctx_name}.toml")
        assert doc(jl("validate", path, "--live", "-j"))["valid"] is True
    ok(jl("apply", path))
    assert names(live) == ["A", "B"]
    exported = tomllib.loads(ok(jl("export", "--from", path)).stdout)
    assert exported["clusters"] == {"natsprod": {"kind": "nats", "context": "natsprod"}}
    missing = problems_of(jl("apply", write(tmp_path, '[clusters.x]\ncontext = "nope"\n',
                                            "x.toml"), "-j"))
    assert [(p["object"], p["field"]) for p in missing] == [("cluster x", "context")]
    assert "no such context: neither a jetlink context" in missing[0]["description"]
    # natscli's variables in the environment never move a bound cluster: its file says
    # (a server in force takes only the clusters a file does not bind)
    monkeypatch.setenv("NATS_URL", "nats://127.0.0.1:1")
    monkeypatch.setenv("NATS_USER", "nobody")
    assert ok(jl("apply", path, "--dry-run")).stdout.startswith("No changes: ")


# -- 1,000 streams ---------------------------------------------------------------------------


def test_thousand_streams_timing(live, tmp_path, capsys):
    body = "".join(f'\n[streams.S{i:04d}]\ncluster = "west"\nsubjects = ["s{i:04d}.>"]\n'
                   for i in range(1000))
    path = write(tmp_path, bound(live.url, body))
    t0 = time.perf_counter()
    done = doc(jl("apply", path, "-j"))
    seconds = time.perf_counter() - t0
    assert len(done["result"]["applied"]) == 1000
    assert len(names(live)) == 1000
    t0 = time.perf_counter()
    assert ok(jl("apply", path)).stdout.startswith("No changes: ")
    again = time.perf_counter() - t0
    with capsys.disabled():  # shown, never asserted: the machine may be busy
        print(f"\napply of 1,000 streams to a live server: {seconds:.2f}s; again, no "
              f"changes: {again:.2f}s")


def test_an_update_removing_what_the_server_stores_needs_force(live, tmp_path):
    """On a live server too, an update whose limits remove stored messages (the server's
    state read through the JetStream API, core/removal.py) is shown in the plan and needs
    -f without a terminal (exit 2, the server's stream untouched)."""
    ok(jl("apply", write(tmp_path, bound(live.url, STREAMS))))
    nc = live.client()
    for i in range(5):
        nc.js_publish(f"b.{i}", b"x")
    tight = STREAMS.replace('subjects = ["b.>"]', 'subjects = ["b.>"]\nmax_msgs = 2')
    path = write(tmp_path, bound(live.url, tight), "tight.toml")
    plan = doc(jl("apply", path, "--dry-run", "-j"))["plan"]
    assert [c.get("removes") for c in plan["changes"]] == ["max_msgs 2 < 5 stored"]
    res = jl("apply", path)
    assert res.exit_code == 2, (res.stdout, res.stderr)
    assert nc.stream_info("B")["state"]["messages"] == 5
    ok(jl("apply", path, "-f"))
    assert nc.stream_info("B")["state"]["messages"] == 2


def test_two_clusters_reaching_one_jetstream_are_refused_before_anything(live, live_domains,
                                                                       tmp_path):
    """Two clusters bound to one JetStream by two spellings of its URL (127.0.0.1 and
    localhost), or to one domain through the hub's prefix and on the leaf itself: a plan
    over both would take its streams for two clusters' (--prune deleting a stream the file
    declares in the other). Refused (exit 3), nothing changed."""
    port = live.url.rsplit(":", 1)[1]
    same = (f'version = 1\n[clusters.a]\nserver = "{live.url}"\n[clusters.b]\nserver = '
            f'"nats://localhost:{port}"\n[streams.KEEP]\ncluster = "a"\nsubjects = '
            '["keep.>"]\n')
    path = write(tmp_path, same, "same.toml")
    for args in (["--dry-run"], ["--prune", "-f"], []):
        [p] = problems_of(jl("apply", path, *args, "-j"))
        assert (p["object"], p["field"]) == ("cluster b", "server"), p
        assert p["description"].startswith(
            f'cluster "b" (nats://localhost:{port}) reaches the same JetStream as cluster '
            f'"a" ({live.url}): server '), p
    assert "KEEP" not in names(live)
    leaf = live_domains.leaf.url
    domains = (f'version = 1\n[clusters.east]\nserver = "{live_domains.url}"\njs_domain = '
               f'"east"\n[clusters.leaf]\nserver = "{leaf}"\n')
    [p] = problems_of(jl("apply", write(tmp_path, domains, "dom.toml"), "--dry-run", "-j"))
    assert (p["object"], p["field"]) == ("cluster leaf", "js_domain"), p
    assert "JetStream domain east" in p["description"], p


def test_a_js_domain_of_the_file_that_does_not_answer_is_named_as_the_file_gives_it(
        live_domains, tmp_path):
    """No --js-domain was given: the refusal names the file's js_domain and its table."""
    text = (f'version = 1\n[clusters.west]\nserver = "{live_domains.url}"\njs_domain = '
            '"wset"\n[streams.A]\ncluster = "west"\nsubjects = ["a.>"]\n')
    path = write(tmp_path, text)
    res = jl("apply", path)
    assert res.exit_code == 1, (res.stdout, res.stderr)
    assert (f"JetStream domain wset does not answer on {live_domains.url}: check --js-domain "
            f"(from js_domain in [clusters.west] of {path}) (no responders)") in res.stderr, \
        res.stderr
