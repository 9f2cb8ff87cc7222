"""Parity of KV mirror buckets: ``kv add KM --mirror KB`` against what nats.go builds, on
nats-server 2.15.1.

nats.go (jetstream/kv.go ``prepareKeyValueConfig``; natscli's ``kv add --mirror`` calls
``CreateKeyValue`` with it) makes a ``KeyValueConfig`` with ``Mirror`` into the stream
``KV_<bucket>`` with every bucket setting and ``mirror`` / ``mirror_direct`` instead of
subjects. :func:`natsgo_mirror_bucket` writes those facts down independently of jetlink's
code; the stream it describes is created on the server with a raw ``STREAM.CREATE``, as
nats.go sends it. For every case of CASES three stored configs are compared field by field:

- nats.go's, as the server holds it;
- jetlink's on the embedded engine (``kv add ... --mirror KB`` on a data directory);
- jetlink's against the server (``--server URL kv add ... --mirror KB``).

SCRIPT then runs the same CLI steps on both backends (the runner and masks of
tests/live/test_parity.py): a mirror bucket's reads, status, refusals and removal. A step
``@settle STREAM N`` waits on the live server until STREAM holds N messages (mirroring is
asynchronous there); it is not compared.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest
from helpers import runner

from jetlink.cli.main import app
from live.parity import parity_env, settle, step
from live.test_parity import _mask_doc, _mask_text

pytestmark = pytest.mark.live

SECOND = 1_000_000_000
MINUTE = 60 * SECOND


def natsgo_mirror_bucket(bucket: str, origin: str, *, history: int = 0, ttl: int = 0,
                         max_bytes: int = 0, max_value_size: int = 0, storage: str = "file",
                         description: str = "", replicas: int = 0,
                         metadata: dict[str, str] | None = None) -> dict[str, Any]:
    """The StreamConfig nats.go's ``prepareKeyValueConfig`` sends for
    ``KeyValueConfig{Bucket: bucket, Mirror: &StreamSource{Name: origin}, ...}``."""
    cfg: dict[str, Any] = {
        "name": f"KV_{bucket}",
        "description": description,
        "max_msgs_per_subject": history or 1,  # 0: the default, 1
        "max_bytes": max_bytes or -1,
        "max_age": ttl,
        "max_msg_size": max_value_size or -1,
        "storage": storage,
        "num_replicas": replicas or 1,
        "allow_rollup_hdrs": True,
        "deny_delete": True,
        # 2m, or the TTL when it is shorter
        "duplicate_window": ttl if 0 < ttl < 2 * MINUTE else 2 * MINUTE,
        "max_msgs": -1,
        "max_consumers": -1,
        "allow_direct": True,
        "discard": "new",
        "retention": "limits",
        # the mirror named by bucket gets the KV_ prefix; mirror_direct instead of subjects
        "mirror": {"name": origin if origin.startswith("KV_") else f"KV_{origin}"},
        "mirror_direct": True,
    }
    if metadata:
        cfg["metadata"] = dict(metadata)
    return cfg


# (case id, jetlink's kv add arguments after BUCKET, nats.go's KeyValueConfig fields)
CASES: list[tuple[str, list[str], dict[str, Any]]] = [
    ("defaults", [], {}),
    ("history-and-short-ttl", ["--history", "5", "--ttl", "30s"],
     {"history": 5, "ttl": 30 * SECOND}),
    ("long-ttl", ["--ttl", "1h"], {"ttl": 3600 * SECOND}),
    ("sizes", ["--max-value-size", "1024", "--max-bucket-size", "1048576"],
     {"max_value_size": 1024, "max_bytes": 1048576}),
    ("memory-described", ["--storage", "memory", "--description", "read replica"],
     {"storage": "memory", "description": "read replica"}),
    ("metadata", ["--metadata", "team=ops"], {"metadata": {"team": "ops"}}),
    ("replicas-1-history-64", ["--replicas", "1", "--history", "64"],
     {"replicas": 1, "history": 64}),
]

# What the server manages itself (its version and API level), and the state-derived
# `created`: left out of the comparison.
_SERVER_METADATA = ("_nats.ver", "_nats.level", "_nats.req.level")


def _config(doc: dict[str, Any]) -> dict[str, Any]:
    cfg = dict(doc["config"])
    meta = {k: v for k, v in (cfg.pop("metadata", None) or {}).items()
            if k not in _SERVER_METADATA}
    if meta:
        cfg["metadata"] = meta
    return cfg


def _jl(prefix: list[str], *args: str) -> dict[str, Any]:
    res = runner.invoke(app, [*prefix, *args, "-j"], prog_name="jetlink")
    assert res.exit_code == 0, (args, res.stdout, res.stderr)
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def configs(nats_single, tmp_path_factory) -> dict[str, dict[str, dict[str, Any]]]:
    """case id -> {"natsgo", "engine", "live"}: the stored configs of the mirror bucket."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    with parity_env(tmp_path_factory, nats_single, "parity-kv-mirror-cfg"):
        data = tmp_path_factory.mktemp("parity-kv-mirror-embedded") / "data"
        engine, live = ["--data-dir", str(data)], ["--server", nats_single.url]
        client = nats_single.client()
        for prefix in (engine, live):
            _jl(prefix, "kv", "add", "KB", "--history", "3")
        for i, (case, args, natsgo) in enumerate(CASES):
            bucket = f"KM{i}"
            resp = client.stream_create(natsgo_mirror_bucket(bucket, "KB", **natsgo))
            assert "error" not in resp, (case, resp)
            got = {"natsgo": _config(resp)}
            assert "error" not in client.stream_delete(f"KV_{bucket}")
            for side, prefix in (("engine", engine), ("live", live)):
                st = _jl(prefix, "kv", "add", bucket, "--mirror", "KB", *args)
                got[side] = _config(st["stream_info"])
            out[case] = got
    return out


def _field_diff(a: dict[str, Any], b: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    return {k: (a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}


@pytest.mark.parametrize("side", ["engine", "live"])
@pytest.mark.parametrize("case", [c[0] for c in CASES])
def test_mirror_bucket_config_is_natsgos(configs, case, side):
    """jetlink's mirror bucket, on each backend, holds the config nats.go's holds."""
    got = configs[case]
    assert got["natsgo"]["name"].startswith("KV_KM")
    assert _field_diff(got["natsgo"], got[side]) == {}, case


def test_the_fields_compared(configs):
    """The comparison covers the settings the mirror naming changed, as the server holds
    them for nats.go's request (a sanity check of the oracle, not of jetlink)."""
    cfg = configs["defaults"]["natsgo"]
    assert {k: cfg.get(k) for k in (
        "name", "discard", "allow_direct", "mirror_direct", "allow_rollup_hdrs",
        "deny_delete", "deny_purge", "duplicate_window", "max_msgs_per_subject")} == {
        "name": "KV_KM0", "discard": "new", "allow_direct": True, "mirror_direct": True,
        "allow_rollup_hdrs": True, "deny_delete": True, "deny_purge": False,
        "duplicate_window": 2 * MINUTE, "max_msgs_per_subject": 1}
    assert not cfg.get("subjects") and cfg["mirror"]["name"] == "KV_KB"
    assert configs["history-and-short-ttl"]["natsgo"]["duplicate_window"] == 30 * SECOND


SCRIPT: list[str] = [
    "kv add KB --history 3 -j",
    "kv put KB k1 v1 -j",
    "kv put KB k2 v2 -j",
    "kv put KB k1 v1b -j",
    "kv add KM --mirror KB -j",
    "kv add KH --mirror KB --history 3 -j",
    "@settle KV_KM 2",
    "@settle KV_KH 3",
    "stream ls --names -j",
    "kv ls --names -j",
    "kv get KM k1 -j",
    "kv get KM k2",
    "kv history KM k1 -j",
    "kv history KH k1 -j",
    "kv keys KM -j",
    "kv status KM -j",
    "stream info KV_KM -j",
    "kv put KM k1 x -j",
    "kv del KM k1 -f -j",
    "kv purge KM k1 -f -j",
    "kv add KM --mirror KB -j",
    "kv edit KM --history 2 -j",
    "kv rm KM -f",
    "kv rm KH -f",
    "stream ls --names -j",
]


def _mask(value: Any) -> Any:
    """test_parity's masks, and a mirror's ``active`` (ns since the origin was last heard)."""
    value = _mask_doc(value)
    if isinstance(value, dict):
        return {k: ("<volatile>" if k == "active" else _mask(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    return value


def _run(prefix: list[str], where: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for s in SCRIPT:
        args = shlex.split(s)
        if args[0] == "@settle":
            settle(prefix, args[1], int(args[2]))
            out.append({})
            continue
        out.append(step(prefix, args, text=lambda t: _mask_text(t, where), doc=_mask))
    return out


@pytest.fixture(scope="module")
def both(nats_single, tmp_path_factory):
    with parity_env(tmp_path_factory, nats_single, "parity-kv-mirror"):
        data = tmp_path_factory.mktemp("parity-kv-mirror-script") / "data"
        embedded = _run(["--data-dir", str(data)], str(data))
        live = _run(["--server", nats_single.url], nats_single.url)
    return embedded, live


@pytest.mark.parametrize("i", range(len(SCRIPT)), ids=[s[:60] for s in SCRIPT])
def test_parity_kv_mirror(both, i):
    embedded, live = both
    e, lv = embedded[i], live[i]
    assert "exception" not in lv, (SCRIPT[i], lv)
    assert "exception" not in e, (SCRIPT[i], e)
    assert lv == e, SCRIPT[i]


def test_script_outcomes(both):
    """What the steps must show on both sides (the parity alone would pass if both were
    wrong the same way)."""
    embedded, _ = both

    def at(s: str, n: int = 0) -> dict[str, Any]:
        return embedded[[i for i, x in enumerate(SCRIPT) if x == s][n]]

    assert at("stream ls --names -j")["json"] == ["KV_KB", "KV_KH", "KV_KM"]
    assert at("kv ls --names -j")["json"] == ["KB", "KH", "KM"]
    assert at("kv get KM k1 -j")["json"]["value"] == "djFi"  # v1b
    assert [e["revision"] for e in at("kv history KM k1 -j")["json"]] == [3]
    assert [e["revision"] for e in at("kv history KH k1 -j")["json"]] == [1, 3]
    added = at("kv add KM --mirror KB -j")["json"]
    assert (added["bucket"], added["kind"], added["history"]) == ("KM", "mirror", 1)
    # the same create again succeeds, as the server's STREAM.CREATE of an identical config
    again = at("kv add KM --mirror KB -j", 1)
    assert (again["status"], again["json"]["bucket"], again["json"]["values"]) == (0, "KM", 2)
    for refused in ("kv put KM k1 x -j", "kv del KM k1 -f -j", "kv purge KM k1 -f -j"):
        assert at(refused)["status"] == 1, refused
    edited = at("kv edit KM --history 2 -j")["json"]
    assert (edited["bucket"], edited["history"]) == ("KM", 2)
    assert at("stream ls --names -j", 1)["json"] == ["KV_KB"]
