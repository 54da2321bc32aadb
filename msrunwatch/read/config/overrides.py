"""`--set KEY=VALUE`: a setting given on the command line, over what the config says.

KEY is a normalised name (`tp`, `run_mode`, `seq_length`: `msrunwatch rules vars`), a MindFormers
key path (`parallel_config.model_parallel`, `context.max_device_memory`) or a Megatron flag
(`--tensor-model-parallel-size`); VALUE is read as a YAML scalar (`4`, `True`, `finetune`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from msrunwatch.core.errors import UsageError, YamlError
from msrunwatch.core.yamlload import load
from msrunwatch.read.config.megatron import FLAGS
from msrunwatch.read.config.mindformers import FIELDS
from msrunwatch.read.config.model import TrainingConfig, Value
from msrunwatch.rules.variables import CONFIG


def _resolve(key: str, raw: Any) -> tuple[str, Any]:
    """(normalised name, value) for one --set item."""
    if key in FLAGS:
        return FLAGS[key][0].lstrip("_"), raw
    path = tuple(key.split("."))
    for name, paths, convert in FIELDS:
        if path in [tuple(p) for p in paths]:
            value, why = convert(raw, path[-1])
            if why is not None:
                raise UsageError(f"--set {key}={raw}: {why}")
            return name, value
    if key in CONFIG:
        return key, raw
    raise UsageError(
        f"--set {key}: unknown setting (a name from `msrunwatch rules vars`, a MindFormers key "
        "path like parallel_config.model_parallel, or a Megatron flag like --seq-length)"
    )


def parse_sets(items: Sequence[str]) -> dict[str, Any]:
    """The values `--set KEY=VALUE ...` gives, by normalised name."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set {item!r}: expected KEY=VALUE")
        try:
            raw, _ = load(text) if text.strip() else (None, None)
        except (YamlError, ValueError, TypeError) as exc:
            raise UsageError(f"--set {item!r}: {exc}") from None
        name, value = _resolve(key.strip(), raw)
        out[name] = value
    return out


def with_sets(config: TrainingConfig, sets: dict[str, Any]) -> TrainingConfig:
    """The config with the --set values over its own; a finding about one points at the line
    the config writes it on, if it does."""
    if not sets:
        return config
    values = dict(config.values)
    for name, value in sets.items():
        values[name] = Value(value, config.where(name))
    return TrainingConfig(config.path, config.kind, values)
