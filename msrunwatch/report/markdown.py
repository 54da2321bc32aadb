"""The Markdown report: the text report's content, for a bug report or a CI job summary."""

from __future__ import annotations

from msrunwatch.core.sanitize import markdown as _escape
from msrunwatch.core.sanitize import markdown_code as _code
from msrunwatch.judge.model import Report
from msrunwatch.read.timestamps import clock
from msrunwatch.report import fmt, text

MAX_ROWS = 64
HEADER = (
    "rank", "status", "step", "loss", "compile", "peak", "actual", "limit",
    "device", "last line", "first error",
)  # fmt: skip


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
    ranks = list(report.ranks)
    shown = ranks if show_all else ranks[:MAX_ROWS]
    out = [
        "| " + " | ".join(HEADER) + " |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in shown:
        m = r.memory
        out.append(
            "| "
            + " | ".join(
                [
                    str(r.rank),
                    r.status.value,
                    fmt.step(r),
                    fmt.loss(r.progress.loss if r.progress else None),
                    fmt.compile_seconds(r),
                    fmt.mib(m.peak_used_mb if m else None),
                    fmt.mib(m.peak_actual_mb if m else None),
                    fmt.mib(m.used_mb if m else None),
                    fmt.mib(m.device_mb if m else None),
                    clock(r.last_time),
                    _escape(fmt.first_error(r)),
                ]
            )
            + " |"
        )
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
