"""``jetlink serve``: Confluent's REST API v3 for cluster links and mirror topics.

Serves ``/kafka/v3/clusters/{cluster_id}/links...`` over the embedded engine (every cluster
of the data directory is a ``cluster_id``; the global --cluster is not used); the routes,
shapes and error mapping are in cli/rest/server.py. The HTTP stack is Starlette on uvicorn,
both imported only when the command runs (``jetlink --help`` stays light).

Binding rules: the default host is 127.0.0.1; ``--auth-token-file FILE`` makes every request
need ``Authorization: Bearer <the file's content>``; a host that is not a loopback address is
refused without it (usage error), and so is a token file that its group or others can read
or write (like ssh with a private key). The socket is bound before the notice is printed, so
``--port 0`` works: the notice (or the ``-j`` line) gives the port chosen.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Annotated

import typer

from jetlink.cli import common, output
from jetlink.cli.app import App
from jetlink.cli.common import usage
from jetlink.cli.options import JsonOption

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8090


def read_token(path: Path) -> str:
    """The token in ``path`` (surrounding whitespace removed). A usage error when the file is
    unreadable, empty, or readable / writable by its group or others."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise usage(f"--auth-token-file {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise usage(f"--auth-token-file {path}: not a regular file")
    if st.st_mode & 0o077:
        raise usage(
            f"--auth-token-file {path}: the file is accessible by its group or others "
            f"(mode {stat.S_IMODE(st.st_mode):04o}); a token file must be private: "
            f"chmod 600 {path}"
        )
    try:
        token = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise usage(f"--auth-token-file {path}: cannot read it ({exc})") from None
    if not token:
        raise usage(f"--auth-token-file {path}: the file is empty")
    if any(c.isspace() for c in token) or not token.isprintable():
        raise usage(f"--auth-token-file {path}: the token must be one word of printable "
                    "characters")
    return token


def host_is_loopback(host: str) -> bool:
    """``host`` is the loopback: ``localhost``, a loopback IP, or a name resolving only to
    loopback addresses."""
    import socket

    from jetlink.cli.rest.server import is_loopback_host

    if is_loopback_host(host):
        return True
    try:
        import ipaddress

        ipaddress.ip_address(host.strip("[]"))
        return False  # an IP literal that is not loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return False
    return bool(infos) and all(is_loopback_host(str(info[4][0])) for info in infos)


def _listen(host: str, port: int) -> object:
    """A listening TCP socket on ``host``:``port`` (JetlinkError when it cannot be bound)."""
    import socket

    from jetlink.core.errors import JetlinkError

    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except OSError as exc:
        raise JetlinkError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    family, socktype, proto, _canon, addr = infos[0]
    sock = socket.socket(family, socktype, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise JetlinkError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def _url(sock: object) -> str:
    addr = sock.getsockname()  # type: ignore[attr-defined]
    host, port = addr[0], addr[1]
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def serve(
    ctx: typer.Context,
    host: Annotated[
        str,
        typer.Option("--host", metavar="HOST",
                     help="Address to listen on; a non-loopback one needs --auth-token-file."),
    ] = DEFAULT_HOST,
    port: Annotated[
        int,
        typer.Option("--port", metavar="PORT", min=0, max=65535,
                     help="TCP port to listen on (0: any free port, printed)."),
    ] = DEFAULT_PORT,
    auth_token_file: Annotated[
        Path | None,
        typer.Option(
            "--auth-token-file",
            metavar="FILE",
            dir_okay=False,
            help="File holding a token every request must send as Authorization: Bearer "
            "TOKEN (mode 600).",
            show_default=False,
        ),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Serve the Confluent REST API v3 of links.

    Cluster links and mirror topics of every cluster of the data directory, under
    /kafka/v3/clusters/CLUSTER (Confluent's paths, bodies and error bodies): the clusters
    (GET /kafka/v3/clusters and /kafka/v3/clusters/CLUSTER), links list,
    create, get, delete, configs and configs:alter; mirrors list (per link and links/-),
    create, get, and mirrors:promote, :failover, :pause, :resume. A request that changes
    something ends with one bounded replication step, as a mutating command does.

    Listens on 127.0.0.1:8090 by default and prints the base URL on stderr (with --json,
    one JSON line {"url", "clusters"} on stdout) once the socket is listening; either URL
    works as --rest-url of links / mirrors as printed. Runs until
    interrupted. A host that is not a loopback address is refused unless --auth-token-file
    is given; the token file must not be readable by group or others.
    """
    app = App.of(ctx)
    token = read_token(auth_token_file) if auth_token_file is not None else None
    if token is None and not host_is_loopback(host):
        raise usage(
            f"--host {host} is not a loopback address: serving beyond this machine needs "
            "--auth-token-file FILE (every request must then send Authorization: Bearer "
            "TOKEN)"
        )
    import uvicorn

    from jetlink.cli.rest.server import BASE_PATH, create_app
    from jetlink.core.store import DataDir

    store = DataDir(common.embedded_data_dir(app))  # the engine's data directory only
    try:
        clusters = [c.name for c in store.clusters(create_local=False)]
    finally:
        store.close()
    sock = _listen(host, port)
    url = _url(sock)
    server = uvicorn.Server(uvicorn.Config(
        create_app(app.data_dir, token=token),
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
    ))
    if app.json:
        output.json_line({"url": url + BASE_PATH, "clusters": clusters})
    else:
        output.notice(app, f"Serving the REST API v3 of {app.data_dir} on "
                           f"{url}{BASE_PATH}/{{cluster}}")
        output.notice(app, f"Clusters: {', '.join(clusters) or '(none yet)'}; "
                           f"{'bearer token required' if token else 'no authentication'}. "
                           "Stop with Ctrl-C.")
    try:
        server.run(sockets=[sock])  # type: ignore[list-item]
    finally:
        sock.close()  # type: ignore[attr-defined]


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
