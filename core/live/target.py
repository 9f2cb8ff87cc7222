"""Which live NATS server a command talks to, and how it connects (natscli's settings).

:class:`ServerTarget` is plain data: the server URLs and the credentials, TLS files,
JetStream domain / API prefix, inbox prefix and timeout natscli's connection flags carry,
plus ``origin``, a sentence saying where the URL came from (``--server``, ``NATS_URL``, a
jetlink context, a natscli context). It is built without importing nats-py: the CLI decides
once per invocation whether a server is in force (cli/target.py) and only then imports the
live client (jetlink.core.live.client).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DEFAULT_TIMEOUT", "ServerTarget", "api_prefix_for", "shown_url", "split_userinfo",
           "url_has_credentials"]

DEFAULT_TIMEOUT = 5.0  # seconds, natscli's default --timeout
SECRET = "********"


def shown_url(url: str) -> str:
    """A server URL (or a comma-separated list) as it may be printed: the password of
    ``user:password@`` masked, and a lone ``token@`` (a token, as NATS clients read a
    user part without a password) masked whole. Connections use the URL as given."""
    out = []
    for one in url.split(","):
        scheme, userinfo, host = split_userinfo(one)
        if userinfo:
            user, colon, _secret = userinfo.partition(":")
            one = f"{scheme}{f'{user}:{SECRET}' if colon else SECRET}@{host}"
        out.append(one)
    return ",".join(out)


def url_has_credentials(url: str) -> bool:
    """Whether one server URL carries ``user:password@`` or a ``token@``."""
    return bool(split_userinfo(url)[1])


def split_userinfo(url: str) -> tuple[str, str, str]:
    """One server URL split into its ``scheme://`` (empty without one), its user part (empty
    without one: the text before the last ``@`` of what follows the scheme) and the rest."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    userinfo, at, host = rest.rpartition("@")
    return f"{scheme}{sep}", userinfo if at else "", host


def api_prefix_for(domain: str | None, api_prefix: str | None = None) -> str:
    """The JetStream API prefix: an explicit prefix, else ``$JS.<domain>.API`` for a
    domain, else ``$JS.API``."""
    if api_prefix:
        return api_prefix.rstrip(".")
    if domain:
        return f"$JS.{domain}.API"
    return "$JS.API"


@dataclass(frozen=True)
class ServerTarget:
    """A live server (or cluster) and how to connect to it."""

    servers: tuple[str, ...]
    origin: str = "--server"
    user: str | None = None
    password: str | None = None
    token: str | None = None
    creds: str | None = None
    nkey: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_ca: str | None = None
    tls_first: bool = False
    js_domain: str | None = None
    js_api_prefix: str | None = None
    inbox_prefix: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    # where each set field came from (field name -> "--user", "NATS_USER", ...): for
    # `jetlink context show`
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def api_prefix(self) -> str:
        return api_prefix_for(self.js_domain, self.js_api_prefix)

    @property
    def url(self) -> str:
        """The URLs as natscli prints them (comma-separated)."""
        return ",".join(self.servers)

    @property
    def shown_url(self) -> str:
        """:attr:`url` as it may be printed (:func:`shown_url`: no password, no token)."""
        return shown_url(self.url)

    @property
    def uses_tls(self) -> bool:
        return bool(self.tls_cert or self.tls_key or self.tls_ca or self.tls_first) or any(
            s.startswith("tls://") for s in self.servers
        )

    def to_dict(self) -> dict[str, object]:
        """Settings as `context show --json` prints them (secrets masked)."""
        out: dict[str, object] = {"servers": [shown_url(s) for s in self.servers],
                                  "origin": self.origin}
        for name in ("user", "creds", "nkey", "tls_cert", "tls_key", "tls_ca",
                     "js_domain", "js_api_prefix", "inbox_prefix"):
            value = getattr(self, name)
            if value:
                out[name] = value
        if self.password:
            out["password"] = SECRET
        if self.token:
            out["token"] = SECRET
        if self.tls_first:
            out["tls_first"] = True
        out["timeout"] = self.timeout
        if self.sources:
            out["sources"] = dict(self.sources)
        return out
