"""Message schedules (ADR-51) on the embedded engine: refusals, firing on the manual clock,
@every / cron / time zones, sources and rollups (core/streamstore/schedules.py).

The refusal table follows nats-server 2.15's ``processJetStreamMsg`` schedule blocks; the
parse cases follow its ``TestJetStreamScheduledMessageParse``; tests/live/
test_parity_schedules.py runs the same refusals and a firing on nats-server 2.15.1.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from helpers import cfg, state

from jetlink.core.clock import format_rfc3339_nano
from jetlink.core.errors import ApiError
from jetlink.core.jetstream import JetStream
from jetlink.core.streamstore import schedules as SCH

SEC = 1_000_000_000


def sched_cfg(**kw):
    kw.setdefault("allow_msg_schedules", True)
    kw.setdefault("allow_rollup_hdrs", True)
    return cfg(**kw)


def outcome(js, subject, headers, data=b"x"):
    try:
        ack = js.publish(subject, data, headers)
    except ApiError as e:
        return (e.err_code, e.description)
    return ack.seq


def at(clock, seconds):
    return "@at " + format_rfc3339_nano(clock.now_ns() + int(seconds * SEC))


def last(js, subject, stream="S"):
    m = js.get_msg(stream, last_by_subj=subject)
    return m.seq, m.headers, m.data


def schedules(js, stream="S"):
    with js.read() as (conn, catalog):
        return [(s, q, format_rfc3339_nano(d))
                for s, q, d in SCH.schedules_of(conn, catalog.by_name[stream].id)]


# --- refusals (codes and texts of nats-server 2.15) ------------------------------------------
FUTURE = "@at 2030-01-01T00:00:00Z"
REFUSALS = [
    # (stream config extras, subject, headers, expected)
    ({}, "s.a", {"Nats-Schedule": "@at bogus", "Nats-Schedule-Target": "s.t"},
     (10189, "message schedules pattern is invalid")),
    ({}, "s.a", {"Nats-Schedule": "@every 999ms", "Nats-Schedule-Target": "s.t"},
     (10189, "message schedules pattern is invalid")),
    ({}, "s.a", {"Nats-Schedule": "@every soon", "Nats-Schedule-Target": "s.t"},
     (10189, "message schedules pattern is invalid")),
    ({}, "s.a", {"Nats-Schedule": "* * * * *", "Nats-Schedule-Target": "s.t"},
     (10189, "message schedules pattern is invalid")),
    ({}, "s.a", {"Nats-Schedule": "60 * * * * *", "Nats-Schedule-Target": "s.t"},
     (10189, "message schedules pattern is invalid")),
    ({}, "s.a", {"Nats-Schedule": "0 0 0 1 foo *", "Nats-Schedule-Target": "s.t"},
     (10189, "message schedules pattern is invalid")),
    # a field past strconv.Atoi's 64 bits, of any length
    ({}, "s.a", {"Nats-Schedule": "9" * 5000 + " * * * * *", "Nats-Schedule-Target": "s.t"},
     (10189, "message schedules pattern is invalid")),
    ({}, "s.a", {"Nats-Schedule": "*/" + "9" * 5000 + " * * * * *",
                 "Nats-Schedule-Target": "s.t"},
     (10189, "message schedules pattern is invalid")),
    ({}, "s.a", {"Nats-Schedule": FUTURE, "Nats-Schedule-Target": "s.t",
                 "Nats-Schedule-Time-Zone": "Europe/Amsterdam"},
     (10189, "message schedules pattern is invalid")),  # no time zone for @at
    ({}, "s.a", {"Nats-Schedule": "@every 5s", "Nats-Schedule-Target": "s.t",
                 "Nats-Schedule-Time-Zone": "UTC"},
     (10189, "message schedules pattern is invalid")),  # nor for @every
    ({}, "s.a", {"Nats-Schedule": FUTURE},
     (10190, "message schedules target is invalid")),
    ({}, "s.a", {"Nats-Schedule": FUTURE, "Nats-Schedule-Target": "s.a"},
     (10190, "message schedules target is invalid")),
    ({}, "s.a", {"Nats-Schedule": FUTURE, "Nats-Schedule-Target": "s.*"},
     (10190, "message schedules target is invalid")),
    ({}, "s.a", {"Nats-Schedule": FUTURE, "Nats-Schedule-Target": "other.t"},
     (10190, "message schedules target is invalid")),  # outside the stream's subjects
    ({}, "s.a", {"Nats-Schedule": FUTURE, "Nats-Schedule-Target": "s.t",
                 "Nats-Schedule-TTL": "bogus"},
     (10191, "message schedules invalid per-message TTL")),
    ({}, "s.a", {"Nats-Schedule": FUTURE, "Nats-Schedule-Target": "s.t",
                 "Nats-Schedule-Rollup": "all"},
     (10192, "message schedules invalid rollup")),
    ({}, "s.a", {"Nats-Schedule": FUTURE, "Nats-Schedule-Target": "s.t",
                 "Nats-Rollup": "all"},
     (10192, "message schedules invalid rollup")),
    ({}, "s.a", {"Nats-Schedule": FUTURE, "Nats-Schedule-Target": "s.t",
                 "Nats-Schedule-TTL": "5s"},
     (10166, "per-message TTL is disabled")),
    ({}, "s.a", {"Nats-Schedule": FUTURE, "Nats-Schedule-Target": "s.t",
                 "Nats-Schedule-Source": "s.t"},
     (10203, "message schedules source is invalid")),
    ({}, "s.a", {"Nats-Schedule": FUTURE, "Nats-Schedule-Target": "s.t",
                 "Nats-Schedule-Source": "s.a"},
     (10203, "message schedules source is invalid")),
    ({}, "s.a", {"Nats-Schedule": FUTURE, "Nats-Schedule-Target": "s.t",
                 "Nats-Schedule-Source": "other.x"},
     (10203, "message schedules source is invalid")),
    ({}, "s.a", {"Nats-Scheduler": "s.b"},
     (10212, "message schedules invalid scheduler")),
    ({}, "s.a", {"Nats-Schedule-Next": "2030-01-01T00:00:00Z", "Nats-Scheduler": "s.b"},
     (10212, "message schedules invalid scheduler")),
    ({}, "s.a", {"Nats-Schedule-Next": "purge"},
     (10212, "message schedules invalid scheduler")),
    ({}, "s.a", {"Nats-Schedule-Next": "purge", "Nats-Scheduler": "s.a"},
     (10212, "message schedules invalid scheduler")),
    ({}, "s.a", {"Nats-Schedule": "0 0 9 * * *", "Nats-Schedule-Target": "s.t",
                 "Nats-Schedule-Time-Zone": "Mars/Olympus"},
     (10223, "message schedules time zone is invalid")),
    ({}, "s.a", {"Nats-Schedule": "0 0 9 * * *", "Nats-Schedule-Target": "s.t",
                 "Nats-Schedule-Time-Zone": ""},
     (10223, "message schedules time zone is invalid")),
    ({"allow_msg_schedules": False}, "s.a",
     {"Nats-Schedule": FUTURE, "Nats-Schedule-Target": "s.t"},
     (10188, "message schedules is disabled")),
    ({"allow_msg_schedules": False}, "s.a",
     {"Nats-Schedule": "@at bogus", "Nats-Schedule-Target": "s.t"},
     (10188, "message schedules is disabled")),
    ({"allow_msg_schedules": False}, "s.a",
     {"Nats-Schedule-Next": "purge", "Nats-Scheduler": "s.b"},
     (10188, "message schedules is disabled")),
    ({"allow_msg_schedules": False}, "s.a",
     {"Nats-Scheduler": "s.b"}, (10212, "message schedules invalid scheduler")),
]


@pytest.mark.parametrize("extra,subject,headers,expected", REFUSALS)
def test_refusals(js, extra, subject, headers, expected):
    js.add_stream(sched_cfg(**extra))
    assert outcome(js, subject, headers) == expected
    assert state(js)["messages"] == 0


def test_purge_names_a_subject_that_is_not_a_schedule(js):
    js.add_stream(sched_cfg())
    js.publish("s.plain", b"x")
    assert outcome(js, "s.a", {"Nats-Schedule-Next": "purge", "Nats-Scheduler": "s.plain"}) \
        == (10212, "message schedules invalid scheduler")


def test_empty_pattern_is_no_schedule(js):
    js.add_stream(sched_cfg())
    assert outcome(js, "s.a", {"Nats-Schedule": "", "Nats-Schedule-Target": "s.t"}) == 1
    assert schedules(js) == []


# --- firing on the engine's clock ---------------------------------------------------------------
def test_at_fires_once_and_removes_the_schedule(js, clock):
    js.add_stream(sched_cfg())
    when = at(clock, 2)
    assert outcome(js, "s.sched", {"Nats-Schedule": when, "Nats-Schedule-Target": "s.t",
                                   "Nats-Msg-Id": "m1", "Custom": "kept"}, b"hello") == 1
    # The stored schedule carries the rollup the server adds.
    assert last(js, "s.sched")[1]["Nats-Rollup"] == ["sub"]
    assert schedules(js) == [("s.sched", 1, when[4:])]
    clock.advance_s(1.9)
    assert state(js)["messages"] == 1  # not yet due
    clock.advance_s(0.1)
    st = state(js)  # a read is an engine call: the due schedule fires first
    assert (st["messages"], st["first_seq"], st["last_seq"]) == (1, 2, 2)
    seq, hdrs, data = last(js, "s.t")
    assert (seq, data) == (2, b"hello")
    assert hdrs == {"Custom": ["kept"], "Nats-Scheduler": ["s.sched"],
                    "Nats-Schedule-Next": ["purge"]}
    assert schedules(js) == []
    clock.advance_s(60)
    assert state(js)["messages"] == 1  # fired once


def test_at_in_the_past_fires_at_the_next_call(js, clock):
    js.add_stream(sched_cfg())
    js.publish("s.sched", b"late", {"Nats-Schedule": at(clock, -5),
                                    "Nats-Schedule-Target": "s.t"})
    assert last(js, "s.t")[2] == b"late"


# nats-server keeps a schedule's time as Go's UnixNano (int64 arithmetic): a time up to
# 2262-04-11T23:47:16.854775807Z is stored as it is; one past it wraps around, here into the
# past, and nats-server 2.15.1 fires it at once (tests/live/test_parity_schedules.py).
@pytest.mark.parametrize(("when", "stored_as"), [
    ("2262-04-11T23:47:16Z", "2262-04-11T23:47:16Z"),
    ("2262-04-11T23:47:17Z", "1677-09-21T00:12:43.290448384Z"),
    ("9999-12-31T23:59:59Z", "1816-03-30T05:56:07.066277376Z"),
])
def test_far_future_at_is_kept_as_the_server_keeps_it(when, stored_as):
    parsed = SCH.parse_schedule("@at " + when, None, 0, 0)
    assert parsed is not None and parsed[0] is not None
    assert format_rfc3339_nano(SCH._unix_nano(parsed[0])) == stored_as


def test_far_future_at_within_int64_never_fires_and_past_it_fires_at_once(js, clock):
    js.add_stream(sched_cfg())
    js.publish("s.keep", b"k", {"Nats-Schedule": "@at 2262-04-11T23:47:16Z",
                                "Nats-Schedule-Target": "s.kept"})
    js.publish("s.end", b"e", {"Nats-Schedule": "@at 9999-12-31T23:59:59Z",
                               "Nats-Schedule-Target": "s.t"})
    clock.advance_s(365 * 24 * 3600)
    assert last(js, "s.t")[2] == b"e"
    assert schedules(js) == [("s.keep", 1, "2262-04-11T23:47:16Z")]
    assert state(js)["messages"] == 2  # s.keep and the fired s.t


def test_every_repeats_on_rounded_times(js, clock):
    js.add_stream(sched_cfg())
    clock.advance(SEC // 2)  # published at .5s: anchored on the rounded second
    js.publish("s.ev", b"tick", {"Nats-Schedule": "@every 5s", "Nats-Schedule-Target": "s.t"})
    assert schedules(js) == [("s.ev", 1, "2026-01-01T00:00:06Z")]
    clock.advance_s(5.4)  # 00:00:05.9
    assert state(js)["messages"] == 1
    clock.advance_s(0.1)  # 00:00:06
    seq, hdrs, data = last(js, "s.t")
    assert (seq, data) == (2, b"tick")
    assert hdrs == {"Nats-Scheduler": ["s.ev"], "Nats-Schedule-Next": ["2026-01-01T00:00:11Z"]}
    assert schedules(js) == [("s.ev", 1, "2026-01-01T00:00:11Z")]
    # Due several times meanwhile: fires once, the next time counted from now.
    clock.advance_s(60)
    seq, hdrs, _ = last(js, "s.t")
    assert seq == 3
    assert hdrs["Nats-Schedule-Next"] == ["2026-01-01T00:01:11Z"]
    assert state(js)["messages"] == 3  # the schedule stays, the target keeps every firing


def test_cron_with_time_zone(js, clock):
    js.add_stream(sched_cfg())
    js.publish("s.cron", b"c", {"Nats-Schedule": "0 30 9 * * *", "Nats-Schedule-Target": "s.t",
                                "Nats-Schedule-Time-Zone": "Europe/Amsterdam"})
    # 09:30 in Amsterdam on 2026-01-01 is 08:30 UTC (winter time).
    assert schedules(js) == [("s.cron", 1, "2026-01-01T08:30:00Z")]
    clock.advance_s(8.5 * 3600)
    _, hdrs, _ = last(js, "s.t")
    assert hdrs["Nats-Schedule-Next"] == ["2026-01-02T09:30:00+01:00"]


def test_predefined_cron_forms(js, clock):
    js.add_stream(sched_cfg())
    js.publish("s.h", b"", {"Nats-Schedule": "@hourly", "Nats-Schedule-Target": "s.t"})
    assert schedules(js) == [("s.h", 1, "2026-01-01T01:00:00Z")]


def test_source_and_rollup_and_ttl(js, clock):
    js.add_stream(sched_cfg(allow_msg_ttl=True))
    js.publish("s.src", b"v1")
    js.publish("s.src", b"v2")
    js.publish("s.t", b"old")
    js.publish("s.sched", b"own", {
        "Nats-Schedule": at(clock, 1), "Nats-Schedule-Target": "s.t",
        "Nats-Schedule-Source": "s.src", "Nats-Schedule-Rollup": "sub",
        "Nats-Schedule-TTL": "1m"})
    clock.advance_s(1)
    seq, hdrs, data = last(js, "s.t")
    assert data == b"v2"  # the source's last message
    assert hdrs == {"Nats-Scheduler": ["s.sched"], "Nats-Schedule-Next": ["purge"],
                    "Nats-TTL": ["1m"], "Nats-Rollup": ["sub"]}
    # the rollup left only the fired message on the target; the TTL removes it after 1m
    assert js.stream_info("S", subjects_filter=">").state.to_json()["subjects"] == {
        "s.src": 2, "s.t": 1}
    clock.advance_s(61)
    assert "s.t" not in js.stream_info("S", subjects_filter=">").state.to_json()["subjects"]


def test_source_without_messages_falls_back_to_the_schedule(js, clock):
    js.add_stream(sched_cfg())
    js.publish("s.sched", b"own", {"Nats-Schedule": at(clock, 1), "Nats-Schedule-Target": "s.t",
                                   "Nats-Schedule-Source": "s.none"})
    clock.advance_s(1)
    assert last(js, "s.t")[2] == b"own"


def test_new_schedule_replaces_the_old_one(js, clock):
    js.add_stream(sched_cfg())
    js.publish("s.sched", b"1", {"Nats-Schedule": at(clock, 10), "Nats-Schedule-Target": "s.t"})
    js.publish("s.sched", b"2", {"Nats-Schedule": at(clock, 1), "Nats-Schedule-Target": "s.t"})
    assert state(js)["messages"] == 1  # the rollup of the schedule subject
    clock.advance_s(20)
    assert last(js, "s.t")[2] == b"2"
    assert state(js)["messages"] == 1


def test_plain_message_with_headers_cancels_a_schedule(js, clock):
    js.add_stream(sched_cfg())
    js.publish("s.sched", b"1", {"Nats-Schedule": at(clock, 1), "Nats-Schedule-Target": "s.t"})
    js.publish("s.sched", b"2", {"Custom": "x"})
    assert schedules(js) == []
    clock.advance_s(5)
    assert state(js)["messages"] == 2


@pytest.mark.parametrize("subject,hdrs", [
    ("s.sched", None),  # no headers (the server's TestJetStreamScheduledMessageNotDeactivated)
    ("s.sched", {"Nats-Msg-Id": "m"}),
])
def test_plain_message_cancels_a_schedule(js, clock, subject, hdrs):
    js.add_stream(sched_cfg())
    js.publish(subject, b"1", {"Nats-Schedule": at(clock, 1), "Nats-Schedule-Target": "s.t"})
    js.publish(subject, b"2", hdrs)
    assert schedules(js) == []
    clock.advance_s(5)
    assert js.stream_info("S", subjects_filter=">").state.to_json()["subjects"] == {"s.sched": 2}


def test_plain_messages_in_bulk_cancel_schedules(js, clock):
    js.add_stream(sched_cfg())
    js.publish("s.a", b"1", {"Nats-Schedule": at(clock, 1), "Nats-Schedule-Target": "s.t"})
    js.publish("s.b", b"1", {"Nats-Schedule": at(clock, 1), "Nats-Schedule-Target": "s.t"})
    js.publish_many([("s.a", b"2", None), ("s.c", b"3", None)])
    assert [s for s, _q, _d in schedules(js)] == ["s.b"]


def test_fired_message_keeps_the_target_subjects_schedule(js, clock):
    """TestJetStreamScheduledMessageDeliveryPreservesTargetSchedule: a fired message carries
    Nats-Scheduler, so storing it on another schedule's subject leaves that schedule."""
    js.add_stream(sched_cfg())
    js.publish("s.A", b"a", {"Nats-Schedule": at(clock, 0.5), "Nats-Schedule-Target": "s.B"})
    js.publish("s.B", b"b", {"Nats-Schedule": at(clock, 2), "Nats-Schedule-Target": "s.C"})
    clock.advance_s(1)
    assert last(js, "s.B")[1]["Nats-Scheduler"] == ["s.A"]
    assert [s for s, _q, _d in schedules(js)] == ["s.B"]
    clock.advance_s(2)
    assert last(js, "s.C")[2] == b"b"


def test_repeating_source_with_stale_scheduler_headers_keeps_firing(js, clock):
    """TestJetStreamClusterScheduledMessageSubjectSourcingRepeatingNotStuck: the source's
    Nats-Scheduler / Nats-Schedule-Next are stripped (the Nats-Schedule prefix), so the fired
    message moves its own schedule on."""
    js.add_stream(sched_cfg())
    js.publish("s.data", b"d", {"Nats-Schedule-Next": "purge", "Nats-Scheduler": "s.victim"})
    js.publish("s.sb", b"", {"Nats-Schedule": "@every 1s", "Nats-Schedule-Target": "s.pub",
                             "Nats-Schedule-Source": "s.data"})
    for _ in range(3):
        clock.advance_s(1)
        state(js)
    subjects = js.stream_info("S", subjects_filter=">").state.to_json()["subjects"]
    assert subjects["s.pub"] == 3
    assert last(js, "s.pub")[1] == {"Nats-Scheduler": ["s.sb"],
                                    "Nats-Schedule-Next": ["2026-01-01T00:00:04Z"]}
    assert last(js, "s.sb")[1]["Nats-Schedule"] == ["@every 1s"]


def test_deleted_repeating_schedule_stops(js, clock):
    """TestJetStreamClusterScheduledIntervalMessage: removing the schedule message stops it."""
    js.add_stream(sched_cfg())
    seq = js.publish("s.sched", b"", {"Nats-Schedule": "@every 1s",
                                      "Nats-Schedule-Target": "s.t"}).seq
    clock.advance_s(1)
    state(js)
    js.delete_msg("S", seq)
    clock.advance_s(5)
    assert js.stream_info("S", subjects_filter=">").state.to_json()["subjects"] == {"s.t": 1}
    assert schedules(js) == []


def test_purge_of_a_subject_without_messages_is_stored(js, clock):
    """TestJetStreamClusterPurgeScheduleWithInvalidScheduler: a purge naming a subject with no
    message is a no-op, kept for compatibility; an expected subject sequence can make it
    strict."""
    js.add_stream(sched_cfg())
    assert outcome(js, "s.last", {"Nats-Schedule-Next": "purge",
                                  "Nats-Scheduler": "s.none"}) == 1
    assert outcome(js, "s.last", {"Nats-Schedule-Next": "purge", "Nats-Scheduler": "s.none",
                                  "Nats-Expected-Last-Subject-Sequence": "1",
                                  "Nats-Expected-Last-Subject-Sequence-Subject": "s.none"}) \
        == (10071, "wrong last sequence: 0")


# --- schedules in an atomic batch (ADR-50) ------------------------------------------------------
# The msg-schedules-* cases of nats-server's TestJetStreamAtomicBatchPublishStageAndCommit (the
# batch's checkMsgHeadersPreClusteredProposal), each batch staged and committed on a stream of
# subjects foo, bar, baz: (name, stream config extras, [(subject, headers)], the commit's
# result: the count of the batch or the refusal's code). The cases on the clustered server's
# in-flight state (msg-schedules-purge-inflight-*) have no engine counterpart; a stream with
# schedules but without roll-ups cannot be made (msg-schedules-rollup-disabled).
AT_1970 = "@at 1970-01-01T00:00:00Z"
BATCH_SCHEDULES = [
    ("disabled", {"allow_msg_schedules": False},
     [("foo", {"Nats-Schedule": AT_1970})], 10188),
    ("disabled, invalid pattern", {"allow_msg_schedules": False},
     [("foo", {"Nats-Schedule": "disabled"})], 10188),
    ("ttl disabled", {}, [("foo", {"Nats-Schedule": AT_1970, "Nats-Schedule-TTL": "1s"})],
     10166),
    ("ttl invalid", {"allow_msg_ttl": True},
     [("foo", {"Nats-Schedule": AT_1970, "Nats-Schedule-TTL": "invalid"})], 10191),
    ("rollup invalid", {}, [("foo", {"Nats-Schedule": AT_1970,
                                     "Nats-Schedule-Rollup": "invalid"})], 10192),
    ("invalid schedule", {}, [("foo", {"Nats-Schedule": "invalid"})], 10189),
    ("invalid time zone", {}, [("foo", {"Nats-Schedule": "0 * * * * *",
                                        "Nats-Schedule-Time-Zone": "Not/A/Zone"})], 10223),
    ("empty time zone", {}, [("foo", {"Nats-Schedule": "0 * * * * *",
                                      "Nats-Schedule-Time-Zone": ""})], 10223),
    ("target mismatch", {}, [("foo", {"Nats-Schedule": AT_1970,
                                      "Nats-Schedule-Target": "not.matching"})], 10190),
    ("target must be literal", {}, [("foo", {"Nats-Schedule": AT_1970,
                                             "Nats-Schedule-Target": "foo.*"})], 10190),
    ("target must be unique", {}, [("foo", {"Nats-Schedule": AT_1970,
                                            "Nats-Schedule-Target": "foo"})], 10190),
    ("schedules", {}, [("foo", {"Nats-Schedule": AT_1970, "Nats-Schedule-Target": "baz"}),
                       ("bar", {"Nats-Schedule": AT_1970, "Nats-Schedule-Target": "baz",
                                "Nats-Rollup": "sub"})], 2),
    ("purge staged not schedule", {},
     [("foo", None), ("bar", {"Nats-Schedule-Next": "purge", "Nats-Scheduler": "foo"})],
     10212),
    ("purge staged schedule", {},
     [("foo", {"Nats-Schedule": AT_1970, "Nats-Schedule-Target": "baz"}),
      ("bar", {"Nats-Schedule-Next": "purge", "Nats-Scheduler": "foo"})], 2),
    ("purge staged overwritten", {},
     [("foo", {"Nats-Schedule": AT_1970, "Nats-Schedule-Target": "baz"}), ("foo", None),
      ("bar", {"Nats-Schedule-Next": "purge", "Nats-Scheduler": "foo"})], 10212),
    # measured on nats-server 2.15.1 (tests/live/test_parity_schedules.py): a schedule's
    # implicit Nats-Rollup: sub meets the batch's rollup rule
    ("two schedules on one subject", {},
     [("foo", {"Nats-Schedule": AT_1970, "Nats-Schedule-Target": "baz"}),
      ("foo", {"Nats-Schedule": AT_1970, "Nats-Schedule-Target": "bar"})], 10111),
    ("a schedule after a plain message", {},
     [("foo", None), ("foo", {"Nats-Schedule": AT_1970, "Nats-Schedule-Target": "baz"})],
     10111),
]


@pytest.mark.parametrize("name,extra,items,expected", BATCH_SCHEDULES,
                         ids=[c[0] for c in BATCH_SCHEDULES])
def test_schedules_in_a_batch(js, clock, name, extra, items, expected):
    js.add_stream(sched_cfg(subjects=["foo", "bar", "baz"], allow_atomic=True, **extra))
    result = None
    for n, (subject, hdrs) in enumerate(items, 1):
        h = {"Nats-Batch-Id": "b", "Nats-Batch-Sequence": str(n), **(hdrs or {})}
        if n == len(items):
            h["Nats-Batch-Commit"] = "1"
        try:
            result = js.publish(subject, b"", h)
        except ApiError as e:
            result = e.err_code
    if expected > 1000:
        assert result == expected
        assert state(js)["messages"] == 0  # all or nothing
        return
    assert (result.batch, result.count) == ("b", expected)
    # the committed @at 1970 schedules fire at the next call (none left after the purge)
    subjects = js.stream_info("S", subjects_filter=">").state.to_json()["subjects"]
    assert subjects.get("baz", 0) == (2 if name == "schedules" else 0)


def test_client_purge_of_a_schedule(js, clock):
    js.add_stream(sched_cfg())
    js.publish("s.sched", b"1", {"Nats-Schedule": at(clock, 10), "Nats-Schedule-Target": "s.t"})
    assert outcome(js, "s.t", {"Nats-Schedule-Next": "purge", "Nats-Scheduler": "s.sched"}) == 2
    assert schedules(js) == []
    clock.advance_s(20)
    assert state(js)["messages"] == 1


def test_purged_schedule_never_fires(js, clock):
    js.add_stream(sched_cfg())
    js.publish("s.sched", b"1", {"Nats-Schedule": at(clock, 1), "Nats-Schedule-Target": "s.t"})
    js.purge_stream("S")
    clock.advance_s(5)
    assert state(js)["messages"] == 0
    assert schedules(js) == []


def test_deleted_stream_forgets_its_schedules(js, clock):
    js.add_stream(sched_cfg())
    js.publish("s.sched", b"1", {"Nats-Schedule": at(clock, 1), "Nats-Schedule-Target": "s.t"})
    js.delete_stream("S")
    js.add_stream(sched_cfg())
    assert schedules(js) == []


def test_replicate_pump_fires_due_schedules(dd, clock):
    from jetlink.core.replication import pump

    js = JetStream(dd.open(), clock)
    js.add_stream(sched_cfg())
    js.publish("s.sched", b"1", {"Nats-Schedule": at(clock, 1), "Nats-Schedule-Target": "s.t"})
    clock.advance_s(1)
    pump(dd, clock)  # the step of `jetlink replicate --follow`
    with js.cluster.read() as conn:
        rows = conn.execute("SELECT COUNT(*) FROM msg_schedules").fetchone()[0]
    assert rows == 0


# --- parsing (nats-server TestJetStreamScheduledMessageParse, facts) ----------------------------
T0 = 1_767_225_600 * SEC  # 2026-01-01T00:00:00Z, a Thursday


def ns(y, mo, d, h=0, mi=0, s=0, tz=UTC):
    return int(datetime(y, mo, d, h, mi, s, tzinfo=tz).timestamp()) * SEC


@pytest.mark.parametrize("pattern,ts,expected", [
    ("@at 2026-03-04T05:06:07.123456789Z", 0, (1_772_600_767_123_456_789, False, "")),
    ("@at 2026-03-04T06:06:07+01:00", 0, (ns(2026, 3, 4, 5, 6, 7), False, "")),
    ("@every 5s", T0, (T0 + 5 * SEC, True, "2026-01-01T00:00:05Z")),
    ("@every 1500ms", T0 + SEC + SEC // 2, (T0 + 3 * SEC + SEC // 2, True,
                                            "2026-01-01T00:00:03.5Z")),
    ("* * * * * *", T0, (T0 + SEC, True, "2026-01-01T00:00:01Z")),
    ("* * * * * *", T0 + SEC - 1, (T0 + SEC, True, "2026-01-01T00:00:01Z")),
    ("@yearly", ns(2028, 1, 1), (ns(2029, 1, 1), True, "2029-01-01T00:00:00Z")),
    ("@annually", ns(2028, 1, 1), (ns(2029, 1, 1), True, "2029-01-01T00:00:00Z")),
    ("@monthly", ns(2028, 1, 1), (ns(2028, 2, 1), True, "2028-02-01T00:00:00Z")),
    ("@weekly", ns(2028, 1, 2), (ns(2028, 1, 9), True, "2028-01-09T00:00:00Z")),
    ("@daily", ns(2028, 1, 1), (ns(2028, 1, 2), True, "2028-01-02T00:00:00Z")),
    ("@midnight", ns(2028, 1, 1), (ns(2028, 1, 2), True, "2028-01-02T00:00:00Z")),
    ("@hourly", ns(2028, 1, 1), (ns(2028, 1, 1, 1), True, "2028-01-01T01:00:00Z")),
    ("0 0 12 * * mon-fri", T0, (ns(2026, 1, 1, 12), True, "2026-01-01T12:00:00Z")),
    ("0 0 0 29 feb *", T0, (ns(2028, 2, 29), True, "2028-02-29T00:00:00Z")),
    ("*/15 * * * * *", T0 + SEC, (T0 + 15 * SEC, True, "2026-01-01T00:00:15Z")),
    ("0 0 0 1,15 * *", T0, (ns(2026, 1, 15), True, "2026-01-15T00:00:00Z")),
    ("0 0 0 31 2 *", T0, None),  # never within five years
    ("", T0, (None, False, "")),
    ("@at 1970-01-01T00:00:00Z", T0, (0, False, "")),  # time 0 is a schedule (due at once)
])
def test_parse_schedule(pattern, ts, expected):
    assert SCH.parse_schedule(pattern, None, ts, ts) == expected


def test_parse_skips_ahead_when_far_behind():
    now = T0 + 3600 * SEC
    assert SCH.parse_schedule("@every 5s", None, 0, now)[0] == now + 5 * SEC
    assert SCH.parse_schedule("* * * * * *", None, 0, now)[0] == now + SEC


def test_parse_cron_time_zone():
    ams = ZoneInfo("Europe/Amsterdam")
    # Summer time: 09:00 in Amsterdam is 07:00 UTC.
    ts = ns(2026, 7, 1)
    assert SCH.parse_schedule("0 0 9 * * *", ams, ts, ts) == (
        ns(2026, 7, 1, 9, tz=ams), True, "2026-07-01T09:00:00+02:00")
    assert SCH.parse_schedule("* * * * * *", ams, ts, ts)[2] == "2026-07-01T02:00:01+02:00"


# --- the CLI: natscli's schedule flags of `pub` ------------------------------------------------
@pytest.fixture
def sjl(jl, clock, monkeypatch):
    monkeypatch.setattr("jetlink.cli.common.make_clock", lambda: clock)
    assert jl("stream", "add", "S", "--subjects", "s.>", "--allow-schedules", "--allow-rollup",
              "--allow-msg-ttl", "--defaults", "-j").exit_code == 0
    return jl


def _hdrs(res):
    return base64.b64decode(json.loads(res.stdout)["hdrs"]).decode()


@pytest.mark.parametrize("flags,expected", [
    (["--schedule-after", "2s"], "Nats-Schedule: @at 2026-01-01T00:00:02Z\r\n"),
    (["--schedule-at", "2026-01-01T02:00:00.5+01:00"],
     "Nats-Schedule: @at 2026-01-01T01:00:00Z\r\n"),
    (["--schedule-every", "90s", "--schedule-ttl", "1m"],
     "Nats-Schedule: @every 1m30s\r\nNats-Schedule-TTL: 1m0s\r\n"),
    (["--schedule-cron", "0 0 9 * * *", "--schedule-source", "s.src"],
     "Nats-Schedule: 0 0 9 * * *\r\nNats-Schedule-Source: s.src\r\n"),
])
def test_cli_schedule_flags(sjl, flags, expected):
    res = sjl("pub", "s.sched", "hi", "--schedule-dest", "s.t", *flags, "-j")
    assert res.exit_code == 0, res.stderr
    got = _hdrs(sjl("stream", "get", "S", "--last-for", "s.sched", "-j"))
    assert got == ("NATS/1.0\r\nNats-Schedule-Target: s.t\r\n" + expected
                   + "Nats-Rollup: sub\r\n\r\n")


@pytest.mark.parametrize("flags,message", [
    (["--schedule-every", "5s"], "schedule destination is required when setting schedule "
                                 "properties"),
    (["--core", "--schedule-dest", "s.t", "--schedule-after", "1s"],
     "--schedule-*: a scheduled message is a JetStream publish, not with --core"),
    (["--schedule-dest", "s.t", "--schedule-at", "2026-01-01T00:00:00Z", "--schedule-after",
      "1s"], "--schedule-at and --schedule-after are mutually exclusive"),
    (["--schedule-dest", "s.t", "--schedule-every", "1s", "--schedule-after", "1s"],
     "--schedule-every may not be used with --schedule-at or --schedule-after"),
    (["--schedule-dest", "s.t", "--schedule-cron", "* * * * * *", "--schedule-every", "1s"],
     "--schedule-at, --schedule-every and --schedule-after may not be used with "
     "--schedule-cron"),
])
def test_cli_schedule_flag_refusals(sjl, flags, message):
    res = sjl("pub", "s.sched", "hi", *flags)
    assert res.exit_code == 2
    assert message in res.stderr
    info = sjl("stream", "info", "S", "-j")
    assert json.loads(info.stdout)["state"]["messages"] == 0


def test_cli_schedule_fires_at_the_next_command(sjl, clock):
    assert sjl("pub", "s.sched", "hi", "--schedule-dest", "s.t", "--schedule-after", "1s",
               "-j").exit_code == 0
    assert sjl("stream", "get", "S", "--last-for", "s.t", "-j").exit_code == 1
    clock.advance_s(1)
    res = sjl("stream", "get", "S", "--last-for", "s.t", "-j")
    assert res.exit_code == 0
    assert _hdrs(res) == "NATS/1.0\r\nNats-Scheduler: s.sched\r\nNats-Schedule-Next: purge\r\n\r\n"
