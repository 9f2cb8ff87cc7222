"""Where jetlink keeps its files by default: the XDG base directories, one rule.

``home("data")`` is ``$XDG_DATA_HOME/jetlink`` (the data directory), ``home("config")``
``$XDG_CONFIG_HOME/jetlink`` (contexts); an unset, empty or relative variable falls back to
``~/.local/share`` / ``~/.config``, as the XDG base-directory spec says. Standard library only:
imported by ``jetlink --help``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

PROG = "jetlink"
_BASES = {"data": ("XDG_DATA_HOME", (".local", "share")), "config": ("XDG_CONFIG_HOME",
                                                                      (".config",))}


def home(kind: str, environ: Mapping[str, str] | None = None) -> Path:
    """jetlink's ``kind`` ("data" or "config") directory under the XDG base directory."""
    var, fallback = _BASES[kind]
    env = os.environ if environ is None else environ
    base = env.get(var, "")
    if base and os.path.isabs(base):
        return Path(base) / PROG
    user = env.get("HOME") or os.path.expanduser("~")
    return Path(user).joinpath(*fallback) / PROG
