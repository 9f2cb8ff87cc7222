"""The appending collaborator of :class:`~jetlink.core.streamstore.txn.StreamTxn`: the publish
path of one stream inside one write transaction.

nats-server 2.15's ``processJetStreamMsg`` (the header rules: expected stream / last sequence /
last subject sequence / last msg id, Nats-TTL, Nats-Incr counters, Nats-Rollup, the
duplicate window, interest retention) and ``storeRawMsg`` (discard-new checks, the append,
limits with discard old), then dedupe and rollup bookkeeping. The hot paths:

- :meth:`StreamAppend.append`: one message; a header-less one on a stream without counter or
  interest rules goes straight to :meth:`StreamAppend._store`;
- :meth:`StreamAppend._append_run`: the batch loop behind :meth:`StreamAppend.append_plain`
  (header-less publishes) and :meth:`StreamAppend.append_sourced` (plain sourced / mirrored
  messages); a message a limit acts on takes ``_store``;
- :meth:`StreamAppend._append_slow`: every header rule, then ``_store``.

Runtime features that act on a publish (counters, atomic batches, message schedules) belong
here. What it uses of its siblings: ``_remove_oldest_of`` / ``_remove_first`` (limits.py,
the limits a store enforces) and ``purge`` / ``notify_purge`` (purge.py, a rollup).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING

from .. import headers as H
from .. import limits as L
from ..errors import ApiError, nats_error
from ..messages import PubAck, StoredMsg, UnstoredAck
from . import counters
from . import schedules as _sched
from .base import (
    _SECOND,
    MAX_BYTES_REFUSED,
    MAX_HEADER_SIZE,
    MAX_MSGS_REFUSED,
    MAX_PER_SUBJECT_REFUSED,
    MAX_SEQ,
    _as_uint64,
    _blen,
    load_msg,
    msg_size,
    parse_msg_ttl,
)
from .overlay import _NEXT, _PREV, _SID, StreamOverlay

if TYPE_CHECKING:  # pragma: no cover
    from .overlay import _Subj

_INT64_MAX = (1 << 63) - 1
_first, _second = itemgetter(0), itemgetter(1)


class StreamAppend(StreamOverlay):
    """The publish path, the duplicate window and rollups of one stream in one transaction."""

    #: every message stored whatever its Nats-Msg-Id, as a mirror stores its origin's: an
    #: import of a stream's messages (core/lake.py), which held each one (its ids recorded
    #: all the same: a publish after it within the window is a duplicate)
    keep_duplicates = False

    if TYPE_CHECKING:  # the siblings' methods it calls, composed with it in StreamTxn
        def _remove_oldest_of(self, s: _Subj) -> bool: ...  # limits.py
        def _remove_first(self) -> bool: ...  # limits.py
        def purge(self, subject: str | None = None, seq: int = 0,
                  keep: int = 0) -> int: ...  # purge.py
        def notify_purge(self, subject: str | None) -> None: ...  # purge.py

    def append(self, subject: str, hdr: bytes | None, data: bytes, *,
               sourced: bool = False, fv: dict[str, str] | None = None) -> PubAck | ApiError:
        """Store one message published on ``subject`` (after the stream's transform).

        Returns the PubAck or the server's ApiError (nothing stored). ``sourced`` marks the
        engine's own messages (subject delete markers, later sourced/mirrored ones): the
        client-only checks are skipped, as the server does for them.
        """
        d = self.d
        if d.sealed:
            return nats_error("StreamSealed")
        if hdr is None and d.fast:
            # No headers, no counter/interest/TTL rules: only sizes and limits apply.
            mlen = len(data)
            mms = d.max_msg_size
            if mms >= 0 and mlen > mms:
                return _too_big(mms, 0, mlen)
            return self._store(subject, None, data, 0, d.base_size + _blen(subject) + mlen,
                               "", "", None, None)
        return self._append_slow(subject, hdr, data, sourced, fv)

    def append_inert(self, subject: str, hdr: bytes | None, data: bytes) -> PubAck | ApiError:
        """``_append_slow`` of a client message on a ``fast`` stream whose header block holds
        none of the headers the publish path acts on (an atomic batch's own headers only:
        batches.py): the size checks, then ``_store``."""
        d = self.d
        hlen = len(hdr) if hdr else 0
        mlen = len(data)
        refused = _size_refusal(d.max_msg_size, hlen, mlen)
        if refused is not None:
            return refused
        return self._store(subject, hdr, data, 0, msg_size(d.file, _blen(subject), hlen, mlen),
                           "", "", "", None)

    def append_plain(self, items: list[tuple[str, bytes]]) -> list[PubAck | ApiError]:
        """``append`` for many header-less messages (the batch hot path).

        Same results as calling ``append(subject, None, data)`` for each; messages a limit
        would act on (discard, per-subject removal) take the general path one by one.
        """
        subjects = list(map(_first, items))
        return self.append_columns(subjects, list(map(_second, items)), Counter(subjects),
                                   items)

    def append_columns(self, subjects: list[str], datas: list[bytes], counts: Counter[str],
                       items: list[tuple[str, bytes]] | None = None
                       ) -> list[PubAck | ApiError]:
        """:meth:`append_plain` of the messages ``zip(subjects, datas)`` given as columns
        (``counts``: ``Counter(subjects)``; ``items``: the pairs, when the caller has them)."""
        d = self.d
        n = len(subjects)
        if (d.sealed or not d.fast or d.republish is not None
                or self.last_seq + n > MAX_SEQ):  # (MAX_SEQ: 2^40 messages)
            pairs = items if items is not None else list(zip(subjects, datas, strict=True))
            return [self.append(subject, None, data) for subject, data in pairs]
        acks = self._append_bulk(subjects, datas, counts)
        if acks is None:
            out: list[PubAck | ApiError] = []
            pairs = items if items is not None else list(zip(subjects, datas, strict=True))
            self._append_run(pairs, None, out)
            return out
        return acks

    def _append_bulk(self, subjects: list[str], datas: list[bytes], counts: Counter[str]
                     ) -> list[PubAck | ApiError] | None:
        """``_append_run`` of header-less publishes none of which a limit or a size acts on,
        done per subject instead of per message: their PubAcks, or None (nothing done) when
        one would be (a message over max_msg_size, a subject reaching max_msgs_per_subject,
        the stream reaching max_msgs or max_bytes), and the run takes the message-by-message
        loop.

        The checks are the loop's, summed: its ``count >= max_per`` before each message of
        a subject holds for none of them when the subject's count after the run is at most
        max_per; likewise max_msgs, and max_bytes (sizes only grow). Subjects are looked up
        (new ones get their ids) in order of first appearance, as the loop does."""
        n = len(subjects)
        if not n:
            return []
        base_size, _hdr_extra, cap, max_per, max_msgs, max_bytes = self._run_limits()
        lens = list(map(len, datas))
        if (cap < MAX_SEQ and max(lens) > cap) or (max_msgs and self.msgs + n > max_msgs):
            return None
        cache = self._subj
        subj: dict[str, _Subj] = {}
        size = base_size * n + sum(lens)
        for subject, k in counts.items():
            s = cache.get(subject)
            if s is None:
                s = self._subject(subject)
            if max_per and s.count + k > max_per:
                return None
            subj[subject] = s
            size += s.slen * k
        if max_bytes and self.bytes + size > max_bytes:
            return None
        self._link_bulk(subjects, datas, subj, counts, size)
        return list(map(PubAck, repeat(self.d.name, n),
                        range(self.last_seq - n + 1, self.last_seq + 1)))

    def _link_bulk(self, subjects: list[str], datas: list[bytes], subj: dict[str, _Subj],
                   counts: Counter[str], size: int) -> None:
        """The rows of :meth:`_append_bulk`, each linked into its subject's chain, and the
        subjects' and the stream's counters (``counts``: the run's messages per subject,
        ``size``: the bytes it adds). The rows' positions are indexed when first asked for
        (``_index_rows``): a run nothing looks up again costs no index."""
        base = self.base
        ts = self.last_ts
        if self.txn.now > ts:
            ts = self.txn.now
        seq0 = seq = self.last_seq
        rows = self._rows
        row_pos = self._index_rows()
        at = len(rows)
        self._row_runs.append((seq0 + 1, len(subjects), at))
        plain = self._plain  # plain rows (overlay.py): no headers, stored at ``ts``
        if plain and plain[-1][1] == at and plain[-1][2] == ts:
            plain[-1][1] = at + len(subjects)
        else:
            plain.append([at, at + len(subjects), ts])
        add = rows.append
        last: dict[str, list] = {}
        get = last.get
        first: dict[str, list] = {}
        nxt, sid = _NEXT, _SID
        for subject, data in zip(subjects, datas):  # noqa: B905 - columns of one length
            seq += 1
            r = get(subject)
            if r is not None:
                r[nxt] = seq
                row = [base | seq, r[sid], r[0] - base, 0, data]
            else:
                row = first[subject] = [base | seq, subj[subject].id, 0, 0, data]
            last[subject] = row
            add(row)
        ptr_next, touched = self._ptr_next, self._touched
        for subject, row in first.items():
            s = subj[subject]
            fseq = row[0] - base
            if s.count:
                prev = row[_PREV] = s.last
                pos = row_pos.get(prev)
                if pos is not None:
                    rows[pos][_NEXT] = fseq
                else:
                    ptr_next[prev] = fseq
            else:
                s.first = fseq
            s.last = last[subject][0] - base
            s.count += counts[subject]
            if not s.touched:
                s.touched = True
                touched.append(s)
        if self.msgs == 0:
            self.first_seq = seq0 + 1
            self._first_dirty = False
        self.msgs += seq - seq0
        self.bytes += size
        self._pend_alive += seq - seq0
        self.last_seq, self.last_ts = seq, ts
        self.last_msg_id = ""

    def append_sourced(self, items: list[tuple[str, bytes | None, bytes]],
                       at: list[tuple[int, int]] | None = None
                       ) -> tuple[int, ApiError | None]:
        """Sourced or mirrored messages ``(subject, hdr, data)`` in order, stopping at the
        first refusal (core/replication.py's batch path): ``(how many were stored, the
        refusal or None)``. ``at`` gives each message's ``(seq, ts)`` (a mirror: the
        sequences in between are skipped, as ``skip_to``; the time is the origin's).

        Same results as ``append(subject, hdr, data, sourced=True)`` for each (after
        ``skip_to(seq - 1)`` at time ``ts`` with ``at``), for headers the publish path does
        not act on: the caller leaves out messages with Nats-Msg-Id, Nats-TTL, Nats-Rollup or
        Nats-Incr (and calls this only when ``sourced_fast``).
        """
        return self._append_run(items, at, None)

    def _append_run(self, items: list[tuple[str, bytes | None, bytes]] | list[tuple[str, bytes]],
                    at: list[tuple[int, int]] | None,
                    out: list[PubAck | ApiError] | None) -> tuple[int, ApiError | None]:
        """The one fast append loop behind ``append_plain`` and ``append_sourced``.

        Each message is linked into its subject's chain and counted here; a message some
        limit acts on takes the general path (``_store``) with the state written back.
        With ``out`` (publishing) every result is added to it (PubAck or error) and the loop
        goes on; without it (replicating) the loop stops at the first refusal and the
        message's time is pinned for the general path. Publishing passes header-less
        ``(subject, data)`` pairs. Returns (stored, refusal or None).
        """
        name, base = self.d.name, self.base
        base_size, hdr_extra, cap, max_per, max_msgs, max_bytes = self._run_limits()
        rows, ptr_next = self._rows, self._ptr_next
        row_pos = self._index_rows()
        touched, cache = self._touched, self._subj
        add = out.append if out is not None else None
        at_next = iter(at).__next__ if at is not None else None
        hdr: bytes | None = None
        seq, ts, nmsgs, nbytes, pend_alive = self._load_run()
        if at is None and self.txn.now > ts:  # a publish's time (a mirror's: its origin's)
            ts = self.txn.now
        done = 0
        err: ApiError | None = None
        for item in items:
            if len(item) == 2:
                subject, data = item  # a publish (add is set): no headers
            else:
                subject, hdr, data = item
            if at_next is not None:
                aseq, ats = at_next()
                if aseq <= seq or aseq > MAX_SEQ:
                    err = nats_error("StreamStoreFailed", err="last sequence mismatch")
                    break
                if aseq - 1 > seq:
                    seq = self._skip_origin_gap(aseq, nmsgs)
                ts = ats if ats > ts else ts
            hlen = len(hdr) if hdr else 0
            if hlen + len(data) > cap or hlen > MAX_HEADER_SIZE:
                r: PubAck | ApiError = _oversized(hlen + len(data) > cap)
            else:
                s = cache.get(subject)
                if s is None:
                    s = self._subject(subject)
                size = base_size + s.slen + len(data) + (hdr_extra + hlen if hdr else 0)
                count = s.count
                if not ((max_per and count >= max_per) or (max_msgs and nmsgs >= max_msgs)
                        or (max_bytes and nbytes + size > max_bytes) or seq >= MAX_SEQ):
                    # No limit acts on it: linked into its subject's chain and counted here.
                    seq += 1
                    if count:
                        prev = s.last
                        pos = row_pos.get(prev)
                        if pos is not None:
                            rows[pos][_NEXT] = seq
                        else:
                            ptr_next[prev] = seq
                    else:
                        prev = 0
                        s.first = seq
                    row_pos[seq] = len(rows)
                    rows.append([base | seq, s.id, prev, 0, data, ts, hdr])
                    s.last = seq
                    s.count = count + 1
                    if not s.touched:
                        s.touched = True
                        touched.append(s)
                    if nmsgs == 0:
                        self.first_seq = seq
                        self._first_dirty = False
                    nmsgs += 1
                    nbytes += size
                    pend_alive += 1
                    done += 1
                    if add is not None:
                        add(PubAck(name, seq))
                    continue
                self._save_run(seq, ts, nmsgs, nbytes, pend_alive)
                r = self._store_at_limit(subject, hdr, data, size, pinned=add is None)
                seq, ts, nmsgs, nbytes, pend_alive = self._load_run()
            # refused, or taken by the general path: publishing goes on, replicating stops
            if isinstance(r, PubAck):
                done += 1
            elif add is None:
                err = r
                break
            if add is not None:
                add(r)
        self._save_run(seq, ts, nmsgs, nbytes, pend_alive)
        if done:
            self.last_msg_id = ""
        return done, err

    def _skip_origin_gap(self, aseq: int, nmsgs: int) -> int:
        """A mirror's origin skipped the sequences before ``aseq`` (deleted placeholders,
        as ``skip_to``): the run's last sequence becomes ``aseq - 1``."""
        self._dirty = True
        if nmsgs == 0:
            self.first_seq = aseq
        return aseq - 1

    def _run_limits(self) -> tuple[int, int, int, int, int, int]:
        """What :meth:`_append_run` checks each message against: a record's fixed size and
        a header block's, the size cap (headers + data above it: too big), max_msgs_per_subject,
        max_msgs and max_bytes (0: none)."""
        d = self.d
        cap = d.max_msg_size if d.max_msg_size >= 0 else MAX_SEQ
        return d.base_size, d.hdr_extra, cap, d.max_per, d.max_msgs, d.max_bytes

    def _load_run(self) -> tuple[int, int, int, int, int]:
        """The counters a run of :meth:`_append_run` keeps in locals: last sequence, last
        time, messages, bytes, live pending rows."""
        return self.last_seq, self.last_ts, self.msgs, self.bytes, self._pend_alive

    def _save_run(self, seq: int, ts: int, nmsgs: int, nbytes: int, pend_alive: int) -> None:
        """Write the counters of :meth:`_load_run` back."""
        self.last_seq, self.last_ts, self.msgs, self.bytes = seq, ts, nmsgs, nbytes
        self._pend_alive = pend_alive

    def _store_at_limit(self, subject: str, hdr: bytes | None, data: bytes, size: int, *,
                        pinned: bool) -> PubAck | ApiError:
        """A message of a run some limit acts on (or the last sequence): the general path
        (``_store``), after the run saved its counters. ``pinned`` (replicating): stored at
        the run's time, the origin's, not the transaction's."""
        if not pinned:
            return self._store(subject, hdr, data, 0, size, "", "", None, None)
        saved = self.txn.now
        self.txn.now = self.last_ts
        try:
            return self._store(subject, hdr, data, 0, size, "", "", None, None)
        finally:
            self.txn.now = saved

    @property
    def sourced_fast(self) -> bool:
        """Whether :meth:`append_sourced` may be used for this stream."""
        d = self.d
        return not d.sealed and d.fast and d.republish is None

    def _append_slow(self, subject: str, hdr: bytes | None, data: bytes,
                     sourced: bool, fv: dict[str, str] | None = None,
                     batch_rollup: Callable[[str], ApiError | None] | None = None
                     ) -> PubAck | ApiError:
        """Every header rule, then ``_store``. ``batch_rollup``: an atomic batch's rule for
        a permitted ``sub`` / ``all`` rollup (batches.py), checked where the server checks
        rollups, after the schedule rules gave a schedule its implicit ``Nats-Rollup: sub``."""
        d = self.d
        name = d.name
        msg_id = ""
        rollup = ""
        incr: int | None = None
        only_id = False
        if not sourced:
            # nats-server 2.15.1 refuses a client message over max_msg_size (its headers and
            # payload as published) before any header rule: an oversized duplicate, a wrong
            # expected sequence or a disabled Nats-TTL is answered 10054 (the sizes are
            # checked again below, as stored: a counter's value, a TTL header rewritten)
            refused = _size_refusal(d.max_msg_size, len(hdr) if hdr else 0, len(data))
            if refused is not None:
                return refused
        if hdr:
            if fv is None:
                fv = H.first_values(hdr)
            # A lone Nats-Msg-Id (the common case) needs none of the other header rules.
            only_id = len(fv) == 1 and H.MSG_ID in fv
            if H.INCR in fv:  # counters (ADR-49): counters.py
                incr, refusal = counters.incr_of(fv, data, d.allow_counter, sourced)
                if refusal is not None:
                    return refusal
            if not sourced and not only_id:
                checked = self._client_header_rules(subject, hdr, fv)
                if isinstance(checked, ApiError):
                    return checked
                hdr, fv = checked
            msg_id = fv.get(H.MSG_ID, "")
            if msg_id and not d.is_mirror and not self.keep_duplicates:
                seen = self._dedupe_lookup(msg_id)
                if seen:
                    return PubAck(name, seen, duplicate=True)
            elm = None if only_id else fv.get(H.EXPECTED_LAST_MSG_ID)
            if elm and elm != self.last_msg_id:
                return nats_error("StreamWrongLastMsgID", id=self.last_msg_id)
            rollup = "" if only_id else (fv.get(H.ROLLUP) or "").lower()
            if rollup:
                if not d.allow_rollup_purge and not sourced:
                    return nats_error("StreamRollupFailed", err="rollup not permitted")
                if batch_rollup is not None and rollup in ("sub", "all"):
                    refused = batch_rollup(rollup)
                    if refused is not None:
                        return refused
                if rollup not in ("sub", "all"):
                    return nats_error("StreamRollupFailed",
                                      err=f"rollup value invalid: {_go_quote(rollup)}")
        counter_val: str | None = None
        if d.allow_counter:  # counters (ADR-49): counters.py
            applied = counters.apply(subject, hdr, data, incr, fv, sourced,
                                     lambda: self._last_msg(subject))
            if isinstance(applied, ApiError):
                return applied
            hdr, data, counter_val = applied
        hlen = len(hdr) if hdr else 0
        mlen = len(data)
        refused = _size_refusal(d.max_msg_size, hlen, mlen)
        if refused is not None:
            return refused

        # Interest retention with nobody interested: the sequence is used, nothing stored.
        if d.retention == "interest" and not self.txn.has_interest(name, subject):
            return self._skip_uninterested(subject, msg_id, rollup)

        ttl = 0
        if fv is not None and not only_id:
            ttl, err = parse_msg_ttl(fv.get(H.MSG_TTL))
            if err is not None:
                return err
            if ttl > 0 and d.sdm_ttl_s > 0 and d.max_per != 1 and ttl < d.sdm_ttl_s:
                ttl = d.sdm_ttl_s
                hdr = H.append_header(H.remove_header(hdr, H.MSG_TTL), H.MSG_TTL, str(ttl))
                hlen = len(hdr)
        size = msg_size(d.file, _blen(subject), hlen, mlen)
        rollup_hdr = fv.get(H.ROLLUP, "") if fv and not only_id else ""
        ack = self._store(subject, hdr, data, ttl, size, msg_id, rollup_hdr, rollup,
                          counter_val)
        if (d.allow_schedules or (fv and H.SCHEDULE_NEXT in fv)) and isinstance(ack, PubAck):
            # every stored message, headers or not: a plain one cancels a schedule
            _sched.after_store(self, subject, fv or {}, ack.seq)
        return ack

    def _client_header_rules(self, subject: str, hdr: bytes | None, fv: dict[str, str]
                             ) -> ApiError | tuple[bytes | None, dict[str, str]]:
        """The header rules of a client publish (a sourced message skips them): expected
        stream, Nats-TTL allowed, expected last subject sequence, expected last sequence,
        message schedules, no Nats-Stream-Source. The refusal, or the header block and first
        values to go on with (a schedule gets its implicit rollup)."""
        d = self.d
        expected = fv.get(H.EXPECTED_STREAM)
        if expected and expected != d.name:
            return nats_error("StreamNotMatch")
        ttl_hdr = fv.get(H.MSG_TTL)
        if ttl_hdr:
            t, _err = parse_msg_ttl(ttl_hdr)
            if t != 0 and not d.allow_ttl:
                return nats_error("MessageTTLDisabled")
        els = fv.get(H.EXPECTED_LAST_SUBJ_SEQ)
        if els:
            want = _as_uint64(els)
            have = self.last_seq_for(fv.get(H.EXPECTED_LAST_SUBJ_SEQ_SUBJ) or subject)
            if have != want:
                return nats_error("StreamWrongLastSequence", seq=have)
        elif fv.get(H.EXPECTED_LAST_SUBJ_SEQ_SUBJ):
            return nats_error("StreamExpectedLastSeqPerSubjectInvalid")
        el = fv.get(H.EXPECTED_LAST_SEQ)
        if el and _as_uint64(el) != self.last_seq:
            return nats_error("StreamWrongLastSequence", seq=self.last_seq)
        if not _sched.CHECKED.isdisjoint(fv):  # message schedules: schedules.py
            checked = _sched.check(self, subject, hdr, fv)
            if isinstance(checked, ApiError):
                return checked
            hdr, fv = checked
        if fv.get(H.STREAM_SOURCE):
            return nats_error("MessageSourceHdrNotAllowed")
        return hdr, fv

    def _skip_uninterested(self, subject: str, msg_id: str, rollup: str) -> UnstoredAck:
        """Interest retention with nobody interested: the sequence is used, nothing stored
        (the duplicate window and a rollup still apply)."""
        d = self.d
        now = self.txn.now
        ts = now if now > self.last_ts else self.last_ts
        seq = self.last_seq + 1
        self.last_seq = seq
        self.last_ts = ts
        if self.msgs == 0:
            self.first_seq = seq + 1
        self.last_msg_id = msg_id
        self._dirty = True
        if msg_id and d.dup_window:
            self._dedupe[msg_id] = (seq, ts)
        if d.allow_rollup_purge and rollup:
            self._rollup(subject, rollup, keep=0)
        return UnstoredAck(d.name, seq)

    def _store(self, subject: str, hdr: bytes | None, data: bytes, ttl: int, size: int,
               msg_id: str, rollup_hdr: str, rollup: str | None,
               counter_val: str | None) -> PubAck | ApiError:
        """The store's ``storeRawMsg`` (discard-new checks, append, limits), then dedupe and
        rollup bookkeeping (``processJetStreamMsg`` after the store)."""
        d = self.d
        s = self._subject(subject)
        count = s.count
        max_per = d.max_per
        psmc = count + 1 if (max_per and count > 0) else 0
        if d.discard_new and d.needs_limits:
            refusal = self._discard_new_refusal(s, psmc, size, rollup_hdr)
            if refusal is not None:
                return refusal

        now = self.txn.now
        ts = now if now > self.last_ts else self.last_ts
        seq = self.last_seq + 1
        if seq > MAX_SEQ:  # pragma: no cover - 2^40 messages
            return nats_error("StreamStoreFailed", err="sequence space of jetlink exhausted")
        row_pos = self._index_rows()
        if count > 0:
            prev = s.last
            pos = row_pos.get(prev)
            if pos is not None:
                self._rows[pos][_NEXT] = seq
            else:
                self._ptr_next[prev] = seq
        else:
            prev = 0
            s.first = seq
        if ttl:
            # (an expiry past the int64 nanosecond clock, year 2262, is kept at its maximum)
            self._ttl[seq] = min(ts + ttl * _SECOND, _INT64_MAX) if ttl > 0 else -1
        row_pos[seq] = len(self._rows)
        self._rows.append([self.base | seq, s.id, prev, 0, data, ts, hdr])
        s.last = seq
        s.count = count + 1
        if not s.touched:
            s.touched = True
            self._touched.append(s)
        self._pend_alive += 1
        if self.msgs == 0:
            self.first_seq = seq
            self._first_dirty = False
        self.msgs += 1
        self.bytes += size
        self.last_seq = seq
        self.last_ts = ts

        if d.needs_limits:
            self._discard_old(s, psmc)

        self.last_msg_id = msg_id
        if msg_id and d.dup_window:
            self._dedupe[msg_id] = (seq, ts)
        if rollup and d.allow_rollup_purge:
            self._rollup(subject, rollup, keep=1)
        if d.republish is not None:
            d.republish.after_store(self.txn.cache, subject, hdr, data, seq, ts, prev)
        return PubAck(d.name, seq, val=counter_val)

    def _discard_new_refusal(self, s: _Subj, psmc: int, size: int,
                             rollup_hdr: str) -> ApiError | None:
        """``storeRawMsg``'s DiscardNew checks before a message of ``size`` bytes is stored on
        subject ``s`` (``psmc``: the subject's count with it, 0 when the subject holds
        none): the refusal, or None."""
        d = self.d
        max_per = d.max_per
        asl = False
        if max_per and psmc > max_per:
            if d.discard_new_per and not rollup_hdr:
                return _detailed(nats_error("StreamStoreFailed", err=MAX_PER_SUBJECT_REFUSED),
                                 L.max_per_subject_detail(max_per, s.subject, s.count))
            asl = True
        if d.max_msgs and self.msgs >= d.max_msgs and not asl:
            return _detailed(nats_error("StreamStoreFailed", err=MAX_MSGS_REFUSED),
                             L.max_msgs_detail(d.max_msgs, self.msgs))
        if d.max_bytes and self.bytes + size > d.max_bytes:
            # asl: the subject holds messages, its oldest is live
            oldest = self._node(s.first) if asl else None
            if oldest is None or oldest[1] < size:
                return _detailed(nats_error("StreamStoreFailed", err=MAX_BYTES_REFUSED),
                                 L.max_bytes_detail(d.max_bytes, self.bytes, size))
        return None

    def _discard_old(self, s: _Subj, psmc: int) -> None:
        """``storeRawMsg``'s limits after a message was appended on subject ``s``: the
        subject's oldest over max_msgs_per_subject (``psmc``: its count with the message, 0
        when it held none), and, with discard old, the stream's oldest over max_msgs /
        max_bytes."""
        d = self.d
        max_per = d.max_per
        if max_per and psmc > max_per:
            while s.count > max_per and self._remove_oldest_of(s):
                pass
        if not d.discard_new:
            if d.max_msgs:
                while self.msgs > d.max_msgs and self._remove_first():
                    pass
            if d.max_bytes:
                while self.bytes > d.max_bytes and self._remove_first():
                    pass

    def _last_msg(self, subject: str) -> StoredMsg | None:
        """``LoadLastMsg(subject)`` (counters.py reads the counter's last value)."""
        seq = self.last_seq_for(subject)
        if not seq:
            return None
        self.flush()
        return load_msg(self.conn, self.d.id, seq)

    def _rollup(self, subject: str, rollup: str, keep: int) -> None:
        """The server's ``processJetStreamMsgWithRollup``: a purge (consumers told too)."""
        if rollup == "sub":
            self.purge(subject=subject, keep=keep)
            self.notify_purge(subject)
        elif rollup == "all":
            self.purge(keep=keep)
            self.notify_purge(None)

    # --- the duplicate window -------------------------------------------------------------
    def prefetch_msg_ids(self, ids: Iterable[str]) -> None:
        """Load the dedupe entries of many message ids with a few queries."""
        if not self.d.dup_window:
            return
        known = self._dd_known
        missing = [i for i in set(ids) if i not in known]
        for i in range(0, len(missing), 500):
            chunk = missing[i : i + 500]
            for mid in chunk:
                known[mid] = None
            marks = ",".join("?" * len(chunk))
            for mid, seq, ts in self.conn.execute(
                f"SELECT msg_id, seq, ts FROM dedupe WHERE stream_id = ? AND msg_id IN ({marks})",
                (self.d.id, *chunk),
            ):
                known[mid] = (seq, ts)

    def _dedupe_lookup(self, msg_id: str) -> int:
        window = self.d.dup_window
        if not window:
            return 0
        now = self.txn.now
        hit = self._dedupe.get(msg_id)
        if hit is None:
            if msg_id in self._dd_known:
                hit = self._dd_known[msg_id]
            else:
                hit = self.conn.execute(
                    "SELECT seq, ts FROM dedupe WHERE stream_id = ? AND msg_id = ?",
                    (self.d.id, msg_id),
                ).fetchone()
        if hit is None or now - hit[1] >= window:
            return 0
        return hit[0]

    def maybe_prune_dedupe(self) -> None:
        """Drop dedupe entries past the window, at most once per window (lookups ignore them
        anyway; this only bounds the table)."""
        window = self.d.dup_window
        now = self.txn.now
        if self._dedupe_pruned and now - self._dedupe_pruned < max(window, _SECOND):
            return
        self.conn.execute("DELETE FROM dedupe WHERE stream_id = ? AND ts <= ?",
                          (self.d.id, now - window))
        self.conn.execute("UPDATE streams SET dedupe_pruned_ns = ? WHERE id = ?",
                          (now, self.d.id))
        self._dedupe_pruned = now


def _go_quote(s: str) -> str:
    from ..config.validate import go_quote

    return go_quote(s)


def _detailed(err: ApiError, detail: str) -> ApiError:
    """A refusal with the limit and the value that met it, for people (not in --json)."""
    err.detail = detail
    return err


def _oversized(over_cap: bool) -> ApiError:
    """A message of a run refused for its size: over max_msg_size (headers and data), else
    a header block over 64 KiB."""
    return nats_error("StreamMessageExceedsMaximum" if over_cap else "StreamHeaderExceedsMaximum")


def _size_refusal(mms: int, hlen: int, mlen: int) -> ApiError | None:
    """A message's sizes against max_msg_size (``mms``, negative: none) and the largest
    header block: the refusal, or None."""
    if mms >= 0 and (hlen > mms or mlen > mms - hlen):
        return _too_big(mms, hlen, mlen)
    if hlen > MAX_HEADER_SIZE:
        return nats_error("StreamHeaderExceedsMaximum")
    return None


def _too_big(mms: int, hlen: int, mlen: int) -> ApiError:
    from ..limits import message_size_detail

    return _detailed(nats_error("StreamMessageExceedsMaximum"),
                     message_size_detail(mms, hlen, mlen))
