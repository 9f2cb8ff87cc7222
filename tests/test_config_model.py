"""StreamConfig JSON model: exact field names, Go's omitempty, Go-style decode errors."""

import json

import pytest

from jetlink.core.config.stream import StreamConfig, StreamSource, parse_time
from jetlink.core.errors import ApiError

FULL = {
    "name": "ORDERS",
    "description": "orders",
    "subjects": ["orders.>"],
    "retention": "limits",
    "max_consumers": -1,
    "max_msgs": 1000,
    "max_bytes": -1,
    "max_age": 3_600_000_000_000,
    "max_msgs_per_subject": 5,
    "max_msg_size": 1024,
    "discard": "new",
    "storage": "memory",
    "num_replicas": 1,
    "no_ack": True,
    "duplicate_window": 120_000_000_000,
    "placement": {"cluster": "west", "tags": ["az:a"]},
    "sources": [
        {
            "name": "A",
            "opt_start_seq": 5,
            "opt_start_time": "2024-01-02T03:04:05.123456789Z",
            "subject_transforms": [{"src": "a.>", "dest": "b.>"}],
            "external": {"api": "$JS.east.API", "deliver": ""},
        }
    ],
    "compression": "s2",
    "first_seq": 10,
    "subject_transform": {"src": "in.>", "dest": "orders.>"},
    "republish": {"src": ">", "dest": "mon.>", "headers_only": True},
    "allow_direct": True,
    "mirror_direct": False,
    "discard_new_per_subject": True,
    "sealed": False,
    "deny_delete": True,
    "deny_purge": False,
    "allow_rollup_hdrs": True,
    "consumer_limits": {"inactive_threshold": 5_000_000_000, "max_ack_pending": 10},
    "allow_msg_ttl": True,
    "subject_delete_marker_ttl": 2_000_000_000,
    "allow_atomic": True,
    "metadata": {"team": "ops"},
}


def test_round_trip_keeps_every_field_and_order():
    cfg = StreamConfig.from_json(FULL)
    out = cfg.to_json()
    assert out == FULL
    # Go struct order, as the server prints it.
    assert list(out) == list(FULL)


def test_minimal_config_omits_empty_fields_like_go():
    out = StreamConfig(name="X").to_json()
    assert out == {
        "name": "X",
        "retention": "limits",
        "max_consumers": 0,
        "max_msgs": 0,
        "max_bytes": 0,
        "max_age": 0,
        "max_msgs_per_subject": 0,
        "discard": "old",
        "storage": "file",
        "num_replicas": 0,
        "compression": "none",
        "allow_direct": False,
        "mirror_direct": False,
        "sealed": False,
        "deny_delete": False,
        "deny_purge": False,
        "allow_rollup_hdrs": False,
        "consumer_limits": {},
        "allow_msg_ttl": False,
    }


def test_stream_info_document_is_accepted():
    info = {"config": FULL, "created": "2024-01-01T00:00:00Z", "state": {"messages": 0}}
    assert StreamConfig.from_any(info).to_json() == FULL
    assert StreamConfig.from_any(FULL).name == "ORDERS"


@pytest.mark.parametrize(
    "value,message",
    [
        ("2024-13-01T00:00:00Z", 'parsing time "2024-13-01T00:00:00Z": month out of range'),
        ("2024-02-30T00:00:00Z", 'parsing time "2024-02-30T00:00:00Z": day out of range'),
        # Go's offsets: up to 24 hours and 60 minutes
        ("2024-01-01T00:00:00+25:00",
         'parsing time "2024-01-01T00:00:00+25:00": time zone offset hour out of range'),
        ("2024-01-01T00:00:00-01:61",
         'parsing time "2024-01-01T00:00:00-01:61": time zone offset minute out of range'),
        (
            "2024-01-01 00:00:00Z",
            'parsing time "2024-01-01 00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse'
            ' " 00:00:00Z" as "T"',
        ),
        (
            "2024-01-01T00:00:00",
            'parsing time "2024-01-01T00:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse'
            ' "" as "Z07:00"',
        ),
    ],
)
def test_start_time_errors_are_go_time_parse_errors(value, message):
    with pytest.raises(ApiError) as exc:
        StreamConfig.from_json({"name": "x", "mirror": {"name": "o", "opt_start_time": value}})
    assert exc.value.description == f"invalid JSON: {message}"


def test_compression_must_be_none_or_s2():
    with pytest.raises(ApiError) as exc:
        StreamConfig.from_json({"name": "x", "compression": ""})
    assert (exc.value.err_code, exc.value.description) == (
        10025, "invalid JSON: unknown compression algorithm")


@pytest.mark.parametrize(("given", "read"), [("NEW", "new"), ("Old", "old"), ("new", "new")])
def test_discard_is_read_in_any_case_as_the_server_does(given, read):
    """DiscardPolicy's UnmarshalJSON lowers the value (the other enums are exact)."""
    assert StreamConfig.from_json({"name": "X", "discard": given}).discard == read


def test_null_leaves_the_zero_value_as_go_does():
    cfg = StreamConfig.from_json({"name": "X", "mirror": None, "max_msgs": None})
    assert cfg.mirror is None and cfg.max_msgs == 0


def test_domain_shorthand_is_read_from_external_api():
    src = StreamSource.from_json({"name": "A", "external": {"api": "$JS.east.API", "deliver": ""}})
    assert src.domain == "east"
    assert StreamSource(name="A").domain is None


@pytest.mark.parametrize(
    "doc,description,field",
    [
        (
            {"name": "x", "max_msgs": "a"},
            "invalid JSON: json: cannot unmarshal string into Go struct field "
            "StreamConfigRequest.max_msgs of type int64",
            "max_msgs",
        ),
        (
            {"name": "x", "max_msg_size": 2**31},
            "invalid JSON: json: cannot unmarshal number 2147483648 into Go struct field "
            "StreamConfigRequest.max_msg_size of type int32",
            "max_msg_size",
        ),
        (
            {"name": "x", "no_ack": 1},
            "invalid JSON: json: cannot unmarshal number into Go struct field "
            "StreamConfigRequest.no_ack of type bool",
            "no_ack",
        ),
        ({"name": "x", "retention": "foo"}, 'invalid JSON: can not unmarshal "\\"foo\\""',
         "retention"),
        ({"name": "x", "retention": "Limits"},
         'invalid JSON: can not unmarshal "\\"Limits\\""', "retention"),
        ({"name": "x", "discard": "Nope"}, 'invalid JSON: can not unmarshal "\\"Nope\\""',
         "discard"),
        (
            {"name": "x", "subjects": "a.b"},
            "invalid JSON: json: cannot unmarshal string into Go struct field "
            "StreamConfigRequest.subjects of type []string",
            "subjects",
        ),
        (
            {"name": "x", "mirror": {"name": 5}},
            "invalid JSON: json: cannot unmarshal number into Go struct field "
            "StreamConfigRequest.mirror.name of type string",
            "mirror.name",
        ),
        (
            {"name": "x", "sources": [{"name": "a", "opt_start_time": "yesterday"}]},
            'invalid JSON: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": '
            'cannot parse "yesterday" as "2006"',
            "sources[0].opt_start_time",
        ),
    ],
)
def test_decode_errors_are_invalid_json_10025(doc, description, field):
    with pytest.raises(ApiError) as exc:
        StreamConfig.from_json(doc)
    err = exc.value
    assert (err.code, err.err_code, err.description) == (400, 10025, description)
    assert err.field == field


@pytest.mark.parametrize("literal", ["1e3", "1000.0", "1E3", "5.0", "-0.0", "1.5"])
def test_a_number_with_a_fraction_or_exponent_is_no_integer_as_go_decodes_it(literal):
    """Go's encoding/json parses an integer field's literal with strconv.ParseInt: 1e3 and
    5.0 are refused as 1.5 is, quoting the literal as written (core/config/codec.py
    loads keeps it)."""
    from jetlink.core.config.codec import loads

    doc = loads('{"name": "x", "max_msgs": ' + literal + '}')
    with pytest.raises(ApiError) as exc:
        StreamConfig.from_json(doc)
    assert exc.value.description == (
        f"invalid JSON: json: cannot unmarshal number {literal} into Go struct field "
        "StreamConfigRequest.max_msgs of type int64")
    assert StreamConfig.from_json(loads('{"name": "x", "max_msgs": 1000}')).max_msgs == 1000


def test_unknown_fields_refused_like_the_strict_server_unless_lenient():
    assert StreamConfig.from_json({"name": "x", "bogus": 1}, strict=False).name == "x"
    with pytest.raises(ApiError) as exc:
        StreamConfig.from_json({"name": "x", "bogus": 1})
    assert exc.value.description == 'invalid JSON: json: unknown field "bogus"'
    assert exc.value.field == "bogus"


def test_error_document_shape():
    err = ApiError(400, 10058, "stream name already in use with a different configuration")
    assert json.loads(json.dumps(err.to_dict())) == {
        "error": {
            "code": 400,
            "err_code": 10058,
            "description": "stream name already in use with a different configuration",
        }
    }
    # err_code 0 is omitted, like the server's omitempty
    assert ApiError(400, 0, "nats: invalid key").to_dict() == {
        "error": {"code": 400, "description": "nats: invalid key"}
    }


@pytest.mark.parametrize(
    "text", ["2024-01-02T03:04:05Z", "2024-01-02T03:04:05.123456789+02:00", "2024-01-02t03:04:05z"]
)
def test_parse_time_accepts_rfc3339(text):
    assert parse_time(text).tzinfo is not None


@pytest.mark.parametrize("text", ["2024-01-02", "2024-01-02T03:04:05", "now"])
def test_parse_time_rejects_non_rfc3339(text):
    with pytest.raises(ValueError):
        parse_time(text)
