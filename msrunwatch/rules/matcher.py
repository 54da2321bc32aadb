"""Run line-scope rules on one line: prefilter, full pattern with a time limit, message."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from msrunwatch.rules.model import Rule, Scope
from msrunwatch.rules.prefilter import Prefilter
from msrunwatch.rules.tables import OVERRIDES
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
    overrides: tuple[tuple[str, str], ...] = ()
    """From the rule's lookup table: the row's category, role, title and hint."""


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

    def match(
        self, line: str, level: str = "", kind: str = "", frame: str | None = None
    ) -> list[LineMatch]:
        """Every rule that matches the line (and whose `when` holds for it); `kind` and
        `frame` say what the reader knows of the line's place (see rules.variables.LINE)."""
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
            row = rule.lookup.row(captures.get(rule.lookup.key)) if rule.lookup else None
            env = {  # a capture of the rule's own shadows a line variable of the same name
                "level": level,
                "text": line,
                "kind": kind,
                "frame": frame,
                **(row or {}),
                **{k: capture_value(v) for k, v in captures.items()},
            }
            if rule.when is not None and not rule.when.truth(env):
                continue
            message = render(rule.message, env)
            subject = captures.get(rule.subject.capture) if rule.subject else None
            overrides = tuple((k, row[k]) for k in OVERRIDES if row and row.get(k))
            key = fingerprint(rule.id, message)
            found.append(LineMatch(rule, message, key, tuple(captures.items()), subject, overrides))
        return found


def capture_value(text: str) -> int | float | str:
    """A capture as a number when it is one (and prints the same), so conditions compare it."""
    try:
        number: int | float = int(text)
    except ValueError:
        try:
            number = float(text)
        except ValueError:
            return text
    return number if str(number) == text else text
