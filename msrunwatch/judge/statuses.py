"""Every rank's status: its own faults (by each rule's declared effect), its exit code and
how its log ends, what the scheduler says of it, and (live) whether it is still writing;
then which ranks count as silent or stalled."""

from __future__ import annotations

import signal
import time
from collections.abc import Collection, Mapping, Sequence

from msrunwatch.judge.model import Status
from msrunwatch.judge.sightings import Sighting
from msrunwatch.judge.sweep import FirstLost, ranks_lost_first
from msrunwatch.read.runstate import RankFacts, RunFacts
from msrunwatch.rules.vocab import Effect, Role

WRITING_S = 10.0
"""Live view: a rank whose log grew this recently is alive, even after another failed
(msrun stops the others within seconds; until their logs stop, they are not "killed")."""
KILL_SIGNALS = (signal.SIGKILL, signal.SIGTERM)
QUIET = (Status.STARTING, Status.COMPILING, Status.TRAINING, Status.UNKNOWN, Status.WAITING)
"""Statuses of a rank that has neither ended nor shown a fault."""
OWN_FAULT = {Effect.FAIL: Status.FAILED, Effect.KILL: Status.KILLED}
Statuses = dict[int, tuple[Status, str]]


def own_sightings(found: Sequence[Sighting]) -> dict[int, list[Sighting]]:
    """Each rank's sightings about itself (not a peer's or the scheduler's word on it)."""
    own: dict[int, list[Sighting]] = {}
    for s in found:
        if s.own and s.rank is not None:
            own.setdefault(s.rank, []).append(s)
    return own


def scheduler_lost(found: Sequence[Sighting]) -> set[int]:
    """Ranks the scheduler lost (its first included)."""
    return {
        s.rank
        for s in found
        if not s.own and s.rank is not None and s.rule.effect in (Effect.LOSE, Effect.LOSE_FIRST)
    }


def _failed(own: Mapping[int, list[Sighting]], run: RunFacts, lost: set[int]) -> bool:
    """Did the run break: a rank failed on its own, exited badly, or the scheduler lost one?"""
    for sights in own.values():
        if any(s.rule.role is Role.CAUSE and s.rule.effect in OWN_FAULT for s in sights):
            return True
    return bool(lost) or any(r.exit_code not in (None, 0) for r in run.ranks)


def format_clock(when: float | None) -> str:
    """HH:MM:SS of a log time (the logs' own clock), or 'its last line' when unknown."""
    if when is None:
        return "its last line"
    return time.strftime("%H:%M:%S", time.gmtime(when))


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def phase(rank: RankFacts) -> Status:
    """Where a rank that has not ended got to."""
    compile_stats = rank.primary.compile
    if any(f.progress for f in rank.files):
        return Status.TRAINING
    if compile_stats.in_progress:
        return Status.COMPILING
    if compile_stats.count or any(f.training_started for f in rank.files):
        return Status.TRAINING
    # It has written (a GLOG line, or only prints: GLOG_v=3 logs errors alone), so it is
    # alive; an empty log says nothing by itself (see `_empty`).
    return Status.STARTING if rank.lines or rank.first_time is not None else Status.UNKNOWN


EMPTY_LIVE = "its log is empty so far (msrun opens it as it starts the process)"
"""Why a rank whose log is still empty is `starting` while the run is watched."""


def _empty(rank: RankFacts, run_failed: bool, opened: bool) -> tuple[Status, str] | None:
    """A log still empty while the run is watched (`opened`: its file appeared or grew less
    than --stall-after ago) and nothing has failed: msrun opened it as it started the rank's
    process, which imports MindSpore for seconds before its first line. After the run, once
    another rank failed, or past --stall-after, an empty log is a rank that never wrote:
    `unknown`, and the rank rules on silent ranks say more."""
    if not opened or run_failed or rank.lines or rank.first_time is not None:
        return None
    return Status.STARTING, EMPTY_LIVE


def _at(s: Sighting) -> str:
    return f"{s.rule.category} at {s.occurrence.file}:{s.hit.line}"


def _from_faults(own: Sequence[Sighting], code: int | None) -> tuple[Status, str] | None:
    """The status a rank's own findings and exit code give, strongest evidence first."""
    fault = next((s for s in own if s.rule.role is Role.CAUSE and s.rule.effect in OWN_FAULT), None)
    if fault is not None:
        status = OWN_FAULT[fault.rule.effect]
        return status, (_at(fault) if status is Status.FAILED else fault.hit.message)
    killed = next((s for s in own if s.rule.effect is Effect.KILL), None)
    if killed is not None:
        return Status.KILLED, killed.hit.message
    if code is not None and code < 0:
        name = _signal_name(code)
        gone = Status.KILLED if -code in KILL_SIGNALS else Status.FAILED
        return gone, f"msrun reports exit by {name}"
    gave_up = next((s for s in own if s.rule.effect is Effect.TIME_OUT), None)
    if gave_up is not None:
        return Status.TIMED_OUT, _at(gave_up)
    if code is not None and code > 0:
        return Status.FAILED, f"msrun reports exit code {code}"
    return None


def rank_status(
    rank: RankFacts,
    own: Sequence[Sighting],
    run: RunFacts,
    run_failed: bool,
    lost_first: str = "",
    writing: bool = False,
    live: bool = False,
    opened: bool = False,
) -> tuple[Status, str]:
    """Status and a short reason, strongest evidence first.

    lost_first: why this rank is taken as the first the scheduler lost (judge.sweep), when
    it is (and its log says nothing).
    writing: the live view saw its log grow just now, so it has not been killed (yet).
    live: the run is being watched (a quiet rank may still be alive).
    opened: live, its log appeared or grew less than --stall-after ago (see `_empty`).
    """
    faulted = _from_faults(own, rank.exit_code)
    if faulted is not None:
        return faulted
    if rank.finished_line:
        return Status.FINISHED, f"ended normally at {rank.primary.path}:{rank.finished_line}"
    if rank.rank in run.unregistered or run.all_workers_ok:
        return Status.FINISHED, "the scheduler saw it leave normally"
    if lost_first:
        return Status.FAILED, f"{lost_first}; its log shows no fault (a crash or kill)"
    if run_failed and rank.lines and not writing:
        return _stopped(rank, run, live)
    return _empty(rank, run_failed, opened) or (phase(rank), "")


def _stopped(rank: RankFacts, run: RunFacts, live: bool) -> tuple[Status, str]:
    """A rank quiet after another failed. After the run, msrun has stopped it; live, it is
    only waiting (alive until its own collective times out) until the job is known to be
    over: msrun says it kills the workers, or the scheduler gave up on the job (its shutdown
    found abnormal nodes: it exits, and msrun stops every worker left; msrun's console is
    seldom among the logs watched)."""
    if live and run.kill_all_time is None and run.scheduler_gave_up_time is None:
        since = format_clock(rank.last_time)
        return Status.WAITING, f"quiet since {since} after another rank failed"
    return Status.KILLED, "its log stops after another rank failed"


def rank_statuses(
    run: RunFacts,
    own: Mapping[int, list[Sighting]],
    found: Sequence[Sighting],
    silences: Mapping[int, float] | None,
    stall_after_s: float,
    lost: FirstLost | None,
) -> Statuses:
    """Every rank's status; `silences` (live view) tells which ranks are still writing, and
    which were heard of less than `stall_after_s` ago; `lost`: the rank(s) the scheduler
    lost first (sweep.first_lost, which the root cause reads too)."""
    failed = _failed(own, run, scheduler_lost(found) | set(lost.ranks if lost else ()))
    quiet = {r for r, sights in own.items() if sights}
    first = ranks_lost_first(lost, quiet)
    writing = {r for r, s in (silences or {}).items() if s < WRITING_S}
    opened = {r for r, s in (silences or {}).items() if s < stall_after_s}
    result = {
        r.rank: rank_status(
            r,
            own.get(r.rank, []),
            run,
            failed,
            lost_first=first.get(r.rank, ""),
            writing=r.rank in writing,
            live=silences is not None,
            opened=r.rank in opened,
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
    """Ranks with no fault of their own, not finished, while others timed out; live, only
    those whose log has not grown for WRITING_S (a rank still writing is about to report
    its own timeout)."""
    if not any(s is Status.TIMED_OUT for s in plain.values()):
        return []
    ranks = [r for r, s in plain.items() if s in QUIET]
    if silences is None:
        return ranks
    return [r for r in ranks if r in silences and silences[r] >= WRITING_S]


RANK_EFFECTS = {Effect.FAIL: Status.FAILED, Effect.STALL: Status.STALLED}
"""What a rank rule's effect makes of a rank that has neither ended nor shown a fault."""
REASON_EFFECTS = {Effect.LEAVE: Status.FINISHED}
"""Rank rule effects that keep a rank's status, this one, and give their message as its
reason (a rank that left the cluster early ended without a fault: why is the news)."""
BEFORE_STOPPED = {Effect.STALL: Status.STALLED}
"""Rank rule effects that say what a rank did before msrun stopped it (`killed` with no
fault, kill or timeout of its own): a rank that hung before it joined the cluster hung
first, and was killed only afterwards (as a hung rank named by its peers: with_named)."""
OWN_END = (Effect.FAIL, Effect.KILL, Effect.TIME_OUT)
"""Effects of a rank's own lines (or msrun's about its process) that say how it ended."""


def with_rank_effects(
    statuses: Statuses,
    ranked: Mapping[int, list[Sighting]],
    own: Mapping[int, Sequence[Sighting]] | None = None,
) -> Statuses:
    """Rank rules judge a rank's state as a whole (silent too long, never joined the
    cluster): their `fail` or `stall` effect applies to a rank still quiet, and `stall` to
    one msrun then stopped (`own`: its lines, none of which says how it ended); `leave`
    says why a rank that ended did so too early."""
    out = dict(statuses)
    for rank, (status, reason) in statuses.items():
        for hit in ranked.get(rank, []):
            effect = hit.rule.effect
            if effect in RANK_EFFECTS and status in QUIET:
                out[rank] = (RANK_EFFECTS[effect], hit.hit.message)
                break
            lines = None if own is None else own.get(rank, ())
            if effect in BEFORE_STOPPED and _stopped_by_others(status, lines):
                out[rank] = (BEFORE_STOPPED[effect], f"{hit.hit.message}; then {reason}")
                break
            if REASON_EFFECTS.get(effect) is status:
                out[rank] = (status, hit.hit.message)
                break
    return out


def _stopped_by_others(status: Status, own: Sequence[Sighting] | None) -> bool:
    """`killed`, and none of its own lines says how it ended (known only when `own` is)."""
    if status is not Status.KILLED or own is None:
        return False
    return not any(s.rule.effect in OWN_END for s in own)


Mark = tuple[int, int, int]
"""What moves when a rank makes progress: progress lines seen, compiles done and started."""


def progress_mark(rank: RankFacts) -> Mark:
    """The rank's progress so far: a new step line or a compile moves it, a warning does not."""
    lines = sum(f.progress.lines for f in rank.files if f.progress)
    c = rank.primary.compile
    return lines, c.count, c.started


def still_hung(run: RunFacts, hung: Mapping[int, tuple[Mark, str]]) -> dict[int, str]:
    """Ranks an earlier live verdict named hung whose progress has not moved since, with
    why they were named (whether their own log since says otherwise is `with_named`'s to
    judge)."""
    held = {}
    for n, (mark, why) in hung.items():
        rank = run.rank(n)
        if rank is not None and progress_mark(rank) == mark:
            held[n] = why
    return held


def progressed_since(rank: RankFacts | None, when: float | None) -> bool:
    """Whether the rank logged progress after `when` (it was named hung, then moved on)."""
    if rank is None or when is None:
        return False
    times = [f.progress.time for f in rank.files if f.progress and f.progress.time is not None]
    return any(t > when for t in times)


def spoke_for_itself(rank: RankFacts | None, own: Sequence[Sighting]) -> bool:
    """Its own log says what became of it: a fault of its own, a timeout of its own (it was
    alive and waiting), or a normal end. Exit codes and kills by others do not count."""
    if rank is not None and rank.finished_line:
        return True
    return any(s.rule.effect in (Effect.FAIL, Effect.TIME_OUT) for s in own)


def with_named(
    statuses: Statuses,
    named: Mapping[int, tuple[Status, str]],
    run: RunFacts,
    own: Mapping[int, list[Sighting]],
) -> Statuses:
    """Ranks the verdict names (hung: `stalled`; the sender of a bad chunk: `failed`) take
    that status, whatever their quiet looked like (training, waiting, or killed afterwards),
    until their own log says otherwise."""
    out = dict(statuses)
    for rank, (status, why) in named.items():
        if rank not in out or spoke_for_itself(run.rank(rank), own.get(rank, [])):
            continue
        before, reason = out[rank]
        after = f"; then {reason}" if before in (Status.KILLED, Status.FAILED) and reason else ""
        out[rank] = (status, why + after)
    return out


AT_WORK = (Status.STARTING, Status.COMPILING, Status.TRAINING)
"""Statuses of a rank that looks at work from its own log (a phase, no fault, no end)."""


WAITED_ON = {
    Effect.STALL: "while another rank is hung",
    Effect.LEAVE: "after another rank left the cluster",
}
"""Root-cause effects a quiet rank waits on (live), and how its reason says so."""


def waiting_on_hang(
    statuses: Statuses,
    hung: Collection[int],
    run: RunFacts,
    silences: Mapping[int, float] | None,
    stall_after_s: float,
    effect: Effect = Effect.STALL,
) -> Statuses:
    """Live, while the root cause is a hang or a rank that left early (`hung`: its ranks;
    `effect`: its rule's): a rank that looks at work but has been quiet past --stall-after
    is `waiting` on it, not `training` (it blocks in the collective the hung or departed
    rank never joined; its timeout, if it comes, will say so)."""
    if not hung or silences is None or effect not in WAITED_ON:
        return statuses
    out = dict(statuses)
    for n, (status, _) in statuses.items():
        quiet = silences.get(n)
        if n in hung or status not in AT_WORK or quiet is None or quiet < stall_after_s:
            continue
        rank = run.rank(n)
        since = format_clock(rank.last_time if rank is not None else None)
        out[n] = (Status.WAITING, f"quiet since {since} {WAITED_ON[effect]}")
    return out
