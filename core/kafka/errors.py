"""Kafka's errors as values: a Kafka error name, its numeric code and a message.

Numbers and default messages are Apache Kafka's ``org.apache.kafka.common.protocol.Errors``
(clients module, checked against apache/kafka trunk of 2024-10). Cluster Linking errors are
Confluent Server's: Confluent's fork of ``Errors.java`` numbers its own errors "sequentially
starting at 10000"; the first three are confirmed from a public copy of that fork
(CLUSTER_LINK_NOT_FOUND 10000, CLUSTER_LINK_EXISTS 10001, CLUSTER_LINK_IN_USE 10002). The
other Confluent names jetlink uses (INVALID_CLUSTER_LINK, CLUSTER_LINK_DISABLED, ... seen in
Confluent's code and CLI, numbers not published) get numbers in jetlink's own range
19000..19099 (:data:`JETLINK_RANGE`), so they never collide with a real Kafka or Confluent
number; the REST / CLI shapes carry the name as well, which is what scripts should match on.

Kafka's exception classes and enum names differ in places (``RecordTooLargeException`` is
``MESSAGE_TOO_LARGE``, ``TopicExistsException`` is ``TOPIC_ALREADY_EXISTS``): :data:`ALIASES`
maps the class-style names to the enum name, so ``KafkaError("RECORD_TOO_LARGE", ...)`` is
``MESSAGE_TOO_LARGE`` (10).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import JetlinkError

__all__ = [
    "ALIASES",
    "ERROR_CODES",
    "ERROR_MESSAGES",
    "JETLINK_RANGE",
    "KafkaError",
    "error_code",
    "error_name",
]

# name -> (code, Kafka's default message)
_ERRORS: dict[str, tuple[int, str]] = {
    # --- Apache Kafka (org.apache.kafka.common.protocol.Errors) -----------------------------
    "UNKNOWN_SERVER_ERROR": (
        -1, "The server experienced an unexpected error when processing the request."),
    "NONE": (0, ""),
    "OFFSET_OUT_OF_RANGE": (
        1, "The requested offset is not within the range of offsets maintained by the server."),
    "CORRUPT_MESSAGE": (
        2, "This message has failed its CRC checksum, exceeds the valid size, has a null key "
        "for a compacted topic, or is otherwise corrupt."),
    "UNKNOWN_TOPIC_OR_PARTITION": (3, "This server does not host this topic-partition."),
    "INVALID_FETCH_SIZE": (4, "The requested fetch size is invalid."),
    "LEADER_NOT_AVAILABLE": (
        5, "There is no leader for this topic-partition as we are in the middle of a "
        "leadership election."),
    "REQUEST_TIMED_OUT": (7, "The request timed out."),
    "BROKER_NOT_AVAILABLE": (8, "The broker is not available."),
    "MESSAGE_TOO_LARGE": (
        10, "The request included a message larger than the max message size the server "
        "will accept."),
    "OFFSET_METADATA_TOO_LARGE": (12, "The metadata field of the offset request was too large."),
    "NETWORK_EXCEPTION": (13, "The server disconnected before a response was received."),
    "COORDINATOR_NOT_AVAILABLE": (15, "The coordinator is not available."),
    "INVALID_TOPIC_EXCEPTION": (
        17, "The request attempted to perform an operation on an invalid topic."),
    "RECORD_LIST_TOO_LARGE": (
        18, "The request included message batch larger than the configured segment size on "
        "the server."),
    "ILLEGAL_GENERATION": (22, "Specified group generation id is not valid."),
    "INVALID_GROUP_ID": (24, "The configured groupId is invalid."),
    "UNKNOWN_MEMBER_ID": (25, "The coordinator is not aware of this member."),
    "INVALID_SESSION_TIMEOUT": (
        26, "The session timeout is not within the range allowed by the broker (as configured "
        "by group.min.session.timeout.ms and group.max.session.timeout.ms)."),
    "REBALANCE_IN_PROGRESS": (27, "The group is rebalancing, so a rejoin is needed."),
    "INVALID_COMMIT_OFFSET_SIZE": (28, "The committing offset data size is not valid."),
    "TOPIC_AUTHORIZATION_FAILED": (29, "Topic authorization failed."),
    "GROUP_AUTHORIZATION_FAILED": (30, "Group authorization failed."),
    "CLUSTER_AUTHORIZATION_FAILED": (31, "Cluster authorization failed."),
    "INVALID_TIMESTAMP": (32, "The timestamp of the message is out of acceptable range."),
    "UNSUPPORTED_VERSION": (35, "The version of API is not supported."),
    "TOPIC_ALREADY_EXISTS": (36, "Topic with this name already exists."),
    "INVALID_PARTITIONS": (37, "Number of partitions is below 1."),
    "INVALID_REPLICATION_FACTOR": (
        38, "Replication factor is below 1 or larger than the number of available brokers."),
    "INVALID_REPLICA_ASSIGNMENT": (39, "Replica assignment is invalid."),
    "INVALID_CONFIG": (40, "Configuration is invalid."),
    "NOT_CONTROLLER": (41, "This is not the correct controller for this cluster."),
    "INVALID_REQUEST": (
        42, "This most likely occurs because of a request being malformed by the client "
        "library or the message was sent to an incompatible broker. See the broker logs for "
        "more details."),
    "POLICY_VIOLATION": (44, "Request parameters do not satisfy the configured policy."),
    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": (53, "Transactional Id authorization failed."),
    "SECURITY_DISABLED": (54, "Security features are disabled."),
    "KAFKA_STORAGE_ERROR": (56, "Disk error when trying to access log file on the disk."),
    "REASSIGNMENT_IN_PROGRESS": (60, "A partition reassignment is in progress."),
    "NON_EMPTY_GROUP": (68, "The group is not empty."),
    "GROUP_ID_NOT_FOUND": (69, "The group id does not exist."),
    "TOPIC_DELETION_DISABLED": (73, "Topic deletion is disabled."),
    "MEMBER_ID_REQUIRED": (
        79, "The group member needs to have a valid member id before actually entering a "
        "consumer group."),
    "GROUP_MAX_SIZE_REACHED": (81, "The consumer group has reached its max size."),
    "GROUP_SUBSCRIBED_TO_TOPIC": (
        86, "Deleting offsets of a topic is forbidden while the consumer group is actively "
        "subscribed to it."),
    "INVALID_RECORD": (
        87, "This record has failed the validation on broker and hence will be rejected."),
    "THROTTLING_QUOTA_EXCEEDED": (89, "The throttling quota has been exceeded."),
    "RESOURCE_NOT_FOUND": (91, "A request illegally referred to a resource that does not exist."),
    "DUPLICATE_RESOURCE": (92, "A request illegally referred to the same resource twice."),
    "UNKNOWN_TOPIC_ID": (100, "This server does not host this topic ID."),
    "INCONSISTENT_TOPIC_ID": (
        103, "The log's topic ID did not match the topic ID in the request."),
    "INCONSISTENT_CLUSTER_ID": (
        104, "The clusterId in the request does not match that found on the server."),
    "INVALID_REGULAR_EXPRESSION": (128, "The regular expression is not valid."),
    # --- Confluent Server (Cluster Linking), confirmed numbers ------------------------------
    "CLUSTER_LINK_NOT_FOUND": (10000, "The specified cluster link was not found."),
    "CLUSTER_LINK_EXISTS": (10001, "A cluster link with the specified link name already exists."),
    "CLUSTER_LINK_IN_USE": (10002, "The specified cluster link is still in use."),
    # --- Confluent names, jetlink numbers (JETLINK_RANGE; Confluent's numbers unconfirmed) --
    "INVALID_CLUSTER_LINK": (19000, "The cluster link name or its configuration is invalid."),
    "CLUSTER_LINK_DISABLED": (19001, "Cluster linking is disabled on this cluster."),
    "CLUSTER_LINK_PAUSED": (19002, "The cluster link is paused."),
    "CLUSTER_LINK_UNAVAILABLE": (19003, "The source cluster of the link is not reachable."),
    "MIRROR_TOPIC_NOT_FOUND": (19010, "The topic is not a mirror topic of this link."),
    "MIRROR_TOPIC_ALREADY_STOPPED": (19011, "The mirror topic has already stopped mirroring."),
    "MIRROR_TOPIC_INVALID_STATE": (
        19012, "The mirror topic's state does not allow the requested transition."),
    "MIRROR_TOPIC_LAGGING": (
        19013, "The mirror topic has mirroring lag or pending syncs and cannot be promoted."),
    "SOURCE_TOPIC_NOT_FOUND": (19014, "The source topic does not exist on the source cluster."),
    "SOURCE_PARTITIONS_DECREASED": (
        19015, "The source topic's partition count decreased."),
}

ERROR_CODES: dict[str, int] = {name: code for name, (code, _) in _ERRORS.items()}
ERROR_MESSAGES: dict[str, str] = {name: msg for name, (_, msg) in _ERRORS.items()}
_BY_CODE: dict[int, str] = {code: name for name, code in ERROR_CODES.items()}

# Numbers jetlink gives to Confluent error names whose real number is not published.
JETLINK_RANGE = range(19000, 19100)

# Exception-class style names -> the Errors enum name.
ALIASES: dict[str, str] = {
    "RECORD_TOO_LARGE": "MESSAGE_TOO_LARGE",
    "TOPIC_EXISTS": "TOPIC_ALREADY_EXISTS",
    "INVALID_TOPIC": "INVALID_TOPIC_EXCEPTION",
    "UNKNOWN_TOPIC": "UNKNOWN_TOPIC_OR_PARTITION",
    "INVALID_CONFIGURATION": "INVALID_CONFIG",
    "GROUP_NOT_EMPTY": "NON_EMPTY_GROUP",
    "GROUP_ID_NOT_FOUND_EXCEPTION": "GROUP_ID_NOT_FOUND",
}


def error_name(name: str) -> str:
    """The Errors enum name of ``name`` (aliases resolved); KeyError for an unknown name."""
    name = ALIASES.get(name, name)
    if name not in ERROR_CODES:
        raise KeyError(f"unknown Kafka error name {name!r}")
    return name


def error_code(name: str) -> int:
    """Kafka's number of the error ``name`` (aliases allowed)."""
    return ERROR_CODES[error_name(name)]


class KafkaError(JetlinkError):
    """A Kafka protocol error: numeric Kafka error code + its name + message.

    ``KafkaError("TOPIC_ALREADY_EXISTS", "Topic 'orders' already exists.")``; an empty
    message takes Kafka's default text of the error. ``to_dict()`` is
    ``{"error": {"error_code": 36, "error_name": "TOPIC_ALREADY_EXISTS", "message": "..."}}``;
    the human form (cli/output.py ``format_error``, which appends ``(<err_code>)``) is
    ``jetlink: error: Topic 'orders' already exists. (TOPIC_ALREADY_EXISTS 36)``.
    """

    title = "Kafka error"

    def __init__(self, name: str, message: str = "", *, field: str | None = None) -> None:
        self.name = error_name(name)
        self.error_code = ERROR_CODES[self.name]
        text = message or ERROR_MESSAGES[self.name] or self.name
        super().__init__(text, field=field)

    @property
    def message(self) -> str:
        return self.description

    @property
    def err_code(self) -> str:
        # cli/output.py format_error prints "(<err_code>)" after the description: for a Kafka
        # error that is its name and number, e.g. "(TOPIC_ALREADY_EXISTS 36)".
        return f"{self.name} {self.error_code}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "error": {
                "error_code": self.error_code,
                "error_name": self.name,
                "message": self.description,
            }
        }

    @classmethod
    def from_code(cls, code: int, message: str = "") -> KafkaError:
        """The error with Kafka number ``code`` (UNKNOWN_SERVER_ERROR when unknown)."""
        return cls(_BY_CODE.get(code, "UNKNOWN_SERVER_ERROR"), message)

    def __repr__(self) -> str:
        return f"KafkaError({self.name!r}, {self.description!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, KafkaError)
            and (self.name, self.description) == (other.name, other.description)
        )

    def __hash__(self) -> int:
        return hash((self.name, self.description))


def check_unique_config_keys(names: Iterable[str]) -> None:
    """An incremental config alteration names each key once (Kafka's
    ``incrementalAlterConfigs``: ``Error due to duplicate config keys : k``, INVALID_REQUEST);
    a key both set and deleted is named twice."""
    seen: set[str] = set()
    dup: list[str] = []
    for n in names:
        if n in seen and n not in dup:
            dup.append(n)
        seen.add(n)
    if dup:
        raise KafkaError("INVALID_REQUEST",
                         f"Error due to duplicate config keys : {', '.join(dup)}",
                         field=dup[0])
