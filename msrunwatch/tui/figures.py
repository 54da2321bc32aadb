"""A rank's figures and findings as labelled lines of text, for its detail screen."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePath

from textual.content import Content

from msrunwatch.judge.model import Finding, RankReport
from msrunwatch.read.timestamps import clock
from msrunwatch.report import fmt
from msrunwatch.tui import cells

LABEL = 12
"""Cells of a figure's label (`first error `)."""


def status_line(r: RankReport) -> Content:
    """The status and why, for a line of the screen's whole width (it wraps): in the half of
    80 columns the figures have, `failed — oom at msrun_log…` lost its location, and
    `killed — Worker pid 9606 …` most of its reason (the trial's N10). A location in the
    rank's own log, the one below, is `line 24`, as the first error says it."""
    return Content.assemble(
        (f"{'status':<{LABEL}}", "$text-muted"),
        (r.status.value, cells.status_style(r.status)),
        _reason(r),
    )


def figures(r: RankReport, room: int | None = None) -> Content:
    """Host, log, progress, compile, memory and first error as labelled lines; `room`: the
    cells a value has (None: no bound), which the log's line takes as much as fits."""
    rows: list[tuple[str, str | Content]] = [
        ("host", _host(r)),
        ("log", _log(r, room)),
        ("progress", _progress(r)),
        ("compile", _compile(r)),
        ("memory", _memory(r)),
        ("first error", _first_error(r)),
    ]
    return Content("\n").join(
        Content.assemble((f"{label:<{LABEL}}", "$text-muted"), value) for label, value in rows
    )


def _reason(r: RankReport) -> str:
    if not r.status_reason:
        return ""
    reason = cells.printable(r.status_reason)
    if r.file:  # `oom at msrun_log/worker_3.log:24`: the log below is that file
        reason = re.sub(rf"\b{re.escape(r.file)}:(\d+)", r"line \1", reason)
    return f" — {reason}"


def _host(r: RankReport) -> str:
    """The pid and exit code first, whole at 80 columns (the trial's N10 read `pid 411…`);
    the host, also in the screen's title, after them."""
    parts = []
    if r.pid is not None:
        parts.append(f"pid {r.pid}")
    if r.exit_code is not None:
        parts.append(f"exit code {r.exit_code}")
    return "  ".join([*parts, cells.printable(r.host or "-")])


def _log(r: RankReport, room: int | None) -> str:
    """Its times first, whole at 80 columns (`07:10:14.647-07:12:42.055`, the day is the
    run's); then its lines and its file's name, as far as they fit whole: the path is over
    the log below, with its line count (`line 24 of 72`), and a part cut (`07:12:42.055…`,
    the trial's N10) says less than no part."""
    said = f"{clock(r.first_time)}-{clock(r.last_time)}"
    for part in (fmt.count(r.lines, "line"), PurePath(r.file).name if r.file else None):
        if part is None:
            continue
        longer = f"{said}  {part}"
        if room is not None and len(longer) > room:
            break
        said = longer
    return said


def _first_error(r: RankReport) -> str:
    """The line first, whole at 80 columns (the trial's N10 read `oom msrun_log/worker_3.lo…`):
    `oom at line 24` in the rank's own log, the one shown below, else `at line 24 of FILE`;
    a rank lost with no fault of its own, `node-timeout, last line 83`: its log stops there,
    no error is at that line (A1)."""
    e = r.first_error
    if e is None:
        return "-"
    where = f"line {e.line}" + ("" if e.file == r.file else f" of {cells.printable(e.file)}")
    return f"{e.category}, last {where}" if e.at_end else f"{e.category} at {where}"


def _progress(r: RankReport) -> str:
    p = r.progress
    if p is None:
        return "-"
    parts = [f"step {p.step}" + (f" (epoch {p.epoch})" if p.epoch is not None else "")]
    parts.append(f"loss {fmt.loss(p.loss)}")
    if p.step_time_ms is not None:
        parts.append(f"{cells.millis(p.step_time_ms)} ms/step")
    if p.cadence_s is not None:
        parts.append(f"a line every {p.cadence_s:.1f}s")
    return ", ".join(parts)


def _compile(r: RankReport) -> str:
    c = r.compile
    if c is None:
        return "-"
    text = f"{c.count} graph(s), {c.total_ms / 1000:.2f}s"
    if c.in_progress:
        text += f"; compiling now ({c.started} started)"
    if c.stages:
        text += "; slowest: " + ", ".join(f"{n} {ms / 1000:.2f}s" for n, ms in c.stages[:3])
    return text


def _memory(r: RankReport) -> Content:
    m = r.memory
    if m is None:
        return Content("-")
    text = (
        f"peak {fmt.mib(m.peak_used_mb)}, actual {fmt.mib(m.peak_actual_mb)} "
        f"of {fmt.mib(m.used_mb)} usable (device {fmt.mib(m.device_mb)})"
    )
    ratio = cells.memory_ratio(r)
    if ratio is None:
        return Content(text)
    style = "$success" if ratio < 0.8 else "$warning" if ratio < 0.95 else "$error"
    return Content.assemble(text, "  ", (cells.bar(ratio), style), f" {ratio:.0%}")


def rank_findings(rank: int, findings: Iterable[Finding], own: str | None = None) -> Content:
    """The findings on this rank, each with file:line of every occurrence on it; a line of
    its own log `own` (the one below) is `line 24`, so its time stays whole at 80 columns
    (the trial's N10 read `msrun_log/worker_3.log:24  07:12:…`)."""
    lines: list[Content] = []
    for f in findings:
        if rank not in f.ranks:
            continue
        style = cells.SEVERITY_STYLE.get(f.severity.value, "")
        role = (f"  [{f.role}]", "$text-muted")
        lines.append(Content.assemble((f"{f.severity.value:<8}", style), (f.rule, "bold"), role))
        mine = [o for o in f.occurrences if o.rank == rank] or list(f.occurrences[:1])
        for o in mine:
            stamp = fmt.when(o.time, o.time_exact)
            count = f"  (x{o.count})" if o.count > 1 else ""
            here = o.file is not None and o.file == own and o.line
            where = f"line {o.line}" if here else fmt.where_path(None, o.file, o.line)
            lines.append(Content(f"  {where}  {stamp}{count}"))
            message = fmt.human_sizes(cells.printable(o.message or f.message))
            lines.append(Content.styled(f"  {message}", "$text-muted"))
    if not lines:
        return Content.styled("no findings on this rank", "$text-muted")
    return Content("\n").join(lines)
