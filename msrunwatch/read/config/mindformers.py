"""MindFormers YAML → TrainingConfig, each value located at its YAML value.

Both key sets are read: the legacy ones (`num_layers`, `num_heads`, `n_kv_heads`...)
and the mcore / Hugging Face ones (`num_hidden_layers`, `num_attention_heads`,
`num_key_value_heads`...), as mapped by MindFormers' COMMON_CONFIG_MAPPING. Keys left
out get MindFormers' defaults (`TransformerOpParallelConfig`: every degree 1,
`micro_batch_num` 1, `use_seq_parallel` False, `vocab_emb_dp` True...) with Source None.
`swap_config` is read by `msrunwatch.read.config.swap`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Optional

from msrunwatch.core.errors import ConfigError, YamlError
from msrunwatch.core.yamlload import Path_, Positions, load
from msrunwatch.read.config.common import Doc, dtype_name
from msrunwatch.read.config.model import TrainingConfig, Value
from msrunwatch.read.config.schema import SchemaCheck
from msrunwatch.read.config.swap import read_swap

Converted = tuple[Any, Optional[str]]
Convert = Callable[[Any, str], Converted]

PC = ("parallel_config",)
MC = ("model", "model_config")
PET = ("model", "arch", "pet")
"""MindFormers r0.6's place for LoRA (pet_type, pet_config), before model_config.pet_config."""
SECTIONS = (
    "parallel_config",
    "parallel",
    "model",
    "context",
    "runner_config",
    "recompute_config",
)
MEMORY = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?)(?:I?B)?\s*", re.IGNORECASE)
UNITS = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}
SWIGLU_ACTS = ("silu", "swiglu", "swish", "fusedswiglu")
"""Gated activations: `fusedswiglu` is the mcore MLP's fused SwiGLU (mindformers@f52743ca
parallel_core/training_graph/activation.py:220, transformer/mlp.py:146)."""
LLAMA_FAMILY = ("llama", "qwen")


def _int(value: Any, key: str) -> Converted:
    if isinstance(value, bool) or not isinstance(value, int):
        return None, f"{key} is {value!r}, not a whole number"
    return value, None


def _bool(value: Any, key: str) -> Converted:
    if not isinstance(value, bool):
        return None, f"{key} is {value!r}, not True or False"
    return value, None


def _str(value: Any, key: str) -> Converted:
    if not isinstance(value, str):
        return None, f"{key} is {value!r}, not a string"
    return value, None


def _num(value: Any, key: str) -> Converted:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None, f"{key} is {value!r}, not a number"
    return float(value), None


def _int_or_bool(value: Any, key: str) -> Converted:
    """MindFormers' first_k_dense_replace: a count, or True (its default)."""
    if isinstance(value, (bool, int)):
        return value, None
    return None, f"{key} is {value!r}, not a number or True/False"


def _any(value: Any, key: str) -> Converted:
    return value, None


def _dtype(value: Any, key: str) -> Converted:
    if not isinstance(value, str):
        return None, f"{key} is {value!r}, not a dtype name"
    return dtype_name(value), None


def _int_or_list(value: Any, key: str) -> Converted:
    """offset / recompute: an int (bool for recompute), a list, or a list of lists."""
    if isinstance(value, (int, list)):
        return value, None
    return None, f"{key} is {value!r}, not a number or a list"


def memory_mb(value: Any, key: str = "max_device_memory") -> Converted:
    """`58GB` → 59392 MiB; `59392MB` → 59392."""
    m = MEMORY.fullmatch(value) if isinstance(value, str) else None
    if m is None:
        return None, f'{key} is {value!r}, not a size like "58GB"'
    size = float(m.group(1)) * UNITS[(m.group(2) or "M").upper()]
    return (int(size) if size.is_integer() else size), None


FIELDS: list[tuple[str, list[Path_], Convert]] = [
    ("dp", [(*PC, "data_parallel")], _int),
    ("tp", [(*PC, "model_parallel")], _int),
    ("pp", [(*PC, "pipeline_stage")], _int),
    ("cp", [(*PC, "context_parallel")], _int),
    ("ep", [(*PC, "expert_parallel")], _int),
    ("sp", [(*PC, "use_seq_parallel")], _bool),
    ("micro_batch_num", [(*PC, "micro_batch_num")], _int),
    ("seq_split_num", [(*PC, "seq_split_num")], _int),
    ("vocab_emb_dp", [(*PC, "vocab_emb_dp")], _bool),
    ("cp_algo", [(*PC, "context_parallel_algo")], _str),
    ("ulysses_degree", [(*PC, "ulysses_degree_in_cp")], _int),
    ("parallel_mode", [("parallel", "parallel_mode")], _any),
    ("full_batch", [("parallel", "full_batch")], _bool),
    ("use_distributed_optimizer", [("parallel", "enable_parallel_optimizer")], _bool),
    (
        "optimizer_shard_size",
        [("parallel", "parallel_optimizer_config", "optimizer_weight_shard_size")],
        _int,
    ),
    ("pipeline_stages", [("parallel", "pipeline_stages")], _int),
    ("world", [("parallel", "device_num"), ("device_num",)], _int),
    ("config_world", [("parallel", "device_num"), ("device_num",)], _int),
    ("max_device_memory_mb", [("context", "max_device_memory")], memory_mb),
    ("mode", [("context", "mode")], _any),
    ("num_layers", [(*MC, "num_layers"), (*MC, "num_hidden_layers")], _int),
    ("hidden_size", [(*MC, "hidden_size")], _int),
    ("ffn_hidden_size", [(*MC, "intermediate_size"), (*MC, "ffn_hidden_size")], _int),
    ("num_heads", [(*MC, "num_heads"), (*MC, "num_attention_heads")], _int),
    (
        "num_kv_heads",
        [
            (*MC, "n_kv_heads"),
            (*MC, "num_key_value_heads"),
            (*MC, "num_query_groups"),
            (*MC, "multi_query_group_num"),
        ],
        _int,
    ),
    ("head_dim", [(*MC, "head_dim"), (*MC, "kv_channels")], _int),
    ("vocab_size", [(*MC, "vocab_size"), (*MC, "padded_vocab_size")], _int),
    ("ffn_dim_multiplier", [(*MC, "ffn_dim_multiplier")], _num),
    ("multiple_of", [(*MC, "multiple_of")], _int),
    (
        "tokenizer",
        [
            ("processor", "tokenizer", "vocab_file"),
            ("processor", "tokenizer", "tokenizer_file"),
            ("processor", "tokenizer", "pretrained_model_dir"),
            ("processor", "tokenizer", "type"),
        ],
        _str,
    ),
    ("model_type", [(*MC, "type"), (*MC, "model_type")], _str),
    ("seq_length", [(*MC, "seq_length")], _int),
    (
        "max_position_embeddings",
        [(*MC, "max_position_embedding"), (*MC, "max_position_embeddings")],
        _int,
    ),
    ("offset", [(*MC, "offset")], _int_or_list),
    ("vpp", [(*MC, "pp_interleave_num"), (*MC, "virtual_pipeline_model_parallel_size")], _int),
    ("use_flash_attention", [(*MC, "use_flash_attention")], _bool),
    ("attn_mask_compression", [(*MC, "use_attn_mask_compression")], _bool),
    ("qkv_bias", [(*MC, "qkv_has_bias"), (*MC, "add_qkv_bias")], _bool),
    ("use_legacy", [("use_legacy",), ("model", "model_config", "use_legacy")], _bool),
    ("params_dtype", [(*MC, "param_init_type"), (*MC, "params_dtype")], _dtype),
    ("compute_dtype", [(*MC, "compute_dtype")], _dtype),
    (
        "num_experts",
        [
            (*MC, "expert_num"),
            (*MC, "n_routed_experts"),
            (*MC, "num_experts"),
            (*MC, "num_moe_experts"),
            ("moe_config", "expert_num"),
            (*MC, "moe_config", "expert_num"),
        ],
        _int,
    ),
    ("mbs", [("runner_config", "batch_size")], _int),
    ("use_past", [(*MC, "use_past")], _bool),
    ("llm_backend", [(*MC, "llm_backend")], _str),
    ("block_size", [(*MC, "block_size")], _int),
    ("num_blocks", [(*MC, "num_blocks")], _int),
    ("predict_batch", [(*MC, "batch_size")], _int),
    (
        "quantization",
        [(*MC, "quantization_config"), (*MC, "quant_config"), ("quant_config",)],
        _any,
    ),
    ("gradient_accumulation_steps", [("runner_config", "gradient_accumulation_steps")], _int),
    ("recompute", [("recompute_config", "recompute")], _int_or_list),
    ("select_recompute", [("recompute_config", "select_recompute")], _any),
    (
        "recompute_slice_activation",
        [("recompute_config", "recompute_slice_activation")],
        _bool,
    ),
    ("micro_batch_interleave_num", [("micro_batch_interleave_num",)], _int),
    ("run_mode", [("run_mode",)], _str),
    (
        "hidden_dropout",
        [(*MC, "hidden_dropout_prob"), (*MC, "hidden_dropout"), (*MC, "hidden_dropout_rate")],
        _num,
    ),
    (
        "attention_dropout",
        [
            (*MC, "attention_dropout_prob"),
            (*MC, "attention_dropout"),
            (*MC, "attention_dropout_rate"),
        ],
        _num,
    ),
    (
        "gradient_accumulation_shard",
        [("parallel", "parallel_optimizer_config", "gradient_accumulation_shard")],
        _bool,
    ),
    ("moe_config_experts", [("moe_config", "expert_num")], _int),
    (
        "moe_topk",
        [
            ("moe_config", "num_experts_chosen"),
            (*MC, "num_experts_per_tok"),
            (*MC, "moe_router_topk"),
        ],
        _int,
    ),
    (
        "moe_ffn_hidden_size",
        [
            ("moe_config", "moe_intermediate_size"),
            (*MC, "moe_intermediate_size"),
            (*MC, "moe_ffn_hidden_size"),
        ],
        _int,
    ),
    ("shared_experts", [("moe_config", "shared_expert_num"), (*MC, "n_shared_experts")], _int),
    ("shared_expert_ffn", [(*MC, "moe_shared_expert_intermediate_size")], _int),
    (
        "first_k_dense",
        [("moe_config", "first_k_dense_replace"), (*MC, "first_k_dense_replace")],
        _int_or_bool,
    ),
    ("moe_capacity_factor", [("moe_config", "capacity_factor")], _num),
    ("moe_drop", [("moe_config", "enable_sdrop")], _bool),
    ("moe_gmm", [("moe_config", "use_gmm")], _bool),
    ("moe_allgather", [("moe_config", "use_allgather_dispatcher")], _bool),
    ("q_lora_rank", [(*MC, "q_lora_rank")], _int),
    ("kv_lora_rank", [(*MC, "kv_lora_rank")], _int),
    ("qk_nope_head_dim", [(*MC, "qk_nope_head_dim"), (*MC, "qk_head_dim")], _int),
    ("qk_rope_head_dim", [(*MC, "qk_rope_head_dim"), (*MC, "qk_pos_emb_head_dim")], _int),
    ("v_head_dim", [(*MC, "v_head_dim")], _int),
    ("mla", [(*MC, "multi_latent_attention")], _bool),
    ("mtp_depth", [(*MC, "mtp_depth")], _int),
    ("mtp_num_layers", [(*MC, "num_nextn_predict_layers"), (*MC, "mtp_num_layers")], _int),
    # model.arch.pet: MindFormers r0.6's LoRA layout (configs/glm/run_glm_6b_lora.yaml, v0.6.0)
    (
        "pet_type",
        [(*MC, "pet_config", "pet_type"), ("model", "pet_config", "pet_type"), (*PET, "pet_type")],
        _str,
    ),
    (
        "lora_r",
        [
            (*MC, "pet_config", "lora_rank"),
            ("model", "pet_config", "lora_rank"),
            (*PET, "pet_config", "lora_rank"),
        ],
        _int,
    ),
    (
        "lora_target_modules",
        [
            (*MC, "pet_config", "target_modules"),
            ("model", "pet_config", "target_modules"),
            (*PET, "pet_config", "target_modules"),
        ],
        _any,
    ),
    ("arch", [("model", "arch", "type")], _str),
    (
        "dataset_seq_length",
        [
            ("train_dataset", "data_loader", "config", "seq_length"),
            ("train_dataset", "data_loader", "seq_length"),
            ("train_dataset", "seq_length"),
        ],
        _int,
    ),
]
"""Normalised name, YAML paths (the first one present wins), converter."""

DEFAULTS: dict[str, Any] = {
    "dp": 1,
    "tp": 1,
    "pp": 1,
    "cp": 1,
    "ep": 1,
    "vpp": 1,
    "sp": False,
    "micro_batch_num": 1,
    "vocab_emb_dp": True,
    "cp_algo": "colossalai_cp",
    "ulysses_degree": 1,
    "micro_batch_interleave_num": 1,
    "gradient_accumulation_steps": 1,
    "recompute": False,
    "select_recompute": False,
    "use_distributed_optimizer": False,
}
"""MindFormers' defaults for keys a config leaves out (Source None)."""


class _Yaml:
    def __init__(
        self,
        data: Mapping[str, Any],
        positions: Positions,
        doc: Doc,
        reported: frozenset[str] = frozenset(),
    ) -> None:
        self.data, self.positions, self.doc = data, positions, doc
        self.reported = reported
        """Sections holding a scalar where a mapping belongs: a finding says so, read nothing."""

    def find(self, path: Path_) -> tuple[bool, Any]:
        node: Any = self.data
        for i, key in enumerate(path):
            if not isinstance(node, Mapping):
                if node is None or path[0] in self.reported:
                    return False, None
                where = ".".join(str(k) for k in path[:i])
                line = self.positions.of(path[:i])[0]
                raise self.doc.error(line, f"{where} should be a mapping, not {node!r}")
            if key not in node:
                return False, None
            node = node[key]
        return True, node

    def value(self, path: Path_, value: Any, why: str | None = None) -> Value:
        """A Value located at its YAML value; a block-style list or mapping that starts
        on the next line is located at its key (`select_recompute:`) instead."""
        line, col = self.positions.of(path)
        key = self.positions.keys.get(path)
        if key is not None and key[0] != line:
            line, col = key
        return Value(value, self.doc.source(line, col), why)


def read_mindformers(text: str, path: str) -> TrainingConfig:
    """Read a MindFormers YAML config."""
    doc = Doc(path, text)
    try:
        data, positions = load(text)
    except YamlError as exc:
        raise ConfigError(f"{path}:{exc.line}:{exc.col}: invalid YAML: {exc}") from None
    except (ValueError, TypeError) as exc:  # an integer too long for int(), a list as a key
        raise ConfigError(f"{path}: invalid YAML value: {exc}") from None
    if not isinstance(data, Mapping):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        raise doc.not_a_config(
            1, f"not a MindFormers config: the document is {kind}, not a mapping"
        )
    if not any(section in data for section in SECTIONS):
        raise doc.not_a_config(
            None, "not a MindFormers config: it has none of " + ", ".join(SECTIONS)
        )
    schema = SchemaCheck(data, positions, doc)
    values: dict[str, Value] = {"framework": Value("mindformers"), **schema.run()}
    values["run_layout"] = Value(_run_layout(data))
    yml = _Yaml(data, positions, doc, frozenset(schema.scalars))
    for name, paths, convert in FIELDS:
        for key_path in paths:
            found, raw = yml.find(key_path)
            if found and raw is not None:
                value, why = convert(raw, str(key_path[-1]))
                values[name] = yml.value(key_path, value, why)
                break
    _untie(yml, values)
    _swiglu(yml, values)
    _fused_groups(yml, values)
    read_swap(yml, values)
    for name, default in DEFAULTS.items():
        values.setdefault(name, Value(default))
    if "num_kv_heads" not in values and "num_heads" in values:
        values["num_kv_heads"] = Value(values["num_heads"].value)
    return TrainingConfig(path, "mindformers", values)


RUN_SECTIONS = ("run_mode", "runner_config", "parallel_config", "context", "trainer")
"""Top-level sections of a run_mindformer.py config that other YAMLs with a `model` or
`parallel` section (MindSpeed-LLM FSDP2, MindSpeed-MM) do not have."""


def _run_layout(data: Mapping[Any, Any]) -> bool:
    """Whether the YAML is laid out as run_mindformer.py reads it: one of its run sections, or a
    model with a model_config."""
    model = data.get("model")
    return any(s in data for s in RUN_SECTIONS) or (
        isinstance(model, Mapping) and "model_config" in model
    )


def _fused_groups(yml: _Yaml, values: dict[str, Value]) -> None:
    """GLM's multi_query_group_num: the KV groups of a fused query_key_value, which training
    shards over its fused output (v1.3.0 models/glm2/glm2_transformer.py:170-182), not by
    head: model_parallel need not divide them there (kv_groups_fused)."""
    glm = yml.find((*MC, "multi_query_group_num"))[0]
    heads = ("n_kv_heads", "num_key_value_heads", "num_query_groups")
    if glm and not any(yml.find((*MC, key))[0] for key in heads):
        values["kv_groups_fused"] = Value(True)


def _untie(yml: _Yaml, values: dict[str, Value]) -> None:
    found, untie = yml.find((*MC, "untie_embeddings_and_output_weights"))
    if found and isinstance(untie, bool):
        values["untie_embeddings"] = yml.value((*MC, "untie_embeddings_and_output_weights"), untie)
        return
    found, tie = yml.find((*MC, "tie_word_embeddings"))
    if found and isinstance(tie, bool):
        values["untie_embeddings"] = yml.value((*MC, "tie_word_embeddings"), not tie)


def _swiglu(yml: _Yaml, values: dict[str, Value]) -> None:
    found, act = yml.find((*MC, "hidden_act"))
    if found and isinstance(act, str):
        values["swiglu"] = yml.value((*MC, "hidden_act"), act.lower() in SWIGLU_ACTS)
        return
    for key_path in ((*MC, "type"), (*MC, "model_type"), ("model", "arch", "type")):
        found, name = yml.find(key_path)
        if found and isinstance(name, str) and any(f in name.lower() for f in LLAMA_FAMILY):
            values["swiglu"] = yml.value(key_path, True)
            return
