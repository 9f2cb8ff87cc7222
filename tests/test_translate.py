"""natscli's --translate CMD (cli/translate.py): the template's two functions, the command
line split as a shell would, each body printed as the command writes it; a failure printed
in its place, natscli's way; a bad template refused before anything is read."""

from __future__ import annotations

import json
import sys

import pytest
from helpers import ok

from jetlink.cli.translate import command_line, run

UPPER = "tr a-z A-Z"


@pytest.mark.parametrize(("template", "parts"), [
    ("base64 -d", ["base64", "-d"]),
    ("echo {{ Subject }} {{Stream}}", ["echo", "orders.new", "ORDERS"]),
    ("echo '{{ Subject }} x'", ["echo", "orders.new x"]),
    ("jq -r '.id'", ["jq", "-r", ".id"]),
    ('sh -c "echo {{- Subject -}}"', ["sh", "-c", "echo orders.new"]),
])
def test_the_command_line_of_a_message(template, parts):
    assert command_line(template, "orders.new", "ORDERS") == parts


@pytest.mark.parametrize(("template", "why"), [
    ("{{ Foo }}", 'template: translate:1: function "Foo" not defined'),
    ("{{ Count 1 }}", 'template: translate:1: function "Count" not defined'),
    ("a 'b", "the filter command line could not be parsed: No closing quotation"),
    ("  ", "the filter command line is empty"),
])
def test_a_template_that_cannot_make_a_command_line(template, why):
    with pytest.raises(ValueError) as err:
        command_line(template, "s", "S")
    assert str(err.value) == why


def test_run_gives_the_output_and_why_it_failed():
    assert run(b"abc", UPPER, "s", "S") == (b"ABC", None)
    py = f"{sys.executable} -c 'import sys; print(\"out\"); sys.exit(3)'"
    assert run(b"", py, "s", "S") == (b"out\n", "exit status 3")
    assert run(b"", "no-such-program-here", "s", "S") == (
        b"", 'exec: "no-such-program-here": executable file not found in $PATH')


@pytest.fixture
def orders(jl, cli_clock, utc):
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.*", "--defaults"))
    ok(jl("pub", "orders.new", "hello"))
    ok(jl("pub", "orders.new", ""))
    return jl


def test_stream_get_and_view_print_the_translated_bodies(orders):
    jl = orders
    got = ok(jl("stream", "get", "ORDERS", "1", "--translate", UPPER)).stdout
    assert got.endswith("\n\nHELLO\n\n"), got
    viewed = ok(jl("stream", "view", "ORDERS", "--translate", UPPER)).stdout
    # an empty body goes through the command too (natscli: "nil body" only without one)
    assert viewed.split("\n")[2:5] == ["HELLO", "", "[2] Subject: orders.new Received: "
                                       "2026-01-01 00:00:00"], viewed
    assert "nil body" not in viewed
    raw = ok(jl("stream", "view", "ORDERS", "--raw", "--translate",
                "echo {{ Stream }}/{{ Subject }}")).stdout
    assert raw == "ORDERS/orders.new\nORDERS/orders.new\n"
    # --json keeps the bodies as stored
    docs = json.loads(ok(jl("stream", "view", "ORDERS", "-j", "--translate", UPPER)).stdout)
    assert docs[0]["data"] == "aGVsbG8="


def test_a_translation_that_fails_is_said_in_place_of_the_body(orders):
    jl = orders
    py = f"{sys.executable} -c 'import sys; print(\"bad\"); sys.exit(3)'"
    r = ok(jl("stream", "get", "ORDERS", "1", "--translate", py))
    assert r.stdout.endswith('"bad\\n"\nError while translating msg body: exit status 3\n\n')
    r = ok(jl("stream", "view", "ORDERS", "--translate", "no-such-program-here"))
    assert r.stdout.count('""\nError while translating msg body: exec: '
                          '"no-such-program-here": executable file not found in $PATH\n') == 2


@pytest.mark.parametrize("verb", [["stream", "view", "ORDERS"], ["stream", "get", "ORDERS", "1"],
                                  ["sub", "orders.*", "--count", "1"]])
def test_a_bad_template_is_refused_before_anything_is_read(orders, verb):
    r = orders(*verb, "--translate", "{{ Foo }}")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr.startswith("jetlink: error: invalid value for --translate: '{{ Foo }}': "
                               'template: translate:1: function "Foo" not defined'), r.stderr


def test_sub_translates_with_the_subject_and_no_stream(capsys):
    from jetlink.cli.sub import render_message

    msg = {"subject": "orders.new", "data": "aGVsbG8=", "headers": {}}
    render_message(None, 1, msg, translate="echo [{{ Subject }}] [{{ Stream }}]")
    render_message(None, 2, msg, raw=True, translate="echo [{{ Subject }}]")
    assert capsys.readouterr().out == ('[#1] Received on "orders.new"\n[orders.new] []\n\n'
                                       "[]\n")
