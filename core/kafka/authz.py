"""What each request needs from Kafka's authorizer, for a client and for a cluster link, each
decision made by :meth:`~jetlink.core.kafka.acls.AclStore.authorize` (the one decision).

Clients (``--principal User:NAME`` on ``topic produce|consume|create|describe`` and the
``group`` verbs): :data:`REQUESTS` lists, per Kafka request, the operations and resources
Kafka's broker authorizes, in the order it does (KafkaApis ``handleProduceRequest``,
``handleFetchRequest``, ``handleOffsetCommitRequest`` ... ; Apache Kafka's "Kafka
Authorizations (ACLs)" table): Produce WRITE on the topic (nothing on the cluster since
KIP-679: IDEMPOTENT_WRITE is InitProducerId's, which jetlink's producer never asks), Fetch READ on
the topic, JoinGroup / Heartbeat / LeaveGroup READ on the group, OffsetCommit READ on the
group then READ on each topic, OffsetFetch and DescribeGroups DESCRIBE on the group (the
partitions of topics without DESCRIBE left out of the offsets, as OffsetFetch answers them),
DeleteGroups DELETE on the group, OffsetDelete DELETE on the group then READ on each topic
(the others answered TOPIC_AUTHORIZATION_FAILED per partition), Metadata / ListOffsets
DESCRIBE on the topic,
DescribeConfigs DESCRIBE_CONFIGS on the topic (kafka-topics --describe asks it), CreateTopics
CREATE on the cluster or else on the topic. :func:`check_request` raises the refused one's
Kafka error (TOPIC_AUTHORIZATION_FAILED 29, GROUP_AUTHORIZATION_FAILED 30 ...). ListGroups
shows every group to a principal with DESCRIBE on the cluster, else the groups it may
DESCRIBE (:func:`visible`).

Cluster links: the link authenticates to its source with its ``sasl.jaas.config``; its
principal is ``User:<username>`` of the PLAIN or SCRAM LoginModule's ``username`` option,
else ``User:ANONYMOUS`` (:func:`link_principal`). Where the source enforces ACLs it needs
READ and DESCRIBE_CONFIGS on each source topic it mirrors (Confluent's Mirror Topics
document: creation, by hand and auto-create; :data:`MIRROR_NEEDS`), READ to keep copying
(:func:`link_read_denied`), and DESCRIBE on the consumer groups (and the topics, implied by
READ) whose offsets it syncs (Confluent's "Manage Security for Cluster Linking": "DESCRIBE:
Topics, and DESCRIBE: ConsumerGroups"; :func:`groups_denied`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from .acls import CLUSTER_NAME, AclStore, AclView, Decision, refusal
from .errors import KafkaError

if TYPE_CHECKING:  # pragma: no cover
    from ..store import Cluster

__all__ = ["ANONYMOUS", "MIRROR_NEEDS", "REQUESTS", "authorized", "check_request", "groups_denied",
           "link_principal", "link_read_denied", "mirror_denied", "mirror_refusal", "visible"]

#: Kafka request -> ((operation, resource type), ...), checked in this order
REQUESTS: dict[str, tuple[tuple[str, str], ...]] = {
    "Produce": (("WRITE", "TOPIC"),),
    "Fetch": (("READ", "TOPIC"),),
    "Metadata": (("DESCRIBE", "TOPIC"),),
    "ListOffsets": (("DESCRIBE", "TOPIC"),),
    "JoinGroup": (("READ", "GROUP"),),
    "Heartbeat": (("READ", "GROUP"),),
    "LeaveGroup": (("READ", "GROUP"),),
    "OffsetCommit": (("READ", "GROUP"), ("READ", "TOPIC")),
    "OffsetFetch": (("DESCRIBE", "GROUP"),),
    "DescribeGroups": (("DESCRIBE", "GROUP"),),
    "DescribeConfigs": (("DESCRIBE_CONFIGS", "TOPIC"),),
    "DeleteGroups": (("DELETE", "GROUP"),),
    "OffsetDelete": (("DELETE", "GROUP"),),  # then READ on each topic: :func:`authorized`
}

#: what a link's principal needs on a source topic to mirror it (Confluent's Mirror Topics)
MIRROR_NEEDS = ("READ", "DESCRIBE_CONFIGS")
ANONYMOUS = "User:ANONYMOUS"


def _store(cluster: Cluster) -> AclView | None:
    """The cluster's ACLs as they are now when it enforces them, else None (nothing to ask):
    one view for the whole request (its bindings read again only when they changed)."""
    view = AclStore.of(cluster).view()
    return view if view.settings.enabled else None


def check_request(cluster: Cluster, principal: str | None, request: str, *,
                  topic: str | None = None, group: str | None = None,
                  topics: Iterable[str] = ()) -> None:
    """Authorize ``principal``'s ``request`` (a :data:`REQUESTS` name, or CreateTopics) on
    ``cluster``; the refused one's Kafka error. Nothing is asked for the operator (None)."""
    if principal is None:
        return
    store = _store(cluster)
    if store is None:
        return
    if request == "CreateTopics":
        assert topic is not None
        if not store.authorize(principal, "CREATE", "CLUSTER", CLUSTER_NAME).allowed:
            store.check(principal, "CREATE", "TOPIC", topic)
        return
    for operation, rtype in REQUESTS[request]:
        if rtype == "GROUP":
            assert group is not None
            store.check(principal, operation, rtype, group)
            continue
        for name in dict.fromkeys([*([topic] if topic is not None else []), *topics]):
            store.check(principal, operation, rtype, name)


def visible(cluster: Cluster, principal: str | None, resource_type: str,
            names: Iterable[str]) -> list[str]:
    """``names`` the principal may DESCRIBE (all of them with DESCRIBE on the cluster, as
    Kafka's ListGroups answers)."""
    names = list(names)
    store = None if principal is None else _store(cluster)
    if store is None or store.authorize(principal, "DESCRIBE", "CLUSTER",
                                        CLUSTER_NAME).allowed:
        return names
    return authorized(cluster, principal, "DESCRIBE", resource_type, names)


def authorized(cluster: Cluster, principal: str | None, operation: str, resource_type: str,
               names: Iterable[str]) -> list[str]:
    """``names`` the principal may ``operation`` (the broker's filterByAuthorized: a request
    naming several topics answers the others with their own error); all for the operator."""
    names = list(names)
    store = None if principal is None else _store(cluster)
    if store is None:
        return names
    return [n for n in names if store.authorize(principal, operation, resource_type, n).allowed]


# --- cluster links -------------------------------------------------------------------------
_MODULE = re.compile(r"(?P<cls>[\w.$]+)\s+(?:required|requisite|sufficient|optional)\b"
                     r"(?P<opts>[^;]*);?")
_OPTION = re.compile(r"""(?P<key>[\w.\-]+)\s*=\s*(?:"(?P<q>(?:[^"\\]|\\.)*)"|(?P<u>[^\s;"]+))""")


def link_principal(configs: Mapping[str, str]) -> str:
    """``User:<username>`` of the link's ``sasl.jaas.config`` when its LoginModule is
    PLAIN's or SCRAM's (Kafka authenticates those clients as ``User:<username>``), else
    ``User:ANONYMOUS``. Only the username is read: never the password."""
    text = configs.get("sasl.jaas.config") or ""
    for module in _MODULE.finditer(text):
        cls = module.group("cls").rsplit(".", 1)[-1]
        if cls not in ("PlainLoginModule", "ScramLoginModule"):
            continue
        for opt in _OPTION.finditer(module.group("opts")):
            if opt.group("key") == "username":
                name = opt.group("q") if opt.group("q") is not None else opt.group("u")
                if name:
                    return f"User:{name}"
    return ANONYMOUS


def _missing(store: AclView, principal: str, operations: Iterable[str], topic: str
             ) -> list[Decision]:
    return [d for d in (store.authorize(principal, op, "TOPIC", topic) for op in operations)
            if not d.allowed]


def mirror_refusal(source: Cluster, principal: str, topic: str, link: str
                   ) -> KafkaError | None:
    """TOPIC_AUTHORIZATION_FAILED when the link's principal lacks READ or DESCRIBE_CONFIGS
    on ``topic`` of a source that enforces ACLs, naming the ACLs missing; else None."""
    store = _store(source)
    if store is None:
        return None
    return mirror_denied(store, source.name, principal, topic, link)


def mirror_denied(acls: AclView, source: str, principal: str, topic: str, link: str
                  ) -> KafkaError | None:
    """:func:`mirror_refusal` over the ACLs ``acls`` of the source cluster named ``source``
    (which enforces them): the ones it holds, or will hold once a plan is applied."""
    denied = _missing(acls, principal, MIRROR_NEEDS, topic)
    if not denied:
        return None
    ops = " and ".join(d.operation for d in denied)
    return KafkaError(
        "TOPIC_AUTHORIZATION_FAILED",
        f"Cluster link '{link}' is not authorized to mirror source topic '{topic}': its "
        f"principal {principal} needs the ACLs READ and DESCRIBE_CONFIGS on the topic in "
        f"source cluster {source}, and lacks {ops} ({denied[0].reason()})",
        field="source_topic_name")


def link_read_denied(source: Cluster, principal: str, topic: str) -> str | None:
    """Why the link's principal may not READ ``topic`` of a source that enforces ACLs (the
    ACL missing or the DENY that matched), else None."""
    store = _store(source)
    if store is None:
        return None
    denied = _missing(store, principal, ("READ",), topic)
    if not denied:
        return None
    return (f"{refusal(denied[0]).message}; the link needs the ACL READ on topic {topic} in "
            f"source cluster {source.name}")


def groups_denied(source: Cluster, principal: str, groups: Iterable[str]) -> list[str]:
    """The ``groups`` whose offsets the link may not sync: no DESCRIBE on the group in a
    source that enforces ACLs."""
    store = _store(source)
    if store is None:
        return []
    return [g for g in groups
            if not store.authorize(principal, "DESCRIBE", "GROUP", g).allowed]
