"""From a run's facts to its verdict, in one pass: attribute the hits, give each rank a
status, fire the rank rules, find the root cause, fire the run rules, group the findings,
and say how the run ended."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from msrunwatch.judge import rootcause
from msrunwatch.judge.clock import Over, run_over, stopped
from msrunwatch.judge.conditions import (
    LineEvidence,
    Synthetic,
    rank_sightings,
    rank_silences,
    run_figures,
    run_findings,
)
from msrunwatch.judge.context import Context
from msrunwatch.judge.findings import findings
from msrunwatch.judge.lostnode import lost_node
from msrunwatch.judge.lostrank import as_lost, lost_ranks
from msrunwatch.judge.model import Finding, FirstError, RankReport, Report, RootCause, Status
from msrunwatch.judge.peergone import before_witness
from msrunwatch.judge.sightings import Sighting, sightings
from msrunwatch.judge.statuses import (
    RANK_EFFECTS,
    Statuses,
    own_sightings,
    progressed_since,
    rank_statuses,
    scheduler_lost,
    silent_ranks,
    still_hung,
    waiting_on_hang,
    with_named,
    with_rank_effects,
)
from msrunwatch.judge.sweep import first_lost, spoke_up
from msrunwatch.read.cluster import Group
from msrunwatch.read.runstate import RankFacts, RunFacts
from msrunwatch.rules.expr import Expr
from msrunwatch.rules.model import Rule
from msrunwatch.rules.template import rank_ranges
from msrunwatch.rules.variables import RUN_ALIASES, RunState, values
from msrunwatch.rules.vocab import Severity

ENDED = (Status.FAILED, Status.KILLED, Status.TIMED_OUT, Status.STOPPED)
RUNNING = (Status.STARTING, Status.COMPILING, Status.TRAINING, Status.STALLED, Status.WAITING)
_ALIASES = {name: Expr(alias["expr"]) for name, alias in RUN_ALIASES.items()}


def missing_ranks(run: RunFacts) -> list[int]:
    """Ranks the job expected that never registered with the scheduler."""
    if run.expected_ranks is None or not run.registrations:
        return []
    registered = {r.rank for r in run.registrations}
    return [r for r in range(run.expected_ranks) if r not in registered]


def _run_state(
    run: RunFacts,
    plain: Mapping[int, Status],
    found: Sequence[Sighting],
    cause: RootCause | None,
    silences: Mapping[int, float] | None,
    blind: frozenset[int] = frozenset(),
    over: Over | None = None,
    halted: Sequence[int] = (),
) -> RunState:
    """The variables run-scope rules see about the run as a whole."""
    root = list(cause.ranks) if cause else []
    by_rank = {r.rank: r for r in run.ranks}

    def with_status(status: Status) -> list[int]:
        return sorted(r for r, s in plain.items() if s is status)

    killed = [
        r
        for r in with_status(Status.KILLED)
        if r not in root and (r not in by_rank or by_rank[r].exit_code is None)
    ]
    return RunState(
        ranks=len(plain),
        expected_ranks=run.expected_ranks,
        registered=len(run.registrations),
        missing_ranks=missing_ranks(run),
        ranks_without_log=sorted(set(plain) - {r.rank for r in run.ranks}),
        silent_ranks=[r for r in silent_ranks(plain, silences) if r not in blind],
        timed_out_ranks=with_status(Status.TIMED_OUT),
        killed_ranks=killed,
        failed_ranks=with_status(Status.FAILED),
        root_ranks=root,
        root_who=f"rank(s) {rank_ranges(root)}" if root else "the job",
        has_cause=cause is not None,
        lost_ranks=sorted(scheduler_lost(found)),
        stopped_ranks=sorted(halted),
        quiet_for_s=over.quiet_s if over else None,
    )


def _run_env(run_state: RunState, figures: Mapping[str, Any]) -> dict[str, Any]:
    env = {**figures, **values(run_state)}
    env.update({name: expr(env) for name, expr in _ALIASES.items()})
    return env


def _told_again(told: Sequence[Synthetic], again: Sequence[Synthetic]) -> list[Synthetic]:
    """The run findings as first told, each said again as it reads once the root cause is
    known, when only the run findings themselves could name it (the scheduler's word, a
    run-level cause): a victim rule's `{root_ranks}` was empty before. Which rules fired
    stays as first decided, since the cause was chosen from them."""
    by_rule = {s.rule.id: s for s in again}
    return [by_rule.get(s.rule.id, s) for s in told]


def _first_error(own: Sequence[Sighting]) -> FirstError | None:
    for s in own:
        if s.rule.severity is Severity.ERROR:
            occ = s.occurrence
            return FirstError(s.rule.category, s.rule.id, occ.file or "", s.hit.line, s.hit.time)
    return None


def _rank_report(
    number: int,
    rank: RankFacts | None,
    status: tuple[Status, str],
    own: Sequence[Sighting],
    host: str | None,
    ctx: Context,
    lost: Mapping[int, FirstError],
) -> RankReport:
    if rank is None:
        estimate = ctx.estimate(number) if number >= 0 else None
        return RankReport(number, None, None, status[0], status[1], host=host, estimate=estimate)
    f = rank.primary
    progress = next((x.progress for x in rank.files if x.progress), None)
    if progress is not None and ctx.stage_of is not None and ctx.stage(number) != ctx.stages - 1:
        # Under pipeline parallelism only the last stage computes the loss; others print 0.
        progress = replace(progress, loss=None)
    return RankReport(
        rank=number,
        log_dir=f.log_dir,
        file=f.path,
        status=status[0],
        status_reason=status[1],
        pid=rank.pid,
        host=host,
        memory=next((x.memory for x in rank.files if x.memory), None),
        compile=f.compile if f.compile.count or f.compile.started or f.compile.stages else None,
        progress=progress,
        first_error=_first_error(own) or lost.get(number),
        first_time=rank.first_time,
        last_time=rank.last_time,
        lines=rank.lines,
        exit_code=rank.exit_code,
        estimate=ctx.estimate(number) if number >= 0 else None,
    )


def _host(run: RunFacts, number: int, registered: Mapping[int, str]) -> str | None:
    """Where a rank ran: the scheduler's word, else the node its facts came from."""
    if number in registered:
        return registered[number]
    rank = run.rank(number)
    return rank.primary.host if rank is not None else None


def _waiting_on(report: RankReport, cause: RootCause | None) -> RankReport:
    """A waiting rank waits on the root cause's ranks."""
    if report.status is not Status.WAITING or cause is None:
        return report
    on = tuple(r for r in cause.ranks if r != report.rank)
    who = ", ".join(str(r) for r in on)
    reason = f"{report.status_reason}; waiting on rank {who}" if who else report.status_reason
    return replace(report, waiting_on=on, status_reason=reason)


def _outcome(statuses: Statuses, found: Sequence[Finding]) -> str:
    if any(f.severity is Severity.ERROR for f in found):
        return "failed"
    plain = [s for s, _ in statuses.values()]
    if any(s in ENDED for s in plain):
        return "failed"
    if plain and all(s is Status.FINISHED for s in plain):
        return "ok"
    if any(s in RUNNING for s in plain):
        return "running"
    return "unknown"


def _with_stages(run: RunFacts, ctx: Context) -> Context:
    """Pipeline stages announced in the logs, when the driver did not know them."""
    if ctx.stage_of is not None:
        return ctx
    stages = max((f.pipeline_stages or 1 for r in run.ranks for f in r.files), default=1)
    world = run.expected_ranks or len(run.ranks)
    if stages < 2 or world % stages:
        return ctx
    per = world // stages
    return replace(ctx, stages=stages, stage_of=lambda rank: min(rank // per, stages - 1))


def _named(
    run: RunFacts,
    ctx: Context,
    plain: Mapping[int, Status],
    peer: tuple[RootCause, Rule] | None,
    extra: Sequence[Synthetic],
) -> dict[int, tuple[Status, str]]:
    """Ranks this verdict names, with the status that follows and why: the peer the others
    waited on (or received a bad chunk from) by its rule's `peer.effect`, the ranks a run
    rule with an effect names, and (live) the ranks named hung before whose progress has not
    moved since: none once msrun has terminated every worker, the run is over and every rank
    it stopped is `stopped`, as triage says: the view held them `stalled` and never ended,
    when the user pressed Ctrl+C because it had named the hang (the re-trial's F4')."""
    held = {} if run.terminate_all_time is not None else still_hung(run, ctx.hung)
    named = {n: (Status.STALLED, why) for n, why in held.items()}
    for syn in extra:
        if syn.rule.effect in RANK_EFFECTS:
            named.update(dict.fromkeys(syn.ranks, (RANK_EFFECTS[syn.rule.effect], syn.message)))
    if peer is not None and peer[1].peer is not None and peer[1].peer.effect in RANK_EFFECTS:
        cause, rule = peer[0], peer[1].peer
        status = RANK_EFFECTS[rule.effect]
        hung = "hung: " if status is Status.STALLED else ""
        said = f"{cause.message} ({cause.file}:{cause.line})"
        why = f"{hung}{said}; its own log shows no fault"
        for n in cause.ranks:  # one that ended left early (rootcause: `if_ended`); not moved on
            if plain.get(n) is Status.FINISHED:
                if rule.if_ended:
                    named[n] = (Status.FINISHED, f"left early: {said}; it ended without a fault")
            elif not progressed_since(run.rank(n), cause.time):
                named[n] = (status, why)
    return named


def _groups(run: RunFacts) -> dict[int, dict[str, Group]]:
    """Each rank's communicator groups by name (a peer named within a group is found so)."""
    return {r.rank: {g.name: g for f in r.files for g in f.groups} for r in run.ranks}


def judge(
    run: RunFacts, rules: Sequence[Rule], warnings: Sequence[str] = (), ctx: Context | None = None
) -> Report:
    """The verdict on a run."""
    ctx = _with_stages(run, ctx or Context())
    by_id = {r.id: r for r in rules}
    found = sightings(run, by_id)
    silences = rank_silences(run, ctx)
    lost = first_lost(found, run, ctx.clocks)  # the scheduler's word, for statuses and cause
    lost = before_witness(lost, found, run, ctx.clocks) if lost else None  # unless it saw a peer go
    statuses = rank_statuses(run, own_sightings(found), found, silences, ctx.stall_after_s, lost)
    plain = {r: s for r, (s, _) in statuses.items()}
    seen = LineEvidence.of(run, found)
    ranked = rank_sightings(rules, run, plain, ctx, seen)
    found = sorted([*found, *ranked], key=lambda s: s.sort_key)
    own = own_sightings(found)
    statuses = with_rank_effects(statuses, own_sightings(ranked), own)
    over = run_over(run, ctx)
    statuses = stopped(statuses, over, run, ctx.stall_after_s)
    world = run.expected_ranks or len(run.ranks)
    hosts = {g.rank: g.host for g in run.registrations}
    host_of = {n: _host(run, n, hosts) for n in statuses}

    gone = scheduler_lost(found) | set(lost.ranks if lost else ())  # and a node lost whole

    def whole(cause: RootCause | None) -> RootCause | None:
        exits = {n: r.exit_code for n in statuses if (r := run.rank(n)) is not None}
        widened = lost_node(cause, host_of, plain, spoke_up(found), exits, ctx.blind)
        if widened is not cause and widened is not None:
            gone.update(widened.ranks)
        return widened

    cause = rootcause.from_causes(found, ctx.clocks)
    by_peer = None if cause else rootcause.from_peers(found, plain, world, ctx.blind, _groups(run))
    cause = whole(cause or by_peer)
    figures = values(run_figures(run, plain, ctx, LineEvidence.of(run, found)))
    halted = [r for r, (s, _) in statuses.items() if s is Status.STOPPED]
    state = _run_state(run, plain, found, cause, silences, ctx.blind, over, halted)
    env = _run_env(state, figures)
    extra = run_findings(rules, run, env)
    if cause is None:
        cause = whole(rootcause.fallback(found, extra, lost))
        if cause is not None:
            state = _run_state(run, plain, found, cause, silences, ctx.blind, over, halted)
            extra = _told_again(extra, run_findings(rules, run, _run_env(state, figures)))
    # a node lost whole (lostnode widened the cause) crashed or was killed: its ranks did not hang
    named_peer = by_peer if by_peer is not None and cause == by_peer else None
    peer = (named_peer, by_id[named_peer.rule]) if named_peer and named_peer.rule in by_id else None
    statuses = with_named(statuses, _named(run, ctx, plain, peer, extra), run, own)
    if cause is not None and cause.rule in by_id:
        effect = by_id[cause.rule].effect
        statuses = waiting_on_hang(statuses, cause.ranks, run, silences, ctx.stall_after_s, effect)
    unheard = lost_ranks(cause, gone, statuses, run, own)
    statuses = as_lost(statuses, unheard, host_of)
    grouped = findings(found, cause, extra, by_id)
    ranks = tuple(
        _waiting_on(
            _rank_report(n, run.rank(n), statuses[n], own.get(n, []), host_of[n], ctx, unheard),
            cause,
        )
        for n in sorted(statuses)
    )
    return Report(
        log_dirs=run.log_dirs,
        outcome=_outcome(statuses, grouped),
        root_cause=cause,
        ranks=ranks,
        findings=tuple(grouped),
        warnings=tuple(warnings),
        files=sum(len(r.files) for r in run.ranks) + len(run.schedulers) + len(run.consoles),
        bytes=sum(f.size for r in run.ranks for f in r.files)
        + sum(f.size for f in (*run.schedulers, *run.consoles)),
        consoles=tuple(os.path.join(f.log_dir, f.path) for f in run.consoles),
    )
