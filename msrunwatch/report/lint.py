"""`msrunwatch check`'s text format: one `path:line: severity rule: message` line per finding."""

from __future__ import annotations

from collections.abc import Sequence

from msrunwatch.judge.model import Report
from msrunwatch.report import fmt
from msrunwatch.rules.model import Rule


def render(report: Report, rules: Sequence[Rule]) -> str:
    """Parsable lines (editors and CI log viewers link them), then a one-line summary."""
    out = []
    for f in report.findings:
        first = next((o for o in f.occurrences if o.file), None)
        where = fmt.where(first) if first else (report.log_dirs[0] if report.log_dirs else "-")
        about = f" [{fmt.ranks_text(f.ranks)}]" if f.ranks else ""
        out.append(f"{where}: {f.severity.value} {f.rule}: {f.message}{about}")
        if first is not None and first.log_dir is None and f.hint:
            out.append(f"    hint: {f.hint}")  # a config finding: the hint names values that work
    counts = {
        s: sum(1 for f in report.findings if f.severity.value == s)
        for s in ("error", "warning", "info")
    }
    summary = ", ".join(f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items())
    cause = report.root_cause
    verdict = f"; root cause: {cause.category} on {fmt.ranks_text(cause.ranks)}" if cause else ""
    out.append(f"{summary} ({len(rules)} rules, outcome {report.outcome}{verdict})")
    return "\n".join(out) + "\n"
