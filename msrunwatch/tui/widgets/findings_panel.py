"""Findings grouped across ranks: the root cause on top, then errors before warnings, the
newest first."""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Iterable
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.geometry import Region
from textual.message import Message
from textual.widgets import Static

from msrunwatch.core.compat import zip_strict
from msrunwatch.judge.model import Finding, Report, RootCause
from msrunwatch.report import fmt
from msrunwatch.rules.template import rank_name
from msrunwatch.tui import cells

Key = tuple[str, str]
ROOT = "root-cause"
ROLE_ORDER = {ROOT: 0, "note": 2}
"""The root cause first, context notes after the faults (any other role in between)."""
SEVERITY_ORDER = {"error": 0, "warning": 1}
"""Within a role, errors above warnings above the rest: at 80x24 the panel shows three
findings, and the first error must be one of them (a newer warning does not push it
down)."""
INDENT = 4
"""The message line's indent under its finding."""
WHY_LINES = 4
"""Lines the root cause's `why:` may take (wrapped; a longer one is cut at its end)."""
UNDONE = ("undone by later lines", "undone")
"""A finding the verdict dropped as more was read (a rank looked silent half-way through
catching up; its log, read on, says it was not): its line's mark, and the title's word."""
EARLIER = ("from before the logs restarted", "from before the restart")
"""A finding the verdict dropped after the logs were truncated or replaced (a new attempt
in the same directory): what it said was true of the earlier run, not a false alarm."""


def describe(f: Finding) -> str:
    """`cann-ei0006 on ranks 0-7, 16-23 (16); first on rank 12`; a root cause seen on
    other ranks: `collective-wait-failed on rank 1 (evidence on rank 0)`. The root cause
    does not say which of its ranks was first: the header says whom the verdict names first
    (`ranks 0-1 hung` above `run-stalled on ranks 0-1 (2); first on rank 0` read as two
    answers: the re-trial's A13)."""
    about = fmt.about(f)
    count = f" ({len(f.ranks)})" if len(f.ranks) > 1 and not f.cause_ranks else ""
    on = f.ranks or f.cause_ranks
    text = f"{f.rule} on {about}{count}" if on else f"{f.rule} in {about}"
    first = f.first
    if first is not None and first.rank is not None and len(f.ranks) > 1 and f.role != ROOT:
        text += f"; first on {rank_name(first.rank)}"
    return text


def location(f: Finding) -> str:
    """Where the first occurrence is (relative to its log directory), and when."""
    first = f.first
    if first is None or first.file is None:
        return ""
    stamp = fmt.when(first.time, first.time_exact)
    return fmt.where_path(None, first.file, first.line) + (f"  {stamp}" if stamp else "")


class FindingsPanel(VerticalScroll, can_focus=True):
    """Every finding announced so far; none is ever dropped, a changed one moves to the top.
    Focused (tab), up and down choose one and enter opens its evidence at the line."""

    DEFAULT_CSS = """
    FindingsPanel {
        height: 12;
        border-top: solid $primary-muted;
        border-title-color: $text-primary;
        padding: 0 1;
        & > Static { text-wrap: nowrap; text-overflow: ellipsis; }
        &:focus { border-top: solid $primary; }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "choose(-1)", "Up", show=False),
        Binding("down,j", "choose(1)", "Down", show=False),
        Binding("enter", "evidence", "Evidence"),
    ]

    class EvidenceRequested(Message):
        """The user asked to see the line a finding was seen at."""

        def __init__(self, panel: FindingsPanel, finding: Finding) -> None:
            super().__init__()
            self.panel = panel
            self.finding = finding

        @property
        def control(self) -> FindingsPanel:
            return self.panel

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.findings: dict[Key, tuple[int, int, Finding]] = {}
        """(batch, position in the batch, newest version) by rule and fingerprint."""
        self.root_cause: RootCause | None = None
        self._current: frozenset[Key] = frozenset()
        """The findings of the newest verdict."""
        self._seq = 0
        self._judged = 0
        """Batch of the newest verdict: findings older than it and not in it are gone."""
        self._report: Report | None = None
        self._restarted = 0
        """Batch of the last verdict before logs were truncated or replaced (0: never)."""
        self.chosen = 0
        """The finding under the cursor, by its place in `ordered()`."""
        self._starts: list[tuple[int, int]] = []
        """Each entry's first line and height, as last drawn (the root cause's is taller)."""

    def compose(self) -> Iterable[Static]:
        yield Static(Content.styled("no findings yet", "$text-muted"), id="findings-body")

    def on_mount(self) -> None:
        self.border_title = "Findings"

    def add(self, findings: Iterable[Finding], root_cause: RootCause | None) -> None:
        """Take new or changed findings (never coalesced by the feed)."""
        self._seq += 1
        for n, f in enumerate(findings):
            self.findings[(f.rule, f.fingerprint)] = (self._seq, n, f)
        self.root_cause = root_cause
        self._redraw()

    def reconcile(self, report: Report) -> None:
        """Take a newer verdict: findings' newest versions (role, ranks), and which are gone.

        A finding the verdict no longer has (read mid-way through catching up, or undone by
        a later line) stays in the panel, dimmed and last: nothing announced is dropped.
        """
        if report is self._report:
            return
        self._report, self.root_cause = report, report.root_cause
        self._seq += 1
        self._judged = self._seq
        self._current = frozenset((f.rule, f.fingerprint) for f in report.findings)
        for n, f in enumerate(report.findings):
            key = (f.rule, f.fingerprint)
            entry = self.findings.get(key)
            self.findings[key] = (self._seq, n, f) if entry is None else (*entry[:2], f)
        self._redraw()

    def restarted(self) -> None:
        """Logs were truncated or replaced: what the next verdicts drop of the findings seen
        so far belongs to the earlier run."""
        self._restarted = self._seq

    def why_gone(self, batch: int) -> tuple[str, str]:
        """EARLIER or UNDONE, for a finding last seen in `batch` and gone since."""
        return EARLIER if batch <= self._restarted else UNDONE

    def ordered(self) -> list[Finding]:
        """Root cause first, then errors, warnings and the rest, each newest first (a batch
        keeps the verdict's order), then notes, then the findings that are gone."""
        return [f for _, _, f in self._entries()]

    def _entries(self) -> list[tuple[int, int, Finding]]:
        def order(entry: tuple[int, int, Finding]) -> tuple[int, int, int, int]:
            batch, position, f = entry
            group = 3 if self.is_gone(batch, f) else ROLE_ORDER.get(f.role, 1)
            return group, SEVERITY_ORDER.get(f.severity.value, 2), -batch, position

        return sorted(self.findings.values(), key=order)

    def is_gone(self, batch: int, f: Finding) -> bool:
        """Announced before the newest verdict, and not in it."""
        return batch < self._judged and (f.rule, f.fingerprint) not in self._current

    def action_choose(self, delta: int) -> None:
        count = len(self.findings)
        if not count:
            return
        self.chosen = max(0, min(self.chosen + delta, count - 1))
        self._redraw()
        if self.chosen < len(self._starts):
            top, height = self._starts[self.chosen]
            self.scroll_to_region(Region(0, top, 1, height), animate=False)

    def action_evidence(self) -> None:
        entries = self.ordered()
        if entries:
            self.post_message(
                self.EvidenceRequested(self, entries[min(self.chosen, len(entries) - 1)])
            )

    def on_focus(self) -> None:
        self._redraw()

    def on_blur(self) -> None:
        self._redraw()

    def on_resize(self) -> None:
        if self.findings:  # messages are cut to the width ("no findings yet" stays)
            self._redraw()

    def _redraw(self) -> None:
        entries = self._entries()
        gone = [self.why_gone(b) if self.is_gone(b, f) else None for b, _, f in entries]
        live = [f for (_, _, f), g in zip_strict(entries, gone) if g is None]
        errors = sum(1 for f in live if f.severity.value == "error")
        counts = Counter(g[1] for g in gone if g is not None)
        said = "".join(f", {n} {word}" for word, n in sorted(counts.items()))
        self.border_title = f"Findings ({len(live)}, {fmt.count(errors, 'error')}{said})"
        first = next((f for f in live if f.role == "root-cause"), None)
        lines = [self._lines(f, g, f is first) for (_, _, f), g in zip_strict(entries, gone)]
        heights = [len(entry.plain.split("\n")) for entry in lines]
        self._starts = [(sum(heights[:n]), h) for n, h in enumerate(heights)]
        if self.has_focus and lines:
            at = min(self.chosen, len(lines) - 1)
            lines[at] = lines[at].stylize("reverse")
        self.query_one("#findings-body", Static).update(Content("\n").join(lines))

    def _lines(self, f: Finding, gone: tuple[str, str] | None, why: bool = False) -> Content:
        """Two lines: severity, rule, ranks and where; the message; then, on the first root
        cause (`why`), why it is the root cause (`_why`). A finding the verdict dropped is
        dimmed and says why in plain words (UNDONE, EARLIER)."""
        root = f.role == "root-cause" and not gone
        severity = f"{f.severity.value:<8}"
        if gone:
            head = Content.styled(
                f"  {gone[0]}:  {severity}{describe(f)}  [{f.role}]", "$text-muted"
            )
        else:
            marker = ("▶ ROOT CAUSE ", "bold $text on $error") if root else ("  ", "")
            head = Content.assemble(
                marker,
                " " if root else "",
                (severity, cells.SEVERITY_STYLE.get(f.severity.value, "")),
                (describe(f), "bold" if root else ""),
                ("" if root else f"  [{f.role}]", "$text-muted"),
            )
        head += Content.styled("  " + location(f), "$text-muted")
        style = "$text-error" if root else "$text-muted" if gone else ""
        said = fmt.human_sizes(cells.printable(f.message))
        width = self.scrollable_content_region.width - INDENT
        if width > 0:  # one cut that keeps the end (an OOM's size), not an ellipsis there
            said = cells.middle_cut(said, width)
        body = Content.styled(" " * INDENT + said, style)
        said_why = self._why(width) if root and why else []
        return Content("\n").join([head, body, *said_why])

    def _why(self, width: int) -> list[Content]:
        """The root cause's `why:` as triage prints it, wrapped under its entry: what decided
        it, such as why the rank the scheduler named first is not the one blamed (the
        trial's A1: `rank 1 failed first` above `the scheduler saw worker 0 go first`, and
        only triage said why)."""
        c = self.root_cause
        if c is None or not c.reason or width < 20:
            return []
        lines = textwrap.wrap("why: " + cells.printable(c.reason), width)
        if len(lines) > WHY_LINES:
            lines = [*lines[: WHY_LINES - 1], lines[WHY_LINES - 1][: width - 1] + "…"]
        return [Content.styled(" " * INDENT + line, "$text-muted") for line in lines]
