"""``jetlink stream ...``: natscli's flags parsed into a StreamConfig, and the verbs run
against the embedded engine in a temporary data directory, asserting exact JSON and exit
codes.

The engine runs with a manual clock (cli/common.py ``make_clock`` replaced), so times in
the output are fixed.
"""

from __future__ import annotations

import json

import pytest
from helpers import data_dir_bytes, doc, ok

from jetlink.cli.stream_flags import (
    StreamFlags,
    add_defaults,
    apply_flags,
    ask_missing,
    missing_answers,
    parse_duration_flag,
    parse_size,
    split_subjects,
)
from jetlink.core.config.stream import StreamConfig
from jetlink.core.errors import UsageError

# -- flag values --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("512", 512),
        ("-1", -1),
        ("-5", -1),
        ("1K", 1024),
        ("1KB", 1024),
        ("1kib", 1024),
        ("512MB", 512 * 1024**2),
        ("1GB", 1024**3),
        ("2g", 2 * 1024**3),
        ("1TiB", 1024**4),
        ("10B", 10),
    ],
)
def test_parse_size_natscli_forms(text, expected):
    assert parse_size(text, flag="--max-bytes") == expected


@pytest.mark.parametrize("text", ["1XB", "1.5GB", "GB", "", "1 GB", "abc", "\u0665MB", "\uff11K"])
def test_parse_size_rejects(text):
    with pytest.raises(UsageError) as exc:
        parse_size(text, flag="--max-bytes")
    assert exc.value.description.startswith("invalid value for --max-bytes: ")
    assert exc.value.exit_code == 2


def test_parse_size_int32_limit_for_message_size():
    assert parse_size("1GB", flag="--max-msg-size", bits=32) == 1024**3
    with pytest.raises(UsageError, match="maximum is 2,147,483,647"):
        parse_size("2GB", flag="--max-msg-size", bits=32)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1h", 3_600_000_000_000),
        ("90s", 90_000_000_000),
        ("2m30s", 150_000_000_000),
        ("7d", 7 * 86_400_000_000_000),
        ("500ms", 500_000_000),
    ],
)
def test_parse_duration_flag(text, expected):
    assert parse_duration_flag(text, flag="--max-age") == expected


def test_parse_duration_unlimited_and_errors():
    assert parse_duration_flag("-1", flag="--max-age", unlimited=True) == 0
    assert parse_duration_flag("0", flag="--max-age", unlimited=True) == 0
    with pytest.raises(UsageError, match="missing unit"):
        parse_duration_flag("90", flag="--max-age")
    with pytest.raises(UsageError, match="invalid value for --dupe-window"):
        parse_duration_flag("soon", flag="--dupe-window")
    with pytest.raises(UsageError, match="must not be negative"):
        parse_duration_flag("-1m", flag="--dupe-window")


def test_split_subjects_like_natscli():
    assert split_subjects(["orders.*, orders.x", "a b\tc", "d"]) == [
        "orders.*",
        "orders.x",
        "a",
        "b",
        "c",
        "d",
    ]


# -- flags into a StreamConfig ---------------------------------------------------------------------

NATSCLI_DEFAULTS = {
    "name": "ORDERS",
    "subjects": ["orders.>"],
    "retention": "limits",
    "max_consumers": -1,
    "max_msgs": -1,
    "max_bytes": -1,
    "max_age": 0,
    "max_msgs_per_subject": -1,
    "max_msg_size": -1,
    "discard": "old",
    "storage": "file",
    "num_replicas": 1,
    "duplicate_window": 120_000_000_000,
    "compression": "none",
    "allow_direct": True,
    "mirror_direct": False,
    "sealed": False,
    "deny_delete": False,
    "deny_purge": False,
    "allow_rollup_hdrs": False,
    "consumer_limits": {},
    "allow_msg_ttl": False,
}


def test_defaults_are_natscli_defaults():
    cfg = apply_flags(StreamConfig(name="ORDERS"), add_defaults(StreamFlags(subjects=["orders.>"])))
    assert cfg.to_json() == NATSCLI_DEFAULTS


def test_dupe_window_follows_a_short_max_age():
    cfg = apply_flags(
        StreamConfig(name="S"), add_defaults(StreamFlags(subjects=["s"], max_age="1m"))
    )
    assert (cfg.max_age, cfg.duplicate_window) == (60_000_000_000, 60_000_000_000)
    cfg = apply_flags(
        StreamConfig(name="S"), add_defaults(StreamFlags(subjects=["s"], max_age="1h"))
    )
    assert cfg.duplicate_window == 120_000_000_000


def test_every_flag_lands_in_its_field():
    flags = StreamFlags(
        subjects=["orders.*"],
        description="Orders",
        storage="m",
        compression="s2",
        replicas=3,
        tag=["ssd", "eu"],
        cluster_placement="east",
        ack=False,
        retention="work",
        discard="new",
        discard_per_subject=True,
        first_sequence=100,
        max_age="1h",
        max_bytes="1GB",
        max_consumers=10,
        max_msg_size="1MB",
        max_msgs=1000,
        max_msgs_per_subject=5,
        dupe_window="90s",
        allow_rollup=True,
        deny_delete=True,
        deny_purge=True,
        allow_direct=False,
        allow_mirror_direct=True,
        allow_msg_ttl=True,
        subject_del_markers_ttl="2m30s",
        transform_source="orders.*",
        transform_destination="shop.{{wildcard(1)}}",
        metadata=["team=shop", "tier=1"],
        republish_source="orders.>",
        republish_destination="mon.orders.>",
        republish_headers=True,
        limit_consumer_inactive="10m",
        limit_consumer_max_pending=50,
        persist_mode="async",
    )
    doc = apply_flags(StreamConfig(name="ORDERS"), flags).to_json()
    assert doc == {
        "name": "ORDERS",
        "description": "Orders",
        "subjects": ["orders.*"],
        "retention": "workqueue",
        "max_consumers": 10,
        "max_msgs": 1000,
        "max_bytes": 1024**3,
        "max_age": 3_600_000_000_000,
        "max_msgs_per_subject": 5,
        "max_msg_size": 1024**2,
        "discard": "new",
        "storage": "memory",
        "num_replicas": 3,
        "no_ack": True,
        "duplicate_window": 90_000_000_000,
        "placement": {"cluster": "east", "tags": ["ssd", "eu"]},
        "compression": "s2",
        "first_seq": 100,
        "subject_transform": {"src": "orders.*", "dest": "shop.{{wildcard(1)}}"},
        "republish": {"src": "orders.>", "dest": "mon.orders.>", "headers_only": True},
        "allow_direct": False,
        "mirror_direct": True,
        "discard_new_per_subject": True,
        "sealed": False,
        "deny_delete": True,
        "deny_purge": True,
        "allow_rollup_hdrs": True,
        "consumer_limits": {"inactive_threshold": 600_000_000_000, "max_ack_pending": 50},
        "allow_msg_ttl": True,
        "subject_delete_marker_ttl": 150_000_000_000,
        "persist_mode": "async",
        "metadata": {"team": "shop", "tier": "1"},
    }


def test_unset_flags_leave_the_config_alone():
    base = apply_flags(
        StreamConfig(name="S"), add_defaults(StreamFlags(subjects=["s.>"], max_msgs=7))
    )
    assert apply_flags(base, StreamFlags()).to_json() == base.to_json()
    edited = apply_flags(base, StreamFlags(max_age="2h", deny_delete=True))
    assert edited.max_msgs == 7 and edited.max_age == 7_200_000_000_000 and edited.deny_delete
    assert base.max_age == 0  # the original is not modified


def test_edit_only_removal_flags():
    base = apply_flags(
        StreamConfig(name="S"),
        StreamFlags(
            subjects=["a.*"],
            transform_source="a.*",
            transform_destination="b.{{wildcard(1)}}",
            republish_source="a.>",
            republish_destination="r.>",
        ),
    )
    assert base.subject_transform is not None and base.republish is not None
    cleared = apply_flags(base, StreamFlags(no_transform=True, no_republish=True))
    assert cleared.subject_transform is None and cleared.republish is None


def test_pairs_must_go_together():
    with pytest.raises(
        UsageError, match="--transform-source and --transform-destination go together"
    ):
        apply_flags(StreamConfig(name="S"), StreamFlags(transform_source="a.*"))
    with pytest.raises(UsageError, match="--republish-source and --republish-destination"):
        apply_flags(StreamConfig(name="S"), StreamFlags(republish_destination="x.>"))


def test_metadata_replaces_but_keeps_server_keys():
    base = StreamConfig(name="S", metadata={"_nats.req.level": "0", "old": "1"})
    assert apply_flags(base, StreamFlags(metadata=["new=2"])).metadata == {
        "_nats.req.level": "0",
        "new": "2",
    }
    with pytest.raises(UsageError, match="expected KEY=VALUE"):
        apply_flags(base, StreamFlags(metadata=["novalue"]))


@pytest.mark.parametrize(("given", "meta"), [
    # split at the first ':' or '=', as fisk's map flags (natscli's --metadata)
    ("a=b", {"a": "b"}),
    ("a:b", {"a": "b"}),
    ("owner:team=a", {"owner": "team=a"}),
    ("url=http://x:1", {"url": "http://x:1"}),
    ("k=", {"k": ""}),
    ("k:", {"k": ""}),
])
def test_metadata_reads_key_colon_or_equals_value_as_natscli(given, meta):
    got = apply_flags(StreamConfig(name="S"), StreamFlags(metadata=[given])).metadata
    assert got == meta


def test_metadata_flags_of_every_verb_take_natscli_colon_form(jl):
    ok(jl("stream", "add", "Z", "--subjects", "z", "--defaults", "--metadata", "owner:team=a"))
    assert doc(jl("stream", "info", "Z", "-j"))["config"]["metadata"]["owner"] == "team=a"
    ok(jl("consumer", "add", "Z", "C", "--pull", "--defaults", "--metadata", "a:b"))
    assert doc(jl("consumer", "info", "Z", "C", "-j"))["config"]["metadata"]["a"] == "b"
    ok(jl("kv", "add", "KM", "--metadata", "a:b"))
    assert doc(jl("kv", "info", "KM", "-j"))["stream_info"]["config"]["metadata"]["a"] == "b"
    res = jl("stream", "add", "Y", "--subjects", "y", "--defaults", "--metadata", ":v")
    assert (res.exit_code, res.stderr) == (2, (
        "jetlink: error: invalid value for --metadata: ':v': expected KEY=VALUE or "
        "KEY:VALUE\n"))


def test_placement_cleared_by_empty_values():
    base = apply_flags(StreamConfig(name="S"), StreamFlags(cluster_placement="east", tag=["a"]))
    assert apply_flags(base, StreamFlags(cluster_placement="", tag=[""])).placement is None


def test_missing_answers_lists_natscli_questions():
    assert missing_answers(StreamFlags()) == [
        "--subjects",
        "--storage",
        "--replicas",
        "--retention",
        "--discard",
        "--max-msgs",
        "--max-msgs-per-subject",
        "--max-bytes",
        "--max-age",
        "--max-msg-size",
        "--dupe-window",
        "--allow-rollup",
        "--deny-delete",
        "--deny-purge",
    ]
    assert missing_answers(add_defaults(StreamFlags(subjects=["a"]))) == []
    assert missing_answers(add_defaults(StreamFlags())) == ["--subjects"]


def test_ask_missing_asks_natscli_questions_in_order():
    asked = []
    answers = {
        "Subjects": "orders.*, returns.*",
        "Storage (file, memory)": "memory",
        "Replication": 1,
        "Retention Policy (limits, interest, work)": "limits",
        "Discard Policy (new, old)": "new",
        "Stream Messages Limit": 0,
        "Per Subject Messages Limit": 10,
        "Total Stream Size": "1GB",
        "Message TTL": "1d",
        "Max Message Size": "-1",
        "Duplicate tracking time window": "2m",
        "Allow message Roll-ups": False,
        "Allow message deletion": False,
        "Allow purging subjects or the entire stream": True,
    }

    def ask(question, default, kind):
        asked.append((question, default, kind))
        return answers[question]

    flags = ask_missing(StreamFlags(), ask)
    assert [q for q, _, _ in asked] == list(answers)
    assert asked[1] == ("Storage (file, memory)", "file", "text")
    assert asked[2] == ("Replication", 1, "int")
    assert asked[11] == ("Allow message Roll-ups", False, "bool")
    cfg = apply_flags(StreamConfig(name="S"), flags)
    assert cfg.subjects == ["orders.*", "returns.*"]
    assert (cfg.storage, cfg.discard, cfg.max_msgs, cfg.max_msgs_per_subject) == (
        "memory",
        "new",
        -1,
        10,
    )
    assert (cfg.max_bytes, cfg.max_age, cfg.deny_delete, cfg.deny_purge) == (
        1024**3,
        86_400_000_000_000,
        True,
        False,
    )
    assert cfg.allow_direct is True and cfg.max_consumers == -1  # natscli's flag defaults


def test_ask_missing_only_asks_what_is_missing():
    asked = []
    flags = StreamFlags(
        subjects=["a"],
        storage="file",
        replicas=1,
        retention="limits",
        discard="old",
        max_msgs=-1,
        max_msgs_per_subject=-1,
        max_bytes="-1",
        max_age="1m",
        max_msg_size="-1",
        allow_rollup=False,
        deny_delete=False,
        deny_purge=False,
    )
    ask_missing(flags, lambda q, d, k: asked.append((q, d)) or d)
    assert asked == [("Duplicate tracking time window", "1m0s")]


def test_flags_json_round_trip_through_the_server_codec():
    cfg = apply_flags(StreamConfig(name="ORDERS"), add_defaults(StreamFlags(subjects=["orders.>"])))
    assert StreamConfig.from_json(json.loads(json.dumps(cfg.to_json()))).to_json() == cfg.to_json()


# -- the verbs, against the engine ---------------------------------------------------------------


SECOND = 1_000_000_000


@pytest.fixture
def jl(jl, cli_clock, utc):
    """``jl(*args)`` (tests/conftest.py) runs jetlink with a manual clock
    (2026-01-01T00:00:00Z, ``jl.clock``) and local time UTC."""
    jl.clock = cli_clock
    return jl


def orders(jl, *extra):
    return doc(jl("stream", "add", "ORDERS", "--subjects", "orders.*", "--defaults", "-j", *extra))


RESPONSE_METADATA = {"_nats.req.level": "0", "_nats.ver": "2.15.1", "_nats.level": "5"}
EMPTY_STATE = {
    "messages": 0,
    "bytes": 0,
    "first_seq": 0,
    "first_ts": "0001-01-01T00:00:00Z",
    "last_seq": 0,
    "last_ts": "0001-01-01T00:00:00Z",
    "consumer_count": 0,
}


def test_add_prints_the_stream_info(jl):
    assert orders(jl) == {
        "config": {**NATSCLI_DEFAULTS, "subjects": ["orders.*"], "metadata": RESPONSE_METADATA},
        "created": "2026-01-01T00:00:00Z",
        "state": EMPTY_STATE,
        "ts": "2026-01-01T00:00:00Z",
    }


def test_add_human_says_created_then_shows_info(jl):
    result = ok(jl("stream", "add", "ORDERS", "--subjects", "orders.*", "--defaults"))
    assert result.stdout.startswith(
        "Stream ORDERS was created\n\nInformation for Stream ORDERS created 2026-01-01 00:00:00\n"
    )
    assert result.stderr == ""


def test_add_never_prompts_without_a_terminal(jl):
    result = jl("stream", "add", "ORDERS", "--subjects", "orders.*", "--max-age", "1h")
    assert result.exit_code == 2
    assert result.stderr == (
        "jetlink: error: no terminal to ask on: give --storage, --replicas, --retention, "
        "--discard, --max-msgs, --max-msgs-per-subject, --max-bytes, --max-msg-size, "
        "--dupe-window, --allow-rollup, --deny-delete, --deny-purge (or --defaults to take "
        "natscli's defaults for all but --subjects), or --config FILE\n"
    )
    no_subjects = jl("stream", "add", "ORDERS", "--defaults", "-j")
    assert no_subjects.exit_code == 2
    assert json.loads(no_subjects.stdout) == {
        "error": {"description": "no terminal to ask on: give --subjects"}
    }
    no_name = jl("stream", "add", "--subjects", "a", "--defaults")
    assert (no_name.exit_code, no_name.stderr) == (
        2,
        "jetlink: error: missing argument STREAM (the stream name)\n",
    )
    assert json.loads(ok(jl("stream", "ls", "-j")).stdout) == []


def test_add_with_every_flag_given_needs_no_defaults(jl):
    flags = [
        "--subjects",
        "a.>",
        "--storage",
        "memory",
        "--replicas",
        "1",
        "--retention",
        "limits",
        "--discard",
        "new",
        "--max-msgs",
        "10",
        "--max-msgs-per-subject",
        "2",
        "--max-bytes",
        "1MB",
        "--max-age",
        "90s",
        "--max-msg-size",
        "1KB",
        "--dupe-window",
        "30s",
        "--no-allow-rollup",
        "--deny-delete",
        "--no-deny-purge",
    ]
    cfg = doc(jl("stream", "add", "A", *flags, "-j"))["config"]
    assert (cfg["storage"], cfg["discard"], cfg["max_msgs"], cfg["max_msgs_per_subject"]) == (
        "memory",
        "new",
        10,
        2,
    )
    assert (cfg["max_bytes"], cfg["max_age"], cfg["max_msg_size"], cfg["duplicate_window"]) == (
        1024**2,
        90 * SECOND,
        1024,
        30 * SECOND,
    )
    assert (cfg["deny_delete"], cfg["deny_purge"], cfg["allow_direct"]) == (True, False, True)


def test_add_prompts_on_a_terminal(jl, monkeypatch):
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: True)
    answers = (
        "\n".join(
            [
                "",
                "orders.*",
                "memory",
                "1",
                "limits",
                "old",
                "-1",
                "-1",
                "256MB",
                "1d",
                "-1",
                "",
                "n",
                "y",
                "y",
            ]
        )
        + "\n"
    )
    result = ok(jl("stream", "add", "-j", input="ORDERS\n" + answers))
    info = json.loads(result.stdout[result.stdout.index("{\n") :])  # after CliRunner's echo
    assert info["config"]["storage"] == "memory"
    assert info["config"]["max_bytes"] == 256 * 1024**2
    assert info["config"]["max_age"] == 86_400 * SECOND
    assert info["config"]["duplicate_window"] == 120 * SECOND
    assert (
        "Stream Name:" in result.stderr
        and "Allow purging subjects or the entire stream [Y/n]:" in result.stderr
    )


def test_add_from_config_file(jl):
    cfg = jl.tmp / "orders.json"
    cfg.write_text(json.dumps({"name": "FROMFILE", "subjects": ["f.>"], "max_msgs": 5}))
    info = doc(jl("stream", "add", "--config", str(cfg), "-j"))
    assert (
        info["config"]["name"],
        info["config"]["max_msgs"],
        info["config"]["max_consumers"],
    ) == ("FROMFILE", 5, -1)
    # the StreamInfo that stream info --json prints works too; name and flags override it
    saved = jl.tmp / "info.json"
    saved.write_text(ok(jl("stream", "info", "FROMFILE", "--json")).stdout)
    copy = doc(jl("stream", "add", "OTHER", "--config", str(saved), "--subjects", "o.>", "-j"))
    assert (copy["config"]["name"], copy["config"]["subjects"], copy["config"]["max_msgs"]) == (
        "OTHER",
        ["o.>"],
        5,
    )


def test_add_config_file_errors(jl):
    missing = jl("stream", "add", "--config", str(jl.tmp / "nope.json"))
    assert missing.exit_code == 2
    assert "does not exist" in missing.stderr
    bad = jl.tmp / "bad.json"
    bad.write_text("{nope")
    result = jl("stream", "add", "--config", str(bad))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"jetlink: error: {bad}: not a JSON document: ")
    unknown = jl.tmp / "unknown.json"
    unknown.write_text(json.dumps({"name": "X", "bogus": 1}))
    decoded = jl("stream", "add", "--config", str(unknown), "-j")
    assert decoded.exit_code == 1
    assert json.loads(decoded.stdout)["error"]["err_code"] == 10025


def test_engine_errors_keep_their_codes(jl):
    orders(jl)
    overlap = jl("stream", "add", "OTHER", "--subjects", "orders.new", "--defaults")
    assert (overlap.exit_code, overlap.stderr) == (
        1,
        "jetlink: error: subjects overlap with an existing stream (10065): \"orders.new\" overlaps "
        "\"orders.*\" of stream ORDERS\n",
    )
    missing = jl("stream", "info", "NOPE", "-j")
    assert missing.exit_code == 1
    assert json.loads(missing.stdout) == {
        "error": {"code": 404, "err_code": 10059, "description": "stream not found"}
    }


def test_bad_flag_values_are_usage_errors(jl):
    # a size and a duration are read by the option's type (cli/options.py SizeType,
    # DurationType) as it is parsed
    for flag, value in (("--max-bytes", "1XB"), ("--max-msg-size", "3GB"),
                        ("--max-age", "soon"), ("--dupe-window", "5")):
        result = jl("stream", "add", "S", "--subjects", "s", "--defaults", flag, value)
        assert result.exit_code == 2, (flag, result.output)
        assert f"invalid value for {flag}: {value!r}: " in result.stderr
    choice = jl("stream", "add", "S", "--subjects", "s", "--defaults", "--storage", "disk")
    assert choice.exit_code == 2 and "Invalid value for '--storage'" in choice.stderr


@pytest.mark.parametrize("given", ["", " ", ","])
def test_subjects_that_hold_no_subject_are_refused_and_change_nothing(jl, given):
    """An empty --subjects would take every subject off the stream (an edit) or give it its
    name as its one subject (an add): refused, naming the flag and the value."""
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    before = data_dir_bytes(jl.data)
    line = (f"jetlink: error: invalid value for --subjects: {given!r} holds no subject "
            "(subjects are separated by commas or spaces)\n")
    for args in (("stream", "edit", "ORDERS", "--subjects", given, "-f"),
                 ("stream", "add", "X", "--subjects", given, "--defaults")):
        r = jl(*args)
        assert (r.exit_code, r.stderr) == (2, line), args
    assert data_dir_bytes(jl.data) == before
    # natscli's int flags are 64 bits: past them, refused as the flag is parsed (a server
    # answered a JSON decoding error, 10025)
    for flag, value, rng in (
            ("--max-msgs", "99999999999999999999", "-9223372036854775808<=x<=9223372036854775807"),
            ("--max-msgs-per-subject", "-9223372036854775809",
             "-9223372036854775808<=x<=9223372036854775807"),
            ("--max-consumers", "9223372036854775808",
             "-9223372036854775808<=x<=9223372036854775807"),
            ("--first-sequence", "18446744073709551616", "0<=x<=18446744073709551615")):
        result = jl("stream", "add", "S", "--subjects", "s", "--defaults", flag, value)
        assert result.exit_code == 2, (flag, result.output)
        assert f"Invalid value for '{flag}': {value} is not in the range {rng}." in \
            result.stderr


INFO_HUMAN = """\
Information for Stream ORDERS created 2026-01-01 00:00:00

Configuration:

                  Description: Orders of the shop
                     Subjects: orders.*
                     Replicas: 1
                      Storage: File

Options:

                    Retention: Limits
              Acknowledgments: true
               Discard Policy: Old
             Duplicate Window: 2m0s
                   Direct Get: true
  Allows Atomic Batch Publish: false
    Allows Fast Batch Publish: false
              Allows Counters: false
            Allows Msg Delete: true
       Allows Per-Message TTL: false
                 Allows Purge: true
             Allows Schedules: false
               Allows Rollups: false

Limits:

             Maximum Messages: unlimited
          Maximum Per Subject: unlimited
                Maximum Bytes: 1.0 GiB
                  Maximum Age: 1d0h0m0s
         Maximum Message Size: unlimited
            Maximum Consumers: unlimited

Metadata:

                         team: shop

State:

                 Host Version: 2.15.1
           Required API Level: 0 hosted at level 5
                     Messages: 3
                        Bytes: 159 B
               First Sequence: 1 @ 2026-01-01 00:00:01
                Last Sequence: 3 @ 2026-01-01 00:00:02
             Active Consumers: 0
           Number of Subjects: 2
"""


def _three_messages(jl):
    jl.clock.advance(SECOND)
    ok(jl("pub", "orders.new", "hello", "-H", "Trace:1"))
    jl.clock.advance(SECOND)
    ok(jl("pub", "orders.paid", "x {{Count}}", "--count", "2"))


def test_info_human_is_natscli_layout(jl):
    orders(
        jl,
        "--description",
        "Orders of the shop",
        "--max-bytes",
        "1GB",
        "--max-age",
        "1d",
        "--metadata",
        "team=shop",
    )
    _three_messages(jl)
    assert ok(jl("stream", "info", "ORDERS")).stdout == INFO_HUMAN
    state = ok(jl("stream", "info", "ORDERS", "--state")).stdout
    assert state.startswith("State for Stream ORDERS created 2026-01-01 00:00:00\n\nState:\n\n")
    assert "Messages: 3\n" in state and "Options" not in state
    assert ok(jl("stream", "state", "ORDERS")).stdout == state  # natscli's verb for it
    assert doc(jl("stream", "state", "ORDERS", "-j")) == doc(jl("stream", "info", "ORDERS", "-j"))


def test_info_json_is_stream_info(jl):
    orders(jl)
    _three_messages(jl)
    info = doc(jl("stream", "info", "ORDERS", "-j"))
    assert list(info) == ["config", "created", "state", "cluster", "ts"]
    assert info["state"] == {
        "messages": 3,
        "bytes": 159,
        "first_seq": 1,
        "first_ts": "2026-01-01T00:00:01Z",
        "last_seq": 3,
        "last_ts": "2026-01-01T00:00:02Z",
        "num_subjects": 2,
        "consumer_count": 0,
    }


def test_ls(jl):
    assert ok(jl("stream", "ls")).stdout == "No Streams defined\n"
    orders(jl, "--description", "Orders")
    doc(jl("stream", "add", "AUDIT", "--subjects", "audit.>", "--defaults", "-j"))
    _three_messages(jl)
    jl.clock.advance(61 * SECOND)
    assert doc(jl("stream", "ls", "-j")) == ["AUDIT", "ORDERS"]
    assert ok(jl("stream", "ls", "-n")).stdout == "AUDIT\nORDERS\n"
    assert doc(jl("stream", "ls", "--subject", "orders.new", "-j")) == ["ORDERS"]
    table = ok(jl("stream", "ls")).stdout.splitlines()
    assert table[0].startswith("Streams")
    assert table[2].split("│")[1:-1] == [
        " Name   ",
        " Description ",
        " Created             ",
        " Messages ",
        " Size  ",
        " Last Message ",
    ]
    # smallest first, as natscli
    assert table[4].split("│")[1:-1] == [
        " AUDIT  ",
        "             ",
        " 2026-01-01 00:00:00 ",
        " 0        ",
        " 0 B   ",
        " never        ",
    ]
    assert table[5].split("│")[1:-1] == [
        " ORDERS ",
        " Orders      ",
        " 2026-01-01 00:00:00 ",
        " 3        ",
        " 159 B ",
        " 1m1s         ",
    ]


def test_report(jl):
    orders(jl, "--cluster-placement", "east", "--tag", "ssd")
    _three_messages(jl)
    ok(jl("stream", "rmm", "ORDERS", "2", "-f"))
    report = doc(jl("stream", "report", "-j"))
    assert report == [
        {
            "stream": "ORDERS",
            "storage": "file",
            "placement": {"cluster": "east", "tags": ["ssd"]},
            "consumers": 0,
            "messages": 2,
            "bytes": 115,
            "lost": {"msgs": 0, "bytes": 0},
            "deleted": 1,
            "replicas": 1,
            "api_level": "0",
            "cluster": None,
        }
    ]
    # natscli's -a of the stream commands: taken; the report lists every stream anyway
    assert doc(jl("stream", "report", "-a", "-j")) == report
    # a listing of the engine names no RAFT group: natscli's --cluster filter is refused
    # (tests/test_cli_run.py), --leaders has no leader to count
    assert jl("stream", "report", "--cluster", "east", "-j").exit_code == 2
    assert ok(jl("stream", "report", "-l")).stdout == ok(jl("stream", "report")).stdout
    rows = ok(jl("stream", "report")).stdout.splitlines()
    assert rows[0].startswith("Stream Report")
    assert [c.strip() for c in rows[4].split("│")[1:-1]] == [
        "ORDERS",
        "File",
        "cluster: east tags: ssd",
        "0",
        "2",
        "115 B",
        "0",
        "1",
        "0",
        "1",
    ]


def test_pub_get_view_subjects(jl):
    orders(jl)
    _three_messages(jl)
    assert doc(jl("stream", "get", "ORDERS", "1", "-j")) == {  # the server's StoredMsg
        "subject": "orders.new",
        "seq": 1,
        "hdrs": "TkFUUy8xLjANClRyYWNlOiAxDQoNCg==",  # NATS/1.0, Trace: 1
        "data": "aGVsbG8=",
        "time": "2026-01-01T00:00:01Z",
    }
    jl.clock.advance(61 * SECOND)
    assert ok(jl("stream", "get", "ORDERS", "1")).stdout == (
        "Item: ORDERS#1 received 2026-01-01 00:00:01 +0000 UTC (1m2s) on Subject orders.new\n"
        "\n"
        "Headers:\n"
        "  Trace: 1\n"
        "\n"
        "hello\n"
        "\n"
    )
    assert doc(jl("stream", "get", "ORDERS", "--last-for", "orders.paid", "-j"))["seq"] == 3
    assert doc(jl("stream", "get", "ORDERS", "-S", "orders.new", "-j"))["seq"] == 1
    assert [m["seq"] for m in doc(jl("stream", "view", "ORDERS", "-j"))] == [1, 2, 3]
    assert [
        m["seq"] for m in doc(jl("stream", "view", "ORDERS", "--subject", "orders.paid", "-j"))
    ] == [2, 3]
    assert [
        m["seq"] for m in doc(jl("stream", "view", "ORDERS", "--id", "2", "--count", "1", "-j"))
    ] == [2]
    assert [m["seq"] for m in doc(jl("stream", "view", "ORDERS", "--since", "61s", "-j"))] == [2, 3]
    # both: natscli's viewAction takes --since first
    assert [m["seq"] for m in doc(jl("stream", "view", "ORDERS", "--since", "61s", "--id", "3",
                                     "-j"))] == [2, 3]
    assert ok(jl("stream", "view", "ORDERS", "--subject", "orders.paid")).stdout == (
        "[2] Subject: orders.paid Received: 2026-01-01 00:00:02\n\nx 1\n\n"
        "[3] Subject: orders.paid Received: 2026-01-01 00:00:02\n\nx 2\n\n"
    )
    assert ok(jl("stream", "view", "ORDERS", "--raw")).stdout == "hello\nx 1\nx 2\n"
    assert doc(jl("stream", "subjects", "ORDERS", "-j")) == {"orders.new": 1, "orders.paid": 2}
    assert doc(jl("stream", "subjects", "ORDERS", "orders.paid", "-j")) == {"orders.paid": 2}
    assert (
        ok(jl("stream", "subjects", "ORDERS", "--names", "--sort", "name")).stdout
        == "orders.new\norders.paid\n"
    )
    assert (
        ok(jl("stream", "subjects", "ORDERS", "nothing.*")).stdout
        == "No subjects found matching nothing.*\n"
    )
    # natscli's map as Go's encoder prints it: keys by name, whatever the sort of the table
    ok(jl("pub", "orders.a", "z"))
    raw = ok(jl("stream", "subjects", "ORDERS", "-j")).stdout
    assert list(json.loads(raw)) == ["orders.a", "orders.new", "orders.paid"], raw



def test_view_raw_writes_a_bodys_bytes_as_stored(jl):
    """--raw writes a body's bytes as stored (one that is not UTF-8 too: saved, not
    escaped); the human view shows such bytes escaped."""
    orders(jl)
    ok(jl("pub", "orders.bin", input=b"\xff\x00z"))
    assert ok(jl("stream", "view", "ORDERS", "--raw")).stdout_bytes == b"\xff\x00z\n"
    assert ok(jl("stream", "view", "ORDERS")).stdout.endswith("\n\\xff\x00z\n\n")

def test_header_bytes_that_are_not_utf8_are_kept(jl):
    """A header value stored with bytes that are not UTF-8 (another client's, or a copied
    block) keeps them: stream get --json's hdrs is the block's exact base64; the
    {name: [values]} map of stream view --json has U+FFFD there, as Go's encoding/json
    writes a nats.Header."""
    import base64

    from jetlink.core.jetstream import JetStream
    from jetlink.core.store import DataDir

    orders(jl)
    dd = DataDir(jl.data)
    try:
        JetStream(dd.open("local")).publish("orders.h", b"x", headers={"X-A": [b"caf\xe9"]})
    finally:
        dd.close()
    got = doc(jl("stream", "get", "ORDERS", "1", "-j"))
    assert base64.b64decode(got["hdrs"]) == b"NATS/1.0\r\nX-A: caf\xe9\r\n\r\n"
    assert doc(jl("stream", "view", "ORDERS", "-j"))[0]["headers"] == {"X-A": ["caf\ufffd"]}


def test_get_errors(jl):
    orders(jl)
    assert jl("stream", "get", "ORDERS").exit_code == 2
    missing = jl("stream", "get", "ORDERS", "9", "-j")
    assert missing.exit_code == 1
    assert json.loads(missing.stdout) == {
        "error": {"code": 404, "err_code": 10037, "description": "no message found"}
    }
    # for people, which message (natscli: "could not retrieve ORDERS#9: no message found")
    said = jl("stream", "get", "ORDERS", "9")
    assert (said.exit_code, said.stderr) == (
        1, "jetlink: error: no message found (10037): ORDERS#9\n")
    said = jl("stream", "get", "ORDERS", "--last-for", "orders.none")
    assert said.stderr == ("jetlink: error: no message found (10037): the last message of "
                           "orders.none in ORDERS\n")


def test_destructive_verbs_refuse_without_terminal(jl):
    orders(jl)
    _three_messages(jl)
    for args, action in (
        (("stream", "rm", "ORDERS"), "delete stream ORDERS"),
        (("stream", "purge", "ORDERS"), "purge stream ORDERS"),
        (("stream", "rmm", "ORDERS", "1"), "remove message 1 from stream ORDERS"),
        (("stream", "seal", "ORDERS"), "seal stream ORDERS"),
    ):
        result = jl(*args)
        assert result.exit_code == 2, args
        assert (
            result.stderr
            == f"jetlink: error: no terminal to confirm on: pass -f/--force to {action}\n"
        )
        assert result.stdout == ""
    assert doc(jl("stream", "info", "ORDERS", "-j"))["state"]["messages"] == 3


def test_destructive_verbs_ask_on_a_terminal(jl, monkeypatch):
    orders(jl)
    _three_messages(jl)
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: True)
    declined = jl("stream", "purge", "ORDERS", input="n\n")
    assert declined.exit_code == 1
    assert "Really purge Stream ORDERS [y/N]:" in declined.stderr
    assert declined.stderr.endswith("jetlink: error: aborted: did not purge stream ORDERS\n")
    accepted = jl("stream", "rmm", "ORDERS", "1", "-j", input="y\n")
    assert accepted.exit_code == 0
    assert json.loads(accepted.stdout.split("\n", 1)[1]) == {
        "success": True
    }  # after CliRunner's echo


def test_purge(jl):
    orders(jl)
    _three_messages(jl)
    assert doc(
        jl("stream", "purge", "ORDERS", "-f", "--subject", "orders.paid", "--keep", "1", "-j")
    ) == {"success": True, "purged": 1}
    human = ok(jl("stream", "purge", "ORDERS", "-f", "--seq", "3"))
    assert human.stdout.startswith(
        "Purged 1 messages from ORDERS\n\nState for Stream ORDERS created 2026-01-01 00:00:00\n"
    )
    assert "First Sequence: 3 @ 2026-01-01 00:00:02\n" in human.stdout
    both = jl("stream", "purge", "ORDERS", "-f", "--seq", "3", "--keep", "1")
    assert (both.exit_code, both.stderr) == (
        2,
        "jetlink: error: --seq and --keep cannot be combined when purging\n",
    )
    # a malformed filter is refused as view's is, not reported as a purge of nothing
    typo = jl("stream", "purge", "ORDERS", "-f", "--subject", "orders..paid")
    assert (typo.exit_code, typo.stderr) == (
        2, "jetlink: error: --subject: subject 'orders..paid' is not valid: tokens separated "
           "by '.', none empty, no spaces or tabs, '>' only as the last token\n")
    assert doc(jl("stream", "purge", "ORDERS", "--force", "-j")) == {"success": True, "purged": 1}


def test_rmm_rm_seal(jl):
    doc(
        jl(
            "stream",
            "add",
            "KEEP",
            "--subjects",
            "keep",
            "--defaults",
            "--deny-delete",
            "--deny-purge",
            "-j",
        )
    )
    ok(jl("pub", "keep", "x"))
    denied = jl("stream", "rmm", "KEEP", "1", "-f")
    assert (denied.exit_code, denied.stderr) == (
        1,
        "jetlink: error: message delete not permitted (10057): stream KEEP has deny_delete "
        "set: the server removes none of its messages\n",
    )
    denied = jl("stream", "purge", "KEEP", "-f", "-j")
    assert (  # the JSON document stays the server's
        denied.exit_code == 1
        and json.loads(denied.stdout) == {"error": {
            "code": 500, "err_code": 10110, "description": "stream purge not permitted"},
            "purged": 0}  # (JSApiStreamPurgeResponse's purged is never omitted)
    )
    denied = jl("stream", "purge", "KEEP", "-f")
    assert (denied.exit_code, denied.stderr) == (
        1, "jetlink: error: stream purge not permitted (10110): stream KEEP has deny_purge "
           "set: the server purges none of it\n")
    cancel = jl("stream", "edit", "KEEP", "--no-deny-delete")
    assert cancel.exit_code == 1
    assert (
        cancel.stderr
        == "jetlink: error: stream configuration update can not cancel deny message deletes "
        "(10052): deny_delete = false\n"
    )
    orders(jl)
    _three_messages(jl)
    assert (
        ok(jl("stream", "rmm", "ORDERS", "1", "-f")).stdout
        == "Message 1 was removed from stream ORDERS\n"
    )
    sealed = doc(jl("stream", "seal", "ORDERS", "-f", "-j"))
    assert sealed["config"]["sealed"] is True
    refused = jl("pub", "orders.new", "late")
    assert (refused.exit_code, refused.stderr) == (
        1,
        "jetlink: error: invalid operation on sealed stream (10109): stream ORDERS is "
        "sealed: it takes no more messages\n",
    )
    refused = jl("stream", "purge", "ORDERS", "-f")
    assert (refused.exit_code, refused.stderr) == (
        1, "jetlink: error: invalid operation on sealed stream (10109): stream ORDERS is "
           "sealed: nothing of it is removed or purged\n")
    assert doc(jl("stream", "rm", "ORDERS", "-f", "-j")) == {"success": True}
    gone = jl("stream", "rm", "ORDERS", "-f")
    assert (gone.exit_code, gone.stderr) == (
        1, "jetlink: error: stream not found (10059): ORDERS\n")  # named, nothing close


def test_a_flag_and_its_negation_together_are_refused(jl):
    """--allow-rollup --no-allow-rollup: Click kept the last silently; natscli's flag
    parser refuses the flag given again. A usage error naming both, nothing made; the same
    spelling twice says nothing else."""
    r = jl("stream", "add", "X", "--subjects", "x", "--defaults", "--allow-rollup",
           "--no-allow-rollup")
    assert r.exit_code == 2 and r.stderr.endswith(
        "Invalid value for '--allow-rollup': --allow-rollup and --no-allow-rollup given "
        "together: give one of them\n"), r.stderr
    assert jl("stream", "info", "X").exit_code == 1
    made = doc(jl("stream", "add", "X", "--subjects", "x", "--defaults", "--allow-rollup",
                  "--allow-rollup", "-j"))
    assert made["config"]["allow_rollup_hdrs"] is True


def test_an_empty_server_or_rest_url_typed_is_refused_not_the_data_directory(jl):
    """-s '' (a script's empty $URL) left the verbs on the local data directory: a usage
    error, nothing read; an empty NATS_URL is unset, as natscli reads it."""
    for args, flag, what in (
            (["-s", "", "stream", "ls"], "--server", "the server URLs (nats://host:port)"),
            (["links", "--rest-url", "", "ls"], "--rest-url", "the REST API's URL"),
            (["links", "ls", "--rest-url", ""], "--rest-url", "the REST API's URL")):
        r = jl(*args)
        assert (r.exit_code, r.stderr) == (2, (
            f"jetlink: error: {flag} '': empty: give {what}, or leave {flag} out (without "
            "it the verbs act on the data directory)\n")), args

def test_an_empty_nats_url_is_unset(jl, monkeypatch):
    monkeypatch.setenv("NATS_URL", "")
    assert jl("stream", "ls").exit_code == 0


def test_a_name_not_found_is_shown_escaped_and_cut(jl):
    """An error line never writes a name's control characters raw (an ESC would colour the
    terminal) nor echoes a 100,000-character name whole; --json keeps the server's
    document."""
    r = jl("stream", "info", "a\x1b[31mb")
    assert (r.exit_code, r.stderr) == (
        1, "jetlink: error: stream not found (10059): a\\x1b[31mb\n")
    r = jl("stream", "info", "x" * 100_000)
    assert (r.exit_code, r.stderr) == (
        1, f"jetlink: error: stream not found (10059): {'x' * 40}... (100,000 characters)\n")
    r = jl("stream", "info", "a\x1b[31mb", "-j")
    assert (r.exit_code, json.loads(r.stdout)) == (1, {"error": {
        "code": 404, "err_code": 10059, "description": "stream not found"}})


EDIT_DIFF = """\
Differences (-old +new):
--- ORDERS (current)
+++ ORDERS (new)
@@ -7,7 +7,7 @@
   "max_consumers": -1,
   "max_msgs": -1,
   "max_bytes": -1,
-  "max_age": 0,
+  "max_age": 3600000000000,
   "max_msgs_per_subject": -1,
   "max_msg_size": -1,
   "discard": "old",
"""


def test_edit_dry_run_shows_a_unified_diff(jl):
    orders(jl)
    # natscli's edit --dry-run: exit 1 when it would change something, 0 when not
    result = jl("stream", "edit", "ORDERS", "--max-age", "1h", "--dry-run")
    assert (result.exit_code, result.stdout) == (1, EDIT_DIFF)
    dry = jl("stream", "edit", "ORDERS", "--max-age", "1h", "--dry-run", "-j")
    assert dry.exit_code == 1
    dry = json.loads(dry.stdout)
    assert (dry["name"], dry["changed"], dry["config"]["max_age"]) == (
        "ORDERS",
        True,
        3_600_000_000_000,
    )
    assert dry["diff"] + "\n" == EDIT_DIFF.split("\n", 1)[1]
    assert doc(jl("stream", "info", "ORDERS", "-j"))["config"]["max_age"] == 0  # unchanged
    same = ok(jl("stream", "edit", "ORDERS", "--max-age", "0", "--dry-run"))
    assert same.stdout == "No difference in configuration\n"


def test_edit_applies(jl):
    orders(jl)
    result = ok(
        jl("stream", "edit", "ORDERS", "--subjects", "orders.*,returns.*", "--description", "Shop")
    )
    assert result.stdout.startswith(
        "Differences (-old +new):\n--- ORDERS (current)\n+++ ORDERS (new)\n"
    )
    assert "Stream ORDERS was updated\n\nInformation for Stream ORDERS" in result.stdout
    cfg = doc(jl("stream", "info", "ORDERS", "-j"))["config"]
    assert (cfg["subjects"], cfg["description"]) == (["orders.*", "returns.*"], "Shop")
    as_json = doc(jl("stream", "edit", "ORDERS", "--max-msgs", "5", "-j"))
    assert as_json["config"]["max_msgs"] == 5
    unchanged = ok(jl("stream", "edit", "ORDERS", "--max-msgs", "5"))
    assert unchanged.stdout == "No difference in configuration\n"
    refused = jl("stream", "edit", "ORDERS", "--retention", "workq", "-j")
    assert refused.exit_code == 1
    assert json.loads(refused.stdout)["error"]["err_code"] == 10052


def test_edit_from_config_file(jl):
    orders(jl)
    new = jl.tmp / "new.json"
    new.write_text(json.dumps({"name": "ORDERS", "subjects": ["orders.*"], "max_msgs": 9}))
    assert (
        doc(jl("stream", "edit", "ORDERS", "--config", str(new), "-j"))["config"]["max_msgs"] == 9
    )
    # a file naming another stream: the server's answer to STREAM.UPDATE.ORDERS (it was
    # "stream not found: OTHER" while ORDERS exists), nothing changed
    other = jl.tmp / "other.json"
    other.write_text(json.dumps({"name": "OTHER", "subjects": ["orders.*"], "max_msgs": 5}))
    before = data_dir_bytes(jl.data)
    res = jl("stream", "edit", "ORDERS", "--config", str(other), "-f")
    assert (res.exit_code, res.stdout, res.stderr) == (
        1, "", "jetlink: error: stream name in subject does not match request (10056): "
               "--config names stream OTHER, the command ORDERS\n")
    assert json.loads(jl("stream", "edit", "ORDERS", "--config", str(other), "-f", "-j")
                      .stdout)["error"]["err_code"] == 10056
    assert data_dir_bytes(jl.data) == before


def test_copy(jl):
    orders(jl, "--max-msgs", "7")
    copied = doc(jl("stream", "copy", "ORDERS", "ARCHIVE", "--subjects", "archive.>", "-j"))
    assert (
        copied["config"]["name"],
        copied["config"]["subjects"],
        copied["config"]["max_msgs"],
    ) == ("ARCHIVE", ["archive.>"], 7)
    assert copied["state"]["messages"] == 0
    same = jl("stream", "copy", "ORDERS", "ORDERS")
    assert (same.exit_code, same.stderr) == (
        2,
        "jetlink: error: source and destination stream names cannot be the same\n",
    )
    overlap = jl("stream", "copy", "ORDERS", "TWIN")
    assert overlap.exit_code == 1 and "(10065)" in overlap.stderr


def test_a_promoted_streams_copy_is_a_stream_of_its_own(jl):
    """A promoted mirror keeps mirror_direct (as nats-server keeps it) and jetlink's
    promotion record; its copy has neither: a stream with mirror_direct and no mirror is
    refused (10052), and the copy is no promoted stream a failback could take."""
    ok(jl("stream", "add", "PO", "--subjects", "po.>", "--defaults", "--allow-direct"))
    ok(jl("stream", "add", "PM", "--defaults", "--mirror", "PO"))
    ok(jl("stream", "promote", "PM", "-f", "--subjects", "pm.>"))
    promoted = doc(jl("stream", "info", "PM", "-j"))["config"]
    assert promoted["mirror_direct"] is True
    assert "jetlink.promoted_mirror" in promoted["metadata"]
    copied = doc(jl("stream", "copy", "PM", "PMC", "--subjects", "pmc.>", "-j"))["config"]
    assert copied["mirror_direct"] is False and "mirror" not in copied
    assert "jetlink.promoted_mirror" not in (copied.get("metadata") or {})


def test_help_examples_of_sizes_and_durations(jl):
    result = ok(jl("stream", "add", "--help"))
    assert "--cluster-placement NAME" in result.stdout
    assert "Sizes: 512MB, 1GB, -1 (unlimited)" in result.stdout


# -- stream view pages on a terminal ------------------------------------------------------------
def _view_setup(jl, n=25):
    orders(jl)
    ok(jl("pub", "orders.a", "m{{Count}}", "--count", str(n)))


def _terminal(monkeypatch, on=True):
    monkeypatch.setattr("jetlink.cli.output.stdout_is_terminal", lambda: on)
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: on)


def test_view_pages_on_a_terminal(jl, monkeypatch):
    _view_setup(jl)
    _terminal(monkeypatch)
    res = ok(jl("stream", "view", "ORDERS", "--raw", input="\nn\n"))
    shown = [w for w in res.stdout.split() if w.startswith("m")]  # (the runner echoes input)
    assert shown == [f"m{i}" for i in range(1, 21)]  # two pages, then "n"
    assert res.stderr.count("Next page?") == 2


def test_view_takes_natscli_positional_page_size(jl, monkeypatch):
    """natscli's stream view STREAM SIZE: SIZE messages per page, as --page SIZE."""
    _view_setup(jl)
    _terminal(monkeypatch)
    res = ok(jl("stream", "view", "ORDERS", "4", "--raw", input="\nn\n"))
    shown = [w for w in res.stdout.split() if w.startswith("m")]
    assert shown == [f"m{i}" for i in range(1, 9)]  # two pages of 4, then "n"
    r = jl("stream", "view", "ORDERS", "4", "--page", "3")
    assert (r.exit_code, r.stderr) == (2, "jetlink: error: page size 4 and --page 3: give "
                                          "one of them\n")


@pytest.mark.parametrize("args", [["--all"], ["--page", "0"]])
def test_view_all_does_not_page(jl, monkeypatch, args):
    _view_setup(jl)
    _terminal(monkeypatch)
    res = ok(jl("stream", "view", "ORDERS", "--raw", *args))
    assert res.stdout.split() == [f"m{i}" for i in range(1, 26)] and "Next page" not in res.stderr


def test_view_without_a_terminal_prints_everything_and_asks_nothing(jl, monkeypatch):
    _view_setup(jl)
    _terminal(monkeypatch, on=False)
    res = ok(jl("stream", "view", "ORDERS", "--raw", "--page", "5"))
    assert res.stdout.split() == [f"m{i}" for i in range(1, 26)] and res.stderr == ""
    assert ok(jl("stream", "view", "ORDERS", "--raw", "--count", "3")).stdout.split() == [
        "m1", "m2", "m3"]
    assert len(doc(jl("stream", "view", "ORDERS", "-j"))) == 25  # --json: never paged


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.5d", 36 * 3_600_000_000_000),
        ("1M", 30 * 86_400_000_000_000),
        ("1y", 365 * 86_400_000_000_000),
        ("2W", 14 * 86_400_000_000_000),
        ("1h30m", 5_400_000_000_000),
    ],
)
@pytest.mark.parametrize("form", ["equals", "space"])
def test_duration_flags_read_natscli_units_in_either_form(jl, text, expected, form):
    """natscli's durations through the installed command, as ``--flag=value`` and
    ``--flag value``: a stream's --max-age and a bucket's --ttl."""
    def flag(name):
        return [f"{name}={text}"] if form == "equals" else [name, text]

    got = doc(jl("stream", "add", "S", "--subjects", "s.>", "--defaults", "-j",
                 *flag("--max-age")))
    assert got["config"]["max_age"] == expected
    got = doc(jl("kv", "add", "CFG", "-j", *flag("--ttl")))
    assert got["ttl"] == expected


def test_duration_flag_over_the_maximum_is_refused_with_the_maximum(jl):
    r = jl("stream", "add", "S", "--subjects", "s", "--defaults", "--max-age",
           "99999999999999h")
    assert r.exit_code == 2
    assert ("invalid value for --max-age: '99999999999999h': more than the "
            "maximum 2562047h47m16.854775807s") in r.output
    # a wait's own rule is the longest wait
    r = jl("replicate", "--follow", "--interval", "99999999999999h")
    assert r.exit_code == 2
    assert ("invalid value for --interval: '99999999999999h': more than the longest wait, "
            "100y (876000h0m0s)") in r.output


@pytest.mark.parametrize(
    ("setup", "args", "line"),
    [
        ([], ["stream", "add", "X", "--subjects", "a..b", "--defaults"],
         'jetlink: error: invalid subject (10052): subjects: "a..b" is not a valid subject '
         "(tokens separated by '.', none empty, no spaces or tabs, '>' only as the last "
         "token)"),
        ([["stream", "add", "Y", "--subjects", "y.>", "--defaults"]],
         ["stream", "add", "Z", "--subjects", "y.a", "--defaults"],
         'jetlink: error: subjects overlap with an existing stream (10065): "y.a" overlaps '
         '"y.>" of stream Y'),
        ([], ["stream", "add", "W", "--subjects", "w", "--max-age", "50ms", "--defaults"],
         "jetlink: error: max age needs to be >= 100ms (10052): max_age = 50ms"),
        ([], ["stream", "add", "V", "--subjects", "v", "--replicas", "7", "--defaults"],
         "jetlink: error: maximum replicas is 5 (10052): num_replicas = 7"),
        ([["stream", "add", "S", "--subjects", "s.>", "--defaults"]],
         ["consumer", "add", "S", "F", "--pull", "--defaults", "--filter", "s..a"],
         'jetlink: error: invalid subject (10052): filter_subject = "s..a"'),
        ([["stream", "add", "E", "--subjects", "e", "--defaults"]],
         ["stream", "edit", "E", "--max-consumers", "5", "-f"],
         "jetlink: error: stream configuration update can not change max_consumers (10052): "
         "max_consumers = 5"),
    ],
)
def test_refusals_name_the_field_and_the_value(jl, setup, args, line):
    """The server's description and code, then what was wrong: the field and its value (the
    --json document stays the server's)."""
    for cmd in setup:
        ok(jl(*cmd))
    result = jl(*args)
    assert result.exit_code == 1
    assert result.stderr.rstrip("\n").splitlines()[-1] == line
    as_json = jl(*args, "-j")
    assert set(json.loads(as_json.stdout)["error"]) == {"code", "err_code", "description"}


@pytest.mark.parametrize(
    ("flags", "subject", "body", "line"),
    [
        (["--max-msgs", "1", "--discard", "new"], "l.a", "x",
         "jetlink: error: maximum messages exceeded (10077): max_msgs = 1 (discard new): the "
         "stream holds 1"),
        (["--max-msg-size", "5"], "l.a", "1234567",
         "jetlink: error: message size exceeds maximum allowed (10054): max_msg_size = 5: the "
         "message is 7 bytes"),
        (["--max-msgs-per-subject", "1", "--discard", "new", "--discard-per-subject"], "l.a", "x",
         "jetlink: error: maximum messages per subject exceeded (10077): max_msgs_per_subject = "
         "1 (discard new per subject): subject l.a holds 1"),
    ],
)
def test_publish_refusals_name_the_limit_and_its_value(jl, flags, subject, body, line):
    ok(jl("stream", "add", "L", "--subjects", "l.>", "--defaults", *flags))
    if "--max-msg-size" not in flags:
        ok(jl("pub", subject, "first"))
    result = jl("pub", subject, body)
    assert result.exit_code == 1
    assert result.stderr == line + "\n"
    as_json = json.loads(jl("pub", subject, body, "-j").stdout)
    assert set(as_json["error"]) == {"code", "err_code", "description"}


def test_natscli_runtime_feature_flags_set_their_fields(jl):
    """--allow-counter / --allow-batch / --allow-fast / --allow-schedules (natscli's flags)
    set allow_msg_counter / allow_atomic / allow_batched / allow_msg_schedules; the server's
    rules on them apply (a counter stream cannot change its setting: 10052)."""
    def fields(result):
        cfg = json.loads(result.stdout)["config"]
        return {k: cfg.get(k, False) for k in ("allow_msg_counter", "allow_atomic",
                                                "allow_batched", "allow_msg_schedules")}

    assert fields(jl("stream", "add", "CNT", "--subjects", "cnt.>", "--allow-counter",
                     "--defaults", "-j")) == {"allow_msg_counter": True, "allow_atomic": False,
                                              "allow_batched": False,
                                              "allow_msg_schedules": False}
    assert fields(jl("stream", "add", "B", "--subjects", "b.>", "--allow-batch",
                     "--allow-schedules", "--defaults", "-j")) == {
        "allow_msg_counter": False, "allow_atomic": True, "allow_batched": False,
        "allow_msg_schedules": True}
    assert fields(jl("stream", "edit", "B", "--no-allow-batch", "--allow-fast", "-f",
                     "-j")) == {"allow_msg_counter": False, "allow_atomic": False,
                                "allow_batched": True, "allow_msg_schedules": True}
    refused = jl("stream", "edit", "B", "--allow-counter", "-f", "-j")
    assert refused.exit_code == 1
    assert json.loads(refused.stdout)["error"]["err_code"] == 10052


def test_an_edit_that_removes_messages_needs_force_without_a_terminal(jl):
    """Without a terminal an edit is applied as given, unless its tighter limits remove
    stored messages: then, as purge or rmm, it needs -f (exit 2, nothing changed)."""
    ok(jl("stream", "add", "O", "--subjects", "o.>", "--defaults"))
    for i in range(6):
        ok(jl("pub", f"o.{i % 2}", f"m{i}"))
    before = data_dir_bytes(jl.data)
    for flags, why in ((["--max-msgs", "4"], "max_msgs 4 < 6 stored"),
                       (["--max-msgs-per-subject", "2"],
                        "max_msgs_per_subject 2 < 3 stored on one subject"),
                       (["--retention", "interest"], "retention interest with no consumer: "
                        "the 6 stored go, as nobody is interested")):
        res = jl("stream", "edit", "O", *flags)
        assert res.exit_code == 2, res.output
        assert res.stderr.endswith(
            "jetlink: error: no terminal to confirm on: pass -f/--force to edit stream O (it "
            f"removes stored messages: {why})\n"), res.stderr
        # the dry run says it too (in its JSON: removes), and changes nothing
        dry = jl("stream", "edit", "O", *flags, "--dry-run")
        assert dry.exit_code == 1 and dry.stdout.splitlines()[-1] == (
            f"It removes stored messages: {why} (the edit asks first on a terminal, and "
            "needs -f/--force without one)"), dry.stdout
        assert json.loads(jl("stream", "edit", "O", *flags, "--dry-run", "-j").stdout)[
            "removes"] == why
    assert json.loads(jl("stream", "edit", "O", "--max-msgs", "100", "--dry-run", "-j").stdout)[
        "removes"] is None
    assert data_dir_bytes(jl.data) == before
    # limits that keep every message: applied as given
    assert doc(jl("stream", "edit", "O", "--max-msgs", "100", "-j"))["state"]["messages"] == 6
    done = doc(jl("stream", "edit", "O", "--max-msgs", "4", "-f", "-j"))
    assert done["state"]["messages"] == 4
    # nobody interested: the server keeps none of them, nor does the engine
    done = doc(jl("stream", "edit", "O", "--retention", "interest", "-f", "-j"))
    assert (done["state"]["messages"], done["state"]["first_seq"]) == (0, 7)


def test_a_lower_limit_under_discard_new_removes_nothing_and_needs_no_force(jl):
    """Discard new: a lower max_msgs or max_bytes refuses new messages, it keeps the stored
    ones (as the server): the edit is not one that removes messages."""
    ok(jl("stream", "add", "DN", "--subjects", "dn.>", "--defaults", "--discard", "new"))
    for i in range(5):
        ok(jl("pub", f"dn.{i}", "xxxxxxxxxx"))
    assert doc(jl("stream", "edit", "DN", "--max-msgs", "2", "-j"))["state"]["messages"] == 5
    assert doc(jl("stream", "edit", "DN", "--max-bytes", "100", "-j"))["state"]["messages"] == 5


@pytest.mark.parametrize(("args", "message"), [
    (["stream", "rm", "NOPE"], "stream not found (10059): NOPE"),
    (["stream", "purge", "NOPE"], "stream not found (10059): NOPE"),
    (["stream", "rmm", "NOPE", "1"], "stream not found (10059): NOPE"),
    (["consumer", "rm", "ORDERS", "nope"], "consumer not found (10014): nope"),
    (["kv", "rm", "NOPE"], "bucket not found (10059): NOPE"),
    (["cluster", "rm", "lcal"], "cluster lcal not found: did you mean local?"),
    # a mirror's verbs on a misspelt cluster: the closest name, as every verb
    (["--cluster", "lcal", "stream", "failover", "X"],
     "cluster lcal not found: did you mean local?"),
    (["--cluster", "lcal", "stream", "failback", "X"],
     "cluster lcal not found: did you mean local?"),
    (["--cluster", "lcal", "kv", "promote", "X"], "cluster lcal not found: did you mean local?"),
])
def test_what_is_not_there_is_said_before_any_question(jl, args, message):
    """As natscli (it loads the stream before asking): no confirmation is asked, nor -f
    required, to remove what does not exist."""
    assert jl("stream", "add", "ORDERS", "--subjects", "o.>", "--defaults").exit_code == 0
    r = jl(*args)  # no terminal, no -f: the question would be refused with exit status 2
    assert (r.exit_code, r.stderr) == (1, f"jetlink: error: {message}\n")


def test_a_json_error_is_the_servers_document_alone(jl):
    """--json prints the API's error document as it answers it, and nothing else (the same
    from a live server: tests/live/test_parity.py); what the error line adds (the name not
    found, the closest one) is in the line without --json."""
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    r = jl("stream", "info", "ORDRS", "-j")
    assert r.exit_code == 1
    assert json.loads(r.stdout) == {"error": {"code": 404, "err_code": 10059,
                                              "description": "stream not found"}}
    assert r.stderr == ""
    r = jl("stream", "info", "ORDRS")
    assert r.stderr == "jetlink: error: stream not found (10059): ORDRS; did you mean ORDERS?\n"


def test_add_validate_and_output_check_the_config_and_create_nothing(jl):
    """natscli's stream add --validate (the config, a blank line, its verdict) and --output
    FILE (the checked config as JSON, mode 0600, read back by --config): no data directory,
    no stream; every refusal one line, exit 1; both at once a usage error."""
    missing = jl.tmp / "never"
    args = ["--data-dir", str(missing), "stream", "add", "S", "--subjects", "s.>", "--defaults"]
    r = ok(jl(*args, "--validate"))
    text, verdict = r.stdout.rsplit("\n\n", 1)
    assert verdict == ("Configuration is a valid Stream matching "
                       "io.nats.jetstream.api.v1.stream_configuration\n")
    cfg = json.loads(text)
    assert (cfg["name"], cfg["subjects"], cfg["max_msgs"]) == ("S", ["s.>"], -1)
    assert doc(jl(*args, "--validate", "-j")) == cfg
    out = jl.tmp / "s.json"
    r = ok(jl(*args, "--output", str(out)))
    assert (r.stdout, r.stderr) == ("", "")
    assert json.loads(out.read_text()) == cfg and out.stat().st_mode & 0o777 == 0o600
    assert not missing.exists()
    r = jl(*args[:-3], "--subjects", "s..", "--defaults", "--max-age", "1ms", "--validate")
    assert r.exit_code == 1
    assert r.stderr.splitlines()[0] == "jetlink: error: max age needs to be >= 100ms (10052): " \
                                       "max_age = 1ms"
    assert any(line.startswith("jetlink: error: invalid subject (10052)")
               for line in r.stderr.splitlines())
    r = jl(*args, "--validate", "--output", str(out))
    assert (r.exit_code, r.stderr) == (2, "jetlink: error: --validate prints the configuration, "
                                          "--output saves it: give one\n")
    assert not missing.exists()
    ok(jl("stream", "add", "--config", str(out)))
    assert doc(jl("stream", "ls", "-j")) == ["S"]


@pytest.mark.parametrize(("peer", "line"), [
    ({"name": "n1", "current": True, "active": 1_000_000}, "n1, current, seen 1ms ago"),
    ({"name": "n1", "current": False, "active": 1_000_000, "lag": 1},
     "n1, outdated, seen 1ms ago, 1 operation behind"),
    ({"name": "n0", "current": False, "offline": True, "active": 0, "lag": 5},
     "n0, outdated, OFFLINE, not seen, 5 operations behind"),
    ({"name": "n2", "current": True, "offline": True, "active": 2**63 - 1},
     "n2, current, OFFLINE, not seen"),
])
def test_a_streams_replica_line_is_natscli_s(peer, line):
    """natscli's stream info replica row: current or outdated, then OFFLINE, "not seen" for
    a peer never heard from, and "operation" for one behind."""
    from jetlink.cli.output import replica_row as _replica

    assert _replica(peer) == line


def test_a_config_file_that_is_no_object_is_said_as_consumer_add_says_it(jl, tmp_path):
    arr = tmp_path / "arr.json"
    arr.write_text("[]")
    r = jl("stream", "add", "--config", str(arr))
    assert (r.exit_code, r.stderr) == (
        1, f"jetlink: error: {arr}: expected a JSON object (a StreamConfig or StreamInfo)\n")


def test_cluster_verbs_on_the_engine_say_there_is_no_group(jl):
    """natscli's stream / consumer cluster verbs manage a RAFT group: the engine has none,
    and says so as natscli does for a stream that is not clustered (exit 1)."""
    assert jl("stream", "add", "S", "--subjects", "s.>", "--defaults").exit_code == 0
    assert jl("consumer", "add", "S", "C", "--pull", "--defaults").exit_code == 0
    for args, what in ((("stream", "cluster", "step-down", "S"), 'stream "S"'),
                       (("stream", "cluster", "peer-remove", "S", "n1"), 'stream "S"'),
                       (("consumer", "cluster", "step-down", "S", "C"), 'consumer "S" > "C"')):
        r = jl(*args)
        assert (r.exit_code, r.stderr) == (1, f"jetlink: error: {what} is not clustered\n")
    # asked all the same, the engine answers as a single server does: 10010
    from jetlink.core.errors import ApiError
    from jetlink.core.jetstream import JetStream
    from jetlink.core.store import DataDir

    dd = DataDir(jl.data)
    try:
        js = JetStream(dd.open("local"))
        for call in (lambda: js.stream_leader_step_down("S"),
                     lambda: js.consumer_leader_step_down("S", "C"),
                     lambda: js.stream_peer_remove("S", "n1")):
            with pytest.raises(ApiError) as err:
                call()
            assert (err.value.err_code, err.value.description) == (
                10010, "JetStream clustering support required")
    finally:
        dd.close()


def test_raft_leader_report_table():
    """natscli's renderRaftLeaders: per cluster (a rule between), fewest first, a star per
    tenth of the cluster's groups rounded half away from zero (Go's math.Round), at least
    one; groups without cluster information or leader are not counted."""
    import io
    import types

    from jetlink.cli import output
    from jetlink.cli.console import make_console

    buf = io.StringIO()
    term = types.SimpleNamespace(json=False, color=False, out=make_console(buf),
                                 err=make_console(io.StringIO()))
    clusters = [{"name": "west", "leader": "w1"}, *[{"name": "east", "leader": "e1"}] * 3,
                {"name": "east", "leader": "e2"}, None, {"name": "east"}]
    output.raft_leaders(term, clusters, "Streams")
    assert buf.getvalue() == (  # (the blank line before it goes to stdout: output.line)
        "RAFT Leader Report                           \n"
        "╭────────┬─────────┬─────────┬──────────────╮\n"
        "│ Server │ Cluster │ Streams │ Distribution │\n"
        "├────────┼─────────┼─────────┼──────────────┤\n"
        "│ e2     │ east    │ 1       │ ***          │\n"
        "│ e1     │ east    │ 3       │ ********     │\n"
        "├────────┼─────────┼─────────┼──────────────┤\n"
        "│ w1     │ west    │ 1       │ **********   │\n"
        "╰────────┴─────────┴─────────┴──────────────╯\n")
    buf.truncate(0)
    output.raft_leaders(term, [None, {"name": "east"}], "Streams")
    assert buf.getvalue() == ""


def test_a_streams_alternates_are_listed_as_natscli_lists_them():
    """natscli's stream info Alternates rows: names and clusters right-aligned by the
    longest of each, the domain when there is one, the label on the first row only."""
    from jetlink.cli import output
    from jetlink.cli.stream import _alternates

    cols = output.Columns("")
    cols.row("Active Consumers", 0)
    _alternates(cols, [{"name": "R3", "cluster": "C"},
                       {"name": "R3M", "cluster": "east", "domain": "hub"}])
    assert cols.lines() == [
        "  Active Consumers: 0",
        "        Alternates:  R3: Cluster:    C",
        "                    R3M: Cluster: east Domain: hub",
    ]


def test_a_nul_byte_in_a_file_stream_s_or_consumer_s_name_is_refused_and_changes_nothing(jl):
    """nats-server's file store can not make a directory of such a name: 10049 / 10012,
    the create's last step (tests/test_validate_stream.py, tests/test_consumer_config.py
    hold the rules); nothing is stored."""
    from helpers import data_dir_bytes

    ok(jl("stream", "add", "S", "--subjects", "s", "--defaults"))
    stream_cfg, consumer_cfg = jl.tmp / "nul.json", jl.tmp / "nulc.json"
    stream_cfg.write_text('{"name": "A\\u0000B", "subjects": ["nul"]}')
    consumer_cfg.write_text('{"durable_name": "C\\u0000D", "ack_policy": "explicit"}')
    before = data_dir_bytes(jl.data)
    for args, code in ((["stream", "add", "--config", str(stream_cfg)], 10049),
                       (["consumer", "add", "S", "--config", str(consumer_cfg)], 10012)):
        res = jl(*args, "-j")
        assert res.exit_code == 1, res.output
        assert json.loads(res.stdout)["error"]["err_code"] == code
    assert data_dir_bytes(jl.data) == before


def test_a_step_down_whose_preferred_server_was_not_elected_warns(capsys, monkeypatch):
    """--preferred n3 with n3 down: the server elects another; said as natscli says the new
    leader, then a warning that the preferred server was not the one elected."""
    from jetlink.cli import stream as S
    from jetlink.cli.app import App

    monkeypatch.setattr(S, "STEP_DOWN_EVERY", 0)
    doc = {"cluster": {"leader": "n1"}}
    got = S.await_new_leader(App(), lambda: doc, "n2", 'stream "R3"', 3, "n3")
    assert got is doc
    assert capsys.readouterr().err == (
        'New leader elected "n1"\n'
        "jetlink: warning: the preferred server n3 was not elected (n1 was): it is down, or "
        "not one of the group's peers\n")
    S.await_new_leader(App(), lambda: doc, "n2", 'stream "R3"', 3, "n1")
    assert capsys.readouterr().err == 'New leader elected "n1"\n'


def test_a_byte_function_cutting_a_character_stores_u_fffd_per_byte(jl):
    """left / right / split*From* / slice* count bytes as the server does and can cut a
    character in two: the subject stored has each byte of it as U+FFFD (what nats-server's
    JSON shows for the bytes it stores), on the publish path and the source path alike; the
    engine's other work goes on (a subject that is not UTF-8 could not be stored at all)."""
    ok(jl("stream", "add", "O", "--subjects", "o.>", "--defaults"))
    ok(jl("stream", "add", "O2", "--subjects", "q.>", "--defaults"))
    ok(jl("pub", "o.héllo", "x"))
    ok(jl("stream", "add", "M", "--defaults", "--source", json.dumps(
        {"name": "O", "subject_transforms": [{"src": "o.*", "dest": "m.{{left(1,2)}}"}]})))
    ok(jl("stream", "add", "M2", "--source", "O2", "--defaults"))
    ok(jl("stream", "add", "U", "--subjects", "u.>", "--transform-source", "u.*",
          "--transform-destination", "p.{{left(1,3)}}", "--defaults"))
    ok(jl("pub", "u.a€", "y"))
    ok(jl("pub", "q.one", "z"))
    ok(jl("replicate"))
    assert doc(jl("stream", "get", "M", "1", "-j"))["subject"] == "m.h\ufffd"
    assert doc(jl("stream", "get", "U", "1", "-j"))["subject"] == "p.a\ufffd\ufffd"
    assert doc(jl("stream", "get", "M2", "1", "-j"))["subject"] == "q.one"


def test_an_empty_src_transform_nats_server_never_starts_is_warned_of(jl):
    """A source with a subject transform whose src is empty, or a mirror with it among
    several: nats-server 2.15.1 accepts it, then reads the origin through a consumer with
    that empty filter, which never starts (setupSourceConsumer / setupMirrorConsumer). The
    engine copies every subject; stream add says so on stderr. A mirror's single such
    transform works on the server too: no warning."""
    ok(jl("stream", "add", "O", "--subjects", "o.>", "--defaults"))
    ok(jl("pub", "o.a", "x"))
    r = ok(jl("stream", "add", "M", "--defaults", "--source", json.dumps(
        {"name": "O", "subject_transforms": [{"src": "", "dest": "all.>"}]})))
    assert r.stderr == (
        'jetlink: warning: source "O": subject_transforms[0] has an empty src: nats-server '
        "2.15.1 gives the consumer it reads the origin through that empty filter, and the "
        "source never starts (nothing is copied; the engine copies every subject): give src "
        '">" instead\n')
    r = ok(jl("stream", "add", "M2", "--defaults", "--mirror", json.dumps(
        {"name": "O", "subject_transforms": [{"src": "o.a", "dest": "x"},
                                             {"src": "", "dest": "all.>"}]})))
    assert r.stderr.startswith('jetlink: warning: mirror origin "O": subject_transforms[1] '
                               "has an empty src:"), r.stderr
    assert "the mirror never starts" in r.stderr
    r = ok(jl("stream", "add", "M3", "--defaults", "--mirror", json.dumps(
        {"name": "O", "subject_transforms": [{"src": "", "dest": "all.>"}]})))
    assert r.stderr == ""
    ok(jl("replicate"))
    assert doc(jl("stream", "get", "M", "1", "-j"))["subject"] == "all.o.a"


def test_validate_counts_the_level_the_server_stores_in_the_metadata(jl, tmp_path):
    """STREAM.CREATE stores _nats.req.level in the metadata before it checks the size: a
    metadata 16 bytes under the limit is refused by the server and by `add`; `--validate`
    (offline) says the same; nothing is created."""
    cfg = tmp_path / "big.json"
    cfg.write_text(json.dumps({"name": "X", "subjects": ["x"],
                               "metadata": {"k": "v" * (131072 - 1 - 15)}}))
    said = ("jetlink: error: stream metadata exceeds maximum size of 131072 bytes (10052): "
            "metadata = ")
    for extra in (["--validate"], []):
        r = jl("stream", "add", "X", "--config", str(cfg), *extra)
        assert r.exit_code == 1 and r.stderr.startswith(said), (extra, r.stderr)
    cfg.write_text(json.dumps({"name": "X", "subjects": ["x"],
                               "metadata": {"k": "v" * (131072 - 1 - 16)}}))
    assert ok(jl("stream", "add", "X", "--config", str(cfg), "--validate")).stdout.endswith(
        "\nConfiguration is a valid Stream matching "
        "io.nats.jetstream.api.v1.stream_configuration\n")
    assert "X" not in ok(jl("stream", "ls", "-n")).stdout


def test_stream_info_prints_compression_persistence_and_start_time_as_natscli(jl):
    """natscli prints jsm.go's String() of the enums (Compression "S2 Compression",
    PersistModeType "Async"; the default mode not at all) and a source's start time with
    Go's %v of a time.Time; consumer ls its raw counts."""
    ok(jl("stream", "add", "O", "--subjects", "o.>", "--defaults"))
    ok(jl("stream", "add", "FULL", "--subjects", "f.>", "--compression", "s2", "--persist-mode",
          "async", "--defaults", "--source",
          json.dumps({"name": "O", "opt_start_time": "2026-01-01T00:00:00.500Z"})))
    lines = [ln.strip() for ln in ok(jl("stream", "info", "FULL")).stdout.splitlines()]
    assert "Compression: S2 Compression" in lines
    assert "Persistence Mode: Async" in lines
    assert "Sources: O, Start Time: 2026-01-01 00:00:00.5 +0000 UTC" in lines
    plain = ok(jl("stream", "info", "O")).stdout
    assert "Persistence Mode" not in plain and "Compression" not in plain
    ok(jl("consumer", "add", "O", "C", "--pull", "--defaults"))
    ok(jl("pub", "o.x", "y", "--count", "1500"))
    row = [c.strip() for c in ok(jl("consumer", "ls", "O")).stdout.splitlines()[-2].split("│")]
    assert row[4:6] == ["0", "1500"], row


def test_no_select_is_accepted_and_changes_nothing(jl):
    """natscli's --no-select (never pick from a list): jetlink never does, the output is the
    same with it."""
    orders(jl)
    ok(jl("consumer", "add", "ORDERS", "C", "--pull", "--defaults"))
    for args in (("stream", "info", "ORDERS"), ("stream", "state", "ORDERS"),
                 ("consumer", "ls", "ORDERS"), ("consumer", "info", "ORDERS", "C"),
                 ("consumer", "state", "ORDERS", "C")):
        plain, picked = ok(jl(*args, "-j")), ok(jl(*args, "--no-select", "-j"))
        assert json.loads(picked.stdout) == json.loads(plain.stdout), args


def test_report_dot_writes_the_replication_graph_as_natscli(jl, tmp_path):
    """natscli's stream report --dot FILE: a digraph of the mirrors (blue, "Mirror") and
    sources (green, labelled with the filter or its one transform); no file without any."""
    out = tmp_path / "r.dot"
    orders(jl)
    ok(jl("stream", "report", "--dot", str(out)))
    assert not out.exists()
    ok(jl("stream", "add", "EVENTS", "--subjects", "events.*", "--defaults"))
    ok(jl("stream", "add", "M", "--mirror", "ORDERS", "--defaults"))
    cfg = tmp_path / "s.json"
    cfg.write_text(json.dumps({"name": "S", "sources": [
        {"name": "ORDERS", "filter_subject": "orders.new"},
        {"name": "EVENTS",
         "subject_transforms": [{"src": "events.*", "dest": "copy.{{wildcard(1)}}"}]}]}))
    ok(jl("stream", "add", "--config", str(cfg)))
    ok(jl("stream", "report", "--dot", str(out)))
    assert out.read_text() == (
        'digraph  {\n\tlabel="Stream Replication Structure";\n\n'
        '\tn1[label="M"];\n\tn2[label="ORDERS"];\n\tn3[label="S"];\n\tn4[label="EVENTS"];\n'
        '\tn2->n1[color="blue",label="Mirror"];\n'
        '\tn2->n3[color="green",label="orders.new"];\n'
        '\tn4->n3[color="green",label="events.* to copy.{{wildcard(1)}}"];\n}\n')
    assert oct(out.stat().st_mode & 0o777) == "0o600"
