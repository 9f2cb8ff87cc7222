"""Clean-up that an interrupt must not cut short.

:func:`no_interrupt`: SIGINT ignored inside (on the main thread; the handler in force put
back after), for the few steps that undo what a command made on a server or in a region
(a live watch's consumer deleted, a region's report written): a second Ctrl-C pressed
while the first is being handled, or ``timeout -s INT`` sending two, would otherwise leave
them half done. :func:`interrupt_deferred`: SIGINT held inside and raised as
KeyboardInterrupt when the block ends, for a step that makes something its caller must
undo (a watch's consumer made on a server): interrupted half-way, nobody would undo it.
:func:`interrupt_once`: around a command that runs until interrupted and then cleans up:
the first SIGINT ends it, the ones after are ignored until its clean-up has run.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Any

__all__ = ["ignored_from_now", "interrupt_deferred", "interrupt_once", "no_interrupt"]


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


def ignored_from_now() -> None:
    """SIGINT ignored for the rest of the process (on the main thread): a command whose work
    is done and recorded ends with its own status; an interrupt after that would only cut
    its report short and make a script read a finished run as an interrupted one (130),
    however late it lands (the data directory's close, the interpreter's exit)."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: signals are not its to handle
        pass


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
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):  # the handler put back takes it (interrupt_once's: ignoring
            handler(signal.SIGINT, None)  # the ones after it)
        raise KeyboardInterrupt


@contextlib.contextmanager
def interrupt_once() -> Iterator[None]:
    """SIGINT inside: the first raises KeyboardInterrupt, as by default, and the ones after
    it are ignored until the block has ended (the main thread's handler put back then): the
    clean-up the first starts (a ``finally`` in the block) is never cut short by a second,
    wherever in it the second lands."""

    def first(_signum: int, _frame: Any) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt

    with _sigint(first):
        yield
