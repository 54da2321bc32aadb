"""Every rank's status in a run: its own faults, how its log ends, and (live) whether it is
still writing; then which ranks count as silent or stalled."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from msrunwatch.judge import rootcause as rc
from msrunwatch.judge.findings import Sighting
from msrunwatch.judge.model import Status
from msrunwatch.judge.status import rank_status
from msrunwatch.read.runstate import RunFacts
from msrunwatch.rules.vocab import Role, Severity

WRITING_S = 10.0
"""Live view: a rank whose log grew this recently is alive, even after another failed
(msrun stops the others within seconds; until their logs stop, they are not "killed")."""
Statuses = dict[int, tuple[Status, str]]


def own_sightings(found: Sequence[Sighting]) -> dict[int, list[Sighting]]:
    """Each rank's sightings about itself (not a peer's or the scheduler's word on it)."""
    own: dict[int, list[Sighting]] = {}
    for s in found:
        if s.own and s.rank is not None:
            own.setdefault(s.rank, []).append(s)
    return own


def _failed(own: Mapping[int, list[Sighting]], run: RunFacts, lost: set[int]) -> bool:
    """Did the run break: a rank failed on its own, exited badly, or the scheduler lost one?"""
    for sights in own.values():
        if any(s.rule.role is Role.CAUSE and s.rule.severity is Severity.ERROR for s in sights):
            return True
    return bool(lost) or any(r.exit_code not in (None, 0) for r in run.ranks)


def _lost(found: Sequence[Sighting]) -> tuple[set[int], int | None]:
    """Ranks the scheduler timed out, and the one it names first."""
    lost = {
        s.rank
        for s in found
        if not s.own and s.rank is not None and s.rule.category == "node-timeout"
    }
    named = rc.from_scheduler(found)
    return lost, (named[1] if named else None)


def rank_statuses(
    run: RunFacts,
    own: Mapping[int, list[Sighting]],
    found: Sequence[Sighting],
    silences: Mapping[int, float] | None,
) -> Statuses:
    """Every rank's status; `silences` (live view) tells which ranks are still writing."""
    lost, first = _lost(found)
    failed = _failed(own, run, lost | ({first} if first is not None else set()))
    quiet = {r for r, sights in own.items() if sights}
    writing = {r for r, s in (silences or {}).items() if s < WRITING_S}
    result = {
        r.rank: rank_status(
            r,
            own.get(r.rank, []),
            run,
            failed,
            lost_first=r.rank == first and r.rank not in quiet,
            writing=r.rank in writing,
        )
        for r in run.ranks
    }
    present = set(result)
    for missing in range(run.expected_ranks or 0):
        if missing not in present:
            gone = missing in run.unregistered
            result[missing] = (
                (Status.FINISHED, "the scheduler saw it leave normally")
                if gone
                else (Status.UNKNOWN, "no log for this rank")
            )
    return result


def silent_ranks(plain: Mapping[int, Status], silences: Mapping[int, float] | None) -> list[int]:
    """Ranks with no fault of their own while others timed out; live, only those whose log
    has not grown for WRITING_S (a rank still writing is about to report its own timeout)."""
    ranks = rc.silent_ranks(dict(plain))
    if silences is None:
        return ranks
    return [r for r in ranks if r in silences and silences[r] >= WRITING_S]


QUIET = (Status.STARTING, Status.COMPILING, Status.TRAINING, Status.UNKNOWN)


def with_stalls(statuses: Statuses, own: Mapping[int, list[Sighting]]) -> Statuses:
    """A rank a `stalled` rule fired on, and that has not ended, is stalled."""
    out = dict(statuses)
    for rank, (status, _) in statuses.items():
        stall = next((s for s in own.get(rank, []) if s.rule.category == "stalled"), None)
        if stall is not None and status in QUIET:
            out[rank] = (Status.STALLED, stall.hit.message)
    return out
