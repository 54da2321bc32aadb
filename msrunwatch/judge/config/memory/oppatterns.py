"""MindFormers select_recompute by operator pattern: what each pattern frees, per stage.

`select_recompute: {'feed_forward\\.mul': [11, 13, 13, 11], ...}` re-runs the operators the
pattern names in that many layers of each stage, instead of keeping their outputs. The table
(msrunwatch/read/config/data/select_recompute.yaml) says which output each pattern names; a
pattern the table does not know is counted as freeing nothing (an upper bound) and said so.

The other forms are patterns too (mindformers/models/utils.py LayerSetting, r1.3.0 to master):
a list of patterns re-runs them in every layer; `True`, a count or a list of counts per stage
re-runs MindFormers' default patterns, the FFN's `feed_forward.mul` and
`feed_forward.w1.activation.silu`, in that many layers, and without flash attention the
attention core too (llama_transformer.py: `select_recompute and not use_flash_attention`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from msrunwatch.judge.config.memory.inputs import Inputs
from msrunwatch.judge.config.memory.notes import Notes
from msrunwatch.read.config.tables import table

PerStage = Callable[[object], tuple[int, ...]]

DEFAULT_PATTERNS = (r"feed_forward\.mul", r"feed_forward\.w1\.activation\.silu")
"""MindFormers LayerSetting's default_patterns for select_recompute (models/utils.py)."""
CORE = r"core_attention"
"""What `select_recompute` also re-runs without flash attention (the attention core)."""


def as_patterns(select: object, flash: bool) -> dict[object, object] | None:
    """select_recompute as MindFormers reads it: {pattern: layers per stage}, or None when it
    re-runs nothing or is not a form MindFormers takes."""
    if isinstance(select, dict):
        return dict(select) if select else None
    if isinstance(select, (list, tuple)) and select and all(isinstance(p, str) for p in select):
        return dict.fromkeys(select, True)
    if select is None or select is False or select == 0 or isinstance(select, str):
        return None
    if not isinstance(select, (bool, int, list, tuple)):
        return None
    names = DEFAULT_PATTERNS if flash else (*DEFAULT_PATTERNS, CORE)
    return dict.fromkeys(names, select)


def _width(inp: Inputs, width: str, core: float) -> float:
    """Bytes per token on a rank of one output of the named width."""
    h, f = inp.hidden or 0, inp.ffn or 0
    heads, kv, d = inp.heads or 0, inp.kv_heads or 0, inp.head_dim or 0
    sizes = {"f": 2 * f, "2f": 4 * f, "h": 2 * h, "2h": 4 * h, "qkv": 2 * (heads + 2 * kv) * d}
    if width == "core":
        return core
    return float(sizes.get(width, 0))


def _freed(inp: Inputs, pattern: str, core: float) -> tuple[float, str] | None:
    """(bytes per token one layer frees, what) for a select_recompute key, or None if unknown."""
    plain = pattern.replace("\\", "")
    for needle, what, width, split in table("select_recompute")["patterns"]:
        if str(needle) in plain:
            div = inp.tp if split == "tp" or (split == "sp" and inp.sp) else 1
            return _width(inp, str(width), core) / div, str(what)
    return None


def op_freed(
    patterns: Mapping[object, object],
    layers: tuple[int, ...],
    per_stage: PerStage,
    inp: Inputs,
    core: float,
    notes: Notes,
) -> tuple[float, ...]:
    """Per stage: the bytes per token the patterns free, summed over the layers they name."""
    total = [0.0] * len(layers)
    for pattern, value in patterns.items():
        known = _freed(inp, str(pattern), core)
        if known is None:
            notes.assume(f"select_recompute {pattern!r}: an operator the table does not name, kept")
            continue
        freed, what = known
        counts = per_stage(value)
        notes.assume(f"select_recompute {pattern!r}: {what} re-run in {list(counts)} layers")
        for i, n in enumerate(counts):
            total[i] += freed * min(n, layers[i])
    return tuple(total)
