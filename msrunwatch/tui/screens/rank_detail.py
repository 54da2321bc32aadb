"""One rank up close: its figures, its findings with file:line, the last lines of its log."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, RichLog, Static

from msrunwatch.judge.model import Finding, RankReport
from msrunwatch.read.timestamps import clock
from msrunwatch.report import fmt
from msrunwatch.tui import cells
from msrunwatch.tui.logtail import TAIL_BYTES, read_tail

_ERROR = re.compile(r"^\[(ERROR|CRITICAL)\]|^Traceback|^\w*(Error|Exception)\b|^RuntimeError")
_WARNING = re.compile(r"^\[WARNING\]")
FAULT_CONTEXT = 4
"""Lines shown above the first fault line of a rank that ended."""


def figures(r: RankReport) -> Content:
    """Status, host, log, progress, compile and memory as labelled lines."""
    rows: list[tuple[str, str | Content]] = [
        ("status", Content.assemble((r.status.value, cells.status_style(r.status)), _reason(r))),
        ("host", _host(r)),
        ("log", _log(r)),
        ("progress", _progress(r)),
        ("compile", _compile(r)),
        ("memory", _memory(r)),
        ("first error", cells.first_error(r) or "-"),
    ]
    return Content("\n").join(
        Content.assemble((f"{label:<12}", "$text-muted"), value) for label, value in rows
    )


def _reason(r: RankReport) -> str:
    return f" — {cells.printable(r.status_reason)}" if r.status_reason else ""


def _host(r: RankReport) -> str:
    parts = [cells.printable(r.host or "-")]
    if r.pid is not None:
        parts.append(f"pid {r.pid}")
    if r.exit_code is not None:
        parts.append(f"exit code {r.exit_code}")
    return "   ".join(parts)


def _log(r: RankReport) -> str:
    return f"{r.file or '-'}  ({r.lines} lines, {clock(r.first_time)} - {clock(r.last_time)})"


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
        f"device {fmt.megabytes(m.device_mb)} MB, limit {fmt.megabytes(m.used_mb)}, "
        f"peak used {fmt.megabytes(m.peak_used_mb)}, actual peak {fmt.megabytes(m.peak_actual_mb)}"
    )
    ratio = cells.memory_ratio(r)
    if ratio is None:
        return Content(text)
    style = "$success" if ratio < 0.8 else "$warning" if ratio < 0.95 else "$error"
    return Content.assemble(text, "  ", (cells.bar(ratio), style), f" {ratio:.0%}")


def rank_findings(rank: int, findings: Iterable[Finding]) -> Content:
    """The findings on this rank, each with file:line of every occurrence on it."""
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
            where = fmt.where_path(None, o.file, o.line)
            lines.append(Content(f"  {where}  {stamp}{count}"))
            message = cells.printable(o.message or f.message)
            lines.append(Content.styled(f"  {message}", "$text-muted"))
    if not lines:
        return Content.styled("no findings on this rank", "$text-muted")
    return Content("\n").join(lines)


def highlight(lines: Sequence[str], faults: Iterable[str]) -> tuple[Text, int | None]:
    """Log lines as one Text (never markup), the lines that fired a rule highlighted.

    Returns the text and the index of the first line that fired a rule, if any did.
    """
    fault_lines = {cells.printable(f).strip() for f in faults if f.strip()}
    text = Text(no_wrap=True)
    first: int | None = None
    for n, raw in enumerate(lines):
        line = cells.printable(raw)
        if line.strip() in fault_lines:
            style = "bold white on dark_red"
            first = n if first is None else first
        elif _ERROR.search(line):
            style = "red"
        elif _WARNING.search(line):
            style = "yellow"
        else:
            style = ""
        text.append(line, style)
        if n < len(lines) - 1:
            text.append("\n")
    return text, first


class RankDetail(Screen[None]):
    """Pushed by enter on a rank; escape goes back."""

    DEFAULT_CSS = """
    RankDetail {
        & > #detail-title { height: 1; padding: 0 1; background: $panel; text-style: bold; }
        & > #detail-top { height: auto; max-height: 50%; }
        & #detail-figures { width: 1fr; height: auto; padding: 0 1; }
        & #detail-findings-box { width: 1fr; height: auto; max-height: 12; padding: 0 1; }
        & > #detail-lines-title { height: 1; padding: 0 1; background: $panel; color: $text-muted; }
        & > #detail-lines { height: 1fr; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("r", "reload", "Read again"),
    ]

    def __init__(self, rank: RankReport, findings: Sequence[Finding]) -> None:
        super().__init__()
        self.rank = rank
        self.findings = tuple(findings)
        self.read_size = -1
        """Size of the log when its end was last read."""

    def compose(self) -> Iterable[Widget]:
        yield Static(id="detail-title")
        with Horizontal(id="detail-top"):
            yield Static(id="detail-figures")
            with VerticalScroll(id="detail-findings-box"):
                yield Static(id="detail-findings")
        yield Static(id="detail-lines-title")
        yield RichLog(id="detail-lines", markup=False, highlight=False, wrap=False)
        yield Footer()

    def on_mount(self) -> None:
        self._show_figures()
        self.action_reload()
        self.query_one("#detail-lines").focus()

    @property
    def path(self) -> str | None:
        r = self.rank
        return None if r.file is None else os.path.join(r.log_dir or "", r.file)

    def show(self, rank: RankReport, findings: Sequence[Finding]) -> None:
        """A newer snapshot of this rank; the log is read again if it grew and is followed."""
        grew = rank.lines != self.rank.lines
        self.rank, self.findings = rank, tuple(findings)
        self._show_figures()
        log = self.query_one("#detail-lines", RichLog)
        if grew and log.is_vertical_scroll_end:
            self.action_reload()

    def _show_figures(self) -> None:
        r = self.rank
        title = Content.assemble(
            f"Rank {r.rank}  ",
            (r.status.value, cells.status_style(r.status)),
            (f"  {cells.printable(r.host or '')}  {r.log_dir or ''}", "$text-muted"),
        )
        self.query_one("#detail-title", Static).update(title)
        self.query_one("#detail-figures", Static).update(figures(r))
        self.query_one("#detail-findings", Static).update(rank_findings(r.rank, self.findings))

    def action_reload(self) -> None:
        """Read the end of the log again (one pread of at most TAIL_BYTES)."""
        log = self.query_one("#detail-lines", RichLog)
        caption = self.query_one("#detail-lines-title", Static)
        path = self.path
        if path is None:
            caption.update("this rank has no log file")
            return
        tail = read_tail(path)
        if tail.error:
            caption.update(f"{path}: {tail.error}")
            return
        log.clear()
        faults = [o.text for f in self.findings for o in f.occurrences if o.rank == self.rank.rank]
        text, fault = highlight(tail.lines, faults)
        ended = self.rank.status not in cells.RUNNING
        log.write(text, scroll_end=fault is None or not ended)
        if fault is not None and ended:  # a rank that died: show where, with some context
            self.call_after_refresh(log.scroll_to, y=max(fault - FAULT_CONTEXT, 0), animate=False)
        self.read_size = tail.size
        caption.update(
            f"last {len(tail.lines)} lines of {path} "
            f"(the last {fmt.size(min(tail.size, TAIL_BYTES))} of {fmt.size(tail.size)})"
        )

    def action_back(self) -> None:
        self.dismiss(None)
