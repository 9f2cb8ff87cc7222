"""Typer option definitions shared by every command group.

Every command declares ``json_output: JsonOption = False``. The option's callback records
the flag on the invocation's App while the command line is parsed, i.e. before the command
body runs, so that an error raised by the body is rendered as JSON as well. Commands read the
flag through ``App.of(ctx).json`` (``App.emit`` does it for them); tests/test_cli_help.py
fails when a command lacks the option.
"""

from __future__ import annotations

from typing import Annotated

import typer

from jetlink.cli.app import App


def _record_json(ctx: typer.Context, value: bool) -> bool:
    if value:
        App.of(ctx).json = True
    return value


JsonOption = Annotated[
    bool,
    typer.Option(
        "--json",
        "-j",
        help="Print exactly one JSON document on stdout (errors too) instead of tables.",
        callback=_record_json,
        show_default=False,
    ),
]
