"""Topology files, Kafka side: topics, cluster links (configs and filters), mirror topics."""

from __future__ import annotations

import json
import textwrap
import tomllib
from pathlib import Path

import pytest
import tomli_w

from jetlink.core.topology import (
    KAFKA_KINDS,
    LinkSpec,
    MirrorTopicSpec,
    Problem,
    TopicSpec,
    Topology,
    load_files,
    load_topology,
    object_table,
    validate_files,
    validate_topology,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

KAFKA = """
[clusters.kwest]
kind = "kafka"
[clusters.keast]
kind = "kafka"
"""

FULL = KAFKA + """
[topics.orders]
cluster = "kwest"
partitions = 3
configs = { "retention.ms" = 604800000, "cleanup.policy" = "delete", "preallocate" = true }

[topics.payments]
cluster = "kwest"

[topics.audit]
cluster = "kwest"
name = "audit.logins"
configs = { "min.cleanable.dirty.ratio" = 0.25, "cleanup.policy" = " compact " }

[links.dr]
cluster = "keast"
source_cluster = "kwest"
configs = { "consumer.offset.sync.enable" = "TRUE", "consumer.offset.sync.ms" = 1000, "auto.create.mirror.topics.enable" = "false" }
consumer_group_filters = [{ name = "*", patternType = "LITERAL", filterType = "INCLUDE" },
                          { name = "tmp-", patternType = "PREFIXED", filterType = "EXCLUDE" }]

[links.prefixed]
cluster = "keast"
source_cluster = "kwest"
configs = { "cluster.link.prefix" = "west.", "auto.create.mirror.topics.enable" = true }
topic_filters = [{ name = "audit.", patternType = "prefixed" }]

[mirror_topics.orders]
cluster = "keast"
link = "dr"
source_topic = "orders"
configs = { "mirror.start.offset.spec" = "latest", "compression.type" = "zstd" }

[mirror_topics.payments]
cluster = "keast"
link = "prefixed"
name = "west.payments"
"""  # noqa: E501 - a TOML inline table (links.dr configs) stays on one line

GROUPS = ('{"groupFilters":[{"name":"*","patternType":"LITERAL","filterType":"INCLUDE"},'
          '{"name":"tmp-","patternType":"PREFIXED","filterType":"EXCLUDE"}]}')
TOPICS = '{"topicFilters":[{"name":"audit.","patternType":"PREFIXED","filterType":"INCLUDE"}]}'


def write(tmp_path: Path, text: str, name: str = "t.toml") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def load(tmp_path: Path, text: str) -> tuple[Topology, list[Problem]]:
    topo = load_topology(write(tmp_path, text))
    return topo, validate_topology(topo)


# --------------------------------------------------------------------------- a valid file


def test_full_file_is_valid_and_has_every_spec(tmp_path):
    topo, problems = load(tmp_path, FULL)
    assert [p.to_dict() for p in problems] == []
    assert topo.streams == {}
    assert list(topo.kafka) == [
        ("topic", "kwest", "orders"),
        ("topic", "kwest", "payments"),
        ("topic", "kwest", "audit.logins"),
        ("link", "keast", "dr"),
        ("link", "keast", "prefixed"),
        ("mirror_topic", "keast", "orders"),
        ("mirror_topic", "keast", "west.payments"),
    ]
    assert all(o.kind in KAFKA_KINDS and o.config is None and o.origins == []
               for o in topo.objects)
    assert [o.label for o in topo.objects][::3] == [
        "topic orders", "link dr", "mirror_topic payments"]
    kafka = {k: o.spec for k, o in topo.kafka.items()}
    assert kafka["topic", "kwest", "orders"] == TopicSpec(
        "orders", 3,
        {"cleanup.policy": "delete", "preallocate": "true", "retention.ms": "604800000"})
    assert kafka["topic", "kwest", "payments"] == TopicSpec("payments")
    assert kafka["topic", "kwest", "audit.logins"] == TopicSpec(
        "audit.logins", 1, {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.25"})
    assert kafka["link", "keast", "dr"] == LinkSpec("dr", "kwest", {
        "auto.create.mirror.topics.enable": "false",
        "consumer.offset.group.filters": GROUPS,
        "consumer.offset.sync.enable": "true",
        "consumer.offset.sync.ms": "1000",
    })
    assert kafka["link", "keast", "prefixed"] == LinkSpec("prefixed", "kwest", {
        "auto.create.mirror.topics.enable": "true",
        "auto.create.mirror.topics.filters": TOPICS,
        "cluster.link.prefix": "west.",
    })
    assert kafka["mirror_topic", "keast", "orders"] == MirrorTopicSpec(
        "orders", "dr", "orders",
        {"compression.type": "zstd", "mirror.start.offset.spec": "latest"})
    # source_topic resolved: the name without the link's prefix
    assert kafka["mirror_topic", "keast", "west.payments"] == MirrorTopicSpec(
        "west.payments", "prefixed", "payments", {})


def test_filters_are_the_json_text_of_the_cli_files(tmp_path):
    """The same link given with configs alone (the JSON text --*-filters-json-file reads)."""
    topo, problems = load(tmp_path, KAFKA + f"""
        [links.dr]
        cluster = "keast"
        source_cluster = "kwest"
        [links.dr.configs]
        "consumer.offset.sync.enable" = "true"
        "consumer.offset.sync.ms" = "1000"
        "auto.create.mirror.topics.enable" = "false"
        "consumer.offset.group.filters" = '{json.dumps(json.loads(GROUPS))}'
        """)
    assert problems == []
    spec = topo.kafka["link", "keast", "dr"].spec
    assert spec.configs["consumer.offset.group.filters"] == GROUPS
    full, _ = load(tmp_path, FULL)
    assert spec == full.kafka["link", "keast", "dr"].spec


def test_kafka_objects_beside_streams(tmp_path):
    """Streams and Kafka objects of one name live side by side; stream checks ignore Kafka
    objects; Kafka objects may live in a nats cluster (the engine does not tell kinds apart)."""
    topo, problems = load(tmp_path, """
        [clusters.west]
        [clusters.east]
        [streams.orders]
        cluster = "west"
        subjects = ["orders.>"]
        [streams.ORDERS_EAST]
        cluster = "east"
        mirror = { name = "orders", domain = "west" }
        [topics.orders]
        cluster = "west"
        [links.orders]
        cluster = "east"
        source_cluster = "west"
        [mirror_topics.orders]
        cluster = "east"
        link = "orders"
        """)
    assert problems == []
    assert set(topo.streams) == {("west", "orders"), ("east", "ORDERS_EAST")}
    assert set(topo.kafka) == {("topic", "west", "orders"), ("link", "east", "orders"),
                               ("mirror_topic", "east", "orders")}
    assert set(topo.stream_configs()) == {("west", "orders"), ("east", "ORDERS_EAST")}


def test_implicit_clusters_and_json_topology(tmp_path):
    doc = {"topics": {"orders": {"cluster": "a"}},
           "links": {"l": {"cluster": "b", "source_cluster": "a"}},
           "mirror_topics": {"orders": {"cluster": "b", "link": "l"}}}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    assert validate_files([str(path)]) == []
    topo = load_topology(str(path))
    assert set(topo.kafka) == {("topic", "a", "orders"), ("link", "b", "l"),
                               ("mirror_topic", "b", "orders")}


def test_mirror_source_resolved_from_a_link_in_another_file(tmp_path):
    links = write(tmp_path, KAFKA + """
        [topics.orders]
        cluster = "kwest"
        [links.l]
        cluster = "keast"
        source_cluster = "kwest"
        configs = { "cluster.link.prefix" = "w-" }
        """, "links.toml")
    mirrors = write(tmp_path, """
        [mirror_topics.w-orders]
        cluster = "keast"
        link = "l"
        """, "mirrors.toml")
    for files in ([links, mirrors], [mirrors, links]):
        topo = load_files(files)
        assert validate_topology(topo) == []
        assert topo.kafka["mirror_topic", "keast", "w-orders"].spec.source_topic == "orders"


# --------------------------------------------------------------------------- one problem each


def _link(extra: str = "", configs: str = "") -> str:
    return KAFKA + f"""
        [topics.orders]
        cluster = "kwest"
        [links.dr]
        cluster = "keast"
        source_cluster = "kwest"
        configs = {{ {configs} }}
        {extra}
        """


MIRROR = _link() + """
        [mirror_topics.orders]
        cluster = "keast"
        link = "dr"
        """

# (id, TOML, (object, field, text in the description))
BAD = [
    ("topic-name", KAFKA + '[topics.x]\ncluster = "kwest"\nname = "bad name"\n',
     ("topic x", "name", "Topic name is invalid: 'bad name' contains one or more characters "
                         "other than ASCII alphanumerics, '.', '_' and '-' "
                         "(INVALID_TOPIC_EXCEPTION 17)")),
    ("topic-name-dot", KAFKA + '[topics."."]\ncluster = "kwest"\n',
     ("topic .", "name", "Topic name is invalid: '.' is not allowed")),
    ("topic-partitions-0", KAFKA + '[topics.o]\ncluster = "kwest"\npartitions = 0\n',
     ("topic o", "partitions", "Number of partitions was set to an invalid non-positive "
                               "value. (INVALID_PARTITIONS 37)")),
    ("topic-partitions-many", KAFKA + '[topics.o]\ncluster = "kwest"\npartitions = 5000\n',
     ("topic o", "partitions", "Number of partitions 5000 is above jetlink's limit")),
    ("topic-partitions-type", KAFKA + '[topics.o]\ncluster = "kwest"\npartitions = "3"\n',
     ("topic o", "partitions", "partitions must be an integer (the number of partitions), "
                               'got string "3"')),
    ("topic-partitions-bool", KAFKA + '[topics.o]\ncluster = "kwest"\npartitions = true\n',
     ("topic o", "partitions", "partitions must be an integer (the number of partitions), "
                               "got boolean true")),
    ("topic-config-unknown",
     KAFKA + '[topics.o]\ncluster = "kwest"\nconfigs = { "retention.msec" = "1" }\n',
     ("topic o", "configs.retention.msec",
      "Unknown topic config name: retention.msec (INVALID_CONFIG 40)")),
    ("topic-config-choice",
     KAFKA + '[topics.o]\ncluster = "kwest"\nconfigs = { "cleanup.policy" = "remove" }\n',
     ("topic o", "configs.cleanup.policy",
      "Invalid value remove for configuration cleanup.policy: String must be one of: "
      "compact, delete (INVALID_CONFIG 40)")),
    ("topic-config-number",
     KAFKA + '[topics.o]\ncluster = "kwest"\nconfigs = { "retention.ms" = "a week" }\n',
     ("topic o", "configs.retention.ms", "Not a number of type LONG")),
    ("topic-config-minimum",
     KAFKA + '[topics.o]\ncluster = "kwest"\nconfigs = { "segment.bytes" = 10 }\n',
     ("topic o", "configs.segment.bytes", "Value must be at least 14")),
    ("topic-config-array",
     KAFKA + '[topics.o]\ncluster = "kwest"\nconfigs = { "cleanup.policy" = ["compact"] }\n',
     ("topic o", "configs.cleanup.policy", "must be a string, a number or a boolean")),
    ("topic-config-lags",
     KAFKA + '[topics.o]\ncluster = "kwest"\nconfigs = { "min.compaction.lag.ms" = 10, '
     '"max.compaction.lag.ms" = 5 }\n',
     ("topic o", "configs.min.compaction.lag.ms",
      "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)")),
    ("topic-configs-type", KAFKA + '[topics.o]\ncluster = "kwest"\nconfigs = "x=1"\n',
     ("topic o", "configs", "configs must be a table")),
    ("topic-unknown-key", KAFKA + '[topics.o]\ncluster = "kwest"\nreplicas = 3\n',
     ("topic o", "replicas", 'unknown key "replicas" in [topics.o] (allowed: cluster, name, '
                             "partitions, configs)")),
    ("topic-not-a-table", KAFKA + '[topics]\no = 3\n',
     ("topic o", None, "[topics.o] must be a table")),
    ("topic-undeclared-cluster", KAFKA + '[topics.o]\ncluster = "nowhere"\n',
     ("topic o", "cluster", 'cluster "nowhere" is not declared')),
    ("topic-duplicate",
     KAFKA + '[topics.o]\ncluster = "kwest"\n[topics.o2]\ncluster = "kwest"\nname = "o"\n',
     ("topic o2", "name", 'duplicate definition: topic "o" in cluster "kwest" is already '
                          "defined by topic o")),
    ("topic-collision",
     KAFKA + '[topics."a.b"]\ncluster = "kwest"\n[topics.a_b]\ncluster = "kwest"\n',
     ("topic a_b", "name", "Topic 'a_b' collides with existing topic: a.b "
                           "(INVALID_TOPIC_EXCEPTION 17)")),
    ("link-name", KAFKA + '[links."bad name"]\ncluster = "keast"\nsource_cluster = "kwest"\n',
     ("link bad name", "name", "Link name 'bad name' is illegal, valid characters: "
                               "[a-zA-Z0-9._-] (INVALID_CLUSTER_LINK 19000)")),
    ("link-no-source", KAFKA + '[links.dr]\ncluster = "keast"\n',
     ("link dr", "source_cluster", "source_cluster is required")),
    ("link-to-self", KAFKA + '[links.dr]\ncluster = "keast"\nsource_cluster = "keast"\n',
     ("link dr", "source_cluster", "Requested cluster ID matches local cluster ID 'keast' - "
                                   "cannot create cluster link to self (INVALID_REQUEST 42)")),
    ("link-source-undeclared",
     KAFKA + '[links.dr]\ncluster = "keast"\nsource_cluster = "nowhere"\n',
     ("link dr", "source_cluster", 'source cluster "nowhere" is not declared (declared '
                                   "clusters: keast, kwest)")),
    ("link-offset-sync-without-groups", _link(configs='"consumer.offset.sync.enable" = true'),
     ("link dr", "consumer_group_filters",
      "Consumer offset sync is enabled but consumer.offset.group.filters is not set. Please "
      "set consumer.offset.group.filters to proceed with consumer offset sync. "
      "(INVALID_CONFIG 40)")),
    ("link-auto-create-without-filters",
     _link(configs='"auto.create.mirror.topics.enable" = "true"'),
     ("link dr", "topic_filters", "Auto-create mirror topics is enabled but "
                                  "auto.create.mirror.topics.filters is not set")),
    ("link-auto-create-off-with-filters",
     _link('topic_filters = [{ name = "o", patternType = "LITERAL" }]',
           '"auto.create.mirror.topics.enable" = "false"'),
     ("link dr", "topic_filters", "auto.create.mirror.topics.enable=false clears "
                                  "auto.create.mirror.topics.filters")),
    ("link-unknown-config", _link(configs='"bootstrap.server" = "kwest:9092"'),
     ("link dr", "configs.bootstrap.server",
      "Unknown cluster link configuration 'bootstrap.server'")),
    ("link-config-typo", _link(configs='"consumer.offset.sync.msec" = "1"'),
     ("link dr", "configs.consumer.offset.sync.msec", "did you mean 'consumer.offset.sync.ms'")),
    ("link-bad-ms", _link(configs='"consumer.offset.sync.ms" = "soon"'),
     ("link dr", "configs.consumer.offset.sync.ms",
      "Invalid value soon for configuration consumer.offset.sync.ms: Not a number of type INT")),
    ("link-long-prefix", _link(configs='"cluster.link.prefix" = "a-very-long-prefix."'),
     ("link dr", "configs.cluster.link.prefix", "the prefix must be at most 12 characters")),
    ("link-filter-both-ways",
     _link('consumer_group_filters = [{ name = "*", patternType = "LITERAL" }]',
           '"consumer.offset.group.filters" = \'{"groupFilters": [{"name": "*", '
           '"patternType": "LITERAL"}]}\''),
     ("link dr", "consumer_group_filters", "consumer.offset.group.filters is given twice: by "
                                           "consumer_group_filters and by configs")),
    ("link-filter-pattern",
     _link('topic_filters = [{ name = "o", patternType = "GLOB" }]',
           '"auto.create.mirror.topics.enable" = "true"'),
     ("link dr", "topic_filters", 'topicFilters[0].patternType: unknown patternType "GLOB"')),
    ("link-filter-not-array", _link('consumer_group_filters = { name = "*" }'),
     ("link dr", "consumer_group_filters", "consumer_group_filters must be an array")),
    ("link-filter-json-in-configs",
     _link(configs='"consumer.offset.group.filters" = "[1]"'),
     ("link dr", "configs.consumer.offset.group.filters", "expected a JSON object")),
    ("link-duplicate", _link('[links.dr2]\ncluster = "keast"\nsource_cluster = "kwest"\n'
                             'name = "dr"'),
     ("link dr2", "name", 'duplicate definition: cluster link "dr" in cluster "keast"')),
    ("mirror-no-link", KAFKA + '[mirror_topics.o]\ncluster = "keast"\n',
     ("mirror_topic o", "link", "link is required")),
    ("mirror-link-undeclared", MIRROR.replace('link = "dr"', 'link = "rd"'),
     ("mirror_topic orders", "link", "Cluster link 'rd' not found: no link rd is declared in "
                                     "cluster keast (CLUSTER_LINK_NOT_FOUND 10000)")),
    ("mirror-link-in-other-cluster", MIRROR.replace(
        'cluster = "keast"\n        link', 'cluster = "kwest"\n        name = "o2"\n        link'),
     ("mirror_topic orders", "link", "(it is declared in cluster keast: a mirror topic lives "
                                     "on the destination cluster of its link")),
    ("mirror-source-undeclared", MIRROR.replace("[topics.orders]", "[topics.payments]"),
     ("mirror_topic orders", "name", "Topic 'orders' does not exist on the source cluster "
                                     "kwest of link 'dr' (UNKNOWN_TOPIC_OR_PARTITION 3)")),
    ("mirror-name-is-not-the-source", MIRROR + 'name = "o2"\nsource_topic = "orders"\n',
     ("mirror_topic orders", "name", "Mirror topic name 'o2' must be the source topic's "
                                     "name 'orders' (INVALID_REQUEST 42)")),
    ("mirror-source-topic-field", MIRROR.replace("[topics.orders]", "[topics.payments]")
     + 'source_topic = "orders"\n',
     ("mirror_topic orders", "source_topic", "Topic 'orders' does not exist on the source")),
    ("mirror-prefix", _link(configs='"cluster.link.prefix" = "w."') + """
        [mirror_topics.orders]
        cluster = "keast"
        link = "dr"
        """,
     ("mirror_topic orders", "name", "Mirror topic name 'orders' must start with the link's "
                                     "prefix 'w.' (INVALID_REQUEST 42)")),
    ("mirror-prefix-and-source", _link(configs='"cluster.link.prefix" = "w."') + """
        [mirror_topics.orders]
        cluster = "keast"
        link = "dr"
        source_topic = "orders"
        """,
     ("mirror_topic orders", "name", "Mirror topic name 'orders' must be the source topic's "
                                     "name 'orders' with the link's prefix 'w.'")),
    ("mirror-over-a-topic", MIRROR + '[topics.o2]\ncluster = "keast"\nname = "orders"\n',
     ("mirror_topic orders", "name", "Topic 'orders' already exists: a mirror topic is always "
                                     "created as a new topic")),
    ("mirror-synced-config", MIRROR + 'configs = { "retention.ms" = "1000" }\n',
     ("mirror_topic orders", "configs.retention.ms",
      "Configuration retention.ms of a mirror topic is synced from its source topic and can "
      "not be set (INVALID_CONFIG 40)")),
    ("mirror-start-spec", MIRROR + 'configs = { "mirror.start.offset.spec" = "soon" }\n',
     ("mirror_topic orders", "configs.mirror.start.offset.spec",
      "use earliest, latest or an ISO-8601 timestamp")),
    ("mirror-own-config", MIRROR + 'configs = { "compression.type" = "brotli" }\n',
     ("mirror_topic orders", "configs.compression.type", "String must be one of")),
    ("mirror-name", MIRROR + 'name = "bad/name"\n',
     ("mirror_topic orders", "name", "Topic name is invalid")),
    ("mirror-source-link-mode", _link(configs='"link.mode" = "SOURCE"') + """
        [mirror_topics.orders]
        cluster = "keast"
        link = "dr"
        """,
     ("mirror_topic orders", "link", "Cluster link 'dr' is not in DESTINATION mode: mirror "
                                     "topics are created on a link's destination cluster")),
    ("mirror-duplicate", MIRROR + '[mirror_topics.o2]\ncluster = "keast"\nlink = "dr"\n'
                                  'name = "orders"\n',
     ("mirror_topic o2", "name", 'duplicate definition: mirror topic "orders" in cluster '
                                 '"keast" is already defined by mirror_topic orders')),
    ("mirror-collides-with-topic", KAFKA + """
        [topics."my.orders"]
        cluster = "kwest"
        [topics.my_orders]
        cluster = "keast"
        [links.dr]
        cluster = "keast"
        source_cluster = "kwest"
        [mirror_topics."my.orders"]
        cluster = "keast"
        link = "dr"
        """,
     ("mirror_topic my.orders", "name", "Topic 'my.orders' collides with existing topic: "
                                        "my_orders (INVALID_TOPIC_EXCEPTION 17)")),
]


# (id, TOML, [(object, field, text in the description)]): a link or mirror topic that broke
# its own rules is still checked against the others by what passed
HIDDEN = [
    ("bad-prefix-and-undeclared-source",
     KAFKA + '[links.dr]\ncluster = "keast"\nsource_cluster = "knorth"\n'
     'configs = { "cluster.link.prefix" = "a-very-long-prefix." }\n',
     [("link dr", "configs.cluster.link.prefix", "at most 12 characters"),
      ("link dr", "source_cluster", 'source cluster "knorth" is not declared')]),
    ("mirror-exists-and-no-link",
     KAFKA + '[topics.orders]\ncluster = "keast"\n[mirror_topics.m]\ncluster = "keast"\n'
     'name = "orders"\nlink = "nolink"\n',
     [("mirror_topic m", "name", "Topic 'orders' already exists"),
      ("mirror_topic m", "link", "Cluster link 'nolink' not found")]),
    ("broken-link-hides-neither-its-source-nor-its-mirrors-collision",
     KAFKA + '[topics.orders]\ncluster = "keast"\n[links.dr]\ncluster = "keast"\n'
     'source_cluster = "knorth"\nconfigs = { "consumer.offset.sync.enable" = "true" }\n'
     '[mirror_topics.m]\ncluster = "keast"\nname = "orders"\nlink = "dr"\n',
     [("link dr", "consumer_group_filters", "consumer.offset.group.filters is not set"),
      ("link dr", "source_cluster", 'source cluster "knorth" is not declared'),
      ("mirror_topic m", "name", "Topic 'orders' already exists")]),
    ("bad-config-mirror-under-a-good-link",
     _link(configs='"cluster.link.prefix" = "w."') + '[mirror_topics.orders]\n'
     'cluster = "keast"\nlink = "dr"\nconfigs = { "retention.ms" = "1000" }\n',
     [("mirror_topic orders", "configs.retention.ms", "synced from its source topic"),
      ("mirror_topic orders", "name", "must start with the link's prefix 'w.'")]),
    ("broken-link-mirror-source-given",
     KAFKA + '[links.dr]\ncluster = "keast"\nsource_cluster = "kwest"\n'
     'configs = { "cluster.link.prefix" = "a-very-long-prefix." }\n'
     '[mirror_topics.m]\ncluster = "keast"\nname = "m"\nsource_topic = "nope"\nlink = "dr"\n',
     [("link dr", "configs.cluster.link.prefix", "at most 12 characters"),
      ("mirror_topic m", "source_topic", "Topic 'nope' does not exist on the source cluster "
                                         "kwest")]),
]


@pytest.mark.parametrize("text,expected", [row[1:] for row in HIDDEN],
                         ids=[row[0] for row in HIDDEN])
def test_one_problem_hides_no_other(tmp_path, text, expected):
    problems = validate_files([write(tmp_path, text)])
    assert [(p.object, p.field) for p in problems] == [e[:2] for e in expected], \
        [p.description for p in problems]
    for p, (_obj, _fld, words) in zip(problems, expected, strict=True):
        assert words in p.description, p.description


@pytest.mark.parametrize("text,expected", [row[1:] for row in BAD], ids=[row[0] for row in BAD])
def test_one_problem_each(tmp_path, text, expected):
    problems = validate_files([write(tmp_path, text)])
    assert [(p.object, p.field) for p in problems] == [expected[:2]], \
        [p.description for p in problems]
    assert expected[2] in problems[0].description, problems[0].description
    assert problems[0].err_code == 0


def test_brief_example_link_is_refused_by_the_engine_rule(tmp_path):
    """auto.create.mirror.topics.enable=false with topic filters: LinkConfig.build refuses it
    (false clears the filters), so validate does too."""
    problems = validate_files([write(tmp_path, _link(
        'topic_filters = [{ name = "orders", patternType = "LITERAL", filterType = "INCLUDE" }]',
        '"auto.create.mirror.topics.enable" = "false"'))])
    assert [(p.object, p.field) for p in problems] == [("link dr", "topic_filters")]


def test_several_problems_of_one_object_are_all_reported(tmp_path):
    problems = validate_files([write(tmp_path, KAFKA + """
        [topics.o]
        cluster = "kwest"
        name = ".."
        partitions = -1
        configs = { "retention.ms" = "x" }
        """)])
    assert [p.field for p in problems] == ["name", "partitions", "configs.retention.ms"]


def test_every_bad_config_of_an_object_is_reported(tmp_path):
    """Each refused config is set aside and the rest checked again, as stream fields are."""
    problems = validate_files([write(tmp_path, KAFKA + """
        [topics.o]
        cluster = "kwest"
        configs = { "retention.ms" = "x", "cleanup.policy" = "zzz", "segment.bytes" = "1" }
        """)])
    assert [p.field for p in problems] == [
        "configs.retention.ms", "configs.cleanup.policy", "configs.segment.bytes"]
    problems = validate_files([write(tmp_path, _link(
        configs='"acl.sync.ms" = "-5", "consumer.offset.sync.ms" = "x", "bogus.key" = "1"'))])
    assert [(p.object, p.field) for p in problems] == [
        ("link dr", "configs.acl.sync.ms"), ("link dr", "configs.consumer.offset.sync.ms"),
        ("link dr", "configs.bogus.key")]


def test_a_broken_link_does_not_cascade(tmp_path):
    """A mirror topic on a link that broke its own rules: only the link's problem."""
    problems = validate_files([write(tmp_path, _link(configs='"link.mode" = "NOWHERE"') + """
        [mirror_topics.orders]
        cluster = "keast"
        link = "dr"
        """)])
    assert [(p.object, p.field) for p in problems] == [("link dr", "configs.link.mode")]


def test_problems_come_after_the_stream_problems_in_file_order(tmp_path):
    problems = validate_files([write(tmp_path, """
        [mirror_topics.m]
        link = "nope"
        [topics.t]
        partitions = 0
        [streams.S]
        subjects = ["a..b"]
        """)])
    assert [p.object for p in problems] == ["stream S", "topic t", "mirror_topic m"]


# --------------------------------------------------------------------------- export


def test_to_document_round_trip(tmp_path):
    topo, _ = load(tmp_path, FULL)
    doc = topo.to_document()
    assert doc["topics"]["orders"] == {
        "cluster": "kwest", "partitions": 3,
        "configs": {"cleanup.policy": "delete", "preallocate": "true",
                    "retention.ms": "604800000"}}
    assert doc["topics"]["audit"]["name"] == "audit.logins"
    assert doc["topics"]["payments"] == {"cluster": "kwest"}
    assert doc["links"]["dr"] == {
        "cluster": "keast", "source_cluster": "kwest",
        "configs": {"auto.create.mirror.topics.enable": "false",
                    "consumer.offset.sync.enable": "true", "consumer.offset.sync.ms": "1000"},
        "consumer_group_filters": [
            {"name": "*", "patternType": "LITERAL", "filterType": "INCLUDE"},
            {"name": "tmp-", "patternType": "PREFIXED", "filterType": "EXCLUDE"}],
    }
    assert doc["links"]["prefixed"]["topic_filters"] == [
        {"name": "audit.", "patternType": "PREFIXED", "filterType": "INCLUDE"}]
    assert doc["mirror_topics"] == {
        "orders": {"cluster": "keast", "link": "dr",
                   "configs": {"compression.type": "zstd",
                               "mirror.start.offset.spec": "latest"}},
        "payments": {"cluster": "keast", "name": "west.payments", "link": "prefixed",
                     "source_topic": "payments"},
    }
    # through JSON and through TOML text, the same document again
    for again_doc in (json.loads(json.dumps(doc)), tomllib.loads(tomli_w.dumps(doc))):
        again = Topology()
        again.add_document(again_doc, "export")
        assert validate_topology(again) == []
        assert again.to_document() == doc
        assert {k: o.spec for k, o in again.kafka.items()} == \
            {k: o.spec for k, o in topo.kafka.items()}


def test_to_document_keeps_objects_of_one_key_in_two_clusters(tmp_path):
    a = write(tmp_path, KAFKA + '[topics.orders]\ncluster = "kwest"\n', "a.toml")
    b = write(tmp_path, '[topics.orders]\ncluster = "keast"\npartitions = 2\n', "b.toml")
    topo = load_files([a, b])
    assert validate_topology(topo) == []
    doc = topo.to_document()
    assert doc["topics"] == {"orders": {"cluster": "kwest"},
                             "orders@keast": {"cluster": "keast", "name": "orders",
                                              "partitions": 2}}
    again = Topology()
    again.add_document(doc)
    assert again.to_document() == doc


def test_example_round_trip_and_object_table():
    topo = load_topology(str(EXAMPLES / "topology.toml"))
    assert validate_topology(topo) == []
    doc = topo.to_document()
    again = Topology()
    again.add_document(tomllib.loads(tomli_w.dumps(doc)), "export.toml")
    assert validate_topology(again) == []
    assert again.to_document() == doc
    link = again.kafka["link", "keast", "audit"]
    assert object_table(link) == {
        "source_cluster": "kwest",
        "configs": {"auto.create.mirror.topics.enable": "true", "cluster.link.prefix": "west."},
        "topic_filters": [{"name": "audit.", "patternType": "PREFIXED", "filterType": "INCLUDE"}],
    }
    assert object_table(again.kafka["mirror_topic", "keast", "orders"]) == {
        "link": "dr", "configs": {"mirror.start.offset.spec": "earliest"}}


def test_adopt_copies_an_object_into_another_topology(tmp_path):
    topo, _ = load(tmp_path, FULL)
    state = Topology()
    state.add_document({"version": 1}, "<state>")
    for obj in topo.objects:
        state.adopt(obj)
    state.clusters.update(topo.clusters)
    assert validate_topology(state) == []
    assert list(state.kafka) == list(topo.kafka)
    assert state.kafka["mirror_topic", "keast", "west.payments"].spec.source_topic == "payments"


def test_every_problem_of_a_kv_object_is_reported(tmp_path):
    """A KV table's fields that do not decode, or break the KV rules, are each set aside and
    the rest checked again (as a stream's), not only the first."""
    problems = validate_files([write(tmp_path, """
        [kv.CFG]
        history = 100
        ttl = "abc"
        bogus = 1
        max_value_size = "x"
        """)])
    assert [(p.object, p.field) for p in problems] == [
        ("kv CFG", "ttl"), ("kv CFG", "bogus"), ("kv CFG", "max_value_size"),
        ("kv CFG", "history")]


def test_a_kv_number_past_its_stream_fields_go_type_is_a_problem_of_the_tables_field(tmp_path):
    """A KV table's numbers go through its stream's JSON decode, as the server decodes the
    request (max_value_size is max_msg_size, an int32; max_bytes an int64; ttl a
    time.Duration): each is a problem naming the table's own field, never a plan that
    stops half-way when the engine refuses the bucket."""
    problems = validate_files([write(tmp_path, """
        [kv.A]
        max_bytes = 9223372036854775808
        max_value_size = 3000000000
        ttl = 99999999999999999999
        [kv_mirrors.M]
        origin_bucket = "A"
        max_value_size = 3000000000
        [kv_aggregates.G]
        origins = [{bucket = "A"}]
        max_value_size = 3000000000
        """)])
    assert [(p.object, p.field, p.err_code) for p in problems] == [
        ("kv A", "max_bytes", 10025), ("kv A", "ttl", 10025), ("kv A", "max_value_size", 10025),
        ("kv_mirror M", "max_value_size", 10025), ("kv_aggregate G", "max_value_size", 10025)]
    assert problems[2].description.endswith(
        "cannot unmarshal number 3000000000 into Go struct field "
        "StreamConfigRequest.max_msg_size of type int32")


@pytest.mark.parametrize(("text", "fields"), [
    ('[kv.OK]\n[kv_mirrors.M]\norigin_bucket = "OK"\nkeys = ["good", "a..b", "x", ""]\n',
     ["keys[1]", "keys[3]"]),
    ('[kv.K1]\n[kv_aggregates.G]\norigins = [{bucket = "K1", keys = ["fine", "x y", ""]}]\n',
     ["origins[0].keys[1]", "origins[0].keys[2]"]),
    ('[kv.OK]\n[kv_mirrors.M]\norigin_bucket = "OK"\nkeys = ["", "", "ok", ""]\n',
     ["keys[0]", "keys[1]", "keys[3]"]),
])
def test_every_bad_item_of_a_list_is_named_by_its_index_as_written(tmp_path, text, fields):
    """Each bad item is set aside before the rest is checked again: a later one's index is
    still counted in the list as the file writes it."""
    problems = validate_files([write(tmp_path, text)])
    assert [p.field for p in problems] == fields
