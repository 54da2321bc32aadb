"""Run line-scope rules on one line: prefilter, full pattern within its time budget, message."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence

import regex

from msrunwatch.core.compat import dataclass
from msrunwatch.core.numbers import to_float, to_int
from msrunwatch.rules.budget import Abandoned, Budget
from msrunwatch.rules.model import Rule, Scope
from msrunwatch.rules.prefilter import Prefilter, capture_literals
from msrunwatch.rules.tables import OVERRIDES
from msrunwatch.rules.template import fingerprint, render


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
        self.budget = Budget()
        """Time spent per rule, per file and per run, and the lines given up on."""
        self._always = frozenset(self._prefilter.always)
        self._needs: dict[tuple[int, str, str], set[tuple[str, bool]] | None] = {}
        """Per rule tried on every line, level and kind: what a line needs for it to hold."""
        self.gave_up = False
        """A rule was abandoned on the last line matched: its result is not the line's own
        (the reader must not reuse it for a repeat of the line)."""

    def text_needs(self) -> tuple[frozenset[tuple[str, bool]], list[re.Pattern[str]]] | None:
        """What a line read as plain text (no GLOG level, not ending a traceback, no frame)
        must contain for a rule to be tried on it and hold: one of the literals (with
        whether case is ignored) or a match of one of the gates; None when that cannot be
        told (a rule tried on every line whose condition could hold on any text).

        A rule tried on every line counts when its `when` is false on such a line with
        none of its captures: then a capture it names must have taken part in the match,
        and that capture's literals are what the line needs."""
        literals = set(self._prefilter.literals)
        for index in self._prefilter.always:
            needs = _capture_needs(self.rules[index], "", "text")
            if needs is None:
                return None
            literals.update(needs)
        return frozenset(literals), self._prefilter.gates

    def _may_hold(self, index: int, line: str, level: str, kind: str) -> bool:
        """Whether a rule tried on every line can hold on this one (frame unknown): not
        when its `when` needs a capture none of whose literals the line holds."""
        key = (index, level, kind)
        if key not in self._needs:
            if len(self._needs) >= 4096:
                self._needs.clear()
            self._needs[key] = _capture_needs(self.rules[index], level, kind)
        needs = self._needs[key]
        if needs is None:
            return True
        if any(literal in line for literal, fold in needs if not fold):
            return True
        folded = [literal for literal, fold in needs if fold]
        if not folded:
            return False
        if not line.isascii():  # Unicode case folding: let the pattern decide
            return True
        lowered = line.lower()
        return any(literal in lowered for literal in folded)

    def fallback_level(self, rule_id: str) -> int:
        """How readily a rule yields to others on the same record (0: never)."""
        return self._fallback.get(rule_id, 0)

    def reading(self, key: str) -> None:
        """The lines matched from now on are of this file (for its budget and its record of
        abandoned lines); a new key starts a fresh record."""
        self.budget.reading(key)

    def forget(self, key: str) -> None:
        """A file was truncated or replaced: its record starts again."""
        self.budget.forget(key)

    def abandoned(self, key: str) -> list[Abandoned]:
        """Lines of a file that rules gave up on or were not tried on, per rule."""
        return self.budget.abandoned(key)

    def match(
        self,
        line: str,
        level: str = "",
        kind: str = "",
        frame: str | None = None,
        lineno: int | None = None,
        every_rule: bool = False,
    ) -> list[LineMatch]:
        """Every rule that matches the line (and whose `when` holds for it); `kind` and
        `frame` say what the reader knows of the line's place (see rules.variables.LINE).
        A rule whose pattern runs out of time on the line, or out of budget, is counted as
        abandoned (with `lineno`, when the reader gives it). `every_rule`: no prefilter,
        every rule's pattern is tried (the reader's shortcuts are off, see read.shortcuts)."""
        found: list[LineMatch] = []
        self.gave_up = False
        indexes = range(len(self.rules)) if every_rule else self._prefilter.candidates(line)
        for index in indexes:
            if (
                not every_rule
                and index in self._always
                and frame is None
                and not self._may_hold(index, line, level, kind)
            ):
                continue
            rule = self.rules[index]
            m = self._search(rule, line, lineno)
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

    def _search(self, rule: Rule, line: str, lineno: int | None) -> regex.Match[str] | None:
        """The rule's pattern on the line, within the time it has left."""
        limit = self.budget.timeout(rule.id)
        if limit <= 0:
            self.budget.current.abandon(rule.id, line, lineno, timed_out=False)
            self.gave_up = True
            return None
        began = time.perf_counter()
        try:
            return rule.match.search(line, timeout=limit)  # type: ignore[union-attr]
        except TimeoutError:
            self.budget.current.abandon(rule.id, line, lineno, timed_out=True)
            self.gave_up = True
            return None
        finally:
            self.budget.charge(rule.id, time.perf_counter() - began)


def _capture_needs(rule: Rule, level: str, kind: str) -> set[tuple[str, bool]] | None:
    """Literals one of which a line of this level and kind (no frame) needs for a rule
    tried on every line to hold (see LineMatcher.text_needs), or None: not known."""
    when = rule.when
    if when is None or rule.lookup is not None or rule.pattern is None:
        return None
    line = {"level", "kind", "frame"}
    groups = set(rule.match.groupindex) if rule.match is not None else set()
    if groups & {*line, "text"} or not when.names <= line | groups:
        return None  # the line's text, a capture shadowing a line variable, an unknown name
    try:
        holds = when.truth({"level": level, "kind": kind, "frame": None})
    except Exception:
        return None
    if holds:
        return None
    needs: set[tuple[str, bool]] = set()
    for name in when.names - line:
        found = capture_literals(rule.pattern, name)
        if found is None:
            return None
        needs.update((literal, found[1]) for literal in found[0])
    return needs


def capture_value(text: str) -> int | float | str:
    """A capture as a number when it is one (and prints the same), so conditions compare it;
    a number no log means (5,000 digits, `1e999`, `nan`) stays text."""
    number: int | float | None = to_int(text)
    if number is None:
        number = to_float(text)
    return number if number is not None and str(number) == text else text
