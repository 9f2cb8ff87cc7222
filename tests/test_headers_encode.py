"""``encode_headers_fv`` (core/headers.py): its fast path (names that are tokens, one string,
or a one-string list, each) gives the bytes and first values the general loop gives."""

from __future__ import annotations

import pytest

from jetlink.core import headers as H
from jetlink.core.errors import JetlinkError


@pytest.mark.parametrize("headers,block", [
    ({"A": "1"}, b"NATS/1.0\r\nA: 1\r\n\r\n"),
    ({"Nats-Batch-Id": "b", "Nats-Batch-Sequence": "2", "Nats-Batch-Commit": "1"},
     b"NATS/1.0\r\nNats-Batch-Id: b\r\nNats-Batch-Sequence: 2\r\nNats-Batch-Commit: 1\r\n\r\n"),
    ({"A": ["1"], "B": " two \r\n"}, b"NATS/1.0\r\nA: 1\r\nB: two\r\n\r\n"),
    ({"A": ["1", "2"], "B": "x"}, b"NATS/1.0\r\nA: 1\r\nA: 2\r\nB: x\r\n\r\n"),  # general loop
    ({" A ": "1", "B": b"raw"}, b"NATS/1.0\r\nA: 1\r\nB: raw\r\n\r\n"),  # general loop
    ({"": "1"}, None),
], ids=["one", "batch", "list-of-one", "two-values", "spaced-name", "empty-name"])
def test_encode_headers_fv(headers, block):
    hdr, fv = H.encode_headers_fv(headers)
    assert hdr == block
    assert fv == (H.first_values(hdr) if hdr else {})


def test_a_name_that_is_not_a_token_is_refused_after_a_good_one():
    with pytest.raises(JetlinkError) as e:
        H.encode_headers_fv({"A": "1", "b c": "2"})
    assert str(e.value) == "nats: invalid header: 'b c'"
