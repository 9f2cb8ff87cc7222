"""``jetlink cluster add|ls|rm`` and ``--cluster`` addressing, in a temporary data directory."""

from __future__ import annotations

import json

import pytest
from helpers import data_dir_bytes, ok


def _without_created(docs):
    return [{k: v for k, v in d.items() if k != "created"} for d in docs]


def _says_the_directory_is_missing(jl, args):
    result = jl(*args)
    assert result.exit_code == 1, (args, result.output)
    assert result.stderr == (f"jetlink: error: data directory {jl.data} does not exist "
                             "(nothing to read or act on: the first command that creates "
                             "something makes it)\n")


def test_local_is_created_by_the_first_write_never_by_a_read(jl):
    jl.data.rmdir()
    for args in (["cluster", "ls"], ["stream", "ls"], ["kv", "ls"], ["stream", "info", "X"],
                 ["stream", "state", "X"], ["kv", "status", "B"], ["counter", "list", "S"],
                 ["spark", "verify", "store:a", "store:b"], ["stream", "failover", "X", "-f"],
                 ["kv", "promote", "B", "-f"], ["dr", "failover", "--from", "west", "-f"],
                 ["dr", "fence", "--from", "west", "-f"], ["mirrors", "pause", "t", "-l", "l"],
                 ["cluster", "check"], ["replicate"], ["positions", "sync"],
                 ["replicate", "--follow", "--interval", "1s"]):
        _says_the_directory_is_missing(jl, args)
    assert not jl.data.exists()
    jl.data.mkdir()
    # An existing directory without the default cluster: read as an empty one, not made.
    assert jl("stream", "ls").stdout == "No Streams defined\n"
    for args in (["stream", "state", "X"], ["kv", "status", "B"], ["counter", "list", "S"]):
        assert jl(*args).exit_code == 1
    assert json.loads(jl("cluster", "ls", "-j").stdout) == []
    assert not (jl.data / "local.db").exists()
    # nor by a copy between objects that exist (none here)
    assert jl("replicate").stdout == "No mirrors or sources to replicate\n"
    assert jl("positions", "sync").stdout == "No mirror to sync on this side\n"
    assert not (jl.data / "local.db").exists()
    jl.data.rmdir()
    result = jl("stream", "add", "S", "--subjects", "s.>", "--defaults")
    assert result.exit_code == 0, result.output
    assert _without_created(json.loads(jl("cluster", "ls", "--json").stdout)) == [
        {"name": "local", "kind": "nats", "down": False, "path": str(jl.data / "local.db")}
    ]
    assert oct(jl.data.stat().st_mode & 0o777) == "0o700"
    typo = jl("cluster", "check", "lcal")
    assert (typo.exit_code, typo.stderr) == (
        1, "jetlink: error: cluster lcal not found: did you mean local?\n")


def test_add_ls_rm(jl):
    result = jl("cluster", "add", "east", "-j")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert list(doc) == ["name", "kind", "down", "path", "created"]
    assert (doc["name"], doc["kind"], doc["down"]) == ("east", "nats", False)

    assert jl("cluster", "add", "links", "--kind", "kafka").stdout == "Cluster links was created\n"
    # local is made by the first write to it (a read creates nothing)
    assert jl("cluster", "ls", "--names").stdout == "east\nlinks\n"
    listed = _without_created(json.loads(jl("cluster", "ls", "-j").stdout))
    assert [(c["name"], c["kind"]) for c in listed] == [
        ("east", "nats"),
        ("links", "kafka"),
    ]

    human = jl("cluster", "ls")
    assert human.exit_code == 0
    assert "│ east  │ nats  │ up     │" in human.stdout

    removed = jl("cluster", "rm", "east", "-f", "-j")
    assert (removed.exit_code, json.loads(removed.stdout)) == (0, {"success": True})
    assert not (jl.data / "east.db").exists()
    assert jl("cluster", "rm", "links", "--force").stdout == "Cluster links was removed\n"
    assert jl("cluster", "ls", "-n").stdout == ""


def test_add_twice_is_an_error(jl):
    jl("cluster", "add", "east")
    result = jl("cluster", "add", "east")
    assert result.exit_code == 1
    assert result.stderr == "jetlink: error: cluster east already exists\n"


@pytest.mark.parametrize("name", ["../escape", "a/b", "x" * 65, "with space", ""])
def test_a_bad_global_cluster_is_a_usage_error(jl, name):
    """--cluster NAME is checked by the cluster-name rule before any command runs: exit 2,
    the value and the rule named, no file created."""
    result = jl("--cluster", name, "stream", "ls", "-j")
    assert result.exit_code == 2, result.output
    assert json.loads(result.stdout) == {"error": {"description": (
        f"--cluster: invalid cluster name {name!r}: use 1 to 64 letters, digits, '_' or '-'"
    )}}
    assert list(jl.data.iterdir()) == []


@pytest.mark.parametrize("name", ["../escape", "a/b", "x" * 65, "with space", ""])
def test_invalid_names_never_touch_the_filesystem(jl, name):
    for verb in (["add"], ["rm", "-f"], ["check"]):  # (wherever the name is typed)
        result = jl("cluster", verb[0], name, *verb[1:], "-j")
        assert result.exit_code == 2, verb  # a usage error, as the name given to --cluster
        assert json.loads(result.stdout)["error"]["description"].startswith(
            f"invalid cluster name {name!r}"
        ), verb
    assert (
        not any(p.name != "local.db" and p.suffix == ".db" for p in jl.data.glob("*"))
        if jl.data.exists()
        else True
    )
    assert not (jl.data.parent / "escape.db").exists()


@pytest.mark.parametrize("args", [
    ["pub", "a", "b"], ["pub", "a", "b", "--core"], ["stream", "rm", "S", "-f"],
    ["stream", "purge", "S", "-f"], ["stream", "edit", "S", "--max-msgs", "1", "-f"],
    ["consumer", "next", "S", "C"], ["consumer", "rm", "S", "C", "-f"],
    ["kv", "put", "B", "k", "v"], ["kv", "del", "B", "k", "-f"],
    ["counter", "increment", "c.a", "1"], ["cluster", "down", "west"],
    ["topic", "rm", "t", "-f"], ["topic", "alter", "t", "--partitions", "3"],
    ["group", "set-offsets", "g", "--topic", "t", "--to-earliest"],
])
def test_a_change_to_an_object_in_a_missing_data_directory_creates_nothing(jl, args):
    """A verb that changes an object that must exist (a misspelt --data-dir in a cron job):
    the missing directory said, as a read says it; nothing made, not even the directory."""
    jl.data.rmdir()
    _says_the_directory_is_missing(jl, args)
    assert not jl.data.exists()
    jl.data.mkdir()


def test_bad_kind_is_a_usage_error(jl):
    result = jl("cluster", "add", "east", "--kind", "pulsar")
    assert result.exit_code == 2
    assert "Invalid value for '--kind'" in result.stderr


def test_rm_refuses_without_terminal_and_force(jl):
    jl("cluster", "add", "east")
    result = jl("cluster", "rm", "east")
    assert result.exit_code == 2
    assert (
        result.stderr
        == "jetlink: error: no terminal to confirm on: pass -f/--force to remove cluster east\n"
    )
    assert (jl.data / "east.db").exists()
    as_json = jl("cluster", "rm", "east", "-j")
    assert as_json.exit_code == 2
    assert json.loads(as_json.stdout) == {
        "error": {
            "description": "no terminal to confirm on: pass -f/--force to remove cluster east"
        }
    }


def test_rm_asks_on_a_terminal(jl, monkeypatch):
    jl("cluster", "add", "east")
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: True)
    declined = jl("cluster", "rm", "east", input="n\n")
    assert declined.exit_code == 1
    assert "Really remove cluster east and all its data [y/N]:" in declined.stderr
    assert declined.stderr.endswith("jetlink: error: aborted: did not remove cluster east\n")
    assert (jl.data / "east.db").exists()
    accepted = jl("cluster", "rm", "east", input="y\n")
    assert accepted.exit_code == 0
    assert accepted.stdout.endswith("Cluster east was removed\n")  # CliRunner echoes the answer
    assert not (jl.data / "east.db").exists()


def test_rm_names_the_copies_other_clusters_make_of_it(jl, monkeypatch):
    """Removing an origin cluster names, before the question, what other clusters copy from
    it (mirrors, sources, KV mirrors, mirror topics): they stop replicating."""
    for args in (["cluster", "add", "west"], ["cluster", "add", "east"],
                 ["cluster", "add", "kw", "--kind", "kafka"],
                 ["cluster", "add", "ke", "--kind", "kafka"],
                 ["--cluster", "west", "stream", "add", "ORDERS", "--subjects", "orders.>",
                  "--defaults"],
                 ["--cluster", "east", "stream", "add", "BACKUP", "--mirror", "ORDERS@west",
                  "--defaults"],
                 ["--cluster", "east", "stream", "add", "AGG", "--source", "ORDERS@west",
                  "--subjects", "agg.>", "--defaults"],
                 ["--cluster", "west", "kv", "add", "CFG"],
                 ["--cluster", "east", "kv", "add", "CFGM", "--mirror", "CFG@west"],
                 ["--cluster", "kw", "topic", "create", "orders"],
                 ["--cluster", "ke", "links", "create", "L", "--source-cluster", "kw"],
                 ["--cluster", "ke", "mirrors", "create", "orders", "--link", "L"]):
        assert jl(*args).exit_code == 0, args
    # refused without a terminal: no warning, only the refusal
    refused = jl("cluster", "rm", "west")
    assert refused.stderr == ("jetlink: error: no terminal to confirm on: pass -f/--force to "
                              "remove cluster west\n")
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: True)
    declined = jl("cluster", "rm", "west", input="n\n")
    assert declined.exit_code == 1
    assert declined.stderr.startswith(
        "jetlink: warning: 3 mirrors and sources in other clusters copy from cluster west and "
        "stop replicating once it is gone (jetlink dr check reports them): AGG@east (sources "
        "ORDERS), BACKUP@east (mirror of ORDERS), CFGM@east (mirror of CFG)\nReally remove "
        "cluster west and all its data [y/N]:")
    assert (jl.data / "west.db").exists()
    topic = jl("cluster", "rm", "kw", "-f", "-j")
    assert (topic.exit_code, json.loads(topic.stdout)) == (0, {"success": True})
    assert topic.stderr == (
        "jetlink: warning: 1 mirror or source in other clusters copies from cluster kw and "
        "stops replicating once it is gone (jetlink dr check reports it): L/orders@ke (mirror "
        "topic of orders)\n")
    quiet = jl("cluster", "rm", "east", "-f")
    assert (quiet.exit_code, quiet.stderr) == (0, "")
    gone = jl("cluster", "rm", "west", "-f")  # its readers went with east
    assert (gone.exit_code, gone.stderr) == (0, "")


def test_rm_unknown_cluster(jl):
    result = jl("cluster", "rm", "nope", "-f")
    assert (result.exit_code, result.stderr) == (1, "jetlink: error: cluster nope not found\n")


def test_global_cluster_option_addresses_another_database(jl):
    unknown = jl("--cluster", "east", "stream", "ls", "-j")
    assert unknown.exit_code == 1
    assert json.loads(unknown.stdout) == {"error": {"description": "cluster east not found"}}
    jl("cluster", "add", "east")
    added = jl("--cluster", "east", "stream", "add", "E", "--subjects", "e.>", "--defaults", "-j")
    assert added.exit_code == 0, added.output
    assert json.loads(jl("--cluster", "east", "stream", "ls", "-j").stdout) == ["E"]
    assert json.loads(jl("stream", "ls", "-j").stdout) == []


@pytest.mark.parametrize(("name", "names", "hint"), [
    ("WEST", ["west", "east"], "did you mean west?"),   # only the case differs
    ("wset", ["west", "east"], "did you mean west?"),   # a typo (difflib)
    ("esat", ["west", "east"], "did you mean east?"),   # two letters swapped: one edit
    ("esat", ["east", "west"], "did you mean east?"),   # whatever the order
    # one edit from both: the swap (same letters) before the other letter (a runbook's
    # --bootstrap-server kaest:9092 meant the DR side, not the source)
    ("kaest", ["kwest", "keast"], "did you mean keast?"),
    ("kaest", ["keast", "kwest"], "did you mean keast?"),
    ("ORDRES", ["ORDERS", "ORDERS_EAST"], "did you mean ORDERS?"),
    ("Orders", ["ORDERS", "orders"], "did you mean orders?"),
    ("north", ["west", "east"], None),
    ("dx", ["dr", "west"], "did you mean dr?"),         # short: one edit is close
    ("kz", ["kw", "east"], "did you mean kw?"),
    ("x", ["y"], None),                                 # one character: no guess
    ("dxy", ["dr"], None),                              # two edits away
    ("west", ["west"], None),                           # the name itself is no suggestion
])
def test_the_one_suggestion_rule(name, names, hint):
    from jetlink.core.errors import did_you_mean

    assert did_you_mean(name, names) == hint


def test_a_long_cluster_or_context_name_is_quoted_cut(jl):
    """A 100,000-character name is never echoed in full (core/errors.py clip)."""
    r = jl("--cluster", "c" * 100_000, "stream", "ls")  # (a usage error too)
    assert r.exit_code == 2 and len(r.stderr) < 300 and "(100,000 characters)" in r.stderr
    r = jl("context", "add", "x" * 100_000)  # (a usage error: the name is the argument's)
    assert r.exit_code == 2 and len(r.stderr) < 300 and "(100,000 characters)" in r.stderr


def test_a_stream_of_another_cluster_is_named_with_the_option_that_reaches_it(jl):
    """A forgotten --cluster: the stream not found where the command looked is said to be
    held by the other clusters that hold it; the JSON document stays the server's."""
    for c in ("west", "east"):
        assert jl("cluster", "add", c).exit_code == 0
        assert jl("--cluster", c, "stream", "add", "ORDERS", "--subjects", "o.>",
                  "--defaults").exit_code == 0
    r = jl("stream", "info", "ORDERS")
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: stream not found (10059): ORDERS; cluster east and cluster west "
        "hold a stream ORDERS: give --cluster east (before the command)\n"))
    r = jl("stream", "info", "ORDERS", "-j")
    assert json.loads(r.stdout) == {"error": {"code": 404, "err_code": 10059,
                                              "description": "stream not found"}}
    r = jl("--cluster", "west", "stream", "rm", "ORDER", "-f")  # a close name: that hint
    assert r.stderr == "jetlink: error: stream not found (10059): ORDER; did you mean ORDERS?\n"
    # ... unless the exact name is elsewhere: that wins (a destructive verb must not steer
    # to another stream)
    ok(jl("stream", "add", "RETURNS", "--subjects", "r.>", "--defaults"))
    for args in (["stream", "info", "ORDERS"], ["stream", "rm", "ORDERS", "-f"],
                 ["consumer", "add", "ORDERS", "c1", "--defaults"]):
        r = jl(*args)
        assert (r.exit_code, r.stderr) == (1, (
            "jetlink: error: stream not found (10059): ORDERS; cluster east and cluster west "
            "hold a stream ORDERS: give --cluster east (before the command)\n")), args


def test_a_kafka_object_of_another_cluster_is_named_with_the_option_that_reaches_it(jl):
    """A cluster link, topic or consumer group not found where the command looked (a runbook
    line run on the source side): the Kafka cluster that holds it is said, with the option;
    the JSON document stays Kafka's and nothing is written anywhere."""
    for c in ("kwest", "keast"):
        ok(jl("cluster", "add", c, "--kind", "kafka"))
    ok(jl("cluster", "add", "nwest"))
    ok(jl("--cluster", "kwest", "topic", "create", "orders", "--partitions", "2"))
    ok(jl("--cluster", "kwest", "topic", "produce", "orders", "a"))
    ok(jl("--cluster", "kwest", "topic", "consume", "orders", "--group", "billing",
          "--from-beginning"))
    ok(jl("--cluster", "keast", "links", "create", "dr", "--source-cluster", "kwest"))
    before = data_dir_bytes(jl.data)
    for args, said in (
            (["--cluster", "kwest", "mirrors", "failover", "orders", "--link", "dr"],
             "Cluster link 'dr' not found (CLUSTER_LINK_NOT_FOUND 10000): cluster keast holds "
             "a cluster link dr: give --cluster keast (before the command)"),
            (["--cluster", "keast", "group", "describe", "billing"],
             "Consumer group 'billing' does not exist. (GROUP_ID_NOT_FOUND 69): cluster kwest "
             "holds a consumer group billing: give --cluster kwest (before the command)"),
            (["--cluster", "keast", "topic", "describe", "orders"],
             "Topic 'orders' does not exist as expected (UNKNOWN_TOPIC_OR_PARTITION 3): cluster "
             "kwest holds a topic orders: give --cluster kwest (before the command)"),
            # a closer name here: that hint, not another cluster's
            (["--cluster", "kwest", "topic", "describe", "orderz"],
             "Topic 'orderz' does not exist as expected (UNKNOWN_TOPIC_OR_PARTITION 3): did you "
             "mean orders?")):
        r = jl(*args)
        assert (r.exit_code, r.stderr) == (1, f"jetlink: error: {said}\n"), args
    r = jl("--cluster", "kwest", "links", "describe", "dr", "-j")
    assert json.loads(r.stdout) == {"error": {
        "error_code": 10000, "error_name": "CLUSTER_LINK_NOT_FOUND",
        "message": "Cluster link 'dr' not found"}}
    assert data_dir_bytes(jl.data) == before


def test_a_cluster_name_differing_only_in_case_is_refused(jl):
    """WEST.db beside west.db is one file on a case-insensitive filesystem: refused, the
    existing cluster untouched."""
    assert jl("cluster", "add", "west").exit_code == 0
    r = jl("cluster", "add", "WEST", "--kind", "kafka")
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: cluster WEST differs from cluster west only in case: their files "
        "would be one on a case-insensitive filesystem; choose another name\n"))
    assert [c["name"] for c in json.loads(jl("cluster", "ls", "-j").stdout)] == ["west"]
