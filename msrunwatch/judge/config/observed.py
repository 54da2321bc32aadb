"""Logs read together with the run's config: stages, budget, and estimate versus reality.

The config tells triage what the logs cannot: which pipeline stage each rank is on
(ranks are laid out stage by stage, world / pp per stage) and how much memory the job
allows (max_device_memory). Each rank's observed peak is set beside the estimate for its
stage; a large gap becomes an info finding, since either the estimate's assumptions or
the run are not what the config says.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from msrunwatch.judge.config.derive import derive, with_world, world_of
from msrunwatch.judge.config.memory import Estimate, estimate
from msrunwatch.judge.evaluate import Context
from msrunwatch.judge.model import Finding, Occurrence, RankEstimate, RankReport, Report
from msrunwatch.read.config.model import TrainingConfig
from msrunwatch.rules.model import Rule
from msrunwatch.rules.template import rank_ranges
from msrunwatch.rules.vocab import Severity

GAP = 0.15
"""Observed and estimated peaks further apart than this (relative) are reported."""
RULE = "memory-estimate-gap"


def context_for(config: TrainingConfig, world: int | None) -> Context:
    """Pipeline stages and the memory budget the config sets, for the verdict."""
    env = derive(config, world)
    pp, world = env.get("pp") or 1, env.get("world")
    limit = env.get("max_device_memory_mb")
    if not world or pp < 2 or world % pp:
        return Context(limit_mb=limit)
    per = world // pp
    return Context(stage_of=lambda rank: min(rank // per, pp - 1), stages=pp, limit_mb=limit)


def _gaps(
    report: Report, est: Estimate, stage_of: Callable[[int], int]
) -> list[tuple[RankReport, float, float]]:
    out = []
    for r in report.ranks:
        if r.memory is None or r.memory.peak_used_mb is None or r.estimate is None:
            continue
        if r.estimate.used_mb is None:
            continue
        expected = float(r.estimate.used_mb)
        observed = float(r.memory.peak_used_mb)
        if expected and abs(observed - expected) / expected > GAP:
            out.append((r, observed, expected))
    return out


def _gap_finding(
    gaps: Sequence[tuple[RankReport, float, float]], config: TrainingConfig
) -> Finding:
    first, observed, expected = gaps[0]
    ranks = tuple(g[0].rank for g in gaps)
    message = (
        f"Observed peak {observed:.0f} MB on rank {first.rank} vs {expected:.0f} MB estimated "
        f"from {config.path} (ranks {rank_ranges(ranks)} differ by more than {GAP:.0%})"
    )
    occ = tuple(
        Occurrence(
            r.rank,
            r.log_dir,
            r.file,
            r.memory.line if r.memory else None,
            None,
            True,
            "",
            1,
            f"observed {o:.0f} MB, estimated {e:.0f} MB",
        )
        for r, o, e in gaps
    )
    return Finding(
        RULE,
        "The observed memory peak differs from the estimate",
        "memory-over-budget",
        Severity.INFO,
        "symptom",
        message,
        ranks,
        occ,
        len(gaps),
        "Check that the config given is the one the run used; otherwise the estimate's "
        "assumptions (printed by `msrunwatch estimate`) do not fit this model.",
        RULE,
    )


def triage_with_config(
    logs: Sequence[str],
    rules: Sequence[Rule],
    configs: Sequence[TrainingConfig],
    consoles: Sequence[str] = (),
    world: int | None = None,
) -> Report:
    """Triage logs knowing the config: stages, budget, and estimate vs observed peaks."""
    from msrunwatch.drivers.triage import triage

    config = configs[0]
    ctx = context_for(config, world)
    report = triage(logs, rules, consoles, ctx=ctx)
    est = estimate(with_world(config, world_of(config, world)))
    stage_of = ctx.stage_of or (lambda rank: 0)
    report = replace(report, ranks=tuple(_with_estimate(r, est, stage_of) for r in report.ranks))
    gaps = _gaps(report, est, stage_of)
    if not gaps:
        return report
    return replace(report, findings=(*report.findings, _gap_finding(gaps, config)))


def _with_estimate(r: RankReport, est: Estimate, stage_of: Callable[[int], int]) -> RankReport:
    stage = stage_of(r.rank) if r.rank >= 0 else 0
    if stage >= len(est.stages):
        return r
    s = est.stages[stage]
    return replace(r, estimate=RankEstimate(stage, s.used_mib, s.actual_mib))
