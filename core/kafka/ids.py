"""Kafka's random ids (``org.apache.kafka.common.Uuid.randomUuid``): 16 random bytes printed
as 22 characters of URL-safe base64 without padding, drawn again when the text starts with
'-' (it would read as an option on a command line) or is one of the two reserved ids (all
zeros; the metadata topic's, ``AAAAAAAAAAAAAAAAAAAAAQ``). Topic ids and cluster link ids are
both made so."""

from __future__ import annotations

import base64
import secrets

_RESERVED = frozenset({"AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAQ"})


def random_uuid() -> str:
    """A new random id, printed as Kafka's ``Uuid.toString()``."""
    while True:
        text = base64.urlsafe_b64encode(secrets.token_bytes(16)).decode("ascii").rstrip("=")
        if not text.startswith("-") and text not in _RESERVED:
            return text
