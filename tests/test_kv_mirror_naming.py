"""KV mirror naming (ADR-57; nats.go jetstream/kv.go CreateKeyValue with ``Mirror``): a
mirror bucket ``KM`` of ``KB`` is the stream ``KV_KM`` with ``mirror.name`` ``KV_KB``,
``mirror_direct`` and no subjects. A KV mirror made before that rule (a stream named ``KM``)
still opens, lists, reads and promotes."""

from __future__ import annotations

import json

from helpers import doc, ok

from jetlink.core.config.kv import KVMirrorConfig, check_kv_mirror


def _origin(jl):
    ok(jl("cluster", "add", "west"))
    ok(jl("--cluster", "west", "kv", "add", "KB", "--history", "3"))
    ok(jl("--cluster", "west", "kv", "put", "KB", "k1", "v1"))
    ok(jl("--cluster", "west", "kv", "put", "KB", "k2", "v2"))


def _old_style(jl, name):
    """A KV mirror as jetlink made it before ADR-57's naming: the stream ``name`` itself."""
    scfg = check_kv_mirror(KVMirrorConfig(name="KV_" + name, origin_bucket="KB",
                                          domain="west"), None)
    scfg.name = name
    path = jl.tmp / f"{name}.json"
    path.write_text(json.dumps(scfg.to_json()))
    doc(jl("stream", "add", name, "--config", str(path), "-j"))


def test_new_mirror_bucket_is_named_kv_bucket(jl):
    _origin(jl)
    st = doc(jl("kv", "add", "KM", "--mirror", "KB", "--mirror-domain", "west", "-j"))
    cfg = st["stream_info"]["config"]
    assert (st["bucket"], st["kind"], st["read_only"]) == ("KM", "mirror", True)
    assert (cfg["name"], cfg["mirror"]["name"], cfg["mirror_direct"]) == (
        "KV_KM", "KV_KB", True)
    assert "subjects" not in cfg or not cfg["subjects"]
    assert doc(jl("stream", "ls", "--names", "-j")) == ["KV_KM"]
    ok(jl("replicate"))
    assert doc(jl("kv", "get", "KM", "k1", "-j"))["value"] == "djE="  # v1
    assert [b["bucket"] for b in doc(jl("kv", "ls", "-j"))] == ["KM"]
    assert doc(jl("kv", "info", "KM", "-j"))["stream_info"]["config"]["name"] == "KV_KM"
    assert jl("kv", "put", "KM", "k1", "x").exit_code == 1  # read-only


def test_old_style_mirror_still_works(jl):
    _origin(jl)
    _old_style(jl, "KM")
    ok(jl("replicate"))
    assert [b["bucket"] for b in doc(jl("kv", "ls", "-j"))] == ["KM"]
    got = doc(jl("kv", "get", "KM", "k2", "-j"))
    assert (got["bucket"], got["key"], got["value"]) == ("KM", "k2", "djI=")
    info = doc(jl("kv", "info", "KM", "-j"))
    assert (info["kind"], info["stream_info"]["config"]["name"]) == ("mirror", "KM")
    assert doc(jl("kv", "edit", "KM", "--history", "5", "-j"))["history"] == 5
    # the same name the new way is refused, not a second mirror beside the old one
    res = jl("kv", "add", "KM", "--mirror", "KB", "--mirror-domain", "west", "-j")
    assert res.exit_code == 1
    assert doc_err(res)["err_code"] == 10058
    ok(jl("kv", "rm", "KM", "-f"))
    assert doc(jl("stream", "ls", "--names", "-j")) == []


def doc_err(res):
    return json.loads(res.stdout)["error"]


def test_failover_finds_both_namings(jl):
    _origin(jl)
    # new naming: `kv add KB --mirror KB@west` in the default cluster is the stream KV_KB
    st = doc(jl("kv", "add", "KB", "--mirror", "KB", "--mirror-domain", "west", "-j"))
    assert st["stream_info"]["config"]["name"] == "KV_KB"
    ok(jl("replicate"))
    rep = doc(jl("kv", "failover", "KB", "-f", "-j"))
    assert doc(jl("kv", "info", "KB", "-j"))["kind"] == "bucket"
    assert rep  # the promotion report
    ok(jl("kv", "put", "KB", "k3", "v3"))
    # old naming: a stream KM mirroring KV_KB is found (and refused: its keys are
    # $KV.KB.<key>, so only a stream named KV_KB can be promoted, as before)
    ok(jl("cluster", "add", "east"))
    _old_style_in(jl, "east", "KM")
    res = jl("--cluster", "east", "kv", "failover", "KM", "-f", "-j")
    assert res.exit_code == 1
    assert "mirrors bucket KB under another name" in doc_err(res)["description"]


def _old_style_in(jl, cluster, name):
    scfg = check_kv_mirror(KVMirrorConfig(name="KV_" + name, origin_bucket="KB",
                                          domain="west"), None)
    scfg.name = name
    path = jl.tmp / f"{cluster}-{name}.json"
    path.write_text(json.dumps(scfg.to_json()))
    doc(jl("--cluster", cluster, "stream", "add", name, "--config", str(path), "-j"))
