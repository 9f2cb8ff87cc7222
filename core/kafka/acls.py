"""Kafka's ACLs and its authorizer, for the embedded engine's Kafka clusters.

An ACL binding is a resource pattern (resource type, name, pattern type) and an access
control entry (principal, host, operation, permission), as Apache Kafka has them
(``org.apache.kafka.common.acl``). A cluster *enforces* ACLs when it was added with an
authorizer (``cluster add NAME --kind kafka --authorizer``), as a broker with
``authorizer.class.name`` set: every request of a principal is then authorized by
:func:`decide`, the rules of Kafka's StandardAuthorizer (metadata/.../authorizer/
StandardAuthorizerData ``findAclRule`` / ``findResult``), defined once here:

- a super user (``super.users``) is allowed everything;
- otherwise the bindings whose resource pattern matches the resource are read (LITERAL: the
  same name, or ``*``; PREFIXED: a prefix of the name); a matching DENY wins; otherwise a
  matching ALLOW allows; when no binding matches the resource at all (for any principal or
  operation) ``allow.everyone.if.no.acl.found`` decides (default false); otherwise denied;
- a binding applies to the principal when it names it or ``User:*``, to the host when it is
  ``*`` or the client's address, to the operation when it is ``ALL`` or the same operation,
  and, for an ALLOW only, when it implies it: READ, WRITE, DELETE and ALTER imply DESCRIBE;
  ALTER_CONFIGS implies DESCRIBE_CONFIGS (a DENY READ does not deny DESCRIBE).

The operator running jetlink (no ``--principal``) is the cluster's administrator, as the
broker's own super user: never refused. The bindings are kept in the cluster database (the
schema component ``kafka_acls``), one transaction per change; a lookup reads only the
bindings of the resource's name, of ``*`` and of the name's prefixes (an index on
(resource type, pattern type, name)), never every binding. ``owner`` marks the bindings a
cluster link's ACL sync created: the sync removes only those.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from .errors import KafkaError
from .tables import KafkaSchema

if TYPE_CHECKING:  # pragma: no cover
    from ..store import Cluster

__all__ = ["COMPONENT", "OPERATIONS", "PATTERN_TYPES", "PERMISSIONS", "RESOURCE_TYPES",
           "AclBinding", "AclFilter", "AclStore", "AclView", "AuthorizerSettings", "Decision",
           "CLUSTER_NAME", "SUPPORTED_OPERATIONS", "check_operation", "decide", "operation_of",
           "binding_warnings", "parse_principal", "resource_type_of", "super_users_comma_warnings",
           "super_users_of"]

COMPONENT = "kafka_acls"
SCHEMA_STEPS: list[list[str]] = [[
    """CREATE TABLE acls (
        resource_type TEXT NOT NULL,
        name          TEXT NOT NULL,
        pattern_type  TEXT NOT NULL,
        principal     TEXT NOT NULL,
        host          TEXT NOT NULL,
        operation     TEXT NOT NULL,
        permission    TEXT NOT NULL,
        owner         TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (resource_type, pattern_type, name, principal, host, operation, permission)
    ) WITHOUT ROWID""",
    """CREATE TABLE authorizer (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) WITHOUT ROWID""",
]]

#: Kafka's enums (AclOperation, ResourceType, PatternType, AclPermissionType) as bindings
#: take them; filters also take ANY (and MATCH for pattern types)
OPERATIONS = ("ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
              "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE",
              "CREATE_TOKENS", "DESCRIBE_TOKENS")
RESOURCE_TYPES = ("TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER")
PATTERN_TYPES = ("LITERAL", "PREFIXED")
PERMISSIONS = ("ALLOW", "DENY")
ANY, MATCH, WILDCARD = "ANY", "MATCH", "*"
#: the one CLUSTER resource's name (org.apache.kafka.common.resource.Resource.CLUSTER_NAME)
CLUSTER_NAME = "kafka-cluster"
#: the longest name: a Kafka protocol STRING (a signed 16-bit length)
MAX_NAME = 32767

#: the operations an ACL on each resource type may name besides ALL (Kafka's AclEntry
#: ``supportedOperations``, Kafka 4: groups also DESCRIBE_CONFIGS and ALTER_CONFIGS): what
#: the kafka-acls tool checks (AclCommand ``validateOperation``) before it asks the cluster;
#: the broker's CreateAcls does not (REST v3 takes any)
SUPPORTED_OPERATIONS: dict[str, tuple[str, ...]] = {
    "TOPIC": ("READ", "WRITE", "CREATE", "DESCRIBE", "DELETE", "ALTER", "DESCRIBE_CONFIGS",
              "ALTER_CONFIGS"),
    "GROUP": ("READ", "DESCRIBE", "DELETE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"),
    "CLUSTER": ("CREATE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS",
                "IDEMPOTENT_WRITE", "ALTER", "DESCRIBE"),
    "TRANSACTIONAL_ID": ("DESCRIBE", "WRITE"),
    "DELEGATION_TOKEN": ("DESCRIBE",),
    "USER": ("CREATE_TOKENS", "DESCRIBE_TOKENS"),
}


def check_operation(resource_type: str, operation: str) -> None:
    """kafka-acls' check that ``operation`` (Kafka's name) applies to ``resource_type``
    (:data:`SUPPORTED_OPERATIONS`): UsageError naming both and the operations it takes."""
    supported = SUPPORTED_OPERATIONS[resource_type]
    if operation != "ALL" and operation not in supported:
        raise UsageError(f"operation {operation} on a {resource_type} resource: ResourceType "
                         f"{resource_type} only supports operations "
                         f"[{', '.join(('ALL', *supported))}]", field="operation")


_IMPLIES_DESCRIBE = frozenset({"DESCRIBE", "READ", "WRITE", "DELETE", "ALTER"})
_IMPLIES_DESCRIBE_CONFIGS = frozenset({"DESCRIBE_CONFIGS", "ALTER_CONFIGS"})


def _key(text: str) -> str:
    """``DescribeConfigs``, ``describe-configs``, ``DESCRIBE_CONFIGS`` -> ``DESCRIBECONFIGS``."""
    return "".join(ch for ch in text.upper() if ch.isalnum())


def _enum(value: str, names: Sequence[str], what: str, field: str,
          extra: Sequence[str] = ()) -> str:
    found = {_key(n): n for n in (*names, *extra)}.get(_key(value or ""))
    if found is None:
        spelt = ", ".join(_camel(n) for n in _SPELT.get(field, names[:2]))
        raise UsageError(f"{what} {value!r} is not one of {', '.join((*names, *extra))} "
                         f"(Kafka's names, in any case: the kafka-acls spellings {spelt} ... "
                         "too)", field=field)
    return found


_SPELT = {"operation": ("READ", "DESCRIBE_CONFIGS"), "resource_type": ("TOPIC", "TRANSACTIONAL_ID")}


def _camel(name: str) -> str:
    """``DESCRIBE_CONFIGS`` -> ``DescribeConfigs`` (how the kafka-acls tool spells it)."""
    return "".join(part.capitalize() for part in name.split("_"))


def operation_of(value: str, *, filter_: bool = False) -> str:
    """An operation as Kafka names it (``Read`` -> ``READ``); ANY only in a filter."""
    return _enum(value, OPERATIONS, "operation", "operation", (ANY,) if filter_ else ())


def tool_operation(value: str) -> str:
    """An operation as the kafka-acls tool takes it (AclCommand: SecurityUtils.operation of
    the value trimmed, its valueFromMap): Kafka's name in PascalCase (``Read``,
    ``DescribeConfigs``), or that name in any case without its underscores (``READ``,
    ``describeconfigs``: the upper-cased value looked up again); any other spelling
    (``DESCRIBE_CONFIGS``) is refused naming it (the tool would find no operation, UNKNOWN,
    and stop). -> ``READ`` ..."""
    text = (value or "").strip()
    pascal = {_camel(n): n for n in OPERATIONS}
    found = pascal.get(text) or {k.upper(): n for k, n in pascal.items()}.get(text.upper())
    if found is None:
        raise UsageError(f"operation {value!r} is not one of "
                         f"{', '.join(pascal)} (kafka-acls takes Kafka's names so, in any "
                         "case, without underscores; jetlink acls takes DESCRIBE_CONFIGS too)",
                         field="operation")
    return found


def resource_type_of(value: str, *, filter_: bool = False) -> str:
    return _enum(value, RESOURCE_TYPES, "resource type", "resource_type",
                 (ANY,) if filter_ else ())


def pattern_type_of(value: str, *, filter_: bool = False) -> str:
    return _enum(value, PATTERN_TYPES, "pattern type", "pattern_type",
                 (ANY, MATCH) if filter_ else ())


def permission_of(value: str, *, filter_: bool = False) -> str:
    return _enum(value, PERMISSIONS, "permission", "permission", (ANY,) if filter_ else ())


def parse_principal(value: str, *, field: str = "principal", acting: bool = False) -> str:
    """``User:alice`` as given (Kafka's SecurityUtils.parseKafkaPrincipal: ``TYPE:NAME``,
    split at the first ``:``; in an ACL either part may be empty, as Kafka takes it, and
    :func:`binding_warnings` says such a principal matches no client; ``acting``: the
    client a request comes from, which has both); UsageError naming the rule otherwise."""
    text = _utf8(value or "", "principal", field)
    kind, sep, name = text.partition(":")
    if not sep or (acting and not (kind and name)):
        if field == "super_users":
            raise UsageError(f"super user {_shown(text)} is not TYPE:NAME (e.g. User:admin)",
                             field=field)
        raise UsageError(f"principal {_shown(text)} is not TYPE:NAME (e.g. User:alice, or "
                         "User:* for every user)", field=field)
    if len(text) > MAX_NAME:
        raise UsageError(f"principal of {len(text)} characters: at most {MAX_NAME} (a Kafka "
                         "protocol string)", field=field)
    return text


# Kafka's principal types as its authorizers compare them (case-sensitive: KafkaPrincipal
# equals on type and name)
_PRINCIPAL_TYPES = ("User", "Group")
# what looks like an address range: Kafka compares an ACL's host with the client's address
# as a string (AclAuthorizer / StandardAuthorizer), so a CIDR or a pattern matches nobody
_HOST_RANGE = re.compile(r"[/*?\[]")


def binding_warnings(bindings: Iterable[Any]) -> list[str]:
    """A sentence per principal or host of ``bindings`` that Kafka takes but that matches no
    client (each said once): a principal type written in another case (``user:alice``:
    Kafka's are ``User:`` / ``Group:``, compared case-sensitively) and a host written as a
    range (``10.0.0.0/8``: compared as a string with the client's one address) or an IPv6
    address not as Java writes a client's (``::1``: :func:`client_address`)."""
    out: list[str] = []
    for b in bindings:
        kind, _sep, name = b.principal.partition(":")
        if not kind or not name:
            said = (f"principal {b.principal!r} has an empty "
                    f"{'type' if not kind else 'name'}: Kafka takes it, but no client "
                    "authenticates as it, so this ACL matches no client")
            if said not in out:
                out.append(said)
        right = next((t for t in _PRINCIPAL_TYPES if t.lower() == kind.lower()), None)
        if right is not None and kind != right:
            said = (f"principal {b.principal!r} has the type {kind!r}: Kafka's is {right!r} "
                    f"(compared case-sensitively), so this ACL matches no client; meant "
                    f"{right}:{b.principal.partition(':')[2]}?")
            if said not in out:
                out.append(said)
        if b.host != "*" and _HOST_RANGE.search(b.host):
            said = (f"host {b.host!r} is compared as one client address (Kafka's ACLs take an "
                    "address or *, no ranges or patterns), so this ACL matches no client")
            if said not in out:
                out.append(said)
        java = client_address(b.host)
        if java != b.host:
            said = (f"host {b.host!r} is compared as text with the client's address as Java "
                    f"writes it ({java}), so this ACL matches no client; meant {java}?")
            if said not in out:
                out.append(said)
    return out


def client_address(host: str) -> str:
    """A client's address as Kafka's authorizer compares it with an ACL's host: Java's
    ``InetAddress.getHostAddress`` (StandardAuthorizerData.findAclRule): an IPv6 address
    with every group, no leading zeros, lower case (``::1`` is ``0:0:0:0:0:0:0:1``), an
    IPv4-mapped one as its IPv4 address; any other text as it is."""
    import ipaddress

    text, pct, scope = host.partition("%")
    if ":" not in text:
        return host
    try:
        addr = ipaddress.IPv6Address(text)
    except ValueError:
        return host
    if addr.ipv4_mapped is not None:
        return str(addr.ipv4_mapped)
    return ":".join(f"{int(g, 16):x}" for g in addr.exploded.split(":")) + pct + scope


def super_users_of(text: str) -> list[str]:
    """Kafka's ``super.users`` (``User:a;User:b``, ';' separated, blanks around each and
    empty pieces left out) as its principals, each checked TYPE:NAME (UsageError)."""
    users = [u.strip() for u in text.split(";") if u.strip()]
    for u in users:
        parse_principal(u, field="super_users")
    return users


# a comma followed by what starts a principal (TYPE:): a list joined with the wrong separator
_COMMA_PRINCIPAL = re.compile(r",(?=\s*[A-Za-z][A-Za-z0-9_]*:)")


def super_users_comma_warnings(super_users: str) -> list[str]:
    """A sentence per super user of ``super_users`` (Kafka's ``super.users``, ';'
    separated) whose name holds ``,TYPE:``: most likely two principals joined with ','
    (``User:alice,User:bob`` is one principal to Kafka, which accepts it)."""
    out = []
    for user in (u.strip() for u in super_users.split(";")):
        parts = [p.strip() for p in _COMMA_PRINCIPAL.split(user)]
        if len(parts) > 1:
            kind = parts[1].partition(":")[0]
            out.append(f"super user {_shown(user)} is one principal whose name holds "
                       f"',{kind}:': Kafka separates super.users with ';' (for several: "
                       f"{';'.join(parts)!r})")
    return out


def _shown(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _utf8(value: str, what: str, field: str) -> str:
    """``value`` when it is UTF-8 text; one holding bytes that are not (held as lone
    surrogates: a command line's) is a usage error, ``not_utf8`` on it for the CLI to name
    the argument (cli/launch.py), whether it is to be stored or only compared."""
    bad = next((ch for ch in value if "\ud800" <= ch <= "\udfff"), None)
    if bad is None:
        return value
    code = ord(bad)
    byte = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
    err = UsageError(f"{what} {_shown(value)} is not UTF-8 text ({byte})", field=field)
    err.not_utf8 = value  # type: ignore[attr-defined]
    raise err


def _name(value: str, field: str = "resource_name") -> str:
    _utf8(value or "", "resource name", field)
    if not value:
        raise UsageError("a resource name must not be empty (* is every resource of the type)",
                         field=field)
    if len(value) > MAX_NAME:
        raise UsageError(f"resource name of {len(value)} characters: at most {MAX_NAME} (a "
                         "Kafka protocol string)", field=field)
    return value


def resource_name_of(value: str) -> str:
    """A resource name a request asks about (``acls check``), checked as an ACL's is: UTF-8
    text, not empty, at most a Kafka protocol string."""
    return _name(value)


def host_of(value: str) -> str:
    """A client host as an ACL entry holds it (checked: not empty, no space, at most 255)."""
    return _host(value)


def _host(value: str) -> str:
    _utf8(value or "", "host", "host")
    if not value or len(value) > 255 or any(ch.isspace() for ch in value):
        raise UsageError(f"host {_shown(value or '')} is empty, longer than 255 characters or "
                         "holds a space: the client's address (Kafka compares it as a "
                         "string), or * for every host", field="host")
    return value


# --- bindings and filters -----------------------------------------------------------------------
@dataclass(frozen=True, order=True)
class AclBinding:
    """One ACL: a resource pattern and an access control entry."""

    resource_type: str
    name: str
    pattern_type: str
    principal: str
    host: str
    operation: str
    permission: str

    @classmethod
    def make(cls, resource_type: str, name: str, pattern_type: str, principal: str,
             host: str, operation: str, permission: str) -> AclBinding:
        """A binding from user input, each field checked (UsageError naming it)."""
        rt = resource_type_of(resource_type)
        if rt == "CLUSTER" and name != CLUSTER_NAME:
            raise UsageError(f"a CLUSTER resource is named {CLUSTER_NAME}, not {_shown(name)}",
                             field="resource_name")
        return cls(rt, _name(name), pattern_type_of(pattern_type), parse_principal(principal),
                   _host(host), operation_of(operation), permission_of(permission))

    def pattern(self) -> str:
        """``ResourcePattern(resourceType=TOPIC, name=T, patternType=LITERAL)`` (Kafka's)."""
        return _pattern_text(self.resource_type, self.name, self.pattern_type)

    def entry(self) -> str:
        """``(principal=User:x, host=*, operation=READ, permissionType=ALLOW)`` (Kafka's)."""
        return _entry_text(self.principal, self.host, self.operation, self.permission)

    def to_json(self) -> dict[str, str]:
        """REST v3's AclData fields (resource_type ... permission)."""
        return {"resource_type": self.resource_type, "resource_name": self.name,
                "pattern_type": self.pattern_type, "principal": self.principal,
                "host": self.host, "operation": self.operation,
                "permission": self.permission}

    def matches_resource(self, resource_type: str, name: str) -> bool:
        """Whether this binding's pattern applies to the resource (StandardAuthorizerData
        ``checkSection``)."""
        if self.resource_type != resource_type:
            return False
        if self.pattern_type == "LITERAL":
            return self.name == name or self.name == WILDCARD
        return name.startswith(self.name)


def _pattern_text(resource_type: str, name: str | None, pattern_type: str) -> str:
    """Kafka's ResourcePattern / ResourcePatternFilter ``toString`` (``<any>``: no name)."""
    return (f"ResourcePattern(resourceType={resource_type}, "
            f"name={'<any>' if name is None else name}, patternType={pattern_type})")


def _entry_text(principal: str | None, host: str | None, operation: str, permission: str
                ) -> str:
    """Kafka's AccessControlEntry ``toString``."""
    return (f"(principal={principal}, host={host}, operation={operation}, "
            f"permissionType={permission})")


@dataclass(frozen=True)
class AclFilter:
    """An AclBindingFilter: each field None/ANY matches every value; ``pattern_type``
    MATCH matches the bindings that apply to ``name`` (the literal, ``*``, its prefixes),
    and with no name every binding, as Kafka's ResourcePatternFilter (a null name
    matches every pattern)."""

    resource_type: str = ANY
    name: str | None = None
    pattern_type: str = ANY
    principal: str | None = None
    host: str | None = None
    operation: str = ANY
    permission: str = ANY

    @classmethod
    def make(cls, resource_type: str | None = None, name: str | None = None,
             pattern_type: str | None = None, principal: str | None = None,
             host: str | None = None, operation: str | None = None,
             permission: str | None = None) -> AclFilter:
        """A filter from user input, each field checked (UsageError naming it)."""
        pt = pattern_type_of(pattern_type or ANY, filter_=True)
        return cls(resource_type_of(resource_type or ANY, filter_=True),
                   None if name is None else _name(name), pt,
                   None if principal is None else parse_principal(principal),
                   None if host is None else _host(host),
                   operation_of(operation or ANY, filter_=True),
                   permission_of(permission or ANY, filter_=True))

    def pattern(self) -> str:
        """Its resource part as Kafka's ResourcePatternFilter writes it (AclCommand's
        questions)."""
        return _pattern_text(self.resource_type, self.name, self.pattern_type)

    def entry(self) -> str:
        """Its access part as the AccessControlEntry it was made from writes it."""
        return _entry_text(self.principal, self.host, self.operation, self.permission)

    def matches(self, b: AclBinding) -> bool:
        if self.resource_type != ANY and b.resource_type != self.resource_type:
            return False
        if self.pattern_type == MATCH:
            if self.name is not None and not b.matches_resource(b.resource_type, self.name):
                return False
        else:
            if self.pattern_type != ANY and b.pattern_type != self.pattern_type:
                return False
            if self.name is not None and b.name != self.name:
                return False
        return ((self.principal is None or b.principal == self.principal)
                and (self.host is None or b.host == self.host)
                and (self.operation == ANY or b.operation == self.operation)
                and (self.permission == ANY or b.permission == self.permission))


# --- the decision ------------------------------------------------------------------------------
@dataclass(frozen=True)
class AuthorizerSettings:
    """A cluster's authorizer: whether it enforces ACLs, ``super.users`` and
    ``allow.everyone.if.no.acl.found``."""

    enabled: bool = False
    super_users: tuple[str, ...] = ()
    allow_everyone_if_no_acl_found: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"authorizer": self.enabled, "super.users": ";".join(self.super_users),
                "allow.everyone.if.no.acl.found": self.allow_everyone_if_no_acl_found}


@dataclass(frozen=True)
class Decision:
    """Whether a principal may do an operation on a resource, and the rule that decided:
    ``super user``, ``operator`` (jetlink without --principal), ``deny`` / ``allow`` (the
    binding), ``no acl`` (no binding matches the resource: allow.everyone.if.no.acl.found),
    ``default deny`` (bindings match the resource, none allows this), ``no authorizer``."""

    allowed: bool
    rule: str
    binding: AclBinding | None = None
    principal: str | None = None
    operation: str = ""
    resource_type: str = ""
    name: str = ""
    host: str = ""

    def reason(self) -> str:
        b = self.binding
        if self.rule == "deny" and b is not None:
            return f"the DENY {b.pattern()} {b.entry()} matched"
        if self.rule == "allow" and b is not None:
            implied = "" if b.operation in (self.operation, "ALL") else \
                f" ({b.operation} implies {self.operation})"
            return f"the ALLOW {b.pattern()} {b.entry()} matched{implied}"
        if self.rule == "super user":
            return f"{self.principal} is a super user (super.users)"
        if self.rule == "operator":
            return "the operator (no --principal) administers the cluster"
        if self.rule == "no authorizer":
            return "the cluster has no authorizer: every request is allowed"
        if self.rule == "no acl":
            return ("no ACL matched the resource: allow.everyone.if.no.acl.found="
                    f"{'true' if self.allowed else 'false'}")
        return (f"ACLs match the resource, none allows {self.principal} {self.operation} from "
                f"host {self.host}")

    def to_json(self) -> dict[str, Any]:
        return {"result": "ALLOWED" if self.allowed else "DENIED", "rule": self.rule,
                "principal": self.principal, "host": self.host, "operation": self.operation,
                "resource_type": self.resource_type, "resource_name": self.name,
                "binding": self.binding.to_json() if self.binding is not None else None,
                "reason": self.reason()}


def _applies(b: AclBinding, principal: str, host: str, operation: str) -> str | None:
    """The permission of ``b`` for this request, or None when it does not apply
    (StandardAuthorizerData ``findResult``)."""
    if b.principal not in (principal, "User:*"):
        return None
    if b.host != WILDCARD and b.host != host:
        return None
    if b.operation != "ALL":
        if b.permission == "ALLOW":
            if operation == "DESCRIBE":
                if b.operation not in _IMPLIES_DESCRIBE:
                    return None
            elif operation == "DESCRIBE_CONFIGS":
                if b.operation not in _IMPLIES_DESCRIBE_CONFIGS:
                    return None
            elif b.operation != operation:
                return None
        elif b.operation != operation:
            return None
    return b.permission


def decide(settings: AuthorizerSettings, bindings: Iterable[AclBinding], principal: str | None,
           operation: str, resource_type: str, name: str, host: str = "127.0.0.1"
           ) -> Decision:
    """Kafka's decision (this module's opening) over ``bindings``, the candidates of the
    resource (those that do not match its pattern are skipped here too)."""
    def result(allowed: bool, rule: str, binding: AclBinding | None = None) -> Decision:
        return Decision(allowed, rule, binding, principal, operation, resource_type, name,
                        host)

    if not settings.enabled:
        return result(True, "no authorizer")
    if principal is None:
        return result(True, "operator")
    if principal in settings.super_users:
        return result(True, "super user")
    matching = [b for b in bindings if b.matches_resource(resource_type, name)]
    return _verdict(settings, matching, bool(matching), principal, operation, resource_type,
                    name, host)


def _verdict(settings: AuthorizerSettings, bindings: Iterable[AclBinding], found: bool,
             principal: str, operation: str, resource_type: str, name: str, host: str
             ) -> Decision:
    """The decision over ``bindings`` that match the resource (``found``: some binding,
    of any principal, matches it: else ``allow.everyone.if.no.acl.found`` decides)."""
    allow: AclBinding | None = None
    deny: AclBinding | None = None
    for b in bindings:  # the one reported is the least of those that apply (any order in)
        got = _applies(b, principal, host, operation)
        if got == "DENY" and (deny is None or b < deny):
            deny = b
        elif got == "ALLOW" and (allow is None or b < allow):
            allow = b
    if deny is not None:
        return Decision(False, "deny", deny, principal, operation, resource_type, name, host)
    if allow is not None:
        return Decision(True, "allow", allow, principal, operation, resource_type, name, host)
    if not found:
        return Decision(settings.allow_everyone_if_no_acl_found, "no acl", None, principal,
                        operation, resource_type, name, host)
    return Decision(False, "default deny", None, principal, operation, resource_type, name,
                    host)


#: the error a refused request answers, per resource type (Kafka's Errors)
DENIED_ERRORS = {"TOPIC": "TOPIC_AUTHORIZATION_FAILED", "GROUP": "GROUP_AUTHORIZATION_FAILED",
                 "CLUSTER": "CLUSTER_AUTHORIZATION_FAILED",
                 "TRANSACTIONAL_ID": "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"}


def refusal(d: Decision) -> KafkaError:
    """The Kafka error a client gets for the refused ``d`` (TOPIC_AUTHORIZATION_FAILED ...),
    its message naming the rule."""
    what = {"TOPIC": "topic", "GROUP": "group", "CLUSTER": "cluster",
            "TRANSACTIONAL_ID": "transactional id"}.get(d.resource_type, d.resource_type)
    name = DENIED_ERRORS.get(d.resource_type, "CLUSTER_AUTHORIZATION_FAILED")
    return KafkaError(name, f"{d.principal} is not authorized to {d.operation} {what} "
                            f"{d.name}: {d.reason()}")


# --- the store ---------------------------------------------------------------------------------
#: keys of the cluster connection's cache (``Cluster.cache``): the index, and a counter this
#: process bumps with every change of the bindings or settings
_INDEX, _GENERATION, _STORE = "kafka_acls.index", "kafka_acls.generation", "kafka_acls.store"


class AclView:
    """A cluster's bindings and settings as read at one moment (never changed after): the
    bindings by resource and principal, LITERAL ones by (type, name), PREFIXED ones by type
    then prefix, each then by principal, so a decision reads the bindings of the resource's
    name, ``*`` and the name's prefixes for the principal and ``User:*``, never a scan. A
    decision made once is remembered (the view never changes, so neither does it)."""

    MEMO = 4096  # decisions remembered; all forgotten when full

    def __init__(self, key: Any, settings: AuthorizerSettings, rows: Iterable[AclBinding]
                 ) -> None:
        self.key, self.settings = key, settings
        self.literal: dict[tuple[str, str], dict[str, list[AclBinding]]] = {}
        self.prefixed: dict[str, dict[str, dict[str, list[AclBinding]]]] = {}
        self.longest: dict[str, int] = {}
        for b in rows:
            if b.pattern_type == "LITERAL":
                by = self.literal.setdefault((b.resource_type, b.name), {})
            else:
                by = self.prefixed.setdefault(b.resource_type, {}).setdefault(b.name, {})
                self.longest[b.resource_type] = max(self.longest.get(b.resource_type, 0),
                                                    len(b.name))
            by.setdefault(b.principal, []).append(b)
        self._memo: dict[tuple[str | None, str, str, str, str], Decision] = {}

    def authorize(self, principal: str | None, operation: str, resource_type: str,
                  name: str, host: str = "127.0.0.1") -> Decision:
        """Kafka's decision for this request (:func:`decide`) over this view."""
        key = (principal, operation, resource_type, name, host)
        d = self._memo.get(key)
        if d is None:
            s = self.settings
            if not s.enabled or principal is None or principal in s.super_users:
                d = decide(s, (), principal, operation, resource_type, name, host)
            else:
                d = self.decide(principal, operation, resource_type, name, host)
            if len(self._memo) >= self.MEMO:
                self._memo.clear()
            self._memo[key] = d
        return d

    def check(self, principal: str | None, operation: str, resource_type: str, name: str,
              host: str = "127.0.0.1") -> Decision:
        """:meth:`authorize`, raising the client's Kafka error when refused."""
        d = self.authorize(principal, operation, resource_type, name, host)
        if not d.allowed:
            raise refusal(d)
        return d

    def _patterns(self, resource_type: str, name: str) -> list[dict[str, list[AclBinding]]]:
        out = [p for p in (self.literal.get((resource_type, name)),
                           self.literal.get((resource_type, WILDCARD))) if p]
        prefixed = self.prefixed.get(resource_type)
        if prefixed:
            for i in range(1, min(len(name), self.longest[resource_type]) + 1):
                found = prefixed.get(name[:i])
                if found:
                    out.append(found)
        return out

    def decide(self, principal: str, operation: str, resource_type: str, name: str,
               host: str) -> Decision:
        """:func:`decide` over the bindings of the resource for ``principal`` and
        ``User:*`` (the only ones that can apply), the others counted as "found"."""
        patterns = self._patterns(resource_type, name)
        mine = [b for by in patterns for who in (principal, "User:*") for b in by.get(who, ())]
        return _verdict(self.settings, mine, bool(patterns), principal, operation,
                        resource_type, name, host)


_COLUMNS = "resource_type, name, pattern_type, principal, host, operation, permission"


class AclStore:
    """The ACLs and the authorizer settings of one Kafka cluster (its database)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._schema = KafkaSchema(cluster, [(COMPONENT, SCHEMA_STEPS)])

    @classmethod
    def of(cls, cluster: Cluster) -> AclStore:
        """The store of ``cluster``, made once per connection (a request asks it each time)."""
        store = cluster.cache.get(_STORE)
        if not isinstance(store, cls) or store.cluster is not cluster:
            store = cls(cluster)
            cluster.cache[_STORE] = store
        return store

    # -- settings ----------------------------------------------------------------------------
    def settings(self) -> AuthorizerSettings:
        """The authorizer's settings as they are now (held with the bindings, :meth:`view`)."""
        return self.view().settings

    @staticmethod
    def _read_settings(conn: Any) -> AuthorizerSettings:
        rows = dict(conn.execute("SELECT key, value FROM authorizer").fetchall())
        users = tuple(u for u in rows.get("super.users", "").split(";") if u)
        return AuthorizerSettings(rows.get("authorizer") == "true", users,
                                  rows.get("allow.everyone.if.no.acl.found") == "true")

    def configure(self, *, enabled: bool | None = None, super_users: str | None = None,
                  allow_everyone: bool | None = None) -> AuthorizerSettings:
        """Change the settings given (``super_users``: Kafka's ``User:a;User:b``)."""
        values: dict[str, str] = {}
        if enabled is not None:
            values["authorizer"] = "true" if enabled else "false"
        if super_users is not None:
            values["super.users"] = ";".join(dict.fromkeys(super_users_of(super_users)))
        if allow_everyone is not None:
            values["allow.everyone.if.no.acl.found"] = "true" if allow_everyone else "false"
        if values:
            with self._writing() as conn:
                conn.executemany("INSERT INTO authorizer(key, value) VALUES (?, ?) ON CONFLICT"
                                 "(key) DO UPDATE SET value = excluded.value",
                                 list(values.items()))
        return self.settings()

    def require(self) -> AuthorizerSettings:
        """The settings of a cluster that enforces ACLs; SECURITY_DISABLED otherwise (Kafka's
        answer to an ACL request on a broker without an authorizer)."""
        settings = self.settings()
        if not settings.enabled:
            raise KafkaError("SECURITY_DISABLED", f"No Authorizer is configured on cluster "
                             f"{self.cluster.name}: add it with jetlink cluster authorizer "
                             f"{self.cluster.name} --enable")
        return settings

    # -- bindings ----------------------------------------------------------------------------
    def add(self, bindings: Iterable[AclBinding], *, owner: str = "") -> list[AclBinding]:
        """Create ``bindings`` (one transaction); those that exist stay as they are. Returns
        the ones created."""
        wanted = list(dict.fromkeys(bindings))
        made = []
        with self._writing() as conn:
            for b in wanted:
                cur = conn.execute(
                    f"INSERT OR IGNORE INTO acls({_COLUMNS}, owner) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (b.resource_type, b.name, b.pattern_type, b.principal, b.host, b.operation,
                     b.permission, owner))
                if cur.rowcount:
                    made.append(b)
        return made

    def remove(self, filters: Iterable[AclFilter], *, owner: str | None = None
               ) -> list[AclBinding]:
        """Delete the bindings matching any of ``filters`` (``owner``: only those it owns),
        one transaction. Returns the ones deleted."""
        flts = list(filters)
        gone = []
        with self._writing() as conn:
            for b, own in self._rows(conn, None):
                if owner is not None and own != owner:
                    continue
                if any(f.matches(b) for f in flts):
                    conn.execute(
                        "DELETE FROM acls WHERE resource_type = ? AND pattern_type = ? AND "
                        "name = ? AND principal = ? AND host = ? AND operation = ? AND "
                        "permission = ?", (b.resource_type, b.pattern_type, b.name,
                                           b.principal, b.host, b.operation, b.permission))
                    gone.append(b)
        return gone

    def sync_owned(self, owner: str, wanted: Iterable[AclBinding]
                   ) -> tuple[list[AclBinding], list[AclBinding]]:
        """Make the bindings ``owner`` created be ``wanted`` (one transaction): create the
        missing ones with that owner (one that exists already, whoever made it, stays as it
        is and is not taken over) and delete the owner's bindings not in ``wanted`` (never
        another owner's). Returns (created, deleted)."""
        want = set(wanted)
        created, deleted = [], []
        with self._writing() as conn:
            mine = [b for b, own in self._rows(conn, None) if own == owner]
            for b in sorted(set(mine) - want):
                conn.execute(
                    "DELETE FROM acls WHERE resource_type = ? AND pattern_type = ? AND "
                    "name = ? AND principal = ? AND host = ? AND operation = ? AND "
                    "permission = ? AND owner = ?",
                    (b.resource_type, b.pattern_type, b.name, b.principal, b.host,
                     b.operation, b.permission, owner))
                deleted.append(b)
            for b in sorted(want - set(mine)):
                cur = conn.execute(
                    f"INSERT OR IGNORE INTO acls({_COLUMNS}, owner) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (b.resource_type, b.name, b.pattern_type, b.principal, b.host,
                     b.operation, b.permission, owner))
                if cur.rowcount:
                    created.append(b)
        return created, deleted

    def find(self, flt: AclFilter | None = None, *, owner: str | None = None
             ) -> list[AclBinding]:
        """The bindings matching ``flt`` (all by default), sorted."""
        flt = flt or AclFilter()
        with self._schema.read() as conn:
            rows = self._rows(conn, flt.resource_type if flt.resource_type != ANY else None)
        return sorted(b for b, own in rows if flt.matches(b)
                      and (owner is None or own == owner))

    def owners(self, bindings: Iterable[AclBinding]) -> dict[AclBinding, str]:
        """The owner of each of ``bindings`` that has one (a link's ACL sync: ``link:NAME``,
        acl_sync.py owner_of)."""
        wanted = set(bindings)
        with self._schema.read() as conn:
            return {b: own for b, own in self._rows(conn, None) if own and b in wanted}

    def disown(self, owner: str) -> int:
        """Make the bindings ``owner`` created ordinary ones (owner cleared, one
        transaction); how many. Nothing is written when it owns none."""
        if not self.find(owner=owner):
            return 0
        with self._writing() as conn:
            return int(conn.execute("UPDATE acls SET owner = '' WHERE owner = ?",
                                    (owner,)).rowcount)

    def owned(self, owner: str) -> list[AclBinding]:
        return self.find(owner=owner)

    @staticmethod
    def _rows(conn: Any, resource_type: str | None) -> list[tuple[AclBinding, str]]:
        sql = f"SELECT {_COLUMNS}, owner FROM acls"
        args: tuple[Any, ...] = ()
        if resource_type is not None:
            sql += " WHERE resource_type = ?"
            args = (resource_type,)
        return [(AclBinding(*r[:7]), r[7]) for r in conn.execute(sql, args)]

    def authorize(self, principal: str | None, operation: str, resource_type: str,
                  name: str, host: str = "127.0.0.1") -> Decision:
        """Kafka's decision for this request (:func:`decide`), over the cluster's bindings
        held in memory by resource (:meth:`view`), read again only when they changed."""
        return self.view().authorize(principal, operation, resource_type, name, host)

    def view(self) -> AclView:
        """The bindings and settings as last read: kept with the cluster's connection and
        read again when this process changed them (:meth:`_changed`) or another connection
        committed since (SQLite's ``PRAGMA data_version``, asked outside any transaction:
        one statement per decision)."""
        version = self.cluster.conn.execute("PRAGMA data_version").fetchone()[0]
        key = (version, self.cluster.cache.get(_GENERATION, 0))
        index = self.cluster.cache.get(_INDEX)
        if isinstance(index, AclView) and index.key == key:
            return index
        with self._schema.read() as conn:
            settings = self._read_settings(conn)
            rows = [b for b, _own in self._rows(conn, None)]
        index = AclView(key, settings, rows)
        self.cluster.cache[_INDEX] = index
        return index

    def _changed(self) -> None:
        self.cluster.cache[_GENERATION] = self.cluster.cache.get(_GENERATION, 0) + 1

    @contextlib.contextmanager
    def _writing(self) -> Iterator[Any]:
        """A write transaction of the bindings or settings: the index is read again after
        it (committed or rolled back) and never holds what it wrote before its end."""
        self._changed()
        try:
            with self._schema.write() as conn:
                yield conn
        finally:
            self._changed()

    def check(self, principal: str | None, operation: str, resource_type: str, name: str,
              host: str = "127.0.0.1") -> Decision:
        """:meth:`authorize`, raising the client's Kafka error when refused."""
        return self.view().check(principal, operation, resource_type, name, host)
