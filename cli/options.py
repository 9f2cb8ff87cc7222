"""Typer option definitions shared by every command group.

Every command declares ``json_output: JsonOption = False``. The option's callback records
the flag on the invocation's App while the command line is parsed, i.e. before the command
body runs, so that an error raised by the body is rendered as JSON as well. Commands read the
flag through ``App.of(ctx).json`` (``App.emit`` does it for them); tests/test_cli_help.py
fails when a command lacks the option.

The verbs that ask for confirmation declare ``force: ForceOption = False``, or
``Annotated[bool, force_option("Remove")]`` for their own help text; the verbs that read a
configuration file ``Annotated[Path | None, config_option(HELP)]``. The stream and consumer
verbs name their stream with ``StreamArg``.
"""

from __future__ import annotations

from typing import Annotated, Any

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


def force_option(verb: str = "Act") -> Any:
    """``-f/--force`` of a verb that asks for confirmation (cli/output.py ``confirm``), its
    help ``<verb> without asking for confirmation.``"""
    return typer.Option("--force", "-f", help=f"{verb} without asking for confirmation.")


ForceOption = Annotated[bool, force_option()]


def config_option(help: str) -> Any:
    """``--config FILE``: an existing file holding a JSON configuration (read with
    cli/common.py ``read_json_file``)."""
    return typer.Option(
        "--config", metavar="FILE", exists=True, dir_okay=False, help=help, show_default=False
    )


StreamArg = Annotated[
    str, typer.Argument(metavar="STREAM", help="Stream name.", show_default=False)
]
