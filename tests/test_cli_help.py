"""Every command of the click tree has help text, documented parameters and -j/--json.

Walks ``typer.main.get_command(app)``, so a command group added later is checked without
touching this file.
"""

from __future__ import annotations

import pytest
from typer import _click as click
from typer.main import get_command
from typer.testing import CliRunner

from jetlink.cli.main import app

ROOT = get_command(app)


def walk(path, cmd, parent=None):
    ctx = click.Context(cmd, info_name=path[-1], parent=parent, **cmd.context_settings)
    yield path, cmd, ctx
    names = cmd.list_commands(ctx) if hasattr(cmd, "list_commands") else []
    for name in names:  # list_commands: lazily loaded commands included
        sub = cmd.get_command(ctx, name)
        yield from walk([*path, name], sub, ctx)


TREE = list(walk(["jetlink"], ROOT))
IDS = [" ".join(path) for path, _, _ in TREE]
LEAVES = [(p, c, x) for p, c, x in TREE if not hasattr(c, "list_commands")]
LEAF_IDS = [" ".join(path) for path, _, _ in LEAVES]


def test_tree_has_the_known_commands():
    assert {"jetlink validate", "jetlink bench transform", "jetlink bench validate"} <= set(IDS)


@pytest.mark.parametrize(("path", "cmd", "ctx"), TREE, ids=IDS)
def test_command_has_help(path, cmd, ctx):
    assert (cmd.help or "").strip(), f"{' '.join(path)} has no help text (docstring or help=)"


@pytest.mark.parametrize(("path", "cmd", "ctx"), TREE[1:], ids=IDS[1:])
def test_short_help_is_not_truncated(path, cmd, ctx):
    # `jetlink --help` lists commands with their first sentence cut at 45 characters.
    short = cmd.get_short_help_str(limit=45)
    assert not short.endswith("..."), (
        f"{' '.join(path)}: make the first sentence of the help text at most 45 characters "
        f"(it shows as {short!r} in the command list)"
    )


@pytest.mark.parametrize(("path", "cmd", "ctx"), TREE, ids=IDS)
def test_every_parameter_has_help(path, cmd, ctx):
    for param in cmd.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        assert (getattr(param, "help", None) or "").strip(), (
            f"{' '.join(path)}: parameter {param.name!r} has no help text"
        )


@pytest.mark.parametrize(("path", "cmd", "ctx"), LEAVES, ids=LEAF_IDS)
def test_every_command_takes_json(path, cmd, ctx):
    flags = [p for p in cmd.params if "--json" in getattr(p, "opts", [])]
    assert flags, f"{' '.join(path)} lacks -j/--json (use jetlink.cli.options.JsonOption)"
    assert set(flags[0].opts) == {"-j", "--json"}
    assert flags[0].is_flag


@pytest.mark.parametrize(("path", "cmd", "ctx"), TREE, ids=IDS)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_runs(path, cmd, ctx, flag):
    result = CliRunner().invoke(app, [*path[1:], flag], prog_name="jetlink")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"Usage: {' '.join(path)} ")
    assert result.stderr == ""
    # a required argument as Click and the reference pages write it (TOPIC), never Typer's
    # {TOPIC}, which reads as a set of choices
    usage = result.stdout.splitlines()[0]
    assert "{" not in usage, usage


def test_registry_help_is_each_commands_own_short_help():
    # `jetlink --help` prints the registry's line without importing the module: keep them equal.
    from jetlink.cli.main import COMMANDS

    ctx = click.Context(ROOT, info_name="jetlink")
    for name, (_, line) in COMMANDS.items():
        assert ROOT.get_command(ctx, name).get_short_help_str(limit=200) == line, name


def test_every_registered_command_is_listed_in_help_order():
    from jetlink.cli.main import COMMANDS

    ctx = click.Context(ROOT, info_name="jetlink")
    assert ROOT.list_commands(ctx)[: len(COMMANDS)] == list(COMMANDS)
