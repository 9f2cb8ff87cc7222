"""The disaster-recovery runbook's two server configurations (examples/dr-west.conf and
examples/dr-east.conf, shown in docs/dr.md and docs/region.md): nats-server accepts them, the
pages show them as they are, and started (on free ports, stores in the test's directory)
they make the pair the runbook assumes: west's domain answers through east, a mirror in east
of a stream in west catches up and `dr check` says it is ready, and the runbook's failover
promotes it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from helpers import runner

from jetlink.cli.main import app
from jetlink.core.live.local import LocalServer, Regions, _free_ports, _wait_joined
from jetlink.core.live.server import find_nats_server
from live.clihelp import doc, ok
from live.servers import wait_until

ROOT = Path(__file__).resolve().parents[2]
CONFS = {name: ROOT / "examples" / f"dr-{name}.conf" for name in ("west", "east")}


@pytest.mark.parametrize("name", sorted(CONFS))
def test_the_server_accepts_the_configuration(name):
    res = subprocess.run([find_nats_server(), "-t", "-c", str(CONFS[name])],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, (res.stdout, res.stderr)
    assert "is valid" in res.stdout + res.stderr


@pytest.mark.parametrize("page", ["dr.md", "region.md"])
def test_the_guide_shows_the_files_as_they_are(page):
    text = (ROOT / "docs" / page).read_text()
    for path in CONFS.values():
        assert f"```text\n{path.read_text()}```" in text, path.name


def _local(tmp: Path, name: str, ports: dict[str, int]) -> LocalServer:
    """The example file with its ports and store directory moved to free ones / ``tmp``."""
    text = CONFS[name].read_text()
    text = text.replace("127.0.0.1:4222", f"127.0.0.1:{ports['west']}")
    text = text.replace("127.0.0.1:4223", f"127.0.0.1:{ports['east']}")
    text = text.replace("127.0.0.1:7422", f"127.0.0.1:{ports['leaf']}")
    text = text.replace(f'"/tmp/jetlink-dr/{name}"', f'"{tmp / name}"')
    # none of the example's own ports is left (a free port may contain their digits: 42225)
    assert not re.search(r":(?:4222|4223|7422)\b", text), text
    conf = tmp / f"{name}.conf"
    conf.write_text(text)
    domain = re.search(r"domain: (\w+)", text)
    assert domain is not None
    return LocalServer(name, domain.group(1), ports[name], conf, tmp / f"{name}.log")


def test_the_pair_joins_and_the_runbook_fails_over(tmp_path, monkeypatch):
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)
    ports = dict(zip(("west", "east", "leaf"), _free_ports(3), strict=True))
    regions = Regions(_local(tmp_path, "west", ports), _local(tmp_path, "east", ports),
                      find_nats_server())
    try:
        regions.west.start(regions.binary)
        regions.east.start(regions.binary)
        _wait_joined(regions, 60)

        def west(*args):
            return runner.invoke(app, ["-s", regions.west.url, *args], prog_name="jetlink")

        def east(*args):
            return runner.invoke(app, ["-s", regions.east.url, *args], prog_name="jetlink")

        ok(west("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
        ok(west("pub", "orders.{{Count}}", "o {{Count}}", "--count", "20"))
        ok(east("stream", "add", "ORDERS_EAST", "--mirror", "ORDERS", "--mirror-domain", "west",
                "--defaults"))

        def copied():
            return doc(east("stream", "info", "ORDERS_EAST", "-j"))["state"]["messages"]

        wait_until(lambda: copied() == 20, timeout=60, message="ORDERS_EAST to copy 20 messages")
        ok(east("positions", "sync"))
        ok(east("dr", "check", "--lag-critical", "1000"))
        regions.west.kill()
        ok(east("stream", "failover", "ORDERS_EAST", "--subjects", "east.orders.>", "-f"))
        info = doc(east("stream", "info", "ORDERS_EAST", "-j"))
        assert (info["config"]["subjects"], info["config"].get("mirror")) == (
            ["east.orders.>"], None)
    finally:
        regions.stop()
