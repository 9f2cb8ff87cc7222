"""The bulk path of ``publish_batch`` (core/streamstore/append.py ``_append_bulk``): runs of
header-less messages no limit acts on are linked per subject instead of per message. The
stored rows (ids, subject ids, chain pointers, data), the subjects, the stream's counters and
the acks must be exactly those of publishing the same messages one by one."""

from __future__ import annotations

import pytest
from helpers import cfg

from jetlink.core.clock import ManualClock
from jetlink.core.jetstream import JetStream
from jetlink.core.messages import PubAck
from jetlink.core.store import DataDir

MASK = (1 << 40) - 1


def _stored(js: JetStream) -> tuple[list, list, tuple]:
    conn = js.cluster.conn
    msgs = conn.execute(f"SELECT id & {MASK}, subject_id, ts, prev, next, hdr, data FROM msgs "
                        "ORDER BY id").fetchall()
    subjects = conn.execute("SELECT id, subject, msgs, first_seq, last_seq FROM subjects "
                            "ORDER BY id").fetchall()
    stream = conn.execute("SELECT first_seq, last_seq, last_ts, msgs, bytes, last_msg_id "
                          "FROM streams ORDER BY id").fetchone()
    return msgs, subjects, stream


def _both(tmp_path, limits: dict, batches: list[list]) -> list:
    """Each batch through publish_batch in one data directory, message by message in the
    other: (acks, stored) of each."""
    out = []
    for k, bulk in enumerate((True, False)):
        clock = ManualClock(1_700_000_000_000_000_000)
        js = JetStream(DataDir(tmp_path / f"d{k}").open(), clock)
        js.add_stream(cfg(name="B", subjects=["b.>"], **limits))
        acks = []
        for batch in batches:
            if bulk:
                acks += js.publish_batch(batch)
            else:
                for m in batch:
                    try:
                        acks.append(js.publish(*m))
                    except Exception as e:  # noqa: BLE001 - compared with the batch's result
                        acks.append(e)
            clock.advance(1_000)
        out.append(([a.to_json() if isinstance(a, PubAck) else str(a) for a in acks],
                    _stored(js)))
    return out


def _batch(n: int, subjects: int, start: int = 0, size: int = 5) -> list:
    return [(f"b.s{(start + i) % subjects}", bytes([65 + i % 26]) * size, None)
            for i in range(n)]


@pytest.mark.parametrize("limits", [
    {},
    {"max_msgs_per_subject": 50},
    {"max_msgs": 1000, "max_bytes": 100_000, "max_msgs_per_subject": 200},
    {"max_msg_size": 64},
], ids=["none", "per-subject", "all-limits", "max-msg-size"])
def test_bulk_runs_store_what_one_by_one_stores(tmp_path, limits):
    # several batches (chains continue into stored rows), a run broken by a header message
    # (a second run links to the pending rows of the first), new and known subjects
    batches = [
        _batch(40, 7),
        _batch(30, 11, start=3) + [("b.s1", b"h", {"A": "b"})] + _batch(25, 5, start=2),
        _batch(60, 13, start=1),
    ]
    bulk, one_by_one = _both(tmp_path, limits, batches)
    assert bulk == one_by_one
    assert len(bulk[1][0]) == 156  # every message stored


@pytest.mark.parametrize("limits", [
    {"max_msgs_per_subject": 4},
    {"max_msgs": 30},
    {"max_bytes": 600},
    {"max_msgs": 30, "discard": "new"},
    {"max_msgs_per_subject": 3, "discard": "new", "discard_new_per_subject": True},
    {"max_msg_size": 7},
], ids=["per-subject", "max-msgs", "max-bytes", "discard-new", "discard-new-per-subject",
        "max-msg-size"])
def test_runs_a_limit_acts_on_store_what_one_by_one_stores(tmp_path, limits):
    batches = [_batch(20, 3), _batch(25, 4, start=1, size=9) + _batch(10, 2, size=6)]
    bulk, one_by_one = _both(tmp_path, limits, batches)
    assert bulk == one_by_one
