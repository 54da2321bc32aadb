"""Where a request to see something leads: a rank, a finding's evidence, a timeline line.

Each function returns the screen to push (or a note for the user), so the app only routes.
"""

from __future__ import annotations

from msrunwatch.judge.model import Finding, RankReport, Report, Status
from msrunwatch.report import fmt
from msrunwatch.tui.screens.rank_detail import RankDetail
from msrunwatch.tui.screens.timeline import TimelineScreen
from msrunwatch.tui.timeline import Entry, LogRef


def _log_of(report: Report, path: str, rank: int | None) -> RankReport:
    """The rank whose log is `path`, or a stand-in for the scheduler's or msrun's log."""
    for r in report.ranks:
        if r.file and fmt.join_path(r.log_dir, r.file) == path:
            return r
    return RankReport(-1 if rank is None else rank, None, path, Status.UNKNOWN)


def rank(report: Report, number: int) -> RankDetail | None:
    """A rank's detail, opened at its first fault (or its end)."""
    found = next((r for r in report.ranks if r.rank == number), None)
    return None if found is None else RankDetail(found, report.findings)


def evidence(report: Report, finding: Finding) -> RankDetail | str:
    """The log a finding was first seen in, at that line."""
    o = next((o for o in finding.occurrences if o.file), None)
    if o is None or o.file is None:
        return "this finding is about the run as a whole: no line to show"
    path = fmt.join_path(o.log_dir, o.file)
    return RankDetail(_log_of(report, path, o.rank), report.findings, line=o.line)


def timeline_line(report: Report, entry: Entry) -> RankDetail:
    """A timeline line in its own log (msrun's console is no rank's log, whichever rank its
    line is about)."""
    return RankDetail(_log_of(report, entry.path, None), report.findings, line=entry.line)


def timeline(report: Report) -> TimelineScreen | str:
    """Every rank's log, and the scheduler's (or msrun's) logs the findings point at; it
    opens at the root cause's line."""
    refs = {
        fmt.join_path(r.log_dir, r.file): LogRef(r.rank, fmt.join_path(r.log_dir, r.file))
        for r in report.ranks
        if r.file
    }
    about: dict[str, dict[int, int]] = {}
    for f in report.findings:
        for o in f.occurrences:
            path = fmt.join_path(o.log_dir, o.file) if o.file else ""
            if path and path not in refs:  # a rank-less file: the scheduler's, msrun's
                if o.rank is not None and o.line:
                    about.setdefault(path, {})[o.line] = o.rank
                else:
                    about.setdefault(path, {})
    for path, lines in about.items():
        refs[path] = LogRef(None, path, tuple(sorted(lines.items())))
    c = report.root_cause
    start = (fmt.join_path(c.log_dir, c.file), c.line) if c and c.file and c.line else None
    return TimelineScreen(list(refs.values()), start) if refs else "no logs yet"
