"""Failback: after a failover, the old origin back as a mirror of the promoted stream, its
divergent tail saved, then (``switch``) the original topology restored.

One implementation over the JetStream interface and core/dr/rules.py's ``Site`` (both
backends); the site methods failback adds are ``side`` (the old origin's site), ``source_for``
(how a stream there mirrors one here), ``kv`` (jetlink's own records), ``settle`` (let a
mirror copy: the embedded replication pump, or waiting for a live server), ``agreed_prefix``
and ``reuse_as_mirror`` (what the old origin keeps of its messages).

Run against the promoted stream P (its metadata holds ``jetlink.promoted_mirror``: the mirror
it was and its last sequence L at the promotion, core/dr/rules.py ``PROMOTED_KEY``):

1. the old origin O is found from that record (its name; its domain or cluster from the
   mirror's external API); it must answer.
2. the divergent tail: O's messages with sequences above L, which the mirror never copied,
   are saved whole (sequence, subject, headers, data, time) to a Parquet dataset in the lake
   schema (core/lake.py ``export_stream_api`` from L + 1, resumable). The save is verified
   before anything of O is removed: the dataset's rows are counted and must be exactly O's
   messages above L (the same count, distinct sequences within the range, O's last sequence
   unchanged). An empty tail saves nothing. O's messages at or below L that P does not hold
   (older than P's first sequence, or in P's gaps: a KV mirror's smaller history), and that
   O does not keep (step 3), are saved the same way beside the tail and counted there
   (core/dr/unmatched.py, step save-unmatched).
3. O's config and its durable consumers (config and position) are recorded, O is deleted
   and created again as a mirror of P (a stream update cannot add ``mirror``: the server
   refuses a change of it), and it catches up. O's consumers are not recreated on the
   mirror: they come back when the switch makes O the primary again (step 4). Where the
   engine allows it (embedded), O keeps its messages up to the divergence point, those a
   mirror of P would copy first unchanged: deleted and created again in one transaction
   with them (core/dr/reuse.py); on nats-server nothing is kept (``reuse`` in the report
   says what was kept and copied, and why).
4. ``switch``, once O has caught up: P's consumers are recorded and synced to O's side
   (core/dr/positions.py ``sync``), P is sealed (it takes no more writes: a producer still
   sending there is refused, nothing is accepted and then lost), O is promoted with promote's
   rules (caught up and reachable, core/dr/rules.py ``prepare`` / ``carry_out``) and its own
   config back, and the consumers are placed:

   - the consumers O had (moved to P by the failover) are placed on O at their positions on
     P (after their ack floor, clamped to O's last sequence);
   - O's recorded consumers that P does not have are placed at their ack floor, but not
     beyond L (O's sequences above L were the tail: P's messages there are others);
   - P's other consumers (its own as a mirror, or made during the outage) stay on P.

   Then P is deleted and created again as the mirror it was (the record's mirror, its config
   otherwise), its own consumers recreated at their positions (a mirror keeps its origin's
   sequences). The round trip ends in the original topology.

Crash safety: a record of the plan and its progress is written first, in jetlink's own
Key-Value bucket :data:`BUCKET` of P's side (key: P's name), holding what a step destroys
(O's config and consumers, P's consumers and config, the tail's path) before the step
runs; each step checks what is there before acting. A run stopped at any point is finished
by running the same command again; at the end of the switch the record is replaced by the
outcome (phase ``done``: when, the old origin), what a re-run reports ("already failed back
at ...").
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..config.codec import user_metadata
from ..config.stream import StreamConfig, StreamSource
from ..config.validate import DEFAULT_DUPLICATE_WINDOW
from ..errors import ApiError, JetlinkError, UsageError
from .failback_record import BUCKET, DONE, FailbackStore
from .fence import region_of, unfenced_config
from .fencing import (
    DIVERGENCE_KEY,
    PROMOTED_KEY,
    fenced_subjects,
    mirror_window,
    with_fence,
    without_fence,
)
from .positions import PositionStore
from .positions import sync as sync_positions
from .reuse import OriginChanged, Reuse
from .rules import (
    Naming,
    PlacedConsumer,
    Position,
    PromoteRefused,
    Site,
    _stamp,
    _was_mirror,
    count_pending,
    is_durable,
    one_line,
    place,
    placed_config,
    plural,
    prepare,
)
from .unmatched import (
    Selection,
    count_messages,
    count_selection,
    dataset_rows,
    save_selection,
    select,
)
from .unmatched import unmatched_path as _unmatched_path

__all__ = ["BUCKET", "FailbackReport", "FailbackStore", "Step", "TailReport", "default_tail",
           "failback"]

SUBJECTS_SHOWN = 100  # per-subject counts of the tail listed in the report
PAUSE_ENV = "JETLINK_FAILBACK_PAUSE"  # test seam: a step after which the run sleeps (_pause)
RESUME_ENV = "JETLINK_FAILBACK_RESUME"  # with it: a file whose creation ends that pause


def default_tail(stream: str, now_ns: int) -> str:
    """The tail's default dataset: ``./failback-<stream>-<UTC time>`` (absolute)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now_ns / 1e9))
    return os.path.abspath(f"failback-{stream}-{stamp}")


# --- the record ---------------------------------------------------------------------------------
# --- the report ---------------------------------------------------------------------------------
@dataclass
class TailReport:
    """The divergent tail: the old origin's messages after the promoted last sequence."""

    path: str
    from_seq: int
    messages: int = 0
    first_seq: int = 0
    last_seq: int = 0
    subjects: dict[str, int] = field(default_factory=dict)
    saved: bool = False
    verified: bool = False
    note: str = ""
    # the datasets earlier runs began writing and did not finish (a path that could not be
    # written, a disk that filled), left as they are when a re-run was given another --tail
    abandoned: list[str] = field(default_factory=list)
    # where ``path`` comes from: "given" (--tail of this run), "recorded" (the first run's),
    # "default" (./failback-<stream>-<UTC time>)
    path_from: str = "recorded"

    def to_json(self) -> dict[str, Any]:
        shown = dict(sorted(self.subjects.items(), key=lambda kv: (-kv[1], kv[0]))
                     [:SUBJECTS_SHOWN])
        out: dict[str, Any] = {"path": self.path, "path_from": self.path_from,
                               "from_seq": self.from_seq,
                               "messages": self.messages, "first_seq": self.first_seq,
                               "last_seq": self.last_seq, "subjects": shown,
                               "subjects_total": len(self.subjects), "saved": self.saved,
                               "verified": self.verified, "abandoned": list(self.abandoned)}
        if self.note:
            out["note"] = self.note
        return out

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> TailReport:
        return cls(str(doc["path"]), int(doc["from_seq"]), int(doc.get("messages", 0)),
                   int(doc.get("first_seq", 0)), int(doc.get("last_seq", 0)),
                   dict(doc.get("subjects") or {}), bool(doc.get("saved")),
                   bool(doc.get("verified")), str(doc.get("note", "")),
                   [str(x) for x in doc.get("abandoned") or []])


@dataclass
class Step:
    """One step of a failback: ``status`` done | planned | skipped | waiting."""

    step: str
    status: str
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "status": self.status, "detail": self.detail}


@dataclass
class FailbackReport:
    """The outcome of :func:`failback` (``to_json``: the CLI's --json document)."""

    stream: str
    cluster: str
    kind: str  # "stream" | "kv"
    origin: dict[str, Any]  # {"stream", "domain"|"cluster", "reachable"}
    promoted_last_seq: int
    dry_run: bool
    switch: bool
    resumed: bool = False
    tail: TailReport | None = None
    # the old origin's messages at or below the promoted sequence the promoted stream does
    # not hold (core/dr/unmatched.py), saved beside the tail; None when there are none
    unmatched: TailReport | None = None
    origin_consumers: list[dict[str, Any]] = field(default_factory=list)
    mirror: dict[str, Any] = field(default_factory=dict)  # the old origin as a mirror
    # what the old origin kept of its messages (core/dr/reuse.py Reuse.to_json): messages,
    # upto_seq, copied (by the mirror after them), reason
    reuse: dict[str, Any] = field(default_factory=lambda: Reuse().to_json())
    placed: list[PlacedConsumer] = field(default_factory=list)  # on the old origin (switch)
    restored: list[PlacedConsumer] = field(default_factory=list)  # on the promoted side (switch)
    steps: list[Step] = field(default_factory=list)
    state: str = ""  # "mirroring" | "switched"
    complete: bool = False
    already_done: bool = False  # failed back by an earlier run: nothing done now
    failed_back_at: str | None = None  # when the switch finished (already_done)

    def mirror_doc(self, stream: str, place: str, last_seq: int, behind: int
                   ) -> dict[str, Any]:
        """The report's ``mirror``: the stream that mirrors, with its cluster or domain (the
        key the origin's has), where it stands."""
        kind = "domain" if "domain" in self.origin else "cluster"
        return {"stream": stream, kind: place, "last_seq": last_seq, "behind": behind,
                "caught_up": behind == 0}

    @property
    def here(self) -> str:
        """The promoted stream with its cluster or domain (``KV_CONFIG@east``): a KV
        bucket's stream has the same name on both sides."""
        return _at(self.stream, self.cluster)

    @property
    def there(self) -> str:
        """The old origin with its cluster or domain (``KV_CONFIG@west``)."""
        kind = "domain" if "domain" in self.origin else "cluster"
        return _at(str(self.origin["stream"]), str(self.origin.get(kind) or ""))

    def step(self, name: str, status: str, detail: str = "") -> None:
        self.steps.append(Step(name, status, detail))

    def to_json(self) -> dict[str, Any]:
        return {
            "stream": self.stream, "cluster": self.cluster, "kind": self.kind,
            "dry_run": self.dry_run, "switch": self.switch, "resumed": self.resumed,
            "origin": self.origin, "promoted_last_seq": self.promoted_last_seq,
            "tail": self.tail.to_json() if self.tail is not None else None,
            "unmatched": self.unmatched.to_json() if self.unmatched is not None else None,
            "origin_consumers": self.origin_consumers, "mirror": self.mirror,
            "reuse": self.reuse,
            "placed": [p.to_json() for p in self.placed],
            "restored": [p.to_json() for p in self.restored],
            "steps": [s.to_json() for s in self.steps],
            "state": self.state, "complete": self.complete,
            "already_done": self.already_done, "failed_back_at": self.failed_back_at,
        }


# --- helpers ------------------------------------------------------------------------------------
def _at(name: str, place: str) -> str:
    """``NAME@PLACE`` (a stream with its cluster or domain); the name alone without one."""
    return f"{name}@{place}" if place else name


def _pause(step: str) -> None:
    """The documented test seam for crash tests: with ``JETLINK_FAILBACK_PAUSE=STEP`` the run
    prints ``failback step: STEP`` on stderr once that step is done and sleeps (60 s), so
    that a test can SIGKILL the process right there and run the command again; with
    ``JETLINK_FAILBACK_RESUME=FILE`` too it goes on as soon as FILE exists (a test changes
    something in between: what a concurrent writer would)."""
    if os.environ.get(PAUSE_ENV) == step:
        import sys

        print(f"failback step: {step}", file=sys.stderr, flush=True)
        resume = os.environ.get(RESUME_ENV)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (resume and os.path.exists(resume)):
            time.sleep(0.05)


def _abs(path: str) -> str:
    """A local dataset path made absolute (a run resumed elsewhere finds it); a URI as is."""
    return path if "://" in path else os.path.abspath(os.path.expanduser(path))


def _cfg_doc(cfg: StreamConfig) -> dict[str, Any]:
    doc = cfg.to_json()
    meta = {k: v for k, v in user_metadata(doc.get("metadata")).items() if k != PROMOTED_KEY}
    doc["metadata"] = meta
    if not meta:
        doc.pop("metadata")
    return doc


def _divergence_mark(run: _Run, cfg: StreamConfig) -> StreamConfig:
    """``cfg`` (the old origin created again) with :data:`DIVERGENCE_KEY` when it held
    messages past the divergence point: another mirror that copied them keeps them, and
    ``dr check`` compares it there (core/dr/readiness.py ``_grade_agreement``)."""
    import json

    tail = run.rec.get("tail") or {}
    after, cut = int(run.report.promoted_last_seq), int(tail.get("cut") or 0)
    if not tail.get("messages") or cut <= after:
        return cfg
    record = {"after": after, "last": cut, "at": _stamp(run.site.now_ns())}
    cfg.metadata = {**(cfg.metadata or {}),
                    DIVERGENCE_KEY: json.dumps(record, separators=(",", ":"))}
    return cfg


def _divergence_note(cfg: StreamConfig, after: int) -> str:
    """What the step says of :func:`_divergence_mark`'s record ("" without one); ``after``:
    this failback's promoted sequence (a record of another is an earlier failback's, kept:
    the mirrors it names may still have to be re-seeded)."""
    from .fencing import divergence

    cut = divergence(cfg)
    if cut is None:
        return ""
    if cut[0] != after:
        return (f"; the mark of an earlier failback stays (its sequences {cut[0] + 1}.."
                f"{cut[1]}: jetlink dr check still names a mirror that copied them)")
    return (f"; any other mirror that copied its sequences {cut[0] + 1}..{cut[1]} keeps "
            "them: jetlink dr check names each (Diverged), to re-seed")


def _as_mirror(doc: dict[str, Any], mirror: dict[str, Any], window: Any = None
               ) -> StreamConfig:
    """A stream config recorded as a mirror of ``mirror`` (what a mirror cannot have
    dropped: subjects, sources, transforms, republish, a first sequence, a seal), its
    duplicate_window the mirror's own (``window``, from the promotion record; without one,
    none when the promoted stream's is the default the server gave it: core/config/
    validate.py ``_check_duplicate_window``, which gives a mirror none)."""
    cfg = StreamConfig.from_json(dict(doc), strict=False)
    if isinstance(window, int) and not isinstance(window, bool) and window >= 0:
        cfg.duplicate_window = window
    elif cfg.duplicate_window == min(DEFAULT_DUPLICATE_WINDOW,
                                     cfg.max_age or DEFAULT_DUPLICATE_WINDOW):
        cfg.duplicate_window = 0
    cfg.mirror = StreamSource.from_json(mirror, strict=False)
    cfg.subjects = []
    cfg.sources = []
    cfg.subject_transform = None
    cfg.republish = None
    cfg.first_seq = 0
    cfg.sealed = False
    return cfg


def _positions(infos: Sequence[Any]) -> list[dict[str, Any]]:
    out = []
    for info in infos:
        cfg = info.config.to_json()
        if is_durable(cfg):
            p = Position.of_info(info)
            out.append({"name": p.consumer, "config": p.config, "ack_floor": p.ack_floor,
                        "delivered": p.delivered})
    return out


def _position(doc: dict[str, Any], ack_floor: int | None = None) -> Position:
    return Position(str(doc["name"]), dict(doc["config"]),
                    int(doc["ack_floor"] if ack_floor is None else ack_floor),
                    int(doc.get("delivered", 0)))


def _create(js: Any, stream: str, pos: Position, start: int, clamped: bool) -> PlacedConsumer:
    p = PlacedConsumer(pos.consumer, pos.ack_floor, start, clamped)
    try:
        js.add_consumer(stream, placed_config(pos, start), action="create")
        p.status = "created"
    except ApiError as err:
        if err.err_code != 10148:  # consumer name already in use: left as it is
            raise
        p.status = "exists"
    return p


def _stream(js: Any, name: str) -> Any:
    """StreamInfo of ``name``, or None when it does not exist (10059)."""
    try:
        return js.stream_info(name)
    except ApiError as err:
        if err.err_code == 10059:
            return None
        raise


def _read_tail(js: Any, stream: str, lo: int, hi: int, tail: TailReport) -> None:
    """Count the tail ``lo..hi`` of ``stream`` (a dry run: read, nothing written)."""
    tail.messages, first, last, tail.subjects = count_messages(js, stream, lo, hi)
    if tail.messages:
        tail.first_seq = tail.first_seq or first
        tail.last_seq = last


def _save_tail(js: Any, stream: str, tail: TailReport, cut: int, ours: bool) -> None:
    """Save ``stream``'s messages ``tail.from_seq .. cut`` to ``tail.path`` and verify the
    dataset holds exactly them. A dataset of that cut already there (an earlier run's) is
    verified again, not written again; ``ours``: an earlier run wrote there (its dataset of
    another cut is replaced; anything else there is refused)."""
    from .. import lake

    def export(force: bool) -> None:
        try:
            lake.export_stream_api(js, stream, tail.path, start_seq=tail.from_seq, force=force,
                                   config=unfenced_config)
        except OSError as exc:
            err = lake._os_error(exc, tail.path, "cannot write")
            # the re-run's way out (_retarget_tail): another --tail is taken
            err.description += (f": nothing of {stream} was deleted; run again with another "
                                "--tail parquet:PATH (what was begun here is left as it is)")
            raise err from None
        except lake.LakeError as err:  # another dataset, or other files, there
            err.description += (f": nothing of {stream} was deleted; run again with another "
                                "--tail parquet:PATH")
            raise

    from ..agreements import identity

    ident = identity(js.stream_info(stream).created_ns)

    def cut_of() -> int | None:  # the cut of a dataset of this stream (this incarnation)
        meta = lake.read_meta(tail.path)
        if meta is None or meta.get("name") != stream or meta.get("identity") != ident:
            return None
        return int(meta["state"]["last_seq"])

    if cut_of() != cut:
        export(force=ours)  # an unfinished export of an earlier run resumes
        if cut_of() != cut:  # resumed one made with an older cut: written again
            export(force=True)
    expected = count_pending(js, stream, tail.from_seq, None, [])
    rows, distinct, first, last, subjects = dataset_rows(tail.path, stream)
    if int(js.stream_info(stream).state.last_seq) != cut:
        raise _Grew()
    if not (rows == distinct == expected and (rows == 0 or (
            first >= tail.from_seq and last <= cut))):
        raise JetlinkError(
            f"the divergent tail saved to {tail.path} does not hold what {stream} holds after "
            f"sequence {tail.from_seq - 1} ({rows} rows, {distinct} sequences, {expected} "
            "messages): nothing was deleted; move the dataset away and run again",
            field="tail")
    tail.messages, tail.first_seq, tail.last_seq = rows, first, last
    tail.subjects, tail.saved, tail.verified = subjects, True, True


def _already(site: Site, stream: str, info: Any, back: dict[str, Any], kind: str,
             dry_run: bool, switch: bool) -> FailbackReport:
    """The report of a failback an earlier run finished (``back``: its record, phase
    :data:`DONE`: when, the old origin, the promoted last sequence): nothing is done."""
    report = FailbackReport(stream, site.label, kind, dict(back["origin"]),
                            int(back.get("promoted_last_seq") or 0), dry_run, switch,
                            state="switched", complete=True, already_done=True,
                            failed_back_at=str(back.get("at") or "") or None)
    lag = int((getattr(info, "mirror", None) or {}).get("lag", 0))
    report.mirror = report.mirror_doc(stream, site.label, int(info.state.last_seq), lag)
    # where the first run saved what it saved (a re-run reports it, not null)
    if (back.get("tail") or {}).get("path"):
        report.tail = TailReport.from_json(back["tail"])
    if (back.get("unmatched") or {}).get("verified"):
        report.unmatched = TailReport.from_json(back["unmatched"])
        report.unmatched.path_from = "as the failback saved it"
    when = f" at {report.failed_back_at}" if report.failed_back_at else ""
    report.step("finish", "skipped",
                f"already failed back{when}: {report.there} is the primary again, "
                f"{report.here} its mirror")
    return report


class _Grew(Exception):
    """The old origin took messages while its tail was saved."""


# --- failback -----------------------------------------------------------------------------------
def failback(site: Site, stream: str, *, tail: str | None = None, switch: bool = False,
             dry_run: bool = False, kind: str = "stream", timeout: float = 30.0,
             on_step: Callable[[Step], None] | None = None,
             tail_at: int | None = None) -> FailbackReport:
    """Fail back the promoted stream ``stream`` of ``site`` (this module's opening has the
    steps). ``tail``: the dataset directory of the divergent tail (default
    :func:`default_tail`; a run resumed keeps the one recorded first). ``switch``: also
    switch back once the old origin caught up. ``kind``: "kv" for a bucket's stream (the
    words only). ``timeout``: seconds a live mirror is waited for. ``on_step``: called
    after each step done (the CLI's progress). ``tail_at``: the time the default tail's
    name carries (a plan shown before the run names the dataset the run writes)."""
    js = site.js
    store = FailbackStore(site.kv())
    rec = store.read(stream)
    finished = None
    if rec is not None and rec.get("phase") == DONE:  # an earlier failback, finished
        finished, rec = rec, None
    info = _stream(js, stream)
    if info is None and rec is None:
        if kind == "kv":  # a bucket not there: said as kv failover says it (rules.py)
            from ..config.kvnames import bucket_of_stream
            from ..kv import bucket_not_found

            raise bucket_not_found(bucket_of_stream(stream) or stream, js.stream_names())
        js.stream_info(stream)  # the server's 10059
    promoted = _promoted_from(stream, info, rec)
    if promoted is None:  # a mirror
        if finished is not None:  # a re-run of a failback that finished: what it is
            if tail:
                _no_tail_after(stream, finished, _abs(tail))
            return _already(site, stream, info, finished, kind, dry_run, switch)
        raise JetlinkError(f"stream {stream} is a mirror: failback is run against the stream "
                           "a failover promoted", field="stream")
    mirror_doc, last = promoted
    origin_name = str(mirror_doc["name"])
    probe = StreamConfig.from_json({"name": stream, "mirror": mirror_doc}, strict=False)
    if rec is None:
        _refuse_filtered(stream, origin_name, probe)
    facts = _old_origin(site, probe, origin_name, last)
    osite = site.side(probe)
    if rec is None:  # a tail to save: pyarrow asked for before the run records anything
        oinfo = _stream(osite.js, origin_name)
        if oinfo is not None and oinfo.config.mirror is None \
                and int(oinfo.state.last_seq) > last:
            _tail_needs_pyarrow(origin_name, stream, last + 1, int(oinfo.state.last_seq))
    report = FailbackReport(stream, site.label, kind,
                            {"stream": origin_name, facts.kind: facts.cluster,
                             "reachable": True},
                            last, dry_run, switch, resumed=rec is not None)
    run = _Run(site, osite, stream, origin_name, report, store, dry_run, timeout, on_step,
               tail_at=tail_at)
    _record_plan(run, rec, info, mirror_doc, tail)  # step "record"
    planned = False
    if run.rec["phase"] == "mirror":
        # steps save-tail, record-consumers, delete-origin, create-mirror
        planned = _to_mirror(run)
        assert info is not None
        promoted_apart = _mirror_state(run, info, facts, planned, switch)
        if not switch:
            _wait_for_switch(run, promoted_apart)
            return report
    # a switch begun (the promoted stream sealed) is finished by any run: the report says so
    report.switch = True
    _switch(run, info, planned)  # step "switch" and the steps it is made of
    return report


@dataclass
class _Run:
    """One failback run: the promoted stream's site and the old origin's, the record (``rec``,
    :class:`FailbackStore`) and the report, and how the run goes (dry, its time-out, the
    caller's progress)."""

    site: Site
    osite: Site
    stream: str
    origin_name: str
    report: FailbackReport
    store: FailbackStore
    dry_run: bool
    timeout: float
    on_step: Callable[[Step], None] | None
    rec: dict[str, Any] = field(default_factory=dict)
    tail_at: int | None = None  # the default tail's time (None: now)

    def done(self, name: str, detail: str = "") -> None:
        """Step ``name`` done (planned, in a dry run): reported, shown, the test seam."""
        s = Step(name, "planned" if self.dry_run else "done", detail)
        self.report.steps.append(s)
        if not self.dry_run:
            if self.on_step is not None:
                self.on_step(s)
            _pause(name)

    def save(self) -> None:
        """The record written (not in a dry run)."""
        if not self.dry_run:
            self.store.write(self.stream, self.rec)


class OriginSilent(JetlinkError):
    """A failback refused because its old origin does not answer: nothing to leave out
    (``--skip``) but to wait for it."""


def _promoted_from(stream: str, info: Any, rec: dict[str, Any] | None
                   ) -> tuple[dict[str, Any], int] | None:
    """The mirror ``stream`` was and its last sequence L at the promotion: from the failback
    record, else from the stream's ``PROMOTED_KEY`` metadata. None when the stream is a
    mirror; refused when it was not promoted by jetlink."""
    was = _was_mirror(info.config) if info is not None else None
    if rec is not None:
        return dict(rec["mirror"]), int(rec["promoted_last_seq"])
    if was is not None:
        assert was[0].mirror is not None
        return was[0].mirror.to_json(), was[1]
    if info is not None and info.config.mirror is not None:
        return None
    if info is not None and PROMOTED_KEY in (info.config.metadata or {}):
        raise JetlinkError(f"stream {stream}'s {PROMOTED_KEY} is not a record jetlink wrote "
                           "(not the mirror and a last sequence from 0 to 2^63-1): changed by "
                           "hand, it can not be failed back; restore the record, or edit the "
                           "stream back into a mirror of its origin", field="stream")
    raise JetlinkError(f"stream {stream} was not promoted by jetlink (its metadata holds no "
                       f"{PROMOTED_KEY}): there is nothing to fail back", field="stream")


def _refuse_filtered(stream: str, origin_name: str, probe: StreamConfig) -> None:
    """Refused before a first run changes anything: a mirror of part of its origin."""
    if probe.mirror is not None and (
            probe.mirror.filter_subject or probe.mirror.subject_transforms):
        # The old origin's messages the mirror never copied are not only its tail: those the
        # filter left out sit below the promoted sequence too, and would be removed with the
        # old stream when it is made a mirror.
        raise JetlinkError(
            f"stream {stream} mirrored only part of {origin_name} (a filter or subject "
            f"transforms): failback would remove {origin_name}'s messages the mirror never "
            "held, below the promoted sequence as well as after it; fail back an unfiltered "
            "mirror, or move those messages yourself (stream export) first", field="stream")


def _old_origin(site: Site, probe: StreamConfig, origin_name: str, last: int) -> Any:
    """The old origin's facts (``Site.origin``): it must answer, or be missing (an earlier
    run deleted it)."""
    both: Any = site  # each site's origin() counts nothing when asked not to
    facts, _ojs = both.origin(probe, last, count_pending=False)
    missing = not facts.reachable and (facts.error or "").startswith(
        f"stream {origin_name} not found")
    if not facts.reachable and not missing:
        raise OriginSilent(
            f"the old origin {origin_name} ({facts.where}) does not answer ({facts.silence}): "
            "failback needs it: run the same command again once it answers", field="stream")
    return facts


def _consumers_shown(consumers: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The report's ``origin_consumers``: the recorded consumers' names and positions."""
    return [{"name": c["name"], "ack_floor": c["ack_floor"], "delivered": c["delivered"]}
            for c in consumers]


def _record_plan(run: _Run, rec: dict[str, Any] | None, info: Any,
                 mirror_doc: dict[str, Any], tail: str | None) -> None:
    """Step record: the plan written before any change (a first run), or the record found
    taken on (its tail moved to another ``--tail`` when allowed); the report's tail."""
    report, stream = run.report, run.stream
    last = report.promoted_last_seq
    now = run.site.now_ns()
    path_from = "given" if tail else "recorded"
    if rec is None:
        assert info is not None
        run.rec = {"stream": stream, "kind": report.kind, "mirror": mirror_doc,
                   "promoted_last_seq": last, "origin": report.origin, "phase": "mirror",
                   "tail": {"path": _abs(tail) if tail else
                            default_tail(run.origin_name, run.tail_at or now),
                            "from_seq": last + 1},
                   "stream_config": _cfg_doc(info.config),
                   "mirror_window": mirror_window(info.config)}
        path_from = "given" if tail else "default"
        run.save()
        run.done("record", f"the plan, in bucket {BUCKET} of {run.site.label or 'this server'}")
    else:
        run.rec = rec
        if tail and _abs(tail) != rec["tail"]["path"]:
            _retarget_tail(stream, rec, _abs(tail))
            run.save()
    report.tail = TailReport.from_json(run.rec["tail"])
    report.tail.path_from = path_from
    if (run.rec.get("unmatched") or {}).get("verified"):
        report.unmatched = TailReport.from_json(run.rec["unmatched"])
        report.unmatched.path_from = _unmatched_from(run.rec, report.unmatched.path)
    report.origin_consumers = _consumers_shown(run.rec.get("origin_consumers", []))
    if "reuse" in run.rec:
        report.reuse = Reuse.from_json(run.rec["reuse"]).to_json()


def _mirror_state(run: _Run, info: Any, facts: Any, planned: bool, switch: bool) -> bool:
    """The report's ``mirror``: the old origin as a mirror of the promoted stream and how far
    it has copied (waited for up to the time-out with ``switch``). True when the old origin
    was promoted on its side instead (a switch begun by hand)."""
    report, origin_name = run.report, run.origin_name
    oinfo = _stream(run.osite.js, origin_name)
    target = int(info.state.last_seq)
    promoted_apart = False
    if planned:  # created as a mirror holding what it keeps (the reuse): up to there
        last_now = int(report.reuse.get("upto_seq") or 0)
    elif oinfo is None:  # pragma: no cover - created above
        raise JetlinkError(f"stream {origin_name} ({facts.where}) is missing")
    elif oinfo.config.mirror is not None:
        last_now = (int(oinfo.state.last_seq) if run.dry_run else
                    run.osite.settle(origin_name, target, run.timeout if switch else 0))
        held = oinfo if run.dry_run else run.osite.js.stream_info(origin_name)
        # what the mirror holds besides the messages it kept: what it copied
        report.reuse["copied"] = max(int(held.state.messages) - report.reuse["messages"], 0)
    elif PROMOTED_KEY in (oinfo.config.metadata or {}):
        promoted_apart, last_now = True, int(oinfo.state.last_seq)
    else:
        raise JetlinkError(f"stream {origin_name} ({facts.where}) is not a mirror of "
                           f"{run.stream}", field="stream")
    report.mirror = report.mirror_doc(origin_name, facts.cluster, last_now,
                                      max(target - last_now, 0))
    return promoted_apart


def _wait_for_switch(run: _Run, promoted_apart: bool) -> None:
    """A run without ``--switch`` ends mirroring: the switch is reported waiting."""
    report = run.report
    report.state = "mirroring"
    what = "was promoted on its side" if promoted_apart else (
        "has caught up" if report.mirror["caught_up"] else
        f"is {plural(report.mirror['behind'], 'message')} behind")
    report.step("switch", "waiting",
                f"{report.there} {what}: run again with --switch to make it the "
                f"primary again and {report.here} its mirror")
    report.complete = not run.dry_run


def _no_tail_after(stream: str, finished: dict[str, Any], path: str) -> None:
    """A re-run of a finished failback given ``--tail``: the path its tail went to, or
    refused (exit 2): a re-run never exits 0 with a flag it did not honour."""
    old = finished.get("tail") or {}
    if old.get("path") == path:
        return
    where = (f"its divergent tail went to parquet:{old['path']}" if old.get("path") else
             "its divergent tail was dealt with then")
    raise UsageError(f"{stream} already failed back at {finished.get('at') or 'an earlier run'} "
                     f"and {where}: nothing is written to --tail parquet:{path}; run again "
                     "without --tail", field="tail")


def _retarget_tail(stream: str, rec: dict[str, Any], path: str) -> None:
    """A re-run given another ``--tail``: the tail goes there from now on, unless an earlier
    run saved it and counted it where it is (then it is the dataset: refused, exit 2). A
    dataset an earlier run began and did not finish (a path it could not write, a disk that
    filled) is left as it is and named in the report (``abandoned``)."""
    old = rec["tail"]
    if old.get("verified") and int(old.get("messages") or 0):
        raise UsageError(
            f"the divergent tail of {stream} was saved to parquet:{old['path']} and counted "
            f"there ({plural(old['messages'], 'message')}) by an earlier run: it is not "
            f"written again to --tail parquet:{path}; run again without --tail (move the "
            "dataset yourself to keep it elsewhere)", field="tail")
    abandoned = [str(x) for x in old.get("abandoned") or []]
    if old.get("writing") and old["path"] not in abandoned:
        abandoned.append(str(old["path"]))
    rec["tail"] = {"path": path, "from_seq": int(old["from_seq"]), "abandoned": abandoned}


_NO_TAIL = "no message after the promoted last sequence: nothing to save"


def _to_mirror(run: _Run) -> bool:
    """The old origin made a mirror of the promoted stream: steps save-tail,
    record-consumers and delete-origin (again while it takes messages meanwhile: three
    tries), then create-mirror. True when a dry run only planned them (the old origin is not
    a mirror yet)."""
    planned = created = moved = False
    for _attempt in range(3):
        oinfo = _stream(run.osite.js, run.origin_name)
        if oinfo is None or oinfo.config.mirror is not None or _promoted_mirror_of(
                run.stream, oinfo):
            break  # (promoted on its side after this failback made it our mirror: the
            # switch finishes; its messages are the promoted stream's, no tail of its own)
        cut = int(oinfo.state.last_seq)
        if not _save_tail_step(run, cut):
            continue  # it took messages while its tail was saved: save the longer tail
        reuse = _compare(run)  # recorded with the old origin's consumers
        _save_unmatched_step(run, reuse)
        _record_origin(run, oinfo)
        _hold_sources(run)
        if not run.dry_run and int(
                run.osite.js.stream_info(run.origin_name).state.last_seq) != cut:
            continue  # it took messages meanwhile: save the longer tail
        if not run.dry_run and _unmatched_moved(run, reuse):
            moved = True  # the promoted side dropped more meanwhile (its limits): save again
            continue
        if reuse.upto and not _reuse_origin(run, reuse):
            if int(run.osite.js.stream_info(run.origin_name).state.last_seq) != cut:
                continue  # it took messages since compared: save the longer tail
            reuse = _not_reused(run)  # a message removed since compared (an expiry)
            _save_unmatched_step(run, reuse)  # nothing kept: more of it goes
        if reuse.upto:
            created = True
        else:
            _delete_origin(run, oinfo)
        planned = run.dry_run
        oinfo = None
        break
    else:
        if moved:
            raise JetlinkError(
                f"{run.report.here} keeps dropping messages {run.report.there} holds (its "
                "limits: max_age, max_msgs, max_bytes) while they are saved: nothing was "
                "deleted; run again (or raise its limits for the failback)", field="stream")
        raise JetlinkError(f"{run.origin_name} keeps taking messages while its tail is saved: "
                           "stop its producers and run again (nothing was deleted)",
                           field="stream")
    if oinfo is None and not created:
        _create_mirror(run)
    tail = run.report.tail
    assert tail is not None
    if tail.note or tail.messages == 0:
        tail.note = tail.note or _NO_TAIL
    return planned


def _held_after(js: Any, stream: str, seq: int) -> Any:
    """The first message ``stream`` still holds after sequence ``seq`` (None: none; one
    removed, moved by an operator, is not held)."""
    return next(iter(js.messages(stream, start_seq=seq + 1, chunk=1)), None)


def _promoted_mirror_of(stream: str, oinfo: Any) -> bool:
    """Whether the old origin is a mirror of ``stream`` that was promoted on its side (its
    PROMOTED_KEY names that mirror): made so by a failback, then ``stream promote``d."""
    was = _was_mirror(oinfo.config)
    return was is not None and was[0].mirror is not None and was[0].mirror.name == stream


def _tail_needs_pyarrow(origin: str, stream: str, lo: int, hi: int) -> None:
    """Refuse a failback whose divergent tail (``lo..hi`` of ``origin``) is to be saved as
    Parquet when pyarrow is not installed, saying what installs it."""
    from .. import lake

    lake.require_pyarrow(
        f"saving the divergent tail of {origin} (sequences {lo}..{hi}, after the promoted "
        "stream's last) as Parquet",
        f"; nothing of {origin} or {stream} was changed: run the failback again once it is "
        "installed")


def _save_tail_step(run: _Run, cut: int) -> bool:
    """Step save-tail: the old origin's messages above L up to ``cut`` saved and counted
    (a dry run: counted only). False when the old origin took messages meanwhile."""
    tail, rec = run.report.tail, run.rec
    assert tail is not None
    ojs, origin_name = run.osite.js, run.origin_name
    if cut >= tail.from_seq:  # (read and saved with pyarrow: refused before either)
        _tail_needs_pyarrow(origin_name, run.stream, tail.from_seq, cut)
    if cut < tail.from_seq:
        tail.messages, tail.note = 0, _NO_TAIL
        # (nothing to save is all saved; a dry run says it saved nothing, as it saves none)
        tail.saved = tail.verified = not run.dry_run
        rec["tail"] = {**tail.to_json(), "subjects": tail.subjects, "cut": cut}
    elif run.dry_run:
        _read_tail(ojs, origin_name, tail.from_seq, cut, tail)
        run.done("save-tail", f"{plural(tail.messages, 'message')} "
                 f"({tail.first_seq}..{tail.last_seq}) to parquet:{tail.path}")
    else:
        ours = bool(rec["tail"].get("writing"))
        if not ours:
            rec["tail"]["writing"] = True  # from now on the dataset there is this run's
            run.save()
        try:
            _save_tail(ojs, origin_name, tail, cut, ours)
        except _Grew:
            return False
        rec["tail"] = {**tail.to_json(), "subjects": tail.subjects, "cut": cut,
                       "writing": True}
        run.save()  # saved and counted, recorded before anything else: a run killed now is
        # continued with that dataset (another --tail is refused), never a second copy
        run.done("save-tail", f"{plural(tail.messages, 'message')} "
                 f"({tail.first_seq}..{tail.last_seq}) saved to parquet:{tail.path} and "
                 "counted there")
    if tail.note:
        run.done("save-tail", tail.note)
    return True


def _save_unmatched_step(run: _Run, reuse: Reuse) -> None:
    """Step save-unmatched: the old origin's messages at or below the promoted sequence
    that the promoted stream does not hold, and that the old origin does not keep
    (``reuse``), saved beside the tail and counted there (core/dr/unmatched.py); a dry run
    counts them. Nothing (no step) when there are none."""
    rec, report = run.rec, run.report
    sel = select(run.osite.js, run.origin_name, run.site.js, run.stream,
                 report.promoted_last_seq, reuse.upto)
    if sel is None:
        if rec.pop("unmatched", None) is not None:
            run.save()
        report.unmatched = None
        return
    had = rec.get("unmatched") or {}
    # beside the tail; once saved, where it was saved (a re-run given another --tail)
    path = str(had["path"]) if had.get("verified") else _unmatched_path(rec["tail"]["path"])
    u = TailReport(path, sel.lo, path_from=_unmatched_from(rec, path))
    if run.dry_run:
        u.messages, u.first_seq, u.last_seq, u.subjects = count_selection(
            run.osite.js, run.origin_name, sel)
        report.unmatched = u
        run.done("save-unmatched", f"{_unmatched_words(run, sel, u)} to parquet:{path}")
        return
    ours = bool(had.get("writing")) and had.get("path") == path
    if not ours:
        rec["unmatched"] = {"path": path, "from_seq": sel.lo, "writing": True}
        run.save()
    u.messages, u.first_seq, u.last_seq, u.subjects = save_selection(
        run.osite.js, run.origin_name, sel, path, ours)
    u.saved = u.verified = True
    rec["unmatched"] = {**u.to_json(), "subjects": u.subjects, "writing": True,
                        "selection": sel.key}
    run.save()
    report.unmatched = u
    run.done("save-unmatched", f"{_unmatched_words(run, sel, u)} saved to parquet:{path} "
             "and counted there")


def _unmatched_from(rec: dict[str, Any], path: str) -> str:
    """Where the unmatched dataset is, in words: beside the tail, or beside the tail of the
    run that saved it (a re-run given another --tail)."""
    if path == _unmatched_path(rec["tail"]["path"]):
        return "beside the tail"
    return "beside the first run's tail, where it was saved"


def _unmatched_moved(run: _Run, reuse: Reuse) -> bool:
    """Whether what the old origin holds and the promoted side does not changed since it
    was saved (the promoted side's limits dropped more, a message removed): looked at
    again right before anything of the old origin is removed."""
    sel = select(run.osite.js, run.origin_name, run.site.js, run.stream,
                 run.report.promoted_last_seq, reuse.upto)
    saved = (run.rec.get("unmatched") or {}).get("selection")
    return (sel.key if sel is not None else None) != saved


def _unmatched_words(run: _Run, sel: Selection, u: TailReport) -> str:
    """What the step save-unmatched says of the messages it saves."""
    report = run.report
    return (f"{plural(u.messages, 'message')} of {report.there} ({u.first_seq}..{u.last_seq}) "
            f"not on {report.here}, held nowhere else ({sel.why(report.here)})")


def _record_origin(run: _Run, oinfo: Any) -> None:
    """Step record-consumers (of the old origin): its config and durable consumers
    recorded before it is deleted."""
    rec = run.rec
    # a fenced origin (core/dr/fence.py) recorded with the subjects it had: the switch
    # promotes it with them, the one way a fence is undone
    rec["origin_config"] = unfenced_config(_cfg_doc(oinfo.config))
    rec["origin_consumers"] = _positions(run.osite.js.consumers(run.origin_name))
    run.report.origin_consumers = _consumers_shown(rec["origin_consumers"])
    run.save()
    n = plural(len(rec["origin_consumers"]), "durable consumer")
    names = ", ".join(c["name"] for c in rec["origin_consumers"]) or "none"
    run.done("record-consumers", f"{n} of {run.report.there}: {names}")


def _sourcing(site: Site, origin: str, region: str) -> list[tuple[Any, int]]:
    """The streams of ``site`` that source ``origin`` of ``region`` (seen from the site),
    each with the index of that source in its config."""
    out = []
    label = str(site.label)
    for info in site.js.streams():
        for i, src in enumerate(info.config.sources or []):
            if src.name == origin and region_of(label, src) == region:
                out.append((info, i))
    return out


def _hold_sources(run: _Run) -> None:
    """Step hold-sources: the streams on either side that source the old origin O start
    their source again after what they already hold. O is about to be deleted and created
    again (as a mirror, its messages up to L the same): a source whose origin was created
    again starts over (nats-server compares the origin's identity the Nats-Stream-Source
    header carries: it would copy O again from its first message, every message twice), at
    the source's ``opt_start_seq`` when it has one. Each such source gets ``opt_start_seq``
    = (the last origin sequence it received, at most L) + 1: it receives the promoted
    side's messages after L once, and nothing twice. Computed once and recorded; set on
    each stream unless it is set already (a re-run)."""
    rec, report = run.rec, run.report
    held = rec.get("held_sources")
    if held is None:
        probe = StreamConfig.from_json({"name": run.stream, "mirror": rec["mirror"]},
                                       strict=False)
        region = region_of(str(run.site.label), probe.mirror)
        last = int(report.promoted_last_seq)
        held = []
        for site, where, side in ((run.site, region, "promoted"),
                                  (run.osite, str(run.osite.label), "origin")):
            for info, i in _sourcing(site, run.origin_name, where):
                if info.config.name in (run.stream, run.origin_name):
                    continue
                got = (info.sources[i] if i < len(info.sources) else {}).get("seq") or last
                held.append({"stream": info.config.name, "side": side, "source": i,
                             "start_seq": min(int(got), last) + 1})
        rec["held_sources"] = held
        run.save()
    shown = []
    for h in held:
        site = run.site if h["side"] == "promoted" else run.osite
        where = f"{h['stream']}@{site.label}" if site.label else h["stream"]
        shown.append(f"{where} from sequence {h['start_seq']}")
        if run.dry_run:
            continue
        info = _stream(site.js, h["stream"])
        if info is None or h["source"] >= len(info.config.sources or []):
            continue  # removed since: nothing to hold
        cfg = info.config.copy()
        src = cfg.sources[h["source"]]
        if src.name != run.origin_name or src.opt_start_seq == h["start_seq"]:
            continue
        doc = cfg.to_json()
        doc["sources"][h["source"]]["opt_start_seq"] = h["start_seq"]
        doc["sources"][h["source"]].pop("opt_start_time", None)
        site.js.update_stream(doc)
    if held:
        run.done("hold-sources", f"{report.there} is created again: its sources start after "
                 "what they hold: " + ", ".join(shown))


def _compare(run: _Run) -> Reuse:
    """Step compare: how much of the old origin a mirror of the promoted stream would copy
    identically (core/dr/reuse.py: up to the divergence point); recorded by the next step
    (record-consumers), before anything of the old origin changes."""
    report = run.report
    reuse: Reuse = run.osite.agreed_prefix(run.origin_name, run.site, run.stream,
                                           report.promoted_last_seq,
                                           (report.there, report.here))
    run.rec["reuse"] = {**reuse.to_json(), "state": reuse.state}
    report.reuse = reuse.to_json()
    run.done("compare", (f"{reuse.messages} of {report.there}'s messages kept, up to "
                         f"sequence {reuse.upto}: " if reuse.upto else "") + reuse.reason)
    return reuse


def _not_reused(run: _Run) -> Reuse:
    """The old origin lost a message between the comparison and the reuse (an expiry, a
    delete): nothing is kept this time, every message copied (recorded first)."""
    reuse = Reuse(reason=f"{run.report.there} changed while it was compared (a message "
                  "removed): nothing kept, every message copied")
    run.rec["reuse"] = {**reuse.to_json(), "state": reuse.state}
    run.report.reuse = reuse.to_json()
    run.save()
    return reuse


def _reuse_origin(run: _Run, reuse: Reuse) -> bool:
    """Step reuse-origin: the old origin deleted and created again as a mirror of the
    promoted stream keeping its messages up to the divergence point, in one transaction
    (core/dr/reuse.py). False when it changed since it was compared."""
    rec, report = run.rec, run.report
    doc = rec.get("origin_config") or {**rec["stream_config"], "name": run.origin_name}
    cfg = _divergence_mark(run, _as_mirror(doc, run.site.source_for(run.stream, run.osite)))
    if not run.dry_run:
        try:
            run.osite.reuse_as_mirror(cfg, reuse)
        except OriginChanged:
            return False
    run.done("reuse-origin", f"{report.there} as a mirror of {report.here}, keeping its "
             f"messages up to sequence {reuse.upto} ({reuse.messages} of them) and removing "
             "the rest (one transaction); its consumers come back with the switch"
             + _divergence_note(cfg, report.promoted_last_seq))
    return True


def _delete_origin(run: _Run, oinfo: Any) -> None:
    """Step delete-origin: the old origin deleted (its tail and the messages the promoted
    stream does not hold saved, it recorded)."""
    if not run.dry_run:
        run.osite.js.delete_stream(run.origin_name)
    u = run.report.unmatched
    saved = (f"; the {plural(u.messages, 'message')} not on {run.report.here} "
             f"{'would be ' if run.dry_run else ''}saved to parquet:{u.path}"
             if u is not None and u.messages else "")
    run.done("delete-origin", f"{run.report.there}, {plural(oinfo.state.messages, 'message')}"
             + saved)


def _add_stream(js: Any, cfg: StreamConfig) -> None:
    """``cfg`` created; one an earlier run created just before it stopped is left (10058)."""
    try:
        js.add_stream(cfg)
    except ApiError as err:
        if err.err_code != 10058:
            raise


def _create_mirror(run: _Run) -> None:
    """Step create-mirror: the old origin created again as a mirror of the promoted stream
    (its recorded config, ``_as_mirror``)."""
    rec, report = run.rec, run.report
    doc = rec.get("origin_config") or {**rec["stream_config"], "name": run.origin_name}
    cfg = _divergence_mark(run, _as_mirror(doc, run.site.source_for(run.stream, run.osite)))
    if not run.dry_run:
        _add_stream(run.osite.js, cfg)
    where = (cfg.mirror.external.api if cfg.mirror is not None and cfg.mirror.external
             else "the same domain")
    run.done("create-mirror", f"{report.there} as a mirror of {report.here} ({where}); its "
             "consumers come back with the switch"
             + _divergence_note(cfg, report.promoted_last_seq))


def _sync(osite: Site, mirror: str, shown: str) -> str:
    """Sync the promoted stream's consumer positions to the old origin's side
    (core/dr/positions.py); the words for the report. A bucket just created in another
    domain may take a moment before its subjects answer across a leafnode: tried three
    times. The switch does not depend on it (the failback record holds the positions)."""
    err: JetlinkError | None = None
    for attempt in range(3):
        try:
            sync_positions(osite, PositionStore(osite.kv()), [mirror])
            return f"; positions synced to {shown}'s side"
        except JetlinkError as exc:
            err = exc
            time.sleep(0.2 * (attempt + 1))
    assert err is not None
    return (f"; positions not synced to {shown}'s side ({one_line(err)}): they are in the "
            "failback record")


def _switch(run: _Run, info: Any, planned: bool) -> None:
    """Step switch: the promoted stream's consumers recorded, it sealed, the old origin
    promoted, the consumers placed, the promoted stream a mirror again with its own
    consumers, the outcome recorded (``planned``: a dry run whose old origin is not a mirror
    yet)."""
    ojs, report, rec = run.osite.js, run.report, run.rec
    if rec["phase"] == "mirror":
        _record_promoted(run, info, planned)
    info = _seal(run)
    target = int(info.state.last_seq) if info is not None and info.config.mirror is None \
        else 0
    oinfo = None if planned else _stream(ojs, run.origin_name)
    if planned or (oinfo is not None and oinfo.config.mirror is not None):
        _promote_origin(run, target, planned)
    elif oinfo is not None and fenced_subjects(oinfo.config) is not None:
        _unfence_origin(run, oinfo)
    olast = target if run.dry_run else int(ojs.stream_info(run.origin_name).state.last_seq)
    origin_names = {c["name"] for c in rec.get("origin_consumers", [])}
    theirs = {c["name"]: c for c in rec.get("stream_consumers", [])}
    _place_on_origin(run, olast, origin_names, theirs, oinfo is not None)
    _mirror_again(run)
    _restore_consumers(run, origin_names, theirs)
    if not run.dry_run:
        _record_outcome(run, olast)
    run.done("finish", f"{report.there} is the primary again, {report.here} its mirror")
    report.state = "switched"
    report.complete = not run.dry_run


def _record_promoted(run: _Run, info: Any, planned: bool) -> None:
    """Step record-consumers (of the promoted stream): its config and durable consumers
    recorded, the positions synced to the old origin's side; the record's phase
    ``switch``. Refused when it took messages after the old origin was promoted on its
    side."""
    report, rec, osite = run.report, run.rec, run.osite
    assert info is not None
    oinfo = None if planned else osite.js.stream_info(run.origin_name)
    if oinfo is not None and oinfo.config.mirror is None:  # promoted on its side
        promoted = _was_mirror(oinfo.config)
        at = promoted[1] if promoted is not None else int(oinfo.state.last_seq)
        # what it still holds after that sequence (the ones an operator moved and removed
        # are no longer its own: the switch goes on)
        later = _held_after(run.site.js, run.stream, at) if int(info.state.last_seq) > at \
            else None
        if later is not None:
            raise JetlinkError(
                f"{report.here} took messages after {report.there} was promoted "
                f"(sequences {later.seq}..{info.state.last_seq}), which the switch would "
                f"delete with it; save them (jetlink stream export), publish on "
                f"{report.there} those it does not hold (a publish a leafnode took to both "
                f"sides is on it already), remove them from {report.here} (jetlink stream "
                f"rmm {run.stream} SEQ) and run again",
                field="stream")
    rec["stream_config"] = _cfg_doc(info.config)
    rec["stream_consumers"] = _positions(run.site.js.consumers(run.stream))
    rec["phase"] = "switch"
    synced = f"; positions synced to {report.there}'s side"
    if not run.dry_run and oinfo is not None and oinfo.config.mirror is not None:
        synced = _sync(osite, run.origin_name, report.there)
    run.save()
    n = plural(len(rec["stream_consumers"]), "durable consumer")
    names = ", ".join(c["name"] for c in rec["stream_consumers"]) or "none"
    run.done("record-consumers", f"{n} of {report.here}: {names}" + synced)


def _seal(run: _Run) -> Any:
    """Step seal: the promoted stream takes no more writes, and no more publishes: sealed,
    its subjects moved aside (core/dr/fencing.py ``with_fence``) in the same update. A
    sealed stream still capturing them would answer a publish with its refusal while the
    old origin, promoted next, stores it through the leafnode: a producer told "refused"
    of a message stored, and storing it again when it retries. Fenced, its producers get no
    answer (503, no responders) until the old origin takes the subjects, then its answer
    alone. Its StreamInfo (None when an earlier run deleted it)."""
    js, report = run.site.js, run.report
    info = _stream(js, run.stream)
    if info is not None and info.config.mirror is None and (
            not info.config.sealed
            or (info.config.subjects and fenced_subjects(info.config) is None)):
        if not run.dry_run:
            cfg = with_fence(info.config) if info.config.subjects else info.config.copy()
            cfg.sealed = True
            js.update_stream(cfg)
        run.done("seal", f"{report.here} takes no more writes: sealed, its subjects moved "
                 f"aside (its producers get no answer until {report.there} takes them)")
    return info


def _promote_origin(run: _Run, target: int, planned: bool) -> None:
    """Step promote-origin: once the old origin holds the promoted stream's last sequence
    ``target``, promoted with promote's rules (core/dr/rules.py ``prepare`` /
    ``carry_out``) and its own config back."""
    osite, report, origin_name = run.osite, run.report, run.origin_name
    got = target if run.dry_run else osite.settle(origin_name, target, run.timeout)
    if got < target:
        raise PromoteRefused(
            f"{report.there} is {plural(target - got, 'message')} behind {report.here} (sealed: it "
            "takes "
            f"no more): let it catch up ({osite.catch_up}) and run again",
            pending=target - got, mirror_last_seq=got, origin_last_seq=target,
            origin=run.stream)
    orig = StreamConfig.from_json(dict(run.rec.get("origin_config") or {
        **run.rec["stream_config"], "name": origin_name}), strict=False)

    def restore(cfg: StreamConfig) -> None:
        mark = (cfg.metadata or {}).get(DIVERGENCE_KEY)  # (dr check reads it: kept)
        for name in ("description", "metadata", "allow_direct", "allow_rollup_hdrs",
                     "deny_delete", "deny_purge", "republish", "subject_transform"):
            setattr(cfg, name, getattr(orig, name))
        if mark is not None:
            cfg.metadata = {**(cfg.metadata or {}), DIVERGENCE_KEY: mark}

    if not planned:
        naming = Naming(what="mirror", shown=origin_name,
                        instead=f"let it catch up and run jetlink {report.kind} failback "
                        f"{run.stream} --switch again")
        promotion = prepare(osite, origin_name, subjects=list(orig.subjects),
                            failover=False, transfer=False, adjust=restore, naming=naming)
        if not run.dry_run:
            promotion.carry_out()
    run.done("promote-origin", f"{report.there} takes {', '.join(orig.subjects)} again, "
             f"from sequence {target + 1}")


def _unfence_origin(run: _Run, oinfo: Any) -> None:
    """Step unfence-origin: the old origin, promoted by an earlier run of this switch and
    fenced since (``dr fence`` run over the half-done switch), takes its subjects again:
    the switch makes it the primary, and a primary nothing publishes to is none."""
    cfg = without_fence(oinfo.config)
    if not run.dry_run:
        run.osite.js.update_stream(cfg)
    run.done("unfence-origin", f"{run.report.there} takes {', '.join(cfg.subjects)} again "
             "(its fence undone: the switch makes it the primary)")


def _place_on_origin(run: _Run, olast: int, origin_names: set[str],
                     theirs: dict[str, dict[str, Any]], origin_there: bool) -> None:
    """Step place-consumers: on the old origin, its consumers moved by the failover at their
    positions on the promoted stream, and its recorded consumers the promoted stream does
    not have at their own, not beyond L (``origin_there``: it exists, its consumers
    listed)."""
    ojs, origin_name = run.osite.js, run.origin_name
    last = int(run.rec["promoted_last_seq"])
    existing = set(ojs.consumer_names(origin_name)) if origin_there else set()

    def put(pos: Position) -> None:
        p = place(pos, olast)
        if pos.consumer in existing:
            p.status = "exists"
        elif not run.dry_run:
            p = _create(ojs, origin_name, pos, p.start_seq, p.clamped)
        run.report.placed.append(p)

    for name, c in theirs.items():
        if name in origin_names:  # the origin's, moved by the failover: back with P's position
            put(_position(c))
    for c in run.rec.get("origin_consumers", []):
        if c["name"] not in theirs:  # not on P: its own position, not beyond L
            put(_position(c, min(int(c["ack_floor"]), last)))
    run.done("place-consumers", ", ".join(f"{p.consumer} from {p.start_seq}"
                                          for p in run.report.placed) or "none")


def _mirror_again(run: _Run) -> None:
    """Steps delete-promoted and create-mirror-back: the promoted stream (every message on
    the old origin now) deleted and created again as the mirror it was."""
    js, ojs, report = run.site.js, run.osite.js, run.report
    info = _stream(js, run.stream)
    if info is not None and info.config.mirror is not None:
        return
    if info is not None:
        if not run.dry_run and _held_after(js, run.stream, int(
                ojs.stream_info(run.origin_name).state.last_seq)) is not None:
            raise JetlinkError(f"{report.there} does not hold every message of "
                               f"{report.here}: it was not deleted", field="stream")
        if not run.dry_run:
            js.delete_stream(run.stream)
        run.done("delete-promoted", f"{report.here}, "
                 f"{plural(info.state.messages, 'message')} (all on {report.there} now)")
    cfg = _as_mirror(run.rec["stream_config"], run.rec["mirror"], run.rec.get("mirror_window"))
    if not run.dry_run:
        _add_stream(js, cfg)
    run.done("create-mirror-back", f"{report.here} as the mirror of {report.there} it was")


def _restore_consumers(run: _Run, origin_names: set[str],
                       theirs: dict[str, dict[str, Any]]) -> None:
    """Step restore-consumers: the promoted stream's own consumers recreated on it as a
    mirror, at their positions (a mirror keeps its origin's sequences)."""
    js, report = run.site.js, run.report
    now = _stream(js, run.stream)
    existing = set(js.consumer_names(run.stream)) if now is not None and now.config.mirror \
        else set()
    for name, c in theirs.items():
        if name in origin_names:
            continue
        pos = _position(c)
        p = PlacedConsumer(name, pos.ack_floor, pos.ack_floor + 1, False)
        if name in existing:
            p.status = "exists"
        elif not run.dry_run:
            p = _create(js, run.stream, pos, pos.ack_floor + 1, False)
        report.restored.append(p)
    if report.restored:
        run.done("restore-consumers", ", ".join(f"{p.consumer} from {p.start_seq}"
                                                for p in report.restored))


def _record_outcome(run: _Run, olast: int) -> None:
    """The old origin's promotion record removed, the failback record replaced by the
    outcome, and the promoted stream's copy as a mirror waited for (the report's
    ``mirror``)."""
    ojs, report, stream = run.osite.js, run.report, run.stream
    oinfo = ojs.stream_info(run.origin_name)
    if PROMOTED_KEY in (oinfo.config.metadata or {}):
        cfg = oinfo.config.copy()
        cfg.metadata = {k: v for k, v in (cfg.metadata or {}).items() if k != PROMOTED_KEY}
        ojs.update_stream(cfg)
    # The copy is waited for before the outcome is recorded: a run killed while it waits
    # finds the switch's record and does its (idempotent) steps again, this wait included;
    # recorded first, the re-run would report "already failed back" over a mirror still
    # empty (nothing else steps it on the engine until the next write or replicate).
    got = run.site.settle(stream, olast, run.timeout)
    _pause("mirror-caught-up")
    # what a re-run reads ("already failed back at ..."): the plan's record replaced by
    # the outcome; a later failover's failback replaces it with its own plan
    run.store.write(stream, {"stream": stream, "kind": report.kind, "phase": DONE,
                             "at": _stamp(run.site.now_ns()), "origin": run.rec["origin"],
                             "promoted_last_seq": int(run.rec["promoted_last_seq"]),
                             "tail": run.rec.get("tail"),
                             "unmatched": run.rec.get("unmatched")})
    report.mirror = report.mirror_doc(stream, run.site.label, got, max(olast - got, 0))
