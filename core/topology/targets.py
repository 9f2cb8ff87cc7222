"""A bound cluster's server: ``[clusters.<name>]`` ``server = ...`` / ``context = ...`` (and
natscli's other connection keys) resolved through core/contexts.py and core/live/settings.py
into a :class:`Binding` (:func:`resolve_binding`, nothing connected); :func:`target_table`
is the table export writes for a server; :func:`same_jetstream` the rule that two clusters
of one topology are two JetStreams and :func:`unreachable_origins` that an origin in another
cluster needs its JetStream domain, over the bindings the files give (:func:`file_bindings`,
``validate``) or resolved (``apply``, ``validate --live``; once connected, as the servers
answer: core/topology/live.py).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import JetlinkError
from ..live.target import split_userinfo
from .model import Problem

__all__ = ["Binding", "file_bindings", "resolve_binding", "same_jetstream", "target_table",
           "unreachable_origins"]

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
    # what the file's table set, named so in a refusal ("check --js-domain (from js_domain
    # in [clusters.west] of t.toml)"), not as the command-line flag nobody gave
    given = {fld: f"{key} in {where} of {cluster.file}" for fld, key in _TARGET_KEYS.items()
             if b.get(key) is not None}
    return dataclasses.replace(target, origin=f"{where} of {cluster.file}",
                               sources={**(target.sources or {}), **given})


def target_table(target: Any, domain: str | None) -> dict[str, Any]:
    """The ``[clusters.<name>]`` keys binding a cluster to ``target`` (what export writes):
    ``context = NAME`` when the server came from a context, else ``server`` and the file
    settings (credentials, TLS files); passwords and tokens are never written: not as keys,
    nor in the server URLs (``user:password@`` gives ``user`` only; :func:`withheld` names
    what was left out)."""
    context = _server_context(target)
    out: dict[str, Any] = {}
    if context is not None:
        out["context"] = context
    else:
        parts = [split_userinfo(s) for s in target.servers]
        out["server"] = ",".join(f"{scheme}{host}" for scheme, _, host in parts)
        user = target.user if target.password else next(
            (u.partition(":")[0] for _, u, _ in parts if ":" in u), None)
        if user:  # (a user without a password is a token, natscli's reading)
            out["user"] = user
        for fld in ("creds", "nkey", "tls_cert", "tls_key", "tls_ca"):
            if getattr(target, fld):  # (absolute: the file applies from any directory)
                out[fld] = os.path.abspath(os.path.expanduser(getattr(target, fld)))
        if target.tls_first:
            out["tls_first"] = True
    if domain:
        out["js_domain"] = domain
    return out


def _server_context(target: Any) -> str | None:
    """The name of the context (jetlink's or natscli's) ``target``'s server came from; None
    when it came from elsewhere (an option, an environment variable)."""
    m = re.match(r"^(?:jetlink|natscli) context (\S+)", (target.sources or {}).get("servers", ""))
    return m.group(1) if m else None


def table_without_secrets(table: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A ``[clusters.<name>]`` table as a file gives it (``export --from`` copies it), with
    what :func:`target_table` never writes taken out: ``password`` and ``token`` keys, and
    a server URL's ``user:password@`` (its user kept as ``user`` when the table has none)
    or ``token@``; the secrets left out, named as :func:`withheld` names them."""
    out = dict(table)
    left: list[str] = [k for k in ("password", "token") if out.pop(k, None) is not None]
    if isinstance(out.get("server"), str):
        parts = [split_userinfo(s.strip()) for s in out["server"].split(",")]
        infos = [u for _, u, _ in parts if u]
        if infos:
            out["server"] = ",".join(f"{scheme}{host}" for scheme, _, host in parts)
            user = next((u.partition(":")[0] for u in infos if ":" in u), None)
            if user and "user" not in out:
                out["user"] = user
            left += ["password"] if any(":" in u for u in infos) else []
            left += ["token"] if any(":" not in u for u in infos) else []
    return out, sorted(set(left), key=("password", "token").index)


def withheld(target: Any) -> list[str]:
    """The secrets :func:`target_table` leaves out of a binding it writes (``password``,
    ``token``): what ``apply`` of the file needs given again (a ``password`` / ``token``
    key, or a context)."""
    if _server_context(target) is not None:
        return []
    infos = [split_userinfo(s)[1] for s in target.servers]
    out = []
    if target.password or any(":" in u for u in infos):
        out.append("password")
    if target.token or (target.user and not target.password) or any(
            u and ":" not in u for u in infos):
        out.append("token")
    return out


def _in_domain(target: Any, domain: str | None) -> Any:
    return dataclasses.replace(target, js_domain=domain or None, js_api_prefix=None)


def same_jetstream(bindings: Mapping[str, Binding]) -> list[Problem]:
    """Each cluster bound to the JetStream of an earlier one (the same connection, the same
    domain or API prefix): a problem on the later one, naming both."""
    problems: list[Problem] = []
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
    return problems


def file_bindings(clusters: Mapping[str, Any], broken: set[str], environ: Any = None
                  ) -> dict[str, Binding]:
    """The clusters bound by their tables (``clusters``: name -> TopologyCluster), resolved
    as apply resolves them (contexts read, nothing connected). A cluster in ``broken`` (its
    table has problems: ``cluster NAME``) or whose binding does not resolve is left to the
    checks that name it."""
    bindings: dict[str, Binding] = {}
    for name, c in clusters.items():
        if f"cluster {name}" in broken or not c.bound or c.kind == "kafka":
            continue
        try:
            target = resolve_binding(c, environ)
        except JetlinkError:
            continue
        bindings[name] = Binding(name, target, {}, c.file)
    return bindings



def unreachable_origins(topo: Any, bindings: Mapping[str, Binding]) -> list[Problem]:
    """Each mirror or source whose origin is in another cluster bound to a server without a
    JetStream domain: a stream of one cluster reaches another's only through its domain
    (seen from the file alone: ``validate`` says it as ``apply`` does)."""
    from .model import kv_field

    problems: list[Problem] = []
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
    return problems
