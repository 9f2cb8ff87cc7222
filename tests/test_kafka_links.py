"""Cluster links (jetlink.core.kafka.links): configuration defaults and validation, filters,
the link store, states and tasks."""

from __future__ import annotations

import json

import pytest

from jetlink.core.kafka.errors import KafkaError
from jetlink.core.kafka.links import (
    LINK_CONFIG_DEFAULTS,
    LinkConfig,
    LinkFilter,
    LinkHooks,
    Links,
    filter_selects,
    group_filters,
    parse_config_pairs,
    parse_filters,
    parse_properties,
    topic_filters,
    validate_link_config,
    validate_link_name,
)

ALL = '{"groupFilters":[{"name":"*","patternType":"LITERAL","filterType":"INCLUDE"}]}'
TOPICS_ALL = '{"topicFilters":[{"name":"*","patternType":"LITERAL","filterType":"INCLUDE"}]}'


@pytest.fixture
def links(dd, clock):
    dd.add_cluster("east", "kafka")
    dd.add_cluster("west", "kafka")
    return Links(dd, "west", clock)


def refused(fn, *args, **kw) -> KafkaError:
    with pytest.raises(KafkaError) as info:
        fn(*args, **kw)
    return info.value


# -- defaults ---------------------------------------------------------------------------------

EXPECTED_DEFAULTS = [
    ("link.mode", "DESTINATION"),
    ("connection.mode", "OUTBOUND"),
    ("consumer.offset.sync.enable", "false"),
    ("consumer.offset.sync.ms", "30000"),
    ("consumer.offset.group.filters", ""),
    ("acl.sync.enable", "false"),
    ("acl.sync.ms", "5000"),
    ("acl.filters", ""),
    ("auto.create.mirror.topics.enable", "false"),
    ("auto.create.mirror.topics.filters", ""),
    ("cluster.link.prefix", ""),
    ("mirror.start.offset.spec", "earliest"),
    ("cluster.link.retry.timeout.ms", "300000"),
    ("topic.config.sync.ms", "5000"),
    ("cluster.link.paused", "false"),
]


def test_defaults_are_the_references_list():
    assert list(LINK_CONFIG_DEFAULTS.items()) == EXPECTED_DEFAULTS


@pytest.mark.parametrize(("key", "default"), EXPECTED_DEFAULTS)
def test_every_key_has_its_default_on_a_new_link(links, key, default):
    info = links.create("L", "east")
    assert info.config.get(key) == default
    assert info.configs[key] == default
    assert info.config.is_default(key)
    entry = next(e for e in info.config.entries() if e["name"] == key)
    assert entry == {
        "name": key,
        "value": default,
        "is_default": True,
        "is_read_only": key in ("cluster.link.prefix", "link.mode"),
        "is_sensitive": False,
        "source": "DEFAULT_CONFIG",
    }


def test_typed_views_of_the_defaults():
    cfg = LinkConfig()
    assert (cfg.link_mode, cfg.is_destination, cfg.paused, cfg.prefix) == (
        "DESTINATION", True, False, "")
    assert (cfg.consumer_offset_sync_enable, cfg.consumer_offset_sync_ms) == (False, 30000)
    assert (cfg.auto_create_enable, cfg.topic_filters, cfg.group_filters) == (False, [], [])
    assert (cfg.acl_sync_enable, cfg.acl_sync_ms, cfg.topic_config_sync_ms) == (False, 5000, 5000)
    assert cfg.retry_timeout_ms == 300000
    assert cfg.mirror_start_offset_spec == "earliest"
    assert cfg.warnings() == []


# -- accepted values (normalised) -------------------------------------------------------------

ACCEPTED = [
    ("consumer.offset.sync.enable", "TRUE", "true"),
    ("cluster.link.paused", " False ", "false"),
    ("acl.sync.ms", "0", "0"),
    ("consumer.offset.sync.ms", "+1500", "1500"),
    ("topic.config.sync.ms", "2147483647", "2147483647"),
    # Integer.parseInt reads any script's decimal digits, as a topic config's Long does
    ("consumer.offset.sync.ms", "\u0663\u0660", "30"),
    ("link.mode", "destination", "DESTINATION"),
    ("link.mode", "SOURCE", "SOURCE"),
    ("link.mode", "BIDIRECTIONAL", "BIDIRECTIONAL"),
    ("connection.mode", "inbound", "INBOUND"),
    ("mirror.start.offset.spec", "LATEST", "latest"),
    ("mirror.start.offset.spec", "2021-12-31T23:59:59.999Z", "2021-12-31T23:59:59.999Z"),
    ("cluster.link.prefix", "eu.", "eu."),
    ("cluster.link.prefix", "abcdefghijkl", "abcdefghijkl"),
    ("consumer.offset.group.filters",
     '{"groupFilters": [{"name": "app", "patternType": "prefixed"}]}',
     '{"groupFilters":[{"name":"app","patternType":"PREFIXED","filterType":"INCLUDE"}]}'),
    ("auto.create.mirror.topics.filters",
     '{"topicFilters":[{"name":"x","patternType":"LITERAL","filterType":"exclude"}]}',
     '{"topicFilters":[{"name":"x","patternType":"LITERAL","filterType":"EXCLUDE"}]}'),
    ("acl.filters", '{"aclFilters": []}', '{"aclFilters":[]}'),
    # the client's timing settings Confluent lists for a link: kept, whole milliseconds
    ("request.timeout.ms", " 2000 ", "2000"),
    ("metadata.max.age.ms", "5000", "5000"),
    ("retry.backoff.ms", "0", "0"),
]


@pytest.mark.parametrize(("key", "given", "stored"), ACCEPTED)
def test_accepted_values_are_normalised(key, given, stored):
    assert validate_link_config(key, given) == stored


def test_start_offset_spec_as_milliseconds():
    cfg = LinkConfig.build({"mirror.start.offset.spec": "2026-01-01T00:00:01.5Z"})
    assert cfg.mirror_start_offset_spec == 1_767_225_601_500
    naive = LinkConfig.build({"mirror.start.offset.spec": "2026-01-01T00:00:00"})
    assert naive.mirror_start_offset_spec == 1_767_225_600_000  # UTC


# -- refusals ----------------------------------------------------------------------------------

KNOWN = ", ".join(sorted(LINK_CONFIG_DEFAULTS))
REFUSED = [
    ({"foo": "1"}, "foo",
     f"Unknown cluster link configuration 'foo': known configurations: {KNOWN}"),
    ({"consumer.offset.sync.msx": "1"}, "consumer.offset.sync.msx",
     "Unknown cluster link configuration 'consumer.offset.sync.msx': did you mean "
     "'consumer.offset.sync.ms' or 'consumer.offset.sync.enable' or "
     "'consumer.offset.group.filters'?"),
    ({"cluster.link.pause": "true"}, "cluster.link.pause",
     "Unknown cluster link configuration 'cluster.link.pause': did you mean "
     "'cluster.link.paused' or 'cluster.link.prefix'?"),
    ({"bootstrap.server": "h:9092"}, "bootstrap.server",
     "Unknown cluster link configuration 'bootstrap.server': did you mean "
     "'bootstrap.servers'?"),
    ({"sasl.mechansim": "PLAIN"}, "sasl.mechansim",
     "Unknown cluster link configuration 'sasl.mechansim': did you mean 'sasl.mechanism'?"),
    ({"ssl.foo": "1"}, "ssl.foo",
     "Unknown cluster link configuration 'ssl.foo': not a Kafka client connection setting "
     "(bootstrap.servers, client.dns.lookup, security.protocol and the SASL and SSL settings, "
     "local.-prefixed for the local cluster)"),
    ({"request.timeout.ms": "2147483648"}, "request.timeout.ms",
     "Invalid value 2147483648 for configuration request.timeout.ms: Not a number of type "
     "INT"),
    ({"retry.backoff.ms": "-1"}, "retry.backoff.ms",
     "Invalid value -1 for configuration retry.backoff.ms: Value must be at least 0"),
    ({"metadata.max.age.ms": "soon"}, "metadata.max.age.ms",
     "Invalid value soon for configuration metadata.max.age.ms: Not a number of type LONG"),
    ({"security.protocol": "TLS"}, "security.protocol",
     "Invalid value TLS for configuration security.protocol: String must be one of: "
     "PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"),
    ({"sasl.jaas.config": ["u", "p"]}, "sasl.jaas.config",
     "Invalid value [hidden] for configuration sasl.jaas.config: expected a string"),
    ({"acl.sync.enable": "yes"}, "acl.sync.enable",
     "Invalid value yes for configuration acl.sync.enable: Expected value to be either true "
     "or false"),
    ({"cluster.link.paused": ""}, "cluster.link.paused",
     "Invalid value  for configuration cluster.link.paused: Expected value to be either true "
     "or false"),
    ({"consumer.offset.sync.ms": "-1"}, "consumer.offset.sync.ms",
     "Invalid value -1 for configuration consumer.offset.sync.ms: Value must be at least 0"),
    ({"acl.sync.ms": "5s"}, "acl.sync.ms",
     "Invalid value 5s for configuration acl.sync.ms: Not a number of type INT"),
    ({"topic.config.sync.ms": "1.5"}, "topic.config.sync.ms",
     "Invalid value 1.5 for configuration topic.config.sync.ms: Not a number of type INT"),
    ({"cluster.link.retry.timeout.ms": "2147483648"}, "cluster.link.retry.timeout.ms",
     "Invalid value 2147483648 for configuration cluster.link.retry.timeout.ms: Not a number "
     "of type INT"),
    ({"link.mode": "MIRROR"}, "link.mode",
     "Invalid value MIRROR for configuration link.mode: String must be one of: DESTINATION, "
     "SOURCE, BIDIRECTIONAL"),
    ({"connection.mode": "BOTH"}, "connection.mode",
     "Invalid value BOTH for configuration connection.mode: String must be one of: OUTBOUND, "
     "INBOUND"),
    ({"mirror.start.offset.spec": "yesterday"}, "mirror.start.offset.spec",
     "Invalid value yesterday for configuration mirror.start.offset.spec: use earliest, latest "
     "or an ISO-8601 timestamp such as 2021-12-31T23:59:59.999Z"),
    ({"cluster.link.prefix": "abcdefghijklm"}, "cluster.link.prefix",
     "Invalid value abcdefghijklm for configuration cluster.link.prefix: the prefix must be "
     "at most 12 characters"),
    ({"cluster.link.prefix": "eu/"}, "cluster.link.prefix",
     "Invalid value eu/ for configuration cluster.link.prefix: use only the characters of "
     "topic names: [a-zA-Z0-9._-]"),
    ({"consumer.offset.sync.enable": "true"}, "consumer.offset.group.filters",
     "Consumer offset sync is enabled but consumer.offset.group.filters is not set. Please "
     "set consumer.offset.group.filters to proceed with consumer offset sync."),
    ({"auto.create.mirror.topics.enable": "true"}, "auto.create.mirror.topics.filters",
     "Auto-create mirror topics is enabled but auto.create.mirror.topics.filters is not set. "
     "Please set auto.create.mirror.topics.filters to proceed with auto-create mirror topics."),
    ({"acl.sync.enable": "true"}, "acl.filters",
     "ACL migration is enabled but acl.filters is not set. Please set acl.filters to proceed "
     "with ACL migration."),
    ({"auto.create.mirror.topics.enable": "false",
      "auto.create.mirror.topics.filters": TOPICS_ALL}, "auto.create.mirror.topics.filters",
     "auto.create.mirror.topics.enable=false clears auto.create.mirror.topics.filters: do not "
     "set both in one request"),
    ({"acl.filters": "[]"}, "acl.filters",
     'Invalid value for configuration acl.filters: expected {"aclFilters": [...]}'),
]


@pytest.mark.parametrize(("configs", "field", "message"), REFUSED,
                         ids=[next(iter(c)) + "=" + str(next(iter(c.values())))[:20]
                              for c, _, _ in REFUSED])
def test_refused_configurations(links, configs, field, message):
    err = refused(links.create, "L", "east", configs)
    assert (err.name, err.error_code, err.field, err.description) == (
        "INVALID_CONFIG", 40, field, message)
    assert links.list() == []


G = "consumer.offset.group.filters"
T = "auto.create.mirror.topics.filters"
FILTER_ERRORS = [
    (G, "{", "not a JSON document: Expecting property name enclosed in double quotes: line 1 "
             "column 2 (char 1)"),
    (G, "[]", 'expected a JSON object {"groupFilters": [...]}'),
    (G, '{"topicFilters": []}', "topicFilters: unknown field (the document has one field, "
                               "groupFilters)"),
    (G, "{}", "groupFilters: missing"),
    (G, '{"groupFilters": {}}', "groupFilters: expected a list of filters"),
    (T, '{"topicFilters": []}', "topicFilters: must have at least one filter"),
    (T, '{"topicFilters": ["x"]}', "topicFilters[0]: expected an object with name, "
                                   "patternType and filterType"),
    (T, '{"topicFilters": [{"name": "a", "patternType": "LITERAL"}, {"patternType": '
        '"LITERAL"}]}', "topicFilters[1].name: required: a non-empty string"),
    (T, '{"topicFilters": [{"name": "a"}]}', "topicFilters[0].patternType: required: LITERAL "
                                             "or PREFIXED"),
    (T, '{"topicFilters": [{"name": "a", "patternType": "LITERAL"}, {"name": "b", '
        '"patternType": "MATCH"}]}', 'topicFilters[1].patternType: unknown patternType "MATCH": '
                                     "use LITERAL or PREFIXED"),
    (T, '{"topicFilters": [{"name": "a", "patternType": "LITERAL", "filterType": "BLOCK"}]}',
     'topicFilters[0].filterType: unknown filterType "BLOCK": use INCLUDE or EXCLUDE'),
    (G, '{"groupFilters": [{"name": "a", "patternType": "LITERAL", "type": "INCLUDE"}]}',
     "groupFilters[0].type: unknown field (fields: name, patternType, filterType)"),
]


@pytest.mark.parametrize(("key", "text", "why"), FILTER_ERRORS)
def test_malformed_filter_json_names_the_path(key, text, why):
    err = refused(parse_filters, key, text)
    assert (err.name, err.field) == ("INVALID_CONFIG", key)
    assert err.description == f"Invalid value for configuration {key}: {why}"
    # the same error through a link configuration
    assert refused(LinkConfig.build, {key: text}).description == err.description


def test_filter_defaults_and_accessors():
    (f,) = parse_filters(G, '{"groupFilters":[{"name":"app","patternType":"PREFIXED"}]}')
    assert f == LinkFilter("app", "PREFIXED", "INCLUDE")
    cfg = LinkConfig.build({"consumer.offset.sync.enable": "true", G: ALL,
                            "auto.create.mirror.topics.enable": "true", T: TOPICS_ALL})
    assert group_filters(cfg) == [LinkFilter("*", "LITERAL", "INCLUDE")]
    assert topic_filters(cfg.effective()) == [LinkFilter("*", "LITERAL", "INCLUDE")]
    assert cfg.selects_group("g1") and cfg.selects_topic("t1")
    assert topic_filters({}) == []


# -- filter matching (the reference's rules and the seed's examples) --------------------------


def flt(name, pattern="LITERAL", kind="INCLUDE"):
    return {"name": name, "patternType": pattern, "filterType": kind}


MATCHING = [
    # seed: mirror all topics
    ([flt("*")], "orders", True),
    ([flt("*")], "secret.keys", True),
    # seed: names beginning with foo
    ([flt("foo", "PREFIXED")], "foo", True),
    ([flt("foo", "PREFIXED")], "football", True),
    ([flt("foo", "PREFIXED")], "foo.fighters", True),
    ([flt("foo", "PREFIXED")], "bar", False),
    ([flt("foo", "PREFIXED")], "xfoo", False),
    # seed: everything except names beginning with secret
    ([flt("*"), flt("secret", "PREFIXED", "EXCLUDE")], "orders", True),
    ([flt("*"), flt("secret", "PREFIXED", "EXCLUDE")], "secret", False),
    ([flt("*"), flt("secret", "PREFIXED", "EXCLUDE")], "secret.keys", False),
    ([flt("*"), flt("secret", "PREFIXED", "EXCLUDE")], "my.secret", True),
    # seed: liz, jack and kenneth
    ([flt("liz"), flt("jack"), flt("kenneth")], "liz", True),
    ([flt("liz"), flt("jack"), flt("kenneth")], "jack", True),
    ([flt("liz"), flt("jack"), flt("kenneth")], "kenneth", True),
    ([flt("liz"), flt("jack"), flt("kenneth")], "lizzy", False),
    ([flt("liz"), flt("jack"), flt("kenneth")], "bob", False),
    # seed: INCLUDE prefix foo, EXCLUDE prefix foo.bar: EXCLUDE wins
    ([flt("foo", "PREFIXED"), flt("foo.bar", "PREFIXED", "EXCLUDE")], "foo.fighters", True),
    ([flt("foo", "PREFIXED"), flt("foo.bar", "PREFIXED", "EXCLUDE")], "foo.bar.fighters", False),
    ([flt("foo.bar", "PREFIXED", "EXCLUDE"), flt("foo", "PREFIXED")], "foo.bar.fighters", False),
    # LITERAL is exact; an EXCLUDE alone selects nothing; no filter selects nothing
    ([flt("foo")], "foo", True),
    ([flt("foo")], "foo.bar", False),
    ([flt("foo", kind="EXCLUDE")], "bar", False),
    ([flt("*", kind="EXCLUDE"), flt("foo")], "foo", False),
    ([flt("*"), flt("cool-topic", kind="EXCLUDE")], "cool-topic", False),
    ([], "anything", False),
    # "*" is only a wildcard as a LITERAL name
    ([flt("*", "PREFIXED")], "orders", False),
    ([flt("*", "PREFIXED")], "*star", True),
]


@pytest.mark.parametrize(("filters", "name", "selected"), MATCHING)
def test_filter_matching(filters, name, selected):
    assert filter_selects(filters, name) is selected
    assert filter_selects([LinkFilter.of(f) for f in filters], name) is selected


# -- configuration documents ------------------------------------------------------------------


def test_properties_file_format():
    text = (
        "# a comment\n"
        "! another\n"
        "\n"
        "consumer.offset.sync.enable=true\n"
        "   consumer.offset.sync.ms : 1000\n"
        'consumer.offset.group.filters={"groupFilters":[{"name":"*","patternType":"LITERAL"}]}\n'
        "cluster.link.prefix eu.\n"
        "acl.sync.ms=1\\\n"
        "    234\n"
        "key\\=with\\:seps = \\u0041\\tB\n"
        "acl.sync.ms=5000\n"
    )
    assert parse_properties(text) == {
        "consumer.offset.sync.enable": "true",
        "consumer.offset.sync.ms": "1000",
        "consumer.offset.group.filters": '{"groupFilters":[{"name":"*","patternType":"LITERAL"}]}',
        "cluster.link.prefix": "eu.",
        "acl.sync.ms": "5000",  # a later key wins
        "key=with:seps": "A\tB",
    }


def test_config_pairs():
    assert parse_config_pairs(["a=1", "b=x=y", "c="]) == {"a": "1", "b": "x=y", "c": ""}
    from jetlink.core.errors import UsageError

    for bad in ("novalue", "=1"):  # the same mistake as a topic's --config: a usage error
        with pytest.raises(UsageError) as exc:
            parse_config_pairs([bad])
        assert str(exc.value) == f"--config {bad!r}: expected KEY=VALUE"


# -- link names and creation -----------------------------------------------------------------

NAME_REFUSALS = [
    ("", "Cluster link name is empty"),
    (".", 'Link name cannot be "." or ".."'),
    ("..", 'Link name cannot be "." or ".."'),
    ("-", 'Link name cannot be "-": REST v3 paths take it for every link (GET /links/-/mirrors '
          "lists the mirrors of all links)"),
    ("x" * 201, "Link name exceeds maximum size of '200' characters"),
    ("a/b", "Link name 'a/b' is illegal, valid characters: [a-zA-Z0-9._-]"),
    ("cluster+1", "Link name 'cluster+1' is illegal, valid characters: [a-zA-Z0-9._-]"),
    ("with space", "Link name 'with space' is illegal, valid characters: [a-zA-Z0-9._-]"),
]


@pytest.mark.parametrize(("name", "message"), NAME_REFUSALS)
def test_link_name_rules(links, name, message):
    err = refused(links.create, name, "east")
    assert (err.name, err.error_code, err.description) == ("INVALID_CLUSTER_LINK", 19000, message)
    assert validate_link_name("a-Z_0.9" + "x" * 193) == "a-Z_0.9" + "x" * 193


def test_create_get_list_and_json(links, clock):
    info = links.create("L", "east", {"consumer.offset.sync.enable": "true", G: ALL})
    assert len(info.link_id) == 22
    assert (info.created_ms, info.updated_ms) == (clock.now_ns() // 10**6,) * 2
    assert links.get("L").to_json() == {
        "link_name": "L",
        "cluster_link_id": info.link_id,
        "source_cluster_id": "east",
        "destination_cluster_id": "west",
        "topic_names": [],
        "link_state": "ACTIVE",
        "link_error": "NO_ERROR",
        "link_error_message": None,
        "tasks": [
            {"task_name": "AclSync", "state": "NOT_CONFIGURED", "errors": []},
            {"task_name": "AutoCreateMirror", "state": "NOT_CONFIGURED", "errors": []},
            {"task_name": "ConsumerOffsetSync", "state": "ACTIVE", "errors": []},
            {"task_name": "TopicConfigsSync", "state": "ACTIVE", "errors": []},
        ],
    }
    doc = links.get("L").to_json(include_configs=True)
    set_ = {e["name"]: e for e in doc["configs"] if not e["is_default"]}
    assert set_ == {
        G: {"name": G, "value": ALL, "is_default": False, "is_read_only": False,
            "is_sensitive": False, "source": "DYNAMIC_CLUSTER_LINK_CONFIG"},
        "consumer.offset.sync.enable": {
            "name": "consumer.offset.sync.enable", "value": "true", "is_default": False,
            "is_read_only": False, "is_sensitive": False,
            "source": "DYNAMIC_CLUSTER_LINK_CONFIG"},
    }
    links.create("A", "east")
    assert [i.name for i in links.list()] == ["A", "L"]
    assert links.names() == ["A", "L"]
    assert links.find("nope") is None


CREATE_REFUSALS = [
    ("L", "east", "CLUSTER_LINK_EXISTS", 10001, "Cluster link 'L' already exists"),
    ("M", "west", "INVALID_REQUEST", 42,
     "Requested cluster ID matches local cluster ID 'west' - cannot create cluster link to self"),
    ("M", "north", "INVALID_CONFIG", 40,
     "Unable to validate cluster link: source cluster 'north' does not exist in the data "
     "directory (add it with jetlink cluster add)"),
]


@pytest.mark.parametrize(("name", "source", "error", "code", "message"), CREATE_REFUSALS)
def test_create_refusals(links, name, source, error, code, message):
    links.create("L", "east")
    err = refused(links.create, name, source)
    assert (err.name, err.error_code, err.description) == (error, code, message)
    assert links.names() == ["L"]


def test_create_refused_while_the_source_is_down(links, dd):
    dd.set_down("east")
    err = refused(links.create, "L", "east")
    assert (err.name, err.description) == (
        "INVALID_CONFIG",
        "Unable to validate cluster link: source cluster 'east' is unreachable (jetlink "
        "cluster up east first)")
    info = links.create("L", "east", validate_link=False)
    assert info.state == "UNAVAILABLE"


def test_validate_only_stores_nothing(links):
    info = links.create("L", "east", {"cluster.link.prefix": "e."}, validate_only=True)
    assert (info.name, info.config.prefix, info.state) == ("L", "e.", "ACTIVE")
    assert links.list() == []


def test_other_link_modes_are_accepted_with_a_warning(links):
    info = links.create("S", "east", {"link.mode": "SOURCE", "connection.mode": "INBOUND",
                                      "consumer.offset.sync.enable": "true", G: ALL})
    assert not info.is_destination
    assert info.config.warnings() == [
        "link.mode=SOURCE: jetlink implements destination links only (link.mode=DESTINATION); "
        "this link copies nothing and mirror topics cannot be created on it",
        "connection.mode=INBOUND: has no effect in jetlink (the clusters share a data "
        "directory, there is no network connection)",
    ]
    unsupported = {
        "error_code": "UNSUPPORTED_LINK_MODE",
        "error_message": "jetlink runs destination links only; this link has link.mode=SOURCE",
    }
    assert [t.to_json() for t in info.tasks] == [
        {"task_name": "AclSync", "state": "NOT_CONFIGURED", "errors": []},
        {"task_name": "AutoCreateMirror", "state": "NOT_CONFIGURED", "errors": []},
        {"task_name": "ConsumerOffsetSync", "state": "IN_ERROR", "errors": [unsupported]},
        {"task_name": "TopicConfigsSync", "state": "IN_ERROR", "errors": [unsupported]},
    ]


# -- alter ------------------------------------------------------------------------------------


def test_alter_sets_and_deletes(links, clock):
    links.create("L", "east")
    clock.advance_s(5)
    info = links.alter("L", {"consumer.offset.sync.ms": "1000", "acl.sync.ms": "7"})
    assert info.config.to_json() == {"acl.sync.ms": "7", "consumer.offset.sync.ms": "1000"}
    assert info.updated_ms == info.created_ms + 5000
    info = links.alter("L", delete=["acl.sync.ms"])
    assert info.config.to_json() == {"consumer.offset.sync.ms": "1000"}
    assert links.get("L").config.get("acl.sync.ms") == "5000"


def test_pause_and_resume(links):
    links.create("L", "east")
    assert links.alter("L", {"cluster.link.paused": "true"}).state == "PAUSED"
    assert links.state("L") == "PAUSED"
    assert [t.state for t in links.tasks("L")] == [
        "NOT_CONFIGURED", "NOT_CONFIGURED", "NOT_CONFIGURED", "LINK_PAUSED"]  # (REST's)
    assert links.resume("L").state == "ACTIVE"
    assert links.pause("L").paused


def test_prefix_is_set_only_at_creation(links):
    links.create("P", "east", {"cluster.link.prefix": "eu."})
    links.create("N", "east")
    message = ("Configuration '{}' cannot be altered: it is set when the cluster link is "
               "created (delete the link and create it again)")
    for name, change in (("P", {"cluster.link.prefix": "us."}), ("N", {"cluster.link.prefix": "x"}),
                         ("P", {"cluster.link.prefix": ""}), ("N", {"link.mode": "SOURCE"}),
                         ("P", {"link.mode": "BIDIRECTIONAL"})):
        err = refused(links.alter, name, change)
        (key,) = change
        assert (err.name, err.field, err.description) == (
            "INVALID_CONFIG", key, message.format(key))
    assert refused(links.alter, "P", delete=["cluster.link.prefix"]).description == \
        message.format("cluster.link.prefix")
    assert links.alter("P", {"cluster.link.prefix": "eu."}).config.prefix == "eu."  # unchanged
    # the mode a link has, given again or deleted back to its default: no change
    assert links.alter("N", {"link.mode": "DESTINATION"}).config.link_mode == "DESTINATION"
    assert links.alter("N", delete=["link.mode"]).config.link_mode == "DESTINATION"
    links.create("S", "east", {"link.mode": "SOURCE"})
    assert refused(links.alter, "S", delete=["link.mode"]).description == \
        message.format("link.mode")


def test_disabling_auto_create_clears_the_topic_filters(links):
    links.create("L", "east", {"auto.create.mirror.topics.enable": "true", T: TOPICS_ALL})
    info = links.alter("L", {"auto.create.mirror.topics.enable": "false"})
    assert info.config.to_json() == {"auto.create.mirror.topics.enable": "false"}
    err = refused(links.alter, "L", {"auto.create.mirror.topics.enable": "true"})
    assert err.field == T
    info = links.alter("L", {"auto.create.mirror.topics.enable": "true", T: TOPICS_ALL})
    assert info.config.topic_filters == [LinkFilter("*")]
    info = links.alter("L", delete=["auto.create.mirror.topics.enable"])
    assert info.config.to_json() == {}


ACLS_ALL = ('{"aclFilters":[{"resourceFilter":{"resourceType":"any","patternType":"any"},'
            '"accessFilter":{"operation":"any","permissionType":"any"}}]}')


@pytest.mark.parametrize(("enable", "filters", "value"), [
    ("consumer.offset.sync.enable", G, ALL), ("acl.sync.enable", "acl.filters", ACLS_ALL)])
@pytest.mark.parametrize("how", ["false", "delete"])
def test_disabling_offset_or_acl_sync_clears_its_filters(links, enable, filters, value, how):
    """Confluent Cloud ("Configure and Manage Cluster Links"): a feature with filters
    disabled after it was enabled has its filters cleared; enabling it again needs them
    again (never the old ones silently)."""
    links.create("L", "east", {enable: "true", filters: value})
    info = (links.alter("L", {enable: "false"}) if how == "false"
            else links.alter("L", delete=[enable]))
    assert info.config.to_json() == ({enable: "false"} if how == "false" else {})
    assert refused(links.alter, "L", {enable: "true"}).field == filters
    # disabling it and giving filters in one request: which wins is not guessed
    links.create("N", "east", {enable: "true", filters: value})
    err = refused(links.alter, "N", {enable: "false", filters: value})
    assert err.description == (f"{enable}=false clears {filters}: do not set both in one "
                               "request")
    assert links.get("N").config.get(enable) == "true"
    # filters given while the feature is off (never enabled) are kept: nothing to clear
    links.create("M", "east", {enable: "false", filters: value})
    assert links.get("M").config.get(filters) == value


def test_offset_sync_needs_filters_on_alter_too(links):
    links.create("L", "east", {"consumer.offset.sync.enable": "true", G: ALL})
    err = refused(links.alter, "L", delete=[G])
    assert err.field == G
    assert links.get("L").config.consumer_offset_sync_enable


ALTER_REFUSALS = [
    (lambda ls: ls.alter("nope", {"acl.sync.ms": "1"}), "CLUSTER_LINK_NOT_FOUND", 10000,
     "Cluster link 'nope' not found"),
    (lambda ls: ls.alter("L", delete=["nope"]), "INVALID_CONFIG", 40,
     f"Unknown cluster link configuration 'nope': known configurations: {KNOWN}"),
    (lambda ls: ls.get("nope"), "CLUSTER_LINK_NOT_FOUND", 10000, "Cluster link 'nope' not found"),
    (lambda ls: ls.delete("nope"), "CLUSTER_LINK_NOT_FOUND", 10000,
     "Cluster link 'nope' not found"),
    (lambda ls: ls.set_error("nope", "X", "y"), "CLUSTER_LINK_NOT_FOUND", 10000,
     "Cluster link 'nope' not found"),
]


@pytest.mark.parametrize(("call", "error", "code", "message"), ALTER_REFUSALS)
def test_refusals_on_existing_links(links, call, error, code, message):
    links.create("L", "east")
    err = refused(call, links)
    assert (err.name, err.error_code, err.description) == (error, code, message)


# -- states and tasks ---------------------------------------------------------------------------


def test_unavailable_while_the_source_is_down(links, dd):
    links.create("L", "east", {"consumer.offset.sync.enable": "true", G: ALL})
    dd.set_down("east")
    info = links.get("L")
    message = ("Source cluster 'east' is unreachable (jetlink cluster down); the link resumes "
               "after jetlink cluster up east.")
    assert (info.state, info.link_error, info.link_error_message, info.source_available) == (
        "UNAVAILABLE", "SOURCE_CLUSTER_UNAVAILABLE", message, False)
    error = [{"error_code": "SOURCE_CLUSTER_UNAVAILABLE", "error_message": message}]
    assert [t.to_json() for t in info.tasks] == [
        {"task_name": "AclSync", "state": "NOT_CONFIGURED", "errors": []},
        {"task_name": "AutoCreateMirror", "state": "NOT_CONFIGURED", "errors": []},
        {"task_name": "ConsumerOffsetSync", "state": "LINK_UNAVAILABLE", "errors": error},
        {"task_name": "TopicConfigsSync", "state": "LINK_UNAVAILABLE", "errors": error},
    ]
    links.pause("L")
    assert links.state("L") == "UNAVAILABLE"  # an outage shows through a pause
    dd.set_down("east", False)
    assert links.state("L") == "PAUSED"


def test_unavailable_when_the_source_is_missing_failed_when_recreated(links, dd):
    links.create("L", "east")
    dd.remove_cluster("east")
    info = links.get("L")
    assert (info.state, info.link_error, info.link_error_message) == (
        "UNAVAILABLE", "SOURCE_CLUSTER_NOT_FOUND",
        "Source cluster 'east' does not exist in the data directory.")
    dd.add_cluster("east", "kafka", now_ns=1)
    info = links.get("L")
    assert (info.state, info.link_error) == ("FAILED", "SOURCE_CLUSTER_ID_MISMATCH")
    assert info.link_error_message.startswith("Source cluster 'east' was removed and re-created")


def test_failed_when_an_engine_records_an_error(links):
    links.create("L", "east", {"auto.create.mirror.topics.enable": "true", T: TOPICS_ALL})
    links.set_error("L", "SOURCE_TOPIC_ACLS_REVOKED", "The link may no longer read the source.")
    info = links.get("L")
    assert (info.state, info.link_error, info.link_error_message) == (
        "FAILED", "SOURCE_TOPIC_ACLS_REVOKED", "The link may no longer read the source.")
    assert [t.state for t in info.tasks] == ["NOT_CONFIGURED", "LINK_FAILED",
                                             "NOT_CONFIGURED", "LINK_FAILED"]
    links.clear_error("L")
    assert links.state("L") == "ACTIVE"


def test_task_errors_and_schedule(links, clock):
    links.create("L", "east", {"acl.sync.enable": "true", "acl.filters": '{"aclFilters":[]}'})
    links.set_task_errors("L", "AclSync", [{"error_code": "INTERNAL_ERROR",
                                            "error_message": "Internal error."}])
    tasks = {t.task_name: t.to_json() for t in links.tasks("L")}
    assert tasks["AclSync"] == {"task_name": "AclSync", "state": "IN_ERROR", "errors": [
        {"error_code": "INTERNAL_ERROR", "error_message": "Internal error."}]}
    assert tasks["TopicConfigsSync"]["state"] == "ACTIVE"
    links.set_task_errors("L", "AclSync", [])
    assert links.tasks("L")[0].state == "ACTIVE"
    with pytest.raises(ValueError):
        links.set_task_errors("L", "Nope", [])

    now = clock.now_ns() // 10**6
    info = links.get("L")
    assert info.due("TopicConfigsSync", now)  # never ran
    links.record_run("L", "TopicConfigsSync")
    assert not links.get("L").due("TopicConfigsSync", now + 4999)
    assert links.get("L").due("TopicConfigsSync", now + 5000)
    links.record_run("L", "ConsumerOffsetSync", now)
    assert links.get("L").last_runs["ConsumerOffsetSync"] == now
    assert not links.get("L").due("ConsumerOffsetSync", now + 29_999)


# -- mirror topics and deletion ---------------------------------------------------------------


def test_delete_refused_while_mirrors_use_the_link(dd, clock, links):
    calls = []
    hooks = LinkHooks(
        mirror_topics=lambda link: ["b", "a", "stopped"],
        in_use=lambda link: ["b", "a"],
        on_force=lambda link, topics: calls.append(("force", link, topics)),
        on_delete=lambda link: calls.append(("delete", link)),
    )
    ls = Links(dd, "west", clock, hooks=hooks)
    ls.create("L", "east")
    assert ls.get("L").topic_names == ["a", "b", "stopped"]
    err = refused(ls.delete, "L")
    assert (err.name, err.error_code, err.description) == (
        "CLUSTER_LINK_IN_USE", 10002,
        "Cluster link 'L' is in use by mirror topics: a, b; delete, promote or fail them over "
        "first, or force the deletion")
    assert ls.names() == ["L"] and calls == []
    assert ls.delete("L", validate_only=True, force=True) == ["a", "b"]
    assert ls.names() == ["L"]
    assert ls.delete("L", force=True) == ["a", "b"]
    assert calls == [("force", "L", ["a", "b"]), ("delete", "L")]
    assert ls.names() == []


def test_a_failing_force_hook_keeps_the_link(dd, clock, links):
    def boom(link, topics):
        raise KafkaError("INVALID_REQUEST", "cannot fail over")

    ls = Links(dd, "west", clock, hooks=LinkHooks(in_use=lambda link: ["t"], on_force=boom))
    ls.create("L", "east")
    assert refused(ls.delete, "L", force=True).description == "cannot fail over"
    assert ls.names() == ["L"]


def test_delete_without_mirrors(links):
    links.create("L", "east")
    assert links.delete("L") == []
    assert links.names() == []
    links.create("L", "east")
    assert refused(links.delete, "L", in_use=lambda n: ["t"]).name == "CLUSTER_LINK_IN_USE"
    forced = []
    assert links.delete("L", force=True, in_use=lambda n: ["t"],
                        on_force=lambda n, ts: forced.append(ts)) == ["t"]
    assert forced == [["t"]] and links.names() == []


def test_fallback_uses_the_topics_mirror_link_column(dd, clock, links):
    west = dd.open("west")
    with west.transaction() as conn:  # the columns of component "kafka" the fallback reads
        conn.execute("CREATE TABLE topics(name TEXT PRIMARY KEY, mirror_link TEXT)")
        conn.executemany("INSERT INTO topics VALUES (?, ?)",
                         [("m2", "L"), ("m1", "L"), ("other", "K"), ("plain", None)])
    links.create("L", "east")
    assert links.get("L").topic_names == ["m1", "m2"]
    assert links.in_use("L") == ["m1", "m2"]
    assert refused(links.delete, "L").name == "CLUSTER_LINK_IN_USE"
    assert links.delete("L", force=True) == ["m1", "m2"]
    with west.read() as conn:
        assert conn.execute("SELECT name, mirror_link FROM topics ORDER BY name").fetchall() == [
            ("m1", None), ("m2", None), ("other", "K"), ("plain", None)]


def test_no_topics_table_means_no_mirror_topics(links):
    links.create("L", "east")
    assert links.get("L").topic_names == []


def test_links_of_different_clusters_are_separate(dd, clock, links):
    links.create("L", "east")
    other = Links(dd, "east", clock)
    assert other.names() == []
    other.create("L", "west")
    assert (other.get("L").source_cluster, links.get("L").source_cluster) == ("west", "east")


def test_stored_configs_are_the_explicit_ones(dd, links):
    links.create("L", "east", {"acl.sync.ms": "9", "cluster.link.prefix": ""})
    with dd.open("west").read() as conn:
        stored = conn.execute("SELECT configs FROM links WHERE name = 'L'").fetchone()[0]
    assert json.loads(stored) == {"acl.sync.ms": "9"}


# -- the filter rule compiled to SQL agrees with filter_selects ---------------------------------

import sqlite3 as _sqlite3  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from jetlink.core.kafka.links import filters_sql  # noqa: E402

_NAMES = st.text(alphabet="ab.-*", min_size=0, max_size=5)
_FILTER = st.fixed_dictionaries({
    "name": st.one_of(st.just("*"), _NAMES.filter(bool)),
    "patternType": st.sampled_from(["LITERAL", "PREFIXED"]),
    "filterType": st.sampled_from(["INCLUDE", "EXCLUDE"]),
})


@settings(max_examples=300, deadline=None)
@given(st.lists(_FILTER, max_size=4), st.lists(_NAMES, min_size=1, max_size=6))
def test_filters_sql_selects_what_filter_selects_selects(filters, names):
    conn = _sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE g (name TEXT)")
    conn.executemany("INSERT INTO g VALUES (?)", [(n,) for n in names])
    cond, args = filters_sql(filters, "name")
    got = sorted(n for (n,) in conn.execute(f"SELECT name FROM g WHERE {cond}", args))
    assert got == sorted(n for n in names if filter_selects(filters, n))


def test_a_nats_cluster_is_never_a_links_source(links, dd):
    """Its topics can never be mirrored: refused at creation, validated or not (the kind is
    known in the data directory), and a dry run too; nothing is stored."""
    dd.add_cluster("nats1", "nats")
    message = ("Unable to validate cluster link: source cluster 'nats1' is a NATS cluster: a "
               "link's source is a Kafka cluster, whose topics it mirrors (cluster add NAME "
               "--kind kafka)")
    for kw in ({}, {"validate_only": True}, {"validate_link": False}):
        err = refused(links.create, "N", "nats1", **kw)
        assert (err.name, err.field, err.description) == (
            "INVALID_CONFIG", "source_cluster", message)
    assert links.find("N", with_topics=False) is None


def test_link_and_topic_ids_are_drawn_again_when_kafka_would(links, monkeypatch):
    """Kafka's ``Uuid.randomUuid`` draws again an id whose text starts with '-' (it reads as
    an option on a command line) and the two reserved ids (zero, the metadata topic's):
    cluster link ids and topic ids alike (core/kafka/ids.py)."""
    from jetlink.core.kafka import ids

    rounds = [b"\xf8" + bytes(15), bytes(16), bytes(15) + b"\x01", b"\x01" * 16]
    draws = iter(rounds * 2)
    monkeypatch.setattr(ids.secrets, "token_bytes", lambda n: next(draws))
    assert ids.random_uuid() == "AQEBAQEBAQEBAQEBAQEBAQ"
    assert [ids.base64.urlsafe_b64encode(b).decode()[:22] for b in rounds[:3]] == [
        "-AAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAQ"]
    info = links.create("L", source_cluster="east")
    assert info.link_id == "AQEBAQEBAQEBAQEBAQEBAQ"
