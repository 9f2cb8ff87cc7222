"""`jetlink demo`: the disaster-recovery drill run whole (human and --json), its data
directory's fate, its refusals, the shipped example files it uses and `make demo`."""

from __future__ import annotations

import json
import re
from importlib.resources import files
from pathlib import Path

import pytest
from helpers import ENV_VARS, doc, ok, runner

from jetlink.cli import demo as demo_mod
from jetlink.cli.main import app

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def env(monkeypatch, tmp_path):
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the demo's scratch directory lands here
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def invoke(*args: str):
    return runner.invoke(app, list(args), prog_name="jetlink")


# -- the drill, whole ----------------------------------------------------------------------------


def drill(target: Path, *options: str):
    """The whole drill into ``target`` with a small LEDGER history; it must succeed."""
    result = invoke("demo", *options, "--messages", "1000", "--data-dir", str(target))
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.spark
@pytest.mark.slow
def test_the_drill_as_json(env, spark):
    target = env / "drill"
    result = drill(target, "--json")
    summary = json.loads(result.stdout)
    assert not target.exists()  # removed: no --keep
    assert not list(env.glob("jetlink-demo-*"))  # nor the scratch directory
    assert [s["step"] for s in summary["steps"]] == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert all(s["seconds"] >= 0 for s in summary["steps"])
    assert summary["kept"] is False and summary["data_dir"] == str(target.resolve())
    rows = [(m["what"], m.get("messages", m.get("records", m.get("values"))), m.get("left", ""))
            for m in summary["moved"]]
    assert rows == [
        ("west ORDERS -> west MONITOR", 20_000, ""),
        ("west ORDERS -> west ARCHIVE", 8_500, ""),
        ("west CONFIG -> east CONFIG_EAST", 4, ""),
        ("west CONFIG -> east FEATURES", 3, ""),
        ("west LEDGER -> east LEDGER_EAST", 1_000, ""),
        ("west LEDGER -> east LEDGER_EAST", 1_000, ""),
        # 3 of orders.42.status' 8 messages were gone (max_msgs_per_subject 5) before the
        # pump copied them; 2,000 orders were published in west after the last step
        ("west ORDERS -> east ORDERS_EAST", 29_506, "2,000 messages"),
        ("kwest orders -> keast orders", 23_000, "2,000 records; 2 offsets clamped"),
    ]
    seed = summary["moved"][4]
    assert seed["seconds"] > 0 and seed["messages_per_second"] > 0
    # billing read the whole burst; the link synced its offsets a step before the records
    assert summary["clamps"] == [
        {"group": "billing", "topic": "orders", "partition": 1, "from": 8418, "to": 8056},
        {"group": "billing", "topic": "orders", "partition": 2, "from": 8246, "to": 6608},
    ]
    assert summary["spark"]["rows_in"] == summary["spark"]["rows_out"] == 1000
    assert summary["pump"]["copied"] == 28_006 and summary["link"]["copied"] == 19_000
    # shipping acknowledged 250 in west, then read 251 and 252 from the failed-over mirror
    assert summary["resume"]["shipping"] == {"acked_in_west": 250, "placed_at": 251,
                                             "delivered_in_east": 252}
    assert summary["resume"]["analytics"] == {"0": 2000, "1": 2000, "2": 2000}
    assert summary["rest"]["status"] == 200 and summary["rest"]["mirror_status"] == "STOPPED"
    assert summary["seconds"] > 0  # measured, shown; never bounded (the machine may be busy)
    assert "jetlink demo: step 6/9: The drill: region west goes down" in result.stderr
    # the readiness check before the outage predicted the recovery point the outage produced:
    # the divergent tail failback saved (the 2,000 orders west took after the last step)
    point = summary["recovery_point"]
    assert (point["predicted"], point["tail_saved"], point["west_primary"]) == (2000, 2000, True)
    # what `jetlink bench demo` checks of each drill it times
    from jetlink.core.bench.demo import drill_counts

    assert drill_counts(summary) == {"steps": 9, "moved": sum(r[1] for r in rows),
                                     "spark_rows": 1000, "tail_saved": 2000}


@pytest.mark.spark
@pytest.mark.slow
def test_the_drill_narrated_and_kept(env, spark):
    target = env / "kept"
    out = drill(target, "--keep").stdout
    for n, title in enumerate(("Two regions, one topology file", "JetStream: ORDERS",
                               "Key-Value: CONFIG", "Kafka: topic orders",
                               "Spark: seed a new mirror", "The drill: region west goes down",
                               "West comes back: failback",
                               "Mirror status over Confluent's REST API v3", "Summary"), 1):
        assert re.search(rf"^ {n}/9  {re.escape(title)}", out, re.M), title
    # each step shows the commands it runs and what they printed
    for line in (
        "$ jetlink validate ",
        "3 problems in 1 file\n[exit status 3]",
        "Stored in Stream: ORDERS Sequence: 28,501 Duplicate: true",
        "$ jetlink --cluster keast links create dr --source-cluster kwest --config-file ",
        "are identical: 2,000 messages",
        "$ jetlink cluster down west kwest",
        "State: SOURCE_UNAVAILABLE",
        "Error: origin cluster west is down",
        "  Clamped consumer group billing on orders partition 1: offset 8418 -> 8056",
        "Stream ORDERS_EAST was promoted (failover): it no longer mirrors ORDERS@west",
        "CRITICAL dr Crit:ORDERS_EAST@east: Lag 2000",
        "[exit status 2]",
        "Messages: 2,000 (sequences 29,510..31,509)",
        "Stream ORDERS_EAST failed back: ORDERS@west is the primary again",
        "Recovery point: before the outage dr check said ORDERS_EAST was 2,000 messages",
        "subj: orders.251.created",
        "mirrors --rest-url http://127.0.0.1:",
        '"mirror_status": "STOPPED"',
        "Consumer offsets clamped by the failover",
        f"Data directory kept: {target.resolve()}",
    ):
        assert line in out, line
    # docs/demo.md's excerpt shows commands the drill runs
    from test_readme import demo_excerpt_commands

    def flat(text: str) -> str:  # long command lines wrap in the narration
        return " ".join(re.sub(r"/\S*/jetlink-demo-\w+/", "", text).split())

    narrated = flat(out)
    commands = demo_excerpt_commands()
    assert len(commands) >= 8
    for command in commands:
        assert flat(f"$ {command}") in narrated, command
    # a cut output says how much it left out: the divergent tail's subjects (20 listed, then
    # "Other Subjects"), the records a consume printed before its summary line
    assert re.search(r"^  orders\.1001\.shipped: 1\n\.\.\. 20 more lines\n\$ jetlink --cluster "
                     r"east stream failback ORDERS_EAST --switch -f$", out, re.M)
    assert ("--group billing --from-beginning\n... 20,000 more lines\n"
            "Processed a total of 20000 messages\n") in out
    # step 8's curl shows what it prints: the server's whole document through json.tool
    # (curl -s prints no status line)
    assert "HTTP 200" not in out
    lines = out.splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("$ curl -s http://127.0.0.1:"))
    assert re.fullmatch(r"\$ curl -s http://127\.0\.0\.1:\d+/kafka/v3/clusters/keast/links/dr/"
                        r"mirrors/orders \| python3 -m json\.tool", lines[at])
    end = lines.index("}", at)
    printed = "\n".join(lines[at + 1:end + 1]) + "\n"
    mirror = json.loads(printed)
    assert printed == json.dumps(mirror, indent=4) + "\n"  # json.tool's own form
    assert {"kind", "metadata", "link_name", "mirror_topic_name", "source_topic_name",
            "num_partitions", "mirror_lags", "mirror_status", "mirror_topic_error",
            "state_time_ms"} <= set(mirror)
    assert (mirror["kind"], mirror["mirror_status"]) == ("KafkaMirrorData", "STOPPED")
    assert [p["partition"] for p in mirror["mirror_lags"]] == [0, 1, 2]
    # the consumers resume in east where the link left their offsets (tabs shown as spaces)
    assert re.search(r"^Partition:0 +Offset:2000 +order ", out, re.M)
    assert re.search(r"^Partition:1 +Offset:8056 +first record produced in east$", out, re.M)
    # what it refers to is kept with it: the failback's saved divergent tail
    kept_work = re.search(r"^Work files kept: (\S+) \(the failback's saved tail\)$", out, re.M)
    assert kept_work is not None and (Path(kept_work.group(1)) / "orders-tail").is_dir()
    import shutil

    shutil.rmtree(kept_work.group(1))  # (kept for the user: the test removes it)
    # the kept directory is a data directory like any other
    mirrors = doc(invoke("--data-dir", str(target), "--cluster", "keast", "mirrors", "ls", "-j"))
    assert [(m["mirror_topic_name"], m["mirror_status"]) for m in mirrors] == [
        ("orders", "STOPPED")]
    # after the failback's switch: west's ORDERS the primary again, ORDERS_EAST its mirror
    info = doc(invoke("--data-dir", str(target), "--cluster", "east", "stream", "info",
                      "ORDERS_EAST", "-j"))
    assert info["config"]["mirror"]["name"] == "ORDERS"
    info = doc(invoke("--data-dir", str(target), "--cluster", "west", "stream", "info",
                      "ORDERS", "-j"))
    assert "mirror" not in info["config"] and info["config"]["subjects"] == ["orders.>"]


# -- refusals and failures -----------------------------------------------------------------------


def test_a_data_dir_that_is_not_empty_is_refused(env):
    used = env / "used"
    used.mkdir()
    (used / "west.db").write_bytes(b"precious")
    result = invoke("demo", "--data-dir", str(used))
    assert result.exit_code == 2
    assert result.stderr == (f"jetlink: error: --data-dir {used}: the drill needs an absent "
                             "or empty directory\n")
    assert (used / "west.db").read_bytes() == b"precious"
    assert invoke("demo", "--messages", "10").exit_code == 2  # at least 1,000


def test_messages_is_refused_with_live(env):
    """--messages sizes the embedded drill's LEDGER (its Spark seed); the live drill has
    none: a usage error before anything starts, not an option silently ignored."""
    result = invoke("demo", "--live", "--messages", "5000")
    assert result.exit_code == 2
    assert (result.stdout, result.stderr) == ("", "jetlink: error: --messages 5000 applies to "
                                              "the embedded drill (the LEDGER history its "
                                              "Spark job seeds), not --live\n")
    result = invoke("demo", "--live", "--messages", "100000", "-j")  # (the default, given)
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["description"].startswith("--messages 100000 ")
    assert not list(env.glob("jetlink-demo-*"))  # nothing made, nothing started


def test_a_cut_output_says_how_many_lines_it_left_out(tmp_path):
    """The narration of a command shows what it printed; where lines are left out (the
    drill's default cut, or a selection cut with ``first``) a line says how many; a shell
    pipeline is shown whole."""
    import io

    from rich.console import Console

    from jetlink.cli.demo_drill import first, section

    buf = io.StringIO()
    d = demo_mod.Drill(tmp_path, tmp_path, Console(file=buf, width=100, color_system=None),
                       None, 100)
    printed = "Head\nDivergent Tail:\n\n  Messages: 9\n  a.1: 1\n  a.2: 1\n  a.3: 1\n\nEnd\n"
    d.show(["stream", "failback", "S"], printed, select=first(3, section("Divergent Tail:")))
    d.show(["x"], printed, select=first(5, section("Divergent Tail:")))  # one left: shown
    d.show(["y"], "1\n2\n3\n4\n5\n", head=1, tail=1)
    d.show(["-s", "http://h/p"], '{\n    "a": 1\n}\n', program="curl",
           pipe=demo_mod.JSON_TOOL)
    assert buf.getvalue() == (
        "$ jetlink stream failback S\nDivergent Tail:\n\n  Messages: 9\n... 3 more lines\n"
        "$ jetlink x\nDivergent Tail:\n\n  Messages: 9\n  a.1: 1\n  a.2: 1\n  a.3: 1\n"
        "$ jetlink y\n1\n... 3 more lines\n5\n"
        '$ curl -s http://h/p | python3 -m json.tool\n{\n    "a": 1\n}\n')


def test_step_8_shows_what_json_tool_prints(tmp_path):
    """The REST answer as `curl -s URL | python3 -m json.tool` prints it: the whole
    document, json.tool's indentation, key order and escapes."""
    import subprocess
    import sys

    body = '{"kind":"KafkaMirrorData","mirror_lags":[{"partition":0,"lag":0}],' \
           '"link_name":"dr\u00e9","metadata":{"resource_name":null},"x":1.5}'
    doc, printed = demo_mod._pretty(body)
    tool = subprocess.run([sys.executable, "-m", "json.tool"], input=body, text=True,
                          capture_output=True, check=True)
    assert printed == tool.stdout
    assert doc["link_name"] == "dr\u00e9" and list(doc)[0] == "kind"
    assert demo_mod._pretty("Bad Gateway") == ({}, "Bad Gateway")


def test_a_step_that_goes_wrong_stops_the_drill(env, monkeypatch):
    def scenario(d, examples, messages):
        d.step(1, "Two regions, one topology file", "...")
        d.run("validate", str(examples / demo_mod.TOPOLOGY))
        d.run("--cluster", "west", "stream", "info", "NOPE")

    monkeypatch.setattr(demo_mod, "scenario", scenario)
    target = env / "d"
    result = invoke("demo", "--data-dir", str(target), "-j")
    assert result.exit_code == 1
    error = json.loads(result.stdout)["error"]["description"]
    assert error.startswith("the drill stopped: `jetlink --cluster west stream info NOPE` "
                            "exited with status 1 (expected 0)\n")
    assert "cluster west not found" in error
    assert not target.exists()


def test_a_step_interrupted_stops_the_drill_as_interrupted(env, monkeypatch):
    """Ctrl-C lands in a step's command (it exits 130): the drill is interrupted too, exit
    130 (not "the drill stopped", 1), and nothing of it is left."""
    import jetlink.cli.main as main_mod

    def scenario(d, examples, messages):
        d.step(1, "Two regions, one topology file", "...")
        d.run("validate", str(examples / demo_mod.TOPOLOGY))

    def interrupted(argv):
        raise SystemExit(130)

    monkeypatch.setattr(demo_mod, "scenario", scenario)
    monkeypatch.setattr(main_mod, "run", interrupted)
    target = env / "d"
    result = invoke("demo", "--data-dir", str(target))
    assert result.exit_code == 130
    assert "the drill stopped" not in result.stderr
    assert not target.exists() and not list(env.glob("jetlink-demo-*"))


def test_a_data_dir_that_cannot_be_made_is_one_line(env, tmp_path):
    """--data-dir under a file: one line naming it and why, no traceback, nothing left."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    result = invoke("demo", "--data-dir", str(afile / "sub"))
    assert (result.exit_code, result.stderr) == (1, (
        f"jetlink: error: --data-dir {afile / 'sub'}: cannot create it: Not a directory\n"))
    assert not list(env.glob("jetlink-demo-*"))
    result = invoke("demo", "--messages", "99999999999999999999999")  # pub's most: 1e9
    assert result.exit_code == 2 and "1000<=x<=1000000000" in result.stderr


def test_the_commands_do_not_see_the_callers_jetlink_variables(env, monkeypatch, tmp_path):
    """A selected context, cluster or REST URL of the caller must not redirect the drill."""
    monkeypatch.setenv("JETLINK_CLUSTER", "elsewhere")
    monkeypatch.setenv("JETLINK_REST_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("JETLINK_CONTEXT", "missing")
    drill = demo_mod.Drill(tmp_path / "dd", tmp_path, None, None, 100)
    ran = drill.invoke(["cluster", "add", "west"])
    assert ran.code == 0, ran.err
    assert (tmp_path / "dd" / "west.db").exists()
    import os

    assert os.environ["JETLINK_CLUSTER"] == "elsewhere"  # restored


def test_the_commands_never_go_to_the_callers_live_server(env, monkeypatch, tmp_path):
    """NATS_URL, NATS_CONTEXT or a selected context with a server must not send the drill's
    commands to a live server: the drill is the embedded engine's."""
    import os

    config = tmp_path / "caller-config"
    (config / "jetlink" / "context").mkdir(parents=True)
    (config / "jetlink" / "context" / "prod.toml").write_text(
        'server = "nats://127.0.0.1:1"\n')
    (config / "jetlink" / "context.txt").write_text("prod\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.setenv("NATS_URL", "nats://127.0.0.1:1")
    monkeypatch.setenv("NATS_CONTEXT", "prod")
    drill = demo_mod.Drill(tmp_path / "dd", tmp_path, None, None, 100)
    ran = drill.invoke(["stream", "add", "S", "--subjects", "s.>", "--defaults"])
    assert ran.code == 0, ran.err
    assert (tmp_path / "dd" / "local.db").exists()
    assert os.environ["NATS_URL"] == "nats://127.0.0.1:1"  # restored
    assert os.environ["XDG_CONFIG_HOME"] == str(config)
    # nor does the `jetlink serve` it starts in the background see the caller's context
    env = demo_mod.serve_env(drill)
    assert env["XDG_CONFIG_HOME"] == str(tmp_path / "config")
    assert not [k for k in env if k.startswith(("JETLINK_", "NATS_"))]


# -- the example files it ships ------------------------------------------------------------------


def test_the_examples_are_package_data():
    shipped = files("jetlink.examples")
    for name in (demo_mod.TOPOLOGY, *demo_mod.LINK_FILES, "topology.toml"):
        assert shipped.joinpath(name).is_file(), name
    assert Path(str(shipped)).resolve() == (ROOT / "examples").resolve()


def test_the_broken_copy_has_exactly_its_three_problems(env):
    text = (ROOT / "examples" / demo_mod.TOPOLOGY).read_text(encoding="utf-8")
    for old, new, _why in demo_mod.BREAKAGES:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    broken = env / "broken.toml"
    broken.write_text(text, encoding="utf-8")
    ok(invoke("validate", str(ROOT / "examples" / demo_mod.TOPOLOGY)))
    result = invoke("validate", str(broken), "-j")
    assert result.exit_code == 3
    problems = json.loads(result.stdout)["problems"]
    assert sorted((p["object"], p["field"]) for p in problems) == [
        ("kv CONFIG", "history"),
        ("stream ARCHIVE", "sources[0].subject_transforms[0].dest"),
        ("stream ORDERS_EAST", "max_msg_size"),
    ]


def test_the_link_files_create_the_link(env):
    """examples/dr-link.properties and the filter files are what `links create` takes."""
    base = ["--data-dir", str(env / "d")]
    ok(invoke(*base, "cluster", "add", "kwest", "--kind", "kafka"))
    ok(invoke(*base, "cluster", "add", "keast", "--kind", "kafka"))
    ex = ROOT / "examples"
    link = doc(invoke(*base, "--cluster", "keast", "links", "create", "dr", "--source-cluster",
                      "kwest", "--config-file", str(ex / "dr-link.properties"),
                      "--consumer-group-filters-json-file", str(ex / "dr-group-filters.json"),
                      "--topic-filters-json-file", str(ex / "dr-topic-filters.json"), "-j"))
    assert link["link_name"] == "dr" and link["source_cluster_id"] == "kwest"
    configs = {c["name"]: c["value"] for c in doc(invoke(
        *base, "--cluster", "keast", "links", "describe", "dr", "-j"))["configs"]}
    assert configs["consumer.offset.sync.enable"] == "true"
    assert configs["consumer.offset.sync.ms"] == "1000"
    assert configs["auto.create.mirror.topics.enable"] == "true"
    assert json.loads(configs["auto.create.mirror.topics.filters"]) == json.loads(
        (ex / "dr-topic-filters.json").read_text())
    assert json.loads(configs["consumer.offset.group.filters"]) == json.loads(
        (ex / "dr-group-filters.json").read_text())


def test_make_demo_runs_the_drill():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    assert "$(JETLINK) demo" in recipe
