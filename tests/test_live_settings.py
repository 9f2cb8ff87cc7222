"""Which live server is in force (core/live/settings.py, the root options, contexts): per
setting option > environment > jetlink context > natscli context > the embedded engine;
natscli's context files; URLs and timeouts; `context show`; refusals without a server."""

from __future__ import annotations

import json

import pytest
from helpers import runner

from jetlink.cli.main import app
from jetlink.core.contexts import Context
from jetlink.core.errors import JetlinkError, UsageError
from jetlink.core.live.settings import (
    parse_servers,
    parse_timeout,
    read_nats_context,
    resolve_target,
)

NO_OPTIONS: dict = {}


@pytest.fixture
def home(tmp_path, monkeypatch):
    """XDG_CONFIG_HOME in tmp_path with natscli's context directory; no NATS_* variables."""
    cfg = tmp_path / "config"
    (cfg / "nats" / "context").mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(cfg))
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)
    return cfg


def nats_ctx(home, name, **doc):
    (home / "nats" / "context" / f"{name}.json").write_text(json.dumps(doc))


def env_with(home, **kw):
    return {"XDG_CONFIG_HOME": str(home), **kw}


# -- precedence, per setting ---------------------------------------------------------------

LAYERS = [
    # (option, environment, jetlink context, natscli context) -> the URL in force, origin
    ({"servers": "nats://opt:1"}, {"NATS_URL": "nats://env:1"}, "nats://jl:1", "nats://nc:1",
     "nats://opt:1", "--server"),
    ({}, {"NATS_URL": "nats://env:1"}, "nats://jl:1", "nats://nc:1", "nats://env:1",
     "NATS_URL"),
    ({}, {}, "nats://jl:1", "nats://nc:1", "nats://jl:1", "jetlink context prod"),
    ({}, {}, None, "nats://nc:1", "nats://nc:1", "natscli context ops"),
]


def test_a_named_natscli_context_without_a_url_is_natscli_default_server(home):
    """natscli connects a context without url to nats.go's DefaultURL: so does jetlink,
    never the embedded engine behind the operator's back."""
    nats_ctx(home, "bare", user="alice", password="secret")
    t = resolve_target({}, env_with(home), None, "bare")
    assert t is not None and t.servers == ("nats://127.0.0.1:4222",)
    assert (t.user, t.origin) == ("alice", f"natscli context bare ({home}/nats/context/bare.json)")


@pytest.mark.parametrize("options,environ,jl_url,nc_url,want,origin", LAYERS)
def test_url_precedence(home, options, environ, jl_url, nc_url, want, origin):
    nats_ctx(home, "ops", url=nc_url)
    jl = Context(name="prod", server=jl_url, nats_context="ops")
    t = resolve_target(options, env_with(home, **environ), jl, None)
    assert t is not None and t.servers == (want,)
    assert t.origin.startswith(origin)


def test_settings_merge_field_by_field(home):
    nats_ctx(home, "ops", url="nats://nc:1", user="nc-user", password="nc-pass",
             jetstream_domain="hub", inbox_prefix="_NC", ca="~/ca.pem", tls_first=True)
    jl = Context(name="prod", user="jl-user", nats_context="ops")
    t = resolve_target({"js_domain": "opt-domain"},
                       env_with(home, NATS_PASSWORD="env-pass"), jl, None)
    assert (t.servers, t.user, t.password, t.js_domain, t.inbox_prefix, t.tls_first) == (
        ("nats://nc:1",), "jl-user", "env-pass", "opt-domain", "_NC", True)
    assert t.tls_ca.endswith("/ca.pem") and "~" not in t.tls_ca
    assert t.sources["user"] == "jetlink context prod"
    assert t.sources["password"] == "NATS_PASSWORD"
    assert t.sources["js_domain"] == "--js-domain"
    assert t.sources["servers"].startswith("natscli context ops (")
    assert t.api_prefix == "$JS.opt-domain.API"


def test_no_url_anywhere_is_the_embedded_engine(home):
    jl = Context(name="prod", user="someone")
    assert resolve_target({"user": "x"}, env_with(home, NATS_USER="u"), jl, None) is None


def test_natscli_selected_context_is_never_used_on_its_own(home):
    nats_ctx(home, "prod", url="nats://production:4222")
    (home / "nats" / "context.txt").write_text("prod\n")
    assert resolve_target(NO_OPTIONS, env_with(home), None, None) is None
    # named, it is used
    t = resolve_target(NO_OPTIONS, env_with(home), None, "prod")
    assert t.servers == ("nats://production:4222",)
    t = resolve_target(NO_OPTIONS, env_with(home, NATS_CONTEXT="prod"), None, None)
    assert t.servers == ("nats://production:4222",)


@pytest.mark.parametrize("name,content,message", [
    ("missing", None, "natscli context missing not found in"),
    ("broken", "{not json", "is not valid JSON"),
    ("list", "[1]", "is not a JSON object"),
    ("badtype", '{"url": 5}', "url must be a string"),
    ("../escape", None, "invalid natscli context name"),
])
def test_natscli_context_errors(home, name, content, message):
    if content is not None:
        (home / "nats" / "context" / f"{name}.json").write_text(content)
    with pytest.raises(JetlinkError, match=message):
        read_nats_context(name, env_with(home))


@pytest.mark.parametrize("text,want", [
    ("nats://127.0.0.1:4222", ("nats://127.0.0.1:4222",)),
    ("127.0.0.1:4222", ("nats://127.0.0.1:4222",)),
    ("localhost", ("nats://localhost",)),
    ("nats://a:1, tls://b:2 ,", ("nats://a:1", "tls://b:2")),
    ("nats://user:pw@host:4222", ("nats://user:pw@host:4222",)),
])
def test_servers(text, want):
    assert parse_servers(text, "--server") == want


@pytest.mark.parametrize("installed", [True, False])
def test_websocket_urls_need_nats_pys_websocket_transport(monkeypatch, installed):
    """ws:// and wss:// are natscli's too, but nats-py opens them only with aiohttp (not a
    dependency of jetlink): without it, refused up front in one line naming what is
    missing, never nats-py's import error at connect time."""
    from jetlink.core.live import settings

    monkeypatch.setattr(settings, "_websockets", lambda: installed)
    if installed:
        assert parse_servers("wss://host/", "--server") == ("wss://host/",)
        return
    with pytest.raises(UsageError) as err:
        parse_servers("nats://a:1,ws://host:8080", "--server")
    assert err.value.exit_code == 2
    assert err.value.description == (
        "server URL 'ws://host:8080' (--server): ws:// and wss:// need nats-py's websocket "
        "transport, the aiohttp package, which is not installed (pip install aiohttp), or a "
        "nats:// or tls:// URL of the server")


@pytest.mark.parametrize("text,message", [
    ("http://x:1", "the scheme must be nats://, tls://, ws:// or wss://"),
    ("nats://x:99999", "port must be 1 to 65535"),
    (" , ", "no server URL"),
    ("a b", "expected a URL such as nats://host:4222 or host:port"),
    ("host:\u0664\u0662", "expected a URL such as nats://host:4222 or host:port"),  # digits
    ("nats://127.0.0.1:\u0664\u0662", "expected scheme://host"),  # of another script
])
def test_bad_servers(text, message):
    with pytest.raises(UsageError, match=message) as err:
        parse_servers(text, "--server")
    assert err.value.exit_code == 2 and err.value.field == "server"


@pytest.mark.parametrize("value,seconds", [("500ms", 0.5), ("1.5s", 1.5), ("2s", 2.0),
                                           ("1m", 60.0), (3, 3.0), (1.5, 1.5)])
def test_timeouts(value, seconds):
    assert parse_timeout(value, "--timeout") == seconds


@pytest.mark.parametrize("value,why", [("0s", "more than 0"), ("-1s", "more than 0"),
                                       ("soon", "expected a number and a unit"),
                                       ("2h", "at most 1h"), ("5", "missing unit, e.g. 5s"),
                                       ("1.5", "missing unit"), ("0", "more than 0"),
                                       ("-1", "missing unit"),
                                       # past any duration: the timeout's own rule said
                                       ("99999999999999999999d", "at most 1h"),
                                       ("300y", "at most 1h")])
def test_bad_timeouts(value, why):
    """natscli's rule, the one of every jetlink duration: a unit is required."""
    with pytest.raises(UsageError, match="invalid timeout") as err:
        parse_timeout(value, "--timeout")
    assert why in str(err.value)


@pytest.mark.parametrize(("args", "message"), [
    (["--js-domain", "a.b"], "invalid JetStream domain 'a.b' (--js-domain): a domain is one "
     "subject token: no '.', '*', '>' or spaces"),
    (["--js-domain", "hub>"], "invalid JetStream domain 'hub>' (--js-domain)"),
    (["--js-domain", "a b"], "invalid JetStream domain 'a b' (--js-domain)"),
    (["--js-api-prefix", "$JS.x..API"], "invalid JetStream API prefix '$JS.x..API' "
     "(--js-api-prefix): a subject of tokens separated by '.', none empty, no '*', '>' or "
     "spaces"),
    (["--js-api-prefix", "$JS.*.API"], "invalid JetStream API prefix '$JS.*.API'"),
    (["--inbox-prefix", "x.>"], "invalid inbox prefix 'x.>' (--inbox-prefix): a subject of "
     "tokens separated by '.', none empty, no '*', '>' or spaces, not ending in '.'"),
    (["--inbox-prefix", "_IN."], "invalid inbox prefix '_IN.' (--inbox-prefix)"),
    (["--inbox-prefix", "a b"], "invalid inbox prefix 'a b' (--inbox-prefix)"),
])
def test_a_domain_or_prefix_that_forms_no_subject_is_a_usage_error(home, args, message):
    """Refused before anything is sent (nats-server's domain rule, nats.go's inbox prefix
    rule), naming the option, the value and the rule, exit 2."""
    res = jl("-s", "nats://127.0.0.1:1", *args, "stream", "ls")
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith(f"jetlink: error: {message}"), res.stderr
    assert "connection refused" not in res.stderr


@pytest.mark.parametrize(("args", "value"), [
    (["--js-api-prefix", "$JS.hub.API."], "$JS.hub.API."),  # nats.go appends the '.' itself
    (["--inbox-prefix", "_INBOX_ops"], "_INBOX_ops"),
    (["--js-domain", "hub-1"], "hub-1"),
])
def test_valid_domains_and_prefixes_pass(home, args, value):
    res = jl("-s", "nats://127.0.0.1:1", *args, "stream", "ls")
    assert (res.exit_code, res.stderr) == (
        1, "jetlink: error: connecting: could not connect to nats://127.0.0.1:1: connection "
           "refused\n")


def test_context_add_refuses_bad_values_as_usage_errors(home):
    """Every bad value of `context add`'s command line is a usage error (2), the name and
    the cluster too; a name in use says how to change it."""
    for args, message in (
            (["bad name"], "invalid context name 'bad name': use 1 to 100 letters, digits, "
                           "'_' or '-'"),
            (["c1", "--cluster", "bad name"], "invalid cluster name 'bad name'"),
            (["c1", "--js-domain", "a.b"], "invalid JetStream domain 'a.b' (context c1 "
                                           "js_domain)"),
            (["c1", "--inbox-prefix", "x."], "invalid inbox prefix 'x.' (context c1 "
                                             "inbox_prefix)")):
        res = jl("context", "add", *args)
        assert res.exit_code == 2, res.output
        assert res.stderr.startswith(f"jetlink: error: {message}"), res.stderr
    assert jl("context", "add", "c1").exit_code == 0
    again = jl("context", "add", "c1")
    assert (again.exit_code, again.stderr) == (
        1, "jetlink: error: context c1 already exists (jetlink context add c1 --update "
           "changes it)\n")


def test_a_natscli_contexts_token_and_domain_are_named_where_they_came_from(home):
    """What a failure tells to check names the setting in force and its natscli context."""
    from jetlink.core.live.client import _credentials_from
    from jetlink.core.live.settings import resolve_target

    nats_ctx(home, "tok", url="nats://127.0.0.1:1", token="s3cret", jetstream_domain="hub")
    target = resolve_target({}, env_with(home), None, "tok")
    where = f"natscli context tok ({home / 'nats' / 'context' / 'tok.json'})"
    assert _credentials_from(target) == f"the token (from {where})"

    class Conn:  # LiveConnection.no_jetstream reads only the target
        pass

    from jetlink.core.live.client import LiveConnection

    conn = Conn()
    conn.target = target
    err = LiveConnection.no_jetstream(conn)  # type: ignore[arg-type]
    assert str(err) == (f"JetStream domain hub does not answer on nats://127.0.0.1:1: check "
                        f"--js-domain (from {where}) (no responders)")
    prefixed = resolve_target({"servers": "nats://127.0.0.1:1", "js_api_prefix": "$JS.x.API"},
                              env_with(home))
    conn.target = prefixed
    err = LiveConnection.no_jetstream(conn)  # type: ignore[arg-type]
    assert (str(err), err.field) == (
        "JetStream API prefix $JS.x.API does not answer on nats://127.0.0.1:1: check "
        "--js-api-prefix (no responders)", "js_api_prefix")


# -- through the CLI -------------------------------------------------------------------------


def jl(*args):
    return runner.invoke(app, list(args), prog_name="jetlink")


def test_refused_connection_is_one_line(home, tmp_path):
    res = jl("--data-dir", str(tmp_path / "d"), "-s", "nats://127.0.0.1:1", "stream", "ls")
    assert res.exit_code == 1
    assert res.stderr == ("jetlink: error: connecting: could not connect to "
                          "nats://127.0.0.1:1: connection refused\n")
    assert not (tmp_path / "d").exists()  # the embedded engine was never touched


def test_a_missing_creds_file_names_where_it_was_given(home, tmp_path, monkeypatch):
    gone = str(tmp_path / "nonexist")
    res = jl("-s", "nats://127.0.0.1:1", "--creds", gone, "stream", "ls")
    assert (res.exit_code, res.stderr) == (1, f"jetlink: error: --creds {gone}: no such file\n")
    monkeypatch.setenv("NATS_CREDS", gone)
    res = jl("-s", "nats://127.0.0.1:1", "stream", "ls")
    assert (res.exit_code, res.stderr) == (
        1, f"jetlink: error: --creds (from NATS_CREDS) {gone}: no such file\n")


def _seed() -> str:
    """A user nkey seed with a right checksum (CRC-16/XMODEM, as nkeys encodes it)."""
    import base64

    raw = bytes([0x95, 0x00]) + bytes(32)  # seed and user prefix bits (SU...), the key
    crc = 0
    for byte in raw:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021 if crc & 0x8000 else crc << 1) & 0xFFFF
    return base64.b32encode(raw + crc.to_bytes(2, "little")).decode().rstrip("=")


def test_tls_and_nkey_files_are_named_with_what_is_wrong(home, tmp_path, monkeypatch):
    """Each TLS or nkey file checked before connecting, named with where it was given and
    what is wrong (as --creds is), one line, exit 1."""
    (tmp_path / "bad.pem").write_text("not pem\n")
    (tmp_path / "pub.nk").write_text("UAHJLSMSJ3A\n")
    (tmp_path / "bad.nk").write_text("SUAXXXXXXXX\n")
    gone = str(tmp_path / "gone.pem")
    s = ["-s", "nats://127.0.0.1:1"]
    cases = [
        ([*s, "--tlsca", gone], f"--tlsca {gone}: no such file"),
        ([*s, "--tlsca", str(tmp_path)], f"--tlsca {tmp_path}: a directory, not a file"),
        ([*s, "--tlsca", str(tmp_path / "bad.pem")],
         f"--tlsca {tmp_path / 'bad.pem'}: no CA certificate could be read from it (a PEM "
         "file of certificates): no certificate or crl found"),
        ([*s, "--tlscert", str(tmp_path / "bad.pem"), "--tlskey", str(tmp_path / "bad.pem")],
         f"--tlscert {tmp_path / 'bad.pem'} with --tlskey {tmp_path / 'bad.pem'}: not a PEM "
         "certificate and its private key: PEM lib"),
        ([*s, "--nkey", str(tmp_path / "pub.nk")],
         f"--nkey {tmp_path / 'pub.nk'}: no user nkey seed found (that is a public key: give "
         "the seed) (a user seed starts with SU)"),
        ([*s, "--nkey", str(tmp_path / "bad.nk")],
         f"--nkey {tmp_path / 'bad.nk'}: the user nkey seed is not valid (its checksum or "
         "encoding is wrong)"),
        ([*s, "--password", "x"], "--password needs --user: a password alone is no credential"),
    ]
    for args, said in cases:
        res = jl(*args, "stream", "ls")
        assert (res.exit_code, res.stderr) == (1, f"jetlink: error: {said}\n"), args
    monkeypatch.setenv("NATS_CA", gone)
    res = jl(*s, "stream", "ls")
    assert res.stderr == f"jetlink: error: --tlsca (from NATS_CA) {gone}: no such file\n"
    monkeypatch.delenv("NATS_CA")
    (tmp_path / "good.nk").write_text(_seed() + "\n")
    res = jl(*s, "--nkey", str(tmp_path / "good.nk"), "stream", "ls")  # checked: it connects
    assert res.stderr == ("jetlink: error: connecting: could not connect to "
                          "nats://127.0.0.1:1: connection refused\n")


def test_bad_url_is_a_usage_error(home):
    res = jl("-s", "http://x", "stream", "ls")
    assert res.exit_code == 2
    assert "invalid server URL 'http://x' (--server)" in res.stderr
    # a refused URL is shown without its password too
    res = jl("-s", "nats://u:secret@h:99999", "stream", "ls")
    assert res.exit_code == 2 and "secret" not in res.stderr
    assert "invalid server URL 'nats://u:********@h:99999' (--server): port must be" in \
        res.stderr
    # a host no resolver takes: said before any connection (not the IDNA codec's words)
    for url in ("nats://a..b:4222", "a..b", "nats://" + "x" * 64 + ":4222"):
        res = jl("-s", url, "stream", "ls")
        assert res.exit_code == 2 and "is no host name" in res.stderr, (url, res.stderr)


def test_embedded_only_sentence(home):
    res = jl("--server", "nats://127.0.0.1:1", "replicate")
    assert res.exit_code == 1
    assert res.stderr == (
        "jetlink: error: jetlink replicate works on the embedded engine's data directory: it "
        "is not available with a live server (nats://127.0.0.1:1 from --server); leave out "
        "the server settings to use the embedded engine\n")


def test_context_with_a_server(home, tmp_path):
    res = jl("context", "add", "prod", "--server", "nats://127.0.0.1:1", "--user", "ops",
             "--password", "s3cret", "--js-domain", "west", "--timeout", "2s", "--select",
             "-j")
    assert res.exit_code == 0, res.stderr
    d = json.loads(res.stdout)
    assert d["nats"] == {"server": "nats://127.0.0.1:1", "user": "ops", "password": "********",
                         "js_domain": "west", "timeout": "2s"}
    text = (home / "jetlink" / "context" / "prod.toml").read_text()
    assert 'server = "nats://127.0.0.1:1"' in text and 'password = "s3cret"' in text
    shown = json.loads(jl("context", "show", "-j").stdout)
    assert shown["target"] == {
        "kind": "live", "servers": ["nats://127.0.0.1:1"], "origin": "jetlink context prod",
        "user": "ops", "js_domain": "west", "password": "********", "timeout": 2.0,
        "sources": {"servers": "jetlink context prod", "user": "jetlink context prod",
                    "password": "jetlink context prod", "js_domain": "jetlink context prod",
                    "timeout": "jetlink context prod"}}
    human = jl("context", "show").stdout
    assert "Target: live server nats://127.0.0.1:1 (from jetlink context prod)" in human
    assert "s3cret" not in human + jl("context", "ls", "-j").stdout
    # the context's server is where the verbs go
    res = jl("stream", "ls")
    assert res.exit_code == 1 and "could not connect to nats://127.0.0.1:1" in res.stderr
    # an option still beats it
    res = jl("-s", "nats://127.0.0.1:2", "stream", "ls")
    assert "nats://127.0.0.1:2" in res.stderr


def test_context_show_names_an_unused_natscli_selection(home):
    nats_ctx(home, "prod", url="nats://production:4222")
    (home / "nats" / "context.txt").write_text("prod\n")
    d = json.loads(jl("context", "show", "-j").stdout)
    assert d["target"]["kind"] == "embedded"
    assert d["target"]["natscli_selected_unused"] == "prod"
    assert ("natscli's selected context prod is not used unless named (--nats-context)"
            in jl("context", "show").stdout)
    d = json.loads(jl("--nats-context", "prod", "context", "show", "-j").stdout)
    assert d["target"]["servers"] == ["nats://production:4222"]
    assert "natscli_selected_unused" not in d["target"]


def test_a_server_from_the_environment_gives_way_to_the_embedded_engine_named(home, tmp_path,
                                                                               monkeypatch):
    """NATS_URL (or NATS_CONTEXT) exported in the shell is a standing setting: a command line
    that gives --data-dir or --cluster addresses the embedded engine, which runs, with a
    notice naming the variable and its server; --server on the same command line still
    reaches the server."""
    monkeypatch.setenv("NATS_URL", "nats://127.0.0.1:1")
    reh = tmp_path / "rehearsal"
    assert jl("--data-dir", str(reh), "cluster", "add", "west").exit_code == 0
    res = jl("--data-dir", str(reh), "--cluster", "west", "stream", "add", "W",
             "--subjects", "w.>", "--defaults")
    assert res.exit_code == 0 and (reh / "west.db").exists()
    assert res.stderr == (
        "jetlink: notice: the server of NATS_URL (nats://127.0.0.1:1) is not used: --data-dir "
        "and --cluster address the embedded engine (jetlink --server URL ... uses a server)\n")
    res = jl("--data-dir", str(reh), "--cluster", "west", "stream", "ls", "-n")
    assert (res.exit_code, res.stdout) == (0, "W\n")
    # without them (the shell's variable alone), and with --server as well, the server
    assert "nats://127.0.0.1:1: connection refused" in jl("stream", "ls").stderr
    both = jl("--server", "nats://127.0.0.1:2", "--cluster", "west", "stream", "ls")
    assert both.stderr == ("jetlink: error: connecting: could not connect to "
                           "nats://127.0.0.1:2: connection refused\n")
    monkeypatch.delenv("NATS_URL")
    nats_ctx(home, "ops", url="nats://127.0.0.1:3")
    monkeypatch.setenv("NATS_CONTEXT", "ops")
    res = jl("--cluster", "west", "--data-dir", str(reh), "stream", "ls", "-n")
    assert (res.exit_code, res.stdout) == (0, "W\n")
    assert res.stderr == (
        "jetlink: notice: the server of NATS_CONTEXT (the natscli context ops) is not used: "
        "--data-dir and --cluster address the embedded engine (jetlink --nats-context ops ... "
        "uses it)\n")
    named = jl("--nats-context", "ops", "--cluster", "west", "stream", "ls")
    assert "nats://127.0.0.1:3: connection refused" in named.stderr


def test_a_data_dir_on_the_command_line_sets_a_selected_contexts_cluster_aside(home, tmp_path):
    """A selected context's cluster is one of its own data directory: with --data-dir on the
    command line it is not used (the notice says so), as its server is not; named with
    --context it is."""
    srv, reh = tmp_path / "srv", tmp_path / "rehearsal"
    assert jl("--data-dir", str(reh), "stream", "add", "R", "--subjects", "r.>",
              "--defaults").exit_code == 0
    assert jl("context", "add", "p2", "--data-dir", str(srv), "--cluster", "east",
              "--select").exit_code == 0
    res = jl("--data-dir", str(reh), "stream", "ls", "-n")
    assert (res.exit_code, res.stdout) == (0, "R\n")
    assert res.stderr == ("jetlink: notice: the selected context p2's cluster east is not "
                          "used: --data-dir addresses the embedded engine (jetlink --context p2 "
                          "... uses it)\n")
    named = jl("--context", "p2", "--data-dir", str(reh), "stream", "ls")
    assert (named.exit_code, named.stderr) == (1, (
        "jetlink: error: cluster east not found: cluster east is the one of context p2: give "
        "--cluster NAME to address another\n"))
    assert jl("context", "add", "p3", "--data-dir", str(srv), "--cluster", "east", "--server",
              "nats://127.0.0.1:1", "--select").exit_code == 0
    res = jl("--data-dir", str(reh), "stream", "ls", "-n")
    assert (res.exit_code, res.stdout) == (0, "R\n")
    assert res.stderr == ("jetlink: notice: the selected context p3's server and cluster east "
                          "are not used: --data-dir addresses the embedded engine (jetlink "
                          "--context p3 ... uses it)\n")


def test_context_with_a_bad_server_is_refused(home):
    res = jl("context", "add", "x", "--server", "ftp://nope")
    assert res.exit_code == 2 and "invalid server URL" in res.stderr
    assert not (home / "jetlink" / "context" / "x.toml").exists()


def test_a_selected_context_never_takes_a_rehearsal_to_its_server(home, tmp_path):
    """A context only selected (not named) gives its server to no invocation whose command
    line gives --data-dir or --cluster (the embedded engine, a notice saying so), nor to one
    naming a natscli context (used whole: its URL with its credentials)."""
    ok = "nats://127.0.0.1:1"
    assert jl("context", "add", "live1", "--server", ok, "--select").exit_code == 0
    reh = tmp_path / "rehearsal"
    res = jl("--data-dir", str(reh), "stream", "add", "REHEARSE", "--subjects", "reh.>",
             "--defaults")
    assert res.exit_code == 0 and (reh / "local.db").exists()
    assert res.stderr == ("jetlink: notice: the selected context live1's server is not used: "
                          "--data-dir addresses the embedded engine (jetlink --context live1 "
                          "... uses it)\n")
    # without them, the selected context's server is the target; named, it wins again
    assert "nats://127.0.0.1:1: connection refused" in jl("stream", "ls").stderr
    named = jl("--context", "live1", "--data-dir", str(reh), "stream", "ls")
    assert named.exit_code == 1 and "nats://127.0.0.1:1: connection refused" in named.stderr
    nats_ctx(home, "nc", url="nats://127.0.0.1:2", user="alice", password="secret")
    res = jl("--nats-context", "nc", "stream", "ls")
    assert res.exit_code == 1
    assert res.stderr == (
        "jetlink: notice: the selected context live1's server is not used: the natscli "
        "context nc is named (jetlink --context live1 ... uses it)\n"
        "jetlink: error: connecting: could not connect to nats://127.0.0.1:2: connection "
        "refused\n")


def test_an_exported_data_directory_sets_a_selected_contexts_server_aside(home, tmp_path,
                                                                         monkeypatch):
    """JETLINK_DATA_DIR set in this shell is nearer than a selection kept on disk (as
    natscli's NATS_URL beats its selected context): the embedded engine, a notice naming
    the variable; --context still names the server."""
    assert jl("context", "add", "live1", "--server", "nats://127.0.0.1:1",
              "--select").exit_code == 0
    reh = tmp_path / "rehearsal"
    monkeypatch.setenv("JETLINK_DATA_DIR", str(reh))
    res = jl("stream", "add", "REHEARSE", "--subjects", "reh.>", "--defaults")
    assert res.exit_code == 0 and (reh / "local.db").exists()
    assert res.stderr == ("jetlink: notice: the selected context live1's server is not used: "
                          "JETLINK_DATA_DIR addresses the embedded engine (jetlink --context "
                          "live1 ... uses it)\n")
    named = jl("--context", "live1", "stream", "ls")
    assert named.exit_code == 1 and "nats://127.0.0.1:1: connection refused" in named.stderr


def test_a_cluster_a_context_gave_is_named_with_it_when_not_found(home, tmp_path,
                                                                 monkeypatch):
    assert jl("context", "add", "dev", "--cluster", "east", "--select").exit_code == 0
    monkeypatch.setenv("JETLINK_DATA_DIR", str(tmp_path / "d"))
    assert jl("cluster", "add", "west").exit_code == 0
    res = jl("stream", "ls")
    assert (res.exit_code, res.stderr) == (1, (
        "jetlink: error: cluster east not found: did you mean west?; cluster east is the one "
        "of context dev: give --cluster NAME to address another\n"))


@pytest.mark.parametrize(("url", "shown"), [
    ("nats://127.0.0.1:4222", "nats://127.0.0.1:4222"),
    ("nats://alice:s3cret@host:4222", "nats://alice:********@host:4222"),
    ("nats://tok3n@host:4222", "nats://********@host:4222"),  # a lone user part: a token
    ("tls://a:b:c@host", "tls://a:********@host"),  # the password holds a colon
    ("nats://a:p@h1:4222,nats://h2:4222,nats://t@h3", "nats://a:********@h1:4222,"
     "nats://h2:4222,nats://********@h3"),
    ("alice:pw@host:4222", "alice:********@host:4222"),  # no scheme
    ("nats://a:p%40ss@host", "nats://a:********@host"),
])
def test_a_server_url_is_shown_without_its_password_or_token(url, shown):
    from jetlink.core.live.target import shown_url

    assert shown_url(url) == shown


@pytest.mark.parametrize(("key", "value", "instead"), [
    ("nsc", "nsc://operator/account/user", "give the user's credentials file instead"),
    ("user_jwt", "eyJ0eXAiOiJKV1QifQ.e30.sig", "give a credentials file holding the JWT"),
    ("socks_proxy", "127.0.0.1:1080", "jetlink connects directly"),
])
def test_a_natscli_context_key_jetlink_cannot_honour_is_refused(home, key, value, instead):
    """A natscli context that authenticates or routes in a way jetlink cannot follow is
    refused naming the key, rather than connecting without it (no credentials, no proxy)."""
    nats_ctx(home, "ops", url="nats://127.0.0.1:1", **{key: value})
    res = jl("--nats-context", "ops", "stream", "ls")
    path = home / "nats" / "context" / "ops.json"
    assert res.exit_code == 1
    shown = f"{key} (set)" if key == "user_jwt" else f"{key} {value!r}"  # no JWT printed
    assert res.stderr.startswith(f"jetlink: error: natscli context {path}: {shown} is "
                                 f"not supported by jetlink: {instead}"), res.stderr
    assert "eyJ0" not in res.stderr
    nats_ctx(home, "ops", url="nats://127.0.0.1:1", jetstream_event_prefix="x",
             color_scheme="dark")  # natscli's own output: ignored
    assert "could not connect to nats://127.0.0.1:1" in jl("--nats-context", "ops", "stream",
                                                            "ls").stderr


@pytest.mark.parametrize(("kw", "label"), [
    ({}, "nats://127.0.0.1:1"),
    ({"js_domain": "west"}, "domain west on nats://127.0.0.1:1"),
    ({"js_api_prefix": "$JS.hub.API"}, "API $JS.hub.API on nats://127.0.0.1:1"),
])
def test_what_a_live_check_looked_at_names_the_domain(kw, label):
    """`dr check` says where it looked ("no mirrors in ..."): the server, and the domain
    or API prefix in force (-s URL --js-domain west looks in west, not at URL's own)."""
    from jetlink.core.backend import LiveBackend
    from jetlink.core.live.target import ServerTarget

    assert LiveBackend(ServerTarget(("nats://127.0.0.1:1",), **kw)).label == label


# -- natscli context files read as natscli reads them (jsm.go natscontext) ------------------


def test_natscli_context_paths_expand_variables_then_the_home_directory(home, tmp_path):
    """jsm.go natscontext expand(): creds, nkey, cert, key and ca go through os.ExpandEnv,
    then a leading ~ is the home directory; other keys are taken as written."""
    nats_ctx(home, "ops", url="nats://127.0.0.1:1", user="$USERVAR", creds="$CDIR/u.creds",
             nkey="${CDIR}/u.nk", cert="~/$SUB/c.pem", key="file://$CDIR/k.pem",
             ca="file://~/ca.pem", inbox_prefix="_I")
    env = env_with(home, CDIR="/etc/nats", SUB="tls", HOME="/home/op")
    got = read_nats_context("ops", env).settings
    assert (got["creds"], got["nkey"], got["tls_cert"], got["tls_key"], got["tls_ca"]) == (
        "/etc/nats/u.creds", "/etc/nats/u.nk", "/home/op/tls/c.pem", "/etc/nats/k.pem",
        "/home/op/ca.pem")
    assert got["user"] == "$USERVAR"  # (not a path: natscli sends it as written)
    nats_ctx(home, "ops", url="nats://127.0.0.1:1", creds="$UNSET")  # empty: no creds
    assert "creds" not in read_nats_context("ops", env).settings


@pytest.mark.parametrize(("text", "want"), [
    ("$A/b", "x/b"), ("${A}b", "xb"), ("$", "$"), ("a$", "a$"), ("${}z", "z"), ("${A", "A"),
    ("$1y", "y"), ("$Az", ""), ("$ A", "$ A"), ("${ A }", ""), ("$$", ""),
])
def test_variables_expand_as_gos_os_expandenv(text, want):
    from jetlink.core.live.settings import _expand_env

    assert _expand_env(text, {"A": "x"}) == want


def test_natscli_credential_references_resolve(home, tmp_path):
    """jsm.go natscontext resolvers: a password or token given as env://, file:// or
    data: is what it names (its trailing newline cut); another scheme is a literal."""
    (tmp_path / "pw").write_text("from-file\r\n")
    env = env_with(home, MYPW="from-env\n", HOME=str(tmp_path))
    for ref, want in (("env://MYPW", "from-env"), ("ENV://MYPW", "from-env"),
                      ("file://~/pw", "from-file"), (f"file://{tmp_path}/pw", "from-file"),
                      ("data:;base64,ZnJvbS1kYXRhCg==", "from-data"),
                      ("data:text/plain;base64,ZnJvbS1kYXRh", "from-data"),
                      ("http://not-a-reference", "http://not-a-reference"),
                      ("p@ss:word", "p@ss:word"), ("C:\\pw", "C:\\pw")):
        nats_ctx(home, "ops", url="nats://127.0.0.1:1", user="u", password=ref, token=ref)
        got = read_nats_context("ops", env).settings
        assert (got["password"], got["token"]) == (want, want), ref


@pytest.mark.parametrize(("doc", "message"), [
    ({"user": "u", "password": "env://MYPW"},
     "password 'env://MYPW': environment variable MYPW is not set"),
    ({"token": "env://EMPTY"}, "token 'env://EMPTY': environment variable EMPTY is empty"),
    ({"token": "file:///nowhere/tok"},
     "token 'file:///nowhere/tok': can not read /nowhere/tok: No such file or directory"),
    ({"user": "u", "password": "data:,c2VjcmV0"},
     "password 'data:,...': a data: reference must declare ';base64' encoding "
     "(data:;base64,...)"),
    ({"user": "u", "password": "op://vault/nats/pw"},
     "password 'op://vault/nats/pw': a 1Password reference (op://), read with 1Password's "
     "op command, which jetlink does not resolve: give the password itself or an env://, "
     "file:// or data: reference"),
    ({"creds": "nsc://op/acct/user"},
     "creds 'nsc://op/acct/user': an nsc reference (nsc://), read with the nsc command, "
     "which jetlink does not resolve: give the credentials file's path or a file:// URL"),
    ({"creds": "env://CREDS"},
     "creds 'env://CREDS': jetlink reads the credentials from a file, not from an env: "
     "reference: give the credentials file's path or a file:// URL"),
    ({"nkey": "data:;base64,U1VBQQ=="},
     "nkey 'data:;base64,...': jetlink reads the seed from a file, not from a data: "
     "reference: give the seed file's path or a file:// URL"),
    ({"ca": "env://CA"}, "ca 'env://CA': the env: scheme is not for a TLS file, a path or a "
                         "file:// URL (natscli's rule)"),
])
def test_a_credential_reference_jetlink_can_not_follow_is_refused(home, monkeypatch, doc,
                                                                  message):
    """Never sent as written (a password 'env://MYPW'): resolved or refused naming the
    file, the key and the scheme, and never showing a data: reference's payload."""
    monkeypatch.delenv("MYPW", raising=False)
    monkeypatch.setenv("EMPTY", "")
    nats_ctx(home, "ops", url="nats://127.0.0.1:1", **doc)
    path = home / "nats" / "context" / "ops.json"
    res = jl("--nats-context", "ops", "stream", "ls")
    assert (res.exit_code, res.stderr) == (
        1, f"jetlink: error: natscli context {path}: {message}\n")
    assert "c2VjcmV0" not in res.stderr and "U1VBQQ" not in res.stderr


@pytest.mark.parametrize(("doc", "message"), [
    ({"tls_first": "false"}, 'tls_first must be true or false, not "false" (a string)'),
    ({"tls_first": 1}, "tls_first must be true or false, not 1 (a number)"),
    ({"url": 5}, "url must be a string, not 5 (a number)"),
    ({"creds": ["a"]}, 'creds must be a string, not ["a"] (an array)'),
    ({"description": {}}, "description must be a string, not {} (an object)"),
    ({"password": 1234}, "password must be a string, not a number"),  # (not shown)
    ({"windows_ca_certs_match": ["a", 1]},
     'windows_ca_certs_match must be a list of strings, not ["a", 1] (an array)'),
    ({"TLS_First": "yes"}, "tls_first ('TLS_First') must be true or false, not \"yes\" "
                           "(a string)"),
])
def test_a_natscli_context_value_of_the_wrong_json_type_is_refused(home, doc, message):
    """natscli decodes its context with json.Unmarshal into typed fields: a value of
    another type (a string "false" for tls_first) fails to load; so it does here, named,
    rather than turning TLS-first on."""
    nats_ctx(home, "ops", **doc)
    path = home / "nats" / "context" / "ops.json"
    with pytest.raises(JetlinkError) as err:
        read_nats_context("ops", env_with(home))
    assert err.value.description == (f"natscli context {path}: {message}: natscli refuses "
                                      "this file too")


def test_natscli_context_keys_match_in_any_case_and_null_is_unset(home):
    """Go's json.Unmarshal: a member names its field in any case (the last one wins); null
    leaves it unset; tls_first false is off."""
    (home / "nats" / "context" / "ops.json").write_text(
        '{"url": "nats://a:1", "URL": "nats://b:1", "User": "u", "password": null, '
        '"tls_first": false, "inbox_prefix": "_X"}')
    got = read_nats_context("ops", env_with(home)).settings
    assert got == {"servers": "nats://b:1", "user": "u", "inbox_prefix": "_X"}


def test_a_request_made_after_the_connection_loop_closed_leaves_no_coroutine_behind():
    """A worker thread of a region run asking after Ctrl-C closed the connection: a
    LiveError naming the request, and no "coroutine ... was never awaited" warning on
    stderr (Python's, which reads like a crash at 3 a.m.)."""
    import asyncio
    import gc
    import warnings

    from jetlink.core.errors import LiveError
    from jetlink.core.live.client import LiveConnection

    conn = LiveConnection.__new__(LiveConnection)
    conn._errors = []
    conn._loop = asyncio.new_event_loop()
    conn._loop.close()

    async def go() -> int:
        return 1

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(LiveError, match="^request to X: the connection was closed$"):
            conn.run(go(), timeout=1, doing="request to X")
        gc.collect()


def test_a_list_page_with_missing_names_goes_on_after_them():
    """STREAM.LIST / CONSUMER.LIST answer a page of ``limit`` names from an offset, those
    reached as items and the others in ``missing``: the next page starts after both (as
    jsm.go's iterableRequest, offset + limit), so no stream is listed twice and the missing
    ones are kept, each once."""
    from types import SimpleNamespace

    from jetlink.core.live.jetstream import LiveJetStream

    names = ["A", "B", "C", "D", "E", "F", "G"]
    gone = {"D", "E"}
    asked = []

    def api(verb, req):
        asked.append(req["offset"])
        page = names[req["offset"]:req["offset"] + 5]
        return {"total": len(names), "offset": req["offset"], "limit": 5,
                "streams": [{"config": {"name": n}} for n in page if n not in gone],
                "missing": [n for n in page if n in gone]}

    missing: list[str] = []
    items = LiveJetStream._paged(SimpleNamespace(api=api), "STREAM.LIST", "streams", None,
                                 missing)
    assert [i["config"]["name"] for i in items] == ["A", "B", "C", "F", "G"]
    assert (missing, asked) == (["D", "E"], [0, 5])


def test_a_backend_says_how_a_command_line_reaches_where_it_acts(tmp_path):
    """An equivalent command a user is shown (the dashboard's dialogs): the embedded
    engine's cluster by --cluster, a live server by -s URL (its JetStream domain with it),
    never a URL given to --cluster; where it is, in words."""
    from jetlink.core.backend import EmbeddedBackend, LiveBackend
    from jetlink.core.clock import ManualClock
    from jetlink.core.live.target import ServerTarget

    live = LiveBackend(ServerTarget(("nats://127.0.0.1:4222",), origin="test"))
    assert live.addressing("local") == "-s nats://127.0.0.1:4222"
    assert live.place("local") == "the server nats://127.0.0.1:4222"
    hub = LiveBackend(ServerTarget(("nats://127.0.0.1:4222",), origin="test",
                                   js_domain="hub"))
    assert hub.addressing("local") == "-s nats://127.0.0.1:4222 --js-domain hub"
    embedded = EmbeddedBackend(tmp_path, "east", ManualClock)
    assert (embedded.addressing("east"), embedded.place("east")) == ("--cluster east",
                                                                      "cluster east")


@pytest.mark.parametrize(("kw", "said"), [
    # the one identity sent (a user, else creds, else an nkey), as the connection picks it
    ({"user": "u", "password": "p", "creds": "/c", "nkey": "/n"}, "--user, --password"),
    ({"user": "u", "nkey": "/n"}, "--user (without a password: sent as a token)"),
    ({"creds": "/c", "nkey": "/n"}, "--creds"),
    ({"nkey": "/n", "token": "t"}, "the token, --nkey"),
    ({}, "--user/--password, --creds or --nkey (none was given)"),
    # a URL's user part wins over the options (nats.go's connectProto), a creds file is sent
    ({"servers": ("nats://u:p@127.0.0.1:1",), "user": "x", "password": "y", "nkey": "/n"},
     "the user and password (or token) in the server URL"),
    ({"servers": ("nats://t@127.0.0.1:1",), "creds": "/c"},
     "--creds, the user and password (or token) in the server URL"),
])
def test_an_authorization_failure_names_the_credentials_sent_only(kw, said):
    from jetlink.core.live.client import _credentials_from
    from jetlink.core.live.target import ServerTarget

    servers = kw.pop("servers", ("nats://127.0.0.1:1",))
    target = ServerTarget(servers, **kw)
    assert _credentials_from(target) == said


@pytest.mark.parametrize(("verb", "doing"), [
    ("STREAM.INFO.ORDERS", "STREAM.INFO ORDERS"),
    ("STREAM.MSG.GET.KV_C", "STREAM.MSG.GET KV_C"),
    ("STREAM.LEADER.STEPDOWN.S", "STREAM.LEADER.STEPDOWN S"),
    ("CONSUMER.MSG.NEXT.S.C", "CONSUMER.MSG.NEXT S.C"),
    ("CONSUMER.INFO.S.C", "CONSUMER.INFO S.C"),
    ("STREAM.LIST", "STREAM.LIST"),
    ("INFO", "INFO"),
])
def test_what_a_failed_api_request_was_doing(verb, doing):
    from jetlink.core.live.client import verb_doing

    assert verb_doing(verb) == doing


def test_a_domain_and_an_api_prefix_together_are_refused(home):
    """jsm.go's New: WithAPIPrefix and WithDomain are mutually exclusive (the prefix would
    win silently): refused, naming both and where each came from."""
    from jetlink.core.errors import JetlinkError, UsageError
    from jetlink.core.live.settings import resolve_target

    with pytest.raises(UsageError) as err:
        resolve_target({"servers": "nats://h:4222", "js_domain": "hub",
                        "js_api_prefix": "$JS.API"}, {}, None, None)
    assert err.value.description == (
        "a JetStream domain (hub, from --js-domain) and an API prefix ($JS.API, from "
        "--js-api-prefix) are mutually exclusive: give one")
    nats_ctx(home, "pfx", url="nats://127.0.0.1:1", jetstream_api_prefix="$JS.X.API")
    with pytest.raises(JetlinkError) as err:  # (a context's: not a usage error)
        resolve_target({"js_domain": "hub"}, env_with(home), None, "pfx")
    assert not isinstance(err.value, UsageError)
    assert err.value.description.startswith(
        "a JetStream domain (hub, from --js-domain) and an API prefix ($JS.X.API, from "
        "natscli context pfx ("), err.value.description


def test_a_natscli_context_named_by_its_json_file(home, tmp_path):
    """natscli's loadContext: an existing file ending in .json is read as the context
    (NATS_CONTEXT=./ops.json); a missing one is a name, refused by the name rule."""
    from jetlink.core.errors import UsageError
    from jetlink.core.live.settings import resolve_target

    path = tmp_path / "ops.json"
    path.write_text(json.dumps({"url": "nats://127.0.0.1:4299", "user": "u", "password": "p"}))
    target = resolve_target({}, env_with(home), None, str(path))
    assert (target.servers, target.user) == (("nats://127.0.0.1:4299",), "u")
    with pytest.raises(UsageError, match="invalid natscli context name"):
        resolve_target({}, env_with(home), None, str(tmp_path / "missing.json"))
