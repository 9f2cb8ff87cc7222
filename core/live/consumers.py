"""Consumers on a live server (CONSUMER.* of ``$JS.API``): a mixin of LiveJetStream.

- ``add_consumer`` runs jetlink's own rules first (:func:`check_consumer_create`, the
  embedded engine's checks, over the stream's live config and the consumers it needs), then
  sends ``CONSUMER.CREATE.<stream>.<name>[.<filter>]`` (``CONSUMER.CREATE.<stream>`` for a
  consumer without a name) with the config as given; the server fills in its defaults.
- ``consumer_info`` / ``consumers`` / ``consumer_names`` / ``delete_consumer``: INFO, LIST
  (paged), NAMES (paged), DELETE; lists sorted by name, as the engine gives them.
- ``fetch`` sends one pull request (``CONSUMER.MSG.NEXT``: ``batch``, ``no_wait`` and a short
  ``expires``) from a private inbox and collects the messages until the batch is full or a
  status (404 no messages, 408 request timeout) ends it; each message's metadata is read
  from its ``$JS.ACK`` reply subject.
- ``ack`` / ``nak`` / ``term`` / ``in_progress`` answer on the reply subject of a message
  this process fetched, else (``consumer ack STREAM CONSUMER SEQ`` of another command's
  delivery, ack policy explicit) on the v1 ack subject of that stream sequence, which the
  server takes from any connection (its pending record supplies the rest); the ack is a
  request, so it has reached the server (and been applied) when the call returns.

Values: :class:`LiveConsumerInfo` (the engine's ConsumerInfo attributes, ``to_json()`` the
server's document as received) and :class:`LiveDeliveredMsg` (the engine's DeliveredMsg,
``reply`` the server's own ack subject).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..config.consumer import ConsumerConfig
from ..consumers import ConsumerInfo, DeliveredMsg, SequenceInfo, interest_in
from ..errors import ApiError, JetlinkError
from ..messages import Listing, ack_metadata
from ..priority import PullPriority
from .client import without_envelope

if TYPE_CHECKING:
    from .client import LiveConnection
    from .stream_info import LiveStreamInfo
from .wire import _name, _ts, encode_hdrs, name_the_field

__all__ = ["LiveConsumers", "LiveConsumerInfo", "LiveDeliveredMsg", "ack_metadata"]

MS = 1_000_000
# How long a pull request may wait on the server when it can not be answered at once
# (max_ack_pending reached: no_wait alone would get no answer at all); an exhausted
# consumer answers 404 at once.
PULL_EXPIRES = 250 * MS


def _seq_info(doc: Any) -> SequenceInfo:
    doc = doc if isinstance(doc, dict) else {}
    return SequenceInfo(int(doc.get("consumer_seq", 0)), int(doc.get("stream_seq", 0)),
                        _ts(doc.get("last_active")))


class LiveConsumerInfo(ConsumerInfo):
    """A ConsumerInfo the server sent: the engine's attributes, parsed from the document;
    ``to_json()`` is the document as received."""

    def __init__(self, doc: dict[str, Any]) -> None:
        doc = without_envelope(doc)
        super().__init__(
            stream_name=str(doc.get("stream_name", "")),
            name=str(doc.get("name", "")),
            created=_ts(doc.get("created")),
            config=ConsumerConfig.from_json(doc.get("config") or {}, strict=False),
            delivered=_seq_info(doc.get("delivered")),
            ack_floor=_seq_info(doc.get("ack_floor")),
            num_ack_pending=int(doc.get("num_ack_pending", 0)),
            num_redelivered=int(doc.get("num_redelivered", 0)),
            num_waiting=int(doc.get("num_waiting", 0)),
            num_pending=int(doc.get("num_pending", 0)),
            ts=_ts(doc.get("ts")),
            paused=bool(doc.get("paused", False)),
            pause_remaining=int(doc.get("pause_remaining", 0)),
            priority_groups=[dict(g) for g in doc.get("priority_groups") or []
                             if isinstance(g, dict)],
        )
        self.doc = doc
        cluster = doc.get("cluster")
        self.cluster = cluster if isinstance(cluster, dict) else None

    def to_json(self) -> dict[str, Any]:
        return self.doc


@dataclass
class LiveDeliveredMsg(DeliveredMsg):
    """A message a pull request received from a live server (the engine's DeliveredMsg;
    ``reply`` is the ack subject the server gave it)."""

    ack_subject: str = ""

    @property
    def reply(self) -> str:
        return self.ack_subject




def _consumer_name(name: str) -> str:
    """A consumer name as the API subject takes it: one that can not be a consumer's gets
    the server's own ``consumer not found`` (as the engine answers it)."""
    if not name or any(c in name for c in ".*> \t\r\n"):
        raise ApiError(404, 10014, "consumer not found")
    return name


def _stored(cfg: ConsumerConfig) -> ConsumerConfig:
    """A config as the server stores it: without the keys it adds to every response."""
    from ..config.validate import SERVER_LEVEL_KEY, SERVER_VERSION_KEY

    out = cfg.copy()
    out.metadata = {k: v for k, v in out.metadata.items()
                    if k not in (SERVER_VERSION_KEY, SERVER_LEVEL_KEY)}
    return out


def _description(headers: Mapping[str, Any]) -> str:
    for k, v in headers.items():
        if k == "Description":
            return str(v)
    return ""


class LiveConsumers:
    """Consumer verbs over ``self.api`` / ``self.conn`` (LiveJetStream provides them)."""

    if TYPE_CHECKING:  # LiveJetStream's
        conn: LiveConnection
        api_prefix: str

        def api(self, verb: str, doc: Mapping[str, Any] | None = None) -> dict[str, Any]: ...

        def stream_info(self, name: str, *, subjects_filter: str | None = None,
                        deleted_details: bool = False) -> LiveStreamInfo: ...

        def _paged(self, verb: str, key: str, subject: str | None,
                   missing: list[str] | None = None) -> list[Any]: ...

    # -- what this process delivered: (stream, consumer, stream seq) -> ack subject --------
    @property
    def _deliveries(self) -> dict[tuple[str, str, int], str]:
        got = self.__dict__.get("_live_deliveries")
        if got is None:
            got = self.__dict__["_live_deliveries"] = {}
        return got

    # -- create / update -------------------------------------------------------------------
    def add_consumer(self, stream: str, config: ConsumerConfig | Mapping[str, Any], *,
                     action: str = "", pedantic: bool = False) -> LiveConsumerInfo:
        """``CONSUMER.CREATE`` (create, or with the same name update; ``action`` "create" /
        "update" narrows it), after jetlink's own checks."""

        cfg = config if isinstance(config, ConsumerConfig) else ConsumerConfig.from_json(
            dict(config), strict=True)
        _name(stream)
        self._check_create(stream, cfg, action=action, pedantic=pedantic)
        name = cfg.name or cfg.durable_name
        verb = f"CONSUMER.CREATE.{stream}"
        if name:
            verb += f".{name}"
            if cfg.filter_subject and not cfg.filter_subjects:
                verb += f".{cfg.filter_subject}"
        req: dict[str, Any] = {"stream_name": stream, "config": cfg.to_json()}
        if action:
            req["action"] = action
        if pedantic:
            req["pedantic"] = True
        try:
            return LiveConsumerInfo(self.api(verb, req))
        except ApiError as err:
            raise name_the_field(err, cfg) from None

    def _check_create(self, stream: str, cfg: ConsumerConfig, *, action: str,
                      pedantic: bool) -> None:
        """The engine's rules for this create (nothing is sent when they refuse): the
        stream's config read live, and the existing consumers the rules look at (the one
        of that name; all of them when the stream limits or partitions them)."""
        from ..config.consumer import check_consumer_create

        scfg = self.stream_info(stream).config
        name = cfg.name or cfg.durable_name
        existing: dict[str, ConsumerConfig] = {}
        if scfg.max_consumers > 0 or scfg.retention == "workqueue":
            existing = {i.name: _stored(i.config) for i in self.consumers(stream)}
        elif name and "/" not in name and "\\" not in name:
            try:
                existing[name] = _stored(self.consumer_info(stream, name).config)
            except ApiError as err:
                if err.err_code != 10014:
                    raise
        try:
            check_consumer_create(scfg, cfg, existing, action=action, pedantic=pedantic)
        except ApiError as err:
            if err.err_code != 10074:
                raise
            # Replicas > 1: the embedded engine's own limit (one server); a live cluster
            # takes them, a single live server refuses them itself.
            check_consumer_create(scfg, cfg.replace(num_replicas=0), existing,
                                  action=action, pedantic=pedantic)

    # -- read / delete ---------------------------------------------------------------------
    def consumer_info(self, stream: str, name: str) -> LiveConsumerInfo:

        return LiveConsumerInfo(
            self.api(f"CONSUMER.INFO.{_name(stream)}.{_consumer_name(name)}"))

    def consumers(self, stream: str) -> Listing:
        """Every consumer of ``stream``, by name (CONSUMER.LIST, every page), with the names
        the server could not reach (``missing``: their servers gone)."""
        missing: list[str] = []
        docs = self._paged(f"CONSUMER.LIST.{_name(stream)}", "consumers", None, missing)
        return Listing(sorted((LiveConsumerInfo(d) for d in docs), key=lambda i: i.name),
                       missing)

    def consumer_names(self, stream: str) -> list[str]:

        return sorted(self._paged(f"CONSUMER.NAMES.{_name(stream)}", "consumers", None))

    def delete_consumer(self, stream: str, name: str) -> None:

        self.api(f"CONSUMER.DELETE.{_name(stream)}.{_consumer_name(name)}")

    # -- pull ------------------------------------------------------------------------------
    def fetch(self, stream: str, consumer: str, batch: int = 1,
              priority: PullPriority | None = None) -> list[LiveDeliveredMsg]:
        """One pull request for up to ``batch`` messages, answered at once (what is
        deliverable now; never waits for new messages); ``priority``: the request's
        priority group fields."""

        _name(stream)
        _consumer_name(consumer)
        req: dict[str, Any] = {"batch": max(1, int(batch)), "no_wait": True,
                               "expires": PULL_EXPIRES}
        if priority is not None:
            req.update(priority.to_json())
        kind, got = self._pull(stream, consumer, req)
        if kind == "409" and "MaxRequestExpires" in str(got):
            # The consumer caps pull expiry below ours: ask with its cap.
            req["expires"] = self.consumer_info(stream, consumer).config.max_expires
            if req["expires"] <= 0:
                del req["expires"]
            kind, got = self._pull(stream, consumer, req)
        if kind == "503":  # no consumer answers: the server says why (10059 / 10014)
            self.consumer_info(stream, consumer)
            raise ApiError(503, 0, f"consumer {stream} > {consumer} does not answer pull "
                           "requests (no responders)")
        if kind != "ok":  # the server's status, as the engine raises a refused pull
            raise ApiError(int(kind) if kind.isdigit() else 500, 0, str(got))
        out: list[LiveDeliveredMsg] = []

        for raw in got:
            meta = ack_metadata(raw.reply)
            msg = LiveDeliveredMsg(
                raw.subject, meta["seq"], meta["ts"],
                raw.block if raw.block is not None else encode_hdrs(raw.headers), raw.data,
                stream=meta["stream"], consumer=meta["consumer"],
                consumer_seq=meta["consumer_seq"], num_delivered=meta["num_delivered"],
                num_pending=meta["num_pending"], ack_subject=raw.reply)
            self._deliveries[(stream, consumer, msg.seq)] = raw.reply
            out.append(msg)
        return out

    def _pull(self, stream: str, consumer: str, req: dict[str, Any]) -> tuple[str, Any]:
        """Send one pull request; ("ok", messages) or (status, description) for a status
        other than 404 / 408 (409, 503, ...) that ended it before any message came."""
        batch = int(req["batch"])
        wait = self.conn.timeout + int(req.get("expires", 0)) / 1e9

        got = 0

        def last(raw: Any, _so_far: list[Any]) -> bool:
            nonlocal got
            if raw.status == "100":  # a heartbeat
                return False
            if raw.status:
                return True
            got += 1
            return got >= batch

        replies = self.conn.collect(
            f"{self.api_prefix}.CONSUMER.MSG.NEXT.{stream}.{consumer}",
            json.dumps(req, separators=(",", ":")).encode(), wait=wait, last=last,
            quiet_end=True, doing=f"CONSUMER.MSG.NEXT {stream} > {consumer}")
        msgs = [r for r in replies if not r.status]
        end = replies[-1] if replies else None
        if end is not None and end.status not in ("", "100", "404", "408") and not msgs:
            return end.status, _description(end.headers or {}) or \
                f"pull request failed ({end.status})"
        return "ok", msgs

    # -- priority groups, pause, reset ------------------------------------------------------
    def unpin_consumer(self, stream: str, consumer: str, group: str) -> None:
        """``CONSUMER.UNPIN`` of ``group``."""
        self.api(f"CONSUMER.UNPIN.{_name(stream)}.{_consumer_name(consumer)}",
                 {"group": group})

    def pause_consumer(self, stream: str, consumer: str, until: int) -> dict[str, Any]:
        """``CONSUMER.PAUSE`` until ``until`` (ns; 0 resumes)."""
        from ..clock import format_rfc3339_nano

        req = {"pause_until": format_rfc3339_nano(until)} if until else {}
        doc = without_envelope(self.api(
            f"CONSUMER.PAUSE.{_name(stream)}.{_consumer_name(consumer)}", req))
        return {k: v for k, v in doc.items() if k != "type"}

    def reset_consumer(self, stream: str, consumer: str, seq: int = 0
                       ) -> tuple[LiveConsumerInfo, int]:
        """``CONSUMER.RESET`` to stream sequence ``seq`` (0: the ack floor's next). The
        consumer is looked up first, as natscli does: the server answers RESET from the
        consumer's own subscription, so for a stream or consumer that is not there no one
        answers and the request would only time out (10059 / 10014 said at once instead)."""
        self.consumer_info(stream, consumer)
        doc = dict(without_envelope(self.api(
            f"CONSUMER.RESET.{_name(stream)}.{_consumer_name(consumer)}",
            {"seq": int(seq)} if seq else None)))
        reset_seq = int(doc.pop("reset_seq", 0))
        return LiveConsumerInfo(doc), reset_seq

    # -- acknowledgements ------------------------------------------------------------------
    def _reply_to(self, stream: str, consumer: str, seq: int, body: bytes) -> bool:
        reply = self._deliveries.get((stream, consumer, int(seq)))
        timeout = self.conn.timeout
        before = None
        if reply is None:
            before = self.consumer_info(stream, consumer)
            reply = self._ack_subject_of(stream, consumer, int(seq), body, before)
            if reply is None:
                return False  # not pending on the consumer: nothing acknowledged
            timeout = min(timeout, 2.0)

        async def go(nc: Any) -> bool:
            import nats.errors as ne

            try:  # a request: the server answers once it has applied it
                await nc.request(reply, body, timeout=timeout)
            except ne.NoRespondersError:
                return False
            except ne.TimeoutError:
                return False  # (a hand-built ack of a message no longer pending)
            return True

        if self.conn.call(go, timeout=timeout + 5, doing=f"acknowledging message {seq}"):
            return before is None or self._took_ack(stream, consumer, int(seq), before)
        # Nobody takes it: a consumer that acknowledges nothing (ack policy none), as the
        # engine answers (False); a consumer or stream gone raises the server's error.
        self.consumer_info(stream, consumer)
        return False

    def _took_ack(self, stream: str, consumer: str, seq: int, before: Any) -> bool:
        """Whether the server's answer to a hand-built ack acknowledged ``seq``: it answers
        an ack of a message above the ack floor that is not pending (acknowledged already)
        all the same, and only the consumer's counts tell them apart: one fewer pending, or
        the floor past ``seq``. Another client's deliveries in between make the counts say
        nothing: taken as acknowledged then."""
        after = self.consumer_info(stream, consumer)
        return (after.num_ack_pending < before.num_ack_pending
                or after.ack_floor.stream_seq >= seq
                or after.delivered.consumer_seq != before.delivered.consumer_seq)

    def _ack_subject_of(self, stream: str, consumer: str, seq: int, body: bytes,
                        info: Any) -> str | None:
        """The v1 ack subject of stream sequence ``seq`` for an ``+ACK`` of a message another
        command fetched, or None when it is not pending (not delivered yet, or at or below
        the ack floor). The server's processAck reads the stream sequence from it and, for
        ack policy explicit only, takes the delivery count and the consumer sequence from
        its own pending record; anything else (ack all, a nak, a term) needs the delivery's
        own numbers, which only the command that fetched it has: refused, saying so."""
        why = None
        if self.api_prefix != "$JS.API":
            why = (f"through {self.api_prefix} the ack subject names the account and domain "
                   "the delivery's reply subject holds")
        elif body != b"+ACK":
            why = ("a nak, a term or a progress report carries the delivery's own count and "
                   "consumer sequence")
        if info.config.ack_policy == "none":  # nothing is ever pending: as the engine says
            return None
        if why is None and info.config.ack_policy != "explicit":
            why = (f"with ack policy {info.config.ack_policy} the server takes the "
                   "delivery's own consumer sequence")
        if why is not None:
            raise JetlinkError(
                f"message {seq} of consumer {stream} > {consumer} was not delivered by this "
                f"command: {why}, which only the command that fetched it has (use consumer "
                "next, which acknowledges what it fetches unless --no-ack)")
        if not info.ack_floor.stream_seq < seq <= info.delivered.stream_seq:
            return None
        if not self._delivered_subject(stream, seq, info):
            return None  # (another subject's message: the server would act on it all the same)
        return f"$JS.ACK.{stream}.{consumer}.1.{seq}.1.0.0"

    def _delivered_subject(self, stream: str, seq: int, info: Any) -> bool:
        """Whether stream sequence ``seq`` is a message of the consumer's filters (one it
        delivered: the engine's rule, core/consumers.py ``ack``); a message gone is none."""
        from ..config.consumer import filters_of

        if not filters_of(info.config):
            return True
        try:
            doc = self.api(f"STREAM.MSG.GET.{_name(stream)}", {"seq": int(seq)})
        except ApiError:
            return False
        return interest_in([info.config])((doc.get("message") or {}).get("subject", ""))

    def ack(self, stream: str, consumer: str, seq: int,
            consumer_seq: int | None = None) -> bool:
        """``+ACK`` of a message this process fetched (stream sequence ``seq``)."""
        return self._reply_to(stream, consumer, seq, b"+ACK")

    def nak(self, stream: str, consumer: str, seq: int, *, delay: int | None = None,
            consumer_seq: int | None = None) -> bool:
        """``-NAK``: redeliver now, or after ``delay`` ns."""
        body = b"-NAK"
        if delay is not None:
            body += b" " + json.dumps({"delay": int(delay)}).encode()
        return self._reply_to(stream, consumer, seq, body)

    def term(self, stream: str, consumer: str, seq: int,
             consumer_seq: int | None = None) -> bool:
        """``+TERM``: never redeliver it."""
        return self._reply_to(stream, consumer, seq, b"+TERM")

    def in_progress(self, stream: str, consumer: str, seq: int) -> bool:
        """``+WPI``: restart its ack wait."""
        return self._reply_to(stream, consumer, seq, b"+WPI")
