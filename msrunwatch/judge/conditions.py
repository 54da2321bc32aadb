"""Rank- and run-scope rules: the variables they read, and firing them.

The variables are the fields of `rules.variables` (RankState, RunFigures, StageFigures,
RunState); this module only fills them in.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from msrunwatch.core.compat import zip_strict
from msrunwatch.core.numbers import median
from msrunwatch.judge.context import Context
from msrunwatch.judge.model import Occurrence, Status
from msrunwatch.judge.peergone import witnesses
from msrunwatch.judge.sightings import Sighting
from msrunwatch.judge.statuses import format_clock, still_hung
from msrunwatch.judge.sweep import TIE_SECONDS, Clocks, uncertainty
from msrunwatch.read.facts import Hit
from msrunwatch.read.runstate import RankFacts, RunFacts
from msrunwatch.rules.expr import RememberedCondition
from msrunwatch.rules.model import Rule, Scope
from msrunwatch.rules.template import fingerprint, render
from msrunwatch.rules.variables import (
    RankState,
    RunFigures,
    StageFigures,
    rank_names,
    values,
)

STARTED = (Status.COMPILING, Status.TRAINING, Status.FINISHED)
RUNNING = ("starting", "compiling", "training")
QUIET_GAP_FLOOR_S = 5.0
"""Logs that stopped growing closer than this stopped together: a print's flush, a file
system's mtime granularity (NFS caches attributes for seconds) order them, not the hang."""
QUIET_GAP_STEPS = 2.0
"""...nor closer than this many of the run's steps: ranks in lock step stop in one
collective, and the one that waits may write the rest of its step (one step's time) after
the hung one stopped; the second step is margin for jitter. The trial's hang replayed at
0.2x (files stopped 4 s apart, steps 8 s) named the waiter for the 28 minutes an HCCL
timeout takes; at 1x (0.9 s apart) it named both: the gap scales with the pace, so the
threshold does too."""
LOCK_STEP_SLACK = 1
"""Printed steps that differ by this much or less are one step: a rank prints its step's
loss after the step's collectives, so when one rank printed step 8 every rank it reduces
with got through step 8 too, printed or not (the re-trial's C1: a whole job cut within
3 ms, rank 1's step-8 print 0.7 ms after the cut, named rank 1 hung alone)."""
HELD_AT_WORK = (*RUNNING, "waiting", "killed", "unknown")
"""Statuses that do not end a hang an earlier live verdict named: waiting after another
rank failed, or killed by msrun, is what a hung rank's quiet looks like (statuses.with_named)."""


@dataclass(frozen=True)
class Synthetic:
    """A run-scope finding: no single line states it."""

    rule: Rule
    ranks: tuple[int, ...]
    message: str
    occurrences: tuple[Occurrence, ...]
    why: str = ""
    """The rule's `why`, filled from the run's state as its message is."""


def _nums(values: Sequence[Any]) -> list[float]:
    return [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]


def _med(values: Sequence[Any]) -> float | None:
    nums = _nums(values)
    return median(nums) if nums else None


def silence_of(rank: RankFacts, ctx: Context) -> float | None:
    """Seconds since any of the rank's files grew (live view only)."""
    if ctx.quiet_s is None:
        return None
    values = [
        ctx.quiet_s[(f.log_dir, f.path)] for f in rank.files if (f.log_dir, f.path) in ctx.quiet_s
    ]
    return min(values) if values else None


def rank_silences(run: RunFacts, ctx: Context) -> dict[int, float] | None:
    """silence_of for every rank that has one (live view); None in triage."""
    if ctx.quiet_s is None:
        return None
    return {r.rank: s for r in run.ranks if (s := silence_of(r, ctx)) is not None}


@dataclass(frozen=True)
class LineEvidence:
    """What the line rules found, as rank and run rules read it."""

    fired: Mapping[int, tuple[str, ...]]
    """Each rank's own line rules that fired, by id."""
    categories: tuple[str, ...]
    registered: frozenset[int]
    unregistered: frozenset[int] = frozenset()
    """Ranks the scheduler saw leave the cluster."""
    saw_peer_go: Mapping[int, float] = field(default_factory=dict)
    """Each rank's earliest dated line saying a peer went away (peergone.witnesses)."""

    @classmethod
    def of(cls, run: RunFacts, found: Sequence[Sighting]) -> LineEvidence:
        fired: dict[int, set[str]] = {}
        for s in found:
            if s.own and s.rank is not None:
                fired.setdefault(s.rank, set()).add(s.rule.id)
        return cls(
            {rank: tuple(sorted(ids)) for rank, ids in fired.items()},
            tuple(sorted({s.rule.category for s in found})),
            frozenset(g.rank for g in run.registrations),
            run.unregistered,
            {n: s.hit.time for n, s in witnesses(found).items() if s.hit.time is not None},
        )


NO_EVIDENCE = LineEvidence({}, (), frozenset())


def _pace(rank: RankFacts) -> float | None:
    """Seconds per step: the rank's cadence, else the step time it logs (TimeMonitor), else
    its dated lines' span over its steps (the prints carry no time; startup counts in, so it
    errs long: towards naming together)."""
    p = rank.progress
    if p is None:
        return None
    if p.cadence_s:
        return p.cadence_s
    if p.step_time_ms:
        return p.step_time_ms / 1000
    first, last = rank.first_time, rank.last_time
    if p.step < 1 or first is None or last is None or last <= first:
        return None
    return (last - first) / p.step


@dataclass(frozen=True)
class Quiet:
    """Who was seen alive after another rank went quiet (live view): on evidence, not on
    which file happened to stop growing first (trial F3)."""

    run: RunFacts
    gap_s: float
    """quiet_gap_s: silences closer than this do not order two ranks."""
    saw_peer_go: Mapping[int, float]
    clocks: Clocks | None = None

    @classmethod
    def of(cls, run: RunFacts, ctx: Context, seen: LineEvidence) -> Quiet:
        if ctx.quiet_s is None:  # triage: no silences to order
            return cls(run, QUIET_GAP_FLOOR_S, seen.saw_peer_go, ctx.clocks)
        paces = [p for r in run.ranks if (p := _pace(r)) is not None]
        steps = QUIET_GAP_STEPS * median(paces) if paces else 0.0
        return cls(run, max(QUIET_GAP_FLOOR_S, steps), seen.saw_peer_go, ctx.clocks)

    def outlived(self, gone: RankState, alive: RankState, slack: int = 0) -> bool:
        """Whether `alive` was seen alive after `gone` went quiet: its log grew more than
        gap_s later, or it logged a peer going after gone's last dated line (by more than
        their clocks can tell apart). Never when `alive` is more than `slack` steps behind:
        a rank behind that writes on is the one the other waits on (once every rank is
        quiet, a step apart is when the prints came: LOCK_STEP_SLACK)."""
        if gone.step is not None and alive.step is not None and alive.step < gone.step - slack:
            return False
        quiet, later = gone.silence_s, alive.silence_s
        if quiet is not None and later is not None and later + self.gap_s < quiet:
            return True
        return self._saw_go(gone.rank, alive.rank)

    def by_last_line(self, ranks: Sequence[int]) -> list[int]:
        """The ranks with a dated line, the one whose log's last went silent first, first."""
        last = {n: t for n in ranks if (r := self.run.rank(n)) and (t := r.last_time) is not None}
        return sorted(last, key=last.__getitem__)

    def saw_any_go(self, alive: int, by_last: Sequence[int]) -> bool:
        """Whether `alive` logged a peer going after another's last line (`by_last`: the
        others, earliest silent first, so the first one usually decides)."""
        saw = self.saw_peer_go.get(alive)
        if saw is None:
            return False
        for gone in by_last:
            facts = self.run.rank(gone)
            if facts is None or facts.last_time is None or saw - facts.last_time <= TIE_SECONDS:
                return False  # no later last line can be earlier than the peer's going
            if gone != alive and self._saw_go(gone, alive):
                return True
        return False

    def _saw_go(self, gone: int, alive: int) -> bool:
        saw = self.saw_peer_go.get(alive)
        facts, other = self.run.rank(gone), self.run.rank(alive)
        if saw is None or facts is None or other is None or facts.last_time is None:
            return False
        here = (facts.primary.log_dir, facts.primary.path)
        there = (other.primary.log_dir, other.primary.path)
        within = uncertainty(here, there, self.clocks) or 0.0
        return saw - facts.last_time > max(within, TIE_SECONDS)


def _rank_state(
    rank: RankFacts, status: Status, ctx: Context, seen: LineEvidence = NO_EVIDENCE
) -> RankState:
    memory = next((f.memory for f in rank.files if f.memory), None)
    progress = rank.progress
    c = rank.primary.compile
    used = memory.used_mb if memory else None
    estimate = ctx.estimate(rank.rank)
    fault = next((f.last_fault for f in rank.files if f.last_fault), None)
    return RankState(
        rank=rank.rank,
        status=status.value,
        lines=rank.lines,
        exit_code=rank.exit_code,
        step=progress.step if progress else None,
        loss=progress.loss if progress else None,
        step_time_ms=progress.step_time_ms if progress else None,
        cadence_s=progress.cadence_s if progress else None,
        compile_ms=c.total_ms if c.count else None,
        compile_count=c.count,
        compiling=c.in_progress,
        device_mb=memory.device_mb if memory else None,
        used_mb=used,
        peak_used_mb=memory.peak_used_mb if memory else None,
        peak_actual_mb=memory.peak_actual_mb if memory else None,
        limit_mb=ctx.limit_mb if ctx.limit_mb is not None else used,
        stage=ctx.stage(rank.rank),
        estimate_used_mb=estimate.used_mb if estimate else None,
        estimate_actual_mb=estimate.actual_mb if estimate else None,
        estimate_from=ctx.estimate_from if estimate else None,
        silence_s=silence_of(rank, ctx),
        joined=any(f.node_id is not None for f in rank.files),
        registered=rank.rank in seen.registered,
        left_cluster=rank.rank in seen.unregistered,
        ended_normally=bool(rank.finished_line),
        last_line_at=format_clock(rank.last_time) if rank.last_time is not None else None,
        meta_connect_failures=sum(f.meta_connect_failures for f in rank.files),
        meta_server_url=next((f.meta_server_url for f in rank.files if f.meta_server_url), None),
        fired=list(seen.fired.get(rank.rank, ())),
        last_fault_line=fault[0] if fault else None,
        last_fault_text=fault[1] if fault else None,
    )


def _figures(
    states: Sequence[RankState],
    ctx: Context,
    quiet: Quiet,
    seen: LineEvidence = NO_EVIDENCE,
    held: Collection[int] = (),
) -> RunFigures:
    compile_ms = _nums([s.compile_ms for s in states])
    steps = _nums([s.step for s in states])
    stages = max(ctx.stages, 1)
    by_stage = [[s.peak_actual_mb for s in states if s.stage == k] for k in range(stages)]
    started = {x.value for x in STARTED}
    return RunFigures(
        ranks_progressing=sum(1 for s in states if s.status in started),
        ranks_finished=sum(1 for s in states if s.status == Status.FINISHED.value),
        median_compile_ms=_med(compile_ms),
        min_compile_ms=min(compile_ms) if compile_ms else None,
        max_compile_ms=max(compile_ms) if compile_ms else None,
        median_step=_med(steps),
        max_step=max(steps) if steps else None,
        median_peak_actual_mb=_med([s.peak_actual_mb for s in states]),
        stages=stages,
        stage_medians_peak_actual_mb=[_med(values) for values in by_stage],
        stall_after_s=ctx.stall_after_s,
        caught_up=ctx.caught_up,
        median_silence_s=_med([s.silence_s for s in states]),
        median_cadence_s=_med([s.cadence_s for s in states]),
        ranks_recent=sum(
            1 for s in states if s.silence_s is not None and s.silence_s < ctx.stall_after_s
        ),
        ranks_writing=sum(
            1
            for s in states
            if s.status in RUNNING and s.silence_s is not None and s.silence_s < ctx.stall_after_s
        ),
        quiet_gap_s=quiet.gap_s,
        silent_first_ranks=_silent_first(states, ctx, quiet, held),
        categories=list(seen.categories),
        behind_ranks=_behind(states),
    )


def _silent_first(
    states: Sequence[RankState], ctx: Context, quiet: Quiet, held: Collection[int] = ()
) -> list[int]:
    """When every rank still at work is silent, the ranks that went quiet first: those an
    earlier live verdict named hung, if any still are (they were named while the others
    still wrote, so whoever went quiet after them was waiting on them, however soon), else
    those at the lowest step when it is more than a step behind (a rank behind stopped
    first: the others could not finish a step without it), less any seen alive after another
    of them went quiet (Quiet.outlived). Ranks that stopped within a step and within
    quiet_gap_s of each other are named together: the order in which their files stopped
    growing, or their last prints came, is noise, not evidence."""
    hung = [s for s in states if s.rank in held and s.status in HELD_AT_WORK]
    running = [s for s in states if s.status in RUNNING or s in hung]
    silences = [s.silence_s for s in running if s.silence_s is not None]
    if not silences or min(silences) < ctx.stall_after_s:
        return []
    if hung:
        return sorted(s.rank for s in hung)
    silent = _lowest_step([s for s in running if s.silence_s is not None])
    longest = max(s.silence_s or 0.0 for s in silent)
    by_last = quiet.by_last_line([s.rank for s in silent]) if quiet.saw_peer_go else []
    first = [  # Quiet.outlived by any other, in time linear in the ranks (512 hung ones)
        a
        for a in silent
        if (a.silence_s or 0.0) + quiet.gap_s >= longest and not quiet.saw_any_go(a.rank, by_last)
    ]
    return sorted(s.rank for s in first or silent)


def _lowest_step(states: Sequence[RankState]) -> list[RankState]:
    """The ranks at the lowest step when the ranks' steps differ by more than lock step's
    slack (ranks that print none are not compared, and not named by it), else all."""
    steps = {s.step for s in states if s.step is not None}
    if not steps or max(steps) - min(steps) <= LOCK_STEP_SLACK:
        return list(states)
    return [s for s in states if s.step == min(steps)]


def _writing_after(states: Sequence[RankState], ctx: Context, quiet: Quiet) -> None:
    """Fill ranks_writing_after for each running rank silent past --stall-after: the ranks
    still writing that were seen alive after it went quiet (live view; the silent ranks
    times the writing ones, so none at all while every rank writes)."""
    writing = [
        s
        for s in states
        if s.status in RUNNING and s.silence_s is not None and s.silence_s < ctx.stall_after_s
    ]
    if not writing:
        return
    for state in states:
        silence = state.silence_s
        if state.status in RUNNING and silence is not None and silence >= ctx.stall_after_s:
            state.ranks_writing_after = sum(
                1 for w in writing if w is not state and quiet.outlived(state, w)
            )


def _behind(states: Sequence[RankState]) -> list[int]:
    """The ranks whose last step is the lowest, when the others got further."""
    steps = [(s.rank, s.step) for s in states if s.step is not None]
    if len({step for _, step in steps}) < 2:
        return []
    lowest = min(step for _, step in steps)
    return sorted(rank for rank, step in steps if step == lowest)


def _stage(states: Sequence[RankState], stage: int) -> StageFigures:
    peaks = _nums([s.peak_actual_mb for s in states if s.stage == stage])
    return StageFigures(
        stage_median_peak_actual_mb=median(peaks) if peaks else None,
        stage_max_peak_actual_mb=max(peaks) if peaks else None,
        stage_min_peak_actual_mb=min(peaks) if peaks else None,
    )


def run_figures(
    run: RunFacts, statuses: Mapping[int, Status], ctx: Context, seen: LineEvidence
) -> RunFigures:
    """Run-wide figures over every rank with a log, for run-scope rules."""
    states = [_rank_state(r, statuses[r.rank], ctx, seen) for r in run.ranks if r.rank in statuses]
    return _figures(states, ctx, Quiet.of(run, ctx, seen), seen, still_hung(run, ctx.hung))


def rank_envs(
    run: RunFacts, statuses: Mapping[int, Status], ctx: Context, seen: LineEvidence = NO_EVIDENCE
) -> Iterator[tuple[RankFacts, dict[str, Any]]]:
    """Each rank with the variables its rank-scope rules see, one at a time: an env is a
    hundred names, and 100,000 ranks' envs at once took 300 MiB (issue 21, defect 14)."""
    ranks = [r for r in run.ranks if r.rank in statuses]
    states = [_rank_state(r, statuses[r.rank], ctx, seen) for r in ranks]
    quiet = Quiet.of(run, ctx, seen)
    _writing_after(states, ctx, quiet)
    shared = values(_figures(states, ctx, quiet, seen, still_hung(run, ctx.hung)))
    stages = {k: values(_stage(states, k)) for k in {s.stage for s in states}}
    starts = [t for r in run.ranks if (t := r.first_time) is not None]
    age = ctx.now - min(starts) if ctx.now is not None and starts else None
    for rank, state in zip_strict(ranks, states):
        state.age_s, state.ranks = age, len(states)
        yield rank, {**values(state), **shared, **stages[state.stage], **rank_names(rank.rank)}


def _evidence(rank: RankFacts, kind: str) -> tuple[int | None, float | None, str]:
    """(line, time, text) of the line a rank-scope finding points at."""
    memory = next((f.memory for f in rank.files if f.memory), None)
    progress = rank.progress
    if kind == "memory" and memory is not None:
        return memory.line, memory.time, "memory summary"
    if kind == "progress" and progress is not None:
        return progress.line, progress.time, "last progress line"
    c = rank.primary.compile
    if kind == "compile" and (c.end_line is not None or c.last_end is not None):
        return c.end_line, c.last_end, "compile finished"
    fault = next((f.last_fault for f in rank.files if f.last_fault), None)
    if kind == "fault" and fault is not None:
        return fault[0], rank.last_time, fault[1]
    return (rank.primary.lines or None), rank.last_time, "last line"


def rank_sightings(
    rules: Sequence[Rule],
    run: RunFacts,
    statuses: Mapping[int, Status],
    ctx: Context,
    seen: LineEvidence = NO_EVIDENCE,
) -> list[Sighting]:
    """Fire every rank-scope rule on every rank."""
    chosen = [
        (r, RememberedCondition(r.when))
        for r in rules
        if r.scope is Scope.RANK and r.when is not None
    ]
    if not chosen:
        return []
    return [
        _rank_sighting(rule, rank, env)
        for rank, env in rank_envs(run, statuses, ctx, seen)
        for rule, when in chosen
        if when.truth(env)
    ]


def _rank_sighting(rule: Rule, rank: RankFacts, env: Mapping[str, Any]) -> Sighting:
    line, when, text = _evidence(rank, rule.evidence)
    message = render(rule.message, env)
    hit = Hit(rule.id, line or 0, 0, when, True, message, fingerprint(rule.id, message), (), text)
    f = rank.primary
    occ = Occurrence(rank.rank, f.log_dir, f.path, line, when, True, text, 1, message)
    return Sighting(hit, rule, rank.rank, True, occ, why=_why(rule, env))


def run_findings(rules: Sequence[Rule], run: RunFacts, env: Mapping[str, Any]) -> list[Synthetic]:
    """Fire every run-scope rule once."""
    found = []
    for rule in rules:
        if rule.scope is not Scope.RUN or rule.when is None or not rule.when.truth(env):
            continue
        listed = rule.ranks(env) if rule.ranks is not None else []
        ranks = tuple(sorted({r for r in listed or [] if isinstance(r, int)}))
        message, occurrences = render(rule.message, env), _occurrences(run, ranks)
        found.append(Synthetic(rule, ranks, message, occurrences, _why(rule, env)))
    return found


def _why(rule: Rule, env: Mapping[str, Any]) -> str:
    """The rule's `why` for the verdict, filled as its message is (empty: none)."""
    return render(rule.why, env) if rule.why else ""


def _occurrences(run: RunFacts, ranks: Sequence[int]) -> tuple[Occurrence, ...]:
    out = []
    for number in ranks:
        rank = run.rank(number)
        if rank is None:
            out.append(Occurrence(number, None, None, None, None, False, ""))
            continue
        f = rank.primary
        out.append(Occurrence(number, f.log_dir, f.path, f.lines or None, f.last_time, True, ""))
    return tuple(out)
