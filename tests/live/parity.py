"""What the parity files share (tests/live/test_parity*.py): a CLI script run on the embedded
engine and on a live nats-server, step by step, and the records compared.

- :func:`parity_env`: the environment a script runs in on both sides (no JETLINK_* / NATS_*
  setting, no terminal, UTC, a config home of its own), the server reset before and after;
- :func:`step`: one step run and recorded (exit status, stdout, stderr, the JSON document of a
  ``-j`` step, an exception that escaped), with the file's own masks for what differs by
  nature between the two sides (times, ids, the data directory or the server URL).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
from helpers import ENV_VARS, WAIT_TIMEOUT, runner

from jetlink.cli.main import app


def _same(value: Any) -> Any:
    return value


@contextmanager
def parity_env(tmp_path_factory: Any, server: Any, name: str = "parity"
               ) -> Iterator[pytest.MonkeyPatch]:
    """The monkeypatch of the script's environment, the server reset around it."""
    with pytest.MonkeyPatch.context() as mp:
        for var in ENV_VARS:
            mp.delenv(var, raising=False)
        mp.setattr("jetlink.cli.output.is_interactive", lambda: False)
        mp.setenv("TZ", "UTC")
        mp.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp(f"{name}-config")))
        server.reset()
        # a cluster whose earlier tests restarted nodes or deleted many streams can take a
        # while to place a stream again (its meta layer catching up): ready first, as a
        # fresh start is (an R3 probe created and deleted), so the script's first create
        # does not spend its timeout waiting for that
        ready = getattr(server, "wait_ready", None)
        if ready is not None:
            ready()
        try:
            yield mp
        finally:
            server.reset()


def step(prefix: Sequence[str], args: Sequence[str], *,
         text: Callable[[str], str] = _same, out: Callable[[str], str] | None = None,
         doc: Callable[[Any], Any] = _same) -> dict[str, Any]:
    """Run ``jetlink PREFIX ARGS`` and record it: ``text`` masks stdout and stderr (``out``
    stdout only, after ``text``), ``doc`` masks a ``-j`` step's document (then stdout is
    left out; an empty or unparsable stdout records ``json: None``)."""
    res = runner.invoke(app, [*prefix, *args], prog_name="jetlink")
    stdout = text(res.stdout)
    rec: dict[str, Any] = {"status": res.exit_code,
                           "stdout": out(stdout) if out is not None else stdout,
                           "stderr": text(res.stderr)}
    if "-j" in args:
        try:
            rec["json"] = doc(json.loads(res.stdout)) if res.stdout.strip() else None
            rec["stdout"] = ""
        except ValueError:
            rec["json"] = None
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        rec["exception"] = repr(res.exception)
    return rec


# --- the cluster variant ------------------------------------------------------------------------
# The parity files run their script on nats_single and on nats_cluster3. On the cluster the
# streams get three replicas, so publishes take the clustered path (the leader's
# checkMsgHeadersPreClusteredProposal, raft proposals, batches applied from the log, schedules
# fired by the stream leader); the embedded engine is one node and runs the script as it is.
TARGETS = ["single", "cluster"]
_REPLICAS_TEXT = re.compile(r"^( +Replicas:) \d+$", re.M)


class NoServer:
    """``parity_env``'s server for an embedded run: nothing to reset."""

    def reset(self) -> None:
        return None


def target(request: pytest.FixtureRequest) -> Any:
    """The live server of a ``TARGETS`` parameter (a session fixture)."""
    return request.getfixturevalue("nats_single" if request.param == "single"
                                   else "nats_cluster3")


def on_target(args: list[str], clustered: bool) -> list[str]:
    """A step's arguments as the target runs them: ``stream add`` with ``--replicas 3`` on
    the cluster."""
    if clustered and args[:2] == ["stream", "add"] and "--replicas" not in args:
        return [*args, "--replicas", "3"]
    return args


def mask_replicas(rec: dict[str, Any]) -> dict[str, Any]:
    """A record with the stream's replica count masked (the cluster variant's R3 streams
    against the engine's R1): ``num_replicas`` in the JSON document, ``Replicas:`` in text."""
    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: ("<replicas>" if k == "num_replicas" and v else walk(v))
                    for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    out = dict(rec)
    for key in ("stdout", "stderr"):
        if isinstance(out.get(key), str):
            out[key] = _REPLICAS_TEXT.sub(r"\1 <n>", out[key])
    if "json" in out:
        out["json"] = walk(out["json"])
    return out


def settle(prefix: list[str], stream: str, n: int) -> None:
    """Waits (helpers.WAIT_TIMEOUT at most) until ``stream`` holds ``n`` messages on the
    target ``prefix`` names; a stream that never gets there is compared as it is (the next
    steps show what is missing)."""
    deadline = time.monotonic() + WAIT_TIMEOUT
    while True:
        res = runner.invoke(app, [*prefix, "stream", "info", stream, "-j"], prog_name="jetlink")
        try:
            if json.loads(res.stdout)["state"]["messages"] >= n:
                return
        except (ValueError, KeyError):
            pass
        if time.monotonic() > deadline:
            return
        time.sleep(0.05)


# The batch parity files' masks (atomic and fast batches): times, generated batch ids (22
# characters, nuid), the volatile fields of a document, the server's cluster block.
BATCH_MASKS = [
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)"), "<time>"),
    (re.compile(r"batch ID: \w{22}\b"), "batch ID: <id>"),
]
BATCH_VOLATILE = {"created", "ts", "time", "first_ts", "last_ts"}


def mask_batch_doc(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ("<v>" if k in BATCH_VOLATILE or (k == "batch" and len(v) == 22)
                    else mask_batch_doc(v))
                for k, v in value.items() if k != "cluster"}
    if isinstance(value, list):
        return [mask_batch_doc(v) for v in value]
    return value


def batch_text(where: str) -> Callable[[str], str]:
    """Human output with the target's address and BATCH_MASKS masked."""
    def text(t: str) -> str:
        t = t.replace(where, "<where>")
        for pat, rep in BATCH_MASKS:
            t = pat.sub(rep, t)
        return t

    return text
