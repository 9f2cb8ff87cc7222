"""Message schedules (ADR-51; nats-server 2.12, time zones, sources and rollups 2.14) on the
embedded engine.

A stream with ``allow_msg_schedules`` stores a message carrying ``Nats-Schedule`` as a
*schedule*; when it is due, the engine publishes a message on its ``Nats-Schedule-Target``.
The server's rules, by function:

- :func:`check`: the publish refusals of ``processJetStreamMsg`` (the "Message scheduling"
  block and the ``Nats-Schedule-Next`` / ``Nats-Scheduler`` block), in the server's order,
  and the ``Nats-Rollup: sub`` a schedule message gets when it has none;
- :func:`after_store`: the store's bookkeeping (``memstore.storeRawMsg``: a schedule is
  added, a plain message on its subject cancels it, ``Nats-Schedule-Next: <time>`` moves a
  repeating one) and ``processJetStreamMsgWithRollup``'s purge of the schedule subject when
  a message carries ``Nats-Schedule-Next: purge``;
- :func:`fire`: ``MsgScheduling.getScheduledMessages`` (the fired message: the schedule's
  body, or the last message of ``Nats-Schedule-Source``; the ``Nats-Schedule*``,
  ``Nats-Expected-*``, ``Nats-Msg-Id``, ``Nats-TTL`` and ``Nats-Rollup`` headers stripped;
  ``Nats-Scheduler``, ``Nats-Schedule-Next`` and the schedule's TTL and rollup added), each
  fired message stored like a sourced one;
- :func:`parse_schedule`: ``parseMsgSchedule`` (``@at <RFC3339>``, ``@every <duration>`` of
  at least 1s, the predefined ``@yearly`` ... ``@hourly``) and ``parseCron`` (six fields,
  seconds first; names of months and days; ``Nats-Schedule-Time-Zone`` for cron only).

When a schedule fires on the embedded engine: there is no background thread. The due work
of a cluster (expiry and schedules, core/jetstream.py ``_expire`` / ``_due``) runs at the
start of every engine call, reads included, so a schedule fires at the first call at or after
its time, stamped with that call's time; ``jetlink replicate --follow`` (the pump,
core/replication.py ``pump``) runs it on every step, which makes it the clock-driven loop.
A repeating schedule that was due several times meanwhile fires once (the server's
"skip ahead and only fire once").

Stored state: the ``schedules`` component's table ``msg_schedules`` (one row per schedule
subject: its sequence and next due time, the server's ``MsgScheduling.schedules``). A row
whose message went away (purge, limits, expiry, delete) is dropped when it comes due.
"""

from __future__ import annotations

import re
import sqlite3
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Protocol

from .. import headers as H
from ..errors import ApiError, nats_error
from ..numbers import IntTextError, parse_int
from ..subjects import is_valid_publish_subject, overlaps
from .base import _SECOND, load_msg, parse_msg_ttl

if TYPE_CHECKING:  # pragma: no cover
    from ..messages import PubAck
    from ..streamdef import StreamDef
    from ..txnstate import TxnState

__all__ = [
    "COMPONENT", "SCHEMA_STEPS", "TIME_ZONE", "TARGET", "SOURCE", "TTL", "ROLLUP",
    "check", "after_store", "due", "fire", "forget_stream", "parse_schedule",
    "load_location", "schedules_of",
]

# The schedule's own headers (nats-server stream.go JSSchedule*).
TIME_ZONE = "Nats-Schedule-Time-Zone"
TTL = "Nats-Schedule-TTL"
ROLLUP = "Nats-Schedule-Rollup"
TARGET = "Nats-Schedule-Target"
SOURCE = "Nats-Schedule-Source"
PURGE = "purge"  # Nats-Schedule-Next of a one-shot schedule: the schedule is purged

# Headers that make a publish go through :func:`check` (the others matter only beside these).
CHECKED = frozenset({H.SCHEDULE, TIME_ZONE, H.SCHEDULE_NEXT, H.SCHEDULER})

COMPONENT = "schedules"
SCHEMA_STEPS: list[list[str]] = [
    [
        """CREATE TABLE msg_schedules (
            stream_id INTEGER NOT NULL,
            subject   TEXT NOT NULL,
            seq       INTEGER NOT NULL,
            due       INTEGER NOT NULL,
            PRIMARY KEY (stream_id, subject)
        ) WITHOUT ROWID""",
        "CREATE INDEX msg_schedules_by_due ON msg_schedules(stream_id, due)",
    ],
]


class ScheduledStream(Protocol):
    """What the schedule rules use of one stream inside a write transaction: the engine's
    ``StreamTxn`` (core/streamstore/txn.py), its state (overlay.py), purge (purge.py, a
    one-shot schedule purged) and append (append.py, a fired message). The publish path
    (append.py) calls :func:`check` and :func:`after_store`, so this module imports none of
    them."""

    d: StreamDef
    conn: sqlite3.Connection
    txn: TxnState
    last_ts: int

    def flush(self) -> None: ...

    def last_seq_for(self, subject: str) -> int: ...

    def purge(self, subject: str | None = None, seq: int = 0, keep: int = 0) -> int: ...

    def notify_purge(self, subject: str | None) -> None: ...

    def append(self, subject: str, hdr: bytes | None, data: bytes, *, sourced: bool = False,
               fv: dict[str, str] | None = None) -> PubAck | ApiError: ...


# --- parsing ------------------------------------------------------------------------------------
class _Invalid(ValueError):
    pass


def load_location(fv: dict[str, str]) -> tuple[tzinfo | None, ApiError | None]:
    """``loadMessageScheduleLocation``: None when the header is absent; present but empty or
    an unknown zone is 10223."""
    name = fv.get(TIME_ZONE)
    if name is None:
        return None, None
    if not name:
        return None, nats_error("MessageSchedulesTimeZoneInvalid")
    if name == "UTC":
        return UTC, None
    if name == "Local":  # Go's time.LoadLocation("Local"): the server's own zone
        return _local_zone(), None
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(name), None
    except (ValueError, OSError, KeyError):  # ZoneInfoNotFoundError is a KeyError
        return None, nats_error("MessageSchedulesTimeZoneInvalid")


def _local_zone() -> tzinfo:
    """Go's ``time.Local`` (zoneinfo_unix.go ``initLocal``): TZ unset, /etc/localtime; TZ
    empty, UTC; else the zone TZ names (a leading ':' dropped; a path read as a zone file);
    UTC when it can not be loaded."""
    import os
    from zoneinfo import ZoneInfo

    tz = os.environ.get("TZ")
    try:
        if tz is None:
            with open("/etc/localtime", "rb") as f:
                return ZoneInfo.from_file(f)
        tz = tz[1:] if tz.startswith(":") else tz
        if not tz or tz == "UTC":
            return UTC
        if tz.startswith("/"):
            with open(tz, "rb") as f:
                return ZoneInfo.from_file(f)
        return ZoneInfo(tz)
    except (ValueError, OSError, KeyError):
        return UTC


_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})\Z")


def _parse_rfc3339(text: str) -> int:
    """Go's ``time.Parse(time.RFC3339, text)`` as nanoseconds (fractions accepted)."""
    m = _RFC3339.match(text)
    if m is None:
        raise _Invalid(text)
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    frac, zone = m.group(7) or "", m.group(8)
    if zone == "Z":
        off = 0
    else:
        oh, om = int(zone[1:3]), int(zone[4:6])
        if oh > 24 or om > 59:
            raise _Invalid(text)
        off = (oh * 60 + om) * 60 * (-1 if zone[0] == "-" else 1)
    try:
        base = datetime(y, mo, d, h, mi, s, tzinfo=UTC)
    except ValueError as e:
        raise _Invalid(text) from e
    ns = (int(base.timestamp()) - off) * _SECOND
    return ns + int(frac[:9].ljust(9, "0")) if frac else ns


def _unix_nano(ns: int) -> int:
    """Go's ``Time.UnixNano()`` of the time ``ns`` nanoseconds after the epoch, the value the
    server's scheduler keeps (nats-server memstore.go/filestore.go ``scheduling.add(seq,
    subj, schedule.UnixNano())``): int64 arithmetic, so a time past 2262-04-11T23:47:16Z (or
    before 1677) wraps around as Go's multiplication does. nats-server 2.15.1 accepts
    ``@at 9999-12-31T23:59:59Z`` and, the wrapped value lying in the past, fires it at once;
    the engine stores the same value and so does the same (tests/live/
    test_parity_schedules.py)."""
    return (ns + (1 << 63)) % (1 << 64) - (1 << 63)


def _round_s(ns: int) -> int:
    """Go's ``Time.Round(time.Second)`` (halves away from zero, i.e. up for times)."""
    return (ns + _SECOND // 2) // _SECOND * _SECOND


def _go_format(ns: int, loc: tzinfo | None) -> str:
    """``t.In(loc).Format(time.RFC3339Nano)``."""
    if loc is None or loc is UTC:
        from ..clock import format_rfc3339_nano

        return format_rfc3339_nano(ns)
    secs, frac = divmod(ns, _SECOND)
    t = datetime.fromtimestamp(secs, tz=UTC).astimezone(loc)
    text = t.strftime("%Y-%m-%dT%H:%M:%S")
    if frac:
        text += f".{frac:09d}".rstrip("0")
    off = t.utcoffset() or timedelta(0)
    total = int(off.total_seconds())
    if total == 0:
        return text + "Z"
    sign = "-" if total < 0 else "+"
    total = abs(total)
    return f"{text}{sign}{total // 3600:02d}:{total % 3600 // 60:02d}"


_PREDEFINED = {
    "@yearly": "0 0 0 1 1 *", "@annually": "0 0 0 1 1 *", "@monthly": "0 0 0 1 * *",
    "@weekly": "0 0 0 * * 0", "@daily": "0 0 0 * * *", "@midnight": "0 0 0 * * *",
    "@hourly": "0 0 * * * *",
}


def parse_schedule(pattern: str, loc: tzinfo | None, ts: int, now: int
                   ) -> tuple[int | None, bool, str] | None:
    """``parseMsgSchedule``: (next fire time in ns, repeating, that time as the server writes
    it in ``Nats-Schedule-Next``), ``(None, False, "")`` for an empty pattern (Go's zero
    ``time.Time``: no schedule; ``@at 1970-01-01T00:00:00Z`` is time 0, a schedule due at
    once), None when the pattern is invalid. ``ts`` is the time the next one is counted
    from, ``now`` the clock."""
    if not pattern:
        return None, False, ""
    try:
        if pattern.startswith("@at "):
            if loc is not None:  # no time zone for @at
                return None
            return _parse_rfc3339(pattern[4:]), False, ""
        if pattern.startswith("@every "):
            if loc is not None:  # no time zone for @every
                return None
            from ..durations import DurationError, parse_go_duration

            try:
                dur = parse_go_duration(pattern[7:])
            except DurationError:
                return None
            if dur < _SECOND:
                return None
            nxt = _round_s(ts) + dur
            if nxt < now:  # due several times (a restart): skip ahead, fire once
                nxt = _round_s(now) + dur
            return nxt, True, _go_format(nxt, None)
        cron = _PREDEFINED.get(pattern, pattern)
        nxt = _next_cron(cron, loc, ts)
        if nxt < now:
            nxt = _next_cron(cron, loc, _round_s(now))
        return nxt, True, _go_format(nxt, loc)
    except _Invalid:
        return None


# --- cron (parseCron: six fields, seconds first) ------------------------------------------------
_STAR = 1 << 63
_MONTHS = {n: i + 1 for i, n in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
_DAYS = {n: i for i, n in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
_BOUNDS: list[tuple[int, int, dict[str, int] | None]] = [
    (0, 59, None), (0, 59, None), (0, 23, None), (1, 31, None), (1, 12, _MONTHS), (0, 6, _DAYS),
]


def _int(expr: str, names: dict[str, int] | None = None) -> int:
    if names is not None and expr.lower() in names:
        return names[expr.lower()]
    try:
        n = parse_int(expr)  # strconv.Atoi: 64 bits, else an error (the pattern is invalid)
    except IntTextError:
        raise _Invalid(expr) from None
    if n < 0:
        raise _Invalid(expr)
    return n


def _range(expr: str, lo: int, hi: int, names: dict[str, int] | None) -> int:
    range_step = expr.split("/")
    low_high = range_step[0].split("-")
    extra = 0
    if low_high[0] in ("*", "?"):
        start, end, extra = lo, hi, _STAR
    else:
        start = _int(low_high[0], names)
        if len(low_high) == 1:
            end = start
        elif len(low_high) == 2:
            end = _int(low_high[1], names)
        else:
            raise _Invalid(expr)
    if len(range_step) == 1:
        step = 1
    elif len(range_step) == 2:
        step = _int(range_step[1])
        if len(low_high) == 1:  # "N/step" means "N-max/step"
            end = hi
        if step > 1:
            extra = 0
    else:
        raise _Invalid(expr)
    if start < lo or end > hi or start > end or step == 0:
        raise _Invalid(expr)
    bits = 0
    for i in range(start, end + 1, step):
        bits |= 1 << i
    return bits | extra


def _field(text: str, lo: int, hi: int, names: dict[str, int] | None) -> int:
    bits = 0
    for expr in (p for p in text.split(",") if p):
        bits |= _range(expr, lo, hi, names)
    return bits


def _local(y: int, mo: int, d: int, h: int, mi: int, s: int, loc: tzinfo) -> datetime:
    """Go's ``time.Date`` (out-of-range values normalised) in ``loc``."""
    y += (mo - 1) // 12
    mo = (mo - 1) % 12 + 1
    naive = datetime(y, mo, 1) + timedelta(days=d - 1, hours=h, minutes=mi, seconds=s)
    return naive.replace(tzinfo=loc)


def _abs_add(t: datetime, seconds: int, loc: tzinfo) -> datetime:
    return (t.astimezone(UTC) + timedelta(seconds=seconds)).astimezone(loc)


def _next_cron(pattern: str, loc: tzinfo | None, ts: int) -> int:
    fields = pattern.split()
    if len(fields) != 6:
        raise _Invalid(pattern)
    sec, minute, hour, dom, month, dow = (
        _field(f, lo, hi, names) for f, (lo, hi, names) in zip(fields, _BOUNDS, strict=True))
    zone: tzinfo = loc if loc is not None else UTC
    t = datetime.fromtimestamp(ts // _SECOND + 1, tz=UTC).astimezone(zone)
    truncated = False
    year_limit = t.year + 5

    def day_matches(t: datetime) -> bool:
        dom_match = (1 << t.day) & dom > 0
        dow_match = (1 << ((t.weekday() + 1) % 7)) & dow > 0
        if dom & _STAR or dow & _STAR:
            return dom_match and dow_match
        return dom_match or dow_match

    while True:  # WRAP
        if t.year > year_limit:
            raise _Invalid(pattern)
        wrapped = False
        while not (1 << t.month) & month:
            if not truncated:
                truncated = True
                t = _local(t.year, t.month, 1, 0, 0, 0, zone)
            t = _local(t.year, t.month + 1, t.day, t.hour, t.minute, t.second, zone)
            if t.month == 1:
                wrapped = True
                break
        if wrapped:
            continue
        while not day_matches(t):
            if not truncated:
                truncated = True
                t = _local(t.year, t.month, t.day, 0, 0, 0, zone)
            t = _local(t.year, t.month, t.day + 1, t.hour, t.minute, t.second, zone)
            if t.day == 1:
                wrapped = True
                break
        if wrapped:
            continue
        while not (1 << t.hour) & hour:
            if not truncated:
                truncated = True
                t = _local(t.year, t.month, t.day, t.hour, 0, 0, zone)
            t = _abs_add(t, 3600, zone)
            if t.hour == 0:
                wrapped = True
                break
        if wrapped:
            continue
        while not (1 << t.minute) & minute:
            if not truncated:
                truncated = True
                t = _abs_add(t, -t.second, zone)
            t = _abs_add(t, 60, zone)
            if t.minute == 0:
                wrapped = True
                break
        if wrapped:
            continue
        while not (1 << t.second) & sec:
            truncated = True
            t = _abs_add(t, 1, zone)
            if t.second == 0:
                wrapped = True
                break
        if wrapped:
            continue
        return int(t.timestamp()) * _SECOND


# --- the publish refusals -----------------------------------------------------------------------
def check(st: ScheduledStream, subject: str, hdr: bytes | None, fv: dict[str, str]
          ) -> ApiError | tuple[bytes | None, dict[str, str]]:
    """The server's schedule rules for a client publish (not a sourced message), after the
    expected-sequence checks: the refusal, or the header block and first values to store
    (a schedule message gets ``Nats-Rollup: sub`` when it has no rollup)."""
    d = st.d
    allowed = d.allow_schedules
    # getMessageSchedule(hdr): the time zone first, then the pattern, at the clock's time.
    loc, err = load_location(fv)
    parsed = None if err is not None else parse_schedule(
        fv.get(H.SCHEDULE, ""), loc, st.txn.now, st.txn.now)
    if err is not None or parsed is None:
        if not allowed:
            return nats_error("MessageSchedulesDisabled")
        return err if err is not None else nats_error("MessageSchedulesPatternInvalid")
    if parsed[0] is not None:
        if not allowed:
            return nats_error("MessageSchedulesDisabled")
        ttl = fv.get(TTL, "")
        if ttl and parse_msg_ttl(ttl)[1] is not None:
            return nats_error("MessageSchedulesTTLInvalid")
        rollup = fv.get(ROLLUP, "")
        if rollup and rollup != "sub":
            return nats_error("MessageSchedulesRollupInvalid")
        if ttl and not d.allow_ttl:
            return nats_error("MessageTTLDisabled")
        target = fv.get(TARGET, "")
        if not target or not is_valid_publish_subject(target) or target == subject:
            return nats_error("MessageSchedulesTargetInvalid")
        source = fv.get(SOURCE, "")
        if source and (source in (target, subject) or not is_valid_publish_subject(source)):
            return nats_error("MessageSchedulesSourceInvalid")
        subjects = d.cfg.subjects or []
        if not any(overlaps(s, target) for s in subjects):
            return nats_error("MessageSchedulesTargetInvalid")
        if source and not any(overlaps(s, source) for s in subjects):
            return nats_error("MessageSchedulesSourceInvalid")
        own_rollup = (fv.get(H.ROLLUP) or "").lower()
        if not own_rollup:
            hdr = H.append_header(hdr, H.ROLLUP, "sub")
            fv = dict(fv)
            fv[H.ROLLUP] = "sub"
        elif own_rollup != "sub":
            return nats_error("MessageSchedulesRollupInvalid")
    nxt = fv.get(H.SCHEDULE_NEXT)
    if nxt:
        # A client may use Nats-Schedule-Next only to purge a schedule, naming it.
        if nxt != PURGE:
            return nats_error("MessageSchedulesSchedulerInvalid")
        scheduler = fv.get(H.SCHEDULER, "")
        if not scheduler or scheduler == subject or not is_valid_publish_subject(scheduler):
            return nats_error("MessageSchedulesSchedulerInvalid")
        if not allowed:
            return nats_error("MessageSchedulesDisabled")
        last = st.last_seq_for(scheduler)
        if last:
            st.flush()
            m = load_msg(st.conn, d.id, last)
            if m is not None and not (m.hdr and H.first_values(m.hdr).get(H.SCHEDULE)):
                return nats_error("MessageSchedulesSchedulerInvalid")
    elif fv.get(H.SCHEDULER):
        return nats_error("MessageSchedulesSchedulerInvalid")
    return hdr, fv


# --- the store's bookkeeping ----------------------------------------------------------------------
def _ensure(conn: sqlite3.Connection) -> None:
    row = conn.execute("SELECT version FROM schema_components WHERE component = ?",
                       (COMPONENT,)).fetchone()
    version = row[0] if row else 0
    while version < len(SCHEMA_STEPS):
        for stmt in SCHEMA_STEPS[version]:
            conn.execute(stmt)
        version += 1
        conn.execute(
            "INSERT INTO schema_components(component, version) VALUES (?, ?) "
            "ON CONFLICT(component) DO UPDATE SET version = excluded.version",
            (COMPONENT, version))


def _has_table(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM schema_components WHERE component = ?",
                        (COMPONENT,)).fetchone() is not None


def after_store(st: ScheduledStream, subject: str, fv: dict[str, str], seq: int) -> None:
    """After a message was stored as ``seq`` on ``subject``: any message on a schedules
    stream (``fv`` empty for one without headers, which cancels a schedule on its subject as
    ``storeRawMsg``'s ``removeSubject`` does), or one carrying ``Nats-Schedule-Next`` on any
    stream."""
    d = st.d
    nxt = fv.get(H.SCHEDULE_NEXT, "")
    scheduler = fv.get(H.SCHEDULER, "")
    if nxt == PURGE and scheduler:
        # processJetStreamMsgWithRollup: the one-shot schedule is purged.
        st.purge(subject=scheduler)
        st.notify_purge(scheduler)
    if not d.allow_schedules:
        return
    conn = st.conn
    _ensure(conn)
    loc, err = load_location(fv)
    parsed = None if err is not None else parse_schedule(
        fv.get(H.SCHEDULE, ""), loc, st.last_ts, st.txn.now)
    if parsed is not None and parsed[0] is not None:
        conn.execute(
            "INSERT INTO msg_schedules(stream_id, subject, seq, due) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(stream_id, subject) DO UPDATE SET seq = excluded.seq, "
            "due = excluded.due", (d.id, subject, seq, _unix_nano(parsed[0])))
    elif not scheduler:
        conn.execute("DELETE FROM msg_schedules WHERE stream_id = ? AND subject = ?",
                     (d.id, subject))
    if nxt == PURGE and scheduler:
        conn.execute("DELETE FROM msg_schedules WHERE stream_id = ? AND subject = ?",
                     (d.id, scheduler))
    elif nxt and scheduler:
        try:
            at = _parse_rfc3339(nxt)
        except _Invalid:
            return
        conn.execute("UPDATE msg_schedules SET due = ? WHERE stream_id = ? AND subject = ?",
                     (_unix_nano(at), d.id, scheduler))


def forget_stream(conn: sqlite3.Connection, stream_id: int) -> None:
    """A deleted stream's schedules."""
    if _has_table(conn):
        conn.execute("DELETE FROM msg_schedules WHERE stream_id = ?", (stream_id,))


def schedules_of(conn: sqlite3.Connection, stream_id: int) -> list[tuple[str, int, int]]:
    """(subject, sequence, next due ns) of a stream's schedules, by sequence."""
    if not _has_table(conn):
        return []
    return [(r[0], r[1], r[2]) for r in conn.execute(
        "SELECT subject, seq, due FROM msg_schedules WHERE stream_id = ? ORDER BY seq",
        (stream_id,))]


# --- firing ---------------------------------------------------------------------------------------
def due(conn: sqlite3.Connection, d: StreamDef, now: int) -> bool:
    """Cheap check: would :func:`fire` publish (or drop) anything now?"""
    if not _has_table(conn):
        return False
    return conn.execute(
        "SELECT 1 FROM msg_schedules WHERE stream_id = ? AND due <= ? LIMIT 1",
        (d.id, now)).fetchone() is not None


def _strip(hdr: bytes | None, prefixes: tuple[bytes, ...], names: tuple[bytes, ...]
           ) -> bytes | None:
    """``removeHeaderIfPrefixPresent`` / ``removeHeaderIfPresent`` over several keys."""
    if not hdr:
        return hdr
    lines = hdr.split(b"\r\n")
    kept = [lines[0]]
    for ln in lines[1:]:
        name = ln.partition(b":")[0]
        if ln and (name.startswith(prefixes) or name in names):
            continue
        kept.append(ln)
    return b"\r\n".join(kept)


def fire(st: ScheduledStream) -> int:
    """Publish every schedule of the stream that is due at the transaction's time, in
    sequence order (``getScheduledMessages``); returns how many messages were published."""
    d = st.d
    conn = st.conn
    now = st.txn.now
    st.flush()
    rows = conn.execute(
        "SELECT subject, seq, due FROM msg_schedules WHERE stream_id = ? AND due <= ? "
        "ORDER BY seq", (d.id, now)).fetchall()
    fired = 0
    for subject, seq, at in rows:
        st.flush()
        m = load_msg(conn, d.id, seq)
        fv = H.first_values(m.hdr) if m is not None and m.hdr else {}
        loc, err = load_location(fv)
        parsed = None if err is not None else parse_schedule(fv.get(H.SCHEDULE, ""), loc,
                                                             at, now)
        target = fv.get(TARGET, "")
        ttl = fv.get(TTL, "")
        if (m is None or m.subject != subject or parsed is None or parsed[0] is None
                or not target or (ttl and parse_msg_ttl(ttl)[1] is not None)):
            conn.execute("DELETE FROM msg_schedules WHERE stream_id = ? AND subject = ?",
                         (d.id, subject))
            continue
        _nxt, repeat, nxt_text = parsed
        hdr, data = m.hdr, m.data
        source = fv.get(SOURCE, "")
        if source:
            # The source's last message, or the schedule's own content when it has none.
            last = st.last_seq_for(source)
            sm = load_msg(conn, d.id, last) if last else None
            if sm is not None:
                hdr, data = sm.hdr, sm.data
        hdr = _strip(hdr, (b"Nats-Schedule", b"Nats-Expected-"),
                     (H.MSG_ID.encode(), H.MSG_TTL.encode(), H.ROLLUP.encode()))
        hdr = H.append_header(hdr, H.SCHEDULER, subject)
        hdr = H.append_header(hdr, H.SCHEDULE_NEXT, nxt_text if repeat else PURGE)
        if ttl:
            hdr = H.append_header(hdr, H.MSG_TTL, ttl)
        rollup = fv.get(ROLLUP, "")
        if rollup:
            hdr = H.append_header(hdr, H.ROLLUP, rollup)
        ack = st.append(target, hdr, data, sourced=True)
        if isinstance(ack, ApiError):
            # Not stored (a limit): a repeating schedule waits for its next time, a one-shot
            # one stays stored without firing again (the server keeps it in flight).
            if repeat and _nxt is not None:
                conn.execute("UPDATE msg_schedules SET due = ? WHERE stream_id = ? AND "
                             "subject = ?", (_unix_nano(_nxt), d.id, subject))
            else:
                conn.execute("DELETE FROM msg_schedules WHERE stream_id = ? AND subject = ?",
                             (d.id, subject))
            continue
        fired += 1
    st.flush()
    return fired
