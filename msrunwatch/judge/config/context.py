"""What a training config tells the verdict that the logs cannot: which pipeline stage
each rank is on (ranks are laid out stage by stage, world / pp per stage), how much memory
the job allows (max_device_memory), and the memory estimate for each stage, which the
`memory-estimate-gap` rule sets beside each rank's observed peak."""

from __future__ import annotations

from msrunwatch.judge.config.derive import derive, with_world, world_of
from msrunwatch.judge.config.memory import estimate
from msrunwatch.judge.context import Context
from msrunwatch.judge.model import RankEstimate
from msrunwatch.read.config.model import TrainingConfig


def context_for(config: TrainingConfig, world: int | None) -> Context:
    """Pipeline stages, memory budget and per-stage estimates the config sets."""
    env = derive(config, world)
    pp, world = env.get("pp") or 1, env.get("world")
    limit = env.get("max_device_memory_mb")
    est = estimate(with_world(config, world_of(config, world)))
    estimates = tuple(
        RankEstimate(index, s.used_mib, s.actual_mib) for index, s in enumerate(est.stages)
    )
    if not world or pp < 2 or world % pp:
        return Context(limit_mb=limit, estimates=estimates[:1], estimate_from=config.path)
    per = world // pp
    return Context(
        stage_of=lambda rank: min(rank // per, pp - 1),
        stages=pp,
        limit_mb=limit,
        estimates=estimates,
        estimate_from=config.path,
    )
