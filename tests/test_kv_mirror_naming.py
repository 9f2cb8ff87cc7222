"""KV mirror naming (nats.go jetstream/kv.go ``prepareKeyValueConfig`` for a
``KeyValueConfig`` with ``Mirror``; natscli's ``kv add KM --mirror KB`` calls it): a mirror
bucket ``KM`` of ``KB`` is the stream ``KV_KM`` with ``mirror.name`` ``KV_KB``,
``mirror_direct``, no subjects and the bucket's settings. A KV mirror jetlink made before
(a stream named ``KM`` itself, discard old, purges denied, no direct gets of its own, every
revision kept) still opens, lists, reads, edits, exports and promotes."""

from __future__ import annotations

import json

from helpers import doc, ok

# A KV mirror as jetlink made it before following nats.go (module doc): every field it set.
OLD_STYLE = {
    "retention": "limits", "max_consumers": -1, "max_msgs": -1, "max_bytes": -1,
    "max_age": 0, "max_msgs_per_subject": -1, "max_msg_size": -1, "discard": "old",
    "storage": "file", "num_replicas": 1, "compression": "none", "allow_direct": False,
    "mirror_direct": True, "deny_delete": True, "deny_purge": True,
    "allow_rollup_hdrs": False,
}


def _origin(jl):
    ok(jl("cluster", "add", "west"))
    ok(jl("--cluster", "west", "kv", "add", "KB", "--history", "3"))
    ok(jl("--cluster", "west", "kv", "put", "KB", "k1", "v1"))
    ok(jl("--cluster", "west", "kv", "put", "KB", "k2", "v2"))
    ok(jl("--cluster", "west", "kv", "put", "KB", "k1", "v1b"))


def _old_style(jl, name, cluster=None):
    """The stream ``name`` mirroring ``KV_KB`` in west, with OLD_STYLE's settings."""
    cfg = dict(OLD_STYLE, name=name, mirror={
        "name": "KV_KB", "external": {"api": "$JS.west.API", "deliver": ""}})
    path = jl.tmp / f"{cluster}-{name}.json"
    path.write_text(json.dumps(cfg))
    where = ("--cluster", cluster) if cluster else ()
    made = doc(jl(*where, "stream", "add", name, "--config", str(path), "-j"))
    assert (made["config"]["discard"], made["config"]["deny_purge"]) == ("old", True)


def _err(res):
    assert res.exit_code == 1
    return json.loads(res.stdout)["error"]


def test_new_mirror_bucket_is_named_kv_bucket(jl):
    _origin(jl)
    st = doc(jl("kv", "add", "KM", "--mirror", "KB", "--mirror-domain", "west", "-j"))
    cfg = st["stream_info"]["config"]
    assert (st["bucket"], st["kind"], st["read_only"], st["history"]) == (
        "KM", "mirror", True, 1)
    assert (cfg["name"], cfg["mirror"]["name"], cfg["mirror_direct"]) == (
        "KV_KM", "KV_KB", True)
    assert not cfg.get("subjects")
    # the settings nats.go gives every bucket, a mirror bucket included
    assert (cfg["discard"], cfg["allow_direct"], cfg["allow_rollup_hdrs"], cfg["deny_delete"],
            cfg["deny_purge"], cfg["duplicate_window"], cfg["max_msgs_per_subject"]) == (
        "new", True, True, True, False, 120_000_000_000, 1)
    assert doc(jl("stream", "ls", "--names", "-j")) == ["KV_KM"]
    ok(jl("replicate"))
    assert doc(jl("kv", "get", "KM", "k1", "-j"))["value"] == "djFi"  # v1b
    assert [e["value"] for e in doc(jl("kv", "history", "KM", "k1", "-j"))] == ["djFi"]
    assert [b["bucket"] for b in doc(jl("kv", "ls", "-j"))] == ["KM"]
    assert doc(jl("kv", "info", "KM", "-j"))["stream_info"]["config"]["name"] == "KV_KM"
    assert "read-only mirror of bucket KB" in _err(jl("kv", "put", "KM", "k1", "x", "-j"))[
        "description"]
    # a name given with the prefix is the stream's name as is
    st = doc(jl("kv", "add", "KV_KM2", "--mirror", "KB@west", "--history", "3", "-j"))
    assert (st["stream_info"]["config"]["name"], st["history"]) == ("KV_KM2", 3)


def test_old_style_mirror_still_works(jl):
    _origin(jl)
    _old_style(jl, "KM")
    ok(jl("replicate"))
    assert [b["bucket"] for b in doc(jl("kv", "ls", "-j"))] == ["KM"]
    got = doc(jl("kv", "get", "KM", "k2", "-j"))
    assert (got["bucket"], got["key"], got["value"]) == ("KM", "k2", "djI=")
    # every revision kept (history unset), as before
    assert [e["revision"] for e in doc(jl("kv", "history", "KM", "k1", "-j"))] == [1, 3]
    info = doc(jl("kv", "info", "KM", "-j"))
    assert (info["kind"], info["history"], info["stream_info"]["config"]["name"]) == (
        "mirror", -1, "KM")
    assert doc(jl("kv", "edit", "KM", "--history", "5", "-j"))["history"] == 5
    # the same name the new way is refused, not a second mirror beside the old one
    res = jl("kv", "add", "KM", "--mirror", "KB", "--mirror-domain", "west", "-j")
    assert _err(res)["err_code"] == 10058
    # export: [kv_mirrors] would make KV_KM, so the old stream is written as a stream
    exported = doc(jl("export", "-j"))
    assert "KM" in exported["streams"] and "kv_mirrors" not in exported
    ok(jl("kv", "rm", "KM", "-f"))
    assert doc(jl("stream", "ls", "--names", "-j")) == []


def test_new_mirror_bucket_exports_as_kv_mirror(jl):
    _origin(jl)
    ok(jl("kv", "add", "KM", "--mirror", "KB@west", "--keys", "k1"))
    exported = doc(jl("export", "-j"))
    assert exported["kv_mirrors"] == {"KM": {"origin_bucket": "KB", "domain": "west",
                                              "keys": ["k1"]}}
    assert "streams" not in exported


def test_failover_finds_both_namings(jl):
    _origin(jl)
    # new naming: `kv add KB --mirror KB@west` in the default cluster is the stream KV_KB
    st = doc(jl("kv", "add", "KB", "--mirror", "KB", "--mirror-domain", "west", "-j"))
    assert st["stream_info"]["config"]["name"] == "KV_KB"
    ok(jl("replicate"))
    ok(jl("kv", "failover", "KB", "-f"))
    info = doc(jl("kv", "info", "KB", "-j"))
    assert (info["kind"], info["read_only"]) == ("bucket", False)
    assert "mirror" not in info["stream_info"]["config"]
    ok(jl("kv", "put", "KB", "k3", "v3"))
    ok(jl("kv", "purge", "KB", "k3", "-f"))  # nats.go's mirror bucket allows purges
    # old naming, promotable: a stream KV_KB (the name given with its prefix) with the old
    # settings; purges stay refused (its deny_purge cannot be cancelled)
    ok(jl("cluster", "add", "south"))
    _old_style(jl, "KV_KB", "south")
    ok(jl("replicate"))
    # local's KB, failed over from the same origin, is a primary still: a second is refused
    refused = jl("--cluster", "south", "kv", "failover", "KB", "-f")
    assert refused.exit_code == 1 and "was failed over already to KV_KB@local, a primary " \
        "still" in refused.stderr, refused.stderr
    ok(jl("kv", "rm", "KB", "-f"))  # local given up: south takes over
    ok(jl("--cluster", "south", "kv", "failover", "KB", "-f"))
    south = doc(jl("--cluster", "south", "kv", "info", "KB", "-j"))
    assert (south["kind"], south["values"]) == ("bucket", 3)  # every revision kept
    ok(jl("--cluster", "south", "kv", "put", "KB", "k4", "v4"))
    assert jl("--cluster", "south", "kv", "purge", "KB", "k4", "-f").exit_code == 1
    # old naming under another name: found, and refused (its keys are $KV.KB.<key>, so
    # only a stream named KV_KB can be promoted, as before)
    ok(jl("cluster", "add", "east"))
    _old_style(jl, "KM", "east")
    ok(jl("--cluster", "south", "kv", "rm", "KB", "-f"))  # (no other primary of KB left)
    res = jl("--cluster", "east", "kv", "failover", "KM", "-f", "-j")
    assert "mirrors bucket KB under another name" in _err(res)["description"]


def test_a_mirror_under_another_name_is_told_it_cannot_fail_over(jl):
    """Readable as it is; the DR verbs refuse it (its keys are $KV.<origin>.<key>): kv add
    says so when it is made, and a mirror named as its origin is made without a word."""
    _origin(jl)
    r = ok(jl("kv", "add", "KM", "--mirror", "KB", "--mirror-domain", "west"))
    assert r.stderr == (
        "jetlink: warning: KV mirror KV_KM mirrors bucket KB under another name: its keys are "
        "stored as $KV.KB.<key>, so it can only be promoted as a stream named KV_KB (in "
        "another domain or cluster than the origin): kv promote and kv failover refuse it, "
        "and dr check grades it CRITICAL; name it KB to fail it over\n")
    refused = jl("kv", "failover", "KM", "--dry-run")
    assert refused.exit_code == 1 and "under another name" in refused.stderr
    assert ok(jl("kv", "add", "KB", "--mirror", "KB", "--mirror-domain", "west")).stderr == ""


def test_a_mirror_bucket_is_not_promoted_by_the_stream_verbs(jl):
    """stream promote / failover of a KV mirror bucket's stream (and the dashboard's
    promotion, core/dr/rules.py ``promote``) are refused with the KV verb to use: as a plain
    stream it would take the origin's subjects without the bucket's settings, and under
    another name than its origin read and write none of its keys. Nothing changes."""
    from helpers import data_dir_bytes

    from jetlink.core import dr
    from jetlink.core.clock import SystemClock
    from jetlink.core.errors import JetlinkError
    from jetlink.core.store import DataDir

    _origin(jl)
    ok(jl("kv", "add", "KM", "--mirror", "KB", "--mirror-domain", "west"))
    ok(jl("kv", "add", "KB", "--mirror", "KB", "--mirror-domain", "west"))
    ok(jl("replicate"))
    before = data_dir_bytes(jl.data)
    renamed = ("KV mirror KV_KM mirrors bucket KB under another name: its keys are stored as "
               "$KV.KB.<key>, so it can only be promoted as a stream named KV_KB (in another "
               "domain or cluster than the origin): neither kv nor stream promote / failover "
               "takes it; a mirror bucket named KB can be (jetlink kv add KB --mirror KB ...)")
    for verb, words in (("failover", "fail it over"), ("promote", "promote it")):
        r = jl("stream", verb, "KV_KB", "-f")
        assert (r.exit_code, r.stderr) == (1, (
            f"jetlink: error: stream KV_KB is the stream of KV bucket KB, a mirror of bucket "
            f"KB: {words} as a bucket (jetlink kv {verb} KB)\n"))
        # under another name the KV verb refuses it too: the reason, never a pointer to it
        for args in (("stream", verb, "KV_KM"), ("kv", verb, "KM")):
            r = jl(*args, "-f")
            assert (r.exit_code, r.stderr) == (1, f"jetlink: error: {renamed}\n"), args
    dd = DataDir(jl.data)
    try:
        from jetlink.core.dr.embedded import EmbeddedSite

        site = EmbeddedSite(dd, "local", SystemClock())
        try:
            dr.promote(site, "KV_KB", failover=True, dry_run=True, as_stream=True)
        except JetlinkError as err:
            assert "jetlink kv failover KB" in err.description
        else:
            raise AssertionError("dr.promote of a mirror bucket's stream went ahead")
    finally:
        dd.close()
    assert data_dir_bytes(jl.data) == before
    ok(jl("kv", "failover", "KB", "-f"))  # the KV verb makes it a bucket
