"""Import guards: start-up stays cheap and the layers keep their dependencies.

- ``jetlink --help`` (any command's) imports neither pyspark, textual, httpx, the HTTP server
  (starlette, uvicorn) nor the heavy data libraries, nor Rich (the plain help keeps start-up
  within its 250 ms budget; Rich is imported by cli/output.py when a table is printed);
- core/ imports no CLI, TUI, HTTP or Spark library (docs/architecture.md "Layering");
- ``jetlink kv get`` and ``jetlink validate FILE`` (streams only) import only the modules they
  use: the module sets are asserted, not times (docs/startup-figures.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

HELP_FORBIDDEN = (
    "pyspark",
    "textual",
    "httpx",
    "pandas",
    "pyarrow",
    "rich",
    "starlette",
    "uvicorn",
    "jetlink.sparkops",
    "nats",
    "jetlink.core.live.client",
)
CORE_FORBIDDEN = (
    "typer", "click", "rich", "textual", "httpx", "starlette", "uvicorn", "pyspark", "jetlink.cli",
)


def imported_modules(args: list[str]) -> tuple[set[str], subprocess.CompletedProcess]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":  # the header line
                names.add(name)
    return names, proc


def offenders(names: set[str], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if any(n == f or n.startswith(f + ".") for f in forbidden))


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["validate", "--help"],
        ["bench", "--help"],
        ["bench", "transform", "--help"],
        ["serve", "--help"],
    ],
    ids=" ".join,
)
def test_help_imports_nothing_heavy(argv):
    names, proc = imported_modules(["-m", "jetlink.cli.main", *argv])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("Usage: jetlink")
    assert "typer" in names  # the measurement itself works
    assert offenders(names, HELP_FORBIDDEN) == []


def core_modules() -> list[str]:
    modules = []
    for path in sorted((REPO / "core").rglob("*.py")):
        rel = path.relative_to(REPO / "core").with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        modules.append(".".join(["jetlink.core", *parts]))
    return modules


def test_core_imports_no_outer_layer():
    modules = core_modules()
    assert "jetlink.core.errors" in modules
    code = "import importlib\n" + "".join(f"importlib.import_module({m!r})\n" for m in modules)
    names, proc = imported_modules(["-c", code])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert offenders(names, CORE_FORBIDDEN) == []


def test_root_help_imports_no_command_module():
    # `jetlink --help` lists commands from the registry: start-up does not grow with them.
    from jetlink.cli.main import COMMAND_MODULES

    names, proc = imported_modules(["-m", "jetlink.cli.main", "--help"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert sorted(n for n in names if n in {f"jetlink.cli.{m}" for m in COMMAND_MODULES}) == []


@pytest.mark.parametrize(
    "argv",
    [["stream", "ls"], ["kv", "ls"], ["pub", "x.y", "hello"], ["consumer", "ls", "S"]],
    ids=" ".join,
)
def test_embedded_verbs_never_import_the_live_client(argv, tmp_path):
    # nats-py is imported only when a server is in force: the embedded engine's verbs pay
    # nothing for the live client.
    env_free = ["-c", "import os, sys; [os.environ.pop(k, None) for k in list(os.environ) "
                "if k.startswith(('NATS_', 'JETLINK_'))]; sys.argv = ['jetlink', '--data-dir', "
                f"{str(tmp_path)!r}, *{argv!r}]; from jetlink.cli.main import run; run()"]
    names, proc = imported_modules(env_free)
    assert "jetlink.cli.main" in names  # the measurement itself works
    assert offenders(names, ("nats", "jetlink.core.live.client",
                             "jetlink.core.live.jetstream")) == []


def test_a_server_in_force_imports_the_live_client():
    names, proc = imported_modules(["-m", "jetlink.cli.main", "--server", "nats://127.0.0.1:1",
                                    "stream", "ls"])
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "nats" in names and "jetlink.core.live.client" in names


# -- `jetlink kv get` and `jetlink validate FILE` import only what they use ----------------

# Every jetlink module `jetlink kv get BUCKET KEY` may import: the entry point and the quick
# path (cli/main.py, cli/launch.py, cli/kv_get.py: no Typer), the engine's read path (kv ->
# jetstream -> streams -> streamdef / txnstate -> streamstore.base -> store) and the names of
# buckets and keys (config/kvnames.py). Not the bucket configs (config/kv.py: only creating or
# changing a bucket needs them), durations, the config checks, the write engine
# (streamstore.txn), transforms, RePublish, topology, Kafka, the replication pump, the
# consumer engine or the live client (nor its ServerTarget while no server is in force).
# The backend seam (core/backend.py) imports nothing until it is used.
KV_GET_QUICK_MODULES = {
    "jetlink", "jetlink.cli", "jetlink.cli.app", "jetlink.cli.common", "jetlink.cli.console",
    "jetlink.cli.kv_get", "jetlink.cli.launch", "jetlink.cli.main", "jetlink.cli.output",
    "jetlink.core", "jetlink.core.backend", "jetlink.core.clock", "jetlink.core.config",
    "jetlink.core.config.codec", "jetlink.core.config.kvnames", "jetlink.core.config.stream",
    "jetlink.core.consumer_store", "jetlink.core.contexts", "jetlink.core.errors",
    "jetlink.core.fanout", "jetlink.core.headers", "jetlink.core.jetstream", "jetlink.core.kv",
    "jetlink.core.limits", "jetlink.core.live", "jetlink.core.live.settings",
    "jetlink.core.messages", "jetlink.core.numbers", "jetlink.core.store",
    "jetlink.core.store.datadir",
    "jetlink.core.store.health", "jetlink.core.store.schema", "jetlink.core.streamdef",
    "jetlink.core.streams", "jetlink.core.streamstore", "jetlink.core.streamstore.base",
    "jetlink.core.subjects", "jetlink.core.txnstate", "jetlink.core.xdg",
}
# ... and with a global option on the command line, through the Typer app: its root
# (cli/root.py), the kv group and the options it declares, the completion callbacks.
KV_GET_MODULES = KV_GET_QUICK_MODULES | {
    "jetlink.cli.completion", "jetlink.cli.kv", "jetlink.cli.options", "jetlink.cli.root",
}
# ... and `jetlink validate FILE` of a topology of streams only (no KV or Kafka objects, no
# transforms): the stream rules and the topology, no engine, no store, no KV or Kafka rules.
VALIDATE_MODULES = {
    "jetlink", "jetlink.cli", "jetlink.cli.app", "jetlink.cli.common", "jetlink.cli.completion",
    "jetlink.cli.console", "jetlink.cli.launch", "jetlink.cli.root",
    "jetlink.cli.main", "jetlink.cli.options", "jetlink.cli.output", "jetlink.cli.validate",
    "jetlink.core", "jetlink.core.backend", "jetlink.core.config", "jetlink.core.config.codec",
    "jetlink.core.config.stream", "jetlink.core.config.validate", "jetlink.core.contexts",
    "jetlink.core.durations", "jetlink.core.errors", "jetlink.core.limits", "jetlink.core.live",
    "jetlink.core.live.settings", "jetlink.core.live.target", "jetlink.core.numbers",
    "jetlink.core.subjects", "jetlink.core.topology", "jetlink.core.topology.checks",
    "jetlink.core.topology.decode", "jetlink.core.topology.export",
    "jetlink.core.topology.kafka_specs", "jetlink.core.topology.load",
    "jetlink.core.topology.model", "jetlink.core.topology.subject_index", "jetlink.core.xdg",
}


def _modules_of_run(argv: list[str], tmp_path: Path, *, option: bool = True,
                    ) -> tuple[set[str], str, int]:
    """(sys.modules after ``jetlink ARGV`` ran in a fresh interpreter, its stdout, its exit
    status), with no context, server or JETLINK_* setting from the environment; the data
    directory given with --data-dir (``option``) or else JETLINK_DATA_DIR."""
    where = ["--data-dir", str(tmp_path / "data")] if option else []
    code = (
        "import json, os, sys\n"
        "[os.environ.pop(k, None) for k in list(os.environ)"
        " if k.startswith(('NATS_', 'JETLINK_'))]\n"
        f"os.environ['XDG_CONFIG_HOME'] = {str(tmp_path / 'config')!r}\n"
        + ("" if option else f"os.environ['JETLINK_DATA_DIR'] = {str(tmp_path / 'data')!r}\n")
        + f"sys.argv = ['jetlink', *{where!r}, *{argv!r}]\n"
        "from jetlink.cli.main import run\n"
        "status = 0\n"
        "try:\n"
        "    run()\n"
        "except SystemExit as exc:\n"
        "    status = exc.code or 0\n"
        "sys.stdout.flush()\n"
        "print('\\nMODULES', json.dumps([status, sorted(sys.modules)]), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    marker = proc.stderr.rsplit("\nMODULES ", 1)
    assert len(marker) == 2, proc.stderr[-2000:]
    status, names = json.loads(marker[1])
    return set(names), proc.stdout, status


def _jetlink(names: set[str]) -> set[str]:
    return {n for n in names if n == "jetlink" or n.startswith("jetlink.")}


def test_kv_get_imports_only_its_read_path(tmp_path):
    for argv in (["kv", "add", "CFG"], ["kv", "put", "CFG", "limit", "100"]):
        _, _, status = _modules_of_run(argv, tmp_path)
        assert status == 0
    for raw in (["--raw"], []):
        names, out, status = _modules_of_run(["kv", "get", "CFG", "limit", *raw], tmp_path)
        assert status == 0 and "100" in out
        assert _jetlink(names) <= KV_GET_MODULES, sorted(_jetlink(names) - KV_GET_MODULES)
        assert "jetlink.core.kv" in names  # the measurement itself works
        assert offenders(names, ("tomllib", "rich", "nats", "pyspark")) == []


def test_kv_get_without_global_options_imports_no_typer(tmp_path):
    # cli/launch.py quick_kv_get: a plain `kv get` (settings from the environment) runs
    # without Typer and Click, and without the bucket configs (config/kv.py).
    for argv in (["kv", "add", "CFG"], ["kv", "put", "CFG", "limit", "100"]):
        _, _, status = _modules_of_run(argv, tmp_path)
        assert status == 0
    for extra in (["--raw"], [], ["-j"], ["--revision", "1", "--raw"]):
        names, out, status = _modules_of_run(["kv", "get", "CFG", "limit", *extra], tmp_path,
                                             option=False)
        assert status == 0 and ("100" in out or '"MTAw"' in out), out
        assert "jetlink.core.kv" in names  # the measurement itself works
        assert offenders(names, ("typer", "click", "rich", "tomllib", "nats", "pyspark",
                                 "jetlink.core.live.target")) == [], extra
        assert _jetlink(names) <= KV_GET_QUICK_MODULES, sorted(
            _jetlink(names) - KV_GET_QUICK_MODULES)
    # a usage error is the Typer app's: it is loaded then
    names, _, status = _modules_of_run(["kv", "get", "CFG", "limit", "--revision", "-1"],
                                       tmp_path, option=False)
    assert status == 2 and "typer" in names


def test_validate_of_streams_imports_no_engine_kv_or_kafka_rules(tmp_path):
    path = tmp_path / "one.toml"
    path.write_text('[streams.ORDERS]\nsubjects = ["orders.>"]\nmax_age = "1h"\n')
    names, out, status = _modules_of_run(["validate", str(path)], tmp_path)
    assert status == 0 and out.strip().endswith("OK")
    assert _jetlink(names) <= VALIDATE_MODULES, sorted(_jetlink(names) - VALIDATE_MODULES)
    assert "jetlink.core.topology" in names  # the measurement itself works
    assert offenders(names, ("sqlite3", "rich", "nats", "pyspark")) == []


def test_validate_loads_the_kafka_and_kv_rules_when_a_file_needs_them(tmp_path):
    # The lazy imports are still reached: examples/topology.toml declares KV and Kafka objects.
    names, _, status = _modules_of_run(["validate", str(REPO / "examples" / "topology.toml")],
                                       tmp_path)
    assert status == 0
    assert {"jetlink.core.config.kv", "jetlink.core.kafka.links"} <= names


def test_a_group_builds_only_the_command_that_runs():
    # cli/root.py _load_command: `jetlink kv get` builds `get`, not the group's 17 commands;
    # walking the commands (help, completion) builds them all, in typer's own order.
    import typer
    from typer.main import get_group

    from jetlink.cli import kv
    from jetlink.cli.main import _LazyCommands, _load_command

    group = _load_command("kv", "kv")
    assert isinstance(group.commands, _LazyCommands)
    assert group.get_command(None, "get").name == "get"
    assert dict.keys(group.commands) == {"get"}
    assert group.get_command(None, "no-such") is None
    holder = typer.Typer(rich_markup_mode=None)
    kv.register(holder)
    eager = get_group(holder).commands["kv"]
    assert list(group.commands) == list(eager.commands)
    assert all(len(group.commands[n].params) == len(c.params)
               for n, c in eager.commands.items())


def test_republish_pending_key_is_shared():
    # core/streams.py names the RePublish queue without importing core/republish.py.
    from jetlink.core import republish, streams

    assert streams._RP_PENDING == republish.PENDING
