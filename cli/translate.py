"""natscli's ``--translate CMD`` (``stream view``, ``stream get``, ``sub``): each message body
printed is what CMD writes (stdout and stderr together) when run with the body on its
standard input, as natscli's ``filterDataThroughCmd`` does.

CMD is a Go text/template with two functions, ``{{ Subject }}`` and ``{{ Stream }}`` (the
message's subject and stream; ``sub`` knows no stream: empty), then split as a shell would
(shlex, no shell runs: no pipes, no variables) into a program and its arguments. A template
or command line that cannot be read is a usage error before any message is read. A
translation that fails (the program not found, a non-zero exit status) prints the output
quoted (Go's ``%q``) and ``Error while translating msg body: <reason>`` in place of that
body, and the command goes on, as natscli's does; ``--json`` documents keep the bodies as
stored.
"""

from __future__ import annotations

import re
import shlex
import subprocess

from jetlink.cli import output
from jetlink.cli.app import App
from jetlink.cli.common import usage

_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.S)
_FUNCTIONS = ("Subject", "Stream")


def command_line(template: str, subject: str, stream: str) -> list[str]:
    """The program and its arguments for one message; ValueError saying why not."""

    def action(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in _FUNCTIONS:  # text/template's own parse error for an unknown name
            word = name.split()[0] if name.split() else name
            raise ValueError(f'template: translate:1: function "{word}" not defined')
        return subject if name == "Subject" else stream

    text = _ACTION.sub(action, template)
    try:
        parts = shlex.split(text)
    except ValueError as err:
        raise ValueError(f"the filter command line could not be parsed: {err}") from None
    if not parts:
        raise ValueError("the filter command line is empty")
    return parts


def checked(template: str | None, option: str = "--translate") -> str | None:
    """The template given (None: none), checked before any message is read: a usage error
    naming it and why otherwise."""
    if template is None:
        return None
    try:
        command_line(template, "", "")
    except ValueError as err:
        raise usage(f"invalid value for {option}: {template!r}: {err}") from None
    return template


def run(data: bytes, template: str, subject: str, stream: str) -> tuple[bytes, str | None]:
    """What the command wrote for ``data`` (stdout and stderr, as Go's CombinedOutput), and
    the reason it failed (None when it exited 0)."""
    try:
        parts = command_line(template, subject, stream)
    except ValueError as err:
        return b"", str(err)
    try:
        done = subprocess.run(parts, input=data, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, check=False)
    except FileNotFoundError:
        return b"", f'exec: "{parts[0]}": executable file not found in $PATH'
    except OSError as err:
        return b"", f"fork/exec {parts[0]}: {err.strerror or err}"
    if done.returncode < 0:
        import signal

        return done.stdout, f"signal: {signal.Signals(-done.returncode).name[3:].lower()}"
    if done.returncode:
        return done.stdout, f"exit status {done.returncode}"
    return done.stdout, None


def print_body(app: App, data: bytes, template: str | None, subject: str, stream: str,
               *, trailing_blank: bool = True) -> None:
    """output.print_body, or natscli's translated body (its outPutMSGBody)."""
    if template is None:
        output.print_body(app, data, trailing_blank=trailing_blank)
        return
    from jetlink.core.config.validate import go_quote

    out, err = run(data, template, subject, stream)
    if err is not None:
        output.write_bytes(f"{go_quote(out.decode('utf-8', 'surrogateescape'))}\n"
                           f"Error while translating msg body: {err}\n\n".encode())
        return
    output.print_body(app, out, trailing_blank=trailing_blank, empty=b"")
