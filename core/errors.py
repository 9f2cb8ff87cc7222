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

# A document nested deeper than Python's readers recurse (hundreds of levels): refused as
# invalid with this reason, never a RecursionError.
TOO_DEEP = "nested too deeply (more levels than a configuration ever has)"


class JetlinkError(Exception):
    """Base of every error jetlink reports to a user. Exit code 1 unless said otherwise."""

    exit_code = 1
    title = "error"
    # A condition that passes by itself (a database changed under a read, a disk full, a
    # server that does not answer for now): a follow loop retries it and says so once.
    transient = False
    # Ending a pipeline of publishes (a live server's): how many of them were sent and
    # never acknowledged, which the server may have stored.
    unacknowledged = 0
    # What a not-found error found missing, ``(kind, name)`` (kind "stream", "link", "topic"
    # or "group"): the CLI then says which other cluster of the data directory holds one.
    missing: tuple[str, str] | None = None

    def __init__(self, description: str, *, field: str | None = None) -> None:
        super().__init__(description)
        self.description = description
        # The configuration field the error is about, when known (used by `validate`).
        self.field = field
        # For people, not for the API document: the offending value (``subjects: "a..b"``,
        # ``max_age = 50ms``, ``"y.a" overlaps "y.>" of stream Y``); printed after the
        # description by the CLI, never in --json (which is the server's document).
        self.detail: str | None = None

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
        # the rest of the server's answer around the error, in its order: a PubAck's
        # ``stream`` and ``seq`` (0), a purge's ``purged`` (0); None: nothing but the error
        self.response: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code}
        if self.err_code:
            err["err_code"] = self.err_code
        err["description"] = self.description
        return {"error": err, **(self.response or {})}

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
    # streams and their configurations
    "StreamInvalidConfig": (500, 10052, "{err}"),
    "StreamUpdate": (500, 10069, "{err}"),
    "StreamCreate": (500, 10049, "{err}"),
    "StreamNameExist": (400, 10058, "stream name already in use with a different configuration"),
    "StreamNotFound": (404, 10059, "stream not found"),
    "ClusterRequired": (503, 10010, "JetStream clustering support required"),
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
    "MirrorMaxMessageSizeTooBig": (
        400,
        10030,
        "stream mirror must have max message size >= source",
    ),
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
    "SourceMaxMessageSizeTooBig": (
        400,
        10046,
        "stream source must have max message size >= target",
    ),
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
    # the publish, purge and delete paths (core/streamstore/, core/jetstream.py)
    "BadRequest": (400, 10003, "bad request"),
    "InvalidJSON": (400, 10025, "invalid JSON: {err}"),
    "StreamNotMatch": (400, 10060, "expected stream does not match"),
    "StreamWrongLastMsgID": (400, 10070, "wrong last msg ID: {id}"),
    "StreamExpectedLastSeqPerSubjectInvalid": (
        400, 10193, "missing sequence for expected last sequence per subject"),
    "StreamMessageExceedsMaximum": (400, 10054, "message size exceeds maximum allowed"),
    "StreamHeaderExceedsMaximum": (400, 10097, "header size exceeds maximum allowed of 64k"),
    "StreamStoreFailed": (503, 10077, "{err}"),
    "StreamRollupFailed": (500, 10111, "{err}"),
    "MessageTTLInvalid": (400, 10165, "invalid per-message TTL"),
    "MessageTTLDisabled": (400, 10166, "per-message TTL is disabled"),
    "MessageIncrDisabled": (400, 10168, "message counters is disabled"),
    "MessageIncrMissing": (400, 10169, "message counter increment is missing"),
    "MessageIncrPayload": (400, 10170, "message counter has payload"),
    "MessageIncrInvalid": (400, 10171, "message counter increment is invalid"),
    "MessageCounterBroken": (400, 10172, "message counter is broken"),
    "MessageSchedulesDisabled": (400, 10188, "message schedules is disabled"),
    # message schedules (ADR-51; core/streamstore/schedules.py)
    "MessageSchedulesPatternInvalid": (400, 10189, "message schedules pattern is invalid"),
    "MessageSchedulesTargetInvalid": (400, 10190, "message schedules target is invalid"),
    "MessageSchedulesTTLInvalid": (400, 10191, "message schedules invalid per-message TTL"),
    "MessageSchedulesRollupInvalid": (400, 10192, "message schedules invalid rollup"),
    "MessageSchedulesSourceInvalid": (400, 10203, "message schedules source is invalid"),
    "MessageSchedulesSchedulerInvalid": (400, 10212, "message schedules invalid scheduler"),
    "MessageSchedulesTimeZoneInvalid": (400, 10223, "message schedules time zone is invalid"),
    "StreamPurgeFailed": (500, 10110, "{err}"),
    "StreamMsgDeleteFailed": (500, 10057, "{err}"),
    "SequenceNotFound": (400, 10043, "sequence {seq} not found"),
    "StreamGeneralError": (500, 10051, "{err}"),
    # atomic batch publish (ADR-50; nats-server's processJetStreamAtomicBatchMsg) and fast
    # batch publish (processJetStreamFastBatchMsg): core/streamstore/batches.py
    "AtomicPublishDisabled": (400, 10174, "atomic publish is disabled"),
    "AtomicPublishMissingSeq": (400, 10175, "atomic publish sequence is missing"),
    "AtomicPublishIncompleteBatch": (400, 10176, "atomic publish batch is incomplete"),
    "AtomicPublishUnsupportedHeaderBatch": (
        400, 10177, "atomic publish unsupported header used: {header}"),
    "AtomicPublishInvalidBatchID": (400, 10179, "atomic publish batch ID is invalid"),
    "AtomicPublishTooLargeBatch": (400, 10199, "atomic publish batch is too large: {size}"),
    "AtomicPublishInvalidBatchCommit": (400, 10200, "atomic publish batch commit is invalid"),
    "RequiredApiLevel": (412, 10185, "JetStream minimum api level required"),
    "AtomicPublishContainsDuplicateMessage": (
        400, 10201, "atomic publish batch contains duplicate message id"),
    "AtomicPublishTooManyInflight": (429, 10210, "atomic publish too many inflight"),
    "StreamWrongLastSequenceConstant": (400, 10164, "wrong last sequence"),
    "StreamDuplicateMessageConflict": (409, 10158, "duplicate message id is in process"),
    "BatchPublishDisabled": (400, 10205, "batch publish is disabled"),
    "BatchPublishInvalidPattern": (400, 10206, "batch publish pattern is invalid"),
    "BatchPublishInvalidBatchID": (400, 10207, "batch publish ID is invalid"),
    "BatchPublishUnknownBatchID": (400, 10208, "batch publish ID unknown"),
    "BatchPublishTooManyInflight": (429, 10211, "batch publish too many inflight"),
    # consumers (core/config/consumer.py, core/consumers.py)
    "ConsumerCreate": (500, 10012, "{err}"),
    "ConsumerNameExist": (400, 10013, "consumer name already in use"),
    "ConsumerNotFound": (404, 10014, "consumer not found"),
    "ConsumerDurableNameNotMatchSubject": (
        400, 10017, "consumer name in subject does not match durable name in request"),
    "MaximumConsumersLimit": (400, 10026, "maximum consumers limit reached"),
    "ConsumerMaxPendingAckPolicyRequired": (
        400, 10082, "consumer requires ack policy for max ack pending"),
    "ConsumerDeliverToWildcards": (400, 10079, "consumer deliver subject has wildcards"),
    "ConsumerPushMaxWaiting": (400, 10080, "consumer in push mode can not set max waiting"),
    "ConsumerDeliverCycle": (400, 10081, "consumer deliver subject forms a cycle"),
    "ConsumerSmallHeartbeat": (400, 10083, "consumer idle heartbeat needs to be >= 100ms"),
    "ConsumerPullRequiresAck": (
        400, 10084, "consumer in pull mode requires explicit ack policy on workqueue stream"),
    "ConsumerPullWithRateLimit": (
        400, 10086, "consumer in pull mode can not have rate limit set"),
    "ConsumerMaxWaitingNegative": (400, 10087, "consumer max waiting needs to be positive"),
    "ConsumerHBRequiresPush": (
        400, 10088, "consumer idle heartbeat requires a push based consumer"),
    "ConsumerFCRequiresPush": (400, 10089, "consumer flow control requires a push based consumer"),
    "ConsumerDirectRequiresPush": (400, 10090, "consumer direct requires a push based consumer"),
    "ConsumerDirectRequiresEphemeral": (
        400, 10091, "consumer direct requires an ephemeral consumer"),
    "ConsumerInvalidPolicy": (400, 10094, "{err}"),
    "ConsumerInvalidSampling": (
        400, 10095, "failed to parse consumer sampling configuration: {err}"),
    "ConsumerWQRequiresExplicitAck": (400, 10098, "workqueue stream requires explicit ack"),
    "ConsumerWQMultipleUnfiltered": (
        400, 10099, "multiple non-filtered consumers not allowed on workqueue stream"),
    "ConsumerWQConsumerNotUnique": (
        400, 10100, "filtered consumer not unique on workqueue stream"),
    "ConsumerWQConsumerNotDeliverAll": (
        400, 10101, "consumer must be deliver all on workqueue stream"),
    "ConsumerNameTooLong": (400, 10102, "consumer name is too long, maximum allowed is {max}"),
    "ConsumerBadDurableName": (400, 10103, "durable name can not contain '.', '*', '>'"),
    "ConsumerDescriptionTooLong": (
        400, 10107, "consumer description is too long, maximum allowed is {max}"),
    "ConsumerWithFlowControlNeedsHeartbeats": (
        400, 10108, "consumer with flow control also needs heartbeats"),
    "ConsumerInvalidDeliverSubject": (400, 10112, "invalid push consumer deliver subject"),
    "ConsumerMaxRequestBatchNegative": (
        400, 10114, "consumer max request batch needs to be > 0"),
    "ConsumerMaxRequestExpiresTooSmall": (
        400, 10115, "consumer max request expires needs to be >= 1ms"),
    "ConsumerMaxDeliverBackoff": (
        400, 10116, "max deliver is required to be > length of backoff values"),
    "ConsumerMaxPendingAckExcess": (
        400, 10121, "consumer max ack pending exceeds system limit of {limit}"),
    "ConsumerReplicasExceedsStream": (
        400, 10126, "consumer config replica count exceeds parent stream"),
    "ConsumerNameContainsPathSeparators": (
        400, 10127, "Consumer name can not contain path separators"),
    "ConsumerCreateDurableAndNameMismatch": (
        400, 10132, "Consumer Durable and Name have to be equal if both are provided"),
    "ConsumerReplicasShouldMatchStream": (
        400, 10134, "consumer config replicas must match interest retention stream's replicas"),
    "ConsumerMetadataLength": (400, 10135, "consumer metadata exceeds maximum size of {limit}"),
    "ConsumerDuplicateFilterSubjects": (
        400, 10136, "consumer cannot have both FilterSubject and FilterSubjects specified"),
    "ConsumerOverlappingSubjectFilters": (
        400, 10138, "consumer subject filters cannot overlap"),
    "ConsumerEmptyFilter": (400, 10139, "consumer filter in FilterSubjects cannot be empty"),
    "ConsumerAlreadyExists": (400, 10148, "consumer already exists"),
    "ConsumerDoesNotExist": (400, 10149, "consumer does not exist"),
    "ConsumerInactiveThresholdExcess": (
        400, 10153, "consumer inactive threshold exceeds system limit of {limit}"),
    "ConsumerPriorityPolicyWithoutGroup": (
        400, 10159, "Setting PriorityPolicy requires at least one PriorityGroup to be set"),
    "ConsumerEmptyGroupName": (400, 10161, "Group name cannot be an empty string"),
    # priority groups, pause and reset (core/priority.py, core/consumers.py)
    "ConsumerInvalidPriorityGroup": (
        400, 10160, "Provided priority group does not exist for this consumer"),
    "ConsumerInvalidReset": (400, 10204, "invalid reset: {err}"),
    "ConsumerInvalidGroupName": (
        400, 10162,
        "Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 "
        "characters"),
    "ConsumerPushWithPriorityGroup": (
        400, 10178, "priority groups can not be used with push consumers"),
    "ConsumerAckPolicyInvalid": (400, 10181, "consumer ack policy invalid"),
    "ConsumerReplayPolicyInvalid": (400, 10182, "consumer replay policy invalid"),
    "ConsumerAckWaitNegative": (400, 10183, "consumer ack wait needs to be positive"),
    "ConsumerBackOffNegative": (400, 10184, "consumer backoff needs to be positive"),
    "ConsumerPriorityGroupWithPolicyNone": (
        400, 10196, "consumer can not have priority groups when policy is none"),
    "ConsumerPinnedTTLWithoutPriorityPolicyNone": (
        400, 10197, "PinnedTTL cannot be set when PriorityPolicy is none"),
    "ConsumerAckFCRequiresPush": (
        400, 10218, "flow control ack policy requires a push based consumer"),
    "ConsumerAckFCRequiresFC": (400, 10219, "flow control ack policy requires flow control"),
    "ConsumerAckFCRequiresMaxAckPending": (
        400, 10220, "flow control ack policy requires max ack pending"),
    "ConsumerAckFCRequiresNoAckWait": (
        400, 10221, "flow control ack policy requires unset ack wait"),
    "ConsumerAckFCRequiresNoMaxDeliver": (
        400, 10222, "flow control ack policy requires unset max deliver"),
}


def nats_error(name: str, *, field: str | None = None, **params: Any) -> ApiError:
    """Build the server's error ``name`` (a key of NATS_ERRORS), filling its template."""
    code, err_code, template = NATS_ERRORS[name]
    return ApiError(code, err_code, template.format(**params), field=field)


def invalid_config(description: str, *, field: str | None = None) -> ApiError:
    """10052 ``invalid stream config``: the server's catch-all for a bad StreamConfig."""
    return nats_error("StreamInvalidConfig", err=description, field=field)


CLIP_OVER = 100  # a quoted value longer than this is cut
CLIP_KEEP = 40  # ... to its first this many characters


def quoted(value: object) -> str:
    """``value`` as a message quotes it: ``repr`` of the text :func:`clip` leaves (its
    count the text's own length), ``repr`` of anything that is not text (None, a number).
    A byte that is not UTF-8 (held as a lone surrogate) is shown as the byte, ``'x\\xff'``,
    as the usage error of such an argument shows it."""
    if not isinstance(value, str):
        return repr(value)
    text = repr(clip(value))
    if "\\udc" not in text:
        return text
    import re  # (only here: a quoted byte that is not UTF-8 is rare)

    # an escape of repr's own (an even number of backslashes before it), never the text's
    return re.sub(r"(?<!\\)((?:\\\\)*)\\udc([89a-f][0-9a-f])",
                  lambda m: f"{m.group(1)}\\x{m.group(2)}", text)


def value_kind(value: Any) -> str:
    """What a configuration file's value is, in the words of TOML and JSON (``table``,
    ``array``, ``string``, ``integer``, ``date``, ...), not Python's type names."""
    import datetime as dt

    if isinstance(value, bool):
        return "boolean"
    for kind, name in ((dict, "table"), (list, "array"), (str, "string"), (int, "integer"),
                       (float, "float"), (dt.datetime, "date-time"), (dt.date, "date"),
                       (dt.time, "time")):
        if isinstance(value, kind):
            return name
    return "null" if value is None else type(value).__name__


def json_default(value: Any) -> Any:
    """``json.dumps``' ``default`` for a configuration's values an error shows: an object
    of the config model its JSON document (``to_json``), a TOML date or time its text
    (``1979-05-27``), anything else its repr."""
    if hasattr(value, "to_json"):
        return value.to_json()
    return value.isoformat() if hasattr(value, "isoformat") else repr(value)


def value_text(value: Any) -> str:
    """A configuration file's value as an error quotes it: JSON text (a TOML date or time
    as written, ``1979-05-27``), clipped (:func:`clip`); never Python's repr."""
    import json

    if hasattr(value, "isoformat"):
        return value.isoformat()
    try:
        text = json.dumps(value, ensure_ascii=False, default=json_default,
                          separators=(", ", ": "))
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return clip(text)


def clip(value: str, over: int = CLIP_OVER, keep: int = CLIP_KEEP) -> str:
    """``value`` as an error message may quote it: whole when at most ``over`` characters,
    else its first ``keep`` characters and its length, ``aaaa... (100,000 characters)``
    (a user's 100,000-character subject is never echoed in full)."""
    if len(value) <= over:
        return value
    return f"{value[:keep]}... ({len(value):,} characters)"


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


class NoStreamError(JetlinkError):
    """A JetStream publish to a subject no stream captures (a real server: no responders)."""

    def __init__(self, subject: str) -> None:
        super().__init__(f"no stream matches subject {clip(subject)}", field="subject")
        self.subject = subject

    def to_dict(self) -> dict[str, Any]:
        """With the status a real server's answer carries (503: no responders), so that a
        script switching on the error's code sees one."""
        return {"error": {"code": 503, "description": self.description}}


def did_you_mean(name: str, names: Any) -> str | None:
    """"did you mean X?" with X the closest of ``names`` to ``name`` (one that differs only
    in case first; else, of those difflib finds close (ratio 0.6 or more) or one edit away
    (for a name of two characters or more), the fewest edits,
    two letters swapped counting as one (``esat`` is ``east``, not ``west``), then
    difflib's order; ``name`` itself left out), None when none is close:
    the one suggestion rule of every misspelt name (streams, consumers, clusters, mirrors,
    links, domains)."""
    import difflib

    others = [str(n) for n in names if str(n) != name]
    same = [n for n in others if n.lower() == name.lower()]  # WEST for west: only the case
    if same:
        return f"did you mean {difflib.get_close_matches(name, same, n=1, cutoff=0)[0]}?"
    close = difflib.get_close_matches(name, others, n=len(others) or 1, cutoff=0.6)
    if len(name) >= 2:
        # one edit away is close whatever difflib's ratio, which is low for short names
        # (dx for dr: 0.5)
        close += [n for n in others if abs(len(n) - len(name)) <= 1 and n not in close
                  and _edits(name, n) == 1]  # (lengths first: a long name costs nothing)
    if not close:
        return None
    # the fewest edits; among as many, a name of the same letters (a swap: kaest is keast,
    # not kwest), then difflib's order
    letters = sorted(name.lower())
    best = min(range(len(close)), key=lambda i: (
        _edits(name, close[i]), sorted(close[i].lower()) != letters, i))
    return f"did you mean {close[best]}?"


def _edits(a: str, b: str) -> int:
    """The optimal string alignment distance of ``a`` and ``b``, case folded: insertions,
    deletions, substitutions and swaps of two neighbours, one edit each."""
    a, b = a.lower(), b.lower()
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[len(b)]


def held_by(holders: Any, what: str, name: str) -> str:
    """The other clusters that hold ``what`` ``name``, for a not-found here (a forgotten
    --cluster or @CLUSTER): ``cluster west holds a stream ORDERS``, ``cluster east and
    cluster west hold a stream ORDERS``."""
    holders = list(holders)
    return (" and ".join(f"cluster {c}" for c in holders)
            + f" {'holds' if len(holders) == 1 else 'hold'} a {what} {name}")


def not_found(err: JetlinkError, name: str, names: Any) -> JetlinkError:
    """``err`` (a not-found error, its description the real system's) with the name that
    was not found as its detail for people, and the closest of ``names`` when one is close
    (``did_you_mean``); the JSON document stays the server's."""
    hint = did_you_mean(name, names)
    if name in err.description:  # already named ("cluster wset not found")
        err.detail = hint
    else:
        shown = clip(name)  # (a name of 100,000 characters is not echoed whole)
        err.detail = f"{shown}; {hint}" if hint else shown
    return err


class LiveError(JetlinkError):
    """A live server could not be reached or used (connection, auth, TLS, timeout, no
    JetStream): one line, exit status 1. Defined here so that what only reads a backend
    through the interface can tell it from an answer (core/live/client.py raises it)."""

    title = "nats"
