"""The outcome of one monitoring check (natscli's ``nats server check``, jsm.go's ``monitor``
Result): a name, the kind of check, the OK / warning / critical messages and the perf data.

The status is derived, never set: CRITICAL when any critical message was recorded, else
WARNING when any warning was, else OK (jsm.go's ``prepare``). Exit codes are Nagios's: 0 OK,
1 WARNING, 2 CRITICAL, 3 UNKNOWN; as in natscli, a stream that cannot be loaded, or a server
that cannot be reached, is a critical. A check whose target is not there at all (an embedded
cluster or data directory that does not exist: a typo) is UNKNOWN, as ``dr check`` says it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["DEFAULT_NAMESPACE", "EXIT_CODES", "PerfDataItem", "Result", "Status", "invalid_name",
           "reason"]

#: natscli's default Prometheus namespace for ``server check`` (its ``--namespace``)
DEFAULT_NAMESPACE = "nats_server_check"


class Status(StrEnum):
    OK = "OK"
    WARNING = "WARNING"
    CRITICAL = "CRITICAL"
    UNKNOWN = "UNKNOWN"


EXIT_CODES: dict[Status, int] = {Status.OK: 0, Status.WARNING: 1, Status.CRITICAL: 2,
                                 Status.UNKNOWN: 3}


@dataclass
class PerfDataItem:
    """One measured value with its thresholds (0: none) and unit (``s``, ``B`` or none);
    ``help`` describes it for Prometheus and the text table. ``stale``: the value is as last
    reported, not current (core/monitor/lag.py), written ``"stale": true`` in JSON."""

    name: str
    value: float
    warn: float = 0.0
    crit: float = 0.0
    unit: str = ""
    help: str = ""
    stale: bool = False


@dataclass
class Result:
    """One check's outcome; ``check`` is the kind (``stream``, ``consumer``, ``kv``)."""

    name: str
    check: str
    oks: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    criticals: list[str] = field(default_factory=list)
    perf_data: list[PerfDataItem] = field(default_factory=list)
    # jsm.go's Result ``Output``: a sentence shown in place of the OK messages (a check
    # whose outcome is no OK, such as UNKNOWN when there was nothing to check)
    output: str = ""
    # nothing to check: the target itself (an embedded cluster, a data directory) is not
    # there, a typo in a monitoring line rather than an outage (:func:`missing_target`)
    unknown: bool = False

    def ok(self, msg: str) -> None:
        self.oks.append(msg)

    def warn(self, msg: str) -> None:
        self.warnings.append(msg)

    def critical(self, msg: str) -> None:
        self.criticals.append(msg)

    def pd(self, *items: PerfDataItem) -> None:
        self.perf_data.extend(items)

    @property
    def status(self) -> Status:
        if self.criticals:
            return Status.CRITICAL
        if self.warnings:
            return Status.WARNING
        if self.unknown:
            return Status.UNKNOWN
        return Status.OK

    def missing_target(self, err: Exception, what: str) -> bool:
        """Record ``err`` as UNKNOWN when it says the target the check reads is not there
        (a cluster of the data directory, or the data directory itself: NotFoundError, with
        the closest cluster name when one is close), as ``dr check`` does; True when it
        did. A server that cannot be reached, or an object it does not hold, stays a
        critical (natscli's checks)."""
        from ..errors import ApiError, NotFoundError

        if not isinstance(err, NotFoundError) or isinstance(err, ApiError):
            return False
        detail = getattr(err, "detail", None)
        self.unknown = True
        self.output = f"{what}: {err}" + (f": {detail}" if detail and "did you mean" in detail
                                          else "")
        return True

    @property
    def exit_code(self) -> int:
        """The Nagios code of :attr:`status` (natscli exits 0 for the Prometheus format:
        the CLI decides, see cli/server_check.py)."""
        return EXIT_CODES[self.status]


def invalid_name(name: str, kind: str) -> str | None:
    """jsm.go's loaders refuse a name ``IsValidName`` refuses (one holding ``>``, ``*``,
    ``.``, a space, ``/``, ``\\`` or NUL) before asking the server: ``"a.b" is not a valid
    stream name``, the check's reason; None for a name they would ask about."""
    if any(c in name for c in ">*. /\\\0"):
        from ..config.validate import go_quote

        return f"{go_quote(name)} is not a valid {kind} name"
    return None


def reason(err: Exception) -> str:
    """An error as the checks quote it: a JetStream API error as jsm.go prints one
    (``stream not found (10059)``), anything else by its message."""
    from ..errors import ApiError

    if isinstance(err, ApiError) and err.err_code:
        return f"{err.description} ({err.err_code})"
    if isinstance(err, ApiError):  # a client-side refusal (a bad name): no server code
        return err.description
    return str(err)
