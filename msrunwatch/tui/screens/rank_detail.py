"""One rank up close: its figures, its findings with file:line, and its log in a viewer
(line numbers, search, next error, wrap, $EDITOR at the line)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Sequence
from typing import ClassVar

from textual import on, work
from textual.app import SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, Static

from msrunwatch.judge.model import Finding, RankReport
from msrunwatch.report import fmt
from msrunwatch.rules.vocab import Severity
from msrunwatch.tui import cells
from msrunwatch.tui.figures import LABEL, figures, rank_findings, status_line
from msrunwatch.tui.logdoc import LogDoc
from msrunwatch.tui.widgets.log_view import LogView

BACKGROUND_INDEX = 32 << 20
"""Logs larger than this are first indexed on a worker thread (the screen opens at once)."""


class FileSource:
    """A log file for the viewer: its lines, numbered from 1 in the gutter."""

    def __init__(self, doc: LogDoc) -> None:
        self.doc = doc

    def __len__(self) -> int:
        return len(self.doc)

    def line(self, n: int) -> str:
        return self.doc.line(n)

    def gutter(self, n: int) -> str:
        return f"{n + 1:>{len(str(len(self.doc)))}} "


def editor_command(path: str, line: int, env: dict[str, str]) -> list[str]:
    """$VISUAL or $EDITOR at the line (`vi +20 FILE`), else $PAGER (`less +20g FILE`)."""
    import shlex

    editor = env.get("VISUAL") or env.get("EDITOR")
    if editor:
        return [*shlex.split(editor), f"+{line}", path]
    pager = shlex.split(env.get("PAGER") or "less")
    jump = f"+{line}g" if os.path.basename(pager[0]) == "less" else f"+{line}"
    return [*pager, jump, path]


class Figures(Widget):
    """A rank's figures, drawn for the width they have: the log's line says as much as fits
    whole (tui.figures)."""

    def __init__(self, rank: RankReport, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rank = rank

    def show(self, rank: RankReport) -> None:
        self.rank = rank
        self.refresh(layout=True)

    def render(self) -> Content:
        width = self.content_size.width
        return figures(self.rank, width - LABEL if width > LABEL else None)


class RankDetail(Screen[None]):
    """One rank's figures and findings over its log; q or escape goes back."""

    DEFAULT_CSS = """
    RankDetail {
        & > #detail-title { height: 1; padding: 0 1; background: $panel; text-style: bold; }
        & > #detail-status { height: auto; max-height: 3; padding: 0 1; }
        & > #detail-top { height: auto; max-height: 35%; }
        & #detail-figures { width: 1fr; height: auto; padding: 0 1;
                            text-wrap: nowrap; text-overflow: ellipsis; }
        & #detail-findings-box { width: 1fr; height: auto; max-height: 12; padding: 0 1; }
        & #detail-findings { text-wrap: nowrap; text-overflow: ellipsis; }
        & > #detail-lines-title { height: 1; padding: 0 1; background: $panel; color: $text-muted; }
        & > #detail-lines { height: 1fr; }
        & > #detail-search { height: 1; border: none; padding: 0 1; display: none; }
        & > #detail-search.-active { display: block; }
        &.-maximised > #detail-top, &.-no-figures > #detail-top { display: none; }
        &.-maximised > #detail-status, &.-no-figures > #detail-status { display: none; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "back", "Back"),
        Binding("slash", "search", "Search"),
        Binding("o", "open", "Open in $EDITOR"),
        Binding("z", "maximise", "Log only"),
        Binding("r", "reload", "Read again", show=False),
    ]

    def __init__(
        self,
        rank: RankReport,
        findings: Sequence[Finding],
        line: int | None = None,
        path: str | None = None,
    ) -> None:
        super().__init__()
        self.rank = rank
        self.findings = tuple(findings)
        self.start_line = line
        """The line (1-based) to open at: a finding's evidence; None: the fault, or the end."""
        self._path = path
        self.doc = LogDoc(self.path or "")

    def compose(self) -> Iterable[Widget]:
        yield Static(id="detail-title")
        yield Static(id="detail-status")
        with Horizontal(id="detail-top"):
            yield Figures(self.rank, id="detail-figures")
            with VerticalScroll(id="detail-findings-box"):
                yield Static(id="detail-findings")
        yield Static(id="detail-lines-title")
        yield Input(placeholder="search (enter; n/N next/previous)", id="detail-search")
        yield LogView(FileSource(self.doc), id="detail-lines")
        yield Footer(show_command_palette=False)

    @property
    def view(self) -> LogView:
        return self.query_one("#detail-lines", LogView)

    def on_mount(self) -> None:
        self.set_class(self.rank.rank < 0, "-no-figures")  # the scheduler's log has none
        self._show_figures()
        self.view.focus()
        path = self.path
        size = os.path.getsize(path) if path and os.path.isfile(path) else 0
        if size > BACKGROUND_INDEX:
            self._caption(f"{path}: counting the lines of {fmt.size(size)}…")
            self._index_log()
            return
        self._read()
        self.call_after_refresh(self.view.go_to, self._opening_line(), 3, True)

    @work(thread=True, exclusive=True, group="log-index", description="Index the log")
    def _index_log(self) -> None:
        """A large log's first index, off the UI thread (about a second per GiB)."""
        doc = LogDoc(self.doc.path)
        doc.index()
        self.app.call_from_thread(self._indexed, doc)

    def _indexed(self, doc: LogDoc) -> None:
        self.doc = doc
        self.view.source = FileSource(doc)
        self._read()
        self.view.go_to(self._opening_line(), opening=True)

    @property
    def path(self) -> str | None:
        r = self.rank
        if self._path is not None:
            return self._path
        return None if r.file is None else fmt.join_path(r.log_dir, r.file)

    def _fault_lines(self, errors_only: bool = False) -> frozenset[int]:
        """The lines (0-based) of this rank's findings in this file (only the errors')."""
        mine = self.rank.file
        return frozenset(
            o.line - 1
            for f in self.findings
            if not errors_only or f.severity is Severity.ERROR
            for o in f.occurrences
            if o.rank == self.rank.rank and o.file == mine and o.line
        )

    def _opening_line(self) -> int:
        """The asked line; else a rank that ended opens at its first error-severity fault
        (a warning before it is no fault: the allocation warning before an OOM), or its
        first finding; one still running at its end (following it)."""
        if self.start_line is not None:
            return self.start_line - 1
        faults = sorted(self._fault_lines(errors_only=True)) or sorted(self.view.faults)
        if faults and not cells.is_running(self.rank.status):
            return faults[0]
        return -1

    def show(self, rank: RankReport, findings: Sequence[Finding]) -> None:
        """A newer snapshot of this rank; the log is read again if it grew and is followed."""
        grew = rank.lines != self.rank.lines
        self.rank, self.findings = rank, tuple(findings)
        self._show_figures()
        following = self.view.cursor >= len(self.doc) - 1
        if grew and following:
            self._read()
            self.view.go_to(-1)

    def _show_figures(self) -> None:
        r = self.rank
        title = Content.assemble(
            f"Rank {r.rank}  " if r.rank >= 0 else f"{r.file}  ",
            (r.status.value, cells.status_style(r.status)),
            (f"  {cells.printable(r.host or '')}  {r.log_dir or ''}", "$text-muted"),
        )
        self.query_one("#detail-title", Static).update(title)
        self.query_one("#detail-status", Static).update(status_line(r))
        self.query_one("#detail-figures", Figures).show(r)
        self.query_one("#detail-findings", Static).update(
            rank_findings(r.rank, self.findings, r.file)
        )

    def _read(self) -> None:
        """Index what the log has now (from where the last read ended)."""
        if self.path is None:
            self._caption("this rank has no log file")
            return
        self.doc.index()
        if self.doc.error:
            self._caption(f"{self.path}: {self.doc.error}")
            return
        self.view.faults = self._fault_lines()
        self.view.reload()
        self._caption()

    def _caption(self, text: str | None = None) -> None:
        if text is None:
            view = self.view
            wrap = "wrap" if view.wrap else "no wrap"
            text = f"{self.path}  line {view.cursor + 1} of {len(self.doc)}  ({wrap})"
        self.query_one("#detail-lines-title", Static).update(text)

    def on_log_view_cursor_moved(self, message: LogView.CursorMoved) -> None:
        self._caption()

    def action_maximise(self) -> None:
        """The log alone (the figures and findings hidden), or back."""
        self.toggle_class("-maximised")
        self.call_after_refresh(self.view.go_to, self.view.cursor)

    def action_reload(self) -> None:
        """Read the log again: what was appended, or all of it after a truncation."""
        self._read()

    def action_search(self) -> None:
        search = self.query_one("#detail-search", Input)
        search.value = ""
        search.add_class("-active")
        search.focus()

    @on(Input.Submitted, "#detail-search")
    def _searched(self, event: Input.Submitted) -> None:
        event.input.remove_class("-active")
        self.view.focus()
        self.view.search(event.value)

    def action_open(self) -> None:
        """The log in $EDITOR (or $PAGER) at the cursor's line; back here when it quits."""
        if self.path is None:
            return
        command = editor_command(self.path, self.view.cursor + 1, dict(os.environ))
        try:
            with self.app.suspend():
                subprocess.run(command, check=False)
        except SuspendNotSupported:  # no terminal to hand over (a headless test)
            subprocess.run(command, check=False)
        except OSError as exc:
            self.notify(f"cannot run {command[0]}: {exc.strerror}", severity="error")
        self._read()

    def action_back(self) -> None:
        search = self.query_one("#detail-search", Input)
        if search.has_class("-active"):
            search.remove_class("-active")
            self.view.focus()
            return
        self.dismiss(None)
