"""Text joined to a number in a rule's message or condition (`"group " + group`).

A capture that reads as a number is a number (`group name:0` gives 0), so an author cannot
know which captures will be one: text plus a number must be the text with the number
written out, never an empty message part.
"""

from __future__ import annotations

import pytest

from msrunwatch.rules.expr import Expr
from msrunwatch.rules.model import Rule
from msrunwatch.rules.template import render


@pytest.mark.parametrize(
    ("source", "values", "expected"),
    [
        ('"x " + n', {"n": 3}, "x 3"),
        ('n + " B"', {"n": 3}, "3 B"),
        ('"ratio " + n', {"n": 0.25}, "ratio 0.25"),
        ('"x " + s', {"s": "y"}, "x y"),
        ('"rank(s) " + ranks', {"ranks": [2, 3, 5]}, "rank(s) 2-3, 5"),  # as {ranks} reads
    ],
)
def test_text_plus_a_number_is_text(source: str, values: dict[str, object], expected: str) -> None:
    assert Expr(source)(values) == expected


@pytest.mark.parametrize(
    ("source", "values"),
    [('"x " + n', {}), ('"x " + n', {"n": True}), ('"x " + n', {"n": {"a": 1}})],
)
def test_unknown_or_true_false_joined_to_text_stays_unknown(
    source: str, values: dict[str, object]
) -> None:
    assert Expr(source)(values) is None


def test_a_message_names_a_capture_that_reads_as_a_number() -> None:
    template = 'found a failed collective{" in group " + group if group != None else ""}'
    assert render(template, {"group": 0}) == "found a failed collective in group 0"
    assert render(template, {"group": None}) == "found a failed collective"


def test_a_list_of_ranks_joined_to_text_reads_as_a_placeholder_does(rules: list[Rule]) -> None:
    """cause-not-in-logs wrote `str(ranks_without_log)`: `(no log for rank(s) [2, 3])`."""
    rule = next(r for r in rules if r.id == "cause-not-in-logs")
    message = render(rule.message, {"ranks_without_log": [2, 3]})
    assert message.endswith("the cause is not in these logs (no log for rank(s) 2-3)")
    assert render(rule.message, {"ranks_without_log": []}).endswith("not in these logs")
