"""Small helpers of the live CLI tests: a run that must succeed, its JSON document, and
the installed ``jetlink`` run as a process of its own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

JETLINK = str(Path(sys.executable).with_name("jetlink"))


def jetlink_process(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess:
    """``jetlink -s URL ARGS`` as a process (its own environment under ``tmp_path``): what a
    signal or a server going away does to a whole command."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "JETLINK_DATA_DIR": str(tmp_path / "data")}
    return subprocess.run([JETLINK, "-s", url, *args], capture_output=True, text=True,
                          timeout=600, env=env)


def ok(res: Any) -> Any:
    """A CLI result that exited 0 (else the assertion shows its status and output)."""
    assert res.exit_code == 0, (res.exit_code, res.stdout, res.stderr)
    return res


def doc(res: Any) -> Any:
    """The JSON document a successful CLI run printed."""
    return json.loads(ok(res).stdout)
