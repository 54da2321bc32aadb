"""Ages after the run: measured on the log's own clock, never by file modification times.

A run copied from a cluster (or read days later) has file times of the copy; how long
before the run's last line a rank went quiet is what tells the story of a post mortem.
"""

from __future__ import annotations

from msrunwatch.judge.model import Report
from msrunwatch.report import fmt


def log_silence(report: Report) -> dict[int, float]:
    """Seconds from each rank's last line to the run's last line (last_line): the header's
    `last line` and the SILENT column measure to the same moment."""
    end = last_line(report)
    if end is None:
        return {}
    return {r.rank: max(end - r.last_time, 0.0) for r in report.ranks if r.last_time is not None}


def last_line(report: Report) -> float | None:
    """The log time of the run's last line, as triage's `log times` ends: the ranks' logs,
    and the scheduler's and msrun's lines the verdict cites (the trial's N8: the header said
    `last line 18:40:52.539` under a verdict citing the scheduler at 18:41:22)."""
    times = fmt.log_times(report)
    return max(times) if times else None
