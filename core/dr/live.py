"""A live server as the place a mirror is promoted (core/dr/rules.py ``Site``).

- The origin is found the way the server finds it: ``mirror.external.api`` (another
  JetStream domain, e.g. ``$JS.west.API`` over a leafnode) or the mirror's own API. It is
  reachable when that API answers STREAM.INFO for it; its last sequence and subjects are
  read then, and what the mirror has not copied is counted there (``origin_pending``): the
  origin's messages after the mirror's last sequence that the mirror would copy (its
  filters), as ``num_pending`` of a short-lived
  consumer (no acks, memory storage, removed after the count and by the server on its own
  after 10 s). When that consumer cannot be made (e.g. a work-queue origin whose consumers
  leave no room), the mirror's own ``mirror.lag`` as the server reports it is used.
- The update is ``STREAM.UPDATE`` without ``mirror`` (nats-server >= 2.12). The mirror's
  own consumers positioned beyond its last sequence are then recreated with their config,
  delivering from the sequence after it (a server cannot move a consumer back: without
  this it would skip the messages published at last + 1 .. its position).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..config.consumer import ConsumerConfig
from ..config.stream import StreamConfig
from ..errors import ApiError, JetlinkError
from ..live.jetstream import LiveJetStream
from .rules import (
    OriginFacts,
    OwnConsumer,
    PositionClamp,
    beyond_position,
    count_pending,
    lag_start,
    mirror_filters,
    one_line,
)

__all__ = ["LiveSite"]


class LiveSite:
    """The JetStream API (domain) a command is addressed to on a live server."""

    catch_up = "the server copies it by itself: wait"

    def __init__(self, js: LiveJetStream,
                 kv: Callable[[LiveJetStream, str], Any] | None = None) -> None:
        self.js = js
        self._label: str | None = None
        # Key-Value of a domain (core/backend.py gives it: KV over the server's domains)
        self._kv_of = kv

    @property
    def label(self) -> str:
        """The mirror side's JetStream domain ("" when the server has none)."""
        if self._label is None:
            try:
                self._label = str(self.js.api("INFO").get("domain", "") or "")
            except JetlinkError:
                self._label = self.js.conn.target.js_domain or ""
        return self._label

    def cut_off(self) -> str | None:
        return None  # (rules.py ``Site``) what does not answer says so when asked

    def now_ns(self) -> int:
        import time

        return time.time_ns()

    def subject_streams(self) -> dict[str, StreamConfig]:
        return {i.config.name: i.config for i in self.js.streams() if i.config.subjects}

    def other_primaries(self, mirror: Any) -> list[str]:
        """(rules.py ``Site``) a server's other domains are not listed by it: none seen."""
        return []

    def _origin_js(self, cfg: StreamConfig) -> tuple[LiveJetStream, str]:
        m = cfg.mirror
        assert m is not None
        ext = m.external
        if ext is None or not ext.api or ext.api == self.js.api_prefix:
            return self.js, self.label
        return LiveJetStream(self.js.conn, api_prefix=ext.api), m.domain or ext.api

    def origin(self, cfg: StreamConfig, mirror_last: int, *, count_pending: bool = True
               ) -> tuple[OriginFacts, Any]:
        m = cfg.mirror
        if m is None:
            raise JetlinkError(f"stream {cfg.name} is not a mirror")
        ojs, domain = self._origin_js(cfg)
        facts = OriginFacts(domain, m.name, False, None, None, None, None, kind="domain")
        try:
            info = ojs.stream_info(m.name)
        except ApiError as err:
            if err.err_code == 10059:
                facts.error = f"stream {m.name} not found in {facts.where}"
            else:
                facts.error = one_line(err)
            return facts, None
        except JetlinkError as err:  # no responders, timeout: the origin's side is gone
            text = one_line(err)
            why = ("no responders" if "no responders" in text else
                   "timeout" if "timed out" in text or "timeout" in text else text)
            facts.error = f"{facts.where} does not answer ({why})"
            return facts, None
        facts.reachable = True
        facts.last_seq = int(info.state.last_seq)
        facts.read_config(info.config)
        if count_pending:
            facts.pending = self._pending(ojs, cfg, mirror_last, facts.last_seq)
        return facts, ojs

    def _pending(self, ojs: LiveJetStream, cfg: StreamConfig, mirror_last: int,
                 origin_last: int) -> int:
        start, start_time = lag_start(cfg, mirror_last)
        if start_time is None and start > origin_last:
            return 0
        assert cfg.mirror is not None
        try:
            return count_pending(ojs, cfg.mirror.name, start, start_time, mirror_filters(cfg))
        except JetlinkError:
            mirror = self.js.stream_info(cfg.name).mirror or {}
            return int(mirror.get("lag", max(origin_last - mirror_last, 0)))

    # -- the mirror's own consumers ------------------------------------------------------------
    def _beyond(self, stream: str, last: int) -> list[tuple[Any, int]]:
        out = []
        for info in self.js.consumers(stream):
            pos = beyond_position(0, int(info.delivered.stream_seq),
                                  int(info.ack_floor.stream_seq))
            cfg = info.config
            if cfg.deliver_policy == "by_start_sequence":
                pos = max(pos, int(cfg.opt_start_seq) - 1)
            if pos > last:
                out.append((info, pos))
        return out

    def own_clamps(self, stream: str, last: int) -> list[PositionClamp]:
        return [PositionClamp(i.name, pos, last, stream) for i, pos in self._beyond(stream, last)]

    def own_plan(self, stream: str, last: int) -> list[OwnConsumer]:
        return [OwnConsumer(info.name, info.config.to_json(), pos)
                for info, pos in self._beyond(stream, last)]

    def _place(self, stream: str, config: ConsumerConfig, last: int, *, delete: bool) -> None:
        """Recreate a consumer of ``stream`` delivering from ``last + 1`` (a server cannot
        move a consumer back: it is deleted and created again with its config)."""
        new = config.copy()
        new.deliver_policy = "by_start_sequence"
        new.opt_start_seq = last + 1
        new.opt_start_time = ""
        if delete:
            try:
                self.js.delete_consumer(stream, config.name or config.durable_name or "")
            except ApiError as err:
                if err.err_code != 10014:  # consumer not found: deleted by the earlier run
                    raise
        self.js.add_consumer(stream, new, action="create")

    def promote_update(self, cfg: StreamConfig, last: int) -> tuple[Any, list[PositionClamp]]:
        beyond = self._beyond(cfg.name, last)
        promoted = self.js.update_stream(cfg)
        last = int(promoted.state.last_seq)
        clamps = []
        for info, pos in beyond:
            self._place(cfg.name, info.config, last, delete=True)
            clamps.append(PositionClamp(info.name, pos, last, cfg.name))
        return promoted, clamps

    def finish_own(self, stream: str, last: int, plan: Sequence[OwnConsumer]
                   ) -> list[PositionClamp]:
        existing = set(self.js.consumer_names(stream))
        still = {info.name for info, _pos in self._beyond(stream, last)}
        clamps = []
        for own in plan:
            if own.name in existing and own.name not in still:
                continue  # placed by the earlier run
            config = ConsumerConfig.from_json(own.config, strict=False)
            self._place(stream, config, last, delete=own.name in existing)
            clamps.append(PositionClamp(own.name, own.position, last, stream))
        return clamps

    # -- failback (core/dr/failback.py) --------------------------------------------------------
    def side(self, cfg: StreamConfig) -> LiveSite:
        if cfg.mirror is None:
            raise JetlinkError(f"stream {cfg.name} is not a mirror")
        ojs, domain = self._origin_js(cfg)
        if ojs is self.js:
            return self
        site = type(self)(ojs, kv=self._kv_of)
        site._label = cfg.mirror.domain or domain
        return site

    def source_for(self, stream: str, at: Any) -> dict[str, Any]:
        if not self.label or getattr(at, "label", None) == self.label:
            return {"name": stream}
        return {"name": stream, "external": {"api": f"$JS.{self.label}.API"}}

    def kv(self) -> Any:
        if self._kv_of is None:
            raise JetlinkError("this site was opened without Key-Value (core/backend.py "
                               "LiveBackend.site gives it)")
        return self._kv_of(self.js, self.label)

    def agreed_prefix(self, stream: str, promoted: Any, name: str, last: int,
                      shown: tuple[str, str]) -> Any:
        from .reuse import LIVE_REASON, Reuse

        return Reuse(reason=LIVE_REASON)  # nothing is kept: the old origin is recreated

    def reuse_as_mirror(self, cfg: StreamConfig, reuse: Any) -> None:
        from .reuse import LIVE_REASON

        raise JetlinkError(LIVE_REASON)  # pragma: no cover - agreed_prefix reuses nothing

    def settle(self, stream: str, upto: int, timeout: float) -> int:
        import time

        deadline = time.monotonic() + timeout
        while True:
            last = int(self.js.stream_info(stream).state.last_seq)
            if last >= upto or time.monotonic() >= deadline:
                return last
            time.sleep(0.05)
