"""Which live server is in force: natscli's flags, environment and context files, merged.

Per setting, the first that gives it wins: the command line option, the environment
variable (natscli's names: NATS_URL, NATS_USER, NATS_PASSWORD, NATS_CREDS, NATS_NKEY,
NATS_CERT, NATS_KEY, NATS_CA, NATS_TIMEOUT), a jetlink context's server settings, the natscli
context named by ``--nats-context`` / ``NATS_CONTEXT`` / the jetlink context's
``nats_context``. A live server is in force only when one of them gives a URL; otherwise
:func:`resolve_target` returns None and the command runs on the embedded engine.

natscli's *selected* context (``nats/context.txt``) is never used on its own: an operator's
machine set up for natscli must not turn a rehearsal (``make demo``, a drill on the embedded
engine) into commands against a production server. Name it to use it.

Plain data and the standard library only: resolving runs at every start-up, nats-py is not
imported here.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import TOO_DEEP, JetlinkError, UsageError

if TYPE_CHECKING:  # pragma: no cover
    from .target import ServerTarget

__all__ = [
    "ENV",
    "NatsContext",
    "nats_context_dir",
    "nats_context_path",
    "read_nats_context",
    "resolve_target",
    "selected_nats_context",
]

# ServerTarget field -> natscli's environment variable
ENV: dict[str, str] = {
    "servers": "NATS_URL",
    "user": "NATS_USER",
    "password": "NATS_PASSWORD",
    "creds": "NATS_CREDS",
    "nkey": "NATS_NKEY",
    "tls_cert": "NATS_CERT",
    "tls_key": "NATS_KEY",
    "tls_ca": "NATS_CA",
    "timeout": "NATS_TIMEOUT",
}
ENV_CONTEXT = "NATS_CONTEXT"
NATSCLI_DEFAULT_URL = "nats://127.0.0.1:4222"  # nats.go DefaultURL: natscli's server by default
# ServerTarget field -> the command line option (for messages and `context show`)
OPTION: dict[str, str] = {
    "servers": "--server",
    "user": "--user",
    "password": "--password",
    "creds": "--creds",
    "nkey": "--nkey",
    "tls_cert": "--tlscert",
    "tls_key": "--tlskey",
    "tls_ca": "--tlsca",
    "tls_first": "--tlsfirst",
    "js_domain": "--js-domain",
    "js_api_prefix": "--js-api-prefix",
    "inbox_prefix": "--inbox-prefix",
    "timeout": "--timeout",
}
# natscli context file key -> ServerTarget field
NATS_KEYS: dict[str, str] = {
    "url": "servers",
    "user": "user",
    "password": "password",
    "token": "token",
    "creds": "creds",
    "nkey": "nkey",
    "cert": "tls_cert",
    "key": "tls_key",
    "ca": "tls_ca",
    "tls_first": "tls_first",
    "jetstream_domain": "js_domain",
    "jetstream_api_prefix": "js_api_prefix",
    "inbox_prefix": "inbox_prefix",
}
# jetlink context key -> ServerTarget field (core/contexts.py SERVER_KEYS use these names)
JETLINK_KEYS: dict[str, str] = {
    "server": "servers",
    "user": "user",
    "password": "password",
    "creds": "creds",
    "nkey": "nkey",
    "tlscert": "tls_cert",
    "tlskey": "tls_key",
    "tlsca": "tls_ca",
    "tlsfirst": "tls_first",
    "js_domain": "js_domain",
    "inbox_prefix": "inbox_prefix",
    "timeout": "timeout",
}
_SCHEMES = ("nats://", "tls://", "ws://", "wss://")
_HOSTPORT = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(:\d{1,5})?", re.ASCII)


def _config_home(environ: Mapping[str, str]) -> Path:
    xdg = environ.get("XDG_CONFIG_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg)
    return Path(environ.get("HOME") or os.path.expanduser("~")) / ".config"


def nats_context_dir(environ: Mapping[str, str] | None = None) -> Path:
    """natscli's context directory: ``$XDG_CONFIG_HOME/nats/context`` (else ~/.config)."""
    return _config_home(os.environ if environ is None else environ) / "nats" / "context"


def nats_context_path(name: str, environ: Mapping[str, str] | None = None) -> Path:
    """The file of natscli's context NAME: ``NAME.json`` in :func:`nats_context_dir`, or
    NAME itself when it is a file whose name ends in ``.json`` (:func:`is_context_file`)."""
    if is_context_file(name):
        return Path(os.path.expanduser(name))
    return nats_context_dir(environ) / f"{name}.json"


def is_context_file(name: object) -> bool:
    """A context named by its file: an existing file whose name ends in ``.json``, which
    natscli's loadContext reads as a single context file (NATS_CONTEXT=./ops.json)."""
    return (isinstance(name, str) and name.endswith(".json")
            and os.path.isfile(os.path.expanduser(name)))


class NatsContext:
    """A natscli context file: its name, path and the settings jetlink uses."""

    def __init__(self, name: str, path: Path, settings: dict[str, Any],
                 description: str = "") -> None:
        self.name = name
        self.path = path
        self.settings = settings  # ServerTarget field -> value
        self.description = description


def selected_nats_context(environ: Mapping[str, str] | None = None) -> str | None:
    """The name natscli's ``context.txt`` selects (None: none), for `context show`."""
    env = os.environ if environ is None else environ
    path = _config_home(env) / "nats" / "context.txt"
    try:
        name = path.read_text().strip()
    except OSError:
        return None
    return name or None


NAME_MAX = 255  # the bytes of a file name (Linux's and macOS's NAME_MAX)


def validate_nats_context_name(name: object) -> None:
    """A natscli context's name, by jsm.go natscontext's ValidateName: not empty, no ``..``,
    no ``/`` or ``\\`` (a file of its directory, never a path; anything else is allowed,
    ``prod@eu`` or a space too), and no NUL, which no file name holds."""
    if isinstance(name, str) and name and ".." not in name and not any(
            c in name for c in "/\\\x00") and len(f"{name}.json".encode()) <= NAME_MAX:
        return
    if is_context_file(name):  # (a file named: natscli reads it whole)
        return
    from ..errors import clip

    shown = f" {clip(repr(name))}" if isinstance(name, str) and name else ""
    raise UsageError(f"invalid natscli context name{shown}: a natscli context name is not "
                     "empty, has no '..', '/', '\\' or NUL and makes a file name NAME.json "
                     f"of at most {NAME_MAX} bytes (or is a file ending in .json that exists)",
                     field="nats_context")


def read_nats_context(name: str, environ: Mapping[str, str] | None = None) -> NatsContext:
    """natscli's context NAME (JetlinkError naming the file when missing or broken), read
    as jsm.go natscontext loads it: each key's JSON type checked (:func:`_settings_fields`),
    ``$VAR`` and ``~`` expanded in the file keys, credential references resolved or refused
    (:func:`_reference`)."""
    validate_nats_context_name(name)
    path = nats_context_path(name, environ)
    directory = path.parent
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise JetlinkError(f"natscli context {name} not found in {directory}",
                           field="nats_context") from None
    except UnicodeDecodeError as exc:
        raise JetlinkError(f"natscli context {path} is not UTF-8 text (byte {exc.start}): "
                           "a context is a JSON file", field="nats_context") from None
    except OSError as exc:
        raise JetlinkError(f"can not read natscli context {path}: {exc.strerror}",
                           field="nats_context") from None
    try:
        doc = json.loads(text, object_pairs_hook=_JsonObject)
    except ValueError as exc:
        from ..numbers import reason

        raise JetlinkError(f"natscli context {path} is not valid JSON: {reason(exc)}",
                           field="nats_context") from None
    except RecursionError:
        raise JetlinkError(f"natscli context {path} is not valid JSON: {TOO_DEEP}",
                           field="nats_context") from None
    if not isinstance(doc, _JsonObject):
        raise JetlinkError(f"natscli context {path} is not a JSON object", field="nats_context")
    fields = _settings_fields(doc, path)
    for key, why in _NATS_UNSUPPORTED.items():
        if fields.get(key) not in (None, "", False):
            # (a credential is never shown: only that it is set)
            shown = f"{key} (set)" if key == "user_jwt" else f"{key} {fields.get(key)!r}"
            raise JetlinkError(f"natscli context {path}: {shown} is not supported by "
                               f"jetlink: {why}", field="nats_context")
    env = os.environ if environ is None else environ
    settings: dict[str, Any] = {}
    for key, fld in NATS_KEYS.items():
        value = fields.get(key)
        if key in _EXPANDED and isinstance(value, str):
            value = _expand_home(value, env)  # jsm.go natscontext expand(), at load
        if value in (None, "", False):
            continue
        if isinstance(value, str):
            value = _reference(key, value, path, env)
        settings[fld] = value
    description = fields.get("description") or ""
    return NatsContext(name, path, settings, description)


class _JsonObject(dict[str, Any]):
    """A JSON object as json.loads reads it, its members in order, repeated keys too
    (Go's json.Unmarshal decodes them one after the other: the last one wins)."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs


#: the JSON type of each key of a natscli context (jsm.go natscontext ``settings``, which
#: natscli decodes with json.Unmarshal: a file giving a key another type, null aside, is
#: refused at load)
_NATS_TYPES: dict[str, type] = {
    **dict.fromkeys(("name", "description", "url", "socks_proxy", "token", "user",
                     "password", "creds", "nkey", "cert", "key", "ca", "nsc",
                     "jetstream_domain", "jetstream_api_prefix", "jetstream_event_prefix",
                     "inbox_prefix", "user_jwt", "user_seed", "color_scheme",
                     "windows_cert_store", "windows_cert_match_by", "windows_cert_match"), str),
    "tls_first": bool,
    "windows_ca_certs_match": list,
}
_SECRET_KEYS = ("token", "password", "user_jwt", "user_seed")
#: the keys jsm.go natscontext ``expand`` passes through expandHomedir when it loads a file
_EXPANDED = ("creds", "nkey", "cert", "key", "ca")


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _settings_fields(doc: _JsonObject, path: Path) -> dict[str, Any]:
    """The natscli settings a context file's object gives, as Go's json.Unmarshal decodes
    it into jsm.go's ``settings``: a member names a key exactly or in another case (``URL``
    is ``url``), the last one wins, null leaves a key as it was, unknown members are
    ignored; a value of another JSON type is a JetlinkError naming the file, the key, the
    value and the type natscli wants (natscli refuses such a file too)."""
    fields: dict[str, Any] = {}
    for member, value in doc.pairs:
        key = member if member in _NATS_TYPES else next(
            (k for k in _NATS_TYPES if k.casefold() == member.casefold()), None)
        if key is None or value is None:
            continue
        want = _NATS_TYPES[key]
        ok = isinstance(value, want) and (
            not isinstance(value, list) or all(isinstance(v, (str, type(None))) for v in value))
        if not ok:
            expected = {str: "a string", bool: "true or false",
                        list: "a list of strings"}[want]
            kind = _json_kind(value)  # (a secret's value is not shown)
            shown = kind if key in _SECRET_KEYS else (
                f"{_clipped(json.dumps(value, ensure_ascii=False))} ({kind})")
            named = key if member == key else f"{key} ({member!r})"
            raise JetlinkError(f"natscli context {path}: {named} must be {expected}, not "
                               f"{shown}: natscli refuses this file too", field="nats_context")
        fields[key] = value
    return fields


def _clipped(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def _expand_env(text: str, environ: Mapping[str, str]) -> str:
    """Go's os.ExpandEnv over ``environ``: ``$NAME`` and ``${NAME}`` are the variable's
    value ('' when unset); ``$`` and one of ``*#$@!?-`` or a digit is that one-character
    name; ``${}`` and an unclosed ``${`` are dropped; a ``$`` before anything else, or at
    the end, stays."""
    out: list[str] = []
    i = j = 0
    n = len(text)
    while j < n:
        if text[j] == "$" and j + 1 < n:
            out.append(text[i:j])
            name, width = _shell_name(text, j + 1)
            if name:
                out.append(environ.get(name, ""))
            elif not width:
                out.append("$")
            j += width
            i = j + 1
        j += 1
    if not out:
        return text
    return "".join(out) + text[i:]


_SPECIAL = set("*#$@!?-0123456789")


def _shell_name(text: str, start: int) -> tuple[str, int]:
    """Go os.Expand's getShellName of ``text[start:]``: the name and how many characters
    it takes (a name of '' with a width: bad syntax, dropped)."""
    s = text[start:]
    if s[0] == "{":
        if len(s) > 2 and s[1] in _SPECIAL and s[2] == "}":
            return s[1], 3
        close = s.find("}", 1)
        if close == 1:
            return "", 2
        if close < 0:
            return "", 1
        return s[1:close], close + 1
    if s[0] in _SPECIAL:
        return s[0], 1
    m = re.match(r"[A-Za-z0-9_]*", s, re.ASCII)
    width = m.end() if m else 0
    return s[:width], width


def _expand_home(path: str, environ: Mapping[str, str]) -> str:
    """jsm.go natscontext expandHomedir: environment variables first (os.ExpandEnv), then
    a leading ``~`` is the home directory (that character replaced, whatever follows)."""
    path = _expand_env(path, environ)
    if not path.startswith("~"):
        return path
    home = environ.get("HOME") or os.path.expanduser("~")
    return home + path[1:]


# (patterns, compiled by re's cache on first use: only a natscli context's references
# need them, and the class of every non-ASCII character costs milliseconds to compile at
# the start of every command)
_SCHEME = r"([A-Za-z][A-Za-z0-9+.-]*):"
_HOST_CHARS = r"[A-Za-z0-9\-_.~!$&'()*+,;=:\[\]<>\"%\x80-\U0010ffff]*"
_USERINFO_CHARS = r"[A-Za-z0-9\-_.:~!$&'()*+,;=%@]*"


def _scheme(ref: str) -> str:
    """jsm.go natscontext parseScheme: the URI scheme of ``ref``, lower case, as Go's
    net/url reads it; '' for a plain value, a one-letter scheme (a Windows drive, ``C:``)
    and a value net/url refuses to parse (a control character, a host or port no URL
    has)."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in ref):
        return ""
    m = re.match(_SCHEME, ref)
    if not m or len(m.group(1)) < 2:
        return ""
    rest = ref[m.end():].split("#", 1)[0]
    if rest.startswith("//"):
        authority = re.split(r"[/?]", rest[2:], maxsplit=1)[0]
        userinfo, _, host = authority.rpartition("@")
        if not re.fullmatch(_USERINFO_CHARS, userinfo):
            return ""
        if not host.startswith("["):
            if not re.fullmatch(_HOST_CHARS, host):
                return ""
            port = host.rpartition(":")[2] if ":" in host else ""
            if port and not port.isdigit():
                return ""
    return m.group(1).lower()


def _trim_scheme(ref: str, prefix: str) -> str:
    """jsm.go natscontext trimSchemePrefix: ``ref`` without ``prefix`` (in any case)."""
    return ref[len(prefix):] if ref[:len(prefix)].lower() == prefix else ref


#: the schemes of natscli's credential resolvers that need a program or a service jetlink
#: does not run: refused naming them (natscli would resolve them)
_EXTERNAL = {"op": "a 1Password reference (op://), read with 1Password's op command",
             "nsc": "an nsc reference (nsc://), read with the nsc command"}
_LITERALS = ("password", "token")  # jsm.go NATSOptions: resolveLiteral


def _reference(key: str, value: str, path: Path, environ: Mapping[str, str]) -> str:
    """A natscli context's value as natscli uses it (jsm.go natscontext NATSOptions): a
    password or token naming an env://, file:// or data: reference is what that gives
    (resolveLiteral: its trailing newlines cut), another scheme is taken literally; a
    creds, nkey, cert, key or ca file is a path or a file:// URL (filePathFromRef, ``~`` and
    ``$VAR`` expanded again). A reference jetlink can not follow (op://, nsc://, or a creds
    or nkey held in env:// or data:) is a JetlinkError naming the file, the key and the
    scheme."""
    scheme = _scheme(value)
    # (a data: reference shown without its data: that is the secret)
    shown = repr(_clipped(value) if scheme != "data" else value.partition(",")[0] + ",...")
    where = f"natscli context {path}: {key} {shown}"
    if key in _LITERALS:
        if scheme in _EXTERNAL:
            raise JetlinkError(f"{where}: {_EXTERNAL[scheme]}, which jetlink does not "
                               f"resolve: give the {key} itself or an env://, file:// or "
                               "data: reference", field="nats_context")
        if scheme not in ("env", "file", "data"):
            return value
        return _resolve(scheme, value, where, environ)
    if key not in _EXPANDED:
        return value
    if scheme in ("", "file"):
        return _expand_home(_trim_scheme(value, "file://"), environ)
    what = "credentials" if key == "creds" else "seed" if key == "nkey" else ""
    if not what:
        why = f"the {scheme}: scheme is not for a TLS file, a path or a file:// URL " \
              "(natscli's rule)"
    elif scheme in _EXTERNAL:
        why = f"{_EXTERNAL[scheme]}, which jetlink does not resolve"
    elif scheme in ("env", "data"):
        why = (f"jetlink reads the {what} from a file, not from "
               f"{'an' if scheme == 'env' else 'a'} {scheme}: reference")
    else:
        why = f"natscli resolves no {scheme}: scheme either"
    instead = f": give the {what} file's path or a file:// URL" if what else ""
    raise JetlinkError(f"{where}: {why}{instead}", field="nats_context")


def _resolve(scheme: str, ref: str, where: str, environ: Mapping[str, str]) -> str:
    """What an env://, file:// or data: reference holds (jsm.go natscontext's envResolver,
    fileResolver, dataResolver), its trailing CR and LF cut (resolveLiteral); a
    JetlinkError naming ``where`` when it holds nothing."""
    data: bytes
    if scheme == "env":
        var = _trim_scheme(ref, "env://")
        if not var:
            raise JetlinkError(f"{where}: env:// names no variable", field="nats_context")
        if var not in environ:
            raise JetlinkError(f"{where}: environment variable {var} is not set",
                               field="nats_context")
        if not environ[var]:
            raise JetlinkError(f"{where}: environment variable {var} is empty",
                               field="nats_context")
        return environ[var].rstrip("\r\n")
    if scheme == "file":
        file = _expand_home(_trim_scheme(ref, "file://"), environ)
        try:
            data = Path(file).read_bytes()
        except OSError as exc:
            raise JetlinkError(f"{where}: can not read {file}: {exc.strerror or exc}",
                               field="nats_context") from None
    else:
        import base64
        import binascii

        header, comma, payload = _trim_scheme(ref, "data:").partition(",")
        if not comma:
            raise JetlinkError(f"{where}: a data: reference needs a ',' before its data",
                               field="nats_context")
        if "base64" not in (part.strip() for part in header.split(";")):
            raise JetlinkError(f"{where}: a data: reference must declare ';base64' "
                               "encoding (data:;base64,...)", field="nats_context")
        try:
            data = base64.b64decode(payload.replace("\r", "").replace("\n", ""),
                                    validate=True)
        except (binascii.Error, ValueError) as exc:
            raise JetlinkError(f"{where}: its base64 data does not decode ({exc})",
                               field="nats_context") from None
    try:
        return data.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise JetlinkError(f"{where}: what it holds is not UTF-8 text (byte {exc.start})",
                           field="nats_context") from None


#: natscli context keys that change how it connects and that jetlink cannot honour: a
#: context holding one is refused (connecting without them would leave out the credentials
#: or the route natscli uses); keys that only shape natscli's own output are ignored
_NATS_UNSUPPORTED = {
    "nsc": "give the user's credentials file instead (--creds, or creds in the context: "
           "nsc generate creds writes one)",
    "user_jwt": "give a credentials file holding the JWT and the seed instead (--creds)",
    "socks_proxy": "jetlink connects directly; run it where the server is reachable",
    "windows_cert_store": "give the certificate files instead (--tlscert, --tlskey)",
    "windows_cert_match": "give the certificate files instead (--tlscert, --tlskey)",
}


def _shown(url: str) -> str:
    from .target import shown_url

    return shown_url(url)


def _websockets() -> bool:
    """Whether nats-py can open a ws:// connection here (its transport needs aiohttp, an
    optional dependency of nats-py that jetlink does not install)."""
    import importlib.util

    return importlib.util.find_spec("aiohttp") is not None


def host_problem(host: str) -> str | None:
    """Why ``host`` can be no host name a resolver takes (a label empty or longer than 63
    characters: ``a..b``, ``.``), as the socket layer's IDNA encoding would fail on it; None
    for a host name or an IP address."""
    import ipaddress

    try:
        ipaddress.ip_address(host.strip("[]"))
        return None
    except ValueError:
        pass
    try:
        host.encode("idna")
    except UnicodeError as err:
        reason = str(err.__cause__ or err).removeprefix("UnicodeError: ")
        return f"host {host!r} is no host name ({reason or 'label empty or too long'})"
    return None


def _check_host(url: str, hostport: str, where: str) -> None:
    """A server URL's host that no resolver takes (a label empty or too long): refused
    naming it, before a connection fails on the socket layer's IDNA codec."""
    host = hostport.rsplit(":", 1)[0] if not hostport.endswith("]") else hostport
    problem = host_problem(host) if host else None
    if problem:
        raise UsageError(f"invalid server URL {_shown(url)!r} ({where}): {problem}",
                         field="server")


def parse_servers(text: str, where: str) -> tuple[str, ...]:
    """Comma-separated URLs (natscli's): nats://, tls://, ws://, wss:// or host[:port]
    (taken as nats://host:port). A refused one is shown without its password."""
    out = []
    for part in str(text).split(","):
        url = part.strip()
        if not url:
            continue
        if "://" in url:
            if not url.startswith(_SCHEMES):
                raise UsageError(f"invalid server URL {_shown(url)!r} ({where}): the scheme "
                                 "must be nats://, tls://, ws:// or wss://", field="server")
            rest = url.split("://", 1)[1]
            hostport = rest.rsplit("@", 1)[-1].rstrip("/")
            if not _HOSTPORT.fullmatch(hostport):
                raise UsageError(f"invalid server URL {_shown(url)!r} ({where}): expected "
                                   "scheme://host[:port]", field="server")
            _check_host(url, hostport, where)
        else:
            if not _HOSTPORT.fullmatch(url):
                raise UsageError(f"invalid server URL {_shown(url)!r} ({where}): expected a URL "
                                   "such as nats://host:4222 or host:port", field="server")
            _check_host(url, url, where)
            url = "nats://" + url
        if url.startswith(("ws://", "wss://")) and not _websockets():
            raise UsageError(f"server URL {_shown(url)!r} ({where}): ws:// and wss:// need "
                             "nats-py's websocket transport, the aiohttp package, which is "
                             "not installed (pip install aiohttp), or a nats:// or tls:// "
                             "URL of the server", field="server")
        port = url.rsplit(":", 1)[-1] if url.count(":") >= 2 else ""
        if port.isdigit() and not 0 < int(port) < 65536:
            raise UsageError(f"invalid server URL {_shown(url)!r} ({where}): port must be 1 "
                             "to 65535", field="server")
        out.append(url)
    if not out:
        raise UsageError(f"no server URL in {text!r} ({where})", field="server")
    return tuple(out)


def timeout_seconds(value: Any) -> float:
    """Seconds to wait on the server's answers. A string is a duration with its unit (5s, 1m,
    500ms), read by core.durations ``parse_duration`` as every duration of jetlink and
    natscli (a bare number is refused: "missing unit, e.g. 5s"); a number typed in a TOML
    file is seconds. More than zero, at most 1h; DurationError says why otherwise."""
    from ..durations import DurationError, parse_duration

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
        shown = repr(value)
    else:
        shown = repr(str(value).strip())
        try:
            seconds = parse_duration(str(value).strip()) / 1e9
        except DurationError as err:
            if not err.too_long:
                raise
            seconds = float("inf")  # past any duration: past 1h, said as that rule
    if not seconds > 0 or seconds > 3600:
        raise DurationError(f"invalid duration {shown}: must be more than 0 and at most 1h",
                            value=value, reason="must be more than 0 and at most 1h")
    return seconds


def parse_timeout(value: Any, where: str) -> float:
    """:func:`timeout_seconds` of ``value`` given by ``where`` (``--timeout``,
    ``NATS_TIMEOUT``, a context); a UsageError (exit 2) naming ``where`` otherwise."""
    from ..durations import DurationError

    try:
        return timeout_seconds(value)
    except DurationError as exc:
        raise UsageError(f"invalid timeout {exc.value!r} ({where}): {exc.reason}",
                         field="timeout") from None


def check_subject_setting(fld: str, value: Any, where: str) -> None:
    """A JetStream domain, API prefix or inbox prefix that could never form the subjects it
    is for, refused before anything is sent (a UsageError naming it, where it came from and
    the rule): a domain is one subject token (nats-server's rule for ``jetstream.domain``:
    no '.', '*', '>' or space); an API prefix is a subject without wildcards; an inbox prefix
    too, not ending in '.' (nats.go's ``CustomInboxPrefix``)."""
    from ..subjects import is_valid_literal_subject

    if not isinstance(value, str):
        return
    shown = repr(value) if len(value) <= 60 else repr(value[:57] + "...")
    if fld == "js_domain":
        if not value or any(c in value for c in " \t\r\n\f.*>"):
            raise UsageError(f"invalid JetStream domain {shown} ({where}): a domain is one "
                             "subject token: no '.', '*', '>' or spaces", field=fld)
    elif fld in ("js_api_prefix", "inbox_prefix"):
        what = "JetStream API prefix" if fld == "js_api_prefix" else "inbox prefix"
        body = value[:-1] if fld == "js_api_prefix" and value.endswith(".") else value
        if not is_valid_literal_subject(body) or (fld == "inbox_prefix"
                                                  and value.endswith(".")):
            raise UsageError(f"invalid {what} {shown} ({where}): a subject of tokens "
                             "separated by '.', none empty, no '*', '>' or spaces"
                             + (", not ending in '.'" if fld == "inbox_prefix" else ""),
                             field=fld)


def resolve_target(options: Mapping[str, Any], environ: Mapping[str, str] | None = None,
                   jetlink_context: Any = None, nats_context: str | None = None,
                   ) -> ServerTarget | None:
    """The live server in force (module doc), or None for the embedded engine.

    ``options``: ServerTarget field -> value given on the command line (None: not given);
    ``jetlink_context``: the jetlink Context in force (or None); ``nats_context``: the
    natscli context named by ``--nats-context``."""
    env = os.environ if environ is None else environ
    layers: list[tuple[str, dict[str, Any]]] = []
    given = {k: v for k, v in options.items() if v not in (None, False, "")}
    layers.append(("option", given))
    layers.append(("env", {fld: env[var] for fld, var in ENV.items() if env.get(var)}))
    jl_settings: dict[str, Any] = {}
    jl_nats = None
    if jetlink_context is not None:
        for key, fld in JETLINK_KEYS.items():
            value = getattr(jetlink_context, key, None)
            if value not in (None, "", False):
                jl_settings[fld] = value
        jl_nats = getattr(jetlink_context, "nats_context", None)
    layers.append((f"jetlink context {getattr(jetlink_context, 'name', '')}", jl_settings))
    named = nats_context or env.get(ENV_CONTEXT) or jl_nats
    nctx = read_nats_context(named, env) if named else None
    if nctx is not None:
        found = dict(nctx.settings)
        # A natscli context named without a url is natscli's default server, as natscli
        # connects with it (nats.DefaultURL), never the embedded engine behind one's back.
        found.setdefault("servers", NATSCLI_DEFAULT_URL)
        layers.append((f"natscli context {nctx.name} ({nctx.path})", found))

    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for label, settings in layers:
        for fld, value in settings.items():
            if fld in merged:
                continue
            merged[fld] = value
            if label == "option":
                sources[fld] = OPTION.get(fld, fld)
            elif label == "env":
                sources[fld] = ENV[fld]
            else:
                sources[fld] = label
    # The timeout is read whichever engine is in force, as natscli reads NATS_TIMEOUT and
    # --timeout at every start: a bad one is refused on the embedded engine too.
    timeout: float | None = None
    if "timeout" in merged:
        timeout = parse_timeout(merged.pop("timeout"), sources["timeout"])
    if "servers" not in merged:
        return None
    for fld in ("js_domain", "js_api_prefix", "inbox_prefix"):
        if fld in merged:
            check_subject_setting(fld, merged[fld], sources[fld])
    if merged.get("js_domain") and merged.get("js_api_prefix"):
        # jsm.go's New: "WithAPIPrefix and WithDomain are mutually exclusive" (the prefix
        # would win silently, and the verbs act on another JetStream than the one named)
        both = (sources["js_domain"], sources["js_api_prefix"])
        error = UsageError if all(src.startswith("--") for src in both) else JetlinkError
        raise error(
            f"a JetStream domain ({merged['js_domain']}, from {both[0]}) and an API prefix "
            f"({merged['js_api_prefix']}, from {both[1]}) are mutually exclusive: give one",
            field="js_domain")
    from .target import DEFAULT_TIMEOUT, ServerTarget  # a server is in force

    if timeout is None:
        timeout = DEFAULT_TIMEOUT
    where = sources["servers"]
    servers = merged.pop("servers")
    servers = parse_servers(servers if isinstance(servers, str) else ",".join(servers), where)
    return ServerTarget(servers=servers, origin=where, timeout=timeout, sources=sources,
                        **merged)
