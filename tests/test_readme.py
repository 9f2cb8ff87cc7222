"""README.md and the documentation site stay true: README is short and links to pages that
exist, every page of docs/ is in mkdocs.yml's nav, and what the pages show is what jetlink
does (the topology example is valid, the exit-code table and the `jetlink --help` block are
the CLI's, the demo excerpt's commands are the drill's)."""

import re
from pathlib import Path

from jetlink.core.topology import validate_files

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = (ROOT / "README.md").read_text()


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def test_readme_is_at_most_400_lines():
    assert len(README.splitlines()) <= 400


def test_readme_links_to_files_that_exist():
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [link for link in links if "://" not in link]
    assert any(link.startswith("docs/") for link in local)
    missing = [link for link in local if not (ROOT / link).exists()]
    assert missing == []


def nav_pages() -> list[str]:
    """The pages mkdocs.yml's nav names (its `- Title: page.md` lines)."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text.split("\nnav:\n", 1)[1]
    return re.findall(r"^\s*- (?:[^:\n]+|\"[^\"]+\"): ([\w./-]+\.md)\s*$", nav, re.M)


def test_every_docs_page_is_in_the_nav():
    pages = nav_pages()
    assert len(pages) == len(set(pages))
    on_disk = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(pages) == on_disk


def test_the_generated_cli_reference_is_in_the_nav_and_linked():
    assert "cli.md" in nav_pages()
    assert "](docs/cli.md)" in README
    assert "](cli.md)" in page("index.md")


def test_topology_example_is_valid(tmp_path):
    blocks = re.findall(r"```toml\n(.*?)```", page("topology-as-code.md"), re.S)
    assert blocks, "docs/topology-as-code.md has no TOML topology example"
    path = tmp_path / "example.toml"
    path.write_text(blocks[0])
    assert [p.to_dict() for p in validate_files([str(path)])] == []


def test_readme_names_the_two_commands():
    assert "make demo" in README and "make test" in README


def test_exit_codes_match_the_cli():
    from jetlink.cli.app import ExitCode

    table = dict(re.findall(r"^\| (\d+) \| (.+?) \|$", page("exit-codes.md"), re.M))
    assert {int(code) for code in table} == {int(code) for code in ExitCode}
    assert table[str(int(ExitCode.PROBLEMS))].startswith("`validate` found problems")


def test_help_is_the_cli_help():
    """The tour's `jetlink --help` block (docs/basics.md) is what `jetlink --help` prints on a
    terminal (click wraps help at 78 columns however wide the terminal is)."""
    from helpers import runner

    from jetlink.cli.main import app

    block = page("basics.md").split("```console\n$ jetlink --help\n", 1)[1].split("```", 1)[0]
    result = runner.invoke(app, ["--help"], prog_name="jetlink", terminal_width=78)
    assert result.exit_code == 0
    assert block == result.stdout


def demo_excerpt_commands() -> list[str]:
    """The `$ jetlink ...` lines of docs/demo.md's `make demo` excerpt (temporary paths cut)."""
    text = page("demo.md")
    block = text.split("<!-- demo excerpt", 1)[1].split("```console\n", 1)[1].split("```", 1)[0]
    return [re.sub(r"/tmp/jetlink-demo-\w+/", "", line[2:]) for line in block.splitlines()
            if line.startswith("$ jetlink ")]
