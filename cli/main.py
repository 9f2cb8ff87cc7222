"""jetlink's entry point: the ``jetlink`` console script and ``python -m jetlink.cli.main``.

:func:`run` hands a plain ``jetlink kv get`` to the quick path (cli/launch.py
``quick_kv_get``: no Typer imported, the same answer) and every other command line to the
Typer app (cli/root.py: the root app, its global options, the lazily loaded commands). This
module imports neither: the names of cli/root.py (``app``, ``build_app``, ``COMMANDS`` ...)
are served from here as well, loaded when first asked for.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from typing import Any


def __getattr__(name: str) -> Any:
    """``jetlink.cli.main.app`` and the other names of the Typer app (cli/root.py). Not the
    import system's own questions (``__path__`` ...): they must not load the app."""
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from jetlink.cli import root

    try:
        return getattr(root, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def run(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point (``jetlink``), also ``python -m jetlink.cli.main``."""
    args = list(sys.argv[1:] if argv is None else argv)
    # A background job of a shell without job control starts with SIGINT ignored, and Python
    # leaves it so: `kill -INT` then did nothing to a following command. natscli listens to
    # it all the same (Go's signal.Notify installs its handler over an ignored SIGINT); so
    # does jetlink: an interrupt ends any command with 130 (docs/exit-codes.md).
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # A closed stdout or stderr (`jetlink ... >&-`) is None in Python: what would be written
    # there goes nowhere, as a Go program's writes to a closed descriptor do (natscli), and
    # the command's exit code is its own.
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - for the whole process
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the whole process
    try:
        from jetlink.cli.launch import quick_kv_get

        status = quick_kv_get(args)
        if status is not None:
            sys.exit(status)
        from jetlink.cli.root import run_app

        run_app(args, globals().get("app"))  # an app set on this module (tests) runs instead
    except KeyboardInterrupt:  # while the modules load and the app is built: as Typer's
        sys.exit(130)          # rule inside a command, exit 130 and nothing printed


if __name__ == "__main__":
    run()
