"""The JetStream API of a live nats-server: the second implementation of core.api.

:class:`LiveJetStream` speaks ``$JS.API`` (or ``$JS.<domain>.API``) directly, so every
document the server returns reaches ``--json`` untouched (the values' ``to_json()`` return
it as it came); ``.config`` / ``.state`` are parsed from it with the rules' own codecs.
Before a create or an update is sent, jetlink's own validation runs (the same checks and
error codes as ``jetlink validate``: jetlink.core.config.validate); what the server then
refuses comes back as the server's ApiError, as it gave it.

Hot paths run whole inside the connection's event loop (jetlink.core.live.client): publishes
are pipelined with their acknowledgements (a window of outstanding requests on one reply
subscription), stored messages are read by ordered consumers (a direct get may be answered by
any mirror with mirror_direct, holding a filtered, shorter or lagging copy: the stream's own
messages are read from the stream itself, ADR-8's way for history, keys and watch), one
message by STREAM.MSG.GET (its leader).
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import headers as H
from .. import limits as L
from ..config.codec import json_as_given
from ..config.stream import StreamConfig, pedantic_requested
from ..config.validate import JS_API_PREFIX
from ..durations import seconds_text
from ..errors import (
    ApiError,
    JetlinkError,
    NoStreamError,
    client_error,
    clip,
    nats_error,
    not_found,
)
from ..messages import BatchPubAck, Listing, PubAck, StoredMsg, StreamState
from .client import LiveConnection, LiveError, PermissionDenied, RawMsg, passing
from .client import raw_handlers as _raw_handlers
from .consumers import LiveConsumers
from .stream_info import LiveStreamInfo
from .target import api_prefix_for
from .wire import _name, _ts, encode_hdrs, name_the_field, nc_publish

__all__ = ["LiveJetStream", "LiveStreamInfo", "LiveMsg"]

PAGE = 256  # STREAM.LIST / NAMES page size (the server's)
PUB_WINDOW = 1024  # outstanding publishes awaiting their acks
PUB_RETRY_WAIT = 0.25  # a publish that met no responders is sent again after this (nats.go)
TAIL_HEARTBEAT_NS = 5_000_000_000
TAIL_INACTIVE_NS = 300_000_000_000
COLUMNS_BATCH = 65_536  # rows per batch of stored_columns
COLUMNS_QUEUED = 4  # batches received, not taken yet, before flow control is held back
COLUMNS_HEARTBEAT_NS = 1_000_000_000  # the column reader's consumer: idle heartbeat
COLUMNS_INACTIVE_NS = 60_000_000_000  # ... and how long it outlives a reader that died
COLUMNS_FLUSH_S = 0.2  # a batch open this long goes out unfilled (a trickle of messages)
# a create answered 10049 STORE_FAILED is asked again after each of these (seconds): the
# files of a stream of the same name, deleted just before, being removed (_create_stream)
STORE_FAILED = "error creating store for stream"
STORE_RETRY_DELAYS = (0.05, 0.1, 0.2, 0.4, 0.8)
COLUMNS_RESTARTS = 10  # delivery gaps tolerated in one read


class LiveMsg(StoredMsg):
    """A stored message read from a live server (the engine's StoredMsg shape); a direct
    get's ``answered_by``: the stream whose server answered it (its ``Nats-Stream``: a
    mirror_direct mirror may answer for its origin)."""

    answered_by = ""


class LiveCoreMsg:
    """A core message a live subscription received."""

    def __init__(self, raw: RawMsg, ts: int) -> None:
        self.subject = raw.subject
        self.reply = raw.reply  # (a request's inbox, a JetStream publish's ack subject)
        # the block as sent (a header given several times kept), from a raw subscription
        self.hdr = raw.block if raw.block is not None else encode_hdrs(raw.headers)
        self.data = raw.data
        self.ts = ts

    def to_json(self) -> dict[str, Any]:
        from ..clock import format_rfc3339_nano
        from ..headers import decode_headers

        return {
            "subject": self.subject,
            **({"reply": self.reply} if self.reply else {}),
            "time": format_rfc3339_nano(self.ts),
            "headers": decode_headers(self.hdr),
            "data": base64.b64encode(self.data).decode("ascii"),
        }


def _msg_of_get(doc: dict[str, Any]) -> LiveMsg:
    m = doc.get("message") or {}
    hdrs = m.get("hdrs")
    return LiveMsg(
        subject=m.get("subject", ""),
        seq=int(m.get("seq", 0)),
        ts=_ts(m.get("time")),
        hdr=base64.b64decode(hdrs) if hdrs else None,
        data=base64.b64decode(m.get("data") or ""),
    )


def _ack_of(data: bytes, subject: str, batch: bool = False) -> PubAck | JetlinkError | None:
    """The server's answer to a publish. ``batch``: an atomic batch message (ADR-50), which
    the server answers with an EMPTY reply while it stages it (None here: no PubAck yet,
    as the embedded engine's), and whose commit's PubAck carries ``batch`` and ``count``."""
    if batch and not data:
        return None
    try:
        doc = json.loads(data)
    except ValueError:
        return LiveError(f"publish to {clip(subject)}: the reply is not a PubAck: "
                         f"{data[:80]!r}")
    err = doc.get("error")
    if isinstance(err, dict):
        refused = ApiError(int(err.get("code", 500)), int(err.get("err_code", 0) or 0),
                           str(err.get("description", "")))
        rest = {k: v for k, v in doc.items() if k != "error"}  # the PubAck's stream, seq 0
        refused.response = rest or None
        return refused
    domain = str(doc.get("domain") or "") or None  # set with jetstream.domain (stream.go)
    if "batch" in doc:
        return BatchPubAck(doc.get("stream", ""), int(doc.get("seq", 0)),
                           str(doc.get("batch", "")), int(doc.get("count", 0)), domain=domain)
    return PubAck(doc.get("stream", ""), int(doc.get("seq", 0)), bool(doc.get("duplicate")),
                  doc.get("val"), domain=domain)


class LiveJetStream(LiveConsumers):
    """JetStream on a live server, through one :class:`LiveConnection`."""

    def __init__(self, conn: LiveConnection, *, api_prefix: str | None = None) -> None:
        self.conn = conn
        self.api_prefix = api_prefix or conn.target.api_prefix

    @property
    def where(self) -> str:
        return self.conn.target.shown_url

    @property
    def own_api_prefixes(self) -> frozenset[str]:
        """``$JS.API`` and the prefix this connection addresses (its domain's): the server's
        own domain name is not known without asking."""
        return frozenset((JS_API_PREFIX, self.api_prefix))

    def api(self, verb: str, doc: Mapping[str, Any] | None = None) -> dict[str, Any]:
        try:
            return self.conn.api(verb, doc, prefix=self.api_prefix)
        except ApiError as err:
            # "stream not found" names the stream, and the closest one (as the engine's)
            if err.detail is None and verb.count(".") >= 2:
                parts = verb.split(".")
                lister: Callable[[], list[str]] | None = None
                name = parts[-1]
                if err.err_code == 10059 and parts[0] == "STREAM":  # STREAM.<VERB>.<stream>
                    lister = self.stream_names
                elif err.err_code == 10059 and parts[0] == "CONSUMER":
                    # CONSUMER.<VERB>.<stream>..., CONSUMER.MSG.NEXT.<stream>.<consumer>,
                    # CONSUMER.DURABLE.CREATE.<stream>.<durable>: the stream is not there
                    at = 3 if parts[1] in ("MSG", "DURABLE") else 2
                    if at < len(parts):
                        name, lister = parts[at], self.stream_names
                elif err.err_code == 10014 and parts[0] == "CONSUMER" and len(parts) >= 4:
                    # CONSUMER.<VERB>.<stream>.<consumer>
                    lister = lambda: self.consumer_names(parts[-2])  # noqa: E731
                if lister is not None:
                    try:
                        names = lister()
                    except JetlinkError:
                        names = []
                    raise not_found(err, name, names) from None
                # "stream / consumer is offline": which one (its servers do not answer)
                if err.err_code == 10118 and parts[0] == "STREAM":
                    err.detail = parts[2]
                elif err.err_code == 10119 and parts[0] == "CONSUMER" and len(parts) >= 4:
                    err.detail = f"{parts[-2]} > {parts[-1]}"
            raise

    def close(self) -> None:
        """Flush what core publishes left in the client's buffer, then close."""
        try:
            if getattr(self, "_core_published", False):
                self.conn.flush()
        finally:
            self.conn.close()

    # -- streams ---------------------------------------------------------------------------
    def add_stream(self, cfg: StreamConfig | Mapping[str, Any]) -> LiveStreamInfo:
        from ..config.validate import check_stream_create

        cfg = _as_config(cfg)
        # jetlink's rules first (nothing is sent when they refuse), origins read live
        checked = check_stream_create(cfg, self._lookup, single_server=False,
                                      pedantic=pedantic_requested(cfg))
        try:
            return LiveStreamInfo(self._create_stream(cfg))
        except ApiError as err:
            if err.err_code == 10058:
                self._name_the_differences(err, checked)
            raise self._name_the_overlap(name_the_field(err, cfg), checked.subjects,
                                         cfg.name) from None

    def _create_stream(self, cfg: StreamConfig) -> dict[str, Any]:
        """``STREAM.CREATE``, asked again while nats-server answers that it could not set the
        stream's file store up (10049 ``error creating store for stream``) for at most
        :data:`STORE_RETRY_DELAYS`: the answer a create gets while the files of a stream of
        the same name, deleted just before, are still being removed (fileStore.Delete
        renames its directory aside and removes it in the background). A create is asked
        again as it was (a stream it made meanwhile is the same stream); the last answer is
        the error."""
        for delay in (*STORE_RETRY_DELAYS, None):  # (module-level: read at each create)
            try:
                return self.api(f"STREAM.CREATE.{cfg.name}", _request_config(cfg))
            except ApiError as err:
                if delay is None or (err.err_code, err.description) != (10049, STORE_FAILED):
                    raise
                time.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _name_the_differences(self, err: ApiError, checked: StreamConfig) -> None:
        """The server's 10058 does not say what differs; the embedded engine's rule
        (core/config/validate.py ``stored_differences``) over the stored config does."""
        from ..config.validate import stored_differences

        try:
            current = self.stream_info(checked.name).config
        except JetlinkError:
            return  # (the refusal as it came)
        said = stored_differences(checked, current)
        if said:
            err.detail = said

    def update_stream(self, cfg: StreamConfig | Mapping[str, Any]) -> LiveStreamInfo:
        from ..config.validate import check_stream_update

        cfg = _as_config(cfg)
        current = self.stream_info(cfg.name)
        checked = check_stream_update(current.config, cfg, self._lookup, single_server=False,
                                      pedantic=pedantic_requested(cfg))
        try:
            return LiveStreamInfo(self.api(f"STREAM.UPDATE.{cfg.name}", _request_config(cfg)))
        except ApiError as err:
            raise self._name_the_overlap(name_the_field(err, cfg), checked.subjects,
                                         cfg.name) from None

    def _name_the_overlap(self, err: ApiError, subjects: list[str], name: str) -> ApiError:
        """The server's ``subjects overlap with an existing stream`` (10065) does not say
        which; the embedded engine does. The other streams are checked by the server, not
        before the request (the rules see only this config and its origins), so the detail
        is found after the refusal, with the engine's rule (core/config/validate.py
        ``overlapping_stream``) over the server's streams; the code and text stay the
        server's."""
        if err.err_code != 10065 or err.detail:
            return err
        from ..config.validate import overlapping_stream

        try:
            existing = {info.config.name: info.config for info in self.streams()}
        except JetlinkError:
            return err  # the refusal as it came
        err.detail = overlapping_stream(subjects, existing, name)
        return err

    def _lookup(self, name: str) -> StreamConfig | None:
        """Another stream's config as the rules look origins up (None: not on this
        server)."""
        try:
            return self.stream_info(name).config
        except ApiError as err:
            if err.err_code == 10059:
                return None
            raise

    def delete_stream(self, name: str) -> None:
        self.api(f"STREAM.DELETE.{_name(name)}")

    def stream_info(self, name: str, *, subjects_filter: str | None = None,
                    deleted_details: bool = False) -> LiveStreamInfo:
        req: dict[str, Any] = {}
        if subjects_filter:
            req["subjects_filter"] = subjects_filter
        if deleted_details:
            req["deleted_details"] = True
        doc = self.api(f"STREAM.INFO.{_name(name)}", req or None)
        if subjects_filter:  # the server pages subjects (100,000 a page)
            subjects = dict((doc.get("state") or {}).get("subjects") or {})
            total = int(doc.get("total", len(subjects)))
            while len(subjects) < total:
                more = self.api(f"STREAM.INFO.{name}", {**req, "offset": len(subjects)})
                page = (more.get("state") or {}).get("subjects") or {}
                if not page:
                    break
                subjects.update(page)
            if subjects:
                doc["state"]["subjects"] = subjects
        return LiveStreamInfo(doc)

    def streams(self, subject: str | None = None) -> Listing:
        missing: list[str] = []
        out = [LiveStreamInfo(doc)
               for doc in self._paged("STREAM.LIST", "streams", subject, missing)]
        return Listing(sorted(out, key=lambda i: i.name), missing)

    def stream_names(self, subject: str | None = None) -> list[str]:
        return sorted(self._paged("STREAM.NAMES", "streams", subject))

    # --- a clustered stream's or consumer's RAFT group ----------------------------------
    def stream_leader_step_down(self, name: str, preferred: str | None = None) -> None:
        """``STREAM.LEADER.STEPDOWN``: the stream's leader stands down (``preferred``: the
        server its successor should be, 2.11's placement hint)."""
        body = {"placement": {"preferred": preferred}} if preferred else None
        self.api(f"STREAM.LEADER.STEPDOWN.{_name(name)}", body)

    def consumer_leader_step_down(self, stream: str, consumer: str,
                                  preferred: str | None = None) -> None:
        """``CONSUMER.LEADER.STEPDOWN``: the consumer's leader stands down."""
        body = {"placement": {"preferred": preferred}} if preferred else None
        self.api(f"CONSUMER.LEADER.STEPDOWN.{_name(stream)}.{_name(consumer)}", body)

    def stream_peer_remove(self, name: str, peer: str) -> None:
        """``STREAM.PEER.REMOVE``: ``peer`` (a server name) leaves the stream's group (the
        meta leader places the replica elsewhere)."""
        self.api(f"STREAM.PEER.REMOVE.{_name(name)}", {"peer": peer})

    def stream_configs(self) -> list[StreamConfig]:
        return [i.config for i in self.streams()]  # the server lists configs with states

    def _paged(self, verb: str, key: str, subject: str | None,
               missing: list[str] | None = None) -> list[Any]:
        """Every page of ``verb``'s ``key`` list (``missing``: gets the names the server
        could not reach, a LIST's ``missing``)."""
        items: list[Any] = []
        offset = 0
        while True:
            req: dict[str, Any] = {"offset": offset}
            if subject:
                req["subject"] = subject
            doc = self.api(verb, req)
            page = doc.get(key) or []
            gone = [str(n) for n in doc.get("missing") or []]
            items.extend(page)
            if missing is not None:
                missing.extend(n for n in gone if n not in missing)
            # a page covers ``limit`` names from its offset, those the server reached (the
            # items) and those it did not (``missing``): the next page starts after both, as
            # jsm.go's iterableRequest goes on at offset + limit (never after the items
            # alone, which lists a page's names again when some were missing)
            took = len(page) + len(gone)
            offset = int(doc.get("offset", offset)) + max(int(doc.get("limit") or 0), took)
            if not took or offset >= int(doc.get("total", 0)):
                return items

    def state(self, name: str) -> StreamState:
        return self.stream_info(name).state

    def purge_stream(self, name: str, *, subject: str | None = None, seq: int | None = None,
                     keep: int | None = None) -> int:
        req: dict[str, Any] = {}
        if subject:
            req["filter"] = subject
        if seq:
            req["seq"] = int(seq)
        if keep:
            req["keep"] = int(keep)
        doc = self.api(f"STREAM.PURGE.{_name(name)}", req or None)
        return int(doc.get("purged", 0))

    # -- messages --------------------------------------------------------------------------
    def get_msg(self, name: str, seq: int | None = None, *, last_by_subj: str | None = None,
                next_by_subj: str | None = None, direct: bool = False) -> LiveMsg:
        req: dict[str, Any] = {}
        if seq:
            req["seq"] = int(seq)
        if last_by_subj:
            req["last_by_subj"] = last_by_subj
        if next_by_subj:
            req["next_by_subj"] = next_by_subj
        try:
            return _msg_of_get(self.api(f"STREAM.MSG.GET.{_name(name)}", req))
        except PermissionDenied:
            # read from the stream's leader (a direct get may be answered by a mirror with
            # mirror_direct: filtered, shorter or lagging); by a direct get only when the
            # user may not ask the leader, as nats.go reads a bucket
            if not direct:
                raise
        return self._direct_get(name, seq, last_by_subj, next_by_subj)

    def _direct_get(self, name: str, seq: int | None, last_by_subj: str | None,
                    next_by_subj: str | None) -> LiveMsg:
        """A direct get (ADR-31): ``DIRECT.GET.<stream>.<subject>`` for the last message of
        a subject (as nats.go's KV Get asks it), else ``DIRECT.GET.<stream>`` with the
        request; the message comes back with the server's Nats-Stream / Nats-Subject /
        Nats-Sequence / Nats-Time-Stamp headers (taken off here), a 404 status when there
        is none (10037, as STREAM.MSG.GET's)."""
        if last_by_subj and not seq and not next_by_subj:
            verb, payload = f"DIRECT.GET.{_name(name)}.{last_by_subj}", b""
        else:
            req = {k: v for k, v in (("seq", int(seq or 0)), ("last_by_subj", last_by_subj),
                                     ("next_by_subj", next_by_subj)) if v}
            verb = f"DIRECT.GET.{_name(name)}"
            payload = json.dumps(req, separators=(",", ":")).encode()
        try:
            raw = self.conn.request(f"{self.api_prefix}.{verb}", payload,
                                    doing=f"DIRECT.GET {name}")
        except LiveError as err:
            if "no responders" in err.description:  # no server holds the stream
                raise nats_error("StreamNotFound", field="stream") from None
            raise
        hdrs = dict(raw.headers or {})
        status = hdrs.pop("Status", "")
        if status == "404":
            raise nats_error("NoMessageFound")
        if status:
            raise LiveError(f"DIRECT.GET {name}: {status} {hdrs.get('Description', '')}".rstrip())
        added = {k: hdrs.pop(k, "") for k in ("Nats-Stream", "Nats-Subject", "Nats-Sequence",
                                                "Nats-Time-Stamp", "Nats-Num-Pending",
                                                "Nats-Last-Sequence")}
        msg = LiveMsg(subject=added["Nats-Subject"], seq=int(added["Nats-Sequence"] or 0),
                      ts=_ts(added["Nats-Time-Stamp"]),
                      hdr=encode_hdrs(hdrs) if hdrs else None, data=raw.data)
        msg.answered_by = added["Nats-Stream"]
        return msg

    def delete_msg(self, name: str, seq: int) -> None:
        try:
            self.api(f"STREAM.MSG.DELETE.{_name(name)}", {"seq": int(seq), "no_erase": True})
        except ApiError as err:
            if err.err_code == 10057 and not err.detail and "EOF" in err.description:
                from ..limits import past_last_detail

                try:  # (one STREAM.INFO, only for this refusal: the engine's detail)
                    last = self.stream_info(name).state.last_seq
                except JetlinkError:
                    raise err from None
                err.detail = past_last_detail(int(seq), name, last)
            raise

    def subjects(self, name: str, filter: str = ">") -> dict[str, int]:
        info = self.stream_info(name, subjects_filter=filter or ">")
        return dict(info.state.subjects or {})

    def messages(self, name: str, *, start_seq: int | None = None,
                 start_time_ns: int | None = None, subject: str | None = None,
                 chunk: int = 1000) -> Iterator[LiveMsg]:
        """Stored messages in sequence order, from ``start_seq`` (or the first stored at or
        after ``start_time_ns``), of ``subject`` when given."""
        _name(name)
        pats = [subject] if subject else []
        info = self.stream_info(name)
        if info.config.retention == "workqueue":  # no consumer: one get per message
            if start_seq is None and start_time_ns is not None:
                start_seq = self._seq_at_time(name, start_time_ns, subject)
                if start_seq is None:
                    return
            yield from self._each_msg(name, max(1, int(start_seq or 1)),
                                      int(info.state.last_seq), subject)
            return
        if start_seq is None and start_time_ns is not None:
            from ..clock import format_rfc3339_nano

            yield from self._consumer_messages(name, 1, pats, policy={
                "deliver_policy": "by_start_time",
                "opt_start_time": format_rfc3339_nano(start_time_ns)})
            return
        yield from self._consumer_messages(name, max(1, int(start_seq or 1)), pats)

    def _consumer_messages(self, name: str, seq: int, patterns: Sequence[str], *,
                           policy: dict[str, Any] | None = None) -> Iterator[LiveMsg]:
        """An ordered consumer of ``patterns`` from ``seq`` (or delivering as ``policy``
        says), read until it has nothing pending (what was stored when it was made), then
        deleted."""
        tail = self.tail(name, patterns, seq - 1, policy=policy)
        try:
            pending = tail.pending
            while pending > 0:
                msg = tail.next(self.conn.timeout)
                if msg is None:
                    raise LiveError(f"stream {name}: no message from {self.where} within "
                                    f"{seconds_text(self.conn.timeout)} while {pending} were "
                                    "pending")
                yield msg
                pending = tail.pending
        finally:
            tail.close()

    def count_msgs(self, name: str, *, start_seq: int, subject: str | None = None
                   ) -> int | None:
        """The ``num_pending`` of an ordered consumer made from ``start_seq`` (then
        deleted): what the server counts; None for a work-queue stream (10098: it takes
        no consumer without acks)."""
        try:
            tail = self.tail(name, [subject] if subject else [], max(1, int(start_seq)) - 1)
        except ApiError as err:
            if err.err_code == 10098:
                return None
            raise
        try:
            return int(tail.pending)
        finally:
            tail.close()

    def _seq_at_time(self, name: str, ts_ns: int, subject: str | None) -> int | None:
        """The sequence of the first message (of ``subject``) stored at or after ``ts_ns``
        (STREAM.MSG.GET's ``start_time``); None when there is none."""
        from ..clock import format_rfc3339_nano

        req = {"start_time": format_rfc3339_nano(ts_ns), "next_by_subj": subject or ">"}
        try:
            return _msg_of_get(self.api(f"STREAM.MSG.GET.{_name(name)}", req)).seq
        except ApiError as err:
            if err.err_code == 10037:
                return None
            raise

    def last_msgs(self, name: str, patterns: Iterable[str]) -> list[LiveMsg]:
        """The latest message of every subject matching ``patterns``, by sequence: ordered
        consumers delivering the last message per subject (ADR-8's keys), read from the
        stream itself."""
        from ..subjects import disjoint_groups

        found: dict[int, LiveMsg] = {}
        if self.stream_info(name).config.retention == "workqueue":
            # (it takes no consumer without acks: each subject's last by STREAM.MSG.GET)
            for pattern in list(patterns) or [">"]:
                for subject in self.subjects(name, pattern):
                    try:
                        msg = self.get_msg(name, last_by_subj=subject)
                    except ApiError as err:
                        if err.err_code != 10037:  # (gone since it was listed)
                            raise
                        continue
                    found[msg.seq] = msg
            return [found[seq] for seq in sorted(found)]
        # a consumer's filters may not overlap (10138): one consumer per group of them
        for group in disjoint_groups(list(patterns)) or [[]]:
            for msg in self._consumer_messages(
                    name, 1, group, policy={"deliver_policy": "last_per_subject"}):
                found[msg.seq] = msg
        return [found[seq] for seq in sorted(found)]

    def tail(self, name: str, patterns: Sequence[str], after_seq: int, *,
             policy: dict[str, Any] | None = None) -> LiveTail:
        """Messages stored after ``after_seq`` matching ``patterns``, pushed by an ordered
        (ephemeral, no acks, flow-controlled) consumer as they are stored; ``policy``: its
        deliver policy instead (``last_per_subject``, ``by_start_time``)."""
        sub = self.conn.subscribe(self.conn.new_inbox(), raw=True)  # blocks as stored
        cfg: dict[str, Any] = {
            "deliver_subject": sub.subject,
            "deliver_policy": "by_start_sequence",
            "opt_start_seq": int(after_seq) + 1,
            "ack_policy": "none",
            "max_deliver": 1,
            "replay_policy": "instant",
            "flow_control": True,
            "idle_heartbeat": TAIL_HEARTBEAT_NS,
            "inactive_threshold": TAIL_INACTIVE_NS,
            "mem_storage": True,
            "num_replicas": 1,
        }
        if policy:
            del cfg["opt_start_seq"]
            cfg.update(policy)
        pats = list(patterns)
        if len(pats) == 1:
            cfg["filter_subject"] = pats[0]
        elif pats:
            cfg["filter_subjects"] = pats
        try:
            doc = self.api(f"CONSUMER.CREATE.{_name(name)}", {"stream_name": name, "config": cfg})
        except BaseException:
            sub.close()
            raise
        return LiveTail(self, name, str(doc.get("name", "")), sub,
                        pending=int(doc.get("num_pending", 0)), config=cfg,
                        created=str(doc.get("created", "")))

    def kv_write_subject(self, subject: str) -> str:
        """A KV write's subject (``$KV.<bucket>.<key>``) as sent: behind the API prefix when
        this JetStream is addressed through a domain or an API prefix, as nats.go's KV writes
        (its useJSPfx); the server maps ``$JS.<domain>.API.$KV.>`` back to ``$KV.>``
        (jetstream_api.go generateJSMappingTable), so the write reaches that domain's bucket
        even across a leafnode whose own domain has a bucket of the same name."""
        if self.api_prefix == JS_API_PREFIX:
            return subject
        return f"{self.api_prefix}.{subject}"

    def stored_subject(self, sent: str) -> str:
        """The subject a stream stores for a message sent on ``sent`` (the inverse of
        :meth:`kv_write_subject`'s prefix; other subjects are stored as sent)."""
        head = f"{self.api_prefix}."
        if self.api_prefix != JS_API_PREFIX and sent.startswith(head) and \
                sent[len(head):].startswith(("$KV.", "$OBJ.")):
            return sent[len(head):]
        return sent

    def in_domain(self, domain: str) -> LiveJetStream:
        """The JetStream API of another domain, over the same connection."""
        return LiveJetStream(self.conn, api_prefix=api_prefix_for(domain))

    # -- bulk reads as columns (jetlink stream export) ---------------------------------------
    def _each_msg(self, name: str, seq: int, stop: int, subject: str | None = None
                  ) -> Iterator[LiveMsg]:
        """The stored messages ``seq..stop`` (of ``subject``) by one STREAM.MSG.GET each
        (deleted ones skipped): the read of a workqueue stream, which refuses a consumer
        without acks (and one with acks would take its messages)."""
        while seq <= stop:
            try:
                msg = self._get_next(name, seq, subject)
            except ApiError as err:
                if err.err_code == 10037:  # nothing stored at or after seq
                    return
                raise
            if msg.seq > stop:
                return
            yield msg
            seq = msg.seq + 1

    def _get_next(self, name: str, seq: int, subject: str | None = None) -> LiveMsg:
        """The first stored message (of ``subject``) at or after ``seq``."""
        return _msg_of_get(self.api(f"STREAM.MSG.GET.{_name(name)}",
                                    {"seq": int(seq), "next_by_subj": subject or ">"}))

    def stored_columns(self, name: str, start_seq: int = 1, last_seq: int | None = None, *,
                       batch: int = COLUMNS_BATCH) -> Iterator[dict[str, Any]]:
        """The stored messages of stream ``name`` with ``start_seq <= seq <= last_seq`` (the
        stream's last sequence now when None: one consistent cut), in sequence order, as
        batches of at most ``batch`` rows: dicts of pyarrow arrays ``seq`` (int64),
        ``subject`` (string), ``ts`` (int64, ns since the epoch), ``headers`` (binary: the
        header block exactly as stored, ``NATS/1.0\\r\\n...``; null when there is none) and
        ``data`` (binary). pyarrow is imported here, when called.

        Read by one ordered push consumer (ephemeral, in memory, no acks, flow control),
        whatever the stream's ``allow_direct``: the messages are taken off the wire before
        nats-py builds its message objects (:class:`_ColumnReader`), which keeps the header
        block as the server sent it and the rate above a plain nats-py consumer's. A
        delivery gap (a consumer sequence skipped) restarts the consumer after the last
        message received, as nats-py's ordered consumers do. Workqueue streams (which take no
        consumer without acks) are read with one STREAM.MSG.GET per message. Breaking off
        the iteration deletes the consumer."""
        _name(name)
        if batch < 1:
            raise ValueError("batch must be at least 1")
        info = self.stream_info(name)
        stop = info.state.last_seq if last_seq is None else int(last_seq)
        seq = max(1, int(start_seq))
        if seq > stop or info.state.messages == 0:
            return
        if (info.config.retention == "workqueue"
                or not hasattr(self.conn.nc, "_process_msg")):
            from ..lake import message_columns

            msgs = self.messages(name, start_seq=seq)
            yield from message_columns(msgs, stop, batch)
            return
        restarts = 0
        while seq <= stop:
            reader = _ColumnReader(self, name, seq, batch)
            try:
                for cols, gap in reader.batches():
                    if cols is not None:
                        seqs = cols["seq"]
                        last = seqs[len(seqs) - 1].as_py()
                        if last > stop:
                            import pyarrow.compute as pc

                            keep = pc.sum(pc.cast(pc.less_equal(seqs, stop), "int64")).as_py()
                            cols = {k: v.slice(0, keep) for k, v in cols.items()}
                        if len(cols["seq"]):
                            yield cols
                        seq = last + 1
                        if last >= stop:
                            return
                    if gap:
                        restarts += 1
                        if restarts > COLUMNS_RESTARTS:
                            raise LiveError(f"stream {name}: reading from {self.where} "
                                            f"skipped messages {restarts} times; giving up")
                        break
                else:
                    return  # the consumer has nothing more: the rest was deleted
            finally:
                reader.close()

    # -- publish / subscribe ---------------------------------------------------------------
    def publish(self, subject: str, data: bytes = b"",
                headers: Mapping[str, Any] | None = None) -> PubAck | None:
        res = self.publish_many([(subject, data, headers)])[0]
        if isinstance(res, Exception):
            raise res
        return res

    def publish_many(self, msgs: Iterable[tuple[str, bytes, Mapping[str, Any] | None]]
                     ) -> list[PubAck | JetlinkError | None]:
        """Pipelined publishes with acknowledgements; results in order. The first refused
        message ends the list (its error is the last result): nothing more is sent after
        it is seen, though up to PUB_WINDOW messages already in flight may be stored."""
        return self._pipeline(list(msgs), stop_at_error=True)

    def publish_batch(self, msgs: Iterable[tuple[str, bytes, Mapping[str, Any] | None]]
                      ) -> list[PubAck | JetlinkError | None]:
        return self._pipeline(list(msgs), stop_at_error=False)

    def _pipeline(self, msgs: list[tuple[str, bytes, Mapping[str, Any] | None]], *,
                  stop_at_error: bool) -> list[PubAck | JetlinkError | None]:
        msgs, refused = _sendable(msgs, stop_at_error)
        if not msgs:
            return [refused] if refused is not None else []
        timeout = self.conn.timeout

        async def go(nc: Any) -> tuple[list[PubAck | JetlinkError | None],
                                       dict[str, list[str] | None]]:
            return await _PublishRun(self, nc, msgs, stop_at_error, timeout).run()

        try:
            out, known = self.conn.call(
                go, timeout=None if len(msgs) > 1000 else timeout * 2 + 5, doing="publishing")
        except LiveError as err:  # the connection lost: what was sent may be stored
            err.unacknowledged = len(msgs)
            raise
        out = self._no_responders(out, known)
        self._size_details(msgs, out)
        if refused is not None and len(out) == len(msgs) and not any(
                isinstance(res, Exception) for res in out):
            out.append(refused)
        return out

    def _size_details(self, msgs: list[tuple[str, bytes, Mapping[str, Any] | None]],
                      out: list[PubAck | JetlinkError | None]) -> None:
        """A max_msg_size refusal (10054) with the limit and the message's size, as the
        engine says it (the server's answer has neither): read from the stream's config,
        on this path only."""
        from ..headers import encode_headers
        from ..limits import message_size_detail

        for (subject, data, headers), res in zip(msgs, out, strict=False):
            if isinstance(res, ApiError) and res.err_code == 10054 and not res.detail:
                try:
                    names = self.stream_names(subject)
                    mms = self.stream_info(names[0]).config.max_msg_size if names else -1
                except JetlinkError:
                    continue
                if mms >= 0:
                    hlen = len(encode_headers(headers) or b"") if headers else 0
                    res.detail = message_size_detail(mms, hlen, len(data))
            elif isinstance(res, ApiError) and res.err_code == 10077 and not res.detail:
                hlen = len(encode_headers(headers) or b"") if headers else 0
                res.detail = self._store_full_detail(res, subject, hlen, len(data))

    def _store_full_detail(self, err: ApiError, subject: str, hlen: int, mlen: int
                           ) -> str | None:
        """A discard-new refusal (10077) with the limit and what the stream holds, as the
        engine says it (core/limits.py: one wording): read from the stream's info, on this
        path only (None when it cannot be read, or the refusal is another store's)."""
        from ..limits import max_bytes_detail, max_msgs_detail, max_per_subject_detail
        from ..streamstore.base import (
            MAX_BYTES_REFUSED,
            MAX_MSGS_REFUSED,
            MAX_PER_SUBJECT_REFUSED,
            msg_size,
        )

        why = err.description
        try:
            names = self.stream_names(subject)
            if not names:
                return None
            per = MAX_PER_SUBJECT_REFUSED in why
            info = self.stream_info(names[0], subjects_filter=subject if per else None)
        except JetlinkError:
            return None
        cfg, state = info.config, info.state
        if per and cfg.max_msgs_per_subject > 0:
            held = int((getattr(state, "subjects", None) or {}).get(subject, 0))
            return max_per_subject_detail(cfg.max_msgs_per_subject, subject, held)
        if MAX_MSGS_REFUSED in why and cfg.max_msgs > 0:
            return max_msgs_detail(cfg.max_msgs, int(state.messages))
        if MAX_BYTES_REFUSED in why and cfg.max_bytes > 0:
            size = msg_size(cfg.storage == "file", len(subject.encode()), hlen, mlen)
            return max_bytes_detail(cfg.max_bytes, int(state.bytes), size)
        return None

    def publish_fast_batch(self, msgs: Iterable[tuple[str, bytes, Mapping[str, Any] | None]],
                           *, batch_id: str, flow: int = 100, gap_ok: bool = False,
                           max_outstanding: int = 2) -> FastBatchResult:
        """One fast batch (ADR-50 fast ingest, 2.14) of ``msgs``, the last one committing:
        each message goes out with its ``...$FI`` reply subject, the server's answers come
        back on ``<inbox>.<batch id>.>`` and drive :class:`~jetlink.core.fastpublish.
        FastPublisher` (first answer awaited, outstanding flow windows, a ping when the acks
        stop coming). A :class:`~jetlink.core.fastpublish.FastBatchResult`."""
        from ..fastpublish import FastPublisher

        items = list(msgs)
        if not items:
            raise client_error("a fast batch needs at least one message")
        inbox = self.conn.new_inbox()
        pub = FastPublisher(batch_id, size=len(items), flow=flow, gap_ok=gap_ok,
                            max_outstanding=max_outstanding, prefix=inbox)
        longest = len(pub.ping()) + 8
        for subject, data, headers in items:
            hdr = H.encode_headers(headers) if headers else None
            L.check_publish(subject, len(data), hdr_len=len(hdr) if hdr else 0,
                            reply_len=longest)
        timeout = self.conn.timeout

        async def go(nc: Any) -> FastBatchResult:
            q: asyncio.Queue[Any] = asyncio.Queue()

            async def cb(msg: Any) -> None:
                q.put_nowait(msg)

            def take(msg: Any, subject: str) -> None:
                if (msg.headers or {}).get("Status") == "503":  # no responders
                    raise NoStreamError(subject)
                try:
                    doc = json.loads(msg.data)
                except ValueError:
                    raise LiveError(f"fast batch {batch_id}: an answer that is not JSON: "
                                    f"{msg.data[:80]!r}") from None
                pub.take(doc if isinstance(doc, dict) else {"error": {}})

            async def wait_one(subject: str) -> None:
                try:
                    take(await asyncio.wait_for(q.get(), timeout), subject)
                    return
                except TimeoutError:
                    pass
                await nc.publish(subject, b"", reply=pub.ping())  # the last flow ack again
                try:
                    take(await asyncio.wait_for(q.get(), timeout), subject)
                except TimeoutError:
                    raise LiveError(f"fast batch {batch_id}: no answer within "
                                    f"{seconds_text(timeout)} from {self.where} after message "
                                    f"{pub.seq:,}") from None

            sub = await nc.subscribe(pub.subscription, cb=cb, pending_msgs_limit=1_000_000,
                                     pending_bytes_limit=256 * 1024 * 1024)
            try:
                subject = items[0][0]
                for i, (subject, data, headers) in enumerate(items):
                    while not q.empty():
                        take(q.get_nowait(), subject)
                    if pub.done or pub.stopped:
                        break
                    await nc_publish(nc, subject, bytes(data),
                                     reply=pub.reply(i == len(items) - 1), headers=headers)
                    while pub.must_wait:
                        await wait_one(subject)
                while not pub.done:
                    await wait_one(subject)
            finally:
                await sub.unsubscribe()
            return pub.result

        try:
            return self.conn.call(go, timeout=None, doing="publishing a fast batch")
        except LiveError as err:  # the connection lost: what was sent may be stored
            err.unacknowledged = pub.seq
            raise

    def _no_responders(self, out: list[PubAck | JetlinkError | None],
                       known: dict[str, list[str] | None]
                       ) -> list[PubAck | JetlinkError | None]:
        """Publishes that met no responders: NoStreamError only when the server said no
        stream captures the subject; a LiveError naming the stream that did not answer when
        one does (it has no leader: an election, or too few of its servers up); and when the
        server did not say (its JetStream API did not answer either), that, never "no stream
        matches". ``known``: what the publishes' probes learnt (subject -> streams)."""
        seen: dict[str, JetlinkError] = {}
        wait = f"{seconds_text(self.conn.timeout)}"
        for i, res in enumerate(out):
            if not isinstance(res, NoStreamError):
                continue
            subject = res.subject
            if subject not in seen:
                names = known.get(subject)
                if names is None:
                    try:
                        names = self.stream_names(subject)
                    except JetlinkError:
                        names = None
                if names == []:
                    seen[subject] = res
                elif names:
                    seen[subject] = passing(LiveError(
                        f"publish to {clip(subject)}: stream {names[0]} did not answer within "
                        f"{wait} (no responders): it has no leader now, an election or too "
                        "few of its servers up; nothing was stored"))
                else:
                    seen[subject] = passing(LiveError(
                        f"publish to {clip(subject)}: no responders within {wait}, and "
                        "JetStream did not answer whether a stream captures the subject "
                        "(its leaders may be being elected); nothing was stored"))
            out[i] = seen[subject]
        return out

    def publish_core(self, subject: str, data: bytes = b"",
                     headers: Mapping[str, Any] | None = None) -> None:
        from ..subjects import invalid_subject, is_valid_publish_subject

        if not is_valid_publish_subject(subject):
            raise invalid_subject(subject)
        _check_limits(subject, data, headers, None)
        seen = self.conn.errors_seen()
        self.conn.publish(subject, bytes(data), headers=headers)
        # flushed, as natscli's pub flushes each message and then asks for the connection's
        # last error: the server's -ERR for a publish it denies comes before its PONG
        self.conn.flush()
        denied = self.conn.denied_since(seen, subject)
        if denied is not None:
            raise PermissionDenied(f"publish to {clip(subject)}: {denied}")
        self._core_published = True

    def subscribe(self, subject: str, *, queue: str = "") -> LiveCoreSubscription:
        return LiveCoreSubscription(self.conn.subscribe(subject, queue=queue, raw=True))


def _sendable(msgs: list[tuple[str, bytes, Mapping[str, Any] | None]], stop_at_error: bool
              ) -> tuple[list[tuple[str, bytes, Mapping[str, Any] | None]], JetlinkError | None]:
    """The messages of a pipeline that may be sent, and the error of the first one the
    server's limits refuse (checked before anything is sent: the server would close the
    connection). publish_many sends what comes before the refused message and ends with its
    error; publish_batch refuses the whole call, as the embedded engine."""
    from ..subjects import invalid_subject, is_valid_publish_subject

    for subject, _data, _h in msgs:
        if not is_valid_publish_subject(subject):
            raise invalid_subject(subject)
    for i, (subject, data, headers) in enumerate(msgs):
        try:
            _check_limits(subject, data, headers, i)
        except JetlinkError as err:
            if not stop_at_error:
                raise
            return msgs[:i], err
    return msgs, None


class _PublishRun:
    """One pipelined publish inside the connection's event loop (LiveJetStream._pipeline):
    up to PUB_WINDOW publishes outstanding on one reply subscription (``<inbox>.<index>``),
    each answer finishing its message; a publish that met no responders is sent again while
    the timeout lasts (:meth:`again`)."""

    def __init__(self, js: LiveJetStream, nc: Any,
                 msgs: list[tuple[str, bytes, Mapping[str, Any] | None]],
                 stop_at_error: bool, timeout: float) -> None:
        self.js, self.nc, self.msgs = js, nc, msgs
        self.stop_at_error, self.timeout = stop_at_error, timeout
        self.prefix = nc.new_inbox()
        self.results: list[PubAck | JetlinkError | None] = [None] * len(msgs)
        self.done = [False] * len(msgs)
        self.window = asyncio.Semaphore(PUB_WINDOW)
        self.failed = asyncio.Event()
        self.outstanding = 0
        self.all_in = asyncio.Event()
        self.loop = asyncio.get_running_loop()
        self.sent = 0  # messages sent (the first ``sent`` of ``msgs``)
        self.sent_at = [0.0] * len(msgs)
        # its last send met no responders (so that send stored nothing) and was not sent
        # again since
        self.refused = [False] * len(msgs)
        # subject -> the streams that capture it, as the server answered (None: no answer)
        self.known: dict[str, list[str] | None] = {}
        self.probing: dict[str, asyncio.Future[list[str] | None]] = {}
        self.no_jetstream = False  # the JetStream API itself met no responders
        self.probe_slots = asyncio.Semaphore(16)

    async def run(self) -> tuple[list[PubAck | JetlinkError | None],
                                 dict[str, list[str] | None]]:
        """Send, wait for the answers; (the results in order, what the probes learnt)."""
        # The answers are taken as the parser hands them over (no nats-py message object,
        # no callback task each): an atomic batch's staged messages are answered with
        # empty replies, one per message, while the next ones are still being sent.
        sub = await self.nc.subscribe(self.prefix + ".*", cb=_ignore)
        handlers = _raw_handlers(self.nc)
        handlers[sub._id] = self.answered
        try:
            await self.send_all()
            await self.wait_answers()
        finally:
            handlers.pop(sub._id, None)
            await sub.unsubscribe()
        await self.no_ack_unanswered()
        return self.outcome(), self.known

    async def no_ack_unanswered(self) -> None:
        """Messages unanswered after the timeout whose subject a ``no_ack`` stream captures
        were stored without an answer (the stream sends none): their result is None, as
        the engine's, not a time-out (a retry would store them twice). Asked of the server
        per subject (STREAM.NAMES, then STREAM.INFO of each stream, at most
        NO_ACK_PROBES subjects)."""
        pending = [i for i in range(self.sent) if not self.done[i] and not self.refused[i]]
        if not pending:
            return
        no_ack: dict[str, bool] = {}
        verdict: dict[str, bool] = {}
        for i in pending:
            subject = self.msgs[i][0]
            if subject not in verdict:
                if len(verdict) >= NO_ACK_PROBES:
                    continue
                streams = await self.captured(subject)
                for name in streams or []:
                    if name not in no_ack:
                        no_ack[name] = await self.stream_no_ack(name)
                verdict[subject] = bool(streams) and all(no_ack[n] for n in streams or [])
            if verdict.get(subject):
                self.finish(i, None)

    async def stream_no_ack(self, name: str) -> bool:
        """Whether stream ``name``'s config has ``no_ack`` (False when it does not answer)."""
        try:
            reply = await self.nc.request(f"{self.js.api_prefix}.STREAM.INFO.{name}", b"",
                                          timeout=min(self.timeout, 1.0))
            doc = json.loads(reply.data)
        except Exception:  # noqa: BLE001 - no answer: not known, the time-out stands
            return False
        return bool(((doc or {}).get("config") or {}).get("no_ack"))

    def finish(self, i: int, result: PubAck | JetlinkError | None) -> None:
        self.done[i] = True
        self.results[i] = result
        if isinstance(result, Exception):
            self.failed.set()
        self.outstanding -= 1
        self.window.release()
        if self.outstanding == 0:
            self.all_in.set()

    async def send_all(self) -> None:
        """Each message with its reply subject, while the window has room (waiting at most
        ``timeout`` for room); with stop_at_error, none after a refusal came back."""
        nc, prefix, window, failed = self.nc, self.prefix, self.window, self.failed
        sent_at, loop, timeout, all_in = self.sent_at, self.loop, self.timeout, self.all_in
        stop_at_error = self.stop_at_error
        for i, (subject, data, headers) in enumerate(self.msgs):
            if stop_at_error and failed.is_set():
                break
            if window.locked():  # a window full of unanswered publishes ...
                try:  # ... for `timeout`: give up
                    await self.unless_closed(window.acquire(), timeout)
                except TimeoutError:
                    break
            else:  # room: no timer, no task per message
                await window.acquire()
            self.outstanding += 1
            all_in.clear()
            sent_at[i] = loop.time()
            await nc_publish(nc, subject, bytes(data), reply=f"{prefix}.{i}", headers=headers)
            self.sent = i + 1

    async def wait_answers(self) -> None:
        """Until every publish sent is answered, or ``timeout`` passed."""
        if self.outstanding:
            loop = self.loop
            deadline = loop.time() + self.timeout
            while self.outstanding:
                try:
                    await self.unless_closed(self.all_in.wait(),
                                             max(0.01, deadline - loop.time()))
                except TimeoutError:
                    break

    async def unless_closed(self, aw: Any, timeout: float) -> Any:
        """``await asyncio.wait_for(aw, timeout)``, but a connection that closes meanwhile
        (the server gone: nats-py does not reconnect here) ends the wait at once with
        nats-py's ConnectionClosedError, said as a lost connection (core/live/client.py),
        instead of after the whole timeout for answers that cannot come."""
        import nats.errors as ne

        task = asyncio.ensure_future(aw)
        loop = self.loop
        deadline = loop.time() + timeout
        try:
            while True:
                left = deadline - loop.time()
                if left <= 0:
                    raise TimeoutError
                done, _pending = await asyncio.wait({task}, timeout=min(0.1, left))
                if done:
                    return task.result()
                if self.nc.is_closed:
                    raise ne.ConnectionClosedError
        finally:
            if not task.done():
                task.cancel()

    def answered(self, subject: bytes, _reply: bytes, data: bytes, hdr: bytes | None) -> None:
        """The server's answer to publish ``<inbox>.<index>`` (a raw handler: the parser's
        subject, reply, payload and header block)."""
        i = int(subject.rsplit(b".", 1)[1])
        if self.done[i]:
            return
        if hdr is not None and hdr[8:9] == b" " and hdr[9:12] == b"503":  # no responders
            self.refused[i] = True
            asyncio.ensure_future(self.again(i))
            return
        hs = self.msgs[i][2]
        batch = hs is not None and (b"\r\nNats-Batch-Id:" in hs if isinstance(hs, bytes)
                                    else "Nats-Batch-Id" in hs)
        self.finish(i, _ack_of(data, self.msgs[i][0], batch))

    async def probe(self, subject: str) -> list[str] | None:
        """The streams that capture ``subject`` (STREAM.NAMES; None: no answer, as while
        the cluster elects its leaders)."""
        async with self.probe_slots:
            import nats.errors as ne

            try:
                reply = await self.nc.request(f"{self.js.api_prefix}.STREAM.NAMES",
                                              json.dumps({"subject": subject}).encode(),
                                              timeout=min(self.timeout, 1.0))
                doc = json.loads(reply.data)
                found = None if "error" in doc else list(doc.get("streams") or [])
            except ne.NoRespondersError:  # no server answers the JetStream API at all (an
                found = None              # election answers it, with error 10008)
                self.no_jetstream = True
            except Exception:  # noqa: BLE001 - no answer: not known
                found = None
        if found is not None or subject not in self.known:
            self.known[subject] = found
        self.probing.pop(subject, None)
        return found

    async def captured(self, sent: str) -> list[str] | None:
        subject = self.js.stored_subject(sent)
        if self.known.get(subject) is not None:
            return self.known[subject]
        if subject not in self.probing:
            self.probing[subject] = asyncio.ensure_future(self.probe(subject))
        return await self.probing[subject]

    async def again(self, i: int) -> None:
        """A publish that met no responders: no stream captures the subject, or its stream
        has no leader for now (an election after a server went away). Nothing was stored.
        Unless the server says no stream captures the subject, it is sent again every
        PUB_RETRY_WAIT while the timeout lasts (as nats.go's JetStream publish retries);
        LiveJetStream._no_responders then names the cause."""
        subject, data, headers = self.msgs[i]
        exists = await self.captured(subject)
        if self.done[i]:
            return
        if self.no_jetstream:  # said at once, not after the timeout's retries
            self.finish(i, self.js.conn.no_jetstream(self.js.api_prefix))
            return
        if exists == [] or self.loop.time() + PUB_RETRY_WAIT - self.sent_at[i] >= self.timeout:
            self.finish(i, NoStreamError(self.js.stored_subject(subject)))
            return
        await asyncio.sleep(PUB_RETRY_WAIT)
        if self.done[i]:
            return
        self.refused[i] = False  # sent again: its fate is unknown until answered
        try:
            await nc_publish(self.nc, subject, bytes(data), reply=f"{self.prefix}.{i}",
                             headers=headers)
        except Exception as err:  # noqa: BLE001 - the connection's own error
            self.finish(i, LiveError(f"publish to {clip(subject)}: {err}"))

    def outcome(self) -> list[PubAck | JetlinkError | None]:
        """The results of the messages sent: an unanswered one whose last send met no
        responders stored nothing (NoStreamError), another unanswered one timed out; with
        stop_at_error the list ends at the first error, which carries how many were sent
        and never acknowledged (the server may have stored them)."""
        msgs, results, done, sent = self.msgs, self.results, self.done, self.sent
        for i in range(sent):
            if not done[i] and self.refused[i]:  # its last send met no responders: not stored
                done[i] = True
                results[i] = NoStreamError(self.js.stored_subject(msgs[i][0]))
            elif not done[i] and (denied := self.js.conn.denied_since(0, msgs[i][0])):
                done[i] = True  # the server let it through to no stream: nothing stored
                results[i] = PermissionDenied(f"publish to {clip(msgs[i][0])}: {denied}")
            elif not done[i]:
                results[i] = LiveError(f"publish to {clip(msgs[i][0])}: no "
                                       f"acknowledgement within {seconds_text(self.timeout)} from "
                                       f"{self.js.where}")
        out = results[:sent]
        if self.stop_at_error:
            for i, res in enumerate(out):
                if isinstance(res, Exception):
                    out = out[: i + 1]
                    break
        # Sent, never acknowledged: the server may have stored them. The caller says
        # so (the error that ends the list carries how many).
        unacked = sum(1 for i in range(sent) if not done[i])
        if unacked and out and isinstance(out[-1], Exception):
            out[-1].unacknowledged = unacked
        return out


# subjects whose streams are asked whether they are no_ack once a publish went unanswered
NO_ACK_PROBES = 16


def _check_limits(subject: str, data: bytes, headers: Mapping[str, Any] | None,
                  index: int | None) -> None:
    """core/limits.py's check of one publish (``index``: its place in a JetStream pipeline,
    whose reply is ``<inbox>.<index>``; None: a core publish, without a reply)."""
    hdr = H.encode_headers(headers) if headers else None
    L.check_publish(subject, len(data), hdr_len=len(hdr) if hdr else 0,
                    reply_len=0 if index is None else L.js_reply_len(index))


class LiveCoreSubscription:
    def __init__(self, sub: Any) -> None:
        self._sub = sub

    def next(self, timeout: float | None = 1.0) -> LiveCoreMsg | None:
        import time

        raw = self._sub.next(timeout)
        if raw is None:
            return None
        return LiveCoreMsg(raw, time.time_ns())

    def close(self) -> None:
        self._sub.close()


class LiveTail:
    """What an ordered consumer pushes (LiveJetStream.tail): ``next(timeout)`` gives the
    next stored message (flow control answered, heartbeats skipped), ``close()`` deletes
    the consumer.

    Two idle heartbeats missed (nats.go's ordered consumer watches for the same) ask the
    server why: the stream gone, or made again since the consumer was (removed and added
    while tailed), is its 10059 ``stream not found``; the consumer alone gone (a restart of
    the server, whose consumer was in memory) is made again after the last message
    delivered, as nats.go resets an ordered consumer; the consumer there, nothing."""

    def __init__(self, js: LiveJetStream, stream: str, consumer: str, sub: Any, *,
                 pending: int = 0, config: dict[str, Any] | None = None,
                 created: str = "") -> None:
        import time

        self._js, self._stream, self._consumer, self._sub = js, stream, consumer, sub
        # messages stored and not delivered yet: the consumer's num_pending when made, then
        # each delivery's (its reply subject says)
        self.pending = pending
        self._buffer: list[RawMsg] = []  # received, not handed out yet (newest first)
        self._config = dict(config or {})  # the consumer's, to make it again
        self._created = created  # when the server made the consumer (RFC 3339)
        self._last_seq = 0  # the stream sequence of the last message delivered
        self._heard = time.monotonic()  # anything received last (a heartbeat too)
        hb = int(self._config.get("idle_heartbeat", 0) or 0)
        self._missed_after = 2 * hb / 1e9 if hb > 0 else None

    def next(self, timeout: float | None = 1.0) -> LiveMsg | None:
        import time

        from .consumers import ack_metadata

        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if not self._buffer:
                now = time.monotonic()
                left = None if deadline is None else max(0.0, deadline - now)
                wait = left
                if self._missed_after is not None:
                    check = max(0.0, self._heard + self._missed_after - now)
                    wait = check if wait is None else min(wait, check)
                self._buffer = self._sub.next_many(wait)
                self._buffer.reverse()
                if not self._buffer:
                    if self._missed_after is not None and \
                            time.monotonic() - self._heard >= self._missed_after:
                        self._heartbeats_missed()
                    if deadline is not None and time.monotonic() >= deadline:
                        return None
                    continue
                self._heard = time.monotonic()
            raw = self._buffer.pop()
            if raw.status:  # 100: a heartbeat, or flow control (answered on its reply)
                if raw.reply:
                    self._js.conn.publish(raw.reply, b"")
                if deadline is not None and time.monotonic() >= deadline:
                    return None
                continue
            meta = ack_metadata(raw.reply)
            self.pending = meta["num_pending"]
            self._last_seq = int(meta["seq"])
            # the header block as delivered, which is the stored one (a header given several
            # times kept); a subscription that is not raw: rebuilt from nats-py's dict
            hdr = raw.block if raw.block is not None else encode_hdrs(raw.headers)
            return LiveMsg(subject=raw.subject, seq=meta["seq"], ts=meta["ts"],
                           hdr=hdr, data=raw.data)

    def _heartbeats_missed(self) -> None:
        """Nothing heard for two idle heartbeats: the stream gone (10059, raised), made
        again since the consumer was (the same error), or the consumer alone gone (made
        again after the last message delivered)."""
        import time

        from ..clock import parse_rfc3339_nano

        self._heard = time.monotonic()
        info = self._js.api(f"STREAM.INFO.{self._stream}")  # 10059 when the stream is gone
        try:
            self._js.api(f"CONSUMER.INFO.{self._stream}.{self._consumer}")
            return  # there: the server is slow, or busy
        except ApiError as err:
            if err.err_code != 10014:  # consumer not found
                raise
        try:
            remade = parse_rfc3339_nano(str(info.get("created", ""))) > parse_rfc3339_nano(
                self._created)
        except ValueError:
            remade = False
        if remade:
            gone = ApiError(404, 10059, "stream not found", field="stream")
            gone.detail = f"{self._stream} (removed and added again while tailed)"
            raise gone
        cfg = dict(self._config)
        if self._last_seq:
            for key in ("opt_start_time",):
                cfg.pop(key, None)
            cfg.update(deliver_policy="by_start_sequence", opt_start_seq=self._last_seq + 1)
        doc = self._js.api(f"CONSUMER.CREATE.{self._stream}",
                           {"stream_name": self._stream, "config": cfg})
        self._consumer = str(doc.get("name", ""))
        self._created = str(doc.get("created", ""))

    def close(self) -> None:
        from ..interrupts import no_interrupt

        # (a second Ctrl-C while the first ends the watch must not leave the consumer on
        # the server for its inactive threshold)
        with no_interrupt():
            try:
                self._sub.close()
                if self._consumer:
                    self._js.api(f"CONSUMER.DELETE.{self._stream}.{self._consumer}")
            except (JetlinkError, RuntimeError):
                # gone already, or the server is (or the connection was closed first: its
                # event loop with it): the consumer expires on its own
                pass


def _header_value(block: bytes, name: bytes) -> bytes:
    """The value of header ``name`` in a header block (b"" when absent)."""
    at = block.find(b"\r\n" + name + b":")
    if at < 0:
        return b""
    start = at + len(name) + 3
    end = block.find(b"\r\n", start)
    return block[start:end if end >= 0 else len(block)].strip()


async def _ignore(_msg: Any) -> None:  # the raw subscriptions' nats-py callback: never called
    return None


class _ColumnReader:
    """One ordered push consumer of a stream (:meth:`LiveJetStream.stored_columns`) whose
    messages are gathered, as the parser hands them over, into lists of subjects, reply
    subjects (the ``$JS.ACK`` metadata: sequences, time, pending), header blocks and
    payloads, inside the connection's loop; full batches (or a batch open for
    COLUMNS_FLUSH_S, or the one ending with nothing pending) go to the reading thread
    through a queue, which converts them to Arrow columns. Flow-control replies are held
    back while COLUMNS_QUEUED batches wait there, so a slow reader slows the server down
    instead of filling the memory."""

    def __init__(self, js: LiveJetStream, name: str, start: int, batch: int) -> None:
        import queue

        self._js, self._name, self._batch = js, name, batch
        self._q: queue.Queue[tuple[Any, ...]] = queue.Queue()
        self._reset_lists()
        self._opened = 0.0
        self._held = b""  # a flow-control reply held back while the queue is full
        self._v1: bool | None = None
        self._loop: Any = None
        self._sub: Any = None
        self._consumer = ""
        self._pending = 0
        inbox = js.conn.new_inbox()

        async def setup(nc: Any) -> Any:
            self._nc = nc
            self._loop = asyncio.get_running_loop()
            sub = await nc.subscribe(inbox, cb=_ignore)
            _raw_handlers(nc)[sub._id] = self._on_msg
            return sub

        self._sub = js.conn.call(setup, doing=f"subscribing to {inbox}")
        cfg: dict[str, Any] = {
            "deliver_subject": inbox,
            "deliver_policy": "by_start_sequence",
            "opt_start_seq": int(start),
            "ack_policy": "none",
            "max_deliver": 1,
            "replay_policy": "instant",
            "flow_control": True,
            "idle_heartbeat": COLUMNS_HEARTBEAT_NS,
            "inactive_threshold": COLUMNS_INACTIVE_NS,
            "mem_storage": True,
            "num_replicas": 1,
        }
        try:
            doc = js.api(f"CONSUMER.CREATE.{name}", {"stream_name": name, "config": cfg})
        except BaseException:
            self.close()
            raise
        self._consumer = str(doc.get("name", ""))
        self._pending = int(doc.get("num_pending", 0))

    # -- the loop's side -------------------------------------------------------------------
    def _reset_lists(self) -> None:
        self._subjects: list[bytes] = []
        self._replies: list[bytes] = []
        self._hdrs: list[bytes | None] = []
        self._datas: list[bytes] = []

    def _on_msg(self, subject: bytes, reply: bytes, data: bytes, hdr: bytes | None) -> None:
        import time

        if hdr is not None and hdr[8:9] == b" ":  # "NATS/1.0 100 ...": a status
            self._status(reply, hdr)
            return
        subjects = self._subjects
        subjects.append(subject)
        self._replies.append(reply)
        self._hdrs.append(hdr)
        self._datas.append(data)
        if self._v1 is None:
            self._v1 = reply.count(b".") == 8
        if self._v1:
            end = reply.endswith(b".0")
        else:
            parts = reply.split(b".")
            end = len(parts) > 10 and parts[10] == b"0"
        n = len(subjects)
        now = time.monotonic()
        if n == 1:
            self._opened = now
        if end or n >= self._batch or now - self._opened >= COLUMNS_FLUSH_S:
            self._push()
            if end:
                self._q.put(("end",))

    def _push(self) -> None:
        self._q.put(("rows", self._subjects, self._replies, self._hdrs, self._datas,
                     bool(self._v1)))
        self._reset_lists()

    def _status(self, reply: bytes, hdr: bytes) -> None:
        code = hdr[9:12]
        if code == b"100":
            if reply:  # flow control
                self._flow(reply)
                return
            stalled = _header_value(hdr, b"Nats-Consumer-Stalled")
            if stalled:
                self._flow(stalled)
            if self._subjects:
                self._push()
            last = _header_value(hdr, b"Nats-Last-Consumer")
            self._q.put(("idle", int(last) if last.isdigit() else 0))
            return
        text = hdr[9:].split(b"\r\n", 1)[0].decode("utf-8", "replace").strip()
        self._q.put(("status", text))

    def _flow(self, reply: bytes) -> None:
        if self._q.qsize() < COLUMNS_QUEUED:
            asyncio.ensure_future(self._nc.publish(reply.decode(), b""))
        else:
            self._held = reply

    def _release(self) -> None:
        if self._held and self._q.qsize() < COLUMNS_QUEUED:
            held, self._held = self._held, b""
            asyncio.ensure_future(self._nc.publish(held.decode(), b""))

    # -- the reading thread's side ---------------------------------------------------------
    def batches(self) -> Iterator[tuple[dict[str, Any] | None, bool]]:
        """``(columns, gap)`` per batch received, in order; ``gap``: the consumer skipped
        messages after these columns (read again from after them). Ends when nothing more
        is pending."""
        import queue

        import pyarrow as pa
        import pyarrow.compute as pc

        if self._pending <= 0:
            return
        js, name = self._js, self._name
        wait = max(js.conn.timeout, 5 * COLUMNS_HEARTBEAT_NS / 1e9)
        expect = 1  # the next consumer sequence
        while True:
            try:
                item = self._q.get(timeout=wait)
            except queue.Empty:
                raise LiveError(f"stream {name}: nothing from {js.where} within "
                                f"{seconds_text(wait)} while reading it (not even a "
                                "heartbeat)") from None
            if self._held:
                self._loop.call_soon_threadsafe(self._release)
            kind = item[0]
            if kind == "end":
                return
            if kind == "status":
                raise LiveError(f"stream {name}: {js.where} ended the read: {item[1]}")
            if kind == "idle":
                if item[1] > expect - 1:  # delivered and never received
                    yield None, True
                    return
                if self._q.qsize() == 0 and not self._held:
                    try:
                        info = js.api(f"CONSUMER.INFO.{name}.{self._consumer}")
                    except ApiError:
                        yield None, True  # the consumer is gone: a new one goes on
                        return
                    if int(info.get("num_pending", 0)) == 0:
                        return
                continue
            subjects, replies, hdrs, datas, v1 = item[1:]
            parts = pc.split_pattern(pa.array(replies, pa.binary()).cast(pa.string()), ".")
            base = 2 if v1 else 4

            def token(i: int) -> Any:  # called in this iteration only (no late binding)
                return pc.cast(pc.list_element(parts, base + i), pa.int64())  # noqa: B023

            dseq = token(4)
            n = len(subjects)
            cols = {"seq": token(3),
                    "subject": pa.array(subjects, pa.binary()).cast(pa.string()),
                    "ts": token(5),
                    "headers": pa.array(hdrs, pa.binary()),
                    "data": pa.array(datas, pa.binary())}
            want = pa.array(range(expect, expect + n), pa.int64())
            if not pc.all(pc.equal(dseq, want)).as_py():
                keep = pc.index(pc.equal(dseq, want), False).as_py()
                cut = {k: v.slice(0, keep) for k, v in cols.items()}
                yield (cut if keep else None), True
                return
            expect += n
            yield cols, False

    def close(self) -> None:
        sub, self._sub = self._sub, None
        conn = self._js.conn
        if sub is not None and conn.nc is not None and not conn.nc.is_closed:
            async def drop(nc: Any) -> None:
                _raw_handlers(nc).pop(sub._id, None)
                await sub.unsubscribe()

            try:
                conn.call(drop, doing="unsubscribing")
            except JetlinkError:
                pass
        if self._consumer:
            consumer, self._consumer = self._consumer, ""
            try:
                self._js.api(f"CONSUMER.DELETE.{self._name}.{consumer}")
            except JetlinkError:
                pass  # gone already, or the server is: it expires on its own


class LiveDomains:
    """KV's clusters on a live server (core/kv.py Clusters): the JetStream domains reached
    through one connection; the addressed one is the target's own."""

    kind = "domain"

    def __init__(self, js: LiveJetStream) -> None:
        self._js = js

    def js(self, name: str, *, here: bool) -> LiveJetStream:
        return self._js if here or not name else self._js.in_domain(name)

    def has_cluster(self, name: str) -> bool:
        return True  # a domain that does not answer is the API's own error

    def names(self) -> list[str]:
        return []  # a server does not list the domains it reaches

    def is_down(self, name: str) -> bool:
        return False


def _as_config(cfg: StreamConfig | Mapping[str, Any]) -> StreamConfig:
    if isinstance(cfg, StreamConfig):
        return cfg
    return StreamConfig.from_json(dict(cfg), strict=True)


def _request_config(cfg: StreamConfig) -> dict[str, Any]:
    """The config document sent to the server (what the user set; the server fills in
    its defaults and answers with the complete config; lists given empty kept, as the engine
    stores them), with the request's pedantic."""
    doc = json_as_given(cfg)
    if pedantic_requested(cfg):
        doc["pedantic"] = True
    return doc



if TYPE_CHECKING:  # mypy checks that the live client implements the seam (core/api.py)
    from ..api import JetStreamAPI, SubscriptionAPI
    from ..fastpublish import FastBatchResult

    _JETSTREAM_API: type[JetStreamAPI] = LiveJetStream
    _SUBSCRIPTION_API: type[SubscriptionAPI] = LiveCoreSubscription

