"""The app: lays out the main screen, runs the feed, and routes messages to widgets."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input
from textual.worker import Worker, WorkerState

from msrunwatch.live.run import Update
from msrunwatch.report import fmt
from msrunwatch.tui import cells, navigate
from msrunwatch.tui.feed import Feed
from msrunwatch.tui.messages import (
    FilesRestarted,
    FindingsRaised,
    LogsFound,
    Said,
    SnapshotUpdated,
    TargetsAwaited,
)
from msrunwatch.tui.postmortem import log_silence
from msrunwatch.tui.screens.help import HelpScreen
from msrunwatch.tui.screens.rank_detail import RankDetail
from msrunwatch.tui.screens.timeline import TimelineScreen
from msrunwatch.tui.widgets.filter_bar import FilterBar
from msrunwatch.tui.widgets.findings_panel import FindingsPanel
from msrunwatch.tui.widgets.rank_table import RankTable
from msrunwatch.tui.widgets.run_header import RunHeader

EMPTY = "waiting for rank logs…"
MAIN_ONLY = frozenset({"focus_filter", "root_cause", "clear_filters", "timeline"})


class MsrunwatchApp(App[int]):
    """The live view of a run; returns triage's exit code for the last verdict.

    `feed` posts the snapshots and findings (run on a worker thread); tests give none and
    post messages themselves, or give a feed of their own.
    """

    CSS_PATH = Path(__file__).with_name("app.tcss")
    """Absolute, so subclasses elsewhere (tests) find it too."""
    TITLE = "msrunwatch"
    COMMAND_PALETTE_BINDING = "ctrl+p"
    """Every action has a key (`?` lists them); the palette (ctrl+p) finds them by name."""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("question_mark", "help", "Keys"),
        Binding("p,space", "toggle_pause", "Pause/follow", show=False),
        Binding("slash", "focus_filter", "Filter"),
        Binding("c", "root_cause", "Cause"),
        Binding("t", "timeline", "Timeline"),
        Binding("escape", "clear_filters", "Clear filters", show=False),
    ]

    def __init__(
        self,
        feed: Feed | None = None,
        targets: Sequence[str] = (),
        clock: Callable[[], float] = time.time,
        exit_when_done: bool = False,
    ) -> None:
        super().__init__()
        self.feed = feed
        self.exit_when_done = exit_when_done
        self.gave_up: str | None = None
        """Why the app exited on its own with code 2 (a target never appeared)."""
        self.run_ended = False
        """The app exited on its own because the run ended (--exit-when-done)."""
        self.stop_signal: int | None = None
        """SIGTERM or SIGHUP came (tui.signals): the app exits as soon as it can."""
        self.targets = tuple(targets)
        self.clock = clock
        self.last: Update | None = None
        """The newest snapshot received, applied or not."""
        self.paused = False
        self.caught_up = False
        """The logs there were when the view started have been read once (trial #32: until
        then the table's ages are file ages, not yet the ranks' silences)."""
        self._warned: set[str] = set()
        """Warnings already shown (each once, as headless prints each once on stderr)."""
        self.header = RunHeader(self.targets, clock, id="header")
        self.filter_bar = FilterBar(id="filter-bar")
        self.table = RankTable(clock, id="ranks")
        self.findings = FindingsPanel(id="findings")

    def compose(self) -> Iterable[Widget]:
        yield from (
            self.header,
            self.filter_bar,
            self.table,
            self.findings,
            Footer(show_command_palette=False),
        )

    def on_mount(self) -> None:
        if self.stop_signal is not None:  # it came before the event loop ran
            self.stop_by_signal(self.stop_signal)
            return
        self.table.focus()
        self.set_interval(1.0, self.table.tick)
        if self.feed is not None:
            self._follow_run()

    @work(thread=True, exclusive=True, group="feed", exit_on_error=False, description="Tail logs")
    def _follow_run(self) -> None:
        assert self.feed is not None
        self.feed.run(self.post_message)

    def on_unmount(self) -> None:
        if self.feed is not None:
            self.feed.stop()

    @property
    def verdict_code(self) -> int:
        """Triage's exit code for the newest verdict: 1 if the run failed, else 0."""
        return 1 if self.last is not None and self.last.report.has_errors else 0

    # -- messages from the feed ----------------------------------------------------------

    def on_snapshot_updated(self, message: SnapshotUpdated) -> None:
        if self._same_end(message.update):
            if self.feed is not None:
                self.feed.applied()
            return
        self.last = message.update
        self.table.empty_text = EMPTY
        self.findings.reconcile(message.update.report)
        self._say_warnings(message.update.report.warnings)
        if self.paused:
            self.header.waiting += 1
            self.header.refresh()
        else:
            self.apply(message.update)
        if self.feed is not None:
            self.feed.applied()
        if self.exit_when_done and message.update.ended:
            self.run_ended = True
            self.exit(self.verdict_code)

    def _same_end(self, update: Update) -> bool:
        """An ended run judged again to the same verdict: nothing on screen would change
        (an ended run's silences are on the log's clock). The engine judges an ended run
        again every second or two until its files have been quiet longer than any silence
        a rule compares with (minutes); repainting 512 rows for each cost the view 1.5% of
        a core on top of the engine's own (the trial's N6)."""
        last = self.last
        return (
            update.ended
            and last is not None
            and last.ended
            and not self.paused
            and update.report == last.report
        )

    def _say_warnings(self, warnings: Iterable[str]) -> None:
        """What is not read as it should be (a file that cannot be opened, a second run
        beside the one shown), each once, when it first appears; `q` prints them again."""
        for warning in warnings:
            if warning not in self._warned:
                self._warned.add(warning)
                self.notify(cells.printable(warning), severity="warning", timeout=30, markup=False)

    def apply(self, update: Update) -> None:
        """Show a snapshot everywhere at once; once the run ended, silences are measured on
        the log's own clock (a copied run's file times say nothing)."""
        report = update.report
        root = frozenset(report.root_cause.ranks) if report.root_cause else frozenset()
        silence = log_silence(report) if update.ended else update.silence
        self.caught_up = self.caught_up or update.caught_up
        with self.batch_update():
            self.header.show(update)
            self.table.apply(
                report.ranks,
                silence,
                update.time,
                root,
                frozen=update.ended,
                reading=not self.caught_up,
            )
            if isinstance(self.screen, RankDetail):
                rank = next((r for r in report.ranks if r.rank == self.screen.rank.rank), None)
                if rank is not None:
                    self.screen.show(rank, report.findings)

    def on_logs_found(self, message: LogsFound) -> None:
        """Before the first snapshot: say that the logs found are being read (and no longer
        that the directory is awaited: it is there, its logs listed)."""
        if self.last is None:
            reading = f"reading {fmt.count(message.count, 'log')}…" if message.count else EMPTY
            self.header.reading = message.count
            self.header.awaiting = None
            self.table.empty_text = reading
            self.header.refresh()
            self.table.refresh()

    def on_targets_awaited(self, message: TargetsAwaited) -> None:
        if message.expired:
            self.gave_up = f"{message.missing[0]}: did not appear within the --wait time"
            self.exit(2)
            return
        self.header.awaiting = message
        self.table.empty_text = f"waiting for {', '.join(message.missing)} to appear…"
        self.header.refresh()
        self.table.refresh()

    def on_said(self, message: Said) -> None:
        """What headless would say on stderr (a hook that failed): a notification here; it is
        printed on stderr again once the view closes (tui.outputs)."""
        self.notify(cells.printable(message.line), severity="warning", timeout=30, markup=False)

    def on_findings_raised(self, message: FindingsRaised) -> None:
        self.findings.add(message.findings, message.root_cause)

    def on_files_restarted(self, message: FilesRestarted) -> None:
        self.findings.restarted()
        files = ", ".join(message.files[:3]) + (" …" if len(message.files) > 3 else "")
        self.notify(f"log(s) truncated or replaced: {files} (a new run?)", severity="warning")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "feed" and event.state is WorkerState.ERROR:
            error = event.worker.error
            self.header.feed_error = f"{type(error).__name__}: {error}" if error else "error"
            self.header.refresh()
            self.notify(f"reading the logs failed: {error}", severity="error", timeout=30)

    # -- messages from widgets -----------------------------------------------------------

    def on_rank_table_rank_selected(self, message: RankTable.RankSelected) -> None:
        if self.last is not None:
            self._open(navigate.rank(self.last.report, message.rank))

    def on_findings_panel_evidence_requested(
        self, message: FindingsPanel.EvidenceRequested
    ) -> None:
        if self.last is not None:
            self._open(navigate.evidence(self.last.report, message.finding))

    def on_timeline_screen_line_chosen(self, message: TimelineScreen.LineChosen) -> None:
        if self.last is not None:
            self._open(navigate.timeline_line(self.last.report, message.entry))

    def _open(self, screen: Screen[None] | str | None) -> None:
        """Push a screen, or say why there is none (nothing once quitting began: keys typed
        after `q` must not mount a screen in a closing app)."""
        if self._exit:
            return
        if isinstance(screen, str):
            self.notify(screen)
        elif screen is not None:
            self.push_screen(screen)

    def on_rank_table_view_changed(self, message: RankTable.ViewChanged) -> None:
        self.filter_bar.show_summary(message.summary)

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.table.filter_text(event.value)

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        self.table.focus()

    # -- actions ---------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The main screen's keys do nothing (and are not shown) over other screens."""
        return action not in MAIN_ONLY or self.screen is self.screen_stack[0]

    def action_quit(self) -> None:  # type: ignore[override]
        self.exit(self.verdict_code)

    def stop_by_signal(self, signum: int) -> None:
        """SIGTERM or SIGHUP: exit as `q` does, so that Textual gives the terminal back
        (alternate screen left, mouse reporting off, cursor shown)."""
        if not self._exit:
            self.exit(128 + signum)

    def action_help(self) -> None:
        if not self._exit and not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_toggle_pause(self) -> None:
        self.paused = not self.paused
        self.header.paused, self.header.waiting = self.paused, 0
        self.header.refresh()
        if not self.paused and self.last is not None:
            self.apply(self.last)

    def action_focus_filter(self) -> None:
        self.filter_bar.query_one(Input).focus()

    def action_clear_filters(self) -> None:
        self.filter_bar.query_one(Input).value = ""
        self.table.filter_status("all")
        self.table.focus()

    def action_timeline(self) -> None:
        self._open(navigate.timeline(self.last.report) if self.last else "no logs yet")

    def action_root_cause(self) -> None:
        report = self.last.report if self.last is not None else None
        if report is None or report.root_cause is None:
            self.notify("no root cause yet")
            return
        if not any(self.table.show_rank(rank) for rank in report.root_cause.ranks):
            self.notify("the root-cause rank is filtered out (escape clears the filters)")
        self.table.focus()
