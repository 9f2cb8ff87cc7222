"""Shell completion of names from the data directory in force (cli/completion.py), through
the entry point as bash, zsh and fish call it (completions/)."""

from __future__ import annotations

import pytest
from helpers import ok
from test_cli import _subprocess


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    from helpers import runner

    from jetlink.cli.main import app

    d = tmp_path_factory.mktemp("compl") / "data"

    def jl(*args):
        return ok(runner.invoke(app, ["--data-dir", str(d), *args], prog_name="jetlink"))

    jl("cluster", "add", "west")
    jl("cluster", "add", "kwest", "--kind", "kafka")
    jl("stream", "add", "ORDERS", "--subjects", "o.>", "--defaults")
    jl("stream", "add", "OTHER", "--subjects", "x.>", "--defaults")
    jl("--cluster", "west", "stream", "add", "WEST_ONLY", "--subjects", "w.>", "--defaults")
    jl("consumer", "add", "ORDERS", "billing", "--pull", "--defaults")
    jl("consumer", "add", "ORDERS", "audit", "--pull", "--defaults")
    jl("kv", "add", "CONFIG")
    jl("--cluster", "kwest", "topic", "create", "orders", "--partitions", "1")
    jl("--cluster", "kwest", "topic", "create", "returns", "--partitions", "1")
    jl("--cluster", "kwest", "topic", "produce", "orders", "x")
    jl("--cluster", "kwest", "topic", "consume", "orders", "--group", "billing",
       "--from-beginning", "--max", "1")
    jl("cluster", "add", "keast", "--kind", "kafka")
    jl("--cluster", "keast", "links", "create", "L", "--source-cluster", "kwest")
    jl("--cluster", "keast", "mirrors", "create", "orders", "--link", "L")
    # east: what the DR verbs take (mirrors, a KV mirror, what a failover promoted) and a
    # stream that is none of these
    jl("cluster", "add", "east")
    jl("--cluster", "west", "kv", "add", "CONFIG2")
    jl("--cluster", "east", "stream", "add", "BACKUP", "--mirror", "ORDERS@local", "--defaults")
    jl("--cluster", "east", "stream", "add", "GONE", "--mirror", "OTHER@local", "--defaults")
    jl("--cluster", "east", "stream", "add", "PLAIN", "--subjects", "p.>", "--defaults")
    jl("--cluster", "east", "kv", "add", "CONFIG", "--mirror", "CONFIG@local")
    jl("--cluster", "east", "kv", "add", "CONFIG2", "--mirror", "CONFIG2@west")
    jl("--cluster", "east", "stream", "failover", "GONE", "-f")
    jl("--cluster", "east", "kv", "failover", "CONFIG2", "-f")
    return d


def bash(line):
    words = line.split(" ")
    proc = _subprocess([], env={"_JETLINK_COMPLETE": "complete_bash",
                                "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)})
    return proc.stdout.split()


@pytest.mark.parametrize(("line", "expected"), [
    ("stream info ", ["CONFIG", "ORDERS", "OTHER"]) ,
    ("stream info O", ["ORDERS", "OTHER"]),
    ("--cluster west stream info ", ["KV_CONFIG2", "WEST_ONLY"]),
    ("consumer info ORDERS ", ["audit", "billing"]),
    ("consumer next ORDERS b", ["billing"]),
    ("kv get ", ["CONFIG"]),
    ("--cluster kwest topic describe ", ["orders", "returns"]),
    ("--cluster kwest group describe ", ["billing"]),
    ("--cluster ", ["east", "keast", "kwest", "local", "west"]),
    ("--cluster keast mirrors describe ", ["orders"]),
    ("--cluster keast mirrors pause --link L o", ["orders"]),
    ("--cluster keast links describe ", ["L"]),
    ("cluster down w", ["west"]),
    # the DR verbs: only what each takes
    ("--cluster east stream info ", ["BACKUP", "GONE", "KV_CONFIG", "KV_CONFIG2", "PLAIN"]),
    ("--cluster east stream failover ", ["BACKUP"]),
    ("--cluster east stream promote B", ["BACKUP"]),
    ("stream failover ", []),
    ("--cluster east stream failback ", ["GONE"]),
    ("--cluster east kv promote ", ["CONFIG"]),
    ("--cluster east kv failover ", ["CONFIG"]),
    ("--cluster east kv failback ", ["CONFIG2"]),
    ("dr check ", ["BACKUP", "CONFIG", "orders"]),
    ("--cluster east dr check ", ["BACKUP", "CONFIG"]),
    ("--cluster keast dr check ", ["orders"]),
    ("--cluster keast mirrors failover --link ", ["L"]),
    ("--cluster keast mirrors failover --link L ", ["orders"]),
    ("--cluster keast mirrors promote -l ", ["L"]),
    ("--cluster keast mirrors ls --link ", ["L"]),
    ("--cluster keast links create M --source-cluster kw", ["kwest"]),
    ("--cluster keast kafka-cluster-links --create --cluster-id kw", ["kwest"]),
    ("--cluster keast kafka-mirrors --failover --topics ", ["orders"]),
    ("--cluster keast kafka-mirrors --failover --topics orders,", []),
    ("--cluster keast kafka-mirrors --failover --topics x,o", ["x,orders"]),
    ("bench scale --only f", ["failover", "filtered"]),
    # a REST API in force: its names, not the data directory's (a TAB asks no endpoint)
    ("--cluster keast mirrors --rest-url http://127.0.0.1:1 describe ", []),
    ("--cluster keast mirrors describe --rest-url http://127.0.0.1:1 ", []),
    ("--cluster keast links --rest-url http://127.0.0.1:1 describe ", []),
    ("bench all --only live", ["live", "live-export", "live-dr"]),
    ("bench all --skip sp", ["spark"]),
    ("server check stream --stream O", ["ORDERS", "OTHER"]),
    ("server check consumer --stream ORDERS --consumer ", ["audit", "billing"]),
    ("server check kv --bucket ", ["CONFIG"]),
])
def test_bash_completes_names(data, line, expected):
    got = bash(f"jetlink --data-dir {data} {line}")
    if line == "stream info ":  # the KV bucket's stream is a stream too
        expected = ["KV_CONFIG", "ORDERS", "OTHER"]
    assert got == expected


def test_zsh_and_fish_complete_the_same_names(data):
    line = f"jetlink --data-dir {data} stream info O"
    zsh = _subprocess([], env={"_JETLINK_COMPLETE": "complete_zsh",
                               "_TYPER_COMPLETE_ARGS": line}).stdout
    assert '"ORDERS"' in zsh and '"OTHER"' in zsh
    fish = _subprocess([], env={"_JETLINK_COMPLETE": "complete_fish",
                                "_TYPER_COMPLETE_FISH_ACTION": "get-args",
                                "_TYPER_COMPLETE_ARGS": line}).stdout
    assert fish.split() == ["ORDERS", "OTHER"]


def test_a_missing_data_directory_completes_nothing_and_creates_nothing(tmp_path):
    missing = tmp_path / "none"
    assert bash(f"jetlink --data-dir {missing} stream info ") == []
    assert bash(f"jetlink --data-dir {missing} --cluster ") == []
    assert not missing.exists()


def test_the_context_in_force_gives_the_data_directory_and_cluster(data, tmp_path):
    """A context (selected, or named by --context) that names the data directory and the
    cluster is where names come from, as the command would run there; a selection naming a
    removed context completes nothing and prints nothing while the operator types."""
    cfg = tmp_path / "config"
    env = {"XDG_CONFIG_HOME": str(cfg)}
    proc = _subprocess(["context", "add", "w", "--data-dir", str(data), "--cluster", "west",
                        "--select"], env=env)
    assert proc.returncode == 0, proc.stderr

    def complete(line):
        words = line.split(" ")
        return _subprocess([], env={**env, "_JETLINK_COMPLETE": "complete_bash",
                                    "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)})

    assert complete("jetlink stream info ").stdout.split() == ["KV_CONFIG2", "WEST_ONLY"]
    assert complete("jetlink --cluster ").stdout.split() == [
        "east", "keast", "kwest", "local", "west"]
    (cfg / "jetlink" / "context.txt").write_text("ghost\n")
    got = complete("jetlink stream info ")
    assert (got.stdout.split(), got.stderr) == ([], "")
    assert complete("jetlink --context w stream info ").stdout.split() == [
        "KV_CONFIG2", "WEST_ONLY"]


def test_context_names_complete(tmp_path):
    """--context and the context verbs that take an existing context offer their names."""
    cfg = tmp_path / "config"
    env = {"XDG_CONFIG_HOME": str(cfg)}
    for name in ("dev", "prod", "prod2"):
        assert _subprocess(["context", "add", name], env=env).returncode == 0

    def complete(line):
        words = line.split(" ")
        return _subprocess([], env={**env, "_JETLINK_COMPLETE": "complete_bash",
                                    "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)})

    assert complete("jetlink --context ").stdout.split() == ["dev", "prod", "prod2"]
    assert complete("jetlink context select p").stdout.split() == ["prod", "prod2"]
    assert complete("jetlink context rm d").stdout.split() == ["dev"]
    assert complete("jetlink context show ").stdout.split() == ["dev", "prod", "prod2"]
    got = complete("jetlink context select ")
    assert got.stderr == ""
