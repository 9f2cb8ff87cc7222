"""The environment of the jetlink processes a benchmark starts.

A benchmark times its own work in its own data directory: the user's settings must not
reach the processes it starts, or it measures (or fails on) the user's cluster instead.
:func:`child_env` leaves out every ``JETLINK_*`` and ``NATS_*`` variable (data directory,
cluster, context, server settings) and points ``XDG_CONFIG_HOME`` at a directory of the
benchmark's own, where no context is selected; ``PYTHONDONTWRITEBYTECODE`` is left out too,
so jetlink is timed as installed, bytecode compiled.
"""

from __future__ import annotations

import os


def child_env(config_home: str, **extra: str) -> dict[str, str]:
    """This process's environment for a jetlink child, without the user's jetlink and NATS
    settings; ``config_home`` (absolute) its XDG_CONFIG_HOME; ``extra`` set on top."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JETLINK_", "NATS_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env["XDG_CONFIG_HOME"] = os.path.abspath(config_home)
    env.update(extra)
    return env
