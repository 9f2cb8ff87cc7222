"""What the command modules share besides rendering (that is cli/output.py).

- :func:`open_jetstream`, the one place the stream / pub / sub / consumer verbs open the
  engine of the addressed cluster (``--cluster``); :func:`data_dir`, the data directory
  (``--data-dir``) the cluster verbs manage; :func:`make_clock`, the clock the engine runs with
  (tests replace it with a manual clock), and :func:`now_ns`, its time;
- :func:`usage`, a usage error (exit status 2) for what the argument parser cannot catch;
- :func:`read_json_file`, a JSON document from a ``--config FILE``;
- :func:`user_metadata`, the metadata keys a user set (natscli hides and never edits the
  ``_nats.*`` keys the server sets itself).

Not a command module: imported by command bodies only, never by ``jetlink --help``. Core is
imported inside the functions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.cli.app import App
    from jetlink.core.clock import Clock
    from jetlink.core.errors import UsageError
    from jetlink.core.jetstream import JetStream
    from jetlink.core.store import DataDir

# Metadata keys the server sets itself (natscli hides and never edits them).
RESERVED_METADATA_PREFIX = "_nats."


# -- the engine of the addressed cluster ----------------------------------------------------


def make_clock() -> Clock:
    """The clock every engine call runs with (tests put a ManualClock here)."""
    from jetlink.core.clock import SystemClock

    return SystemClock()


def now_ns() -> int:
    """The engine clock's time (what "3s ago" and --since are measured against)."""
    return make_clock().now_ns()


def _close_with_command(resource: Any) -> None:
    """Close ``resource`` (a DataDir) when the running command ends."""
    from typer._click.globals import get_current_context

    ctx = get_current_context(silent=True)
    if ctx is not None:
        ctx.call_on_close(resource.close)


def data_dir(app: App) -> DataDir:
    """The data directory of ``--data-dir`` (its databases are closed with the command)."""
    from jetlink.core.store import DataDir

    store = DataDir(app.data_dir)
    _close_with_command(store)
    return store


def open_jetstream(app: App) -> JetStream:
    """The JetStream API of the cluster named by ``--cluster`` (``local`` is created on
    first use; another name must have been added with ``jetlink cluster add``)."""
    from jetlink.core.jetstream import JetStream

    cluster = data_dir(app).open(app.cluster)
    return JetStream(cluster, make_clock())


# -- command-line values -------------------------------------------------------------------


def usage(message: str) -> UsageError:
    """A usage error (exit status 2) saying ``message``, for the caller to raise."""
    from jetlink.core.errors import UsageError

    return UsageError(message)


def read_json_file(path: Path) -> Any:
    """The JSON document in ``path``; an unreadable or unparsable file is a JetlinkError."""
    from jetlink.core.errors import JetlinkError

    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise JetlinkError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise JetlinkError(f"{path}: not a JSON document: {exc}") from None


def user_metadata(metadata: Mapping[str, str] | None) -> dict[str, str]:
    """``metadata`` without the keys the server manages (``_nats.*``)."""
    return {
        k: v for k, v in (metadata or {}).items() if not k.startswith(RESERVED_METADATA_PREFIX)
    }
