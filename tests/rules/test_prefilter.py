"""The prefilter: which rules a line can possibly match, found fast, and never too few."""

from __future__ import annotations

import functools
import random
import re
from typing import Any

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


@functools.lru_cache(maxsize=4)
def _needs(patterns: tuple[str, ...]) -> list[Any]:
    """The rules' required literals, worked out once per rule set: parsing every pattern
    again for each line took most of this module's time."""
    return [required_literals(p) for p in patterns]


def reference(matcher: LineMatcher, line: str) -> list[int]:
    """What the prefilter must say: every rule whose literal or gate is in the line as it
    is, and the rules tried on every line."""
    found = set(matcher._prefilter.always)
    for index, needs in enumerate(_needs(tuple(r.pattern or "" for r in matcher.rules))):
        if needs is not None:
            haystack = line.lower() if needs[1] else line
            if any(literal in haystack for literal in needs[0]):
                found.add(index)
    prefilter = matcher._prefilter
    found |= {i for i, gates in prefilter._gated if any(g.search(line) for g in gates)}
    return sorted(found)


def test_lines_that_differ_only_in_numbers_share_the_scan_exactly(matcher: LineMatcher) -> None:
    """The scan is remembered per line with its digits zeroed; literals with digits (error
    codes) are still looked for in each line as it is."""
    prefilter = matcher._prefilter
    literals = sorted(literal for literal, _ in prefilter.literals)
    rng = random.Random(7)
    for _ in range(600):
        ts = f"2026-11-{rng.randint(1, 28):02d}-0{rng.randint(0, 9)}:1{rng.randint(0, 9)}:00.{rng.randint(0, 999)}.{rng.randint(0, 99)}"
        code = f"E{rng.choice('IZL')}{rng.randint(0, 9999):04d}"
        text = rng.choice(literals) + " then " + rng.choice(["Error", code, f"{code}: x", ""])
        text = "".join(str(rng.randint(0, 9)) if c.isdigit() else c for c in text)
        line = HEADER.format(ts=ts) + text
        assert prefilter.candidates(line) == reference(matcher, line), line


@pytest.mark.parametrize(
    "literal",
    ["):2026", "2026-11-25", ".394 [mind", ":07.539", "EI0006", "step 12,"],
    ids=["time start", "time inside", "time end", "colon", "code", "number"],
)
def test_a_literal_with_digits_is_looked_for_in_every_line(literal: str) -> None:
    prefilter = Prefilter([re.escape(literal), r"Boom"])
    first = HEADER.format(ts="2026-11-25-05:14:07.539.394") + "EI0006 step 12, "
    second = HEADER.format(ts="2027-12-26-06:15:08.540.395") + "EI0007 step 13, "
    assert prefilter.candidates(second + "Boom") == [1]
    hit = prefilter.candidates(first + "Boom")
    assert (0 in hit) == (literal in first), (literal, hit)
    assert prefilter.candidates(second + "Boom") == [1]


def test_a_literal_before_an_alternation_of_literals_joins_each() -> None:
    found = required_literals(r"(?<![\w-])(?P<code>E(?:1000|Z990|C001)\d): ")
    assert found == (("E1000", "EZ990", "EC001"), False)
