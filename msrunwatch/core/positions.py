"""Where each value of a parsed document came from (line, column), apart from the parser:
what reads positions (the rule loader, from a cached document too) need not import PyYAML."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

Path_ = tuple[Union[str, int], ...]
"""Keys and indexes from a document's root to one of its values."""


@dataclass
class Positions:
    """Where each value (and each mapping key) of a document starts."""

    values: dict[Path_, tuple[int, int]] = field(default_factory=dict)
    keys: dict[Path_, tuple[int, int]] = field(default_factory=dict)

    def of(self, path: Path_, key: bool = False) -> tuple[int, int]:
        """Position of path, or of its nearest ancestor that has one (inside an alias, the
        alias itself)."""
        table = self.keys if key else self.values
        probe = tuple(path)
        while probe:
            if probe in table:
                return table[probe]
            probe = probe[:-1]
        return self.values.get((), (1, 1))
