"""Fencing a Kafka topic with an ACL: the old source topic of a failed-over mirror stops
taking writes (``jetlink dr fence``), as Confluent's mirror topics document says a mirror's
source is cut off: "create a DENY ACL for the source topic".

The fence is one binding, :func:`fence_binding`: DENY WRITE for ``User:*`` from host ``*`` on
the topic (LITERAL), created with owner :data:`FENCE_OWNER`. A DENY wins over every ALLOW
(Kafka's StandardAuthorizer), so every producer that is not a super user gets
TOPIC_AUTHORIZATION_FAILED. Only a cluster that enforces ACLs applies it
(:meth:`.acls.AclStore.settings` ``enabled``). Like any binding on the topic, it also ends
``allow.everyone.if.no.acl.found`` for that topic while it is there (Kafka: a resource with
a binding is no longer "without ACLs"). The per-object failback of a mirror topic
(truncate-and-restore, the reverse verbs: core/kafka/mirror_promote.py) removes it with
:func:`unfence_topic`: that binding, and only when the fence created it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .acls import AclBinding, AclFilter, AclStore

if TYPE_CHECKING:  # pragma: no cover
    from ..store import Cluster

__all__ = ["FENCE_OWNER", "fence_binding", "fence_topic", "is_fenced", "unfence_topic"]

#: the owner of the bindings ``dr fence`` creates
FENCE_OWNER = "jetlink:fence"


def fence_binding(topic: str) -> AclBinding:
    """DENY WRITE for every user from every host on ``topic``."""
    return AclBinding("TOPIC", topic, "LITERAL", "User:*", "*", "WRITE", "DENY")


def _exact(topic: str) -> AclFilter:
    b = fence_binding(topic)
    return AclFilter(b.resource_type, b.name, b.pattern_type, b.principal, b.host,
                     b.operation, b.permission)


def is_fenced(cluster: Cluster, topic: str) -> bool:
    """Whether ``topic`` of ``cluster`` carries the fence's binding (whoever created it)."""
    return bool(AclStore(cluster).find(_exact(topic)))


def fence_topic(cluster: Cluster, topic: str) -> bool:
    """Add the fence of ``topic`` (one transaction); False when the binding was there."""
    return bool(AclStore(cluster).add([fence_binding(topic)], owner=FENCE_OWNER))


def unfence_topic(cluster: Cluster, topic: str) -> bool:
    """Remove the fence of ``topic`` when the fence created it; whether it did."""
    return bool(AclStore(cluster).remove([_exact(topic)], owner=FENCE_OWNER))
