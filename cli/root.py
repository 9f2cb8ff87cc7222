"""jetlink's command line: the root Typer app, its global options and the entry point.

Structure (hatch / natscli style):
- ``app`` is the root ``typer.Typer``; its callback takes the global options (--data-dir,
  --cluster) and builds ONE :class:`~jetlink.cli.app.App` stored in ``ctx.obj``;
- each command group lives in its own module under cli/ and exposes ``register(app)``;
  :data:`COMMANDS` lists them in the order they appear in ``--help``, with the module that
  defines each and its one-line help; a module is imported only when its command runs. To add
  a group (say ``kv``): write cli/kv.py with a ``typer.Typer`` sub-app and a ``register``
  function doing ``app.add_typer(kv_app, name="kv")``, add it to COMMANDS, then
  ``make generated`` for the completions and man pages. Within a group, a command is built
  (Typer reads its function's signature) only when it is looked up: ``jetlink kv get``
  builds ``get`` alone (``_LazyCommands``);
- the selected context (cli/context.py, core/contexts.py) fills in --data-dir and --cluster
  when neither the command line nor the environment gave them (see ``_apply_context``);
- a ``JetlinkError`` raised anywhere below the root group is reported by ``App.fail`` (one
  function, cli/output.py ``print_error``) and the process exits with ``err.exit_code``;
  Ctrl-C exits 130.

Only Typer and the small cli modules are imported at start-up: command bodies import core
(and Rich, through cli/output.py) when they run, so ``jetlink --help`` stays fast.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from jetlink.cli.app import (
    CHECK_STATUSES,
    COMPLETE_VAR,
    DEFAULT_CLUSTER,
    ENV_CLUSTER,
    ENV_CONTEXT,
    ENV_DATA_DIR,
    EXIT_STATUSES,
    PROG,
    App,
    ExitCode,
    default_data_dir,
)
from jetlink.cli.launch import (
    apply_context,
    command_error,
    has_flag,
    interrupted_job,
    wants_json,
)
from jetlink.cli.options import TIMEOUT, dir_path


def _complete_clusters(ctx: typer.Context, incomplete: str) -> list[str]:
    from jetlink.cli.completion import clusters

    return clusters(ctx, incomplete)


def _complete_contexts(ctx: typer.Context, incomplete: str) -> list[str]:
    from jetlink.cli.completion import contexts

    return contexts(ctx, incomplete)


# The commands of the root, in help order: name -> (module cli/<module>.py, the one-line
# help `jetlink --help` shows). A module is imported only when its command runs (or its own
# help is asked for), so start-up does not grow with the number of commands. The module's
# ``register(app)`` defines the command; tests/test_cli_help.py checks the line below equals
# the command's own short help.
COMMANDS: dict[str, tuple[str, str]] = {
    "cluster": ("cluster", "Manage the clusters of the data directory."),
    "context": ("context", "Manage contexts (like nats context)."),
    "stream": ("stream", "Manage JetStream streams (natscli's verbs)."),
    "consumer": ("consumer", "Manage durable pull consumers."),
    "kv": ("kv", "Manage Key-Value buckets (natscli's verbs)."),
    "topic": ("topic", "Manage Kafka-style topics (kafka-topics)."),
    "group": ("group", "Manage Kafka consumer groups."),
    "links": ("links", "Manage cluster links (kafka-cluster-links)."),
    "mirrors": ("mirrors", "Manage mirror topics (kafka-mirrors)."),
    "kafka-cluster-links": ("kafka_tools", "Cluster links, kafka-cluster-links syntax."),
    "kafka-mirrors": ("kafka_tools", "Mirror topics, kafka-mirrors syntax."),
    "acls": ("acls", "Manage the ACLs of a Kafka cluster."),
    "kafka-acls": ("acls", "ACLs, kafka-acls syntax."),
    "serve": ("serve", "Serve the Confluent REST API v3 of links."),
    "pub": ("pub", "Publish a message to a subject."),
    "sub": ("sub", "Follow messages published on subjects."),
    "counter": ("counter", "Access distributed counters (ADR-49)."),
    "replicate": ("replicate", "Copy pending messages to mirrors and sources."),
    "positions": ("positions", "Sync origin consumers' positions to mirrors."),
    "dashboard": ("dashboard", "Watch replication live and act on it (TUI)."),
    "spark": ("spark", "Run bulk replication jobs on Spark."),
    "server": ("server_check", "Check streams, consumers, buckets (natscli)."),
    "dr": ("dr", "Failover readiness; a region out and back."),
    "validate": ("validate", "Check stream configs and topology files."),
    "apply": ("apply", "Apply a topology file (data dir or servers)."),
    "export": ("apply", "Write a topology (data dir or servers)."),
    "bench": ("bench", "Measure the engine's hot paths."),
    "demo": ("demo", "Run the disaster-recovery drill, narrated."),
}
# natscli's aliases (fisk's Alias()) of the verbs jetlink has, and the Confluent CLI's
# ``list`` of the Kafka groups (confluent kafka link|mirror|topic|consumer group|acl list):
# group -> alias -> command ("" is the root). They resolve like the command's own name, are
# left out of the command lists and completion, and each group's help names them
# (``_alias_help``).
ALIASES: dict[str, dict[str, str]] = {
    "": {"str": "stream", "st": "stream", "ms": "stream", "s": "stream",
         "con": "consumer", "obs": "consumer", "c": "consumer",
         "srv": "server", "sys": "server", "system": "server", "ctx": "context",
         "publish": "pub", "subscribe": "sub", "ctr": "counter"},
    "stream": {"create": "add", "new": "add", "list": "ls", "l": "ls", "nfo": "info",
               "i": "info", "update": "edit", "delete": "rm", "del": "rm", "cp": "copy",
               "subj": "subjects", "query": "find"},
    "consumer": {"create": "add", "new": "add", "update": "edit", "list": "ls",
                 "nfo": "info", "delete": "rm", "del": "rm", "cp": "copy", "query": "find"},
    "counter": {"g": "get", "v": "view", "incr": "increment", "inc": "increment",
                "i": "increment", "decr": "decrement", "dec": "decrement", "d": "decrement",
                "l": "list", "ls": "list"},
    "kv": {"new": "add", "view": "info", "list": "ls"},
    "context": {"create": "add", "save": "add", "list": "ls", "l": "ls", "remove": "rm",
                "switch": "select", "set": "select", "v": "info", "view": "info"},
    "links": {"list": "ls"},
    "mirrors": {"list": "ls"},
    "topic": {"list": "ls"},
    "group": {"list": "ls"},
    "acls": {"list": "ls"},
}
KAFKA_ALIAS_GROUPS = ("links", "mirrors", "topic", "group", "acls")


def _alias_help(group: str) -> str:
    """The paragraph of a group's help naming its aliases (``ALIASES``), e.g. ``Aliases
    (natscli's): jetlink kv ...: none; add: new; ...``."""
    by: dict[str, list[str]] = {}
    for alias, command in ALIASES.get(group, {}).items():
        by.setdefault(command, []).append(alias)
    parts = [f"{c}: {', '.join(a)}" for c, a in by.items()]
    own = [alias for alias, command in ALIASES[""].items() if command == group]
    if own:
        parts.insert(0, f"{group}: {', '.join(own)}")
    whose = "the Confluent CLI's" if group in KAFKA_ALIAS_GROUPS else "natscli's"
    return f"Aliases ({whose}): " + "; ".join(parts) + "." if parts else ""


# ctx.meta key: the arguments after the global options (JetlinkGroup.invoke records them).
ARGS_KEY = "jetlink.args"
COMMAND_MODULES: tuple[str, ...] = tuple(dict.fromkeys(m for m, _ in COMMANDS.values()))

HELP = (
    "Operate stream replication: NATS JetStream streams, mirrors, sources and KV buckets, "
    "and Kafka-style cluster links, on a local engine; bulk jobs on Spark."
)
EPILOG = ("Exit status: " + ", ".join(f"{code} {meaning}" for code, meaning in EXIT_STATUSES)
          + f"; {CHECK_STATUSES}.")


class JetlinkGroup(TyperGroup):
    """The root group: loads command modules on demand and reports every JetlinkError raised
    by a command through App.fail."""

    # name -> module; set per app by build_app (a subclass per app).
    lazy: dict[str, str] = {}

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        for param in self.params:  # the global options: one value each (_one_value)
            _one_value(param)
        result: list[str] = super().parse_args(ctx, args)
        return result

    def list_commands(self, ctx: Any) -> list[str]:
        eager = [n for n in super().list_commands(ctx) if n not in self.lazy]
        return [*self.lazy, *eager]

    def get_command(self, ctx: Any, name: str) -> Any:
        if name not in self.commands and name not in self.lazy:
            name = ALIASES[""].get(name, name)
        if name not in self.commands and name in self.lazy:
            self.commands[name] = _load_command(name, self.lazy[name])
        return super().get_command(ctx, name)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """Typer's, with "Did you mean" drawn from every command, the ones not loaded yet
        included (Typer looks only at the loaded ones)."""
        try:
            return super().resolve_command(ctx, args)
        except click_exception() as err:
            message = getattr(err, "message", "")
            if args and message.startswith("No such command") and "Did you mean" not in message:
                from difflib import get_close_matches

                close = get_close_matches(args[0], self.list_commands(ctx))
                if close:
                    err.message = (f"{message.rstrip('.')}. Did you mean "  # type: ignore[attr-defined]
                                   f"{', '.join(repr(m) for m in close)}?")
            raise

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
        args = [*ctx._protected_args, *ctx.args]  # the command's, before invoke consumes them
        ctx.meta[ARGS_KEY] = args
        try:
            return super().invoke(ctx)
        except Exception as exc:  # noqa: BLE001 - sorted below: ours, the storage's, a bug
            if interrupted_job(exc):
                raise KeyboardInterrupt from None  # (exit 130, nothing printed)
            app = App.of(ctx)
            err = command_error(exc, app.data_dir, args)
            if err is None:
                raise
            # Raised by the root callback (e.g. an unknown context), before the command's
            # -j/--json was parsed: look for it as run() does for usage errors.
            if not app.json and wants_json(args):
                app.json = True
            if is_check(args) and err.exit_code in (ExitCode.USAGE, ExitCode.FAILED):
                # a check that could not check (bad command line, a missing data
                # directory, an --outfile it can not write): UNKNOWN, never a WARNING's 1
                err.exit_code = check_unknown()
            _held_elsewhere(app, err)
            _cluster_origin(app, err)
            app.fail(err)


def _cluster_origin(app: App, err: Any) -> None:
    """The addressed cluster not found, when a context named it (not the command line):
    said where it came from, and how to address another."""
    if (app.cluster_from is None or getattr(err, "field", None) != "cluster"
            or err.description != f"cluster {app.cluster} not found"):
        return
    said = (f"cluster {app.cluster} is the one of {app.cluster_from}: give --cluster NAME "
            "to address another")
    err.detail = f"{err.detail}; {said}" if err.detail else said


# what err.missing names, as said to people
_KIND_WORDS = {"stream": "stream", "link": "cluster link", "topic": "topic",
               "group": "consumer group"}


def _held_elsewhere(app: App, err: Any) -> None:
    """A stream (10059), cluster link, topic or consumer group not found where the command
    looked (``err.missing``), that another cluster of the data directory holds (a forgotten
    or wrong --cluster): said in the error's detail, with the option that reaches it
    (core/backend.py ``holders``): over a close name suggested here, which it replaces."""
    from jetlink.core.errors import ApiError, held_by

    missing = getattr(err, "missing", None)
    if (missing is None and isinstance(err, ApiError) and err.err_code == 10059
            and err.description == "stream not found" and err.detail):
        head, _, rest = err.detail.partition("; ")
        if head and ":" not in head and (not rest or rest.startswith("did you mean")):
            missing = ("stream", head)
    if missing is None or app.backend is None:
        return
    kind, name = missing
    # a close name here was suggested (did you mean): the exact name elsewhere wins over it
    # (a destructive verb must not steer to another object)
    fuzzy = err.detail is not None and "did you mean" in err.detail
    if err.detail not in (None, name) and not fuzzy:
        return
    holders = app.backend.holders(name, kind)
    if holders:
        said = (f"{held_by(holders, _KIND_WORDS[kind], name)}: give --cluster {holders[0]} "
                "(before the command)")
        base = err.detail
        if fuzzy:  # the suggestion dropped: the name as the error gave it, when it did
            base = name if (err.detail or "").startswith(f"{name};") else None
        err.detail = f"{base}; {said}" if base else said


def _load_command(name: str, module: str) -> Any:
    """The click command ``name`` as cli/<module>.py's ``register`` defines it. When it is
    a group (``kv``, ``stream``...), its commands are built from their functions when they
    are looked up (:class:`_LazyCommands`): ``jetlink kv get`` builds ``get`` only."""
    from typer.main import get_command_from_info, get_command_name, get_group

    holder = typer.Typer(rich_markup_mode=None)
    importlib.import_module(f"jetlink.cli.{module}").register(holder)
    sub = next((g.typer_instance for g in holder.registered_groups
                if g.name == name and g.typer_instance is not None), None)
    if sub is None or not sub.registered_commands:
        return _named(strict_ints(get_group(holder).commands[name]), name)
    infos = {(info.name or get_command_name(info.callback.__name__)): info
             for info in sub.registered_commands if info.callback is not None}
    if len(infos) != len(sub.registered_commands):  # pragma: no cover - typer refuses them
        return _named(strict_ints(get_group(holder).commands[name]), name)
    registered, sub.registered_commands = sub.registered_commands, []
    try:
        group = get_group(holder).commands[name]  # its sub-groups built, no command yet
    finally:
        sub.registered_commands = registered

    def build(info: Any) -> Any:
        return strict_ints(get_command_from_info(
            info, pretty_exceptions_short=holder.pretty_exceptions_short,
            rich_markup_mode=holder.rich_markup_mode))

    group.commands = _LazyCommands(group.commands, infos, build, ALIASES.get(name))
    return _named(strict_ints(group), name)


# An integer typed on the command line: ASCII digits with an optional sign, as Go's
# strconv and Kafka read one (core/numbers.py's rule); Python's int() also takes "1_000",
# " 5 " and other scripts' digits ("١٠"), which no server or tool reads as a number.
_ASCII_INT = re.compile(r"[+-]?[0-9]+")
_DIGITS_PAST_ANY_RANGE = 40  # (uint64's largest has 20 digits)


def _one_value(param: Any) -> None:
    """An option that takes one value, given more than once on the command line with
    different values, is a usage error naming the values (Click keeps the last silently:
    ``--link L --link R`` acted on R; natscli's flag parser says a flag "cannot be
    repeated", the Kafka tools' joptsimple finds "multiple arguments" where one was asked
    for)."""
    if getattr(param, "param_type_name", "") != "option" or getattr(param, "_jetlink_once",
                                                                     False):
        return
    if param.is_flag and getattr(param, "is_bool_flag", False) and param.secondary_opts \
            and not param.multiple and not param.count:
        _one_of_pair(param)
        return
    if param.multiple or param.count or param.is_flag or param.nargs != 1:
        return

    def add_to_parser(parser: Any, ctx: Any, _p: Any = param) -> None:
        parser.add_option(obj=_p, opts=_p.opts, dest=_p.name, action="append", nargs=1)

    consume = param.consume_value

    def consume_value(ctx: Any, opts: Any, _p: Any = param, _consume: Any = consume) -> Any:
        given = opts.get(_p.name)
        if isinstance(given, list):
            if len(set(given)) > 1:  # (the same value twice says nothing else)
                from jetlink.core.errors import clip

                shown = ", ".join(clip(str(v)) for v in given)
                raise typer.BadParameter(f"given {len(given)} times ({shown}): it takes one "
                                         "value", ctx=ctx, param=_p)
            opts = {**opts, _p.name: given[0]}
        return _consume(ctx, opts)

    param.add_to_parser = add_to_parser
    param.consume_value = consume_value
    param._jetlink_once = True


def _one_of_pair(param: Any) -> None:
    """A boolean flag and its negation both given (``--allow-rollup --no-allow-rollup``)
    is a usage error naming both (Click keeps the last silently; natscli's flag parser says
    the flag "cannot be repeated"); the same spelling twice says nothing else."""

    def add_to_parser(parser: Any, ctx: Any, _p: Any = param) -> None:
        parser.add_option(obj=_p, opts=_p.opts, dest=_p.name, action="append_const",
                          const=True)
        parser.add_option(obj=_p, opts=_p.secondary_opts, dest=_p.name,
                          action="append_const", const=False)

    consume = param.consume_value

    def consume_value(ctx: Any, opts: Any, _p: Any = param, _consume: Any = consume) -> Any:
        given = opts.get(_p.name)
        if isinstance(given, list):
            if len(set(given)) > 1:
                both = f"{_p.opts[0]} and {_p.secondary_opts[0]}"
                raise typer.BadParameter(f"{both} given together: give one of them",
                                         ctx=ctx, param=_p)
            opts = {**opts, _p.name: given[0]}
        return _consume(ctx, opts)

    param.add_to_parser = add_to_parser
    param.consume_value = consume_value
    param._jetlink_once = True


def _plain_usage(param: Any) -> None:
    """A required argument in a usage line as Click, natscli's help and jetlink's reference
    pages write it (``TOPIC``), not as Typer's ``{TOPIC}``, which reads as a set of choices."""
    if getattr(param, "param_type_name", "") != "argument" or \
            getattr(param, "_jetlink_plain", False):
        return
    made = param.make_metavar

    def make_metavar(ctx: Any, **kw: Any) -> str:
        var = made(ctx, **kw)
        return var[1:-1] if var.startswith("{") and var.endswith("}") else var

    param.make_metavar = make_metavar
    param._jetlink_plain = True


def strict_ints(command: Any) -> Any:
    """``command`` (and the sub-commands built with it) reading its integer parameters as
    :data:`_ASCII_INT` says: anything else is the parameter type's own "is not a valid
    integer" usage error. Each type object is wrapped once (Click shares them). An option
    of one value given twice is refused (:func:`_one_value`)."""
    from jetlink.core.numbers import INT64_MAX, INT64_MIN, UINT64_MAX

    whole_64 = ((INT64_MIN, INT64_MAX), (0, UINT64_MAX))  # int64's and uint64's ranges
    for param in getattr(command, "params", ()):
        _one_value(param)
        _plain_usage(param)
        ptype = param.type
        if getattr(ptype, "name", "") in ("int", "int range", "integer", "integer range") and \
                not getattr(ptype, "_jetlink_strict", False):
            convert = ptype.convert
            describe = getattr(ptype, "_describe_range", None)
            words = describe() if describe is not None else None
            # a 64-bit type's whole range (natscli's int and uint64 flags): checked and named
            # in the refusal, not printed in the help, where it tells an operator nothing
            whole = (getattr(ptype, "min", None), getattr(ptype, "max", None)) in whole_64

            def strict(value: Any, p: Any, ctx: Any, _t: Any = ptype,
                       _convert: Any = convert, _words: str | None = words,
                       _whole: bool = whole) -> Any:
                if isinstance(value, str) and not _ASCII_INT.fullmatch(value):
                    _t.fail(f"{value!r} is not a valid integer.", p, ctx)
                if isinstance(value, str) and \
                        len(value.lstrip("+-").lstrip("0")) > _DIGITS_PAST_ANY_RANGE:
                    # past any int64 / uint64 (and Python's 4,300-digit int() limit): the
                    # range's own words, the value clipped
                    from jetlink.core.errors import clip

                    bound = getattr(_t, "min" if value.startswith("-") else "max", None)
                    _t.fail(f"{clip(value)} is not in the range {_words}."
                            if _words is not None and bound is not None
                            else f"{clip(value)} is past any number this option takes.", p,
                            ctx)
                if _whole and isinstance(value, str) and \
                        not _t.min <= int(value) <= _t.max:
                    _t.fail(f"{int(value)} is not in the range {_words}.", p, ctx)
                return _convert(value, p, ctx)

            ptype.convert = strict
            ptype._jetlink_strict = True
            if whole:
                ptype._describe_range = lambda: ""  # (the help's: nothing to print)
    commands = getattr(command, "commands", None)
    if isinstance(commands, dict):
        # (of a lazy group: its sub-groups, built with it; its commands are made strict as
        # they are built)
        for sub in list(dict.values(commands)):
            strict_ints(sub)
    return command


def _named(command: Any, name: str) -> Any:
    """``command`` with its natscli aliases named at the end of its help (``_alias_help``)."""
    named = _alias_help(name)
    if named:
        command.help = f"{command.help}\n\n{named}"
    return command


class _LazyCommands(dict):  # type: ignore[type-arg]
    """A group's ``commands`` (name -> click command) whose commands are built when first
    looked up (``get``, ``[]``, ``in``); anything that walks them all (``--help``,
    completion, ``len``) builds them all, in the order typer would have: commands as
    registered, then sub-groups. Building one (Typer reads the function's signature and
    annotations) costs about 0.5 ms: a group of 17 commands paid ~10 ms for every one of its
    verbs (docs/benchmarks.md, start-up)."""

    def __init__(self, built: dict[str, Any], infos: dict[str, Any],
                 build: Callable[[Any], Any], aliases: dict[str, str] | None = None) -> None:
        super().__init__(built)
        self._aliases = aliases or {}  # natscli's names for commands (ALIASES), for get only
        self._infos = dict(infos)
        self._order = [*infos, *(n for n in built if n not in infos)]
        self._build = build
        self._whole = False  # every command built and in typer's order

    def _load(self, name: Any) -> None:
        info = self._infos.pop(name, None) if isinstance(name, str) else None
        if info is not None:
            dict.__setitem__(self, name, self._build(info))

    def _load_all(self) -> None:
        if self._whole:
            return
        self._whole = True
        for name in list(self._infos):
            self._load(name)
        items = {n: dict.__getitem__(self, n) for n in self._order if dict.__contains__(self, n)}
        extra = {n: c for n, c in dict.items(self) if n not in items}  # added since
        dict.clear(self)
        dict.update(self, items)
        dict.update(self, extra)

    def __getitem__(self, name: Any) -> Any:
        self._load(name)
        return dict.__getitem__(self, name)

    def get(self, name: Any, default: Any = None) -> Any:
        """The command ``name``, or the one it is an alias of (click looks commands up
        with ``get``; listing them never shows an alias)."""
        self._load(name)
        if not dict.__contains__(self, name) and name in self._aliases:
            name = self._aliases[name]
            self._load(name)
        return dict.get(self, name, default)

    def __contains__(self, name: object) -> bool:
        self._load(name)
        return dict.__contains__(self, name)

    def __setitem__(self, name: Any, command: Any) -> None:
        self._infos.pop(name, None)
        dict.__setitem__(self, name, command)

    def __delitem__(self, name: Any) -> None:
        self._load(name)
        dict.__delitem__(self, name)

    def pop(self, name: Any, *default: Any) -> Any:
        self._load(name)
        return dict.pop(self, name, *default)

    def __iter__(self) -> Iterator[Any]:
        self._load_all()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._load_all()
        return dict.__len__(self)

    def __eq__(self, other: object) -> bool:
        self._load_all()
        return dict.__eq__(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        self._load_all()
        return dict.__repr__(self)

    def keys(self) -> Any:
        self._load_all()
        return dict.keys(self)

    def values(self) -> Any:
        self._load_all()
        return dict.values(self)

    def items(self) -> Any:
        self._load_all()
        return dict.items(self)

    def copy(self) -> dict[str, Any]:
        self._load_all()
        return dict(dict.items(self))


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"{PROG} {version(PROG)}")
        except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
            typer.echo(f"{PROG} (not installed)")
        raise typer.Exit()


def _cluster_name(value: str, ctx: typer.Context) -> None:
    """--cluster (or $JETLINK_CLUSTER) checked by core's rule of cluster names before any
    command runs: a bad one is a usage error (exit 2), as every bad value of a command line,
    naming where it came from."""
    from jetlink.core.errors import JetlinkError
    from jetlink.core.store.datadir import validate_cluster_name

    try:
        validate_cluster_name(value, field="cluster")
    except JetlinkError as err:
        from jetlink.cli.common import usage

        raise usage(f"--cluster{_from_env(ctx, 'cluster', 'JETLINK_CLUSTER')}: "
                    f"{err.description}") from None


def _from_env(ctx: typer.Context, name: str, var: str) -> str:
    """`` (from VAR)`` when the root option ``name`` took its value from ``var`` (an error
    naming the flag would send the reader to a command line that has none), else ''."""
    source = ctx.get_parameter_source(name)
    return f" (from {var})" if getattr(source, "name", "") == "ENVIRONMENT" else ""


def _root(
    ctx: typer.Context,
    data_dir: Annotated[
        str | None,
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
            autocompletion=_complete_clusters,
        ),
    ] = DEFAULT_CLUSTER,
    context: Annotated[
        str | None,
        typer.Option(
            "--context",
            envvar=ENV_CONTEXT,
            metavar="NAME",
            show_default="the selected context",
            help="Context giving the data directory and cluster when neither their option "
            "nor their environment variable does (jetlink context).",
            autocompletion=_complete_contexts,
        ),
    ] = None,
    server: Annotated[
        str | None,
        typer.Option("--server", "-s", metavar="URL[,URL...]", rich_help_panel="Live server",
                     show_default="NATS_URL",
                     help="NATS server URLs: run the verbs on this live server instead of the "
                     "embedded engine."),
    ] = None,
    creds: Annotated[
        str | None,
        typer.Option("--creds", metavar="FILE", show_default="NATS_CREDS",
                     help="User credentials file (JWT and seed)."),
    ] = None,
    nkey: Annotated[
        str | None,
        typer.Option("--nkey", metavar="FILE", show_default="NATS_NKEY",
                     help="User NKEY seed file."),
    ] = None,
    user: Annotated[
        str | None,
        typer.Option("--user", metavar="USER", show_default="NATS_USER",
                     help="Username or token."),
    ] = None,
    password: Annotated[
        str | None,
        typer.Option("--password", metavar="PASSWORD", show_default="NATS_PASSWORD",
                     help="Password."),
    ] = None,
    tlscert: Annotated[
        str | None,
        typer.Option("--tlscert", metavar="FILE", show_default="NATS_CERT",
                     help="TLS client certificate file."),
    ] = None,
    tlskey: Annotated[
        str | None,
        typer.Option("--tlskey", metavar="FILE", show_default="NATS_KEY",
                     help="TLS client private key file."),
    ] = None,
    tlsca: Annotated[
        str | None,
        typer.Option("--tlsca", metavar="FILE", show_default="NATS_CA",
                     help="TLS certificate authority chain file."),
    ] = None,
    tlsfirst: Annotated[
        bool,
        typer.Option("--tlsfirst",
                     help="Perform the TLS handshake first (server tls handshake_first)."),
    ] = False,
    js_domain: Annotated[
        str | None,
        typer.Option("--js-domain", metavar="DOMAIN", help="JetStream domain."),
    ] = None,
    js_api_prefix: Annotated[
        str | None,
        typer.Option("--js-api-prefix", metavar="PREFIX",
                     help="JetStream API prefix (instead of $JS.API)."),
    ] = None,
    inbox_prefix: Annotated[
        str | None,
        typer.Option("--inbox-prefix", metavar="PREFIX", help="Custom inbox prefix."),
    ] = None,
    timeout: Annotated[
        str | None,
        typer.Option("--timeout", metavar="DURATION", parser=TIMEOUT,
                     show_default="5s (NATS_TIMEOUT)",
                     help="Time to wait on responses from the server."),
    ] = None,
    nats_context: Annotated[
        str | None,
        typer.Option("--nats-context", metavar="NAME", show_default="NATS_CONTEXT",
                     help="natscli context to take the server settings from "
                     "(~/.config/nats/context/NAME.json); natscli's selected context is "
                     "never used unless named."),
    ] = None,
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
    from jetlink.cli.common import open_backend, target_in_force

    given_dir = dir_path(data_dir, "--data-dir" + _from_env(ctx, "data_dir", "JETLINK_DATA_DIR")
                         ) if data_dir is not None else None
    if cluster != DEFAULT_CLUSTER and not ctx.resilient_parsing:
        _cluster_name(cluster, ctx)
    if not ctx.resilient_parsing:
        from jetlink.cli.common import refuse_empty_target

        refuse_empty_target(ctx, "server", server, "--server",
                            "the server URLs (nats://host:port)")
    app = ctx.obj = App(
        data_dir=given_dir if given_dir is not None else default_data_dir(),
        cluster=cluster,
    )
    # The context verbs manage the context files themselves: they must work whatever the
    # context in force says (even when its file is broken or its data directory missing);
    # a command's --help needs no context either.
    if (
        ctx.invoked_subcommand != "context"
        and not ctx.resilient_parsing
        and not has_flag(ctx.meta.get(ARGS_KEY, ()), ("-h", "--help"))
    ):
        _apply_context(ctx, app, context)
        app.target = target_in_force(ctx)
    # What the command acts on, opened on first use and closed (after the post-write
    # replication step) when the invocation ends.
    app.backend = ctx.with_resource(open_backend(app))


def _apply_context(ctx: typer.Context, app: App, name: str | None) -> None:
    """Precedence of --data-dir and --cluster: the command line, then the environment
    (JETLINK_DATA_DIR, JETLINK_CLUSTER), then the context in force, then the defaults.

    The context in force is --context NAME, else $JETLINK_CONTEXT, else the selected one
    (``jetlink context select``), else none. Its files are read only when a value is still
    unset or a context was named (so a mistyped name is reported even then)."""
    from jetlink.cli.common import given

    need_dir = not given(ctx, "data_dir")
    need_cluster = not given(ctx, "cluster")
    if name is None and not (need_dir or need_cluster):
        return
    from jetlink.cli.common import context_in_force, named_context, parameter_source

    # reads the root's --context (``name``)
    found = context_in_force(ctx)
    if (found is not None and parameter_source(ctx, "data_dir") == "COMMANDLINE"
            and named_context(ctx)[0] is None):
        # A data directory on the command line sets a context that is only selected aside
        # (cli/common.py ``target_in_force`` says so): its cluster is one of its own data
        # directory, not of the one given.
        need_cluster = False
    apply_context(app, found, need_dir=need_dir, need_cluster=need_cluster)


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


def _show_click_error(exc: Any, command: Any = None, args: Sequence[str] = ()) -> None:
    """A bad command line in jetlink's one error format (``jetlink: error: ...``, as every
    other error), then where to look: ``Try 'jetlink stream view -h' for help.`` (for an
    error raised without the command's context, an option missing its value, the command
    the line names)."""
    from jetlink.cli.output import format_error
    from jetlink.core.errors import UsageError

    print(format_error(UsageError(clipped_message(exc))), file=sys.stderr)
    ctx = getattr(exc, "ctx", None)
    path = ctx.command_path if ctx is not None else _command_path(command, args)
    if path:
        print(f"Try '{path} -h' for help.", file=sys.stderr)


def _command_path(command: Any, args: Sequence[str]) -> str:
    """``jetlink dr watch`` for a line naming that command (its words that are commands,
    aliases resolved as the groups resolve them); "" when it names none."""
    if command is None:
        return ""
    path, cur = [PROG], command
    ctx = command.context_class(command, info_name=PROG)
    for word in command_words(command, args):
        sub = cur.get_command(ctx, word) if hasattr(cur, "get_command") else None
        if sub is None:
            break
        path.append(word)
        ctx, cur = sub.context_class(sub, parent=ctx, info_name=word), sub
    return " ".join(path) if len(path) > 1 else ""


def clipped_message(exc: Any) -> str:
    """Click's message with each value longer than core/errors.py ``CLIP_OVER`` characters
    (a 5,000-digit number, a pasted blob) quoted by its start and its length, as every
    jetlink error quotes one (``clip``)."""
    import re

    from jetlink.core.errors import clip

    # a quoted value is cut inside its quotes, so the length given is the value's own
    text = re.sub(r"'([^'\s]{101,})'|\S{101,}",
                  lambda m: f"'{clip(m.group(1))}'" if m.group(1) else clip(m.group(0)),
                  str(exc.format_message()))
    return (_fixed_at_creation(exc, text) or _swallowed_command(exc)
            or text + _global_hint(exc, text))


def _swallowed_command(exc: Any) -> str | None:
    """``jetlink --cluster stream ls``: the root option took the command's name as its value
    and the next word is then an unknown command: said so, rather than Click's "No such
    command 'ls'. Did you mean 'acls'?"."""
    ctx = getattr(exc, "ctx", None)
    if ctx is None or ctx.parent is not None or "No such command" not in exc.format_message():
        return None
    names = set(ctx.command.list_commands(ctx)) if hasattr(ctx.command, "list_commands") \
        else set()
    for param in ctx.command.params:
        value = ctx.params.get(param.name or "")
        if isinstance(value, str) and value in names and getattr(param, "opts", None):
            flag = max(param.opts, key=len)
            return (f"{flag} took {value!r} as its value: give it one "
                    f"(jetlink {flag} VALUE {value} ...)")
    return None


# Options of stream add that stream edit does not take: what the server fixes when a stream
# is created (nats-server's stream update checks refuse a change of storage or first
# sequence), so natscli's edit has no flag for them either
_FIXED_AT_CREATION = {"--storage": "a stream's storage",
                      "--first-sequence": "a stream's first sequence"}
# natscli: "cannot edit mirrors, or sources using the CLI, use --config instead"
_EDITED_BY_CONFIG = {
    "--mirror": "a stream's mirror is fixed when it is created (the server refuses a change "
                "of it; jetlink stream promote makes a mirror a stream of its own)",
    "--source": "a stream's sources are edited with the whole config: jetlink stream edit "
                "STREAM --config FILE (stream info STREAM --json, its config changed)",
    "--no-mirror": "natscli's edit that removes a stream's mirror is jetlink stream promote "
                   "STREAM (the mirror then takes writes as a stream of its own)"}
# kv edit: natscli's --no-mirror makes a KV mirror a bucket of its own
_KV_EDITED_BY = {"--no-mirror": "natscli's edit that removes a bucket's mirror is jetlink kv "
                                "promote BUCKET (the mirror then takes writes as a bucket of "
                                "its own)",
                 "--storage": "a bucket's storage is fixed when it is created; kv edit can "
                              "not change it",
                 "--mirror": "a bucket's mirror is fixed when it is created (jetlink kv "
                             "promote makes a KV mirror a bucket of its own)",
                 "--mirror-domain": "a bucket's mirror is fixed when it is created (jetlink "
                                    "kv promote makes a KV mirror a bucket of its own)",
                 "--keys": "a KV mirror's keys are fixed when it is created",
                 "--writable": "whether an aggregate takes writes is fixed when it is created"}


def _fixed_at_creation(exc: Any, text: str) -> str | None:
    """``stream edit --storage``: said to be fixed at creation, rather than Click's closest
    options (``--force, --tag``)."""
    flag = getattr(exc, "option_name", None)
    ctx = getattr(exc, "ctx", None)
    path = str(getattr(ctx, "command_path", "") or "")
    if type(exc).__name__ == "NoSuchOption" and path.endswith("kv edit") \
            and flag in _KV_EDITED_BY:
        return f"No such option: {flag}: {_KV_EDITED_BY[flag]}"
    if type(exc).__name__ != "NoSuchOption" or not path.endswith("stream edit"):
        return None
    if flag in _EDITED_BY_CONFIG:
        return f"No such option: {flag}: {_EDITED_BY_CONFIG[flag]}"
    if flag not in _FIXED_AT_CREATION:
        return None
    return (f"No such option: {flag}: {_FIXED_AT_CREATION[flag]} is fixed when it is "
            "created; stream edit can not change it")


# natscli's stream add / edit / copy and kv add / edit take --cluster as the placement
# cluster (their aliases too: ALIASES); stream report takes it as its own filter
_PLACED_VERBS = {"stream": ("add", "edit", "copy"), "kv": ("add", "edit")}


def _placement_cluster(flag: str, exc: Any) -> None:
    """``stream add ... --cluster east``: natscli's placement cluster, which jetlink's global
    --cluster (the data directory's cluster; a live server takes none) is not: refused,
    naming both, rather than moved forward and placing nothing."""
    from jetlink.core.errors import UsageError

    path = str(getattr(getattr(exc, "ctx", None), "command_path", "") or "").split()
    if flag != "--cluster" or len(path) < 2 or path[-2] not in _PLACED_VERBS:
        return
    group, verb = path[-2], ALIASES[path[-2]].get(path[-1], path[-1])
    before = ("jetlink's --cluster, the data directory's cluster, goes before the command "
              f"(jetlink --cluster NAME {group} {path[-1]} ...)")
    if verb not in _PLACED_VERBS[group]:
        return
    raise UsageError(f"--cluster after {group} {path[-1]}: natscli's placement cluster is "
                     "--cluster-placement NAME here (placement.cluster); " + before,
                     field="cluster")


def _global_moved_forward(command: Any, args: list[str], exc: Any) -> list[str] | None:
    """natscli's global flags go anywhere (``nats stream ls -s URL``): a root option
    (``-s``, ``--context``, ``--js-domain``, ``--cluster``...) the command refused as
    unknown (it has no option of that name, so nothing ran: the refusal is the parser's)
    is moved, with its value, before the command words; None when ``exc`` is not that."""
    flag = getattr(exc, "option_name", None)
    if type(exc).__name__ != "NoSuchOption" or not flag:
        return None
    param = next((p for p in command.params if flag in getattr(p, "opts", ())
                  or flag in getattr(p, "secondary_opts", ())), None)
    if param is None:
        return None
    _placement_cluster(flag, exc)
    takes_value = not getattr(param, "is_flag", False) and not getattr(param, "count", False)
    start = next((i for i, a in enumerate(args) if not a.startswith("-")), len(args))
    for i in range(start, len(args)):
        if args[i] == "--":
            return None  # (after --: an argument, not an option)
        if args[i].startswith(flag + "="):
            return [args[i], *args[:i], *args[i + 1:]]
        if args[i] == flag:
            if takes_value:
                if i + 1 >= len(args):  # the last word, its value missing: said as such
                    from jetlink.core.errors import UsageError

                    raise UsageError(f"{flag} was given without its value: give it one "
                                     f"({PROG} {' '.join(args[:i])} {flag} VALUE)")
                return [args[i], args[i + 1], *args[:i], *args[i + 2:]]
            return [args[i], *args[:i], *args[i + 1:]]
    return None


def _json_moved_back(args: list[str], exc: Any) -> list[str] | None:
    """``jetlink -j stream ls``: every command takes -j/--json, the root does not; given
    before the command words it is moved after them (natscli's flags go anywhere). None
    when ``exc`` is not the root's refusal of it."""
    flag = getattr(exc, "option_name", None)
    ctx = getattr(exc, "ctx", None)
    if type(exc).__name__ != "NoSuchOption" or flag not in ("-j", "--json") \
            or ctx is None or ctx.parent is not None or flag not in args:
        return None
    i = args.index(flag)
    rest = [*args[:i], *args[i + 1:]]
    end = rest.index("--") if "--" in rest else len(rest)
    moved = [*rest[:end], flag, *rest[end:]]
    return moved if moved != args else None  # (no command after it: the refusal stands)


def _global_hint(exc: Any, text: str) -> str:
    """An option of the root (``--cluster``, ``--data-dir``, ``-s``...) given after the
    command: where it goes."""
    import re

    found = re.fullmatch(r"No such option: (-[^\s]+)(?: .*)?", text)
    ctx = getattr(exc, "ctx", None)
    if found is None or ctx is None:
        return ""
    root = ctx.find_root()
    names = {o for p in root.command.params for o in getattr(p, "opts", ())}
    flag = found.group(1)
    if flag not in names:
        return ""
    return (f"; {flag} is a global option: give it before the command "
            f"(jetlink {flag} ... {ctx.command_path.partition(' ')[2]} ...)")


def click_exception() -> type[Exception]:
    """Click's ClickException: the base of the command-line errors (bad option, missing
    argument, ...) the parser raises. Typer ships its own copy of Click and exports some of
    its exceptions (BadParameter): the base is found among BadParameter's."""
    found: type[Exception] = next(c for c in typer.BadParameter.__mro__
                                  if c.__name__ == "ClickException")
    return found


def check_unknown() -> int:
    """A check's UNKNOWN exit code (Nagios' 3, core/monitor's ``EXIT_CODES``): read on the
    error path only, so that start-up does not load the monitoring package."""
    from jetlink.core.monitor import EXIT_CODES, Status

    return EXIT_CODES[Status.UNKNOWN]


def command_words(command: Any, args: Sequence[str]) -> list[str]:
    """The command words of the command line ``args``: the words that are not options, the
    root's options' values left out (``--cluster east server check`` -> server, check)."""
    valued = {o for p in command.params
              if not getattr(p, "is_flag", False) and not getattr(p, "count", False)
              for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))}
    words: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a == "--":
            break
        elif a.startswith("-"):
            skip = not words and a in valued  # a root option's value follows
        else:
            words.append(a)
    return words


def is_check(words: Sequence[str]) -> bool:
    """Whether the command words (after the global options) are a monitoring check
    (``server check ...``, ``dr check``): its bad command line is UNKNOWN (exit 3), what a
    Nagios plugin answers for invalid arguments, not a usage error's 2 (CRITICAL there)."""
    w = [x for x in words if not x.startswith("-")][:2]
    if w:
        w[0] = ALIASES[""].get(w[0], w[0])  # natscli's names of server (srv, sys, system)
    return w in (["server", "check"], ["dr", "check"])


def run_app(args: list[str], root: typer.Typer | None = None) -> None:
    """Run the command line ``args`` through the Typer app ``root`` (default: :data:`app`;
    cli/main.py ``run``, once it has seen that no quick path takes them) and exit with its
    status."""
    from typer.exceptions import Abort
    from typer.main import get_command

    from jetlink.core.errors import JetlinkError, UsageError

    ClickException = click_exception()
    command = get_command(root or app)
    try:
        for _ in range(len(args) + 1):  # (each pass moves one global option: bounded)
            try:
                rv = command.main(
                    args=args, prog_name=PROG, complete_var=COMPLETE_VAR,
                    standalone_mode=False
                )
                break
            except ClickException as exc:
                moved = (_global_moved_forward(command, args, exc)
                         or _json_moved_back(args, exc))
                if moved is None:
                    raise
                args = moved
    except KeyboardInterrupt:  # outside a command (Typer maps it to 130 inside one)
        sys.exit(ExitCode.INTERRUPTED)
    except ClickException as exc:  # bad command line: exit 2 (click's own exit code)
        if type(exc).__name__ == "NoArgsIsHelpError":  # a group alone: its help, as click
            print(exc.format_message(), file=sys.stderr)  # shows it (no error line)
            sys.exit(exc.exit_code)
        if wants_json(args) and exc.exit_code == ExitCode.USAGE:
            from jetlink.cli.output import print_json

            print_json(UsageError(clipped_message(exc)).to_dict())
        else:
            _show_click_error(exc, command, args)
        path = str(getattr(getattr(exc, "ctx", None), "command_path", "") or "")
        words = path.split()[1:]
        if len(words) < 2:  # an error raised without the command's context (an option
            words = command_words(command, args)  # missing its value): read the line
        if exc.exit_code == ExitCode.USAGE and is_check(words):
            sys.exit(check_unknown())
        sys.exit(exc.exit_code)
    except Abort:
        print("Aborted!", file=sys.stderr)
        sys.exit(ExitCode.FAILED)
    except JetlinkError as exc:
        # Raised before the root group runs (e.g. by a global option's callback): there is
        # no App yet, so report it in human form.
        from jetlink.cli.output import print_error, print_json

        if isinstance(exc, UsageError) and wants_json(args):
            print_json(exc.to_dict())
        else:
            print_error(None, exc)
        if isinstance(exc, UsageError) and is_check(command_words(command, args)):
            sys.exit(check_unknown())  # a check's bad global option: UNKNOWN, as its own
        sys.exit(exc.exit_code)
    # Without standalone mode click returns the code of a typer.Exit (or the command's None).
    sys.exit(rv if isinstance(rv, int) else ExitCode.OK)
