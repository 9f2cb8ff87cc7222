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


def without_user_settings() -> dict[str, str]:
    """This process's environment without the user's jetlink and NATS settings (every
    ``JETLINK_*`` and ``NATS_*`` variable)."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("JETLINK_", "NATS_"))}


def child_env(config_home: str, **extra: str) -> dict[str, str]:
    """:func:`without_user_settings` for a jetlink child, without PYTHONDONTWRITEBYTECODE;
    ``config_home`` (absolute) its XDG_CONFIG_HOME; ``extra`` set on top."""
    env = without_user_settings()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["XDG_CONFIG_HOME"] = os.path.abspath(config_home)
    env.update(extra)
    return env
