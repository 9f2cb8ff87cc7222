"""Contexts (like ``nats context``): named sets of defaults for the global options.

A context names a data directory, a cluster (and a REST URL for the ``links`` / ``mirrors``
verbs) plus a description. The files live in the XDG config directory (:func:`config_dir`)::

    <config>/context/<NAME>.toml   one file per context (keys: description, data_dir,
                                   cluster, rest_url; each optional)
    <config>/context.txt           the name of the selected context and a newline (as
                                   natscli's ~/.config/nats/context.txt)

``<config>`` is ``$XDG_CONFIG_HOME/jetlink`` when XDG_CONFIG_HOME is set, absolute and not
empty, else ``~/.config/jetlink``. The directories are created with mode 0700, the files with
0600; every write goes to a temporary file in the same directory (created 0600) that then
replaces the target (``os.replace``), so a reader never sees half a file. TOML is written with
tomli-w and read with tomllib.

Names are validated (``[A-Za-z0-9_-]``, 1 to 100 characters) before they touch the
filesystem, so a context name can never escape the config directory. A file that is not valid
TOML, holds an unknown key or a value of the wrong type is a :class:`JetlinkError` naming the
file, never a traceback.

Which context is in force and how its values rank against the command line and the
environment is decided by the CLI (cli/root.py); this module only stores. It imports no
Typer, Rich or other CLI library.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jetlink.core.errors import JetlinkError, NotFoundError, UsageError, quoted

__all__ = [
    "CONTEXT_KEYS",
    "SERVER_KEYS",
    "Context",
    "ContextStore",
    "config_dir",
    "validate_context_name",
]

NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,100}")
# A live server's settings (natscli's connection flags; core/live/settings.py reads them).
SERVER_KEYS = ("server", "user", "password", "creds", "nkey", "tlscert", "tlskey", "tlsca",
               "tlsfirst", "js_domain", "inbox_prefix", "timeout", "nats_context")
CONTEXT_KEYS = ("description", "data_dir", "cluster", "rest_url", *SERVER_KEYS)
MASK = "********"
SUFFIX = ".toml"
PREVIOUS_FILE = "previous-context.txt"
SELECTED_FILE = "context.txt"
CONTEXT_DIR = "context"
DIR_MODE = 0o700
FILE_MODE = 0o600


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/jetlink``, or ``~/.config/jetlink`` when XDG_CONFIG_HOME is unset,
    empty or relative (core/xdg.py)."""
    from .xdg import home

    return home("config", environ)


def validate_context_name(name: Any) -> str:
    """``name`` when it is a valid context name (``[A-Za-z0-9_-]{1,100}``), else a
    UsageError (``field="name"``: a name is given on a command line, an option or
    JETLINK_CONTEXT; exit status 2)."""
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise UsageError(
            f"invalid context name {quoted(name)}: use 1 to 100 letters, digits, '_' or "
            "'-'",
            field="name",
        )
    return name


def validate_cluster(cluster: Any) -> str:
    from .store.datadir import validate_cluster_name

    return validate_cluster_name(cluster, field="cluster")


@dataclass(frozen=True)
class Context:
    """One context: its name (the file's stem) and the values it sets (None: not set)."""

    name: str
    description: str = ""
    data_dir: str | None = None
    cluster: str | None = None
    rest_url: str | None = None
    server: str | None = None
    user: str | None = None
    password: str | None = None
    creds: str | None = None
    nkey: str | None = None
    tlscert: str | None = None
    tlskey: str | None = None
    tlsca: str | None = None
    tlsfirst: bool = False
    js_domain: str | None = None
    inbox_prefix: str | None = None
    timeout: str | None = None
    nats_context: str | None = None

    def __post_init__(self) -> None:
        validate_context_name(self.name)
        if not isinstance(self.description, str):
            raise JetlinkError("context description must be a string", field="description")
        for key in ("data_dir", "rest_url"):
            value = getattr(self, key)
            if value is not None and (not isinstance(value, str) or not value):
                raise JetlinkError(f"context {key} must be a non-empty string", field=key)
        if self.cluster is not None:
            validate_cluster(self.cluster)
        for key in SERVER_KEYS:
            value = getattr(self, key)
            if key == "tlsfirst":
                if not isinstance(value, bool):
                    raise JetlinkError("context tlsfirst must be true or false", field=key)
            elif value is not None and (not isinstance(value, str) or not value):
                raise JetlinkError(f"context {key} must be a non-empty string", field=key)
        from .live.settings import (
            check_subject_setting,
            parse_servers,
            parse_timeout,
            validate_nats_context_name,
        )

        if self.server is not None:
            parse_servers(self.server, f"context {self.name} server")
        if self.nats_context is not None:  # a file name in natscli's directory, no path
            validate_nats_context_name(self.nats_context)
        for key in ("js_domain", "inbox_prefix"):
            check_subject_setting(key, getattr(self, key), f"context {self.name} {key}")
        if self.timeout is not None:
            parse_timeout(self.timeout, f"context {self.name} timeout")

    def check_connection(self) -> None:
        """What a connection made from it needs, checked when a context is added or changed
        (a file written before these rules still loads: its command fails when it
        connects, naming the same rule): a client certificate's two files, a password only
        with a user. (A natscli context's name is checked whenever a context is made, from
        a file too: :meth:`__post_init__`.)"""
        if (self.tlscert is None) != (self.tlskey is None):
            missing = "tlskey" if self.tlskey is None else "tlscert"
            raise UsageError(f"context {self.name}: a client certificate needs both tlscert "
                               f"and tlskey (--tlscert, --tlskey): {missing} is missing",
                               field=missing)
        if self.password is not None and self.user is None:
            raise UsageError(f"context {self.name}: password needs user (--user): a "
                               "password alone is no credential", field="password")

    def server_settings(self) -> dict[str, Any]:
        """The live-server settings it sets (the password masked, in the server URL too),
        for the documents."""
        from .live.target import shown_url

        out: dict[str, Any] = {}
        for key in SERVER_KEYS:
            value = getattr(self, key)
            if value not in (None, False):
                out[key] = (MASK if key == "password" else
                            shown_url(value) if key == "server" else value)
        return out

    def to_toml(self) -> dict[str, Any]:
        """The file's document: the keys that are set, in CONTEXT_KEYS order."""
        doc: dict[str, Any] = {"description": self.description} if self.description else {}
        for key in ("data_dir", "cluster", "rest_url", *SERVER_KEYS):
            value = getattr(self, key)
            if value is not None and value is not False:
                doc[key] = value
        return doc

    def to_dict(self) -> dict[str, Any]:
        """name and every key of CONTEXT_KEYS (None when not set)."""
        return {
            "name": self.name,
            "description": self.description,
            "data_dir": self.data_dir,
            "cluster": self.cluster,
            "rest_url": self.rest_url,
            **({"nats": self.server_settings()} if self.server_settings() else {}),
        }

    @classmethod
    def from_toml(cls, name: str, doc: Mapping[str, Any], *, source: str = "") -> Context:
        """A context from a file's document; an unknown key or a bad value is a JetlinkError
        naming ``source`` (the file) and the key."""
        where = f"{source}: " if source else ""
        unknown = sorted(set(doc) - set(CONTEXT_KEYS))
        if unknown:
            raise JetlinkError(
                f"{where}unknown key {unknown[0]!r} (known: {', '.join(CONTEXT_KEYS)})",
                field=unknown[0],
            )
        for key, value in doc.items():
            want = bool if key == "tlsfirst" else str
            if not isinstance(value, want):
                raise JetlinkError(
                    f"{where}{key} must be a {'boolean' if want is bool else 'string'}, not "
                    f"{type(value).__name__}", field=key
                )
        try:
            return cls(
                name=name,
                description=doc.get("description", ""),
                data_dir=doc.get("data_dir") or None,
                cluster=doc.get("cluster") or None,
                rest_url=doc.get("rest_url") or None,
                tlsfirst=bool(doc.get("tlsfirst", False)),
                **{k: doc.get(k) or None for k in SERVER_KEYS if k != "tlsfirst"},
            )
        except JetlinkError as err:
            raise JetlinkError(f"{where}{err.description}", field=err.field) from None


class ContextStore:
    """The context files of one config directory (default :func:`config_dir`)."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else config_dir()

    # -- paths ------------------------------------------------------------------------------

    @property
    def context_dir(self) -> Path:
        return self.root / CONTEXT_DIR

    @property
    def selected_path(self) -> Path:
        return self.root / SELECTED_FILE

    @property
    def previous_path(self) -> Path:
        """The context selected before the current selection (natscli's
        ``previous-context.txt``), for ``context previous``."""
        return self.root / PREVIOUS_FILE

    def path(self, name: str) -> Path:
        """``<root>/context/<name>.toml`` (``name`` validated first)."""
        return self.context_dir / f"{validate_context_name(name)}{SUFFIX}"

    # -- reading ----------------------------------------------------------------------------

    def names(self) -> list[str]:
        """The names of the stored contexts, sorted (files with an invalid name are skipped)."""
        try:
            entries = list(self.context_dir.iterdir())
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(
            p.name[: -len(SUFFIX)]
            for p in entries
            if p.name.endswith(SUFFIX) and NAME_RE.fullmatch(p.name[: -len(SUFFIX)])
        )

    def unknown(self, name: str, where: str = "", field: str = "name") -> NotFoundError:
        """"unknown context 'NAME'", with the closest context's name for people."""
        from .errors import not_found

        err = NotFoundError(f"unknown context {name!r}{where}", field=field)
        not_found(err, name, self.names())
        return err

    def exists(self, name: str) -> bool:
        return self.path(name).is_file()

    def load(self, name: str) -> Context:
        """The context ``name``; NotFoundError when there is none, JetlinkError when its
        file is not a valid context."""
        path = self.path(name)
        try:
            data = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            raise self.unknown(name) from None
        except IsADirectoryError:
            raise self._not_a_file(name, path) from None
        except OSError as err:
            raise JetlinkError(f"cannot read context file {path}: {err.strerror}") from None
        import tomllib  # only when a context file is read

        try:
            doc = tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
            raise JetlinkError(f"{path}: not a valid TOML file: {err}") from None
        except ValueError as err:  # a number too long to convert
            from .numbers import reason

            raise JetlinkError(f"{path}: not a valid TOML file: {reason(err)}") from None
        except RecursionError:
            from .errors import TOO_DEEP

            raise JetlinkError(f"{path}: not a valid TOML file: {TOO_DEEP}") from None
        return Context.from_toml(name, doc, source=str(path))

    def selected(self) -> str | None:
        """The name of the selected context (context.txt), None when none is selected."""
        try:
            text = self.selected_path.read_text(encoding="utf-8").strip()
        except (FileNotFoundError, NotADirectoryError):  # (a file on the way: none there)
            return None
        except OSError as err:
            raise JetlinkError(f"cannot read {self.selected_path}: {err.strerror or err}") \
                from None
        except UnicodeDecodeError as err:
            raise JetlinkError(f"cannot read {self.selected_path}: {err}") from None
        if not text:
            return None
        if not NAME_RE.fullmatch(text):
            raise JetlinkError(
                f"{self.selected_path}: invalid context name {text!r}; "
                "select a context again (jetlink context select NAME)",
                field="name",
            )
        return text

    def in_force(self, name: str | None = None, *, source: str = "") -> Context | None:
        """The context in force: ``name`` when given (``source`` says where it came from, e.g.
        ``JETLINK_CONTEXT``, and is named in the errors), else the selected one, else None.

        An invalid or unknown ``name``, a selection naming a context that does not exist and
        a broken file are JetlinkErrors saying which."""
        if name is not None:
            where = f" (from {source})" if source else ""
            try:
                validate_context_name(name)
            except UsageError as err:  # (a name an option or a variable gave: exit 2)
                raise UsageError(err.description + where, field=source or "name") from None
            try:
                return self.load(name)
            except NotFoundError:
                raise self.unknown(name, where, source or "name") from None
        selected = self.selected()
        if selected is None:
            return None
        try:
            return self.load(selected)
        except NotFoundError:
            raise NotFoundError(
                f"the selected context {selected!r} does not exist "
                f"(selected in {self.selected_path})",
                field="name",
            ) from None

    # -- writing ----------------------------------------------------------------------------

    def add(self, context: Context) -> Path:
        """Store a new context; JetlinkError when one of that name exists."""
        path = self.path(context.name)
        if path.exists() and not path.is_file():
            raise self._not_a_file(context.name, path)
        twin = next((n for n in self.names()
                     if n != context.name and n.lower() == context.name.lower()), None)
        if twin is not None:  # one file on a case-insensitive filesystem (macOS, Windows)
            raise JetlinkError(f"context {context.name} differs from context {twin} only in "
                               "case: their files would be one on a case-insensitive "
                               "filesystem; choose another name", field="name")
        if path.exists():
            raise JetlinkError(f"context {context.name} already exists (jetlink context add "
                               f"{context.name} --update changes it)", field="name")
        return self.save(context)

    def save(self, context: Context) -> Path:
        """Write ``context`` (replacing a stored one of that name); its path."""
        import tomli_w

        path = self.path(context.name)
        self._write(path, tomli_w.dumps(context.to_toml()).encode("utf-8"))
        return path

    def select(self, name: str) -> Context:
        """Make ``name`` the selected context (it must exist); the context. The one selected
        until now is kept as the previous one, ``name`` itself too when it was selected
        already (jsm.go natscontext FileSelector.SetSelected)."""
        context = self.load(name)
        current = self.selected_or_none()
        if current:
            self._write(self.previous_path, f"{current}\n".encode())
        self._write(self.selected_path, f"{name}\n".encode())
        return context

    def unselect(self) -> None:
        """Select no context (the one selected until now kept as the previous one)."""
        current = self.selected_or_none()
        try:
            self.selected_path.unlink()
        except FileNotFoundError:
            pass
        if current:
            self._write(self.previous_path, f"{current}\n".encode())

    def previous(self) -> str | None:
        """The context selected before the current selection, None when none was."""
        try:
            text = self.previous_path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
        return text if NAME_RE.fullmatch(text) else None

    def selected_or_none(self) -> str | None:
        """:meth:`selected`, None when the selection cannot be read (a verb that changes
        the selection goes on: it is replaced or removed all the same)."""
        try:
            return self.selected()
        except JetlinkError:
            return None

    def remove(self, name: str) -> Context:
        """Delete the context ``name`` (NotFoundError when there is none); removing the
        selected context unselects it, the context selected before it kept as the previous
        one (``context previous`` never names a removed context). The removed context (as
        loaded, or with only its name when its file was not valid)."""
        path = self.path(name)
        if path.exists() and not path.is_file():
            raise self._not_a_file(name, path)
        if not path.is_file():
            raise self.unknown(name)
        try:
            context = self.load(name)
        except NotFoundError:
            raise
        except JetlinkError:  # a broken file can still be removed
            context = Context(name=name)
        selected, before = self.selected_or_none(), self.previous()
        path.unlink()
        if selected == name:
            self.unselect()
            if before and before != name:  # the one selected before it stays the previous
                self._write(self.previous_path, f"{before}\n".encode())
        if self.previous() == name:  # (context previous names no removed context)
            with contextlib.suppress(OSError):
                self.previous_path.unlink()
        return context

    @staticmethod
    def _not_a_file(name: str, path: Path) -> JetlinkError:
        return JetlinkError(f"context {name}: {path} is not a file (a directory of that name "
                            "is there): move it out of the way", field="name")

    def _write(self, path: Path, data: bytes) -> None:
        """Write a context file or the selection (their directories made 0700): a failure
        is one line naming the file and the system's reason."""
        try:
            for directory in (self.root, self.context_dir):
                directory.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
                os.chmod(directory, DIR_MODE)
            _write_atomic(path, data)
        except OSError as err:
            where = err.filename if isinstance(err.filename, str) else path
            raise JetlinkError(f"cannot write {path}: {where}: {err.strerror or err}") \
                from None


def _write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a 0600 temporary file in the same directory that
    then replaces ``path``."""
    tmp = path.with_name(f".{path.name}.{os.urandom(6).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_EXCL, FILE_MODE)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, FILE_MODE)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
