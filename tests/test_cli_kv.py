"""``jetlink kv ...``: Key-Value buckets, KV mirrors and aggregates through the CLI
(cli/kv.py over jetlink.core.kv), asserting exact human output (natscli's layouts), exact JSON
documents and exit codes.

The engine runs with a manual clock (cli/common.py ``make_clock`` replaced) at
2026-01-01T00:00:00Z and local time UTC, so times in the output are fixed.
"""

from __future__ import annotations

import json
import shutil
import threading
import time

import pytest
from helpers import WAIT_TIMEOUT, data_dir_bytes, doc, ok

from jetlink.core.kv import KV, Watcher
from jetlink.core.store import DataDir

SECOND = 1_000_000_000
T0 = "2026-01-01T00:00:00Z"


@pytest.fixture
def jl(jl, cli_clock, utc):
    """``jl(*args)`` (tests/conftest.py) with a manual clock (``jl.clock``) and local time UTC."""
    jl.clock = cli_clock
    return jl


def table(title, *lines):
    """A table as cli/output.py prints it piped: the title padded to the table's width."""
    return "\n".join([title.ljust(len(lines[0])), *lines]) + "\n"


def cfg_bucket(jl, *flags):
    """Bucket CFG (history 5) holding app.color = blue (rev 1) then green (rev 2, 1s later)."""
    ok(jl("kv", "add", "CFG", "--history", "5", *flags))
    ok(jl("kv", "put", "CFG", "app.color", "blue"))
    jl.clock.advance(SECOND)
    ok(jl("kv", "put", "CFG", "app.color", "green"))


def west_config(jl):
    """Cluster west holding bucket CONFIG (history 3): features.dark = on, flags.beta = yes."""
    ok(jl("cluster", "add", "west"))
    ok(jl("--cluster", "west", "kv", "add", "CONFIG", "--history", "3"))
    ok(jl("--cluster", "west", "kv", "put", "CONFIG", "features.dark", "on"))
    ok(jl("--cluster", "west", "kv", "put", "CONFIG", "flags.beta", "yes"))


# -- add / info / ls / rm --------------------------------------------------------------------------

CFG_INFO = """\
Information for Key-Value Store Bucket CFG created 2026-01-01 00:00:00

Configuration:

            Bucket Name: CFG
           History Kept: 5
          Values Stored: {values}
             Compressed: false
  Per-Key TTL Supported: false
     Backing Store Kind: JetStream
            Description: app config
            Bucket Size: {size}
    Maximum Bucket Size: unlimited
     Maximum Value Size: unlimited
            Maximum Age: 2m0s
       JetStream Stream: KV_CFG
                Storage: File

Metadata:

                   team: ops

Cluster Information:

                   Name:
                 Leader: local
"""


def test_add_shows_natscli_status_and_info_repeats_it(jl):
    result = ok(
        jl(
            "kv", "add", "CFG", "--history", "5", "--ttl", "2m", "--description", "app config",
            "--metadata", "team=ops",
        )
    )
    assert result.stdout == CFG_INFO.format(values=0, size="0 B")
    assert result.stderr == ""
    ok(jl("kv", "put", "CFG", "app.color", "blue"))
    assert ok(jl("kv", "info", "CFG")).stdout == CFG_INFO.format(values=1, size="51 B")


def test_info_json_is_the_kv_status(jl):
    ok(jl("kv", "add", "CFG", "--history", "5", "--ttl", "1h", "--marker-ttl", "5s", "--compress"))
    ok(jl("kv", "put", "CFG", "k", "v"))
    status = doc(jl("kv", "info", "CFG", "--json"))
    info = status.pop("stream_info")
    assert status == {
        "bucket": "CFG",
        "values": 1,
        "history": 5,
        "ttl": 3600 * SECOND,
        "limit_marker_ttl": 5 * SECOND,
        "is_compressed": True,
        "backing_store": "JetStream",
        "bytes": 40,
        "kind": "bucket",
        "read_only": False,
    }
    assert info["config"]["name"] == "KV_CFG"
    assert info["config"]["subjects"] == ["$KV.CFG.>"]
    assert info["config"]["allow_msg_ttl"] is True
    assert info["config"]["compression"] == "s2"
    assert info["created"] == T0
    # the human form shows the limit marker TTL only when there is one
    human = ok(jl("kv", "info", "CFG")).stdout.splitlines()
    assert human[7:11] == [
        "             Compressed: true",
        "  Per-Key TTL Supported: true",
        "       Limit Marker TTL: 5.00s",
        "     Backing Store Kind: JetStream",
    ]
    assert "            Maximum Age: 1h0m0s" in human


def test_add_value_flags_reach_the_stream(jl):
    status = doc(
        jl(
            "kv", "add", "CFG", "--max-value-size", "1KB", "--max-bucket-size", "1MiB",
            "--storage", "memory", "--republish-source", "$KV.CFG.>", "--republish-destination",
            "repub.>", "--republish-headers", "--placement-tags", "ssd", "--tags", "eu",
            "--placement-cluster", "c1", "-j",
        )
    )
    cfg = status["stream_info"]["config"]
    assert (cfg["max_msg_size"], cfg["max_bytes"], cfg["storage"]) == (1024, 1024**2, "memory")
    assert cfg["republish"] == {"src": "$KV.CFG.>", "dest": "repub.>", "headers_only": True}
    assert cfg["placement"] == {"cluster": "c1", "tags": ["ssd", "eu"]}
    lines = ok(jl("kv", "info", "CFG")).stdout.splitlines()
    assert "    Maximum Bucket Size: 1.0 MiB" in lines
    assert "     Maximum Value Size: 1.0 KiB" in lines
    assert "                Storage: Memory" in lines
    assert "   Republishing Headers: $KV.CFG.> to repub.>" in lines


def test_edit_changes_only_the_given_values(jl):
    cfg_bucket(jl, "--description", "app config", "--metadata", "team=ops")
    status = doc(jl("kv", "edit", "CFG", "--history", "10", "--ttl", "1h", "--metadata", "a=b",
                    "-j"))
    cfg = status["stream_info"]["config"]
    assert status["history"] == 10 and status["ttl"] == 3600 * SECOND
    assert cfg["description"] == "app config"
    assert {k: v for k, v in cfg["metadata"].items() if not k.startswith("_nats.")} == {"a": "b"}
    assert doc(jl("kv", "get", "CFG", "app.color", "-j"))["value"] == "Z3JlZW4="  # data kept
    # natscli shows the bucket's status afresh after an edit (STREAM.INFO: its leader too)
    assert status["stream_info"]["cluster"] == {"leader": "local"}
    edited = ok(jl("kv", "edit", "CFG", "--history", "9")).stdout
    assert "Cluster Information:" in edited and edited.split("Cluster Information:")[1] == \
        ok(jl("kv", "info", "CFG")).stdout.split("Cluster Information:")[1]


def test_an_edit_that_removes_values_asks_or_needs_force(jl, monkeypatch):
    """An edit whose limits remove stored values (history, TTL) is refused without a
    terminal unless -f (exit 2, nothing changed), asked on one, as stream edit; one that
    keeps every value is applied as given. A KV mirror's edit too."""
    from helpers import data_dir_bytes

    ok(jl("kv", "add", "H", "--history", "5"))
    for v in ("v1", "v2", "v3"):
        ok(jl("kv", "put", "H", "k", v))
    jl.clock.advance(10 * SECOND)
    before = data_dir_bytes(jl.data)
    for flags, why in ((["--history", "2"], "history 2 < 3 revisions stored for one key"),
                       (["--ttl", "5s"], "ttl 5s: older values stored")):
        res = jl("kv", "edit", "H", *flags)
        assert (res.exit_code, res.stdout) == (2, ""), res.output
        assert res.stderr == ("jetlink: error: no terminal to confirm on: pass -f/--force to "
                              f"edit bucket H (it removes stored values: {why})\n")
    assert data_dir_bytes(jl.data) == before
    assert doc(jl("kv", "edit", "H", "--history", "3", "--ttl", "1h", "-j"))["history"] == 3
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: True)
    declined = jl("kv", "edit", "H", "--history", "1", input="n\n")
    assert declined.exit_code == 1
    assert ("Really edit bucket H: it removes stored values (history 1 < 3 revisions stored "
            "for one key) [y/N]:") in declined.stderr
    assert len(doc(jl("kv", "history", "H", "k", "-j"))) == 3
    assert doc(jl("kv", "edit", "H", "--history", "1", "-f", "-j"))["history"] == 1
    assert len(doc(jl("kv", "history", "H", "k", "-j"))) == 1
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)
    # a KV mirror's own history: the same rule
    ok(jl("kv", "edit", "H", "--history", "5", "-f"))
    for v in ("v4", "v5"):
        ok(jl("kv", "put", "H", "k", v))
    ok(jl("cluster", "add", "east"))
    ok(jl("--cluster", "east", "kv", "add", "M", "--mirror", "H@local", "--history", "5"))
    ok(jl("replicate"))
    assert len(doc(jl("--cluster", "east", "kv", "history", "M", "k", "-j"))) == 3
    res = jl("--cluster", "east", "kv", "edit", "M", "--history", "1")
    assert res.stderr == ("jetlink: error: no terminal to confirm on: pass -f/--force to edit "
                          "bucket M (it removes stored values: history 1 < 3 revisions stored "
                          "for one key)\n")
    assert doc(jl("--cluster", "east", "kv", "edit", "M", "--history", "1", "-f",
                  "-j"))["history"] == 1


def test_a_full_bucket_says_its_size_in_kv_terms(jl):
    ok(jl("kv", "add", "S", "--max-bucket-size", "60"))
    ok(jl("kv", "put", "S", "k", "v" * 10))
    res = jl("kv", "put", "S", "k", "w" * 30)
    assert res.exit_code == 1
    assert res.stderr.startswith("jetlink: error: maximum bytes exceeded (10077): bucket S: "
                                 "--max-bucket-size 60 (discard new): the bucket holds "), res.stderr
    assert "the value needs " in res.stderr


def test_ls_table_names_and_json(jl):
    assert ok(jl("kv", "ls")).stdout == "No Key-Value buckets found\n"
    assert ok(jl("kv", "ls", "--names")).stdout == ""
    assert doc(jl("kv", "ls", "-j")) == []
    cfg_bucket(jl, "--description", "app config")
    ok(jl("kv", "add", "EMPTY"))
    assert ok(jl("kv", "ls")).stdout == table(
        "Key-Value Buckets",
        "╭────────┬─────────────┬─────────────────────┬───────┬────────┬─────────────╮",
        "│ Bucket │ Description │ Created             │ Size  │ Values │ Last Update │",
        "├────────┼─────────────┼─────────────────────┼───────┼────────┼─────────────┤",
        "│ EMPTY  │             │ 2026-01-01 00:00:01 │ 0 B   │ 0      │ never       │",
        "│ CFG    │ app config  │ 2026-01-01 00:00:00 │ 103 B │ 2      │ 0s          │",
        "╰────────┴─────────────┴─────────────────────┴───────┴────────┴─────────────╯",
    )
    assert ok(jl("kv", "ls", "--names")).stdout == "CFG\nEMPTY\n"
    assert doc(jl("kv", "ls", "--names", "-j")) == ["CFG", "EMPTY"]
    assert [(s["bucket"], s["values"]) for s in doc(jl("kv", "ls", "-j"))] == [
        ("CFG", 2),
        ("EMPTY", 0),
    ]
    # natscli's `kv ls BUCKET`: the keys
    assert ok(jl("kv", "ls", "CFG")).stdout == "app.color\n"


def test_rm_destroys_the_bucket(jl):
    cfg_bucket(jl)
    refused = jl("kv", "rm", "CFG")
    assert refused.exit_code == 2
    assert refused.stderr == (
        "jetlink: error: no terminal to confirm on: pass -f/--force to delete bucket CFG\n"
    )
    result = ok(jl("kv", "rm", "CFG", "-f"))
    assert (result.stdout, result.stderr) == ("", "")
    assert ok(jl("kv", "ls", "--names")).stdout == ""
    ok(jl("kv", "add", "CFG"))
    assert doc(jl("kv", "rm", "CFG", "-f", "--json")) == {"success": True}
    missing = jl("kv", "rm", "CFG", "-f", "--json")
    assert missing.exit_code == 1
    assert json.loads(missing.stdout) == {
        "error": {"code": 404, "err_code": 10059, "description": "bucket not found"}
    }


def test_rm_and_del_are_one_verb_as_natscli(jl):
    """natscli's kv del and kv rm (its alias): with KEY a delete marker, without it the
    bucket goes."""
    cfg_bucket(jl)
    assert doc(jl("kv", "rm", "CFG", "app.color", "-f", "-j")) == {
        "bucket": "CFG", "key": "app.color", "revision": 3, "operation": "DEL"}
    refused = jl("kv", "del", "CFG")
    assert (refused.exit_code, refused.stderr) == (
        2, "jetlink: error: no terminal to confirm on: pass -f/--force to delete bucket CFG\n")
    assert ok(jl("kv", "ls", "--names")).stdout == "CFG\n"
    result = ok(jl("kv", "del", "CFG", "-f"))
    assert (result.stdout, result.stderr) == ("", "")
    assert ok(jl("kv", "ls", "--names")).stdout == ""


def test_aliases_resolve_as_natscli_and_are_named_in_help(jl):
    ok(jl("kv", "new", "CFG", "--history", "2"))
    ok(jl("kv", "put", "CFG", "k", "v"))
    assert ok(jl("kv", "list", "--names")).stdout == "CFG\n"
    assert doc(jl("kv", "view", "CFG", "-j"))["bucket"] == "CFG"
    assert ok(jl("str", "list", "--names")).stdout == "KV_CFG\n"
    assert doc(jl("s", "nfo", "KV_CFG", "-j"))["config"]["name"] == "KV_CFG"
    assert ok(jl("ctx", "list")).exit_code == 0
    help_text = ok(jl("kv", "--help")).stdout
    assert "Aliases (natscli's): add: new; info: view; ls: list." in help_text
    assert "Aliases (natscli's): stream: str, st, ms, s; add: create, new;" in ok(
        jl("stream", "--help")).stdout
    assert "  new " not in help_text  # listed as aliases, not as commands
    unknown = jl("kv", "lst")
    assert unknown.exit_code == 2 and "No such command 'lst'" in unknown.stderr


def test_ls_verbose_shows_each_keys_latest_entry(jl):
    cfg_bucket(jl)
    ok(jl("kv", "put", "CFG", "gone", "x"))
    ok(jl("kv", "del", "CFG", "gone", "-f"))
    assert ok(jl("kv", "ls", "CFG", "-v")).stdout == table(
        "Contents for bucket 'CFG'",
        "╭───────────┬─────────────────────┬───────┬──────────╮",
        "│ Key       │ Created             │ Delta │ Revision │",
        "├───────────┼─────────────────────┼───────┼──────────┤",
        "│ app.color │ 2026-01-01 00:00:01 │ 0     │ 2        │",
        "╰───────────┴─────────────────────┴───────┴──────────╯",
    )
    assert ok(jl("kv", "ls", "CFG", "-v", "--display-value")).stdout.splitlines()[4] == (
        "│ app.color │ 2026-01-01 00:00:01 │ 0     │ 2        │ green │")
    # a value that is not printable: base64, as get and history show it
    ok(jl("kv", "add", "BIN"))
    ok(jl("kv", "put", "BIN", "bin", input="\x80\x01 tab\there"))
    shown = ok(jl("kv", "ls", "BIN", "-v", "--display-value")).stdout.splitlines()[4]
    got = ok(jl("kv", "get", "BIN", "bin")).stdout.splitlines()
    assert shown.split("│")[5].strip() in got, (shown, got)
    assert doc(jl("kv", "ls", "CFG", "-v", "-j")) == [{
        "bucket": "CFG", "key": "app.color", "value": "Z3JlZW4=", "revision": 2,
        "created": "2026-01-01T00:00:01Z", "delta": 0, "operation": "PUT"}]
    ok(jl("kv", "add", "EMPTY"))
    empty = ok(jl("kv", "ls", "EMPTY", "-v"))
    assert (empty.stdout, empty.stderr) == ("", "No keys found in bucket\n")


def test_compact_purges_deleted_keys_keeping_young_markers(jl):
    """nats.go's PurgeDeletes: deleted keys lose their history; a marker older than 30
    minutes goes too, a younger one stays."""
    cfg_bucket(jl)  # app.color: revs 1, 2
    ok(jl("kv", "put", "CFG", "old", "1"))  # rev 3
    ok(jl("kv", "del", "CFG", "old", "-f"))  # rev 4, at T0 + 1s
    jl.clock.advance(31 * 60 * SECOND)
    ok(jl("kv", "put", "CFG", "young", "1"))  # rev 5
    ok(jl("kv", "purge", "CFG", "young", "-f"))  # rev 6 (the purge leaves its marker)
    ok(jl("kv", "put", "CFG", "young2", "a"))  # rev 7
    ok(jl("kv", "put", "CFG", "young2", "b"))  # rev 8
    ok(jl("kv", "del", "CFG", "young2", "-f"))  # rev 9
    refused = jl("kv", "compact", "CFG")
    assert (refused.exit_code, refused.stderr) == (2, "jetlink: error: no terminal to confirm "
                                                      "on: pass -f/--force to compact bucket CFG\n")
    before = doc(jl("kv", "info", "CFG", "-j"))["stream_info"]["state"]["messages"]
    assert before == 8  # (the purge of young removed rev 5)
    # old: revs 3 and 4 go; young: its marker stays; young2: revs 7 and 8 go, 9 stays
    assert doc(jl("kv", "compact", "CFG", "-f", "-j")) == {
        "success": True, "keys": 3, "purged": 4}
    state = doc(jl("kv", "info", "CFG", "-j"))["stream_info"]["state"]
    assert state["messages"] == 4  # app.color x2, young's marker, young2's marker
    assert [e["revision"] for e in doc(jl("kv", "history", "CFG", "young2", "-j"))] == [9]
    assert [e["revision"] for e in doc(jl("kv", "history", "CFG", "young", "-j"))] == [6]
    assert jl("kv", "history", "CFG", "old").exit_code == 1  # history and marker gone
    assert ok(jl("kv", "compact", "CFG", "-f")).stdout == ""


def test_watch_from_a_revision_and_without_deletes(jl):
    cfg_bucket(jl)
    ok(jl("kv", "put", "CFG", "other", "x"))
    ok(jl("kv", "del", "CFG", "other", "-f"))
    lines = [json.loads(x) for x in ok(jl("kv", "watch", "CFG", "--revision", "2", "--count",
                                          "3", "-j")).stdout.splitlines()]
    assert [(e.get("revision"), e.get("delta")) for e in lines] == [(2, 2), (3, 1), (4, 0)]
    seen = ok(jl("kv", "watch", "CFG", "--history", "--no-deletes", "--timeout", "100ms", "-j"))
    assert [json.loads(x).get("operation") for x in seen.stdout.splitlines()] == [
        "PUT", "PUT", "PUT", None]
    assert ok(jl("kv", "watch", "CFG", "--history", "--deletes", "--timeout", "100ms",
                 "-j")).stdout.count('"DEL"') == 1


# -- keys: put / get / history / keys / del / purge / create / update / revert ---------------------


def test_put_echoes_the_value_and_get_shows_natscli_layout(jl):
    ok(jl("kv", "add", "CFG", "--history", "5"))
    assert ok(jl("kv", "put", "CFG", "app.color", "blue")).stdout == "blue\n"
    jl.clock.advance(SECOND)
    assert doc(jl("kv", "put", "CFG", "app.color", "green", "-j")) == {
        "bucket": "CFG",
        "key": "app.color",
        "revision": 2,
        "operation": "PUT",
    }
    assert ok(jl("kv", "get", "CFG", "app.color")).stdout == (
        "CFG > app.color revision: 2 created @ 2026-01-01 00:00:01\n\ngreen\n\n"
    )
    assert ok(jl("kv", "get", "CFG", "app.color", "--revision", "1")).stdout == (
        "CFG > app.color revision: 1 created @ 2026-01-01 00:00:00\n\nblue\n\n"
    )
    # revision 0 is the latest, as natscli's (its get asks GetRevision only above 0)
    assert ok(jl("kv", "get", "CFG", "app.color", "--revision", "0")).stdout == (
        "CFG > app.color revision: 2 created @ 2026-01-01 00:00:01\n\ngreen\n\n"
    )
    assert doc(jl("kv", "get", "CFG", "app.color", "--json")) == {
        "bucket": "CFG",
        "key": "app.color",
        "value": "Z3JlZW4=",
        "revision": 2,
        "created": "2026-01-01T00:00:01Z",
        "delta": 0,
        "operation": "PUT",
        "served_by": "KV_CFG",
    }


def test_values_from_stdin_raw_and_not_printable(jl):
    ok(jl("kv", "add", "CFG"))
    result = ok(jl("kv", "put", "CFG", "bin", input=b"\x00\x01\xff"))
    assert result.stdout == "\n"  # natscli prints the VALUE argument: none, for stdin
    assert ok(jl("kv", "put", "CFG", "piped", input="v\n")).stdout == "\n"
    # '' with stdin not a terminal reads stdin too (put, create, update alike)
    assert ok(jl("kv", "put", "CFG", "e1", "", input="from stdin")).stdout == "\n"
    assert ok(jl("kv", "get", "CFG", "e1", "--raw")).stdout == "from stdin"
    assert ok(jl("kv", "create", "CFG", "e2", "", input="made")).stdout == "\n"
    assert ok(jl("kv", "get", "CFG", "e2", "--raw")).stdout == "made"
    assert ok(jl("kv", "put", "CFG", "given", "v")).stdout == "v\n"
    assert ok(jl("kv", "get", "CFG", "bin", "--raw")).stdout_bytes == b"\x00\x01\xff"
    assert ok(jl("kv", "get", "CFG", "bin")).stdout.splitlines()[2] == "AAH/"  # base64
    # natscli's IsPrintable: a rune past ASCII is not printable, so UTF-8 text is base64
    ok(jl("kv", "put", "CFG", "utf", "héllo"))
    assert ok(jl("kv", "get", "CFG", "utf")).stdout.splitlines()[2] == "aMOpbGxv"
    assert "aMOpbGxv" in ok(jl("kv", "history", "CFG", "utf")).stdout
    assert ok(jl("kv", "get", "CFG", "utf", "--raw")).stdout == "héllo"
    ok(jl("kv", "put", "CFG", "ascii", "a b~"))  # printable ASCII, the space too: text
    assert ok(jl("kv", "get", "CFG", "ascii")).stdout.splitlines()[2] == "a b~"
    ok(jl("kv", "put", "CFG", "tab", "a\tb"))  # a control character: base64
    assert ok(jl("kv", "get", "CFG", "tab")).stdout.splitlines()[2] == "YQli"
    ok(jl("kv", "put", "CFG", "long", "x" * 130))
    assert ok(jl("kv", "get", "CFG", "long")).stdout.splitlines()[2:5] == [
        "Showing first 120 bytes of 130, use --raw for full data",
        "",
        "x" * 120,
    ]


def test_history_table_and_json(jl):
    cfg_bucket(jl)
    ok(jl("kv", "put", "CFG", "app.color", "a-value-that-is-much-longer-than-forty-chars"))
    ok(jl("kv", "del", "CFG", "app.color", "-f"))
    assert ok(jl("kv", "history", "CFG", "app.color")).stdout == table(
        "History for CFG > app.color",
        "╭───────────┬──────────┬────────┬─────────────────────┬────────┬───────────────────────────────────╮",
        "│ Key       │ Revision │ Op     │ Created             │ Length │ Value                             │",
        "├───────────┼──────────┼────────┼─────────────────────┼────────┼───────────────────────────────────┤",
        "│ app.color │ 1        │ PUT    │ 2026-01-01 00:00:00 │ 4      │ blue                              │",
        "│ app.color │ 2        │ PUT    │ 2026-01-01 00:00:01 │ 5      │ green                             │",
        "│ app.color │ 3        │ PUT    │ 2026-01-01 00:00:01 │ 44     │ a-value-that-is...han-forty-chars │",
        "│ app.color │ 4        │ DELETE │ 2026-01-01 00:00:01 │ 0      │                                   │",
        "╰───────────┴──────────┴────────┴─────────────────────┴────────┴───────────────────────────────────╯",
    )
    entries = doc(jl("kv", "history", "CFG", "app.color", "--json"))
    assert [(e["revision"], e["delta"], e["operation"]) for e in entries] == [
        (1, 3, "PUT"),
        (2, 2, "PUT"),
        (3, 1, "PUT"),
        (4, 0, "DEL"),
    ]
    assert entries[0] == {
        "bucket": "CFG",
        "key": "app.color",
        "value": "Ymx1ZQ==",
        "revision": 1,
        "created": T0,
        "delta": 3,
        "operation": "PUT",
    }


def test_history_of_a_key_filter_is_every_matching_keys_in_revision_order(jl):
    """nats.go's History is a watch with history, whose key filter takes wildcards: the
    revisions of every key it matches, in revision order, each delta the entries after it;
    a filter matching nothing is "key not found", a bad one names its rule."""
    cfg_bucket(jl)
    ok(jl("kv", "put", "CFG", "app.size", "xl"))
    ok(jl("kv", "put", "CFG", "other", "x"))
    entries = doc(jl("kv", "history", "CFG", "app.*", "-j"))
    assert [(e["key"], e["revision"], e["delta"]) for e in entries] == [
        ("app.color", 1, 2), ("app.color", 2, 1), ("app.size", 3, 0)]
    assert [e["key"] for e in doc(jl("kv", "history", "CFG", ">", "-j"))] == [
        "app.color", "app.color", "app.size", "other"]
    assert ok(jl("kv", "history", "CFG", "app.*")).stdout.splitlines()[0].strip() == (
        "History for CFG > app.*")
    r = jl("kv", "history", "CFG", "none.*")
    assert (r.exit_code, r.stderr) == (
        1, "jetlink: error: key not found (10037): key none.* in bucket CFG\n")
    # a "*" inside a token is literal text, as nats.go's searchKeyValid takes it: said
    r = jl("kv", "history", "CFG", "app.**")
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: notice: key filter 'app.**' matches no key: \"*\" and \">\" are wildcards "
        "only as a whole token (a.*, a.>); in ** they are literal text, which no valid key "
        "holds\njetlink: error: key not found (10037): key app.** in bucket CFG\n"))
    r = jl("kv", "history", "CFG", "app.>.x")
    assert (r.exit_code, r.stderr) == (1, (
        'jetlink: error: nats: invalid key "app.>.x": key filters may contain only letters, '
        'digits, "-", "/", "_", "=", ".", "*" and a final ">"\n'))
    assert ok(jl("kv", "keys", "CFG", "app*", "app.*")).stdout == "app.color\napp.size\n"


def test_keys_lists_live_keys(jl):
    ok(jl("kv", "add", "CFG"))
    empty = ok(jl("kv", "keys", "CFG"))
    assert (empty.stdout, empty.stderr) == ("", "No keys found in bucket\n")
    assert doc(jl("kv", "keys", "CFG", "-j")) == []
    for key in ("b.x", "a.y", "a.z", "gone"):
        ok(jl("kv", "put", "CFG", key, "1"))
    ok(jl("kv", "purge", "CFG", "gone", "-f"))
    assert ok(jl("kv", "keys", "CFG")).stdout == "a.y\na.z\nb.x\n"
    assert doc(jl("kv", "keys", "CFG", "a.*", "b.>", "--json")) == ["a.y", "a.z", "b.x"]
    assert doc(jl("kv", "keys", "CFG", "a.z", "-j")) == ["a.z"]


def test_del_and_purge_write_markers(jl):
    cfg_bucket(jl)
    result = ok(jl("kv", "del", "CFG", "app.color", "-f"))
    assert (result.stdout, result.stderr) == ("", "")
    assert [e["operation"] for e in doc(jl("kv", "history", "CFG", "app.color", "-j"))] == [
        "PUT",
        "PUT",
        "DEL",
    ]
    assert doc(jl("kv", "purge", "CFG", "app.color", "-f", "-j")) == {
        "bucket": "CFG",
        "key": "app.color",
        "revision": 4,
        "operation": "PURGE",
    }
    history = doc(jl("kv", "history", "CFG", "app.color", "-j"))
    assert [(e["revision"], e["operation"]) for e in history] == [(4, "PURGE")]


def test_create_update_revert(jl):
    ok(jl("kv", "add", "CFG", "--history", "5", "--marker-ttl", "1s"))
    assert ok(jl("kv", "create", "CFG", "k", "one")).stdout == "one\n"
    ok(jl("kv", "del", "CFG", "k", "-f"))
    # a deleted key can be created again
    assert doc(jl("kv", "create", "CFG", "k", "two", "--ttl", "1h", "-j"))["revision"] == 3
    assert doc(jl("kv", "update", "CFG", "k", "three", "3", "-j")) == {
        "bucket": "CFG",
        "key": "k",
        "revision": 4,
        "operation": "PUT",
    }
    assert ok(jl("kv", "update", "CFG", "k", "", "4", input="from stdin")).stdout == "\n"
    assert doc(jl("kv", "get", "CFG", "k", "-j"))["value"] == "ZnJvbSBzdGRpbg=="
    refused = jl("kv", "revert", "CFG", "k", "1")
    assert refused.exit_code == 2
    assert "pass -f/--force to revert key k of bucket CFG to revision 1" in refused.stderr
    assert ok(jl("kv", "revert", "CFG", "k", "1", "-f")).stdout == table(
        "History for CFG > k",
        "╭─────┬──────────┬────────┬─────────────────────┬────────┬────────────╮",
        "│ Key │ Revision │ Op     │ Created             │ Length │ Value      │",
        "├─────┼──────────┼────────┼─────────────────────┼────────┼────────────┤",
        "│ k   │ 2        │ DELETE │ 2026-01-01 00:00:00 │ 0      │            │",
        "│ k   │ 3        │ PUT    │ 2026-01-01 00:00:00 │ 3      │ two        │",
        "│ k   │ 4        │ PUT    │ 2026-01-01 00:00:00 │ 5      │ three      │",
        "│ k   │ 5        │ PUT    │ 2026-01-01 00:00:00 │ 10     │ from stdin │",
        "│ k   │ 6        │ PUT    │ 2026-01-01 00:00:00 │ 3      │ one        │",
        "╰─────┴──────────┴────────┴─────────────────────┴────────┴────────────╯",
    )
    assert doc(jl("kv", "get", "CFG", "k", "-j"))["value"] == "b25l"
    assert doc(jl("kv", "revert", "CFG", "k", "3", "-f", "-j")) == {
        "bucket": "CFG",
        "key": "k",
        "revision": 7,
        "operation": "PUT",
    }


# -- errors --------------------------------------------------------------------------------------

ERRORS = [
    (
        ("kv", "rm", "bad.name", "-f"),
        1,
        'jetlink: error: nats: invalid bucket name "bad.name": bucket names may contain only '
        'letters, digits, "_" and "-"',
    ),
    (("kv", "rm", "", "-f"), 1, 'jetlink: error: nats: invalid bucket name "": a bucket name is required'),
    (
        ("kv", "add", "bad.name"),
        1,
        'jetlink: error: nats: invalid bucket name "bad.name": bucket names may contain only '
        'letters, digits, "_" and "-"',
    ),
    (
        ("kv", "put", "CFG", ".bad", "x"),
        1,
        'jetlink: error: nats: invalid key ".bad": a key can not start or end with "."',
    ),
    (
        ("kv", "get", "CFG", "a b"),
        1,
        'jetlink: error: nats: invalid key "a b": keys may contain only letters, digits and '
        '"-", "/", "_", "=", "."',
    ),
    (("kv", "add", "H", "--history", "0"), 2, "Invalid value for '--history': 0 is not in the range 1<=x<=64."),
    (("kv", "add", "H", "--history", "65"), 2, "Invalid value for '--history': 65 is not in the range 1<=x<=64."),
    (("kv", "add", "H", "--ttl", "soon"), 2, "invalid value for --ttl: 'soon': expected a number and a unit"),
    (("kv", "add", "H", "--ttl", "5"), 2, "invalid value for --ttl: '5': missing unit, e.g. 5s"),
    (("kv", "add", "H", "--storage", "disk"), 2, "jetlink: error: invalid value for --storage: 'disk' (one of file, f, memory, m)"),
    (("kv", "add", "H", "--marker-ttl", "500ms"), 1, "jetlink: error: subject delete marker TTL must be at least 1 second (10052)"),
    (("kv", "update", "CFG", "app.color", "x", "1"), 1, "jetlink: error: wrong last sequence: 2 (10071): key app.color in bucket CFG\n"),
    (("kv", "create", "CFG", "app.color", "x"), 1, "jetlink: error: key exists (10071): key app.color in bucket CFG\n"),
    (("kv", "get", "CFG", "gone"), 1, "jetlink: error: key not found (10037)"),
    (("kv", "get", "CFG", "app.color", "--revision", "9"), 1, "jetlink: error: key not found (10037)"),
    (("kv", "get", "CFG", "app.color", "--revision", "18446744073709551616"), 2, "Invalid value for '--revision': 18446744073709551616 is not in the range 0<=x<=18446744073709551615."),
    (("kv", "revert", "CFG", "app.color", "99999999999999999999999", "-f"), 2, "Invalid value for 'REVISION': 99999999999999999999999 is not in the range 1<=x<=18446744073709551615."),
    (("kv", "update", "CFG", "app.color", "x", "18446744073709551616"), 2, "Invalid value for 'REVISION': 18446744073709551616 is not in the range 0<=x<=18446744073709551615."),
    (("kv", "history", "CFG", "never"), 1, "jetlink: error: key not found (10037): key never in bucket CFG\n"),
    (("kv", "revert", "CFG", "app.color", "99", "-f"), 1, "jetlink: error: key not found (10037): key app.color at revision 99 in bucket CFG\n"),
    (("kv", "get", "NOPE", "k"), 1, "jetlink: error: bucket not found (10059): NOPE"),
    (("kv", "get", "CFGG", "k"), 1, "jetlink: error: bucket not found (10059): CFGG; did you mean CFG?"),
    (("kv", "info", "CGF"), 1, "jetlink: error: bucket not found (10059): CGF; did you mean CFG?"),
    (("kv", "rm", "CFG"), 2, "jetlink: error: no terminal to confirm on: pass -f/--force to delete bucket CFG"),
    (("kv", "del", "CFG", "app.color"), 2, "jetlink: error: no terminal to confirm on: pass -f/--force to delete key app.color of bucket CFG"),
    (("kv", "purge", "CFG", "app.color"), 2, "jetlink: error: no terminal to confirm on: pass -f/--force to purge key app.color of bucket CFG"),
    (("kv", "purge", "CFG", "app.color", "--ttl", "1m", "-f"), 1, "jetlink: error: per-message TTL is disabled (10166)"),
    (("kv", "add", "M", "--mirror", "CFG", "--source", "CFG"), 2, "jetlink: error: --mirror and --source cannot be combined: a KV mirror has one origin"),
    (("kv", "add", "M", "--mirror-domain", "west"), 2, "jetlink: error: --mirror-domain goes with --mirror"),
    (("kv", "add", "M", "--keys", "a.>"), 2, "jetlink: error: --keys goes with --mirror (an aggregate takes --source ORIGIN:KEYS)"),
    (("kv", "add", "M", "--writable"), 2, "jetlink: error: --writable goes with --source (an aggregate)"),
    (("kv", "add", "M", "--mirror", "CFG", "--marker-ttl", "5s"), 2, "jetlink: error: --marker-ttl does not apply to a KV mirror (it holds what ORIGIN holds)"),
    (("kv", "add", "M", "--mirror", "CFG@"), 2, "jetlink: error: invalid value for --mirror: 'CFG@': expected BUCKET or BUCKET@CLUSTER"),
    (("kv", "add", "M", "--mirror", "CFG@east", "--mirror-domain", "west"), 2, "jetlink: error: --mirror-domain conflicts with the cluster given by --mirror"),
    (("kv", "add", "M", "--mirror", "CFG", "--mirror-domain", "east"), 1, "jetlink: error: cluster east not found"),
    (("kv", "add", "M", "--mirror", "CFG", "--mirror-domain", "lcal"), 1, "jetlink: error: cluster lcal not found: did you mean local?"),
    (("kv", "add", "M", "--mirror", "NOPE"), 1, 'jetlink: error: origin bucket NOPE not found in cluster local (10059)'),
    (("kv", "add", "M", "--mirror", "CFG", "--keys", "a..b"), 1, 'jetlink: error: nats: invalid key "a..b": a key can not contain an empty token ("..")'),
    (("kv", "add", "A", "--source", "CFG:"), 2, "jetlink: error: invalid value for --source: 'CFG:': expected ORIGIN, ORIGIN:KEYS, ORIGIN@CLUSTER or ORIGIN:KEYS@CLUSTER (KEYS: comma-separated key filters)"),
    (("kv", "add", "A", "--source", "CFG@no/where"), 2, "jetlink: error: invalid value for --source: invalid cluster name 'no/where'"),
    (("kv", "add", "H", "--republish-source", "x.>"), 2, "jetlink: error: --republish-source and --republish-headers go with --republish-destination"),
    (("kv", "edit", "CFG", "--source", "CFG"), 1, "jetlink: error: bucket CFG is not an aggregate: only an aggregate takes more origins"),
    # a bucket there with other settings: the server's 10058, saying which differ
    (("kv", "add", "CFG", "--source", "CFG@local"), 1, 'jetlink: error: stream name already in use with a different configuration (10058): bucket CFG: history 1 given, 5 stored; sources [{"name":"KV_CFG","subject_transforms":[{"src":"$KV.CFG.>","dest":"$KV.CFG.>"}],"external":{"api":"$JS.local.API","deliver":""}}] given, [] stored (kv edit changes a bucket\'s settings)'),
    (("kv", "add", "CFG", "--description", "d"), 1, 'jetlink: error: stream name already in use with a different configuration (10058): bucket CFG: description "d" given, "" stored; history 1 given, 5 stored (kv edit changes a bucket\'s settings)'),
    (("kv", "watch", "CFG", "--history", "--updates-only"), 2, "jetlink: error: --history and --updates-only contradict each other: a watcher can not both include history and send only updates"),
    (("kv", "watch", "CFG", "a..b"), 1, 'jetlink: error: nats: invalid key "a..b": a key can not contain an empty token ("..")'),
]


@pytest.fixture(scope="module")
def errors_data(tmp_path_factory):
    """A data directory holding bucket CFG as :func:`cfg_bucket` leaves it, plus a deleted
    key ``gone`` (built once through the core API, copied into each test)."""
    from jetlink.core.clock import ManualClock
    from jetlink.core.config.kv import KeyValueConfig

    path = tmp_path_factory.mktemp("kv-errors") / "data"
    store = DataDir(path)
    try:
        kv = KV(store, "local", ManualClock())
        kv.create_bucket(KeyValueConfig(bucket="CFG", history=5))
        bucket = kv.open("CFG")
        bucket.put("app.color", b"blue")
        bucket.put("app.color", b"green")
        bucket.delete("gone")
    finally:
        store.close()
    return path


@pytest.mark.parametrize(("args", "code", "message"), ERRORS,
                         ids=[" ".join(e[0][1:]) for e in ERRORS])
def test_errors(jl, errors_data, args, code, message):
    shutil.copytree(errors_data, jl.data, dirs_exist_ok=True)
    result = jl(*args)
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert message in result.stderr
    if code == 1:
        assert result.stderr.startswith(message)


def test_errors_as_json(jl):
    cfg_bucket(jl)
    result = jl("kv", "update", "CFG", "app.color", "x", "1", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {  # the server's answer to the write: a PubAck
        "error": {"code": 400, "err_code": 10071, "description": "wrong last sequence: 2"},
        "stream": "KV_CFG", "seq": 0,
    }
    ok(jl("kv", "del", "CFG", "app.color", "-f"))
    result = jl("kv", "get", "CFG", "app.color", "-j")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "error": {"code": 404, "err_code": 10037, "description": "key not found"}
    }


# -- KV mirrors and aggregates ---------------------------------------------------------------------


def test_kv_mirror_across_clusters_serves_gets(jl):
    west_config(jl)
    status = doc(jl("kv", "add", "CONFIG_EAST", "--mirror", "CONFIG", "--mirror-domain", "west",
                    "-j"))
    assert (status["kind"], status["read_only"], status["history"]) == ("mirror", True, 1)
    assert status["stream_info"]["config"]["mirror"] == {
        "name": "KV_CONFIG",
        "external": {"api": "$JS.west.API", "deliver": ""},
    }
    # the origin bucket addressed from the mirror's cluster: gets are served by the mirror
    got = doc(jl("kv", "get", "CONFIG", "features.dark", "--json"))
    assert got == {
        "bucket": "CONFIG",
        "key": "features.dark",
        "value": "b24=",
        "revision": 1,
        "created": T0,
        "delta": 0,
        "operation": "PUT",
        "served_by": "KV_CONFIG_EAST",
    }
    assert doc(jl("--cluster", "west", "kv", "get", "CONFIG", "features.dark", "-j"))[
        "served_by"
    ] == "KV_CONFIG"
    # writes through the origin's name go to the origin; the step brings them to the mirror
    assert ok(jl("kv", "put", "CONFIG", "features.dark", "off")).stdout == "off\n"
    assert doc(jl("kv", "get", "CONFIG", "features.dark", "-j"))["value"] == "b2Zm"
    assert doc(jl("kv", "get", "CONFIG_EAST", "features.dark", "-j"))["revision"] == 3
    # the mirror itself is read-only
    result = jl("kv", "put", "CONFIG_EAST", "features.dark", "x")
    assert result.exit_code == 1
    assert result.stderr == (
        "jetlink: error: KV CONFIG_EAST is a read-only mirror of bucket CONFIG of cluster west: "
        "write to the bucket CONFIG of cluster west instead (jetlink --cluster west kv put "
        "CONFIG ...)\n"
    )
    for args in (("del", "-f"), ("purge", "-f")):
        assert jl("kv", args[0], "CONFIG_EAST", "features.dark", args[1]).exit_code == 1
    assert doc(jl("kv", "edit", "CONFIG_EAST", "--history", "5", "-j"))["history"] == 5
    # compression is the mirror's own storage (natscli's kv add/edit --compress with a mirror)
    assert doc(jl("kv", "edit", "CONFIG_EAST", "--compress", "-j"))["is_compressed"] is True
    assert doc(jl("kv", "edit", "CONFIG_EAST", "--no-compress", "-j"))["is_compressed"] is False
    before = data_dir_bytes(jl.data)
    edit = jl("kv", "edit", "CONFIG_EAST", "--republish-destination", "x.>")
    assert edit.exit_code == 1
    assert "is a KV mirror: only its description, history, TTL, sizes, compression and " \
        "metadata can be edited, not republish" in edit.stderr
    assert data_dir_bytes(jl.data) == before  # (refused: nothing changed)
    assert ok(jl("kv", "ls", "--names")).stdout == "CONFIG_EAST\n"
    info = ok(jl("kv", "info", "CONFIG_EAST")).stdout
    assert (
        "Mirror Information:\n\n"
        "          Origin Bucket: CONFIG\n"
        "           External API: $JS.west.API\n"
        "              Last Seen: never\n"
        "                    Lag: 0\n"
    ) in info
    assert ok(jl("kv", "rm", "CONFIG_EAST", "-f")).stdout == ""
    assert doc(jl("kv", "ls", "--names", "-j")) == []


def test_kv_mirror_with_key_filter(jl):
    west_config(jl)
    ok(jl("kv", "add", "FEAT", "--mirror", "CONFIG@west", "--keys", "features.>"))
    assert doc(jl("kv", "keys", "FEAT", "-j")) == ["features.dark"]
    # inside the filter the mirror answers, outside it the origin does
    assert doc(jl("kv", "get", "CONFIG", "features.dark", "-j"))["served_by"] == "KV_FEAT"
    assert doc(jl("kv", "get", "CONFIG", "flags.beta", "-j"))["served_by"] == "KV_CONFIG"


def test_a_kv_mirror_may_be_compressed_and_exports_so(jl, tmp_path):
    """natscli's kv add --mirror ... --compress: S2 is the mirror's own storage, kept by
    export and apply (the mirror stream's compression, as nats.go's CreateKeyValue sends)."""
    west_config(jl)
    made = doc(jl("kv", "add", "FEAT", "--mirror", "CONFIG@west", "--compress", "-j"))
    assert made["is_compressed"] is True
    assert made["stream_info"]["config"]["compression"] == "s2"
    assert doc(jl("kv", "keys", "FEAT", "-j")) == ["features.dark", "flags.beta"]
    exported = ok(jl("export", "-o", str(tmp_path / "t.toml"))).stdout
    text = (tmp_path / "t.toml").read_text()
    assert '[kv_mirrors.FEAT]\norigin_bucket = "CONFIG"\ndomain = "west"\n' \
        'compression = true\n' in text, (exported, text)
    ok(jl("kv", "rm", "FEAT", "-f"))
    ok(jl("apply", str(tmp_path / "t.toml")))
    assert doc(jl("kv", "info", "FEAT", "-j"))["is_compressed"] is True


def test_a_removed_bucket_is_not_found_though_a_mirror_of_it_remains(jl):
    """A bucket removed with a KV mirror of it left in the same cluster: every verb says
    bucket not found (nats.go's KeyValue()), never a value the mirror still holds served in
    the removed bucket's name; the mirror answers in its own."""
    ok(jl("kv", "add", "ORIG"))
    ok(jl("kv", "put", "ORIG", "a", "1"))
    ok(jl("kv", "add", "M", "--mirror", "ORIG"))
    assert doc(jl("kv", "get", "ORIG", "a", "-j"))["served_by"] in ("KV_ORIG", "KV_M")
    ok(jl("kv", "rm", "ORIG", "-f"))
    for verb in (("get", "ORIG", "a"), ("info", "ORIG"), ("history", "ORIG", "a")):
        r = jl("kv", *verb)
        assert (r.exit_code, r.stderr) == (1, "jetlink: error: bucket not found (10059): "
                                              "ORIG\n"), (verb, r.output)
    assert ok(jl("kv", "get", "M", "a", "--raw")).stdout == "1"


def test_an_aggregate_origin_that_is_not_there_is_warned_as_stream_add_warns(jl):
    """The server accepts an aggregate of an origin not there (it waits for it): the
    bucket is made, exit 0, one warning per missing origin on stderr (stdout is the
    document); an origin added by edit is judged the same way."""
    ok(jl("kv", "add", "CFG"))
    made = jl("kv", "add", "AGG", "--source", "NOPE", "--source", "CFG", "-j")
    assert made.exit_code == 0 and json.loads(made.stdout)["bucket"] == "AGG"

    def missing(bucket: str, where: str = "local", note: str = "") -> str:
        return (f'jetlink: warning: stream not found: aggregate origin bucket "{bucket}" '
                f'(stream KV_{bucket}) does not exist in cluster "{where}"{note}: the server '
                "accepts this, the stream waits for its origin\n")

    assert made.stderr == missing("NOPE")
    edited = jl("kv", "edit", "AGG", "--source", "CGF@wset")
    assert edited.exit_code == 0, edited.output
    assert edited.stderr == missing("NOPE") + missing(
        "CGF", "wset", ' (cluster "wset" is not in the data directory)')
    quiet = jl("kv", "add", "AGG2", "--source", "CFG")
    assert (quiet.exit_code, quiet.stderr) == (0, "")


def test_an_aggregate_of_a_kv_mirror_maps_the_mirrored_buckets_keys(jl, tmp_path):
    """ADR-8: an aggregate's origin may be a mirror. A KV mirror MY of B1 stores
    $KV.B1.<key>: the aggregate sources KV_MY with B1's keys mapped (not $KV.MY.>, which
    matches nothing), and the topology export declares that stream and bucket (applied
    again: no change)."""
    ok(jl("kv", "add", "B1", "--history", "3"))
    ok(jl("kv", "put", "B1", "a.b", "val"))
    ok(jl("kv", "add", "MY", "--mirror", "B1"))
    ok(jl("replicate"))
    ok(jl("kv", "add", "AGM", "--source", "MY"))
    ok(jl("replicate"))
    assert ok(jl("kv", "keys", "AGM")).stdout == "a.b\n"
    assert ok(jl("kv", "get", "AGM", "a.b", "--raw")).stdout == "val"
    src = doc(jl("stream", "info", "KV_AGM", "-j"))["config"]["sources"]
    assert [(s["name"], s["subject_transforms"]) for s in src] == [
        ("KV_MY", [{"src": "$KV.B1.>", "dest": "$KV.AGM.>"}])]
    out = tmp_path / "t.toml"
    out.write_text(ok(jl("export")).stdout)
    assert '{ stream = "KV_MY", bucket = "B1" }' in out.read_text()
    assert ok(jl("apply", str(out), "--dry-run")).stdout.startswith("No changes")


def test_an_origin_named_by_its_stream_is_the_bucket(jl):
    """nats.go's prepareKeyValueConfig: --source KV_CFG and --mirror KV_CFG name the bucket
    CFG (its stream), never a bucket KV_CFG."""
    ok(jl("kv", "add", "CFG"))
    agg = doc(jl("kv", "add", "AGG", "--source", "KV_CFG", "-j"))["stream_info"]["config"]
    assert agg["sources"] == [{"name": "KV_CFG", "subject_transforms": [
        {"src": "$KV.CFG.>", "dest": "$KV.AGG.>"}]}]
    ok(jl("cluster", "add", "east"))
    mirror = doc(jl("--cluster", "east", "kv", "add", "CFG", "--mirror", "KV_CFG@local", "-j"))
    assert mirror["stream_info"]["config"]["mirror"]["name"] == "KV_CFG"


def test_a_kv_mirror_of_a_kv_mirror_is_refused(jl):
    """MY mirrors B1, so its stream stores $KV.B1.<key>: a mirror of MY would hold keys no
    read finds (reads look under $KV.MY.): refused, naming the bucket to mirror, nothing
    made."""
    ok(jl("kv", "add", "B1"))
    ok(jl("kv", "add", "MY", "--mirror", "B1"))
    res = jl("kv", "add", "MM", "--mirror", "MY")
    assert (res.exit_code, res.stdout, res.stderr) == (1, "", (
        "jetlink: error: origin bucket MY is itself a KV mirror (of bucket B1: its keys are "
        "stored as $KV.B1.<key>): mirror bucket B1 instead (kv add MM --mirror B1 ...)\n"))
    assert "KV_MM" not in ok(jl("stream", "ls", "--names")).stdout.split()


def test_aggregate_with_key_filter(jl):
    west_config(jl)
    ok(jl("kv", "add", "LOCAL"))
    ok(jl("kv", "put", "LOCAL", "flags.alpha", "1"))
    status = doc(jl("kv", "add", "FEATURES", "--source", "CONFIG:features.>@west", "-j"))
    assert (status["kind"], status["read_only"]) == ("aggregate", True)
    assert status["stream_info"]["config"]["sources"] == [
        {
            "name": "KV_CONFIG",
            "subject_transforms": [{"src": "$KV.CONFIG.features.>",
                                    "dest": "$KV.FEATURES.features.>"}],
            "external": {"api": "$JS.west.API", "deliver": ""},
        }
    ]
    # a filter selects keys, it never renames them
    assert ok(jl("kv", "keys", "FEATURES")).stdout == "features.dark\n"
    result = jl("kv", "put", "FEATURES", "x", "1")
    assert result.exit_code == 1
    assert result.stderr == (
        "jetlink: error: KV FEATURES is a read-only aggregate: writes are refused (an "
        "aggregate created with --writable accepts them)\n"
    )
    # edit --source adds an origin (here: a bucket of the same cluster)
    status = doc(jl("kv", "edit", "FEATURES", "--source", "LOCAL:flags.*", "-j"))
    assert [s["name"] for s in status["stream_info"]["config"]["sources"]] == [
        "KV_CONFIG",
        "KV_LOCAL",
    ]
    assert doc(jl("kv", "keys", "FEATURES", "-j")) == ["features.dark", "flags.alpha"]
    info = ok(jl("kv", "info", "FEATURES")).stdout
    assert "Sources Information:\n\n          Source Bucket: CONFIG\n" in info
    assert "          Source Bucket: LOCAL\n" in info


def test_writable_aggregate_takes_writes(jl):
    west_config(jl)
    ok(jl("kv", "add", "ALL", "--source", "CONFIG@west", "--source", "CONFIG:flags.*@west",
          "--writable"))
    assert doc(jl("kv", "put", "ALL", "mine", "1", "-j"))["operation"] == "PUT"
    assert doc(jl("kv", "keys", "ALL", "-j")) == ["features.dark", "flags.beta", "mine"]


# -- watch -----------------------------------------------------------------------------------------


def test_watch_initial_data_marker_and_timeout(jl):
    cfg_bucket(jl)
    ok(jl("kv", "put", "CFG", "other", "x"))
    ok(jl("kv", "del", "CFG", "other", "-f"))
    result = ok(jl("kv", "watch", "CFG", "--timeout", "100ms"))
    assert result.stdout == (
        "[2026-01-01 00:00:01] PUT CFG > app.color: green\n"
        "[2026-01-01 00:00:01] DELETE CFG > other\n"
    )
    assert result.stderr == "End of initial data\n"
    lines = ok(jl("kv", "watch", "CFG", "--timeout", "100ms", "--json")).stdout.splitlines()
    assert [json.loads(line) for line in lines] == [
        {
            "bucket": "CFG",
            "key": "app.color",
            "value": "Z3JlZW4=",
            "revision": 2,
            "created": "2026-01-01T00:00:01Z",
            "delta": 1,
            "operation": "PUT",
        },
        {
            "bucket": "CFG",
            "key": "other",
            "value": "",
            "revision": 4,
            "created": "2026-01-01T00:00:01Z",
            "delta": 0,
            "operation": "DEL",
        },
        {"end_of_initial_data": True},
    ]
    assert lines[-1] == '{"end_of_initial_data":true}'
    # filters and options
    result = ok(jl("kv", "watch", "CFG", "app.*", "--history", "--meta-only", "--timeout", "50ms"))
    assert result.stdout == (
        "[2026-01-01 00:00:00] PUT CFG > app.color\n[2026-01-01 00:00:01] PUT CFG > app.color\n"
    )
    result = ok(jl("kv", "watch", "CFG", "--no-deletes", "--timeout", "50ms"))
    assert result.stdout == "[2026-01-01 00:00:01] PUT CFG > app.color: green\n"
    result = ok(jl("kv", "watch", "CFG", "--updates-only", "--timeout", "50ms", "-j"))
    assert result.stdout == '{"end_of_initial_data":true}\n'
    # --count stops after N entries (before the marker here)
    result = ok(jl("kv", "watch", "CFG", "--count", "1", "-j"))
    assert [json.loads(line)["key"] for line in result.stdout.splitlines()] == ["app.color"]


def test_watch_of_an_empty_bucket_signals_the_marker(jl):
    ok(jl("kv", "add", "EMPTY"))
    result = ok(jl("kv", "watch", "EMPTY", "--timeout", "50ms"))
    assert (result.stdout, result.stderr) == ("", "End of initial data\n")
    result = ok(jl("kv", "watch", "EMPTY", "--timeout", "50ms", "-j"))
    assert result.stdout == '{"end_of_initial_data":true}\n'


def test_watch_shows_updates_as_they_are_stored(jl, monkeypatch):
    cfg_bucket(jl)
    watching = threading.Event()
    real_init = Watcher.__init__

    def init(self, *args, **kw):
        real_init(self, *args, **kw)
        watching.set()  # the initial data is decided: what is stored now is an update

    monkeypatch.setattr(Watcher, "__init__", init)

    def writer() -> None:
        assert watching.wait(WAIT_TIMEOUT)
        time.sleep(0.05)
        store = DataDir(jl.data)
        try:
            KV(store, "local", jl.clock).open("CFG").put("app.color", b"red")
        finally:
            store.close()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        result = ok(jl("kv", "watch", "CFG", "--count", "2", "--timeout", "120s", "-j"))
    finally:
        thread.join()
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {
            "bucket": "CFG",
            "key": "app.color",
            "value": "Z3JlZW4=",
            "revision": 2,
            "created": "2026-01-01T00:00:01Z",
            "delta": 0,
            "operation": "PUT",
        },
        {"end_of_initial_data": True},
        {
            "bucket": "CFG",
            "key": "app.color",
            "value": "cmVk",
            "revision": 3,
            "created": "2026-01-01T00:00:01Z",
            "delta": 0,
            "operation": "PUT",
        },
    ]


def test_watch_ctrl_c_exits_130(jl, monkeypatch):
    ok(jl("kv", "add", "CFG"))

    def interrupted(self, timeout=1.0):
        raise KeyboardInterrupt

    monkeypatch.setattr("jetlink.core.kv.Watcher.next", interrupted)
    assert jl("kv", "watch", "CFG").exit_code == 130


def test_kv_failover_names_the_bucket_not_its_stream(jl):
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(jl("--cluster", "west", "kv", "add", "CONFIG"))
    ok(jl("--cluster", "west", "kv", "put", "CONFIG", "a", "1"))
    ok(jl("--cluster", "east", "kv", "add", "KV_CONFIG", "--mirror", "CONFIG@west"))
    ok(jl("replicate"))
    dry = ok(jl("--cluster", "east", "kv", "failover", "CONFIG", "--dry-run"))
    assert dry.stdout.splitlines()[0] == (
        "KV bucket CONFIG would be promoted (failover) (dry run): it would stop mirroring "
        "KV_CONFIG@west")
    done = ok(jl("--cluster", "east", "kv", "failover", "CONFIG", "-f"))
    assert done.stdout.splitlines()[0] == (
        "KV bucket CONFIG was promoted (failover): it no longer mirrors KV_CONFIG@west")


def test_a_write_to_a_mirror_of_a_bucket_elsewhere_names_where_the_bucket_is(jl):
    """A KV mirror named as its origin, in another cluster: the refusal says which CONFIG
    takes the write (the origin's cluster), not just the name both share."""
    ok(jl("kv", "add", "CONFIG"))
    ok(jl("cluster", "add", "west"))
    ok(jl("--cluster", "west", "kv", "add", "CONFIG", "--mirror", "CONFIG",
          "--mirror-domain", "local"))
    res = jl("--cluster", "west", "kv", "put", "CONFIG", "k", "v")
    assert (res.exit_code, res.stderr) == (1, (
        "jetlink: error: KV CONFIG is a read-only mirror of bucket CONFIG of cluster local: "
        "write to the bucket CONFIG of cluster local instead (jetlink --cluster local kv put "
        "CONFIG ...)\n"))


def test_a_key_not_found_is_named(jl):
    """The server's "key not found (10037)", and for people which key (and revision) of
    which bucket; the JSON document stays the server's."""
    ok(jl("kv", "add", "CONFIG"))
    ok(jl("kv", "put", "CONFIG", "features.dark", "on"))
    res = jl("kv", "get", "CONFIG", "features.drk")
    assert (res.exit_code, res.stderr) == (
        1, "jetlink: error: key not found (10037): key features.drk in bucket CONFIG\n")
    res = jl("kv", "get", "CONFIG", "features.dark", "--revision", "9")
    assert res.stderr == ("jetlink: error: key not found (10037): key features.dark at "
                          "revision 9 in bucket CONFIG\n")
    res = jl("kv", "get", "CONFIG", "features.drk", "-j")
    assert json.loads(res.stdout) == {"error": {"code": 404, "err_code": 10037,
                                                "description": "key not found"}}


def test_status_is_info_under_natscli_name(jl):
    """natscli's primary name is `kv status` (`info` its alias): both print the same."""
    ok(jl("kv", "add", "CONFIG"))
    ok(jl("kv", "put", "CONFIG", "k", "v"))
    for extra in ([], ["-j"]):
        assert jl("kv", "status", "CONFIG", *extra).stdout == \
            jl("kv", "info", "CONFIG", *extra).stdout
    assert json.loads(jl("kv", "status", "CONFIG", "-j").stdout)["values"] == 1
    res = jl("kv", "status", "NOPE")
    assert res.exit_code == 1 and "bucket not found" in res.stderr


def test_per_key_ttl_refusals_say_what_to_do(jl):
    """The server's 10166 / 10165, for people: which bucket, and how to allow it."""
    assert jl("kv", "add", "CFG").exit_code == 0
    assert jl("kv", "add", "TTLB", "--marker-ttl", "5s").exit_code == 0
    r = jl("kv", "create", "CFG", "t1", "x", "--ttl", "5s")
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: per-message TTL is disabled (10166): bucket CFG takes no per-key "
        "TTL: jetlink kv edit CFG --marker-ttl DURATION allows it\n"))
    r = jl("kv", "purge", "CFG", "k", "--ttl", "5s", "-f")
    assert r.stderr.startswith("jetlink: error: per-message TTL is disabled (10166): bucket CFG")
    r = jl("kv", "create", "TTLB", "t2", "x", "--ttl", "500ms")
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: invalid per-message TTL (10165): a per-key TTL is at least 1s\n"))
    r = jl("kv", "create", "TTLB", "t2", "x", "--ttl", "500ms", "-j")
    assert json.loads(r.stdout)["error"]["description"] == "invalid per-message TTL"


def test_bucket_refusals_are_said_in_kv_terms(jl):
    """The server refuses a bucket's stream; the error names kv's option and the value
    given (--max-value-size, --marker-ttl), not the stream field it became."""
    assert jl("kv", "add", "SMALL", "--max-value-size", "10").exit_code == 0
    r = jl("kv", "put", "SMALL", "k", "a" * 24)
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: message size exceeds maximum allowed (10054): bucket SMALL: "
        "--max-value-size 10: the message is 24 bytes\n"))
    r = jl("kv", "add", "BAD3", "--marker-ttl", "100ms")
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: subject delete marker TTL must be at least 1 second (10052): "
        "--marker-ttl 100ms\n"))
    assert jl("kv", "add", "TTLB", "--marker-ttl", "5s").exit_code == 0
    r = jl("kv", "edit", "TTLB", "--marker-ttl", "0s")
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: message TTL status can not be disabled (10052): --marker-ttl 0s would "
        "turn off bucket TTLB's per-key TTLs, which the server keeps once on\n"))
    r = jl("kv", "put", "SMALL", "k", "a" * 24, "-j")
    assert json.loads(r.stdout)["error"]["description"] == "message size exceeds maximum allowed"


def test_an_empty_key_filter_is_the_whole_bucket(jl):
    """ADR-8: the whole bucket is watched "using an empty key or a key with wildcard >";
    kv keys takes it alike."""
    cfg_bucket(jl)
    ok(jl("kv", "put", "CFG", "a.b", "1"))
    ok(jl("kv", "put", "CFG", "c", "2"))
    assert ok(jl("kv", "keys", "CFG", "")).stdout == ok(jl("kv", "keys", "CFG")).stdout
    every = ok(jl("kv", "watch", "CFG", "", "--timeout", "0.2s", "-j")).stdout.splitlines()
    keys = [json.loads(line).get("key") for line in every]
    assert {"a.b", "c"} <= set(keys) and keys[-1] is None  # then the end of initial data


def test_update_with_revision_0_needs_a_key_without_entries(jl):
    """nats.go's Update(key, value, 0): expected last subject sequence 0, the key has no
    entry at all."""
    cfg_bucket(jl)
    assert doc(jl("kv", "update", "CFG", "new", "v", "0", "-j"))["revision"] >= 1
    res = jl("kv", "update", "CFG", "new", "w", "0")
    assert res.exit_code == 1 and "wrong last sequence" in res.stderr and "(10071)" in \
        res.stderr


def test_contradictory_delete_flags_of_watch_are_refused(jl):
    cfg_bucket(jl)
    res = jl("kv", "watch", "CFG", "--deletes", "--ignore-deletes", "--timeout", "0.2s")
    assert (res.exit_code, res.stdout, res.stderr) == (
        2, "", "jetlink: error: --deletes and --ignore-deletes contradict each other: give "
        "one\n")


def test_a_bucket_removed_as_seen_through_its_mirror_is_a_bucket_not_found(jl):
    """From another cluster the bucket is read through its KV mirror; its origin removed,
    `kv info` says the bucket is not found (10059), as every other verb does, not the
    origin's stream."""
    assert jl("kv", "add", "ORG").exit_code == 0
    assert jl("cluster", "add", "west").exit_code == 0
    assert jl("--cluster", "west", "kv", "add", "OM", "--mirror", "ORG@local").exit_code == 0
    assert jl("kv", "rm", "ORG", "-f").exit_code == 0
    r = jl("--cluster", "west", "kv", "info", "ORG")
    assert (r.exit_code, r.stderr) == (1, "jetlink: error: bucket not found (10059): ORG\n")


def test_promoting_a_filtered_mirror_warns_of_what_it_never_held(jl):
    """A KV mirror made with --keys (a stream mirror with a filter) holds part of its
    origin: promoting it says the promoted bucket holds none of the other keys, and that
    failing back refuses it (dry run and run alike)."""
    assert jl("kv", "add", "CFG", "--history", "5").exit_code == 0
    assert jl("kv", "put", "CFG", "a.b", "1").exit_code == 0
    assert jl("kv", "put", "CFG", "long", "2").exit_code == 0
    assert jl("cluster", "add", "west").exit_code == 0
    assert jl("--cluster", "west", "kv", "add", "CFG", "--mirror", "CFG@local", "--keys",
              "a.>").exit_code == 0
    assert jl("replicate").exit_code == 0
    before = data_dir_bytes(jl.data)
    r = jl("--cluster", "west", "kv", "promote", "CFG", "--dry-run")
    assert r.exit_code == 0, r.output
    assert data_dir_bytes(jl.data) == before
    assert r.stderr == ("jetlink: warning: KV mirror CFG copied only the keys a.> of bucket "
                        "CFG: the promoted bucket would hold none of its other keys (and "
                        "failing back refuses a filtered mirror)\n")
    r = jl("--cluster", "west", "kv", "promote", "CFG", "-f")
    assert r.exit_code == 0, r.output
    assert "the promoted bucket holds none of its other keys" in r.stderr
    r = jl("--cluster", "west", "stream", "add", "OM", "--mirror",
           '{"name":"KV_CFG","filter_subject":"$KV.CFG.long","external":'
           '{"api":"$JS.local.API"}}', "--defaults")
    assert r.exit_code == 0, r.output
    r = jl("--cluster", "west", "stream", "promote", "OM", "--subjects", "om", "--dry-run")
    assert "mirror OM copied only $KV.CFG.long of KV_CFG: the promoted stream would hold " \
        "none of its other messages" in r.stderr, r.output


def test_a_bucket_size_below_what_it_holds_removes_nothing_and_says_it_is_full(jl):
    """A bucket discards new values: a maximum size at or below its bytes removes nothing
    (no question asked), and the edit says a put is refused until it has room (but one
    replacing a key's oldest revision at its history limit, as nats-server allows)."""
    assert jl("kv", "add", "FULL").exit_code == 0
    assert jl("kv", "put", "FULL", "a", "123456").exit_code == 0
    r = jl("kv", "edit", "FULL", "--max-bucket-size", "10")
    assert r.exit_code == 0, r.output
    assert r.stderr == ("jetlink: warning: bucket FULL holds 46 bytes, its maximum size 10: "
                        "a put is refused (maximum bytes exceeded, 10077) until values are "
                        "deleted or it grows, unless it replaces the oldest revision of a key "
                        "at its history limit with no more bytes than the bucket's oldest "
                        "value\n")
    assert jl("kv", "get", "FULL", "a", "--raw").stdout == "123456"
    r = jl("kv", "put", "FULL", "b", "x")
    assert r.exit_code == 1 and "(10077)" in r.stderr
    # the exception the warning names: a (history 1) replaced by a value no larger
    ok(jl("kv", "put", "FULL", "a", "654321"))
    assert jl("kv", "get", "FULL", "a", "--raw").stdout == "654321"


def test_kv_edit_has_no_storage_option_as_natscli(jl):
    """A bucket's storage is set when it is made (the server refuses to change it, 10052):
    natscli's kv edit has no --storage, nor has jetlink's (it took one, then failed)."""
    ok(jl("kv", "add", "B"))
    res = jl("kv", "edit", "B", "--storage", "memory")
    assert (res.exit_code, res.stdout) == (2, "")
    assert "No such option: --storage" in res.stderr


def test_a_clustered_bucket_s_status_lists_its_replicas_as_natscli(capsys):
    """natscli's kv status (renderNatsGoClusterInfo): after Name and Leader, one Replica
    row per peer, as stream info writes it."""
    from jetlink.cli.kv import render_status

    render_status(None, {"bucket": "C", "history": 1, "values": 0, "stream_info": {
        "config": {"name": "KV_C"}, "created": T0,
        "cluster": {"name": "C", "leader": "n1", "replicas": [
            {"name": "n2", "current": True, "active": 1_000_000},
            {"name": "n3", "current": False, "offline": True, "active": 0, "lag": 2}]}}})
    out = capsys.readouterr().out
    assert out.split("Cluster Information:")[1].splitlines()[2:] == [
        "                   Name: C",
        "                 Leader: n1",
        "                Replica: n2, current, seen 1ms ago",
        "                Replica: n3, outdated, OFFLINE, not seen, 2 operations behind",
    ]


def test_a_reserved_key_another_client_wrote_is_read_but_never_written(jl):
    """A key starting with _kv (ADR-8: reserved for internal use) written by another client
    (nats.go refuses none) is listed, read and shown in history; a value written under
    such a key is refused, nothing written; a delete or purge cleans it up."""
    ok(jl("kv", "add", "B"))
    ok(jl("pub", "$KV.B._kvx", "hello", "-J"))
    assert ok(jl("kv", "keys", "B")).stdout == "_kvx\n"
    got = doc(jl("kv", "get", "B", "_kvx", "-j"))
    assert (got["key"], got["revision"]) == ("_kvx", 1)
    assert [e["key"] for e in doc(jl("kv", "history", "B", "_kvx", "-j"))] == ["_kvx"]
    before = data_dir_bytes(jl.data)
    for args in (["put", "B", "_kvx", "x"], ["create", "B", "_kvy", "x"],
                 ["update", "B", "_kvx", "x", "1"]):
        r = jl("kv", *args)
        assert (r.exit_code, r.stderr[:38]) == (1, 'jetlink: error: nats: invalid key "_kv'), args
        assert "are reserved for internal use" in r.stderr
    assert data_dir_bytes(jl.data) == before
    # ... but it can be cleaned up: a delete or purge marker is no value written under it
    ok(jl("kv", "del", "B", "_kvx", "-f"))
    assert ok(jl("kv", "keys", "B")).stdout == ""
    ok(jl("kv", "purge", "B", "_kvx", "-f"))
    assert [e["operation"] for e in doc(jl("kv", "history", "B", "_kvx", "-j"))] == ["PURGE"]


def test_a_kv_named_stream_that_is_no_bucket_is_not_listed_and_said_why(jl):
    """nats.go lists and opens no KV_ stream that is no bucket (its subjects not the
    bucket's, no value kept per key: ErrBadBucket); jetlink neither, and says why."""
    ok(jl("stream", "add", "KV_BADB", "--subjects", "foo", "--defaults"))
    ok(jl("stream", "add", "KV_FOO", "--subjects", "FOO.*", "--defaults"))
    ok(jl("kv", "add", "GOOD"))
    assert ok(jl("kv", "ls", "--names")).stdout == "GOOD\n"
    assert [b["bucket"] for b in doc(jl("kv", "ls", "-j"))] == ["GOOD"]
    r = jl("kv", "get", "BADB", "x")
    assert (r.exit_code, r.stderr) == (1, (
        "jetlink: error: nats: bucket not valid key-value store: stream KV_BADB (subjects foo, "
        "max_msgs_per_subject -1) is no bucket: a bucket's stream holds $KV.BADB.> and keeps "
        "1 or more values per key\n"))


def test_a_filtered_kv_mirror_answering_direct_gets_is_warned_of(jl):
    """A KV mirror with --keys gets mirror_direct from an origin allowing direct gets: the
    server then has it answer its origin's direct gets for every key, so a client gets
    "key not found" for keys outside its filter: kv add says so; without --keys, nothing."""
    ok(jl("kv", "add", "ORIG2", "--history", "5"))
    r = ok(jl("kv", "add", "ORIG2M", "--mirror", "ORIG2", "--keys", "a.>", "--history", "5"))
    assert ('jetlink: warning: KV mirror ORIG2M holds only the keys a.> but answers direct '
            "gets of bucket ORIG2 (mirror_direct, as its origin allows direct gets): clients "
            "reading other keys of it with direct get (nats.go, nats-py) get \"key not found\" "
            "when this mirror answers first\n") in r.stderr
    r = ok(jl("kv", "add", "ORIG2W", "--mirror", "ORIG2", "--history", "5"))
    assert "answers direct gets" not in r.stderr


def test_an_error_ending_a_json_watch_is_one_more_line(jl, monkeypatch):
    """A follow command's --json is JSON lines: an error that ends it (the bucket deleted
    under the watch) is one more compact line, never a multi-line document a line reader
    chokes on."""
    cfg_bucket(jl)
    watching = threading.Event()
    real_init = Watcher.__init__

    def init(self, *args, **kw):
        real_init(self, *args, **kw)
        watching.set()

    monkeypatch.setattr(Watcher, "__init__", init)

    def remover() -> None:
        assert watching.wait(WAIT_TIMEOUT)
        time.sleep(0.05)
        store = DataDir(jl.data)
        try:
            KV(store, "local", jl.clock).delete_bucket("CFG")
        finally:
            store.close()

    thread = threading.Thread(target=remover)
    thread.start()
    try:
        result = jl("kv", "watch", "CFG", "--count", "5", "--timeout", "120s", "-j")
    finally:
        thread.join()
    assert result.exit_code != 0, result.stdout
    lines = result.stdout.splitlines()
    docs = [json.loads(line) for line in lines]  # every line one document
    assert docs[:2] == [{**docs[0], "key": "app.color"}, {"end_of_initial_data": True}]
    assert "error" in docs[-1], docs
