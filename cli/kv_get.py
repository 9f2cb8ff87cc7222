"""``jetlink kv get``'s body and rendering, without Typer.

The command is declared in cli/kv.py (its options, help and completion); what it does is
:func:`show_entry`, shared with the quick path of cli/launch.py, which runs a plain ``kv get``
without importing Typer (docs/benchmarks.md "Start-up"). Nothing here imports Typer or Rich.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from jetlink.cli import common, output

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.cli.app import App
    from jetlink.core.kv import Entry, KeyValue

# natscli's limit on a value `kv get` shows (history and revert show 40: cli/kv.py).
GET_SHOW_MAX = 120


def open_bucket(app: App, bucket: str) -> KeyValue:
    """The handle of ``bucket`` (core/kv.py ``KV.open``: a bucket, a KV mirror, a read
    replica) over the backend the command acts on."""
    return common.open_kv(app).open(bucket)


def show_entry(app: App, bucket: str, key: str, *, revision: int | None, raw: bool) -> None:
    """``kv get``: the key's latest entry (or the one at ``revision``), its bytes as they
    are with ``raw`` (unless --json), else natscli's layout or the Entry document."""
    from jetlink.core.errors import ApiError

    try:
        entry = open_bucket(app, bucket).get(key, revision=revision)
    except ApiError as err:
        if err.err_code == 10037 and err.detail is None:  # for people: which key (the JSON
            err.detail = f"key {key}" + (f" at revision {revision}" if revision else "") \
                + f" in bucket {bucket}"  # document stays the server's)
        raise
    if raw and not app.json:
        output.write_bytes(entry.value)  # (no newline: natscli's get --raw)
        return
    app.emit(entry_doc(entry), human=lambda a, d: render_get(a, entry))


def printable(value: bytes) -> str:
    """natscli's ``Base64IfNotPrintable``: the value as text when every character is
    printable ASCII (its ``IsPrintable``: a rune past ``unicode.MaxASCII`` is not, nor one
    ``unicode.IsPrint`` refuses, a control character), else standard base64: "héllo" is
    shown as ``aMOpbGxv``, as natscli shows it."""
    text = value.decode("ascii", "replace")
    if text.isascii() and text.isprintable():
        return text
    return base64.b64encode(value).decode("ascii")


def entry_doc(entry: Entry) -> dict[str, Any]:
    return {**entry.to_json(), "served_by": entry.served_by}


def render_get(app: App, entry: Entry) -> None:
    """natscli's kv get: ``B > K revision: N created @ TIME``, a blank line, the value."""
    output.line(
        app,
        f"{entry.bucket} > {entry.key} revision: {entry.revision} created @ "
        f"{output.local_ns(entry.created)}",
    )
    output.line(app)
    text = printable(entry.value)
    size = len(text.encode("utf-8"))  # (Go's len: bytes of the text shown)
    if size > GET_SHOW_MAX:
        output.line(
            app,
            f"Showing first {GET_SHOW_MAX} bytes of {output.comma(size)}, use --raw for "
            "full data",
        )
        output.line(app)
        text = text.encode("utf-8")[:GET_SHOW_MAX].decode("utf-8", "replace")
    output.line(app, text)
    output.line(app)
