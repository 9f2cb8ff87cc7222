"""The server's limits on one publish (core/limits.py): the protocol line must fit
max_control_line (4096 bytes), headers + payload max_payload (1 MiB). Refused before anything
is sent or stored, with the client's text (``nats: maximum control line exceeded``,
``nats: maximum payload exceeded``) after a sentence naming the field, its length and the
limit; a huge value is never echoed in full.

The control-line boundaries are the ones measured against nats-server 2.15: ``PUB <subject>
1`` passes with a 4,094-byte subject and is refused (``-ERR 'maximum control line
exceeded'``) with 4,095; ``HPUB <subject> 12 13`` passes at 4,090 and is refused at 4,091.
"""

from __future__ import annotations

import json

import pytest
from helpers import cfg, doc, ok

from jetlink.core import limits as L
from jetlink.core.config.kv import KeyValueConfig
from jetlink.core.errors import ApiError, NoStreamError, clip
from jetlink.core.kv import KV

MIB = 1024 * 1024
BIG = 100_000
CTRL = "nats: maximum control line exceeded"
PAYLOAD = "nats: maximum payload exceeded"


def ctrl_text(field: str, n: int, line: int) -> str:
    return (f"{field} is {n:,} bytes: a publish's protocol line (subject, reply and sizes: "
            f"here {line:,} bytes) must fit the server's max_control_line (4,096 bytes): {CTRL}")


# -- the core rule -------------------------------------------------------------------------

@pytest.mark.parametrize("subject_len,data_len,hdr_len,reply_len,refused", [
    (4000, 1, 0, 0, None),
    (4094, 1, 0, 0, None),  # "<4094 bytes> 1": 4,096 bytes, the limit
    (4095, 1, 0, 0, ctrl_text("subject", 4095, 4097)),
    (4093, 10, 0, 0, None),  # "<4093 bytes> 10": 4,096 bytes
    (4094, 10, 0, 0, ctrl_text("subject", 4094, 4097)),  # the size's digits count
    (4090, 1, 12, 0, None),  # HPUB "<4090> 12 13"
    (4091, 1, 12, 0, ctrl_text("subject", 4091, 4097)),
    (4062, 1, 0, L.js_reply_len(0), None),  # a JetStream publish: "<subject> <inbox>.0 1"
    (4063, 1, 0, L.js_reply_len(0), ctrl_text("subject", 4063, 4097)),
    (BIG, 1, 0, 0, ctrl_text("subject", BIG, BIG + 2)),
    (BIG, 1, 0, L.js_reply_len(0), ctrl_text("subject", BIG, BIG + 34)),
], ids=["4000", "4094-limit", "4095-over", "size-digits-limit", "size-digits", "hpub-limit",
        "hpub-over", "js-limit", "js-over", "100000", "100000-js"])
def test_control_line(subject_len, data_len, hdr_len, reply_len, refused):
    subject = "a" * subject_len
    if refused is None:
        L.check_publish(subject, data_len, hdr_len=hdr_len, reply_len=reply_len)
        return
    with pytest.raises(ApiError) as e:
        L.check_publish(subject, data_len, hdr_len=hdr_len, reply_len=reply_len)
    assert (e.value.code, e.value.err_code, e.value.description) == (400, 0, refused)
    assert e.value.field == "subject"


@pytest.mark.parametrize("data_len,hdr_len,refused", [
    (MIB, 0, None),
    (MIB + 1, 0, f"payload is 1,048,577 bytes: over the server's max_payload (1,048,576 "
                 f"bytes): {PAYLOAD}"),
    (MIB - 100, 100, None),  # headers count
    (MIB - 99, 100, f"payload is 1,048,577 bytes (100 of headers and 1,048,477 of data): "
                    f"over the server's max_payload (1,048,576 bytes): {PAYLOAD}"),
    (0, MIB + 1, f"payload is 1,048,577 bytes (1,048,577 of headers and 0 of data): over "
                 f"the server's max_payload (1,048,576 bytes): {PAYLOAD}"),
], ids=["1MiB", "1MiB+1", "1MiB-with-headers", "over-with-headers", "headers-only"])
def test_max_payload(data_len, hdr_len, refused):
    if refused is None:
        L.check_publish("s.a", data_len, hdr_len=hdr_len, reply_len=L.js_reply_len(0))
        return
    with pytest.raises(ApiError) as e:
        L.check_publish("s.a", data_len, hdr_len=hdr_len, reply_len=L.js_reply_len(0))
    assert (e.value.err_code, e.value.description, e.value.field) == (0, refused, "payload")


def test_multibyte_subject_counts_bytes():
    with pytest.raises(ApiError) as e:
        L.check_publish("é" * 2048, 1)  # 2,048 characters, 4,096 bytes
    assert e.value.description == ctrl_text("subject", 4096, 4098)


@pytest.mark.parametrize("value,shown", [
    ("", ""),
    ("a" * 100, "a" * 100),
    ("a" * 101, "a" * 40 + "... (101 characters)"),
    ("b" * BIG, "b" * 40 + "... (100,000 characters)"),
])
def test_clip(value, shown):
    assert clip(value) == shown


@pytest.mark.parametrize("value,shown", [
    ("ok", "'ok'"),
    (None, "None"),
    ("x\udcff", "'x\\xff'"),  # a byte that is not UTF-8: shown as the byte given
    ("a\\udcff", "'a\\\\udcff'"),  # the text's own backslash stays the text's
    ("x\\\udcfe", "'x\\\\\\xfe'"),
])
def test_quoted(value, shown):
    from jetlink.core.errors import quoted

    assert quoted(value) == shown


def test_no_stream_error_cuts_the_subject():
    subject = "x" * BIG
    err = NoStreamError(subject)
    assert err.description == f"no stream matches subject {'x' * 40}... (100,000 characters)"
    assert err.subject == subject


# -- the embedded engine -------------------------------------------------------------------

def _stored(js):
    return js.stream_info("S").state.messages


@pytest.mark.parametrize("call,n,stored", [
    *[(call, n, stored) for call in ("publish", "publish_many", "publish_batch")
      for n, stored in ((4062, True), (4063, False), (BIG, False))],  # with a reply
    ("publish_core", 4094, True), ("publish_core", 4095, False), ("publish_core", BIG, False),
])
def test_engine_publishes(js, call, n, stored):
    js.add_stream(cfg())
    subject = "s." + "a" * (n - 2)
    try:
        if call == "publish":
            js.publish(subject, b"x")
        elif call == "publish_core":
            js.publish_core(subject, b"x")
        elif call == "publish_batch":
            js.publish_batch([(subject, b"x", None)])
        else:
            res = js.publish_many([(subject, b"x", None)])
            if isinstance(res[-1], ApiError):
                raise res[-1]
    except ApiError as err:
        assert not stored
        assert err.description.endswith(CTRL) and f"subject is {n:,} bytes" in err.description
        assert "a" * 101 not in err.description
    else:
        assert stored
    assert _stored(js) == (1 if stored else 0)


def test_publish_many_sends_what_comes_before(js):
    js.add_stream(cfg())
    res = js.publish_many([("s.a", b"1", None), ("s." + "a" * BIG, b"2", None),
                           ("s.b", b"3", None)])
    assert len(res) == 2 and res[0].seq == 1
    assert isinstance(res[1], ApiError) and res[1].description.endswith(CTRL)
    assert _stored(js) == 1


def test_batch_cache_does_not_hide_a_longer_line(js):
    """A subject already accepted with a small payload is checked again with a larger one."""
    js.add_stream(cfg())
    subject = "s." + "a" * 4058  # 4,060 bytes: "<subject> <inbox>.0 1" = 4,094
    js.publish_batch([(subject, b"x", None)])
    with pytest.raises(ApiError) as e:
        js.publish_batch([(subject, b"x" * 1000, None)])  # 3 more digits: 4,097
    assert e.value.description == ctrl_text("subject", 4060, 4097)
    assert _stored(js) == 1


@pytest.fixture
def bucket(dd, clock):
    kv = KV(dd, "local", clock)
    kv.create_bucket(KeyValueConfig(bucket="CFG"))
    return kv.open("CFG")


@pytest.mark.parametrize("op", ["put", "create", "update", "delete", "purge", "put_many"])
def test_kv_writes_name_the_key(bucket, op):
    key = "k" * BIG
    calls = {
        "put": lambda: bucket.put(key, b"v"),
        "create": lambda: bucket.create(key, b"v"),
        "update": lambda: bucket.update(key, b"v", 1),
        "delete": lambda: bucket.delete(key),
        "purge": lambda: bucket.purge(key),
        "put_many": lambda: bucket.put_many([("ok", b"1"), (key, b"v")]),
    }
    with pytest.raises(ApiError) as e:
        calls[op]()
    assert e.value.field == "key"
    assert e.value.description.startswith("key is 100,000 bytes: a publish's protocol line")
    assert e.value.description.endswith("max_control_line (4,096 bytes): " + CTRL)
    assert bucket.status().values == 0


@pytest.mark.parametrize("n,stored", [(4054, True), (4055, False)])
def test_kv_key_boundary(bucket, n, stored):
    """``$KV.CFG.<key> <inbox>.0 1``: 8 + n + 1 + 31 + 2 bytes, at most 4,096."""
    key = "k" * n
    if stored:
        assert bucket.put(key, b"v") == 1
    else:
        with pytest.raises(ApiError) as e:
            bucket.put(key, b"v")
        assert e.value.description == ctrl_text("key", n, 4097)
    assert bucket.status().values == (1 if stored else 0)


def test_kv_value_over_max_payload(bucket):
    with pytest.raises(ApiError) as e:
        bucket.put("k", b"v" * (MIB + 1))
    assert e.value.description == (f"payload is 1,048,577 bytes: over the server's "
                                   f"max_payload (1,048,576 bytes): {PAYLOAD}")
    assert bucket.status().values == 0


# -- the CLI -------------------------------------------------------------------------------

KEY = "a" * BIG


def _stream(jl):
    ok(jl("stream", "add", "S", "--subjects", "a.>", "--defaults"))


def _msgs(jl):
    return doc(jl("stream", "info", "S", "--json"))["state"]["messages"]


@pytest.mark.parametrize("args,text", [
    (("pub", "a." + KEY[2:], "x"), ctrl_text("subject", BIG, BIG + 34)),
    (("pub", "--core", "a." + KEY[2:], "x"), ctrl_text("subject", BIG, BIG + 2)),
    (("pub", "a.b", "x" * (MIB + 1)),
     f"payload is 1,048,577 bytes: over the server's max_payload (1,048,576 bytes): {PAYLOAD}"),
    (("pub", "-H", "K:" + "v" * MIB, "a.b", "x"),
     f"payload is 1,048,594 bytes (1,048,593 of headers and 1 of data): over the server's "
     f"max_payload (1,048,576 bytes): {PAYLOAD}"),
], ids=["subject", "core-subject", "payload", "headers"])
def test_cli_pub(jl, args, text):
    _stream(jl)
    res = jl(*args)
    assert res.exit_code == 1
    assert res.stderr == f"jetlink: error: {text}\n"
    assert KEY not in res.stderr and "x" * 200 not in res.stderr
    js = jl(*args, "--json")
    assert js.exit_code == 1
    assert json.loads(js.stdout) == {"error": {"code": 400, "description": text}}
    assert _msgs(jl) == 0


def test_cli_no_stream_cuts_the_subject(jl):
    res = jl("pub", "x" * 300, "v")
    assert res.exit_code == 1
    assert res.stderr == (f"jetlink: error: no stream matches subject {'x' * 40}... "
                          "(300 characters) (use --core for a core NATS publish, without a "
                          "stream)\n")


@pytest.mark.parametrize("args", [
    ("put", "CFG", KEY, "v"),
    ("create", "CFG", KEY, "v"),
    ("update", "CFG", KEY, "v", "1"),
    ("del", "CFG", KEY, "-f"),
    ("purge", "CFG", KEY, "-f"),
], ids=["put", "create", "update", "del", "purge"])
def test_cli_kv_key(jl, args):
    ok(jl("kv", "add", "CFG"))
    res = jl("kv", *args)
    assert res.exit_code == 1
    assert res.stderr.startswith("jetlink: error: key is 100,000 bytes: a publish's protocol "
                                 "line (subject, reply and sizes: here ")
    assert res.stderr.endswith(f"bytes) must fit the server's max_control_line (4,096 "
                               f"bytes): {CTRL}\n")
    assert KEY not in res.stderr and len(res.stderr) < 300
    js = jl("kv", *args, "--json")
    assert js.exit_code == 1
    assert json.loads(js.stdout)["error"]["description"] == res.stderr[len("jetlink: error: "):-1]
    assert doc(jl("kv", "info", "CFG", "--json"))["values"] == 0
    assert ok(jl("kv", "ls", "CFG")).stderr == "No keys found in bucket\n"


def test_cli_kv_value_over_max_payload(jl):
    ok(jl("kv", "add", "CFG"))
    res = jl("kv", "put", "CFG", "k", "v" * (MIB + 1))
    assert res.exit_code == 1
    assert res.stderr == (f"jetlink: error: payload is 1,048,577 bytes: over the server's "
                          f"max_payload (1,048,576 bytes): {PAYLOAD}\n")
    assert doc(jl("kv", "info", "CFG", "--json"))["values"] == 0
