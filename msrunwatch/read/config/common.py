"""What every config reader shares: the error type, traced values and source lines."""

from __future__ import annotations

from msrunwatch.core.compat import dataclass
from msrunwatch.core.errors import ConfigError
from msrunwatch.read.config.model import Source, Value


class NotATrainingConfig(ConfigError):
    """A readable file that is not a training config or launch (a converter, a data script,
    another framework's YAML): nothing to check, which `check` says as an info finding."""


@dataclass(frozen=True, slots=True)
class TracedValue(Value):
    """A value from a launch script: `source` is where the value is written (`TP=2`),
    `via` where it is used (`--tensor-model-parallel-size ${TP}`) when that is elsewhere."""

    via: Source | None = None


class Doc:
    """A config's text, split into lines, to build `Source`s from line and column."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()

    def source(self, line: int, col: int = 1) -> Source:
        """The Source at a 1-based line and column, with the line's text."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return Source(self.path, line, col, text)

    def error(self, line: int | None, message: str) -> ConfigError:
        """A ConfigError naming this file (and the line, when known)."""
        where = f"{self.path}:{line}" if line else self.path
        return ConfigError(f"{where}: {message}")

    def not_a_config(self, line: int | None, message: str) -> NotATrainingConfig:
        """The file is readable but is not a training config (nothing to check)."""
        where = f"{self.path}:{line}" if line else self.path
        return NotATrainingConfig(f"{where}: {message}")


DTYPES = {
    "bfloat16": "bf16",
    "bf16": "bf16",
    "float16": "fp16",
    "fp16": "fp16",
    "half": "fp16",
    "float32": "fp32",
    "fp32": "fp32",
    "float": "fp32",
}
"""Spellings of parameter dtypes, normalised to bf16 / fp16 / fp32."""


def dtype_name(text: str) -> str:
    """bfloat16 → bf16, float32 → fp32; anything else unchanged."""
    return DTYPES.get(text.strip().lower(), text)


def parse_int(text: str) -> int | None:
    """A decimal integer as the frameworks' argparse reads it (`int()`), or None."""
    try:
        return int(text.strip(), 10)
    except ValueError:
        return None


def parse_float(text: str) -> float | None:
    """A finite decimal number as argparse's `float` reads it (`0.0`, `1e-1`), or None."""
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


def parse_int_list(text: str) -> list[int] | None:
    """`7,7,7,7` → [7, 7, 7, 7] (MindSpeed-LLM --num-layer-list), or None."""
    items = [parse_int(item) for item in text.split(",")]
    if not items or any(item is None for item in items):
        return None
    return [item for item in items if item is not None]
