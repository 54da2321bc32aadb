"""MindFormers `swap_config` → `swap`, `layer_swap` and `op_swap`, located in the YAML.

Normalised as MindFormers' TransformerSwapConfig and LayerSetting do (v1.5.0 to master):
`layer_swap` and `op_swap` are a list of `{backward_prefetch, layers}` (op_swap items add
`op_name`, a pattern or a list of them) or one such mapping; `layers` is True/False or a
list of layer indices. `layer_swap` becomes True (every layer) or the swapped indices;
`op_swap` a mapping from pattern to the same. With `swap: True` and neither list given,
MindFormers swaps `.*\\.flash_attention` in every layer. What does not fit is unresolved.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol, Union

from msrunwatch.core.yamlload import Path_
from msrunwatch.read.config.model import Value

SWAP: Path_ = ("swap_config",)
DEFAULT_OP = r".*\.flash_attention"
"""The op MindFormers swaps in every layer when swap is on and nothing is listed."""

Layers = Union[Literal[True], list[int]]
"""True: every layer; otherwise the layer indices (empty: none)."""
Parse = Callable[[Any, Path_], Any]


class Located(Protocol):
    """The MindFormers reader's view of the YAML: find a path, locate a value."""

    def find(self, path: Path_) -> tuple[bool, Any]: ...

    def value(self, path: Path_, value: Any, why: str | None = None) -> Value: ...


class _Bad(Exception):
    """A swap_config part that does not fit; path is where it is written."""

    def __init__(self, path: Path_, why: str) -> None:
        super().__init__(why)
        self.path, self.why = path, why


def index_list(value: Any) -> list[int] | None:
    """value as a list of layer indices, or None when it is not one."""
    if isinstance(value, list) and all(
        isinstance(n, int) and not isinstance(n, bool) for n in value
    ):
        return value
    return None


def _layers(item: Any, path: Path_, key: str) -> Layers:
    if not isinstance(item, Mapping):
        raise _Bad(path, f"{key} item {item!r} is not a mapping with backward_prefetch and layers")
    layers = item.get("layers")
    if isinstance(layers, bool):
        return True if layers else []
    indices = index_list(layers)
    if indices is not None:
        return sorted(set(indices))
    where = (*path, "layers") if "layers" in item else path
    raise _Bad(where, f"{key} layers is {layers!r}, not True, False or a list of layer numbers")


def _items(raw: Any, path: Path_, key: str) -> list[tuple[Path_, Any]]:
    if isinstance(raw, Mapping):
        return [(path, raw)]  # one item, as MindFormers wraps a lone mapping
    if isinstance(raw, list):
        return [((*path, i), item) for i, item in enumerate(raw)]
    raise _Bad(path, f"{key} is {raw!r}, not a list of {{backward_prefetch, layers}} items")


def union(a: Layers, b: Layers) -> Layers:
    """The layers in a or b."""
    if isinstance(a, list) and isinstance(b, list):
        return sorted(set(a) | set(b))
    return True


def _layer_swap(raw: Any, path: Path_) -> Layers:
    result: Layers = []
    for where, item in _items(raw, path, "layer_swap"):
        result = union(result, _layers(item, where, "layer_swap"))
    return result


def _op_names(item: Any, path: Path_) -> list[str]:
    if not isinstance(item, Mapping):
        raise _Bad(path, f"op_swap item {item!r} is not a mapping with op_name and layers")
    name = item.get("op_name")
    if isinstance(name, str):
        return [name]
    if isinstance(name, list) and name and all(isinstance(n, str) for n in name):
        return list(name)
    if "op_name" not in item:
        why = "op_swap item has no op_name: write a list of {op_name, backward_prefetch, layers}"
        raise _Bad(path, why)
    raise _Bad((*path, "op_name"), f"op_swap op_name is {name!r}, not a pattern or a list")


def _op_swap(raw: Any, path: Path_) -> dict[str, Layers]:
    result: dict[str, Layers] = {}
    for where, item in _items(raw, path, "op_swap"):
        names = _op_names(item, where)
        layers = _layers(item, where, "op_swap")
        for name in names:
            result[name] = union(result.get(name, []), layers)
    return result


def _read(yml: Located, key: str, raw: Any, parse: Parse) -> Value:
    path = (*SWAP, key)
    try:
        return yml.value(path, parse(raw, path))
    except _Bad as bad:
        return yml.value(bad.path, None, bad.why)


def read_swap(yml: Located, values: dict[str, Value]) -> None:
    """Fill swap, layer_swap and op_swap (defaults: off, nothing swapped)."""
    found, block = yml.find(SWAP)
    values["swap"], values["layer_swap"], values["op_swap"] = Value(False), Value([]), Value({})
    if not found or block is None:
        return
    if not isinstance(block, Mapping):
        values["swap"] = yml.value(SWAP, None, f"swap_config is {block!r}, not a mapping")
        return
    swap = block.get("swap")
    if swap is not None:
        why = None if isinstance(swap, bool) else f"swap is {swap!r}, not True or False"
        values["swap"] = yml.value((*SWAP, "swap"), swap if why is None else None, why)
    layer_swap, op_swap = block.get("layer_swap"), block.get("op_swap")
    if layer_swap is not None:
        values["layer_swap"] = _read(yml, "layer_swap", layer_swap, _layer_swap)
    if op_swap is not None:
        values["op_swap"] = _read(yml, "op_swap", op_swap, _op_swap)
    elif layer_swap is None and swap is True:
        values["op_swap"] = Value({DEFAULT_OP: True})
