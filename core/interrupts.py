"""Clean-up that an interrupt must not cut short.

:func:`no_interrupt`: SIGINT ignored inside (on the main thread; the handler in force put
back after), for the few steps that undo what a command made on a server or in a region
(a live watch's consumer deleted, a region's report written): a second Ctrl-C pressed
while the first is being handled, or ``timeout -s INT`` sending two, would otherwise leave
them half done. :func:`interrupt_deferred`: SIGINT held inside and raised as
KeyboardInterrupt when the block ends, for a step that makes something its caller must
undo (a watch's consumer made on a server): interrupted half-way, nobody would undo it.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Any

__all__ = ["interrupt_deferred", "no_interrupt"]


@contextlib.contextmanager
def _sigint(handler: Any) -> Iterator[None]:
    """``handler`` for SIGINT inside (the main thread's put back after); elsewhere than on
    the main thread nothing: signals are not that thread's to handle."""
    try:
        was = signal.signal(signal.SIGINT, handler)
    except ValueError:
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, was)


@contextlib.contextmanager
def no_interrupt() -> Iterator[None]:
    """SIGINT ignored inside (the main thread's handler put back after)."""
    with _sigint(signal.SIG_IGN):
        yield


@contextlib.contextmanager
def interrupt_deferred() -> Iterator[None]:
    """SIGINT held inside and raised (KeyboardInterrupt) once the block has ended, unless
    the block raised already (the main thread's handler put back first)."""
    held: list[int] = []
    with _sigint(lambda signum, _frame: held.append(signum)):
        yield
    if held:
        raise KeyboardInterrupt
