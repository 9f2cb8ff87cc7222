"""The JetStream API of one cluster on the embedded store.

``JetStream(cluster, clock)`` offers what a NATS client's JetStream manager offers (method
names follow nats-py): streams, publish, core pub/sub, and (through core/consumers.py) durable
pull consumers. Every mutating call is ONE transaction; expiry (max_age, Nats-TTL, subject
delete markers) is applied at the start of each call with the clock's time, reads included
(a read that finds something due runs the expiry in a short write transaction first).

Errors are values: ``ApiError`` with the server's codes and texts; client-side refusals
(invalid subject, payload over 1 MiB, bad header name) are ``client_error``s;
:class:`~jetlink.core.streams.NoStreamError` when no stream captures a JetStream publish.
"""

from __future__ import annotations

import contextlib
import enum
import gc
import json
import os
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final

from . import headers as H
from . import limits as L
from . import streams as S
from .clock import Clock, SystemClock, format_rfc3339_nano
from .config.codec import json_as_given
from .config.stream import StreamConfig, interest_keeps_none, pedantic_requested
from .errors import ApiError, JetlinkError, client_error, nats_error, not_found
from .fanout import CoreFanout
from .messages import Listing, PubAck, StoredMsg, StreamInfo, StreamState
from .store import Cluster
from .subjects import (
    SubjectFilter,
    invalid_subject,
    is_valid_publish_subject,
    is_valid_subject,
    overlaps,
)

if TYPE_CHECKING:
    from .config.consumer import ConsumerConfig
    from .consumers import ConsumerEngine, ConsumerInfo, DeliveredMsg
    from .fastpublish import FastBatchResult
    from .priority import PullPriority

__all__ = ["CoreMsg", "JetStream", "Subscription"]

Headers = H.Headers
# A publish as the batch takes it: (subject, data, headers) or (subject, data)
Outgoing = tuple[str, bytes, H.HeadersIn | None]
BatchItem = Outgoing | tuple[str, bytes]

SUB_LEASE_NS = 30 * 1_000_000_000  # a subscription is live this long after its last poll
# The claims of queue subscriptions (Subscription): made by the first queue member's use.
QUEUE_COMPONENT = "core_queue"
QUEUE_STEPS = [["CREATE TABLE core_claims (grp TEXT NOT NULL, msg INTEGER NOT NULL, "
                "PRIMARY KEY (grp, msg)) WITHOUT ROWID"]]


def _config_doc(cfg: StreamConfig) -> str:
    """The stored JSON of a config (lists given empty are kept, as Go keeps them)."""
    return json.dumps(json_as_given(cfg), separators=(",", ":"))


def _check_start_seqs(cfg: StreamConfig) -> None:
    """A mirror's or source's opt_start_seq past the engine's largest sequence could never
    be stored: refused when the stream is made, as its first_seq is (never a replication
    that fails on every step after an answer that said created)."""
    origins = ([("mirror", cfg.mirror)] if cfg.mirror is not None else []) + [
        (f"sources[{i}]", src) for i, src in enumerate(cfg.sources)]
    for where, src in origins:
        if src.opt_start_seq > S.MAX_SEQ:
            raise JetlinkError(f"{where}.opt_start_seq above {S.MAX_SEQ} (2^40-1) is not "
                               "supported by jetlink", field=f"{where}.opt_start_seq")


def _as_config(cfg: StreamConfig | Mapping[str, Any]) -> StreamConfig:
    if isinstance(cfg, StreamConfig):
        return cfg
    if isinstance(cfg, Mapping):
        return StreamConfig.from_json(dict(cfg), strict=True)
    raise TypeError(f"expected a StreamConfig, got {type(cfg).__name__}")


@dataclass
class CoreMsg:
    """A core NATS message seen by a subscriber."""

    subject: str
    hdr: bytes | None
    data: bytes
    ts: int
    order: int = 0  # its place among the data directory's core messages (published order)

    @property
    def headers(self) -> Headers:
        return H.decode_headers(self.hdr)

    def to_json(self) -> dict[str, Any]:
        import base64

        return {
            "subject": self.subject,
            "time": format_rfc3339_nano(self.ts),
            "headers": H.decode_headers(self.hdr),
            "data": base64.b64encode(self.data).decode("ascii"),
        }


def _batches() -> Any:
    """core/streamstore/batches.py, imported at the first atomic batch message."""
    mod = _LAZY.get("batches")
    if mod is None:
        from .streamstore import batches as mod

        _LAZY["batches"] = mod
    return mod


_LAZY: dict[str, Any] = {}


def _schedules() -> Any:
    """core/streamstore/schedules.py, imported when a stream allows message schedules."""
    from .streamstore import schedules

    return schedules


class JetStream:
    """JetStream on one cluster database (see docs/engine.md)."""

    def __init__(self, cluster: Cluster, clock: Clock | None = None,
                 hooks: S.RetentionHooks | None = None) -> None:
        self.cluster = cluster
        self.clock: Clock = clock or SystemClock()
        self._hooks = hooks
        self._valid_subjects: set[str] = set()

    @property
    def hooks(self) -> S.RetentionHooks:
        if self._hooks is None:
            from .consumer_store import ConsumerHooks

            self._hooks = ConsumerHooks()
        return self._hooks

    # --- transactions ---------------------------------------------------------------------
    @contextlib.contextmanager
    def write(self, *, expire: bool = True,
              on_commit: Callable[[], None] | None = None) -> Iterator[S.Txn]:
        """One write transaction with the engine's view (expiry applied first);
        ``on_commit`` as the data directory's transaction's (run once it has committed,
        SIGINT held between the two)."""
        with self.cluster.transaction(on_commit) as conn:
            catalog = S.Catalog.load(conn, self.cluster.cache)
            txn = S.Txn(conn, self.clock.now_ns(), catalog, self.hooks)
            if expire:
                self._expire(txn)
            yield txn
            txn.flush()

    @contextlib.contextmanager
    def read(self) -> Iterator[tuple[sqlite3.Connection, S.Catalog]]:
        """A read snapshot, after applying any expiry that is due (checked in the same
        snapshot: when nothing is due, one read transaction is all a read costs)."""
        if not self.cluster.conn.in_transaction:
            now = self.clock.now_ns()
            with self.cluster.read() as conn:
                catalog = S.Catalog.load(conn, self.cluster.cache)
                # A read-only data directory is shown as stored: expiry needs a write.
                if self.cluster.readonly or not self._due(conn, catalog, now):
                    yield conn, catalog
                    return
            self._due_work()
        with self.cluster.read() as conn:
            yield conn, S.Catalog.load(conn, self.cluster.cache)

    def _due(self, conn: sqlite3.Connection, catalog: S.Catalog, now: int) -> bool:
        return any(((d.max_age or d.allow_ttl or d.sdm_ttl_s) and S.expiry_due(conn, d, now))
                   or (d.allow_schedules and _schedules().due(conn, d, now))
                   for d in catalog.timed) or self.hooks.consumers_due(conn, now)

    def _expire(self, txn: S.Txn) -> None:
        """The due work: expiry, then message schedules that are due (ADR-51: fired at the
        first engine call at or after their time, core/streamstore/schedules.py)."""
        for d in txn.catalog.timed:
            if (d.max_age or d.allow_ttl or d.sdm_ttl_s) and S.expiry_due(txn.conn, d, txn.now):
                txn.stream(d).expire()
            if d.allow_schedules and _schedules().due(txn.conn, d, txn.now):
                _schedules().fire(txn.stream(d))

    def _due_work(self) -> None:
        """A read's due work (:meth:`_due` said some): expiry and schedules (every write
        transaction's), and the consumers past their inactive_threshold removed, as the
        server's timer removes them without a request (a consumer command runs the
        consumers' clocks itself; a publish does not read them)."""
        with self.write() as txn:
            self.hooks.expire_consumers(txn)

    def _expire_if_due(self) -> None:
        now = self.clock.now_ns()
        if self.cluster.conn and self.cluster.readonly:
            return
        with self.cluster.read() as conn:
            due = self._due(conn, S.Catalog.load(conn, self.cluster.cache), now)
        if due:
            self._due_work()

    def expire(self) -> None:
        """Apply max_age / TTL expiry now (every call does this on its own)."""
        with self.write():
            pass

    @property
    def where(self) -> str:
        """What this API acts on, for messages: the data directory's cluster."""
        return f"cluster {self.cluster.name}"

    @property
    def own_api_prefixes(self) -> frozenset[str]:
        from .config.validate import JS_API_PREFIX

        return frozenset((JS_API_PREFIX, f"$JS.{self.cluster.name}.API"))

    @staticmethod
    def _find(catalog: S.Catalog, name: str) -> S.StreamDef:
        d = catalog.by_name.get(name)
        if d is None:
            raise not_found(nats_error("StreamNotFound"), name, catalog.by_name)
        return d

    # --- streams ----------------------------------------------------------------------------
    def add_stream(self, cfg: StreamConfig | Mapping[str, Any]) -> StreamInfo:
        """Create a stream (the server's checks, in its order). Creating it again with the
        same configuration returns the existing stream; a different one is 10058."""
        from .config.validate import check_stream_create

        cfg = _as_config(cfg)
        with self.write() as txn:
            existing = txn.catalog.configs  # by name, its subjects indexed
            final = check_stream_create(cfg, existing, pedantic=pedantic_requested(cfg))
            new = final.name not in existing
            if not new:
                d = txn.catalog.by_name[final.name]
            else:
                if final.first_seq > S.MAX_SEQ:
                    raise JetlinkError(
                        f"first_seq above {S.MAX_SEQ} (2^40-1) is not supported by jetlink",
                        field="first_seq")
                _check_start_seqs(final)
                first = final.first_seq if final.first_seq > 0 else 0
                last = first - 1 if first > 0 else 0
                cur = txn.conn.execute(
                    "INSERT INTO streams(name, config, created_ns, first_seq, last_seq, "
                    "last_ts, msgs, bytes) VALUES (?, ?, ?, ?, ?, 0, 0, 0)",
                    (final.name, _config_doc(final), txn.now, first, last),
                )
                S.bump_config_gen(txn.conn, cur.lastrowid)
                txn.catalog = S.Catalog.load(txn.conn, self.cluster.cache)
                d = txn.catalog.by_name[final.name]
            return self._info(txn.conn, d, txn.now, answer="create", new=new)

    def update_stream(self, cfg: StreamConfig | Mapping[str, Any]) -> StreamInfo:
        """Update a stream (10059 if absent). Lowered limits apply at once, as on the server."""
        from .config.validate import check_stream_update

        cfg = _as_config(cfg)
        with self.write() as txn:
            old = txn.catalog.by_name.get(cfg.name)
            if old is None:
                raise not_found(nats_error("StreamNotFound"), cfg.name, txn.catalog.by_name)
            existing = txn.catalog.configs  # by name, its subjects indexed
            final = check_stream_update(
                old.cfg, cfg, existing, pedantic=pedantic_requested(cfg),
                consumers=lambda: self.hooks.consumer_limits(txn.conn, cfg.name))
            _check_start_seqs(final)
            txn.flush()
            if old.cfg.allow_batched and not final.allow_batched:
                from .streamstore import fastbatch  # the server's deleteFastBatches

                fastbatch.drop_stream(txn, old.id)
            if old.cfg.allow_atomic and not final.allow_atomic:
                from .streamstore import batches  # the server's deleteAtomicBatches

                batches.drop_stream(txn, old.id)
            txn.conn.execute("UPDATE streams SET config = ? WHERE id = ?",
                             (_config_doc(final), old.id))
            S.bump_config_gen(txn.conn, old.id)
            txn.catalog = S.Catalog.load(txn.conn, self.cluster.cache)
            txn.streams.pop(old.id, None)
            d = txn.catalog.by_name[final.name]
            st = txn.stream(d)
            st.enforce_limits(old)
            if d.max_age or d.allow_ttl or d.sdm_ttl_s:
                st.expire()
            if old.cfg.retention != "interest" and final.retention == "interest":
                txn.flush()
                if interest_keeps_none(old.cfg, final,
                                       self.hooks.consumer_count(txn.conn, final.name)):
                    st = txn.stream(d)
                    if st.msgs:  # (an empty stream keeps its sequences: 0 when never written)
                        st.purge()
                else:
                    self.hooks.on_retention_changed(txn, final.name)
            txn.flush()
            return self._info(txn.conn, d, txn.now, answer="update")

    def delete_stream(self, name: str) -> None:
        with self.write(expire=False) as txn:
            d = self._find(txn.catalog, name)
            conn = txn.conn
            self._drop_state(txn, d)
            conn.execute("DELETE FROM msgs WHERE id BETWEEN ? AND ?", S.key_range(d.id))
            conn.execute("DELETE FROM msg_next WHERE id BETWEEN ? AND ?", S.key_range(d.id))
            conn.execute("DELETE FROM subjects WHERE stream_id = ?", (d.id,))
            conn.execute("DELETE FROM streams WHERE id = ?", (d.id,))
            S.bump_config_gen(conn, d.id)
            txn.streams.pop(d.id, None)
            txn.catalog = S.Catalog.load(conn, self.cluster.cache)

    def _drop_state(self, txn: S.Txn, d: S.StreamDef) -> None:
        """What a stream's deletion removes besides its messages, subjects and row: its
        consumers, batches, TTL entries, dedupe window and schedules."""
        self.hooks.on_stream_deleted(txn, d.name)
        from .streamstore import batches, fastbatch

        batches.drop_stream(txn, d.id)
        fastbatch.drop_stream(txn, d.id)
        txn.conn.execute("DELETE FROM msg_ttl WHERE id BETWEEN ? AND ?", S.key_range(d.id))
        txn.conn.execute("DELETE FROM dedupe WHERE stream_id = ?", (d.id,))
        _schedules().forget_stream(txn.conn, d.id)

    def recreate_in_place(self, txn: S.Txn, d: S.StreamDef, cfg: StreamConfig
                          ) -> S.StreamDef:
        """Inside ``txn``: stream ``d`` deleted and created again as ``cfg`` (the checks of
        a creation; a new creation time), its messages and subjects left to the caller, who
        keeps what the new stream starts with: failback's reuse of an old origin
        (core/dr/reuse.py). Counters and sequences are the caller's to set."""
        from .config.validate import check_stream_create

        txn.flush()
        existing = {x.name: x.cfg for x in txn.catalog.by_id.values() if x.id != d.id}
        final = check_stream_create(cfg, existing)
        self._drop_state(txn, d)
        txn.conn.execute("UPDATE streams SET name = ?, config = ?, created_ns = ?, "
                         "last_msg_id = '', dedupe_pruned_ns = 0 WHERE id = ?",
                         (final.name, _config_doc(final), txn.now, d.id))
        S.bump_config_gen(txn.conn, d.id)
        txn.streams.pop(d.id, None)
        txn.catalog = S.Catalog.load(txn.conn, self.cluster.cache)
        return txn.catalog.by_name[final.name]

    def stream_info(self, name: str, *, subjects_filter: str | None = None,
                    deleted_details: bool = False) -> StreamInfo:
        with self.read() as (conn, catalog):
            d = self._find(catalog, name)
            return self._info(conn, d, self.clock.now_ns(), subjects_filter=subjects_filter,
                              deleted_details=deleted_details)

    def _info(self, conn: sqlite3.Connection, d: S.StreamDef, now: int, *,
              subjects_filter: str | None = None, deleted_details: bool = False,
              answer: str = "info", new: bool = False) -> StreamInfo:
        """The StreamInfo a single server answers ``answer`` ("info", "create", "update",
        "list") with: only STREAM.INFO names the leader (``cluster``), and STREAM.LIST's
        configs lack the response metadata (jsStreamInfoRequest, jsStreamCreateRequest,
        jsStreamUpdateRequest, jsStreamListRequest). ``new``: the stream the create made."""
        state = S.stream_state(conn, d, consumer_count=self.hooks.consumer_count(conn, d.name),
                               subjects_filter=subjects_filter, deleted_details=deleted_details)
        mirror: dict[str, Any] | None = None
        sources: list[dict[str, Any]] = []
        if d.cfg.mirror is not None or d.cfg.sources:
            from .agreements import stream_source_infos  # StreamSourceInfo of its agreements

            mirror, sources = stream_source_infos(conn, d, now)
            if new and mirror is not None:
                # a new mirror's filter is reported once its consumer on the origin is set
                # up (stream.go setupMirrorConsumer sets the sourceInfo's sf), after the
                # create's reply: the reply has none
                mirror.pop("filter_subject", None)
        return StreamInfo(config=d.cfg.copy(), created_ns=d.created_ns, state=state, ts_ns=now,
                          cluster=self.cluster.name if answer == "info" else "",
                          mirror=mirror, sources=sources, response_metadata=answer != "list")

    def streams(self, subject: str | None = None) -> Listing:
        """Every stream (by name), or those whose subjects collide with ``subject``."""
        with self.read() as (conn, catalog):
            now = self.clock.now_ns()
            return Listing(self._info(conn, catalog.by_name[n], now, answer="list")
                           for n in self._names(catalog, subject))

    # --- a clustered stream's or consumer's RAFT group: none here ---------------------------
    # A single server answers these with JSClusterRequiredErr (jetstream_api.go
    # jsStreamLeaderStepDownRequest, jsStreamRemovePeerRequest): so does the engine.
    def stream_leader_step_down(self, name: str, preferred: str | None = None) -> None:
        raise nats_error("ClusterRequired")

    def consumer_leader_step_down(self, stream: str, consumer: str,
                                  preferred: str | None = None) -> None:
        raise nats_error("ClusterRequired")

    def stream_peer_remove(self, name: str, peer: str) -> None:
        raise nats_error("ClusterRequired")

    def stream_names(self, subject: str | None = None) -> list[str]:
        with self.read() as (_conn, catalog):
            return self._names(catalog, subject)

    def stream_configs(self) -> list[StreamConfig]:
        """Every stream's config from the catalog, no state counted (shared: read only)."""
        with self.read() as (_conn, catalog):
            return [catalog.by_name[n].cfg for n in self._names(catalog, None)]

    @staticmethod
    def _names(catalog: S.Catalog, subject: str | None) -> list[str]:
        names = sorted(catalog.by_name)
        if subject:
            names = [n for n in names
                     if any(overlaps(subject, s) for s in catalog.by_name[n].cfg.subjects)]
        return names

    def state(self, name: str) -> StreamState:
        return self.stream_info(name).state

    # --- purge, get, delete, subjects, view ---------------------------------------------------
    def purge_stream(self, name: str, *, subject: str | None = None, seq: int | None = None,
                     keep: int | None = None) -> int:
        """The STREAM.PURGE request: all, ``subject`` (wildcards), ``seq`` (up to, not
        including), ``keep`` (the newest N, of ``subject`` when given). seq with keep: 10003.
        A refusal is the server's answer with its ``purged: 0`` (JSApiStreamPurgeResponse)."""
        try:
            return self._purge_stream(name, subject=subject, seq=seq, keep=keep)
        except ApiError as err:
            if err.response is None:
                err.response = {"purged": 0}
            raise

    def _purge_stream(self, name: str, *, subject: str | None, seq: int | None,
                      keep: int | None) -> int:
        seq = int(seq or 0)
        keep = int(keep or 0)
        if seq < 0 or keep < 0:
            raise nats_error("BadRequest")
        if seq > 0 and keep > 0:
            raise nats_error("BadRequest")
        if subject is not None and subject != "" and not is_valid_subject(subject):
            # The server's store treats an invalid filter as matching nothing.
            subject_ok = False
        else:
            subject_ok = True
        with self.write() as txn:
            d = self._find(txn.catalog, name)
            if d.sealed:
                raise nats_error("StreamSealed")
            if d.deny_purge:
                raise nats_error("StreamPurgeFailed", err="stream purge not permitted")
            if not subject_ok:
                return 0
            st = txn.stream(d)
            purged = st.purge(subject=subject, seq=seq, keep=keep)
            st.notify_purge(subject)
            return purged

    def get_msg(self, name: str, seq: int | None = None, *, last_by_subj: str | None = None,
                next_by_subj: str | None = None, direct: bool = False) -> StoredMsg:
        """The STREAM.MSG.GET request (10003 for a bad combination, 10037 when not found);
        ``direct`` changes nothing here (no permissions refuse the request on the engine,
        whose stream is its one holder)."""
        seq = int(seq or 0)
        if seq < 0:
            raise nats_error("BadRequest")
        if ((seq > 0 and last_by_subj) or (seq == 0 and not last_by_subj and not next_by_subj)
                or (last_by_subj and next_by_subj)):
            raise nats_error("BadRequest")
        with self.read() as (conn, catalog):
            d = self._find(catalog, name)
            msg: StoredMsg | None
            if next_by_subj:
                msg = S.load_next(conn, d.id, next_by_subj, seq)
            elif seq > 0:
                msg = S.load_msg(conn, d.id, seq)
            else:
                msg = S.load_last(conn, d.id, last_by_subj or "")
            if msg is None:
                raise nats_error("NoMessageFound")
            return msg

    def delete_msg(self, name: str, seq: int) -> None:
        """The STREAM.MSG.DELETE request (file and memory storage answer differently, as on
        the server)."""
        seq = int(seq)
        with self.write() as txn:
            d = self._find(txn.catalog, name)
            if d.sealed:
                raise nats_error("StreamSealed")
            if d.deny_delete:
                raise nats_error("StreamMsgDeleteFailed", err="message delete not permitted")
            st = txn.stream(d)
            st.flush()
            if d.file:
                if seq <= 0:
                    raise nats_error("StreamMsgDeleteFailed", err="no message found")
                if seq > st.last_seq:
                    err = nats_error("StreamMsgDeleteFailed", err="stream store EOF")
                    from .limits import past_last_detail

                    err.detail = past_last_detail(seq, name, st.last_seq)  # (not in --json)
                    raise err
                if st.msgs == 0 or seq < st.first_seq:
                    raise nats_error("StreamMsgDeleteFailed", err="no message found")
            if seq <= 0 or st.remove_seqs([seq]) == 0:
                raise nats_error("SequenceNotFound", seq=max(seq, 0))

    def subjects(self, name: str, filter: str = ">") -> dict[str, int]:
        with self.read() as (conn, catalog):
            d = self._find(catalog, name)
            return S.subject_counts(conn, d.id, filter or ">")

    def messages(self, name: str, *, start_seq: int | None = None,
                 start_time_ns: int | None = None, subject: str | None = None,
                 chunk: int = 1000) -> Iterator[StoredMsg]:
        """Stored messages in sequence order (``stream view``); read in chunks, each chunk its
        own snapshot, so a long view never holds a transaction open."""
        with self.read() as (conn, catalog):
            d = self._find(catalog, name)
            start = int(start_seq or 0)
            if start_time_ns is not None:
                t = S.seq_for_time(conn, d.id, int(start_time_ns))
                if t == 0:
                    return
                start = max(start, t)
        cursor = start
        while True:
            with self.cluster.read() as conn:
                batch = list(S.iter_msgs_once(conn, d.id, start_seq=cursor, subject=subject,
                                              limit=chunk))
            if not batch:
                return
            for msg, _seq in batch:
                if msg is not None:
                    yield msg
            cursor = batch[-1][1] + 1

    def count_msgs(self, name: str, *, start_seq: int, subject: str | None = None
                   ) -> int | None:
        with self.read() as (conn, catalog):
            d = self._find(catalog, name)
            return S.count_msgs(conn, d.id, max(1, int(start_seq)),
                                [subject] if subject else [])

    def last_msgs(self, name: str, patterns: Iterable[str]) -> list[StoredMsg]:
        """The latest message of every subject matching ``patterns``, by sequence (what a
        consumer delivering last-per-subject starts with: KV keys and watchers)."""
        with self.read() as (conn, catalog):
            d = self._find(catalog, name)
            seqs: set[int] = set()
            for pat in patterns:
                for _sid, n, _first, last, _subject in S.matching_subjects(conn, d.id, pat):
                    if n > 0:
                        seqs.add(last)
            msgs = [S.load_msg(conn, d.id, seq) for seq in sorted(seqs)]
        return [m for m in msgs if m is not None]

    def tail(self, name: str, patterns: Sequence[str], after_seq: int) -> Tail:
        """New messages of ``name`` matching ``patterns`` stored after ``after_seq``, as they
        come (KV watchers): ``next(timeout)``, ``close()``."""
        with self.read() as (_conn, catalog):
            self._find(catalog, name)
        return Tail(self, name, list(patterns), after_seq)

    # --- publish ----------------------------------------------------------------------------
    def publish(self, subject: str, data: bytes = b"",
                headers: H.HeadersIn | None = None) -> PubAck | None:
        """A JetStream publish: the PubAck, or raise the server's ApiError (nothing stored),
        :class:`NoStreamError` when no stream captures ``subject``. A ``no_ack`` stream
        answers nothing, as the server: the message is handled (stored or refused) and the
        result is None. The ack has no ``domain``: the server adds one only from its
        ``jetstream.domain`` option (stream.go's pubAck template), and a data directory's
        cluster names itself as stream info's ``cluster.leader``, as a server's name is."""
        data = bytes(data)
        hdr = H.encode_headers(headers)
        S.check_publish_input(subject, hdr, data, reply_len=L.js_reply_len(0))
        with self.write() as txn:
            result = self._publish_answer(txn, subject, hdr, data)
        if isinstance(result, JetlinkError):
            raise result
        return result

    def publish_many(self, msgs: Iterable[Outgoing]
                     ) -> list[PubAck | JetlinkError | None]:
        """Publish messages one after the other, exactly as that many :meth:`publish` calls
        would (client checks, routing, limits, duplicates, per message), in ONE transaction;
        stops at the first refused message: its error is the last result and nothing after it
        is published (what came before it is stored). None for a ``no_ack`` stream."""
        out: list[PubAck | JetlinkError | None] = []
        with self.write() as txn:
            for i, (subject, data, headers) in enumerate(msgs):
                if i:  # each its own time, as the server stamps each publish it stores
                    txn.now = max(txn.now, self.clock.now_ns())
                data = bytes(data)
                try:
                    hdr = H.encode_headers(headers)
                    S.check_publish_input(subject, hdr, data, reply_len=L.js_reply_len(i))
                except JetlinkError as err:
                    out.append(err)
                    break
                result = self._publish_answer(txn, subject, hdr, data)
                out.append(result)
                if isinstance(result, JetlinkError):
                    break
        return out

    def _publish_answer(self, txn: S.Txn, subject: str, hdr: bytes | None, data: bytes
                        ) -> PubAck | JetlinkError | None:
        """One publish in ``txn`` as the client sees it: its PubAck or error, None from a
        ``no_ack`` stream (a refusal there is silent too)."""
        result = self._publish_one(txn, subject, hdr, data, core=True)
        if isinstance(result, ApiError) and result.response is None:
            d = txn.catalog.route(subject)
            if d is not None:  # the server's refusal is a PubAck of that stream, seq 0
                result.response = {"stream": d.name, "seq": 0}
        if isinstance(result, S.NoStreamError) or not self._no_ack(txn, subject):
            return result
        return None

    @staticmethod
    def _no_ack(txn: S.Txn, subject: str) -> bool:
        d = txn.catalog.route(subject)
        return d is not None and d.no_ack

    def publish_batch(self, msgs: Iterable[BatchItem]
                      ) -> list[PubAck | ApiError | JetlinkError | None]:
        """Publish many messages in ONE transaction; one result per message, in order (a
        refused message is its error, the others are stored; None for a ``no_ack`` stream).
        Client-side refusals (bad subject, payload too large, bad header) reject the whole
        call before anything is written, as a client would refuse to send it."""
        gc_enabled = gc.isenabled()
        gc.disable()  # many short-lived containers: the collector would only slow us down
        try:
            return self._publish_batch(msgs)
        finally:
            if gc_enabled:
                gc.enable()

    def _publish_batch(self, msgs: Iterable[BatchItem]
                       ) -> list[PubAck | ApiError | JetlinkError | None]:
        from .streamstore.overlay import data_version

        if not isinstance(msgs, list):
            msgs = list(msgs)
        with self.write() as txn:
            core = CoreFanout.load(txn)
            whole = (None if core.active
                     else _one_plain_run(msgs, txn.catalog, self._valid_subjects))
            if whole is None:
                return self._publish_loop(txn, core, msgs)
            # The whole call is one header-less run into one stream without a transform,
            # every subject already checked: what the loop would do, in bulk.
            d, subjects, datas, counts = whole
            st = txn.stream(d)
            memo_key = f"subject-memo:{d.id}"
            version = data_version(txn.conn)
            st.recall_subjects(self.cluster.cache.pop(memo_key, None))
            st.prefetch_subjects(counts)  # (the states the memo did not have)
            acks = st.append_columns(subjects, datas, counts)
        memo = st.subject_memo(version)  # committed: the next bulk publish may take it
        if memo is not None:
            self.cluster.cache[memo_key] = memo
        return [None] * len(acks) if d.no_ack else acks  # type: ignore[return-value]

    def _publish_loop(self, txn: S.Txn, core: CoreFanout, msgs: list[BatchItem]
                      ) -> list[PubAck | ApiError | JetlinkError | None]:
        """``publish_batch`` message by message, in the caller's transaction."""
        valid = self._valid_subjects
        max_payload = S.MAX_PAYLOAD
        out: list[PubAck | ApiError | JetlinkError | None] = []
        # One pass: client checks (a refusal raises: the transaction rolls back, nothing
        # is written), routing and transforms, grouping header-less runs per stream.
        catalog = txn.catalog
        routes = catalog._routes
        route = catalog.route
        work: list[_Work] = []
        touched: dict[int, set[str]] = {}
        ids: dict[int, list[str]] = {}
        run_d: S.StreamDef | None = None
        run: list[tuple[str, bytes]] = []
        fan = core.active
        plain: object = _MISSING  # run_d when it has no subject transform
        for i, item in enumerate(msgs):
            headers: H.HeadersIn | None
            if len(item) == 3:
                subject, data, headers = item
            else:
                (subject, data), headers = item, None
            if (not headers and not fan and type(data) is bytes and subject in valid
                    and len(data) <= max_payload and routes.get(subject) is plain):
                run.append((subject, data))  # the hot path: what the loop below does
                continue
            if type(data) is not bytes:
                data = bytes(data)
            hdr: bytes | None
            fv: dict[str, str] | None
            if headers:
                hdr, fv = H.encode_headers_fv(headers)
            else:
                hdr = fv = None
            if subject not in valid or len(data) + (len(hdr) if hdr else 0) > max_payload:
                S.check_publish_input(subject, hdr, data, reply_len=L.js_reply_len(i))
                # cached: subjects whose line fits whatever the reply and sizes
                if len(valid) < _CACHED_SUBJECTS and len(subject) <= _CACHED_SUBJECT_MAX:
                    valid.add(subject)
            if fan:
                core.add(subject, hdr, data)
            found = routes.get(subject, _MISSING)
            d = route(subject) if found is _MISSING else found
            if d is None:
                run_d = None
                plain = _MISSING
                work.append((subject,))
                continue
            if d.transform is not None:
                mapped = d.transform.apply(subject)
                if mapped is not None:
                    subject = mapped
            if hdr is None:
                if d is not run_d:
                    run_d, run = d, []
                    plain = d if d.transform is None else _MISSING
                    work.append((d, run))
                    touched.setdefault(d.id, set())  # (streams in order of appearance)
                run.append((subject, data))
                continue
            run_d = None
            plain = _MISSING
            work.append((d, subject, hdr, data, fv))
            touched.setdefault(d.id, set()).add(subject)
            mid = fv.get(H.MSG_ID) if fv else None
            if mid:
                ids.setdefault(d.id, []).append(mid)
        streams = txn.streams
        for w in work:  # the subjects of header-less runs, gathered per run
            if len(w) == 2:
                touched[w[0].id].update(map(itemgetter(0), w[1]))
        for sid, subjects in touched.items():
            txn.stream(catalog.by_id[sid]).prefetch_subjects(subjects)
        for sid, mids in ids.items():
            streams[sid].prefetch_msg_ids(mids)
        append = out.append
        for w in work:
            if len(w) == 2:  # a run of header-less messages: the batch hot path
                d, items = w
                acks = streams[d.id].append_plain(items)
                out.extend([None] * len(acks) if d.no_ack else acks)
            elif len(w) == 1:
                append(S.NoStreamError(w[0]))
            else:
                d, subject, hdr, data, fv = w
                r: PubAck | JetlinkError | None
                if fv and "Nats-Batch-Id" in fv:  # an atomic batch message
                    r = self._batch_msg(streams[d.id], subject, hdr or b"", data, fv)
                else:
                    r = streams[d.id].append(subject, hdr, data, fv=fv)
                append(None if d.no_ack else r)
        core.flush()
        return out

    def _route(self, txn: S.Txn, subject: str, hdr: bytes | None, data: bytes, *,
               core: bool, fan: CoreFanout | None = None) -> tuple[Any, str] | S.NoStreamError:
        """A published message's way in: core subscribers (``core``: a publish, not a
        replicated copy) get it first, then the stream whose subjects match, with the
        subject after that stream's subject transform. ``fan``: the transaction's core
        subscribers, loaded once by the caller, who flushes them (as ``publish_batch``)."""
        if core:
            f = CoreFanout.load(txn) if fan is None else fan
            if f.active:
                f.add(subject, hdr, data)
                if fan is None:
                    f.flush()
        d = txn.catalog.route(subject)
        if d is None:
            return S.NoStreamError(subject)
        if d.transform is not None:
            mapped = d.transform.apply(subject)
            if mapped is not None:
                subject = mapped
        return d, subject

    def _publish_one(self, txn: S.Txn, subject: str, hdr: bytes | None, data: bytes, *,
                     core: bool) -> PubAck | JetlinkError | None:
        routed = self._route(txn, subject, hdr, data, core=core)
        if isinstance(routed, S.NoStreamError):
            return routed
        d, subject = routed
        if hdr is not None and b"Nats-Batch-" in hdr:
            return self._batch_msg(txn.stream(d), subject, hdr, data)
        return txn.stream(d).append(subject, hdr, data)

    def _batch_msg(self, st: Any, subject: str, hdr: bytes, data: bytes,
                   fv: dict[str, str] | None = None) -> PubAck | JetlinkError | None:
        """An atomic batch message (ADR-50): core/streamstore/batches.py; None when staged
        (the server's empty reply). Anything else takes the publish path. ``fv``: the
        header block's first values, when known."""
        batches = _batches()
        if not (fv.get(batches.BATCH_ID) if fv is not None else batches.is_batch_msg(hdr)):
            return st.append(subject, hdr, data, fv=fv)  # type: ignore[no-any-return]
        result: PubAck | ApiError | None = batches.publish(
            st, subject, hdr, data,
            lambda: self.cluster.ensure_schema(batches.COMPONENT, batches.SCHEMA_STEPS), fv)
        return result

    # --- fast batch publish (ADR-50, 2.14): core/streamstore/fastbatch.py, core/fastpublish.py
    def publish_fast_msg(self, subject: str, data: bytes = b"",
                         headers: H.HeadersIn | None = None, *, reply: str
                         ) -> list[dict[str, Any]]:
        """One message with a fast batch reply subject (``...$FI``): the documents the
        server sends back to ``reply``, in order. :class:`NoStreamError` when no stream
        captures ``subject`` (a server's "no responders")."""
        from .streamstore import fastbatch

        fb = fastbatch.parse_reply(reply)
        if fb is None:
            raise client_error(f"reply {reply!r}: not a fast batch reply subject (…$FI)")
        data = bytes(data)
        hdr = H.encode_headers(headers)
        S.check_publish_input(subject, hdr, data, reply_len=len(reply))
        with self.write() as txn:
            out = self._fast_msg(txn, subject, hdr, data, fb)
        if isinstance(out, S.NoStreamError):
            raise out
        return out

    def _fast_msg(self, txn: S.Txn, subject: str, hdr: bytes | None, data: bytes, fb: Any,
                  fan: CoreFanout | None = None) -> list[dict[str, Any]] | S.NoStreamError:
        from .streamstore import fastbatch

        routed = self._route(txn, subject, hdr, data, core=True, fan=fan)
        if isinstance(routed, S.NoStreamError):
            return routed
        d, subject = routed
        return fastbatch.process(
            txn.stream(d), subject, fb, hdr, data,
            lambda: self.cluster.ensure_schema(fastbatch.COMPONENT, fastbatch.SCHEMA_STEPS))

    def publish_fast_batch(self, msgs: Iterable[Outgoing], *, batch_id: str,
                           flow: int = 100, gap_ok: bool = False, max_outstanding: int = 2
                           ) -> FastBatchResult:
        """One fast batch of ``msgs`` (the last one commits), driven as a client does
        (core/fastpublish.py): a :class:`~jetlink.core.fastpublish.FastBatchResult`.
        Messages go in transactions of 1,000; the batch's state is kept between them."""
        from .fastpublish import FastPublisher
        from .streamstore import fastbatch

        items = list(msgs)
        if not items:
            raise client_error("a fast batch needs at least one message")
        pub = FastPublisher(batch_id, size=len(items), flow=flow, gap_ok=gap_ok,
                            max_outstanding=max_outstanding)
        encoded = []
        for subject, data, headers in items:
            hdr = H.encode_headers(headers)
            data = bytes(data)
            S.check_publish_input(subject, hdr, data, reply_len=len(pub.ping()) + 8)
            encoded.append((subject, hdr, data))
        for start in range(0, len(encoded), 1000):
            with self.write() as txn:
                fan = CoreFanout.load(txn)
                for i in range(start, min(start + 1000, len(encoded))):
                    if pub.done or pub.stopped:
                        break
                    subject, hdr, data = encoded[i]
                    reply = pub.reply(last=i == len(encoded) - 1)
                    out = self._fast_msg(txn, subject, hdr, data, fastbatch.parse_reply(reply),
                                         fan)
                    if isinstance(out, S.NoStreamError):
                        raise out
                    for doc in out:
                        pub.take(doc)
                    if pub.must_wait:  # nothing more will come: ask for the last flow ack
                        pinged = self._fast_msg(txn, subject, None, b"",
                                                fastbatch.parse_reply(pub.ping()), fan)
                        for doc in pinged if isinstance(pinged, list) else []:
                            pub.take(doc)
                    if pub.must_wait:  # pragma: no cover - the engine answers at once
                        raise JetlinkError(f"fast batch {batch_id}: no flow acknowledgement")
                fan.flush()
            if pub.done or pub.stopped:
                break
        return pub.result

    def kv_write_subject(self, subject: str) -> str:
        """A KV write's subject as sent (core/api.py): the engine is addressed per cluster,
        never through an API prefix."""
        return subject

    # --- core pub/sub -------------------------------------------------------------------------
    def publish_core(self, subject: str, data: bytes = b"",
                     headers: H.HeadersIn | None = None) -> None:
        """A core NATS publish (no ack, at most once): live subscribers see it, and a stream
        that captures the subject stores it (its refusal is silent, as on a server)."""
        data = bytes(data)
        hdr = H.encode_headers(headers)
        S.check_publish_input(subject, hdr, data)
        with self.write() as txn:
            self._publish_one(txn, subject, hdr, data, core=True)

    def subscribe(self, subject: str, *, queue: str = "") -> Subscription:
        """Follow core messages on ``subject`` (wildcards) published from now on, by any
        process sharing the data directory; ``queue``: as a member of that queue group (each
        message to one member of the group, :class:`Subscription`)."""
        if not isinstance(subject, str) or not is_valid_subject(subject):
            raise invalid_subject(subject, literal=False)
        return Subscription(self.cluster, subject, queue=queue)

    # --- consumers (rules: core/consumers.py; storage: core/consumer_store.py) -----------
    @contextlib.contextmanager
    def _consumers(self) -> Iterator[ConsumerEngine]:
        from .consumer_store import SqlConsumerStore
        from .consumers import ConsumerEngine

        with self.write() as txn:
            yield ConsumerEngine(SqlConsumerStore(txn), txn.now)

    def add_consumer(self, stream: str, config: ConsumerConfig | Mapping[str, Any], *,
                     action: str = "", pedantic: bool = False) -> ConsumerInfo:
        """CONSUMER.CREATE (a ConsumerConfig or its JSON); same name again: an update."""
        from .config.consumer import ConsumerConfig

        if isinstance(config, Mapping):
            config = ConsumerConfig.from_json(dict(config), strict=True)
        with self._consumers() as eng:
            return eng.add(stream, config, action=action, pedantic=pedantic)

    def consumer_info(self, stream: str, name: str) -> ConsumerInfo:
        with self._consumers() as eng:
            return eng.info(stream, name)

    def consumers(self, stream: str) -> Listing:
        """Every consumer of ``stream`` (a Listing, as a live server's CONSUMER.LIST: the
        engine reaches every one, so ``missing`` is empty)."""
        if self._no_consumer_yet(stream):
            return Listing()
        with self._consumers() as eng:
            return Listing(eng.infos(stream))

    def consumer_names(self, stream: str) -> list[str]:
        if self._no_consumer_yet(stream):
            return []
        with self._consumers() as eng:
            return eng.names(stream)

    def _no_consumer_yet(self, stream: str) -> bool:
        """No consumer was ever made in this cluster (core/consumer_store.py's schema
        component is created with the first): a listing is empty and made without a write
        (a dry run or a check changes no byte); StreamNotFound as the engine's listing."""
        from .consumer_store import has_schema

        if has_schema(self.cluster.conn):
            return False
        self.stream_info(stream)
        return True

    def delete_consumer(self, stream: str, name: str) -> None:
        with self._consumers() as eng:
            eng.delete(stream, name)

    def fetch(self, stream: str, consumer: str, batch: int = 1,
              priority: PullPriority | None = None) -> list[DeliveredMsg]:
        """One pull request answered at once: up to ``batch`` DeliveredMsg (``priority``:
        the request's priority group fields, core/priority.py)."""
        with self._consumers() as eng:
            return eng.fetch(stream, consumer, batch, priority)

    def unpin_consumer(self, stream: str, consumer: str, group: str) -> None:
        """CONSUMER.UNPIN: the pinned client of ``group`` loses its pin."""
        with self._consumers() as eng:
            eng.unpin(stream, consumer, group)

    def pause_consumer(self, stream: str, consumer: str, until: int) -> dict[str, Any]:
        """CONSUMER.PAUSE until ``until`` (ns; 0 resumes): ``paused``, ``pause_until``,
        ``pause_remaining``."""
        with self._consumers() as eng:
            return eng.pause(stream, consumer, until)

    def reset_consumer(self, stream: str, consumer: str, seq: int = 0
                       ) -> tuple[ConsumerInfo, int]:
        """CONSUMER.RESET to stream sequence ``seq`` (0: the ack floor's next)."""
        with self._consumers() as eng:
            return eng.reset(stream, consumer, seq)

    def ack(self, stream: str, consumer: str, seq: int, consumer_seq: int | None = None) -> bool:
        with self._consumers() as eng:
            return eng.ack(stream, consumer, seq, consumer_seq)

    def nak(self, stream: str, consumer: str, seq: int, *, delay: int | None = None,
            consumer_seq: int | None = None) -> bool:
        with self._consumers() as eng:
            return eng.nak(stream, consumer, seq, delay=delay, consumer_seq=consumer_seq)

    def term(self, stream: str, consumer: str, seq: int, consumer_seq: int | None = None) -> bool:
        with self._consumers() as eng:
            return eng.term(stream, consumer, seq, consumer_seq)

    def in_progress(self, stream: str, consumer: str, seq: int) -> bool:
        with self._consumers() as eng:
            return eng.in_progress(stream, consumer, seq)


# Work of one batch, in order: (subject,) that no stream captures; (stream, [(subject, data)])
# a run of header-less messages; (stream, subject, header block, data, first header values)
_Work = (tuple[str] | tuple[S.StreamDef, list[tuple[str, bytes]]]
         | tuple[S.StreamDef, str, bytes | None, bytes, dict[str, str] | None])


class _Missing(enum.Enum):
    """Not in the route cache (None there is a subject no stream captures)."""

    MISSING = enum.auto()


_MISSING: Final = _Missing.MISSING
# a subject this long (characters; up to 4 bytes each) fits a protocol line whatever its
# reply and sizes: the batch path checks it once, then trusts it
_CACHED_SUBJECT_MAX = (L.MAX_CONTROL_LINE - 128) // 4
_CACHED_SUBJECTS = 100_000  # checked subjects a JetStream remembers at most


def _one_plain_run(msgs: list[BatchItem], catalog: S.Catalog, valid: set[str]
                   ) -> tuple[S.StreamDef, list[str], list[bytes], Counter[str]] | None:
    """``publish_batch``'s messages as ONE header-less run into one stream, when every
    message takes the loop's hot path: no headers, bytes within the payload limit, a subject
    a client sends (checked once, then cached in ``valid`` as the loop caches it) routed to
    the same stream, which has no subject transform. ``(stream, subjects, payloads,
    Counter(subjects))``, or None (the loop decides message by message, and names the
    message a client would refuse). Each test is one pass in C over the batch, or one per
    distinct subject."""
    if not msgs:
        return None
    shapes = set(map(len, msgs))
    if shapes == {3}:
        if any(map(_third, msgs)):
            return None
    elif shapes != {2}:
        return None
    subjects: list[str] = list(map(_first, msgs))
    datas: list[bytes] = list(map(_second, msgs))
    if set(map(type, datas)) != {bytes} or max(map(len, datas)) > S.MAX_PAYLOAD:
        return None
    counts = Counter(subjects)
    new = counts.keys() - valid
    if new:
        if len(valid) + len(new) > _CACHED_SUBJECTS:
            return None
        for subject in new:  # the loop's check, for subjects whose line always fits
            if (type(subject) is not str or len(subject) > _CACHED_SUBJECT_MAX
                    or not is_valid_publish_subject(subject)):
                return None
        valid.update(new)
    route = catalog.route
    found = route(subjects[0])
    if found is None or found.transform is not None:
        return None
    d: S.StreamDef = found
    for subject in counts:
        if route(subject) is not d:
            return None
    return d, subjects, datas, counts


_first, _second, _third = itemgetter(0), itemgetter(1), itemgetter(2)


class Tail:
    """Messages stored after a sequence, polled from the store (JetStream.tail)."""

    POLL_S = 0.05

    def __init__(self, js: JetStream, name: str, patterns: list[str], after_seq: int) -> None:
        self._js, self._name, self._patterns = js, name, patterns
        self._cursor = after_seq
        self._queue: list[StoredMsg] = []
        self._closed = False

    def _poll(self) -> None:
        js = self._js
        with js.read() as (conn, catalog):
            d = js._find(catalog, self._name)
            found = S.next_msgs(conn, d.id, self._cursor + 1, self._patterns, 1000)
        for msg in found:
            self._cursor = max(self._cursor, msg.seq)
            self._queue.append(msg)

    def next(self, timeout: float | None = 1.0) -> StoredMsg | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._queue:
            if self._closed:
                return None
            self._poll()
            if self._queue:
                break
            if deadline is not None and time.monotonic() >= deadline:
                return None
            time.sleep(self.POLL_S if deadline is None else
                       max(0.0, min(self.POLL_S, deadline - time.monotonic())))
        return self._queue.pop(0)

    def close(self) -> None:
        self._closed = True


class Subscription:
    """A core subscription followed across processes: ``next(timeout)`` -> CoreMsg | None.

    At most once: messages published before the subscription, or pruned before it polled
    (more than ~10k behind), are never seen. A member of a queue group (``queue``, NATS's
    queue subscriptions) gets a message only when it claims it first (one row per group and
    message in ``core_claims``, INSERT OR IGNORE): each message to one member of the group.
    """

    POLL_MIN = 0.005
    POLL_MAX = 0.05

    def __init__(self, cluster: Cluster, subject: str, *, queue: str = "") -> None:
        self.cluster = cluster
        self.subject = subject
        self.queue = queue
        self._filter = SubjectFilter([subject])
        self._buf: list[CoreMsg] = []
        self._closed = False
        if queue:
            cluster.ensure_schema(QUEUE_COMPONENT, QUEUE_STEPS)
        with cluster.transaction() as conn:
            now = time.time_ns()
            conn.execute("DELETE FROM core_subs WHERE expires_ns <= ?", (now,))
            cur = conn.execute(
                "INSERT INTO core_subs(filter, pid, expires_ns) VALUES (?, ?, ?)",
                (subject, os.getpid(), now + SUB_LEASE_NS))
            self._id = cur.lastrowid
            self._cursor = conn.execute("SELECT coalesce(max(id), 0) FROM core_msgs").fetchone()[0]
        self._renewed = now

    def _renew(self) -> None:
        now = time.time_ns()
        if now - self._renewed > SUB_LEASE_NS // 3:
            with self.cluster.transaction() as conn:
                conn.execute("UPDATE core_subs SET expires_ns = ? WHERE id = ?",
                             (now + SUB_LEASE_NS, self._id))
            self._renewed = now

    def _poll(self) -> None:
        with self.cluster.read() as conn:
            rows = conn.execute(
                "SELECT id, subject, hdr, data, ts FROM core_msgs WHERE id > ? ORDER BY id "
                "LIMIT 1000", (self._cursor,)).fetchall()
        mine = [row for row in rows if self._filter.matches(row[1])]
        if rows:
            self._cursor = rows[-1][0]
        if self.queue and mine:
            mine = self._claimed(mine)
        for rid, subject, hdr, data, ts in mine:
            self._buf.append(CoreMsg(subject, hdr, data, ts, rid))

    def _claimed(self, rows: list[Any]) -> list[Any]:
        """The ``rows`` this member of the queue group claims first (one transaction); the
        claims of messages pruned from ``core_msgs`` go with them."""
        from .fanout import CORE_KEEP

        got = []
        with self.cluster.transaction() as conn:
            for row in rows:
                if conn.execute("INSERT OR IGNORE INTO core_claims(grp, msg) VALUES (?, ?)",
                                (self.queue, row[0])).rowcount:
                    got.append(row)
            conn.execute("DELETE FROM core_claims WHERE msg <= ?", (rows[0][0] - CORE_KEEP,))
        return got

    def next(self, timeout: float | None = 1.0) -> CoreMsg | None:
        """The next message, waiting up to ``timeout`` seconds (None: forever; 0: no wait)."""
        if self._closed:
            raise JetlinkError("subscription closed")
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = self.POLL_MIN
        while True:
            if self._buf:
                return self._buf.pop(0)
            self._renew()
            self._poll()
            if self._buf:
                return self._buf.pop(0)
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                time.sleep(min(delay, left))
            else:
                time.sleep(delay)
            delay = min(delay * 2, self.POLL_MAX)

    def __iter__(self) -> Iterator[CoreMsg]:
        while True:
            msg = self.next(None)
            if msg is not None:
                yield msg

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(sqlite3.Error, JetlinkError):
            with self.cluster.transaction() as conn:
                conn.execute("DELETE FROM core_subs WHERE id = ?", (self._id,))

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


if TYPE_CHECKING:  # mypy checks that the engine implements the seam (core/api.py)
    from .api import JetStreamAPI, SubscriptionAPI

    _JETSTREAM_API: type[JetStreamAPI] = JetStream
    _SUBSCRIPTION_API: type[SubscriptionAPI] = Subscription
