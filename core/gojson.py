"""Go's ``encoding/json`` text as nats-server, natscli and nats.go write it: compact, and
``<``, ``>``, ``&``, U+2028 and U+2029 escaped in strings (``json.Marshal``'s HTML escaping);
non-ASCII characters kept as UTF-8."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["go_string", "marshal"]

_HTML = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                       "\u2028": "\\u2028", "\u2029": "\\u2029"})


def go_string(value: str) -> str:
    """One string as a JSON string of Go's."""
    return json.dumps(value, ensure_ascii=False).translate(_HTML)


def marshal(value: Any, *, sort_keys: bool = False) -> str:
    """``json.Marshal(value)``: no spaces; ``sort_keys`` for a Go map (a struct's fields keep
    their order)."""
    return json.dumps(value, separators=(",", ":"), sort_keys=sort_keys,
                      ensure_ascii=False).translate(_HTML)
