"""Consumer configuration conformance: the recorded table against a real nats-server.

``tests/test_consumer_config.py`` holds the rows (request and recorded answer) and checks
jetlink against them; this module sends the same requests to nats-server 2.15.1 and checks
that the server still gives the recorded answer. Together they pin jetlink to the server.

Each row's consumer name travels in the request subject as nats-py does it: ``name`` in
``CONSUMER.CREATE.<stream>.<name>``, a durable name alone in
``CONSUMER.DURABLE.CREATE.<stream>.<durable>``; a name that can not be a subject token
(``A.b``, ``A b``) goes through the legacy ``CONSUMER.CREATE.<stream>``, where the server
reaches the same configuration check that jetlink reports.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.conformance


def _load_table():
    path = Path(__file__).resolve().parent.parent / "test_consumer_config.py"
    name = "jetlink_consumer_config_table"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


TABLE = _load_table()


def _token_ok(s: Any) -> bool:
    return isinstance(s, str) and bool(s) and "." not in s and not any(
        ch in s for ch in " \t\r\n\f")


def create_subject(stream: str, cfg: Any) -> str:
    if not isinstance(cfg, dict):
        return f"CONSUMER.CREATE.{stream}"
    name, durable = cfg.get("name"), cfg.get("durable_name")
    if _token_ok(name):
        return f"CONSUMER.CREATE.{stream}.{name}"
    if _token_ok(durable) and not name:
        return f"CONSUMER.DURABLE.CREATE.{stream}.{durable}"
    return f"CONSUMER.CREATE.{stream}"


@pytest.mark.parametrize("c", TABLE.CASES, ids=[c.id for c in TABLE.CASES])
def test_server_gives_the_recorded_answer(js, c) -> None:
    stream = c.stream["name"]
    resp = js.stream_create(dict(c.stream))
    assert "error" not in resp, resp
    for raw in c.setup:
        resp = js.api(create_subject(stream, raw), {"stream_name": stream, "config": raw})
        assert "error" not in resp, f"setup failed: {resp}"
    req: dict[str, Any] = {"stream_name": stream, "config": c.config}
    if c.action:
        req["action"] = c.action
    if c.pedantic:
        req["pedantic"] = True
    resp = js.api(create_subject(stream, c.config), req)
    if c.expect.ok:
        assert "error" not in resp, resp
        assert TABLE.strip_server_metadata(resp["config"]) == TABLE.expected_config(c)
    else:
        err = resp.get("error")
        assert err is not None, f"the server accepted: {resp.get('config')}"
        assert (err["code"], err.get("err_code", 0), err["description"]) == (
            c.expect.code, c.expect.err_code, c.expect.description)
