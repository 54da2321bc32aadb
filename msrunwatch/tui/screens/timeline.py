"""The merged timeline (`t`): every rank's warnings and errors by the log's own time."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from textual import on, work
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, Static

from msrunwatch.report import fmt
from msrunwatch.tui.rows import parse_ranks
from msrunwatch.tui.timeline import Entry, LogRef, TimelineSource, merged, shorten
from msrunwatch.tui.widgets.log_view import LogView

LEVELS = (("EW", "errors and warnings"), ("E", "errors"), ("", "every line"))
"""What `l` cycles through; every line is read only when asked for."""


class TimelineScreen(Screen[None]):
    """One list of every rank's lines; enter opens the line in its rank's log."""

    DEFAULT_CSS = """
    TimelineScreen {
        & > #timeline-title { height: 1; padding: 0 1; background: $panel; text-style: bold; }
        & > #timeline-columns { height: 1; color: $text-muted; text-style: bold; }
        & > #timeline-lines { height: 1fr; }
        & > #timeline-ranks { height: 1; border: none; padding: 0 1; display: none; }
        & > #timeline-ranks.-active { display: block; }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "back", "Back"),
        Binding("enter", "open", "Open line"),
        Binding("l", "levels", "Levels"),
        Binding("f", "ranks", "Ranks"),
        Binding("slash", "search", "Search", show=False),
    ]

    class LineChosen(Message):
        """The user wants this line in its rank's log."""

        def __init__(self, entry: Entry) -> None:
            super().__init__()
            self.entry = entry

    def __init__(self, refs: Sequence[LogRef], start: tuple[str, int] | None = None) -> None:
        super().__init__()
        self.refs = tuple(refs)
        self.start = start
        """The line to open at (the root cause's: path, 1-based line); else the first error."""
        self.source = TimelineSource([])
        self.every_line = False
        self._level = 0
        self._searching = False

    def compose(self) -> Iterable[Widget]:
        yield Static(f"reading {fmt.count(len(self.refs), 'log')}…", id="timeline-title")
        yield Input(placeholder="ranks (0-7,12); empty: all", id="timeline-ranks")
        yield Static(id="timeline-columns")
        yield LogView(self.source, id="timeline-lines")
        yield Footer(show_command_palette=False)

    @property
    def view(self) -> LogView:
        return self.query_one("#timeline-lines", LogView)

    def on_mount(self) -> None:
        self.view.shorten = shorten
        self.view.focus()
        self._read_logs(False)

    @work(thread=True, exclusive=True, group="timeline", description="Merge the logs")
    def _read_logs(self, every_line: bool) -> None:
        lines = merged(self.refs, every_line)
        self.app.call_from_thread(self._show, lines, every_line)

    def _show(self, lines: list[Entry], every_line: bool) -> None:
        self.source.all, self.every_line = lines, every_line
        self._apply()

    def _apply(self) -> None:
        self.source.levels = LEVELS[self._level][0]
        self.source.refilter()
        self.view.reload()
        first = self.source.first(*(self.start or (None, None)))
        self.view.go_to(first)
        self.call_after_refresh(self.view.go_to, first)  # scrolled once its height is known
        self._title()
        width = self.source.file_width
        columns = f"{'TIME':>12} {'RANK':>5} {'FILE':<{width}} LEVEL AND LINE"
        self.query_one("#timeline-columns", Static).update(columns)

    def _title(self) -> None:
        ranks = (
            "all ranks" if self.source.ranks is None else fmt.count(len(self.source.ranks), "rank")
        )
        what = LEVELS[self._level][1]
        text = f"Timeline by log time: {fmt.count(len(self.source), 'line')}, {what}, {ranks}"
        self.query_one("#timeline-title", Static).update(text)

    def action_levels(self) -> None:
        self._level = (self._level + 1) % len(LEVELS)
        if LEVELS[self._level][0] == "" and not self.every_line:
            self.query_one("#timeline-title", Static).update("reading every line…")
            self._read_logs(True)
            return
        self._apply()

    def action_ranks(self) -> None:
        self._searching = False
        box = self.query_one("#timeline-ranks", Input)
        box.placeholder = "ranks (0-7,12); empty: all"
        box.value = ""
        box.add_class("-active")
        box.focus()

    def action_search(self) -> None:
        self.action_ranks()
        self._searching = True
        self.query_one("#timeline-ranks", Input).placeholder = "search (enter; n/N)"

    @on(Input.Submitted, "#timeline-ranks")
    def _submitted(self, event: Input.Submitted) -> None:
        event.input.remove_class("-active")
        self.view.focus()
        if self._searching:
            self.view.search(event.value)
            return
        text = event.value.strip()
        ranks = parse_ranks(text) if text else None
        if text and ranks is None:
            self.notify(f"not a rank list: {text!r} (try 0-7,12)", severity="warning")
            return
        self.source.ranks = ranks
        self._apply()
        event.input.value = ""

    def action_open(self) -> None:
        if len(self.source):
            self.post_message(self.LineChosen(self.source.shown[self.view.cursor]))

    def action_back(self) -> None:
        box = self.query_one("#timeline-ranks", Input)
        if box.has_class("-active"):
            box.remove_class("-active")
            self.view.focus()
            return
        self.dismiss(None)
