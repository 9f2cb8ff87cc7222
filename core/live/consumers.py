"""Consumers on a live server (CONSUMER.* of ``$JS.API``): a mixin of LiveJetStream."""

from __future__ import annotations


class LiveConsumers:
    """Consumer verbs over ``self.api`` / ``self.conn`` (LiveJetStream provides them)."""
