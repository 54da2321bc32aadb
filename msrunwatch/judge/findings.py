"""Sightings grouped into findings across ranks, each with its role in the verdict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from msrunwatch.judge.conditions import Synthetic
from msrunwatch.judge.model import Finding, RootCause
from msrunwatch.judge.sightings import Sighting, group
from msrunwatch.rules.model import Rule
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


def _fold_restatements(found: list[Finding], rules: Mapping[str, Rule]) -> list[Finding]:
    """A finding that only restates another one (the scheduler's summary of the node
    timeouts it already reported) joins it: one event, one finding. It joins the first
    finding of the rule it restates, and only that one: two nodes that timed out are two
    findings, and each stays itself (keyed by rule, every finding of the rule had become
    a copy of the folded one, the other node's lost)."""
    first: dict[str, int] = {}
    for i, f in enumerate(found):
        first.setdefault(f.rule, i)
    folded: dict[int, Finding] = {}
    kept = []
    for i, f in enumerate(found):
        rule = rules.get(f.rule)
        target = next((first[r] for r in rule.restates if r in first), None) if rule else None
        if target is None:
            kept.append(i)
            continue
        base = folded.get(target, found[target])
        folded[target] = replace(
            base,
            role=min(base.role, f.role, key=ROLE_ORDER.__getitem__),
            occurrences=(*base.occurrences, *f.occurrences),
            ranks=tuple(sorted({*base.ranks, *f.ranks})),
            count=base.count + f.count,
            restated_by=(*base.restated_by, f.rule),
        )
    return [folded.get(i, found[i]) for i in kept]


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
