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
            ("PgUp PgDn Home End g G", "a page up or down, the first or last rank"),
            ("enter, double click", "the rank's log, figures and findings"),
            ("s", "sort by the next column (or click a title)"),
            ("r", "reverse the sort"),
            ("f", "status filter: all, problems, each status"),
            ("/", "filter: ranks (0-7,12), host, status, error"),
            ("escape", "clear both filters"),
            ("c", "put the cursor on the root-cause rank"),
            ("a", "every column, or only those that fit"),
            ("← →", "scroll the table sideways"),
        ),
    ),
    (
        "The run",
        (
            ("t", "timeline: every rank's errors, by log time"),
            ("tab", "go to the table, the filter, the findings"),
            ("enter (findings)", "open a finding's evidence at its line"),
            ("p, space", "pause the table (findings still come); follow"),
            ("?", "this help"),
            ("ctrl+p", "the command palette: any action by name"),
            ("q, ctrl+c", "quit; exit code as triage's (1: the run failed)"),
        ),
    ),
    (
        "Log (rank detail, timeline)",
        (
            ("↑ ↓ PgUp PgDn g G", "move the cursor line"),
            ("/  n N", "search (a capital: exact case); next, previous"),
            ("e E", "next, previous error line"),
            ("w", "wrap long lines, or scroll sideways"),
            ("x", "the full GLOG prefix, or time and level"),
            ("z", "rank detail: the log alone (figures hidden), or back"),
            ("o", "$VISUAL, $EDITOR or $PAGER at the line"),
            ("l  f  enter", "timeline: levels, ranks, open the line"),
            ("q, escape", "back"),
        ),
    ),
)
"""Every key, by screen: what the help screen lists."""

MEMORY: tuple[tuple[str, str], ...] = (
    ("PEAK", "memory used at its peak"),
    ("ACTUAL", "that peak with fragments: what had to fit"),
    ("LIMIT", "what MindSpore may use (max_device_memory)"),
    ("DEVICE", "the card's memory"),
    ("OF LIMIT", "ACTUAL / LIMIT (green < 80%, yellow < 95%)"),
    ("MiB, GiB", '2^20, 2^30 bytes (MindSpore\'s "MB" are MiB)'),
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
