"""The Markdown report: the text report's content, for a bug report or a CI job summary."""

from __future__ import annotations

from msrunwatch.core.sanitize import markdown as _escape
from msrunwatch.core.sanitize import markdown_code as _code
from msrunwatch.judge.model import Report
from msrunwatch.report import fmt, text

MAX_ROWS = 64


def _verdict(report: Report) -> list[str]:
    out = [
        f"## msrunwatch: {report.outcome.upper()}",
        "",
        f"**{_escape(fmt.headline(report))}**",
        "",
    ]
    c = report.root_cause
    if c is not None:
        out.append(f"- Root cause: {_code(c.rule)} ({c.category}) on {fmt.cause_subject(report)}")
        out.append(f"- Message: {_escape(fmt.human_sizes(c.message))}")
        if c.file:
            stamp = fmt.when(c.time, c.time_exact)
            out.append(
                f"- Evidence: {_code(fmt.where_path(c.log_dir, c.file, c.line))}"
                + (f" at {stamp}" if stamp else "")
            )
        out.append(f"- Why: {_escape(c.reason)}")
        hint = next((f.hint for f in report.findings if f.role == "root-cause" and f.hint), "")
        if hint:
            out.append(f"- Hint: {_escape(hint)}")
        out.append("")
    room = fmt.headroom(report)
    if room:
        out += [f"- Memory: {room}", ""]
    return out


def _table(report: Report, show_all: bool) -> list[str]:
    """The text report's columns (those some rank has data for), as a Markdown table."""
    ranks = list(report.ranks)
    shown = ranks if show_all else ranks[:MAX_ROWS]
    columns = text.table_columns(shown, hosts=bool(report.nodes))
    out = [
        "| " + " | ".join(title.lower() for title, _, _ in columns) + " |",
        "|" + "|".join("---:" if right else "---" for _, _, right in columns) + "|",
    ]
    out += ["| " + " | ".join(_escape(get(r)) for _, get, _ in columns) + " |" for r in shown]
    if any(r.memory for r in shown):
        out.append(f"\n_{text.MEMORY_LEGEND[0].upper()}{text.MEMORY_LEGEND[1:]}._")
    if len(shown) < len(ranks):
        out.append(f"\n_{len(ranks) - len(shown)} more ranks not shown._")
    return out


def render(report: Report, show_all: bool = False) -> str:
    """The whole Markdown report."""
    out = _verdict(report)
    out += ["### Ranks", "", *_table(report, show_all), ""]
    if report.findings:
        out += ["### Findings", ""]
        for f in report.findings:
            about = fmt.about(f)
            out.append(
                f"- **{f.severity.value}** {_code(f.rule)} ({f.category}, {f.role}), "
                f"{_escape(about)}: {_escape(fmt.human_sizes(f.message))}"
            )
            out.extend(f"  - {_code(fmt.where(o))}" for o in f.occurrences[:3])
        out.append("")
    for warning in report.warnings:
        out.append(f"> warning: {_escape(warning)}")
    return "\n".join(out) + "\n"
