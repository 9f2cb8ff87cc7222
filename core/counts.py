"""How many messages one command may write (``pub --count``, ``topic produce --count``).

natscli reads ``pub --count`` as a Go ``int`` (int64) and nats-server has no limit of its own:
the server's storage limits stop a publisher. jetlink's embedded engine writes to the data
directory's filesystem, so a count that cannot fit would run until killed and fill the disk.
Two rules refuse such a count before anything is written:

- at most :data:`MAX_COUNT` (1,000,000,000) messages per command: a usage error (exit 2);
- in the data directory, the messages must fit in the free space of its filesystem, estimated
  as count x (payload + subject + headers + :data:`MSG_OVERHEAD`): an error (exit 1).

The estimate is a lower bound (the store takes about 45 bytes per message beyond its bytes:
row, index and subject state), so a command this refuses could never have completed.
"""

from __future__ import annotations

import os

from .errors import JetlinkError, UsageError
from .store.health import free_bytes

MAX_COUNT = 1_000_000_000
MSG_OVERHEAD = 32  # bytes the store takes per message beyond payload, subject and headers


def check_count(count: int, *, flag: str = "--count") -> int:
    """``count`` when at most MAX_COUNT, else a UsageError naming the flag, value and limit."""
    if count > MAX_COUNT:
        from .errors import clip

        raise UsageError(
            f"invalid value for {flag}: {clip(str(count))!r}: more than the maximum "
            f"{MAX_COUNT:,} messages per command"
        )
    return count


def check_space(count: int, msg_bytes: int, path: str | os.PathLike[str], *,
                flag: str = "--count") -> int:
    """``count`` when ``count`` messages of ``msg_bytes`` bytes (payload, subject, headers)
    fit in the free space of the filesystem holding ``path`` (the data directory), else a
    JetlinkError with the numbers."""
    need = count * (msg_bytes + MSG_OVERHEAD)
    free = free_bytes(os.path.abspath(os.fspath(path)))
    if need > free:
        raise JetlinkError(
            f"{flag} {count:,}: not enough free space: {count:,} messages of about "
            f"{msg_bytes + MSG_OVERHEAD:,} bytes need at least {need:,} bytes, more than the "
            f"{free:,} bytes free for the data directory {os.fspath(path)}",
            field="count",
        )
    return count


def message_bytes(subject: str, body: str, headers: list[tuple[str, str]],
                  key: str = "") -> int:
    """The bytes of one message before template expansion (subject or topic, body, headers,
    a record's key): what :func:`check_space` multiplies."""
    def enc(text: str) -> int:
        return len(text.encode("utf-8", errors="surrogateescape"))

    return enc(subject) + enc(body) + enc(key) + sum(enc(k) + enc(v) + 4 for k, v in headers)
