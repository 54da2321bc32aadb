"""Rule time budgets count the CPU time matching spent, never time spent waiting for a CPU:
the same log gives the same findings on a loaded machine as on an idle one."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import regex

from msrunwatch.rules import budget
from msrunwatch.rules.matcher import LineMatcher
from msrunwatch.rules.model import Rule
from tests.support import line_rule

LINES = [f"BOOM {n}" for n in range(8)]


def boom_rule() -> Rule:
    return line_rule("boom", r"BOOM (?P<n>\d+)", "boom")


class Waiting:
    """A pattern that waits before it matches, as a thread does that the kernel has taken
    off its CPU: time passes on the wall, none on the thread's CPU."""

    def __init__(self, pattern: str, wait: float) -> None:
        self._pattern = regex.compile(pattern)
        self._wait = wait

    def search(self, line: str, timeout: float | None = None) -> regex.Match[str] | None:
        time.sleep(self._wait)
        return self._pattern.search(line, timeout=timeout)


@pytest.fixture
def tiny_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Budgets a single 20 ms wait would exhaust, were waiting counted."""
    monkeypatch.setattr(budget, "RULE_FILE_S", 0.01)
    monkeypatch.setattr(budget, "RULE_RUN_S", 0.01)
    monkeypatch.setattr(budget, "RUN_S", 0.01)


def waiting_matcher(clock: budget.Clock = budget.CPU_CLOCK) -> LineMatcher:
    rule = boom_rule()
    rule.__dict__["match"] = Waiting(r"BOOM (?P<n>\d+)", wait=0.02)
    matcher = LineMatcher([rule], clock)
    matcher.reading("worker_0.log")
    return matcher


def matched(matcher: LineMatcher, file: int = 0) -> list[int]:
    """Which of a file's lines the rule matched (each file's lines are its own: the
    matcher remembers the result of a line it has seen)."""
    lines = [f"BOOM {file}{n:02}" for n in range(len(LINES))]
    return [n for n, line in enumerate(lines) if matcher.match(line, lineno=n + 1)]


@pytest.mark.usefixtures("tiny_budgets")
def test_waiting_for_a_cpu_spends_no_budget() -> None:
    matcher = waiting_matcher()
    assert matched(matcher) == list(range(len(LINES)))
    assert matcher.abandoned("worker_0.log") == []


@pytest.mark.usefixtures("tiny_budgets")
def test_a_wall_clock_budget_would_give_up_on_the_same_lines() -> None:
    """The same run charged by the wall clock (as before): the first wait spends the
    budget and every later line is skipped, which is what a busy machine used to do."""
    matcher = waiting_matcher(time.perf_counter)
    assert matched(matcher) == [0, 1]  # the second line gets the last 5 ms
    (gave_up,) = matcher.abandoned("worker_0.log")
    assert gave_up.skipped == len(LINES) - 2 and gave_up.first_line == 3


def stepping(step: float) -> Iterator[float]:
    now = 0.0
    while True:
        yield now
        now += step


@pytest.fixture
def small_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(budget, "RULE_FILE_S", 0.1)
    monkeypatch.setattr(budget, "RULE_RUN_S", 0.3)


@pytest.mark.usefixtures("small_budgets")
def test_a_budget_is_spent_by_the_clock_it_is_given() -> None:
    """An injected clock makes the budget's arithmetic exact: each search costs 40 ms,
    charged at most the limit it was given: 40 + 40 + 20.4 ms of the rule's 0.1 s per file
    (plus 0.2 ms a line), then a last line with the 5 ms every line gets while some
    budget is left."""
    ticks = stepping(0.04)
    matcher = LineMatcher([boom_rule()], lambda: next(ticks))
    matcher.reading("worker_0.log")
    assert matched(matcher) == [0, 1, 2, 3]
    (gave_up,) = matcher.abandoned("worker_0.log")
    assert (gave_up.skipped, gave_up.timed_out, gave_up.first_line) == (4, 0, 5)
    assert "4 were skipped once its time budget was spent" in gave_up.describe("worker_0.log")


@pytest.mark.usefixtures("small_budgets")
def test_a_fresh_budget_forgets_what_earlier_runs_spent() -> None:
    ticks = stepping(0.04)
    matcher = LineMatcher([boom_rule()], lambda: next(ticks))
    for n in range(4):  # earlier files: the rule's run budget (0.3 s) is spent
        matcher.reading(f"earlier_{n}.log")
        matched(matcher, file=n + 1)
    matcher.reading("worker_0.log")
    assert matched(matcher, file=8) == []
    matcher.fresh_budget()
    matcher.reading("worker_0.log")
    assert matched(matcher, file=9) == [0, 1, 2, 3]


def test_the_default_clock_is_the_threads_cpu_time() -> None:
    assert LineMatcher([boom_rule()]).budget.clock is time.thread_time


def test_a_pause_longer_than_the_line_limit_is_not_the_rules() -> None:
    """A garbage collection of a large heap, or another thread, can take seconds of the
    process's CPU during one search; the pattern itself is stopped at the line limit
    (50 ms), so no search is charged more than that, and one pause never spends a rule."""
    readings = iter([0.0, 10.0] + [10.0 + n * 1e-6 for n in range(100)])
    matcher = LineMatcher([boom_rule()], lambda: next(readings))
    matcher.reading("worker_0.log")
    assert matched(matcher) == list(range(len(LINES)))
    assert matcher.abandoned("worker_0.log") == []
    assert matcher.budget.rule("boom").seconds < 0.051
