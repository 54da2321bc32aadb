"""A training config normalised to one vocabulary, each value with where it came from.

MindFormers YAML, MindSpeed-LLM / Megatron launch scripts and msrun command lines all
become a `TrainingConfig`: names from `msrunwatch.rules.variables.CONFIG` mapped to a
`Value` that remembers its file, line and column (so a finding points at the YAML key
or the script line) or says why it could not be resolved (never guessed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from msrunwatch.core.compat import dataclass


@dataclass(frozen=True, slots=True)
class Source:
    """Where a value was written."""

    file: str
    line: int
    col: int = 1
    text: str = ""
    """The line as written (`TP=2`, `  model_parallel: 2`), for evidence."""


@dataclass(frozen=True, slots=True)
class Value:
    """One setting: its value (None when unknown), its source, and why it is unknown."""

    value: Any
    source: Source | None = None
    unresolved: str | None = None
    """Set when the text could not be resolved: `$NPUS is not set`, `$(nproc) is a command`."""


@dataclass(frozen=True)
class TrainingConfig:
    """Everything known about one job's parallel, model and batch settings."""

    path: str
    """The config file as given (or `<msrun>` for a command line)."""
    kind: str
    """mindformers, megatron (MindSpeed-LLM / Megatron script) or msrun."""
    values: Mapping[str, Value] = field(default_factory=dict)

    def get(self, name: str) -> Any:
        """The value of a setting, or None."""
        v = self.values.get(name)
        return v.value if v is not None else None

    def where(self, name: str) -> Source | None:
        """Where a setting was written, if it was."""
        v = self.values.get(name)
        return v.source if v is not None else None

    def merged(self, other: TrainingConfig) -> TrainingConfig:
        """This config with other's known values filling (or overriding) its own."""
        values = dict(self.values)
        for name, value in other.values.items():
            if value.value is not None or name not in values:
                values[name] = value
        return TrainingConfig(self.path, self.kind, values)
