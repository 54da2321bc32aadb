"""An inference job's memory (MindFormers run_mode predict): the weights and the KV cache, both
allocated with the model before the first request, and the prefill's transient.

The KV cache is two Parameters per layer in compute_dtype, sliced over the model-parallel ranks
by heads, each (num_blocks, block_size, n_kv_heads, head_dim) under paged attention, which
MindFormers' models use with use_past from v1.1.0 (v1.3.0 modules/infer_attention.py:259,
modules/paged_attention_mgr.py:42-44); num_blocks and block_size default to the model config
class's (data/paged_attention.yaml). Weights and cache are sizes, not a model of
behaviour: a stage whose weights and cache alone exceed the usable memory cannot start. The
prefill's transient (one layer's FFN for the batch's tokens, the last stage's fp32 logits) was
never checked against a run: estimate_unvalidated says so, so it gives warnings only.
"""

from __future__ import annotations

from dataclasses import dataclass

from msrunwatch.judge.config.memory.inputs import Inputs, count, dtype_of
from msrunwatch.judge.config.memory.notes import Notes
from msrunwatch.judge.config.memory.result import (
    FRAGMENTATION,
    MIB,
    StageEstimate,
    budget_verdict,
)
from msrunwatch.judge.config.memory.stage import stage_params
from msrunwatch.judge.config.memory.terms import embedding_params, head_params
from msrunwatch.read.config.model import TrainingConfig
from msrunwatch.read.config.tables import table

BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}
KV_SOURCE = "mindformers v1.3.0 modules/infer_attention.py:259, paged_attention_mgr.py:42-44"


@dataclass(frozen=True)
class Cache:
    """What the KV cache holds per layer on one rank."""

    tokens: int
    """Token slots in each layer's pool: num_blocks x block_size."""
    kv_heads: int | None
    """KV heads on the rank (sliced by model_parallel when they divide); None: unknown."""
    dtype: str

    def layer_mib(self, head_dim: int) -> float | None:
        """Key and value of one layer."""
        if self.kv_heads is None:
            return None
        return 2 * self.tokens * self.kv_heads * head_dim * BYTES[self.dtype] / MIB


def cache(cfg: TrainingConfig, inp: Inputs, notes: Notes) -> Cache | None:
    """The KV cache's shape on a rank, or None without use_past."""
    if cfg.get("use_past") is not True:
        notes.assume("use_past off: no KV cache (every token re-runs the whole sequence)")
        return None
    kv = None
    if inp.kv_heads is None:
        notes.lack("num_heads", "KV cache")
    else:
        kv = inp.kv_heads // inp.tp if inp.kv_heads % inp.tp == 0 else inp.kv_heads
    dtype = dtype_of(cfg.get("compute_dtype")) or "fp16"  # InferAttention's default
    blocks, size, why = _blocks(cfg, notes)
    heads = "?" if kv is None else str(kv)
    notes.assume(
        f"KV cache: paged, {blocks} blocks x {size} tokens per layer{why}, {heads} KV heads per "
        f"rank, {dtype} ({KV_SOURCE})"
    )
    return Cache(blocks * size, kv, dtype)


def _blocks(cfg: TrainingConfig, notes: Notes) -> tuple[int, int, str]:
    """(num_blocks, block_size, where a default came from): the YAML's, else its model config
    class's defaults (data/paged_attention.yaml)."""
    data = table("paged_attention")
    default = data["by_type"].get(str(cfg.get("model_type")), data["default"])
    blocks, size = count(cfg, "num_blocks", notes), count(cfg, "block_size", notes)
    why = "" if blocks and size else f" (defaults of the model's config class: {default['source']})"
    return blocks or int(default["num_blocks"]), size or int(default["block_size"]), why


def _batch(cfg: TrainingConfig, inp: Inputs, notes: Notes) -> int | None:
    """The inference batch: model_config.batch_size, else runner_config.batch_size."""
    return count(cfg, "predict_batch", notes) or inp.mbs


def inference_stage(
    i: int,
    layers: tuple[int, ...] | None,
    inp: Inputs,
    kv: Cache | None,
    budget: float,
    prefill: tuple[int, int] | None,
) -> StageEstimate:
    """Stage i of an inference job (`layers`: every stage's count): weights, KV cache, and the
    prefill's transient."""
    first, last = i == 0, i == inp.pp - 1
    embed = embedding_params(inp) if first else 0
    head = head_params(inp) if last else 0
    mine = layers[i] if layers else None
    moe_layers = 0
    if inp.moe is not None and layers:
        moe_layers = inp.moe.count(sum(layers[:i]), layers[i])  # MoE layers after first_dense
    params, experts = stage_params(mine, moe_layers, inp, embed, head)
    total = None if params is None else params + (experts or 0)
    weights = None if total is None else total * BYTES[inp.dtype] / MIB
    held_kv = _kv_mib(kv, mine, inp.head_dim)
    ffn, logits = _prefill(inp, prefill, last)
    parts = (weights, held_kv, ffn, logits)
    used = None if None in parts else sum(p or 0.0 for p in parts)
    actual = None if used is None else used * FRAGMENTATION
    return StageEstimate(
        stage=i,
        layers=mine,
        in_flight=None,
        recomputed_layers=0,
        selective_layers=0,
        params=total,
        embedding_params=embed or 0,
        head_params=head or 0,
        weights_mib=weights,
        grads_optimizer_mib=0.0,
        activations_mib=ffn,
        recompute_mib=0.0,
        backward_mib=0.0,
        cross_entropy_mib=logits,
        used_mib=used,
        actual_mib=actual,
        headroom_pct=None if actual is None else (budget - actual) / budget * 100,
        verdict=budget_verdict(actual, budget),
        kv_cache_mib=held_kv,
    )


def _kv_mib(kv: Cache | None, layers: int | None, head_dim: int | None) -> float | None:
    """The stage's KV cache: none without use_past, unknown without its layers or head size."""
    if kv is None:
        return 0.0
    per_layer = None if head_dim is None else kv.layer_mib(head_dim)
    return None if layers is None or per_layer is None else layers * per_layer


def _prefill(
    inp: Inputs, tokens: tuple[int, int] | None, last: bool
) -> tuple[float | None, float | None]:
    """(one layer's FFN transient, the last stage's fp32 logits) in MiB for the prefill: the
    logits of each sequence's last token only, which the head is given (v1.3.0
    models/llama/llama.py:573-583, pre_gather)."""
    if tokens is None or inp.ffn is None:
        return None, None
    batch, seq = tokens
    width = (3 if inp.swiglu else 2) * inp.ffn / inp.tp  # fc1 output (2f with SwiGLU) + act
    ffn = batch * seq * width * BYTES[inp.dtype] / MIB
    if not last:
        return ffn, 0.0
    return ffn, None if inp.vocab is None else batch * inp.vocab / inp.tp * 4 / MIB


def prefill_tokens(cfg: TrainingConfig, inp: Inputs, notes: Notes) -> tuple[int, int] | None:
    """The largest prefill: (batch, the full sequence length)."""
    batch = _batch(cfg, inp, notes)
    if batch is None or inp.seq is None:
        notes.lack("batch_size or seq_length", "prefill transient")
        return None
    notes.assume(
        f"prefill: {batch} x {inp.seq} tokens, one layer's FFN output and activation, and the "
        "last stage's fp32 logits of each sequence's last token (unvalidated)"
    )
    return batch, inp.seq
