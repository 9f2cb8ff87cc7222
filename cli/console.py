"""The output streams of an invocation: the layer below cli/app.py and cli/output.py.

- :data:`PROG`, the program name (every line jetlink prints about itself starts with it);
- :func:`wants_color` and :func:`make_console`: colour only on a terminal without NO_COLOR,
  a Rich console on a stream (Rich is imported when a console is made, not before);
- :class:`Terminal`, what the renderers of cli/output.py use of an invocation: whether it
  prints JSON, whether stdout gets colour, and the two consoles (cli/app.py ``App`` is one).

cli/app.py builds on this and cli/output.py renders to it, so neither imports the other to
name it. Kept import-light: ``jetlink --help`` imports it (through cli/app.py).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

PROG = "jetlink"


class Terminal(Protocol):
    """What output is printed for: the invocation's --json flag, whether stdout gets colour,
    and the Rich consoles on stdout and stderr."""

    json: bool

    @property
    def color(self) -> bool: ...

    @property
    def out(self) -> Console: ...

    @property
    def err(self) -> Console: ...


def escaped_byte(text: str) -> str | None:
    """The first character of ``text`` holding a byte that is not UTF-8 (Python's surrogate
    escape, U+DC80..U+DCFF: an argument or a path decoded from bytes), None when there is
    none."""
    return next((c for c in text if "\udc80" <= c <= "\udcff"), None)


def wants_color(stream: Any) -> bool:
    """Colour only on a terminal and only when NO_COLOR (https://no-color.org) is unset/empty."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # closed stream
        return False


def make_console(stream: Any, *, width: int | None = None) -> Console:
    """A Rich console on ``stream``: colour only on a terminal without NO_COLOR, no markup
    or highlighting (values are printed as they are)."""
    from rich.console import Console

    color = wants_color(stream)
    return Console(
        file=stream,
        width=width,
        color_system="auto" if color else None,
        no_color=not color,
        highlight=False,
        markup=False,
        emoji=False,
        soft_wrap=False,
    )
