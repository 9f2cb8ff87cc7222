"""jetlink's command line: the root Typer app, its global options and the entry point.

Structure (hatch / natscli style):
- ``app`` is the root ``typer.Typer``; its callback takes the global options (--data-dir,
  --cluster) and builds ONE :class:`~jetlink.cli.app.App` stored in ``ctx.obj``;
- each command group lives in its own module under cli/ and exposes ``register(app)``;
  :data:`COMMANDS` lists them in the order they appear in ``--help``, with the module that
  defines each and its one-line help; a module is imported only when its command runs. To add
  a group (say ``kv``): write cli/kv.py with a ``typer.Typer`` sub-app and a ``register``
  function doing ``app.add_typer(kv_app, name="kv")``, add it to COMMANDS, then
  ``make generated`` for the completions and man pages;
- a ``JetlinkError`` raised anywhere below the root group is reported by ``App.fail`` (one
  function, cli/output.py ``print_error``) and the process exits with ``err.exit_code``;
  Ctrl-C exits 130.

Only Typer and the small cli modules are imported at start-up: command bodies import core
(and Rich, through cli/output.py) when they run, so ``jetlink --help`` stays fast.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from jetlink.cli.app import (
    COMPLETE_VAR,
    DEFAULT_CLUSTER,
    ENV_CLUSTER,
    ENV_DATA_DIR,
    EXIT_STATUSES,
    PROG,
    App,
    ExitCode,
    default_data_dir,
)

# The commands of the root, in help order: name -> (module cli/<module>.py, the one-line
# help `jetlink --help` shows). A module is imported only when its command runs (or its own
# help is asked for), so start-up does not grow with the number of commands. The module's
# ``register(app)`` defines the command; tests/test_cli_help.py checks the line below equals
# the command's own short help.
COMMANDS: dict[str, tuple[str, str]] = {
    "cluster": ("cluster", "Manage the clusters of the data directory."),
    "stream": ("stream", "Manage JetStream streams (natscli's verbs)."),
    "consumer": ("consumer", "Manage durable pull consumers."),
    "kv": ("kv", "Manage Key-Value buckets (natscli's verbs)."),
    "topic": ("topic", "Manage Kafka-style topics (kafka-topics)."),
    "group": ("group", "Manage Kafka consumer groups."),
    "links": ("links", "Manage cluster links (kafka-cluster-links)."),
    "mirrors": ("mirrors", "Manage mirror topics (kafka-mirrors)."),
    "pub": ("pub", "Publish a message to a subject."),
    "sub": ("sub", "Follow messages published on a subject."),
    "replicate": ("replicate", "Copy pending messages to mirrors and sources."),
    "dashboard": ("dashboard", "Watch replication live and act on it (TUI)."),
    "spark": ("spark", "Run bulk replication jobs on Spark."),
    "validate": ("validate", "Check stream configs and topology files."),
    "bench": ("bench", "Measure the engine's hot paths."),
}
COMMAND_MODULES: tuple[str, ...] = tuple(dict.fromkeys(m for m, _ in COMMANDS.values()))

HELP = (
    "Operate stream replication: NATS JetStream streams, mirrors, sources and KV buckets, "
    "and Kafka-style cluster links, on a local engine; bulk jobs on Spark."
)
EPILOG = "Exit status: " + ", ".join(f"{code} {meaning}" for code, meaning in EXIT_STATUSES) + "."


class JetlinkGroup(TyperGroup):
    """The root group: loads command modules on demand and reports every JetlinkError raised
    by a command through App.fail."""

    # name -> module; set per app by build_app (a subclass per app).
    lazy: dict[str, str] = {}

    def list_commands(self, ctx: Any) -> list[str]:
        eager = [n for n in super().list_commands(ctx) if n not in self.lazy]
        return [*self.lazy, *eager]

    def get_command(self, ctx: Any, name: str) -> Any:
        if name not in self.commands and name in self.lazy:
            self.commands[name] = _load_command(name, self.lazy[name])
        return super().get_command(ctx, name)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        # Short help from the registry: listing the commands imports none of them.
        limit = formatter.width - 6 - max(len(n) for n in self.list_commands(ctx))
        rows = []
        for name in self.list_commands(ctx):
            if name in self.lazy:
                rows.append((name, COMMANDS[name][1]))
            else:
                rows.append((name, self.commands[name].get_short_help_str(limit)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: typer.Context) -> Any:
        from jetlink.core.errors import JetlinkError

        try:
            return super().invoke(ctx)
        except JetlinkError as err:
            App.of(ctx).fail(err)


def _load_command(name: str, module: str) -> Any:
    """The click command ``name`` as cli/<module>.py's ``register`` defines it."""
    from typer.main import get_group

    holder = typer.Typer(rich_markup_mode=None)
    importlib.import_module(f"jetlink.cli.{module}").register(holder)
    return get_group(holder).commands[name]


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"{PROG} {version(PROG)}")
        except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
            typer.echo(f"{PROG} (not installed)")
        raise typer.Exit()


def _root(
    ctx: typer.Context,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir",
            envvar=ENV_DATA_DIR,
            metavar="DIR",
            show_default="$XDG_DATA_HOME/jetlink",
            help="Directory holding one SQLite database per cluster "
            "(without XDG_DATA_HOME: ~/.local/share/jetlink).",
        ),
    ] = None,
    cluster: Annotated[
        str,
        typer.Option(
            "--cluster",
            envvar=ENV_CLUSTER,
            metavar="NAME",
            help="Cluster the command addresses.",
        ),
    ] = DEFAULT_CLUSTER,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    # The help text of the root is HELP (given to typer.Typer), not this function's.
    ctx.obj = App(
        data_dir=data_dir.expanduser() if data_dir is not None else default_data_dir(),
        cluster=cluster,
    )


def build_app(modules: Sequence[str] = COMMAND_MODULES) -> typer.Typer:
    """A fresh root app whose commands come from the given modules (tests add more)."""
    lazy = {name: module for name, (module, _) in COMMANDS.items() if module in modules}
    root = typer.Typer(
        name=PROG,
        cls=type("JetlinkGroup", (JetlinkGroup,), {"lazy": lazy}),
        help=HELP,
        epilog=EPILOG,
        no_args_is_help=True,
        rich_markup_mode=None,  # plain click help: Rich's help renderer costs ~150 ms at start-up
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    root.callback()(_root)
    for name in modules:  # modules outside the registry (tests) are registered at once
        if name not in lazy.values():
            importlib.import_module(f"jetlink.cli.{name}").register(root)
    return root


app = build_app()


def _wants_json(args: Sequence[str]) -> bool:
    """``-j``/``--json`` anywhere before ``--``: even a usage error is then one JSON document."""
    for arg in args:
        if arg == "--":
            return False
        if arg in ("-j", "--json"):
            return True
    return False


def run(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point (``jetlink``), also ``python -m jetlink.cli.main``."""
    from typer._click.exceptions import ClickException
    from typer.exceptions import Abort
    from typer.main import get_command

    from jetlink.core.errors import JetlinkError, UsageError

    args = list(sys.argv[1:] if argv is None else argv)
    command = get_command(app)
    try:
        rv = command.main(
            args=args, prog_name=PROG, complete_var=COMPLETE_VAR, standalone_mode=False
        )
    except KeyboardInterrupt:  # outside a command (Typer maps it to 130 inside one)
        sys.exit(ExitCode.INTERRUPTED)
    except ClickException as exc:  # bad command line: exit 2 (click's own exit code)
        if _wants_json(args) and exc.exit_code == ExitCode.USAGE:
            from jetlink.cli.output import print_json

            print_json(UsageError(exc.format_message()).to_dict())
        else:
            exc.show()
        sys.exit(exc.exit_code)
    except Abort:
        print("Aborted!", file=sys.stderr)
        sys.exit(ExitCode.FAILED)
    except JetlinkError as exc:
        # Raised before the root group runs (e.g. by a global option's callback): there is
        # no App yet, so report it in human form.
        from jetlink.cli.output import print_error

        print_error(None, exc)
        sys.exit(exc.exit_code)
    # Without standalone mode click returns the code of a typer.Exit (or the command's None).
    sys.exit(rv if isinstance(rv, int) else ExitCode.OK)


if __name__ == "__main__":
    run()
