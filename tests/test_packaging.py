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
