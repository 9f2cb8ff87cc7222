"""A direct get's reply header block: the server appends its Nats-Stream, Nats-Subject,
Nats-Sequence, Nats-Time-Stamp (and a batch's Nats-Num-Pending, Nats-Last-Sequence) after
the stored message's own block (nats-server's getDirectRequest); core/live/jetstream.py
``stored_block`` gives the message's block back byte for byte, and core/live/client.py
``parsed_headers`` reads a block as nats-py does (status line included)."""

from __future__ import annotations

import pytest

from jetlink.core.live.client import parsed_headers
from jetlink.core.live.jetstream import stored_block

SERVER = (b"Nats-Stream: RC\r\nNats-Subject: rc.a\r\nNats-Sequence: 7\r\n"
          b"Nats-Time-Stamp: 2026-11-29T07:53:19.682902693Z\r\nNats-Num-Pending: 0\r\n"
          b"Nats-Last-Sequence: 6\r\n\r\n")


@pytest.mark.parametrize(("block", "own"), [
    (b"NATS/1.0\r\n" + SERVER, None),  # no header of its own
    (b"NATS/1.0\r\nX-A: 1\r\nX-A: 2\r\n" + SERVER, b"NATS/1.0\r\nX-A: 1\r\nX-A: 2\r\n\r\n"),
    # a RePublish's headers, the same names as the server's: kept, with their values
    (b"NATS/1.0\r\nNats-Stream: RP\r\nNats-Subject: rp.a\r\nNats-Sequence: 1\r\n" + SERVER,
     b"NATS/1.0\r\nNats-Stream: RP\r\nNats-Subject: rp.a\r\nNats-Sequence: 1\r\n\r\n"),
    (b"NATS/1.0\r\nX-Odd:  spaced value \r\n" + SERVER,
     b"NATS/1.0\r\nX-Odd:  spaced value \r\n\r\n"),
])
def test_the_stored_block_is_what_precedes_the_servers_headers(block, own):
    assert stored_block(block) == own


@pytest.mark.parametrize(("block", "parsed"), [
    (None, None),
    (b"NATS/1.0 204 EOB\r\nNats-Num-Pending: 0\r\nNats-Last-Sequence: 5\r\n\r\n",
     {"Status": "204", "Description": "EOB", "Nats-Num-Pending": "0",
      "Nats-Last-Sequence": "5"}),
    (b"NATS/1.0 404 Message Not Found\r\n\r\n",
     {"Status": "404", "Description": "Message Not Found"}),
    (b"NATS/1.0\r\nA: 1\r\nA: 2\r\n\r\n", {"A": "2"}),  # nats-py keeps the last
])
def test_blocks_are_parsed_as_nats_py_parses_them(block, parsed):
    assert parsed_headers(block) == parsed
