"""The prefilter finds the rules whose literal a line holds, overlapping ones included,
without comparing the line with every literal: a log holding all of 10,000 user rules'
literals took 326 s before."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from msrunwatch.rules.matcher import LineMatcher
from msrunwatch.rules.model import Rule
from msrunwatch.rules.prefilter import Prefilter
from msrunwatch.rules.vocab import Severity
from tests.support import line_rule

WORDS = st.text(alphabet="abcAB", min_size=4, max_size=8)


@settings(max_examples=300, deadline=None)
@given(
    literals=st.lists(WORDS, min_size=1, max_size=30, unique=True),
    line=st.text(alphabet="abcAB ", max_size=60),
)
def test_the_rules_tried_are_exactly_those_whose_literal_is_in_the_line(
    literals: list[str], line: str
) -> None:
    """Overlapping literals included (`abca` in `abcab` hides no `cab`)."""
    prefilter = Prefilter(literals)
    expected = [i for i, literal in enumerate(literals) if literal in line]
    assert prefilter.candidates(line) == expected


def user_rule(index: int, word: str) -> Rule:
    return line_rule(f"user-{index}", rf"Error {word} (?P<n>\d+)", "{n}", severity=Severity.WARNING)


def test_thousands_of_rules_each_find_their_own_line() -> None:
    words = [f"{chr(97 + i % 26)}{i:05d}{chr(97 + i * 7 % 26)}word" for i in range(3000)]
    matcher = LineMatcher([user_rule(i, w) for i, w in enumerate(words)])
    for i, word in enumerate(words):
        line = f"ValueError: Error {word} {i} near {words[(i * 7) % len(words)]}"
        assert [m.rule.id for m in matcher.match(line)] == [f"user-{i}"]
