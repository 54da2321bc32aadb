"""What the memory estimate returns: per-stage terms and the constants behind them."""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024
FRAGMENTATION = 1.04
"""Actual (with fragments) / used: measured 1.031-1.036, DryRun 1.022-1.035; rounded up."""
DEFAULT_DEVICE_MIB = 65536.0
"""A 64 GB Ascend card, nothing reserved."""
TIGHT = 0.95
"""MEM-01 warns above this share of the budget."""


def budget_verdict(actual: float | None, budget: float) -> str:
    """MEM-01 on a stage's total: over above the budget, tight above TIGHT of it."""
    if actual is None:
        return "unknown"
    if actual > budget:
        return "over"
    return "tight" if actual > TIGHT * budget else "ok"


@dataclass(frozen=True)
class StateBytes:
    """Bytes one parameter costs on a rank, by what holds them (after any sharding)."""

    weights: float
    gradients: float
    optimizer: float

    @property
    def total(self) -> float:
        """Bytes per parameter, all holders together."""
        return self.weights + self.gradients + self.optimizer


@dataclass(frozen=True)
class LayerTerms:
    """Activation terms in MiB for one micro-batch on one rank (shared by all stages)."""

    layer_mib: float
    """One transformer layer, nothing recomputed."""
    selective_mib: float
    """One layer with its attention core recomputed."""
    checkpoint_mib: float
    """One layer under full recompute: only its input is kept."""
    backward_mib: float
    """T_bwd: SwiGLU input/output gradients plus the SP all-gather buffer, once."""
    cross_entropy_mib: float | None
    """The last stage's fp32 logits path; None when the vocabulary is unknown."""
    act_fn_mib: float = 0.0
    """The activation function's output in one layer (what activation recompute frees)."""
    moe_layer_mib: float | None = None
    """One MoE layer, nothing recomputed (None for a dense model)."""
    moe_selective_mib: float | None = None
    """One MoE layer with its attention core recomputed."""
    attention_module_mib: float = 0.0
    """What one layer's self-attention module keeps (the linear_qkv input, Q, K, V, the core
    and the output projection's input): what MindSpeed --swap-attention moves to the host."""
    norms_mib: float = 0.0
    """The two RMSNorms' inputs and statistics of one layer (swapped too outside mcore)."""
    mlp_internal_mib: float = 0.0
    """What a dense MLP keeps beyond its input: freed when the MLP alone is recomputed."""


@dataclass(frozen=True)
class StageEstimate:
    """One pipeline stage on one rank: every term, so the sum can be checked by eye."""

    stage: int
    layers: int | None
    in_flight: float | None
    """Micro-batches' worth of this stage's activations held at the peak."""
    recomputed_layers: int
    selective_layers: int
    params: int | None
    """Parameters on one rank of this stage (embedding and head included)."""
    embedding_params: int
    head_params: int
    weights_mib: float | None
    grads_optimizer_mib: float | None
    activations_mib: float | None
    recompute_mib: float | None
    """Transient while the oldest micro-batch's recomputed chunk is re-run."""
    backward_mib: float | None
    cross_entropy_mib: float | None
    used_mib: float | None
    actual_mib: float | None
    headroom_pct: float | None
    verdict: str
    """ok, tight (> 95 % of the budget), over (> 100 %), over at full length (sequence lengths
    vary and only full-length batches would not fit), unknown or not estimated."""
    floor_actual_mib: float | None = None
    """With varying sequence lengths: the least the stage needs (model states x fragmentation)."""
    kv_cache_mib: float | None = None
    """An inference job's KV cache on the rank (memory/inference.py); None for training."""

    @property
    def model_states_mib(self) -> float | None:
        """Weights plus gradients and optimizer states, when both are known."""
        if self.weights_mib is None or self.grads_optimizer_mib is None:
            return None
        return self.weights_mib + self.grads_optimizer_mib

    @property
    def held_mib(self) -> float | None:
        """What the stage holds from start to end whatever the batch: the model states, and an
        inference job's KV cache, which is allocated with the model."""
        states = self.model_states_mib
        return None if states is None else states + (self.kv_cache_mib or 0.0)


@dataclass(frozen=True)
class Estimate:
    """The estimate for every stage, with the assumptions and gaps behind it."""

    path: str
    framework: str
    stages: tuple[StageEstimate, ...]
    layer_terms: LayerTerms | None
    state_bytes: StateBytes | None
    micro_batches: int | None
    recompute: str
    budget_mib: float
    budget_source: str
    inputs: tuple[tuple[str, object], ...]
    """The resolved inputs (after defaults), for the report's header."""
    assumptions: tuple[str, ...]
    missing: tuple[str, ...]
    problems: tuple[str, ...]
    fragmentation: float = FRAGMENTATION
    not_estimated: tuple[str, ...] = ()
    """`not estimated: <feature>` for what the config uses and the model does not cover."""
    gaps_only_add: bool = False
    """`not_estimated` is not empty and holds only features that add memory (MTP layers)."""
    dynamic_seq: bool = False
    """Batches are padded to their longest sample: the figures are an upper bound."""
    frozen_bytes: float | None = None
    """LoRA: bytes per frozen base parameter (its weight alone); None without LoRA."""
    job: str = "train"
    """What the figures model: train (the per-stage training peak) or predict (inference)."""
    vocab_range: tuple[int, int] | None = None
    """(low, high) when no vocabulary is known, not even the tokenizer's family: the first
    and last stages are estimated at the high end, with a verdict only where both agree."""

    @property
    def covers(self) -> bool:
        """Every stage is estimated and nothing the config uses is left out of the model."""
        return self.complete and not self.not_estimated

    @property
    def floor(self) -> bool:
        """Complete, and what it leaves out only adds memory: real use is at least this."""
        return self.complete and self.gaps_only_add

    @property
    def complete(self) -> bool:
        """Every stage has a total."""
        return bool(self.stages) and all(s.used_mib is not None for s in self.stages)

    @property
    def peak(self) -> StageEstimate | None:
        """The stage with the largest known total."""
        known = [s for s in self.stages if s.used_mib is not None]
        return max(known, key=lambda s: s.used_mib or 0.0) if known else None
