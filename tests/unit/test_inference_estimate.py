"""An inference job's memory (MindFormers run_mode predict): weights and the paged KV cache,
sized as MindFormers allocates them, and the prefill's transient."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from msrunwatch.judge.config.memory import MIB, estimate
from msrunwatch.read.config import read_config
from msrunwatch.read.config.model import TrainingConfig, Value
from msrunwatch.report.estimate import render_text, to_dict

PUBLIC = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "public"

INTERNLM_20B: dict[str, Any] = {  # predict_internlm_20b.yaml (mindformers 0da083c2 and parent)
    "framework": "mindformers",
    "run_mode": "predict",
    "use_past": True,
    "tp": 1,
    "dp": 8,
    "pp": 1,
    "mbs": 1,
    "seq_length": 2048,
    "num_layers": 60,
    "hidden_size": 5120,
    "num_heads": 40,
    "vocab_size": 103168,
    "params_dtype": "fp16",
    "compute_dtype": "fp16",
    "block_size": 16,
    "num_blocks": 1024,
    "max_device_memory_mb": 60416,
}


def predict(**changes: Any) -> TrainingConfig:
    values = {**INTERNLM_20B, **changes}
    return TrainingConfig(
        "predict.yaml", "mindformers", {k: Value(v) for k, v in values.items() if v is not None}
    )


def test_the_paged_kv_cache_is_two_tensors_per_layer_sliced_by_model_parallel() -> None:
    """(num_blocks, block_size, n_kv_heads / mp, head_dim) in compute_dtype, key and value."""
    whole = estimate(predict()).stages[0]
    assert whole.kv_cache_mib == pytest.approx(2 * 60 * 1024 * 16 * 40 * 128 * 2 / MIB)  # 19200
    sliced = estimate(predict(tp=8, dp=1)).stages[0]
    assert sliced.kv_cache_mib == pytest.approx(19200 / 8)
    bf16_half = estimate(predict(num_blocks=512, compute_dtype="bf16")).stages[0]
    assert bf16_half.kv_cache_mib == pytest.approx(19200 / 2)


def test_weights_are_the_whole_model_over_model_parallel_with_no_optimizer() -> None:
    s0 = estimate(predict()).stages[0]
    assert s0.params is not None and 19.5e9 < s0.params < 20.5e9  # InternLM-20B
    assert s0.weights_mib == pytest.approx(s0.params * 2 / MIB)
    assert s0.grads_optimizer_mib == 0.0 and s0.backward_mib == 0.0
    assert s0.held_mib == pytest.approx((s0.weights_mib or 0) + (s0.kv_cache_mib or 0))


def test_internlm_20b_at_dp_8_is_tight_and_its_fix_at_mp_8_fits() -> None:
    """0da083c2 ('fix InternLM-20B inference OOM') moved 8-way data parallel to model parallel:
    each card held the whole 20B model and a 19 GB cache in a 59 GB pool, within 1% of it
    (config-memory-near-budget: the prefill and workspace beside the cache are unvalidated)."""
    failed = estimate(predict())
    assert failed.job == "predict" and failed.covers
    assert failed.peak is not None and failed.peak.verdict == "tight"
    assert (failed.peak.actual_mib or 0) > 0.99 * failed.budget_mib
    fixed = estimate(predict(tp=8, dp=1, num_blocks=512))
    assert fixed.peak is not None and fixed.peak.verdict == "ok"


def test_a_missing_block_pool_takes_the_model_class_default() -> None:
    """LlamaConfig defaults to 512 blocks of 16, ChatGLM2Config to 128 (paged_attention.yaml)."""
    llama = estimate(predict(num_blocks=None, block_size=None, model_type="LlamaConfig"))
    assert llama.stages[0].kv_cache_mib == pytest.approx(19200 * 512 / 1024)
    assert any("defaults of the model's config class" in a for a in llama.assumptions)
    glm = estimate(predict(num_blocks=None, block_size=None, model_type="ChatGLM2Config"))
    assert glm.stages[0].kv_cache_mib == pytest.approx(19200 * 128 / 1024)


def test_without_use_past_there_is_no_cache_and_without_heads_it_is_unknown() -> None:
    s0 = estimate(predict(use_past=False)).stages[0]
    assert s0.kv_cache_mib == 0.0
    headless = estimate(predict(num_heads=None))
    assert headless.stages[0].kv_cache_mib is None and headless.stages[0].used_mib is None
    assert any("num_heads" in m and "KV cache" in m for m in headless.missing)


@pytest.mark.parametrize(
    ("change", "gap"),
    [
        ({"quantization": {"quant_method": "w8a16"}}, "quantized weights"),
        ({"llm_backend": "LLMBoost"}, "llm_backend"),
        ({"framework": "megatron"}, "predict job"),
        ({"run_mode": "eval"}, "eval job"),
    ],
)
def test_inference_the_estimate_does_not_size_gets_no_verdict(
    change: dict[str, Any], gap: str
) -> None:
    est = estimate(predict(**change))
    assert any(gap in g for g in est.not_estimated), est.not_estimated
    assert all(s.verdict == "not estimated" for s in est.stages) and not est.covers


def test_the_report_names_the_inference_terms() -> None:
    est = estimate(predict())
    text = render_text(est)
    assert "KV cache" in text and "grads+opt" not in text and "inference" in text
    data = json.loads(json.dumps(to_dict(est)))
    assert data["job"] == "predict"
    assert data["stages"][0]["kv_cache_mib"] == pytest.approx(19200.0)


def test_the_public_internlm_failure_read_from_its_file() -> None:
    """The upstream file says run_mode 'finetune' (its fix says predict): as written it is a
    training estimate; launched as predict it fills its pool."""
    path = PUBLIC / "mf_internlm_20b_predict_dp8.yaml"
    as_written = estimate(read_config(str(path)))
    assert as_written.job == "train"
    values = {**read_config(str(path)).values, "run_mode": Value("predict")}
    launched = estimate(TrainingConfig(str(path), "mindformers", values))
    assert launched.job == "predict" and launched.peak is not None
    assert launched.peak.verdict == "tight"


def test_a_pipeline_stage_counts_its_own_moe_layers() -> None:
    """With the first layers dense, the last stage holds the MoE layers: its weights are the
    experts' (every stage counted from layer 0 gave each stage the first stage's dense layers)."""
    moe = {"num_experts": 8, "moe_topk": 2, "first_k_dense": 30, "pp": 2, "ep": 1}
    est = estimate(predict(**moe))
    first, last = est.stages
    assert first.layers == last.layers == 30
    assert last.params is not None and first.params is not None
    assert last.params > 4 * first.params  # 30 MoE layers of 8 experts against 30 dense
