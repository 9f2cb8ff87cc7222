"""Stream configuration: the model (``stream``) and its checks (``validate``, loaded lazily)."""

from __future__ import annotations

from typing import Any

from .stream import StreamConfig

__all__ = ["StreamConfig", "check_stream_config", "check_stream_create", "check_stream_update"]

_LAZY = frozenset({"check_stream_config", "check_stream_create", "check_stream_update"})


def __getattr__(name: str) -> Any:
    # validate.py pulls in the subject and transform engines: import it on first use only.
    if name in _LAZY:
        from . import validate

        return getattr(validate, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
