"""Where a topology's clusters live on live servers: :func:`live_bindings` resolves the
``[clusters.<name>]`` bindings (``server = ...`` / ``context = ...``, natscli's other
connection keys) through core/contexts.py and core/live/settings.py into :class:`Binding`
values and names their problems before anything is connected; :func:`bound_clusters` is the
same for ``jetlink export --from FILE``; :func:`target_table` is the table export writes for
a server.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import JetlinkError
from .checks import validate_topology
from .load import Topology
from .model import DEFAULT_CLUSTER, KAFKA_KINDS, Problem, kv_field

__all__ = ["Binding", "bound_clusters", "live_bindings", "resolve_binding", "target_table"]

_DOMAIN_API = re.compile(r"^\$JS\.([A-Za-z0-9_-]+)\.API$")
# ServerTarget field -> the [clusters.<name>] key (core/topology/ BINDING_KEYS)
_TARGET_KEYS = {"servers": "server", "js_domain": "js_domain", "user": "user",
                "password": "password", "token": "token", "creds": "creds", "nkey": "nkey",
                "tls_cert": "tls_cert", "tls_key": "tls_key", "tls_ca": "tls_ca",
                "tls_first": "tls_first", "timeout": "timeout"}


@dataclass
class Binding:
    """A cluster of a topology bound to a live server: the connection settings resolved
    (core/live/target.py ServerTarget) and the ``[clusters.<name>]`` table that says so
    (what export writes)."""

    cluster: str
    target: Any  # ServerTarget
    table: dict[str, Any]
    file: str = ""
    # the file's description of the cluster: a server holds none, so the file's is the
    # cluster's own (what a plan compares and export --from writes)
    description: str = ""

    @property
    def domain(self) -> str | None:
        """The JetStream domain of the cluster (None: the server's own JetStream, named by
        no domain)."""
        if self.target.js_api_prefix:
            m = _DOMAIN_API.match(self.target.js_api_prefix.rstrip("."))
            return m.group(1) if m else None
        return self.target.js_domain or None

    @property
    def connection_key(self) -> Any:
        """Bindings with the same key share one connection (they differ in domain only)."""
        return dataclasses.replace(self.target, js_domain=None, js_api_prefix=None, origin="")

    @property
    def where(self) -> str:
        d = self.domain
        return self.target.shown_url + (f", JetStream domain {d}" if d else "")


def _binding_env(environ: Any) -> dict[str, str]:
    """The environment a file's binding is resolved in: natscli's variables (NATS_URL,
    NATS_CONTEXT, NATS_USER...) left out, so the file alone says where each cluster is."""
    import os

    env = os.environ if environ is None else environ
    return {k: v for k, v in env.items() if not k.startswith("NATS_")}


def resolve_binding(cluster: Any, environ: Any = None) -> Any:
    """The ServerTarget of a bound cluster (core/topology/ Cluster): ``context = NAME``
    is the jetlink context NAME (core/contexts.py), else the natscli context NAME
    (core/live/settings.py); the table's other keys override the context's settings, as
    the command line options override a context's. JetlinkError (one sentence naming the
    cluster) when the context does not exist or gives no server."""
    from ..contexts import NAME_RE, ContextStore, config_dir
    from ..errors import NotFoundError
    from ..live.settings import nats_context_path, resolve_target

    env = _binding_env(environ)
    b = cluster.binding
    where = f"[clusters.{cluster.name}]"
    options = {fld: b.get(key) for fld, key in _TARGET_KEYS.items()}
    jetlink_ctx = None
    nats_ctx = None
    name = b.get("context")
    if name:
        store = ContextStore(config_dir(env))
        found = False
        if NAME_RE.fullmatch(name):
            try:
                jetlink_ctx = store.load(name)
                found = True
            except NotFoundError:
                pass
            except JetlinkError as err:
                raise JetlinkError(f"{where} context = {name!r}: {err.description}",
                                   field="context") from None
        if not found:
            nats_ctx = name
            file = nats_context_path(name, env)
            if not file.is_file():
                raise JetlinkError(
                    f"{where} context = {name!r}: no such context: neither a jetlink context "
                    f"({store.context_dir}) nor a natscli context ({file.parent})",
                    field="context")
    try:
        target = resolve_target(options, env, jetlink_ctx, nats_ctx)
    except JetlinkError as err:
        raise JetlinkError(f"{where}: {err.description}", field=err.field or "server") from None
    if target is None:
        raise JetlinkError(f"{where} context = {name!r} gives no server URL: add server = "
                           '"nats://host:port"', field="context")
    return dataclasses.replace(target, origin=f"{where} of {cluster.file}")


def target_table(target: Any, domain: str | None) -> dict[str, Any]:
    """The ``[clusters.<name>]`` keys binding a cluster to ``target`` (what export writes):
    ``context = NAME`` when the server came from a context, else ``server`` and the file
    settings (credentials, TLS files); passwords and tokens are never written."""
    source = (target.sources or {}).get("servers", "")
    m = re.match(r"^(?:jetlink|natscli) context (\S+)", source)
    out: dict[str, Any] = {}
    if m:
        out["context"] = m.group(1)
    else:
        out["server"] = target.url
        for fld in ("creds", "nkey", "tls_cert", "tls_key", "tls_ca"):
            if getattr(target, fld):
                out[fld] = getattr(target, fld)
        if target.tls_first:
            out["tls_first"] = True
    if domain:
        out["js_domain"] = domain
    return out


def _in_domain(target: Any, domain: str | None) -> Any:
    return dataclasses.replace(target, js_domain=domain or None, js_api_prefix=None)


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
    seen: dict[Any, str] = {}
    for name, b in bindings.items():
        key = (b.connection_key, b.target.api_prefix)
        if key in seen:
            problems.append(Problem(b.file, f"cluster {name}", "js_domain", 0,
                                    f'cluster "{name}" is bound to the same JetStream as '
                                    f'cluster "{seen[key]}" ({b.where}): each cluster of a '
                                    "file is a JetStream of its own; give each its own "
                                    "js_domain"))
        else:
            seen[key] = name
    for obj in topo.objects:
        for origin in obj.origins:
            if origin.cluster is None or origin.cluster == obj.cluster:
                continue
            bound = bindings.get(origin.cluster)
            if bound is None or bound.domain is not None:
                continue
            fld = (f"{origin.field}.domain" if obj.kind == "stream"
                   else kv_field(obj.kind, f"{origin.field}.external"))
            problems.append(Problem(obj.file, obj.label, fld, 0,
                                    f'origin "{origin.name}" in cluster "{origin.cluster}": '
                                    f"that cluster is bound to {bound.target.shown_url} without a "
                                    f'JetStream domain, so a stream of cluster "{obj.cluster}" '
                                    "can not reach it (set js_domain in "
                                    f"[clusters.{origin.cluster}])"))
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
