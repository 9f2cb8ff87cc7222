"""A synchronous connection to a live nats-server, over nats-py.

nats-py is asyncio; jetlink's verbs are plain functions. :class:`LiveConnection` runs one
event loop on a private daemon thread for the life of the connection and hands it
coroutines (``run``), so the server's PINGs are answered and subscriptions keep receiving
while a verb renders or waits at a prompt. nats-py is imported here only: this module is
loaded when a server is in force, never for the embedded engine (tests/test_imports.py).

Connections never reconnect: a verb that loses its server mid-way fails with one clear
line (what it was doing, the server, the cause) instead of retrying behind the operator's
back. Every nats-py exception is turned into a :class:`LiveError` (a JetlinkError, exit
status 1) by :func:`describe`; JetStream API answers carrying ``{"error": {...}}`` become the
server's own :class:`~jetlink.core.errors.ApiError` (code, err_code, description) as given.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import ssl
import threading
from collections.abc import Callable, Coroutine, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from .. import headers as H
from .. import limits as L
from ..durations import seconds_text
from ..errors import ApiError, JetlinkError, LiveError, clip
from .target import ServerTarget, url_has_credentials
from .wire import nc_publish

__all__ = ["LiveConnection", "LiveError", "RawMsg", "connect", "without_envelope"]


def _object_of(verb: str) -> str:
    """What a JetStream API verb is about, as said to people (``STREAM.INFO.S``: stream S;
    ``CONSUMER.INFO.S.C``: consumer S > C; ``DIRECT.GET.S``: stream S)."""
    parts = verb.split(".")
    if parts[0] == "CONSUMER" and len(parts) >= 4:
        return f"consumer {parts[2]} > {parts[3]}"
    if parts[0] in ("STREAM", "DIRECT") and len(parts) >= 3:
        return f"stream {parts[2]}"
    return f"the request ({verb})"

T = TypeVar("T")
# Slack on top of a request's own timeout before the calling thread gives up on the loop.
_GRACE = 5.0
# how often a wait for the loop looks whether the connection closed under it (seconds)
_LOST_POLL = 0.2


@dataclass
class RawMsg:
    """A message as the server sent it: subject, headers (None when there were none; a
    status message has ``Status`` / ``Description`` keys as nats-py parses them), data."""

    subject: str
    headers: dict[str, str] | None
    data: bytes
    reply: str = ""
    block: bytes | None = None  # the header block as sent (a raw subscription's)

    @property
    def status(self) -> str:
        return (self.headers or {}).get("Status", "")


def raw_handlers(nc: Any) -> dict[int, Any]:
    """The subscriptions of connection ``nc`` whose messages are taken as the parser hands
    them over (``sid -> handler(subject, reply, data, header bytes)``), before nats-py
    parses headers and builds its message objects; every other subscription goes the usual
    way. Installed once per connection over nats-py's ``_process_msg`` (2.x)."""
    table: dict[int, Any] | None = getattr(nc, "_jetlink_raw", None)
    if table is None:
        table = {}
        original = nc._process_msg

        async def process_msg(sid: int, subject: bytes, reply: bytes, data: bytes,
                              headers: bytes | None) -> None:
            handler = table.get(sid)
            if handler is None:
                await original(sid, subject, reply, data, headers)
            else:
                handler(subject, reply, data, headers)

        nc._process_msg = process_msg
        nc._jetlink_raw = table
    return table


def parsed_headers(block: bytes | None) -> dict[str, str] | None:
    """A header block as nats-py parses it: its lines (nats-py's own line parser), and a
    status line's code and text as ``Status`` / ``Description``."""
    if not block:
        return None
    from nats.aio.client import Client

    first, _, rest = block.partition(b"\r\n")
    out: dict[str, str] = {}
    status = first[len(b"NATS/1.0"):].strip()
    if status:
        code, _, text = status.partition(b" ")
        if code.isdigit():
            out["Status"] = code.decode()
        if text.strip():
            out["Description"] = text.strip().decode("utf-8", "replace")
    out.update(Client._parse_header_lines(rest))
    return out


def _ssl_context(t: ServerTarget) -> ssl.SSLContext | None:
    """The TLS settings; each file checked and named with where it was given (``--tlsca
    (from NATS_CA) /x.pem: no such file``) and what is wrong with it."""
    if not t.uses_tls:
        return None
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    sources = t.sources or {}
    if t.tls_cert or t.tls_key:
        if not (t.tls_cert and t.tls_key):
            raise LiveError("a client certificate needs both --tlscert and --tlskey",
                            field="tlscert" if not t.tls_cert else "tlskey")
    ca = _file(t.tls_ca, "--tlsca", sources.get("tls_ca"))
    cert = _file(t.tls_cert, "--tlscert", sources.get("tls_cert"))
    key = _file(t.tls_key, "--tlskey", sources.get("tls_key"))
    if ca:
        try:
            ctx.load_verify_locations(cafile=ca)
        except (OSError, ssl.SSLError) as exc:
            raise LiveError(f"{_given('--tlsca', sources.get('tls_ca'))} {t.tls_ca}: no CA "
                            f"certificate could be read from it (a PEM file of "
                            f"certificates): {_ssl_reason(exc)}", field="tlsca") from None
    if cert and key:
        try:
            ctx.load_cert_chain(cert, key)
        except (OSError, ssl.SSLError) as exc:
            raise LiveError(f"{_given('--tlscert', sources.get('tls_cert'))} {t.tls_cert} "
                            f"with {_given('--tlskey', sources.get('tls_key'))} {t.tls_key}: "
                            "not a PEM certificate and its private key: "
                            f"{_ssl_reason(exc)}", field="tlscert") from None
    return ctx


def _ssl_reason(exc: BaseException) -> str:
    """OpenSSL's reason in words (``no certificate or crl found``), not its codes."""
    import re

    reason = getattr(exc, "reason", None)
    if reason:
        return str(reason).replace("_", " ").lower()
    text = str(exc.args[-1]) if exc.args else str(exc)
    return re.sub(r"^\[\w+\] | \(_ssl\.c:\d+\)$", "", text)


def _nkey_file(path: str | None, source: str | None = None) -> str | None:
    """``--nkey`` made whole and checked: natscli's seed file, a user nkey seed (``SU...``,
    its checksum right) on a line of its own; nats-py says only "invalid seed"."""
    read = _read_file(path, "--nkey", source, 1 << 16)
    if read is None:
        return None
    full, where, text = read
    seeds = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("SU")]
    if not seeds:
        kind = " (that is a public key: give the seed)" if any(
            ln.strip().startswith("U") for ln in text.splitlines()) else ""
        raise LiveError(f"{where}: no user nkey seed found{kind} (a user seed starts with SU)",
                        field="nkey")
    if not _seed_checksum_ok(seeds[0]):
        raise LiveError(f"{where}: the user nkey seed is not valid (its checksum or encoding "
                        "is wrong)", field="nkey")
    return full


def _file(path: str | None, flag: str, source: str | None = None) -> str | None:
    """``path`` made whole; LiveError naming where it was given (``--creds``, ``NATS_CREDS``,
    a context) when no such file exists."""
    if not path:
        return None
    full = os.path.expanduser(path)
    if not os.path.isfile(full):
        what = "a directory, not a file" if os.path.isdir(full) else "no such file"
        raise LiveError(f"{_given(flag, source)} {path}: {what}", field=flag.lstrip("-"))
    return full


def _read_file(path: str | None, flag: str, source: str | None, limit: int
               ) -> tuple[str, str, str] | None:
    """The file an option names (:func:`_file`), read as text (at most ``limit`` bytes):
    ``(its whole path, how it was given with the path, the text)``; None when not given."""
    full = _file(path, flag, source)
    if full is None:
        return None
    where = f"{_given(flag, source)} {path}"
    try:
        with open(full, "rb") as f:
            text = f.read(limit).decode("utf-8", "replace")
    except OSError as exc:
        raise LiveError(f"{where}: can not read it: {exc.strerror or exc}",
                        field=flag.lstrip("-")) from None
    return full, where, text


_CREDS_JWT = "BEGIN NATS USER JWT"
_CREDS_SEED = "BEGIN USER NKEY SEED"


def _creds_file(path: str | None, source: str | None = None) -> str | None:
    """``--creds`` made whole and read once: a credentials file holds a ``-----BEGIN NATS
    USER JWT-----`` line with the user's JWT on the next line, and a ``-----BEGIN USER NKEY
    SEED-----`` line with a user seed (``SU...``) on the next (the decorated form ``nsc``
    writes, the one nats-py reads). Checked before connecting: nats-py reads the file only
    when the server asks for credentials, and then never returns from a file without the
    JWT line; nats.go refuses such a file at every connect."""
    read = _read_file(path, "--creds", source, 1 << 20)
    if read is None:
        return None
    full, where, text = read
    lines = [ln.strip() for ln in text.splitlines()]

    def after(marker: str) -> str:
        for i, ln in enumerate(lines):
            if marker in ln:
                return lines[i + 1] if i + 1 < len(lines) else ""
        return ""

    rule = ("a credentials file holds the user's JWT after a '-----BEGIN NATS USER "
            "JWT-----' line and its seed after a '-----BEGIN USER NKEY SEED-----' line")
    jwt = after(_CREDS_JWT)
    if jwt.count(".") != 2 or jwt.startswith("-"):
        raise LiveError(f"{where}: no user JWT found ({rule})", field="creds")
    seed = after(_CREDS_SEED)
    if not seed.startswith("SU"):
        raise LiveError(f"{where}: no user nkey seed found ({rule}; a user seed starts "
                        "with SU)", field="creds")
    if not _seed_checksum_ok(seed):
        raise LiveError(f"{where}: the user nkey seed is not valid (its checksum or "
                        "encoding is wrong)", field="creds")
    return full


def _seed_checksum_ok(seed: str) -> bool:
    """An nkey's base32 text decodes and its last two bytes are the CRC-16 (XMODEM,
    little-endian) of the rest: nkeys' ``decode`` (nats.go refuses a seed that fails it;
    the Python nkeys package does not check the checksum)."""
    import base64
    import binascii

    try:
        raw = base64.b32decode(seed + "=" * (-len(seed) % 8))
    except (binascii.Error, ValueError):
        return False
    if len(raw) < 34:
        return False
    crc = 0
    for byte in raw[:-2]:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021 if crc & 0x8000 else crc << 1) & 0xFFFF
    return crc == int.from_bytes(raw[-2:], "little")


def _tls_only_client() -> Any:
    """A nats-py client that never talks without TLS once TLS was asked for (a ``tls://``
    URL, ``--tlsca``, ``--tlscert``, a context with TLS settings). nats-py upgrades only
    when the server's INFO says ``tls_required``: against a server that does not, it would
    send CONNECT, password included, in clear. As nats.go's ``checkForSecure``: a server
    that offers TLS (``tls_available``) is upgraded to, one that does not is refused
    (SecureConnWantedError) before anything is sent; on every connect, reconnects too."""
    import nats.errors as ne
    from nats.aio.client import Client

    class TLSOnlyClient(Client):
        async def _process_info(self, info: dict[str, Any],
                                initial_connection: bool = False) -> None:
            if initial_connection and not info.get("tls_required"):
                if not info.get("tls_available"):
                    raise ne.SecureConnWantedError()
                info["tls_required"] = True  # nats-py upgrades the connection then
            await super()._process_info(info, initial_connection)

    return TLSOnlyClient()


def passing(err: LiveError) -> LiveError:
    """``err`` marked transient: a server that does not answer now may answer soon."""
    err.transient = True
    return err


# the server's -ERR for a denied publish or subscription, as nats-py reports it
_VIOLATION = re.compile(r'permissions violation for (publish|subscription) to "([^"]*)"',
                        re.IGNORECASE)


class PermissionDenied(LiveError):
    """What the server's permissions did not let through (a request, a publish, a
    subscription): its -ERR, named (:meth:`LiveConnection.denied_since`)."""


def _from_natscli_context(target: ServerTarget, fld: str) -> bool:
    """Whether setting ``fld`` of ``target`` came from a natscli context (its source)."""
    return (target.sources or {}).get(fld, "").startswith("natscli context ")


def _credentials_from(target: ServerTarget) -> str:
    """The credentials the connection used and where each came from (``--user/--password
    (from jetlink context prod)``), or the options that give them when none was."""
    sources = target.sources or {}
    # the one identity the connection used, as _connect picks it (jsm.go's natscontext: a
    # user, else a credentials file, else an nkey; the others were not sent), and a token
    in_url = any(url_has_credentials(s) for s in target.servers)
    identity = next((f for f in ("user", "creds", "nkey") if getattr(target, f, None)), None)
    sent = {"user": ("user", "password"), "creds": ("creds",), "nkey": ("nkey",)}.get(
        identity or "", ())
    if in_url:  # (the URL's user part wins over the options but a credentials file)
        sent = ("creds",) if identity == "creds" or target.creds else ()
    used = [(fld, opt) for fld, opt in (("user", "--user"), ("password", "--password"),
                                        ("token", "the token"), ("creds", "--creds"),
                                        ("nkey", "--nkey"))
            if getattr(target, fld, None) and (fld in sent or (fld == "token" and not in_url))]
    # (a token: a natscli context's, no option)
    if not used and not in_url:
        if target.origin.startswith("[clusters."):  # a cluster a topology file binds
            return (f"the user and password (or token, creds, nkey) keys of {target.origin}, "
                    "or its context = NAME (none is set; the command line's credentials are "
                    "not used for a cluster a file binds)")
        return "--user/--password, --creds or --nkey (none was given)"
    given = [_given(opt, sources.get(fld)) for fld, opt in used]
    if in_url:
        given.append("the user and password (or token) in the server URL")
    if identity == "user" and not target.password and not in_url and \
            not _from_natscli_context(target, "user"):
        given[0] += " (without a password: sent as a token)"
    return ", ".join(given)


def _given(option: str, source: str | None) -> str:
    """``--creds``, or ``--creds (from NATS_CREDS)`` when the value came from elsewhere."""
    return option if not source or source == option else f"{option} (from {source})"


def describe(exc: BaseException, target: ServerTarget, doing: str = "") -> LiveError:
    """One line for a nats-py (or socket / TLS) failure: what failed, where, why."""
    import nats.errors as ne

    where = target.shown_url
    what = f"{doing}: " if doing else ""
    if isinstance(exc, LiveError):
        return exc
    if isinstance(exc, ne.AuthorizationError) or "authorization violation" in str(exc).lower():
        return LiveError(f"{what}authorization violation on {where}: check "
                         f"{_credentials_from(target)}")
    if isinstance(exc, (ssl.SSLError, ne.SecureConnFailedError)):
        return LiveError(f"{what}TLS failure with {where}: {exc}")
    if isinstance(exc, ne.SecureConnRequiredError):
        return LiveError(f"{what}{where} requires TLS: use a tls:// URL or --tlsca")
    if isinstance(exc, ne.SecureConnWantedError):
        return LiveError(f"{what}{where} does not offer TLS, which this connection asks for "
                         "(a tls:// URL, --tlsca, --tlscert or a context's TLS settings): "
                         "refused before anything was sent")
    if isinstance(exc, ne.NoRespondersError):
        return passing(LiveError(f"{what}no responders on {where}"))
    if isinstance(exc, (ne.TimeoutError, asyncio.TimeoutError, TimeoutError)):
        return passing(LiveError(
            f"{what}timed out after {seconds_text(target.timeout)} waiting for {where}"))
    if isinstance(exc, (ne.ConnectionClosedError, ne.StaleConnectionError, ne.UnexpectedEOF)):
        return passing(LiveError(f"{what}lost the connection to {where}"))
    if isinstance(exc, ConnectionRefusedError):
        return passing(LiveError(f"{what}could not connect to {where}: connection refused"))
    if isinstance(exc, ne.NoServersError):
        return passing(LiveError(f"{what}could not connect to {where}: no server answered"))
    if isinstance(exc, OSError):
        reason = exc.strerror or str(exc) or type(exc).__name__
        return passing(LiveError(f"{what}could not connect to {where}: {reason}"))
    text = str(exc) or type(exc).__name__
    if "expecting INFO" in text:  # nats-py's words for a first line that is not INFO
        return LiveError(f"{what}{where} does not speak NATS: its first line was no INFO "
                         "message (is that a NATS server's client port?)")
    return LiveError(f"{what}{where}: {text}")


class LiveConnection:
    """One connection to the target's servers, with a private event-loop thread."""

    def __init__(self, target: ServerTarget) -> None:
        self.target = target
        self.timeout = float(target.timeout)
        self._errors: list[BaseException] = []
        self._answered: set[str] = set()  # the API prefixes that answered a request
        self._loop = asyncio.new_event_loop()
        # nats-py's background tasks (the read loop, the flusher) may end with an error
        # nobody awaits when the server goes away mid-command; asyncio would print it with
        # a traceback. The command reports the failure itself (one line): keep the error.
        self._loop.set_exception_handler(
            lambda _loop, context: self._errors.append(
                context.get("exception") or RuntimeError(str(context.get("message")))))
        self._thread = threading.Thread(target=self._loop.run_forever,
                                        name="jetlink-nats", daemon=True)
        self._thread.start()
        self.nc: Any = None
        try:
            self.nc = self.run(self._connect(), timeout=self.timeout + _GRACE,
                               doing="connecting")
        except BaseException:
            self._stop_loop()
            raise

    # -- the loop --------------------------------------------------------------------------
    def run(self, coro: Coroutine[Any, Any, T], *, timeout: float | None = None,
            doing: str = "", subject: str | None = None) -> T:
        """Run ``coro`` on the connection's loop and return its result; nats-py failures
        become :class:`LiveError` (ApiError and other JetlinkErrors pass unchanged), a
        permissions violation meanwhile (of ``subject`` when given) the cause."""
        seen = self.errors_seen()
        try:
            fut = asyncio.run_coroutine_threadsafe(coro, self._loop)
        except RuntimeError:  # the loop closed under a worker thread (the command stopping):
            coro.close()      # the coroutine never runs, and is said so by nobody
            raise LiveError(f"{doing or 'a request'}: the connection was closed") from None
        try:
            # a request the server refused to let through ends at once (its answer can not
            # come): polled with the lost connection
            stop = None if subject is None else (lambda: self.denied_since(seen, subject))
            got: T = self._result(fut, timeout if timeout is not None else self.timeout + _GRACE,
                                  stop)
            return got
        except JetlinkError:
            raise
        except KeyboardInterrupt:
            fut.cancel()
            raise
        except Exception as exc:  # noqa: BLE001 - every failure is one line for the user
            fut.cancel()
            denied = self.denied_since(seen, subject)
            if denied is not None:  # (what went unanswered was never let through)
                raise PermissionDenied(f"{doing or 'a request'}: {denied}") from None
            raise self._describe(exc, doing) from None

    def errors_seen(self) -> int:
        """How many errors the connection was told of so far (:meth:`denied_since`'s mark)."""
        return len(self._errors)

    def denied_since(self, seen: int = 0, subject: str | None = None) -> str | None:
        """The server's permissions violation among the errors reported after the first
        ``seen`` (nats-py hands the server's ``-ERR 'Permissions Violation for Publish to
        "S"'`` to error_cb, and a request then waits for an answer that never comes), as
        one sentence; None when there was none. With ``subject``: a publish violation of
        that subject only (nats-py lowercases the subject: ``subject`` is shown as sent),
        or a subscription's (the replies' inbox)."""
        for kind, denied in self._violations(seen):
            if kind == "publish":
                if subject is not None and denied != subject.lower():
                    continue
                return (f'permissions violation: the server does not let this user publish to '
                        f'"{subject or denied}" (its publish permissions; nothing was done)')
            return (f'permissions violation: the server does not let this user subscribe to '
                    f'"{denied}" (its subscribe permissions: the answers come back on the '
                    "connection's inbox)")
        return None

    def _violations(self, seen: int) -> Iterator[tuple[str, str]]:
        """(``publish`` or ``subscription``, the subject lowercased) of each permissions
        violation reported after the first ``seen`` errors, newest first."""
        for exc in reversed(self._errors[seen:]):
            m = _VIOLATION.search(str(exc))
            if m is not None:
                yield m.group(1).lower(), m.group(2)

    def _result(self, fut: Any, limit: float | None,
                stop: Callable[[], str | None] | None = None) -> Any:
        """``fut``'s result within ``limit`` seconds (None: no limit), looked at every
        :data:`_LOST_POLL` seconds: a connection that closed meanwhile (the server gone:
        nats-py closes it, never reconnecting, and leaves a request waiting for an answer
        that cannot come) ends the wait then, as a lost connection, not at the limit."""
        import time

        deadline = None if limit is None else time.monotonic() + limit
        while True:
            step = _LOST_POLL if deadline is None else \
                max(0.0, min(_LOST_POLL, deadline - time.monotonic()))
            try:
                return fut.result(step)
            except TimeoutError:
                if fut.done():
                    return fut.result()
                if self.nc is not None and self.nc.is_closed:
                    try:  # a moment for the coroutine's own error (it says more)
                        return fut.result(_LOST_POLL)
                    except TimeoutError:
                        import nats.errors as ne

                        raise ne.ConnectionClosedError from None
                if deadline is not None and time.monotonic() >= deadline:
                    raise
                if stop is not None and stop() is not None:
                    raise

    def _describe(self, exc: BaseException, doing: str) -> LiveError:
        # nats-py reports the cause of a failed connect through error_cb and raises a
        # generic error: prefer the cause.
        import nats.errors as ne

        if isinstance(exc, (ne.NoServersError, ne.ConnectionClosedError)) and self._errors:
            exc = self._errors[-1]
        if self.nc is not None and isinstance(exc, (OSError, ne.ConnectionClosedError,
                                                    ne.StaleConnectionError, ne.UnexpectedEOF,
                                                    ne.NoServersError)) \
                and not isinstance(exc, (TimeoutError, ssl.SSLError)):
            # Connected once: a reset, a closed socket or no server to reconnect to is a
            # connection lost in the middle of the command, not one that never was made.
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else ""
            what = f"{doing}: " if doing else ""
            return passing(LiveError(f"{what}lost the connection to {self.target.shown_url}"
                                      + (f" ({reason})" if reason else "")))
        return describe(exc, self.target, doing)

    async def _connect(self) -> Any:
        import nats

        t = self.target

        async def on_error(exc: Exception) -> None:
            self._errors.append(exc)

        kw: dict[str, Any] = {
            "servers": list(t.servers),
            "connect_timeout": float(t.timeout),  # (--timeout as given: 100ms is 100ms)
            "allow_reconnect": False,
            # nats-py reads 0 as "for ever": 1 means two quick tries of each URL, then
            # NoServersError (reconnect_time_wait is the pause between the two).
            "max_reconnect_attempts": 1,
            "reconnect_time_wait": 0.05,
            "error_cb": on_error,
            "name": "jetlink",
            "pending_size": 64 * 1024 * 1024,
            "flusher_queue_size": 65536,
        }
        if t.password and not t.user:
            raise LiveError(f"{_given('--password', (t.sources or {}).get('password'))} "
                            "needs --user: a password alone is no credential",
                            field="password")
        # one identity, as jsm.go natscontext's NATSOptions picks it: a user, else a
        # credentials file, else an nkey (the others are not read); a token goes with any.
        # A server URL's own user part wins over the user, password, token and nkey options,
        # as nats.go's connectProto takes it (nats-py would send the options instead)
        in_url = any(url_has_credentials(s) for s in t.servers)
        if in_url:
            if t.creds:
                kw["user_credentials"] = _creds_file(t.creds, (t.sources or {}).get("creds"))
        elif t.user and t.password:
            kw["user"] = t.user
            kw["password"] = t.password
        elif t.user and _from_natscli_context(t, "user"):
            # a natscli context's user without a password is a user (jsm.go natscontext's
            # NATSOptions: UserInfo(user, "")); only natscli's flags read one as a token
            kw["user"] = t.user
            kw["password"] = ""
        elif t.user:  # natscli: a user without a password is a token
            kw["token"] = t.user
        elif t.creds:
            kw["user_credentials"] = _creds_file(t.creds, (t.sources or {}).get("creds"))
        elif t.nkey:
            kw["nkeys_seed"] = _nkey_file(t.nkey, (t.sources or {}).get("nkey"))
        if t.token and not in_url and "token" not in kw:
            # (a --user given as a token wins over a context's token: the option is nearer,
            # as natscli applies WithToken(--user) over the loaded context)
            kw["token"] = t.token
        tls = _ssl_context(t)
        if tls is not None:
            kw["tls"] = tls
            if t.tls_first:
                kw["tls_handshake_first"] = True
        if t.inbox_prefix:
            kw["inbox_prefix"] = t.inbox_prefix
        if tls is not None and not t.tls_first:
            nc = _tls_only_client()
            await nc.connect(**kw)
            return nc
        return await nats.connect(**kw)

    # -- requests --------------------------------------------------------------------------
    def request(self, subject: str, payload: bytes = b"", *,
                headers: Mapping[str, str] | None = None, timeout: float | None = None,
                doing: str = "") -> RawMsg:
        """One request, its reply (NoRespondersError -> LiveError)."""
        wait = self.timeout if timeout is None else timeout
        _check_limits(subject, payload, headers, L.REQUEST_REPLY_LEN)

        async def go() -> RawMsg:
            msg = await self.nc.request(subject, payload, timeout=wait,
                                        headers=dict(headers) if headers else None)
            return RawMsg(msg.subject, msg.headers, msg.data, msg.reply)

        return self.run(go(), timeout=wait + _GRACE, doing=doing or f"request to {subject}",
                        subject=subject)

    def api(self, verb: str, doc: Mapping[str, Any] | None = None, *,
            timeout: float | None = None, prefix: str | None = None) -> dict[str, Any]:
        """A JetStream API request (``<prefix>.<verb>``): the server's document, or its
        ``error`` as an ApiError."""
        import nats.errors as ne

        api = prefix or self.target.api_prefix
        subject = f"{api}.{verb}"
        payload = b"" if doc is None else json.dumps(doc, separators=(",", ":")).encode()
        try:
            msg = self.request(subject, payload, timeout=timeout, doing=verb_doing(verb))
        except LiveError as err:
            if "no responders" in err.description:
                if api in self._answered:  # it answered this command before: gone since
                    raise passing(LiveError(
                        f"{verb_doing(verb)}: JetStream API {api} stopped answering on "
                        f"{self.target.shown_url} (it answered earlier: its server gone, or "
                        "its leafnode connection; run the command again once it answers)",
                        field="js_domain")) from None
                raise self.no_jetstream(prefix) from None
            if " timed out after " in err.description and not err.detail:
                err.detail = self._why_unanswered(verb, api)
            raise
        del ne
        self._answered.add(api)
        return parse_api(msg.data)

    def _why_unanswered(self, verb: str, api: str) -> str:
        """Why a JetStream request timed out, asked of the API itself (one INFO request,
        only on this path): it answers, so the meta leader is up and what does not answer
        is the group of the object the request names (its servers gone: a stream of one
        replica whose server is down is answered by nobody); or it does not answer either:
        a clustered JetStream answers through its meta leader, and while too few of its
        servers are up, or one is being elected, there is none."""
        no_leader = ("JetStream did not answer: a cluster has no meta leader while too few of "
                     "its servers are up or one is being elected")
        if verb == "INFO":  # (the question itself went unanswered: not asked twice)
            return no_leader
        try:
            self.request(f"{api}.INFO", b"", timeout=min(2.0, self.timeout),
                         doing="JetStream account info")
        except JetlinkError:
            return no_leader
        return (f"JetStream answers (its meta leader is up), but nothing answered for "
                f"{_object_of(verb)}: the servers that hold it are down or electing its "
                "leader")

    def no_jetstream(self, prefix: str | None = None) -> LiveError:
        t = self.target
        if prefix and prefix != t.api_prefix:
            return LiveError(f"JetStream API {prefix} does not answer on {t.shown_url}: is that "
                             "domain joined to this server? (no responders)", field="js_domain")
        if t.js_domain or t.js_api_prefix:
            # the setting in force, named with where it came from (a natscli context's)
            fld, opt, where = (("js_domain", "--js-domain", f"domain {t.js_domain}")
                               if t.js_domain else
                               ("js_api_prefix", "--js-api-prefix",
                                f"API prefix {t.js_api_prefix}"))
            return LiveError(f"JetStream {where} does not answer on {t.shown_url}: check "
                             f"{_given(opt, (t.sources or {}).get(fld))} (no responders)",
                             field=fld)
        return LiveError(f"JetStream is not enabled on {t.shown_url} (no responders for "
                         f"{t.api_prefix}.INFO)")

    def collect(self, subject: str, payload: bytes, *, wait: float,
                last: Callable[[RawMsg, list[RawMsg]], bool], quiet_end: bool = False,
                doing: str = "") -> list[RawMsg]:
        """A request answered by several messages (pull requests):
        its replies in order, up to the one ``last(msg, replies_so_far)`` says ends them
        (included). When that one has not come within ``wait`` seconds: the replies so far
        with ``quiet_end``, else a timeout. The whole exchange runs inside the loop, on a
        private inbox."""
        _check_limits(subject, payload, None, L.INBOX_LEN)

        async def go(nc: Any) -> list[RawMsg]:
            inbox = nc.new_inbox()
            ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            out: list[RawMsg] = []

            def take(raw: RawMsg) -> None:
                if ended.done():
                    return
                done = last(raw, out)
                out.append(raw)
                if done:
                    ended.set_result(None)

            async def cb(msg: Any) -> None:
                take(RawMsg(msg.subject, msg.headers, msg.data, msg.reply))

            def on_raw(subj: bytes, reply: bytes, data: bytes, block: bytes | None) -> None:
                # the header block as delivered (a header given several times kept)
                take(RawMsg(subj.decode(), parsed_headers(block), data, reply.decode(),
                            block=block))

            sub = await nc.subscribe(inbox, cb=cb, pending_msgs_limit=1_000_000,
                                     pending_bytes_limit=512 * 1024 * 1024)
            raw_handlers(nc)[sub._id] = on_raw
            try:
                await nc.publish(subject, payload, reply=inbox)
                try:
                    await asyncio.wait_for(ended, wait)
                except TimeoutError:
                    if quiet_end:
                        return list(out)
                    raise
                return out
            finally:
                await sub.unsubscribe()
                raw_handlers(nc).pop(sub._id, None)

        return self.call(go, timeout=wait * 2 + _GRACE if not quiet_end else None,
                         doing=doing or f"request to {subject}")

    def publish(self, subject: str, data: bytes = b"", *,
                headers: Mapping[str, str] | None = None, reply: str = "") -> None:
        _check_limits(subject, data, headers, len(reply.encode()))

        async def go() -> None:
            await nc_publish(self.nc, subject, data, reply=reply, headers=headers)

        self.run(go(), doing=f"publishing to {clip(subject)}")

    def flush(self, timeout: float | None = None) -> None:
        wait = self.timeout if timeout is None else timeout
        self.run(self._flush_in_order(wait), timeout=wait + _GRACE, doing="flushing")

    async def _flush_in_order(self, timeout: float) -> None:
        """A PING answered: nats-py writes its PING at once, ahead of the commands still
        queued for its flusher (a SUB, a PUB), so those are written first; the server's
        answers to them (a permissions violation's -ERR) then come before the PONG."""
        await self.nc._flush_pending(force_flush=True)
        await self.nc.flush(timeout=timeout)

    def call(self, fn: Callable[[Any], Coroutine[Any, Any, T]], *, timeout: float | None = None,
             doing: str = "") -> T:
        """Run ``fn(nc)`` (a coroutine function over the nats-py client) on the loop: the
        hot paths (pipelined publishes, batched gets) run whole inside the loop."""
        return self.run(fn(self.nc), timeout=timeout, doing=doing)

    def new_inbox(self) -> str:
        return str(self.nc.new_inbox())

    # -- subscriptions ---------------------------------------------------------------------
    def subscribe(self, subject: str, *, queue: str = "", raw: bool = False
                  ) -> LiveSubscription:
        """A subscription; ``raw``: its messages keep their header block as sent
        (``RawMsg.block``: a header given several times, values' bytes, as stored),
        taken from the parser before nats-py builds its one-value-per-name dict."""
        q: asyncio.Queue[RawMsg] = asyncio.Queue()

        async def go() -> Any:
            async def cb(msg: Any) -> None:
                q.put_nowait(RawMsg(msg.subject, msg.headers, msg.data, msg.reply))

            sub = await self.nc.subscribe(subject, queue=queue, cb=cb,
                                          pending_msgs_limit=1_000_000,
                                          pending_bytes_limit=256 * 1024 * 1024)
            if raw:
                def on_raw(subj: bytes, reply: bytes, data: bytes, block: bytes | None
                           ) -> None:
                    q.put_nowait(RawMsg(subj.decode(), parsed_headers(block), data,
                                        reply.decode(), block=block))

                raw_handlers(self.nc)[sub._id] = on_raw
            await self._flush_in_order(self.timeout)  # (a denied SUB's -ERR before the PONG)
            return sub

        seen = self.errors_seen()
        sub = self.run(go(), doing=f"subscribing to {subject}")
        if ("subscription", subject.lower()) in self._violations(seen):
            self.run(sub.unsubscribe(), doing=f"unsubscribing from {subject}")
            raise PermissionDenied(f"subscribing to {subject}: permissions violation: the "
                                   f'server does not let this user subscribe to "{subject}" '
                                   "(its subscribe permissions)")
        return LiveSubscription(self, sub, q, subject)

    # -- the end ---------------------------------------------------------------------------
    def close(self) -> None:
        if self._loop.is_closed():
            return
        if self.nc is not None and not self.nc.is_closed:
            try:
                asyncio.run_coroutine_threadsafe(self.nc.close(), self._loop).result(5)
            except Exception:  # noqa: BLE001 - closing a broken connection: nothing to say
                pass
        self._stop_loop()

    def _stop_loop(self) -> None:
        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        try:
            asyncio.run_coroutine_threadsafe(cancel_all(), self._loop).result(5)
        except Exception:  # noqa: BLE001 - best effort on the way out
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        if not self._loop.is_running():
            from ..interrupts import interrupt_deferred

            # a Ctrl-C landing inside close() would leave the loop half closed, and its
            # __del__ would then print a traceback at exit (asyncio's _close_self_pipe):
            # held until the loop is closed, then raised as usual
            with interrupt_deferred():
                self._loop.close()

    def __enter__(self) -> LiveConnection:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class LiveSubscription:
    """Messages of one subscription, taken with :meth:`next`."""

    def __init__(self, conn: LiveConnection, sub: Any, queue: asyncio.Queue[RawMsg],
                 subject: str = "") -> None:
        self.subject = subject
        self._conn = conn
        self._sub = sub
        self._queue = queue

    def next(self, timeout: float | None = 1.0) -> RawMsg | None:
        """The next message, or None when ``timeout`` seconds pass without one (None
        timeout: wait for ever)."""

        async def go() -> RawMsg | None:
            if self._conn.nc.is_closed and self._queue.empty():
                import nats.errors as ne

                raise ne.ConnectionClosedError
            try:
                return await asyncio.wait_for(self._queue.get(), timeout)
            except TimeoutError:
                if self._conn.nc.is_closed:
                    import nats.errors as ne

                    raise ne.ConnectionClosedError from None
                return None

        wait = None if timeout is None else timeout + _GRACE
        return self._conn.run(go(), timeout=wait, doing="receiving")

    def next_many(self, timeout: float | None = 1.0, limit: int = 1000) -> list[RawMsg]:
        """The messages waiting (at least one, at most ``limit``), or [] when ``timeout``
        seconds pass without one: one trip to the loop for a burst of messages."""
        first = self.next(timeout)
        if first is None:
            return []
        out = [first]
        q = self._queue

        async def drain() -> list[RawMsg]:
            more: list[RawMsg] = []
            while len(more) < limit - 1 and not q.empty():
                more.append(q.get_nowait())
            return more

        if not q.empty():
            out.extend(self._conn.run(drain(), doing="receiving"))
        return out

    def close(self) -> None:
        if self._conn.nc is None or self._conn.nc.is_closed:
            return
        raw_handlers(self._conn.nc).pop(self._sub._id, None)  # (a raw subscription's)
        try:
            self._conn.run(self._sub.unsubscribe(), doing="unsubscribing")
        except JetlinkError:
            pass


# the API verbs of three tokens (STREAM.MSG.GET, STREAM.PEER.REMOVE, STREAM.LEADER.STEPDOWN,
# CONSUMER.MSG.NEXT, CONSUMER.DURABLE.CREATE...): their second token
_THREE_TOKEN_VERBS = frozenset({"MSG", "PEER", "LEADER", "DURABLE"})


def verb_doing(verb: str) -> str:
    """``STREAM.INFO.ORDERS`` -> ``STREAM.INFO ORDERS``, ``STREAM.MSG.GET.ORDERS`` ->
    ``STREAM.MSG.GET ORDERS`` (what a failure says it was doing)."""
    parts = verb.split(".")
    n = 3 if len(parts) > 3 and parts[1] in _THREE_TOKEN_VERBS else 2
    if len(parts) > n:
        return f"{'.'.join(parts[:n])} {'.'.join(parts[n:])}"
    return verb


# Keys of the API response around the StreamInfo / ConsumerInfo (natscli prints the info
# without them, as jsm.go decodes it).
ENVELOPE = ("type", "did_create", "total", "offset", "limit")
ERROR_EXTRAS = ("purged",)  # keys of a refusal's answer kept beside its error

def without_envelope(doc: dict[str, Any]) -> dict[str, Any]:
    """The info document of an API response: the server's keys, in its order, without the
    response's own (``type``, ``did_create``, paging)."""
    return {k: v for k, v in doc.items() if k not in ENVELOPE}



def parse_api(data: bytes) -> dict[str, Any]:
    """A JetStream API reply: its document, or the ApiError it carries."""
    try:
        doc = json.loads(data)
    except ValueError:
        raise LiveError(f"the server's reply is not JSON: {data[:80]!r}") from None
    if not isinstance(doc, dict):
        raise LiveError(f"the server's reply is not a JSON object: {data[:80]!r}")
    err = doc.get("error")
    if isinstance(err, dict):
        refused = ApiError(int(err.get("code", 500)), int(err.get("err_code", 0) or 0),
                           str(err.get("description", "")))
        # what the answer says beside the error that the engine says too: a purge's
        # "purged": 0 (lists' empty "streams" / "consumers" and paging are left out)
        rest = {k: doc[k] for k in ERROR_EXTRAS if k in doc}
        refused.response = rest or None
        raise refused
    return doc


def connect(target: ServerTarget) -> LiveConnection:
    """A connection to ``target`` (LiveError when it can not be made)."""
    return LiveConnection(target)


def _check_limits(subject: str, payload: bytes, headers: Mapping[str, Any] | None,
                  reply_len: int) -> None:
    """core/limits.py's check of what is about to be sent: refused here, it never reaches
    the server, which would close the connection over a too long protocol line."""
    hdr = H.encode_headers(headers) if headers else None
    L.check_publish(subject, len(payload), hdr_len=len(hdr) if hdr else 0, reply_len=reply_len)
