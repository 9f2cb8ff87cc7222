"""Topology files: parsing, each object's rules, whole-topology rules, examples, benchmark."""

from __future__ import annotations

import json
import random
import textwrap
from pathlib import Path

import pytest

from jetlink.core.bench.validate import bench_validate
from jetlink.core.config.stream import StreamConfig
from jetlink.core.subjects import overlaps
from jetlink.core.topology import (
    Problem,
    SubjectIndex,
    Topology,
    kv_field,
    load_files,
    load_topology,
    republish_image,
    validate_files,
    validate_topology,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

CLUSTERS = """
[clusters.west]
kind = "nats"
[clusters.east]
kind = "nats"
"""


def run(tmp_path: Path, text: str, name: str = "t.toml") -> list[Problem]:
    """The problems of the file, then its warnings (a missing origin, 10059)."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    topo = load_files([str(path)])
    return validate_topology(topo) + topo.warnings


def brief(problems: list[Problem]) -> list[tuple]:
    return [(p.object, p.field, p.err_code) for p in problems]


def assert_problems(problems: list[Problem], expected: list[tuple]) -> None:
    """``expected``: one (object, field, err_code, text in the description) per problem."""
    assert brief(problems) == [e[:3] for e in expected], [p.description for p in problems]
    for p, (*_, text_part) in zip(problems, expected, strict=True):
        assert text_part in p.description, p.description


# --------------------------------------------------------------------------- whole-topology rows

# (id, TOML, [(object, field, err_code, text in description), ...])
ROWS = [
    (
        "overlap-later-object",
        CLUSTERS + """
        [streams.A]
        cluster = "west"
        subjects = ["orders.>"]
        [streams.B]
        cluster = "west"
        subjects = ["x", "orders.eu.*"]
        """,
        [("stream B", "subjects", 10065,
          'subjects overlap with an existing stream: '
          '"orders.eu.*" overlaps "orders.>" of stream A')],
    ),
    (
        "overlap-other-cluster-is-fine",
        CLUSTERS + """
        [streams.A]
        cluster = "west"
        subjects = ["orders.>"]
        [streams.B]
        cluster = "east"
        subjects = ["orders.>"]
        """,
        [],
    ),
    (
        "overlap-default-subject",  # no subjects: the server uses the stream name
        """
        [streams.A]
        subjects = ["*"]
        [streams.B]
        """,
        [("stream B", "subjects", 10065, '"B" overlaps "*" of stream A')],
    ),
    (
        "overlap-kv-bucket",
        """
        [streams.SPY]
        subjects = ["$KV.CONFIG.secrets.>"]
        [kv.CONFIG]
        """,
        [("kv CONFIG", "bucket", 10065,
          '"$KV.CONFIG.>" overlaps "$KV.CONFIG.secrets.>" of stream SPY')],
    ),
    (
        "missing-mirror-origin",
        CLUSTERS + """
        [streams.M]
        cluster = "east"
        mirror = { name = "ORDERS", domain = "west" }
        """,
        [("stream M", "mirror.name", 10059,
          'stream not found: mirror origin "ORDERS" does not exist in cluster "west"')],
    ),
    (
        "missing-source-local",
        """
        [streams.S]
        subjects = ["s"]
        sources = [{ name = "GONE" }]
        """,
        [("stream S", "sources[0].name", 10059,
          'stream not found: source "GONE" does not exist in cluster "local"')],
    ),
    (
        "missing-origin-undeclared-domain",
        CLUSTERS + """
        [streams.M]
        cluster = "east"
        mirror = { name = "ORDERS", domain = "north" }
        """,
        [("stream M", "mirror.name", 10059, '(cluster "north" is not declared)')],
    ),
    (
        "external-api-outside-the-topology-is-not-checked",
        """
        [streams.M]
        mirror = { name = "ORDERS", external = { api = "$JS.ACC.orders.API" } }
        """,
        [],
    ),
    (
        "cycle-local-both-streams",
        """
        [streams.A]
        subjects = ["a"]
        sources = [{ name = "B" }]
        [streams.B]
        subjects = ["b"]
        sources = [{ name = "A" }]
        """,
        [
            ("stream A", "sources[0].name", 10052, "detected cycle: A -> B -> A"),
            ("stream B", "sources[0].name", 10052, "detected cycle: B -> A -> B"),
        ],
    ),
    (
        "cycle-through-mirror",
        """
        [streams.A]
        subjects = ["a"]
        sources = [{ name = "C" }]
        [streams.B]
        sources = [{ name = "A" }]
        [streams.C]
        mirror = { name = "B" }
        """,
        [
            ("stream A", "sources[0].name", 10052, "detected cycle: A -> C -> B -> A"),
            ("stream B", "sources[0].name", 10052, "detected cycle: B -> A -> C -> B"),
            ("stream C", "mirror.name", 10052, "detected cycle: C -> B -> A -> C"),
        ],
    ),
    (
        "cycle-across-domains",
        CLUSTERS + """
        [streams.A]
        cluster = "west"
        subjects = ["a"]
        sources = [{ name = "B", domain = "east" }]
        [streams.B]
        cluster = "east"
        sources = [{ name = "A", domain = "west" }]
        """,
        [
            ("stream A", "sources[0].name", 10052, "detected cycle: A@west -> B@east -> A@west"),
            ("stream B", "sources[0].name", 10052, "detected cycle: B@east -> A@west -> B@east"),
        ],
    ),
    (
        "filtered-source-is-not-a-cycle",  # the server's rule: the filter misses the subjects
        """
        [streams.A]
        subjects = ["a.>"]
        sources = [{ name = "B", filter_subject = "b.>" }]
        [streams.B]
        subjects = ["b.>"]
        sources = [{ name = "A", filter_subject = "a.>" }]
        """,
        [],
    ),
    (
        # the server's walk lets this through (A has no subjects of its own to compare the
        # filter with), and a message published to b.1 then goes round for ever
        "cycle-through-a-stream-without-subjects",
        """
        [streams.A]
        sources = [{ name = "B", filter_subject = "b.1" }]
        [streams.B]
        subjects = ["b.>"]
        sources = [{ name = "A" }]
        """,
        [
            ("stream A", "sources[0].name", 10052,
             "detected cycle: A -> B -> A (each stream sources or mirrors the next; A has no "
             "subjects of its own: it stores what its filtered source sends it, so a message "
             "goes round for ever; the server's check lets this through)"),
            ("stream B", "sources[0].name", 10052,
             "detected cycle: B -> A -> B (each stream sources or mirrors the next; A has no "
             "subjects of its own: it stores what its filtered source sends it, so a message "
             "goes round for ever; the server's check lets this through)"),
        ],
    ),
    (
        "republish-loop",
        """
        [streams.A]
        subjects = ["a.>"]
        republish = { src = "a.>", dest = "b.x.>" }
        [streams.B]
        subjects = ["b.>"]
        republish = { src = "b.*.>", dest = "a.{{wildcard(1)}}.>" }
        """,
        [
            ("stream A", "republish.dest", 10052,
             "stream configuration for republish destination forms a cycle: A -> B -> A "
             '(A republishes to "b.x.>", which stream B stores ("b.>"))'),
            ("stream B", "republish.dest", 10052,
             "stream configuration for republish destination forms a cycle: B -> A -> B"),
        ],
    ),
    (
        "republish-loop-of-three",
        """
        [streams.A]
        subjects = ["a.*"]
        republish = { dest = "b.{{wildcard(1)}}", src = "a.*" }
        [streams.B]
        subjects = ["b.*"]
        republish = { src = "b.*", dest = "c.{{partition(3,1)}}" }
        [streams.C]
        subjects = ["c.*"]
        republish = { src = "c.*", dest = "a.$1" }
        """,
        [
            ("stream A", "republish.dest", 10052, "A -> B -> C -> A"),
            ("stream B", "republish.dest", 10052, "B -> C -> A -> B"),
            ("stream C", "republish.dest", 10052, "C -> A -> B -> C"),
        ],
    ),
    (
        "republish-chain-without-loop",
        """
        [streams.A]
        subjects = ["a.>"]
        republish = { src = "a.>", dest = "mon.a.>" }
        [streams.MON]
        subjects = ["mon.>"]
        republish = { src = "mon.>", dest = "audit.>" }
        """,
        [],
    ),
    (
        "republish-into-itself-is-the-servers-own-error",
        """
        [streams.A]
        subjects = ["a.>"]
        republish = { src = "a.x", dest = "a.y" }
        """,
        [("stream A", "republish.dest", 10052,
          "stream configuration for republish destination forms a cycle")],
    ),
    (
        "kv-mirror-origin-without-allow-direct",
        CLUSTERS + """
        [kv.LEGACY]
        cluster = "west"
        allow_direct = false
        [kv_mirrors.LEGACY_EAST]
        cluster = "east"
        origin_bucket = "LEGACY"
        origin_cluster = "west"
        """,
        [("kv_mirror LEGACY_EAST", "origin_bucket", 0,
          'origin bucket "LEGACY" (stream "KV_LEGACY") does not have allow_direct set')],
    ),
    (
        "kv-mirror-origin-is-a-plain-stream-without-allow-direct",
        """
        [streams.KV_OLD]
        subjects = ["$KV.OLD.>"]
        [kv_mirrors.OLD_COPY]
        origin_bucket = "OLD"
        """,
        [("kv_mirror OLD_COPY", "origin_bucket", 0, "does not have allow_direct set")],
    ),
    (
        "kv-mirror-origin-missing",
        """
        [kv_mirrors.COPY]
        origin_bucket = "NOPE"
        """,
        [("kv_mirror COPY", "origin_bucket", 10059,
          'stream not found: origin bucket "NOPE" (stream KV_NOPE) '
          'does not exist in cluster "local"')],
    ),
    (
        "mirror-max-msg-size-local",  # the server's own check, with the detail added
        """
        [streams.O]
        subjects = ["o"]
        max_msg_size = 2048
        [streams.M]
        mirror = { name = "O" }
        max_msg_size = 1024
        """,
        [("stream M", "max_msg_size", 10030,
          "stream mirror must have max message size >= source: max_msg_size 1024 is smaller "
          "than 2048, the max_msg_size of mirror origin O")],
    ),
    (
        "mirror-max-msg-size-across-domains",
        CLUSTERS + """
        [streams.O]
        cluster = "west"
        subjects = ["o"]
        max_msg_size = 2048
        [streams.M]
        cluster = "east"
        mirror = { name = "O", domain = "west" }
        max_msg_size = 1024
        """,
        [("stream M", "max_msg_size", 10030, 'of mirror origin O in cluster "west"')],
    ),
    (
        "mirror-max-msg-size-unlimited-mirror-is-fine",
        """
        [streams.O]
        subjects = ["o"]
        max_msg_size = 2048
        [streams.M]
        mirror = { name = "O" }
        """,
        [],
    ),
    (
        "source-max-msg-size",
        """
        [streams.O]
        subjects = ["o"]
        max_msg_size = 2048
        [streams.S]
        subjects = ["s"]
        sources = [{ name = "O" }]
        max_msg_size = 100
        """,
        [("stream S", "max_msg_size", 10046, "stream source must have max message size >= target")],
    ),
    (
        "kv-aggregate-origin-missing",
        """
        [kv_aggregates.NEW_ORDERS]
        origins = [{ stream = "KV_ORDERS", keys = ["NEW.>"] }]
        """,
        [("kv_aggregate NEW_ORDERS", "origins[0].stream", 10059,
          'aggregate origin bucket "ORDERS" (stream KV_ORDERS) does not exist')],
    ),
    (
        "kv-aggregate-fine",
        """
        [kv.ORDERS]
        history = 5
        [kv_aggregates.NEW_ORDERS]
        origins = [{ stream = "KV_ORDERS", keys = ["NEW.>"] }]
        """,
        [],
    ),
    (
        "undeclared-cluster",
        CLUSTERS + """
        [streams.A]
        cluster = "north"
        subjects = ["a"]
        [streams.B]
        cluster = "wset"
        subjects = ["b"]
        """,
        [("stream A", "cluster", 0,
          'cluster "north" is not declared (declared clusters: east, west)'),
         ("stream B", "cluster", 0,
          'cluster "wset" is not declared (declared clusters: east, west; did you mean '
          'west?)')],
    ),
    (
        "kafka-cluster-holds-no-streams",
        """
        [clusters.k]
        kind = "kafka"
        [streams.A]
        cluster = "k"
        subjects = ["a"]
        """,
        [("stream A", "cluster", 0, 'cluster "k" is a kafka cluster')],
    ),
    (
        "duplicate-stream-in-one-cluster",
        """
        [streams.A]
        subjects = ["a"]
        [streams.A2]
        name = "A"
        subjects = ["a2"]
        """,
        [("stream A2", "name", 0,
          'duplicate definition: stream "A" in cluster "local" is already defined by stream A')],
    ),
    (
        "kv-and-stream-are-the-same-stream",
        """
        [kv.CONFIG]
        [streams.KV_CONFIG]
        subjects = ["x"]
        """,
        [("kv CONFIG", "bucket", 0, 'duplicate definition: stream "KV_CONFIG"')],
    ),
    (
        "same-name-in-two-clusters-via-name-key",
        CLUSTERS + """
        [streams.ORDERS]
        cluster = "west"
        subjects = ["orders.>"]
        [streams.ORDERS_DR]
        name = "ORDERS"
        cluster = "east"
        mirror = { name = "ORDERS", domain = "west" }
        """,
        [],
    ),
]


@pytest.mark.parametrize("text,expected", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_whole_topology_rules(tmp_path, text, expected):
    problems = run(tmp_path, text)
    assert_problems(problems, expected)
    for p in problems:
        assert p.file == str(tmp_path / "t.toml")


# --------------------------------------------------------------------------- object rules


OBJECT_ROWS = [
    # each object's own rules through check_stream_config; every object reported
    (
        """
        [streams.A]
        subjects = ["a..b"]
        [streams.B]
        subjects = ["b"]
        max_age = "50ms"
        [streams.C]
        subjects = ["c"]
        [kv.K]
        history = 65
        [kv.T]
        ttl = "50ms"
        [kv.M]
        limit_marker_ttl = "500ms"
        [kv_mirrors.KM]
        origin_bucket = "K"
        keys = ["a b"]
        [kv_aggregates.AG]
        origins = [{ bucket = "T", keys = ["a.>", "a.b"] }]
        """,
        [
            ("stream A", "subjects", 10052, "invalid subject"),
            ("stream B", "max_age", 10052, "max age needs to be >= 100ms"),
            ("kv K", "history", 0, "nats: history limited to a max of 64"),
            ("kv T", "ttl", 10052, "max age needs to be >= 100ms"),
            ("kv M", "limit_marker_ttl", 10052,
             "subject delete marker TTL must be at least 1 second"),
            ("kv_mirror KM", "keys[0]", 0, "nats: invalid key"),
            ("kv_aggregate AG", "origins[0].keys[0]", 10147, "source filters can not overlap"),
        ],
    ),
    (
        """
        [streams.A]
        subjects = ["a"]
        max_agee = "1h"
        [streams.B]
        subjects = ["b"]
        sources = [{ name = "A", filter = "a" }]
        [streams.C]
        subjects = ["c"]
        placement = { cluster = "x", zone = "y" }
        [streams.D]
        subjects = ["d"]
        max_age = "soon"
        [streams.E]
        subjects = ["e"]
        max_msgs = "many"
        [kv.K]
        ttl_seconds = 5
        [kv.H]
        histroy = 5
        [streams.F]
        mirror = { name = "A", domain = "west", external = { api = "$JS.east.API" } }
        """,
        [
            ("stream A", "max_agee", 0, 'unknown key "max_agee": not a StreamConfig field'),
            ("stream B", "sources[0].filter", 0, 'unknown key "filter"'),
            ("stream C", "placement.zone", 0, 'unknown key "zone"'),
            ("stream D", "max_age", 0, "invalid duration 'soon'"),
            ("stream E", "max_msgs", 10025, "json: cannot unmarshal string into Go struct field"),
            ("stream F", "mirror.domain", 0,
             'domain "west" contradicts external.api "$JS.east.API"'),
            ("kv K", "ttl_seconds", 0, 'unknown key "ttl_seconds"'),
            ("kv H", "histroy", 0, 'unknown key "histroy"; did you mean history?'),
            # the rest of F, its domain set aside, checked all the same: a warning
            ("stream F", "mirror.name", 10059,
             'mirror origin "A" does not exist in cluster "east"'),
        ],
    ),
    (
        """
        [streams.MIRROR_WITH_SUBJECTS]
        subjects = ["x"]
        mirror = { name = "ORIGIN" }
        [streams.ORIGIN]
        subjects = ["o"]
        """,
        [("stream MIRROR_WITH_SUBJECTS", "subjects", 10034,
          "stream mirrors can not contain subjects")],
    ),
    (
        # a list's element is named by its index (Go's text names the list only)
        """
        [streams.O]
        subjects = ["o"]
        [streams.P]
        subjects = ["p"]
        [streams.X]
        subjects = ["x.>", 5]
        [streams.Y]
        subjects = ["y"]
        sources = [{ name = "O" }, { name = "P", opt_start_seq = -3 }]
        """,
        [("stream X", "subjects[1]", 10025, "json: cannot unmarshal number into Go struct "
          "field StreamConfigRequest.subjects of type string"),
         ("stream Y", "sources[1].opt_start_seq", 10025, "json: cannot unmarshal number -3 "
          "into Go struct field StreamConfigRequest.sources.opt_start_seq of type uint64")],
    ),
    (
        # a field set aside for its type is not checked again as missing: its fault is the
        # problem, said once (no "mirrored stream name is invalid: mirror.name = \"\"", no
        # aggregate "has no origins" for want of the one given)
        """
        [streams.M]
        mirror = { name = 5 }
        [kv_aggregates.G]
        origins = [5]
        """,
        [("stream M", "mirror.name", 10025, "json: cannot unmarshal number into Go struct "
          "field StreamConfigRequest.mirror.name of type string"),
         ("kv_aggregate G", "origins[0]", 0, "expected a table, got int")],
    ),
]


@pytest.mark.parametrize("text,expected", OBJECT_ROWS)
def test_every_object_is_checked(tmp_path, text, expected):
    assert_problems(run(tmp_path, text), expected)


def test_an_elements_detail_names_it_and_the_lists_rule(tmp_path):
    (problem,) = run(tmp_path, """
        [streams.X]
        subjects = ["x.>", 5]
        """)
    assert problem.detail == 'subjects[1] is 5: subjects is an array of strings, e.g. ["a.>"]'


@pytest.mark.parametrize(("value", "text"), [
    ('"1"', "version is '1': it must be the integer 1 (version = 1, unquoted)"),
    ("2", "unsupported topology version 2: this jetlink reads version 1"),
])
def test_a_version_not_read_says_why(tmp_path, value, text):
    (problem,) = run(tmp_path, f"version = {value}")
    assert (problem.field, problem.description) == ("version", text)


def test_top_level_and_cluster_table_problems(tmp_path):
    problems = run(tmp_path, """
        version = 2
        consumers = {}
        [clusters.west]
        kind = "redis"
        region = "us"
        [clusters."bad name"]
        """)
    assert brief(problems) == [
        (None, "consumers", 0),
        (None, "version", 0),
        ("cluster west", "region", 0),
        ("cluster west", "kind", 0),
        ("cluster bad name", None, 0),
    ]
    assert 'unknown top-level key "consumers"' in problems[0].description
    assert "topics, links, mirror_topics" in problems[0].description
    assert 'invalid cluster kind' in problems[3].description


def test_durations_as_strings_or_nanoseconds(tmp_path):
    text = """
        [streams.A]
        subjects = ["a"]
        max_age = "{age}"
        duplicate_window = {window}
        subject_delete_marker_ttl = "15m"
        consumer_limits = {{ inactive_threshold = "30s" }}
        sources = []
        """
    p = tmp_path / "d.toml"
    p.write_text(textwrap.dedent(text.format(age="1h30m", window=60_000_000_000)))
    topo = load_topology(str(p))
    assert validate_topology(topo) == []
    cfg = topo.stream("local", "A").effective
    assert (cfg.max_age, cfg.duplicate_window) == (5_400_000_000_000, 60_000_000_000)
    assert cfg.subject_delete_marker_ttl == 900_000_000_000
    assert cfg.consumer_limits.inactive_threshold == 30_000_000_000


def test_toml_datetime_for_opt_start_time(tmp_path):
    problems = run(tmp_path, """
        [streams.O]
        subjects = ["o"]
        [streams.S]
        sources = [{ name = "O", opt_start_time = 2024-05-01T10:00:00Z }]
        """)
    assert problems == []


def test_a_toml_datetime_keeps_every_fractional_digit_the_file_gives(tmp_path):
    """tomllib keeps microseconds; RFC 3339 (and Go's time.Time) take nanoseconds: the file's
    own digits are kept, also in an offset other than Z; a description holding a time is
    left as written."""
    p = tmp_path / "t.toml"
    p.write_text(textwrap.dedent("""
        [streams.O]
        subjects = ["o"]
        description = "from 2026-01-01T00:00:00.123456789Z"
        [streams.M]
        mirror = { name = "O", opt_start_time = 2026-01-01T00:00:00.123456789Z }
        [streams.S]
        sources = [{ name = "O", opt_start_time = 2026-01-01 02:00:00.9876543+02:00 },
                   { name = "P", opt_start_time = 2026-01-01T00:00:00.5Z }]
        """))
    topo = load_topology(str(p))
    assert topo.problems == []
    assert topo.stream("local", "M").spec.mirror.opt_start_time == \
        "2026-01-01T00:00:00.123456789Z"
    assert [s.opt_start_time for s in topo.stream("local", "S").spec.sources] == [
        "2026-01-01T02:00:00.9876543+02:00", "2026-01-01T00:00:00.500000Z"]
    assert topo.stream("local", "O").spec.description == \
        "from 2026-01-01T00:00:00.123456789Z"


def test_bytes_that_are_not_utf8_are_placed_and_a_byte_order_mark_is_read_past(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'[streams.A]\nsubjects = ["a\xffb"]\n')
    [p] = load_files([str(bad)]).problems
    assert p.description == ("file is not UTF-8 text: byte 0xff at line 2, column 15 (byte "
                             "27 of the file)")
    for name, text in (("bom.toml", b'[streams.A]\nsubjects = ["a"]\n'),
                       ("bom.json", b'{"streams": {"A": {"subjects": ["a"]}}}')):
        path = tmp_path / name
        path.write_bytes(b"\xef\xbb\xbf" + text)  # an editor's byte order mark
        topo = load_files([str(path)])
        assert topo.problems == [] and validate_topology(topo) == []
        assert [o.name for o in topo.objects] == ["A"]


def test_a_field_refused_for_its_type_is_not_also_missing(tmp_path):
    problems = run(tmp_path, '[kv_mirrors.M]\norigin_bucket = 5\n'
                             '[kv_aggregates.G]\norigins = "x"\n')
    assert [(p.object, p.field, p.description) for p in problems] == [
        ("kv_mirror M", "origin_bucket", "expected a string, got integer 5"),
        ("kv_aggregate G", "origins", 'expected a list of tables, got string "x"')]


def test_a_file_that_declares_nothing_is_warned_of(tmp_path):
    """An empty file (or one of comments only, an empty JSON list of stream configs) is more
    likely a mistake than a topology of nothing: a warning (a problem under --strict), the
    file still OK."""
    for name, text in (("e.toml", ""), ("e.toml", "# nothing here\n"),
                       ("e.toml", "version = 1\n"), ("e.json", "[]")):
        (tmp_path / name).write_text(text)
        topo = load_files([str(tmp_path / name)])
        assert validate_topology(topo) == []
        assert [w.description for w in topo.warnings] == [
            "the file declares nothing: no clusters, streams, buckets, topics, links or ACLs"]


def test_every_misspelt_key_gets_the_closest_one(tmp_path):
    problems = run(tmp_path, 'verison = 1\n[stream.A]\nsubjects=["a"]\n[clusters.c]\n'
                             'knd="nats"\n[topics.t]\npartitons=3\n')
    hints = [p.description.split("; ")[1].split(" (allowed")[0] for p in problems
             if "did you mean" in p.description]
    assert hints == ["did you mean version?", "did you mean streams?", "did you mean kind?",
                     "did you mean partitions?"]


def test_each_bad_element_of_a_list_is_named_at_its_place_as_written(tmp_path):
    problems = run(tmp_path, '[streams.A]\nsubjects = [1, 2]\n')
    assert [(p.field, p.detail.split(":")[0]) for p in problems] == [
        ("subjects[0]", "subjects[0] is 1"), ("subjects[1]", "subjects[1] is 2")]


@pytest.mark.parametrize(("toml", "field", "text"), [
    # a TOML date or time is a time only where the field is one (opt_start_time): a string
    # field refuses it as Go's decoder would, quoted as written (never Python's repr)
    ('[streams.A]\nsubjects = [1979-05-27]', "subjects[0]",
     'cannot unmarshal date into Go struct field StreamConfigRequest.subjects of type string'),
    ('[streams.A]\nsubjects = ["a", 07:32:00]', "subjects[1]", 'subjects[1] is "07:32:00"'),
    ('[kv.A]\ndescription = 1979-05-27', "description",
     "expected a string, got date 1979-05-27"),
    ('[kv.A]\nmetadata = { k = 07:00:00 }', "metadata",
     'expected a table of strings, got table {"k": "07:00:00"}'),
    ('[kv_mirrors.M]\norigin_bucket = 1979-05-27', "origin_bucket",
     "expected a string, got date 1979-05-27"),
    ('[clusters.c]\nserver = 1979-05-27', "server",
     "[clusters.c] server = 1979-05-27: must be a non-empty string"),
])
def test_a_toml_date_where_a_string_goes_is_refused(tmp_path, toml, field, text):
    problems = run(tmp_path, toml + "\n")
    assert problems and problems[0].field == field, [(p.field, p.description) for p in problems]
    p = problems[0]
    assert text in f"{p.description}: {p.detail}", (p.description, p.detail)


# --------------------------------------------------------------------------- forms and files


def test_json_topology_same_as_toml(tmp_path):
    doc = {
        "clusters": {"west": {"kind": "nats"}, "east": {"kind": "nats"}},
        "streams": {
            "A": {"cluster": "west", "subjects": ["orders.>"], "max_age": "1h"},
            "B": {"cluster": "west", "subjects": ["orders.x"]},
            "M": {"cluster": "east", "mirror": {"name": "A", "domain": "west"},
                  "max_msg_size": 10},
            "G": {"cluster": "east", "mirror": {"name": "GONE", "domain": "west"}},
        },
        "kv": {"CONFIG": {"cluster": "west", "history": 3, "ttl": 3_600_000_000_000}},
        "kv_mirrors": {"CFG": {"cluster": "east", "origin_bucket": "CONFIG",
                               "origin_cluster": "west"}},
        "kv_aggregates": {"AGG": {"cluster": "east",
                                  "origins": [{"bucket": "CONFIG", "cluster": "west"}]}},
    }
    jpath = tmp_path / "t.json"
    jpath.write_text(json.dumps(doc))
    toml = CLUSTERS + """
        [streams.A]
        cluster = "west"
        subjects = ["orders.>"]
        max_age = "1h"
        [streams.B]
        cluster = "west"
        subjects = ["orders.x"]
        [streams.M]
        cluster = "east"
        mirror = { name = "A", domain = "west" }
        max_msg_size = 10
        [streams.G]
        cluster = "east"
        mirror = { name = "GONE", domain = "west" }
        [kv.CONFIG]
        cluster = "west"
        history = 3
        ttl = 3_600_000_000_000
        [kv_mirrors.CFG]
        cluster = "east"
        origin_bucket = "CONFIG"
        origin_cluster = "west"
        [kv_aggregates.AGG]
        cluster = "east"
        origins = [{ bucket = "CONFIG", cluster = "west" }]
        """
    jtopo = load_files([str(jpath)])
    from_json = validate_topology(jtopo) + jtopo.warnings
    from_toml = run(tmp_path, toml)
    assert [p.to_dict() | {"file": ""} for p in from_json] == [
        p.to_dict() | {"file": ""} for p in from_toml
    ]
    assert brief(from_json) == [("stream B", "subjects", 10065), ("stream G", "mirror.name", 10059)]
    # the cross-domain origins resolved: the aggregate and the mirror got external APIs
    topo = load_topology(str(jpath))
    validate_topology(topo)
    agg = topo.stream("east", "KV_AGG").config
    assert agg.sources[0].external.api == "$JS.west.API"
    assert topo.stream("east", "KV_CFG").config.mirror.external.api == "$JS.west.API"


def test_json_stream_config_and_stream_info(tmp_path):
    cfg = {"name": "ORDERS", "subjects": ["orders.>"], "max_age": 3_600_000_000_000}
    (tmp_path / "cfg.json").write_text(json.dumps(cfg))
    info = {"config": cfg | {"name": "INFO"}, "created": "2024-01-01T00:00:00Z",
            "state": {"messages": 0}, "cluster": {"leader": "n1"}, "ts": "2024-01-01T00:00:00Z"}
    (tmp_path / "info.json").write_text(json.dumps(info))
    (tmp_path / "bad.json").write_text(json.dumps({"name": "BAD", "subjects": ["x"],
                                                   "mirror": {"name": "INFO"}}))
    (tmp_path / "list.json").write_text(json.dumps([{"name": "L1"}, {"name": "L2", "foo": 1}]))
    problems = validate_files([str(tmp_path / f) for f in
                               ("cfg.json", "info.json", "bad.json", "list.json")])
    assert brief(problems) == [
        ("stream INFO", "subjects", 10065),
        ("stream BAD", "subjects", 10034),
        ("stream L2", "foo", 0),
    ]


def test_several_files_are_one_topology(tmp_path):
    (tmp_path / "clusters.toml").write_text(CLUSTERS)
    (tmp_path / "west.toml").write_text(textwrap.dedent("""
        [clusters.west]
        kind = "nats"
        [streams.ORDERS]
        cluster = "west"
        subjects = ["orders.>"]
        max_msg_size = 2048
        """))
    (tmp_path / "east.toml").write_text(textwrap.dedent("""
        [streams.ORDERS_DR]
        cluster = "east"
        mirror = { name = "ORDERS", domain = "west" }
        max_msg_size = 1024
        """))
    (tmp_path / "again.toml").write_text(textwrap.dedent("""
        [streams.ORDERS]
        cluster = "west"
        subjects = ["orders.>"]
        """))
    files = [str(tmp_path / f) for f in ("clusters.toml", "west.toml", "east.toml")]
    problems = validate_files(files)
    # the mirror in east.toml found its origin in west.toml
    assert brief(problems) == [("stream ORDERS_DR", "max_msg_size", 10030)]
    assert problems[0].file == files[2]
    problems = validate_files(files + [str(tmp_path / "again.toml")])
    assert brief(problems)[-1] == ("stream ORDERS", "name", 0)
    assert problems[-1].file == str(tmp_path / "again.toml")
    assert f"already defined by stream ORDERS in {files[1]}" in problems[-1].description


def test_parse_errors_do_not_stop_the_other_files(tmp_path):
    (tmp_path / "bad.toml").write_text('[streams.A]\nsubjects = = ["a"]\n')
    (tmp_path / "bad.json").write_text('{"name": "X",\n "subjects": [}\n')
    (tmp_path / "ok.toml").write_text('[streams.OK]\nsubjects = ["ok"]\nmax_age = "1s"\n')
    (tmp_path / "dir.toml").mkdir()
    (tmp_path / "latin1.toml").write_bytes(b"# caf\xe9\n")
    names = ["bad.toml", "bad.json", "missing.toml", "ok.toml", "dir.toml", "latin1.toml"]
    problems = validate_files([str(tmp_path / n) for n in names])
    by_file = {Path(p.file).name: p for p in problems}
    assert set(by_file) == {"bad.toml", "bad.json", "missing.toml", "dir.toml", "latin1.toml"}
    for p in problems:
        assert (p.object, p.field, p.err_code) == (None, None, 0)
    assert by_file["bad.toml"].description.startswith("invalid TOML: ")
    assert "(at line 2, column 12)" in by_file["bad.toml"].description
    assert by_file["bad.json"].description == (
        "invalid JSON: Expecting value (at line 2, column 15)"
    )
    assert by_file["missing.toml"].description == "file not found"
    assert "directory" in by_file["dir.toml"].description
    assert "UTF-8" in by_file["latin1.toml"].description


@pytest.mark.parametrize(("text", "said"), [
    ('version = 1\n[streams.A]\nsubjects = ["a.>"]\nmax_age = "1h"\nmax_age = "2h"\n',
     'invalid TOML: key "max_age" given twice in [streams.A] (at line 5, column 15): a key '
     'is set once per table'),
    ('[streams.A]\nx.y = 1\nx.y = 2\n',
     'invalid TOML: key "x.y" given twice in [streams.A] (at line 3, column 8): a key is set '
     'once per table'),
    ('version = 1\nversion = 1\n',
     'invalid TOML: key "version" given twice (at line 2, column 12): a key is set once per '
     'table'),
    # tomllib's own words where they name what is twice already
    ('[a]\nx = 1\n[a]\n', "invalid TOML: Cannot declare ('a',) twice (at line 3, column 3)"),
])
def test_a_toml_key_given_twice_is_named_with_its_table(tmp_path, text, said):
    (tmp_path / "d.toml").write_text(text)
    [problem] = validate_files([str(tmp_path / "d.toml")])
    assert problem.description == said


def test_format_sniffing_without_extension(tmp_path):
    (tmp_path / "a").write_text('{"name": "A", "subjects": ["a"]}')
    (tmp_path / "b").write_text('[streams.B]\nsubjects = ["a"]\n')
    problems = validate_files([str(tmp_path / "a"), str(tmp_path / "b")])
    assert brief(problems) == [("stream B", "subjects", 10065)]


def test_problem_to_dict_keys():
    p = Problem("f.toml", "stream A", "subjects", 10065, "x")
    assert list(p.to_dict()) == ["file", "object", "field", "err_code", "description"]
    assert p.to_dict() == {"file": "f.toml", "object": "stream A", "field": "subjects",
                           "err_code": 10065, "description": "x"}


# --------------------------------------------------------------------------- examples


def test_example_topology_is_clean():
    topo = load_topology(str(EXAMPLES / "topology.toml"))
    assert validate_topology(topo) == []
    assert set(topo.clusters) == {"west", "east", "kwest", "keast"}
    kinds = sorted((o.kind, o.cluster, o.name) for o in topo.objects)
    assert kinds == [
        ("kv", "west", "KV_CONFIG"),
        ("kv_aggregate", "east", "KV_FEATURES"),
        ("kv_mirror", "east", "KV_CONFIG_EAST"),  # the stream it is, as a bucket's
        ("link", "keast", "audit"),
        ("link", "keast", "dr"),
        ("mirror_topic", "keast", "orders"),
        ("stream", "east", "ORDERS_EAST"),
        ("stream", "west", "ARCHIVE"),
        ("stream", "west", "ORDERS"),
        ("stream", "west", "ORDER_EVENTS"),
        ("topic", "kwest", "audit.logins"),
        ("topic", "kwest", "orders"),
    ]
    orders = topo.stream("west", "ORDERS").effective
    assert (orders.max_age, orders.duplicate_window) == (30 * 86_400 * 10**9, 300 * 10**9)
    assert topo.stream("east", "ORDERS_EAST").config.mirror.external.api == "$JS.west.API"
    feats = topo.stream("east", "KV_FEATURES").config
    assert feats.sources[0].to_json() == {
        "name": "KV_CONFIG",
        "subject_transforms": [{"src": "$KV.CONFIG.features.>",
                                "dest": "$KV.FEATURES.features.>"}],
        "external": {"api": "$JS.west.API", "deliver": ""},
    }


def test_example_stream_json_is_clean_alone_and_with_the_topology():
    assert validate_files([str(EXAMPLES / "stream-orders.json")]) == []
    assert validate_files([str(EXAMPLES / "stream-orders.json"),
                           str(EXAMPLES / "topology.toml")]) == []
    topo = load_topology(str(EXAMPLES / "stream-orders.json"))
    validate_topology(topo)
    cfg = topo.stream("local", "ORDERS").config
    assert cfg == StreamConfig.from_any(json.loads((EXAMPLES / "stream-orders.json").read_text()))


def test_broken_example_has_exactly_the_expected_problems():
    path = str(EXAMPLES / "broken-topology.toml")
    topo = load_files([path])
    problems = validate_topology(topo)
    # a missing origin is a warning: the server accepts it
    assert [(w.object, w.field, w.err_code) for w in topo.warnings] == [
        ("kv_aggregate FEATURES", "origins[0].bucket", 10059)]
    assert 'origin bucket "CONFIGS" (stream KV_CONFIGS) does not exist in cluster "west"' in \
        topo.warnings[0].description
    assert [(p.object, p.field, p.err_code) for p in problems] == [
        ("stream ORDERS", "republish.dest", 10052),
        ("stream ORDER_EVENTS", "republish.dest", 10052),
        ("stream ORDERS_V2", "subjects", 10065),
        ("stream ARCHIVE", "sources[1].name", 10052),
        ("stream ORDERS_EAST", "max_msg_size", 10030),
        ("stream ARCHIVE_EAST", "sources[0].name", 10052),
        ("kv_mirror LEGACY_EAST", "origin_bucket", 0),
        ("link dr", "consumer_group_filters", 0),
        ("mirror_topic west.payments", "name", 0),
    ]
    assert all(p.file == path for p in problems)
    text = [p.description for p in problems]
    assert "ORDERS -> ORDER_EVENTS -> ORDERS" in text[0]
    assert '"orders.v2.>" overlaps "orders.>" of stream ORDERS' in text[2]
    assert "detected cycle: ARCHIVE@west -> ARCHIVE_EAST@east -> ARCHIVE@west" in text[3]
    assert 'origin bucket "LEGACY"' in text[6]
    assert text[7].startswith("Consumer offset sync is enabled but consumer.offset.group.filters")
    assert text[8] == ("Topic 'payments' does not exist on the source cluster kwest of link "
                       "'backup' (UNKNOWN_TOPIC_OR_PARTITION 3)")


def test_to_document_round_trip():
    topo = load_topology(str(EXAMPLES / "topology.toml"))
    validate_topology(topo)
    doc = topo.to_document()
    assert doc["version"] == 1
    assert doc["streams"]["ORDERS"]["max_age"] == "720h0m0s"
    assert doc["streams"]["ORDERS_EAST"]["mirror"] == {"name": "ORDERS", "domain": "west"}
    again = Topology()
    again.add_document(json.loads(json.dumps(doc)), "export.json")
    assert validate_topology(again) == []
    assert again.stream_configs() == topo.stream_configs()


# --------------------------------------------------------------------------- helpers


@pytest.mark.parametrize(
    "dest,image",
    [
        ("mon.>", "mon.>"),
        ("mon.{{wildcard(1)}}", "mon.*"),
        ("mon.$2.x", "mon.*.x"),
        ("p.{{ partition(3,1) }}.x", "p.*.x"),
        ("s.{{split(1,-)}}.x", "s.>"),
        ("s.{{SplitFromLeft(1,2)}}", "s.>"),
        ("s.{{left(1,2)}}.{{random(5)}}", "s.*.*"),
        ("$x.y", "$x.y"),
    ],
)
def test_republish_image(dest, image):
    assert republish_image(dest) == image


@pytest.mark.parametrize(
    "kind,stream_field,field",
    [
        ("kv", "max_msgs_per_subject", "history"),
        ("kv", "duplicate_window", "ttl"),
        ("kv", "subjects", "bucket"),
        ("kv_mirror", "mirror.subject_transforms[1].src", "keys[1]"),
        ("kv_mirror", "mirror.filter_subject", "keys"),
        ("kv_mirror", "mirror.name", "origin_bucket"),
        ("kv_aggregate", "sources[2].subject_transforms[0].dest", "origins[2].keys[0]"),
        ("kv_aggregate", "sources[1].name", "origins[1].bucket"),
        ("kv_aggregate", "sources[1].external.api", "origins[1].domain"),
        ("stream", "max_msgs_per_subject", "max_msgs_per_subject"),
        ("kv", None, None),
    ],
)
def test_kv_field_names(kind, stream_field, field):
    assert kv_field(kind, stream_field) == field


TOKENS = ["a", "b", "c", "*", ">"]


def random_subject(rng: random.Random) -> str:
    n = rng.randint(1, 4)
    toks = [rng.choice(TOKENS[:4]) for _ in range(n)]
    if rng.random() < 0.3:
        toks.append(">")
    return ".".join(toks)


def subject_index(stored: list[str]) -> SubjectIndex:
    """An index of ``stored``, each subject owned by its position."""
    index = SubjectIndex()
    for i, s in enumerate(stored):
        index.insert(s, i)
    return index


def overlapping(stored: list[str], q: str) -> list[tuple[str, int]]:
    """What ``query(q)`` should find, by comparing ``q`` with every stored subject."""
    return sorted((s, i) for i, s in enumerate(stored) if overlaps(q, s))


def test_subject_index_agrees_with_overlaps():
    rng = random.Random(7)
    stored = [random_subject(rng) for _ in range(300)]
    index = subject_index(stored)
    for _ in range(400):
        q = random_subject(rng)
        assert sorted(set(index.query(q))) == overlapping(stored, q), q


def test_subject_index_server_quirk_tokens():
    # tokens that only start with a wildcard character follow the server's SubjectsCollide
    stored = ["a.*x", "b.c", ">x.y", "a.b", "a.>"]
    index = subject_index(stored)
    for q in ["a.*", "*.>", "a.b", "*x.c", "b.*", ">", "a.*x", ">x.y"]:
        assert sorted(index.query(q)) == overlapping(stored, q), q


# --------------------------------------------------------------------------- benchmark


def test_bench_validate_small():
    result = bench_validate(200)
    assert set(result) == {"configs", "seconds", "configs_per_sec", "problems"}
    assert result["configs"] == 200
    assert result["seconds"] > 0
    assert result["configs_per_sec"] > 0
    assert 0 < result["problems"] < 40  # about 3% invalid, plus what they cause


def test_load_files_merges():
    topo = load_files([str(EXAMPLES / "topology.toml"), str(EXAMPLES / "stream-orders.json")])
    assert len(topo.files) == 2
    assert validate_topology(topo) == []
    assert ("local", "ORDERS") in topo.stream_configs()


def ring_problems(n: int) -> list[Problem]:
    """The problems of ``n`` streams in one ring, each sourcing the next."""
    streams = {f"R{i}": {"subjects": [f"r{i}"], "sources": [{"name": f"R{(i + 1) % n}"}]}
               for i in range(n)}
    topo = Topology()
    topo.add_document({"streams": streams}, "ring.json")
    return validate_topology(topo)


def test_big_cycles_are_reported_briefly():
    n = 320  # above the exact-path limit: every stream still gets its problem
    problems = ring_problems(n)
    assert len(problems) == n
    assert problems[0].description == (
        "detected cycle: R0 -> R1 -> ... -> R0 (320 streams in cycles; "
        "each stream sources or mirrors the next)"
    )
    assert {p.field for p in problems} == {"sources[0].name"}


def test_long_exact_cycle_path_is_elided():
    first = ring_problems(15)[0].description
    assert first.startswith("detected cycle: R0 -> R1 -> R2 -> R3 -> R4 -> R5 -> R6 -> R7 -> ... ")
    assert "R13 -> R14 -> R0 (15 streams in cycles;" in first


def test_docs_example_is_valid(tmp_path):
    text = (Path(__file__).resolve().parent.parent / "docs" / "topology.md").read_text()
    example = text.split("## Example", 1)[1].split("```toml", 1)[1].split("```", 1)[0]
    assert run(tmp_path, example) == []


def test_legacy_kv_sources_with_domain(tmp_path):
    legacy = CLUSTERS + """
        [kv.A]
        cluster = "west"
        [kv.B]
        cluster = "east"
        sources = [{ name = "A", domain = "west" }]
        """
    problems = run(tmp_path, legacy + "mirror_of_nothing = 1\n")
    assert brief(problems) == [("kv B", "mirror_of_nothing", 0)]
    problems = run(tmp_path, legacy)
    assert problems == []
    topo = load_topology(str(tmp_path / "t.toml"))
    src = topo.stream("east", "KV_B").config.sources[0]
    assert (src.name, src.external.api) == ("KV_A", "$JS.west.API")
    assert src.subject_transforms[0].to_json() == {"src": "$KV.A.>", "dest": "$KV.B.>"}


# --------------------------------------------------------------------------- server bindings


def test_cluster_server_bindings_parse_and_export(tmp_path):
    path = tmp_path / "b.toml"
    path.write_text(textwrap.dedent("""
        [clusters.west]
        server = "nats://127.0.0.1:4222,127.0.0.1:4223"
        js_domain = "west"
        creds = "~/west.creds"
        tls_ca = "/etc/ca.pem"
        tls_first = true
        timeout = "2s"
        [clusters.east]
        context = "east.prod"
        js_domain = "east"
        [clusters.kx]
        kind = "kafka"
        [streams.S]
        cluster = "east"
        mirror = { name = "O", domain = "west" }
        [streams.O]
        cluster = "west"
        subjects = ["o.>"]
        """))
    topo = load_topology(str(path))
    assert validate_topology(topo) == []
    west, east, kx = topo.clusters["west"], topo.clusters["east"], topo.clusters["kx"]
    assert west.bound and east.bound and not kx.bound
    assert west.binding == {"server": "nats://127.0.0.1:4222,127.0.0.1:4223",
                            "js_domain": "west", "creds": "~/west.creds",
                            "tls_ca": "/etc/ca.pem", "tls_first": True, "timeout": "2s"}
    doc = topo.to_document()
    assert doc["clusters"]["east"] == {"kind": "nats", "context": "east.prod",
                                       "js_domain": "east"}
    assert doc["clusters"]["west"]["server"] == "nats://127.0.0.1:4222,127.0.0.1:4223"
    again = Topology()
    again.add_document(doc, "<again>")
    assert again.to_document() == doc


@pytest.mark.parametrize(("table", "field", "text"), [
    ('server = "http://x:4222"', "server",
     "invalid server URL 'http://x:4222' ([clusters.west] server): the scheme must be"),
    ('server = "nats://x:99999"', "server", "port must be 1 to 65535"),
    ("server = 4222", "server",
     "[clusters.west] server = 4222: must be a non-empty string (one or more URLs"),
    ('server = "nats://x"\ncontext = "a b"', "context",
     "[clusters.west] context = 'a b': invalid context name"),
    ('server = "nats://x"\njs_domain = "a.b"', "js_domain",
     "[clusters.west] js_domain = 'a.b': invalid JetStream domain"),
    ('server = "nats://x"\ntls_first = "yes"', "tls_first",
     "[clusters.west] tls_first = 'yes': must be true or false"),
    ('server = "nats://x"\ntimeout = "soon"', "timeout", "invalid timeout 'soon'"),
    ('server = "nats://x"\ntimeout = 0', "timeout", "must be more than 0"),
    ('server = "nats://x"\ncreds = ""', "creds", "must be a non-empty string (a file path)"),
    ('js_domain = "west"', "js_domain",
     "[clusters.west] js_domain = 'west' without server or context"),
    ('server = "nats://x"\nport = 4222', "port", 'unknown key "port" in [clusters.west]'),
    ('server = "nats://x"\nkind = "kafka"', "kind",
     'cluster "west" is bound to a NATS server (server / context): its kind must be "nats"'),
])
def test_cluster_binding_problems(tmp_path, table, field, text):
    problems = run(tmp_path, "[clusters.west]\n" + table + "\n")
    assert [(p.object, p.field, p.err_code) for p in problems] == [("cluster west", field, 0)]
    assert text in problems[0].description, problems[0].description


def test_kafka_objects_can_not_live_in_a_bound_cluster(tmp_path):
    problems = run(tmp_path, """
        [clusters.west]
        server = "nats://127.0.0.1:4222"
        [clusters.kx]
        kind = "kafka"
        [topics.t]
        cluster = "west"
        [links.l]
        cluster = "kx"
        source_cluster = "west"
        """)
    assert brief(problems) == [("topic t", "cluster", 0), ("link l", "source_cluster", 0)]
    assert problems[0].description.startswith(
        'cluster "west" is bound to a live NATS server (server nats://127.0.0.1:4222): topics '
        "live in kafka clusters")
    assert "a cluster link copies from a kafka cluster" in problems[1].description


def test_a_cluster_declared_twice_with_another_binding(tmp_path):
    (tmp_path / "a.toml").write_text('[clusters.west]\nserver = "nats://a:4222"\n')
    (tmp_path / "b.toml").write_text('[clusters.west]\nserver = "nats://b:4222"\n')
    (tmp_path / "c.toml").write_text('[clusters.west]\nserver = "nats://a:4222"\n')
    problems = validate_files([str(tmp_path / n) for n in ("a.toml", "b.toml", "c.toml")])
    assert brief(problems) == [("cluster west", None, 0)]
    assert "different kind, description or server binding" in problems[0].description


@pytest.mark.parametrize(("text", "key"), [
    ('{"streams": {"A": {"subjects": ["a.>"]}, "A": {"subjects": ["c.>"]}}}', "A"),
    ('{"streams": {"A": {"subjects": ["a.>"], "subjects": ["c.>"]}}}', "subjects"),
])
def test_a_json_key_given_twice_is_a_problem_as_in_toml(tmp_path, text, key):
    """JSON's last value would win silently; TOML refuses a key given twice: so does a JSON
    topology file."""
    from jetlink.core.topology import load_files

    path = tmp_path / "dup.json"
    path.write_text(text)
    topo = load_files([str(path)])
    assert [p.description for p in topo.problems] == [
        f'invalid JSON: key "{key}" given twice in one object (the second would silently '
        "replace the first)"]


@pytest.mark.parametrize(("body", "field", "description", "detail"), [
    ('compression = "zstd"', "compression", "invalid JSON: unknown compression algorithm",
     'compression = "zstd"'),
    ("metadata = { a = 1 }", "metadata",
     "invalid JSON: json: cannot unmarshal object into Go struct field "
     "StreamConfigRequest.metadata of type map[string]string", 'metadata = {"a": 1}'),
])
def test_a_value_the_codec_refuses_is_quoted_as_the_file_wrote_it(tmp_path, body, field,
                                                                  description, detail):
    (problem,) = run(tmp_path, f'[streams.A]\nsubjects = ["a.>"]\n{body}\n')
    assert (problem.field, problem.err_code, problem.description, problem.detail) == (
        field, 10025, description, detail)


def test_a_cluster_of_another_type_is_one_problem(tmp_path):
    """cluster = 5 is refused as no string; it is not also looked up as a cluster "5" that
    no file declares."""
    problems = run(tmp_path, '[clusters.west]\n[streams.A]\ncluster = 5\nsubjects = ["a.>"]\n')
    assert [(p.field, p.description) for p in problems] == [
        ("cluster", "cluster must be a string (a cluster name)")]
