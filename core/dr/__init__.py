"""Disaster recovery: promoting and failing over a mirror, and what a failover needs.

- core/dr/rules.py: the rules, defined once over the JetStream interface (refusal, lag and
  ``origin_pending``, subjects, consumer placement and clamps, partial results) and their
  entry points: :func:`prepare` (read and check once: a :class:`Promotion` to preview or
  carry out, for a caller that asks the operator in between) and :func:`promote` (both in
  one call); a :class:`Site` is where a mirror is promoted.
- core/dr/embedded.py: ``EmbeddedSite``, a cluster of a data directory as a site.
- core/dr/live.py: ``LiveSite``, a live server's JetStream domain as a site.
- core/dr/positions.py: the origin's consumer positions kept on the mirror's side (the
  ``JETLINK_POSITIONS`` bucket) and their ``sync``.
- core/dr/failback.py: :func:`failback`, the way back after a failover (the divergent tail
  saved, the old origin a mirror of the promoted stream, then the switch back).
- core/dr/fence.py: :func:`plan_fence`, ``dr fence --from REGION`` (the old origins of a
  returned region stop taking writes, their subjects recorded for failback), and the split
  brain ``dr check`` reports (``returned_origin``) and ``failover`` warns of; the fenced
  configuration's rule itself is core/dr/fencing.py (read by the topology planner too).
- core/dr/region.py: :func:`plan_region`, ``dr failover|failback --from REGION`` (every
  mirror of a region as one plan over the per-object rules above, journalled in the
  ``JETLINK_REGIONS`` bucket, resumable).
- core/dr/readiness.py: ``check_readiness``, every mirror's readiness for a failover now
  (``jetlink dr check``, the dashboard's readiness column), built on ``prepare`` / ``preview``.
- core/dr/watch.py: ``Watch``, ``jetlink dr watch`` (the readiness check every interval, its
  Prometheus collector and HTTP server, the fences it makes by itself on return).
- core/dr/recovery.py: the recovery point in seconds of each mirror (the age of the oldest
  message a failover now would lose) and the worst of them, for ``check_readiness``.

Callers get their site and positions bucket from their backend (core/backend.py
``Backend.site()`` / ``Backend.positions()``); only core/backend.py chooses between the two
sites. The Kafka side's promote / failover (mirror topics) is core/kafka/mirrors.py's.
"""

from .failback import FailbackReport, failback
from .fence import FencePlan, FenceReport, partial_warning, plan_fence, return_warning
from .readiness import DrThresholds, MirrorReadiness, Readiness, check_readiness
from .rules import (
    Naming,
    OriginFacts,
    PartialPromotion,
    PositionClamp,
    PromoteRefused,
    PromoteReport,
    Promotion,
    Site,
    kv_adjust,
    kv_mirror_stream,
    mirror_lag,
    prepare,
    promote,
)

__all__ = ["PositionClamp", "DrThresholds", "FailbackReport", "FencePlan", "FenceReport",
           "MirrorReadiness", "Naming",
           "OriginFacts", "PartialPromotion", "PromoteRefused", "PromoteReport", "Promotion",
           "Readiness", "Site", "check_readiness", "failback", "kv_adjust", "kv_mirror_stream",
           "mirror_lag", "partial_warning", "plan_fence", "prepare", "promote", "return_warning"]
