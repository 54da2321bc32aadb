"""Run line-scope rules on one line: prefilter, full pattern within its time budget, message."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Optional

from msrunwatch.core.compat import dataclass
from msrunwatch.core.memo import MEMO, MEMO_LINE
from msrunwatch.core.numbers import to_float, to_int
from msrunwatch.rules.anchored import first_characters
from msrunwatch.rules.budget import CPU_CLOCK, Abandoned, Budget, Clock, limit
from msrunwatch.rules.model import Rule, Scope, compile_pattern
from msrunwatch.rules.needs import Folded, beyond, may_match, pattern_needs
from msrunwatch.rules.prefilter import (
    Prefilter,
    analysed,
    capture_literals,
    required_literals,
)
from msrunwatch.rules.programs import VERSION1, regex_or_none, regex_version
from msrunwatch.rules.rulecache import Memo
from msrunwatch.rules.tables import OVERRIDES
from msrunwatch.rules.template import fingerprint, render, template_names

if TYPE_CHECKING:
    import regex


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
    fallback: int = 0
    """How readily this finding yields to others on its record: the rule's `fallback`,
    or 1 when its `fallback_when` holds for this match."""


class LineMatcher:
    """All line rules of a rule set, ready to run on lines."""

    def __init__(self, rules: Sequence[Rule], clock: Clock = CPU_CLOCK) -> None:
        self.rules = [r for r in rules if r.scope is Scope.LINE and r.pattern is not None]
        self._prefilter = Prefilter(r.pattern for r in self.rules if r.pattern is not None)
        self.budget = Budget(clock)
        """Time spent per rule, per file and per run, and the lines given up on."""
        self._always = frozenset(self._prefilter.always)
        self._needs: dict[tuple[int, str, str], Gate | None] = {}
        """Per rule tried on every line, level and kind: what a line needs for it to hold
        (None: nothing can be told)."""
        self.gave_up = False
        """A rule was abandoned on the last line matched: its result is not the line's own
        (the reader must not reuse it for a repeat of the line)."""
        self._lines: dict[tuple[str, str, str, str | None], tuple[LineMatch, ...]] = {}
        """What each line matched (see match)."""
        self._outcomes: dict[Outcome, LineMatch | None] = {}
        """What a rule's match gave, by its captures and the line's variables (_outcome)."""
        self._reads_text = frozenset(i for i, r in enumerate(self.rules) if _reads_text(r))
        self._starts: dict[int, frozenset[str] | None] = {}
        """Rules anchored at the line's start, with the ASCII characters a match can begin
        with: a line starting with another is not tried (a GLOG line's `[` against a
        Python exception's class name)."""
        """Rules whose condition or message reads the line's text, not only its captures."""
        self._needs_all: dict[int, Folded | None] = {}
        """Everything each rule's pattern needs in a line (rules.needs), as found out: a
        rule the prefilter named is not searched on a line that lacks the rest."""
        self._headings = Headings(self.rules)

    def text_needs(self) -> tuple[frozenset[tuple[str, bool]], list[re.Pattern[str]]] | None:
        """What a line read as plain text (no GLOG level, not ending a traceback, no frame)
        must contain for a rule to be tried on it and hold: one of the literals (with
        whether case is ignored) or a match of one of the gates; None when that cannot be
        told (a rule tried on every line whose condition could hold on any text).

        A rule tried on every line counts when its `when` is false on such a line with
        none of its captures: then a capture it names must have taken part in the match,
        and that capture's literals are what the line needs."""
        literals = set(self._prefilter.literals)
        heading_literals = self._headings.literals()
        if heading_literals is None:
            return None
        literals |= heading_literals
        for index in self._prefilter.always:
            needs = _capture_needs(self.rules[index], "", "text")
            if needs is None:
                return None
            literals.update(needs)
        return frozenset(literals), self._prefilter.gates

    def text_needs_within(
        self, alphabet: str
    ) -> tuple[frozenset[tuple[str, bool]], list[re.Pattern[str]]] | None:
        """text_needs for the plain-text lines made only of the characters of `alphabet`
        (ASCII): the rules whose pattern needs (rules.needs) no such line can meet are left
        out, as the matcher leaves them untried on such a line (may_match), and so are the
        literals no such line can hold; the headings' literals count, as in text_needs.
        Every LossMonitor line holds `loss`, loss-nan-logged's literal, but only a
        non-numeric loss can hold its `nan` or `inf` (see read.lossonly)."""
        literals = self._headings.literals()  # a heading line is always read
        if literals is None:
            return None
        gates: list[re.Pattern[str]] = []
        for rule in self.rules:
            pattern = rule.pattern or ""
            if beyond(pattern_needs(pattern), alphabet):
                continue
            found, parts = analysed(pattern)
            if found is not None:
                literals.update((literal, found[1]) for literal in found[0])
            elif parts is not None:
                gates.extend(re.compile(part) for part in parts)
            elif (needs := _capture_needs(rule, "", "text")) is not None:
                literals.update(needs)
            else:
                return None
        exact, folded = set(alphabet), set(alphabet.lower())
        held = {
            (x, f)
            for x, f in literals
            if (folded if f else exact).issuperset(x.lower() if f else x)
        }
        return frozenset(held), gates

    def headings(self, line: str) -> frozenset[str]:
        """The rules whose `under` heading this line is (see Headings)."""
        return self._headings.opened_by(line)

    def _may_hold(self, index: int, line: str, level: str, kind: str) -> bool:
        """Whether a rule tried on every line can hold on this one (frame unknown): not
        when its `when` needs a capture none of whose literals the line holds."""
        key = (index, level, kind)
        if key in self._needs:
            gate = self._needs[key]
        else:
            if len(self._needs) >= 4096:
                self._needs.clear()
            gate = self._needs[key] = _gate(_capture_needs(self.rules[index], level, kind))
        if gate is None:
            return True
        exact, folded = gate
        for literal in exact:
            if literal in line:
                return True
        if not folded:
            return False
        if not line.isascii():  # Unicode case folding: let the pattern decide
            return True
        lowered = line.lower()
        return any(literal in lowered for literal in folded)

    def reading(self, key: str) -> None:
        """The lines matched from now on are of this file (for its budget and its record of
        abandoned lines); a new key starts a fresh record."""
        self.budget.reading(key)

    def forget(self, key: str) -> None:
        """A file was truncated or replaced: its record starts again."""
        self.budget.forget(key)

    def fresh_budget(self) -> None:
        """Every budget starts again, as for a new run (the compiled rules are kept), and
        no line is known yet: each is searched again, within the new budgets."""
        self.budget = Budget(self.budget.clock)
        self._lines.clear()

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
        abandoned (with `lineno`, when the reader gives it). A line met again as it was
        (with the same time: a flood of one message) gives what it gave, searching nothing.
        `every_rule`: no shortcut at all (the reader's are off, see read.shortcuts): every
        rule's pattern is searched and its outcome worked out, nothing remembered."""
        if every_rule:
            return self._match(line, level, kind, frame, lineno, every_rule=True)
        key = (line, level, kind, frame)
        known = self._lines.get(key)
        if known is not None:
            self.gave_up = False
            return list(known)
        found = self._match(line, level, kind, frame, lineno)
        if not self.gave_up and len(line) <= MEMO_LINE:
            if len(self._lines) >= MEMO:
                self._lines.clear()
            self._lines[key] = tuple(found)
        return found

    def _match(
        self,
        line: str,
        level: str,
        kind: str,
        frame: str | None,
        lineno: int | None,
        every_rule: bool = False,
    ) -> list[LineMatch]:
        found: list[LineMatch] = []
        self.gave_up = False
        if every_rule:
            for rule in self.rules:
                m = self._search(rule, line, lineno)
                outcome = None if m is None else _evaluate(rule, m, line, level, kind, frame)
                if outcome is not None:
                    found.append(outcome)
            return found
        first = line[:1]
        for index in self._prefilter.candidates(line):
            starts = self._starts.get(index, _UNKNOWN)
            if starts is _UNKNOWN:
                starts = self._starts[index] = _first_gate(self.rules[index])
            if starts is not None and first not in starts and first < "\x80":  # type: ignore[operator]
                continue
            if (
                index in self._always
                and frame is None
                and not self._may_hold(index, line, level, kind)
            ):
                continue
            needs = self._needs_all.get(index, _UNKNOWN)
            if needs is _UNKNOWN:
                needs = self._needs_all[index] = pattern_needs(self.rules[index].pattern or "")
            if needs is not None and not may_match(needs, line):  # type: ignore[arg-type]
                continue
            m = self._search(self.rules[index], line, lineno)
            if m is None:
                continue
            outcome = self._outcome(index, m, line, level, kind, frame)
            if outcome is not None:
                found.append(outcome)
        return found

    def _outcome(
        self,
        index: int,
        m: regex.Match[str],
        line: str,
        level: str,
        kind: str,
        frame: str | None,
    ) -> LineMatch | None:
        """What a match of rule `index` gives (None: its `when` is false). A rule's
        condition, message and subject read only its captures and the line's variables, so
        the result is worked out once per distinct set of them: a message repeated with
        another time, pid or step costs one pattern search (issue 21, defect 8)."""
        groups = m.groups()
        text = line if index in self._reads_text else None
        key = (index, level, kind, frame, text, groups)
        known = self._outcomes.get(key, _UNKNOWN)
        if known is _UNKNOWN:
            known = _evaluate(self.rules[index], m, line, level, kind, frame)
            size = len(text or "") + sum(len(g) for g in groups if g)
            if size <= MEMO_LINE:
                if len(self._outcomes) >= MEMO:
                    self._outcomes.clear()
                self._outcomes[key] = known
        return known  # type: ignore[return-value]

    def _search(self, rule: Rule, line: str, lineno: int | None) -> regex.Match[str] | None:
        """The rule's pattern on the line, within the time it has left."""
        spends = self.budget.spends(rule.id)
        seconds = limit(spends)
        if seconds <= 0:
            self.budget.current.abandon(rule.id, line, lineno, timed_out=False)
            self.gave_up = True
            return None
        pattern = rule.match  # compiled on first use: not the line's cost
        assert pattern is not None
        clock = self.budget.clock
        began = clock()
        try:
            return pattern.search(line, timeout=seconds)
        except TimeoutError:
            self.budget.current.abandon(rule.id, line, lineno, timed_out=True)
            self.gave_up = True
            return None
        finally:
            # The regex module stops the pattern at `seconds` of CPU, so more than that
            # was spent by someone else (a garbage collection of a large heap, another
            # thread): never charged to the rule.
            spent = min(clock() - began, seconds)
            for spend in spends:
                spend.add(spent)


Outcome = tuple[int, str, str, Optional[str], Optional[str], tuple[Optional[str], ...]]
"""A rule's match as its outcome depends on it: rule index, level, kind, frame, the line's
text (only for a rule that reads it) and the pattern's groups."""
_UNKNOWN = object()


class Headings:
    """The `under` headings of a rule set: which rules a line opens the section of.

    A rule with `under` holds only on lines below its heading in the same log record (the
    reader keeps which sections are open, read.records). So a heading line must always be
    read: its literals count among the ones a line needs to be read at all (text_needs),
    and a line is searched with a heading's pattern only when it holds one of them."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self._by_pattern: dict[str, list[str]] = {}
        for rule in rules:
            if rule.under is not None:
                self._by_pattern.setdefault(rule.under, []).append(rule.id)
        self._compiled: dict[str, regex.Pattern[str]] = {}
        self._literals: dict[str, tuple[tuple[str, ...], bool] | None] = {
            pattern: required_literals(pattern) for pattern in self._by_pattern
        }
        needs = list(self._literals.values())
        self._any: re.Pattern[str] | None = None
        """One search for every heading's literals, when each has some and none ignores
        case: a line none of them is in opens nothing (most lines), and is not looked at
        heading by heading (issue 22)."""
        if needs and all(n is not None and not n[1] for n in needs):
            words = sorted({word for n in needs if n is not None for word in n[0]})
            self._any = re.compile("|".join(re.escape(word) for word in words))

    def literals(self) -> set[tuple[str, bool]] | None:
        """Every heading's literals, with whether case is ignored (None: some heading's
        cannot be told, and then any line may be one)."""
        found: set[tuple[str, bool]] = set()
        for needs in self._literals.values():
            if needs is None:
                return None
            found.update((word, needs[1]) for word in needs[0])
        return found

    def opened_by(self, line: str) -> frozenset[str]:
        """The ids of the rules whose heading this line matches."""
        if not self._by_pattern or (self._any is not None and self._any.search(line) is None):
            return _NONE
        opened: list[str] = []
        for pattern, ids in self._by_pattern.items():
            needs = self._literals[pattern]
            if needs is not None:
                text = line.lower() if needs[1] else line
                if not any(word in text for word in needs[0]):
                    continue
            compiled = self._compiled.get(pattern)
            if compiled is None:
                compiled = self._compiled[pattern] = compile_pattern(pattern)
            if compiled.search(line) is not None:
                opened.extend(ids)
        return frozenset(opened)


_NONE: frozenset[str] = frozenset()


def _evaluate(
    rule: Rule, m: regex.Match[str], line: str, level: str, kind: str, frame: str | None
) -> LineMatch | None:
    """A rule's finding on a line its pattern matched, or None when its `when` is false."""
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
        return None
    message = render(rule.message, env)
    subject = captures.get(rule.subject.capture) if rule.subject else None
    overrides = tuple((k, row[k]) for k in OVERRIDES if row and row.get(k))
    key = fingerprint(rule.id, message)
    yields = rule.fallback
    if not yields and rule.fallback_when is not None and rule.fallback_when.truth(env):
        yields = 1
    return LineMatch(rule, message, key, tuple(captures.items()), subject, overrides, yields)


FACTS = Memo("matcher", limit=4096)
"""What the matcher works out from a rule's texts alone (`_reads_text`, `_first_gate`),
kept between runs (rules.rulecache): found by the whole texts it comes from, under this
code (and, for `_first_gate`, this `regex`). Working them out, parsing every line rule's
message and condition and the anchored patterns, was 27 M instructions of a cold check."""


def _reads_text(rule: Rule) -> bool:
    """Whether a rule's condition or message reads the line's text (or a name that cannot
    be told): then its outcome depends on more than its captures."""
    when, also = (None if c is None else c.source for c in (rule.when, rule.fallback_when))
    key = f"reads\0{rule.message}\0{when}\0{also}"
    return FACTS.get(key, lambda: _reads_text_now(rule))


def _reads_text_now(rule: Rule) -> bool:
    names = template_names(rule.message)
    if names is None:
        return True
    for condition in (rule.when, rule.fallback_when):
        if condition is not None:
            names = names | condition.names
    return "text" in names


Gate = tuple[tuple[str, ...], tuple[str, ...]]
"""What a line needs for a rule to be worth trying: one of the exact literals in it, or one
of the lower-cased literals in the lower-cased line."""


def _gate(needs: set[tuple[str, bool]] | None) -> Gate | None:
    if needs is None:
        return None
    exact = tuple(sorted(literal for literal, fold in needs if not fold))
    return exact, tuple(sorted(literal for literal, fold in needs if fold))


def _first_gate(rule: Rule) -> frozenset[str] | None:
    """The ASCII characters a line must start with for the rule's pattern, anchored at the
    start, to match it (None: not anchored, or not known). Told with the rule's own engine,
    whose classes (\\s, \\w) differ from `re`'s on some characters."""
    if rule.pattern is None:
        return None
    pattern = rule.pattern
    key = f"first\0{regex_version()}\0{pattern}"
    found: str | None = FACTS.get(key, lambda: _first_gate_now(pattern))
    return None if found is None else frozenset(found)


def _first_gate_now(pattern: str) -> str | None:
    """`_first_gate`'s characters, in order, as a string (what the memo keeps)."""
    found = first_characters(pattern)
    if found is None:
        return None
    first = regex_or_none(found, VERSION1)
    if first is None:
        return None
    return "".join(chr(c) for c in range(128) if first.match(chr(c)))


def _capture_needs(rule: Rule, level: str, kind: str) -> set[tuple[str, bool]] | None:
    """Literals one of which a line of this level and kind (no frame) needs for a rule
    tried on every line to hold (see LineMatcher.text_needs), or None: not known."""
    when = rule.when
    if when is None or rule.pattern is None:
        return None
    if rule.lookup is not None and rule.lookup.columns & when.names:
        return None  # a row's column the condition reads: not told by the captures
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
