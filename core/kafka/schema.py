"""The Kafka components' tables in a cluster database: who creates them, and when.

Three schema components (``Cluster.ensure_schema``): ``kafka`` (topics, records, groups:
:mod:`.topics`), ``kafka_links`` (:mod:`.links`) and ``kafka_mirrors`` (:mod:`.mirrors`).

- :func:`create_schema` creates all three at once: what adding a Kafka cluster does (its
  place is ``DataDir.add_cluster``).
- A database without them (a NATS cluster, or one made before) gets them from the first
  write of a Kafka verb, inside that write's own transaction: a refused write (invalid
  input, an unknown topic or link) rolls back and leaves the database's bytes as they were.
- A viewer (list, describe) of a database without them creates nothing: it reads an empty
  in-memory copy of the schema, so it answers as for a cluster without topics or links.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .tables import has_components

if TYPE_CHECKING:  # pragma: no cover
    from ..store import Cluster

__all__ = ["COMPONENTS", "create_schema", "has_components", "steps"]

# every Kafka component, in creation order
COMPONENTS = ("kafka", "kafka_links", "kafka_mirrors")


def steps() -> list[tuple[str, Sequence[Sequence[str]]]]:
    """(component, schema steps) of every Kafka component, in creation order."""
    from . import links, mirrors, topics

    return [(topics.COMPONENT, topics.SCHEMA_STEPS), (links.COMPONENT, links.SCHEMA_STEPS),
            (mirrors.COMPONENT, mirrors.SCHEMA_STEPS)]


def create_schema(cluster: Cluster, components: Sequence[str] = COMPONENTS) -> None:
    """Create (or bring up to date) the tables of ``components`` (default: every Kafka
    component) in ``cluster``, in one transaction (or the caller's, when one is open)."""
    with cluster.transaction():
        for component, component_steps in steps():
            if component in components:
                cluster.ensure_schema(component, component_steps)
