"""What the dashboard's keys do: the core calls the CLI verbs make, one per action.

Each action runs in a worker thread on its own DataDir (opened and closed by :func:`run`),
and, like a mutating CLI command, ends with one bounded replication step when it wrote
anything (cli/common.py ``bounded_step``; not after :func:`step`, which is that step). It
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
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.core.clock import Clock
    from jetlink.core.store import DataDir


@dataclass
class Outcome:
    ok: bool
    message: str
    details: list[str] = field(default_factory=list)


def run(path: Path, clock: Clock, action: Callable[[DataDir, Clock], Outcome], *,
        step_after: bool = True) -> Outcome:
    """``action`` on a DataDir of ``path``, then one bounded replication step when it wrote
    (``step_after=False``: none, for :func:`step`, whose writes are that step's copies); a
    JetlinkError (or a database error) becomes a failed Outcome."""
    import sqlite3

    from jetlink.cli.common import bounded_step
    from jetlink.cli.output import format_error
    from jetlink.core.errors import JetlinkError
    from jetlink.core.store import DataDir

    dd = DataDir(path)
    try:
        try:
            outcome = action(dd, clock)
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


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


# -- clusters ---------------------------------------------------------------------------------


def set_down(name: str, down: bool) -> Callable[[DataDir, Clock], Outcome]:
    def act(dd: DataDir, clock: Clock) -> Outcome:
        dd.set_down(name, down)
        return Outcome(True, f"Cluster {name} is {'down' if down else 'up'}")

    return act


# -- replication ------------------------------------------------------------------------------


def step(max_msgs: int | None = None) -> Callable[[DataDir, Clock], Outcome]:
    """One replication step of every agreement and link (``jetlink replicate``'s step)."""

    def act(dd: DataDir, clock: Clock) -> Outcome:
        from jetlink.cli.common import bounded_step

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


def purge_stream(cluster: str, stream: str) -> Callable[[DataDir, Clock], Outcome]:
    def act(dd: DataDir, clock: Clock) -> Outcome:
        from jetlink.core.jetstream import JetStream

        purged = JetStream(dd.open(cluster, create_local=False), clock).purge_stream(stream)
        return Outcome(True, f"Purged {purged:,} messages from {stream}@{cluster}")

    return act


def promote_stream(cluster: str, stream: str, *, failover: bool, dry_run: bool
                   ) -> Callable[[DataDir, Clock], Outcome]:
    """``stream promote|failover`` of a NATS mirror (``dry_run``: the report, nothing done)."""

    def act(dd: DataDir, clock: Clock) -> Outcome:
        from jetlink.core import promote as core

        report = core.promote(dd, cluster, stream, clock, failover=failover, dry_run=dry_run)
        origin = f"{report.origin.stream}@{report.origin.cluster}"
        state = "reachable" if report.origin.reachable else report.origin.error
        lag = "unknown" if report.lag is None else f"{report.lag:,}"
        details = [f"Origin {origin}: {state}",
                   f"Mirror last sequence {report.mirror_last_seq:,}, lag {lag}"
                   + (" (forced)" if report.forced else ""),
                   f"Subjects: {', '.join(report.subjects)}"]
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


def pause_link(cluster: str, link: str, paused: bool) -> Callable[[DataDir, Clock], Outcome]:
    def act(dd: DataDir, clock: Clock) -> Outcome:
        from jetlink.core.kafka.links import Links

        links = Links.open(dd, cluster, clock)
        links.pause(link) if paused else links.resume(link)
        return Outcome(True, f"Link {link}@{cluster} {'paused' if paused else 'resumed'}")

    return act


def alter_mirror(cluster: str, link: str, topic: str, how: str, *, dry_run: bool = False
                 ) -> Callable[[DataDir, Clock], Outcome]:
    """``mirrors pause|resume|promote|failover --link LINK TOPIC [--dry-run]``."""

    def act(dd: DataDir, clock: Clock) -> Outcome:
        from jetlink.core.kafka.mirrors import Mirrors

        results = getattr(Mirrors(dd, cluster, clock), how)([topic], link, dry_run=dry_run)
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
