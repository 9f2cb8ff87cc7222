"""Retention limits -> interest as a stream update, on nats-server 2.15.1 and on the embedded
engine: the server accepts it and removes what every consumer has acknowledged; the engine
must end in the same state."""

from __future__ import annotations

from helpers import wait_until

from jetlink.core.clock import ManualClock
from jetlink.core.jetstream import JetStream
from jetlink.core.store import DataDir

ACKED = {"a": 4, "b": 2}


def _on_server(live) -> tuple[int, int]:
    c = live.client()
    assert "error" not in c.stream_create({"name": "X", "subjects": ["x.>"]})
    for i in range(6):
        c.js_publish(f"x.{i}", b"m")
    for name, upto in ACKED.items():
        resp = c.api(f"CONSUMER.CREATE.X.{name}", {"stream_name": "X", "config": {
            "durable_name": name, "ack_policy": "explicit"}})
        assert "error" not in resp, resp
        assert c.fetch_ack("X", name, upto) == upto
    resp = c.api("STREAM.UPDATE.X", {"name": "X", "subjects": ["x.>"], "retention": "interest"})
    assert resp.get("config", {}).get("retention") == "interest", resp
    # the server re-checks each consumer's interest after answering: the two messages both
    # consumers acknowledged go
    st = wait_until(lambda: (s := c.stream_info("X")["state"])["messages"] == 4 and s,
                    message=lambda: f"stream X without the acknowledged messages "
                                    f"({c.stream_info('X')['state']})")
    return st["messages"], st["first_seq"]


def _embedded(tmp_path) -> tuple[int, int]:
    js = JetStream(DataDir(tmp_path / "data").open("local"), ManualClock(10**18))
    js.add_stream({"name": "X", "subjects": ["x.>"]})
    for i in range(6):
        js.publish(f"x.{i}", b"m")
    for name, upto in ACKED.items():
        js.add_consumer("X", {"durable_name": name, "ack_policy": "explicit"})
        for m in js.fetch("X", name, upto):
            js.ack("X", name, m.seq)
    js.update_stream(js.stream_info("X").config.replace(retention="interest"))
    st = js.state("X")
    return st.messages, st.first_seq


def test_limits_to_interest_update_matches_the_server(live, tmp_path):
    server = _on_server(live)
    assert server == _embedded(tmp_path) == (4, 3)


def test_limits_to_interest_with_no_consumer_keeps_nothing_as_the_server(live, tmp_path):
    """Nobody is interested: nats-server 2.15.1 removes every stored message (first_seq
    last + 1); the engine kept them all, and would have delivered them to a consumer made
    later."""
    c = live.client()
    assert "error" not in c.stream_create({"name": "N", "subjects": ["n.>"]})
    for i in range(5):
        c.js_publish(f"n.{i}", b"m")
    resp = c.api("STREAM.UPDATE.N", {"name": "N", "subjects": ["n.>"], "retention": "interest"})
    assert resp.get("config", {}).get("retention") == "interest", resp
    server = wait_until(lambda: (s := c.stream_info("N")["state"])["messages"] == 0 and s,
                        message=lambda: f"stream N emptied ({c.stream_info('N')['state']})")
    js = JetStream(DataDir(tmp_path / "data").open("local"), ManualClock(10**18))
    js.add_stream({"name": "N", "subjects": ["n.>"]})
    for i in range(5):
        js.publish(f"n.{i}", b"m")
    js.update_stream(js.stream_info("N").config.replace(retention="interest"))
    st = js.state("N")
    assert (server["messages"], server["first_seq"], server["last_seq"]) == (
        st.messages, st.first_seq, st.last_seq) == (0, 6, 5)


def test_limits_to_interest_of_a_stream_never_written_keeps_its_sequences(live, tmp_path):
    """An empty stream has nothing to remove: its sequences stay as they were (0 for one
    never written) on the server and on the engine."""
    c = live.client()
    assert "error" not in c.stream_create({"name": "E", "subjects": ["e.>"]})
    resp = c.api("STREAM.UPDATE.E", {"name": "E", "subjects": ["e.>"], "retention": "interest"})
    assert resp.get("config", {}).get("retention") == "interest", resp
    server = c.stream_info("E")["state"]
    js = JetStream(DataDir(tmp_path / "data").open("local"), ManualClock(10**18))
    js.add_stream({"name": "E", "subjects": ["e.>"]})
    js.update_stream(js.stream_info("E").config.replace(retention="interest"))
    st = js.state("E")
    assert (server["messages"], server["first_seq"], server["last_seq"]) == (
        st.messages, st.first_seq, st.last_seq) == (0, 0, 0)


def test_limits_to_interest_keeps_what_no_consumer_filter_matches_as_the_server(live,
                                                                               tmp_path):
    """A consumer filtered on u.a acknowledged both u.a messages: the server acks again only
    what its filter matches (checkStateForInterestStream), so u.b stays (2 messages, 1..4,
    2 deleted), on the engine too."""
    subjects = ("u.b", "u.b", "u.a", "u.a")
    consumer = {"durable_name": "C1", "ack_policy": "explicit", "filter_subject": "u.a"}
    c = live.client()
    assert "error" not in c.stream_create({"name": "U", "subjects": ["u.>"]})
    for s in subjects:
        c.js_publish(s, b"x")
    resp = c.api("CONSUMER.CREATE.U.C1", {"stream_name": "U", "config": consumer})
    assert "error" not in resp, resp
    assert c.fetch_ack("U", "C1", 2) == 2
    resp = c.api("STREAM.UPDATE.U", {"name": "U", "subjects": ["u.>"], "retention": "interest"})
    assert resp.get("config", {}).get("retention") == "interest", resp
    server = wait_until(lambda: (s := c.stream_info("U")["state"])["messages"] == 2 and s,
                        message=lambda: f"stream U without the acked u.a messages "
                                        f"({c.stream_info('U')['state']})")
    js = JetStream(DataDir(tmp_path / "data").open("local"), ManualClock(10**18))
    js.add_stream({"name": "U", "subjects": ["u.>"]})
    for s in subjects:
        js.publish(s, b"x")
    js.add_consumer("U", consumer)
    for m in js.fetch("U", "C1", 2):
        js.ack("U", "C1", m.seq)
    js.update_stream(js.stream_info("U").config.replace(retention="interest"))
    st = js.state("U")
    assert (server["messages"], server["first_seq"], server["last_seq"],
            server.get("num_deleted", 0)) == (st.messages, st.first_seq, st.last_seq,
                                              st.num_deleted) == (2, 1, 4, 2)


def test_a_consumer_limit_existing_consumers_exceed_is_refused_as_the_server(live, tmp_path):
    """10069 "change to limits violates consumers: C1" (updateWithAdvisory), on the server and
    the engine alike."""
    c = live.client()
    assert "error" not in c.stream_create({"name": "L", "subjects": ["l.>"]})
    resp = c.api("CONSUMER.CREATE.L.C1", {"stream_name": "L", "config": {
        "durable_name": "C1", "ack_policy": "explicit"}})
    assert "error" not in resp, resp
    resp = c.api("STREAM.UPDATE.L", {"name": "L", "subjects": ["l.>"],
                                     "consumer_limits": {"max_ack_pending": 100}})
    js = JetStream(DataDir(tmp_path / "data").open("local"), ManualClock(10**18))
    js.add_stream({"name": "L", "subjects": ["l.>"]})
    js.add_consumer("L", {"durable_name": "C1", "ack_policy": "explicit"})
    cfg = js.stream_info("L").config
    from jetlink.core.config.stream import StreamConsumerLimits
    from jetlink.core.errors import ApiError

    try:
        js.update_stream(cfg.replace(consumer_limits=StreamConsumerLimits(max_ack_pending=100)))
        mine = None
    except ApiError as err:
        mine = {"code": err.code, "err_code": err.err_code, "description": err.description}
    assert resp.get("error") == mine == {
        "code": 500, "err_code": 10069,
        "description": "change to limits violates consumers: C1"}
