"""Every check's JSON document (`server check --format json`, `dr check --format json`) is
valid against one JSON Schema of natscli's check result (tests/schemas/check-result.json,
the shape jsm.go's monitor.Result marshals), in every status."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from helpers import ok
from test_server_check import lagging_mirror

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "check-result.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
# dr check: natscli's result for the whole check, plus ``mirrors``, one result per mirror
# (the same shape, with jetlink's kind, cluster and readiness document beside it)
DR_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://jetlink.invalid/schemas/dr-check.json",
    "type": "object",
    "required": ["status", "check_suite", "check_name"],
    "additionalProperties": False,
    "properties": {
        **SCHEMA["properties"],
        "mirrors": {"type": "array", "items": {
            "type": "object", "required": ["status", "check_suite", "check_name", "kind",
                                           "readiness"],
            "properties": {**SCHEMA["properties"], "kind": {"type": "string"},
                           "cluster": {"type": "string"}, "readiness": {
                               "type": "object", "properties": {"recovery_point": {
                                   "$ref": "#/$defs/recovery_point"}}}},
            "additionalProperties": False}},
    },
    "$defs": SCHEMA["$defs"],
}
DR_VALIDATOR = jsonschema.Draft202012Validator(DR_SCHEMA)


@pytest.fixture
def jl(jl, cli_clock, utc):
    jl.clock = cli_clock
    return jl


def valid(result, code, validator=VALIDATOR):
    assert result.exit_code == code, (result.stdout, result.stderr)
    doc = json.loads(result.stdout)
    validator.validate(doc)
    return doc


def test_the_schema_is_a_valid_schema_and_bites():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    for bad in ({"status": "FINE", "check_suite": "stream", "check_name": "S"},
                {"status": "OK", "check_suite": "stream"},
                {"status": "OK", "check_suite": "stream", "check_name": "S",
                 "perf_data": [{"name": "lag", "value": "2"}]},
                {"status": "OK", "check_suite": "stream", "check_name": "S", "extra": 1}):
        assert not VALIDATOR.is_valid(bad), bad


def test_server_check_documents(jl):
    lagging_mirror(jl)
    for args, code in ((("stream", "--stream", "MIR", "--lag-critical", "2"), 2),
                       (("stream", "--stream", "MIR"), 0),
                       (("stream", "--stream", "NOPE"), 2),
                       (("stream", "--stream", "ORIG", "--msgs-warn", "9"), 1)):
        valid(jl("server", "check", *args, "--format", "json"), code)
    ok(jl("consumer", "add", "ORIG", "C", "--pull", "--defaults"))
    valid(jl("server", "check", "consumer", "--stream", "ORIG", "--consumer", "C",
             "--unprocessed-critical", "1", "-j"), 2)
    ok(jl("kv", "add", "CFG"))
    ok(jl("kv", "put", "CFG", "a", "1"))
    valid(jl("server", "check", "kv", "--bucket", "CFG", "--key", "a", "-j"), 0)
    valid(jl("server", "check", "kv", "--bucket", "CFG", "--key", "b", "-j"), 2)


def test_dr_check_documents(jl):
    valid(jl("dr", "check", "-j"), 3, DR_VALIDATOR)  # no mirror at all: UNKNOWN
    lagging_mirror(jl)
    doc = valid(jl("dr", "check", "-j"), 2, DR_VALIDATOR)  # a stalled mirror
    assert doc["check_suite"] == "dr" and doc["mirrors"]
    ok(jl("stream", "add", "ORIG2", "--subjects", "orig2.>", "--defaults"))
    ok(jl("cluster", "add", "east2"))  # (beside its origin a failover would clash: CRITICAL)
    ok(jl("--cluster", "east2", "stream", "add", "MIR2", "--mirror", "ORIG2@local",
          "--defaults"))
    valid(jl("--cluster", "east2", "dr", "check", "MIR2", "-j"), 1,
          DR_VALIDATOR)  # no positions synced: a warning
    # a mirror beside its origin: a failover's subjects would overlap it: CRITICAL, named
    ok(jl("stream", "add", "MIR3", "--mirror", "ORIG2", "--defaults"))
    same = valid(jl("dr", "check", "MIR3", "-j"), 2, DR_VALIDATOR)
    assert '"orig2.>" overlaps "orig2.>" of stream ORIG2' in same["critical"][0]
    assert not DR_VALIDATOR.is_valid({**doc, "mirrors": [{"status": "OK"}]})


def test_stale_and_unreachable_documents(jl):
    """A lag as last reported (``"stale": true`` on its perf item) and a server that refuses
    the connection keep the documents valid; ``stale`` is only ever true."""
    from test_server_check import _origin_gone

    _origin_gone(jl)
    d = valid(jl("--cluster", "east", "server", "check", "stream", "--stream", "BACKUP",
                 "--lag-critical", "1", "-j"), 0)
    assert d["perf_data"][3]["stale"] is True
    d = valid(jl("dr", "check", "-j"), 2, DR_VALIDATOR)  # subjects unknown: critical
    assert d["mirrors"][0]["perf_data"][0]["stale"] is True
    assert not VALIDATOR.is_valid({"status": "OK", "check_suite": "stream", "check_name": "S",
                                   "perf_data": [{"name": "lag", "value": 0,
                                                  "stale": False}]})
    import socket

    with socket.socket() as s:  # bound, never listening: refused
        s.bind(("127.0.0.1", 0))
        url = f"nats://127.0.0.1:{s.getsockname()[1]}"
        valid(jl("-s", url, "dr", "check", "-j"), 2, DR_VALIDATOR)
        for args in (("stream", "--stream", "S"), ("consumer", "--stream", "S", "--consumer",
                                                   "C"), ("kv", "--bucket", "B")):
            valid(jl("-s", url, "server", "check", *args, "-j"), 2)


def test_recovery_point_documents(jl):
    """dr check's ``readiness.recovery_point`` in its three forms (read at the origin, a
    silent origin's, unknown) is valid against the schema's ``recovery_point``, which bites
    on a source it does not know and on a negative age."""
    from jetlink.core.jetstream import JetStream
    from jetlink.core.store import DataDir

    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(jl("--cluster", "west", "stream", "add", "O", "--subjects", "o.>", "--defaults"))
    ok(jl("--cluster", "east", "stream", "add", "M", "--mirror", "O@west", "--defaults"))
    store = DataDir(jl.data)
    try:  # stored in west with no replication step: M lacks it
        JetStream(store.open("west"), jl.clock).publish("o.x", b"1")
    finally:
        store.close()
    jl.clock.advance(2_000_000_000)
    d = valid(jl("dr", "check", "-j"), 1, DR_VALIDATOR)
    rp = d["mirrors"][0]["readiness"]["recovery_point"]
    assert (rp["seconds"], rp["seconds_from"], rp["oldest"]["seq"]) == (2, "origin", 1)
    ok(jl("cluster", "down", "west"))
    ok(jl("--cluster", "east", "stream", "add", "N", "--mirror", "O@west", "--defaults"))
    d = valid(jl("dr", "check", "-j"), 2, DR_VALIDATOR)
    assert [(m["readiness"]["recovery_point"]["seconds"],
             m["readiness"]["recovery_point"]["seconds_from"]) for m in d["mirrors"]] == [
        (2, "silence"), (None, "silence")]
    for bad in ({"seconds_from": "guess"}, {"seconds": -1}, {"oldest": {"seq": 0}}):
        mirror = {**d["mirrors"][0]}
        mirror["readiness"] = {**mirror["readiness"], "recovery_point": {
            **mirror["readiness"]["recovery_point"], **bad}}
        assert not DR_VALIDATOR.is_valid({**d, "mirrors": [mirror]}), bad
