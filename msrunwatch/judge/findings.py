"""Sightings grouped into findings across ranks, each with its role in the verdict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from msrunwatch.judge.conditions import Synthetic
from msrunwatch.judge.model import Finding, Occurrence, RootCause
from msrunwatch.judge.sightings import Sighting, group
from msrunwatch.rules.model import Rule, Scope
from msrunwatch.rules.vocab import Role, Severity

ROLE_ORDER = {"root-cause": 0, "cause": 1, "victim": 2, "symptom": 3, "note": 4}


def _finding(rule: Rule, sights: Sequence[Sighting], role: str) -> Finding:
    seen: set[tuple[int | None, str | None]] = set()
    occurrences = []
    for s in sights:
        key = (s.rank, s.occurrence.file)
        if key not in seen:
            seen.add(key)
            occurrences.append(s.occurrence)
    ranks = tuple(sorted({s.rank for s in sights if s.rank is not None}))
    first = sights[0]
    count = sum(s.hit.count for s in sights)
    return Finding.of(
        rule, role, first.hit.message, ranks, tuple(occurrences), count, first.hit.fingerprint
    )


def _synthetic_finding(syn: Synthetic, role: str) -> Finding:
    count = max(len(syn.ranks), 1)
    return Finding.of(syn.rule, role, syn.message, syn.ranks, syn.occurrences, count, syn.rule.id)


def _role(rule: Rule, ranks: Sequence[int], cause: RootCause | None, is_root: bool) -> str:
    """root-cause for the root's group; cause for another rank's own fault (two independent
    faults: the second is no victim); victim for ranks stopped because of it; note for
    context; else symptom."""
    if is_root:
        return "root-cause"
    if rule.role is Role.VICTIM:
        return "victim"
    if rule.role is Role.NOTE:
        return "note"
    if rule.role is Role.CAUSE and rule.severity is Severity.ERROR and cause is not None:
        # Another fault on the root's own ranks follows from it; on other ranks it is theirs.
        return "symptom" if set(ranks) <= set(cause.ranks) else "cause"
    return "symptom"


def _joins(occurrence: Occurrence, target: Finding, scope: Scope | None) -> bool:
    """Whether a restating line is about the target finding's own event. A line finding's
    event is its process's: a line of the same log, or about the same rank (msrun's word
    on a worker's end). A rank or run finding's event is its evidence line: only that very
    line restates it (an unknown ERROR line that is also the line a rank's log ends in)."""
    if scope is not Scope.LINE:
        return any(
            o.file == occurrence.file and o.line == occurrence.line for o in target.occurrences
        )
    rank = occurrence.rank
    return rank in target.ranks or any(o.file == occurrence.file for o in target.occurrences)


def _restated_target(
    occurrence: Occurrence,
    restates: Sequence[str],
    found: Sequence[Finding],
    rules: Mapping[str, Rule],
) -> int | None:
    """The finding a restating line joins: that of the first restated rule it is about
    (_joins), else the first finding of the first restated line rule seen at all (the
    scheduler's summary in msrun's console joins the scheduler's own word)."""
    scopes = {r: rules[r].scope if r in rules else None for r in restates}
    for rule in restates:
        for i, f in enumerate(found):
            if f.rule == rule and _joins(occurrence, f, scopes[rule]):
                return i
    for rule in restates:
        if scopes[rule] is Scope.LINE:
            for i, f in enumerate(found):
                if f.rule == rule:
                    return i
    return None


def _without(f: Finding, gone: Sequence[Occurrence], count: int) -> Finding:
    """What is left of a finding whose lines partly joined others."""
    rest = tuple(o for o in f.occurrences if o not in gone)
    ranks = tuple(sorted({o.rank for o in rest if o.rank is not None}))
    return replace(f, occurrences=rest, ranks=ranks, count=max(f.count - count, len(rest)))


def _fold_restatements(found: list[Finding], rules: Mapping[str, Rule]) -> list[Finding]:
    """A finding that only restates another one (the scheduler's summary of the node
    timeouts it already reported, a step of building the cluster passing up the failure
    below it, an unknown ERROR line a rank's log ends in) joins it: one event, one finding.
    Each of its lines joins the restated finding it is about (_restated_target), so the
    scheduler's chain joins the scheduler's cause and each worker's its own, and a line
    about no such finding stays a finding of its own rule. Two nodes that timed out are
    two findings, and each stays itself (keyed by rule, every finding of the rule had
    become a copy of the folded one, the other node's lost). A line from a log the finding
    already cites adds to its count, not to its evidence: the cause's own line stays the
    one shown."""
    folded: dict[int, Finding] = {}
    left: dict[int, Finding] = {}
    for i, f in enumerate(found):
        rule = rules.get(f.rule)
        restates = rule.restates if rule else ()
        parts: dict[int, list[Occurrence]] = {}
        for o in f.occurrences if restates else ():
            target = _restated_target(o, restates, found, rules)
            if target is not None:
                parts.setdefault(target, []).append(o)
        moved = [o for part in parts.values() for o in part]
        counted = sum(o.count for o in moved)
        if not moved:
            left[i] = f
        elif len(moved) < len(f.occurrences):
            left[i] = _without(f, moved, counted)
        for n, (target, part) in enumerate(parts.items()):
            base = folded.get(target, found[target])
            whole = n == 0 and i not in left
            count = sum(o.count for o in part) + (f.count - counted if whole else 0)
            shown = {(o.rank, o.file) for o in base.occurrences}
            new = tuple(o for o in part if (o.rank, o.file) not in shown)
            folded[target] = replace(
                base,
                role=min(base.role, f.role, key=ROLE_ORDER.__getitem__),
                occurrences=(*base.occurrences, *new),
                ranks=tuple(sorted({*base.ranks, *(o.rank for o in part if o.rank is not None)})),
                count=base.count + count,
                restated_by=(*base.restated_by, f.rule),
            )
    return [folded.get(i, f) for i, f in left.items()]


def _first_time(f: Finding) -> float:
    first = f.first
    return first.time if first is not None and first.time is not None else float("inf")


def _naming(f: Finding, cause: RootCause | None) -> Finding:
    """The root-cause finding names the verdict's ranks when it was seen on others."""
    if f.role != "root-cause" or cause is None or set(cause.ranks) <= set(f.ranks):
        return f
    return replace(f, cause_ranks=cause.ranks)


def findings(
    found: Sequence[Sighting],
    cause: RootCause | None,
    extra: Sequence[Synthetic],
    rules: Mapping[str, Rule],
) -> list[Finding]:
    """Every finding, errors first, the root cause's before victims' before symptoms'."""
    out = []
    for sights in group(list(found)).values():
        rule = sights[0].rule
        is_root = cause is not None and any(
            s.hit.rule == cause.rule
            and s.occurrence.file == cause.file
            and s.occurrence.line == cause.line
            for s in sights
        )
        ranks = [s.rank for s in sights if s.rank is not None]
        out.append(_finding(rule, sights, _role(rule, ranks, cause, is_root)))
    for syn in extra:
        is_root = cause is not None and cause.rule == syn.rule.id and cause.file is None
        out.append(_synthetic_finding(syn, _role(syn.rule, syn.ranks, cause, is_root)))
    out = [_naming(f, cause) for f in _fold_restatements(out, rules)]
    out.sort(key=lambda f: (-f.severity.rank, ROLE_ORDER[f.role], _first_time(f)))
    return out
