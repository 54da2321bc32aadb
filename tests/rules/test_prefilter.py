"""The prefilter: which rules a line can possibly match, found fast, and never too few."""

from __future__ import annotations

import random
import re

import pytest

from msrunwatch.rules.matcher import LineMatcher
from msrunwatch.rules.prefilter import Prefilter, required_factor, required_literals

HEADER = "[WARNING] ME(4447,7f249207cb80,python):{ts} [mindspore/ccsrc/a.cc:12] Run] "


def test_nested_alternations_give_their_literals() -> None:
    found = required_literals(r"^(?:x\.)?(?P<t>MemoryError|_ArrayMemoryError)$|std::bad_alloc'")
    assert found == (("MemoryError", "_ArrayMemoryError", "std::bad_alloc'"), False)


def test_a_pattern_without_a_literal_is_gated_by_its_character_runs() -> None:
    gates = required_factor(r"(?<![\w-])\[(?P<c>E[5-9AB]\d{4})\] .*|(?P<d>E[5-9AB]\d{4}): +")
    assert gates is not None
    assert [g.pattern for g in gates] == [r"\[E[5-9AB][\d]{4}\]\ ", r"E[5-9AB][\d]{4}:"]
    assert required_factor(r"^\w+$") is None


def reference(prefilter: Prefilter, line: str) -> list[int]:
    """What the prefilter must say: every rule whose literal or gate is in the line as it is."""
    found = set(prefilter._scan(line)) | set(prefilter._always)
    found |= {i for i, gates in prefilter._gated if any(g.search(line) for g in gates)}
    return sorted(found)


def test_lines_that_differ_only_in_time_share_the_scan_exactly(matcher: LineMatcher) -> None:
    prefilter = matcher._prefilter
    literals = [k for fold in (False, True) for k in sorted(prefilter._index[fold])]
    rng = random.Random(7)
    for _ in range(400):
        ts = f"2026-11-{rng.randint(1, 28):02d}-0{rng.randint(0, 9)}:1{rng.randint(0, 9)}:00.{rng.randint(0, 999)}.{rng.randint(0, 99)}"
        text = rng.choice(literals) + " then " + rng.choice(["Error", "EI0006", "E50001: x", ""])
        line = HEADER.format(ts=ts) + text
        assert prefilter.candidates(line) == reference(prefilter, line), line


@pytest.mark.parametrize(
    "literal",
    ["):2026", "2026-11-25", ".394 [mind", ":07.539"],
    ids=["start", "inside", "end", "colon"],
)
def test_a_literal_that_overlaps_the_time_is_looked_for_in_every_line(literal: str) -> None:
    prefilter = Prefilter([re.escape(literal), r"Boom"])
    first = HEADER.format(ts="2026-11-25-05:14:07.539.394")
    second = HEADER.format(ts="2027-12-26-06:15:08.540.395")
    assert prefilter.candidates(second + "Boom") == [1]
    hit = prefilter.candidates(first + "Boom")
    assert (0 in hit) == (literal in first), (literal, hit)


def test_a_literal_before_an_alternation_of_literals_joins_each() -> None:
    found = required_literals(r"(?<![\w-])(?P<code>E(?:1000|Z990|C001)\d): ")
    assert found == (("E1000", "EZ990", "EC001"), False)
