"""README.md stays true: its topology example is valid and its commands exist."""

import re
from pathlib import Path

from jetlink.core.topology import validate_files

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_readme_topology_example_is_valid(tmp_path):
    blocks = re.findall(r"```toml\n(.*?)```", README, re.S)
    assert blocks, "README.md has no TOML topology example"
    path = tmp_path / "readme.toml"
    path.write_text(blocks[0])
    assert [p.to_dict() for p in validate_files([str(path)])] == []


def test_readme_names_the_two_commands():
    assert "make demo" in README and "make test" in README


def test_readme_exit_codes_match_the_cli():
    from jetlink.cli.app import ExitCode

    table = dict(re.findall(r"^\| (\d+) \| (.+?) \|$", README, re.M))
    assert {int(code) for code in table} == {int(code) for code in ExitCode}
    assert table[str(int(ExitCode.PROBLEMS))].startswith("`validate` found problems")


def test_readme_help_is_the_cli_help():
    """The tour's `jetlink --help` block is what `jetlink --help` prints on a terminal (click
    wraps help at 78 columns however wide the terminal is)."""
    from helpers import runner

    from jetlink.cli.main import app

    block = README.split("```console\n$ jetlink --help\n", 1)[1].split("```", 1)[0]
    result = runner.invoke(app, ["--help"], prog_name="jetlink", terminal_width=78)
    assert result.exit_code == 0
    assert block == result.stdout


def demo_excerpt_commands() -> list[str]:
    """The `$ jetlink ...` lines of README.md's `make demo` excerpt (temporary paths cut)."""
    block = README.split("<!-- demo excerpt", 1)[1].split("```console\n", 1)[1].split("```", 1)[0]
    return [re.sub(r"/tmp/jetlink-demo-\w+/", "", line[2:]) for line in block.splitlines()
            if line.startswith("$ jetlink ")]
