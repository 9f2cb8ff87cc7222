"""The one output module: every byte jetlink prints goes through here.

Rules (DESIGN.md "Output and errors"):
- with ``--json`` a command prints exactly ONE JSON document on stdout (``json.dumps``,
  indent 2), errors included (``JetlinkError.to_dict()``);
- otherwise results go to stdout as Rich tables / key-value blocks / plain lines, and notices
  and errors go to stderr;
- no colour when the stream is not a terminal or NO_COLOR is set (see cli/app.py).

Rich is imported lazily inside the renderers so that ``jetlink --help`` never loads it.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date, datetime
from enum import Enum
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from jetlink.cli.app import PROG

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.cli.app import App
    from jetlink.core.errors import JetlinkError

Renderer = Callable[["App", Any], None]


# -- JSON ----------------------------------------------------------------------------------


def _json_default(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        to_json = getattr(value, "to_json", None) or getattr(value, "to_dict", None)
        return to_json() if to_json else dataclasses.asdict(value)
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def to_json(data: Any) -> str:
    """The JSON text jetlink prints: indent 2, UTF-8 kept as is, key order preserved."""
    return json.dumps(data, indent=2, ensure_ascii=False, default=_json_default)


def print_json(data: Any, *, file: Any = None) -> None:
    stream = sys.stdout if file is None else file
    stream.write(to_json(data) + "\n")
    stream.flush()


# -- the entry point of every command -----------------------------------------------------


def emit(app: App, data: Any, human: Renderer | None = None) -> None:
    """Print a command's result: one JSON document with --json, else the human rendering.

    ``human(app, data)`` renders ``data`` for a person; without it a mapping becomes a
    key/value block, a list of mappings a table, anything else one line.
    """
    if app.json:
        print_json(data)
    elif human is not None:
        human(app, data)
    else:
        render_auto(app, data)


def render_auto(app: App, data: Any) -> None:
    if isinstance(data, Mapping):
        kv_block(app, data)
    elif (
        isinstance(data, Sequence)
        and not isinstance(data, (str, bytes))
        and data
        and all(isinstance(row, Mapping) for row in data)
    ):
        columns = list(dict.fromkeys(key for row in data for key in row))
        table(app, columns, [[row.get(c) for c in columns] for row in data])
    else:
        line(app, format_value(data))


# -- human renderers ----------------------------------------------------------------------


def format_value(value: Any) -> str:
    """How a scalar looks in a table: thousands separators, short floats, '-' for none."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):  # nan / inf
            return str(value)
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.4g}" if abs(value) >= 0.001 or value == 0 else f"{value:.3e}"
    if isinstance(value, (list, tuple, set, frozenset)):
        return ", ".join(format_value(v) for v in value)
    if isinstance(value, Enum):
        return str(value.value)
    return str(value)


def line(app: App | None, text: str = "") -> None:
    """One plain line on stdout (no Rich needed)."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def notice(app: App | None, text: str) -> None:
    """One plain line on stderr: progress, summaries, hints. Never part of --json output."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def kv_block(app: App, data: Mapping[str, Any], *, title: str | None = None) -> None:
    """A key/value block (like `nats stream info`): aligned ``key: value`` lines.

    Plain text (no Rich, no trailing blanks); keys are bold on a colour terminal.
    """
    bold, reset = ("\x1b[1m", "\x1b[0m") if app.color else ("", "")
    if title:
        line(app, f"{bold}{title}{reset}")
    width = max((len(str(key)) for key in data), default=0) + 1
    for key, value in data.items():
        label = f"{key}:".ljust(width)
        line(app, f"{bold}{label}{reset}  {format_value(value)}")


def stdout_is_terminal() -> bool:
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


def table(
    app: App,
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    title: str | None = None,
    no_wrap: Iterable[str] = (),
    min_width: Mapping[str, int] | None = None,
) -> None:
    """A table with a header row; cells are plain text (no Rich markup is interpreted).

    On a terminal the table fits its width: columns named in ``no_wrap`` keep their values
    on one line, the others wrap (not below ``min_width[column]``).
    """
    from rich import box
    from rich.table import Table
    from rich.text import Text

    keep = set(no_wrap)
    widths = dict(min_width or {})
    tbl = Table(title=title, title_justify="left", box=box.ROUNDED, header_style="bold")
    for column in columns:
        tbl.add_column(
            column, no_wrap=column in keep, overflow="fold", min_width=widths.get(column)
        )
    for row in rows:
        tbl.add_row(*(Text(c if isinstance(c, str) else format_value(c)) for c in row))
    console = app.out
    if console.is_terminal:
        console.print(tbl)
    else:
        # Piped or redirected (CI logs, grep): no terminal width to fit, so rows are not
        # wrapped; each row stays on one line.
        from jetlink.cli.app import make_console

        unbounded = console.options.update(max_width=100_000)
        width = console.measure(tbl, options=unbounded).maximum
        make_console(console.file, width=max(width, console.width)).print(tbl)


# -- errors ---------------------------------------------------------------------------------


def format_error(err: JetlinkError) -> str:
    """``jetlink: error: <description> (<err_code>)``; no parenthesis when err_code is 0/absent."""
    err_code = getattr(err, "err_code", 0)
    suffix = f" ({err_code})" if err_code else ""
    return f"{PROG}: error: {err.description}{suffix}"


def print_error(app: App | None, err: JetlinkError) -> None:
    """The one function that reports a JetlinkError: JSON on stdout with --json, else stderr."""
    if app is not None and app.json:
        print_json(err.to_dict())
    else:
        notice(app, format_error(err))
