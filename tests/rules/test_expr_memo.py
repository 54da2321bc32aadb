"""A remembered condition (expr.RememberedCondition) answers as the condition itself: the rank-scope
rules are evaluated once per distinct state, not once per rank (issue 21, defect 14)."""

from __future__ import annotations

import random
from typing import Any

from msrunwatch.rules.expr import Expr, RememberedCondition
from msrunwatch.rules.loader import load_rules
from msrunwatch.rules.model import Scope

# Values that compare or hash equal but read differently through str(), arithmetic or
# `is a number` (True is no number), and values no key can hold.
POOL: list[Any] = [
    None,
    0,
    1,
    True,
    False,
    0.0,
    -0.0,
    1.0,
    2.5,
    float("nan"),
    "",
    "failed",
    "training",
    "hung",
    [],
    [1],
    [1.0],
    [True],
    ["oom"],
    (1,),
    {"a": 1},
    10**30,
    -3,
    1e9,
    64.0,
]


def test_values_equal_as_keys_but_read_apart_are_kept_apart() -> None:
    expr = Expr("str(x) == '1' or str(x) == '0.0' or str(y) == '[1]' or str(y) == '(1,)'")
    memo = RememberedCondition(expr)
    for x in (1, True, 1.0, 0.0, -0.0, 0, False):
        for y in ([1], [True], [1.0], (1,), (True,), (1.0,), None):
            env = {"x": x, "y": y}
            assert memo.truth(env) is expr.truth(env), env


def test_values_equal_as_keys_but_summed_apart_are_kept_apart() -> None:
    expr = Expr("sum(y) == 1 or x + 1 == 2")  # sum() counts no bool; True + 1 is 2
    memo = RememberedCondition(expr)
    for x in (True, 1, 1.0, None, False):
        for y in ([True], [1], (True,), (1,), [1.0], None):
            env = {"x": x, "y": y}
            assert memo.truth(env) is expr.truth(env), env


def test_an_unhashable_value_is_evaluated_each_time() -> None:
    expr = Expr("len(x) > 1")
    memo = RememberedCondition(expr)
    assert memo.truth({"x": {"a": 1, "b": 2}}) is True
    assert memo.truth({"x": {"a": 1}}) is False


def test_memory_stays_bounded_and_answers_stay_right_past_the_cap() -> None:
    expr = Expr("x % 7 == 3")
    memo = RememberedCondition(expr)
    for x in range(3 * RememberedCondition.MAX_KEPT):
        assert memo.truth({"x": x}) is (x % 7 == 3)
    assert len(memo._known) == RememberedCondition.MAX_KEPT


def test_every_rank_rule_answers_as_its_condition_on_mixed_states() -> None:
    """Each built-in rank-scope condition, fed the same random states through one RememberedCondition (so
    most answers come from what it remembered) and directly."""
    rules = [r for r in load_rules() if r.scope is Scope.RANK and r.when is not None]
    assert len(rules) >= 8
    pick = random.Random(21)
    for rule in rules:
        assert rule.when is not None
        memo = RememberedCondition(rule.when)
        names = sorted(rule.when.names)
        states = [{n: pick.choice(POOL) for n in names} for _ in range(12)]
        for _ in range(300):
            env = (
                pick.choice(states)
                if pick.random() < 0.8
                else {n: pick.choice(POOL) for n in names}
            )
            try:
                expected: Any = rule.when.truth(env)
            except (TypeError, ValueError, ZeroDivisionError, OverflowError) as exc:
                expected = type(exc)
            try:
                got: Any = memo.truth(env)
            except (TypeError, ValueError, ZeroDivisionError, OverflowError) as exc:
                got = type(exc)
            assert got == expected, (rule.id, env)
