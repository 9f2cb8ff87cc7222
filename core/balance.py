"""Spreading the leaders of clustered streams or consumers evenly over their servers
(natscli's ``stream cluster balance`` and ``consumer cluster balance``: jsm.go's balancer).

Per cluster, the groups are counted per server leading them; every server of a group (its
leader and replicas) is a peer of the cluster. The even share of a server is the groups over
the peers when that divides exactly, else ``ceil(groups / peers + 0.5)`` (jsm.go's
``calcClusterDistribution``: a server may lead one or two more than the mean before it is
moved). A server's offset is what it leads over its share. For up to five rounds, each server
over its share hands groups, picked at random, to a peer under its share that is in the
group's peer set and not already its leader: a step-down with that peer preferred (2.11's
placement hint). A group whose state cannot be read, or no peer can take, is passed over; a
step-down that fails is passed over once, a second failure in a row ends the balancing with
that error. The offsets are counted again after every round (a preferred leader is a hint:
the group may elect another).

The groups are read and stepped down through callbacks, so the same rules serve streams and
consumers on any backend; on the embedded engine nothing is clustered, so nothing moves.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from .errors import JetlinkError

K = TypeVar("K", bound=Hashable)

ROUNDS = 5  # jsm.go's BALANCERUNS


@dataclass(frozen=True)
class Group(Generic[K]):
    """One stream's or consumer's RAFT group as its info answered: ``key`` names it to the
    callbacks, ``replicas`` are the servers following ``leader``."""

    key: K
    cluster: str
    leader: str
    replicas: tuple[str, ...] = ()


def group_of(key: K, info: dict[str, Any]) -> Group[K]:
    """The group of a StreamInfo or ConsumerInfo document (its ``cluster``: name, leader,
    replicas)."""
    c = info.get("cluster") or {}
    return Group(key, str(c.get("name") or ""), str(c.get("leader") or ""),
                 tuple(str(r.get("name") or "") for r in c.get("replicas") or []))


@dataclass
class _Peer(Generic[K]):
    name: str
    leads: list[K] = field(default_factory=list)
    offset: int = 0


def even_share(groups: int, peers: int) -> int:
    """The number of groups a server of a cluster may lead before some are moved away."""
    if peers == 0:
        return 0
    mean = groups / peers
    return int(mean) if mean == int(mean) else math.ceil(mean + 0.5)


def _clusters(groups: Sequence[Group[K]], log: Callable[[str], None]
              ) -> dict[str, dict[str, _Peer[K]]]:
    clusters: dict[str, dict[str, _Peer[K]]] = {}
    for g in groups:
        peers = clusters.setdefault(g.cluster, {})
        if not g.leader:  # jsm.go's: a group without a leader would skew the counts
            log(f"Found {g.key} without a leader: left as it is")
        else:
            peers.setdefault(g.leader, _Peer(g.leader)).leads.append(g.key)
        for r in g.replicas:
            peers.setdefault(r, _Peer(r))
    return clusters


def _recount(peers: dict[str, _Peer[K]], share: int) -> None:
    for p in peers.values():
        p.offset = len(p.leads) - share


def balance(groups: Sequence[Group[K]], *, read: Callable[[K], Group[K]],
            step_down: Callable[[K, str], None], log: Callable[[str], None],
            what: str = "stream", rng: random.Random | None = None) -> list[K]:
    """Step down the leaders of ``groups`` until each cluster's servers lead about as many;
    the groups asked to move, in order. ``read`` answers a group's current state (an error
    passes it over), ``step_down(key, preferred)`` asks its leader to stand down for the
    server ``preferred``; its error is raised on the second failure in a row."""
    run = _Run(read, step_down, log, what, rng or random.Random())
    for cluster, peers in sorted(_clusters(groups, log).items()):
        share = even_share(sum(len(p.leads) for p in peers.values()), len(peers))
        if len(peers) < 2:  # one server (a single server's streams): nowhere to move to
            continue
        log(f"Cluster {cluster}: {len(peers)} servers, a balanced share of {share} leaders "
            "each")
        _recount(peers, share)
        for _ in range(ROUNDS):
            for server in sorted(peers.values(), key=lambda p: p.name):
                run.unload(server, peers)
            _recount(peers, share)
    return run.moved


@dataclass
class _Run(Generic[K]):
    """One balancing: its callbacks, the groups moved so far, the step-downs failed in a
    row (over every server and cluster)."""

    read: Callable[[K], Group[K]]
    step_down: Callable[[K, str], None]
    log: Callable[[str], None]
    what: str
    rng: random.Random
    moved: list[K] = field(default_factory=list)
    failures: int = 0

    def unload(self, server: _Peer[K], peers: dict[str, _Peer[K]]) -> None:
        """Hand groups led by ``server`` to peers under their share until it is at its
        own."""
        what = self.what
        while server.offset > 0 and server.leads:
            key = server.leads.pop(self.rng.randrange(len(server.leads)))
            try:
                now = self.read(key)
            except JetlinkError as err:  # this group is passed over
                self.log(f"Could not read the state of {what} {key}: {err}")
                continue
            takers = [p for p in sorted(peers.values(), key=lambda p: p.name)
                      if p.offset < 0 and p.name in now.replicas and p.name != now.leader]
            if not takers:
                self.log(f"No server under its share can lead {what} {key}: left on "
                         f"{server.name}")
                return
            taker = takers[0]
            self.log(f"Requesting leader {server.name!r} step down for {what} {key}; new "
                     f"preferred leader {taker.name!r}")
            try:
                self.step_down(key, taker.name)
            except JetlinkError as err:
                self.failures += 1
                if self.failures > 1:
                    raise
                self.log(f"Could not step down the leader of {what} {key}: {err}")
                return
            self.failures = 0
            self.moved.append(key)
            taker.offset += 1
            server.offset -= 1
