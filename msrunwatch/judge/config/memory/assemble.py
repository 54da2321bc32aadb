"""Build the whole estimate from the config: every stage, and the notes behind them."""

from __future__ import annotations

from msrunwatch.judge.config.memory.inputs import Inputs, budget, read_inputs
from msrunwatch.judge.config.memory.layout import recompute_plan, split_layers
from msrunwatch.judge.config.memory.notes import Notes
from msrunwatch.judge.config.memory.result import FRAGMENTATION, Estimate, StageEstimate
from msrunwatch.judge.config.memory.stage import Context, stage
from msrunwatch.judge.config.memory.terms import layer_terms, state_bytes
from msrunwatch.read.config.model import TrainingConfig


def estimate(config: TrainingConfig) -> Estimate:
    """The per-stage peak estimate; partial (with `missing` filled) when inputs lack."""
    notes = Notes()
    inp = read_inputs(config, notes)
    budget_mib, source = budget(config, budget_notes := Notes())
    if inp.moe:
        notes.lack("num_experts", "estimate", why="> 1: MoE is not modelled")
        notes.merge(budget_notes)
        return _empty(config, inp, notes, budget_mib, source)
    layers = split_layers(config, inp, notes)
    plan = recompute_plan(config, layers, notes) if layers else None
    ctx = Context(
        inp, layers, layer_terms(inp, notes), state_bytes(config, inp, notes), plan, budget_mib
    )
    _note_params_gaps(inp, notes)
    _note_pipeline_assumptions(inp, ctx, notes)
    stages = tuple(stage(i, ctx) for i in range(inp.pp))
    notes.merge(budget_notes)  # last: the budget's notes concern no stage
    return _assemble(config, notes, source, stages, ctx)


def _note_params_gaps(inp: Inputs, notes: Notes) -> None:
    """Say which stage totals an unknown size leaves open."""
    for name, value in (("hidden_size", inp.hidden), ("num_heads", inp.heads)):
        if value is None:
            notes.lack(name, "parameters", "model states")
    if inp.vocab is None:
        notes.lack("vocab_size", "first-stage embedding", "last-stage head", "cross-entropy")
    if not inp.qkv_bias:
        notes.assume("linear biases ignored (qkv_bias not given)")


def _note_pipeline_assumptions(inp: Inputs, ctx: Context, notes: Notes) -> None:
    """The schedule and last-stage assumptions, when they enter the numbers."""
    if inp.vpp > 1:
        notes.assume("interleaved 1F1B: p*(v+1)-1-2i chunks in flight (unvalidated)")
    else:
        notes.assume("1F1B: stage i holds min(p - i, m) micro-batches")
    if ctx.terms and ctx.terms.cross_entropy_mib is not None:
        notes.assume("last-stage CE term 6*s*b*V/t (Megatron fp32 logits) uncalibrated, +-10%")
    notes.assume(f"actual = {FRAGMENTATION} x used (measured fragmentation 1.031-1.036)")


def _resolved(inp: Inputs) -> tuple[tuple[str, object], ...]:
    """The inputs worth printing in the header, in a stable order."""
    names: tuple[str, ...] = ("tp", "pp", "cp", "dp", "vpp", "micro_batches", "mbs", "seq")
    names += ("layers", "hidden")
    names += ("heads", "kv_heads", "head_dim", "ffn", "vocab", "swiglu", "sp", "flash")
    names += ("untied", "distributed_optimizer", "dtype")
    return tuple((n, getattr(inp, n)) for n in names)


def _assemble(
    cfg: TrainingConfig,
    notes: Notes,
    source: str,
    stages: tuple[StageEstimate, ...],
    ctx: Context,
) -> Estimate:
    """Freeze the notes and terms into the returned value."""
    return Estimate(
        path=cfg.path,
        framework=ctx.inp.framework,
        stages=stages,
        layer_terms=ctx.terms,
        state_bytes=ctx.states,
        micro_batches=ctx.inp.micro_batches,
        recompute=ctx.plan.label if ctx.plan else "unknown",
        budget_mib=ctx.budget,
        budget_source=source,
        inputs=_resolved(ctx.inp),
        assumptions=tuple(notes.assumptions),
        missing=tuple(notes.missing),
        problems=tuple(notes.problems),
    )


def _empty(
    cfg: TrainingConfig, inp: Inputs, notes: Notes, budget_mib: float, source: str
) -> Estimate:
    """An estimate that estimates nothing, with the reason in `missing`."""
    ctx = Context(inp, None, None, None, None, budget_mib)
    return _assemble(cfg, notes, source, (), ctx)
