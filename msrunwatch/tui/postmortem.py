"""Ages after the run: measured on the log's own clock, never by file modification times.

A run copied from a cluster (or read days later) has file times of the copy; how long
before the run's last line a rank went quiet is what tells the story of a post mortem.
"""

from __future__ import annotations

from msrunwatch.judge.model import Report


def log_silence(report: Report) -> dict[int, float]:
    """Seconds from each rank's last line to the last line of any rank (log timestamps)."""
    lasts = [r.last_time for r in report.ranks if r.last_time is not None]
    if not lasts:
        return {}
    end = max(lasts)
    return {r.rank: end - r.last_time for r in report.ranks if r.last_time is not None}


def last_line(report: Report) -> float | None:
    """The log time of the run's last line."""
    lasts = [r.last_time for r in report.ranks if r.last_time is not None]
    return max(lasts) if lasts else None
