"""What the entry point needs before (and without) Typer: the command-line flags it looks
for, how an exception of a command becomes one error line, and the quick path.

The quick path (:func:`quick_kv_get`) runs ``jetlink kv get BUCKET KEY [--raw] [-j|--json]
[--revision N]`` without importing Typer and the Click it ships (a third of the command's
time, measured against the bare interpreter in docs/benchmarks.md "Start-up"). It takes
only that exact shape, with the global settings from the environment (JETLINK_DATA_DIR,
JETLINK_CLUSTER, JETLINK_CONTEXT, NATS_* and the contexts, as the root's options read them
when they are not on the command line), and does what the Typer app does for it: the root
callback's App (cli/root.py ``_root``: the context in force, the live server in force, the
backend), the command's body (cli/kv_get.py ``show_entry``, the one the Typer command runs)
and the root group's error handling (:func:`command_error`). Any other command line (a
global option, ``-h``, an unknown or malformed option, a shell completion) is left to the
Typer app, which also reports every usage error: the quick path never prints one.
tests/test_imports.py checks that the quick path imports no Typer and answers as the Typer
app does.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.cli.app import App
    from jetlink.core.contexts import Context
    from jetlink.core.errors import JetlinkError


def has_flag(args: Sequence[str], flags: Sequence[str]) -> bool:
    """One of ``flags`` anywhere in ``args`` before ``--``."""
    for arg in args:
        if arg == "--":
            return False
        if arg in flags:
            return True
    return False


def wants_json(args: Sequence[str]) -> bool:
    """``-j``/``--json`` anywhere before ``--``, or a check's ``--format json`` (its other
    spelling of -j): even a usage error is then one JSON document."""
    if has_flag(args, ("-j", "--json", "--format=json")):
        return True
    for i, arg in enumerate(args[:-1]):
        if arg == "--":
            return False
        if arg == "--format" and args[i + 1] == "json":
            return True
    return False


def command_error(exc: BaseException, directory: Any,
                  args: Sequence[str] | None = None) -> JetlinkError | None:
    """The one error line a command's exception is reported as (the root group's rule,
    cli/root.py ``JetlinkGroup.invoke``): a JetlinkError as it is, a storage fault or a
    Spark failure in jetlink's words; None: a bug, left to raise."""
    from jetlink.core.errors import JetlinkError

    if isinstance(exc, JetlinkError):
        return _argument_not_utf8(exc, sys.argv[1:] if args is None else args) or exc
    found: JetlinkError | None = (_storage_fault(exc, directory) or _spark_fault(exc)
                                  or _not_utf8(exc) or _too_deep(exc))
    return found


def _too_deep(exc: BaseException) -> Any:
    """A JSON document nested deeper than Python's decoder recurses (a stored record or a
    server's answer, a thousand arrays deep: the files and options a user gives are
    refused where they are read, naming them): one error line, nothing written (the
    write it was read for never began, or its transaction rolled back). None for any
    other RecursionError: that is a bug, and its traceback is how it gets reported."""
    if not isinstance(exc, RecursionError):
        return None
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = "" if tb is None else tb.tb_frame.f_code.co_filename.replace("\\", "/")
    if "/json/" not in where:  # the standard library's json package, and nothing else
        return None
    from jetlink.core.errors import TOO_DEEP, JetlinkError

    return JetlinkError(f"a JSON document read is {TOO_DEEP}")


def _argument_not_utf8(err: Any, args: Sequence[str]) -> Any:
    """A config refused for text that is not UTF-8 (core/config/codec.py ``not_utf8``) when
    that text came from the command line: the usage error naming the argument and its
    byte, as :func:`_not_utf8`; None when it came from elsewhere (a file: its 10025)."""
    text = getattr(err, "not_utf8", None)
    if not isinstance(text, str):
        return None
    from jetlink.cli.console import escaped_byte

    bad = escaped_byte(text)
    if bad is None:
        return None
    arg = next((a for a in args if bad in a and (a in text or text in a)), None)
    return None if arg is None else _argument_error(arg, bad)


def _not_utf8(exc: BaseException) -> Any:
    """A value of the command line that is not UTF-8 (Python holds its bytes as lone
    surrogates, which no name, subject or key can be written with): a usage error naming
    the argument and its first such byte; None for anything else. (A payload, a message's
    body or a value, keeps its bytes as given: it never gets here.)"""
    if not isinstance(exc, UnicodeEncodeError) or not isinstance(exc.object, str):
        return None
    bad = exc.object[exc.start:exc.end]
    if not bad or not all("\udc80" <= c <= "\udcff" for c in bad):
        return None
    return _argument_error(next((a for a in sys.argv[1:] if bad in a), exc.object), bad[0])


def _argument_error(arg: str, bad: str) -> Any:
    """cli/app.py ``argument_error``: the usage error of an argument that is not UTF-8."""
    from jetlink.cli.app import argument_error

    return argument_error(arg, bad)


def _storage_fault(exc: BaseException, directory: Any) -> Any:
    """A storage fault that escaped the store's own wrapping (store/health.py), as one
    error line: SQLite's (damage only when ``cluster check``'s checks agree), and the OS
    refusing a write (read-only, no permission, no space); None for anything else."""
    import errno

    if isinstance(exc, OSError) and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM,
                                                  errno.ENOSPC, errno.EDQUOT):
        from jetlink.core.errors import JetlinkError

        # (cli/output StdoutRefused: a write to stdout, named "stdout")
        what = " to stdout" if exc.filename == "stdout" else \
            f" {exc.filename}" if exc.filename else ""
        return JetlinkError(f"cannot write{what}: {exc.strerror or exc}")
    if isinstance(exc, UnicodeDecodeError) and isinstance(exc.object, bytes) and directory:
        # (a TEXT column sqlite3 could not decode: a damaged page's bytes, when a database
        # of the data directory checks damaged; else a bug, and its traceback)
        from jetlink.core.store.datadir import damage_in

        return damage_in(exc, directory)
    if type(exc).__module__ != "sqlite3":
        return None
    from jetlink.core.store.datadir import confirmed_in
    from jetlink.core.store.health import storage_error

    err = storage_error(exc)
    if err is None:
        from jetlink.core.retry import passes

        if passes(exc):  # busy or locked past the busy timeout: not a crash, not damage
            from jetlink.core.store.health import StorageError

            busy = StorageError(f"data directory {directory}: a database stayed busy ({exc}): "
                                "another process held it; nothing was written, run the "
                                "command again")
            busy.transient = True
            return busy
        return None
    return confirmed_in(err, exc, directory)


def interrupted_job(exc: BaseException) -> bool:
    """A Spark failure that follows an interrupt (Ctrl-C): py4j's clean-up of the call the
    interrupt cut short can fail in its turn (a new gateway connection refused), and that
    failure is the interrupt, exit 130, not a job that failed (sparkops/session.py
    ``interrupted``; looked up only when a Spark job ran: this module never loads it)."""
    session = sys.modules.get("jetlink.sparkops.session")
    return session is not None and not isinstance(exc, KeyboardInterrupt) \
        and session.as_interrupt(exc) is not None


def _spark_fault(exc: BaseException) -> Any:
    """A Spark job that failed in the JVM (py4j / pyspark exceptions: an executor lost, out
    of memory...) as one error line naming the cause and Spark's log; None for anything
    else."""
    module = type(exc).__module__
    if not module.startswith(("py4j", "pyspark")):
        return None
    from jetlink.core.errors import JetlinkError
    from jetlink.sparkops.session import failure_text

    return JetlinkError(failure_text(exc))


def apply_context(app: App, found: Context | None, *, need_dir: bool,
                  need_cluster: bool) -> None:
    """The context in force fills in the data directory and the cluster the command line
    and the environment left unset (cli/root.py ``_apply_context`` has the precedence)."""
    from pathlib import Path

    if found is None:
        return
    if need_dir and found.data_dir:
        app.data_dir = Path(found.data_dir).expanduser()
    if need_cluster and found.cluster:
        app.cluster = found.cluster
        app.cluster_from = f"context {found.name}"


# -- the quick path ----------------------------------------------------------------------------


def quick_kv_get(args: Sequence[str]) -> int | None:
    """Run ``args`` when they are a plain ``kv get`` (module doc) and return the exit status;
    None: not that shape, nothing was done (the Typer app runs it)."""
    import os

    from jetlink.cli.app import COMPLETE_VAR

    line = _kv_get_line(args)
    if line is None or os.environ.get(COMPLETE_VAR):
        return None
    bucket, key, revision, raw, as_json = line
    root = _root_app(os.environ)
    if root is None:
        return None
    app, given = root
    app.json = as_json
    try:
        if not _open(app, given):
            return None  # (the selection's rules: the Typer app's, cli/common.py)
        from jetlink.cli.kv_get import show_entry

        show_entry(app, bucket, key, revision=revision, raw=raw)
    except KeyboardInterrupt:  # Typer's rule inside a command: exit 130, nothing printed
        return 130
    except Exception as exc:  # noqa: BLE001 - sorted as the root group sorts them
        return _failed(app, exc)
    finally:
        if app.backend is not None:
            app.backend.close()
    return 0


def _kv_get_line(args: Sequence[str]) -> tuple[str, str, int | None, bool, bool] | None:
    """(bucket, key, revision, raw, json) of ``kv get BUCKET KEY`` with only ``--raw``,
    ``-j``/``--json`` and one ``--revision N`` (N a positive integer in digits), in any
    order; None for anything else (an argument that is not UTF-8 too: the Typer app refuses
    it, cli/app.py ``utf8_params``)."""
    if len(args) < 4 or args[0] != "kv" or args[1] != "get":
        return None
    from jetlink.cli.console import escaped_byte

    if any(escaped_byte(a) for a in args):
        return None
    words: list[str] = []
    raw = as_json = False
    revision: int | None = None
    rest = iter(args[2:])
    for arg in rest:
        if arg == "--raw":
            raw = True
        elif arg in ("-j", "--json"):
            as_json = True
        elif arg == "--revision" or arg.startswith("--revision="):
            value = arg.partition("=")[2] if "=" in arg else next(rest, "")
            # digits of a positive int64 only; any other value is the Typer app's to judge
            if revision is not None or not (value.isascii() and value.isdigit()) or \
                    len(value) > 18 or int(value) < 1:
                return None
            revision = int(value)
        elif arg.startswith("-"):
            return None
        else:
            words.append(arg)
    if len(words) != 2:
        return None
    return words[0], words[1], revision, raw, as_json


def _root_app(environ: Any) -> tuple[App, tuple[bool, bool]] | None:
    """The App the root callback builds when no global option is on the command line: the
    environment's JETLINK_DATA_DIR and JETLINK_CLUSTER (an empty one is unset, as Click reads
    them), else the defaults; and whether each of the two was given. None when Click would
    refuse the data directory (it must be readable when it exists): the Typer app then says
    so."""
    import os
    from pathlib import Path

    from jetlink.cli.app import DEFAULT_CLUSTER, ENV_CLUSTER, ENV_DATA_DIR, App, default_data_dir

    data_dir = environ.get(ENV_DATA_DIR) or None
    if data_dir is not None and os.path.exists(data_dir) and not os.access(data_dir, os.R_OK):
        return None
    cluster = environ.get(ENV_CLUSTER) or None
    app = App(data_dir=Path(data_dir).expanduser() if data_dir else default_data_dir(),
              cluster=cluster or DEFAULT_CLUSTER)
    return app, (data_dir is not None, cluster is not None)


def _open(app: App, given: tuple[bool, bool]) -> bool:
    """The rest of the root callback: the context in force (JETLINK_CONTEXT, else the
    selected one) fills in what the environment left unset, then the live server in force
    and the backend (a read: nothing is created). False, nothing opened: a *selected*
    context with something in the environment that sets it aside (JETLINK_DATA_DIR,
    JETLINK_CLUSTER, NATS_CONTEXT), or a selection naming a removed context: the root's
    rules for those (cli/common.py ``target_in_force``, ``context_in_force``: a notice, a
    warning) are the Typer app's to apply."""
    import os

    from jetlink.cli.app import ENV_CONTEXT
    from jetlink.cli.common import open_backend, target_of
    from jetlink.core.contexts import ContextStore
    from jetlink.core.errors import NotFoundError

    named = os.environ.get(ENV_CONTEXT) or None
    try:
        found = ContextStore().in_force(named, source=ENV_CONTEXT)
    except NotFoundError:
        if named is None:
            return False
        raise
    if found is not None and named is None and any(
            os.environ.get(v) for v in ("JETLINK_DATA_DIR", "JETLINK_CLUSTER", "NATS_CONTEXT")):
        return False
    dir_given, cluster_given = given
    apply_context(app, found, need_dir=not dir_given, need_cluster=not cluster_given)
    app.target = target_of({"tlsfirst": False}, found)
    app.backend = open_backend(app, reads=True)
    return True


def _failed(app: App, exc: Exception) -> int:
    """A command's exception as the root group and Typer report it: one error line (JSON
    with --json) and its exit status; end of input: ``Aborted!``, 1; a closed stdout: 1,
    silently; anything else is a bug and raises."""
    import errno

    err = command_error(exc, app.data_dir)
    if err is not None:
        from jetlink.cli.output import print_error

        print_error(app, err)
        return err.exit_code
    if isinstance(exc, EOFError):
        print(file=sys.stderr)
        print("Aborted!", file=sys.stderr)
        return 1
    if isinstance(exc, OSError) and exc.errno == errno.EPIPE:
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    raise exc
