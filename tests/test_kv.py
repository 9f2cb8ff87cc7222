"""The KV engine (core/kv.py): ADR-8's operations, topologies and watchers."""

from __future__ import annotations

import pytest

from jetlink.core.config.kv import (
    KeyValueConfig,
    KVAggregateConfig,
    KVAggregateOrigin,
    KVMirrorConfig,
)
from jetlink.core.errors import ApiError, JetlinkError
from jetlink.core.headers import encode_headers
from jetlink.core.kv import (
    DEL,
    END_OF_INITIAL_DATA,
    KV,
    PURGE,
    PUT,
    ReadOnlyBucketError,
    operation_of,
)
from jetlink.core.replication import pump_until_idle

SECOND = 1_000_000_000


@pytest.fixture
def kv(dd, clock):
    return KV(dd, "local", clock)


@pytest.fixture
def bucket(kv):
    kv.create_bucket(KeyValueConfig(bucket="CFG", history=3))
    return kv.open("CFG")


def ops(entries):
    return [(e.key, e.revision, e.operation, e.delta, e.value) for e in entries]


# -- operations ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers, op",
    [
        (None, PUT),
        ({"KV-Operation": "DEL"}, DEL),
        ({"KV-Operation": "PURGE"}, PURGE),
        ({"Nats-Marker-Reason": "MaxAge"}, PURGE),
        ({"Nats-Marker-Reason": "Purge"}, PURGE),
        ({"Nats-Marker-Reason": "Remove"}, DEL),
        ({"Other": "x"}, PUT),
    ],
)
def test_operation_of_headers(headers, op):
    assert operation_of(encode_headers(headers)) == op


def test_put_get_and_revisions(bucket):
    assert [bucket.put("a", b"1"), bucket.put("b", b"2"), bucket.put("a", b"3")] == [1, 2, 3]
    e = bucket.get("a")
    assert (e.bucket, e.key, e.value, e.revision, e.delta, e.operation) == (
        "CFG", "a", b"3", 3, 0, PUT)
    assert e.served_by == "KV_CFG"
    assert bucket.get("a", revision=1).value == b"1"
    doc = e.to_json()
    assert list(doc) == ["bucket", "key", "value", "revision", "created", "delta", "operation"]
    assert doc["value"] == "Mw==" and doc["created"].endswith("Z")


@pytest.mark.parametrize("revision", [2, 99])  # another key's revision, a missing one
def test_get_revision_of_another_key_is_not_found(bucket, revision):
    bucket.put("a", b"1")
    bucket.put("b", b"2")
    with pytest.raises(ApiError) as err:
        bucket.get("a", revision=revision)
    assert (err.value.code, err.value.err_code, err.value.description) == (
        404, 10037, "key not found")


def test_history_is_capped_and_has_deltas(bucket):
    for v in b"12345":
        bucket.put("k", bytes([v]))
    assert ops(bucket.history("k")) == [
        ("k", 3, PUT, 2, b"3"), ("k", 4, PUT, 1, b"4"), ("k", 5, PUT, 0, b"5")]


def test_delete_keeps_history_and_hides_the_key(bucket):
    bucket.put("k", b"v")
    assert bucket.delete("k") == 2
    with pytest.raises(ApiError, match="key not found"):
        bucket.get("k")
    assert ops(bucket.history("k")) == [("k", 1, PUT, 1, b"v"), ("k", 2, DEL, 0, b"")]
    assert bucket.keys() == []


def test_purge_leaves_one_entry(bucket):
    bucket.put("k", b"1")
    bucket.put("k", b"2")
    bucket.purge("k")
    assert ops(bucket.history("k")) == [("k", 3, PURGE, 0, b"")]
    msg = bucket.js.get_msg("KV_CFG", 3)
    assert msg.headers == {"KV-Operation": ["PURGE"], "Nats-Rollup": ["sub"]}


@pytest.mark.parametrize("last_op", ["none", "del", "purge"])
def test_create_succeeds_when_absent_or_deleted(bucket, last_op):
    if last_op != "none":
        bucket.put("k", b"old")
        getattr(bucket, {"del": "delete", "purge": "purge"}[last_op])("k")
    rev = bucket.create("k", b"new")
    assert bucket.get("k").revision == rev
    assert bucket.get("k").value == b"new"


def test_create_refuses_an_existing_key(bucket):
    bucket.put("k", b"v")
    with pytest.raises(ApiError) as err:
        bucket.create("k", b"again")
    assert (err.value.code, err.value.err_code, err.value.description) == (
        400, 10071, "key exists")
    assert bucket.get("k").value == b"v"


def test_update_checks_the_revision(bucket):
    bucket.put("k", b"1")
    bucket.put("other", b"x")
    with pytest.raises(ApiError) as err:
        bucket.update("k", b"2", 2)
    assert (err.value.err_code, err.value.description) == (10071, "wrong last sequence: 1")
    assert bucket.update("k", b"2", 1) == 3


def test_revert_puts_an_old_value_again(bucket):
    bucket.put("k", b"first")
    bucket.put("k", b"second")
    assert bucket.revert("k", 1) == 3
    assert bucket.get("k").value == b"first"
    bucket.delete("k")  # a deleted key takes an old value back too
    assert bucket.revert("k", 2) == 5
    assert bucket.get("k").value == b"second"


def test_revert_of_a_key_with_one_entry_is_refused_as_natscli(kv):
    """natscli reverts only a key with more than one entry (its history), as an update on
    the latest revision."""
    kv.create_bucket(KeyValueConfig(bucket="ONE", history=1))
    one = kv.open("ONE")
    one.put("k", b"a")
    one.put("k", b"b")  # history 1: revision 1 is gone
    with pytest.raises(JetlinkError, match="^cannot revert key in a bucket where history=1$"):
        one.revert("k", 1)
    assert one.get("k").revision == 2
    many = kv.open(kv.create_bucket(KeyValueConfig(bucket="MANY", history=10)).bucket)
    many.put("k", b"a")  # one revision in a bucket that keeps ten: said so, not "history=1"
    with pytest.raises(JetlinkError, match="^cannot revert key k: it has one revision in "
                       r"bucket MANY \(history 10\), nothing earlier to put back$"):
        many.revert("k", 1)


@pytest.mark.parametrize(
    "key, message",
    [
        ("", "can not be empty"),
        (".a", "start"),
        ("a.", "end"),
        ("a b", "may contain only"),
        ("a.*", "may contain only"),
        ("_kv.x", "reserved"),
    ],
)
def test_invalid_keys_are_refused_and_nothing_is_stored(bucket, key, message):
    with pytest.raises(JetlinkError, match=message) as err:
        bucket.put(key, b"v")
    assert err.value.field == "key"
    assert bucket.status().values == 0


def test_keys_use_the_latest_entry_and_filters(bucket):
    for key in ["a.1", "a.2", "b.1", "c"]:
        bucket.put(key, b"v")
    bucket.delete("a.2")
    bucket.put("d", b"v")
    bucket.purge("d")
    assert bucket.keys() == ["a.1", "b.1", "c"]
    assert bucket.keys(["a.*"]) == ["a.1"]
    assert bucket.keys(["a.>", "c"]) == ["a.1", "c"]


def test_put_many_is_one_revision_per_item(bucket):
    assert bucket.put_many([("a", b"1"), ("b", b"2"), ("a", b"3")]) == [1, 2, 3]
    assert bucket.get("a").value == b"3"
    with pytest.raises(JetlinkError):
        bucket.put_many([("ok", b"1"), ("bad key", b"2")])
    assert bucket.status().values == 3  # refused before anything was written


# -- TTLs and markers ---------------------------------------------------------------------------


def test_bucket_ttl_expires_values(kv, clock):
    kv.create_bucket(KeyValueConfig(bucket="T", ttl=2 * SECOND))
    b = kv.open("T")
    b.put("k", b"v")
    clock.advance(3 * SECOND)
    with pytest.raises(ApiError, match="key not found"):
        b.get("k")
    assert b.keys() == []


def test_limit_markers_read_as_purge_and_per_key_ttl(kv, clock):
    kv.create_bucket(KeyValueConfig(bucket="M", ttl=10 * SECOND, limit_marker_ttl=5 * SECOND))
    b = kv.open("M")
    b.put("aged", b"v")
    b.create("short", b"v", ttl=2 * SECOND)
    assert b.js.get_msg("KV_M", 2).headers["Nats-TTL"] == ["2s"]
    clock.advance(3 * SECOND)
    with pytest.raises(ApiError, match="key not found"):
        b.get("short")
    marker = b.history("short")[-1]
    assert marker.operation == PURGE  # Nats-Marker-Reason: MaxAge
    clock.advance(8 * SECOND)
    assert b.history("aged")[-1].operation == PURGE
    assert b.keys() == []


def test_per_key_ttl_needs_limit_markers(bucket):
    with pytest.raises(ApiError) as err:
        bucket.create("k", b"v", ttl=2 * SECOND)
    assert err.value.err_code == 10166


# -- watch --------------------------------------------------------------------------------------


def drain(watcher, n=50):
    out = []
    for _ in range(n):
        item = watcher.next(timeout=0)
        if item is None:
            break
        out.append(item if item is END_OF_INITIAL_DATA else (item.key, item.operation,
                                                            item.delta, item.value))
    return out


def test_watch_of_an_empty_bucket_still_ends_initial_data(bucket):
    assert drain(bucket.watch()) == [END_OF_INITIAL_DATA]


def test_watch_latest_values_then_updates(bucket):
    bucket.put("a", b"1")
    bucket.put("a", b"2")
    bucket.put("b", b"3")
    bucket.delete("b")
    w = bucket.watch()
    assert drain(w) == [("a", PUT, 1, b"2"), ("b", DEL, 0, b""), END_OF_INITIAL_DATA]
    bucket.put("c", b"4")
    assert drain(w) == [("c", PUT, 0, b"4")]


def test_watch_with_overlapping_filters_and_a_bucket_removed_while_watched(kv, bucket):
    """Overlapping key filters select each entry once; a bucket removed under a watch is
    named as the bucket (not its stream, nor a bucket of a close name)."""
    kv.create_bucket(KeyValueConfig(bucket="CF"))  # a close name: no "did you mean" here
    bucket.put("a.b.c", b"1")
    bucket.put("a.x", b"2")
    bucket.put("z", b"3")
    w = bucket.watch(["a.>", "a.b.*"])
    assert [e if e is END_OF_INITIAL_DATA else e[0] for e in drain(w)] == [
        "a.b.c", "a.x", END_OF_INITIAL_DATA]
    bucket.put("z", b"4")
    bucket.put("a.b.d", b"5")
    assert [e[0] for e in drain(w)] == ["a.b.d"]
    kv.delete_bucket("CFG")
    with pytest.raises(ApiError) as got:
        w.next(timeout=1.0)
    assert (got.value.err_code, str(got.value.description)) == (10059, "bucket not found")
    assert got.value.detail == "CFG (removed while watched)"


@pytest.mark.parametrize(
    "options, expected",
    [
        ({"include_history": True},
         [("a", PUT, 3, b"1"), ("a", PUT, 2, b"2"), ("b", PUT, 1, b"3"), ("b", DEL, 0, b""),
          END_OF_INITIAL_DATA, ("c", PUT, 0, b"4")]),
        ({"ignore_deletes": True},
         [("a", PUT, 1, b"2"), END_OF_INITIAL_DATA, ("c", PUT, 0, b"4")]),
        ({"meta_only": True},
         [("a", PUT, 1, b""), ("b", DEL, 0, b""), END_OF_INITIAL_DATA, ("c", PUT, 0, b"")]),
        ({"updates_only": True}, [END_OF_INITIAL_DATA, ("c", PUT, 0, b"4")]),
        ({"keys": ["a"]}, [("a", PUT, 0, b"2"), END_OF_INITIAL_DATA]),
    ],
)
def test_watch_options(bucket, options, expected):
    bucket.put("a", b"1")
    bucket.put("a", b"2")
    bucket.put("b", b"3")
    bucket.delete("b")
    w = bucket.watch(**options)
    first = drain(w)
    bucket.put("c", b"4")
    assert first + drain(w) == expected


# -- buckets ------------------------------------------------------------------------------------


def test_status_and_statuses(kv, bucket):
    bucket.put("k", b"value")
    st = kv.status("CFG")
    doc = st.to_json()
    assert {k: doc[k] for k in ["bucket", "values", "history", "ttl", "limit_marker_ttl",
                                "is_compressed", "backing_store", "kind", "read_only"]} == {
        "bucket": "CFG", "values": 1, "history": 3, "ttl": 0, "limit_marker_ttl": 0,
        "is_compressed": False, "backing_store": "JetStream", "kind": "bucket",
        "read_only": False}
    assert doc["bytes"] == st.stream_info.state.bytes > 0
    assert [s.bucket for s in kv.statuses()] == ["CFG"]


def test_update_and_delete_bucket(kv, bucket):
    cfg = kv.bucket_config("CFG")
    cfg.history = 10
    assert kv.update_bucket(cfg).history == 10
    kv.delete_bucket("CFG")
    with pytest.raises(ApiError) as err:
        kv.open("CFG")
    assert (err.value.code, err.value.err_code) == (404, 10059)


@pytest.mark.parametrize("name", ["", "a.b", "a b", "*"])
def test_invalid_bucket_names(kv, name):
    with pytest.raises(JetlinkError):
        kv.create_bucket(KeyValueConfig(bucket=name))
    assert kv.statuses() == []


# -- topologies ---------------------------------------------------------------------------------


@pytest.fixture
def two(dd, clock):
    dd.add_cluster("west")
    dd.add_cluster("east")
    west, east = KV(dd, "west", clock), KV(dd, "east", clock)
    west.create_bucket(KeyValueConfig(bucket="ORDERS", history=5))
    orders = west.open("ORDERS")
    orders.put("NEW.1", b"n1")
    orders.put("OLD.1", b"o1")
    return west, east, orders


def test_kv_mirror_is_read_only_and_serves_gets(dd, clock, two):
    _west, east, orders = two
    east.create_mirror(KVMirrorConfig(name="ORDERS_EAST", origin_bucket="ORDERS",
                                      domain="west"))
    pump_until_idle(dd, clock)
    mirror = east.open("ORDERS_EAST")
    assert (mirror.kind, mirror.read_only, mirror.keys()) == ("mirror", True, ["NEW.1", "OLD.1"])
    with pytest.raises(ReadOnlyBucketError, match="read-only mirror of bucket ORDERS"):
        mirror.put("x", b"1")
    seen = east.open("ORDERS")  # the bucket as seen from east: reads from the mirror
    assert seen.get("NEW.1").served_by == "KV_ORDERS_EAST"  # nats.go: KV_<mirror bucket>
    seen.put("NEW.2", b"n2")  # writes go to the origin
    assert orders.get("NEW.2").value == b"n2"
    dd.set_down("west", True)
    assert seen.get("NEW.1").value == b"n1"  # still served while west is down
    with pytest.raises(JetlinkError, match="cluster west is down"):
        seen.put("NEW.3", b"x")


def test_a_kv_mirror_is_compacted_as_natscli_compacts_it(dd, clock, two):
    """kv compact (nats.go's PurgeDeletes) of a KV mirror purges the mirror's own stream,
    as the server lets it (a mirror is no deny_purge stream): the deleted key's history
    goes, its marker stays (younger than 30 minutes); the origin is untouched."""
    _west, east, orders = two
    orders.put("OLD.1", b"o2")
    orders.delete("OLD.1")
    east.create_mirror(KVMirrorConfig(name="ORDERS_EAST", origin_bucket="ORDERS",
                                      domain="west", history=5))
    pump_until_idle(dd, clock)
    mirror = east.open("ORDERS_EAST")
    assert len(mirror.history("OLD.1")) == 3
    assert mirror.purge_deletes() == {"keys": 1, "purged": 2}
    assert [e.operation for e in mirror.history("OLD.1")] == ["DEL"]
    assert len(orders.history("OLD.1")) == 3


def test_create_reads_a_clustered_servers_wrong_last_sequence_as_nats_go(two, monkeypatch):
    """A clustered server may answer a create's CAS conflict with 10164 (the constant
    form of a wrong last sequence): taken as 10071, as nats.go's isWrongLastSeqErr takes
    it, so a deleted key is created again and a present one is "key exists"."""

    _west, _east, orders = two
    real = type(orders)._publish
    calls = []

    def clustered(self, key, value, headers=None, **kw):
        calls.append(dict(headers or {}))
        if (headers or {}).get("Nats-Expected-Last-Subject-Sequence") == "0":
            raise ApiError(400, 10164, "wrong last sequence")
        return real(self, key, value, headers, **kw)

    monkeypatch.setattr(type(orders), "_publish", clustered)
    orders.delete("NEW.1")
    assert orders.create("NEW.1", b"again") > 0  # retried on the delete marker's revision
    with pytest.raises(ApiError) as exc:
        orders.create("OLD.1", b"x")
    assert (exc.value.err_code, exc.value.description) == (10071, "key exists")


def test_a_revision_the_mirror_no_longer_holds_is_read_from_the_bucket(dd, clock, two):
    """A mirror keeps one revision of each key unless told: an older revision of a key it
    serves is asked of the bucket itself (never a false "key not found"); the one it holds
    is its own answer."""
    _west, east, orders = two
    first = orders.get("NEW.1").revision
    east.create_mirror(KVMirrorConfig(name="ORDERS_EAST", origin_bucket="ORDERS",
                                      domain="west"))
    orders.put("NEW.1", b"n2")
    pump_until_idle(dd, clock)
    seen = east.open("ORDERS")
    old = seen.get("NEW.1", revision=first)
    assert (old.value, old.served_by) == (b"n1", "KV_ORDERS")
    new = seen.get("NEW.1", revision=orders.get("NEW.1").revision)
    assert (new.value, new.served_by) == (b"n2", "KV_ORDERS_EAST")
    with pytest.raises(ApiError, match="key not found"):
        seen.get("OLD.1", revision=first)  # a revision of another key: none


def test_kv_mirror_key_filter_and_origin_checks(dd, clock, two):
    _west, east, _orders = two
    east.create_mirror(KVMirrorConfig(name="NEW_ONLY", origin_bucket="ORDERS", domain="west",
                                      keys=["NEW.>"]))
    pump_until_idle(dd, clock)
    assert east.open("NEW_ONLY").keys() == ["NEW.1"]
    assert east.open("ORDERS").get("OLD.1").served_by == "KV_ORDERS"  # outside the filter
    with pytest.raises(ApiError, match="origin bucket NOPE not found in cluster west"):
        east.create_mirror(KVMirrorConfig(name="M", origin_bucket="NOPE", domain="west"))


def test_aggregate_read_only_and_writable(dd, clock, two):
    _west, east, orders = two
    east.create_aggregate(KVAggregateConfig(bucket="NEWS", origins=[
        KVAggregateOrigin(bucket="ORDERS", keys=["NEW.>"], domain="west")]))
    pump_until_idle(dd, clock)
    agg = east.open("NEWS")
    assert (agg.kind, agg.read_only, agg.keys()) == ("aggregate", True, ["NEW.1"])
    with pytest.raises(ReadOnlyBucketError, match="read-only aggregate"):
        agg.put("x", b"1")
    w = agg.watch()
    assert drain(w)[-1] is END_OF_INITIAL_DATA
    orders.put("NEW.7", b"seven")
    pump_until_idle(dd, clock)
    assert drain(w) == [("NEW.7", PUT, 0, b"seven")]

    east.create_aggregate(KVAggregateConfig(bucket="ALL", writable=True, origins=[
        KVAggregateOrigin(bucket="ORDERS", domain="west")]))
    pump_until_idle(dd, clock)
    both = east.open("ALL")
    both.put("LOCAL.1", b"here")
    assert both.keys() == ["LOCAL.1", "NEW.1", "NEW.7", "OLD.1"]


def test_aggregate_takes_more_origins(dd, clock, two):
    west, east, _orders = two
    west.create_bucket(KeyValueConfig(bucket="USERS"))
    west.open("USERS").put("u1", b"x")
    east.create_aggregate(KVAggregateConfig(bucket="AGG", origins=[
        KVAggregateOrigin(bucket="ORDERS", keys=["NEW.>"], domain="west")]))
    st = east.add_aggregate_origin("AGG", KVAggregateOrigin(bucket="USERS", domain="west"))
    assert [s.name for s in st.config.sources] == ["KV_ORDERS", "KV_USERS"]
    pump_until_idle(dd, clock)
    assert east.open("AGG").keys() == ["NEW.1", "u1"]
    with pytest.raises(JetlinkError, match="already sources"):
        east.add_aggregate_origin("AGG", KVAggregateOrigin(bucket="USERS", domain="west"))
    with pytest.raises(JetlinkError, match="not an aggregate"):
        west.add_aggregate_origin("USERS", KVAggregateOrigin(bucket="ORDERS"))


def test_editing_an_aggregate_keeps_its_origins_and_rules(dd, clock, two):
    _west, east, _orders = two
    east.create_aggregate(KVAggregateConfig(bucket="NEWS", origins=[
        KVAggregateOrigin(bucket="ORDERS", keys=["NEW.>"], domain="west")]))
    cfg = east.bucket_config("NEWS")
    cfg.history = 7
    cfg.description = "new orders"
    st = east.update_bucket(cfg)
    assert (st.history, st.kind, st.read_only) == (7, "aggregate", True)
    assert st.config.description == "new orders"
    assert [s.name for s in st.config.sources] == ["KV_ORDERS"]


def test_editing_a_mirror(dd, clock, two):
    _west, east, _orders = two
    east.create_mirror(KVMirrorConfig(name="M", origin_bucket="ORDERS", domain="west"))
    st = east.update_mirror("M", history=3, description="read replica")
    assert (st.history, st.kind, st.config.description) == (3, "mirror", "read replica")
    assert st.config.mirror.name == "KV_ORDERS"
    with pytest.raises(JetlinkError, match="not a KV mirror"):
        _west.update_mirror("KV_ORDERS", history=2)
    # the duplicate window follows a new TTL as nats.go's UpdateKeyValue sends it: a TTL
    # below 2m is taken (not refused as a window above max age), one above it gets 2m
    for ttl, window in ((60 * 10**9, 60 * 10**9), (300 * 10**9, 120 * 10**9)):
        cfg = east.update_mirror("M", ttl=ttl).config
        assert (cfg.max_age, cfg.duplicate_window) == (ttl, window)
