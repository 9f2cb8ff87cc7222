"""What the dashboard's keys do: the core calls the CLI verbs make, one per action.

Each action runs in a worker thread on a :class:`Place`: the embedded engine's data
directory (:func:`run` opens and closes a DataDir) or a live server (:class:`LiveSource` makes
one connection per action). On the embedded engine an action, like a mutating CLI command,
ends with one bounded replication step when it wrote anything (core/step.py ``bounded_step``; not after :func:`step`, which is that step). It
returns an :class:`Outcome`: a one-line message for the status line and the detail lines
(clamps) the operator should see. An engine error becomes a failed Outcome with the error
text the CLI prints; nothing is raised to the UI.

| key | action                | CLI equivalent                                         |
|-----|-----------------------|--------------------------------------------------------|
| p/r | pause / resume link   | ``links alter L --config cluster.link.paused=true``     |
| p/r | pause / resume mirror | ``mirrors pause|resume --link L TOPIC``                 |
| P/F | promote / failover    | ``mirrors promote|failover --link L TOPIC [--dry-run]`` |
| P/F | promote / failover    | ``stream promote|failover S [--dry-run]``               |
| d/u | cluster down / up     | ``cluster down|up NAME``                                |
| x   | purge a stream        | ``stream purge S -f``                                   |
| s   | one replication step  | ``replicate`` (one bounded step)                        |

On a live server, promote / failover and purge act on the server; the others are the
embedded engine's (links, mirror topics, cluster down/up, replication steps) and answer with
a sentence saying so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.core.clock import Clock
    from jetlink.core.store import DataDir


@dataclass
class Outcome:
    ok: bool
    message: str
    details: list[str] = field(default_factory=list)


def run(path: Path, clock: Clock, action: Callable[[Any, Clock], Outcome], *,
        step_after: bool = True) -> Outcome:
    """``action`` on a DataDir of ``path``, then one bounded replication step when it wrote
    (``step_after=False``: none, for :func:`step`, whose writes are that step's copies); a
    JetlinkError (or a database error) becomes a failed Outcome."""
    import sqlite3

    from jetlink.core.step import bounded_step
    from jetlink.cli.output import format_error
    from jetlink.core.errors import JetlinkError
    from jetlink.core.store import DataDir

    dd = DataDir(path)
    try:
        try:
            outcome = action(EmbeddedPlace(dd, clock), clock)
        except JetlinkError as err:
            return Outcome(False, format_error(err))
        except sqlite3.Error as err:
            return Outcome(False, f"jetlink: error: {err}")
        if step_after and dd.wrote():
            failures: list[str] = []
            bounded_step(dd, clock, lambda err: failures.append(str(err)))
            outcome.details += [f"replication step failed: {f}" for f in failures]
        return outcome
    finally:
        dd.close()


class EmbeddedPlace:
    """What an action acts on, on the embedded engine: a DataDir's clusters."""

    def __init__(self, dd: DataDir, clock: Clock) -> None:
        self.dd = dd
        self.clock = clock

    def datadir(self) -> DataDir:
        return self.dd

    def jetstream(self, cluster: str) -> Any:
        from jetlink.core.jetstream import JetStream

        return JetStream(self.dd.open(cluster, create_local=False), self.clock)

    def site(self, cluster: str) -> Any:
        from jetlink.core.promote import EmbeddedSite

        return EmbeddedSite(self.dd, cluster, self.clock)

    def positions(self, cluster: str) -> Any:
        from jetlink.core.kv import KV
        from jetlink.core.positions import PositionStore

        return PositionStore(KV(self.dd, cluster, self.clock))


class LivePlace:
    """What an action acts on, on a live server: one connection's JetStream API."""

    def __init__(self, js: Any) -> None:
        self.js = js

    def datadir(self) -> DataDir:
        from jetlink.core.errors import JetlinkError

        raise JetlinkError(
            "this key works on the embedded engine's data directory (links, mirror topics, "
            "cluster down/up, replication steps): a live server replicates by itself")

    def jetstream(self, cluster: str) -> Any:
        return self.js

    def site(self, cluster: str) -> Any:
        from jetlink.core.live.promote import LiveSite

        return LiveSite(self.js)

    def positions(self, cluster: str) -> Any:
        from jetlink.core.kv import KV
        from jetlink.core.live.jetstream import LiveDomains
        from jetlink.core.positions import PositionStore

        return PositionStore(KV.over(LiveDomains(self.js), self.js.conn.target.js_domain or ""))


class EmbeddedSource:
    """The dashboard's data on the embedded engine: a data directory."""

    replicates = True  # jetlink's replication runs here (s, f)

    def __init__(self, path: Path) -> None:
        self.path = path

    def run(self, clock: Clock, action: Callable[[Any, Clock], Outcome], *,
            step_after: bool = True) -> Outcome:
        return run(self.path, clock, action, step_after=step_after)

    @contextmanager
    def jetstream(self, cluster: str, clock: Clock) -> Iterator[Any]:
        from jetlink.core.jetstream import JetStream
        from jetlink.core.store import DataDir

        dd = DataDir(self.path)
        try:
            yield JetStream(dd.open(cluster, create_local=False), clock)
        finally:
            dd.close()


class LiveSource:
    """The dashboard's data on a live server (``target``: core/live/target.py)."""

    replicates = False  # the server replicates by itself

    def __init__(self, target: Any) -> None:
        self.target = target

    @contextmanager
    def connection(self) -> Iterator[Any]:
        from jetlink.core.live.client import connect
        from jetlink.core.live.jetstream import LiveJetStream

        js = LiveJetStream(connect(self.target))
        try:
            yield js
        finally:
            js.close()

    def load(self, clock: Clock) -> Any:
        from jetlink.cli.dashboard.data import load_live

        with self.connection() as js:
            return load_live(js, clock)

    def run(self, clock: Clock, action: Callable[[Any, Clock], Outcome], *,
            step_after: bool = True) -> Outcome:
        from jetlink.cli.output import format_error
        from jetlink.core.errors import JetlinkError

        try:
            with self.connection() as js:
                return action(LivePlace(js), clock)
        except JetlinkError as err:
            return Outcome(False, format_error(err))

    @contextmanager
    def jetstream(self, cluster: str, clock: Clock) -> Iterator[Any]:
        with self.connection() as js:
            yield js


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


# -- clusters ---------------------------------------------------------------------------------


def set_down(name: str, down: bool) -> Callable[[Any, Clock], Outcome]:
    def act(place: Any, clock: Clock) -> Outcome:
        place.datadir().set_down(name, down)
        return Outcome(True, f"Cluster {name} is {'down' if down else 'up'}")

    return act


# -- replication ------------------------------------------------------------------------------


def step(max_msgs: int | None = None) -> Callable[[Any, Clock], Outcome]:
    """One replication step of every agreement and link (``jetlink replicate``'s step)."""

    def act(place: Any, clock: Clock) -> Outcome:
        from jetlink.core.step import bounded_step

        dd = place.datadir()
        failures: list[str] = []
        reports, links = bounded_step(dd, clock, lambda err: failures.append(str(err)),
                                      max_msgs=max_msgs)
        copied = sum(r.copied for r in reports)
        records = sum(r.copied for r in links)
        errors = [f"{r.target}@{r.target_cluster}: {r.error}" for r in reports if r.error]
        errors += [f"link {r.link}@{r.cluster}: {e}" for r in links for e in r.errors]
        errors += failures
        message = (f"Replication step: {_plural(copied, 'message')} copied, "
                   f"{_plural(records, 'record')} mirrored")
        return Outcome(not failures, message, errors)

    return act


# -- streams ----------------------------------------------------------------------------------


def purge_stream(cluster: str, stream: str) -> Callable[[Any, Clock], Outcome]:
    def act(place: Any, clock: Clock) -> Outcome:
        purged = place.jetstream(cluster).purge_stream(stream)
        return Outcome(True, f"Purged {purged:,} messages from {stream}@{cluster}")

    return act


def promote_stream(cluster: str, stream: str, *, failover: bool, dry_run: bool
                   ) -> Callable[[Any, Clock], Outcome]:
    """``stream promote|failover`` of a NATS mirror (``dry_run``: the report, nothing done)."""

    def act(place: Any, clock: Clock) -> Outcome:
        from jetlink.core import failover as core

        report = core.promote(place.site(cluster), stream, failover=failover, dry_run=dry_run,
                              positions=place.positions(cluster))
        origin = f"{report.origin.stream}@{report.origin.cluster}"
        state = "reachable" if report.origin.reachable else report.origin.error
        lag = "unknown" if report.lag is None else f"{report.lag:,}"
        if report.lag is not None and not report.origin.reachable:
            lag += " (last reported)"
        pending = report.origin_pending
        details = [f"Origin {origin}: {state}",
                   f"Mirror last sequence {report.mirror_last_seq:,}, lag {lag}"
                   + (f", {pending:,} not copied" if pending else "")
                   + (" (forced)" if report.forced else ""),
                   f"Subjects: {', '.join(report.subjects)}"]
        place_verb = "Would place" if dry_run else "Placed"
        details += [f"{place_verb} consumer {p.consumer} at {p.start_seq:,}"
                    + (" (clamped)" if p.clamped else "") for p in report.consumers
                    if p.status in ("planned", "created")]
        verb = "Would clamp" if dry_run else "Clamped"
        details += [f"{verb} consumer {c.consumer}: from {c.from_seq:,} to {c.to_seq:,}"
                    for c in report.clamps]
        if not report.clamps:
            details.append("No consumer to clamp" if dry_run else "No consumer clamped")
        how = "failed over" if failover else "promoted"
        message = (f"{stream}@{cluster} can be {how}" if dry_run
                   else f"Stream {stream}@{cluster} was {how}: it no longer mirrors {origin}")
        return Outcome(True, message, details)

    return act


# -- cluster links and mirror topics ----------------------------------------------------------


def pause_link(cluster: str, link: str, paused: bool) -> Callable[[Any, Clock], Outcome]:
    def act(place: Any, clock: Clock) -> Outcome:
        from jetlink.core.kafka.links import Links

        links = Links.open(place.datadir(), cluster, clock)
        links.pause(link) if paused else links.resume(link)
        return Outcome(True, f"Link {link}@{cluster} {'paused' if paused else 'resumed'}")

    return act


def alter_mirror(cluster: str, link: str, topic: str, how: str, *, dry_run: bool = False
                 ) -> Callable[[Any, Clock], Outcome]:
    """``mirrors pause|resume|promote|failover --link LINK TOPIC [--dry-run]``."""

    def act(place: Any, clock: Clock) -> Outcome:
        from jetlink.core.kafka.mirrors import Mirrors

        results = getattr(Mirrors(place.datadir(), cluster, clock), how)([topic], link, dry_run=dry_run)
        res = results[0]
        verb = {"pause": "paused", "resume": "resumed", "promote": "promoted",
                "failover": "failed over"}[how]
        if not res.ok:
            return Outcome(False, f"Mirror topic {topic}@{cluster}: {res.error_message}")
        clamp = "Would clamp" if dry_run else "Clamped"
        details = [f"{clamp} consumer group {c.group} on {c.topic} partition {c.partition}: "
                   f"offset {c.from_offset:,} -> {c.to_offset:,}" for c in res.clamps]
        if how in ("promote", "failover"):
            lag = max((p.lag for p in res.mirror_lags), default=0)
            details.insert(0, f"Mirror lag {lag:,} (the largest of "
                              f"{_plural(len(res.mirror_lags), 'partition')})")
            if not res.clamps:
                details.append("No consumer group offset to clamp" if dry_run
                               else "No consumer group offset clamped")
        message = (f"Mirror topic {topic}@{cluster} can be {verb}" if dry_run
                   else f"Mirror topic {topic}@{cluster} {verb}")
        return Outcome(True, message, details)

    return act
