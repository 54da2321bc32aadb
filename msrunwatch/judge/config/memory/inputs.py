"""Read the config's numbers for the memory estimate, recording every default taken."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from msrunwatch.judge.config.memory.dualpipev import dualpipev
from msrunwatch.judge.config.memory.mla import MLA, read_mla
from msrunwatch.judge.config.memory.moe import MoE, read_moe
from msrunwatch.judge.config.memory.notes import Notes
from msrunwatch.read.config.model import TrainingConfig
from msrunwatch.read.config.tables import table
from msrunwatch.read.config.vocab import family_of, megatron_padded, vocab_range


@dataclass(frozen=True)
class Inputs:
    """The config's numbers after defaults; None where the estimate cannot go on."""

    framework: str
    tp: int
    pp: int
    cp: int
    vpp: int
    dp: int
    micro_batches: int | None
    mbs: int | None
    seq: int | None
    layers: int | None
    hidden: int | None
    heads: int | None
    kv_heads: int | None
    head_dim: int | None
    ffn: int | None
    vocab: int | None
    swiglu: bool
    untied: bool
    flash: bool
    sp: bool
    qkv_bias: bool
    vocab_emb_dp: bool
    distributed_optimizer: bool
    dtype: str
    moe: MoE | None
    """The MoE settings (None for a dense model)."""
    fused_swiglu: bool = True
    """SwiGLU as one fused op (keeps its 2f-wide input only) or as silu and mul (keeps more)."""
    hidden_dropout: float = 0.0
    attention_dropout: float = 0.0
    reuse_fp32: bool = False
    o2_gradient: bool = False
    """MindSpeed-LLM --o2-gradient: gradients in bf16, 2 B/param less."""
    o2_optimizer: bool = False
    """MindSpeed-LLM --o2-optimizer: Adam's m and v in bf16, 4 B/param less (sharded)."""
    """MindSpeed --reuse-fp32-param: the bf16 weights live inside the fp32 master copy."""
    optimizer_on_device: float = 1.0
    """The share of the optimizer states held on the device (MindSpeed --swap-optimizer)."""
    act_recompute: bool = False
    """MindSpeed --recompute-activation-function: the activation function's output is freed."""
    vocab_low: int | None = None
    """The low end of the vocabulary when only a range is known (`vocab` is the high end)."""
    mla: MLA | None = None
    """Multi-head latent attention (DeepSeek-V2/V3), None for plain attention."""
    dualpipev: bool = False
    """MindSpeed's DualPipeV schedule with PP > 1 (memory/dualpipev.py): two chunks per rank in a
    V, the head on the first rank."""
    ce_bytes: int = 6
    """Bytes per logit the cross-entropy holds: the bf16 logits and their fp32 copy, or the
    fp32 copy alone under MindSpeed-LLM --mtp-mem-efficient-logits (_ce_bytes)."""
    mtp_in_offset: bool = False
    """MindFormers' legacy models (use_legacy not False) place num_layers + mtp_depth layers by
    offset, the MTP layers taking the ids after the decoder's (memory/mtp.py); the mcore path
    builds them on the stage of the decoder's last layer, as Megatron does."""


class _Sizes(NamedTuple):
    """What the framework's own sizing rules need."""

    framework: str
    hidden: int | None
    swiglu: bool
    tp: int


VOCAB_HINTS = ("tokenizer", "tokenizer_model", "tokenizer_vocab_file", "model_type", "arch")
"""Settings that may name the model family (tokenizer path or type, model type)."""


# --- reading values --------------------------------------------------------------------


def number(cfg: TrainingConfig, name: str, notes: Notes) -> float | None:
    """A numeric setting; an unresolved or non-numeric one is reported, not guessed."""
    raw = cfg.get(name)
    if raw is None:
        held = cfg.values.get(name)
        if held is not None and held.unresolved:
            notes.problem(f"{name}: {held.unresolved}")
        return None
    if isinstance(raw, bool):
        notes.problem(f"{name}: {raw!r} is not a number")
        return None
    if isinstance(raw, (int, float)):
        return float(raw)
    try:
        return float(str(raw).strip())
    except ValueError:
        notes.problem(f"{name}: {raw!r} is not a number")
        return None


def count(cfg: TrainingConfig, name: str, notes: Notes) -> int | None:
    """A positive whole number (sizes, degrees, lengths); an int is kept exact (a float
    would round a 40-digit pipeline size)."""
    raw = cfg.get(name)
    if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 1:
        return raw
    value = number(cfg, name, notes)
    if value is None:
        return None
    if not value.is_integer() or value < 1:
        notes.problem(f"{name}: {cfg.get(name)!r} is not a positive whole number")
        return None
    return int(value)


def _flag(cfg: TrainingConfig, name: str) -> bool | None:
    """A boolean setting, accepting the spellings YAML and shell scripts use."""
    raw = cfg.get(name)
    if raw is None or isinstance(raw, bool):
        return raw
    if isinstance(raw, (int, float)):
        return bool(raw)
    text = str(raw).strip().lower()
    if text in ("true", "yes", "on", "1"):
        return True
    if text in ("false", "no", "off", "0", "none", ""):
        return False
    return None


def _flag_or(cfg: TrainingConfig, name: str, default: bool, why: str, notes: Notes) -> bool:
    """A flag, or its default with the default written down as an assumption."""
    value = _flag(cfg, name)
    if value is None:
        notes.assume(f"{name} not given: {'on' if default else 'off'} ({why})")
        return default
    return value


def _degree(cfg: TrainingConfig, name: str, notes: Notes) -> int:
    """A parallel degree; unset means 1 in every framework, said once."""
    value = count(cfg, name, notes)
    if value is None:
        notes.assume(f"{name} not given: 1")
        return 1
    return value


def _framework(cfg: TrainingConfig, notes: Notes) -> str:
    """mindformers or megatron: it picks the byte model for the model states."""
    name = str(cfg.get("framework") or cfg.kind or "").lower()
    if name in ("mindformers", "megatron"):
        return name
    notes.assume("framework unknown: Megatron/MindSpeed byte model")
    return "megatron"


def dtype_of(raw: object) -> str | None:
    """bf16, fp16 or fp32 from the many spellings; None for none of them."""
    text = str(raw or "").lower().replace("_", "")
    for name, spellings in (
        ("bf16", ("bf16", "bfloat16")),
        ("fp16", ("fp16", "float16", "half")),
        ("fp32", ("fp32", "float32", "float")),
    ):
        if text in spellings:
            return name
    return None


def _dtype(cfg: TrainingConfig, notes: Notes) -> str:
    """The parameters' dtype; bf16 when not given."""
    name = dtype_of(cfg.get("params_dtype"))
    if name is None:
        notes.assume("params_dtype not given: bf16")
        return "bf16"
    return name


# --- resolving the inputs --------------------------------------------------------------


def read_inputs(cfg: TrainingConfig, notes: Notes) -> Inputs:
    """Every input the model uses, with the defaults it takes recorded as assumptions."""
    framework = _framework(cfg, notes)
    tp, pp, cp, vpp = (_degree(cfg, n, notes) for n in ("tp", "pp", "cp", "vpp"))
    dp = _data_parallel(cfg, tp * pp * cp, notes)
    mbs = count(cfg, "mbs", notes)
    hidden = count(cfg, "hidden_size", notes)
    heads = count(cfg, "num_heads", notes)
    swiglu = _swiglu(cfg, framework, notes)
    experts = number(cfg, "num_experts", notes)
    sizes = _Sizes(framework, hidden, swiglu, tp)
    vocab, vocab_low = _vocab(cfg, sizes, notes)
    # the reads below run in the order written: the order the assumptions are reported in
    inp = Inputs(
        framework=framework,
        tp=tp,
        pp=pp,
        cp=cp,
        vpp=vpp,
        dp=dp,
        micro_batches=_micro_batches(cfg, mbs, dp, notes),
        mbs=mbs,
        seq=count(cfg, "seq_length", notes),
        layers=count(cfg, "num_layers", notes),
        hidden=hidden,
        heads=heads,
        kv_heads=_kv_heads(cfg, heads, notes),
        head_dim=_head_dim(cfg, hidden, heads, notes),
        ffn=_ffn(cfg, sizes, notes),
        vocab=vocab,
        vocab_low=vocab_low,
        swiglu=swiglu,
        untied=_flag_or(cfg, "untie_embeddings", True, "separate output layer, upper bound", notes),
        flash=_flag_or(cfg, "use_flash_attention", False, "framework default", notes),
        sp=_sequence_parallel(cfg, tp, notes),
        qkv_bias=bool(_flag(cfg, "qkv_bias")),
        vocab_emb_dp=_vocab_emb_dp(cfg, framework, notes),
        distributed_optimizer=_flag_or(cfg, "use_distributed_optimizer", False, "default", notes),
        dtype=_dtype(cfg, notes),
        moe=None,
        fused_swiglu=_fused_swiglu(cfg, framework, swiglu, notes),
        hidden_dropout=_dropout(cfg, "hidden_dropout", notes),
        attention_dropout=_dropout(cfg, "attention_dropout", notes),
        reuse_fp32=_flag(cfg, "reuse_fp32_param") is True,
        optimizer_on_device=_swap_optimizer(cfg, notes),
        o2_gradient=_flag(cfg, "o2_gradient") is True,
        o2_optimizer=_flag(cfg, "o2_optimizer") is True,
        act_recompute=_flag(cfg, "recompute_activation_function") is True,
        mla=read_mla(cfg, notes),
        mtp_in_offset=framework == "mindformers" and _flag(cfg, "use_legacy") is not False,
        ce_bytes=_ce_bytes(cfg, notes),
        dualpipev=dualpipev(cfg) and pp > 1,
    )
    if experts is not None and experts > 1:
        inp = replace(inp, moe=read_moe(cfg, framework, inp.ffn, tp, notes))
    return inp


MTP_EFFICIENT_LOGITS = (
    "Ascend/MindSpeed-LLM@c77308a1 mindspeed_llm/features_manager/transformer/mtp.py:11-15, 40-46 "
    "('Optimize ce_loss memory when use mtp block': patches VocabParallelCrossEntropy."
    "calculate_logits_max) and mindspeed_llm/core/tensor_parallel/cross_entropy.py:6-16 "
    "('release the bf16 space to save memory')"
)


def _ce_bytes(cfg: TrainingConfig, notes: Notes) -> int:
    """Bytes per logit element the cross-entropy holds (MTP_EFFICIENT_LOGITS).

    Megatron's vocab-parallel cross-entropy casts the bf16 logits to fp32 and keeps both (2 + 4
    bytes). MindSpeed-LLM's --mtp-mem-efficient-logits, registered with its MTP feature, frees
    the bf16 logits' storage once they are cast (untyped_storage().resize_(0)): 4 bytes, for
    every cross-entropy of the model (the patch replaces the one function all of them call).
    """
    if _flag(cfg, "mtp_mem_efficient_logits") is not True:
        return 6
    layers = cfg.get("mtp_layers")
    if not isinstance(layers, int) or isinstance(layers, bool) or layers < 1:
        notes.assume("--mtp-mem-efficient-logits without --mtp-num-layers: not counted")
        return 6
    notes.assume(
        "--mtp-mem-efficient-logits: each cross-entropy frees the bf16 logits once cast to fp32, "
        "4 B per logit instead of 6 (MindSpeed-LLM mtp.py, cross_entropy.py at c77308a1)"
    )
    return 4


def _swiglu(cfg: TrainingConfig, framework: str, notes: Notes) -> bool:
    """SwiGLU as written, else what the framework's usual models use."""
    mindformers = framework == "mindformers"
    why = "MindFormers llama-style models" if mindformers else "Megatron default GeLU"
    return _flag_or(cfg, "swiglu", mindformers, why, notes)


def _fused_swiglu(cfg: TrainingConfig, framework: str, swiglu: bool, notes: Notes) -> bool:
    """Megatron/MindSpeed fuse SwiGLU only with --use-fused-swiglu; MindFormers' LLaMA-style
    feed-forward runs w1, silu, w3 and mul as separate operators."""
    fused = _flag(cfg, "fused_swiglu")
    if fused is not None or not swiglu:
        return bool(fused)
    if framework == "mindformers":
        notes.assume("MindFormers SwiGLU: silu and mul separate (w1, w3, silu and product kept)")
    return False


def _dropout(cfg: TrainingConfig, name: str, notes: Notes) -> float:
    """A dropout probability; not given means none (MindFormers' LLaMA-style models)."""
    value = number(cfg, name, notes)
    return value if value is not None and 0 < value < 1 else 0.0


def _data_parallel(cfg: TrainingConfig, model_ranks: int, notes: Notes) -> int:
    """dp as written, else world / (tp*pp*cp), else 1 (no optimizer sharding)."""
    dp = count(cfg, "dp", notes)
    if dp is not None:
        return dp
    world = count(cfg, "world", notes)
    if world is not None and world % model_ranks == 0:
        notes.assume(f"dp derived: world {world} / (tp*pp*cp) = {world // model_ranks}")
        return world // model_ranks
    notes.assume("dp unknown: 1 (no optimizer sharding)")
    return 1


def _micro_batches(cfg: TrainingConfig, mbs: int | None, dp: int, notes: Notes) -> int | None:
    """micro_batch_num as written, else gbs / (mbs*dp); None means 'assume >= pp'."""
    m = count(cfg, "micro_batch_num", notes)
    if m is not None:
        return m
    gbs = count(cfg, "gbs", notes)
    if gbs is not None and mbs is not None:
        if gbs % (mbs * dp) == 0:
            return gbs // (mbs * dp)
        notes.problem(f"gbs {gbs} is not divisible by mbs*dp = {mbs * dp} (BATCH-01)")
    notes.assume("micro-batches unknown: at least pp assumed (the in-flight upper bound)")
    return None


def _kv_heads(cfg: TrainingConfig, heads: int | None, notes: Notes) -> int | None:
    """KV heads; without a value, plain multi-head attention."""
    g = count(cfg, "num_kv_heads", notes)
    if g is None and heads is not None:
        notes.assume("num_kv_heads not given: = num_heads (no GQA)")
        return heads
    return g


def _head_dim(
    cfg: TrainingConfig, hidden: int | None, heads: int | None, notes: Notes
) -> int | None:
    """head_dim as written, else hidden / heads (both frameworks' default)."""
    d = count(cfg, "head_dim", notes)
    if d is None and hidden is not None and heads is not None:
        return hidden // heads
    return d


def _ffn(cfg: TrainingConfig, inp: _Sizes, notes: Notes) -> int | None:
    """FFN width as written, else the framework's own default (data/sizing.yaml)."""
    f = count(cfg, "ffn_hidden_size", notes)
    if f is not None or inp.hidden is None:
        return f
    rules = table("sizing")["ffn"]
    if inp.framework == "mindformers" and inp.swiglu:
        return _mindformers_ffn(cfg, inp.hidden, rules["mindformers"], notes)
    rule = rules["megatron"]
    f = int(rule["base"]) * inp.hidden
    if inp.swiglu:
        num, den = rule["swiglu_ratio"]
        step = rule["swiglu_round_down_to"]
        f = int(f * num / den / step) * step
    notes.assume(f"ffn_hidden_size not given: Megatron default {f} ({rule['source']})")
    return f


def _mindformers_ffn(cfg: TrainingConfig, hidden: int, rule: dict[str, Any], notes: Notes) -> int:
    """MindFormers' LLaMA rule: 4h, x (ffn_dim_multiplier + 0.01), x 2/3, up to multiple_of."""
    multiplier = number(cfg, "ffn_dim_multiplier", notes)
    step = count(cfg, "multiple_of", notes) or rule["multiple_of"]
    f = rule["base"] * hidden
    if multiplier is not None:
        f = int((multiplier + rule["multiplier_offset"]) * f)
    num, den = rule["ratio"]
    f = int(num * f / den)
    f = step * -(-f // step)
    given = f"ffn_dim_multiplier {multiplier:g}, " if multiplier is not None else ""
    notes.assume(
        f"ffn_hidden_size not given: MindFormers' LLaMA rule ({given}multiple_of {step}) "
        f"gives {f} ({rule['source']})"
    )
    return f


def _vocab(cfg: TrainingConfig, inp: _Sizes, notes: Notes) -> tuple[int | None, int | None]:
    """(vocabulary for the figures, its low end when only a range is known): as written, else
    the tokenizer's family (padded as Megatron pads it), else the stated range."""
    v = count(cfg, "vocab_size", notes)
    if v is not None:
        return v, None
    held = cfg.values.get("vocab_size")
    if held is not None and held.unresolved:
        return None, None
    texts = [str(cfg.get(n) or "") for n in VOCAB_HINTS] + [cfg.path.rsplit("/", 1)[-1]]
    family = family_of(texts)
    if family is not None:
        vocab = _padded(cfg, family.vocab, inp, notes)
        notes.assume(
            f"vocabulary from the tokenizer: {family.name} family, {family.vocab}"
            + (f", padded to {vocab}" if vocab != family.vocab else "")
            + f" ({family.source})"
        )
        return vocab, None
    low, high = vocab_range()
    notes.assume(
        f"vocabulary unknown (no vocab_size, tokenizer of no known family): first and last "
        f"stages estimated over {low}-{high}, the known families' range"
    )
    return _padded(cfg, high, inp, notes), _padded(cfg, low, inp, notes)


def _padded(cfg: TrainingConfig, vocab: int, inp: _Sizes, notes: Notes) -> int:
    """Megatron pads the tokenizer's vocabulary; MindFormers takes vocab_size as it is."""
    if inp.framework != "megatron":
        return vocab
    rule = table("sizing")["vocab_padding"]
    divisible = count(cfg, "vocab_divisible_by", notes) or rule["megatron_divisible_by"]
    return megatron_padded(vocab, divisible, inp.tp)


def _vocab_emb_dp(cfg: TrainingConfig, framework: str, notes: Notes) -> bool:
    """MindFormers legacy can keep the embedding whole (data-parallel) instead of /tp.

    The mcore path (`use_legacy: False`) forces it off, as Megatron does.
    """
    if framework != "mindformers" or _flag(cfg, "use_legacy") is False:
        return False
    value = _flag(cfg, "vocab_emb_dp")
    if value is None:
        notes.assume("vocab_emb_dp not given: embedding sharded by tp")
    return bool(value)


def _sequence_parallel(cfg: TrainingConfig, tp: int, notes: Notes) -> bool:
    """SP only shards anything with TP > 1 (SEQ-01). MindSpeed's --tp-2d shards the same
    activations over the whole TP domain (tensor_parallel_2d)."""
    if _flag(cfg, "tp_2d") is True and tp > 1:
        return tensor_parallel_2d(cfg, tp, notes)
    sp = _flag_or(cfg, "sp", False, "default", notes)
    if sp and tp == 1:
        notes.problem("sp is on with tp 1: it has no effect (SEQ-01)")
        return False
    return sp


def tensor_parallel_2d(cfg: TrainingConfig, tp: int, notes: Notes) -> bool:
    """MindSpeed --tp-2d: activations are split like sequence parallel's, over all TP ranks.

    Ascend/MindSpeed@7af9baed docs/en/features/tensor-parallel-2d.md: 2D tensor parallelism
    "partitions both activations and parameters"; the inputs and outputs of the MLP and attention
    layers are split along the first dimension by tp_x and along the last by tp_y (tp = tp_x x
    tp_y), and norms are computed distributed. So the norm region and the layer inputs that
    1D TP keeps whole are split by tp, as sequence parallel splits them; the weights are split by
    tp as in 1D TP. Never checked against a run: estimate_unvalidated says so, and the range
    (up to the norm region whole per rank, 1D TP without SP) is in the notes.
    """
    x, y = count(cfg, "tp_x", notes), count(cfg, "tp_y", notes)
    if x is not None and y is not None and x * y != tp:
        notes.problem(f"--tp-2d with tp_x {x} x tp_y {y} = {x * y}, not TP {tp}")
    notes.assume(
        f"--tp-2d (tp_x {x} x tp_y {y}): activations split over all {tp} TP ranks, first "
        "dimension by tp_x and last by tp_y, the norm region as with sequence parallel "
        "(MindSpeed tensor-parallel-2d.md; never checked against a run)"
    )
    return True


SWAP_OPTIMIZER_TIMES = 16
"""MindSpeed --swap-optimizer-times default (swap-optimizer.md)."""
SWAP_OPTIMIZER_ROUNDS = 2
"""Rounds of optimizer states on the device at once in the step: one being updated and the
next one's host-to-device copy (swap-optimizer.md: a round's device-to-host copy waits for the
previous round's host-to-device copy; an assumption, the documentation gives no figure)."""


def _swap_optimizer(cfg: TrainingConfig, notes: Notes) -> float:
    """The share of the optimizer states on the device with MindSpeed --swap-optimizer.

    Ascend/MindSpeed@c58fff2e docs/en/features/swap-optimizer.md: the fp32 master weights and
    Adam's moments (12 B/param, as the distributed optimizer shards them) stay on the host in the
    forward and backward, and come back in --swap-optimizer-times rounds (16 by default) in the
    step, about numel / times each. Counted as held throughout (the step holds no activations,
    so this overstates); never checked against a run: estimate_unvalidated says so.
    """
    if _flag(cfg, "swap_optimizer") is not True:
        return 1.0
    times = count(cfg, "swap_optimizer_times", notes) or SWAP_OPTIMIZER_TIMES
    share = min(1.0, SWAP_OPTIMIZER_ROUNDS / times)
    notes.assume(
        f"--swap-optimizer: master weights and Adam states on the host in the forward and "
        f"backward, back in {times} rounds in the step; {SWAP_OPTIMIZER_ROUNDS} rounds' worth "
        f"({share:.4g} of them) counted as held throughout, from 1/{times} while one round is "
        "updated (MindSpeed swap-optimizer.md; never checked against a run)"
    )
    return share
