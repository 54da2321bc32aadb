"""The rank the scheduler lost first, when that rank's own log saw a peer go before it.

The scheduler names "the first one timed out" by its heartbeats, which are seconds apart:
in fixtures/cpu_kill9_rank1 rank 1 was killed with `kill -9`, msrun then killed rank 0,
and the scheduler timed out node 0 alone and named it first. Rank 0's own log says
otherwise: it ends with `Client connected end of file! Peer Worker ...` (a peer's
connection closed), 2.6 s after rank 1's log had gone silent. A rank that saw a peer go
was alive after that peer stopped: it is a witness, not the rank that stopped first.

So when every rank the scheduler names first logged such a line (a rule with `witness:
peer-gone`), the ranks whose own logs went silent before the earliest of those lines (by
more than their clocks can tell apart) are named instead: they logged no fault, no normal
end, no exit code 0, and saw no peer go themselves. Several such ranks are tied (their
last dated lines do not order them: progress prints carry no time). This reads facts
only (witness rules, last log times, end markers, clocks): no category or message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from msrunwatch.judge.sightings import Sighting
from msrunwatch.judge.statuses import format_clock
from msrunwatch.judge.sweep import TIE_SECONDS, Clocks, FirstLost, spoke_up, uncertainty
from msrunwatch.read.runstate import RankFacts, RunFacts
from msrunwatch.rules.template import rank_ranges
from msrunwatch.rules.vocab import Witness


def witnesses(found: Sequence[Sighting]) -> dict[int, Sighting]:
    """Each rank's earliest dated line of its own saying a peer went away."""
    seen: dict[int, Sighting] = {}
    for s in found:
        if not s.own or s.rank is None or s.rule.witness is not Witness.PEER_GONE:
            continue
        if s.hit.time is None:
            continue
        first = seen.get(s.rank)
        if first is None or s.hit.time < (first.hit.time or 0.0):
            seen[s.rank] = s
    return seen


def before_witness(
    lost: FirstLost, found: Sequence[Sighting], run: RunFacts, clocks: Clocks | None
) -> FirstLost:
    """`lost`, or the ranks that went silent before the ranks it names saw a peer go."""
    seen = witnesses(found)
    if not lost.ranks or any(r not in seen for r in lost.ranks):
        return lost
    witness = min((seen[r] for r in lost.ranks), key=lambda s: s.sort_key)
    exclude = set(lost.ranks) | set(seen) | spoke_up(found)
    gone = [r for r in run.ranks if r.rank not in exclude and _silent_before(r, witness, clocks)]
    if not gone:
        return lost
    ranks = tuple(sorted(r.rank for r in gone))
    return replace(lost, ranks=ranks, why=_why(lost, witness, gone))


def _silent_before(rank: RankFacts, witness: Sighting, clocks: Clocks | None) -> bool:
    """Whether the rank's own log went silent before the witness line, with no end of its own."""
    if rank.finished_line or rank.exit_code == 0 or rank.last_time is None:
        return False
    at = witness.hit.time
    assert at is not None  # witnesses() keeps dated lines only
    here = (witness.occurrence.log_dir or "", witness.occurrence.file or "")
    there = (rank.primary.log_dir, rank.primary.path)
    within = max(uncertainty(here, there, clocks) or 0.0, TIE_SECONDS)
    return rank.last_time < at - within


def _why(lost: FirstLost, witness: Sighting, gone: Sequence[RankFacts]) -> str:
    """Why the scheduler's first was set aside: the witness line, and how long before it
    the others' logs went silent."""
    named = rank_ranges(sorted(lost.ranks))
    where = f"{witness.occurrence.file}:{witness.hit.line}"
    at = witness.hit.time or 0.0
    gap = at - min(r.last_time or at for r in gone)
    ranks = rank_ranges(sorted(r.rank for r in gone))
    whose = f"rank {ranks}'s log" if len(gone) == 1 else f"the logs of ranks {ranks} (tied)"
    return (
        f"the scheduler named rank {named} first, but rank {witness.rank} saw a peer go at "
        f"{format_clock(at)} ({where}), {gap:,.1f} s after {whose} went silent"
    )
