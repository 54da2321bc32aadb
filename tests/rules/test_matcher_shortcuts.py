"""The line matcher's shortcuts give what trying every rule on every line gives: a rule
anchored at the line's start is not tried on a line that cannot begin its match, and what a
match gives is worked out once per distinct captures (and line variables), or once per line
met again."""

from __future__ import annotations

import random
import string

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from msrunwatch.rules.anchored import first_characters
from msrunwatch.rules.matcher import LineMatcher, _first_gate
from msrunwatch.rules.model import Rule
from msrunwatch.rules.vocab import Severity
from tests.support import FIXTURES, line_rule


def rule(pattern: str, message: str = "{x}", when: str | None = None, id: str = "r") -> Rule:
    return line_rule(
        id, pattern, message, when=when, severity=Severity.WARNING, category="unclassified"
    )


@pytest.mark.parametrize(
    ("pattern", "first"),
    [
        (r"^(?P<type>[A-Za-z_]\w*)(?::\s?(?P<detail>.*))?$", "[A-Za-z_]"),
        (r"^\[(?:ERROR|CRITICAL)\] (?P<what>.+)$", r"\["),
        (r"^(?:x\.)?(?P<t>MemoryError)$", r"x|M"),
        (r"^(?=Fatal)\w+", r"[\w]"),
        (r"^a*b", "a|b"),
    ],
)
def test_the_first_character_of_an_anchored_pattern(pattern: str, first: str) -> None:
    assert first_characters(pattern) == first


@pytest.mark.parametrize(
    "pattern",
    [
        r"Error: (?P<x>.*)",  # not anchored
        r"^a*",  # matches the empty line
        r"(?i)^error",  # case folded
        r"(?m)^error",  # multi-line
        r"^.rror",  # any character
        r"^[[a-z]--[aeiou]]x",  # regex's set operations, which `re` reads otherwise
        r"^(?i:e)rror",  # a scoped flag
    ],
)
def test_what_cannot_be_told_is_not_gated(pattern: str) -> None:
    assert first_characters(pattern) is None


PATTERNS = [
    r"^(?P<x>[A-Za-z_]\w*?(?:Error|Exit)?)(?::\s?(?P<d>.*))?$",
    r"^\s*(?P<x>\S+) failed",
    r"^(?:\[(?P<x>[A-Z]+)\] |(?P<y>\d+): )?Boom",
    r"^(?P<x>[^\s:]+):\d+",
    r"^\W(?P<x>\w)",
    r"^(?:a|b*c|)(?P<x>d)",
]


@settings(max_examples=400, deadline=None)
@given(
    index=st.integers(0, len(PATTERNS) - 1),
    line=st.lists(
        st.sampled_from([*"aAbcdxE_[]: \t\x1c\x1f1-", "Error", "Boom", " failed", "é", "\u0301"]),
        max_size=12,
    ).map("".join),
)
def test_a_line_the_gate_turns_away_never_matches(index: int, line: str) -> None:
    """Told with the rule's own engine (`regex`), whose classes differ from `re`'s."""
    gate = _first_gate(rule(PATTERNS[index]))
    assert gate is not None
    if line[:1] < "\x80" and line[:1] not in gate:
        assert regex.compile(PATTERNS[index], regex.VERSION1).search(line) is None


def test_the_gates_hold_on_every_line_of_the_fixtures(rules: list[Rule]) -> None:
    """Every anchored built-in rule: no line of any fixture it matches is turned away."""
    gated = [(r, g) for r in rules if r.pattern and (g := _first_gate(r)) is not None]
    assert gated, "the built-in rules have anchored patterns"
    lines = {
        line
        for path in FIXTURES.rglob("*.log")
        for line in path.read_text("utf-8", "replace").splitlines()
    }
    for r, gate in gated:
        assert r.match is not None
        for line in lines:
            if r.match.search(line) is not None:
                assert line[:1] in gate or line[:1] >= "\x80", (r.id, line)


def test_a_message_that_reads_the_text_is_worked_out_for_each_line() -> None:
    matcher = LineMatcher([rule(r"code (?P<x>\d+)", message="{x} in {text}")])
    first = matcher.match("a code 7", "ERROR", "glog")
    second = matcher.match("b code 7", "ERROR", "glog")
    assert [m.message for m in first + second] == ["7 in a code 7", "7 in b code 7"]


def test_a_condition_on_the_line_variables_is_worked_out_for_each() -> None:
    matcher = LineMatcher([rule(r"code (?P<x>\d+)", when='level == "ERROR"')])
    assert [m.message for m in matcher.match("code 7", "ERROR", "glog")] == ["7"]
    assert matcher.match("code 7", "WARNING", "glog") == []
    assert [m.message for m in matcher.match("x code 7", "ERROR", "glog")] == ["7"]


def test_remembered_outcomes_are_the_outcomes() -> None:
    """Random lines, each matched by a fresh matcher and by one that has seen them all."""
    rules = [
        rule(r"(?P<x>\d+) (?P<y>[a-c]+)", message="{x}/{y}", id="a"),
        rule(r"^(?P<x>[a-z]+)Error", message="{x}{' at ' + frame if frame else ''}", id="b"),
        rule(r"v=(?P<x>\d+)", message="{x}", when="x > 5", id="c"),
    ]
    rng = random.Random(3)
    warm = LineMatcher(rules)
    for _ in range(500):
        line = "".join(rng.choice(string.ascii_lowercase[:4] + "0179 =vE") for _ in range(12))
        line = rng.choice(["", "keyError", "v=", "[E] "]) + line
        frame = rng.choice([None, "a.py:1 in f"])
        args = (line, rng.choice(["", "ERROR"]), rng.choice(["text", "exception"]), frame)
        assert warm.match(*args) == LineMatcher(rules).match(*args), args
