"""The fast-path tests can fail: each shortcut, made to skip a rule (or a fact), is caught.

Each sabotage below breaks one shortcut of the reader only where the shortcuts are taken
(the slow path of read.shortcuts.off() is left whole); the deterministic part of
test_fast_paths.py (LossMonitor lines of every loss read in bulk: fastpaths.loss_lines; every
rule's cases read one by one alone, and each rule's first firing case embedded in a real
log: fastpaths.placings) must then find facts that differ. No case shares a file with another, so whether a
sabotage is caught does not depend on which cases there are or how they are grouped. When a shortcut is rewritten (block-level extraction, say), point its
sabotage at the new code: a shortcut nothing here breaks is a shortcut nothing tests.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from msrunwatch.read import extract, quiet, records, scan
from msrunwatch.read import patterns as P
from msrunwatch.read.shortcuts import SWITCH
from msrunwatch.rules import matcher, prefilter
from tests.integration.fastpaths import (
    BLOCKS,
    RULE_CASES,
    RULES,
    fast_difference,
    loss_lines_difference,
    placings,
    readings,
    slow_facts,
    slow_loss_facts,
)

Sabotage = Callable[[pytest.MonkeyPatch], None]


def _index(rule_id: str) -> int:
    line_rules = matcher.LineMatcher(RULES).rules
    return next(i for i, r in enumerate(line_rules) if r.id == rule_id)


def bulk_lines_skip_the_rules(patch: pytest.MonkeyPatch) -> None:
    """LossMonitor lines read in bulk for progress only (as before issue 18)."""
    original = extract.Extractor.progress_line

    def progress_only(self: Any, *args: Any, **kwargs: Any) -> None:
        if self._every_rule:
            return original(self, *args, **kwargs)
        rules, self._rules = self._rules, lambda *a, **k: None
        try:
            original(self, *args, **kwargs)
        finally:
            del self._rules
            assert self._rules == rules

    patch.setattr(extract.Extractor, "progress_line", progress_only)


def quiet_lines_forget_a_rule(patch: pytest.MonkeyPatch) -> None:
    """The quiet-line pattern built without cpp-terminate's literal."""
    original = matcher.LineMatcher.text_needs

    def needs(self: Any) -> Any:
        found = original(self)
        assert found is not None
        literals, gates = found
        return frozenset(x for x in literals if not x[0].startswith("terminate called")), gates

    patch.setattr(matcher.LineMatcher, "text_needs", needs)


def floods_taken_as_quiet(patch: pytest.MonkeyPatch) -> None:
    """A slice of a flood of different prints taken as quiet without looking."""
    patch.setattr(quiet.QuietLines, "none_in", lambda self, buf, start, stop: True)


def a_line_that_fired_taken_as_inert(patch: pytest.MonkeyPatch) -> None:
    """A repeated print not read again even when it fired a rule."""
    patch.setattr(extract.Extractor, "_no_news", lambda self, text: True)


def the_prefilter_drops_a_rule(patch: pytest.MonkeyPatch) -> None:
    """The rules' prefilter never names oom-memory-not-enough."""
    original, dropped = prefilter.Prefilter.candidates, _index("oom-memory-not-enough")
    patch.setattr(
        prefilter.Prefilter,
        "candidates",
        lambda self, line: [i for i in original(self, line) if i != dropped],
    )


def a_gated_rule_never_holds(patch: pytest.MonkeyPatch) -> None:
    """The rules tried on every line (python-exception) judged unable to hold."""
    patch.setattr(matcher.LineMatcher, "_may_hold", lambda self, *args: False)


def warning_lines_passed_over(patch: pytest.MonkeyPatch) -> None:
    """The scanner passes WARNING lines over as it does INFO lines."""
    skipped = rb"\[(?:INFO|DEBUG|WARNING)\] [A-Za-z_]+\("
    patch.setattr(P, "CANDIDATE_LINE", P.re.compile(rb"\n(?!" + skipped + rb")[^\n]*"))
    patch.setattr(P, "NOT_CANDIDATE", P.re.compile(rb"\n(?:" + skipped + rb")"))


def a_shapes_guard_says_no(patch: pytest.MonkeyPatch) -> None:
    """The memory-summary shape's literal test fails every line."""
    original = P.Shape.could_match

    def could_match(self: P.Shape, text: str) -> bool:
        return False if SWITCH.on and self is P.MEMORY_LINE else original(self, text)

    patch.setattr(P.Shape, "could_match", could_match)


def the_plain_facts_guard_says_no(patch: pytest.MonkeyPatch) -> None:
    """The one scan for every plain-line fact never finds a literal."""
    original = P.AnyOf.could_match

    def could_match(self: P.AnyOf, text: str) -> bool:
        return False if SWITCH.on and self is P.PLAIN_FACTS else original(self, text)

    patch.setattr(P.AnyOf, "could_match", could_match)


class _Forgetful(dict):  # type: ignore[type-arg]
    """A memo that remembers every answer as nothing."""

    def __setitem__(self, key: object, value: object) -> None:
        super().__setitem__(key, () if isinstance(value, tuple) else None)


def remembered_lines_forget_their_rules(patch: pytest.MonkeyPatch) -> None:
    """A line met again (the matcher's per-line memo) gives no finding."""
    original = matcher.LineMatcher.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self._lines = _Forgetful()

    patch.setattr(matcher.LineMatcher, "__init__", init)


def remembered_outcomes_forget_their_rules(patch: pytest.MonkeyPatch) -> None:
    """A rule's match with captures seen before (the outcome memo) gives no finding."""
    original = matcher.LineMatcher.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self._outcomes = _Forgetful()

    patch.setattr(matcher.LineMatcher, "__init__", init)


def rules_need_too_much(patch: pytest.MonkeyPatch) -> None:
    """Every line taken to lack the rest of what a rule's pattern needs (rules.needs)."""
    patch.setattr(matcher, "may_match", lambda needs, line: False)


def anchored_rules_start_nowhere(patch: pytest.MonkeyPatch) -> None:
    """The first-character test of rules anchored at the line's start lets no line by."""
    original = matcher._first_gate
    patch.setattr(
        matcher, "_first_gate", lambda rule: None if original(rule) is None else frozenset()
    )


def stage_lines_read_fast_lose_their_stage(patch: pytest.MonkeyPatch) -> None:
    """Compile stages' timings read from the bytes, a run at a time (FileScanner._stage_run),
    add nothing."""
    patch.setattr(extract.Extractor, "stage_lines", lambda self, *args: None)


def compiling_lines_not_picked_out(patch: pytest.MonkeyPatch) -> None:
    """The scanner's search for marked INFO lines (patterns.marked_lines) finds no
    `compiling` line."""
    original = P.marked_lines
    patch.setattr(P, "marked_lines", lambda buf, end: [x for x in original(buf, end) if x[0] == 0])


def short_lines_taken_as_quiet(patch: pytest.MonkeyPatch) -> None:
    """The quiet-line test (QuietLines.quiet: single lines, and the slices of a flood of
    few distinct prints) says yes to every line under 60 bytes without looking."""
    original = quiet.QuietLines.quiet
    patch.setattr(
        quiet.QuietLines, "quiet", lambda self, line: len(line) < 60 or original(self, line)
    )


def quiet_runs_passed_over_inside_a_record(patch: pytest.MonkeyPatch) -> None:
    """Runs of quiet lines counted in one go even inside a traceback (Records.at_rest)."""
    patch.setattr(records.Records, "at_rest", lambda self: True)


def lines_of_one_length_share_a_prefilter_answer(patch: pytest.MonkeyPatch) -> None:
    """The prefilter remembers its answer per line length instead of per line with its
    digits zeroed (prefilter.zeroed)."""
    patch.setattr(prefilter, "zeroed", lambda line: b"%d" % len(line))


def no_bulk_progress_parsed(patch: pytest.MonkeyPatch) -> None:
    """Of the LossMonitor lines read in bulk, none is parsed for progress."""
    patch.setattr(scan, "_parsed_from", lambda buf, starts: len(starts))


def nan_losses_passed_over(patch: pytest.MonkeyPatch) -> None:
    """The LossMonitor lines read.lossonly passes over are those of any loss, `nan` too."""
    patch.setattr(P, "LOSS_SHAPE", P.LOSS_SHAPE.split(b"loss is ")[0] + b"loss is [^\n]*?")


SABOTAGES: dict[str, Sabotage] = {
    f.__name__: f
    for f in (
        bulk_lines_skip_the_rules,
        quiet_lines_forget_a_rule,
        floods_taken_as_quiet,
        a_line_that_fired_taken_as_inert,
        the_prefilter_drops_a_rule,
        a_gated_rule_never_holds,
        warning_lines_passed_over,
        a_shapes_guard_says_no,
        the_plain_facts_guard_says_no,
        no_bulk_progress_parsed,
        remembered_lines_forget_their_rules,
        remembered_outcomes_forget_their_rules,
        anchored_rules_start_nowhere,
        stage_lines_read_fast_lose_their_stage,
        compiling_lines_not_picked_out,
        rules_need_too_much,
        short_lines_taken_as_quiet,
        quiet_runs_passed_over_inside_a_record,
        lines_of_one_length_share_a_prefilter_answer,
        nan_losses_passed_over,
    )
}


@pytest.mark.parametrize("name", sorted(SABOTAGES))
def test_a_shortcut_that_skips_a_rule_is_caught(
    name: str, case_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for case in RULE_CASES:  # the slow path's facts, before the sabotage
        for embed in placings(case):
            for block in readings(embed):
                slow_facts(case, case_root, embed, block)
    for block in BLOCKS:
        slow_loss_facts(case_root, block)
    SABOTAGES[name](monkeypatch)
    fast = matcher.LineMatcher(RULES)  # made after the sabotage
    if loss_lines_difference(case_root, fast) is not None:
        return
    for case in RULE_CASES:
        if fast_difference(case, case_root, fast) is not None:
            return
    pytest.fail(f"{name}: every rule's case read the same; the fast-path tests would pass")
