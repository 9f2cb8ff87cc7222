"""The publish ack's ``domain`` on real nats-servers: two JetStream domains joined by a
leafnode (``live_domains``: west the hub, east the leaf). Each ack names the domain of
the server that stored the message (stream.go's pubAck template); `jetlink pub` keeps it
in its JSON and prints it as natscli does (`` Domain: "west"`` after the sequence)."""

from __future__ import annotations

import pytest
from helpers import runner

from jetlink.cli.main import app
from live.clihelp import doc, ok


@pytest.fixture
def run(live_domains, monkeypatch):
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)

    def go(url, *args):
        return runner.invoke(app, ["--server", url, *args], prog_name="jetlink")

    go.hub, go.leaf = live_domains.hub.url, live_domains.leaf.url
    return go


def test_ack_carries_the_storing_servers_domain(run):
    ok(run(run.hub, "stream", "add", "W", "--subjects", "w.>", "--defaults",
           "--storage", "memory"))
    ok(run(run.leaf, "stream", "add", "E", "--subjects", "e.>", "--defaults",
           "--storage", "memory"))
    assert doc(run(run.hub, "pub", "w.a", "x", "-j")) == {"stream": "W", "domain": "west",
                                                          "seq": 1}
    assert ok(run(run.hub, "pub", "w.a", "y")).stdout == (
        'Stored in Stream: W Sequence: 2 Domain: "west"\n')
    # from the hub, a subject east's stream captures: east stored it, east answers
    assert doc(run(run.hub, "pub", "e.a", "x", "-j")) == {"stream": "E", "domain": "east",
                                                          "seq": 1}
    assert ok(run(run.leaf, "pub", "e.a", "y")).stdout == (
        'Stored in Stream: E Sequence: 2 Domain: "east"\n')


def test_duplicate_and_batch_acks_carry_the_domain(run):
    ok(run(run.hub, "stream", "add", "B", "--subjects", "b.>", "--defaults",
           "--storage", "memory", "--allow-batch"))
    assert doc(run(run.hub, "pub", "b.a", "x", "-H", "Nats-Msg-Id:m1", "-j")) == {
        "stream": "B", "domain": "west", "seq": 1}
    assert doc(run(run.hub, "pub", "b.a", "x", "-H", "Nats-Msg-Id:m1", "-j")) == {
        "stream": "B", "domain": "west", "seq": 1, "duplicate": True}
    assert ok(run(run.hub, "pub", "b.a", "x", "-H", "Nats-Msg-Id:m1")).stdout == (
        'Stored in Stream: B Sequence: 1 Domain: "west" Duplicate: true\n')
    got = doc(run(run.hub, "pub", "b.c", "n{{Count}}", "--atomic", "--count", "3", "-j"))
    assert {k: got[k] for k in ("stream", "domain", "seq", "count")} == {
        "stream": "B", "domain": "west", "seq": 4, "count": 3}
    line = ok(run(run.hub, "pub", "b.c", "n", "--atomic", "--count", "2")).stdout
    assert line.startswith("Wrote batch ID: ") and line.endswith(
        ' Messages: 2 Sequence: 6 Domain: "west"\n'), line
