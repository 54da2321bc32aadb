"""The terminal report: the verdict first, then the per-rank table, then grouped findings."""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Callable, Sequence

from msrunwatch.core.compat import zip_strict
from msrunwatch.core.sanitize import terminal as safe
from msrunwatch.judge.model import Finding, RankReport, Report
from msrunwatch.read.timestamps import clock
from msrunwatch.report import fmt
from msrunwatch.rules.template import rank_ranges

MAX_ROWS = 40
"""Above this many ranks, ranks that share the most common status fold into one line."""
MAX_EVIDENCE = 3
MEMORY_LEGEND = (
    "memory: PEAK used at its peak, ACTUAL that peak with fragments, LIMIT what MindSpore may "
    "use (max_device_memory), DEVICE the card; 1 GiB = 1024 MiB"
)
"""Under the table whenever it has memory columns: what each one means."""

Column = tuple[str, Callable[[RankReport], str], bool]


def table_columns(ranks: Sequence[RankReport], hosts: bool = False) -> list[Column]:
    """The table's columns: only those some rank has data for (Markdown's too)."""
    has_memory = any(r.memory for r in ranks)
    has_progress = any(r.progress for r in ranks)
    has_compile = any(r.compile for r in ranks)
    columns: list[Column] = [("RANK", fmt.rank_cell, True)]
    if hosts:
        columns.append(("HOST", lambda r: r.host or "-", False))
    columns.append(("STATUS", lambda r: r.status.value, False))
    if has_progress:
        columns += [
            ("STEP", fmt.step, True),
            ("LOSS", lambda r: fmt.loss(r.progress.loss if r.progress else None), True),
        ]
    if has_compile:
        columns.append(("COMPILE", fmt.compile_seconds, True))
    if has_memory:
        columns += [
            ("PEAK", lambda r: fmt.mib(r.memory.peak_used_mb if r.memory else None), True),
            ("ACTUAL", lambda r: fmt.mib(r.memory.peak_actual_mb if r.memory else None), True),
            ("LIMIT", lambda r: fmt.mib(r.memory.used_mb if r.memory else None), True),
            ("DEVICE", lambda r: fmt.mib(r.memory.device_mb if r.memory else None), True),
        ]
    if any(r.estimate is not None for r in ranks):
        columns.append(("ESTIMATE", _estimate, True))
    if any(r.exit_code is not None for r in ranks):
        columns.append(("EXIT", lambda r: "-" if r.exit_code is None else str(r.exit_code), True))
    columns += [
        ("LAST LINE", lambda r: clock(r.last_time), False),
        ("FIRST ERROR", fmt.first_error, False),
    ]
    return columns


def _estimate(r: RankReport) -> str:
    e = r.estimate
    if e is None or e.used_mb is None:
        return "-"
    return f"{fmt.mib(e.used_mb)} (s{e.stage})"


def _visible(report: Report, show_all: bool) -> tuple[list[RankReport], str]:
    """The rows to print, and a line summarising the folded ones."""
    ranks = list(report.ranks)
    if show_all or len(ranks) <= MAX_ROWS:
        return ranks, ""
    common, _ = Counter(r.status for r in ranks).most_common(1)[0]
    named = set(report.root_cause.ranks) if report.root_cause else set()
    rows = [r for r in ranks if r.status is not common or r.rank in named][:MAX_ROWS]
    folded = [r.rank for r in ranks if r not in rows]
    note = (
        f"  ... {len(folded)} more {common.value}: ranks {rank_ranges(folded)}"
        " (--all-ranks to list them)"
    )
    return rows, note if folded else ""


def _table(report: Report, style: fmt.Style, show_all: bool) -> list[str]:
    rows, note = _visible(report, show_all)
    if not rows:
        return ["  (no ranks)"]
    columns = table_columns(rows, hosts=bool(report.nodes))
    cells = [[safe(get(r)) for _, get, _ in columns] for r in rows]
    widths = [
        max(len(title), *(len(c[i]) for c in cells)) for i, (title, _, _) in enumerate(columns)
    ]
    out = [
        "  "
        + "  ".join(
            t.rjust(w) if right else t.ljust(w) for (t, _, right), w in zip_strict(columns, widths)
        ).rstrip()
    ]
    for row, rank in zip_strict(cells, rows):
        parts = []
        for (title, _, right), width, cell in zip_strict(columns, widths, row):
            text = cell.rjust(width) if right else cell.ljust(width)
            if title == "STATUS":
                text = style(text, fmt.STATUS_COLOR.get(rank.status.value))
            parts.append(text)
        out.append("  " + "  ".join(parts).rstrip())
    if note:
        out.append(note)
    if any(r.memory for r in rows):
        out.append(f"  {MEMORY_LEGEND}")
    return out


def _verdict(report: Report, style: fmt.Style) -> list[str]:
    outcome = report.outcome.upper()
    headline = safe(fmt.headline(report))
    out = [f"{style(outcome, fmt.OUTCOME_COLOR.get(report.outcome))}  {headline}"]
    c = report.root_cause
    if c is not None:
        out.append(safe(f"  {fmt.human_sizes(c.message)}"))
        if c.file is not None:
            path = fmt.where_path(c.log_dir, c.file, c.line)
            stamp = fmt.when(c.time, c.time_exact)
            out.append(safe(f"  at {path}" + (f"  ({stamp})" if stamp else "")))
        out.append(safe(f"  why: {c.reason}"))
        hint = next((f.hint for f in report.findings if f.role == "root-cause" and f.hint), "")
        if hint:
            out.append(safe(f"  hint: {hint}"))
    room = fmt.headroom(report)
    if room:
        out.append(f"  memory: {room}")
    span = fmt.time_span(report)
    if span:
        read = f"{fmt.count(report.files, 'file')}, {fmt.size(report.bytes)} read"
        out.append(f"  log times: {span}; {read}")
    if report.nodes:
        out.append(safe(f"  nodes: {fmt.nodes(report)}"))
    return out


def _finding(f: Finding, style: fmt.Style) -> list[str]:
    severity = style(f.severity.value.ljust(7), fmt.SEVERITY_COLOR.get(f.severity.value))
    about = safe(f"{f.rule}  [{f.role}]  {fmt.about(f)}")
    message = safe(fmt.human_sizes(f.message))
    lines = [f"  {severity}  {about}", f"           {message}"]
    shown = f.occurrences[:MAX_EVIDENCE]
    for o in shown:
        count = f"  (x{o.count})" if o.count > 1 else ""
        stamp = fmt.when(o.time, o.time_exact)
        where = safe(fmt.where(o))
        lines.append(f"           {where}" + (f"  {stamp}" if stamp else "") + count)
    if len(f.occurrences) > len(shown):
        lines.append(f"           ... and {len(f.occurrences) - len(shown)} more")
    return lines


def verdict(report: Report, color: bool = False, consoles: Sequence[str] = ()) -> str:
    """The verdict alone (what stays on a terminal after the live view closes), the
    warnings, and the command that prints the rest: with the consoles the view read
    (`--console`), or triage would read fewer files and say less than the view did."""
    out = _verdict(report, fmt.Style(color))
    out.extend(safe(f"warning: {warning}") for warning in report.warnings)
    given = [*report.log_dirs, *(a for c in consoles for a in ("--console", c))]
    targets = " ".join(shlex.quote(d) for d in given)
    out.append(safe(f"  every rank and finding: msrunwatch triage {targets}"))
    return "\n".join(out) + "\n"


def render(report: Report, color: bool = False, show_all: bool = False) -> str:
    """The whole text report."""
    style = fmt.Style(color)
    out = _verdict(report, style)
    out += ["", *_table(report, style, show_all)]
    if report.findings:
        out += ["", f"FINDINGS ({len(report.findings)})"]
        for f in report.findings:
            out += _finding(f, style)
    out.extend(safe(f"warning: {warning}") for warning in report.warnings)
    return "\n".join(out) + "\n"
