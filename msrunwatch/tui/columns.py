"""The rank table's columns: title, width, alignment, priority, and how each cell reads
and sorts.

A cell is computed from a rank's `RankReport` and its silence (seconds since its log last
grew), only when the row is drawn. A column with `shown` set appears once some rank has
data for it, so a CPU run has no memory columns and a DryRun no loss. When the terminal
is too narrow for every column, the ones with the highest `priority` number go first
(HOST before the memory columns when every rank is on the same host).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Optional, Union

from msrunwatch.core.compat import dataclass
from msrunwatch.judge.model import RankReport
from msrunwatch.report import fmt
from msrunwatch.tui import cells

SortValue = Union[float, str]
Text = Callable[[RankReport, Optional[float]], str]
Sort = Callable[[RankReport, Optional[float]], Optional[SortValue]]

GAP = 1
"""Blank cells between two columns."""
MIN_ERROR_WIDTH = 11
"""The title's width: FIRST ERROR is never narrower."""
MAX_ERROR_WIDTH = 100
"""FIRST ERROR is as wide as its longest text up to this (wider than the screen: scroll)."""
HOST_PRIORITY = 9
LONE_HOST_PRIORITY = 15
"""HOST when every rank is on the same host: the first column to go."""
EXIT_PRIORITY = 4
"""EXIT (the exit code msrun's console or the scheduler gave, as triage shows it) goes after
the memory and phase columns on a narrow terminal, before STEP and SILENT."""


@dataclass(frozen=True, slots=True)
class Column:
    """One column of the rank table."""

    key: str
    title: str
    width: int
    text: Text
    sort: Sort
    right: bool = False
    shown: Callable[[RankReport], bool] | None = None
    """When set, the column appears once this is true of some rank."""
    priority: int = 0
    """Lower is kept longer on a narrow terminal (0: always shown)."""


def _float(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else value


def _compile_ms(r: RankReport, _: float | None) -> float | None:
    c = r.compile
    return None if c is None or not (c.total_ms or c.count) else c.total_ms


def _step(r: RankReport, _: float | None) -> float | None:
    return None if r.progress is None else float(r.progress.step)


def _loss(r: RankReport, _: float | None) -> float | None:
    return None if r.progress is None else _float(r.progress.loss)


def _step_ms(r: RankReport, _: float | None) -> float | None:
    return None if r.progress is None else _float(r.progress.step_time_ms)


def _mem(name: str) -> Callable[[RankReport], int | None]:
    def get(r: RankReport) -> int | None:
        return None if r.memory is None else getattr(r.memory, name)

    return get


_PEAK, _ACTUAL, _DEVICE = _mem("peak_used_mb"), _mem("peak_actual_mb"), _mem("device_mb")
_LIMIT = _mem("used_mb")


def _mb_column(
    key: str, title: str, get: Callable[[RankReport], int | None], priority: int
) -> Column:
    return Column(
        key,
        title,
        8,
        lambda r, _: fmt.mib(get(r)),
        lambda r, _: None if get(r) is None else float(get(r) or 0),
        right=True,
        shown=lambda r: r.memory is not None,
        priority=priority,
    )


def _mem_bar(r: RankReport, _: float | None) -> str:
    ratio = cells.memory_ratio(r)
    return "" if ratio is None else f"{cells.bar(ratio)} {min(ratio, 9.99):>4.0%}"


def _error_time(r: RankReport, _: float | None) -> float | None:
    """Earliest error first; an error with no time after those with one."""
    e = r.first_error
    return None if e is None else e.time if e.time is not None else float("inf")


COLUMNS: tuple[Column, ...] = (
    Column(
        "rank",
        "RANK",
        5,
        lambda r, _: cells.printable(fmt.rank_cell(r)),
        lambda r, _: float(r.rank),
        right=True,
    ),
    Column(
        "host",
        "HOST",
        4,
        lambda r, _: cells.printable(r.host or "-"),
        lambda r, _: r.host,
        shown=lambda r: r.host is not None,
        priority=HOST_PRIORITY,
    ),
    Column(
        "status",
        "STATUS",
        9,
        lambda r, _: r.status.value,
        lambda r, _: float(cells.status_rank(r.status)),
    ),
    Column(
        "exit",
        "EXIT",
        4,
        lambda r, _: "-" if r.exit_code is None else str(r.exit_code),
        lambda r, _: None if r.exit_code is None else float(r.exit_code),
        right=True,
        shown=lambda r: r.exit_code is not None,
        priority=EXIT_PRIORITY,
    ),
    Column(
        "phase",
        "PHASE",
        8,
        lambda r, _: cells.phase(r),
        lambda r, _: float(cells.PHASES.index(cells.phase(r))),
        priority=6,
    ),
    Column(
        "compile",
        "COMPILE",
        9,
        lambda r, _: fmt.compile_seconds(r),
        _compile_ms,
        right=True,
        shown=lambda r: r.compile is not None,
        priority=11,
    ),
    Column(
        "step",
        "STEP",
        7,
        lambda r, _: fmt.step(r),
        _step,
        right=True,
        shown=lambda r: r.progress is not None,
        priority=4,
    ),
    Column(
        "loss",
        "LOSS",
        8,
        lambda r, _: fmt.loss(r.progress.loss if r.progress else None),
        _loss,
        right=True,
        shown=lambda r: r.progress is not None and r.progress.loss is not None,
        priority=7,
    ),
    Column(
        "step_ms",
        "STEP MS",
        8,
        lambda r, _: cells.millis(r.progress.step_time_ms if r.progress else None),
        _step_ms,
        right=True,
        shown=lambda r: r.progress is not None and r.progress.step_time_ms is not None,
        priority=10,
    ),
    _mb_column("peak", "PEAK", _PEAK, 13),
    _mb_column("actual", "ACTUAL", _ACTUAL, 8),
    _mb_column("limit", "LIMIT", _LIMIT, 12),
    _mb_column("device", "DEVICE", _DEVICE, 14),
    Column(
        "mem",
        "OF LIMIT",
        cells.BAR_WIDTH + 5,
        _mem_bar,
        lambda r, _: cells.memory_ratio(r),
        shown=lambda r: r.memory is not None,
        priority=5,
    ),
    Column(
        "silent", "SILENT", 6, lambda r, q: cells.ago(q), lambda r, q: q, right=True, priority=3
    ),
    Column(
        "error",
        "FIRST ERROR",
        MIN_ERROR_WIDTH,
        lambda r, _: cells.printable(cells.first_error(r)),
        _error_time,
    ),
)
"""Every column, in display order; FIRST ERROR takes the width that is left."""

BY_KEY = {c.key: c for c in COLUMNS}
SORTABLE = tuple(c.key for c in COLUMNS)
