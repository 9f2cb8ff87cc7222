"""Where a topology's clusters live on live servers (core/topology/bindings.py live_bindings,
resolve_binding, target_table, the domain names): no server needed, nothing connected."""

from __future__ import annotations

import json
import textwrap

import pytest

from jetlink.core.backend import topo_binds_servers
from jetlink.core.config.stream import StreamConfig
from jetlink.core.live.target import ServerTarget
from jetlink.core.topology import Topology
from jetlink.core.topology.bindings import Binding, live_bindings, resolve_binding, target_table
from jetlink.core.topology.live import LiveClusters
from jetlink.core.topology.targets import withheld


def topo_of(text: str) -> Topology:
    topo = Topology()
    import tomllib

    topo.add_document(tomllib.loads(textwrap.dedent(text)), "t.toml", fmt="toml")
    return topo


def brief(problems):
    return [(p.object, p.field) for p in problems]


def test_a_file_binding_no_cluster_is_not_live():
    assert not topo_binds_servers(topo_of('[clusters.west]\n[streams.S]\ncluster = "west"\n'))
    assert topo_binds_servers(topo_of('[clusters.west]\nserver = "nats://h:4222"\n'))


def test_bindings_of_two_domains_on_one_server():
    bindings, problems = live_bindings(topo_of("""
        [clusters.west]
        server = "nats://h:4222"
        js_domain = "west"
        [clusters.east]
        server = "nats://h:4222"
        js_domain = "east"
        """), environ={})
    assert problems == []
    west, east = bindings["west"], bindings["east"]
    assert (west.domain, east.domain) == ("west", "east")
    assert west.target.api_prefix == "$JS.west.API"
    assert west.connection_key == east.connection_key  # one connection for both
    assert west.table == {"server": "nats://h:4222", "js_domain": "west"}
    assert west.target.origin == "[clusters.west] of t.toml"


def test_problems_of_the_bindings():
    _, problems = live_bindings(topo_of("""
        [clusters.west]
        server = "nats://h:4222"
        [clusters.again]
        server = "nats://h:4222"
        [clusters.east]
        [clusters.kx]
        kind = "kafka"
        [streams.M]
        cluster = "east"
        mirror = { name = "O", domain = "west" }
        [streams.L]
        subjects = ["l.>"]
        """), environ={})
    assert brief(problems) == [
        ("cluster east", "server"), ("cluster kx", "kind"), ("cluster local", "server"),
        ("cluster again", "js_domain"), ("stream M", "mirror.domain")]
    text = [p.description for p in problems]
    assert text[0].startswith('cluster "east" is not bound to a server: in a file that binds')
    assert "kafka cluster" in text[1]
    assert text[3] == ('cluster "again" is bound to the same JetStream as cluster "west" '
                       "(nats://h:4222): each cluster of a file is a JetStream of its own; "
                       "give each its own js_domain")
    assert 'that cluster is bound to nats://h:4222 without a JetStream domain' in text[4]


def test_the_server_in_force_takes_the_unbound_clusters():
    default = ServerTarget(("nats://h:4222",), js_domain="hub")
    bindings, problems = live_bindings(topo_of("""
        [clusters.west]
        server = "nats://other:4222"
        [streams.A]
        cluster = "east"
        subjects = ["a.>"]
        [streams.L]
        subjects = ["l.>"]
        """), default, environ={})
    assert problems == []
    assert bindings["west"].target.servers == ("nats://other:4222",)
    assert bindings["east"].target.api_prefix == "$JS.east.API"
    assert bindings["local"].target.api_prefix == "$JS.hub.API"  # its own --js-domain
    assert bindings["east"].table == {"server": "nats://h:4222", "js_domain": "east"}


def test_kafka_objects_are_problems_on_live_servers():
    default = ServerTarget(("nats://h:4222",))
    _, problems = live_bindings(topo_of('[topics.t]\npartitions = 2\n'), default, environ={})
    assert brief(problems) == [("topic t", "cluster")]
    assert "Kafka objects can not be applied to a live NATS server" in problems[0].description


def test_contexts_jetlink_first_then_natscli(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path), "NATS_URL": "nats://env:1", "NATS_USER": "u"}
    (tmp_path / "jetlink" / "context").mkdir(parents=True)
    (tmp_path / "jetlink" / "context" / "prod.toml").write_text(
        'server = "nats://jl:4222"\njs_domain = "west"\n')
    (tmp_path / "nats" / "context").mkdir(parents=True)
    (tmp_path / "nats" / "context" / "prod.json").write_text(json.dumps({"url": "nats://n:1"}))
    (tmp_path / "nats" / "context" / "dr.site.json").write_text(json.dumps(
        {"url": "nats://dr:4222", "user": "ops", "password": "pw", "jetstream_domain": "east"}))
    topo = topo_of("""
        [clusters.a]
        context = "prod"
        [clusters.b]
        context = "dr.site"
        timeout = "2s"
        [clusters.c]
        context = "prod"
        server = "nats://override:4222"
        js_domain = "c"
        """)
    a = resolve_binding(topo.clusters["a"], env)
    assert (a.servers, a.js_domain, a.user) == (("nats://jl:4222",), "west", None)
    b = resolve_binding(topo.clusters["b"], env)
    assert (b.servers, b.user, b.password, b.js_domain, b.timeout) == (
        ("nats://dr:4222",), "ops", "pw", "east", 2.0)
    c = resolve_binding(topo.clusters["c"], env)
    assert (c.servers, c.js_domain) == (("nats://override:4222",), "c")
    missing = topo_of('[clusters.x]\ncontext = "nope"\n')
    with pytest.raises(Exception) as info:
        resolve_binding(missing.clusters["x"], env)
    assert "[clusters.x] context = 'nope': no such context: neither a jetlink context" in str(
        info.value.description)
    _, problems = live_bindings(missing, environ=env)
    assert brief(problems) == [("cluster x", "context")]


def test_target_table_never_writes_secrets():
    t = ServerTarget(("nats://h:4222",), user="ops", password="pw", token="tk",
                     creds="/c.creds", tls_ca="/ca.pem", tls_first=True,
                     sources={"servers": "--server"})
    assert target_table(t, "west") == {"server": "nats://h:4222", "user": "ops",
                                       "creds": "/c.creds", "tls_ca": "/ca.pem",
                                       "tls_first": True, "js_domain": "west"}
    assert withheld(t) == ["password", "token"]
    from_ctx = ServerTarget(("nats://h:4222",), password="pw",
                            sources={"servers": "natscli context prod (/x/prod.json)"})
    assert target_table(from_ctx, None) == {"context": "prod"}
    assert withheld(from_ctx) == []


def test_target_table_writes_file_paths_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    t = ServerTarget(("nats://h:4222",), creds="user.creds", tls_ca="certs/ca.pem",
                     sources={"servers": "--server"})
    assert target_table(t, None) == {"server": "nats://h:4222",
                                     "creds": str(tmp_path / "user.creds"),
                                     "tls_ca": str(tmp_path / "certs" / "ca.pem")}


def test_a_files_relative_paths_are_read_beside_the_file(tmp_path, monkeypatch):
    """creds, nkey and the TLS files given relative in a topology file are the ones beside
    the file (as a kubeconfig's), whatever the working directory; ~ and absolute paths
    stay as written; the same file read from two directories binds the same files."""
    from jetlink.core.topology.load import load_files

    (tmp_path / "topo").mkdir()
    (tmp_path / "elsewhere").mkdir()
    path = tmp_path / "topo" / "dr.toml"
    path.write_text(textwrap.dedent("""\
        [clusters.west]
        server = "nats://h:4222"
        creds = "ops.creds"
        tls_ca = "certs/../certs/ca.pem"
        tls_cert = "/etc/cert.pem"
        nkey = "~/user.nk"
    """))
    seen = []
    for cwd, given in ((tmp_path / "elsewhere", str(path)), (tmp_path / "topo", "dr.toml")):
        monkeypatch.chdir(cwd)
        topo = load_files([given])
        assert topo.problems == []
        seen.append(topo.clusters["west"].binding)
    assert seen[0] == seen[1] == {
        "server": "nats://h:4222", "creds": str(tmp_path / "topo" / "ops.creds"),
        "tls_ca": str(tmp_path / "topo" / "certs" / "ca.pem"),
        "tls_cert": "/etc/cert.pem", "nkey": "~/user.nk"}
    assert topo.clusters["west"].to_table()["creds"] == str(tmp_path / "topo" / "ops.creds")
    target = resolve_binding(topo.clusters["west"], {})
    assert (target.creds, target.tls_ca) == (str(tmp_path / "topo" / "ops.creds"),
                                             str(tmp_path / "topo" / "certs" / "ca.pem"))


@pytest.mark.parametrize(("servers", "user", "password", "table", "left"), [
    # the URL's user part: user:password gives the user; a lone part is a token
    (("nats://ops:pw@h:4222",), None, None, {"server": "nats://h:4222", "user": "ops"},
     ["password"]),
    (("nats://tk@h:4222", "tls://tk@g:4222"), None, None,
     {"server": "nats://h:4222,tls://g:4222"}, ["token"]),
    (("ops:p@ss:w@h:4222",), None, None, {"server": "h:4222", "user": "ops"}, ["password"]),
    # --user alone is a token (natscli's reading); with --password a user name
    (("nats://h:4222",), "tk", None, {"server": "nats://h:4222"}, ["token"]),
    (("nats://h:4222",), "ops", "pw", {"server": "nats://h:4222", "user": "ops"},
     ["password"]),
    (("nats://h:4222",), None, None, {"server": "nats://h:4222"}, []),
])
def test_target_table_strips_the_urls_secrets(servers, user, password, table, left):
    t = ServerTarget(servers, user=user, password=password, sources={"servers": "--server"})
    assert target_table(t, None) == table
    assert withheld(t) == left


def test_domain_names_translated_at_the_seam():
    bindings = {
        "primary": Binding("primary", ServerTarget(("nats://h:1",), js_domain="west"), {}),
        "dr": Binding("dr", ServerTarget(("nats://h:1",), js_domain="east"), {}),
        "plain": Binding("plain", ServerTarget(("nats://p:1",)), {}),
    }
    backend = LiveClusters(bindings)
    cfg = StreamConfig.from_json({"name": "M", "mirror": {
        "name": "O", "external": {"api": "$JS.primary.API"}}})
    sent = backend.to_server(cfg, "dr")
    assert sent.mirror.external.api == "$JS.west.API"
    assert cfg.mirror.external.api == "$JS.primary.API"  # a copy is changed
    assert backend.to_file(sent, "dr").mirror.external.api == "$JS.primary.API"
    same = StreamConfig.from_json({"name": "A", "subjects": ["a.>"], "sources": [
        {"name": "B", "external": {"api": "$JS.plain.API"}},
        {"name": "C", "external": {"api": "$JS.elsewhere.API"}},
        {"name": "D", "external": {"api": "$JS.primary.API", "deliver": "x.y"}}]})
    out = backend.to_server(same, "plain")
    assert out.sources[0].external is None  # its own JetStream, named by no domain
    assert out.sources[1].external.api == "$JS.elsewhere.API"  # a domain outside the file
    assert out.sources[2].external.api == "$JS.primary.API"  # a deliver prefix: not a domain
    unchanged = StreamConfig.from_json({"name": "S", "subjects": ["s.>"]})
    assert backend.to_server(unchanged, "dr") is unchanged


@pytest.mark.parametrize(("args", "env", "what"), [
    (["--timeout", "1s", "apply", "{file}", "--dry-run"], {}, "--timeout"),
    (["export", "--from", "{file}"], {"NATS_TIMEOUT": "1s"}, "NATS_TIMEOUT"),
])
def test_a_timeout_given_with_a_file_that_binds_servers_is_said_unused(
        jl, tmp_path, monkeypatch, args, env, what):
    """The file alone says how each bound cluster is reached (its table's timeout): a
    --timeout or NATS_TIMEOUT given beside it is said not to apply, not silently unused."""
    path = tmp_path / "b.toml"
    path.write_text('[clusters.local]\nserver = "nats://127.0.0.1:1"\n\n'
                    '[streams.A]\nsubjects = ["a"]\n')
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    r = jl(*[a.format(file=path) for a in args])
    assert r.exit_code == 1  # nothing answers there
    assert r.stderr.startswith(
        f"jetlink: notice: {what} is not used for the clusters the file binds to servers: "
        'each takes its connection settings from its [clusters.NAME] table (timeout = "1s" '
        "there)\n"), r.stderr
    monkeypatch.delenv("NATS_TIMEOUT", raising=False)
    quiet = jl(*[a.format(file=path) for a in args if a not in ("--timeout", "1s")])
    assert "notice" not in quiet.stderr


@pytest.mark.parametrize(("east", "shared"), [
    ('server = "127.0.0.1:24222"\njs_domain = "hub"', True),  # the same URL, spelt otherwise
    ('server = "nats://127.0.0.1:24222"\njs_domain = "hub"', True),
    ('server = "nats://127.0.0.1:24222"\njs_domain = "spoke"', False),
    ('server = "nats://127.0.0.1:24223"\njs_domain = "hub"', False),
])
def test_validate_without_live_sees_two_clusters_on_one_jetstream(jl, tmp_path, east, shared):
    """The rule apply and validate --live apply to the resolved bindings, from the file
    alone (nothing connected: no server listens there)."""
    path = tmp_path / "t.toml"
    path.write_text('[clusters.west]\nserver = "nats://127.0.0.1:24222"\njs_domain = "hub"\n'
                    f"[clusters.east]\n{east}\n"
                    '[streams.A]\ncluster = "west"\nsubjects = ["a.>"]\n')
    r = jl("validate", str(path))
    if not shared:
        assert (r.exit_code, r.stdout) == (0, f"{path}: OK\n"), r.output
        return
    assert r.exit_code == 3, r.output
    assert r.stdout == (
        f'{path}: cluster east: js_domain: cluster "east" is bound to the same JetStream as '
        'cluster "west" (nats://127.0.0.1:24222, JetStream domain hub): each cluster of a '
        "file is a JetStream of its own; give each its own js_domain\n")


def test_validate_without_live_sees_an_origin_bound_without_a_domain(jl, tmp_path):
    """A mirror's origin in another cluster bound without a js_domain: the rule apply and
    validate --live apply, said from the file alone (nothing connected)."""
    path = tmp_path / "t.toml"
    path.write_text('[clusters.w]\nserver = "nats://127.0.0.1:24222"\n'
                    '[clusters.east]\nserver = "nats://127.0.0.1:24222"\njs_domain = "east"\n'
                    '[streams.OV1]\ncluster = "w"\nsubjects = ["ov.>"]\n'
                    '[streams.M]\ncluster = "east"\nmirror = { name = "OV1", domain = "w" }\n')
    r = jl("validate", str(path))
    assert (r.exit_code, r.stdout) == (3, (
        f'{path}: stream M: mirror.domain: origin "OV1" in cluster "w": that cluster is bound '
        "to nats://127.0.0.1:24222 without a JetStream domain, so a stream of cluster "
        '"east" can not reach it (set js_domain in [clusters.w])\n')), r.output


@pytest.mark.parametrize(("table", "clean", "left"), [
    ({"server": "nats://h:4222", "user": "ops", "password": "pw"},
     {"server": "nats://h:4222", "user": "ops"}, ["password"]),
    ({"server": "nats://h:4222", "token": "tk"}, {"server": "nats://h:4222"}, ["token"]),
    ({"server": "nats://ops:pw@h:4222,tls://ops:pw@g:4222"},
     {"server": "nats://h:4222,tls://g:4222", "user": "ops"}, ["password"]),
    ({"server": "nats://tk@h:4222", "js_domain": "west"},
     {"server": "nats://h:4222", "js_domain": "west"}, ["token"]),
    ({"context": "prod", "js_domain": "east"}, {"context": "prod", "js_domain": "east"}, []),
    ({"server": "nats://h:4222", "creds": "/c.creds"},
     {"server": "nats://h:4222", "creds": "/c.creds"}, []),
])
def test_a_files_table_exported_without_its_secrets(table, clean, left):
    from jetlink.core.topology.targets import table_without_secrets

    assert table_without_secrets(table) == (clean, left)
