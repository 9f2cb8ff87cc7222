"""Stream create/update checks: one row per rule, exact (code, err_code, description, field).

Every expectation below was observed on a real nats-server 2.15.1 (single server), except the
rows marked ``server=JETLINK_ONLY`` (a rule the server's API cannot reach) and the rows of the
seed's non-editable fields, which the server ACCEPTS (``server=ACCEPTS``: they are jetlink's
documented divergences, see ``validate.DIVERGENCES``).

A row is ``Case(id, op, setup, cfg, expect)``:
- ``op``: ``create`` (check_stream_create), ``update`` (check_stream_update of the stream
  ``cfg["name"]`` created in ``setup``) or ``config`` (check_stream_config alone).
- ``setup``: configs created first, in order, with check_stream_create.
- ``expect``: an :func:`err` tuple, or the full JSON document of the resulting config.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest

from jetlink.core.config.stream import EDITABLE, StreamConfig
from jetlink.core.config.validate import (
    DIVERGENCES,
    check_stream_config,
    check_stream_create,
    check_stream_update,
    with_response_metadata,
)
from jetlink.core.errors import ApiError

S = 1_000_000_000
MS = 1_000_000
SAME, ACCEPTS, JETLINK_ONLY = "same", "accepts", "jetlink-only"
DROP = object()


class Err(NamedTuple):
    code: int
    err_code: int
    description: str
    field: str


def err(err_code: int, description: str, field: str, code: int | None = None) -> Err:
    if code is None:
        code = 500 if err_code in (10052, 10049, 10074) else 400
    return Err(code, err_code, description, field)


def inv(description: str, field: str) -> Err:
    """10052 invalid stream config."""
    return err(10052, description, field)


class Case(NamedTuple):
    id: str
    op: str
    setup: list[dict[str, Any]]
    cfg: dict[str, Any]
    expect: Err | dict[str, Any]
    pedantic: bool = False
    server: str = SAME


def doc(name: str, **over: Any) -> dict[str, Any]:
    """The server's JSON document of a stream after defaults (what STREAM.INFO shows, minus
    the response-only metadata keys), with ``over`` changed (DROP removes a key)."""
    base: dict[str, Any] = {
        "name": name,
        "subjects": [name],
        "retention": "limits",
        "max_consumers": -1,
        "max_msgs": -1,
        "max_bytes": -1,
        "max_age": 0,
        "max_msgs_per_subject": -1,
        "max_msg_size": -1,
        "discard": "old",
        "storage": "file",
        "num_replicas": 1,
        "duplicate_window": 120 * S,
        "compression": "none",
        "allow_direct": False,
        "mirror_direct": False,
        "sealed": False,
        "deny_delete": False,
        "deny_purge": False,
        "allow_rollup_hdrs": False,
        "consumer_limits": {},
        "allow_msg_ttl": False,
        "metadata": {"_nats.req.level": "0"},
    }
    for key, value in over.items():
        if value is DROP:
            base.pop(key, None)
        else:
            base[key] = value
    return base


# Streams used as origins.
ORIGIN = {"name": "O", "subjects": ["o.>"], "max_msg_size": 1000}
ORIGIN_DIRECT = {"name": "O", "subjects": ["o.>"], "allow_direct": True}
MIRROR = {"name": "M", "mirror": {"name": "O"}}
EXT = {"api": "$JS.hub.API"}
UNKNOWN_FN = "invalid mapping destination: unknown function in {{nope(1)}}"

CASES: list[Case] = [
    # ---- names and sizes --------------------------------------------------------------
    Case("name-invalid", "config", [], {"name": "a\\b"},
         inv("stream name is required and can not contain '.', '*', '>', '\\', '/'", "name")),
    Case("name-path-separator-create", "create", [], {"name": "a/b"},
         err(10128, "Stream name can not contain path separators", "name")),
    # the store's step, last: a file stream's directory can not be named with a NUL byte
    # (jetstream_api.go errStreamStoreFailed); a memory stream has no directory
    Case("name-nul-file-store", "create", [], {"name": "A\x00B", "subjects": ["nul"]},
         err(10049, "error creating store for stream", "name")),
    Case("name-nul-memory-store", "create", [],
         {"name": "A\x00B", "subjects": ["nul"], "storage": "memory"},
         doc("A\x00B", subjects=["nul"], storage="memory")),
    Case("order-overlap-before-store", "create", [{"name": "X", "subjects": ["nul"]}],
         {"name": "A\x00B", "subjects": ["nul"]},
         err(10065, "subjects overlap with an existing stream", "subjects")),
    Case("name-too-long", "create", [], {"name": "N" * 256},
         inv("stream name is too long, maximum allowed is 255", "name")),
    Case("description-too-long", "create", [], {"name": "X", "description": "d" * 4097},
         inv("stream description is too long, maximum allowed is 4096", "description")),
    # The server counts its own "_nats.req.level": "0" (16 bytes) on create.
    Case("metadata-too-big", "create", [], {"name": "X", "metadata": {"k": "v" * (131072 - 16)}},
         inv("stream metadata exceeds maximum size of 131072 bytes", "metadata")),
    Case("name-exists-different-config", "create", [{"name": "X"}],
         {"name": "X", "description": "other"},
         err(10058, "stream name already in use with a different configuration", "name")),
    # ---- replicas and limits -------------------------------------------------------------
    Case("replicas-max", "create", [], {"name": "X", "num_replicas": 6},
         inv("maximum replicas is 5", "num_replicas")),
    Case("replicas-negative", "create", [], {"name": "X", "num_replicas": -1},
         err(10133, "replicas count cannot be negative", "num_replicas")),
    Case("replicas-single-server", "create", [], {"name": "X", "num_replicas": 3},
         err(10074, "replicas > 1 not supported in non-clustered mode", "num_replicas")),
    Case("max-age-negative", "create", [], {"name": "X", "max_age": -1},
         inv("max age can not be negative", "max_age")),
    Case("max-age-too-small", "create", [], {"name": "X", "max_age": 50 * MS},
         inv("max age needs to be >= 100ms", "max_age")),
    # ---- duplicate window ----------------------------------------------------------------
    Case("dupe-window-negative", "create", [], {"name": "X", "duplicate_window": -1},
         inv("duplicates window can not be negative", "duplicate_window")),
    Case("dupe-window-over-max-age", "create", [],
         {"name": "X", "max_age": 1 * S, "duplicate_window": 2 * S},
         inv("duplicates window can not be larger then max age", "duplicate_window")),
    Case("dupe-window-too-small", "create", [], {"name": "X", "duplicate_window": 50 * MS},
         inv("duplicates window needs to be >= 100ms", "duplicate_window")),
    # ---- subjects ---------------------------------------------------------------------------
    Case("subject-invalid", "create", [], {"name": "X", "subjects": ["a..b"]},
         inv("invalid subject", "subjects")),
    # "duplicate subjects detected" is unreachable on the server: the pairwise overlap test
    # sees the duplicate first.
    Case("subject-duplicate", "create", [], {"name": "X", "subjects": ["a", "a"]},
         inv('subject "a" overlaps with "a"', "subjects")),
    Case("subjects-overlap-inside-stream", "create", [], {"name": "X", "subjects": ["a.>", "a.b"]},
         inv('subject "a.>" overlaps with "a.b"', "subjects")),
    Case("subjects-overlap-other-stream", "create", [{"name": "A", "subjects": ["a.>"]}],
         {"name": "X", "subjects": ["x", "a.b"]},
         err(10065, "subjects overlap with an existing stream", "subjects")),
    Case("capture-all-needs-no-ack", "create", [], {"name": "X", "subjects": [">"]},
         inv("capturing all subjects requires no-ack to be true", "subjects")),
    Case("capture-all-needs-r1", "create", [],
         {"name": "X", "subjects": [">"], "no_ack": True, "num_replicas": 3},
         inv("capturing all subjects requires replicas of 1", "subjects")),
    Case("js-api-needs-no-ack", "create", [], {"name": "X", "subjects": ["$JS.API.>"]},
         inv("subjects that overlap with jetstream api require no-ack to be true", "subjects")),
    Case("jsc-needs-no-ack", "create", [], {"name": "X", "subjects": ["$JSC.x"]},
         inv("subjects that overlap with jetstream api require no-ack to be true", "subjects")),
    Case("nrg-needs-no-ack", "create", [], {"name": "X", "subjects": ["$NRG.>"]},
         inv("subjects that overlap with jetstream api require no-ack to be true", "subjects")),
    Case("wildcard-reaching-js-api-needs-no-ack", "create", [], {"name": "X", "subjects": ["*.x"]},
         inv("subjects that overlap with jetstream api require no-ack to be true", "subjects")),
    Case("sys-needs-no-ack", "create", [], {"name": "X", "subjects": ["$SYS.>"]},
         inv("subjects that overlap with system api require no-ack to be true", "subjects")),
    # ---- feature combinations ---------------------------------------------------------------
    Case("rollup-needs-purge", "create", [],
         {"name": "X", "deny_purge": True, "allow_rollup_hdrs": True},
         inv("roll-ups require the purge permission", "allow_rollup_hdrs")),
    Case("discard-new-per-subject-needs-discard-new", "create", [],
         {"name": "X", "discard_new_per_subject": True, "max_msgs_per_subject": 1},
         inv("discard new per subject requires discard new policy to be set",
             "discard_new_per_subject")),
    Case("discard-new-per-subject-needs-limit", "create", [],
         {"name": "X", "discard_new_per_subject": True, "discard": "new"},
         inv("discard new per subject requires max msgs per subject > 0",
             "discard_new_per_subject")),
    Case("marker-ttl-too-small", "create", [],
         {"name": "X", "subject_delete_marker_ttl": 500 * MS},
         inv("subject delete marker TTL must be at least 1 second", "subject_delete_marker_ttl")),
    Case("marker-ttl-negative", "create", [], {"name": "X", "subject_delete_marker_ttl": -1},
         inv("subject delete marker TTL must not be negative", "subject_delete_marker_ttl")),
    Case("counter-discard-new", "create", [],
         {"name": "X", "allow_msg_counter": True, "discard": "new"},
         inv("counter stream cannot use discard new", "discard")),
    Case("counter-ttl", "create", [],
         {"name": "X", "allow_msg_counter": True, "allow_msg_ttl": True},
         inv("counter stream cannot use message TTLs", "allow_msg_ttl")),
    Case("counter-schedules", "create", [],
         {"name": "X", "allow_msg_counter": True, "allow_msg_schedules": True},
         inv("counter stream cannot use message schedules", "allow_msg_schedules")),
    Case("counter-retention", "create", [],
         {"name": "X", "allow_msg_counter": True, "retention": "interest"},
         inv("counter stream can only use limits retention", "retention")),
    Case("schedules-discard-new", "create", [],
         {"name": "X", "allow_msg_schedules": True, "discard": "new"},
         inv("message scheduling cannot use discard new", "discard")),
    Case("async-persist-memory", "create", [],
         {"name": "X", "persist_mode": "async", "storage": "memory"},
         inv("async persist mode is only supported on file storage", "persist_mode")),
    Case("async-persist-replicas", "create", [],
         {"name": "X", "persist_mode": "async", "num_replicas": 3},
         inv("async persist mode is not supported on replicated streams", "persist_mode")),
    Case("async-persist-atomic", "create", [],
         {"name": "X", "persist_mode": "async", "allow_atomic": True},
         inv("async persist mode is not supported with atomic batch publish", "persist_mode")),
    Case("placement-preferred", "create", [], {"name": "X", "placement": {"preferred": "s1"}},
         inv("preferred server not permitted in placement", "placement.preferred")),
    # ---- create only -------------------------------------------------------------------------
    Case("create-sealed", "create", [], {"name": "X", "sealed": True},
         inv("stream configuration for create can not be sealed", "sealed")),
    Case("create-mirror-direct-without-mirror", "create", [], {"name": "X", "mirror_direct": True},
         inv("stream has no mirror but does have mirror direct", "mirror_direct")),
    # ---- mirror table ------------------------------------------------------------------------
    Case("mirror-first-seq", "create", [], {**MIRROR, "first_seq": 5},
         err(10143, "stream mirrors can not have first sequence configured", "first_seq")),
    Case("mirror-subjects", "create", [], {**MIRROR, "subjects": ["m"]},
         err(10034, "stream mirrors can not contain subjects", "subjects")),
    Case("mirror-sources", "create", [], {**MIRROR, "sources": [{"name": "S"}]},
         err(10031, "stream mirrors can not also contain other sources", "sources")),
    Case("mirror-counter", "create", [], {**MIRROR, "allow_msg_counter": True},
         err(10173, "stream mirrors can not also calculate counters", "allow_msg_counter")),
    Case("mirror-atomic", "create", [], {**MIRROR, "allow_atomic": True},
         err(10198, "stream mirrors can not also use atomic publishing", "allow_atomic")),
    Case("mirror-batched", "create", [], {**MIRROR, "allow_batched": True},
         err(10209, "stream mirrors can not also use batch publishing", "allow_batched")),
    Case("mirror-schedules", "create", [], {**MIRROR, "allow_msg_schedules": True},
         err(10186, "stream mirrors can not also schedule messages", "allow_msg_schedules")),
    Case("mirror-consumer-invalid", "create", [],
         {"name": "M",
          "mirror": {"name": "O", "consumer": {"name": "c.x", "deliver_subject": "d"}}},
         err(10213, "stream mirror consumer config is invalid", "mirror.consumer")),
    Case("mirror-filter-and-transforms", "create", [],
         {"name": "M", "mirror": {"name": "O", "filter_subject": "o.a",
                                  "subject_transforms": [{"src": "o.b", "dest": "x.b"}]}},
         err(10150, "mirror with multiple subject transforms cannot also have a single subject "
             "filter", "mirror.filter_subject")),
    Case("mirror-delete-markers", "create", [], {**MIRROR, "subject_delete_marker_ttl": 1 * S},
         inv("subject delete markers forbidden on mirrors", "subject_delete_marker_ttl")),
    Case("mirror-transform-source-invalid", "create", [],
         {"name": "M",
          "mirror": {"name": "O", "subject_transforms": [{"src": "a..b", "dest": "x"}]}},
         err(10151, "mirror transform source: invalid subject a..b",
             "mirror.subject_transforms[0].src")),
    Case("mirror-transform-destination-invalid", "create", [],
         {"name": "M", "mirror": {"name": "O", "subject_transforms": [
             {"src": "o.*", "dest": "x.{{nope(1)}}"}]}},
         err(10154, f"mirror transform: {UNKNOWN_FN}", "mirror.subject_transforms[0].dest")),
    Case("mirror-transforms-overlap", "create", [],
         {"name": "M", "mirror": {"name": "O", "subject_transforms": [
             {"src": "o.>", "dest": ""}, {"src": "o.b", "dest": "x.b"}]}},
         err(10152, "mirror subject filters can not overlap", "mirror.subject_transforms[1].src")),
    Case("mirror-name-invalid", "create", [], {"name": "M", "mirror": {"name": "a.b"}},
         err(10142, "mirrored stream name is invalid", "mirror.name")),
    Case("mirror-max-msg-size", "create", [ORIGIN], {**MIRROR, "max_msg_size": 10},
         err(10030, "stream mirror must have max message size >= source", "max_msg_size")),
    Case("mirror-filter-invalid", "create", [], {"name": "M", "mirror": {"name": "O",
                                                                        "filter_subject": "o..x"}},
         err(10049, "subject filter 'o..x' for the mirror invalid subject",
             "mirror.filter_subject")),
    Case("mirror-cycle", "create", [{"name": "A", "mirror": {"name": "B"}}],
         {"name": "B", "mirror": {"name": "A"}}, inv("detected cycle", "mirror.name")),
    Case("mirror-of-itself", "create", [], {"name": "M", "mirror": {"name": "M"}},
         inv("detected cycle", "mirror.name")),
    # ---- source table ------------------------------------------------------------------------
    Case("source-name-invalid", "create", [],
         {"name": "X", "sources": [{"name": "O"}, {"name": ""}]},
         err(10141, "sourced stream name is invalid", "sources[1].name")),
    Case("source-duplicate", "create", [],
         {"name": "X", "sources": [{"name": "O"}, {"name": "O", "filter_subject": ">"}]},
         err(10140, "duplicate source configuration detected", "sources[1]")),
    Case("source-filter-and-transforms", "create", [],
         {"name": "X", "sources": [{"name": "O", "filter_subject": "o.a",
                                    "subject_transforms": [{"src": "o.b", "dest": "x.b"}]}]},
         err(10144, "source with multiple subject transforms cannot also have a single subject "
             "filter", "sources[0].filter_subject")),
    Case("source-transform-source-invalid", "create", [],
         {"name": "X", "sources": [{"name": "O", "subject_transforms": [{"src": "a..b",
                                                                          "dest": "x"}]}]},
         err(10145, "source transform source: invalid subject a..b",
             "sources[0].subject_transforms[0].src")),
    Case("source-transform-destination-invalid", "create", [],
         {"name": "X", "sources": [{"name": "O", "subject_transforms": [
             {"src": "o.*", "dest": "x.{{nope(1)}}"}]}]},
         err(10146, f"source transform: {UNKNOWN_FN}", "sources[0].subject_transforms[0].dest")),
    Case("source-transforms-overlap", "create", [],
         {"name": "X", "sources": [{"name": "O", "subject_transforms": [
             {"src": "o.>", "dest": "x.>"}, {"src": "o.b", "dest": "y.b"}]}]},
         err(10147, "source filters can not overlap", "sources[0].subject_transforms[0].src")),
    Case("source-max-msg-size", "create", [ORIGIN],
         {"name": "X", "sources": [{"name": "O"}], "max_msg_size": 10},
         err(10046, "stream source must have max message size >= target", "max_msg_size")),
    Case("source-filter-invalid", "create", [],
         {"name": "X", "sources": [{"name": "O", "filter_subject": "o..x"}]},
         err(10049, "subject filter 'o..x' for the source: invalid subject",
             "sources[0].filter_subject")),
    Case("source-schedules", "create", [],
         {"name": "X", "sources": [{"name": "O"}], "allow_msg_schedules": True},
         err(10187, "stream source can not also schedule messages", "allow_msg_schedules")),
    Case("source-consumer-invalid", "create", [],
         {"name": "X", "sources": [{"name": "O", "opt_start_seq": 5,
                                    "consumer": {"name": "c", "deliver_subject": "d"}}]},
         err(10215, "stream source consumer config is invalid", "sources[0].consumer")),
    Case("source-consumer-duplicate", "create", [],
         {"name": "X", "sources": [
             {"name": "O", "consumer": {"name": "c", "deliver_subject": "d1"},
              "subject_transforms": [{"src": "o.a", "dest": ""}]},
             {"name": "O", "consumer": {"name": "c", "deliver_subject": "d2"},
              "subject_transforms": [{"src": "o.b", "dest": ""}]}]},
         err(10216, "duplicate stream source consumer detected", "sources[1].consumer.name")),
    Case("source-cycle", "create", [{"name": "A", "subjects": ["a"], "sources": [{"name": "B"}]}],
         {"name": "B", "subjects": ["b"], "sources": [{"name": "A"}]},
         inv("detected cycle", "sources[0].name")),
    Case("source-of-itself", "create", [], {"name": "X", "sources": [{"name": "X"}]},
         inv("detected cycle", "sources[0].name")),
    # The server's walk also reports a "cycle" for this diamond (X <- B, X <- C <- B): B is
    # visited before C, whose source B is then seen as visited.
    Case("source-diamond-reported-as-cycle", "create",
         [{"name": "B", "subjects": ["b"]},
          {"name": "C", "subjects": ["c"], "sources": [{"name": "B"}]}],
         {"name": "X", "subjects": ["x"], "sources": [{"name": "B"}, {"name": "C"}]},
         inv("detected cycle", "sources[1].name")),
    # ---- external prefixes ---------------------------------------------------------------
    Case("external-deliver-wildcard", "create", [],
         {"name": "X", "sources": [{"name": "E", "external": {**EXT, "deliver": "dlv.*"}}]},
         err(10024, "stream external delivery prefix dlv.* must not contain wildcards",
             "sources[0].external.deliver")),
    Case("external-deliver-overlaps", "create", [ORIGIN],
         {"name": "X", "sources": [{"name": "O"},
                                   {"name": "E", "external": {**EXT, "deliver": "o"}}]},
         err(10022, "stream external delivery prefix o overlaps with stream subject o.>",
             "sources[1].external.deliver")),
    Case("external-api-overlaps", "create", [],
         {"name": "M", "mirror": {"name": "E", "external": {"api": "$JS.API"}}},
         err(10021, "stream external api prefix $JS.API must not overlap with $JS.API",
             "mirror.external.api")),
    Case("external-api-wildcard", "create", [],
         {"name": "X", "sources": [{"name": "E", "external": {"api": "$JS.*.API"}}]},
         inv('stream external api prefix "$JS.*.API" must be a valid subject without wildcards',
             "sources[0].external.api")),
    # ---- transforms and republish ----------------------------------------------------------
    Case("transform-source-invalid", "create", [],
         {"name": "X", "subjects": ["in.>"], "subject_transform": {"src": "a..b", "dest": "x"}},
         err(10155, "stream transform source: invalid subject a..b", "subject_transform.src")),
    Case("transform-destination-invalid", "create", [],
         {"name": "X", "subjects": ["in.*"],
          "subject_transform": {"src": "in.*", "dest": "x.{{nope(1)}}"}},
         err(10156, f"stream transform: {UNKNOWN_FN}", "subject_transform.dest")),
    Case("republish-cycle", "create", [],
         {"name": "X", "subjects": ["x.>"], "republish": {"dest": "x.out"}},
         inv("stream configuration for republish destination forms a cycle", "republish.dest")),
    Case("republish-transform-invalid", "create", [],
         {"name": "X", "subjects": ["r5.*"], "republish": {"src": "r5.*", "dest": "out5.>"}},
         inv("stream configuration for republish with transform from 'r5.*' to 'out5.>' not "
             "valid", "republish")),
    # ---- pedantic mode -----------------------------------------------------------------------
    Case("pedantic-limit-below-minus-one", "create", [], {"name": "X", "max_msgs": -2},
         err(10157, "pedantic mode: max_msgs must be set to -1", "max_msgs"), pedantic=True),
    Case("pedantic-dupe-window-from-max-age", "create", [], {"name": "X", "max_age": 1 * S},
         err(10157, "pedantic mode: duplicate window cannot be bigger than max age",
             "duplicate_window"), pedantic=True),
    Case("pedantic-marker-without-ttl", "create", [],
         {"name": "X", "subject_delete_marker_ttl": 1 * S},
         inv("subject delete marker cannot be set if message TTLs are disabled", "allow_msg_ttl"),
         pedantic=True),
    Case("pedantic-marker-without-rollup", "create", [],
         {"name": "X", "subject_delete_marker_ttl": 1 * S, "allow_msg_ttl": True},
         inv("subject delete marker cannot be set if roll-ups are disabled", "allow_rollup_hdrs"),
         pedantic=True),
    Case("pedantic-schedules-without-rollup", "create", [],
         {"name": "X", "allow_msg_schedules": True},
         inv("message scheduling cannot be set if roll-ups are disabled", "allow_rollup_hdrs"),
         pedantic=True),
    Case("pedantic-republish-source-empty", "create", [],
         {"name": "X", "subjects": ["x"], "republish": {"dest": "out"}},
         err(10157, "pedantic mode: republish source can not be empty", "republish.src"),
         pedantic=True),
    Case("pedantic-mirror-direct", "create", [ORIGIN_DIRECT], MIRROR,
         err(10157, "pedantic mode: origin stream has direct get set, mirror has it disabled",
             "mirror_direct"), pedantic=True),
    Case("pedantic-implicit-republish", "create", [],
         {"name": "X", "subjects": ["in.>"], "subject_transform": {"src": "in.>", "dest": "out.>"},
          "republish": {"src": ">", "dest": ">"}},
         err(10157, "pedantic mode: implicit republish based on subject transform", "republish"),
         pedantic=True),
    # ---- update only (the server's configUpdateCheck, in order) ----------------------------
    # The stream is named by the request: a config naming another stream is 10056.
    Case("update-name-must-match", "update", [{"name": "X"}], {"name": "Y", "_old": "X"},
         err(10056, "stream name in subject does not match request", "name")),
    Case("update-replicas-single-server", "update", [{"name": "X"}],
         {"name": "X", "num_replicas": 3},
         err(10074, "replicas > 1 not supported in non-clustered mode", "num_replicas")),
    Case("update-storage", "update", [{"name": "X"}], {"name": "X", "storage": "memory"},
         inv("stream configuration update can not change storage type", "storage")),
    Case("update-retention-workqueue", "update", [{"name": "X"}],
         {"name": "X", "retention": "workqueue"},
         inv("stream configuration update can not change retention policy to/from workqueue",
             "retention")),
    Case("update-unseal", "update", [{"name": "X"}, ("seal", "X")], {"name": "X"},
         inv("stream configuration update can not unseal a sealed stream", "sealed")),
    Case("update-cancel-deny-delete", "update", [{"name": "X", "deny_delete": True}],
         {"name": "X"},
         inv("stream configuration update can not cancel deny message deletes", "deny_delete")),
    Case("update-cancel-deny-purge", "update", [{"name": "X", "deny_purge": True}], {"name": "X"},
         inv("stream configuration update can not cancel deny purge", "deny_purge")),
    Case("update-mirror-change", "update", [MIRROR],
         {"name": "M", "mirror": {"name": "O", "filter_subject": "o.a"}},
         err(10055, "stream mirror configuration can not be updated", "mirror")),
    Case("update-mirror-add", "update", [{"name": "X"}], {"name": "X", "mirror": {"name": "O"}},
         err(10055, "stream mirror configuration can not be updated", "mirror")),
    Case("update-discard-new-per-subject", "update", [{"name": "X"}],
         {"name": "X", "discard_new_per_subject": True, "discard": "new"},
         inv("discard new per subject requires max msgs per subject > 0",
             "discard_new_per_subject")),
    Case("update-ttl-disable", "update", [{"name": "X", "allow_msg_ttl": True}], {"name": "X"},
         inv("message TTL status can not be disabled", "allow_msg_ttl")),
    Case("update-counter-enable", "update", [{"name": "X"}],
         {"name": "X", "allow_msg_counter": True},
         inv("stream configuration update can not change message counter setting",
             "allow_msg_counter")),
    Case("update-counter-disable", "update", [{"name": "X", "allow_msg_counter": True}],
         {"name": "X"},
         inv("stream configuration update can not change message counter setting",
             "allow_msg_counter")),
    Case("update-schedules-disable", "update", [{"name": "X", "allow_msg_schedules": True}],
         {"name": "X", "allow_rollup_hdrs": True},
         inv("message schedules can not be disabled", "allow_msg_schedules")),
    Case("update-persist-mode", "update", [{"name": "X"}], {"name": "X", "persist_mode": "async"},
         inv("stream configuration update can not change persist mode", "persist_mode")),
    # The update is checked as sent, then again with the server's "_nats.req.level" counted.
    Case("update-metadata-counts-server-key", "update", [{"name": "X"}],
         {"name": "X", "metadata": {"k": "v" * (131072 - 1)}},
         inv("stream metadata exceeds maximum size of 131072 bytes", "metadata")),
    Case("update-subjects-overlap-other-stream", "update",
         [{"name": "A", "subjects": ["a.>"]}, {"name": "X", "subjects": ["x"]}],
         {"name": "X", "subjects": ["x", "a.b"]},
         err(10065, "subjects overlap with an existing stream", "subjects")),
    Case("update-source-cycle", "update",
         [{"name": "A", "subjects": ["a"], "sources": [{"name": "X"}]}, {"name": "X"}],
         {"name": "X", "sources": [{"name": "A"}]}, inv("detected cycle", "sources[0].name")),
    # ---- the seed's non-editable fields the server accepts (jetlink's divergences) ----------
    Case("not-editable-max-consumers", "update", [{"name": "X"}], {"name": "X", "max_consumers": 5},
         inv("stream configuration update can not change max_consumers", "max_consumers"),
         server=ACCEPTS),
    Case("not-editable-first-seq", "update", [{"name": "X"}], {"name": "X", "first_seq": 5},
         inv("stream configuration update can not change first_seq", "first_seq"), server=ACCEPTS),
    Case("not-editable-deny-delete", "update", [{"name": "X"}], {"name": "X", "deny_delete": True},
         inv("stream configuration update can not change deny_delete", "deny_delete"),
         server=ACCEPTS),
    Case("not-editable-deny-purge", "update", [{"name": "X"}], {"name": "X", "deny_purge": True},
         inv("stream configuration update can not change deny_purge", "deny_purge"),
         server=ACCEPTS),
    # ---- order: with two mistakes, the server's first check wins -----------------------------
    Case("order-path-separator-before-sealed", "create", [], {"name": "a/b", "sealed": True},
         err(10128, "Stream name can not contain path separators", "name")),
    Case("order-sealed-before-checks", "create", [], {"name": "X", "sealed": True, "max_age": -1},
         inv("stream configuration for create can not be sealed", "sealed")),
    Case("order-metadata-before-replicas", "create", [],
         {"name": "X", "num_replicas": 6, "metadata": {"k": "v" * 131072}},
         inv("stream metadata exceeds maximum size of 131072 bytes", "metadata")),
    Case("order-max-age-before-dupe-window", "create", [],
         {"name": "X", "max_age": -1, "duplicate_window": -1},
         inv("max age can not be negative", "max_age")),
    Case("order-mirror-first-seq-before-subjects", "create", [],
         {**MIRROR, "subjects": ["m"], "first_seq": 3},
         err(10143, "stream mirrors can not have first sequence configured", "first_seq")),
    Case("order-cycle-before-subjects", "create", [],
         {"name": "X", "subjects": ["a..b"], "sources": [{"name": "X"}]},
         inv("detected cycle", "sources[0].name")),
    Case("order-checks-before-replicas-single-server", "create", [],
         {"name": "X", "num_replicas": 3, "subjects": ["a..b"]},
         inv("invalid subject", "subjects")),
    Case("order-replicas-before-name-exists", "create", [{"name": "X"}],
         {"name": "X", "num_replicas": 3},
         err(10074, "replicas > 1 not supported in non-clustered mode", "num_replicas")),
    Case("order-name-exists-before-overlap", "create", [{"name": "A", "subjects": ["a"]},
                                                         {"name": "X"}],
         {"name": "X", "subjects": ["a"]},
         err(10058, "stream name already in use with a different configuration", "name")),
    Case("order-source-filter-before-overlap", "create", [{"name": "A", "subjects": ["a"]}],
         {"name": "X", "subjects": ["a"], "sources": [{"name": "O", "filter_subject": "o..x"}]},
         err(10049, "subject filter 'o..x' for the source: invalid subject",
             "sources[0].filter_subject")),
    Case("order-update-storage-before-retention", "update", [{"name": "X"}],
         {"name": "X", "storage": "memory", "retention": "workqueue"},
         inv("stream configuration update can not change storage type", "storage")),
    Case("order-update-server-rule-before-divergence", "update", [{"name": "X"}],
         {"name": "X", "max_consumers": 5, "allow_msg_counter": True},
         inv("stream configuration update can not change message counter setting",
             "allow_msg_counter")),
    Case("order-update-overlap-before-divergence", "update",
         [{"name": "A", "subjects": ["a"]}, {"name": "X"}],
         {"name": "X", "subjects": ["a"], "first_seq": 9},
         err(10065, "subjects overlap with an existing stream", "subjects")),
    # ---- defaults: the resulting configuration, field by field -------------------------------
    Case("defaults-minimal", "create", [], {"name": "X"}, doc("X")),
    Case("defaults-limits-below-minus-one", "create", [],
         {"name": "X", "max_msgs": -5, "max_bytes": -2, "max_msgs_per_subject": -3,
          "max_msg_size": -4, "max_consumers": -9},
         doc("X")),
    Case("defaults-dupe-window-from-max-age", "create", [], {"name": "X", "max_age": 60 * S},
         doc("X", max_age=60 * S, duplicate_window=60 * S)),
    Case("defaults-dupe-window-long-max-age", "create", [], {"name": "X", "max_age": 3600 * S},
         doc("X", max_age=3600 * S)),
    Case("defaults-sources-keep-no-dupe-window", "create", [],
         {"name": "X", "sources": [{"name": "O"}]},
         doc("X", subjects=DROP, duplicate_window=DROP, sources=[{"name": "O"}])),
    Case("defaults-mirror", "create", [ORIGIN], MIRROR,
         doc("M", subjects=DROP, duplicate_window=DROP, mirror={"name": "O"})),
    Case("defaults-mirror-direct-from-origin", "create", [ORIGIN_DIRECT], MIRROR,
         doc("M", subjects=DROP, duplicate_window=DROP, mirror={"name": "O"},
             mirror_direct=True)),
    Case("defaults-mirror-direct-follows-origin", "create", [ORIGIN],
         {**MIRROR, "mirror_direct": True},
         doc("M", subjects=DROP, duplicate_window=DROP, mirror={"name": "O"})),
    Case("defaults-mirror-filter-and-start", "create", [],
         {"name": "M", "mirror": {"name": "O", "filter_subject": "o.a", "opt_start_seq": 3,
                                  "opt_start_time": "2024-01-02T03:04:05Z"}},
         doc("M", subjects=DROP, duplicate_window=DROP,
             mirror={"name": "O", "opt_start_seq": 3, "opt_start_time": "2024-01-02T03:04:05Z",
                     "filter_subject": "o.a"})),
    Case("defaults-delete-markers", "create", [],
         {"name": "X", "subject_delete_marker_ttl": 1 * S, "deny_purge": True},
         doc("X", allow_rollup_hdrs=True, allow_msg_ttl=True, subject_delete_marker_ttl=1 * S,
             metadata={"_nats.req.level": "1"})),
    Case("defaults-schedules-force-rollup", "create", [],
         {"name": "X", "allow_msg_schedules": True},
         doc("X", allow_rollup_hdrs=True, allow_msg_schedules=True,
             metadata={"_nats.req.level": "2"})),
    Case("defaults-api-level-batched", "create", [],
         {"name": "X", "allow_atomic": True, "allow_batched": True},
         doc("X", allow_atomic=True, allow_batched=True, metadata={"_nats.req.level": "4"})),
    Case("defaults-republish-source", "create", [],
         {"name": "X", "subjects": ["x.>"], "republish": {"dest": "out.>"}},
         doc("X", subjects=["x.>"], republish={"src": ">", "dest": "out.>"})),
    Case("defaults-implicit-republish", "create", [],
         {"name": "X", "subjects": ["in.>"], "subject_transform": {"src": "in.>", "dest": "out.>"},
          "republish": {"src": ">", "dest": ">"}},
         doc("X", subjects=["in.>"], subject_transform={"src": "in.>", "dest": "out.>"},
             republish={"src": "out.>", "dest": "out.>"})),
    Case("defaults-empty-placement-dropped", "create", [], {"name": "X", "placement": {}},
         doc("X")),
    Case("defaults-metadata-at-limit", "create", [],
         {"name": "X", "metadata": {"k": "v" * (131072 - 17)}},
         doc("X", metadata={"_nats.req.level": "0", "k": "v" * (131072 - 17)})),
    Case("defaults-user-cannot-set-server-metadata", "create", [],
         {"name": "X", "metadata": {"_nats.ver": "0.0.1", "_nats.req.level": "9", "a": "b"}},
         doc("X", metadata={"_nats.req.level": "0", "a": "b"})),
    Case("create-same-config-again", "create", [{"name": "X"}], {"name": "X", "max_msgs": -1},
         doc("X")),
    Case("subject-js-event-allowed", "create", [], {"name": "X", "subjects": ["$JS.EVENT.>"]},
         doc("X", subjects=["$JS.EVENT.>"])),
    Case("subject-sys-account-allowed", "create", [], {"name": "X", "subjects": ["$SYS.ACCOUNT.x"]},
         doc("X", subjects=["$SYS.ACCOUNT.x"])),
    Case("subject-capture-all-with-no-ack", "create", [],
         {"name": "X", "subjects": [">"], "no_ack": True},
         doc("X", subjects=[">"], no_ack=True)),
    Case("source-cycle-filtered-out", "create",
         [{"name": "A", "subjects": ["a.>"], "sources": [{"name": "B", "filter_subject": "b.>"}]}],
         {"name": "B", "subjects": ["b.>"], "sources": [{"name": "A", "filter_subject": "zz"}]},
         doc("B", subjects=["b.>"], duplicate_window=DROP,
             sources=[{"name": "A", "filter_subject": "zz"}])),
    # The walk compares a filter with the subjects of the stream it is on: a stream without
    # subjects of its own closes no cycle (though a message then goes round for ever).
    Case("source-cycle-through-stream-without-subjects", "create",
         [{"name": "A", "sources": [{"name": "B", "filter_subject": "b.1"}]}],
         {"name": "B", "subjects": ["b.>"], "sources": [{"name": "A"}]},
         doc("B", subjects=["b.>"], duplicate_window=DROP, sources=[{"name": "A"}])),
    # subject_transforms are not looked at: a source with transforms and no filter closes one
    Case("source-cycle-transforms-not-a-filter", "create",
         [{"name": "A", "subjects": ["a.>"], "sources": [
             {"name": "B", "subject_transforms": [{"src": "zzz.>", "dest": "q.>"}]}]}],
         {"name": "B", "subjects": ["b.>"], "sources": [{"name": "A"}]},
         inv("detected cycle", "sources[0].name")),
    Case("source-diamond-other-order", "create",
         [{"name": "B", "subjects": ["b"]},
          {"name": "C", "subjects": ["c"], "sources": [{"name": "B"}]}],
         {"name": "X", "subjects": ["x"], "sources": [{"name": "C"}, {"name": "B"}]},
         doc("X", subjects=["x"], duplicate_window=DROP, sources=[{"name": "C"}, {"name": "B"}])),
    Case("update-source-filter-not-checked", "update", [{"name": "X", "sources": [{"name": "O"}]}],
         {"name": "X", "sources": [{"name": "O", "filter_subject": "o..x"}]},
         doc("X", subjects=DROP, duplicate_window=DROP,
             sources=[{"name": "O", "filter_subject": "o..x"}])),
    Case("update-mirror-same", "update", [ORIGIN, MIRROR], {**MIRROR, "description": "d"},
         doc("M", subjects=DROP, duplicate_window=DROP, mirror={"name": "O"}, description="d")),
    Case("update-mirror-removed", "update", [MIRROR], {"name": "M", "subjects": ["m"]},
         doc("M", subjects=["m"])),
    Case("update-seal", "update", [{"name": "X", "max_age": 3600 * S}],
         {"name": "X", "max_age": 3600 * S, "sealed": True, "allow_rollup_hdrs": True},
         doc("X", sealed=True, discard="new", deny_delete=True, deny_purge=True)),
    Case("update-ttl-enable", "update", [{"name": "X"}], {"name": "X", "allow_msg_ttl": True},
         doc("X", allow_msg_ttl=True, metadata={"_nats.req.level": "1"})),
    Case("update-schedules-enable", "update", [{"name": "X"}],
         {"name": "X", "allow_msg_schedules": True},
         doc("X", allow_rollup_hdrs=True, allow_msg_schedules=True,
             metadata={"_nats.req.level": "2"})),
    Case("update-non-editable-fields-unchanged", "update", [{"name": "X", "max_consumers": 4}],
         {"name": "X", "max_consumers": 4, "description": "d"},
         doc("X", max_consumers=4, description="d")),
    # Only a create refuses mirror_direct without a mirror.
    Case("update-mirror-direct-without-mirror", "update", [{"name": "X"}],
         {"name": "X", "mirror_direct": True}, doc("X", mirror_direct=True)),
    Case("config-defaults-no-server-metadata", "config", [], {"name": "X"},
         doc("X", metadata=DROP)),
]


def _create_all(setup: list[Any]) -> dict[str, StreamConfig]:
    existing: dict[str, StreamConfig] = {}
    for item in setup:
        if isinstance(item, tuple):  # ("seal", name): seal an existing stream
            old = existing[item[1]]
            existing[item[1]] = check_stream_update(old, old.replace(sealed=True), existing)
            continue
        cfg = check_stream_create(StreamConfig.from_json(item), existing)
        existing[cfg.name] = cfg
    return existing


def run_case(case: Case) -> StreamConfig:
    existing = _create_all(case.setup)
    body = {k: v for k, v in case.cfg.items() if k != "_old"}
    cfg = StreamConfig.from_json(body)
    if case.op == "create":
        return check_stream_create(cfg, existing, pedantic=case.pedantic)
    if case.op == "update":
        old = existing[case.cfg.get("_old", cfg.name)]
        return check_stream_update(old, cfg, existing, pedantic=case.pedantic)
    return check_stream_config(cfg, existing.get, pedantic=case.pedantic)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule(case: Case) -> None:
    if isinstance(case.expect, Err):
        with pytest.raises(ApiError) as info:
            run_case(case)
        e = info.value
        assert (e.code, e.err_code, e.description) == case.expect[:3]
        assert e.field == case.expect.field
    else:
        got = run_case(case).to_json()
        for key in sorted(set(got) | set(case.expect)):
            assert got.get(key, "<absent>") == case.expect.get(key, "<absent>"), key


def test_case_ids_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))


def test_every_divergence_has_a_row_and_no_more() -> None:
    rows = {c.expect.field for c in CASES if c.server == ACCEPTS}
    assert rows == set(DIVERGENCES)
    # Every seed-only rule concerns a field the seed calls not editable.
    assert all(EDITABLE[f] == "no" for f in DIVERGENCES)


def test_every_non_editable_field_is_refused_on_update() -> None:
    """Each field the seed marks "no"/"once" has an update row refusing the change."""
    refused = {c.expect.field for c in CASES if c.op == "update" and isinstance(c.expect, Err)}
    not_editable = {f for f, how in EDITABLE.items() if how in ("no", "once")}
    assert not_editable <= refused, not_editable - refused


def test_once_fields_may_be_turned_on() -> None:
    existing = _create_all([{"name": "X"}])
    old = existing["X"]
    for name in ("sealed", "allow_msg_ttl", "allow_msg_schedules"):
        new = old.replace(**{name: True})
        assert getattr(check_stream_update(old, new, existing), name) is True


def test_create_same_config_returns_existing_unchanged() -> None:
    existing = _create_all([{"name": "X", "allow_msg_ttl": True}])
    again = check_stream_create(StreamConfig.from_json({"name": "X", "allow_msg_ttl": True}),
                                existing)
    assert again == existing["X"] and again is not existing["X"]


def test_inputs_not_modified() -> None:
    cfg = StreamConfig.from_json({"name": "X", "republish": {"dest": "out.>"},
                                  "subject_delete_marker_ttl": S, "metadata": {"a": "b"}})
    before = cfg.to_json()
    check_stream_create(cfg, {})
    check_stream_config(cfg)
    assert cfg.to_json() == before


def test_lookup_supplies_origins_to_check_stream_config() -> None:
    origin = check_stream_create(StreamConfig.from_json(ORIGIN_DIRECT), {})
    out = check_stream_config(StreamConfig.from_json(MIRROR), {"O": origin}.get)
    assert out.mirror_direct is True
    assert check_stream_config(StreamConfig.from_json(MIRROR)).mirror_direct is False


def test_response_metadata() -> None:
    cfg = check_stream_create(StreamConfig(name="X"), {})
    assert with_response_metadata(cfg).metadata == {
        "_nats.req.level": "0", "_nats.ver": "2.15.1", "_nats.level": "5"}
    assert cfg.metadata == {"_nats.req.level": "0"}


@pytest.mark.parametrize(
    ("field", "value", "description"),
    [
        ("retention", "forever", "invalid retention"),
        ("discard", "oldest", "invalid discard policy"),
        ("compression", "zstd", "invalid compression"),
        ("storage", "disk", "invalid storage type"),
    ],
)
def test_enum_words_from_python(field: str, value: str, description: str) -> None:
    """A config built in Python (not decoded from JSON, which refuses them) with a bad word."""
    with pytest.raises(ApiError) as info:
        check_stream_config(StreamConfig(name="X").replace(**{field: value}))
    assert (info.value.err_code, info.value.description, info.value.field) == (
        10052, description, field)


def test_empty_storage_and_compression_default() -> None:
    out = check_stream_config(StreamConfig(name="X").replace(storage="", compression=""))
    assert (out.storage, out.compression) == ("file", "none")


@pytest.mark.parametrize("old,new", [("limits", "interest"), ("interest", "limits")])
def test_retention_between_limits_and_interest_is_an_update_the_server_accepts(old, new):
    """nats-server 2.15 accepts it (to/from workqueue stays its own refusal)."""
    existing = _create_all([{"name": "X", "retention": old}])
    cfg = existing["X"].replace(retention=new)
    assert check_stream_update(existing["X"], cfg, existing).retention == new


@pytest.mark.parametrize(("name", "first"), [
    ("a/b", "Stream name can not contain path separators"),
    ("N" * 256, "stream name is too long, maximum allowed is 255"),
    ("A\x00B", "error creating store for stream"),
], ids=["path-separator", "too-long", "nul"])
def test_every_problem_of_a_bad_name_is_its_own_and_the_rest_is_still_checked(name, first):
    """A name's problem is reported once: the name set aside is no "name is required" after
    it; the config's other problems still are."""
    from jetlink.core.config.validate import stream_config_problems

    cfg = StreamConfig.from_json({"name": name, "subjects": ["x"], "max_age": -5})
    out, problems = stream_config_problems(cfg)
    assert out is None
    assert [(p.field, p.description) for p in problems][:2] == (
        [("max_age", "max age can not be negative"), ("name", first)]
        if name == "A\x00B" else  # the store's step comes after the config's checks
        [("name", first), ("max_age", "max age can not be negative")])
    assert len(problems) == 2
