"""Layers and operators that are both swapped and recomputed, where swap does not take effect.

Mirrors MindFormers' LayerSetting._check_swap_recompute_conflict (v1.5.0 to master: in
mindformers/models/utils.py up to v1.6.0, since v1.7.0 in mindformers/parallel_core/
training_graph/transformer/utils.py). With swap on, `recompute` and each `select_recompute`
pattern name layer indices, not per-stage counts. MindFormers then warns for
`recompute: True` (everything); each fully recomputed layer that layer_swap or any op_swap
pattern swaps; each select_recompute pattern's layer that layer_swap swaps, or that op_swap
swaps under the very same pattern. Settings check_rules refuses under swap (a recompute
that is not True/False or a list of layer indices; select_recompute pattern values that are
not lists) make the answer unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msrunwatch.read.config.swap import Layers, index_list
from msrunwatch.rules.template import rank_ranges

Key = tuple[str, str, str]
"""(operator pattern, or '' for the whole layer; swap setting; recompute setting)."""
Found = dict[Key, set[int]]


def _layers(value: Any) -> Layers | None:
    return True if value is True else index_list(value)


def _covers(layers: Layers, index: int) -> bool:
    return layers is True or index in layers


def _select_layers(value: Any) -> dict[str, list[int]] | None:
    """select_recompute's pattern → layer indices ({} when MindFormers does not check it)."""
    if isinstance(value, bool) or index_list(value) is not None:
        return {}
    if not isinstance(value, Mapping):
        return None
    result: dict[str, list[int]] = {}
    for pattern, layers in value.items():
        indices = index_list(layers)
        if not isinstance(pattern, str) or indices is None:
            return None
        result[pattern] = indices
    return result


def _full(
    found: Found, layers: list[int], layer_swap: Layers, op_swap: Mapping[str, Layers]
) -> None:
    for i in layers:
        if _covers(layer_swap, i):
            found.setdefault(("", "layer_swap", "recompute"), set()).add(i)
    for op, swapped in op_swap.items():
        for i in layers:
            if _covers(swapped, i):
                found.setdefault((op, "op_swap", "recompute"), set()).add(i)


def _select(
    found: Found, select: dict[str, list[int]], layer_swap: Layers, op_swap: Mapping[str, Layers]
) -> None:
    for op, layers in select.items():
        for i in layers:
            if _covers(layer_swap, i):
                found.setdefault((op, "layer_swap", "select_recompute"), set()).add(i)
            if op in op_swap and _covers(op_swap[op], i):
                found.setdefault((op, "op_swap", "select_recompute"), set()).add(i)


def _describe(key: Key, layers: set[int]) -> str:
    op, swapped, recomputed = key
    where = f"layer{'s' if len(layers) > 1 else ''} {rank_ranges(layers)}"
    return f"{f'{op} in ' if op else ''}{where} ({swapped} and {recomputed})"


def swap_recompute_conflicts(env: Mapping[str, Any]) -> list[str] | None:
    """What is both swapped and recomputed; [] when swap is off, None when unknown."""
    swap, layer_swap, op_swap = env.get("swap"), _layers(env.get("layer_swap")), env.get("op_swap")
    if swap is False:
        return []
    if swap is not True or layer_swap is None or not isinstance(op_swap, Mapping):
        return None
    recompute = env.get("recompute")
    if recompute is True:
        return ["every layer and operator (recompute: True)"]
    full = [] if recompute is False else index_list(recompute)
    select = _select_layers(env.get("select_recompute"))
    if full is None or select is None:
        return None
    found: Found = {}
    _full(found, full, layer_swap, op_swap)
    _select(found, select, layer_swap, op_swap)
    return [_describe(key, layers) for key, layers in found.items()]
