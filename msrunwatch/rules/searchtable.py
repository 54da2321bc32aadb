r"""Search tables: the second stage of classification. A fallback rule (a generic Python
exception, an ERROR line no rule knows) reads a table of what such a line may carry: a
CANN/ACL return code, an exception class, an errno name, number or text, a key phrase. The
first entry whose pattern is found in the rule's key capture gives the finding its category
(and title, hint) and names what the line was classified from; the message keeps the line.

A value is searched as written and, when it has any, without its sentence stops: a full stop
that no letter or digit follows ends a sentence and is not part of the code or word before it
("runtime result = 207000." carries 207000, as "207000.[FUNC:...]" does), while one that a
letter or digit follows continues it (207000.5, libfoo.so). So an entry's pattern may bound a
code with `(?![\w.])` and still find it at the end of a sentence.

A table is YAML beside the rule (`<name>.table.yaml`): `entries`, in the order they are
tried, each with `match` (a regex, searched), `category`, `classified_from`, `source` (where
the fact comes from, with the version) and optionally `role`, `title`, `hint`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msrunwatch.core.errors import RuleError
from msrunwatch.core.fileio import FileTooLarge, read_capped
from msrunwatch.rules.prefilter import analysed
from msrunwatch.rules.programs import VERSION1, regex_compiled
from msrunwatch.rules.rulecache import document

if TYPE_CHECKING:
    import regex

TABLE_SUFFIX = ".table.yaml"
REQUIRED = ("match", "category", "classified_from", "source")
ALLOWED = frozenset({*REQUIRED, "role", "title", "hint"})
MAX_BYTES = 1 << 20
MAX_ENTRIES = 10_000

Entry = tuple["regex.Pattern[str]", Mapping[str, str]]

_SENTENCE_STOP = r"\.(?!\w)"
"""A full stop no letter or digit follows (compiled on first use, through rules.programs)."""


def readings(value: str) -> tuple[str, ...]:
    """The texts a value is searched in: as written and, when it has sentence stops (a full
    stop no letter or digit follows), without them; a stop ends a sentence, not a code."""
    bare = regex_compiled(_SENTENCE_STOP).sub("", value)
    return (value,) if bare == value else (value, bare)


@dataclass(frozen=True)
class SearchTable:
    """A search table, loaded: its entries' patterns and rows, in order. A pattern is
    compiled when a value first needs it (a cold start reads every rule's table): an entry
    whose required literals (rules.prefilter) a value lacks is passed over without it, so a
    value matching none compiles few or none (one pattern of them all cost 14 ms)."""

    patterns: tuple[str, ...]
    rows: tuple[Mapping[str, str], ...]

    @cached_property
    def _patterns(self) -> list[regex.Pattern[str] | None]:
        """Each entry's pattern, compiled when a value first needs it (entries are tried
        in order, and most values are found by one of the first)."""
        return [None] * len(self.patterns)

    @cached_property
    def _needs(self) -> list[tuple[tuple[str, ...], bool] | None]:
        """Literals one of which a value must hold for each entry to be found in it (and
        whether case is ignored), as the rules' prefilter works them out; None: unknown."""
        return [analysed(p)[0] for p in self.patterns]

    def _entry(self, index: int) -> regex.Pattern[str]:
        pattern = self._patterns[index]
        if pattern is None:
            pattern = self._patterns[index] = _compile(self.patterns[index])
        return pattern

    def _may_hold(self, index: int, value: str, lowered: str) -> bool:
        """Whether entry `index` can be found in value: not when value lacks every literal
        it needs (a value that is not ASCII is left to the pattern when case is ignored)."""
        need = self._needs[index]
        if need is None:
            return True
        literals, fold = need
        if not fold:
            return any(literal in value for literal in literals)
        return not value.isascii() or any(literal in lowered for literal in literals)

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple((self._entry(i), row) for i, row in enumerate(self.rows))

    def first_found(self, value: str) -> Mapping[str, str] | None:
        """The row of the first entry whose pattern is found in one of value's readings (an
        entry whose literals a reading lacks is not compiled, nor searched in it)."""
        texts = [(text, text.lower()) for text in readings(value)]
        for index, row in enumerate(self.rows):
            for text, lowered in texts:
                if self._may_hold(index, text, lowered) and self._entry(index).search(text):
                    return row
        return None

    @property
    def columns(self) -> frozenset[str]:
        """The names a row may set (message variables)."""
        return frozenset(k for row in self.rows for k in row)


def read_table(path: Path, rule: str, what: str, limit: int) -> str:
    """A table's text; unreadable or too large, a RuleError naming the file."""
    try:
        return read_capped(path, limit).decode("utf-8")
    except FileTooLarge:
        raise RuleError(path, f"{what} is larger than {limit >> 10} KiB", rule=rule) from None
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise RuleError(path, f"cannot read {what}: {why}", rule=rule) from None


def _compile(pattern: str) -> regex.Pattern[str]:
    return regex_compiled(pattern, VERSION1)  # type: ignore[no-any-return]


def load_search_table(path: Path, rule: str, check: bool = True) -> SearchTable:
    """Read a search table; a broken one is a RuleError naming the file and line. `check`:
    compile every pattern now (a user's table; the built-in pack's is checked in CI)."""
    data, pos = document(path, lambda: read_table(path, rule, "search table", MAX_BYTES))
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries or len(entries) > MAX_ENTRIES:
        raise RuleError(path, "search table needs a non-empty list `entries`", rule=rule)
    rows = [_entry(path, rule, e, pos.of(("entries", i)), check) for i, e in enumerate(entries)]
    return SearchTable(tuple(r["match"] for r in rows), tuple(_without_match(r) for r in rows))


def _without_match(row: Mapping[str, str]) -> Mapping[str, str]:
    return {k: v for k, v in row.items() if k != "match"}


def _entry(
    path: Path, rule: str, entry: Any, where: tuple[int, int], check: bool
) -> dict[str, str]:
    """One entry, checked: its fields, and (`check`) its pattern."""
    line, col = where
    if not isinstance(entry, dict) or not all(isinstance(v, str) for v in entry.values()):
        raise RuleError(path, "an entry is a mapping of strings", line, col, rule)
    missing = [k for k in REQUIRED if not entry.get(k)]
    unknown = sorted(set(entry) - ALLOWED)
    if missing or unknown:
        said = f"missing {', '.join(missing)}" if missing else f"unknown {', '.join(unknown)}"
        raise RuleError(path, f"entry: {said}", line, col, rule)
    if not check:
        return entry
    import regex  # a table being checked: its errors are regex's

    try:
        _compile(entry["match"])
    except regex.error as exc:
        raise RuleError(path, f"entry match is not a valid regex: {exc}", line, col, rule) from None
    return entry
