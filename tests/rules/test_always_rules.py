"""A rule with no literal is not tried on a line its `when` cannot hold on: one whose
condition needs a capture, none of whose literals the line holds."""

from __future__ import annotations

from msrunwatch.rules.matcher import LineMatcher
from msrunwatch.rules.model import Rule
from tests.support import line_rule

PATTERN = r"^(?P<type>[A-Za-z_]\w*?(?P<suffix>Error|Exit)?)(?::\s?(?P<detail>.*))?$"


def rule(when: str) -> Rule:
    return line_rule("bare", PATTERN, "{type}", when=when)


def tried(matcher: LineMatcher) -> int:
    return matcher.budget.rule("bare").lines


def test_a_capture_the_condition_needs_gates_the_rule() -> None:
    matcher = LineMatcher([rule('kind == "exception" or suffix')])
    assert matcher.text_needs() == (frozenset({("Error", False), ("Exit", False)}), [])
    assert matcher.match("Something", kind="text") == []
    assert tried(matcher) == 0
    assert [m.message for m in matcher.match("KeyError: 'k'", kind="text")] == ["KeyError"]
    assert [m.message for m in matcher.match("Boom: x", kind="exception")] == ["Boom"]
    assert matcher.match("Boom", level="WARNING", kind="glog") == []
    assert tried(matcher) == 2


def test_a_condition_that_needs_no_capture_is_not_gated() -> None:
    matcher = LineMatcher([rule('kind != "exception" or suffix')])
    assert matcher.text_needs() is None
    assert [m.message for m in matcher.match("Something", kind="text")] == ["Something"]


def test_a_condition_on_the_text_is_not_gated() -> None:
    matcher = LineMatcher([rule('suffix or "x" in text')])
    assert matcher.text_needs() is None
    assert [m.message for m in matcher.match("xyz", kind="text")] == ["xyz"]
