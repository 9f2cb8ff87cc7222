"""Both backends implement the one interface the CLI uses (core/api.py JetStreamAPI): every
method of the protocol exists on the embedded engine and on the live client, with the same
parameters (names, kinds and defaults)."""

from __future__ import annotations

import inspect

import pytest

from jetlink.core.api import JetStreamAPI
from jetlink.core.jetstream import JetStream
from jetlink.core.live.jetstream import LiveJetStream

METHODS = sorted(n for n, v in vars(JetStreamAPI).items()
                 if callable(v) and not n.startswith("_"))


def _params(fn):
    return [(p.name, p.kind, p.default) for p in
            list(inspect.signature(fn).parameters.values())[1:]]


def test_the_protocol_lists_the_verbs_operations():
    assert {"add_stream", "stream_info", "messages", "publish_many", "subscribe",
            "add_consumer", "fetch", "last_msgs"} <= set(METHODS)


@pytest.mark.parametrize("impl", [JetStream, LiveJetStream], ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", METHODS)
def test_implements(impl, name):
    proto = getattr(JetStreamAPI, name)
    have = getattr(impl, name, None)
    assert callable(have), f"{impl.__name__} lacks {name}"
    want = _params(proto)
    got = _params(have)
    # every parameter of the protocol, same name, kind and default (extra keyword-only
    # parameters with defaults are allowed)
    assert got[: len(want)] == want, (impl.__name__, name, got, want)
    assert all(p[1] == inspect.Parameter.KEYWORD_ONLY and p[2] is not inspect.Parameter.empty
               for p in got[len(want):]), (impl.__name__, name, got)


@pytest.mark.parametrize("impl", [JetStream, LiveJetStream], ids=lambda c: c.__name__)
def test_where_is_a_property(impl):
    assert isinstance(inspect.getattr_static(impl, "where"), property)
