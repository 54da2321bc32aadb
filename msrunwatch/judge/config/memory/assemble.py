"""Build the whole estimate from the config: every stage, and the notes behind them."""

from __future__ import annotations

from dataclasses import replace

from msrunwatch.judge.config.memory.budget import Degrees, usable
from msrunwatch.judge.config.memory.dualpipev import DUALPIPEV_SHORT, chunk_layers
from msrunwatch.judge.config.memory.features import Features, features
from msrunwatch.judge.config.memory.inference import cache, inference_stage, prefill_tokens
from msrunwatch.judge.config.memory.inputs import Inputs, read_inputs
from msrunwatch.judge.config.memory.layout import per_stage, recompute_plan, split_with_mtp
from msrunwatch.judge.config.memory.moe import MoE
from msrunwatch.judge.config.memory.mtp import MTP_SHORT
from msrunwatch.judge.config.memory.notes import Notes
from msrunwatch.judge.config.memory.oppatterns import as_patterns, op_freed
from msrunwatch.judge.config.memory.result import (
    FRAGMENTATION,
    MIB,
    Estimate,
    LayerTerms,
    StageEstimate,
)
from msrunwatch.judge.config.memory.stage import Context, stage
from msrunwatch.judge.config.memory.states import states
from msrunwatch.judge.config.memory.swap import swap_attention, swap_range_note
from msrunwatch.judge.config.memory.terms import layer_terms
from msrunwatch.read.config.model import TrainingConfig


def estimate(config: TrainingConfig) -> Estimate:
    """The per-stage peak estimate; partial (with `missing` filled) when inputs lack, and
    with `not_estimated` filled (and no verdict) when the config uses what is not modelled."""
    notes = Notes()
    inp = read_inputs(config, notes)
    feats = features(config)
    budget_notes = Notes()
    card = usable(config, degrees_of(inp), budget_notes)
    budget_mib, source = card.mib, card.source
    impossible = _impossible_pipeline(inp)
    if impossible is not None:
        notes.problem(impossible)
        notes.merge(budget_notes)
        return _empty(config, inp, notes, budget_mib, source, feats)
    if feats.job == "predict" and not feats.gaps:  # features: a gap where it is not
        return _inference(config, inp, feats, (budget_mib, source), (notes, budget_notes))
    if feats.job in ("predict", "eval"):
        notes.merge(budget_notes)
        return _empty(config, inp, notes, budget_mib, source, feats)
    split = split_with_mtp(config, inp, notes)
    layers, mtp = split if split is not None else (None, ())
    plan = recompute_plan(config, layers, notes) if layers else None
    lora = feats.lora is not None
    qlora = feats.lora is not None and feats.lora.quantized
    held = states(config, inp, lora, qlora, notes)
    terms = layer_terms(inp, notes)
    ctx = Context(inp, layers, terms, held, plan, budget_mib, feats)
    ctx = replace(ctx, op_freed=_op_patterns(config, ctx, notes), mask=_mask(config, inp, notes))
    if any(mtp):
        ctx = replace(ctx, mtp=mtp)
        _mtp_note(mtp, terms, notes)
    if not feats.gaps:
        ctx = replace(ctx, swap=swap_attention(config, plan, layers, notes))
    if ctx.swap is not None and terms is not None:
        swap_range_note(terms, notes)
    if config.get("tp_2d") is True and inp.tp > 1 and terms is not None:
        _tp_2d_range_note(inp, terms, notes)
    if inp.moe is not None and inp.moe.dropless and terms is not None:
        _dropless_range_note(inp, inp.moe, terms, notes)
    _note_params_gaps(inp, notes)
    _note_pipeline_assumptions(inp, ctx, notes)
    if feats.dynamic_seq:
        notes.assume("batches padded to their longest sample: figures at the full seq_length")
    stages = tuple(stage(i, ctx) for i in range(inp.pp))
    if inp.vocab_low is not None:
        stages = _over_the_range(stages, ctx, Notes())
    notes.merge(budget_notes)  # last: the budget's notes concern no stage
    return _assemble(config, notes, source, stages, ctx)


def _inference(
    config: TrainingConfig,
    inp: Inputs,
    feats: Features,
    budget: tuple[float, str],
    notes: tuple[Notes, Notes],
) -> Estimate:
    """An inference job's stages: weights, KV cache and prefill (memory/inference.py)."""
    main, budget_notes = notes
    split = split_with_mtp(config, inp, main)
    layers = split[0] if split is not None else None
    kv = cache(config, inp, main)
    tokens = prefill_tokens(config, inp, main)
    _note_params_gaps(inp, main)
    stages = tuple(inference_stage(i, layers, inp, kv, budget[0], tokens) for i in range(inp.pp))
    main.assume(f"actual = {FRAGMENTATION} x used (fragmentation measured in training runs)")
    main.merge(budget_notes)
    ctx = Context(inp, layers, None, None, None, budget[0], feats)
    return replace(_assemble(config, main, budget[1], stages, ctx), job="predict")


def _mtp_note(mtp: tuple[int, ...], terms: LayerTerms | None, notes: Notes) -> None:
    """Where the MTP layers sit, what they are counted as, and the range their activations
    sit in: kept whole, as MindSpeed-LLM runs them outside the decoder's recompute (the
    figures), down to one checkpoint each were they recomputed as decoder layers are."""
    where = ", ".join(f"stage {i}: {n}" for i, n in enumerate(mtp) if n)
    kept = ""
    if terms is not None:
        kept = (
            f"; each keeps {terms.layer_mib:,.1f} MiB per micro-batch as a dense layer"
            + (f" ({terms.moe_layer_mib:,.1f} as a MoE layer)" if terms.moe_layer_mib else "")
            + f", {terms.checkpoint_mib:,.1f} were it recomputed"
        )
    notes.assume(
        f"multi-token prediction layers ({where}): a transformer layer of the model's kind "
        "kept whole (not recomputed), enorm, hnorm, eh_proj (2h x h / tp), a final norm, "
        f"an embedding copy unless on the first stage, cross-entropy x{1 + sum(mtp)} "
        f"where the head is{kept} ({MTP_SHORT})"
    )


def _tp_2d_range_note(inp: Inputs, terms: LayerTerms, notes: Notes) -> None:
    """The range a --tp-2d layer sits in: its activations split over all TP ranks, as
    MindSpeed's documentation states, up to the norm region whole on each (1D TP without SP)."""
    whole = layer_terms(replace(inp, sp=False), Notes())
    if whole is None:
        return
    notes.assume(
        f"--tp-2d range: {terms.layer_mib:,.1f} MiB per layer and micro-batch with the "
        f"activations split over tp (the figures), up to {whole.layer_mib:,.1f} MiB with the "
        "norm region whole on each rank, as 1D TP without sequence parallel keeps it"
    )


def _dropless_range_note(inp: Inputs, moe: MoE, terms: LayerTerms, notes: Notes) -> None:
    """The range a dropless MoE layer sits in: the figures route every rank's tokens evenly
    (top-k copies per token); nothing bounds how many copies one rank's experts receive but
    the EP group's tokens, each of which sends this rank at most min(top-k, its experts)."""
    most = moe.ep * min(moe.topk, moe.local_experts)
    if most <= moe.topk:
        return
    worst = layer_terms(replace(inp, moe=replace(moe, copies=float(most))), Notes())
    if worst is None or worst.moe_layer_mib is None or terms.moe_layer_mib is None:
        return
    notes.assume(
        f"dropless MoE range: {terms.moe_layer_mib:,.1f} MiB per MoE layer and micro-batch "
        f"with tokens routed evenly (the figures), up to {worst.moe_layer_mib:,.1f} MiB if the "
        f"EP group's {moe.ep} ranks sent this rank's {moe.local_experts} experts all they "
        f"could ({most} copies per token instead of {moe.topk}): the router's balance decides"
    )


def degrees_of(inp: Inputs) -> Degrees:
    """The degrees that decide the communicators, from the estimate's inputs."""
    ep = inp.moe.ep if inp.moe is not None else 1
    return Degrees(inp.dp * inp.tp * inp.pp * inp.cp, inp.tp, inp.dp, inp.cp, ep)


def _over_the_range(
    stages: tuple[StageEstimate, ...], ctx: Context, notes: Notes
) -> tuple[StageEstimate, ...]:
    """With only a range of vocabularies: the first and last stages (the only ones it moves)
    keep the figures at its high end, and a verdict only where its low end agrees."""
    low = replace(ctx.inp, vocab=ctx.inp.vocab_low, vocab_low=None)
    ctx_low = replace(ctx, inp=low, terms=layer_terms(low, notes))
    out = list(stages)
    for i in sorted({0, len(stages) - 1}):
        if stage(i, ctx_low).verdict != stages[i].verdict:
            out[i] = replace(stages[i], verdict="unknown")
    return tuple(out)


MAX_STAGES = 4096
"""No job runs more pipeline stages: MindSpore's device_num is at most 4096, and every stage
needs a card. A forged size (40 digits fit a YAML integer) would otherwise cost one stage
estimate each, until memory runs out (issue 21, defect 1)."""


def _impossible_pipeline(inp: Inputs) -> str | None:
    """Why no per-stage estimate can be made for this pipeline, or None when one can."""
    if inp.pp > MAX_STAGES:
        return (
            f"pipeline of {inp.pp} stages: more than {MAX_STAGES}, the most cards a job runs "
            "on, so no stage is estimated"
        )
    if inp.layers is not None and max(inp.pp, inp.vpp) > inp.layers:
        return (
            f"pipeline of {inp.pp} stages x {inp.vpp} chunks for {inp.layers} layers: a stage "
            "would hold no layer, so no stage is estimated"
        )
    return None


def _op_patterns(cfg: TrainingConfig, ctx: Context, notes: Notes) -> tuple[float, ...]:
    """MiB per micro-batch the select_recompute operator patterns free on each stage."""
    inp, t = ctx.inp, ctx.terms
    if inp.framework != "mindformers" or ctx.layers is None or t is None:
        return ()
    select = as_patterns(cfg.get("select_recompute"), inp.flash)
    if select is None:
        return ()
    tokens = (inp.seq or 0) / inp.cp * (inp.mbs or 0)
    if not tokens:
        return ()
    core = (t.layer_mib - t.selective_mib) * MIB / tokens
    swap = cfg.get("swap") is True
    layers = ctx.layers

    def counts(raw: object) -> tuple[int, ...]:
        return per_stage(raw, layers, "select_recompute", notes, swap)

    freed = op_freed(select, layers, counts, inp, core, notes)
    return tuple(f * tokens / MIB for f in freed)


MASK_SOURCE = (
    "mindformers r1.3.0 modules/transformer/transformer.py LowerTriangularMaskWithDynamic: "
    "[bs, 1, s, s] without use_attn_mask_compression; docs/feature_cards/"
    "Long_Sequence_Training.md: a uint8 mask of a 32k sequence takes 1 GB"
)


def _mask(cfg: TrainingConfig, inp: Inputs, notes: Notes) -> tuple[float, float]:
    """MindFormers builds an s x s attention mask unless use_attn_mask_compression is on: one
    uint8 [mbs, 1, s, s] per micro-batch (flash attention keeps it for backward), and the
    lower-triangle constant it is cut from (s x s in compute dtype, held once)."""
    legacy = cfg.get("use_legacy") is not False  # the mcore models (r1.6.0 on) build no such mask
    compressed = cfg.get("attn_mask_compression") is True
    if inp.framework != "mindformers" or not legacy or not inp.flash or compressed:
        return 0.0, 0.0
    if inp.cp > 1:  # how context parallel splits the mask was not established: not counted
        notes.assume("attention mask with context parallel: not counted (its split is unknown)")
        return 0.0, 0.0
    if not inp.seq or not inp.mbs:
        return 0.0, 0.0
    square = inp.seq * inp.seq / MIB
    per_batch, once = inp.mbs * square, 2 * square
    notes.assume(
        f"attention mask not compressed: {per_batch:,.0f} MiB per micro-batch kept, "
        f"{once:,.0f} MiB held once ({MASK_SOURCE})"
    )
    return per_batch, once


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
    if inp.dualpipev:
        _dualpipev_note(inp, ctx, notes)
    elif inp.vpp > 1:
        notes.assume("interleaved 1F1B: p*(v+1)-1-2i chunks in flight (unvalidated)")
    else:
        notes.assume("1F1B: stage i holds min(p - i, m) micro-batches")
    if ctx.terms and ctx.terms.cross_entropy_mib is not None:
        notes.assume(
            f"last-stage CE term {inp.ce_bytes}*s*b*V/t (Megatron fp32 logits) uncalibrated, +-10%"
        )
    notes.assume(f"actual = {FRAGMENTATION} x used (measured fragmentation 1.031-1.036)")


def _dualpipev_note(inp: Inputs, ctx: Context, notes: Notes) -> None:
    """The V layout, the in-flight count and the range it sits in (memory/dualpipev.py)."""
    c = chunk_layers(inp.layers or 0, inp.pp)
    extra = ""
    if ctx.terms is not None:
        extra = f" (+{c * ctx.terms.layer_mib:,.1f} MiB with one chunk more, as a dense layer)"
    notes.assume(
        f"dualpipev: 2 x {inp.pp} chunks of {c} layers in a V, rank r holding chunks r and "
        f"{2 * inp.pp - 1}-r, the embedding, the head, the loss"
        f"{', the MTP layers' if any(ctx.mtp) else ''} on rank 0; "
        f"{2 * inp.pp} chunks in flight on every rank = {inp.pp} micro-batches of its layers, up "
        f"to one chunk more while a forward runs before the backward it overlaps{extra}; "
        f"chunks' MoE and dense layers averaged (unvalidated; {DUALPIPEV_SHORT})"
    )
    if inp.micro_batches is not None and inp.micro_batches < 2 * inp.pp:
        notes.problem(
            f"{inp.micro_batches} micro-batches under dualpipev, which needs at least "
            f"2 x pp = {2 * inp.pp} (MindSpeed dualpipev.md)"
        )


def _resolved(inp: Inputs) -> tuple[tuple[str, object], ...]:
    """The inputs worth printing in the header, in a stable order."""
    names: tuple[str, ...] = ("tp", "pp", "cp", "dp", "vpp", "micro_batches", "mbs", "seq")
    names += ("layers", "hidden")
    names += ("heads", "kv_heads", "head_dim", "ffn", "vocab", "swiglu", "sp", "flash")
    names += ("untied", "distributed_optimizer", "dtype")
    experts = inp.moe.experts if inp.moe is not None else 1
    return (*((n, getattr(inp, n)) for n in names), ("experts", experts))


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
        state_bytes=ctx.states.trainable if ctx.states else None,
        micro_batches=ctx.inp.micro_batches,
        recompute=ctx.plan.label if ctx.plan else "unknown",
        budget_mib=ctx.budget,
        budget_source=source,
        inputs=_resolved(ctx.inp),
        assumptions=tuple(notes.assumptions),
        missing=tuple(notes.missing),
        problems=tuple(notes.problems),
        not_estimated=ctx.features.gaps,
        gaps_only_add=ctx.features.gaps_only_add,
        dynamic_seq=ctx.features.dynamic_seq,
        frozen_bytes=ctx.states.frozen_weight if ctx.states else None,
        vocab_range=_range_of(ctx.inp),
    )


def _range_of(inp: Inputs) -> tuple[int, int] | None:
    if inp.vocab_low is None or inp.vocab is None:
        return None
    return inp.vocab_low, inp.vocab


def _empty(
    cfg: TrainingConfig,
    inp: Inputs,
    notes: Notes,
    budget_mib: float,
    source: str,
    feats: Features,
) -> Estimate:
    """An estimate that estimates nothing, with the reasons in `missing` / `not_estimated`."""
    ctx = Context(inp, None, None, None, None, budget_mib, feats)
    return _assemble(cfg, notes, source, (), ctx)
