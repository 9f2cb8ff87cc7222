"""``jetlink consumer add|edit|info|ls|next|ack|rm`` on a REAL nats-server (``--server URL``).

Every verb goes through the CLI (Typer's CliRunner); what the server holds afterwards is read
with a connection of the test's own (``live.api``), so an acknowledgement or an edit is seen
to have reached the server. A spy subscription on ``$JS.API.CONSUMER.CREATE.>`` tells a
config jetlink refused before sending from one the server refused.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from helpers import ENV_VARS, returns, runner

from jetlink.cli.main import app
from live.servers import LiveServer

pytestmark = pytest.mark.live

INFO_KEYS = {"stream_name", "name", "created", "config", "delivered", "ack_floor",
             "num_ack_pending", "num_redelivered", "num_waiting", "num_pending", "ts"}
# The engine's DeliveredMsg document (core/consumers.py), key for key.
MSG_KEYS = {"subject", "seq", "time", "headers", "data", "stream", "consumer", "consumer_seq",
            "num_delivered", "num_pending", "reply"}


@pytest.fixture
def jls(live: LiveServer, tmp_path, monkeypatch):
    """``jetlink --server <live> ...`` through CliRunner, on a clean server holding stream
    ORDERS (``orders.>``) with orders.eu.1 (header A: b), orders.us.2, orders.eu.3."""
    for var in (*ENV_VARS, "NATS_URL", "NATS_CREDS", "NATS_USER", "NATS_PASSWORD"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)
    monkeypatch.setenv("JETLINK_DATA_DIR", str(tmp_path / "data"))  # never the user's
    c = live.client()
    assert "error" not in c.stream_create({"name": "ORDERS", "subjects": ["orders.>"]})
    for subject, body, headers in (("orders.eu.1", b"hello", {"A": "b"}),
                                   ("orders.us.2", b"world", None),
                                   ("orders.eu.3", b"three", None)):
        assert "error" not in c.js_publish(subject, body, headers=headers)

    def run(*args: str) -> Any:
        return runner.invoke(app, ["--server", live.url, *args], prog_name="jetlink")

    run.live = live
    return run


def _doc(res: Any, status: int = 0) -> Any:
    assert res.exit_code == status, (res.exit_code, res.stdout, res.stderr)
    return json.loads(res.stdout)


def _server_info(live: LiveServer, name: str, stream: str = "ORDERS") -> dict[str, Any]:
    return live.api(f"CONSUMER.INFO.{stream}.{name}")


class CreateSpy:
    """The CONSUMER.CREATE requests that reach the server (a subscription of its own)."""

    def __init__(self, url: str) -> None:
        from jetlink.core.live.client import connect
        from jetlink.core.live.target import ServerTarget

        self.conn = connect(ServerTarget((url,)))
        self.sub = self.conn.subscribe("$JS.API.CONSUMER.CREATE.>")
        self.conn.flush()

    def seen(self, wait: float = 0.3) -> list[str]:
        out = []
        while True:
            msg = self.sub.next(wait)
            if msg is None:
                return out
            out.append(msg.subject)
            wait = 0.05

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def spy(jls):
    s = CreateSpy(jls.live.url)
    yield s
    s.close()


# -- add --------------------------------------------------------------------------------------


def test_add_pull_durable(jls, spy):
    doc = _doc(jls("consumer", "add", "ORDERS", "C1", "--pull", "--defaults", "-j"))
    assert set(doc) == INFO_KEYS
    assert "type" not in doc  # the info, without the API response's envelope (as natscli)
    assert (doc["stream_name"], doc["name"], doc["num_pending"]) == ("ORDERS", "C1", 3)
    cfg = doc["config"]
    assert {k: cfg[k] for k in ("durable_name", "name", "deliver_policy", "ack_policy",
                                "ack_wait", "max_deliver", "replay_policy", "max_waiting",
                                "max_ack_pending")} == {
        "durable_name": "C1", "name": "C1", "deliver_policy": "all", "ack_policy": "explicit",
        "ack_wait": 30_000_000_000, "max_deliver": -1, "replay_policy": "instant",
        "max_waiting": 512, "max_ack_pending": 1000}
    assert spy.seen() == ["$JS.API.CONSUMER.CREATE.ORDERS.C1"]
    server = _server_info(jls.live, "C1")
    assert server["config"]["durable_name"] == "C1" and server["num_pending"] == 3


def test_add_with_filter_sends_the_filter_in_the_subject(jls, spy):
    res = jls("consumer", "add", "ORDERS", "EU", "--filter", "orders.eu.>", "--ack",
              "explicit", "--deliver", "all", "--pull", "--defaults")
    assert res.exit_code == 0, res.stderr
    assert res.stdout.startswith("Information for Consumer ORDERS > EU created ")
    assert "  Filter Subject: orders.eu.>" in res.stdout
    assert "Unprocessed Messages: 2" in res.stdout
    assert spy.seen() == ["$JS.API.CONSUMER.CREATE.ORDERS.EU.orders.eu.>"]
    assert _server_info(jls.live, "EU")["config"]["filter_subject"] == "orders.eu.>"
    msgs = _doc(jls("consumer", "next", "ORDERS", "EU", "--count", "5", "-j"))
    assert [(m["subject"], m["seq"]) for m in msgs] == [("orders.eu.1", 1), ("orders.eu.3", 3)]


def test_bad_config_refused_by_jetlinks_rule_before_sending(jls, spy, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"durable_name": "BAD", "ack_policy": "explicit",
                                "deliver_policy": "by_start_sequence"}))
    doc = _doc(jls("consumer", "add", "ORDERS", "--config", str(path), "-j"), 1)
    assert doc == {"error": {"code": 400, "err_code": 10094, "description":
                             "consumer delivery policy is deliver by start sequence, but "
                             "optional start sequence is not set"}}
    res = jls("consumer", "add", "ORDERS", "BAD.NAME", "--defaults")
    assert res.exit_code == 1 and res.stdout == ""
    assert res.stderr == ("jetlink: error: consumer name can not contain '.', '*', '>', "
                          "'\\', '/' (10052): name = \"BAD.NAME\" holds '.'\n")
    assert spy.seen() == []  # nothing reached the server
    assert live_names(jls) == []


def test_config_refused_by_the_server_with_its_code(jls, spy):
    # replicas > 1 is the embedded engine's own limit: on a live server jetlink sends it and
    # the server answers (a single server refuses it; a cluster would take it).
    doc = _doc(jls("consumer", "add", "ORDERS", "R3", "--replicas", "3", "--defaults", "-j"), 1)
    assert doc == {"error": {"code": 500, "err_code": 10074,
                             "description": "replicas > 1 not supported in non-clustered mode"}}
    assert spy.seen() == ["$JS.API.CONSUMER.CREATE.ORDERS.R3"]
    res = jls("consumer", "add", "ORDERS", "R3", "--replicas", "3", "--defaults")
    assert res.exit_code == 1 and res.stdout == ""
    assert "replicas > 1 not supported in non-clustered mode" in res.stderr
    assert "10074" in res.stderr
    assert live_names(jls) == []


def live_names(jls) -> list[str]:
    return jls.live.api("CONSUMER.NAMES.ORDERS").get("consumers") or []


# -- info / ls ----------------------------------------------------------------------------------


def test_info_and_ls(jls):
    assert jls("consumer", "add", "ORDERS", "C2", "--defaults", "--description",
               "second").exit_code == 0
    assert jls("consumer", "add", "ORDERS", "C1", "--defaults").exit_code == 0
    doc = _doc(jls("consumer", "info", "ORDERS", "C2", "-j"))
    assert set(doc) == INFO_KEYS
    assert doc["config"]["description"] == "second"
    raw = _server_info(jls.live, "C2")
    assert raw["type"] == "io.nats.jetstream.api.v1.consumer_info_response"
    assert doc == {**{k: v for k, v in raw.items() if k != "type"}, "ts": doc["ts"]}
    res = jls("consumer", "info", "ORDERS", "C2")
    assert res.exit_code == 0
    lines = res.stdout.splitlines()
    assert lines[0].startswith("Information for Consumer ORDERS > C2 created ")
    for line in ("                    Name: C2", "             Description: second",
                 "               Pull Mode: true", "              Ack Policy: Explicit",
                 "  Last Delivered Message: Consumer sequence: 0 Stream sequence: 0",
                 "        Outstanding Acks: 0 out of maximum 1,000",
                 "    Unprocessed Messages: 3", "           Waiting Pulls: 0 of maximum 512"):
        assert line in lines, line
    assert _doc(jls("consumer", "ls", "ORDERS", "-j")) == ["C1", "C2"]
    res = jls("consumer", "ls", "ORDERS", "--names")
    assert (res.exit_code, res.stdout) == (0, "C1\nC2\n")
    res = jls("consumer", "ls", "ORDERS")
    assert res.exit_code == 0
    rows = [line for line in res.stdout.splitlines() if line.startswith("│ C")]
    assert [r.split("│")[1].strip() for r in rows] == ["C1", "C2"]
    assert rows[1].split("│")[2].strip() == "second"
    assert rows[1].split("│")[5].strip() == "3"  # Unprocessed
    res = jls("consumer", "info", "ORDERS", "NOPE", "-j")
    assert _doc(res, 1) == {"error": {"code": 404, "err_code": 10014,
                                      "description": "consumer not found"}}


# -- next / ack ----------------------------------------------------------------------------------


def test_next_acks_and_the_ack_reaches_the_server(jls):
    assert jls("consumer", "add", "ORDERS", "C1", "--defaults").exit_code == 0
    msgs = _doc(jls("consumer", "next", "ORDERS", "C1", "-j"))
    assert len(msgs) == 1 and set(msgs[0]) == MSG_KEYS
    m = msgs[0]
    assert {k: m[k] for k in MSG_KEYS - {"time", "reply"}} == {
        "subject": "orders.eu.1", "seq": 1, "headers": {"A": ["b"]}, "data": "aGVsbG8=",
        "stream": "ORDERS", "consumer": "C1", "consumer_seq": 1, "num_delivered": 1,
        "num_pending": 2}
    assert m["reply"].startswith("$JS.ACK.ORDERS.C1.1.1.1.") and m["reply"].endswith(".2")
    server = _server_info(jls.live, "C1")
    assert server["num_ack_pending"] == 0
    assert server["ack_floor"]["stream_seq"] == 1 and server["delivered"]["stream_seq"] == 1
    res = jls("consumer", "next", "ORDERS", "C1", "--count", "5")
    assert res.exit_code == 0
    assert "subj: orders.us.2 / tries: 1 / cons seq: 2 / str seq: 2 / pending: 1" in res.stdout
    assert "subj: orders.eu.3 / tries: 1 / cons seq: 3 / str seq: 3 / pending: 0" in res.stdout
    assert res.stdout.count("Acknowledged message") == 2
    server = _server_info(jls.live, "C1")
    assert (server["num_ack_pending"], server["num_pending"]) == (0, 0)
    assert server["ack_floor"]["stream_seq"] == 3
    # nothing left: an empty list at once (not after the timeout: an hour here, which
    # would outlast returns())
    assert _doc(returns(lambda: jls("--timeout", "1h", "consumer", "next", "ORDERS", "C1",
                                    "-j"), "consumer next with nothing pending")) == []
    res = jls("consumer", "next", "ORDERS", "C1")
    assert (res.exit_code, res.stdout) == (0, "")
    assert "No messages pending" in res.stderr


def test_next_no_ack_then_redelivery(jls):
    assert jls("consumer", "add", "ORDERS", "C1", "--defaults", "--wait", "1s").exit_code == 0
    msgs = _doc(jls("consumer", "next", "ORDERS", "C1", "--no-ack", "-j"))
    assert [(m["seq"], m["num_delivered"]) for m in msgs] == [(1, 1)]
    assert _server_info(jls.live, "C1")["num_ack_pending"] == 1
    time.sleep(2.5)  # the ack wait (1s) passes, with room for a late timer on a busy machine
    res = jls("consumer", "next", "ORDERS", "C1", "--no-ack")
    assert res.exit_code == 0
    assert "subj: orders.eu.1 / tries: 2 / cons seq: 2 / str seq: 1 / pending: 2" in res.stdout
    assert "Acknowledged message" not in res.stdout
    msgs = _doc(jls("consumer", "next", "ORDERS", "C1", "-j"))
    assert [(m["seq"], m["num_delivered"]) for m in msgs] == [(2, 1)]
    server = _server_info(jls.live, "C1")
    assert server["num_redelivered"] == 1 and server["num_ack_pending"] == 1


def test_a_later_command_acknowledges_a_delivery_by_its_stream_sequence(jls):
    """`consumer ack STREAM CONSUMER SEQ` of a message another command fetched: the server
    takes the v1 ack subject from any connection (its pending record gives the rest), as
    the engine acknowledges it; a sequence not pending is ignored by the server."""
    assert jls("consumer", "add", "ORDERS", "C1", "--defaults").exit_code == 0
    msgs = _doc(jls("consumer", "next", "ORDERS", "C1", "--count", "2", "--no-ack", "-j"))
    assert [m["seq"] for m in msgs] == [1, 2]
    assert _server_info(jls.live, "C1")["num_ack_pending"] == 2
    res = jls("consumer", "ack", "ORDERS", "C1", "2")
    assert (res.exit_code, res.stdout) == (0, "Acknowledged message 2\n")
    server = _server_info(jls.live, "C1")
    assert server["num_ack_pending"] == 1 and server["ack_floor"]["stream_seq"] == 0
    # acknowledged already, above the ack floor: the server answers that ack too; the
    # consumer's counts, unchanged, say it was not pending
    res = jls("consumer", "ack", "ORDERS", "C1", "2")
    assert res.exit_code == 1 and "message 2 is not pending" in res.stderr, res.output
    assert _server_info(jls.live, "C1")["num_ack_pending"] == 1
    res = jls("consumer", "ack", "ORDERS", "C1", "1")
    assert res.exit_code == 0
    assert _server_info(jls.live, "C1")["ack_floor"]["stream_seq"] == 2
    # not pending (acknowledged already; never delivered): nothing acknowledged, exit 1, as
    # on the engine, answered without waiting for the server
    for seq in ("1", "3"):
        res = jls("consumer", "ack", "ORDERS", "C1", seq)
        assert res.exit_code == 1 and f"message {seq} is not pending" in res.stderr
    # ack policy all: the server takes the delivery's own consumer sequence: refused
    assert jls("consumer", "add", "ORDERS", "C2", "--defaults", "--ack", "all").exit_code == 0
    assert len(_doc(jls("consumer", "next", "ORDERS", "C2", "--count", "2", "--no-ack",
                        "-j"))) == 2
    res = jls("consumer", "ack", "ORDERS", "C2", "2")
    assert res.exit_code == 1
    assert "with ack policy all the server takes the delivery's own consumer sequence" \
        in res.stderr
    assert _server_info(jls.live, "C2")["num_ack_pending"] == 2
    # ack policy none: nothing is ever pending: not pending, as on the engine
    assert jls("consumer", "add", "ORDERS", "C3", "--defaults", "--ack", "none").exit_code == 0
    assert len(_doc(jls("consumer", "next", "ORDERS", "C3", "-j"))) == 1
    res = jls("consumer", "ack", "ORDERS", "C3", "1")
    assert res.exit_code == 1 and "message 1 is not pending" in res.stderr, res.output


def test_a_work_queue_ack_acts_as_the_engine_on_a_message_no_longer_pending(jls, tmp_path):
    """A filtered consumer of a work-queue stream: `consumer ack` of another subject's
    message between its floor and its last delivery is no delivery of it (the server would
    remove that message all the same): refused, kept. A message its deliveries used up
    (max_deliver) and then acknowledged goes, on the server as on the engine."""
    def both(*args: str) -> list[Any]:
        return [jls(*args), runner.invoke(app, ["--data-dir", str(tmp_path / "e"), *args],
                                           prog_name="jetlink")]

    for r in both("stream", "add", "WQ", "--subjects", "wq.*", "--retention", "work",
                  "--defaults"):
        assert r.exit_code == 0, r.output
    for subject in ("wq.x", "wq.y", "wq.x", "wq.x"):
        for r in both("pub", subject, "m"):
            assert r.exit_code == 0, r.output
    for r in both("consumer", "add", "WQ", "C", "--pull", "--ack", "explicit", "--filter",
                  "wq.x", "--max-deliver", "1", "--wait", "1s", "--defaults"):
        assert r.exit_code == 0, r.output
    for r in both("consumer", "next", "WQ", "C", "--count", "3", "--no-ack", "-j"):
        assert [m["seq"] for m in json.loads(r.stdout)] == [1, 3, 4]
    for r in both("consumer", "ack", "WQ", "C", "2"):  # wq.y: not its own
        assert r.exit_code == 1 and "message 2 is not pending" in r.stderr, r.output
    time.sleep(1.5)  # (the ack wait over: max_deliver 1 used up, nothing pending)
    for r in both("consumer", "next", "WQ", "C", "-j"):
        assert r.exit_code in (0, 1)
    for r in both("consumer", "ack", "WQ", "C", "3"):
        assert r.exit_code == 1, r.output
    states = [json.loads(r.stdout)["state"] for r in both("stream", "info", "WQ", "-j")]
    assert [(s["messages"], s["num_deleted"]) for s in states] == [(3, 1), (3, 1)], states
    assert [json.loads(r.stdout)["data"] for r in both("stream", "get", "WQ", "2", "-j")] \
        == ["bQ==", "bQ=="]


def test_a_refusal_only_the_server_makes_names_the_field_as_the_engines(jls):
    """A single server refuses a consumer of 3 replicas itself (10074): the field and value
    the engine names are added, the code and text stay the server's."""
    res = jls("consumer", "add", "ORDERS", "R", "--defaults", "--replicas", "3")
    assert (res.exit_code, res.stderr) == (1, "jetlink: error: replicas > 1 not supported in "
                                              "non-clustered mode (10074): num_replicas = 3\n")


def test_next_nak_and_term_reach_the_server(jls):
    """--nak: the server redelivers the message at once; --term: never again."""
    assert jls("consumer", "add", "ORDERS", "NT", "--defaults").exit_code == 0
    res = jls("consumer", "next", "ORDERS", "NT", "--nak")
    assert res.exit_code == 0 and "Negative Acknowledged message" in res.stdout
    got = _doc(jls("consumer", "next", "ORDERS", "NT", "--term", "-j"))
    assert [(m["seq"], m["num_delivered"]) for m in got] == [(1, 2)]
    server = _server_info(jls.live, "NT")
    assert (server["num_ack_pending"], server["ack_floor"]["stream_seq"]) == (0, 1)


def test_next_stops_at_max_ack_pending(jls):
    assert jls("consumer", "add", "ORDERS", "C1", "--defaults", "--max-pending", "1").exit_code == 0
    assert len(_doc(jls("consumer", "next", "ORDERS", "C1", "--no-ack", "-j"))) == 1
    assert _doc(jls("consumer", "next", "ORDERS", "C1", "--count", "2", "-j")) == []


def test_next_beyond_max_pull_batch_asks_in_batches_the_consumer_takes(jls):
    """The server's 409 "Exceeded MaxRequestBatch of 2" to a request for 3: asked again in
    requests of 2, as natscli's next gets --count messages."""
    assert jls("consumer", "add", "ORDERS", "C1", "--defaults", "--max-pull-batch",
               "2").exit_code == 0
    got = _doc(jls("consumer", "next", "ORDERS", "C1", "--count", "3", "-j"))
    assert [m["seq"] for m in got] == [1, 2, 3]


# -- edit ---------------------------------------------------------------------------------------


def test_edit(jls):
    assert jls("consumer", "add", "ORDERS", "C1", "--defaults").exit_code == 0
    doc = _doc(jls("consumer", "edit", "ORDERS", "C1", "--description", "first",
                   "--max-deliver", "5", "-f", "-j"))
    assert set(doc) == INFO_KEYS and doc["name"] == "C1"
    assert (doc["config"]["description"], doc["config"]["max_deliver"]) == ("first", 5)
    server = _server_info(jls.live, "C1")["config"]
    assert (server["description"], server["max_deliver"]) == ("first", 5)
    res = jls("consumer", "edit", "ORDERS", "C1", "--description", "second", "-f")
    assert res.exit_code == 0
    assert res.stdout.startswith("Differences (-old +new):\n--- C1 (current)\n+++ C1 (new)\n")
    assert '-  "description": "first",' in res.stdout
    assert '+  "description": "second",' in res.stdout
    assert "Information for Consumer ORDERS > C1 created " in res.stdout
    res = jls("consumer", "edit", "ORDERS", "C1", "--description", "second", "-f")
    assert (res.exit_code, res.stdout) == (0, "No difference in configuration\n")
    # natscli's edit --dry-run: exit 1 when it would change something
    doc = _doc(jls("consumer", "edit", "ORDERS", "C1", "--max-deliver", "9", "--dry-run", "-j"),
               1)
    assert set(doc) == {"name", "changed", "diff", "config"} and doc["changed"] is True
    assert _server_info(jls.live, "C1")["config"]["max_deliver"] == 5
    # what an update may not change: the rule's (and the server's) error, nothing changed
    doc = _doc(jls("consumer", "edit", "ORDERS", "C1", "--max-waiting", "5", "-f", "-j"), 1)
    assert doc == {"error": {"code": 500, "err_code": 10012,
                             "description": "max waiting can not be updated"}}
    doc = _doc(jls("consumer", "edit", "ORDERS", "NOPE", "--description", "x", "-f", "-j"), 1)
    assert doc["error"]["err_code"] == 10014


# -- rm -------------------------------------------------------------------------------------------


def test_rm(jls):
    assert jls("consumer", "add", "ORDERS", "C1", "--defaults").exit_code == 0
    res = jls("consumer", "rm", "ORDERS", "C1")
    assert res.exit_code == 2 and "pass -f/--force" in res.stderr
    assert live_names(jls) == ["C1"]
    res = jls("consumer", "rm", "ORDERS", "C1", "-f")
    assert (res.exit_code, res.stdout) == (0, "Consumer ORDERS > C1 was deleted\n")
    assert live_names(jls) == []
    doc = _doc(jls("consumer", "rm", "ORDERS", "C1", "-f", "-j"), 1)
    assert doc == {"error": {"code": 404, "err_code": 10014, "description": "consumer not found"}}
    res = jls("consumer", "ls", "ORDERS")
    assert (res.exit_code, res.stdout) == (0, "No Consumers defined\n")


# -- a missing stream -----------------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ("add", "MISSING", "C1", "--defaults"),
    ("info", "MISSING", "C1"),
    ("ls", "MISSING"),
    ("next", "MISSING", "C1"),
    ("edit", "MISSING", "C1", "--description", "x", "-f"),
    ("rm", "MISSING", "C1", "-f"),
], ids=lambda a: a[0])
def test_consumer_on_a_missing_stream(jls, args):
    doc = _doc(jls("consumer", *args, "-j"), 1)
    assert doc == {"error": {"code": 404, "err_code": 10059, "description": "stream not found"}}
    res = jls("consumer", *args)
    assert res.exit_code == 1 and res.stdout == ""
    assert "stream not found" in res.stderr and "10059" in res.stderr


# -- the same output as the embedded engine --------------------------------------------------------

SAME = [
    "stream add ORDERS --subjects orders.> --defaults",
    "pub orders.eu.1 hello -H A:b",
    "pub orders.us.2 world",
    "pub orders.eu.3 three",
    "consumer add ORDERS C1 --pull --defaults -j",
    "consumer add ORDERS C2 --filter orders.eu.> --defaults --description eu",
    "consumer add ORDERS H --defaults --headers-only --max-pending 1 --max-pull-batch 2",
    "consumer add ORDERS N --defaults --ack none",
    "consumer add ORDERS BAD.NAME --defaults",
    "consumer add ORDERS C1 --defaults --deliver last",
    "consumer add MISSING C1 --defaults -j",
    "consumer ls ORDERS -j",
    "consumer ls ORDERS --names",
    "consumer info ORDERS C1 -j",
    "consumer info ORDERS C2",
    "consumer info ORDERS C2 --state",
    "consumer info ORDERS NOPE",
    "consumer info ORDERS A.B -j",
    "consumer next ORDERS C1 -j",
    "consumer next ORDERS C1 --count 3 -j",
    "consumer next ORDERS C2 --no-ack",
    "consumer next ORDERS C2 --count 5",
    "consumer next ORDERS H --no-ack -j",
    "consumer next ORDERS H --count 2 -j",
    "consumer next ORDERS H --count 3 -j",
    "consumer next ORDERS N --count 5 -j",
    "consumer next ORDERS NOPE",
    "consumer info ORDERS C1",
    "consumer info ORDERS C2 -j",
    "consumer edit ORDERS C1 --description first -f -j",
    "consumer edit ORDERS C1 --description second --metadata team=a -f",
    "consumer edit ORDERS C1 --description second --metadata team=a -f",
    "consumer edit ORDERS C1 --max-deliver 4 --dry-run",
    "consumer edit ORDERS C1 --max-waiting 5 -f",
    "consumer edit ORDERS C2 --filter orders.us.> -f -j",
    "consumer edit ORDERS NOPE --description x -f",
    "consumer copy ORDERS C1 C3 -j",
    "consumer copy ORDERS C1 C3",
    "consumer copy ORDERS C1 C3 --description other -j",
    "consumer cp ORDERS C1 C4 --deliver 2 --ack all --replay original --filter '' -j",
    "consumer copy ORDERS C1 C5 --ack none -j",
    "consumer copy ORDERS C1 C6 --backoff linear --backoff-steps 3 --max-deliver 2",
    "consumer copy ORDERS NOPE C7 -j",
    "consumer copy MISSING C1 C7",
    "consumer rm ORDERS C2 -f",
    "consumer rm ORDERS C2 -f -j",
    "consumer rm ORDERS C2",
    "consumer ls ORDERS -j",
]
_VOLATILE = {"created", "ts", "time", "last_active", "reply", "_nats.ver", "_nats.level"}
_MASKS = [
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)"), "<time>"),
    (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"), "<time>"),
    (re.compile(r"\b\d+(\.\d+)?(ns|µs|us|ms|s) ago\b"), "<dur> ago"),
    (re.compile(r"^\[\d\d:\d\d:\d\d\]", re.M), "[<time>]"),
]


def _masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "<volatile>" if k in _VOLATILE else _masked(v) for k, v in value.items()
                if k != "type"}  # the live document's "type" (the engine has none)
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def _outcome(res: Any, args: list[str]) -> dict[str, Any]:
    text = {"stdout": res.stdout, "stderr": res.stderr}
    for key in text:
        for pat, rep in _MASKS:
            text[key] = pat.sub(rep, text[key])
    out: dict[str, Any] = {"status": res.exit_code, **text}
    if "-j" in args:
        out["stdout"] = _masked(json.loads(res.stdout))
    return out


def test_same_output_as_the_embedded_engine(live: LiveServer, tmp_path, monkeypatch):
    import shlex

    for var in (*ENV_VARS, "NATS_URL", "NATS_CREDS", "NATS_USER", "NATS_PASSWORD"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)

    def script(prefix: list[str], env: dict[str, str] | None = None) -> list[dict[str, Any]]:
        out = []
        for step in SAME:
            args = shlex.split(step)
            res = runner.invoke(app, [*prefix, *args], prog_name="jetlink", env=env)
            assert res.exception is None or isinstance(res.exception, SystemExit), (step, res)
            out.append(_outcome(res, args))
        return out

    embedded = script(["--data-dir", str(tmp_path / "embedded")])
    on_live = script(["--server", live.url], {"JETLINK_DATA_DIR": str(tmp_path / "unused")})
    for step, e, lv in zip(SAME, embedded, on_live, strict=True):
        assert lv == e, step


# -- nak / term / in progress (no verb of their own: the interface, on the live class) -----------


def test_nak_term_in_progress_on_the_live_class(jls):
    from jetlink.core.config.consumer import ConsumerConfig
    from jetlink.core.live.client import connect
    from jetlink.core.live.jetstream import LiveJetStream
    from jetlink.core.live.target import ServerTarget

    js = LiveJetStream(connect(ServerTarget((jls.live.url,))))
    try:
        info = js.add_consumer("ORDERS", ConsumerConfig.from_json(
            {"durable_name": "C1", "ack_policy": "explicit"}), action="create")
        assert (info.name, info.config.ack_policy, info.num_pending) == ("C1", "explicit", 3)
        assert "type" not in info.to_json() and info.to_json()["name"] == "C1"
        first = js.fetch("ORDERS", "C1", batch=3)
        assert [(m.seq, m.num_delivered, m.consumer_seq) for m in first] == [
            (1, 1, 1), (2, 1, 2), (3, 1, 3)]
        assert js.nak("ORDERS", "C1", 1) is True
        assert js.term("ORDERS", "C1", 2) is True
        assert js.in_progress("ORDERS", "C1", 3) is True
        again = js.fetch("ORDERS", "C1", batch=3)
        assert [(m.seq, m.num_delivered) for m in again] == [(1, 2)]
        assert js.nak("ORDERS", "C1", 1, delay=60_000_000_000) is True
        assert js.fetch("ORDERS", "C1", batch=3) == []
        assert js.ack("ORDERS", "C1", 3) is True
        state = js.consumer_info("ORDERS", "C1")
        assert (state.num_ack_pending, state.num_redelivered) == (1, 1)
        # a create of an existing consumer with another config: jetlink's rule (10148)
        from jetlink.core.errors import ApiError

        with pytest.raises(ApiError) as err:
            js.add_consumer("ORDERS", ConsumerConfig.from_json(
                {"durable_name": "C1", "ack_policy": "explicit", "description": "x"}),
                action="create")
        assert (err.value.err_code, err.value.description) == (10148, "consumer already exists")
        assert js.consumer_names("ORDERS") == ["C1"]
    finally:
        js.close()


def test_ack_metadata_v1_and_v2():
    from jetlink.core.live.consumers import ack_metadata

    v1 = ack_metadata("$JS.ACK.ORDERS.C1.2.5.7.1700000000000000000.3")
    assert v1 == {"domain": "", "stream": "ORDERS", "consumer": "C1", "num_delivered": 2,
                  "seq": 5, "consumer_seq": 7, "ts": 1700000000000000000, "num_pending": 3}
    v2 = ack_metadata("$JS.ACK.hub.ACCHASH.ORDERS.C1.2.5.7.1700000000000000000.3.rnd")
    assert v2 == {**v1, "domain": "hub"}
    assert ack_metadata("$JS.ACK._.ACCHASH.ORDERS.C1.2.5.7.1700000000000000000.3")["domain"] == ""


@pytest.mark.parametrize("args", [
    ["consumer", "ls", "ORDRES"], ["consumer", "info", "ORDRES", "C1"],
    ["consumer", "next", "ORDRES", "C1"], ["consumer", "add", "ORDRES", "C9", "--defaults"],
])
def test_a_consumers_missing_stream_is_named_as_the_engine_names_it(jls, args):
    """The server's 10059 of a consumer request, for people: the stream and the closest
    name, as the embedded engine says it (the JSON document stays the server's)."""
    res = jls(*args)
    assert (res.exit_code, res.stderr) == (
        1, "jetlink: error: stream not found (10059): ORDRES; did you mean ORDERS?\n")


def test_consumer_find_on_a_real_server(jls):
    """natscli's consumer find on nats-server's ConsumerInfo documents: pull and push, the
    pending and ack-pending bounds (jsm.go's "some, and fewer")."""
    live = jls.live
    assert "error" not in live.api("CONSUMER.CREATE.ORDERS.PUSH", {
        "stream_name": "ORDERS", "config": {
            "durable_name": "PUSH", "deliver_subject": "push.out", "ack_policy": "explicit"}})
    _doc(jls("consumer", "add", "ORDERS", "P", "--pull", "--defaults", "-j"))
    _doc(jls("consumer", "next", "ORDERS", "P", "--no-ack", "-j"))
    assert _doc(jls("consumer", "find", "ORDERS", "-j")) == ["P", "PUSH"]
    assert jls("consumer", "find", "ORDERS", "--push").stdout == "PUSH\n"
    assert jls("consumer", "find", "ORDERS", "--pull").stdout == "P\n"
    assert jls("consumer", "find", "ORDERS", "--pull", "--invert").stdout == "PUSH\n"
    # P: 1 awaiting its ack, 2 unprocessed; PUSH (no client bound): 3 unprocessed
    assert jls("consumer", "find", "ORDERS", "--ack-pending", "2").stdout == "P\n"
    assert jls("consumer", "find", "ORDERS", "--pending", "3").stdout == "P\n"
    assert jls("consumer", "find", "ORDERS", "--pending", "2", "--invert").stdout == "PUSH\n"
    assert jls("consumer", "find", "ORDERS", "--bound").stdout == ""
    assert jls("consumer", "find", "ORDERS", "--idle", "1h").stdout == "P\n"


NUL_ROWS = ["name-nul-file-store", "name-nul-memory-store", "name-nul-memory-stream"]


@pytest.mark.parametrize("row", NUL_ROWS)
def test_a_consumer_name_with_a_nul_byte_is_answered_as_the_table_says(live, row):
    """The store's step of a create (tests/test_consumer_config.py's rows): nats-server
    refuses a durable name with a NUL byte on a file consumer, 10012 "error creating store
    for consumer", and takes it for a memory one, as the engine does."""
    from test_consumer_config import CASES, expected_config, strip_server_metadata

    [c] = [c for c in CASES if c.id == row]
    live.reset()
    try:
        assert "error" not in live.api(f"STREAM.CREATE.{c.stream['name']}", c.stream)
        name = c.config["durable_name"]
        resp = live.api(f"CONSUMER.CREATE.{c.stream['name']}.{name}",
                        {"stream_name": c.stream["name"], "config": c.config})
    finally:
        live.reset()
    if c.expect.ok:
        assert "error" not in resp, resp
        assert strip_server_metadata(resp["config"]) == expected_config(c)
    else:
        assert (resp["error"]["code"], resp["error"]["err_code"],
                resp["error"]["description"]) == (c.expect.code, c.expect.err_code,
                                                  c.expect.description)


def test_copy_of_a_push_consumer_as_a_pull_consumer(jls):
    """natscli's consumer copy --pull: the copy leaves the push consumer's deliver subject,
    group, heartbeat and flow control out (max_waiting the server's default, or as given);
    --sample and --max-pull-bytes as consumer add takes them."""
    live = jls.live
    assert "error" not in live.api("CONSUMER.CREATE.ORDERS.PUSHY", {
        "stream_name": "ORDERS", "config": {
            "durable_name": "PUSHY", "deliver_subject": "push.y", "deliver_group": "g",
            "ack_policy": "explicit", "idle_heartbeat": 5_000_000_000, "flow_control": True,
            "description": "push"}})
    cfg = _doc(jls("consumer", "copy", "ORDERS", "PUSHY", "PULLY", "--pull", "--sample", "50",
                   "--max-pull-bytes", "1024", "-j"))["config"]
    assert [k for k in ("deliver_subject", "deliver_group", "idle_heartbeat", "flow_control")
            if k in cfg] == []
    assert (cfg["description"], cfg["sample_freq"], cfg["max_bytes"], cfg["max_waiting"]) == (
        "push", "50", 1024, 512)
    assert _server_info(live, "PULLY")["config"]["max_bytes"] == 1024
    cfg = _doc(jls("consumer", "copy", "ORDERS", "PUSHY", "PULL2", "--pull", "--max-waiting",
                   "7", "-j"))["config"]
    assert (cfg.get("deliver_subject"), cfg["max_waiting"]) == (None, 7)
