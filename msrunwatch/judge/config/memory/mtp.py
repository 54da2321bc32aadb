"""Multi-token prediction (MTP) layers in the estimate: where they sit and what they hold.

The facts, from the frameworks' own model code at pinned commits (MTP_SOURCES):
- Megatron-Core / MindSpeed-LLM (`--mtp-num-layers N`) build all N MTP layers on the last
  pipeline stage (`get_mtp_num_layers_to_build`); with `--schedules-method dualpipev`
  MindSpeed-LLM builds them on the first stage instead, which holds the model's last chunk
  (memory/dualpipev.py).
- MindFormers' legacy research models (`mtp_depth`) count them in its layer placement:
  LayerSetting spreads num_layers + mtp_depth layers by `offset`, the MTP layers being the last
  indices. Its mcore models (`use_legacy: False`; `mtp_depth`, `num_nextn_predict_layers` or
  `mtp_num_layers`, all read as TransformerConfig.mtp_num_layers) do as Megatron does: the MTP
  block goes on the last stage (`self.mtp.pipeline_stage = pipeline_stage - 1`), each layer
  given the last decoder layer's stage and spec (MINDFORMERS_MCORE), so it is a MoE layer when
  that one is.
- Each MTP layer is one more transformer layer of the model's own kind (Megatron takes the spec
  of the decoder's last layer: a MoE layer for DeepSeek-V3; MindFormers builds the decoder
  layer with the next layer id), plus two RMSNorms on its inputs (enorm, hnorm), a linear
  projection of their concatenation from 2h to h (eh_proj, column-parallel over TP) and an
  RMSNorm before the shared output head. DeepSeek-V3's weights: 11.5B unique MTP parameters,
  the embedding and output head shared (bench/estimate_validation.py checks this).
- The stage holding them builds an embedding table of its own (Megatron: `pre_process or
  mtp_process`; MindFormers gathers the stage-0 table on the last stage, a copy as a tied
  head's is), unless it is the first stage.
- Each MTP layer computes logits over the whole vocabulary and its own cross-entropy, kept for
  the backward beside the main one; MindSpeed-LLM runs the MTP transformer layer outside the
  decoder block's recompute, so its activations are kept whole.
"""

from __future__ import annotations

from msrunwatch.judge.config.memory.inputs import Inputs
from msrunwatch.read.config.model import TrainingConfig

MTP_SHORT = "MindSpeed-LLM@c77308a1, Megatron-LM@core_v0.12.1, MindFormers@fd4deebc/f52743ca"
"""Where the facts come from, short enough for a note; MTP_SOURCES names the files."""
MTP_SOURCES = (
    "Ascend/MindSpeed-LLM@c77308a1 mindspeed_llm/core/transformer/multi_token_prediction.py "
    "(get_mtp_num_layers_to_build, mtp_layer_forward, mtp_block_forward); "
    "NVIDIA/Megatron-LM@core_v0.12.1(a845aa7e) megatron/core/transformer/multi_token_prediction.py "
    "(enorm, hnorm, eh_proj 2h -> h, final_layernorm), megatron/core/models/gpt/gpt_model.py "
    "(embedding when pre_process or mtp_process); mindspore-lab/mindformers@fd4deebc "
    "research/deepseek3/deepseek2_model.py (LayerSetting(num_layers + mtp_depth), "
    "MTPHiddenFuser, MtpEmbeddingLayer)"
)
MINDFORMERS_MCORE = (
    "mindspore-lab/mindformers@f52743ca mindformers/parallel_core/transformer_config_utils.py:239 "
    "(mtp_depth, num_nextn_predict_layers, mtp_num_layers -> mtp_num_layers), "
    "parallel_core/training_graph/base_models/gpt/gpt_model.py:760-762 (mtp on the last stage; "
    "stage 0 under zero_bubble_v), gpt_layer_specs.py:237-252 (the decoder's last layer spec), "
    "transformer/multi_token_prediction.py:396-397 (layer id of the last decoder layer)"
)


def mtp_count(cfg: TrainingConfig) -> int:
    """MTP layers the config builds: --mtp-num-layers, MindFormers mtp_depth, or on the mcore
    path its other names (num_nextn_predict_layers, mtp_num_layers), which legacy models ignore."""
    mcore = cfg.get("framework") == "mindformers" and cfg.get("use_legacy") is False
    for name in ("mtp_layers", "mtp_depth", *(("mtp_num_layers",) if mcore else ())):
        value = cfg.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return 0


def fuser_params(inp: Inputs) -> int | None:
    """One MTP layer's parameters on a rank besides its transformer layer: enorm, hnorm and the
    norm before the head (h each, replicated), eh_proj (2h x h, split over TP)."""
    if inp.hidden is None:
        return None
    h = inp.hidden
    return 3 * h + -(-2 * h * h // inp.tp)


def fuser_bytes(inp: Inputs) -> float:
    """Bytes per token one MTP layer keeps besides its transformer layer: the inputs of enorm
    and hnorm (2h each), eh_proj's input (their 4h-byte concatenation) and the final norm's input
    (2h), in the layer-input layout (split by TP under sequence parallel)."""
    return 10 * (inp.hidden or 0) / (inp.tp if inp.sp else 1)


def moe_layers(inp: Inputs, count: int) -> int:
    """How many of the MTP layers are MoE layers: Megatron and MindFormers' mcore models build
    each as the decoder's last layer; MindFormers' legacy models give them the ids after it."""
    if inp.moe is None or not count or inp.layers is None:
        return 0
    if inp.mtp_in_offset:
        return inp.moe.count(inp.layers, count)
    return count if inp.moe.is_moe(inp.layers - 1) else 0
