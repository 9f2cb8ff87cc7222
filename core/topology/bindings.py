"""Where a topology's clusters live on live servers: :func:`live_bindings` resolves the
``[clusters.<name>]`` bindings (``server = ...`` / ``context = ...``, natscli's other
connection keys; resolved by :mod:`.targets`) into :class:`Binding` values and names their
problems before anything is connected; :func:`bound_clusters` is the same for ``jetlink
export --from FILE``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import JetlinkError
from .checks import validate_topology
from .load import Topology
from .model import DEFAULT_CLUSTER, KAFKA_KINDS, Problem
from .targets import (
    Binding,
    _in_domain,
    resolve_binding,
    same_jetstream,
    target_table,
    unreachable_origins,
)

__all__ = ["Binding", "bound_clusters", "live_bindings", "resolve_binding", "target_table"]

def live_bindings(topo: Topology, default: Any = None, environ: Any = None
                  ) -> tuple[dict[str, Binding], list[Problem]]:
    """Where each cluster of ``topo`` lives on a live server, and the problems that keep
    it from being planned there (nothing is connected yet).

    A cluster with ``server`` / ``context`` is bound to that server. A cluster without:
    with a server in force (``default``), ``local`` (objects without ``cluster``) is that
    server's own JetStream (its --js-domain) and any other cluster NAME is the JetStream
    domain NAME through that server; without one, it is a problem (a file is applied to
    live servers or to the data directory, never to both). Kafka clusters and objects,
    two clusters on one JetStream, and a stream reaching into another cluster bound without
    a JetStream domain are problems."""
    problems: list[Problem] = []
    used: dict[str, str] = {}  # cluster -> the file naming it first
    for name, declared in topo.clusters.items():
        used.setdefault(name, declared.file)
    for obj in topo.objects:
        used.setdefault(obj.cluster, obj.file)
    bindings: dict[str, Binding] = {}
    broken = {p.object for p in topo.problems}
    for name, file in used.items():
        c = topo.clusters.get(name)
        label = f"cluster {name}"
        if label in broken:
            continue  # its table has problems of its own (a bad server URL...)
        if c is not None and c.kind == "kafka":
            problems.append(Problem(file, label, "kind", 0,
                                    f'cluster "{name}" is a kafka cluster: a file applied to '
                                    "live NATS servers declares NATS clusters only (apply "
                                    "Kafka clusters to the data directory, from a file of "
                                    "their own)"))
            continue
        if c is not None and c.bound:
            try:
                target = resolve_binding(c, environ)
            except JetlinkError as err:
                problems.append(Problem(file, label, err.field or "context", 0,
                                        err.description))
                continue
            table = {k: v for k, v in c.to_table().items() if k not in ("kind", "description")}
            bindings[name] = Binding(name, target, table, file, c.description)
        elif c is not None and c.binding:
            continue  # its server key is broken: reported with the file's problems
        elif default is not None:
            target = default if name == DEFAULT_CLUSTER else _in_domain(default, name)
            b = Binding(name, target, {}, file, c.description if c is not None else "")
            b.table = target_table(target, b.domain)
            bindings[name] = b
        else:
            problems.append(Problem(file, label, "server", 0,
                                    f'cluster "{name}" is not bound to a server: in a file '
                                    "that binds clusters to live servers every cluster needs "
                                    'server = "nats://host:port" or context = "NAME" (or a '
                                    "server in force: --server, NATS_URL, a context)"))
    for obj in topo.objects:
        if obj.kind in KAFKA_KINDS:
            c = topo.clusters.get(obj.cluster)
            if c is None or not (c.bound or c.kind == "kafka"):
                problems.append(Problem(obj.file, obj.label, "cluster", 0,
                                        f"{obj.label}: Kafka objects can not be applied to a "
                                        "live NATS server (they live in kafka clusters of the "
                                        "data directory)"))
    problems += same_jetstream(bindings)
    problems += unreachable_origins(topo, bindings)
    return bindings, problems


def bound_clusters(topo: Topology, only: Sequence[str] | None = None
                   ) -> tuple[dict[str, Binding], list[Problem]]:
    """The clusters ``topo`` binds to servers (those named in ``only`` when given), for
    ``jetlink export --from FILE``: (bindings, problems of the file's clusters and of the
    bindings). The file's objects play no part."""
    problems = [p for p in validate_topology(topo)
                if p.object is None or p.object.startswith("cluster ")]
    if problems:
        return {}, problems
    wanted = Topology()
    for name, c in topo.clusters.items():
        if c.bound and (not only or name in only):
            wanted.clusters[name] = c
    return live_bindings(wanted)
