"""What the dashboard's keys do: the core calls the CLI verbs make, one per action.

Each action runs in a worker thread on a backend (core/backend.py) that :class:`Source`
opens for it: the embedded engine's data directory or a live server (one connection per
action). On the embedded engine an action, like a mutating CLI command, ends with one
bounded replication step when it wrote anything (core/step.py ``bounded_step``; not after
:func:`step`, which is that step). It
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
| F   | fail a region over    | ``dr failover --from REGION [--dry-run]``               |
| B   | fail a region back    | ``dr failback --from REGION [--dry-run]``               |
| E   | fence a region        | ``dr fence --from REGION [--dry-run]``                  |

On a live server, promote / failover, the region actions and purge act on the server; the
others are the embedded engine's (links, mirror topics, cluster down/up, replication steps)
and answer with a sentence saying so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.core.backend import Backend
    from jetlink.core.clock import Clock


@dataclass
class Outcome:
    ok: bool
    message: str
    details: list[str] = field(default_factory=list)
    asks: bool = True  # a dry run with something to confirm (False: it ends there)
    warns: bool = False  # done, but its details are errors (a step's agreements in error)


class Source:
    """Where the dashboard's actions, feed and snapshots act: the backend (core/backend.py)
    of the invocation's settings (``target``: the live server in force, else the data
    directory at ``path``), opened anew for each action in its worker thread and closed
    after it."""

    def __init__(self, path: Path, target: Any = None) -> None:
        from jetlink.core.clock import SystemClock

        self.path = path
        self.target = target
        unopened = self.open(SystemClock())  # a backend opens nothing before it is used
        # jetlink's replication runs here (s, f); a live server replicates by itself
        self.replicates = unopened.replicates
        self.label = unopened.label
        self.addressing = unopened.addressing  # (an equivalent command's global options)
        self.place = unopened.place
        self.answered: Any = None  # a live server's last snapshot (shown while it is silent)

    def open(self, clock: Clock, *, step: bool = True, create: bool = True,
             on_step_error: Callable[[Exception], Any] | None = None) -> Backend:
        from jetlink.core.backend import open_backend
        from jetlink.core.store.datadir import LOCAL

        return open_backend(self.target, self.path, LOCAL, lambda: clock, step=step,
                            create=create, on_step_error=on_step_error)

    def check(self, clock: Clock, scope: str | None) -> None:
        """What would make the dashboard show nothing of what was asked, refused as a read
        verb refuses it: a data directory that does not exist, a ``--cluster`` it does not
        have (with the closest name). A live server answers for itself."""
        from jetlink.core.errors import NotFoundError, not_found
        from jetlink.core.store.datadir import LOCAL

        def on_data_dir(dd: Any) -> None:
            dd.check_exists()
            names = dd.cluster_names()
            if scope is not None and scope != LOCAL and scope not in names:
                raise not_found(NotFoundError(f"cluster {scope} not found", field="cluster"),
                                scope, names)

        with self.open(clock, step=False) as backend:
            backend.either(data_dir=on_data_dir, server=lambda _js: None)

    def check_feed(self, text: str, cluster: str, clock: Clock) -> None:
        """``--feed``'s SUBJECT[@CLUSTER] refused before the UI starts, as ``jetlink sub``
        refuses it: a subject that is not one (a usage error naming it and the rule), a
        cluster the data directory does not have (with the closest name)."""
        from jetlink.cli.common import check_subject_filter

        def on_data_dir(dd: Any) -> list[str]:
            return list(dd.cluster_names())

        with self.open(clock, step=False) as backend:
            names = backend.either(data_dir=on_data_dir, server=lambda _js: [])
        subject, cluster = feed_target(text, cluster, names, self.replicates)
        check_subject_filter("--feed", subject)
        with self.jetstream(cluster, clock):
            pass

    def load(self, path: Path, clock: Clock, *, clusters: Any = None) -> Any:
        """A snapshot (cli/dashboard/data.py): every cluster of a data directory, or the
        live server's JetStream domain; a server that does not answer (no connection, or
        its INFO unanswered) is its row's error, the last snapshot it answered kept
        beside it, said stale (data.py ``unanswered``)."""
        from jetlink.cli.dashboard.data import add_readiness, load, load_live, unanswered
        from jetlink.core.errors import LiveError

        last = self.answered
        with self.open(clock, step=False) as backend:
            try:
                snap = backend.either(
                    data_dir=lambda dd: load(dd.path, clock, clusters=clusters),
                    server=lambda js: add_readiness(load_live(js, clock, last), backend,
                                                    clock))
            except LiveError as err:  # no connection: the server's row says why
                return unanswered(self.target.shown_url, err, clock, last)
        if self.target is not None and all(c.answers for c in snap.clusters):
            self.answered = snap
        return snap

    def run(self, clock: Clock, action: Callable[[Any, Clock], Outcome], *,
            step_after: bool = True) -> Outcome:
        """``action`` on a fresh backend, then (embedded) one bounded replication step when
        it wrote (``step_after=False``: none, for :func:`step`, whose writes are that step's
        copies); a JetlinkError (or a database error) becomes a failed Outcome."""
        import sqlite3

        from jetlink.cli.output import format_error
        from jetlink.core.errors import JetlinkError

        failures: list[str] = []
        backend = self.open(clock, step=step_after,
                            on_step_error=lambda err: failures.append(str(err)))
        try:
            try:
                outcome = action(backend, clock)
            except BaseException:
                backend.close(step=False)  # a failed action gets no step
                raise
            backend.close()
        except JetlinkError as err:
            return Outcome(False, format_error(err))
        except sqlite3.Error as err:
            return Outcome(False, f"jetlink: error: {err}")
        outcome.details += [f"replication step failed: {f}" for f in failures]
        return outcome

    @contextmanager
    def jetstream(self, cluster: str, clock: Clock) -> Iterator[Any]:
        """The JetStream API the feed subscribes on: the live server's, or that of the data
        directory's cluster ``cluster``, which must exist (a NotFoundError with the closest
        name, as a read verb's: the dashboard creates no cluster, ``local`` neither)."""
        with self.open(clock, step=False, create=False) as backend:
            backend.either(data_dir=lambda dd: dd.open(cluster, create_local=False),
                           server=lambda _js: None)
            yield backend.jetstream(cluster)


def feed_target(text: str, cluster: str, names: Any, replicates: bool) -> tuple[str, str]:
    """The feed's ``SUBJECT`` and cluster from ``SUBJECT@CLUSTER`` (else ``cluster``): on the
    data directory (``replicates``) the text after the last ``@`` names the cluster; on a
    live server only a cluster among ``names`` does (``@`` is a subject's character)."""
    head, sep, tail = text.rpartition("@")
    if sep and head and (replicates or tail in names):
        return head, tail
    return text, cluster


# Said by a key that works on the data directory only, when a live server is in force.
EMBEDDED_KEY = ("this key (links, mirror topics, cluster down/up, replication steps; a live "
                "server replicates by itself)")


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


# -- clusters ---------------------------------------------------------------------------------


def set_down(name: str, down: bool) -> Callable[[Any, Clock], Outcome]:
    def act(place: Any, clock: Clock) -> Outcome:
        place.data_dir(EMBEDDED_KEY).set_down(name, down)
        return Outcome(True, f"Cluster {name} is {'down' if down else 'up'}")

    return act


# -- replication ------------------------------------------------------------------------------


def step(max_msgs: int | None = None) -> Callable[[Any, Clock], Outcome]:
    """One replication step of every agreement and link (``jetlink replicate``'s step)."""

    def act(place: Any, clock: Clock) -> Outcome:
        from jetlink.core.replication import down_reports
        from jetlink.core.step import bounded_step

        dd = place.data_dir(EMBEDDED_KEY)
        dd.check_exists()  # (a directory moved away holds nothing to copy: said, as replicate)
        failures: list[str] = []
        reports, links = bounded_step(dd, clock, lambda err: failures.append(str(err)),
                                      max_msgs=max_msgs)
        reports = [*reports, *down_reports(dd, clock)]  # targets in a cluster that is down
        copied = sum(r.copied for r in reports)
        records = sum(r.copied for r in links)
        errors = [f"{r.target}@{r.target_cluster}: {r.error}" for r in reports if r.error]
        errors += [f"link {r.link}@{r.cluster}: {e}" for r in links for e in r.errors]
        errors += failures
        message = (f"Replication step: {_plural(copied, 'message')} copied, "
                   f"{_plural(records, 'record')} mirrored")
        return Outcome(not failures, message, errors, warns=bool(errors))

    return act


# -- streams ----------------------------------------------------------------------------------


def purge_stream(cluster: str, stream: str) -> Callable[[Any, Clock], Outcome]:
    def act(place: Any, clock: Clock) -> Outcome:
        purged = place.jetstream(cluster).purge_stream(stream)
        return Outcome(True, f"Purged {purged:,} messages from {stream}@{cluster}")

    return act


def promote_stream(cluster: str, stream: str, *, failover: bool, dry_run: bool
                   ) -> Callable[[Any, Clock], Outcome]:
    """``stream promote|failover`` of a NATS mirror (``dry_run``: the report, nothing done),
    with the warnings the verb prints first (core/dr ``partial_warning``,
    ``return_warning``)."""

    def act(place: Any, clock: Clock) -> Outcome:
        from jetlink.cli.promotion import promotion_columns
        from jetlink.core import dr

        # as dr.promote does it, the promotion kept for its warnings
        promotion = dr.prepare(place.site(cluster), stream, failover=failover,
                               positions=place.positions(cluster), as_stream=True)
        warnings = [f"Warning: {w}" for w in (dr.partial_warning(promotion, planned=dry_run),
                                              dr.return_warning(promotion, planned=dry_run))
                    if w is not None]
        report = promotion.preview() if dry_run else promotion.carry_out()
        origin = f"{report.origin.stream}@{report.origin.cluster}"
        # the CLI's report, line by line (its heading is the message)
        columns = promotion_columns(report.to_json(), label=f"Stream {stream}@{cluster}")
        columns.heading = None
        details = [*warnings, *(text.rstrip() for text in columns.lines())]
        how = "failed over" if failover else "promoted"
        message = (f"{stream}@{cluster} can be {how}" if dry_run
                   else f"Stream {stream}@{cluster} was {how}: it no longer mirrors {origin}")
        return Outcome(True, message, details)

    return act


# -- cluster links and mirror topics ----------------------------------------------------------


def pause_link(cluster: str, link: str, paused: bool) -> Callable[[Any, Clock], Outcome]:
    def act(place: Any, clock: Clock) -> Outcome:
        from jetlink.core.kafka.links import Links

        links = Links.open(place.data_dir(EMBEDDED_KEY), cluster, clock)
        links.pause(link) if paused else links.resume(link)
        return Outcome(True, f"Link {link}@{cluster} {'paused' if paused else 'resumed'}")

    return act


def alter_mirror(cluster: str, link: str, topic: str, how: str, *, dry_run: bool = False
                 ) -> Callable[[Any, Clock], Outcome]:
    """``mirrors pause|resume|promote|failover --link LINK TOPIC [--dry-run]``."""

    def act(place: Any, clock: Clock) -> Outcome:
        from jetlink.core.kafka.mirrors import Mirrors

        mirrors = Mirrors(place.data_dir(EMBEDDED_KEY), cluster, clock)
        results = getattr(mirrors, how)([topic], link, dry_run=dry_run)
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


# -- regions ---------------------------------------------------------------------------------


def _objects(n: int) -> str:
    return _plural(n, "object")


def region_run(action: str, region: str, clusters: list[str] | None, *, dry_run: bool
               ) -> Callable[[Any, Clock], Outcome]:
    """``dr failover|failback --from REGION [--dry-run]`` (``action``: "failover" or
    "failback"; ``clusters``: the sides, None every one): core/dr/region.py's plan, its
    preview or its run, in the CLI's lines. A refused plan, or one with nothing left to do,
    is a preview that asks nothing."""

    def act(place: Any, clock: Clock) -> Outcome:
        from jetlink.cli.dr import answering_warning, region_lines
        from jetlink.core.dr.region import MANUAL, plan_region

        plan = plan_region(place, action, [region], clusters=clusters, clock=clock)
        if plan.refused or dry_run:
            report = plan.preview()
            lines = region_lines(report.to_json(), plan_only=True)
            warning = answering_warning(plan, True, f"press E on region {region} after it")
            if warning:
                lines = [f"Warning: {warning}", *lines]
            if plan.refused:
                names = ", ".join(f"{o.shown} ({o.detail})" for o in plan.refused)
                return Outcome(False, f"The region {action} of {region} is refused: {names}",
                               [*lines, f"jetlink dr {action} --from {region} --skip NAME "
                                "(or --skip-unready) leaves them out"], asks=False)
            if report.nothing_to_do:
                manual = report.count(MANUAL)
                if manual:
                    return Outcome(True, f"Nothing jetlink runs: {_objects(manual)} of "
                                   f"{region} to {action.replace('fail', 'fail ')} by hand "
                                   "(below)", lines, asks=False)
                return Outcome(True, f"Nothing to do: the region {action} of {region} was "
                               "done already", lines, asks=False)
            verb = "fail over" if action == "failover" else "fail back"
            todo, every = len(plan.todo), len(plan.objects)
            counted = _objects(todo) if todo == every else f"{todo} of {_objects(every)}"
            return Outcome(True, f"{counted} of {region} to {verb}", lines)
        doc = plan.carry_out().to_json()
        said = region_lines(doc, outcome_only=True)  # what it came to, then a fence's
        return Outcome(not doc["failed"], said[0],
                       region_lines(doc, plan_only=True) + said[1:])

    return act


def fence_region(region: str, clusters: list[str] | None, *, dry_run: bool
                 ) -> Callable[[Any, Clock], Outcome]:
    """``dr fence --from REGION [--dry-run]``: core/dr/fence.py's plan, its preview or
    its run, in the CLI's lines. Nothing to fence now (every old origin fenced already, or
    not answering) is a preview that asks nothing."""

    def act(place: Any, clock: Clock) -> Outcome:
        from jetlink.cli.dr import fence_lines
        from jetlink.core.dr import plan_fence

        plan = plan_fence(place, [region], clusters=clusters, clock=clock)
        if dry_run:
            preview = plan.preview()
            lines = fence_lines(preview.to_json())[:-1]  # not "Dry run: ..."
            todo = len(plan.to_fence)
            if not todo and preview.not_fenced:  # refused or not answering: as dr fence's 1
                names = "; ".join(f"{i.name}@{i.region} ({i.action}: {i.detail})"
                                  for i in preview.not_fenced)
                return Outcome(False, f"Nothing can be fenced in {region} now: {names}",
                               lines, asks=False)
            if not todo:
                return Outcome(True, f"Nothing to fence in {region} now: every old origin "
                               "is fenced already", lines, asks=False)
            return Outcome(True, f"{_plural(todo, 'old origin')} of {region} to fence: "
                           "they take no writes until failback --switch", lines)
        report = plan.carry_out()
        doc = report.to_json()
        message = f"Fenced {_plural(doc['fenced'], 'old origin')} of {region}"
        if report.not_fenced:
            message += "; not fenced: " + ", ".join(doc["not_fenced"])
        return Outcome(not report.not_fenced, message, fence_lines(doc))

    return act
