"""From a run's facts to its verdict: statuses, root cause, grouped findings, outcome."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from msrunwatch.judge import rootcause as rc
from msrunwatch.judge.evaluate import (
    Context,
    Synthetic,
    rank_sightings,
    rank_silences,
    run_aggregates,
    run_findings,
)
from msrunwatch.judge.findings import Sighting, group, sightings
from msrunwatch.judge.model import Finding, FirstError, RankReport, Report, RootCause, Status
from msrunwatch.judge.statuses import (
    Statuses,
    own_sightings,
    rank_statuses,
    silent_ranks,
    with_stalls,
)
from msrunwatch.read.runstate import RankFacts, RunFacts
from msrunwatch.rules.model import Rule
from msrunwatch.rules.vocab import Role, Severity

ENDED = (Status.FAILED, Status.KILLED, Status.TIMED_OUT)


def _run_env(
    run: RunFacts,
    plain: Mapping[int, Status],
    found: Sequence[Sighting],
    cause: RootCause | None,
    silences: Mapping[int, float] | None,
) -> dict[str, Any]:
    """The variables run-scope rules see."""
    root = list(cause.ranks) if cause else []
    by_rank = {r.rank: r for r in run.ranks}

    def with_status(status: Status) -> list[int]:
        return sorted(r for r, s in plain.items() if s is status)

    killed = [
        r
        for r in with_status(Status.KILLED)
        if r not in root and (r not in by_rank or by_rank[r].exit_code is None)
    ]
    return {
        "ranks": len(plain),
        "expected_ranks": run.expected_ranks,
        "registered": len(run.registrations),
        "missing_ranks": rc.missing_ranks(run),
        "silent_ranks": silent_ranks(plain, silences),
        "timed_out_ranks": with_status(Status.TIMED_OUT),
        "killed_ranks": killed,
        "failed_ranks": with_status(Status.FAILED),
        "root_ranks": root,
        "has_cause": cause is not None,
        "cluster_init_failed": any(s.rule.category == "cluster-init-timeout" for s in found),
    }


def _fallback_cause(found: Sequence[Sighting], extra: Sequence[Synthetic]) -> RootCause | None:
    """No rank logged a fault of its own: a run-level cause, the scheduler's word, a symptom."""
    for syn in extra:
        if syn.rule.role is Role.CAUSE and syn.rule.severity is Severity.ERROR:
            title = syn.rule.title
            reason = f"no rank logged a fault of its own: {title[:1].lower()}{title[1:]}"
            return rc.run_level(syn.rule, syn.ranks, syn.message, reason)
    named = rc.from_scheduler(found)
    if named is not None:
        sight, rank = named
        return rc._cause(sight, [rank], "the scheduler names it the first to time out")
    errors = [s for s in found if s.rule.severity is Severity.ERROR]
    if not errors:
        return None
    first = errors[0]
    ranks = [s.rank for s in rc._same_fault(first, errors) if s.rank is not None]
    return rc._cause(first, ranks, "the earliest error (no rank logged a fault of its own)")


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
    return Finding(
        rule.id,
        rule.title,
        rule.category,
        rule.severity,
        role,
        first.hit.message,
        ranks,
        tuple(occurrences),
        sum(s.hit.count for s in sights),
        rule.hint,
        first.hit.fingerprint,
    )


def _synthetic_finding(syn: Synthetic, role: str) -> Finding:
    rule = syn.rule
    return Finding(
        rule.id,
        rule.title,
        rule.category,
        rule.severity,
        role,
        syn.message,
        syn.ranks,
        syn.occurrences,
        max(len(syn.ranks), 1),
        rule.hint,
        rule.id,
    )


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


def _findings(
    found: Sequence[Sighting], cause: RootCause | None, extra: Sequence[Synthetic]
) -> list[Finding]:
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
    order = {"root-cause": 0, "victim": 1, "symptom": 2}
    out.sort(key=lambda f: (-f.severity.rank, order[f.role], _first_time(f)))
    return out


def _first_time(f: Finding) -> float:
    first = f.first
    return first.time if first is not None and first.time is not None else float("inf")


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
) -> RankReport:
    if rank is None:
        return RankReport(number, None, None, status[0], status[1], host=host)
    f = rank.primary
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
        progress=next((x.progress for x in rank.files if x.progress), None),
        first_error=_first_error(own),
        first_time=rank.first_time,
        last_time=rank.last_time,
        lines=rank.lines,
        exit_code=rank.exit_code,
    )


def _last_stage_loss(report: RankReport, ctx: Context) -> RankReport:
    """Under pipeline parallelism only the last stage computes the loss; others print 0."""
    p = report.progress
    if p is None or ctx.stage_of is None or ctx.stage_of(report.rank) == ctx.stages - 1:
        return report
    return replace(report, progress=replace(p, loss=None))


def _outcome(statuses: Statuses, findings: Sequence[Finding]) -> str:
    if any(f.severity is Severity.ERROR for f in findings):
        return "failed"
    plain = [s for s, _ in statuses.values()]
    if any(s in ENDED for s in plain):
        return "failed"
    if plain and all(s is Status.FINISHED for s in plain):
        return "ok"
    if any(
        s in (Status.STARTING, Status.COMPILING, Status.TRAINING, Status.STALLED) for s in plain
    ):
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


def judge(
    run: RunFacts, rules: Sequence[Rule], warnings: Sequence[str] = (), ctx: Context | None = None
) -> Report:
    """The verdict on a run."""
    ctx = _with_stages(run, ctx or Context())
    found = sightings(run, {r.id: r for r in rules})
    silences = rank_silences(run, ctx)
    statuses = rank_statuses(run, own_sightings(found), found, silences)
    plain = {r: s for r, (s, _) in statuses.items()}
    found = sorted([*found, *rank_sightings(rules, run, plain, ctx)], key=lambda s: s.sort_key)
    own = own_sightings(found)
    statuses = with_stalls(statuses, own)
    cause = rc.from_causes(found)
    env = {**run_aggregates(run, plain, ctx), **_run_env(run, plain, found, cause, silences)}
    extra = run_findings(rules, run, env)
    cause = cause or _fallback_cause(found, extra)
    findings = _findings(found, cause, extra)
    hosts = {g.rank: g.host for g in run.registrations}
    ranks = tuple(
        _last_stage_loss(
            _rank_report(n, run.rank(n), statuses[n], own.get(n, []), hosts.get(n)), ctx
        )
        for n in sorted(statuses)
    )
    return Report(
        log_dirs=run.log_dirs,
        outcome=_outcome(statuses, findings),
        root_cause=cause,
        ranks=ranks,
        findings=tuple(findings),
        warnings=tuple(warnings),
        files=sum(len(r.files) for r in run.ranks) + len(run.schedulers) + len(run.consoles),
        bytes=sum(f.size for r in run.ranks for f in r.files)
        + sum(f.size for f in (*run.schedulers, *run.consoles)),
    )
