"""Topology as code on live servers: the clusters a file binds, as the planner reads and
changes them (:class:`LiveClusters`: a LiveJetStream per cluster, one connection per server;
:func:`open_live`).

Live, the file's cluster names in ``domain = "west"`` / ``$JS.west.API`` are translated to
the bound JetStream domains at one seam (:class:`_FileSpace`), so the planner compares and
checks everything in the file's terms; origins in domains the file does not bind are looked
up on the server. The streams are read once per plan (a paged STREAM.LIST per cluster) and
each change is one API request; a change refused by jetlink's checks or by the server stops
the run, and a lost connection marks the failed change ``uncertain`` (the server may or may
not have made it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import JetlinkError
from .apply import _apply_nats, stored_removed
from .bindings import live_bindings
from .export import stream_table
from .load import Topology
from .model import DEFAULT_CLUSTER, Problem
from .plan import NATS_KINDS, Change
from .stored import _Document, _user_config
from .targets import _DOMAIN_API, Binding, _in_domain, target_table

__all__ = ["LiveClusters", "open_live"]


def _map_domains(cfg: Any, mapping: dict[str, str | None]) -> Any:
    """``cfg`` with each origin's ``external.api = "$JS.<d>.API"`` (without ``deliver``)
    renamed per ``mapping``: d -> d2 (``$JS.d2.API``), d -> None (no external: the stream's
    own JetStream). ``cfg`` itself when nothing changes."""
    def domain(src: Any) -> str | None:
        ext = src.external
        if ext is None or ext.deliver:
            return None
        m = _DOMAIN_API.match(ext.api or "")
        return m.group(1) if m else None

    if not any(domain(s) in mapping for s in ([cfg.mirror] if cfg.mirror else []) + cfg.sources):
        return cfg
    out = cfg.copy()
    for src in ([out.mirror] if out.mirror else []) + out.sources:
        d = domain(src)
        if d is None or d not in mapping:
            continue
        new = mapping[d]
        if new is None:
            src.external = None
        else:
            src.external.api = f"$JS.{new}.API"
    return out


class _FileSpace:
    """A bound cluster's LiveJetStream as the planner sees it: origins in other clusters
    are named by the file's cluster names (``$JS.<cluster>.API``), translated to and from
    the servers' JetStream domains at this seam (the same text when a cluster is named
    after its domain). Everything else passes through."""

    def __init__(self, live: LiveClusters, js: Any, cluster: str) -> None:
        self._b, self._js, self._cluster = live, js, cluster

    def __getattr__(self, name: str) -> Any:
        return getattr(self._js, name)

    def add_stream(self, cfg: Any) -> Any:
        return self._js.add_stream(self._b.to_server(_as_config(cfg), self._cluster))

    def update_stream(self, cfg: Any) -> Any:
        return self._js.update_stream(self._b.to_server(_as_config(cfg), self._cluster))

    def stream_info(self, name: str, **kw: Any) -> Any:
        info = self._js.stream_info(name, **kw)
        info.config = self._b.to_file(info.config, self._cluster)
        return info

    def streams(self, subject: str | None = None) -> list[Any]:
        out = self._js.streams(subject)
        for info in out:
            info.config = self._b.to_file(info.config, self._cluster)
        return out


def _as_config(cfg: Any) -> Any:
    from ..config.stream import StreamConfig

    return cfg if isinstance(cfg, StreamConfig) else StreamConfig.from_json(dict(cfg))


class _KVClusters:
    """core/kv.py's clusters (``Clusters``) over the bound clusters, from ``here``: a
    cluster of the file is its binding; another name, that JetStream domain through
    ``here``'s connection."""

    def __init__(self, live: LiveClusters, here: str) -> None:
        self._b, self._here = live, here

    def js(self, name: str, *, here: bool) -> Any:
        if here or not name or name == self._here:
            return self._b.js(self._here)
        if name in self._b.bindings:
            return self._b.js(name)
        return _FileSpace(self._b, self._b.raw(self._here).in_domain(name), self._here)

    def has_cluster(self, name: str) -> bool:
        return True  # a domain that does not answer is the API's own error

    def is_down(self, name: str) -> bool:
        return False


class LiveClusters:
    """The live servers a topology's clusters are bound to, as the planner reads and
    changes them: one connection per server (clusters that differ only in JetStream domain
    share it), one LiveJetStream per cluster; the streams of every cluster read once
    (STREAM.LIST, paged) per plan; each change one API request."""

    single_server = False  # the server answers for its own replicas limit

    def __init__(self, bindings: dict[str, Binding]) -> None:
        self.bindings = bindings
        self.damaged: dict[str, Any] = {}  # (a server answers for its own storage)
        self._conns: dict[Any, Any] = {}
        self._js: dict[str, Any] = {}
        self._fs: dict[str, _FileSpace] = {}
        self._to_server_map: dict[str, str | None] = {n: b.domain for n, b in bindings.items()}
        urls = sorted({b.target.shown_url for b in bindings.values()})
        self.label = f"<{', '.join(urls) or 'live servers'}>"

    @classmethod
    def connect(cls, bindings: dict[str, Binding]) -> LiveClusters:
        """Connect to every bound server (LiveError, naming the cluster, when one does not
        answer; the connections made are closed again)."""
        from ..live.client import LiveError, connect
        from ..live.jetstream import LiveJetStream

        live = cls(bindings)
        try:
            for name, b in bindings.items():
                key = b.connection_key
                conn = live._conns.get(key)
                if conn is None:
                    try:
                        conn = live._conns[key] = connect(b.target)
                    except LiveError as err:
                        raise LiveError(f"cluster {name}: {err.description}",
                                        field=err.field) from None
                live._js[name] = LiveJetStream(conn, api_prefix=b.target.api_prefix)
        except BaseException:
            live.close()
            raise
        return live

    def shared_jetstreams(self) -> list[Problem]:
        """Each cluster whose JetStream, as the servers answer for it, is an earlier
        cluster's: the same JetStream domain (through a hub's domain prefix or on the leaf
        itself), or, without a domain, the same server or server cluster reached by another
        spelling of its URL (127.0.0.1 and localhost). The files' bindings alone
        (targets.py ``same_jetstream``) cannot see those; a plan over both would take one
        JetStream's streams for two clusters' (``--prune`` deleting what the other
        declares): a problem on the later one, naming both."""
        problems: list[Problem] = []
        seen: dict[tuple[str, str], str] = {}
        for name, b in self.bindings.items():
            js = self._js[name]
            try:
                domain = str(js.api("INFO").get("domain") or "")
            except JetlinkError:
                continue  # (the plan's own reads name a JetStream that does not answer)
            if domain:
                key = ("domain", domain)
            else:
                info = getattr(js.conn.nc, "_server_info", None) or {}
                key = ("server", str(info.get("cluster") or info.get("server_id") or ""))
                if not key[1]:
                    continue
            if key in seen:
                other = seen[key]
                what = f"JetStream domain {key[1]}" if key[0] == "domain" else \
                    f"server {key[1]}"
                problems.append(Problem(
                    b.file, f"cluster {name}", "js_domain" if key[0] == "domain" else "server",
                    0, f'cluster "{name}" ({b.where}) reaches the same JetStream as cluster '
                    f'"{other}" ({self.bindings[other].where}): {what}; each cluster of a file '
                    "is a JetStream of its own: bind each to its own server or js_domain"))
            else:
                seen[key] = name
        return problems

    @classmethod
    def for_target(cls, target: Any, domains: Sequence[str] = ()) -> LiveClusters:
        """The server in force as clusters: each of ``domains`` as the cluster of that
        name; without, the target's own JetStream as one cluster, named after its domain
        (``--js-domain``, else the one the server reports) or ``local``. A domain given that
        is that name is the target's own JetStream too (``export -c local`` of a server
        without a domain: what plain export writes, and apply binds ``local`` to)."""
        from ..live.client import connect
        from ..live.jetstream import LiveJetStream

        conn = connect(target)
        try:
            own = Binding("", target, {}).domain
            if own is None and not target.js_api_prefix:
                own = LiveJetStream(conn).api("INFO").get("domain") or None
            names: list[str | None] = list(dict.fromkeys(domains)) if domains else [own]
            bindings = {}
            for d in names:
                if domains and d == (own or DEFAULT_CLUSTER):
                    d = own  # (the target's own JetStream, under the name export gives it)
                t = _in_domain(target, d) if d else target
                b = Binding(d or DEFAULT_CLUSTER, t, target_table(t, d))
                bindings[b.cluster] = b
            live = cls(bindings)
            live._conns[next(iter(bindings.values())).connection_key] = conn
            for name, b in bindings.items():
                live._js[name] = LiveJetStream(conn, api_prefix=b.target.api_prefix)
        except BaseException:
            conn.close()
            raise
        return live

    def close(self) -> None:
        conns, self._conns = list(self._conns.values()), {}
        for conn in conns:
            conn.close()

    # -- the domains' names ------------------------------------------------------------------
    def to_server(self, cfg: Any, cluster: str) -> Any:
        """A config of the file (origins by cluster) as the server takes it (by domain)."""
        mapping = {name: (d if d is not None else (None if name == cluster else name))
                   for name, d in self._to_server_map.items()}
        return _map_domains(cfg, {k: v for k, v in mapping.items() if v != k})

    def to_file(self, cfg: Any, cluster: str) -> Any:
        """A config the server holds (origins by domain) with the file's cluster names:
        clusters on the same connection first."""
        mine = self.bindings[cluster].connection_key if cluster in self.bindings else None
        mapping: dict[str, str | None] = {}
        for same in (False, True):
            for name, b in self.bindings.items():
                if b.domain is not None and (b.connection_key == mine) == same:
                    mapping[b.domain] = name
        return _map_domains(cfg, {k: v for k, v in mapping.items() if v != k})

    def raw(self, cluster: str) -> Any:
        return self._js[cluster]

    def js(self, cluster: str) -> _FileSpace:
        fs = self._fs.get(cluster)
        if fs is None:
            fs = self._fs[cluster] = _FileSpace(self, self._js[cluster], cluster)
        return fs

    # -- the planner's calls -----------------------------------------------------------------
    def read(self, clusters: Sequence[str] | None = None, *,
             stored: dict[tuple[str, str], Any] | None = None, minimal: bool = True
             ) -> dict[str, Any]:
        """The bound clusters' streams and KV objects as a document (the bindings in the
        cluster tables), read with one paged STREAM.LIST per cluster."""
        out = _Document()
        for name, b in self.bindings.items():
            if clusters and name not in clusters:
                continue
            out.cluster(name, {"kind": "nats", **({"description": b.description}
                                                  if b.description else {}), **b.table})
            for info in self.js(name).streams():
                if stored is not None:
                    stored[(name, info.config.name)] = info.config
                out.stream(name, info.config, minimal=minimal)
        return out.finish()

    def complete(self, state: Topology) -> None:
        """Origins in JetStream domains no cluster of the file is bound to: looked up on
        the server of the stream that names them, and added to ``state`` when found (an
        origin neither in the file nor on the server stays missing)."""
        from ..errors import JetlinkError as _Err

        looked: set[tuple[str, str]] = set()
        for obj in list(state.objects):
            if obj.cluster not in self._js:
                continue
            for origin in obj.origins:
                oc = origin.cluster
                if oc is None or oc in self.bindings:
                    continue
                key = (oc, origin.name)
                if key in state.streams or key in looked:
                    continue
                looked.add(key)
                js = _FileSpace(self, self.raw(obj.cluster).in_domain(oc), obj.cluster)
                try:
                    info = js.stream_info(origin.name)
                except _Err:
                    continue  # not there, or the domain does not answer: missing
                cfg = _user_config(info.config)
                found = Topology()
                found.add_document({"version": 1, "streams": {
                    cfg.name: {"cluster": oc, **stream_table(cfg)}}},
                    f"<{self.raw(obj.cluster).where}, JetStream domain {oc}>")
                for o in found.objects:
                    o.explicit_cluster = False
                    state.adopt(o)

    def relevant(self, problems: list[Problem]) -> list[Problem]:
        """A server's own stream whose origin is missing is the server's state, not the
        file's doing: left out (every other problem stands)."""
        return [p for p in problems if not (p.file == self.label and p.err_code == 10059)]

    def limits(self, changes: list[Change]) -> list[Problem]:
        return []  # the server answers for itself (replicas on a single server: 10074)

    def apply(self, change: Change) -> None:
        from ..kv import KV

        c = change
        if c.kind not in NATS_KINDS:  # never planned: live clusters hold NATS objects only
            raise JetlinkError(f"{c.label}: not a NATS object")
        _apply_nats(self.js(c.cluster), KV.over(_KVClusters(self, c.cluster), c.cluster), c)

    def consumer_limits(self, cluster: str, stream: str) -> list[tuple[str, int, int]]:
        """Each consumer of ``stream`` as a consumer-limits change is checked against."""
        from .stored import consumer_limits

        return consumer_limits(self.js(cluster), stream)

    def removes(self, change: Change) -> str:
        """What a stream or bucket update removes of what the server stores (apply.py)."""
        import time

        return stored_removed(self.js(change.cluster), change, time.time_ns())

    def uncertain(self, err: JetlinkError) -> bool:
        """A connection failure (not the server's answer): the change may have been made."""
        from ..live.client import LiveError

        return isinstance(err, LiveError)



def open_live(topo: Topology, default: Any = None, environ: Any = None
              ) -> tuple[LiveClusters | None, list[Problem]]:
    """The live clusters of a topology (its bound clusters, or the server in force
    ``default``): (None, problems) when the bindings have problems (nothing connected),
    else (the connected clusters, []). LiveError when a server does not answer."""
    bindings, problems = live_bindings(topo, default, environ)
    if problems:
        return None, problems
    live = LiveClusters.connect(bindings)
    shared = live.shared_jetstreams()
    if shared:
        live.close()
        return None, shared
    return live, []
