"""``stream find``: jsm.go's stream query rules (core/streamquery.py) as a table over
StreamInfo documents, and the command on the embedded engine with exact output."""

from __future__ import annotations

import json
import re

import pytest
from helpers import ok

from jetlink.core.clock import format_rfc3339_nano
from jetlink.core.errors import JetlinkError, UsageError
from jetlink.core.queries import StreamQuery, pattern, query_streams

S = 1_000_000_000
NOW = 1_000_000 * S


def info(name, *, subjects=(), msgs=0, last_s=None, created_s=100, consumers=0,
         replicas=1, sources=None, mirror=None, cluster=None, level=None):
    cfg = {"name": name, "subjects": list(subjects), "num_replicas": replicas}
    if sources:
        cfg["sources"] = sources
    if mirror:
        cfg["mirror"] = mirror
    if level is not None:
        cfg["metadata"] = {"_nats.req.level": level}
    doc = {"config": cfg, "created": format_rfc3339_nano(NOW - created_s * S),
           "state": {"messages": msgs, "consumer_count": consumers,
                     "last_ts": format_rfc3339_nano(NOW - last_s * S if last_s is not None
                                                    else 0)}}
    if cluster is not None:
        doc["cluster"] = cluster
    return doc


STREAMS = [
    info("ORDERS", subjects=["orders.>"], msgs=5, last_s=10, created_s=3600, consumers=2,
         replicas=3, cluster={"name": "east", "leader": "n1",
                              "replicas": [{"name": "n2"}, {"name": "n3"}]}, level="1"),
    info("AUDIT", subjects=["orders.new", "audit.*"], msgs=1, last_s=7200, created_s=60,
         cluster={"name": "west", "leader": "w1"}),
    info("EMPTY", subjects=["empty"], created_s=10),
    info("COPY", mirror={"name": "ORDERS"}, msgs=5, last_s=10, consumers=1),
    info("AGG", subjects=["agg"], sources=[{"name": "ORDERS"}], msgs=3, last_s=30,
         replicas=3),
]

# (criteria, found, found with invert): jsm.go's QueryStreams matchers one by one
CASES = [
    ({}, "ORDERS AUDIT EMPTY COPY AGG", "ORDERS AUDIT EMPTY COPY AGG"),
    ({"empty": True}, "EMPTY", "ORDERS AUDIT COPY AGG"),
    # idle: the last message more than that long ago; an empty stream's is Go's zero time
    ({"idle_ns": 60 * S}, "AUDIT EMPTY", "ORDERS COPY AGG"),
    ({"idle_ns": 30 * S}, "AUDIT EMPTY", "ORDERS COPY AGG"),  # 30 s ago is not > 30 s
    # created at least that long ago (inverted: at most, the bound in both)
    ({"created_ns": 60 * S}, "ORDERS AUDIT COPY AGG", "AUDIT EMPTY"),
    # at most that many consumers (inverted: at least)
    ({"consumers": 1}, "AUDIT EMPTY COPY AGG", "ORDERS COPY"),
    ({"consumers": 0}, "AUDIT EMPTY AGG", "ORDERS AUDIT EMPTY COPY AGG"),
    ({"replicas": 1}, "AUDIT EMPTY COPY", "ORDERS AUDIT EMPTY COPY AGG"),
    ({"replicas": 3}, "ORDERS AUDIT EMPTY COPY AGG", "ORDERS AGG"),
    ({"sourced": True}, "AGG", "ORDERS AUDIT EMPTY COPY"),
    ({"mirrored": True}, "COPY", "ORDERS AUDIT EMPTY AGG"),
    # one subject within the filter (nats-server's subset rule); inverted: one outside it;
    # a mirror has no subject: never found
    ({"subject": "orders.>"}, "ORDERS AUDIT", "AUDIT EMPTY AGG"),
    ({"subject": "orders.*"}, "AUDIT", "ORDERS AUDIT EMPTY AGG"),
    ({"subject": ">"}, "ORDERS AUDIT EMPTY AGG", ""),
    # regular expressions searched (Go's MatchString), on the cluster's name, on its leader
    # and replicas; no cluster information: no match
    ({"cluster": re.compile("e")}, "ORDERS AUDIT", "EMPTY COPY AGG"),
    ({"cluster": re.compile("^east$")}, "ORDERS", "AUDIT EMPTY COPY AGG"),
    ({"server": re.compile("n3")}, "ORDERS", "AUDIT EMPTY COPY AGG"),
    ({"server": re.compile("^w")}, "AUDIT", "ORDERS EMPTY COPY AGG"),
    # the leader: streams without cluster information are never found, inverted or not
    ({"leader": "n1"}, "ORDERS", "AUDIT"),
    # the API level the stream needs (_nats.req.level, 0 when absent) at least that
    ({"api_level": 1}, "ORDERS", "AUDIT EMPTY COPY AGG"),
    ({"api_level": 2}, "", "ORDERS AUDIT EMPTY COPY AGG"),
    # every criterion must hold
    ({"empty": True, "subject": ">"}, "EMPTY", ""),
    ({"empty": True, "subject": "orders.>"}, "", "AUDIT AGG"),
    ({"replicas": 1, "consumers": 0, "idle_ns": 60 * S}, "AUDIT EMPTY", "ORDERS COPY AGG"),
]


@pytest.mark.parametrize(("criteria", "found", "inverted"), CASES)
def test_the_stream_query_rules(criteria, found, inverted):
    def names(q):
        return " ".join(i["config"]["name"] for i in query_streams(STREAMS, q, now_ns=NOW))

    assert names(StreamQuery(**criteria)) == found
    assert names(StreamQuery(**criteria, invert=True)) == inverted


def test_bad_criteria_are_named():
    with pytest.raises(UsageError, match=r"--cluster '\(' is not a regular expression"):
        pattern("(", field="--cluster")
    assert pattern("", field="--cluster") is None  # jsm.go: an empty one is left out
    bad = [info("ODD", subjects=["odd"], level="two")]
    with pytest.raises(JetlinkError, match="invalid _nats.req.level metadata value 'two' of "
                       "stream 'ODD'"):
        query_streams(bad, StreamQuery(api_level=1), now_ns=NOW)
    assert query_streams(bad, StreamQuery(), now_ns=NOW) == bad  # asked only when used


def test_stream_find_on_the_engine(jl, cli_clock, utc):
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(jl("stream", "add", "COPY", "--mirror", "ORDERS", "--defaults"))
    ok(jl("stream", "add", "EMPTY", "--subjects", "empty", "--defaults"))
    ok(jl("kv", "add", "B"))
    ok(jl("pub", "orders.a", "hello"))
    ok(jl("replicate"))
    cli_clock.advance_s(120)
    from helpers import data_dir_bytes

    before = data_dir_bytes(jl.data)
    assert ok(jl("stream", "find", "--mirrored", "-n")).stdout == "COPY\n"
    assert ok(jl("consumer", "find", "ORDERS")).stdout == ""
    assert data_dir_bytes(jl.data) == before  # the find verbs only read
    assert json.loads(ok(jl("stream", "find", "--mirrored", "--invert", "-j")).stdout) == [
        "EMPTY", "KV_B", "ORDERS"]  # every stream counts, the KV bucket's too
    assert ok(jl("stream", "find", "--empty", "--subject", ">", "-n")).stdout == \
        "EMPTY\nKV_B\n"
    assert ok(jl("stream", "find", "--idle", "1m", "--empty", "--invert", "-n")).stdout == ""
    # a duration of 0 is no criterion (natscli's flag test is > 0)
    assert ok(jl("stream", "find", "--idle", "0", "--created", "0", "-n")).stdout == \
        ok(jl("stream", "find", "-n")).stdout
    r = ok(jl("stream", "find", "--subject", "orders.>"))
    assert r.stdout.splitlines()[0].rstrip() == "Streams matching orders.>"
    assert re.search(r"│ ORDERS +│ +│ 2026-01-01 00:00:00 │ 1 +│ \d+ B │ 2m0s +│",
                     r.stdout), r.stdout
    assert ok(jl("stream", "find", "--sourced")).stdout == "No streams matched\n"
    # the list carries no cluster information on one server: --leader finds nothing there,
    # as natscli's does (a cluster's list has it: tests/live)
    assert ok(jl("stream", "find", "--leader", "local", "-n")).stdout == ""


@pytest.mark.parametrize(("args", "message"), [
    (["--cluster", "("], "--cluster '(' is not a regular expression: missing ), "
                         "unterminated subpattern at position 0"),
    (["--server-name", "a["], "--server-name 'a[' is not a regular expression"),
    (["--idle", "5"], "invalid value for --idle: '5': missing unit, e.g. 5s"),
    (["--created", "soon"], "invalid value for --created: 'soon'"),
    (["--replicas", "-1"], "Invalid value for '--replicas'"),
])
def test_stream_find_refuses_bad_criteria(jl, args, message):
    r = jl("stream", "find", *args)
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert message in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert r.stdout == ""


def cinfo(name, *, push=False, bound=False, waiting=0, ack=0, pending=0, created_s=100,
          last_s=None, replicas=0, cluster=None, level=None, policy=None, groups=(),
          pinned=()):
    cfg = {"name": name, "num_replicas": replicas}
    if push:
        cfg["deliver_subject"] = f"deliver.{name}"
    if level is not None:
        cfg["metadata"] = {"_nats.req.level": level}
    if policy:
        cfg["priority_policy"] = policy
        cfg["priority_groups"] = list(groups)
    doc = {"name": name, "config": cfg, "created": format_rfc3339_nano(NOW - created_s * S),
           "num_waiting": waiting, "num_ack_pending": ack, "num_pending": pending,
           "delivered": {"consumer_seq": 0, "stream_seq": 0}}
    if bound:
        doc["push_bound"] = True
    if last_s is not None:
        doc["delivered"]["last_active"] = format_rfc3339_nano(NOW - last_s * S)
    if pinned:
        doc["priority_groups"] = [{"group": g, "pinned_client_id": "id"} for g in pinned]
    if cluster is not None:
        doc["cluster"] = cluster
    return doc


CONSUMERS = [
    cinfo("PULL", waiting=2, ack=5, pending=100, created_s=3600, last_s=10, replicas=3,
          cluster={"name": "east", "leader": "n1"}, level="1"),
    cinfo("PUSH", push=True, bound=True, ack=1, pending=0, created_s=30, last_s=600),
    cinfo("IDLE", created_s=60),
    cinfo("PINNED", policy="pinned_client", groups=["a", "b"], pinned=["a", "b"], pending=5,
          last_s=59, replicas=1),
    cinfo("HALF", policy="pinned_client", groups=["a", "b"], pinned=["a"], waiting=1),
]

# (criteria, found, found with invert): jsm.go's QueryConsumers matchers one by one
CONSUMER_CASES = [
    ({}, "PULL PUSH IDLE PINNED HALF", "PULL PUSH IDLE PINNED HALF"),
    ({"pull": True}, "PULL IDLE PINNED HALF", "PUSH"),
    ({"push": True}, "PUSH", "PULL IDLE PINNED HALF"),
    # a bound push consumer, or waiting pulls
    ({"bound": True}, "PULL PUSH HALF", "IDLE PINNED"),
    # pinned_client consumers only: a client pinned in every group
    ({"pinned": True}, "PINNED", "HALF"),
    # some, and fewer than the bound (inverted: more); none: never found either way
    ({"ack_pending": 5}, "PUSH", ""),
    ({"ack_pending": 2}, "PUSH", "PULL"),
    ({"waiting": 2}, "HALF", ""),
    ({"pending": 50}, "PINNED", "PULL"),
    # created at least that long ago (inverted: less)
    ({"created_ns": 60 * S}, "PULL IDLE PINNED HALF",
     "PUSH"),
    # delivered within the period (jsm.go's rule for --idle); never delivered: never found
    ({"delivered_ns": 60 * S}, "PULL PINNED", "PUSH"),
    # num_replicas as configured, 0 when it follows the stream's
    ({"replicas": 1}, "PUSH IDLE PINNED HALF", "PULL PINNED"),
    ({"leader": "n1"}, "PULL", ""),
    ({"api_level": 1}, "PULL", "PUSH IDLE PINNED HALF"),
    ({"pull": True, "pending": 50}, "PINNED", ""),
]


@pytest.mark.parametrize(("criteria", "found", "inverted"), CONSUMER_CASES)
def test_the_consumer_query_rules(criteria, found, inverted):
    from jetlink.core.queries import ConsumerQuery, query_consumers

    def names(q):
        return " ".join(i["name"] for i in query_consumers(CONSUMERS, q, now_ns=NOW))

    assert names(ConsumerQuery(**criteria)) == found
    assert names(ConsumerQuery(**criteria, invert=True)) == inverted


def test_consumer_find_on_the_engine(jl, cli_clock):
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(jl("pub", "orders.a", "one", "--count", "3"))
    for name in ("C1", "C2"):
        ok(jl("consumer", "add", "ORDERS", name, "--pull", "--defaults"))
    ok(jl("consumer", "next", "ORDERS", "C1", "--no-ack"))
    cli_clock.advance_s(30)
    assert ok(jl("consumer", "find", "ORDERS")).stdout == "C1\nC2\n"
    assert ok(jl("consumer", "find", "ORDERS", "--ack-pending", "2")).stdout == "C1\n"
    assert ok(jl("consumer", "find", "ORDERS", "--pending", "3")).stdout == "C1\n"
    assert ok(jl("consumer", "find", "ORDERS", "--pending", "3", "--invert")).stdout == ""
    assert json.loads(ok(jl("consumer", "find", "ORDERS", "--idle", "1m", "-j")).stdout) == \
        ["C1"]
    assert ok(jl("consumer", "find", "ORDERS", "--idle", "10s")).stdout == ""
    assert ok(jl("consumer", "find", "ORDERS", "--idle", "0")).stdout == "C1\nC2\n"
    assert ok(jl("consumer", "find", "ORDERS", "--push")).stdout == ""
    r = jl("consumer", "find", "ORDERS", "--pull", "--push")
    assert r.exit_code == 2 and r.stderr == \
        "jetlink: error: cannot match pull and push concurrently\n", r.stderr
    r = jl("consumer", "find", "NOPE")
    assert r.exit_code == 1 and "stream not found (10059): NOPE" in r.stderr, r.stderr
