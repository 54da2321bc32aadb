"""What is new in a verdict since the previous one: the findings to announce, the ranks
whose status changed. Shared by the live engine and the cluster view."""

from __future__ import annotations

from msrunwatch.judge.model import Finding, Report, Status


class Changes:
    """Remembers the previous verdict's findings and statuses."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], tuple[int, ...]] = {}
        self.previous: Report | None = None

    def new_findings(self, report: Report) -> tuple[Finding, ...]:
        """Findings not seen before, or spread to more ranks; a finding the current report no
        longer has is forgotten, so a restarted run failing the same way is announced again."""
        fresh, current = [], {}
        for f in report.findings:
            key = (f.rule, f.fingerprint)
            before = self._seen.get(key)
            if before is None or not set(f.ranks) <= set(before):
                fresh.append(f)
            current[key] = f.ranks
        self._seen = current
        return tuple(fresh)

    def status_changes(self, report: Report) -> tuple[tuple[int, Status | None, Status], ...]:
        """(rank, old status or None for a new rank, new status), against the previous."""
        before = {r.rank: r.status for r in self.previous.ranks} if self.previous else {}
        return tuple(
            (r.rank, before.get(r.rank), r.status)
            for r in report.ranks
            if before.get(r.rank) is not r.status
        )
