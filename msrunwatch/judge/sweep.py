"""Which rank the scheduler lost first, when it lost several in one sweep.

The scheduler checks every node's heartbeat in one pass, logs each node it finds timed out
(`The node: N is timed out`) and then names "the first one timed out": the first of its
list, which is the order it walks its nodes in, not the order they stopped. Nodes timed out
in the same pass are logged microseconds apart (13 µs in fixtures/cpu_segv_after_finished,
where the scheduler named rank 0 although rank 1 had died and its log went silent 41 ms
before rank 0's). Within one sweep the scheduler's order says nothing, and each rank's own
log decides instead:

1. a rank that never logged its normal end is a better suspect than one that did;
2. of those, the rank whose log went silent first (its last dated line) stopped first,
   when it did so earlier than the others by more than their clocks can tell apart;
3. otherwise nothing decides: the ranks are tied, and all of them are named.

A rank that logged an error of its own was alive to complain and is no suspect; when a rank
of the sweep logged a fault of its own that is a cause, it went first (the root cause is its
fault) and the scheduler's word is left as it was. This reads facts only (roles, effects, end
markers, last log times, clocks): no category or message.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from msrunwatch.judge.sightings import Sighting
from msrunwatch.read.runstate import RankFacts, RunFacts
from msrunwatch.rules.template import rank_ranges
from msrunwatch.rules.vocab import Effect, Role, Severity

SWEEP_SECONDS = 0.05
"""Timeouts the scheduler logs closer together than this came from one pass of its check
(real passes log theirs within 50 µs of each other; passes are seconds apart)."""
TIE_SECONDS = 0.001
"""Times closer than this are simultaneous (as for faults: see judge.rootcause)."""

Clocks = Mapping[tuple[str, str], tuple[str, float, bool]]
"""Facts from several nodes: each file's clock, how far off it may be, and whether measured
(judge.context.Context.clocks)."""


@dataclass(frozen=True)
class FirstLost:
    """The rank(s) taken as the first the scheduler lost, and why (empty: its word stands)."""

    sighting: Sighting
    ranks: tuple[int, ...]
    why: str = ""


def spoke_up(found: Sequence[Sighting]) -> set[int]:
    """Ranks that logged an error of their own: alive enough to complain, so not the one
    that went silent."""
    return {
        s.rank for s in found if s.own and s.rank is not None and s.rule.severity is Severity.ERROR
    }


def scheduler_first(found: Sequence[Sighting]) -> tuple[Sighting, int] | None:
    """The scheduler's own verdict: the rank it names the first it lost; before it says so
    (it logs its summary seconds after its first `The node: N is timed out`, when it gives
    up: live, the view judged in between), the first rank it timed out."""
    for s in found:
        if not s.own and s.rank is not None and s.rule.effect is Effect.LOSE_FIRST:
            return s, s.rank
    lost = [s for s in found if not s.own and s.rank is not None and s.rule.effect is Effect.LOSE]
    if not lost:
        return None
    first = min(lost, key=lambda s: s.sort_key)
    assert first.rank is not None
    return first, first.rank


def swept_with(found: Sequence[Sighting], rank: int) -> list[int]:
    """The ranks the scheduler timed out in the same pass as `rank` (itself included), from
    its per-node lines; just `rank` when its line or its time is not known."""
    lost = {
        (s.rank, s.hit.time)
        for s in found
        if not s.own and s.rank is not None and s.rule.effect is Effect.LOSE and s.hit.time
    }
    at = min((when for r, when in lost if r == rank), default=None)
    if at is None:
        return [rank]
    near = {r for r, when in lost if r is not None and when and abs(when - at) < SWEEP_SECONDS}
    return sorted(near | {rank})


def first_lost(
    found: Sequence[Sighting], run: RunFacts | None = None, clocks: Clocks | None = None
) -> FirstLost | None:
    """The rank(s) the scheduler lost first: its word, unless it lost others in the same
    sweep and a run's facts are given; then their own logs decide (module doc)."""
    named = scheduler_first(found)
    if named is None:
        return None
    sight, rank = named
    swept = swept_with(found, rank)
    if run is None or len(swept) < 2 or _faulted(found) & set(swept):
        return FirstLost(sight, (rank,))
    spoke = spoke_up(found)
    suspects = [r for r in swept if r not in spoke] or [rank]
    ranks, why = _decide(suspects, run, clocks)
    said = f"the scheduler timed out ranks {rank_ranges(swept)} in one sweep"
    return FirstLost(sight, ranks, f"{said} (its order says nothing); {why}")


def _decide(
    suspects: Sequence[int], run: RunFacts, clocks: Clocks | None
) -> tuple[tuple[int, ...], str]:
    """Of ranks lost together, the one whose own log stopped first (module doc)."""
    facts = {r: run.rank(r) for r in suspects}
    unended = [r for r in suspects if not _ended(facts[r])]
    pool = unended if 0 < len(unended) < len(suspects) else list(suspects)
    ended = sorted(set(suspects) - set(pool))
    said = f"rank(s) {rank_ranges(ended)} logged their normal end; " if ended else ""
    if len(pool) == 1:
        return (pool[0],), f"{said}rank {pool[0]} is the one left"
    times = {r: f.last_time for r in pool if (f := facts[r]) is not None}
    if len(times) < len(pool) or None in times.values():
        return tuple(pool), f"{said}{_tied(pool)}: not every log has a time to compare"
    known = {r: t for r, t in times.items() if t is not None}
    first = min(pool, key=lambda r: (known[r], r))
    tied = [r for r in pool if known[r] - known[first] <= _apart(facts, first, r, clocks)]
    if len(tied) > 1:
        return tuple(tied), f"{said}{_tied(tied)}: their logs went silent at the same time"
    gap = min(known[r] - known[first] for r in pool if r != first)
    return (first,), (
        f"{said}rank {first}'s own log went silent first ({gap * 1000:,.0f} ms before the others')"
    )


def _faulted(found: Sequence[Sighting]) -> set[int]:
    """Ranks that logged a fault of their own that is a cause (not a timeout): when one of
    the sweep did, it is the first (judge.rootcause, preference 1), and the others were
    stopped after it; no silent rank is to be found among them."""
    return {
        s.rank
        for s in found
        if s.own
        and s.rank is not None
        and s.rule.role is Role.CAUSE
        and s.rule.severity is Severity.ERROR
    }


def _ended(rank: RankFacts | None) -> bool:
    return rank is not None and bool(rank.finished_line)


def _tied(ranks: Sequence[int]) -> str:
    return f"ranks {rank_ranges(sorted(ranks))} are tied"


def _apart(facts: Mapping[int, RankFacts | None], a: int, b: int, clocks: Clocks | None) -> float:
    """Seconds within which two ranks' last times are not known apart: their clocks'
    uncertainty when they are on different clocks, else TIE_SECONDS."""
    within = uncertainty(_key(facts[a]), _key(facts[b]), clocks)
    return TIE_SECONDS if within is None else max(within, TIE_SECONDS)


def _key(rank: RankFacts | None) -> tuple[str, str] | None:
    return (rank.primary.log_dir, rank.primary.path) if rank is not None else None


def uncertainty(
    a: tuple[str, str] | None, b: tuple[str, str] | None, clocks: Clocks | None
) -> float | None:
    """Seconds within which the order of two times from files `a` and `b` is not known
    (None: one clock, or no clocks: their times compare as they are). Two measured offsets
    add their errors; two unmeasured clocks differ by the declared tolerance."""
    if not clocks or a is None or b is None:
        return None
    first, second = clocks.get(a), clocks.get(b)
    if first is None or second is None or first[0] == second[0]:
        return None
    if not first[2] and not second[2]:
        return max(first[1], second[1])
    return first[1] + second[1]


def ranks_lost_first(lost: FirstLost | None, quiet: Collection[int]) -> dict[int, str]:
    """Ranks to mark as lost first, with the reason, leaving out those whose log spoke."""
    if lost is None:
        return {}
    why = lost.why or "the scheduler lost it first"
    return {r: why for r in lost.ranks if r not in quiet}
