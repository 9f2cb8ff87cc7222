"""Errors as values with a code.

NATS-side errors mirror the server's ``ApiError``: an HTTP-like ``code``, a JetStream
``err_code`` (10xxx) and a ``description``. Only the errors jetlink can raise are listed;
their numbers and texts are the real server's (see shared/reference/nats-semantics.md).

Client-side errors (the ones NATS client libraries raise before talking to the server, e.g. an
invalid KV bucket name) carry ``err_code`` 0, which the JSON document omits exactly as the
server's ``err_code,omitempty`` does.
"""

from __future__ import annotations

from typing import Any


class JetlinkError(Exception):
    """Base of every error jetlink reports to a user. Exit code 1 unless said otherwise."""

    exit_code = 1
    title = "error"

    def __init__(self, description: str, *, field: str | None = None) -> None:
        super().__init__(description)
        self.description = description
        # The configuration field the error is about, when known (used by `validate`).
        self.field = field

    def to_dict(self) -> dict[str, Any]:
        return {"error": {"description": self.description}}

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.description


class ApiError(JetlinkError):
    """A NATS JetStream API error: ``{"code": 400, "err_code": 10058, "description": "..."}``."""

    title = "JetStream API error"

    def __init__(
        self, code: int, err_code: int, description: str, *, field: str | None = None
    ) -> None:
        super().__init__(description, field=field)
        self.code = code
        self.err_code = err_code

    def to_dict(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code}
        if self.err_code:
            err["err_code"] = self.err_code
        err["description"] = self.description
        return {"error": err}

    def __repr__(self) -> str:
        return f"ApiError({self.code}, {self.err_code}, {self.description!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ApiError)
            and (self.code, self.err_code, self.description)
            == (other.code, other.err_code, other.description)
        )

    def __hash__(self) -> int:
        return hash((self.code, self.err_code, self.description))


# (http code, err_code, description template) - the server's own numbers and texts.
NATS_ERRORS: dict[str, tuple[int, int, str]] = {
    "StreamInvalidConfig": (500, 10052, "{err}"),
    "StreamCreate": (500, 10049, "{err}"),
    "StreamNameExist": (400, 10058, "stream name already in use with a different configuration"),
    "StreamNotFound": (404, 10059, "stream not found"),
    "StreamMismatch": (400, 10056, "stream name in subject does not match request"),
    "StreamSubjectOverlap": (400, 10065, "subjects overlap with an existing stream"),
    "ReplicasCountCannotBeNegative": (400, 10133, "replicas count cannot be negative"),
    "MirrorWithFirstSeq": (400, 10143, "stream mirrors can not have first sequence configured"),
    "MirrorWithSubjects": (400, 10034, "stream mirrors can not contain subjects"),
    "MirrorWithSources": (400, 10031, "stream mirrors can not also contain other sources"),
    "MirrorWithCounters": (400, 10173, "stream mirrors can not also calculate counters"),
    "MirrorWithAtomicPublish": (400, 10198, "stream mirrors can not also use atomic publishing"),
    "MirrorWithMsgSchedules": (400, 10186, "stream mirrors can not also schedule messages"),
    "MirrorMultipleFiltersNotAllowed": (
        400,
        10150,
        "mirror with multiple subject transforms cannot also have a single subject filter",
    ),
    "MirrorInvalidSubjectFilter": (400, 10151, "mirror transform source: {err}"),
    "MirrorInvalidTransformDestination": (400, 10154, "mirror transform: {err}"),
    "MirrorOverlappingSubjectFilters": (400, 10152, "mirror subject filters can not overlap"),
    "MirrorInvalidStreamName": (400, 10142, "mirrored stream name is invalid"),
    "MirrorMaxMessageSizeTooBig": (400, 10030, "stream mirror must have max message size >= source"),
    "SourceDuplicateDetected": (400, 10140, "duplicate source configuration detected"),
    "SourceInvalidStreamName": (400, 10141, "sourced stream name is invalid"),
    "SourceMultipleFiltersNotAllowed": (
        400,
        10144,
        "source with multiple subject transforms cannot also have a single subject filter",
    ),
    "SourceInvalidSubjectFilter": (400, 10145, "source transform source: {err}"),
    "SourceInvalidTransformDestination": (400, 10146, "source transform: {err}"),
    "SourceOverlappingSubjectFilters": (400, 10147, "source filters can not overlap"),
    "SourceMaxMessageSizeTooBig": (400, 10046, "stream source must have max message size >= target"),
    "StreamInvalidExternalDeliverySubj": (
        400,
        10024,
        "stream external delivery prefix {prefix} must not contain wildcards",
    ),
    "StreamExternalDelPrefixOverlaps": (
        400,
        10022,
        "stream external delivery prefix {prefix} overlaps with stream subject {subject}",
    ),
    "StreamExternalApiOverlap": (
        400,
        10021,
        "stream external api prefix {prefix} must not overlap with {subject}",
    ),
    "StreamTransformInvalidSource": (400, 10155, "stream transform source: {err}"),
    "StreamTransformInvalidDestination": (400, 10156, "stream transform: {err}"),
    "StreamMirrorNotUpdatable": (400, 10055, "stream mirror configuration can not be updated"),
    "StreamSealed": (400, 10109, "invalid operation on sealed stream"),
    "MessageSourceHdrNotAllowed": (400, 10227, "message stream source header is not allowed"),
    "NoMessageFound": (404, 10037, "no message found"),
    "StreamWrongLastSequence": (400, 10071, "wrong last sequence: {seq}"),
    "Pedantic": (400, 10157, "pedantic mode: {err}"),
    "StreamNameContainsPathSeparators": (400, 10128, "Stream name can not contain path separators"),
    "StreamReplicasNotSupported": (500, 10074, "replicas > 1 not supported in non-clustered mode"),
    "MirrorWithBatchPublish": (400, 10209, "stream mirrors can not also use batch publishing"),
    "SourceWithMsgSchedules": (400, 10187, "stream source can not also schedule messages"),
    "MirrorDurableConsumerCfgInvalid": (400, 10213, "stream mirror consumer config is invalid"),
    "SourceDurableConsumerCfgInvalid": (400, 10215, "stream source consumer config is invalid"),
    "SourceDurableConsumerDuplicateDetected": (
        400,
        10216,
        "duplicate stream source consumer detected",
    ),
}


def nats_error(name: str, *, field: str | None = None, **params: Any) -> ApiError:
    """Build the server's error ``name`` (a key of NATS_ERRORS), filling its template."""
    code, err_code, template = NATS_ERRORS[name]
    return ApiError(code, err_code, template.format(**params), field=field)


def invalid_config(description: str, *, field: str | None = None) -> ApiError:
    """10052 ``invalid stream config``: the server's catch-all for a bad StreamConfig."""
    return nats_error("StreamInvalidConfig", err=description, field=field)


def client_error(description: str, *, field: str | None = None) -> ApiError:
    """An error a NATS client raises before any request (no err_code), e.g. a bad KV key."""
    return ApiError(400, 0, description, field=field)


class UsageError(JetlinkError):
    """Bad command-line usage that the argument parser could not catch (exit 2)."""

    exit_code = 2
    title = "usage error"


class NotFoundError(JetlinkError):
    """A named file or object does not exist."""

    title = "not found"
