"""`jetlink kafka-mirrors` / `jetlink kafka-cluster-links`: the Kafka tools' syntax runs the
same code as the `mirrors` / `links` verbs (same stdout, same JSON, same exit status);
`--rest-url` after a verb; the URL `jetlink serve` prints; GET /kafka/v3/clusters[/{id}]."""

from __future__ import annotations

import json
import re

import pytest
from helpers import ENV_VARS, data_dir_bytes, doc, ok, runner

from jetlink.cli.main import app
from jetlink.core.kafka.links import Links
from jetlink.core.kafka.topics import Kafka
from jetlink.core.store import DataDir

ALL_GROUPS = json.dumps({"groupFilters": [
    {"name": "*", "patternType": "LITERAL", "filterType": "INCLUDE"}]})


@pytest.fixture
def worlds(tmp_path, monkeypatch, cli_clock):
    """``make(name)``: a fresh data directory with west (topic `orders`, 2 partitions, group G
    at 4) and east (link L west -> east, offset sync on); link IDs are fixed so that two
    worlds print the same. ``run(data, *args)``: jetlink on that directory."""
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)
    monkeypatch.setattr("jetlink.core.kafka.links.new_link_id", lambda: "eEBkTffYSESld6EO898x3w")
    opened = []

    def make(name, *, link=True, mirror=True):
        data = tmp_path / name
        dd = DataDir(data)
        opened.append(dd)
        dd.add_cluster("west", "kafka")
        dd.add_cluster("east", "kafka")
        west = Kafka(dd.open("west"), cli_clock)
        west.create_topic("orders", 2)
        west.create_topic("payments", 1)
        west.produce("orders", [(None, f"a{i}".encode()) for i in range(5)], partition=0)
        west.produce("orders", [(None, f"b{i}".encode()) for i in range(3)], partition=1)
        west.commit("G", {("orders", 0): 4})
        if link:
            Links(dd, "east", cli_clock).create("L", "west", {
                "consumer.offset.sync.enable": "true",
                "consumer.offset.group.filters": ALL_GROUPS,
            })
        if link and mirror:
            ok(run(data, "--cluster", "east", "mirrors", "create", "orders", "--link", "L"))
            ok(run(data, "--cluster", "east", "replicate"))
        return data

    def run(data, *args):
        return runner.invoke(app, ["--data-dir", str(data), *args], prog_name="jetlink")

    make.run = run
    yield make
    for dd in opened:
        dd.close()


def same(a, b):
    """Two CLI results with the same exit status, stdout and stderr."""
    assert (a.exit_code, a.stdout, a.stderr) == (b.exit_code, b.stdout, b.stderr)
    return a


# -- kafka-mirrors: the same output as the mirrors verbs --------------------------------------


@pytest.mark.parametrize(("kafka", "verb"), [
    (["--describe", "--topics", "orders", "--link", "L"], ["describe", "orders", "--link", "L"]),
    (["--describe", "--link", "L"], ["describe", "--link", "L"]),
    (["--describe"], ["describe"]),
    (["--describe", "--pending-stopped-only"], ["describe", "--pending-stopped-only"]),
    (["--list"], ["ls"]),
    (["--list", "--link", "L"], ["ls", "--link", "L"]),
    (["--list", "--pending-stopped-only"], ["ls", "--pending-stopped-only"]),
    (["--describe", "--topics", "nope", "--link", "L"], ["describe", "nope", "--link", "L"]),
])
@pytest.mark.parametrize("json_flag", [[], ["-j"]])
def test_read_only_actions_print_what_the_mirrors_verbs_print(worlds, kafka, verb, json_flag):
    data = worlds("w")
    a = worlds.run(data, "--cluster", "east", "kafka-mirrors", *kafka, *json_flag)
    b = worlds.run(data, "--cluster", "east", "mirrors", *verb, *json_flag)
    same(a, b)


@pytest.mark.parametrize(("kafka", "verb", "mirror"), [
    (["--create", "--mirror-topic", "orders", "--link", "L"],
     ["create", "orders", "--link", "L"], False),
    (["--create", "--mirror-topic", "orders", "--link", "L", "--source-topic", "orders"],
     ["create", "orders", "--link", "L", "--source-topic", "orders"], False),
    (["--create", "--mirror-topic", "orders", "--link", "L", "--dry-run"],
     ["create", "orders", "--link", "L", "--validate-only"], False),
    (["--create", "--mirror-topic", "orders", "--link", "L", "--dry-run"],
     ["create", "orders", "--link", "L", "--dry-run"], False),
    (["--create", "--mirror-topic", "nope", "--link", "L"], ["create", "nope", "--link", "L"],
     False),
    (["--create", "--mirror-topic", "orders", "--links", "L", "--config",
      "min.insync.replicas=2,compression.type=gzip"],
     ["create", "orders", "--link", "L", "--config", "min.insync.replicas=2", "--config",
      "compression.type=gzip"], False),
    (["--promote", "--topics", "orders", "--link", "L"], ["promote", "orders", "--link", "L"],
     True),
    (["--promote", "--topics", "orders", "--link", "L", "--dry-run"],
     ["promote", "orders", "--link", "L", "--dry-run"], True),
    (["--failover", "--topics", "orders", "--link", "L"], ["failover", "orders", "--link", "L"],
     True),
    (["--failover", "--link", "L"], ["failover", "--link", "L"], True),
    # --topics without --link (Confluent's kafka-mirrors): the topics' link
    (["--failover", "--topics", "orders"], ["failover", "orders", "--link", "L"], True),
    (["--promote", "--topics", "orders", "--dry-run"],
     ["promote", "orders", "--link", "L", "--dry-run"], True),
    (["--pause", "--topics", "orders"], ["pause", "orders", "--link", "L"], True),
    (["--unpause", "--topics", "orders"], ["resume", "orders", "--link", "L"], True),
    (["--pause", "--topics", "orders", "--link", "L"], ["pause", "orders", "--link", "L"], True),
    (["--unpause", "--topics", "orders", "--link", "L"], ["resume", "orders", "--link", "L"],
     True),
    (["--pause", "--topics", "orders,nope", "--link", "L"],
     ["pause", "orders", "nope", "--link", "L"], True),
])
@pytest.mark.parametrize("json_flag", [[], ["-j"]])
def test_actions_do_what_the_mirrors_verbs_do(worlds, kafka, verb, mirror, json_flag):
    one, two = worlds("one", mirror=mirror), worlds("two", mirror=mirror)
    a = worlds.run(one, "--cluster", "east", "kafka-mirrors", *kafka, *json_flag)
    b = worlds.run(two, "--cluster", "east", "mirrors", *verb, *json_flag)
    same(a, b)
    described = [re.sub(r"TopicId: \S+", "TopicId: -", worlds.run(
        data, "--cluster", "east", "topic", "describe", "orders").stdout) for data in (one, two)]
    assert described[0] == described[1]
    # and the state after: the same describe
    same(worlds.run(one, "--cluster", "east", "mirrors", "describe", "-j"),
         worlds.run(two, "--cluster", "east", "mirrors", "describe", "-j"))


def test_prints_kafka_mirrors_lines(worlds):
    data = worlds("w")
    out = ok(worlds.run(data, "--cluster", "east", "kafka-mirrors", "--describe", "--topics",
                        "orders", "--link", "L")).stdout.splitlines()
    assert out[0].startswith("Topic: orders\tLinkName: L\tLinkId: eEBkTffYSESld6EO898x3w\t"
                             "SourceTopic: orders\tState: ACTIVE\t")
    assert out[1].startswith("\tPartition: 0\tState: ACTIVE\tLocalLogEndOffset: 5\t")
    out = ok(worlds.run(data, "--cluster", "east", "kafka-mirrors", "--failover", "--topics",
                        "orders", "--link", "L")).stdout
    assert "Request for stopping topic orders's mirror was successfully scheduled." in out


def test_a_topic_named_twice_is_done_once(worlds):
    """--topics orders,orders (or the topic given twice to a mirrors verb) is one topic, in
    the order first named: one line, one JSON row, no "already stopped" for the repeat."""
    data = worlds("w")
    ok(worlds.run(data, "--cluster", "east", "mirrors", "create", "payments", "--link", "L"))
    ok(worlds.run(data, "--cluster", "east", "replicate"))
    out = ok(worlds.run(data, "--cluster", "east", "kafka-mirrors", "--promote", "--topics",
                        "payments,orders,payments", "--link", "L", "--dry-run")).stdout
    assert out == (
        "Calculating max offset and ms lag for mirror topics: [payments, orders]\n"
        "Finished calculating max offset lag and max lag ms for mirror topics: "
        "[payments, orders]\n"
        "Request for promoting topic payments's mirror would succeed (dry run).\n"
        "Request for promoting topic orders's mirror would succeed (dry run).\n")
    d = doc(worlds.run(data, "--cluster", "east", "mirrors", "pause", "orders", "orders",
                       "--link", "L", "-j"))
    assert [r["mirror_topic_name"] for r in d["data"]] == ["orders"]
    out = ok(worlds.run(data, "--cluster", "east", "kafka-mirrors", "--failover", "--topics",
                        "orders", "--topics", "orders", "--link", "L")).stdout
    assert out.count("orders") == 3 and "already stopped" not in out


def test_truncate_and_reverse_run_the_mirrors_verbs(worlds):
    # failover on east, then reverse-and-start there needs a link L on west: compare the
    # refusal / result of both syntaxes on two identical worlds.
    one, two = worlds("one"), worlds("two")
    for data in (one, two):
        ok(worlds.run(data, "--cluster", "east", "mirrors", "failover", "orders", "--link", "L"))
    for kafka, verb in (
        (["--truncate-and-restore", "--topics", "orders", "--link", "L", "--dry-run"],
         ["truncate-and-restore", "orders", "--link", "L", "--dry-run"]),
        (["--reverse-and-start", "--topics", "orders", "--link", "L", "--dry-run"],
         ["reverse-and-start", "orders", "--link", "L", "--dry-run"]),
    ):
        for cluster in ("east", "west"):
            for j in ([], ["-j"]):
                same(worlds.run(one, "--cluster", cluster, "kafka-mirrors", *kafka, *j),
                     worlds.run(two, "--cluster", cluster, "mirrors", *verb, *j))


def test_reverse_and_pause_runs_the_mirrors_verb(worlds):
    # without the link L on west the reverse is refused: the same sentence either way
    one, two = worlds("one"), worlds("two")
    for j in ([], ["-j"]):
        a = same(worlds.run(one, "--cluster", "east", "kafka-mirrors", "--reverse-and-pause",
                            "--topics", "orders", "--link", "L", *j),
                 worlds.run(two, "--cluster", "east", "mirrors", "reverse-and-pause",
                            "orders", "--link", "L", *j))
        assert a.exit_code == 1
    assert "Cluster link 'L' is not bidirectional" in a.stdout


def test_topics_without_a_link_take_each_topics_link(worlds):
    """kafka-mirrors --failover --topics T (Confluent's reference: --topics and --link are
    exclusive): the link is each topic's; a topic that is no mirror is the describe's error
    (exit 1, nothing changed); topics of two links are refused, naming each link's."""
    data = worlds("w")
    bad = worlds.run(data, "--cluster", "east", "kafka-mirrors", "--failover", "--topics",
                     "payments")
    assert (bad.exit_code, bad.stdout) == (1, "")
    assert "payments" in bad.stderr and "Traceback" not in bad.stderr
    state = doc(worlds.run(data, "--cluster", "east", "mirrors", "describe", "-j"))
    assert [m["mirror_status"] for m in state] == ["ACTIVE"]
    ok(worlds.run(data, "--cluster", "east", "links", "create", "M", "--source-cluster",
                  "west"))
    ok(worlds.run(data, "--cluster", "east", "mirrors", "create", "payments", "--link", "M"))
    two = worlds.run(data, "--cluster", "east", "kafka-mirrors", "--pause", "--topics",
                     "orders,payments")
    assert (two.exit_code, two.stderr) == (2, (
        "jetlink: error: --pause --topics names mirrors of 2 links (orders of link L; "
        "payments of link M): run it once per link (--link LINK --topics ...)\n"))


def test_the_rest_options_and_their_variables(worlds, monkeypatch):
    """kafka-mirrors and kafka-cluster-links take the links / mirrors groups' REST options
    and their JETLINK_REST_* variables: a URL from JETLINK_REST_URL is called (a refused
    connection here), never the local engine."""
    data = worlds("w")
    monkeypatch.setenv("JETLINK_REST_URL", "http://127.0.0.1:9")
    for tool, args in (("kafka-mirrors", ["--list"]), ("kafka-cluster-links", ["--list"])):
        r = worlds.run(data, "--cluster", "east", tool, *args)
        assert r.exit_code == 1 and "127.0.0.1:9" in r.stderr, (tool, r.stderr)
    monkeypatch.delenv("JETLINK_REST_URL")
    r = worlds.run(data, "--cluster", "east", "kafka-mirrors", "--list", "--rest-url",
                   "http://127.0.0.1:9", "--rest-token", "t", "--insecure")
    assert r.exit_code == 1 and "127.0.0.1:9" in r.stderr, r.stderr
    r = worlds.run(data, "--cluster", "east", "kafka-cluster-links", "--list",
                   "--rest-api-key", "k", "--rest-api-secret", "s", "--rest-url",
                   "http://127.0.0.1:9")
    assert r.exit_code == 1 and "127.0.0.1:9" in r.stderr, r.stderr


# -- usage errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(("tool", "args", "words"), [
    ("kafka-mirrors", [], ["give one action", "--describe", "--reverse-and-pause"]),
    ("kafka-mirrors", ["--promote", "--failover", "--link", "L"],
     ["only one action", "--promote and --failover"]),
    ("kafka-mirrors", ["--promote"], ["--promote needs --link LINK (every mirror of it) or "
                                      "--topics TOPIC[,TOPIC...]"]),
    ("kafka-mirrors", ["--truncate-and-restore", "--topics", "orders"],
     ["--truncate-and-restore needs --link LINK"]),
    ("kafka-mirrors", ["--create", "--link", "L"], ["--create needs --mirror-topic"]),
    ("kafka-mirrors", ["--truncate-and-restore", "--topics", "a,b", "--link", "L"],
     ["exactly one topic"]),
    # an empty --topics (an unset $TOPICS) never means every mirror of the link
    ("kafka-mirrors", ["--failover", "--topics", "", "--link", "L"],
     ["--topics '': no topic named", "leave --topics out"]),
    ("kafka-mirrors", ["--pause", "--topics", ",", "--link", "L", "--dry-run"],
     ["--topics ',': no topic named"]),
    ("kafka-cluster-links", [], ["give one action", "--list", "--alter"]),
    ("kafka-cluster-links", ["--list", "--delete"], ["--list and --delete"]),
    ("kafka-cluster-links", ["--describe"], ["--describe needs --link"]),
    ("kafka-cluster-links", ["--create", "--link", "M"], ["--create needs --cluster-id"]),
])
def test_usage_errors_exit_2_with_one_line(worlds, tool, args, words):
    data = worlds("w")
    r = worlds.run(data, "--cluster", "east", tool, *args)
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    for word in words:
        assert word in lines[0]


# -- --bootstrap-server / --command-config ----------------------------------------------------


def test_bootstrap_server_selects_a_cluster_with_one_notice(worlds):
    data = worlds("w")
    a = ok(worlds.run(data, "kafka-mirrors", "--list", "--bootstrap-server", "east:9092",
                      "--command-config", "client.properties"))
    b = ok(worlds.run(data, "--cluster", "east", "mirrors", "ls"))
    assert a.stdout == b.stdout
    assert a.stderr == ("jetlink: notice: --bootstrap-server east:9092 selects cluster east; "
                        "--bootstrap-server and --command-config are otherwise ignored\n")


def test_bootstrap_server_and_cluster_naming_two_clusters_are_refused(worlds):
    """Two selectors of one command line naming two clusters: a usage error, nothing done
    on either; naming the same cluster is fine."""
    data = worlds("w")
    before = data_dir_bytes(data, databases_only=True)
    for tool in (["kafka-mirrors", "--pause", "--topics", "orders", "--link", "L"],
                 ["kafka-cluster-links", "--delete", "--link", "L"]):
        r = worlds.run(data, "--cluster", "west", *tool, "--bootstrap-server", "east:9092")
        assert (r.exit_code, r.stderr) == (2, (
            "jetlink: error: --bootstrap-server east:9092 selects cluster east, --cluster "
            "west another: give one of them (or both naming the same)\n")), tool
    assert data_dir_bytes(data, databases_only=True) == before
    ok(worlds.run(data, "--cluster", "east", "kafka-mirrors", "--list", "--bootstrap-server",
                  "east:9092"))


def test_bootstrap_server_naming_no_cluster_leaves_cluster(worlds):
    data = worlds("w")
    a = ok(worlds.run(data, "--cluster", "east", "kafka-cluster-links", "--list",
                      "--bootstrap-server", "broker-1.example.com:9092"))
    b = ok(worlds.run(data, "--cluster", "east", "links", "ls"))
    assert a.stdout == b.stdout
    assert a.stderr == ("jetlink: notice: cluster east (--cluster); --bootstrap-server and "
                        "--command-config are ignored\n")
    # a change without --cluster is not made on the default cluster
    for tool in (["kafka-mirrors", "--promote", "--topics", "orders", "--link", "dr"],
                 ["kafka-cluster-links", "--delete", "--link", "dr"]):
        r = worlds.run(data, *tool, "--bootstrap-server", "broker-1.example.com:9092")
        assert (r.exit_code, r.stderr) == (2, (
            "jetlink: error: --bootstrap-server broker-1.example.com:9092: no cluster of the "
            "data directory is named 'broker-1.example.com' (its host selects the cluster); "
            "give --cluster NAME to change cluster local\n")), tool


def test_the_notice_names_where_the_cluster_was_named(worlds, monkeypatch):
    """The cluster in force given by JETLINK_CLUSTER (the environment variable of
    ``--cluster``) is named as such in the notice, and is named, so a change is made there."""
    data = worlds("w")
    monkeypatch.setenv("JETLINK_CLUSTER", "east")
    a = ok(worlds.run(data, "kafka-cluster-links", "--list",
                      "--bootstrap-server", "broker-1.example.com:9092"))
    assert a.stderr == ("jetlink: notice: cluster east (JETLINK_CLUSTER); --bootstrap-server "
                        "and --command-config are ignored\n")
    b = ok(worlds.run(data, "kafka-mirrors", "--promote", "--topics", "orders", "--link", "L",
                      "--bootstrap-server", "broker-1.example.com:9092"))
    assert "(JETLINK_CLUSTER)" in b.stderr


def test_a_change_without_bootstrap_server_or_cluster_names_its_cluster(worlds, monkeypatch):
    """Without --bootstrap-server and --cluster a change is made on the cluster in force (the
    default, local, takes both kinds) and one notice names it; JSON stdout is unchanged; a
    read, or a change with --cluster, prints no notice."""
    data = worlds("w")
    notice = "jetlink: notice: cluster local (the default: no --cluster)\n"
    r = ok(worlds.run(data, "kafka-cluster-links", "--create", "--link", "cl4",
                      "--cluster-id", "west"))
    assert (r.stdout, r.stderr) == (
        "Cluster link 'cl4' creation successfully completed.\n", notice)
    r = ok(worlds.run(data, "kafka-cluster-links", "--alter", "--link", "cl4", "--add-config",
                      "acl.sync.ms=6000", "-j"))
    assert r.stderr == notice
    doc(r)
    r = ok(worlds.run(data, "kafka-mirrors", "--create", "--mirror-topic", "payments",
                      "--link", "cl4"))
    assert (r.stdout, r.stderr) == ("Created topic payments.\n", notice)
    r = ok(worlds.run(data, "kafka-mirrors", "--list"))
    assert r.stderr == ""
    r = ok(worlds.run(data, "kafka-cluster-links", "--list"))
    assert r.stderr == ""
    r = worlds.run(data, "kafka-acls", "--add", "--allow-principal", "User:x", "--operation",
                   "Read", "--topic", "q")
    assert (r.exit_code, r.stderr.splitlines()[0]) == (1, notice.rstrip())
    r = ok(worlds.run(data, "--cluster", "east", "kafka-mirrors", "--pause", "--topics",
                      "orders", "--link", "L"))
    assert r.stderr == ""
    monkeypatch.setenv("JETLINK_CLUSTER", "east")
    r = ok(worlds.run(data, "kafka-mirrors", "--unpause", "--topics", "orders", "--link", "L"))
    assert r.stderr == "jetlink: notice: cluster east (JETLINK_CLUSTER)\n"


def test_a_bootstrap_server_one_typo_from_a_cluster_is_refused(worlds):
    """``--bootstrap-server eats:9092`` with no --cluster: answering for the default cluster
    would be a wrong answer to a runbook line. Refused (exit 2) with the closest cluster,
    nothing created; with --cluster given, that cluster answers and the notice names the
    closest one."""
    data = worlds("w")
    before = sorted(p.name for p in data.iterdir())  # (the open worlds share -shm)
    # ... and a broker no cluster is named after: no answer for the default cluster ("No
    # mirror topics found." read as the broker's), as no change is made there
    refused = {
        "eats:9092": "no cluster of the data directory is named 'eats' (its host selects the "
                     "cluster); did you mean east? (or give --cluster NAME)",
        "broker-1.example.com:9092": "no cluster of the data directory is named "
                                     "'broker-1.example.com' (its host selects the cluster); "
                                     "give --cluster NAME to read cluster local"}
    for server, said in refused.items():
        for tool in (["kafka-mirrors", "--list"], ["kafka-cluster-links", "--list"],
                     ["kafka-acls", "--list"]):
            res = worlds.run(data, *tool, "--bootstrap-server", server)
            assert (res.exit_code, res.stderr) == (
                2, f"jetlink: error: --bootstrap-server {server}: {said}\n"), tool
    assert sorted(p.name for p in data.iterdir()) == before  # the reads created no local cluster
    a = ok(worlds.run(data, "--cluster", "east", "kafka-mirrors", "--list",
                      "--bootstrap-server", "eats:9092"))
    assert a.stderr == ("jetlink: notice: cluster east (--cluster); --bootstrap-server (did "
                        "you mean east?) and --command-config are ignored\n")


def test_the_kafka_tools_reads_create_nothing(worlds):
    """--list / --describe of the Kafka tools, and ``cluster authorizer`` without a change,
    only read: a cluster they address that does not exist is not created."""
    data = worlds("w")
    before = sorted(p.name for p in data.iterdir())  # (the open worlds share -shm)
    for args in (["kafka-mirrors", "--list"], ["kafka-mirrors", "--describe"],
                 ["kafka-cluster-links", "--list"], ["cluster", "authorizer", "local"],
                 ["kafka-acls", "--list"]):
        worlds.run(data, *args)
        assert sorted(p.name for p in data.iterdir()) == before, args
    assert not (data / "local.db").exists()


def test_create_takes_the_source_cluster_from_the_config_files_bootstrap_servers(worlds,
                                                                                  tmp_path):
    """A runbook's link.properties names the source by bootstrap.servers: when its host is a
    cluster of the data directory it is the source (one notice), as --bootstrap-server
    selects the destination; otherwise --cluster-id is required (exit 2, saying both)."""
    data = worlds("w", link=False)
    props = tmp_path / "link.properties"
    props.write_text("bootstrap.servers=west:9092\n")
    res = ok(worlds.run(data, "--cluster", "east", "kafka-cluster-links", "--create",
                        "--link", "L2", "--config-file", str(props)))
    assert res.stderr == ("jetlink: notice: bootstrap.servers west:9092 of --config-file names "
                          "cluster west: the source cluster\n")
    described = doc(worlds.run(data, "--cluster", "east", "links", "describe", "L2", "-j"))
    assert described["source_cluster_id"] == "west"
    props.write_text("bootstrap.servers=broker-1.example.com:9092\n")
    res = worlds.run(data, "--cluster", "east", "kafka-cluster-links", "--create", "--link",
                     "L3", "--config-file", str(props))
    assert res.exit_code == 2
    assert ("--create needs --cluster-id NAME (the source cluster; or a --config-file whose "
            "bootstrap.servers host names a cluster of the data directory)") in res.stderr
    # a list naming two clusters: neither guessed, nothing made
    props.write_text("bootstrap.servers=west:9092,east:9092\n")
    before = data_dir_bytes(data, databases_only=True)
    res = worlds.run(data, "--cluster", "east", "kafka-cluster-links", "--create", "--link",
                     "L4", "--config-file", str(props))
    assert (res.exit_code, res.stderr) == (2, (
        "jetlink: error: bootstrap.servers of --config-file: west:9092,east:9092 names "
        "clusters west and east: a bootstrap list is the brokers of one cluster (give one "
        "of them)\n"))
    res = worlds.run(data, "kafka-mirrors", "--list", "--bootstrap-server",
                     "east:9092,west:9093")
    assert (res.exit_code, res.stderr) == (2, (
        "jetlink: error: --bootstrap-server east:9092,west:9093 names clusters east and "
        "west: a bootstrap list is the brokers of one cluster (give one of them)\n"))
    assert data_dir_bytes(data, databases_only=True) == before


def test_create_refuses_bootstrap_servers_naming_another_cluster_than_the_cluster_id(
        worlds, tmp_path):
    """--cluster-id and a bootstrap.servers (of --config-file, or --config, which wins over
    the file) naming another cluster of the data directory, even the destination itself,
    or two of them: exit 2, nothing made. --config's bootstrap.servers names the source as
    the file's does."""
    data = worlds("w", link=False)
    props = tmp_path / "link.properties"
    before = data_dir_bytes(data, databases_only=True)
    cases = [
        ("bootstrap.servers=east:9092\n", [],
         "bootstrap.servers east:9092 of --config-file names cluster east, not --cluster-id "
         "west: a link's bootstrap servers are the brokers of its source cluster (give one or "
         "make them agree)"),
        ("bootstrap.servers=west:9092,east:9092\n", [],
         "bootstrap.servers of --config-file: west:9092,east:9092 names clusters west and "
         "east: a bootstrap list is the brokers of one cluster (give one of them)"),
        ("bootstrap.servers=west:9092\n", ["--config", "bootstrap.servers=east:9092"],
         "--config bootstrap.servers=east:9092 names cluster east, not --cluster-id west: a "
         "link's bootstrap servers are the brokers of its source cluster (give one or make "
         "them agree)"),
    ]
    for text, extra, said in cases:
        props.write_text(text)
        res = worlds.run(data, "--cluster", "east", "kafka-cluster-links", "--create",
                         "--link", "L9", "--cluster-id", "west", "--config-file", str(props),
                         *extra)
        assert (res.exit_code, res.stderr) == (2, f"jetlink: error: {said}\n"), text
    assert data_dir_bytes(data, databases_only=True) == before
    # agreeing, or naming no cluster of the data directory: made
    props.write_text("bootstrap.servers=west:9092\n")
    ok(worlds.run(data, "--cluster", "east", "kafka-cluster-links", "--create", "--link", "L9",
                  "--cluster-id", "west", "--config-file", str(props)))
    res = ok(worlds.run(data, "--cluster", "east", "kafka-cluster-links", "--create", "--link",
                        "L10", "--config", "bootstrap.servers=west:9092"))
    assert res.stderr == ("jetlink: notice: --config bootstrap.servers=west:9092 names cluster "
                          "west: the source cluster\n")
    ok(worlds.run(data, "--cluster", "east", "kafka-cluster-links", "--create", "--link", "L11",
                  "--cluster-id", "west", "--config", "bootstrap.servers=broker-1.example:9092"))


# -- kafka-cluster-links: the same output as the links verbs -----------------------------------


def _files(tmp_path):
    props = tmp_path / "link.properties"
    props.write_text("# runbook\nconsumer.offset.sync.enable=true\nbootstrap.servers=west:9092\n")
    groups = tmp_path / "groups.json"
    groups.write_text(ALL_GROUPS)
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"topicFilters": [
        {"name": "*", "patternType": "LITERAL", "filterType": "INCLUDE"}]}))
    return str(props), str(groups), str(topics)


def test_links_actions_do_what_the_links_verbs_do(worlds, tmp_path):
    props, groups, topics = _files(tmp_path)
    cases = [
        (["--create", "--link", "M", "--cluster-id", "west", "--config-file", props,
          "--consumer-group-filters-json-file", groups],
         ["create", "M", "--source-cluster", "west", "--config-file", props,
          "--consumer-group-filters-json-file", groups]),
        (["--create", "--link", "M", "--cluster-id", "west", "--validate-only",
          "--topic-filters-json-file", topics, "--add-config",
          "auto.create.mirror.topics.enable=true"],
         ["create", "M", "--source-cluster", "west", "--validate-only",
          "--topic-filters-json-file", topics, "--config",
          "auto.create.mirror.topics.enable=true"]),
        (["--create", "--link", "M", "--cluster-id", "west", "--config",
          "consumer.offset.sync.ms=1000,cluster.link.prefix=w."],
         ["create", "M", "--source-cluster", "west", "--config", "consumer.offset.sync.ms=1000",
          "--config", "cluster.link.prefix=w."]),
        # a trailing comma (a runbook's line) dropped, as Kafka's ConfigCommand drops it
        (["--create", "--link", "M", "--cluster-id", "west", "--config",
          "consumer.offset.sync.ms=1000,cluster.link.prefix=w.,"],
         ["create", "M", "--source-cluster", "west", "--config", "consumer.offset.sync.ms=1000",
          "--config", "cluster.link.prefix=w."]),
        (["--create", "--link", "L", "--cluster-id", "west"],
         ["create", "L", "--source-cluster", "west"]),
        (["--list"], ["ls"]),
        (["--list", "--include-topics"], ["ls", "--include-topics"]),
        (["--list", "--link", "L", "--include-topics"], ["ls", "--link", "L",
                                                         "--include-topics"]),
        (["--list", "--link", "nope"], ["ls", "--link", "nope"]),
        (["--describe", "--link", "L"], ["describe", "L"]),
        (["--describe", "--link", "nope"], ["describe", "nope"]),
        (["--alter", "--link", "L", "--add-config",
          f"cluster.link.paused=true,consumer.offset.group.filters={ALL_GROUPS}"],
         ["alter", "L", "--config", "cluster.link.paused=true", "--config",
          f"consumer.offset.group.filters={ALL_GROUPS}"]),
        (["--alter", "--link", "L", "--delete-config", "consumer.offset.sync.ms"],
         ["alter", "L", "--delete-config", "consumer.offset.sync.ms"]),
        (["--delete", "--link", "L"], ["delete", "L"]),
        (["--delete", "--link", "L", "--force"], ["delete", "L", "--force"]),
    ]
    for n, (kafka, verb) in enumerate(cases):
        for j in ([], ["-j"]):
            one = worlds(f"k{n}{len(j)}")
            two = worlds(f"v{n}{len(j)}")
            same(worlds.run(one, "--cluster", "east", "kafka-cluster-links", *kafka, *j),
                 worlds.run(two, "--cluster", "east", "links", *verb, *j))
            same(worlds.run(one, "--cluster", "east", "links", "ls", "-j"),
                 worlds.run(two, "--cluster", "east", "links", "ls", "-j"))


def test_kafka_cluster_links_delete_asks_nothing_as_confluents_tool(worlds):
    """kafka-cluster-links --delete deletes an unused link with no question (the real tool
    asks none; its --force only means: even with mirror topics), so a runbook needs no
    --force, which would also stop every mirror of a link in use; links delete still asks
    (without a terminal: -f/--force)."""
    data = worlds("w", mirror=False)
    asked = worlds.run(data, "--cluster", "east", "links", "delete", "L")
    assert asked.exit_code == 2 and "pass -f/--force" in asked.stderr
    r = ok(worlds.run(data, "--cluster", "east", "kafka-cluster-links", "--delete", "--link",
                      "L"))
    assert r.stdout == "Cluster link 'L' deletion successfully completed.\n"
    used = worlds("u")  # a link with a mirror topic: refused without --force, as before
    r = worlds.run(used, "--cluster", "east", "kafka-cluster-links", "--delete", "--link", "L")
    assert r.exit_code == 1 and "CLUSTER_LINK_IN_USE" in r.stderr


def test_alter_prints_kafka_cluster_links_line(worlds):
    data = worlds("w")
    r = ok(worlds.run(data, "--cluster", "east", "kafka-cluster-links", "--alter", "--link",
                      "L", "--add-config", "cluster.link.paused=true"))
    assert r.stdout == "Completed updating config for cluster-link L.\n"
    d = doc(worlds.run(data, "--cluster", "east", "links", "describe", "L", "-j"))
    assert d["link_state"] == "PAUSED"


# -- --rest-url after the verb; the URL jetlink serve prints -----------------------------------


def test_rest_url_after_the_verb_is_the_groups(worlds, monkeypatch):
    data = worlds("w")
    seen = []

    def fake(app, settings):
        seen.append(settings.url)
        raise SystemExit(7)

    monkeypatch.setattr("jetlink.cli.rest.remote.open_client", fake)
    for args in (["mirrors", "describe", "orders", "--link", "L", "--rest-url", "http://a:1"],
                 ["mirrors", "--rest-url", "http://b:1", "describe", "orders", "--link", "L"],
                 ["links", "describe", "L", "--rest-url", "http://c:1"],
                 ["links", "--rest-url", "http://x:1", "ls", "--rest-url", "http://d:1"],
                 ["kafka-mirrors", "--list", "--rest-url", "http://e:1"]):
        r = worlds.run(data, "--cluster", "east", *args)
        assert r.exit_code == 7, (args, r.stdout, r.stderr)
    assert seen == ["http://a:1", "http://b:1", "http://c:1", "http://d:1", "http://e:1"]


@pytest.mark.parametrize(("url", "root", "cluster"), [
    ("http://127.0.0.1:8090/kafka/v3/clusters/{cluster}", "http://127.0.0.1:8090/kafka/v3",
     None),
    ("http://127.0.0.1:8090/kafka/v3/clusters", "http://127.0.0.1:8090/kafka/v3", None),
    ("http://127.0.0.1:8090/kafka/v3/clusters/east/", "http://127.0.0.1:8090/kafka/v3", "east"),
    ("http://proxy:8082/v3/clusters/lkc-1", "http://proxy:8082/v3", "lkc-1"),
    ("http://h:8090", "http://h:8090/kafka/v3", None),
])
def test_rest_url_as_serve_prints_it(url, root, cluster):
    from jetlink.cli.common import rest_api_root, rest_url_cluster

    assert rest_api_root(url) == root
    assert rest_url_cluster(url) == cluster


@pytest.fixture
def served(worlds, monkeypatch):
    """A world served by the REST app through an httpx transport (no socket): ``(data,
    asgi)``; every RestClient the CLI opens goes to the app."""
    from jetlink.cli import common
    from jetlink.cli.rest import client as client_mod
    from jetlink.cli.rest.server import create_app

    data = worlds("w")
    asgi = create_app(data, clock_factory=common.make_clock)
    real_init = client_mod.RestClient.__init__

    def init(self, *args, **kw):
        kw.setdefault("transport", _SyncASGI(asgi))
        real_init(self, *args, **kw)

    monkeypatch.setattr(client_mod.RestClient, "__init__", init)
    return data, asgi


class _SyncASGI:
    """An httpx sync transport running an ASGI app (httpx's ASGITransport is async only)."""

    def __init__(self, asgi):
        import httpx

        self._t = httpx.ASGITransport(app=asgi)

    def handle_request(self, request):
        import anyio
        import httpx

        async def go():
            body = request.read()
            req = httpx.Request(request.method, request.url, headers=request.headers,
                                content=body)
            resp = await self._t.handle_async_request(req)
            content = await resp.aread()
            return httpx.Response(resp.status_code, headers=resp.headers, content=content)

        return anyio.run(go)

    def close(self):
        pass


def test_serve_url_round_trip(served):
    data, _asgi = served
    printed = "http://127.0.0.1:8090/kafka/v3/clusters/{cluster}"
    run = lambda *a: runner.invoke(app, ["--data-dir", str(data), *a],  # noqa: E731
                                   prog_name="jetlink")
    for verb in (["mirrors", "ls", "--link", "L"], ["links", "ls"]):
        for j in ([], ["-j"]):
            remote = run("--cluster", "east", *verb, "--rest-url", printed, *j)
            local = run("--cluster", "east", *verb, *j)
            assert remote.exit_code == 0, (remote.stdout, remote.stderr)
            assert remote.stdout == local.stdout
    # the cluster's own URL names the cluster
    remote = run("links", "ls", "--rest-url", "http://127.0.0.1:8090/kafka/v3/clusters/east")
    assert remote.exit_code == 0, remote.stderr
    assert remote.stdout == run("--cluster", "east", "links", "ls").stdout


def test_clusters_endpoints(served):
    import httpx

    data, asgi = served
    http = httpx.Client(transport=_SyncASGI(asgi), base_url="http://127.0.0.1:8090")
    r = http.get("/kafka/v3/clusters")
    assert r.status_code == 200
    body = r.json()
    assert body["kind"] == "KafkaClusterList"
    assert body["metadata"] == {"self": "http://127.0.0.1:8090/kafka/v3/clusters", "next": None}
    assert [c["cluster_id"] for c in body["data"]] == ["east", "west"]
    r = http.get("/kafka/v3/clusters/east")
    assert r.status_code == 200
    base = "http://127.0.0.1:8090/kafka/v3/clusters/east"
    assert r.json() == {
        "kind": "KafkaCluster",
        "metadata": {"self": base, "resource_name": "crn:///kafka=east"},
        "cluster_id": "east",
        "acls": {"related": f"{base}/acls"},
        "brokers": {"related": f"{base}/brokers"},
        "broker_configs": {"related": f"{base}/broker-configs"},
        "consumer_groups": {"related": f"{base}/consumer-groups"},
        "topics": {"related": f"{base}/topics"},
        "partition_reassignments": {"related": f"{base}/topics/-/partitions/-/reassignment"},
    }
    assert body["data"][0] == r.json()
    r = http.get("/kafka/v3/clusters/nowhere")
    assert r.status_code == 404
    assert r.json() == {"error_code": 404, "message": "Cluster nowhere cannot be found."}


def test_a_nats_cluster_is_no_kafka_cluster_of_the_rest_api(served):
    """listKafkaClusters lists the Kafka clusters (and local, which takes both kinds); a
    NATS cluster's paths answer as an unknown cluster's, as `jetlink links` refuses it."""
    import httpx

    from jetlink.core.store import DataDir

    data, asgi = served
    dd = DataDir(data)
    dd.add_cluster("natsy")
    dd.close()
    http = httpx.Client(transport=_SyncASGI(asgi), base_url="http://127.0.0.1:8090")
    assert [c["cluster_id"] for c in http.get("/kafka/v3/clusters").json()["data"]] == [
        "east", "west"]
    for path in ("", "/links", "/links/-/mirrors", "/acls"):
        r = http.get(f"/kafka/v3/clusters/natsy{path}")
        assert (r.status_code, r.json()) == (
            404, {"error_code": 404, "message": "Cluster natsy cannot be found."}), path
    before = data_dir_bytes(data, databases_only=True)
    r = http.post("/kafka/v3/clusters/natsy/links?link_name=L",
                  json={"source_cluster_id": "west"})
    assert (r.status_code, r.json()["message"]) == (404, "Cluster natsy cannot be found.")
    assert data_dir_bytes(data, databases_only=True) == before


def test_serve_subprocess_printed_urls_work_as_rest_url(tmp_path, monkeypatch):
    """A real `jetlink serve`: the URL of its notice ({cluster} included) and the one of its
    -j line work as --rest-url as printed, after the verb too, and the clusters endpoints
    answer over HTTP."""
    import httpx
    from test_rest_server import Server

    from jetlink.core.clock import SystemClock

    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    data = tmp_path / "data"
    dd = DataDir(data)
    dd.add_cluster("west", "kafka")
    dd.add_cluster("east", "kafka")
    Kafka(dd.open("west"), SystemClock()).create_topic("orders", 1)
    Links(dd, "east", SystemClock()).create("L", "west", {})
    dd.close()
    run = lambda *a: runner.invoke(app, ["--data-dir", str(data), *a],  # noqa: E731
                                   prog_name="jetlink")
    ok(run("--cluster", "east", "kafka-mirrors", "--create", "--mirror-topic", "orders",
           "--link", "L"))
    for json_line in (False, True):
        server = Server(data, tmp_path, json_line=json_line)
        try:
            if json_line:
                printed = server.announced["url"]
            else:
                printed = re.search(r" on (http://\S+)\n", server.stderr()).group(1)
                assert printed.endswith("/kafka/v3/clusters/{cluster}")
            for verb in (["links", "ls"], ["mirrors", "ls", "--link", "L"],
                         ["kafka-mirrors", "--list"], ["kafka-cluster-links", "--list"]):
                local = ok(run("--cluster", "east", *verb, "-j"))
                remote = ok(run("--cluster", "east", *verb, "--rest-url", printed, "-j"))
                assert json.loads(remote.stdout) == json.loads(local.stdout), verb
            api = server.url + "/kafka/v3/clusters"
            body = httpx.get(api, timeout=30).json()
            assert body["kind"] == "KafkaClusterList"
            assert [c["cluster_id"] for c in body["data"]] == ["east", "west"]
            one = httpx.get(api + "/west", timeout=30).json()
            assert (one["kind"], one["cluster_id"], one["metadata"]["self"]) == \
                ("KafkaCluster", "west", api + "/west")
        finally:
            server.stop()


@pytest.mark.parametrize("group", ["links", "mirrors", "topic", "group", "acls"])
def test_the_confluent_clis_list_is_ls(worlds, group):
    """confluent kafka link|mirror|topic|consumer group|acl list: ``list`` runs ``ls`` (the
    same output), is named in the group's help and is no command of its own."""
    data = worlds("w")
    same(worlds.run(data, "--cluster", "east", group, "list", "-j"),
         worlds.run(data, "--cluster", "east", group, "ls", "-j"))
    help_text = ok(worlds.run(data, group, "--help")).stdout
    assert "Aliases (the Confluent CLI's): ls: list." in help_text
    assert "\n  list " not in help_text
