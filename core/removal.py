"""What an update of a stream's (or a bucket's) limits removes of what it stores.

One definition, used by ``stream edit`` and ``kv edit`` (which ask, or need -f/--force
without a terminal, before such an update, as every destructive verb) and by ``apply``
(the same question for an update of its plan): the store then removes the oldest messages
over the new limits (core/streamstore/limits.py), or, with interest retention and no
consumer, every one (:func:`.config.stream.interest_keeps_none`). It reads the stream's
state through the JetStream API, the embedded engine's or a live server's alike.
"""

from __future__ import annotations

from typing import Any

__all__ = ["removed_by"]


def removed_by(js: Any, name: str, old: Any, new: Any, now_ns: int, *,
               kv: bool = False) -> str:
    """Why the limits of ``new`` remove messages stream ``name`` holds under ``old`` (""
    when they remove none): every message (interest retention, no consumer), else each
    limit that removes some, joined with "; " (a message count, a byte count, an age, a
    per-subject count over its new limit). ``kv``: said in a bucket's terms (history, TTL,
    bucket size; revisions of a key)."""
    st = js.stream_info(name).state
    if not st.messages:
        return ""
    from .config.stream import interest_keeps_none
    from .durations import format_duration

    if interest_keeps_none(old, new, st.consumer_count):
        return (f"retention interest with no consumer: the {st.messages:,} stored go, as "
                "nobody is interested")

    def tighter(attr: str) -> int:
        n, was = int(getattr(new, attr) or 0), int(getattr(old, attr) or 0)
        return n if n > 0 and (was <= 0 or n < was) else 0

    reasons = []
    keeps = new.discard == "new"  # discard new: a lower max_msgs/max_bytes refuses new ones
    if not keeps and (limit := tighter("max_msgs")) and st.messages > limit:
        reasons.append(f"max_msgs {limit:,} < {st.messages:,} stored")
    if not keeps and (limit := tighter("max_bytes")) and st.bytes > limit:
        reasons.append(f"{'max bucket size' if kv else 'max_bytes'} {limit:,} < "
                       f"{st.bytes:,} bytes stored")
    if (limit := tighter("max_age")) and st.first_ts and now_ns - int(st.first_ts) > limit:
        reasons.append(f"ttl {format_duration(limit)}: older values stored" if kv else
                       f"max_age {format_duration(limit)}: older messages stored")
    if limit := tighter("max_msgs_per_subject"):
        most = max(js.subjects(name).values(), default=0)
        if most > limit:
            reasons.append(f"history {limit:,} < {most:,} revisions stored for one key" if kv
                           else f"max_msgs_per_subject {limit:,} < {most:,} stored on one "
                           "subject")
    return "; ".join(reasons)
