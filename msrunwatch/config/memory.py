"""Per-pipeline-stage device-memory estimate for one training config.

The model is config-rules.md section (c): model states per parameter, an
architecture-aware activation term per layer and micro-batch, the 1F1B in-flight count,
a backward transient, the last stage's cross-entropy and a fragmentation factor. It was
checked against two measured points only (seed 001), so every assumption it makes is
returned with the numbers, every term is kept per stage, and anything it cannot know is
listed as missing instead of guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from msrunwatch.config.model import TrainingConfig

MIB = 1024 * 1024
FRAGMENTATION = 1.04
"""Actual (with fragments) / used: measured 1.031-1.036, DryRun 1.022-1.035; rounded up."""
DEFAULT_DEVICE_MIB = 65536.0
"""A 64 GB Ascend card, nothing reserved."""
TIGHT = 0.95
"""MEM-01 warns above this share of the budget."""


@dataclass(frozen=True)
class StateBytes:
    """Bytes one parameter costs on a rank, by what holds them (after any sharding)."""

    weights: float
    gradients: float
    optimizer: float

    @property
    def total(self) -> float:
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
    """ok, tight (> 95 % of the budget), over (> 100 %) or unknown."""

    @property
    def model_states_mib(self) -> float | None:
        if self.weights_mib is None or self.grads_optimizer_mib is None:
            return None
        return self.weights_mib + self.grads_optimizer_mib


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

    @property
    def complete(self) -> bool:
        """Every stage has a total."""
        return bool(self.stages) and all(s.used_mib is not None for s in self.stages)

    @property
    def peak(self) -> StageEstimate | None:
        """The stage with the largest known total."""
        known = [s for s in self.stages if s.used_mib is not None]
        return max(known, key=lambda s: s.used_mib or 0.0) if known else None


@dataclass
class _Notes:
    """What the estimate had to assume, could not know, or found inconsistent."""

    assumptions: list[str] = field(default_factory=list)
    lacking: dict[str, list[str]] = field(default_factory=dict)
    """Unknown input -> the terms it leaves unestimated."""
    problems: list[str] = field(default_factory=list)

    def assume(self, text: str) -> None:
        if text not in self.assumptions:
            self.assumptions.append(text)

    why: dict[str, str] = field(default_factory=dict)

    def lack(self, name: str, *terms: str, why: str = "unknown") -> None:
        known = self.lacking.setdefault(name, [])
        known += [t for t in terms if t not in known]
        self.why.setdefault(name, why)

    @property
    def missing(self) -> list[str]:
        return [f"{n} {self.why[n]}: no {', '.join(t)}" for n, t in self.lacking.items()]

    def problem(self, text: str) -> None:
        if text not in self.problems:
            self.problems.append(text)


@dataclass(frozen=True)
class _Inputs:
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
    moe: bool


# --- reading values --------------------------------------------------------------------


def _number(cfg: TrainingConfig, name: str, notes: _Notes) -> float | None:
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
    if isinstance(raw, int | float):
        return float(raw)
    try:
        return float(str(raw).strip())
    except ValueError:
        notes.problem(f"{name}: {raw!r} is not a number")
        return None


def _count(cfg: TrainingConfig, name: str, notes: _Notes) -> int | None:
    """A positive whole number (sizes, degrees, lengths)."""
    value = _number(cfg, name, notes)
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
    if isinstance(raw, int | float):
        return bool(raw)
    text = str(raw).strip().lower()
    if text in ("true", "yes", "on", "1"):
        return True
    if text in ("false", "no", "off", "0", "none", ""):
        return False
    return None


def _flag_or(cfg: TrainingConfig, name: str, default: bool, why: str, notes: _Notes) -> bool:
    """A flag, or its default with the default written down as an assumption."""
    value = _flag(cfg, name)
    if value is None:
        notes.assume(f"{name} not given: {'on' if default else 'off'} ({why})")
        return default
    return value


def _degree(cfg: TrainingConfig, name: str, notes: _Notes) -> int:
    """A parallel degree; unset means 1 in every framework, said once."""
    value = _count(cfg, name, notes)
    if value is None:
        notes.assume(f"{name} not given: 1")
        return 1
    return value


def _framework(cfg: TrainingConfig, notes: _Notes) -> str:
    """mindformers or megatron: it picks the byte model for the model states."""
    name = str(cfg.get("framework") or cfg.kind or "").lower()
    if name in ("mindformers", "megatron"):
        return name
    notes.assume("framework unknown: Megatron/MindSpeed byte model")
    return "megatron"


def _dtype(cfg: TrainingConfig, notes: _Notes) -> str:
    """bf16, fp16 or fp32 from the many spellings."""
    raw = str(cfg.get("params_dtype") or "").lower().replace("_", "")
    for name, spellings in (
        ("bf16", ("bf16", "bfloat16")),
        ("fp16", ("fp16", "float16", "half")),
        ("fp32", ("fp32", "float32", "float")),
    ):
        if raw in spellings:
            return name
    notes.assume("params_dtype not given: bf16")
    return "bf16"


# --- resolving the inputs --------------------------------------------------------------


def _read_inputs(cfg: TrainingConfig, notes: _Notes) -> _Inputs:
    """Every input the model uses, with the defaults it takes recorded as assumptions."""
    framework = _framework(cfg, notes)
    tp, pp, cp, vpp = (_degree(cfg, n, notes) for n in ("tp", "pp", "cp", "vpp"))
    dp = _data_parallel(cfg, tp * pp * cp, notes)
    mbs = _count(cfg, "mbs", notes)
    hidden = _count(cfg, "hidden_size", notes)
    heads = _count(cfg, "num_heads", notes)
    mindformers = framework == "mindformers"
    why = "MindFormers llama-style models" if mindformers else "Megatron default GeLU"
    swiglu = _flag_or(cfg, "swiglu", mindformers, why, notes)
    experts = _number(cfg, "num_experts", notes)
    return _Inputs(
        framework=framework,
        tp=tp,
        pp=pp,
        cp=cp,
        vpp=vpp,
        dp=dp,
        micro_batches=_micro_batches(cfg, mbs, dp, notes),
        mbs=mbs,
        seq=_count(cfg, "seq_length", notes),
        layers=_count(cfg, "num_layers", notes),
        hidden=hidden,
        heads=heads,
        kv_heads=_kv_heads(cfg, heads, notes),
        head_dim=_head_dim(cfg, hidden, heads, notes),
        ffn=_ffn(cfg, hidden, swiglu, notes),
        vocab=_count(cfg, "vocab_size", notes),
        swiglu=swiglu,
        untied=_flag_or(cfg, "untie_embeddings", True, "separate output layer, upper bound", notes),
        flash=_flag_or(cfg, "use_flash_attention", False, "framework default", notes),
        sp=_sequence_parallel(cfg, tp, notes),
        qkv_bias=bool(_flag(cfg, "qkv_bias")),
        vocab_emb_dp=_vocab_emb_dp(cfg, framework, notes),
        distributed_optimizer=_flag_or(cfg, "use_distributed_optimizer", False, "default", notes),
        dtype=_dtype(cfg, notes),
        moe=experts is not None and experts > 1,
    )


def _data_parallel(cfg: TrainingConfig, model_ranks: int, notes: _Notes) -> int:
    """dp as written, else world / (tp*pp*cp), else 1 (no optimizer sharding)."""
    dp = _count(cfg, "dp", notes)
    if dp is not None:
        return dp
    world = _count(cfg, "world", notes)
    if world is not None and world % model_ranks == 0:
        notes.assume(f"dp derived: world {world} / (tp*pp*cp) = {world // model_ranks}")
        return world // model_ranks
    notes.assume("dp unknown: 1 (no optimizer sharding)")
    return 1


def _micro_batches(cfg: TrainingConfig, mbs: int | None, dp: int, notes: _Notes) -> int | None:
    """micro_batch_num as written, else gbs / (mbs*dp); None means 'assume >= pp'."""
    m = _count(cfg, "micro_batch_num", notes)
    if m is not None:
        return m
    gbs = _count(cfg, "gbs", notes)
    if gbs is not None and mbs is not None:
        if gbs % (mbs * dp) == 0:
            return gbs // (mbs * dp)
        notes.problem(f"gbs {gbs} is not divisible by mbs*dp = {mbs * dp} (BATCH-01)")
    notes.assume("micro-batches unknown: at least pp assumed (the in-flight upper bound)")
    return None


def _kv_heads(cfg: TrainingConfig, heads: int | None, notes: _Notes) -> int | None:
    """KV heads; without a value, plain multi-head attention."""
    g = _count(cfg, "num_kv_heads", notes)
    if g is None and heads is not None:
        notes.assume("num_kv_heads not given: = num_heads (no GQA)")
        return heads
    return g


def _head_dim(
    cfg: TrainingConfig, hidden: int | None, heads: int | None, notes: _Notes
) -> int | None:
    """head_dim as written, else hidden / heads (both frameworks' default)."""
    d = _count(cfg, "head_dim", notes)
    if d is None and hidden is not None and heads is not None:
        return hidden // heads
    return d


def _ffn(cfg: TrainingConfig, hidden: int | None, swiglu: bool, notes: _Notes) -> int | None:
    """FFN width as written, else Megatron's default (4h, or 8h/3 rounded down to 64)."""
    f = _count(cfg, "ffn_hidden_size", notes)
    if f is not None or hidden is None:
        return f
    f = int(4 * hidden * 2 / 3 / 64) * 64 if swiglu else 4 * hidden
    notes.assume(f"ffn_hidden_size not given: Megatron default {f}")
    return f


def _vocab_emb_dp(cfg: TrainingConfig, framework: str, notes: _Notes) -> bool:
    """MindFormers legacy can keep the embedding whole (data-parallel) instead of /tp.

    The mcore path (`use_legacy: False`) forces it off, as Megatron does.
    """
    if framework != "mindformers" or _flag(cfg, "use_legacy") is False:
        return False
    value = _flag(cfg, "vocab_emb_dp")
    if value is None:
        notes.assume("vocab_emb_dp not given: embedding sharded by tp")
    return bool(value)


def _sequence_parallel(cfg: TrainingConfig, tp: int, notes: _Notes) -> bool:
    """SP only shards anything with TP > 1 (SEQ-01)."""
    sp = _flag_or(cfg, "sp", False, "default", notes)
    if sp and tp == 1:
        notes.problem("sp is on with tp 1: it has no effect (SEQ-01)")
        return False
    return sp


# --- model states ----------------------------------------------------------------------

_MEGATRON_BYTES = {"bf16": (2.0, 4.0, 12.0), "fp16": (2.0, 2.0, 12.0), "fp32": (4.0, 4.0, 8.0)}
"""(weights, gradients, optimizer) per parameter; the optimizer part is what ZeRO-1 shards."""
_MEGATRON_WHY = {
    "bf16": "18 B/param: bf16 params 2 + fp32 main grads 4 + fp32 master 4 + Adam m,v 8",
    "fp16": "16 B/param: fp16 params 2 + fp16 grads 2 + fp32 master 4 + Adam m,v 8",
    "fp32": "16 B/param: fp32 params 4 + fp32 grads 4 + Adam m,v 8",
}


def _state_bytes(cfg: TrainingConfig, inp: _Inputs, notes: _Notes) -> StateBytes:
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


def _mindformers_states(cfg: TrainingConfig, inp: _Inputs, notes: _Notes) -> StateBytes:
    """MindFormers graph mode: 16 B/param, an explicit assumption nobody has measured."""
    notes.assume(
        "MindFormers graph mode: 16 B/param = fp32 params 4 + accu_grads 4 + AdamW m,v 8 "
        "(unvalidated)"
    )
    if not inp.distributed_optimizer:
        return StateBytes(4.0, 4.0, 8.0)
    size = _number(cfg, "optimizer_shard_size", notes)
    shard = min(int(size), inp.dp) if size is not None and size >= 1 else inp.dp
    notes.assume(f"parallel optimizer: params and AdamW states sliced by {shard} (unvalidated)")
    return StateBytes(4.0 / shard, 4.0, 8.0 / shard)


# --- parameters ------------------------------------------------------------------------


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _shape(inp: _Inputs) -> tuple[int, int, int, int, int] | None:
    """(h, a, g, d, f) when every layer dimension is known."""
    dims = (inp.hidden, inp.heads, inp.kv_heads, inp.head_dim, inp.ffn)
    if any(x is None for x in dims):
        return None
    h, a, g, d, f = (x or 0 for x in dims)
    return h, a, g, d, f


def _layer_params(inp: _Inputs) -> int | None:
    """One layer's parameters on a rank: TP-sharded matrices, replicated RMSNorms."""
    shape = _shape(inp)
    if shape is None:
        return None
    h, a, g, d, f = shape
    qkv = h * (a * d + 2 * g * d) + ((a * d + 2 * g * d) if inp.qkv_bias else 0)
    sharded = qkv + a * d * h + (3 if inp.swiglu else 2) * h * f
    return _ceil_div(sharded, inp.tp) + 2 * h


def _embedding_params(inp: _Inputs) -> int | None:
    """The input embedding on stage 0: vocab-parallel unless MindFormers vocab_emb_dp."""
    if inp.vocab is None or inp.hidden is None:
        return None
    return inp.vocab * inp.hidden // (1 if inp.vocab_emb_dp else inp.tp)


def _head_params(inp: _Inputs) -> int | None:
    """Final norm + output layer on the last stage (a tied head is a copy when pp > 1)."""
    if inp.vocab is None or inp.hidden is None:
        return None
    shared = not inp.untied and inp.pp == 1
    return inp.hidden + (0 if shared else _ceil_div(inp.vocab * inp.hidden, inp.tp))


# --- activations -----------------------------------------------------------------------


def _layer_terms(inp: _Inputs, notes: _Notes) -> LayerTerms | None:
    """The c.1 architecture-aware per-layer bytes, T_bwd and CE, for one micro-batch."""
    shape = _shape(inp)
    if shape is None or inp.seq is None or inp.mbs is None:
        needed = {"seq_length": inp.seq, "mbs": inp.mbs, "hidden_size": inp.hidden}
        needed |= {"num_heads": inp.heads, "ffn_hidden_size": inp.ffn}
        for name in (n for n, v in needed.items() if v is None):
            notes.lack(name, "activations", "backward transient", "cross-entropy")
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


def _attention_core(inp: _Inputs, heads: int, notes: _Notes) -> float:
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


def _note_activation_assumptions(inp: _Inputs, notes: _Notes) -> None:
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


# --- pipeline layout -------------------------------------------------------------------


def _split_layers(cfg: TrainingConfig, inp: _Inputs, notes: _Notes) -> tuple[int, ...] | None:
    """Layers per stage: --num-layer-list, MindFormers offset, or an even split."""
    if inp.layers is None:
        notes.lack("num_layers", "per-stage layers", "parameters", "activations")
        return None
    listed = _from_layer_list(cfg.get("num_layer_list"), inp, notes)
    if listed is None:
        listed = _from_offset(cfg.get("offset"), inp, notes)
    return listed if listed is not None else _even_split(inp, notes)


def _from_layer_list(raw: object, inp: _Inputs, notes: _Notes) -> tuple[int, ...] | None:
    """MindSpeed --num-layer-list: one count per stage summing to num_layers."""
    if raw is None:
        return None
    counts = _int_list(raw)
    if counts is None or len(counts) != inp.pp or sum(counts) != inp.layers:
        notes.problem(f"num_layer_list {raw!r} does not give {inp.layers} layers over {inp.pp}")
        return None
    return tuple(counts)


def _from_offset(raw: object, inp: _Inputs, notes: _Notes) -> tuple[int, ...] | None:
    """MindFormers offset: stage i holds base + offset[i] layers, summed over vpp chunks."""
    rows = _offset_rows(raw, inp.pp)
    if rows is None:
        if raw is not None and raw != 0:
            notes.problem(f"offset {raw!r} is not 0 or a list of pp ints: even split assumed")
        return None
    if len(rows) == 1:
        rows = rows * inp.vpp
    layers = inp.layers or 0
    base = layers // (inp.pp * inp.vpp)
    counts = tuple(sum(base + row[i] for row in rows) for i in range(inp.pp))
    if len(rows) != inp.vpp or min(counts) < 0 or sum(counts) != layers:
        notes.problem(f"offset {raw!r} does not sum to num_layers % (pp*vpp) (PP-02)")
        return None
    return counts


def _offset_rows(raw: object, pp: int) -> list[list[int]] | None:
    """offset as (chunks x pp) rows, or None when it is 0, absent or malformed."""
    if not isinstance(raw, list | tuple) or not raw:
        return None
    if all(isinstance(r, list | tuple) for r in raw):
        rows = [_int_list(r) for r in raw]
    else:
        rows = [_int_list(raw)]
    clean = [r for r in rows if r is not None and len(r) == pp]
    return clean if len(clean) == len(rows) else None


def _int_list(raw: object) -> list[int] | None:
    """A list of ints from a list, or a comma/space separated string."""
    items = raw.replace(",", " ").split() if isinstance(raw, str) else raw
    if not isinstance(items, list | tuple):
        return None
    try:
        return [int(x) for x in items]
    except (TypeError, ValueError):
        return None


def _even_split(inp: _Inputs, notes: _Notes) -> tuple[int, ...]:
    """num_layers / pp; a remainder goes to the first stages (the conservative side)."""
    layers = inp.layers or 0
    base, extra = divmod(layers, inp.pp)
    if extra:
        notes.problem(
            f"num_layers {layers} is not divisible by pp {inp.pp} (PP-01/PP-02): "
            "the remainder is put on the first stages"
        )
    return tuple(base + (1 if i < extra else 0) for i in range(inp.pp))


def _in_flight(stage: int, inp: _Inputs) -> float:
    """Micro-batches' worth held at peak: min(p - i, m), or interleaved chunks / vpp."""
    p, v, m = inp.pp, inp.vpp, inp.micro_batches
    if v == 1:
        return float(min(p - stage, m) if m else p - stage)
    chunks = p * (v + 1) - 1 - 2 * stage
    return (min(chunks, m * v) if m else chunks) / v


# --- recompute -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    """Per stage: layers fully recomputed, checkpoints kept, selective layers."""

    full: tuple[int, ...]
    checkpoints: tuple[int, ...]
    chunk: int
    """Layers re-run together in backward."""
    selective: tuple[int, ...]
    label: str


def _recompute_plan(cfg: TrainingConfig, layers: tuple[int, ...], notes: _Notes) -> _Plan:
    """Full recompute (Megatron or MindFormers style) and selective recompute per stage."""
    granularity = str(cfg.get("recompute_granularity") or "").lower()
    if granularity == "full":
        full, checkpoints, chunk, label = _megatron_full(cfg, layers, notes)
    else:
        full = _per_stage(cfg.get("recompute"), layers, "recompute", notes)
        checkpoints, chunk = full, 1
        label = f"full recompute of {list(full)} layers per stage" if any(full) else "none"
    if granularity == "selective":
        wanted = layers
    else:
        wanted = _per_stage(cfg.get("select_recompute"), layers, "select_recompute", notes)
    selective = tuple(max(0, min(w, n - r)) for w, n, r in zip(wanted, layers, full, strict=True))
    if any(selective):
        notes.assume("selective recompute: attention core only (Megatron's core_attention)")
        label = f"{label}; selective on {list(selective)} layers".removeprefix("none; ")
    return _Plan(full, checkpoints, chunk, selective, label)


def _megatron_full(
    cfg: TrainingConfig, layers: tuple[int, ...], notes: _Notes
) -> tuple[tuple[int, ...], tuple[int, ...], int, str]:
    """--recompute-method uniform (chunks of N) or block (first N layers of each stage)."""
    method = str(cfg.get("recompute_method") or "").lower()
    n = _count(cfg, "recompute_num_layers", notes)
    if method not in ("uniform", "block") or n is None:
        notes.problem("full recompute needs recompute_method and recompute_num_layers (RC-02)")
        method, n = method if method in ("uniform", "block") else "uniform", n or 1
        notes.assume(f"recompute taken as {method}, {n} layer(s)")
    if method == "block":
        full = tuple(min(n, count) for count in layers)
        return full, full, 1, f"full recompute, block, first {n} layer(s) per stage"
    checkpoints = tuple(_ceil_div(count, n) for count in layers)
    return layers, checkpoints, n, f"full recompute, uniform, {n} layer(s) per checkpoint"


def _per_stage(raw: object, layers: tuple[int, ...], name: str, notes: _Notes) -> tuple[int, ...]:
    """MindFormers per-stage counts: bool, int, list[pp], list[vpp][pp] or op-pattern dict."""
    if isinstance(raw, str) and raw.strip().lower() in ("true", "false", "none", "0", ""):
        raw = raw.strip().lower() == "true"
    if raw is None or raw is False or raw == 0:
        return tuple(0 for _ in layers)
    if isinstance(raw, dict):
        notes.assume(f"{name} op patterns: taken as whole-layer counts (unvalidated)")
        per_pattern = [_per_stage(v, layers, name, notes) for v in raw.values()]
        return tuple(max(c) for c in zip(*per_pattern, strict=True)) if per_pattern else layers
    counts = _stage_counts(raw, len(layers))
    if counts is None:
        notes.assume(f"{name} {raw!r}: taken as every layer (unvalidated)")
        return layers
    return tuple(min(c, n) for c, n in zip(counts, layers, strict=True))


def _stage_counts(raw: object, pp: int) -> list[int] | None:
    """True / int / list / 2-D list as one count per stage; None when not numeric."""
    if raw is True:
        return [1 << 30] * pp
    if isinstance(raw, int):
        return [raw] * pp
    if not isinstance(raw, list | tuple):
        return None
    if raw and all(isinstance(r, list | tuple) for r in raw):
        rows = [_stage_counts(r, pp) for r in raw]
        if any(r is None for r in rows):
            return None
        return [sum(r[i] for r in rows if r is not None) for i in range(pp)]
    counts = _int_list(list(raw))
    if counts is None:
        return None
    return (counts + [0] * pp)[:pp]


# --- per stage -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Context:
    """What every stage's estimate shares."""

    inp: _Inputs
    layers: tuple[int, ...] | None
    terms: LayerTerms | None
    states: StateBytes | None
    plan: _Plan | None
    budget: float


def _stage(i: int, ctx: _Context) -> StageEstimate:
    """Every term of stage i, and the totals when all of them are known."""
    inp = ctx.inp
    layers = ctx.layers[i] if ctx.layers else None
    first, last = i == 0, i == inp.pp - 1
    embed = _embedding_params(inp) if first else 0
    head = _head_params(inp) if last else 0
    params = _stage_params(layers, _layer_params(inp), embed, head)
    weights, grads_opt = _states_mib(params, ctx.states)
    in_flight = _in_flight(i, inp) if layers is not None else None
    act, recompute = _activations(i, layers, in_flight, ctx)
    backward = ctx.terms.backward_mib if ctx.terms else None
    ce = (ctx.terms.cross_entropy_mib if ctx.terms else None) if last else 0.0
    parts = (weights, grads_opt, act, recompute, backward, ce)
    used = sum(p for p in parts if p is not None) if None not in parts else None
    actual = used * FRAGMENTATION if used is not None else None
    return StageEstimate(
        stage=i,
        layers=layers,
        in_flight=in_flight,
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
        verdict=_verdict(actual, ctx.budget),
    )


def _stage_params(
    layers: int | None, per_layer: int | None, embed: int | None, head: int | None
) -> int | None:
    """A stage's parameters, or None: a first/last stage without its vocab is unknown."""
    if layers is None or per_layer is None or embed is None or head is None:
        return None
    return layers * per_layer + embed + head


def _states_mib(params: int | None, states: StateBytes | None) -> tuple[float | None, float | None]:
    """(weights, gradients + optimizer) in MiB."""
    if params is None or states is None:
        return None, None
    return params * states.weights / MIB, params * (states.gradients + states.optimizer) / MIB


def _activations(
    i: int, layers: int | None, in_flight: float | None, ctx: _Context
) -> tuple[float | None, float | None]:
    """(kept activations, recompute transient) in MiB for stage i.

    The peak is at the start of the oldest micro-batch's backward: n_i micro-batches
    kept. Re-running a recomputed chunk adds chunk*A once the layers after it are freed.
    """
    t, plan = ctx.terms, ctx.plan
    if t is None or plan is None or layers is None or in_flight is None:
        return None, None
    full, sel = plan.full[i], plan.selective[i]
    plain = layers - full - sel
    kept = plan.checkpoints[i] * t.checkpoint_mib + sel * t.selective_mib + plain * t.layer_mib
    rerun = min(plan.chunk, full) * t.layer_mib - sel * t.selective_mib - plain * t.layer_mib
    core = (t.layer_mib - t.selective_mib) if sel else 0.0
    return in_flight * kept, max(0.0, rerun if full else 0.0, core)


def _verdict(actual: float | None, budget: float) -> str:
    """MEM-01: over above the budget, tight above 95 % of it."""
    if actual is None:
        return "unknown"
    if actual > budget:
        return "over"
    return "tight" if actual > TIGHT * budget else "ok"


# --- budget and the whole estimate ------------------------------------------------------


def _budget(cfg: TrainingConfig, notes: _Notes) -> tuple[float, str]:
    """max_device_memory if set, else the card's memory, else a 64 GB card."""
    for name, what in (
        ("max_device_memory_mb", "max_device_memory from the config"),
        ("device_memory_mb", "the card's device memory, nothing reserved"),
    ):
        value = _number(cfg, name, notes)
        if value is not None and value > 0:
            return value, f"{name} = {value:g} MiB ({what})"
    source = f"default {DEFAULT_DEVICE_MIB:g} MiB (64 GB card, nothing reserved)"
    notes.assume(f"budget: {source}; CANN/HCCL/driver memory outside the pool not subtracted")
    return DEFAULT_DEVICE_MIB, source


def estimate(config: TrainingConfig) -> Estimate:
    """The per-stage peak estimate; partial (with `missing` filled) when inputs lack."""
    notes = _Notes()
    inp = _read_inputs(config, notes)
    budget, source = _budget(config, budget_notes := _Notes())
    if inp.moe:
        notes.lack("num_experts", "estimate", why="> 1: MoE is not modelled")
        _merge(notes, budget_notes)
        return _empty(config, inp, notes, budget, source)
    layers = _split_layers(config, inp, notes)
    plan = _recompute_plan(config, layers, notes) if layers else None
    ctx = _Context(
        inp, layers, _layer_terms(inp, notes), _state_bytes(config, inp, notes), plan, budget
    )
    _note_params_gaps(inp, notes)
    _note_pipeline_assumptions(inp, ctx, notes)
    stages = tuple(_stage(i, ctx) for i in range(inp.pp))
    _merge(notes, budget_notes)
    return _assemble(config, inp, notes, budget, source, stages, ctx)


def _merge(notes: _Notes, more: _Notes) -> None:
    """Append another set of notes (the budget's go last: they concern no stage)."""
    for text in more.assumptions:
        notes.assume(text)
    for text in more.problems:
        notes.problem(text)


def _note_params_gaps(inp: _Inputs, notes: _Notes) -> None:
    """Say which stage totals an unknown size leaves open."""
    for name, value in (("hidden_size", inp.hidden), ("num_heads", inp.heads)):
        if value is None:
            notes.lack(name, "parameters", "model states")
    if inp.vocab is None:
        notes.lack("vocab_size", "first-stage embedding", "last-stage head", "cross-entropy")
    if not inp.qkv_bias:
        notes.assume("linear biases ignored (qkv_bias not given)")


def _note_pipeline_assumptions(inp: _Inputs, ctx: _Context, notes: _Notes) -> None:
    """The schedule and last-stage assumptions, when they enter the numbers."""
    if inp.vpp > 1:
        notes.assume("interleaved 1F1B: p*(v+1)-1-2i chunks in flight (unvalidated)")
    else:
        notes.assume("1F1B: stage i holds min(p - i, m) micro-batches")
    if ctx.terms and ctx.terms.cross_entropy_mib is not None:
        notes.assume("last-stage CE term 6*s*b*V/t (Megatron fp32 logits) uncalibrated, +-10%")
    notes.assume(f"actual = {FRAGMENTATION} x used (measured fragmentation 1.031-1.036)")


def _resolved(inp: _Inputs) -> tuple[tuple[str, object], ...]:
    """The inputs worth printing in the header, in a stable order."""
    names: tuple[str, ...] = ("tp", "pp", "cp", "dp", "vpp", "micro_batches", "mbs", "seq")
    names += ("layers", "hidden")
    names += ("heads", "kv_heads", "head_dim", "ffn", "vocab", "swiglu", "sp", "flash")
    names += ("untied", "distributed_optimizer", "dtype")
    return tuple((n, getattr(inp, n)) for n in names)


def _assemble(
    cfg: TrainingConfig,
    inp: _Inputs,
    notes: _Notes,
    budget: float,
    source: str,
    stages: tuple[StageEstimate, ...],
    ctx: _Context,
) -> Estimate:
    """Freeze the notes and terms into the returned value."""
    return Estimate(
        path=cfg.path,
        framework=inp.framework,
        stages=stages,
        layer_terms=ctx.terms,
        state_bytes=ctx.states,
        micro_batches=inp.micro_batches,
        recompute=ctx.plan.label if ctx.plan else "unknown",
        budget_mib=budget,
        budget_source=source,
        inputs=_resolved(inp),
        assumptions=tuple(notes.assumptions),
        missing=tuple(notes.missing),
        problems=tuple(notes.problems),
    )


def _empty(
    cfg: TrainingConfig, inp: _Inputs, notes: _Notes, budget: float, source: str
) -> Estimate:
    """An estimate that estimates nothing, with the reason in `missing`."""
    ctx = _Context(inp, None, None, None, None, budget)
    return _assemble(cfg, inp, notes, budget, source, (), ctx)
