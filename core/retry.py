"""What a follow loop (``replicate --follow``, ``positions sync --follow``, the dashboard's
following, ``serve``'s step) does with a failed pass: a transient error
(:attr:`JetlinkError.transient`: a database that changed under a read, a full disk, a server
that does not answer for now) is retried at the next pass and said once, not at every pass;
when a pass succeeds again, that is said once too. Anything else ends the loop, which then
says why and exits non-zero."""

from __future__ import annotations

import sqlite3

from .errors import JetlinkError


def passes(err: BaseException) -> bool:
    """Whether a follow loop retries ``err``: a transient JetlinkError, or SQLite's busy or
    locked database (another process holds the write lock past the busy timeout)."""
    if isinstance(err, JetlinkError):
        return err.transient
    if isinstance(err, sqlite3.OperationalError):
        code = str(getattr(err, "sqlite_errorname", "") or "")
        return code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(err)
    return False


class Retries:
    """The failures of one follow loop, each said once."""

    def __init__(self) -> None:
        self.failing = ""  # the text of the failure being retried ("" while passes succeed)
        self.count = 0  # passes that failed and were retried

    def failed(self, err: BaseException, *, always: bool = False) -> str | None:
        """A pass failed with ``err``: raises it when it is not retried (``always``: every
        failure is retried, as the dashboard's following, which never ends by itself); else
        the notice to print (None: this failure was already said)."""
        if not always and not passes(err):
            raise err
        self.count += 1
        text = str(err)
        if text == self.failing:
            return None
        self.failing = text
        return f"{text} (retrying at the next pass)"

    def succeeded(self) -> str | None:
        """A pass succeeded: the notice that the loop recovered, once (None otherwise)."""
        if not self.failing:
            return None
        self.failing = ""
        return "the last pass succeeded: following again"
