"""The publish ack's ``domain`` (nats-server stream.go: the pubAck template carries
``"domain"`` only when the server has ``jetstream.domain``; natscli's pub prints
`` Domain: "D"`` after the sequence).

The embedded engine's acks carry none: a data directory's cluster names itself as the
stream info's ``cluster.leader`` (where a server puts its server name), not as a
``jetstream.domain`` option. The live side,
against two real domains, is tests/live/test_live_pub_domain.py."""

from __future__ import annotations

import json

import pytest
from helpers import doc, ok

from jetlink.core.live.jetstream import _ack_of
from jetlink.core.messages import BatchPubAck, PubAck


def test_engine_ack_has_no_domain_in_a_named_cluster(jl):
    for cluster in ("west", "east"):
        ok(jl("cluster", "add", cluster))
        ok(jl("--cluster", cluster, "stream", "add", "S", "--subjects", f"{cluster}.>",
              "--defaults"))
        assert doc(jl("--cluster", cluster, "pub", f"{cluster}.a", "x", "-j")) == {
            "stream": "S", "seq": 1}
        assert ok(jl("--cluster", cluster, "pub", f"{cluster}.a", "y")).stdout == (
            "Stored in Stream: S Sequence: 2\n")
        # where the engine names its cluster: the stream info's cluster leader, where a
        # server names itself (its server name, not a JetStream domain)
        info = doc(jl("--cluster", cluster, "stream", "info", "S", "-j"))
        assert info["cluster"] == {"leader": cluster}
        assert "domain" not in info


def test_engine_duplicate_and_batch_acks_have_no_domain(jl):
    ok(jl("stream", "add", "S", "--subjects", "s.>", "--defaults", "--allow-batch"))
    assert doc(jl("pub", "s.a", "x", "-H", "Nats-Msg-Id:m1", "-j")) == {"stream": "S", "seq": 1}
    assert doc(jl("pub", "s.a", "x", "-H", "Nats-Msg-Id:m1", "-j")) == {
        "stream": "S", "seq": 1, "duplicate": True}
    got = doc(jl("pub", "s.b", "n{{Count}}", "--atomic", "--count", "3", "-j"))
    assert set(got) == {"stream", "seq", "batch", "count"}
    assert (got["stream"], got["seq"], got["count"]) == ("S", 4, 3)


# The server's ack bytes, as stream.go's template writes them (with and without a domain),
# and the document the live backend gives back: every field kept, in the server's order.
SERVER_ACKS = [
    (b'{"stream":"S","seq":7}', {"stream": "S", "seq": 7}),
    (b'{"stream":"S","domain":"west","seq":7}', {"stream": "S", "domain": "west", "seq": 7}),
    (b'{"stream":"S","domain":"west","seq":7,"duplicate": true}',
     {"stream": "S", "domain": "west", "seq": 7, "duplicate": True}),
    (b'{"stream":"C","domain":"east","seq":3,"val":"12"}',
     {"stream": "C", "domain": "east", "seq": 3, "val": "12"}),
    (b'{"stream":"B","domain":"west","seq":9,"batch":"b1","count":3}',
     {"stream": "B", "domain": "west", "seq": 9, "batch": "b1", "count": 3}),
    (b'{"stream":"S","domain":"","seq":7}', {"stream": "S", "seq": 7}),
]


@pytest.mark.parametrize(("raw", "want"), SERVER_ACKS, ids=[r.decode() for r, _ in SERVER_ACKS])
def test_live_ack_keeps_the_domain(raw, want):
    ack = _ack_of(raw, "s.a", batch=b'"batch"' in raw)
    assert isinstance(ack, PubAck)
    assert json.dumps(ack.to_json()) == json.dumps(want)  # key order too


def test_ack_equality_counts_the_domain():
    assert PubAck("S", 1, domain="west") != PubAck("S", 1)
    assert PubAck("S", 1, domain="") == PubAck("S", 1)
    assert BatchPubAck("S", 2, "b", 2, domain="west") != BatchPubAck("S", 2, "b", 2)
