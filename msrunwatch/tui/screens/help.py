"""The keys, on a screen of their own (`?`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Static

KEYS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Ranks",
        (
            ("↑ ↓  j k", "move the cursor"),
            ("PgUp PgDn  Home End  g G", "a page up or down, the first or last rank"),
            ("enter, double click", "the rank's detail: its log, figures and findings"),
            ("s", "sort by the next column (or click a column title)"),
            ("r", "reverse the sort"),
            ("f", "status filter: all, problems, then each status present"),
            ("/", "filter by text: a rank list (0-7,12) or words of host, status, error"),
            ("escape", "clear both filters"),
            ("c", "put the cursor on the root-cause rank"),
            ("a", "every column (scroll sideways; RANK stays), or those that fit"),
            ("← →", "scroll the table sideways"),
        ),
    ),
    (
        "The run",
        (
            ("t", "timeline: every rank's warnings and errors by the log's own time"),
            ("tab", "move between the table, the filter and the findings"),
            ("enter (findings)", "open a finding's evidence at its line"),
            ("p, space", "pause: the table stops changing, findings still arrive; again: follow"),
            ("?", "this help"),
            ("q, ctrl+c", "quit; the exit code is triage's: 1 if the run failed"),
        ),
    ),
    (
        "Log (rank detail, timeline)",
        (
            ("↑ ↓ PgUp PgDn g G", "move the cursor line"),
            ("/  n N", "search (case-insensitive unless it has a capital); next, previous"),
            ("e E", "next, previous error line"),
            ("w", "wrap long lines, or scroll them sideways"),
            ("x", "the full GLOG prefix, or only time and level"),
            ("o", "open the log in $VISUAL, $EDITOR or $PAGER at the cursor's line"),
            ("l  f  enter", "timeline: levels (errors, warnings, every line), ranks, open"),
            ("q, escape", "back"),
        ),
    ),
)
"""Every key, by screen: what the help screen lists."""

MEMORY: tuple[tuple[str, str], ...] = (
    ("PEAK", "memory used at its peak"),
    ("ACTUAL", "that peak with the pool's fragments: what had to fit"),
    ("LIMIT", "what MindSpore may use (max_device_memory): the one denominator"),
    ("DEVICE", "the card's memory"),
    ("OF LIMIT", "ACTUAL as a share of LIMIT (green < 80%, yellow < 95%, red)"),
    ("MiB, GiB", "2^20 and 2^30 bytes (MindSpore's own \"MB\" are MiB)"),
)
"""The memory columns' legend."""


def help_text() -> Content:
    """The keys as lines of text."""
    width = max(len(key) for _, rows in KEYS for key, _ in rows)
    lines: list[Content] = []
    for title, rows in KEYS:
        if lines:
            lines.append(Content(""))
        lines.append(Content.styled(title, "bold $text-primary"))
        lines += [Content.assemble((f"  {key:<{width}}  ", "bold"), what) for key, what in rows]
    lines += [Content(""), Content.styled("Memory columns", "bold $text-primary")]
    lines += [Content.assemble((f"  {key:<{width}}  ", "bold"), what) for key, what in MEMORY]
    return Content("\n").join(lines)


class HelpScreen(ModalScreen[None]):
    """The keys; any of escape, q or ? closes it."""

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        & > VerticalScroll {
            width: auto; max-width: 100%; height: auto; max-height: 90%;
            border: round $primary; background: $surface; padding: 1 2;
        }
        & Static { width: auto; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "close", "Close")]

    def compose(self) -> Iterable[Widget]:
        with VerticalScroll() as box:
            box.border_title = "msrunwatch keys"
            yield Static(help_text())

    def action_close(self) -> None:
        self.dismiss(None)
