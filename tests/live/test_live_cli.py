"""The CLI on real nats-servers: connection problems as one line (exit 1, no traceback),
refused configs with jetlink's and the server's codes, R3 streams on a cluster, mirrors and
sources across domains, pub / sub, embedded-only verbs refused."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import WAIT_TIMEOUT, runner, wait_until

from jetlink.cli.main import app
from live.clihelp import doc, ok


@pytest.fixture(autouse=True)
def no_terminal(monkeypatch):
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)


def jl(server, *args):
    return runner.invoke(app, ["--server", server, *args], prog_name="jetlink")


def jl_data(data, *args):
    """The embedded engine on the data directory ``data``."""
    return runner.invoke(app, ["--data-dir", str(data), *args], prog_name="jetlink")


def one_line_error(res, pattern):
    import re

    assert res.exit_code == 1, (res.exit_code, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr + res.stdout
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert re.search(pattern, lines[0]), lines[0]


# -- connection problems ----------------------------------------------------------------------


def test_refused():
    one_line_error(jl("nats://127.0.0.1:1", "stream", "ls"),
                   r"^jetlink: error: connecting: could not connect to nats://127.0.0.1:1: "
                   r"connection refused$")


def test_refused_json():
    res = jl("nats://127.0.0.1:1", "stream", "ls", "-j")
    assert res.exit_code == 1
    assert json.loads(res.stdout) == {"error": {"description": "connecting: could not connect "
                                                "to nats://127.0.0.1:1: connection refused"}}


def test_wrong_credentials(live_auth):
    res = runner.invoke(app, ["--server", live_auth.url, "--user", "ops", "--password", "nope",
                              "stream", "ls"], prog_name="jetlink")
    one_line_error(res, r"authorization violation")
    assert res.stderr.rstrip().endswith("check --user, --password")
    # the credentials named where they came from (here natscli's variables)
    res = runner.invoke(app, ["--server", live_auth.url, "stream", "ls"], prog_name="jetlink",
                        env={"NATS_USER": "ops", "NATS_PASSWORD": "nope"})
    assert res.stderr.rstrip().endswith(
        "check --user (from NATS_USER), --password (from NATS_PASSWORD)"), res.stderr
    res = runner.invoke(app, ["--server", live_auth.url, "--user", "ops", "--password",
                              "s3cret", "stream", "ls"], prog_name="jetlink")
    ok(res)
    # a URL's own user part wins over the options (nats.go's connectProto), both ways
    host = live_auth.url.split("://", 1)[1]
    res = runner.invoke(app, ["--server", f"nats://ops:s3cret@{host}", "--user", "ops",
                              "--password", "nope", "stream", "ls"], prog_name="jetlink")
    ok(res)
    res = runner.invoke(app, ["--server", f"nats://ops:nope@{host}", "--user", "ops",
                              "--password", "s3cret", "stream", "ls"], prog_name="jetlink")
    one_line_error(res, r"authorization violation")
    assert res.stderr.rstrip().endswith(
        "check the user and password (or token) in the server URL"), res.stderr


def test_a_natscli_contexts_wrong_token_is_named(live_auth, tmp_path, monkeypatch):
    """The token a natscli context gives is sent, and a refusal names it and its context
    (never "none was given")."""
    cfg = tmp_path / "config"
    (cfg / "nats" / "context").mkdir(parents=True)
    path = cfg / "nats" / "context" / "tok.json"
    path.write_text(json.dumps({"url": live_auth.url, "token": "wrong"}))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(cfg))
    res = runner.invoke(app, ["--nats-context", "tok", "stream", "ls"], prog_name="jetlink")
    one_line_error(res, r"authorization violation")
    assert res.stderr.rstrip().endswith(
        f"check the token (from natscli context tok ({path}))"), res.stderr


def test_a_natscli_context_connects_with_one_identity_as_natscli(live_auth, nkey_user,
                                                                tmp_path, monkeypatch):
    """A natscli context giving a user, a credentials file and an nkey connects as the user,
    the others never read (a garbage creds file, a missing nkey); without the user it is the
    nkey the server takes (creds before nkey, jsm.go natscontext's NATSOptions)."""
    cfg = tmp_path / "config"
    (cfg / "nats" / "context").mkdir(parents=True)
    junk = tmp_path / "junk.creds"
    junk.write_text("garbage\n")
    (cfg / "nats" / "context" / "prod@eu.json").write_text(json.dumps(
        {"url": live_auth.url, "user": "ops", "password": "s3cret", "creds": str(junk),
         "nkey": str(tmp_path / "missing.nk")}))
    (cfg / "nats" / "context" / "nk.json").write_text(json.dumps(
        {"url": live_auth.url, "nkey": str(nkey_user.seed_file)}))
    (cfg / "nats" / "context" / "both.json").write_text(json.dumps(
        {"url": live_auth.url, "creds": str(junk), "nkey": str(nkey_user.seed_file)}))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(cfg))
    for name in ("prod@eu", "nk"):
        res = runner.invoke(app, ["--nats-context", name, "stream", "ls", "-j"],
                            prog_name="jetlink")
        assert doc(res) == [], (name, res.stderr)
    res = runner.invoke(app, ["--nats-context", "both", "stream", "ls"], prog_name="jetlink")
    one_line_error(res, r"no user JWT found")


def test_a_password_in_the_server_url_is_never_printed(live_auth, tmp_path, monkeypatch):
    """nats://user:password@host: the connection uses it, every line that shows the URL
    masks the password (errors, the NATS_URL notice, context show / ls, --json too), and
    a refusal names the URL's credentials instead of "none was given"."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    host = live_auth.url.partition("://")[2]
    bad = f"nats://ops:wrong-pw@{host}"
    res = runner.invoke(app, ["--server", bad, "stream", "ls"], prog_name="jetlink")
    one_line_error(res, r"authorization violation")
    assert "wrong-pw" not in res.stderr and f"nats://ops:********@{host}" in res.stderr
    assert res.stderr.rstrip().endswith("the user and password (or token) in the server URL")
    good = f"nats://ops:s3cret@{host}"
    ok(runner.invoke(app, ["--server", good, "stream", "ls"], prog_name="jetlink"))
    ok(runner.invoke(app, ["context", "add", "pw", "--server", good], prog_name="jetlink"))
    shown = [runner.invoke(app, args, prog_name="jetlink") for args in (
        ["context", "show", "pw"], ["context", "show", "pw", "-j"], ["context", "ls", "-j"],
        ["--context", "pw", "stream", "ls", "-j"])]
    for res in shown:
        ok(res)
        assert "s3cret" not in res.stdout + res.stderr, res.stdout
    assert f"nats://ops:********@{host}" in shown[0].stdout
    monkeypatch.setenv("NATS_URL", f"nats://tok-secret@{host}")
    res = runner.invoke(app, ["--data-dir", str(tmp_path / "data"), "--cluster", "x",
                              "stream", "ls"], prog_name="jetlink")
    assert f"the server of NATS_URL (nats://********@{host}) is not used" in res.stderr
    assert "tok-secret" not in res.stderr


def test_credentials_from_the_environment(live_auth, monkeypatch):
    monkeypatch.setenv("NATS_URL", live_auth.url)
    monkeypatch.setenv("NATS_USER", "ops")
    monkeypatch.setenv("NATS_PASSWORD", "s3cret")
    assert doc(runner.invoke(app, ["stream", "ls", "-j"], prog_name="jetlink")) == []


def test_tls_only_server(live_tls):
    plain = live_tls.url.replace("tls://", "nats://")
    res = jl(plain, "stream", "ls")
    assert res.exit_code == 1 and "Traceback" not in res.stderr
    ok(runner.invoke(app, ["--server", live_tls.url, "--tlsca", live_tls.ca_file, "stream",
                           "ls"], prog_name="jetlink"))


def test_no_jetstream_domain(live):
    res = runner.invoke(app, ["--server", live.url, "--js-domain", "nowhere", "stream", "ls"],
                        prog_name="jetlink")
    one_line_error(res, r"JetStream domain nowhere does not answer")


def test_server_killed_mid_command(nats_fresh):
    """A `pub --count` running while its server is killed: one line, exit 1."""
    ok(jl(nats_fresh.url, "stream", "add", "S", "--subjects", "s.>", "--defaults"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "jetlink.cli", "--server", nats_fresh.url, "pub", "s.x", "body",
         "--count", "5000000", "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    c = nats_fresh.client()
    wait_until(lambda: proc.poll() is not None or c.stream_info("S")["state"]["messages"],
               message="the publisher storing its first messages")
    nats_fresh.kill()
    out, err = proc.communicate(timeout=WAIT_TIMEOUT)
    assert proc.returncode == 1, (out, err)
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    # Connected, then lost: not "could not connect"; what the server acknowledged, and what
    # was sent unanswered (it may be stored: the server was killed, not asked).
    assert f"lost the connection to {nats_fresh.url}" in err, err
    # the server may be killed before the publisher read any acknowledgement (the stream
    # stores before its answers reach a busy client): "none of ... was acknowledged"
    tail = (r" before the error; ([\d,]+) more were sent without an acknowledgement: they "
            r"may or may not be stored$")
    m = re.search(r"[:;] ([\d,]+) of 5,000,000 messages were stored \(acknowledged; sequences "
                  r"1\.\.([\d,]+)\)" + tail, err.strip())
    if m:
        acked, last, unanswered = (int(g.replace(",", "")) for g in m.groups())
        assert acked == last
    else:
        m = re.search(r"[:;] none of 5,000,000 messages was acknowledged" + tail, err.strip())
        assert m, err
        acked, unanswered = 0, int(m.group(1).replace(",", ""))
    assert unanswered > 0
    nats_fresh.restart()
    state = nats_fresh.client().stream_info("S")["state"]
    assert acked <= state["messages"] <= acked + unanswered


def test_embedded_only_verbs_refuse(live):
    for args in (["replicate"], ["cluster", "ls"], ["cluster", "down", "x"], ["topic", "ls"],
                 ["serve", "--port", "0"],
                 ["links", "ls"],  # (stream export / import work on live servers: test_live_lake)
                 ["spark", "mirror", "store:A", "store:B"]):
        res = jl(live.url, *args)
        one_line_error(res, r"works on the embedded engine's data directory: it is not "
                            r"available with a live server")


def test_a_data_dir_typed_beside_the_server_is_said_unused(live, tmp_path):
    """--data-dir and --server both on the command line: a verb that runs on the server says
    once that the data directory is not used (it created nothing there); a data directory
    from the environment is a standing setting, not said."""
    data = tmp_path / "dd"
    res = runner.invoke(app, ["--server", live.url, "--data-dir", str(data), "stream", "ls",
                              "-j"], prog_name="jetlink")
    assert res.exit_code == 0, res.stderr
    json.loads(res.stdout)
    assert res.stderr == (f"jetlink: notice: --data-dir {data} is not used: jetlink stream ls "
                          f"runs on the live server {live.url} (from --server)\n")
    assert not data.exists()
    res = runner.invoke(app, ["--server", live.url, "stream", "ls", "-j"], prog_name="jetlink",
                        env={"JETLINK_DATA_DIR": str(data)})
    assert res.exit_code == 0 and res.stderr == "", res.stderr


# -- refused configs ------------------------------------------------------------------------


def test_refused_by_jetlink_before_sending(live):
    res = jl(live.url, "stream", "add", "M", "--mirror", "ORDERS", "--subjects", "m.>",
             "--defaults", "-j")
    assert res.exit_code == 1
    assert json.loads(res.stdout)["error"]["err_code"] == 10034
    assert live.client().stream_names() == []


def test_refused_by_the_server_as_it_said(live):
    ok(jl(live.url, "stream", "add", "A", "--subjects", "a.>", "--defaults"))
    res = jl(live.url, "stream", "add", "B", "--subjects", "a.b", "--defaults", "-j")
    assert json.loads(res.stdout) == {"error": {"code": 400, "err_code": 10065, "description":
                                                "subjects overlap with an existing stream"}}
    res = jl(live.url, "stream", "add", "R", "--subjects", "r.>", "--replicas", "3",
             "--defaults", "-j")
    assert json.loads(res.stdout)["error"] == {
        "code": 500, "err_code": 10074,
        "description": "replicas > 1 not supported in non-clustered mode"}


def test_a_delete_past_the_last_sequence_names_it_as_the_engine_does(live):
    """10057 "stream store EOF" from the server gets the engine's detail (the sequence and
    the stream's last one: core/limits.py past_last_detail); --json stays the server's."""
    ok(jl(live.url, "stream", "add", "RM", "--subjects", "rm.>", "--defaults"))
    ok(jl(live.url, "pub", "rm.a", "x", "--count", "3"))
    res = jl(live.url, "stream", "rmm", "RM", "10", "-f")
    assert (res.exit_code, res.stderr) == (1, "jetlink: error: stream store EOF (10057): "
                                              "message 10: the last sequence of stream RM is "
                                              "3\n")
    res = jl(live.url, "stream", "rmm", "RM", "10", "-f", "-j")
    assert json.loads(res.stdout) == {"error": {"code": 500, "err_code": 10057,
                                                "description": "stream store EOF"}}


class StreamWriteSpy:
    """The STREAM.CREATE / STREAM.UPDATE requests that reach the server (a subscription of
    its own). ``until(subject)`` collects them up to one on ``subject``, sent afterwards as a
    marker, so what came before it is known without a fixed wait."""

    def __init__(self, url: str) -> None:
        from jetlink.core.live.client import connect
        from jetlink.core.live.target import ServerTarget

        self.conn = connect(ServerTarget((url,)))
        self.subs = [self.conn.subscribe(f"$JS.API.STREAM.{verb}.>")
                     for verb in ("CREATE", "UPDATE")]
        self.conn.flush()

    def until(self, marker: str, deadline: float = 30.0) -> list[str]:
        seen: list[str] = []
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            for sub in self.subs:
                msg = sub.next(0.05)
                if msg is not None:
                    seen.append(msg.subject)
            if marker in seen:
                return seen[:seen.index(marker)]
        raise AssertionError(f"no {marker} request within {deadline}s; saw {seen}")

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def stream_spy(live):
    s = StreamWriteSpy(live.url)
    yield s
    s.close()


INVALID = ('jetlink: error: invalid subject (10052): subjects: "a..b" is not a valid subject '
           "(tokens separated by '.', none empty, no spaces or tabs, '>' only as the last "
           "token)\n")


def test_invalid_subject_named_and_refused_before_sending(live, stream_spy):
    """The rule's refusal on a live server is the embedded engine's: the server's code and
    text, the offending subject after them; no request is sent, nothing is created."""
    res = jl(live.url, "stream", "add", "BAD", "--subjects", "a..b", "--defaults")
    assert (res.exit_code, res.stdout, res.stderr) == (1, "", INVALID)
    res = jl(live.url, "stream", "add", "BAD", "--subjects", "a..b", "--defaults", "-j")
    assert res.exit_code == 1
    assert json.loads(res.stdout) == {"error": {"code": 500, "err_code": 10052,
                                                "description": "invalid subject"}}
    ok(jl(live.url, "stream", "add", "OK", "--subjects", "ok", "--defaults"))
    res = jl(live.url, "stream", "edit", "OK", "--subjects", "a..b", "-f")
    assert (res.exit_code, res.stderr) == (1, INVALID)
    ok(jl(live.url, "stream", "add", "MARK", "--subjects", "mark", "--defaults"))
    assert stream_spy.until("$JS.API.STREAM.CREATE.MARK") == ["$JS.API.STREAM.CREATE.OK"]
    assert live.client().stream_names() == ["MARK", "OK"]
    assert live.api("STREAM.INFO.OK")["config"]["subjects"] == ["ok"]


def test_server_overlap_refusal_names_the_stream(live):
    """A server's 10065 (the other streams are the server's to check) gets the embedded
    engine's detail: which subject overlaps which of which stream; --json keeps the server's
    document."""
    ok(jl(live.url, "stream", "add", "A", "--subjects", "a.>", "--defaults"))
    res = jl(live.url, "stream", "add", "B", "--subjects", "a.b", "--defaults")
    assert (res.exit_code, res.stdout, res.stderr) == (
        1, "", 'jetlink: error: subjects overlap with an existing stream (10065): "a.b" '
               'overlaps "a.>" of stream A\n')
    ok(jl(live.url, "stream", "add", "B", "--subjects", "b", "--defaults"))
    res = jl(live.url, "stream", "edit", "B", "--subjects", "a.x", "-f")
    assert (res.exit_code, res.stderr) == (
        1, 'jetlink: error: subjects overlap with an existing stream (10065): "a.x" '
           'overlaps "a.>" of stream A\n')
    assert live.api("STREAM.INFO.B")["config"]["subjects"] == ["b"]


# -- clusters and domains ----------------------------------------------------------------------


def test_stream_find_on_a_cluster_and_a_single_server(live_cluster, live):
    """natscli's stream find on real servers: a cluster's stream list carries each stream's
    cluster, leader and replicas; a single server's carries none, so --leader, --cluster
    and --server-name find nothing there, as natscli's find does."""
    url = live_cluster.url
    ok(jl(url, "stream", "add", "R3", "--subjects", "r3.>", "--replicas", "3", "--defaults"))
    ok(jl(url, "stream", "add", "R1", "--subjects", "r1.>", "--replicas", "1", "--defaults"))
    ok(jl(url, "pub", "r3.a", "x"))
    leaders = {n: doc(jl(url, "stream", "info", n, "-j"))["cluster"]["leader"]
               for n in ("R1", "R3")}
    led = "".join(f"{n}\n" for n in ("R1", "R3") if leaders[n] == leaders["R3"])
    assert ok(jl(url, "stream", "find", "--leader", leaders["R3"], "-n")).stdout == led
    assert ok(jl(url, "stream", "find", "--leader", leaders["R3"], "--invert", "-n")).stdout \
        == "".join(f"{n}\n" for n in ("R1", "R3") if leaders[n] != leaders["R3"])
    assert ok(jl(url, "stream", "find", "--cluster", "^C3$", "-n")).stdout == "R1\nR3\n"
    assert ok(jl(url, "stream", "find", "--cluster", "^C3$", "--invert", "-n")).stdout == ""
    # every node holds a replica of R3: a server name finds it whichever leads
    assert "R3" in ok(jl(url, "stream", "find", "--server-name", "n[123]", "-n")).stdout
    assert ok(jl(url, "stream", "find", "--replicas", "1", "-n")).stdout == "R1\n"
    assert doc(jl(url, "stream", "find", "--empty", "-j")) == ["R1"]
    ok(jl(live.url, "stream", "add", "S", "--subjects", "s.>", "--defaults"))
    assert ok(jl(live.url, "stream", "find", "-n")).stdout == "S\n"
    assert ok(jl(live.url, "stream", "find", "--server-name", ".", "-n")).stdout == ""


def test_r3_stream_on_a_cluster(live_cluster):
    info = doc(jl(live_cluster.url, "stream", "add", "R3", "--subjects", "r3.>", "--replicas",
                  "3", "--defaults", "-j"))
    assert info["config"]["num_replicas"] == 3
    ok(jl(live_cluster.url, "pub", "r3.a", "x", "--count", "10"))
    info = doc(jl(live_cluster.url, "stream", "info", "R3", "-j"))
    assert info["state"]["messages"] == 10
    assert info["cluster"]["name"] == "C3" and len(info["cluster"]["replicas"]) == 2
    text = ok(jl(live_cluster.url, "stream", "info", "R3")).stdout
    assert "Cluster Information" in text and "Name: C3" in text
    import re

    replicas = re.findall(r"Replica: (n\d), (current|outdated), (seen .* ago|not seen)",
                          text)
    assert len(replicas) == 2, text
    # natscli's: the RAFT group ("Cluster Group" for a stream) and the leader since when
    raft = info["cluster"]["raft_group"]
    assert f"Cluster Group: {raft}\n" in text, text
    assert re.search(rf"Leader: {info['cluster']['leader']} \(\S+\)\n", text), text
    # a consumer of more replicas than its stream: the server's refusal, the value named
    r = jl(live_cluster.url, "consumer", "add", "R3", "C5", "--pull", "--defaults",
           "--replicas", "5")
    assert (r.exit_code, r.stderr) == (1, "jetlink: error: consumer config replica count "
                                          "exceeds parent stream (10126): num_replicas = 5\n")
    # a consumer of it: natscli's Cluster Information too (its RAFT group and leader)
    ok(jl(live_cluster.url, "consumer", "add", "R3", "C", "--pull", "--defaults"))
    cons = doc(jl(live_cluster.url, "consumer", "info", "R3", "C", "-j"))["cluster"]
    text = ok(jl(live_cluster.url, "consumer", "info", "R3", "C")).stdout
    section = text.split("Cluster Information:")[1].split("State:")[0]
    assert "Name: C3\n" in section and f"Raft Group: {cons['raft_group']}\n" in section
    assert f"Leader: {cons['leader']}" in section, section
    # natscli's consumer rows: current or outdated, "seen ... ago" or "not seen"
    assert len(re.findall(r"Replica: (n\d), (current|outdated), (seen .* ago|not seen)\n",
                          section)) == 2, section


def test_mirror_and_source_across_domains(live_domains):
    hub = live_domains.hub.url

    def west(*args):
        return runner.invoke(app, ["--server", hub, "--js-domain", "west", *args],
                             prog_name="jetlink")

    def east(*args):
        return runner.invoke(app, ["--server", hub, "--js-domain", "east", *args],
                             prog_name="jetlink")

    ok(west("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(west("pub", "orders.eu.1", "x", "--count", "5"))
    m = doc(east("stream", "add", "ORDERS_EAST", "--mirror", "ORDERS", "--mirror-domain",
                 "west", "--defaults", "-j"))
    assert m["config"]["mirror"]["name"] == "ORDERS"
    assert m["config"]["mirror"]["external"]["api"] == "$JS.west.API"
    ok(east("stream", "add", "ARCHIVE", "--source", "ORDERS@west", "--subjects", "archive.>",
            "--defaults"))
    def counts():
        return [doc(east("stream", "info", name, "-j"))["state"]["messages"]
                for name in ("ORDERS_EAST", "ARCHIVE")]

    wait_until(lambda: counts() == [5, 5], message=lambda: f"the mirror and the sourced "
               f"stream holding 5 messages each ({counts()})")
    text = ok(east("stream", "info", "ORDERS_EAST")).stdout
    assert "Mirror Information" in text and "ORDERS" in text
    assert doc(west("stream", "ls", "--names", "-j")) == ["ORDERS"]


# -- pub / sub ----------------------------------------------------------------------------


def test_pub_count_with_templates(live):
    ok(jl(live.url, "stream", "add", "T", "--subjects", "t.>", "--defaults"))
    res = ok(jl(live.url, "pub", "t.{{Count}}", "n{{Count}}", "--count", "2500"))
    assert res.stdout.strip() == "Stored 2,500 messages in Stream: T Sequences: 1..2,500"
    msg = doc(jl(live.url, "stream", "get", "T", "2500", "-j"))
    assert msg["subject"] == "t.2500"


def test_pub_count_stops_at_the_first_refusal(live):
    ok(jl(live.url, "stream", "add", "L", "--subjects", "l.>", "--max-msgs", "3", "--discard",
          "new", "--defaults"))
    res = jl(live.url, "pub", "l.x", "v", "--count", "10")
    assert res.exit_code == 1
    assert "maximum messages exceeded" in res.stderr
    assert doc(jl(live.url, "stream", "info", "L", "-j"))["state"]["messages"] == 3


def test_pub_repeated_headers_are_lines_of_their_own(live):
    """-H X-A:1 -H X-A:2 stores two lines X-A, as natscli (nats.go's Header.Add) and the
    engine do, not one line joined with a comma (nats-py takes one value per header)."""
    ok(jl(live.url, "stream", "add", "HD", "--subjects", "hd.>", "--defaults"))
    ok(jl(live.url, "pub", "hd.b", "x", "-H", "X-A:1", "-H", "X-A:2", "-H", "Y:3"))
    ok(jl(live.url, "pub", "hd.c", "y", "-H", "X-A:1", "-H", "X-A:2", "--count", "2"))
    c = live.client()
    for seq in (1, 2, 3):
        m = c.api("STREAM.MSG.GET.HD", {"seq": seq})["message"]
        hdrs = base64.b64decode(m["hdrs"])
        assert hdrs.startswith(b"NATS/1.0\r\n") and hdrs.endswith(b"\r\n\r\n"), hdrs
        lines = hdrs[len(b"NATS/1.0\r\n"):-4].split(b"\r\n")
        assert [ln for ln in lines if ln.startswith(b"X-A:")] == [b"X-A: 1", b"X-A: 2"], hdrs
    assert doc(jl(live.url, "stream", "get", "HD", "1", "-j"))["data"] == \
        base64.b64encode(b"x").decode()
    # read back through the stream's ordered consumer (stream view): the block as stored
    viewed = doc(jl(live.url, "stream", "view", "HD", "-j"))
    assert [m["headers"]["X-A"] for m in viewed] == [["1", "2"]] * 3
    assert viewed[0]["headers"]["Y"] == ["3"]
    # pulled by a consumer: the block as delivered, both values (nats-py's dict keeps one)
    ok(jl(live.url, "consumer", "add", "HD", "C", "--pull", "--defaults"))
    pulled = doc(jl(live.url, "consumer", "next", "HD", "C", "--count", "3", "-j"))
    assert [m["headers"]["X-A"] for m in pulled] == [["1", "2"]] * 3


def test_pub_to_a_no_ack_stream_is_sent_not_failed(live):
    """A no_ack stream answers no publish: once the wait for an answer ends, the server is
    asked whether the subject's stream is no_ack, and the message is reported sent without
    an acknowledgement (exit 0), as on the embedded engine, never a time-out (a retry would
    store it twice)."""
    ok(jl(live.url, "stream", "add", "NA", "--subjects", "na.>", "--no-ack", "--defaults"))
    res = ok(jl(live.url, "--timeout", "1s", "pub", "na.a", "x"))
    assert res.stdout == ("Sent: no acknowledgement (an uncommitted batch message is answered "
                          "with an empty reply; a no_ack stream answers none)\n")
    assert doc(jl(live.url, "stream", "info", "NA", "-j"))["state"]["messages"] == 1
    res = ok(jl(live.url, "--timeout", "1s", "pub", "na.{{Count}}", "x", "--count", "3"))
    assert doc(jl(live.url, "stream", "info", "NA", "-j"))["state"]["messages"] == 4


def test_sub_receives(live):
    received = threading.Event()

    def publish_until_received():  # the sub may subscribe late on a busy machine
        while not received.wait(0.1):
            live.client().publish("feed.x", b"hello")

    threading.Thread(target=publish_until_received, daemon=True).start()
    try:
        res = ok(jl(live.url, "sub", "feed.>", "--count", "1", "--wait", "120s", "-j"))
    finally:
        received.set()
    line = json.loads(res.stdout.splitlines()[0])
    assert line["subject"] == "feed.x"
    import base64

    assert base64.b64decode(line["data"]) == b"hello"


def test_sub_shows_a_messages_reply_subject(live):
    """natscli's sub line names a message's reply subject (a request's inbox, a JetStream
    publish's ack subject): `[#1] Received on "feed.r" with reply "my.reply"`; --json has
    it as "reply"."""
    received = threading.Event()

    def publish_until_received():
        while not received.wait(0.1):
            live.client().publish("feed.r", b"question", reply="my.reply")

    threading.Thread(target=publish_until_received, daemon=True).start()
    try:
        res = ok(jl(live.url, "sub", "feed.r", "--count", "1", "--wait", "120s"))
        doc_ = json.loads(ok(jl(live.url, "sub", "feed.r", "--count", "1", "--wait", "120s",
                                "-j")).stdout.splitlines()[0])
    finally:
        received.set()
    assert res.stdout.splitlines()[0] == '[#1] Received on "feed.r" with reply "my.reply"'
    assert doc_["reply"] == "my.reply"


def test_sub_keeps_a_header_given_several_times(live):
    """A core message whose header X-A is given twice: sub shows both values, as natscli
    (nats.go's Header) does; nats-py's parsed headers keep one per name."""
    received = threading.Event()

    def publish_until_received():
        from jetlink.core.live.client import connect
        from jetlink.core.live.target import ServerTarget

        with connect(ServerTarget((live.url,))) as conn:
            while not received.wait(0.1):
                conn.publish("hdrs.x", b"v", headers={"X-A": ["1", "2"], "Y": "3"})

    threading.Thread(target=publish_until_received, daemon=True).start()
    try:
        res = ok(jl(live.url, "sub", "hdrs.>", "--count", "1", "--wait", "120s", "-j"))
    finally:
        received.set()
    line = json.loads(res.stdout.splitlines()[0])
    assert line["headers"] == {"X-A": ["1", "2"], "Y": ["3"]}, line


def test_creds_file_on_an_operator_mode_server(nats_operator, monkeypatch, tmp_path):
    """--creds (and NATS_CREDS, and a natscli context's creds) on a server that only lets in
    the user of a JWT creds file; without it: authorization violation, one line."""
    url = nats_operator.url
    one_line_error(jl(url, "stream", "ls"), r"authorization violation")
    res = runner.invoke(app, ["--server", url, "--creds", nats_operator.creds_file, "stream",
                              "add", "C", "--subjects", "c.>", "--defaults", "-j"],
                        prog_name="jetlink")
    assert doc(res)["config"]["name"] == "C"
    monkeypatch.setenv("NATS_CREDS", nats_operator.creds_file)
    ok(jl(url, "pub", "c.1", "x"))
    monkeypatch.delenv("NATS_CREDS")
    cfg = tmp_path / "config"
    (cfg / "nats" / "context").mkdir(parents=True)
    (cfg / "nats" / "context" / "op.json").write_text(json.dumps(
        {"url": url, "creds": nats_operator.creds_file}))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(cfg))
    info = doc(runner.invoke(app, ["--nats-context", "op", "stream", "info", "C", "-j"],
                             prog_name="jetlink"))
    assert info["state"]["messages"] == 1
    ok(runner.invoke(app, ["--nats-context", "op", "stream", "rm", "C", "-f"],
                     prog_name="jetlink"))


def _corrupt_seed(seed: str) -> str:
    """``seed`` with one base32 character changed: its CRC16 no longer matches."""
    i = 10
    return seed[:i] + ("A" if seed[i] != "A" else "B") + seed[i + 1:]


@pytest.mark.parametrize("make,says", [
    (lambda good: "garbage\n", "no user JWT found"),
    (lambda good: good.split("\n\n")[0] + "\n", "no user nkey seed found"),
    (lambda good: good.split("\n\n")[1], "no user JWT found"),
    (lambda good: good.replace("-----BEGIN NATS USER JWT-----\n",
                               "-----BEGIN NATS USER JWT-----\n\n"), "no user JWT found"),
    (lambda good: "\n".join(_corrupt_seed(ln) if ln.startswith("SU") else ln
                            for ln in good.split("\n")), "the user nkey seed is not valid"),
    (lambda good: "\n".join("SA" + ln[2:] if ln.startswith("SU") else ln
                            for ln in good.split("\n")), "no user nkey seed found"),
])
def test_a_creds_file_that_is_not_one_is_refused_before_connecting(nats_operator, tmp_path,
                                                                     make, says):
    """A credentials file without its JWT line or a valid user seed is refused, naming the
    file and the form it must have, before anything is sent: nats-py would read it only when
    the server asks for credentials, and then never return from one without the JWT line."""
    good = Path(nats_operator.creds_file).read_text()
    bad = tmp_path / "bad.creds"
    bad.write_text(make(good))
    res = runner.invoke(app, ["--server", nats_operator.url, "--creds", str(bad), "stream",
                              "ls"], prog_name="jetlink")
    assert res.exit_code == 1
    assert res.stderr.startswith(f"jetlink: error: --creds {bad}: {says}"), res.stderr
    assert len(res.stderr.splitlines()) == 1
    assert ("BEGIN NATS USER JWT" in res.stderr) == says.endswith("found")  # the form


def test_client_certificate(nats_tls_verify):
    srv = nats_tls_verify
    res = runner.invoke(app, ["--server", srv.url, "--tlsca", srv.ca_file, "stream", "ls"],
                        prog_name="jetlink")
    assert res.exit_code == 1 and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    ok(runner.invoke(app, ["--server", srv.url, "--tlsca", srv.ca_file, "--tlscert",
                           srv.cert_file, "--tlskey", srv.key_file, "stream", "ls"],
                     prog_name="jetlink"))
    res = runner.invoke(app, ["--server", srv.url, "--tlsca", srv.ca_file, "--tlscert",
                              srv.cert_file, "stream", "ls"], prog_name="jetlink")
    one_line_error(res, r"a client certificate needs both --tlscert and --tlskey")


def test_completion_follows_the_live_target(live, tmp_path):
    """With -s (or --nats-context) in force, names complete from the server, not from the
    data directory; a server that does not answer completes nothing, quickly."""
    import os
    import socket

    c = live.client()
    c.stream_create({"name": "SRV_ORDERS", "subjects": ["srv.>"]})
    c.stream_create({"name": "SRV_OTHER", "subjects": ["oth.>"]})
    c.api("CONSUMER.CREATE.SRV_ORDERS.srvbill", {"stream_name": "SRV_ORDERS", "config": {
        "durable_name": "srvbill", "ack_policy": "explicit"}})
    data = tmp_path / "data"
    ok(jl_data(data, "stream", "add", "EMBEDDED", "--subjects", "e.>", "--defaults"))

    def bash(line):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("JETLINK_", "NATS_"))}
        env.update({"_JETLINK_COMPLETE": "complete_bash", "COMP_WORDS": line,
                    "COMP_CWORD": str(len(line.split(" ")) - 1),
                    "XDG_CONFIG_HOME": str(tmp_path / "config")})
        return subprocess.run([sys.executable, "-m", "jetlink.cli.main"], env=env,
                              capture_output=True, text=True,
                              timeout=WAIT_TIMEOUT).stdout.split()

    base = f"jetlink --data-dir {data}"
    assert bash(f"{base} stream info ") == ["EMBEDDED"]
    assert bash(f"{base} -s {live.url} stream info ") == ["SRV_ORDERS", "SRV_OTHER"]
    assert bash(f"{base} -s {live.url} stream info SRV_O") == ["SRV_ORDERS", "SRV_OTHER"]
    assert bash(f"{base} -s {live.url} consumer info SRV_ORDERS ") == ["srvbill"]
    # the DR verbs offer what they take: a mirror, not every stream
    c.stream_create({"name": "SRV_MIRROR", "mirror": {"name": "SRV_ORDERS"}})
    assert bash(f"{base} -s {live.url} stream failover ") == ["SRV_MIRROR"]
    assert bash(f"{base} -s {live.url} dr check ") == ["SRV_MIRROR"]
    assert bash(f"{base} -s {live.url} stream failback ") == []
    ctx_dir = tmp_path / "config" / "nats" / "context"
    ctx_dir.mkdir(parents=True)
    (ctx_dir / "here.json").write_text(json.dumps({"url": live.url}))
    assert bash(f"{base} --nats-context here stream info ") == [
        "SRV_MIRROR", "SRV_ORDERS", "SRV_OTHER"]
    with socket.socket() as s:  # a port nobody answers on
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    assert bash(f"{base} -s nats://127.0.0.1:{dead} stream info ") == []


def test_server_only_config_refusals_name_the_field_on_both_backends(live, tmp_path):
    """Replicas on a single server (10074) and a name in use with another config (10058)
    are the server's to refuse; live, the refusal names the field and value as the engine
    does (the code and text stay the server's): for 10058, what differs from the stored
    configuration."""
    data = tmp_path / "d"
    for run in (lambda *a: jl(live.url, *a), lambda *a: jl_data(data, *a)):
        ok(run("stream", "add", "NAMED", "--subjects", "named.>", "--defaults"))
        res = run("stream", "add", "NAMED", "--subjects", "other.>", "--defaults",
                  "--max-age", "1h")
        assert (res.exit_code, res.stderr) == (1, (
            "jetlink: error: stream name already in use with a different configuration "
            '(10058): stream NAMED: subjects ["other.>"] given, ["named.>"] stored; max_age '
            "1h0m0s given, none stored (stream edit changes a stream's configuration)\n"))
        # Go tells `"sources": []` from no sources: the document goes as written (natscli
        # re-encodes and drops the empty list; a raw request, the engine and jetlink do not)
        given = tmp_path / "named.json"
        given.write_text(json.dumps({"name": "NAMED", "subjects": ["named.>"],
                                     "allow_direct": True, "sources": []}))
        res = run("stream", "add", "--config", str(given))
        assert (res.exit_code, res.stderr) == (1, (
            "jetlink: error: stream name already in use with a different configuration "
            "(10058): stream NAMED: sources [] given, none stored (stream edit changes a "
            "stream's configuration)\n"))
        res = run("kv", "add", "R3", "--replicas", "3")
        assert (res.exit_code, res.stderr) == (1, (
            "jetlink: error: replicas > 1 not supported in non-clustered mode (10074): "
            "bucket R3: --replicas 3\n"))
        ok(run("stream", "rm", "NAMED", "-f"))


@pytest.mark.parametrize(("extra", "expect"), [
    # the server's pedantic mode refuses what it would otherwise adjust (10157)
    ({"pedantic": True, "max_age": 60_000_000_000},
     {"code": 400, "err_code": 10157,
      "description": "pedantic mode: duplicate window cannot be bigger than max age"}),
    ({"pedantic": True, "max_msgs": -5},
     {"code": 400, "err_code": 10157, "description": "pedantic mode: max_msgs must be set to -1"}),
    ({"pedantic": "yes"},
     {"code": 400, "err_code": 10025,
      "description": "invalid JSON: json: cannot unmarshal string into Go struct field "
                     "StreamConfigRequest.pedantic of type bool"}),
    ({"pedantic": False, "max_age": 60_000_000_000}, None),  # adjusted: created
    ({"discard": "NEW"}, None),  # any case (created with discard new)
])
def test_a_request_asking_for_pedantic_mode_is_answered_as_the_server_does(
        live, tmp_path, extra, expect):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"name": "PD", "subjects": ["pd.>"], **extra}))
    on_server = jl(live.url, "stream", "add", "--config", str(path), "-j")
    embedded = jl_data(tmp_path / "data", "stream", "add", "--config", str(path), "-j")
    if expect is None:
        assert (on_server.exit_code, embedded.exit_code) == (0, 0), (on_server.stdout,
                                                                     embedded.stdout)
        a, b = json.loads(on_server.stdout)["config"], json.loads(embedded.stdout)["config"]
        assert (a["duplicate_window"], a["discard"]) == (b["duplicate_window"], b["discard"])
        assert "pedantic" not in a and "pedantic" not in b
        jl(live.url, "stream", "rm", "PD", "-f")
    else:
        assert json.loads(on_server.stdout) == json.loads(embedded.stdout) == {"error": expect}


def test_a_mirror_of_a_domain_that_does_not_answer_is_created_with_a_warning(live):
    """The server accepts a mirror whose origin's domain nobody answers for (it waits): the
    stream is made, and the warning names the domain (a misspelt --mirror-domain)."""
    res = jl(live.url, "stream", "add", "TYPO_M", "--mirror", "ORDERS", "--mirror-domain",
             "wset", "--defaults", "-j")
    assert res.exit_code == 0, res.output
    assert res.stderr == (
        'jetlink: warning: mirror origin "ORDERS": JetStream domain "wset" does not answer on '
        "this server: the server accepts this, the stream waits for its origin (a misspelt "
        "--mirror-domain, or a domain not joined here?)\n")
    ok(jl(live.url, "stream", "rm", "TYPO_M", "-f"))


def test_an_aggregate_of_a_bucket_not_there_is_created_with_a_warning(live):
    """On a server as on the engine: the aggregate is made (the server accepts a source
    that is not there) and its missing origin bucket is warned on stderr."""
    res = jl(live.url, "kv", "add", "AGG_NOPE", "--source", "NOPE_BUCKET", "-j")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["bucket"] == "AGG_NOPE"
    assert res.stderr.startswith(
        'jetlink: warning: stream not found: aggregate origin bucket "NOPE_BUCKET" (stream '
        "KV_NOPE_BUCKET) does not exist "), res.stderr
    assert res.stderr.endswith(": the server accepts this, the stream waits for its "
                               "origin\n"), res.stderr
    ok(jl(live.url, "kv", "rm", "AGG_NOPE", "-f"))


def test_an_api_that_does_not_answer_says_what_that_can_mean(live):
    """An API request that meets a subscriber but no answer (a JetStream cluster without its
    meta leader answers so): the timeout, and what it can mean."""
    c = live.client()

    async def silent():  # listens on the prefix, answers nothing
        return await c.nc.subscribe("$SILENT.API.>")

    sub = c._run(silent())
    try:
        r = jl(live.url, "--js-api-prefix", "$SILENT.API", "--timeout", "300ms", "stream",
               "ls")
        assert r.exit_code == 1
        assert r.stderr.startswith("jetlink: error: STREAM.LIST: timed out after 300ms "), \
            r.stderr
        assert r.stderr.endswith(": JetStream did not answer: a cluster has no meta leader "
                                 "while too few of its servers are up or one is being "
                                 "elected\n"), r.stderr
    finally:
        c._run(sub.unsubscribe())
    # the API answers (its INFO) but not for one stream (an R1 stream whose server is down):
    # not blamed on a missing meta leader, the stream named
    async def info_only():
        async def answer(msg):
            await msg.respond(b'{"type": "io.nats.jetstream.api.v1.account_info_response"}')

        return (await c.nc.subscribe("$HALF.API.INFO", cb=answer),
                await c.nc.subscribe("$HALF.API.STREAM.>"))

    subs = c._run(info_only())
    try:
        r = jl(live.url, "--js-api-prefix", "$HALF.API", "--timeout", "300ms", "stream",
               "info", "ONE")
        assert r.exit_code == 1
        assert r.stderr.endswith(": JetStream answers (its meta leader is up), but nothing "
                                 "answered for stream ONE: the servers that hold it are down "
                                 "or electing its leader\n"), r.stderr
    finally:
        for sub in subs:
            c._run(sub.unsubscribe())



def test_cluster_step_down_and_peer_remove(live_cluster):
    """natscli's stream cluster step-down / peer-remove and consumer cluster step-down: the
    leader stands down and another is elected (said on stderr), the stream or consumer
    shown; a peer leaves an R2 stream's group and the third server takes its place."""
    url = live_cluster.url
    ok(jl(url, "stream", "add", "SD3", "--subjects", "sd3.>", "--replicas", "3",
          "--defaults"))
    before = live_cluster.stream_leader("SD3")
    r = ok(jl(url, "stream", "cluster", "step-down", "SD3", "-j"))
    after = json.loads(r.stdout)["cluster"]["leader"]
    assert after and after != before
    assert r.stderr.splitlines() == [
        f'Requesting leader step down of "{before}" for stream "SD3" in a 3 peer cluster '
        'group', f'New leader elected "{after}"']
    ok(jl(url, "consumer", "add", "SD3", "C", "--pull", "--defaults"))
    cons = doc(jl(url, "consumer", "info", "SD3", "C", "-j"))["cluster"]["leader"]
    r = ok(jl(url, "consumer", "cluster", "step-down", "SD3", "C"))
    assert r.stderr.startswith(f'Requesting leader step down of "{cons}" in a 3 peer RAFT '
                               'group\nNew leader elected "'), r.stderr
    assert "Information for Consumer SD3 > C" in r.stdout
    # an R2 stream: one of its peers leaves, the third server takes its place
    ok(jl(url, "stream", "add", "PR2", "--subjects", "pr2.>", "--replicas", "2",
          "--defaults"))
    info = doc(jl(url, "stream", "info", "PR2", "-j"))["cluster"]
    peer = info["replicas"][0]["name"]
    r = ok(jl(url, "stream", "cluster", "peer-remove", "PR2", peer))
    assert r.stderr == f'Removing peer "{peer}"\nRequested removal of peer "{peer}"\n'

    def peers() -> set[str]:
        c = doc(jl(url, "stream", "info", "PR2", "-j"))["cluster"]
        return {c.get("leader"), *(x["name"] for x in c.get("replicas") or [])}

    wait_until(lambda: peer not in peers() and len(peers() - {None}) == 2,
               message=lambda: f"PR2 placed without {peer}: {peers()}")
    r = jl(url, "stream", "cluster", "peer-remove", "PR2", "nobody")
    assert r.exit_code == 1 and "(10040)" in r.stderr, r.stderr


def test_leader_report_and_balance(live_cluster):
    """natscli's stream report --leaders / --cluster and stream (consumer) cluster balance:
    six R3 streams (six consumers) led by one server are spread to two per server, each move
    said on stderr; the RAFT Leader Report counts them per server."""
    url = live_cluster.url
    names = [f"BAL{i}" for i in range(6)]
    for n in names:
        ok(jl(url, "stream", "add", n, "--subjects", f"bal.{n}.>", "--replicas", "3",
              "--defaults"))
    for c in names:
        ok(jl(url, "consumer", "add", "BAL0", c, "--pull", "--defaults"))
    first = live_cluster.stream_leader("BAL0")

    def stream_leaders() -> dict[str, str | None]:
        return {n: live_cluster.stream_leader(n) for n in names}

    def consumer_leaders() -> dict[str, str]:
        return {i["name"]: (i.get("cluster") or {}).get("leader", "")
                for i in doc(jl(url, "consumer", "report", "BAL0", "-j"))}

    for n, leader in stream_leaders().items():  # every leader onto one server
        if leader != first:
            ok(jl(url, "stream", "cluster", "step-down", n, "--preferred", first))
    for c, leader in consumer_leaders().items():
        if leader != first:
            ok(jl(url, "consumer", "cluster", "step-down", "BAL0", c, "--preferred", first))
    wait_until(lambda: set(stream_leaders().values()) == {first}
               and set(consumer_leaders().values()) == {first},
               message=lambda: f"every leader on {first}: {stream_leaders()} "
                               f"{consumer_leaders()}")
    cluster = doc(jl(url, "stream", "info", "BAL0", "-j"))["cluster"]["name"]
    report = ok(jl(url, "stream", "report", "--subject", "bal.>", "-l")).stdout
    assert "RAFT Leader Report" in report
    rows = [[c.strip() for c in ln.split("│")[1:-1]] for ln in
            report[report.index("RAFT Leader Report"):].splitlines() if ln.startswith("│")]
    assert rows == [["Server", "Cluster", "Streams", "Distribution"],
                    [first, cluster, "6", "*" * 10]]
    # --cluster: the streams of that cluster (natscli's exact name), none of another
    assert len(doc(jl(url, "stream", "report", "--subject", "bal.>", "--cluster", cluster,
                      "-j"))) == 6
    assert doc(jl(url, "stream", "report", "--cluster", "elsewhere", "-j")) == []

    r = ok(jl(url, "stream", "cluster", "balance", "--subject", "bal.>", "-j"))
    balanced = json.loads(r.stdout)
    assert balanced["balanced"] == 4 and len(set(balanced["streams"])) == 4, balanced
    assert r.stderr.splitlines()[0] == (f"Cluster {cluster}: 3 servers, a balanced share of "
                                        "2 leaders each")
    assert sum(ln.startswith(f"Requesting leader '{first}' step down for stream BAL")
               for ln in r.stderr.splitlines()) == 4, r.stderr

    def spread(leaders: dict[str, str | None]) -> bool:
        return all(list(leaders.values()).count(s) == 2 for s in ("n1", "n2", "n3"))

    wait_until(lambda: spread(stream_leaders()),
               message=lambda: f"two stream leaders per server: {stream_leaders()}")
    r = ok(jl(url, "consumer", "cluster", "balance", "BAL0"))
    assert r.stdout == "Balanced 4 consumers.\n", (r.stdout, r.stderr)
    wait_until(lambda: spread(consumer_leaders()),
               message=lambda: f"two consumer leaders per server: {consumer_leaders()}")
    report = ok(jl(url, "consumer", "report", "BAL0", "--leaders")).stdout
    assert [ln.split("│")[3].strip() for ln in
            report[report.index("RAFT Leader Report"):].splitlines()
            if ln.startswith("│") and "Server" not in ln] == ["2", "2", "2"]
    # balanced already: nothing moves
    assert ok(jl(url, "stream", "cluster", "balance", "--subject", "bal.>")).stdout == \
        "Balanced 0 streams.\n"


def test_a_view_whose_reader_goes_away_deletes_its_consumer_silently(nats_fresh):
    """`stream view S | head -1` on a live server: the view's ordered consumer is deleted
    as the view ends (while the connection is open), nothing on stderr (no traceback of a
    generator collected after the connection closed), and no consumer is left to its
    inactive threshold."""
    url = nats_fresh.url
    ok(jl(url, "stream", "add", "V", "--subjects", "v.>", "--defaults"))
    ok(jl(url, "pub", "v.x", "m", "--count", "20000"))
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-m", "jetlink.cli", "--server", url, "stream",
                                 "view", "V"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stdout.readline().startswith(b"[1] Subject:")
        proc.stdout.close()
        assert proc.wait(timeout=WAIT_TIMEOUT) == 1
        assert proc.stderr is not None and proc.stderr.read() == b""
    c = nats_fresh.client()
    assert c.api("CONSUMER.NAMES.V", {})["consumers"] in (None, [])


def test_a_create_waits_out_the_store_of_a_stream_just_deleted(live, monkeypatch):
    """nats-server answers a create 10049 "error creating store for stream" while the files
    of a deleted stream of the same name are still being removed (fileStore.Delete removes
    them in the background): the create is asked again for a moment, then succeeds. Here
    the store is held by a file where the stream's directory goes: the server's first
    create fails on it, and removes it (as it removes a failed create's files). Asked once
    (no retry), that first answer is the error: one line, exit 1, no stream."""
    from jetlink.core.live import jetstream as LJ

    streams = Path(live.store_dir, "jetstream", "$G", "streams")
    streams.mkdir(parents=True, exist_ok=True)
    (streams / "HELD").write_text("not a directory")
    ok(jl(live.url, "stream", "add", "HELD", "--subjects", "held.>", "--defaults"))
    assert live.api("STREAM.INFO.HELD")["config"]["subjects"] == ["held.>"]
    monkeypatch.setattr(LJ, "STORE_RETRY_DELAYS", ())
    (streams / "ONCE").write_text("not a directory")
    res = jl(live.url, "stream", "add", "ONCE", "--subjects", "once.>", "--defaults")
    one_line_error(res, r"error creating store for stream \(10049\)")
    assert live.api("STREAM.INFO.ONCE")["error"]["err_code"] == 10059
