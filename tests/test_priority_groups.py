"""Priority groups (ADR-42; nats-server 2.11, prioritized 2.12) on the engine and through the
CLI: the pull request refusals of the server's processNextMsgRequest, the pinned client with
Nats-Pin-Id and its TTL on the engine's clock, CONSUMER.UNPIN, the overflow minimums."""

from __future__ import annotations

import json

import pytest
from helpers import doc

from jetlink.core.config.consumer import ConsumerConfig
from jetlink.core.config.stream import StreamConfig
from jetlink.core.consumers import ConsumerEngine, MemoryConsumerStore
from jetlink.core.errors import ApiError
from jetlink.core.priority import PullPriority

SECOND = 1_000_000_000


def _engine(policy: str, n: int = 4, **extra):
    be = MemoryConsumerStore()
    be.add_stream(StreamConfig.from_json({"name": "S", "subjects": ["s.>"]}))
    for i in range(n):
        be.publish("S", "s.a", b"m%d" % i)
    cfg = {"durable_name": "C", "ack_policy": "explicit", **extra}
    if policy != "none":
        cfg |= {"priority_policy": policy, "priority_groups": ["g1"]}
    ConsumerEngine(be, SECOND).add("S", ConsumerConfig.from_json(cfg))
    return be


# The server's refusals of a pull request (status, description; no err_code), by policy.
REFUSALS = [
    ("none", PullPriority(min_pending=1), 400, "Bad Request - Not a Overflow Priority consumer"),
    ("pinned_client", PullPriority(group="g1", min_ack_pending=1), 400,
     "Bad Request - Not a Overflow Priority consumer"),
    ("overflow", PullPriority(group="g1", id="x"), 400,
     "Bad Request - Not a Pinned Client Priority consumer"),
    ("none", PullPriority(priority=10), 400, "Bad Request - Priority must be between 0 and 9"),
    ("prioritized", PullPriority(group="g1", priority=-1), 400,
     "Bad Request - Priority must be between 0 and 9"),
    ("pinned_client", PullPriority(), 400, "Bad Request - Priority Group missing"),
    ("overflow", PullPriority(min_pending=1), 400, "Bad Request - Priority Group missing"),
    ("prioritized", PullPriority(priority=3), 400, "Bad Request - Priority Group missing"),
    ("pinned_client", PullPriority(group="g2"), 400, "Bad Request - Invalid Priority Group"),
    ("prioritized", PullPriority(group="nope"), 400, "Bad Request - Invalid Priority Group"),
]


@pytest.mark.parametrize(("policy", "req", "status", "text"), REFUSALS)
def test_pull_refusals(policy, req, status, text):
    be = _engine(policy)
    with pytest.raises(ApiError) as err:
        ConsumerEngine(be, 2 * SECOND).fetch("S", "C", 1, req)
    assert (err.value.code, err.value.err_code, err.value.description) == (status, 0, text)


@pytest.mark.parametrize("policy", ["overflow", "prioritized"])
def test_group_pulls_deliver(policy):
    be = _engine(policy)
    got = ConsumerEngine(be, 2 * SECOND).fetch("S", "C", 2, PullPriority(group="g1"))
    assert [m.seq for m in got] == [1, 2]
    assert all("Nats-Pin-Id" not in m.headers for m in got)


def test_no_policy_takes_requests_without_group():
    be = _engine("none")
    assert [m.seq for m in ConsumerEngine(be, 2 * SECOND).fetch("S", "C", 1)] == [1]


def test_pinned_client_lifecycle():
    be = _engine("pinned_client", priority_timeout=10 * SECOND)
    eng = ConsumerEngine(be, 2 * SECOND)
    first = eng.fetch("S", "C", 1, PullPriority(group="g1"))
    pin = first[0].headers["Nats-Pin-Id"][0]
    assert len(pin) == 22
    # another client gets nothing while the pin holds
    assert eng.fetch("S", "C", 1, PullPriority(group="g1")) == []
    # a wrong pin id is refused
    with pytest.raises(ApiError) as err:
        eng.fetch("S", "C", 1, PullPriority(group="g1", id="other"))
    assert (err.value.code, err.value.description) == (423, "Nats-Pin-Id mismatch")
    # the pinned client goes on, and its pull renews the pin
    got = ConsumerEngine(be, 9 * SECOND).fetch("S", "C", 1, PullPriority(group="g1", id=pin))
    assert [(m.seq, m.headers["Nats-Pin-Id"]) for m in got] == [(2, [pin])]
    info = ConsumerEngine(be, 9 * SECOND).info("S", "C").to_json()
    assert info["priority_groups"] == [
        {"group": "g1", "pinned_client_id": pin, "pinned_ts": "1970-01-01T00:00:02Z"}]
    # 10s after its last pull the pin lapses: the stale id gets Nats-Wrong-Pin-Id ...
    late = ConsumerEngine(be, 19 * SECOND)
    with pytest.raises(ApiError) as err:
        late.fetch("S", "C", 1, PullPriority(group="g1", id=pin))
    assert (err.value.code, err.value.description) == (423, "Nats-Wrong-Pin-Id")
    # ... and a new client is pinned with a new id
    new = late.fetch("S", "C", 1, PullPriority(group="g1"))[0].headers["Nats-Pin-Id"][0]
    assert new != pin


def test_pin_only_when_a_message_is_there():
    be = _engine("pinned_client", n=0)
    eng = ConsumerEngine(be, 2 * SECOND)
    assert eng.fetch("S", "C", 1, PullPriority(group="g1")) == []
    assert eng.info("S", "C").to_json()["priority_groups"] == [
        {"group": "g1", "pinned_ts": "0001-01-01T00:00:00Z"}]


def test_unpin():
    be = _engine("pinned_client")
    eng = ConsumerEngine(be, 2 * SECOND)
    pin = eng.fetch("S", "C", 1, PullPriority(group="g1"))[0].headers["Nats-Pin-Id"][0]
    for group, code, text in [
        ("", 10025, "invalid JSON: consumer group not specified"),
        ("bad group", 10162, "Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and "
         "may not exceed 16 characters"),
        ("g2", 10160, "Provided priority group does not exist for this consumer"),
    ]:
        with pytest.raises(ApiError) as err:
            eng.unpin("S", "C", group)
        assert (err.value.err_code, err.value.description) == (code, text)
    eng.unpin("S", "C", "g1")
    got = eng.fetch("S", "C", 1, PullPriority(group="g1"))
    assert got[0].headers["Nats-Pin-Id"][0] != pin


# overflow: (min_pending, min_ack_pending, messages delivered of a batch of 4 from 4 pending)
OVERFLOW = [
    (0, 0, 4),
    (5, 0, 0),   # 4 pending < 5
    (4, 0, 1),   # 4 pending for the first, then 3
    (2, 0, 3),   # 4, 3, 2 pending; then 1
    (0, 1, 0),   # nothing awaits an ack yet
    (5, 1, 0),
]


@pytest.mark.parametrize(("min_pending", "min_ack", "delivered"), OVERFLOW)
def test_overflow_minimums(min_pending, min_ack, delivered):
    be = _engine("overflow")
    got = ConsumerEngine(be, 2 * SECOND).fetch(
        "S", "C", 4, PullPriority(group="g1", min_pending=min_pending, min_ack_pending=min_ack))
    assert len(got) == delivered


def test_overflow_min_ack_pending_after_unacked():
    be = _engine("overflow")
    eng = ConsumerEngine(be, 2 * SECOND)
    assert len(eng.fetch("S", "C", 2, PullPriority(group="g1"))) == 2
    got = eng.fetch("S", "C", 4, PullPriority(group="g1", min_ack_pending=2))
    assert [m.seq for m in got] == [3, 4]


def test_state_without_pin_loads():
    """A consumer state stored before priority groups (no "pin") still loads."""
    from jetlink.core.consumers import ConsumerState

    text = ConsumerState().to_json()
    del text["pin"]
    assert ConsumerState.from_json(text).pin_id == ""


# -- the CLI ---------------------------------------------------------------------------------
@pytest.fixture
def jlp(jl, cli_clock, utc):
    jl.clock = cli_clock
    assert jl("stream", "add", "S", "--subjects", "s.>", "--defaults").exit_code == 0
    assert jl("pub", "s.a", "m{{Count}}", "--count", "4").exit_code == 0
    return jl


def test_cli_add_flags(jlp):
    # natscli's flags take one group per value (repeated for several): "g1,g2" is one name,
    # which the server refuses
    res = jlp("consumer", "add", "S", "P", "--defaults", "--pinned-groups", "g1,g2")
    assert (res.exit_code, res.stderr) == (1, (
        "jetlink: error: Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may "
        'not exceed 16 characters (10162): priority_groups[0] = "g1,g2"\n'))
    res = jlp("consumer", "add", "S", "P", "--defaults", "--pinned-groups", "g1",
              "--pinned-groups", "g2", "--pinned-ttl", "10s", "--backoff", "linear",
              "--backoff-steps", "3", "-j")
    cfg = doc(res)["config"]
    assert (cfg["priority_policy"], cfg["priority_groups"], cfg["priority_timeout"]) == (
        "pinned_client", ["g1", "g2"], 10 * SECOND)
    assert cfg["backoff"] == [60 * SECOND, 440 * SECOND, 820 * SECOND]
    assert cfg["ack_wait"] == 60 * SECOND
    res = jlp("consumer", "add", "S", "O", "--defaults", "--overflow-groups", "g1", "-j")
    assert doc(res)["config"]["priority_policy"] == "overflow"
    assert doc(res)["priority_groups"] == [{"group": "g1", "pinned_ts": "0001-01-01T00:00:00Z"}]
    res = jlp("consumer", "add", "S", "R", "--defaults", "--prioritized-groups", "g1", "-j")
    assert doc(res)["config"]["priority_policy"] == "prioritized"
    res = jlp("consumer", "add", "S", "X", "--defaults", "--overflow-groups", "g1",
              "--pinned-groups", "g2")
    assert res.exit_code == 2
    assert "setting both overflow and pinned groups are not supported" in res.stderr
    # the other conflicts natscli drops silently are usage errors too, nothing created
    for args, says in (
            (["--pinned-groups", "a", "--prioritized-groups", "b"],
             "--pinned-groups and --prioritized-groups: a consumer has one priority policy "
             "(give one of --pinned-groups, --overflow-groups, --prioritized-groups)"),
            (["--overflow-groups", "a", "--prioritized-groups", "b"],
             "--overflow-groups and --prioritized-groups: a consumer has one priority policy "
             "(give one of --pinned-groups, --overflow-groups, --prioritized-groups)"),
            (["--pinned-ttl", "5s"], "--pinned-ttl is the pin's time of a pinned client "
             "policy: give it with --pinned-groups"),
            (["--backoff-steps", "4"], "--backoff-steps shapes a backoff: give --backoff linear"),
            (["--backoff", "none", "--backoff-min", "1s", "--backoff-max", "2s"],
             "--backoff-min, --backoff-max shape a backoff: give --backoff linear"),
            (["--backoff", "linear", "--backoff-min", "0s"],
             "invalid value for --backoff-min: 0s: it must be more than 0"),
            (["--backoff", "linear", "--backoff-steps", "0"],
             "invalid value for --backoff-steps: 0: it must be more than 0")):
        res = jlp("consumer", "add", "S", "Y", "--defaults", *args)
        assert (res.exit_code, res.stderr) == (2, f"jetlink: error: {says}\n"), args
    assert "Y" not in doc(jlp("consumer", "ls", "S", "-j"))
    # an empty group name is sent as natscli sends it: the server's refusal, no consumer
    for flag in ("--pinned-groups", "--overflow-groups", "--prioritized-groups"):
        res = jlp("consumer", "add", "S", "E", "--defaults", flag, "")
        assert (res.exit_code, res.stderr) == (1, "jetlink: error: Group name cannot be an "
                                                  'empty string (10161): priority_groups[0] = '
                                                  '""\n'), flag


def test_cli_next_group_and_unpin(jlp):
    assert jlp("consumer", "add", "S", "P", "--defaults", "--pinned-groups", "g1").exit_code == 0
    res = jlp("consumer", "next", "S", "P")
    assert (res.exit_code, res.stderr) == (1, "jetlink: error: Bad Request - Priority Group "
                                              "missing: consumer S > P takes --group g1\n")
    res = jlp("consumer", "next", "S", "P", "--group", "g9")
    assert (res.exit_code, res.stderr) == (1, "jetlink: error: Bad Request - Invalid Priority "
                                              "Group: consumer S > P takes --group g1\n")
    res = jlp("consumer", "next", "S", "P", "--group", "g1", "--count", "2", "-j")
    msgs = json.loads(res.stdout)
    pins = {m["headers"]["Nats-Pin-Id"][0] for m in msgs}
    assert [m["seq"] for m in msgs] == [1, 2] and len(pins) == 1
    pin = pins.pop()
    # another invocation without the pin gets nothing; with it, the next message
    assert json.loads(jlp("consumer", "next", "S", "P", "--group", "g1", "-j").stdout) == []
    res = jlp("consumer", "next", "S", "P", "--group", "g1", "--pin-id", pin, "-j")
    assert [m["seq"] for m in json.loads(res.stdout)] == [3]
    res = jlp("consumer", "info", "S", "P")
    assert f"Priority Groups: g1: pinned {pin} at 2026-01-01 00:00:00" in res.stdout
    assert "Priority Policy: Pinned Client" in res.stdout  # (jsm.go's words)
    res = jlp("consumer", "unpin", "S", "P", "g1")
    assert res.exit_code == 2  # no terminal, no --force
    res = jlp("consumer", "unpin", "S", "P", "g9", "-f")
    assert res.exit_code == 1
    assert "Provided priority group does not exist for this consumer (10160)" in res.stderr
    res = jlp("consumer", "unpin", "S", "P", "g1", "-f")
    assert res.stdout == f"Unpinned client {pin} from Priority Group S > P > g1\n"
    assert "Priority Groups: g1: No client" in jlp("consumer", "info", "S", "P").stdout
    # nothing pinned anywhere: refused, as natscli's unpin is
    res = jlp("consumer", "unpin", "S", "P", "g1", "-f")
    assert (res.exit_code, res.stderr) == (
        1, "jetlink: error: no priority groups have pinned clients\n")
    res = jlp("consumer", "next", "S", "P", "--group", "g1", "--pin-id", pin)
    assert (res.exit_code, res.stderr) == (1, "jetlink: error: Nats-Wrong-Pin-Id\n")


def test_cli_info_shows_the_pinned_ttl_as_natscli(jlp):
    """natscli's columns render a duration with HumanizeDuration: 2m0s, 30.00s."""
    ok_ = jlp("consumer", "add", "S", "P", "--defaults", "--pinned-groups", "g1")
    assert ok_.exit_code == 0
    assert "              Pinned TTL: 2m0s\n" in jlp("consumer", "info", "S", "P").stdout
    assert jlp("consumer", "add", "S", "Q", "--defaults", "--pinned-groups", "g1",
               "--pinned-ttl", "30s").exit_code == 0
    assert "              Pinned TTL: 30.00s\n" in jlp("consumer", "info", "S", "Q").stdout


def test_cli_unpin_needs_pinned_policy(jlp):
    assert jlp("consumer", "add", "S", "O", "--defaults", "--overflow-groups", "g1").exit_code == 0
    res = jlp("consumer", "unpin", "S", "O", "g1", "-f")
    assert (res.exit_code, res.stderr) == (
        1, "jetlink: error: consumer is not a pinned priority consumer\n")


def test_cli_overflow(jlp):
    assert jlp("consumer", "add", "S", "O", "--defaults", "--overflow-groups", "g1").exit_code == 0
    res = jlp("consumer", "next", "S", "O", "--group", "g1", "--min-pending", "10", "-j")
    assert json.loads(res.stdout) == []
    res = jlp("consumer", "next", "S", "O", "--group", "g1", "--min-pending", "3",
              "--count", "4", "-j")
    assert [m["seq"] for m in json.loads(res.stdout)] == [1, 2]
