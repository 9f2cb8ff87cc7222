"""The stream create / update rules of tests/test_validate_stream.py, asked of nats-server.

Every row of that table that the server's API can reach (``create`` and ``update`` rows not
marked jetlink-only) is sent to a real server, from an account without streams: the setup
streams created first (a ``("seal", NAME)`` item seals one), then the row's request, with
``pedantic`` when the row has it. A refusal must be the row's (code, err_code, description)
exactly; a row the server ACCEPTS (jetlink's documented divergences) must be accepted; an
accepted config must be the row's document (the server's own ``_nats.ver`` / ``_nats.level``
metadata aside). ``config`` rows (``check_stream_config`` alone) have no request of their
own: the server checks a name in the request's subject before its config.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import wait_until
from test_validate_stream import ACCEPTS, CASES, JETLINK_ONLY, Case, Err

pytestmark = pytest.mark.live

ASKED = [c for c in CASES if c.server != JETLINK_ONLY and c.op in ("create", "update")]
SERVER_METADATA = ("_nats.ver", "_nats.level")


def test_the_table_is_asked_of_the_server() -> None:
    assert len(ASKED) >= 150
    assert {c.op for c in ASKED} == {"create", "update"}


def _setup(srv: Any, case: Case) -> None:
    for item in case.setup:
        if isinstance(item, tuple):  # ("seal", name)
            cfg = srv.api(f"STREAM.INFO.{item[1]}")["config"]
            resp = srv.api(f"STREAM.UPDATE.{item[1]}", {**cfg, "sealed": True})
        else:
            resp = _create_setup(srv, item)
        assert "error" not in resp, (case.id, item, resp)


def _create_setup(srv: Any, item: dict[str, Any]) -> Any:
    """A setup stream's create. On a loaded machine the server can answer a plain create
    with 10049 ("error creating store for stream": its file store could not be set up,
    newFileStoreWithCreated) right after the previous row's streams went; the setup is not
    what the row checks, so such an answer is asked again until the deadline, which fails
    with the last answer."""
    answers: list[Any] = []

    def created() -> Any:
        answers.append(srv.api(f"STREAM.CREATE.{item['name']}", item))
        err = answers[-1].get("error") or {}
        return answers[-1] if err.get("err_code") != 10049 else None

    return wait_until(created, timeout=30, interval=0.2,
                      message=lambda: f"setup create of {item['name']}: {answers[-1:]}")


def _own(metadata: Any) -> Any:
    if not isinstance(metadata, dict):
        return metadata
    return {k: v for k, v in metadata.items() if k not in SERVER_METADATA}


@pytest.mark.parametrize("case", ASKED, ids=[c.id for c in ASKED])
def test_the_server_answers_as_the_table_says(nats_single, case: Case) -> None:
    srv = nats_single
    srv.reset()
    try:
        _setup(srv, case)
        body = {k: v for k, v in case.cfg.items() if k != "_old"}
        if case.pedantic:
            body["pedantic"] = True
        if case.op == "create":
            resp = srv.api(f"STREAM.CREATE.{case.cfg['name']}", body)
        else:
            resp = srv.api(f"STREAM.UPDATE.{case.cfg.get('_old', case.cfg['name'])}", body)
    finally:
        srv.reset()
    error = resp.get("error")
    if isinstance(case.expect, Err):
        if case.server == ACCEPTS:
            assert error is None, (case.id, error)
            return
        assert error is not None, (case.id, "accepted", resp.get("config"))
        assert (error["code"], error["err_code"], error["description"]) == case.expect[:3]
        return
    assert error is None, (case.id, error)
    got = dict(resp["config"])
    want = dict(case.expect)
    got["metadata"], want["metadata"] = _own(got.get("metadata")), _own(want.get("metadata"))
    for key in sorted(set(got) | set(want)):
        assert got.get(key, "<absent>") == want.get(key, "<absent>"), (case.id, key)
