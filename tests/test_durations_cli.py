"""One rule for every duration a person types, natscli's: a unit is required.

A bare number other than 0 (``--seen-critical 5``, ``--timeout 1``, ``NATS_TIMEOUT=5``,
``io.nats.monitor.seen-critical: 5``) is refused with "missing unit, e.g. 5s" (exit 2 on the
command line), where it was read as nanoseconds by some flags and as seconds by others.

The command tree is walked (``typer.main.get_command(app)``, lazily loaded groups included),
so a duration option added later is checked without touching this file: every option of the
DurationType (cli/options.py) refuses a bare number naming itself, and every option that looks
like a duration (by its name or its metavar) must have that type.
"""

from __future__ import annotations

import re

import pytest
from helpers import ok
from typer import _click as click
from typer.core import TyperOption
from typer.main import get_command
from typer.testing import CliRunner

from jetlink.cli.main import app
from jetlink.cli.options import DurationType

ROOT = get_command(app)
runner = CliRunner()


def walk(path, cmd, parent=None):
    ctx = click.Context(cmd, info_name=path[-1], parent=parent, **cmd.context_settings)
    yield path, cmd, ctx
    for name in cmd.list_commands(ctx) if hasattr(cmd, "list_commands") else []:
        yield from walk([*path, name], cmd.get_command(ctx, name), ctx)


OPTIONS = [(path, param) for path, cmd, _ in walk(["jetlink"], ROOT) for param in cmd.params
           if isinstance(param, TyperOption)]


def duration_type(param) -> DurationType | None:
    """The option's DurationType: its ``parser`` (Typer wraps it in a parameter type whose
    ``func`` it is), None for any other option."""
    func = getattr(param.type, "func", None)
    return func if isinstance(func, DurationType) else None


DURATIONS = [(path, p) for path, p in OPTIONS if duration_type(p) is not None]
IDS = [" ".join([*path, max(p.opts, key=len)]) for path, p in DURATIONS]

# A part of an option's name (split at "-") that says it takes a duration.
DURATION_WORDS = {"timeout", "interval", "age", "window", "seen", "ttl", "wait", "refresh",
                  "since", "expire", "threshold", "inactive", "delay", "duration", "heartbeat",
                  "every", "after", "grace", "period", "idle", "positions", "backoff", "keepalive"}
# Metavars that say the same.
DURATION_METAVARS = {"DURATION", "SECONDS", "SECS", "MS", "MILLIS", "TTL", "TIMEOUT", "INTERVAL",
                     "AGE", "WINDOW"}
# Options whose name has such a word but that take no duration, and why.
NOT_DURATIONS = {
    "--backoff": "the backoff mode (linear, none)",
    "--backoff-steps": "a number of steps",
}


def test_the_tree_has_the_duration_options_of_the_report():
    names = set(IDS)
    assert {"jetlink --timeout", "jetlink kv watch --timeout",
            "jetlink server check stream --seen-critical",
            "jetlink server check stream --peer-seen-critical",
            "jetlink server check consumer --last-delivery-critical",
            "jetlink server check consumer --last-ack-critical",
            "jetlink dr check --seen-warn", "jetlink dr check --seen-critical",
            "jetlink dr check --positions-warn", "jetlink dr check --positions-critical",
            "jetlink serve --request-timeout", "jetlink bench serve --timeout"} <= names
    assert len(DURATIONS) >= 50, IDS


@pytest.mark.parametrize(("path", "param"), DURATIONS, ids=IDS)
def test_every_duration_option_refuses_a_bare_number(path, param, tmp_path, monkeypatch):
    monkeypatch.setenv("JETLINK_DATA_DIR", str(tmp_path / "data"))
    flag = max(param.opts, key=len)
    res = runner.invoke(app, [*path[1:], flag, "5"], prog_name="jetlink")
    out = res.stdout + res.stderr
    assert res.exit_code == 2, (path, flag, res.exit_code, out)
    assert f"invalid value for {flag}: '5': missing unit, e.g. 5s" in out, out
    assert not (tmp_path / "data").exists()  # refused before anything ran


@pytest.mark.parametrize(("path", "param"), DURATIONS, ids=IDS)
def test_every_duration_option_takes_a_unit_and_zero_where_it_fits(path, param):
    flag = max(param.opts, key=len)
    kind = duration_type(param)
    assert kind is not None
    assert param.metavar == "DURATION", f"{' '.join(path)} {flag}: metavar {param.metavar}"
    assert kind("5s") == "5s"
    if not (kind.timeout or kind.minimum):
        assert kind("0") == "0"
    if kind.unlimited:
        assert kind("-1") == "-1"


def _looks_like_a_duration(param) -> bool:
    flag = max(param.opts, key=len)
    words = set(flag.lstrip("-").split("-"))
    metavar = (param.metavar or "").upper()
    return bool(words & DURATION_WORDS) or metavar in DURATION_METAVARS


@pytest.mark.parametrize(("path", "param"), OPTIONS,
                         ids=[" ".join([*p, max(o.opts, key=len)]) for p, o in OPTIONS])
def test_no_duration_option_escapes_the_type(path, param):
    flag = max(param.opts, key=len)
    if param.is_flag or flag in NOT_DURATIONS or not _looks_like_a_duration(param):
        return
    assert duration_type(param) is not None, (
        f"{' '.join(path)} {flag} looks like a duration ({param.metavar}): give it "
        "parser=DURATION (or WAIT, UNLIMITED_DURATION, TIMEOUT) from cli/options.py, "
        "metavar DURATION, so natscli's rule applies (a unit is required)")


def test_the_walk_would_catch_a_new_duration_flag():
    """The name check sees a flag its authors forgot to type (as `--grace` would be)."""
    grace = TyperOption(param_decls=["--grace"], type=click.types.STRING, metavar="SECONDS")
    assert _looks_like_a_duration(grace) and duration_type(grace) is None


# -- the variable, the metadata, on either engine ------------------------------------------------


def test_the_global_timeout_is_read_on_the_embedded_engine_too(jl, monkeypatch):
    res = jl("--timeout", "5", "stream", "ls")
    assert res.exit_code == 2
    assert ("invalid value for --timeout: '5': missing unit, e.g. 5s\n"
            in res.stderr), res.stderr
    assert ok(jl("--timeout", "5s", "stream", "ls")) is not None
    monkeypatch.setenv("NATS_TIMEOUT", "5")
    res = jl("stream", "ls")
    assert (res.exit_code, res.stderr) == (
        2, "jetlink: error: invalid timeout '5' (NATS_TIMEOUT): missing unit, e.g. 5s\n")


def test_a_context_timeout_needs_its_unit(jl):
    res = jl("context", "add", "c1", "--timeout", "5")
    assert res.exit_code == 2
    assert "invalid value for --timeout: '5': missing unit" in res.stderr
    ok(jl("context", "add", "c2", "--timeout", "5s"))


def test_check_reading_a_bare_number_as_nanoseconds_is_gone(jl):
    """`server check stream --seen-critical 5` was 5ns, CRITICAL always ("critical: 5e-09")."""
    ok(jl("stream", "add", "S", "--subjects", "s.>", "--defaults"))
    res = jl("server", "check", "stream", "--stream", "S", "--seen-critical", "5",
             "--format", "json")
    assert res.exit_code == 2 and res.stdout == ""
    assert "missing unit, e.g. 5s" in res.stderr


def test_metadata_thresholds_follow_the_same_rule(jl):
    """jsm.go's monitor reads io.nats.monitor.* durations with its ParseDuration, which finds
    no unit in a bare number and refuses it: the check is CRITICAL "could not configure
    based on metadata" (natscli), never a 5ns threshold."""
    ok(jl("stream", "add", "S", "--subjects", "s.>", "--defaults",
          "--metadata", "io.nats.monitor.seen-critical=5"))
    res = jl("server", "check", "stream", "--stream", "S")
    assert (res.exit_code, res.stdout) == (
        2, "CRITICAL S Crit:could not configure based on metadata: "
           "io.nats.monitor.seen-critical: invalid duration '5': missing unit, e.g. 5s\n")
    ok(jl("stream", "edit", "S", "--metadata", "io.nats.monitor.seen-critical=0", "-f"))
    res = jl("server", "check", "stream", "--stream", "S")
    assert res.exit_code == 0, res.stdout


def test_the_error_names_the_option_in_json_too(tmp_path):
    """Through the installed entry point (run): -j makes the usage error one JSON document."""
    import json
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "jetlink.cli.main", "--data-dir", str(tmp_path / "d"), "dr",
         "check", "--positions-critical", "5", "-j"],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stderr  # a check's bad command line: UNKNOWN
    doc = json.loads(proc.stdout)
    assert re.fullmatch(r"invalid value for --positions-critical: '5': "
                        r"missing unit, e\.g\. 5s", doc["error"]["description"]), doc


# -- duration strings in files: the same rule; an integer is a JSON document's nanoseconds ----


def test_a_topology_duration_string_needs_its_unit(tmp_path):
    import textwrap

    from jetlink.core.topology import load_files, validate_topology

    path = tmp_path / "t.toml"
    path.write_text(textwrap.dedent("""
        [streams.A]
        subjects = ["a"]
        max_age = "5"
        [streams.B]
        subjects = ["b"]
        max_age = 5000000000
        """))
    topo = load_files([str(path)])
    problems = validate_topology(topo)
    assert [(p.object, p.field, p.description) for p in problems] == [
        ("stream A", "max_age", "invalid duration '5': missing unit, e.g. 5s")]


def test_a_kv_config_duration_string_needs_its_unit():
    from jetlink.core.config.kv import KeyValueConfig
    from jetlink.core.errors import JetlinkError

    with pytest.raises(JetlinkError) as info:
        KeyValueConfig.from_dict({"ttl": "5"}, bucket="B")
    assert info.value.field == "ttl"
    assert info.value.description.endswith("invalid duration '5': missing unit, e.g. 5s")
    assert KeyValueConfig.from_dict({"ttl": 5_000_000_000}, bucket="B").ttl == 5_000_000_000
