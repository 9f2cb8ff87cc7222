"""natscli's schedule flags of ``pub`` (ADR-51 message schedules): ``--schedule-at``,
``--schedule-after``, ``--schedule-every``, ``--schedule-cron``, ``--schedule-dest``,
``--schedule-source``, ``--schedule-ttl``, turned into the ``Nats-Schedule*`` headers, with
natscli's rules and texts. A time zone (2.14) is a header: ``-H Nats-Schedule-Time-Zone:Z``.
"""

from __future__ import annotations

from dataclasses import dataclass

from jetlink.cli.common import usage

DEST_HELP = ("Subject the message will publish to when the schedule fires (a JetStream "
             "publish: not with --core).")
AT_HELP = "Schedule the message at a certain RFC3339 time (a JetStream publish: not with --core)."
AFTER_HELP = "Schedule the message after a certain duration (a JetStream publish: not with --core)."
EVERY_HELP = "Schedules the message every interval (a JetStream publish: not with --core)."
CRON_HELP = "Cron definition for a scheduled message (a JetStream publish: not with --core)."
SOURCE_HELP = "Reads a specific subject when scheduling (a JetStream publish: not with --core)."
TTL_HELP = "How long generated messages should live in the stream."


@dataclass
class ScheduleFlags:
    at: str | None = None
    after: str | None = None
    every: str | None = None
    cron: str | None = None
    dest: str | None = None
    source: str | None = None
    ttl: str | None = None

    def given(self) -> bool:
        return any(v is not None for v in vars(self).values())


def _dur(text: str, flag: str) -> int:
    from jetlink.cli.stream_flags import parse_duration_flag

    return parse_duration_flag(text, flag=flag)


def schedule_headers(f: ScheduleFlags, now_ns: int) -> list[tuple[str, str]]:
    """The headers natscli's ``addScheduleHeaders`` sets (none when no flag is given)."""
    if not f.given():
        return []
    from jetlink.core.clock import format_rfc3339_nano, parse_rfc3339_nano
    from jetlink.core.durations import format_duration

    if not f.dest:
        raise usage("schedule destination is required when setting schedule properties")
    after = _dur(f.after, "--schedule-after") if f.after is not None else None
    every = _dur(f.every, "--schedule-every") if f.every is not None else None
    if after is not None and after <= 0:
        raise usage("--schedule-after must be greater than 0")
    if every is not None and every <= 0:
        raise usage("--schedule-every must be greater than 0")
    if f.at and after:
        raise usage("--schedule-at and --schedule-after are mutually exclusive")
    if every and (f.at or after):
        raise usage("--schedule-every may not be used with --schedule-at or --schedule-after")
    if f.cron and (f.at or after or every):
        raise usage("--schedule-at, --schedule-every and --schedule-after may not be used "
                    "with --schedule-cron")
    out = [("Nats-Schedule-Target", f.dest)]
    if f.at:
        try:
            ns = parse_rfc3339_nano(f.at)
        except ValueError as exc:
            raise usage(f"invalid value for --schedule-at: {f.at!r} is not an RFC3339 time "
                        "(e.g. 2026-01-02T15:04:05Z)") from exc
        out.append(("Nats-Schedule", "@at " + format_rfc3339_nano(ns // 1_000_000_000
                                                                  * 1_000_000_000)))
    elif after:
        # natscli writes the bare time here, which the server refuses (10189): jetlink
        # writes the @at form the server reads.
        at = (now_ns + after) // 1_000_000_000 * 1_000_000_000
        out.append(("Nats-Schedule", "@at " + format_rfc3339_nano(at)))
    elif every:
        out.append(("Nats-Schedule", "@every " + format_duration(every)))
    elif f.cron:
        out.append(("Nats-Schedule", f.cron))
    if f.ttl is not None:
        ttl = _dur(f.ttl, "--schedule-ttl")
        if ttl > 0:
            out.append(("Nats-Schedule-TTL", format_duration(ttl)))
    if f.source:
        out.append(("Nats-Schedule-Source", f.source))
    return out
