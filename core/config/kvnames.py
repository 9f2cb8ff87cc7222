"""The names of KV buckets and keys (ADR-8, nats.go's ``validBucketRe`` / ``keyValid``):
bucket and key rules, the bucket's stream and subjects. Kept apart from the bucket configs
(config/kv.py, which re-exports every name here) so that reading a key (``jetlink kv get``,
core/kv.py) loads only these rules.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import client_error

KV_STREAM_PREFIX = "KV_"

_BUCKET_RE = re.compile(r"[a-zA-Z0-9_-]+")  # used with fullmatch: \A...\z
_KEY_RE = re.compile(r"[-/_=.a-zA-Z0-9]+")
_KEY_TOKEN_RE = re.compile(r"[-/_=a-zA-Z0-9]+")
_SEARCH_KEY_RE = re.compile(r"[-/_=.a-zA-Z0-9*]*>?")  # nats.go's validSearchKeyRe

# nats.go's error texts (jetstream/errors.go); nats-py raises InvalidBucketNameError,
# InvalidKeyError and "nats: history limited to a max of 64" for the same mistakes.
ERR_INVALID_BUCKET = "nats: invalid bucket name"
ERR_INVALID_KEY = "nats: invalid key"


# --------------------------------------------------------------------------- names and keys


def is_bucket_name(name: Any) -> bool:
    """Whether ``name`` is a valid bucket name (:func:`validate_bucket_name`'s rule)."""
    return isinstance(name, str) and bool(_BUCKET_RE.fullmatch(name))


def validate_bucket_name(name: Any, *, field: str = "bucket") -> str:
    """Return ``name`` if it is a valid bucket name (``\\A[a-zA-Z0-9_-]+\\z``), else raise."""
    if not isinstance(name, str) or not name:
        raise client_error(
            f"{ERR_INVALID_BUCKET} {_q(name)}: a bucket name is required", field=field
        )
    if not _BUCKET_RE.fullmatch(name):
        raise client_error(
            f"{ERR_INVALID_BUCKET} {_q(name)}: bucket names may contain only letters, digits, "
            '"_" and "-"',
            field=field,
        )
    return name


def validate_key(key: Any, *, field: str = "key", reserved: bool = True) -> str:
    """Return ``key`` if it is a valid KV key (ADR-8 1.0 and nats.go's ``keyValid``), else raise.

    ``\\A[-/_=\\.a-zA-Z0-9]+\\z``, not starting or ending with ``.``, no empty token (``..``),
    and, with ``reserved`` (a write), not starting with ``_kv`` (reserved for internal use:
    such a key another client wrote, nats.go checks none, is still read).
    """
    _check_characters(key, field, _KEY_RE,
                      'keys may contain only letters, digits and "-", "/", "_", "=", "."')
    _check_key_shape(key, field, reserved)
    return key


def _check_characters(key: Any, field: str, allowed: re.Pattern[str], rule: str) -> None:
    """A key (or filter) given, every character of it ``allowed`` (``rule`` says which)."""
    if not isinstance(key, str) or not key:
        raise client_error(f"{ERR_INVALID_KEY} {_q(key)}: a key can not be empty", field=field)
    if not allowed.fullmatch(key):
        raise client_error(f"{ERR_INVALID_KEY} {_q(key)}: {rule}", field=field)


def validate_key_filter(key: Any, *, field: str = "keys", reserved: bool = True) -> str:
    """A key or a key pattern (for mirrors, aggregates, watchers): ``*`` and a final ``>``
    allowed as whole tokens, every other token as in a key (``reserved``: as
    :func:`validate_key`'s; a read's filter may match ``_kv`` keys)."""
    if not isinstance(key, str) or not key:
        raise client_error(f"{ERR_INVALID_KEY} {_q(key)}: a key can not be empty", field=field)
    tokens = key.split(".")
    for i, tok in enumerate(tokens):
        if tok == "*" or (tok == ">" and i == len(tokens) - 1):
            continue
        if tok == ">":
            raise client_error(
                f'{ERR_INVALID_KEY} {_q(key)}: ">" may only be the last token of a key filter',
                field=field,
            )
        if tok and not _KEY_TOKEN_RE.fullmatch(tok):
            raise client_error(
                f"{ERR_INVALID_KEY} {_q(key)}: key filters may contain only letters, digits, "
                '"-", "/", "_", "=", "." and the whole-token wildcards "*" and ">"',
                field=field,
            )
    _check_key_shape(key, field, reserved)
    return key


def validate_search_key(key: Any, *, field: str = "key") -> str:
    """A read's key filter (``kv keys``, ``kv watch``, ``kv history``) by nats.go's
    ``searchKeyValid``: letters, digits, ``-/_=.`` and ``*`` anywhere, an optional final
    ``>``, no ``.`` first or last, no empty token. A ``*`` or ``>`` inside a longer token is
    no wildcard (nats-server's subjects: :func:`literal_wildcards`) and matches no key."""
    _check_characters(key, field, _SEARCH_KEY_RE, 'key filters may contain only letters, '
                      'digits, "-", "/", "_", "=", ".", "*" and a final ">"')
    _check_key_shape(key, field, reserved=False)
    return key


def literal_wildcards(key: str) -> list[str]:
    """The tokens of a key filter that hold ``*`` or ``>`` but are not that character alone:
    literal text to the server (a wildcard is a whole token), which no key can contain."""
    return [t for t in key.split(".") if len(t) > 1 and ("*" in t or ">" in t)]


def _check_key_shape(key: str, field: str, reserved: bool = True) -> None:
    if key[0] == "." or key[-1] == ".":
        raise client_error(
            f'{ERR_INVALID_KEY} {_q(key)}: a key can not start or end with "."', field=field
        )
    if ".." in key:
        raise client_error(
            f'{ERR_INVALID_KEY} {_q(key)}: a key can not contain an empty token ("..")',
            field=field,
        )
    if reserved and key.startswith("_kv"):
        raise client_error(
            f'{ERR_INVALID_KEY} {_q(key)}: keys starting with "_kv" are reserved for internal use',
            field=field,
        )


def _q(value: Any) -> str:
    """A key as an error quotes it: Go's %q (a control character escaped, never written
    to the terminal as it is), cut when long (core/errors.py clip)."""
    from ..errors import clip
    from .validate import go_quote

    if isinstance(value, str):
        return go_quote(clip(value))
    return clip(repr(value))


def kv_subjects(bucket: str) -> str:
    """The ingest subjects of bucket ``bucket``: ``$KV.<bucket>.>``."""
    return f"$KV.{bucket}.>"


def kv_stream_name(bucket: str) -> str:
    return KV_STREAM_PREFIX + bucket


def bucket_of_stream(stream: str) -> str | None:
    """``KV_ORDERS`` -> ``ORDERS``; None for a stream name without the ``KV_`` prefix."""
    if stream.startswith(KV_STREAM_PREFIX) and len(stream) > len(KV_STREAM_PREFIX):
        return stream[len(KV_STREAM_PREFIX) :]
    return None


def aggregate_origin_described(stream: str) -> str:
    """How an aggregate's origin is named in a warning or an error: ``aggregate origin bucket
    "B" (stream KV_B)``, or ``aggregate origin stream "S"`` for a stream of another name."""
    bucket = bucket_of_stream(stream)
    if bucket:
        return f'aggregate origin bucket "{bucket}" (stream {stream})'
    return f'aggregate origin stream "{stream}"'


def mirror_name_problem(stream: str, origin: str) -> str | None:
    """Why the KV mirror stored as ``stream`` of bucket ``origin`` can not be promoted (or
    failed over) under its name, or None: its keys are stored as ``$KV.<origin>.<key>``, so
    only a stream named ``KV_<origin>`` reads and writes them after the promotion (nats.go's
    naming of a mirror bucket)."""
    if stream == kv_stream_name(origin):
        return None
    return (f"KV mirror {stream} mirrors bucket {origin} under another name: its keys are "
            f"stored as $KV.{origin}.<key>, so it can only be promoted as a stream named "
            f"KV_{origin} (in another domain or cluster than the origin)")
