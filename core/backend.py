"""What a command acts on: the embedded engine's data directory or a live nats-server.

:class:`Backend` is the one seam between the commands (the CLI, the dashboard, ``serve``,
``apply``) and the two implementations of JetStream: :class:`EmbeddedBackend` (the clusters of
a data directory, core/store) and :class:`LiveBackend` (one connection to a nats-server, its
JetStream domains, core/live). It hands out the JetStream API (core/api.py), Key-Value
(core/kv.py), the place a mirror is promoted (core/dr ``Site``) and its consumer positions, the
data directory itself for the verbs that only exist on the embedded engine, and the planner of
a topology file (core/topology/plan.py). It owns what it opened: :meth:`Backend.close` ends
the command, after the post-write replication step on the embedded engine (core/step.py
``bounded_step``: a message published to an origin is in its mirrors when the command
returns; a live server replicates by itself).

This is the only module that knows which of the two it is; every caller asks the backend.
Nothing is opened before it is used: a backend costs nothing until a command calls it, and
nats-py is imported only when a live server is in force.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .errors import JetlinkError, UsageError

if TYPE_CHECKING:  # pragma: no cover
    from .api import JetStreamAPI
    from .clock import Clock
    from .dr.positions import PositionStore
    from .kv import KV
    from .store import DataDir
    from .topology import Topology

__all__ = ["Backend", "EmbeddedBackend", "LiveBackend", "open_backend", "topo_binds_servers"]

T = TypeVar("T")


class Backend(ABC):
    """One command's view of JetStream: embedded or live (this module's opening)."""

    #: jetlink's own replication runs here (a live server replicates by itself)
    replicates: bool
    #: where the command acts, for messages (the data directory or the server URL)
    label: str
    #: how many independent objects one command may work on at once (core/dr/region.py):
    #: the embedded engine's SQLite connections belong to their thread, a live connection
    #: takes requests from any thread
    parallel: int = 1

    @abstractmethod
    def addressing(self, cluster: str) -> str:
        """The global options a ``jetlink`` command line gives to act where this backend
        acts on ``cluster`` (an equivalent command shown to a user)."""

    @abstractmethod
    def place(self, cluster: str) -> str:
        """Where ``cluster`` is, in words (``cluster east``; a live server: its URL)."""

    @abstractmethod
    def jetstream(self, cluster: str | None = None) -> JetStreamAPI:
        """The JetStream API of ``cluster`` (embedded: a cluster of the data directory,
        default the addressed one; live: the server's own domain, ``cluster`` ignored)."""

    @abstractmethod
    def kv(self, cluster: str | None = None, *, what: str = "Key-Value buckets") -> KV:
        """Key-Value over the same choice as :meth:`jetstream` (``what`` needs it: named when
        the cluster is of the other kind)."""

    @abstractmethod
    def site(self, cluster: str | None = None) -> Any:
        """Where a mirror of ``cluster`` is promoted (core/dr/rules.py ``Site``)."""

    def positions(self, cluster: str | None = None) -> PositionStore:
        """The consumer positions bucket of the addressed side (core/dr/positions.py)."""
        from .dr.positions import PositionStore

        return PositionStore(self.kv(cluster, what="mirrors and their consumer positions"))

    @abstractmethod
    def data_dir(self, what: str, *, step: bool = True) -> DataDir:
        """The data directory, for ``what`` (a verb, a key of the dashboard) that works on
        the embedded engine only: a live backend refuses with a sentence naming ``what``.
        ``step=False``: no post-write step at :meth:`close` (the caller pumps itself)."""

    @abstractmethod
    def check_space(self, count: int, msg_bytes: int) -> None:
        """Refuse ``count`` messages of ``msg_bytes`` the store has no room for (embedded
        only: a server answers for its own storage)."""

    @abstractmethod
    def planner(self, topo: Topology, *, live_only: bool = False) -> tuple[Any, list[Any]]:
        """Where a topology file is planned and applied (core/topology/plan.py): the
        file's bound servers, the server in force, else the data directory (``live_only``:
        a UsageError instead). Returns ``(planner, problems)``; with problems the planner
        is None (nothing connected)."""

    @abstractmethod
    def export_source(self, domains: Sequence[str]) -> Any:
        """What ``jetlink export`` reads from a server in force (its JetStream, or the
        JetStream domains ``domains`` as clusters); None on the embedded engine (the data
        directory is read instead)."""

    def address(self, cluster: str) -> None:
        """Address ``cluster`` from now on (embedded: a cluster of the data directory; a
        live server has one JetStream domain in force: nothing changes)."""
        return None

    def holders(self, name: str, kind: str = "stream") -> list[str]:
        """The other places that hold a ``kind`` ("stream", or a Kafka "link", "topic" or
        "group") named ``name``, for a "not found" where the command looked (a forgotten
        ``--cluster``): embedded, the data directory's other clusters of that kind; a live
        server's domains are not listed by it: none."""
        return []

    @abstractmethod
    def either(self, *, data_dir: Callable[[DataDir], T], server: Callable[[JetStreamAPI], T]
               ) -> T:
        """``data_dir(the data directory)`` on the embedded engine, ``server(its JetStream
        API)`` on a live server: for a view whose shape differs between the two (the
        dashboard's snapshot: every cluster of a directory, or one server's domain)."""

    def step(self) -> list[Any]:
        """The post-write replication step (embedded: one bounded step of every agreement
        and link when the command wrote; its AgreementReports). A live server replicates by
        itself: nothing."""
        return []

    @abstractmethod
    def close(self, *, step: bool = True) -> None:
        """Run the post-write step (when enabled and ``step``) and release everything
        opened."""

    def gone(self) -> str | None:
        """A sentence when what this backend opened was removed under it (an embedded
        cluster's database, the data directory: what its connections write then goes
        where no path leads), for a command that runs until stopped; None otherwise (a
        live server: a lost connection is an error of its own)."""
        return None

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()  # a command that wrote and then failed still ends with the step


class EmbeddedBackend(Backend):
    """The clusters of a data directory (core/store DataDir), opened on first use.

    ``cluster`` is the addressed one (``--cluster``); ``clock`` is called for the clock of
    each engine call (tests give a manual one); ``create=False`` (or a callable answering
    it when the directory is first opened) for a command that only reads: opening creates
    neither the directory nor the default cluster;
    ``on_step_error`` receives a failure of the post-write step (which never fails the
    command); ``step=False``: no post-write step (``jetlink replicate`` pumps itself, the
    dashboard's step action is that step)."""

    replicates = True

    def addressing(self, cluster: str) -> str:
        return f"--cluster {cluster}"

    def place(self, cluster: str) -> str:
        return f"cluster {cluster}"

    def __init__(self, path: Path, cluster: str, clock: Callable[[], Clock], *,
                 create: bool | Callable[[], bool] = True,
                 step: bool | Callable[[], bool] = True,
                 on_step_error: Callable[[Exception], Any] | None = None,
                 store: DataDir | None = None) -> None:
        self.path = Path(path)
        self.label = str(self.path)
        self.cluster = cluster
        self._clock = clock
        self.create = create
        self.step_enabled = step
        self.on_step_error = on_step_error
        self._store = store

    # -- the data directory ------------------------------------------------------------------
    @property
    def store(self) -> DataDir:
        if self._store is None:
            from .store import DataDir

            create = self.create() if callable(self.create) else self.create
            self._store = DataDir(self.path, create=create, lazy_local=True)
        return self._store

    def address(self, cluster: str) -> None:
        self.cluster = cluster

    def either(self, *, data_dir: Callable[[DataDir], T], server: Callable[[JetStreamAPI], T]
               ) -> T:
        return data_dir(self.store)

    def holders(self, name: str, kind: str = "stream") -> list[str]:
        store = self.store
        if not store.path.is_dir():
            return []
        out = []
        for cluster in store.cluster_names():
            if cluster == self.cluster:
                continue
            try:
                cl = store.open(cluster, create_local=False)
                if _holds(store, cl, name, kind, self._clock()):
                    out.append(cluster)
            except JetlinkError:  # a hint only: a damaged cluster holds none
                continue
        return out

    def data_dir(self, what: str = "", *, step: bool = True) -> DataDir:
        if not step:
            self.step_enabled = False
        return self.store

    def gone(self) -> str | None:
        return None if self._store is None else self._store.gone()

    def check_space(self, count: int, msg_bytes: int) -> None:
        from .counts import check_space

        check_space(count, msg_bytes, self.path)

    # -- the APIs ----------------------------------------------------------------------------
    def jetstream(self, cluster: str | None = None) -> JetStreamAPI:
        from .jetstream import JetStream

        name = self.cluster if cluster is None else cluster
        return JetStream(self.store.open_kind(name, "nats", "streams"), self._clock())

    def kv(self, cluster: str | None = None, *, what: str = "Key-Value buckets") -> KV:
        from .kv import KV

        name = self.cluster if cluster is None else cluster
        self.store.open_kind(name, "nats", what)
        return KV(self.store, name, self._clock())

    def site(self, cluster: str | None = None) -> Any:
        from .dr.embedded import EmbeddedSite

        return EmbeddedSite(self.store, self.cluster if cluster is None else cluster,
                            self._clock())

    def planner(self, topo: Topology, *, live_only: bool = False) -> tuple[Any, list[Any]]:
        from .topology.embedded import EmbeddedClusters
        from .topology.live import open_live

        if topo_binds_servers(topo):
            return open_live(topo, None)
        if live_only:
            raise UsageError(
                "--live needs a file whose clusters are bound to servers (server = "
                '"nats://..." or context = "NAME" in [clusters.<name>]) or a server in force '
                "(--server, NATS_URL, a context)")
        return EmbeddedClusters(self.store, self._clock()), []

    def export_source(self, domains: Sequence[str]) -> Any:
        return None

    # -- the end of a command ----------------------------------------------------------------
    def step(self) -> list[Any]:
        if self._store is None or not self._store.wrote():
            return []
        from .step import bounded_step  # only after a write: reads import no pump

        def on_error(err: Exception) -> None:
            if self.on_step_error is not None:
                self.on_step_error(err)

        return bounded_step(self._store, self._clock(), on_error)[0]

    def close(self, *, step: bool = True) -> None:
        store, self._store = self._store, None
        if store is None:
            return
        try:
            enabled = self.step_enabled() if callable(self.step_enabled) \
                else self.step_enabled  # (a dry run's: never, answered when it ends)
            if enabled and step:
                self._store = store
                try:
                    self.step()
                finally:
                    self._store = None
        finally:
            store.close()


class LiveBackend(Backend):
    """A nats-server (core/live/target.py ServerTarget): one connection, made on first
    use (a LiveError, one line, when the server does not answer) and closed by
    :meth:`close`."""

    replicates = False
    parallel = 8

    def addressing(self, cluster: str) -> str:
        t = self.target
        return f"-s {t.shown_url}" + (f" --js-domain {t.js_domain}" if t.js_domain else
                                      f" --js-api-prefix {t.js_api_prefix}"
                                      if t.js_api_prefix else "")

    def place(self, cluster: str) -> str:
        return f"the server {self.label}"

    def __init__(self, target: Any, *, on_connect: Callable[[], Any] | None = None) -> None:
        self.target = target
        # called once, when the command first reaches the server (a notice of what the
        # command line gave that the server does not use)
        self._on_connect = on_connect
        # what was looked at: the server, and the JetStream domain (or API prefix) in force
        place = (f"domain {target.js_domain} on " if target.js_domain else
                 f"API {target.js_api_prefix} on " if target.js_api_prefix else "")
        self.label = f"{place}{target.shown_url}"
        self._js: Any = None

    def _live(self) -> Any:
        if self._js is None:
            from .live.client import connect
            from .live.jetstream import LiveJetStream

            self._js = LiveJetStream(connect(self.target))
            said, self._on_connect = self._on_connect, None
            if said is not None:
                said()
        return self._js

    def jetstream(self, cluster: str | None = None) -> JetStreamAPI:
        js: JetStreamAPI = self._live()
        return js

    def kv(self, cluster: str | None = None, *, what: str = "Key-Value buckets") -> KV:
        from .kv import KV
        from .live.jetstream import LiveDomains

        return KV.over(LiveDomains(self._live()), self.target.js_domain or "")

    def site(self, cluster: str | None = None) -> Any:
        from .dr.live import LiveSite

        return LiveSite(self._live(), kv=domain_kv)

    def data_dir(self, what: str, *, step: bool = True) -> DataDir:
        raise JetlinkError(
            f"{what} works on the embedded engine's data directory: it is not available with "
            f"a live server ({self.target.shown_url} from {self.target.origin}); leave out the "
            "server settings to use the embedded engine", field="server")

    def check_space(self, count: int, msg_bytes: int) -> None:
        return None  # the server answers for its own storage

    def either(self, *, data_dir: Callable[[DataDir], T], server: Callable[[JetStreamAPI], T]
               ) -> T:
        return server(self.jetstream())

    def planner(self, topo: Topology, *, live_only: bool = False) -> tuple[Any, list[Any]]:
        from .topology.live import open_live

        return open_live(topo, self.target)

    def export_source(self, domains: Sequence[str]) -> Any:
        from .topology.live import LiveClusters

        return LiveClusters.for_target(self.target, domains)

    def close(self, *, step: bool = True) -> None:
        js, self._js = self._js, None
        if js is not None:
            js.close()


def domain_kv(js: Any, domain: str) -> KV:
    """Key-Value of the JetStream domain ``domain`` whose API is ``js`` (a live site's
    ``kv``: jetlink's own records on either side of a failback)."""
    from .kv import KV
    from .live.jetstream import LiveDomains

    return KV.over(LiveDomains(js), domain)


def topo_binds_servers(topo: Topology) -> bool:
    """Does the topology file bind any cluster to a live server (``server`` / ``context``
    in ``[clusters.<name>]``)? Its clusters are then planned on those servers."""
    return any(c.bound for c in topo.clusters.values())


def open_backend(target: Any, path: Path, cluster: str, clock: Callable[[], Clock], *,
                 create: bool | Callable[[], bool] = True,
                 step: bool | Callable[[], bool] = True,
                 on_step_error: Callable[[Exception], Any] | None = None,
                 on_connect: Callable[[], Any] | None = None) -> Backend:
    """The backend of a server in force (``target``, core/live/settings.py
    ``resolve_target``; ``on_connect`` called when it is first reached), else of the data
    directory ``path`` (addressed cluster ``cluster``); nothing is opened yet."""
    if target is not None:
        return LiveBackend(target, on_connect=on_connect)
    return EmbeddedBackend(path, cluster, clock, create=create, step=step,
                           on_step_error=on_step_error)


def _holds(store: DataDir, cl: Any, name: str, kind: str, clock: Clock) -> bool:
    """Whether cluster ``cl`` holds a ``kind`` named ``name`` (Backend.holders)."""
    if kind == "stream":
        from .jetstream import JetStream

        return cl.kind == "nats" and name in JetStream(cl, clock).stream_names()
    if cl.kind != "kafka":
        return False
    if kind == "link":
        from .kafka.links import Links

        return name in Links(store, cl, clock).names()
    from .kafka.topics import Kafka

    kafka = Kafka(cl, clock)
    if kind == "topic":
        return kafka.has_topic(name)
    return kind == "group" and any(g.group == name for g in kafka.groups())
