"""The rank table's drawing: one Strip per row, cached until the row or its silence changes.

Cells are formatted here, only for rows that are drawn, with fixed column widths, so
drawing never measures the data. Styles come from the table's component classes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from msrunwatch.core.compat import zip_strict
from msrunwatch.judge.model import RankReport, Status
from msrunwatch.tui import cells
from msrunwatch.tui.columns import GAP, MAX_ERROR_WIDTH, MIN_ERROR_WIDTH, Column

ERROR_TARGET = 40
"""FIRST ERROR (priority 2) is given up to this many cells before less important columns."""
QUIET_WARN_S = 60.0
"""A running rank silent this long gets its SILENT cell in the warning colour."""
READING = "…"
"""SILENT while the first catch-up reads the logs: a file's age is not its rank's silence."""
Layout = list[tuple[Column, int]]


def fit(columns: Sequence[Column], host_width: int, error_width: int, width: int) -> list[Column]:
    """The columns that fit in `width` beside FIRST ERROR's text (up to ERROR_TARGET cells),
    dropping the highest `priority` number first; priority 0 and FIRST ERROR always stay."""
    kept = list(columns)
    error = min(max(error_width, MIN_ERROR_WIDTH), ERROR_TARGET)

    def needed() -> int:
        cells_ = sum(host_width if c.key == "host" else c.width for c in kept[:-1])
        return cells_ + GAP * len(kept) + error

    while needed() > width:
        droppable = [c for c in kept[:-1] if c.priority > 0]
        if not droppable:
            break
        kept.remove(max(droppable, key=lambda c: c.priority))
    return kept


def pad(text: str, width: int, right: bool = False) -> str:
    """Pad or cut to exactly `width` cells."""
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…" if width > 1 else set_cell_size(text, width)
    return set_cell_size(text, width) if not right else " " * (width - cell_len(text)) + text


class RowPainter:
    """Strips for the column titles and for each row, at the current column widths."""

    def __init__(self, style: Callable[[str], Style]) -> None:
        self.style = style
        """A component style by its short name (`failed`, `header`, ...)."""
        self.layout: Layout = []
        self.total = 0
        """Width of a whole row, in cells."""
        self.root_ranks: frozenset[int] = frozenset()
        self._strips: dict[int, tuple[int, str, Strip]] = {}
        self._header: tuple[str, bool, Strip] | None = None

    def relayout(
        self,
        columns: Sequence[Column],
        host_width: int,
        error_width: int,
        width: int,
        every: bool = False,
    ) -> bool:
        """Fit the columns to `width`: the least important go while the rest do not fit
        (unless `every`); FIRST ERROR takes what is left, its text cut in the middle so
        that its file:line stays in view, or with `every` its longest text (the table is
        then wider than the screen: scroll). True if the columns moved."""
        kept = list(columns) if every else fit(columns, host_width, error_width, width)
        widths = [host_width if c.key == "host" else c.width for c in kept]
        fixed = sum(widths[:-1]) + GAP * len(kept)
        longest = min(error_width, MAX_ERROR_WIDTH) if every else 0
        widths[-1] = max(MIN_ERROR_WIDTH, width - fixed, longest)
        layout = list(zip_strict(kept, widths))
        if layout == self.layout:
            return False
        self.layout, self.total = layout, fixed + widths[-1]
        self.clear()
        return True

    @property
    def frozen(self) -> int:
        """Cells of the first column (RANK) and its gap: they stay when scrolling sideways."""
        return self.layout[0][1] + GAP if self.layout else 0

    def clear(self) -> None:
        """Forget every cached Strip (new widths, styles or root cause)."""
        self._strips.clear()
        self._header = None

    def drop(self, row: int) -> None:
        """Forget one row's Strip: it changed."""
        self._strips.pop(row, None)

    def header(self, sort_key: str, reverse: bool) -> Strip:
        """The column titles, the sort column marked ▲ or ▼."""
        if self._header is None or self._header[:2] != (sort_key, reverse):
            style = self.style("header")
            segments = []
            for column, width in self.layout:
                title = column.title + (("▼" if reverse else "▲") if column.key == sort_key else "")
                segments.append(Segment(pad(title, width, column.right) + " " * GAP, style))
            self._header = (sort_key, reverse, Strip(segments, self.total))
        return self._header[2]

    def row(
        self, i: int, r: RankReport, version: int, quiet: float | None, reading: bool = False
    ) -> Strip:
        """Row i's Strip, from the cache when neither the row nor its SILENT cell changed;
        SILENT reads `…` while the logs there were are still being read (not yet known)."""
        silent = READING if reading else cells.ago(quiet)
        cached = self._strips.get(i)
        if cached is not None and cached[0] == version and cached[1] == silent:
            return cached[2]
        segments: list[Segment] = []
        for column, width in self.layout:
            if column.key == "mem":
                segments += self._bar(r, width)
            else:
                if column.key == "error":  # its file:line stays whole (trial N15)
                    said = cells.printable(cells.first_error_within(r, width))
                else:
                    said = silent if column.key == "silent" else column.text(r, quiet)
                if reading and column.key == "status" and r.status is Status.UNKNOWN:
                    said = "…"  # not read yet (the header counts them so)
                text = pad(said, width, column.right)
                segments.append(Segment(text, self._cell_style(column.key, r, quiet)))
            segments.append(Segment(" " * GAP))
        strip = Strip(segments, self.total)
        self._strips[i] = (version, silent, strip)
        return strip

    def _cell_style(self, key: str, r: RankReport, quiet: float | None) -> Style | None:
        if key == "status":
            return self.style(r.status.value) if r.status.value in cells.STATUS_STYLES else None
        if key == "rank" and r.rank in self.root_ranks:
            return self.style("root")
        if key == "error":
            return self.style("error")
        if key == "silent":
            running = cells.is_running(r.status)
            return self.style("warn" if running and (quiet or 0) >= QUIET_WARN_S else "muted")
        if key == "loss" and r.progress is not None and r.progress.loss is not None:
            return self.style("error") if not abs(r.progress.loss) < float("inf") else None
        return None

    def _bar(self, r: RankReport, width: int) -> list[Segment]:
        ratio = cells.memory_ratio(r)
        if ratio is None:
            return [Segment(" " * width)]
        name = "bar-ok" if ratio < 0.8 else "bar-high" if ratio < 0.95 else "bar-full"
        label = pad(f" {min(ratio, 9.99):.0%}", width - cells.BAR_WIDTH, True)
        return [Segment(cells.bar(ratio), self.style(name)), Segment(label)]
