"""The committed completions/ and man/ are what scripts/generate.py writes today.

Regenerates into a temporary directory and compares file by file; on a difference run
``make generated`` and commit the result.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GENERATED_DIRS = ("completions", "man")


def tree(root: Path) -> dict[str, str]:
    files = {}
    for name in GENERATED_DIRS:
        for path in sorted((root / name).glob("jetlink*")):
            if path.is_file():
                files[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
    return files


def test_generated_files_are_fresh(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "generate.py"), "--output-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    fresh, committed = tree(tmp_path), tree(REPO)
    hint = "generated files are stale: run `make generated` and commit completions/ and man/"
    assert sorted(committed) == sorted(fresh), hint
    stale = [name for name in fresh if fresh[name] != committed[name]]
    assert stale == [], f"{hint} ({', '.join(stale)})"


def test_generation_is_deterministic(tmp_path):
    outputs = []
    for run in ("a", "b"):
        out = tmp_path / run
        subprocess.run(
            [sys.executable, str(REPO / "scripts" / "generate.py"), "--output-dir", str(out)],
            check=True,
            capture_output=True,
            timeout=120,
        )
        outputs.append(tree(out))
    assert outputs[0] == outputs[1]
    assert sorted(outputs[0]) == [
        "completions/jetlink.bash",
        "completions/jetlink.fish",
        "completions/jetlink.zsh",
        *sorted(n for n in outputs[0] if n.startswith("man/")),
    ]
    assert "man/jetlink.1" in outputs[0]
    assert {"man/jetlink-validate.1", "man/jetlink-bench.1"} <= set(outputs[0])


def test_completion_scripts_are_what_jetlink_prints():
    # With shell detection disabled, Typer's --show-completion takes the shell as a value.
    env = {**os.environ, "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    for shell in ("bash", "zsh", "fish"):
        proc = subprocess.run(
            [sys.executable, "-m", "jetlink.cli.main", "--show-completion", shell],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert proc.returncode == 0, proc.stderr
        committed = (REPO / "completions" / f"jetlink.{shell}").read_text(encoding="utf-8")
        body = [line for line in committed.splitlines() if not line.startswith("# Generated")]
        assert body == proc.stdout.rstrip("\n").splitlines()


def test_man_pages_parse_cleanly():
    groff = subprocess.run(["sh", "-c", "command -v groff"], capture_output=True, text=True)
    if groff.returncode != 0:
        return  # groff is optional; the freshness test above is the contract
    for page in sorted((REPO / "man").glob("jetlink*.1")):
        proc = subprocess.run(
            ["groff", "-man", "-Tutf8", "-ww", "-z", str(page)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0 and proc.stderr == "", f"{page.name}: {proc.stderr}"
