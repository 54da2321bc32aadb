"""Sightings grouped into findings across ranks, each with its role in the verdict."""

from __future__ import annotations

from collections.abc import Sequence

from msrunwatch.judge.conditions import Synthetic
from msrunwatch.judge.model import Finding, RootCause
from msrunwatch.judge.sightings import Sighting, group
from msrunwatch.rules.model import Rule
from msrunwatch.rules.vocab import Role, Severity

ROLE_ORDER = {"root-cause": 0, "victim": 1, "symptom": 2}


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
    """root-cause for the root's group; victim for faults of other ranks; else symptom."""
    if is_root:
        return "root-cause"
    if rule.role is Role.VICTIM:
        return "victim"
    if rule.role is Role.CAUSE and rule.severity is Severity.ERROR and cause is not None:
        # A consequence on the root's own ranks is a symptom of it; elsewhere, a victim.
        return "symptom" if set(ranks) <= set(cause.ranks) else "victim"
    return "symptom"


def _first_time(f: Finding) -> float:
    first = f.first
    return first.time if first is not None and first.time is not None else float("inf")


def findings(
    found: Sequence[Sighting], cause: RootCause | None, extra: Sequence[Synthetic]
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
    out.sort(key=lambda f: (-f.severity.rank, ROLE_ORDER[f.role], _first_time(f)))
    return out
