"""The bulk path of ``publish_batch`` (core/streamstore/append.py ``_append_bulk``): runs of
header-less messages no limit acts on are linked per subject instead of per message. The
stored rows (ids, subject ids, chain pointers, data), the subjects, the stream's counters and
the acks must be exactly those of publishing the same messages one by one."""

from __future__ import annotations

import pytest
from helpers import cfg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jetlink.core.clock import ManualClock
from jetlink.core.errors import JetlinkError
from jetlink.core.jetstream import JetStream
from jetlink.core.messages import PubAck
from jetlink.core.store import DataDir
from jetlink.core.streams import next_sql

MASK = (1 << 40) - 1


def _stored(js: JetStream) -> tuple[list, list, tuple]:
    conn = js.cluster.conn
    # a chain's next as every reader takes it (a link set on a stored row is in msg_next)
    msgs = conn.execute(f"SELECT id & {MASK}, subject_id, ts, prev, {next_sql()}, hdr, data "
                        "FROM msgs ORDER BY id").fetchall()
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


def test_a_later_run_removes_rows_of_a_bulk_run_in_the_same_transaction(tmp_path):
    # The first run is linked in bulk (its rows' positions are indexed only when first asked
    # for); the run after the header message reaches max_msgs_per_subject and removes rows
    # of the first, still pending in the same transaction.
    batch = _batch(6, 3) + [("b.s0", b"h", {"A": "b"})] + _batch(6, 3)
    bulk, one_by_one = _both(tmp_path, {"max_msgs_per_subject": 4}, [batch])
    assert bulk == one_by_one
    assert [row[2] for row in bulk[1][1]] == [4, 4, 4]  # each subject at its limit


# --- subject states kept from one bulk publish to the next (overlay.py SubjectMemo) --------

def _replay(tmp_path, ops: list) -> list:
    """``ops`` applied to two data directories: ("batch", msgs) through publish_batch in the
    first and message by message in the second; (name, fn) ops call ``fn(js, path)`` on both
    (``path``: the data directory, for a second connection). (acks, stored) of each."""
    out = []
    for k, bulk in enumerate((True, False)):
        clock = ManualClock(1_700_000_000_000_000_000)
        path = tmp_path / f"d{k}"
        js = JetStream(DataDir(path).open(), clock)
        js.add_stream(cfg(name="B", subjects=["b.>"]))
        acks: list = []
        for op, arg in ops:
            if op != "batch":
                arg(js, path)
            elif bulk:
                acks += js.publish_batch(arg)
            else:
                acks += [js.publish(*m) for m in arg]
            clock.advance(1_000)
        out.append(([a.to_json() for a in acks], _stored(js)))
    return out


def _other_connection(path):
    """A second connection to the same data directory (another process, as SQLite sees it)."""
    return JetStream(DataDir(path).open(), ManualClock(1_700_000_000_000_100_000))


def test_kept_subject_states_yield_to_another_connections_commit(tmp_path):
    # Another writer publishes to known subjects and purges one between two bulk publishes:
    # the states this connection kept are stale, and PRAGMA data_version says so.
    def other(js, path):
        o = _other_connection(path)
        o.publish("b.s1", b"other")
        o.publish("b.s9", b"other")
        o.purge_stream("B", subject="b.s2")
        o.cluster.close()

    ops = [("batch", _batch(30, 5)), ("batch", _batch(30, 5, start=1)), ("other", other),
           ("batch", _batch(30, 5, start=2)), ("batch", _batch(30, 10))]
    bulk, one_by_one = _replay(tmp_path, ops)
    assert bulk == one_by_one


def test_kept_subject_states_yield_to_this_connections_other_writes(tmp_path):
    # The same connection purges and deletes between bulk publishes (total_changes moves);
    # subjects emptied by the purge free their ids, which new subjects then take again.
    def purge(js, path):
        js.purge_stream("B", subject="b.s4")
        js.purge_stream("B", subject="b.s3")

    def delete(js, path):
        js.delete_msg("B", js.state("B").last_seq)

    ops = [("batch", _batch(30, 5)), ("batch", _batch(30, 5)), ("purge", purge),
           ("batch", [(f"b.n{i % 4}", b"x", None) for i in range(12)]),
           ("batch", _batch(30, 5)), ("delete", delete), ("batch", _batch(30, 5))]
    bulk, one_by_one = _replay(tmp_path, ops)
    assert bulk == one_by_one
    subjects = [row[1] for row in bulk[1][1]]
    assert len(subjects) == len(set(subjects)) == 9  # b.s0-4 and b.n0-3, each once


def test_kept_subject_states_leave_out_subjects_a_limit_emptied(tmp_path):
    # max_msgs empties b.b inside a bulk publish (its row deleted, its id free again); the
    # next bulk publish gives b.c a new id, which must not be the id b.b had.
    one = [("b.c", b"c", None)]
    batches = [one, [(f"b.{x}", b"m", None) for x in "aaaaabbbbb"],
               [("b.a", b"n", None)] * 10, one + [("b.b", b"o", None)]]
    bulk, one_by_one = _both(tmp_path, {"max_msgs": 10}, batches)
    assert bulk == one_by_one
    assert [row[1] for row in bulk[1][1]] == ["b.a", "b.c", "b.b"]


def test_kept_subject_states_leave_out_subjects_looked_up_but_never_stored(tmp_path):
    # discard new refuses b.c (too big for max_bytes) inside a bulk publish: b.c was given an
    # id when looked up, and never stored; b.e then takes that id, and b.c stored at last
    # must get another.
    big, small = b"x" * 300, b"y" * 10
    batches = [[("b.a", small, None), ("b.c", big, None), ("b.e", big, None)],
               [("b.c", big, None)], [("b.e", small, None)], [("b.c", small, None)]]
    bulk, one_by_one = _both(tmp_path, {"max_bytes": 200, "discard": "new"}, batches)
    assert bulk == one_by_one
    assert [row[1] for row in bulk[1][1]] == ["b.a", "b.e", "b.c"]


def test_a_bulk_publish_reads_the_subject_states_it_lacks_in_a_few_queries(tmp_path):
    # The kept states are those of the last bulk publish (1,000 other keys, as a KV client
    # putting keys batch by batch): the missing ones are read together, not one by one.
    js = JetStream(DataDir(tmp_path).open(), ManualClock(1_700_000_000_000_000_000))
    js.add_stream(cfg(name="B", subjects=["b.>"]))
    keys = [f"b.k{i}" for i in range(2000)]
    # (one message with a header: the loop takes this call, and keeps no states)
    js.publish_batch([(k, b"v", None) for k in keys] + [("b.h", b"h", {"A": "b"})])
    js.publish_batch([(k, b"w", None) for k in keys[:1000]])
    statements: list[str] = []
    js.cluster.conn.set_trace_callback(statements.append)
    try:
        acks = js.publish_batch([(k, b"w", None) for k in keys[1000:]])
    finally:
        js.cluster.conn.set_trace_callback(None)
    assert [a.seq for a in acks] == list(range(3002, 4002))
    reads = [s for s in statements if s.startswith("SELECT") and "FROM subjects" in s]
    assert 1 <= len(reads) <= 4, reads[:5]
    assert js.subjects("B") == {k: 2 for k in keys} | {"b.h": 1}


def test_a_plain_batch_the_bulk_path_cannot_take_is_published_as_the_loop_publishes(tmp_path):
    # a subject no stream captures (its result is the error), a subject too long to be
    # remembered as checked, and new subjects checked on the way: each as one by one
    long = "b." + "x" * 1200
    batches = [[("b.n1", b"1", None), ("elsewhere.x", b"2", None), ("b.n2", b"3", None)],
               [(long, b"4", None), ("b.n1", b"5", None)],
               [("b.n3", b"6", None), ("b.n1", b"7", None)]]
    bulk, one_by_one = _both(tmp_path, {}, batches)
    assert bulk == one_by_one
    assert bulk[0][1] == "no stream matches subject elsewhere.x"


def test_a_plain_batch_with_a_subject_a_client_refuses_stores_nothing(tmp_path):
    js = JetStream(DataDir(tmp_path).open(), ManualClock(1_700_000_000_000_000_000))
    js.add_stream(cfg(name="B", subjects=["b.>"]))
    js.publish_batch([("b.a", b"1", None)])
    for bad in ("b.*", "b..c", "b. c"):
        with pytest.raises(JetlinkError, match="invalid subject"):
            js.publish_batch([("b.a", b"2", None), (bad, b"3", None)])
    assert js.state("B").messages == 1


# --- any mix, generated: the bulk path and the kept states against one-by-one publishing ----

_SUBJECTS = [f"b.s{i}" for i in range(6)]
_MSG = st.tuples(st.sampled_from(_SUBJECTS), st.binary(max_size=12),
                 st.one_of(st.none(), st.none(), st.just({"A": "b"})))
_OP = st.one_of(
    st.tuples(st.just("batch"), st.lists(_MSG, min_size=1, max_size=25)),
    st.tuples(st.just("batch"), st.lists(_MSG.map(lambda m: (m[0], m[1], None)),
                                          min_size=1, max_size=25)),
    st.tuples(st.just("purge"), st.sampled_from(_SUBJECTS)),
    st.tuples(st.just("other"), st.sampled_from(_SUBJECTS)),
)
_LIMITS = st.fixed_dictionaries({}, optional={
    "max_msgs_per_subject": st.integers(1, 8), "max_msgs": st.integers(5, 40),
    "max_bytes": st.integers(300, 1500), "discard": st.just("new"),
})


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(limits=_LIMITS, ops=st.lists(_OP, min_size=1, max_size=8))
def test_any_mix_stores_what_one_by_one_stores(tmp_path_factory, limits, ops):
    # batches (plain ones take the bulk path and keep subject states between them), purges
    # by this connection, publishes by another one: the same rows, subjects, counters and
    # results as publishing every message alone
    tmp_path = tmp_path_factory.mktemp("mix")
    out = []
    for k, bulk in enumerate((True, False)):
        clock = ManualClock(1_700_000_000_000_000_000)
        path = tmp_path / f"d{k}"
        js = JetStream(DataDir(path).open(), clock)
        js.add_stream(cfg(name="B", subjects=["b.>"], **limits))
        results: list = []
        for op, arg in ops:
            if op == "purge":
                js.purge_stream("B", subject=arg)
            elif op == "other":
                o = _other_connection(path)
                results.append(_result(o, arg, b"other"))
                o.cluster.close()
            elif bulk:
                results += js.publish_batch(arg)
            else:
                results += [_result(js, *m) for m in arg]
            clock.advance(1_000)
        out.append(([r.to_json() if isinstance(r, PubAck) else str(r) for r in results],
                    _named(_stored(js))))
        js.cluster.close()
    assert out[0] == out[1]


def _named(stored: tuple) -> tuple:
    """``_stored`` with each subject id replaced by its subject: ids are the store's own
    (one transaction gives ids a limit freed in it to no one, one publish each gives them
    again), the subject a row belongs to is the rule."""
    msgs, subjects, stream = stored
    name = {row[0]: row[1] for row in subjects}
    return ([(m[0], name[m[1]], *m[2:]) for m in msgs], sorted(r[1:] for r in subjects),
            stream)


def _result(js: JetStream, subject: str, data: bytes, headers: dict | None = None):
    try:
        return js.publish(subject, data, headers)
    except JetlinkError as e:  # a refusal (publish raises what publish_batch returns)
        return e


def test_publish_many_stamps_each_message_with_its_own_time(tmp_path):
    """Publishes sent one after the other (`pub --count`) are stored at their own times, as
    the server stamps each one, though the engine writes them in one transaction."""

    class Ticking(ManualClock):
        def now_ns(self) -> int:  # each reading a microsecond later
            return self.advance(1_000)

    js = JetStream(DataDir(tmp_path / "d").open(), Ticking(1_700_000_000_000_000_000))
    js.add_stream(cfg(name="T", subjects=["t.>"]))
    acks = js.publish_many([("t.a", b"x", None)] * 3)
    assert [a.seq for a in acks] == [1, 2, 3]
    times = [js.get_msg("T", seq).ts for seq in (1, 2, 3)]
    assert times[0] < times[1] < times[2], times
