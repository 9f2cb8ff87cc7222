"""ConsumerConfig: the JetStream consumer configuration and the server's checks on it.

Field names are the NATS JSON names (``nats consumer info --json``), in the server's struct
order; durations are nanoseconds; ``to_json()`` drops the ``omitempty`` zero values exactly as
the server does. ``from_json()`` decodes like the server's ``CONSUMER.CREATE`` handler
(strict: unknown fields refused; Go's error texts, e.g. ``json: cannot unmarshal string into
Go struct field CreateConsumerRequest.config.ack_wait of type time.Duration``).

The checks reproduce nats-server 2.15.1 for a single, non-clustered server, in its order
(the first failing rule is the one reported), with its error numbers and texts:

- :func:`check_consumer_config` - ``setConsumerConfigDefaults`` + ``checkConsumerCfg``: the
  defaults the server fills in (and the stream's ``consumer_limits``), then the rules that
  only need the consumer and its stream's configuration.
- :func:`check_consumer_create` - the whole ``CONSUMER.CREATE`` request next to the
  stream's other consumers: name rules, create/update actions, the update rules
  (``checkNewConsumerConfig``), ``max_consumers`` and the work-queue rules. Returns the
  configuration to store and whether the request updates an existing consumer.

Facts checked against the real server (see tests/test_consumer_config.py): the JSON default
``ack_policy`` is ``none`` (Go's zero value; nats-py and natscli send ``explicit``); a filter
that matches none of the stream's subjects is ACCEPTED (10093 is no longer raised);
``max_ack_pending`` with ``ack_policy: none`` is refused only for push consumers;
``deliver_policy: "undefined"`` reads as ``all``.

Standard library only.
"""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from ..durations import format_duration
from ..errors import ApiError, invalid_config, nats_error
from ..subjects import has_wildcard, is_subset, is_valid_subject, overlaps
from .codec import _INT_RANGES, _json_kind, decode, encode, invalid_json, jfield
from .stream import StreamConfig, _JsonMixin
from .validate import (
    is_valid_asset_name,
    name_detail,
    set_static_metadata,
    with_response_metadata,
    with_stored_level,
)

__all__ = [
    "ACK_POLICIES",
    "AckPolicy",
    "ConsumerConfig",
    "DELIVER_POLICIES",
    "DeliverPolicy",
    "PRIORITY_POLICIES",
    "REPLAY_POLICIES",
    "ReplayPolicy",
    "check_consumer_config",
    "check_consumer_create",
    "filters_of",
    "generate_consumer_name",
    "with_response_metadata",
]

# The policies' JSON values, as Literal types (nats.py's DeliverPolicy, AckPolicy and
# ReplayPolicy enums) and as the tuples the decoder and the checks test values against. The
# server also decodes deliver_policy "undefined" (its DeliverUndefined).
DeliverPolicy = Literal[
    "all", "last", "new", "by_start_sequence", "by_start_time", "last_per_subject"]
AckPolicy = Literal["none", "all", "explicit", "flow_control"]
ReplayPolicy = Literal["instant", "original"]
DELIVER_POLICIES: tuple[DeliverPolicy, ...] = get_args(DeliverPolicy)
ACK_POLICIES: tuple[AckPolicy, ...] = get_args(AckPolicy)
REPLAY_POLICIES: tuple[ReplayPolicy, ...] = get_args(ReplayPolicy)
PRIORITY_POLICIES = ("none", "overflow", "pinned_client", "prioritized")
ACTIONS = ("", "create", "update")

# --- the server's constants -------------------------------------------------------------
MS = 1_000_000
SECOND = 1_000 * MS
ACK_WAIT_DEFAULT = 30 * SECOND  # JsAckWaitDefault
MAX_ACK_PENDING_DEFAULT = 1000  # JsDefaultMaxAckPending
WAIT_QUEUE_DEFAULT_MAX = 512  # JSWaitQueueDefaultMax (max_waiting of pull consumers)
EPHEMERAL_INACTIVE_DEFAULT = 5 * SECOND  # JsDeleteWaitTimeDefault
PINNED_TTL_DEFAULT = 120 * SECOND  # JsDefaultPinnedTTL
FLOW_CONTROL_HEARTBEAT = SECOND  # sourceHealthHB
MAX_NAME_LEN = 255
MAX_DESCRIPTION_LEN = 4 * 1024
MAX_METADATA_LEN = 128 * 1024
_GROUP_NAME = re.compile(r"[a-zA-Z0-9/_=-]{1,16}")


def valid_group_name(name: str) -> bool:
    """A priority group name as the server takes it (``validGroupName``)."""
    return _GROUP_NAME.fullmatch(name) is not None


def _blen(s: str) -> int:
    return len(s.encode("utf-8", "surrogatepass"))


# --- the model ------------------------------------------------------------------------------
_REQUEST = "CreateConsumerRequest"


@dataclass
class ConsumerConfig(_JsonMixin):
    """A JetStream consumer configuration (``io.nats.jetstream.api.v1.consumer_configuration``).

    Defaults are the JSON ones (Go's zero values): ``ack_policy`` is ``none``,
    ``deliver_policy`` ``all``, ``replay_policy`` ``instant``. ``priority_policy`` ``""``
    means ``none``; ``opt_start_time``/``pause_until`` are RFC3339 strings, ``""`` when unset.
    """

    durable_name: str = jfield("durable_name", "string", "", omitempty=True)
    name: str = jfield("name", "string", "", omitempty=True)
    description: str = jfield("description", "string", "", omitempty=True)
    deliver_policy: DeliverPolicy | Literal["undefined"] = jfield(
        "deliver_policy", "enum", "all", enum=DELIVER_POLICIES + ("undefined",))
    opt_start_seq: int = jfield("opt_start_seq", "uint64", 0, omitempty=True)
    opt_start_time: str = jfield("opt_start_time", "time.Time", "", omitempty=True)
    ack_policy: AckPolicy = jfield("ack_policy", "enum", "none", enum=ACK_POLICIES)
    ack_wait: int = jfield("ack_wait", "time.Duration", 0, omitempty=True)
    max_deliver: int = jfield("max_deliver", "int", 0, omitempty=True)
    backoff: list[int] = jfield("backoff", "[]time.Duration", omitempty=True, factory=list)
    filter_subject: str = jfield("filter_subject", "string", "", omitempty=True)
    filter_subjects: list[str] = jfield(
        "filter_subjects", "[]string", omitempty=True, factory=list)
    replay_policy: ReplayPolicy = jfield("replay_policy", "enum", "instant", enum=REPLAY_POLICIES)
    rate_limit_bps: int = jfield("rate_limit_bps", "uint64", 0, omitempty=True)
    sample_freq: str = jfield("sample_freq", "string", "", omitempty=True)
    max_waiting: int = jfield("max_waiting", "int", 0, omitempty=True)
    max_ack_pending: int = jfield("max_ack_pending", "int", 0, omitempty=True)
    flow_control: bool = jfield("flow_control", "bool", False, omitempty=True)
    headers_only: bool = jfield("headers_only", "bool", False, omitempty=True)
    max_batch: int = jfield("max_batch", "int", 0, omitempty=True)
    max_expires: int = jfield("max_expires", "time.Duration", 0, omitempty=True)
    max_bytes: int = jfield("max_bytes", "int", 0, omitempty=True)
    deliver_subject: str = jfield("deliver_subject", "string", "", omitempty=True)
    deliver_group: str = jfield("deliver_group", "string", "", omitempty=True)
    idle_heartbeat: int = jfield("idle_heartbeat", "time.Duration", 0, omitempty=True)
    inactive_threshold: int = jfield("inactive_threshold", "time.Duration", 0, omitempty=True)
    num_replicas: int = jfield("num_replicas", "int", 0)
    mem_storage: bool = jfield("mem_storage", "bool", False, omitempty=True)
    direct: bool = jfield("direct", "bool", False, omitempty=True)
    sourcing: bool = jfield("sourcing", "bool", False, omitempty=True)
    metadata: dict[str, str] = jfield("metadata", "map[string]string", omitempty=True, factory=dict)
    pause_until: str = jfield("pause_until", "time.Time", "", omitempty=True)
    priority_groups: list[str] = jfield(
        "priority_groups", "[]string", omitempty=True, factory=list)
    priority_policy: str = jfield(
        "priority_policy", "priority", "", omitempty=True, enum=PRIORITY_POLICIES)
    priority_timeout: int = jfield("priority_timeout", "time.Duration", 0, omitempty=True)

    # -- JSON ---------------------------------------------------------------------------
    @classmethod
    def from_json(cls, doc: Any, *, strict: bool = True) -> ConsumerConfig:
        """Decode the ``config`` of a ``CONSUMER.CREATE`` request like the server.

        ``None`` (JSON null) is the zero configuration, as in Go.
        """
        if doc is None:
            return cls()
        if not isinstance(doc, dict):
            raise invalid_json(
                f"json: cannot unmarshal {_json_kind(doc)} into Go struct field "
                f"{_REQUEST}.config of type server.ConsumerConfig"
            )
        rest = dict(doc)
        cls._check_metadata(rest.get("metadata"))
        special: dict[str, Any] = {}
        for key in ("backoff", "priority_policy", "deliver_policy", "ack_policy",
                    "replay_policy"):
            if key in rest:
                special[key] = rest.pop(key)
        try:
            cfg = decode(cls, rest, strict=strict, struct=_REQUEST, prefix="config")
        except ApiError as err:
            if err.field and err.field.startswith("config."):
                err.field = err.field[len("config."):]
            raise
        # Go calls the enums' UnmarshalJSON even for null (they are not pointers).
        for key in ("deliver_policy", "ack_policy", "replay_policy"):
            if key in special:
                value = special[key]
                allowed = DELIVER_POLICIES + ("undefined",) if key == "deliver_policy" else (
                    ACK_POLICIES if key == "ack_policy" else REPLAY_POLICIES)
                if not isinstance(value, str) or value not in allowed:
                    refused = invalid_json(f"can not unmarshal {_go_q(_raw(value))}",
                                           field=key)
                    shown = [a for a in allowed if a != "undefined"]
                    refused.detail = f"{key} is one of {', '.join(shown)}"  # for people
                    raise refused
                setattr(cfg, key, "all" if value == "undefined" else value)
        if "priority_policy" in special:
            value = special["priority_policy"]
            if not isinstance(value, str) or value not in PRIORITY_POLICIES:
                raise invalid_json(f"unknown priority policy: {_raw(value)}",
                                   field="priority_policy")
            cfg.priority_policy = "" if value == "none" else value
        if "backoff" in special:
            cfg.backoff = _decode_backoff(special["backoff"])
        return cfg

    @staticmethod
    def _check_metadata(value: Any) -> None:
        # Go names the offending key: "...config.metadata.<key> of type string".
        if isinstance(value, dict):
            for key, v in value.items():
                if v is not None and not isinstance(v, str):
                    raise invalid_json(
                        f"json: cannot unmarshal {_json_kind(v)} into Go struct field "
                        f"{_REQUEST}.config.metadata.{key} of type string", field="metadata")

    def to_json(self) -> dict[str, Any]:
        out = encode(self)
        if out.get("priority_policy") == "none":
            del out["priority_policy"]
        if out.get("deliver_policy") == "undefined":
            out["deliver_policy"] = "all"
        return out

    @classmethod
    def from_any(cls, doc: Any, *, strict: bool = True) -> ConsumerConfig:
        """A ConsumerConfig document, or a ConsumerInfo / create request holding one."""
        if isinstance(doc, dict) and isinstance(doc.get("config"), dict) and (
            "stream_name" in doc or "delivered" in doc or "action" in doc
        ):
            return cls.from_json(doc["config"], strict=strict)
        return cls.from_json(doc, strict=strict)

    # -- helpers ------------------------------------------------------------------------
    @property
    def consumer_name(self) -> str:
        """The name the consumer is known by: the durable name, else ``name``."""
        return self.durable_name or self.name

    @property
    def is_durable(self) -> bool:
        return bool(self.durable_name)

    @property
    def is_pull(self) -> bool:
        return not self.deliver_subject

    @property
    def filters(self) -> list[str]:
        """The subject filters (``filter_subject`` and ``filter_subjects`` together)."""
        return filters_of(self)

    def replace(self, **changes: Any) -> ConsumerConfig:
        return dataclasses.replace(self.copy(), **changes)


def filters_of(cfg: ConsumerConfig) -> list[str]:
    """The server's ``gatherSubjectFilters``: ``filter_subjects`` then ``filter_subject``."""
    out = list(cfg.filter_subjects)
    if cfg.filter_subject:
        out.append(cfg.filter_subject)
    return out


def _raw(value: Any) -> str:
    """The raw JSON text of a decoded value (what Go hands to UnmarshalJSON)."""

    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _go_q(s: str) -> str:
    from .validate import go_quote

    return go_quote(s)


def _decode_backoff(value: Any) -> list[int]:
    lo, hi = _INT_RANGES["time.Duration"]
    where = f"Go struct field {_REQUEST}.config.backoff"
    if not isinstance(value, list):
        raise invalid_json(
            f"json: cannot unmarshal {_json_kind(value)} into {where} of type []time.Duration",
            field="backoff")
    out = []
    for i, v in enumerate(value):
        if v is None:
            out.append(0)
            continue
        at = f"{_REQUEST}.config.backoff.{i}"
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise invalid_json(
                f"json: cannot unmarshal {_json_kind(v)} into {at} of type time.Duration",
                field=f"backoff[{i}]")
        if (isinstance(v, float) and not v.is_integer()) or not lo <= int(v) <= hi:
            raise invalid_json(
                f"json: cannot unmarshal number {v} into {at} of type time.Duration",
                field=f"backoff[{i}]")
        out.append(int(v))
    return out


# --- server metadata --------------------------------------------------------------------------
def required_api_level(cfg: ConsumerConfig) -> int:
    """The API level the consumer's features need (the server's ``_nats.req.level``)."""
    level = 0
    if cfg.pause_until:
        level = max(level, 1)
    if (cfg.priority_policy not in ("", "none")) or cfg.priority_timeout or cfg.priority_groups:
        level = max(level, 1)
    if cfg.ack_policy == "flow_control":
        level = max(level, 4)
    return level


def generate_consumer_name() -> str:
    """A random consumer name like the server's (createConsumerName: the 8-character hash
    getHash makes of a nuid, [0-9A-Za-z])."""
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    return "".join(secrets.choice(alphabet) for _ in range(8))


# --- setConsumerConfigDefaults + checkConsumerCfg ----------------------------------------------
def _pedantic(err: str, field: str) -> ApiError:
    return nats_error("Pedantic", err=err, field=field)


def _set_defaults(cfg: ConsumerConfig, stream: StreamConfig, pedantic: bool) -> None:
    """The server's ``setConsumerConfigDefaults`` (no server/account limits configured)."""
    if cfg.max_deliver == 0 or cfg.max_deliver < -1:
        if pedantic and cfg.max_deliver < -1:
            raise _pedantic("max_deliver must be set to -1", "max_deliver")
        cfg.max_deliver = -1
    for name, text in (("max_waiting", "max_waiting must not be negative"),):
        if getattr(cfg, name) < 0:
            if pedantic:
                raise _pedantic(text, name)
            setattr(cfg, name, 0)
    if cfg.max_ack_pending < -1:
        if pedantic:
            raise _pedantic("max_ack_pending must be set to -1", "max_ack_pending")
        cfg.max_ack_pending = -1
    for name, text in (
        ("max_batch", "max_batch must not be negative"),
        ("max_expires", "max_expires must not be negative"),
        ("max_bytes", "max_bytes must not be negative"),
        ("idle_heartbeat", "idle_heartbeat must not be negative"),
        ("inactive_threshold", "inactive_threshold must not be negative"),
        ("priority_timeout", "priority_timeout must not be negative"),
    ):
        if getattr(cfg, name) < 0:
            if pedantic:
                raise _pedantic(text, name)
            setattr(cfg, name, 0)

    if not cfg.deliver_subject and cfg.max_waiting == 0:
        cfg.max_waiting = WAIT_QUEUE_DEFAULT_MAX
    if cfg.ack_wait == 0 and cfg.ack_policy in ("explicit", "all"):
        cfg.ack_wait = ACK_WAIT_DEFAULT
    if cfg.backoff:
        if pedantic and cfg.ack_wait != cfg.backoff[0]:
            raise _pedantic("first backoff value has to equal batch AckWait", "backoff")
        cfg.ack_wait = cfg.backoff[0]
    limits = stream.consumer_limits
    if cfg.max_ack_pending == 0:
        if pedantic and limits.max_ack_pending > 0:
            raise _pedantic("max_ack_pending must be set if it's configured in stream limits",
                            "max_ack_pending")
        cfg.max_ack_pending = limits.max_ack_pending
    if cfg.inactive_threshold == 0:
        if pedantic and limits.inactive_threshold > 0:
            raise _pedantic(
                "inactive_threshold must be set if it's configured in stream limits",
                "inactive_threshold")
        cfg.inactive_threshold = limits.inactive_threshold
    if cfg.max_ack_pending == 0 and cfg.ack_policy != "none":
        cfg.max_ack_pending = MAX_ACK_PENDING_DEFAULT
    if cfg.priority_policy == "pinned_client" and cfg.priority_timeout == 0:
        cfg.priority_timeout = PINNED_TTL_DEFAULT
    if cfg.ack_policy == "flow_control" and not pedantic:
        cfg.flow_control = True
        cfg.idle_heartbeat = FLOW_CONTROL_HEARTBEAT


def _bad_start(dp: str, start: str) -> ApiError:
    return nats_error(
        "ConsumerInvalidPolicy",
        err=f"consumer delivery policy is deliver {dp}, but optional start {start} is also set",
        field="deliver_policy")


def _not_set(dp: str, what: str) -> ApiError:
    return nats_error(
        "ConsumerInvalidPolicy",
        err=f"consumer delivery policy is deliver {dp}, but optional {what} is not set",
        field="deliver_policy")


def _go_atoi_error(s: str) -> str | None:
    """None when Go's ``strconv.Atoi(s)`` succeeds, else its error text."""
    from ..numbers import IntTextError, parse_int

    try:
        parse_int(s)  # Go's int: 64 bits
    except IntTextError as err:
        if err.reason == "range":
            return f'strconv.Atoi: parsing "{s}": value out of range'
        return f'strconv.Atoi: parsing "{s}": invalid syntax'
    return None


def _check(cfg: ConsumerConfig, stream: StreamConfig) -> None:
    """The server's ``checkConsumerCfg`` (its order; no server/account limits)."""
    _check_names_and_replicas(cfg, stream)
    _check_ack_and_replay(cfg)
    if cfg.backoff and cfg.max_deliver != -1 and len(cfg.backoff) > cfg.max_deliver:
        raise nats_error("ConsumerMaxDeliverBackoff", field="backoff")
    if _blen(cfg.description) > MAX_DESCRIPTION_LEN:
        raise nats_error("ConsumerDescriptionTooLong", max=MAX_DESCRIPTION_LEN,
                         field="description")
    if cfg.deliver_subject:
        _check_push(cfg, stream)
    else:
        _check_pull(cfg, stream)
    _check_stream_limits(cfg, stream)
    if cfg.direct:
        if not cfg.deliver_subject:
            raise nats_error("ConsumerDirectRequiresPush", field="direct")
        if cfg.durable_name:
            raise nats_error("ConsumerDirectRequiresEphemeral", field="direct")
    filters = _check_filters(cfg)
    _check_deliver_policy(cfg, filters)
    _check_sampling(cfg)
    if cfg.flow_control and cfg.idle_heartbeat == 0:
        raise nats_error("ConsumerWithFlowControlNeedsHeartbeats", field="flow_control")
    if cfg.durable_name and cfg.name and cfg.name != cfg.durable_name:
        raise nats_error("ConsumerCreateDurableAndNameMismatch", field="name")
    if sum(_blen(k) + _blen(v) for k, v in cfg.metadata.items()) > MAX_METADATA_LEN:
        raise nats_error("ConsumerMetadataLength", limit=f"{MAX_METADATA_LEN // 1024}KB",
                         field="metadata")
    _check_priority(cfg)
    if stream.placement is not None and stream.placement.preferred:
        raise invalid_config("preferred server not permitted in placement", field="placement")


def _check_names_and_replicas(cfg: ConsumerConfig, stream: StreamConfig) -> None:
    if cfg.name and not is_valid_asset_name(cfg.name):
        err = invalid_config("consumer name can not contain '.', '*', '>', '\\', '/'",
                             field="name")
        err.detail = name_detail("name", cfg.name)  # (people only: not in --json)
        raise err
    if cfg.durable_name and not is_valid_asset_name(cfg.durable_name):
        err = invalid_config("consumer durable name can not contain '.', '*', '>', '\\', '/'",
                             field="durable_name")
        err.detail = name_detail("durable_name", cfg.durable_name)
        raise err
    stream_replicas = stream.num_replicas or 1
    if cfg.num_replicas > 0 and cfg.num_replicas > stream_replicas:
        raise nats_error("ConsumerReplicasExceedsStream", field="num_replicas")
    if cfg.num_replicas < 0:
        raise nats_error("ReplicasCountCannotBeNegative", field="num_replicas")
    if stream.retention in ("interest", "workqueue"):
        if cfg.num_replicas not in (0, stream_replicas):
            raise nats_error("ConsumerReplicasShouldMatchStream", field="num_replicas")


def _check_ack_and_replay(cfg: ConsumerConfig) -> None:
    """The ack and replay policies, backoff and ack wait, then the flow control ack policy's
    requirements."""
    if cfg.ack_policy not in ACK_POLICIES:
        raise nats_error("ConsumerAckPolicyInvalid", field="ack_policy")
    if cfg.replay_policy not in REPLAY_POLICIES:
        raise nats_error("ConsumerReplayPolicyInvalid", field="replay_policy")
    for i, b in enumerate(cfg.backoff):
        if b < 0:
            raise nats_error("ConsumerBackOffNegative", field=f"backoff[{i}]")
    if cfg.ack_wait < 0:
        raise nats_error("ConsumerAckWaitNegative", field="ack_wait")

    if cfg.ack_policy == "flow_control":
        if not cfg.deliver_subject:
            raise nats_error("ConsumerAckFCRequiresPush", field="ack_policy")
        if not cfg.flow_control:
            raise nats_error("ConsumerAckFCRequiresFC", field="flow_control")
        if cfg.idle_heartbeat != FLOW_CONTROL_HEARTBEAT:
            raise invalid_config("flow control ack policy heartbeat needs to be 1s",
                                 field="idle_heartbeat")
        if cfg.max_ack_pending <= 0:
            raise nats_error("ConsumerAckFCRequiresMaxAckPending", field="max_ack_pending")
        if cfg.ack_wait != 0 or cfg.backoff:
            raise nats_error("ConsumerAckFCRequiresNoAckWait", field="ack_wait")
        if cfg.max_deliver > 0:
            raise nats_error("ConsumerAckFCRequiresNoMaxDeliver", field="max_deliver")


def _check_push(cfg: ConsumerConfig, stream: StreamConfig) -> None:
    """A push consumer (a deliver subject)."""
    if has_wildcard(cfg.deliver_subject):
        raise nats_error("ConsumerDeliverToWildcards", field="deliver_subject")
    if not is_valid_subject(cfg.deliver_subject):
        raise nats_error("ConsumerInvalidDeliverSubject", field="deliver_subject")
    if any(is_subset(cfg.deliver_subject, s) for s in stream.subjects):
        raise nats_error("ConsumerDeliverCycle", field="deliver_subject")
    if cfg.max_waiting != 0:
        raise nats_error("ConsumerPushMaxWaiting", field="max_waiting")
    if cfg.max_ack_pending > 0 and cfg.ack_policy == "none":
        raise nats_error("ConsumerMaxPendingAckPolicyRequired", field="max_ack_pending")
    if 0 < cfg.idle_heartbeat < 100 * MS:
        raise nats_error("ConsumerSmallHeartbeat", field="idle_heartbeat")


def _check_pull(cfg: ConsumerConfig, stream: StreamConfig) -> None:
    """A pull consumer (no deliver subject)."""
    if cfg.ack_policy == "none" and stream.retention == "workqueue":
        raise nats_error("ConsumerPullRequiresAck", field="ack_policy")
    if cfg.rate_limit_bps > 0:
        raise nats_error("ConsumerPullWithRateLimit", field="rate_limit_bps")
    if cfg.max_waiting < 0:
        raise nats_error("ConsumerMaxWaitingNegative", field="max_waiting")
    if cfg.idle_heartbeat > 0:
        raise nats_error("ConsumerHBRequiresPush", field="idle_heartbeat")
    if cfg.flow_control:
        raise nats_error("ConsumerFCRequiresPush", field="flow_control")
    if cfg.max_batch < 0:
        raise nats_error("ConsumerMaxRequestBatchNegative", field="max_batch")
    if cfg.max_expires != 0 and cfg.max_expires < MS:
        raise nats_error("ConsumerMaxRequestExpiresTooSmall", field="max_expires")


def _check_stream_limits(cfg: ConsumerConfig, stream: StreamConfig) -> None:
    """The stream's ``consumer_limits``."""
    limits = stream.consumer_limits
    if limits.max_ack_pending > 0 and cfg.max_ack_pending > limits.max_ack_pending:
        raise nats_error("ConsumerMaxPendingAckExcess", limit=limits.max_ack_pending,
                         field="max_ack_pending")
    if limits.inactive_threshold > 0 and cfg.inactive_threshold > limits.inactive_threshold:
        raise nats_error("ConsumerInactiveThresholdExcess",
                         limit=format_duration(limits.inactive_threshold),
                         field="inactive_threshold")


def _check_filters(cfg: ConsumerConfig) -> list[str]:
    """The filter subjects, checked; returns them (:func:`filters_of`)."""
    if cfg.filter_subject and cfg.filter_subjects:
        raise nats_error("ConsumerDuplicateFilterSubjects", field="filter_subjects")
    if cfg.filter_subject and not is_valid_subject(cfg.filter_subject):
        raise invalid_config("invalid subject", field="filter_subject")
    for i, f in enumerate(cfg.filter_subjects):
        if f == "":
            raise nats_error("ConsumerEmptyFilter", field=f"filter_subjects[{i}]")
    filters = filters_of(cfg)
    first = first_overlapping(filters)
    for i, subject in enumerate(filters):
        where = "filter_subject" if cfg.filter_subject else f"filter_subjects[{i}]"
        if not is_valid_subject(subject):
            raise invalid_config("invalid subject", field=where)
        if i == first:
            raise nats_error("ConsumerOverlappingSubjectFilters", field=where)
    return filters


def first_overlapping(filters: Sequence[str]) -> int | None:
    """The first filter ``i`` that lies within another of ``filters`` (a consumer refuses
    them: ConsumerOverlappingSubjectFilters, 10138; nats-server's ``SubjectIsSubsetMatch``
    of every pair), None when none does, in time linear in the literal filters: a filter
    lies within another only when it is the same (a duplicate) or the other has a wildcard
    (a literal holds only itself). ``isSubsetMatchTokenized`` reads a token starting with
    ``*`` as a wildcard: ``cs.y`` lies within ``cs.*x``, so such a filter is compared too."""
    from collections import Counter

    counts = Counter(filters)
    wild = [(j, f) for j, f in enumerate(filters)
            if has_wildcard(f) or any(t.startswith("*") for t in f.split("."))]
    for i, f in enumerate(filters):
        if counts[f] > 1 or any(j != i and is_subset(f, w) for j, w in wild):
            return i
    return None


def _check_deliver_policy(cfg: ConsumerConfig, filters: list[str]) -> None:
    """The deliver policy and the optional start (sequence, time) it needs or refuses."""
    dp = cfg.deliver_policy
    has_time = bool(cfg.opt_start_time)
    if dp in ("all", "undefined", "last", "new", "last_per_subject"):
        word = {"all": "all", "undefined": "all", "last": "last", "new": "new",
                "last_per_subject": "last per subject"}[dp]
        if cfg.opt_start_seq > 0:
            raise _bad_start(word, "sequence")
        if has_time:
            raise _bad_start(word, "time")
        if dp == "last_per_subject" and not filters:
            raise _not_set("last per subject", "filter subject")
    elif dp == "by_start_sequence":
        if cfg.opt_start_seq == 0:
            raise _not_set("by start sequence", "start sequence")
        if has_time:
            raise _bad_start("by start sequence", "time")
    elif dp == "by_start_time":
        if not has_time:
            raise _not_set("by start time", "start time")
        if cfg.opt_start_seq != 0:
            # (sic) the server's own wording
            raise _bad_start("by start time", "start sequence")


def _check_sampling(cfg: ConsumerConfig) -> None:
    if cfg.sample_freq:
        s = cfg.sample_freq[:-1] if cfg.sample_freq.endswith("%") else cfg.sample_freq
        problem = _go_atoi_error(s)
        if problem is not None:
            raise nats_error("ConsumerInvalidSampling", err=problem, field="sample_freq")
        if s.startswith("-") and s.strip("-0"):  # a negative number (Atoi took it)
            raise nats_error("ConsumerInvalidSampling", err="<nil>", field="sample_freq")


def _check_priority(cfg: ConsumerConfig) -> None:
    """The priority policy and its groups (pull consumers only)."""
    if cfg.priority_policy not in ("", "none"):
        if cfg.deliver_subject:
            raise nats_error("ConsumerPushWithPriorityGroup", field="priority_policy")
        if not cfg.priority_groups:
            raise nats_error("ConsumerPriorityPolicyWithoutGroup", field="priority_groups")
        for i, group in enumerate(cfg.priority_groups):
            if group == "":
                raise nats_error("ConsumerEmptyGroupName", field=f"priority_groups[{i}]")
            if not _GROUP_NAME.fullmatch(group):
                raise nats_error("ConsumerInvalidGroupName", field=f"priority_groups[{i}]")
    else:
        if cfg.priority_groups:
            raise nats_error("ConsumerPriorityGroupWithPolicyNone", field="priority_groups")
        if cfg.priority_timeout > 0:
            raise nats_error("ConsumerPinnedTTLWithoutPriorityPolicyNone",
                             field="priority_timeout")


def check_consumer_config(
    cfg: ConsumerConfig, stream: StreamConfig, *, pedantic: bool = False
) -> ConsumerConfig:
    """The server's defaults and checks of ``cfg`` for a consumer of ``stream``.

    Returns a NEW config with the defaults filled in (``max_deliver`` -1, ``max_waiting``
    512 for pull consumers, ``ack_wait`` 30s and ``max_ack_pending`` 1000 with acks, the
    stream's ``consumer_limits``, ...) or raises the first :class:`ApiError`.
    """
    out = cfg.copy()
    if out.deliver_policy == "undefined":
        out.deliver_policy = "all"
    if out.priority_policy == "none":
        out.priority_policy = ""
    _set_defaults(out, stream, pedantic)
    _check(out, stream)
    return out


# --- the CONSUMER.CREATE request ------------------------------------------------------------
def _same_start_time(a: str, b: str) -> bool:
    if not a or not b:
        return a == b
    from .stream import parse_time

    try:
        return parse_time(a) == parse_time(b) and _frac_ns(a) == _frac_ns(b)
    except ValueError:  # pragma: no cover - decoded times always parse
        return a == b


def _frac_ns(t: str) -> str:
    """The sub-microsecond digits of an RFC3339 time (datetime keeps only microseconds)."""
    _, _, tail = t.partition(".")
    digits = ""
    for ch in tail:
        if not ch.isdigit():
            break
        digits += ch
    return digits.ljust(9, "0")[6:]


def _check_update(old: ConsumerConfig, new: ConsumerConfig) -> None:
    """The server's ``checkNewConsumerConfig``: what an update may not change."""
    if old == new:
        return

    def fail(text: str, field: str) -> ApiError:
        return nats_error("ConsumerCreate", err=text, field=field)

    if old.deliver_policy != new.deliver_policy:
        raise fail("deliver policy can not be updated", "deliver_policy")
    if old.mem_storage != new.mem_storage:
        raise fail("storage type can not be updated", "mem_storage")
    if old.direct != new.direct:
        raise fail("direct can not be updated", "direct")
    if old.sourcing != new.sourcing:
        raise fail("sourcing can not be updated", "sourcing")
    if old.opt_start_seq != new.opt_start_seq:
        raise fail("start sequence can not be updated", "opt_start_seq")
    if not _same_start_time(old.opt_start_time, new.opt_start_time):
        raise fail("start time can not be updated", "opt_start_time")
    if old.ack_policy != new.ack_policy:
        raise fail("ack policy can not be updated", "ack_policy")
    if old.replay_policy != new.replay_policy:
        raise fail("replay policy can not be updated", "replay_policy")
    if old.idle_heartbeat != new.idle_heartbeat:
        raise fail("heart beats can not be updated", "idle_heartbeat")
    if old.flow_control != new.flow_control:
        raise fail("flow control can not be updated", "flow_control")
    if old.deliver_subject != new.deliver_subject:
        if not old.deliver_subject:
            raise fail("can not update pull consumer to push based", "deliver_subject")
        if not new.deliver_subject:
            raise fail("can not update push consumer to pull based", "deliver_subject")
        # (the server also refuses while the old deliver subject has interest; a local
        # engine has no subscribers on it)
    if old.max_waiting != new.max_waiting:
        raise fail("max waiting can not be updated", "max_waiting")
    if new.backoff and new.max_deliver != -1 and len(new.backoff) > new.max_deliver:
        raise nats_error("ConsumerMaxDeliverBackoff", field="backoff")


def _partition_unique(
    name: str, filters: list[str], existing: Mapping[str, ConsumerConfig]
) -> bool:
    """The server's ``partitionUnique``: no other consumer's filter collides with ours."""
    for subject in filters:
        for other_name, other in existing.items():
            if other_name == name or other.direct or other.sourcing:
                continue
            other_filters = filters_of(other)
            if not other_filters:
                return False
            if any(overlaps(subject, f) for f in other_filters):
                return False
    return True


def check_consumer_create(
    stream: StreamConfig,
    cfg: ConsumerConfig,
    existing: Mapping[str, ConsumerConfig],
    *,
    action: str = "",
    pedantic: bool = False,
) -> tuple[ConsumerConfig, bool]:
    """:func:`_check_consumer_create`, its refusal given the offending value (``explain``)."""
    from .validate import explain

    try:
        return _check_consumer_create(stream, cfg, existing, action=action, pedantic=pedantic)
    except ApiError as err:
        raise explain(err, cfg) from None


def _check_consumer_create(
    stream: StreamConfig,
    cfg: ConsumerConfig,
    existing: Mapping[str, ConsumerConfig],
    *,
    action: str = "",
    pedantic: bool = False,
) -> tuple[ConsumerConfig, bool]:
    """A ``CONSUMER.CREATE`` of ``cfg`` on ``stream`` next to its ``existing`` consumers.

    The request is the one nats-py sends for ``add_consumer``: the consumer's name (the
    durable name, else ``name``) travels in the subject. ``action`` is ``""`` (create or
    update, the default), ``"create"`` or ``"update"``. A config with neither name is a
    legacy ephemeral and gets a generated name.

    Returns ``(config to store, is_update)`` or raises the server's first error. The stored
    config holds ``_nats.req.level`` in its metadata (see :func:`with_response_metadata`).
    """
    if action not in ACTIONS:
        raise invalid_json(f"unknown consumer action: {_raw(action)}", field="action")
    req = cfg.copy()
    subject_name = req.name or req.durable_name
    if subject_name and ("\\" in subject_name or "/" in subject_name):
        raise nats_error("ConsumerNameContainsPathSeparators",
                         field="name" if req.name else "durable_name")
    if req.durable_name and subject_name != req.durable_name:
        raise nats_error("ConsumerDurableNameNotMatchSubject", field="durable_name")
    if subject_name:
        req.name = subject_name
    if req.num_replicas > 1:
        raise nats_error("StreamReplicasNotSupported", field="num_replicas")

    current = existing.get(subject_name) if subject_name else None
    if current is not None:
        # An update never changes pause_until (the server has a separate pause request).
        req.pause_until = current.pause_until
    set_static_metadata(req, required_api_level(req))
    out = check_consumer_config(req, stream, pedantic=pedantic)

    if current is not None:
        if action == "create":
            if with_stored_level(out, current) != current:
                raise nats_error("ConsumerAlreadyExists")
        if stream.retention == "workqueue" and not _partition_unique(
            subject_name, filters_of(out), existing
        ):
            raise nats_error("ConsumerWQConsumerNotUnique", field="filter_subject")
        if not current.durable_name and out.inactive_threshold <= 0:
            out.inactive_threshold = EPHEMERAL_INACTIVE_DEFAULT
        _check_update(current, out)
        return out, True

    if action == "update":
        raise nats_error("ConsumerDoesNotExist")
    public = {n: c for n, c in existing.items() if not (c.direct or c.sourcing)}
    if stream.max_consumers > 0 and len(public) >= stream.max_consumers:
        raise nats_error("MaximumConsumersLimit")
    if stream.retention == "workqueue" and not out.direct and not out.sourcing:
        if out.ack_policy not in ("explicit", "flow_control"):
            raise nats_error("ConsumerWQRequiresExplicitAck", field="ack_policy")
        if out.deliver_policy != "all":
            raise nats_error("ConsumerWQConsumerNotDeliverAll", field="deliver_policy")
        if public:
            filters = filters_of(out)
            if not filters:
                raise nats_error("ConsumerWQMultipleUnfiltered", field="filter_subject")
            if not _partition_unique(subject_name, filters, existing):
                raise nats_error("ConsumerWQConsumerNotUnique", field="filter_subject")
    if out.durable_name:
        if _blen(out.durable_name) > MAX_NAME_LEN:
            raise nats_error("ConsumerNameTooLong", max=MAX_NAME_LEN, field="durable_name")
    elif not out.name:
        while True:
            out.name = generate_consumer_name()
            if out.name not in existing:
                break
    elif _blen(out.name) > MAX_NAME_LEN:
        # The server keeps each consumer in a directory named after it: too long a name
        # fails there.
        raise nats_error("ConsumerCreate", err="error creating store for consumer",
                         field="name")
    if not is_valid_asset_name(out.name):
        raise nats_error("ConsumerBadDurableName", field="name")
    if stream.storage == "file" and not out.mem_storage and "\x00" in out.name:
        # a file consumer's directory is named after it (filestore ``ConsumerStore``): a
        # NUL byte fails there (jetstream_api.go ``errConsumerStoreFailed``)
        raise nats_error("ConsumerCreate", err="error creating store for consumer",
                         field="durable_name" if out.durable_name else "name")
    if not out.durable_name and out.inactive_threshold <= 0:
        out.inactive_threshold = EPHEMERAL_INACTIVE_DEFAULT
    return out, False
