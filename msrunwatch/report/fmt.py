"""Small formatting helpers shared by the text and Markdown reports."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable

from msrunwatch.judge.model import Finding, Occurrence, RankReport, Report
from msrunwatch.read.timestamps import clock, iso
from msrunwatch.rules.template import rank_ranges

ANSI = {
    "red": "31",
    "green": "32",
    "yellow": "33",
    "magenta": "35",
    "cyan": "36",
    "bold": "1",
    "dim": "2",
}
STATUS_COLOR = {
    "failed": "red",
    "killed": "magenta",
    "timed-out": "yellow",
    "stalled": "yellow",
    "finished": "green",
    "training": "cyan",
    "compiling": "cyan",
}
OUTCOME_COLOR = {"failed": "red", "ok": "green", "running": "cyan", "unknown": "yellow"}
SEVERITY_COLOR = {"error": "red", "warning": "yellow", "info": "dim"}


class Style:
    """ANSI colour when enabled, plain text otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, color: str | None) -> str:
        if not self.enabled or not color:
            return text
        return f"\x1b[{ANSI[color]}m{text}\x1b[0m"


def where(o: Occurrence | None) -> str:
    """`dir/file:line` as a user would open it."""
    if o is None or o.file is None:
        return "(no log)"
    return where_path(o.log_dir, o.file, o.line)


def when(seconds: float | None, exact: bool) -> str:
    """`05:16:37.900`, or `~05:16:37.900` when dated by the line before it."""
    if seconds is None:
        return ""
    return clock(seconds) if exact else "~" + clock(seconds)


def size(nbytes: int) -> str:
    """Human-readable byte count."""
    value = float(nbytes)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def ranks_text(ranks: Iterable[int]) -> str:
    items = list(ranks)
    if not items:
        return "no rank"
    word = "rank" if len(items) == 1 else "ranks"
    return f"{word} {rank_ranges(items)}"


def megabytes(value: int | None) -> str:
    return "-" if value is None else str(value)


def loss(value: float | None) -> str:
    if value is None:
        return "-"
    if math.isnan(value) or math.isinf(value):
        return str(value)
    return f"{value:.4g}"


def compile_seconds(r: RankReport) -> str:
    c = r.compile
    if c is None or not (c.total_ms or c.count or c.in_progress):
        return "-"
    if c.in_progress and not c.total_ms:
        return "running"
    text = f"{c.total_ms / 1000:.2f}s"
    return f"{c.count}x {text}" if c.count > 1 else text


def step(r: RankReport) -> str:
    return "-" if r.progress is None else str(r.progress.step)


def first_error(r: RankReport) -> str:
    e = r.first_error
    if e is None:
        return "-"
    path = os.path.join(r.log_dir or "", e.file) if r.log_dir else e.file
    return f"{e.category} {path}:{e.line}"


def time_span(report: Report) -> str:
    times = [t for r in report.ranks for t in (r.first_time, r.last_time) if t is not None]
    if not times:
        return ""
    start = iso(min(times)) or ""
    return f"{start[:10]} {clock(min(times))} - {clock(max(times))}"


def headline(report: Report) -> str:
    """One sentence: the verdict."""
    c = report.root_cause
    counts: dict[str, int] = {}
    for r in report.ranks:
        counts[r.status.value] = counts.get(r.status.value, 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda kv: -kv[1]))
    if c is not None:
        first = "failed first" if len(c.ranks) == 1 else "failed"
        return f"{ranks_text(c.ranks)} {first}: {c.category} ({summary})"
    if report.outcome == "ok":
        return f"no faults; {summary}"
    if report.outcome == "running":
        return f"no faults so far; {summary}"
    return summary or "no ranks found"


def where_path(log_dir: str | None, file: str | None, line: int | None) -> str:
    """`dir/file:line` from parts."""
    if file is None:
        return "-"
    path = os.path.join(log_dir, file) if log_dir else file
    return f"{path}:{line}" if line else path


def about(f: Finding) -> str:
    """Whom a finding is about: its ranks, else the scheduler or msrun, else the whole run."""
    if f.ranks:
        return ranks_text(f.ranks)
    first = f.first
    return "scheduler/msrun" if first is not None and first.file is not None else "the run"
