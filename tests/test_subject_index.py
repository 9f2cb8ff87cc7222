"""core/subjects.py ``SubjectIndex``: the candidates it gives for a subject hold every key a
plain scan with the one rule (``overlaps``, ``matches``) finds, so the catalog's route and
the overlap check (core/streamdef.py, core/config/validate.py ``overlapping_stream``) answer
exactly as a scan of every stream; and changes are incremental."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jetlink.core.config.stream import StreamConfig
from jetlink.core.config.validate import overlapping_stream
from jetlink.core.subjects import SubjectIndex, matches, overlaps

PROPS = settings(max_examples=300, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])

# few tokens so that subjects meet often; '*' and '>' whole tokens anywhere (also where a
# subject is invalid: '>' not last), and the server's quirk tokens starting with '*' / '>'
_token = st.sampled_from(["a", "b", "c", "*", ">", "*x", ">y", "a*", ""])
subject = st.lists(_token, min_size=1, max_size=4).map(".".join)
_held = st.lists(subject, min_size=0, max_size=3)


def _scan(index: dict[int, list[str]], q: str) -> set[int]:
    return {k for k, held in index.items()
            if any(overlaps(q, s) or matches(s, q) for s in held)}


@PROPS
@given(st.dictionaries(st.integers(0, 30), _held, max_size=12), st.lists(subject, max_size=6))
def test_candidates_hold_every_key_a_scan_finds(keys, queries):
    idx: SubjectIndex[int] = SubjectIndex()
    for k, held in keys.items():
        idx.put(k, held)
    for q in queries + ["a", "a.b", "*", ">", "*.>", "a.>"]:
        found = idx.candidates(q)
        assert _scan(keys, q) <= found, q
        assert found <= {k for k, held in keys.items() if held}
        # the rule applied to the candidates: the scan's answer, exactly
        assert {k for k in found if any(overlaps(q, s) for s in keys[k])} == \
            {k for k, held in keys.items() if any(overlaps(q, s) for s in held)}
        assert {k for k in found if any(matches(s, q) for s in keys[k])} == \
            {k for k, held in keys.items() if any(matches(s, q) for s in held)}


@PROPS
@given(st.lists(st.tuples(st.integers(0, 8), _held), max_size=25),
       st.lists(subject, max_size=6))
def test_incremental_changes_equal_an_index_built_whole(changes, queries):
    idx: SubjectIndex[int] = SubjectIndex()
    now: dict[int, list[str]] = {}
    for k, held in changes:  # put (an empty list: the key dropped)
        if held:
            idx.put(k, held)
            now[k] = held
        else:
            idx.discard(k)
            now.pop(k, None)
    whole: SubjectIndex[int] = SubjectIndex()
    for k, held in now.items():
        whole.put(k, held)
    assert len(idx) == len(now)
    for q in queries + [">"]:
        assert idx.candidates(q) == whole.candidates(q), q
    for k in list(now):
        idx.discard(k)
    assert idx._root.empty() and not idx._odd  # every branch dropped with its last subject


def _configs(streams: list[list[str]]) -> dict[str, StreamConfig]:
    return {f"S{i}": StreamConfig(name=f"S{i}", subjects=held) for i, held in enumerate(streams)}


class _Indexed(dict):
    """A name -> config mapping with its subjects indexed (as core/streamdef.py
    ``StreamConfigs``): the names that can overlap, in the mapping's order."""

    def __init__(self, configs: dict[str, StreamConfig]) -> None:
        super().__init__(configs)
        self.order = {name: i for i, name in enumerate(configs)}
        self.index: SubjectIndex[str] = SubjectIndex()
        for name, cfg in configs.items():
            self.index.put(name, cfg.subjects)

    def overlap_candidates(self, subjects: list[str]) -> list[str]:
        return sorted(self.index.candidates_of(subjects), key=self.order.__getitem__)


_valid_token = st.sampled_from(["a", "b", "c", "*", "*x", ">y"])


@st.composite
def valid_subject(draw):
    parts = draw(st.lists(_valid_token, min_size=0, max_size=3))
    if not parts or draw(st.booleans()):
        parts.append(draw(st.sampled_from([">", "a", "b"])))
    return ".".join(parts)


@PROPS
@given(st.lists(st.lists(valid_subject(), max_size=3), max_size=10),
       st.lists(valid_subject(), min_size=1, max_size=3), st.integers(0, 10))
def test_overlapping_stream_indexed_names_the_same_clash(streams, mine, skip):
    plain = _configs(streams)
    assert overlapping_stream(mine, _Indexed(plain), f"S{skip}") == \
        overlapping_stream(mine, plain, f"S{skip}")
