"""``jetlink consumer add|ls|info|next|ack|rm``: natscli's flags into a ConsumerConfig, and
durable pull consumers run against the engine in a temporary data directory (manual clock)."""

from __future__ import annotations

import json

import pytest
from helpers import data_dir_bytes, doc, ok

from jetlink.cli.consumer import build_config, deliver_policy, missing_answers
from jetlink.core.errors import UsageError

SECOND = 1_000_000_000
START = 1_767_225_600 * SECOND  # 2026-01-01T00:00:00Z, the ManualClock default


# -- flags into a ConsumerConfig document --------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("all", {"deliver_policy": "all"}),
        ("last", {"deliver_policy": "last"}),
        ("new", {"deliver_policy": "new"}),
        ("next", {"deliver_policy": "new"}),
        ("subject", {"deliver_policy": "last_per_subject"}),
        ("last_per_subject", {"deliver_policy": "last_per_subject"}),
        ("42", {"deliver_policy": "by_start_sequence", "opt_start_seq": 42}),
        ("1h", {"deliver_policy": "by_start_time", "opt_start_time": "2025-12-31T23:00:00Z"}),
    ],
)
def test_deliver_policies_like_natscli(text, expected):
    assert deliver_policy(text, START) == expected


def test_deliver_policy_error():
    with pytest.raises(UsageError, match="invalid value for --deliver: 'sometimes'"):
        deliver_policy("sometimes", START)


def test_build_config_defaults_and_flags():
    assert build_config("NEW", {}, START) == {
        "durable_name": "NEW",
        "deliver_policy": "all",
        "ack_policy": "explicit",
        "replay_policy": "instant",
    }
    doc = build_config(
        "NEW",
        {
            "description": "New orders",
            "deliver": "5",
            "ack": "all",
            "wait": "1m",
            "max_deliver": 3,
            "filter": ["orders.new", "orders.paid"],  # --filter given twice
            "max_pending": 10,
            "headers_only": True,
            "max_waiting": 8,
            "max_pull_batch": 50,
            "max_pull_expire": "10s",
            "inactive_threshold": "1h",
            "memory": True,
            "metadata": ["team=shop"],
        },
        START,
    )
    assert doc == {
        "durable_name": "NEW",
        "description": "New orders",
        "deliver_policy": "by_start_sequence",
        "opt_start_seq": 5,
        "ack_policy": "all",
        "ack_wait": 60 * SECOND,
        "max_deliver": 3,
        "filter_subjects": ["orders.new", "orders.paid"],
        "replay_policy": "instant",
        "max_ack_pending": 10,
        "max_waiting": 8,
        "headers_only": True,
        "max_batch": 50,
        "max_expires": 10 * SECOND,
        "inactive_threshold": 3600 * SECOND,
        "mem_storage": True,
        "metadata": {"team": "shop"},
    }


def test_build_config_natscli_details():
    # ack none: natscli sets max_deliver -1; last per subject without filter: filter ">"
    assert build_config("C", {"ack": "none", "max_deliver": 4}, START)["max_deliver"] == -1
    assert build_config("C", {"deliver": "subject"}, START)["filter_subject"] == ">"
    assert build_config("C", {"filter": ["a.*"]}, START)["filter_subject"] == "a.*"


def test_missing_answers():
    assert missing_answers({}) == [
        "--deliver",
        "--ack",
        "--filter",
        "--max-deliver",
        "--max-pending",
        "--headers-only",
    ]
    assert missing_answers({"ack": "none"}) == ["--deliver", "--filter", "--headers-only"]


# -- the verbs, against the engine ---------------------------------------------------------------


@pytest.fixture
def jl(jl, cli_clock, utc):
    """``jl`` (tests/conftest.py) with a manual clock (``jl.clock``), local time UTC and a
    stream ORDERS holding four messages published a second after its creation."""
    jl.clock = cli_clock
    assert (
        jl("stream", "add", "ORDERS", "--subjects", "orders.*", "--defaults", "-j").exit_code == 0
    )
    cli_clock.advance(SECOND)
    assert jl("pub", "orders.new", "hello {{Count}}", "--count", "3", "-H", "K:v").exit_code == 0
    assert jl("pub", "orders.paid", "paid").exit_code == 0
    return jl


RESPONSE_METADATA = {"_nats.req.level": "0", "_nats.ver": "2.15.1", "_nats.level": "5"}


def test_an_add_of_an_existing_consumer_updates_it_and_says_what_changed(jl):
    """The server's create-or-update (natscli's consumer add): an add of a consumer that
    exists with another configuration updates it, and a notice on stderr names what changed;
    the same configuration again says nothing."""
    ok(jl("consumer", "add", "ORDERS", "C", "--defaults"))
    assert ok(jl("consumer", "add", "ORDERS", "C", "--defaults")).stderr == ""
    r = ok(jl("consumer", "add", "ORDERS", "C", "--defaults", "--wait", "5s",
              "--filter", "orders.new", "-j"))
    assert r.stderr == ("jetlink: notice: consumer C of stream ORDERS existed: consumer add "
                        "updated it (changed: ack_wait, filter_subject), as the server's "
                        "create-or-update does; consumer edit shows a change before making "
                        "it\n")
    assert doc(jl("consumer", "info", "ORDERS", "C", "-j"))["config"]["ack_wait"] == 5 * SECOND


def test_add_defaults(jl):
    assert doc(
        jl("consumer", "add", "ORDERS", "NEW", "--filter", "orders.new", "--defaults", "-j")
    ) == {
        "stream_name": "ORDERS",
        "name": "NEW",
        "created": "2026-01-01T00:00:01Z",
        "config": {
            "durable_name": "NEW",
            "name": "NEW",
            "deliver_policy": "all",
            "ack_policy": "explicit",
            "ack_wait": 30 * SECOND,
            "max_deliver": -1,
            "filter_subject": "orders.new",
            "replay_policy": "instant",
            "max_waiting": 512,
            "max_ack_pending": 1000,
            "num_replicas": 0,
            "metadata": RESPONSE_METADATA,
        },
        "delivered": {"consumer_seq": 0, "stream_seq": 0},
        "ack_floor": {"consumer_seq": 0, "stream_seq": 0},
        "num_ack_pending": 0,
        "num_redelivered": 0,
        "num_waiting": 0,
        "num_pending": 3,
        "ts": "2026-01-01T00:00:01Z",
    }


def test_add_never_prompts_without_a_terminal(jl):
    result = jl("consumer", "add", "ORDERS", "NEW", "--pull", "--ack", "explicit")
    assert result.exit_code == 2
    assert result.stderr == (
        "jetlink: error: no terminal to ask on: give --deliver, --filter, --max-deliver, "
        "--max-pending, --headers-only (or --defaults to take natscli's defaults), "
        "or --config FILE\n"
    )
    nameless = jl("consumer", "add", "ORDERS", "--defaults", "-j")
    assert nameless.exit_code == 2
    assert json.loads(nameless.stdout) == {
        "error": {"description": "missing argument CONSUMER (the consumer name)"}
    }


def test_add_every_answer_given_needs_no_defaults(jl):
    info = doc(
        jl(
            "consumer",
            "add",
            "ORDERS",
            "C",
            "--deliver",
            "last",
            "--ack",
            "all",
            "--filter",
            "orders.*",
            "--max-deliver",
            "5",
            "--max-pending",
            "20",
            "--no-headers-only",
            "--wait",
            "10s",
            "-j",
        )
    )
    cfg = info["config"]
    assert (
        cfg["deliver_policy"],
        cfg["ack_policy"],
        cfg["max_deliver"],
        cfg["max_ack_pending"],
        cfg["ack_wait"],
    ) == ("last", "all", 5, 20, 10 * SECOND)
    assert info["num_pending"] == 1


def test_add_prompts_on_a_terminal(jl, monkeypatch):
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: True)
    result = ok(
        jl("consumer", "add", "ORDERS", "-j", input="ASKED\nnew\nexplicit\norders.paid\n-1\n0\nn\n")
    )
    info = json.loads(result.stdout[result.stdout.index("{\n") :])  # after CliRunner's echo
    assert (info["name"], info["config"]["deliver_policy"], info["config"]["filter_subject"]) == (
        "ASKED",
        "new",
        "orders.paid",
    )
    assert "Start policy (all, new, last, subject, 1h, msg sequence) [all]:" in result.stderr


def test_add_from_config_file(jl):
    cfg = jl.tmp / "consumer.json"
    cfg.write_text(
        json.dumps(
            {"durable_name": "FILE", "ack_policy": "explicit", "filter_subject": "orders.paid"}
        )
    )
    assert doc(jl("consumer", "add", "ORDERS", "--config", str(cfg), "-j"))["num_pending"] == 1
    info = jl.tmp / "info.json"
    info.write_text(ok(jl("consumer", "info", "ORDERS", "FILE", "-j")).stdout)
    again = doc(jl("consumer", "add", "ORDERS", "COPY", "--config", str(info), "-j"))
    assert (again["name"], again["config"]["filter_subject"]) == ("COPY", "orders.paid")


def test_engine_errors(jl):
    bad = jl("consumer", "add", "ORDERS", "bad.name", "--defaults", "-j")
    assert bad.exit_code == 1
    error = json.loads(bad.stdout)["error"]
    assert error["err_code"] and "can not contain" in error["description"]
    missing = jl("consumer", "info", "ORDERS", "NOPE")
    assert (missing.exit_code, missing.stderr) == (
        1,
        "jetlink: error: consumer not found (10014): NOPE\n",
    )
    ok(jl("consumer", "add", "ORDERS", "billing", "--pull", "--defaults"))
    close = jl("consumer", "info", "ORDERS", "biling")
    assert close.stderr == "jetlink: error: consumer not found (10014): biling; did you mean " \
        "billing?\n"
    assert json.loads(jl("consumer", "info", "ORDERS", "biling", "-j").stdout) == {
        "error": {"code": 404, "err_code": 10014, "description": "consumer not found"}}
    no_stream = jl("consumer", "ls", "NOPE", "-j")
    assert no_stream.exit_code == 1 and json.loads(no_stream.stdout)["error"]["err_code"] == 10059
    # the stream named, with the closest one, as stream info and a live server name it
    for args in (["info", "ORDRS", "billing"], ["add", "ORDRS", "x", "--pull", "--defaults"]):
        r = jl("consumer", *args)
        assert (r.exit_code, r.stderr) == (1, "jetlink: error: stream not found (10059): ORDRS; "
                                              "did you mean ORDERS?\n")
    # the arguments in the other order: said, with the command that has them right
    before = data_dir_bytes(jl.data)
    for extra in ((), ("--validate",)):
        r = jl("consumer", "add", "c1", "ORDERS", "--pull", "--defaults", *extra)
        assert (r.exit_code, r.stderr) == (1, (
            "jetlink: error: stream not found (10059): c1; ORDERS is a stream: the stream comes "
            "first (jetlink consumer add ORDERS c1 ...)\n")), extra
    assert data_dir_bytes(jl.data) == before


def test_did_you_mean_among_equally_close_names_is_the_first_by_name(jl):
    """Two names as close: the first in name order, as a live server's sorted list gives
    it (not the order they were made in)."""
    ok(jl("consumer", "add", "ORDERS", "F1", "--defaults"))
    ok(jl("consumer", "add", "ORDERS", "A1", "--defaults"))
    r = jl("consumer", "info", "ORDERS", "B1")
    assert r.stderr == "jetlink: error: consumer not found (10014): B1; did you mean A1?\n"


def test_report(jl):
    """natscli's consumer report: its title, columns and cells; --raw numbers; --json the
    ConsumerInfo documents."""
    ok(jl("consumer", "add", "ORDERS", "B", "--defaults", "--ack", "none"))
    ok(jl("consumer", "add", "ORDERS", "A", "--defaults", "--filter", "orders.new"))
    ok(jl("consumer", "next", "ORDERS", "A", "--count", "2", "--no-ack"))
    rows = ok(jl("consumer", "report", "ORDERS")).stdout.splitlines()
    assert rows[0].strip() == "Consumer report for ORDERS with 2 consumers"
    cells = [[c.strip() for c in r.split("│")[1:-1]] for r in rows if r.startswith("│")]
    assert cells == [
        ["Consumer", "Mode", "Ack Policy", "Ack Wait", "Ack Pending", "Redelivered",
         "Unprocessed", "Ack Floor", "API Level", "Cluster"],
        ["A", "Pull", "Explicit", "30.00s", "2", "0", "1 / 25%", "0", "0", ""],
        ["B", "Pull", "None", "0s", "0", "0", "4 / 100%", "0", "0", ""],
    ]
    raw = ok(jl("consumer", "report", "ORDERS", "--raw")).stdout.splitlines()
    assert [c.strip() for c in raw[4].split("│")[1:-1]] == [
        "A", "Pull", "Explicit", "30s", "2", "0", "1", "0", "0", ""]
    # the engine's consumers have no RAFT group: --leaders adds no report
    assert ok(jl("consumer", "report", "ORDERS", "-l")).stdout == "\n".join(rows) + "\n"
    assert [d["name"] for d in doc(jl("consumer", "report", "ORDERS", "-j"))] == ["A", "B"]
    r = jl("consumer", "report", "ORDRES")
    assert r.stderr == "jetlink: error: stream not found (10059): ORDRES; did you mean ORDERS?\n"


def test_ls(jl):
    assert ok(jl("consumer", "ls", "ORDERS")).stdout == "No Consumers defined\n"
    ok(jl("consumer", "add", "ORDERS", "B", "--defaults", "--description", "second"))
    ok(jl("consumer", "add", "ORDERS", "A", "--defaults", "--filter", "orders.paid"))
    assert doc(jl("consumer", "ls", "ORDERS", "-j")) == ["A", "B"]
    assert ok(jl("consumer", "ls", "ORDERS", "-n")).stdout == "A\nB\n"
    rows = ok(jl("consumer", "ls", "ORDERS")).stdout.splitlines()
    assert rows[0].startswith("Consumers")
    assert [c.strip() for c in rows[2].split("│")[1:-1]] == [
        "Name",
        "Description",
        "Created",
        "Ack Pending",
        "Unprocessed",
        "Last Delivery",
    ]
    assert [c.strip() for c in rows[4].split("│")[1:-1]] == [
        "A",
        "",
        "2026-01-01 00:00:01",
        "0",
        "1",
        "never",
    ]
    assert [c.strip() for c in rows[5].split("│")[1:-1]] == [
        "B",
        "second",
        "2026-01-01 00:00:01",
        "0",
        "4",
        "never",
    ]


INFO_HUMAN = """\
Information for Consumer ORDERS > NEW created 2026-01-01 00:00:01

Configuration:

                    Name: NEW
               Pull Mode: true
          Filter Subject: orders.new
          Deliver Policy: All
              Ack Policy: Explicit
                Ack Wait: 30.00s
           Replay Policy: Instant
         Max Ack Pending: 1,000
       Max Waiting Pulls: 512

State:

            Host Version: 2.15.1
      Required API Level: 0 hosted at level 5
  Last Delivered Message: Consumer sequence: 1 Stream sequence: 1 Last delivery: 5.00s ago
    Acknowledgment Floor: Consumer sequence: 1 Stream sequence: 1 Last Ack: 5.00s ago
        Outstanding Acks: 0 out of maximum 1,000
    Redelivered Messages: 0
    Unprocessed Messages: 2
           Waiting Pulls: 0 of maximum 512
"""


def test_next_ack_and_info(jl):
    ok(jl("consumer", "add", "ORDERS", "NEW", "--filter", "orders.new", "--defaults"))
    jl.clock.advance(5 * SECOND)
    assert ok(jl("consumer", "next", "ORDERS", "NEW")).stdout == (
        "[00:00:06] subj: orders.new / tries: 1 / cons seq: 1 / str seq: 1 / pending: 2\n"
        "\n"
        "Headers:\n"
        "\n"
        "  K: v\n"
        "\n"
        "Data:\n"
        "\n"
        "\n"
        "hello 1\n"
        "\n"
        "Acknowledged message\n"
        "\n"
    )
    jl.clock.advance(5 * SECOND)
    assert ok(jl("consumer", "info", "ORDERS", "NEW")).stdout == INFO_HUMAN
    fetched = doc(jl("consumer", "next", "ORDERS", "NEW", "--no-ack", "-j"))
    assert fetched == [
        {
            "subject": "orders.new",
            "seq": 2,
            "time": "2026-01-01T00:00:01Z",
            "headers": {"K": ["v"]},
            "data": "aGVsbG8gMg==",
            "stream": "ORDERS",
            "consumer": "NEW",
            "consumer_seq": 2,
            "num_delivered": 1,
            "num_pending": 1,
            "reply": "$JS.ACK.ORDERS.NEW.1.2.2.1767225601000000000.1",
        }
    ]
    assert doc(jl("consumer", "info", "ORDERS", "NEW", "-j"))["num_ack_pending"] == 1
    for seq in ("999", "1"):  # never delivered; not pending
        wrong = jl("consumer", "ack", "ORDERS", "NEW", seq)
        assert (wrong.exit_code, wrong.stdout, wrong.stderr) == (1, "", (
            f"jetlink: error: message {seq} is not pending on consumer ORDERS > NEW (never "
            "delivered to it, acknowledged already, or ack policy none): nothing acknowledged; "
            "jetlink consumer info ORDERS NEW shows what is outstanding\n"))
    assert doc(jl("consumer", "info", "ORDERS", "NEW", "-j"))["num_ack_pending"] == 1
    assert doc(jl("consumer", "ack", "ORDERS", "NEW", "2", "-j")) == {"success": True}
    assert doc(jl("consumer", "info", "ORDERS", "NEW", "-j"))["num_ack_pending"] == 0
    again = jl("consumer", "ack", "ORDERS", "NEW", "2")
    assert again.exit_code == 1 and "acknowledged already" in again.stderr
    rest = doc(jl("consumer", "next", "ORDERS", "NEW", "--count", "5", "-j"))
    assert [m["seq"] for m in rest] == [3]
    empty = ok(jl("consumer", "next", "ORDERS", "NEW"))
    assert (empty.stdout, empty.stderr) == ("", "No messages pending\n")
    assert doc(jl("consumer", "next", "ORDERS", "NEW", "-j")) == []


def test_unacked_messages_come_back_after_the_ack_wait(jl):
    ok(jl("consumer", "add", "ORDERS", "W", "--defaults", "--wait", "10s"))
    first = doc(jl("consumer", "next", "ORDERS", "W", "--no-ack", "-j"))
    assert [(m["seq"], m["num_delivered"]) for m in first] == [(1, 1)]
    jl.clock.advance(11 * SECOND)
    again = doc(jl("consumer", "next", "ORDERS", "W", "--no-ack", "-j"))
    assert [(m["seq"], m["num_delivered"]) for m in again] == [(1, 2)]
    assert ok(jl("consumer", "next", "ORDERS", "W", "--raw")).stdout == "hello 2\n"


def test_next_raw_of_an_empty_body_is_an_empty_line(jl):
    """natscli's consumer next --raw prints the body as it is (fmt.Println): an empty one is
    an empty line, not stream view's "nil body"."""
    ok(jl("consumer", "add", "ORDERS", "E", "--defaults", "--filter", "orders.empty"))
    ok(jl("pub", "orders.empty", "", "-H", "X:1"))
    assert ok(jl("consumer", "next", "ORDERS", "E", "--raw", "--no-ack")).stdout == "\n"


def test_next_says_why_pending_messages_were_not_delivered(jl):
    """Messages wait but a pull gets none: the line names what holds them (the consumer's
    max_ack_pending reached, its group pinned to another client, an overflow request's
    minimum) and what to do; exit 0 as for nothing pending, 1 with --wait."""
    ok(jl("consumer", "add", "ORDERS", "MA", "--max-pending", "1", "--defaults"))
    ok(jl("consumer", "next", "ORDERS", "MA", "--no-ack"))
    r = ok(jl("consumer", "next", "ORDERS", "MA"))
    assert (r.stdout, r.stderr) == ("", (
        "No messages delivered: consumer ORDERS > MA has 1 unacknowledged of its "
        "max_ack_pending 1, 3 more pending (acknowledge them: jetlink consumer ack ORDERS MA "
        "SEQ, or they are redelivered after the ack wait)\n"))
    r = jl("consumer", "next", "ORDERS", "MA", "--wait", "10ms")
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: no message received within 10ms (--wait): consumer ORDERS > MA has "
        "1 unacknowledged of its max_ack_pending 1, 3 more pending (acknowledge them: jetlink "
        "consumer ack ORDERS MA SEQ, or they are redelivered after the ack wait)\n"))
    # ack all: the ack a live server takes carries the delivery's own numbers
    ok(jl("consumer", "add", "ORDERS", "AA", "--ack", "all", "--max-pending", "1",
          "--defaults"))
    ok(jl("consumer", "next", "ORDERS", "AA", "--no-ack"))
    assert ok(jl("consumer", "next", "ORDERS", "AA")).stderr == (
        "No messages delivered: consumer ORDERS > AA has 1 unacknowledged of its "
        "max_ack_pending 1, 3 more pending (they are redelivered after the ack wait; consumer "
        "next without --no-ack acknowledges what it fetches)\n")
    ok(jl("consumer", "add", "ORDERS", "PIN", "--pinned-groups", "jobs", "--pinned-ttl", "1m",
          "--defaults"))
    first = doc(jl("consumer", "next", "ORDERS", "PIN", "--group", "jobs", "-j"))
    pin = first[0]["headers"]["Nats-Pin-Id"][0]
    r = ok(jl("consumer", "next", "ORDERS", "PIN", "--group", "jobs"))  # another process
    assert r.stderr == (
        f"No messages delivered: group jobs of consumer ORDERS > PIN is pinned to client {pin} "
        f"(3 pending; --pin-id {pin} asks as that client, jetlink consumer unpin ORDERS PIN "
        "jobs releases it)\n")
    assert ok(jl("consumer", "next", "ORDERS", "PIN", "--group", "jobs", "--pin-id", pin,
                 "--raw")).stdout == "hello 2\n"
    ok(jl("consumer", "add", "ORDERS", "OV", "--overflow-groups", "g", "--defaults"))
    r = ok(jl("consumer", "next", "ORDERS", "OV", "--group", "g", "--min-pending", "9"))
    assert r.stderr == "No messages delivered: 4 pending, fewer than --min-pending 9\n"


@pytest.mark.parametrize(("args", "says"), [
    (["consumer", "add", "ORDERS", "D", "--defaults", "--deliver", " 5"],
     "invalid value for --deliver: ' 5' (all, last, new, subject, last_per_subject, a "
     "sequence, or a duration like 1h)"),
    (["consumer", "ack", "ORDERS", "C", "99999999999999999999999"],
     "Invalid value for 'SEQ': 99999999999999999999999 is not in the range "
     "1<=x<=18446744073709551615."),
    (["consumer", "next", "ORDERS", "C", "--priority", "10"],
     "Invalid value for '--priority': 10 is not in the range 0<=x<=9."),
])
def test_values_outside_their_rule_are_usage_errors(jl, args, says):
    """A value the rule refuses is a usage error (exit 2) before anything is sent: a
    sequence with a space, past uint64, a priority past 9."""
    r = jl(*args)  # (CliRunner shows Click's own usage-error form; jetlink's is one line)
    assert r.exit_code == 2 and says in r.stderr, r.output


def test_info_shows_the_push_and_pull_rows_natscli_shows(jl, tmp_path):
    """natscli's showInfo rows and order: the queue group after the deliver policy, the
    sampling rate, rate limit, idle heartbeat and flow control of a push consumer (and no
    inactive threshold), a pull consumer's max bytes."""
    push = tmp_path / "push.json"
    push.write_text(json.dumps({
        "durable_name": "P", "deliver_subject": "out.p", "deliver_group": "q",
        "ack_policy": "explicit", "deliver_policy": "all", "idle_heartbeat": 5 * SECOND,
        "flow_control": True, "rate_limit_bps": 80000, "sample_freq": "50%",
        "inactive_threshold": 60 * SECOND}))
    text = ok(jl("consumer", "add", "ORDERS", "--config", str(push))).stdout
    rows = [line.strip() for line in text.split("Configuration:")[1].split("State:")[0]
            .splitlines() if line.strip()]
    assert rows == ["Name: P", "Delivery Subject: out.p", "Deliver Policy: All",
                    "Deliver Queue Group: q", "Ack Policy: Explicit", "Ack Wait: 30.00s",
                    "Replay Policy: Instant", "Sampling Rate: 50%",
                    "Rate Limit: 9.8 KiB / second", "Max Ack Pending: 1,000",
                    "Idle Heartbeat: 5.00s", "Flow Control: true"]
    pull = tmp_path / "pull.json"
    pull.write_text(json.dumps({"durable_name": "B", "ack_policy": "explicit",
                                "deliver_policy": "all", "max_bytes": 1024}))
    assert "Max Pull MaxBytes: 1,024\n" in ok(jl("consumer", "add", "ORDERS", "--config",
                                                 str(pull))).stdout


def test_next_count_over_the_max_batch_is_fetched_in_batches_the_consumer_takes(jl):
    """natscli's next gets --count messages whatever the consumer's max_batch: a request
    over it (the server's 409 "Exceeded MaxRequestBatch of 2") is asked again in batches of
    2."""
    ok(jl("consumer", "add", "ORDERS", "Y", "--max-pull-batch", "2", "--defaults"))
    got = doc(jl("consumer", "next", "ORDERS", "Y", "--count", "3", "-j"))
    assert [m["seq"] for m in got] == [1, 2, 3]
    assert doc(jl("consumer", "info", "ORDERS", "Y", "-j"))["num_pending"] == 1


def test_next_nak_and_term_answer_the_message_as_natscli(jl):
    """natscli's next --nak (redelivered at once) and --term (never again), with its lines;
    --term with --ack (typed) or --nak is its usage error; consumer state is info --state."""
    ok(jl("consumer", "add", "ORDERS", "NT", "--defaults"))
    r = ok(jl("consumer", "next", "ORDERS", "NT", "--nak"))
    assert r.stdout.endswith("hello 1\n\nNegative Acknowledged message\n\n"), r.stdout
    again = doc(jl("consumer", "next", "ORDERS", "NT", "--term", "-j"))
    assert [(m["seq"], m["num_delivered"]) for m in again] == [(1, 2)]
    r = ok(jl("consumer", "next", "ORDERS", "NT", "--term", "--raw"))  # (said with --raw too)
    assert r.stdout == "hello 2\n\nTerminated message\n", r.stdout
    got = doc(jl("consumer", "info", "ORDERS", "NT", "-j"))
    assert (got["num_ack_pending"], got["ack_floor"]["stream_seq"]) == (0, 2)
    for extra in ("--ack", "--nak"):
        r = jl("consumer", "next", "ORDERS", "NT", "--term", extra)
        assert (r.exit_code, r.stderr) == (2, (
            "jetlink: error: can not both Acknowledge and Terminate message (--term with "
            f"{extra})\n"))
    assert doc(jl("consumer", "info", "ORDERS", "NT", "-j"))["num_pending"] == 2
    state = ok(jl("consumer", "state", "ORDERS", "NT")).stdout
    assert state.startswith("State for Consumer ORDERS > NT created ")
    assert "Configuration:" not in state and "Unprocessed Messages: 2" in state
    assert doc(jl("consumer", "state", "ORDERS", "NT", "-j")) == doc(
        jl("consumer", "info", "ORDERS", "NT", "-j"))


def test_edit_with_an_empty_filter_removes_the_filter(jl):
    """natscli's edit: --filter '' sets no filter subject at all (one or several before)."""
    ok(jl("consumer", "add", "ORDERS", "F", "--filter", "orders.new", "--filter",
          "orders.paid", "--defaults"))
    cfg = doc(jl("consumer", "edit", "ORDERS", "F", "--filter", "", "-f", "-j"))["config"]
    assert "filter_subject" not in cfg and "filter_subjects" not in cfg
    assert ok(jl("consumer", "edit", "ORDERS", "F", "--filter", "", "-f")).stdout == (
        "No difference in configuration\n")


def test_rm(jl):
    ok(jl("consumer", "add", "ORDERS", "GONE", "--defaults"))
    refused = jl("consumer", "rm", "ORDERS", "GONE")
    assert refused.exit_code == 2
    assert (
        refused.stderr
        == "jetlink: error: no terminal to confirm on: pass -f/--force to delete consumer "
        "ORDERS > GONE\n"
    )
    assert doc(jl("consumer", "rm", "ORDERS", "GONE", "-f", "-j")) == {"success": True}
    assert doc(jl("consumer", "ls", "ORDERS", "-j")) == []
    assert doc(jl("stream", "info", "ORDERS", "-j"))["state"]["consumer_count"] == 0


def test_an_ack_of_a_sequence_no_delivery_holds_changes_nothing(jl):
    """On a work-queue stream an ack removes the message: one of a sequence never delivered
    (a typo: the consumer sequence for the stream's) is refused and removes nothing, nor
    acknowledges the pending ones below it."""
    ok(jl("stream", "add", "WQ", "--subjects", "wq.>", "--retention", "work", "--defaults"))
    for i in range(3):
        ok(jl("pub", f"wq.{i}", f"m{i}"))
    ok(jl("consumer", "add", "WQ", "W", "--pull", "--ack", "explicit", "--filter", "wq.1",
          "--defaults"))
    ok(jl("consumer", "next", "WQ", "W", "--no-ack"))  # seq 2 pending; 1 and 3 not its own
    before = data_dir_bytes(jl.data)
    for seq in ("1", "3"):
        r = jl("consumer", "ack", "WQ", "W", seq)
        assert r.exit_code == 1 and "is not pending" in r.stderr
    assert data_dir_bytes(jl.data) == before
    assert doc(jl("stream", "info", "WQ", "-j"))["state"]["messages"] == 3
    assert ok(jl("consumer", "ack", "WQ", "W", "2")).exit_code == 0
    assert doc(jl("stream", "info", "WQ", "-j"))["state"]["messages"] == 2


def test_next_waits_for_a_message_with_wait(jl):
    """--wait D asks again until D is over (natscli waits its --timeout): a message another
    process publishes meanwhile is received; none: exit status 1 naming the wait. Without
    it: what is pending now, at once."""
    import threading
    import time

    from helpers import wait_until

    from jetlink.core.clock import SystemClock
    from jetlink.core.jetstream import JetStream
    from jetlink.core.store import DataDir

    ok(jl("stream", "add", "S", "--subjects", "s.>", "--defaults"))
    ok(jl("consumer", "add", "S", "C", "--defaults"))
    res = jl("consumer", "next", "S", "C", "--wait", "200ms")
    assert (res.exit_code, res.stderr) == (1, (
        "jetlink: error: no message received within 200ms (--wait): nothing of consumer "
        "S > C was delivered\n"))
    now = ok(jl("consumer", "next", "S", "C"))
    assert (now.stdout, now.stderr) == ("", "No messages pending\n")
    started = threading.Event()

    def publish_later() -> None:
        dd = DataDir(jl.data)
        try:
            js = JetStream(dd.open("local"), SystemClock())
            started.wait(30)
            time.sleep(0.5)  # after the command asked once and found nothing (likely)
            js.publish("s.late", b"late")
        finally:
            dd.close()

    t = threading.Thread(target=publish_later)
    t.start()
    try:
        started.set()
        got = doc(jl("consumer", "next", "S", "C", "--wait", "30s", "--json"))
    finally:
        t.join(30)
    assert [(m["subject"], m["data"]) for m in got] == [("s.late", "bGF0ZQ==")]
    wait_until(lambda: not t.is_alive(), message="the publisher ended")


@pytest.mark.parametrize("flag", ["--max-deliver", "--max-pending", "--max-waiting",
                                  "--max-pull-batch"])
def test_a_consumer_limit_past_int64_is_a_usage_error(jl, flag):
    """The server's fields are Go ints: a value past int64 is refused as a flag (exit 2),
    never sent for the server's JSON decoder to refuse."""
    before = data_dir_bytes(jl.data)
    r = jl("consumer", "add", "ORDERS", "C", "--defaults", flag, str(2**63))
    assert r.exit_code == 2, r.stderr
    assert (f"Invalid value for '{flag}': 9223372036854775808 is not in the range "
            "-9223372036854775808<=x<=9223372036854775807.") in r.stderr
    assert data_dir_bytes(jl.data) == before


def test_a_pull_count_past_int64_is_a_usage_error(jl):
    """consumer next --count is natscli's Go int: past int64 it is refused (exit 2), on
    either engine, never sent as a batch the server's JSON decoder refuses."""
    ok(jl("consumer", "add", "ORDERS", "C", "--pull", "--defaults"))
    r = jl("consumer", "next", "ORDERS", "C", "--count", str(2**63))
    assert r.exit_code == 2, r.stderr
    assert ("Invalid value for '--count': 9223372036854775808 is not in the range "
            "1<=x<=9223372036854775807.") in r.stderr


def test_a_config_files_bad_enum_names_the_values(jl, tmp_path):
    path = tmp_path / "c.json"
    path.write_text('{"durable_name": "C2", "ack_policy": "sometimes"}')
    r = jl("consumer", "add", "ORDERS", "--config", str(path))
    assert r.exit_code == 1
    assert r.stderr.startswith('jetlink: error: invalid JSON: can not unmarshal "\\"sometimes\\"" '
                               "(10025): ack_policy is one of none, all, explicit")
    assert doc_error(jl("consumer", "add", "ORDERS", "--config", str(path), "-j")) == (
        'invalid JSON: can not unmarshal "\\"sometimes\\""')


def doc_error(result):
    import json

    return json.loads(result.stdout)["error"]["description"]


def test_a_backoff_is_built_as_natscli_builds_it_and_keeps_its_ack_wait(jl):
    """--backoff without --max-deliver: one delivery per step and one more (natscli's); 0
    steps refused, not read as the default; an edit of --wait on a backoff consumer is
    natscli's refusal, not a change shown and thrown away."""
    cfg = json.loads(jl("consumer", "add", "ORDERS", "B1", "--defaults", "--backoff", "linear",
                        "--backoff-steps", "3", "--backoff-min", "1s", "--backoff-max", "3s",
                        "-j").stdout)["config"]
    assert (cfg["max_deliver"], len(cfg["backoff"]), cfg["ack_wait"]) == (4, 3, 10**9)
    zero = jl("consumer", "add", "ORDERS", "B0", "--defaults", "--backoff", "linear",
              "--backoff-steps", "0")
    assert (zero.exit_code, zero.stderr) == (2, (
        "jetlink: error: invalid value for --backoff-steps: 0: it must be more than 0\n"))
    edit = jl("consumer", "edit", "ORDERS", "B1", "--wait", "10s", "-f")
    assert (edit.exit_code, edit.stdout) == (1, "")
    assert edit.stderr == ("jetlink: error: consumers with backoff policies do not support "
                           "editing Ack Wait: consumer ORDERS > B1 waits 3 backoff steps; its "
                           "ack wait is the first\n")
    after = json.loads(jl("consumer", "info", "ORDERS", "B1", "-j").stdout)["config"]
    assert after["ack_wait"] == 10**9


def test_max_deliver_below_the_backoff_names_both(jl):
    r = jl("consumer", "add", "ORDERS", "C4", "--defaults", "--max-deliver", "1",
           "--backoff", "linear")
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: max deliver is required to be > length of backoff values (10116): "
        "max_deliver is 1 and the backoff has 10 steps: --max-deliver must be more than "
        "--backoff-steps\n"))


def test_the_rough_edges_a_natscli_user_met(jl, tmp_path):
    """Push consumers shown as push; edit --config and --wait 0 with no false difference;
    a file naming another consumer refused; flags named and ranged as the server's."""
    ok(jl("stream", "add", "S", "--subjects", "o.>", "--defaults"))
    path = tmp_path / "p.json"
    path.write_text('{"durable_name":"P1","deliver_subject":"push.out","ack_policy":"explicit"}')
    ok(jl("consumer", "add", "S", "--config", str(path)))
    info = ok(jl("consumer", "info", "S", "P1")).stdout
    assert "Delivery Subject: push.out" in info and "Active Interest: No interest" in info
    assert "Pull Mode" not in info and "Waiting Pulls" not in info
    ok(jl("consumer", "add", "S", "C3", "--defaults"))
    current = tmp_path / "c3.json"
    current.write_text(ok(jl("consumer", "info", "S", "C3", "-j")).stdout)
    same = ok(jl("consumer", "edit", "S", "C3", "--config", str(current), "-f", "--dry-run"))
    assert same.stdout == "No difference in configuration\n"
    other = tmp_path / "c4.json"
    other.write_text(current.read_text().replace('"C3"', '"OTHER"'))
    before = data_dir_bytes(jl.data)
    r = jl("consumer", "edit", "S", "C3", "--config", str(other), "-f")
    assert data_dir_bytes(jl.data) == before  # refused: nothing changed
    assert (r.exit_code, r.stderr) == (2, (
        f"jetlink: error: --config {other} is the configuration of consumer OTHER, not C3 "
        "(edit that one, or give this one's name in the file)\n"))
    # --wait 0 is the server's 30s: nothing changes, and nothing is shown as changing
    assert ok(jl("consumer", "edit", "S", "C3", "--wait", "0", "-f")).stdout == \
        "No difference in configuration\n"
    r = jl("consumer", "add", "S", "X", "--defaults", "--pause", "5x")
    assert r.exit_code == 2 and r.stderr.startswith("jetlink: error: invalid value for --pause: ")
    r = jl("consumer", "add", "S", "H", "--defaults", "--replicas", "9" * 20)
    assert r.exit_code == 2 and "is not in the range" in r.stderr
    before = data_dir_bytes(jl.data)
    r = jl("consumer", "reset", "S", "C3", "-f", "--sequence", "9" * 23)  # past a uint64
    assert r.exit_code == 2 and "is not in the range" in r.stderr
    assert data_dir_bytes(jl.data) == before


@pytest.mark.parametrize(("peer", "line"), [
    ({"name": "n2", "current": True, "active": 1_000_000}, "n2, current, seen 1ms ago"),
    ({"name": "n3", "current": False, "active": 0, "offline": True, "lag": 4},
     "n3, outdated, not seen"),
    ({"name": "n3", "current": False, "active": 2**63 - 1}, "n3, outdated, not seen"),
])
def test_a_consumer_replica_row_is_natscli_s(peer, line):
    """natscli's consumer Cluster Information rows: current or outdated, when last seen
    ("not seen": an active of 0 or int64's largest); no lag, no OFFLINE (the stream's)."""
    from jetlink.cli.consumer import _replica_line

    assert _replica_line(peer) == line


def test_add_validate_and_output_check_against_the_stream_and_create_nothing(jl):
    """consumer add --validate / --output FILE: checked with the server's rules against the
    stream's configuration (read only), printed with natscli's verdict or saved for
    --config; no consumer made, no byte changed."""
    from helpers import data_dir_bytes

    ok(jl("stream", "add", "S", "--subjects", "s.>", "--defaults"))
    before = data_dir_bytes(jl.data)
    r = ok(jl("consumer", "add", "S", "C", "--defaults", "--validate"))
    text, verdict = r.stdout.rsplit("\n\n", 1)
    assert verdict == "Configuration is a valid Consumer\n"
    assert json.loads(text)["durable_name"] == "C"
    out = jl.tmp / "c.json"
    ok(jl("consumer", "add", "S", "C", "--defaults", "--output", str(out)))
    assert json.loads(out.read_text()) == json.loads(text)
    r = jl("consumer", "add", "S", "C", "--defaults", "--backoff", "linear", "--max-deliver",
           "2", "--validate")
    assert r.exit_code == 1, r.stdout + r.stderr
    assert "--max-deliver must be more than --backoff-steps" in r.stderr
    r = jl("consumer", "add", "NOPE", "C", "--defaults", "--validate")
    assert r.exit_code == 1 and "stream not found (10059)" in r.stderr
    assert data_dir_bytes(jl.data) == before
    assert doc(jl("consumer", "ls", "S", "-j")) == []
    ok(jl("consumer", "add", "S", "--config", str(out)))
    assert doc(jl("consumer", "ls", "S", "-j")) == ["C"]


def test_copy_makes_a_consumer_from_anothers_configuration_not_its_position(jl):
    """consumer copy (natscli's): SOURCE's configuration as DEST's, on the same stream, the
    flags given overriding it; a new consumer starts where its start policy says (SOURCE's
    deliveries are not copied); an existing DEST is never changed."""
    from helpers import data_dir_bytes

    ok(jl("consumer", "add", "ORDERS", "C1", "--defaults", "--filter", "orders.new",
          "--max-deliver", "5", "--description", "first", "--metadata", "team=shop"))
    ok(jl("consumer", "next", "ORDERS", "C1", "--count", "2"))
    info = doc(jl("consumer", "copy", "ORDERS", "C1", "C2", "-j"))
    assert info == {
        "stream_name": "ORDERS", "name": "C2",
        "created": "2026-01-01T00:00:01Z",
        "config": {
            "durable_name": "C2", "name": "C2", "description": "first",
            "deliver_policy": "all", "ack_policy": "explicit", "ack_wait": 30 * SECOND,
            "max_deliver": 5, "filter_subject": "orders.new", "replay_policy": "instant",
            "max_waiting": 512, "max_ack_pending": 1000, "num_replicas": 0,
            "metadata": {**RESPONSE_METADATA, "team": "shop"},
        },
        "delivered": {"consumer_seq": 0, "stream_seq": 0},
        "ack_floor": {"consumer_seq": 0, "stream_seq": 0},
        "num_ack_pending": 0, "num_redelivered": 0, "num_waiting": 0, "num_pending": 3,
        "ts": "2026-01-01T00:00:01Z",
    }
    # the same configuration again: the existing consumer, as the server answers a create
    assert doc(jl("consumer", "cp", "ORDERS", "C1", "C2", "-j"))["config"] == info["config"]
    # the flags a new consumer may choose override the copied values
    cfg = doc(jl("consumer", "copy", "ORDERS", "C1", "C3", "--deliver", "2", "--ack", "all",
                 "--replay", "original", "--filter", "", "--wait", "1m", "--backoff",
                 "linear", "--backoff-steps", "3", "--description", "third", "-j"))["config"]
    assert {k: cfg.get(k) for k in ("description", "deliver_policy", "opt_start_seq",
                                     "ack_policy", "ack_wait", "replay_policy",
                                     "filter_subject", "backoff", "max_deliver")} == {
        "description": "third", "deliver_policy": "by_start_sequence", "opt_start_seq": 2,
        "ack_policy": "all", "ack_wait": 60 * SECOND, "replay_policy": "original",
        "filter_subject": None, "backoff": [60 * SECOND, 440 * SECOND, 820 * SECOND],
        "max_deliver": 5}
    cfg = doc(jl("consumer", "copy", "ORDERS", "C1", "C4", "--deliver", "subject", "--filter",
                 "", "-j"))["config"]
    assert (cfg["deliver_policy"], cfg["filter_subject"]) == ("last_per_subject", ">")
    # natscli's other copy flags: --sample, --max-pull-bytes, --pull (max_waiting as given)
    cfg = doc(jl("consumer", "copy", "ORDERS", "C1", "C5", "--sample", "25", "--max-pull-bytes",
                 "2048", "--pull", "--max-waiting", "9", "-j"))["config"]
    assert (cfg["sample_freq"], cfg["max_bytes"], cfg["max_waiting"]) == ("25", 2048, 9)
    assert "sample_freq" not in doc(jl("consumer", "copy", "ORDERS", "C5", "C6", "--sample", "0",
                                       "-j"))["config"]
    # --max-waiting without --pull is not taken (natscli's cpAction): SOURCE's stays
    r = jl("consumer", "copy", "ORDERS", "C1", "C7", "--max-waiting", "9", "-j")
    assert json.loads(r.stdout)["config"]["max_waiting"] == 512
    assert r.stderr == ("jetlink: notice: --max-waiting is taken with --pull only (as natscli's "
                        "copy takes it): C7 keeps C1's max_waiting\n")
    # refusals: nothing changed
    before = data_dir_bytes(jl.data)
    r = jl("consumer", "copy", "ORDERS", "C1", "C2", "--description", "other")
    assert (r.exit_code, r.stderr) == (1, "jetlink: error: consumer already exists (10148): "
                                          "consumer ORDERS > C2 exists with another "
                                          "configuration: copy to a new name, or consumer "
                                          "edit changes it\n")
    r = jl("consumer", "copy", "ORDERS", "C1", "C2", "--description", "other", "-j")
    assert r.exit_code == 1 and json.loads(r.stdout) == {
        "error": {"code": 400, "err_code": 10148, "description": "consumer already exists"}}
    r = jl("consumer", "copy", "ORDERS", "C1", "C1")
    assert (r.exit_code, r.stderr) == (2, "jetlink: error: source and destination consumer "
                                          "names cannot be the same\n")
    r = jl("consumer", "copy", "ORDERS", "NOPE", "C9")
    assert (r.exit_code, r.stderr) == (1, "jetlink: error: consumer not found (10014): NOPE\n")
    r = jl("consumer", "copy", "ORDERS", "C1", "C9", "--deliver", "sometimes")
    assert r.exit_code == 2 and "invalid value for --deliver: 'sometimes'" in r.stderr
    r = jl("consumer", "copy", "ORDERS", "C1", "C9", "--max-deliver", "2", "--backoff",
           "linear")
    assert r.exit_code == 1 and "--max-deliver must be more than --backoff-steps" in r.stderr
    assert data_dir_bytes(jl.data) == before
    assert doc(jl("consumer", "info", "ORDERS", "C2", "-j"))["config"]["description"] == "first"


def test_next_prints_an_empty_body_as_natscli_does(jl):
    """natscli's consumer next prints an empty body as an empty line (fmt.Println of the
    data), where its stream view says "nil body"."""
    ok(jl("stream", "add", "EB", "--subjects", "eb", "--defaults"))
    ok(jl("pub", "eb", ""))
    ok(jl("consumer", "add", "EB", "C", "--pull", "--defaults"))
    out = ok(jl("consumer", "next", "EB", "C")).stdout
    assert out.split("\n")[1:] == ["", "", "", "Acknowledged message", "", ""], out
    assert "nil body" in ok(jl("stream", "view", "EB")).stdout


def test_max_pull_bytes_sample_and_an_edited_backoff_as_natscli(jl):
    """natscli's --max-pull-bytes (max_bytes) and --sample (sample_freq, 0 to 100) on add
    and edit; edit's --backoff sets the new policy ("none": none) and keeps max_deliver, or
    takes --max-deliver, as natscli's edit does; ack none keeps -1 with a backoff."""
    cfg = doc(jl("consumer", "add", "ORDERS", "S", "--pull", "--defaults", "--max-pull-bytes",
                 "1024", "--sample", "50", "-j"))["config"]
    assert (cfg["max_bytes"], cfg["sample_freq"]) == (1024, "50")
    assert "Sampling Rate: 50" in ok(jl("consumer", "info", "ORDERS", "S")).stdout
    from helpers import data_dir_bytes

    before = data_dir_bytes(jl.data)
    r = jl("consumer", "add", "ORDERS", "T", "--pull", "--defaults", "--sample", "101")
    assert data_dir_bytes(jl.data) == before  # refused: nothing changed
    assert (r.exit_code, r.stderr) == (2, "jetlink: error: invalid value for --sample: 101: "
                                          "sample percent is not between 0 and 100\n")
    cfg = doc(jl("consumer", "edit", "ORDERS", "S", "--sample", "0", "--max-pull-bytes",
                 "2048", "--backoff", "linear", "--backoff-steps", "3", "-f", "-j"))["config"]
    assert "sample_freq" not in cfg and cfg["max_bytes"] == 2048
    assert (cfg["backoff"], cfg["max_deliver"]) == (
        [60_000_000_000, 440_000_000_000, 820_000_000_000], -1)
    cfg = doc(jl("consumer", "edit", "ORDERS", "S", "--backoff", "none", "-f", "-j"))["config"]
    assert "backoff" not in cfg and cfg["max_deliver"] == -1
    ok(jl("consumer", "add", "ORDERS", "MD", "--pull", "--defaults", "--max-deliver", "5"))
    cfg = doc(jl("consumer", "edit", "ORDERS", "MD", "--backoff", "linear", "--backoff-steps",
                 "2", "-f", "-j"))["config"]
    assert (len(cfg["backoff"]), cfg["max_deliver"]) == (2, 5)
    cfg = doc(jl("consumer", "edit", "ORDERS", "MD", "--backoff", "none", "--max-deliver", "20",
                 "-f", "-j"))["config"]
    assert "backoff" not in cfg and cfg["max_deliver"] == 20
    cfg = doc(jl("consumer", "add", "ORDERS", "AN", "--pull", "--defaults", "--ack", "none",
                 "--backoff", "linear", "-j"))["config"]
    assert cfg["max_deliver"] == -1
    before = data_dir_bytes(jl.data)
    r = jl("consumer", "edit", "ORDERS", "S", "--backoff-min", "1s", "-f")
    assert data_dir_bytes(jl.data) == before
    assert (r.exit_code, r.stderr) == (2, "jetlink: error: --backoff-min shapes a backoff: "
                                          "give --backoff linear\n")


def test_a_filter_flag_is_one_subject_as_natscli_takes_it(jl):
    """natscli's --filter (repeatable) takes each value as one subject, commas included;
    only an answer at its prompt is split (SplitString)."""
    from jetlink.cli.consumer import _split, build_config

    assert build_config("C", {"filter": ["orders.a,b"]}, 0)["filter_subject"] == "orders.a,b"
    assert build_config("C", {"filter": [""]}, 0).get("filter_subject") is None
    assert _split(["orders.new, orders.paid"]) == ["orders.new", "orders.paid"]


@pytest.mark.parametrize("verb", ["add", "info", "state", "next", "rm"])
def test_the_stream_and_the_consumer_swapped_are_said_in_the_right_order(jl, verb):
    """`consumer VERB CONSUMER STREAM`: the stream not found (10059), and since the other
    argument is a stream, the command with the two in the right order; the JSON stays the
    server's; nothing changed."""
    ok(jl("stream", "add", "O", "--subjects", "o.>", "--defaults"))
    ok(jl("consumer", "add", "O", "NEW", "--defaults"))
    before = data_dir_bytes(jl.data)
    extra = {"add": ["--defaults"], "rm": ["-f"]}.get(verb, [])
    r = jl("consumer", verb, "NEW", "O", *extra)
    assert (r.exit_code, r.stdout, r.stderr) == (1, "", (
        f"jetlink: error: stream not found (10059): NEW; O is a stream: the stream comes "
        f"first (jetlink consumer {verb} O NEW ...)\n"))
    r = jl("consumer", verb, "NEW", "O", *extra, "-j")
    assert json.loads(r.stdout) == {"error": {"code": 404, "err_code": 10059,
                                              "description": "stream not found"}}
    assert data_dir_bytes(jl.data) == before


def test_a_subject_purge_moves_a_consumer_only_when_it_covers_every_filter(jl):
    """nats-server 2.15.1 (purgeLocked, isEqualOrSubsetMatch over every filter): purging
    s.a moves a consumer of s.a alone past it; one of s.a and s.b keeps its cursor at the
    stream's first message (its s.b messages are still delivered) and only its pending
    messages that are gone are dropped (an unacked s.b stays pending)."""
    ok(jl("stream", "add", "S", "--subjects", "s.>", "--defaults"))
    for s in ("s.b", "s.a", "s.c", "s.a", "s.b", "s.a"):
        ok(jl("pub", s, "x"))
    ok(jl("consumer", "add", "S", "MF", "--filter", "s.a", "--filter", "s.b", "--defaults"))
    ok(jl("consumer", "add", "S", "SA", "--filter", "s.a", "--defaults"))
    assert [m["seq"] for m in doc(jl("consumer", "next", "S", "MF", "--no-ack", "-j"))] == [1]
    ok(jl("stream", "purge", "S", "--subject", "s.a", "-f"))

    def state(name):
        d = doc(jl("consumer", "info", "S", name, "-j"))
        return (d["delivered"]["stream_seq"], d["ack_floor"]["stream_seq"], d["num_pending"],
                d["num_ack_pending"])

    assert state("MF") == (1, 0, 1, 1)  # s.b at 5 to come, s.b at 1 still unacknowledged
    assert state("SA") == (6, 6, 0, 0)  # nothing of s.a left: past the last sequence
    assert [m["seq"] for m in doc(jl("consumer", "next", "S", "MF", "--count", "9",
                                     "-j"))] == [5]


def test_a_last_per_subject_message_deleted_is_no_longer_pending(jl):
    """deliver last per subject: the skip list's message 5 (s.d) deleted before it is
    delivered is off num_pending (nats-server's decStreamPending), in consumer info and in
    each delivery's count."""
    ok(jl("stream", "add", "S", "--subjects", "s.>", "--defaults"))
    for s in ("s.a", "s.b", "s.a", "s.c", "s.d"):
        ok(jl("pub", s, "x"))
    ok(jl("consumer", "add", "S", "LPS", "--deliver", "subject", "--filter", "s.*",
          "--defaults"))
    ok(jl("stream", "rmm", "S", "5", "-f"))
    assert doc(jl("consumer", "info", "S", "LPS", "-j"))["num_pending"] == 3
    got = doc(jl("consumer", "next", "S", "LPS", "--count", "10", "-j"))
    assert [(m["seq"], m["num_pending"]) for m in got] == [(2, 2), (3, 1), (4, 0)]


def test_a_stream_read_removes_a_consumer_past_its_inactive_threshold(jl, cli_clock):
    """The server removes an inactive consumer on its own timer (deleteNotActive), with no
    request: a stream read after its threshold (stream info, get) finds it gone, and an
    interest stream the messages only it was interested in."""
    ok(jl("stream", "add", "I", "--subjects", "i.>", "--retention", "interest",
          "--defaults"))
    cfg = jl.tmp / "c.json"
    cfg.write_text(json.dumps({"durable_name": "IDUR", "ack_policy": "explicit",
                               "inactive_threshold": 1_000_000_000}))
    ok(jl("consumer", "add", "I", "--config", str(cfg)))
    ok(jl("pub", "i.a", "x"))
    ok(jl("pub", "i.b", "x"))
    cli_clock.advance(2_500_000_000)
    state = doc(jl("stream", "info", "I", "-j"))["state"]
    assert (state["messages"], state["first_seq"], state["consumer_count"]) == (0, 3, 0)
    r = jl("stream", "get", "I", "1")
    assert r.exit_code == 1 and "no message found (10037)" in r.stderr


def test_a_generated_names_create_answer_has_no_config_name(jl):
    """The server sets a generated name after the create's answer copied the config
    (addConsumerWithAssignment): the answer's config has no name, its ``name`` has it, and
    consumer info's config has it."""
    ok(jl("stream", "add", "S", "--subjects", "s.>", "--defaults"))
    cfg = jl.tmp / "e.json"
    cfg.write_text(json.dumps({"ack_policy": "explicit", "inactive_threshold": 60 * 10**9}))
    made = doc(jl("consumer", "add", "S", "--config", str(cfg), "-j"))
    assert len(made["name"]) == 8 and "name" not in made["config"]
    assert doc(jl("consumer", "info", "S", made["name"], "-j"))["config"]["name"] == \
        made["name"]
