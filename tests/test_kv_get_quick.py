"""`jetlink kv get` without Typer (cli/launch.py ``quick_kv_get``): the same answer as the
Typer app, byte for byte (stdout, stderr, exit status), for values, errors, contexts and
settings from the environment; any other command line is left to the Typer app."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jetlink.cli.launch import _kv_get_line

# Runs ARGV (argv[1]: JSON) through cli/main.py run (quick: the entry point as installed) or
# straight through the Typer app (cli/root.py run_app), then prints whether Typer was loaded.
RUNNER = """
import json, sys
args = json.loads(sys.argv[1])
try:
    if sys.argv[2] == "quick":
        from jetlink.cli.main import run
        run(args)
    else:
        from jetlink.cli.root import run_app
        run_app(args)
except SystemExit as exc:
    code = exc.code
sys.stdout.flush()
print("\\nTYPER", "typer" in sys.modules, code, file=sys.stderr)
"""


def _run(args: list[str], env: dict[str, str], how: str) -> tuple[str, str, int, bool]:
    proc = subprocess.run([sys.executable, "-c", RUNNER, json.dumps(args), how], env=env,
                          capture_output=True, text=True, timeout=120)
    err, _, tail = proc.stderr.rpartition("\nTYPER ")
    assert tail, proc.stderr[-2000:]
    typer, code = tail.split()[:2]
    return proc.stdout, err, int(code) if code != "None" else 0, typer == "True"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("quick")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "JETLINK_"))}
    base.update(JETLINK_DATA_DIR=str(tmp / "data"), XDG_CONFIG_HOME=str(tmp / "config"))
    for args in (["kv", "add", "CFG"], ["kv", "put", "CFG", "limit", "100"],
                 ["kv", "put", "CFG", "gone", "x"], ["kv", "del", "CFG", "gone", "-f"],
                 ["kv", "put", "CFG", "long", "v" * 300]):
        subprocess.run([sys.executable, "-m", "jetlink.cli.main", *args], env=base,
                       check=True, capture_output=True)
    ctx = tmp / "config" / "jetlink" / "context"
    ctx.mkdir(parents=True)
    (ctx / "here.toml").write_text(f'data_dir = "{tmp / "data"}"\n', encoding="utf-8")
    return base


CASES = [
    ({}, ["kv", "get", "CFG", "limit", "--raw"]),
    ({}, ["kv", "get", "CFG", "limit"]),
    ({}, ["kv", "get", "-j", "CFG", "limit"]),
    ({}, ["kv", "get", "CFG", "limit", "--revision", "1", "--json"]),
    ({}, ["kv", "get", "CFG", "limit", "--revision=2"]),  # revision 2 is another key's
    ({}, ["kv", "get", "CFG", "long"]),
    ({}, ["kv", "get", "CFG", "gone"]),
    ({}, ["kv", "get", "CFG", "gone", "--json"]),
    ({}, ["kv", "get", "NOPE", "k"]),
    ({}, ["kv", "get", "CFG", "a..b", "-j"]),
    ({}, ["kv", "get", "bad.name", "k"]),
    ({}, ["kv", "get", "", "k"]),
    ({"JETLINK_CLUSTER": "elsewhere"}, ["kv", "get", "CFG", "limit"]),
    ({"JETLINK_CONTEXT": "missing"}, ["kv", "get", "CFG", "limit", "-j"]),
    ({"JETLINK_CONTEXT": "here", "JETLINK_DATA_DIR": ""}, ["kv", "get", "CFG", "limit"]),
    ({"NATS_TIMEOUT": "5"}, ["kv", "get", "CFG", "limit"]),
    ({"NATS_TIMEOUT": "5"}, ["kv", "get", "CFG", "limit", "-j"]),  # no unit: refused
    ({"NATS_URL": "nats://127.0.0.1:1", "NATS_TIMEOUT": "1s"}, ["kv", "get", "CFG", "limit"]),
]


@pytest.mark.parametrize(("extra", "args"), CASES, ids=[" ".join(a) + (
    f" {e}" if e else "") for e, a in CASES])
def test_quick_kv_get_answers_as_the_typer_app(env, extra, args):
    quick = _run(args, {**env, **extra}, "quick")
    typer = _run(args, {**env, **extra}, "typer")
    assert quick[:3] == typer[:3]
    assert quick[3] is False and typer[3] is True  # the quick path ran without Typer


def test_the_typer_app_keeps_every_other_command_line(env):
    # a usage error, a global option: the Typer app answers
    out, err, code, typer = _run(["kv", "get", "CFG", "limit", "--revision", "-1"], env, "quick")
    assert code == 2 and typer and "--revision" in err
    out, err, code, typer = _run(["--cluster", "local", "kv", "get", "CFG", "limit", "--raw"],
                                 env, "quick")
    assert (out, code, typer) == ("100", 0, True)


@pytest.mark.parametrize("args", [
    ["kv", "get", "B"], ["kv", "get", "B", "K", "X"], ["kv", "get", "B", "K", "-h"],
    ["kv", "get", "B", "K", "--help"], ["kv", "get", "--", "B", "K"],
    ["kv", "get", "B", "K", "--revision"], ["kv", "get", "B", "K", "--revision", "0"],
    ["kv", "get", "B", "K", "--revision", "x"], ["kv", "get", "B", "K", "--revision", "-1"],
    ["kv", "get", "B", "K", "--revision", "1", "--revision", "2"],
    ["kv", "get", "B", "K", "--rev", "1"], ["kv", "get", "B", "-K"],
    ["kv", "get", "B", "K", "--revision", "9" * 19],  # past int64: the app's range rule
    ["kv", "get", "B", "K", "--revision", "9" * 5000],  # past Python's int() digit limit
    ["kv", "put", "B", "K"], ["--data-dir", "d", "kv", "get", "B", "K"], ["kv", "--raw", "get"],
])
def test_only_a_plain_kv_get_takes_the_quick_path(args):
    assert _kv_get_line(args) is None


def test_the_quick_path_reads_the_options_the_command_declares():
    # the flags the quick path reads are the `kv get` command's own (cli/kv.py): a flag
    # renamed or removed there would make the quick path accept what the command refuses
    from jetlink.cli.root import _load_command

    get = _load_command("kv", "kv").get_command(None, "get")
    opts = {o: p.name for p in get.params for o in p.opts}
    assert {o: opts.get(o) for o in ("--raw", "-j", "--json", "--revision")} == {
        "--raw": "raw", "-j": "json_output", "--json": "json_output", "--revision": "revision"}
    assert [p.name for p in get.params if p.param_type_name == "argument"] == ["bucket", "key"]
    assert {p.name for p in get.params} == {"bucket", "key", "revision", "raw", "json_output"}
    assert _kv_get_line(["kv", "get", "--raw", "B", "--revision=3", "K", "-j"]) == (
        "B", "K", 3, True, True)
    assert _kv_get_line(["kv", "get", "B", "K", "--revision", "7"]) == ("B", "K", 7, False,
                                                                       False)


def test_the_entry_point_imports_no_typer_until_needed():
    proc = subprocess.run([sys.executable, "-c", "import sys, jetlink.cli.main as m; "
                           "print('typer' in sys.modules, m.COMMANDS['kv'][0], "
                           "'typer' in sys.modules)"], capture_output=True, text=True,
                          timeout=60, cwd=Path(__file__).parent)
    assert proc.stdout.split() == ["False", "kv", "True"], proc.stderr


@pytest.mark.parametrize("extra", [
    {"JETLINK_DATA_DIR": None},  # (the fixture's data directory, from the environment)
    {"JETLINK_CLUSTER": "local"},
    {"NATS_CONTEXT": "nowhere"},
])
def test_a_selected_context_set_aside_by_the_environment_is_the_typer_apps_rule(
        env, tmp_path, extra):
    """A selected context (not named) gives its server to no invocation whose environment
    addresses the embedded engine (JETLINK_DATA_DIR, JETLINK_CLUSTER) or names a natscli
    context: the quick path leaves that to the Typer app, whose notice and answer come;
    so does a selection naming a removed context."""
    config = tmp_path / "config"
    (config / "jetlink" / "context").mkdir(parents=True)
    (config / "jetlink" / "context" / "prod.toml").write_text(
        'server = "nats://127.0.0.1:1"\ntimeout = "1s"\n', encoding="utf-8")
    (config / "jetlink" / "context.txt").write_text("prod\n", encoding="utf-8")
    run_env = {**env, "XDG_CONFIG_HOME": str(config),
               **{k: v for k, v in extra.items() if v is not None}}
    args = ["kv", "get", "CFG", "limit", "--raw"]
    quick, typer = _run(args, run_env, "quick"), _run(args, run_env, "typer")
    assert quick[:3] == typer[:3]
    if "NATS_CONTEXT" not in extra:  # (the embedded engine read, the notice said)
        assert quick[0] == "100" and "the selected context prod's server is not used" in \
            quick[1], quick
    (config / "jetlink" / "context.txt").write_text("removed\n", encoding="utf-8")
    quick, typer = _run(args, run_env, "quick"), _run(args, run_env, "typer")
    assert quick[:3] == typer[:3]
