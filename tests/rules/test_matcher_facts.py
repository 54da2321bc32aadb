"""What the line matcher works out from a rule's texts (whether its outcome reads the line's
text, the characters an anchored pattern may start with) is remembered between runs
(rules.matcher.FACTS): for every built-in line rule, the remembered answer is the one
worked out now, and a rule whose texts differ is never given another's answer."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from msrunwatch.rules import matcher, rulecache
from msrunwatch.rules.expr import Expr
from msrunwatch.rules.loader import load_rules
from msrunwatch.rules.model import Rule, Scope

LINE_RULES = [r for r in load_rules(None) if r.scope is Scope.LINE and r.pattern]


def worked_out(rule: Rule) -> tuple[bool, frozenset[str] | None]:
    """The slow path: both facts computed now, as before they were remembered."""
    chars = matcher._first_gate_now(rule.pattern or "")
    return matcher._reads_text_now(rule), None if chars is None else frozenset(chars)


def remembered(rule: Rule) -> tuple[bool, frozenset[str] | None]:
    return matcher._reads_text(rule), matcher._first_gate(rule)


@pytest.fixture(autouse=True)
def empty_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matcher, "FACTS", rulecache.Memo("matcher", limit=4096))


def reread(monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo as the next process reads it, with the slow path out of reach."""
    matcher.FACTS.save()
    monkeypatch.setattr(matcher, "FACTS", rulecache.Memo("matcher", limit=4096))
    monkeypatch.setattr(matcher, "_reads_text_now", lambda *a: pytest.fail("worked out"))
    monkeypatch.setattr(matcher, "_first_gate_now", lambda *a: pytest.fail("worked out"))


def test_every_line_rule_s_facts_from_the_memo_are_the_worked_out_ones(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = {r.id: worked_out(r) for r in LINE_RULES}
    assert len(expected) > 100
    assert any(reads for reads, _ in expected.values())
    assert any(chars for _, chars in expected.values())
    first = {r.id: remembered(r) for r in LINE_RULES}
    reread(monkeypatch)
    again = {r.id: remembered(r) for r in LINE_RULES}
    assert first == again == expected
    assert not matcher.FACTS._new  # every answer came from the file


def test_a_rule_with_other_texts_gets_its_own_answer(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rule = LINE_RULES[0]
    plain = dataclasses.replace(rule, message="failed", when=None, fallback_when=None)
    reading = dataclasses.replace(plain, when=Expr("'x' in text"))
    also = dataclasses.replace(plain, fallback_when=Expr("'x' in text"))
    shown = dataclasses.replace(plain, message="failed: {text}")
    anchored = dataclasses.replace(plain, pattern=r"^\[ERROR\] x")
    other = dataclasses.replace(plain, pattern=r"^x\[ERROR\]")
    rules = [plain, reading, also, shown, anchored, other]
    expected = [worked_out(r) for r in rules]
    assert [reads for reads, _ in expected] == [False, True, True, True, False, False]
    assert expected[4][1] == frozenset("[") and expected[5][1] == frozenset("x")
    for r in rules:
        remembered(r)
    reread(monkeypatch)
    assert [remembered(r) for r in rules] == expected


def test_with_the_cache_off_the_facts_are_worked_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(rulecache.OFF, "1")
    assert [remembered(r) for r in LINE_RULES[:20]] == [worked_out(r) for r in LINE_RULES[:20]]
    assert not matcher.FACTS._new
