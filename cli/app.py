"""The one application object of a jetlink invocation.

The root callback (cli/root.py) builds an :class:`App` from the global options and stores it
in ``ctx.obj``; every command gets it back with :meth:`App.of`. It carries what every command
needs and nothing domain-specific: where the data lives, which cluster is addressed, whether
to print JSON, and the two output streams.

Kept import-light on purpose: this module is imported by ``jetlink --help``, so Rich is only
imported when a console is actually used (cli/console.py makes the consoles).
:meth:`App.emit` and :meth:`App.fail` hand over to cli/output.py, which renders to any
:class:`~jetlink.cli.console.Terminal` and never names App: app -> output -> console.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from jetlink.cli.console import PROG as PROG  # the name scripts/generate.py imports
from jetlink.cli.console import escaped_byte, make_console, wants_color

if TYPE_CHECKING:  # pragma: no cover
    import typer
    from rich.console import Console

    from jetlink.core.errors import JetlinkError

DEFAULT_CLUSTER = "local"
ENV_DATA_DIR = "JETLINK_DATA_DIR"
ENV_CLUSTER = "JETLINK_CLUSTER"
ENV_CONTEXT = "JETLINK_CONTEXT"
ENV_REST_URL = "JETLINK_REST_URL"
ENV_REST_TOKEN = "JETLINK_REST_TOKEN"
ENV_REST_API_KEY = "JETLINK_REST_API_KEY"
ENV_REST_API_SECRET = "JETLINK_REST_API_SECRET"
COMPLETE_VAR = "_JETLINK_COMPLETE"


class ExitCode(IntEnum):
    """The process exit statuses (DESIGN.md "Output and errors")."""

    OK = 0
    FAILED = 1  # an operation failed (JetlinkError.exit_code)
    USAGE = 2  # bad command line
    PROBLEMS = 3  # `jetlink validate` found problems
    INTERRUPTED = 130  # SIGINT / Ctrl-C


# (status, meaning) - the one list the help epilog and the man pages are built from.
EXIT_STATUSES: tuple[tuple[int, str], ...] = (
    (ExitCode.OK, "success"),
    (ExitCode.FAILED, "an operation failed"),
    (ExitCode.USAGE, "usage error"),
    (ExitCode.PROBLEMS, "validate found problems"),
    (ExitCode.INTERRUPTED, "interrupted"),
)
# The checks' own statuses (natscli's server check): the help epilog and the man pages say so.
CHECK_STATUSES = ("server check and dr check exit as natscli's checks do: 0 OK, 1 WARNING, "
                  "2 CRITICAL, 3 UNKNOWN (also for a bad command line)")


def default_data_dir(environ: dict[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME/jetlink``, or ``~/.local/share/jetlink`` when XDG_DATA_HOME is unset,
    empty or relative (core/xdg.py)."""
    from jetlink.core.xdg import home

    return home("data", environ)


@dataclass
class App:
    """Global state of one invocation: built once by the root callback, stored in ctx.obj."""

    data_dir: Path = field(default_factory=default_data_dir)
    cluster: str = DEFAULT_CLUSTER
    # The live server in force (core/live/target.py ServerTarget), None: the embedded engine.
    # Set once by the root callback from --server & co., NATS_* and the contexts.
    target: Any = None
    # Set by every command's -j/--json option (cli/options.py) before the command body runs,
    # so an error raised by the body is rendered as JSON too.
    json: bool = False
    # Set once a command has printed a JSON line (the follow commands' --json output,
    # output.json_line): an error after it is one more line, never a multi-line document.
    json_lines: bool = False
    # What the command acts on (core/backend.py Backend): opened by the root callback as a
    # resource of the invocation (closed when it ends), used through cli/common.py.
    backend: Any = None
    # The context of the command running (recorded by :meth:`of`): its name tells whether it
    # only reads, its close callbacks end with it.
    ctx: Any = None
    # Set by a command whose action only reads though its name does not say so (the Kafka
    # tools' --list / --describe, `cluster authorizer` without a change): its data directory
    # creates nothing, as a read verb's (cli/common.py READ_VERBS).
    reading: bool = False
    # Set by a command whose every action needs objects the data directory holds already
    # (kafka-mirrors: a link; kafka-acls: an authorizer): it creates nothing either, and a
    # data directory that does not exist is said to be missing (cli/common.py
    # EXISTING_VERBS).
    existing: bool = False
    # Where ``cluster`` came from when a context gave it ("the selected context dev"), for
    # the error of a cluster not found: the user did not type it
    cluster_from: str | None = None
    _out: Console | None = field(default=None, init=False, repr=False, compare=False)
    _err: Console | None = field(default=None, init=False, repr=False, compare=False)

    # -- lookup ---------------------------------------------------------------------------

    @classmethod
    def of(cls, ctx: typer.Context) -> App:
        """The App of this invocation (the one the root callback stored in ctx.obj); records
        ``ctx`` as the context of the command running. A value of the command line that is
        not UTF-8 is refused here, before the command does anything (:func:`utf8_params`)."""
        app = ctx.find_object(cls)
        if app is None:  # a command run without the root group (e.g. a sub-app in a test)
            app = cls()
            ctx.obj = app
        app.ctx = ctx
        utf8_params(ctx)
        return app

    # -- output streams -------------------------------------------------------------------

    @property
    def color(self) -> bool:
        """Whether stdout gets colour (a terminal and NO_COLOR unset)."""
        return wants_color(sys.stdout)

    @property
    def out(self) -> Console:
        """Rich console on stdout (created on first use: Rich is not imported before)."""
        if self._out is None:
            self._out = make_console(sys.stdout)
        return self._out

    @property
    def err(self) -> Console:
        """Rich console on stderr, for notices."""
        if self._err is None:
            self._err = make_console(sys.stderr)
        return self._err

    # -- the two ways a command ends ------------------------------------------------------

    def emit(self, data: Any, human: Callable[[App, Any], None] | None = None) -> None:
        """Print a command's result: one JSON document with --json, else ``human(app, data)``."""
        from jetlink.cli import output

        output.emit(self, data, human=human)

    def fail(self, err: JetlinkError) -> NoReturn:
        """Report ``err`` (the one place errors are printed) and exit with its exit code."""
        import typer

        from jetlink.cli import output

        output.print_error(self, err)
        raise typer.Exit(err.exit_code)


#: (command, parameter) whose text keeps the bytes typed, UTF-8 or not: a message's body and
#: headers, a bucket's value, a Kafka record's value
BYTES_PARAMS = frozenset({
    ("pub", "body"), ("pub", "header"), ("put", "value"), ("create", "value"),
    ("update", "value"), ("produce", "value"),
})
#: a parameter naming a file or a directory (``files``, ``data_dir``, ``command_config``...)
#: may hold any byte: a file's name is bytes (--json writes such a byte as a JSON escape)
_PATH_WORDS = ("file", "dir", "path", "output", "config")


def utf8_params(ctx: typer.Context) -> None:
    """Every other value a command was given is UTF-8 (Python holds bytes that are not as
    lone surrogates, which no name, subject or key can carry): the first one that is not
    is the usage error of :func:`argument_error`. The root's options check their own
    (--cluster, --context: their name rules; --data-dir, a path, and every Path value may
    hold any byte)."""
    if ctx.parent is None:
        return
    name = ctx.info_name or ""
    for param, value in ctx.params.items():
        if (name, param) in BYTES_PARAMS or any(w in param for w in _PATH_WORDS):
            continue
        for text in value if isinstance(value, list | tuple) else (value,):
            if isinstance(text, str):
                bad = escaped_byte(text)
                if bad is not None:
                    raise argument_error(text, bad)


def argument_error(arg: str, bad: str) -> Any:
    """The usage error of a command-line ``arg`` holding ``bad``, a byte that is not UTF-8
    (held as a lone surrogate): the argument as typed (its first 57 characters) and the
    byte."""
    from jetlink.core.errors import UsageError

    shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return UsageError(f"argument '{shown}' is not UTF-8 text (byte "
                      f"0x{ord(bad) - 0xDC00:02x}): names, subjects and keys are UTF-8")
