"""The verdict at the top: outcome, root cause, ranks per status, time, and the feed's state."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from textual.content import Content
from textual.widget import Widget

from msrunwatch.judge.model import Report
from msrunwatch.live.run import Update
from msrunwatch.report import fmt
from msrunwatch.tui import cells

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
        first = "failed first" if len(c.ranks) == 1 else "failed"
        return f"{fmt.ranks_text(c.ranks)} {first}: {c.category}"
    if not report.ranks:
        return "no rank logs yet"
    words = {"ok": "no faults", "running": "no faults so far", "failed": "faults, no root cause"}
    return words.get(report.outcome, "no verdict yet")


def status_counts(report: Report) -> Content:
    """`8 ranks  7 killed  1 failed`, worst status first, each in its colour."""
    counts = Counter(r.status for r in report.ranks)
    parts: list[Content | str | tuple[str, str]] = [f"{len(report.ranks)} ranks"]
    for status in sorted(counts, key=lambda s: cells.STATUS_ORDER.get(s, 99)):
        parts += ["  ", (f"{counts[status]} {status.value}", cells.STATUS_STYLE[status])]
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


class RunHeader(Widget):
    """Three lines: the verdict, the ranks, the root cause (or what is being watched)."""

    DEFAULT_CSS = """
    RunHeader {
        height: 3;
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
        self._quiet: tuple[float, float] | None = None
        """(seconds since the most recent line of any rank, when measured)."""

    def on_mount(self) -> None:
        self.set_interval(1.0, self.refresh)

    def show(self, update: Update) -> None:
        """Take a newer snapshot."""
        self.update = update
        if update.silence:
            self._quiet = (min(update.silence.values()), update.time)
        self.set_class(update.report.has_errors, "-failed")
        self.refresh()

    def render(self) -> Content:
        width = max(self.size.width, 20)
        update = self.update
        if update is None:
            line1 = self._line(Content.styled(" STARTING ", OUTCOME_STYLE["unknown"]), width)
            return Content("\n").join([line1, Content(f"watching {self._where()}"), Content("")])
        report = update.report
        outcome = report.outcome.upper() if report.ranks else "WAITING"
        badge = Content.styled(f" {outcome} ", OUTCOME_STYLE.get(report.outcome, ""))
        so_far = ("so far: ", "$text-muted") if update.behind else ""
        head = Content.assemble(badge, " ", so_far, (verdict(report), "bold"))
        return Content("\n").join(
            [
                self._line(head, width),
                self._counts_line(report, width),
                self._cause_line(report).truncate(width, ellipsis=True),
            ]
        )

    def _line(self, left: Content, width: int) -> Content:
        right = self._indicator()
        span = log_span(self.update.report) if self.update else None
        if span is not None:
            right = Content.assemble(("run ", "$text-muted"), cells.ago(span), "  ", right)
        return _spread(left, right, width)

    def _indicator(self) -> Content:
        update = self.update
        if self.feed_error:
            return Content.styled(f"✖ feed stopped: {self.feed_error}", "bold $text-error")
        if self.paused:
            note = f" · {self.waiting} updates waiting" if self.waiting else ""
            return Content.styled(f"⏸ paused{note}", "bold $text-warning")
        if update is None:
            return Content.styled("⟳ starting", "$text-muted")
        if update.behind:
            return Content.styled(f"⟳ reading logs: {update.behind} files behind", "$text-warning")
        return Content.styled("● live", "$text-success")

    def _counts_line(self, report: Report, width: int) -> Content:
        left = status_counts(report)
        quiet = self._quiet
        if quiet is None:
            return left.truncate(width)
        since = quiet[0] + max(self.clock() - quiet[1], 0.0)
        right = Content.assemble(("last line ", "$text-muted"), cells.ago(since), " ago")
        return _spread(left, right, width)

    def _cause_line(self, report: Report) -> Content:
        c = report.root_cause
        if c is None:
            return Content.styled(f"watching {self._where()}", "$text-muted")
        where = fmt.where_path(c.log_dir, c.file, c.line)
        stamp = fmt.when(c.time, c.time_exact)
        return Content.assemble(
            where,
            (f" {stamp}" if stamp else "", "$text-muted"),
            ("  ", ""),
            (cells.printable(c.message), "$text-error"),
        )

    def _where(self) -> str:
        return ", ".join(self.targets) or "(no directory)"
