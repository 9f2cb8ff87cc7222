"""The JSON documents of a cluster link's filter configurations (``{"groupFilters": [...]}``,
``{"topicFilters": [...]}``, ``{"aclFilters": [...]}``): one reading of the document, each
configuration then checks its entries (core/kafka/links.py ``parse_filters``,
core/kafka/acl_sync.py ``parse_acl_filters``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import TOO_DEEP
from .errors import KafkaError

__all__ = ["filter_list"]


def filter_list(text: str | Mapping[str, Any], list_key: str,
                bad: Callable[[str, str], KafkaError], not_object: str) -> list[Any]:
    """The list under ``list_key`` of the document ``text`` (its JSON text or parsed form),
    the only field it may have; ``bad(path, why)`` makes the error of a fault (``not_object``
    the text when the document is not an object)."""
    if isinstance(text, Mapping):
        doc: Any = dict(text)
    else:
        try:
            doc = json.loads(text)
        except ValueError as err:
            raise bad("", f"not a JSON document: {err}") from None
        except RecursionError:
            raise bad("", f"not a JSON document: {TOO_DEEP}") from None
    if not isinstance(doc, dict):
        raise bad("", not_object)
    extra = [k for k in doc if k != list_key]
    if extra:
        raise bad(str(extra[0])[:60], f"unknown field (the document has one field, {list_key})")
    if list_key not in doc:
        raise bad(list_key, "missing")
    items = doc[list_key]
    if not isinstance(items, list):
        raise bad(list_key, "expected a list of filters")
    return items
