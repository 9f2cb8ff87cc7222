"""The test tables of the NATS Go clients (nats.go, natscli, jsm.go, orbit.go), transcribed
and run against jetlink's counterparts: KV bucket, key and filter validity, stream and
consumer names, subjects, ack metadata, header encoding, natscli contexts, natscli's
command-line helpers, orbit.go's counter parsing and jsm.go's monitoring checks and their
renderings.

Each table names the Go test it comes from. A case jetlink answers differently on purpose
is left out, the reason beside it; a case another test file already holds verbatim is not
repeated. The checks run on in-memory StreamInfo / ConsumerInfo documents (as the Go tests
build their structs), the KV check on the embedded engine.
"""

from __future__ import annotations

import json

import pytest

from jetlink.cli.consumer import ack_title
from jetlink.cli.kv_get import printable
from jetlink.cli.output import cluster_cell, compact_names, since
from jetlink.cli.pub import expand, parse_headers
from jetlink.cli.stream_flags import parse_size, split_subjects
from jetlink.core.config.kv import (
    KeyValueConfig,
    validate_bucket_name,
    validate_key,
    validate_key_filter,
    validate_search_key,
)
from jetlink.core.config.stream import StreamConfig
from jetlink.core.config.validate import is_valid_asset_name
from jetlink.core.counters import CounterEntry, entry
from jetlink.core.errors import ApiError, JetlinkError, UsageError
from jetlink.core.headers import encode_headers
from jetlink.core.kv import KV
from jetlink.core.live.client import parsed_headers
from jetlink.core.live.consumers import LiveConsumerInfo, ack_metadata
from jetlink.core.live.settings import (
    _expand_home,
    check_subject_setting,
    read_nats_context,
    selected_nats_context,
    validate_nats_context_name,
)
from jetlink.core.live.stream_info import LiveStreamInfo
from jetlink.core.monitor import (
    EXIT_CODES,
    ConsumerThresholds,
    PerfDataItem,
    Result,
    Status,
    StreamThresholds,
    check_consumer,
    check_kv,
    check_stream,
)
from jetlink.core.monitor.render import (
    _commaf3,
    nagios,
    perf_item,
    prometheus,
    render_json,
    text,
)
from jetlink.core.monitor.result import invalid_name
from jetlink.core.monitor.stream import _cluster, _messages, _mirror, _sources, _subjects
from jetlink.core.monitor.thresholds import ThresholdError
from jetlink.core.numbers import IntTextError, parse_int
from jetlink.core.subjects import is_valid_publish_subject, is_valid_subject

SECOND = 1_000_000_000
MS = SECOND // 1000
HOUR = 3600 * SECOND
EMSP = "\u2003"  # the EMSP unicode space natscli's util tests write inside their strings


# == nats.go ======================================================================================

# nats.go jetstream/jetstream_test.go TestKV_keyValid, TestKV_searchKeyValid, TestKV_bucketValid
# (key, valid as a key, valid as a key filter, valid as a bucket name); the three tables list
# the same strings but for "Foo123-bar_baz" (bucket only) and "Foo.123=bar_baz-abc" (keys only)
KV_NAMES = [
    ("foo123", True, True, True),
    ("foo.bar", True, True, False),
    ("Foo.123=bar_baz-abc", True, True, None),
    ("Foo123-bar_baz", None, None, True),
    ("foo.*.bar", False, True, False),
    ("foo.>", False, True, False),
    (">", False, True, False),
    ("*", False, True, False),
    ("foo!", False, False, False),
    ("foo bar", False, False, False),
    ("", False, False, False),
    (" ", False, False, False),
    (".", False, False, False),
    (".foo", False, False, False),
    ("foo.", False, False, False),
]


def _kv_valid(fn, name):
    try:
        assert fn(name) == name
    except ApiError:
        return False
    return True


@pytest.mark.parametrize(("name", "key", "search", "bucket"), KV_NAMES)
def test_nats_go_kv_key_filter_and_bucket_validity(name, key, search, bucket):
    for fn, want in ((validate_key, key), (validate_key_filter, search),
                     (validate_search_key, search), (validate_bucket_name, bucket)):
        if want is not None:
            assert _kv_valid(fn, name) is want, fn.__name__


# nats.go's searchKeyValid (validSearchKeyRe ``^[-/_=\.a-zA-Z0-9*]*[>]?$`` and the dots rule)
# on what its own table leaves out: a "*" or ">" inside a token, a ">" not last. A read's
# filter follows it (validate_search_key); a mirror's or aggregate's keys stay whole-token
# wildcards only (validate_key_filter: jetlink's rule for the filters it builds).
SEARCH_KEYS = [
    ("a*b", True, False), ("a*", True, False), ("*a.b", True, False), ("a>", True, False),
    ("a.b>", True, False), ("a.*.>", True, True), ("a.>.b", False, False),
    ("a.>b", False, False), (">>", False, False), ("a..*", False, False), ("**", True, False),
]


@pytest.mark.parametrize(("name", "search", "mirror_keys"), SEARCH_KEYS)
def test_nats_go_search_key_validity(name, search, mirror_keys):
    assert _kv_valid(validate_search_key, name) is search
    assert _kv_valid(validate_key_filter, name) is mirror_keys


# nats.go jetstream/jetstream_test.go TestValidateStreamName and TestValidateConsumerName
ASSET_NAMES = [
    (kind, name.format(kind=kind), valid)
    for kind in ("stream", "consumer")
    for name, valid in [
        ("test", True), ("test-{kind}_1", True), ("", False), ("{kind}.name", False),
        ("{kind} name", False), ("{kind}>", False), ("{kind}*", False), ("{kind}/name", False),
        ("{kind}\\name", False), ("{kind}\tname", False), ("{kind}\rname", False),
        ("{kind}\nname", False),
    ]
]


@pytest.mark.parametrize(("kind", "name", "valid"), ASSET_NAMES)
def test_nats_go_stream_and_consumer_names(kind, name, valid):
    assert is_valid_asset_name(name) is valid


# nats.go jetstream/jetstream_test.go TestValidateSubject (a subject or a pattern)
JS_SUBJECTS = [
    ("test.A", True), ("test.*", True), ("*", True), ("*.*", True), ("test.*.A", True),
    ("test.>", True), (">", True), (">.", False), ("test.>.A", False), ("", False),
    ("test A", False),
]


@pytest.mark.parametrize(("subject", "valid"), JS_SUBJECTS)
def test_nats_go_jetstream_subjects(subject, valid):
    assert is_valid_subject(subject) is valid


# nats.go nats_test.go TestValidateSubject (the subject a client publishes to)
# left out: "valid with wildcards" ("foo.*.bar.>"): jetlink refuses to publish to a wildcard
PUBLISH_SUBJECTS = [
    ("valid short", "foo", True),
    ("valid with dots", "foo.bar.baz", True),
    ("valid long", "metrics.production.server01.cpu.usage.percent", True),
    ("empty string", "", False),
    ("contains space", "foo bar", False),
    ("contains tab", "foo\tbar", False),
    ("contains CR", "foo\rbar", False),
    ("contains LF", "foo\nbar", False),
    ("space at start", " foo", False),
    ("space at end", "foo ", False),
    ("tab at start", "\tfoo", False),
    ("newline at end", "foo\n", False),
    ("valid with hyphen", "foo-bar-baz", True),
    ("valid with underscore", "foo_bar_baz", True),
]


@pytest.mark.parametrize(("case", "subject", "valid"), PUBLISH_SUBJECTS)
def test_nats_go_publish_subjects(case, subject, valid):
    assert is_valid_publish_subject(subject) is valid


# nats.go jetstream/jetstream_test.go TestMessageMetadata
ACK_REPLIES = [
    ("valid metadata", "$JS.ACK.domain.hash-123.stream.cons.5.10.20.123456789.1.token",
     {"domain": "domain", "stream": "stream", "consumer": "cons", "num_delivered": 5,
      "seq": 10, "consumer_seq": 20, "ts": 123456789, "num_pending": 1}),
    ("no reply subject", "", None),
    ("not a JetStream message", "ABC", None),
]


@pytest.mark.parametrize(("case", "reply", "metadata"), ACK_REPLIES)
def test_nats_go_message_metadata(case, reply, metadata):
    if metadata is None:
        with pytest.raises(JetlinkError) as err:
            ack_metadata(reply)
        assert err.value.description == f"not a JetStream message (reply subject {reply!r})"
    else:
        assert ack_metadata(reply) == metadata


# nats.go nats_test.go TestHeaderParser, its checkStatus cases (status line, then CRLF CRLF)
# left out: its shouldErr cases (a block without its closing CRLF): jetlink decodes leniently,
# as nats-py does
HEADER_STATUS = [
    ("NATS/1.0 503", {"Status": "503"}),
    ("NATS/1.0 503 No Responders", {"Status": "503", "Description": "No Responders"}),
    ("NATS/1.0  404   No Messages", {"Status": "404", "Description": "No Messages"}),
]


@pytest.mark.parametrize(("line", "headers"), HEADER_STATUS)
def test_nats_go_header_status_line(line, headers):
    assert parsed_headers((line + "\r\n\r\n").encode()) == headers


def test_nats_go_header_multi_line():
    """nats.go nats_test.go TestHeaderMultiLine: a value per line (the names as Go's
    http.Header.Set/Add canonicalize them; jetlink writes the names as given, in order)."""
    block = encode_headers({
        "CorrelationID": ["123"], "Msg-ID": ["456"], "X-NATS-Keys": ["A", "B", "C"],
        "X-Test-Keys": ["D", "E", "F"], "Accept-Encoding": ["json"],
        "Authorization": ["s3cr3t"], "X-Test": ["First", "Second", "Third"]})
    assert block == (
        b"NATS/1.0\r\n"
        b"CorrelationID: 123\r\nMsg-ID: 456\r\n"
        b"X-NATS-Keys: A\r\nX-NATS-Keys: B\r\nX-NATS-Keys: C\r\n"
        b"X-Test-Keys: D\r\nX-Test-Keys: E\r\nX-Test-Keys: F\r\n"
        b"Accept-Encoding: json\r\nAuthorization: s3cr3t\r\n"
        b"X-Test: First\r\nX-Test: Second\r\nX-Test: Third\r\n"
        b"\r\n")


def test_nats_go_header_valid_keys():
    """nats.go nats_test.go TestHeaderValidKeys: every token character."""
    key = "!#$%&'*+-.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ^_`abcdefghijklmnopqrstuvwxyz|~"
    assert encode_headers({key: "value"}) == f"NATS/1.0\r\n{key}: value\r\n\r\n".encode()


# nats.go nats_test.go TestHeaderInvalidKeys
# left out: "", "\r", "\n" and "\t": blank once trimmed, such a name is dropped, as nats-py does
HEADER_BAD_KEYS = [(":", "':'"), ("\x00", "'\\x00'"), ("\u2192", "'\u2192'"),
                   ("\u200b", "'\\u200b'")]


@pytest.mark.parametrize(("key", "shown"), HEADER_BAD_KEYS)
def test_nats_go_header_invalid_keys(key, shown):
    with pytest.raises(ApiError) as err:
        encode_headers({key: "value"})
    assert err.value.description == f"nats: invalid header: {shown}"


# nats.go nats_test.go TestHeaderValidValues (each value encodes; the block as written)
PRINTABLE = ("!\"#$%&'()*+,-./0123456789;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmno"
             "pqrstuvwxyz{|}~")
INVISIBLE = ("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15"
             "\x16\x17\x18\x19\x1a\x1b\x1c\x1c\x1d\x1e\x1f")
HEADER_VALUES = [
    (PRINTABLE, PRINTABLE),
    # its ends trimmed as nats-py trims a value (str.strip: \x1c-\x1f are blanks to Python)
    (INVISIBLE, INVISIBLE[:-5]),
    ("\u2192", "\u2192"),
    ("\u200b", "\u200b"),
]


@pytest.mark.parametrize(("value", "written"), HEADER_VALUES)
def test_nats_go_header_valid_values(value, written):
    assert encode_headers({"key": value}) == f"NATS/1.0\r\nkey: {written}\r\n\r\n".encode()


def test_nats_go_header_newline_value():
    """nats.go nats_test.go TestHeaderNewlineValue: CR and LF become spaces."""
    assert encode_headers({"X-Test": "line1\nline2\rline3"}) == (
        b"NATS/1.0\r\nX-Test: line1 line2 line3\r\n\r\n")


# == jsm.go: names, ack metadata, API prefixes ===================================================

# jsm.go jsm_test.go TestIsValidNameNullByte and test/jsm_test.go TestIsValidName (the names
# jsm.go's loaders refuse before asking, as the checks do)
JSM_NAMES = [
    ("valid", None),
    ("\x00", '"\\x00" is not a valid stream name'),
    ("a\x00b", '"a\\x00b" is not a valid stream name'),
    ("\x00abc", '"\\x00abc" is not a valid stream name'),
    ("abc\x00", '"abc\\x00" is not a valid stream name'),
    ("x.x", '"x.x" is not a valid stream name'),
    ("x>x", '"x>x" is not a valid stream name'),
    ("x*x", '"x*x" is not a valid stream name'),
    ("x\x00x", '"x\\x00x" is not a valid stream name'),
]


@pytest.mark.parametrize(("name", "reason"), JSM_NAMES)
def test_jsm_go_is_valid_name(name, reason):
    assert invalid_name(name, "stream") == reason


def test_jsm_go_is_valid_name_empty():
    """jsm.go test/jsm_test.go TestIsValidName: "" is no name (the check says so before
    asking)."""
    r = check_stream(lambda: pytest.fail("asked"), "", {})
    assert (r.criticals, r.warnings, r.oks) == (["stream name is required"], [], [])


# jsm.go test/msginfo_test.go TestParseJSMsgMetadata_New and
# TestParseJSMsgMetadataReply_PendingValid: (reply, pending, domain; None: refused)
# left out: TestParseJSMsgMetadataReply_PendingSentinel (pending "not-a-number" read as
# MaxUint64): jetlink refuses an ack subject whose pending does not parse
JSM_ACK_REPLIES = [
    ("$JS.ACK.ORDERS.NEW.1.2.3.1587466354254920000.10", 10, ""),
    ("$JS.ACK.DOMAIN.ORDERS.NEW.1.2.3.1587466354254920000.10", None, None),
    ("$JS.ACK.DOMAIN.ACCOUNT.ORDERS.NEW.1.2.3.1587466354254920000.10", 10, "DOMAIN"),
    ("$JS.ACK._.ACCOUNT.ORDERS.NEW.1.2.3.1587466354254920000.10", 10, ""),
    ("$JS.ACK.DOMAIN.ACCOUNT.ORDERS.NEW.1.2.3.1587466354254920000.10.future.future", 10,
     "DOMAIN"),
    ("$JS.ACK.ORDERS.NEW.1.2.3.1587466354254920000.42", 42, ""),
]


@pytest.mark.parametrize(("reply", "pending", "domain"), JSM_ACK_REPLIES)
def test_jsm_go_parse_ack_metadata(reply, pending, domain):
    if pending is None:
        with pytest.raises(JetlinkError) as err:
            ack_metadata(reply)
        assert err.value.description == f"not a JetStream message (reply subject {reply!r})"
        return
    assert ack_metadata(reply) == {
        "domain": domain, "stream": "ORDERS", "consumer": "NEW", "num_delivered": 1,
        "seq": 2, "consumer_seq": 3, "ts": 1587466354254920000, "num_pending": pending}


# jsm.go jsm_test.go TestIsValidSubjectPrefix, TestManagerNewInvalidDomain and
# TestManagerNewValidDotPrefix: (setting, value, valid)
# left out: "bad>prefix", "bad*prefix", "a.bad>b" (a '>' or '*' inside a token) and "a." as
# an API prefix: jetlink's API prefix rule is the literal subject's, a trailing '.' allowed
API_PREFIXES = [
    ("js_api_prefix", "js", True),
    ("js_api_prefix", "js.foreign", True),
    ("js_api_prefix", "a.b.c", True),
    ("js_api_prefix", "", False),
    ("js_api_prefix", "bad prefix", False),
    ("js_api_prefix", "a..b", False),
    ("js_api_prefix", ".a", False),
    ("js_domain", "bad>domain", False),
]


@pytest.mark.parametrize(("setting", "value", "valid"), API_PREFIXES)
def test_jsm_go_subject_prefixes(setting, value, valid):
    if valid:
        assert check_subject_setting(setting, value, "test") is None
    else:
        with pytest.raises(UsageError):
            check_subject_setting(setting, value, "test")


# == jsm.go / orbit.go natscontext ================================================================

CTX_ENV = {"HOME": "/home/test", "NATS_TEST_EXPAND": "/some/path"}

# jsm.go natscontext/expansion_test.go TestContext and TestExpandHomedirEmpty, orbit.go
# natscontext/expansion_test.go TestContext (expandHomedir: $VAR, then a leading ~)
EXPAND_HOME = [
    ("foo", "foo"),
    ("~/foo", "/home/test/foo"),
    ("/~/foo", "/~/foo"),
    ("$NATS_TEST_EXPAND/certs", "/some/path/certs"),
    ("$NATS_TEST_EXPAND", "/some/path"),
    ("$NATS_TEST_UNSET/foo", "/foo"),
    ("", ""),
]


@pytest.mark.parametrize(("path", "expanded"), EXPAND_HOME)
def test_jsm_go_expand_homedir(path, expanded):
    assert _expand_home(path, CTX_ENV) == expanded


# jsm.go natscontext/expansion_test.go TestValidateName, whole: the rule is jsm.go's
# ValidateName (not empty, no "..", no "/" or "\\"); one row differs: "foo\x00a" (valid
# there, and then no file can be opened by that name) is refused, no file name holds NUL
RULE = ("a natscli context name is not empty, has no '..', '/', '\\' or NUL and makes a "
        "file name NAME.json of at most 255 bytes (or is a file ending in .json that exists)")
CONTEXT_NAMES = [
    ("foo", True), ("my-context", True), ("ctx_1", True), ("a", True), ("ngs.js", True),
    ("foo.bar", True), ("foo bar", True), ("foo\tbar", True), ("foo*bar", True),
    ("foo>bar", True), ("foo\x7fa", True), ("prod@eu", True),
    ("", False), ("foo/bar", False), ("foo\\bar", False), ("../evil", False),
    ("..\\evil", False), ("foo..bar", False), ("..", False), ("a..", False), ("..a", False),
    ("foo\x00a", False),
]


@pytest.mark.parametrize(("name", "valid"), CONTEXT_NAMES)
def test_jsm_go_context_names(name, valid):
    if valid:
        assert validate_nats_context_name(name) is None
    else:
        with pytest.raises(UsageError) as err:
            validate_nats_context_name(name)
        shown = f" {name!r}" if name else ""
        assert err.value.description == f"invalid natscli context name{shown}: {RULE}"


# jsm.go natscontext/testdata (TestContext's XDG_CONFIG_HOME): the files it loads
CONTEXT_FILES = {
    "context.txt": "gotest",
    "context/gotest.json": '{\n  "url": "demo.nats.io"\n}\n',
    "context/multi_creds.json": json.dumps({
        "description": "", "url": "demo.nats.io", "token": "foo", "user": "foo",
        "password": "foo", "creds": "foo", "nkey": "foo", "cert": "", "key": "", "ca": "",
        "nsc": "", "jetstream_domain": "", "jetstream_api_prefix": "",
        "jetstream_event_prefix": "", "inbox_prefix": "", "user_jwt": ""}, indent=2),
    "context/user_pass_token_creds.json": json.dumps({
        "description": "", "url": "demo.nats.io", "socks_proxy": "", "token": "foo",
        "user": "foo", "password": "foo", "creds": "", "nkey": "", "cert": "", "key": "",
        "ca": "", "nsc": "", "jetstream_domain": "", "jetstream_api_prefix": "",
        "jetstream_event_prefix": "", "inbox_prefix": "", "user_jwt": "", "user_seed": "",
        "color_scheme": "", "tls_first": False, "windows_cert_store": "",
        "windows_cert_match_by": "", "windows_cert_match": "",
        "windows_ca_certs_match": None}, indent=2),
}


@pytest.fixture
def ctx_env(tmp_path):
    for rel, content in CONTEXT_FILES.items():
        path = tmp_path / "nats" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return {"XDG_CONFIG_HOME": str(tmp_path), "HOME": "/home/test"}


# jsm.go natscontext/context_test.go TestContext: the contexts it loads, as jetlink reads them
# left out: selecting, unselecting, saving and previous contexts (jetlink reads natscli's
# contexts, never writes them); "nonexisting" and malformed JSON are in test_live_settings.py
CONTEXTS = [
    ("gotest", {"servers": "demo.nats.io"}),
    ("multi_creds", {"servers": "demo.nats.io", "user": "foo", "password": "foo",
                     "token": "foo", "creds": "foo", "nkey": "foo"}),
    ("user_pass_token_creds", {"servers": "demo.nats.io", "user": "foo", "password": "foo",
                               "token": "foo"}),
]


@pytest.mark.parametrize(("name", "settings"), CONTEXTS)
def test_jsm_go_context_testdata(ctx_env, name, settings):
    assert selected_nats_context(ctx_env) == "gotest"
    assert read_nats_context(name, ctx_env).settings == settings


def test_jsm_go_context_from_bytes(tmp_path):
    """jsm.go natscontext/context_test.go TestNewFromBytes (the document as a context file)."""
    (tmp_path / "nats" / "context").mkdir(parents=True)
    (tmp_path / "nats" / "context" / "bytes.json").write_text(
        '{"url":"nats://bytes:4222","token":"tok"}')
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    assert read_nats_context("bytes", env).settings == {"servers": "nats://bytes:4222",
                                                       "token": "tok"}


def test_jsm_go_expand_env_in_paths(tmp_path):
    """jsm.go natscontext/context_test.go TestExpandEnvInPaths."""
    ctx_dir = tmp_path / "nats" / "context"
    ctx_dir.mkdir(parents=True)
    (ctx_dir / "envtest.json").write_text(
        '{"cert":"$NATS_TEST_DIR/client.crt","key":"$NATS_TEST_DIR/client.key",'
        '"ca":"$NATS_TEST_DIR/ca.crt","nkey":"$NATS_TEST_DIR/seed.nk",'
        '"creds":"$NATS_TEST_DIR/user.creds"}')
    (ctx_dir / "tildetest.json").write_text('{"cert":"~/client.crt"}')
    env = {"XDG_CONFIG_HOME": str(tmp_path), "NATS_TEST_DIR": str(tmp_path),
           "HOME": "/home/test"}
    assert read_nats_context("envtest", env).settings == {
        "tls_cert": f"{tmp_path}/client.crt", "tls_key": f"{tmp_path}/client.key",
        "tls_ca": f"{tmp_path}/ca.crt", "nkey": f"{tmp_path}/seed.nk",
        "creds": f"{tmp_path}/user.creds"}
    assert read_nats_context("tildetest", env).settings == {"tls_cert": "/home/test/client.crt"}


# == natscli =====================================================================================

# natscli internal/util/util_test.go TestSplitString and TestSplitCLISubjects
SPLITS = [
    ([f"test test{EMSP}test"], ["test", "test", "test"]),
    ([f"one two{EMSP}three\tfour,five", "six,seven"],
     ["one", "two", "three", "four", "five", "six", "seven"]),
]


@pytest.mark.parametrize(("values", "subjects"), SPLITS)
def test_natscli_split_cli_subjects(values, subjects):
    assert split_subjects(values) == subjects


# natscli internal/util/util_test.go TestIsPrintable and TestBase64IfNotPrintable
PRINTABLES = [
    (b"test", "test"),
    (EMSP.encode(), "4oCD"),  # not printable: base64
    (f"test{EMSP}test".encode(), "dGVzdOKAg3Rlc3Q="),
]


@pytest.mark.parametrize(("value", "shown"), PRINTABLES)
def test_natscli_base64_if_not_printable(value, shown):
    assert printable(value) == shown


K = 1024
BYTES_RULE = ("bytes are a whole number ending in B, K, KB, KiB, M, MB, MiB, G, GB, GiB, T, TB "
              "or TiB (all 1024-based), or -1 for unlimited")

# natscli internal/util/util_test.go TestParseStringAsBytes: (text, bits, value or error)
# left out: "" (-1 there): jetlink refuses an empty size; bits 12 (errInvalidBitSize): a
# guard on Go's argument, jetlink's callers ask for 32 or 64 bits only
SIZES = [
    ("1B", 64, 1), ("1b", 64, 1), ("1", 64, 1), ("1000", 64, 1000),
    ("1K", 64, K), ("1k", 64, K), ("1KB", 64, K), ("1KiB", 64, K), ("1kb", 64, K),
    ("1024B", 64, K), ("1024b", 64, K),
    ("1M", 64, K**2), ("1MB", 64, K**2), ("1MiB", 64, K**2), ("1m", 64, K**2),
    ("1G", 64, K**3), ("1GB", 64, K**3), ("1GiB", 64, K**3), ("1g", 64, K**3),
    ("1T", 64, K**4), ("1TB", 64, K**4), ("1TiB", 64, K**4), ("1t", 64, K**4),
    ("9223372036854775807", 64, 2**63 - 1),
    ("9223372036854775807", 32,
     "invalid value for --max-bytes: '9223372036854775807': maximum is 2,147,483,647"),
    ("-1", 64, -1), ("-10", 64, -1), ("-10GB", 64, -1),
    ("1FOO", 64, f"invalid value for --max-bytes: '1FOO': {BYTES_RULE}"),
    ("FOO", 64, f"invalid value for --max-bytes: 'FOO': {BYTES_RULE}"),
]


@pytest.mark.parametrize(("text", "bits", "expected"), SIZES)
def test_natscli_parse_string_as_bytes(text, bits, expected):
    if isinstance(expected, str):
        with pytest.raises(UsageError) as err:
            parse_size(text, flag="--max-bytes", bits=bits)
        assert err.value.description == expected
    else:
        assert parse_size(text, flag="--max-bytes", bits=bits) == expected


# natscli internal/util/validators_test.go TestIntRangeValidator: (input, min, max, None when
# valid, else why: "range" for Go's "must be ... than or equal to", "syntax" for ParseInt's)
INT_RANGES = [
    ("5", 1, 10, None), ("1", 1, 10, None), ("10", 1, 10, None), ("0", 1, 10, "range"),
    ("11", 1, 10, "range"), ("-5", 1, 10, "range"), ("abc", 1, 10, "syntax"),
    ("", 1, 10, "syntax"), ("5.5", 1, 10, "syntax"), ("-5", -10, -1, None),
    ("0", -10, -1, "range"), ("500000", 0, 1000000, None), ("42", 42, 42, None),
    ("43", 42, 42, "range"),
]


@pytest.mark.parametrize(("text", "low", "high", "reason"), INT_RANGES)
def test_natscli_int_range_validator(text, low, high, reason):
    if reason is None:
        assert parse_int(text, low, high) == int(text)
    else:
        with pytest.raises(IntTextError) as err:
            parse_int(text, low, high)
        assert err.value.reason == reason


def test_natscli_parse_strings_to_header():
    """natscli internal/util/header_test.go TestParseStringsToHeader: NAME:VALUE pairs, a
    value's template expanded (pub does so for every header; Count 10)."""
    with pytest.raises(UsageError) as err:
        parse_headers(["A:1", "B"])
    assert err.value.description == "invalid header 'B': expected NAME:VALUE"
    pairs = parse_headers(["A:1", "B:2", "C:{{ Count }}"])
    assert [(k, expand(v, 10, 0)) for k, v in pairs] == [("A", "1"), ("B", "2"), ("C", "10")]


# natscli cli/util_test.go TestRenderCluster
CLUSTERS = [
    ({"name": "test", "leader": "S2", "replicas": [
        {"name": "S3", "current": False, "active": 30199700, "lag": 882130},
        {"name": "S1", "current": False, "active": 30202300, "lag": 882354}]},
     "S1!, S2*, S3!"),
    ({"name": "test"}, ""),
]


@pytest.mark.parametrize(("cluster", "cell"), CLUSTERS)
def test_natscli_render_cluster(cluster, cell):
    assert cluster_cell(cluster) == cell


_SVC = "broker-broker-ss.choria.svc.cluster.local"


# natscli internal/util/util_test.go TestCompactStrings, and renderCluster's use of it
@pytest.mark.parametrize(("names", "short"), [
    ([f"broker-broker-{n}.{_SVC}" for n in (2, 0, 1)],
     ["broker-broker-2", "broker-broker-0", "broker-broker-1"]),
    ([f"broker-broker-{n}.{_SVC}{m}" for n, m in ((2, 1), (0, 2), (1, 3))],
     [f"broker-broker-{n}.{_SVC}{m}" for n, m in ((2, 1), (0, 2), (1, 3))]),
    ([f"broker-broker-2.{_SVC}", f"broker-broker-0.{_SVC}",
      "broker-broker-1.broker-broker-ss.other.svc.cluster.local"],
     ["broker-broker-2.broker-broker-ss.choria", "broker-broker-0.broker-broker-ss.choria",
      "broker-broker-1.broker-broker-ss.other"]),
    (["a.x.com", "b.com"], ["a.x.com", "b.com"]),  # (parts compared by place from the start)
    ([], []),
])
def test_natscli_compact_strings(names, short):
    assert compact_names(names) == short


def test_render_cluster_compacts_the_servers_names():
    cluster = {"leader": "nats1.east.example.com", "replicas": [
        {"name": "nats3.east.example.com", "current": True},
        {"name": "nats2.east.example.com", "current": False}]}
    assert cluster_cell(cluster) == "nats1*, nats2!, nats3"


# jsm.go api/consumers.go AckPolicy.String()
@pytest.mark.parametrize(("policy", "title"), [
    ("none", "None"), ("all", "All"), ("explicit", "Explicit"),
    ("flow_control", "Flow Control"), ("odd", "Unknown Acknowledgement Policy")])
def test_jsm_ack_policy_titles(policy, title):
    assert ack_title(policy) == title


# == orbit.go counters ===========================================================================

@pytest.fixture
def plain(js):
    """A stream whose last message on c.x is what a test stores (entry() reads any stream)."""
    js.add_stream(StreamConfig.from_json({"name": "S", "subjects": ["c.>"]}))
    return js


NOT_A_COUNTER = "invalid value: the last message of c.x in S is not a counter"

# orbit.go counters/counter_test.go TestParseCounterValue (the body of the subject's last
# message, as Get reads it)
COUNTER_VALUES = [
    ("valid positive value", b'{"val":"42"}', 42),
    ("valid negative value", b'{"val":"-10"}', -10),
    ("valid zero value", b'{"val":"0"}', 0),
    ("valid large value", b'{"val":"123456789012345678901234567890"}',
     123456789012345678901234567890),
    ("invalid JSON", b'{"val": invalid}', None),
    ("missing val field", b'{"other":"42"}', None),
    ("invalid number format", b'{"val":"not-a-number"}', None),
    ("empty data", b"", None),
]


@pytest.mark.parametrize(("case", "body", "value"), COUNTER_VALUES)
def test_orbit_parse_counter_value(plain, case, body, value):
    plain.publish("c.x", body)
    if value is None:
        with pytest.raises(JetlinkError) as err:
            entry(plain, "S", "c.x")
        assert err.value.description == NOT_A_COUNTER
    else:
        assert entry(plain, "S", "c.x") == CounterEntry("S", "c.x", value, None, {})


# orbit.go counters/counter_test.go TestParseSources (the Nats-Counter-Sources header)
# left out: "invalid value format": in test_counters.py
COUNTER_SOURCES = [
    ("empty headers", None, {}),
    ("single source single subject", '{"source1":{"subject1":"10"}}',
     {"source1": {"subject1": 10}}),
    ("single source multiple subjects", '{"source1":{"subject1":"10","subject2":"20"}}',
     {"source1": {"subject1": 10, "subject2": 20}}),
    ("multiple sources",
     '{"source1":{"subject1":"10"},"source2":{"subject2":"20","subject3":"90"}}',
     {"source1": {"subject1": 10}, "source2": {"subject2": 20, "subject3": 90}}),
    ("invalid JSON", "{", None),
]


@pytest.mark.parametrize(("case", "header", "sources"), COUNTER_SOURCES)
def test_orbit_parse_sources(plain, case, header, sources):
    plain.publish("c.x", b'{"val":"0"}',
                  {"Nats-Counter-Sources": header} if header is not None else None)
    if sources is None:
        with pytest.raises(JetlinkError) as err:
            entry(plain, "S", "c.x")
        assert err.value.description == "failed to parse sources of c.x in S"
    else:
        assert entry(plain, "S", "c.x") == CounterEntry("S", "c.x", 0, None, sources)


# == jsm.go monitor: thresholds ===================================================================

# jsm.go monitor/stream_test.go TestExtractStreamHealthCheckOptions (durations held in ns)
STREAM_METADATA = [
    ({}, {}),
    ({"io.nats.monitor.enabled": "true"}, {"enabled": True}),
    ({"io.nats.monitor.lag-critical": "42"}, {"lag_critical": 42}),
    ({"io.nats.monitor.seen-critical": "1s"}, {"seen_critical": SECOND}),
    ({"io.nats.monitor.peer-seen-critical": "2s"}, {"peer_seen_critical": 2 * SECOND}),
    ({"io.nats.monitor.min-sources": "2", "io.nats.monitor.max-sources": "5"},
     {"min_sources": 2, "max_sources": 5}),
    ({"io.nats.monitor.peer-expect": "3", "io.nats.monitor.peer-lag-critical": "100"},
     {"peer_expect": 3, "peer_lag_critical": 100}),
    ({"io.nats.monitor.msgs-warn": "500", "io.nats.monitor.msgs-critical": "200"},
     {"msgs_warn": 500, "msgs_critical": 200}),
    ({"io.nats.monitor.subjects-warn": "100", "io.nats.monitor.subjects-critical": "200"},
     {"subjects_warn": 100, "subjects_critical": 200}),
    ({"io.nats.monitor.unknown-key": "whatever"}, {}),
]


@pytest.mark.parametrize(("metadata", "fields"), STREAM_METADATA)
def test_jsm_go_extract_stream_health_check_options(metadata, fields):
    assert StreamThresholds.resolve({}, metadata) == StreamThresholds(**fields)


def test_jsm_go_extract_stream_health_check_options_invalid():
    """jsm.go monitor/stream_test.go TestExtractStreamHealthCheckOptions: an invalid value."""
    with pytest.raises(ThresholdError) as err:
        StreamThresholds.resolve({}, {"io.nats.monitor.lag-critical": "not-a-number"})
    assert str(err.value) == ("io.nats.monitor.lag-critical: 'not-a-number' is not a whole "
                              "number of 0 or more")


# jsm.go monitor/monitor_test.go TestSecondsToDuration: a duration threshold of N seconds
# (ParseDuration's Seconds()) held as the exact nanoseconds
SECONDS_TO_DURATION = [("0", 0), ("1s", SECOND), ("500ms", 500 * MS), ("2.5s", 2500 * MS),
                       ("1m", 60 * SECOND)]


@pytest.mark.parametrize(("text", "ns"), SECONDS_TO_DURATION)
def test_jsm_go_seconds_to_duration(text, ns):
    assert StreamThresholds.resolve({}, {"io.nats.monitor.seen-critical": text}) == (
        StreamThresholds(seen_critical=ns))


# jsm.go monitor/consumer_test.go TestExtractConsumerHealthCheckOptions
# left out: "Should propagate extra health check functions": jetlink's checks take none
CONSUMER_METADATA = [
    ({}, {}),
    ({"io.nats.monitor.enabled": "true", "io.nats.monitor.outstanding-ack-critical": "5",
      "io.nats.monitor.waiting-critical": "10", "io.nats.monitor.unprocessed-critical": "20",
      "io.nats.monitor.redelivery-critical": "3"},
     {"enabled": True, "outstanding_ack_critical": 5, "waiting_critical": 10,
      "unprocessed_critical": 20, "redelivery_critical": 3}),
    ({"io.nats.monitor.last-delivery-critical": "2m", "io.nats.monitor.last-ack-critical": "30s"},
     {"last_delivery_critical": 120 * SECOND, "last_ack_critical": 30 * SECOND}),
    ({"io.nats.monitor.pinned": "true"}, {"pinned": True}),
    ({"io.nats.monitor.outstanding-ack-critical": "not-a-number"},
     "io.nats.monitor.outstanding-ack-critical: 'not-a-number' is not a whole number"),
    ({"io.nats.monitor.last-delivery-critical": "not-a-duration"},
     "io.nats.monitor.last-delivery-critical: invalid duration 'not-a-duration': expected a "
     "number and a unit (ns, us, ms, s, m, h, d, w, M, y), e.g. 1h30m or 1.5d"),
]


@pytest.mark.parametrize(("metadata", "expected"), CONSUMER_METADATA)
def test_jsm_go_extract_consumer_health_check_options(metadata, expected):
    if isinstance(expected, str):
        with pytest.raises(ThresholdError) as err:
            ConsumerThresholds.resolve({}, metadata)
        assert str(err.value) == expected
    else:
        assert ConsumerThresholds.resolve({}, metadata) == ConsumerThresholds(**expected)


# == jsm.go monitor: the stream checks ============================================================
# Each check on its own (jsm.go's streamCheck* functions), its (criticals, warnings, oks).

NONE: tuple[list[str], list[str], list[str]] = ([], [], [])


def _stream_check(check, doc, thresholds):
    r = Result(name="test_stream", check="stream")
    check(LiveStreamInfo(doc), r, StreamThresholds(**thresholds))
    return r.criticals, r.warnings, r.oks


def _source(lag=0, active=0):
    """An api.StreamSourceInfo as Go marshals one (its zero value: lag 0, active 0)."""
    return {"name": "", "lag": lag, "active": active}


def _with_sources(*sources):
    return {"config": {"name": "test_stream"}, "sources": list(sources)}


# jsm.go monitor/stream_test.go TestStream_checkSources
CHECK_SOURCES = [
    ("fewer than desired, none", _with_sources(), {"min_sources": 1, "max_sources": 2},
     (["0 sources"], [], [])),
    ("fewer than desired, one", _with_sources(_source()), {"min_sources": 2, "max_sources": 3},
     (["1 sources"], [], [])),
    ("more than desired", _with_sources(_source(), _source()), {"max_sources": 1},
     (["2 sources"], [], [])),
    ("valid number", _with_sources(_source(), _source()), {"min_sources": 2, "max_sources": 3},
     ([], [], ["2 sources"])),
    ("lagged", _with_sources(_source(lag=100), _source(lag=200)), {"lag_critical": 100},
     (["2 sources are lagged"], [], ["2 sources", "2 sources active"])),
    ("not seen", _with_sources(_source(active=SECOND), _source(active=2 * SECOND)),
     {"seen_critical": MS}, (["2 sources are inactive"], [], ["2 sources", "2 sources current"])),
    ("valid replicas",
     _with_sources(_source(lag=100, active=100 * MS), _source(lag=200, active=MS)),
     {"lag_critical": 500, "seen_critical": SECOND, "min_sources": 2, "max_sources": 10},
     ([], [], ["2 sources", "2 sources current", "2 sources active"])),
]


@pytest.mark.parametrize(("case", "doc", "thresholds", "outcome"), CHECK_SOURCES)
def test_jsm_go_stream_check_sources(case, doc, thresholds, outcome):
    assert _stream_check(_sources, doc, thresholds) == outcome


def _messages_doc(n):
    return {"config": {"name": "test_stream"}, "state": {"messages": n}}


# jsm.go monitor/stream_test.go TestStream_checkMessages
CHECK_MESSAGES = [
    ("no thresholds", 1000, {}, NONE),
    ("critical at", 1000, {"msgs_critical": 1000}, (["1000 messages"], [], [])),
    ("critical below", 999, {"msgs_critical": 1000}, (["999 messages"], [], [])),
    ("warning at", 1000, {"msgs_warn": 1000}, ([], ["1000 messages"], [])),
    ("warning below", 999, {"msgs_warn": 1000}, ([], ["999 messages"], [])),
    ("ok", 1000, {"msgs_warn": 500, "msgs_critical": 200}, ([], [], ["1000 messages"])),
    ("between warn and crit", 400, {"msgs_warn": 500, "msgs_critical": 200},
     ([], ["400 messages"], [])),
]


@pytest.mark.parametrize(("case", "messages", "thresholds", "outcome"), CHECK_MESSAGES)
def test_jsm_go_stream_check_messages(case, messages, thresholds, outcome):
    assert _stream_check(_messages, _messages_doc(messages), thresholds) == outcome


# jsm.go monitor/stream_test.go TestStream_checkSubjects: (subjects, warn, crit, outcome)
CHECK_SUBJECTS = [
    ("no thresholds", 0, 0, 0, NONE),
    ("warn < crit, fewer", 100, 200, 300, ([], [], ["100 subjects"])),
    ("warn < crit, more than crit", 400, 200, 300, (["400 subjects"], [], [])),
    ("warn < crit, more than warn", 250, 200, 300, ([], ["250 subjects"], [])),
    ("warn < crit, valid", 100, 200, 300, ([], [], ["100 subjects"])),
    ("warn > crit, fewer than crit", 100, 300, 200, (["100 subjects"], [], [])),
    ("warn > crit, fewer than warn", 250, 300, 200, ([], ["250 subjects"], [])),
    ("warn > crit, valid", 400, 300, 200, ([], [], ["400 subjects"])),
]


@pytest.mark.parametrize(("case", "subjects", "warn", "crit", "outcome"), CHECK_SUBJECTS)
def test_jsm_go_stream_check_subjects(case, subjects, warn, crit, outcome):
    doc = {"config": {"name": "test_stream"}, "state": {"num_subjects": subjects}}
    thresholds = {"subjects_warn": warn, "subjects_critical": crit}
    assert _stream_check(_subjects, doc, thresholds) == outcome


def _mirrored(name="", state=None, **doc):
    out = {"config": {"name": "test", "mirror": {"name": name}}, **doc}
    if state is not None:
        out["mirror"] = state
    return out


# jsm.go monitor/stream_test.go TestStream_checkMirror
CHECK_MIRROR = [
    ("no thresholds", {}, {}, NONE),
    ("absent state", _mirrored(), {"lag_critical": 1, "seen_critical": SECOND},
     (["invalid state"], [], [])),
    ("lag 100", _mirrored(state=_source(lag=100)), {"lag_critical": 100},
     (["Mirror Lag 100"], [], [])),
    ("lag 200", _mirrored(state=_source(lag=200)), {"lag_critical": 100},
     (["Mirror Lag 200"], [], [])),
    ("seen 1ms", _mirrored(state=_source(active=MS)), {"seen_critical": MS},
     (["Mirror Seen 1ms"], [], [])),
    ("seen 1s", _mirrored(state=_source(active=SECOND)), {"seen_critical": MS},
     (["Mirror Seen 1s"], [], [])),
    ("healthy", _mirrored("X", _source(lag=100, active=MS)),
     {"lag_critical": 200, "seen_critical": SECOND}, ([], [], ["Mirror X"])),
    ("not a mirror", {"config": {"name": "test"}}, {"lag_critical": 1},
     (["not mirrored"], [], [])),
    ("has sources", _mirrored("X", sources=[_source()]), {"lag_critical": 1}, NONE),
]


@pytest.mark.parametrize(("case", "doc", "thresholds", "outcome"), CHECK_MIRROR)
def test_jsm_go_stream_check_mirror(case, doc, thresholds, outcome):
    assert _stream_check(_mirror, doc, thresholds) == outcome


def _clustered(leader, replicas, num_replicas):
    cluster = {"leader": leader, "replicas": replicas} if leader else {"replicas": replicas}
    return {"cluster": cluster, "config": {"num_replicas": num_replicas}}


# jsm.go monitor/stream_test.go TestStream_checkCluster
CHECK_CLUSTER = [
    ("skip without threshold", {}, {}, NONE),
    ("not clustered", {}, {"peer_expect": 3}, (["Stream is not clustered"], [], [])),
    ("replica count", _clustered("p2", [{"name": "p1"}], 2), {"peer_expect": 3},
     (["Expected 3 replicas got 2"], [], [])),
    ("no leader", _clustered("", [{"name": "p1"}, {"name": "p2"}, {"name": "p3"}], 3),
     {"peer_expect": 3}, (["No leader"], [], [])),
    ("leader", _clustered("p1", [{"name": "p2"}, {"name": "p3"}], 3), {"peer_expect": 3},
     ([], [], ["3 peers"])),
    ("lagged peers",
     _clustered("p1", [{"name": "p2", "lag": 1000}, {"name": "p3", "lag": 10}], 3),
     {"peer_expect": 3, "peer_lag_critical": 100}, (["1 replicas lagged"], [], ["3 peers"])),
    ("inactive peers",
     _clustered("p1", [{"name": "p2", "lag": 10, "active": SECOND},
                       {"name": "p3", "lag": 10, "active": HOUR}], 3),
     {"peer_expect": 3, "peer_seen_critical": 60 * SECOND},
     (["1 replicas inactive"], [], ["3 peers"])),
    ("offline peers",
     _clustered("p1", [{"name": "p2", "lag": 10, "active": SECOND, "offline": True},
                       {"name": "p3", "lag": 10, "active": HOUR}], 3),
     {"peer_expect": 3}, (["1 replicas offline"], [], ["3 peers"])),
    ("ok",
     _clustered("p1", [{"name": "p2", "lag": 10, "active": SECOND},
                       {"name": "p3", "lag": 10, "active": SECOND}], 3),
     {"peer_expect": 3, "peer_lag_critical": 20, "peer_seen_critical": 60 * SECOND},
     ([], [], ["3 peers", "replicas are current", "replicas are active"])),
]


@pytest.mark.parametrize(("case", "doc", "thresholds", "outcome"), CHECK_CLUSTER)
def test_jsm_go_stream_check_cluster(case, doc, thresholds, outcome):
    assert _stream_check(_cluster, doc, thresholds) == outcome


# == jsm.go monitor: the consumer checks ==========================================================
# The whole consumer check on a ConsumerInfo document, the given thresholds as flags (the
# others off), at a fixed time: its (criticals, warnings, oks).

NOW = 1_800_000_000 * SECOND  # 2027-01-15 08:00:00 UTC
NOW_GO = "2027-01-15 08:00:00 +0000 UTC"  # as Go prints a time.Time
AN_HOUR_AGO = "2027-01-15T07:00:00Z"
JUST_NOW = "2027-01-15T08:00:00Z"


class _Consumers:
    def __init__(self, doc):
        self.doc = doc

    def consumer_info(self, stream, consumer):
        return LiveConsumerInfo(self.doc)


def _consumer_check(flags, doc):
    return check_consumer(lambda: _Consumers({"stream_name": "S", "name": "C", **doc}), "S",
                          "C", flags, lambda: NOW)


def _outcome(r):
    return r.criticals, r.warnings, r.oks


# jsm.go monitor/consumer_test.go TestConsumer_checkLastAck, TestConsumer_checkLastDelivery
CHECK_LAST = [
    (flag, case, doc, outcome)
    for flag, key, never, label in [("last_ack_critical", "ack_floor", "No acks", "Last ack"),
                                    ("last_delivery_critical", "delivered", "No deliveries",
                                     "Last delivery")]
    for case, doc, outcome in [
        ("none", {}, ([never], [], [])),
        ("greater than or equal", {key: {"last_active": AN_HOUR_AGO}},
         ([f"{label} 1h0m0s ago"], [], [])),
        ("ok otherwise", {key: {"last_active": JUST_NOW}}, ([], [], [f"{label} {NOW_GO}"])),
    ]
]


@pytest.mark.parametrize(("flag", "case", "doc", "outcome"), CHECK_LAST)
def test_jsm_go_consumer_check_last_ack_and_delivery(flag, case, doc, outcome):
    assert _outcome(_consumer_check({flag: SECOND}, doc)) == outcome


def test_a_consumer_check_reads_its_clock_once_the_info_has_come():
    """jsm.go measures the ages with time.Since after loading the consumer's state: a slow
    connection never shortens them (the clock read before connecting did)."""
    order = []

    class Slow(_Consumers):
        def consumer_info(self, stream, consumer):
            order.append("info")
            return super().consumer_info(stream, consumer)

    def clock():
        order.append("clock")
        return NOW

    doc = {"stream_name": "S", "name": "C", "delivered": {"last_active": JUST_NOW}}
    r = check_consumer(lambda: Slow(doc), "S", "C", {"last_delivery_critical": SECOND}, clock)
    assert order == ["info", "clock"] and r.oks == [f"Last delivery {NOW_GO}"]


# jsm.go monitor/consumer_test.go TestConsumer_checkUnprocessed, TestConsumer_checkRedelivery,
# TestConsumer_checkWaiting, TestConsumer_checkOutstandingAck: the figure 10 against a
# threshold of 1 and 10 (critical) and 11 (ok)
CHECK_COUNTS = [
    (flag, key, threshold, ([text], [], []) if threshold <= 10 else ([], [], [text]))
    for flag, key, text in [
        ("unprocessed_critical", "num_pending", "Unprocessed Messages: 10"),
        ("redelivery_critical", "num_redelivered", "Redelivered: 10"),
        ("waiting_critical", "num_waiting", "Waiting Pulls: 10"),
        ("outstanding_ack_critical", "num_ack_pending", "Ack Pending: 10"),
    ]
    for threshold in (1, 10, 11)
]


@pytest.mark.parametrize(("flag", "key", "threshold", "outcome"), CHECK_COUNTS)
def test_jsm_go_consumer_check_counts(flag, key, threshold, outcome):
    assert _outcome(_consumer_check({flag: threshold}, {key: 10})) == outcome


PINNED = {"priority_groups": ["ONE", "TWO"], "priority_policy": "pinned_client"}

# jsm.go monitor/consumer_test.go TestConsumer_consumerCheckPinned, the skipped checks of
# the consumer tests ("Should skip without a threshold") and TestCheckConsumerInfoHealth
CHECK_CONSUMER = [
    ("no thresholds", {}, {}, NONE),
    ("pinned, not pinned client mode", {"pinned": True}, {},
     (["Not pinned client priority mode"], [], [])),
    ("pinned, 1 of 2", {"pinned": True},
     {"config": PINNED, "priority_groups": [{"group": "ONE", "pinned_client_id": "1"}]},
     (["1 / 2 pinned clients"], [], [])),
    ("pinned, healthy", {"pinned": True},
     {"config": PINNED, "priority_groups": [{"group": "ONE", "pinned_client_id": "1"},
                                            {"group": "TWO", "pinned_client_id": "2"}]},
     ([], [], ["2 pinned clients"])),
    ("criticals from several checks", {"outstanding_ack_critical": 1, "redelivery_critical": 1},
     {"num_ack_pending": 10, "num_redelivered": 5},
     (["Ack Pending: 10", "Redelivered: 5"], [], [])),
    ("oks from several checks",
     {"outstanding_ack_critical": 10, "waiting_critical": 10, "unprocessed_critical": 10,
      "redelivery_critical": 10},
     {"num_ack_pending": 1, "num_waiting": 1, "num_pending": 1, "num_redelivered": 1},
     ([], [], ["Ack Pending: 1", "Waiting Pulls: 1", "Unprocessed Messages: 1",
               "Redelivered: 1"])),
    ("pinned when configured", {"pinned": True},
     {"config": {"priority_groups": ["ONE"], "priority_policy": "pinned_client"},
      "priority_groups": [{"group": "ONE", "pinned_client_id": "client-1"}]},
     ([], [], ["1 pinned clients"])),
]


@pytest.mark.parametrize(("case", "flags", "doc", "outcome"), CHECK_CONSUMER)
def test_jsm_go_consumer_checks(case, flags, doc, outcome):
    assert _outcome(_consumer_check(flags, doc)) == outcome


# == jsm.go monitor: the KV check (on the embedded engine) ========================================

@pytest.fixture
def kv(dd, clock):
    return KV(dd, "local", clock)


def _kv_check(kv, **options):
    r = check_kv(lambda: kv, "TEST", **options)
    return r.criticals, r.warnings, r.oks, " ".join(perf_item(p) for p in r.perf_data)


def test_jsm_go_check_kv_bucket(kv):
    """jsm.go monitor/kv_test.go TestCheckKVBucketAndKey "Bucket"."""
    assert _kv_check(kv) == (["bucket TEST not found"], [], [], "")
    kv.create_bucket(KeyValueConfig(bucket="TEST"))
    assert _kv_check(kv, values_critical=-1, values_warn=-1) == (
        [], [], ["bucket TEST"], "values=0 bytes=0B replicas=1")


# jsm.go monitor/kv_test.go TestCheckKVBucketAndKey "Values": the values put so far (K, K1,
# ... in turn), the thresholds, the outcome and the perf data
KV_VALUES = [
    (0, 1, 2, ([], [], ["bucket TEST", "0 values"], "values=0;1;2 bytes=0B replicas=1")),
    (1, 1, 2, ([], ["1 values"], ["bucket TEST"], "values=1;1;2 bytes=41B replicas=1")),
    (2, 1, 2, (["2 values"], [], ["bucket TEST"], "values=2;1;2 bytes=83B replicas=1")),
    # the inverse logic: critical below warning
    (3, 5, 3, (["3 values"], [], ["bucket TEST"], "values=3;5;3 bytes=125B replicas=1")),
    (4, 5, 3, ([], ["4 values"], ["bucket TEST"], "values=4;5;3 bytes=167B replicas=1")),
    (6, 5, 3, ([], [], ["bucket TEST", "6 values"], "values=6;5;3 bytes=251B replicas=1")),
]


@pytest.mark.parametrize(("values", "warn", "crit", "outcome"), KV_VALUES)
def test_jsm_go_check_kv_values(kv, values, warn, crit, outcome):
    kv.create_bucket(KeyValueConfig(bucket="TEST"))
    bucket = kv.open("TEST")
    for key in ["K", "K1", "K2", "K3", "K4", "K5"][:values]:
        bucket.put(key, b"V")
    assert _kv_check(kv, values_warn=warn, values_critical=crit) == outcome


def test_jsm_go_check_kv_key(kv):
    """jsm.go monitor/kv_test.go TestCheckKVBucketAndKey "Key": missing, put, deleted."""
    kv.create_bucket(KeyValueConfig(bucket="TEST"))
    bucket = kv.open("TEST")
    options = {"key": "KEY", "values_warn": -1, "values_critical": -1}
    assert _kv_check(kv, **options)[:3] == (["key KEY not found"], [], ["bucket TEST"])
    bucket.put("KEY", b"VAL")
    assert _kv_check(kv, **options)[:3] == ([], [], ["bucket TEST", "key KEY found"])
    bucket.delete("KEY")
    assert _kv_check(kv, **options)[:3] == (["key KEY not found"], [], ["bucket TEST"])


# == jsm.go monitor: perf data and the renderings =================================================

# jsm.go monitor/perfdata_test.go TestPerfDataItemString
PERF_ITEMS = [
    ("value only", PerfDataItem("msgs", 42), "msgs=42"),
    ("value with unit", PerfDataItem("size", 1024, unit="B"), "size=1024B"),
    ("seconds unit uses four decimals", PerfDataItem("rtt", 0.0012, unit="s"), "rtt=0.0012s"),
    ("warn and crit", PerfDataItem("peers", 3, warn=3, crit=3), "peers=3;3;3"),
    ("warn only", PerfDataItem("peers", 3, warn=3), "peers=3;3"),
    ("crit only", PerfDataItem("peers", 3, crit=3), "peers=3;;3"),
    ("negative warn with zero crit", PerfDataItem("delta", 5, warn=-1), "delta=5;-1"),
    ("negative warn with positive crit", PerfDataItem("delta", 5, warn=-1, crit=10),
     "delta=5;-1;10"),
    ("zero value", PerfDataItem("lag", 0), "lag=0"),
    ("name with spaces is quoted", PerfDataItem("peer lag", 7), "'peer lag'=7"),
    ("name with tab is quoted", PerfDataItem("peer\tlag", 7), "'peer\tlag'=7"),
    ("name without spaces is not quoted", PerfDataItem("peer_lag", 7), "peer_lag=7"),
]


@pytest.mark.parametrize(("case", "item", "shown"), PERF_ITEMS)
def test_jsm_go_perf_data_item_string(case, item, shown):
    assert perf_item(item) == shown


# jsm.go monitor/perfdata_test.go TestPerfDataString (the perf data of the Nagios line)
PERF_DATA = [
    ([], "OK x"),
    ([PerfDataItem("msgs", 1)], "OK x | msgs=1"),
    ([PerfDataItem("msgs", 1), PerfDataItem("bytes", 512, unit="B"),
      PerfDataItem("rtt", 0.001, unit="s")], "OK x | msgs=1 bytes=512B rtt=0.0010s"),
]


@pytest.mark.parametrize(("items", "line"), PERF_DATA)
def test_jsm_go_perf_data_string(items, line):
    r = Result("x", "c")
    r.pd(*items)
    assert nagios(r) == line


# jsm.go monitor/result_test.go TestResultPrepare and TestResultExitCode: (criticals,
# warnings, status, Nagios exit code)
# left out: "prometheus always 0 even on critical": the command's (cli/server_check.py), in
# test_server_check.py
STATUSES = [
    (["bad thing"], ["iffy thing"], Status.CRITICAL, 2),
    ([], ["iffy thing"], Status.WARNING, 1),
    ([], [], Status.OK, 0),
]


@pytest.mark.parametrize(("criticals", "warnings", "status", "code"), STATUSES)
def test_jsm_go_result_status(criticals, warnings, status, code):
    r = Result("n", "c", criticals=list(criticals), warnings=list(warnings))
    assert (r.status, r.exit_code) == (status, code)


def test_jsm_go_result_unknown_exit_code():
    """jsm.go monitor/result_test.go TestResultExitCode "nagios unknown"."""
    assert EXIT_CODES[Status.UNKNOWN] == 3


def _result(name, check="", *, output="", ok=(), warn=(), crit=(), pd=()):
    r = Result(name, check, output=output)
    for msg in ok:
        r.ok(msg)
    for msg in warn:
        r.warn(msg)
    for msg in crit:
        r.critical(msg)
    r.pd(*pd)
    return r


# jsm.go monitor/result_test.go TestResultRenderNagios
RENDER_NAGIOS = [
    ("ok with no perf data", _result("mycheck", ok=["things look fine"]),
     "OK mycheck OK:things look fine"),
    ("critical message included", _result("mycheck", crit=["disk full"]),
     "CRITICAL mycheck Crit:disk full"),
    ("warning message included", _result("mycheck", warn=["disk filling up"]),
     "WARNING mycheck Warn:disk filling up"),
    ("perf data appended after pipe", _result("mycheck", ok=["fine"],
                                              pd=[PerfDataItem("msgs", 42)]),
     "OK mycheck OK:fine | msgs=42"),
    ("Output overrides OKs", _result("mycheck", output="custom output",
                                     ok=["this should not appear"]),
     "OK mycheck custom output"),
]


@pytest.mark.parametrize(("case", "result", "line"), RENDER_NAGIOS)
def test_jsm_go_render_nagios(case, result, line):
    assert nagios(result) == line


# jsm.go monitor/result_test.go TestResultRenderJSON (json.MarshalIndent of the Result)
RENDER_JSON = [
    (_result("mycheck", "suite", crit=["something broke"]),
     '{\n  "status": "CRITICAL",\n  "check_suite": "suite",\n  "check_name": "mycheck",\n'
     '  "critical": [\n    "something broke"\n  ],\n  "perf_data": []\n}'),
    (_result("mycheck", ok=["fine"]),
     '{\n  "status": "OK",\n  "check_suite": "",\n  "check_name": "mycheck",\n'
     '  "ok": [\n    "fine"\n  ],\n  "perf_data": []\n}'),
]


@pytest.mark.parametrize(("result", "document"), RENDER_JSON)
def test_jsm_go_render_json(result, document):
    assert render_json(result) == document


# jsm.go monitor/result_test.go TestResultRenderHuman
RENDER_HUMAN = [
    ("name and ok message", _result("mycheck", ok=["all fine"]),
     "mycheck: OK\n\nStatus Detail\n\n"
     "╭────────┬──────────╮\n"
     "│ Status │ Message  │\n"
     "├────────┼──────────┤\n"
     "│ OK     │ all fine │\n"
     "╰────────┴──────────╯\n"),
    ("perf data table", _result("mycheck", ok=["fine"],
                                pd=[PerfDataItem("msgs", 100, help="message count")]),
     "mycheck: OK\n\nStatus Detail\n\n"
     "╭────────┬─────────╮\n"
     "│ Status │ Message │\n"
     "├────────┼─────────┤\n"
     "│ OK     │ fine    │\n"
     "╰────────┴─────────╯\n\nCheck Metrics\n\n"
     "╭────────┬───────┬──────┬────────────────────┬───────────────────┬───────────────╮\n"
     "│ Metric │ Value │ Unit │ Critical Threshold │ Warning Threshold │ Description   │\n"
     "├────────┼───────┼──────┼────────────────────┼───────────────────┼───────────────┤\n"
     "│ msgs   │ 100   │      │ 0                  │ 0                 │ message count │\n"
     "╰────────┴───────┴──────┴────────────────────┴───────────────────┴───────────────╯\n"),
    ("no perf data table", _result("mycheck", ok=["fine"]),
     "mycheck: OK\n\nStatus Detail\n\n"
     "╭────────┬─────────╮\n"
     "│ Status │ Message │\n"
     "├────────┼─────────┤\n"
     "│ OK     │ fine    │\n"
     "╰────────┴─────────╯\n"),
]


@pytest.mark.parametrize(("case", "result", "shown"), RENDER_HUMAN)
def test_jsm_go_render_human(case, result, shown):
    assert text(result) == shown


# jsm.go monitor/result_test.go TestResultRenderPrometheus (namespace nats; the exposition
# text without its final newline, which the command prints)
# left out: the registry and concurrency cases (Go's global registerer; no counterpart)
RENDER_PROMETHEUS = [
    ("status gauge", _result("mycheck", "suite", ok=["fine"]),
     "# HELP nats_suite_status_code Nagios compatible status code for suite\n"
     "# TYPE nats_suite_status_code gauge\n"
     'nats_suite_status_code{item="mycheck",status="OK"} 0'),
    ("perf data gauge", _result("mycheck", "suite",
                                pd=[PerfDataItem("msgs", 77, help="message count")]),
     "# HELP nats_suite_msgs message count\n"
     "# TYPE nats_suite_msgs gauge\n"
     'nats_suite_msgs{item="mycheck"} 77\n'
     "# HELP nats_suite_status_code Nagios compatible status code for suite\n"
     "# TYPE nats_suite_status_code gauge\n"
     'nats_suite_status_code{item="mycheck",status="OK"} 0'),
]


@pytest.mark.parametrize(("case", "result", "exposition"), RENDER_PROMETHEUS)
def test_jsm_go_render_prometheus(case, result, exposition):
    assert prometheus(result, "nats") == exposition


# jsm.go monitor/result_test.go TestF, the float cases (the text table's numbers:
# go-humanize CommafWithDigits(v, 3), float32(3.14) as the float64 Go widens it to)
# left out: its other types (the table's values are float64 in Go, floats in jetlink)
COMMAF = [(1234.5, "1,234.5"), (3.140000104904175, "3.140")]


@pytest.mark.parametrize(("value", "shown"), COMMAF)
def test_jsm_go_f_floats(value, shown):
    assert _commaf3(value) == shown


# jsm.go monitor/result_test.go TestHumanizeDuration (the same rules as natscli's
# columns.HumanizeDuration)
# left out: math.MaxInt64 ("never") and 400 days: in test_durations.py
HUMANIZE = [(500_000, "500µs"), (5 * MS, "5ms"), (90 * SECOND, "1m30s"),
            (3661 * SECOND, "1h1m1s"), (25 * HOUR, "1d1h0m0s")]


@pytest.mark.parametrize(("ns", "shown"), HUMANIZE)
def test_jsm_go_humanize_duration(ns, shown):
    assert since(ns) == shown
