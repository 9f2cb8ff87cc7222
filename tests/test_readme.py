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
