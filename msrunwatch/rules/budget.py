"""How much time rule patterns may spend, per line, per file and per run, and what they gave
up on.

A pattern that backtracks is stopped on one line after MATCH_TIMEOUT_S, but a log of a
million such lines would still take hours; so each rule also has a budget per file and per
run, and all rules together one per run. A budget is a fixed amount plus ALLOWANCE_S for
each line the rule was tried on: an ordinary pattern spends microseconds a line and never
comes near it however large the log, while one that keeps hitting the limit exhausts its
fixed part within a few dozen lines. A rule out of budget is not tried on the rest of the
file (or run); every line it was not tried on, or gave up on, is counted with the first of
them, and the readers report that as a warning, never silently.

Time here is the CPU time of the thread that matches, never the wall clock: on a busy
training node (or a loaded CI machine) a pattern may wait for a CPU for longer than it runs,
and that wait must not spend a rule's budget, or the same log would give different findings
on a busy machine and an idle one. The regex module's own per-line limit counts CPU time
too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

Clock = Callable[[], float]
"""Seconds from an arbitrary origin; only differences are used."""
CPU_CLOCK: Clock = time.thread_time
"""The matching thread's own CPU time (a waiting thread spends none)."""

MATCH_TIMEOUT_S = 0.05
"""A pattern that backtracks longer than this on one line is abandoned for that line."""
ALLOWANCE_S = 0.0002
"""Budget earned per line a rule is tried on: 50 times what the slowest built-in rule
spends on a line of a real log (4 µs)."""
RULE_FILE_S = 1.0
"""Fixed time one rule may spend on one file beyond its allowance."""
RULE_RUN_S = 5.0
"""Fixed time one rule may spend in a whole run beyond its allowance."""
RUN_S = 20.0
"""Fixed time all rules together may spend in a whole run beyond their allowance."""
MIN_TIMEOUT_S = 0.005
"""The shortest limit a line is given while some budget is left."""
MAX_EXCERPT = 120


class Spend:
    """Time spent and lines tried, against a fixed budget plus the per-line allowance."""

    __slots__ = ("fixed", "left", "lines", "seconds")

    def __init__(self, fixed: float) -> None:
        self.fixed = fixed
        self.seconds = 0.0
        self.lines = 0
        self.left = fixed
        """fixed + ALLOWANCE_S * lines - seconds, kept as it changes (read on every line)."""

    def add(self, seconds: float) -> None:
        self.seconds += seconds
        self.lines += 1
        self.left += ALLOWANCE_S - seconds


@dataclass
class Abandoned:
    """Lines of one file a rule gave up on (time limit) or was not tried on (budget)."""

    rule: str
    first_text: str = ""
    first_line: int | None = None
    timed_out: int = 0
    """Lines the rule's pattern ran out of time on."""
    skipped: int = 0
    """Lines it was not tried on: its time budget (or the run's) was spent."""

    def describe(self, file: str) -> str:
        """One warning: the rule, how many lines and why, and the first of them."""
        where = f"{file}:{self.first_line}" if self.first_line else f"{self.first_text!r}"
        why = []
        if self.timed_out:
            why.append(f"{self.timed_out} took it over {MATCH_TIMEOUT_S * 1000:g} ms")
        if self.skipped:
            why.append(f"{self.skipped} were skipped once its time budget was spent")
        lines = self.timed_out + self.skipped
        return (
            f"rule {self.rule} was not run on {lines} line{'s' if lines != 1 else ''} of {file} "
            f"({', '.join(why)}); the first: {where}"
        )


@dataclass
class FileBudget:
    """One file's spending per rule, and what was abandoned in it."""

    spends: dict[str, Spend] = field(default_factory=dict)
    abandoned: dict[str, Abandoned] = field(default_factory=dict)

    def spend(self, rule: str) -> Spend:
        found = self.spends.get(rule)
        if found is None:
            found = self.spends[rule] = Spend(RULE_FILE_S)
        return found

    def abandon(self, rule: str, text: str, line: int | None, timed_out: bool) -> None:
        entry = self.abandoned.get(rule)
        if entry is None:
            entry = self.abandoned[rule] = Abandoned(rule, text[:MAX_EXCERPT], line)
        if timed_out:
            entry.timed_out += 1
        else:
            entry.skipped += 1


class Budget:
    """The run's budgets and each file's, as lines are matched."""

    def __init__(self, clock: Clock = CPU_CLOCK) -> None:
        self.clock = clock
        """What a match is charged by: CPU time, or a clock a test gives."""
        self.total = Spend(RUN_S)
        self._rules: dict[str, Spend] = {}
        self._files: dict[str, FileBudget] = {}
        self.current = FileBudget()
        """The file being read (set by `reading`)."""
        self._spends: dict[str, tuple[Spend, Spend, Spend]] = {}
        """Per rule, the spends a line it is tried on counts against (the current file's)."""

    def reading(self, key: str) -> None:
        """Lines matched from now on belong to this file."""
        found = self._files.get(key)
        if found is None:
            found = self._files[key] = FileBudget()
        self.current = found
        self._spends.clear()

    def forget(self, key: str) -> None:
        """The file was truncated or replaced: its budget and record start again."""
        self._files.pop(key, None)
        self._spends.clear()

    def abandoned(self, key: str) -> list[Abandoned]:
        found = self._files.get(key)
        return list(found.abandoned.values()) if found else []

    def rule(self, rule: str) -> Spend:
        found = self._rules.get(rule)
        if found is None:
            found = self._rules[rule] = Spend(RULE_RUN_S)
        return found

    def spends(self, rule: str) -> tuple[Spend, Spend, Spend]:
        """What a line the rule is tried on counts against: its spend in the current file,
        its spend in the run and the run's (see `limit`)."""
        found = self._spends.get(rule)
        if found is None:
            found = self._spends[rule] = (self.current.spend(rule), self.rule(rule), self.total)
        return found

    def timeout(self, rule: str) -> float:
        """How long this rule may run on the next line: 0 when a budget is spent."""
        return limit(self.spends(rule))

    def charge(self, rule: str, seconds: float) -> None:
        for spend in self.spends(rule):
            spend.add(seconds)


def limit(spends: tuple[Spend, Spend, Spend]) -> float:
    """How long a rule may run on its next line, from its spends: 0 when one is spent."""
    left = min(spends[0].left, spends[1].left, spends[2].left)
    return 0.0 if left <= 0 else min(MATCH_TIMEOUT_S, max(left, MIN_TIMEOUT_S))
