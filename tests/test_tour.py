"""docs/cli-tour-replication.md and docs/cli-tour-streams.md stay true: every command in them
is re-run in a fresh data directory and must print what the page shows (durations,
timestamps, sizes, ack replies and stream identities masked; interactive `# meanwhile`
blocks and `# in a second terminal` commands are not re-run, a `# figures vary` benchmark's
output is not compared). Refresh a page with ``python scripts/tour.py PAGE``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOURS = ["docs/cli-tour-replication.md", "docs/cli-tour-streams.md"]


@pytest.mark.parametrize("tour", TOURS)
def test_tour_output_is_current(tour):
    if not (ROOT / ".venv" / "bin" / "jetlink").exists():
        pytest.skip("the tour runs the installed jetlink of .venv")
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "tour.py"), "--check", tour],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


def test_tour_check_notices_a_changed_output(tmp_path):
    page = tmp_path / "tour.md"
    page.write_text("```console\n$ echo one\ntwo\n```\n", encoding="utf-8")
    script = str(ROOT / "scripts" / "tour.py")
    proc = subprocess.run([sys.executable, script, "--check", str(page)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1 and "output of `echo one` changed" in proc.stderr
    subprocess.run([sys.executable, script, str(page)], check=True, timeout=60)
    assert page.read_text(encoding="utf-8") == "```console\n$ echo one\none\n```\n"


def test_tour_keeps_second_terminal_commands_and_refreshes_varying_figures(tmp_path):
    page = tmp_path / "tour.md"
    page.write_text("```console\n$ cat /nonexistent-input   # in a second terminal\nkept\n\n"
                    "$ echo two\ntwo\n\n$ echo $RANDOM   # figures vary\n1\n```\n",
                    encoding="utf-8")
    script = str(ROOT / "scripts" / "tour.py")
    proc = subprocess.run([sys.executable, script, "--check", str(page)], capture_output=True,
                          text=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (0, "")
    subprocess.run([sys.executable, script, str(page)], check=True, timeout=60)
    text = page.read_text(encoding="utf-8")
    assert text.startswith("```console\n$ cat /nonexistent-input   # in a second terminal\n"
                           "kept\n\n$ echo two\ntwo\n\n$ echo $RANDOM   # figures vary\n")
