"""Bytes per parameter, parameters per stage part, and activation bytes per layer."""

from __future__ import annotations

from msrunwatch.judge.config.memory.inputs import Inputs, number
from msrunwatch.judge.config.memory.layout import ceil_div
from msrunwatch.judge.config.memory.notes import Notes
from msrunwatch.judge.config.memory.result import MIB, LayerTerms, StateBytes
from msrunwatch.read.config.model import TrainingConfig

# --- model states ----------------------------------------------------------------------

_MEGATRON_BYTES = {"bf16": (2.0, 4.0, 12.0), "fp16": (2.0, 2.0, 12.0), "fp32": (4.0, 4.0, 8.0)}
"""(weights, gradients, optimizer) per parameter; the optimizer part is what ZeRO-1 shards."""
_MEGATRON_WHY = {
    "bf16": "18 B/param: bf16 params 2 + fp32 main grads 4 + fp32 master 4 + Adam m,v 8",
    "fp16": "16 B/param: fp16 params 2 + fp16 grads 2 + fp32 master 4 + Adam m,v 8",
    "fp32": "16 B/param: fp32 params 4 + fp32 grads 4 + Adam m,v 8",
}


def state_bytes(cfg: TrainingConfig, inp: Inputs, notes: Notes) -> StateBytes:
    """Bytes per parameter by framework, with the sharding the optimizer gets."""
    if inp.framework == "mindformers":
        return _mindformers_states(cfg, inp, notes)
    weights, grads, optimizer = _MEGATRON_BYTES[inp.dtype]
    notes.assume(_MEGATRON_WHY[inp.dtype])
    if not inp.distributed_optimizer:
        return StateBytes(weights, grads, optimizer)
    shard = inp.dp * inp.cp
    states = StateBytes(weights, grads, optimizer / shard)
    notes.assume(
        f"distributed optimizer: master + Adam sharded over dp*cp = {shard} "
        f"-> {states.total:g} B/param"
    )
    return states


def _mindformers_states(cfg: TrainingConfig, inp: Inputs, notes: Notes) -> StateBytes:
    """MindFormers graph mode: 16 B/param, an explicit assumption nobody has measured."""
    notes.assume(
        "MindFormers graph mode: 16 B/param = fp32 params 4 + accu_grads 4 + AdamW m,v 8 "
        "(unvalidated)"
    )
    if not inp.distributed_optimizer:
        return StateBytes(4.0, 4.0, 8.0)
    size = number(cfg, "optimizer_shard_size", notes)
    shard = min(int(size), inp.dp) if size is not None and size >= 1 else inp.dp
    notes.assume(f"parallel optimizer: params and AdamW states sliced by {shard} (unvalidated)")
    return StateBytes(4.0 / shard, 4.0, 8.0 / shard)


# --- parameters ------------------------------------------------------------------------


def _shape(inp: Inputs) -> tuple[int, int, int, int, int] | None:
    """(h, a, g, d, f) when every layer dimension is known."""
    dims = (inp.hidden, inp.heads, inp.kv_heads, inp.head_dim, inp.ffn)
    if any(x is None for x in dims):
        return None
    h, a, g, d, f = (x or 0 for x in dims)
    return h, a, g, d, f


def layer_params(inp: Inputs) -> int | None:
    """One layer's parameters on a rank: TP-sharded matrices, replicated RMSNorms."""
    shape = _shape(inp)
    if shape is None:
        return None
    h, a, g, d, f = shape
    qkv = h * (a * d + 2 * g * d) + ((a * d + 2 * g * d) if inp.qkv_bias else 0)
    sharded = qkv + a * d * h + (3 if inp.swiglu else 2) * h * f
    return ceil_div(sharded, inp.tp) + 2 * h


def embedding_params(inp: Inputs) -> int | None:
    """The input embedding on stage 0: vocab-parallel unless MindFormers vocab_emb_dp."""
    if inp.vocab is None or inp.hidden is None:
        return None
    return inp.vocab * inp.hidden // (1 if inp.vocab_emb_dp else inp.tp)


def head_params(inp: Inputs) -> int | None:
    """Final norm + output layer on the last stage (a tied head is a copy when pp > 1)."""
    if inp.vocab is None or inp.hidden is None:
        return None
    shared = not inp.untied and inp.pp == 1
    return inp.hidden + (0 if shared else ceil_div(inp.vocab * inp.hidden, inp.tp))


# --- activations -----------------------------------------------------------------------


def layer_terms(inp: Inputs, notes: Notes) -> LayerTerms | None:
    """The c.1 architecture-aware per-layer bytes, T_bwd and CE, for one micro-batch."""
    shape = _shape(inp)
    if shape is None or inp.seq is None or inp.mbs is None:
        _lack_activation_inputs(inp, notes)
        return None
    h, a, g, d, f = shape
    tokens = inp.seq / inp.cp * inp.mbs
    sp_div = inp.tp if inp.sp else 1
    mlp = (6 if inp.swiglu else 4) * f / inp.tp
    core = _attention_core(inp, a, notes)
    kept = (8 * h + 8) / sp_div + (4 * a * d + 4 * g * d) / inp.tp + mlp + core
    ce = None if inp.vocab is None else 6 * tokens * inp.vocab / inp.tp / MIB
    _note_activation_assumptions(inp, notes)
    return LayerTerms(
        layer_mib=tokens * kept / MIB,
        selective_mib=tokens * (kept - core) / MIB,
        checkpoint_mib=tokens * 2 * h / sp_div / MIB,
        backward_mib=tokens * (mlp + 2 * h) / MIB,
        cross_entropy_mib=ce,
    )


def _lack_activation_inputs(inp: Inputs, notes: Notes) -> None:
    """Name each unknown size that leaves the activation terms open."""
    needed = {"seq_length": inp.seq, "mbs": inp.mbs, "hidden_size": inp.hidden}
    needed |= {"num_heads": inp.heads, "ffn_hidden_size": inp.ffn}
    for name in (n for n, v in needed.items() if v is None):
        notes.lack(name, "activations", "backward transient", "cross-entropy")


def _attention_core(inp: Inputs, heads: int, notes: Notes) -> float:
    """Bytes per token the attention core keeps: FA statistics, or the paper's s^2 term.

    The rest of `kept` is the c.1 bookkeeping: norm1/norm2 inputs, QKV and fc1 inputs
    (2h each) and the RMSNorm rstd (8) are SP-sharded; Q and the attention output (2ad
    each), K and V (2gd each), the SwiGLU input 4f and fc2 input 2f are TP-sharded.
    """
    if inp.flash:
        notes.assume(
            "flash attention on (use_flash_attention): Ascend FA softmax max+sum fp32, "
            "64*a B/token/layer"
        )
        return 64 * heads / inp.tp
    notes.assume("no flash attention: the paper's 5*a*s^2*b/t attention term per layer")
    return 5 * heads * (inp.seq or 0) / inp.cp / inp.tp


def _note_activation_assumptions(inp: Inputs, notes: Notes) -> None:
    """The assumptions behind every activation number, written once."""
    notes.assume("dropout 0: no masks kept (+2*s*b*h/t bytes per layer with the paper's two)")
    mlp = "fused SwiGLU" if inp.swiglu else "GeLU MLP"
    notes.assume(f"RMSNorm, RoPE, {mlp}; per-layer formula of config-rules c.1")
    if inp.sp:
        notes.assume("sequence parallel on: norm region and layer input sharded by tp")
    if inp.cp > 1:
        notes.assume("cp > 1: activations scale with seq/cp; ring-attention buffers not modelled")
    width = 6 if inp.swiglu else 4
    notes.assume(f"backward transient T_bwd = ({width}f/t)*s*b + 2*s*b*h: derived, +-300 MiB")
