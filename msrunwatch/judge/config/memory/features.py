"""What a config uses that changes its memory: modelled features, and those that are not.

The estimate gives a memory verdict only for what it models. Anything else a config turns on
that moves memory (activation swap, an offloaded optimizer, FSDP, FP8...) is listed as
`not estimated: <feature>`, and the stages get no verdict: a confident wrong number is worse
than none.
"""

from __future__ import annotations

from dataclasses import dataclass

from msrunwatch.read.config.entry import job_of_run_mode
from msrunwatch.read.config.model import TrainingConfig

UNMODELLED: tuple[tuple[str, str], ...] = (
    ("fsdp", "FSDP (parameters, gradients and states sharded over data parallel)"),
    ("optimizer_offload", "--optimizer-cpu-offload (optimizer states on the host)"),
    ("fp8", "FP8 training (--fp8-format)"),
    ("swap", "MindFormers swap_config (activations swapped to host)"),
    ("config_file", "a trainer configured by a YAML file the script passes (FSDP2, MindSpeed-MM)"),
    ("llm_backend", "MindFormers llm_backend (an inference backend that allocates its own memory)"),
)
"""Setting -> the feature it turns on, which the estimate does not model."""
_ADDING_GAPS: frozenset[str] = frozenset()
"""Gaps whose feature only adds memory (layers beside the model's, with their weights, states
and activations): with them left out the figures are a floor, so an estimate over the budget is
still over it. None is left: MTP layers under dualpipev, the last, are modelled now
(memory/dualpipev.py)."""

LORA_MODULES: dict[str, tuple[str, ...]] = {
    "qkv": ("linear_qkv", "query_key_value", "wq", "wk", "wv", "q_proj", "k_proj", "v_proj"),
    "proj": ("linear_proj", "dense", "wo", "o_proj"),
    "fc1": ("linear_fc1", "dense_h_to_4h", "w1", "w3", "gate_proj", "up_proj"),
    "fc2": ("linear_fc2", "dense_4h_to_h", "w2", "down_proj"),
}
"""LoRA target names (Megatron, MindSpeed-LLM, MindFormers, Hugging Face) -> layer part."""


@dataclass(frozen=True)
class LoRA:
    """Parameter-efficient fine-tuning: a frozen base and small trainable adapters."""

    rank: int
    parts: tuple[str, ...]
    """Which linear layers carry adapters: qkv, proj, fc1, fc2."""
    quantized: bool
    """QLoRA: the frozen base linear weights are 4-bit."""


@dataclass(frozen=True)
class Features:
    """Memory-relevant features of one config."""

    job: str
    lora: LoRA | None
    dynamic_seq: bool
    """Batches are padded to their longest sample, not to seq_length: a range, not a point."""
    gaps: tuple[str, ...]
    """`not estimated: <feature>` for each unmodelled feature in use."""
    gaps_only_add: bool = False
    """There are gaps, and each is a feature that only adds memory (ONLY_ADD)."""


def _on(value: object) -> bool:
    """A setting turns its feature on: true, a count above zero (`--mtp-num-layers 1`), or
    a non-empty name."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value > 0
    return isinstance(value, str) and bool(value.strip())


def inference_estimated(cfg: TrainingConfig) -> bool:
    """Inference is estimated for MindFormers (weights and KV cache, memory/inference.py);
    Megatron's generation scripts allocate their cache per request: not estimated."""
    return (cfg.get("framework") or cfg.kind) == "mindformers"


def _quantized(value: object) -> bool:
    """A quantization section that says something (a mapping with keys, a named scheme)."""
    if isinstance(value, dict):
        return bool(value)
    return _on(value) and str(value).strip().lower() not in ("none", "null", "false")


NO_RUN_MODE = "no run_mode, so the job is the launch's --run_mode (training or inference)"
"""A MindFormers YAML without run_mode runs only with run_mindformer.py --run_mode, which names
the job (config-run-mode-missing): the YAML alone does not say what to estimate."""


def job_of(cfg: TrainingConfig) -> str:
    """train, predict, eval or unknown."""
    job = cfg.get("job")
    if isinstance(job, str) and job:
        return job
    return job_of_run_mode(cfg.get("run_mode"))


def _lora(cfg: TrainingConfig) -> LoRA | None:
    rank = cfg.get("lora_r")
    pet = str(cfg.get("pet_type") or "").lower()
    if not isinstance(rank, int) and "lora" not in pet:
        return None
    targets = cfg.get("lora_target_modules")
    words = (
        (" ".join(targets) if isinstance(targets, list) else str(targets or ""))
        .replace("|", " ")
        .replace(".*", " ")
    )
    names = set(words.replace(",", " ").split())
    parts = tuple(p for p, aliases in LORA_MODULES.items() if names & set(aliases))
    return LoRA(
        rank=rank if isinstance(rank, int) and rank > 0 else 16,
        parts=parts or tuple(LORA_MODULES),
        quantized=cfg.get("qlora") is True,
    )


def _unmodelled(cfg: TrainingConfig) -> list[str]:
    gaps = [f"not estimated: {what}" for name, what in UNMODELLED if _on(cfg.get(name))]
    if cfg.get("swap_attention") is True and (
        cfg.get("use_flash_attention") is not True or _lora(cfg) is not None
    ):  # MindSpeed swap_attention.md: flash attention is a prerequisite; not with LoRA
        gaps.append(
            "not estimated: MindSpeed --swap-attention without flash attention or with LoRA "
            "(its documentation supports neither)"
        )
    if cfg.get("swap_optimizer") is True and (
        cfg.get("use_distributed_optimizer") is not True or cfg.get("reuse_fp32_param") is True
    ):  # MindSpeed swap-optimizer.md: the distributed optimizer only; not with reuse-fp32-param
        gaps.append(
            "not estimated: MindSpeed --swap-optimizer without the distributed optimizer or with "
            "--reuse-fp32-param (its documentation supports neither)"
        )
    if cfg.get("dualpipev_dw_detach") is True:
        gaps.append(
            "not estimated: --dualpipev-dw-detach (the cooldown keeps activations until the "
            "deferred weight gradients run; MindSpeed dualpipev.md)"
        )
    noop = cfg.get("noop_layers")
    if noop is not None and not _noop_indices(noop):
        gaps.append(f"not estimated: MindSpeed-LLM --noop-layers {noop!r} (not a list of layers)")
    split = cfg.get("seq_split_num")
    if isinstance(split, int) and not isinstance(split, bool) and split > 1:
        gaps.append(
            f"not estimated: MindFormers sequence pipelining (seq_split_num {split}: each "
            "micro-batch goes through the pipeline in chunks of the sequence)"
        )
    if cfg.get("recompute_activation_function") is True and cfg.get("recompute_granularity"):
        gaps.append("not estimated: activation-function recompute together with recompute")
    return gaps


def features(cfg: TrainingConfig) -> Features:
    """The memory-relevant features of cfg."""
    job = job_of(cfg)
    gaps = _unmodelled(cfg)
    if job == "predict" and inference_estimated(cfg):
        if _quantized(cfg.get("quantization")):
            gaps.insert(0, "not estimated: quantized weights (quantization_config)")
    elif job in ("predict", "eval"):
        gaps.insert(0, f"not estimated: {job} job (the estimate models training)")
    elif job == "unknown" and cfg.get("run_layout") is True and cfg.get("run_mode") is None:
        gaps.insert(0, f"not estimated: {NO_RUN_MODE}")
    dynamic = bool(cfg.get("variable_seq_lengths") or cfg.get("no_pad_to_seq_lengths"))
    only_add = bool(gaps) and _ADDING_GAPS.issuperset(gaps)
    return Features(job, _lora(cfg), dynamic, tuple(gaps), only_add)


def _noop_indices(raw: object) -> bool:
    """Whether --noop-layers names its layers as the estimate reads them (0-based indices)."""
    words = str(raw).replace(",", " ").split()
    return bool(words) and all(w.isdigit() for w in words)
