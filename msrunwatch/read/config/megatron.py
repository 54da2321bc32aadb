"""Megatron / MindSpeed-LLM training flags → normalised names (config-rules.md, section b).

The flags are read the way Megatron's argparse reads them (exact names, the last one
wins, `--flag value` or `--flag=value`). A value's Source is where the value is
written (the `TP=2` line for `--tensor-model-parallel-size ${TP}`); `via` is where the
flag is written when that is another line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from msrunwatch.read.config.common import (
    Doc,
    TracedValue,
    parse_float,
    parse_int,
    parse_int_list,
)
from msrunwatch.read.config.model import Source
from msrunwatch.read.config.shellexpand import Field
from msrunwatch.read.config.shellvars import is_placeholder

INT, STR, TRUE, INTLIST, FLOAT, WORDS = "int", "str", "true", "intlist", "float", "words"

FLAGS: dict[str, tuple[str, str]] = {
    "--tensor-model-parallel-size": ("tp", INT),
    "--pipeline-model-parallel-size": ("pp", INT),
    "--context-parallel-size": ("cp", INT),
    "--expert-model-parallel-size": ("ep", INT),
    "--sequence-parallel": ("sp", TRUE),
    "--context-parallel-algo": ("cp_algo", STR),
    "--ulysses-degree-in-cp": ("ulysses_degree", INT),
    "--micro-batch-size": ("mbs", INT),
    "--global-batch-size": ("gbs", INT),
    "--seq-length": ("seq_length", INT),
    "--max-position-embeddings": ("max_position_embeddings", INT),
    "--num-layers": ("num_layers", INT),
    "--hidden-size": ("hidden_size", INT),
    "--ffn-hidden-size": ("ffn_hidden_size", INT),
    "--num-attention-heads": ("num_heads", INT),
    "--group-query-attention": ("_gqa", TRUE),
    "--num-query-groups": ("_query_groups", INT),
    "--kv-channels": ("head_dim", INT),
    "--padded-vocab-size": ("vocab_size", INT),
    "--make-vocab-size-divisible-by": ("vocab_divisible_by", INT),
    "--tokenizer-name-or-path": ("tokenizer", STR),
    "--tokenizer-type": ("tokenizer_type", STR),
    "--tokenizer-model": ("tokenizer_model", STR),
    "--vocab-file": ("tokenizer_vocab_file", STR),
    "--num-experts": ("num_experts", INT),
    "--moe-router-topk": ("moe_topk", INT),
    "--moe-ffn-hidden-size": ("moe_ffn_hidden_size", INT),
    "--moe-intermediate-size": ("moe_ffn_hidden_size", INT),
    "--moe-shared-expert-intermediate-size": ("shared_expert_ffn", INT),
    "--n-shared-experts": ("shared_experts", INT),
    "--first-k-dense-replace": ("first_k_dense", INT),
    "--moe-layer-freq": ("moe_layer_freq", INT),
    "--moe-expert-capacity-factor": ("moe_capacity_factor", FLOAT),
    "--moe-pad-expert-input-to-capacity": ("moe_pad_to_capacity", TRUE),
    "--moe-token-dispatcher-type": ("moe_dispatcher", STR),
    "--moe-tp-extend-ep": ("moe_tp_extend_ep", TRUE),
    "--moe-grouped-gemm": ("moe_grouped_gemm", TRUE),
    "--multi-latent-attention": ("mla", TRUE),
    "--q-lora-rank": ("q_lora_rank", INT),
    "--kv-lora-rank": ("kv_lora_rank", INT),
    "--qk-head-dim": ("qk_nope_head_dim", INT),
    "--qk-pos-emb-head-dim": ("qk_rope_head_dim", INT),
    "--v-head-dim": ("v_head_dim", INT),
    "--swiglu": ("swiglu", TRUE),
    "--add-qkv-bias": ("qkv_bias", TRUE),
    "--untie-embeddings-and-output-weights": ("untie_embeddings", TRUE),
    "--use-flash-attn": ("use_flash_attention", TRUE),
    "--recompute-granularity": ("recompute_granularity", STR),
    "--recompute-method": ("recompute_method", STR),
    "--recompute-num-layers": ("recompute_num_layers", INT),
    "--recompute-activations": ("_recompute_activations", TRUE),
    "--use-distributed-optimizer": ("use_distributed_optimizer", TRUE),
    "--overlap-param-gather": ("overlap_param_gather", TRUE),
    "--overlap-grad-reduce": ("overlap_grad_reduce", TRUE),
    "--num-layer-list": ("num_layer_list", INTLIST),
    # AscendSpeed (MindSpeed-LLM before 1.0): layers per stage, used only with the switch
    "--use-manual-layer-allocation": ("_manual_layer_allocation", TRUE),
    "--manual-layers": ("_manual_layers", INTLIST),
    "--num-layers-per-virtual-pipeline-stage": ("_layers_per_virtual_stage", INT),
    "--num-virtual-stages-per-pipeline-rank": ("_virtual_stages", INT),
    "--bf16": ("_bf16", TRUE),
    "--fp16": ("_fp16", TRUE),
    "--expert-tensor-parallel-size": ("etp", INT),
    "--unaligned-linear": ("unaligned_linear", TRUE),
    "--pipeline-model-parallel-layout": ("pp_layout", STR),
    "--decoder-first-pipeline-num-layers": ("first_stage_layers", INT),
    "--decoder-last-pipeline-num-layers": ("last_stage_layers", INT),
    "--noop-layers": ("noop_layers", STR),
    "--account-for-embedding-in-pipeline-split": ("pp_split_embedding", TRUE),
    "--account-for-loss-in-pipeline-split": ("pp_split_loss", TRUE),
    "--hybrid-layer-pattern": ("hybrid_layer_pattern", STR),
    "--mm-model": ("mm_model", STR),
    "--use-checkpoint-args": ("use_checkpoint_args", TRUE),
    "--hidden-dropout": ("hidden_dropout", FLOAT),
    "--attention-dropout": ("attention_dropout", FLOAT),
    "--stage": ("stage", STR),
    # memory features the estimate models, or says it does not
    "--lora-r": ("lora_r", INT),
    "--lora-target-modules": ("lora_target_modules", WORDS),
    "--qlora": ("qlora", TRUE),
    "--is-instruction-dataset": ("instruction_dataset", TRUE),
    "--variable-seq-lengths": ("variable_seq_lengths", TRUE),
    "--no-pad-to-seq-lengths": ("no_pad_to_seq_lengths", TRUE),
    "--reuse-fp32-param": ("reuse_fp32_param", TRUE),
    "--o2-gradient": ("o2_gradient", TRUE),
    "--o2-optimizer": ("o2_optimizer", TRUE),
    "--use-fused-swiglu": ("fused_swiglu", TRUE),
    "--recompute-activation-function": ("recompute_activation_function", TRUE),
    "--swap-attention": ("swap_attention", TRUE),
    "--tp-2d": ("tp_2d", TRUE),
    "--tp-x": ("tp_x", INT),
    "--tp-y": ("tp_y", INT),
    "--swap-optimizer": ("swap_optimizer", TRUE),
    "--swap-optimizer-times": ("swap_optimizer_times", INT),
    "--moe-zero-memory": ("moe_zero_memory", STR),
    "--use-torch-fsdp2": ("fsdp", TRUE),
    "--use-custom-fsdp": ("fsdp", TRUE),
    "--use-megatron-fsdp": ("fsdp", TRUE),
    "--optimizer-cpu-offload": ("optimizer_offload", TRUE),
    "--mtp-num-layers": ("mtp_layers", INT),
    "--mtp-mem-efficient-logits": ("mtp_mem_efficient_logits", TRUE),
    "--schedules-method": ("schedules_method", STR),
    "--dualpipev-dw-detach": ("dualpipev_dw_detach", TRUE),
    "--fp8-format": ("fp8", STR),
    # DeepSpeed behind Megatron-DeepSpeed
    "--deepspeed": ("deepspeed", TRUE),
    "--deepspeed_config": ("deepspeed_config", STR),
    "--deepspeed-config": ("deepspeed_config", STR),
    "--zero-stage": ("zero_stage", INT),
    "--no-pipeline-parallel": ("no_pipeline_parallel", TRUE),
}
"""Flag → (normalised name, kind). Names starting with `_` are combined in `_finish`."""

DEFAULTS: dict[str, object] = {
    "tp": 1,
    "pp": 1,
    "cp": 1,
    "ep": 1,
    "vpp": 1,
    "sp": False,
    "swiglu": False,
    "qkv_bias": False,
    "untie_embeddings": False,
    "use_flash_attention": False,
    "use_distributed_optimizer": False,
    "overlap_param_gather": False,
    "overlap_grad_reduce": False,
    "recompute_granularity": None,
    "recompute_method": None,
    "recompute_num_layers": None,
    "params_dtype": "fp32",
    "unaligned_linear": False,
    "pp_split_embedding": False,
    "pp_split_loss": False,
    "use_checkpoint_args": False,
    "hidden_dropout": 0.1,
    "attention_dropout": 0.1,
}
"""Megatron's argparse defaults for what a script leaves out (Source None)."""


@dataclass
class MegatronArgs:
    """What the training flags say."""

    values: dict[str, TracedValue] = field(default_factory=dict)
    stray: list[Field] = field(default_factory=list)
    config_file: Field | None = None
    """A first positional `*.yaml` (FSDP2 and MindSpeed-MM trainers read their config so)."""
    """Words no flag takes (`\\` or `#comment` inside a quoted args string)."""
    opaque: list[Field] = field(default_factory=list)
    """Words that could not be resolved where a flag was expected: they may hold flags."""
    flags: int = 0
    """How many known flags were seen."""
    unknown: list[Field] = field(default_factory=list)
    """The `--flag` words this reader does not interpret (it may still be a real flag)."""


def is_option(f: Field) -> bool:
    """Would argparse take this word for an option rather than a value?"""
    text = f.text
    if not text.startswith("-") or text == "-":
        return False
    try:
        float(text)
    except ValueError:
        return True
    return False


def read_args(fields: Sequence[Field], doc: Doc, defaults: bool = True) -> MegatronArgs:
    """The normalised values of a training script's arguments."""
    out = MegatronArgs()
    raw: dict[str, TracedValue] = {}
    i, after_unknown, wants_value = 0, False, False
    while i < len(fields):
        f = fields[i]
        text = f.text
        if not text and f.unresolved is not None:
            # a placeholder, or the word right after an unknown --flag (`--data-path $1`), is
            # a value; any other unknown word may hold flags
            if not is_placeholder(f.unresolved) and not wants_value:
                out.opaque.append(f)
            i += 1
            wants_value = False
            continue
        wants_value = False
        if not text.startswith("--"):
            if i == 0 and text.lower().endswith((".yaml", ".yml")):
                out.config_file = f
            elif not after_unknown or text.strip() in ("", "\\"):
                # a blank word (a `\ ` that ended the line) or a lone backslash (`\ ` inside
                # quotes) is no flag's value, even after an unknown flag's words
                out.stray.append(f)
            i += 1
            continue
        flag, eq, _ = text.partition("=")
        spec = FLAGS.get(flag)
        after_unknown = spec is None
        i += 1
        if spec is None:
            out.unknown.append(f)
            wants_value = not eq
            continue
        out.flags += 1
        name, kind = spec
        flag_src = doc.source(*f.at())
        if kind == TRUE:
            why = f"{flag} takes no value, got {text!r}" if eq else None
            raw[name] = TracedValue(None if eq else True, flag_src, why)
            continue
        if kind == WORDS:
            i = _words(fields, i, name, flag_src, raw)
        elif eq:
            raw[name] = _convert(f.tail(len(flag) + 1), kind, flag, flag_src, doc)
        elif i < len(fields) and not is_option(fields[i]):
            raw[name] = _convert(fields[i], kind, flag, flag_src, doc)
            i += 1
        else:
            nxt = f" (the next word is {fields[i].text})" if i < len(fields) else ""
            raw[name] = TracedValue(None, flag_src, f"{flag} has no value{nxt}")
    out.values = _finish(raw, doc, out.opaque, defaults)
    return out


def _words(
    fields: Sequence[Field], i: int, name: str, src: Source, raw: dict[str, TracedValue]
) -> int:
    """`--flag a b c` (argparse nargs='+'): the words up to the next option."""
    words: list[str] = []
    while i < len(fields) and not is_option(fields[i]) and fields[i].text:
        words.append(fields[i].text)
        i += 1
    raw[name] = TracedValue(words, src)
    return i


def _convert(value: Field, kind: str, flag: str, flag_src: Source, doc: Doc) -> TracedValue:
    line, col = value.at()
    source = doc.source(line, col)
    via = flag_src if flag_src.line != line else None
    if value.unresolved is not None:
        return TracedValue(None, source, value.unresolved, via)
    text = value.text
    if kind == STR:
        return TracedValue(text, source, None, via)
    number: object = None
    if kind == FLOAT:
        number = parse_float(text)
    else:
        number = parse_int(text) if kind == INT else parse_int_list(text)
    if number is None:
        what = {INT: "an integer", FLOAT: "a number"}.get(
            kind, "a comma-separated list of integers"
        )
        return TracedValue(None, source, f"{flag} {text!r} is not {what}", via)
    return TracedValue(number, source, None, via)


def _finish(
    raw: dict[str, TracedValue], doc: Doc, opaque: list[Field], defaults: bool
) -> dict[str, TracedValue]:
    values = {k: v for k, v in raw.items() if not k.startswith("_")}
    _kv_heads(raw, values)
    if (act := raw.get("_recompute_activations")) and act.value:
        values["recompute_granularity"] = TracedValue("selective", act.source)
    _vpp(raw, values)
    _manual_layers(raw, values)
    _dtype(raw, values)
    if not defaults:
        return values
    hidden = ""
    if opaque:
        hidden = opaque[0].unresolved or ""
    for name, default in DEFAULTS.items():
        if name in values:
            continue
        if opaque:
            src = doc.source(*opaque[0].at())
            why = f"not written out, and an argument word is unknown ({hidden})"
            values[name] = TracedValue(None, src, why)
        else:
            values[name] = TracedValue(default)
    return values


def _manual_layers(raw: dict[str, TracedValue], values: dict[str, TracedValue]) -> None:
    """AscendSpeed's uneven split: `--manual-layers 5,6,...` gives each stage its layers, as
    --num-layer-list does, but only with `--use-manual-layer-allocation` (Ascend/MindSpeed-LLM
    a14f76b1 ascendspeed/arguments.py:1188-1203, _get_manual_layer_allocation; one entry per
    stage, checked against the pipeline size)."""
    use, layers = raw.get("_manual_layer_allocation"), raw.get("_manual_layers")
    if use is not None and use.value and layers is not None and "num_layer_list" not in values:
        values["num_layer_list"] = layers


def _kv_heads(raw: dict[str, TracedValue], values: dict[str, TracedValue]) -> None:
    gqa, groups, heads = raw.get("_gqa"), raw.get("_query_groups"), raw.get("num_heads")
    if gqa is not None and gqa.value:
        # Megatron's --num-query-groups defaults to 1
        values["num_kv_heads"] = groups if groups is not None else TracedValue(1, gqa.source)
    elif heads is not None:
        # without --group-query-attention Megatron ignores --num-query-groups
        source = heads.source if heads.unresolved is not None else None
        values["num_kv_heads"] = TracedValue(heads.value, source, heads.unresolved)


def _vpp(raw: dict[str, TracedValue], values: dict[str, TracedValue]) -> None:
    if (stages := raw.get("_virtual_stages")) is not None:
        values["vpp"] = stages
        return
    per_chunk = raw.get("_layers_per_virtual_stage")
    if per_chunk is None:
        return
    if per_chunk.value is None:
        values["vpp"] = per_chunk
        return
    layers = values.get("num_layers")
    pp_value = values.get("pp")
    pp = pp_value.value if pp_value is not None else 1
    n, src = per_chunk.value, per_chunk.source
    why = None
    if layers is None or layers.value is None:
        why = "--num-layers-per-virtual-pipeline-stage needs --num-layers"
    elif pp is None:
        why = "--num-layers-per-virtual-pipeline-stage needs a known pipeline size"
    elif pp <= 0 or n <= 0 or layers.value % pp:
        why = f"{layers.value} layers do not split evenly into {pp} pipeline stages"
    elif (layers.value // pp) % n:
        why = f"{layers.value // pp} layers per stage are not a multiple of {n} per virtual stage"
    if why is not None:
        values["vpp"] = TracedValue(None, src, why, per_chunk.via)
    else:
        assert layers is not None and layers.value is not None and pp is not None
        values["vpp"] = TracedValue(layers.value // pp // n, src, None, per_chunk.via)


def _dtype(raw: dict[str, TracedValue], values: dict[str, TracedValue]) -> None:
    bf16, fp16 = raw.get("_bf16"), raw.get("_fp16")
    if bf16 is not None and fp16 is not None:
        values["params_dtype"] = TracedValue(None, fp16.source, "--bf16 and --fp16 are both set")
    elif bf16 is not None:
        values["params_dtype"] = TracedValue("bf16", bf16.source)
    elif fp16 is not None:
        values["params_dtype"] = TracedValue("fp16", fp16.source)
