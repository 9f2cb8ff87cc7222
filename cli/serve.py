"""``jetlink serve``: Confluent's REST API v3 for cluster links and mirror topics.

Serves ``/kafka/v3/clusters/{cluster_id}/links...`` over the embedded engine (every cluster
of the data directory is a ``cluster_id``; the global --cluster is not used); the routes,
shapes and error mapping are in cli/rest/server.py. The HTTP stack is Starlette on uvicorn,
both imported only when the command runs (``jetlink --help`` stays light).

Binding rules: the default host is 127.0.0.1; ``--auth-token-file FILE`` makes every request
need ``Authorization: Bearer <the file's content>``; a host that is not a loopback address is
refused without it (usage error): an IP literal before binding, a name once bound, judged by
the address it bound (``--host evil.localhost`` resolving to 10.9.9.9 is not loopback
whatever its name says); so is a token file that its group or others can read
or write (like ssh with a private key). The socket is bound before the notice is printed, so
``--port 0`` works: the notice (or the ``-j`` line) gives the port chosen.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from jetlink.cli import common, output
from jetlink.cli.app import App, ExitCode
from jetlink.cli.common import usage
from jetlink.cli.options import DurationType, JsonOption

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8090
DEFAULT_MAX_CONNECTIONS = 256
DEFAULT_REQUEST_TIMEOUT = "10s"
REQUEST_TIMEOUT = DurationType(minimum=100_000_000, maximum=3600 * 1_000_000_000)
BACKLOG = 128  # connections the kernel holds for the server beyond those it accepted
KEEP_ALIVE = 5  # seconds an idle keep-alive connection is kept after a response (uvicorn's)
STOP_GRACE = 1.0  # seconds the connections get to finish once a stop is asked for


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


def _ip_literal(host: str) -> Any:
    """``host`` as an IP address, or None when it is a name."""
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def bound_is_loopback(sock: Any) -> bool:
    """Whether the address ``sock`` is bound to is a loopback one (127.0.0.0/8, ::1, or an
    IPv4-mapped loopback): the address actually bound, never the name it came from."""
    address = _ip_literal(str(sock.getsockname()[0]))
    if address is None:  # pragma: no cover - a TCP socket's name is an address
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


def _listen(host: str, port: int) -> Any:
    """A listening TCP socket on ``host``:``port``, the first address ``host`` resolves to
    (cli/rest/conn.py ``Listener``; JetlinkError when it cannot be bound)."""
    import socket

    from jetlink.cli.common import usage
    from jetlink.cli.rest.conn import Listener
    from jetlink.core.errors import JetlinkError
    from jetlink.core.live.settings import host_problem

    problem = host_problem(host)
    if problem:
        raise usage(f"--host: {problem}")
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except OSError as exc:
        raise JetlinkError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    family, socktype, proto, _canon, addr = infos[0]
    sock = Listener(family, socktype, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise JetlinkError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def _url(sock: Any) -> str:
    addr = sock.getsockname()
    host, port = addr[0], addr[1]
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def _not_loopback(host: str, bound: str | None = None) -> typer.Exit:
    where = f" (it is bound to {bound})" if bound is not None else ""
    return usage(
        f"--host {host} is not a loopback address{where}: serving beyond this machine needs "
        "--auth-token-file FILE (every request must then send Authorization: Bearer TOKEN)"
    )


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
    max_connections: Annotated[
        int,
        typer.Option("--max-connections", metavar="N", min=1,
                     help="Most connections open at once; beyond, the oldest idle one is "
                     "closed (lowered to fit the open-file limit)."),
    ] = DEFAULT_MAX_CONNECTIONS,
    request_timeout: Annotated[
        str,
        typer.Option("--request-timeout", metavar="DURATION", parser=REQUEST_TIMEOUT,
                     help="Time a connection has to send a whole request (header and "
                     "body), from its opening or its previous answer; then it is closed "
                     "(100ms to 1h)."),
    ] = DEFAULT_REQUEST_TIMEOUT,
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
    works as --rest-url of links / mirrors as printed. Runs until stopped: SIGINT (Ctrl-C)
    and SIGTERM stop it gracefully, exit status 130 and 0. A host that is not a loopback
    address is refused unless --auth-token-file is given (a name is judged by the address it
    binds); the token file must not be readable by group or others. Requests run one at a
    time, in arrival order; the work of a client that went away is dropped. A connection
    that does not send a whole request within --request-timeout is closed.
    """
    app = App.of(ctx)
    token = read_token(auth_token_file) if auth_token_file is not None else None
    literal = _ip_literal(host)
    if token is None and literal is not None and not literal.is_loopback:
        raise _not_loopback(host)  # refused before binding
    from jetlink.cli.rest import conn
    from jetlink.cli.rest.server import BASE_PATH, create_app
    from jetlink.core.store import DataDir

    store = DataDir(common.embedded_data_dir(app))  # the engine's data directory only
    try:
        # a data directory that is not there (a misspelt --data-dir) serves nothing: REST
        # makes no cluster, so it is said, as every verb says it, rather than served empty
        store.check_exists()
        clusters = [c.name for c in store.clusters(create_local=False)
                    if store.takes(c.name, "kafka")]
    finally:
        store.close()
    sock = _listen(host, port)
    if token is None and not bound_is_loopback(sock):  # a name: decided on what it bound
        bound = str(sock.getsockname()[0])
        sock.close()
        raise _not_loopback(host, bound)
    url = _url(sock)
    rest_app = create_app(app.data_dir, token=token)
    server = _server(rest_app, conn.connection_cap(max_connections,
                                                   conn.raise_open_file_limit()),
                     REQUEST_TIMEOUT.seconds(request_timeout))
    if app.json:
        output.json_line({"url": url + BASE_PATH, "clusters": clusters})
    else:
        output.notice(app, f"Serving the REST API v3 of {app.data_dir} on "
                           f"{url}{BASE_PATH}/{{cluster}}")
        output.notice(app, f"Clusters: {', '.join(clusters) or '(none yet)'}; "
                           f"{'bearer token required' if token else 'no authentication'}. "
                           "Stop with Ctrl-C.")
    try:
        with _stop_signals() as stops:
            server.run(sockets=[sock])
    finally:
        rest_app.state.engine.close()
        sock.close()
    if signal.SIGINT in stops:
        raise typer.Exit(ExitCode.INTERRUPTED)  # Ctrl-C: interrupted, as every command


@contextlib.contextmanager
def _stop_signals() -> Iterator[list[int]]:
    """The signals that stopped the server, in the order they came. uvicorn stops
    gracefully on SIGINT and SIGTERM and then raises the signal again under the handler
    that was in force before it ran: the default one would kill the process (SIGTERM: no
    clean exit) or be ignored (SIGINT in a background job: exit 0). Handlers that only
    record the signal are that handler here, so the command ends as documented: SIGINT
    130, SIGTERM 0 (a service manager's stop, done cleanly)."""
    import threading

    stops: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield stops  # (signals reach the main thread only: uvicorn listens to none then)
        return
    wanted = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda sig, _frame: stops.append(sig))
                for sig in wanted}
    try:
        yield stops
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _server(rest_app: Any, max_connections: int, request_timeout: float) -> Any:
    """The uvicorn server of ``rest_app`` (cli/rest/conn.py: the request deadline, the
    connection cap, accept failures and event loop errors logged once a minute). On SIGINT
    or SIGTERM it stops listening, drops the engine work still queued (those requests are
    answered 503), lets the running request finish, and gives the connections
    :data:`STOP_GRACE` seconds before cancelling what is left."""
    import asyncio

    import uvicorn

    from jetlink.cli.rest import conn
    from jetlink.cli.rest.server import STOPPING

    class Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            asyncio.get_running_loop().set_exception_handler(conn.rate_limited_handler())
            await super().startup(sockets=sockets)

        async def shutdown(self, sockets: Any = None) -> None:
            rest_app.state.engine.close(wait=0)
            await super().shutdown(sockets=sockets)

    server: Any = None

    async def app(scope: Any, receive: Any, send: Any) -> None:
        """``rest_app``; a request a stop cuts before it ran (a client still sending its
        body when the grace ran out) is answered 503, never logged as an exception
        (nothing is printed on a stop); one the engine has started is answered with what
        it did (cli/rest/server.py ``_in_engine``)."""
        try:
            await rest_app(scope, receive, send)
        except asyncio.CancelledError:
            if server is None or not server.should_exit:
                raise
            body = json.dumps({"error_code": 503, "message": STOPPING}).encode()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await send({"type": "http.response.start", "status": 503,
                            "headers": [(b"content-type", b"application/json")]})
                await send({"type": "http.response.body", "body": body})

    logging.getLogger("uvicorn.error").addFilter(_QuietStop())
    server = Server(uvicorn.Config(
        app,
        http=conn.protocol_class(request_timeout, max_connections),
        loop="asyncio",
        backlog=BACKLOG,
        timeout_keep_alive=KEEP_ALIVE,
        timeout_graceful_shutdown=STOP_GRACE,  # type: ignore[arg-type]
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
    ))
    return server


class _QuietStop(logging.Filter):
    """uvicorn's line when its graceful stop cancels the requests left ("Cancel N running
    task(s), timeout graceful shutdown exceeded"): the stop is jetlink's, and says nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "timeout graceful shutdown exceeded" not in str(record.msg)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
