"""The server's protocol limits on one publish: one definition for every backend.

A client sends a message as one protocol line and the payload::

    PUB <subject> [reply] <#bytes>\\r\\n<payload>\\r\\n
    HPUB <subject> [reply] <#header bytes> <#total bytes>\\r\\n<headers><payload>\\r\\n

nats-server (defaults of 2.x) refuses:

- a line whose arguments (what follows ``PUB `` / ``HPUB ``, without the CRLF) are longer
  than ``max_control_line`` (4096 bytes): ``-ERR 'maximum control line exceeded'``, and it
  closes the connection; a client then reports ``nats: maximum control line exceeded``
  (nats.go's ErrMaxControlLine). Measured against nats-server 2.15: a ``PUB`` of a
  4,094-byte subject with a 1-byte payload (arguments ``<subject> 1``, 4,096 bytes) passes,
  a 4,095-byte one is refused;
- headers + payload over ``max_payload`` (1 MiB): clients refuse before sending with
  ``nats: maximum payload exceeded`` (nats.go's ErrMaxPayload, nats-py's MaxPayloadError).

jetlink refuses both before anything is sent or stored, the embedded engine and the live
client alike (:func:`check_publish`), so a live server never drops the connection. A
JetStream publish is a request: its line also holds the reply subject, the client's inbox
``_INBOX.<22-character nuid>.<n>`` (:func:`js_reply_len`).

Standard library only (plus jetlink's errors).
"""

from __future__ import annotations

import re

from .errors import client_error

__all__ = [
    "CLUSTER_NAME_RE",
    "CONTROL_LINE_ERROR",
    "INBOX_LEN",
    "MAX_CONTROL_LINE",
    "MAX_PAYLOAD",
    "PAYLOAD_ERROR",
    "REQUEST_REPLY_LEN",
    "check_publish",
    "control_line_len",
    "js_reply_len",
]

MAX_CONTROL_LINE = 4096  # nats-server's MAX_CONTROL_LINE_SIZE (max_control_line)
MAX_PAYLOAD = 1024 * 1024  # nats-server's MAX_PAYLOAD_SIZE (max_payload)
# the largest file jetlink reads whole (a stream's config, a topology file): a larger one is
# refused before it fills the memory (/dev/zero, a log given by mistake)
MAX_INPUT_FILE = 256 * 1024 * 1024
# a cluster's name (its database file's; a JetStream domain an API prefix names): 1 to 64
# letters, digits, '_' or '-'
CLUSTER_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
CONTROL_LINE_ERROR = "nats: maximum control line exceeded"
PAYLOAD_ERROR = "nats: maximum payload exceeded"

INBOX_PREFIX = "_INBOX."
NUID_LEN = 22  # a nuid: what nats-py's and nats.go's new_inbox() append to the prefix
INBOX_LEN = len(INBOX_PREFIX) + NUID_LEN  # a client's new_inbox(): _INBOX.<nuid>


def js_reply_len(index: int = 0) -> int:
    """Bytes of the reply subject on the ``index``-th JetStream publish of a pipeline:
    ``_INBOX.<nuid>.<index>`` (what jetlink's live client sends)."""
    return INBOX_LEN + 1 + len(str(index))


# the reply of a request (nats-py's and nats.go's response muxer): _INBOX.<nuid>.<nuid>
REQUEST_REPLY_LEN = INBOX_LEN + 1 + NUID_LEN


def control_line_len(subject_len: int, reply_len: int, hdr_len: int, data_len: int) -> int:
    """Bytes of a publish's protocol line arguments (the server measures these)."""
    n = subject_len + 1 + len(str(hdr_len + data_len))
    if reply_len:
        n += reply_len + 1
    if hdr_len:
        n += len(str(hdr_len)) + 1
    return n


def check_publish(subject: str, data_len: int, *, hdr_len: int = 0, reply_len: int = 0,
                  field: str = "subject", field_len: int | None = None,
                  max_control_line: int = MAX_CONTROL_LINE,
                  max_payload: int = MAX_PAYLOAD) -> None:
    """Raise the client error a publish of ``subject`` would meet: its protocol line over
    ``max_control_line``, or headers + payload over ``max_payload``.

    ``field`` / ``field_len`` name what the user typed when it is not the subject itself (a
    KV key, whose subject is ``$KV.<bucket>.<key>``). The description names the field, its
    length and the limit (never the value itself, which may be huge) and ends with the
    client's own text.
    """
    slen = len(subject.encode("utf-8", "surrogateescape"))
    line = control_line_len(slen, reply_len, hdr_len, data_len)
    if line > max_control_line:
        flen = slen if field_len is None else field_len
        raise client_error(
            f"{field} is {flen:,} bytes: a publish's protocol line "
            f"(subject, reply and sizes: here {line:,} bytes) must fit the server's "
            f"max_control_line ({max_control_line:,} bytes): {CONTROL_LINE_ERROR}",
            field=field)
    total = hdr_len + data_len
    if total > max_payload:
        what = f"payload is {total:,} bytes"
        if hdr_len:
            what += f" ({hdr_len:,} of headers and {data_len:,} of data)"
        raise client_error(
            f"{what}: over the server's max_payload ({max_payload:,} bytes): {PAYLOAD_ERROR}",
            field="payload")


def message_size_detail(max_msg_size: int, hdr_len: int, data_len: int) -> str:
    """What a stream's ``max_msg_size`` refusal (10054) says for people: the limit and the
    message's size, headers and data as the server counts them (the same line on the
    embedded engine and on a live server)."""
    what = f"{hdr_len + data_len:,} bytes" + (f" ({hdr_len:,} of headers)" if hdr_len else "")
    return f"max_msg_size = {max_msg_size:,}: the message is {what}"


def max_msgs_detail(max_msgs: int, held: int) -> str:
    """A discard-new stream full of messages (10077 "maximum messages exceeded"), for people
    (the same line on the embedded engine and on a live server)."""
    return f"max_msgs = {max_msgs:,} (discard new): the stream holds {held:,}"


def max_bytes_detail(max_bytes: int, held: int, size: int) -> str:
    """A discard-new stream full of bytes (10077 "maximum bytes exceeded"), for people."""
    return (f"max_bytes = {max_bytes:,} (discard new): the stream holds {held:,} bytes, the "
            f"message needs {size:,}")


def max_per_subject_detail(max_per: int, subject: str, held: int) -> str:
    """A subject full under discard new per subject (10077 "maximum messages per subject
    exceeded"), for people."""
    from .errors import clip

    return (f"max_msgs_per_subject = {max_per:,} (discard new per subject): subject "
            f"{clip(subject)} holds {held:,}")


def past_last_detail(seq: int, stream: str, last_seq: int) -> str:
    """What a message delete past a stream's last sequence (10057, "stream store EOF") says
    for people: the sequence asked and the stream's last one (the same line on the embedded
    engine and on a live server)."""
    return f"message {seq}: the last sequence of stream {stream} is {last_seq}"


def read_capped(path: object) -> bytes | None:
    """The bytes of a file read whole, or None when it holds more than
    :data:`MAX_INPUT_FILE` (``/dev/zero``: refused as soon as that much was read, before it
    fills the memory); OSError as ``open`` raises it."""
    with open(str(path), "rb") as fh:
        data = fh.read(MAX_INPUT_FILE + 1)
    return None if len(data) > MAX_INPUT_FILE else data


def read_input_file(path: object) -> bytes:
    """:func:`read_capped` of a configuration, a properties or a filters file; JetlinkError
    naming ``path`` when it can not be read or is that large."""
    from .errors import JetlinkError

    try:
        data = read_capped(path)
    except OSError as exc:
        raise JetlinkError(f"cannot read {path}: {exc.strerror or exc}") from None
    if data is None:
        raise JetlinkError(f"cannot read {path}: larger than {MAX_INPUT_FILE:,} bytes: no "
                           "configuration is that large")
    return data


#: The deepest a document read from a file or an option may nest arrays and objects (a
#: configuration nests a few levels, Confluent's REST bodies three): a deeper one is
#: refused as such (errors.py TOO_DEEP) before anything walks it recursively (a copy, a
#: decoding), which would exhaust Python's recursion long before the parser does.
MAX_NESTING = 64


def nested_deeper(value: object, limit: int = MAX_NESTING) -> bool:
    """Whether ``value`` (a parsed JSON or TOML document) nests lists and dicts more than
    ``limit`` levels deep. Iterative: any depth is measured without recursion."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False
