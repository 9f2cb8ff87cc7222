"""Applying a plan (core/topology/plan.py) to the clusters it was planned against.

:func:`apply_changes` makes the plan's changes in order, one call of the clusters' ``apply``
each (on the embedded engine one transaction: an object is either fully created / updated
or untouched; on a live server one API request). The first failure stops the run; the
:class:`ApplyReport` says what was applied, what failed and what was not tried, and whether
the failed change is ``uncertain`` (a lost connection: the server may or may not have made
it). A NATS object is applied as the stream it becomes (add_stream / update_stream /
delete_stream of the cluster's JetStream API, the calls every stream and KV verb ends in;
KV objects are created through core/kv.py KV's create_bucket / create_mirror /
create_aggregate).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import JetlinkError
from .plan import Change, Plan

__all__ = ["ApplyReport", "apply_changes"]


@dataclass
class ApplyReport:
    applied: list[Change] = field(default_factory=list)
    failed: Change | None = None
    error: JetlinkError | None = None
    not_applied: list[Change] = field(default_factory=list)
    # the failure lost the connection: the server may or may not have made the change
    uncertain: bool = False

    @property
    def ok(self) -> bool:
        return self.failed is None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"applied": [c.to_json() for c in self.applied]}
        if self.failed is not None:
            out["failed"] = {**self.failed.to_json(),
                             "error": self.error.to_dict() if self.error else None}
            if self.uncertain:
                out["failed"]["uncertain"] = True
        out["not_applied"] = [c.to_json() for c in self.not_applied]
        return out


def _apply_nats(js: Any, kv: Any, c: Change) -> None:
    """A NATS object's change: a stream through the JetStream API; a KV object created
    through core/kv.py KV (the bucket, mirror or aggregate it declares), updated with its
    complete stream config, deleted as its stream."""
    if c.action == "create":
        spec = c.desired.spec
        if c.kind == "kv":
            kv.create_bucket(spec)
        elif c.kind == "kv_mirror":
            kv.create_mirror(spec)
        elif c.kind == "kv_aggregate":
            kv.create_aggregate(spec)
        elif c.desired.config is not None and c.desired.config.sealed:
            # the server refuses a sealed create: created, then sealed (an update may seal);
            # a run stopped between the two seals it when run again (an update then)
            import dataclasses

            js.add_stream(dataclasses.replace(c.desired.config, sealed=False))
            js.update_stream(c.desired.config)
        else:
            js.add_stream(c.desired.config)
    elif c.action == "update":
        js.update_stream(c.config)
    else:
        js.delete_stream(c.existing.name)


def stored_removed(js: Any, c: Change, now_ns: int) -> str:
    """What the update ``c`` of a stream or a bucket removes of what it stores, through
    ``js`` (core/removal.py ``removed_by``): the clusters' ``removes``."""
    from ..removal import removed_by

    old = c.existing.config
    assert old is not None, "an update of a stream or bucket carries the stored config"
    return removed_by(js, old.name, old, c.config, now_ns, kv=c.kind != "stream")


def apply_changes(clusters: Any, plan: Plan,
                  on_change: Callable[[Change, JetlinkError | None], None] | None = None
                  ) -> ApplyReport:
    """Make the plan's changes in order through ``clusters`` (one call each); the first
    failure stops the run (module doc). ``on_change(change, error)`` is told of each change
    as it is made or fails. Refuses a plan with problems."""
    if plan.problems:
        raise JetlinkError("the plan has problems: nothing applied")
    from ..interrupts import interrupt_deferred

    report = ApplyReport()
    pending = plan.pending
    for i, c in enumerate(pending):
        # a Ctrl-C is held while a change is made and told, then ends the run: one landing
        # just after a change was committed would otherwise leave it made and uncounted.
        # The KeyboardInterrupt says which change was under way (``under_way``): none when
        # it came between two.
        told = False
        try:
            with interrupt_deferred():
                try:
                    clusters.apply(c)
                except JetlinkError as err:
                    report.failed, report.error = c, err
                    report.not_applied = pending[i + 1:]
                    report.uncertain = clusters.uncertain(err)
                    if on_change is not None:
                        on_change(c, err)
                    return report
                report.applied.append(c)
                if on_change is not None:
                    on_change(c, None)
                told = True
        except KeyboardInterrupt as stop:
            stop.under_way = None if told else c  # type: ignore[attr-defined]
            raise
    return report
