"""Run line-scope rules on one line: prefilter, full pattern with a time limit, message."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from msrunwatch.core.numbers import to_float, to_int
from msrunwatch.rules.model import Rule, Scope
from msrunwatch.rules.prefilter import Prefilter
from msrunwatch.rules.template import fingerprint, render

MATCH_TIMEOUT_S = 0.05
"""A pattern that backtracks longer than this on one line is abandoned for that line."""


@dataclass(frozen=True, slots=True)
class LineMatch:
    """A rule that matched a line, with its rendered message."""

    rule: Rule
    message: str
    fingerprint: str
    captures: tuple[tuple[str, str], ...]
    subject: str | None = None
    """The value of the rule's subject capture, if it has one and it matched."""


class LineMatcher:
    """All line rules of a rule set, ready to run on lines."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules = [r for r in rules if r.scope is Scope.LINE and r.pattern is not None]
        self._prefilter = Prefilter(r.pattern for r in self.rules if r.pattern is not None)
        self._fallback = {r.id: r.fallback for r in self.rules}
        self.timeouts = 0
        """Lines on which a rule's pattern hit the time limit."""

    def fallback_level(self, rule_id: str) -> int:
        """How readily a rule yields to others on the same record (0: never)."""
        return self._fallback.get(rule_id, 0)

    def match(self, line: str, level: str = "") -> list[LineMatch]:
        """Every rule that matches the line (and whose `when` holds for it)."""
        found: list[LineMatch] = []
        for index in self._prefilter.candidates(line):
            rule = self.rules[index]
            try:
                m = rule.match.search(line, timeout=MATCH_TIMEOUT_S)  # type: ignore[union-attr]
            except TimeoutError:
                self.timeouts += 1
                continue
            if m is None:
                continue
            captures = {k: v for k, v in m.groupdict().items() if v is not None}
            env = {**{k: _value(v) for k, v in captures.items()}, "level": level, "text": line}
            if rule.when is not None and not rule.when.truth(env):
                continue
            message = render(rule.message, env)
            subject = captures.get(rule.subject.capture) if rule.subject else None
            found.append(
                LineMatch(
                    rule, message, fingerprint(rule.id, message), tuple(captures.items()), subject
                )
            )
        return found


def _value(text: str) -> int | float | str:
    """A capture as a number when it is one (and prints the same), so conditions compare it;
    a number no log means (5,000 digits, `1e999`, `nan`) stays text."""
    number: int | float | None = to_int(text)
    if number is None:
        number = to_float(text)
    return number if number is not None and str(number) == text else text
