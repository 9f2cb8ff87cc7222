"""Priority groups of pull consumers (ADR-42; nats-server 2.11, ``prioritized`` 2.12).

A consumer with ``priority_policy`` and ``priority_groups`` takes pull requests that name one
of its groups (the request's ``group``, ``min_pending``, ``min_ack_pending``, ``id``,
``priority`` fields: the server's ``PriorityGroup``). The rules, as nats-server 2.15.1's
``processNextMsgRequest`` and ``nextWaiting`` apply them:

- refusals (a status, no err_code): min pending / min ack pending on a consumer that is not
  ``overflow`` (400 ``Bad Request - Not a Overflow Priority consumer``), a pin id on one that
  is not ``pinned_client`` (400 ``Bad Request - Not a Pinned Client Priority consumer``), a
  priority outside 0..9, then on any priority consumer a request without a group (400
  ``Bad Request - Priority Group missing``) or with a group it does not have (400 ``Bad Request
  - Invalid Priority Group``), and a pin id other than the current one (423 ``Nats-Pin-Id
  mismatch``);
- ``pinned_client``: the first request that gets a message while nobody is pinned becomes the
  pinned client: a new pin id, carried by every delivered message in a ``Nats-Pin-Id`` header;
  while a pin holds, requests without it get nothing (they wait until they expire), a request
  with a stale pin id gets 423 ``Nats-Wrong-Pin-Id`` once a message is there; the pin lapses
  ``priority_timeout`` after the pinned client's last request (the server's pinned TTL
  timer, here on the engine's clock) or on ``CONSUMER.UNPIN``;
- ``overflow``: a request with ``min_pending`` / ``min_ack_pending`` gets a message only while
  the consumer has at least that many messages pending (counting the one to deliver) or at
  least that many awaiting acknowledgement;
- ``prioritized``: among waiting requests the lowest ``priority`` is served first; a pull here
  is answered at once, with no other request waiting, so only the range check shows.

The pin lives in the consumer's state (:class:`~jetlink.core.consumers.ConsumerState`
``pin_id`` / ``pinned_ts`` / ``pin_deadline``). Standard library only.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, Protocol

from .clock import ZERO_TIME, format_rfc3339_nano
from .config.consumer import ConsumerConfig
from .errors import ApiError

__all__ = [
    "PIN_HEADER",
    "PinState",
    "PullPriority",
    "check_request",
    "claim_pin",
    "expire_pin",
    "group_states",
    "new_pin_id",
    "overflow_allows",
    "unpin",
]

PIN_HEADER = "Nats-Pin-Id"  # the server's JSPullRequestNatsPinId
_NUID_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class PullPriority:
    """The priority fields of a pull request (the server's ``PriorityGroup``, inlined into
    ``JSApiConsumerGetNextRequest``)."""

    group: str = ""
    min_pending: int = 0
    min_ack_pending: int = 0
    id: str = ""
    priority: int = 0

    def to_json(self) -> dict[str, Any]:
        """The fields as the request carries them (omitempty)."""
        out: dict[str, Any] = {}
        if self.group:
            out["group"] = self.group
        if self.min_pending:
            out["min_pending"] = self.min_pending
        if self.min_ack_pending:
            out["min_ack_pending"] = self.min_ack_pending
        if self.id:
            out["id"] = self.id
        if self.priority:
            out["priority"] = self.priority
        return out


class PinState(Protocol):
    """The pin fields of a consumer's state."""

    pin_id: str
    pinned_ts: int
    pin_deadline: int


def _bad(status: int, text: str) -> ApiError:
    return ApiError(status, 0, text)


def new_pin_id() -> str:
    """A pin id shaped like the server's (a 22-character NUID)."""
    return "".join(secrets.choice(_NUID_ALPHABET) for _ in range(22))


def expire_pin(st: PinState, cfg: ConsumerConfig, now: int) -> None:
    """The pinned TTL timer: the pin lapses ``priority_timeout`` after it was last renewed."""
    if st.pin_id and cfg.priority_timeout > 0 and now >= st.pin_deadline:
        unpin(st)


def unpin(st: PinState) -> None:
    """``unassignPinId``: nobody is pinned."""
    st.pin_id, st.pinned_ts, st.pin_deadline = "", 0, 0


def check_request(st: PinState, cfg: ConsumerConfig, req: PullPriority, now: int) -> None:
    """The server's checks of a pull request's priority fields (``processNextMsgRequest``);
    a request carrying the current pin renews it."""
    policy = cfg.priority_policy or "none"
    if (req.min_pending or req.min_ack_pending) and policy != "overflow":
        raise _bad(400, "Bad Request - Not a Overflow Priority consumer")
    if req.id and policy != "pinned_client":
        raise _bad(400, "Bad Request - Not a Pinned Client Priority consumer")
    if not 0 <= req.priority <= 9:
        raise _bad(400, "Bad Request - Priority must be between 0 and 9")
    if policy == "none":
        return
    if not req.group:
        raise _bad(400, "Bad Request - Priority Group missing")
    if req.group not in cfg.priority_groups:
        raise _bad(400, "Bad Request - Invalid Priority Group")
    if st.pin_id:
        if req.id == st.pin_id:
            st.pin_deadline = now + cfg.priority_timeout
        elif req.id:
            raise _bad(423, "Nats-Pin-Id mismatch")


def claim_pin(st: PinState, cfg: ConsumerConfig, req: PullPriority, now: int) -> str | None:
    """For a ``pinned_client`` consumer with a message to deliver (``nextWaiting``): the pin
    id the request's messages carry, or None when another client holds the pin (the
    request gets nothing). Raises 423 ``Nats-Wrong-Pin-Id`` for a stale pin id."""
    if st.pin_id:
        return st.pin_id if req.id == st.pin_id else None
    if req.id:
        raise _bad(423, "Nats-Wrong-Pin-Id")
    st.pin_id, st.pinned_ts = new_pin_id(), now
    st.pin_deadline = now + cfg.priority_timeout
    return st.pin_id


def overflow_allows(req: PullPriority, npc: int, ack_pending: int) -> bool:
    """Whether an overflow request gets the next message: ``npc`` the messages pending
    counting that one, ``ack_pending`` the messages awaiting acknowledgement."""
    if req.min_pending <= 0 and req.min_ack_pending <= 0:
        return True
    return ((req.min_pending > 0 and req.min_pending <= npc)
            or (req.min_ack_pending > 0 and req.min_ack_pending <= ack_pending))


def group_states(cfg: ConsumerConfig, st: PinState) -> list[dict[str, Any]]:
    """``priority_groups`` of ``consumer info``: the first group with its pin (the server
    reports one group's state)."""
    if not cfg.priority_groups:
        return []
    out: dict[str, Any] = {"group": cfg.priority_groups[0]}
    if st.pin_id:
        out["pinned_client_id"] = st.pin_id
    out["pinned_ts"] = format_rfc3339_nano(st.pinned_ts) if st.pinned_ts else ZERO_TIME
    return [out]
