"""Lookup tables: one rule reads a whole catalogue (CANN's error codes) from a data file.

A rule with `lookup: {table: FILE, key: CAPTURE}` reads FILE (tab-separated, beside the rule
file, a header row first) once; when the rule matches, the row whose first column equals the
capture gives the finding its category, role, title and hint, and every column is a variable
of the message. A key the table lacks keeps the rule's own. A YAML table
(`lookup: {table: NAME.table.yaml, key: CAPTURE}`, rules.searchtable) is searched instead:
the first entry whose pattern is found in the capture gives the row.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from msrunwatch.core.compat import zip_strict
from msrunwatch.core.errors import RuleError
from msrunwatch.rules.searchtable import SearchTable, read_table

OVERRIDES = ("category", "role", "title", "hint")
"""Columns that replace the rule's own fields for a finding from that row."""
MAX_ROWS = 100_000
MAX_BYTES = 16 << 20


@dataclass(frozen=True)
class Lookup:
    """A rule's table, loaded: key -> row (column -> value)."""

    table: str
    key: str
    rows: Mapping[str, Mapping[str, str]]
    search: SearchTable | None = None
    """A search table (rows is then empty)."""

    def row(self, value: str | None) -> Mapping[str, str] | None:
        if value is None:
            return None
        return self.search.first_found(value) if self.search else self.rows.get(value)

    @property
    def columns(self) -> frozenset[str]:
        """The names a row may set (message variables)."""
        if self.search is not None:
            return self.search.columns
        return frozenset(next(iter(self.rows.values()), {}))


class TableRows(Mapping[str, Mapping[str, str]]):
    """A TSV table's rows, read when first asked for: the built-in pack's CANN table (170
    KB) was parsed by every cold start, 15 M instructions, while a run whose lines carry no
    CANN code never looks a row up. Only the built-in pack's tables are read this way
    (checked by `rules check` in CI); a user's is read while the rule loads."""

    def __init__(self, path: Path, rule: str) -> None:
        self.path = path
        self.rule = rule
        self._rows: dict[str, dict[str, str]] | None = None

    def _loaded(self) -> dict[str, dict[str, str]]:
        if self._rows is None:
            self._rows = load_table(self.path, self.rule)
        return self._rows

    def __getitem__(self, key: str) -> Mapping[str, str]:
        return self._loaded()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())

    def __repr__(self) -> str:
        return f"TableRows({str(self.path)!r}, {self.rule!r})"


def load_table(path: Path, rule: str) -> dict[str, dict[str, str]]:
    """Read a TSV table; a broken one is a RuleError naming the file and line."""
    lines = read_table(path, rule, "lookup table", MAX_BYTES).splitlines()
    if not lines or len(lines) > MAX_ROWS:
        raise RuleError(path, "lookup table is empty or has too many rows", rule=rule)
    header = lines[0].split("\t")
    rows: dict[str, dict[str, str]] = {}
    for number, line in enumerate(lines[1:], 2):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) != len(header):
            message = f"row has {len(cells)} columns, the header {len(header)}"
            raise RuleError(path, message, number, 1, rule)
        rows[cells[0]] = dict(zip_strict(header, cells))
    return rows
