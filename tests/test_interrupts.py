"""core/interrupts.py: what a SIGINT does inside each block (signals sent to this process,
on the main thread, as Ctrl-C sends them)."""

from __future__ import annotations

import os
import signal
import time

import pytest

from jetlink.core.interrupts import interrupt_deferred, interrupt_once, no_interrupt


def _sigint() -> None:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.05)  # (the handler runs at the next bytecode boundary of the main thread)


def test_the_first_interrupt_ends_the_block_and_the_later_ones_are_ignored_in_its_cleanup():
    before = signal.getsignal(signal.SIGINT)
    cleaned = []
    with pytest.raises(KeyboardInterrupt), interrupt_once():
        try:
            _sigint()
            raise AssertionError("the first SIGINT did not interrupt")
        finally:
            _sigint()  # a second Ctrl-C, while the first one's clean-up runs: ignored
            _sigint()
            cleaned.append(True)
    assert cleaned == [True]
    assert signal.getsignal(signal.SIGINT) is before


def test_an_interrupt_held_inside_is_the_first_of_interrupt_once():
    """interrupt_deferred's held SIGINT, raised once its block ends, counts as the first:
    the ones after it are ignored until interrupt_once's block has ended."""
    cleaned = []
    with pytest.raises(KeyboardInterrupt), interrupt_once():
        try:
            with interrupt_deferred():
                _sigint()  # held while a consumer is being made
                cleaned.append("made")
        finally:
            _sigint()
            cleaned.append("cleaned")
    assert cleaned == ["made", "cleaned"]


def test_no_interrupt_ignores_and_interrupt_deferred_raises_at_the_end():
    with no_interrupt():
        _sigint()
    done = []
    with pytest.raises(KeyboardInterrupt):
        with interrupt_deferred():
            _sigint()
            done.append(True)
    assert done == [True]
