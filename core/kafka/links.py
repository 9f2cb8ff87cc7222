"""Cluster links: their configuration, filters, store, states and tasks.

A cluster link lives on its DESTINATION cluster (the cluster a ``jetlink links ...`` command
addresses with ``--cluster``) and names its SOURCE cluster, another cluster of the same data
directory (``--source-cluster``). jetlink implements destination-initiated links
(``link.mode=DESTINATION``), the only mode in which mirror topics can be created.

Configuration (:data:`LINK_CONFIG_DEFAULTS`, :class:`LinkConfig`): the keys of Confluent's
"Link configuration" with their defaults. Values are strings, validated and normalised with
Kafka's ConfigException texts (``Invalid value X for configuration K: ...``); an unknown key is
refused naming the key and its close matches. Cross-key rules (checked on the merged result
of a create or an alter):

- ``consumer.offset.sync.enable=true`` needs ``consumer.offset.group.filters``, and
  ``acl.sync.enable=true`` needs ``acl.filters`` (Kafka's own rule and text),
  ``auto.create.mirror.topics.enable=true`` needs ``auto.create.mirror.topics.filters``;
- setting ``auto.create.mirror.topics.enable=false`` (or deleting it) clears the topic
  filters (Confluent's documentation: "Setting this option to false disables mirror topic
  creation and clears any existing filters"); so does disabling consumer offset sync or ACL
  sync once enabled, their group and ACL filters (Confluent Cloud's "Configure and Manage
  Cluster Links": a feature with filters disabled after it was enabled clears them);
- ``cluster.link.prefix``: at most 12 characters of topic names, set only at creation;
- connection settings (:data:`CONNECTION_CONFIGS`: ``bootstrap.servers``,
  ``security.protocol``, ``sasl.*``, ``ssl.*``, ``local.``-prefixed ones, as a Confluent link
  takes them) are accepted and stored, never dialled: a jetlink link reaches its source in the
  same data directory by name. Sensitive ones (:data:`SENSITIVE_CONFIGS`, Kafka's PASSWORD
  configs) are never shown: :meth:`LinkConfig.entries` lists them with value None;
- ``link.mode`` SOURCE / BIDIRECTIONAL and ``connection.mode=INBOUND`` are accepted (they are
  valid Confluent values and Confluent's mirror-creation rule "the link's link.mode must be
  DESTINATION" needs such links to exist) but reported by :meth:`LinkConfig.warnings`:
  jetlink runs destination links only, so such a link copies nothing and its tasks are
  IN_ERROR with ``UNSUPPORTED_LINK_MODE``. ``connection.mode`` has no effect (no network).

Filters (:class:`LinkFilter`, :func:`filter_selects`): a name is selected when at least one
filter matches it and no matching filter is EXCLUDE (EXCLUDE wins); ``"*"`` LITERAL matches
every name; PREFIXED is ``startswith``; no match means not selected.

Store: schema component ``kafka_links`` of the destination cluster's database, table
``links``. :class:`Links` creates, reads, alters and deletes links; every write is one
transaction.

Link state (:meth:`Links.state`), first that applies:

- ``FAILED``: an engine recorded an error (:meth:`Links.set_error`), or the source cluster was
  removed and re-created since the link was made (``SOURCE_CLUSTER_ID_MISMATCH``);
- ``UNAVAILABLE``: the source cluster is missing (``SOURCE_CLUSTER_NOT_FOUND``) or marked down
  (``SOURCE_CLUSTER_UNAVAILABLE``);
- ``PAUSED``: ``cluster.link.paused=true``;
- ``ACTIVE``.

Tasks (:meth:`Links.tasks`; REST's task list, alphabetical): AclSync (configured by
``acl.sync.enable``; it copies the source's ACLs that ``acl.filters`` select:
:mod:`.acl_sync`),
AutoCreateMirror (``auto.create.mirror.topics.enable``), ConsumerOffsetSync
(``consumer.offset.sync.enable``), TopicConfigsSync (always configured: mirror topics always
sync their configs). A task that is not configured is ``NOT_CONFIGURED``; else, first that
applies: ``IN_ERROR`` with ``UNSUPPORTED_LINK_MODE`` on a link whose mode is not DESTINATION;
``LINK_FAILED`` / ``LINK_UNAVAILABLE`` with the link's error when the link is FAILED or
UNAVAILABLE; ``LINK_PAUSED`` when the link is paused (REST v3's LinkTaskState names);
``IN_ERROR`` with the errors an engine recorded for the task (:meth:`Links.set_task_errors`);
``ACTIVE``.

The mirrors module plugs in through :class:`LinkHooks` (see its docstring): the mirror topics
of a link (REST ``topic_names``), the ones that keep it from being deleted, and what happens to
them on a forced delete. :meth:`Links.open` (what ``jetlink links`` uses) takes them from
``jetlink.core.kafka.mirrors.link_hooks(datadir, cluster, clock) -> LinkHooks`` when that
function exists; ``Links(...)`` itself uses the fallbacks (the ``topics.mirror_link`` column).
"""

from __future__ import annotations

import builtins
import difflib
import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..errors import clip
from ..numbers import IntTextError, parse_int
from .acl_sync import (
    ACL_FILTERS_KEY,
    doomed_acls,
    parse_acl_filters,
    pending_acls,
    sync_unauthorized,
)
from .authz import link_principal
from .errors import KafkaError, check_unique_config_keys
from .filter_json import filter_list
from .ids import random_uuid
from .topic_configs import java_long

if TYPE_CHECKING:  # pragma: no cover
    from ..clock import Clock
    from ..store import Cluster, DataDir

__all__ = [
    "ACTIVE",
    "COMPONENT",
    "CONNECTION_CONFIGS",
    "FAILED",
    "LINK_CONFIG_DEFAULTS",
    "LINK_STATES",
    "MAX_PREFIX_LENGTH",
    "PAUSED",
    "SCHEMA_STEPS",
    "SENSITIVE_CONFIGS",
    "TASK_NAMES",
    "TASK_STATES",
    "UNAVAILABLE",
    "UNAVAILABLE_ERRORS",
    "LinkConfig",
    "LinkFilter",
    "LinkHooks",
    "LinkInfo",
    "Links",
    "TaskInfo",
    "filter_selects",
    "filters_sql",
    "group_filters",
    "link_to_self",
    "parse_config_pairs",
    "parse_filters",
    "parse_start_offset_spec",
    "parse_properties",
    "topic_filters",
    "validate_link_config",
    "validate_link_name",
]

# -- configuration ------------------------------------------------------------------------

# Every link configuration jetlink knows, with Confluent's default (reference "Link
# configuration"), in the reference's order. "" means "not set".
LINK_CONFIG_DEFAULTS: dict[str, str] = {
    "link.mode": "DESTINATION",
    "connection.mode": "OUTBOUND",
    "consumer.offset.sync.enable": "false",
    "consumer.offset.sync.ms": "30000",
    "consumer.offset.group.filters": "",
    "acl.sync.enable": "false",
    "acl.sync.ms": "5000",
    "acl.filters": "",
    "auto.create.mirror.topics.enable": "false",
    "auto.create.mirror.topics.filters": "",
    "cluster.link.prefix": "",
    "mirror.start.offset.spec": "earliest",
    "cluster.link.retry.timeout.ms": "300000",
    "topic.config.sync.ms": "5000",
    "cluster.link.paused": "false",
}

BOOLEAN_KEYS = (
    "consumer.offset.sync.enable",
    "acl.sync.enable",
    "auto.create.mirror.topics.enable",
    "cluster.link.paused",
)
MS_KEYS = (
    "consumer.offset.sync.ms",
    "acl.sync.ms",
    "cluster.link.retry.timeout.ms",
    "topic.config.sync.ms",
)
ENUM_KEYS: dict[str, tuple[str, ...]] = {
    "link.mode": ("DESTINATION", "SOURCE", "BIDIRECTIONAL"),
    "connection.mode": ("OUTBOUND", "INBOUND"),
}
FILTER_KEYS: dict[str, str] = {  # config -> the JSON document's list field
    "consumer.offset.group.filters": "groupFilters",
    "auto.create.mirror.topics.filters": "topicFilters",
}
PREFIX_KEY = "cluster.link.prefix"
# Set when a link is created, never by an alter: the prefix names its mirror topics; the mode
# decides which side copies (a destination link turned into a source one would strand its
# mirror topics, still copying).
FIXED_KEYS = (PREFIX_KEY, "link.mode")
#: (the switch of a link feature, the filters it reads, whether turning it off clears them
#: even when it was never on): disabling one clears its filters
FEATURE_FILTERS = (
    ("auto.create.mirror.topics.enable", "auto.create.mirror.topics.filters", True),
    ("consumer.offset.sync.enable", "consumer.offset.group.filters", False),
    ("acl.sync.enable", "acl.filters", False),
)
MAX_PREFIX_LENGTH = 12
INT_MAX = 2**31 - 1  # Kafka's INT configs

# The client connection settings a Confluent link takes (the Kafka client's
# ``bootstrap.servers``, ``client.dns.lookup``, its timing settings, ``security.protocol``
# and its SASL and SSL configurations; ``local.``-prefixed for the local cluster of a
# source-initiated link, as in Confluent's "Link configuration"). jetlink accepts and stores
# them but never dials them: a jetlink link reaches its source cluster in the same data
# directory by name. The ones Kafka declares PASSWORD are sensitive: never shown (REST
# ``is_sensitive``, value null).
_SASL_KEYS = (
    "sasl.mechanism", "sasl.jaas.config", "sasl.client.callback.handler.class",
    "sasl.login.callback.handler.class", "sasl.login.class", "sasl.kerberos.service.name",
    "sasl.kerberos.kinit.cmd", "sasl.kerberos.ticket.renew.window.factor",
    "sasl.kerberos.ticket.renew.jitter", "sasl.kerberos.min.time.before.relogin",
    "sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter",
    "sasl.login.refresh.min.period.seconds", "sasl.login.refresh.buffer.seconds",
    "sasl.login.connect.timeout.ms", "sasl.login.read.timeout.ms",
    "sasl.login.retry.backoff.ms", "sasl.login.retry.backoff.max.ms",
    "sasl.oauthbearer.token.endpoint.url", "sasl.oauthbearer.scope.claim.name",
    "sasl.oauthbearer.sub.claim.name", "sasl.oauthbearer.jwks.endpoint.url",
    "sasl.oauthbearer.jwks.endpoint.refresh.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
    "sasl.oauthbearer.clock.skew.seconds", "sasl.oauthbearer.expected.audience",
    "sasl.oauthbearer.expected.issuer",
)
_SSL_KEYS = (
    "ssl.protocol", "ssl.provider", "ssl.cipher.suites", "ssl.enabled.protocols",
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.truststore.type",
    "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.certificates",
    "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm",
    "ssl.endpoint.identification.algorithm", "ssl.secure.random.implementation",
    "ssl.engine.factory.class",
)
_SECURITY_KEYS = ("security.protocol", *_SASL_KEYS, *_SSL_KEYS)
# The client's timing settings Confluent lists for a link ("Client Configurations":
# AdminClient's), a whole number of milliseconds each, Kafka's type and its range.
CLIENT_TIMING_CONFIGS: dict[str, tuple[str, int]] = {
    "metadata.max.age.ms": ("LONG", 2**63 - 1),
    "retry.backoff.ms": ("LONG", 2**63 - 1),
    "request.timeout.ms": ("INT", INT_MAX),
}
CONNECTION_CONFIGS: frozenset[str] = frozenset(
    ("bootstrap.servers", "client.dns.lookup", *CLIENT_TIMING_CONFIGS, *_SECURITY_KEYS,
     *(f"local.{k}" for k in _SECURITY_KEYS)))
_PASSWORD_KEYS = ("sasl.jaas.config", "ssl.keystore.password", "ssl.key.password",
                  "ssl.keystore.key", "ssl.keystore.certificate.chain",
                  "ssl.truststore.password", "ssl.truststore.certificates")
SENSITIVE_CONFIGS: frozenset[str] = frozenset(
    (*_PASSWORD_KEYS, *(f"local.{k}" for k in _PASSWORD_KEYS)))
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
CLIENT_DNS_LOOKUPS = ("use_all_dns_ips", "resolve_canonical_bootstrap_servers_only")
# Names that look like connection settings (the hint of an unknown one).
CONNECTION_KEY_RE = re.compile(r"(local\.)?(bootstrap\.servers|security\.protocol|(sasl|ssl)\..*)")

_NAME_CHARS_RE = re.compile(r"[A-Za-z0-9._-]*")
MAX_LINK_NAME_LENGTH = 200


def _invalid(key: str, value: str, why: str) -> KafkaError:
    # Kafka's ConfigException text.
    return KafkaError(
        "INVALID_CONFIG", f"Invalid value {clip(value)} for configuration {key}: {why}",
        field=key
    )


def _unknown_key(key: str) -> KafkaError:
    close = difflib.get_close_matches(key, sorted(CONNECTION_CONFIGS), n=3, cutoff=0.85)
    if close or CONNECTION_KEY_RE.fullmatch(key):
        hint = ("did you mean " + " or ".join(f"'{c}'" for c in close) + "?") if close else (
            "not a Kafka client connection setting (bootstrap.servers, client.dns.lookup, "
            "security.protocol and the SASL and SSL settings, local.-prefixed for the local "
            "cluster)"
        )
    else:
        close = difflib.get_close_matches(key, LINK_CONFIG_DEFAULTS, n=3, cutoff=0.6)
        if close:
            hint = "did you mean " + " or ".join(f"'{c}'" for c in close) + "?"
        else:
            hint = "known configurations: " + ", ".join(sorted(LINK_CONFIG_DEFAULTS))
    return KafkaError(
        "INVALID_CONFIG", f"Unknown cluster link configuration '{clip(key)}': {hint}", field=key
    )


def validate_link_config(key: str, value: Any) -> str:
    """``value`` of link configuration ``key``, validated and normalised (booleans lower
    case, enums upper case, filter JSON canonical); KafkaError INVALID_CONFIG naming the key
    and the rule otherwise. Cross-key rules are :meth:`LinkConfig.build`'s. A connection
    setting (:data:`CONNECTION_CONFIGS`) is a string, stored as given (``security.protocol``
    and ``client.dns.lookup`` checked against Kafka's values)."""
    if key in CONNECTION_CONFIGS:
        return _connection_value(key, value)
    if key not in LINK_CONFIG_DEFAULTS:
        raise _unknown_key(key)
    if key in FILTER_KEYS and isinstance(value, Mapping):
        value = json.dumps(value)
    if not isinstance(value, str):
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, int):
            value = str(value)
        else:
            raise _invalid(key, json.dumps(value), "expected a string")
    text = value.strip()
    if key in BOOLEAN_KEYS:
        if text.lower() not in ("true", "false"):
            raise _invalid(key, value, "Expected value to be either true or false")
        return text.lower()
    if key in MS_KEYS:
        try:  # (Integer.parseInt's digits of any script, as a topic config's: one rule)
            n = parse_int(java_long(value), -(2**31), INT_MAX)
        except IntTextError:
            raise _invalid(key, value, "Not a number of type INT") from None
        if n < 0:
            raise _invalid(key, value, "Value must be at least 0")
        return str(n)
    if key in ENUM_KEYS:
        allowed = ENUM_KEYS[key]
        if text.upper() not in allowed:
            raise _invalid(key, value, "String must be one of: " + ", ".join(allowed))
        return text.upper()
    if key in FILTER_KEYS:
        if not text:
            return ""
        return _filters_json(FILTER_KEYS[key], parse_filters(key, text))
    if key == "acl.filters":
        return _acl_filters(text)
    if key == PREFIX_KEY:
        if len(value) > MAX_PREFIX_LENGTH:
            raise _invalid(
                key, value, f"the prefix must be at most {MAX_PREFIX_LENGTH} characters"
            )
        if not _NAME_CHARS_RE.fullmatch(value):
            raise _invalid(
                key, value, "use only the characters of topic names: [a-zA-Z0-9._-]"
            )
        return value
    if key == "mirror.start.offset.spec":
        parse_start_offset_spec(text, key)
        return text.lower() if text.lower() in ("earliest", "latest") else text
    raise AssertionError(key)  # pragma: no cover - every key is handled above


def _connection_value(key: str, value: Any) -> str:
    if not isinstance(value, str):
        shown = "[hidden]" if key in SENSITIVE_CONFIGS else json.dumps(value)
        raise _invalid(key, shown, "expected a string")
    base = key.removeprefix("local.")
    if base == "security.protocol":  # Kafka: case-insensitive
        if value.strip().upper() not in SECURITY_PROTOCOLS:
            raise _invalid(key, value, "String must be one of: " + ", ".join(SECURITY_PROTOCOLS))
        return value.strip().upper()
    if base == "client.dns.lookup" and value.strip() not in CLIENT_DNS_LOOKUPS:
        raise _invalid(key, value, "String must be one of: " + ", ".join(CLIENT_DNS_LOOKUPS))
    if key in CLIENT_TIMING_CONFIGS:
        kind, high = CLIENT_TIMING_CONFIGS[key]
        try:
            n = parse_int(value.strip(), -high - 1, high)
        except IntTextError:
            raise _invalid(key, value, f"Not a number of type {kind}") from None
        if n < 0:
            raise _invalid(key, value, "Value must be at least 0")
        return str(n)
    return value


def parse_start_offset_spec(text: str, key: str = "mirror.start.offset.spec") -> str | int:
    """``earliest``, ``latest`` or the timestamp's milliseconds since the epoch (a time
    without an offset is UTC)."""
    low = text.lower()
    if low in ("earliest", "latest"):
        return low
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise _invalid(
            key,
            text,
            "use earliest, latest or an ISO-8601 timestamp such as 2021-12-31T23:59:59.999Z",
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp() * 1000)


def _acl_filters(text: str) -> str:
    """acl.filters: Confluent's ``{"aclFilters": [...]}``, every entry checked
    (:func:`.acl_sync.parse_acl_filters`), stored compact."""
    if not text:
        return ""
    parse_acl_filters(text)
    return json.dumps(json.loads(text), separators=(",", ":"), sort_keys=False)


# -- filters ------------------------------------------------------------------------------

PATTERN_TYPES = ("LITERAL", "PREFIXED")
FILTER_TYPES = ("INCLUDE", "EXCLUDE")


@dataclass(frozen=True)
class LinkFilter:
    """One filter of ``consumer.offset.group.filters`` / ``auto.create.mirror.topics.filters``."""

    name: str
    pattern_type: str = "LITERAL"  # LITERAL | PREFIXED
    filter_type: str = "INCLUDE"  # INCLUDE | EXCLUDE

    def matches(self, value: str) -> bool:
        """Whether this filter matches ``value``: LITERAL is equality (``"*"`` matches every
        name), PREFIXED is ``value.startswith(name)``."""
        if self.pattern_type == "PREFIXED":
            return value.startswith(self.name)
        return self.name == "*" or self.name == value

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "patternType": self.pattern_type, "filterType": self.filter_type}

    @classmethod
    def of(cls, value: LinkFilter | Mapping[str, Any]) -> LinkFilter:
        if isinstance(value, LinkFilter):
            return value
        return cls(
            name=str(value["name"]),
            pattern_type=str(
                value.get("patternType", value.get("pattern_type", "LITERAL"))
            ).upper(),
            filter_type=str(value.get("filterType", value.get("filter_type", "INCLUDE"))).upper(),
        )


def filter_selects(filters: Iterable[LinkFilter | Mapping[str, Any]], name: str) -> bool:
    """Whether ``filters`` select ``name``: at least one filter matches and no matching
    filter is EXCLUDE (EXCLUDE wins over INCLUDE); no filter or no match: not selected."""
    matched = False
    for item in filters:
        flt = LinkFilter.of(item)
        if flt.matches(name):
            if flt.filter_type == "EXCLUDE":
                return False
            matched = True
    return matched


def filters_sql(filters: Iterable[LinkFilter | Mapping[str, Any]], column: str
                ) -> tuple[str, list[Any]]:
    """:func:`filter_selects` as an SQL condition on ``column`` (and its parameters), for
    statements that select groups or topics by the filters without Python in the loop."""
    inc: list[str] = []
    exc: list[str] = []
    params_inc: list[Any] = []
    params_exc: list[Any] = []
    for item in filters:
        flt = LinkFilter.of(item)
        if flt.pattern_type == "PREFIXED":
            cond = f"substr({column}, 1, ?) = ?"
            args = [len(flt.name), flt.name]
        elif flt.name == "*":
            cond, args = "1", []  # the wildcard name
        else:
            cond, args = f"{column} = ?", [flt.name]
        if flt.filter_type == "EXCLUDE":
            exc.append(cond)
            params_exc += args
        else:
            inc.append(cond)
            params_inc += args
    if not inc:
        return "0", []
    sql = "(" + " OR ".join(inc) + ")"
    if exc:
        sql += " AND NOT (" + " OR ".join(exc) + ")"
    return sql, params_inc + params_exc


def parse_filters(key: str, text: str | Mapping[str, Any]) -> list[LinkFilter]:
    """The filters of filter configuration ``key`` (``consumer.offset.group.filters``:
    ``{"groupFilters": [...]}``, ``auto.create.mirror.topics.filters``:
    ``{"topicFilters": [...]}``) from its JSON text (or parsed document). Each filter has
    ``name`` (required), ``patternType`` (required: LITERAL or PREFIXED) and ``filterType``
    (INCLUDE, the default, or EXCLUDE); other fields are refused, and so is an empty list.
    Errors are KafkaError INVALID_CONFIG naming the path, e.g. ``topicFilters[1].patternType``.
    """
    list_key = FILTER_KEYS[key]

    def bad(path: str, why: str) -> KafkaError:
        where = f"{path}: " if path else ""
        return KafkaError(
            "INVALID_CONFIG", f"Invalid value for configuration {key}: {where}{why}", field=key
        )

    items = filter_list(text, list_key, bad, f'expected a JSON object {{"{list_key}": [...]}}')
    if not items:
        raise bad(list_key, "must have at least one filter")
    out = []
    for i, item in enumerate(items):
        path = f"{list_key}[{i}]"
        if not isinstance(item, dict):
            raise bad(path, "expected an object with name, patternType and filterType")
        for k in item:
            if k not in ("name", "patternType", "filterType"):
                raise bad(f"{path}.{k}", "unknown field (fields: name, patternType, filterType)")
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise bad(f"{path}.name", "required: a non-empty string")
        if "patternType" not in item or item["patternType"] is None:
            raise bad(f"{path}.patternType", "required: LITERAL or PREFIXED")
        pattern = item["patternType"]
        if not isinstance(pattern, str) or pattern.upper() not in PATTERN_TYPES:
            raise bad(f"{path}.patternType", f"unknown patternType {json.dumps(pattern)}: "
                      "use LITERAL or PREFIXED")
        ftype = item.get("filterType", "INCLUDE")
        if not isinstance(ftype, str) or ftype.upper() not in FILTER_TYPES:
            raise bad(f"{path}.filterType", f"unknown filterType {json.dumps(ftype)}: "
                      "use INCLUDE or EXCLUDE")
        out.append(LinkFilter(name, pattern.upper(), ftype.upper()))
    return out


def _filters_of(configs: LinkConfig | Mapping[str, Any], key: str) -> list[LinkFilter]:
    if isinstance(configs, LinkConfig):
        text = configs.get(key)
    else:
        text = configs.get(key) or ""
    return parse_filters(key, text) if text else []


def topic_filters(configs: LinkConfig | Mapping[str, Any]) -> list[LinkFilter]:
    """The ``auto.create.mirror.topics.filters`` of a link's configs (a LinkConfig or a
    mapping such as ``LinkInfo.configs``); [] when not set."""
    return _filters_of(configs, "auto.create.mirror.topics.filters")


def group_filters(configs: LinkConfig | Mapping[str, Any]) -> list[LinkFilter]:
    """The ``consumer.offset.group.filters`` of a link's configs; [] when not set."""
    return _filters_of(configs, "consumer.offset.group.filters")


def _filters_json(list_key: str, filters: Sequence[LinkFilter]) -> str:
    return json.dumps({list_key: [f.to_json() for f in filters]}, separators=(",", ":"))


# -- configuration documents ----------------------------------------------------------------


# A comma starts a new pair only when ``key=`` follows it: values may hold commas (JSON).
_PAIR_SPLIT = re.compile(r",(?=\s*[A-Za-z0-9_.\-]+=)")


def split_config_pairs(values: Iterable[str] | None) -> list[str]:
    """``--config k=v,k2=v2`` -> ``["k=v", "k2=v2"]`` (Confluent's ``--config`` and
    kafka-configs' ``--add-config`` take comma-separated pairs); a value keeps its own commas
    (``consumer.offset.group.filters={...,...}``, ``cleanup.policy=compact,delete``);
    trailing commas are dropped, as Kafka's ConfigCommand drops them (Java's
    ``String.split`` removes trailing empty pieces)."""
    return [p.strip() for value in values or [] for p in _PAIR_SPLIT.split(value.rstrip(","))
            if p.strip()]


def parse_config_pairs(pairs: Iterable[str], flag: str = "--config") -> dict[str, str]:
    """``k=v`` strings (a link's or a mirror topic's ``--config``) as a dict; the value is
    everything after the first ``=`` (it may hold ``=`` and JSON). A string without ``=``
    (or without a key) is a usage error naming ``flag``, as a topic's ``--config`` is."""
    from ..errors import UsageError

    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{flag} {clip(pair)!r}: expected KEY=VALUE", field="config")
        out[key.strip()] = value
    return out


_PROP_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            n = text[i + 1]
            if n == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2 : i + 6]):
                out.append(chr(int(text[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append(_PROP_ESCAPES.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def parse_properties(text: str) -> dict[str, str]:
    """A Java properties document (``--config-file``): ``key=value``, ``key:value`` or
    ``key value`` lines; ``#`` and ``!`` comment lines; a line ending in an odd number of
    backslashes continues on the next; ``\\t``, ``\\n``, ``\\uXXXX`` escapes. A later key
    wins, as in ``java.util.Properties``."""
    out: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].lstrip(" \t\f")
        i += 1
        if not line or line[0] in "#!":
            continue
        while (len(line) - len(line.rstrip("\\"))) % 2 == 1 and i <= len(lines):
            line = line[:-1] + (lines[i].lstrip(" \t\f") if i < len(lines) else "")
            i += 1
        # the key ends at the first unescaped '=', ':' or whitespace
        j = 0
        while j < len(line):
            if line[j] == "\\":
                j += 2
                continue
            if line[j] in "=: \t\f":
                break
            j += 1
        key = line[:j]
        rest = line[j:].lstrip(" \t\f")
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(" \t\f")
        out[_unescape(key)] = _unescape(rest)
    return out


class LinkConfig:
    """A link's configuration: the explicitly set values (normalised strings) over
    :data:`LINK_CONFIG_DEFAULTS`. Build one with :meth:`build` (validates); the constructor
    trusts its input (values read back from the store)."""

    __slots__ = ("values",)

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self.values: dict[str, str] = {
            k: v for k, v in (values or {}).items()
            if k in LINK_CONFIG_DEFAULTS or k in CONNECTION_CONFIGS
        }

    def __repr__(self) -> str:
        return f"LinkConfig({self.values!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LinkConfig) and self.values == other.values

    # -- building -------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        configs: Mapping[str, Any] | None = None,
        *,
        base: LinkConfig | None = None,
        delete: Iterable[str] = (),
        creating: bool = True,
    ) -> LinkConfig:
        """Validate ``configs`` (and the keys to ``delete``, reverting them to their
        defaults) on top of ``base`` and check the cross-key rules; ``creating=False`` is an
        alter: ``cluster.link.prefix`` cannot change then. KafkaError INVALID_CONFIG."""
        configs = dict(configs or {})
        delete = list(delete)
        for key in delete:
            if key not in LINK_CONFIG_DEFAULTS and key not in CONNECTION_CONFIGS:
                raise _unknown_key(key)
        new = {k: validate_link_config(k, v) for k, v in configs.items()}
        values = dict(base.values) if base is not None else {}
        old_fixed = {k: values.get(k, LINK_CONFIG_DEFAULTS.get(k, "")) for k in FIXED_KEYS}
        for key in delete:
            values.pop(key, None)
        for key, value in new.items():
            if value == "" and LINK_CONFIG_DEFAULTS.get(key, "") == "":
                values.pop(key, None)  # "" means not set
            else:
                values[key] = value
        for key in FIXED_KEYS if not creating else ():
            if values.get(key, LINK_CONFIG_DEFAULTS.get(key, "")) != old_fixed[key]:
                raise KafkaError(
                    "INVALID_CONFIG",
                    f"Configuration '{key}' cannot be altered: it is set when the cluster "
                    "link is created (delete the link and create it again)",
                    field=key,
                )
        # Confluent: a feature with filters disabled clears its filters ("Setting this option
        # to false disables mirror topic creation and clears any existing filters"; for
        # offset and ACL sync once they were enabled)
        for enable, filters, always in FEATURE_FILTERS:
            disabled = new.get(enable) == "false" or (enable in delete and enable not in new)
            was_on = base is not None and base.get(enable) == "true"
            if not disabled or not (always or was_on):
                continue
            if new.get(filters):
                raise KafkaError(
                    "INVALID_CONFIG",
                    f"{enable}=false clears {filters}: do not set both in one request",
                    field=filters,
                )
            values.pop(filters, None)
        cfg = cls(values)
        cfg._check_rules()
        return cfg

    def _check_rules(self) -> None:
        for enable, filters, what in (
            ("consumer.offset.sync.enable", "consumer.offset.group.filters",
             "Consumer offset sync"),
            ("auto.create.mirror.topics.enable", "auto.create.mirror.topics.filters",
             "Auto-create mirror topics"),
        ):
            if self.get(enable) == "true" and not self.get(filters):
                raise KafkaError(
                    "INVALID_CONFIG",
                    f"{what} is enabled but {filters} is not set. Please set {filters} to "
                    f"proceed with {what[0].lower() + what[1:]}.",
                    field=filters,
                )
        if self.get("acl.sync.enable") == "true" and not self.get("acl.filters"):
            raise KafkaError(
                "INVALID_CONFIG",
                "ACL migration is enabled but acl.filters is not set. Please set acl.filters "
                "to proceed with ACL migration.",
                field="acl.filters",
            )

    # -- reading --------------------------------------------------------------------------

    def get(self, key: str) -> str:
        """The effective value of ``key`` (its default when not set; a connection setting
        has none: "")."""
        if key in CONNECTION_CONFIGS:
            return self.values.get(key, "")
        return self.values.get(key, LINK_CONFIG_DEFAULTS[key])

    def is_default(self, key: str) -> bool:
        return key not in self.values

    def effective(self) -> dict[str, str]:
        """Every configuration with its effective value, in :data:`LINK_CONFIG_DEFAULTS`'s
        order."""
        return {k: self.get(k) for k in LINK_CONFIG_DEFAULTS}

    def to_json(self) -> dict[str, str]:
        """The explicitly set configurations (what the store keeps)."""
        return dict(sorted(self.values.items()))

    def entries(self) -> list[dict[str, Any]]:
        """Every configuration as REST v3's link config data (sorted by name): the link
        configurations and the connection settings that are set,
        ``{name, value, is_default, is_read_only, is_sensitive, source}``; source is
        ``DYNAMIC_CLUSTER_LINK_CONFIG`` when set, else ``DEFAULT_CONFIG``; a sensitive
        setting's value is None (never shown, as Confluent Cloud lists ``sasl.jaas.config``).
        """
        keys = sorted({*LINK_CONFIG_DEFAULTS, *(k for k in self.values
                                                if k in CONNECTION_CONFIGS)})
        return [self.entry(key) for key in keys]

    def entry(self, key: str) -> dict[str, Any]:
        """The link config data of ``key`` (one of :meth:`entries`)."""
        sensitive = key in SENSITIVE_CONFIGS
        return {
            "name": key,
            "value": None if sensitive else self.get(key),
            "is_default": self.is_default(key),
            "is_read_only": key in FIXED_KEYS,
            "is_sensitive": sensitive,
            "source": "DEFAULT_CONFIG" if self.is_default(key)
            else "DYNAMIC_CLUSTER_LINK_CONFIG",
        }

    def public_json(self) -> dict[str, str | None]:
        """:meth:`to_json` with every sensitive value None (what may be shown)."""
        return {k: None if k in SENSITIVE_CONFIGS else v for k, v in self.to_json().items()}

    def warnings(self) -> list[str]:
        """What jetlink does not implement in this configuration (said, not refused)."""
        out = []
        if self.link_mode != "DESTINATION":
            out.append(
                f"link.mode={self.link_mode}: jetlink implements destination links only "
                "(link.mode=DESTINATION); this link copies nothing and mirror topics cannot "
                "be created on it"
            )
        if self.get("connection.mode") != "OUTBOUND":
            out.append(
                f"connection.mode={self.get('connection.mode')}: has no effect in jetlink "
                "(the clusters share a data directory, there is no network connection)"
            )
        return out

    # typed views ---------------------------------------------------------------------------

    @property
    def link_mode(self) -> str:
        return self.get("link.mode")

    @property
    def is_destination(self) -> bool:
        """``link.mode=DESTINATION``: the only mode jetlink runs (mirror topics need it)."""
        return self.link_mode == "DESTINATION"

    @property
    def paused(self) -> bool:
        return self.get("cluster.link.paused") == "true"

    @property
    def prefix(self) -> str:
        """``cluster.link.prefix`` ("" when none): a mirror is named prefix + source name."""
        return self.get(PREFIX_KEY)

    @property
    def consumer_offset_sync_enable(self) -> bool:
        return self.get("consumer.offset.sync.enable") == "true"

    @property
    def consumer_offset_sync_ms(self) -> int:
        return int(self.get("consumer.offset.sync.ms"))

    @property
    def group_filters(self) -> list[LinkFilter]:
        return group_filters(self)

    @property
    def auto_create_enable(self) -> bool:
        return self.get("auto.create.mirror.topics.enable") == "true"

    @property
    def topic_filters(self) -> list[LinkFilter]:
        return topic_filters(self)

    @property
    def acl_sync_enable(self) -> bool:
        return self.get("acl.sync.enable") == "true"

    @property
    def acl_sync_ms(self) -> int:
        return int(self.get("acl.sync.ms"))

    @property
    def topic_config_sync_ms(self) -> int:
        return int(self.get("topic.config.sync.ms"))

    @property
    def retry_timeout_ms(self) -> int:
        return int(self.get("cluster.link.retry.timeout.ms"))

    @property
    def principal(self) -> str | None:
        """The principal the source authorizes the link as (:func:`.authz.link_principal`:
        the SASL username of ``sasl.jaas.config``, else ``User:ANONYMOUS``); None when the
        configuration is set but hidden (a REST answer never shows a sensitive value)."""
        if "sasl.jaas.config" in self.values and self.values["sasl.jaas.config"] is None:
            return None
        return link_principal(self.values)

    @property
    def mirror_start_offset_spec(self) -> str | int:
        """``"earliest"``, ``"latest"`` or a timestamp in ms since the epoch (the first
        offset whose record timestamp is at or after it)."""
        return parse_start_offset_spec(self.get("mirror.start.offset.spec"))

    def selects_group(self, group: str) -> bool:
        """Whether consumer offset sync covers ``group`` (enabled and the group filters
        select it)."""
        return self.consumer_offset_sync_enable and filter_selects(self.group_filters, group)

    def selects_topic(self, topic: str) -> bool:
        """Whether auto-create covers source topic ``topic`` (enabled and the topic filters
        select it)."""
        return self.auto_create_enable and filter_selects(self.topic_filters, topic)


# -- link names ---------------------------------------------------------------------------


def validate_link_name(name: Any) -> str:
    """``name`` when it is a valid link name (Confluent's rules: 1 to 200 characters of
    ``[a-zA-Z0-9._-]``, not ``.`` or ``..``; and not ``-``, which REST v3 paths read as
    every link), else KafkaError INVALID_CLUSTER_LINK with Confluent's text."""

    def bad(message: str) -> KafkaError:
        return KafkaError("INVALID_CLUSTER_LINK", message, field="link_name")

    if not isinstance(name, str):
        raise bad("Cluster link name is null")
    if not name:
        raise bad("Cluster link name is empty")
    if name in (".", ".."):
        raise bad('Link name cannot be "." or ".."')
    if name == "-":  # (jetlink's: REST v3 paths read it as every link, /links/-/mirrors)
        raise bad('Link name cannot be "-": REST v3 paths take it for every link '
                  "(GET /links/-/mirrors lists the mirrors of all links)")
    if len(name) > MAX_LINK_NAME_LENGTH:
        raise bad(f"Link name exceeds maximum size of '{MAX_LINK_NAME_LENGTH}' characters")
    if not _NAME_CHARS_RE.fullmatch(name):
        raise bad(f"Link name '{name}' is illegal, valid characters: [a-zA-Z0-9._-]")
    return name


def new_link_id() -> str:
    """A new cluster link id: a random Kafka Uuid (core/kafka/ids.py)."""
    return random_uuid()


# -- states and tasks ---------------------------------------------------------------------

ACTIVE = "ACTIVE"
UNAVAILABLE = "UNAVAILABLE"
PAUSED = "PAUSED"
FAILED = "FAILED"
LINK_STATES = (ACTIVE, UNAVAILABLE, PAUSED, FAILED)
NO_ERROR = "NO_ERROR"
# The link errors of a source cluster that is missing or down: the link's remote cluster is
# not available (``links ls``), here and in what a REST endpoint answers.
UNAVAILABLE_ERRORS = ("SOURCE_CLUSTER_NOT_FOUND", "SOURCE_CLUSTER_UNAVAILABLE")

TASK_NAMES = ("AclSync", "AutoCreateMirror", "ConsumerOffsetSync", "TopicConfigsSync")
# REST v3's LinkTaskState (the ones the engine reaches)
TASK_STATES = ("ACTIVE", "NOT_CONFIGURED", "IN_ERROR", "LINK_FAILED", "LINK_UNAVAILABLE",
               "LINK_PAUSED")
# task -> (the column of its last run, the config giving its interval in ms)
TASK_SCHEDULE: dict[str, tuple[str, str]] = {
    "AclSync": ("last_acl_sync_ms", "acl.sync.ms"),
    "AutoCreateMirror": ("last_auto_create_ms", "topic.config.sync.ms"),
    "ConsumerOffsetSync": ("last_offset_sync_ms", "consumer.offset.sync.ms"),
    "TopicConfigsSync": ("last_config_sync_ms", "topic.config.sync.ms"),
}


@dataclass(frozen=True)
class TaskInfo:
    """One task of a link (REST v3 ``tasks[]``)."""

    task_name: str
    state: str
    errors: tuple[dict[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"task_name": self.task_name, "state": self.state, "errors": list(self.errors)}


def _task_configured(task: str, cfg: LinkConfig) -> bool:
    if task == "AclSync":
        return cfg.acl_sync_enable
    if task == "AutoCreateMirror":
        return cfg.auto_create_enable
    if task == "ConsumerOffsetSync":
        return cfg.consumer_offset_sync_enable
    return True  # TopicConfigsSync: mirror topics always sync their configs


def compute_tasks(
    cfg: LinkConfig,
    state: str,
    link_error: str = NO_ERROR,
    link_error_message: str | None = None,
    task_errors: Mapping[str, Sequence[Mapping[str, str]]] | None = None,
) -> list[TaskInfo]:
    """The tasks of a link in ``state`` (the rules are in the module docstring)."""
    out = []
    for task in TASK_NAMES:
        if not _task_configured(task, cfg):
            out.append(TaskInfo(task, "NOT_CONFIGURED"))
        elif not cfg.is_destination:
            out.append(TaskInfo(task, "IN_ERROR", ({
                "error_code": "UNSUPPORTED_LINK_MODE",
                "error_message": f"jetlink runs destination links only; this link has "
                f"link.mode={cfg.link_mode}",
            },)))
        elif state in (FAILED, UNAVAILABLE):
            out.append(TaskInfo(task, f"LINK_{state}", ({
                "error_code": link_error, "error_message": link_error_message or "",
            },)))
        elif state == PAUSED:
            out.append(TaskInfo(task, "LINK_PAUSED"))
        elif (task_errors or {}).get(task):
            errors = tuple(
                {"error_code": str(e.get("error_code", "")),
                 "error_message": str(e.get("error_message", ""))}
                for e in (task_errors or {})[task]
            )
            out.append(TaskInfo(task, "IN_ERROR", errors))
        else:
            out.append(TaskInfo(task, "ACTIVE"))
    return out


@dataclass
class LinkInfo:
    """A link as read from the store, with its state computed at read time."""

    name: str
    link_id: str
    source_cluster: str
    destination_cluster: str
    config: LinkConfig
    created_ms: int
    updated_ms: int
    state: str = ACTIVE
    link_error: str = NO_ERROR
    link_error_message: str | None = None
    tasks: list[TaskInfo] = field(default_factory=list)
    topic_names: list[str] = field(default_factory=list)
    # when each task last ran (ms since the epoch, 0 = never): see Links.record_run
    last_runs: dict[str, int] = field(default_factory=dict)
    source_available: bool = True
    #: what a change of the link leads to that its answer does not show (``alter``: the
    #: ACLs its next ACL sync deletes); no part of the link's document
    notices: list[str] = field(default_factory=list)

    @property
    def configs(self) -> dict[str, str]:
        """Every configuration with its effective value (defaults included)."""
        return self.config.effective()

    @property
    def paused(self) -> bool:
        return self.config.paused

    @property
    def is_destination(self) -> bool:
        return self.config.is_destination

    @property
    def principal(self) -> str | None:
        """The link's principal on its source (:attr:`LinkConfig.principal`)."""
        return self.config.principal

    def due(self, task: str, now_ms: int) -> bool:
        """Whether ``task`` (a :data:`TASK_NAMES` name) should run at ``now_ms``: never ran,
        or its interval (``consumer.offset.sync.ms``, ``topic.config.sync.ms`` (also for
        AutoCreateMirror), ``acl.sync.ms``) has passed since its last run."""
        _, interval_key = TASK_SCHEDULE[task]
        last = self.last_runs.get(task, 0)
        return not last or now_ms - last >= int(self.config.get(interval_key))

    def to_json(self, *, include_configs: bool = False) -> dict[str, Any]:
        """REST v3 link data; ``include_configs`` adds ``configs`` (REST's link config data
        for every configuration, :meth:`LinkConfig.entries`)."""
        doc: dict[str, Any] = {
            "link_name": self.name,
            "cluster_link_id": self.link_id,
            "source_cluster_id": self.source_cluster,
            "destination_cluster_id": self.destination_cluster,
            "topic_names": list(self.topic_names),
            "link_state": self.state,
            "link_error": self.link_error,
            "link_error_message": self.link_error_message,
            "tasks": [t.to_json() for t in self.tasks],
        }
        if include_configs:
            doc["configs"] = self.config.entries()
        return doc


# -- hooks ----------------------------------------------------------------------------------


@dataclass
class LinkHooks:
    """How the links store asks the mirrors module about mirror topics. Each callable is
    optional; a missing one falls back to the topics table of component ``kafka``
    (``topics.mirror_link``).

    - ``mirror_topics(link) -> names``: the mirror topics of the link, REST ``topic_names``
      (default: topics whose ``mirror_link`` is the link);
    - ``in_use(link) -> names``: the mirror topics that keep the link from being deleted
      (those not STOPPED; default: same as ``mirror_topics``);
    - ``on_force(link, names)``: called by ``delete(force=True)`` when ``in_use`` named
      topics, inside the transaction that deletes the link (its writes commit or roll back
      with the deletion): fail the mirrors over or remove them (default: detach them, i.e.
      set ``mirror_link`` NULL, so they become normal writable topics);
    - ``on_delete(link)``: called by every delete in that same transaction, after
      ``on_force``: drop what the mirrors module keeps for the link (the history of its
      stopped mirrors, which lives as long as the link).
    """

    mirror_topics: Callable[[str], list[str]] | None = None
    in_use: Callable[[str], list[str]] | None = None
    on_force: Callable[[str, list[str]], None] | None = None
    on_delete: Callable[[str], None] | None = None


def _default_hooks(datadir: DataDir, cluster: Cluster, clock: Clock | None) -> LinkHooks | None:
    """``jetlink.core.kafka.mirrors.link_hooks(datadir, cluster, clock)`` when that module
    and function exist, else None."""
    import importlib

    try:
        mirrors = importlib.import_module(f"{__package__}.mirrors")
    except ModuleNotFoundError as err:
        if err.name == f"{__package__}.mirrors":
            return None
        raise
    factory = getattr(mirrors, "link_hooks", None)
    return factory(datadir, cluster, clock) if factory is not None else None


# -- store ----------------------------------------------------------------------------------

COMPONENT = "kafka_links"
SCHEMA_STEPS: list[list[str]] = [
    [
        """CREATE TABLE links(
            name TEXT PRIMARY KEY,
            link_id TEXT NOT NULL,
            source_cluster TEXT NOT NULL,
            source_created_ns INTEGER NOT NULL DEFAULT 0,
            configs TEXT NOT NULL DEFAULT '{}',
            created_ms INTEGER NOT NULL,
            updated_ms INTEGER NOT NULL,
            state_error TEXT,
            state_error_message TEXT,
            task_errors TEXT NOT NULL DEFAULT '{}',
            last_offset_sync_ms INTEGER NOT NULL DEFAULT 0,
            last_config_sync_ms INTEGER NOT NULL DEFAULT 0,
            last_auto_create_ms INTEGER NOT NULL DEFAULT 0,
            last_acl_sync_ms INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID""",
    ],
]

_COLUMNS = (
    "name, link_id, source_cluster, source_created_ns, configs, created_ms, updated_ms, "
    "state_error, state_error_message, task_errors, last_offset_sync_ms, last_config_sync_ms, "
    "last_auto_create_ms, last_acl_sync_ms"
)


def _exists(name: str) -> KafkaError:
    return KafkaError(
        "CLUSTER_LINK_EXISTS", f"Cluster link '{name}' already exists", field="link_name"
    )


def _not_found(name: str, conn: Any = None) -> KafkaError:
    """CLUSTER_LINK_NOT_FOUND in Confluent's words; for people, the closest link name of
    ``conn``'s cluster when one is close (core/errors.py ``not_found``)."""
    from ..errors import clip, not_found

    err = KafkaError(  # (a name of 20,000 characters is not echoed whole)
        "CLUSTER_LINK_NOT_FOUND", f"Cluster link '{clip(name)}' not found", field="link_name"
    )
    err.missing = ("link", name)
    if conn is None:
        return err
    names = [r[0] for r in conn.execute("SELECT name FROM links")]
    found = not_found(err, name, names)
    assert isinstance(found, KafkaError)
    return found


def link_to_self(cluster: str) -> KafkaError:
    """INVALID_REQUEST: a link whose source is ``cluster``, the cluster it would live on."""
    return KafkaError(
        "INVALID_REQUEST",
        f"Requested cluster ID matches local cluster ID '{cluster}' - cannot create cluster "
        "link to self",
        field="source_cluster",
    )


def _doomed_notice(datadir: DataDir, cluster: Cluster, info: LinkInfo) -> list[str]:
    """The ACLs the link created that its next sync deletes under new filters, said before
    it happens: a DENY among them opens what it closed."""
    doomed = doomed_acls(datadir, cluster, info.name, info.source_cluster, info.config)
    if not doomed:
        return []
    denies = sum(1 for b in doomed if b.permission == "DENY")
    shown = "; ".join(f"{b.pattern()} {b.entry()}" for b in doomed[:3]) + (
        f"; and {len(doomed) - 3} more" if len(doomed) > 3 else "")
    return [f"the next ACL sync of link {info.name} deletes {len(doomed)} ACL"
            f"{'' if len(doomed) == 1 else 's'} it created that acl.filters no longer "
            f"selects{f' ({denies} DENY)' if denies else ''}: {shown}"]


class Links:
    """The cluster links of one destination cluster (schema component ``kafka_links``).

    ``hooks`` (:class:`LinkHooks`): how to ask the mirrors module about mirror topics;
    without it the fallbacks of LinkHooks apply. :meth:`open` finds the mirrors module's.
    """

    def __init__(
        self,
        datadir: DataDir,
        cluster: Cluster | str,
        clock: Clock | None = None,
        *,
        hooks: LinkHooks | None = None,
    ) -> None:
        from ..clock import SystemClock

        self.datadir = datadir
        self.cluster = datadir.open(cluster) if isinstance(cluster, str) else cluster
        self.clock = clock if clock is not None else SystemClock()
        from .tables import KafkaSchema

        # the tables: made by the first write when missing (a refused one makes nothing)
        self._schema = KafkaSchema(self.cluster, [(COMPONENT, SCHEMA_STEPS)])
        self.hooks = hooks if hooks is not None else LinkHooks()

    @classmethod
    def open(
        cls, datadir: DataDir, cluster: Cluster | str, clock: Clock | None = None
    ) -> Links:
        """Links of ``cluster`` with the mirrors module's hooks
        (``jetlink.core.kafka.mirrors.link_hooks(datadir, cluster, clock)``, when defined)."""
        cl = datadir.open(cluster) if isinstance(cluster, str) else cluster
        return cls(datadir, cl, clock, hooks=_default_hooks(datadir, cl, clock))

    def _now_ms(self) -> int:
        return self.clock.now_ns() // 1_000_000

    # -- mirror topics (hooks with their fallbacks) ----------------------------------------

    def _topics_of(self, link: str) -> list[str]:
        try:
            with self._schema.read() as conn:
                rows = conn.execute(
                    "SELECT name FROM topics WHERE mirror_link = ? ORDER BY name", (link,)
                ).fetchall()
        except sqlite3.OperationalError:  # no topics table (component kafka not created)
            return []
        return [r[0] for r in rows]

    def mirror_topics(self, link: str) -> list[str]:
        """The mirror topics of ``link`` (REST ``topic_names``), sorted."""
        fn = self.hooks.mirror_topics
        return sorted(fn(link) if fn is not None else self._topics_of(link))

    def in_use(self, link: str) -> list[str]:
        """The mirror topics that keep ``link`` from being deleted without force, sorted."""
        fn = self.hooks.in_use
        if fn is not None:
            return sorted(fn(link))
        return self.mirror_topics(link)

    # -- source cluster ------------------------------------------------------------------

    def _source_status(self, source: str, created_ns: int) -> tuple[str, str, str | None]:
        """(state, link_error, message) from the source cluster alone."""
        if not self.datadir.has_cluster(source):
            return (
                UNAVAILABLE,
                "SOURCE_CLUSTER_NOT_FOUND",
                f"Source cluster '{source}' does not exist in the data directory.",
            )
        from ..store.health import StorageError, unusable

        try:
            info = self.datadir.open(source).info()
        except StorageError:  # damaged: like a source that does not answer, state unknown
            return (UNAVAILABLE, "SOURCE_CLUSTER_UNAVAILABLE",
                    f"Source cluster '{source}' is unreachable: {unusable(source)}.")
        if created_ns and info.created_ns and info.created_ns != created_ns:
            return (
                FAILED,
                "SOURCE_CLUSTER_ID_MISMATCH",
                f"Source cluster '{source}' was removed and re-created after the link was "
                "created; delete the link and create it again.",
            )
        if info.down:
            return (
                UNAVAILABLE,
                "SOURCE_CLUSTER_UNAVAILABLE",
                f"Source cluster '{source}' is unreachable (jetlink cluster down); the link "
                f"resumes after jetlink cluster up {source}.",
            )
        return ACTIVE, NO_ERROR, None

    def source(self, name: str) -> Cluster:
        """The source cluster of link ``name`` (NotFoundError when it does not exist)."""
        return self.datadir.open(self.get(name, with_topics=False).source_cluster)

    # -- reading ---------------------------------------------------------------------------

    def _info(self, row: sqlite3.Row | tuple, *, with_topics: bool = True) -> LinkInfo:
        (name, link_id, source, source_created_ns, configs, created_ms, updated_ms,
         state_error, state_error_message, task_errors, off_ms, cfg_ms, auto_ms, acl_ms) = row
        cfg = LinkConfig(json.loads(configs))
        state, error, message = self._source_status(source, source_created_ns)
        available = error not in UNAVAILABLE_ERRORS
        if state_error:
            state, error, message = FAILED, state_error, state_error_message
        elif state == ACTIVE and cfg.paused:
            state = PAUSED
        info = LinkInfo(
            name=name,
            link_id=link_id,
            source_cluster=source,
            destination_cluster=self.cluster.name,
            config=cfg,
            created_ms=created_ms,
            updated_ms=updated_ms,
            state=state,
            link_error=error,
            link_error_message=message,
            tasks=compute_tasks(cfg, state, error, message, json.loads(task_errors)),
            last_runs={
                "ConsumerOffsetSync": off_ms,
                "TopicConfigsSync": cfg_ms,
                "AutoCreateMirror": auto_ms,
                "AclSync": acl_ms,
            },
            source_available=available,
        )
        if with_topics:
            info.topic_names = self.mirror_topics(name)
        return info

    def find(self, name: str, *, with_topics: bool = True) -> LinkInfo | None:
        """Link ``name``, or None."""
        with self._schema.read() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM links WHERE name = ?", (name,)).fetchone()
        return None if row is None else self._info(row, with_topics=with_topics)

    def get(self, name: str, *, with_topics: bool = True) -> LinkInfo:
        """Link ``name``; KafkaError CLUSTER_LINK_NOT_FOUND (``Cluster link 'L' not found``)."""
        info = self.find(name, with_topics=with_topics)
        if info is None:
            with self._schema.read() as conn:
                raise _not_found(name, conn)
        return info

    def acls_synced_again(self, removed: Iterable[Any]) -> dict[str, int]:
        """Per cluster link of this cluster, how many of the ACLs ``removed`` (just removed
        from this cluster) its next ACL sync creates again: its ACL sync is on, its
        acl.filters select them and the source cluster holds them (acl_sync.py
        ``pending_acls``), whoever made them (the link's sync, or a person: the sync copies
        what the destination lacks)."""
        gone = set(removed)
        out: dict[str, int] = {}
        if not gone:
            return out
        for info in self.list(with_topics=False):
            if not info.config.acl_sync_enable \
                    or not self.datadir.has_cluster(info.source_cluster):
                continue
            again = gone & set(pending_acls(self.datadir, self.cluster, info.source_cluster,
                                            info.config) or ())
            if again:
                out[info.name] = len(again)
        return out

    def list(self, *, with_topics: bool = True) -> list[LinkInfo]:
        """Every link of this cluster, by name."""
        with self._schema.read() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM links ORDER BY name").fetchall()
        return [self._info(r, with_topics=with_topics) for r in rows]

    def names(self) -> builtins.list[str]:
        with self._schema.read() as conn:
            return [r[0] for r in conn.execute("SELECT name FROM links ORDER BY name")]

    def state(self, name: str) -> str:
        """ACTIVE, UNAVAILABLE, PAUSED or FAILED (module docstring)."""
        return self.get(name, with_topics=False).state

    def tasks(self, name: str) -> builtins.list[TaskInfo]:
        return self.get(name, with_topics=False).tasks

    # -- writing ---------------------------------------------------------------------------

    def create(
        self,
        name: str,
        source_cluster: str,
        configs: Mapping[str, Any] | None = None,
        *,
        validate_only: bool = False,
        validate_link: bool = True,
    ) -> LinkInfo:
        """Create link ``name`` from ``source_cluster`` to this cluster.

        Refused (KafkaError): an invalid name (INVALID_CLUSTER_LINK), a name in use
        (CLUSTER_LINK_EXISTS, ``Cluster link 'L' already exists``), the source being this
        cluster (INVALID_REQUEST), a bad configuration (INVALID_CONFIG), and with
        ``validate_link`` (REST's default) a source cluster that does not exist or is down
        (INVALID_CONFIG: the link cannot be validated). ``validate_only``: every check,
        nothing stored; the LinkInfo the link would have is returned.
        """
        validate_link_name(name)
        from ..store.datadir import validate_cluster_name

        # no cluster name at all: a usage error wherever it is typed (exit 2), never a
        # cluster that "does not exist"
        validate_cluster_name(source_cluster, field="source_cluster")
        if self.find(name, with_topics=False) is not None:
            raise _exists(name)
        cfg = LinkConfig.build(configs, creating=True)
        if source_cluster == self.cluster.name:
            raise link_to_self(self.cluster.name)
        source_created_ns = 0
        if not self.datadir.has_cluster(source_cluster):
            if validate_link:
                from ..errors import not_found

                err = KafkaError(
                    "INVALID_CONFIG",
                    f"Unable to validate cluster link: source cluster '{source_cluster}' does "
                    "not exist in the data directory (add it with jetlink cluster add)",
                    field="source_cluster",
                )
                raise not_found(err, source_cluster, self.datadir.cluster_names())
        else:
            if not self.datadir.takes(source_cluster, "kafka"):
                # known whatever link.validate says: its topics can never be mirrored
                raise KafkaError(
                    "INVALID_CONFIG",
                    f"Unable to validate cluster link: source cluster '{source_cluster}' is a "
                    "NATS cluster: a link's source is a Kafka cluster, whose topics it "
                    "mirrors (cluster add NAME --kind kafka)",
                    field="source_cluster",
                )
            src = self.datadir.open(source_cluster).info()
            source_created_ns = src.created_ns
            if validate_link and src.down:
                raise KafkaError(
                    "INVALID_CONFIG",
                    f"Unable to validate cluster link: source cluster '{source_cluster}' is "
                    f"unreachable (jetlink cluster up {source_cluster} first)",
                    field="source_cluster",
                )
        now = self._now_ms()
        # a link only validated has no id yet ("" as REST's validate_only answer shows it):
        # a random one would be one the link, once made, does not get
        row = (name, "" if validate_only else new_link_id(), source_cluster, source_created_ns,
               json.dumps(cfg.to_json()), now, now, None, None, "{}", 0, 0, 0, 0)
        with self._schema.write() as conn:
            if conn.execute("SELECT 1 FROM links WHERE name = ?", (name,)).fetchone():
                raise _exists(name)  # created meanwhile by another process
            if not validate_only:
                conn.execute(
                    f"INSERT INTO links({_COLUMNS}) VALUES ({', '.join('?' * len(row))})", row
                )
        info = self._info(row, with_topics=False)
        if not validate_only:
            info.topic_names = self.mirror_topics(name)
        info.notices += self._sync_notice(info)
        return info

    def _sync_notice(self, info: LinkInfo) -> builtins.list[str]:
        """A link whose ACL sync cannot read the source's ACLs (its principal lacks DESCRIBE
        on the source cluster) is made all the same, as Confluent's is: said now, not at
        its first sync."""
        why = sync_unauthorized(self.datadir, info.source_cluster, info.config)
        return [] if why is None else [
            f"the ACL sync of cluster link {info.name} (acl.sync.enable) copies nothing until "
            f"the source allows it: {why}"]

    def alter(
        self,
        name: str,
        configs: Mapping[str, Any] | None = None,
        *,
        delete: Iterable[str] = (),
        validate_only: bool = False,
    ) -> LinkInfo:
        """Set ``configs`` and revert the keys in ``delete`` to their defaults (one
        transaction). ``cluster.link.paused=true`` pauses the link, ``false`` resumes it;
        ``cluster.link.prefix`` cannot change. KafkaError CLUSTER_LINK_NOT_FOUND /
        INVALID_CONFIG."""
        validate_link_name(name)
        delete = list(delete)
        check_unique_config_keys([*(configs or {}), *delete])
        now = self._now_ms()
        with self._schema.write() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM links WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise _not_found(name, conn)
            cfg = LinkConfig.build(
                configs, base=LinkConfig(json.loads(row[4])), delete=delete, creating=False
            )
            new_row = (*row[:4], json.dumps(cfg.to_json()), row[5], now, *row[7:])
            if not validate_only:
                conn.execute(
                    "UPDATE links SET configs = ?, updated_ms = ? WHERE name = ?",
                    (new_row[4], now, name),
                )
        info = self._info(new_row)
        if {ACL_FILTERS_KEY, "acl.sync.enable"} & {*(configs or {}), *delete}:
            info.notices += _doomed_notice(self.datadir, self.cluster, info)
            info.notices += self._sync_notice(info)
        return info

    def pause(self, name: str) -> LinkInfo:
        return self.alter(name, {"cluster.link.paused": "true"})

    def resume(self, name: str) -> LinkInfo:
        return self.alter(name, {"cluster.link.paused": "false"})

    def delete(
        self,
        name: str,
        *,
        force: bool = False,
        validate_only: bool = False,
        in_use: Callable[[str], builtins.list[str]] | None = None,
        on_force: Callable[[str, builtins.list[str]], None] | None = None,
    ) -> builtins.list[str]:
        """Delete link ``name``; returns the mirror topics that were using it (only possible
        with ``force``). Without ``force`` a link with mirror topics in use is refused with
        CLUSTER_LINK_IN_USE; with ``force`` ``on_force(name, topics)`` (else the hooks') runs
        in the deleting transaction, then ``hooks.on_delete(name)``. ``in_use`` overrides the
        hooks' ``in_use``. KafkaError CLUSTER_LINK_NOT_FOUND."""
        validate_link_name(name)
        with self._schema.write() as conn:
            if not conn.execute("SELECT 1 FROM links WHERE name = ?", (name,)).fetchone():
                raise _not_found(name, conn)
            topics = sorted(in_use(name)) if in_use is not None else self.in_use(name)
            if topics and not force:
                raise KafkaError(
                    "CLUSTER_LINK_IN_USE",
                    f"Cluster link '{name}' is in use by mirror topics: {', '.join(topics)}; "
                    "delete, promote or fail them over first, or force the deletion",
                    field="link_name",
                )
            if validate_only:
                return topics
            if topics:
                handler = on_force or self.hooks.on_force or self._detach
                handler(name, topics)
            if self.hooks.on_delete is not None:
                self.hooks.on_delete(name)
            conn.execute("DELETE FROM links WHERE name = ?", (name,))
        return topics

    def _detach(self, link: str, topics: builtins.list[str]) -> None:
        """The fallback of a forced delete: the link's mirror topics become normal topics."""
        with self._schema.write() as conn:
            try:
                conn.executemany(
                    "UPDATE topics SET mirror_link = NULL WHERE name = ? AND mirror_link = ?",
                    [(t, link) for t in topics],
                )
            except sqlite3.OperationalError:  # pragma: no cover - no topics table
                pass

    # -- engine bookkeeping (used by core/kafka/mirrors.py) -------------------------------

    def set_error(self, name: str, error: str, message: str) -> None:
        """Record an error that breaks link ``name``: its state becomes FAILED with
        ``link_error`` = ``error`` until :meth:`clear_error`."""
        self._update(name, "state_error = ?, state_error_message = ?", (error, message))

    def clear_error(self, name: str) -> None:
        self._update(name, "state_error = NULL, state_error_message = NULL", ())

    def set_task_errors(
        self, name: str, task: str, errors: Sequence[Mapping[str, str]] = ()
    ) -> None:
        """Record the errors of ``task`` (``[{error_code, error_message}]``; empty clears
        them): the task is IN_ERROR while it has errors (and the link is ACTIVE)."""
        if task not in TASK_NAMES:
            raise ValueError(f"unknown task {task!r}")
        with self._schema.write() as conn:
            row = conn.execute("SELECT task_errors FROM links WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise _not_found(name, conn)
            current = json.loads(row[0])
            if errors:
                current[task] = [
                    {"error_code": str(e["error_code"]),
                     "error_message": str(e.get("error_message", ""))}
                    for e in errors
                ]
            else:
                current.pop(task, None)
            conn.execute(
                "UPDATE links SET task_errors = ? WHERE name = ?",
                (json.dumps(current, sort_keys=True), name),
            )

    def record_run(self, name: str, task: str, now_ms: int | None = None) -> None:
        """Note that ``task`` ran at ``now_ms`` (default: now); see :meth:`LinkInfo.due`."""
        column, _ = TASK_SCHEDULE[task]
        self._update(name, f"{column} = ?", (self._now_ms() if now_ms is None else now_ms,))

    def _update(self, name: str, assignments: str, params: tuple) -> None:
        with self._schema.write() as conn:
            cur = conn.execute(f"UPDATE links SET {assignments} WHERE name = ?", (*params, name))
            if cur.rowcount == 0:
                raise _not_found(name, conn)
