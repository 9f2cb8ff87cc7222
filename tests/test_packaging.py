"""What `pip install` puts in place besides the code: the man pages, where man finds them."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_installs_every_man_page_under_share_man(tmp_path):
    import shutil

    src = tmp_path / "src"  # a copy: building writes build/ and *.egg-info beside the code
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".venv", ".git", "build", "*.egg-info", "__pycache__", ".pytest_cache"))
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(src),
                          "-w", str(tmp_path / "dist")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    [wheel] = (tmp_path / "dist").glob("jetlink-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    pages = sorted(n.rsplit("/", 1)[1] for n in names if "/data/share/man/man1/" in n)
    assert pages == sorted(p.name for p in (ROOT / "man").glob("*.1"))
    assert "jetlink.1" in pages
    # the shell completions where each shell looks under the prefix
    shells = sorted(n.split("/data/", 1)[1] for n in names if "/data/share/" in n
                    and "/man/" not in n)
    assert shells == ["share/bash-completion/completions/jetlink.bash",
                      "share/fish/vendor_completions.d/jetlink.fish",
                      "share/zsh/site-functions/_jetlink"]


def test_without_the_spark_extra_the_commands_say_how_to_install_it(monkeypatch, tmp_path):
    import importlib.util

    from helpers import runner

    from jetlink.cli.main import app

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("pyspark", "pyarrow") else
                        real(name, *a))
    for args in (["spark", "verify", "store:A", "store:B"], ["stream", "export", "S",
                                                             f"parquet:{tmp_path}/x"],
                 ["stream", "import", "S", f"parquet:{tmp_path}/x"], ["bench", "spark"],
                 ["demo"]):
        res = runner.invoke(app, ["--data-dir", str(tmp_path / "d"), *args],
                            prog_name="jetlink")
        assert res.exit_code == 1, (args, res.stdout, res.stderr)
        assert "needs pyspark, pyarrow, which this installation does not have: pip install " \
               "'jetlink[spark]'" in res.stderr, res.stderr
        assert "Traceback" not in res.stderr
    # the live drill's failback saves a tail as Parquet: said before any server starts
    res = runner.invoke(app, ["demo", "--live"], prog_name="jetlink")
    assert (res.exit_code, res.stderr) == (1, (
        "jetlink: error: jetlink demo --live (its failback saves a divergent tail as Parquet) "
        "needs pyarrow, not installed here: pip install 'jetlink[spark]' (pyspark, pyarrow "
        "and pandas, about 0.7 GB)\n"))
    # the rest of jetlink does not need it
    assert runner.invoke(app, ["--data-dir", str(tmp_path / "d"), "stream", "add", "S",
                               "--subjects", "s.>", "--defaults"]).exit_code == 0


def test_dependencies_are_ranges_and_the_constraints_pin_them():
    import tomllib

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not [d for d in meta["dependencies"] if "==" in d]
    assert {d.split(">")[0] for d in meta["optional-dependencies"]["spark"]} == {
        "pyspark", "pyarrow", "pandas"}
    pins = dict(line.split("==") for line in (ROOT / "constraints.txt").read_text().splitlines()
                if line and not line.startswith("#"))
    for dep in ["typer", "rich", "textual", "httpx", "pyspark", "pyarrow", "pandas", "nats-py"]:
        assert dep in pins, dep
    makefile = (ROOT / "Makefile").read_text()
    assert "-c constraints.txt -e '.[spark,live]'" in makefile
    assert "-c constraints.txt -e '.[spark,live,test]'" in makefile


def test_man_finds_the_pages_in_the_environment_make_built():
    """`make demo` / `make test` install jetlink editable, which leaves data files out: the
    Makefile links the pages into the environment's share/man/man1, where man looks from
    the environment's bin/ on PATH."""
    import os
    import shutil

    import pytest

    if Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
        pytest.skip("not the environment `make test` builds")
    pages = Path(sys.prefix) / "share" / "man" / "man1"
    assert sorted(p.name for p in pages.glob("*.1")) == sorted(
        p.name for p in (ROOT / "man").glob("*.1"))
    if shutil.which("man") is None:
        pytest.skip("no man command on this machine")
    env = {**os.environ, "PATH": f"{Path(sys.prefix) / 'bin'}:/usr/bin:/bin"}
    env.pop("MANPATH", None)
    found = subprocess.run(["man", "-w", "jetlink"], capture_output=True, text=True, env=env)
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()).resolve() == (ROOT / "man" / "jetlink.1").resolve()
