"""The server's publish limits on a real nats-server: jetlink refuses a publish whose
protocol line would exceed max_control_line (or whose payload max_payload) BEFORE sending it,
with the same error as the embedded engine, and the connection stays up (the server would
answer -ERR 'maximum control line exceeded' and close it)."""

from __future__ import annotations

import json

import pytest
from helpers import runner

from jetlink.cli.main import app
from jetlink.core.errors import ApiError
from jetlink.core.live.client import connect
from jetlink.core.live.jetstream import LiveJetStream
from jetlink.core.live.target import ServerTarget

KEY = "a" * 100_000
CTRL = "nats: maximum control line exceeded"


@pytest.fixture
def cli(live, monkeypatch):
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)

    def run(*args):
        return runner.invoke(app, ["--server", live.url, *args], prog_name="jetlink")

    return run


def test_cli_kv_put_refuses_a_huge_key_like_the_embedded_engine(cli, jl):
    assert cli("kv", "add", "CFG").exit_code == 0
    res = cli("kv", "put", "CFG", KEY, "v")
    assert res.exit_code == 1
    assert jl("kv", "add", "CFG").exit_code == 0
    embedded = jl("kv", "put", "CFG", KEY, "v")
    assert (res.exit_code, res.stderr) == (embedded.exit_code, embedded.stderr)
    assert res.stderr.startswith("jetlink: error: key is 100,000 bytes: ")
    assert res.stderr.endswith(CTRL + "\n") and KEY not in res.stderr
    assert json.loads(cli("kv", "info", "CFG", "--json").stdout)["values"] == 0


def test_a_message_over_max_msg_size_is_named_as_on_the_engine(cli, jl):
    """The server's 10054 carries no sizes: the live client adds the stream's limit and
    the message's size, the engine's line word for word; --json stays the server's."""
    for run in (cli, jl):
        assert run("stream", "add", "SZ", "--subjects", "sz.>", "--max-msg-size", "10",
                   "--defaults").exit_code == 0
    live = cli("pub", "sz.a", "hello world, more", "-H", "K:v")
    embedded = jl("pub", "sz.a", "hello world, more", "-H", "K:v")
    assert (live.exit_code, live.stderr) == (embedded.exit_code, embedded.stderr)
    assert live.stderr == ("jetlink: error: message size exceeds maximum allowed (10054): "
                           "max_msg_size = 10: the message is 35 bytes (18 of headers)\n")
    assert json.loads(cli("pub", "sz.a", "hello world, more", "-j").stdout) == {
        "error": {"code": 400, "err_code": 10054,
                  "description": "message size exceeds maximum allowed"},
        "stream": "SZ", "seq": 0}  # the server's answer: its PubAck around the error


@pytest.mark.parametrize(("flags", "body", "fill", "detail"), [
    (["--max-msgs", "3", "--discard", "new"], "m", 3,
     "maximum messages exceeded (10077): max_msgs = 3 (discard new): the stream holds 3"),
    (["--max-bytes", "300", "--discard", "new"], "x" * 70, 2,
     "maximum bytes exceeded (10077): max_bytes = 300 (discard new): the stream holds 212 "
     "bytes, the message needs 106"),
    (["--max-msgs-per-subject", "1", "--discard", "new", "--discard-per-subject"], "m", 1,
     "maximum messages per subject exceeded (10077): max_msgs_per_subject = 1 (discard new "
     "per subject): subject full.x holds 1"),
])
def test_a_stream_full_under_discard_new_is_named_as_on_the_engine(cli, jl, flags, body,
                                                                   fill, detail):
    """The server's 10077 says which limit, not its value nor what the stream holds: the
    live client reads them from the stream's info on that refusal, the engine's line word
    for word."""
    for run in (cli, jl):
        assert run("stream", "add", "FULL", "--subjects", "full.>", *flags,
                   "--defaults").exit_code == 0
        for _ in range(fill):
            assert run("pub", "full.x", body).exit_code == 0
    live, embedded = cli("pub", "full.x", body), jl("pub", "full.x", body)
    assert (live.exit_code, live.stderr) == (embedded.exit_code, embedded.stderr)
    assert live.stderr == f"jetlink: error: {detail}\n"


def test_connection_survives_a_refused_publish(live):
    js = LiveJetStream(connect(ServerTarget((live.url,))))
    try:
        js.add_stream({"name": "S", "subjects": ["s.>"]})
        for publish in (lambda s: js.publish(s, b"x"), lambda s: js.publish_core(s, b"x")):
            with pytest.raises(ApiError) as e:
                publish("s." + KEY)
            assert e.value.description.endswith(CTRL)
        res = js.publish_many([("s.a", b"1", None), ("s." + KEY, b"2", None)])
        assert res[0].seq == 1 and res[1].description.endswith(CTRL)
        assert js.publish("s.b", b"2").seq == 2  # the same connection, still up
        assert js.stream_info("S").state.messages == 2
    finally:
        js.close()
