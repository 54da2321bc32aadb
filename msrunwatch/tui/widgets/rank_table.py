"""The per-rank table: a Line API widget that draws only the rows on screen.

Measured in ../shared/reference/textual-scale.md: at 1,024-4,096 ranks updating 4 times a
second a DataTable answers a key in 130-340 ms, this design in 10-35 ms. What makes it
fast: rows stay in a plain list (`Rows`); each row's Strip is cached and dropped only when
that row changed (or its "silent" cell reads differently); cells are formatted when a row
is drawn, so only visible rows are ever formatted; sorting and filtering reorder a list of
row indices; a cursor move repaints two lines.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from msrunwatch.judge.model import RankReport, Status
from msrunwatch.report import fmt
from msrunwatch.tui.columns import BY_KEY, GAP
from msrunwatch.tui.rows import ALL, Rows
from msrunwatch.tui.widgets.cursor import on_cursor
from msrunwatch.tui.widgets.row_painter import RowPainter

FULL_STYLES = frozenset({"header", "cursor", "cursor-blurred"})
"""Styles that paint whole lines; the others only colour a cell's text."""
NO_MATCH = "no rank matches the filter (f: status filter, /: text filter, escape: clear)"


class RankTable(ScrollView, can_focus=True):
    """Every rank, one line each, under a header that stays put."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "rank-table--header",
        "rank-table--cursor",
        "rank-table--cursor-blurred",
        "rank-table--root",
        "rank-table--error",
        "rank-table--warn",
        "rank-table--muted",
        "rank-table--bar-ok",
        "rank-table--bar-high",
        "rank-table--bar-full",
        *(f"rank-table--{s}" for s in (*(s.value for s in Status), "waiting")),
    }

    DEFAULT_CSS = """
    RankTable {
        height: auto;
        background: $surface;
        & > .rank-table--header { text-style: bold; background: $panel; color: $foreground; }
        /* not $block-cursor-background: its white text reads 4.53:1, but 3.86:1 once a
           256-colour terminal (tmux) rounds it to the xterm palette; this one 5.83 and 6.45 */
        & > .rank-table--cursor { background: $primary-darken-1; color: auto 100%; }
        & > .rank-table--cursor-blurred {
            background: $block-cursor-blurred-background; color: auto 100%;
        }
        & > .rank-table--root { background: $error; color: $text; text-style: bold; }
        & > .rank-table--error { color: $text-error; }
        & > .rank-table--warn { color: $text-warning; }
        & > .rank-table--muted { color: $text-muted; }
        & > .rank-table--bar-ok { color: $success; }
        & > .rank-table--bar-high { color: $warning; }
        & > .rank-table--bar-full { color: $error; }
        & > .rank-table--failed { color: $text-error; text-style: bold; }
        & > .rank-table--killed { color: $text-accent; }
        & > .rank-table--timed-out { color: $text-warning; }
        & > .rank-table--stalled { color: $text-warning; text-style: bold reverse; }
        & > .rank-table--waiting { color: $text-warning; text-style: italic; }
        & > .rank-table--finished { color: $text-success; }
        & > .rank-table--training { color: $text-primary; }
        & > .rank-table--compiling { color: $foreground-darken-1; }
        & > .rank-table--starting { color: $text-muted; }
        & > .rank-table--unknown { color: $text-muted; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home,g", "cursor_to(0)", "First", show=False),
        Binding("end,G", "cursor_to(-1)", "Last", show=False),
        Binding("enter", "select", "Detail"),
        Binding("s", "sort", "Sort"),
        Binding("r", "reverse", "Reverse", show=False),
        Binding("f", "status_filter", "Status"),
        Binding("a", "every_column", "All columns", show=False),
    ]

    class RankSelected(Message):
        """The user asked to look at one rank (enter, or a double click)."""

        def __init__(self, table: RankTable, rank: int) -> None:
            super().__init__()
            self.table = table
            self.rank = rank

        @property
        def control(self) -> RankTable:
            return self.table

    class ViewChanged(Message):
        """What the table shows changed: how many rows, sorted and filtered how."""

        def __init__(self, table: RankTable, summary: str) -> None:
            super().__init__()
            self.table = table
            self.summary = summary

        @property
        def control(self) -> RankTable:
            return self.table

    def __init__(self, clock: Callable[[], float], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.clock = clock
        self.model = Rows()
        self.cursor = 0
        """Position of the cursor in the shown order."""
        self.empty_text = "looking for rank logs…"
        """Until the logs are listed; then how many are read, or that none is there yet."""
        self.every_column = False
        """Show every column, however narrow the terminal (`a`); scroll sideways to see them."""
        self.painter = RowPainter(self._style)
        self._cursor_rank: int | None = None
        self._styles: dict[str, Style] = {}
        self._position: dict[int, int] = {}
        self._summary = ""

    # -- data --------------------------------------------------------------------------

    def apply(
        self,
        ranks: Sequence[RankReport],
        silence: Mapping[int, float],
        at: float,
        root: frozenset[int] = frozenset(),
        frozen: bool = False,
        reading: bool = False,
    ) -> None:
        """Take a tick's ranks; repaint what changed (`frozen`: silences do not grow;
        `reading`: the first catch-up, SILENT reads `…`). New silences change every row's
        SILENT cell, unchanged rows included: when the run ends they switch from the wall
        clock to the log's and stand still, so a row not repainted then would keep its
        wall-clock age for good."""
        before = (len(self.model.rows), self.model.generation)
        ended = (frozen, reading) != (self.model.frozen, self.model.reading)
        changed = self.model.apply(ranks, silence, at, frozen, reading)
        if root != self.painter.root_ranks or self.model.generation != before[1]:
            self.painter.root_ranks = root
            self.painter.clear()
        if self._relayout() or (len(self.model.rows), self.model.generation) != before:
            self._reorder()
        elif changed:
            self._reorder() if self._order_may_change() else self._refresh_rows(changed)
        if silence or ended:
            self.refresh()

    def _order_may_change(self) -> bool:
        model = self.model
        return model.sort_key != "rank" or model.status_filter != ALL or bool(model.text_filter)

    def _reorder(self, top: bool = False) -> None:
        """Filter and sort again and repaint the visible lines.

        The cursor stays on its rank when new data reorders the rows (the view does not
        move under the user); it goes to the top when the user re-sorts or filters.
        """
        order = self.model.refilter(self.clock())
        self._position = {i: pos for pos, i in enumerate(order)}
        row = self.model.row_of(self._cursor_rank) if self._cursor_rank is not None else None
        if top:
            self.cursor = 0
            self.scroll_to(y=0, animate=False)
        elif row is not None and row in self._position:
            self.cursor = self._position[row]
        self.cursor = max(0, min(self.cursor, len(order) - 1))
        self._remember_cursor()
        self.virtual_size = Size(self.painter.total, len(order) + 1)
        self.refresh()
        self._post_summary()

    def _refresh_rows(self, rows: Sequence[int]) -> None:
        for i in rows:
            self.painter.drop(i)
            pos = self._position.get(i)
            if pos is not None:
                self._refresh_position(pos)

    def _refresh_position(self, pos: int) -> None:
        y = pos - round(self.scroll_y) + 1
        if 1 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    def _relayout(self) -> bool:
        """Column widths for the current width and data; True when they changed."""
        width = self.scrollable_content_region.width or self.size.width
        model = self.model
        return self.painter.relayout(
            model.columns(), model.host_width, model.error_width, width, self.every_column
        )

    def _post_summary(self) -> None:
        model = self.model
        arrow = "▼" if model.reverse else "▲"
        parts = [f"{len(model.order)}/{fmt.count(len(model.rows), 'rank')}"]
        parts.append(f"sort {BY_KEY[model.sort_key].title.lower()} {arrow}")
        if model.status_filter != ALL:
            parts.append(f"status {model.status_filter}")
        summary = " · ".join(parts)
        if summary != self._summary:
            self._summary = summary
            self.post_message(self.ViewChanged(self, summary))

    # -- drawing -----------------------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self.painter.clear()

    def on_resize(self, event: events.Resize) -> None:
        if self._relayout():
            self.virtual_size = Size(self.painter.total, len(self.model.order) + 1)

    def _style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = self.get_component_rich_style(
                f"rank-table--{name}", partial=name not in FULL_STYLES
            )
        return style

    def render_line(self, y: int) -> Strip:
        scroll_y = self.scroll_offset.y
        width = self.size.width
        base = self.rich_style
        if y == 0:
            strip = self.painter.header(self.model.sort_key, self.model.reverse)
        else:
            pos = scroll_y + y - 1
            order = self.model.order
            if pos >= len(order):
                return self._blank_line(pos, width, base)
            i = order[pos]
            quiet = self.model.quiet(i, self.clock())
            row, version = self.model.rows[i], self.model.version[i]
            strip = self.painter.row(i, row, version, quiet, self.model.reading)
            if pos == self.cursor:
                cursor = self._style("cursor" if self.has_focus else "cursor-blurred")
                return self._window(on_cursor(strip, cursor), base + cursor, width)
        return self._window(strip, base, width)

    def _window(self, strip: Strip, style: Style, width: int) -> Strip:
        """The visible part of a row: RANK frozen at the left, the rest scrolled sideways."""
        strip = strip.apply_style(style)
        scroll_x, frozen = self.scroll_offset.x, self.painter.frozen
        if not scroll_x or frozen >= width:
            return strip.crop_extend(scroll_x, scroll_x + width, style)
        start = frozen + scroll_x
        rest = strip.crop_extend(start, start + width - frozen, style)
        return Strip.join([strip.crop(0, frozen), rest])

    def _blank_line(self, pos: int, width: int, base: Style) -> Strip:
        text = ""
        if pos == 0:
            text = self.empty_text if not self.model.rows else NO_MATCH
        strip = Strip([Segment(f"  {text}", self._style("muted"))])
        return strip.apply_style(base).crop_extend(0, width, base)

    # -- the cursor and the keys -------------------------------------------------------

    @property
    def cursor_rank(self) -> int | None:
        """The rank under the cursor."""
        return self._cursor_rank

    def _remember_cursor(self) -> None:
        order = self.model.order
        self._cursor_rank = self.model.rows[order[self.cursor]].rank if order else None

    def move_to(self, pos: int) -> None:
        """Put the cursor on a shown position (negative counts from the end)."""
        n = len(self.model.order)
        if not n:
            return
        pos = max(0, min(pos if pos >= 0 else n + pos, n - 1))
        old, self.cursor = self.cursor, pos
        self._remember_cursor()
        top, body = round(self.scroll_y), max(self.size.height - 1, 1)
        if pos < top:
            self.scroll_to(y=pos, animate=False)
        elif pos >= top + body:
            self.scroll_to(y=pos - body + 1, animate=False)
        self._refresh_position(old)
        self._refresh_position(pos)

    def show_rank(self, rank: int) -> bool:
        """Put the cursor on a rank if it is shown."""
        row = self.model.row_of(rank)
        if row is None or row not in self._position:
            return False
        self.move_to(self._position[row])
        return True

    def action_cursor(self, delta: int) -> None:
        self.move_to(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self.move_to(self.cursor + direction * max(self.size.height - 2, 1))

    def action_cursor_to(self, pos: int) -> None:
        self.move_to(pos)

    def action_select(self) -> None:
        if self._cursor_rank is not None:
            self.post_message(self.RankSelected(self, self._cursor_rank))

    def action_sort(self) -> None:
        keys = [c.key for c, _ in self.painter.layout] or ["rank"]
        current = keys.index(self.model.sort_key) if self.model.sort_key in keys else -1
        self.sort_by(keys[(current + 1) % len(keys)])

    def sort_by(self, key: str, reverse: bool | None = None) -> None:
        """Sort by a column; worst-first columns (status, error) start ascending."""
        self.model.sort_key = key
        self.model.reverse = bool(reverse)
        self._reorder(top=True)

    def action_reverse(self) -> None:
        self.model.reverse = not self.model.reverse
        self._reorder(top=True)

    def action_status_filter(self) -> None:
        options = self.model.statuses()
        current = self.model.status_filter
        at = options.index(current) if current in options else 0
        self.filter_status(options[(at + 1) % len(options)])

    def filter_status(self, status: str) -> None:
        self.model.status_filter = status
        self._reorder(top=True)

    def filter_text(self, text: str) -> None:
        self.model.text_filter = text
        self._reorder(top=True)

    def action_every_column(self) -> None:
        self.every_column = not self.every_column
        self.notify("every column (scroll sideways)" if self.every_column else "columns that fit")
        if self._relayout():
            self._reorder()

    def tick(self) -> None:
        """Repaint the visible lines (the SILENT column reads differently as time passes),
        unless the run has ended: its silences are on the log's clock and stand still."""
        if not self.model.frozen:
            self.refresh()

    def on_focus(self) -> None:
        self._refresh_position(self.cursor)

    def on_blur(self) -> None:
        self._refresh_position(self.cursor)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        if offset.y == 0:
            frozen = self.painter.frozen
            x = offset.x if offset.x < frozen else offset.x + round(self.scroll_x)
            edge = 0
            for column, width in self.painter.layout:
                edge += width + GAP
                if x < edge:
                    same = column.key == self.model.sort_key
                    self.sort_by(column.key, not self.model.reverse if same else False)
                    return
            return
        self.move_to(round(self.scroll_y) + offset.y - 1)
        if event.chain >= 2:
            self.action_select()
