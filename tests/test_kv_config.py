"""KV buckets, mirrors and aggregates as streams (ADR-8), names and keys."""

from __future__ import annotations

import pytest

from jetlink.core.config.kv import (
    KeyValueConfig,
    KVAggregateConfig,
    KVAggregateOrigin,
    KVMirrorConfig,
    aggregate_transform,
    bucket_of_stream,
    check_kv_mirror,
    kv_duplicate_window,
    validate_bucket_name,
    validate_key,
    validate_key_filter,
)
from jetlink.core.config.stream import (
    ExternalStream,
    Placement,
    RePublish,
    StreamConfig,
    StreamSource,
    SubjectTransformConfig,
)
from jetlink.core.config.validate import check_stream_config
from jetlink.core.durations import MINUTE, MS, SECOND
from jetlink.core.errors import ApiError, JetlinkError
from jetlink.core.transform import compile_transform

# --------------------------------------------------------------------------- bucket names


@pytest.mark.parametrize("name", ["CONFIG", "a", "my-bucket_1", "A-Z_09", "-", "_", "KV_x"])
def test_valid_bucket_names(name):
    assert validate_bucket_name(name) == name


@pytest.mark.parametrize(
    "name,rule",
    [
        ("", "a bucket name is required"),
        ("a.b", 'bucket names may contain only letters, digits, "_" and "-"'),
        ("a b", "may contain only"),
        ("a*", "may contain only"),
        ("a>", "may contain only"),
        ("a/b", "may contain only"),
        ("ünï", "may contain only"),
        ("a\n", "may contain only"),  # \z, not $: a trailing newline is not allowed
        ("$KV", "may contain only"),
        (None, "a bucket name is required"),
    ],
)
def test_invalid_bucket_names(name, rule):
    with pytest.raises(ApiError) as info:
        validate_bucket_name(name)
    err = info.value
    assert (err.code, err.err_code, err.field) == (400, 0, "bucket")
    assert err.description.startswith("nats: invalid bucket name")
    assert rule in err.description
    if isinstance(name, str) and name:
        assert repr(name)[1:-1] in err.description or name in err.description


def test_bucket_error_text_example():
    with pytest.raises(ApiError) as info:
        validate_bucket_name("a.b")
    assert info.value.description == (
        'nats: invalid bucket name "a.b": bucket names may contain only letters, digits, '
        '"_" and "-"'
    )


# --------------------------------------------------------------------------- keys


@pytest.mark.parametrize(
    "key",
    ["a", "a.b", "auth.username", "a/b=c", "x.-_=/", "A9", "1.2.3", "a_kv", "kv", "_KV", "x._kv"],
)
def test_valid_keys(key):
    assert validate_key(key) == key


@pytest.mark.parametrize(
    "key,rule",
    [
        ("", "a key can not be empty"),
        (".a", 'a key can not start or end with "."'),
        ("a.", 'a key can not start or end with "."'),
        (".", 'a key can not start or end with "."'),
        ("a..b", 'a key can not contain an empty token ("..")'),
        ("a b", 'keys may contain only letters, digits and "-", "/", "_", "=", "."'),
        ("a*", "keys may contain only"),
        ("a.*", "keys may contain only"),  # a key is literal; patterns are key filters
        ("a.>", "keys may contain only"),
        ("a:b", "keys may contain only"),
        ("a\n", "keys may contain only"),
        ("_kv", 'keys starting with "_kv" are reserved for internal use'),
        ("_kvx", "reserved for internal use"),
        ("_kv.a", "reserved for internal use"),
    ],
)
def test_invalid_keys(key, rule):
    with pytest.raises(ApiError) as info:
        validate_key(key)
    err = info.value
    assert (err.code, err.err_code, err.field) == (400, 0, "key")
    assert err.description.startswith("nats: invalid key")
    assert rule in err.description


def test_a_reserved_key_is_refused_for_writes_only():
    """ADR-8 reserves keys starting with _kv for internal use: a write's key is refused,
    a read's (one another client wrote: nats.go checks none) is not."""
    assert validate_key("_kvx", reserved=False) == "_kvx"
    assert validate_key_filter("_kv.>", reserved=False) == "_kv.>"
    with pytest.raises(ApiError):
        validate_key_filter("_kv.>")
    with pytest.raises(ApiError):  # the other rules stay
        validate_key("_kv..a", reserved=False)


@pytest.mark.parametrize("key", [">", "*", "a.*", "a.>", "*.b.>", "NEW.>", "a.*.c", "a/b.*"])
def test_valid_key_filters(key):
    assert validate_key_filter(key) == key


@pytest.mark.parametrize(
    "key,rule",
    [
        ("", "can not be empty"),
        ("a.>.b", '">" may only be the last token'),
        ("a*", "key filters may contain only"),
        ("a.b c", "key filters may contain only"),
        (".a", 'can not start or end with "."'),
        ("a..b", "empty token"),
        ("_kv.>", "reserved"),
    ],
)
def test_invalid_key_filters(key, rule):
    with pytest.raises(ApiError) as info:
        validate_key_filter(key, field="keys[0]")
    assert info.value.field == "keys[0]"
    assert rule in info.value.description


# --------------------------------------------------------------------------- buckets

# ADR-8 "Buckets": the full example of the CONFIGURATION bucket with compression. The
# seed writes "rollup_hdrs" (ADR-8's name); the real JSON field is "allow_rollup_hdrs".
SEED_CONFIGURATION = {
    "name": "KV_CONFIGURATION",
    "subjects": ["$KV.CONFIGURATION.>"],
    "retention": "limits",
    "max_consumers": -1,
    "max_msgs_per_subject": 5,
    "max_msgs": -1,
    "max_bytes": -1,
    "max_age": 0,
    "max_msg_size": -1,
    "storage": "file",
    "discard": "new",
    "num_replicas": 1,
    "allow_rollup_hdrs": True,
    "deny_delete": True,
    "allow_direct": True,
    "compression": "s2",
    "allow_msg_ttl": True,
    "subject_delete_marker_ttl": 900000000000,
    "placement": {"cluster": "clstr", "tags": ["tag1", "tag2"]},
    "republish": {"src": "repub.>", "dest": "dest.>", "headers_only": True},
    "metadata": {"encoding": "base64"},
}


def seed_bucket() -> KeyValueConfig:
    return KeyValueConfig(
        bucket="CONFIGURATION",
        history=5,
        compression=True,
        limit_marker_ttl=15 * MINUTE,
        placement=Placement(cluster="clstr", tags=["tag1", "tag2"]),
        republish=RePublish(src="repub.>", dest="dest.>", headers_only=True),
        metadata={"encoding": "base64"},
    )


@pytest.mark.parametrize("field", sorted(SEED_CONFIGURATION))
def test_seed_configuration_example_field_by_field(field):
    doc = seed_bucket().to_stream_config().to_json()
    assert doc[field] == SEED_CONFIGURATION[field]


def test_seed_configuration_example_whole_document():
    doc = seed_bucket().to_stream_config().to_json()
    # Everything else is at its zero value: no TTL means no duplicate window (the server
    # fills in 2m), no mirror, no sources, purge allowed.
    extra = {k: v for k, v in doc.items() if k not in SEED_CONFIGURATION}
    assert extra == {
        "mirror_direct": False,
        "sealed": False,
        "deny_purge": False,
        "consumer_limits": {},
    }
    assert "duplicate_window" not in doc


def test_seed_configuration_passes_the_server_checks():
    cfg = check_stream_config(seed_bucket().to_stream_config())
    assert cfg.duplicate_window == 2 * MINUTE  # the server's default when unset
    assert cfg.max_msgs_per_subject == 5


def test_bucket_defaults():
    cfg = KeyValueConfig(bucket="B").to_stream_config()
    assert cfg.name == "KV_B"
    assert cfg.subjects == ["$KV.B.>"]
    assert cfg.max_msgs_per_subject == 1
    assert (cfg.discard, cfg.allow_rollup_hdrs, cfg.deny_delete, cfg.allow_direct) == (
        "new", True, True, True
    )
    assert (cfg.max_bytes, cfg.max_msg_size, cfg.max_msgs, cfg.max_consumers) == (-1, -1, -1, -1)
    assert (cfg.num_replicas, cfg.storage, cfg.compression) == (1, "file", "none")
    assert (cfg.allow_msg_ttl, cfg.subject_delete_marker_ttl) == (False, 0)
    assert cfg.max_age == 0 and cfg.duplicate_window == 0


def test_bucket_sizes_storage_replicas():
    cfg = KeyValueConfig(
        bucket="B", max_value_size=1024, max_bytes=1 << 20, storage="memory", replicas=3,
        description="d",
    ).to_stream_config()
    assert (cfg.max_msg_size, cfg.max_bytes, cfg.storage, cfg.num_replicas) == (
        1024, 1 << 20, "memory", 3
    )
    assert cfg.description == "d"


@pytest.mark.parametrize(
    "ttl,window",
    [
        (0, 0),  # no TTL: unset, the server uses 2m
        (100 * MS, 100 * MS),
        (SECOND, SECOND),
        (90 * SECOND, 90 * SECOND),
        (2 * MINUTE, 2 * MINUTE),  # "less than or equal to 2 minutes": the TTL
        (2 * MINUTE + 1, 2 * MINUTE),  # "greater than 2 minutes": 2 minutes
        (60 * MINUTE, 2 * MINUTE),
        (24 * 60 * MINUTE, 2 * MINUTE),
    ],
)
def test_ttl_and_duplicate_window(ttl, window):
    assert kv_duplicate_window(ttl) == window
    cfg = KeyValueConfig(bucket="B", ttl=ttl).to_stream_config()
    assert cfg.max_age == ttl
    assert cfg.duplicate_window == window
    checked = check_stream_config(cfg)
    assert checked.duplicate_window == (window or 2 * MINUTE)


def test_ttl_below_server_minimum_is_the_servers_error():
    cfg = KeyValueConfig(bucket="B", ttl=50 * MS).to_stream_config()
    with pytest.raises(ApiError) as info:
        check_stream_config(cfg)
    assert info.value.description == "max age needs to be >= 100ms"


@pytest.mark.parametrize(
    "marker_ttl,allow,stored,error",
    [
        (0, False, 0, None),
        (SECOND, True, SECOND, None),
        (15 * MINUTE, True, 15 * MINUTE, None),
        (999 * MS, None, None, "subject delete marker TTL must be at least 1 second"),
        (1, None, None, "subject delete marker TTL must be at least 1 second"),
        (-SECOND, None, None, "subject delete marker TTL must not be negative"),
    ],
)
def test_limit_markers(marker_ttl, allow, stored, error):
    kv = KeyValueConfig(bucket="B", limit_marker_ttl=marker_ttl)
    if error:
        with pytest.raises(ApiError) as info:
            kv.to_stream_config()
        assert (info.value.err_code, info.value.field) == (10052, "limit_marker_ttl")
        assert info.value.description == error
        return
    cfg = kv.to_stream_config()
    assert (cfg.allow_msg_ttl, cfg.subject_delete_marker_ttl) == (allow, stored)
    check_stream_config(cfg)  # the server accepts it as is


@pytest.mark.parametrize("history,stored", [(0, 1), (1, 1), (5, 5), (64, 64)])
def test_history(history, stored):
    assert (KeyValueConfig(bucket="B", history=history).to_stream_config().max_msgs_per_subject
            == stored)


@pytest.mark.parametrize(
    "history,text",
    [
        (65, "nats: history limited to a max of 64: history 65 for bucket \"B\" is out of range"),
        (1000, "nats: history limited to a max of 64"),
        (-1, "nats: invalid history -1 for bucket \"B\""),
        ("5", "nats: invalid history '5'"),
    ],
)
def test_history_errors(history, text):
    with pytest.raises(ApiError) as info:
        KeyValueConfig(bucket="B", history=history).to_stream_config()
    assert info.value.field == "history" and info.value.err_code == 0
    assert info.value.description.startswith(text)
    assert "1..64" in info.value.description


def test_invalid_bucket_refused_by_to_stream_config():
    with pytest.raises(ApiError) as info:
        KeyValueConfig(bucket="a.b").to_stream_config()
    assert info.value.field == "bucket"


def test_legacy_mirror_and_sources_like_nats_go():
    m = KeyValueConfig(bucket="B", mirror=StreamSource(name="ORIGIN")).to_stream_config()
    assert m.mirror.name == "KV_ORIGIN" and m.mirror_direct and m.subjects == []
    m2 = KeyValueConfig(bucket="B", mirror=StreamSource(name="KV_ORIGIN")).to_stream_config()
    assert m2.mirror.name == "KV_ORIGIN"
    s = KeyValueConfig(
        bucket="B",
        sources=[
            StreamSource(name="A"),
            StreamSource(name="KV_C"),
            # same bucket name in another domain: no transform needed (nats.go)
            StreamSource(name="B", external=ExternalStream(api="$JS.hub.API")),
            # transforms given: used as is
            StreamSource(name="RAW", subject_transforms=[
                SubjectTransformConfig(src="x.>", dest="$KV.B.x.>")]),
        ],
    ).to_stream_config()
    assert s.subjects == ["$KV.B.>"]
    assert [src.to_json() for src in s.sources] == [
        {"name": "KV_A", "subject_transforms": [{"src": "$KV.A.>", "dest": "$KV.B.>"}]},
        {"name": "KV_C", "subject_transforms": [{"src": "$KV.C.>", "dest": "$KV.B.>"}]},
        {"name": "KV_B", "external": {"api": "$JS.hub.API", "deliver": ""}},
        {"name": "RAW", "subject_transforms": [{"src": "x.>", "dest": "$KV.B.x.>"}]},
    ]


@pytest.mark.parametrize(
    "kv",
    [
        KeyValueConfig(bucket="B"),
        seed_bucket(),
        KeyValueConfig(bucket="T", ttl=90 * SECOND, history=64, max_value_size=10, max_bytes=99,
                       storage="memory", replicas=3, description="x"),
        KeyValueConfig(bucket="M", mirror=StreamSource(name="KV_O")),
    ],
)
def test_read_bucket_back_from_stream(kv):
    cfg = kv.to_stream_config()
    back = KeyValueConfig.from_stream_config(cfg)
    assert back.bucket == kv.bucket
    assert back.to_stream_config() == cfg
    # and from what the server stores (defaults filled in)
    assert (KeyValueConfig.from_stream_config(check_stream_config(cfg)).history
            == cfg.max_msgs_per_subject)


def test_read_back_refuses_non_bucket_stream():
    with pytest.raises(ApiError) as info:
        KeyValueConfig.from_stream_config(StreamConfig(name="ORDERS"))
    assert "is not a KV bucket" in info.value.description
    assert bucket_of_stream("ORDERS") is None and bucket_of_stream("KV_") is None
    assert bucket_of_stream("KV_X") == "X"


def test_from_dict_durations_and_unknown_keys():
    kv = KeyValueConfig.from_dict(
        {"history": 3, "ttl": "1h", "limit_marker_ttl": "15m", "placement": {"cluster": "c"}},
        bucket="B",
    )
    assert (kv.bucket, kv.ttl, kv.limit_marker_ttl, kv.placement.cluster) == (
        "B", 60 * MINUTE, 15 * MINUTE, "c"
    )
    with pytest.raises(JetlinkError) as info:
        KeyValueConfig.from_dict({"histroy": 3}, bucket="B")
    assert info.value.field == "histroy" and 'unknown key "histroy"' in info.value.description
    with pytest.raises(JetlinkError) as info:
        KeyValueConfig.from_dict({"placement": {"cluster": "c", "zone": "z"}}, bucket="B")
    assert info.value.field == "placement.zone"
    with pytest.raises(JetlinkError) as info:
        KeyValueConfig.from_dict({"ttl": "forever"}, bucket="B")
    assert info.value.field == "ttl" and "invalid duration" in info.value.description
    with pytest.raises(JetlinkError) as info:
        KeyValueConfig.from_dict({"history": "5"}, bucket="B")
    assert info.value.field == "history" and "expected an integer" in info.value.description


# --------------------------------------------------------------------------- mirrors


def test_kv_mirror_mapping():
    m = KVMirrorConfig(name="MIRROR_ORDERS_NYC", origin_bucket="ORDERS", history=5, ttl=SECOND,
                       replicas=3, max_bytes=100, storage="memory", description="nyc",
                       placement=Placement(cluster="nyc"))
    cfg = m.to_stream_config()
    assert cfg.name == "KV_MIRROR_ORDERS_NYC"  # nats.go prepareKeyValueConfig: KV_<mirror bucket>
    assert cfg.subjects == []
    assert cfg.mirror.to_json() == {"name": "KV_ORDERS"}
    # every bucket setting, as nats.go's prepareKeyValueConfig builds a mirror bucket
    assert (cfg.mirror_direct, cfg.deny_delete, cfg.deny_purge) == (True, True, False)
    assert (cfg.allow_rollup_hdrs, cfg.allow_direct, cfg.discard) == (True, True, "new")
    assert cfg.duplicate_window == SECOND  # the TTL, shorter than 2m
    assert (cfg.max_msgs_per_subject, cfg.max_age, cfg.num_replicas, cfg.max_bytes) == (
        5, SECOND, 3, 100)
    assert (cfg.storage, cfg.description, cfg.placement.cluster) == ("memory", "nyc", "nyc")
    origin = KeyValueConfig(bucket="ORDERS").to_stream_config()
    checked = check_stream_config(cfg, {"KV_ORDERS": origin}.get)
    assert checked.mirror_direct is True
    assert checked.duplicate_window == SECOND  # kept as sent (no default for a mirror)


@pytest.mark.parametrize(
    "keys,mirror",
    [
        ([], {"name": "KV_O"}),
        ([">"], {"name": "KV_O"}),
        (["NEW.>"], {"name": "KV_O", "filter_subject": "$KV.O.NEW.>"}),
        (["a.b"], {"name": "KV_O", "filter_subject": "$KV.O.a.b"}),
        (
            ["NEW.>", "eu.*.x"],
            {"name": "KV_O", "subject_transforms": [
                {"src": "$KV.O.NEW.>", "dest": ""}, {"src": "$KV.O.eu.*.x", "dest": ""}]},
        ),
    ],
)
def test_kv_mirror_keys(keys, mirror):
    cfg = KVMirrorConfig(name="M", origin_bucket="O", keys=keys).to_stream_config()
    assert cfg.mirror.to_json() == mirror
    assert cfg.max_msgs_per_subject == 1  # history unset: nats.go's default, 1
    assert cfg.duplicate_window == 2 * MINUTE  # nats.go sends 2m when there is no TTL
    check_stream_config(cfg)


def test_kv_mirror_overlapping_keys_are_the_servers_error():
    cfg = KVMirrorConfig(name="M", origin_bucket="O", keys=["a.>", "a.b"]).to_stream_config()
    with pytest.raises(ApiError) as info:
        check_stream_config(cfg)
    assert info.value.err_code == 10152


def test_kv_mirror_domain_and_external():
    cfg = KVMirrorConfig(name="M", origin_bucket="O", domain="hub").to_stream_config()
    assert cfg.mirror.external.api == "$JS.hub.API"
    ext = ExternalStream(api="$JS.leaf.API", deliver="dlv")
    cfg = KVMirrorConfig(name="M", origin_bucket="O", external=ext).to_stream_config()
    assert cfg.mirror.external.to_json() == {"api": "$JS.leaf.API", "deliver": "dlv"}


@pytest.mark.parametrize(
    "kwargs,field",
    [
        ({"origin_bucket": "a.b"}, "origin_bucket"),
        ({"origin_bucket": "O", "keys": ["ok", "bad key"]}, "keys[1]"),
        ({"origin_bucket": "O", "history": 65}, "history"),
        ({"origin_bucket": "O", "name": ""}, "name"),
    ],
)
def test_kv_mirror_errors(kwargs, field):
    args = {"name": "M", **kwargs}
    with pytest.raises(ApiError) as info:
        KVMirrorConfig(**args).to_stream_config()
    assert info.value.field == field


def test_check_kv_mirror_refuses_origin_without_allow_direct():
    m = KVMirrorConfig(name="MIRROR_ORDERS_NYC", origin_bucket="ORDERS")
    legacy = KeyValueConfig(bucket="ORDERS", allow_direct=False).to_stream_config()
    with pytest.raises(ApiError) as info:
        check_kv_mirror(m, legacy)
    err = info.value
    assert (err.field, err.err_code, err.code) == ("origin_bucket", 0, 400)
    assert 'origin bucket "ORDERS"' in err.description
    assert "does not have allow_direct set" in err.description
    # with allow_direct, or with the origin unknown, the mirror's config comes back
    good = KeyValueConfig(bucket="ORDERS").to_stream_config()
    assert check_kv_mirror(m, good) == m.to_stream_config()
    assert check_kv_mirror(m, None) == m.to_stream_config()


# --------------------------------------------------------------------------- aggregates

# ADR-8 "Creation of Aggregates": NEW_ORDERS copies keys NEW.> of ORDERS, read-only.
SEED_NEW_ORDERS_SOURCES = [
    {
        "name": "KV_ORDERS",
        # the seed writes "dest": "$KV.NEW_ORDERS.>" (keys renamed: NEW.1 -> 1); jetlink keeps
        # the keys, as nats.go's KV sources do
        "subject_transforms": [{"src": "$KV.ORDERS.NEW.>", "dest": "$KV.NEW_ORDERS.NEW.>"}],
    }
]


def seed_aggregate() -> KVAggregateConfig:
    return KVAggregateConfig(
        bucket="NEW_ORDERS",
        writable=False,
        origins=[KVAggregateOrigin(stream="KV_ORDERS", keys=["NEW.>"])],
    )


def test_seed_new_orders_aggregate_exactly():
    cfg = seed_aggregate().to_stream_config()
    doc = cfg.to_json()
    assert cfg.subjects == [] and "subjects" not in doc
    assert doc["deny_delete"] is True
    assert doc["deny_purge"] is True
    assert doc["sources"] == SEED_NEW_ORDERS_SOURCES
    # "rest as per any other KV"
    assert doc["name"] == "KV_NEW_ORDERS"
    assert (doc["max_msgs_per_subject"], doc["discard"], doc["allow_direct"]) == (1, "new", True)
    # deny_purge forbids roll-ups on the server ("roll-ups require the purge permission")
    assert doc["allow_rollup_hdrs"] is False
    check_stream_config(cfg)


def test_seed_new_orders_keeps_keys():
    """A filter selects keys, never renames them (nats.go keeps keys too): the
    seed's example would store NEW.123 as 123, jetlink stores NEW.123."""
    tr = seed_aggregate().to_stream_config().sources[0].subject_transforms[0]
    t = compile_transform(tr.src, tr.dest)
    assert t.apply("$KV.ORDERS.NEW.123") == "$KV.NEW_ORDERS.NEW.123"
    assert t.apply("$KV.ORDERS.NEW.eu.7") == "$KV.NEW_ORDERS.NEW.eu.7"
    assert t.apply("$KV.ORDERS.OLD.1") is None


@pytest.mark.parametrize(
    "key,src,dest,example",
    [
        (">", "$KV.O.>", "$KV.A.>", ("$KV.O.x.y", "$KV.A.x.y")),
        ("NEW.>", "$KV.O.NEW.>", "$KV.A.NEW.>", ("$KV.O.NEW.1", "$KV.A.NEW.1")),
        ("NEW.eu.>", "$KV.O.NEW.eu.>", "$KV.A.NEW.eu.>", ("$KV.O.NEW.eu.1.2", "$KV.A.NEW.eu.1.2")),
        ("NEW.*", "$KV.O.NEW.*", "$KV.A.NEW.{{wildcard(1)}}", ("$KV.O.NEW.9", "$KV.A.NEW.9")),
        ("*.x.>", "$KV.O.*.x.>", "$KV.A.{{wildcard(1)}}.x.>", ("$KV.O.a.x.b", "$KV.A.a.x.b")),
        ("app.>", "$KV.O.app.>", "$KV.A.app.>", ("$KV.O.app.other", "$KV.A.app.other")),
        (
            "NEW.*.items.*",
            "$KV.O.NEW.*.items.*",
            "$KV.A.NEW.{{wildcard(1)}}.items.{{wildcard(2)}}",
            ("$KV.O.NEW.7.items.3", "$KV.A.NEW.7.items.3"),
        ),
        ("NEW.1", "$KV.O.NEW.1", "$KV.A.NEW.1", ("$KV.O.NEW.1", "$KV.A.NEW.1")),
        ("cfg", "$KV.O.cfg", "$KV.A.cfg", ("$KV.O.cfg", "$KV.A.cfg")),
    ],
)
def test_aggregate_key_mapping_rule(key, src, dest, example):
    tr = aggregate_transform("O", key, "A")
    assert (tr.src, tr.dest) == (src, dest)
    subject, mapped = example
    assert compile_transform(tr.src, tr.dest).apply(subject) == mapped


def test_aggregate_several_origins_and_keys():
    agg = KVAggregateConfig(
        bucket="ALL",
        history=3,
        ttl=MINUTE,
        origins=[
            KVAggregateOrigin(bucket="A", keys=["x.>", "y.*"]),
            KVAggregateOrigin(stream="MIRROR_OF_B", bucket="B", domain="east"),
            KVAggregateOrigin(stream="KV_C", external=ExternalStream(api="$JS.far.API")),
        ],
    )
    cfg = agg.to_stream_config()
    assert [s.to_json() for s in cfg.sources] == [
        {"name": "KV_A", "subject_transforms": [
            {"src": "$KV.A.x.>", "dest": "$KV.ALL.x.>"},
            {"src": "$KV.A.y.*", "dest": "$KV.ALL.y.{{wildcard(1)}}"}]},
        {"name": "MIRROR_OF_B", "subject_transforms": [{"src": "$KV.B.>", "dest": "$KV.ALL.>"}],
         "external": {"api": "$JS.east.API", "deliver": ""}},
        {"name": "KV_C", "subject_transforms": [{"src": "$KV.C.>", "dest": "$KV.ALL.>"}],
         "external": {"api": "$JS.far.API", "deliver": ""}},
    ]
    assert (cfg.max_msgs_per_subject, cfg.max_age, cfg.duplicate_window) == (3, MINUTE, MINUTE)
    check_stream_config(cfg)


def test_writable_aggregate_is_a_normal_bucket_with_sources():
    agg = seed_aggregate()
    agg.writable = True
    cfg = agg.to_stream_config()
    assert cfg.subjects == ["$KV.NEW_ORDERS.>"]
    assert (cfg.deny_delete, cfg.deny_purge, cfg.allow_rollup_hdrs) == (True, False, True)
    assert cfg.to_json()["sources"] == SEED_NEW_ORDERS_SOURCES
    check_stream_config(cfg)


@pytest.mark.parametrize(
    "origins,field,text",
    [
        ([], "origins", "has no origins"),
        ([KVAggregateOrigin()], "origins[0].bucket", "needs a bucket"),
        ([KVAggregateOrigin(stream="MIRROR")], "origins[0].bucket", "give the origin's bucket"),
        ([KVAggregateOrigin(bucket="a.b")], "origins[0].bucket", "invalid bucket name"),
        ([KVAggregateOrigin(bucket="A", keys=["a..b"])], "origins[0].keys[0]", "empty token"),
    ],
)
def test_aggregate_errors(origins, field, text):
    with pytest.raises(ApiError) as info:
        KVAggregateConfig(bucket="AGG", origins=origins).to_stream_config()
    assert info.value.field == field
    assert text in info.value.description


def test_aggregate_from_dict():
    agg = KVAggregateConfig.from_dict(
        {"writable": True, "ttl": "10m", "origins": [{"bucket": "A", "keys": ["x.>"]}]},
        bucket="AGG",
    )
    assert agg.origins == [KVAggregateOrigin(bucket="A", keys=["x.>"])]
    assert agg.ttl == 10 * MINUTE and agg.writable
    with pytest.raises(JetlinkError) as info:
        KVAggregateConfig.from_dict({"origins": [{"bucket": "A", "key": ["x"]}]}, bucket="AGG")
    assert info.value.field == "origins[0].key"


@pytest.mark.parametrize(
    ("ttl", "window"),
    [(0, 2 * MINUTE), (30 * SECOND, 30 * SECOND), (10 * MINUTE, 2 * MINUTE)],
)
def test_buckets_that_copy_send_the_window_nats_go_sends(ttl, window):
    """nats.go's prepareKeyValueConfig sends 2m (or the shorter TTL) for every bucket; the
    server's checkStreamCfg fills in the 2m default only for a stream without a mirror or
    sources, so a mirror, a sourced bucket and an aggregate carry the window themselves."""
    sourced = KeyValueConfig(bucket="B", ttl=ttl, sources=[StreamSource(name="A")])
    mirror = KVMirrorConfig(name="M", origin_bucket="A", ttl=ttl)
    aggregate = KVAggregateConfig(bucket="G", ttl=ttl, origins=[KVAggregateOrigin(bucket="A")])
    plain = KeyValueConfig(bucket="P", ttl=ttl)
    assert sourced.to_stream_config().duplicate_window == window
    assert mirror.to_stream_config().duplicate_window == window
    assert aggregate.to_stream_config().duplicate_window == window
    assert plain.to_stream_config().duplicate_window == kv_duplicate_window(ttl)


@pytest.mark.parametrize(("key", "quoted"), [
    ("a\x1b[31mRED", '"a\\x1b[31mRED"'),
    ("a\x01b", '"a\\x01b"'),
    ('say "hi"', '"say \\"hi\\""'),
    ("k\udcff", '"k\\xff"'),  # a byte that is not UTF-8: Go's %q shows the byte
])
def test_a_refused_key_is_quoted_as_go_quotes_it(key, quoted):
    """A control character in a refused key is escaped (%q), never written raw to the
    operator's terminal."""
    from jetlink.core.config.kvnames import validate_key
    from jetlink.core.errors import ApiError

    with pytest.raises(ApiError) as err:
        validate_key(key)
    assert err.value.description.startswith(f"nats: invalid key {quoted}: ")
