"""How one value reads in a cell: short, fixed-width friendly, never raw log bytes."""

from __future__ import annotations

import math
import re

from msrunwatch.judge.model import RankReport, Status

BAR_WIDTH = 8
"""Cells in a memory bar (each cell holds eight steps)."""
_EIGHTHS = " ▏▎▍▌▋▊▉"
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|[\x00-\x08\x0a-\x1f\x7f\x9b]")

PROBLEMS = frozenset({Status.FAILED, Status.KILLED, Status.TIMED_OUT, Status.STALLED})
"""Statuses the "problems" filter keeps."""
RUNNING = frozenset({Status.STARTING, Status.COMPILING, Status.TRAINING})

STATUS_STYLE = {
    Status.FAILED: "bold $text-error",
    Status.KILLED: "$text-accent",
    Status.TIMED_OUT: "$text-warning",
    Status.STALLED: "bold $text-warning",
    Status.FINISHED: "$text-success",
    Status.TRAINING: "$text-primary",
    Status.COMPILING: "$text-secondary",
    Status.STARTING: "$text-muted",
    Status.UNKNOWN: "$text-muted",
}
"""Status colours as Content styles (the rank table keeps the same in its CSS)."""
SEVERITY_STYLE = {"error": "bold $text-error", "warning": "$text-warning", "info": "$text-muted"}

STATUS_ORDER = {
    s: i
    for i, s in enumerate(
        (
            Status.FAILED,
            Status.STALLED,
            Status.TIMED_OUT,
            Status.KILLED,
            Status.UNKNOWN,
            Status.STARTING,
            Status.COMPILING,
            Status.TRAINING,
            Status.FINISHED,
        )
    )
}
"""Worst first: sorting by status puts the ranks to look at on top."""


def printable(text: str) -> str:
    """Log text made safe for a terminal: escapes and control characters dropped, tabs spaced."""
    return _CONTROL.sub("", text.replace("\n", " ")).expandtabs(4)


def ago(seconds: float | None) -> str:
    """`0.4s`, `12s`, `3m05s`, `2h10m`, `3d04h`: how long since something happened."""
    if seconds is None:
        return "-"
    if seconds < 10:
        return f"{max(seconds, 0.0):.1f}s"
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    if whole < 86400:
        return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
    return f"{whole // 86400}d{whole % 86400 // 3600:02d}h"


def millis(value: float | None) -> str:
    """A step time in milliseconds: three significant figures at most."""
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}"


PHASES = ("-", "init", "compile", "compiled", "train", "done")
"""Phases in the order a rank goes through them."""


def phase(r: RankReport) -> str:
    """Where a rank got to, whatever its status: init, compile, compiled, train, done."""
    if r.status is Status.FINISHED:
        return "done"
    if r.progress is not None:
        return "train"
    c = r.compile
    if c is not None and c.in_progress:
        return "compile"
    if c is not None and c.count:
        return "compiled"
    return "init" if r.lines or r.first_time is not None else "-"


def first_error(r: RankReport) -> str:
    """`oom worker_3.log:24`: the category and where, the file relative to its log directory."""
    e = r.first_error
    return "" if e is None else f"{e.category} {e.file}:{e.line}"


def memory_ratio(r: RankReport) -> float | None:
    """Actual peak over device memory, when both are known."""
    m = r.memory
    if m is None or not m.device_mb or m.peak_actual_mb is None:
        return None
    return m.peak_actual_mb / m.device_mb


def bar(ratio: float, width: int = BAR_WIDTH) -> str:
    """A proportion as a bar of block characters, in eighths of a cell."""
    steps = round(min(max(ratio, 0.0), 1.0) * width * 8)
    full, part = divmod(steps, 8)
    text = "█" * full + (_EIGHTHS[part] if part else "")
    return text.ljust(width)
