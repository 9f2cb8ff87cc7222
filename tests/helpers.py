"""Plain helpers shared by the test modules (the shared fixtures are in tests/conftest.py).

Imported as ``helpers``: pytest puts tests/ on sys.path (no __init__.py, rootdir import mode).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from jetlink.core.config.stream import StreamConfig

# jetlink's environment variables: the CLI tests run without them.
ENV_VARS = (
    "JETLINK_DATA_DIR",
    "JETLINK_CLUSTER",
    "JETLINK_CONTEXT",
    "JETLINK_REST_URL",
    "JETLINK_REST_TOKEN",
    "JETLINK_REST_API_KEY",
    "JETLINK_REST_API_SECRET",
    "XDG_DATA_HOME",
    "NO_COLOR",
)

# natscli's environment variables (the live-server settings): the tests run without them.
NATS_VARS = ("NATS_URL", "NATS_CONTEXT", "NATS_USER", "NATS_PASSWORD", "NATS_CREDS",
             "NATS_NKEY", "NATS_CERT", "NATS_KEY", "NATS_CA", "NATS_TIMEOUT")

class _Runner(CliRunner):
    """CliRunner whose commands leave the process's SIGINT handler as they found it: a
    command may ignore SIGINT until its process exits (core/interrupts.py
    ``ignored_from_now``), and here the process is the test session."""

    def invoke(self, *args: Any, **kwargs: Any) -> Any:
        import signal
        import threading

        if threading.current_thread() is not threading.main_thread():
            return super().invoke(*args, **kwargs)  # (signals are the main thread's)
        was = signal.getsignal(signal.SIGINT)
        try:
            return super().invoke(*args, **kwargs)
        finally:
            signal.signal(signal.SIGINT, was)


runner = _Runner()

# How long a test waits for a condition before it fails. A deadline only bounds a failure: a
# condition that holds returns at once, so it is generous (the suite runs in parallel on a
# machine that may be busy with other work).
WAIT_TIMEOUT = 120.0


def wait_until(fn: Callable[[], Any], timeout: float = WAIT_TIMEOUT, interval: float = 0.05,
               message: str | Callable[[], str] = "condition") -> Any:
    """Call ``fn`` until it returns something truthy, and return that. An exception counts as
    not yet. After ``timeout`` seconds: AssertionError naming ``message`` (a string, or a
    function called then, to show the state it saw) and ``fn``'s last result or error.

    The one way the tests wait for something to happen (a server's state, a process's
    output, a file): never a fixed sleep, never an assertion on elapsed time."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            last = fn()
            if last:
                return last
        except Exception as exc:  # noqa: BLE001 - retried until the deadline
            last = exc
        if time.monotonic() >= deadline:
            text = message() if callable(message) else message
            raise AssertionError(f"{text}: not reached within {timeout:g}s (last: {last!r})")
        time.sleep(interval)


def returns(fn: Callable[[], Any], message: str, timeout: float = WAIT_TIMEOUT) -> Any:
    """``fn()``'s result (or its exception, raised here) for a call that must end by itself,
    not hang until some long timeout: run on a daemon thread and waited for with
    :func:`wait_until` (the assertion names ``message``). For "answered at once" checks:
    give the call a timeout far longer than ``timeout`` (an hour), never assert its
    duration."""
    import threading

    done: dict[str, Any] = {}

    def run() -> None:
        try:
            done["result"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            done["error"] = exc

    threading.Thread(target=run, daemon=True, name="returns").start()
    wait_until(lambda: done, timeout=timeout, interval=0.01,
               message=f"{message} (still running)")
    if "error" in done:
        raise done["error"]
    return done["result"]


def ok(result: Any) -> Any:
    """A CLI result that exited 0 (else the assertion shows its status and output)."""
    assert result.exit_code == 0, (result.exit_code, result.stdout, result.stderr)
    return result


def doc(result: Any) -> Any:
    """The JSON document a successful CLI run printed."""
    return json.loads(ok(result).stdout)


def cfg(**kw: Any) -> StreamConfig:
    """A StreamConfig from its JSON fields; stream ``S`` on ``s.>`` unless given."""
    kw.setdefault("name", "S")
    kw.setdefault("subjects", ["s.>"])
    return StreamConfig.from_json(kw)


def state(js: Any, name: str = "S", **kw: Any) -> dict[str, Any]:
    """The StreamState document of stream ``name``."""
    return js.stream_info(name, **kw).state.to_json()


def data_dir_bytes(data: Path, *, databases_only: bool = False) -> dict[str, bytes]:
    """A data directory's bytes, to compare before and after a command or request that must
    change nothing: every file by its path (``databases_only``: the cluster databases), each
    cluster database with its WAL folded in first (no other connection may be open: the
    in-process CLI and ``serve`` close their store after each command or request)."""
    for db in sorted(data.glob("*.db")):
        conn = sqlite3.connect(db)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
    files = data.glob("*.db") if databases_only else data.rglob("*")
    return {str(p.relative_to(data)): p.read_bytes() for p in sorted(files) if p.is_file()}


def join_group(kafka: Any, group: str, joins: list[tuple[str, list[str], str]],
               **kw: Any) -> list[int]:
    """Join ``joins`` ((member, topics, client id)) to a Kafka engine's ``group`` until its
    rebalance completes, as each member's next poll would (core/kafka/topic_groups.py): a
    first round (a join of a group with members answers REBALANCE_IN_PROGRESS), then a
    second, whose first join completes it. The generation each member is in."""
    for member, topics, client in joins:
        try:
            kafka.join(group, member, topics, client_id=client, **kw)
        except Exception as exc:  # (KafkaError; the engine's module is not imported here)
            assert getattr(exc, "name", None) == "REBALANCE_IN_PROGRESS", exc
    return [kafka.join(group, m, t, client_id=c, **kw) for m, t, c in joins]
