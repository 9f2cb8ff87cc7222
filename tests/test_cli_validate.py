"""``jetlink validate`` and ``jetlink bench validate`` against the real engine.

Written against the documented contract of core/topology/ (docs/architecture.md,
"core/topology/"): ``validate_files(paths) -> list[Problem]``, Problem(file, object, field,
err_code, description) with ``to_dict()``; a missing or unparsable file is a problem with
err_code 0 and field null; ``bench_validate(n)`` returns configs, seconds, configs_per_sec.
The CLI's rendering is pinned exactly by tests/test_cli.py with a stand-in core module; this
file checks the two fit together.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jetlink.cli.main import app

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
PROBLEM_KEYS = ["file", "object", "field", "err_code", "description"]

runner = CliRunner()


def jetlink(*args: str):
    return runner.invoke(app, list(args), prog_name="jetlink")


@pytest.fixture
def files(tmp_path):
    def write(name: str, content) -> str:
        path = tmp_path / name
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        return str(path)

    return write


def test_clean_stream_config(files):
    path = files("orders.json", {"name": "ORDERS", "subjects": ["orders.>"]})
    result = jetlink("validate", path)
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{path}: OK\n"
    assert result.stderr == ""
    result = jetlink("validate", "--json", path)
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"files": [path], "problems": [], "warnings": [],
                                            "valid": True}


def test_mirror_with_subjects(files):
    path = files(
        "mirror.json",
        {"name": "ORDERS_MIRROR", "subjects": ["x.>"], "mirror": {"name": "ORDERS"}},
    )
    result = jetlink("validate", "-j", path)
    assert result.exit_code == 3
    doc = json.loads(result.stdout)
    assert doc["valid"] is False
    assert doc["files"] == [path]
    for problem in doc["problems"]:
        # "detail" (the offending value, for people) when known
        assert list(problem) in (PROBLEM_KEYS, PROBLEM_KEYS + ["detail"])
        assert problem["file"] == path
    mirror = [p for p in doc["problems"] if p["err_code"] == 10034]
    assert len(mirror) == 1
    assert mirror[0]["description"] == "stream mirrors can not contain subjects"
    assert mirror[0]["field"] == "subjects"

    human = jetlink("validate", path)
    assert human.exit_code == 3
    assert "10034" in human.stdout
    assert "stream mirrors can not contain subjects" in human.stdout
    # the missing origin is a warning (the server accepts it), on its own line
    assert re.search(r"mirror\.name: warning: stream not found: .*\(10059\)\n", human.stderr)
    assert human.stderr.endswith(" problem in 1 file, 1 warning\n")


def test_a_file_named_twice_is_read_once(files, tmp_path):
    """validate a.toml a.toml (or the same file spelt two ways): its stream is no duplicate
    of itself."""
    path = files("a.toml", '[streams.B]\nsubjects = ["b.>"]\n')
    again = str(tmp_path / "." / "a.toml")
    result = jetlink("validate", "-j", path, again)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["problems"] == []


def test_missing_file_is_a_problem_not_a_crash(tmp_path):
    path = str(tmp_path / "nope.toml")
    result = jetlink("validate", "-j", path)
    assert result.exit_code == 3
    doc = json.loads(result.stdout)
    assert doc["valid"] is False
    [problem] = doc["problems"]
    assert list(problem) == PROBLEM_KEYS
    assert problem["file"] == path
    assert problem["err_code"] == 0
    assert problem["field"] is None
    assert problem["description"]


def test_a_dash_is_no_stdin_for_a_topology(tmp_path, monkeypatch):
    """``validate -`` (and apply's): a topology is read from files; the problem says so,
    and a file named - in the directory is not read in its place (a stdin meant would
    silently plan a stale file); ./- reads it."""
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        result = jetlink("validate", "-j", "-")
        [problem] = json.loads(result.stdout)["problems"]
        assert (result.exit_code, problem["description"]) == (3, (
            "a topology is read from files, not from stdin (give its path; a file named - "
            "as ./-)"))
        (tmp_path / "-").write_text('[streams.S]\nsubjects = ["s"]\n')
    assert jetlink("validate", "./-").exit_code == 0


@pytest.mark.parametrize(
    ("name", "content"),
    [("bad.json", '{"name": "ORDERS", '), ("bad.toml", "[streams.ORDERS\nsubjects = ")],
)
def test_unparsable_file_is_a_problem(files, name, content):
    path = files(name, content)
    result = jetlink("validate", "--json", path)
    assert result.exit_code == 3
    [problem] = json.loads(result.stdout)["problems"]
    assert (problem["file"], problem["err_code"], problem["field"]) == (path, 0, None)


def test_clean_and_broken_files_together(files, tmp_path):
    good = files("orders.json", {"name": "ORDERS", "subjects": ["orders.>"]})
    missing = str(tmp_path / "missing.json")
    result = jetlink("validate", good, missing)
    assert result.exit_code == 3
    assert result.stdout.startswith(f"{good}: OK\n")
    assert result.stderr == "1 problem in 1 file\n"


def test_example_topology_is_valid():
    path = str(EXAMPLES / "topology.toml")
    assert Path(path).is_file(), "examples/topology.toml (used by `make demo`) is missing"
    result = jetlink("validate", "--json", path)
    assert json.loads(result.stdout) == {"files": [path], "problems": [], "warnings": [],
                                            "valid": True}
    assert result.exit_code == 0


def test_broken_example_topology_has_problems():
    path = str(EXAMPLES / "broken-topology.toml")
    assert Path(path).is_file(), "examples/broken-topology.toml (used by `make demo`) is missing"
    result = jetlink("validate", "--json", path)
    assert result.exit_code == 3
    doc = json.loads(result.stdout)
    assert doc["valid"] is False and doc["problems"]
    for problem in doc["problems"]:
        # "detail" (the offending value, for people) when known
        assert list(problem) in (PROBLEM_KEYS, PROBLEM_KEYS + ["detail"])
        assert problem["file"] == path
        assert problem["description"]
    assert any(p["err_code"] for p in doc["problems"])  # not only "cannot read the file"


def test_bench_validate():
    result = jetlink("bench", "validate", "--count", "20", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert list(doc)[:3] == ["configs", "seconds", "configs_per_sec"]
    assert doc["configs"] == 20
    human = jetlink("bench", "validate", "--count", "20")
    assert re.match(r"configs: +20\n", human.stdout)
