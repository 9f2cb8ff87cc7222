"""The CLI frame: global options, env vars, output and error rendering, exit codes.

Commands are run through Typer's CliRunner on a fresh root app (``build_app()``) with two
probe commands added. ``validate`` and ``bench`` are run against stand-in core modules put in
sys.modules, so that their rendering is pinned here independently of the engine (the real
engine is exercised by tests/test_cli_validate.py).
"""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
import typer
from helpers import data_dir_bytes, doc, ok
from typer.testing import CliRunner

from jetlink.cli.app import App, default_data_dir, make_console, wants_color
from jetlink.cli.main import build_app, run
from jetlink.cli.options import JsonOption
from jetlink.core.errors import (
    ApiError,
    JetlinkError,
    NotFoundError,
    UsageError,
    client_error,
    nats_error,
)

runner = CliRunner()

ENV_VARS = ("JETLINK_DATA_DIR", "JETLINK_CLUSTER", "XDG_DATA_HOME", "NO_COLOR")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


ERRORS = {
    "api": lambda: nats_error("StreamNotFound"),
    "invalid-config": lambda: ApiError(500, 10052, "subjects overlap [orders.>]"),
    "client": lambda: client_error("invalid key"),
    "plain": lambda: JetlinkError("data directory is locked"),
    "usage": lambda: UsageError("--force is required without a terminal"),
    "not-found": lambda: NotFoundError("no such cluster: east"),
}


def make_app() -> typer.Typer:
    app = build_app()

    @app.command("probe")
    def probe(ctx: typer.Context, json_output: JsonOption = False) -> None:
        """Print the App of this invocation."""
        state = App.of(ctx)
        state.emit({"data_dir": str(state.data_dir), "cluster": state.cluster, "json": state.json})

    @app.command("fail")
    def fail(ctx: typer.Context, kind: str, json_output: JsonOption = False) -> None:
        """Raise an error of the given kind."""
        if kind == "interrupt":
            raise KeyboardInterrupt
        raise ERRORS[kind]()

    return app


def invoke(args, **kw):
    return runner.invoke(make_app(), args, prog_name="jetlink", **kw)


def probe(args=(), **kw) -> dict:
    result = invoke([*args, "probe", "--json"], **kw)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    return json.loads(result.stdout)


# -- global options and environment ------------------------------------------------------


def test_defaults(tmp_path):
    assert probe() == {
        "data_dir": str(tmp_path / "home" / ".local" / "share" / "jetlink"),
        "cluster": "local",
        "json": True,
    }


def test_xdg_data_home():
    assert probe(env={"XDG_DATA_HOME": "/srv/xdg"})["data_dir"] == "/srv/xdg/jetlink"


def test_relative_xdg_data_home_is_ignored(tmp_path):
    got = probe(env={"XDG_DATA_HOME": "relative/dir"})["data_dir"]
    assert got == str(tmp_path / "home" / ".local" / "share" / "jetlink")


def test_default_data_dir_function():
    assert default_data_dir({"XDG_DATA_HOME": "/x", "HOME": "/h"}) == Path("/x/jetlink")
    assert default_data_dir({"XDG_DATA_HOME": "", "HOME": "/h"}) == Path("/h/.local/share/jetlink")


def test_env_vars():
    got = probe(env={"JETLINK_DATA_DIR": "/data/jl", "JETLINK_CLUSTER": "east"})
    assert got["data_dir"] == "/data/jl"
    assert got["cluster"] == "east"


def test_options_beat_env_vars():
    got = probe(
        ["--data-dir", "/opt/jl", "--cluster", "west"],
        env={"JETLINK_DATA_DIR": "/data/jl", "JETLINK_CLUSTER": "east"},
    )
    assert (got["data_dir"], got["cluster"]) == ("/opt/jl", "west")


def test_empty_env_vars_count_as_unset(tmp_path):
    got = probe(env={"JETLINK_DATA_DIR": "", "JETLINK_CLUSTER": ""})
    assert got["data_dir"] == str(tmp_path / "home" / ".local" / "share" / "jetlink")
    assert got["cluster"] == "local"


def test_data_dir_tilde_is_expanded(tmp_path):
    assert probe(["--data-dir", "~/jl"])["data_dir"] == str(tmp_path / "home" / "jl")


def test_global_options_go_before_the_command():
    result = invoke(["probe", "--cluster", "east"])
    assert result.exit_code == 2
    assert "No such option: --cluster" in result.stderr


def test_short_json_flag_and_human_default():
    result = invoke(["--cluster", "east", "probe", "-j"])
    assert json.loads(result.stdout)["cluster"] == "east"
    human = invoke(["--cluster", "east", "probe"])
    assert human.exit_code == 0
    assert "cluster:   east\n" in human.stdout
    assert "json:      false\n" in human.stdout


def test_version():
    result = invoke(["--version"])
    assert result.exit_code == 0
    assert result.stdout.startswith("jetlink ")


# -- error rendering -------------------------------------------------------------------


HUMAN_ERRORS = {
    "api": ("jetlink: error: stream not found (10059)\n", 1),
    "invalid-config": ("jetlink: error: subjects overlap [orders.>] (10052)\n", 1),
    "client": ("jetlink: error: invalid key\n", 1),
    "plain": ("jetlink: error: data directory is locked\n", 1),
    "usage": ("jetlink: error: --force is required without a terminal\n", 2),
    "not-found": ("jetlink: error: no such cluster: east\n", 1),
}


@pytest.mark.parametrize("kind", sorted(HUMAN_ERRORS))
def test_error_human(kind):
    expected, code = HUMAN_ERRORS[kind]
    result = invoke(["fail", kind])
    assert result.stderr == expected
    assert result.stdout == ""
    assert result.exit_code == code


JSON_ERRORS = {
    "api": (
        '{\n  "error": {\n    "code": 404,\n    "err_code": 10059,\n'
        '    "description": "stream not found"\n  }\n}\n'
    ),
    "invalid-config": (
        '{\n  "error": {\n    "code": 500,\n    "err_code": 10052,\n'
        '    "description": "subjects overlap [orders.>]"\n  }\n}\n'
    ),
    # err_code 0 is omitted, as the server's `err_code,omitempty`
    "client": '{\n  "error": {\n    "code": 400,\n    "description": "invalid key"\n  }\n}\n',
    "plain": '{\n  "error": {\n    "description": "data directory is locked"\n  }\n}\n',
}


@pytest.mark.parametrize("kind", sorted(JSON_ERRORS))
@pytest.mark.parametrize("flag", ["--json", "-j"])
def test_error_json(kind, flag):
    result = invoke(["fail", kind, flag])
    assert result.stdout == JSON_ERRORS[kind]
    assert result.stderr == ""
    assert result.exit_code == 1
    assert json.loads(result.stdout) == ERRORS[kind]().to_dict()


def test_json_flag_before_argument_also_renders_error_as_json():
    result = invoke(["fail", "--json", "api"])
    assert json.loads(result.stdout)["error"]["err_code"] == 10059
    assert result.exit_code == 1


def test_usage_error_json_exit_code():
    result = invoke(["fail", "usage", "--json"])
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {
        "error": {"description": "--force is required without a terminal"}
    }


def test_keyboard_interrupt_exits_130():
    result = invoke(["fail", "interrupt"])
    assert result.exit_code == 130


@pytest.mark.parametrize("where", ["jetlink.cli.launch.quick_kv_get",
                                   "jetlink.cli.root.run_app"])
def test_an_interrupt_while_the_app_loads_exits_130_without_a_traceback(
        where, monkeypatch, capsys):
    """Ctrl-C before a command runs (the modules loading, the Typer app being built): exit
    130 and nothing printed, as Typer's rule inside a command."""
    def interrupted(*_a, **_k):
        raise KeyboardInterrupt

    monkeypatch.setattr(where, interrupted)
    with pytest.raises(SystemExit) as done:
        run(["dr", "check"])
    assert done.value.code == 130
    assert capsys.readouterr() == ("", "")


def test_unexpected_exception_is_not_swallowed():
    app = make_app()

    @app.command("crash")
    def crash(json_output: JsonOption = False) -> None:
        """Crash."""
        raise RuntimeError("bug")

    result = runner.invoke(app, ["crash"], prog_name="jetlink")
    assert isinstance(result.exception, RuntimeError)


# -- usage errors (click) --------------------------------------------------------------


def test_unknown_command_is_usage_error():
    result = invoke(["nope"])
    assert result.exit_code == 2
    assert "No such command 'nope'" in result.stderr
    assert result.stdout == ""


def test_unknown_option_is_usage_error():
    result = invoke(["probe", "--frobnicate"])
    assert result.exit_code == 2
    assert "No such option: --frobnicate" in result.stderr


def test_no_arguments_prints_help():
    result = invoke([])
    assert result.exit_code == 2
    assert "Usage: jetlink [OPTIONS] COMMAND [ARGS]..." in result.output


def test_bad_count_is_usage_error():
    result = invoke(["bench", "transform", "--count", "0"])
    assert result.exit_code == 2
    assert "Invalid value for '--count'" in result.stderr


# -- the real entry point ----------------------------------------------------------------


def test_run_reports_jetlink_error_and_exit_code(monkeypatch, capsys):
    import jetlink.cli.main as main_module

    monkeypatch.setattr(main_module, "app", make_app())
    with pytest.raises(SystemExit) as exc:
        run(["fail", "api"])
    assert exc.value.code == 1
    captured = capsys.readouterr()
    assert captured.err == "jetlink: error: stream not found (10059)\n"
    assert captured.out == ""


def test_run_json_error(monkeypatch, capsys):
    import jetlink.cli.main as main_module

    monkeypatch.setattr(main_module, "app", make_app())
    with pytest.raises(SystemExit) as exc:
        run(["fail", "not-found", "-j"])
    assert exc.value.code == 1
    assert capsys.readouterr().out == JSON_ERRORS["plain"].replace(
        "data directory is locked", "no such cluster: east"
    )


def _subprocess(args, env=None):
    full_env = {k: v for k, v in os.environ.items() if k not in ENV_VARS}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "jetlink.cli.main", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=60,
    )


def test_python_dash_m_entry_point():
    proc = _subprocess(["--help"])
    assert proc.returncode == 0
    assert proc.stdout.startswith("Usage: jetlink [OPTIONS] COMMAND [ARGS]...")


def test_python_dash_m_usage_error_exit_code():
    proc = _subprocess(["bench", "transform", "--count", "x"])
    assert proc.returncode == 2
    assert proc.stderr.startswith("jetlink: error: Invalid value for '--count'")
    assert proc.stderr.endswith("Try 'jetlink bench transform -h' for help.\n")


def test_shell_completion_through_the_entry_point():
    proc = _subprocess(
        [],
        env={"_JETLINK_COMPLETE": "complete_bash", "COMP_WORDS": "jetlink va", "COMP_CWORD": "1"},
    )
    assert proc.returncode == 0
    assert proc.stdout.split() == ["validate"]
    proc = _subprocess(
        [],
        env={
            "_JETLINK_COMPLETE": "complete_bash",
            "COMP_WORDS": "jetlink bench ",
            "COMP_CWORD": "2",
        },
    )
    assert proc.stdout.split() == ["transform", "validate", "pub", "replicate", "batch",
                                   "demo", "startup", "all", "kv", "link", "spark", "live",
                                   "live-dr", "dr", "scale", "acls", "live-export", "serve"]


# -- validate, against a stand-in core.topology ----------------------------------------


@dataclasses.dataclass
class FakeProblem:
    file: str
    object: str | None
    field: str | None
    err_code: int
    description: str

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@pytest.fixture
def fake_topology(monkeypatch):
    module = types.ModuleType("jetlink.core.topology")
    module.problems = {}  # path -> list[FakeProblem]
    module.calls = []

    def validate_files(paths):
        module.calls.append(list(paths))
        return [p for path in paths for p in module.problems.get(path, [])]

    def check_files(paths):
        return validate_files(paths), []

    def bench_validate(n):
        return {"configs": n, "seconds": 0.5, "configs_per_sec": n / 0.5}

    module.validate_files = validate_files
    module.check_files = check_files
    bench = types.ModuleType("jetlink.core.bench.validate")
    bench.bench_validate = bench_validate
    monkeypatch.setitem(sys.modules, "jetlink.core.topology", module)
    monkeypatch.setitem(sys.modules, "jetlink.core.bench.validate", bench)
    return module


BROKEN = [
    FakeProblem(
        "broken.toml",
        "stream ORDERS_MIRROR",
        "subjects",
        10034,
        "stream mirrors can not contain subjects",
    ),
    FakeProblem(
        "broken.toml",
        "stream ORDERS",
        "subject_transform.dest",
        10156,
        "stream transform: invalid mapping destination: unknown function in {{nope(1)}}",
    ),
]


def test_validate_clean_human(fake_topology):
    result = invoke(["validate", "topology.toml", "orders.json"])
    assert result.exit_code == 0
    assert result.stdout == "topology.toml: OK\norders.json: OK\n"
    assert result.stderr == ""
    assert fake_topology.calls == [["topology.toml", "orders.json"]]


def test_validate_clean_json(fake_topology):
    result = invoke(["validate", "--json", "topology.toml"])
    assert result.exit_code == 0
    assert result.stdout == (
        '{\n  "files": [\n    "topology.toml"\n  ],\n'
        '  "problems": [],\n  "warnings": [],\n  "valid": true\n}\n'
    )


def test_validate_problems_json(fake_topology):
    fake_topology.problems["broken.toml"] = BROKEN
    result = invoke(["validate", "-j", "ok.toml", "broken.toml"])
    assert result.exit_code == 3
    assert result.stderr == ""
    assert json.loads(result.stdout) == {
        "files": ["ok.toml", "broken.toml"],
        "problems": [
            {
                "file": "broken.toml",
                "object": "stream ORDERS_MIRROR",
                "field": "subjects",
                "err_code": 10034,
                "description": "stream mirrors can not contain subjects",
            },
            {
                "file": "broken.toml",
                "object": "stream ORDERS",
                "field": "subject_transform.dest",
                "err_code": 10156,
                "description": "stream transform: invalid mapping destination: "
                "unknown function in {{nope(1)}}",
            },
        ],
        "warnings": [],
        "valid": False,
    }


def test_validate_problems_human(fake_topology):
    fake_topology.problems["broken.toml"] = BROKEN
    result = invoke(["validate", "ok.toml", "broken.toml"])
    assert result.exit_code == 3
    assert result.stderr == "2 problems in 1 file\n"
    # Not a terminal: one grep-able line per problem, no colour, no table.
    assert result.stdout == (
        "ok.toml: OK\n"
        "broken.toml: stream ORDERS_MIRROR: subjects: stream mirrors can not contain subjects"
        " (10034)\n"
        "broken.toml: stream ORDERS: subject_transform.dest: stream transform: invalid mapping"
        " destination: unknown function in {{nope(1)}} (10156)\n"
    )


def test_validate_problems_table_on_a_terminal(fake_topology, monkeypatch):
    from jetlink.cli import output

    fake_topology.problems["broken.toml"] = BROKEN
    monkeypatch.setattr(output, "stdout_is_terminal", lambda: True)
    result = invoke(["validate", "broken.toml"])
    assert result.exit_code == 3
    out = result.stdout
    for text in ("file", "object", "field", "err_code", "description", "10034", "10156"):
        assert text in out
    assert "ORDERS_MIRROR" in out


def test_validate_missing_file_problem(fake_topology):
    fake_topology.problems["missing.toml"] = [
        FakeProblem("missing.toml", None, None, 0, "file not found")
    ]
    result = invoke(["validate", "missing.toml", "other.json"])
    assert result.exit_code == 3
    assert result.stderr == "1 problem in 1 file\n"
    assert "other.json: OK" in result.stdout
    doc = json.loads(invoke(["validate", "-j", "missing.toml"]).stdout)
    assert doc["problems"] == [
        {
            "file": "missing.toml",
            "object": None,
            "field": None,
            "err_code": 0,
            "description": "file not found",
        }
    ]


def test_validate_summary_counts_files(fake_topology):
    fake_topology.problems["a.toml"] = [dataclasses.replace(BROKEN[0], file="a.toml")]
    fake_topology.problems["b.toml"] = [dataclasses.replace(BROKEN[1], file="b.toml")]
    result = invoke(["validate", "a.toml", "b.toml"])
    assert result.exit_code == 3
    assert result.stderr == "2 problems in 2 files\n"
    assert "OK" not in result.stdout


def test_validate_needs_a_file(fake_topology):
    result = invoke(["validate"])
    assert result.exit_code == 2
    assert "Missing argument 'FILE...'" in result.stderr


# -- bench, against stand-in core modules ----------------------------------------------


@pytest.fixture
def fake_transform(monkeypatch):
    module = types.ModuleType("jetlink.core.bench.transform")

    def bench_transform(n):
        return {
            "subjects": n,
            "seconds": 0.25,
            "subjects_per_sec": n / 0.25,
            "src": "orders.*.>",
            "dest": "ship.{{wildcard(1)}}.>",
        }

    module.bench_transform = bench_transform
    monkeypatch.setitem(sys.modules, "jetlink.core.bench.transform", module)
    return module


def test_bench_transform_json(fake_transform):
    result = invoke(["bench", "transform", "--count", "1000", "--json"])
    assert result.exit_code == 0
    assert result.stdout == (
        "{\n"
        '  "subjects": 1000,\n'
        '  "seconds": 0.25,\n'
        '  "subjects_per_sec": 4000.0,\n'
        '  "src": "orders.*.>",\n'
        '  "dest": "ship.{{wildcard(1)}}.>"\n'
        "}\n"
    )


def test_bench_transform_human(fake_transform):
    result = invoke(["bench", "transform", "--count", "2000000"])
    assert result.exit_code == 0
    assert result.stdout == (
        "subjects:          2,000,000\n"
        "seconds:           0.25\n"
        "subjects_per_sec:  8,000,000\n"
        "src:               orders.*.>\n"
        "dest:              ship.{{wildcard(1)}}.>\n"
    )


def test_bench_transform_default_count(fake_transform):
    result = invoke(["bench", "transform", "-j"])
    assert json.loads(result.stdout)["subjects"] == 1_000_000


def test_bench_validate(fake_topology):
    result = invoke(["bench", "validate", "--count", "10", "-j"])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"configs": 10, "seconds": 0.5, "configs_per_sec": 20.0}
    human = invoke(["bench", "validate", "--count", "10"])
    assert human.stdout == "configs:          10\nseconds:          0.5\nconfigs_per_sec:  20\n"


def test_bench_transform_real_engine():
    # core/transform.py: bench_transform(n) -> subjects, seconds, subjects_per_sec, src, dest
    result = invoke(["bench", "transform", "--count", "500", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert list(doc) == ["subjects", "seconds", "subjects_per_sec", "src", "dest"]
    assert doc["subjects"] == 500
    human = invoke(["bench", "transform", "--count", "500"])
    assert human.stdout.startswith("subjects:          500\n")


# -- colour ------------------------------------------------------------------------------


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_without_no_color(monkeypatch):
    assert wants_color(FakeTerminal())
    assert not wants_color(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wants_color(FakeTerminal())
    assert make_console(FakeTerminal()).no_color
    monkeypatch.setenv("NO_COLOR", "")  # empty means unset (no-color.org)
    assert wants_color(FakeTerminal())


def test_no_escape_codes_when_piped(fake_transform):
    result = invoke(["bench", "transform", "--count", "5"])
    assert "\x1b" not in result.stdout


NOT_UTF8 = [  # (command line with a byte that is not UTF-8, as Python holds it: a surrogate)
    ["--cluster", "k", "topic", "describe", "x\udcff"],
    ["--cluster", "k", "acls", "add", "--principal", "User:a\udcff", "--operation", "Read",
     "--topic", "t"],
    ["--cluster", "k", "group", "describe", "g\udcfe"],
    # a name a verb creates: checked against Kafka's topic name rule, which it also breaks
    ["--cluster", "k", "topic", "create", "x\udcff"],
    ["stream", "add", "S\udcff", "--subjects", "q.>", "--defaults"],
    ["pub", "s.\udcff", "x"],
    # values that go into a config: refused by its decoding (core/config/codec.py), named
    # as the argument they came from, before anything is stored
    ["stream", "add", "M", "--mirror", "x\udcff", "--defaults"],
    ["stream", "add", "U", "--subjects", "u.\udcff", "--defaults"],
    ["stream", "add", "D", "--subjects", "d", "--description", "d\udcff", "--defaults"],
    ["stream", "edit", "S", "--metadata", "k=v\udcff", "-f"],
    ["kv", "add", "B", "--description", "d\udcff"],
    ["consumer", "add", "S", "C", "--metadata", "k=v\udcff", "--defaults"],
]


@pytest.mark.parametrize("args", NOT_UTF8, ids=lambda a: " ".join(a[:4]))
def test_a_value_that_is_not_utf8_is_a_usage_error_not_a_traceback(jl, args):
    """A name, subject or principal can not be written with bytes that are not UTF-8: one
    line naming the argument and the byte, exit 2, nothing stored."""
    from helpers import data_dir_bytes

    assert jl("cluster", "add", "k", "--kind", "kafka", "--authorizer").exit_code == 0
    assert jl("stream", "add", "S", "--subjects", "s.>", "--defaults").exit_code == 0
    before = data_dir_bytes(jl.data)
    r = jl(*args)
    bad = next(a for a in args if any("\udc80" <= c <= "\udcff" for c in a))
    shown = bad.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    byte = next(ord(c) - 0xDC00 for c in bad if "\udc80" <= c <= "\udcff")
    assert (r.exit_code, r.stderr) == (2, f"jetlink: error: argument '{shown}' is not UTF-8 "
                                          f"text (byte 0x{byte:02x}): names, subjects and "
                                          "keys are UTF-8\n")
    assert data_dir_bytes(jl.data) == before


def test_json_output_stays_utf8_with_a_path_that_is_not(tmp_path, capsys):
    """A data directory whose name holds a byte that is not UTF-8: --json writes it as a
    JSON escape (\\udcff), so stdout is valid UTF-8 JSON and reads back as the same path."""
    import os

    from jetlink.cli.main import run

    data = os.fsdecode(os.fsencode(str(tmp_path)) + b"/x\xff")
    with pytest.raises(SystemExit):
        run(["--data-dir", data, "stream", "ls", "-j"])
    out = capsys.readouterr().out
    out.encode("utf-8")  # (a lone surrogate written as is would not encode)
    assert "\\udcff" in out
    assert json.loads(out)["error"]["description"].startswith(f"data directory {data} ")


def test_a_config_file_with_text_that_is_not_utf8_is_refused_naming_the_field(jl, tmp_path):
    """A --config whose string holds a lone surrogate (a \\udcff escape): the server's 10025
    naming the field, nothing stored (no later answer could be written out)."""
    from helpers import data_dir_bytes

    assert jl("stream", "add", "S", "--subjects", "s.>", "--defaults").exit_code == 0
    before = data_dir_bytes(jl.data)
    path = tmp_path / "cf.json"
    path.write_text('{"name": "CF", "subjects": ["cf"], "metadata": {"k": "v\\udcff"}}')
    r = jl("stream", "add", "--config", str(path), "-j")
    assert (r.exit_code, json.loads(r.stdout)) == (1, {"error": {
        "code": 400, "err_code": 10025,
        "description": "invalid JSON: metadata.k: not UTF-8 text (byte 0xff)"}})
    assert data_dir_bytes(jl.data) == before


def test_a_payload_that_is_not_utf8_keeps_its_bytes(jl):
    assert jl("stream", "add", "S", "--subjects", "s.>", "--defaults").exit_code == 0
    assert jl("pub", "s.x", "a\udcff").exit_code == 0
    assert json.loads(jl("stream", "get", "S", "1", "-j").stdout)["data"] == "Yf8="


@pytest.mark.parametrize(("args", "line"), [
    (["--cluster", "x\udcff", "stream", "ls"],
     "jetlink: error: --cluster: invalid cluster name 'x\\xff': use 1 to 64 letters, "
     "digits, '_' or '-'\n"),
    (["--context", "x\udcff", "stream", "ls"],
     "jetlink: error: invalid context name 'x\\xff': use 1 to 100 letters, digits, '_' or "
     "'-' (from --context)\n"),
    (["kv", "get", "B\udcff", "k"],
     "jetlink: error: argument 'B\\xff' is not UTF-8 text (byte 0xff): names, subjects and "
     "keys are UTF-8\n"),
])
def test_a_name_that_is_not_utf8_is_quoted_as_the_bytes_given(jl, args, line):
    """Every quoted name shows a byte that is not UTF-8 as the byte (\\xff), never Python's
    surrogate (\\udcff)."""
    r = jl(*args)
    assert r.stderr == line, r.stderr


@pytest.mark.parametrize(("args", "code"), [
    (["server", "check", "stream", "--stream", "S\udcff", "-j"], 3),
    (["dr", "check", "M\udcff", "-j"], 3),
    (["links", "create", "L\udcff", "--source-cluster", "local", "-j"], 2),
    (["stream", "info", "S\udcff", "-j"], 2),
    (["kv", "get", "B", "k\udcff", "-j"], 2),
    (["kv", "put", "B", "k\udcff", "v", "-j"], 2),
])
def test_an_argument_that_is_not_utf8_is_refused_before_anything_and_json_stays_utf8(
        jl, args, code):
    """Every value of the command line but a payload is UTF-8 (cli/app.py utf8_params): the
    usage error names the argument (exit 2; a check's bad command line 3), nothing is
    written, and the --json document is UTF-8 text."""
    ok(jl("kv", "add", "B"))
    before = data_dir_bytes(jl.data)
    r = jl(*args)
    assert r.exit_code == code, (r.stdout, r.stderr)
    r.stdout_bytes.decode("utf-8")  # (strict: no raw byte, no lone surrogate escaped out)
    bad = next(a for a in args if "\udcff" in a)
    shown = bad.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    assert json.loads(r.stdout)["error"]["description"] == (
        f"argument '{shown}' is not UTF-8 text (byte 0xff): names, subjects and keys are UTF-8")
    assert data_dir_bytes(jl.data) == before


def test_a_payload_keeps_the_bytes_typed(jl):
    """A message's body, a bucket's value: their bytes are stored as given, UTF-8 or not."""
    ok(jl("stream", "add", "S", "--subjects", "s.>", "--defaults"))
    ok(jl("pub", "s.a", "v\udcff"))
    assert base64.b64decode(doc(jl("stream", "get", "S", "1", "-j"))["data"]) == b"v\xff"
    ok(jl("kv", "add", "B"))
    ok(jl("kv", "put", "B", "k", "w\udcff", "-j"))  # (the echo: CliRunner's stdout is strict)
    assert base64.b64decode(doc(jl("kv", "get", "B", "k", "-j"))["value"]) == b"w\xff"
