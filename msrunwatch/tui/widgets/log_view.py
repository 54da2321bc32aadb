"""A log viewer on Textual's Line API: numbered lines, a cursor, search, errors, wrapping.

It draws only the rows on screen from a `Source` (a file read by offset, or the merged
timeline), so a large log opens at once. Without wrapping, a row is a line and the view
scrolls sideways; with wrapping, the view's vertical scroll position is the top line and
each line takes the rows it needs, the way `less` does it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import ClassVar, Protocol

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.notifications import Notification, Notify
from textual.scroll_view import ScrollView
from textual.strip import Strip

from msrunwatch.tui import cells
from msrunwatch.tui.logdoc import condense, level
from msrunwatch.tui.widgets.cursor import on_cursor


class Source(Protocol):
    """What the view shows: numbered lines, and what goes in the gutter of each."""

    def __len__(self) -> int: ...

    def line(self, n: int) -> str: ...

    def gutter(self, n: int) -> str: ...


Row = tuple[int, Strip]
"""A screen row: the line it belongs to, and what is drawn."""


class LogView(ScrollView, can_focus=True):
    """Lines with a gutter, the cursor line, fault lines marked, matches highlighted."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "log-view--gutter",
        "log-view--cursor",
        "log-view--error",
        "log-view--warning",
        "log-view--fault",
        "log-view--match",
    }
    DEFAULT_CSS = """
    LogView {
        background: $surface;
        & > .log-view--gutter { color: $text-muted; }
        & > .log-view--cursor {
            background: $block-cursor-blurred-background; color: auto 100%;
        }
        &:focus > .log-view--cursor {  /* AA in 256 colours too, as in the rank table */
            background: $primary-darken-1; color: auto 100%;
        }
        & > .log-view--error { color: $text-error; }
        & > .log-view--warning { color: $text-warning; }
        & > .log-view--fault { background: $error-muted; color: $text; text-style: bold; }
        & > .log-view--match { background: $warning; color: $background; }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup,b", "page(-1)", "Page up", show=False),
        Binding("pagedown,space", "page(1)", "Page down", show=False),
        Binding("home,g", "go(0)", "First line", show=False),
        Binding("end,G", "go(-1)", "Last line", show=False),
        Binding("e", "error(1)", "Next error"),
        Binding("E", "error(-1)", "Prev error", show=False),
        Binding("n", "match(1)", "Next match", show=False),
        Binding("N", "match(-1)", "Prev match", show=False),
        Binding("w", "toggle_wrap", "Wrap"),
        Binding("x", "toggle_prefix", "Full prefix", show=False),
    ]

    class CursorMoved(Message):
        """The cursor is on another line (the screen says which in its caption)."""

        def __init__(self, view: LogView, line: int) -> None:
            super().__init__()
            self.view = view
            self.line = line

        @property
        def control(self) -> LogView:
            return self.view

    def __init__(self, source: Source, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.source = source
        self.cursor = 0
        """The current line (0-based): where n, e and `o` start from."""
        self.wrap = True
        self.condensed = True
        """GLOG prefixes cut to time and level."""
        self.faults: frozenset[int] = frozenset()
        """Lines a rule fired on (0-based), marked."""
        self.pattern: re.Pattern[str] | None = None
        self.shorten: Callable[[str], str] = condense
        """How a line is condensed (the timeline shows the time in its gutter)."""
        self._rows: tuple[tuple[int, int, bool, bool, int], list[Row]] | None = None
        self._widest = 0
        self._said: Notification | None = None
        """The toast of the last answer (`not found below`), replaced by the next one."""

    # -- data --------------------------------------------------------------------------

    def reload(self) -> None:
        """The source has other lines now: measure again and repaint."""
        self._rows = None
        self.cursor = min(self.cursor, max(len(self.source) - 1, 0))
        self._resize()
        self.refresh()

    def _resize(self) -> None:
        count = len(self.source)
        height = max(self.size.height, 1)
        self.styles.overflow_x = "hidden" if self.wrap else "auto"
        if self.wrap:
            self.virtual_size = Size(0, count + height - 1)
        else:
            self.virtual_size = Size(self._widest, count)

    def on_resize(self) -> None:
        self.reload()

    def text(self, n: int) -> str:
        """Line n as shown: printable, its GLOG prefix condensed unless asked otherwise."""
        return self.text_of(self.source.line(n))

    # -- drawing -----------------------------------------------------------------------

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"log-view--{name}", partial=name != "cursor")

    def _strip(self, n: int) -> Strip:
        """Line n as one Strip: gutter, then the text in its level's colour, matches lit."""
        raw = self.source.line(n)
        text = self.text(n)
        kind = "fault" if n in self.faults else {"E": "error", "W": "warning"}.get(level(raw))
        base = self._style(kind) if kind else Style()
        segments = [Segment(self.source.gutter(n), self._style("gutter"))]
        segments += self._lit(text, base)
        strip = Strip(segments)
        if n == self.cursor:
            strip = on_cursor(strip, self._style("cursor"))
        return strip

    def _lit(self, text: str, base: Style) -> list[Segment]:
        if self.pattern is None:
            return [Segment(text, base)]
        out, at, lit = [], 0, base + self._style("match")
        for m in self.pattern.finditer(text):
            if m.end() == m.start():
                break
            out += [Segment(text[at : m.start()], base), Segment(m.group(), lit)]
            at = m.end()
        out.append(Segment(text[at:], base))
        return out

    def _layout(self) -> list[Row]:
        """The rows on screen (wrapped lines split into rows), built once per change."""
        width, height = self.scrollable_content_region.width, self.size.height
        top = round(self.scroll_offset.y)
        key = (top, width, self.wrap, self.condensed, self.cursor)
        if self._rows is not None and self._rows[0] == key:
            return self._rows[1]
        rows: list[Row] = []
        n = top
        while len(rows) < height and n < len(self.source):
            rows += self._split(n, width)
            n += 1
        self._rows = (key, rows)
        return rows

    def _split(self, n: int, width: int) -> list[Row]:
        strip = self._strip(n)
        self._widest = max(self._widest, strip.cell_length)
        if not self.wrap or strip.cell_length <= width or width < 8:
            return [(n, strip)]
        gutter = len(self.source.gutter(n))
        body = max(width - gutter, 4)
        text = "".join(segment.text for segment in strip)
        if len(text) == strip.cell_length:  # one cell per character: break between words
            cuts = word_cuts(text, width, body)
        else:
            cuts = list(range(width, strip.cell_length, body))
        rows: list[Row] = [(n, strip.crop(0, cuts[0]))]
        pad = Segment(" " * gutter, self._style("gutter"))
        for start, end in zip(cuts, [*cuts[1:], strip.cell_length]):
            rows.append((n, Strip.join([Strip([pad]), strip.crop(start, end)])))
        return rows

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        if self.wrap:
            rows = self._layout()
            if y >= len(rows):
                return Strip.blank(width, base)
            n, strip = rows[y]
            style = base + (self._style("cursor") if n == self.cursor else Style())
            return strip.crop_extend(0, width, style)
        n = round(self.scroll_offset.y) + y
        if n >= len(self.source):
            return Strip.blank(width, base)
        strip = self._strip(n)
        if strip.cell_length > self._widest:
            self._widest = strip.cell_length
            self.call_later(self._resize)
        x = self.scroll_offset.x
        style = base + (self._style("cursor") if n == self.cursor else Style())
        return strip.crop_extend(x, x + width, style)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._rows = None

    # -- moving ------------------------------------------------------------------------

    def go_to(self, n: int, context: int = 3, opening: bool = False) -> None:
        """Put the cursor on line n (negative: from the end), with a few lines above it;
        `opening` (a fault the view opens at): `context` lines from the top, so what
        follows it (its traceback) is in view rather than what led to it."""
        count = len(self.source)
        if not count:
            return
        n = max(0, min(n if n >= 0 else count + n, count - 1))
        self.cursor = n
        self._rows = None
        top = round(self.scroll_offset.y)
        if opening or n < top:
            self._scroll_top(max(n - context, 0))
        elif not self._visible(n):
            self._scroll_top(max(n - self.size.height + 1 + context, 0))
            while not self._visible(n) and (top := round(self.scroll_offset.y)) < n:
                self._scroll_top(top + 1)  # wrapped lines above
                if round(self.scroll_offset.y) == top:
                    break  # not laid out yet (its height unknown): no further to scroll
        self.refresh()
        self.post_message(self.CursorMoved(self, n))

    def _scroll_top(self, line: int) -> None:
        self.scroll_to(y=line, animate=False, immediate=True)
        self._rows = None

    def _visible(self, n: int) -> bool:
        """Whether line n is drawn whole on the screen now."""
        top, height = round(self.scroll_offset.y), self.size.height
        if not self.wrap:
            return top <= n < top + height
        rows = self._layout()
        lines = [line for line, _ in rows]
        return n in lines and (lines[-1] != n or len(rows) < height)

    def find(self, test: Callable[[str], bool], step: int) -> bool:
        """Move to the next line (step 1) or the previous one (-1) that passes `test`."""
        n = self.cursor + step
        while 0 <= n < len(self.source):
            if test(self.source.line(n)):
                self.go_to(n)
                return True
            n += step
        return False

    def search(self, text: str) -> bool:
        """Light every match of `text` (case-insensitive unless it has a capital) and go to
        the next one from the cursor, the cursor's line included."""
        flags = 0 if any(c.isupper() for c in text) else re.IGNORECASE
        self.pattern = re.compile(re.escape(text), flags) if text else None
        self._rows = None
        self.refresh()
        if self.pattern is None:
            return False
        self.cursor -= 1
        found = self.action_match(1)
        if not found:
            self.cursor += 1
        return found

    def action_move(self, delta: int) -> None:
        self.go_to(self.cursor + delta, context=0)

    def action_page(self, direction: int) -> None:
        self.go_to(self.cursor + direction * max(self.size.height - 1, 1), context=0)

    def action_go(self, n: int) -> None:
        self.go_to(n)

    def action_error(self, step: int) -> bool:
        found = self.find(lambda line: level(line) == "E", step)
        if not found:
            self.say("no error " + ("below" if step > 0 else "above"))
        return found

    def action_match(self, step: int) -> bool:
        pattern = self.pattern
        if pattern is None:
            self.say("no search yet: / to search")
            return False
        found = self.find(lambda line: pattern.search(self.text_of(line)) is not None, step)
        if not found:
            self.say(f"{pattern.pattern!r} not found " + ("below" if step > 0 else "above"))
        return found

    def say(self, message: str) -> None:
        """Answer a key in one toast that each answer replaces (the trial's N12: every `n`
        with no further match stacked one more toast, three of them over 9 rows of the log)."""
        if self._said is not None:  # Textual has no public call to take one toast away
            self.app._unnotify(self._said, refresh=False)
        self._said = Notification(message, timeout=3, markup=False)
        self.app.post_message(Notify(self._said))

    def text_of(self, raw: str) -> str:
        """A raw line as shown (what search looks in)."""
        line = cells.printable(raw)
        return self.shorten(line) if self.condensed else line

    def action_toggle_wrap(self) -> None:
        self.wrap = not self.wrap
        self.scroll_to(x=0, animate=False, immediate=True)
        self.reload()
        self.go_to(self.cursor)

    def action_toggle_prefix(self) -> None:
        self.condensed = not self.condensed
        self.reload()


def word_cuts(text: str, first: int, body: int) -> list[int]:
    """Where each wrapped row after the first starts: rows of at most `first`, then `body`
    characters (and the space after them, which the view crops), each ending after a space
    when there is one in its second half (a word is split only when it is longer than
    that: a path, a kernel name)."""
    cuts: list[int] = []
    at, room = 0, first
    while len(text) - at > room:
        end = at + room
        if text[end] == " ":  # the row ends with a word: its space ends it, out of view
            end += 1
        elif text[end - 1] != " ":
            space = text.rfind(" ", at + room // 2, end)
            end = space + 1 if space >= 0 else end
        cuts.append(end)
        at, room = end, body
    return cuts
