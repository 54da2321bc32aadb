"""One line above the table: the text filter, and how the table is sorted and filtered."""

from __future__ import annotations

from collections.abc import Iterable

from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Input, Label, Static

PLACEHOLDER = "ranks (0-7,12), host, status, phase or error text"


class FilterBar(Horizontal):
    """`/` focuses the input; enter goes back to the table; escape clears."""

    DEFAULT_CSS = """
    FilterBar {
        height: 1;
        background: $boost;
        & > Label { width: auto; padding: 0 1; color: $text-muted; }
        & > Input {
            width: 1fr; height: 1; border: none; padding: 0; background: transparent;
            &:focus { background: $surface; }
        }
        & > #view-summary { width: auto; padding: 0 1; color: $text-muted; }
    }
    """

    def compose(self) -> Iterable[Widget]:
        yield Label("/ filter")
        yield Input(placeholder=PLACEHOLDER, id="filter", compact=True)
        yield Static("", id="view-summary")

    def show_summary(self, text: str) -> None:
        """`12/1024 ranks · sort step ▼ · status problems`."""
        self.query_one("#view-summary", Static).update(text)
