"""Replication steps run by the engine's callers: the bounded step a mutating command, a
``serve`` request and the dashboard's actions end with (:func:`bounded_step`), the step size
of the follow loops (``replicate --follow``, the dashboard's following), and the links'
until-idle loop of ``jetlink replicate`` (:func:`links_until_idle`; the agreements' twin is
core/replication.py ``pump_until_idle``).

A step pumps every agreement of the data directory (core/replication.py ``pump``: clusters
that are down are skipped) and then every cluster link (core/kafka/mirrors.py ``pump_links``:
mirror topics, config and offset sync). A failure never escapes :func:`bounded_step`: it goes
to the caller's ``on_error`` and the clusters that can be used are still served.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .errors import JetlinkError

if TYPE_CHECKING:  # pragma: no cover
    from .clock import Clock
    from .store import DataDir

__all__ = ["FOLLOW_STEP_MAX_MSGS", "LINK_ROUNDS", "STEP_MAX_MSGS", "bounded_step",
           "links_until_idle"]

# The most messages one agreement copies (and records one mirror topic copies) in the step
# a mutating command ends with (a backlog bigger than this is left to `jetlink replicate`).
STEP_MAX_MSGS = 1000
# The same per step of a follow loop, so that Ctrl-C and the display stay responsive during a
# large backlog (the next step follows at once).
FOLLOW_STEP_MAX_MSGS = 10_000
# Link steps `jetlink replicate` runs at most before it reports (a link that keeps finding
# records, because something keeps producing, would otherwise never let it end).
LINK_ROUNDS = 100


def bounded_step(store: DataDir, clock: Clock, on_error: Callable[[Exception], Any], *,
                 max_msgs: int | None = None) -> tuple[list[Any], list[Any]]:
    """One step: ``(the pump's AgreementReports, the links' LinkReports)``, at most
    ``max_msgs`` messages per agreement and records per mirror topic (default
    :data:`STEP_MAX_MSGS`); a failure goes to ``on_error(err)``, never raised."""
    from . import replication
    from .kafka.mirrors import pump_links

    if max_msgs is None:
        max_msgs = STEP_MAX_MSGS  # looked up now: tests lower it
    reports: list[Any] = []
    try:
        broken: list[Any] = []  # clusters that cannot be used: the others still run
        reports = list(replication.pump(store, clock, max_msgs=max_msgs, broken=broken))
        links = pump_links(store, clock, max_records=max_msgs,
                           on_error=lambda cluster, err: on_error(err))
        for _name, err in broken:
            on_error(err)
        return reports, links
    except (JetlinkError, sqlite3.Error) as err:
        on_error(err)
        return reports, []


def links_until_idle(store: DataDir, clock: Clock) -> list[Any]:
    """Cluster link steps (mirror topics, config and offset sync) until one moves nothing,
    at most :data:`LINK_ROUNDS`; the last step's reports with the records copied over all
    steps (and the mirror partitions cut back over all steps)."""
    from .kafka.mirrors import pump_links

    totals: dict[tuple[str, str], list[int]] = {}
    cuts: dict[tuple[str, str], list[Any]] = {}
    reports: list[Any] = []
    for _ in range(LINK_ROUNDS):
        reports = pump_links(store, clock)
        for r in reports:
            t = totals.setdefault((r.cluster, r.link), [0, 0])
            t[0] += r.copied
            t[1] += r.offsets_synced
            cuts.setdefault((r.cluster, r.link), []).extend(r.truncated)
        if not any(r.moved for r in reports):
            break
    for r in reports:
        r.copied, r.offsets_synced = totals.get((r.cluster, r.link), [0, 0])
        r.truncated = cuts.get((r.cluster, r.link), [])
    return reports
