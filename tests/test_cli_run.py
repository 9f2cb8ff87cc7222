"""The console-script entry point ``run()``: exit codes and usage errors, human and --json."""

import json

import pytest

from jetlink.cli.main import run

ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent


def call(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        run(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def test_usage_error_with_json_is_one_document_exit_2(capsys):
    code, out, err = call(capsys, "validate", "-j")
    assert code == 2
    assert json.loads(out) == {"error": {"description": "Missing argument 'FILE...'."}}
    assert err == ""


def test_usage_error_without_json_is_one_format_on_stderr(capsys):
    code, out, err = call(capsys, "validate")
    assert (code, out) == (2, "")
    assert err == ("jetlink: error: Missing argument 'FILE...'.\n"
                   "Try 'jetlink validate -h' for help.\n")
    # jetlink's own usage errors: the same first line, the same exit status
    code, out, err = call(capsys, "replicate", "--follow", "--interval", "0")
    assert (code, err) == (2, "jetlink: error: invalid value for --interval: '0': must be "
                              "more than 0 (the pause between steps, e.g. 1s)\n")
    code, out, err = call(capsys, "stream", "view", "X", "--count", "0")
    assert (code, err) == (2, "jetlink: error: Invalid value for '--count': 0 is not in the "
                              "range x>=1.\nTry 'jetlink stream view -h' for help.\n")


def test_unknown_command_exit_2(capsys):
    code, out, err = call(capsys, "nosuch")
    assert code == 2
    assert "No such command 'nosuch'" in err


def test_json_after_double_dash_is_an_argument_not_the_flag(capsys):
    code, out, err = call(capsys, "validate", "--", "--json")
    assert code == 3  # the file "--json" does not exist: a problem, not a usage error
    assert out == "--json: file not found\n"


def test_help_and_version_exit_0(capsys):
    assert call(capsys, "--help")[0] == 0
    code, out, _ = call(capsys, "--version")
    assert (code, out) == (0, "jetlink 0.1.0\n")


def test_validate_exit_codes_through_run(capsys):
    assert call(capsys, "validate", str(ROOT / "examples" / "topology.toml"))[0] == 0
    code, out, err = call(capsys, "validate", "-j", str(ROOT / "examples" / "broken-topology.toml"))
    assert code == 3
    assert json.loads(out)["valid"] is False


@pytest.mark.parametrize("after", [
    ["--cluster", "west"], ["--cluster=west"], ["--data-dir", "{d}", "--cluster", "west"],
    ["-j", "--cluster", "west"],
])
def test_a_global_option_after_the_command_acts_as_before_it(capsys, tmp_path, after):
    """natscli takes its global flags anywhere (`nats stream ls -s URL`): a root option
    the command itself does not have is taken as given before the command words."""
    d = str(tmp_path / "d")
    assert call(capsys, "--data-dir", d, "cluster", "add", "west")[0] == 0
    assert call(capsys, "--data-dir", d, "--cluster", "west", "stream", "add", "S",
                "--subjects", "s.>", "--defaults")[0] == 0
    moved = [a.replace("{d}", d) for a in after]
    before = [a for a in moved if a != "-j"]
    json_flag = ["-j"] if "-j" in moved else []
    expected = call(capsys, *(["--data-dir", d] if "{d}" not in after else []), *before,
                    "stream", "ls", *json_flag)
    got = call(capsys, *(["--data-dir", d] if "{d}" not in after else []), "stream", "ls",
               *moved)
    assert got == expected and got[0] == 0 and "S" in got[1]
    code, out, err = call(capsys, "stream", "ls", "--clustr", "west")
    assert code == 2 and "global option" not in err
    # a global option without its value: said to have none (not sent before the command)
    code, out, err = call(capsys, "stream", "ls", "--cluster")
    assert (code, err.splitlines()[0]) == (2, "jetlink: error: --cluster was given without "
                                              "its value: give it one (jetlink stream ls "
                                              "--cluster VALUE)")
    # -j before the command (every command takes it, the root does not): moved after it
    code, out, err = call(capsys, "--data-dir", d, "--cluster", "west", "-j", "stream", "ls")
    assert (code, out, err) == call(capsys, "--data-dir", d, "--cluster", "west", "stream",
                                    "ls", "-j")
    assert code == 0 and '"S"' in out
    code, out, err = call(capsys, "-j")
    assert (code, json.loads(out)) == (2, {"error": {"description": "No such option: -j"}})


@pytest.mark.parametrize("args", [
    ["server", "check", "stream", "--stream", "S", "--seen-critical", "soon"],
    ["server", "check", "--format", "bogus", "kv", "--bucket", "B"],
    ["server", "check", "kv", "--bucket", "B", "--bogus"],
    ["dr", "check", "--bogus"],
    # an option without its value: Click raises it without the command's context
    ["server", "check", "stream", "--stream"],
    ["dr", "check", "--lag-critical"],
    ["server", "check", "stream", "--stream", "S", "--json=1"],
    # a global option's bad value on a check's line
    ["--timeout", "5", "server", "check", "stream", "--stream", "S"],
    ["--cluster", "x", "--timeout", "5", "dr", "check"],
])
def test_a_checks_bad_command_line_is_unknown(capsys, tmp_path, args):
    """A monitoring check given invalid arguments answers UNKNOWN (exit 3), as a Nagios
    plugin does, not a usage error's 2 (CRITICAL to Nagios); the message is the usage
    error's. Any other command's stays 2."""
    code, out, err = call(capsys, "--data-dir", str(tmp_path / "d"), *args)
    assert (code, out) == (3, "")
    assert err.startswith("jetlink: error: ")
    code, _out, _err = call(capsys, "--data-dir", str(tmp_path / "d"), "stream", "ls", "--bogus")
    assert code == 2
    assert not (tmp_path / "d").exists()


@pytest.mark.skipif(not __import__("os").path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_stdout_that_refuses_writes_is_one_error_line(tmp_path, json_flag):
    """stdout on a full disk: the document (or the table) can not be written, and neither
    can a JSON error: one line on stderr says so, naming stdout, exit 1, no traceback."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "JETLINK_"))}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    subprocess.run([sys.executable, "-m", "jetlink.cli.main", "--data-dir",
                    str(tmp_path / "data"), "cluster", "add", "west"], check=True,
                   capture_output=True, env=env, timeout=60)
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "jetlink.cli.main", "--data-dir",
                               str(tmp_path / "data"), "cluster", "ls", *json_flag],
                              stdout=full, stderr=subprocess.PIPE, text=True, env=env,
                              timeout=60)
    assert (proc.returncode, proc.stderr) == (
        1, "jetlink: error: cannot write to stdout: No space left on device\n")


@pytest.mark.skipif(not __import__("os").path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(("args", "code"), [
    (["stream", "ls"], 1),  # a table (Rich)
    (["stream", "info", "S"], 1),  # key/value lines
    (["stream", "ls", "-j"], 1),
    (["server", "check", "stream", "--stream", "S", "--format", "prometheus"], 3),
    (["dr", "check", "--format", "nagios"], 3),  # a check's error is UNKNOWN
])
def test_every_form_of_output_names_stdout_when_it_refuses(tmp_path, args, code):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "JETLINK_"))}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    base = [sys.executable, "-m", "jetlink.cli.main", "--data-dir", str(tmp_path / "data")]
    subprocess.run([*base, "stream", "add", "S", "--subjects", "s.>", "--defaults"],
                   check=True, capture_output=True, env=env, timeout=60)
    with open("/dev/full", "w") as full:
        proc = subprocess.run([*base, *args], stdout=full, stderr=subprocess.PIPE, text=True,
                              env=env, timeout=60)
    assert (proc.returncode, proc.stderr) == (
        code, "jetlink: error: cannot write to stdout: No space left on device\n")


@pytest.mark.parametrize(("args", "code"), [
    (["server", "check", "stream", "--stream", "S"], 0),  # OK
    (["dr", "check"], 3),  # UNKNOWN: no mirrors
    (["stream", "ls"], 0),
])
def test_a_closed_stdout_gets_nothing_and_the_command_its_own_exit_code(tmp_path, args, code):
    """`jetlink ... >&-`: Python starts with no sys.stdout; what would be printed goes
    nowhere (as a Go program's writes to a closed descriptor), no traceback."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "JETLINK_"))}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    base = [sys.executable, "-m", "jetlink.cli.main", "--data-dir", str(tmp_path / "data")]
    subprocess.run([*base, "stream", "add", "S", "--subjects", "s.>", "--defaults"],
                   check=True, capture_output=True, env=env, timeout=60)
    proc = subprocess.run([*base, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, env=env, timeout=60, preexec_fn=lambda: os.close(1))
    assert (proc.returncode, proc.stderr) == (code, "")


def test_a_mistyped_command_gets_the_close_ones_loaded_or_not(capsys):
    """Every top-level command is a candidate for "Did you mean" (they load on demand)."""
    code, out, err = call(capsys, "strem", "ls")
    assert (code, err) == (2, "jetlink: error: No such command 'strem'. Did you mean "
                              "'stream'?\nTry 'jetlink -h' for help.\n")
    code, out, err = call(capsys, "kafka-mirror", "--list")
    assert "Did you mean 'kafka-mirrors', 'mirrors'?" in err
    code, out, err = call(capsys, "zzz")
    assert err == "jetlink: error: No such command 'zzz'.\nTry 'jetlink -h' for help.\n"


@pytest.mark.skipif(not __import__("os").path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("flags", [["-r"], [], ["--json"]])
def test_consumer_next_acknowledges_only_what_reached_stdout(tmp_path, flags):
    """Each message is written before it is acknowledged: to a stdout that refuses the
    writes, nothing is acknowledged (the messages are redelivered), as natscli's print then
    ack."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "JETLINK_"))}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    base = [sys.executable, "-m", "jetlink.cli.main", "--data-dir", str(tmp_path / "data")]

    def run(*args, **kw):
        return subprocess.run([*base, *args], capture_output=True, text=True, env=env,
                              timeout=60, **kw)

    assert run("stream", "add", "O", "--subjects", "o.>", "--defaults").returncode == 0
    assert run("pub", "o.a", "m", "--count", "5").returncode == 0
    assert run("consumer", "add", "O", "P", "--defaults").returncode == 0
    with open("/dev/full", "w") as full:
        proc = subprocess.run([*base, "consumer", "next", "O", "P", "--count", "5", *flags],
                              stdout=full, stderr=subprocess.PIPE, text=True, env=env,
                              timeout=60)
    assert (proc.returncode, proc.stderr) == (
        1, "jetlink: error: cannot write to stdout: No space left on device\n")
    info = json.loads(run("consumer", "info", "O", "P", "-j").stdout)
    assert info["ack_floor"]["stream_seq"] == 0 and info["num_ack_pending"] <= 5
    # written: acknowledged
    assert run("consumer", "add", "O", "Q", "--defaults").returncode == 0
    out = run("consumer", "next", "O", "Q", "--count", "2", *flags)
    assert out.returncode == 0, out.stderr
    info = json.loads(run("consumer", "info", "O", "Q", "-j").stdout)
    assert info["ack_floor"]["stream_seq"] == 2


def test_a_json_list_written_item_by_item_is_the_whole_lists_text(capsys):
    from jetlink.cli.output import JsonList, to_json

    items = [{"a": 1, "b": [1, {"c": "x\ny"}], "d": "é"}, {"e": []}, 3]
    listing = JsonList()
    for item in items:
        listing.add(item)
    listing.close()
    assert capsys.readouterr().out == to_json(items) + "\n"
    JsonList().close()
    assert capsys.readouterr().out == "[]\n"


@pytest.mark.parametrize("given", ["", "  "])
def test_an_empty_data_dir_is_a_usage_error_and_creates_nothing(tmp_path, monkeypatch, given):
    """--data-dir '' would mean the working directory (a database written where the command
    ran); an empty JETLINK_DATA_DIR is unset (the default applies)."""
    from helpers import runner

    from jetlink.cli.main import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    r = runner.invoke(app, ["--data-dir", given, "stream", "add", "E", "--subjects", "e",
                            "--defaults"], prog_name="jetlink")
    assert (r.exit_code, r.stderr) == (2, f"jetlink: error: invalid value for --data-dir: "
                                          f"{given!r} is an empty path (give a directory, "
                                          "e.g. ./data)\n")
    r = runner.invoke(app, ["context", "add", "c", "--data-dir", given], prog_name="jetlink")
    assert r.exit_code == 2 and "is an empty path" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize(("var", "args", "said"), [
    ("JETLINK_DATA_DIR", ["cluster", "ls"], "invalid value for --data-dir (from "
     "JETLINK_DATA_DIR): ' ' is an empty path (give a directory, e.g. ./data)"),
    ("JETLINK_CLUSTER", ["stream", "ls"], "--cluster (from JETLINK_CLUSTER): invalid cluster "
     "name ' ': use 1 to 64 letters, digits, '_' or '-'"),
])
def test_a_bad_value_from_the_environment_names_its_variable(tmp_path, monkeypatch, var, args,
                                                              said):
    """JETLINK_DATA_DIR / JETLINK_CLUSTER holding spaces: the error names the variable, not
    only the flag a command line that has none would be searched for."""
    from helpers import runner

    from jetlink.cli.main import app

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("JETLINK_DATA_DIR", str(tmp_path / "d"))
    monkeypatch.setenv(var, " ")
    r = runner.invoke(app, args, prog_name="jetlink")
    assert (r.exit_code, r.stderr) == (2, f"jetlink: error: {said}\n")


def test_inputs_larger_than_any_real_one_are_refused_before_filling_memory(jl, tmp_path,
                                                                           monkeypatch):
    """A file read whole (a config, a topology) past core/limits.py MAX_INPUT_FILE, a
    payload from stdin past max_payload: refused, read no further than the limit."""
    from helpers import doc, ok

    import jetlink.core.limits as limits
    import jetlink.core.topology.load as load

    monkeypatch.setattr(limits, "MAX_INPUT_FILE", 1000)
    monkeypatch.setattr(load, "MAX_INPUT_FILE", 1000)
    big = tmp_path / "big.json"
    big.write_text('{"name": "X", "subjects": ["x"], "description": "' + "d" * 2000 + '"}')
    r = jl("stream", "add", "--config", str(big), "--defaults")
    assert (r.exit_code, r.stderr) == (1, f"jetlink: error: cannot read {big}: larger than "
                                          "1,000 bytes: no configuration is that large\n")
    r = jl("validate", str(big), "-j")
    assert r.exit_code == 3
    assert json.loads(r.stdout)["problems"][0]["description"] == (
        "is larger than 1,000 bytes: no topology file is that large")
    ok(jl("stream", "add", "O", "--subjects", "o.>", "--defaults"))
    r = jl("pub", "o.a", input=b"\0" * (limits.MAX_PAYLOAD + 1))
    assert (r.exit_code, r.stderr) == (2, "jetlink: error: the payload from stdin is larger "
                                          "than 1,048,576 bytes (the largest payload, "
                                          "max_payload)\n")
    ok(jl("kv", "add", "B"))
    r = jl("kv", "put", "B", "k", input=b"\0" * (limits.MAX_PAYLOAD + 1))
    assert r.exit_code == 2 and "the value from stdin is larger than 1,048,576" in r.stderr
    # a link's properties and filters files, a topic's records from stdin
    ok(jl("cluster", "add", "kw", "--kind", "kafka"))
    ok(jl("cluster", "add", "ke", "--kind", "kafka"))
    ok(jl("--cluster", "kw", "topic", "create", "orders"))
    big.write_text("x" * 2000)
    for flag in ("--config-file", "--topic-filters-json-file",
                 "--consumer-group-filters-json-file", "--acl-filters-json-file"):
        r = jl("--cluster", "ke", "links", "create", "dr", "--source-cluster", "kw", flag,
               str(big))
        assert (r.exit_code, r.stderr) == (1, f"jetlink: error: cannot read {big}: larger "
                                              "than 1,000 bytes: no configuration is that "
                                              "large\n"), flag
    r = jl("--cluster", "kw", "topic", "produce", "orders", input=b"a\n" * 1000)
    assert (r.exit_code, r.stderr) == (2, "jetlink: error: the records from stdin are more "
                                          "than 1,000 bytes: produce them in parts\n")
    assert doc(jl("--cluster", "ke", "links", "ls", "-j")) == []


@pytest.mark.parametrize("value", ["١٠", "1_000", " 5", "5 ", "0x10", "1e3"])
@pytest.mark.parametrize("args", [
    ("stream", "add", "U", "--subjects", "u.>", "--defaults", "--max-msgs"),
    ("stream", "view", "U", "--count"),
    ("kv", "add", "KB", "--history"),
    ("consumer", "add", "U", "C", "--defaults", "--max-deliver"),
    ("stream", "cluster", "balance", "--replicas"),  # (a group's sub-group's command)
])
def test_an_integer_is_ascii_digits_with_an_optional_sign(jl, args, value):
    """Every integer option reads ASCII digits only, as Go's strconv and Kafka read one:
    Python's int() would take "1_000", " 5" and other scripts' digits."""
    from helpers import ok

    ok(jl("stream", "add", "U", "--subjects", "u.>", "--defaults"))
    r = jl(*args, value)
    assert r.exit_code == 2, (args, value, r.stdout)
    assert "is not a valid integer." in r.stderr and repr(value) in r.stderr


@pytest.mark.parametrize(("args", "says"), [
    (("stream", "get", "U", "9" * 5000),
     "Invalid value for '[SEQ]': " + "9" * 40 + "... (5,000 characters) is not in the range "
     "1<=x<=18446744073709551615."),
    (("pub", "u.a", "x", "--count", "9" * 4301),
     "Invalid value for '--count': " + "9" * 40 + "... (4,301 characters) is past any number "
     "this option takes."),
    (("pub", "u.a", "x", "--count", "9" * 4000),  # (under Python's int() limit)
     "Invalid value for '--count': " + "9" * 40 + "... (4,000 characters) is past any number "
     "this option takes."),
])
def test_an_integer_of_thousands_of_digits_is_said_out_of_range_and_clipped(jl, args, says):
    """Past any int64 / uint64 (and Python's 4,300-digit int() limit): the range's words,
    the value quoted by its first 40 characters and its length; leading zeros do not count
    (Go's ParseUint reads 000...01 as 1)."""
    from helpers import doc, ok

    ok(jl("stream", "add", "U", "--subjects", "u.>", "--defaults"))
    r = jl(*args)
    assert r.exit_code == 2 and says in r.stderr and len(r.stderr) < 400, r.stderr[:300]
    ok(jl("pub", "u.a", "x"))
    assert doc(jl("stream", "get", "U", "0" * 60 + "1", "-j"))["seq"] == 1


def test_signed_integers_are_read(jl):
    from helpers import doc

    assert doc(jl("stream", "add", "S", "--subjects", "s.>", "--defaults", "--max-msgs", "+5",
                  "--max-bytes", "-1", "-j"))["config"]["max_msgs"] == 5


@pytest.mark.parametrize("args", [
    ["dr", "check", "--outfile", "{d}/no/such/dir/out"],
    ["server", "check", "stream", "--stream", "S", "--outfile", "{d}/no/such/dir/out"],
])
def test_a_check_that_can_not_deliver_its_answer_is_unknown(capsys, tmp_path, args):
    """An error that stops a check before its answer (an --outfile it can not write) is
    UNKNOWN (3), not the 1 a Nagios reader takes for a WARNING."""
    d = str(tmp_path)
    code, out, err = call(capsys, "--data-dir", str(tmp_path / "data"),
                          *[a.replace("{d}", d) for a in args])
    assert code == 3 and err.startswith("jetlink: error: cannot write "), (code, err)


@pytest.mark.parametrize(("flag", "what"), [("--storage", "storage"),
                                            ("--first-sequence", "first sequence")])
def test_what_stream_edit_can_not_change_is_said_so(capsys, flag, what):
    code, out, err = call(capsys, "stream", "edit", "S", flag, "5", "-f")
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == (f"jetlink: error: No such option: {flag}: a stream's {what} "
                                   "is fixed when it is created; stream edit can not change it")


@pytest.mark.parametrize(("flag", "said"), [
    ("--storage", "a bucket's storage is fixed when it is created; kv edit can not change it"),
    ("--mirror", "a bucket's mirror is fixed when it is created (jetlink kv promote makes a KV "
                 "mirror a bucket of its own)"),
    ("--keys", "a KV mirror's keys are fixed when it is created"),
])
def test_what_kv_edit_can_not_change_is_said_so(capsys, flag, said):
    """kv add's options that kv edit has not: said why, not Click's closest options."""
    code, out, err = call(capsys, "kv", "edit", "B", flag, "x", "-f")
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == f"jetlink: error: No such option: {flag}: {said}"


@pytest.mark.parametrize(("flag", "said"), [
    ("--source", "a stream's sources are edited with the whole config: jetlink stream edit "
                 "STREAM --config FILE (stream info STREAM --json, its config changed)"),
    ("--mirror", "a stream's mirror is fixed when it is created (the server refuses a change "
                 "of it; jetlink stream promote makes a mirror a stream of its own)"),
])
def test_stream_edit_of_sources_or_mirror_says_how(capsys, flag, said):
    """natscli: "cannot edit mirrors, or sources using the CLI, use --config instead"."""
    code, out, err = call(capsys, "stream", "edit", "S", flag, "T1", "-f")
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == f"jetlink: error: No such option: {flag}: {said}"


@pytest.mark.parametrize(("group", "what"), [("stream", "stream"), ("kv", "bucket")])
def test_natscli_edit_no_mirror_names_promote(capsys, group, what):
    """natscli's edit --no-mirror removes the mirror: jetlink's verb for it is promote."""
    code, out, err = call(capsys, group, "edit", "S", "--no-mirror", "-f")
    said = (f"natscli's edit that removes a {what}'s mirror is jetlink {group} promote "
            f"{what.upper()} (the mirror then takes writes as a {what} of its own)")
    flag = "--no-mirror"
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == f"jetlink: error: No such option: {flag}: {said}"


@pytest.mark.parametrize(("group", "verb"), [
    ("stream", "add"), ("stream", "create"), ("stream", "edit"), ("stream", "copy"),
    ("kv", "add"), ("kv", "new"), ("kv", "edit")])
def test_natscli_placement_cluster_after_the_verb_is_refused(capsys, tmp_path, group, verb):
    """natscli's stream add|edit|copy and kv add|edit --cluster is the placement cluster;
    jetlink's global --cluster (the data directory's) is not it: refused, naming
    --cluster-placement, before anything is read or made (on a live server it would have
    placed nothing)."""
    data = tmp_path / "data"
    code, out, err = call(capsys, "--data-dir", str(data), group, verb, "S", "--cluster",
                          "east")
    assert (code, out) == (2, "")
    assert err == (f"jetlink: error: --cluster after {group} {verb}: natscli's placement "
                   "cluster is --cluster-placement NAME here (placement.cluster); jetlink's "
                   "--cluster, the data directory's cluster, goes before the command (jetlink "
                   f"--cluster NAME {group} {verb} ...)\n")
    assert not data.exists()
    code, out, _err = call(capsys, "--data-dir", str(data), group, verb, "S", "--cluster",
                           "east", "-j")
    assert code == 2 and json.loads(out)["error"]["description"].startswith(
        f"--cluster after {group} {verb}: ")


@pytest.mark.parametrize("verb", [["report"], ["find"], ["cluster", "balance"]])
def test_natscli_stream_cluster_filter_is_refused_where_no_stream_names_one(
        capsys, tmp_path, verb):
    """natscli's --cluster after stream report|find|cluster balance keeps the streams placed
    in that cluster; where no stream names its cluster (the engine's listing, a single
    server's) it could keep only all or none, and `stream report --cluster east` read as the
    wrong cluster's report: refused, exit 2, naming where jetlink's --cluster goes."""
    code, out, err = call(capsys, "--data-dir", str(tmp_path / "d"), "stream", "add", "S",
                          "--subjects", "s", "--defaults")
    assert code == 0, err
    code, out, err = call(capsys, "--data-dir", str(tmp_path / "d"), "stream", *verb,
                          "--cluster", "east", "-j")
    shown = " ".join(verb)
    assert (code, json.loads(out)) == (2, {"error": {"description": (
        f"--cluster east after stream {shown} is natscli's filter of the streams placed in a "
        "cluster, and no stream here names one (none of the embedded engine's does, nor a "
        "server's outside a cluster); on the embedded engine jetlink's --cluster, the data "
        "directory's cluster, goes before the command (jetlink --cluster east stream "
        f"{shown})")}})


@pytest.mark.parametrize("args", [
    ["--creds", "/nonexistent"], ["--user", "bob", "--password", "x"], ["--tlsfirst"],
    ["--js-domain", "hub"], ["--inbox-prefix", "_I"], ["--tlsca", "ca.pem"],
])
def test_server_options_without_a_server_are_refused(capsys, tmp_path, monkeypatch, args):
    """Credentials, TLS or a domain on the command line with no server in force: refused
    (exit 2, nothing done) rather than dropped while the embedded engine is acted on."""
    monkeypatch.delenv("NATS_URL", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    data = tmp_path / "data"
    code, out, err = call(capsys, "--data-dir", str(data), *args, "stream", "rm", "S", "-f")
    assert (code, out) == (2, "")
    flags = ", ".join(a for a in args if a.startswith("--"))
    assert err.startswith(f"jetlink: error: {flags} appl"), err
    assert "none is in force: give it with -s/--server URL" in err
    assert not data.exists()


@pytest.mark.parametrize(("flag", "command"), [("--cluster", "stream"), ("--context", "kv"),
                                               ("--data-dir", "stream")])
def test_a_global_option_that_took_the_command_as_its_value_says_so(capsys, flag, command):
    code, out, err = call(capsys, flag, command, "ls")
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == (f"jetlink: error: {flag} took {command!r} as its value: "
                                   f"give it one (jetlink {flag} VALUE {command} ...)")


@pytest.mark.parametrize("flag", ["--cluster", "--context", "-s"])
def test_a_global_option_last_without_its_value_says_so(capsys, flag):
    """`jetlink stream ls --cluster` (the value forgotten at the end of the line): said as
    that, not as the option having taken the command's name."""
    code, out, err = call(capsys, "stream", "ls", flag)
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == (f"jetlink: error: {flag} was given without its value: "
                                   f"give it one (jetlink stream ls {flag} VALUE)")


def test_republish_headers_without_a_republish_is_refused(capsys, tmp_path):
    """natscli: --headers-only needs --republish-source and --republish-destination; a stream
    that republishes nothing would take it silently."""
    data = tmp_path / "data"
    code, out, err = call(capsys, "--data-dir", str(data), "stream", "add", "RH", "--subjects",
                          "rh.>", "--defaults", "--republish-headers")
    assert (code, out, err) == (2, "", (
        "jetlink: error: --republish-headers: the stream republishes nothing: give "
        "--republish-source and --republish-destination with it\n"))
    assert not (data / "local.db").exists()


def test_a_64_bit_range_is_checked_and_named_but_not_printed_in_the_help(jl):
    """natscli's int and uint64 flags: the type's whole range tells an operator nothing in
    the help (cli/root.py strict_ints hides it there); a value past it is still refused
    naming it, and a value inside it taken."""
    assert "<=x<=" not in jl("stream", "add", "--help").stdout
    assert "<=x<=" not in jl("consumer", "add", "--help").stdout
    r = jl("stream", "add", "U", "--subjects", "u.>", "--defaults", "--max-msgs",
           "9223372036854775808")
    assert r.exit_code == 2 and ("'--max-msgs': 9223372036854775808 is not in the range "
                                 "-9223372036854775808<=x<=9223372036854775807.") in r.stderr
    r = jl("stream", "add", "U", "--subjects", "u.>", "--defaults", "--first-sequence", "-1")
    assert r.exit_code == 2 and ("'--first-sequence': -1 is not in the range "
                                 "0<=x<=18446744073709551615.") in r.stderr
    from helpers import doc

    cfg = doc(jl("stream", "add", "U", "--subjects", "u.>", "--defaults", "--max-msgs",
                 "9223372036854775807", "-j"))["config"]
    assert cfg["max_msgs"] == 9223372036854775807


@pytest.mark.parametrize("words", [[], ["stream"], ["dr"]])
def test_a_group_alone_shows_its_help_not_an_error(capsys, words):
    """A group without its command (``jetlink stream``) prints its help on stderr as click
    shows it, no "jetlink: error:" line in front, exit 2 (nothing was run)."""
    from jetlink.cli.main import run

    with pytest.raises(SystemExit) as exc:
        run(words)
    assert exc.value.code == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.startswith(f"Usage: jetlink {' '.join(words) + ' ' if words else ''}"
                              "[OPTIONS] COMMAND [ARGS]...\n"), out.err
    assert "Commands:" in out.err and "jetlink: error" not in out.err


def test_an_option_missing_its_value_says_where_to_look(capsys):
    """Click raises "requires an argument" without the command's context: the help line
    names the command the line names all the same."""
    from jetlink.cli.main import run

    with pytest.raises(SystemExit) as exc:
        run(["dr", "watch", "--from"])
    assert exc.value.code == 2
    assert capsys.readouterr().err == ("jetlink: error: Option '--from' requires an argument.\n"
                                       "Try 'jetlink dr watch -h' for help.\n")
