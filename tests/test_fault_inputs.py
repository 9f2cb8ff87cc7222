"""Out-of-range inputs are refused with a usage error, and a refused command changes nothing.

- waits (``--interval``, ``--timeout``, ``--wait``, ``--refresh``) beyond core.durations'
  MAX_WAIT (100y) are usage errors instead of an OverflowError in time.sleep;
- ``pub --count`` / ``topic produce --count`` past core.counts' MAX_COUNT (exit 2) or past
  the free space of the data directory (exit 1) are refused before anything is written;
- a Nats-TTL whose expiry passes the int64 nanosecond clock is stored (expiry kept at the
  maximum) instead of an OverflowError in SQLite;
- a table of refused commands across verb families: the cluster databases' bytes are
  identical before and after (after a WAL checkpoint), the -wal file holds no commit, and
  the exit status is the documented one; read-only Kafka verbs create no tables.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections import namedtuple
from pathlib import Path

import pytest
from helpers import data_dir_bytes, doc, ok

from jetlink.core import counts
from jetlink.core.durations import (
    MAX_DURATION,
    MAX_WAIT,
    YEAR,
    DurationError,
    check_wait,
)
from jetlink.core.store import DataDir

BIG = "9223372036854775808"  # 2**63: one more than natscli's int64 --count


def wal_sizes(data: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in sorted(data.glob("*.db-wal"))}


def tables(data: Path, cluster: str) -> set[str]:
    conn = sqlite3.connect(data / f"{cluster}.db")
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        conn.close()


# -- waits -----------------------------------------------------------------------------------------


def test_check_wait_bounds():
    assert check_wait(MAX_WAIT) == MAX_WAIT
    with pytest.raises(DurationError, match=r"longest wait, 100y \(876000h0m0s\)"):
        check_wait(MAX_WAIT + 1)
    # the bound is below what time.sleep can take: about 292 years of int64 nanoseconds
    assert MAX_WAIT == 100 * YEAR < MAX_DURATION


@pytest.mark.parametrize(
    "args",
    [
        ["replicate", "--follow", "--interval", "2562047h"],
        ["replicate", "--follow", "--interval", "2562047h47m16.854775807s"],
        ["positions", "sync", "--follow", "--interval", "101y"],
        ["sub", "a.>", "--wait", "2562047h"],
        ["kv", "watch", "B", "--timeout", "101y"],
        ["dashboard", "--refresh", "2562047h"],
    ],
)
def test_wait_over_the_limit_is_a_usage_error(jl, args):
    r = jl(*args)
    assert r.exit_code == 2, r.output
    flag = args[-2]
    assert f"invalid value for {flag}: {args[-1]!r}" in r.output
    assert "longest wait, 100y (876000h0m0s)" in r.output
    assert "Traceback" not in r.output


def test_kafka_wait_over_the_limit_is_a_usage_error(jl):
    ok(jl("cluster", "add", "k", "--kind", "kafka"))
    r = jl("--cluster", "k", "topic", "consume", "t", "--follow", "--timeout", "2562047h")
    assert r.exit_code == 2, r.output
    assert "invalid value for --timeout: '2562047h'" in r.output
    r = jl("--cluster", "k", "mirrors", "promote", "--link", "L", "t", "--timeout", "200y")
    assert r.exit_code == 2, r.output
    assert "invalid value for --timeout: '200y'" in r.output


def test_wait_at_the_limit_sleeps(jl, monkeypatch):
    """100y itself is accepted: the pause reaches the sleep as 100 years of seconds."""
    slept = []

    def fake_sleep(seconds):
        slept.append(seconds)
        raise KeyboardInterrupt

    monkeypatch.setattr("jetlink.cli.replicate.sleep", fake_sleep)
    r = jl("replicate", "--follow", "--interval", "100y")
    assert r.exit_code == 130, r.output
    assert slept == [MAX_WAIT / 1e9]


def test_msg_ttl_past_the_int64_clock_is_stored(jl):
    """A Nats-TTL whose expiry passes year 2262 (int64 nanoseconds) is stored, its expiry
    kept at the maximum: no OverflowError from SQLite."""
    ok(jl("stream", "add", "S", "--subjects", "a.>", "--allow-msg-ttl", "--defaults"))
    for ttl in ("2562047h", "9223372036854775807"):
        r = jl("pub", "a.1", "x", "-H", f"Nats-TTL:{ttl}", "--json")
        assert r.exit_code == 0, r.output
        assert doc(r)["stream"] == "S"
    conn = sqlite3.connect(jl.data / "local.db")
    try:
        assert [r[0] for r in conn.execute("SELECT expires FROM msg_ttl")] == [2**63 - 1] * 2
    finally:
        conn.close()


# -- counts ----------------------------------------------------------------------------------------


def test_check_count_bounds():
    assert counts.check_count(counts.MAX_COUNT) == counts.MAX_COUNT
    with pytest.raises(counts.UsageError, match=r"more than the maximum 1,000,000,000"):
        counts.check_count(counts.MAX_COUNT + 1)


def test_check_space_uses_the_free_space(tmp_path, monkeypatch):
    Usage = namedtuple("Usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: Usage(10_000, 0, 10_000))
    per = 68 + counts.MSG_OVERHEAD  # 100 bytes a message
    assert counts.check_space(100, 68, tmp_path) == 100  # exactly fits
    with pytest.raises(counts.JetlinkError) as err:
        counts.check_space(101, 68, tmp_path / "not-yet")
    assert err.value.exit_code == 1
    assert str(err.value) == (
        f"--count 101: not enough free space: 101 messages of about {per} bytes need at least "
        f"10,100 bytes, more than the 10,000 bytes free for the data directory "
        f"{tmp_path / 'not-yet'}"
    )


@pytest.mark.parametrize("count", [BIG, str(counts.MAX_COUNT + 1)])
def test_pub_count_over_the_maximum(jl, count):
    ok(jl("stream", "add", "S", "--subjects", "a.>", "--defaults"))
    before = data_dir_bytes(jl.data, databases_only=True)
    r = jl("pub", "a.1", "x", "--count", count)
    assert r.exit_code == 2, r.output
    assert f"invalid value for --count: '{count}': more than the maximum 1,000,000,000" in r.output
    assert data_dir_bytes(jl.data, databases_only=True) == before


def test_pub_count_float_spelling_is_a_usage_error(jl):
    r = jl("pub", "a.1", "x", "--count", "1e23")
    assert r.exit_code == 2, r.output
    assert "--count" in r.output and "1e23" in r.output


def test_pub_count_past_the_free_space(jl, monkeypatch):
    ok(jl("stream", "add", "S", "--subjects", "a.>", "--defaults"))
    before = data_dir_bytes(jl.data, databases_only=True)
    Usage = namedtuple("Usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: Usage(1 << 20, 0, 1 << 20))
    r = jl("pub", "a.1", "x" * 100, "--count", "100000")
    assert r.exit_code == 1, r.output
    assert "--count 100,000: not enough free space" in r.output
    assert "1,048,576 bytes free" in r.output
    assert data_dir_bytes(jl.data, databases_only=True) == before
    # what fits is published
    r = jl("pub", "a.1", "x" * 100, "--count", "3", "--json")
    assert r.exit_code == 0, r.output
    assert [a["seq"] for a in doc(r)] == [1, 2, 3]


def test_topic_produce_count_bounds(jl, monkeypatch):
    ok(jl("cluster", "add", "k", "--kind", "kafka"))
    ok(jl("--cluster", "k", "topic", "create", "t"))
    before = data_dir_bytes(jl.data, databases_only=True)
    r = jl("--cluster", "k", "topic", "produce", "t", "v", "--count", BIG)
    assert r.exit_code == 2, r.output
    assert f"invalid value for --count: '{BIG}'" in r.output
    Usage = namedtuple("Usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: Usage(1 << 20, 0, 1 << 20))
    r = jl("--cluster", "k", "topic", "produce", "t", "v" * 100, "--count", "100000")
    assert r.exit_code == 1, r.output
    assert "not enough free space" in r.output
    assert data_dir_bytes(jl.data, databases_only=True) == before


# -- refused commands change nothing ---------------------------------------------------------------


@pytest.fixture
def world(jl):
    """A NATS cluster ``local`` (streams S, D, a KV bucket, a consumer) and two Kafka
    clusters: ``k`` with a topic and ``kk`` never used for Kafka yet, without the Kafka
    tables (as a data directory of an earlier jetlink holds it: ``cluster add`` makes them
    now)."""
    ok(jl("stream", "add", "S", "--subjects", "a.>", "--max-msg-size", "64",
          "--dupe-window", "1m", "--defaults"))
    ok(jl("pub", "a.1", "x", "-H", "Nats-Msg-Id:one"))
    ok(jl("stream", "add", "D", "--subjects", "d.>", "--max-msgs", "1", "--discard", "new",
          "--defaults"))
    ok(jl("pub", "d.1", "x"))
    ok(jl("consumer", "add", "S", "C", "--pull", "--defaults"))
    ok(jl("kv", "add", "B"))
    ok(jl("kv", "put", "B", "k", "v"))
    ok(jl("cluster", "add", "k", "--kind", "kafka"))
    ok(jl("--cluster", "k", "topic", "create", "t"))
    dd = DataDir(jl.data)
    dd.add_cluster("kk", "kafka")
    dd.close()
    return jl


def test_cluster_add_creates_the_kafka_tables(jl):
    ok(jl("cluster", "add", "k2", "--kind", "kafka"))
    assert {"topics", "records", "partitions", "links", "mirrors"} <= tables(jl.data, "k2")


REFUSED = [
    # (command, exit status)
    (["pub", "a.1", "x" * 100], 1),  # max_msg_size
    (["pub", "a.1", "x", "-H", "Nats-Expected-Last-Sequence:99"], 1),
    (["pub", "a.1", "x", "-H", "Nats-Expected-Stream:OTHER"], 1),
    (["pub", "d.1", "x"], 1),  # discard new at max_msgs
    (["pub", "a.1", "x", "--count", BIG], 2),
    (["pub", "nowhere", "x"], 1),  # no stream captures the subject
    (["kv", "put", "B", "bad key!", "v"], 1),
    (["kv", "create", "B", "k", "v"], 1),  # exists
    (["kv", "add", "bad name"], 1),
    (["stream", "add", "S2", "--subjects", "a.>", "--defaults"], 1),  # overlaps S
    (["stream", "add", "bad.name", "--subjects", "z", "--defaults"], 1),
    (["stream", "edit", "S", "--subjects", "d.>", "-f"], 1),  # overlaps D
    (["consumer", "add", "S", "bad.name", "--pull", "--defaults"], 1),
    (["consumer", "add", "S", "C", "--pull", "--ack", "none", "--defaults"], 1),  # not updatable
    (["consumer", "add", "NOPE", "C2", "--pull", "--defaults"], 1),
    (["replicate", "--follow", "--interval", "101y"], 2),
    (["--cluster", "kk", "topic", "create", "bad/name"], 1),
    (["--cluster", "kk", "topic", "create", "t2", "--partitions", "0"], 2),  # kafka-topics'
    (["--cluster", "kk", "topic", "create", "t2", "--partitions", "1025"], 1),
    (["--cluster", "kk", "topic", "create", "t2", "--config", "cleanup.policy=nope"], 1),
    (["--cluster", "kk", "mirrors", "create", "t", "--link", "NOPE"], 1),
    (["--cluster", "kk", "links", "create", "L", "--source-cluster", "nope"], 1),
    (["--cluster", "kk", "links", "create", "L", "--source-cluster", "k",
      "--config", "link.mode=SIDEWAYS"], 1),
    (["--cluster", "kk", "topic", "produce", "t", "v"], 1),  # no such topic
    (["--cluster", "kk", "topic", "describe", "t"], 1),
    (["--cluster", "kk", "links", "describe", "L"], 1),
    (["--cluster", "kk", "mirrors", "describe", "t"], 1),
    (["--cluster", "k", "topic", "create", "t"], 1),  # exists
    (["--cluster", "k", "topic", "produce", "t", "v", "--count", BIG], 2),
]


@pytest.mark.parametrize(("args", "status"), REFUSED, ids=[" ".join(a)[:60] for a, _ in REFUSED])
def test_refused_command_changes_no_byte(world, args, status):
    before = data_dir_bytes(world.data, databases_only=True)
    kk_tables = tables(world.data, "kk")
    r = world(*args)
    assert r.exit_code == status, r.output
    assert "Traceback" not in r.output
    assert wal_sizes(world.data) in ({}, {k: 0 for k in wal_sizes(world.data)})
    assert tables(world.data, "kk") == kk_tables
    assert data_dir_bytes(world.data, databases_only=True) == before


READ_ONLY = [
    ["--cluster", "kk", "topic", "ls"],
    ["--cluster", "kk", "links", "ls"],
    ["--cluster", "kk", "mirrors", "ls"],
    ["--cluster", "kk", "group", "ls"],
]


@pytest.mark.parametrize("args", READ_ONLY, ids=[" ".join(a) for a in READ_ONLY])
def test_kafka_viewers_create_no_tables(world, args):
    before = data_dir_bytes(world.data, databases_only=True)
    r = world(*args, "--json")
    assert r.exit_code == 0, r.output
    assert data_dir_bytes(world.data, databases_only=True) == before


def test_first_kafka_write_creates_the_schema(world):
    """A valid command still creates the Kafka tables on first use (in its own
    transaction)."""
    assert "topics" not in tables(world.data, "kk")
    ok(world("--cluster", "kk", "topic", "create", "t2"))
    assert {"topics", "records", "partitions"} <= tables(world.data, "kk")
    assert "links" not in tables(world.data, "kk")  # made by the first link's write
    listed = doc(world("--cluster", "kk", "topic", "ls", "--json"))
    assert [t["topic_name"] for t in listed] == ["t2"]


@pytest.mark.parametrize("header", ["Nats-Expected-Last-Sequence:99",
                                    "Nats-Expected-Last-Msg-Id:nope",
                                    "Nats-Expected-Stream:OTHER"])
def test_refused_publish_after_the_dedupe_window_changes_nothing(jl, cli_clock, header):
    """A refused publish once the duplicate window has passed: the dedupe clean-up (and its
    timestamp) belongs to a publish that stores, so the refusal leaves every byte."""
    ok(jl("stream", "add", "S", "--subjects", "a.>", "--dupe-window", "1m", "--defaults"))
    ok(jl("pub", "a.1", "x", "-H", "Nats-Msg-Id:one"))
    cli_clock.advance_s(120)
    before = data_dir_bytes(jl.data, databases_only=True)
    r = jl("pub", "a.1", "y", "-H", header)
    assert r.exit_code == 1, r.output
    assert data_dir_bytes(jl.data, databases_only=True) == before
    # a publish that stores still drops the expired entries
    ok(jl("pub", "a.1", "z"))
    conn = sqlite3.connect(jl.data / "local.db")
    try:
        assert conn.execute("SELECT count(*) FROM dedupe").fetchone()[0] == 0
        assert conn.execute("SELECT dedupe_pruned_ns FROM streams").fetchone()[0] == \
            cli_clock.now_ns()
    finally:
        conn.close()


def test_create_schema_makes_every_kafka_component_once(dd):
    """What ``cluster add --kind kafka`` is to call (core/kafka/schema.py create_schema):
    all three components in one go; again it changes nothing."""
    from jetlink.core.kafka.schema import COMPONENTS, create_schema, has_components

    dd.add_cluster("k", "kafka")
    cl = dd.open("k")
    assert not has_components(cl, COMPONENTS)
    create_schema(cl)
    assert has_components(cl, COMPONENTS)
    with cl.read() as conn:
        versions = dict(conn.execute("SELECT component, version FROM schema_components "
                                     "WHERE component LIKE 'kafka%'"))
    assert set(versions) == set(COMPONENTS) and min(versions.values()) >= 1
    dd.close()
    before = data_dir_bytes(dd.path, databases_only=True)
    create_schema(dd.open("k"))
    dd.close()
    assert data_dir_bytes(dd.path, databases_only=True) == before


def test_viewer_of_a_cluster_without_kafka_tables(dd, clock):
    """The core API objects read an empty schema where the tables were never made, and
    make them with the first write that succeeds."""
    from jetlink.core.kafka.errors import KafkaError
    from jetlink.core.kafka.links import Links
    from jetlink.core.kafka.mirrors import Mirrors
    from jetlink.core.kafka.topics import Kafka

    cl = dd.open("local")
    before = cl.table_names()
    kafka = Kafka(cl, clock)
    assert kafka.topics() == [] and kafka.groups() == [] and not kafka.has_topic("t")
    with pytest.raises(KafkaError):
        kafka.describe_topic("t")
    with pytest.raises(KafkaError):
        kafka.create_topic("t", partitions=0)
    assert Links(dd, "local", clock).list() == []
    assert Mirrors(dd, "local", clock).list() == []
    assert cl.table_names() == before
    kafka.create_topic("t")
    assert "topics" in cl.table_names() and "links" not in cl.table_names()
    assert [t.name for t in Kafka(cl, clock).topics()] == ["t"]


@pytest.mark.parametrize("args", [["bench", "pub", "--count", BIG],
                                  ["bench", "link", "--count", str(counts.MAX_COUNT + 1)]])
def test_bench_counts_are_bounded_too(jl, args):
    r = jl(*args)
    assert r.exit_code == 2, r.output
    assert "1<=x<=1000000000" in r.output


def test_apply_adds_a_kafka_cluster_with_its_tables(jl):
    """``jetlink apply`` adding a Kafka cluster makes its tables then (create_schema), so
    later refusals on it have nothing to create."""
    path = jl.tmp / "topology.toml"
    path.write_text('[clusters.kw]\nkind = "kafka"\n[clusters.nw]\n')
    r = jl("apply", str(path), "-f")
    assert r.exit_code == 0, r.output
    assert {"topics", "links", "mirrors"} <= tables(jl.data, "kw")
    assert "topics" not in tables(jl.data, "nw")


# -- hostile files and values: one line, never a traceback -----------------------------------------

def _one_line(result, code, text):
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    assert text in result.stdout + result.stderr, (result.stdout, result.stderr)


@pytest.mark.parametrize("name,body", [
    ("deep.json", "[" * 100_000),
    ("deep.toml", "a = " + "[" * 100_000),
    ("deep", "{" + '"a":{' * 100_000),
    # parsed whole, then too deep for what walks it (a copy of the object: recursion)
    ("deep900.json", '{"streams":{"S":{"subjects":["a"],"description":' + "[" * 900
     + "]" * 900 + "}}}"),
    ("deep100.toml", "[streams.S]\nsubjects = [\"a\"]\nmetadata = " + "[" * 100
     + "]" * 100 + "\n"),
])
@pytest.mark.parametrize("verb", ["validate", "apply"])
def test_a_document_nested_too_deeply_is_invalid_not_a_crash(jl, name, body, verb):
    path = jl.tmp / name
    path.write_text(body)
    kind = "TOML" if name.endswith(".toml") else "JSON"
    r = jl(verb, str(path), *(["--dry-run"] if verb == "apply" else []))
    _one_line(r, 3, f"{path}: invalid {kind}: nested too deeply")


def test_a_config_nested_deeper_than_python_recurses_is_one_line(jl):
    """A --config (or --source JSON) a thousand arrays deep: one error line naming the file
    (exit 1) or the option (a usage error, exit 2), nothing created."""
    path = jl.tmp / "d.json"
    path.write_text('{"name":"D","subjects":["d"],"metadata":' + "[" * 1000 + "]" * 1000 + "}")
    r = jl("stream", "add", "--config", str(path))
    _one_line(r, 1, f"jetlink: error: {path}: not a JSON document: nested too deeply (more "
                    "levels than a configuration ever has)")
    r = jl("stream", "add", "S", "--subjects", "s", "--defaults", "--source",
           '{"name":"X","x":' + "[" * 1000 + "]" * 1000 + "}")
    _one_line(r, 2, "invalid value for --source: not a JSON object: nested too deeply (more "
                    "levels than a configuration ever has)")
    assert doc(jl("stream", "ls", "-j")) == []


def test_a_stored_record_nested_too_deeply_is_one_line(jl):
    """A stored document a thousand arrays deep (written behind jetlink's back): reading it
    is one error line, exit 1, and the store is left as it was."""
    ok(jl("stream", "add", "S", "--subjects", "s", "--defaults"))
    conn = sqlite3.connect(jl.data / "local.db")
    with conn:
        conn.execute("UPDATE streams SET config = ?",
                     ('{"name":"S","subjects":["s"],"metadata":' + "[" * 1000 + "]" * 1000
                      + "}",))
    conn.close()
    before = data_dir_bytes(jl.data)
    r = jl("stream", "info", "S")
    _one_line(r, 1, "jetlink: error: a JSON document read is nested too deeply (more levels "
                    "than a configuration ever has)")
    assert data_dir_bytes(jl.data) == before


def test_a_recursion_error_outside_json_is_a_bug_not_a_deep_document(tmp_path):
    """Only the json package's own RecursionError is a document nested too deeply: any
    other is a bug, left to raise with its traceback (never hidden behind that line)."""
    from jetlink.cli.launch import command_error

    def down(n: int) -> int:
        return down(n + 1) + 1

    with pytest.raises(RecursionError) as raised:
        down(0)
    assert command_error(raised.value, tmp_path, []) is None
    with pytest.raises(RecursionError) as raised:
        json.loads("[" * 100_000)
    err = command_error(raised.value, tmp_path, [])
    assert err is not None and "nested too deeply" in err.description


@pytest.mark.parametrize("content", [bytes(range(256)) * 4, b'{"url":' * 100_000])
def test_a_broken_natscli_context_is_one_line(jl, content, monkeypatch):
    ctx_dir = jl.tmp / "nats-config" / "nats" / "context"
    ctx_dir.mkdir(parents=True)
    (ctx_dir / "bad.json").write_bytes(content)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(jl.tmp / "nats-config"))
    r = jl("--nats-context", "bad", "stream", "ls")
    _one_line(r, 1, f"natscli context {ctx_dir / 'bad.json'} is not ")


def test_an_export_to_a_place_that_cannot_hold_it_is_one_line(jl):
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(jl("pub", "orders.a", "x"))
    r = jl("stream", "export", "ORDERS", "parquet:/proc/jetlink-nowhere")
    _one_line(r, 1, "jetlink: error: cannot write /proc/jetlink-nowhere: Cannot create "
                    "directory")
    r = jl("stream", "import", "COPY", "parquet:/proc/jetlink-nowhere")
    assert r.exit_code == 1 and "Traceback" not in r.stderr


def test_a_lake_location_that_does_not_open_is_one_line(jl):
    """A scheme no pyarrow filesystem knows is a usage error (2); one it knows whose
    filesystem does not load (HDFS without its JVM and libhdfs here) is one line with what
    to set (1), not pyarrow's list of every place it looked."""
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    for verb in (["stream", "export", "ORDERS"], ["stream", "import", "COPY"]):
        r = jl(*verb, "parquet:foo://x")
        _one_line(r, 2, "jetlink: error: foo://x: unsupported dataset location: "
                        "Unrecognized filesystem type in URI: foo://x")
        r = jl(*verb, "parquet:hdfs://127.0.0.1:1/x")
        _one_line(r, 1, "jetlink: error: hdfs://127.0.0.1:1/x: cannot open the dataset "
                        "location: ")
        assert "(pyarrow's HDFS filesystem loads the JVM and libhdfs: set JAVA_HOME, " \
            "HADOOP_HOME and CLASSPATH, or ARROW_LIBHDFS_DIR)" in r.stderr
        assert r.stderr.count("\n") == 1, r.stderr
    assert jl("stream", "ls", "-n").stdout == "ORDERS\n"  # no COPY made


def test_a_huge_random_template_is_refused_before_it_is_built(jl):
    ok(jl("stream", "add", "T", "--subjects", "t.>", "--defaults"))
    # refused by its size: building 100 GB first would fail with a MemoryError, not this
    r = jl("pub", "t.x", "{{Random 99999999999 99999999999}}", "-j")
    assert "Random 99999999999 99999999999: at most 67,108,864 characters" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("args", [
    ["--timeout", "5", "-s", "nats://127.0.0.1:4222", "stream", "ls"],
    ["kv", "watch", "CFG", "--timeout", "1"],
    ["positions", "sync", "--follow", "--interval", "5"],
    ["replicate", "--follow", "--interval", "5"],
    ["dashboard", "--refresh", "2", "--json"],
])
def test_every_duration_needs_its_unit(jl, args):
    """natscli's rule, one for every duration flag (docs/comparison.md "Durations")."""
    r = jl(*args)
    assert r.exit_code == 2, (args, r.stdout, r.stderr)
    assert "missing unit" in r.stdout + r.stderr


RULE = "tokens separated by '.', none empty, no spaces or tabs, '>' only as the last token"


@pytest.mark.parametrize(("args", "status", "line"), [
    (["stream", "view", "S", "--subject", "a b"], 2,
     f"jetlink: error: --subject: subject 'a b' is not valid: {RULE}"),
    (["stream", "view", "S", "--subject", "a.>.b"], 2,
     f"jetlink: error: --subject: subject 'a.>.b' is not valid: {RULE}"),
    (["stream", "subjects", "S", "a..b"], 2,
     f"jetlink: error: FILTER: subject 'a..b' is not valid: {RULE}"),
    (["pub", "a b", "hi"], 1,
     f"jetlink: error: nats: invalid subject: subject 'a b' is not valid: {RULE}"),
    (["pub", "s.>", "hi"], 1,
     "jetlink: error: nats: invalid subject: subject 's.>' has a wildcard token ('*' or '>'): "
     "a message's subject has none"),
    (["sub", "a..b"], 1,
     f"jetlink: error: nats: invalid subject: subject 'a..b' is not valid: {RULE}"),
])
def test_a_bad_subject_or_filter_is_one_line_naming_it_and_the_rule(jl, args, status, line):
    """No traceback, whatever the backend would have made of the filter; --json: one
    document on stdout (the client's own text, as nats.go's, without the detail)."""
    ok(jl("stream", "add", "S", "--subjects", "s.>", "--defaults"))
    ok(jl("pub", "s.1", "x"))
    before = data_dir_bytes(jl.data)
    r = jl(*args)
    assert (r.exit_code, r.stderr) == (status, line + "\n")
    assert data_dir_bytes(jl.data) == before
    r = jl(*args, "-j")
    assert r.exit_code == status and list(json.loads(r.stdout)) == ["error"]


@pytest.mark.parametrize(("args", "status", "line"), [
    (["consumer", "add", "S", "bad name", "--defaults"], 1,
     "jetlink: error: consumer name can not contain '.', '*', '>', '\\', '/' (10052): name = "
     '"bad name" holds a space'),
    (["stream", "rmm", "S", "99", "-f"], 1,
     "jetlink: error: stream store EOF (10057): message 99: the last sequence of stream S "
     "is 1"),
    (["kv", "failover", "CGF", "-f"], 1,
     "jetlink: error: bucket not found (10059): CGF; did you mean CFG?"),
    (["stream", "purge", "S", "-f", "--seq", "2000000000000"], 2,
     "jetlink: error: sequence 2000000000000 is beyond jetlink's limit 1099511627776 (the "
     "engine stores at most 2^40 sequences)"),
    (["stream", "add", "Z", "--subjects", "z", "--max-msg-size", "1.5MB", "--defaults"], 2,
     "jetlink: error: invalid value for --max-msg-size: '1.5MB': bytes are a whole number "
     "ending in B, K, KB, KiB, M, MB, MiB, G, GB, GiB, T, TB or TiB (all 1024-based), or -1 "
     "for unlimited"),
])
def test_refusals_name_the_value(jl, args, status, line):
    """Each refusal names what was wrong (its value, the name not found and the closest one,
    the sequence past the end) and changes nothing."""
    ok(jl("stream", "add", "S", "--subjects", "s.>", "--defaults"))
    ok(jl("pub", "s.1", "x"))
    ok(jl("kv", "add", "CFG"))
    before = data_dir_bytes(jl.data)
    r = jl(*args)
    assert r.exit_code == status
    if r.stderr.startswith("Usage:"):  # refused by the option's type as it was parsed:
        # click's own form here (the installed command writes it "jetlink: error: ...")
        assert r.stderr.splitlines()[-1] == "Error: " + line.removeprefix("jetlink: error: ")
    else:
        assert r.stderr == line + "\n"
    assert data_dir_bytes(jl.data) == before


@pytest.mark.parametrize("args", [
    ["stream", "get", "S", str(1 << 64)],
    ["stream", "rmm", "S", str(1 << 64), "-f"],
    ["stream", "purge", "S", "-f", "--seq", str(1 << 64)],
    ["stream", "purge", "S", "-f", "--keep", str(1 << 64)],
    ["stream", "view", "S", "--id", str(1 << 64)],
])
def test_a_sequence_past_uint64_is_a_usage_error_on_every_backend(jl, args):
    """A stream sequence is the server's uint64: one past it is refused before anything is
    asked (a live server would answer with its JSON decoder's text), exit 2."""
    ok(jl("stream", "add", "S", "--subjects", "s.>", "--defaults"))
    before = data_dir_bytes(jl.data)
    r = jl(*args)
    assert r.exit_code == 2
    assert f"{1 << 64} is not in the range" in r.stdout + r.stderr
    assert data_dir_bytes(jl.data) == before


@pytest.mark.parametrize(("args", "flag", "value", "why"), [
    (["kv", "add", "B", "--max-value-size"], "--max-value-size", "abc",
     "bytes are a whole number ending in B, K, KB, KiB, M, MB, MiB, G, GB, GiB, T, TB or TiB "
     "(all 1024-based), or -1 for unlimited"),
    (["kv", "add", "B", "--max-bucket-size"], "--max-bucket-size", "1XB",
     "bytes are a whole number ending in B, K, KB, KiB, M, MB, MiB, G, GB, GiB, T, TB or TiB "
     "(all 1024-based), or -1 for unlimited"),
    (["stream", "add", "S", "--max-msg-size"], "--max-msg-size", "3GB",
     "maximum is 2,147,483,647"),
])
def test_a_bad_size_is_refused_as_the_command_line_is_read(tmp_path, monkeypatch, capsys,
                                                          args, flag, value, why):
    """As a bad duration: refused by the option's type before anything runs (no prompt
    for a stream's subjects, no data directory made), with the way to the help."""
    from jetlink.cli.main import run

    monkeypatch.setenv("JETLINK_DATA_DIR", str(tmp_path / "data"))
    with pytest.raises(SystemExit) as exc:
        run([*args, value])
    assert exc.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        f"jetlink: error: invalid value for {flag}: {value!r}: {why}",
        f"Try 'jetlink {' '.join(args[:2])} -h' for help."]
    assert not (tmp_path / "data").exists()
