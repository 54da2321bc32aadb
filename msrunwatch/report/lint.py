"""`msrunwatch check`'s text format: one `path:line: severity rule: message` line per finding."""

from __future__ import annotations

from collections.abc import Sequence

from msrunwatch.core.sanitize import terminal
from msrunwatch.judge.model import Report
from msrunwatch.report import fmt
from msrunwatch.rules.model import Rule


def render(report: Report, rules: Sequence[Rule]) -> str:
    """Parsable lines (editors and CI log viewers link them), what could not be read, then a
    one-line summary. Log text reaches the terminal with its control characters visible;
    sizes read as MiB and GiB (the JSON format keeps the messages as the rules wrote them)."""
    out = []
    for f in report.findings:
        first = next((o for o in f.occurrences if o.file), None)
        where = fmt.where(first) if first else (report.log_dirs[0] if report.log_dirs else "-")
        about = f" [{fmt.ranks_text(f.ranks)}]" if f.ranks else ""
        message = fmt.human_sizes(f.message)
        out.append(f"{where}: {f.severity.value} {f.rule}: {message}{about}")
        if first is not None and first.log_dir is None and f.hint:
            out.append(
                f"    hint: {fmt.human_sizes(f.hint)}"
            )  # a config finding: the hint names values that work
    out.extend(f"warning: {w}" for w in report.warnings)
    counts = {
        s: sum(1 for f in report.findings if f.severity.value == s)
        for s in ("error", "warning", "info")
    }
    summary = ", ".join(f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items())
    cause = report.root_cause
    verdict = f"; root cause: {cause.category} on {fmt.ranks_text(cause.ranks)}" if cause else ""
    if report.warnings:
        verdict += f"; {len(report.warnings)} input problem(s), see the warnings"
    out.append(f"{summary} ({len(rules)} rules, outcome {report.outcome}{verdict})")
    return "\n".join(terminal(line) for line in out) + "\n"
