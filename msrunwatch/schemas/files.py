"""The data files shipped beside this module (schemas, variable aliases), read from disk:
`importlib.resources` would cost every start its zipfile and tempfile imports."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def read(name: str) -> str:
    """The text of one shipped data file."""
    return (HERE / name).read_text(encoding="utf-8")
