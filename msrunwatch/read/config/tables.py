"""The config domain's data tables (vocabularies of model families, sizing rules, schemas),
read once from the YAML files in `data/` beside this module."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from msrunwatch.core.yamlload import load

DATA = Path(__file__).resolve().parent / "data"


@functools.cache
def table(name: str) -> Any:
    """The parsed `data/<name>.yaml`."""
    data, _ = load((DATA / f"{name}.yaml").read_text(encoding="utf-8"))
    return data
