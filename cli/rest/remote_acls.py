"""The ``acls add|ls|rm`` verbs over a REST API v3 endpoint (``--rest-url``).

:class:`RestAcls` has the methods of the engine's ``AclStore`` (core/kafka/acls.py) that
cli/acls.py calls, over Confluent's ACL operations, and returns the engine's ``AclBinding``s:
the verbs keep one rendering path and print the same lines, tables and JSON whichever side
answered.

- ``find``: getKafkaAcls with the filter's fields as query parameters (ANY ones left out);
- ``add``: the bindings the server already has are read first (getKafkaAcls, one request per
  resource pattern), so that the verb says "Added" / "Exists" as the engine does (REST v3's
  create answers 201 without saying which existed); the missing ones are created with
  batchCreateKafkaAcls (Cloud's and kafka-rest's descriptions) when there are several, with
  one createKafkaAcls each when there is one or when the server does not know the batch path
  (404: the Platform's description has no batch operation). Two requests, not one
  transaction: a binding another client adds in between is reported "Added";
- ``remove``: deleteKafkaAcls per filter, with resource_type, pattern_type, operation and
  permission always sent (Cloud's description requires them; ANY where the filter has no
  value), answering the bindings deleted;
- ``require``: nothing to ask first: a cluster without an authorizer answers its
  SECURITY_DISABLED error (400, error_code 40002 from Confluent's servers) to the first
  request.

Imported only when an ``acls`` verb runs with a REST URL.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from jetlink.core.kafka.acls import ANY, AclBinding, AclFilter

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.cli.rest.client import RestClient

__all__ = ["RestAcls", "acl_binding", "acl_fields", "filter_params"]

# The ACL fields of REST v3 (query parameters, CreateAclRequestData and AclData).
_FIELDS = ("resource_type", "resource_name", "pattern_type", "principal", "host", "operation",
           "permission")


def acl_binding(data: Mapping[str, Any]) -> AclBinding:
    """The AclBinding of an AclData document (read as sent: a server may name types jetlink
    does not make, e.g. UNKNOWN)."""
    return AclBinding(*(str(data.get(k) or "") for k in _FIELDS))


def acl_fields(binding: AclBinding) -> dict[str, str]:
    """The CreateAclRequestData of a binding."""
    return binding.to_json()


def filter_params(flt: AclFilter, *, every_enum: bool = False) -> dict[str, str]:
    """The query parameters of a filter: the fields it sets; ``every_enum``: the four enum
    fields always (ANY where unset), as deleteKafkaAcls requires them in Cloud's description."""
    params: dict[str, str] = {}
    for key, value in (("resource_type", flt.resource_type), ("pattern_type", flt.pattern_type),
                       ("operation", flt.operation), ("permission", flt.permission)):
        if every_enum or value != ANY:
            params[key] = value
    for key, text in (("resource_name", flt.name), ("principal", flt.principal),
                      ("host", flt.host)):
        if text is not None:
            params[key] = text
    return {k: params[k] for k in _FIELDS if k in params}


class RestAcls:
    """``AclStore``'s verbs over REST v3 (module docstring)."""

    def __init__(self, client: RestClient) -> None:
        self.client = client

    def require(self) -> None:
        """Nothing: the server answers SECURITY_DISABLED itself."""

    def find(self, flt: AclFilter | None = None) -> list[AclBinding]:
        docs = self.client.list_acls(filter_params(flt or AclFilter()))
        return sorted({acl_binding(d) for d in docs})

    def add(self, bindings: Iterable[AclBinding]) -> list[AclBinding]:
        from jetlink.cli.rest.client import RestApiError

        wanted = list(dict.fromkeys(bindings))
        have: set[AclBinding] = set()
        for rt, name, pt in dict.fromkeys((b.resource_type, b.name, b.pattern_type)
                                          for b in wanted):
            have.update(self.find(AclFilter(rt, name, pt)))
        made = [b for b in wanted if b not in have]
        if len(made) > 1:
            try:
                self.client.create_acls(acl_fields(b) for b in made)
                return made
            except RestApiError as err:
                if err.status != 404:  # 404: no batch operation on this server
                    raise
        for b in made:
            self.client.create_acl(acl_fields(b))
        return made

    def owners(self, bindings: Iterable[AclBinding]) -> dict[AclBinding, str] | None:
        """Not known (None): REST v3's ACL documents do not say which a link's ACL sync
        made, and the server's links are not read from here."""
        return None

    def remove(self, filters: Iterable[AclFilter]) -> list[AclBinding]:
        gone: list[AclBinding] = []
        for flt in filters:
            for doc in self.client.delete_acls(filter_params(flt, every_enum=True)):
                b = acl_binding(doc)
                if b not in gone:
                    gone.append(b)
        return gone
