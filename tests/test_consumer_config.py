"""ConsumerConfig: JSON model, the server's defaults and its create/update rules.

The table below is the contract: each row is a ``CONSUMER.CREATE`` request (stream, consumers
created before, the consumer config as raw JSON, action, pedantic) and what nats-server 2.15.1
answers, recorded from the real server: an error (HTTP code, err_code, description) or the
configuration it stores. ``OK(**changes, drop=...)`` is the stored config written as a
difference from the request laid over the pull-consumer defaults (:data:`BASE`, plus ``name`` =
the durable name): ``changes`` are the fields the server sets or changes, ``drop`` the fields it
leaves out. ``tests/conformance/test_consumer_config_conformance.py`` replays the same rows
against a real server, so the recorded answers cannot drift from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from jetlink.core.config.consumer import (
    ConsumerConfig,
    check_consumer_config,
    check_consumer_create,
    filters_of,
    generate_consumer_name,
    with_response_metadata,
)
from jetlink.core.config.stream import StreamConfig
from jetlink.core.config.validate import check_stream_create
from jetlink.core.errors import ApiError

SEC = 1_000_000_000
T = "2024-01-01T00:00:00Z"

# Streams the rows use.
S = {"name": "S", "subjects": ["s.>", "t.*"]}
WQ = {"name": "W", "subjects": ["w.>"], "retention": "workqueue"}
IN = {"name": "I", "subjects": ["i.>"], "retention": "interest"}
LIM = {"name": "L", "subjects": ["l.>"],
       "consumer_limits": {"inactive_threshold": 10 * SEC, "max_ack_pending": 50}}
MAXC = {"name": "M", "subjects": ["m.>"], "max_consumers": 1}

# What the server stores for a pull consumer when the request says nothing.
BASE = {"deliver_policy": "all", "ack_policy": "none", "max_deliver": -1,
        "replay_policy": "instant", "max_waiting": 512, "num_replicas": 0}


@dataclass(frozen=True)
class Expect:
    ok: bool
    code: int = 0
    err_code: int = 0
    description: str = ""
    changes: dict[str, Any] = field(default_factory=dict)
    drop: tuple[str, ...] = ()


def OK(drop: tuple[str, ...] = (), **changes: Any) -> Expect:
    return Expect(True, changes=changes, drop=tuple(drop))


def ERR(code: int, err_code: int, description: str) -> Expect:
    return Expect(False, code, err_code, description)


@dataclass(frozen=True)
class Case:
    id: str
    config: Any
    expect: Expect
    stream: dict[str, Any]
    setup: tuple[Any, ...] = ()
    action: str = ""
    pedantic: bool = False


CASES: list[Case] = []


def case(id: str, config: Any, *, expect: Expect, stream: dict[str, Any] = S,
         setup: tuple | list = (), action: str = "", pedantic: bool = False) -> None:
    CASES.append(Case(id, config, expect, stream, tuple(setup), action, pedantic))


def expected_config(c: Case) -> dict[str, Any]:
    """The full configuration the server stores for an OK row (server metadata left out)."""
    merged = dict(BASE, **c.config)
    if c.config.get("durable_name") and "name" not in c.config:
        merged["name"] = c.config["durable_name"]
    merged.update(c.expect.changes)
    for key in c.expect.drop:
        merged.pop(key, None)
    return merged


def strip_server_metadata(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` without the ``_nats.*`` metadata keys (and without an emptied metadata)."""
    out = dict(doc)
    md = {k: v for k, v in out.pop("metadata", {}).items() if not k.startswith("_nats.")}
    if md:
        out["metadata"] = md
    return out


# --------------------------------------------------------------------------------------------
# The table (recorded from nats-server 2.15.1)
# --------------------------------------------------------------------------------------------

# defaults
case("durable-defaults", {"durable_name": "D"}, expect=OK())
case("explicit-defaults", {"durable_name": "D", "ack_policy": "explicit"}, expect=OK(ack_wait=30 * SEC, max_ack_pending=1000))
case("ack-all-defaults", {"durable_name": "D", "ack_policy": "all"}, expect=OK(ack_wait=30 * SEC, max_ack_pending=1000))
case("named-ephemeral", {"name": "E"}, expect=OK(inactive_threshold=5 * SEC))
case("name-and-durable-equal", {"name": "D", "durable_name": "D"}, expect=OK())
case("undefined-deliver-policy", {"durable_name": "D", "deliver_policy": "undefined"}, expect=OK(deliver_policy='all'))
case("stream-limits-applied", {"durable_name": "D", "ack_policy": "explicit"}, stream=LIM, expect=OK(ack_wait=30 * SEC, max_ack_pending=50, inactive_threshold=10 * SEC))
case("stream-limits-ack-none", {"durable_name": "D", "ack_policy": "none"}, stream=LIM, expect=OK(max_ack_pending=50, inactive_threshold=10 * SEC))
case("stream-limits-kept-lower", {"durable_name": "D", "ack_policy": "explicit", "max_ack_pending": 20, "inactive_threshold": 2 * SEC}, stream=LIM, expect=OK(ack_wait=30 * SEC))
case("stream-limit-max-ack-pending", {"durable_name": "D", "ack_policy": "explicit", "max_ack_pending": 51}, stream=LIM, expect=ERR(400, 10121, 'consumer max ack pending exceeds system limit of 50'))
case("stream-limit-inactive", {"durable_name": "D", "inactive_threshold": 11 * SEC}, stream=LIM, expect=ERR(400, 10153, 'consumer inactive threshold exceeds system limit of 10s'))
case("backoff-sets-ack-wait", {"durable_name": "D", "ack_policy": "explicit", "ack_wait": 5 * SEC, "max_deliver": 3, "backoff": [SEC, 2 * SEC]}, expect=OK(ack_wait=SEC, max_ack_pending=1000))
case("negatives-normalized", {"durable_name": "D", "max_deliver": -5, "max_waiting": -1, "max_batch": -1, "max_expires": -10, "max_ack_pending": -5, "inactive_threshold": -5, "max_bytes": -5, "idle_heartbeat": -5, "priority_timeout": -5}, expect=OK(max_deliver=-1, max_waiting=512, max_ack_pending=-1, drop=('max_batch', 'max_expires', 'inactive_threshold', 'max_bytes', 'idle_heartbeat', 'priority_timeout')))
case("all-pull-options", {"durable_name": "D", "description": "d", "ack_policy": "explicit", "ack_wait": 2 * SEC, "max_deliver": 4, "filter_subject": "s.a", "replay_policy": "original", "sample_freq": "50%", "max_waiting": 10, "max_ack_pending": 7, "headers_only": True, "max_batch": 10, "max_expires": SEC, "max_bytes": 100, "mem_storage": True, "metadata": {"k": "v"}, "num_replicas": 1}, expect=OK())
case("filter-not-in-stream", {"durable_name": "D", "filter_subject": "x.y"}, expect=OK())
case("filter-full-wildcard", {"durable_name": "D", "filter_subject": ">"}, expect=OK())
case("filter-subjects", {"durable_name": "D", "filter_subjects": ["s.a", "t.b"]}, expect=OK())
case("empty-lists", {"durable_name": "D", "filter_subjects": [], "backoff": [], "metadata": {}}, expect=OK(drop=('filter_subjects', 'backoff', 'metadata')))
case("pause-until", {"durable_name": "D", "pause_until": "2030-01-01T00:00:00+01:00"}, expect=OK())
case("opt-start-time-offset", {"durable_name": "D", "deliver_policy": "by_start_time", "opt_start_time": "2024-01-01T00:00:00.5+02:00"}, expect=OK())
case("priority-pinned", {"durable_name": "D", "priority_policy": "pinned_client", "priority_groups": ["g"]}, expect=OK(priority_timeout=120 * SEC))
case("priority-overflow", {"durable_name": "D", "priority_policy": "overflow", "priority_groups": ["a", "b"], "priority_timeout": 5}, expect=OK())
case("priority-none", {"durable_name": "D", "priority_policy": "none"}, expect=OK(drop=('priority_policy',)))
case("sample-freq-plain", {"durable_name": "D", "sample_freq": "100"}, expect=OK())
case("sample-freq-over-100", {"durable_name": "D", "sample_freq": "101%"}, expect=OK())
case("push-consumer", {"durable_name": "D", "deliver_subject": "dlv", "ack_policy": "explicit", "idle_heartbeat": SEC, "flow_control": True}, expect=OK(ack_wait=30 * SEC, max_ack_pending=1000, drop=('max_waiting',)))
case("deliver-group", {"durable_name": "D", "deliver_group": "q"}, expect=OK())
case("backoff-null-element", {"durable_name": "D", "backoff": [None, 5]}, expect=OK(backoff=[0, 5]))
# JSON decoding
case("json-unknown-field", {"durable_name": "D", "bogus": 1}, expect=ERR(400, 10025, 'invalid JSON: json: unknown field "bogus"'))
case("json-ack-policy-bogus", {"durable_name": "D", "ack_policy": "bogus"}, expect=ERR(400, 10025, 'invalid JSON: can not unmarshal "\\"bogus\\""'))
case("json-ack-policy-null", {"durable_name": "D", "ack_policy": None}, expect=ERR(400, 10025, 'invalid JSON: can not unmarshal "null"'))
case("json-deliver-policy-number", {"durable_name": "D", "deliver_policy": 5}, expect=ERR(400, 10025, 'invalid JSON: can not unmarshal "5"'))
case("json-replay-bogus", {"durable_name": "D", "replay_policy": "x"}, expect=ERR(400, 10025, 'invalid JSON: can not unmarshal "\\"x\\""'))
case("json-ack-wait-string", {"durable_name": "D", "ack_wait": "1s"}, expect=ERR(400, 10025, 'invalid JSON: json: cannot unmarshal string into Go struct field CreateConsumerRequest.config.ack_wait of type time.Duration'))
case("json-max-deliver-float", {"durable_name": "D", "max_deliver": 1.5}, expect=ERR(400, 10025, 'invalid JSON: json: cannot unmarshal number 1.5 into Go struct field CreateConsumerRequest.config.max_deliver of type int'))
case("json-max-deliver-overflow", {"durable_name": "D", "max_deliver": 2**63}, expect=ERR(400, 10025, 'invalid JSON: json: cannot unmarshal number 9223372036854775808 into Go struct field CreateConsumerRequest.config.max_deliver of type int'))
case("json-opt-start-seq-negative", {"durable_name": "D", "opt_start_seq": -1}, expect=ERR(400, 10025, 'invalid JSON: json: cannot unmarshal number -1 into Go struct field CreateConsumerRequest.config.opt_start_seq of type uint64'))
case("json-rate-limit-negative", {"durable_name": "D", "rate_limit_bps": -1}, expect=ERR(400, 10025, 'invalid JSON: json: cannot unmarshal number -1 into Go struct field CreateConsumerRequest.config.rate_limit_bps of type uint64'))
case("json-backoff-string", {"durable_name": "D", "backoff": "1s"}, expect=ERR(400, 10025, 'invalid JSON: json: cannot unmarshal string into Go struct field CreateConsumerRequest.config.backoff of type []time.Duration'))
case("json-backoff-element-string", {"durable_name": "D", "backoff": ["1s"]}, expect=ERR(400, 10025, 'invalid JSON: json: cannot unmarshal string into CreateConsumerRequest.config.backoff.0 of type time.Duration'))
case("json-backoff-element-float", {"durable_name": "D", "backoff": [1.5]}, expect=ERR(400, 10025, 'invalid JSON: json: cannot unmarshal number 1.5 into CreateConsumerRequest.config.backoff.0 of type time.Duration'))
case("json-priority-policy-bogus", {"durable_name": "D", "priority_policy": "x"}, expect=ERR(400, 10025, 'invalid JSON: unknown priority policy: "x"'))
case("json-priority-policy-number", {"durable_name": "D", "priority_policy": 5}, expect=ERR(400, 10025, 'invalid JSON: unknown priority policy: 5'))
case("json-opt-start-time-month", {"durable_name": "D", "opt_start_time": "2024-13-01T00:00:00Z"}, expect=ERR(400, 10025, 'invalid JSON: parsing time "2024-13-01T00:00:00Z": month out of range'))
case("json-opt-start-time-number", {"durable_name": "D", "opt_start_time": 5}, expect=ERR(400, 10025, 'invalid JSON: json: cannot unmarshal number into Go struct field CreateConsumerRequest.config.opt_start_time of type time.Time'))
case("json-pause-until-garbage", {"durable_name": "D", "pause_until": "x"}, expect=ERR(400, 10025, 'invalid JSON: parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"'))
case("json-filter-subjects-string", {"durable_name": "D", "filter_subjects": "a"}, expect=ERR(400, 10025, 'invalid JSON: json: cannot unmarshal string into Go struct field CreateConsumerRequest.config.filter_subjects of type []string'))
case("json-metadata-number", {"durable_name": "D", "metadata": {"a": 1}}, expect=ERR(400, 10025, 'invalid JSON: json: cannot unmarshal number into Go struct field CreateConsumerRequest.config.metadata.a of type string'))
case("json-null-replicas", {"durable_name": "D", "num_replicas": None}, expect=OK(num_replicas=0))
# names
case("name-with-dot-legacy", {"name": "A.b"}, expect=ERR(500, 10052, "consumer name can not contain '.', '*', '>', '\\', '/'"))
case("name-with-star", {"name": "A*"}, expect=ERR(500, 10052, "consumer name can not contain '.', '*', '>', '\\', '/'"))
case("durable-with-gt", {"durable_name": "A>"}, expect=ERR(500, 10052, "consumer name can not contain '.', '*', '>', '\\', '/'"))
case("name-with-space-legacy", {"name": "A b"}, expect=ERR(500, 10052, "consumer name can not contain '.', '*', '>', '\\', '/'"))
case("name-path-separator", {"name": "A/b"}, expect=ERR(400, 10127, 'Consumer name can not contain path separators'))
case("durable-path-separator", {"durable_name": "A\\b"}, expect=ERR(400, 10127, 'Consumer name can not contain path separators'))
case("name-durable-mismatch", {"name": "A", "durable_name": "B"}, expect=ERR(400, 10017, 'consumer name in subject does not match durable name in request'))
# the store's step, last: a file consumer's directory can not be named with a NUL byte
# (jetstream_api.go errConsumerStoreFailed); a memory consumer has none
case("name-nul-file-store", {"durable_name": "C\x00D"}, expect=ERR(500, 10012, 'error creating store for consumer'))
case("name-nul-memory-store", {"durable_name": "C\x00D", "mem_storage": True}, expect=OK())
case("name-nul-memory-stream", {"durable_name": "C\x00D"}, stream=dict(S, storage="memory"), expect=OK())
case("durable-too-long", {"durable_name": "x" * 256}, expect=ERR(400, 10102, 'consumer name is too long, maximum allowed is 255'))
case("durable-max-length", {"durable_name": "x" * 255}, expect=OK())
case("description-too-long", {"durable_name": "D", "description": "d" * 4097}, expect=ERR(400, 10107, 'consumer description is too long, maximum allowed is 4096'))
case("metadata-too-long", {"durable_name": "D", "metadata": {"k": "v" * (128 * 1024 - 16)}}, expect=ERR(400, 10135, 'consumer metadata exceeds maximum size of 128KB'))
case("metadata-at-limit", {"durable_name": "D", "metadata": {"k": "v" * (128 * 1024 - 17)}}, expect=OK())
# replicas
case("replicas-2", {"durable_name": "D", "num_replicas": 2}, expect=ERR(500, 10074, 'replicas > 1 not supported in non-clustered mode'))
case("replicas-negative", {"durable_name": "D", "num_replicas": -1}, expect=ERR(400, 10133, 'replicas count cannot be negative'))
# acks and backoff
case("ack-wait-negative", {"durable_name": "D", "ack_wait": -1}, expect=ERR(400, 10183, 'consumer ack wait needs to be positive'))
case("backoff-negative", {"durable_name": "D", "backoff": [-1]}, expect=ERR(400, 10184, 'consumer backoff needs to be positive'))
case("backoff-longer-than-max-deliver", {"durable_name": "D", "ack_policy": "explicit", "max_deliver": 2, "backoff": [SEC, 2 * SEC, 3 * SEC]}, expect=ERR(400, 10116, 'max deliver is required to be > length of backoff values'))
case("backoff-max-deliver-unset", {"durable_name": "D", "ack_policy": "explicit", "backoff": [SEC, 2 * SEC, 3 * SEC]}, expect=OK(ack_wait=SEC, max_ack_pending=1000))
case("flow-control-ack-pull", {"durable_name": "D", "ack_policy": "flow_control"}, expect=ERR(400, 10218, 'flow control ack policy requires a push based consumer'))
case("ack-none-max-ack-pending-pull", {"durable_name": "D", "ack_policy": "none", "max_ack_pending": 5}, expect=OK())
case("ack-none-max-ack-pending-push", {"durable_name": "D", "ack_policy": "none", "max_ack_pending": 5, "deliver_subject": "dd"}, expect=ERR(400, 10082, 'consumer requires ack policy for max ack pending'))
# pull-only options
case("pull-heartbeat", {"durable_name": "D", "idle_heartbeat": SEC}, expect=ERR(400, 10088, 'consumer idle heartbeat requires a push based consumer'))
case("pull-flow-control", {"durable_name": "D", "flow_control": True}, expect=ERR(400, 10089, 'consumer flow control requires a push based consumer'))
case("pull-rate-limit", {"durable_name": "D", "rate_limit_bps": 10}, expect=ERR(400, 10086, 'consumer in pull mode can not have rate limit set'))
case("pull-max-expires-small", {"durable_name": "D", "max_expires": 10}, expect=ERR(400, 10115, 'consumer max request expires needs to be >= 1ms'))
case("pull-direct", {"durable_name": "D", "direct": True}, expect=ERR(400, 10090, 'consumer direct requires a push based consumer'))
# push options
case("push-wildcard", {"durable_name": "D", "deliver_subject": "d.*"}, expect=ERR(400, 10079, 'consumer deliver subject has wildcards'))
case("push-cycle", {"durable_name": "D", "deliver_subject": "s.x"}, expect=ERR(400, 10081, 'consumer deliver subject forms a cycle'))
case("push-max-waiting", {"durable_name": "D", "deliver_subject": "dd", "max_waiting": 3}, expect=ERR(400, 10080, 'consumer in push mode can not set max waiting'))
case("push-small-heartbeat", {"durable_name": "D", "deliver_subject": "dd", "idle_heartbeat": 1000}, expect=ERR(400, 10083, 'consumer idle heartbeat needs to be >= 100ms'))
case("push-fc-no-heartbeat", {"durable_name": "D", "deliver_subject": "dd", "flow_control": True}, expect=ERR(400, 10108, 'consumer with flow control also needs heartbeats'))
case("push-direct-durable", {"durable_name": "D", "deliver_subject": "dd", "direct": True}, expect=ERR(400, 10091, 'consumer direct requires an ephemeral consumer'))
case("push-priority", {"durable_name": "D", "deliver_subject": "dd", "priority_policy": "overflow", "priority_groups": ["g"]}, expect=ERR(400, 10178, 'priority groups can not be used with push consumers'))
# filters
case("filter-and-filters", {"durable_name": "D", "filter_subject": "s.a", "filter_subjects": ["s.b"]}, expect=ERR(400, 10136, 'consumer cannot have both FilterSubject and FilterSubjects specified'))
case("filters-overlap", {"durable_name": "D", "filter_subjects": ["s.>", "s.a"]}, expect=ERR(400, 10138, 'consumer subject filters cannot overlap'))
case("filters-duplicate", {"durable_name": "D", "filter_subjects": ["s.a", "s.a"]}, expect=ERR(400, 10138, 'consumer subject filters cannot overlap'))
case("filters-partial-overlap-ok", {"durable_name": "D", "filter_subjects": ["s.*.x", "s.a.*"]}, expect=OK())
# isSubsetMatchTokenized reads a token starting with "*" as a wildcard (either order)
case("filters-star-prefixed-token", {"durable_name": "D", "filter_subjects": ["s.y", "s.*x"]}, expect=ERR(400, 10138, 'consumer subject filters cannot overlap'))
case("filters-star-prefixed-token-first", {"durable_name": "D", "filter_subjects": ["s.*x", "s.y"]}, expect=ERR(400, 10138, 'consumer subject filters cannot overlap'))
case("filters-token-ending-in-star-ok", {"durable_name": "D", "filter_subjects": ["s.y", "s.x*"]}, expect=OK())
case("filters-empty-element", {"durable_name": "D", "filter_subjects": ["s.a", ""]}, expect=ERR(400, 10139, 'consumer filter in FilterSubjects cannot be empty'))
case("filter-invalid", {"durable_name": "D", "filter_subject": "s..a"}, expect=ERR(500, 10052, 'invalid subject'))
case("filters-invalid", {"durable_name": "D", "filter_subjects": ["s..a"]}, expect=ERR(500, 10052, 'invalid subject'))
case("filter-gt-middle", {"durable_name": "D", "filter_subject": "s.>.a"}, expect=ERR(500, 10052, 'invalid subject'))
# deliver policies
case("all-with-seq", {"durable_name": "D", "deliver_policy": "all", "opt_start_seq": 3}, expect=ERR(400, 10094, 'consumer delivery policy is deliver all, but optional start sequence is also set'))
case("all-with-time", {"durable_name": "D", "deliver_policy": "all", "opt_start_time": T}, expect=ERR(400, 10094, 'consumer delivery policy is deliver all, but optional start time is also set'))
case("last-with-seq", {"durable_name": "D", "deliver_policy": "last", "opt_start_seq": 3}, expect=ERR(400, 10094, 'consumer delivery policy is deliver last, but optional start sequence is also set'))
case("last-with-time", {"durable_name": "D", "deliver_policy": "last", "opt_start_time": T}, expect=ERR(400, 10094, 'consumer delivery policy is deliver last, but optional start time is also set'))
case("new-with-seq", {"durable_name": "D", "deliver_policy": "new", "opt_start_seq": 3}, expect=ERR(400, 10094, 'consumer delivery policy is deliver new, but optional start sequence is also set'))
case("new-with-time", {"durable_name": "D", "deliver_policy": "new", "opt_start_time": T}, expect=ERR(400, 10094, 'consumer delivery policy is deliver new, but optional start time is also set'))
case("lps-no-filter", {"durable_name": "D", "deliver_policy": "last_per_subject"}, expect=ERR(400, 10094, 'consumer delivery policy is deliver last per subject, but optional filter subject is not set'))
case("lps-with-filter", {"durable_name": "D", "deliver_policy": "last_per_subject", "filter_subject": "s.>"}, expect=OK())
case("lps-with-filters", {"durable_name": "D", "deliver_policy": "last_per_subject", "filter_subjects": ["s.>", "t.a"]}, expect=OK())
case("lps-with-seq", {"durable_name": "D", "deliver_policy": "last_per_subject", "opt_start_seq": 1, "filter_subject": "s.>"}, expect=ERR(400, 10094, 'consumer delivery policy is deliver last per subject, but optional start sequence is also set'))
case("lps-with-time", {"durable_name": "D", "deliver_policy": "last_per_subject", "opt_start_time": T}, expect=ERR(400, 10094, 'consumer delivery policy is deliver last per subject, but optional start time is also set'))
case("by-seq-missing", {"durable_name": "D", "deliver_policy": "by_start_sequence"}, expect=ERR(400, 10094, 'consumer delivery policy is deliver by start sequence, but optional start sequence is not set'))
case("by-seq-ok", {"durable_name": "D", "deliver_policy": "by_start_sequence", "opt_start_seq": 5}, expect=OK())
case("by-seq-with-time", {"durable_name": "D", "deliver_policy": "by_start_sequence", "opt_start_seq": 5, "opt_start_time": T}, expect=ERR(400, 10094, 'consumer delivery policy is deliver by start sequence, but optional start time is also set'))
case("by-time-missing", {"durable_name": "D", "deliver_policy": "by_start_time"}, expect=ERR(400, 10094, 'consumer delivery policy is deliver by start time, but optional start time is not set'))
case("by-time-with-seq", {"durable_name": "D", "deliver_policy": "by_start_time", "opt_start_seq": 5, "opt_start_time": T}, expect=ERR(400, 10094, 'consumer delivery policy is deliver by start time, but optional start start sequence is also set'))
case("by-time-ok", {"durable_name": "D", "deliver_policy": "by_start_time", "opt_start_time": T}, expect=OK())
# sampling
case("sample-freq-garbage", {"durable_name": "D", "sample_freq": "x%"}, expect=ERR(400, 10095, 'failed to parse consumer sampling configuration: strconv.Atoi: parsing "x": invalid syntax'))
case("sample-freq-negative", {"durable_name": "D", "sample_freq": "-5"}, expect=ERR(400, 10095, 'failed to parse consumer sampling configuration: <nil>'))
case("sample-freq-float", {"durable_name": "D", "sample_freq": "5.5"}, expect=ERR(400, 10095, 'failed to parse consumer sampling configuration: strconv.Atoi: parsing "5.5": invalid syntax'))
case("sample-freq-percent-only", {"durable_name": "D", "sample_freq": "%"}, expect=ERR(400, 10095, 'failed to parse consumer sampling configuration: strconv.Atoi: parsing "": invalid syntax'))
# priority groups
case("priority-without-groups", {"durable_name": "D", "priority_policy": "overflow"}, expect=ERR(400, 10159, 'Setting PriorityPolicy requires at least one PriorityGroup to be set'))
case("priority-groups-policy-none", {"durable_name": "D", "priority_groups": ["g"]}, expect=ERR(400, 10196, 'consumer can not have priority groups when policy is none'))
case("priority-timeout-policy-none", {"durable_name": "D", "priority_timeout": 5}, expect=ERR(400, 10197, 'PinnedTTL cannot be set when PriorityPolicy is none'))
case("priority-group-bad-chars", {"durable_name": "D", "priority_policy": "pinned_client", "priority_groups": ["g/h=)+x"]}, expect=ERR(400, 10162, 'Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters'))
case("priority-group-too-long", {"durable_name": "D", "priority_policy": "pinned_client", "priority_groups": ["ab" * 9]}, expect=ERR(400, 10162, 'Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters'))
case("priority-group-empty", {"durable_name": "D", "priority_policy": "pinned_client", "priority_groups": [""]}, expect=ERR(400, 10161, 'Group name cannot be an empty string'))
# pedantic
case("pedantic-max-deliver", {"durable_name": "D", "max_deliver": -3}, pedantic=True, expect=ERR(400, 10157, 'pedantic mode: max_deliver must be set to -1'))
case("pedantic-backoff", {"durable_name": "D", "ack_policy": "explicit", "backoff": [SEC]}, pedantic=True, expect=ERR(400, 10157, 'pedantic mode: first backoff value has to equal batch AckWait'))
case("pedantic-backoff-ok", {"durable_name": "D", "ack_policy": "explicit", "ack_wait": SEC, "backoff": [SEC]}, pedantic=True, expect=OK(max_ack_pending=1000))
case("pedantic-stream-limits", {"durable_name": "D", "ack_policy": "explicit"}, stream=LIM, pedantic=True, expect=ERR(400, 10157, "pedantic mode: max_ack_pending must be set if it's configured in stream limits"))
case("pedantic-max-waiting", {"durable_name": "D", "max_waiting": -1}, pedantic=True, expect=ERR(400, 10157, 'pedantic mode: max_waiting must not be negative'))
# work queue
case("wq-ack-none", {"durable_name": "A"}, stream=WQ, expect=ERR(400, 10084, 'consumer in pull mode requires explicit ack policy on workqueue stream'))
case("wq-ack-all", {"durable_name": "A", "ack_policy": "all"}, stream=WQ, expect=ERR(400, 10098, 'workqueue stream requires explicit ack'))
case("wq-deliver-new", {"durable_name": "A", "ack_policy": "explicit", "deliver_policy": "new"}, stream=WQ, expect=ERR(400, 10101, 'consumer must be deliver all on workqueue stream'))
case("wq-deliver-last", {"durable_name": "A", "ack_policy": "explicit", "deliver_policy": "last"}, stream=WQ, expect=ERR(400, 10101, 'consumer must be deliver all on workqueue stream'))
case("wq-explicit", {"durable_name": "A", "ack_policy": "explicit"}, stream=WQ, expect=OK(ack_wait=30 * SEC, max_ack_pending=1000))
case("wq-second-unfiltered", {"durable_name": "B", "ack_policy": "explicit"}, stream=WQ, setup=[{"durable_name": "A", "ack_policy": "explicit"}], expect=ERR(400, 10099, 'multiple non-filtered consumers not allowed on workqueue stream'))
case("wq-second-filtered-vs-unfiltered", {"durable_name": "B", "ack_policy": "explicit", "filter_subject": "w.a"}, stream=WQ, setup=[{"durable_name": "A", "ack_policy": "explicit"}], expect=ERR(400, 10100, 'filtered consumer not unique on workqueue stream'))
case("wq-overlap-wider", {"durable_name": "B", "ack_policy": "explicit", "filter_subject": "w.>"}, stream=WQ, setup=[{"durable_name": "A", "ack_policy": "explicit", "filter_subject": "w.a.*"}], expect=ERR(400, 10100, 'filtered consumer not unique on workqueue stream'))
case("wq-overlap-partial", {"durable_name": "B", "ack_policy": "explicit", "filter_subjects": ["w.b", "w.*.x"]}, stream=WQ, setup=[{"durable_name": "A", "ack_policy": "explicit", "filter_subject": "w.a.*"}], expect=ERR(400, 10100, 'filtered consumer not unique on workqueue stream'))
case("wq-disjoint", {"durable_name": "B", "ack_policy": "explicit", "filter_subjects": ["w.b", "w.c"]}, stream=WQ, setup=[{"durable_name": "A", "ack_policy": "explicit", "filter_subject": "w.a.*"}], expect=OK(ack_wait=30 * SEC, max_ack_pending=1000))
case("wq-update-into-overlap", {"durable_name": "A", "ack_policy": "explicit", "filter_subject": "w.b"}, stream=WQ, setup=[{"durable_name": "A", "ack_policy": "explicit", "filter_subject": "w.a"}, {"durable_name": "B", "ack_policy": "explicit", "filter_subject": "w.b"}], expect=ERR(400, 10100, 'filtered consumer not unique on workqueue stream'))
case("wq-update-disjoint", {"durable_name": "A", "ack_policy": "explicit", "filter_subject": "w.c"}, stream=WQ, setup=[{"durable_name": "A", "ack_policy": "explicit", "filter_subject": "w.a"}, {"durable_name": "B", "ack_policy": "explicit", "filter_subject": "w.b"}], expect=OK(ack_wait=30 * SEC, max_ack_pending=1000))
case("wq-update-to-unfiltered", {"durable_name": "A", "ack_policy": "explicit"}, stream=WQ, setup=[{"durable_name": "A", "ack_policy": "explicit", "filter_subject": "w.a"}, {"durable_name": "B", "ack_policy": "explicit", "filter_subject": "w.b"}], expect=OK(ack_wait=30 * SEC, max_ack_pending=1000))
case("wq-replicas-1", {"durable_name": "A", "ack_policy": "explicit", "num_replicas": 1}, stream=WQ, expect=OK(ack_wait=30 * SEC, max_ack_pending=1000))
# interest
case("interest-ack-none", {"durable_name": "A"}, stream=IN, expect=OK())
case("interest-deliver-new", {"durable_name": "A", "ack_policy": "all", "deliver_policy": "new"}, stream=IN, expect=OK(ack_wait=30 * SEC, max_ack_pending=1000))
case("interest-overlapping-filters", {"durable_name": "B", "ack_policy": "explicit", "filter_subject": "i.>"}, stream=IN, setup=[{"durable_name": "A", "ack_policy": "explicit", "filter_subject": "i.a"}], expect=OK(ack_wait=30 * SEC, max_ack_pending=1000))
# max consumers
case("max-consumers", {"durable_name": "B"}, stream=MAXC, setup=[{"durable_name": "A"}], expect=ERR(400, 10026, 'maximum consumers limit reached'))
case("max-consumers-update-ok", {"durable_name": "A", "description": "x"}, stream=MAXC, setup=[{"durable_name": "A"}], expect=OK())
# updates and actions
U = {"durable_name": "U", "ack_policy": "all", "deliver_policy": "new"}
case("update-same", dict(U), setup=[U], expect=OK(ack_wait=30 * SEC, max_ack_pending=1000))
case("update-description", dict(U, description="x"), setup=[U], expect=OK(ack_wait=30 * SEC, max_ack_pending=1000))
case("create-action-same", dict(U), setup=[U], action="create", expect=OK(ack_wait=30 * SEC, max_ack_pending=1000))
case("create-action-different", dict(U, description="y"), setup=[U], action="create", expect=ERR(400, 10148, 'consumer already exists'))
case("update-action-missing", {"durable_name": "Z"}, action="update", expect=ERR(400, 10149, 'consumer does not exist'))
case("update-action-existing", dict(U, max_ack_pending=3), setup=[U], action="update", expect=OK(ack_wait=30 * SEC))
case("update-deliver-policy", dict(U, deliver_policy="all"), setup=[U], expect=ERR(500, 10012, 'deliver policy can not be updated'))
case("update-ack-policy", dict(U, ack_policy="explicit"), setup=[U], expect=ERR(500, 10012, 'ack policy can not be updated'))
case("update-storage", dict(U, mem_storage=True), setup=[U], expect=ERR(500, 10012, 'storage type can not be updated'))
case("update-max-waiting", dict(U, max_waiting=5), setup=[U], expect=ERR(500, 10012, 'max waiting can not be updated'))
case("update-replay", dict(U, replay_policy="original"), setup=[U], expect=ERR(500, 10012, 'replay policy can not be updated'))
case("update-to-push", dict(U, deliver_subject="dd"), setup=[U], expect=ERR(500, 10012, 'can not update pull consumer to push based'))
case("update-opt-start-seq", dict(U, deliver_policy="by_start_sequence", opt_start_seq=4), setup=[dict(U, deliver_policy="by_start_sequence", opt_start_seq=3)], expect=ERR(500, 10012, 'start sequence can not be updated'))
case("update-opt-start-time", dict(U, deliver_policy="by_start_time", opt_start_time="2024-01-02T00:00:00Z"), setup=[dict(U, deliver_policy="by_start_time", opt_start_time=T)], expect=ERR(500, 10012, 'start time can not be updated'))
case("update-opt-start-time-same-instant", dict(U, deliver_policy="by_start_time", opt_start_time="2024-01-01T01:00:00+01:00"), setup=[dict(U, deliver_policy="by_start_time", opt_start_time=T)], expect=OK(ack_wait=30 * SEC, max_ack_pending=1000))
case("update-backoff-too-long", dict(U, max_deliver=1, backoff=[SEC, 2 * SEC]), setup=[U], expect=ERR(400, 10116, 'max deliver is required to be > length of backoff values'))
case("update-editable-fields", dict(U, max_deliver=5, filter_subject="s.x", max_ack_pending=3, ack_wait=2 * SEC, description="d", sample_freq="5", headers_only=True, max_batch=3, metadata={"a": "b"}), setup=[U], expect=OK())
case("update-pause-until-ignored", dict(U, pause_until="2030-01-01T00:00:00Z"), setup=[U], expect=OK(ack_wait=30 * SEC, max_ack_pending=1000, drop=('pause_until',)))
case("update-keeps-pause-until", dict(U), setup=[dict(U, pause_until="2030-01-01T00:00:00Z")], expect=OK(ack_wait=30 * SEC, max_ack_pending=1000, pause_until='2030-01-01T00:00:00Z'))
case("update-push-to-pull", {"durable_name": "P"}, setup=[{"durable_name": "P", "deliver_subject": "dd"}], expect=ERR(500, 10012, 'can not update push consumer to pull based'))
case("update-heartbeat", {"durable_name": "P", "deliver_subject": "dd", "idle_heartbeat": SEC}, setup=[{"durable_name": "P", "deliver_subject": "dd"}], expect=ERR(500, 10012, 'heart beats can not be updated'))
case("update-ephemeral", {"name": "E", "description": "x"}, setup=[{"name": "E"}], expect=OK(inactive_threshold=5 * SEC))


# --------------------------------------------------------------------------------------------
# jetlink against the table
# --------------------------------------------------------------------------------------------


def run_jetlink(c: Case) -> tuple[Any, ...]:
    stream = check_stream_create(StreamConfig.from_json(c.stream), {})
    existing: dict[str, ConsumerConfig] = {}
    for raw in c.setup:
        cfg, _ = check_consumer_create(stream, ConsumerConfig.from_json(raw), existing)
        existing[cfg.name] = cfg
    try:
        cfg, _ = check_consumer_create(stream, ConsumerConfig.from_json(c.config), existing,
                                       action=c.action, pedantic=c.pedantic)
    except ApiError as err:
        return ("ERR", err.code, err.err_code, err.description)
    return ("OK", strip_server_metadata(cfg.to_json()))


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_row(c: Case) -> None:
    got = run_jetlink(c)
    if c.expect.ok:
        assert got == ("OK", expected_config(c))
    else:
        assert got == ("ERR", c.expect.code, c.expect.err_code, c.expect.description)


def test_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


# --------------------------------------------------------------------------------------------
# The JSON model
# --------------------------------------------------------------------------------------------

FULL = {
    "durable_name": "D",
    "name": "D",
    "description": "desc",
    "deliver_policy": "by_start_time",
    "opt_start_time": "2024-01-02T03:04:05.123456789Z",
    "ack_policy": "explicit",
    "ack_wait": 30 * SEC,
    "max_deliver": 5,
    "backoff": [SEC, 2 * SEC],
    "filter_subjects": ["a.>", "b.*"],
    "replay_policy": "original",
    "sample_freq": "50%",
    "max_waiting": 512,
    "max_ack_pending": 100,
    "headers_only": True,
    "max_batch": 10,
    "max_expires": 5 * SEC,
    "max_bytes": 1024,
    "inactive_threshold": 60 * SEC,
    "num_replicas": 1,
    "mem_storage": True,
    "metadata": {"team": "ops"},
    "pause_until": "2030-01-01T00:00:00Z",
    "priority_groups": ["jobs"],
    "priority_policy": "pinned_client",
    "priority_timeout": 120 * SEC,
}


def test_round_trip_keeps_fields_and_server_order() -> None:
    cfg = ConsumerConfig.from_json(FULL)
    out = cfg.to_json()
    assert out == FULL
    assert list(out) == list(FULL)


def test_zero_config_is_go_zero_value() -> None:
    assert ConsumerConfig().to_json() == {
        "deliver_policy": "all", "ack_policy": "none", "replay_policy": "instant",
        "num_replicas": 0,
    }
    assert ConsumerConfig.from_json(None) == ConsumerConfig()


def test_priority_policy_none_is_omitted() -> None:
    assert "priority_policy" not in ConsumerConfig(priority_policy="none").to_json()
    assert ConsumerConfig.from_json({"priority_policy": "none"}).priority_policy == ""


def test_config_must_be_an_object() -> None:
    with pytest.raises(ApiError) as err:
        ConsumerConfig.from_json(5)
    assert err.value.description == (
        "invalid JSON: json: cannot unmarshal number into Go struct field "
        "CreateConsumerRequest.config of type server.ConsumerConfig")


def test_decode_errors_name_the_field() -> None:
    with pytest.raises(ApiError) as err:
        ConsumerConfig.from_json({"ack_wait": "1s"})
    assert err.value.field == "ack_wait"
    with pytest.raises(ApiError) as err:
        ConsumerConfig.from_json({"backoff": [1, "x"]})
    assert err.value.field == "backoff[1]"


def test_from_any_accepts_info_and_request() -> None:
    info = {"stream_name": "S", "name": "D", "config": {"durable_name": "D"},
            "delivered": {"consumer_seq": 0, "stream_seq": 0}}
    assert ConsumerConfig.from_any(info).durable_name == "D"
    req = {"stream_name": "S", "config": {"durable_name": "E"}, "action": "create"}
    assert ConsumerConfig.from_any(req).durable_name == "E"
    assert ConsumerConfig.from_any({"durable_name": "F"}).durable_name == "F"


def test_filters_and_names() -> None:
    cfg = ConsumerConfig(durable_name="D", filter_subject="a")
    assert filters_of(cfg) == ["a"] and cfg.filters == ["a"]
    assert ConsumerConfig(filter_subjects=["x", "y"]).filters == ["x", "y"]
    assert cfg.consumer_name == "D" and cfg.is_durable and cfg.is_pull
    assert ConsumerConfig(name="E").consumer_name == "E"


def test_response_metadata_is_added_to_a_copy() -> None:
    cfg = ConsumerConfig(durable_name="D", metadata={"_nats.req.level": "0"})
    out = with_response_metadata(cfg)
    assert out.metadata == {"_nats.req.level": "0", "_nats.ver": "2.15.1", "_nats.level": "5"}
    assert cfg.metadata == {"_nats.req.level": "0"}


def test_stored_config_carries_required_api_level() -> None:
    stream = check_stream_create(StreamConfig.from_json(S), {})
    plain, _ = check_consumer_create(stream, ConsumerConfig(durable_name="D"), {})
    assert plain.metadata == {"_nats.req.level": "0"}
    paused, _ = check_consumer_create(
        stream, ConsumerConfig(durable_name="P", pause_until="2030-01-01T00:00:00Z"), {})
    assert paused.metadata == {"_nats.req.level": "1"}


def test_legacy_ephemeral_gets_a_generated_name() -> None:
    stream = check_stream_create(StreamConfig.from_json(S), {})
    cfg, updated = check_consumer_create(stream, ConsumerConfig(), {})
    assert not updated
    assert len(cfg.name) == 8 and cfg.name.isalnum()  # the server's createConsumerName
    assert cfg.inactive_threshold == 5 * SEC
    assert generate_consumer_name() != generate_consumer_name()


def test_update_reports_is_update() -> None:
    stream = check_stream_create(StreamConfig.from_json(S), {})
    first, created = check_consumer_create(stream, ConsumerConfig(durable_name="D"), {})
    again, updated = check_consumer_create(stream, ConsumerConfig(durable_name="D"),
                                           {"D": first})
    assert (created, updated) == (False, True)
    assert again == first


def test_check_consumer_config_does_not_touch_its_input() -> None:
    stream = check_stream_create(StreamConfig.from_json(S), {})
    cfg = ConsumerConfig(durable_name="D", ack_policy="explicit")
    out = check_consumer_config(cfg, stream)
    assert cfg.ack_wait == 0 and out.ack_wait == 30 * SEC


def test_unknown_action_is_a_decode_error() -> None:
    stream = check_stream_create(StreamConfig.from_json(S), {})
    with pytest.raises(ApiError) as err:
        check_consumer_create(stream, ConsumerConfig(durable_name="D"), {}, action="bogus")
    assert (err.value.err_code, err.value.description) == (
        10025, 'invalid JSON: unknown consumer action: "bogus"')
