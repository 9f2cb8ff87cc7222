"""``jetlink links create|ls|describe|alter|delete`` through the CLI (exact output, JSON and
exit codes)."""

from __future__ import annotations

import json

import pytest
from helpers import doc, ok

from jetlink.core.kafka.links import LinkHooks

ALL_GROUPS = '{"groupFilters":[{"name":"*","patternType":"LITERAL","filterType":"INCLUDE"}]}'
ALL_TOPICS = '{"topicFilters":[{"name":"*","patternType":"LITERAL","filterType":"INCLUDE"}]}'


@pytest.fixture
def jl(jl, cli_clock):
    ok(jl("cluster", "add", "east", "--kind", "kafka"))
    return jl


def link_id(jl, name="L", *args):
    return doc(jl(*args, "links", "describe", name, "-j"))["cluster_link_id"]


def tasks(**states):
    names = ("AclSync", "AutoCreateMirror", "ConsumerOffsetSync", "TopicConfigsSync")
    return [{"task_name": n, "state": states.get(n, "NOT_CONFIGURED"), "errors": []}
            for n in names]


# -- create -----------------------------------------------------------------------------------


def test_create_prints_kafka_cluster_links_line(jl):
    result = ok(jl("links", "create", "L", "--source-cluster", "east"))
    assert result.stdout == "Cluster link 'L' creation successfully completed.\n"
    assert result.stderr == ""


def test_create_json_is_rest_link_data(jl):
    got = doc(jl("links", "create", "L", "--source-cluster", "east", "-j",
                 "-c", "consumer.offset.sync.enable=true", "-c",
                 f"consumer.offset.group.filters={ALL_GROUPS}"))
    assert len(got.pop("cluster_link_id")) == 22
    assert got == {
        "link_name": "L",
        "source_cluster_id": "east",
        "destination_cluster_id": "local",
        "topic_names": [],
        "link_state": "ACTIVE",
        "link_error": "NO_ERROR",
        "link_error_message": None,
        "tasks": tasks(ConsumerOffsetSync="ACTIVE", TopicConfigsSync="ACTIVE"),
    }


def test_config_takes_comma_separated_pairs_as_confluents_does(jl):
    """``--config a=x,b=y`` is two configs (a comma starts a pair when ``key=`` follows);
    a value's own commas stay (a JSON filter, a list)."""
    ok(jl("links", "create", "L", "--source-cluster", "east",
          "--config", "sasl.mechanism=PLAIN,security.protocol=SASL_SSL,",
          "--config", f"consumer.offset.sync.enable=true, consumer.offset.group.filters="
                      f"{ALL_GROUPS}"))
    got = {c["name"]: c["value"] for c in doc(jl("links", "describe", "L", "-j"))["configs"]}
    assert (got["sasl.mechanism"], got["security.protocol"]) == ("PLAIN", "SASL_SSL")
    assert json.loads(got["consumer.offset.group.filters"]) == json.loads(ALL_GROUPS)
    ok(jl("links", "alter", "L", "--config", "acl.sync.ms=7000,topic.config.sync.ms=9000"))
    got = {c["name"]: c["value"] for c in doc(jl("links", "describe", "L", "-j"))["configs"]}
    assert (got["acl.sync.ms"], got["topic.config.sync.ms"]) == ("7000", "9000")


def test_ls_of_one_link(jl):
    """kafka-cluster-links --list --link L: that link's line alone (and its error when it
    does not exist)."""
    ok(jl("links", "create", "L", "--source-cluster", "east"))
    ok(jl("links", "create", "M", "--source-cluster", "east"))
    assert [x["link_name"] for x in doc(jl("links", "ls", "-j"))] == ["L", "M"]
    assert [x["link_name"] for x in doc(jl("links", "ls", "--link", "M", "-j"))] == ["M"]
    line = ok(jl("kafka-cluster-links", "--list", "--link", "M")).stdout
    assert line.startswith("Link name: 'M'") and line.count("\n") == 1
    missing = jl("links", "ls", "--link", "N")
    assert (missing.exit_code, missing.stderr) == (
        1, "jetlink: error: Cluster link 'N' not found (CLUSTER_LINK_NOT_FOUND 10000)\n")


def test_validate_only_creates_nothing(jl):
    result = ok(jl("links", "create", "L", "--source-cluster", "east", "--validate-only"))
    assert result.stdout == "Cluster link 'L' creation successfully validated.\n"
    assert jl("links", "ls").stderr == "No cluster links found.\n"
    assert doc(jl("links", "ls", "-j")) == []
    # the link validated has no id yet (as REST's validate_only shows it): not a random one
    # the link, once created, would not get
    got = doc(jl("links", "create", "L", "--source-cluster", "east", "--validate-only", "-j"))
    assert got["cluster_link_id"] == ""


def test_a_validate_only_or_dry_run_on_the_default_cluster_creates_no_cluster(jl):
    """The default cluster does not exist yet: a request that changes nothing must not
    make it (nor run a replication step that would write another cluster)."""
    from helpers import data_dir_bytes

    assert not (jl.data / "local.db").exists()
    before = data_dir_bytes(jl.data)
    ok(jl("links", "create", "X", "--source-cluster", "east", "--validate-only"))
    assert jl("mirrors", "promote", "orders", "--link", "X", "--dry-run").exit_code == 1
    assert data_dir_bytes(jl.data) == before
    assert not (jl.data / "local.db").exists()


def test_create_from_files(jl):
    props = jl.tmp / "link.properties"
    props.write_text("# the link\nconsumer.offset.sync.enable=true\n"
                     "consumer.offset.sync.ms = 1000\n"
                     "auto.create.mirror.topics.enable=true\ncluster.link.prefix=east.\n")
    groups = jl.tmp / "groups.json"
    groups.write_text('{"groupFilters": [{"name": "app", "patternType": "PREFIXED"}]}')
    topics = jl.tmp / "topics.json"
    topics.write_text('{"topicFilters": [{"name": "*", "patternType": "LITERAL"}, '
                      '{"name": "secret", "patternType": "PREFIXED", "filterType": "EXCLUDE"}]}')
    ok(jl("links", "create", "L", "--source-cluster", "east", "--config-file", str(props),
          "--consumer-group-filters-json-file", str(groups), "--topic-filters-json-file",
          str(topics), "-c", "consumer.offset.sync.ms=2000"))
    configs = {e["name"]: e["value"] for e in doc(jl("links", "describe", "L", "-j"))["configs"]
               if not e["is_default"]}
    assert configs == {
        "auto.create.mirror.topics.enable": "true",
        "auto.create.mirror.topics.filters":
            '{"topicFilters":[{"name":"*","patternType":"LITERAL","filterType":"INCLUDE"},'
            '{"name":"secret","patternType":"PREFIXED","filterType":"EXCLUDE"}]}',
        "cluster.link.prefix": "east.",
        "consumer.offset.group.filters":
            '{"groupFilters":[{"name":"app","patternType":"PREFIXED","filterType":"INCLUDE"}]}',
        "consumer.offset.sync.enable": "true",
        "consumer.offset.sync.ms": "2000",  # --config overrides the file
    }


USAGE_ERRORS = [
    (["-c", "novalue"], "jetlink: error: --config 'novalue': expected KEY=VALUE\n"),
    # an empty filters file would unset the filters, saying nothing
    (["--consumer-group-filters-json-file", "{empty}"],
     "jetlink: error: --consumer-group-filters-json-file '{empty}': the file is empty: it "
     "holds the JSON document of consumer.offset.group.filters\n"),
    (["--acl-filters-json-file", "{empty}", "--validate-only"],
     "jetlink: error: --acl-filters-json-file '{empty}': the file is empty: it holds the "
     "JSON document of acl.filters\n"),
    (["-c", f"consumer.offset.group.filters={ALL_GROUPS}", "--consumer-group-filters-json-file",
      "{groups}"],
     "jetlink: error: consumer.offset.group.filters is given twice: by "
     "--consumer-group-filters-json-file and by --config / --config-file\n"),
]


@pytest.mark.parametrize(("args", "stderr"), USAGE_ERRORS)
def test_create_usage_errors(jl, args, stderr):
    groups = jl.tmp / "groups.json"
    groups.write_text(ALL_GROUPS)
    empty = jl.tmp / "empty.json"
    empty.write_text(" \n")
    args = [a.replace("{groups}", str(groups)).replace("{empty}", str(empty)) for a in args]
    from helpers import data_dir_bytes

    before = data_dir_bytes(jl.data)
    result = jl("links", "create", "L", "--source-cluster", "east", *args)
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", stderr.replace("{empty}", str(empty)))
    assert data_dir_bytes(jl.data) == before


@pytest.mark.parametrize("source", ["a b", "", "x" * 65])
@pytest.mark.parametrize("words", [["links", "create", "L"],
                                   ["kafka-cluster-links", "--create", "--link", "L"]])
def test_a_source_cluster_that_is_no_cluster_name_is_a_usage_error(jl, words, source):
    """No cluster could have that name: a usage error naming the rule (exit 2, as for
    ``cluster add``), not a cluster that "does not exist"; nothing is written."""
    from helpers import data_dir_bytes

    before = data_dir_bytes(jl.data)
    for extra in ([], ["--validate-only"]):
        result = jl(*words, "--source-cluster", source, *extra)
        assert (result.exit_code, result.stdout) == (2, ""), result.stderr
        last = result.stderr.splitlines()[-1]
        if words[0] == "kafka-cluster-links" and not source:  # (no source named at all)
            assert last.startswith("jetlink: error: --create needs --cluster-id NAME")
        else:
            assert last == (f"jetlink: error: invalid cluster name {source!r}: use 1 to 64 "
                            "letters, digits, '_' or '-'")
    assert data_dir_bytes(jl.data) == before


REFUSALS = [
    (["-c", "foo=1"], "INVALID_CONFIG", 40,
     "Unknown cluster link configuration 'foo': known configurations: acl.filters, "
     "acl.sync.enable, acl.sync.ms, auto.create.mirror.topics.enable, "
     "auto.create.mirror.topics.filters, cluster.link.paused, cluster.link.prefix, "
     "cluster.link.retry.timeout.ms, connection.mode, consumer.offset.group.filters, "
     "consumer.offset.sync.enable, consumer.offset.sync.ms, link.mode, "
     "mirror.start.offset.spec, topic.config.sync.ms"),
    (["-c", "cluster.link.prefix=thirteen-char"], "INVALID_CONFIG", 40,
     "Invalid value thirteen-char for configuration cluster.link.prefix: the prefix must be at "
     "most 12 characters"),
    (["-c", "consumer.offset.sync.enable=true"], "INVALID_CONFIG", 40,
     "Consumer offset sync is enabled but consumer.offset.group.filters is not set. Please set "
     "consumer.offset.group.filters to proceed with consumer offset sync."),
    (["-c", 'auto.create.mirror.topics.filters={"topicFilters":[{"name":"a"}]}'],
     "INVALID_CONFIG", 40,
     "Invalid value for configuration auto.create.mirror.topics.filters: "
     "topicFilters[0].patternType: required: LITERAL or PREFIXED"),
    # nested deeper than Python's JSON reader goes: refused as any document that is not
    # JSON, naming the configuration; an unknown key is quoted clipped
    (["-c", "consumer.offset.group.filters=" + "[" * 5000 + "]" * 5000], "INVALID_CONFIG", 40,
     "Invalid value for configuration consumer.offset.group.filters: not a JSON document: "
     "nested too deeply (more levels than a configuration ever has)"),
    (["-c", "x" * 5000 + "=1"], "INVALID_CONFIG", 40,
     "Unknown cluster link configuration '" + "x" * 40 + "... (5,000 characters)': known "
     "configurations: acl.filters, acl.sync.enable, acl.sync.ms, "
     "auto.create.mirror.topics.enable, auto.create.mirror.topics.filters, "
     "cluster.link.paused, cluster.link.prefix, cluster.link.retry.timeout.ms, "
     "connection.mode, consumer.offset.group.filters, consumer.offset.sync.enable, "
     "consumer.offset.sync.ms, link.mode, mirror.start.offset.spec, topic.config.sync.ms"),
]


@pytest.mark.parametrize(("args", "name", "code", "message"), REFUSALS)
def test_create_refusals(jl, args, name, code, message):
    result = jl("links", "create", "L", "--source-cluster", "east", *args)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == f"jetlink: error: {message} ({name} {code})\n"
    result = jl("links", "create", "L", "--source-cluster", "east", *args, "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "error": {"error_code": code, "error_name": name, "message": message}}
    assert jl("links", "ls").stderr == "No cluster links found.\n"


def test_create_twice_and_to_self_and_missing_source(jl):
    ok(jl("links", "create", "L", "--source-cluster", "east"))
    result = jl("links", "create", "L", "--source-cluster", "east")
    assert (result.exit_code, result.stderr) == (
        1, "jetlink: error: Cluster link 'L' already exists (CLUSTER_LINK_EXISTS 10001)\n")
    result = jl("links", "create", "M", "--source-cluster", "local")
    assert (result.exit_code, result.stderr) == (
        1, "jetlink: error: Requested cluster ID matches local cluster ID 'local' - cannot "
           "create cluster link to self (INVALID_REQUEST 42)\n")
    result = jl("links", "create", "M", "--source-cluster", "north")
    assert result.exit_code == 1
    assert "source cluster 'north' does not exist" in result.stderr
    result = jl("links", "create", "bad/name", "--source-cluster", "east")
    assert (result.exit_code, result.stderr) == (
        1, "jetlink: error: Link name 'bad/name' is illegal, valid characters: [a-zA-Z0-9._-] "
           "(INVALID_CLUSTER_LINK 19000)\n")


def test_source_mode_link_warns(jl):
    result = ok(jl("links", "create", "S", "--source-cluster", "east", "-c", "link.mode=SOURCE"))
    assert result.stdout == "Cluster link 'S' creation successfully completed.\n"
    assert result.stderr == (
        "jetlink: warning: link.mode=SOURCE: jetlink implements destination links only "
        "(link.mode=DESTINATION); this link copies nothing and mirror topics cannot be created "
        "on it\n")
    assert jl("links", "create", "T", "--source-cluster", "east", "-c", "link.mode=SOURCE",
              "-j").stderr == ""


def test_link_on_another_cluster(jl):
    ok(jl("cluster", "add", "west", "--kind", "kafka"))
    ok(jl("--cluster", "west", "links", "create", "L", "--source-cluster", "east"))
    assert jl("links", "ls").stderr == "No cluster links found.\n"
    got = doc(jl("--cluster", "west", "links", "ls", "-j"))
    assert [(d["link_name"], d["destination_cluster_id"]) for d in got] == [("L", "west")]
    result = jl("--cluster", "nowhere", "links", "ls")
    assert (result.exit_code, result.stderr) == (1, "jetlink: error: cluster nowhere not found\n")


# -- ls / describe ----------------------------------------------------------------------------


def test_ls_lines(jl):
    ok(jl("links", "create", "B", "--source-cluster", "east"))
    ok(jl("links", "create", "A", "--source-cluster", "east"))
    a, b = link_id(jl, "A"), link_id(jl, "B")
    line = ("Link name: '{n}', link ID: '{i}', remote cluster ID: 'east', local cluster ID: "
            "'local', remote cluster available: '{up}', link state: '{s}'")
    assert jl("links", "ls").stdout == (
        line.format(n="A", i=a, up="true", s="ACTIVE") + "\n"
        + line.format(n="B", i=b, up="true", s="ACTIVE") + "\n")
    assert jl("links", "ls", "--include-topics").stdout == (
        line.format(n="A", i=a, up="true", s="ACTIVE") + ", topics: []\n"
        + line.format(n="B", i=b, up="true", s="ACTIVE") + ", topics: []\n")
    ok(jl("cluster", "down", "east"))
    assert jl("links", "ls").stdout.splitlines()[0] == line.format(
        n="A", i=a, up="false", s="UNAVAILABLE")
    assert [d["link_name"] for d in doc(jl("links", "ls", "-j"))] == ["A", "B"]


def test_ls_include_topics_names_mirror_topics(jl, monkeypatch):
    monkeypatch.setattr(
        "jetlink.core.kafka.links._default_hooks",
        lambda dd, cl, clock: LinkHooks(mirror_topics=lambda link: ["orders", "clicks"]))
    ok(jl("links", "create", "L", "--source-cluster", "east"))
    out = jl("links", "ls", "--include-topics").stdout
    assert out.endswith("link state: 'ACTIVE', topics: [clicks, orders]\n")
    assert doc(jl("links", "ls", "-j"))[0]["topic_names"] == ["clicks", "orders"]


def test_describe(jl):
    ok(jl("links", "create", "L", "--source-cluster", "east", "-c",
          "consumer.offset.sync.enable=true", "-c", f"consumer.offset.group.filters={ALL_GROUPS}"))
    lid = link_id(jl)
    out = ok(jl("links", "describe", "L")).stdout.splitlines()
    assert out[:3] == [
        f"Link name: 'L', link ID: '{lid}', remote cluster ID: 'east', local cluster ID: "
        "'local', link mode: 'DESTINATION', connection mode: 'OUTBOUND', link state: 'ACTIVE', "
        "topics: []",
        f"Configs: consumer.offset.group.filters={ALL_GROUPS},consumer.offset.sync.enable=true",
        "",
    ]
    text = "\n".join(out)
    assert "Configurations" in text and "Tasks" in text
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in out if line.startswith("│")]
    assert ["consumer.offset.sync.enable", "true", "no"] in rows
    assert ["consumer.offset.sync.ms", "30000", "yes"] in rows
    assert ["cluster.link.prefix", "", "yes"] in rows
    assert ["ConsumerOffsetSync", "ACTIVE", ""] in rows
    assert ["AutoCreateMirror", "NOT_CONFIGURED", ""] in rows
    assert sum(1 for r in rows if r and r[0] in (
        "AclSync", "AutoCreateMirror", "ConsumerOffsetSync", "TopicConfigsSync")) == 4
    assert sum(1 for r in rows if r and "." in r[0]) == 15  # every configuration


def test_describe_shows_the_link_error(jl):
    ok(jl("links", "create", "L", "--source-cluster", "east"))
    ok(jl("cluster", "down", "east"))
    out = jl("links", "describe", "L").stdout.splitlines()
    assert "link state: 'UNAVAILABLE'" in out[0]
    assert out[2] == ("Link error: SOURCE_CLUSTER_UNAVAILABLE: Source cluster 'east' is "
                      "unreachable (jetlink cluster down); the link resumes after jetlink "
                      "cluster up east.")
    assert any('SOURCE_CLUSTER_UNAVAILABLE: "Source cluster' in line for line in out)
    got = doc(jl("links", "describe", "L", "-j"))
    assert (got["link_state"], got["link_error"]) == ("UNAVAILABLE", "SOURCE_CLUSTER_UNAVAILABLE")
    assert got["tasks"][3]["errors"][0]["error_code"] == "SOURCE_CLUSTER_UNAVAILABLE"
    assert len(got["configs"]) == 15


def test_a_damaged_source_cluster_is_an_unavailable_link(jl):
    """The source cluster's database damaged: like a source that does not answer, the link
    is UNAVAILABLE and its mirror topics SOURCE_UNAVAILABLE; links ls and mirrors ls still
    list them (they refused everything with the source's error)."""
    ok(jl("--cluster", "east", "topic", "create", "orders"))
    ok(jl("links", "create", "L", "--source-cluster", "east"))
    ok(jl("mirrors", "create", "orders", "--link", "L"))
    (jl.data / "east.db").write_bytes(b"\0" * 5000)
    got = doc(jl("links", "describe", "L", "-j"))
    assert (got["link_state"], got["link_error"], got["link_error_message"]) == (
        "UNAVAILABLE", "SOURCE_CLUSTER_UNAVAILABLE", "Source cluster 'east' is unreachable: "
        "cluster east cannot be used (its database is damaged: see jetlink cluster check).")
    assert "link state: 'UNAVAILABLE'" in ok(jl("links", "ls")).stdout
    [m] = doc(jl("mirrors", "ls", "-j"))
    assert (m["mirror_topic_name"], m["mirror_status"]) == ("orders", "SOURCE_UNAVAILABLE")


def test_describe_missing_link(jl):
    result = jl("links", "describe", "nope")
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, "", "jetlink: error: Cluster link 'nope' not found (CLUSTER_LINK_NOT_FOUND 10000)\n")
    assert json.loads(jl("links", "describe", "nope", "-j").stdout) == {"error": {
        "error_code": 10000, "error_name": "CLUSTER_LINK_NOT_FOUND",
        "message": "Cluster link 'nope' not found"}}


# -- alter ------------------------------------------------------------------------------------


def test_alter_pause_resume(jl):
    ok(jl("links", "create", "L", "--source-cluster", "east"))
    result = ok(jl("links", "alter", "L", "--config", "cluster.link.paused=true"))
    assert result.stdout == "Completed updating config for cluster-link L.\n"
    assert jl("links", "ls").stdout.endswith("link state: 'PAUSED'\n")
    got = doc(jl("links", "alter", "L", "--delete-config", "cluster.link.paused", "-j"))
    assert got["link_state"] == "ACTIVE"
    assert all(e["is_default"] for e in got["configs"])


def test_alter_filters_file_and_clearing(jl):
    topics = jl.tmp / "topics.json"
    topics.write_text(ALL_TOPICS)
    ok(jl("links", "create", "L", "--source-cluster", "east"))
    got = doc(jl("links", "alter", "L", "-c", "auto.create.mirror.topics.enable=true",
                 "--topic-filters-json-file", str(topics), "-j"))
    assert got["tasks"][1] == {"task_name": "AutoCreateMirror", "state": "ACTIVE", "errors": []}
    got = doc(jl("links", "alter", "L", "-c", "auto.create.mirror.topics.enable=false", "-j"))
    values = {e["name"]: e["value"] for e in got["configs"]}
    assert values["auto.create.mirror.topics.filters"] == ""


def test_alter_refusals(jl):
    ok(jl("links", "create", "L", "--source-cluster", "east", "-c", "cluster.link.prefix=e."))
    result = jl("links", "alter", "L")
    assert (result.exit_code, result.stderr) == (
        2, "jetlink: error: nothing to alter: give --config KEY=VALUE, --delete-config KEY, "
           "--config-file or a filters JSON file\n")
    result = jl("links", "alter", "L", "-c", "cluster.link.prefix=w.")
    assert (result.exit_code, result.stderr) == (
        1, "jetlink: error: Configuration 'cluster.link.prefix' cannot be altered: it is set "
           "when the cluster link is created (delete the link and create it again) "
           "(INVALID_CONFIG 40)\n")
    result = jl("links", "alter", "nope", "-c", "acl.sync.ms=1")
    assert (result.exit_code, result.stderr) == (
        1, "jetlink: error: Cluster link 'nope' not found (CLUSTER_LINK_NOT_FOUND 10000)\n")


# -- delete -----------------------------------------------------------------------------------


def test_delete_needs_force_without_terminal(jl):
    ok(jl("links", "create", "L", "--source-cluster", "east"))
    result = jl("links", "delete", "L")
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", "jetlink: error: no terminal to confirm on: pass -f/--force to delete cluster "
               "link L\n")
    result = ok(jl("links", "delete", "L", "-f"))
    assert result.stdout == "Cluster link 'L' deletion successfully completed.\n"
    result = jl("links", "delete", "L", "-f")
    assert (result.exit_code, result.stderr) == (
        1, "jetlink: error: Cluster link 'L' not found (CLUSTER_LINK_NOT_FOUND 10000)\n")
    ok(jl("links", "create", "L", "--source-cluster", "east"))
    assert doc(jl("links", "delete", "L", "--force", "-j")) == {"success": True}


@pytest.mark.parametrize(("answer", "code", "remaining"), [("y\n", 0, []), ("n\n", 1, ["L"])])
def test_delete_asks_on_a_terminal(jl, monkeypatch, answer, code, remaining):
    ok(jl("links", "create", "L", "--source-cluster", "east"))
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: True)
    result = jl("links", "delete", "L", input=answer)
    assert result.exit_code == code
    assert 'Are you sure you want to delete cluster link "L"?' in result.stderr
    assert [d["link_name"] for d in doc(jl("links", "ls", "-j"))] == remaining


def test_delete_refused_while_mirror_topics_use_the_link(jl, monkeypatch):
    forced = []
    monkeypatch.setattr(
        "jetlink.core.kafka.links._default_hooks",
        lambda dd, cl, clock: LinkHooks(
            in_use=lambda link: ["orders"],
            on_force=lambda link, topics: forced.append((link, topics))))
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: True)  # refused before asking
    ok(jl("links", "create", "L", "--source-cluster", "east"))
    result = jl("links", "delete", "L")
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, "", "jetlink: error: Cluster link 'L' is in use by mirror topics: orders; delete, "
               "promote or fail them over first, or force the deletion with -f/--force "
               "(CLUSTER_LINK_IN_USE 10002)\n")
    result = ok(jl("links", "delete", "L", "--force"))
    assert result.stdout == "Cluster link 'L' deletion successfully completed.\n"
    assert result.stderr == "jetlink: mirror topics of link L stopped mirroring: orders\n"
    assert forced == [("L", ["orders"])]


def test_config_get_set_delete_one(jl):
    ok(jl("links", "create", "L", "--source-cluster", "east"))
    assert ok(jl("links", "config", "get", "L", "acl.sync.ms")).stdout == \
        "acl.sync.ms=5000 (default)\n"
    assert ok(jl("links", "config", "set", "L", "acl.sync.ms", "1000")).stdout == \
        "Completed updating config acl.sync.ms for cluster-link L.\n"
    negative = jl("links", "config", "set", "L", "acl.sync.ms", "-5")  # a value, no option
    assert (negative.exit_code, negative.stderr) == (1, (
        "jetlink: error: Invalid value -5 for configuration acl.sync.ms: Value must be at "
        "least 0 (INVALID_CONFIG 40)\n"))
    assert doc(jl("links", "config", "get", "L", "acl.sync.ms", "-j")) == {
        "name": "acl.sync.ms", "value": "1000", "is_default": False, "is_read_only": False,
        "is_sensitive": False, "source": "DYNAMIC_CLUSTER_LINK_CONFIG"}
    assert ok(jl("links", "config", "delete", "L", "acl.sync.ms")).stdout == \
        "Completed reverting config acl.sync.ms for cluster-link L to its default.\n"
    assert ok(jl("links", "config", "get", "L", "acl.sync.ms")).stdout == \
        "acl.sync.ms=5000 (default)\n"


def test_config_of_a_connection_setting(jl):
    """A Kafka client setting of the link (bootstrap.servers, security.protocol, sasl.*):
    set, read, deleted like a link configuration, exit 0; one not set reads as "" (its
    default), as getKafkaLinkConfigs answers it."""
    ok(jl("links", "create", "S", "--source-cluster", "east", "-c",
          "bootstrap.servers=east:9092", "-c", "security.protocol=SSL"))
    assert ok(jl("links", "config", "delete", "S", "bootstrap.servers")).stdout == \
        "Completed reverting config bootstrap.servers for cluster-link S to its default.\n"
    assert doc(jl("links", "config", "get", "S", "bootstrap.servers", "-j")) == {
        "name": "bootstrap.servers", "value": "", "is_default": True, "is_read_only": False,
        "is_sensitive": False, "source": "DEFAULT_CONFIG"}
    assert ok(jl("links", "config", "set", "S", "sasl.mechanism", "PLAIN")).stdout == \
        "Completed updating config sasl.mechanism for cluster-link S.\n"
    assert ok(jl("links", "config", "get", "S", "sasl.mechanism")).stdout == \
        "sasl.mechanism=PLAIN\n"
    assert ok(jl("links", "config", "set", "S", "sasl.mechanism", "")).exit_code == 0
    assert ok(jl("links", "config", "get", "S", "sasl.mechanism")).stdout == \
        "sasl.mechanism= (default)\n"


@pytest.mark.parametrize("args,message", [
    (("set", "L", "bogus.key", "1"), "Unknown cluster link configuration 'bogus.key'"),
    (("set", "L", "acl.sync.ms", "abc"),
     "Invalid value abc for configuration acl.sync.ms: Not a number of type INT"),
    (("delete", "L", "nope.key"), "Unknown cluster link configuration 'nope.key'"),
    (("set", "NOPE", "acl.sync.ms", "1"), "Cluster link 'NOPE' not found"),
])
def test_a_refused_config_change_changes_nothing(jl, args, message):
    from helpers import data_dir_bytes

    ok(jl("links", "create", "L", "--source-cluster", "east"))
    ok(jl("links", "config", "set", "L", "acl.sync.ms", "2000"))
    before = data_dir_bytes(jl.data)
    res = jl("links", "config", *args)
    assert res.exit_code == 1 and message in res.stderr, res.output
    assert data_dir_bytes(jl.data) == before


def test_a_link_not_found_names_the_closest_link(jl):
    """Confluent's CLUSTER_LINK_NOT_FOUND, and for people the closest link's name (the one
    suggestion rule); the JSON document stays Confluent's."""
    ok(jl("cluster", "add", "kw", "--kind", "kafka"))
    ok(jl("cluster", "add", "ke", "--kind", "kafka"))
    ok(jl("--cluster", "ke", "links", "create", "dr-link", "--source-cluster", "kw"))
    for verb in (["describe", "dr-lnk"], ["delete", "dr-lnk", "-f"]):
        res = jl("--cluster", "ke", "links", *verb)
        assert (res.exit_code, res.stderr) == (1, (
            "jetlink: error: Cluster link 'dr-lnk' not found (CLUSTER_LINK_NOT_FOUND 10000): "
            "did you mean dr-link?\n")), verb
    res = jl("--cluster", "ke", "links", "describe", "dr-lnk", "-j")
    assert json.loads(res.stdout) == {"error": {
        "error_code": 10000, "error_name": "CLUSTER_LINK_NOT_FOUND",
        "message": "Cluster link 'dr-lnk' not found"}}
    # a short name one edit away is suggested too (difflib alone finds dx far from dr),
    # on every path that looks a link up
    ok(jl("--cluster", "ke", "links", "create", "dr", "--source-cluster", "kw"))
    for verb in (["links", "describe", "dx"], ["links", "delete", "dx", "-f"],
                 ["links", "alter", "dx", "-c", "acl.sync.ms=6000"],
                 ["links", "config", "set", "dx", "acl.sync.ms", "6000"],
                 ["links", "config", "get", "dx", "acl.sync.ms"],
                 ["mirrors", "ls", "--link", "dx"], ["mirrors", "create", "t", "--link", "dx"],
                 ["mirrors", "describe", "t", "--link", "dx"],
                 ["mirrors", "promote", "t", "--link", "dx"],
                 ["kafka-cluster-links", "--describe", "--link", "dx"],
                 ["kafka-mirrors", "--failover", "--topics", "t", "--link", "dx"]):
        res = jl("--cluster", "ke", *verb)
        assert (res.exit_code, res.stderr) == (1, (
            "jetlink: error: Cluster link 'dx' not found (CLUSTER_LINK_NOT_FOUND 10000): "
            "did you mean dr?\n")), verb
