"""The rank table's model: rows in a plain list, which of them show, and in what order.

Nothing here knows about Textual. `apply` takes a tick's ranks and says which rows
changed; `order` is a list of row indices (filtered, then sorted), recomputed only when
rows change or the user changes the sort or filter, so a key press never walks the rows.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from msrunwatch.judge.model import RankReport, Status
from msrunwatch.tui import cells
from msrunwatch.tui.columns import BY_KEY, COLUMNS, LONE_HOST_PRIORITY, Column

_RANK_SPEC = re.compile(r"^\s*\d+(\s*-\s*\d+)?(\s*,\s*\d+(\s*-\s*\d+)?)*\s*,?\s*$")

MAX_HOST_WIDTH = 20
ALL = "all"
PROBLEMS = "problems"


def parse_ranks(spec: str) -> frozenset[int] | None:
    """`0-7, 12`: the ranks a filter names, or None when it is not a rank list."""
    if not _RANK_SPEC.match(spec):
        return None
    out: set[int] = set()
    for part in filter(None, (p.strip() for p in spec.split(","))):
        low, _, high = part.partition("-")
        start, end = int(low), int(high or low)
        out.update(range(min(start, end), max(start, end) + 1))
    return frozenset(out)


@dataclass
class Rows:
    """Every rank seen, and the view of them the user chose."""

    rows: list[RankReport] = field(default_factory=list)
    version: list[int] = field(default_factory=list)
    """Bumped whenever a row changes: what a row's cached rendering is checked against."""
    silence: dict[int, float] = field(default_factory=dict)
    silence_at: float = 0.0
    """Clock time at which `silence` was measured."""
    frozen: bool = False
    """Silences do not grow with the clock (the run ended: they are on the log's clock)."""
    reading: bool = False
    """The logs there were are still being read (the first catch-up): a file's age then is
    not yet its rank's silence (a finished run's ages switch to the log's clock once read)."""
    order: list[int] = field(default_factory=list)
    """Row indices shown, top to bottom."""
    sort_key: str = "rank"
    reverse: bool = False
    status_filter: str = ALL
    text_filter: str = ""
    _by_rank: dict[int, int] = field(default_factory=dict)
    _haystack: dict[int, tuple[int, str]] = field(default_factory=dict)
    _shown: set[str] = field(default_factory=set)
    host_width: int = 4
    hosts: set[str] = field(default_factory=set)
    error_width: int = 0
    """Cells of the longest FIRST ERROR text."""
    generation: int = 0
    """Bumped when the rows were rebuilt from scratch (row indices mean other ranks)."""

    def apply(
        self,
        ranks: Sequence[RankReport],
        silence: Mapping[int, float],
        at: float,
        frozen: bool = False,
        reading: bool = False,
    ) -> list[int]:
        """Take a tick's ranks; returns the indices of rows that changed or were added."""
        self.reading = reading
        if silence or frozen != self.frozen:
            self.silence, self.silence_at, self.frozen = dict(silence), at, frozen
        changed = self._merge(ranks)
        if len(self.rows) != len(ranks):  # a rank went away: a new run in the same directory
            self._reset()
            self.generation += 1
            changed = self._merge(ranks)
        return changed

    def _merge(self, ranks: Sequence[RankReport]) -> list[int]:
        changed: list[int] = []
        for r in ranks:
            i = self._by_rank.get(r.rank)
            if i is None:
                self._by_rank[r.rank] = i = len(self.rows)
                self.rows.append(r)
                self.version.append(0)
            elif self.rows[i] is r or self.rows[i] == r:
                continue
            else:
                self.rows[i] = r
                self.version[i] += 1
            changed.append(i)
            self._note_shown(r)
        return changed

    def _reset(self) -> None:
        self.rows, self.version, self._by_rank = [], [], {}
        self._haystack.clear()
        self._shown.clear()
        self.hosts.clear()
        self.host_width, self.error_width = 4, 0

    def _note_shown(self, r: RankReport) -> None:
        if r.host is not None:
            self.hosts.add(r.host)
            self.host_width = max(self.host_width, min(len(r.host), MAX_HOST_WIDTH))
        self.error_width = max(self.error_width, len(cells.first_error(r)))
        for c in COLUMNS:
            if c.shown is not None and c.key not in self._shown and c.shown(r):
                self._shown.add(c.key)

    def columns(self) -> list[Column]:
        """The columns some rank has data for (HOST least important when there is one)."""
        lone = len(self.hosts) <= 1
        return [
            dataclasses.replace(c, priority=LONE_HOST_PRIORITY) if c.key == "host" and lone else c
            for c in COLUMNS
            if c.shown is None or c.key in self._shown
        ]

    def quiet(self, i: int, now: float) -> float | None:
        """Seconds since row i's log last grew, as of `now`; None while reading."""
        base = None if self.reading else self.silence.get(self.rows[i].rank)
        if base is None or self.frozen:
            return base
        return base + max(now - self.silence_at, 0.0)

    def row_of(self, rank: int) -> int | None:
        return self._by_rank.get(rank)

    # -- the view ----------------------------------------------------------------------

    def statuses(self) -> list[str]:
        """Filters to cycle through: all, problems, then each status some rank has, worst first."""
        present = sorted({r.status for r in self.rows}, key=cells.status_rank)
        return [ALL, PROBLEMS, *(s.value for s in present)]

    def refilter(self, now: float) -> list[int]:
        """Recompute `order`; returns it."""
        keep = self._status_test()
        text = self.text_filter.strip().lower()
        ranks = parse_ranks(text) if text else None
        order = [
            i
            for i, r in enumerate(self.rows)
            if keep(r.status)
            and (
                not text or (r.rank in ranks if ranks is not None else text in self._search_text(i))
            )
        ]
        order.sort(key=lambda i: self.rows[i].rank)
        column = BY_KEY[self.sort_key]
        values = {i: column.sort(self.rows[i], self.quiet(i, now)) for i in order}
        present = [i for i in order if values[i] is not None]
        missing = [i for i in order if values[i] is None]
        present.sort(key=lambda i: values[i], reverse=self.reverse)  # type: ignore[arg-type,return-value]
        self.order = present + missing
        return self.order

    def _status_test(self) -> Callable[[Status], bool]:
        wanted = self.status_filter
        if wanted == ALL:
            return lambda s: True
        if wanted == PROBLEMS:
            return cells.is_problem
        return lambda s: s.value == wanted

    def _search_text(self, i: int) -> str:
        cached = self._haystack.get(i)
        if cached is not None and cached[0] == self.version[i]:
            return cached[1]
        r = self.rows[i]
        text = " ".join(
            (
                str(r.rank),
                r.host or "",
                r.status.value,
                cells.phase(r),
                cells.first_error(r),
                r.status_reason,
                r.file or "",
            )
        ).lower()
        self._haystack[i] = (self.version[i], text)
        return text
