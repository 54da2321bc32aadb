"""A rule named by the prefilter is not searched on a line that lacks the rest of what its
pattern needs (rules.needs): that may only keep out lines the pattern cannot match."""

from __future__ import annotations

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from msrunwatch.rules import needs as needs_module
from msrunwatch.rules.loader import load_rules
from msrunwatch.rules.matcher import LineMatcher
from msrunwatch.rules.needs import beyond, may_match, pattern_needs
from msrunwatch.rules.rulecache import Memo
from tests.integration.fastpaths import CASE_LINES

RULES = LineMatcher(load_rules()).rules


def test_a_loss_line_needs_a_non_finite_value() -> None:
    needs = pattern_needs(next(r.pattern for r in RULES if r.id == "loss-nan-logged") or "")
    assert needs is not None
    assert not may_match(needs, "epoch: 1 step: 2, loss is 0.3811")
    assert may_match(needs, "epoch: 1 step: 2, loss is NaN")
    assert may_match(needs, "iteration 9 | number of nan iterations: 1")


def test_needs_no_line_of_an_alphabet_can_meet() -> None:
    """A LossMonitor line's characters (read.lossonly) cannot make loss-nan-logged's `nan`
    or `inf`, nor Megatron's count; with an `n` and an `a` they can."""
    needs = pattern_needs(next(r.pattern for r in RULES if r.id == "loss-nan-logged") or "")
    loss_line = "epoch: step,lossi0123456789+-.eE"
    assert beyond(needs, loss_line)
    assert beyond(needs, loss_line.upper())  # the pattern ignores case
    assert not beyond(needs, loss_line + "na")
    assert not beyond(None, loss_line)  # nothing known: any line may match
    two = ((("ab",), ("x", "cd")),), False  # `ab`, and `x` or `cd`
    assert not beyond(two, "abcd")
    assert beyond(two, "abc")


@pytest.mark.parametrize(
    ("pattern", "needs"),
    [
        (r"abc(?:def|ghi)", (((("abc",), ("def", "ghi")),), False)),
        (r"(?i)Out of (?P<w>memory|MEM)", (((("out of ",), ("memory", "mem")),), True)),
        (r"abc|xyz\d+", (((("abc",),), (("xyz",),)), False)),
        (r"ab(?:cd)?efg", (((("efg",),),), False)),
        (r"(?i)straße\d+abcd", (((("abcd",),),), True)),  # not ASCII: left out
    ],
)
def test_what_a_pattern_needs(pattern: str, needs: object) -> None:
    assert pattern_needs(pattern) == needs


@pytest.mark.parametrize(
    "pattern",
    [
        r"\d+|abc",  # an alternative needs nothing
        r"a+",  # nothing of three characters
        r"[[:alpha:]]abc",  # regex's nested set, which `re` reads otherwise
        r"[a[b]]cde",  # the same without `[[`
        r"(?:abcd){e<=1}",  # fuzzy matching
        r"(?i)ſtop",  # a literal that is not ASCII, case ignored (`ſ` folds to `s`)
        r"\p{L}abc",  # syntax `re` does not parse
    ],
)
def test_nothing_is_told_of(pattern: str) -> None:
    assert pattern_needs(pattern) is None


def test_a_line_that_is_not_ascii_is_left_to_the_pattern() -> None:
    needs = pattern_needs(r"(?i)stop now")
    assert needs is not None
    assert may_match(needs, "ſtop now \u00e9")
    assert regex.compile(r"(?i)stop now", regex.VERSION1).search("ſtop now \u00e9")


def test_every_case_line_of_every_rule_passes_its_needs() -> None:
    """Every line of every rule's cases that a rule's pattern matches meets its needs."""
    checked = 0
    for rule in RULES:
        needs = pattern_needs(rule.pattern or "")
        if needs is None or rule.match is None:
            continue
        for line in CASE_LINES:
            if rule.match.search(line) is not None:
                assert may_match(needs, line), (rule.id, line)
                checked += 1
    assert checked > 200


PIECES = ["loss", "LOSS", " is ", ": ", "nan", "NaN", "inf", "-inf", "0.38", "x", " ", "Error"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12), st.sampled_from(RULES))
def test_a_line_kept_out_is_never_a_match(pieces: list[str], rule: object) -> None:
    line = "".join(pieces)
    pattern = rule.pattern or ""  # type: ignore[attr-defined]
    needs = pattern_needs(pattern)
    if needs is not None and not may_match(needs, line):
        assert rule.match.search(line) is None  # type: ignore[attr-defined]


def test_remembered_needs_are_the_needs_worked_out_now(
    cache: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The needs kept between runs (needs.NEEDS) are, read back from the file, what the
    pattern's parse gives now, for every built-in rule and a pattern with no needs; the
    second run parses nothing."""
    patterns = [rule.pattern or "" for rule in RULES] + [r"\d+", "ſtop (?|a|b)"]
    monkeypatch.setattr(needs_module, "NEEDS", Memo("needs", limit=4096))
    first = [pattern_needs(p) for p in patterns]
    needs_module.NEEDS.save()
    monkeypatch.setattr(needs_module, "NEEDS", Memo("needs", limit=4096))
    with monkeypatch.context() as m:
        m.setattr(needs_module, "worked_out", lambda p: pytest.fail(f"parsed again: {p}"))
        again = [pattern_needs(p) for p in patterns]
    assert again == first == [needs_module.worked_out(p) for p in patterns]
    assert sum(n is not None for n in again) > 100
    assert None in again


def test_an_edited_pattern_gets_its_own_needs(
    cache: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(needs_module, "NEEDS", Memo("needs", limit=4096))
    assert pattern_needs("loss is (?:nan|inf)") == (((("loss is ",), ("nan", "inf")),), False)
    needs_module.NEEDS.save()
    monkeypatch.setattr(needs_module, "NEEDS", Memo("needs", limit=4096))
    assert pattern_needs("loss is (?:nan|inf)x") == (((("loss is ",), ("nan", "inf")),), False)
    assert pattern_needs("loss is (?:nan|Inf)") == (((("loss is ",), ("nan", "Inf")),), False)
