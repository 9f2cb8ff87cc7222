"""A fenced stream's configuration (``jetlink dr fence``): the rule, defined once, for
the fence itself (core/dr/fence.py), the reports that recognise one and the topology
readers and planner that keep one (core/topology/stored.py, plan.py). It imports only the
stream configuration, so every layer that reads configs may use it."""

from __future__ import annotations

import json

from ..config.stream import StreamConfig

__all__ = ["FENCE_KEY", "fence_subject", "fenced_subjects", "with_fence", "without_fence"]

#: the metadata key of a fenced stream: the subjects it had (a JSON list)
FENCE_KEY = "jetlink.fenced_subjects"


def fence_subject(stream: str) -> str:
    """The one subject of a fenced stream: nobody publishes there, and it is the stream's
    own (a stream name is one token), so fenced streams never overlap."""
    return f"$JETLINK.fenced.{stream}"


def fenced_subjects(cfg: StreamConfig) -> list[str] | None:
    """The subjects a fenced stream had (None: not fenced: no record, or subjects other
    than :func:`fence_subject` since)."""
    text = (cfg.metadata or {}).get(FENCE_KEY)
    if not text or list(cfg.subjects) != [fence_subject(cfg.name)]:
        return None
    try:
        found = json.loads(text)
    except ValueError:
        return None
    if not isinstance(found, list) or not all(isinstance(s, str) for s in found):
        return None
    return found


def with_fence(cfg: StreamConfig) -> StreamConfig:
    """``cfg`` fenced: its subjects replaced by :func:`fence_subject`, the ones it had
    recorded under :data:`FENCE_KEY` (what ``dr fence`` stores; a failback gives them back)."""
    new = cfg.copy()
    new.metadata = {**(cfg.metadata or {}), FENCE_KEY: json.dumps(list(cfg.subjects))}
    new.subjects = [fence_subject(cfg.name)]
    return new


def without_fence(cfg: StreamConfig) -> StreamConfig:
    """``cfg`` with the fence undone (the recorded subjects back, the key dropped): what the
    stream is declared as; ``cfg`` itself when it is not fenced."""
    subjects = fenced_subjects(cfg)
    if subjects is None:
        return cfg
    new = cfg.copy()
    new.subjects = subjects
    new.metadata = {k: v for k, v in (cfg.metadata or {}).items() if k != FENCE_KEY}
    return new
