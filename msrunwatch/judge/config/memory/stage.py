"""Add up one pipeline stage: its parameters, activations, transients and verdict."""

from __future__ import annotations

from dataclasses import dataclass, replace

from msrunwatch.judge.config.memory.dualpipev import chunk_layers
from msrunwatch.judge.config.memory.features import Features
from msrunwatch.judge.config.memory.inputs import Inputs
from msrunwatch.judge.config.memory.layout import Plan, in_flight
from msrunwatch.judge.config.memory.mtp import fuser_bytes, fuser_params
from msrunwatch.judge.config.memory.mtp import moe_layers as moe_layers_of_mtp
from msrunwatch.judge.config.memory.result import (
    FRAGMENTATION,
    MIB,
    LayerTerms,
    StageEstimate,
    budget_verdict,
)
from msrunwatch.judge.config.memory.states import States
from msrunwatch.judge.config.memory.swap import SwapAttention, swapped_kept
from msrunwatch.judge.config.memory.terms import (
    adapter_params,
    embedding_params,
    head_params,
    layer_params,
    linear_params,
    moe_layer_params,
    moe_linear_params,
)


@dataclass(frozen=True)
class Context:
    """What every stage's estimate shares."""

    inp: Inputs
    layers: tuple[int, ...] | None
    terms: LayerTerms | None
    states: States | None
    plan: Plan | None
    budget: float
    features: Features
    op_freed: tuple[float, ...] = ()
    """MindFormers select_recompute by operator pattern: MiB per micro-batch each stage frees."""
    mask: tuple[float, float] = (0.0, 0.0)
    """MindFormers' uncompressed attention mask: (MiB per micro-batch kept, MiB held once)."""
    swap: SwapAttention | None = None
    """MindSpeed --swap-attention: what leaves the device (memory/swap.py)."""
    mtp: tuple[int, ...] = ()
    """Multi-token prediction layers on each stage (memory/mtp.py); empty without them."""


def stage(i: int, ctx: Context) -> StageEstimate:
    """Every term of stage i, and the totals when all of them are known."""
    inp = ctx.inp
    layers = ctx.layers[i] if ctx.layers else None
    first = i == 0
    last = i == (0 if inp.dualpipev else inp.pp - 1)  # dualpipev: the last chunk is on rank 0
    mtp = ctx.mtp[i] if ctx.mtp else 0
    mtp_moe = moe_layers_of_mtp(inp, mtp)
    embed = embedding_params(inp) if first or mtp else 0  # the MTP stage builds its own
    head = head_params(inp) if last else 0
    moe_layers = _moe_layers(i, ctx)
    every = None if layers is None else layers + mtp
    params, experts = stage_params(every, moe_layers + mtp_moe, inp, embed, head)
    params = _with_fusers(params, mtp, inp)
    weights, grads_opt = _states_mib(every, moe_layers + mtp_moe, params, ctx)
    weights, grads_opt = _with_experts(weights, grads_opt, experts, ctx)
    weights, grads_opt = _with_embedding(weights, grads_opt, embed or 0, ctx)
    if params is not None and every is not None:
        params += every * adapter_params(inp, ctx.features.lora) + (experts or 0)
    flight = in_flight(i, inp) if layers is not None else None
    act, recompute = _activations(i, layers, flight, ctx, _mixed(ctx.terms, layers, moe_layers))
    act = _with_mtp_activations(act, flight, mtp, mtp_moe, ctx)
    backward = ctx.terms.backward_mib if ctx.terms else None
    ce = (ctx.terms.cross_entropy_mib if ctx.terms else None) if last else 0.0
    if ce is not None and ctx.mtp:  # each MTP layer's logits and loss beside the main one
        ce *= 1 + sum(ctx.mtp)
    used, actual = _totals((weights, grads_opt, act, recompute, backward, ce))
    floor = _floor(weights, grads_opt, ctx)
    return StageEstimate(
        stage=i,
        layers=layers,
        in_flight=flight,
        recomputed_layers=ctx.plan.full[i] if ctx.plan else 0,
        selective_layers=ctx.plan.selective[i] if ctx.plan else 0,
        params=params,
        embedding_params=embed or 0,
        head_params=head or 0,
        weights_mib=weights,
        grads_optimizer_mib=grads_opt,
        activations_mib=act,
        recompute_mib=recompute,
        backward_mib=backward,
        cross_entropy_mib=ce,
        used_mib=used,
        actual_mib=actual,
        headroom_pct=None if actual is None else (ctx.budget - actual) / ctx.budget * 100,
        verdict=_verdict(actual, floor, ctx),
        floor_actual_mib=floor,
    )


def _with_fusers(params: int | None, mtp: int, inp: Inputs) -> int | None:
    """Add each MTP layer's norms and eh_proj (memory/mtp.py)."""
    if params is None or not mtp:
        return params
    fuser = fuser_params(inp)
    return None if fuser is None else params + mtp * fuser


def _with_mtp_activations(
    act: float | None, flight: float | None, mtp: int, mtp_moe: int, ctx: Context
) -> float | None:
    """Add what the stage's MTP layers keep per micro-batch in flight: each a whole layer of
    its kind (not recomputed) and its fuser's inputs (memory/mtp.py)."""
    t, inp = ctx.terms, ctx.inp
    if act is None or flight is None or not mtp or t is None:
        return act
    moe = t.moe_layer_mib if mtp_moe and t.moe_layer_mib is not None else t.layer_mib
    tokens = (inp.seq or 0) / inp.cp * (inp.mbs or 0)
    kept = (mtp - mtp_moe) * t.layer_mib + mtp_moe * moe + mtp * tokens * fuser_bytes(inp) / MIB
    # dualpipev: rank 0's second chunk, where the MTP layers follow the last layer, holds one
    # micro-batch at peak (the schedule's r + 1 for r = 0), as a last stage does
    return act + (1.0 if inp.dualpipev else flight) * kept


def _moe_layers(i: int, ctx: Context) -> int:
    """How many of stage i's layers are MoE layers (layers taken in order, stage by stage; under
    dualpipev the rank's two chunks, i and 2p-1-i)."""
    inp = ctx.inp
    if inp.moe is None or not ctx.layers:
        return 0
    if inp.dualpipev:
        c = chunk_layers(inp.layers or 0, inp.pp)
        both = inp.moe.count(i * c, c) + inp.moe.count((2 * inp.pp - 1 - i) * c, c)
        return min(both, ctx.layers[i])
    return inp.moe.count(sum(ctx.layers[:i]), ctx.layers[i])


def stage_params(
    layers: int | None, moe_layers: int, inp: Inputs, embed: int | None, head: int | None
) -> tuple[int | None, int | None]:
    """(a stage's parameters but the routed experts, the routed experts' parameters), or None
    where unknown: a first/last stage without its vocab is unknown."""
    per_layer = layer_params(inp)
    if layers is None or per_layer is None or embed is None or head is None:
        return None, None
    if not moe_layers:
        return layers * per_layer + embed + head, 0
    moe = moe_layer_params(inp)
    if moe is None:
        return None, None
    dense = layers - moe_layers
    return dense * per_layer + moe_layers * moe[0] + embed + head, moe_layers * moe[1]


def _with_experts(
    weights: float | None, grads_opt: float | None, experts: int | None, ctx: Context
) -> tuple[float | None, float | None]:
    """Add the routed experts' states: their optimizer is sharded over the expert data-parallel
    ranks, not over dp x cp."""
    if weights is None or grads_opt is None or not experts or ctx.states is None:
        return weights, grads_opt
    frozen = ctx.states.frozen_linear or ctx.states.frozen_weight
    if ctx.features.lora is not None and frozen is not None:
        return weights + experts * frozen / MIB, grads_opt  # LoRA: the experts are frozen
    held = ctx.states.experts or ctx.states.trainable
    return (
        weights + experts * held.weights / MIB,
        grads_opt + experts * (held.gradients + held.optimizer) / MIB,
    )


def _with_embedding(
    weights: float | None, grads_opt: float | None, embed: int, ctx: Context
) -> tuple[float | None, float | None]:
    """The input embedding's states where they differ from the layers' (MindFormers
    vocab_emb_dp under the parallel optimizer, memory/states.py): counted with the stage's
    parameters at the layers' bytes, so the difference is taken here."""
    states = ctx.states
    if weights is None or grads_opt is None or states is None or states.embedding is None:
        return weights, grads_opt
    own, layers = states.embedding, states.trainable
    return (
        weights + embed * (own.weights - layers.weights) / MIB,
        grads_opt
        + embed * (own.gradients + own.optimizer - layers.gradients - layers.optimizer) / MIB,
    )


def _mixed(terms: LayerTerms | None, layers: int | None, moe_layers: int) -> LayerTerms | None:
    """The stage's per-layer terms, averaged over its dense and MoE layers."""
    if terms is None or not moe_layers or not layers or terms.moe_layer_mib is None:
        return terms
    share = moe_layers / layers
    selective = terms.moe_selective_mib or terms.moe_layer_mib
    return replace(
        terms,
        layer_mib=terms.layer_mib + share * (terms.moe_layer_mib - terms.layer_mib),
        selective_mib=terms.selective_mib + share * (selective - terms.selective_mib),
    )


def _states_mib(
    layers: int | None, moe_layers: int, params: int | None, ctx: Context
) -> tuple[float | None, float | None]:
    """(weights, gradients + optimizer) in MiB; with LoRA the frozen base holds weights only."""
    states, lora = ctx.states, ctx.features.lora
    if params is None or states is None or layers is None:
        return None, None
    t = states.trainable
    if lora is None or states.frozen_weight is None:
        return params * t.weights / MIB, params * (t.gradients + t.optimizer) / MIB
    dense = (layers - moe_layers) * (linear_params(ctx.inp) or 0)
    linear = dense + moe_layers * (moe_linear_params(ctx.inp) or 0)
    other = params - linear
    frozen_linear = states.frozen_linear or states.frozen_weight
    adapters = layers * adapter_params(ctx.inp, lora)
    weights = linear * frozen_linear + other * states.frozen_weight + adapters * t.weights
    return weights / MIB, adapters * (t.gradients + t.optimizer) / MIB


def _floor(weights: float | None, grads_opt: float | None, ctx: Context) -> float | None:
    """With batches padded to their longest sample: the model states alone, the least a
    stage needs whatever the sequence lengths (x fragmentation)."""
    if not ctx.features.dynamic_seq or weights is None or grads_opt is None:
        return None
    return (weights + grads_opt) * FRAGMENTATION


def _activations(
    i: int, layers: int | None, in_flight: float | None, ctx: Context, t: LayerTerms | None
) -> tuple[float | None, float | None]:
    """(kept activations, recompute transient) in MiB for stage i, from its per-layer terms.

    The peak is at the start of the oldest micro-batch's backward: n_i micro-batches
    kept. Re-running a recomputed chunk adds chunk*A once the layers after it are freed.
    """
    plan = ctx.plan
    if t is None or plan is None or layers is None or in_flight is None:
        return None, None
    full, sel = plan.full[i], plan.selective[i]
    plain = layers - full - sel
    kept = plan.checkpoints[i] * t.checkpoint_mib + sel * t.selective_mib + plain * t.layer_mib
    if ctx.op_freed:
        kept = max(plan.checkpoints[i] * t.checkpoint_mib, kept - ctx.op_freed[i])
    rerun = min(plan.chunk, full) * t.layer_mib - sel * t.selective_mib - plain * t.layer_mib
    core = (t.layer_mib - t.selective_mib) if sel else 0.0
    per_batch, once = ctx.mask
    mlp = 0.0
    if ctx.swap is not None:
        off, window, mlp = swapped_kept(ctx.swap, i, t, plain, sel)
        kept, once = kept - off, once + window
    return in_flight * (kept + per_batch) + once, max(0.0, rerun if full else 0.0, core, mlp)


def _totals(parts: tuple[float | None, ...]) -> tuple[float | None, float | None]:
    """(used, actual with fragmentation) in MiB; None when any part is unknown."""
    if None in parts:
        return None, None
    used = sum(p for p in parts if p is not None)
    return used, used * FRAGMENTATION


def _verdict(actual: float | None, floor: float | None, ctx: Context) -> str:
    """MEM-01: over above the budget, tight above 95 % of it; no verdict for what is not
    modelled; with varying sequence lengths, over only if the model states alone are."""
    budget = ctx.budget
    if ctx.features.gaps:
        return "not estimated"
    if actual is not None and floor is not None and actual > budget:
        return "over" if floor > budget else "over at full length"
    return budget_verdict(actual, budget)
