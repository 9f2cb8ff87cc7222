"""Contexts (like ``nats context``): the store (core/contexts.py), the ``jetlink context``
verbs (cli/context.py) and the precedence of the global options (cli/root.py):
command line > environment > the context in force (--context, JETLINK_CONTEXT, the selected
one) > defaults.

The CLI runs in-process without --data-dir (unlike the ``jl`` fixture), with XDG_CONFIG_HOME
and XDG_DATA_HOME in tmp_path.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib

import pytest
import tomli_w
from helpers import ENV_VARS, doc, ok, runner

from jetlink.cli.main import app
from jetlink.core.contexts import Context, ContextStore, config_dir, validate_context_name
from jetlink.core.errors import JetlinkError, NotFoundError


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A clean environment: XDG_CONFIG_HOME=tmp/config, XDG_DATA_HOME=tmp/xdg-data."""
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)
    return monkeypatch


@pytest.fixture
def jc(env, tmp_path):
    """``jc(*args)``: jetlink with exactly these arguments (no --data-dir added)."""

    def run(*args, input=None):
        return runner.invoke(app, list(args), input=input, prog_name="jetlink")

    run.tmp = tmp_path
    # the default data directory exists (empty): a read there works and creates nothing
    (tmp_path / "xdg-data" / "jetlink").mkdir(parents=True)
    run.config = tmp_path / "config" / "jetlink"
    run.store = ContextStore(run.config)
    return run


def error(result, code=1):
    """The JSON error document of a failed run with -j (exit ``code``)."""
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return json.loads(result.stdout)["error"]["description"]


def ctx_doc(jc, name, *, description="", data_dir=None, cluster=None, selected=False,
            rest_url=None):
    return {
        "name": name,
        "description": description,
        "data_dir": data_dir,
        "cluster": cluster,
        "rest_url": rest_url,
        "selected": selected,
        "path": str(jc.config / "context" / f"{name}.toml"),
    }


# -- precedence ---------------------------------------------------------------------------

# Each layer gives its own data directory (tmp/<layer>) and cluster (<layer>c):
#   opt     --data-dir / --cluster on the command line
#   env     JETLINK_DATA_DIR / JETLINK_CLUSTER
#   ctxopt  the context named by the global option --context
#   ctxenv  the context named by JETLINK_CONTEXT
#   sel     the selected context
# and without any the defaults ($XDG_DATA_HOME/jetlink, cluster local).
PRECEDENCE = [
    # (id, layers giving the data dir, layers giving the cluster, contexts named, winners)
    ("all-layers", {"opt", "env"}, {"opt", "env"}, {"ctxopt", "ctxenv", "sel"}, ("opt", "opt")),
    ("option-beats-env", {"opt", "env"}, {"opt", "env"}, set(), ("opt", "opt")),
    ("env-beats-contexts", {"env"}, {"env"}, {"ctxopt", "ctxenv", "sel"}, ("env", "env")),
    ("context-option", set(), set(), {"ctxopt", "ctxenv", "sel"}, ("ctxopt", "ctxopt")),
    ("JETLINK_CONTEXT", set(), set(), {"ctxenv", "sel"}, ("ctxenv", "ctxenv")),
    ("selected", set(), set(), {"sel"}, ("sel", "sel")),
    ("nothing", set(), set(), set(), ("default", "default")),
    ("option-dir-env-cluster", {"opt"}, {"env"}, {"sel"}, ("opt", "env")),
    ("env-dir-selected-cluster", {"env"}, set(), {"sel"}, ("env", "sel")),
    ("selected-dir-option-cluster", set(), {"opt"}, {"sel"}, ("sel", "opt")),
    ("JETLINK_CONTEXT-dir-only", set(), set(), {"ctxenv-dir-only", "sel"}, ("ctxenv", "default")),
]


@pytest.mark.parametrize(
    ("dir_layers", "cluster_layers", "contexts", "winners"),
    [p[1:] for p in PRECEDENCE],
    ids=[p[0] for p in PRECEDENCE],
)
def test_precedence(jc, env, dir_layers, cluster_layers, contexts, winners):
    tmp = jc.tmp
    for layer in ("ctxopt", "ctxenv", "sel"):
        ok(jc("context", "add", layer, "--data-dir", str(tmp / layer), "--cluster", f"{layer}c"))
    ok(jc("context", "add", "ctxenv-dir-only", "--data-dir", str(tmp / "ctxenv")))
    args = []
    if "opt" in dir_layers:
        args += ["--data-dir", str(tmp / "opt")]
    if "opt" in cluster_layers:
        args += ["--cluster", "optc"]
    if "env" in dir_layers:
        env.setenv("JETLINK_DATA_DIR", str(tmp / "env"))
    if "env" in cluster_layers:
        env.setenv("JETLINK_CLUSTER", "envc")
    if "ctxopt" in contexts:
        args += ["--context", "ctxopt"]
    for name in ("ctxenv", "ctxenv-dir-only"):
        if name in contexts:
            env.setenv("JETLINK_CONTEXT", name)
    if "sel" in contexts:
        ok(jc("context", "select", "sel"))

    want_dir, want_cluster = winners
    data = tmp / "xdg-data" / "jetlink" if want_dir == "default" else tmp / want_dir
    # the data directory: where a write makes the cluster that `cluster ls` then lists
    ok(jc(*args, "cluster", "add", "probe"))
    paths = {d["path"] for d in doc(jc(*args, "cluster", "ls", "-j"))}
    assert paths and {os.path.dirname(p) for p in paths} == {str(data)}
    # the cluster: `stream ls` of the default cluster works, another one does not exist yet
    result = jc(*args, "stream", "ls", "-j")
    if want_cluster == "default":
        assert doc(result) == []
    else:
        assert error(result) == f"cluster {want_cluster}c not found"


def test_unknown_context_in_jetlink_context(jc, env):
    env.setenv("JETLINK_CONTEXT", "nope")
    assert error(jc("stream", "ls", "-j")) == "unknown context 'nope' (from JETLINK_CONTEXT)"
    r = jc("stream", "ls")
    assert r.exit_code == 1
    assert r.stderr == "jetlink: error: unknown context 'nope' (from JETLINK_CONTEXT)\n"
    # even with both values on the command line the mistake is reported
    r = jc("--data-dir", str(jc.tmp / "d"), "--cluster", "local", "stream", "ls", "-j")
    assert error(r) == "unknown context 'nope' (from JETLINK_CONTEXT)"
    # a command's help and the context verbs still work
    assert ok(jc("stream", "ls", "--help")).stdout.startswith("Usage: jetlink stream ls")
    assert doc(jc("context", "ls", "-j")) == []


def test_unknown_or_invalid_context_option(jc, env):
    env.setenv("JETLINK_CONTEXT", "nope")
    assert error(jc("--context", "other", "stream", "ls", "-j")) == (
        "unknown context 'other' (from --context)"
    )
    assert error(jc("--context", "../x", "stream", "ls", "-j"), 2) == (
        "invalid context name '../x': use 1 to 100 letters, digits, '_' or '-' (from --context)"
    )


def test_a_misspelt_context_gets_the_closest_name(jc):
    ok(jc("context", "add", "prod"))
    for args in (["context", "select", "prdo"], ["context", "rm", "prdo", "-f"],
                 ["--context", "prdo", "stream", "ls"]):
        r = jc(*args)
        assert r.exit_code == 1 and r.stderr.endswith(": did you mean prod?\n"), (args, r.stderr)
        assert r.stderr.startswith("jetlink: error: unknown context 'prdo'")


def test_selected_context_that_no_longer_exists(jc):
    ok(jc("context", "add", "a", "--select"))
    (jc.config / "context" / "a.toml").unlink()
    assert error(jc("stream", "ls", "-j")) == (
        f"the selected context 'a' does not exist (selected in {jc.config / 'context.txt'})"
    )
    # a command line naming its own target runs there, with a warning; context ls says so
    missing = f"the selected context 'a' does not exist (selected in {jc.config / 'context.txt'})"
    (jc.tmp / "dd").mkdir()
    r = ok(jc("--data-dir", str(jc.tmp / "dd"), "stream", "ls", "-j"))
    assert (json.loads(r.stdout), r.stderr) == ([], (
        f"jetlink: warning: {missing}; not used: --data-dir names the target (jetlink context "
        "select NAME mends the selection)\n"))
    # --cluster alone names no data directory (the removed context's may have been another)
    assert error(jc("--cluster", "local", "stream", "ls", "-j")) == missing
    env = {"JETLINK_DATA_DIR": str(jc.tmp / "dd")}
    r = runner.invoke(app, ["stream", "ls"], prog_name="jetlink", env=env)
    assert r.exit_code == 0 and "not used: JETLINK_DATA_DIR names the target" in r.stderr
    r = runner.invoke(app, ["stream", "ls"], prog_name="jetlink",
                      env={"NATS_URL": "nats://127.0.0.1:1"})
    assert "not used: NATS_URL names the target" in r.stderr
    assert "could not connect to nats://127.0.0.1:1" in r.stderr
    r = ok(jc("context", "ls"))
    assert r.stderr == (f"jetlink: warning: {missing}: a command that names no target of "
                        "its own is refused until jetlink context select NAME\n")
    # context show (no NAME) shows what is in force, no context, and why, exit 0
    r = ok(jc("context", "show", "-j"))
    assert json.loads(r.stdout) == {"name": None, "target": {"kind": "error",
                                                             "error": missing}}
    assert r.stderr == f"jetlink: warning: {missing}\n"
    ok(jc("context", "add", "b"))
    assert doc(jc("context", "select", "b", "-j"))["name"] == "b"
    assert doc(jc("stream", "ls", "-j")) == []


def test_broken_context_file(jc):
    ok(jc("context", "add", "good"))
    path = jc.config / "context" / "bad.toml"
    path.write_text("cluster = \n")
    ok(jc("context", "select", "good"))
    assert doc(jc("stream", "ls", "-j")) == []  # only the context in force is read
    r = jc("--context", "bad", "stream", "ls")
    assert r.exit_code == 1
    assert r.stderr.startswith(f"jetlink: error: {path}: not a valid TOML file: ")
    assert "Traceback" not in r.output
    # ls reports it and goes on; show names it; rm removes it
    r = jc("context", "ls", "-j")
    assert [d["name"] for d in doc(r)] == ["good"]
    assert r.stderr.startswith(f"jetlink: warning: {path}: not a valid TOML file: ")
    assert error(jc("context", "show", "bad", "-j")).startswith(f"{path}: not a valid TOML")
    assert doc(jc("context", "rm", "bad", "-f", "-j")) == {"success": True}
    assert not path.exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("cluster = 5\n", "cluster must be a string, not int"),
        (
            'colour = "red"\n',
            "unknown key 'colour' (known: description, data_dir, cluster, rest_url, server, "
            "user, password, creds, nkey, tlscert, tlskey, tlsca, tlsfirst, js_domain, "
            "inbox_prefix, timeout, nats_context)",
        ),
        (
            'cluster = "a/b"\n',
            "invalid cluster name 'a/b': use 1 to 64 letters, digits, '_' or '-'",
        ),
        ("[data_dir]\nx = 1\n", "data_dir must be a string, not dict"),
    ],
    ids=["type", "unknown-key", "cluster-name", "table"],
)
def test_invalid_context_values(jc, text, message):
    path = jc.config / "context" / "bad.toml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    assert error(jc("--context", "bad", "stream", "ls", "-j")) == f"{path}: {message}"


def test_context_verbs_work_when_the_context_in_force_is_unusable(jc, env):
    blocker = jc.tmp / "a-file"
    blocker.write_text("")
    ok(jc("context", "add", "broken", "--data-dir", str(blocker / "sub"), "--select"))
    assert jc("stream", "ls", "-j").exit_code == 1  # the data directory cannot be created
    assert [d["name"] for d in doc(jc("context", "ls", "-j"))] == ["broken"]
    assert doc(jc("context", "show", "-j"))["name"] == "broken"
    assert doc(jc("context", "rm", "broken", "-f", "-j")) == {"success": True}
    assert doc(jc("stream", "ls", "-j")) == []


# -- the verbs ------------------------------------------------------------------------------


def test_add_json_and_file(jc):
    r = jc("context", "add", "prod", "--data-dir", str(jc.tmp / "prod"), "--cluster", "east",
           "--description", "Production", "-j")
    assert doc(r) == ctx_doc(jc, "prod", description="Production",
                             data_dir=str(jc.tmp / "prod"), cluster="east")
    path = jc.config / "context" / "prod.toml"
    want = {"description": "Production", "data_dir": str(jc.tmp / "prod"), "cluster": "east"}
    assert path.read_text() == tomli_w.dumps(want)
    assert tomllib.loads(path.read_text()) == want
    assert not (jc.config / "context.txt").exists()  # not selected


def test_add_human_and_select(jc):
    r = ok(jc("context", "add", "dev", "--select"))
    assert r.stdout == "Context dev was created and selected\n"
    assert (jc.config / "context.txt").read_text() == "dev\n"
    assert (jc.config / "context" / "dev.toml").read_text() == ""  # nothing set
    assert ok(jc("context", "add", "other")).stdout == "Context other was created\n"


def test_add_stores_an_absolute_data_dir(jc, monkeypatch):
    monkeypatch.chdir(jc.tmp)
    monkeypatch.setenv("HOME", str(jc.tmp / "home"))
    d = doc(jc("context", "add", "rel", "--data-dir", "here/data", "-j"))
    assert d["data_dir"] == str(jc.tmp / "here" / "data")
    d = doc(jc("context", "add", "home", "--data-dir", "~/x", "-j"))
    assert d["data_dir"] == str(jc.tmp / "home" / "x")


def test_add_refuses_an_existing_name(jc):
    ok(jc("context", "add", "prod", "--cluster", "east"))
    assert error(jc("context", "add", "prod", "--cluster", "west", "-j")) == (
        "context prod already exists (jetlink context add prod --update changes it)"
    )
    r = jc("context", "add", "prod")
    assert (r.exit_code, r.stderr) == (1, "jetlink: error: context prod already exists "
                                          "(jetlink context add prod --update changes it)\n")
    assert jc.store.load("prod").cluster == "east"


def test_add_refuses_a_bad_cluster(jc):
    assert error(jc("context", "add", "x", "--cluster", "a.b", "-j"), 2) == (
        "invalid cluster name 'a.b': use 1 to 64 letters, digits, '_' or '-'"
    )
    assert jc.store.names() == []


BAD_NAMES = ["../x", "a.b", "a b", "", "x" * 101, "a/b", "é"]


@pytest.mark.parametrize("name", BAD_NAMES, ids=["dotdot", "dot", "space", "empty", "long",
                                                  "slash", "unicode"])
@pytest.mark.parametrize("verb", [("add",), ("select",), ("show",), ("rm", "-f")],
                         ids=["add", "select", "show", "rm"])
def test_bad_names(jc, verb, name):
    r = jc("context", verb[0], name, *verb[1:], "-j")
    # a long name is cut to its first 40 characters and its length (core/errors.py clip)
    shown = repr(name) if len(name) <= 100 else "'" + "x" * 40 + "... (101 characters)'"
    # a usage error (2) in every verb, as any bad value of a command line
    assert error(r, 2) == f"invalid context name {shown}: use 1 to 100 letters, digits, '_' " \
        "or '-'"
    assert not (jc.tmp / "config").exists() or jc.store.names() == []


def test_longest_name(jc):
    name = "a" * 100
    assert doc(jc("context", "add", name, "-j"))["name"] == name


def test_ls(jc):
    assert doc(jc("context", "ls", "-j")) == []
    assert ok(jc("context", "ls")).stdout == "No contexts defined\n"
    ok(jc("context", "add", "west", "--data-dir", str(jc.tmp / "w"), "--cluster", "west",
          "--description", "West coast"))
    ok(jc("context", "add", "east", "--select"))
    assert doc(jc("context", "ls", "-j")) == [
        ctx_doc(jc, "east", selected=True),
        ctx_doc(jc, "west", description="West coast", data_dir=str(jc.tmp / "w"),
                cluster="west"),
    ]
    assert ok(jc("context", "ls", "--names")).stdout == "east\nwest\n"
    assert ok(jc("context", "ls", "-n")).stdout == "east\nwest\n"
    out = ok(jc("context", "ls")).stdout.splitlines()
    assert out[0].strip() == "Contexts"
    header = out[2]
    for column in ("Name", "Selected", "Data Dir", "Cluster", "Server", "Description"):
        assert column in header
    east = next(line for line in out if " east " in line)
    assert "*" in east
    west = next(line for line in out if " west " in line)
    assert "*" not in west and str(jc.tmp / "w") in west and "West coast" in west


def test_select(jc, env):
    ok(jc("context", "add", "a", "--cluster", "ac"))
    ok(jc("context", "add", "b"))
    selected = doc(jc("context", "select", "a", "-j"))
    # context show's document (what overrides it, where commands go), as the help says
    assert selected == doc(jc("context", "show", "a", "-j"))
    assert {k: v for k, v in selected.items() if k not in ("overridden_by", "target")} == \
        ctx_doc(jc, "a", cluster="ac", selected=True)
    r = ok(jc("context", "select", "b"))
    assert (r.stdout, r.stderr) == ("Context b is selected\n", "")
    assert (jc.config / "context.txt").read_text() == "b\n"
    assert error(jc("context", "select", "nope", "-j")) == "unknown context 'nope'"
    assert (jc.config / "context.txt").read_text() == "b\n"
    env.setenv("JETLINK_CONTEXT", "a")
    r = ok(jc("context", "select", "b"))
    assert r.stderr == "JETLINK_CONTEXT=a overrides the selected context\n"


def test_show(jc, env):
    default = {"kind": "embedded", "data_dir": str(jc.tmp / "xdg-data" / "jetlink")}
    assert doc(jc("context", "show", "-j")) == {"name": None, "target": default}
    assert ok(jc("context", "show")).stdout == (
        "No context is in force (jetlink context select NAME)\n"
        f"Target: embedded engine, data directory {jc.tmp / 'xdg-data' / 'jetlink'} (no "
        "server named: --server, NATS_URL, a context's server or --nats-context)\n"
    )
    ok(jc("context", "add", "prod", "--data-dir", str(jc.tmp / "p"), "--cluster", "east",
          "--description", "Production", "--select"))
    ok(jc("context", "add", "dev"))
    prod = ctx_doc(jc, "prod", description="Production", data_dir=str(jc.tmp / "p"),
                   cluster="east", selected=True)
    in_force = {"kind": "embedded", "data_dir": str(jc.tmp / "p")}  # prod's data directory
    assert doc(jc("context", "show", "-j")) == {**prod, "overridden_by": {},
                                                "target": in_force}
    # a context not in force: the target --context dev would give (dev sets no data dir)
    assert doc(jc("context", "show", "dev", "-j")) == {**ctx_doc(jc, "dev"), "overridden_by": {},
                                                       "target": default}
    assert doc(jc("--context", "dev", "context", "show", "-j"))["name"] == "dev"
    assert error(jc("context", "show", "nope", "-j")) == "unknown context 'nope'"
    assert ok(jc("context", "show")).stdout == (
        "Context prod\n"
        "Description:  Production\n"
        f"Data Dir:     {jc.tmp / 'p'}\n"
        "Cluster:      east\n"
        "Selected:     true\n"
        f"Path:         {jc.config / 'context' / 'prod.toml'}\n"
        f"Target: embedded engine, data directory {jc.tmp / 'p'} (no server named: "
        "--server, NATS_URL, a context's server or --nats-context)\n"
    )


def test_show_lists_the_environment_overrides(jc, env):
    ok(jc("context", "add", "prod", "--data-dir", str(jc.tmp / "p"), "--cluster", "east",
          "--select"))
    ok(jc("context", "add", "dev"))
    env.setenv("JETLINK_CLUSTER", "west")
    env.setenv("JETLINK_DATA_DIR", "/srv/jl")
    d = doc(jc("context", "show", "-j"))
    assert d["name"] == "prod"
    assert d["overridden_by"] == {"JETLINK_DATA_DIR": "/srv/jl", "JETLINK_CLUSTER": "west"}
    out = ok(jc("context", "show")).stdout.splitlines()
    assert out[-2:] == [
        "JETLINK_DATA_DIR=/srv/jl overrides data_dir",
        "JETLINK_CLUSTER=west overrides cluster",
    ]
    env.setenv("JETLINK_CLUSTER", "")  # empty: not set (as click reads it)
    assert doc(jc("context", "show", "-j"))["overridden_by"] == {"JETLINK_DATA_DIR": "/srv/jl"}
    # JETLINK_CONTEXT puts dev in force: show (no NAME) shows dev; prod is overridden by it
    env.delenv("JETLINK_DATA_DIR")
    env.setenv("JETLINK_CONTEXT", "dev")
    d = doc(jc("context", "show", "-j"))
    assert (d["name"], d["selected"], d["overridden_by"]) == ("dev", False, {})
    d = doc(jc("context", "show", "prod", "-j"))
    assert d["overridden_by"] == {"JETLINK_CONTEXT": "dev"}
    env.setenv("JETLINK_DATA_DIR", "/srv/jl")  # dev sets no data dir: nothing overridden
    assert doc(jc("context", "show", "dev", "-j"))["overridden_by"] == {}
    env.delenv("JETLINK_DATA_DIR")
    assert ok(jc("context", "show", "prod")).stdout.splitlines()[-1] == (
        "JETLINK_CONTEXT=dev puts context dev in force instead"
    )
    # the command line beats JETLINK_CONTEXT
    d = doc(jc("--context", "prod", "context", "show", "-j"))
    assert (d["name"], d["overridden_by"]) == ("prod", {})


def test_show_and_keep_rest_url(jc):
    path = jc.config / "context" / "confluent.toml"
    path.parent.mkdir(parents=True)
    path.write_text('description = "REST"\nrest_url = "http://localhost:8090"\n')
    d = doc(jc("context", "show", "confluent", "-j"))
    assert d == {**ctx_doc(jc, "confluent", description="REST",
                           rest_url="http://localhost:8090"), "overridden_by": {},
                 "target": {"kind": "embedded",
                            "data_dir": str(jc.tmp / "xdg-data" / "jetlink")}}
    assert "REST URL:     http://localhost:8090" in ok(jc("context", "show", "confluent")).stdout
    jc.store.select("confluent")
    assert tomllib.loads(path.read_text())["rest_url"] == "http://localhost:8090"


def test_rm(jc):
    ok(jc("context", "add", "a"))
    ok(jc("context", "add", "b", "--select"))
    r = jc("context", "rm", "a")  # no terminal, no -f
    assert (r.exit_code, r.stderr) == (
        2, "jetlink: error: no terminal to confirm on: pass -f/--force to remove context a\n"
    )
    assert error(jc("context", "rm", "a", "-j"), code=2) == (
        "no terminal to confirm on: pass -f/--force to remove context a"
    )
    assert jc.store.names() == ["a", "b"]
    assert ok(jc("context", "rm", "a", "-f")).stdout == "Context a was removed\n"
    assert error(jc("context", "rm", "a", "-f", "-j")) == "unknown context 'a'"
    # the selected context: refused without -f (natscli's words), even where one may confirm
    r = jc("context", "rm", "b")
    assert (r.exit_code, r.stderr) == (1, "jetlink: error: cannot remove the selected "
                                       "context, select another one or use the unselect "
                                       "command (or pass -f/--force)\n")
    assert jc.store.names() == ["b"] and jc.store.selected() == "b"
    # with -f it is removed and unselected, and said so
    assert ok(jc("context", "rm", "b", "--force")).stdout == \
        "Context b was removed; no context is selected now\n"
    assert not (jc.config / "context.txt").exists()
    assert jc.store.names() == []
    assert doc(jc("stream", "ls", "-j")) == []
    ok(jc("context", "add", "c", "--select"))
    assert doc(jc("context", "rm", "c", "--force", "-j")) == {"success": True}
    assert jc.store.selected() is None


def test_unselect(jc):
    """natscli's context unselect: no context selected afterwards, said either way."""
    assert ok(jc("context", "unselect")).stdout == "No context currently selected\n"
    ok(jc("context", "add", "a", "--select"))
    assert ok(jc("context", "unselect")).stdout == 'Unselected the "a" context\n'
    assert jc.store.selected() is None and jc.store.names() == ["a"]
    ok(jc("context", "select", "a"))
    assert doc(jc("context", "unselect", "-j")) == {"unselected": "a"}
    assert doc(jc("context", "unselect", "-j")) == {"unselected": None}


def test_previous_goes_back_and_forth(jc):
    """natscli's context previous: the context selected before (or before unselect) is
    selected again and shown; the current one becomes the previous; none recorded: what
    is in force is shown; a removed context is forgotten."""
    assert doc(jc("context", "previous", "-j"))["name"] is None
    ok(jc("context", "add", "a", "--cluster", "ca", "--select"))
    ok(jc("context", "add", "b", "--cluster", "cb", "--select"))
    assert doc(jc("context", "previous", "-j"))["name"] == "a"
    assert jc.store.selected() == "a"
    assert ok(jc("context", "previous")).stdout.startswith("Context b\n")
    assert jc.store.selected() == "b"
    ok(jc("context", "unselect"))
    assert doc(jc("context", "previous", "-j"))["name"] == "b"
    ok(jc("context", "rm", "b", "-f"))
    assert jc.store.previous() is None
    assert (jc.config / "previous-context.txt").exists() is False
    # the selected context removed: the one selected before it is still the previous one
    ok(jc("context", "add", "c", "--cluster", "cc", "--select"))
    ok(jc("context", "select", "a"))
    assert (jc.store.selected(), jc.store.previous()) == ("a", "c")
    ok(jc("context", "rm", "a", "-f"))
    assert (jc.store.selected_or_none(), jc.store.previous()) == (None, "c")
    assert doc(jc("context", "previous", "-j"))["name"] == "c"
    assert jc.store.selected() == "c"


def test_names_differing_only_in_case_are_refused(jc):
    ok(jc("context", "add", "prod"))
    r = jc("context", "add", "PROD")
    assert (r.exit_code, r.stderr) == (1, "jetlink: error: context PROD differs from context "
                                       "prod only in case: their files would be one on a "
                                       "case-insensitive filesystem; choose another name\n")
    assert jc.store.names() == ["prod"]


def test_a_config_directory_that_cannot_hold_contexts_is_one_line(jc, env, tmp_path):
    """XDG_CONFIG_HOME a file, the context directory a file, a context file a directory:
    one line naming the path (exit 1), never a traceback; the data-dir verbs still run
    (a path through a file holds no selection)."""
    afile = tmp_path / "afile"
    afile.write_text("")
    env.setenv("XDG_CONFIG_HOME", str(afile))
    r = jc("context", "add", "z", "--cluster", "a")
    assert (r.exit_code, r.stderr) == (
        1, f"jetlink: error: cannot write {afile}/jetlink/context/z.toml: "
        f"{afile}/jetlink: Not a directory\n")
    assert doc(jc("stream", "ls", "-j")) == []
    env.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    jc.config.mkdir(parents=True)
    (jc.config / "context").write_text("")
    r = jc("context", "add", "z")
    assert r.exit_code == 1 and r.stderr == (
        f"jetlink: error: cannot write {jc.config}/context/z.toml: {jc.config}/context: "
        "File exists\n"), r.stderr
    (jc.config / "context").unlink()
    (jc.config / "context" / "d.toml").mkdir(parents=True)
    line = (f"jetlink: error: context d: {jc.config}/context/d.toml is not a file (a "
            "directory of that name is there): move it out of the way\n")
    for args in (["add", "d"], ["rm", "d", "-f"], ["select", "d"], ["show", "d"]):
        r = jc("context", *args)
        assert (r.exit_code, r.stderr) == (1, line), (args, r.stderr)
    assert (jc.config / "context" / "d.toml").is_dir()


def test_rm_asks_on_a_terminal(jc, monkeypatch):
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: True)
    ok(jc("context", "add", "a"))
    r = jc("context", "rm", "a", input="n\n")
    assert r.exit_code == 1 and "aborted: did not remove context a" in r.stderr
    assert jc.store.names() == ["a"]
    assert ok(jc("context", "rm", "a", input="y\n")).stdout.endswith("Context a was removed\n")


# -- files and modes ---------------------------------------------------------------------


def mode(path):
    return stat.S_IMODE(path.stat().st_mode)


def test_file_modes_whatever_the_umask(jc):
    old = os.umask(0)
    try:
        ok(jc("context", "add", "prod", "--cluster", "east", "--select"))
    finally:
        os.umask(old)
    assert mode(jc.config) == 0o700
    assert mode(jc.config / "context") == 0o700
    assert mode(jc.config / "context" / "prod.toml") == 0o600
    assert mode(jc.config / "context.txt") == 0o600
    assert sorted(p.name for p in (jc.config / "context").iterdir()) == ["prod.toml"]  # no temp


def test_config_dir():
    assert config_dir({"XDG_CONFIG_HOME": "/x/cfg", "HOME": "/h"}) == (
        config_dir({"XDG_CONFIG_HOME": "/x/cfg"})
    )
    assert str(config_dir({"XDG_CONFIG_HOME": "/x/cfg", "HOME": "/h"})) == "/x/cfg/jetlink"
    for xdg in ("", "relative/cfg"):
        assert str(config_dir({"XDG_CONFIG_HOME": xdg, "HOME": "/h"})) == "/h/.config/jetlink"
    assert str(config_dir({"HOME": "/h"})) == "/h/.config/jetlink"


def test_store_api(tmp_path):
    store = ContextStore(tmp_path / "cfg")
    assert (store.names(), store.selected(), store.in_force()) == ([], None, None)
    store.add(Context("a", description="A", data_dir="/d", cluster="c"))
    with pytest.raises(JetlinkError, match="context a already exists"):
        store.add(Context("a"))
    assert store.load("a") == Context("a", description="A", data_dir="/d", cluster="c")
    store.save(Context("a", cluster="other"))  # save replaces
    assert store.load("a").to_toml() == {"cluster": "other"}
    assert store.select("a") == Context("a", cluster="other")
    assert store.selected() == "a"
    assert store.in_force() == Context("a", cluster="other")
    with pytest.raises(NotFoundError) as exc:
        store.in_force("zz", source="JETLINK_CONTEXT")
    assert (exc.value.description, exc.value.field) == (
        "unknown context 'zz' (from JETLINK_CONTEXT)", "JETLINK_CONTEXT"
    )
    assert store.remove("a") == Context("a", cluster="other")
    assert (store.names(), store.selected()) == ([], None)
    with pytest.raises(NotFoundError):
        store.remove("a")
    with pytest.raises(JetlinkError) as exc:
        validate_context_name("../etc")
    assert exc.value.field == "name"
    with pytest.raises(JetlinkError) as exc:
        store.path("..")
    assert exc.value.field == "name"


def test_store_ignores_foreign_files(tmp_path):
    store = ContextStore(tmp_path)
    store.add(Context("a"))
    (tmp_path / "context" / "notes.txt").write_text("x")
    (tmp_path / "context" / "bad name.toml").write_text("")
    assert store.names() == ["a"]


def test_broken_selection_file(jc):
    jc.config.mkdir(parents=True)
    (jc.config / "context.txt").write_text("../../etc\n")
    assert error(jc("stream", "ls", "-j")) == (
        f"{jc.config / 'context.txt'}: invalid context name '../../etc'; "
        "select a context again (jetlink context select NAME)"
    )
    ok(jc("context", "add", "a"))
    (jc.config / "context.txt").write_text("../../etc\n")
    shown = ok(jc("context", "show", "a"))  # the warning once, the context shown
    assert shown.stderr == (f"jetlink: warning: {jc.config / 'context.txt'}: invalid context "
                            "name '../../etc'; select a context again (jetlink context "
                            "select NAME)\n")
    ok(jc("context", "select", "a"))
    assert doc(jc("stream", "ls", "-j")) == []


def test_context_add_checks_what_a_connection_needs_before_it_writes(jc):
    """A client certificate without its key, a password without a user, an invalid natscli
    context name: refused at add, nothing written; a natscli context not there yet: a
    warning."""
    for args, said in (
            (["--server", "nats://h:1", "--tlscert", "a.pem"],
             "context x: a client certificate needs both tlscert and tlskey (--tlscert, "
             "--tlskey): tlskey is missing"),
            (["--server", "nats://h:1", "--password", "p"],
             "context x: password needs user (--user): a password alone is no credential"),
            (["--nats-context", "../ops"],
             "invalid natscli context name '../ops': a natscli context name is not empty, "
             "has no '..', '/', '\\' or NUL and makes a file name NAME.json of at most 255 "
             "bytes (or is a file ending in .json that exists)"),
            (["--nats-context", "y" * 5000],  # (no file can have that name: never stored)
             f"invalid natscli context name '{'y' * 39}... (5,002 characters): a natscli "
             "context name is not empty, has no '..', '/', '\\' or NUL and makes a file name "
             "NAME.json of at most 255 bytes (or is a file ending in .json that exists)")):
        assert error(jc("context", "add", "x", *args, "-j"), code=2) == said  # usage errors
        assert jc.store.names() == []
    r = ok(jc("context", "add", "x", "--nats-context", "ops"))
    assert r.stderr == (f"jetlink: warning: natscli context ops is not in "
                        f"{jc.tmp / 'config' / 'nats' / 'context'} (yet): commands using "
                        "context x fail until it is\n")
    # there but broken: said at add, as a command using it would say it
    broken = jc.tmp / "config" / "nats" / "context" / "bj.json"
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_text("{bad")
    r = ok(jc("context", "add", "y", "--nats-context", "bj"))
    assert r.stderr.startswith(f"jetlink: warning: natscli context {broken} is not valid JSON")
    assert r.stderr.endswith(": commands using context y fail until it is mended\n")


def test_context_ls_shows_where_a_live_context_points_and_info_is_show(jc):
    ok(jc("context", "add", "prod", "--server", "nats://ops:s3cret@n1:4222"))
    ok(jc("context", "add", "ops", "--nats-context", "ops"))
    out = ok(jc("context", "ls")).stdout
    prod = next(line for line in out.splitlines() if " prod " in line)
    assert "nats://ops:********@n1:4222" in prod and "s3cret" not in out
    assert "natscli context ops" in next(line for line in out.splitlines() if " ops " in line)
    assert ok(jc("context", "info", "prod")).stdout == ok(jc("context", "show", "prod")).stdout


def test_context_add_update_changes_only_what_is_given_and_keeps_the_selection(jc):
    ok(jc("context", "add", "prod", "--server", "nats://n1:4222", "--user", "ops",
          "--password", "old", "--description", "Production", "--select"))
    r = ok(jc("context", "add", "prod", "--update", "--password", "new"))
    assert r.stdout == "Context prod was updated\n"
    got = jc.store.load("prod")
    assert (got.server, got.user, got.password, got.description) == (
        "nats://n1:4222", "ops", "new", "Production")
    assert jc.store.selected() == "prod"
    ok(jc("context", "add", "prod", "--update", "--unset", "password", "--unset", "user"))
    got = jc.store.load("prod")
    assert (got.user, got.password, got.server) == (None, None, "nats://n1:4222")
    for args, said in (
            (["prod", "--update"], "--update: give the settings to change (or --unset KEY)"),
            (["prod", "--update", "--unset", "nope"], "--unset 'nope': not a context setting"),
            (["prod", "--unset", "user"], "--unset KEY changes an existing context: give "
                                          "--update"),
            (["prod", "--update", "--password", "x"], "context prod: password needs user"),
            (["gone", "--update", "--user", "u"], "unknown context 'gone'")):
        r = jc("context", "add", *args)
        assert r.exit_code in (1, 2) and said in r.stderr, (args, r.stderr)
    assert jc.store.load("prod") == got  # the refused ones changed nothing


def test_a_file_from_before_the_connection_rules_still_loads_and_can_be_mended(jc):
    """A context file with a password and no user (written before add checked it) is not a
    broken file: it lists, selects and shows; --update --unset mends it."""
    path = jc.config / "context" / "old.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('server = "nats://127.0.0.1:1"\npassword = "p"\n')
    path.chmod(0o600)
    assert [d["name"] for d in doc(jc("context", "ls", "-j"))] == ["old"]
    ok(jc("context", "select", "old"))
    ok(jc("context", "show", "old"))
    r = jc("context", "add", "old", "--update", "--timeout", "2s")  # the result refused
    assert r.exit_code == 2 and "password needs user" in r.stderr
    ok(jc("context", "add", "old", "--update", "--unset", "password"))
    assert jc.store.load("old").password is None


def test_show_says_why_the_selected_contexts_server_is_not_the_target(jc, env):
    """A selected context with a server, set aside by JETLINK_DATA_DIR: context show's
    target says that (not "no server named"), in JSON too; named (--context), it is used."""
    ok(jc("context", "add", "dev", "--server", "nats://127.0.0.1:1", "--select"))
    env.setenv("JETLINK_DATA_DIR", str(jc.tmp / "d"))
    why = ("the selected context dev's server is not used: JETLINK_DATA_DIR addresses the "
           "embedded engine")
    assert ok(jc("context", "show")).stdout.splitlines()[-1] == (
        f"Target: embedded engine, data directory {jc.tmp / 'd'} ({why})")
    assert doc(jc("context", "show", "-j"))["target"] == {
        "kind": "embedded", "data_dir": str(jc.tmp / "d"), "server_set_aside": why}
    assert doc(jc("--context", "dev", "context", "show", "-j"))["target"]["kind"] == "live"


@pytest.mark.parametrize(("flag", "rule"), [
    ("--server", "give server URLs, e.g. nats://127.0.0.1:4222"),
    ("--user", "give a user name or a token"),
    ("--password", "give the password"),
    ("--creds", "give a credentials file"),
    ("--nkey", "give an NKEY seed file"),
    ("--tlscert", "give a certificate file"),
    ("--tlskey", "give a private key file"),
    ("--tlsca", "give a certificate authority file"),
    ("--js-domain", "a domain is one subject token"),
    ("--inbox-prefix", "a prefix is a subject"),
    ("--nats-context", "give a natscli context name"),
])
def test_context_add_refuses_an_empty_server_setting_as_a_usage_error(jc, flag, rule):
    """An empty value is neither a setting nor dropped in silence: a usage error naming the
    option, the value and the rule, as --data-dir '' is; nothing is written, on --update
    neither."""
    key = flag[2:].replace("-", "_")
    said = (f"invalid value for {flag}: '' is empty ({rule}; to remove the setting: "
            f"--update --unset {key})")
    assert error(jc("context", "add", "x", flag, "", "-j"), code=2) == said
    assert jc.store.names() == []
    ok(jc("context", "add", "x"))
    assert error(jc("context", "add", "x", "--update", flag, "", "-j"), code=2) == said
    assert jc.store.load("x") == Context(name="x")


def test_a_context_file_naming_an_invalid_natscli_context_is_a_broken_file(jc):
    """nats_context = "../x" in a context file: refused when the file is read (exit 1
    naming the file, as any broken key), and context ls warns of it."""
    path = jc.config / "context" / "t2.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('nats_context = "../x"\n')
    path.chmod(0o600)
    said = (f"{path}: invalid natscli context name '../x': a natscli context name is not "
            "empty, has no '..', '/', '\\' or NUL and makes a file name NAME.json of at most "
            "255 bytes (or is a file ending in .json that exists)")
    r = jc("--context", "t2", "stream", "ls")
    assert (r.exit_code, r.stderr) == (1, f"jetlink: error: {said}\n")
    r = ok(jc("context", "ls", "-j"))
    assert (json.loads(r.stdout), r.stderr) == ([], f"jetlink: warning: {said}\n")
    with pytest.raises(JetlinkError, match="invalid natscli context name"):
        Context(name="t2", nats_context="a/b")


def test_context_dash_is_previous(jc):
    """natscli's `context -`, the alias of context previous (hidden from the lists)."""
    ok(jc("context", "add", "a", "--select"))
    ok(jc("context", "add", "b", "--select"))
    assert doc(jc("context", "-", "-j"))["name"] == "a"
    assert ok(jc("context", "-")).stdout.startswith("Context b\n")
    assert jc.store.selected() == "b"
    assert " - " not in ok(jc("context", "--help")).stdout


def test_selecting_the_selected_context_makes_it_the_previous_one(jc):
    """jsm.go natscontext FileSelector.SetSelected writes the selection it replaces to
    previous-context.txt, the same name too."""
    ok(jc("context", "add", "a", "--select"))
    ok(jc("context", "add", "b", "--select"))
    assert jc.store.previous() == "a"
    ok(jc("context", "select", "b"))
    assert (jc.store.previous(), jc.store.selected()) == ("b", "b")
    assert doc(jc("context", "previous", "-j"))["name"] == "b"


def test_show_lists_natscli_variables_that_override_the_server_settings(jc, env):
    """NATS_URL, NATS_USER, NATS_PASSWORD... come before a context's server settings
    (docs/live.md): context show lists those overriding what it sets, the password masked,
    in the URL too."""
    ok(jc("context", "add", "live", "--server", "nats://127.0.0.1:4222", "--user", "bob",
          "--password", "pw"))
    env.setenv("NATS_URL", "nats://ann:secret@n1:4222")
    env.setenv("NATS_PASSWORD", "s3cret")
    env.setenv("NATS_CREDS", "/etc/x.creds")  # the context sets no creds: not listed
    d = doc(jc("context", "show", "live", "-j"))
    assert d["overridden_by"] == {"NATS_URL": "nats://ann:********@n1:4222",
                                  "NATS_PASSWORD": "********"}
    out = ok(jc("context", "show", "live")).stdout.splitlines()
    assert out[-2:] == ["NATS_URL=nats://ann:********@n1:4222 overrides server",
                        "NATS_PASSWORD=******** overrides password"]


def test_show_lists_nats_context_overriding_the_contexts_natscli_context(jc, env):
    ok(jc("context", "add", "ops", "--nats-context", "good", "--select"))
    env.setenv("NATS_CONTEXT", "dev")
    assert doc(jc("context", "show", "-j"))["overridden_by"] == {"NATS_CONTEXT": "dev"}
    assert ok(jc("context", "show")).stdout.splitlines()[-1] == (
        "NATS_CONTEXT=dev overrides nats_context")
    ok(jc("context", "add", "plain", "--data-dir", str(jc.tmp / "p")))
    assert doc(jc("context", "show", "plain", "-j"))["overridden_by"] == {}  # (sets none)
