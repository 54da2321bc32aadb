"""Which rank failed first and why: the root cause of a failed run.

In order of preference:
1. the earliest error a rank logged about itself that its rule calls a cause (an OOM,
   a crash, a bad strategy), never a timeout or a kill by msrun;
2. a run-scope cause rule (ranks that never registered, ranks silent while the others
   timed out waiting for them);
3. the rank the scheduler names the first it lost;
4. the earliest error of any kind, when nothing better is known.
"""

from __future__ import annotations

from collections.abc import Sequence

from msrunwatch.judge.conditions import Synthetic
from msrunwatch.judge.model import RootCause
from msrunwatch.judge.sightings import Sighting
from msrunwatch.judge.statuses import first_lost
from msrunwatch.rules.model import Rule
from msrunwatch.rules.template import rank_ranges
from msrunwatch.rules.vocab import Blame, Role, Severity

TIE_SECONDS = 0.001
"""Faults closer than this in time are simultaneous: all their ranks are named."""


def _cause(first: Sighting, ranks: Sequence[int], reason: str) -> RootCause:
    occ = first.occurrence
    return RootCause(
        ranks=tuple(sorted(set(ranks))),
        category=first.rule.category,
        rule=first.rule.id,
        log_dir=occ.log_dir,
        file=occ.file,
        line=occ.line,
        time=occ.time,
        message=first.hit.message,
        reason=reason,
        time_exact=first.hit.time_exact,
    )


def _same_fault(first: Sighting, found: Sequence[Sighting]) -> list[Sighting]:
    return [
        s
        for s in found
        if s.own
        and s.rank is not None
        and (s.hit.rule, s.hit.fingerprint) == (first.hit.rule, first.hit.fingerprint)
    ]


def from_causes(found: Sequence[Sighting]) -> RootCause | None:
    """Preference 1: the earliest own cause."""
    causes = [
        s
        for s in found
        if s.own
        and s.rank is not None
        and s.rule.role is Role.CAUSE
        and s.rule.severity is Severity.ERROR
    ]
    if not causes:
        return None
    first = causes[0]
    same = _same_fault(first, causes)
    if first.rule.blame is Blame.ALL:
        ranks = [s.rank for s in same if s.rank is not None]
        return _cause(first, ranks, "every rank that reported this configuration error")
    t0 = first.hit.time
    ranks = [
        s.rank
        for s in same
        if s.rank is not None
        and (
            s is first
            or (t0 is not None and s.hit.time is not None and abs(s.hit.time - t0) < TIE_SECONDS)
        )
    ]
    others = sorted({s.rank for s in same if s.rank is not None} - set(ranks))
    reason = "the earliest fault a rank logged about itself"
    if others:
        reason += f"; rank(s) {rank_ranges(others)} hit the same fault later"
    return _cause(first, ranks, reason)


def run_level(rule: Rule, ranks: Sequence[int], message: str, reason: str) -> RootCause:
    """A root cause no single log line states, found from the run as a whole."""
    return RootCause(
        ranks=tuple(sorted(ranks)),
        category=rule.category,
        rule=rule.id,
        log_dir=None,
        file=None,
        line=None,
        time=None,
        message=message,
        reason=reason,
    )


def fallback(found: Sequence[Sighting], extra: Sequence[Synthetic]) -> RootCause | None:
    """No rank logged a fault of its own: a run-level cause, the scheduler's word, an error."""
    for syn in extra:
        if syn.rule.role is Role.CAUSE and syn.rule.severity is Severity.ERROR:
            title = syn.rule.title
            reason = f"no rank logged a fault of its own: {title[:1].lower()}{title[1:]}"
            return run_level(syn.rule, syn.ranks, syn.message, reason)
    named = first_lost(found)
    if named is not None:
        sight, rank = named
        return _cause(sight, [rank], "the scheduler names it the first to time out")
    errors = [s for s in found if s.rule.severity is Severity.ERROR]
    if not errors:
        return None
    first = errors[0]
    ranks = [s.rank for s in _same_fault(first, errors) if s.rank is not None]
    return _cause(first, ranks, "the earliest error (no rank logged a fault of its own)")
