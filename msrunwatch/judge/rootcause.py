"""Which rank failed first and why: the root cause of a failed run.

In order of preference:
1. the earliest error a rank logged about itself that its rule calls a cause (an OOM,
   a crash, a bad strategy), never a timeout or a kill by msrun;
2. ranks the scheduler expected but that never registered (cluster build timeout);
3. ranks that stayed silent while every other rank timed out waiting for them;
4. the scheduler's `worker <n> is the first one timed out`;
5. the earliest symptom, when nothing better is known.
"""

from __future__ import annotations

from collections.abc import Sequence

from msrunwatch.judge.findings import Sighting
from msrunwatch.judge.model import RootCause, Status
from msrunwatch.read.runstate import RunFacts
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


def missing_ranks(run: RunFacts) -> list[int]:
    """Ranks the job expected that never registered with the scheduler."""
    if run.expected_ranks is None or not run.registrations:
        return []
    registered = {r.rank for r in run.registrations}
    return [r for r in range(run.expected_ranks) if r not in registered]


def silent_ranks(statuses: dict[int, Status]) -> list[int]:
    """Ranks with no fault of their own, not finished, while others timed out."""
    timed_out = [r for r, s in statuses.items() if s is Status.TIMED_OUT]
    if not timed_out:
        return []
    quiet = (Status.STARTING, Status.COMPILING, Status.TRAINING, Status.UNKNOWN)
    return [r for r, s in statuses.items() if s in quiet]


def from_scheduler(found: Sequence[Sighting]) -> tuple[Sighting, int] | None:
    """The scheduler's own verdict: `worker <n> is the first one timed out`."""
    for s in found:
        first = s.hit.capture("first")
        if first is not None and not s.own and first.isdigit():
            return s, int(first)
    return None


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
