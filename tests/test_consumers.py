"""Consumer delivery, acks, redelivery, pending counts and retention.

The scenarios replay sessions run against nats-server 2.15.1 (pull requests, ack subjects,
``consumer info`` after each step); the expected numbers are the server's. They run on the
in-memory backend with a ManualClock: ack waits pass by moving the clock, nothing sleeps.
"""

from __future__ import annotations

from typing import Any

import pytest

from jetlink.core import consumers as cs
from jetlink.core.clock import ManualClock
from jetlink.core.config.consumer import ConsumerConfig
from jetlink.core.config.stream import StreamConfig
from jetlink.core.config.validate import check_stream_create
from jetlink.core.errors import ApiError

SEC = 1_000_000_000
MS = 1_000_000


class Env:
    """One stream, driven like a client drives the server (shared by both backends)."""

    name: str
    clock: ManualClock

    @property
    def now(self) -> int:
        return self.clock.now_ns()

    def replies(self, name: str, batch: int = 1) -> list[str]:
        """The ack subjects without the ``$JS.ACK.<stream>.<consumer>.`` prefix and time."""
        out = []
        for m in self.fetch(name, batch):
            dc, seq, dseq, _ts, pending = m.reply.split(".")[4:]
            out.append(f"{dc}.{seq}.{dseq}.{pending}")
        return out

    def info(self, name: str) -> dict[str, Any]:
        doc = self.info_doc(name)
        out = {k: doc[k] for k in ("num_ack_pending", "num_redelivered", "num_pending")}
        out["delivered"] = (doc["delivered"]["consumer_seq"], doc["delivered"]["stream_seq"])
        out["ack_floor"] = (doc["ack_floor"]["consumer_seq"], doc["ack_floor"]["stream_seq"])
        return out


class MemoryEnv(Env):
    """The in-memory backend (max_msgs emulated with discard old)."""

    def __init__(self, **stream: Any) -> None:
        self.clock = ManualClock()
        self.be = cs.MemoryConsumerStore()
        cfg = check_stream_create(StreamConfig.from_json({"subjects": ["s.>"], **stream}), {})
        self.name = cfg.name
        self.max_msgs = cfg.max_msgs
        self.be.add_stream(cfg)

    @property
    def engine(self) -> cs.ConsumerEngine:
        return cs.ConsumerEngine(self.be, self.now)

    def pub(self, *subjects: str) -> list[int]:
        out = []
        for subject in subjects:
            self.clock.advance(1000)
            out.append(self.be.publish(self.name, subject, b"x", ts=self.now))
            view = self.be.view(self.name)
            if 0 < self.max_msgs < view.msgs:
                view.remove(view.first_seq)
        return out

    def add(self, **cfg: Any) -> cs.ConsumerInfo:
        return self.engine.add(self.name, ConsumerConfig.from_json(cfg))

    def fetch(self, name: str, batch: int = 1) -> list[cs.DeliveredMsg]:
        return self.engine.fetch(self.name, name, batch)

    def ack(self, name: str, seq: int, dseq: int | None = None) -> bool:
        return self.engine.ack(self.name, name, seq, consumer_seq=dseq)

    def nak(self, name: str, seq: int, delay: int | None = None) -> bool:
        return self.engine.nak(self.name, name, seq, delay=delay)

    def term(self, name: str, seq: int) -> bool:
        return self.engine.term(self.name, name, seq)

    def wpi(self, name: str, seq: int) -> bool:
        return self.engine.in_progress(self.name, name, seq)

    def info_doc(self, name: str) -> dict[str, Any]:
        return self.engine.info(self.name, name).to_json()

    def names(self) -> list[str]:
        return self.engine.names(self.name)

    def delete(self, name: str) -> None:
        self.engine.delete(self.name, name)

    def remove(self, seq: int) -> None:
        self.be.view(self.name).remove(seq)

    def purge(self) -> None:
        self.be.view(self.name).purge()
        self.engine.purged(self.name)

    def state(self) -> dict[str, int]:
        view = self.be.view(self.name)
        return {"messages": view.msgs, "first_seq": view.first_seq, "last_seq": view.last_seq}


class SqliteEnv(Env):
    """The real engine: a cluster database and JetStream, consumers in its tables."""

    def __init__(self, tmp: Any, **stream: Any) -> None:
        from jetlink.core.jetstream import JetStream
        from jetlink.core.store import DataDir

        self.clock = ManualClock()
        self.cluster = DataDir(tmp).open()
        self.js = JetStream(self.cluster, self.clock)
        self.js.add_stream({"subjects": ["s.>"], **stream})
        self.name = stream["name"]

    def pub(self, *subjects: str) -> list[int]:
        out = []
        for subject in subjects:
            self.clock.advance(1000)
            out.append(self.js.publish(subject, b"x").seq)
        return out

    def add(self, **cfg: Any) -> cs.ConsumerInfo:
        return self.js.add_consumer(self.name, ConsumerConfig.from_json(cfg))

    def fetch(self, name: str, batch: int = 1) -> list[cs.DeliveredMsg]:
        return self.js.fetch(self.name, name, batch)

    def ack(self, name: str, seq: int, dseq: int | None = None) -> bool:
        return self.js.ack(self.name, name, seq, consumer_seq=dseq)

    def nak(self, name: str, seq: int, delay: int | None = None) -> bool:
        return self.js.nak(self.name, name, seq, delay=delay)

    def term(self, name: str, seq: int) -> bool:
        return self.js.term(self.name, name, seq)

    def wpi(self, name: str, seq: int) -> bool:
        return self.js.in_progress(self.name, name, seq)

    def info_doc(self, name: str) -> dict[str, Any]:
        return self.js.consumer_info(self.name, name).to_json()

    def names(self) -> list[str]:
        return self.js.consumer_names(self.name)

    def delete(self, name: str) -> None:
        self.js.delete_consumer(self.name, name)

    def remove(self, seq: int) -> None:
        self.js.delete_msg(self.name, seq)

    def purge(self) -> None:
        self.js.purge_stream(self.name)

    def state(self) -> dict[str, int]:
        st = self.js.stream_info(self.name).state
        return {"messages": st.messages, "first_seq": st.first_seq, "last_seq": st.last_seq}


@pytest.fixture(params=["memory", "sqlite"])
def Env_(request, tmp_path):
    """A factory of environments on one backend: ``Env_(name="S", subjects=[...])``."""
    made: list[SqliteEnv] = []

    def make(**stream: Any) -> Env:
        if request.param == "memory":
            return MemoryEnv(**stream)
        env = SqliteEnv(tmp_path / f"d{len(made)}", **stream)
        made.append(env)
        return env

    yield make
    for env in made:
        env.cluster.close()


def info(delivered, ack_floor, ack_pending, redelivered, pending):
    return {"delivered": delivered, "ack_floor": ack_floor, "num_ack_pending": ack_pending,
            "num_redelivered": redelivered, "num_pending": pending}


# --------------------------------------------------------------------------------------------
# Redelivery and max_deliver
# --------------------------------------------------------------------------------------------
def test_redelivery_after_ack_wait_and_max_deliver(Env_):
    e = Env_(name="S")
    e.pub("s.a", "s.a", "s.a")
    e.add(durable_name="D", ack_policy="explicit", ack_wait=SEC, max_deliver=2)
    assert e.info("D") == info((0, 0), (0, 0), 0, 0, 3)
    assert e.replies("D", 2) == ["1.1.1.2", "1.2.2.1"]
    assert e.info("D") == info((2, 2), (0, 0), 2, 0, 1)
    e.clock.advance(SEC + 200 * MS)
    # Expired but not redelivered yet: still pending.
    assert e.info("D") == info((2, 2), (0, 0), 2, 0, 1)
    assert e.replies("D", 5) == ["2.1.3.1", "2.2.4.1", "1.3.5.0"]
    assert e.info("D") == info((5, 3), (0, 0), 3, 2, 0)
    e.clock.advance(SEC + 200 * MS)
    assert e.info("D") == info((5, 3), (0, 0), 3, 2, 0)
    # 1 and 2 reached max_deliver: dropped at the next pull; the store's ack floor stays.
    assert e.replies("D", 5) == ["2.3.6.0"]
    assert e.info("D") == info((6, 3), (0, 0), 1, 3, 0)
    e.clock.advance(SEC + 200 * MS)
    assert e.info("D") == info((6, 3), (0, 0), 1, 3, 0)
    assert e.replies("D", 5) == []
    assert e.info("D") == info((6, 3), (0, 0), 0, 3, 0)


def test_max_deliver_one_drops_at_expiry_and_hides_redelivered(Env_):
    e = Env_(name="W", subjects=["w.>"], retention="workqueue")
    e.pub("w.a", "w.b", "w.a", "w.b")
    e.add(durable_name="A", ack_policy="explicit", filter_subject="w.a", max_deliver=1,
          ack_wait=500 * MS)
    assert e.info("A")["num_pending"] == 2
    assert e.replies("A", 5) == ["1.1.1.1", "1.3.2.0"]
    e.ack("A", 1)
    assert e.state() == {"messages": 3, "first_seq": 2, "last_seq": 4}
    e.clock.advance(700 * MS)
    # Dropped at the ack-wait expiry, without a pull; stays in the work queue.
    assert e.info("A") == info((2, 3), (1, 2), 0, 0, 0)
    assert e.state()["messages"] == 3


def test_backoff_sets_the_wait_per_delivery(Env_):
    e = Env_(name="S")
    e.pub("s.a")
    e.add(durable_name="D", ack_policy="explicit", backoff=[SEC, 3 * SEC], max_deliver=5)
    assert [m.num_delivered for m in e.fetch("D")] == [1]
    e.clock.advance(SEC)
    assert [m.num_delivered for m in e.fetch("D")] == [2]
    e.clock.advance(2 * SEC)
    assert e.fetch("D") == []  # second step: 3s
    e.clock.advance(SEC)
    assert [m.num_delivered for m in e.fetch("D")] == [3]


# --------------------------------------------------------------------------------------------
# Acks
# --------------------------------------------------------------------------------------------
def test_explicit_acks_nak_term_and_ack_floor(Env_):
    e = Env_(name="S")
    e.pub("s.a", "s.b", "s.a", "s.b", "s.a", "s.b")
    e.add(durable_name="D", ack_policy="explicit", max_ack_pending=4)
    assert e.replies("D", 10) == ["1.1.1.5", "1.2.2.4", "1.3.3.3", "1.4.4.2"]
    assert e.info("D") == info((4, 4), (0, 0), 4, 0, 2)
    e.ack("D", 2)
    assert e.info("D") == info((4, 4), (0, 0), 3, 0, 2)
    e.ack("D", 1)
    assert e.info("D") == info((4, 4), (2, 2), 2, 0, 2)
    e.ack("D", 4)
    assert e.info("D") == info((4, 4), (2, 2), 1, 0, 2)
    assert e.nak("D", 3)
    assert e.info("D") == info((4, 4), (2, 2), 1, 0, 2)
    assert e.replies("D", 10) == ["2.3.5.2", "1.5.6.1", "1.6.7.0"]
    assert e.info("D") == info((7, 6), (2, 2), 3, 1, 0)
    e.term("D", 3)
    assert e.info("D") == info((7, 6), (5, 4), 2, 0, 0)
    e.ack("D", 3)  # again: nothing moves
    e.ack("D", 1)
    assert e.info("D") == info((7, 6), (5, 4), 2, 0, 0)


def test_nak_with_delay_and_progress(Env_):
    e = Env_(name="S")
    e.pub("s.a", "s.b", "s.a", "s.b", "s.a", "s.b")
    e.add(durable_name="EX", ack_policy="explicit", ack_wait=2 * SEC)
    assert e.replies("EX", 2) == ["1.1.1.5", "1.2.2.4"]
    e.clock.advance(1500 * MS)
    assert e.wpi("EX", 1)
    e.clock.advance(700 * MS)
    assert e.replies("EX", 1) == ["2.2.3.4"]  # 1 got more time
    assert e.nak("EX", 2, delay=500 * MS)
    assert e.replies("EX", 1) == ["1.3.4.3"]
    e.clock.advance(600 * MS)
    assert e.replies("EX", 3) == ["3.2.5.3", "1.4.6.2", "1.5.7.1"]
    assert e.info("EX") == info((7, 5), (0, 0), 5, 1, 1)
    assert e.nak("EX", 2, delay=100 * MS)
    e.clock.advance(150 * MS)
    assert e.replies("EX", 1) == ["4.2.8.1"]


def test_ack_all(Env_):
    e = Env_(name="S")
    e.pub("s.a", "s.b", "s.a", "s.b", "s.a", "s.b")
    e.add(durable_name="ALL", ack_policy="all", ack_wait=SEC)
    assert e.replies("ALL", 4) == ["1.1.1.5", "1.2.2.4", "1.3.3.3", "1.4.4.2"]
    e.ack("ALL", 3)
    assert e.info("ALL") == info((4, 4), (3, 3), 1, 0, 2)
    assert not e.ack("ALL", 1)
    assert e.info("ALL") == info((4, 4), (3, 3), 1, 0, 2)
    e.clock.advance(1100 * MS)
    assert e.replies("ALL", 4) == ["2.4.5.2", "1.5.6.1", "1.6.7.0"]
    assert e.info("ALL") == info((7, 6), (3, 3), 3, 1, 0)


def test_ack_none_filtered(Env_):
    e = Env_(name="S")
    e.pub("s.a", "s.b", "s.a", "s.b", "s.a", "s.b")
    e.add(durable_name="NONE", ack_policy="none", filter_subject="s.a")
    assert e.replies("NONE", 2) == ["1.1.1.2", "1.3.2.1"]
    assert e.info("NONE") == info((2, 3), (2, 3), 0, 0, 1)
    assert not e.ack("NONE", 1)


def test_max_ack_pending_limits_a_fetch(Env_):
    e = Env_(name="S")
    e.pub(*["s.a"] * 5)
    e.add(durable_name="D", ack_policy="explicit", max_ack_pending=2)
    assert len(e.fetch("D", 10)) == 2
    assert e.fetch("D", 10) == []
    e.ack("D", 1)
    assert [m.seq for m in e.fetch("D", 10)] == [3]


# --------------------------------------------------------------------------------------------
# Deliver policies and num_pending
# --------------------------------------------------------------------------------------------
SUBJECTS = ["a.1", "a.2", "b.1", "a.1", "b.2", "a.2", "c"]


def policy_env(Env_) -> tuple[Env, str]:
    e = Env_(name="S", subjects=["a.*", "b.*", "c"])
    e.pub(*SUBJECTS[:3])
    e.clock.advance(50 * MS)
    from jetlink.core.clock import format_rfc3339_nano

    t = format_rfc3339_nano(e.now)
    e.clock.advance(50 * MS)
    e.pub(*SUBJECTS[3:])
    return e, t


@pytest.mark.parametrize("cfg,delivered,pending", [
    ({"filter_subject": "a.*"}, 0, 4),
    ({"deliver_policy": "last"}, 6, 1),
    ({"deliver_policy": "last", "filter_subject": "a.*"}, 5, 1),
    ({"deliver_policy": "last", "filter_subject": "a.1"}, 3, 1),
    ({"deliver_policy": "last", "filter_subjects": ["b.*", "c"]}, 6, 1),
    ({"deliver_policy": "last", "filter_subject": "zz"}, 0, 0),
    ({"deliver_policy": "new"}, 7, 0),
    ({"deliver_policy": "new", "filter_subject": "a.*"}, 7, 0),
    ({"deliver_policy": "by_start_sequence", "opt_start_seq": 3}, 2, 5),
    ({"deliver_policy": "by_start_sequence", "opt_start_seq": 3, "filter_subject": "a.*"}, 2, 2),
    ({"deliver_policy": "by_start_sequence", "opt_start_seq": 100}, 99, 0),
    ({"deliver_policy": "by_start_time", "opt_start_time": "T"}, 3, 4),
    ({"deliver_policy": "by_start_time", "opt_start_time": "T", "filter_subject": "b.*"}, 3, 1),
    ({"deliver_policy": "by_start_time", "opt_start_time": "2099-01-01T00:00:00Z"}, 7, 0),
    ({"deliver_policy": "by_start_time", "opt_start_time": "2000-01-01T00:00:00Z"}, 0, 7),
    ({"deliver_policy": "last_per_subject", "filter_subject": ">"}, 2, 5),
    ({"deliver_policy": "last_per_subject", "filter_subject": "a.*"}, 3, 2),
    ({"deliver_policy": "last_per_subject", "filter_subjects": ["a.1", "b.*"]}, 2, 3),
], ids=lambda v: str(v) if not isinstance(v, dict) else ",".join(f"{k}={x}" for k, x in v.items()))
def test_start_position(Env_, cfg, delivered, pending):
    e, t = policy_env(Env_)
    if cfg.get("opt_start_time") == "T":
        cfg = dict(cfg, opt_start_time=t)
    e.add(durable_name="C", ack_policy="explicit", **cfg)
    assert e.info("C") == info((0, delivered), (0, delivered), 0, 0, pending)


def test_last_per_subject_delivery_and_pending(Env_):
    e, _ = policy_env(Env_)
    e.add(durable_name="lps", ack_policy="explicit", deliver_policy="last_per_subject",
          filter_subject=">")
    e.add(durable_name="lps_a", ack_policy="explicit", deliver_policy="last_per_subject",
          filter_subject="a.*")
    e.add(durable_name="lps_multi", ack_policy="explicit", deliver_policy="last_per_subject",
          filter_subjects=["a.1", "b.*"])
    assert e.replies("lps", 3) == ["1.3.1.4", "1.4.2.3", "1.5.3.2"]
    assert e.info("lps") == info((3, 5), (0, 2), 3, 0, 2)
    assert e.replies("lps_a", 3) == ["1.4.1.1", "1.6.2.0"]
    assert e.info("lps_a") == info((2, 6), (0, 3), 2, 0, 0)
    assert e.replies("lps_multi", 3) == ["1.3.1.2", "1.4.2.1", "1.5.3.0"]
    e.pub("a.1")
    assert e.info("lps")["num_pending"] == 3
    assert e.replies("lps", 10) == ["1.6.4.2", "1.7.5.1", "1.8.6.0"]
    assert e.info("lps") == info((6, 8), (0, 2), 6, 0, 0)
    assert e.replies("lps_a", 10) == ["1.8.3.0"]


def test_filtered_consumer_skips_ahead_and_new_messages_count(Env_):
    e, _ = policy_env(Env_)
    e.add(durable_name="new", ack_policy="explicit", deliver_policy="new")
    e.add(durable_name="b", ack_policy="explicit", filter_subject="b.*", deliver_policy="new")
    e.pub("a.1")
    assert e.info("new")["num_pending"] == 1
    assert e.replies("new", 10) == ["1.8.1.0"]
    assert e.info("new") == info((1, 8), (0, 7), 1, 0, 0)
    assert e.replies("b", 10) == []
    assert e.info("b") == info((0, 7), (0, 7), 0, 0, 0)


# --------------------------------------------------------------------------------------------
# Removed messages and purges
# --------------------------------------------------------------------------------------------
def test_removed_pending_messages_count_as_terminated(Env_):
    e = Env_(name="S", max_msgs=10)
    e.pub("s.a", "s.b", "s.a", "s.b", "s.a", "s.b")
    e.add(durable_name="A", ack_policy="explicit")
    e.add(durable_name="B", ack_policy="explicit", filter_subject="s.b")
    e.add(durable_name="C", ack_policy="explicit")
    e.fetch("A", 3)
    e.fetch("B", 1)
    e.fetch("C", 4)
    e.remove(2)
    assert e.info("A") == info((3, 3), (0, 0), 2, 0, 3)
    assert e.info("B") == info((1, 2), (1, 2), 0, 0, 2)
    assert e.info("C") == info((4, 4), (0, 0), 3, 0, 2)
    # max_msgs pushes out 1..6.
    e.pub(*["s.c"] * 10)
    assert e.info("A") == info((3, 3), (3, 3), 0, 0, 10)
    assert e.info("B") == info((1, 2), (1, 2), 0, 0, 0)
    assert e.info("C") == info((4, 4), (4, 4), 0, 0, 10)
    e.purge()
    assert e.info("A") == info((3, 16), (3, 16), 0, 0, 0)
    assert e.info("B") == info((1, 16), (1, 16), 0, 0, 0)
    assert e.info("C") == info((4, 16), (4, 16), 0, 0, 0)


def test_a_purge_settles_pending_acks_and_records_the_ack_time(Env_):
    """The purge settles the pending messages it removes before any timer runs (the
    server's consumer.purge, updateAcks): the ack floor moves past them and records when."""
    e = Env_(name="S")
    e.pub("s.a", "s.a")
    e.add(durable_name="A", ack_policy="explicit")
    e.fetch("A", 2)
    assert e.info("A") == info((2, 2), (0, 0), 2, 0, 0)
    assert "last_active" not in e.info_doc("A")["ack_floor"]
    e.purge()
    assert e.info("A") == info((2, 2), (2, 2), 0, 0, 0)
    assert e.info_doc("A")["ack_floor"]["last_active"]


# --------------------------------------------------------------------------------------------
# Retention
# --------------------------------------------------------------------------------------------
def test_interest_retention(Env_):
    e = Env_(name="I", subjects=["i.>"], retention="interest")
    assert e.pub("i.a") == [1]
    assert e.state() == {"messages": 0, "first_seq": 2, "last_seq": 1}
    e.add(durable_name="A", ack_policy="explicit", filter_subject="i.a")
    e.add(durable_name="B", ack_policy="explicit")
    assert e.pub("i.a", "i.b", "i.a") == [2, 3, 4]
    assert e.state() == {"messages": 3, "first_seq": 2, "last_seq": 4}
    assert (e.info("A")["num_pending"], e.info("B")["num_pending"]) == (2, 3)
    assert e.info("A")["delivered"] == (0, 1)
    assert e.replies("A", 5) == ["1.2.1.1", "1.4.2.0"]
    assert e.replies("B", 5) == ["1.2.1.2", "1.3.2.1", "1.4.3.0"]
    e.ack("B", 3)
    assert e.state() == {"messages": 2, "first_seq": 2, "last_seq": 4}
    e.ack("A", 2)
    assert e.state()["messages"] == 2
    e.ack("B", 2)
    assert e.state() == {"messages": 1, "first_seq": 4, "last_seq": 4}
    e.term("B", 4)  # A still needs 4
    assert e.state()["messages"] == 1
    e.delete("A")
    assert e.state() == {"messages": 0, "first_seq": 5, "last_seq": 4}
    assert e.pub("i.c") == [5]
    assert e.state()["messages"] == 1
    e.delete("B")
    assert e.state() == {"messages": 0, "first_seq": 6, "last_seq": 5}
    assert e.pub("i.c") == [6]
    assert e.state() == {"messages": 0, "first_seq": 7, "last_seq": 6}
    e.add(durable_name="N", ack_policy="none")
    assert e.pub("i.c") == [7]
    assert e.replies("N", 5) == ["1.7.1.0"]
    assert e.state() == {"messages": 0, "first_seq": 8, "last_seq": 7}


def test_interest_keeps_messages_past_max_deliver(Env_):
    e = Env_(name="I", subjects=["i.>"], retention="interest")
    e.add(durable_name="A", ack_policy="explicit", max_deliver=1, ack_wait=500 * MS)
    e.add(durable_name="B", ack_policy="none")
    e.pub("i.a", "i.a")
    e.fetch("A", 5)
    e.fetch("B", 5)
    e.ack("A", 2)
    assert e.state() == {"messages": 1, "first_seq": 1, "last_seq": 2}
    e.clock.advance(700 * MS)
    assert e.info("A") == info((2, 2), (0, 0), 0, 0, 0)
    assert e.fetch("A", 5) == []
    assert e.state()["messages"] == 1


def test_work_queue_ack_removes_and_consumers_leave_messages(Env_):
    e = Env_(name="W", subjects=["w.>"], retention="workqueue")
    e.pub("w.a", "w.b", "w.a", "w.b")
    e.add(durable_name="A", ack_policy="explicit", filter_subject="w.a")
    e.add(durable_name="B", ack_policy="explicit", filter_subject="w.b")
    e.fetch("B", 5)
    e.term("B", 4)
    assert e.state() == {"messages": 3, "first_seq": 1, "last_seq": 4}
    e.nak("B", 2)
    e.delete("B")
    e.delete("A")
    assert e.state() == {"messages": 3, "first_seq": 1, "last_seq": 4}
    assert e.pub("w.z") == [5]


# --------------------------------------------------------------------------------------------
# Lifecycle
# --------------------------------------------------------------------------------------------
def test_info_json_shape(Env_):
    e = Env_(name="S")
    e.pub("s.a")
    created = e.now
    e.add(durable_name="D", ack_policy="explicit")
    e.clock.advance(SEC)
    e.fetch("D")
    doc = e.info_doc("D")
    assert list(doc) == ["stream_name", "name", "created", "config", "delivered", "ack_floor",
                         "num_ack_pending", "num_redelivered", "num_waiting", "num_pending",
                         "ts"]
    from jetlink.core.clock import format_rfc3339_nano

    assert doc["created"] == format_rfc3339_nano(created)
    assert doc["delivered"] == {"consumer_seq": 1, "stream_seq": 1,
                                "last_active": format_rfc3339_nano(e.now)}
    assert doc["ack_floor"] == {"consumer_seq": 0, "stream_seq": 0}
    assert doc["config"]["metadata"] == {"_nats.req.level": "0", "_nats.ver": "2.15.1",
                                         "_nats.level": "5"}


def test_delivered_message_json(Env_):
    e = Env_(name="S")
    e.pub("s.a")
    e.add(durable_name="D", ack_policy="explicit", headers_only=True)
    (m,) = e.fetch("D")
    doc = m.to_json()
    assert doc["headers"] == {"Nats-Msg-Size": ["1"]}
    assert doc["data"] == ""
    assert (doc["seq"], doc["consumer_seq"], doc["num_delivered"], doc["num_pending"]) == (
        1, 1, 1, 0)
    assert doc["reply"] == f"$JS.ACK.S.D.1.1.1.{m.ts}.0"


def test_unknown_consumer_and_stream(Env_):
    e = Env_(name="S")
    with pytest.raises(ApiError) as err:
        e.fetch("nope")
    assert (err.value.code, err.value.err_code, err.value.description) == (
        404, 10014, "consumer not found")
    e.name = "T"
    with pytest.raises(ApiError) as err:
        e.info("D")
    assert err.value.err_code == 10059


def test_inactive_threshold_removes_idle_consumers(Env_):
    e = Env_(name="S")
    e.pub("s.a")
    e.add(name="EPH")  # ephemeral: 5s default
    e.add(durable_name="D", inactive_threshold=2 * SEC, ack_policy="explicit",
          ack_wait=10 * SEC)
    e.add(durable_name="KEEP")
    e.fetch("D")
    e.clock.advance(4 * SEC)
    assert e.names() == ["D", "EPH", "KEEP"]
    e.clock.advance(1 * SEC)
    # D still has a message within its ack wait (+ threshold): kept until 10s + 2s.
    assert e.names() == ["D", "KEEP"]
    e.clock.advance(7 * SEC)
    assert e.names() == ["KEEP"]


def test_paused_consumer_delivers_nothing(Env_):
    e = Env_(name="S")
    e.pub("s.a")
    from jetlink.core.clock import format_rfc3339_nano

    until = format_rfc3339_nano(e.now + 10 * SEC)
    e.add(durable_name="D", pause_until=until)
    doc = e.info_doc("D")
    assert doc["paused"] is True and doc["pause_remaining"] == 10 * SEC
    assert e.fetch("D") == []
    e.clock.advance(10 * SEC)
    assert len(e.fetch("D")) == 1


def test_pull_requests_the_server_refuses(Env_):
    e = Env_(name="S")
    e.add(durable_name="D", max_batch=2)
    with pytest.raises(ApiError) as err:
        e.fetch("D", 3)
    assert (err.value.code, err.value.description) == (409, "Exceeded MaxRequestBatch of 2")
    e.add(durable_name="P", deliver_subject="deliver.p")
    with pytest.raises(ApiError) as err:
        e.fetch("P", 1)
    assert (err.value.code, err.value.description) == (409, "Consumer is push based")


def test_state_round_trips_through_json():
    e = MemoryEnv(name="S")
    e.pub("s.a", "s.b")
    e.add(durable_name="D", ack_policy="explicit", ack_wait=SEC)
    e.fetch("D", 2)
    e.clock.advance(2 * SEC)
    e.nak("D", 1)
    st = e.be.consumers["S"]["D"].state
    assert cs.ConsumerState.loads(st.dumps()) == st


def test_update_from_limits_to_interest_removes_what_every_consumer_acked(js):
    """nats-server 2.15 accepts retention limits -> interest on update; each consumer then
    re-acks up to its ack floor (checkStateForInterestStream): acked by all -> removed."""
    js.add_stream({"name": "X", "subjects": ["x.>"]})
    for i in range(6):
        js.publish(f"x.{i}", b"m")
    for name, upto in (("a", 4), ("b", 2)):
        js.add_consumer("X", {"durable_name": name, "ack_policy": "explicit"})
        for m in js.fetch("X", name, upto):
            js.ack("X", name, m.seq)
    assert js.state("X").messages == 6  # limits: acks remove nothing
    cfg = js.stream_info("X").config.replace(retention="interest")
    assert js.update_stream(cfg).config.retention == "interest"
    st = js.state("X")
    assert (st.messages, st.first_seq) == (4, 3)  # 1..2 acked by both; 3..4 only by a
    for m in js.fetch("X", "b", 2):
        js.ack("X", "b", m.seq)
    assert js.state("X").first_seq == 5


def test_update_to_interest_acks_only_what_each_consumer_s_filter_matches(js):
    """checkStateForInterestStream walks the consumer's filter: a message no consumer's
    filter matches is never acked and stays (the server keeps u.b: 2 messages, 1..4, 2
    deleted); past the ack floor, a delivered message acked out of order goes too."""
    js.add_stream({"name": "U", "subjects": ["u.>"]})
    for subject in ("u.b", "u.b", "u.a", "u.a"):
        js.publish(subject, b"x")
    js.add_consumer("U", {"durable_name": "C1", "ack_policy": "explicit",
                          "filter_subject": "u.a"})
    for m in js.fetch("U", "C1", 2):
        js.ack("U", "C1", m.seq)
    js.update_stream(js.stream_info("U").config.replace(retention="interest"))
    st = js.state("U")
    assert (st.messages, st.first_seq, st.last_seq, st.num_deleted) == (2, 1, 4, 2)
    # out of order: 5..7 delivered to an unfiltered consumer, only 6 acked
    js.add_stream({"name": "V", "subjects": ["v.>"]})
    for i in range(3):
        js.publish(f"v.{i}", b"x")
    js.add_consumer("V", {"durable_name": "D", "ack_policy": "explicit"})
    got = js.fetch("V", "D", 3)
    js.ack("V", "D", got[1].seq)
    js.update_stream(js.stream_info("V").config.replace(retention="interest"))
    st = js.state("V")
    assert (st.messages, st.first_seq, st.last_seq) == (2, 1, 3)


@pytest.mark.parametrize(("limits", "refused"), [
    ({"max_ack_pending": 100}, "C1"),                  # C1 has the default 1000
    ({"max_ack_pending": 1000}, None),                 # not above: kept
    ({"inactive_threshold": 60 * SEC}, "C2"),          # C2 has 1h
    ({"max_ack_pending": 100, "inactive_threshold": 60 * SEC}, "C1, C2"),
])
def test_a_consumer_limit_change_existing_consumers_exceed_is_refused(js, limits, refused):
    """A single server's updateWithAdvisory: 10069 "change to limits violates consumers:
    NAMES", the configuration unchanged; a limit no consumer exceeds is applied."""
    from jetlink.core.errors import ApiError

    js.add_stream({"name": "L", "subjects": ["l.>"]})
    js.add_consumer("L", {"durable_name": "C1", "ack_policy": "explicit"})
    js.add_consumer("L", {"durable_name": "C2", "ack_policy": "explicit",
                          "max_ack_pending": 10, "inactive_threshold": 3600 * SEC})
    cfg = js.stream_info("L").config
    new = cfg.replace(consumer_limits=type(cfg.consumer_limits)(**limits))
    if refused is None:
        assert js.update_stream(new).config.consumer_limits == new.consumer_limits
        return
    with pytest.raises(ApiError) as exc:
        js.update_stream(new)
    assert (exc.value.code, exc.value.err_code, exc.value.description) == (
        500, 10069, f"change to limits violates consumers: {refused}")
    assert js.stream_info("L").config == cfg


@pytest.mark.parametrize(("retention", "kept"), [("workqueue", 3), ("interest", 2)])
def test_a_late_ack_after_max_deliver_removes_the_message_as_the_server(js, clock, retention,
                                                                       kept):
    """processAckMsg acts on an explicit ack of a delivered message no longer pending (its
    deliveries used up): its redelivery count goes and the stream, nobody needing it any
    more, removes it (on the server too). The ack still reports it was not pending; a
    sequence this consumer never delivered changes nothing (interest: r.y, which no
    consumer wants, was never stored)."""
    js.add_stream({"name": "R", "subjects": ["r.*"], "retention": retention})
    js.add_consumer("R", {"durable_name": "C", "ack_policy": "explicit",
                          "ack_wait": SEC, "max_deliver": 1, "filter_subject": "r.x"})
    for subject in ("r.x", "r.x", "r.x", "r.y"):
        js.publish(subject, b"m")
    assert [m.seq for m in js.fetch("R", "C", 3)] == [1, 2, 3]
    clock.advance(2 * SEC)
    assert js.fetch("R", "C", 3) == []  # (deliveries used up: nothing redelivered)
    assert js.ack("R", "C", 2) is False
    assert js.state("R").messages == kept
    with pytest.raises(ApiError):  # (message 2 is the one removed)
        js.get_msg("R", 2)
    assert js.get_msg("R", 1).seq == 1
    assert js.consumer_info("R", "C").num_redelivered == 0
    assert js.ack("R", "C", 4) is False and js.state("R").messages == kept  # (not its own)


def test_a_late_ack_clears_the_redelivery_count_on_a_limits_stream(js, clock):
    """Limits retention keeps the message; the ack still clears its redelivery count (the
    server's num_redelivered 2 where the engine said 3)."""
    js.add_stream({"name": "L2", "subjects": ["l2.*"]})
    js.add_consumer("L2", {"durable_name": "C", "ack_policy": "explicit", "ack_wait": SEC,
                           "max_deliver": 2})
    for _ in range(3):
        js.publish("l2.a", b"m")
    js.fetch("L2", "C", 3)
    clock.advance(2 * SEC)
    js.fetch("L2", "C", 3)
    clock.advance(2 * SEC)
    js.fetch("L2", "C", 3)
    assert js.consumer_info("L2", "C").num_redelivered == 3
    js.ack("L2", "C", 1)
    assert js.consumer_info("L2", "C").num_redelivered == 2
    assert js.state("L2").messages == 3
