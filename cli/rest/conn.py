"""Connections of ``jetlink serve``: deadlines, a cap, and accept failures logged once.

uvicorn (0.54, its h11 protocol) closes a keep-alive connection that stays idle
``timeout_keep_alive`` seconds after a response, and nothing else: a connection that never
sends a request, sends its header a byte at a time or stops half way through its body stays
open for ever, and the open files run out. This module adds, on uvicorn's h11 protocol
(:func:`protocol_class`):

- a request deadline: from the moment a connection opens (or its previous response ended),
  the whole request, header and body, must arrive within ``request_timeout`` seconds, else
  the connection is closed (idle, partial-header and slow-body connections alike; the clock
  is not restarted by each byte received);
- a connection cap: when ``max_connections`` connections are open, a new one makes the
  oldest connection that has no request in progress (idle, or still sending its header) be
  closed; when every connection has a request in progress the new one is closed at once;

and on the listening socket (:class:`Listener`): when ``accept()`` fails for lack of
resources (EMFILE, ENFILE, ENOBUFS, ENOMEM) the waiting connection is accepted on a spare
descriptor kept for the purpose and closed at once, and the failure is logged once per
:data:`LOG_EVERY` seconds with the number of connections refused since (Python's event loop
would log it and re-arm its retry once per waiting connection: hundreds of thousands of lines
in seconds). :func:`rate_limited_handler` does the same for any message the event loop
reports. :func:`connection_cap` derives a cap from the open-file limit.

uvicorn and h11 are imported here; this module is imported by ``jetlink serve`` only.
"""

from __future__ import annotations

import asyncio
import errno
import os
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["LOG_EVERY", "Listener", "connection_cap", "protocol_class",
           "rate_limited_handler", "raise_open_file_limit"]

LOG_EVERY = 60.0  # seconds between two log lines of the same repeated failure
# Descriptors kept free beyond the connections: the databases of the data directory (three
# per open cluster: the file, its -wal and -shm), the log, the listening socket, the spare.
RESERVED_FILES = 64
_OUT_OF_RESOURCES = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


def _log(text: str) -> None:
    sys.stderr.write(f"jetlink: warning: {text}\n")
    sys.stderr.flush()


class _Limiter:
    """One line per ``key`` per :data:`LOG_EVERY` seconds, counting what it kept quiet."""

    def __init__(self, every: float = LOG_EVERY) -> None:
        self.every = every
        self.last: dict[str, float] = {}
        self.quiet: dict[str, int] = {}

    def __call__(self, key: str, text: str) -> None:
        now = time.monotonic()
        last = self.last.get(key)
        if last is not None and now - last < self.every:
            self.quiet[key] = self.quiet.get(key, 0) + 1
            return
        self.last[key] = now
        quiet = self.quiet.pop(key, 0)
        _log(text + (f" ({quiet} more since the last report)" if quiet else ""))


def rate_limited_handler() -> Callable[[asyncio.AbstractEventLoop, dict[str, Any]], None]:
    """An event loop exception handler that logs each kind of message (its ``message``) at
    most once per :data:`LOG_EVERY` seconds, one line without a traceback."""
    limit = _Limiter()

    def handler(_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message") or "event loop error")
        exc = context.get("exception")
        limit(message, f"{message}: {exc}" if exc is not None else message)

    return handler


class Listener(socket.socket):
    """A listening socket whose ``accept()`` sheds a connection it has no descriptor for
    (module doc) instead of failing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._spare: int | None = None
        self._limit = _Limiter()
        self.shed = 0  # connections refused for lack of descriptors
        self._reserve()

    def _reserve(self) -> None:
        try:
            self._spare = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self._spare = None

    def accept(self) -> tuple[socket.socket, Any]:
        try:
            return super().accept()
        except OSError as exc:
            if exc.errno not in _OUT_OF_RESOURCES:
                raise
            self._shed_one()
            self._limit("accept", f"cannot accept a connection: {exc.strerror or exc} "
                        f"({self.shed} refused so far; the open-file limit is "
                        f"{_soft_limit()})")
            # the event loop's "nothing (more) to accept now": no log line of its own, no
            # retry timer; it is called again when another connection waits
            raise ConnectionAbortedError(exc.errno, exc.strerror) from None

    def _shed_one(self) -> None:
        """Accept the waiting connection on the spare descriptor and close it."""
        if self._spare is not None:
            os.close(self._spare)
            self._spare = None
        try:
            fd, _addr = self._accept()  # type: ignore[attr-defined]
            os.close(fd)
            self.shed += 1
        except OSError:
            pass
        finally:
            self._reserve()

    def close(self) -> None:
        if self._spare is not None:
            os.close(self._spare)
            self._spare = None
        super().close()


def _soft_limit() -> int | str:
    try:
        import resource

        return resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):  # pragma: no cover - not POSIX
        return "unknown"


def raise_open_file_limit() -> int | None:
    """Raise this process's soft open-file limit to its hard limit (as Go's runtime does for
    every server it starts); the soft limit in force (None where it cannot be read)."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard == resource.RLIM_INFINITY:
            hard = max(soft, 1 << 16)
        if soft != resource.RLIM_INFINITY and soft < hard:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
                soft = hard
            except (OSError, ValueError):
                pass
        return int(soft)
    except (ImportError, OSError, ValueError):  # pragma: no cover - not POSIX
        return None


def connection_cap(wanted: int, open_files: int | None) -> int:
    """``wanted``, lowered so that the connections and :data:`RESERVED_FILES` fit in
    ``open_files`` (at least 8)."""
    if open_files is None:
        return wanted
    return max(8, min(wanted, open_files - RESERVED_FILES))


def protocol_class(request_timeout: float, max_connections: int) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the request deadline and the connection cap of the
    module doc (one class per server: the open connections are counted per class)."""
    opened: dict[Any, None] = {}  # open connections, oldest first

    class Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            opened[self] = None
            self._arm()
            if len(opened) > max_connections:
                victim = next((c for c in opened if c is not self and c._idle()), self)
                victim._drop()

        def connection_lost(self, exc: Exception | None) -> None:
            opened.pop(self, None)
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
                self._disarm()  # the whole request arrived (or the connection ends)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._arm()  # the next request has the same time to arrive

        def _idle(self) -> bool:
            """No request in progress: nothing received yet, or part of a header."""
            return self.conn.their_state is h11.IDLE and (
                self.cycle is None or self.cycle.response_complete)

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(request_timeout, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            self._deadline = None
            if self.conn.their_state not in (h11.DONE,):
                self._drop()

        def _drop(self) -> None:
            opened.pop(self, None)
            self._disarm()
            if not self.transport.is_closing():
                self.transport.close()

    Protocol.__name__ = Protocol.__qualname__ = "JetlinkH11Protocol"
    return Protocol
