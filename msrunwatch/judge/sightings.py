"""Attribute every hit to the rank it is about.

A hit in a worker's own log is about that rank, unless its rule's `subject` names a rank
by number: a launcher's summary in the same stream (torchrun's failure table, which users
paste as one log) is about the rank it names, and is not that rank's own line. A hit
another process logged (the scheduler about a node, msrun about a worker's pid) is about
the rank its rule's `subject` capture names. Hits with the same rule and fingerprint (the
message with numbers masked) become one finding listing all their ranks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from msrunwatch.core.compat import dataclass
from msrunwatch.core.numbers import to_int
from msrunwatch.judge.model import Occurrence
from msrunwatch.read.facts import FileFacts, FileRole, Hit
from msrunwatch.read.runstate import RunFacts
from msrunwatch.rules.model import Rule
from msrunwatch.rules.vocab import Effect, Refers, Role, Severity

INFINITY = float("inf")


@dataclass(frozen=True, slots=True)
class Sighting:
    """A hit, the rank it is about and whether that rank logged it itself."""

    hit: Hit
    rule: Rule
    rank: int | None
    own: bool
    """Logged by the rank itself (or msrun about its process), not by the scheduler."""
    occurrence: Occurrence
    by_msrun: bool = False
    """Said by msrun's console (about a rank's process, or the job), not a rank's own log."""
    why: str = ""
    """A rank-scope rule's `why`, filled from the rank's state as its message is."""

    @property
    def sort_key(self) -> tuple[float, int, int]:
        rank = self.rank if self.rank is not None else 1 << 30
        return (self.hit.time if self.hit.time is not None else INFINITY, rank, self.hit.line)


def _occurrence(facts: FileFacts, hit: Hit, rank: int | None) -> Occurrence:
    return Occurrence(
        rank=rank,
        log_dir=facts.log_dir,
        file=facts.path,
        line=hit.line,
        time=hit.time,
        time_exact=hit.time_exact,
        text=hit.text,
        count=hit.count,
        message=hit.message,
    )


class Subjects:
    """Resolves a subject capture (node id, pid or rank number) to a rank."""

    def __init__(self, run: RunFacts) -> None:
        self._by = {
            Refers.PID: {str(f.pid): r.rank for r in run.ranks for f in r.files if f.pid},
            Refers.NODE: {g.node: g.rank for g in run.registrations},
        }

    @staticmethod
    def named(rule: Rule | None, value: str | None) -> int | None:
        """The rank a line names by number (`subject: {is: rank}`), in whatever file it is:
        no pid or node id is known to a rank's own log, only a number says which rank."""
        if rule is None or rule.subject is None or value is None:
            return None
        return to_int(value) if rule.subject.refers is Refers.RANK else None

    def rank(self, rule: Rule | None, value: str | None) -> int | None:
        """The rank a hit is about, or None when its subject names no rank we know."""
        if rule is None or rule.subject is None or value is None:
            return None
        refers = rule.subject.refers
        known = self._by.get(refers, {}).get(value)
        if known is not None:
            return known
        # MindSpore sets rank ids from numeric node ids ("Rank ids are already set by numeric
        # node ids"), so an unregistered numeric node id is the rank; a pid is never a rank.
        if refers is Refers.PID or not value[:1].isdigit():
            return None
        return to_int(value)  # None for digits no rank has (5,000 of them, or `²`)


class RuleOf:
    """The rule a hit judges by: the rule itself, refined by its lookup row if it has one
    (a CANN code's own category and role). Refined rules are made once per row."""

    def __init__(self, rules: Mapping[str, Rule]) -> None:
        self.rules = rules
        self._refined: dict[tuple[str, tuple[tuple[str, str], ...]], Rule] = {}

    def __call__(self, hit: Hit) -> Rule | None:
        rule = self.rules.get(hit.rule)
        if rule is None or not hit.overrides:
            return rule
        key = (hit.rule, hit.overrides)
        if key not in self._refined:
            fields = dict(hit.overrides)
            role = Role(fields["role"]) if "role" in fields else rule.role
            effect = Effect.default(role, rule.severity, True) if role != rule.role else rule.effect
            self._refined[key] = replace(
                rule,
                role=role,
                effect=effect,
                category=fields.get("category", rule.category),
                title=fields.get("title", rule.title),
                hint=fields.get("hint", rule.hint),
            )
        return self._refined[key]


class Teardown:
    """A fault a rank's log reports after it ended normally (a crash in the interpreter's
    exit, a library's complaint while it unloads) is teardown noise: a note, never the rank's
    fault nor the run's verdict, but still a warning (nothing unknown passes silently:
    `check --fail-on warning` sees it). The rank's exit code, when msrun reports one, still
    counts."""

    def __init__(self) -> None:
        self._noted: dict[str, Rule] = {}

    @staticmethod
    def after_end(facts: FileFacts, hit: Hit) -> bool:
        """The hit comes after its own log's normal end."""
        return facts.finished_line is not None and hit.line > facts.finished_line

    def __call__(self, rule: Rule) -> Rule:
        """A cause as a note (made once per rule). Victims and symptoms stay what they are:
        a rank stopped after its end by the cluster or msrun was stopped (its status says so
        either way), it did not fail."""
        if rule.role is not Role.CAUSE:
            return rule
        if rule.id not in self._noted:
            self._noted[rule.id] = replace(
                rule,
                role=Role.NOTE,
                effect=Effect.NONE,
                severity=min(rule.severity, Severity.WARNING, key=lambda v: v.rank),
                reported=min(rule.counts_as, Severity.WARNING, key=lambda v: v.rank),
                title=f"{rule.title} (after the log's normal end: teardown)",
            )
        return self._noted[rule.id]


def sightings(run: RunFacts, rules: Mapping[str, Rule]) -> list[Sighting]:
    """Every hit of the run, attributed, earliest first (a rank's own hits after its log's
    normal end as notes: see Teardown)."""
    subjects = Subjects(run)
    rule_of = RuleOf(rules)
    teardown = Teardown()
    found: list[Sighting] = []

    def add(facts: FileFacts, hit: Hit, rank: int | None, own: bool) -> None:
        rule = rule_of(hit)
        if rule is not None:
            if own and facts.role is FileRole.WORKER and teardown.after_end(facts, hit):
                rule = teardown(rule)
            where = _occurrence(facts, hit, rank)
            by_msrun = facts.role in (FileRole.CONSOLE, FileRole.MSRUN)
            found.append(Sighting(hit, rule, rank, own, where, by_msrun))

    for rank in run.ranks:
        for facts, hit in rank.hits:
            named = subjects.named(rules.get(hit.rule), hit.subject)
            if named is None:
                add(facts, hit, rank.rank, True)
            else:
                add(facts, hit, named, False)
    for facts in run.schedulers:
        for hit in facts.hits:
            add(facts, hit, subjects.rank(rules.get(hit.rule), hit.subject), False)
    for facts in run.consoles:
        for hit in facts.hits:
            subject = subjects.rank(rules.get(hit.rule), hit.subject)
            add(facts, hit, subject, subject is not None)
    found.sort(key=lambda s: s.sort_key)
    return found


def group(found: list[Sighting]) -> dict[tuple[str, str], list[Sighting]]:
    """Sightings by (rule, fingerprint), in order of first appearance."""
    groups: dict[tuple[str, str], list[Sighting]] = {}
    for s in found:
        groups.setdefault((s.hit.rule, s.hit.fingerprint), []).append(s)
    return groups
