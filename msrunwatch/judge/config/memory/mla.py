"""Multi-head latent attention (DeepSeek-V2/V3): its projections and what it keeps per token.

Queries come from h directly (or through a q_lora_rank compression), keys and values from one
kv_lora_rank latent plus a shared RoPE key; the up-projections and the output are split by TP,
the down-projections are not. Per token it keeps the latents (2 B each), and Q, K (nope + rope
width per head), V and the attention output (v width per head), split by TP.
"""

from __future__ import annotations

from dataclasses import dataclass

from msrunwatch.judge.config.memory.notes import Notes
from msrunwatch.read.config.model import TrainingConfig


@dataclass(frozen=True)
class MLA:
    """MLA widths."""

    q_lora: int
    """0: queries straight from h."""
    kv_lora: int
    nope: int
    rope: int
    v: int


def _int(cfg: TrainingConfig, name: str) -> int | None:
    value = cfg.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def read_mla(cfg: TrainingConfig, notes: Notes) -> MLA | None:
    """MLA when the config turns it on (or gives its kv_lora_rank), else None."""
    kv = _int(cfg, "kv_lora_rank")
    if kv is None or cfg.get("mla") is False:
        return None
    nope, rope, v = (_int(cfg, n) for n in ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"))
    mla = MLA(_int(cfg, "q_lora_rank") or 0, kv, nope or 128, rope or 64, v or 128)
    notes.assume(
        f"multi-head latent attention: q_lora {mla.q_lora or 'none'}, kv_lora {mla.kv_lora}, "
        f"qk {mla.nope}+{mla.rope}, v {mla.v} per head (defaults 128+64, 128: DeepSeek-V2/V3)"
    )
    return mla


def mla_params(h: int, heads: int, mla: MLA, tp: int) -> int:
    """One layer's attention weights on a rank."""
    qk = heads * (mla.nope + mla.rope)
    query = (
        h * mla.q_lora + mla.q_lora + -(-mla.q_lora * qk // tp) if mla.q_lora else -(-h * qk // tp)
    )
    latent = h * (mla.kv_lora + mla.rope) + mla.kv_lora
    up = -(-mla.kv_lora * heads * (mla.nope + mla.v) // tp)
    out = -(-heads * mla.v * h // tp)
    return query + latent + up + out


def mla_bytes(heads: int, mla: MLA, tp: int) -> float:
    """Bytes per token the attention keeps besides its input and the core's statistics."""
    latents = 2 * (mla.q_lora + mla.kv_lora + mla.rope)
    per_head = 2 * (2 * (mla.nope + mla.rope) + 2 * mla.v)
    return latents + heads * per_head / tp
