"""The verdict at the top: outcome, root cause, ranks per status, time, and the feed's state."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from textual.content import Content
from textual.widget import Widget

from msrunwatch.judge.model import Report, RootCause, Status
from msrunwatch.live.run import Update
from msrunwatch.read.timestamps import clock
from msrunwatch.report import fmt
from msrunwatch.tui import cells
from msrunwatch.tui.messages import TargetsAwaited
from msrunwatch.tui.postmortem import last_line

OUTCOME_STYLE = {
    "failed": "bold $text on $error",
    "ok": "bold $text on $success",
    "running": "bold $text on $primary",
    "unknown": "bold $text on $warning-muted",
}


def verdict(report: Report) -> str:
    """The verdict without the counts: the root cause as soon as there is one."""
    c = report.root_cause
    if c is not None:
        return f"{fmt.cause_subject(report)} {fmt.cause_verb(report)}: {c.category}"
    if not report.ranks:
        return "no rank logs yet"
    words = {"ok": "no faults", "running": "no faults so far", "failed": "faults, no root cause"}
    return words.get(report.outcome, "no verdict yet")


WITHHELD = "verdict once every log is read"
"""The headline while the first pass reads the logs (no root cause is named from part of
them: the rest may contradict it, re-trial A15)."""


def status_counts(report: Report, reading: bool = False) -> Content:
    """`8 ranks  7 killed  1 failed`, worst status first, each in its colour; while the first
    catch-up reads the logs, `unknown` says `not read yet` (their logs are there, unread)."""
    counts = Counter(r.status for r in report.ranks)
    parts: list[Content | str | tuple[str, str]] = [fmt.count(len(report.ranks), "rank")]
    for status in sorted(counts, key=cells.status_rank):
        name = cells.NOT_READ if reading and status is Status.UNKNOWN else status.value
        parts += ["  ", (f"{counts[status]} {name}", cells.status_style(status))]
    return Content.assemble(*parts)


def log_span(report: Report) -> float | None:
    """Seconds from the first line of any rank to the last line of any rank."""
    firsts = [r.first_time for r in report.ranks if r.first_time is not None]
    lasts = [r.last_time for r in report.ranks if r.last_time is not None]
    return max(lasts) - min(firsts) if firsts and lasts else None


def _spread(left: Content, right: Content, width: int) -> Content:
    """`left` at the left edge, `right` at the right one, `left` cut if they do not fit."""
    left = left.truncate(max(width - right.cell_length - 1, 0), ellipsis=True)
    gap = max(width - left.cell_length - right.cell_length, 1)
    return Content.assemble(left, " " * gap, right).truncate(width)


def _location(c: RootCause, width: int) -> Content:
    """`at DIR/FILE:LINE  TIME`; when it does not fit, the file as the table names it (from
    its log directory: `msrun_log/worker_3.log:24`), then cut in the middle: the line number
    and the whole time stay (the trial's N10 read `…/worker_3.log:24  07:12:…` at 80 columns)."""
    stamp = Content.styled(f"  {fmt.when(c.time, c.time_exact)}", "$text-muted")
    room = max(width - 3 - stamp.cell_length, 8)
    where = fmt.where_path(c.log_dir, c.file, c.line)
    if len(where) > room:
        where = fmt.where_path(None, c.file, c.line)
    if len(where) > room:
        where = cells.middle_cut(where, room)
    return Content.assemble(("at ", "$text-muted"), where, stamp)


class RunHeader(Widget):
    """Four lines: the verdict; the root cause's message, then where it is (or what is
    watched, and the memory headroom); the ranks per status and when the last line came."""

    DEFAULT_CSS = """
    RunHeader {
        height: 4;
        padding: 0 1;
        background: $panel;
    }
    """

    def __init__(
        self, targets: Sequence[str], clock: Callable[[], float], *, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.targets = tuple(targets)
        self.clock = clock
        self.update: Update | None = None
        self.paused = False
        self.waiting = 0
        """Snapshots received while paused."""
        self.feed_error: str | None = None
        self.awaiting: TargetsAwaited | None = None
        """The targets the feed is waiting for, until the first snapshot."""
        self.reading: int | None = None
        """Logs found before the first snapshot: they are being read."""
        self._quiet: tuple[float, float] | None = None
        """(seconds since the most recent line of any rank, when measured)."""
        self.caught_up = False
        """The logs there were at the start have been read once: "last line N ago" is a
        file's age until then (trial #32)."""

    def on_mount(self) -> None:
        self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        """Redraw what ages (`last line 12s ago`, waiting since); nothing ages once the run
        has ended (its times are the log's own)."""
        if self.update is None or not self.update.ended:
            self.refresh()

    def show(self, update: Update) -> None:
        """Take a newer snapshot."""
        self.update, self.awaiting = update, None
        self.caught_up = self.caught_up or update.caught_up
        if update.silence:
            self._quiet = (min(update.silence.values()), update.time)
        self.set_class(update.report.has_errors, "-failed")
        self.refresh()

    def render(self) -> Content:
        width = max(self.size.width, 20)
        update = self.update
        if update is None:
            return Content("\n").join(self._starting(width))
        report = update.report
        outcome = report.outcome.upper() if report.ranks else "WAITING"
        said = verdict(report)
        so_far = ("so far: ", "$text-muted") if update.behind and "so far" not in said else ""
        if self._withheld(update):
            outcome, said, so_far = "READING", WITHHELD, ""
        badge = Content.styled(f" {outcome} ", OUTCOME_STYLE.get(report.outcome, ""))
        return Content("\n").join(
            [
                self._verdict_line(Content.assemble(badge, " ", so_far), said, width),
                *self._cause_lines(report, width),
                self._counts_line(report, width),
            ]
        )

    def _withheld(self, update: Update) -> bool:
        """The engine gives no verdict while it first reads the logs there were (live.run's
        `reading`): the header says so, not `UNKNOWN so far: no verdict yet`."""
        return bool(update.behind) and not self.caught_up and update.report.outcome == "unknown"

    def _starting(self, width: int) -> list[Content]:
        awaiting = self.awaiting
        if awaiting is None:
            word = " READING " if self.reading else " STARTING "
            badge = Content.styled(word, OUTCOME_STYLE["unknown"])
            return [self._line(badge, width), Content(f"watching {self._where()}")]
        since = cells.ago(max(awaiting.waited, 0.0))
        badge = Content.styled(" WAITING ", OUTCOME_STYLE["unknown"])
        missing = ", ".join(awaiting.missing)
        head = Content.assemble(badge, " ", (f"for {missing} to appear", "bold"))
        return [
            self._line(head, width),
            Content.styled(f"not there yet (waiting {since}); msrun creates it", "$text-muted"),
            Content.styled("its logs are read from their first line", "$text-muted"),
        ]

    def _line(self, left: Content, width: int) -> Content:
        return _spread(left, self._indicator(), width)

    def _verdict_line(self, badge: Content, said: str, width: int) -> Content:
        """The badge and verdict, the run's length and the feed's state; when they do not
        fit, the length gives way, then the verdict's middle: its category (`oom`) stays
        (the trial's N14 read `FAILED so far: rank 37 failed… run 10m59s` at 80 columns)."""
        right = self._indicator()
        length = self._run_length()
        head = Content.assemble(badge, (said, "bold"))
        if length is not None:
            full = Content.assemble(length, "  ", right)
            if head.cell_length + full.cell_length + 1 <= width:
                return _spread(head, full, width)
        room = width - badge.cell_length - right.cell_length - 1
        if len(said) > room:
            head = Content.assemble(badge, (cells.middle_cut(said, max(room, 12)), "bold"))
        return _spread(head, right, width)

    def _run_length(self) -> Content | None:
        """How long the run has gone, saying which measure: once it ended, its logs' span
        (`ran 5.5s`, to the header's `last line`); live, from its first line to now
        (`running 31s`: the span, then the silence since its last line, so it grows every
        second); nothing while the first
        catch-up reads (the trial's N7: `run 5.5s ● live`, the span alone, stood still
        beside rows `SILENT 27s`, then jumped)."""
        update = self.update
        span = None if update is None else log_span(update.report)
        if update is None or span is None:
            return None
        if update.ended:  # what triage's `log times` span: the scheduler's and msrun's too
            times = fmt.log_times(update.report)
            return Content.assemble(("ran ", "$text-muted"), cells.ago(max(times) - min(times)))
        since = self._since_last_line()
        if since is None:
            return None
        return Content.assemble(("running ", "$text-muted"), cells.ago(span + since))

    def _since_last_line(self) -> float | None:
        """Seconds since the newest line of any rank, now (None until the logs there were
        have been read: a file's age is not a silence, trial #32)."""
        quiet = self._quiet
        if quiet is None or not self.caught_up:
            return None
        return quiet[0] + max(self.clock() - quiet[1], 0.0)

    def _indicator(self) -> Content:
        update = self.update
        if self.feed_error:
            return Content.styled(f"✖ feed stopped: {self.feed_error}", "bold $text-error")
        if self.paused:
            note = f" · {fmt.count(self.waiting, 'update')} waiting" if self.waiting else ""
            return Content.styled(f"⏸ paused{note}", "bold $text-warning")
        if update is None and self.reading:
            return Content.styled(f"⟳ reading {fmt.count(self.reading, 'log')}…", "$text-warning")
        if update is None:
            return Content.styled("⟳ starting", "$text-muted")
        if update.behind and not self.caught_up:  # how many: `N not read yet`, in the counts
            return Content.styled("⟳ reading logs", "$text-warning")
        if update.behind:
            behind = fmt.count(update.behind, "file")
            return Content.styled(f"⟳ reading logs: {behind} behind", "$text-warning")
        if update.ended:
            return Content.styled("■ run ended", "bold $text-accent")
        return Content.styled("● live", "$text-success")

    def _counts_line(self, report: Report, width: int) -> Content:
        left = status_counts(report, reading=not self.caught_up)
        nodes = fmt.live_nodes(report)
        if nodes:  # the cluster view
            left = Content.assemble(left, ("  ·  ", "$text-muted"), cells.printable(nodes))
        if self.update is not None and self.update.ended:
            end = last_line(report)
            if end is None:
                return left.truncate(width)
            right = Content.assemble(("last line ", "$text-muted"), clock(end))
            return _spread(left, right, width)
        since = self._since_last_line()
        if since is None:
            return left.truncate(width)
        right = Content.assemble(("last line ", "$text-muted"), cells.ago(since), " ago")
        return _spread(left, right, width)

    def _cause_lines(self, report: Report, width: int) -> list[Content]:
        """The message first (what happened), then where and when; without a root cause,
        what is watched and the memory headroom."""
        c = report.root_cause
        memory = cells.headroom(report)
        if c is None:
            watching = Content.styled(f"watching {self._where()}", "$text-muted")
            return [watching.truncate(width, ellipsis=True), Content(memory).truncate(width)]
        said = cells.middle_cut(fmt.human_sizes(cells.printable(c.message)), width)
        message = Content.styled(said, "$text-error")
        if c.file is None:  # a run-level cause: no line says it, the reason is the evidence
            at = Content.assemble(("why: ", "$text-muted"), cells.printable(c.reason))
        else:
            at = _location(c, width)
        if at.cell_length + len(memory) + 2 > width:  # the evidence before the memory
            return [message.truncate(width, ellipsis=True), at.truncate(width, ellipsis=True)]
        return [message.truncate(width, ellipsis=True), _spread(at, Content(memory), width)]

    def _where(self) -> str:
        return ", ".join(self.targets) or "(no directory)"
